/* apiprobe.c -- test module: which API functions the server exports.
 *
 *   probe.missing name [name ...]   the names ("RedisModule_" + name) the
 *                                   server's GetApi does not know */
#include <stdio.h>

#include "redismodule.h"

static int cmdMissing(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    RedisModule_ReplyWithArray(ctx, REDISMODULE_POSTPONED_LEN);
    long n = 0;
    for (int i = 1; i < argc; i++) {
        char full[160];
        void *fn = NULL;
        snprintf(full, sizeof(full), "RedisModule_%s", RedisModule_StringPtrLen(argv[i], NULL));
        if (RedisModule_GetApi(full, &fn) != REDISMODULE_OK || !fn) {
            RedisModule_ReplyWithString(ctx, argv[i]);
            n++;
        }
    }
    RedisModule_ReplySetArrayLength(ctx, n);
    return REDISMODULE_OK;
}

int RedisModule_OnLoad(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    (void)argv, (void)argc;
    if (RedisModule_Init(ctx, "apiprobe", 1, REDISMODULE_APIVER_1) == REDISMODULE_ERR) return REDISMODULE_ERR;
    return RedisModule_CreateCommand(ctx, "probe.missing", cmdMissing, "readonly", 0, 0, 0);
}
