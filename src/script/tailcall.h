/* tailcall.h -- the source rewrite that keeps a script's frame when it
 * returns the result of a library call under LuaJIT (see tailcall.c).
 * Pure text in, text out: no Lua headers, so it is unit-tested in every
 * build, though only the LuaJIT engine uses it. */
#ifndef CAIRN_SCRIPT_TAILCALL_H
#define CAIRN_SCRIPT_TAILCALL_H

#include <stddef.h>

#include "ds/sds.h"

/* The chunk src[0..len) rewritten so that each `return <library call>` at
 * the end of a block becomes an ordinary call whose results pass through a
 * helper, the whole wrapped as
 *     local <helper>=...;return function(...) <chunk>\nend
 * (call the compiled outer function once with the helper to get the
 * script's function).  Every line keeps its number.  Returns NULL when the
 * chunk has no such return; otherwise a new sds the caller owns.  src must
 * be a chunk that compiles: on other text the result is unspecified (but
 * still bounded and safe to compute). */
sds tailcallRewrite(const char *src, size_t len);

#endif
