/* scan.c -- test module: the scan API (ScanCursorCreate/Restart/Destroy,
 * Scan, ScanKey).
 *
 *   scan.keys          every key of the database (Scan until it answers 0),
 *                      as "name:keytype"; then Restart and a second walk's
 *                      count is appended
 *   scan.key key       ScanKey until 0: [element, value or null, ...]
 *   scan.keyerr key    [ScanKey's answer, errno == EINVAL] */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "redismodule.h"

typedef struct Acc {
    RedisModuleCtx *ctx;
    long n;
    int reply;
} Acc;

static void onKey(RedisModuleCtx *ctx, RedisModuleString *name, RedisModuleKey *key, void *pd) {
    Acc *a = pd;
    (void)ctx;
    a->n++;
    if (!a->reply) return;
    size_t len;
    const char *p = RedisModule_StringPtrLen(name, &len);
    char buf[256];
    int n = snprintf(buf, sizeof(buf), "%.*s:%d", (int)len, p, key ? RedisModule_KeyType(key) : -1);
    RedisModule_ReplyWithStringBuffer(a->ctx, buf, (size_t)n);
}

static int cmdKeys(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    (void)argv;
    if (argc != 1) return RedisModule_WrongArity(ctx);
    RedisModuleScanCursor *c = RedisModule_ScanCursorCreate();
    Acc a = {ctx, 0, 1};
    RedisModule_ReplyWithArray(ctx, REDISMODULE_POSTPONED_LEN);
    while (RedisModule_Scan(ctx, c, onKey, &a)) {
    }
    int after = RedisModule_Scan(ctx, c, onKey, &a);
    RedisModule_ScanCursorRestart(c);
    Acc b = {ctx, 0, 0};
    while (RedisModule_Scan(ctx, c, onKey, &b)) {
    }
    RedisModule_ScanCursorDestroy(c);
    RedisModule_ReplyWithLongLong(ctx, after);
    RedisModule_ReplyWithLongLong(ctx, b.n);
    RedisModule_ReplySetArrayLength(ctx, a.n + 2);
    return REDISMODULE_OK;
}

static void onElem(RedisModuleKey *key, RedisModuleString *field, RedisModuleString *value, void *pd) {
    (void)key;
    Acc *a = pd;
    a->n += 2;
    if (!a->reply) return;
    RedisModule_ReplyWithString(a->ctx, field);
    if (value) RedisModule_ReplyWithString(a->ctx, value);
    else RedisModule_ReplyWithNull(a->ctx);
}

static int cmdKey(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    if (argc != 2) return RedisModule_WrongArity(ctx);
    RedisModuleKey *k = RedisModule_OpenKey(ctx, argv[1], REDISMODULE_READ);
    RedisModuleScanCursor *c = RedisModule_ScanCursorCreate();
    Acc a = {ctx, 0, 1};
    RedisModule_ReplyWithArray(ctx, REDISMODULE_POSTPONED_LEN);
    while (RedisModule_ScanKey(k, c, onElem, &a)) {
    }
    RedisModule_ScanCursorDestroy(c);
    RedisModule_ReplySetArrayLength(ctx, a.n);
    RedisModule_CloseKey(k);
    return REDISMODULE_OK;
}

static int cmdKeyErr(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    if (argc != 2) return RedisModule_WrongArity(ctx);
    RedisModuleKey *k = RedisModule_OpenKey(ctx, argv[1], REDISMODULE_READ | REDISMODULE_WRITE);
    RedisModuleScanCursor *c = RedisModule_ScanCursorCreate();
    Acc a = {ctx, 0, 0};
    errno = 0;
    int rc = RedisModule_ScanKey(k, c, onElem, &a);
    int inval = errno == EINVAL;
    RedisModule_ScanCursorDestroy(c);
    RedisModule_CloseKey(k);
    RedisModule_ReplyWithArray(ctx, 2);
    RedisModule_ReplyWithLongLong(ctx, rc);
    return RedisModule_ReplyWithLongLong(ctx, inval);
}

int RedisModule_OnLoad(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    (void)argv, (void)argc;
    if (RedisModule_Init(ctx, "scan", 1, REDISMODULE_APIVER_1) == REDISMODULE_ERR) return REDISMODULE_ERR;
    if (RedisModule_CreateCommand(ctx, "scan.keys", cmdKeys, "readonly", 0, 0, 0) == REDISMODULE_ERR ||
        RedisModule_CreateCommand(ctx, "scan.key", cmdKey, "readonly", 1, 1, 1) == REDISMODULE_ERR ||
        RedisModule_CreateCommand(ctx, "scan.keyerr", cmdKeyErr, "readonly", 1, 1, 1) == REDISMODULE_ERR)
        return REDISMODULE_ERR;
    return REDISMODULE_OK;
}
