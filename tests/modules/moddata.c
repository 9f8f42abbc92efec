/* moddata.c -- test module: dictionaries, the stream key API, and a data
 * type with aux data and the key-option callbacks.
 *
 * Load arguments: [aux N] (0 no aux, 1 after the keys, 2 before and after)
 * [v1] (the type's version-3 callbacks: mem_usage, free_effort, unlink,
 * copy, instead of the version-4 ones).
 *
 * Dictionary (one global dictionary):
 *   dict.setc k v / dict.replace k v     1 = OK, 0 = ERR
 *   dict.get k                           [value or nil, nokey]
 *   dict.del k                           [1/0, old value or nil]
 *   dict.size                            integer
 *   dict.walk op key steps               seek, then each step char: n =
 *                                        NextC, p = PrevC, N = Next (string),
 *                                        P = Prev; the keys (nil at end)
 *   dict.cmp op key cop ckey [steps]     seek, steps, then DictCompareC
 *   dict.reseek op key op2 key2          [reseek's raw answer, next key]
 *   dict.clear                           frees and recreates the dictionary
 *   dict.auto n                          n keys in an auto-memory dictionary
 *                                        never freed by the module; its size
 *   dict.nullval k                       stores NULL, reads it back
 * Streams:
 *   stream.add key id|* f v ...          the ID, or the errno name
 *   stream.addempty key id               no fields
 *   stream.range key start|- end|- [excl] [rev]   [[id, [f, v, ...]], ...]
 *   stream.del key id                    OK or errno name
 *   stream.iterdel key start|- end|- every    deletes every n-th entry
 *                                        through the iterator; count
 *   stream.trimlen key n [approx] / stream.trimid key id [approx]
 *   stream.errors key                    errno names of misuse cases
 * Data type "moddatat1":
 *   mdt.set key str / mdt.get key / mdt.aux.set before after / mdt.aux.get
 *   mdt.effort n                         what free_effort returns from now on
 *   mdt.counters                         callback counters
 *   mdt.tostring key                     SaveDataTypeToString then the loads
 *   mdt.defrag                           RegisterDefragFunc's answer */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "redismodule.h"

static RedisModuleDict *dict;

static const char *errnoName(int e) {
    switch (e) {
    case EINVAL: return "EINVAL";
    case ENOTSUP: return "ENOTSUP";
    case EBADF: return "EBADF";
    case EDOM: return "EDOM";
    case EFBIG: return "EFBIG";
    case ERANGE: return "ERANGE";
    case ENOENT: return "ENOENT";
    default: return "EOTHER";
    }
}

/* ---- dictionary ---- */

static int cmdSet(RedisModuleCtx *ctx, RedisModuleString **argv, int argc, int replace) {
    if (argc != 3) return RedisModule_WrongArity(ctx);
    size_t kl;
    const char *k = RedisModule_StringPtrLen(argv[1], &kl);
    RedisModuleString *v = RedisModule_CreateStringFromString(NULL, argv[2]);
    int rc;
    void *old = RedisModule_DictGetC(dict, (void *)k, kl, NULL);
    if (replace) {
        rc = RedisModule_DictReplaceC(dict, (void *)k, kl, v);
        if (old) RedisModule_FreeString(NULL, old);
    } else {
        rc = RedisModule_DictSetC(dict, (void *)k, kl, v);
        if (rc != REDISMODULE_OK) RedisModule_FreeString(NULL, v);
    }
    return RedisModule_ReplyWithLongLong(ctx, rc == REDISMODULE_OK);
}

static int cmdSetC(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) { return cmdSet(ctx, argv, argc, 0); }
static int cmdReplace(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) { return cmdSet(ctx, argv, argc, 1); }

static int cmdGet(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    if (argc != 2) return RedisModule_WrongArity(ctx);
    int nokey = -1;
    RedisModuleString *v = RedisModule_DictGet(dict, argv[1], &nokey);
    RedisModule_ReplyWithArray(ctx, 2);
    if (v) RedisModule_ReplyWithString(ctx, v);
    else RedisModule_ReplyWithNull(ctx);
    return RedisModule_ReplyWithLongLong(ctx, nokey);
}

static int cmdDel(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    if (argc != 2) return RedisModule_WrongArity(ctx);
    RedisModuleString *old = NULL;
    int rc = RedisModule_DictDel(dict, argv[1], &old);
    RedisModule_ReplyWithArray(ctx, 2);
    RedisModule_ReplyWithLongLong(ctx, rc == REDISMODULE_OK);
    if (old) {
        RedisModule_ReplyWithString(ctx, old);
        RedisModule_FreeString(NULL, old);
    } else {
        RedisModule_ReplyWithNull(ctx);
    }
    return REDISMODULE_OK;
}

static int cmdSize(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    (void)argv, (void)argc;
    return RedisModule_ReplyWithLongLong(ctx, (long long)RedisModule_DictSize(dict));
}

static void replyStep(RedisModuleCtx *ctx, RedisModuleDictIter *it, char step) {
    if (step == 'n' || step == 'p') {
        size_t kl;
        void *data = NULL;
        char *k = step == 'n' ? RedisModule_DictNextC(it, &kl, &data) : RedisModule_DictPrevC(it, &kl, &data);
        if (!k) {
            RedisModule_ReplyWithNull(ctx);
            return;
        }
        RedisModule_ReplyWithArray(ctx, 2);
        RedisModule_ReplyWithStringBuffer(ctx, k, kl);
        RedisModule_ReplyWithString(ctx, data);
    } else {
        void *data = NULL;
        RedisModuleString *k =
            step == 'N' ? RedisModule_DictNext(ctx, it, &data) : RedisModule_DictPrev(ctx, it, &data);
        if (!k) {
            RedisModule_ReplyWithNull(ctx);
            return;
        }
        RedisModule_ReplyWithArray(ctx, 2);
        RedisModule_ReplyWithString(ctx, k);
        RedisModule_ReplyWithString(ctx, data);
    }
}

static int cmdWalk(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    if (argc != 4) return RedisModule_WrongArity(ctx);
    RedisModule_AutoMemory(ctx);
    const char *op = RedisModule_StringPtrLen(argv[1], NULL);
    size_t n;
    const char *steps = RedisModule_StringPtrLen(argv[3], &n);
    RedisModuleDictIter *it = RedisModule_DictIteratorStart(dict, op, argv[2]);
    RedisModule_ReplyWithArray(ctx, (long)n);
    for (size_t i = 0; i < n; i++) replyStep(ctx, it, steps[i]);
    RedisModule_DictIteratorStop(it);
    return REDISMODULE_OK;
}

static int cmdCmp(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    if (argc != 5 && argc != 6) return RedisModule_WrongArity(ctx);
    size_t kl, ckl;
    const char *op = RedisModule_StringPtrLen(argv[1], NULL);
    const char *k = RedisModule_StringPtrLen(argv[2], &kl);
    const char *cop = RedisModule_StringPtrLen(argv[3], NULL);
    const char *ck = RedisModule_StringPtrLen(argv[4], &ckl);
    RedisModuleDictIter *it = RedisModule_DictIteratorStartC(dict, op, (void *)k, kl);
    if (argc == 6) {
        size_t n;
        const char *steps = RedisModule_StringPtrLen(argv[5], &n);
        for (size_t i = 0; i < n; i++) {
            if (steps[i] == 'n') RedisModule_DictNextC(it, NULL, NULL);
            else RedisModule_DictPrevC(it, NULL, NULL);
        }
    }
    int a = RedisModule_DictCompareC(it, cop, (void *)ck, ckl) == REDISMODULE_OK;
    int b = RedisModule_DictCompare(it, cop, argv[4]) == REDISMODULE_OK;
    RedisModule_DictIteratorStop(it);
    RedisModule_ReplyWithArray(ctx, 2);
    RedisModule_ReplyWithLongLong(ctx, a);
    return RedisModule_ReplyWithLongLong(ctx, b);
}

static int cmdReseek(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    if (argc != 5) return RedisModule_WrongArity(ctx);
    const char *op = RedisModule_StringPtrLen(argv[1], NULL);
    const char *op2 = RedisModule_StringPtrLen(argv[3], NULL);
    RedisModuleDictIter *it = RedisModule_DictIteratorStart(dict, op, argv[2]);
    RedisModule_DictNextC(it, NULL, NULL);
    int rc = RedisModule_DictIteratorReseek(it, op2, argv[4]);
    RedisModule_ReplyWithArray(ctx, 2);
    RedisModule_ReplyWithLongLong(ctx, rc);
    replyStep(ctx, it, 'n');
    RedisModule_DictIteratorStop(it);
    return REDISMODULE_OK;
}

static void dictFreeAll(void) {
    RedisModuleDictIter *it = RedisModule_DictIteratorStartC(dict, "^", NULL, 0);
    void *data;
    while (RedisModule_DictNextC(it, NULL, &data))
        if (data) RedisModule_FreeString(NULL, data);
    RedisModule_DictIteratorStop(it);
    RedisModule_FreeDict(NULL, dict);
}

static int cmdClear(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    (void)argv, (void)argc;
    dictFreeAll();
    dict = RedisModule_CreateDict(NULL);
    return RedisModule_ReplyWithSimpleString(ctx, "OK");
}

static int cmdAuto(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    if (argc != 2) return RedisModule_WrongArity(ctx);
    long long n;
    if (RedisModule_StringToLongLong(argv[1], &n) != REDISMODULE_OK) return RedisModule_ReplyWithError(ctx, "ERR n");
    RedisModule_AutoMemory(ctx);
    RedisModuleDict *d = RedisModule_CreateDict(ctx);
    for (long long i = 0; i < n; i++) {
        char buf[32];
        int len = snprintf(buf, sizeof(buf), "k%lld", i);
        RedisModule_DictSetC(d, buf, (size_t)len, NULL);
    }
    RedisModuleDict *freed = RedisModule_CreateDict(ctx);
    RedisModule_FreeDict(ctx, freed);
    return RedisModule_ReplyWithLongLong(ctx, (long long)RedisModule_DictSize(d));
}

static int cmdNullVal(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    if (argc != 2) return RedisModule_WrongArity(ctx);
    RedisModuleDict *d = RedisModule_CreateDict(NULL);
    int rc = RedisModule_DictSet(d, argv[1], NULL);
    int nokey = -1;
    void *v = RedisModule_DictGet(d, argv[1], &nokey);
    void *old = (void *)1;
    int drc = RedisModule_DictDel(d, argv[1], &old);
    RedisModule_FreeDict(NULL, d);
    RedisModule_ReplyWithArray(ctx, 5);
    RedisModule_ReplyWithLongLong(ctx, rc == REDISMODULE_OK);
    RedisModule_ReplyWithLongLong(ctx, v == NULL);
    RedisModule_ReplyWithLongLong(ctx, nokey);
    RedisModule_ReplyWithLongLong(ctx, drc == REDISMODULE_OK);
    return RedisModule_ReplyWithLongLong(ctx, old == NULL);
}

/* ---- streams ---- */

static int parseId(RedisModuleString *s, RedisModuleStreamID *id) {
    unsigned long long ms, seq;
    const char *p = RedisModule_StringPtrLen(s, NULL);
    if (sscanf(p, "%llu-%llu", &ms, &seq) != 2) return -1;
    id->ms = ms;
    id->seq = seq;
    return 0;
}

static void replyId(RedisModuleCtx *ctx, const RedisModuleStreamID *id) {
    RedisModule_ReplyWithString(
        ctx, RedisModule_CreateStringPrintf(ctx, "%llu-%llu", (unsigned long long)id->ms, (unsigned long long)id->seq));
}

static int cmdStreamAdd(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    if (argc < 3 || argc % 2 == 0) return RedisModule_WrongArity(ctx);
    RedisModule_AutoMemory(ctx);
    RedisModuleKey *k = RedisModule_OpenKey(ctx, argv[1], REDISMODULE_READ | REDISMODULE_WRITE);
    RedisModuleStreamID id;
    int flags = 0;
    if (!strcmp(RedisModule_StringPtrLen(argv[2], NULL), "*")) flags = REDISMODULE_STREAM_ADD_AUTOID;
    else if (parseId(argv[2], &id) < 0) return RedisModule_ReplyWithError(ctx, "ERR bad id");
    if (RedisModule_StreamAdd(k, flags, &id, argv + 3, (argc - 3) / 2) != REDISMODULE_OK)
        return RedisModule_ReplyWithSimpleString(ctx, errnoName(errno));
    if (flags) return RedisModule_ReplyWithSimpleString(ctx, "auto");
    replyId(ctx, &id);
    return REDISMODULE_OK;
}

static int cmdStreamRange(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    if (argc < 4) return RedisModule_WrongArity(ctx);
    RedisModule_AutoMemory(ctx);
    RedisModuleKey *k = RedisModule_OpenKey(ctx, argv[1], REDISMODULE_READ);
    RedisModuleStreamID start, end, *sp = &start, *ep = &end;
    if (!strcmp(RedisModule_StringPtrLen(argv[2], NULL), "-")) sp = NULL;
    else if (parseId(argv[2], &start) < 0) return RedisModule_ReplyWithError(ctx, "ERR bad id");
    if (!strcmp(RedisModule_StringPtrLen(argv[3], NULL), "-")) ep = NULL;
    else if (parseId(argv[3], &end) < 0) return RedisModule_ReplyWithError(ctx, "ERR bad id");
    int flags = 0;
    for (int i = 4; i < argc; i++) {
        const char *f = RedisModule_StringPtrLen(argv[i], NULL);
        if (!strcasecmp(f, "excl")) flags |= REDISMODULE_STREAM_ITERATOR_EXCLUSIVE;
        else if (!strcasecmp(f, "rev")) flags |= REDISMODULE_STREAM_ITERATOR_REVERSE;
    }
    if (RedisModule_StreamIteratorStart(k, flags, sp, ep) != REDISMODULE_OK)
        return RedisModule_ReplyWithSimpleString(ctx, errnoName(errno));
    RedisModule_ReplyWithArray(ctx, REDISMODULE_POSTPONED_LEN);
    long n = 0;
    RedisModuleStreamID id;
    long nf;
    while (RedisModule_StreamIteratorNextID(k, &id, &nf) == REDISMODULE_OK) {
        RedisModule_ReplyWithArray(ctx, 2);
        replyId(ctx, &id);
        RedisModule_ReplyWithArray(ctx, nf * 2);
        RedisModuleString *f, *v;
        while (RedisModule_StreamIteratorNextField(k, &f, &v) == REDISMODULE_OK) {
            RedisModule_ReplyWithString(ctx, f);
            RedisModule_ReplyWithString(ctx, v);
        }
        n++;
    }
    int e = errno;
    RedisModule_ReplySetArrayLength(ctx, n);
    (void)e;
    RedisModule_StreamIteratorStop(k);
    return REDISMODULE_OK;
}

static int cmdStreamDel(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    if (argc != 3) return RedisModule_WrongArity(ctx);
    RedisModule_AutoMemory(ctx);
    RedisModuleKey *k = RedisModule_OpenKey(ctx, argv[1], REDISMODULE_READ | REDISMODULE_WRITE);
    RedisModuleStreamID id;
    if (parseId(argv[2], &id) < 0) return RedisModule_ReplyWithError(ctx, "ERR bad id");
    if (RedisModule_StreamDelete(k, &id) != REDISMODULE_OK)
        return RedisModule_ReplyWithSimpleString(ctx, errnoName(errno));
    return RedisModule_ReplyWithSimpleString(ctx, "OK");
}

static int cmdStreamIterDel(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    if (argc != 5) return RedisModule_WrongArity(ctx);
    RedisModule_AutoMemory(ctx);
    RedisModuleKey *k = RedisModule_OpenKey(ctx, argv[1], REDISMODULE_READ | REDISMODULE_WRITE);
    RedisModuleStreamID start, end, *sp = &start, *ep = &end;
    if (!strcmp(RedisModule_StringPtrLen(argv[2], NULL), "-")) sp = NULL;
    else if (parseId(argv[2], &start) < 0) return RedisModule_ReplyWithError(ctx, "ERR bad id");
    if (!strcmp(RedisModule_StringPtrLen(argv[3], NULL), "-")) ep = NULL;
    else if (parseId(argv[3], &end) < 0) return RedisModule_ReplyWithError(ctx, "ERR bad id");
    long long every;
    if (RedisModule_StringToLongLong(argv[4], &every) != REDISMODULE_OK || every < 1)
        return RedisModule_ReplyWithError(ctx, "ERR every");
    if (RedisModule_StreamIteratorStart(k, 0, sp, ep) != REDISMODULE_OK)
        return RedisModule_ReplyWithSimpleString(ctx, errnoName(errno));
    long long seen = 0, deleted = 0;
    RedisModuleStreamID id;
    long nf;
    int twice = -1;
    while (RedisModule_StreamIteratorNextID(k, &id, &nf) == REDISMODULE_OK) {
        if (seen++ % every == 0) {
            RedisModuleString *f;
            RedisModule_StreamIteratorNextField(k, &f, NULL);
            if (RedisModule_StreamIteratorDelete(k) == REDISMODULE_OK) deleted++;
            if (twice < 0) twice = RedisModule_StreamIteratorDelete(k) == REDISMODULE_ERR && errno == ENOENT;
        }
    }
    RedisModule_StreamIteratorStop(k);
    RedisModule_ReplyWithArray(ctx, 2);
    RedisModule_ReplyWithLongLong(ctx, deleted);
    return RedisModule_ReplyWithLongLong(ctx, twice);
}

static int cmdStreamTrim(RedisModuleCtx *ctx, RedisModuleString **argv, int argc, int byId) {
    if (argc != 3 && argc != 4) return RedisModule_WrongArity(ctx);
    RedisModule_AutoMemory(ctx);
    RedisModuleKey *k = RedisModule_OpenKey(ctx, argv[1], REDISMODULE_READ | REDISMODULE_WRITE);
    int flags = argc == 4 ? REDISMODULE_STREAM_TRIM_APPROX : 0;
    long long n;
    if (byId) {
        RedisModuleStreamID id;
        if (parseId(argv[2], &id) < 0) return RedisModule_ReplyWithError(ctx, "ERR bad id");
        n = RedisModule_StreamTrimByID(k, flags, &id);
    } else {
        long long len;
        if (RedisModule_StringToLongLong(argv[2], &len) != REDISMODULE_OK) return RedisModule_ReplyWithError(ctx, "ERR n");
        n = RedisModule_StreamTrimByLength(k, flags, len);
    }
    if (n < 0) return RedisModule_ReplyWithSimpleString(ctx, errnoName(errno));
    return RedisModule_ReplyWithLongLong(ctx, n);
}

static int cmdTrimLen(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    return cmdStreamTrim(ctx, argv, argc, 0);
}
static int cmdTrimId(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    return cmdStreamTrim(ctx, argv, argc, 1);
}

#define ERRNO_OF(call) ((call) == REDISMODULE_OK ? "OK" : errnoName(errno))

/* Misuse cases on key (which should hold a stream with 1-1 .. ). */
static int cmdStreamErrors(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    if (argc != 2) return RedisModule_WrongArity(ctx);
    RedisModule_AutoMemory(ctx);
    RedisModuleKey *r = RedisModule_OpenKey(ctx, argv[1], REDISMODULE_READ);
    RedisModuleKey *w = RedisModule_OpenKey(ctx, argv[1], REDISMODULE_READ | REDISMODULE_WRITE);
    RedisModuleString *none = RedisModule_CreateString(ctx, "moddata-no-such-key", 19);
    RedisModuleKey *e = RedisModule_OpenKey(ctx, none, REDISMODULE_READ | REDISMODULE_WRITE);
    RedisModuleStreamID zero = {0, 0}, one = {1, 1}, max = {UINT64_MAX, UINT64_MAX};
    RedisModuleString *fv[2] = {RedisModule_CreateString(ctx, "f", 1), RedisModule_CreateString(ctx, "v", 1)};
    long nf;
    RedisModuleString *f;
    RedisModule_ReplyWithArray(ctx, 22);
    RedisModule_ReplyWithSimpleString(ctx, ERRNO_OF(RedisModule_StreamAdd(w, 0, &zero, fv, 1)));
    RedisModule_ReplyWithSimpleString(ctx, ERRNO_OF(RedisModule_StreamAdd(w, 0, &one, fv, 1)));
    RedisModule_ReplyWithSimpleString(ctx, ERRNO_OF(RedisModule_StreamAdd(w, 0, NULL, fv, 1)));
    RedisModule_ReplyWithSimpleString(ctx, ERRNO_OF(RedisModule_StreamAdd(w, 8, &one, fv, 1)));
    RedisModule_ReplyWithSimpleString(ctx, ERRNO_OF(RedisModule_StreamAdd(w, 0, &one, NULL, 1)));
    RedisModule_ReplyWithSimpleString(ctx, ERRNO_OF(RedisModule_StreamAdd(r, 0, &max, fv, 1)));
    RedisModule_ReplyWithSimpleString(ctx, ERRNO_OF(RedisModule_StreamDelete(r, &one)));
    RedisModule_ReplyWithSimpleString(ctx, ERRNO_OF(RedisModule_StreamDelete(e, &one)));
    RedisModule_ReplyWithSimpleString(ctx, ERRNO_OF(RedisModule_StreamIteratorStart(e, 0, NULL, NULL)));
    RedisModule_ReplyWithSimpleString(ctx, ERRNO_OF(RedisModule_StreamIteratorStart(w, 4, NULL, NULL)));
    RedisModule_ReplyWithSimpleString(ctx, ERRNO_OF(RedisModule_StreamIteratorStop(w)));
    RedisModule_ReplyWithSimpleString(ctx, ERRNO_OF(RedisModule_StreamIteratorNextID(w, NULL, &nf)));
    RedisModule_ReplyWithSimpleString(
        ctx, ERRNO_OF(RedisModule_StreamIteratorStart(w, REDISMODULE_STREAM_ITERATOR_EXCLUSIVE, &max, NULL)));
    RedisModule_ReplyWithSimpleString(
        ctx, ERRNO_OF(RedisModule_StreamIteratorStart(w, REDISMODULE_STREAM_ITERATOR_EXCLUSIVE, NULL, &zero)));
    RedisModule_ReplyWithSimpleString(ctx, ERRNO_OF(RedisModule_StreamIteratorStart(w, 0, NULL, NULL)));
    RedisModule_ReplyWithSimpleString(ctx, ERRNO_OF(RedisModule_StreamIteratorStart(w, 0, NULL, NULL)));
    RedisModule_ReplyWithSimpleString(ctx, ERRNO_OF(RedisModule_StreamIteratorDelete(w)));
    RedisModule_ReplyWithSimpleString(ctx, ERRNO_OF(RedisModule_StreamIteratorNextField(w, &f, NULL)));
    RedisModule_ReplyWithSimpleString(ctx, ERRNO_OF(RedisModule_StreamDelete(w, &one)));
    RedisModule_ReplyWithLongLong(ctx, RedisModule_StreamTrimByLength(w, 0, -1) == -1 ? errno == EINVAL : 0);
    RedisModule_ReplyWithLongLong(ctx, RedisModule_StreamTrimByLength(r, 0, 0) == -1 ? errno == EBADF : 0);
    RedisModule_ReplyWithLongLong(ctx, RedisModule_StreamTrimByID(e, 0, &one) == -1 ? errno == ENOTSUP : 0);
    return REDISMODULE_OK;
}

static int cmdStreamAddEmpty(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    if (argc != 3) return RedisModule_WrongArity(ctx);
    RedisModule_AutoMemory(ctx);
    RedisModuleKey *k = RedisModule_OpenKey(ctx, argv[1], REDISMODULE_READ | REDISMODULE_WRITE);
    RedisModuleStreamID id;
    if (parseId(argv[2], &id) < 0) return RedisModule_ReplyWithError(ctx, "ERR bad id");
    if (RedisModule_StreamAdd(k, 0, &id, NULL, 0) != REDISMODULE_OK)
        return RedisModule_ReplyWithSimpleString(ctx, errnoName(errno));
    RedisModule_ReplyWithArray(ctx, 2);
    RedisModule_ReplyWithLongLong(ctx, RedisModule_KeyType(k));
    return RedisModule_ReplyWithLongLong(ctx, (long long)RedisModule_ValueLength(k));
}

/* ---- the data type ---- */

static RedisModuleType *mdt;
static RedisModuleString *auxBefore, *auxAfter;
static long long effortAnswer = 1;
static long long cUnlink, cFree, cEffort, cMem, cCopy, lastSamples = -1, lastFromDb = -9, lastToDb = -9;
static long long cAuxSave, cAuxLoad, lastAuxWhen, cSaveDb = -9, cLoadDb = -9;
static char lastFrom[64], lastTo[64];

static void *mdtLoad(RedisModuleIO *io, int encver) {
    (void)encver;
    cLoadDb = RedisModule_GetDbIdFromIO(io);
    return RedisModule_LoadString(io);
}

static void mdtSave(RedisModuleIO *io, void *value) {
    cSaveDb = RedisModule_GetDbIdFromIO(io);
    RedisModule_SaveString(io, value);
}

static void mdtFree(void *value) {
    __atomic_add_fetch(&cFree, 1, __ATOMIC_SEQ_CST);
    RedisModule_FreeString(NULL, value);
}

static void keyName(char *out, const RedisModuleString *s) {
    size_t l;
    const char *p = s ? RedisModule_StringPtrLen(s, &l) : "(null)";
    if (!s) l = 6;
    if (l > 63) l = 63;
    memcpy(out, p, l);
    out[l] = '\0';
}

static size_t mdtMem(const void *value) {
    cMem++;
    size_t l;
    RedisModule_StringPtrLen(value, &l);
    return l * 10;
}

static size_t mdtMem2(RedisModuleKeyOptCtx *ctx, const void *value, size_t samples) {
    cMem++;
    lastSamples = (long long)samples;
    lastFromDb = RedisModule_GetDbIdFromOptCtx(ctx);
    keyName(lastFrom, RedisModule_GetKeyNameFromOptCtx(ctx));
    size_t l;
    RedisModule_StringPtrLen(value, &l);
    return l * 10;
}

static size_t mdtEffort(RedisModuleString *key, const void *value) {
    (void)value;
    cEffort++;
    keyName(lastFrom, key);
    return (size_t)effortAnswer;
}

static size_t mdtEffort2(RedisModuleKeyOptCtx *ctx, const void *value) {
    (void)value;
    cEffort++;
    lastFromDb = RedisModule_GetDbIdFromOptCtx(ctx);
    keyName(lastFrom, RedisModule_GetKeyNameFromOptCtx(ctx));
    return (size_t)effortAnswer;
}

static void mdtUnlink(RedisModuleString *key, const void *value) {
    (void)value;
    cUnlink++;
    keyName(lastFrom, key);
}

static void mdtUnlink2(RedisModuleKeyOptCtx *ctx, const void *value) {
    (void)value;
    cUnlink++;
    lastFromDb = RedisModule_GetDbIdFromOptCtx(ctx);
    keyName(lastFrom, RedisModule_GetKeyNameFromOptCtx(ctx));
}

static void *mdtCopy(RedisModuleString *from, RedisModuleString *to, const void *value) {
    cCopy++;
    keyName(lastFrom, from);
    keyName(lastTo, to);
    size_t l;
    const char *p = RedisModule_StringPtrLen(value, &l);
    if (l == 4 && !memcmp(p, "fail", 4)) return NULL;
    return RedisModule_CreateStringFromString(NULL, value);
}

static void *mdtCopy2(RedisModuleKeyOptCtx *ctx, const void *value) {
    lastFromDb = RedisModule_GetDbIdFromOptCtx(ctx);
    lastToDb = RedisModule_GetToDbIdFromOptCtx(ctx);
    return mdtCopy((RedisModuleString *)RedisModule_GetKeyNameFromOptCtx(ctx),
                   (RedisModuleString *)RedisModule_GetToKeyNameFromOptCtx(ctx), value);
}

static void mdtAuxSave(RedisModuleIO *io, int when) {
    cAuxSave++;
    RedisModuleString *s = when == REDISMODULE_AUX_BEFORE_RDB ? auxBefore : auxAfter;
    RedisModule_SaveUnsigned(io, s ? 1 : 0);
    if (s) RedisModule_SaveString(io, s);
    RedisModule_SaveSigned(io, -when);
    RedisModule_SaveDouble(io, 0.5 * when);
}

static int mdtAuxLoad(RedisModuleIO *io, int encver, int when) {
    (void)encver;
    cAuxLoad++;
    lastAuxWhen = lastAuxWhen * 10 + when;
    RedisModuleString **slot = when == REDISMODULE_AUX_BEFORE_RDB ? &auxBefore : &auxAfter;
    if (*slot) RedisModule_FreeString(NULL, *slot);
    *slot = RedisModule_LoadUnsigned(io) ? RedisModule_LoadString(io) : NULL;
    if (RedisModule_LoadSigned(io) != -when) return REDISMODULE_ERR;
    if (RedisModule_LoadDouble(io) != 0.5 * when) return REDISMODULE_ERR;
    return RedisModule_IsIOError(io) ? REDISMODULE_ERR : REDISMODULE_OK;
}

static int cmdMdtSet(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    if (argc != 3) return RedisModule_WrongArity(ctx);
    RedisModuleKey *k = RedisModule_OpenKey(ctx, argv[1], REDISMODULE_READ | REDISMODULE_WRITE);
    int t = RedisModule_KeyType(k);
    if (t != REDISMODULE_KEYTYPE_EMPTY && RedisModule_ModuleTypeGetType(k) != mdt) {
        RedisModule_CloseKey(k);
        return RedisModule_ReplyWithError(ctx, REDISMODULE_ERRORMSG_WRONGTYPE);
    }
    RedisModule_ModuleTypeSetValue(k, mdt, RedisModule_CreateStringFromString(NULL, argv[2]));
    RedisModule_CloseKey(k);
    return RedisModule_ReplyWithSimpleString(ctx, "OK");
}

static int cmdMdtGet(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    if (argc != 2) return RedisModule_WrongArity(ctx);
    RedisModuleKey *k = RedisModule_OpenKey(ctx, argv[1], REDISMODULE_READ);
    if (!k) return RedisModule_ReplyWithNull(ctx);
    if (RedisModule_ModuleTypeGetType(k) != mdt) {
        RedisModule_CloseKey(k);
        return RedisModule_ReplyWithError(ctx, REDISMODULE_ERRORMSG_WRONGTYPE);
    }
    RedisModule_ReplyWithString(ctx, RedisModule_ModuleTypeGetValue(k));
    RedisModule_CloseKey(k);
    return REDISMODULE_OK;
}

static int cmdAuxSet(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    if (argc != 3) return RedisModule_WrongArity(ctx);
    if (auxBefore) RedisModule_FreeString(NULL, auxBefore);
    if (auxAfter) RedisModule_FreeString(NULL, auxAfter);
    auxBefore = RedisModule_CreateStringFromString(NULL, argv[1]);
    auxAfter = RedisModule_CreateStringFromString(NULL, argv[2]);
    return RedisModule_ReplyWithSimpleString(ctx, "OK");
}

static int cmdAuxGet(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    (void)argv, (void)argc;
    RedisModule_ReplyWithArray(ctx, 5);
    if (auxBefore) RedisModule_ReplyWithString(ctx, auxBefore);
    else RedisModule_ReplyWithNull(ctx);
    if (auxAfter) RedisModule_ReplyWithString(ctx, auxAfter);
    else RedisModule_ReplyWithNull(ctx);
    RedisModule_ReplyWithLongLong(ctx, cAuxSave);
    RedisModule_ReplyWithLongLong(ctx, cAuxLoad);
    return RedisModule_ReplyWithLongLong(ctx, lastAuxWhen);
}

static int cmdEffort(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    if (argc != 2 || RedisModule_StringToLongLong(argv[1], &effortAnswer) != REDISMODULE_OK)
        return RedisModule_WrongArity(ctx);
    return RedisModule_ReplyWithSimpleString(ctx, "OK");
}

static int cmdCounters(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    (void)argv, (void)argc;
    RedisModule_ReplyWithArray(ctx, 22);
    RedisModule_ReplyWithSimpleString(ctx, "unlink");
    RedisModule_ReplyWithLongLong(ctx, cUnlink);
    RedisModule_ReplyWithSimpleString(ctx, "free");
    RedisModule_ReplyWithLongLong(ctx, __atomic_load_n(&cFree, __ATOMIC_SEQ_CST));
    RedisModule_ReplyWithSimpleString(ctx, "effort");
    RedisModule_ReplyWithLongLong(ctx, cEffort);
    RedisModule_ReplyWithSimpleString(ctx, "mem");
    RedisModule_ReplyWithLongLong(ctx, cMem);
    RedisModule_ReplyWithSimpleString(ctx, "samples");
    RedisModule_ReplyWithLongLong(ctx, lastSamples);
    RedisModule_ReplyWithSimpleString(ctx, "copy");
    RedisModule_ReplyWithLongLong(ctx, cCopy);
    RedisModule_ReplyWithSimpleString(ctx, "from");
    RedisModule_ReplyWithCString(ctx, lastFrom);
    RedisModule_ReplyWithSimpleString(ctx, "to");
    RedisModule_ReplyWithCString(ctx, lastTo);
    RedisModule_ReplyWithSimpleString(ctx, "fromdb");
    RedisModule_ReplyWithLongLong(ctx, lastFromDb);
    RedisModule_ReplyWithSimpleString(ctx, "todb");
    RedisModule_ReplyWithLongLong(ctx, lastToDb);
    RedisModule_ReplyWithSimpleString(ctx, "iodb");
    RedisModule_ReplyWithLongLong(ctx, cSaveDb * 100 + cLoadDb);
    return REDISMODULE_OK;
}

static int cmdToString(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    if (argc != 2) return RedisModule_WrongArity(ctx);
    RedisModule_AutoMemory(ctx);
    RedisModuleKey *k = RedisModule_OpenKey(ctx, argv[1], REDISMODULE_READ);
    if (!k || RedisModule_ModuleTypeGetType(k) != mdt) return RedisModule_ReplyWithNull(ctx);
    RedisModuleString *s = RedisModule_SaveDataTypeToString(ctx, RedisModule_ModuleTypeGetValue(k), mdt);
    RedisModuleString *a = RedisModule_LoadDataTypeFromString(s, mdt);
    RedisModuleString *b = RedisModule_LoadDataTypeFromStringEncver(s, mdt, 3);
    RedisModule_ReplyWithArray(ctx, 3);
    RedisModule_ReplyWithString(ctx, s);
    RedisModule_ReplyWithString(ctx, a);
    RedisModule_ReplyWithString(ctx, b);
    RedisModule_FreeString(NULL, a);
    RedisModule_FreeString(NULL, b);
    return REDISMODULE_OK;
}

static int defragCb(RedisModuleDefragCtx *ctx) {
    (void)ctx;
    return 0;
}

static int cmdDefrag(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    (void)argv, (void)argc;
    return RedisModule_ReplyWithLongLong(ctx, RedisModule_RegisterDefragFunc(ctx, defragCb) == REDISMODULE_OK);
}

static int mdtDefrag(RedisModuleDefragCtx *ctx, RedisModuleString *key, void **value) {
    (void)ctx, (void)key, (void)value;
    return 0;
}

#define CMD(name, fn, flags)                                                                  \
    if (RedisModule_CreateCommand(ctx, name, fn, flags, 1, 1, 1) == REDISMODULE_ERR) return REDISMODULE_ERR
#define CMD0(name, fn, flags)                                                                 \
    if (RedisModule_CreateCommand(ctx, name, fn, flags, 0, 0, 0) == REDISMODULE_ERR) return REDISMODULE_ERR

int RedisModule_OnLoad(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    if (RedisModule_Init(ctx, "moddata", 1, REDISMODULE_APIVER_1) == REDISMODULE_ERR) return REDISMODULE_ERR;
    long long aux = 0;
    int v1 = 0;
    for (int i = 0; i < argc; i++) {
        const char *a = RedisModule_StringPtrLen(argv[i], NULL);
        if (!strcmp(a, "aux") && i + 1 < argc) RedisModule_StringToLongLong(argv[++i], &aux);
        else if (!strcmp(a, "v1")) v1 = 1;
    }
    RedisModuleTypeMethods tm = {
        .version = REDISMODULE_TYPE_METHOD_VERSION,
        .rdb_load = mdtLoad,
        .rdb_save = mdtSave,
        .free = mdtFree,
        .defrag = mdtDefrag,
    };
    if (v1) {
        tm.mem_usage = mdtMem;
        tm.free_effort = mdtEffort;
        tm.unlink = mdtUnlink;
        tm.copy = mdtCopy;
    } else {
        tm.mem_usage2 = mdtMem2;
        tm.free_effort2 = mdtEffort2;
        tm.unlink2 = mdtUnlink2;
        tm.copy2 = mdtCopy2;
    }
    if (aux) {
        tm.aux_load = mdtAuxLoad;
        tm.aux_save = mdtAuxSave;
        tm.aux_save_triggers =
            aux == 1 ? REDISMODULE_AUX_AFTER_RDB : REDISMODULE_AUX_BEFORE_RDB | REDISMODULE_AUX_AFTER_RDB;
    }
    mdt = RedisModule_CreateDataType(ctx, "moddatat1", 2, &tm);
    if (!mdt) return REDISMODULE_ERR;
    dict = RedisModule_CreateDict(NULL);
    CMD0("dict.setc", cmdSetC, "");
    CMD0("dict.replace", cmdReplace, "");
    CMD0("dict.get", cmdGet, "");
    CMD0("dict.del", cmdDel, "");
    CMD0("dict.size", cmdSize, "");
    CMD0("dict.walk", cmdWalk, "");
    CMD0("dict.cmp", cmdCmp, "");
    CMD0("dict.reseek", cmdReseek, "");
    CMD0("dict.clear", cmdClear, "");
    CMD0("dict.auto", cmdAuto, "");
    CMD0("dict.nullval", cmdNullVal, "");
    CMD("stream.add", cmdStreamAdd, "write");
    CMD("stream.addempty", cmdStreamAddEmpty, "write");
    CMD("stream.range", cmdStreamRange, "readonly");
    CMD("stream.del", cmdStreamDel, "write");
    CMD("stream.iterdel", cmdStreamIterDel, "write");
    CMD("stream.trimlen", cmdTrimLen, "write");
    CMD("stream.trimid", cmdTrimId, "write");
    CMD("stream.errors", cmdStreamErrors, "write");
    CMD("mdt.set", cmdMdtSet, "write");
    CMD("mdt.get", cmdMdtGet, "readonly");
    CMD("mdt.tostring", cmdToString, "readonly");
    CMD0("mdt.aux.set", cmdAuxSet, "");
    CMD0("mdt.aux.get", cmdAuxGet, "");
    CMD0("mdt.effort", cmdEffort, "");
    CMD0("mdt.counters", cmdCounters, "");
    CMD0("mdt.defrag", cmdDefrag, "");
    return REDISMODULE_OK;
}
