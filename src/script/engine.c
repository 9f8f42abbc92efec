/* engine.c -- the Lua VM that EVAL scripts and functions run in.
 *
 * What a VM holds: the base, table, string and math libraries, cjson, bit,
 * struct and cmsgpack, and the `redis` table (call, pcall, log, setresp,
 * sha1hex, error_reply, status_reply, set_repl, replicate_commands,
 * breakpoint, debug, acl_check_cmd and the constants).
 *
 * The sandbox (luaEngineLockGlobals).  Redis 7.0 patches its Lua to mark
 * tables read-only; Cairn uses Debian's unpatched Lua, so it gets the same
 * behaviour with proxies: the globals the scripts see, and each library
 * table, is an empty table whose metatable reads through to the real one
 * and refuses writes.  The base functions that could bypass a metatable
 * (rawset, rawget, setmetatable, next, pairs) are wrapped to see through
 * proxies and to refuse writes.  Reading a global that does not exist is an
 * error, as in Redis.
 *
 * Errors.  Every error a script raises reaches errorHandler (the pcall
 * message handler), which turns it into a table {err=, source=, line=};
 * luaEngineRun formats that as Redis 7.0 does:
 *   "<err> script: <name>, on @user_script:<line>." */
#include "script/engine.h"
#include "script/ldb.h"

#include <lauxlib.h>
#include <lualib.h>
#include <ctype.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "core/config.h"
#include "core/dispatch.h"
#include "core/effects.h"
#include "core/errors.h"
#include "core/event.h"
#include "core/log.h"
#include "core/net.h"
#include "core/server.h"
#include "ds/alloc.h"
#include "ds/sha1.h"
#include "ds/util.h"
#include "script/lua_libs.h"
#include "script/lua_reply.h"
#include "script/script.h"
#include "script/tailcall.h"

/* lua-enable-deprecated-api (hidden, immutable): scripts keep getfenv,
 * setfenv and newproxy.  The directive is at the end of this file. */
static int luaEnableDeprecatedApi;

int luaopen_cjson(lua_State *L);
#ifndef CAIRN_LUAJIT
int luaopen_bit(lua_State *L);
#endif

#define REDIS_VERSION_STR "7.0.15"
#define REDIS_VERSION_NUM 0x07000f

static ScriptRun *currentRun;

ScriptRun *scriptCurrentRun(void) { return currentRun; }
Client *scriptCaller(void) { return currentRun ? currentRun->caller : NULL; }

static ScriptAclCheck *aclCheck;
void scriptSetAclCheck(ScriptAclCheck *fn) { aclCheck = fn; }
static ScriptAclAllowed *aclAllowed;
void scriptSetAclAllowed(ScriptAclAllowed *fn) { aclAllowed = fn; }
static ScriptClusterCheck *clusterCheck;
void scriptSetClusterCheck(ScriptClusterCheck *fn) { clusterCheck = fn; }

int (*scriptRunningStale)(void);
ScriptReplicaWriteError *scriptReplicaWriteError;
ScriptDiskError *scriptDiskError;

const char *scriptLuaEngine(void) {
#ifdef CAIRN_LUAJIT
    return "luajit";
#else
    return "lua5.1";
#endif
}

/* Registry keys (addresses are unique light userdata). */
static char proxiesKey;   /* proxy -> real table (weak keys) */

/* The strings of the name slots, in slot order (SLOT_ERR..SLOT_ARGV). */
static const char *const slotNames[] = {"err", "ok", "double", "big_number", "map", "set", "verbatim_string",
                                        "ignore_error_stats_update", "KEYS", "ARGV"};
_Static_assert(sizeof(slotNames) / sizeof(slotNames[0]) == SLOT_ARGV - SLOT_ERR + 1, "a name for each name slot");

/* ------------------------------------------------------------------ */
/* math.random: the 48-bit linear congruential generator of POSIX lrand48,
 * starting from drand48's documented default state (as if never seeded)
 * and never reseeded by the server, so scripts see the sequence a Redis
 * 7.0 server produces from its start. */

static uint64_t randState = 0x1234ABCD330EULL;

static int32_t lrand48Next(void) {
    randState = (0x5DEECE66DULL * randState + 0xB) & ((1ULL << 48) - 1);
    return (int32_t)(randState >> 17);
}

static int mathRandom(lua_State *L) {
    lua_Number r = (lua_Number)(lrand48Next() % INT32_MAX) / (lua_Number)INT32_MAX;
    switch (lua_gettop(L)) {
    case 0:
        lua_pushnumber(L, r);
        break;
    case 1: {
        int u = luaL_checkint(L, 1);
        luaL_argcheck(L, 1 <= u, 1, "interval is empty");
        lua_pushnumber(L, floor(r * u) + 1);
        break;
    }
    case 2: {
        int l = luaL_checkint(L, 1), u = luaL_checkint(L, 2);
        luaL_argcheck(L, l <= u, 2, "interval is empty");
        lua_pushnumber(L, floor(r * (u - l + 1)) + l);
        break;
    }
    default:
        return luaL_error(L, "wrong number of arguments");
    }
    return 1;
}

static int mathRandomSeed(lua_State *L) {
    randState = ((uint64_t)(uint32_t)luaL_checkint(L, 1) << 16) | 0x330E;
    return 0;
}

#ifndef CAIRN_LUAJIT
/* ------------------------------------------------------------------ */
/* tonumber on Lua 5.1.  The base library's converts a string twice (once
 * to ask whether it is a number, once to get it), with strtod each time;
 * scripts call it on every KEYS / ARGV number.  Same answers and errors,
 * one conversion, and none of strtod for short decimal integers.
 * (LuaJIT's tonumber is a fast function of its own: kept.) */

/* A string as Lua 5.1 reads a number: what strtod accepts (up to the first
 * NUL), then nothing but white space. */
static int luaStringToNumber(const char *s, size_t len, lua_Number *out) {
    size_t i = len > 0 && s[0] == '-';
    size_t digits = len - i;
    if (digits > 0 && digits <= 15) {
        long long v = 0;
        while (i < len && s[i] >= '0' && s[i] <= '9') v = v * 10 + (s[i++] - '0');
        if (i == len) { /* exact as a double; "-0" is -0.0 as from strtod */
            *out = s[0] == '-' ? -(lua_Number)v : (lua_Number)v;
            return 1;
        }
    }
    char *end;
    lua_Number v = strtod(s, &end);
    if (end == s) return 0;
    while (isspace((unsigned char)*end)) end++;
    if (*end != '\0') return 0;
    *out = v;
    return 1;
}

static int baseTonumber(lua_State *L) {
    int base = luaL_optint(L, 2, 10);
    if (base == 10) {
        luaL_checkany(L, 1);
        lua_Number v;
        size_t len;
        if (lua_type(L, 1) == LUA_TNUMBER) {
            lua_pushvalue(L, 1);
            return 1;
        }
        if (lua_type(L, 1) == LUA_TSTRING) {
            const char *s = lua_tolstring(L, 1, &len);
            if (luaStringToNumber(s, len, &v)) {
                lua_pushnumber(L, v);
                return 1;
            }
        }
    } else {
        const char *s = luaL_checkstring(L, 1);
        luaL_argcheck(L, base >= 2 && base <= 36, 2, "base out of range");
        char *end;
        unsigned long n = strtoul(s, &end, base);
        if (end != s) {
            while (isspace((unsigned char)*end)) end++;
            if (*end == '\0') {
                lua_pushnumber(L, (lua_Number)n);
                return 1;
            }
        }
    }
    lua_pushnil(L);
    return 1;
}
#endif

/* ------------------------------------------------------------------ */
/* Errors raised as tables. */

/* Push {err=msg} (the form redis.pcall returns and redis.call raises). */
static void pushErrorTable(lua_State *L, const char *msg, size_t len) {
    lua_createtable(L, 0, 1);
    lua_pushlstring(L, msg, len);
    setSlotField(L, -2, SLOT_ERR);
}

/* Raise msg ("ERR ...") as an error table. */
static int raiseError(lua_State *L, const char *msg) {
    pushErrorTable(L, msg, strlen(msg));
    return lua_error(L);
}

/* ------------------------------------------------------------------ */
/* Read-only tables. */

static int readonlyError(lua_State *L) {
    luaL_where(L, 1);
    lua_pushstring(L, "Attempt to modify a readonly table");
    lua_concat(L, 2);
    return lua_error(L);
}

static int unknownGlobal(lua_State *L) {
    const char *name = lua_tostring(L, 2);
    luaL_where(L, 1);
    lua_pushfstring(L, "Script attempted to access nonexistent global variable '%s'", name ? name : "?");
    lua_concat(L, 2);
    return lua_error(L);
}

/* The real table behind a proxy at idx, pushed; or nothing and 0. */
static int pushReal(lua_State *L, int idx) {
    if (lua_type(L, idx) != LUA_TTABLE) return 0;
    lua_pushlightuserdata(L, &proxiesKey);
    lua_rawget(L, LUA_REGISTRYINDEX);
    lua_pushvalue(L, idx);
    lua_rawget(L, -2);
    lua_remove(L, -2);
    if (lua_isnil(L, -1)) {
        lua_pop(L, 1);
        return 0;
    }
    return 1;
}

static int isReadonly(lua_State *L, int idx) {
    if (!pushReal(L, idx)) return 0;
    lua_pop(L, 1);
    return 1;
}

static int plainReadonlyError(lua_State *L) {
    lua_pushstring(L, "Attempt to modify a readonly table");
    return lua_error(L);
}

static int sandboxRawset(lua_State *L) {
    luaL_checktype(L, 1, LUA_TTABLE);
    luaL_checkany(L, 2);
    luaL_checkany(L, 3);
    if (isReadonly(L, 1)) return plainReadonlyError(L);
    lua_settop(L, 3);
    lua_rawset(L, 1);
    return 1;
}

static int sandboxSetmetatable(lua_State *L) {
    if (isReadonly(L, 1)) return plainReadonlyError(L);
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_insert(L, 1);
    lua_call(L, lua_gettop(L) - 1, LUA_MULTRET);
    return lua_gettop(L);
}

static int sandboxRawget(lua_State *L) {
    luaL_checktype(L, 1, LUA_TTABLE);
    luaL_checkany(L, 2);
    if (pushReal(L, 1)) lua_replace(L, 1);
    lua_settop(L, 2);
    lua_rawget(L, 1);
    return 1;
}

static int sandboxNext(lua_State *L) {
    luaL_checktype(L, 1, LUA_TTABLE);
    if (pushReal(L, 1)) lua_replace(L, 1);
    lua_settop(L, 2);
    if (lua_next(L, 1)) return 2;
    lua_pushnil(L);
    return 1;
}

static int sandboxPairs(lua_State *L) {
    luaL_checktype(L, 1, LUA_TTABLE);
    lua_pushvalue(L, lua_upvalueindex(1)); /* the sandbox's next */
    lua_pushvalue(L, 1);
    lua_pushnil(L);
    return 3;
}

/* getmetatable as Redis's read-only tables answer it.  A string's
 * metatable is seen through a read-only proxy (upvalue 2), so no script can
 * change how strings index for the scripts after it; a library table, and
 * the proxies' own stand-in metatables, have none (nil, as on Redis); the
 * globals, and every table a script made, get Lua's answer (upvalue 1). */
static int sandboxGetmetatable(lua_State *L) {
    luaL_checkany(L, 1);
    if (lua_type(L, 1) == LUA_TSTRING) {
        lua_pushvalue(L, lua_upvalueindex(2));
        return 1;
    }
    if (pushReal(L, 1)) {
        pushSlot(L, SLOT_REAL_GLOBALS);
        int globals = lua_rawequal(L, -1, -2);
        lua_pop(L, 2);
        if (!globals) {
            lua_pushnil(L);
            return 1;
        }
    }
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_pushvalue(L, 1);
    lua_call(L, 1, 1);
    return 1;
}

/* Replace the table at idx by a proxy: {} with a metatable reading through
 * to it and refusing writes.  The proxy is left on the stack. */
static void pushProxy(lua_State *L, int idx, int errorOnMissing) {
    idx = idx < 0 ? lua_gettop(L) + idx + 1 : idx;
    lua_newtable(L); /* the proxy */
    lua_newtable(L); /* its metatable */
    lua_pushvalue(L, idx);
    lua_setfield(L, -2, "__index");
    lua_pushcfunction(L, readonlyError);
    lua_setfield(L, -2, "__newindex");
    /* What getmetatable answers: an empty table that refuses writes. */
    lua_newtable(L);
    lua_newtable(L);
    lua_pushcfunction(L, readonlyError);
    lua_setfield(L, -2, "__newindex");
    lua_setmetatable(L, -2);
    lua_pushlightuserdata(L, &proxiesKey);
    lua_rawget(L, LUA_REGISTRYINDEX);
    lua_pushvalue(L, -2);
    lua_pushvalue(L, -3);
    lua_rawset(L, -3);
    lua_pop(L, 1);
    lua_setfield(L, -2, "__metatable");
    lua_setmetatable(L, -2);
    /* proxies[proxy] = real */
    lua_pushlightuserdata(L, &proxiesKey);
    lua_rawget(L, LUA_REGISTRYINDEX);
    lua_pushvalue(L, -2);
    lua_pushvalue(L, idx);
    lua_rawset(L, -3);
    lua_pop(L, 1);
    if (errorOnMissing) {
        /* the real table's own metatable errors on unknown names */
        lua_newtable(L);
        lua_pushcfunction(L, unknownGlobal);
        lua_setfield(L, -2, "__index");
        lua_setmetatable(L, idx);
    }
}

void luaEngineLockGlobals(lua_State *L) {
    lua_pushvalue(L, LUA_GLOBALSINDEX);
    int realG = lua_gettop(L);
    lua_pushvalue(L, realG);
    lua_rawseti(L, LUA_REGISTRYINDEX, SLOT_REAL_GLOBALS);
    /* Library tables become proxies (a table may appear under two names). */
    lua_newtable(L);
    int done = lua_gettop(L); /* real -> proxy */
    lua_pushnil(L);
    while (lua_next(L, realG)) {
        if (lua_type(L, -1) == LUA_TTABLE && lua_type(L, -2) == LUA_TSTRING && !lua_rawequal(L, -1, realG)) {
            lua_pushvalue(L, -1);
            lua_rawget(L, done);
            if (lua_isnil(L, -1)) {
                lua_pop(L, 1);
                pushProxy(L, -1, 0);
                lua_pushvalue(L, -2);
                lua_pushvalue(L, -2);
                lua_rawset(L, done);
            }
            /* stack: key value proxy; assigning an existing key keeps next() valid */
            lua_pushvalue(L, -3);
            lua_insert(L, -2);
            lua_rawset(L, realG);
        }
        lua_pop(L, 1);
    }
    /* Strings index through the read-only string table, and scripts see
     * their metatable only through a read-only proxy (sandboxGetmetatable):
     * otherwise `getmetatable('').__index = ...` would change what every
     * later script runs (CVE-2025-46818). */
    lua_pushliteral(L, "");
    if (lua_getmetatable(L, -1)) {
        lua_getfield(L, realG, "string");
        lua_setfield(L, -2, "__index");
        lua_getfield(L, realG, "getmetatable");
        pushProxy(L, -2, 0);
        lua_pushcclosure(L, sandboxGetmetatable, 2);
        lua_setfield(L, realG, "getmetatable");
        lua_pop(L, 1);
    }
    lua_pop(L, 2); /* "" and done */
    pushProxy(L, realG, 1);
    lua_pushvalue(L, -1);
    lua_setfield(L, realG, "_G");
    lua_replace(L, LUA_GLOBALSINDEX);
    lua_pop(L, 1);
}

/* ------------------------------------------------------------------ */
/* Library set-up. */

static void openLib(lua_State *L, const char *name, lua_CFunction open) {
    lua_pushcfunction(L, open);
    lua_pushstring(L, name);
    lua_call(L, 1, 1);
    if (name[0] && lua_type(L, -1) == LUA_TTABLE) lua_setglobal(L, name);
    else lua_pop(L, 1);
}

static void removeGlobal(lua_State *L, const char *name) {
    lua_pushnil(L);
    lua_setglobal(L, name);
}

/* Compile s as text, the way Lua 5.1's luaL_loadbuffer does.  Precompiled
 * chunks never load: like Redis's Lua, loadstring/load parse them as source
 * text, which fails on the signature byte with the text parser's own
 * message.  LuaJIT skips a first line starting with '#', which Lua 5.1
 * reports as an error.  A space in front makes either take the text parser
 * without changing what it reports. */
static int loadText(lua_State *L, const char *s, size_t len, const char *chunk) {
    int spaced = len > 0 && s[0] == LUA_SIGNATURE[0];
#ifdef CAIRN_LUAJIT
    spaced = spaced || (len > 0 && s[0] == '#');
#endif
    if (!spaced) return luaL_loadbuffer(L, s, len, chunk);
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    luaL_addchar(&b, ' ');
    luaL_addlstring(&b, s, len);
    luaL_pushresult(&b);
    size_t blen;
    const char *text = lua_tolstring(L, -1, &blen);
    int rc = luaL_loadbuffer(L, text, blen, chunk);
    lua_remove(L, -2);
    return rc;
}

#ifdef CAIRN_LUAJIT
/* The name Lua 5.1 (as Debian builds it, the Lua Redis runs) gives a chunk
 * loaded from a string source: `[string "<first line>"]`, the line cut at
 * 63 bytes, "..." when cut.  LuaJIT cuts shorter and also at control
 * characters. */
#define CHUNK_ID_TEXT 63

static sds chunkId51(const char *source) {
    size_t len = strlen(source);
    const char *nl = strchr(source, '\n');
    size_t keep = len > CHUNK_ID_TEXT ? CHUNK_ID_TEXT : len;
    if (nl && (size_t)(nl - source) < keep) keep = (size_t)(nl - source);
    sds id = sdsNew("[string \"");
    id = sdsCatLen(id, source, keep);
    if (keep < len) id = sdsCat(id, "...");
    return sdsCat(id, "\"]");
}

/* loadText, with a compile error naming a string source as Lua 5.1 does.
 * (The chunk keeps its name: errors it raises when it runs quote it the
 * LuaJIT way, which differs only for long or multi-line names.) */
static int loadNamed51(lua_State *L, const char *s, size_t len, const char *chunk) {
    int rc = loadText(L, s, len, chunk);
    if (rc == 0 || chunk[0] == '=' || chunk[0] == '@') return rc;
    /* Compile again under a one-byte name, to find where the position
     * starts, and put Lua 5.1's name in front of it. */
    lua_pop(L, 1);
    rc = loadText(L, s, len, "=\x01");
    const char *msg = lua_tostring(L, -1);
    if (rc != 0 && msg && msg[0] == '\x01') {
        sds id = chunkId51(chunk);
        lua_pushlstring(L, id, sdsLen(id));
        lua_pushstring(L, msg + 1);
        lua_concat(L, 2);
        lua_replace(L, -2);
        sdsFree(id);
    }
    return rc;
}
#else
#define loadNamed51 loadText
#endif

/* loadstring/load: the function, or nil and the message. */
static int loadChecked(lua_State *L, const char *s, size_t len, const char *chunk) {
    if (loadNamed51(L, s, len, chunk) == 0) return 1;
    lua_pushnil(L);
    lua_insert(L, -2);
    return 2;
}

#ifdef CAIRN_LUAJIT
/* The helper a rewritten `return H(<call>)` passes its results through. */
static int passResults(lua_State *L) { return lua_gettop(L); }
#endif

#ifdef CAIRN_LUAJIT
/* Push the real globals table (the sandbox's proxy reads through to it). */
static void pushRealGlobals(lua_State *L) {
    pushSlot(L, SLOT_REAL_GLOBALS);
    if (lua_istable(L, -1)) return;
    lua_pop(L, 1);
    lua_pushvalue(L, LUA_GLOBALSINDEX);
}

static int nameIs(const char *name, size_t len, const char *what) {
    return len == strlen(what) && memcmp(name, what, len) == 0;
}

/* scriptRewrite's question: what the global `name` holds. */
static int globalKind(void *ctx, const char *name, size_t len) {
    lua_State *L = ctx;
    if (nameIs(name, len, "KEYS") || nameIs(name, len, "ARGV")) return GLOBAL_PER_RUN;
    pushRealGlobals(L);
    lua_pushlstring(L, name, len);
    lua_rawget(L, -2);
    int type = lua_type(L, -1);
    lua_pop(L, 2);
    return type == LUA_TTABLE ? GLOBAL_TABLE : type == LUA_TFUNCTION ? GLOBAL_FUNCTION : GLOBAL_ABSENT;
}

/* The rewritten chunk (rw->text), called once with the helper and the
 * aliased globals' values, hands back the script's function, which
 * replaces the one on top of the stack.  Should it fail (limits on
 * upvalues), the original stands and 0 is returned. */
static int loadRewritten(lua_State *L, const ScriptRewrite *rw, const char *chunk) {
    if (luaL_loadbuffer(L, rw->text, sdsLen(rw->text), chunk) != 0) {
        lua_pop(L, 1);
        return 0;
    }
    lua_pushcfunction(L, passResults);
    pushRealGlobals(L);
    int realG = lua_gettop(L);
    for (int a = 0; a < rw->naliases; a++) {
        if (nameIs(rw->aliases[a], sdsLen(rw->aliases[a]), "KEYS") ||
            nameIs(rw->aliases[a], sdsLen(rw->aliases[a]), "ARGV")) {
            lua_newtable(L);
        } else {
            lua_pushlstring(L, rw->aliases[a], sdsLen(rw->aliases[a]));
            lua_rawget(L, realG);
        }
    }
    lua_remove(L, realG);
    if (lua_pcall(L, 1 + rw->naliases, 1, 0) == 0 && lua_isfunction(L, -1)) {
        lua_replace(L, -2);
        return 1;
    }
    lua_pop(L, 1);
    return 0;
}
#endif

/* luaEngineLoad and luaEngineLoadScript: on LuaJIT the text goes through
 * scriptRewrite, which passes globals in as upvalues when kind is given;
 * args (when not NULL) then says where KEYS and ARGV went. */
static int loadRewriting(lua_State *L, const char *body, size_t len, const char *chunk, GlobalKindFn kind,
                         ScriptArgs *args) {
    if (args) memset(args, 0, sizeof(*args));
    int rc = loadText(L, body, len, chunk);
#ifdef CAIRN_LUAJIT
    if (rc != 0) return rc;
    ScriptRewrite rw;
    scriptRewrite(body, len, kind, L, &rw);
    if (rw.text && loadRewritten(L, &rw, chunk) && args) {
        /* KEYS and ARGV, if passed in, are upvalues of the function. */
        const char *name;
        /* (Lua functions have at most 60 upvalues: 6 bits.) */
        for (int n = 1; n <= 63 && (name = lua_getupvalue(L, -1, n)) != NULL; n++) {
            lua_pop(L, 1);
            int isKeys = strcmp(name, "KEYS") == 0;
            if (!isKeys && strcmp(name, "ARGV") != 0) continue;
            int readOnly = 0;
            for (int a = 0; a < rw.naliases; a++)
                if (strcmp(rw.aliases[a], name) == 0) readOnly = rw.readOnly[a];
            args->upvalues = 1;
            if (isKeys) {
                args->keysUpvalue = (unsigned char)n;
                args->keysInPlace = (unsigned char)readOnly;
            } else {
                args->argvUpvalue = (unsigned char)n;
                args->argvInPlace = (unsigned char)readOnly;
            }
        }
    }
    scriptRewriteFree(&rw);
#else
    (void)kind;
#endif
    return rc;
}

int luaEngineLoad(lua_State *L, const char *body, size_t len, const char *chunk) {
    return loadRewriting(L, body, len, chunk, NULL, NULL);
}

int luaEngineLoadScript(lua_State *L, const char *body, size_t len, const char *chunk, ScriptArgs *args) {
#ifdef CAIRN_LUAJIT
    return loadRewriting(L, body, len, chunk, globalKind, args);
#else
    return loadRewriting(L, body, len, chunk, NULL, args);
#endif
}

unsigned luaEngineArgsPack(const ScriptArgs *a) {
    return (unsigned)a->upvalues | (unsigned)a->keysInPlace << 1 | (unsigned)a->argvInPlace << 2 |
           (unsigned)a->keysUpvalue << 3 | (unsigned)a->argvUpvalue << 9;
}

void luaEngineArgsUnpack(unsigned packed, ScriptArgs *a) {
    a->upvalues = packed & 1;
    a->keysInPlace = (packed >> 1) & 1;
    a->argvInPlace = (packed >> 2) & 1;
    a->keysUpvalue = (packed >> 3) & 63;
    a->argvUpvalue = (packed >> 9) & 63;
    a->keysHeld = a->argvHeld = NULL;
}

void luaEngineArgsRelease(ScriptArgs *a) {
    sdsFree(a->keysHeld);
    sdsFree(a->argvHeld);
    a->keysHeld = a->argvHeld = NULL;
}

/* pcall hands back the text of an error table ({err=...}, what redis.call
 * raises), as Redis's pcall does. */
static int sandboxPcall(lua_State *L) {
    luaL_checkany(L, 1);
    int argc = lua_gettop(L);
    if (lua_pcall(L, argc - 1, LUA_MULTRET, 0) == 0) {
        lua_pushboolean(L, 1);
        lua_insert(L, 1);
        return lua_gettop(L);
    }
    if (lua_istable(L, -1)) {
        lua_getfield(L, -1, "err");
        if (lua_isstring(L, -1)) lua_replace(L, -2);
        else lua_pop(L, 1);
    }
    lua_pushboolean(L, 0);
    lua_insert(L, -2);
    return 2;
}

static int sandboxLoadstring(lua_State *L) {
    size_t len;
    const char *s = luaL_checklstring(L, 1, &len);
    return loadChecked(L, s, len, luaL_optstring(L, 2, s));
}

static int sandboxLoad(lua_State *L) {
    luaL_checktype(L, 1, LUA_TFUNCTION);
    const char *chunk = luaL_optstring(L, 2, "=(load)");
    luaL_Buffer b;
    lua_settop(L, 2);
    luaL_buffinit(L, &b);
    for (;;) {
        lua_pushvalue(L, 1);
        lua_call(L, 0, 1);
        if (lua_isnil(L, -1)) {
            lua_pop(L, 1);
            break;
        }
        if (!lua_isstring(L, -1)) return luaL_error(L, "reader function must return a string");
        if (lua_objlen(L, -1) == 0) {
            lua_pop(L, 1);
            break;
        }
        luaL_addvalue(&b);
    }
    luaL_pushresult(&b);
    size_t len;
    const char *s = lua_tolstring(L, -1, &len);
    return loadChecked(L, s, len, chunk);
}

static int osClock(lua_State *L) {
    lua_pushnumber(L, (lua_Number)clock() / (lua_Number)CLOCKS_PER_SEC);
    return 1;
}

/* ------------------------------------------------------------------ */
/* Errors. */

#ifdef CAIRN_LUAJIT
/* LuaJIT raises "stack overflow" without the position Lua 5.1 puts in
 * front of it (that of the Lua function making the call): add it. */
static void positionStackOverflow(lua_State *L) {
    const char *msg = lua_tostring(L, 1);
    if (!msg || strcmp(msg, "stack overflow") != 0) return;
    lua_Debug ar;
    for (int level = 1; level <= 3 && lua_getstack(L, level, &ar); level++) {
        if (!lua_getinfo(L, "Sl", &ar) || ar.currentline <= 0) continue;
        lua_pushfstring(L, "%s:%d: %s", ar.short_src, ar.currentline, msg);
        lua_replace(L, 1);
        return;
    }
}
#endif

/* The pcall message handler: any error becomes {err, source, line}. */
static int errorHandler(lua_State *L) {
#ifdef CAIRN_LUAJIT
    positionStackOverflow(L);
#endif
    if (lua_type(L, 1) == LUA_TTABLE) {
        lua_settop(L, 1);
    } else {
        const char *msg = lua_tostring(L, 1);
        if (!msg) msg = lua_isboolean(L, 1) ? (lua_toboolean(L, 1) ? "true" : "false") : "nil";
        lua_pushfstring(L, "ERR %s", msg);
        lua_replace(L, 1);
        lua_settop(L, 1);
        lua_newtable(L);
        lua_insert(L, 1);
        lua_setfield(L, 1, "err");
    }
    lua_getfield(L, 1, "source");
    int hasSource = !lua_isnil(L, -1);
    lua_pop(L, 1);
    if (!hasSource) {
        lua_Debug ar;
        /* Level 1 raised the error; when that is a C function (error,
         * redis.call) the script is level 2.  (On LuaJIT that holds for
         * `return redis.call(...)` too thanks to luaEngineLoad's rewrite.) */
        for (int level = 1; level <= 2; level++) {
            if (!lua_getstack(L, level, &ar) || !lua_getinfo(L, "Sl", &ar)) break;
            if (strcmp(ar.what, "C") == 0) continue;
            lua_pushstring(L, ar.source);
            lua_setfield(L, 1, "source");
            lua_pushinteger(L, ar.currentline);
            lua_setfield(L, 1, "line");
            break;
        }
    }
    return 1;
}

/* ------------------------------------------------------------------ */
/* Lua value -> reply. */

/* Errors that came from a command a script called carry this field: they
 * were counted in errorstats when the command failed. */
#define ERR_COUNTED_FIELD "ignore_error_stats_update"

static int errorCounted(lua_State *L, int idx) {
    lua_getfield(L, idx, ERR_COUNTED_FIELD);
    int counted = lua_toboolean(L, -1);
    lua_pop(L, 1);
    return counted;
}

static void replyVerbatimError(Client *c, const char *s, size_t len, int counted) {
    sds e = sdsNewLen("-", 1);
    e = sdsCatLen(e, s, len);
    if (counted) replyErrorLenNoStats(c, e, sdsLen(e));
    else replyErrorLen(c, e, sdsLen(e));
    sdsFree(e);
}

/* Status texts lose their line breaks, as on the wire. */
static void replySafeStatus(Client *c, const char *s, size_t len) {
    sds t = sdsNewLen(s, len);
    for (size_t i = 0; i < len; i++)
        if (t[i] == '\r' || t[i] == '\n') t[i] = ' ';
    replyStatusLen(c, t, len);
    sdsFree(t);
}

/* The field named by slot of the table on top, pushed, if it has type
 * `type`. */
static int tableField(lua_State *L, int slot, int type) {
    pushSlot(L, slot);
    lua_rawget(L, -2);
    if (lua_type(L, -1) == type) return 1;
    lua_pop(L, 1);
    return 0;
}

static void luaToReply(lua_State *L, Client *c, int scriptResp);

/* The number of entries of the table on top.  Counting first lets the
 * reply header go out before the elements: no deferred length, which would
 * cost the caller a reply block of its own. */
static long countPairs(lua_State *L) {
    long n = 0;
    lua_pushnil(L);
    while (lua_next(L, -2)) {
        lua_pop(L, 1);
        n++;
    }
    return n;
}

static void tableToReply(lua_State *L, Client *c, int scriptResp) {
    size_t len;
    /* Error and status texts are C strings to Redis: they end at a NUL. */
    if (tableField(L, SLOT_ERR, LUA_TSTRING)) {
        const char *s = lua_tostring(L, -1);
        replyVerbatimError(c, s, strlen(s), errorCounted(L, -2));
        lua_pop(L, 1);
        return;
    }
    if (tableField(L, SLOT_OK, LUA_TSTRING)) {
        const char *s = lua_tostring(L, -1);
        replySafeStatus(c, s, strlen(s));
        lua_pop(L, 1);
        return;
    }
    if (tableField(L, SLOT_DOUBLE, LUA_TNUMBER)) {
        replyDouble(c, lua_tonumber(L, -1));
        lua_pop(L, 1);
        return;
    }
    if (tableField(L, SLOT_BIG_NUMBER, LUA_TSTRING)) {
        const char *num = lua_tolstring(L, -1, &len);
        sds t = sdsNewLen(num, len);
        for (size_t i = 0; i < len; i++)
            if (t[i] == '\r' || t[i] == '\n') t[i] = ' ';
        replyBigNumber(c, t, len);
        sdsFree(t);
        lua_pop(L, 1);
        return;
    }
    if (tableField(L, SLOT_MAP, LUA_TTABLE)) {
        replyMapLen(c, countPairs(L));
        lua_pushnil(L);
        while (lua_next(L, -2)) {
            lua_pushvalue(L, -2);
            luaToReply(L, c, scriptResp); /* key (pops the copy) */
            luaToReply(L, c, scriptResp); /* value */
        }
        lua_pop(L, 1);
        return;
    }
    if (tableField(L, SLOT_SET, LUA_TTABLE)) {
        replySetLen(c, countPairs(L));
        lua_pushnil(L);
        while (lua_next(L, -2)) {
            lua_pop(L, 1);
            lua_pushvalue(L, -1);
            luaToReply(L, c, scriptResp);
        }
        lua_pop(L, 1);
        return;
    }
    if (tableField(L, SLOT_VERBATIM, LUA_TTABLE)) {
        lua_getfield(L, -1, "format");
        lua_getfield(L, -2, "string");
        size_t flen, slen;
        const char *fmt = lua_tolstring(L, -2, &flen);
        const char *str = lua_tolstring(L, -1, &slen);
        if (fmt && str && flen == 3) {
            char ext[4] = {fmt[0], fmt[1], fmt[2], 0};
            replyVerbatim(c, str, slen, ext);
            lua_pop(L, 3);
            return;
        }
        lua_pop(L, 3);
    }
    /* An array up to the first nil. */
    int n = 0;
    for (;;) {
        lua_rawgeti(L, -1, n + 1);
        int end = lua_isnil(L, -1);
        lua_pop(L, 1);
        if (end) break;
        n++;
    }
    replyArrayLen(c, n);
    for (int i = 1; i <= n; i++) {
        lua_rawgeti(L, -1, i);
        luaToReply(L, c, scriptResp);
    }
}

/* Reply with the value on top of L and pop it. */
static void luaToReply(lua_State *L, Client *c, int scriptResp) {
    if (!lua_checkstack(L, 4)) {
        replyError(c, "ERR reached lua stack limit");
        lua_pop(L, 1);
        return;
    }
    size_t len;
    switch (lua_type(L, -1)) {
    case LUA_TSTRING: {
        const char *s = lua_tolstring(L, -1, &len);
        replyBulk(c, s, len);
        break;
    }
    case LUA_TBOOLEAN:
        if (scriptResp == 2) {
            if (lua_toboolean(L, -1)) replyLongLong(c, 1);
            else replyNull(c);
        } else {
            replyBool(c, lua_toboolean(L, -1));
        }
        break;
    case LUA_TNUMBER: {
        /* Truncated; what does not fit (and NaN) answers LLONG_MIN, as
         * the conversion does on the machines Redis runs on. */
        double d = (double)lua_tonumber(L, -1);
        replyLongLong(c, d >= -9223372036854775808.0 && d < 9223372036854775808.0 ? (long long)d : LLONG_MIN);
        break;
    }
    case LUA_TTABLE:
        tableToReply(L, c, scriptResp);
        break;
    default:
        replyNull(c);
    }
    lua_pop(L, 1);
}

/* ------------------------------------------------------------------ */
/* redis.call / redis.pcall. */

#define ARGV_STATIC 16

/* Turn the call's arguments into argv; on error push the message. */
static int collectArgs(lua_State *L, int argc, sds *argv, const char **err) {
    for (int i = 0; i < argc; i++) {
        int t = lua_type(L, i + 1);
        if (t == LUA_TNUMBER) {
            /* 17 significant digits (%.17g); whole numbers below 1e15 print
             * the same as integers, without the cost of printf. */
            char buf[64];
            double d = (double)lua_tonumber(L, i + 1);
            int n;
            if (d > -1e15 && d < 1e15 && d == (double)(long long)d && !(d == 0 && signbit(d)))
                n = (int)longLongToString(buf, sizeof(buf), (long long)d);
            else
                n = snprintf(buf, sizeof(buf), "%.17g", d);
            argv[i] = sdsNewLen(buf, (size_t)n);
        } else if (t == LUA_TSTRING) {
            size_t len;
            const char *s = lua_tolstring(L, i + 1, &len);
            argv[i] = sdsNewLen(s, len);
        } else {
            for (int j = 0; j < i; j++) sdsFree(argv[j]);
            *err = "ERR Lua redis lib command arguments must be strings or integers";
            return -1;
        }
    }
    return 0;
}

static void freeArgs(sds *argv, int argc) {
    for (int i = 0; i < argc; i++) sdsFree(argv[i]);
}

/* Checks Redis makes before a script's command runs; NULL when allowed. */
static const char *checkScriptCommand(ScriptRun *run, Command *cmd, int argc, sds *argv) {
    if (!cmd) return "ERR Unknown Redis command called from script";
    if ((cmd->arity > 0 && argc != cmd->arity) || argc < -cmd->arity)
        return "ERR Wrong number of args calling Redis command from script";
    if ((cmd->flags & CMD_NOSCRIPT) && !scriptAllowNoscriptCommands)
        return "ERR This Redis command is not allowed from script";
    if (!(cmd->flags & CMD_STALE) && scriptRunningStale && scriptRunningStale())
        return "ERR Can not execute the command on a stale replica";
    if (aclCheck) {
        const char *denied = aclCheck(run->caller, cmd, argc, argv);
        if (denied) return denied;
    }
    /* A read-only script may not run what may replicate either (PUBLISH,
     * PFCOUNT): that is what lets it run during CLIENT PAUSE WRITE. */
    if ((cmd->flags & (CMD_WRITE | CMD_MAY_REPLICATE)) && (run->readOnly || (run->flags & SCRIPT_FLAG_NO_WRITES)))
        return "ERR Write commands are not allowed from read-only scripts.";
    if (cmd->flags & CMD_WRITE) {
        if (scriptReplicaWriteError) {
            const char *repl = scriptReplicaWriteError();
            /* A read-only replica obeys its primary and its AOF (a script
             * replayed from it: the fake caller), as Redis does. */
            int obey = server.isReplica && run->caller && (run->caller->flags & (CLIENT_MASTER | CLIENT_FAKE));
            if (repl && !obey) return repl;
        }
        /* A script that already wrote is not stopped half-way. */
        if (!run->wroteSomething && scriptDiskError) {
            const char *disk = scriptDiskError(NULL);
            if (disk) return disk;
        }
    }
    /* Out of memory when the script began: its first deny-oom command is
     * refused; after a write it must go on (it cannot stop half-way). */
    if ((cmd->flags & CMD_DENYOOM) && scriptOomAtStart && server.cfg.maxmemory && !run->wroteSomething &&
        !(run->flags & SCRIPT_FLAG_ALLOW_OOM))
        return ERR_OOM;
    if (clusterCheck) return clusterCheck(run->caller, cmd, argc, argv);
    return NULL;
}

/* The debugger shows a refused call's error as Redis words it: the bare
 * message for the script checks of its own, the reply text otherwise. */
static void logCheckError(const char *err) {
    if (strncmp(err, "ERR ", 4) == 0) {
        ldbLogError(err + 4);
    } else if (err[0] == '-') {
        ldbLogError(err);
    } else {
        sds e = sdsCatPrintf(sdsEmpty(), "-%s", err);
        ldbLogError(e);
        sdsFree(e);
    }
}

/* Counts a refused call's error in INFO errorstats and total_error_replies
 * (replied to the script's client with no sink: nothing is sent). */
static void countRefusal(Client *fake, const char *err) {
    unsigned flags = fake->flags;
    ReplySink *sink = fake->sink;
    fake->flags |= CLIENT_REPLY_SINK;
    fake->sink = NULL;
    replyError(fake, err);
    dispatchForgetErrors();
    fake->flags = flags;
    fake->sink = sink;
}

static int redisCallGeneric(lua_State *L, int raise) {
    ScriptRun *run = currentRun;
    int argc = lua_gettop(L);
    if (!run) return raiseError(L, "ERR redis.call can only be used while a script runs");
    if (argc == 0) {
        if (ldbLogCalls) ldbLogError("Please specify at least one argument for this redis lib call");
        pushErrorTable(L, "ERR Please specify at least one argument for this redis lib call",
                       strlen("ERR Please specify at least one argument for this redis lib call"));
        return raise ? lua_error(L) : 1;
    }
    sds small[ARGV_STATIC];
    sds *argv = argc <= ARGV_STATIC ? small : xmalloc(sizeof(sds) * (size_t)argc);
    const char *err = NULL;
    if (collectArgs(L, argc, argv, &err) == -1) {
        if (argv != small) xfree(argv);
        if (ldbLogCalls) ldbLogError(strncmp(err, "ERR ", 4) == 0 ? err + 4 : err);
        pushErrorTable(L, err, strlen(err));
        return raise ? lua_error(L) : 1;
    }
    /* The arguments are copied: free their stack slots, so that a call
     * with thousands of them (unpack) still has room for its reply. */
    lua_pop(L, argc);
    if (__builtin_expect(ldbLogCalls, 0)) ldbLogCommand(argc, argv);
    /* Module command filters see a script's commands too (Redis's
     * scriptCall), after the debugger logged them. */
    if (__builtin_expect(dispatchCommandFilter != NULL, 0)) {
        int nargc = argc;
        sds *nv = dispatchCommandFilter(argv, &nargc, NULL);
        if (nv) {
            if (argv != small) xfree(argv);
            argv = nv;
            argc = nargc;
        }
        if (argc == 0) {
            xfree(argv);
            pushErrorTable(L, "ERR Please specify at least one argument for this redis lib call",
                           strlen("ERR Please specify at least one argument for this redis lib call"));
            return raise ? lua_error(L) : 1;
        }
    }
    Command *cmd = commandLookupArgv(argc, argv);
    err = checkScriptCommand(run, cmd, argc, argv);
    if (err) {
        if (ldbLogCalls) logCheckError(err);
        /* A known command refused here counts as rejected, and the error
         * in errorstats at once (even if the script swallows it), as on
         * Redis; the error table says so, so that returning it does not
         * count it again. */
        if (cmd) cmd->stats.rejectedCalls++;
        countRefusal(run->fake, err);
        freeArgs(argv, argc);
        if (argv != small) xfree(argv);
        if (err[0] == '-') err++;
        pushErrorTable(L, err, strlen(err));
        lua_pushboolean(L, 1);
        setSlotField(L, -2, SLOT_ERR_COUNTED);
        return raise ? lua_error(L) : 1;
    }
    Client *fake = run->fake;
    fake->argv = argv;
    fake->argc = argc;
    fake->resp = run->resp;
    /* From the first write command on, the script cannot be killed (even
     * if the write changes nothing). */
    if (cmd->flags & CMD_WRITE) run->wroteSomething = 1;
    /* The reply becomes a Lua value as the command sends it. */
    LuaReplySink sink;
    luaReplySinkInit(&sink, L, run->resp);
    int logged = ldbLogCalls;
    fake->sink = logged ? ldbTeeBegin(&sink.base, run->resp) : &sink.base;
    fake->flags |= CLIENT_REPLY_SINK;
    int mask = effectsSetCallMask(run->replFlags);
    callCommand(fake, cmd);
    effectsSetCallMask(mask);
    fake->flags &= ~CLIENT_REPLY_SINK;
    fake->sink = NULL;
    if (logged) ldbTeeEnd();
    freeArgs(fake->argv, fake->argc); /* the command may have rewritten argv */
    if (fake->argv != small) xfree(fake->argv);
    fake->argv = NULL;
    fake->argc = 0;
    if (luaReplySinkFinish(&sink)) {
        lua_pushboolean(L, 1);
        setSlotField(L, -2, SLOT_ERR_COUNTED);
        if (raise) return lua_error(L);
    }
    return 1;
}

static int redisCall(lua_State *L) { return redisCallGeneric(L, 1); }
static int redisPcall(lua_State *L) { return redisCallGeneric(L, 0); }

static int redisSha1hex(lua_State *L) {
    if (lua_gettop(L) != 1) return raiseError(L, "ERR wrong number of arguments");
    size_t len;
    const char *s = lua_tolstring(L, 1, &len);
    char hex[41];
    sha1Hex(s ? s : "", s ? len : 0, hex);
    lua_pushstring(L, hex);
    return 1;
}

/* error_reply / status_reply: {err=...} / {ok=...}. */
static int replyHelper(lua_State *L, const char *field) {
    if (lua_gettop(L) != 1 || lua_type(L, 1) != LUA_TSTRING) {
        pushErrorTable(L, "ERR wrong number or type of arguments", 37);
        return 1;
    }
    size_t len;
    const char *s = lua_tolstring(L, 1, &len);
    lua_newtable(L);
    if (field[0] == 'o') {
        lua_pushlstring(L, s, len);
    } else {
        /* As a Redis error reply: "-CODE message"; text without a space
         * has no code of its own and gets ERR. */
        if (len && s[0] == '-') s++, len--;
        if (memchr(s, ' ', len)) lua_pushlstring(L, s, len);
        else lua_pushfstring(L, "ERR %s", s);
    }
    lua_setfield(L, -2, field);
    return 1;
}

static int redisErrorReply(lua_State *L) { return replyHelper(L, "err"); }
static int redisStatusReply(lua_State *L) { return replyHelper(L, "ok"); }

static int redisLog(lua_State *L) {
    int argc = lua_gettop(L);
    if (argc < 2) return raiseError(L, "ERR redis.log() requires two arguments or more.");
    if (!lua_isnumber(L, 1)) return raiseError(L, "ERR First argument must be a number (log level).");
    int level = (int)lua_tonumber(L, 1);
    if (level < LL_DEBUG || level > LL_WARNING) return raiseError(L, "ERR Invalid debug level.");
    if (level < server.cfg.loglevel) return 0;
    sds msg = sdsEmpty();
    for (int i = 2; i <= argc; i++) {
        size_t len;
        const char *s = lua_tolstring(L, i, &len);
        if (!s) continue;
        if (i > 2) msg = sdsCatLen(msg, " ", 1);
        msg = sdsCatLen(msg, s, len);
    }
    serverLogRaw(level, msg);
    sdsFree(msg);
    return 0;
}

static int redisSetresp(lua_State *L) {
    ScriptRun *run = currentRun;
    if (lua_gettop(L) != 1) return raiseError(L, "ERR redis.setresp() requires one argument.");
    int resp = (int)lua_tonumber(L, 1);
    if (resp != 2 && resp != 3) return raiseError(L, "ERR RESP version must be 2 or 3.");
    if (run) run->resp = resp;
    return 0;
}

static int redisSetRepl(lua_State *L) {
    if (!currentRun) return raiseError(L, "ERR redis.set_repl can only be called inside a script invocation");
    if (lua_gettop(L) != 1) return raiseError(L, "ERR redis.set_repl() requires two arguments.");
    int flags = (int)lua_tonumber(L, 1);
    if (flags & ~3)
        return raiseError(L, "ERR Invalid replication flags. Use REPL_AOF, REPL_REPLICA, REPL_ALL or REPL_NONE.");
    currentRun->replFlags = flags;
    return 0;
}

static int redisReplicateCommands(lua_State *L) {
    lua_pushboolean(L, 1);
    return 1;
}

static int redisBreakpoint(lua_State *L) { return ldbRedisBreakpoint(L); }

static int redisDebug(lua_State *L) { return ldbRedisDebug(L); }

static int redisAclCheckCmd(lua_State *L) {
    int argc = lua_gettop(L);
    if (argc == 0) return raiseError(L, "ERR Please specify at least one argument for this redis lib call");
    sds small[ARGV_STATIC];
    sds *argv = argc <= ARGV_STATIC ? small : xmalloc(sizeof(sds) * (size_t)argc);
    const char *err = NULL;
    if (collectArgs(L, argc, argv, &err) == -1) {
        if (argv != small) xfree(argv);
        if (ldbLogCalls) ldbLogError(strncmp(err, "ERR ", 4) == 0 ? err + 4 : err);
        return raiseError(L, err);
    }
    Command *cmd = commandLookupArgv(argc, argv);
    /* The permissions of the user running the script, as a call would be
     * checked (a container named alone is checked as itself). */
    int allowed = cmd && (!aclAllowed || !currentRun || aclAllowed(currentRun->caller, cmd, argc, argv));
    freeArgs(argv, argc);
    if (argv != small) xfree(argv);
    if (!cmd) return raiseError(L, "ERR Invalid command passed to redis.acl_check_cmd()");
    lua_pushboolean(L, allowed);
    return 1;
}

static void setNumber(lua_State *L, const char *name, lua_Number v) {
    lua_pushnumber(L, v);
    lua_setfield(L, -2, name);
}

static void setFunction(lua_State *L, const char *name, lua_CFunction fn) {
    lua_pushcfunction(L, fn);
    lua_setfield(L, -2, name);
}

static void registerRedisTable(lua_State *L) {
    lua_newtable(L);
    setFunction(L, "call", redisCall);
    setFunction(L, "pcall", redisPcall);
    setFunction(L, "log", redisLog);
    setFunction(L, "setresp", redisSetresp);
    setFunction(L, "sha1hex", redisSha1hex);
    setFunction(L, "error_reply", redisErrorReply);
    setFunction(L, "status_reply", redisStatusReply);
    setFunction(L, "set_repl", redisSetRepl);
    setFunction(L, "replicate_commands", redisReplicateCommands);
    setFunction(L, "breakpoint", redisBreakpoint);
    setFunction(L, "debug", redisDebug);
    setFunction(L, "acl_check_cmd", redisAclCheckCmd);
    setNumber(L, "LOG_DEBUG", LL_DEBUG);
    setNumber(L, "LOG_VERBOSE", LL_VERBOSE);
    setNumber(L, "LOG_NOTICE", LL_NOTICE);
    setNumber(L, "LOG_WARNING", LL_WARNING);
    setNumber(L, "REPL_NONE", 0);
    setNumber(L, "REPL_AOF", 1);
    setNumber(L, "REPL_SLAVE", 2);
    setNumber(L, "REPL_REPLICA", 2);
    setNumber(L, "REPL_ALL", 3);
    lua_pushstring(L, REDIS_VERSION_STR);
    lua_setfield(L, -2, "REDIS_VERSION");
    setNumber(L, "REDIS_VERSION_NUM", REDIS_VERSION_NUM);
    lua_setglobal(L, "redis");
}

/* Fill the registry's fixed slots (see SLOT_ERR). */
static void initSlots(lua_State *L) {
    if (lua_objlen(L, LUA_REGISTRYINDEX) != 0) {
        serverLog(LL_WARNING, "Lua registry not empty at start: cannot place the engine's slots.");
        exit(1);
    }
    for (int slot = SLOT_ERR; slot <= SLOT_ARGV; slot++) {
        lua_pushstring(L, slotNames[slot - SLOT_ERR]);
        lua_rawseti(L, LUA_REGISTRYINDEX, slot);
    }
    lua_pushcfunction(L, errorHandler);
    lua_rawseti(L, LUA_REGISTRYINDEX, SLOT_ERROR_HANDLER);
    lua_pushboolean(L, 0);
    lua_rawseti(L, LUA_REGISTRYINDEX, SLOT_REAL_GLOBALS);
}

lua_State *luaEngineCreate(void) {
    lua_State *L = luaL_newstate();
    if (!L) return NULL;
    initSlots(L);
    lua_pushlightuserdata(L, &proxiesKey);
    lua_newtable(L);
    lua_newtable(L);
    lua_pushliteral(L, "k");
    lua_setfield(L, -2, "__mode");
    lua_setmetatable(L, -2);
    lua_rawset(L, LUA_REGISTRYINDEX);

    openLib(L, "", luaopen_base);
    openLib(L, LUA_TABLIBNAME, luaopen_table);
    openLib(L, LUA_STRLIBNAME, luaopen_string);
    openLib(L, LUA_MATHLIBNAME, luaopen_math);
    openLib(L, "cjson", luaopen_cjson);
    openLib(L, "struct", luaopen_struct);
    openLib(L, "cmsgpack", luaopen_cmsgpack);
    openLib(L, "bit", luaopen_bit);
    luaPatchBit(L);
    luaCompatLuaJIT(L);
    /* What the sandbox leaves out. */
    static const char *removed[] = {"dofile", "loadfile", "print", "newproxy", "setfenv", "getfenv",
                                    "module", "require", "package", "io", "debug", "jit", NULL};
    for (int i = 0; removed[i]; i++) {
        /* lua-enable-deprecated-api (hidden, off by default) keeps Lua 5.1's
         * getfenv, setfenv and newproxy, as Redis 7.0.15 does. */
        int deprecatedApi = !strcmp(removed[i], "newproxy") || !strcmp(removed[i], "setfenv") ||
                            !strcmp(removed[i], "getfenv");
        if (!(deprecatedApi && luaEnableDeprecatedApi)) removeGlobal(L, removed[i]);
    }
    lua_pushcfunction(L, sandboxLoadstring);
    lua_setglobal(L, "loadstring");
    lua_pushcfunction(L, sandboxLoad);
    lua_setglobal(L, "load");
    lua_pushcfunction(L, sandboxPcall);
    lua_setglobal(L, "pcall");
    lua_pushcfunction(L, sandboxRawset);
    lua_setglobal(L, "rawset");
    lua_pushcfunction(L, sandboxRawget);
    lua_setglobal(L, "rawget");
    lua_getglobal(L, "setmetatable");
    lua_pushcclosure(L, sandboxSetmetatable, 1);
    lua_setglobal(L, "setmetatable");
    lua_pushcfunction(L, sandboxNext);
    lua_pushvalue(L, -1);
    lua_setglobal(L, "next");
    lua_pushcclosure(L, sandboxPairs, 1);
    lua_setglobal(L, "pairs");
    lua_getglobal(L, "math");
    setFunction(L, "random", mathRandom);
    setFunction(L, "randomseed", mathRandomSeed);
    lua_pop(L, 1);
#ifndef CAIRN_LUAJIT
    lua_pushcfunction(L, baseTonumber);
    lua_setglobal(L, "tonumber");
#endif
    lua_newtable(L);
    setFunction(L, "clock", osClock);
    lua_setglobal(L, "os");
    registerRedisTable(L);
    lua_pushcfunction(L, errorHandler);
    lua_setglobal(L, "__redis__err__handler");
    return L;
}

static void watchForget(lua_State *L);

void luaEngineDestroy(lua_State *L) {
    if (!L) return;
    watchForget(L);
    lua_close(L);
}

size_t luaEngineMemory(lua_State *L) {
    if (!L) return 0;
    return (size_t)lua_gc(L, LUA_GCCOUNT, 0) * 1024 + (size_t)lua_gc(L, LUA_GCCOUNTB, 0);
}

/* A new array of the n strings. */
static void pushStringArray(lua_State *L, sds *items, int n) {
    lua_createtable(L, n, 0);
    for (int i = 0; i < n; i++) {
        lua_pushlstring(L, items[i], sdsLen(items[i]));
        lua_rawseti(L, -2, i + 1);
    }
}

/* An in-place table's contents as ScriptArgs keeps them: each string's
 * length (4 bytes) and bytes.  Kept only up to this size in all. */
#define HELD_MAX 1024

/* Does the next entry of a held record (at *p, before end) equal item?
 * Moves *p past that entry; past the end there is none and it does not. */
static int heldTake(const char **p, const char *end, sds item) {
    uint32_t len;
    if (end - *p < 4) return 0;
    memcpy(&len, *p, 4);
    if ((size_t)(end - *p) - 4 < len) {
        *p = end;
        return 0;
    }
    int same = len == sdsLen(item) && memcmp(*p + 4, item, len) == 0;
    *p += 4 + (size_t)len;
    return same;
}

static int heldEquals(sds held, sds *items, int n) {
    if (!held) return 0;
    const char *p = held, *end = held + sdsLen(held);
    for (int i = 0; i < n; i++)
        if (!heldTake(&p, end, items[i])) return 0;
    return p == end;
}

/* Record in *held (reusing its buffer) what the table now holds. */
static void heldSet(sds *held, sds *items, int n) {
    size_t total = 0;
    for (int i = 0; i < n && total <= HELD_MAX; i++) total += 4 + sdsLen(items[i]);
    if (total > HELD_MAX) {
        sdsFree(*held);
        *held = NULL;
        return;
    }
    if (*held) sdsClear(*held);
    else *held = sdsEmpty();
    for (int i = 0; i < n; i++) {
        uint32_t len = (uint32_t)sdsLen(items[i]);
        *held = sdsCatLen(*held, (const char *)&len, 4);
        *held = sdsCatLen(*held, items[i], len);
    }
}

/* The script's upvalue `up` (its KEYS or ARGV) set to the n strings: a new
 * table, or, when the script only reads its elements, the table it has
 * refilled: nothing happens when it already holds them, and only the
 * strings that changed are replaced (no allocation, no garbage). */
static void setArgsUpvalue(lua_State *L, int fn, int up, int inPlace, sds *held, sds *items, int n) {
    if (!inPlace) {
        pushStringArray(L, items, n);
        lua_setupvalue(L, fn, up);
        return;
    }
    if (heldEquals(*held, items, n)) return;
    lua_getupvalue(L, fn, up);
    int old = (int)lua_objlen(L, -1);
    const char *p = *held, *end = *held ? *held + sdsLen(*held) : NULL;
    for (int i = 0; i < n; i++) {
        if (heldTake(&p, end, items[i])) continue;
        lua_pushlstring(L, items[i], sdsLen(items[i]));
        lua_rawseti(L, -2, i + 1);
    }
    for (int i = old; i > n; i--) {
        lua_pushnil(L);
        lua_rawseti(L, -2, i);
    }
    lua_pop(L, 1);
    heldSet(held, items, n);
}

void luaEngineSetKeysArgv(lua_State *L, ScriptArgs *how, sds *keys, int numkeys, sds *args, int numargs) {
    if (how && how->upvalues) {
        int fn = lua_gettop(L);
        if (how->keysUpvalue)
            setArgsUpvalue(L, fn, how->keysUpvalue, how->keysInPlace, &how->keysHeld, keys, numkeys);
        if (how->argvUpvalue)
            setArgsUpvalue(L, fn, how->argvUpvalue, how->argvInPlace, &how->argvHeld, args, numargs);
        return;
    }
    pushSlot(L, SLOT_REAL_GLOBALS);
    if (!lua_istable(L, -1)) {
        lua_pop(L, 1);
        lua_pushvalue(L, LUA_GLOBALSINDEX);
    }
    pushSlot(L, SLOT_KEYS);
    pushStringArray(L, keys, numkeys);
    lua_rawset(L, -3);
    pushSlot(L, SLOT_ARGV);
    pushStringArray(L, args, numargs);
    lua_rawset(L, -3);
    lua_pop(L, 1);
}

/* ------------------------------------------------------------------ */
/* Running. */

#define HOOK_INSTRUCTIONS 100000

/* While a script is past busy-reply-threshold the server still reads its
 * clients: they get BUSY (processCommand asks scriptBusyError) except for the commands
 * allowed then (SCRIPT KILL, FUNCTION KILL, SHUTDOWN NOSAVE...).  The
 * caller itself is not read while it runs (net.c skips executing clients). */
static void processEventsWhileBusy(void) {
    /* Clients read in the same batch as the script's caller: their bytes
     * are no longer in the socket, so the poll would not report them. */
    netProcessBatchedReads();
    eventProcessFileEvents(server.loop, 0);
    netHandlePendingWrites();
    netFreeClosingClients();
}

static void hookWhileRunning(lua_State *L, lua_Debug *ar) {
    (void)ar;
    ScriptRun *run = currentRun;
    if (!run) return;
    long long elapsed = mstime() - run->startMs;
    if (!run->timedOut && elapsed >= server.cfg.busyReplyThreshold) {
        run->timedOut = 1;
        serverLog(LL_WARNING,
                  "Slow script detected: still in execution after %lld milliseconds. You can try killing the "
                  "script using the %s command. Script name is: %s.",
                  elapsed, run->isFunction ? "FUNCTION KILL" : "SCRIPT KILL", run->name);
    }
    if (run->timedOut) processEventsWhileBusy();
    if (run->killed) {
        /* Redis 7.0 names SCRIPT KILL here for FUNCTION KILL too. */
        serverLog(LL_WARNING, "Lua script killed by user with SCRIPT KILL.");
        /* Fire at every line from now on: a pcall in the script cannot
         * swallow the kill. */
        luaEngineSetHook(L, hookWhileRunning, LUA_MASKLINE, 0);
        raiseError(L, "ERR Script killed by user with SCRIPT KILL...");
    }
}

#ifdef CAIRN_LUAJIT
/* The time limit without a per-instruction cost.  A count hook makes
 * LuaJIT's interpreter dispatch every instruction through a hook check
 * (~240 instructions of a rate limiter's ~7,000), so on LuaJIT no hook is
 * set while scripts run as they should.  A watchdog thread looks every
 * WATCH_MS at the number of the run in progress; a run it sees twice has
 * lasted at least that long, and it sets the count hook on the run's VM,
 * from then on the same as on Lua 5.1.  LuaJIT supports setting hooks from
 * outside the running thread (its own profiler does, from a signal handler
 * or a timer thread: lj_dispatch_update only swaps dispatch table entries,
 * each valid alone), and its hooks belong to the whole VM, so coroutines
 * and loadstring chunks are covered.  The end of the run clears the hook.
 * The lock keeps the watchdog's lua_sethook away from the main thread's
 * (every other hook is set through luaEngineSetHook) and from a VM being
 * closed; a run takes it only when a hook was set. */
#include <pthread.h>
#include <stdatomic.h>

#define WATCH_MS 10
#define WATCH_IDLE_TICKS 100 /* no run begun for this many looks: sleep */

static struct {
    pthread_mutex_t lock;
    pthread_cond_t wake;
    pthread_once_t once;
    _Atomic unsigned long run;   /* the run in progress, 0 if none */
    _Atomic unsigned long begun; /* runs begun */
    _Atomic(lua_State *) L;      /* the VM of the run in progress */
    _Atomic int sleeping;        /* the watchdog waits for wake */
    _Atomic int anyArmed;
    lua_State *armed;            /* the VM whose hook the watchdog set (lock) */
} watch = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, PTHREAD_ONCE_INIT, 0, 0, NULL, 0, 0, NULL};

/* With no script for a while the watchdog stops looking until a run
 * begins.  watchBegin stores the run, then reads sleeping; the watchdog
 * stores sleeping, then reads the run: one of them sees the other's store,
 * so a run never starts unwatched. */
static void watchIdle(void) {
    pthread_mutex_lock(&watch.lock);
    atomic_store(&watch.sleeping, 1);
    while (atomic_load(&watch.sleeping) && atomic_load(&watch.run) == 0)
        pthread_cond_wait(&watch.wake, &watch.lock);
    atomic_store(&watch.sleeping, 0);
    pthread_mutex_unlock(&watch.lock);
}

static void *watchdogMain(void *arg) {
    (void)arg;
    unsigned long seen = 0, begun = 0;
    int idle = 0;
    struct timespec ts = {0, WATCH_MS * 1000000L};
    for (;;) {
        nanosleep(&ts, NULL);
        unsigned long run = atomic_load(&watch.run), now = atomic_load(&watch.begun);
        idle = now == begun && run == 0 ? idle + 1 : 0;
        begun = now;
        if (idle >= WATCH_IDLE_TICKS) {
            watchIdle();
            idle = 0;
            seen = 0;
            continue;
        }
        if (run == 0 || run != seen) {
            seen = run;
            continue;
        }
        pthread_mutex_lock(&watch.lock);
        lua_State *L = atomic_load(&watch.L);
        if (atomic_load(&watch.run) == run && L && !watch.armed) {
            lua_sethook(L, hookWhileRunning, LUA_MASKCOUNT, HOOK_INSTRUCTIONS);
            watch.armed = L;
            atomic_store(&watch.anyArmed, 1);
        }
        pthread_mutex_unlock(&watch.lock);
    }
    return NULL;
}

static void watchStartThread(void) {
    if (startDetachedThread(watchdogMain, NULL) != 0)
        serverLog(LL_WARNING, "Can't create the script watchdog thread: scripts have no time limit.");
}

static void watchDisarm(void);

static void watchBegin(lua_State *L) {
    pthread_once(&watch.once, watchStartThread);
    /* A hook the watchdog set just as the last run ended (and which a
     * function library's load may have replaced since): start clean. */
    watchDisarm();
    atomic_store(&watch.L, L);
    /* Only this thread writes begun. */
    unsigned long run = atomic_load_explicit(&watch.begun, memory_order_relaxed) + 1;
    atomic_store_explicit(&watch.begun, run, memory_order_relaxed);
    atomic_store(&watch.run, run);
    if (atomic_load(&watch.sleeping)) {
        pthread_mutex_lock(&watch.lock);
        atomic_store(&watch.sleeping, 0);
        pthread_cond_signal(&watch.wake);
        pthread_mutex_unlock(&watch.lock);
    }
}

/* Clear the hook the watchdog set (if it set one). */
static void watchDisarm(void) {
    if (!atomic_load(&watch.anyArmed)) return;
    pthread_mutex_lock(&watch.lock);
    if (watch.armed) lua_sethook(watch.armed, NULL, 0, 0);
    watch.armed = NULL;
    atomic_store(&watch.anyArmed, 0);
    pthread_mutex_unlock(&watch.lock);
}

static void watchEnd(void) {
    atomic_store(&watch.run, 0);
    watchDisarm();
}

void luaEngineSetHook(lua_State *L, lua_Hook f, int mask, int count) {
    pthread_mutex_lock(&watch.lock);
    lua_sethook(L, f, mask, count);
    pthread_mutex_unlock(&watch.lock);
}

static void watchForget(lua_State *L) {
    pthread_mutex_lock(&watch.lock);
    if (atomic_load(&watch.L) == L) atomic_store(&watch.L, NULL);
    if (watch.armed == L) {
        watch.armed = NULL;
        atomic_store(&watch.anyArmed, 0);
    }
    pthread_mutex_unlock(&watch.lock);
}
#else
void luaEngineSetHook(lua_State *L, lua_Hook f, int mask, int count) { lua_sethook(L, f, mask, count); }

static void watchForget(lua_State *L) { (void)L; }
#endif

static void replyScriptError(lua_State *L, ScriptRun *run) {
    Client *c = run->caller;
    if (lua_type(L, -1) != LUA_TTABLE) {
        const char *msg = lua_tostring(L, -1);
        replyErrorFormat(c, "ERR Error running script (call to %s): @%s", run->name, msg ? msg : "");
        return;
    }
    lua_getfield(L, -1, "err");
    lua_getfield(L, -2, "source");
    lua_getfield(L, -3, "line");
    const char *msg = lua_tostring(L, -3);
    const char *source = lua_tostring(L, -2);
    const char *line = lua_tostring(L, -1);
    sds e = sdsNewLen("-", 1);
    if (msg) e = sdsCat(e, msg);
    else e = sdsCat(e, "ERR unknown error");
    if (source && line) e = sdsCatPrintf(e, " script: %s, on %s:%s.", run->name, source, line);
    lua_pop(L, 3);
    if (errorCounted(L, -1)) replyErrorLenNoStats(c, e, sdsLen(e));
    else replyErrorLen(c, e, sdsLen(e));
    sdsFree(e);
}

void luaEngineRun(lua_State *L, ScriptRun *run, int nargs) {
    int base = lua_gettop(L) - nargs; /* the function */
    pushSlot(L, SLOT_ERROR_HANDLER);
    lua_insert(L, base);
    ScriptRun *outer = currentRun;
    currentRun = run;
    run->startMs = mstime();
    if (!run->resp) run->resp = 2;
    run->replFlags = EFFECT_ALL; /* redis.set_repl may narrow it */
#ifdef CAIRN_LUAJIT
    if (!outer) watchBegin(L);
#else
    /* The hook stays set between runs (it does nothing while no script
     * runs). */
    if (run->debugHook) lua_sethook(L, run->debugHook, LUA_MASKLINE | LUA_MASKCOUNT, 100000);
    else if (lua_gethook(L) != hookWhileRunning || lua_gethookmask(L) != LUA_MASKCOUNT)
        lua_sethook(L, hookWhileRunning, LUA_MASKCOUNT, HOOK_INSTRUCTIONS);
#endif
    int rc = lua_pcall(L, nargs, 1, base);
#ifndef CAIRN_LUAJIT
    if (run->debugHook) lua_sethook(L, hookWhileRunning, LUA_MASKCOUNT, HOOK_INSTRUCTIONS);
#endif
#ifdef CAIRN_LUAJIT
    if (!outer) watchEnd();
#endif
    currentRun = outer;
    if (run->timedOut) serverLog(LL_WARNING, "Slow script finished after %lld milliseconds.", mstime() - run->startMs);
    if (rc == 0) luaToReply(L, run->caller, run->resp);
    else {
        replyScriptError(L, run);
        lua_pop(L, 1);
    }
    lua_settop(L, base - 1);
    /* Garbage is left to Lua's incremental collector, which steps as the
     * heap grows.  An explicit LUA_GCSTEP(50) every 50 runs, as Redis does,
     * collects until 50 KB are freed or the cycle ends; short scripts free
     * far less, so each step was a whole cycle that marked every library
     * table again, ~1,000 instructions per run of the rate limiter. */
}

/* ------------------------------------------------------------------ */
/* BUSY and KILL. */

static const char *moduleBusyErr; /* scriptSetModuleBusy */

void scriptSetModuleBusy(const char *err) { moduleBusyErr = err; }

const char *scriptBusyError(void) {
    if (!currentRun || !currentRun->timedOut) return moduleBusyErr;
    return currentRun->isFunction ? ERR_BUSY_FUNCTION : ERR_BUSY_EVAL;
}

void scriptKill(Client *c, int isEval) {
    ScriptRun *run = currentRun;
    if (!run) {
        replyError(c, "NOTBUSY No scripts in execution right now.");
        return;
    }
    if (run->wroteSomething) {
        replyError(c, "UNKILLABLE Sorry the script already executed write commands against the dataset. You can "
                      "either wait the script termination or kill the server in a hard way using the SHUTDOWN "
                      "NOSAVE command.");
        return;
    }
    if (isEval && run->isFunction) {
        replyError(c, ERR_BUSY_FUNCTION);
        return;
    }
    if (!isEval && !run->isFunction) {
        replyError(c, ERR_BUSY_EVAL);
        return;
    }
    run->killed = 1;
    replyOk(c);
}


/* --- flags before a script runs (maxmemory, and whatever else reads a
 * command's write / deny-oom flags before it runs) --- */

int scriptOomAtStart;
int scriptAllowNoscriptCommands;

uint64_t scriptFlagsToCommandFlags(uint64_t cmdFlags, unsigned scriptFlags) {
    if (scriptFlags & SCRIPT_FLAG_EVAL_COMPAT) return cmdFlags;
    cmdFlags &= ~(CMD_STALE | CMD_DENYOOM | CMD_WRITE | CMD_MAY_REPLICATE);
    if (!(scriptFlags & (SCRIPT_FLAG_ALLOW_OOM | SCRIPT_FLAG_NO_WRITES))) cmdFlags |= CMD_DENYOOM;
    if (!(scriptFlags & SCRIPT_FLAG_NO_WRITES)) cmdFlags |= CMD_WRITE;
    if (scriptFlags & SCRIPT_FLAG_ALLOW_STALE) cmdFlags |= CMD_STALE;
    return cmdFlags;
}

uint64_t scriptCommandFlags(Client *c, const Command *cmd) {
    if (!(cmd->flags & CMD_SCRIPT_FLAGS)) return cmd->flags;
    if (cmd->name[0] == 'f') return fcallCommandFlags(c, cmd->flags);
    return evalCommandFlags(c, cmd->flags, strncmp(cmd->name, "evalsha", 7) == 0);
}

int scriptRefuseOomOrReply(Client *c, unsigned scriptFlags) {
    if (scriptFlags & (SCRIPT_FLAG_EVAL_COMPAT | SCRIPT_FLAG_ALLOW_OOM | SCRIPT_FLAG_NO_WRITES)) return 0;
    if (!server.cfg.maxmemory || !scriptOomAtStart) return 0;
    replyError(c, ERR_OOM);
    return -1;
}

/* ------------------------------------------------------------------------ */
/* Configuration                                                             */
/* ------------------------------------------------------------------------ */

/* busy-reply-threshold stays in server.cfg: the debugger (ldb.c) reads it
 * too. */
static ConfigDef scriptConfig[] = {
    CONFIG_LL("busy-reply-threshold", "lua-time-limit", 0, server.cfg.busyReplyThreshold, 0, LONG_MAX, "5000",
              .rank = CONFIG_RANK_INTROSPECTION + 7),
    CONFIG_BOOL("lua-enable-deprecated-api", NULL, CF_HIDDEN | CF_IMMUTABLE, luaEnableDeprecatedApi, "no",
                .rank = CONFIG_RANK_HIDDEN),
};

void scriptRegisterConfig(void) { configRegister(scriptConfig, CONFIG_COUNT_OF(scriptConfig)); }
