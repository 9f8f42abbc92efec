/* stream.c -- stream entries in listpack nodes, groups and PELs; see
 * stream.h for the node format.  Functions trust the listpacks they walk:
 * the RDB loader validates a node (streamValidateNode) before it is
 * inserted. */
#include "ds/stream.h"

#include <liblzf/lzf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ds/alloc.h"
#include "ds/lzfdec.h"
#include "ds/util.h"

/* ------------------------------------------------------------------------ */
/* IDs                                                                        */
/* ------------------------------------------------------------------------ */

static void putBE64(unsigned char *p, uint64_t v) {
    for (int i = 7; i >= 0; i--) {
        p[i] = (unsigned char)v;
        v >>= 8;
    }
}

static uint64_t getBE64(const unsigned char *p) {
    uint64_t v = 0;
    for (int i = 0; i < 8; i++) v = v << 8 | p[i];
    return v;
}

void streamEncodeID(unsigned char *buf, const StreamID *id) {
    putBE64(buf, id->ms);
    putBE64(buf + 8, id->seq);
}

void streamDecodeID(const unsigned char *buf, StreamID *id) {
    id->ms = getBE64(buf);
    id->seq = getBE64(buf + 8);
}

int streamCompareID(const StreamID *a, const StreamID *b) {
    if (a->ms != b->ms) return a->ms < b->ms ? -1 : 1;
    if (a->seq != b->seq) return a->seq < b->seq ? -1 : 1;
    return 0;
}

int streamIncrID(StreamID *id) {
    if (id->seq == UINT64_MAX) {
        if (id->ms == UINT64_MAX) return -1;
        id->ms++;
        id->seq = 0;
    } else {
        id->seq++;
    }
    return 0;
}

int streamDecrID(StreamID *id) {
    if (id->seq == 0) {
        if (id->ms == 0) return -1;
        id->ms--;
        id->seq = UINT64_MAX;
    } else {
        id->seq--;
    }
    return 0;
}

/* ------------------------------------------------------------------------ */
/* Listpack helpers                                                           */
/* ------------------------------------------------------------------------ */

/* The integer at p (nodes store their numbers as listpack integers). */
static int64_t lpInt(unsigned char *p) {
    unsigned int len;
    int isInt;
    long long v = 0;
    unsigned char *s = lpGetValue(p, &len, NULL, &isInt, &v);
    if (!isInt) {
        if (!stringToLongLong((const char *)s, len, &v)) v = 0;
    }
    return v;
}

/* lpNext and lpInt inline for what node entries mostly hold (7-bit
 * integers: flags, ID differences, lp-counts; strings under 64 bytes),
 * the listpack functions otherwise. */
static inline unsigned char *nextFast(unsigned char *lp, unsigned char *p) {
    unsigned char b = p[0];
    unsigned char *q;
    if (b < 0x80) q = p + 2;                         /* value, backlen */
    else if ((b & 0xC0) == 0x80) q = p + (b & 0x3F) + 2; /* header, bytes, backlen */
    else return lpNext(lp, p);
    return *q == 0xFF ? NULL : q;
}

static inline int64_t intFast(unsigned char *p) { return p[0] < 0x80 ? p[0] : lpInt(p); }

/* Replaces the integer at *p with v; returns the (maybe moved) listpack. */
static unsigned char *lpSetInt(unsigned char *lp, unsigned char **p, int64_t v) {
    if (v >= 0 && v < 128 && **p < 128) { /* 7-bit integer in place */
        **p = (unsigned char)v;
        return lp;
    }
    char buf[LP_INTBUF_SIZE];
    int n = longLongToString(buf, sizeof(buf), v);
    return lpReplace(lp, p, (unsigned char *)buf, (size_t)n);
}

static unsigned char *lpAppendInt(unsigned char *lp, int64_t v) { return lpAppendInteger(lp, v); }

/* ------------------------------------------------------------------------ */
/* Create / free                                                              */
/* ------------------------------------------------------------------------ */

Stream *streamCreate(void) {
    Stream *s = xcalloc(sizeof(*s));
    s->nodes = omapCreate();
    return s;
}

static void freeNACK(void *n) { xfree(n); }

static void freeConsumer(void *p) {
    StreamConsumer *c = p;
    omapFree(c->pel, NULL);
    sdsFree(c->name);
    xfree(c);
}

void streamFreeCG(void *p) {
    StreamCG *cg = p;
    omapFree(cg->pel, freeNACK);
    omapFree(cg->consumers, freeConsumer);
    xfree(cg);
}

/* ------------------------------------------------------------------------ */
/* Compressed nodes                                                           */
/* ------------------------------------------------------------------------ */

typedef struct StreamZNode {
    uint32_t rawLen; /* the listpack's bytes */
    uint32_t zLen;   /* LZF bytes in data */
    unsigned char data[];
} StreamZNode;

static int isZ(const void *v) { return ((uintptr_t)v & 1) != 0; }
static StreamZNode *zOf(const void *v) { return (StreamZNode *)((uintptr_t)v & ~(uintptr_t)1); }

static void freeNodeValue(void *v) {
    if (isZ(v)) xfree(zOf(v));
    else lpFree(v);
}

static size_t nodeValueBytes(const void *v) {
    return isZ(v) ? sizeof(StreamZNode) + zOf(v)->zLen : lpBytes((unsigned char *)v);
}

static void zDecompress(const StreamZNode *z, unsigned char *dst) {
    if (lzfDecompress(z->data, z->zLen, dst, z->rawLen) != z->rawLen) {
        fprintf(stderr, "stream: bad compressed node\n");
        abort();
    }
}

/* Keeps node n compressed when that saves an eighth of it. */
static void compressNode(Stream *s, OmapNode *n) {
    unsigned char *lp = omapValue(n);
    if (isZ(lp)) return;
    size_t raw = lpBytes(lp);
    if (raw > STREAM_Z_MAX_RAW || raw < 64) return;
    unsigned char out[STREAM_Z_MAX_RAW];
    unsigned zlen = lzf_compress(lp, (unsigned)raw, out, (unsigned)(raw - raw / 8));
    if (zlen == 0) return;
    StreamZNode *z = xmalloc(sizeof(*z) + zlen);
    z->rawLen = (uint32_t)raw;
    z->zLen = zlen;
    memcpy(z->data, out, zlen);
    omapSetValue(n, (void *)((uintptr_t)z | 1));
    lpFree(lp);
    if (s->zNode == n) s->zNode = NULL;
}

/* Makes node n a plain listpack again (to change it); returns it. */
static unsigned char *materialize(Stream *s, OmapNode *n) {
    void *v = omapValue(n);
    if (!isZ(v)) return v;
    StreamZNode *z = zOf(v);
    unsigned char *lp = xmalloc(z->rawLen);
    zDecompress(z, lp);
    omapSetValue(n, lp);
    xfree(z);
    if (s->zNode == n) s->zNode = NULL;
    return lp;
}

const unsigned char *streamNodeBytes(Stream *s, OmapNode *n, size_t *len) {
    void *v = omapValue(n);
    if (!isZ(v)) {
        if (len) *len = lpBytes(v);
        return v;
    }
    StreamZNode *z = zOf(v);
    if (s->zNode != n) {
        if (!s->zBuf) s->zBuf = xmalloc(STREAM_Z_MAX_RAW);
        zDecompress(z, s->zBuf);
        s->zNode = n;
    }
    if (len) *len = z->rawLen;
    return s->zBuf;
}

const unsigned char *streamNodeRead(const OmapNode *n, unsigned char *scratch, size_t *len) {
    void *v = omapValue(n);
    if (!isZ(v)) {
        *len = lpBytes(v);
        return v;
    }
    const StreamZNode *z = zOf(v);
    zDecompress(z, scratch);
    *len = z->rawLen;
    return scratch;
}

/* Removes node n and frees its listpack. */
static void deleteNode(Stream *s, OmapNode *n) {
    size_t klen;
    unsigned char k[STREAM_ID_BYTES];
    memcpy(k, omapKey(n, &klen), sizeof(k));
    void *v = omapValue(n);
    if (s->zNode == n) s->zNode = NULL;
    omapDelete(s->nodes, k, sizeof(k));
    freeNodeValue(v);
}

int streamInsertNode(Stream *s, const unsigned char *key, const unsigned char *lp, size_t len, int last) {
    unsigned char *copy = xmalloc(len);
    memcpy(copy, lp, len);
    if (!omapInsert(s->nodes, key, STREAM_ID_BYTES, copy)) {
        xfree(copy);
        return 0;
    }
    if (!last) {
        OmapNode *n = omapSeekGE(s->nodes, key, STREAM_ID_BYTES, 0);
        compressNode(s, n);
    }
    return 1;
}

void streamCompressClosed(Stream *s) {
    OmapNode *tail = omapLast(s->nodes);
    for (OmapNode *n = omapFirst(s->nodes); n && n != tail; n = omapNext(n)) compressNode(s, n);
}

void streamFree(Stream *s) {
    if (!s) return;
    omapFree(s->nodes, freeNodeValue);
    omapFree(s->groups, streamFreeCG);
    xfree(s->zBuf);
    xfree(s);
}

size_t streamBytes(const Stream *s) {
    size_t n = sizeof(*s) + omapBytes(s->nodes) + (s->zBuf ? STREAM_Z_MAX_RAW : 0);
    for (OmapNode *x = omapFirst(s->nodes); x; x = omapNext(x)) n += nodeValueBytes(omapValue(x));
    if (s->groups) {
        n += omapBytes(s->groups);
        for (OmapNode *g = omapFirst(s->groups); g; g = omapNext(g)) {
            StreamCG *cg = omapValue(g);
            n += sizeof(*cg) + omapBytes(cg->pel) + omapSize(cg->pel) * sizeof(StreamNACK) + omapBytes(cg->consumers);
        }
    }
    return n;
}

/* ------------------------------------------------------------------------ */
/* Append                                                                     */
/* ------------------------------------------------------------------------ */

/* Master-entry fields of a node: returns the first field, sets *count. */
static unsigned char *masterFields(unsigned char *lp, int64_t *count) {
    unsigned char *p = lpFirst(lp); /* count */
    p = lpNext(lp, p);              /* deleted */
    p = lpNext(lp, p);              /* num-fields */
    *count = lpInt(p);
    return lpNext(lp, p);
}

/* 1 if the entry's fields equal the master's, in order. */
static int sameAsMaster(unsigned char *lp, sds *fv, long npairs) {
    int64_t mcount;
    unsigned char *p = masterFields(lp, &mcount);
    if (mcount != npairs) return 0;
    for (long i = 0; i < npairs; i++) {
        if (!lpCompare(p, (unsigned char *)fv[2 * i], sdsLen(fv[2 * i]))) return 0;
        p = lpNext(lp, p);
    }
    return 1;
}

void streamAppend(Stream *s, const StreamID *id, sds *fv, long npairs, size_t maxBytes, long long maxEntries) {
    OmapNode *tail = omapLast(s->nodes);
    unsigned char *lp = tail ? (unsigned char *)streamNodeBytes(s, tail, NULL) : NULL;
    size_t total = 0;
    for (long i = 0; i < npairs * 2; i++) total += sdsLen(fv[i]);
    if (maxBytes == 0 || maxBytes > STREAM_LISTPACK_MAX_SIZE) maxBytes = STREAM_LISTPACK_MAX_SIZE;
    if (lp) {
        if (lpBytes(lp) + total >= maxBytes) {
            lp = NULL;
        } else if (maxEntries) {
            unsigned char *p = lpFirst(lp);
            int64_t count = lpInt(p) + lpInt(lpNext(lp, p));
            if (count >= maxEntries) lp = NULL;
        }
        if (lp) lp = materialize(s, tail); /* appending to it */
    }
    StreamID master;
    if (!lp) {
        if (tail) compressNode(s, tail); /* closed now */
        master = *id;
        lp = lpNew(0);
        lp = lpAppendInt(lp, 0); /* count, set below */
        lp = lpAppendInt(lp, 0); /* deleted */
        lp = lpAppendInt(lp, npairs);
        for (long i = 0; i < npairs; i++) lp = lpAppend(lp, (unsigned char *)fv[2 * i], sdsLen(fv[2 * i]));
        lp = lpAppendInt(lp, 0); /* master terminator */
        unsigned char key[STREAM_ID_BYTES];
        streamEncodeID(key, id);
        omapInsert(s->nodes, key, sizeof(key), lp);
        tail = omapLast(s->nodes);
    } else {
        size_t klen;
        streamDecodeID(omapKey(tail, &klen), &master);
    }
    int same = sameAsMaster(lp, fv, npairs);
    /* The entry's elements, appended at once. */
    size_t n = 0, cap = (size_t)npairs * 2 + 5;
    LpItem stackItems[16];
    LpItem *items = cap <= 16 ? stackItems : xmalloc(sizeof(LpItem) * cap);
    items[n++] = (LpItem){NULL, 0, same ? STREAM_ITEM_SAMEFIELDS : 0};
    items[n++] = (LpItem){NULL, 0, (int64_t)(id->ms - master.ms)};
    items[n++] = (LpItem){NULL, 0, (int64_t)(id->seq - master.seq)};
    if (!same) items[n++] = (LpItem){NULL, 0, npairs};
    for (long i = 0; i < npairs; i++) {
        if (!same) items[n++] = (LpItem){(unsigned char *)fv[2 * i], sdsLen(fv[2 * i]), 0};
        items[n++] = (LpItem){(unsigned char *)fv[2 * i + 1], sdsLen(fv[2 * i + 1]), 0};
    }
    items[n++] = (LpItem){NULL, 0, same ? npairs + 3 : 2 * npairs + 4};
    lp = lpAppendItems(lp, items, n);
    if (items != stackItems) xfree(items);
    unsigned char *p = lpFirst(lp);
    lp = lpSetInt(lp, &p, lpInt(p) + 1);
    omapSetValue(tail, lp);
    if (s->length == 0) s->firstId = *id;
    s->length++;
    s->entriesAdded++;
    s->lastId = *id;
}

/* ------------------------------------------------------------------------ */
/* Iteration                                                                  */
/* ------------------------------------------------------------------------ */

void streamIterStart(StreamIter *it, Stream *s, const StreamID *start, const StreamID *end, int rev) {
    memset(it, 0, offsetof(StreamIter, fbuf));
    it->s = s;
    if (start) it->start = *start;
    else it->start = (StreamID){0, 0};
    if (end) it->end = *end;
    else it->end = (StreamID){UINT64_MAX, UINT64_MAX};
    it->rev = rev;
    unsigned char key[STREAM_ID_BYTES];
    if (!rev) {
        streamEncodeID(key, &it->start);
        it->node = omapSeekLE(s->nodes, key, sizeof(key), 0);
        if (!it->node) it->node = omapFirst(s->nodes);
    } else {
        streamEncodeID(key, &it->end);
        it->node = omapSeekLE(s->nodes, key, sizeof(key), 0);
    }
}

/* Enter it->node: read its master entry, position p. */
static void enterNode(StreamIter *it) {
    size_t klen;
    void *v = omapValue(it->node);
    if (isZ(v)) {
        size_t len;
        const unsigned char *b = streamNodeBytes(it->s, it->node, &len);
        memcpy(it->zcopy, b, len);
        it->lp = it->zcopy;
    } else {
        it->lp = v;
    }
    streamDecodeID(omapKey(it->node, &klen), &it->master);
    int64_t mf;
    it->masterFieldsPos = masterFields(it->lp, &mf);
    it->masterFields = mf;
    if (!it->rev) {
        unsigned char *p = it->masterFieldsPos;
        for (int64_t i = 0; i < mf; i++) p = lpNext(it->lp, p);
        it->p = lpNext(it->lp, p); /* past the master terminator */
    } else {
        it->p = lpLast(it->lp);
    }
}

static void leaveNode(StreamIter *it) {
    it->node = it->rev ? omapPrev(it->node) : omapNext(it->node);
    it->lp = NULL;
}

/* Reads the entry whose flags are at p; returns the element after it. */
static unsigned char *readEntry(StreamIter *it, unsigned char *p, StreamID *id) {
    unsigned char *lp = it->lp;
    it->entryOff = (long)(p - lp);
    it->flags = (int)intFast(p);
    p = nextFast(lp, p);
    id->ms = it->master.ms + (uint64_t)intFast(p);
    p = nextFast(lp, p);
    id->seq = it->master.seq + (uint64_t)intFast(p);
    p = nextFast(lp, p);
    long long nf;
    if (it->flags & STREAM_ITEM_SAMEFIELDS) {
        nf = it->masterFields;
        it->fpos = it->masterFieldsPos;
        it->vpos = p;
    } else {
        nf = intFast(p);
        p = nextFast(lp, p);
        it->fpos = p;
        it->vpos = NULL;
    }
    it->numFields = nf;
    return p;
}

int streamIterNext(StreamIter *it, StreamID *id, long long *numFields) {
    while (it->node) {
        if (!it->lp) enterNode(it);
        unsigned char *lp = it->lp;
        if (!it->rev) {
            while (it->p) {
                unsigned char *p = readEntry(it, it->p, id);
                /* Skip to the next entry: the fields, then lp-count. */
                long long skip = (it->flags & STREAM_ITEM_SAMEFIELDS) ? it->numFields : it->numFields * 2;
                for (long long i = 0; i < skip; i++) p = nextFast(lp, p);
                it->p = nextFast(lp, p); /* p is the lp-count */
                if (streamCompareID(id, &it->end) > 0) {
                    it->node = NULL;
                    return 0;
                }
                if ((it->flags & STREAM_ITEM_DELETED) || streamCompareID(id, &it->start) < 0) continue;
                *numFields = it->numFields;
                return 1;
            }
        } else {
            while (it->p) {
                int64_t lpcount = lpInt(it->p);
                if (lpcount == 0) { /* the master terminator */
                    it->p = NULL;
                    break;
                }
                unsigned char *p = it->p;
                for (int64_t i = 0; i < lpcount; i++) p = lpPrev(lp, p);
                unsigned char *flagsPos = p;
                readEntry(it, p, id);
                it->p = lpPrev(lp, flagsPos);
                if (streamCompareID(id, &it->start) < 0) {
                    it->node = NULL;
                    return 0;
                }
                if ((it->flags & STREAM_ITEM_DELETED) || streamCompareID(id, &it->end) > 0) continue;
                *numFields = it->numFields;
                return 1;
            }
        }
        leaveNode(it);
    }
    return 0;
}

static const unsigned char *lpStr(unsigned char *p, size_t *len, unsigned char *buf) {
    if ((p[0] & 0xC0) == 0x80) { /* a string under 64 bytes */
        *len = p[0] & 0x3F;
        return p + 1;
    }
    unsigned int l;
    unsigned char *s = lpGetValue(p, &l, buf, NULL, NULL);
    *len = l;
    return s;
}

void streamIterField(StreamIter *it, const unsigned char **f, size_t *flen, const unsigned char **v, size_t *vlen) {
    if (it->flags & STREAM_ITEM_SAMEFIELDS) {
        *f = lpStr(it->fpos, flen, it->fbuf);
        *v = lpStr(it->vpos, vlen, it->vbuf);
        it->fpos = nextFast(it->lp, it->fpos);
        it->vpos = nextFast(it->lp, it->vpos);
    } else {
        *f = lpStr(it->fpos, flen, it->fbuf);
        unsigned char *vp = nextFast(it->lp, it->fpos);
        *v = lpStr(vp, vlen, it->vbuf);
        it->fpos = nextFast(it->lp, vp);
    }
}

/* Updates the master counters of the node (count += dc, deleted += dd). */
static unsigned char *adjustCounters(unsigned char *lp, int64_t dc, int64_t dd, int64_t *count) {
    unsigned char *p = lpFirst(lp);
    *count = lpInt(p) + dc;
    lp = lpSetInt(lp, &p, *count);
    p = lpNext(lp, p);
    return lpSetInt(lp, &p, lpInt(p) + dd);
}

static unsigned char *rebase(unsigned char *p, unsigned char *from, unsigned char *to) {
    return p ? to + (p - from) : NULL;
}

static void iterDelete(StreamIter *it, int keepEmpty) {
    if (it->lp == it->zcopy) { /* a compressed node: change the node itself */
        unsigned char *to = materialize(it->s, it->node);
        it->p = rebase(it->p, it->zcopy, to);
        it->fpos = rebase(it->fpos, it->zcopy, to);
        it->vpos = rebase(it->vpos, it->zcopy, to);
        it->lp = to;
    }
    unsigned char *lp = it->lp;
    unsigned char *fp = lp + it->entryOff;
    int64_t count;
    if (!it->rev) {
        /* Every change is before p: keep p's distance from the end. */
        size_t endOff = it->p ? lpBytes(lp) - (size_t)(it->p - lp) : 0;
        lp = lpSetInt(lp, &fp, it->flags | STREAM_ITEM_DELETED);
        lp = adjustCounters(lp, -1, 1, &count);
        if (it->p) it->p = lp + lpBytes(lp) - endOff;
    } else {
        /* The flags are after p, the counters before it. */
        lp = lpSetInt(lp, &fp, it->flags | STREAM_ITEM_DELETED);
        size_t off = it->p ? (size_t)(it->p - lp) : 0;
        size_t before = lpBytes(lp);
        lp = adjustCounters(lp, -1, 1, &count);
        if (it->p) it->p = lp + off + lpBytes(lp) - before;
    }
    it->s->length--;
    it->flags |= STREAM_ITEM_DELETED;
    if (count == 0 && !keepEmpty) {
        OmapNode *n = it->node;
        OmapNode *after = it->rev ? omapPrev(n) : omapNext(n);
        omapSetValue(n, lp);
        deleteNode(it->s, n);
        it->node = after;
        it->lp = NULL;
        return;
    }
    omapSetValue(it->node, lp);
    it->lp = lp;
    int64_t mf;
    it->masterFieldsPos = masterFields(lp, &mf);
}

void streamIterDelete(StreamIter *it) { iterDelete(it, 0); }

int streamDeleteID(Stream *s, const StreamID *id) {
    StreamIter it;
    streamIterStart(&it, s, id, id, 0);
    StreamID got;
    long long nf;
    if (!streamIterNext(&it, &got, &nf)) return 0;
    streamIterDelete(&it);
    return 1;
}

int streamEdgeID(Stream *s, int first, StreamID *id) {
    StreamIter it;
    streamIterStart(&it, s, NULL, NULL, !first);
    long long nf;
    return streamIterNext(&it, id, &nf);
}

int streamFirstRawID(Stream *s, StreamID *id) {
    OmapNode *n = omapFirst(s->nodes);
    if (!n) return 0;
    StreamIter it;
    memset(&it, 0, offsetof(StreamIter, fbuf));
    it.s = s;
    it.node = n;
    enterNode(&it);
    if (!it.p) return 0;
    readEntry(&it, it.p, id);
    return 1;
}

void streamUpdateFirstID(Stream *s) {
    if (!streamEdgeID(s, 1, &s->firstId)) s->firstId = (StreamID){0, 0};
}

/* The ID of the last entry (live or not) of a node. */
static void nodeLastID(unsigned char *lp, const StreamID *master, StreamID *id) {
    unsigned char *p = lpLast(lp);
    int64_t lpcount = lpInt(p);
    for (int64_t i = 0; i < lpcount; i++) p = lpPrev(lp, p);
    p = lpNext(lp, p);
    id->ms = master->ms + (uint64_t)lpInt(p);
    p = lpNext(lp, p);
    id->seq = master->seq + (uint64_t)lpInt(p);
}

long long streamTrim(Stream *s, long long maxLen, const StreamID *minId, int approx, long long limit) {
    long long deleted = 0;
    OmapNode *n = omapFirst(s->nodes);
    while (n) {
        if (!minId && (long long)s->length <= maxLen) break;
        unsigned char *lp = (unsigned char *)streamNodeBytes(s, n, NULL);
        unsigned char *p = lpFirst(lp);
        int64_t entries = lpInt(p);
        if (limit && deleted + entries > limit) break;
        StreamID master;
        size_t klen;
        streamDecodeID(omapKey(n, &klen), &master);
        int removeNode;
        if (!minId) {
            removeNode = (long long)s->length - entries >= maxLen;
        } else {
            StreamID last;
            nodeLastID(lp, &master, &last);
            removeNode = streamCompareID(&last, minId) < 0;
        }
        if (removeNode) {
            OmapNode *next = omapNext(n);
            deleteNode(s, n);
            s->length -= (uint64_t)entries;
            deleted += entries;
            n = next;
            continue;
        }
        if (approx) break;
        /* Mark entries deleted from the front of this node. */
        StreamIter it;
        streamIterStart(&it, s, NULL, NULL, 0);
        it.node = n;
        StreamID id;
        long long nf;
        while (streamIterNext(&it, &id, &nf)) {
            if (it.node != n) break;
            if (!minId ? (long long)s->length <= maxLen : streamCompareID(&id, minId) >= 0) break;
            iterDelete(&it, 1); /* as Redis, an emptied node stays */
            deleted++;
        }
        break;
    }
    if (deleted) streamUpdateFirstID(s);
    return deleted;
}

/* ------------------------------------------------------------------------ */
/* Radix-tree node count                                                      */
/* ------------------------------------------------------------------------ */

/* A radix tree over keys of equal length has a node at: the root, every
 * key, every prefix where keys branch, and every child of such a prefix
 * (the tree compresses everything else into those nodes).  Candidates are
 * collected as (length, prefix) and counted once each. */
typedef struct RaxPrefix {
    unsigned char len;
    unsigned char bytes[STREAM_ID_BYTES];
} RaxPrefix;

static int cmpPrefix(const void *a, const void *b) {
    const RaxPrefix *x = a, *y = b;
    if (x->len != y->len) return x->len < y->len ? -1 : 1;
    return memcmp(x->bytes, y->bytes, x->len);
}

static void addPrefix(RaxPrefix *v, size_t *n, const unsigned char *key, size_t len) {
    v[*n].len = (unsigned char)len;
    memset(v[*n].bytes, 0, STREAM_ID_BYTES);
    if (len) memcpy(v[*n].bytes, key, len);
    (*n)++;
}

unsigned long long streamRaxNodes(const Stream *s) {
    size_t keys = omapSize(s->nodes);
    if (keys == 0) return 1;
    RaxPrefix *v = xmalloc(sizeof(RaxPrefix) * (4 * keys + 1));
    size_t n = 0;
    addPrefix(v, &n, NULL, 0);
    const unsigned char *prev = NULL;
    for (OmapNode *x = omapFirst(s->nodes); x; x = omapNext(x)) {
        size_t klen;
        const unsigned char *key = omapKey(x, &klen);
        addPrefix(v, &n, key, STREAM_ID_BYTES);
        if (prev) {
            size_t l = 0;
            while (l < STREAM_ID_BYTES && prev[l] == key[l]) l++;
            addPrefix(v, &n, key, l);
            addPrefix(v, &n, prev, l + 1);
            addPrefix(v, &n, key, l + 1);
        }
        prev = key;
    }
    qsort(v, n, sizeof(*v), cmpPrefix);
    unsigned long long count = 0;
    for (size_t i = 0; i < n; i++)
        if (i == 0 || cmpPrefix(&v[i], &v[i - 1]) != 0) count++;
    xfree(v);
    return count;
}

/* ------------------------------------------------------------------------ */
/* Logical read counters                                                      */
/* ------------------------------------------------------------------------ */

static int idIsZero(const StreamID *id) { return id->ms == 0 && id->seq == 0; }

long long streamEstimateDistance(const Stream *s, const StreamID *id) {
    if (!s->entriesAdded) return 0;
    int cmpLast = streamCompareID(id, &s->lastId);
    if (!s->length && cmpLast <= 0) return (long long)s->entriesAdded;
    if (cmpLast == 0) return (long long)s->entriesAdded;
    if (cmpLast > 0) return STREAM_ENTRIES_READ_INVALID;
    int cmpFirst = streamCompareID(id, &s->firstId);
    if (idIsZero(&s->maxDeletedId) || streamCompareID(&s->maxDeletedId, &s->firstId) < 0) {
        if (cmpFirst < 0) return (long long)(s->entriesAdded - s->length);
        if (cmpFirst == 0) return (long long)(s->entriesAdded - s->length + 1);
    }
    return STREAM_ENTRIES_READ_INVALID;
}

int streamRangeHasTombstones(const Stream *s, const StreamID *start, const StreamID *end) {
    if (!s->length || idIsZero(&s->maxDeletedId)) return 0;
    if (streamCompareID(&s->firstId, &s->maxDeletedId) > 0) return 0;
    StreamID a = start ? *start : (StreamID){0, 0};
    StreamID b = end ? *end : (StreamID){UINT64_MAX, UINT64_MAX};
    return streamCompareID(&a, &s->maxDeletedId) <= 0 && streamCompareID(&s->maxDeletedId, &b) <= 0;
}

/* ------------------------------------------------------------------------ */
/* Consumer groups                                                            */
/* ------------------------------------------------------------------------ */

StreamCG *streamLookupCG(const Stream *s, const char *name, size_t len) {
    return s->groups ? omapFind(s->groups, name, len) : NULL;
}

StreamCG *streamCreateCG(Stream *s, const char *name, size_t len, const StreamID *id, long long entriesRead) {
    if (!s->groups) s->groups = omapCreate();
    if (omapFind(s->groups, name, len)) return NULL;
    StreamCG *cg = xmalloc(sizeof(*cg));
    cg->lastId = *id;
    cg->entriesRead = entriesRead;
    cg->pel = omapCreate();
    cg->consumers = omapCreate();
    omapInsert(s->groups, name, len, cg);
    return cg;
}

int streamDestroyCG(Stream *s, const char *name, size_t len) {
    StreamCG *cg = s->groups ? omapDelete(s->groups, name, len) : NULL;
    if (!cg) return 0;
    streamFreeCG(cg);
    return 1;
}

StreamConsumer *streamLookupConsumer(const StreamCG *cg, const char *name, size_t len) {
    return omapFind(cg->consumers, name, len);
}

StreamConsumer *streamCreateConsumer(StreamCG *cg, const char *name, size_t len, long long now) {
    if (omapFind(cg->consumers, name, len)) return NULL;
    StreamConsumer *c = xmalloc(sizeof(*c));
    c->seenTime = now;
    c->name = sdsNewLen(name, len);
    c->pel = omapCreate();
    omapInsert(cg->consumers, name, len, c);
    return c;
}

long long streamDeleteConsumer(StreamCG *cg, StreamConsumer *consumer) {
    long long pending = (long long)omapSize(consumer->pel);
    for (OmapNode *n = omapFirst(consumer->pel); n; n = omapNext(n)) {
        size_t klen;
        const unsigned char *key = omapKey(n, &klen);
        StreamNACK *nack = omapDelete(cg->pel, key, klen);
        xfree(nack);
    }
    omapDelete(cg->consumers, consumer->name, sdsLen(consumer->name));
    freeConsumer(consumer);
    return pending;
}

StreamNACK *streamCreateNACK(StreamConsumer *consumer, long long now) {
    StreamNACK *n = xmalloc(sizeof(*n));
    n->deliveryTime = now;
    n->deliveryCount = 1;
    n->consumer = consumer;
    return n;
}

void streamPelRemove(StreamCG *cg, const unsigned char *key, StreamNACK *nack) {
    omapDelete(cg->pel, key, STREAM_ID_BYTES);
    omapDelete(nack->consumer->pel, key, STREAM_ID_BYTES);
    xfree(nack);
}

StreamNACK *streamGroupDeliver(Stream *s, StreamCG *cg, StreamConsumer *consumer, const StreamID *id, int noack,
                               long long now, int *advanced) {
    *advanced = 0;
    if (streamCompareID(id, &cg->lastId) > 0) {
        if (cg->entriesRead != STREAM_ENTRIES_READ_INVALID && !streamRangeHasTombstones(s, id, NULL))
            cg->entriesRead++;
        else if (s->entriesAdded)
            cg->entriesRead = streamEstimateDistance(s, id);
        cg->lastId = *id;
        *advanced = 1;
    }
    if (noack) return NULL;
    unsigned char buf[STREAM_ID_BYTES];
    streamEncodeID(buf, id);
    StreamNACK *nack = omapFind(cg->pel, buf, sizeof(buf));
    if (!nack) {
        nack = streamCreateNACK(consumer, now);
        omapInsert(cg->pel, buf, sizeof(buf), nack);
        omapInsert(consumer->pel, buf, sizeof(buf), nack);
    } else {
        omapDelete(nack->consumer->pel, buf, sizeof(buf));
        nack->consumer = consumer;
        nack->deliveryTime = now;
        nack->deliveryCount = 1;
        omapInsert(consumer->pel, buf, sizeof(buf), nack);
    }
    return nack;
}

int streamGroupAck(StreamCG *cg, const StreamID *id) {
    unsigned char buf[STREAM_ID_BYTES];
    streamEncodeID(buf, id);
    StreamNACK *nack = omapFind(cg->pel, buf, sizeof(buf));
    if (!nack) return 0;
    streamPelRemove(cg, buf, nack);
    return 1;
}

/* ------------------------------------------------------------------------ */
/* Validation of loaded nodes                                                 */
/* ------------------------------------------------------------------------ */

/* The integer at p of an untrusted listpack (already structurally valid). */
static int validInt(unsigned char *p, int64_t *v) {
    if (!p) return 0;
    unsigned int len;
    int isInt;
    long long x = 0;
    unsigned char *s = lpGetValue(p, &len, NULL, &isInt, &x);
    if (!isInt && !stringToLongLong((const char *)s, len, &x)) return 0;
    *v = x;
    return 1;
}

int streamValidateNode(unsigned char *lp, size_t size, const StreamID *master, const StreamID *after,
                       StreamID *last, uint64_t *live) {
    if (!lpValidateIntegrity(lp, size, 1)) return 0;
    int64_t count, deleted, mf, v;
    unsigned char *p = lpFirst(lp);
    if (!validInt(p, &count) || count < 0) return 0;
    p = lpNext(lp, p);
    if (!validInt(p, &deleted) || deleted < 0) return 0;
    p = lpNext(lp, p);
    if (!validInt(p, &mf) || mf < 0 || (uint64_t)mf > size) return 0;
    for (int64_t i = 0; i < mf; i++) {
        p = lpNext(lp, p);
        if (!p) return 0;
    }
    p = lpNext(lp, p);
    if (!validInt(p, &v) || v != 0) return 0;
    p = lpNext(lp, p);
    int64_t seenLive = 0, seenDeleted = 0;
    StreamID prev = {0, 0};
    int first = 1;
    while (p) {
        int64_t flags, msd, seqd, nf;
        if (!validInt(p, &flags) || flags < 0 || flags > 3) return 0;
        p = lpNext(lp, p);
        if (!validInt(p, &msd)) return 0;
        p = lpNext(lp, p);
        if (!validInt(p, &seqd)) return 0;
        StreamID id = {master->ms + (uint64_t)msd, master->seq + (uint64_t)seqd};
        if (first ? streamCompareID(&id, master) < 0 : streamCompareID(&id, &prev) <= 0) return 0;
        if (after && streamCompareID(&id, after) <= 0) return 0;
        first = 0;
        prev = id;
        p = lpNext(lp, p);
        int64_t elements;
        if (flags & STREAM_ITEM_SAMEFIELDS) {
            nf = mf;
            elements = mf;
        } else {
            if (!validInt(p, &nf) || nf < 0 || (uint64_t)nf > size) return 0;
            p = lpNext(lp, p);
            elements = nf * 2;
        }
        for (int64_t i = 0; i < elements; i++) {
            if (!p) return 0;
            p = lpNext(lp, p);
        }
        int64_t lpcount;
        if (!validInt(p, &lpcount)) return 0;
        int64_t want = (flags & STREAM_ITEM_SAMEFIELDS) ? nf + 3 : 2 * nf + 4;
        if (lpcount != want) return 0;
        p = lpNext(lp, p);
        if (flags & STREAM_ITEM_DELETED) seenDeleted++;
        else seenLive++;
    }
    if (seenLive != count || seenDeleted != deleted || seenLive + seenDeleted == 0) return 0;
    *last = prev;
    *live = (uint64_t)count;
    return 1;
}
