/* t_hash.c -- the hash type: HSET/HGET and friends, HINCRBY[FLOAT], HSCAN,
 * HRANDFIELD.
 *
 * A hash value has one of the two encodings Redis 7.0 reports:
 *   listpack   field, value, field, value ... in one listpack, in insertion
 *              order (an update replaces the value in place);
 *   hashtable  an Htab of HashField entries: ONE allocation per field,
 *              {next, varint field length, varint value length, field bytes,
 *              value bytes}.  No separate strings, so a field costs its
 *              bytes + ~10 bytes of header + 8 bytes of bucket.
 * A hash starts as a listpack and converts to a hashtable exactly when Redis
 * converts, never back:
 *   - a field or value longer than hash-max-listpack-value is about to be
 *     stored (HSET checks all its arguments first, as Redis does; HSETNX on
 *     an existing field stores nothing and so converts nothing);
 *   - after a store, the hash has more than hash-max-listpack-entries fields
 *     (checked after updates too, so a lowered limit converts on any write);
 *   - the listpack would pass its 1 GB safety limit.
 * The value pointer of the key entry is the listpack or the Htab; after a
 * listpack moves the new pointer is stored with kvSetPtr.  A small listpack
 * lives inside the key entry instead (object.h, "inline") whenever that one
 * block is no bigger than the entry and a separate listpack together, as
 * for a 10-field hash with a short key; hashSettle picks the place after
 * every write.  Changes to an inline listpack resize the entry itself
 * (inlineResize), so the functions that change a hash work on a HashWrite,
 * whose entry pointer follows the entry when it moves.  A hash that loses
 * its last field is deleted. */
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/client.h"
#include "core/command.h"
#include "core/effects.h"
#include "core/errors.h"
#include "core/event.h"
#include "core/server.h"
#include "db/db.h"
#include "db/lazyfree.h"
#include "db/object.h"
#include "ds/alloc.h"
#include "ds/glob.h"
#include "ds/htab.h"
#include "ds/listpack.h"
#include "ds/rand.h"
#include "ds/sds.h"
#include "ds/siphash.h"
#include "ds/util.h"
#include "types/hash.h"
#include "types/scan.h"

/* hash-max-listpack-value: the directive at the end of this file (the
 * entry limit is in server.cfg: the RDB loader reads it too). */
static long long hashMaxListpackValue;

/* Negative HRANDFIELD counts repeat elements, so the reply is bounded only
 * by the count.  Redis 7.0 builds such a reply until memory runs out; Cairn
 * refuses replies of more elements than this with "value is out of range". */
#define HRANDFIELD_MAX_REPLY_ELEMENTS (1L << 27)

/* Largest listpack kept inside its key entry: beyond this the one size
 * class saved is a small fraction of the value. */
#define HASH_INLINE_MAX 1024

/* ------------------------------------------------------------------------ */
/* Hashtable entries                                                          */
/* ------------------------------------------------------------------------ */

/* An entry is one block: its link word (htab.h: the chain link in the low
 * 48 bits), then the field and value bytes.  The link word's two high bytes
 * hold the lengths when both are below 255 (a 14-byte field with a 10-byte
 * value: 8 + 24 = 32 bytes, one jemalloc class below the 48 that two
 * varints cost); otherwise both bytes are 255 and varint lengths precede
 * the field. */
typedef struct HashField {
    uint64_t link;        /* Htab link word; must stay first */
    unsigned char data[]; /* [varint flen, varint vlen,] field, value */
} HashField;

#define HF_LONG 255 /* length byte: lengths are varints in data */

static size_t varintSize(size_t v) {
    size_t n = 1;
    while (v >= 128) {
        v >>= 7;
        n++;
    }
    return n;
}

static unsigned char *varintPut(unsigned char *p, size_t v) {
    while (v >= 128) {
        *p++ = (unsigned char)(v | 128);
        v >>= 7;
    }
    *p++ = (unsigned char)v;
    return p;
}

static const unsigned char *varintGet(const unsigned char *p, size_t *v) {
    size_t r = 0;
    int shift = 0;
    while (*p & 128) {
        r |= (size_t)(*p++ & 127) << shift;
        shift += 7;
    }
    *v = r | ((size_t)*p++ << shift);
    return p;
}

/* The link word's high bytes (little-endian: bytes 6 and 7). */
static inline unsigned char *hfLenBytes(const HashField *e) { return (unsigned char *)e + 6; }

/* Field bytes of an entry; sets the lengths.  The value follows the field. */
static const unsigned char *hfField(const HashField *e, size_t *flen, size_t *vlen) {
    const unsigned char *b = hfLenBytes(e);
    if (b[0] != HF_LONG) {
        *flen = b[0];
        *vlen = b[1];
        return e->data;
    }
    const unsigned char *p = varintGet(e->data, flen);
    return varintGet(p, vlen);
}

/* Bytes of the varint lengths in data (0 when they fit the link word). */
static size_t hfHdrSize(size_t flen, size_t vlen) {
    return flen < HF_LONG && vlen < HF_LONG ? 0 : varintSize(flen) + varintSize(vlen);
}

static size_t hfAllocSize(size_t flen, size_t vlen) {
    return sizeof(HashField) + hfHdrSize(flen, vlen) + flen + vlen;
}

/* Writes the lengths (not the link bits) of an entry; returns where its
 * field goes. */
static unsigned char *hfPutLengths(HashField *e, size_t flen, size_t vlen) {
    unsigned char *b = hfLenBytes(e);
    if (flen < HF_LONG && vlen < HF_LONG) {
        b[0] = (unsigned char)flen;
        b[1] = (unsigned char)vlen;
        return e->data;
    }
    b[0] = b[1] = HF_LONG;
    return varintPut(varintPut(e->data, flen), vlen);
}

/* Writes the lengths, field and value into an entry of hfAllocSize bytes. */
static void hfFill(HashField *e, const void *f, size_t flen, const void *v, size_t vlen) {
    unsigned char *p = hfPutLengths(e, flen, vlen);
    memcpy(p, f, flen);
    memcpy(p + flen, v, vlen);
}

/* A new entry (caller owns it; next is unset). */
static HashField *hfCreate(const void *f, size_t flen, const void *v, size_t vlen) {
    HashField *e = xmalloc(hfAllocSize(flen, vlen));
    hfFill(e, f, flen, v, vlen);
    return e;
}

static uint64_t hfHashKey(const void *key, size_t len) { return siphash(key, len, dbHashSeed); }

static void hfEntryKey(const void *entry, const void **key, size_t *len) {
    size_t vlen;
    *key = hfField(entry, len, &vlen);
}

static const HtabType hashFieldType = {.hashKey = hfHashKey, .entryKey = hfEntryKey};

static void hfFree(void *entry, void *priv) {
    (void)priv;
    xfree(entry);
}

/* ------------------------------------------------------------------------ */
/* Field TTLs (Redis 7.4 / 8.0 hash-field expiry)                             */
/* ------------------------------------------------------------------------ */

/* A hash changes layout once, when its first field TTL is set, and keeps it
 * (Redis keeps listpackex too):
 *   listpack  -> OBJ_ENC_LISTPACK_EX: a heap listpack of field, value,
 *                expire triples (expire: unix ms as an integer element, 0 =
 *                none; 10 bytes for a TTL, 2 without), never inline;
 *   hashtable -> the Htab embedded at the start of a HashTtlTable (its type
 *                hashFieldTtlType tells it apart), whose entries carry a
 *                12-byte tail after the value {int64 expire (0 = none),
 *                uint32 heap index}, and a binary min-heap of the entries
 *                that have an expire.
 * A hash without TTLs keeps today's layout and cost.  A field whose expire
 * has passed is invisible at once; it is deleted (an HDEL effect) lazily
 * by the commands that address it, by HRANDFIELD, or by the active cycle,
 * which visits the hashes named in a per-database index (hfeIndex). */
#define HF_TAIL 12
#define HF_NOPOS UINT32_MAX
#define HFE_MAX_MS ((1LL << 46) - 1) /* latest expire accepted (Redis 8) */

/* A heap slot keeps the expire next to the entry, so that ordering the
 * heap never reads the entries (a million-field hash: each entry read is
 * a cache miss). */
typedef struct HeapSlot {
    long long when;
    HashField *e;
} HeapSlot;

typedef struct HashTtlTable {
    Htab h;         /* first: code that only reads fields uses it as the Htab */
    HeapSlot *heap; /* the entries with an expire, min-heap by expire */
    size_t n, cap;
} HashTtlTable;

/* A TTL table's old bucket array of 1 MB or more (a hash of 128K+ fields
 * shrinking while its fields expire) is freed on the lazy-free thread:
 * jemalloc gives big blocks back to the system at once, a pause of
 * milliseconds on the thread that frees them. */
static void hfFreeTable(void **table, size_t slots) {
    if (slots * sizeof(void *) >= (1u << 20)) lazyfreeBlock(table);
    else xfree(table);
}

static const HtabType hashFieldTtlType = {.hashKey = hfHashKey, .entryKey = hfEntryKey, .freeTable = hfFreeTable};

static int htIsTtl(const Htab *h) { return h->type == &hashFieldTtlType; }

static unsigned char *hfTail(const HashField *e) {
    size_t fl, vl;
    const unsigned char *p = hfField(e, &fl, &vl);
    return (unsigned char *)p + fl + vl;
}

static long long hfExpire(const HashField *e) {
    long long t;
    memcpy(&t, hfTail(e), 8);
    return t;
}

static void hfSetExpireRaw(HashField *e, long long t) { memcpy(hfTail(e), &t, 8); }

static size_t hfPos(const HashField *e) {
    uint32_t p;
    memcpy(&p, hfTail(e) + 8, 4);
    return p;
}

static void hfSetPos(HashField *e, size_t p) {
    uint32_t v = (uint32_t)p;
    memcpy(hfTail(e) + 8, &v, 4);
}

/* A new entry with `tail` extra bytes (0, or HF_TAIL: no expire). */
static HashField *hfCreateTail(const void *f, size_t flen, const void *v, size_t vlen, size_t tail) {
    HashField *e = xmalloc(hfAllocSize(flen, vlen) + tail);
    hfFill(e, f, flen, v, vlen);
    if (tail) {
        hfSetExpireRaw(e, 0);
        hfSetPos(e, HF_NOPOS);
    }
    return e;
}

static void heapPlace(HashTtlTable *t, size_t i, HeapSlot s) {
    t->heap[i] = s;
    hfSetPos(s.e, i);
}

static void heapUp(HashTtlTable *t, size_t i) {
    HeapSlot s = t->heap[i];
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (t->heap[p].when <= s.when) break;
        heapPlace(t, i, t->heap[p]);
        i = p;
    }
    heapPlace(t, i, s);
}

static void heapDown(HashTtlTable *t, size_t i) {
    HeapSlot s = t->heap[i];
    for (;;) {
        size_t l = 2 * i + 1, m = l;
        if (l >= t->n) break;
        if (l + 1 < t->n && t->heap[l + 1].when < t->heap[l].when) m = l + 1;
        if (t->heap[m].when >= s.when) break;
        heapPlace(t, i, t->heap[m]);
        i = m;
    }
    heapPlace(t, i, s);
}

/* Restores the order around slot i after its expire changed. */
static void heapFix(HashTtlTable *t, size_t i) {
    if (i > 0 && t->heap[i].when < t->heap[(i - 1) / 2].when) heapUp(t, i);
    else heapDown(t, i);
}

static void heapPush(HashTtlTable *t, HashField *e, long long when) {
    if (t->n == t->cap) {
        t->cap = t->cap ? t->cap * 2 : 8;
        t->heap = xrealloc(t->heap, t->cap * sizeof(*t->heap));
    }
    heapPlace(t, t->n++, (HeapSlot){when, e});
    heapUp(t, t->n - 1);
}

/* The heap array shrinks (to twice its entries) once a quarter of it is
 * used, but only when at most HEAP_SHRINK_MAX entries are left to copy:
 * the active cycle removes entries one by one, and copying a big array
 * (realloc copies all it keeps) took up to 0.8 ms for a million-field
 * hash.  So a heap keeps the capacity of its peak while it holds more than
 * 16384 entries (16 bytes each), and the block it leaves is freed on the
 * lazy-free thread when it is big. */
#define HEAP_SHRINK_MAX 16384

static void heapShrink(HashTtlTable *t) {
    size_t cap = 8;
    while (cap < 2 * t->n) cap *= 2;
    HeapSlot *h = xmalloc(cap * sizeof(*h));
    memcpy(h, t->heap, t->n * sizeof(*h));
    if (t->cap * sizeof(*h) >= (1u << 20)) lazyfreeBlock(t->heap);
    else xfree(t->heap);
    t->heap = h;
    t->cap = cap;
}

static void heapRemove(HashTtlTable *t, HashField *e) {
    size_t i = hfPos(e);
    hfSetPos(e, HF_NOPOS);
    if (i != --t->n) {
        heapPlace(t, i, t->heap[t->n]);
        heapFix(t, i);
    }
    if (t->cap > 8 && t->n < t->cap / 4 && t->n <= HEAP_SHRINK_MAX) heapShrink(t);
}

/* Entry e of a TTL table gets expire `when` (0: none).  The same expire
 * again changes nothing. */
static void htSetTtl(HashTtlTable *t, HashField *e, long long when) {
    long long old = hfExpire(e);
    if (old == when) return;
    hfSetExpireRaw(e, when);
    if (!when) {
        heapRemove(t, e);
    } else if (!old) {
        heapPush(t, e, when);
    } else {
        size_t i = hfPos(e);
        t->heap[i].when = when;
        heapFix(t, i);
    }
}

/* Number of heap entries expired at `now` (expire < now, as fieldExpired;
 * they form a subtree at the root). */
static size_t heapCountDue(const HashTtlTable *t, size_t i, long long now) {
    if (i >= t->n || t->heap[i].when >= now) return 0;
    return 1 + heapCountDue(t, 2 * i + 1, now) + heapCountDue(t, 2 * i + 2, now);
}

/* Grows a plain entry by the TTL tail (no expire): realloc, in place when
 * the allocation has room. */
static void *hfAddTail(void *priv, void *entry) {
    (void)priv;
    HashField *e = entry;
    size_t fl, vl;
    hfField(e, &fl, &vl);
    e = xrealloc(e, hfAllocSize(fl, vl) + HF_TAIL);
    hfSetExpireRaw(e, 0);
    hfSetPos(e, HF_NOPOS);
    return e;
}

/* The TTL table made from plain hashtable h (consumed) in place: each entry
 * grows by its tail and the Htab grows into a HashTtlTable; nothing is
 * hashed again (a million-field hash converts in one pass over it). */
static HashTtlTable *htTtlFromTable(Htab *h) {
    htabReplaceEach(h, hfAddTail, NULL);
    HashTtlTable *t = xrealloc(h, sizeof(*t));
    t->h.type = &hashFieldTtlType;
    t->heap = NULL;
    t->n = t->cap = 0;
    return t;
}

static HashTtlTable *htTtlCreate(size_t hint) {
    HashTtlTable *t = xcalloc(sizeof(*t));
    htabInit(&t->h, &hashFieldTtlType);
    if (hint) htabExpand(&t->h, hint);
    return t;
}

/* A field's expire is past (and expiry applies now: not while a replica
 * runs its primary's commands).  As in Redis, a field is still there at
 * its expire's millisecond, while setting an expire of now deletes it. */
static inline int fieldExpired(long long when) { return when != 0 && when < dbNowMs && !dbIgnoreExpire; }

/* ------------------------------------------------------------------------ */
/* Encoding-independent access                                                */
/* ------------------------------------------------------------------------ */

/* A view of one field or value: bytes, plus the buffer that holds the text
 * of a listpack integer. */
typedef struct HashStr {
    const unsigned char *p;
    size_t len;
    unsigned char buf[LP_INTBUF_SIZE];
} HashStr;

static void lpStr(unsigned char *ep, HashStr *s) {
    unsigned int len;
    s->p = lpGetValue(ep, &len, s->buf, NULL, NULL);
    s->len = len;
}

static unsigned char *lpFindValue(unsigned char *lp, const void *f, size_t flen);

static unsigned long hashLength(const kvobj *o) {
    int enc = kvEncoding(o);
    if (enc == OBJ_ENC_LISTPACK) return lpLength(kvPtr(o)) / 2;
    if (enc == OBJ_ENC_LISTPACK_EX) return lpLength(kvPtr(o)) / 3;
    return htabSize(kvPtr(o));
}

/* Whether the hash has the TTL layout (a field TTL was set once). */
static int hashHasTtl(const kvobj *o) {
    int enc = kvEncoding(o);
    return enc == OBJ_ENC_LISTPACK_EX || (enc == OBJ_ENC_HT && htIsTtl(kvPtr(o)));
}

static long long lpInt(unsigned char *p) {
    unsigned int len;
    int isInt = 0;
    long long v = 0;
    lpGetValue(p, &len, NULL, &isInt, &v);
    return v;
}

/* The field element of f in a listpackex, or NULL. */
static unsigned char *lpexFind(unsigned char *lp, const void *f, size_t flen) {
    unsigned char *p = lpFirst(lp);
    return p ? lpFind(lp, p, f, flen, 2) : NULL;
}

/* Looks a field up whatever its expire: 1 with *v and *ttl (0: none) when
 * it is there.  v stays valid until the hash changes. */
static int hashGetTtl(kvobj *o, const void *f, size_t flen, HashStr *v, long long *ttl) {
    int enc = kvEncoding(o);
    *ttl = 0;
    if (enc == OBJ_ENC_LISTPACK_EX) {
        unsigned char *lp = kvPtr(o), *fp = lpexFind(lp, f, flen);
        if (!fp) return 0;
        unsigned char *vp = lpNext(lp, fp);
        lpStr(vp, v);
        *ttl = lpInt(lpNext(lp, vp));
        return 1;
    }
    if (enc == OBJ_ENC_LISTPACK) {
        unsigned char *vp = lpFindValue(kvPtr(o), f, flen);
        if (!vp) return 0;
        lpStr(vp, v);
        return 1;
    }
    Htab *h = kvPtr(o);
    HashField *e = htabFind(h, f, flen);
    if (!e) return 0;
    size_t fl;
    const unsigned char *fp = hfField(e, &fl, &v->len);
    v->p = fp + fl;
    if (htIsTtl(h)) *ttl = hfExpire(e);
    return 1;
}

/* The listpack element holding field's VALUE, or NULL. */
static unsigned char *lpFindValue(unsigned char *lp, const void *f, size_t flen) {
    unsigned char *p = lpFirst(lp);
    if (!p) return NULL;
    p = lpFind(lp, p, f, flen, 1);
    return p ? lpNext(lp, p) : NULL;
}

/* Looks a field up; returns 1 and fills *v when present (an expired field
 * is absent).  v stays valid until the hash changes. */
static int hashGet(kvobj *o, const void *f, size_t flen, HashStr *v) {
    int enc = kvEncoding(o);
    if (enc == OBJ_ENC_LISTPACK) {
        unsigned char *vp = lpFindValue(kvPtr(o), f, flen);
        if (!vp) return 0;
        lpStr(vp, v);
        return 1;
    }
    if (enc == OBJ_ENC_HT) {
        Htab *h = kvPtr(o);
        HashField *e = htabFind(h, f, flen);
        if (!e) return 0;
        size_t fl;
        const unsigned char *fp = hfField(e, &fl, &v->len);
        v->p = fp + fl;
        return !htIsTtl(h) || !fieldExpired(hfExpire(e));
    }
    long long ttl;
    return hashGetTtl(o, f, flen, v, &ttl) && !fieldExpired(ttl);
}

sds hashValueGetField(kvobj *o, const char *f, size_t flen) {
    HashStr v;
    return hashGet(o, f, flen, &v) ? sdsNewLen(v.p, v.len) : NULL;
}

/* Iteration over both encodings.  Fields and values stay valid until the
 * next call.  No change to the hash while iterating. */
typedef struct HashIter {
    int enc;
    unsigned char *lp, *p; /* listpack: next field element */
    HtabIter it;           /* hashtable */
    int ttlTable;          /* hashtable with entry tails */
    HashStr f, v;          /* current field and value */
    long long ttl;         /* current field's expire (0: none) */
} HashIter;

static void hashIterInit(HashIter *hi, void *ptr, int enc) {
    hi->enc = enc;
    hi->ttl = 0;
    if (enc == OBJ_ENC_LISTPACK || enc == OBJ_ENC_LISTPACK_EX) {
        hi->lp = ptr;
        hi->p = lpFirst(ptr);
    } else {
        htabIterInit(&hi->it, ptr);
        hi->ttlTable = htIsTtl(ptr);
    }
}

static int hashIterNext(HashIter *hi) {
    if (hi->enc == OBJ_ENC_LISTPACK || hi->enc == OBJ_ENC_LISTPACK_EX) {
        if (!hi->p) return 0;
        lpStr(hi->p, &hi->f);
        unsigned char *vp = lpNext(hi->lp, hi->p);
        lpStr(vp, &hi->v);
        hi->p = lpNext(hi->lp, vp);
        if (hi->enc == OBJ_ENC_LISTPACK_EX) {
            hi->ttl = lpInt(hi->p);
            hi->p = lpNext(hi->lp, hi->p);
        }
        return 1;
    }
    HashField *e = htabIterNext(&hi->it);
    if (!e) return 0;
    hi->f.p = hfField(e, &hi->f.len, &hi->v.len);
    hi->v.p = hi->f.p + hi->f.len;
    if (hi->ttlTable) hi->ttl = hfExpire(e);
    return 1;
}

/* The next field that has not expired. */
static int hashIterNextLive(HashIter *hi) {
    while (hashIterNext(hi))
        if (!fieldExpired(hi->ttl)) return 1;
    return 0;
}

static void hashIterRelease(HashIter *hi) {
    if (hi->enc != OBJ_ENC_LISTPACK && hi->enc != OBJ_ENC_LISTPACK_EX) htabIterRelease(&hi->it);
}

/* A hash being changed: its database and its entry, which moves when an
 * inline listpack outgrows the entry's block or the hash changes layout.
 * Use w->o after every call that takes the HashWrite. */
typedef struct HashWrite {
    Db *db;
    kvobj *o;
    size_t lpBytesBefore; /* listpack size when the write began (0: none) */
} HashWrite;

static HashWrite hashWriteBegin(Db *db, kvobj *o) {
    HashWrite w = {db, o, kvEncoding(o) == OBJ_ENC_LISTPACK ? lpBytes(kvPtr(o)) : 0};
    return w;
}

/* Resizer for an inline listpack (listpack.h lpSetResizer): grows the
 * entry when the listpack no longer fits its block; shrinking waits for
 * hashSettle. */
static unsigned char *inlineResize(void *ctx, unsigned char *lp, size_t bytes) {
    HashWrite *w = ctx;
    size_t off = (size_t)(lp - (unsigned char *)w->o);
    if (off + bytes <= xmallocSize(w->o)) return lp;
    w->o = dbResizeEntry(w->db, w->o, off + bytes);
    return (unsigned char *)w->o + off;
}

/* Bracket the listpack mutations of a listpack-encoded hash: Begin returns
 * the listpack, End stores the one the mutations returned. */
static unsigned char *lpWriteBegin(HashWrite *w) {
    if (kvHasInlineValue(w->o)) lpSetResizer(inlineResize, w);
    return kvPtr(w->o);
}

static void lpWriteEnd(HashWrite *w, unsigned char *lp) {
    if (kvHasInlineValue(w->o)) lpSetResizer(NULL, NULL);
    else kvSetPtr(w->o, lp);
}

/* An empty listpack-encoded hash stored at key, with `capacity` bytes
 * reserved for what the caller is about to add (inline when that is
 * small).  Returns the entry. */
static kvobj *hashCreate(Db *db, const sds key, size_t capacity) {
    kvobj *o;
    if (capacity <= HASH_INLINE_MAX) {
        unsigned char empty[LP_EMPTY_BYTES];
        lpInitEmpty(empty);
        o = kvCreateInline(key, sdsLen(key), OBJ_HASH, empty, sizeof(empty), capacity);
    } else {
        o = kvCreatePtr(key, sdsLen(key), OBJ_HASH, OBJ_ENC_LISTPACK, lpNew(capacity));
    }
    dbAdd(db, o);
    return o;
}

/* A new hashtable holding the fields of listpack lp (lp is untouched; the
 * caller owns both). */
static Htab *hashTableFromListpack(unsigned char *lp) {
    Htab *h = htabCreate(&hashFieldType);
    htabExpand(h, lpLength(lp) / 2);
    HashIter hi;
    hashIterInit(&hi, lp, OBJ_ENC_LISTPACK);
    while (hashIterNext(&hi)) htabAdd(h, hfCreate(hi.f.p, hi.f.len, hi.v.p, hi.v.len));
    hashIterRelease(&hi);
    return h;
}

/* A TTL table holding the triples of listpackex lp (lp is untouched). */
static HashTtlTable *hashTableFromListpackEx(unsigned char *lp) {
    HashTtlTable *t = htTtlCreate(lpLength(lp) / 3);
    HashIter hi;
    hashIterInit(&hi, lp, OBJ_ENC_LISTPACK_EX);
    while (hashIterNext(&hi)) {
        HashField *e = hfCreateTail(hi.f.p, hi.f.len, hi.v.p, hi.v.len, HF_TAIL);
        htabAdd(&t->h, e);
        if (hi.ttl) htSetTtl(t, e, hi.ttl);
    }
    hashIterRelease(&hi);
    return t;
}

/* Converts a listpack-encoded hash to a hashtable. */
static void hashConvert(HashWrite *w) {
    if (kvEncoding(w->o) == OBJ_ENC_LISTPACK_EX) {
        unsigned char *ex = kvPtr(w->o);
        HashTtlTable *t = hashTableFromListpackEx(ex);
        lpFree(ex);
        kvSetPtr(w->o, t);
        kvSetEncoding(w->o, OBJ_ENC_HT);
        return;
    }
    unsigned char *lp = kvPtr(w->o);
    Htab *h = hashTableFromListpack(lp);
    if (kvHasInlineValue(w->o)) {
        w->o = dbSetValuePtr(w->db, w->o, OBJ_ENC_HT, h);
        return;
    }
    lpFree(lp);
    kvSetPtr(w->o, h);
    kvSetEncoding(w->o, OBJ_ENC_HT);
}

/* After a write: a listpack goes where it takes least memory -- inside the
 * entry (up to HASH_INLINE_MAX bytes) when entry+listpack as one block
 * costs no more than the two blocks apart -- and is trimmed to its size
 * class (listpacks are pre-sized and shrink lazily). */
static void hashSettle(HashWrite *w) {
    kvobj *o = w->o;
    if (kvEncoding(o) != OBJ_ENC_LISTPACK) return;
    unsigned char *lp = kvPtr(o);
    size_t n = lpBytes(lp);
    if (n == w->lpBytesBefore) return; /* same size: settled by the last write */
    size_t shell = kvInlineShellSize(o);
    /* jemalloc's classes, not the slab's finer ones (kvGoodSize), on
     * purpose: with 8-byte steps a growing inline listpack changed size
     * class, and moved, twice as often (HSET +4% instructions). */
    size_t inlineCost = xmallocGoodSize(shell + n);
    int inl = n <= HASH_INLINE_MAX &&
              inlineCost <= xmallocGoodSize(kvPointerShellSize(o)) + xmallocGoodSize(n);
    if (kvHasInlineValue(o)) {
        if (!inl) {
            unsigned char *heap = xmalloc(n);
            memcpy(heap, lp, n);
            w->o = dbSetValuePtr(w->db, o, OBJ_ENC_LISTPACK, heap);
        } else if (xmallocSize(o) > inlineCost) {
            w->o = dbResizeEntry(w->db, o, shell + n);
        }
    } else if (inl) {
        w->o = dbSetValueInline(w->db, o, lp, n, n);
        lpFree(lp);
    } else if (xmallocSize(lp) > xmallocGoodSize(n)) {
        kvSetPtr(o, xrealloc(lp, n));
    }
}

/* Converts when any of argv[start..end] is too long for a listpack, or their
 * sum would push the listpack past its safety limit (Redis checks before it
 * stores anything). */
static void hashTryConversion(HashWrite *w, sds *argv, int start, int end) {
    if (kvEncoding(w->o) != OBJ_ENC_LISTPACK && kvEncoding(w->o) != OBJ_ENC_LISTPACK_EX) return;
    size_t sum = 0;
    for (int i = start; i <= end; i++) {
        size_t len = sdsLen(argv[i]);
        if (len > (size_t)hashMaxListpackValue) {
            hashConvert(w);
            return;
        }
        sum += len;
    }
    if (!lpSafeToAdd(kvPtr(w->o), sum)) hashConvert(w);
}

/* Listpackex order, as Redis 7.4+ keeps it (HGETALL, HSCAN and DUMP show
 * it): the triples with an expire first, by expire ascending, then those
 * without one in the order they got there.  A triple with expire `when`
 * goes before the first triple whose expire is none or >= when (so it
 * precedes equal expires); one without an expire goes at the tail.  f and
 * v must not lie inside lp. */
static unsigned char *lpexInsertOrdered(unsigned char *lp, const void *f, size_t flen, const void *v, size_t vlen,
                                        long long when) {
    unsigned char *at = NULL;
    if (when) {
        for (unsigned char *p = lpFirst(lp); p;) {
            unsigned char *tp = lpNext(lp, lpNext(lp, p));
            long long t = lpInt(tp);
            if (t == 0 || t >= when) {
                at = p;
                break;
            }
            p = lpNext(lp, tp);
        }
    }
    if (!at) {
        LpItem items[3] = {{f, flen, 0}, {v, vlen, 0}, {NULL, 0, when}};
        return lpAppendItems(lp, items, 3);
    }
    char buf[UTIL_LONG_STR_SIZE];
    int tl = longLongToString(buf, sizeof(buf), when);
    unsigned char *np;
    lp = lpInsert(lp, (const unsigned char *)buf, (size_t)tl, at, LP_BEFORE, &np);
    lp = lpInsert(lp, v, vlen, np, LP_BEFORE, &np);
    return lpInsert(lp, f, flen, np, LP_BEFORE, NULL);
}

/* Gives the triple at fp expire `when` (0: none) and moves it where the
 * order above puts it (Redis moves it even when the expire is unchanged). */
static unsigned char *lpexMove(unsigned char *lp, unsigned char *fp, long long when) {
    HashStr f, v;
    lpStr(fp, &f);
    lpStr(lpNext(lp, fp), &v);
    unsigned char stackBuf[256], *copy = f.len + v.len <= sizeof(stackBuf) ? stackBuf : xmalloc(f.len + v.len);
    memcpy(copy, f.p, f.len);
    memcpy(copy + f.len, v.p, v.len);
    size_t flen = f.len, vlen = v.len;
    lp = lpDeleteRangeWithEntry(lp, &fp, 3);
    lp = lpexInsertOrdered(lp, copy, flen, copy + flen, vlen, when);
    if (copy != stackBuf) xfree(copy);
    return lp;
}

/* Stores field = value.  Returns 1 when the field is new, 0 when updated.
 * Converts the encoding as described at the top of the file. */
/* hashSet for the TTL layouts: an update keeps the field's expire when
 * keepTtl, else drops it (HSET discards a TTL). */
static int hashSetTtlLayout(HashWrite *w, const void *f, size_t flen, const void *v, size_t vlen, int keepTtl) {
    if (kvEncoding(w->o) == OBJ_ENC_LISTPACK_EX) {
        unsigned char *lp = kvPtr(w->o), *fp = lpexFind(lp, f, flen);
        int added = fp == NULL;
        if (fp) {
            unsigned char *vp = lpNext(lp, fp);
            lp = lpReplace(lp, &vp, v, vlen);
            unsigned char *tp = lpNext(lp, vp);
            /* A dropped expire sends the field to the tail, as in Redis. */
            if (!keepTtl && lpInt(tp) != 0) lp = lpexMove(lp, lpPrev(lp, vp), 0);
        } else {
            LpItem items[3] = {{f, flen, 0}, {v, vlen, 0}, {NULL, 0, 0}};
            lp = lpAppendItems(lp, items, 3);
        }
        kvSetPtr(w->o, lp);
        if (lpLength(lp) / 3 > (unsigned long)server.cfg.hashMaxListpackEntries) hashConvert(w);
        return added;
    }
    HashTtlTable *t = kvPtr(w->o);
    void **link = htabFindLink(&t->h, f, flen);
    if (!link) {
        htabAdd(&t->h, hfCreateTail(f, flen, v, vlen, HF_TAIL));
        return 1;
    }
    HashField *old = htabLinkGet(link), *e = hfCreateTail(f, flen, v, vlen, HF_TAIL);
    long long when = hfExpire(old);
    if (when && !keepTtl) heapRemove(t, old);
    htabLinkSet((void **)e, htabLinkGet((void **)old));
    htabLinkSet(link, e);
    if (when && keepTtl) {
        hfSetExpireRaw(e, when);
        heapPlace(t, hfPos(old), (HeapSlot){when, e});
    }
    xfree(old);
    return 0;
}

static int hashSetKeep(HashWrite *w, const void *f, size_t flen, const void *v, size_t vlen, int keepTtl);

static int hashSet(HashWrite *w, const void *f, size_t flen, const void *v, size_t vlen) {
    return hashSetKeep(w, f, flen, v, vlen, 0);
}

/* hashSet; an updated field keeps its TTL when keepTtl (HINCRBY, HSETEX
 * KEEPTTL). */
static int hashSetKeep(HashWrite *w, const void *f, size_t flen, const void *v, size_t vlen, int keepTtl) {
    int enc = kvEncoding(w->o);
    if (enc == OBJ_ENC_LISTPACK || enc == OBJ_ENC_LISTPACK_EX) {
        size_t max = (size_t)hashMaxListpackValue;
        if (flen > max || vlen > max || !lpSafeToAdd(kvPtr(w->o), flen + vlen)) hashConvert(w);
    }
    if (kvEncoding(w->o) != OBJ_ENC_LISTPACK && hashHasTtl(w->o))
        return hashSetTtlLayout(w, f, flen, v, vlen, keepTtl);
    int added;
    if (kvEncoding(w->o) == OBJ_ENC_LISTPACK) {
        unsigned char *lp = lpWriteBegin(w);
        unsigned char *vp = lpFindValue(lp, f, flen);
        if (vp) {
            lp = lpReplace(lp, &vp, v, vlen);
            added = 0;
        } else {
            lp = lpAppend(lp, f, flen);
            lp = lpAppend(lp, v, vlen);
            added = 1;
        }
        lpWriteEnd(w, lp);
        if (lpLength(lp) / 2 > (unsigned long)server.cfg.hashMaxListpackEntries) hashConvert(w);
        return added;
    }
    Htab *h = kvPtr(w->o);
    void **link = htabFindLink(h, f, flen);
    if (!link) {
        htabAdd(h, hfCreate(f, flen, v, vlen));
        return 1;
    }
    /* Same key, new value: rebuild the entry in place (realloc keeps the
     * link word). */
    HashField *e = htabLinkGet(link);
    size_t oldF, oldV;
    const unsigned char *fp = hfField(e, &oldF, &oldV);
    size_t hdr = (size_t)(fp - e->data);
    size_t newHdr = hfHdrSize(flen, vlen);
    size_t need = hfAllocSize(flen, vlen);
    if (need > sizeof(HashField) + hdr + oldF + oldV) e = xrealloc(e, need);
    if (newHdr != hdr) memmove(e->data + newHdr, e->data + hdr, flen);
    hfPutLengths(e, flen, vlen);
    memcpy(e->data + newHdr + flen, v, vlen);
    if (need < sizeof(HashField) + hdr + oldF + oldV) e = xrealloc(e, need);
    htabLinkSet(link, e);
    return 0;
}

/* Removes a field; returns 1 if it existed. */
static int hashDelete(HashWrite *w, const void *f, size_t flen) {
    if (kvEncoding(w->o) == OBJ_ENC_LISTPACK_EX) {
        unsigned char *lp = kvPtr(w->o), *p = lpexFind(lp, f, flen);
        if (!p) return 0;
        lp = lpDeleteRangeWithEntry(lp, &p, 3);
        kvSetPtr(w->o, lp);
        return 1;
    }
    if (kvEncoding(w->o) == OBJ_ENC_LISTPACK) {
        unsigned char *lp = lpWriteBegin(w);
        unsigned char *p = lpFirst(lp);
        if (p) p = lpFind(lp, p, f, flen, 1);
        int found = p != NULL;
        if (found) lp = lpDeleteRangeWithEntry(lp, &p, 2);
        lpWriteEnd(w, lp);
        return found;
    }
    Htab *h = kvPtr(w->o);
    HashField *e = htabUnlink(h, f, flen);
    if (!e) return 0;
    if (htIsTtl(h) && hfExpire(e)) heapRemove((HashTtlTable *)h, e);
    xfree(e);
    htabShrinkIfNeeded(h);
    return 1;
}

/* ------------------------------------------------------------------------ */
/* Value hooks (free, dup, size)                                              */
/* ------------------------------------------------------------------------ */

static void hashValueFree(void *ptr, int encoding) {
    if (encoding == OBJ_ENC_LISTPACK || encoding == OBJ_ENC_LISTPACK_EX) {
        lpFree(ptr);
        return;
    }
    if (htIsTtl(ptr)) xfree(((HashTtlTable *)ptr)->heap);
    htabRelease(ptr, hfFree, NULL);
}

static void *hashValueDup(const void *ptr, int encoding) {
    if (encoding == OBJ_ENC_HT && htIsTtl(ptr)) {
        HashTtlTable *src = (HashTtlTable *)ptr, *t = htTtlCreate(htabSize(&src->h));
        HashIter hi;
        hashIterInit(&hi, &src->h, OBJ_ENC_HT);
        while (hashIterNext(&hi)) {
            HashField *e = hfCreateTail(hi.f.p, hi.f.len, hi.v.p, hi.v.len, HF_TAIL);
            htabAdd(&t->h, e);
            if (hi.ttl) htSetTtl(t, e, hi.ttl);
        }
        hashIterRelease(&hi);
        return t;
    }
    if (encoding == OBJ_ENC_LISTPACK || encoding == OBJ_ENC_LISTPACK_EX) {
        size_t n = lpBytes(ptr);
        unsigned char *lp = xmalloc(n);
        memcpy(lp, ptr, n);
        return lp;
    }
    Htab *src = (Htab *)ptr, *h = htabCreate(&hashFieldType);
    htabExpand(h, htabSize(src));
    HashIter hi;
    hashIterInit(&hi, src, OBJ_ENC_HT);
    while (hashIterNext(&hi)) htabAdd(h, hfCreate(hi.f.p, hi.f.len, hi.v.p, hi.v.len));
    hashIterRelease(&hi);
    return h;
}

/* Listpack: its bytes.  Hashtable: table, buckets, and the field count
 * times the average size of `samples` entries (0: all). */
static size_t hashValueMemUsage(const void *ptr, int encoding, size_t samples) {
    if (encoding == OBJ_ENC_LISTPACK || encoding == OBJ_ENC_LISTPACK_EX) return lpBytes((unsigned char *)ptr);
    Htab *h = (Htab *)ptr;
    size_t total = sizeof(Htab) + htabBuckets(h) * sizeof(void *), sampled = 0, n = 0;
    if (htIsTtl(h)) total += sizeof(HashTtlTable) - sizeof(Htab) + ((HashTtlTable *)h)->cap * sizeof(HeapSlot);
    HtabIter it;
    htabIterInit(&it, h);
    HashField *e;
    while ((!samples || n < samples) && (e = htabIterNext(&it)) != NULL) {
        sampled += xmallocSize(e);
        n++;
    }
    htabIterRelease(&it);
    if (n) total += sampled / n * htabSize(h);
    return total;
}

static size_t hashValueSize(const void *ptr, int encoding) { return hashValueMemUsage(ptr, encoding, 16); }

const ObjectType hashObjectType = {
    .free = hashValueFree, .dup = hashValueDup, .size = hashValueSize, .memUsage = hashValueMemUsage};

/* ------------------------------------------------------------------------ */
/* Commands                                                                   */
/* ------------------------------------------------------------------------ */

static void notifyHash(Client *c, const char *event, const sds key) {
    notifyKeyspaceEvent(NOTIFY_HASH, event, key, sdsLen(key), c->db->id);
}

/* The hash at key for writing, created when absent (with `capacity` bytes
 * reserved).  NULL after WRONGTYPE. */
static kvobj *hashLookupWriteOrCreateSized(Client *c, const sds key, size_t capacity) {
    int wrong;
    kvobj *o = lookupWriteOrReply(c, key, OBJ_HASH, &wrong);
    if (wrong) return NULL;
    return o ? o : hashCreate(c->db, key, capacity);
}

static kvobj *hashLookupWriteOrCreate(Client *c, const sds key) {
    return hashLookupWriteOrCreateSized(c, key, 0);
}

/* Listpack bytes that argv[first..last] (fields and values) take at most:
 * header and terminator, and per element its bytes plus the longest
 * encoding and backlen overhead for its length.  0 when they will not stay
 * in a listpack anyway. */
static size_t listpackBytesFor(sds *argv, int first, int last) {
    size_t total = 7;
    for (int j = first; j <= last; j++) {
        size_t len = sdsLen(argv[j]);
        if (len > (size_t)hashMaxListpackValue) return 0;
        total += len + (len < 64 ? 1 : 2) + (len + 2 < 128 ? 1 : 2);
    }
    return total <= 8192 ? total : 0;
}

static void signalHashWrite(Client *c, const char *event, const sds key, long long dirty) {
    signalModifiedKey(c, c->db, key, sdsLen(key));
    notifyHash(c, event, key);
    serverIncrDirty(dirty);
}

/* ------------------------------------------------------------------------ */
/* Field TTLs: the index of hashes with TTLs, expiry                          */
/* ------------------------------------------------------------------------ */

/* Per database, the names of the hashes that have the TTL layout (a name
 * may outlive its hash: the active cycle drops names whose key is gone or
 * is no TTL hash).  Names are added when a hash takes the layout and, for
 * keys that arrive with it (RENAME, MOVE, COPY, RESTORE), by the
 * modified-key hook; FLUSHDB empties and SWAPDB swaps them. */
typedef struct HfeName {
    struct HfeName *next; /* Htab chain link */
    size_t len;
    char key[];
} HfeName;

static void hfeNameKey(const void *entry, const void **key, size_t *len) {
    const HfeName *n = entry;
    *key = n->key;
    *len = n->len;
}

static const HtabType hfeIndexType = {.hashKey = hfHashKey, .entryKey = hfeNameKey};
static Htab **hfeIndex; /* [server.cfg.databases], a table made on first use */
static int hfeIndexDbs;
static size_t hfeIndexTotal; /* names over all databases */
static int hfeEverTtl;       /* a TTL layout was ever made (so the hook looks) */

static void hfeKeyModifiedHook(Client *c, Db *db, const char *key, size_t len);

static void hfeIndexAdd(int dbid, const char *key, size_t len) {
    if (!hfeIndex) {
        hfeIndexDbs = server.cfg.databases;
        hfeIndex = xcalloc(sizeof(*hfeIndex) * (size_t)hfeIndexDbs);
        /* The first hash with field TTLs: from now on a key brought under
         * a new name (RENAME, MOVE, COPY, RESTORE) is looked at.  Until
         * then writes do not pay for the hook. */
        serverAddKeyModifiedHook(hfeKeyModifiedHook);
    }
    if (dbid < 0 || dbid >= hfeIndexDbs) return;
    if (!hfeIndex[dbid]) hfeIndex[dbid] = htabCreate(&hfeIndexType);
    if (htabFind(hfeIndex[dbid], key, len)) return;
    HfeName *n = xmalloc(sizeof(*n) + len);
    n->next = NULL; /* the link word's high 16 bits are the entry's (htab.h): zero */
    n->len = len;
    memcpy(n->key, key, len);
    htabAdd(hfeIndex[dbid], n);
    hfeIndexTotal++;
}

static void hfeIndexClear(int dbid) {
    if (!hfeIndex || dbid < 0 || dbid >= hfeIndexDbs || !hfeIndex[dbid]) return;
    hfeIndexTotal -= htabSize(hfeIndex[dbid]);
    htabClear(hfeIndex[dbid], hfFree, NULL);
}

static void hfeFlushHook(int dbid) {
    if (dbid >= 0) hfeIndexClear(dbid);
    else
        for (int i = 0; i < hfeIndexDbs; i++) hfeIndexClear(i);
}

static void hfeSwapHook(int a, int b) {
    if (!hfeIndex || a < 0 || b < 0 || a >= hfeIndexDbs || b >= hfeIndexDbs) return;
    Htab *t = hfeIndex[a];
    hfeIndex[a] = hfeIndex[b];
    hfeIndex[b] = t;
}

/* A key that changed: a TTL hash that arrived under a new name (RENAME,
 * MOVE, COPY, RESTORE) is indexed.  Costs one branch while no hash has
 * TTLs. */
static void hfeKeyModifiedHook(Client *c, Db *db, const char *key, size_t len) {
    if (!hfeEverTtl || !c || !c->cmd) return;
    /* Only the commands that bring a value under a name. */
    const char *n = c->cmd->name;
    if (strcmp(n, "rename") && strcmp(n, "renamenx") && strcmp(n, "move") && strcmp(n, "copy") &&
        strcmp(n, "restore") && strcmp(n, "restore-asking"))
        return;
    kvobj *o = dbFind(db, key, len);
    if (o && kvType(o) == OBJ_HASH && hashHasTtl(o)) hfeIndexAdd(db->id, key, len);
}

/* Gives the hash the TTL layout (no-op when it has it) and indexes it. */
static void hashEnableTtl(HashWrite *w) {
    kvobj *o = w->o;
    if (hashHasTtl(o)) return;
    if (kvEncoding(o) == OBJ_ENC_LISTPACK) {
        unsigned char *lp = kvPtr(o), *ex = lpNew(lpBytes(lp) + lpLength(lp) + 8);
        HashIter hi;
        hashIterInit(&hi, lp, OBJ_ENC_LISTPACK);
        while (hashIterNext(&hi)) {
            LpItem items[3] = {{hi.f.p, hi.f.len, 0}, {hi.v.p, hi.v.len, 0}, {NULL, 0, 0}};
            ex = lpAppendItems(ex, items, 3);
        }
        hashIterRelease(&hi);
        if (kvHasInlineValue(o)) {
            w->o = dbSetValuePtr(w->db, o, OBJ_ENC_LISTPACK_EX, ex);
        } else {
            lpFree(lp);
            kvSetPtr(o, ex);
            kvSetEncoding(o, OBJ_ENC_LISTPACK_EX);
        }
        w->lpBytesBefore = 0;
    } else {
        kvSetPtr(o, htTtlFromTable(kvPtr(o)));
    }
    hfeEverTtl = 1;
    hfeIndexAdd(w->db->id, kvKey(w->o), kvKeyLen(w->o));
}

/* Field f (present) of a TTL-layout hash gets expire `when` (0: none). */
static void hashSetFieldTtl(HashWrite *w, const void *f, size_t flen, long long when) {
    if (kvEncoding(w->o) == OBJ_ENC_LISTPACK_EX) {
        unsigned char *lp = kvPtr(w->o), *p = lpexFind(lp, f, flen);
        if (!p) return;
        kvSetPtr(w->o, lpexMove(lp, p, when));
        return;
    }
    HashTtlTable *t = kvPtr(w->o);
    HashField *e = htabFind(&t->h, f, flen);
    if (e) htSetTtl(t, e, when);
}

/* Fields that have not expired (HLEN counts the expired ones too, as
 * Redis does; HGETALL and friends do not). */
static unsigned long hashLiveLength(kvobj *o) {
    if (!hashHasTtl(o) || dbIgnoreExpire) return hashLength(o);
    if (kvEncoding(o) == OBJ_ENC_LISTPACK_EX) {
        unsigned long n = 0;
        HashIter hi;
        hashIterInit(&hi, kvPtr(o), OBJ_ENC_LISTPACK_EX);
        while (hashIterNextLive(&hi)) n++;
        hashIterRelease(&hi);
        return n;
    }
    HashTtlTable *t = kvPtr(o);
    return htabSize(&t->h) - heapCountDue(t, 0, dbNowMs);
}

/* The HDEL that states a field's expiry to replicas and the AOF. */
static void effectFieldDeleted(int dbid, const char *key, size_t klen, const void *f, size_t flen) {
    EffectArg a[3] = {EA_STR("HDEL"), EA_BUF(key, klen), EA_BUF(f, flen)};
    effectsAlso(dbid, 3, a);
}

static long long hfeExpiredFields; /* fields deleted by expiry (lazy or active) */

/* Lazy expiry of one field a command addresses: when f is there but
 * expired, deletes it (an HDEL effect) and returns 1.  Not on a replica or
 * while loading (the field stays, invisible, until its HDEL arrives). */
static int hashLazyExpire(HashWrite *w, const void *f, size_t flen) {
    if (dbNoLazyExpire || server.expiryPaused || !hashHasTtl(w->o)) return 0;
    HashStr v;
    long long ttl;
    if (!hashGetTtl(w->o, f, flen, &v, &ttl) || !fieldExpired(ttl)) return 0;
    effectFieldDeleted(w->db->id, kvKey(w->o), kvKeyLen(w->o), f, flen);
    hashDelete(w, f, flen);
    hfeExpiredFields++;
    return 1;
}

/* After a command's lazy expiries: the "hexpired" event, and with
 * mayDelete a hash left empty is deleted ("del").  Returns 1 when the key
 * was deleted. */
static int hashAfterLazy(Client *c, HashWrite *w, long expired, int mayDelete) {
    if (!expired) return 0;
    const char *key = kvKey(w->o);
    size_t klen = kvKeyLen(w->o);
    notifyKeyspaceEvent(NOTIFY_HASH, "hexpired", key, klen, c->db->id);
    if (!mayDelete || hashLength(w->o) != 0) {
        signalModifiedKey(c, c->db, key, klen);
        return 0;
    }
    sds name = sdsNewLen(key, klen);
    dbDelete(c->db, name, sdsLen(name));
    notifyKeyspaceEvent(NOTIFY_GENERIC, "del", name, sdsLen(name), c->db->id);
    signalModifiedKey(c, c->db, name, sdsLen(name));
    sdsFree(name);
    return 1;
}

/* Deletes up to `max` fields of a TTL-layout hash whose expire has passed,
 * each with its HDEL effect.  Returns how many; *more is set when due
 * fields remain.  The entry does not move (the layout is a pointer). */
static long hashExpireDue(HashWrite *w, long max, int *more) {
    const char *key = kvKey(w->o);
    size_t klen = kvKeyLen(w->o);
    long n = 0;
    *more = 0;
    if (kvEncoding(w->o) == OBJ_ENC_LISTPACK_EX) {
        unsigned char *lp = kvPtr(w->o), *p = lpFirst(lp);
        while (p) {
            unsigned char *vp = lpNext(lp, p), *tp = lpNext(lp, vp);
            if (!fieldExpired(lpInt(tp))) {
                p = lpNext(lp, tp);
                continue;
            }
            if (n == max) {
                *more = 1;
                break;
            }
            HashStr f;
            lpStr(p, &f);
            effectFieldDeleted(w->db->id, key, klen, f.p, f.len);
            lp = lpDeleteRangeWithEntry(lp, &p, 3);
            n++;
        }
        kvSetPtr(w->o, lp);
    } else {
        HashTtlTable *t = kvPtr(w->o);
        while (t->n && fieldExpired(t->heap[0].when)) {
            if (n == max) {
                *more = 1;
                break;
            }
            HashField *e = t->heap[0].e;
            size_t flen, vlen;
            const unsigned char *fp = hfField(e, &flen, &vlen);
            effectFieldDeleted(w->db->id, key, klen, fp, flen);
            heapRemove(t, e);
            htabUnlink(&t->h, fp, flen);
            xfree(e);
            n++;
        }
        if (n) htabShrinkIfNeeded(&t->h);
    }
    hfeExpiredFields += n;
    return n;
}

/* --- the active cycle --- */

typedef struct HfeCycle {
    Db *db;
    Htab *index;
    long long deadline; /* monotonic us */
    long fieldBudget;   /* fields still allowed before the clock is read again */
    int stop;
} HfeCycle;

#define HFE_FIELDS_PER_CHECK 16

/* One indexed name: drops it when the key is gone or is no TTL hash, else
 * expires its due fields (bounded), deleting a hash left empty. */
static void hfeVisit(void *priv, void *entry) {
    HfeCycle *cx = priv;
    HfeName *name = entry;
    if (cx->stop) return;
    /* A visit costs like a field: a cycle over many hashes with nothing
     * due still reads the clock every HFE_FIELDS_PER_CHECK of them. */
    if (--cx->fieldBudget <= 0) {
        cx->fieldBudget = HFE_FIELDS_PER_CHECK;
        if (monotonicUs() >= cx->deadline) {
            cx->stop = 1;
            return;
        }
    }
    kvobj *o = dbFind(cx->db, name->key, name->len);
    if (!o || kvType(o) != OBJ_HASH || !hashHasTtl(o)) {
        htabUnlink(cx->index, name->key, name->len);
        xfree(name);
        hfeIndexTotal--;
        return;
    }
    if (kvIsExpired(o)) return; /* the key's own expiry deletes it */
    HashWrite w = hashWriteBegin(cx->db, o);
    for (;;) {
        int more;
        long n = hashExpireDue(&w, cx->fieldBudget, &more);
        cx->fieldBudget -= n;
        if (n) {
            sds key = sdsNewLen(kvKey(w.o), kvKeyLen(w.o));
            notifyKeyspaceEvent(NOTIFY_HASH, "hexpired", key, sdsLen(key), cx->db->id);
            if (hashLength(w.o) == 0) {
                dbDelete(cx->db, key, sdsLen(key));
                notifyKeyspaceEvent(NOTIFY_GENERIC, "del", key, sdsLen(key), cx->db->id);
                htabUnlink(cx->index, name->key, name->len);
                xfree(name);
                hfeIndexTotal--;
                more = 0;
            }
            signalModifiedKey(NULL, cx->db, key, sdsLen(key));
            sdsFree(key);
        }
        if (cx->fieldBudget <= 0) {
            cx->fieldBudget = HFE_FIELDS_PER_CHECK;
            if (monotonicUs() >= cx->deadline) {
                cx->stop = 1;
                return;
            }
        }
        if (!more) return;
    }
}

static int hfeDb;          /* database the cycle resumes in */
static uint64_t hfeCursor; /* and its index cursor */
static int hfePending;     /* the last cycle ran out of time */

/* Expires due fields for up to budgetUs microseconds, resuming where the
 * last run stopped: the bounded share of each timer tick (and of the
 * event loop's passes while work is left). */
static void hfeActiveCycle(long long budgetUs) {
    if (!hfeIndexTotal || !server.activeExpireEnabled || server.expiryPaused || server.isReplica) {
        hfePending = 0; /* the cron tries again; no step timer meanwhile */
        return;
    }
    long long start = monotonicUs();
    HfeCycle cx = {.deadline = start + budgetUs, .fieldBudget = HFE_FIELDS_PER_CHECK};
    for (int visited = 0; visited <= hfeIndexDbs && !cx.stop; visited++) {
        if (hfeDb >= hfeIndexDbs) hfeDb = 0;
        Htab *ix = hfeIndex[hfeDb];
        if (ix && htabSize(ix)) {
            cx.db = &server.db[hfeDb];
            cx.index = ix;
            do {
                hfeCursor = htabScan(ix, hfeCursor, hfeVisit, &cx);
            } while (hfeCursor && !cx.stop);
            if (cx.stop) break;
        }
        hfeDb++;
        hfeCursor = 0;
    }
    hfePending = cx.stop;
    /* As in Redis, where the key and field cycles are one: the time counts
     * in expire_cycle_cpu_milliseconds and as an "expire-cycle" latency. */
    long long us = monotonicUs() - start;
    dbStats.expireCycleCpuUs += us;
    if (dbHooks.latency) dbHooks.latency("expire-cycle", us / 1000);
}

/* While a backlog is left, a step of HFE_STEP_US every HFE_GAP_US keeps
 * reclaiming between cron ticks: with no client traffic the loop would
 * otherwise sleep until the next tick, and a million fields due at once
 * took over a minute to go (500 us per 100 ms).  A step is short enough
 * that a command arriving meanwhile hardly waits; the pair gives the cycle
 * about a fifth of a core, as Redis gives its expire cycle a quarter. */
#define HFE_STEP_US 250
#define HFE_GAP_US 1000
static long long hfeStepTimer; /* its id while armed, else 0 */

static long long hfeStep(EventLoop *loop, long long id, void *data) {
    (void)loop, (void)id, (void)data;
    if (hfePending) hfeActiveCycle(HFE_STEP_US);
    if (hfePending) return HFE_GAP_US;
    hfeStepTimer = 0;
    return -1;
}

static void hfeArmStep(void) {
    if (hfePending && !hfeStepTimer) hfeStepTimer = eventAddTimerUs(server.loop, HFE_GAP_US, hfeStep, NULL);
}

static void hfeCron(void) {
    hfeActiveCycle(500);
    hfeArmStep();
}

static void hfeBeforeSleep(void) {
    if (hfePending) hfeActiveCycle(HFE_STEP_US);
    hfeArmStep();
}

void hashInit(void) {
    serverAddFlushHook(hfeFlushHook);
    serverAddSwapHook(hfeSwapHook);
    serverAddCronHook(hfeCron);
    serverAddBeforeSleepHook(hfeBeforeSleep);
}

long long hashExpiredFieldCount(void) { return hfeExpiredFields; }

int hashFieldTtlEverUsed(void) { return hfeEverTtl; }

size_t hashDbSubexpiry(int dbid) {
    if (!hfeIndex || dbid < 0 || dbid >= hfeIndexDbs || !hfeIndex[dbid]) return 0;
    Htab *ix = hfeIndex[dbid];
    Db *db = &server.db[dbid];
    size_t n = 0;
    HtabIter it;
    htabIterInit(&it, ix);
    for (HfeName *name; (name = htabIterNext(&it));) {
        kvobj *o = dbFind(db, name->key, name->len);
        n += o && kvType(o) == OBJ_HASH && hashValueHasTtl(o);
    }
    htabIterRelease(&it);
    return n;
}

/* Lazy expiry of the fields argv[first], argv[first+step], ... up to
 * argv[last] of a TTL-layout hash, before a command reads them.  With
 * mayDelete a hash left empty is deleted and NULL returned; else the
 * (possibly moved) entry. */
static kvobj *hashLazyExpireArgs(Client *c, kvobj *o, int first, int last, int step, int mayDelete) {
    if (!hashHasTtl(o)) return o;
    HashWrite w = hashWriteBegin(c->db, o);
    long n = 0;
    for (int j = first; j <= last; j += step) n += hashLazyExpire(&w, c->argv[j], sdsLen(c->argv[j]));
    return hashAfterLazy(c, &w, n, mayDelete) ? NULL : w.o;
}

/* HSET key field value [field value ...] and HMSET (replies OK). */
static void hsetGeneric(Client *c, int replyCount) {
    if (c->argc % 2 == 1) {
        replyErrorFormat(c, "ERR wrong number of arguments for '%s' command", c->cmd->name);
        return;
    }
    kvobj *o = hashLookupWriteOrCreateSized(c, c->argv[1], listpackBytesFor(c->argv, 2, c->argc - 1));
    if (!o) return;
    /* As Redis: a field there but expired is overwritten (an update). */
    HashWrite w = hashWriteBegin(c->db, o);
    hashTryConversion(&w, c->argv, 2, c->argc - 1);
    long long created = 0;
    for (int j = 2; j < c->argc; j += 2)
        created += hashSet(&w, c->argv[j], sdsLen(c->argv[j]), c->argv[j + 1], sdsLen(c->argv[j + 1]));
    hashSettle(&w);
    signalHashWrite(c, "hset", c->argv[1], (c->argc - 2) / 2);
    if (replyCount) replyLongLong(c, created);
    else replyOk(c);
}

static void hsetCommand(Client *c) { hsetGeneric(c, 1); }
static void hmsetCommand(Client *c) { hsetGeneric(c, 0); }

/* The module key API's field write (hash.h): no event, no dirty, no
 * signal (the module layer's caller states them). */
int hashModuleSet(Db *db, const sds key, const sds f, const sds v) {
    kvobj *o = dbFind(db, key, sdsLen(key));
    if (!o) o = hashCreate(db, key, 0);
    HashWrite w = hashWriteBegin(db, o);
    sds args[2] = {f, v};
    hashTryConversion(&w, args, 0, 1);
    int created = hashSet(&w, f, sdsLen(f), v, sdsLen(v));
    hashSettle(&w);
    return created;
}

int hashModuleDelete(Db *db, const sds key, const sds f) {
    kvobj *o = dbFind(db, key, sdsLen(key));
    if (!o) return 0;
    HashWrite w = hashWriteBegin(db, o);
    int deleted = hashDelete(&w, f, sdsLen(f));
    if (hashLength(w.o) == 0)
        dbDelete(db, key, sdsLen(key));
    else if (deleted)
        hashSettle(&w);
    return deleted;
}

/* HSETNX key field value */
static void hsetnxCommand(Client *c) {
    kvobj *o = hashLookupWriteOrCreate(c, c->argv[1]);
    if (!o) return;
    if (hashHasTtl(o)) o = hashLazyExpireArgs(c, o, 2, 2, 1, 0);
    HashStr v;
    if (hashGet(o, c->argv[2], sdsLen(c->argv[2]), &v)) {
        replyLongLong(c, 0);
        return;
    }
    HashWrite w = hashWriteBegin(c->db, o);
    hashTryConversion(&w, c->argv, 2, 3);
    hashSet(&w, c->argv[2], sdsLen(c->argv[2]), c->argv[3], sdsLen(c->argv[3]));
    hashSettle(&w);
    signalHashWrite(c, "hset", c->argv[1], 1);
    replyLongLong(c, 1);
}

/* The hash at key for reading; NULL when absent (after replying `missing`
 * unless NULL) or of another type (after WRONGTYPE). */
static kvobj *hashLookupRead(Client *c, void (*missing)(Client *)) {
    int wrong;
    kvobj *o = lookupReadOrReply(c, c->argv[1], OBJ_HASH, &wrong);
    if (!o && !wrong && missing) missing(c);
    return o;
}

static void replyZero(Client *c) { replyLongLong(c, 0); }

static void replyField(Client *c, kvobj *o, const sds f) {
    HashStr v;
    if (hashGet(o, f, sdsLen(f), &v)) replyBulk(c, v.p, v.len);
    else replyNull(c);
}

/* HGET key field */
static void hgetCommand(Client *c) {
    kvobj *o = hashLookupRead(c, replyNull);
    if (o && hashHasTtl(o) && !(o = hashLazyExpireArgs(c, o, 2, 2, 1, 1))) replyNull(c);
    if (o) replyField(c, o, c->argv[2]);
}

/* HMGET key field [field ...]: a missing key answers nulls. */
static void hmgetCommand(Client *c) {
    int wrong;
    kvobj *o = lookupReadOrReply(c, c->argv[1], OBJ_HASH, &wrong);
    if (wrong) return;
    if (o && hashHasTtl(o)) o = hashLazyExpireArgs(c, o, 2, c->argc - 1, 1, 1);
    replyArrayLen(c, c->argc - 2);
    for (int j = 2; j < c->argc; j++) {
        if (o) replyField(c, o, c->argv[j]);
        else replyNull(c);
    }
}

/* HDEL key field [field ...] */
static void hdelCommand(Client *c) {
    int wrong;
    kvobj *o = lookupWriteOrReply(c, c->argv[1], OBJ_HASH, &wrong);
    if (!o) {
        if (!wrong) replyLongLong(c, 0);
        return;
    }
    long long deleted = 0;
    int emptied = 0;
    HashWrite w = hashWriteBegin(c->db, o);
    for (int j = 2; j < c->argc; j++) {
        deleted += hashDelete(&w, c->argv[j], sdsLen(c->argv[j]));
        if (hashLength(w.o) == 0) {
            dbDelete(c->db, c->argv[1], sdsLen(c->argv[1]));
            emptied = 1;
            break;
        }
    }
    if (deleted && !emptied) hashSettle(&w);
    if (deleted) {
        signalHashWrite(c, "hdel", c->argv[1], deleted);
        if (emptied) notifyKeyspaceEvent(NOTIFY_GENERIC, "del", c->argv[1], sdsLen(c->argv[1]), c->db->id);
    }
    replyLongLong(c, deleted);
}

/* HLEN key */
static void hlenCommand(Client *c) {
    kvobj *o = hashLookupRead(c, replyZero);
    if (o) replyLongLong(c, (long long)hashLength(o));
}

/* HSTRLEN key field */
static void hstrlenCommand(Client *c) {
    kvobj *o = hashLookupRead(c, replyZero);
    if (o && hashHasTtl(o) && !(o = hashLazyExpireArgs(c, o, 2, 2, 1, 1))) replyZero(c);
    if (!o) return;
    HashStr v;
    replyLongLong(c, hashGet(o, c->argv[2], sdsLen(c->argv[2]), &v) ? (long long)v.len : 0);
}

/* HEXISTS key field */
static void hexistsCommand(Client *c) {
    kvobj *o = hashLookupRead(c, replyZero);
    if (o && hashHasTtl(o) && !(o = hashLazyExpireArgs(c, o, 2, 2, 1, 1))) replyZero(c);
    if (!o) return;
    HashStr v;
    replyLongLong(c, hashGet(o, c->argv[2], sdsLen(c->argv[2]), &v));
}

/* HINCRBY key field increment */
static void hincrbyCommand(Client *c) {
    long long incr, value = 0;
    if (getLongLongOrReply(c, c->argv[3], &incr, NULL) == -1) return;
    kvobj *o = hashLookupWriteOrCreate(c, c->argv[1]);
    if (!o) return;
    if (hashHasTtl(o)) o = hashLazyExpireArgs(c, o, 2, 2, 1, 0);
    HashStr v;
    if (hashGet(o, c->argv[2], sdsLen(c->argv[2]), &v) &&
        !stringToLongLong((const char *)v.p, v.len, &value)) {
        replyError(c, "ERR hash value is not an integer");
        return;
    }
    if ((incr < 0 && value < 0 && incr < LLONG_MIN - value) || (incr > 0 && value > 0 && incr > LLONG_MAX - value)) {
        replyError(c, ERR_INCR_OVERFLOW);
        return;
    }
    value += incr;
    char buf[UTIL_LONG_STR_SIZE];
    int len = longLongToString(buf, sizeof(buf), value);
    HashWrite w = hashWriteBegin(c->db, o);
    hashSetKeep(&w, c->argv[2], sdsLen(c->argv[2]), buf, (size_t)len, 1);
    hashSettle(&w);
    signalHashWrite(c, "hincrby", c->argv[1], 1);
    replyLongLong(c, value);
}

/* HINCRBYFLOAT key field increment.  Its effect is HSET key field
 * <result>, so that replicas do not redo the float arithmetic. */
static void hincrbyfloatCommand(Client *c) {
    long double incr, value = 0;
    if (getLongDoubleOrReply(c, c->argv[3], &incr, NULL) == -1) return;
    if (isnan(incr) || isinf(incr)) {
        replyError(c, "ERR value is NaN or Infinity");
        return;
    }
    kvobj *o = hashLookupWriteOrCreate(c, c->argv[1]);
    if (!o) return;
    if (hashHasTtl(o)) o = hashLazyExpireArgs(c, o, 2, 2, 1, 0);
    HashStr v;
    if (hashGet(o, c->argv[2], sdsLen(c->argv[2]), &v) && !stringToLongDouble((const char *)v.p, v.len, &value)) {
        replyError(c, "ERR hash value is not a float");
        return;
    }
    value += incr;
    if (isnan(value) || isinf(value)) {
        replyError(c, ERR_NAN_OR_INF);
        return;
    }
    char *buf = xmalloc(UTIL_MAX_LONG_DOUBLE_CHARS);
    int len = longDoubleToString(buf, UTIL_MAX_LONG_DOUBLE_CHARS, value, 1);
    HashWrite w = hashWriteBegin(c->db, o);
    hashSetKeep(&w, c->argv[2], sdsLen(c->argv[2]), buf, (size_t)len, 1);
    hashSettle(&w);
    signalHashWrite(c, "hincrbyfloat", c->argv[1], 1);
    if (hashHasTtl(w.o)) {
        /* As Redis 8: HSETEX KEEPTTL, so that replicas keep the field's TTL. */
        EffectArg args[7] = {EA_STR("HSETEX"), EA_SDS(c->argv[1]), EA_STR("KEEPTTL"), EA_STR("FIELDS"),
                             EA_STR("1"),      EA_SDS(c->argv[2]), EA_BUF(buf, (size_t)len)};
        effectsRewrite(7, args);
    } else {
        static const int pos[2] = {0, 3};
        EffectArg args[2] = {EA_STR("HSET"), EA_BUF(buf, (size_t)len)};
        effectsRewriteSent(c, 4, 2, pos, args);
    }
    replyBulk(c, buf, (size_t)len);
    xfree(buf);
}

/* HKEYS / HVALS / HGETALL */
enum { WANT_KEYS = 1, WANT_VALS = 2 };

static void replyPair(Client *c, const HashStr *f, const HashStr *v, int what) {
    if (what & WANT_KEYS) replyBulk(c, f->p, f->len);
    if (what & WANT_VALS) replyBulk(c, v->p, v->len);
}

static void getallGeneric(Client *c, int what) {
    int wrong;
    kvobj *o = lookupReadOrReply(c, c->argv[1], OBJ_HASH, &wrong);
    if (wrong) return;
    long n = o ? (long)hashLiveLength(o) : 0;
    if (what == (WANT_KEYS | WANT_VALS)) replyMapLen(c, n);
    else replyArrayLen(c, n);
    if (!o) return;
    HashIter hi;
    hashIterInit(&hi, kvPtr(o), kvEncoding(o));
    while (hashIterNextLive(&hi)) replyPair(c, &hi.f, &hi.v, what);
    hashIterRelease(&hi);
}

static void hkeysCommand(Client *c) { getallGeneric(c, WANT_KEYS); }
static void hvalsCommand(Client *c) { getallGeneric(c, WANT_VALS); }
static void hgetallCommand(Client *c) { getallGeneric(c, WANT_KEYS | WANT_VALS); }

/* --- HSCAN --- */

static int fieldMatches(const sds pat, const HashStr *f) {
    return !pat || globMatch(pat, sdsLen(pat), (const char *)f->p, f->len, 0);
}

/* HSCAN key cursor [MATCH pattern] [COUNT count].  The cursor is checked
 * first, then the key, then the options (a missing key ignores them).  A
 * listpack answers everything at once with cursor 0.  A hashtable scans at
 * most 10 x COUNT buckets or until COUNT elements (fields and values, as
 * Redis counts them) were gathered, then filters by MATCH. */
static void hscanCommand(Client *c) {
    uint64_t cursor;
    long count;
    sds pat;
    kvobj *o = scanKeyStartOrReply(c, OBJ_HASH, &cursor, &count, &pat);
    if (!o) return;

    replyArrayLen(c, 2);
    if (kvEncoding(o) == OBJ_ENC_LISTPACK || kvEncoding(o) == OBJ_ENC_LISTPACK_EX) {
        replyBulk(c, "0", 1);
        void *lenNode = replyDeferredLen(c);
        long n = 0;
        HashIter hi;
        hashIterInit(&hi, kvPtr(o), kvEncoding(o));
        while (hashIterNextLive(&hi)) {
            if (!fieldMatches(pat, &hi.f)) continue;
            replyPair(c, &hi.f, &hi.v, WANT_KEYS | WANT_VALS);
            n += 2;
        }
        hashIterRelease(&hi);
        replySetDeferredArrayLen(c, lenNode, n);
        return;
    }
    ScanBatch b = {0};
    int ttlTable = htIsTtl(kvPtr(o));
    long maxIter = count > LONG_MAX / 10 ? LONG_MAX : count * 10;
    do {
        cursor = htabScan(kvPtr(o), cursor, scanBatchCollect, &b);
    } while (cursor && maxIter-- && b.count * 2 < (size_t)count);
    scanReplyCursor(c, cursor);
    void *lenNode = replyDeferredLen(c);
    long n = 0;
    for (size_t i = 0; i < b.count; i++) {
        HashStr f, v;
        f.p = hfField(b.items[i], &f.len, &v.len);
        v.p = f.p + f.len;
        if (ttlTable && fieldExpired(hfExpire(b.items[i]))) continue;
        if (!fieldMatches(pat, &f)) continue;
        replyPair(c, &f, &v, WANT_KEYS | WANT_VALS);
        n += 2;
    }
    replySetDeferredArrayLen(c, lenNode, n);
    scanBatchFree(&b);
}

/* --- HRANDFIELD --- */

/* Reply one field (and its value): RESP3 WITHVALUES nests each pair. */
static void replyRandomPair(Client *c, const HashStr *f, const HashStr *v, int withvalues) {
    if (withvalues && c->resp == 3) replyArrayLen(c, 2);
    replyPair(c, f, v, withvalues ? WANT_KEYS | WANT_VALS : WANT_KEYS);
}

/* The field/value views of listpack element pointers. */
static void lpPairAt(unsigned char *lp, unsigned char *fp, HashStr *f, HashStr *v) {
    lpStr(fp, f);
    lpStr(lpNext(lp, fp), v);
}

static void hfPair(HashField *e, HashStr *f, HashStr *v) {
    f->p = hfField(e, &f->len, &v->len);
    v->p = f->p + f->len;
}

/* Whether the hash is a listpack (with or without TTLs), and the elements
 * per field in it. */
static int hashIsListpack(const kvobj *o) {
    return kvEncoding(o) == OBJ_ENC_LISTPACK || kvEncoding(o) == OBJ_ENC_LISTPACK_EX;
}

static int hashListpackStep(const kvobj *o) { return kvEncoding(o) == OBJ_ENC_LISTPACK_EX ? 3 : 2; }

/* All field elements of a listpack (count = its field count; step: the
 * elements per field). */
static unsigned char **lpFieldArray(unsigned char *lp, unsigned long count, int step) {
    unsigned char **arr = xmalloc(sizeof(*arr) * (count ? count : 1));
    unsigned char *p = lpFirst(lp);
    for (unsigned long i = 0; i < count; i++) {
        arr[i] = p;
        for (int k = 0; k < step; k++) p = lpNext(lp, p);
    }
    return arr;
}

/* Every entry of a hashtable, in table order (caller frees the array). */
static HashField **htabEntryArray(Htab *h, size_t *n) {
    HashField **arr = xmalloc(sizeof(*arr) * (htabSize(h) ? htabSize(h) : 1));
    size_t i = 0;
    HtabIter it;
    htabIterInit(&it, h);
    HashField *e;
    while ((e = htabIterNext(&it)) != NULL) arr[i++] = e;
    htabIterRelease(&it);
    *n = i;
    return arr;
}

/* Moves `count` uniformly chosen distinct items of arr[0..n) to its front. */
static void partialShuffle(void **arr, size_t n, size_t count) {
    for (size_t i = 0; i < count; i++) {
        size_t j = i + (size_t)randBounded(n - i);
        void *t = arr[i];
        arr[i] = arr[j];
        arr[j] = t;
    }
}

/* Negative count: `count` independent picks, repeats allowed. */
static void hrandfieldRepeat(Client *c, kvobj *o, unsigned long count, int withvalues) {
    replyArrayLen(c, (long)(withvalues && c->resp == 2 ? count * 2 : count));
    HashStr f, v;
    if (hashIsListpack(o)) {
        unsigned char *lp = kvPtr(o);
        unsigned long size = hashLength(o);
        unsigned char **arr = lpFieldArray(lp, size, hashListpackStep(o));
        for (unsigned long i = 0; i < count; i++) {
            lpPairAt(lp, arr[randBounded(size)], &f, &v);
            replyRandomPair(c, &f, &v, withvalues);
        }
        xfree(arr);
        return;
    }
    for (unsigned long i = 0; i < count; i++) {
        hfPair(htabRandom(kvPtr(o)), &f, &v);
        replyRandomPair(c, &f, &v, withvalues);
    }
}

/* A small open-addressing set of entry pointers (for distinct picks). */
static int ptrSetAdd(void **slots, size_t mask, void *p) {
    size_t i = (size_t)(((uintptr_t)p >> 4) * 0x9E3779B97F4A7C15ULL) & mask;
    while (slots[i]) {
        if (slots[i] == p) return 0;
        i = (i + 1) & mask;
    }
    slots[i] = p;
    return 1;
}

/* Positive count below the size: `count` distinct fields. */
static void hrandfieldDistinct(Client *c, kvobj *o, unsigned long count, int withvalues) {
    replyArrayLen(c, (long)(withvalues && c->resp == 2 ? count * 2 : count));
    HashStr f, v;
    if (hashIsListpack(o)) {
        unsigned char *lp = kvPtr(o);
        unsigned long size = hashLength(o);
        unsigned char **arr = lpFieldArray(lp, size, hashListpackStep(o));
        partialShuffle((void **)arr, size, count);
        for (unsigned long i = 0; i < count; i++) {
            lpPairAt(lp, arr[i], &f, &v);
            replyRandomPair(c, &f, &v, withvalues);
        }
        xfree(arr);
        return;
    }
    Htab *h = kvPtr(o);
    if (count * 3 > htabSize(h)) {
        /* A large share: shuffle a copy of all entries. */
        size_t n;
        HashField **arr = htabEntryArray(h, &n);
        partialShuffle((void **)arr, n, count);
        for (unsigned long i = 0; i < count; i++) {
            hfPair(arr[i], &f, &v);
            replyRandomPair(c, &f, &v, withvalues);
        }
        xfree(arr);
        return;
    }
    /* A small share: random picks, skipping repeats. */
    size_t cap = 4;
    while (cap < count * 2) cap <<= 1;
    void **seen = xcalloc(sizeof(void *) * cap);
    for (unsigned long got = 0; got < count;) {
        HashField *e = htabRandom(h);
        if (!ptrSetAdd(seen, cap - 1, e)) continue;
        hfPair(e, &f, &v);
        replyRandomPair(c, &f, &v, withvalues);
        got++;
    }
    xfree(seen);
}

/* Deletes every expired field first, as Redis's HRANDFIELD does (HDEL
 * effects, "hexpired"); NULL when that deleted the hash. */
static kvobj *hashExpireAllDue(Client *c, kvobj *o) {
    if (dbNoLazyExpire || server.expiryPaused) return o;
    HashWrite w = hashWriteBegin(c->db, o);
    int more;
    long n = hashExpireDue(&w, LONG_MAX, &more);
    return hashAfterLazy(c, &w, n, 1) ? NULL : w.o;
}

/* HRANDFIELD key [count [WITHVALUES]] */
static void hrandfieldCommand(Client *c) {
    if (c->argc == 2) {
        kvobj *o = hashLookupRead(c, replyNull);
        if (!o) return;
        if (hashHasTtl(o) && !(o = hashExpireAllDue(c, o))) {
            replyNull(c);
            return;
        }
        HashStr f, v;
        if (hashIsListpack(o)) {
            unsigned char *lp = kvPtr(o);
            lpPairAt(lp, lpSeek(lp, (long)randBounded(hashLength(o)) * hashListpackStep(o)), &f, &v);
        } else {
            hfPair(htabRandom(kvPtr(o)), &f, &v);
        }
        replyBulk(c, f.p, f.len);
        return;
    }
    long l;
    int withvalues = c->argc == 4;
    /* Redis's order: the count, then the syntax, then the WITHVALUES range. */
    if (getRangeLongOrReply(c, c->argv[2], -LONG_MAX, LONG_MAX, &l, NULL) == -1) return;
    if (c->argc > 4 || (withvalues && !argIs(c->argv[3], "withvalues"))) {
        replyErrorSyntax(c);
        return;
    }
    if (withvalues && (l < -LONG_MAX / 2 || l > LONG_MAX / 2)) {
        replyError(c, "ERR value is out of range");
        return;
    }
    kvobj *o = hashLookupRead(c, replyEmptyArray);
    if (!o) return;
    if (hashHasTtl(o) && !(o = hashExpireAllDue(c, o))) {
        replyEmptyArray(c);
        return;
    }
    if (l == 0) {
        replyEmptyArray(c);
        return;
    }
    unsigned long size = hashLength(o);
    if (l < 0) {
        unsigned long count = (unsigned long)-l;
        if (count > (unsigned long)(withvalues ? HRANDFIELD_MAX_REPLY_ELEMENTS / 2 : HRANDFIELD_MAX_REPLY_ELEMENTS)) {
            replyError(c, "ERR value is out of range");
            return;
        }
        hrandfieldRepeat(c, o, count, withvalues);
        return;
    }
    if ((unsigned long)l >= size) {
        /* The whole hash, in its own order. */
        replyArrayLen(c, (long)(withvalues && c->resp == 2 ? size * 2 : size));
        HashIter hi;
        hashIterInit(&hi, kvPtr(o), kvEncoding(o));
        while (hashIterNext(&hi)) replyRandomPair(c, &hi.f, &hi.v, withvalues);
        hashIterRelease(&hi);
        return;
    }
    hrandfieldDistinct(c, o, (unsigned long)l, withvalues);
}

/* --- hash-field expiry commands (Redis 7.4 / 8.0) --- */

#define ERR_FIELDS_MISSING "ERR Mandatory argument FIELDS is missing or not at the right position"
#define ERR_NUMFIELDS_MATCH "ERR The `numfields` parameter must match the number of arguments"
#define ERR_NUMFIELDS_POSITIVE "ERR Number of fields must be a positive integer"

enum { HFE_NX = 1, HFE_XX = 2, HFE_GT = 4, HFE_LT = 8 };
/* Per-field replies of the HEXPIRE family. */
enum { HFE_NO_FIELD = -2, HFE_NOT_MET = 0, HFE_SET = 1, HFE_DELETED = 2 };

/* An expire argument as absolute unix ms: seconds (unitMs 1000) or ms,
 * plus basetime (now, or 0 for the *AT forms).  Redis's checks and texts:
 * negative, then past the 2^46 ms ceiling.  -1 after replying. */
static int parseFieldExpireOrReply(Client *c, const sds arg, long long unitMs, long long basetime, long long *out) {
    long long v;
    if (getLongLongOrReply(c, arg, &v, NULL) == -1) return -1;
    if (v < 0) {
        replyError(c, "ERR invalid expire time, must be >= 0");
        return -1;
    }
    if ((unitMs == 1000 && v > HFE_MAX_MS / 1000) || v * unitMs > HFE_MAX_MS - basetime) {
        replyErrorFormat(c, "ERR invalid expire time in '%s' command", c->cmd->name);
        return -1;
    }
    *out = v * unitMs + basetime;
    return 0;
}

/* FIELDS numfields at argv[at-1], argv[at] (fields follow to the end):
 * the count, or -1 after replying (notPositive: the command's text for a
 * count below 1). */
static long parseFieldsOrReply(Client *c, int at, const char *notPositive) {
    if (at >= c->argc || !argIs(c->argv[at - 1], "fields")) {
        if (at >= c->argc && at - 1 < c->argc && argIs(c->argv[at - 1], "fields")) replyErrorArity(c);
        else replyError(c, ERR_FIELDS_MISSING);
        return -1;
    }
    long n;
    if (getRangeLongOrReply(c, c->argv[at], 1, LONG_MAX, &n, notPositive) == -1) return -1;
    if (n != c->argc - at - 1) {
        replyError(c, ERR_NUMFIELDS_MATCH);
        return -1;
    }
    return n;
}

/* Sets (or deletes, for a time already past) the expire of one field:
 * HFE_NO_FIELD / HFE_NOT_MET / HFE_SET / HFE_DELETED.  As in Redis 8, a
 * field expired but not yet deleted is still there for these commands: its
 * old expire is what NX/XX/GT/LT compare with, and a new expire in the
 * future revives it.  A deletion is an HDEL effect and counts as an
 * expired field (INFO expired_subkeys), as in Redis.  (*lazy is kept for
 * the callers; nothing is expired lazily here.) */
/* Whether the NX / XX / GT / LT condition lets expire `when` replace
 * `prev` (0: none, an infinite TTL). */
static int expireCondMet(int cond, long long prev, long long when) {
    if ((cond & HFE_NX) && prev) return 0;
    if ((cond & HFE_XX) && !prev) return 0;
    if ((cond & HFE_GT) && (!prev || when <= prev)) return 0;
    if ((cond & HFE_LT) && prev && when >= prev) return 0;
    return 1;
}

/* hashFieldExpire on a TTL hashtable: one lookup per field (HEXPIRE on a
 * million fields). */
static int htFieldExpire(HashWrite *w, const sds f, long long when, int cond, long *lazy) {
    (void)lazy;
    HashTtlTable *t = kvPtr(w->o);
    size_t flen = sdsLen(f);
    HashField *e = htabFind(&t->h, f, flen);
    if (!e) return HFE_NO_FIELD;
    long long prev = hfExpire(e);
    if (!expireCondMet(cond, prev, when)) return HFE_NOT_MET;
    if (when > dbNowMs || dbNoLazyExpire) {
        htSetTtl(t, e, when);
        return HFE_SET;
    }
    effectFieldDeleted(w->db->id, kvKey(w->o), kvKeyLen(w->o), f, flen);
    if (prev) heapRemove(t, e);
    htabUnlink(&t->h, f, flen);
    xfree(e);
    hfeExpiredFields++;
    return HFE_DELETED;
}

static int hashFieldExpire(HashWrite *w, const sds f, long long when, int cond, long *lazy) {
    if (kvEncoding(w->o) == OBJ_ENC_HT && htIsTtl(kvPtr(w->o))) return htFieldExpire(w, f, when, cond, lazy);
    size_t flen = sdsLen(f);
    HashStr v;
    long long prev;
    if (!hashGetTtl(w->o, f, flen, &v, &prev)) return HFE_NO_FIELD;
    if (!expireCondMet(cond, prev, when)) return HFE_NOT_MET;
    if (when <= dbNowMs && !dbNoLazyExpire) {
        effectFieldDeleted(w->db->id, kvKey(w->o), kvKeyLen(w->o), f, flen);
        hashDelete(w, f, flen);
        hfeExpiredFields++;
        return HFE_DELETED;
    }
    hashEnableTtl(w);
    hashSetFieldTtl(w, f, flen, when);
    return HFE_SET;
}

/* Deletes the key when the hash was left empty ("del"); 1 if it did. */
static int hashDeleteIfEmpty(Client *c, HashWrite *w) {
    if (hashLength(w->o) != 0) {
        hashSettle(w);
        return 0;
    }
    dbDelete(c->db, c->argv[1], sdsLen(c->argv[1]));
    notifyKeyspaceEvent(NOTIFY_GENERIC, "del", c->argv[1], sdsLen(c->argv[1]), c->db->id);
    return 1;
}

/* HEXPIRE / HPEXPIRE / HEXPIREAT / HPEXPIREAT key time [NX|XX|GT|LT]
 * FIELDS numfields field ...  Effect: HPEXPIREAT key <ms> [cond] FIELDS
 * with the fields whose expire was set, after an HDEL for each field
 * deleted because the time had passed; nothing more when none was set. */
static void hexpireGeneric(Client *c, long long unitMs, int relative) {
    int wrong;
    kvobj *o = lookupWriteOrReply(c, c->argv[1], OBJ_HASH, &wrong);
    if (wrong) return;
    long long when;
    if (parseFieldExpireOrReply(c, c->argv[2], unitMs, relative ? dbNowMs : 0, &when) == -1) return;
    int cond = 0, at = 4;
    static const char *const names[4] = {"nx", "xx", "gt", "lt"};
    for (int k = 0; k < 4; k++)
        if (argIs(c->argv[3], names[k])) {
            cond = 1 << k;
            at = 5;
        }
    long n = parseFieldsOrReply(c, at, "ERR Parameter `numFields` should be greater than 0");
    if (n < 0) return;
    replyArrayLen(c, n);
    if (!o) {
        for (long i = 0; i < n; i++) replyLongLong(c, HFE_NO_FIELD);
        return;
    }
    HashWrite w = hashWriteBegin(c->db, o);
    long updated = 0, deleted = 0, lazy = 0;
    EffectArg *eff = xmalloc(sizeof(EffectArg) * (size_t)(n + 6));
    int ne = 0;
    eff[ne++] = EA_STR("HPEXPIREAT");
    eff[ne++] = EA_SDS(c->argv[1]);
    eff[ne++] = EA_NUM(when);
    if (cond) eff[ne++] = EA_SDS(c->argv[3]);
    eff[ne++] = EA_STR("FIELDS");
    int countAt = ne++;
    for (int j = at + 1; j < c->argc; j++) {
        /* On a big TTL table the lookups are cache misses: start those of
         * the fields a few ahead (slot 8 ahead, entry 4 ahead). */
        if (n >= 64 && kvEncoding(w.o) == OBJ_ENC_HT && htIsTtl(kvPtr(w.o))) {
            Htab *ht = kvPtr(w.o);
            if (j + 8 < c->argc) htabPrefetch(ht, c->argv[j + 8], sdsLen(c->argv[j + 8]), 0);
            if (j + 4 < c->argc) htabPrefetch(ht, c->argv[j + 4], sdsLen(c->argv[j + 4]), 1);
        }
        int r = hashFieldExpire(&w, c->argv[j], when, cond, &lazy);
        replyLongLong(c, r);
        if (r == HFE_SET) {
            updated++;
            eff[ne++] = EA_SDS(c->argv[j]);
        }
        deleted += r == HFE_DELETED;
    }
    eff[countAt] = EA_NUM(updated);
    if (updated) effectsRewrite(ne, eff);
    else effectsPrevent();
    xfree(eff);
    if (lazy) notifyKeyspaceEvent(NOTIFY_HASH, "hexpired", c->argv[1], sdsLen(c->argv[1]), c->db->id);
    if (updated + deleted) {
        notifyKeyspaceEvent(NOTIFY_HASH, deleted ? "hdel" : "hexpire", c->argv[1], sdsLen(c->argv[1]), c->db->id);
        serverIncrDirty(updated + deleted);
    }
    hashDeleteIfEmpty(c, &w);
    if (updated + deleted + lazy) signalModifiedKey(c, c->db, c->argv[1], sdsLen(c->argv[1]));
}

/* EXPIREMEMBER / EXPIREMEMBERAT / PEXPIREMEMBERAT on a hash (hash.h):
 * HEXPIRE's mechanism for one field, with the member-TTL commands' reply.
 * Effect HPEXPIREAT key <ms> FIELDS 1 field (an HDEL when already past). */
void hashExpireMember(Client *c, kvobj *o, const sds f, long long when) {
    if (when > HFE_MAX_MS) {
        replyErrorFormat(c, "ERR invalid expire time in '%s' command", c->cmd->name);
        return;
    }
    HashWrite w = hashWriteBegin(c->db, o);
    long lazy = 0;
    int r = hashFieldExpire(&w, f, when, 0, &lazy);
    replyLongLong(c, r == HFE_SET || r == HFE_DELETED);
    if (r == HFE_SET) {
        EffectArg eff[6] = {EA_STR("HPEXPIREAT"), EA_SDS(c->argv[1]), EA_NUM(when),
                            EA_STR("FIELDS"), EA_NUM(1), EA_SDS(f)};
        effectsRewrite(6, eff);
    } else {
        effectsPrevent();
    }
    if (lazy) notifyKeyspaceEvent(NOTIFY_HASH, "hexpired", c->argv[1], sdsLen(c->argv[1]), c->db->id);
    if (r == HFE_SET || r == HFE_DELETED) {
        notifyKeyspaceEvent(NOTIFY_HASH, r == HFE_DELETED ? "hdel" : "hexpire", c->argv[1], sdsLen(c->argv[1]),
                            c->db->id);
        serverIncrDirty(1);
    }
    hashDeleteIfEmpty(c, &w);
    if (r == HFE_SET || r == HFE_DELETED || lazy) signalModifiedKey(c, c->db, c->argv[1], sdsLen(c->argv[1]));
}

/* TTL / PTTL key field on a hash (hash.h): HTTL / HPTTL of one field. */
void hashMemberTtlReply(Client *c, kvobj *o, const sds f, int ms) {
    HashStr v;
    long long when;
    if (!hashGetTtl(o, f, sdsLen(f), &v, &when) || fieldExpired(when)) {
        replyLongLong(c, -2);
        return;
    }
    if (!when) {
        replyLongLong(c, -1);
        return;
    }
    long long t = when - dbNowMs;
    replyLongLong(c, ms ? t : (t + 999) / 1000);
}

static void hexpireCommand(Client *c) { hexpireGeneric(c, 1000, 1); }
static void hpexpireCommand(Client *c) { hexpireGeneric(c, 1, 1); }
static void hexpireatCommand(Client *c) { hexpireGeneric(c, 1000, 0); }
static void hpexpireatCommand(Client *c) { hexpireGeneric(c, 1, 0); }

/* HTTL / HPTTL / HEXPIRETIME / HPEXPIRETIME key FIELDS numfields field ...:
 * per field -2 (absent or expired), -1 (no expire), else the TTL or the
 * absolute time, in seconds (rounded up) or ms. */
static void httlGeneric(Client *c, int ms, int absolute) {
    int wrong;
    kvobj *o = lookupReadOrReply(c, c->argv[1], OBJ_HASH, &wrong);
    if (wrong) return;
    long n = parseFieldsOrReply(c, 3, ERR_NUMFIELDS_POSITIVE);
    if (n < 0) return;
    replyArrayLen(c, n);
    for (int j = 4; j < c->argc; j++) {
        HashStr v;
        long long when;
        if (!o || !hashGetTtl(o, c->argv[j], sdsLen(c->argv[j]), &v, &when) || fieldExpired(when)) {
            replyLongLong(c, -2);
            continue;
        }
        if (!when) {
            replyLongLong(c, -1);
            continue;
        }
        long long t = absolute ? when : when - dbNowMs;
        replyLongLong(c, ms ? t : (t + 999) / 1000);
    }
}

static void httlCommand(Client *c) { httlGeneric(c, 0, 0); }
static void hpttlCommand(Client *c) { httlGeneric(c, 1, 0); }
static void hexpiretimeCommand(Client *c) { httlGeneric(c, 0, 1); }
static void hpexpiretimeCommand(Client *c) { httlGeneric(c, 1, 1); }

/* HPERSIST key FIELDS numfields field ...: per field -2 (absent or
 * expired), -1 (no expire), 1 (expire removed).  Propagates as sent. */
static void hpersistCommand(Client *c) {
    int wrong;
    kvobj *o = lookupWriteOrReply(c, c->argv[1], OBJ_HASH, &wrong);
    if (wrong) return;
    long n = parseFieldsOrReply(c, 3, ERR_NUMFIELDS_POSITIVE);
    if (n < 0) return;
    replyArrayLen(c, n);
    long changed = 0;
    HashWrite w = {c->db, o, 0};
    for (int j = 4; j < c->argc; j++) {
        HashStr v;
        long long when;
        if (!o || !hashGetTtl(o, c->argv[j], sdsLen(c->argv[j]), &v, &when) || fieldExpired(when)) {
            replyLongLong(c, -2);
        } else if (!when) {
            replyLongLong(c, -1);
        } else {
            hashSetFieldTtl(&w, c->argv[j], sdsLen(c->argv[j]), 0);
            replyLongLong(c, 1);
            changed++;
        }
    }
    if (changed) {
        notifyKeyspaceEvent(NOTIFY_HASH, "hpersist", c->argv[1], sdsLen(c->argv[1]), c->db->id);
        signalModifiedKey(c, c->db, c->argv[1], sdsLen(c->argv[1]));
        serverIncrDirty(1);
    }
}

/* HGETEX key [EX s | PX ms | EXAT s | PXAT ms | PERSIST] FIELDS numfields
 * field ...: the values (nil for absent or expired fields), setting or
 * removing the fields' expire.  Effect: HPEXPIREAT key <ms> FIELDS ... or
 * HPERSIST key FIELDS ... when an expire changed; an HDEL per field
 * deleted (expired, or the new time already past). */
static void hgetexCommand(Client *c) {
    int wrong;
    kvobj *o = lookupWriteOrReply(c, c->argv[1], OBJ_HASH, &wrong);
    if (wrong) return;
    enum { OPT_NONE, OPT_TIME, OPT_PERSIST } opt = OPT_NONE;
    long long when = 0;
    int at = 3;
    const sds a = c->argv[2];
    long long unitMs = argIs(a, "ex") || argIs(a, "exat") ? 1000 : 1;
    int rel = argIs(a, "ex") || argIs(a, "px");
    if (rel || argIs(a, "exat") || argIs(a, "pxat")) {
        opt = OPT_TIME;
        if (parseFieldExpireOrReply(c, c->argv[3], unitMs, rel ? dbNowMs : 0, &when) == -1) return;
        at = 5;
    } else if (argIs(a, "persist")) {
        opt = OPT_PERSIST;
        at = 4;
    }
    long n = parseFieldsOrReply(c, at, ERR_NUMFIELDS_POSITIVE);
    if (n < 0) return;
    replyArrayLen(c, n);
    if (!o) {
        for (long i = 0; i < n; i++) replyNull(c);
        return;
    }
    HashWrite w = hashWriteBegin(c->db, o);
    long lazy = 0, updated = 0, deleted = 0;
    for (int j = at + 1; j < c->argc; j++) {
        const sds f = c->argv[j];
        HashStr v;
        long long prev;
        if (hashLazyExpire(&w, f, sdsLen(f))) lazy++;
        if (!hashGetTtl(w.o, f, sdsLen(f), &v, &prev) || fieldExpired(prev)) {
            replyNull(c);
            continue;
        }
        replyBulk(c, v.p, v.len);
        if (opt == OPT_PERSIST && prev) {
            hashSetFieldTtl(&w, f, sdsLen(f), 0);
            updated++;
        } else if (opt == OPT_TIME) {
            long dummy = 0;
            int r = hashFieldExpire(&w, f, when, 0, &dummy);
            updated += r == HFE_SET;
            deleted += r == HFE_DELETED;
        }
    }
    if (lazy) notifyKeyspaceEvent(NOTIFY_HASH, "hexpired", c->argv[1], sdsLen(c->argv[1]), c->db->id);
    if (updated) {
        if (opt == OPT_PERSIST) {
            notifyKeyspaceEvent(NOTIFY_HASH, "hpersist", c->argv[1], sdsLen(c->argv[1]), c->db->id);
            EffectArg *eff = xmalloc(sizeof(EffectArg) * (size_t)(c->argc));
            int ne = 0;
            eff[ne++] = EA_STR("HPERSIST");
            for (int j = 1; j < c->argc; j++)
                if (j != 2) eff[ne++] = EA_SDS(c->argv[j]);
            effectsRewrite(ne, eff);
            xfree(eff);
        } else {
            notifyKeyspaceEvent(NOTIFY_HASH, "hexpire", c->argv[1], sdsLen(c->argv[1]), c->db->id);
            EffectArg *eff = xmalloc(sizeof(EffectArg) * (size_t)(c->argc));
            int ne = 0;
            eff[ne++] = EA_STR("HPEXPIREAT");
            eff[ne++] = EA_SDS(c->argv[1]);
            eff[ne++] = EA_NUM(when);
            for (int j = 4; j < c->argc; j++) eff[ne++] = EA_SDS(c->argv[j]);
            effectsRewrite(ne, eff);
            xfree(eff);
        }
    } else {
        if (deleted) notifyKeyspaceEvent(NOTIFY_HASH, "hdel", c->argv[1], sdsLen(c->argv[1]), c->db->id);
        effectsPrevent();
    }
    serverIncrDirty(updated + deleted);
    hashDeleteIfEmpty(c, &w);
    if (updated + deleted + lazy) signalModifiedKey(c, c->db, c->argv[1], sdsLen(c->argv[1]));
}

/* HGETDEL key FIELDS numfields field ...: the values (nil for absent or
 * expired fields), deleting the fields.  Effect: HDEL key field ... */
static void hgetdelCommand(Client *c) {
    int wrong;
    kvobj *o = lookupWriteOrReply(c, c->argv[1], OBJ_HASH, &wrong);
    if (wrong) return;
    long n = parseFieldsOrReply(c, 3, ERR_NUMFIELDS_POSITIVE);
    if (n < 0) return;
    replyArrayLen(c, n);
    if (!o) {
        for (long i = 0; i < n; i++) replyNull(c);
        return;
    }
    HashWrite w = hashWriteBegin(c->db, o);
    long lazy = 0, deleted = 0;
    for (int j = 4; j < c->argc; j++) {
        const sds f = c->argv[j];
        HashStr v;
        if (hashLazyExpire(&w, f, sdsLen(f))) lazy++;
        if (!hashGet(w.o, f, sdsLen(f), &v)) {
            replyNull(c);
            continue;
        }
        replyBulk(c, v.p, v.len);
        hashDelete(&w, f, sdsLen(f));
        deleted++;
    }
    if (!lazy && !deleted) return;
    if (lazy) notifyKeyspaceEvent(NOTIFY_HASH, "hexpired", c->argv[1], sdsLen(c->argv[1]), c->db->id);
    if (deleted) {
        notifyKeyspaceEvent(NOTIFY_HASH, "hdel", c->argv[1], sdsLen(c->argv[1]), c->db->id);
        serverIncrDirty(deleted);
        EffectArg *eff = xmalloc(sizeof(EffectArg) * (size_t)(c->argc));
        int ne = 0;
        eff[ne++] = EA_STR("HDEL");
        eff[ne++] = EA_SDS(c->argv[1]);
        for (int j = 4; j < c->argc; j++) eff[ne++] = EA_SDS(c->argv[j]);
        effectsRewrite(ne, eff);
        xfree(eff);
    }
    hashDeleteIfEmpty(c, &w);
    signalModifiedKey(c, c->db, c->argv[1], sdsLen(c->argv[1]));
}

/* HSETEX key [FNX|FXX] [EX s|PX ms|EXAT s|PXAT ms|KEEPTTL] FIELDS numfields
 * field value ...: 1 when the fields were set, 0 when FNX / FXX refused.
 * Effect: as sent, a relative time as PXAT <ms>; HDELs instead when the
 * time had already passed. */
static void hsetexCommand(Client *c) {
    enum { F_FNX = 1, F_FXX = 2, F_TIME = 4, F_KEEPTTL = 8, F_PXAT = 16 };
    int flags = 0, timeAt = -1, first = -1;
    long count = 0;
    long long when = 0;
    for (int i = 2; i < c->argc && first < 0; i++) {
        const sds a = c->argv[i];
        if (argIs(a, "fields")) {
            if (i >= c->argc - 3) {
                replyErrorArity(c);
                return;
            }
            if (getRangeLongOrReply(c, c->argv[i + 1], 1, INT_MAX, &count, "ERR invalid number of fields") == -1)
                return;
            long remaining = c->argc - i - 2;
            if (remaining % 2 != 0 || count != remaining / 2) {
                replyErrorArity(c);
                return;
            }
            first = i + 2;
        } else if (argIs(a, "ex") || argIs(a, "px") || argIs(a, "exat") || argIs(a, "pxat")) {
            if (flags & (F_TIME | F_KEEPTTL)) {
                replyError(c, "ERR Only one of EX, PX, EXAT, PXAT or KEEPTTL arguments can be specified");
                return;
            }
            if (i >= c->argc - 1) {
                replyError(c, "ERR missing expire time");
                return;
            }
            int secs = argIs(a, "ex") || argIs(a, "exat"), rel = argIs(a, "ex") || argIs(a, "px");
            flags |= F_TIME | (argIs(a, "pxat") ? F_PXAT : 0);
            i++;
            if (parseFieldExpireOrReply(c, c->argv[i], secs ? 1000 : 1, rel ? dbNowMs : 0, &when) == -1) return;
            timeAt = i;
        } else if (argIs(a, "keepttl")) {
            if (flags & (F_TIME | F_KEEPTTL)) {
                replyError(c, "ERR Only one of EX, PX, EXAT, PXAT or KEEPTTL arguments can be specified");
                return;
            }
            flags |= F_KEEPTTL;
        } else if (argIs(a, "fxx") || argIs(a, "fnx")) {
            if (flags & (F_FNX | F_FXX)) {
                replyError(c, "ERR Only one of FXX or FNX arguments can be specified");
                return;
            }
            flags |= argIs(a, "fxx") ? F_FXX : F_FNX;
        } else {
            replyErrorFormat(c, "ERR unknown argument: %s", a);
            return;
        }
    }
    if (first < 0) {
        replyErrorArity(c);
        return;
    }
    int wrong;
    kvobj *o = lookupWriteOrReply(c, c->argv[1], OBJ_HASH, &wrong);
    if (wrong) return;
    if (!o && (flags & F_FXX)) {
        replyLongLong(c, 0);
        return;
    }
    if (!o) o = hashCreate(c->db, c->argv[1], listpackBytesFor(c->argv, first, c->argc - 1));
    HashWrite w = hashWriteBegin(c->db, o);
    long lazy = 0, deleted = 0, updated = 0;
    if (flags & (F_FNX | F_FXX)) {
        long found = 0;
        for (int j = first; j < c->argc; j += 2) lazy += hashLazyExpire(&w, c->argv[j], sdsLen(c->argv[j]));
        for (int j = first; j < c->argc; j += 2) {
            HashStr v;
            found += hashGet(w.o, c->argv[j], sdsLen(c->argv[j]), &v);
        }
        if (((flags & F_FNX) && found) || ((flags & F_FXX) && found != count)) {
            replyLongLong(c, 0);
            hashAfterLazy(c, &w, lazy, 1);
            if (!lazy && hashLength(w.o) == 0) dbDelete(c->db, c->argv[1], sdsLen(c->argv[1]));
            return;
        }
    }
    hashTryConversion(&w, c->argv, first, c->argc - 1);
    for (int j = first; j < c->argc; j += 2) {
        const sds f = c->argv[j];
        /* With a new time the old one goes first: a stale expire must not
         * make the field look expired before its new one is set. */
        hashSetKeep(&w, f, sdsLen(f), c->argv[j + 1], sdsLen(c->argv[j + 1]), (flags & F_KEEPTTL) != 0);
        if (flags & F_TIME) {
            long dummy = 0;
            int r = hashFieldExpire(&w, f, when, 0, &dummy);
            updated += r == HFE_SET;
            deleted += r == HFE_DELETED;
        }
    }
    serverIncrDirty(count);
    if (deleted) {
        effectsPrevent();
    } else if ((flags & F_TIME) && !(flags & F_PXAT)) {
        int pos[2] = {timeAt - 1, timeAt};
        EffectArg args[2] = {EA_STR("PXAT"), EA_NUM(when)};
        effectsRewriteSent(c, c->argc, 2, pos, args);
    }
    replyLongLong(c, 1);
    if (lazy) notifyKeyspaceEvent(NOTIFY_HASH, "hexpired", c->argv[1], sdsLen(c->argv[1]), c->db->id);
    notifyKeyspaceEvent(NOTIFY_HASH, "hset", c->argv[1], sdsLen(c->argv[1]), c->db->id);
    if (deleted || updated)
        notifyKeyspaceEvent(NOTIFY_HASH, deleted ? "hdel" : "hexpire", c->argv[1], sdsLen(c->argv[1]), c->db->id);
    hashDeleteIfEmpty(c, &w);
    signalModifiedKey(c, c->db, c->argv[1], sdsLen(c->argv[1]));
}

/* --- command handlers (metadata: src/core/command_data.c) --- */

Command hashCommands[] = {
    {.name = "hset", .proc = hsetCommand},
    {.name = "hsetnx", .proc = hsetnxCommand},
    {.name = "hmset", .proc = hmsetCommand},
    {.name = "hget", .proc = hgetCommand},
    {.name = "hmget", .proc = hmgetCommand},
    {.name = "hdel", .proc = hdelCommand},
    {.name = "hlen", .proc = hlenCommand},
    {.name = "hstrlen", .proc = hstrlenCommand},
    {.name = "hexists", .proc = hexistsCommand},
    {.name = "hincrby", .proc = hincrbyCommand},
    {.name = "hincrbyfloat", .proc = hincrbyfloatCommand},
    {.name = "hkeys", .proc = hkeysCommand},
    {.name = "hvals", .proc = hvalsCommand},
    {.name = "hgetall", .proc = hgetallCommand},
    {.name = "hscan", .proc = hscanCommand},
    {.name = "hrandfield", .proc = hrandfieldCommand},
    {.name = "hexpire", .proc = hexpireCommand},
    {.name = "hpexpire", .proc = hpexpireCommand},
    {.name = "hexpireat", .proc = hexpireatCommand},
    {.name = "hpexpireat", .proc = hpexpireatCommand},
    {.name = "httl", .proc = httlCommand},
    {.name = "hpttl", .proc = hpttlCommand},
    {.name = "hexpiretime", .proc = hexpiretimeCommand},
    {.name = "hpexpiretime", .proc = hpexpiretimeCommand},
    {.name = "hpersist", .proc = hpersistCommand},
    {.name = "hgetex", .proc = hgetexCommand},
    {.name = "hsetex", .proc = hsetexCommand},
    {.name = "hgetdel", .proc = hgetdelCommand},
    {0},
};

/* ------------------------------------------------------------------------ */
/* Values built and read outside the keyspace (RDB, DUMP/RESTORE)            */
/* ------------------------------------------------------------------------ */

/* These see expired fields not yet deleted too: a count and a walk must
 * agree whatever the clock does in between (a save thread). */
unsigned long hashValueLength(const kvobj *o) { return hashLength(o); }

void hashValueForEach(const kvobj *o, HashVisit *fn, void *priv) {
    HashIter hi;
    hashIterInit(&hi, kvPtr(o), kvEncoding(o));
    while (hashIterNext(&hi)) fn(priv, hi.f.p, hi.f.len, hi.v.p, hi.v.len);
    hashIterRelease(&hi);
}

void hashValueForEachTtl(const kvobj *o, HashTtlVisit *fn, void *priv) {
    if (!hashHasTtl(o)) return;
    HashIter hi;
    hashIterInit(&hi, kvPtr(o), kvEncoding(o));
    while (hashIterNext(&hi))
        if (hi.ttl) fn(priv, hi.f.p, hi.f.len, hi.ttl);
    hashIterRelease(&hi);
}

void hashValueForEachWithTtl(const kvobj *o, HashFieldVisit *fn, void *priv) {
    HashIter hi;
    hashIterInit(&hi, kvPtr(o), kvEncoding(o));
    while (hashIterNext(&hi)) fn(priv, hi.f.p, hi.f.len, hi.v.p, hi.v.len, hi.ttl);
    hashIterRelease(&hi);
}

void hashIndexKey(int dbid, const char *key, size_t len) { hfeIndexAdd(dbid, key, len); }

static int hashLoadAddTtlAt(int *enc, void **ptr, const void *f, size_t flen, const void *v, size_t vlen, long long when,
                            int ordered);

int hashLoadAddTtl(int *enc, void **ptr, const void *f, size_t flen, const void *v, size_t vlen, long long when) {
    return hashLoadAddTtlAt(enc, ptr, f, flen, v, vlen, when, 1);
}

int hashLoadAddTtlKeepOrder(int *enc, void **ptr, const void *f, size_t flen, const void *v, size_t vlen,
                            long long when) {
    return hashLoadAddTtlAt(enc, ptr, f, flen, v, vlen, when, 0);
}

static int hashLoadAddTtlAt(int *enc, void **ptr, const void *f, size_t flen, const void *v, size_t vlen, long long when,
                            int ordered) {
    hfeEverTtl = 1;
    if (*enc == OBJ_ENC_LISTPACK) {
        unsigned char *lp = *ptr, *ex = lpNew(lpBytes(lp) + lpLength(lp) + 8);
        HashIter hi;
        hashIterInit(&hi, lp, OBJ_ENC_LISTPACK);
        while (hashIterNext(&hi)) {
            LpItem items[3] = {{hi.f.p, hi.f.len, 0}, {hi.v.p, hi.v.len, 0}, {NULL, 0, 0}};
            ex = lpAppendItems(ex, items, 3);
        }
        hashIterRelease(&hi);
        lpFree(lp);
        *ptr = ex;
        *enc = OBJ_ENC_LISTPACK_EX;
    } else if (*enc == OBJ_ENC_HT && !htIsTtl(*ptr)) {
        *ptr = htTtlFromTable(*ptr);
    }
    if (*enc == OBJ_ENC_LISTPACK_EX) {
        unsigned char *lp = *ptr;
        size_t maxv = (size_t)hashMaxListpackValue;
        if (lpexFind(lp, f, flen)) return 0;
        if (flen > maxv || vlen > maxv || !lpSafeToAdd(lp, flen + vlen) ||
            lpLength(lp) / 3 + 1 > (unsigned long)server.cfg.hashMaxListpackEntries) {
            *ptr = hashTableFromListpackEx(lp);
            lpFree(lp);
            *enc = OBJ_ENC_HT;
        } else {
            if (ordered) {
                *ptr = lpexInsertOrdered(lp, f, flen, v, vlen, when);
            } else {
                LpItem items[3] = {{f, flen, 0}, {v, vlen, 0}, {NULL, 0, when}};
                *ptr = lpAppendItems(lp, items, 3);
            }
            return 1;
        }
    }
    HashTtlTable *t = *ptr;
    if (htabFind(&t->h, f, flen)) return 0;
    HashField *e = hfCreateTail(f, flen, v, vlen, HF_TAIL);
    htabAdd(&t->h, e);
    if (when) htSetTtl(t, e, when);
    return 1;
}

int hashValueTtlLayout(const kvobj *o) { return hashHasTtl(o); }

int hashValueHasTtl(const kvobj *o) {
    if (!hashHasTtl(o)) return 0;
    if (kvEncoding(o) == OBJ_ENC_HT) return ((HashTtlTable *)kvPtr(o))->n != 0;
    HashIter hi;
    int any = 0;
    hashIterInit(&hi, kvPtr(o), OBJ_ENC_LISTPACK_EX);
    while (!any && hashIterNext(&hi)) any = hi.ttl != 0;
    hashIterRelease(&hi);
    return any;
}

int hashAnyFieldTtl(void) { return hfeIndexTotal != 0; }

void hashLoadBegin(size_t hint, int *enc, void **ptr) {
    if (hint > (size_t)server.cfg.hashMaxListpackEntries) {
        Htab *h = htabCreate(&hashFieldType);
        htabExpand(h, hint);
        *enc = OBJ_ENC_HT;
        *ptr = h;
    } else {
        *enc = OBJ_ENC_LISTPACK;
        *ptr = lpNew(0);
    }
}

/* The listpack of a hash being loaded becomes a hashtable. */
static void hashLoadConvert(int *enc, void **ptr) {
    unsigned char *lp = *ptr;
    Htab *h = hashTableFromListpack(lp);
    lpFree(lp);
    *enc = OBJ_ENC_HT;
    *ptr = h;
}

int hashLoadAdd(int *enc, void **ptr, const void *f, size_t flen, const void *v, size_t vlen) {
    if (*enc == OBJ_ENC_LISTPACK) {
        size_t maxv = (size_t)hashMaxListpackValue;
        if (flen > maxv || vlen > maxv || !lpSafeToAdd(*ptr, flen + vlen)) {
            hashLoadConvert(enc, ptr);
        } else {
            unsigned char *lp = *ptr;
            if (lpFindValue(lp, f, flen)) return 0;
            lp = lpAppend(lp, f, flen);
            lp = lpAppend(lp, v, vlen);
            *ptr = lp;
            if (lpLength(lp) / 2 > (unsigned long)server.cfg.hashMaxListpackEntries) hashLoadConvert(enc, ptr);
            return 1;
        }
    }
    if (htabFind(*ptr, f, flen)) return 0;
    htabAdd(*ptr, hfCreate(f, flen, v, vlen));
    return 1;
}

void hashLoadFree(int enc, void *ptr) { hashValueFree(ptr, enc); }

int hashLoadListpack(unsigned char *lp, int *enc, void **ptr) {
    unsigned long n = lpLength(lp);
    if (n == 0 || n % 2 || n / 2 > (unsigned long)server.cfg.hashMaxListpackEntries) return 0;
    size_t maxv = (size_t)hashMaxListpackValue;
    LpDupSet dups;
    lpDupInit(&dups, n / 2);
    int ok = 1;
    unsigned long i = 0;
    for (unsigned char *p = lpFirst(lp); p && ok; p = lpNext(lp, p), i++) {
        unsigned char buf[LP_INTBUF_SIZE];
        unsigned int len;
        unsigned char *v = lpGetValue(p, &len, buf, NULL, NULL);
        /* Values not longer than the limit; fields also distinct. */
        ok = len <= maxv && ((i & 1) || !lpDupAdd(&dups, lp, p, v, len));
    }
    lpDupFree(&dups);
    if (!ok) return 0;
    *enc = OBJ_ENC_LISTPACK;
    *ptr = lp;
    return 1;
}

/* ------------------------------------------------------------------------ */
/* Configuration                                                             */
/* ------------------------------------------------------------------------ */

static ConfigDef hashConfig[] = {
    CONFIG_LL("hash-max-listpack-entries", "hash-max-ziplist-entries", 0, server.cfg.hashMaxListpackEntries, 0,
              LONG_MAX, "512", .rank = CONFIG_RANK_ENCODINGS + 0),
    CONFIG_LL("hash-max-listpack-value", "hash-max-ziplist-value", CF_MEMORY, hashMaxListpackValue, 0, LONG_MAX, "64",
              .rank = CONFIG_RANK_ENCODINGS + 1),
};

void hashRegisterConfig(void) { configRegister(hashConfig, CONFIG_COUNT_OF(hashConfig)); }
