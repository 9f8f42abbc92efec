/* misc3user.c -- test module: the user of misc3's shared API.
 *
 *   m3u.add a b     GetSharedAPI("misc3.add")(a, b), or nil when absent
 *   m3u.get name    1 when GetSharedAPI(name) finds it, else 0 */
#include "redismodule.h"

typedef long long (*AddFn)(long long, long long);

static int cmdAdd(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    long long a, b;
    if (argc != 3 || RedisModule_StringToLongLong(argv[1], &a) != REDISMODULE_OK ||
        RedisModule_StringToLongLong(argv[2], &b) != REDISMODULE_OK)
        return RedisModule_ReplyWithError(ctx, "ERR args");
    AddFn fn = (AddFn)RedisModule_GetSharedAPI(ctx, "misc3.add");
    if (!fn) return RedisModule_ReplyWithNull(ctx);
    return RedisModule_ReplyWithLongLong(ctx, fn(a, b));
}

static int cmdGet(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    if (argc != 2) return RedisModule_WrongArity(ctx);
    return RedisModule_ReplyWithLongLong(ctx, RedisModule_GetSharedAPI(ctx, RedisModule_StringPtrLen(argv[1], NULL)) != NULL);
}

int RedisModule_OnLoad(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    (void)argv, (void)argc;
    if (RedisModule_Init(ctx, "misc3user", 1, REDISMODULE_APIVER_1) == REDISMODULE_ERR) return REDISMODULE_ERR;
    if (RedisModule_CreateCommand(ctx, "m3u.add", cmdAdd, "", 0, 0, 0) == REDISMODULE_ERR) return REDISMODULE_ERR;
    if (RedisModule_CreateCommand(ctx, "m3u.get", cmdGet, "", 0, 0, 0) == REDISMODULE_ERR) return REDISMODULE_ERR;
    return REDISMODULE_OK;
}
