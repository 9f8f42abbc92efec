/* config.c -- test module: module configs (RegisterStringConfig,
 * RegisterBoolConfig, RegisterEnumConfig with and without BITFLAGS,
 * RegisterNumericConfig with and without MEMORY, LoadConfigs).
 *
 * Configs (module name "cfg"): cfg.str (string, "hello"; the value "bad"
 * is refused with "bad value"), cfg.flag (bool, yes), cfg.mode (enum
 * one|two|three = 1|2|3, two), cfg.bits (bitflags a|b|c = 1|2|4, "a c"),
 * cfg.num (numeric -5..1000, 10), cfg.mem (memory 0..1gb, 1mb), cfg.frozen
 * (immutable bool, no).  One apply callback for all, counting its calls;
 * it refuses cfg.num = 666 ("666 refused").
 *
 *   cfg.applies      the number of apply calls so far
 *   cfg.values       [str, flag, mode, bits, num, mem] as the module holds them
 *   cfg.reg          rc of registering a config outside OnLoad
 *   cfg.onload       what OnLoad's odd registrations returned: [dup rc,
 *                    dup errno is EALREADY, bad-name rc, bad-range rc]
 * Module arguments: "noload" skips LoadConfigs (the load must fail). */
#include <errno.h>
#include <string.h>

#include "redismodule.h"

static RedisModuleString *strval;
static int flagval, frozenval, modeval, bitsval;
static long long numval, memval, rangeval;
static long long applies;
static int onloadResults[4];

static RedisModuleString *getStr(const char *name, void *pd) {
    (void)name, (void)pd;
    return strval;
}
static int setStr(const char *name, RedisModuleString *v, void *pd, RedisModuleString **err) {
    (void)name, (void)pd;
    if (!strcmp(RedisModule_StringPtrLen(v, NULL), "bad")) {
        *err = RedisModule_CreateString(NULL, "bad value", 9);
        return REDISMODULE_ERR;
    }
    if (strval) RedisModule_FreeString(NULL, strval);
    RedisModule_RetainString(NULL, v);
    strval = v;
    return REDISMODULE_OK;
}
static int getBool(const char *name, void *pd) {
    (void)name;
    return *(int *)pd;
}
static int setBool(const char *name, int v, void *pd, RedisModuleString **err) {
    (void)name, (void)err;
    *(int *)pd = v;
    return REDISMODULE_OK;
}
static int getEnum(const char *name, void *pd) {
    (void)name;
    return *(int *)pd;
}
static int setEnum(const char *name, int v, void *pd, RedisModuleString **err) {
    (void)name, (void)err;
    *(int *)pd = v;
    return REDISMODULE_OK;
}
static long long getNum(const char *name, void *pd) {
    (void)name;
    return *(long long *)pd;
}
static int setNum(const char *name, long long v, void *pd, RedisModuleString **err) {
    (void)name, (void)err;
    *(long long *)pd = v;
    return REDISMODULE_OK;
}
static int apply(RedisModuleCtx *ctx, void *pd, RedisModuleString **err) {
    (void)ctx, (void)pd;
    applies++;
    if (numval == 666) {
        *err = RedisModule_CreateString(NULL, "666 refused", 11);
        return REDISMODULE_ERR;
    }
    return REDISMODULE_OK;
}

static int cmdApplies(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    (void)argv, (void)argc;
    return RedisModule_ReplyWithLongLong(ctx, applies);
}

static int cmdValues(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    (void)argv, (void)argc;
    RedisModule_ReplyWithArray(ctx, 6);
    if (strval) RedisModule_ReplyWithString(ctx, strval);
    else RedisModule_ReplyWithNull(ctx);
    RedisModule_ReplyWithLongLong(ctx, flagval);
    RedisModule_ReplyWithLongLong(ctx, modeval);
    RedisModule_ReplyWithLongLong(ctx, bitsval);
    RedisModule_ReplyWithLongLong(ctx, numval);
    return RedisModule_ReplyWithLongLong(ctx, memval);
}

static int cmdReg(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    (void)argv, (void)argc;
    return RedisModule_ReplyWithLongLong(
        ctx, RedisModule_RegisterBoolConfig(ctx, "late", 0, REDISMODULE_CONFIG_DEFAULT, getBool, setBool, NULL,
                                            &flagval));
}

static int cmdOnload(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    (void)argv, (void)argc;
    RedisModule_ReplyWithArray(ctx, 4);
    for (int i = 0; i < 4; i++) RedisModule_ReplyWithLongLong(ctx, onloadResults[i]);
    return REDISMODULE_OK;
}

int RedisModule_OnLoad(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    if (RedisModule_Init(ctx, "cfg", 1, REDISMODULE_APIVER_1) == REDISMODULE_ERR) return REDISMODULE_ERR;
    static const char *modes[] = {"one", "two", "three"};
    static const int modeVals[] = {1, 2, 3};
    static const char *bits[] = {"a", "b", "c"};
    static const int bitVals[] = {1, 2, 4};
    if (RedisModule_RegisterStringConfig(ctx, "str", "hello", REDISMODULE_CONFIG_DEFAULT, getStr, setStr, apply,
                                         NULL) == REDISMODULE_ERR ||
        RedisModule_RegisterBoolConfig(ctx, "flag", 1, REDISMODULE_CONFIG_DEFAULT, getBool, setBool, apply,
                                       &flagval) == REDISMODULE_ERR ||
        RedisModule_RegisterBoolConfig(ctx, "frozen", 0, REDISMODULE_CONFIG_IMMUTABLE, getBool, setBool, apply,
                                       &frozenval) == REDISMODULE_ERR ||
        RedisModule_RegisterEnumConfig(ctx, "mode", 2, REDISMODULE_CONFIG_DEFAULT, modes, modeVals, 3, getEnum,
                                       setEnum, apply, &modeval) == REDISMODULE_ERR ||
        RedisModule_RegisterEnumConfig(ctx, "bits", 5, REDISMODULE_CONFIG_BITFLAGS, bits, bitVals, 3, getEnum,
                                       setEnum, apply, &bitsval) == REDISMODULE_ERR ||
        RedisModule_RegisterNumericConfig(ctx, "num", 10, REDISMODULE_CONFIG_DEFAULT, -5, 1000, getNum, setNum,
                                          apply, &numval) == REDISMODULE_ERR ||
        RedisModule_RegisterNumericConfig(ctx, "mem", 1048576, REDISMODULE_CONFIG_MEMORY, 0, 1073741824LL, getNum,
                                          setNum, apply, &memval) == REDISMODULE_ERR)
        return REDISMODULE_ERR;
    errno = 0;
    onloadResults[0] = RedisModule_RegisterBoolConfig(ctx, "flag", 1, REDISMODULE_CONFIG_DEFAULT, getBool, setBool,
                                                      apply, &flagval);
    onloadResults[1] = errno == EALREADY;
    onloadResults[2] = RedisModule_RegisterBoolConfig(ctx, "bad name", 1, REDISMODULE_CONFIG_DEFAULT, getBool,
                                                      setBool, apply, &flagval);
    onloadResults[3] = RedisModule_RegisterNumericConfig(ctx, "range", 50, REDISMODULE_CONFIG_DEFAULT, 0, 10,
                                                         getNum, setNum, apply, &rangeval);
    int skip = argc > 0 && !strcmp(RedisModule_StringPtrLen(argv[0], NULL), "noload");
    if (!skip && RedisModule_LoadConfigs(ctx) == REDISMODULE_ERR) return REDISMODULE_ERR;
    if (RedisModule_CreateCommand(ctx, "cfg.applies", cmdApplies, "readonly", 0, 0, 0) == REDISMODULE_ERR ||
        RedisModule_CreateCommand(ctx, "cfg.values", cmdValues, "readonly", 0, 0, 0) == REDISMODULE_ERR ||
        RedisModule_CreateCommand(ctx, "cfg.reg", cmdReg, "readonly", 0, 0, 0) == REDISMODULE_ERR ||
        RedisModule_CreateCommand(ctx, "cfg.onload", cmdOnload, "readonly", 0, 0, 0) == REDISMODULE_ERR)
        return REDISMODULE_ERR;
    return REDISMODULE_OK;
}

int RedisModule_OnUnload(RedisModuleCtx *ctx) {
    (void)ctx;
    if (strval) RedisModule_FreeString(NULL, strval);
    strval = NULL;
    return REDISMODULE_OK;
}
