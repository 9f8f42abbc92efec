/* engine.h -- the Lua engine shared by EVAL scripts (eval.c) and
 * functions (function.c).  Internal to src/script: nothing outside this
 * folder includes Lua headers.
 *
 * A VM made by luaEngineCreate has the libraries Redis 7.0 scripts see
 * (base, table, string, math, cjson, bit, struct, cmsgpack), the `redis`
 * table, and after luaEngineLockGlobals the sandbox: the globals and every
 * library table are read-only, reading an unknown global is an error.
 *
 * A call runs through luaEngineRun: it records the running script (for
 * BUSY, SCRIPT KILL / FUNCTION KILL and the checks redis.call makes), runs
 * the function under the time-limit hook, and turns the result or the
 * error into the caller's reply. */
#ifndef CAIRN_SCRIPT_ENGINE_H
#define CAIRN_SCRIPT_ENGINE_H

#include <lua.h>
#include <stdint.h>

#include "core/client.h"

/* What every call needs, at fixed integer slots of the registry: the field
 * names of reply tables, interned once instead of at each use, the error
 * handler and the real globals.  luaEngineCreate fills them before anything
 * takes a luaL_ref, and no slot is ever nil, so references (handed out past
 * the end of the registry's array) never land on them. */
enum {
    SLOT_ERR = 1,
    SLOT_OK,
    SLOT_DOUBLE,
    SLOT_BIG_NUMBER,
    SLOT_MAP,
    SLOT_SET,
    SLOT_VERBATIM,
    SLOT_ERR_COUNTED,
    SLOT_KEYS,
    SLOT_ARGV,
    SLOT_ERROR_HANDLER,
    SLOT_REAL_GLOBALS, /* false until luaEngineLockGlobals */
};

static inline void pushSlot(lua_State *L, int slot) { lua_rawgeti(L, LUA_REGISTRYINDEX, slot); }

/* t[name of slot] = the value on top (popped); t at idx < 0 before the value. */
static inline void setSlotField(lua_State *L, int idx, int slot) {
    pushSlot(L, slot);
    lua_insert(L, -2);
    lua_rawset(L, idx - 1);
}

/* Script flags: shebang `flags=` (EVAL) and register_function flags. */
#define SCRIPT_FLAG_NO_WRITES (1u << 0)
#define SCRIPT_FLAG_ALLOW_OOM (1u << 1)
#define SCRIPT_FLAG_ALLOW_STALE (1u << 2)
#define SCRIPT_FLAG_NO_CLUSTER (1u << 3)
#define SCRIPT_FLAG_ALLOW_CROSS_SLOT (1u << 4)
#define SCRIPT_FLAG_EVAL_COMPAT (1u << 5) /* EVAL script without shebang */

/* Parse one flag name ("no-writes", ...): its bit, or 0 if unknown. */
unsigned scriptFlagFromName(const char *name, size_t len);

/* A new VM with the libraries and the redis table (not yet locked). */
lua_State *luaEngineCreate(void);
/* Compile a script or library body as luaL_loadbuffer does (same return
 * code, the function or the error message pushed).  On LuaJIT a body that
 * returns library calls in tail position is compiled rewritten
 * (tailcall.c), so those calls keep the script's frame as on Lua 5.1;
 * compile errors always come from the text as given. */
int luaEngineLoad(lua_State *L, const char *body, size_t len, const char *chunk);
/* How a compiled EVAL script gets KEYS and ARGV.  As globals (all zero),
 * or, on LuaJIT when the rewrite (tailcall.c) passed them in, through the
 * function's upvalues (upvalues set: the globals are then left alone): the
 * upvalue numbers (0: the script does not use that one) and whether the
 * script only reads elements, so that the table can be refilled in place. */
typedef struct ScriptArgs {
    unsigned char upvalues;
    unsigned char keysUpvalue, argvUpvalue;
    unsigned char keysInPlace, argvInPlace;
    /* What the in-place tables hold as the last run left them (NULL:
     * unknown), so that unchanged arguments cost no Lua call.  Kept by
     * the caller's cache; free with luaEngineArgsRelease. */
    sds keysHeld, argvHeld;
} ScriptArgs;

/* luaEngineLoad for an EVAL script: on LuaJIT the rewrite also passes in
 * as upvalues the globals the script reads (library tables and functions,
 * KEYS and ARGV); *args says how to set KEYS and ARGV for each run. */
int luaEngineLoadScript(lua_State *L, const char *body, size_t len, const char *chunk, ScriptArgs *args);
/* ScriptArgs in 15 bits and back (what the tables hold is not packed:
 * unknown), for a cache that stores a number. */
unsigned luaEngineArgsPack(const ScriptArgs *a);
void luaEngineArgsUnpack(unsigned packed, ScriptArgs *a);
void luaEngineArgsRelease(ScriptArgs *a);
/* Make globals and library tables read-only; unknown globals error. */
void luaEngineLockGlobals(lua_State *L);
void luaEngineDestroy(lua_State *L);
/* lua_sethook, kept apart from the LuaJIT engine's watchdog thread (which
 * sets the time-limit hook on a run that lasts): every hook the server
 * sets goes through here. */
void luaEngineSetHook(lua_State *L, lua_Hook f, int mask, int count);
/* Bytes the Lua allocator holds for L (used_memory_lua / _vm). */
size_t luaEngineMemory(lua_State *L);

/* A script or function being run. */
typedef struct ScriptRun {
    Client *caller;       /* the client that sent EVAL/FCALL */
    Client *fake;         /* the pseudo-client redis.call runs commands as */
    const char *name;     /* sha (EVAL) or function name, for error texts */
    const char *source;   /* "user_script" or "user_function" (chunk name) */
    int isFunction;
    unsigned flags;       /* SCRIPT_FLAG_* */
    int readOnly;         /* EVAL_RO / EVALSHA_RO / FCALL_RO */
    long long startMs;
    int killed;           /* SCRIPT KILL / FUNCTION KILL asked */
    int wroteSomething;   /* a write command ran: UNKILLABLE */
    int timedOut;         /* passed busy-reply-threshold */
    int resp;             /* redis.setresp: 2 or 3 */
    int replFlags;        /* redis.set_repl: where the calls' effects go (EFFECT_*) */
    lua_Hook debugHook;   /* SCRIPT DEBUG: run under this line hook (ldb.c) */
} ScriptRun;

/* Set KEYS and ARGV for a run of the function on top of the stack, as how
 * says (NULL: as globals, past the sandbox; its record of what in-place
 * tables hold is updated), to arrays of the given strings (borrowed). */
void luaEngineSetKeysArgv(lua_State *L, ScriptArgs *how, sds *keys, int numkeys, sds *args, int numargs);

/* A command's flags for a script with these SCRIPT_FLAG_*: a script with a
 * shebang states whether it writes (and so denies OOM) itself; a script
 * without one keeps the command's. */
uint64_t scriptFlagsToCommandFlags(uint64_t cmdFlags, unsigned scriptFlags);
/* The per-command flags of EVAL* (bySha: EVALSHA*) and FCALL* for the
 * script c names (the command's own when it names none). */
uint64_t evalCommandFlags(Client *c, uint64_t cmdFlags, int bySha);
uint64_t fcallCommandFlags(Client *c, uint64_t cmdFlags);
/* A script with flags that may write (neither allow-oom nor no-writes)
 * is refused before it runs when the server was out of memory as its
 * command began: replies -OOM and returns -1; else 0. */
int scriptRefuseOomOrReply(Client *c, unsigned scriptFlags);

/* The running script, or NULL. */
ScriptRun *scriptCurrentRun(void);

/* Run the function below the nargs arguments on L's stack (both popped):
 * the reply (or the error, formatted as Redis 7.0 formats it) goes to
 * run->caller. */
void luaEngineRun(lua_State *L, ScriptRun *run, int nargs);

#endif
