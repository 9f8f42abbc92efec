/* zrange.c -- test module: the sorted-set range iterators of the key API.
 *
 *   zr.score key min max minex maxex last   walk a score range (from its
 *       first member with Next, or with last=1 from its last with Prev)
 *   zr.lex key min max last                 the same for a lex range
 * Reply: [rc of the start, end reached at once, member, score, ...,
 *         Next/Prev after the end, CurrentElement after the end is NULL
 *         (it is not: both servers keep the last member)]
 * (min/max "inf"/"-inf" allowed for scores). */
#include <string.h>

#include "redismodule.h"

static int walk(RedisModuleCtx *ctx, RedisModuleKey *k, int rc, int last) {
    RedisModule_ReplyWithArray(ctx, REDISMODULE_POSTPONED_LEN);
    long n = 2;
    RedisModule_ReplyWithLongLong(ctx, rc);
    RedisModule_ReplyWithLongLong(ctx, RedisModule_ZsetRangeEndReached(k));
    if (rc == REDISMODULE_OK) {
        while (!RedisModule_ZsetRangeEndReached(k)) {
            double score;
            RedisModuleString *m = RedisModule_ZsetRangeCurrentElement(k, &score);
            RedisModule_ReplyWithString(ctx, m);
            RedisModule_ReplyWithDouble(ctx, score);
            RedisModule_FreeString(ctx, m);
            n += 2;
            if (last) RedisModule_ZsetRangePrev(k);
            else RedisModule_ZsetRangeNext(k);
        }
    }
    RedisModule_ReplyWithLongLong(ctx, last ? RedisModule_ZsetRangePrev(k) : RedisModule_ZsetRangeNext(k));
    RedisModuleString *after = RedisModule_ZsetRangeCurrentElement(k, NULL);
    RedisModule_ReplyWithLongLong(ctx, after == NULL);
    if (after) RedisModule_FreeString(ctx, after);
    RedisModule_ZsetRangeStop(k);
    RedisModule_ReplySetArrayLength(ctx, n + 2);
    RedisModule_CloseKey(k);
    return REDISMODULE_OK;
}

static int cmdScore(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    if (argc != 7) return RedisModule_WrongArity(ctx);
    double min, max;
    long long minex, maxex, last;
    if (RedisModule_StringToDouble(argv[2], &min) != REDISMODULE_OK ||
        RedisModule_StringToDouble(argv[3], &max) != REDISMODULE_OK ||
        RedisModule_StringToLongLong(argv[4], &minex) != REDISMODULE_OK ||
        RedisModule_StringToLongLong(argv[5], &maxex) != REDISMODULE_OK ||
        RedisModule_StringToLongLong(argv[6], &last) != REDISMODULE_OK)
        return RedisModule_ReplyWithError(ctx, "ERR bad argument");
    RedisModuleKey *k = RedisModule_OpenKey(ctx, argv[1], REDISMODULE_READ | REDISMODULE_WRITE);
    int rc = last ? RedisModule_ZsetLastInScoreRange(k, min, max, (int)minex, (int)maxex)
                  : RedisModule_ZsetFirstInScoreRange(k, min, max, (int)minex, (int)maxex);
    return walk(ctx, k, rc, (int)last);
}

static int cmdLex(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    if (argc != 5) return RedisModule_WrongArity(ctx);
    long long last;
    if (RedisModule_StringToLongLong(argv[4], &last) != REDISMODULE_OK)
        return RedisModule_ReplyWithError(ctx, "ERR bad argument");
    RedisModuleKey *k = RedisModule_OpenKey(ctx, argv[1], REDISMODULE_READ | REDISMODULE_WRITE);
    int rc = last ? RedisModule_ZsetLastInLexRange(k, argv[2], argv[3])
                  : RedisModule_ZsetFirstInLexRange(k, argv[2], argv[3]);
    return walk(ctx, k, rc, (int)last);
}

int RedisModule_OnLoad(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    (void)argv, (void)argc;
    if (RedisModule_Init(ctx, "zrange", 1, REDISMODULE_APIVER_1) == REDISMODULE_ERR) return REDISMODULE_ERR;
    if (RedisModule_CreateCommand(ctx, "zr.score", cmdScore, "readonly", 1, 1, 1) == REDISMODULE_ERR ||
        RedisModule_CreateCommand(ctx, "zr.lex", cmdLex, "readonly", 1, 1, 1) == REDISMODULE_ERR)
        return REDISMODULE_ERR;
    return REDISMODULE_OK;
}
