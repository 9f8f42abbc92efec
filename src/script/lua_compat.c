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
 *   - string.format is Lua 5.1's: each item is formatted by the C
 *     library's snprintf and kept up to its first NUL, so a "%s" of a
 *     string with a NUL (shorter than 100 bytes, or with a precision)
 *     stops there and "%c" of 0 adds nothing; "%q" writes a NUL as \000,
 *     a CR as \r and other bytes as they are; "%s" takes only strings and
 *     numbers; and a bad format gets 5.1's error text.
 * On Lua 5.1 the function does nothing. */
#include <lauxlib.h>
#include <lua.h>
#include <stdio.h>
#include <string.h>

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

/* The string argument arg, a number made a string as Lua 5.1 makes it
 * ("%.14g": 0/0 is "-nan" where LuaJIT writes "nan"). */
static const char *checkString(lua_State *L, int arg, size_t *len) {
    if (lua_type(L, arg) == LUA_TNUMBER) {
        char text[64];
        snprintf(text, sizeof(text), "%.14g", (double)lua_tonumber(L, arg));
        lua_pushstring(L, text);
        lua_replace(L, arg);
    }
    return luaL_checklstring(L, arg, len);
}

/* "%q": the string quoted so that Lua 5.1 reads it back. */
static void addQuoted(lua_State *L, luaL_Buffer *b, int arg) {
    size_t len;
    const char *s = checkString(L, arg, &len);
    luaL_addchar(b, '"');
    for (size_t i = 0; i < len; i++) {
        char c = s[i];
        if (c == '"' || c == '\\' || c == '\n') {
            luaL_addchar(b, '\\');
            luaL_addchar(b, c);
        } else if (c == '\r') {
            luaL_addlstring(b, "\\r", 2);
        } else if (c == '\0') {
            luaL_addlstring(b, "\\000", 4);
        } else {
            luaL_addchar(b, c);
        }
    }
    luaL_addchar(b, '"');
}

#define FORMAT_FLAGS "-+ #0"
#define FORMAT_ITEM_MAX 512 /* "%99.99f" of the largest double fits */

/* Copy one conversion's flags, width and precision ("%-5.2") from *p to
 * spec; *p is left on the conversion character. */
static void scanSpec(lua_State *L, const char **p, const char *end, char *spec) {
    const char *s = *p;
    size_t n = 0;
    while (s < end && strchr(FORMAT_FLAGS, *s) && *s) s++;
    if ((size_t)(s - *p) >= sizeof(FORMAT_FLAGS)) luaL_error(L, "invalid format (repeated flags)");
    for (int i = 0; i < 2 && s < end && *s >= '0' && *s <= '9'; i++) s++;
    if (s < end && *s == '.') {
        s++;
        for (int i = 0; i < 2 && s < end && *s >= '0' && *s <= '9'; i++) s++;
    }
    if (s < end && *s >= '0' && *s <= '9') luaL_error(L, "invalid format (width or precision too long)");
    spec[n++] = '%';
    memcpy(spec + n, *p, (size_t)(s - *p));
    n += (size_t)(s - *p);
    spec[n] = '\0';
    *p = s;
}

/* A number as a C long the way a 5.1 (long) cast on x86-64 gives it:
 * out of range or NaN is LONG_MIN. */
static long toLong(lua_Number d) {
    if (d >= -9223372036854775808.0 && d < 9223372036854775808.0) return (long)d;
    return (long)(-9223372036854775807L - 1);
}

static unsigned long toULong(lua_Number d) {
    if (d >= 0 && d < 18446744073709551616.0) return (unsigned long)d;
    return (unsigned long)toLong(d);
}

static int toInt(lua_Number d) {
    if (d > -2147483649.0 && d < 2147483648.0) return (int)d;
    return -2147483647 - 1;
}

static int stringFormat(lua_State *L) {
    int top = lua_gettop(L), arg = 1;
    size_t flen;
    const char *f = luaL_checklstring(L, arg, &flen);
    const char *end = f + flen;
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    while (f < end) {
        if (*f != '%') {
            luaL_addchar(&b, *f++);
            continue;
        }
        if (++f < end && *f == '%') {
            luaL_addchar(&b, *f++);
            continue;
        }
        char spec[32], item[FORMAT_ITEM_MAX];
        if (++arg > top) luaL_argerror(L, arg, "no value");
        scanSpec(L, &f, end, spec);
        char conv = f < end ? *f++ : '\0';
        size_t sl = strlen(spec);
        item[0] = '\0';
        switch (conv) {
        case 'c':
            spec[sl] = 'c', spec[sl + 1] = '\0';
            snprintf(item, sizeof(item), spec, toInt(luaL_checknumber(L, arg)));
            break;
        case 'd':
        case 'i':
            spec[sl] = 'l', spec[sl + 1] = conv, spec[sl + 2] = '\0';
            snprintf(item, sizeof(item), spec, toLong(luaL_checknumber(L, arg)));
            break;
        case 'o':
        case 'u':
        case 'x':
        case 'X':
            spec[sl] = 'l', spec[sl + 1] = conv, spec[sl + 2] = '\0';
            snprintf(item, sizeof(item), spec, toULong(luaL_checknumber(L, arg)));
            break;
        case 'e':
        case 'E':
        case 'f':
        case 'g':
        case 'G':
            spec[sl] = conv, spec[sl + 1] = '\0';
            snprintf(item, sizeof(item), spec, (double)luaL_checknumber(L, arg));
            break;
        case 'q':
            addQuoted(L, &b, arg);
            continue;
        case 's': {
            size_t len;
            const char *s = checkString(L, arg, &len);
            if (!strchr(spec, '.') && len >= 100) {
                /* long and no precision: kept whole, as 5.1 does */
                lua_pushvalue(L, arg);
                luaL_addvalue(&b);
                continue;
            }
            spec[sl] = 's', spec[sl + 1] = '\0';
            snprintf(item, sizeof(item), spec, s);
            break;
        }
        default: {
            char c[2] = {conv, '\0'};
            return luaL_error(L, "invalid option '%%%s' to 'format'", c);
        }
        }
        luaL_addlstring(&b, item, strlen(item));
    }
    luaL_pushresult(&b);
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
    lua_pushcfunction(L, stringFormat);
    lua_setfield(L, -2, "format");
    lua_pop(L, 1);
    replaceYield(L);
}

#else

void luaCompatLuaJIT(lua_State *L) { (void)L; }

#endif
