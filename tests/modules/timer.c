/* timer.c -- test module: timers (CreateTimer, StopTimer, GetTimerInfo).
 *
 *   tm.set key value ms   a timer that SETs key (Call with "!") after ms;
 *                         replies the timer id (> 0)
 *   tm.info id            [rc, remaining <= 1000000 ms]
 *   tm.stop id            rc of StopTimer (the data freed when OK) */
#include <stdlib.h>
#include <string.h>

#include "redismodule.h"

typedef struct Job {
    RedisModuleString *key, *value;
} Job;

static void fire(RedisModuleCtx *ctx, void *data) {
    Job *j = data;
    RedisModuleCallReply *r = RedisModule_Call(ctx, "SET", "!ss", j->key, j->value);
    RedisModule_ReplyWithLongLong(ctx, 1); /* goes nowhere */
    RedisModule_FreeCallReply(r);
    RedisModule_FreeString(NULL, j->key);
    RedisModule_FreeString(NULL, j->value);
    RedisModule_Free(j);
}

static int cmdSet(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    long long ms;
    if (argc != 4 || RedisModule_StringToLongLong(argv[3], &ms) != REDISMODULE_OK) return RedisModule_WrongArity(ctx);
    Job *j = RedisModule_Alloc(sizeof(*j));
    j->key = RedisModule_CreateStringFromString(NULL, argv[1]);
    j->value = RedisModule_CreateStringFromString(NULL, argv[2]);
    RedisModuleTimerID id = RedisModule_CreateTimer(ctx, ms, fire, j);
    return RedisModule_ReplyWithLongLong(ctx, id > 0);
}

static RedisModuleTimerID lastId(RedisModuleString *s) {
    long long v = 0;
    RedisModule_StringToLongLong(s, &v);
    return (RedisModuleTimerID)v;
}

static RedisModuleTimerID ids[64];
static int nids;

static int cmdSetId(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    long long ms;
    if (argc != 4 || RedisModule_StringToLongLong(argv[3], &ms) != REDISMODULE_OK) return RedisModule_WrongArity(ctx);
    Job *j = RedisModule_Alloc(sizeof(*j));
    j->key = RedisModule_CreateStringFromString(NULL, argv[1]);
    j->value = RedisModule_CreateStringFromString(NULL, argv[2]);
    if (nids == 64) nids = 0;
    ids[nids] = RedisModule_CreateTimer(ctx, ms, fire, j);
    return RedisModule_ReplyWithLongLong(ctx, nids++);
}

/* tm.info slot / tm.stop slot: the timer created by tm.setid's slot */
static int cmdInfo(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    if (argc != 2) return RedisModule_WrongArity(ctx);
    RedisModuleTimerID id = ids[lastId(argv[1]) % 64];
    uint64_t rem = 0;
    void *data = NULL;
    int rc = RedisModule_GetTimerInfo(ctx, id, &rem, &data);
    RedisModule_ReplyWithArray(ctx, 2);
    RedisModule_ReplyWithLongLong(ctx, rc);
    return RedisModule_ReplyWithLongLong(ctx, rc == REDISMODULE_OK ? (rem <= 1000000 && data != NULL) : -1);
}

static int cmdStop(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    if (argc != 2) return RedisModule_WrongArity(ctx);
    RedisModuleTimerID id = ids[lastId(argv[1]) % 64];
    void *data = NULL;
    int rc = RedisModule_StopTimer(ctx, id, &data);
    if (rc == REDISMODULE_OK) {
        Job *j = data;
        RedisModule_FreeString(NULL, j->key);
        RedisModule_FreeString(NULL, j->value);
        RedisModule_Free(j);
    }
    return RedisModule_ReplyWithLongLong(ctx, rc);
}

int RedisModule_OnLoad(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    (void)argv, (void)argc;
    if (RedisModule_Init(ctx, "timer", 1, REDISMODULE_APIVER_1) == REDISMODULE_ERR) return REDISMODULE_ERR;
    if (RedisModule_CreateCommand(ctx, "tm.set", cmdSet, "write", 1, 1, 1) == REDISMODULE_ERR ||
        RedisModule_CreateCommand(ctx, "tm.setid", cmdSetId, "write", 1, 1, 1) == REDISMODULE_ERR ||
        RedisModule_CreateCommand(ctx, "tm.info", cmdInfo, "readonly", 0, 0, 0) == REDISMODULE_ERR ||
        RedisModule_CreateCommand(ctx, "tm.stop", cmdStop, "write", 0, 0, 0) == REDISMODULE_ERR)
        return REDISMODULE_ERR;
    return REDISMODULE_OK;
}
