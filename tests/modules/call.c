/* call.c -- test module: RedisModule_Call with its format flags, the call
 * reply accessors, and replication (Replicate, ReplicateVerbatim, "!").
 *
 *   call.run FLAGS cmd [arg ...]   Call(cmd, "v"+FLAGS); the reply as is
 *                                  (ReplyWithCallReply), or when NULL the
 *                                  error "ERR errno=<name>"
 *   call.proto FLAGS cmd [arg ...] the reply's RESP bytes (CallReplyProto)
 *   call.walk FLAGS cmd [arg ...]  the reply described through the
 *                                  accessors: [type, value or children]
 *   call.setget key val            SET (with "!") then GET
 *   call.repl key val              Replicate: INCR key, SET key val (two
 *                                  effects: MULTI/EXEC)
 *   call.verbatim key val          SET through the key API? no: Call without
 *                                  "!" then ReplicateVerbatim */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "redismodule.h"

static const char *errnoName(int e) {
    switch (e) {
    case ENOENT: return "ENOENT";
    case EINVAL: return "EINVAL";
    case EACCES: return "EACCES";
    case ENOSPC: return "ENOSPC";
    case ENOTSUP: return "ENOTSUP";
    case ESPIPE: return "ESPIPE";
    case EROFS: return "EROFS";
    case EBUSY: return "EBUSY";
    default: return "other";
    }
}

/* fmt = "v" + flags (flags is argv[1], "-" for none) */
static RedisModuleCallReply *callFromArgs(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    char fmt[32] = "v";
    const char *flags = RedisModule_StringPtrLen(argv[1], NULL);
    if (strcmp(flags, "-") != 0) strncat(fmt, flags, sizeof(fmt) - 2);
    const char *cmd = RedisModule_StringPtrLen(argv[2], NULL);
    errno = 0;
    return RedisModule_Call(ctx, cmd, fmt, argv + 3, (size_t)(argc - 3));
}

static int cmdRun(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    if (argc < 3) return RedisModule_WrongArity(ctx);
    RedisModuleCallReply *r = callFromArgs(ctx, argv, argc);
    if (!r) {
        char buf[64];
        snprintf(buf, sizeof(buf), "ERR errno=%s", errnoName(errno));
        return RedisModule_ReplyWithError(ctx, buf);
    }
    if (RedisModule_ReplyWithCallReply(ctx, r) != REDISMODULE_OK)
        RedisModule_ReplyWithError(ctx, "ERR reply not sendable");
    RedisModule_FreeCallReply(r);
    return REDISMODULE_OK;
}

static int cmdProto(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    if (argc < 3) return RedisModule_WrongArity(ctx);
    RedisModule_AutoMemory(ctx);
    RedisModuleCallReply *r = callFromArgs(ctx, argv, argc);
    if (!r) return RedisModule_ReplyWithError(ctx, "ERR call failed");
    size_t len;
    const char *p = RedisModule_CallReplyProto(r, &len);
    return RedisModule_ReplyWithStringBuffer(ctx, p, len);
}

static void walk(RedisModuleCtx *ctx, RedisModuleCallReply *r) {
    size_t len;
    const char *p;
    int type = RedisModule_CallReplyType(r);
    RedisModule_ReplyWithArray(ctx, 2);
    RedisModule_ReplyWithLongLong(ctx, type);
    switch (type) {
    case REDISMODULE_REPLY_STRING:
    case REDISMODULE_REPLY_ERROR:
        p = RedisModule_CallReplyStringPtr(r, &len);
        RedisModule_ReplyWithStringBuffer(ctx, p, len);
        break;
    case REDISMODULE_REPLY_INTEGER: RedisModule_ReplyWithLongLong(ctx, RedisModule_CallReplyInteger(r)); break;
    case REDISMODULE_REPLY_DOUBLE: {
        char buf[64];
        snprintf(buf, sizeof(buf), "%.17g", RedisModule_CallReplyDouble(r));
        RedisModule_ReplyWithCString(ctx, buf);
        break;
    }
    case REDISMODULE_REPLY_BOOL: RedisModule_ReplyWithLongLong(ctx, RedisModule_CallReplyBool(r)); break;
    case REDISMODULE_REPLY_BIG_NUMBER:
        p = RedisModule_CallReplyBigNumber(r, &len);
        RedisModule_ReplyWithStringBuffer(ctx, p, len);
        break;
    case REDISMODULE_REPLY_VERBATIM_STRING: {
        const char *fmt;
        p = RedisModule_CallReplyVerbatim(r, &len, &fmt);
        RedisModule_ReplyWithArray(ctx, 2);
        RedisModule_ReplyWithStringBuffer(ctx, fmt, 3);
        RedisModule_ReplyWithStringBuffer(ctx, p, len);
        break;
    }
    case REDISMODULE_REPLY_ARRAY:
    case REDISMODULE_REPLY_SET: {
        size_t n = RedisModule_CallReplyLength(r);
        RedisModule_ReplyWithArray(ctx, (long)n);
        for (size_t i = 0; i < n; i++)
            walk(ctx, type == REDISMODULE_REPLY_ARRAY ? RedisModule_CallReplyArrayElement(r, i)
                                                      : RedisModule_CallReplySetElement(r, i));
        break;
    }
    case REDISMODULE_REPLY_MAP: {
        size_t n = RedisModule_CallReplyLength(r);
        RedisModule_ReplyWithArray(ctx, (long)(2 * n));
        for (size_t i = 0; i < n; i++) {
            RedisModuleCallReply *k, *v;
            RedisModule_CallReplyMapElement(r, i, &k, &v);
            walk(ctx, k);
            walk(ctx, v);
        }
        break;
    }
    default: RedisModule_ReplyWithNull(ctx); break;
    }
}

static int cmdWalk(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    if (argc < 3) return RedisModule_WrongArity(ctx);
    RedisModule_AutoMemory(ctx);
    RedisModuleCallReply *r = callFromArgs(ctx, argv, argc);
    if (!r) return RedisModule_ReplyWithError(ctx, "ERR call failed");
    walk(ctx, r);
    return REDISMODULE_OK;
}

static int cmdSetGet(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    if (argc != 3) return RedisModule_WrongArity(ctx);
    RedisModuleCallReply *r = RedisModule_Call(ctx, "SET", "!ss", argv[1], argv[2]);
    RedisModule_FreeCallReply(r);
    r = RedisModule_Call(ctx, "GET", "s", argv[1]);
    RedisModule_ReplyWithCallReply(ctx, r);
    RedisModule_FreeCallReply(r);
    return REDISMODULE_OK;
}

static int cmdGet(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    if (argc != 2) return RedisModule_WrongArity(ctx);
    RedisModuleCallReply *r = RedisModule_Call(ctx, "GET", "s", argv[1]);
    RedisModule_ReplyWithCallReply(ctx, r);
    RedisModule_FreeCallReply(r);
    return REDISMODULE_OK;
}

static int cmdSet(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    if (argc != 3) return RedisModule_WrongArity(ctx);
    RedisModuleCallReply *r = RedisModule_Call(ctx, "SET", "!ss", argv[1], argv[2]);
    RedisModule_ReplyWithCallReply(ctx, r);
    RedisModule_FreeCallReply(r);
    return REDISMODULE_OK;
}

static int cmdRepl(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    if (argc != 3) return RedisModule_WrongArity(ctx);
    RedisModuleCallReply *r = RedisModule_Call(ctx, "INCR", "c", "counter");
    RedisModule_FreeCallReply(r);
    r = RedisModule_Call(ctx, "SET", "ss", argv[1], argv[2]);
    RedisModule_FreeCallReply(r);
    RedisModule_Replicate(ctx, "INCR", "c", "counter");
    RedisModule_Replicate(ctx, "SET", "sl", argv[1], 5LL);
    return RedisModule_ReplyWithSimpleString(ctx, "OK");
}

static int cmdVerbatimRepl(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    if (argc != 3) return RedisModule_WrongArity(ctx);
    RedisModuleCallReply *r = RedisModule_Call(ctx, "SET", "ss", argv[1], argv[2]);
    RedisModule_FreeCallReply(r);
    RedisModule_ReplicateVerbatim(ctx);
    return RedisModule_ReplyWithSimpleString(ctx, "OK");
}

int RedisModule_OnLoad(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    (void)argv, (void)argc;
    if (RedisModule_Init(ctx, "calls", 1, REDISMODULE_APIVER_1) == REDISMODULE_ERR) return REDISMODULE_ERR;
    if (RedisModule_CreateCommand(ctx, "call.run", cmdRun, "write", 0, 0, 0) == REDISMODULE_ERR ||
        RedisModule_CreateCommand(ctx, "call.proto", cmdProto, "write", 0, 0, 0) == REDISMODULE_ERR ||
        RedisModule_CreateCommand(ctx, "call.walk", cmdWalk, "write", 0, 0, 0) == REDISMODULE_ERR ||
        RedisModule_CreateCommand(ctx, "call.setget", cmdSetGet, "write deny-oom", 1, 1, 1) == REDISMODULE_ERR ||
        RedisModule_CreateCommand(ctx, "call.get", cmdGet, "readonly fast", 1, 1, 1) == REDISMODULE_ERR ||
        RedisModule_CreateCommand(ctx, "call.set", cmdSet, "write deny-oom", 1, 1, 1) == REDISMODULE_ERR ||
        RedisModule_CreateCommand(ctx, "call.repl", cmdRepl, "write", 1, 1, 1) == REDISMODULE_ERR ||
        RedisModule_CreateCommand(ctx, "call.verbatim", cmdVerbatimRepl, "write", 1, 1, 1) == REDISMODULE_ERR)
        return REDISMODULE_ERR;
    return REDISMODULE_OK;
}
