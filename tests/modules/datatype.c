/* datatype.c -- test module: a custom data type ("testdtype", encoding
 * version 2) with RDB save/load (every RDB I/O call), digest, mem_usage,
 * copy and free; values saved by Cairn load into redis-server 7.0.15 and
 * the other way round (tests/integration/test_modules.py).
 *
 *   dt.set key name n d   a value {name, n, d, f = d/2, ld = d*3, ints = []}
 *   dt.push key v ...     append integers (creates the key when absent)
 *   dt.get key            [name, n, d, f, ld, [ints...]] or nil; WRONGTYPE
 *                         for a key of another type
 *   dt.replace key name   ModuleTypeReplaceValue with a fresh value
 *   dt.type key           1 when ModuleTypeGetType is ours, else 0 */
#include <stdio.h>
#include <string.h>

#include "redismodule.h"

static RedisModuleType *DT;

typedef struct Val {
    char *name;
    long long n;
    double d;
    float f;
    long double ld;
    long long *ints;
    size_t nints;
} Val;

static Val *valNew(const char *name, size_t len) {
    Val *v = RedisModule_Calloc(1, sizeof(*v));
    v->name = RedisModule_Alloc(len + 1);
    memcpy(v->name, name, len);
    v->name[len] = '\0';
    return v;
}

static void valFree(void *p) {
    Val *v = p;
    if (!v) return;
    RedisModule_Free(v->name);
    RedisModule_Free(v->ints);
    RedisModule_Free(v);
}

static void *dtLoad(RedisModuleIO *io, int encver) {
    if (encver > 2) return NULL;
    size_t len;
    char *name = RedisModule_LoadStringBuffer(io, &len);
    if (!name) return NULL;
    Val *v = valNew(name, len);
    RedisModule_Free(name);
    v->n = RedisModule_LoadSigned(io);
    v->d = RedisModule_LoadDouble(io);
    v->f = RedisModule_LoadFloat(io);
    v->ld = RedisModule_LoadLongDouble(io);
    v->nints = (size_t)RedisModule_LoadUnsigned(io);
    if (RedisModule_IsIOError(io) || v->nints > 1000000) {
        valFree(v);
        return NULL;
    }
    v->ints = RedisModule_Alloc(sizeof(long long) * (v->nints ? v->nints : 1));
    for (size_t i = 0; i < v->nints; i++) v->ints[i] = RedisModule_LoadSigned(io);
    RedisModuleString *tag = RedisModule_LoadString(io);
    if (tag) RedisModule_FreeString(NULL, tag);
    return v;
}

static void dtSave(RedisModuleIO *io, void *p) {
    Val *v = p;
    RedisModule_SaveStringBuffer(io, v->name, strlen(v->name));
    RedisModule_SaveSigned(io, v->n);
    RedisModule_SaveDouble(io, v->d);
    RedisModule_SaveFloat(io, v->f);
    RedisModule_SaveLongDouble(io, v->ld);
    RedisModule_SaveUnsigned(io, v->nints);
    for (size_t i = 0; i < v->nints; i++) RedisModule_SaveSigned(io, v->ints[i]);
    RedisModuleString *tag = RedisModule_CreateString(NULL, "end", 3);
    RedisModule_SaveString(io, tag);
    RedisModule_FreeString(NULL, tag);
}

/* The commands that rebuild the value (d's text through %.17g). */
static void dtRewrite(RedisModuleIO *aof, RedisModuleString *key, void *p) {
    Val *v = p;
    /* the key's database, as GetDbIdFromIO tells it, in the server log */
    RedisModule_LogIOError(aof, "warning", "dt rewrite %s db=%d", RedisModule_StringPtrLen(key, NULL),
                           RedisModule_GetDbIdFromIO(aof));
    char d[64];
    snprintf(d, sizeof(d), "%.17g", v->d);
    RedisModule_EmitAOF(aof, "dt.set", "sclc", key, v->name, v->n, d);
    if (v->nints) {
        RedisModuleString **ints = RedisModule_Alloc(sizeof(*ints) * v->nints);
        for (size_t i = 0; i < v->nints; i++) ints[i] = RedisModule_CreateStringFromLongLong(NULL, v->ints[i]);
        RedisModule_EmitAOF(aof, "dt.push", "sv", key, ints, v->nints);
        for (size_t i = 0; i < v->nints; i++) RedisModule_FreeString(NULL, ints[i]);
        RedisModule_Free(ints);
    }
}

static void dtDigest(RedisModuleDigest *md, void *p) {
    Val *v = p;
    RedisModule_DigestAddStringBuffer(md, v->name, strlen(v->name));
    RedisModule_DigestAddLongLong(md, v->n);
    RedisModule_DigestEndSequence(md);
    for (size_t i = 0; i < v->nints; i++) RedisModule_DigestAddLongLong(md, v->ints[i]);
    RedisModule_DigestEndSequence(md);
}

static size_t dtMem(const void *p) {
    const Val *v = p;
    return sizeof(*v) + strlen(v->name) + 1 + v->nints * sizeof(long long);
}

static void *dtCopy(RedisModuleString *from, RedisModuleString *to, const void *p) {
    (void)from, (void)to;
    const Val *v = p;
    Val *c = valNew(v->name, strlen(v->name));
    c->n = v->n, c->d = v->d, c->f = v->f, c->ld = v->ld, c->nints = v->nints;
    c->ints = RedisModule_Alloc(sizeof(long long) * (v->nints ? v->nints : 1));
    memcpy(c->ints, v->ints, sizeof(long long) * v->nints);
    return c;
}

static int cmdSet(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    long long n;
    double d;
    if (argc != 5) return RedisModule_WrongArity(ctx);
    if (RedisModule_StringToLongLong(argv[3], &n) != REDISMODULE_OK ||
        RedisModule_StringToDouble(argv[4], &d) != REDISMODULE_OK)
        return RedisModule_ReplyWithError(ctx, "ERR bad number");
    RedisModuleKey *k = RedisModule_OpenKey(ctx, argv[1], REDISMODULE_WRITE);
    size_t len;
    const char *name = RedisModule_StringPtrLen(argv[2], &len);
    Val *v = valNew(name, len);
    v->n = n, v->d = d, v->f = (float)(d / 2), v->ld = (long double)d * 3;
    RedisModule_ModuleTypeSetValue(k, DT, v);
    RedisModule_CloseKey(k);
    RedisModule_ReplicateVerbatim(ctx);
    return RedisModule_ReplyWithSimpleString(ctx, "OK");
}

static int cmdPush(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    if (argc < 3) return RedisModule_WrongArity(ctx);
    RedisModuleKey *k = RedisModule_OpenKey(ctx, argv[1], REDISMODULE_WRITE);
    int t = RedisModule_KeyType(k);
    if (t != REDISMODULE_KEYTYPE_EMPTY && RedisModule_ModuleTypeGetType(k) != DT) {
        RedisModule_CloseKey(k);
        return RedisModule_ReplyWithError(ctx, REDISMODULE_ERRORMSG_WRONGTYPE);
    }
    Val *v = RedisModule_ModuleTypeGetValue(k);
    if (!v) {
        v = valNew("", 0);
        RedisModule_ModuleTypeSetValue(k, DT, v);
    }
    v->ints = RedisModule_Realloc(v->ints, sizeof(long long) * (v->nints + (size_t)argc));
    for (int i = 2; i < argc; i++) {
        long long x;
        if (RedisModule_StringToLongLong(argv[i], &x) != REDISMODULE_OK) x = 0;
        v->ints[v->nints++] = x;
    }
    RedisModule_CloseKey(k);
    RedisModule_ReplicateVerbatim(ctx);
    return RedisModule_ReplyWithLongLong(ctx, (long long)v->nints);
}

static int cmdGet(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    if (argc != 2) return RedisModule_WrongArity(ctx);
    RedisModuleKey *k = RedisModule_OpenKey(ctx, argv[1], REDISMODULE_READ);
    if (!k) return RedisModule_ReplyWithNull(ctx);
    if (RedisModule_ModuleTypeGetType(k) != DT) {
        RedisModule_CloseKey(k);
        return RedisModule_ReplyWithError(ctx, REDISMODULE_ERRORMSG_WRONGTYPE);
    }
    Val *v = RedisModule_ModuleTypeGetValue(k);
    RedisModule_ReplyWithArray(ctx, 6);
    RedisModule_ReplyWithCString(ctx, v->name);
    RedisModule_ReplyWithLongLong(ctx, v->n);
    RedisModule_ReplyWithDouble(ctx, v->d);
    RedisModule_ReplyWithDouble(ctx, (double)v->f);
    RedisModule_ReplyWithLongDouble(ctx, v->ld);
    RedisModule_ReplyWithArray(ctx, (long)v->nints);
    for (size_t i = 0; i < v->nints; i++) RedisModule_ReplyWithLongLong(ctx, v->ints[i]);
    RedisModule_CloseKey(k);
    return REDISMODULE_OK;
}

static int cmdReplace(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    if (argc != 3) return RedisModule_WrongArity(ctx);
    RedisModuleKey *k = RedisModule_OpenKey(ctx, argv[1], REDISMODULE_WRITE);
    size_t len;
    const char *name = RedisModule_StringPtrLen(argv[2], &len);
    Val *v = valNew(name, len);
    void *old = NULL;
    int rc = RedisModule_ModuleTypeReplaceValue(k, DT, v, &old);
    if (rc == REDISMODULE_OK) valFree(old);
    else valFree(v);
    RedisModule_CloseKey(k);
    RedisModule_ReplicateVerbatim(ctx);
    return RedisModule_ReplyWithLongLong(ctx, rc);
}

static int cmdType(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    if (argc != 2) return RedisModule_WrongArity(ctx);
    RedisModuleKey *k = RedisModule_OpenKey(ctx, argv[1], REDISMODULE_READ);
    int ours = k && RedisModule_ModuleTypeGetType(k) == DT;
    int kt = k ? RedisModule_KeyType(k) : 0;
    if (k) RedisModule_CloseKey(k);
    RedisModule_ReplyWithArray(ctx, 2);
    RedisModule_ReplyWithLongLong(ctx, ours);
    return RedisModule_ReplyWithLongLong(ctx, kt);
}

int RedisModule_OnLoad(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    (void)argv, (void)argc;
    if (RedisModule_Init(ctx, "datatype", 1, REDISMODULE_APIVER_1) == REDISMODULE_ERR) return REDISMODULE_ERR;
    RedisModuleTypeMethods tm = {.version = REDISMODULE_TYPE_METHOD_VERSION,
                                 .rdb_load = dtLoad,
                                 .rdb_save = dtSave,
                                 .aof_rewrite = dtRewrite,
                                 .mem_usage = dtMem,
                                 .digest = dtDigest,
                                 .free = valFree,
                                 .copy = dtCopy};
    /* bad names and versions are refused */
    const char *bad[] = {"short", "bad*name1"};
    for (int i = 0; i < 2; i++)
        if (RedisModule_CreateDataType(ctx, bad[i], 0, &tm) != NULL) {
            RedisModule_Log(ctx, "warning", "type name %s accepted", bad[i]);
            return REDISMODULE_ERR;
        }
    if (RedisModule_CreateDataType(ctx, "testdtyp2", 1024, &tm) != NULL) {
        RedisModule_Log(ctx, "warning", "encver 1024 accepted");
        return REDISMODULE_ERR;
    }
    DT = RedisModule_CreateDataType(ctx, "testdtype", 2, &tm);
    if (!DT) {
        RedisModule_Log(ctx, "warning", "type refused");
        return REDISMODULE_ERR;
    }

    if (RedisModule_CreateCommand(ctx, "dt.set", cmdSet, "write deny-oom", 1, 1, 1) == REDISMODULE_ERR ||
        RedisModule_CreateCommand(ctx, "dt.push", cmdPush, "write deny-oom", 1, 1, 1) == REDISMODULE_ERR ||
        RedisModule_CreateCommand(ctx, "dt.get", cmdGet, "readonly", 1, 1, 1) == REDISMODULE_ERR ||
        RedisModule_CreateCommand(ctx, "dt.replace", cmdReplace, "write", 1, 1, 1) == REDISMODULE_ERR ||
        RedisModule_CreateCommand(ctx, "dt.type", cmdType, "readonly", 1, 1, 1) == REDISMODULE_ERR)
        return REDISMODULE_ERR;
    return REDISMODULE_OK;
}
