/* misc3user.c -- test module: the user of misc3's shared API.
 *
 *   m3u.add a b     GetSharedAPI("misc3.add")(a, b), or nil when absent
 *   m3u.get name    1 when GetSharedAPI(name) finds it, else 0
 *   m3u.msgrecv type | m3u.msgsend id type payload   as misc3's m3.msg*
 *                   (a 9-character name: a non-zero module id on the bus;
 *                   the receiver sets umsg:<type>) */
#include <stdio.h>
#include <string.h>

#include "redismodule.h"

static RedisModuleCtx *detached;

static void msgReceived(RedisModuleCtx *ctx, const char *sender, uint8_t type, const unsigned char *payload,
                        uint32_t len) {
    (void)ctx;
    char key[16], val[256];
    snprintf(key, sizeof(key), "umsg:%u", (unsigned)type);
    if (len > sizeof(val) - REDISMODULE_NODE_ID_LEN - 1) len = sizeof(val) - REDISMODULE_NODE_ID_LEN - 1;
    memcpy(val, sender, REDISMODULE_NODE_ID_LEN);
    val[REDISMODULE_NODE_ID_LEN] = ':';
    memcpy(val + REDISMODULE_NODE_ID_LEN + 1, payload, len);
    RedisModuleCallReply *r = RedisModule_Call(detached, "SET", "cb", key, val, REDISMODULE_NODE_ID_LEN + 1 + len);
    if (r) RedisModule_FreeCallReply(r);
}

static int cmdMsgRecv(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    long long t;
    if (argc != 2 || RedisModule_StringToLongLong(argv[1], &t) != REDISMODULE_OK || t < 0 || t > 255)
        return RedisModule_ReplyWithError(ctx, "ERR type");
    RedisModule_RegisterClusterMessageReceiver(ctx, (uint8_t)t, msgReceived);
    return RedisModule_ReplyWithSimpleString(ctx, "OK");
}

static int cmdMsgSend(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    long long t;
    if (argc != 4 || RedisModule_StringToLongLong(argv[2], &t) != REDISMODULE_OK || t < 0 || t > 255)
        return RedisModule_ReplyWithError(ctx, "ERR type");
    size_t len;
    const char *payload = RedisModule_StringPtrLen(argv[3], &len);
    int rc = RedisModule_SendClusterMessage(ctx, RedisModule_StringPtrLen(argv[1], NULL), (uint8_t)t, payload,
                                            (uint32_t)len);
    return RedisModule_ReplyWithLongLong(ctx, rc == REDISMODULE_OK);
}

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
    if (RedisModule_CreateCommand(ctx, "m3u.msgrecv", cmdMsgRecv, "", 0, 0, 0) == REDISMODULE_ERR) return REDISMODULE_ERR;
    if (RedisModule_CreateCommand(ctx, "m3u.msgsend", cmdMsgSend, "", 0, 0, 0) == REDISMODULE_ERR) return REDISMODULE_ERR;
    detached = RedisModule_GetDetachedThreadSafeContext(ctx);
    return REDISMODULE_OK;
}

int RedisModule_OnUnload(RedisModuleCtx *ctx) {
    (void)ctx;
    if (detached) RedisModule_FreeThreadSafeContext(detached);
    detached = NULL;
    return REDISMODULE_OK;
}
