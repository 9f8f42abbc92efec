/* replies.c -- test module: commands and every reply of the module API,
 * strings, memory and context helpers.  Loaded by
 * tests/integration/test_modules.py into Cairn and into redis-server
 * 7.0.15; the same commands must give the same bytes.
 *
 * Commands (prefix rep.):
 *   rep.ll N | rep.simple S | rep.error S | rep.null | rep.nullarray |
 *   rep.emptyarray | rep.double D | rep.longdouble D | rep.bool 0|1 |
 *   rep.bignum S | rep.verbatim S | rep.string S | rep.cstring S |
 *   rep.emptystring | rep.array N (postponed) | rep.map | rep.set |
 *   rep.attr | rep.nested | rep.arity X (exactly one argument) |
 *   rep.args (what OnLoad got) | rep.strings | rep.mem | rep.ctx |
 *   rep.retain S (kept until rep.retained) | rep.retained | rep.latepost */
#include <string.h>

#include "redismodule.h"

static RedisModuleString *loadArgs[8];
static int loadArgc;
static RedisModuleString *retained;

static int cmdLl(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    long long v;
    if (argc != 2) return RedisModule_WrongArity(ctx);
    if (RedisModule_StringToLongLong(argv[1], &v) != REDISMODULE_OK)
        return RedisModule_ReplyWithError(ctx, "ERR not an integer");
    return RedisModule_ReplyWithLongLong(ctx, v);
}

static int cmdSimple(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    if (argc != 2) return RedisModule_WrongArity(ctx);
    return RedisModule_ReplyWithSimpleString(ctx, RedisModule_StringPtrLen(argv[1], NULL));
}

static int cmdError(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    if (argc != 2) return RedisModule_WrongArity(ctx);
    return RedisModule_ReplyWithError(ctx, RedisModule_StringPtrLen(argv[1], NULL));
}

static int cmdNull(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    (void)argv, (void)argc;
    return RedisModule_ReplyWithNull(ctx);
}

static int cmdNullArray(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    (void)argv, (void)argc;
    return RedisModule_ReplyWithNullArray(ctx);
}

static int cmdEmptyArray(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    (void)argv, (void)argc;
    return RedisModule_ReplyWithEmptyArray(ctx);
}

static int cmdDouble(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    double d;
    if (argc != 2) return RedisModule_WrongArity(ctx);
    if (RedisModule_StringToDouble(argv[1], &d) != REDISMODULE_OK)
        return RedisModule_ReplyWithError(ctx, "ERR not a double");
    return RedisModule_ReplyWithDouble(ctx, d);
}

static int cmdLongDouble(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    long double d;
    if (argc != 2) return RedisModule_WrongArity(ctx);
    if (RedisModule_StringToLongDouble(argv[1], &d) != REDISMODULE_OK)
        return RedisModule_ReplyWithError(ctx, "ERR not a long double");
    return RedisModule_ReplyWithLongDouble(ctx, d);
}

static int cmdBool(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    long long v;
    if (argc != 2 || RedisModule_StringToLongLong(argv[1], &v) != REDISMODULE_OK)
        return RedisModule_WrongArity(ctx);
    return RedisModule_ReplyWithBool(ctx, (int)v);
}

static int cmdBignum(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    size_t len;
    if (argc != 2) return RedisModule_WrongArity(ctx);
    const char *p = RedisModule_StringPtrLen(argv[1], &len);
    return RedisModule_ReplyWithBigNumber(ctx, p, len);
}

static int cmdVerbatim(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    size_t len;
    if (argc != 2) return RedisModule_WrongArity(ctx);
    const char *p = RedisModule_StringPtrLen(argv[1], &len);
    RedisModule_ReplyWithArray(ctx, 2);
    RedisModule_ReplyWithVerbatimString(ctx, p, len);
    return RedisModule_ReplyWithVerbatimStringType(ctx, p, len, "mkd");
}

static int cmdString(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    if (argc != 2) return RedisModule_WrongArity(ctx);
    return RedisModule_ReplyWithString(ctx, argv[1]);
}

static int cmdCString(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    if (argc != 2) return RedisModule_WrongArity(ctx);
    return RedisModule_ReplyWithCString(ctx, RedisModule_StringPtrLen(argv[1], NULL));
}

static int cmdEmptyString(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    (void)argv, (void)argc;
    return RedisModule_ReplyWithEmptyString(ctx);
}

static int cmdArray(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    long long n;
    if (argc != 2 || RedisModule_StringToLongLong(argv[1], &n) != REDISMODULE_OK || n < 0 || n > 100000)
        return RedisModule_WrongArity(ctx);
    RedisModule_ReplyWithArray(ctx, REDISMODULE_POSTPONED_LEN);
    for (long long i = 0; i < n; i++) RedisModule_ReplyWithLongLong(ctx, i);
    RedisModule_ReplySetArrayLength(ctx, (long)n);
    return REDISMODULE_OK;
}

static int cmdMap(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    (void)argv, (void)argc;
    RedisModule_ReplyWithMap(ctx, 3);
    RedisModule_ReplyWithCString(ctx, "pi");
    RedisModule_ReplyWithDouble(ctx, 3.14159);
    RedisModule_ReplyWithCString(ctx, "yes");
    RedisModule_ReplyWithBool(ctx, 1);
    RedisModule_ReplyWithCString(ctx, "inner");
    RedisModule_ReplyWithMap(ctx, REDISMODULE_POSTPONED_LEN);
    RedisModule_ReplyWithCString(ctx, "k");
    RedisModule_ReplyWithLongLong(ctx, 7);
    RedisModule_ReplySetMapLength(ctx, 1);
    return REDISMODULE_OK;
}

static int cmdSet(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    (void)argv, (void)argc;
    RedisModule_ReplyWithSet(ctx, REDISMODULE_POSTPONED_LEN);
    RedisModule_ReplyWithCString(ctx, "a");
    RedisModule_ReplyWithCString(ctx, "b");
    RedisModule_ReplySetSetLength(ctx, 2);
    return REDISMODULE_OK;
}

/* RESP3: an attribute then the value; RESP2: ReplyWithAttribute fails. */
static int cmdAttr(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    (void)argv, (void)argc;
    if (RedisModule_ReplyWithAttribute(ctx, 1) != REDISMODULE_OK)
        return RedisModule_ReplyWithError(ctx, "ERR attributes need RESP3");
    RedisModule_ReplyWithCString(ctx, "ttl");
    RedisModule_ReplyWithLongLong(ctx, 100);
    return RedisModule_ReplyWithCString(ctx, "value");
}

static int cmdNested(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    (void)argv, (void)argc;
    RedisModule_ReplyWithArray(ctx, REDISMODULE_POSTPONED_LEN);
    for (int i = 0; i < 3; i++) {
        RedisModule_ReplyWithArray(ctx, REDISMODULE_POSTPONED_LEN);
        for (int j = 0; j <= i; j++) RedisModule_ReplyWithLongLong(ctx, j);
        RedisModule_ReplySetArrayLength(ctx, i + 1);
    }
    RedisModule_ReplyWithNull(ctx);
    RedisModule_ReplySetArrayLength(ctx, 4);
    return REDISMODULE_OK;
}

static int cmdArity(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    if (argc != 2) return RedisModule_WrongArity(ctx);
    return RedisModule_ReplyWithString(ctx, argv[1]);
}

static int cmdArgs(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    (void)argv, (void)argc;
    RedisModule_ReplyWithArray(ctx, loadArgc);
    for (int i = 0; i < loadArgc; i++) RedisModule_ReplyWithString(ctx, loadArgs[i]);
    return REDISMODULE_OK;
}

static int cmdStrings(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    (void)argv, (void)argc;
    RedisModule_AutoMemory(ctx);
    long long ll;
    double d;
    unsigned long long ull;
    RedisModuleString *a = RedisModule_CreateStringFromLongLong(ctx, -1234567890123LL);
    RedisModuleString *b = RedisModule_CreateStringFromDouble(ctx, 1.5);
    RedisModuleString *c = RedisModule_CreateStringFromULongLong(ctx, 18446744073709551615ULL);
    RedisModuleString *e = RedisModule_CreateStringFromLongDouble(ctx, 3.25L, 1);
    RedisModuleString *f = RedisModule_CreateStringPrintf(ctx, "%s-%d", "x", 42);
    RedisModuleString *g = RedisModule_CreateString(ctx, "abc", 3);
    RedisModule_StringAppendBuffer(ctx, g, "def", 3);
    RedisModuleString *h = RedisModule_CreateStringFromString(ctx, g);
    RedisModuleString *bad = RedisModule_CreateString(ctx, "12x", 3);
    RedisModule_ReplyWithArray(ctx, 12);
    RedisModule_ReplyWithString(ctx, a);
    RedisModule_ReplyWithString(ctx, b);
    RedisModule_ReplyWithString(ctx, c);
    RedisModule_ReplyWithString(ctx, e);
    RedisModule_ReplyWithString(ctx, f);
    RedisModule_ReplyWithString(ctx, h);
    RedisModule_ReplyWithLongLong(ctx, RedisModule_StringToLongLong(a, &ll) == REDISMODULE_OK ? ll : 0);
    RedisModule_ReplyWithLongLong(ctx, RedisModule_StringToLongLong(bad, &ll));
    RedisModule_ReplyWithLongLong(ctx, RedisModule_StringToDouble(bad, &d));
    RedisModule_ReplyWithLongLong(ctx, RedisModule_StringToULongLong(c, &ull) == REDISMODULE_OK && ull == 18446744073709551615ULL);
    RedisModule_ReplyWithLongLong(ctx, RedisModule_StringCompare(g, h) == 0 && RedisModule_StringCompare(a, g) < 0);
    RedisModule_FreeString(ctx, h); /* freeing a tracked string is allowed */
    RedisModule_ReplyWithLongLong(ctx, 1);
    return REDISMODULE_OK;
}

static int cmdMem(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    (void)argv, (void)argc;
    char *p = RedisModule_Alloc(100);
    memset(p, 'x', 100);
    p = RedisModule_Realloc(p, 1000);
    int ok = p[99] == 'x' && RedisModule_MallocSize(p) >= 1000;
    RedisModule_Free(p);
    char *z = RedisModule_Calloc(10, 10);
    for (int i = 0; i < 100; i++) ok &= z[i] == 0;
    RedisModule_Free(z);
    char *s = RedisModule_Strdup("hello");
    ok &= strcmp(s, "hello") == 0;
    RedisModule_Free(s);
    for (int i = 0; i < 100; i++) {
        long long *q = RedisModule_PoolAlloc(ctx, 300);
        ok &= ((unsigned long)q % 8) == 0;
        q[0] = i;
    }
    return RedisModule_ReplyWithLongLong(ctx, ok);
}

static int cmdCtx(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    (void)argv, (void)argc;
    int db = RedisModule_GetSelectedDb(ctx);
    RedisModule_ReplyWithArray(ctx, 5);
    RedisModule_ReplyWithLongLong(ctx, db);
    RedisModule_ReplyWithLongLong(ctx, RedisModule_SelectDb(ctx, 3));
    RedisModule_ReplyWithLongLong(ctx, RedisModule_GetSelectedDb(ctx));
    RedisModule_ReplyWithLongLong(ctx, RedisModule_SelectDb(ctx, 100000));
    RedisModule_SelectDb(ctx, db);
    return RedisModule_ReplyWithLongLong(ctx, RedisModule_GetClientId(ctx) > 0 && RedisModule_Milliseconds() > 0);
}

static int cmdRetain(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    if (argc != 2) return RedisModule_WrongArity(ctx);
    if (retained) RedisModule_FreeString(NULL, retained);
    RedisModule_RetainString(ctx, argv[1]);
    retained = argv[1];
    return RedisModule_ReplyWithSimpleString(ctx, "OK");
}

static int cmdRetained(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    (void)argv, (void)argc;
    if (!retained) return RedisModule_ReplyWithNull(ctx);
    return RedisModule_ReplyWithString(ctx, retained);
}

int RedisModule_OnLoad(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    if (RedisModule_Init(ctx, "replies", 3, REDISMODULE_APIVER_1) == REDISMODULE_ERR) return REDISMODULE_ERR;
    for (int i = 0; i < argc && i < 8; i++) {
        RedisModule_RetainString(ctx, argv[i]);
        loadArgs[loadArgc++] = argv[i];
    }
    if (argc == 1 && !strcmp(RedisModule_StringPtrLen(argv[0], NULL), "fail")) {
        /* a failed init: what it kept is its own to free */
        for (int i = 0; i < loadArgc; i++) RedisModule_FreeString(NULL, loadArgs[i]);
        loadArgc = 0;
        return REDISMODULE_ERR;
    }
    struct {
        const char *name;
        RedisModuleCmdFunc fn;
        const char *flags;
    } cmds[] = {{"rep.ll", cmdLl, "fast"},
                {"rep.simple", cmdSimple, ""},
                {"rep.error", cmdError, ""},
                {"rep.null", cmdNull, "readonly"},
                {"rep.nullarray", cmdNullArray, "readonly"},
                {"rep.emptyarray", cmdEmptyArray, "readonly"},
                {"rep.double", cmdDouble, "readonly fast"},
                {"rep.longdouble", cmdLongDouble, "readonly"},
                {"rep.bool", cmdBool, "readonly"},
                {"rep.bignum", cmdBignum, "readonly"},
                {"rep.verbatim", cmdVerbatim, "readonly"},
                {"rep.string", cmdString, "readonly"},
                {"rep.cstring", cmdCString, "readonly"},
                {"rep.emptystring", cmdEmptyString, "readonly"},
                {"rep.array", cmdArray, "readonly"},
                {"rep.map", cmdMap, "readonly"},
                {"rep.set", cmdSet, "readonly"},
                {"rep.attr", cmdAttr, "readonly"},
                {"rep.nested", cmdNested, "readonly"},
                {"rep.arity", cmdArity, "admin deny-script"},
                {"rep.args", cmdArgs, "readonly"},
                {"rep.strings", cmdStrings, "readonly"},
                {"rep.mem", cmdMem, "readonly"},
                {"rep.ctx", cmdCtx, "readonly"},
                {"rep.retain", cmdRetain, "write deny-oom"},
                {"rep.retained", cmdRetained, "readonly"}};
    for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
        if (RedisModule_CreateCommand(ctx, cmds[i].name, cmds[i].fn, cmds[i].flags, 0, 0, 0) == REDISMODULE_ERR)
            return REDISMODULE_ERR;
    /* a name taken, a bad flag: refused */
    if (RedisModule_CreateCommand(ctx, "get", cmdLl, "", 0, 0, 0) != REDISMODULE_ERR) return REDISMODULE_ERR;
    if (RedisModule_CreateCommand(ctx, "rep.bad", cmdLl, "no-such-flag", 0, 0, 0) != REDISMODULE_ERR)
        return REDISMODULE_ERR;
    return REDISMODULE_OK;
}

int RedisModule_OnUnload(RedisModuleCtx *ctx) {
    (void)ctx;
    for (int i = 0; i < loadArgc; i++) RedisModule_FreeString(NULL, loadArgs[i]);
    loadArgc = 0;
    if (retained) RedisModule_FreeString(NULL, retained);
    retained = NULL;
    return REDISMODULE_OK;
}
