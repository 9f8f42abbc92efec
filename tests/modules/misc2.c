/* misc2.c -- test module: the getkeys-api family, GetCommandKeys, stream
 * IDs as strings, absolute expire and LRU/LFU of a key, clients by id,
 * the current command's name.
 *
 *   gk.keys [key K | ro K | far | ...]  getkeys-api: in a position request
 *                             "key" marks the next argument a key (KeyAtPos),
 *                             "ro" one with RO|ACCESS, "far" a position past
 *                             the arguments; else replies IsKeysPositionRequest
 *   gk.legacy K X             getkeys-api with first/last/step 1,1,1: its
 *                             callback names argument 2
 *   gk.sub get [key K ...]    a getkeys-api subcommand (as gk.keys);
 *   gk.sub name               GetCurrentCommandName in a subcommand
 *   gk.introspect flags|noflags cmd [arg ...]
 *                             GetCommandKeys(WithFlags) of cmd arg...:
 *                             [[pos, flags] ...], or the errno's name
 *   sid.fmt ms seq | sid.parse str
 *   exp.getabs K | exp.setabs K ms | exp.setabsro K ms
 *   lru.get K | lru.set K ms | lfu.get K | lfu.set K freq
 *                             (a key opened for reading only that does not
 *                             exist: "nokey", as Redis gives NULL for it)
 *   cli.info self|ID [ver]    [ret, flags, id is ID, addr, port > 0, db]
 *   cli.getname self|ID | cli.setname self|ID name
 *   cmd.name                  GetCurrentCommandName
 *   dig.set K n               a value of type m2digtype holding n; its digest
 *                             mixes GetKeyNameFromDigest, GetDbIdFromDigest
 *                             and n, and remembers the key and database
 *   dig.last                  [key, db] of the last digest callback
 *   reset.data restart_aof async   ResetDataset
 *   ch.pub C.. | ch.sub C.. | ch.psub P.. | ch.unsub C..
 *                             getchannels-api: in a channel position request
 *                             each argument is a channel with the publish /
 *                             subscribe / pattern-subscribe / unsubscribe
 *                             flags; else [IsChannelsPositionRequest,
 *                             IsKeysPositionRequest] */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "redismodule.h"

static int argIs(RedisModuleString *s, const char *what) {
    size_t len;
    const char *p = RedisModule_StringPtrLen(s, &len);
    return len == strlen(what) && !strncasecmp(p, what, len);
}

static int replyErrno(RedisModuleCtx *ctx, int e) {
    const char *n = e == ENOENT ? "ENOENT" : e == EINVAL ? "EINVAL" : e == 0 ? "0" : "OTHER";
    return RedisModule_ReplyWithSimpleString(ctx, n);
}

/* Marks the keys named by the "key"/"ro"/"far" words from index from. */
static void markKeys(RedisModuleCtx *ctx, RedisModuleString **argv, int argc, int from) {
    for (int i = from; i < argc; i++) {
        if (argIs(argv[i], "key") && i + 1 < argc)
            RedisModule_KeyAtPos(ctx, i + 1);
        else if (argIs(argv[i], "ro") && i + 1 < argc)
            RedisModule_KeyAtPosWithFlags(ctx, i + 1, REDISMODULE_CMD_KEY_RO | REDISMODULE_CMD_KEY_ACCESS);
        else if (argIs(argv[i], "far"))
            RedisModule_KeyAtPos(ctx, argc + 5);
    }
}

static int cmdKeys(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    if (RedisModule_IsKeysPositionRequest(ctx)) {
        markKeys(ctx, argv, argc, 1);
        return REDISMODULE_OK;
    }
    return RedisModule_ReplyWithLongLong(ctx, RedisModule_IsKeysPositionRequest(ctx));
}

static int cmdLegacy(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    (void)argv;
    if (RedisModule_IsKeysPositionRequest(ctx)) {
        if (argc > 2) RedisModule_KeyAtPos(ctx, 2);
        return REDISMODULE_OK;
    }
    return RedisModule_ReplyWithSimpleString(ctx, "OK");
}

static int cmdSubGet(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    if (RedisModule_IsKeysPositionRequest(ctx)) {
        markKeys(ctx, argv, argc, 2);
        return REDISMODULE_OK;
    }
    return RedisModule_ReplyWithSimpleString(ctx, "OK");
}

static int cmdName(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    (void)argv, (void)argc;
    const char *n = RedisModule_GetCurrentCommandName(ctx);
    return n ? RedisModule_ReplyWithCString(ctx, n) : RedisModule_ReplyWithNull(ctx);
}

static int cmdIntrospect(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    if (argc < 2) return RedisModule_WrongArity(ctx);
    int withFlags = argIs(argv[1], "flags");
    int num = -7, *flags = NULL;
    errno = 12345;
    int *pos = withFlags ? RedisModule_GetCommandKeysWithFlags(ctx, argv + 2, argc - 2, &num, &flags)
                         : RedisModule_GetCommandKeys(ctx, argv + 2, argc - 2, &num);
    if (!pos) {
        RedisModule_ReplyWithArray(ctx, 2);
        RedisModule_ReplyWithLongLong(ctx, num);
        return replyErrno(ctx, errno);
    }
    RedisModule_ReplyWithArray(ctx, num);
    for (int i = 0; i < num; i++) {
        RedisModule_ReplyWithArray(ctx, 2);
        RedisModule_ReplyWithLongLong(ctx, pos[i]);
        RedisModule_ReplyWithLongLong(ctx, withFlags ? flags[i] : -1);
    }
    RedisModule_Free(pos);
    if (flags) RedisModule_Free(flags);
    return REDISMODULE_OK;
}

static int cmdSidFmt(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    if (argc != 3) return RedisModule_WrongArity(ctx);
    RedisModuleStreamID id;
    unsigned long long ms, seq;
    if (RedisModule_StringToULongLong(argv[1], &ms) != REDISMODULE_OK ||
        RedisModule_StringToULongLong(argv[2], &seq) != REDISMODULE_OK)
        return RedisModule_ReplyWithError(ctx, "ERR bad number");
    id.ms = ms;
    id.seq = seq;
    RedisModuleString *s = RedisModule_CreateStringFromStreamID(ctx, &id);
    RedisModule_ReplyWithString(ctx, s);
    RedisModule_FreeString(ctx, s);
    return REDISMODULE_OK;
}

static int cmdSidParse(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    if (argc != 2) return RedisModule_WrongArity(ctx);
    RedisModuleStreamID id = {7, 7};
    if (RedisModule_StringToStreamID(argv[1], &id) != REDISMODULE_OK)
        return RedisModule_ReplyWithError(ctx, "ERR invalid");
    RedisModuleString *s = RedisModule_CreateStringFromStreamID(ctx, &id);
    RedisModule_ReplyWithString(ctx, s);
    RedisModule_FreeString(ctx, s);
    return REDISMODULE_OK;
}

static int cmdExpGetAbs(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    if (argc != 2) return RedisModule_WrongArity(ctx);
    RedisModuleKey *k = RedisModule_OpenKey(ctx, argv[1], REDISMODULE_READ);
    if (!k) return RedisModule_ReplyWithSimpleString(ctx, "nokey");
    mstime_t t = RedisModule_GetAbsExpire(k);
    RedisModule_CloseKey(k);
    return RedisModule_ReplyWithLongLong(ctx, t);
}

static int setAbs(RedisModuleCtx *ctx, RedisModuleString **argv, int argc, int mode) {
    if (argc != 3) return RedisModule_WrongArity(ctx);
    long long when;
    if (RedisModule_StringToLongLong(argv[2], &when) != REDISMODULE_OK)
        return RedisModule_ReplyWithError(ctx, "ERR bad number");
    RedisModuleKey *k = RedisModule_OpenKey(ctx, argv[1], mode);
    if (!k) return RedisModule_ReplyWithSimpleString(ctx, "nokey");
    int rc = RedisModule_SetAbsExpire(k, when);
    RedisModule_CloseKey(k);
    return RedisModule_ReplyWithLongLong(ctx, rc);
}

static int cmdExpSetAbs(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    return setAbs(ctx, argv, argc, REDISMODULE_READ | REDISMODULE_WRITE);
}

static int cmdExpSetAbsRo(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    return setAbs(ctx, argv, argc, REDISMODULE_READ);
}

/* [rc, value] of GetLRU / GetLFU. */
static int cmdLruGet(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    if (argc != 2) return RedisModule_WrongArity(ctx);
    RedisModuleKey *k = RedisModule_OpenKey(ctx, argv[1], REDISMODULE_READ | REDISMODULE_OPEN_KEY_NOTOUCH);
    if (!k) return RedisModule_ReplyWithSimpleString(ctx, "nokey");
    mstime_t v = 12345;
    int rc = RedisModule_GetLRU(k, &v);
    RedisModule_CloseKey(k);
    RedisModule_ReplyWithArray(ctx, 2);
    RedisModule_ReplyWithLongLong(ctx, rc);
    return RedisModule_ReplyWithLongLong(ctx, v);
}

static int cmdLfuGet(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    if (argc != 2) return RedisModule_WrongArity(ctx);
    RedisModuleKey *k = RedisModule_OpenKey(ctx, argv[1], REDISMODULE_READ | REDISMODULE_OPEN_KEY_NOTOUCH);
    if (!k) return RedisModule_ReplyWithSimpleString(ctx, "nokey");
    long long v = 12345;
    int rc = RedisModule_GetLFU(k, &v);
    RedisModule_CloseKey(k);
    RedisModule_ReplyWithArray(ctx, 2);
    RedisModule_ReplyWithLongLong(ctx, rc);
    return RedisModule_ReplyWithLongLong(ctx, v);
}

/* [SetLRU's rc, GetLRU's rc, value] (or LFU's), in one command. */
static int setAndGet(RedisModuleCtx *ctx, RedisModuleString **argv, int argc, int lfu) {
    if (argc != 3) return RedisModule_WrongArity(ctx);
    long long n;
    if (RedisModule_StringToLongLong(argv[2], &n) != REDISMODULE_OK)
        return RedisModule_ReplyWithError(ctx, "ERR bad number");
    RedisModuleKey *k = RedisModule_OpenKey(ctx, argv[1], REDISMODULE_READ | REDISMODULE_OPEN_KEY_NOTOUCH);
    if (!k) return RedisModule_ReplyWithSimpleString(ctx, "nokey");
    int rc = lfu ? RedisModule_SetLFU(k, n) : RedisModule_SetLRU(k, n);
    long long v = 12345;
    int rc2;
    if (lfu) {
        rc2 = RedisModule_GetLFU(k, &v);
    } else {
        mstime_t t = 12345;
        rc2 = RedisModule_GetLRU(k, &t);
        v = t;
    }
    RedisModule_CloseKey(k);
    RedisModule_ReplyWithArray(ctx, 3);
    RedisModule_ReplyWithLongLong(ctx, rc);
    RedisModule_ReplyWithLongLong(ctx, rc2);
    return RedisModule_ReplyWithLongLong(ctx, v);
}

static int cmdLruSet(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) { return setAndGet(ctx, argv, argc, 0); }
static int cmdLfuSet(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) { return setAndGet(ctx, argv, argc, 1); }

static unsigned long long clientArg(RedisModuleCtx *ctx, RedisModuleString *s) {
    if (argIs(s, "self")) return RedisModule_GetClientId(ctx);
    unsigned long long id = 0;
    RedisModule_StringToULongLong(s, &id);
    return id;
}

static int cmdCliInfo(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    if (argc != 2 && argc != 3) return RedisModule_WrongArity(ctx);
    unsigned long long id = clientArg(ctx, argv[1]);
    RedisModuleClientInfo ci;
    memset(&ci, 0x55, sizeof(ci));
    ci.version = 1;
    if (argc == 3) {
        long long v = 1;
        RedisModule_StringToLongLong(argv[2], &v);
        if (v == 0) return RedisModule_ReplyWithLongLong(ctx, RedisModule_GetClientInfoById(NULL, id));
        ci.version = (uint64_t)v;
    }
    int rc = RedisModule_GetClientInfoById(&ci, id);
    if (rc != REDISMODULE_OK) return RedisModule_ReplyWithLongLong(ctx, rc);
    RedisModule_ReplyWithArray(ctx, 7);
    RedisModule_ReplyWithLongLong(ctx, rc);
    RedisModule_ReplyWithLongLong(ctx, (long long)ci.version);
    RedisModule_ReplyWithLongLong(ctx, (long long)ci.flags);
    RedisModule_ReplyWithLongLong(ctx, ci.id == id);
    RedisModule_ReplyWithStringBuffer(ctx, ci.addr, strnlen(ci.addr, sizeof(ci.addr)));
    RedisModule_ReplyWithLongLong(ctx, ci.port > 0);
    return RedisModule_ReplyWithLongLong(ctx, ci.db);
}

static int cmdCliGetName(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    if (argc != 2) return RedisModule_WrongArity(ctx);
    errno = 0;
    RedisModuleString *n = RedisModule_GetClientNameById(ctx, clientArg(ctx, argv[1]));
    if (!n) return replyErrno(ctx, errno);
    RedisModule_ReplyWithString(ctx, n);
    RedisModule_FreeString(ctx, n);
    return REDISMODULE_OK;
}

static int cmdCliSetName(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    if (argc != 3) return RedisModule_WrongArity(ctx);
    errno = 0;
    if (RedisModule_SetClientNameById(clientArg(ctx, argv[1]), argv[2]) == REDISMODULE_OK)
        return RedisModule_ReplyWithSimpleString(ctx, "OK");
    return replyErrno(ctx, errno);
}

static RedisModuleType *digType;
static char lastKey[64];
static long long lastDb = -100;

static void *digLoad(RedisModuleIO *io, int encver) {
    (void)encver;
    long long *v = RedisModule_Alloc(sizeof(long long));
    *v = (long long)RedisModule_LoadSigned(io);
    return v;
}

static void digSave(RedisModuleIO *io, void *value) { RedisModule_SaveSigned(io, *(long long *)value); }

static void digFree(void *value) { RedisModule_Free(value); }

static void digDigest(RedisModuleDigest *md, void *value) {
    const RedisModuleString *key = RedisModule_GetKeyNameFromDigest(md);
    size_t len = 0;
    const char *p = key ? RedisModule_StringPtrLen(key, &len) : "";
    if (len >= sizeof(lastKey)) len = sizeof(lastKey) - 1;
    memcpy(lastKey, p, len);
    lastKey[len] = '\0';
    lastDb = RedisModule_GetDbIdFromDigest(md);
    RedisModule_DigestAddStringBuffer(md, p, len);
    RedisModule_DigestAddLongLong(md, lastDb);
    RedisModule_DigestAddLongLong(md, *(long long *)value);
    RedisModule_DigestEndSequence(md);
}

static int cmdDigSet(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    if (argc != 3) return RedisModule_WrongArity(ctx);
    long long n;
    if (RedisModule_StringToLongLong(argv[2], &n) != REDISMODULE_OK)
        return RedisModule_ReplyWithError(ctx, "ERR bad number");
    RedisModuleKey *k = RedisModule_OpenKey(ctx, argv[1], REDISMODULE_READ | REDISMODULE_WRITE);
    long long *v = RedisModule_Alloc(sizeof(long long));
    *v = n;
    if (RedisModule_ModuleTypeSetValue(k, digType, v) != REDISMODULE_OK) RedisModule_Free(v);
    RedisModule_CloseKey(k);
    return RedisModule_ReplyWithSimpleString(ctx, "OK");
}

static int cmdDigLast(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    (void)argv, (void)argc;
    RedisModule_ReplyWithArray(ctx, 2);
    RedisModule_ReplyWithCString(ctx, lastKey);
    return RedisModule_ReplyWithLongLong(ctx, lastDb);
}

static int cmdReset(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    long long restart = 0, async = 0;
    if (argc != 3 || RedisModule_StringToLongLong(argv[1], &restart) != REDISMODULE_OK ||
        RedisModule_StringToLongLong(argv[2], &async) != REDISMODULE_OK)
        return RedisModule_WrongArity(ctx);
    RedisModule_ResetDataset((int)restart, (int)async);
    return RedisModule_ReplyWithSimpleString(ctx, "OK");
}

static int channelsCmd(RedisModuleCtx *ctx, RedisModuleString **argv, int argc, int flags) {
    (void)argv;
    if (RedisModule_IsChannelsPositionRequest(ctx)) {
        for (int i = 1; i < argc; i++) RedisModule_ChannelAtPosWithFlags(ctx, i, flags);
        RedisModule_KeyAtPos(ctx, 1); /* not a key request: ignored */
        return REDISMODULE_OK;
    }
    RedisModule_ReplyWithArray(ctx, 2);
    RedisModule_ReplyWithLongLong(ctx, RedisModule_IsChannelsPositionRequest(ctx));
    return RedisModule_ReplyWithLongLong(ctx, RedisModule_IsKeysPositionRequest(ctx));
}

static int cmdChPub(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    return channelsCmd(ctx, argv, argc, REDISMODULE_CMD_CHANNEL_PUBLISH);
}
static int cmdChSub(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    return channelsCmd(ctx, argv, argc, REDISMODULE_CMD_CHANNEL_SUBSCRIBE);
}
static int cmdChPsub(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    return channelsCmd(ctx, argv, argc, REDISMODULE_CMD_CHANNEL_SUBSCRIBE | REDISMODULE_CMD_CHANNEL_PATTERN);
}
static int cmdChUnsub(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    return channelsCmd(ctx, argv, argc, REDISMODULE_CMD_CHANNEL_UNSUBSCRIBE);
}

int RedisModule_OnLoad(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    (void)argv, (void)argc;
    if (RedisModule_Init(ctx, "misc2", 1, REDISMODULE_APIVER_1) == REDISMODULE_ERR) return REDISMODULE_ERR;
    RedisModuleTypeMethods tm = {.version = REDISMODULE_TYPE_METHOD_VERSION,
                                 .rdb_load = digLoad,
                                 .rdb_save = digSave,
                                 .free = digFree,
                                 .digest = digDigest};
    digType = RedisModule_CreateDataType(ctx, "m2digtype", 0, &tm);
    if (!digType) return REDISMODULE_ERR;
    struct {
        const char *name;
        RedisModuleCmdFunc fn;
        const char *flags;
        int first, last, step;
    } cmds[] = {
        {"gk.keys", cmdKeys, "getkeys-api", 0, 0, 0},
        {"gk.legacy", cmdLegacy, "getkeys-api", 1, 1, 1},
        {"gk.introspect", cmdIntrospect, "", 0, 0, 0},
        {"sid.fmt", cmdSidFmt, "", 0, 0, 0},
        {"sid.parse", cmdSidParse, "", 0, 0, 0},
        {"exp.getabs", cmdExpGetAbs, "readonly", 1, 1, 1},
        {"exp.setabs", cmdExpSetAbs, "write", 1, 1, 1},
        {"exp.setabsro", cmdExpSetAbsRo, "write", 1, 1, 1},
        {"lru.get", cmdLruGet, "readonly", 1, 1, 1},
        {"lru.set", cmdLruSet, "write", 1, 1, 1},
        {"lfu.get", cmdLfuGet, "readonly", 1, 1, 1},
        {"lfu.set", cmdLfuSet, "write", 1, 1, 1},
        {"cli.info", cmdCliInfo, "", 0, 0, 0},
        {"cli.getname", cmdCliGetName, "", 0, 0, 0},
        {"cli.setname", cmdCliSetName, "", 0, 0, 0},
        {"cmd.name", cmdName, "", 0, 0, 0},
        {"dig.set", cmdDigSet, "write", 1, 1, 1},
        {"dig.last", cmdDigLast, "", 0, 0, 0},
        {"reset.data", cmdReset, "write", 0, 0, 0},
        {"ch.pub", cmdChPub, "getchannels-api", 0, 0, 0},
        {"ch.sub", cmdChSub, "getchannels-api", 0, 0, 0},
        {"ch.psub", cmdChPsub, "getchannels-api", 0, 0, 0},
        {"ch.unsub", cmdChUnsub, "getchannels-api", 0, 0, 0},
    };
    for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
        if (RedisModule_CreateCommand(ctx, cmds[i].name, cmds[i].fn, cmds[i].flags, cmds[i].first, cmds[i].last,
                                      cmds[i].step) == REDISMODULE_ERR)
            return REDISMODULE_ERR;
    if (RedisModule_CreateCommand(ctx, "gk.sub", NULL, "", 0, 0, 0) == REDISMODULE_ERR) return REDISMODULE_ERR;
    RedisModuleCommand *parent = RedisModule_GetCommand(ctx, "gk.sub");
    if (RedisModule_CreateSubcommand(parent, "get", cmdSubGet, "getkeys-api", 0, 0, 0) == REDISMODULE_ERR ||
        RedisModule_CreateSubcommand(parent, "name", cmdName, "", 0, 0, 0) == REDISMODULE_ERR)
        return REDISMODULE_ERR;
    return REDISMODULE_OK;
}
