/* object.c -- creating, reading and freeing kvobj entries (see object.h for
 * the layout).  Entry sizes are computed here and nowhere else. */
#include "db/object.h"

#include "db/db.h"

#include <stdio.h>
#include <stdlib.h>

#include "ds/alloc.h"
#include "ds/slab.h"
#include "ds/util.h"


/* --- per-type operations --- */

/* A string's value pointer is a raw sds; int and embstr strings have none.
 * A reply may still be sending it (pinned, see sds.h): then the last reply
 * to finish frees it.  May run on the lazy-free thread. */
static void stringFree(void *ptr, int encoding) {
    if (encoding == OBJ_ENC_RAW) sdsDisown(ptr);
}

static void *stringDup(const void *ptr, int encoding) {
    return encoding == OBJ_ENC_RAW ? sdsDup((const sds)ptr) : NULL;
}

static size_t stringSize(const void *ptr, int encoding) {
    return encoding == OBJ_ENC_RAW ? sdsAllocSize((const sds)ptr) : 0;
}

/* Indexed by type (3 bits): the registered operations (copies, so that
 * the persistence layer can fill its slots), and a pointer to each
 * registered one (NULL otherwise).  Strings are always there. */
static ObjectType typeTable[8] = {[OBJ_STRING] = {.free = stringFree, .dup = stringDup, .size = stringSize}};
static const ObjectType *typeOps[8] = {[OBJ_STRING] = &typeTable[OBJ_STRING]};

void objectRegisterType(int type, const ObjectType *ops) {
    ObjectType *t = &typeTable[type & 7];
    if (!ops) { /* unregister (tests) */
        memset(t, 0, sizeof(*t));
        typeOps[type & 7] = NULL;
        return;
    }
    t->free = ops->free;
    t->dup = ops->dup;
    t->size = ops->size;
    typeOps[type & 7] = t;
}

void objectRegisterPersistence(int type, void (*digest)(const kvobj *, unsigned char[20]),
                               int (*rdbType)(const kvobj *), void (*rdbSave)(struct RdbWriter *, const kvobj *),
                               kvobj *(*rdbLoad)(struct RdbReader *, int, const char *, size_t, int *)) {
    ObjectType *t = &typeTable[type & 7];
    t->digest = digest;
    t->rdbType = rdbType;
    t->rdbSave = rdbSave;
    t->rdbLoad = rdbLoad;
}

const ObjectType *objectTypeOps(int type) { return typeOps[type & 7]; }

/* Bytes of the value area for a stored encoding: the EMBSTR length byte
 * and bytes, an inline listpack's room, or the slot. */
static size_t valueArea(int enc, size_t vlen) {
    if (enc == OBJ_ENC_EMBSTR) return 1 + vlen;
    if (enc == OBJ_ENC_LISTPACK_INLINE || (unsigned)(enc - 3) < 3) return vlen; /* inline or packed */
    return kvSlotSizeFor(enc);
}

/* Entries are the blocks there are millions of: they come from the slab
 * allocator (ds/slab.h), which has the 8-byte-step size classes jemalloc
 * lacks (a 34-byte entry costs 40, not 48); every entry block is freed
 * with slabFree and resized with slabRealloc (kvRealloc), never with
 * xfree / xrealloc.  xmallocSize answers for both kinds of block. */

/* The bytes kvAlloc takes for an entry (arguments as kvAlloc's). */
static inline size_t entryBytes(size_t keylen, int enc, size_t vlen, int withExpire) {
    return sizeof(kvobj) + (withExpire ? 12 : 0) + (keylen >= 255 ? 4 : 0) + keylen + valueArea(enc, vlen);
}

/* Allocate an entry with room for the key and the value area (see
 * valueArea; vlen is the EMBSTR length or the inline listpack's room) and,
 * when withExpire, for an expire: `when`, its TTL position left for db.c
 * to set when it indexes the entry.  Writes header and key. */
static inline __attribute__((always_inline)) kvobj *kvAlloc(const char *key, size_t keylen, int type, int enc,
                                                            size_t vlen, int withExpire, long long when) {
    int longKey = keylen >= 255;
    size_t expBytes = withExpire ? 12 : 0;
    kvobj *o = slabAlloc(entryBytes(keylen, enc, vlen, withExpire));
    memset(o->link, 0, sizeof(o->link));
    o->typeenc = (uint8_t)((type & 7) | ((enc & 15) << 3) | (withExpire ? KV_EXPIRE_FLAG : 0));
    kvSetLru(o, dbInitialLru());
    o->keylen8 = longKey ? 255 : (uint8_t)keylen;
    if (withExpire) {
        uint32_t pos = 0;
        memcpy(o->data, &when, 8);
        memcpy(o->data + 8, &pos, 4);
    }
    if (longKey) {
        uint32_t l = (uint32_t)keylen;
        memcpy(o->data + expBytes, &l, 4);
    }
    memcpy((char *)kvKey(o), key, keylen);
    return o;
}

void kvPointerTooWide(const void *p) {
    fprintf(stderr, "cairn: value pointer %p does not fit 48 bits\n", p);
    abort();
}

void kvPackedPtr(const kvobj *o) {
    fprintf(stderr, "cairn: kvPtr on entry %p whose value is packed (not unpacked first)\n", (const void *)o);
    abort();
}

void kvNoPointerSlot(const kvobj *o) {
    fprintf(stderr, "cairn: kvSetPtr on entry %p whose value is inline\n", (const void *)o);
    abort();
}

static kvobj *createInline(const char *key, size_t keylen, int type, const void *lp, size_t len, size_t cap,
                           int withExpire, long long when) {
    kvobj *o = kvAlloc(key, keylen, type, OBJ_ENC_LISTPACK_INLINE, cap > len ? cap : len, withExpire, when);
    memcpy(kvPtr(o), lp, len);
    return o;
}

kvobj *kvCreateInline(const char *key, size_t keylen, int type, const void *lp, size_t len, size_t cap) {
    return createInline(key, keylen, type, lp, len, cap, 0, 0);
}

kvobj *kvCreateInlineExpire(const char *key, size_t keylen, int type, const void *lp, size_t len, size_t cap,
                            long long when) {
    return createInline(key, keylen, type, lp, len, cap, 1, when);
}

kvobj *kvCloneShell(const kvobj *o, int enc, size_t inlineCap) {
    size_t keylen = kvKeyLen(o);
    size_t head = sizeof(kvobj) + kvExpireSize(o) + kvKeyLenSize(o);
    kvobj *n = slabAlloc(head + keylen + valueArea(enc, inlineCap)); /* valueArea counts the slot */
    memcpy(n, o, head); /* link, type, access bits, key length, expire + TTL position */
    n->typeenc = (uint8_t)((o->typeenc & ~(15 << 3)) | ((enc & 15) << 3));
    memcpy((char *)kvKey(n), kvKey(o), keylen);
    return n;
}

size_t kvInlineShellSize(const kvobj *o) {
    return sizeof(kvobj) + kvExpireSize(o) + kvKeyLenSize(o) + kvKeyLen(o);
}

size_t kvPointerShellSize(const kvobj *o) { return kvInlineShellSize(o) + 6; }

static inline __attribute__((always_inline)) kvobj *createPtr(const char *key, size_t keylen, int type,
                                                              int encoding, void *ptr, int withExpire,
                                                              long long when) {
    kvobj *o = kvAlloc(key, keylen, type, encoding, 0, withExpire, when);
    kvSetPtr(o, ptr);
    return o;
}

static inline __attribute__((always_inline)) kvobj *createInt(const char *key, size_t keylen, long long v,
                                                              int withExpire, long long when) {
    kvobj *o = kvAlloc(key, keylen, OBJ_STRING, OBJ_ENC_INT, 0, withExpire, when);
    kvSetInt(o, v);
    return o;
}

static inline __attribute__((always_inline)) kvobj *createEmbstr(const char *key, size_t keylen, const char *val,
                                                                 size_t vlen, int withExpire, long long when) {
    kvobj *o = kvAlloc(key, keylen, OBJ_STRING, OBJ_ENC_EMBSTR, vlen, withExpire, when);
    unsigned char *p = (unsigned char *)kvKey(o) + keylen;
    p[0] = (unsigned char)vlen;
    memcpy(p + 1, val, vlen);
    return o;
}

static inline __attribute__((always_inline)) kvobj *createString(const char *key, size_t keylen, const char *val,
                                                                 size_t vlen, int withExpire, long long when) {
    long long v;
    if (vlen <= 20 && stringToLongLong(val, vlen, &v)) return createInt(key, keylen, v, withExpire, when);
    if (vlen <= OBJ_EMBSTR_MAX) return createEmbstr(key, keylen, val, vlen, withExpire, when);
    return createPtr(key, keylen, OBJ_STRING, OBJ_ENC_RAW, sdsNewLen(val, vlen), withExpire, when);
}

int kvRewriteString(kvobj *o, const char *val, size_t vlen, int withExpire, long long when) {
    if (kvType(o) != OBJ_STRING || kvHasExpire(o) != (withExpire != 0)) return 0;
    int enc = kvRawEncoding(o);
    long long v;
    if (vlen <= 20 && stringToLongLong(val, vlen, &v)) {
        if (enc != OBJ_ENC_INT) return 0;
        kvSetInt(o, v);
    } else if (vlen <= OBJ_EMBSTR_MAX && enc == OBJ_ENC_EMBSTR) {
        size_t keylen = kvKeyLen(o);
        unsigned char *p = (unsigned char *)kvKey(o) + keylen;
        if (p[0] != vlen) { /* kvAlloc's size for each length: one slab class? */
            int had = slabClassOf(entryBytes(keylen, OBJ_ENC_EMBSTR, p[0], withExpire));
            if (had < 0 || slabClassOf(entryBytes(keylen, OBJ_ENC_EMBSTR, vlen, withExpire)) != had) return 0;
        }
        p[0] = (unsigned char)vlen;
        memcpy(p + 1, val, vlen);
    } else {
        return 0;
    }
    if (withExpire) memcpy(o->data, &when, 8); /* its TTL position stays */
    return 1;
}

kvobj *kvCreatePtr(const char *key, size_t keylen, int type, int encoding, void *ptr) {
    return createPtr(key, keylen, type, encoding, ptr, 0, 0);
}

kvobj *kvCreateInt(const char *key, size_t keylen, long long v) { return createInt(key, keylen, v, 0, 0); }

kvobj *kvCreateEmbstr(const char *key, size_t keylen, const char *val, size_t vlen) {
    return createEmbstr(key, keylen, val, vlen, 0, 0);
}

kvobj *kvCreateRawString(const char *key, size_t keylen, sds takes) {
    return createPtr(key, keylen, OBJ_STRING, OBJ_ENC_RAW, takes, 0, 0);
}

kvobj *kvCreateString(const char *key, size_t keylen, const char *val, size_t vlen) {
    return createString(key, keylen, val, vlen, 0, 0);
}

kvobj *kvCreatePtrExpire(const char *key, size_t keylen, int type, int encoding, void *ptr, long long when) {
    return createPtr(key, keylen, type, encoding, ptr, 1, when);
}

kvobj *kvCreateIntExpire(const char *key, size_t keylen, long long v, long long when) {
    return createInt(key, keylen, v, 1, when);
}

kvobj *kvCreateEmbstrExpire(const char *key, size_t keylen, const char *val, size_t vlen, long long when) {
    return createEmbstr(key, keylen, val, vlen, 1, when);
}

kvobj *kvCreateStringExpire(const char *key, size_t keylen, const char *val, size_t vlen, long long when) {
    return createString(key, keylen, val, vlen, 1, when);
}

kvobj *kvCreateRawStringExpire(const char *key, size_t keylen, sds takes, long long when) {
    return createPtr(key, keylen, OBJ_STRING, OBJ_ENC_RAW, takes, 1, when);
}

/* Inline values (int, embstr, inline listpack, packed) go with the entry. */
static int hasValuePointer(const kvobj *o) {
    int enc = kvRawEncoding(o);
    return enc != OBJ_ENC_INT && enc != OBJ_ENC_EMBSTR && enc != OBJ_ENC_LISTPACK_INLINE && !kvPacked(o);
}

static void freeValue(kvobj *o) {
    if (!hasValuePointer(o)) return;
    const ObjectType *ops = typeOps[kvType(o)];
    if (ops) ops->free(kvPtr(o), kvEncoding(o));
}

void kvFree(kvobj *o) {
    if (!o) return;
    freeValue(o);
    slabFree(o);
}

void kvFreeBatchCb(void *entry, void *batch) {
    KvFreeBatch *b = batch;
    b->e[b->n++] = entry;
    if (b->n == KV_FREE_BATCH) kvFreeBatchEnd(b);
}

void kvFreeBatchEnd(KvFreeBatch *b) {
    /* The values one by one; the slab slots, moved to the front, together. */
    size_t k = 0;
    for (size_t i = 0; i < b->n; i++) {
        freeValue(b->e[i]);
        if (slabOwns(b->e[i])) b->e[k++] = b->e[i];
        else xfree(b->e[i]);
    }
    slabFreeSlots((void *const *)b->e, k);
    b->n = 0;
}

void kvFreeShell(kvobj *o) { slabFree(o); }

void *kvAllocBlock(size_t size) { return slabAlloc(size); }

kvobj *kvRealloc(kvobj *o, size_t size) { return slabRealloc(o, size); }

size_t kvGoodSize(size_t size) { return slabGoodSize(size); }

const char *kvStringBytes(const kvobj *o, char *buf, size_t *len) {
    switch (kvEncoding(o)) {
    case OBJ_ENC_INT:
        *len = (size_t)longLongToString(buf, 21, kvInt(o));
        return buf;
    case OBJ_ENC_EMBSTR: {
        const unsigned char *p = (const unsigned char *)kvKey(o) + kvKeyLen(o);
        *len = p[0];
        return (const char *)p + 1;
    }
    default: {
        sds s = kvPtr(o);
        *len = sdsLen(s);
        return s;
    }
    }
}

size_t kvStringLen(const kvobj *o) {
    char buf[24];
    size_t len;
    if (kvEncoding(o) == OBJ_ENC_INT) return (size_t)longLongToString(buf, sizeof(buf), kvInt(o));
    kvStringBytes(o, buf, &len);
    return len;
}

sds kvStringDup(const kvobj *o) {
    char buf[24];
    size_t len;
    const char *p = kvStringBytes(o, buf, &len);
    return sdsNewLen(p, len);
}

unsigned kvLru(const kvobj *o) {
    return (unsigned)o->lru[0] | ((unsigned)o->lru[1] << 8) | ((unsigned)o->lru[2] << 16);
}

void kvSetLru(kvobj *o, unsigned v) {
    o->lru[0] = (uint8_t)v;
    o->lru[1] = (uint8_t)(v >> 8);
    o->lru[2] = (uint8_t)(v >> 16);
}

const char *typeName(int type) {
    switch (type) {
    case OBJ_STRING: return "string";
    case OBJ_LIST: return "list";
    case OBJ_SET: return "set";
    case OBJ_ZSET: return "zset";
    case OBJ_HASH: return "hash";
    case OBJ_STREAM: return "stream";
    default: return "unknown";
    }
}

const char *(*kvModuleTypeName)(const kvobj *o);

const char *kvTypeName(const kvobj *o) {
    if (kvType(o) == OBJ_MODULE && kvModuleTypeName) return kvModuleTypeName(o);
    return typeName(kvType(o));
}

const char *encodingName(int encoding) {
    switch (encoding) {
    case OBJ_ENC_RAW: return "raw";
    case OBJ_ENC_INT: return "int";
    case OBJ_ENC_HT: return "hashtable";
    case OBJ_ENC_ZIPMAP: return "zipmap";
    case OBJ_ENC_LINKEDLIST: return "linkedlist";
    case OBJ_ENC_ZIPLIST: return "ziplist";
    case OBJ_ENC_INTSET: return "intset";
    case OBJ_ENC_SKIPLIST: return "skiplist";
    case OBJ_ENC_EMBSTR: return "embstr";
    case OBJ_ENC_QUICKLIST: return "quicklist";
    case OBJ_ENC_STREAM: return "stream";
    case OBJ_ENC_LISTPACK: return "listpack";
    case OBJ_ENC_LISTPACK_EX: return "listpackex";
    default: return "unknown";
    }
}

void *objectDupValue(const kvobj *o) {
    const ObjectType *ops = typeOps[kvType(o)];
    if (!ops) return NULL;
    if (kvType(o) == OBJ_STRING && !hasValuePointer(o)) return NULL;
    return ops->dup(kvPtr(o), kvEncoding(o));
}

size_t (*objectModuleMemUsage)(const kvobj *o, size_t samples);

size_t objectMemoryUsage(const kvobj *o, size_t samples) {
    size_t bytes = xmallocSize((void *)o);
    if (kvType(o) == OBJ_MODULE && objectModuleMemUsage) return bytes + objectModuleMemUsage(o, samples);
    const ObjectType *ops = typeOps[kvType(o)];
    if (!ops || !hasValuePointer(o)) return bytes;
    if (ops->memUsage) return bytes + ops->memUsage(kvPtr(o), kvEncoding(o), samples);
    return bytes + ops->size(kvPtr(o), kvEncoding(o));
}

size_t objectValueSize(const kvobj *o) {
    const ObjectType *ops = typeOps[kvType(o)];
    if (!ops || (kvType(o) == OBJ_STRING && !hasValuePointer(o))) return 0;
    return ops->size(kvPtr(o), kvEncoding(o));
}
