/* lua_compat.c -- make LuaJIT's libraries look like Lua 5.1's, as Redis 7.0
 * scripts see them.
 *
 * LuaJIT 2.1 implements Lua 5.1 with a few 5.2 extensions and drops a few
 * 5.1 compatibility names.  luaCompatLuaJIT, run on a new VM before the
 * sandbox locks it, gives every library exactly Lua 5.1's names and, where
 * LuaJIT words an error differently, Lua 5.1's text:
 *   - string.gfind (5.1's alias of gmatch), math.mod (of fmod) and
 *     table.setn (which only raises "'setn' is obsolete") are added;
 *     table.move and coroutine.isyieldable are removed.
 *   - string.dump's result starts with Lua 5.1's 12-byte header (signature
 *     "\27Lua", version 0x51, format 0, little endian, int 4, size_t 8,
 *     instruction 4, number 8, floating point) in front of LuaJIT's
 *     bytecode, so what a script sees of it (its first bytes, and the
 *     chunk name loadstring's refusal quotes) is what it sees in Redis.
 *     The rest is LuaJIT's bytecode, which no sandbox loads.
 *   - coroutine.yield outside a coroutine, or past a C call, raises 5.1's
 *     "attempt to yield across metamethod/C-call boundary", with no
 *     position (5.1 raises it from C).
 * On Lua 5.1 the function does nothing. */
#include <lauxlib.h>
#include <lua.h>

#include "script/lua_libs.h"

#ifdef CAIRN_LUAJIT

static int tableSetn(lua_State *L) { return luaL_error(L, "'setn' is obsolete"); }

/* string.dump(f): Lua 5.1's header, then LuaJIT's dump of f. */
static int stringDump(lua_State *L) {
    static const char header[12] = {0x1b, 'L', 'u', 'a', 0x51, 0, 1, 4, 8, 4, 8, 0};
    luaL_checktype(L, 1, LUA_TFUNCTION);
    lua_settop(L, 1);
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_insert(L, 1);
    lua_call(L, 1, 1);
    lua_pushlstring(L, header, sizeof(header));
    lua_insert(L, -2);
    lua_concat(L, 2);
    return 1;
}

static int yieldRefused(lua_State *L) {
    lua_pushstring(L, "attempt to yield across metamethod/C-call boundary");
    return lua_error(L);
}

/* coroutine.yield as a Lua function, given isyieldable, yield and the
 * refusal.  Both calls are tail calls: LuaJIT drops this function's frame,
 * so the refusal (and the yield) happen as if the script made them. */
static const char yieldWrapper[] = "local canYield, yield, refuse = ...\n"
                                   "return function(...)\n"
                                   "  if not canYield() then return refuse() end\n"
                                   "  return yield(...)\n"
                                   "end\n";

static void replaceYield(lua_State *L) {
    lua_getglobal(L, "coroutine");
    if (luaL_loadbuffer(L, yieldWrapper, sizeof(yieldWrapper) - 1, "=[C]") != 0) {
        lua_pop(L, 2);
        return;
    }
    lua_getfield(L, -2, "isyieldable");
    lua_getfield(L, -3, "yield");
    lua_pushcfunction(L, yieldRefused);
    lua_call(L, 3, 1);
    lua_setfield(L, -2, "yield");
    lua_pushnil(L);
    lua_setfield(L, -2, "isyieldable");
    lua_pop(L, 1);
}

/* lib.to = lib.from, lib a global table. */
static void alias(lua_State *L, const char *lib, const char *to, const char *from) {
    lua_getglobal(L, lib);
    lua_getfield(L, -1, from);
    lua_setfield(L, -2, to);
    lua_pop(L, 1);
}

void luaCompatLuaJIT(lua_State *L) {
    alias(L, "string", "gfind", "gmatch");
    alias(L, "math", "mod", "fmod");
    lua_getglobal(L, "table");
    lua_pushcfunction(L, tableSetn);
    lua_setfield(L, -2, "setn");
    lua_pushnil(L);
    lua_setfield(L, -2, "move");
    lua_pop(L, 1);
    lua_getglobal(L, "string");
    lua_getfield(L, -1, "dump");
    lua_pushcclosure(L, stringDump, 1);
    lua_setfield(L, -2, "dump");
    lua_pop(L, 1);
    replaceYield(L);
}

#else

void luaCompatLuaJIT(lua_State *L) { (void)L; }

#endif
