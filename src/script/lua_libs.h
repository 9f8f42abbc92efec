/* lua_libs.h -- the extra Lua libraries Redis 7.0 scripts see, written for
 * Cairn: `struct` (lua_struct.c), `cmsgpack` (lua_cmsgpack.c) and a safe
 * `bit.tohex` (lua_bitfix.c), and LuaJIT's Lua 5.1 face (lua_compat.c).
 * Internal to src/script.
 *
 * Each luaopen_* pushes a fresh library table and returns 1; it sets no
 * global.  The engine stores the table as global `struct` / `cmsgpack`
 * before it locks the sandbox.  All functions work on Lua 5.1 and LuaJIT
 * (same C API).  Every size or count taken from a script (format counts,
 * msgpack lengths) is checked before it is used, so hostile input raises a
 * Lua error instead of reading out of bounds or allocating giant buffers. */
#ifndef CAIRN_SCRIPT_LUA_LIBS_H
#define CAIRN_SCRIPT_LUA_LIBS_H

#include <lua.h>

/* struct.pack / struct.unpack / struct.size. */
int luaopen_struct(lua_State *L);

/* cmsgpack.pack / unpack / unpack_one / unpack_limit, plus the _NAME,
 * _VERSION and _DESCRIPTION fields Redis's table has. */
int luaopen_cmsgpack(lua_State *L);

/* Replace bit.tohex (global table `bit` must exist) with Cairn's version:
 * Debian's lua-bitop 1.0.2 crashes on n == INT_MIN and LuaJIT's built-in
 * gives other answers for |n| > 8 and INT_MIN.  No-op if `bit` is missing. */
void luaPatchBit(lua_State *L);

/* On LuaJIT, give the standard libraries Lua 5.1's names and error texts
 * (lua_compat.c); on Lua 5.1, nothing.  Run before the sandbox locks. */
void luaCompatLuaJIT(lua_State *L);

#endif
