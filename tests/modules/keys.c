/* keys.c -- test module: the low-level key API on strings.
 *
 *   key.set k v | key.get k | key.type k | key.len k | key.del k |
 *   key.unlink k | key.append k v (Truncate + DMA) | key.truncate k n |
 *   key.dmaupper k (DMA write in place) | key.expire k ms | key.ttl k |
 *   key.exists k
 * Writes replicate verbatim, as a module would. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "redismodule.h"

static int replyErrno(RedisModuleCtx *ctx) {
    const char *n = errno == EINVAL ? "EINVAL" : errno == ENOTSUP ? "ENOTSUP" : errno == EBADF ? "EBADF"
                  : errno == EDOM ? "EDOM" : errno == ENOENT ? "ENOENT" : "other";
    char buf[64];
    snprintf(buf, sizeof(buf), "ERR errno=%s", n);
    return RedisModule_ReplyWithError(ctx, buf);
}

/* key.lpush k head|tail v [v ...] (mode: "r" opens read-only) */
static int cmdLPush(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    if (argc < 4) return RedisModule_WrongArity(ctx);
    RedisModule_AutoMemory(ctx);
    const char *w = RedisModule_StringPtrLen(argv[2], NULL);
    int where = !strcmp(w, "head") ? REDISMODULE_LIST_HEAD : !strcmp(w, "tail") ? REDISMODULE_LIST_TAIL : 7;
    int mode = !strcmp(w, "ro") ? REDISMODULE_READ : REDISMODULE_WRITE;
    if (mode == REDISMODULE_READ) where = REDISMODULE_LIST_HEAD;
    RedisModuleKey *k = RedisModule_OpenKey(ctx, argv[1], mode);
    if (!k) return RedisModule_ReplyWithNull(ctx);
    for (int i = 3; i < argc; i++)
        if (RedisModule_ListPush(k, where, argv[i]) != REDISMODULE_OK) return replyErrno(ctx);
    RedisModule_ReplicateVerbatim(ctx);
    return RedisModule_ReplyWithLongLong(ctx, (long long)RedisModule_ValueLength(k));
}

/* key.lpop k head|tail */
static int cmdLPop(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    if (argc != 3) return RedisModule_WrongArity(ctx);
    RedisModule_AutoMemory(ctx);
    const char *w = RedisModule_StringPtrLen(argv[2], NULL);
    RedisModuleKey *k = RedisModule_OpenKey(ctx, argv[1], REDISMODULE_WRITE);
    RedisModuleString *s = RedisModule_ListPop(k, !strcmp(w, "head") ? REDISMODULE_LIST_HEAD : REDISMODULE_LIST_TAIL);
    if (!s) return replyErrno(ctx);
    RedisModule_ReplicateVerbatim(ctx);
    return RedisModule_ReplyWithString(ctx, s);
}

/* key.lget k idx | key.lset k idx v | key.linsert k idx v | key.ldel k idx */
static int cmdLIndexOp(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    long long idx;
    if (argc < 3 || RedisModule_StringToLongLong(argv[2], &idx) != REDISMODULE_OK) return RedisModule_WrongArity(ctx);
    RedisModule_AutoMemory(ctx);
    const char *op = RedisModule_StringPtrLen(argv[0], NULL);
    RedisModuleKey *k = RedisModule_OpenKey(ctx, argv[1], REDISMODULE_READ | REDISMODULE_WRITE);
    if (!strcasecmp(op, "key.lget")) {
        RedisModuleString *s = RedisModule_ListGet(k, (long)idx);
        return s ? RedisModule_ReplyWithString(ctx, s) : replyErrno(ctx);
    }
    int rc;
    if (!strcasecmp(op, "key.ldel")) rc = RedisModule_ListDelete(k, (long)idx);
    else if (argc != 4) return RedisModule_WrongArity(ctx);
    else if (!strcasecmp(op, "key.lset")) rc = RedisModule_ListSet(k, (long)idx, argv[3]);
    else rc = RedisModule_ListInsert(k, (long)idx, argv[3]);
    if (rc != REDISMODULE_OK) return replyErrno(ctx);
    RedisModule_ReplicateVerbatim(ctx);
    return RedisModule_ReplyWithLongLong(ctx, (long long)RedisModule_ValueLength(k));
}

static int cmdSet(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    if (argc != 3) return RedisModule_WrongArity(ctx);
    RedisModuleKey *k = RedisModule_OpenKey(ctx, argv[1], REDISMODULE_WRITE);
    RedisModule_StringSet(k, argv[2]);
    RedisModule_CloseKey(k);
    RedisModule_ReplicateVerbatim(ctx);
    return RedisModule_ReplyWithSimpleString(ctx, "OK");
}

static int cmdGet(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    if (argc != 2) return RedisModule_WrongArity(ctx);
    RedisModuleKey *k = RedisModule_OpenKey(ctx, argv[1], REDISMODULE_READ);
    if (!k) return RedisModule_ReplyWithNull(ctx);
    if (RedisModule_KeyType(k) != REDISMODULE_KEYTYPE_STRING) {
        RedisModule_CloseKey(k);
        return RedisModule_ReplyWithError(ctx, REDISMODULE_ERRORMSG_WRONGTYPE);
    }
    size_t len;
    char *p = RedisModule_StringDMA(k, &len, REDISMODULE_READ);
    RedisModule_ReplyWithStringBuffer(ctx, p, len);
    RedisModule_CloseKey(k);
    return REDISMODULE_OK;
}

static int cmdType(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    if (argc != 2) return RedisModule_WrongArity(ctx);
    RedisModule_AutoMemory(ctx);
    RedisModuleKey *k = RedisModule_OpenKey(ctx, argv[1], REDISMODULE_READ | REDISMODULE_WRITE);
    return RedisModule_ReplyWithLongLong(ctx, RedisModule_KeyType(k));
}

static int cmdLen(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    if (argc != 2) return RedisModule_WrongArity(ctx);
    RedisModule_AutoMemory(ctx);
    RedisModuleKey *k = RedisModule_OpenKey(ctx, argv[1], REDISMODULE_READ);
    return RedisModule_ReplyWithLongLong(ctx, k ? (long long)RedisModule_ValueLength(k) : -1);
}

static int cmdDel(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    if (argc != 2) return RedisModule_WrongArity(ctx);
    RedisModuleKey *k = RedisModule_OpenKey(ctx, argv[1], REDISMODULE_WRITE);
    int existed = RedisModule_KeyType(k) != REDISMODULE_KEYTYPE_EMPTY;
    RedisModule_DeleteKey(k);
    int after = RedisModule_KeyType(k);
    RedisModule_CloseKey(k);
    RedisModule_ReplicateVerbatim(ctx);
    RedisModule_ReplyWithArray(ctx, 2);
    RedisModule_ReplyWithLongLong(ctx, existed);
    return RedisModule_ReplyWithLongLong(ctx, after);
}

static int cmdUnlink(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    if (argc != 2) return RedisModule_WrongArity(ctx);
    RedisModuleKey *k = RedisModule_OpenKey(ctx, argv[1], REDISMODULE_WRITE);
    int rc = RedisModule_UnlinkKey(k);
    RedisModule_CloseKey(k);
    /* read-only key: refused */
    RedisModuleKey *r = RedisModule_OpenKey(ctx, argv[1], REDISMODULE_READ);
    int rc2 = r ? RedisModule_UnlinkKey(r) : -1;
    if (r) RedisModule_CloseKey(r);
    RedisModule_ReplicateVerbatim(ctx);
    RedisModule_ReplyWithArray(ctx, 2);
    RedisModule_ReplyWithLongLong(ctx, rc);
    return RedisModule_ReplyWithLongLong(ctx, rc2);
}

static int cmdAppend(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    if (argc != 3) return RedisModule_WrongArity(ctx);
    RedisModuleKey *k = RedisModule_OpenKey(ctx, argv[1], REDISMODULE_WRITE);
    int t = RedisModule_KeyType(k);
    if (t != REDISMODULE_KEYTYPE_STRING && t != REDISMODULE_KEYTYPE_EMPTY) {
        RedisModule_CloseKey(k);
        return RedisModule_ReplyWithError(ctx, REDISMODULE_ERRORMSG_WRONGTYPE);
    }
    size_t cur = RedisModule_ValueLength(k), add;
    const char *p = RedisModule_StringPtrLen(argv[2], &add);
    if (RedisModule_StringTruncate(k, cur + add) != REDISMODULE_OK) {
        RedisModule_CloseKey(k);
        return RedisModule_ReplyWithError(ctx, "ERR truncate failed");
    }
    size_t len;
    char *d = RedisModule_StringDMA(k, &len, REDISMODULE_WRITE);
    memcpy(d + cur, p, add);
    RedisModule_CloseKey(k);
    RedisModule_ReplicateVerbatim(ctx);
    return RedisModule_ReplyWithLongLong(ctx, (long long)len);
}

static int cmdTruncate(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    long long n;
    if (argc != 3 || RedisModule_StringToLongLong(argv[2], &n) != REDISMODULE_OK || n < 0)
        return RedisModule_WrongArity(ctx);
    RedisModuleKey *k = RedisModule_OpenKey(ctx, argv[1], REDISMODULE_WRITE);
    int rc = RedisModule_StringTruncate(k, (size_t)n);
    RedisModule_CloseKey(k);
    RedisModule_ReplicateVerbatim(ctx);
    return RedisModule_ReplyWithLongLong(ctx, rc);
}

static int cmdDmaUpper(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    if (argc != 2) return RedisModule_WrongArity(ctx);
    RedisModuleKey *k = RedisModule_OpenKey(ctx, argv[1], REDISMODULE_WRITE);
    size_t len;
    char *d = RedisModule_StringDMA(k, &len, REDISMODULE_WRITE);
    if (!d) {
        RedisModule_CloseKey(k);
        return RedisModule_ReplyWithError(ctx, REDISMODULE_ERRORMSG_WRONGTYPE);
    }
    for (size_t i = 0; i < len; i++)
        if (d[i] >= 'a' && d[i] <= 'z') d[i] = (char)(d[i] - 32);
    RedisModule_CloseKey(k);
    RedisModule_ReplicateVerbatim(ctx);
    return RedisModule_ReplyWithLongLong(ctx, (long long)len);
}

static int cmdExpire(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    long long ms;
    if (argc != 3 || RedisModule_StringToLongLong(argv[2], &ms) != REDISMODULE_OK)
        return RedisModule_WrongArity(ctx);
    RedisModuleKey *k = RedisModule_OpenKey(ctx, argv[1], REDISMODULE_WRITE);
    int rc = RedisModule_SetExpire(k, ms);
    RedisModule_CloseKey(k);
    return RedisModule_ReplyWithLongLong(ctx, rc);
}

/* -1 (no expire) or whether the TTL is within (0, 1000000] ms */
static int cmdTtl(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    if (argc != 2) return RedisModule_WrongArity(ctx);
    RedisModuleKey *k = RedisModule_OpenKey(ctx, argv[1], REDISMODULE_READ);
    if (!k) return RedisModule_ReplyWithLongLong(ctx, -2);
    mstime_t t = RedisModule_GetExpire(k);
    RedisModule_CloseKey(k);
    return RedisModule_ReplyWithLongLong(ctx, t == REDISMODULE_NO_EXPIRE ? -1 : (t > 0 && t <= 1000000));
}

static int cmdExists(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    if (argc != 2) return RedisModule_WrongArity(ctx);
    return RedisModule_ReplyWithLongLong(ctx, RedisModule_KeyExists(ctx, argv[1]));
}

static int hashFlags(RedisModuleString *s) {
    const char *p = RedisModule_StringPtrLen(s, NULL);
    int f = 0;
    for (; *p; p++) {
        if (*p == 'n') f |= REDISMODULE_HASH_NX;
        if (*p == 'x') f |= REDISMODULE_HASH_XX;
        if (*p == 'a') f |= REDISMODULE_HASH_COUNT_ALL;
        if (*p == 'c') f |= REDISMODULE_HASH_CFIELDS;
        if (*p == 'e') f |= REDISMODULE_HASH_EXISTS;
    }
    return f;
}

static RedisModuleString *hashValue(RedisModuleString *v) {
    return !strcmp(RedisModule_StringPtrLen(v, NULL), "__DEL__") ? REDISMODULE_HASH_DELETE : v;
}

/* key.hset k flags f v [f2 v2] (one HashSet call; a value __DEL__ deletes) */
static int cmdHSet(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    if (argc != 5 && argc != 7) return RedisModule_WrongArity(ctx);
    RedisModule_AutoMemory(ctx);
    int flags = hashFlags(argv[2]);
    RedisModuleKey *k = RedisModule_OpenKey(ctx, argv[1], !strcmp(RedisModule_StringPtrLen(argv[2], NULL), "ro")
                                                              ? REDISMODULE_READ
                                                              : REDISMODULE_WRITE);
    if (!k) return RedisModule_ReplyWithNull(ctx);
    errno = 0;
    int n;
    if (flags & REDISMODULE_HASH_CFIELDS) {
        const char *f1 = RedisModule_StringPtrLen(argv[3], NULL);
        n = argc == 5 ? RedisModule_HashSet(k, flags, f1, hashValue(argv[4]), NULL)
                      : RedisModule_HashSet(k, flags, f1, hashValue(argv[4]), RedisModule_StringPtrLen(argv[5], NULL),
                                            hashValue(argv[6]), NULL);
    } else {
        n = argc == 5 ? RedisModule_HashSet(k, flags, argv[3], hashValue(argv[4]), NULL)
                      : RedisModule_HashSet(k, flags, argv[3], hashValue(argv[4]), argv[5], hashValue(argv[6]), NULL);
    }
    if (n == 0) return replyErrno(ctx);
    RedisModule_ReplicateVerbatim(ctx);
    return RedisModule_ReplyWithLongLong(ctx, n);
}

/* key.hget k flags f [f2]: the values (or, with e, the exists flags) */
static int cmdHGet(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    if (argc != 4 && argc != 5) return RedisModule_WrongArity(ctx);
    RedisModule_AutoMemory(ctx);
    int flags = hashFlags(argv[2]);
    RedisModuleKey *k = RedisModule_OpenKey(ctx, argv[1], REDISMODULE_READ);
    if (!k) return RedisModule_ReplyWithNull(ctx);
    RedisModuleString *v1 = NULL, *v2 = NULL;
    int e1 = -1, e2 = -1, rc;
    void *p1 = (flags & REDISMODULE_HASH_EXISTS) ? (void *)&e1 : (void *)&v1;
    void *p2 = (flags & REDISMODULE_HASH_EXISTS) ? (void *)&e2 : (void *)&v2;
    if (flags & REDISMODULE_HASH_CFIELDS)
        rc = argc == 4 ? RedisModule_HashGet(k, flags, RedisModule_StringPtrLen(argv[3], NULL), p1, NULL)
                       : RedisModule_HashGet(k, flags, RedisModule_StringPtrLen(argv[3], NULL), p1,
                                             RedisModule_StringPtrLen(argv[4], NULL), p2, NULL);
    else
        rc = argc == 4 ? RedisModule_HashGet(k, flags, argv[3], p1, NULL)
                       : RedisModule_HashGet(k, flags, argv[3], p1, argv[4], p2, NULL);
    if (rc != REDISMODULE_OK) return RedisModule_ReplyWithError(ctx, "ERR HashGet failed");
    RedisModule_ReplyWithArray(ctx, argc - 3);
    if (flags & REDISMODULE_HASH_EXISTS) {
        RedisModule_ReplyWithLongLong(ctx, e1);
        if (argc == 5) RedisModule_ReplyWithLongLong(ctx, e2);
    } else {
        if (v1) RedisModule_ReplyWithString(ctx, v1);
        else RedisModule_ReplyWithNull(ctx);
        if (argc == 5) {
            if (v2) RedisModule_ReplyWithString(ctx, v2);
            else RedisModule_ReplyWithNull(ctx);
        }
    }
    return REDISMODULE_OK;
}

static int zflags(RedisModuleString *s) {
    const char *p = RedisModule_StringPtrLen(s, NULL);
    int f = 0;
    for (; *p; p++) {
        if (*p == 'x') f |= REDISMODULE_ZADD_XX;
        if (*p == 'n') f |= REDISMODULE_ZADD_NX;
        if (*p == 'g') f |= REDISMODULE_ZADD_GT;
        if (*p == 'l') f |= REDISMODULE_ZADD_LT;
    }
    return f;
}

/* key.zadd k flags score member | key.zincr k flags incr member:
 * [rc, out flags(, new score)] */
static int cmdZAdd(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    double score, newscore = 0;
    if (argc != 5 || RedisModule_StringToDouble(argv[3], &score) != REDISMODULE_OK) {
        const char *t = RedisModule_StringPtrLen(argv[argc > 3 ? 3 : 0], NULL);
        if (argc != 5 || strcmp(t, "nan")) return RedisModule_WrongArity(ctx);
        score = 0.0 / 0.0;
    }
    RedisModule_AutoMemory(ctx);
    int incr = !strcasecmp(RedisModule_StringPtrLen(argv[0], NULL), "key.zincr");
    RedisModuleKey *k = RedisModule_OpenKey(ctx, argv[1], REDISMODULE_WRITE);
    int flags = zflags(argv[2]);
    int rc = incr ? RedisModule_ZsetIncrby(k, score, argv[4], &flags, &newscore)
                  : RedisModule_ZsetAdd(k, score, argv[4], &flags);
    if (rc == REDISMODULE_OK) RedisModule_ReplicateVerbatim(ctx);
    RedisModule_ReplyWithArray(ctx, incr ? 3 : 2);
    RedisModule_ReplyWithLongLong(ctx, rc);
    RedisModule_ReplyWithLongLong(ctx, flags);
    if (incr) RedisModule_ReplyWithDouble(ctx, newscore);
    return REDISMODULE_OK;
}

static int cmdZRem(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    if (argc != 3) return RedisModule_WrongArity(ctx);
    RedisModule_AutoMemory(ctx);
    RedisModuleKey *k = RedisModule_OpenKey(ctx, argv[1], REDISMODULE_WRITE);
    int deleted = -1;
    int rc = RedisModule_ZsetRem(k, argv[2], &deleted);
    RedisModule_ReplicateVerbatim(ctx);
    RedisModule_ReplyWithArray(ctx, 2);
    RedisModule_ReplyWithLongLong(ctx, rc);
    return RedisModule_ReplyWithLongLong(ctx, deleted);
}

static int cmdZScore(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    if (argc != 3) return RedisModule_WrongArity(ctx);
    RedisModule_AutoMemory(ctx);
    RedisModuleKey *k = RedisModule_OpenKey(ctx, argv[1], REDISMODULE_READ);
    double score = 0;
    int rc = k ? RedisModule_ZsetScore(k, argv[2], &score) : -1;
    RedisModule_ReplyWithArray(ctx, 2);
    RedisModule_ReplyWithLongLong(ctx, rc);
    return RedisModule_ReplyWithDouble(ctx, score);
}

int RedisModule_OnLoad(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    (void)argv, (void)argc;
    if (RedisModule_Init(ctx, "keys", 1, REDISMODULE_APIVER_1) == REDISMODULE_ERR) return REDISMODULE_ERR;
    struct {
        const char *name;
        RedisModuleCmdFunc fn;
        const char *flags;
    } cmds[] = {{"key.set", cmdSet, "write deny-oom fast"},
                {"key.get", cmdGet, "readonly fast"},
                {"key.type", cmdType, "readonly"},
                {"key.len", cmdLen, "readonly"},
                {"key.del", cmdDel, "write"},
                {"key.unlink", cmdUnlink, "write"},
                {"key.append", cmdAppend, "write deny-oom"},
                {"key.truncate", cmdTruncate, "write"},
                {"key.dmaupper", cmdDmaUpper, "write"},
                {"key.expire", cmdExpire, "write"},
                {"key.ttl", cmdTtl, "readonly"},
                {"key.exists", cmdExists, "readonly"},
                {"key.lpush", cmdLPush, "write deny-oom"},
                {"key.lpop", cmdLPop, "write"},
                {"key.lget", cmdLIndexOp, "readonly"},
                {"key.lset", cmdLIndexOp, "write"},
                {"key.linsert", cmdLIndexOp, "write"},
                {"key.ldel", cmdLIndexOp, "write"},
                {"key.hset", cmdHSet, "write deny-oom"},
                {"key.hget", cmdHGet, "readonly"},
                {"key.zadd", cmdZAdd, "write deny-oom"},
                {"key.zincr", cmdZAdd, "write deny-oom"},
                {"key.zrem", cmdZRem, "write"},
                {"key.zscore", cmdZScore, "readonly"}};
    for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
        if (RedisModule_CreateCommand(ctx, cmds[i].name, cmds[i].fn, cmds[i].flags, 1, 1, 1) == REDISMODULE_ERR)
            return REDISMODULE_ERR;
    return REDISMODULE_OK;
}
