/* tailcall.h -- the source rewrite LuaJIT compiles a script through (see
 * tailcall.c): it keeps a script's frame when it returns the result of a
 * library call, and passes the globals a script reads as upvalues.  Pure
 * text in, text out: no Lua headers, so it is unit-tested in every build,
 * though only the LuaJIT engine uses it. */
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

/* What a global name holds, as scriptRewrite asks it of the caller. */
enum {
    GLOBAL_ABSENT,  /* not a global (or one not to pass: never aliased) */
    GLOBAL_TABLE,   /* a table that never changes */
    GLOBAL_FUNCTION, /* a function that never changes */
    GLOBAL_PER_RUN, /* a table set anew for each run: KEYS, ARGV */
};
typedef int (*GlobalKindFn)(void *ctx, const char *name, size_t len);

#define REWRITE_MAX_ALIASES 48

/* scriptRewrite's result. */
typedef struct ScriptRewrite {
    sds text;                           /* NULL: compile the chunk as given */
    int naliases;                       /* names after the helper, in order */
    sds aliases[REWRITE_MAX_ALIASES];
    int readOnly[REWRITE_MAX_ALIASES];  /* GLOBAL_PER_RUN only: the script
                                         * only reads elements of it */
} ScriptRewrite;

/* tailcallRewrite, and the globals the chunk reads, when that cannot change
 * what it does, passed in as upvalues of the same names:
 *     local <helper>,<name1>,<name2>...=...;return function(...) ...
 * (call the outer function with the helper, then each name's value).  A
 * name is passed when kind says it holds a table or function, the chunk
 * never assigns it, and no use of it could raise an error that names the
 * variable (calling a table, indexing a function, arithmetic): an upvalue
 * would be named 'upvalue' there, not 'global'.  GLOBAL_PER_RUN names are
 * passed only if every one the chunk uses can be and the chunk never
 * names `_G`, `loadstring` or `load` (which could reach the global).
 * Free the result with scriptRewriteFree. */
void scriptRewrite(const char *src, size_t len, GlobalKindFn kind, void *ctx, ScriptRewrite *out);
void scriptRewriteFree(ScriptRewrite *rw);

#endif
