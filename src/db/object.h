/* object.h -- the key-table entry ("kvobj"): one allocation per key.
 *
 * An entry holds its chain link, type/encoding, LRU/LFU bits, optional expire
 * and TTL-index position, the key bytes and -- for short strings -- the value
 * bytes inline.  Layout (packed, no padding):
 *
 *   link (6) | typeenc (1) | keylen8 (1) | lru (3)
 *   [expire int64 (8) | ttlpos uint32 (4)]     if KV_HAS_EXPIRE
 *   [keylen uint32 (4)]                         if keylen8 == 255
 *   [value: int64 (8)]                          if encoding is INT
 *   [value: pointer, low 48 bits (6)]           other encodings with a pointer
 *   key bytes
 *   [vlen uint8 (1) | value bytes]              if encoding is EMBSTR
 *   [listpack bytes]                            if encoding is LISTPACK_INLINE
 *   [packed bytes (ds/pack.h)]                  if encoding is PACKED_* (3-5)
 *
 * The link and the two bytes after it are one 8-byte word, the key table's
 * link word (ds/htab.h): the chain link in its low 48 bits, and typeenc and
 * keylen8 in the 16 bits above, which the table never changes; so every
 * write of a key-table link goes through htabLinkSet, never a plain store.
 * The header is 11 bytes.  1M keys of 12 bytes with 10-byte values fit the
 * 48-byte jemalloc class with or without a TTL.  A collection with a 15-byte
 * key name fits the 32-byte class: user-space pointers on 64-bit Linux
 * (x86-64, arm64) have their top 16 bits clear, so the value pointer is
 * stored in 6 bytes (kvSetPtr checks it), as is the chain link.  Because the size depends on the value, replacing
 * a string value or adding/removing an expire may reallocate the entry:
 * such operations live in db.c and hand back the new pointer.  Only the key
 * table and the TTL index point at entries; everything else holds key
 * names.  The value pointer (collections, raw strings) is owned by the
 * entry and freed with it.
 *
 * A small listpack-encoded collection may instead live inside its entry,
 * after the key (internal encoding OBJ_ENC_LISTPACK_INLINE, reported as
 * listpack): one block instead of entry + listpack, which is smaller
 * whenever the two rounded-up size classes cost more than the one.  kvPtr()
 * then points into the entry, so readers need not care; writers change it
 * through db.c (dbResizeEntry, dbSetValueInline / dbSetValuePtr), since
 * growing it moves the entry. */
#ifndef CAIRN_OBJECT_H
#define CAIRN_OBJECT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "ds/sds.h"

/* Types as Redis numbers them (TYPE replies use typeName()). */
enum { OBJ_STRING = 0, OBJ_LIST = 1, OBJ_SET = 2, OBJ_ZSET = 3, OBJ_HASH = 4, OBJ_MODULE = 5, OBJ_STREAM = 6 };

/* Encodings as Redis numbers them (OBJECT ENCODING uses encodingName()). */
enum {
    OBJ_ENC_RAW = 0,        /* string: ptr is an sds */
    OBJ_ENC_INT = 1,        /* string: int64 inline */
    OBJ_ENC_HT = 2,
    OBJ_ENC_ZIPMAP = 3,     /* never an in-memory encoding in Redis 7.0: */
    OBJ_ENC_LINKEDLIST = 4, /* Cairn stores its packed forms under these */
    OBJ_ENC_ZIPLIST = 5,    /* three numbers (below) */
    OBJ_ENC_INTSET = 6,
    OBJ_ENC_SKIPLIST = 7,
    OBJ_ENC_EMBSTR = 8,     /* string: bytes inline, at most OBJ_EMBSTR_MAX */
    OBJ_ENC_QUICKLIST = 9,
    OBJ_ENC_STREAM = 10,
    OBJ_ENC_LISTPACK = 11,
    OBJ_ENC_LISTPACK_INLINE = 12, /* internal: a listpack after the key in the
                                   * entry; kvEncoding() answers LISTPACK */
    OBJ_ENC_LISTPACK_UNVERIFIED = 13, /* internal: a hash or zset listpack
                                   * loaded from an RDB file with only its
                                   * header checked (pointer slot); the db
                                   * lookups verify it on first access
                                   * (db.h dbVerify); kvEncoding() answers
                                   * LISTPACK */
    OBJ_ENC_LISTPACK_EX = 14, /* a hash listpack whose fields may have
                                   * TTLs: field, value, expire triples
                                   * (types/t_hash.c; pointer slot) */
    OBJ_ENC_QUICKLIST_UNVERIFIED = 15, /* internal: a list loaded the same
                                   * way, its listpack nodes' headers only
                                   * checked; kvEncoding() answers
                                   * QUICKLIST */
};

/* Internal: an idle small collection kept in the packed form (ds/pack.h)
 * after the key in its entry, until its first access rebuilds the value
 * (db.c).  Which encoding the rebuilt value has: */
#define OBJ_ENC_PACKED_LP OBJ_ENC_ZIPMAP       /* a listpack behind a pointer */
#define OBJ_ENC_PACKED_LPI OBJ_ENC_LINKEDLIST  /* an inline listpack (a hash) */
#define OBJ_ENC_PACKED_IS OBJ_ENC_ZIPLIST      /* an intset (a set) */

#define OBJ_EMBSTR_MAX 44   /* longest string Redis reports as embstr */
#define OBJ_SHARED_INTEGERS 10000

typedef struct __attribute__((packed)) kvobj {
    uint8_t link[6];     /* key-table chain link, the low 48 bits of the htab
                          * link word that ends with the next two bytes;
                          * must stay first (htab; htabLinkGet/Set) */
    uint8_t typeenc;     /* type:3 (low) | encoding:4 | has-expire:1 (high) */
    uint8_t keylen8;     /* key length, 255 => uint32 length stored */
    uint8_t lru[3];      /* LRU clock (s) or LFU time:16|counter:8 */
    unsigned char data[];
} kvobj;

#define KV_EXPIRE_FLAG 0x80

static inline int kvType(const kvobj *o) { return o->typeenc & 7; }
/* The encoding as stored (OBJ_ENC_LISTPACK_INLINE included): for layout. */
static inline int kvRawEncoding(const kvobj *o) { return (o->typeenc >> 3) & 15; }
/* The encoding as Redis reports it. */
static inline int kvEncoding(const kvobj *o) {
    static const uint8_t reported[16] = {0, 1, 2, OBJ_ENC_LISTPACK, OBJ_ENC_LISTPACK, OBJ_ENC_INTSET, 6, 7, 8, 9, 10, 11,
                                         OBJ_ENC_LISTPACK, OBJ_ENC_LISTPACK, 14, OBJ_ENC_QUICKLIST};
    return reported[kvRawEncoding(o)];
}
/* A value whose deep check was deferred at load (see db.h dbVerify):
 * encoding 13 or 15, the only ones with bits 0, 2 and 3 set. */
static inline int kvUnverified(const kvobj *o) { return (kvRawEncoding(o) & 13) == 13; }
/* A value kept packed (encodings 3, 4, 5): its bytes are not a listpack or
 * intset; only db.c reads them (db.h: every lookup and dbFind rebuilds the
 * value first; serializers use dbUnpackedCopy). */
static inline int kvPacked(const kvobj *o) { return (unsigned)(kvRawEncoding(o) - 3) < 3; }
/* Unverified or packed: the lookups' one rare-path test (bits 3, 4, 5, 13
 * and 15 of the mask). */
static inline int kvSpecial(const kvobj *o) { return (0xA038u >> kvRawEncoding(o)) & 1; }
/* The encoding OBJECT ENCODING and DEBUG OBJECT report: Redis 7.0's name,
 * so a list kept as a bare listpack still answers quicklist. */
static inline int kvReportedEncoding(const kvobj *o) {
    return kvType(o) == OBJ_LIST ? OBJ_ENC_QUICKLIST : kvEncoding(o);
}
static inline int kvHasInlineValue(const kvobj *o) { return kvRawEncoding(o) == OBJ_ENC_LISTPACK_INLINE; }
static inline int kvHasExpire(const kvobj *o) { return (o->typeenc & KV_EXPIRE_FLAG) != 0; }
/* Bytes of the value slot for a stored encoding: 8 for an inline integer,
 * 6 for a pointer, 0 for an inline string or listpack (its bytes follow
 * the key). */
static inline size_t kvSlotSizeFor(int enc) {
    return enc == OBJ_ENC_EMBSTR || enc == OBJ_ENC_LISTPACK_INLINE || (unsigned)(enc - 3) < 3 ? 0
           : enc == OBJ_ENC_INT                                                             ? 8
                                                                                            : 6;
}

/* Change the encoding of a pointer-valued entry in place (listpack ->
 * hashtable, ...): the slot size must not change (not for inline values). */
static inline void kvSetEncoding(kvobj *o, int enc) {
    o->typeenc = (uint8_t)((o->typeenc & ~(15 << 3)) | (enc << 3));
}

static inline size_t kvExpireSize(const kvobj *o) { return kvHasExpire(o) ? 12 : 0; }
static inline size_t kvKeyLenSize(const kvobj *o) { return o->keylen8 == 255 ? 4 : 0; }

static inline size_t kvKeyLen(const kvobj *o) {
    if (o->keylen8 != 255) return o->keylen8;
    uint32_t l;
    memcpy(&l, o->data + kvExpireSize(o), 4);
    return l;
}

/* Offset of the value slot (not for EMBSTR). */
static inline size_t kvValueOffset(const kvobj *o) { return kvExpireSize(o) + kvKeyLenSize(o); }

static inline const char *kvKey(const kvobj *o) {
    size_t off = kvExpireSize(o) + kvKeyLenSize(o) + kvSlotSizeFor(kvRawEncoding(o));
    return (const char *)o->data + off;
}

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__ || UINTPTR_MAX != 0xffffffffffffffffULL
#error "kvobj stores pointers in 6 bytes: little-endian 64-bit targets only"
#endif

/* The value of a pointer encoding (raw sds, list, hash, ...), or where an
 * inline listpack starts inside the entry. */
void kvPackedPtr(const kvobj *o) __attribute__((noreturn));
static inline void *kvPtr(const kvobj *o) {
#ifdef CAIRN_SANITIZE
    if (kvPacked(o)) kvPackedPtr(o); /* a path that forgot to unpack (db.h) */
#endif
    if (kvHasInlineValue(o)) return (void *)(kvKey(o) + kvKeyLen(o));
    uint64_t v = 0;
    memcpy(&v, o->data + kvValueOffset(o), 6);
    return (void *)(uintptr_t)v;
}

/* Where a packed value's bytes start (ds/pack.h; packLength gives their
 * size). */
static inline const unsigned char *kvPackedBytes(const kvobj *o) {
    return (const unsigned char *)kvKey(o) + kvKeyLen(o);
}

/* Offset of an inline value from the start of the entry. */
static inline size_t kvInlineOffset(const kvobj *o) {
    return (size_t)((const char *)kvPtr(o) - (const char *)o);
}

/* Bytes of an inline value: it is a listpack, whose first 4 bytes hold its
 * total size (little-endian). */
static inline size_t kvInlineSize(const kvobj *o) {
    const unsigned char *p = (const unsigned char *)kvPtr(o);
    return (size_t)p[0] | (size_t)p[1] << 8 | (size_t)p[2] << 16 | (size_t)p[3] << 24;
}

void kvPointerTooWide(const void *p) __attribute__((noreturn));
void kvNoPointerSlot(const kvobj *o) __attribute__((noreturn));

/* Store a new value pointer (e.g. after a listpack or sds moved).  The entry
 * itself does not move.  Not for inline values. */
static inline void kvSetPtr(kvobj *o, void *p) {
    uint64_t v = (uint64_t)(uintptr_t)p;
    if (v >> 48) kvPointerTooWide(p);
    if (kvHasInlineValue(o)) kvNoPointerSlot(o);
    memcpy(o->data + kvValueOffset(o), &v, 6);
}

static inline long long kvInt(const kvobj *o) {
    long long v;
    memcpy(&v, o->data + kvValueOffset(o), sizeof(v));
    return v;
}
static inline void kvSetInt(kvobj *o, long long v) { memcpy(o->data + kvValueOffset(o), &v, sizeof(v)); }

/* Absolute unix time in ms, or -1 when the key has no expire. */
static inline long long kvExpire(const kvobj *o) {
    if (!kvHasExpire(o)) return -1;
    long long when;
    memcpy(&when, o->data, 8);
    return when;
}

/* Create entries.  The key bytes are copied.  `takes ownership` of ptr. */
kvobj *kvCreatePtr(const char *key, size_t keylen, int type, int encoding, void *ptr);
kvobj *kvCreateInt(const char *key, size_t keylen, long long v);
kvobj *kvCreateEmbstr(const char *key, size_t keylen, const char *val, size_t vlen);
/* A string entry with Redis's choice of encoding: int when the bytes are a
 * canonical integer of at most 20 chars, embstr up to 44 bytes, else raw. */
kvobj *kvCreateString(const char *key, size_t keylen, const char *val, size_t vlen);
/* A string entry that is always raw (APPEND, SETRANGE, SETBIT results). */
kvobj *kvCreateRawString(const char *key, size_t keylen, sds takes);
/* An entry of `type` holding a copy of the listpack lp[0..len) inline, with
 * room for it to grow to `cap` bytes (cap >= len). */
kvobj *kvCreateInline(const char *key, size_t keylen, int type, const void *lp, size_t len, size_t cap);
/* The same with an expire (absolute unix time in ms) in the entry from the
 * start.  Adding the expire afterwards (dbSetExpire) moves the entry to a
 * bigger block: a second allocation, a copy, a second key-table lookup and
 * a free.  So every path that knows the expire when it builds the entry
 * uses these: SET EX, an RDB key with an expire, RESTORE with a TTL,
 * RENAME/COPY of a key with one, and a value rebuilt under a kept TTL
 * (INCR, APPEND, ... on a key with a TTL: build with kvExpire(old)).  The
 * TTL position is set when the db indexes the entry (dbAdd, dbAddUnique,
 * dbSetKey, dbReplace). */
kvobj *kvCreatePtrExpire(const char *key, size_t keylen, int type, int encoding, void *ptr, long long when);
kvobj *kvCreateIntExpire(const char *key, size_t keylen, long long v, long long when);
kvobj *kvCreateEmbstrExpire(const char *key, size_t keylen, const char *val, size_t vlen, long long when);
kvobj *kvCreateStringExpire(const char *key, size_t keylen, const char *val, size_t vlen, long long when);
kvobj *kvCreateRawStringExpire(const char *key, size_t keylen, sds takes, long long when);
kvobj *kvCreateInlineExpire(const char *key, size_t keylen, int type, const void *lp, size_t len, size_t cap,
                            long long when);
/* A new entry with o's key, type, access bits and expire (value and TTL
 * position copied) and the stored encoding enc; its value is unset: a
 * pointer slot, or room for `inlineCap` bytes of inline listpack.  For
 * db.c, which relinks it in place of o. */
kvobj *kvCloneShell(const kvobj *o, int enc, size_t inlineCap);
/* Bytes an entry like o would take with its value inline (without the
 * value bytes) and with a pointer: for choosing where a listpack lives. */
size_t kvInlineShellSize(const kvobj *o);
size_t kvPointerShellSize(const kvobj *o);
/* Frees the entry and its value. */
void kvFree(kvobj *o);
/* Entries (and their values) gathered to be freed KV_FREE_BATCH at a time,
 * for a whole table's free: kvFreeBatchCb (an htabClear callback, the
 * batch as its priv) adds one and frees a full batch; kvFreeBatchEnd frees
 * the rest, the entries' slab slots together (slabFreeSlots).  The slab lock, which every thread's allocations take, then
 * changes hands once per batch, not once per entry. */
#define KV_FREE_BATCH 32
typedef struct KvFreeBatch {
    kvobj *e[KV_FREE_BATCH];
    size_t n;
} KvFreeBatch;
void kvFreeBatchCb(void *entry, void *batch);
void kvFreeBatchEnd(KvFreeBatch *b);
/* Frees only the entry shell, not the value pointer. */
void kvFreeShell(kvobj *o);
/* Entry blocks come from the slab allocator (ds/slab.h), not xmalloc:
 * a block for a new entry that db.c lays out itself, and an entry's block
 * resized (realloc's contract: contents kept, it may move).  Free either
 * with kvFree / kvFreeShell, never xfree; xmallocSize gives their size. */
void *kvAllocBlock(size_t size);
kvobj *kvRealloc(kvobj *o, size_t size);
/* Bytes an entry block of `size` really takes (a slab slot's size, or
 * jemalloc's class above the slabs): for choosing between layouts. */
size_t kvGoodSize(size_t size);

/* Overwrite string entry o's value in place with val[0..vlen) and expire
 * `when` (withExpire must match whether o has one), when the entry a fresh
 * kvCreateString / kvCreateStringExpire would build for the same key takes
 * the same block with the same layout: an int over an int, an embstr over
 * an embstr in the same slab class.  Its access bits are the caller's to
 * set.  Returns 1 when done, 0 when o is left as it was (the caller builds
 * a fresh entry). */
int kvRewriteString(kvobj *o, const char *val, size_t vlen, int withExpire, long long when);

/* String value access.  kvStringBytes gives a view of a string value (buf
 * must hold 21 bytes, used for int encoding).  kvStringLen is its length. */
const char *kvStringBytes(const kvobj *o, char *buf, size_t *len);
size_t kvStringLen(const kvobj *o);
/* A new sds copy of the string value (caller owns it). */
sds kvStringDup(const kvobj *o);

/* LRU/LFU bits. */
unsigned kvLru(const kvobj *o);
void kvSetLru(kvobj *o, unsigned v);

const char *typeName(int type);          /* "string", "list", ... */
/* TYPE's answer for o: typeName, or a module value's type name. */
const char *kvTypeName(const kvobj *o);
/* The name of a module value's type (src/module installs it). */
extern const char *(*kvModuleTypeName)(const kvobj *o);
const char *encodingName(int encoding);  /* "raw", "int", "listpack", ... */

/* The operations on one type's values, one struct per type.  String values
 * are this file's own; each collection type's module (src/types) defines
 * its free/dup/size and main.c registers it at start-up, so that this layer
 * does not depend on them.  The digest and RDB slots belong to the
 * persistence layer (src/persist), which sits above the types: it fills
 * them for every type at start-up (objectRegisterPersistence), after the
 * types registered.  `ptr`/`encoding` are a value pointer (kvPtr) and its
 * reported encoding (kvEncoding). */
struct RdbWriter;  /* defined by the persistence layer */
struct RdbReader;
typedef struct ObjectType {
    /* Frees a value pointer.  Never called for an inline value (an embstr
     * or int string, an inline listpack): it goes with its entry. */
    void (*free)(void *ptr, int encoding);
    /* A deep copy of the value (COPY); the caller owns it. */
    void *(*dup)(const void *ptr, int encoding);
    /* Approximate bytes the value uses (MEMORY USAGE, lazy-free effort). */
    size_t (*size)(const void *ptr, int encoding);
    /* MEMORY USAGE: bytes the value uses, a big collection's elements
     * estimated from `samples` of them (0: all), as Redis samples.  NULL:
     * size is exact. */
    size_t (*memUsage)(const void *ptr, int encoding, size_t samples);
    /* DEBUG DIGEST / DIGEST-VALUE: folds the value's elements, as Redis
     * defines the digest, into digest[20] (the caller mixes the type number
     * before and the expire flag after). */
    void (*digest)(const kvobj *o, unsigned char digest[20]);
    /* RDB: the value-type byte Redis writes for o's encoding; the value's
     * body in that format (a write error is kept in the writer). */
    int (*rdbType)(const kvobj *o);
    void (*rdbSave)(struct RdbWriter *w, const kvobj *o);
    /* RDB: reads a value of RDB type rdbType (one this type loads) and
     * returns the entry for key; NULL with *empty = 1 for an empty
     * collection, or NULL with the reader's error set when corrupt. */
    kvobj *(*rdbLoad)(struct RdbReader *r, int rdbType, const char *key, size_t keylen, int *empty);
} ObjectType;

/* Installs the free/dup/size operations of `type` (OBJ_LIST, ...), copied;
 * NULL removes the type (tests).  Called at start-up only. */
void objectRegisterType(int type, const ObjectType *ops);
/* Installs the digest and RDB operations of `type` (the persistence
 * layer's), keeping the others.  Called at start-up only, after
 * objectRegisterType. */
void objectRegisterPersistence(int type, void (*digest)(const kvobj *, unsigned char[20]),
                               int (*rdbType)(const kvobj *), void (*rdbSave)(struct RdbWriter *, const kvobj *),
                               kvobj *(*rdbLoad)(struct RdbReader *, int, const char *, size_t, int *));
/* The operations of `type`: NULL for a type not registered. */
const ObjectType *objectTypeOps(int type);
/* A deep copy of o's value pointer (NULL for inline strings); the caller
 * owns it. */
void *objectDupValue(const kvobj *o);
/* Approximate bytes of o's value outside the entry. */
size_t objectValueSize(const kvobj *o);
/* MEMORY USAGE: bytes of the entry's block and of its value outside it,
 * big collections estimated from `samples` elements (0: all). */
size_t objectMemoryUsage(const kvobj *o, size_t samples);
/* MEMORY USAGE of a module data type's value (src/module installs it: the
 * type's mem_usage2 or mem_usage callback, given the entry for its key). */
extern size_t (*objectModuleMemUsage)(const kvobj *o, size_t samples);

#endif
