/* function_lua.c -- the Lua side of functions (see function.h): the
 * functions VM, the environment library code runs in, and
 * redis.register_function.
 *
 * Functions have their own VM, made by luaEngineCreate like EVAL's, with
 * its globals locked.  Every library chunk runs with one shared
 * environment table, `env`, that stays empty; its metatable decides what a
 * global name means:
 *   - while a library loads, `loadMeta`: names resolve in `loadGlobals`,
 *     which holds only `redis` -- a table with register_function, log, the
 *     LOG_* levels and the version -- and any other name, global or field of
 *     that redis table, is an error ("Script attempted to access
 *     nonexistent global variable");
 *   - at all other times, `runMeta`: names resolve in the VM's real
 *     globals, so a library's functions (and the local helpers they call)
 *     see the full sandbox when FCALL runs them.
 * Both metatables refuse assignment ("Attempt to modify a readonly table"),
 * and so does the load-time redis table (an empty proxy over the real one).
 * Loads never nest and nothing runs while one is in progress, so a single
 * shared `env` switched between the two is enough.
 *
 * A load runs under its own time limit (LOAD_TIMEOUT_MS), checked by a
 * count hook.  Errors raised here carry no "file:line:" prefix (Redis's
 * texts do not have one); the load error reply prefixes "ERR ". */
#include <lauxlib.h>
#include <lua.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "ds/util.h"
#include "script/engine.h"
#include "script/function.h"

#define LOAD_TIMEOUT_MS 500
#define LOAD_HOOK_INSTRUCTIONS 100000

static lua_State *vmL;                      /* the functions VM, NULL until first used */
static Client *fnClient;                    /* the pseudo-client redis.call runs as */
static int envRef, loadMetaRef, runMetaRef; /* registry references in vmL */
static FunctionLib *loading;                /* the library being loaded, or NULL */
static long long loadStartMs;

/* Raises msg as a Lua error without a position prefix. */
static int raise(lua_State *L, const char *msg) {
    lua_pushstring(L, msg);
    return lua_error(L);
}

static int readonlyError(lua_State *L) { return luaL_error(L, "Attempt to modify a readonly table"); }

static int missingGlobal(lua_State *L) {
    const char *name = lua_tostring(L, 2);
    return luaL_error(L, "Script attempted to access nonexistent global variable '%s'", name ? name : "?");
}

/* Replaces the value on top (a table or function) by a metatable that
 * uses it as __index and refuses assignment. */
static void metaOver(lua_State *L) {
    lua_createtable(L, 0, 2);
    lua_insert(L, -2);
    lua_setfield(L, -2, "__index");
    lua_pushcfunction(L, readonlyError);
    lua_setfield(L, -2, "__newindex");
}

/* Sets the strict metatable (unknown names are errors) on the table on top. */
static void makeStrict(lua_State *L) {
    lua_pushcfunction(L, missingGlobal);
    metaOver(L);
    lua_setmetatable(L, -2);
}

/* --- redis.register_function --- */

/* Stack slots register_function fills, above its own arguments. */
typedef struct RegisterArgs {
    int name, callback, desc; /* stack indexes; the value is nil when absent */
    unsigned flags;
} RegisterArgs;

static void readFlags(lua_State *L, int idx, unsigned *flags) {
    if (!lua_istable(L, idx))
        raise(L, "flags argument to redis.register_function must be a table representing function flags");
    for (int i = 1;; i++) {
        lua_rawgeti(L, idx, i);
        if (lua_isnil(L, -1)) break;
        size_t len;
        const char *s = lua_isstring(L, -1) ? lua_tolstring(L, -1, &len) : NULL;
        unsigned bit = s ? scriptFlagFromName(s, len) : 0;
        if (!bit || bit == SCRIPT_FLAG_EVAL_COMPAT) raise(L, "unknown flag given");
        *flags |= bit;
        lua_pop(L, 1);
    }
    lua_pop(L, 1);
}

/* The named form: redis.register_function{function_name=..., callback=...,
 * flags={...}, description=...}. */
static void readNamedArgs(lua_State *L, RegisterArgs *a) {
    lua_pushnil(L);
    while (lua_next(L, 1)) {
        const char *key = lua_type(L, -2) == LUA_TSTRING ? lua_tostring(L, -2) : "";
        if (strcmp(key, "function_name") == 0) {
            if (!lua_isstring(L, -1))
                raise(L, "function_name argument given to redis.register_function must be a string");
            lua_pushvalue(L, -1);
            lua_replace(L, a->name);
        } else if (strcmp(key, "callback") == 0) {
            if (!lua_isfunction(L, -1))
                raise(L, "callback argument given to redis.register_function must be a function");
            lua_pushvalue(L, -1);
            lua_replace(L, a->callback);
        } else if (strcmp(key, "description") == 0) {
            if (!lua_isstring(L, -1))
                raise(L, "description argument given to redis.register_function must be a string");
            lua_pushvalue(L, -1);
            lua_replace(L, a->desc);
        } else if (strcmp(key, "flags") == 0) {
            readFlags(L, lua_gettop(L), &a->flags);
        } else {
            raise(L, "unknown argument given to redis.register_function");
        }
        lua_pop(L, 1);
    }
    if (lua_isnil(L, a->name)) raise(L, "redis.register_function must get a function name argument");
    if (lua_isnil(L, a->callback)) raise(L, "redis.register_function must get a callback argument");
}

static void readPositionalArgs(lua_State *L, RegisterArgs *a) {
    if (!lua_isstring(L, 1)) raise(L, "first argument to redis.register_function must be a string");
    if (!lua_isfunction(L, 2)) raise(L, "second argument to redis.register_function must be a function");
    lua_pushvalue(L, 1);
    lua_replace(L, a->name);
    lua_pushvalue(L, 2);
    lua_replace(L, a->callback);
}

static int registerFunction(lua_State *L) {
    if (!loading) return raise(L, "redis.register_function can only be called on FUNCTION LOAD command");
    int argc = lua_gettop(L);
    if (argc == 1 && !lua_istable(L, 1))
        return raise(L, "calling redis.register_function with a single argument is only applicable to Lua "
                        "table (representing named arguments).");
    if (argc != 1 && argc != 2) return raise(L, "wrong number of arguments to redis.register_function");
    RegisterArgs a = {argc + 1, argc + 2, argc + 3, 0};
    lua_settop(L, argc + 3);
    if (argc == 1)
        readNamedArgs(L, &a);
    else
        readPositionalArgs(L, &a);
    size_t len, descLen = 0;
    const char *name = lua_tolstring(L, a.name, &len);
    const char *desc = lua_isnil(L, a.desc) ? NULL : lua_tolstring(L, a.desc, &descLen);
    lua_pushvalue(L, a.callback);
    int ref = luaL_ref(L, LUA_REGISTRYINDEX);
    const char *err;
    if (functionLibAdd(loading, name, len, desc, descLen, a.flags, ref, &err) < 0) {
        luaL_unref(L, LUA_REGISTRYINDEX, ref);
        return raise(L, err);
    }
    return 0;
}

/* --- the VM --- */

/* Pushes the redis table library code sees while it loads. */
static void pushLoadRedis(lua_State *L) {
    static const char *const copied[] = {"log",         "LOG_DEBUG",     "LOG_VERBOSE",      "LOG_NOTICE",
                                         "LOG_WARNING", "REDIS_VERSION", "REDIS_VERSION_NUM"};
    lua_getglobal(L, "redis");
    lua_createtable(L, 0, 8);
    for (size_t i = 0; i < sizeof(copied) / sizeof(copied[0]); i++) {
        lua_getfield(L, -2, copied[i]);
        lua_setfield(L, -2, copied[i]);
    }
    lua_pushcfunction(L, registerFunction);
    lua_setfield(L, -2, "register_function");
    makeStrict(L);
    /* Library code sees an always-empty proxy reading through to it, so
     * even the names it has cannot be reassigned for the loads after. */
    lua_newtable(L);
    lua_insert(L, -2);
    metaOver(L);
    lua_setmetatable(L, -2);
    lua_remove(L, -2);
}

static lua_State *vm(void) {
    if (vmL) return vmL;
    lua_State *L = luaEngineCreate();
    if (!L) {
        serverLog(LL_WARNING, "Failed creating the Lua VM for functions.");
        exit(1);
    }
    luaEngineLockGlobals(L);
    lua_createtable(L, 0, 1); /* loadGlobals */
    pushLoadRedis(L);
    lua_setfield(L, -2, "redis");
    makeStrict(L);
    metaOver(L); /* loadMeta */
    loadMetaRef = luaL_ref(L, LUA_REGISTRYINDEX);
    lua_pushvalue(L, LUA_GLOBALSINDEX);
    metaOver(L);     /* runMeta */
    lua_newtable(L); /* env */
    lua_pushvalue(L, -2);
    lua_setmetatable(L, -2);
    envRef = luaL_ref(L, LUA_REGISTRYINDEX);
    runMetaRef = luaL_ref(L, LUA_REGISTRYINDEX);
    vmL = L;
    if (!fnClient) { /* with the first VM: client ids 1 and 2 are the scripts', as in Redis */
        fnClient = clientCreateFake();
        fnClient->flags |= CLIENT_LUA;
    }
    return L;
}

/* Switches env to the metatable at registry reference ref. */
static void setEnvMeta(lua_State *L, int ref) {
    lua_rawgeti(L, LUA_REGISTRYINDEX, envRef);
    lua_rawgeti(L, LUA_REGISTRYINDEX, ref);
    lua_setmetatable(L, -2);
    lua_pop(L, 1);
}

static void loadTimeoutHook(lua_State *L, lua_Debug *ar) {
    (void)ar;
    if (mstime() - loadStartMs > LOAD_TIMEOUT_MS) raise(L, "FUNCTION LOAD timeout");
}

/* The text of the error value on top of L: a string, or the `err` field of
 * an error table.  Returns NULL for anything else. */
static const char *errorText(lua_State *L) {
    if (lua_type(L, -1) == LUA_TSTRING || lua_type(L, -1) == LUA_TNUMBER) return lua_tostring(L, -1);
    if (lua_istable(L, -1)) {
        lua_getfield(L, -1, "err");
        const char *s = lua_isstring(L, -1) ? lua_tostring(L, -1) : NULL;
        lua_pop(L, 1); /* the table still holds the string */
        return s;
    }
    return NULL;
}

int functionLuaLoad(FunctionLib *lib, const char *body, size_t len, sds *err) {
    lua_State *L = vm();
    if (luaEngineLoad(L, body, len, "@user_function") != 0) {
        const char *msg = lua_tostring(L, -1);
        *err = sdsCatPrintf(sdsEmpty(), "ERR Error compiling function: %s", msg ? msg : "?");
        lua_pop(L, 1);
        return -1;
    }
    lua_rawgeti(L, LUA_REGISTRYINDEX, envRef);
    lua_setfenv(L, -2);
    setEnvMeta(L, loadMetaRef);
    loading = lib;
    loadStartMs = mstime();
    luaEngineSetHook(L, loadTimeoutHook, LUA_MASKCOUNT, LOAD_HOOK_INSTRUCTIONS);
    int rc = lua_pcall(L, 0, 0, 0);
    luaEngineSetHook(L, NULL, 0, 0);
    loading = NULL;
    setEnvMeta(L, runMetaRef);
    if (rc != 0) {
        const char *msg = errorText(L);
        *err = sdsCatPrintf(sdsEmpty(), "ERR Error registering functions: %s%s",
                            lua_istable(L, -1) ? "" : "ERR ", msg ? msg : "unknown error");
        lua_pop(L, 1);
        return -1;
    }
    return 0;
}

void functionLuaRelease(FunctionInfo *f) {
    if (vmL) luaL_unref(vmL, LUA_REGISTRYINDEX, f->callback);
}

/* Pushes a table of c->argv[from..from+n). */
static void pushArgv(lua_State *L, Client *c, int from, int n) {
    lua_createtable(L, n, 0);
    for (int i = 0; i < n; i++) {
        lua_pushlstring(L, c->argv[from + i], sdsLen(c->argv[from + i]));
        lua_rawseti(L, -2, i + 1);
    }
}

void functionLuaCall(Client *c, FunctionInfo *f, int numkeys, int readOnly) {
    lua_State *L = vm();
    lua_rawgeti(L, LUA_REGISTRYINDEX, f->callback);
    pushArgv(L, c, 3, numkeys);
    pushArgv(L, c, 3 + numkeys, c->argc - 3 - numkeys);
    fnClient->db = c->db;
    fnClient->resp = 2;
    ScriptRun run = {
        .caller = c,
        .fake = fnClient,
        .name = f->name,
        .source = "user_function",
        .isFunction = 1,
        .flags = f->flags,
        .readOnly = readOnly,
        .resp = 2,
    };
    luaEngineRun(L, &run, 2);
}

void functionLuaReset(void) {
    if (vmL) luaEngineDestroy(vmL);
    vmL = NULL;
    (void)vm();
}

void functionLuaCreate(void) { (void)vm(); }

size_t functionLuaMemory(void) { return vmL ? luaEngineMemory(vmL) : 0; }
