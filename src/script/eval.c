/* eval.c -- EVAL, EVALSHA, EVAL_RO, EVALSHA_RO and SCRIPT: the script
 * cache and the commands that fill and run it.
 *
 * The cache maps the SHA-1 of a script's body (40 lowercase hex digits)
 * to its compiled function, kept in a registry table of the eval VM, and
 * to the flags of its shebang line (`#!lua flags=no-writes,...`); a script
 * without a shebang runs in the compatible mode of earlier Redis versions.
 * SCRIPT FLUSH drops the cache by replacing the whole VM, as Redis does.
 *
 * Each run sets KEYS and ARGV (as globals, or on LuaJIT mostly through the
 * script's upvalues: ScriptArgs, kept with each cached script), and runs
 * the function as the Lua pseudo-client (CLIENT_LUA), which starts in the
 * caller's database. */
#include <lauxlib.h>
#include <lua.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/client.h"
#include "core/command.h"
#include "core/dispatch.h"
#include "core/errors.h"
#include "core/log.h"
#include "core/server.h"
#include "db/db.h"
#include "ds/alloc.h"
#include "ds/sha1.h"
#include "ds/util.h"
#include "script/engine.h"
#include "script/function.h"
#include "script/ldb.h"
#include "script/script.h"

static lua_State *vm;
static Client *luaClient;
static char scriptsKey;     /* registry: sha -> function */
static char flagsKey;       /* registry: sha -> flags and ScriptArgs (ARGS_SHIFT) */
static unsigned long numScripts;
static size_t scriptBytes;  /* bodies held (used_memory_scripts_eval) */

static lua_State *evalVm(void) {
    if (vm) return vm;
    vm = luaEngineCreate();
    if (!vm) {
        serverLog(LL_WARNING, "Failed creating the Lua VM.");
        exit(1);
    }
    luaEngineLockGlobals(vm);
    lua_pushlightuserdata(vm, &scriptsKey);
    lua_newtable(vm);
    lua_rawset(vm, LUA_REGISTRYINDEX);
    lua_pushlightuserdata(vm, &flagsKey);
    lua_newtable(vm);
    lua_rawset(vm, LUA_REGISTRYINDEX);
    if (!luaClient) {
        luaClient = clientCreateFake();
        luaClient->flags |= CLIENT_LUA;
    }
    return vm;
}

/* ------------------------------------------------------------------ */
/* Shebang: "#!lua" then options; only `flags=a,b,...` is known. */

unsigned scriptFlagFromName(const char *name, size_t len) {
    static const struct {
        const char *name;
        unsigned flag;
    } names[] = {{"no-writes", SCRIPT_FLAG_NO_WRITES},
                 {"allow-oom", SCRIPT_FLAG_ALLOW_OOM},
                 {"allow-stale", SCRIPT_FLAG_ALLOW_STALE},
                 {"no-cluster", SCRIPT_FLAG_NO_CLUSTER},
                 {"allow-cross-slot-keys", SCRIPT_FLAG_ALLOW_CROSS_SLOT}};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if (strlen(names[i].name) == len && memcmp(names[i].name, name, len) == 0) return names[i].flag;
    return 0;
}

/* Parses the shebang of body.  On success sets *flags and *codeOffset (where
 * the Lua code starts: the shebang's newline, so lines keep their numbers)
 * and returns NULL; otherwise returns the error text (an sds). */
static sds parseShebang(const char *body, size_t len, unsigned *flags, size_t *codeOffset) {
    *flags = SCRIPT_FLAG_EVAL_COMPAT;
    *codeOffset = 0;
    if (len < 2 || body[0] != '#' || body[1] != '!') return NULL;
    const char *nl = memchr(body, '\n', len);
    if (!nl) return sdsNew("ERR Invalid script shebang");
    size_t lineLen = (size_t)(nl - body);
    *codeOffset = lineLen;
    *flags = 0;
    int count;
    sds line = sdsNewLen(body, lineLen);
    sds *parts = sdsSplitLen(line, sdsLen(line), " ", 1, &count);
    sds err = NULL;
    if (count == 0 || strcmp(parts[0], "#!lua") != 0) {
        err = sdsCatPrintf(sdsEmpty(), "ERR Unexpected engine in script shebang: %s", count ? parts[0] : "");
        goto done;
    }
    for (int i = 1; i < count && !err; i++) {
        if (sdsLen(parts[i]) == 0) continue;
        if (strncmp(parts[i], "flags=", 6) != 0) {
            err = sdsCatPrintf(sdsEmpty(), "ERR Unknown lua shebang option: %s", parts[i]);
            break;
        }
        /* "flags=" alone sets none; otherwise every comma-separated name
         * must be known (an empty one is not). */
        size_t vlen = sdsLen(parts[i]) - 6;
        if (vlen == 0) continue;
        int nflags;
        sds *names = sdsSplitLen(parts[i] + 6, vlen, ",", 1, &nflags);
        for (int j = 0; j < nflags && !err; j++) {
            unsigned f = scriptFlagFromName(names[j], sdsLen(names[j]));
            if (!f) err = sdsCatPrintf(sdsEmpty(), "ERR Unexpected flag in script shebang: %s", names[j]);
            *flags |= f;
        }
        sdsFreeSplitRes(names, nflags);
    }
done:
    sdsFreeSplitRes(parts, count);
    sdsFree(line);
    return err;
}

/* ------------------------------------------------------------------ */
/* The cache. */

/* The scripts run most recently, by SHA: a direct-mapped table in front of
 * the registry lookups (which intern the 40-byte SHA each time). */
#define RECENT_SLOTS 64
typedef struct Recent {
    char sha[40];
    int ref;          /* registry reference of the function, 0 if empty */
    unsigned flags;
    ScriptArgs args;  /* with what its KEYS and ARGV tables hold */
} Recent;
static Recent recent[RECENT_SLOTS];

static unsigned recentSlot(const char *sha) {
    unsigned h = 0;
    for (int i = 0; i < 8; i++) h = h * 31 + (unsigned char)sha[i];
    return h & (RECENT_SLOTS - 1);
}

/* A 40-byte SHA argument lower-cased into out (NUL-terminated), eight
 * bytes at a time: a byte gets 0x20 when it is ASCII and in A..Z; every
 * other byte is copied as it is. */
static void shaLower(const char *in, char out[41]) {
    const uint64_t ones = 0x0101010101010101ULL, high = ones * 0x80;
    for (int i = 0; i < 40; i += 8) {
        uint64_t w;
        memcpy(&w, in + i, 8);
        uint64_t low7 = w & ~high; /* no byte can carry into the next */
        uint64_t atLeastA = low7 + ones * (0x80 - 'A');
        uint64_t pastZ = low7 + ones * (0x80 - 'Z' - 1);
        w |= (atLeastA & ~pastZ & ~w & high) >> 2;
        memcpy(out + i, &w, 8);
    }
    out[40] = '\0';
}

/* The registry's flags table holds for each SHA a number: the script
 * flags in the low 16 bits, the packed ScriptArgs above them. */
#define ARGS_SHIFT 16

/* Make sha's slot of recent hold the function on top of the stack (left
 * there). */
static Recent *recentFill(lua_State *L, const char *sha, unsigned flags, const ScriptArgs *args) {
    Recent *r = &recent[recentSlot(sha)];
    if (r->ref) luaL_unref(L, LUA_REGISTRYINDEX, r->ref);
    luaEngineArgsRelease(&r->args);
    lua_pushvalue(L, -1);
    r->ref = luaL_ref(L, LUA_REGISTRYINDEX);
    memcpy(r->sha, sha, 40);
    r->flags = flags;
    r->args = *args;
    return r;
}

/* Push the cached function for sha and return its entry; NULL if not
 * cached.  The entry is valid until the next cacheGet or cacheAdd. */
static Recent *cacheGet(lua_State *L, const char *sha) {
    Recent *r = &recent[recentSlot(sha)];
    if (r->ref && memcmp(r->sha, sha, 40) == 0) {
        lua_rawgeti(L, LUA_REGISTRYINDEX, r->ref);
        return r;
    }
    lua_pushlightuserdata(L, &scriptsKey);
    lua_rawget(L, LUA_REGISTRYINDEX);
    lua_getfield(L, -1, sha);
    lua_remove(L, -2);
    if (lua_isnil(L, -1)) {
        lua_pop(L, 1);
        return NULL;
    }
    lua_pushlightuserdata(L, &flagsKey);
    lua_rawget(L, LUA_REGISTRYINDEX);
    lua_getfield(L, -1, sha);
    unsigned stored = (unsigned)lua_tonumber(L, -1);
    lua_pop(L, 2);
    ScriptArgs args;
    luaEngineArgsUnpack(stored >> ARGS_SHIFT, &args);
    return recentFill(L, sha, stored & ((1u << ARGS_SHIFT) - 1), &args);
}

/* Compile body and cache it under sha, leaving the function pushed, and
 * return its entry (as cacheGet).  On error replies to c and returns
 * NULL. */
static Recent *cacheAdd(Client *c, lua_State *L, const char *sha, const char *body, size_t len) {
    size_t off;
    unsigned flags;
    sds err = parseShebang(body, len, &flags, &off);
    if (err) {
        replyErrorLen(c, err, sdsLen(err));
        sdsFree(err);
        return NULL;
    }
    ScriptArgs args;
    if (luaEngineLoadScript(L, body + off, len - off, "@user_script", &args)) {
        replyErrorFormat(c, "ERR Error compiling script (new function): %s", lua_tostring(L, -1));
        lua_pop(L, 1);
        return NULL;
    }
    lua_pushlightuserdata(L, &scriptsKey);
    lua_rawget(L, LUA_REGISTRYINDEX);
    lua_pushvalue(L, -2);
    lua_setfield(L, -2, sha);
    lua_pop(L, 1);
    lua_pushlightuserdata(L, &flagsKey);
    lua_rawget(L, LUA_REGISTRYINDEX);
    lua_pushnumber(L, (lua_Number)(flags | luaEngineArgsPack(&args) << ARGS_SHIFT));
    lua_setfield(L, -2, sha);
    lua_pop(L, 1);
    numScripts++;
    scriptBytes += len;
    return recentFill(L, sha, flags, &args);
}

static void cacheFlush(void) {
    for (int i = 0; i < RECENT_SLOTS; i++) luaEngineArgsRelease(&recent[i].args);
    memset(recent, 0, sizeof(recent));
    if (vm) luaEngineDestroy(vm);
    vm = NULL;
    numScripts = 0;
    scriptBytes = 0;
    (void)evalVm(); /* a fresh one, as Redis's SCRIPT FLUSH */
}

/* ------------------------------------------------------------------ */
/* EVAL and friends. */

/* The numkeys argument at argv[idx], checked as Redis checks it. */
int scriptGetNumkeys(Client *c, int idx, long long *numkeys) {
    if (getLongLongOrReply(c, c->argv[idx], numkeys, NULL) == -1) return -1;
    if (*numkeys > c->argc - idx - 1) {
        replyError(c, "ERR Number of keys can't be greater than number of args");
        return -1;
    }
    if (*numkeys < 0) {
        replyError(c, "ERR Number of keys can't be negative");
        return -1;
    }
    return 0;
}

/* The flags of the script EVAL or EVALSHA names, without running it:
 * cached, or read from EVAL's shebang.  EVAL_COMPAT when unknown. */
static unsigned evalPeekFlags(Client *c, int bySha) {
    if (c->argc < 2) return SCRIPT_FLAG_EVAL_COMPAT;
    if (bySha && sdsLen(c->argv[1]) != 40) return SCRIPT_FLAG_EVAL_COMPAT;
    char sha[41];
    if (bySha) shaLower(c->argv[1], sha);
    else sha1Hex(c->argv[1], sdsLen(c->argv[1]), sha);
    lua_State *L = evalVm();
    Recent *script = cacheGet(L, sha);
    if (script) {
        unsigned flags = script->flags;
        lua_pop(L, 1);
        return flags;
    }
    if (bySha) return SCRIPT_FLAG_EVAL_COMPAT;
    unsigned flags;
    size_t off;
    sds err = parseShebang(c->argv[1], sdsLen(c->argv[1]), &flags, &off);
    if (err) {
        sdsFree(err);
        return SCRIPT_FLAG_EVAL_COMPAT;
    }
    return flags;
}

int scriptDeclaresWrites(Client *c, const Command *cmd) {
    unsigned flags;
    if (!strcmp(cmd->name, "eval") || !strcmp(cmd->name, "eval_ro")) flags = evalPeekFlags(c, 0);
    else if (!strcmp(cmd->name, "evalsha") || !strcmp(cmd->name, "evalsha_ro")) flags = evalPeekFlags(c, 1);
    else if (!strcmp(cmd->name, "fcall") || !strcmp(cmd->name, "fcall_ro")) return functionDeclaresWrites(c);
    else return 0;
    return !(flags & (SCRIPT_FLAG_EVAL_COMPAT | SCRIPT_FLAG_NO_WRITES));
}

int scriptRefuseWritesOrReply(Client *c, unsigned flags) {
    if ((flags & SCRIPT_FLAG_NO_CLUSTER) && !(flags & SCRIPT_FLAG_EVAL_COMPAT) && dbSlotsOn()) {
        replyError(c, "ERR Can not run script on cluster, 'no-cluster' flag is set.");
        return -1;
    }
    if (flags & (SCRIPT_FLAG_EVAL_COMPAT | SCRIPT_FLAG_NO_WRITES)) return 0;
    int rdb = 0;
    const char *disk = scriptDiskError ? scriptDiskError(&rdb) : NULL;
    if (!disk) return 0;
    if (rdb)
        replyError(c, "MISCONF Redis is configured to save RDB snapshots, but it's currently unable to persist to "
                      "disk. Writable scripts are blocked. Use 'no-writes' flag for read only scripts.");
    else
        replyError(c, disk);
    return -1;
}

static void evalRun(Client *c, int bySha, int readOnly, int debug);

static void evalGeneric(Client *c, int bySha, int readOnly) {
    if (c->flags & CLIENT_LUA_DEBUG) {
        if (bySha) {
            replyError(c, "ERR Please use EVAL instead of EVALSHA for debugging");
            return;
        }
        if (!ldbStartSession(c)) return;
        evalRun(c, bySha, readOnly, 1);
        ldbEndSession(c);
        return;
    }
    evalRun(c, bySha, readOnly, 0);
}

static void evalRun(Client *c, int bySha, int readOnly, int debug) {
    long long numkeys;
    if (scriptGetNumkeys(c, 2, &numkeys) == -1) return;
    lua_State *L = evalVm();
    char sha[41];
    if (bySha) {
        if (sdsLen(c->argv[1]) != 40) {
            replyError(c, ERR_NOSCRIPT);
            return;
        }
        shaLower(c->argv[1], sha);
    } else {
        sha1Hex(c->argv[1], sdsLen(c->argv[1]), sha);
    }
    Recent *script = cacheGet(L, sha);
    if (!script) {
        if (bySha) {
            replyError(c, ERR_NOSCRIPT);
            return;
        }
        if ((script = cacheAdd(c, L, sha, c->argv[1], sdsLen(c->argv[1]))) == NULL) return;
    }
    unsigned flags = script->flags;
    /* Without a shebang a script may not run on a stale replica at all
     * (with one, processCommand refused it unless allow-stale). */
    if ((flags & SCRIPT_FLAG_EVAL_COMPAT) && scriptRunningStale && scriptRunningStale()) {
        lua_pop(L, 1);
        replyError(c, "MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'.");
        return;
    }
    if (scriptRefuseWritesOrReply(c, flags) < 0) {
        lua_pop(L, 1);
        return;
    }
    if (readOnly && !(flags & (SCRIPT_FLAG_NO_WRITES | SCRIPT_FLAG_EVAL_COMPAT))) {
        lua_pop(L, 1);
        replyError(c, "ERR Can not execute a script with write flag using *_ro command.");
        return;
    }
    if (scriptRefuseOomOrReply(c, flags) == -1) {
        lua_pop(L, 1);
        return;
    }
    int numargs = c->argc - 3 - (int)numkeys;
    luaEngineSetKeysArgv(L, &script->args, c->argv + 3, (int)numkeys, c->argv + 3 + numkeys, numargs);
    ScriptRun run = {0};
    run.caller = c;
    run.fake = luaClient;
    run.name = sha;
    run.source = "user_script";
    run.flags = flags;
    run.readOnly = readOnly;
    if (debug) run.debugHook = ldbHook;
    luaClient->db = c->db;
    luaClient->resp = 2;
    luaEngineRun(L, &run, 0);
}

/* The flags EVAL* has for the script it names (scriptCommandFlags). */
uint64_t evalCommandFlags(Client *c, uint64_t cmdFlags, int bySha) {
    unsigned flags;
    if (bySha) {
        if (sdsLen(c->argv[1]) != 40) return cmdFlags;
        char sha[41];
        shaLower(c->argv[1], sha);
        lua_State *L = evalVm();
        Recent *script = cacheGet(L, sha);
        if (!script) return cmdFlags;
        flags = script->flags;
        lua_pop(L, 1);
    } else {
        size_t off;
        sds err = parseShebang(c->argv[1], sdsLen(c->argv[1]), &flags, &off);
        if (err) {
            sdsFree(err);
            return cmdFlags;
        }
    }
    return scriptFlagsToCommandFlags(cmdFlags, flags);
}

static void evalCommand(Client *c) { evalGeneric(c, 0, 0); }
static void evalShaCommand(Client *c) { evalGeneric(c, 1, 0); }
static void evalRoCommand(Client *c) { evalGeneric(c, 0, 1); }
static void evalShaRoCommand(Client *c) { evalGeneric(c, 1, 1); }

/* ------------------------------------------------------------------ */
/* SCRIPT. */

static void scriptLoadCommand(Client *c) {
    lua_State *L = evalVm();
    char sha[41];
    sha1Hex(c->argv[2], sdsLen(c->argv[2]), sha);
    if (!cacheGet(L, sha) && !cacheAdd(c, L, sha, c->argv[2], sdsLen(c->argv[2]))) return;
    lua_pop(L, 1);
    replyBulk(c, sha, 40);
}

static void scriptExistsCommand(Client *c) {
    lua_State *L = evalVm();
    replyArrayLen(c, c->argc - 2);
    for (int i = 2; i < c->argc; i++) {
        int found = 0;
        if (sdsLen(c->argv[i]) == 40) {
            char sha[41];
            shaLower(c->argv[i], sha);
            if (cacheGet(L, sha)) {
                lua_pop(L, 1);
                found = 1;
            }
        }
        replyLongLong(c, found);
    }
}

static void scriptFlushCommand(Client *c) {
    if (c->argc > 3 || (c->argc == 3 && !argIs(c->argv[2], "sync") && !argIs(c->argv[2], "async"))) {
        replyError(c, "ERR SCRIPT FLUSH only support SYNC|ASYNC option");
        return;
    }
    cacheFlush();
    replyOk(c);
}

static void scriptKillCommand(Client *c) { scriptKill(c, 1); }

static void scriptHelpCommand(Client *c) {
    static const char *help[] = {
        "DEBUG (YES|SYNC|NO)",
        "    Set the debug mode for subsequent scripts executed.",
        "EXISTS <sha1> [<sha1> ...]",
        "    Return information about the existence of the scripts in the script cache.",
        "FLUSH [ASYNC|SYNC]",
        "    Flush the Lua scripts cache. Very dangerous on replicas.",
        "    When called without the optional mode argument, the behavior is determined by the",
        "    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
        "    * ASYNC: Asynchronously flush the scripts cache.",
        "    * SYNC: Synchronously flush the scripts cache.",
        "KILL",
        "    Kill the currently executing Lua script.",
        "LOAD <script>",
        "    Load a script into the scripts cache without executing it.",
        NULL};
    replyHelp(c, help);
}

/* ------------------------------------------------------------------ */
/* INFO memory. */

void scriptCreateVms(void) {
    (void)evalVm();
    functionLuaCreate();
}

void evalMemoryInfo(ScriptMemoryInfo *m) {
    m->vmEval = luaEngineMemory(evalVm());
    m->scriptsEval = scriptBytes + numScripts * 64;
    m->numScripts = numScripts;
}

/* ------------------------------------------------------------------ */

static Command scriptSubcommands[] = {
    {.name = "debug", .proc = scriptDebugCommand},
    {.name = "exists", .proc = scriptExistsCommand},
    {.name = "flush", .proc = scriptFlushCommand},
    {.name = "help", .proc = scriptHelpCommand},
    {.name = "kill", .proc = scriptKillCommand},
    {.name = "load", .proc = scriptLoadCommand},
    {0}};

Command scriptCommands[] = {
    {.name = "eval", .proc = evalCommand, .flags = CMD_MONITOR_FIRST | CMD_SCRIPT_FLAGS},
    {.name = "evalsha", .proc = evalShaCommand, .flags = CMD_MONITOR_FIRST | CMD_SCRIPT_FLAGS},
    {.name = "eval_ro", .proc = evalRoCommand, .flags = CMD_MONITOR_FIRST | CMD_SCRIPT_FLAGS},
    {.name = "evalsha_ro", .proc = evalShaRoCommand, .flags = CMD_MONITOR_FIRST | CMD_SCRIPT_FLAGS},
    {.name = "script", .subcommands = scriptSubcommands},
    {0}};
