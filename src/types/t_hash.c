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
#include "core/server.h"
#include "db/db.h"
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

typedef struct HashField {
    struct HashField *next; /* Htab chain link; must stay first */
    unsigned char data[];   /* varint flen, varint vlen, field, value */
} HashField;

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

/* Field bytes of an entry; sets the lengths.  The value follows the field. */
static const unsigned char *hfField(const HashField *e, size_t *flen, size_t *vlen) {
    const unsigned char *p = varintGet(e->data, flen);
    return varintGet(p, vlen);
}

static size_t hfAllocSize(size_t flen, size_t vlen) {
    return sizeof(HashField) + varintSize(flen) + varintSize(vlen) + flen + vlen;
}

/* Writes the lengths, field and value into an entry of hfAllocSize bytes. */
static void hfFill(HashField *e, const void *f, size_t flen, const void *v, size_t vlen) {
    unsigned char *p = varintPut(varintPut(e->data, flen), vlen);
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

static unsigned long hashLength(const kvobj *o) {
    if (kvEncoding(o) == OBJ_ENC_LISTPACK) return lpLength(kvPtr(o)) / 2;
    return htabSize(kvPtr(o));
}

/* The listpack element holding field's VALUE, or NULL. */
static unsigned char *lpFindValue(unsigned char *lp, const void *f, size_t flen) {
    unsigned char *p = lpFirst(lp);
    if (!p) return NULL;
    p = lpFind(lp, p, f, flen, 1);
    return p ? lpNext(lp, p) : NULL;
}

/* Looks a field up; returns 1 and fills *v when present.  v stays valid
 * until the hash changes. */
static int hashGet(kvobj *o, const void *f, size_t flen, HashStr *v) {
    if (kvEncoding(o) == OBJ_ENC_LISTPACK) {
        unsigned char *vp = lpFindValue(kvPtr(o), f, flen);
        if (!vp) return 0;
        lpStr(vp, v);
        return 1;
    }
    HashField *e = htabFind(kvPtr(o), f, flen);
    if (!e) return 0;
    size_t fl;
    const unsigned char *fp = hfField(e, &fl, &v->len);
    v->p = fp + fl;
    return 1;
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
    HashStr f, v;          /* current field and value */
} HashIter;

static void hashIterInit(HashIter *hi, void *ptr, int enc) {
    hi->enc = enc;
    if (enc == OBJ_ENC_LISTPACK) {
        hi->lp = ptr;
        hi->p = lpFirst(ptr);
    } else {
        htabIterInit(&hi->it, ptr);
    }
}

static int hashIterNext(HashIter *hi) {
    if (hi->enc == OBJ_ENC_LISTPACK) {
        if (!hi->p) return 0;
        lpStr(hi->p, &hi->f);
        unsigned char *vp = lpNext(hi->lp, hi->p);
        lpStr(vp, &hi->v);
        hi->p = lpNext(hi->lp, vp);
        return 1;
    }
    HashField *e = htabIterNext(&hi->it);
    if (!e) return 0;
    hi->f.p = hfField(e, &hi->f.len, &hi->v.len);
    hi->v.p = hi->f.p + hi->f.len;
    return 1;
}

static void hashIterRelease(HashIter *hi) {
    if (hi->enc != OBJ_ENC_LISTPACK) htabIterRelease(&hi->it);
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

/* Converts a listpack-encoded hash to a hashtable. */
static void hashConvert(HashWrite *w) {
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
    if (kvEncoding(w->o) != OBJ_ENC_LISTPACK) return;
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

/* Stores field = value.  Returns 1 when the field is new, 0 when updated.
 * Converts the encoding as described at the top of the file. */
static int hashSet(HashWrite *w, const void *f, size_t flen, const void *v, size_t vlen) {
    if (kvEncoding(w->o) == OBJ_ENC_LISTPACK) {
        size_t max = (size_t)hashMaxListpackValue;
        if (flen > max || vlen > max || !lpSafeToAdd(kvPtr(w->o), flen + vlen)) hashConvert(w);
    }
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
    /* Same key, new value: rebuild the entry in place (realloc keeps next). */
    HashField *e = *link;
    size_t oldF, oldV;
    const unsigned char *fp = hfField(e, &oldF, &oldV);
    size_t hdr = (size_t)(fp - e->data);
    size_t newHdr = varintSize(flen) + varintSize(vlen);
    size_t need = hfAllocSize(flen, vlen);
    if (need > sizeof(HashField) + hdr + oldF + oldV) e = xrealloc(e, need);
    if (newHdr != hdr) memmove(e->data + newHdr, e->data + hdr, flen);
    varintPut(varintPut(e->data, flen), vlen);
    memcpy(e->data + newHdr + flen, v, vlen);
    if (need < sizeof(HashField) + hdr + oldF + oldV) e = xrealloc(e, need);
    *link = e;
    return 0;
}

/* Removes a field; returns 1 if it existed. */
static int hashDelete(HashWrite *w, const void *f, size_t flen) {
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
    xfree(e);
    htabShrinkIfNeeded(h);
    return 1;
}

/* ------------------------------------------------------------------------ */
/* Value hooks (free, dup, size)                                              */
/* ------------------------------------------------------------------------ */

static void hashValueFree(void *ptr, int encoding) {
    if (encoding == OBJ_ENC_LISTPACK) lpFree(ptr);
    else htabRelease(ptr, hfFree, NULL);
}

static void *hashValueDup(const void *ptr, int encoding) {
    if (encoding == OBJ_ENC_LISTPACK) {
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
    if (encoding == OBJ_ENC_LISTPACK) return lpBytes((unsigned char *)ptr);
    Htab *h = (Htab *)ptr;
    size_t total = sizeof(Htab) + htabBuckets(h) * sizeof(void *), sampled = 0, n = 0;
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

/* HSET key field value [field value ...] and HMSET (replies OK). */
static void hsetGeneric(Client *c, int replyCount) {
    if (c->argc % 2 == 1) {
        replyErrorFormat(c, "ERR wrong number of arguments for '%s' command", c->cmd->name);
        return;
    }
    kvobj *o = hashLookupWriteOrCreateSized(c, c->argv[1], listpackBytesFor(c->argv, 2, c->argc - 1));
    if (!o) return;
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

/* HSETNX key field value */
static void hsetnxCommand(Client *c) {
    kvobj *o = hashLookupWriteOrCreate(c, c->argv[1]);
    if (!o) return;
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
    if (o) replyField(c, o, c->argv[2]);
}

/* HMGET key field [field ...]: a missing key answers nulls. */
static void hmgetCommand(Client *c) {
    int wrong;
    kvobj *o = lookupReadOrReply(c, c->argv[1], OBJ_HASH, &wrong);
    if (wrong) return;
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
    if (!o) return;
    HashStr v;
    replyLongLong(c, hashGet(o, c->argv[2], sdsLen(c->argv[2]), &v) ? (long long)v.len : 0);
}

/* HEXISTS key field */
static void hexistsCommand(Client *c) {
    kvobj *o = hashLookupRead(c, replyZero);
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
    hashSet(&w, c->argv[2], sdsLen(c->argv[2]), buf, (size_t)len);
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
    hashSet(&w, c->argv[2], sdsLen(c->argv[2]), buf, (size_t)len);
    hashSettle(&w);
    signalHashWrite(c, "hincrbyfloat", c->argv[1], 1);
    static const int pos[2] = {0, 3};
    EffectArg args[2] = {EA_STR("HSET"), EA_BUF(buf, (size_t)len)};
    effectsRewriteSent(c, 4, 2, pos, args);
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
    long n = o ? (long)hashLength(o) : 0;
    if (what == (WANT_KEYS | WANT_VALS)) replyMapLen(c, n);
    else replyArrayLen(c, n);
    if (!o) return;
    HashIter hi;
    hashIterInit(&hi, kvPtr(o), kvEncoding(o));
    while (hashIterNext(&hi)) replyPair(c, &hi.f, &hi.v, what);
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
    if (kvEncoding(o) == OBJ_ENC_LISTPACK) {
        replyBulk(c, "0", 1);
        void *lenNode = replyDeferredLen(c);
        long n = 0;
        HashIter hi;
        hashIterInit(&hi, kvPtr(o), OBJ_ENC_LISTPACK);
        while (hashIterNext(&hi)) {
            if (!fieldMatches(pat, &hi.f)) continue;
            replyPair(c, &hi.f, &hi.v, WANT_KEYS | WANT_VALS);
            n += 2;
        }
        hashIterRelease(&hi);
        replySetDeferredArrayLen(c, lenNode, n);
        return;
    }
    ScanBatch b = {0};
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

/* All field elements of a listpack (count = its field count). */
static unsigned char **lpFieldArray(unsigned char *lp, unsigned long count) {
    unsigned char **arr = xmalloc(sizeof(*arr) * (count ? count : 1));
    unsigned char *p = lpFirst(lp);
    for (unsigned long i = 0; i < count; i++) {
        arr[i] = p;
        p = lpNext(lp, lpNext(lp, p));
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
    if (kvEncoding(o) == OBJ_ENC_LISTPACK) {
        unsigned char *lp = kvPtr(o);
        unsigned long size = hashLength(o);
        unsigned char **arr = lpFieldArray(lp, size);
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
    if (kvEncoding(o) == OBJ_ENC_LISTPACK) {
        unsigned char *lp = kvPtr(o);
        unsigned long size = hashLength(o);
        unsigned char **arr = lpFieldArray(lp, size);
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

/* HRANDFIELD key [count [WITHVALUES]] */
static void hrandfieldCommand(Client *c) {
    if (c->argc == 2) {
        kvobj *o = hashLookupRead(c, replyNull);
        if (!o) return;
        HashStr f, v;
        if (kvEncoding(o) == OBJ_ENC_LISTPACK) {
            unsigned char *lp = kvPtr(o);
            lpPairAt(lp, lpSeek(lp, (long)randBounded(hashLength(o)) * 2), &f, &v);
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
    {0},
};

/* ------------------------------------------------------------------------ */
/* Values built and read outside the keyspace (RDB, DUMP/RESTORE)            */
/* ------------------------------------------------------------------------ */

unsigned long hashValueLength(const kvobj *o) { return hashLength(o); }

void hashValueForEach(const kvobj *o, HashVisit *fn, void *priv) {
    HashIter hi;
    hashIterInit(&hi, kvPtr(o), kvEncoding(o));
    while (hashIterNext(&hi)) fn(priv, hi.f.p, hi.f.len, hi.v.p, hi.v.len);
    hashIterRelease(&hi);
}

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
