/* misc.c -- test module: module options, versions and masks, keyspace
 * notifications and modified-key signals from a module, DbSize,
 * RandomKey, the key's name and database, the cluster API without
 * cluster mode.
 *
 *   misc.info                 [server version, type method version, the
 *                             two masks, cluster size, my id is NULL,
 *                             notify-keyspace-events flags]
 *   misc.notify key           NotifyKeyspaceEvent(GENERIC, "misc", key)
 *   misc.signal key           SignalModifiedKey (WATCH sees it)
 *   misc.touch key            opens key for writing and closes it: with
 *                             NO_IMPLICIT_SIGNAL_MODIFIED, WATCH sees nothing
 *   misc.dbsize | misc.randomkey | misc.keyname key */
#include "redismodule.h"

static int cmdInfo(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    (void)argv, (void)argc;
    RedisModule_ReplyWithArray(ctx, 7);
    RedisModule_ReplyWithLongLong(ctx, RedisModule_GetServerVersion());
    RedisModule_ReplyWithLongLong(ctx, RedisModule_GetTypeMethodVersion());
    RedisModule_ReplyWithLongLong(ctx, RedisModule_GetContextFlagsAll());
    RedisModule_ReplyWithLongLong(ctx, RedisModule_GetKeyspaceNotificationFlagsAll());
    RedisModule_ReplyWithLongLong(ctx, (long long)RedisModule_GetClusterSize());
    RedisModule_ReplyWithLongLong(ctx, RedisModule_GetMyClusterID() == NULL);
    return RedisModule_ReplyWithLongLong(ctx, RedisModule_GetNotifyKeyspaceEvents());
}

static int cmdNotify(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    if (argc != 2) return RedisModule_WrongArity(ctx);
    return RedisModule_ReplyWithLongLong(ctx,
                                         RedisModule_NotifyKeyspaceEvent(ctx, REDISMODULE_NOTIFY_GENERIC, "misc", argv[1]));
}

static int cmdSignal(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    if (argc != 2) return RedisModule_WrongArity(ctx);
    return RedisModule_ReplyWithLongLong(ctx, RedisModule_SignalModifiedKey(ctx, argv[1]));
}

static int cmdTouch(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    if (argc != 2) return RedisModule_WrongArity(ctx);
    RedisModuleKey *k = RedisModule_OpenKey(ctx, argv[1], REDISMODULE_WRITE);
    RedisModule_CloseKey(k);
    return RedisModule_ReplyWithSimpleString(ctx, "OK");
}

static int cmdDbSize(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    (void)argv, (void)argc;
    return RedisModule_ReplyWithLongLong(ctx, (long long)RedisModule_DbSize(ctx));
}

static int cmdRandomKey(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    (void)argv, (void)argc;
    RedisModuleString *k = RedisModule_RandomKey(ctx);
    if (!k) return RedisModule_ReplyWithNull(ctx);
    RedisModule_ReplyWithString(ctx, k);
    RedisModule_FreeString(ctx, k);
    return REDISMODULE_OK;
}

static int cmdKeyName(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    if (argc != 2) return RedisModule_WrongArity(ctx);
    RedisModuleKey *k = RedisModule_OpenKey(ctx, argv[1], REDISMODULE_READ | REDISMODULE_WRITE);
    RedisModule_ReplyWithArray(ctx, 2);
    RedisModule_ReplyWithString(ctx, (RedisModuleString *)RedisModule_GetKeyNameFromModuleKey(k));
    RedisModule_ReplyWithLongLong(ctx, RedisModule_GetDbIdFromModuleKey(k));
    RedisModule_CloseKey(k);
    return REDISMODULE_OK;
}

int RedisModule_OnLoad(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    (void)argv, (void)argc;
    if (RedisModule_Init(ctx, "misc", 1, REDISMODULE_APIVER_1) == REDISMODULE_ERR) return REDISMODULE_ERR;
    RedisModule_SetModuleOptions(ctx, REDISMODULE_OPTIONS_HANDLE_IO_ERRORS |
                                          REDISMODULE_OPTION_NO_IMPLICIT_SIGNAL_MODIFIED);
    struct {
        const char *name;
        RedisModuleCmdFunc fn;
        const char *flags;
        int first;
    } cmds[] = {{"misc.info", cmdInfo, "readonly", 0},     {"misc.notify", cmdNotify, "readonly", 1},
                {"misc.signal", cmdSignal, "write", 1},    {"misc.touch", cmdTouch, "write", 1},
                {"misc.dbsize", cmdDbSize, "readonly", 0}, {"misc.randomkey", cmdRandomKey, "readonly", 0},
                {"misc.keyname", cmdKeyName, "readonly", 1}};
    for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
        if (RedisModule_CreateCommand(ctx, cmds[i].name, cmds[i].fn, cmds[i].flags, cmds[i].first, cmds[i].first,
                                      cmds[i].first ? 1 : 0) == REDISMODULE_ERR)
            return REDISMODULE_ERR;
    return REDISMODULE_OK;
}
