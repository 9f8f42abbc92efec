/* info.c -- test module: the info API (RegisterInfoFunc, InfoAddSection,
 * InfoBeginDictField/EndDictField, InfoAddField*).
 *
 * Module "infotest" adds three sections: its own (empty name), "stats"
 * (every field kind and a dict field) and "extra".  Fields are added even
 * when InfoAddSection refused the section (they must not appear).
 *   it.calls   how many times the info function ran
 *   it.get     GetServerInfo and its readers (see cmdGet) */
#include <stdio.h>
#include <string.h>

#include "redismodule.h"

static long long calls;

static void info(RedisModuleInfoCtx *ctx, int for_crash_report) {
    (void)for_crash_report;
    calls++;
    RedisModule_InfoAddSection(ctx, "");
    RedisModule_InfoAddFieldLongLong(ctx, "calls", calls > 0);
    RedisModule_InfoAddSection(ctx, "stats");
    RedisModule_InfoAddFieldLongLong(ctx, "neg", -42);
    RedisModule_InfoAddFieldULongLong(ctx, "big", 18446744073709551615ULL);
    RedisModule_InfoAddFieldDouble(ctx, "ratio", 0.1);
    RedisModule_InfoAddFieldDouble(ctx, "whole", 3);
    RedisModule_InfoAddFieldCString(ctx, "word", "hello");
    RedisModuleString *s = RedisModule_CreateString(NULL, "a b", 3);
    RedisModule_InfoAddFieldString(ctx, "str", s);
    RedisModule_FreeString(NULL, s);
    RedisModule_InfoBeginDictField(ctx, "dict");
    RedisModule_InfoAddFieldLongLong(ctx, "x", 1);
    RedisModule_InfoAddFieldCString(ctx, "y", "two");
    RedisModule_InfoAddFieldDouble(ctx, "z", 2.5);
    RedisModule_InfoEndDictField(ctx);
    RedisModule_InfoBeginDictField(ctx, "open");
    RedisModule_InfoAddFieldLongLong(ctx, "k", 7);
    RedisModule_InfoAddSection(ctx, "extra");
    RedisModule_InfoAddFieldCString(ctx, "last", "yes");
}

/* it.get section|- field [auto]: [FieldC or null, Field or null, Signed,
 * err, Unsigned, err, Double (as a string), err] */
static int cmdGet(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    if (argc < 3) return RedisModule_WrongArity(ctx);
    const char *sec = RedisModule_StringPtrLen(argv[1], NULL);
    const char *field = RedisModule_StringPtrLen(argv[2], NULL);
    if (argc > 3) RedisModule_AutoMemory(ctx);
    RedisModuleServerInfoData *d = RedisModule_GetServerInfo(ctx, strcmp(sec, "-") ? sec : NULL);
    RedisModule_ReplyWithArray(ctx, 8);
    const char *c = RedisModule_ServerInfoGetFieldC(d, field);
    if (c) RedisModule_ReplyWithCString(ctx, c);
    else RedisModule_ReplyWithNull(ctx);
    RedisModuleString *s = RedisModule_ServerInfoGetField(ctx, d, field);
    if (s) RedisModule_ReplyWithString(ctx, s);
    else RedisModule_ReplyWithNull(ctx);
    if (s && argc == 3) RedisModule_FreeString(ctx, s);
    int err = 0;
    long long ll = RedisModule_ServerInfoGetFieldSigned(d, field, &err);
    RedisModule_ReplyWithLongLong(ctx, ll);
    RedisModule_ReplyWithLongLong(ctx, err);
    unsigned long long ull = RedisModule_ServerInfoGetFieldUnsigned(d, field, &err);
    RedisModule_ReplyWithLongLong(ctx, (long long)ull);
    RedisModule_ReplyWithLongLong(ctx, err);
    double dv = RedisModule_ServerInfoGetFieldDouble(d, field, &err);
    char buf[64];
    snprintf(buf, sizeof(buf), "%.6f", dv);
    RedisModule_ReplyWithCString(ctx, buf);
    RedisModule_ReplyWithLongLong(ctx, err);
    if (argc == 3) RedisModule_FreeServerInfo(ctx, d);
    return REDISMODULE_OK;
}

static int cmdCalls(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    (void)argv, (void)argc;
    return RedisModule_ReplyWithLongLong(ctx, calls);
}

int RedisModule_OnLoad(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    (void)argv, (void)argc;
    if (RedisModule_Init(ctx, "infotest", 1, REDISMODULE_APIVER_1) == REDISMODULE_ERR) return REDISMODULE_ERR;
    if (RedisModule_RegisterInfoFunc(ctx, info) == REDISMODULE_ERR ||
        RedisModule_CreateCommand(ctx, "it.calls", cmdCalls, "readonly", 0, 0, 0) == REDISMODULE_ERR ||
        RedisModule_CreateCommand(ctx, "it.get", cmdGet, "readonly", 0, 0, 0) == REDISMODULE_ERR)
        return REDISMODULE_ERR;
    return REDISMODULE_OK;
}
