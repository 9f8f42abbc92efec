/* function.c -- the function libraries, the FUNCTION commands, FCALL and
 * FCALL_RO, and the FUNCTION DUMP payload.  The Lua side is in
 * function_lua.c (see function.h).
 *
 * A FunctionSet holds libraries by name and an index of their functions by
 * lower-case name.  The live set is what FCALL sees.  FUNCTION RESTORE
 * loads the payload into a scratch set first, so a payload that fails
 * changes nothing, then merges it by policy.
 *
 * A library is loaded in three steps, and only the last touches the set:
 * parse the shebang line, run the code (which registers the functions),
 * check its function names against the other libraries.  LOAD REPLACE takes
 * the old library out before the name check and puts it back if the check
 * fails.
 *
 * DUMP payload: per library the RDB opcode 245 (FUNCTION2) and the code as
 * an RDB string; then the RDB version (10) in 2 bytes and the CRC-64 of
 * everything before, both little endian.  Opcode 246 is the format of the
 * 7.0 release candidates (name, engine, optional description, code); it is
 * read as redis-server 7.0 reads it. */
#include "script/function.h"

#include <string.h>
#include <strings.h>

#include "core/server.h"
#include "ds/alloc.h"
#include "ds/crc64.h"
#include "ds/glob.h"
#include "ds/htab.h"
#include "ds/rdbcodec.h"
#include "ds/siphash.h"
#include "ds/util.h"
#include "script/engine.h"
#include "script/script.h"

#define RDB_OPCODE_FUNCTION_PRE_GA 246
#define RDB_OPCODE_FUNCTION2 245
#define RDB_VERSION 10
#define PAYLOAD_TRAILER 10 /* version (2) + CRC-64 (8) */

#define ERR_BAD_NAME                                                                                         \
    "Library names can only contain letters, numbers, or underscores(_) and must be at least one character " \
    "long"

typedef struct FunctionSet {
    Htab libs;     /* FunctionLib by name */
    Htab index;    /* FunctionInfo by lower-case name */
    size_t nfuncs; /* functions of all libraries */
} FunctionSet;

/* --- sets --- */

static const uint8_t nameSeed[16] = "cairn-functions!";

static uint64_t hashName(const void *key, size_t len) { return siphash(key, len, nameSeed); }

static void libKey(const void *entry, const void **key, size_t *len) {
    const FunctionLib *lib = entry;
    *key = lib->name;
    *len = sdsLen(lib->name);
}

static void funcKey(const void *entry, const void **key, size_t *len) {
    const FunctionInfo *f = entry;
    *key = f->key;
    *len = sdsLen(f->key);
}

static const HtabType libType = {hashName, libKey, NULL, NULL, NULL, 0};
static const HtabType funcType = {hashName, funcKey, NULL, NULL, NULL, 0};

static FunctionSet live = {.libs = {.type = &libType}, .index = {.type = &funcType}};

static void setInit(FunctionSet *set) {
    htabInit(&set->libs, &libType);
    htabInit(&set->index, &funcType);
    set->nfuncs = 0;
}

static int nameIsValid(const char *s, size_t len) {
    if (len == 0) return 0;
    for (size_t i = 0; i < len; i++) {
        char ch = s[i];
        if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '_'))
            return 0;
    }
    return 1;
}

static FunctionLib *libCreate(const sds name, const sds code) {
    FunctionLib *lib = xcalloc(sizeof(*lib));
    lib->name = sdsDup(name);
    lib->code = sdsDup(code);
    return lib;
}

static void libFree(FunctionLib *lib) {
    for (size_t i = 0; i < lib->nfuncs; i++) {
        FunctionInfo *f = lib->funcs[i];
        functionLuaRelease(f);
        sdsFree(f->name);
        sdsFree(f->key);
        sdsFree(f->desc);
        xfree(f);
    }
    xfree(lib->funcs);
    sdsFree(lib->name);
    sdsFree(lib->code);
    xfree(lib);
}

static void libFreeEntry(void *entry, void *priv) {
    (void)priv;
    libFree(entry);
}

int functionLibAdd(FunctionLib *lib, const char *name, size_t len, const char *desc, size_t descLen,
                   unsigned flags, int callback, const char **err) {
    if (!nameIsValid(name, len)) {
        *err = ERR_BAD_NAME;
        return -1;
    }
    for (size_t i = 0; i < lib->nfuncs; i++) {
        if (sdsLen(lib->funcs[i]->name) == len && memcmp(lib->funcs[i]->name, name, len) == 0) {
            *err = "Function already exists in the library";
            return -1;
        }
    }
    FunctionInfo *f = xcalloc(sizeof(*f));
    f->name = sdsNewLen(name, len);
    f->key = sdsDup(f->name);
    sdsToLower(f->key);
    f->desc = desc ? sdsNewLen(desc, descLen) : NULL;
    f->flags = flags;
    f->callback = callback;
    f->lib = lib;
    if (lib->nfuncs == lib->cap) {
        lib->cap = lib->cap ? lib->cap * 2 : 4;
        lib->funcs = xrealloc(lib->funcs, lib->cap * sizeof(*lib->funcs));
    }
    lib->funcs[lib->nfuncs++] = f;
    return 0;
}

static FunctionLib *setFindLib(FunctionSet *set, const char *name, size_t len) {
    return htabFind(&set->libs, name, len);
}

/* Indexes lib's functions.  Of two names in one library that differ only
 * in case, the index keeps the first: the other is listed but not callable. */
static void setAddLib(FunctionSet *set, FunctionLib *lib) {
    htabAdd(&set->libs, lib);
    for (size_t i = 0; i < lib->nfuncs; i++) {
        FunctionInfo *f = lib->funcs[i];
        if (!htabFind(&set->index, f->key, sdsLen(f->key))) htabAdd(&set->index, f);
    }
    set->nfuncs += lib->nfuncs;
}

/* Takes lib out of set (the caller owns it again). */
static void setRemoveLib(FunctionSet *set, FunctionLib *lib) {
    for (size_t i = 0; i < lib->nfuncs; i++) {
        FunctionInfo *f = lib->funcs[i];
        if (htabFind(&set->index, f->key, sdsLen(f->key)) == f)
            htabUnlink(&set->index, f->key, sdsLen(f->key));
    }
    htabUnlink(&set->libs, lib->name, sdsLen(lib->name));
    set->nfuncs -= lib->nfuncs;
}

/* The first function of lib whose name another library of set has. */
static FunctionInfo *setCollision(FunctionSet *set, FunctionLib *lib) {
    for (size_t i = 0; i < lib->nfuncs; i++) {
        FunctionInfo *f = lib->funcs[i];
        FunctionInfo *other = htabFind(&set->index, f->key, sdsLen(f->key));
        if (other && other->lib != lib) return f;
    }
    return NULL;
}

static void setClear(FunctionSet *set) {
    htabClear(&set->index, NULL, NULL);
    htabClear(&set->libs, libFreeEntry, NULL);
    set->nfuncs = 0;
}

/* Moves every library of from into to; from ends empty, its tables
 * released.  The caller has checked that no name collides. */
static void setMoveAll(FunctionSet *to, FunctionSet *from) {
    HtabIter it;
    FunctionLib *lib;
    htabIterInit(&it, &from->libs);
    while ((lib = htabIterNext(&it))) {
        setRemoveLib(from, lib);
        setAddLib(to, lib);
    }
    htabIterRelease(&it);
    setClear(from);
}

/* --- loading a library --- */

/* Parses the shebang line "#!<engine> name=<library>" of code.  Sets *name
 * (a new sds) and *body (where the code after the line starts: its
 * newline).  Returns 0, or -1 with *err a new sds holding the error. */
static int parseHeader(const sds code, sds *name, size_t *body, sds *err) {
    *name = NULL;
    if (sdsLen(code) < 2 || memcmp(code, "#!", 2) != 0) {
        *err = sdsNew("ERR Missing library metadata");
        return -1;
    }
    const char *nl = strchr(code, '\n'); /* like Redis, a NUL ends the search */
    sds line = nl ? sdsNewLen(code, (size_t)(nl - code)) : NULL;
    int n = 0;
    sds *parts = line ? sdsSplitArgs(line, &n) : NULL;
    sdsFree(line);
    if (!parts) {
        *err = sdsNew("ERR Invalid library metadata");
        return -1;
    }
    *err = NULL;
    for (int i = 1; i < n && !*err; i++) {
        const char *eq = strchr(parts[i], '=');
        if (!eq || (size_t)(eq - parts[i]) != 4 || strncasecmp(parts[i], "name", 4) != 0)
            *err = sdsCatPrintf(sdsEmpty(), "ERR Invalid metadata value given: %s", parts[i]);
        else if (*name)
            *err = sdsNew("ERR Invalid metadata value, name argument was given multiple times");
        else
            *name = sdsNew(eq + 1);
    }
    if (!*err && !*name)
        *err = sdsNew("ERR Library name was not given");
    else if (!*err && !nameIsValid(*name, sdsLen(*name)))
        *err = sdsNew("ERR " ERR_BAD_NAME);
    else if (!*err && strcasecmp(parts[0] + 2, "lua") != 0)
        *err = sdsCatPrintf(sdsEmpty(), "ERR Engine '%s' not found", parts[0] + 2);
    sdsFreeSplitRes(parts, n);
    if (*err) {
        sdsFree(*name);
        *name = NULL;
        return -1;
    }
    *body = (size_t)(nl - code);
    return 0;
}

/* Loads code as a library of set.  replace: a library of the same name is
 * replaced (else it is an error).  Returns the library (owned by set), or
 * NULL with *err a new sds holding the error reply and set unchanged. */
static FunctionLib *loadLibrary(FunctionSet *set, const sds code, int replace, sds *err) {
    sds name;
    size_t body;
    if (parseHeader(code, &name, &body, err) < 0) return NULL;
    FunctionLib *old = setFindLib(set, name, sdsLen(name));
    if (old && !replace) {
        *err = sdsCatPrintf(sdsEmpty(), "ERR Library '%s' already exists", name);
        sdsFree(name);
        return NULL;
    }
    FunctionLib *lib = libCreate(name, code);
    sdsFree(name);
    if (functionLuaLoad(lib, code + body, sdsLen(code) - body, err) < 0) goto fail;
    if (lib->nfuncs == 0) {
        *err = sdsNew("ERR No functions registered");
        goto fail;
    }
    if (old) setRemoveLib(set, old);
    FunctionInfo *clash = setCollision(set, lib);
    if (clash) {
        *err = sdsCatPrintf(sdsEmpty(), "ERR Function %s already exists", clash->name);
        if (old) setAddLib(set, old);
        goto fail;
    }
    if (old) libFree(old);
    setAddLib(set, lib);
    return lib;

fail:
    libFree(lib);
    return NULL;
}

/* --- DUMP payload --- */

sds functionsRdbAppend(sds out, int compress) {
    HtabIter it;
    FunctionLib *lib;
    htabIterInit(&it, &live.libs);
    while ((lib = htabIterNext(&it))) {
        unsigned char op = RDB_OPCODE_FUNCTION2;
        out = sdsCatLen(out, &op, 1);
        out = rdbEncodeString(out, lib->code, sdsLen(lib->code), compress);
    }
    htabIterRelease(&it);
    return out;
}

int functionsRdbLoadCode(const sds code, int replace, sds *err) {
    return loadLibrary(&live, code, replace, err) ? 0 : -1;
}

static sds dumpPayload(FunctionSet *set) {
    sds out = sdsEmpty();
    HtabIter it;
    FunctionLib *lib;
    htabIterInit(&it, &set->libs);
    while ((lib = htabIterNext(&it))) {
        unsigned char op = RDB_OPCODE_FUNCTION2;
        out = sdsCatLen(out, &op, 1);
        out = rdbEncodeString(out, lib->code, sdsLen(lib->code), server.cfg.rdbcompression);
    }
    htabIterRelease(&it);
    unsigned char trailer[PAYLOAD_TRAILER] = {RDB_VERSION & 0xff, RDB_VERSION >> 8};
    uint64_t crc = crc64(0, out, sdsLen(out));
    crc = crc64(crc, trailer, 2);
    for (int i = 0; i < 8; i++)
        trailer[2 + i] = (unsigned char)(crc >> (8 * i));
    return sdsCatLen(out, trailer, sizeof(trailer));
}

/* 1 when p ends in a version we can read and a matching CRC-64. */
static int payloadIsIntact(const unsigned char *p, size_t len) {
    if (len < PAYLOAD_TRAILER) return 0;
    const unsigned char *t = p + len - PAYLOAD_TRAILER;
    unsigned version = t[0] | (unsigned)t[1] << 8;
    uint64_t crc = 0;
    for (int i = 0; i < 8; i++)
        crc |= (uint64_t)t[2 + i] << (8 * i);
    return version <= RDB_VERSION && crc64(0, p, len - 8) == crc;
}

/* Reads one opcode-246 library at p[*pos] as code for loadLibrary: a
 * shebang line made from its engine and name, then its code (the
 * description is dropped, as redis-server 7.0 does).  Returns the code, or
 * NULL with *err set. */
static sds readPreGaLibrary(const unsigned char *p, size_t len, size_t *pos, sds *err) {
    sds name = NULL, engine = NULL, desc = NULL, blob = NULL, code = NULL;
    uint64_t hasDesc;
    int special;
    if (rdbDecodeString(p, len, pos, &name) < 0) {
        *err = sdsNew("ERR Failed loading library name");
    } else if (rdbDecodeString(p, len, pos, &engine) < 0) {
        *err = sdsNew("ERR Failed loading engine name");
    } else if (strcasecmp(engine, "lua") != 0) {
        *err = sdsCatPrintf(sdsEmpty(), "ERR Engine '%s' not found", engine);
    } else if (rdbDecodeLen(p, len, pos, &hasDesc, &special) < 0 || special ||
               (hasDesc && rdbDecodeString(p, len, pos, &desc) < 0)) {
        *err = sdsNew("ERR Failed loading library description");
    } else if (rdbDecodeString(p, len, pos, &blob) < 0) {
        *err = sdsNew("ERR Failed loading library blob");
    } else {
        code = sdsCatPrintf(sdsEmpty(), "#!%s name=%s\n", engine, name);
        code = sdsCatSds(code, blob);
    }
    sdsFree(name);
    sdsFree(engine);
    sdsFree(desc);
    sdsFree(blob);
    return code;
}

/* Loads every library of an intact payload into set (empty).  Returns 0,
 * or -1 with *err set (the caller clears set).  Strings may run into the
 * trailer, as in redis-server, which reads them from the whole payload. */
static int loadPayload(FunctionSet *set, const unsigned char *p, size_t len, sds *err) {
    size_t pos = 0, end = len - PAYLOAD_TRAILER;
    while (pos < end) {
        unsigned char op = p[pos++];
        sds code = NULL;
        if (op == RDB_OPCODE_FUNCTION_PRE_GA) {
            code = readPreGaLibrary(p, len, &pos, err);
            if (!code) return -1;
        } else if (op != RDB_OPCODE_FUNCTION2) {
            *err = sdsNew("ERR given type is not a function");
            return -1;
        } else if (rdbDecodeString(p, len, &pos, &code) < 0) {
            *err = sdsNew("ERR Failed loading library payload");
            return -1;
        }
        FunctionLib *lib = loadLibrary(set, code, 0, err);
        sdsFree(code);
        if (!lib) return -1;
    }
    return 0;
}

typedef enum { RESTORE_APPEND, RESTORE_REPLACE, RESTORE_FLUSH } RestorePolicy;

/* Merges the restored libraries into the live set.  Returns 0, or -1 with
 * *err set and the live set unchanged. */
static int mergeRestored(FunctionSet *restored, RestorePolicy policy, sds *err) {
    if (policy == RESTORE_FLUSH) {
        setClear(&live);
        setMoveAll(&live, restored);
        return 0;
    }
    FunctionSet replaced;
    setInit(&replaced);
    HtabIter it;
    FunctionLib *lib;
    *err = NULL;
    htabIterInit(&it, &restored->libs);
    while (!*err && (lib = htabIterNext(&it))) {
        FunctionLib *old = setFindLib(&live, lib->name, sdsLen(lib->name));
        if (old && policy == RESTORE_APPEND) {
            *err = sdsCatPrintf(sdsEmpty(), "ERR Library %s already exists", lib->name);
        } else if (old) {
            setRemoveLib(&live, old);
            setAddLib(&replaced, old);
        }
    }
    htabIterRelease(&it);
    htabIterInit(&it, &restored->libs);
    while (!*err && (lib = htabIterNext(&it))) {
        for (size_t i = 0; i < lib->nfuncs && !*err; i++) {
            FunctionInfo *f = lib->funcs[i];
            if (htabFind(&live.index, f->key, sdsLen(f->key)))
                *err = sdsCatPrintf(sdsEmpty(), "ERR Function %s already exists", f->name);
        }
    }
    htabIterRelease(&it);
    if (*err) {
        setMoveAll(&live, &replaced);
        return -1;
    }
    setMoveAll(&live, restored);
    setClear(&replaced);
    return 0;
}

/* --- FUNCTION subcommands --- */

static void functionLoadCommand(Client *c) {
    int replace = 0;
    for (int i = 2; i < c->argc - 1; i++) {
        if (!argIs(c->argv[i], "replace")) {
            replyErrorFormat(c, "ERR Unknown option given: %s", c->argv[i]);
            return;
        }
        replace = 1;
    }
    sds err;
    FunctionLib *lib = loadLibrary(&live, c->argv[c->argc - 1], replace, &err);
    if (!lib) {
        replyErrorLen(c, err, sdsLen(err));
        sdsFree(err);
        return;
    }
    serverIncrDirty(1);
    replyBulkSds(c, lib->name);
}

static void functionDeleteCommand(Client *c) {
    FunctionLib *lib = setFindLib(&live, c->argv[2], sdsLen(c->argv[2]));
    if (!lib) {
        replyError(c, "ERR Library not found");
        return;
    }
    setRemoveLib(&live, lib);
    libFree(lib);
    serverIncrDirty(1);
    replyOk(c);
}

/* Frees every library and starts a fresh VM.  The old VM is freed now
 * even for ASYNC: it cannot be handed to another thread while the
 * allocator it counts with is shared. */
static void flushAll(void) {
    setClear(&live);
    functionLuaReset();
}

void functionsRdbFlush(void) { flushAll(); }

static void functionFlushCommand(Client *c) {
    if (c->argc > 3) {
        replySubcommandSyntaxError(c);
        return;
    }
    if (c->argc == 3 && !argIs(c->argv[2], "sync") && !argIs(c->argv[2], "async")) {
        replyError(c, "ERR FUNCTION FLUSH only supports SYNC|ASYNC option");
        return;
    }
    flushAll();
    serverIncrDirty(1);
    replyOk(c);
}

/* The names of the flags FUNCTION LIST shows, in Redis's order. */
static const char *const flagNames[] = {"no-writes", "allow-oom", "allow-stale", "no-cluster",
                                        "allow-cross-slot-keys"};
#define FLAG_COUNT (sizeof(flagNames) / sizeof(flagNames[0]))

static void replyFunctionInfo(Client *c, const FunctionInfo *f) {
    replyMapLen(c, 3);
    replyBulkCString(c, "name");
    replyBulkSds(c, f->name);
    replyBulkCString(c, "description");
    if (f->desc)
        replyBulkSds(c, f->desc);
    else
        replyNull(c);
    replyBulkCString(c, "flags");
    unsigned bits[FLAG_COUNT];
    long n = 0;
    for (size_t i = 0; i < FLAG_COUNT; i++) {
        bits[i] = scriptFlagFromName(flagNames[i], strlen(flagNames[i]));
        if (f->flags & bits[i]) n++;
    }
    replySetLen(c, n);
    for (size_t i = 0; i < FLAG_COUNT; i++)
        if (f->flags & bits[i]) replyStatus(c, flagNames[i]);
}

static void replyLibrary(Client *c, const FunctionLib *lib, int withCode) {
    replyMapLen(c, withCode ? 4 : 3);
    replyBulkCString(c, "library_name");
    replyBulkSds(c, lib->name);
    replyBulkCString(c, "engine");
    replyBulkCString(c, "LUA");
    replyBulkCString(c, "functions");
    replyArrayLen(c, (long)lib->nfuncs);
    for (size_t i = 0; i < lib->nfuncs; i++)
        replyFunctionInfo(c, lib->funcs[i]);
    if (withCode) {
        replyBulkCString(c, "library_code");
        replyBulkSds(c, lib->code);
    }
}

static void functionListCommand(Client *c) {
    int withCode = 0;
    sds pattern = NULL;
    for (int i = 2; i < c->argc; i++) {
        if (!withCode && argIs(c->argv[i], "withcode")) {
            withCode = 1;
        } else if (!pattern && argIs(c->argv[i], "libraryname")) {
            if (i == c->argc - 1) {
                replyError(c, "ERR library name argument was not given");
                return;
            }
            pattern = c->argv[++i];
        } else {
            replyErrorFormat(c, "ERR Unknown argument %s", c->argv[i]);
            return;
        }
    }
    void *len = replyDeferredLen(c);
    long n = 0;
    HtabIter it;
    FunctionLib *lib;
    htabIterInit(&it, &live.libs);
    while ((lib = htabIterNext(&it))) {
        if (pattern && !globMatch(pattern, sdsLen(pattern), lib->name, sdsLen(lib->name), 1)) continue;
        replyLibrary(c, lib, withCode);
        n++;
    }
    htabIterRelease(&it);
    replySetDeferredArrayLen(c, len, n);
}

static void functionDumpCommand(Client *c) {
    sds payload = dumpPayload(&live);
    replyBulkSds(c, payload);
    sdsFree(payload);
}

static void functionRestoreCommand(Client *c) {
    if (c->argc > 4) {
        replySubcommandSyntaxError(c);
        return;
    }
    RestorePolicy policy = RESTORE_APPEND;
    if (c->argc == 4) {
        if (argIs(c->argv[3], "flush")) {
            policy = RESTORE_FLUSH;
        } else if (argIs(c->argv[3], "replace")) {
            policy = RESTORE_REPLACE;
        } else if (!argIs(c->argv[3], "append")) {
            replyError(c, "ERR Wrong restore policy given, value should be either FLUSH, APPEND or REPLACE.");
            return;
        }
    }
    const unsigned char *p = (const unsigned char *)c->argv[2];
    size_t len = sdsLen(c->argv[2]);
    if (!payloadIsIntact(p, len)) {
        replyError(c, "ERR DUMP payload version or checksum are wrong");
        return;
    }
    FunctionSet restored;
    setInit(&restored);
    sds err = NULL;
    if (loadPayload(&restored, p, len, &err) < 0 || mergeRestored(&restored, policy, &err) < 0) {
        setClear(&restored);
        replyErrorLen(c, err, sdsLen(err));
        sdsFree(err);
        return;
    }
    serverIncrDirty(1);
    replyOk(c);
}

static void functionStatsCommand(Client *c) {
    ScriptRun *run = scriptCurrentRun();
    if (run && !run->isFunction) {
        replyError(c, ERR_BUSY_EVAL);
        return;
    }
    replyMapLen(c, 2);
    replyBulkCString(c, "running_script");
    if (run) {
        replyMapLen(c, 3);
        replyBulkCString(c, "name");
        replyBulkCString(c, run->name);
        replyBulkCString(c, "command");
        replyArrayLen(c, run->caller->argc);
        for (int i = 0; i < run->caller->argc; i++)
            replyBulkSds(c, run->caller->argv[i]);
        replyBulkCString(c, "duration_ms");
        replyLongLong(c, mstime() - run->startMs);
    } else {
        replyNull(c);
    }
    replyBulkCString(c, "engines");
    replyMapLen(c, 1);
    replyBulkCString(c, "LUA");
    replyMapLen(c, 2);
    replyBulkCString(c, "libraries_count");
    replyLongLong(c, (long long)htabSize(&live.libs));
    replyBulkCString(c, "functions_count");
    replyLongLong(c, (long long)live.nfuncs);
}

static void functionKillCommand(Client *c) { scriptKill(c, 0); }

static void functionHelpCommand(Client *c) {
    static const char *help[] = {
        "LOAD [REPLACE] <FUNCTION CODE>",
        "    Create a new library with the given library name and code.",
        "DELETE <LIBRARY NAME>",
        "    Delete the given library.",
        "LIST [LIBRARYNAME PATTERN] [WITHCODE]",
        "    Return general information on all the libraries:",
        "    * Library name",
        "    * The engine used to run the Library",
        "    * Library description",
        "    * Functions list",
        "    * Library code (if WITHCODE is given)",
        "    It also possible to get only function that matches a pattern using LIBRARYNAME argument.",
        "STATS",
        "    Return information about the current function running:",
        "    * Function name",
        "    * Command used to run the function",
        "    * Duration in MS that the function is running",
        "    If no function is running, return nil",
        "    In addition, returns a list of available engines.",
        "KILL",
        "    Kill the current running function.",
        "FLUSH [ASYNC|SYNC]",
        "    Delete all the libraries.",
        "    When called without the optional mode argument, the behavior is determined by the",
        "    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
        "    * ASYNC: Asynchronously flush the libraries.",
        "    * SYNC: Synchronously flush the libraries.",
        "DUMP",
        "    Return a serialized payload representing the current libraries, can be restored using FUNCTION "
        "RESTORE command",
        "RESTORE <PAYLOAD> [FLUSH|APPEND|REPLACE]",
        "    Restore the libraries represented by the given payload, it is possible to give a restore policy "
        "to",
        "    control how to handle existing libraries (default APPEND):",
        "    * FLUSH: delete all existing libraries.",
        "    * APPEND: appends the restored libraries to the existing libraries. On collision, abort.",
        "    * REPLACE: appends the restored libraries to the existing libraries, On collision, replace the "
        "old",
        "      libraries with the new libraries (notice that even on this option there is a chance of "
        "failure",
        "      in case of functions name collision with another library).",
        NULL,
    };
    replyHelp(c, help);
}

/* --- FCALL / FCALL_RO --- */

/* The live function named name (any case), or NULL. */
static FunctionInfo *findFunction(const sds name) {
    char small[64];
    size_t len = sdsLen(name);
    if (len == 0) return NULL; /* no function has an empty name */
    char *key = len <= sizeof(small) ? small : xmalloc(len);
    for (size_t i = 0; i < len; i++)
        key[i] = (char)((name[i] >= 'A' && name[i] <= 'Z') ? name[i] + 32 : name[i]);
    FunctionInfo *f = htabFind(&live.index, key, len);
    if (key != small) xfree(key);
    return f;
}

int functionDeclaresWrites(Client *c) {
    FunctionInfo *f = c->argc >= 2 ? findFunction(c->argv[1]) : NULL;
    return f && !(f->flags & SCRIPT_FLAG_NO_WRITES);
}

static void fcallGeneric(Client *c, int readOnly) {
    FunctionInfo *f = findFunction(c->argv[1]);
    if (!f) {
        replyError(c, "ERR Function not found");
        return;
    }
    long long numkeys;
    if (!stringToLongLong(c->argv[2], sdsLen(c->argv[2]), &numkeys)) {
        replyError(c, "ERR Bad number of keys provided");
        return;
    }
    if (numkeys < 0) {
        replyError(c, "ERR Number of keys can't be negative");
        return;
    }
    if (numkeys > c->argc - 3) {
        replyError(c, "ERR Number of keys can't be greater than number of args");
        return;
    }
    if (scriptRefuseWritesOrReply(c, f->flags) < 0) return;
    if (readOnly && !(f->flags & SCRIPT_FLAG_NO_WRITES)) {
        replyError(c, "ERR Can not execute a script with write flag using *_ro command.");
        return;
    }
    if (scriptRefuseOomOrReply(c, f->flags) == -1) return;
    functionLuaCall(c, f, (int)numkeys, readOnly);
}

/* The flags FCALL* has for the function it names (scriptCommandFlags). */
uint64_t fcallCommandFlags(Client *c, uint64_t cmdFlags) {
    FunctionInfo *f = findFunction(c->argv[1]);
    return f ? scriptFlagsToCommandFlags(cmdFlags, f->flags) : cmdFlags;
}

static void fcallCommand(Client *c) { fcallGeneric(c, 0); }

static void fcallRoCommand(Client *c) { fcallGeneric(c, 1); }

/* --- INFO memory --- */

/* Bytes of the registry outside the VM (used_memory_functions). */
static size_t registryBytes(void) {
    size_t bytes = (htabBuckets(&live.libs) + htabBuckets(&live.index)) * sizeof(void *);
    HtabIter it;
    FunctionLib *lib;
    htabIterInit(&it, &live.libs);
    while ((lib = htabIterNext(&it))) {
        bytes += sizeof(*lib) + sdsAllocSize(lib->name) + sdsAllocSize(lib->code) + lib->cap * sizeof(void *);
        for (size_t i = 0; i < lib->nfuncs; i++) {
            FunctionInfo *f = lib->funcs[i];
            bytes += sizeof(*f) + sdsAllocSize(f->name) + sdsAllocSize(f->key) +
                     (f->desc ? sdsAllocSize(f->desc) : 0);
        }
    }
    htabIterRelease(&it);
    return bytes;
}

void functionsMemoryInfo(ScriptMemoryInfo *m) {
    m->vmFunctions = functionLuaMemory();
    m->functions = registryBytes();
    m->numFunctions = live.nfuncs;
    m->numLibraries = htabSize(&live.libs);
}

/* --- command table --- */

static Command functionSubcommands[] = {
    {.name = "load", .proc = functionLoadCommand},
    {.name = "stats", .proc = functionStatsCommand},
    {.name = "dump", .proc = functionDumpCommand},
    {.name = "kill", .proc = functionKillCommand},
    {.name = "help", .proc = functionHelpCommand},
    {.name = "flush", .proc = functionFlushCommand},
    {.name = "restore", .proc = functionRestoreCommand},
    {.name = "delete", .proc = functionDeleteCommand},
    {.name = "list", .proc = functionListCommand},
    {0},
};

/* MONITOR shows FCALL before the commands its function runs, even when
 * it is then refused (CMD_MONITOR_FIRST). */
Command functionCommands[] = {
    {.name = "function", .subcommands = functionSubcommands},
    {.name = "fcall", .proc = fcallCommand, .flags = CMD_MONITOR_FIRST | CMD_SCRIPT_FLAGS},
    {.name = "fcall_ro", .proc = fcallRoCommand, .flags = CMD_MONITOR_FIRST | CMD_SCRIPT_FLAGS},
    {0},
};
