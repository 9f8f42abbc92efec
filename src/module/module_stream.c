/* module_stream.c -- the stream part of the low-level key API of modules
 * (RedisModule_StreamAdd, StreamDelete, the stream iterator, trimming),
 * over the stream value of ds/stream.h through its public functions.
 *
 * As Redis 7.0: these calls change the dataset without a keyspace
 * notification, without propagation and without counting a change (the
 * module does those); errno tells why a call failed: EINVAL bad
 * arguments, ENOTSUP the key is empty or not a stream, EBADF not opened
 * for writing or an iterator in the wrong state, EDOM an ID out of range
 * (0-0, not greater than the stream's last ID, an exclusive bound that
 * overflows), EFBIG the stream used up its IDs, ERANGE fields too large,
 * ENOENT no such entry or the iteration ended.  StreamDelete and
 * StreamIteratorDelete leave the stream's max-deleted-entry-id and
 * recorded first ID as they were (Redis's module API does not update
 * them, XDEL does); the trims update the first ID.
 *
 * Invariant: a key has at most one open iterator (RedisModuleKey.stream),
 * freed by StreamIteratorStop or CloseKey; it remembers the Stream it
 * walks, and a call finding the key's value replaced answers ENOTSUP. */
#include <errno.h>
#include <string.h>

#include "core/server.h"
#include "db/db.h"
#include "db/object.h"
#include "ds/alloc.h"
#include "ds/stream.h"
#include "ds/util.h"
#include "module/module_int.h"
#include "types/blocking.h"
#include "types/stream.h"

typedef struct ModStreamIter {
    Stream *s;
    StreamIter it;
    StreamID current;  /* the entry NextID gave, 0-0 when none (for Delete) */
    long long fieldsLeft; /* for NextField */
} ModStreamIter;

static kvobj *keyValue(RedisModuleKey *k) {
    kvobj *o = dbFind(k->db, k->key, sdsLen(k->key));
    if (o && kvIsExpired(o)) return NULL;
    return o;
}

/* The key's stream, or NULL with errno ENOTSUP. */
static Stream *keyStream(RedisModuleKey *k) {
    kvobj *o = keyValue(k);
    if (!o || kvType(o) != OBJ_STREAM) {
        errno = ENOTSUP;
        return NULL;
    }
    return kvPtr(o);
}

void moduleStreamIterFree(RedisModuleKey *k) {
    if (!k->stream) return;
    xfree(k->stream);
    k->stream = NULL;
}

static int RM_StreamAdd(RedisModuleKey *key, int flags, RedisModuleStreamID *id, RedisModuleString **argv,
                        int64_t numfields) {
    if (!key || (numfields != 0 && !argv) || numfields < 0 || (flags & ~REDISMODULE_STREAM_ADD_AUTOID) ||
        (!(flags & REDISMODULE_STREAM_ADD_AUTOID) && !id)) {
        errno = EINVAL;
        return REDISMODULE_ERR;
    }
    kvobj *o = keyValue(key);
    if (o && kvType(o) != OBJ_STREAM) {
        errno = ENOTSUP;
        return REDISMODULE_ERR;
    }
    if (!(key->mode & REDISMODULE_WRITE)) {
        errno = EBADF;
        return REDISMODULE_ERR;
    }
    if (!(flags & REDISMODULE_STREAM_ADD_AUTOID) && id->ms == 0 && id->seq == 0) {
        errno = EDOM;
        return REDISMODULE_ERR;
    }
    Stream *s = o ? kvPtr(o) : NULL;
    StreamID last = s ? s->lastId : (StreamID){0, 0};
    if (last.ms == UINT64_MAX && last.seq == UINT64_MAX) {
        errno = EFBIG;
        return REDISMODULE_ERR;
    }
    StreamID nid;
    if (flags & REDISMODULE_STREAM_ADD_AUTOID) {
        uint64_t ms = (uint64_t)mstime();
        if (ms > last.ms) {
            nid = (StreamID){ms, 0};
        } else {
            nid = last;
            streamIncrID(&nid);
        }
    } else {
        nid = (StreamID){id->ms, id->seq};
    }
    if (streamCompareID(&nid, &last) <= 0) {
        errno = EDOM;
        return REDISMODULE_ERR;
    }
    size_t total = 0;
    for (int64_t i = 0; i < numfields * 2; i++) total += sdsLen(argv[i]->s);
    if (total > STREAM_LISTPACK_MAX_SIZE) {
        errno = ERANGE;
        return REDISMODULE_ERR;
    }
    if (!s) {
        s = streamCreate();
        dbAdd(key->db, kvCreatePtr(key->key, sdsLen(key->key), OBJ_STREAM, OBJ_ENC_STREAM, s));
    }
    sds *fv = xmalloc(sizeof(sds) * (size_t)(numfields ? numfields * 2 : 1));
    for (int64_t i = 0; i < numfields * 2; i++) fv[i] = argv[i]->s;
    size_t maxBytes;
    long long maxEntries;
    streamNodeLimits(&maxBytes, &maxEntries);
    streamAppend(s, &nid, fv, (long)numfields, maxBytes, maxEntries);
    xfree(fv);
    signalKeyAsReady(key->db, key->key, sdsLen(key->key));
    if (id) {
        id->ms = nid.ms;
        id->seq = nid.seq;
    }
    return REDISMODULE_OK;
}

static int RM_StreamDelete(RedisModuleKey *key, RedisModuleStreamID *id) {
    if (!key || !id) {
        errno = EINVAL;
        return REDISMODULE_ERR;
    }
    Stream *s = keyStream(key);
    if (!s) return REDISMODULE_ERR;
    if (!(key->mode & REDISMODULE_WRITE) || key->stream) {
        errno = EBADF;
        return REDISMODULE_ERR;
    }
    StreamID sid = {id->ms, id->seq};
    if (streamDeleteID(s, &sid)) return REDISMODULE_OK;
    errno = ENOENT;
    return REDISMODULE_ERR;
}

static int RM_StreamIteratorStart(RedisModuleKey *key, int flags, RedisModuleStreamID *startid,
                                  RedisModuleStreamID *endid) {
    if (!key || (flags & ~(REDISMODULE_STREAM_ITERATOR_EXCLUSIVE | REDISMODULE_STREAM_ITERATOR_REVERSE))) {
        errno = EINVAL;
        return REDISMODULE_ERR;
    }
    Stream *s = keyStream(key);
    if (!s) return REDISMODULE_ERR;
    if (key->stream) {
        errno = EBADF;
        return REDISMODULE_ERR;
    }
    StreamID lo = {0, 0}, hi = {UINT64_MAX, UINT64_MAX};
    if (startid) lo = (StreamID){startid->ms, startid->seq};
    if (endid) hi = (StreamID){endid->ms, endid->seq};
    if (flags & REDISMODULE_STREAM_ITERATOR_EXCLUSIVE) {
        if ((startid && streamIncrID(&lo) < 0) || (endid && streamDecrID(&hi) < 0)) {
            errno = EDOM;
            return REDISMODULE_ERR;
        }
    }
    ModStreamIter *mi = xmalloc(sizeof(*mi));
    mi->s = s;
    streamIterStart(&mi->it, s, &lo, &hi, (flags & REDISMODULE_STREAM_ITERATOR_REVERSE) != 0);
    mi->current = (StreamID){0, 0};
    mi->fieldsLeft = 0;
    key->stream = mi;
    return REDISMODULE_OK;
}

/* The key's iterator over the stream the key still holds; NULL with errno
 * set otherwise. */
static ModStreamIter *keyIter(RedisModuleKey *key) {
    if (!key) {
        errno = EINVAL;
        return NULL;
    }
    Stream *s = keyStream(key);
    if (!s) return NULL;
    ModStreamIter *mi = key->stream;
    if (!mi) {
        errno = EBADF;
        return NULL;
    }
    if (mi->s != s) {
        errno = ENOTSUP;
        return NULL;
    }
    return mi;
}

static int RM_StreamIteratorStop(RedisModuleKey *key) {
    if (!key) {
        errno = EINVAL;
        return REDISMODULE_ERR;
    }
    if (!keyStream(key)) return REDISMODULE_ERR;
    if (!key->stream) {
        errno = EBADF;
        return REDISMODULE_ERR;
    }
    moduleStreamIterFree(key);
    return REDISMODULE_OK;
}

static int RM_StreamIteratorNextID(RedisModuleKey *key, RedisModuleStreamID *id, long *numfields) {
    ModStreamIter *mi = keyIter(key);
    if (!mi) return REDISMODULE_ERR;
    StreamID got;
    long long nf;
    if (streamIterNext(&mi->it, &got, &nf)) {
        mi->current = got;
        mi->fieldsLeft = nf;
        if (id) {
            id->ms = got.ms;
            id->seq = got.seq;
        }
        if (numfields) *numfields = (long)nf;
        return REDISMODULE_OK;
    }
    mi->current = (StreamID){0, 0};
    mi->fieldsLeft = 0;
    errno = ENOENT;
    return REDISMODULE_ERR;
}

static int RM_StreamIteratorNextField(RedisModuleKey *key, RedisModuleString **field_ptr,
                                      RedisModuleString **value_ptr) {
    ModStreamIter *mi = keyIter(key);
    if (!mi) return REDISMODULE_ERR;
    if (mi->fieldsLeft <= 0) {
        errno = ENOENT;
        return REDISMODULE_ERR;
    }
    const unsigned char *f, *v;
    size_t flen, vlen;
    streamIterField(&mi->it, &f, &flen, &v, &vlen);
    if (field_ptr) *field_ptr = modStringNew(key->ctx, (const char *)f, flen);
    if (value_ptr) *value_ptr = modStringNew(key->ctx, (const char *)v, vlen);
    mi->fieldsLeft--;
    return REDISMODULE_OK;
}

static int RM_StreamIteratorDelete(RedisModuleKey *key) {
    if (!key) {
        errno = EINVAL;
        return REDISMODULE_ERR;
    }
    if (!keyStream(key)) return REDISMODULE_ERR;
    if (!(key->mode & REDISMODULE_WRITE) || !key->stream) {
        errno = EBADF;
        return REDISMODULE_ERR;
    }
    ModStreamIter *mi = keyIter(key);
    if (!mi) return REDISMODULE_ERR;
    if (mi->current.ms == 0 && mi->current.seq == 0) {
        errno = ENOENT;
        return REDISMODULE_ERR;
    }
    streamIterDelete(&mi->it);
    mi->current = (StreamID){0, 0};
    mi->fieldsLeft = 0;
    return REDISMODULE_OK;
}

/* Redis's trim of the module API: approximate trims remove whole nodes,
 * at most 100 times stream-node-max-entries entries (no bound when that
 * is 0). */
static long long trim(RedisModuleKey *key, int flags, long long maxLen, const StreamID *minId) {
    Stream *s = keyStream(key);
    if (!s) return -1;
    if (!(key->mode & REDISMODULE_WRITE)) {
        errno = EBADF;
        return -1;
    }
    int approx = (flags & REDISMODULE_STREAM_TRIM_APPROX) != 0;
    size_t maxBytes;
    long long maxEntries;
    streamNodeLimits(&maxBytes, &maxEntries);
    return streamTrim(s, maxLen, minId, approx, approx ? 100 * maxEntries : 0);
}

static long long RM_StreamTrimByLength(RedisModuleKey *key, int flags, long long length) {
    if (!key || (flags & ~REDISMODULE_STREAM_TRIM_APPROX) || length < 0) {
        errno = EINVAL;
        return -1;
    }
    return trim(key, flags, length, NULL);
}

static long long RM_StreamTrimByID(RedisModuleKey *key, int flags, RedisModuleStreamID *id) {
    if (!key || (flags & ~REDISMODULE_STREAM_TRIM_APPROX) || !id) {
        errno = EINVAL;
        return -1;
    }
    StreamID minId = {id->ms, id->seq};
    return trim(key, flags, 0, &minId);
}

#define API(fn) {"RedisModule_" #fn, (void *)(uintptr_t)RM_##fn}
const ApiEntry moduleStreamApi[] = {
    API(StreamAdd),           API(StreamDelete),           API(StreamIteratorStart),
    API(StreamIteratorStop),  API(StreamIteratorNextID),   API(StreamIteratorNextField),
    API(StreamIteratorDelete), API(StreamTrimByLength),    API(StreamTrimByID),
    {NULL, NULL}};
