/* quicklist.c -- doubly linked list of listpack nodes (see quicklist.h).
 *
 * Node data is one of three things, told apart by the node flags:
 *   - a listpack (packed node), `sz` = lpBytes, `count` = its elements;
 *   - an sds holding one element (NODE_PLAIN), `sz` = its length (capped);
 *   - either of those LZF-compressed (NODE_COMPRESSED): an LzfBlob holding
 *     the raw length, the compressed length and the compressed bytes.
 *
 * Invariants between public calls:
 *   - no node is empty; ql->count and ql->nodes are exact;
 *   - with compress depth N > 0, the N nodes at each end are raw, and every
 *     other node is compressed unless it is pinned by an iterator or marked
 *     NODE_INCOMPRESSIBLE (compression was tried on its current content and
 *     saved nothing; any change to the content clears the mark);
 *   - with depth 0 no node is compressed.
 * Ends are kept raw by compressPass after each change to the chain of nodes;
 * nodes changed in the middle are recompressed with compressIfInner.
 *
 * Iterators remember the global index of the next element so that any change
 * they make can fall back to finding their place again by index; the common
 * cases (reading, deleting) keep a cached listpack position instead. */
#include "ds/quicklist.h"

#include <liblzf/lzf.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ds/alloc.h"
#include "ds/listpack.h"
#include "ds/lzfdec.h"
#include "ds/util.h"

#define NODE_PLAIN 1          /* one element in an sds */
#define NODE_COMPRESSED 2     /* data is an LzfBlob */
#define NODE_PINNED 4         /* an iterator works on it: keep it raw */
#define NODE_INCOMPRESSIBLE 8 /* compressing the current content saves nothing */

#define SAFETY_LIMIT 8192     /* max node listpack bytes for fill >= 0 */
#define MIN_COMPRESS_BYTES 48 /* smaller nodes are never compressed */
#define MIN_COMPRESS_GAIN 8   /* compression must save at least this */
#define MAX_COMPRESS_BYTES (1u << 30)
#define PASS_EXTRA 3                 /* nodes past the depth checked by compressPass */
#define PACK_SCRATCH_MAX (64u << 10) /* compression output buffer kept per thread */

typedef struct QlNode {
    struct QlNode *prev; /* towards the head */
    struct QlNode *next; /* towards the tail */
    unsigned char *data; /* listpack, sds (plain) or LzfBlob (compressed) */
    uint32_t sz;         /* raw bytes: lpBytes, or plain length capped at UINT32_MAX */
    uint16_t count;      /* elements (1 for plain) */
    uint8_t flags;       /* NODE_* */
    uint8_t unused;
} QlNode;

typedef struct LzfBlob {
    uint32_t rawLen; /* bytes after decompression */
    uint32_t clen;   /* compressed bytes in buf */
    unsigned char buf[];
} LzfBlob;

struct Quicklist {
    QlNode *head;
    QlNode *tail;
    unsigned long count; /* elements */
    uint32_t nodes;      /* nodes */
    int16_t fill;        /* QL_FILL_MIN..QL_FILL_MAX */
    uint16_t compress;   /* depth, 0 = off */
};

struct QuicklistIter {
    Quicklist *ql;
    QlNode *node;       /* node of the next element; NULL at the end or when seek */
    unsigned char *pos; /* the next element in node's listpack; NULL = find by offset */
    long offset;        /* index of the next element inside node */
    long idx;           /* global index of the next element */
    long lastIdx;       /* global index of the element last returned */
    int forward;        /* 1: head to tail */
    int seek;           /* node/offset must be found again from idx */
    int modified;       /* node lost elements: try a merge when leaving it */
};

/* ---- Scratch buffers (per thread) ---- */

/* One buffer for reads of compressed nodes (quicklistIndex entries point into
 * it) and one for compression output. */
static _Thread_local unsigned char *readScratch;
static _Thread_local size_t readScratchCap;
static _Thread_local unsigned char *packScratch;
static _Thread_local size_t packScratchCap;

static unsigned char *scratchReserve(unsigned char **buf, size_t *cap, size_t need) {
    /* Shrink after a huge element so one big read does not pin memory. */
    if (need > *cap || (*cap > (1u << 20) && need < *cap / 4)) {
        xfree(*buf);
        *cap = need < 4096 ? 4096 : need;
        *buf = xmalloc(*cap);
    }
    return *buf;
}

static void corrupt(const char *what) {
    fprintf(stderr, "quicklist: %s\n", what);
    abort();
}

/* ---- Sizes and limits ---- */

static size_t sizeLimit(int fill) { return fill < 0 ? (size_t)4096 << (-fill - 1) : SAFETY_LIMIT; }

/* Upper bound of the bytes one element of len bytes takes in a listpack. */
static size_t entryBound(size_t len) {
    size_t body = len + (len < 64 ? 1 : len < 4096 ? 2 : 5);
    size_t back = body < 128 ? 1 : body < 16384 ? 2 : body < 2097152 ? 3 : body < 268435456 ? 4 : 5;
    return body + back;
}

/* Elements of at least this many bytes live in a plain node of their own
 * (Redis 7.0's packed_threshold, DEBUG QUICKLIST-PACKED-THRESHOLD). */
static size_t packedThreshold = (size_t)1 << 30;

int quicklistSetPackedThreshold(unsigned long long sz) {
    if (sz > (1ULL << 32) - (1ULL << 20)) return 0; /* a listpack must hold it */
    packedThreshold = sz == 0 ? (size_t)1 << 30 : (size_t)sz;
    return 1;
}

/* An element that goes plain.  A smaller one that exceeds the node size
 * limit alone gets a packed node of its own (allowInsert refuses it any
 * company), as in Redis 7.0. */
static int isLarge(const Quicklist *ql, size_t len) {
    (void)ql;
    return len >= packedThreshold;
}

static int isPlain(const QlNode *n) { return (n->flags & NODE_PLAIN) != 0; }

/* Redis 7.0 estimates what an element adds to a node as its length plus 8
 * (SIZE_ESTIMATE_OVERHEAD), not its exact entry size: nodes fill to the
 * same element as Redis's, so lists split alike and their RDB nodes (and
 * files) are the same bytes. */
#define INSERT_ESTIMATE_OVERHEAD 8

static int allowInsert(const Quicklist *ql, const QlNode *n, size_t len) {
    if (!n || isPlain(n) || isLarge(ql, len)) return 0;
    if (n->sz + len + INSERT_ESTIMATE_OVERHEAD > sizeLimit(ql->fill)) return 0;
    if (ql->fill >= 0 && n->count >= ql->fill) return 0;
    return 1;
}

static int allowMerge(const Quicklist *ql, const QlNode *a, const QlNode *b) {
    if (!a || !b || isPlain(a) || isPlain(b)) return 0;
    if ((a->flags | b->flags) & NODE_PINNED) return 0;
    if ((size_t)a->sz + b->sz - LP_EMPTY_BYTES > sizeLimit(ql->fill)) return 0;
    if (ql->fill >= 0 && a->count + b->count > ql->fill) return 0;
    return 1;
}

static uint32_t cap32(size_t v) { return v > UINT32_MAX ? UINT32_MAX : (uint32_t)v; }

/* Raw length of a node's content. */
static size_t rawLen(const QlNode *n) {
    if (n->flags & NODE_COMPRESSED) return ((const LzfBlob *)n->data)->rawLen;
    return isPlain(n) ? sdsLen((sds)n->data) : n->sz;
}

/* ---- Compression ---- */

static void compressNode(QlNode *n) {
    size_t raw = rawLen(n);
    if (raw < MIN_COMPRESS_BYTES || raw > MAX_COMPRESS_BYTES) {
        n->flags |= NODE_INCOMPRESSIBLE;
        return;
    }
    size_t room = raw - sizeof(LzfBlob) - MIN_COMPRESS_GAIN;
    LzfBlob *b;
    unsigned int clen;
    if (room <= PACK_SCRATCH_MAX) {
        /* Normal nodes: compress into scratch, then keep an exact-size copy. */
        unsigned char *out = scratchReserve(&packScratch, &packScratchCap, PACK_SCRATCH_MAX);
        clen = lzf_compress(n->data, (unsigned int)raw, out, (unsigned int)room);
        if (clen == 0) {
            n->flags |= NODE_INCOMPRESSIBLE;
            return;
        }
        b = xmalloc(sizeof(LzfBlob) + clen);
        memcpy(b->buf, out, clen);
    } else {
        /* Big plain elements: no big scratch kept around afterwards. */
        b = xmalloc(sizeof(LzfBlob) + room);
        clen = lzf_compress(n->data, (unsigned int)raw, b->buf, (unsigned int)room);
        if (clen == 0) {
            xfree(b);
            n->flags |= NODE_INCOMPRESSIBLE;
            return;
        }
        b = xrealloc(b, sizeof(LzfBlob) + clen);
    }
    b->rawLen = (uint32_t)raw;
    b->clen = clen;
    if (isPlain(n))
        sdsFree((sds)n->data);
    else
        lpFree(n->data);
    n->data = (unsigned char *)b;
    n->flags |= NODE_COMPRESSED;
}

/* Decompress blob into dst (blob->rawLen bytes). */
static void inflateBlob(const LzfBlob *b, unsigned char *dst) {
    if (lzfDecompress(b->buf, b->clen, dst, b->rawLen) != b->rawLen) corrupt("bad compressed node");
}

/* Make n raw in place. */
static void decompressNode(QlNode *n) {
    if (!(n->flags & NODE_COMPRESSED)) return;
    LzfBlob *b = (LzfBlob *)n->data;
    unsigned char *raw;
    if (isPlain(n)) {
        sds s = sdsNewLen(NULL, b->rawLen);
        inflateBlob(b, (unsigned char *)s);
        raw = (unsigned char *)s;
    } else {
        raw = xmalloc(b->rawLen);
        inflateBlob(b, raw);
    }
    xfree(b);
    n->data = raw;
    n->flags &= ~NODE_COMPRESSED;
}

/* n's raw bytes without changing n: a compressed node is decompressed into
 * the read scratch buffer. */
static unsigned char *readView(const QlNode *n, size_t *len) {
    *len = rawLen(n);
    if (!(n->flags & NODE_COMPRESSED)) return n->data;
    const LzfBlob *b = (const LzfBlob *)n->data;
    unsigned char *dst = scratchReserve(&readScratch, &readScratchCap, b->rawLen ? b->rawLen : 1);
    inflateBlob(b, dst);
    return dst;
}

/* 1 if n has at least `compress` nodes on each side. */
static int isInner(const Quicklist *ql, const QlNode *n) {
    unsigned depth = ql->compress;
    if (depth == 0 || ql->nodes < 2 * (uint32_t)depth + 1) return 0;
    const QlNode *a = n, *b = n;
    for (unsigned i = 0; i < depth; i++) {
        a = a->prev;
        b = b->next;
        if (!a || !b) return 0;
    }
    return 1;
}

static void compressIfInner(const Quicklist *ql, QlNode *n) {
    if (!n || (n->flags & (NODE_COMPRESSED | NODE_PINNED | NODE_INCOMPRESSIBLE))) return;
    if (isInner(ql, n)) compressNode(n);
}

/* After the chain of nodes changed: ends raw, the first inner nodes at each
 * end compressed.  Nodes deeper inside were compressed when they were last
 * touched. */
static void compressPass(const Quicklist *ql) {
    unsigned depth = ql->compress;
    if (depth == 0) return;
    QlNode *h = ql->head, *t = ql->tail;
    for (unsigned i = 0; i < depth && h; i++, h = h->next)
        decompressNode(h);
    for (unsigned i = 0; i < depth && t; i++, t = t->prev)
        decompressNode(t);
    for (unsigned i = 0; i < PASS_EXTRA && h; i++, h = h->next)
        compressIfInner(ql, h);
    for (unsigned i = 0; i < PASS_EXTRA && t; i++, t = t->prev)
        compressIfInner(ql, t);
}

/* ---- Nodes ---- */

static QlNode *nodeNewPacked(const void *value, size_t len) {
    QlNode *n = xcalloc(sizeof(QlNode));
    n->data = lpAppend(lpNew(0), value, len);
    n->sz = (uint32_t)lpBytes(n->data);
    n->count = 1;
    return n;
}

static QlNode *nodeNewPlain(const void *value, size_t len) {
    QlNode *n = xcalloc(sizeof(QlNode));
    n->data = (unsigned char *)sdsNewLen(value, len);
    n->sz = cap32(len);
    n->count = 1;
    n->flags = NODE_PLAIN;
    return n;
}

static QlNode *nodeNewFor(const Quicklist *ql, const void *value, size_t len) {
    return isLarge(ql, len) ? nodeNewPlain(value, len) : nodeNewPacked(value, len);
}

static void nodeFree(QlNode *n) {
    if (n->flags & NODE_COMPRESSED)
        xfree(n->data);
    else if (isPlain(n))
        sdsFree((sds)n->data);
    else
        lpFree(n->data);
    xfree(n);
}

/* Store a changed listpack into a raw packed node. */
static void nodeSetLp(QlNode *n, unsigned char *lp, long countDelta) {
    n->data = lp;
    n->sz = (uint32_t)lpBytes(lp);
    n->count = (uint16_t)(n->count + countDelta);
    n->flags &= ~NODE_INCOMPRESSIBLE;
}

/* Link n after `at`, or at the head when at is NULL. */
static void linkAfter(Quicklist *ql, QlNode *at, QlNode *n) {
    n->prev = at;
    n->next = at ? at->next : ql->head;
    if (n->next)
        n->next->prev = n;
    else
        ql->tail = n;
    if (at)
        at->next = n;
    else
        ql->head = n;
    ql->nodes++;
}

/* Link n before `at`, or at the tail when at is NULL. */
static void linkBefore(Quicklist *ql, QlNode *at, QlNode *n) { linkAfter(ql, at ? at->prev : ql->tail, n); }

static void unlinkNode(Quicklist *ql, QlNode *n) {
    if (n->prev)
        n->prev->next = n->next;
    else
        ql->head = n->next;
    if (n->next)
        n->next->prev = n->prev;
    else
        ql->tail = n->prev;
    ql->nodes--;
}

static void deleteNode(Quicklist *ql, QlNode *n) {
    ql->count -= n->count;
    unlinkNode(ql, n);
    nodeFree(n);
}

/* Merge b (a's next) into a when they fit together; returns a if merged,
 * NULL otherwise. */
static QlNode *tryMerge(Quicklist *ql, QlNode *a, QlNode *b) {
    if (!allowMerge(ql, a, b)) return NULL;
    decompressNode(a);
    decompressNode(b);
    unsigned char *first = a->data, *second = b->data;
    unsigned char *merged = lpMerge(&first, &second);
    b->data = NULL;
    nodeSetLp(a, merged, b->count);
    unlinkNode(ql, b);
    xfree(b);
    compressIfInner(ql, a);
    return a;
}

/* Split raw packed n: elements [k, count) move to a new node after n. */
static QlNode *splitNode(Quicklist *ql, QlNode *n, long k) {
    decompressNode(n);
    long total = n->count;
    unsigned char *copy = xmalloc(n->sz);
    memcpy(copy, n->data, n->sz);
    QlNode *right = xcalloc(sizeof(QlNode));
    right->data = copy;
    right->count = (uint16_t)total;
    nodeSetLp(right, lpDeleteRange(copy, 0, (unsigned long)k), -k);
    nodeSetLp(n, lpDeleteRange(n->data, k, (unsigned long)(total - k)), -(total - k));
    linkAfter(ql, n, right);
    return right;
}

/* Node and offset of the element at global index (negative from the tail);
 * NULL out of range.  *gidx receives the non-negative index. */
static QlNode *locate(const Quicklist *ql, long index, long *offset, unsigned long *gidx) {
    unsigned long i;
    if (index < 0) {
        unsigned long back = (unsigned long)(-(index + 1)) + 1;
        if (back > ql->count) return NULL;
        i = ql->count - back;
    } else {
        i = (unsigned long)index;
        if (i >= ql->count) return NULL;
    }
    if (gidx) *gidx = i;
    QlNode *n;
    if (i < ql->count / 2) {
        unsigned long seen = 0;
        for (n = ql->head; seen + n->count <= i; n = n->next)
            seen += n->count;
        *offset = (long)(i - seen);
    } else {
        unsigned long after = ql->count - 1 - i; /* elements after i */
        unsigned long seen = 0;
        for (n = ql->tail; seen + n->count <= after; n = n->prev)
            seen += n->count;
        *offset = (long)(n->count - 1 - (after - seen));
    }
    return n;
}

static void fillEntry(QlEntry *e, QlNode *n, unsigned char *raw, size_t rawBytes, unsigned char *p,
                      long offset) {
    e->node = n;
    e->lpPos = p;
    e->offset = offset;
    e->ival = 0;
    if (isPlain(n)) {
        e->str = raw;
        e->len = rawBytes;
        return;
    }
    unsigned int len = 0;
    int isInt = 0;
    long long v = 0;
    unsigned char *s = lpGetValue(p, &len, NULL, &isInt, &v);
    if (isInt) {
        e->str = NULL;
        e->len = 0;
        e->ival = v;
    } else {
        e->str = s;
        e->len = len;
    }
}

static sds lpValueSds(unsigned char *p) {
    unsigned int len = 0;
    int isInt = 0;
    long long v = 0;
    unsigned char *s = lpGetValue(p, &len, NULL, &isInt, &v);
    return isInt ? sdsFromLongLong(v) : sdsNewLen(s, len);
}

/* ---- Element operations shared by the index and iterator APIs ---- */

/* Delete the element at (n, offset); removes n when it empties. */
static void deleteAt(Quicklist *ql, QlNode *n, long offset) {
    if (n->count == 1) {
        deleteNode(ql, n);
        compressPass(ql);
        return;
    }
    decompressNode(n);
    unsigned char *lp = lpDelete(n->data, lpSeek(n->data, offset), NULL);
    nodeSetLp(n, lp, -1);
    ql->count--;
    compressIfInner(ql, n);
}

/* Insert value before (after = 0) or after the element at (n, offset). */
static void insertAt(Quicklist *ql, QlNode *n, long offset, const void *value, size_t len, int after) {
    int atTail = after && offset == n->count - 1;
    int atHead = !after && offset == 0;
    ql->count++;
    if (allowInsert(ql, n, len)) {
        decompressNode(n);
        unsigned char *lp =
            lpInsert(n->data, value, len, lpSeek(n->data, offset), after ? LP_AFTER : LP_BEFORE, NULL);
        nodeSetLp(n, lp, 1);
        compressIfInner(ql, n);
        return;
    }
    if (atTail && allowInsert(ql, n->next, len)) {
        QlNode *nx = n->next;
        decompressNode(nx);
        nodeSetLp(nx, lpPrepend(nx->data, value, len), 1);
        compressIfInner(ql, nx);
        return;
    }
    if (atHead && allowInsert(ql, n->prev, len)) {
        QlNode *pv = n->prev;
        decompressNode(pv);
        nodeSetLp(pv, lpAppend(pv->data, value, len), 1);
        compressIfInner(ql, pv);
        return;
    }
    if (atTail || atHead) {
        QlNode *nn = nodeNewFor(ql, value, len);
        if (atTail)
            linkAfter(ql, n, nn);
        else
            linkBefore(ql, n, nn);
        compressIfInner(ql, nn);
        compressPass(ql);
        return;
    }
    /* In the middle of a full node (or a large value): split it. */
    QlNode *right = splitNode(ql, n, after ? offset + 1 : offset);
    if (allowInsert(ql, n, len)) {
        nodeSetLp(n, lpAppend(n->data, value, len), 1);
    } else if (allowInsert(ql, right, len)) {
        nodeSetLp(right, lpPrepend(right->data, value, len), 1);
    } else {
        QlNode *nn = nodeNewFor(ql, value, len);
        linkAfter(ql, n, nn);
        compressIfInner(ql, nn);
    }
    /* The halves may now fit with their outer neighbours. */
    tryMerge(ql, right, right->next);
    compressIfInner(ql, right);
    if (!tryMerge(ql, n->prev, n)) compressIfInner(ql, n);
    compressPass(ql);
}

/* Insert so that the new element gets global index g (0..count). */
static void insertAtIndex(Quicklist *ql, unsigned long g, const void *value, size_t len) {
    if (g >= ql->count) {
        quicklistPush(ql, value, len, QL_TAIL);
        return;
    }
    long off;
    QlNode *n = locate(ql, (long)g, &off, NULL);
    insertAt(ql, n, off, value, len, 0);
}

/* Replace in place when the node keeps within its limits; 1 if done.  *p
 * (listpack position of the element) is updated. */
static int replaceInPlace(Quicklist *ql, QlNode *n, unsigned char **p, const void *value, size_t len) {
    if (isPlain(n)) {
        if (!isLarge(ql, len)) return 0;
        sdsFree((sds)n->data);
        n->data = (unsigned char *)sdsNewLen(value, len);
        n->sz = cap32(len);
        n->flags &= ~NODE_INCOMPRESSIBLE;
        *p = n->data;
        return 1;
    }
    if (isLarge(ql, len)) return 0;
    unsigned char *lp = n->data;
    unsigned char *nx = lpNext(lp, *p);
    size_t old = (size_t)((nx ? nx : lp + n->sz - 1) - *p);
    if (n->count > 1 && n->sz - old + entryBound(len) > sizeLimit(ql->fill)) return 0;
    nodeSetLp(n, lpReplace(lp, p, value, len), 0);
    return 1;
}

static void replaceAt(Quicklist *ql, QlNode *n, long offset, unsigned long g, const void *value, size_t len) {
    decompressNode(n);
    unsigned char *p = isPlain(n) ? n->data : lpSeek(n->data, offset);
    if (replaceInPlace(ql, n, &p, value, len)) {
        compressIfInner(ql, n);
        return;
    }
    deleteAt(ql, n, offset);
    insertAtIndex(ql, g, value, len);
}

/* ---- Bare listpacks (loans) ---- */

_Static_assert(sizeof(Quicklist) <= sizeof(((QuicklistLoan *)0)->hdr), "loan header too small");

#define SPARE_NODES 4
static QlNode *spareNodes[SPARE_NODES];
static int spareCount;

static QlNode *takeSpare(void) { return spareCount ? spareNodes[--spareCount] : xmalloc(sizeof(QlNode)); }

static void putSpare(QlNode *n) {
    if (spareCount < SPARE_NODES) spareNodes[spareCount++] = n;
    else xfree(n);
}

Quicklist *quicklistLend(QuicklistLoan *loan, unsigned char *lp, int fill, int compressDepth) {
    Quicklist *ql = (Quicklist *)loan->hdr;
    memset(ql, 0, sizeof(*ql));
    quicklistSetOptions(ql, fill, compressDepth);
    loan->node = NULL;
    loan->emptyLp = NULL;
    unsigned long n = lpLength(lp);
    if (n == 0) { /* no empty nodes: the list starts without one */
        loan->emptyLp = lp;
        return ql;
    }
    QlNode *node = takeSpare();
    memset(node, 0, sizeof(*node));
    node->data = lp;
    node->sz = (uint32_t)lpBytes(lp);
    node->count = (uint16_t)n;
    ql->head = ql->tail = node;
    ql->count = n;
    ql->nodes = 1;
    loan->node = node;
    return ql;
}

Quicklist *quicklistEndLoan(QuicklistLoan *loan, unsigned char **lp) {
    Quicklist *ql = (Quicklist *)loan->hdr;
    QlNode *lent = loan->node; /* freed by the quicklist unless still linked */
    if (ql->nodes > 1 || (ql->nodes == 1 && isPlain(ql->head))) {
        Quicklist *heap = xmalloc(sizeof(Quicklist));
        *heap = *ql;
        if (loan->emptyLp) lpFree(loan->emptyLp);
        return heap;
    }
    if (ql->nodes == 0) {
        *lp = loan->emptyLp ? loan->emptyLp : lpNew(0);
        return NULL;
    }
    QlNode *n = ql->head;
    decompressNode(n);
    *lp = n->data;
    if (loan->emptyLp) lpFree(loan->emptyLp);
    (void)lent; /* n is lent itself, or a node the quicklist made (lent was freed) */
    putSpare(n);
    return NULL;
}

unsigned char *quicklistToListpack(Quicklist *ql) {
    if (ql->nodes != 1 || isPlain(ql->head)) return NULL;
    QlNode *n = ql->head;
    size_t sz = rawLen(n);
    if (sz * 2 > sizeLimit(ql->fill)) return NULL;
    if (ql->fill >= 0 && (long)n->count * 2 > ql->fill) return NULL;
    decompressNode(n);
    unsigned char *lp = n->data;
    putSpare(n);
    xfree(ql);
    return lp;
}

/* ---- Public API ---- */

Quicklist *quicklistCreate(int fill, int compressDepth) {
    Quicklist *ql = xcalloc(sizeof(Quicklist));
    quicklistSetOptions(ql, fill, compressDepth);
    return ql;
}

void quicklistSetOptions(Quicklist *ql, int fill, int compressDepth) {
    if (fill > QL_FILL_MAX) fill = QL_FILL_MAX;
    if (fill < QL_FILL_MIN) fill = QL_FILL_MIN;
    if (compressDepth < 0) compressDepth = 0;
    if (compressDepth > QL_COMPRESS_MAX) compressDepth = QL_COMPRESS_MAX;
    ql->fill = (int16_t)fill;
    if (ql->compress == compressDepth) return;
    ql->compress = (uint16_t)compressDepth;
    /* Bring every node in line with the new depth. */
    unsigned long i = 0;
    for (QlNode *n = ql->head; n; n = n->next, i++) {
        int end = i < ql->compress || i + ql->compress >= ql->nodes;
        if (ql->compress == 0 || end)
            decompressNode(n);
        else
            compressIfInner(ql, n);
    }
}

void quicklistRelease(Quicklist *ql) {
    if (!ql) return;
    QlNode *n = ql->head;
    while (n) {
        QlNode *next = n->next;
        nodeFree(n);
        n = next;
    }
    xfree(ql);
}

Quicklist *quicklistDup(const Quicklist *ql) {
    Quicklist *copy = xcalloc(sizeof(Quicklist));
    copy->fill = ql->fill;
    copy->compress = ql->compress;
    for (const QlNode *n = ql->head; n; n = n->next) {
        QlNode *c = xcalloc(sizeof(QlNode));
        *c = *n;
        c->flags &= ~NODE_PINNED;
        if (n->flags & NODE_COMPRESSED) {
            size_t bytes = sizeof(LzfBlob) + ((const LzfBlob *)n->data)->clen;
            c->data = xmalloc(bytes);
            memcpy(c->data, n->data, bytes);
        } else if (isPlain(n)) {
            c->data = (unsigned char *)sdsDup((sds)n->data);
        } else {
            c->data = xmalloc(n->sz);
            memcpy(c->data, n->data, n->sz);
        }
        linkBefore(copy, NULL, c);
        copy->count += c->count;
    }
    /* A node pinned by an iterator of the source may be raw but inner. */
    for (QlNode *n = copy->head; n; n = n->next)
        compressIfInner(copy, n);
    return copy;
}

unsigned long quicklistCount(const Quicklist *ql) { return ql->count; }

unsigned long quicklistNodeCount(const Quicklist *ql) { return ql->nodes; }

size_t quicklistMemUsage(const Quicklist *ql) {
    size_t total = xmallocSize((void *)ql);
    for (const QlNode *n = ql->head; n; n = n->next) {
        total += xmallocSize((void *)n);
        if (isPlain(n) && !(n->flags & NODE_COMPRESSED))
            total += sdsAllocSize((sds)n->data);
        else
            total += xmallocSize(n->data);
    }
    return total;
}

void quicklistPush(Quicklist *ql, const void *value, size_t len, int where) {
    QlNode *end = where == QL_HEAD ? ql->head : ql->tail;
    ql->count++;
    if (allowInsert(ql, end, len)) {
        decompressNode(end);
        unsigned char *lp =
            where == QL_HEAD ? lpPrepend(end->data, value, len) : lpAppend(end->data, value, len);
        nodeSetLp(end, lp, 1);
        return;
    }
    QlNode *n = nodeNewFor(ql, value, len);
    if (where == QL_HEAD)
        linkAfter(ql, NULL, n);
    else
        linkBefore(ql, NULL, n);
    compressPass(ql);
}

/* Remove the element at the head or tail; *out (if not NULL) receives it
 * as a new sds.  0 if the list is empty. */
static int popEnd(Quicklist *ql, int where, sds *out) {
    QlNode *n = where == QL_HEAD ? ql->head : ql->tail;
    if (!n) return 0;
    decompressNode(n);
    if (isPlain(n)) {
        if (out) *out = (sds)n->data;
        else sdsFree((sds)n->data);
        n->data = NULL;
        unlinkNode(ql, n);
        xfree(n);
        ql->count--;
        compressPass(ql);
        return 1;
    }
    unsigned char *p = where == QL_HEAD ? lpFirst(n->data) : lpLast(n->data);
    if (out) *out = lpValueSds(p);
    if (n->count == 1) {
        deleteNode(ql, n);
        compressPass(ql);
        return 1;
    }
    nodeSetLp(n, lpDelete(n->data, p, NULL), -1);
    ql->count--;
    return 1;
}

int quicklistPop(Quicklist *ql, int where, sds *out) { return popEnd(ql, where, out); }

int quicklistPeek(Quicklist *ql, int where, QlEntry *out) {
    return quicklistIndex(ql, where == QL_HEAD ? 0 : -1, out);
}

void quicklistDelEnd(Quicklist *ql, int where) { popEnd(ql, where, NULL); }

int quicklistIndex(Quicklist *ql, long index, QlEntry *out) {
    long off;
    QlNode *n = locate(ql, index, &off, NULL);
    if (!n) return 0;
    size_t bytes;
    unsigned char *raw = readView(n, &bytes);
    fillEntry(out, n, raw, bytes, isPlain(n) ? raw : lpSeek(raw, off), off);
    return 1;
}

int quicklistReplaceAtIndex(Quicklist *ql, long index, const void *value, size_t len) {
    long off;
    unsigned long g;
    QlNode *n = locate(ql, index, &off, &g);
    if (!n) return 0;
    replaceAt(ql, n, off, g, value, len);
    return 1;
}

int quicklistDelRange(Quicklist *ql, long start, long count) {
    if (count <= 0) return 0;
    long off;
    unsigned long g;
    QlNode *n = locate(ql, start, &off, &g);
    if (!n) return 0;
    unsigned long extent = (unsigned long)count;
    if (extent > ql->count - g) extent = ql->count - g;

    /* L: last node kept before the gap, R: first node kept after it. */
    QlNode *left = off > 0 ? n : n->prev, *right = NULL;
    while (extent > 0) {
        QlNode *next = n->next;
        unsigned long del = (unsigned long)(n->count - off);
        if (del > extent) del = extent;
        if (off == 0 && del == n->count) {
            deleteNode(ql, n);
        } else {
            decompressNode(n);
            nodeSetLp(n, lpDeleteRange(n->data, off, del), -(long)del);
            ql->count -= del;
            compressIfInner(ql, n);
            if (n != left) right = n;
        }
        extent -= del;
        off = 0;
        n = next;
    }
    if (!right) right = left ? left->next : ql->head;
    if (left && right && tryMerge(ql, left, right)) right = NULL;
    if (right) tryMerge(ql, right, right->next);
    if (left) tryMerge(ql, left->prev, left);
    compressPass(ql);
    return 1;
}

/* ---- Iterators ---- */

static void iterEnter(QuicklistIter *it, QlNode *n, long offset) {
    it->node = n;
    it->pos = NULL;
    it->offset = offset;
    if (!n) return;
    decompressNode(n);
    n->flags |= NODE_PINNED;
}

/* Unpin the current node; with merge, fold it into the node behind the
 * iterator when it lost elements and they now fit together. */
static void iterLeave(QuicklistIter *it, int merge) {
    QlNode *n = it->node;
    Quicklist *ql = it->ql;
    it->node = NULL;
    it->pos = NULL;
    if (!n) return;
    n->flags &= ~NODE_PINNED;
    QlNode *merged = NULL;
    if (merge && it->modified) merged = it->forward ? tryMerge(ql, n->prev, n) : tryMerge(ql, n, n->next);
    it->modified = 0;
    if (merged)
        compressPass(ql);
    else
        compressIfInner(ql, n);
}

QuicklistIter *quicklistIterAt(Quicklist *ql, long startIndex, int direction) {
    long off;
    unsigned long g;
    QlNode *n = locate(ql, startIndex, &off, &g);
    if (!n) return NULL;
    QuicklistIter *it = xcalloc(sizeof(QuicklistIter));
    it->ql = ql;
    it->forward = direction == QL_HEAD;
    it->idx = (long)g;
    it->lastIdx = -1;
    iterEnter(it, n, off);
    return it;
}

QuicklistIter *quicklistIter(Quicklist *ql, int direction) {
    QuicklistIter *it = xcalloc(sizeof(QuicklistIter));
    it->ql = ql;
    it->forward = direction == QL_HEAD;
    it->lastIdx = -1;
    if (ql->count == 0) return it;
    if (it->forward) {
        it->idx = 0;
        iterEnter(it, ql->head, 0);
    } else {
        it->idx = (long)ql->count - 1;
        iterEnter(it, ql->tail, ql->tail->count - 1);
    }
    return it;
}

int quicklistNext(QuicklistIter *it, QlEntry *e) {
    Quicklist *ql = it->ql;
    if (it->seek) {
        it->seek = 0;
        if (it->idx >= 0 && (unsigned long)it->idx < ql->count) {
            long off;
            QlNode *n = locate(ql, it->idx, &off, NULL);
            iterEnter(it, n, off);
        }
    }
    while (it->node) {
        QlNode *n = it->node;
        if (it->offset >= 0 && it->offset < n->count) {
            unsigned char *p;
            if (isPlain(n))
                p = n->data;
            else
                p = it->pos ? it->pos : lpSeek(n->data, it->offset);
            fillEntry(e, n, n->data, isPlain(n) ? sdsLen((sds)n->data) : n->sz, p, it->offset);
            it->lastIdx = it->idx;
            if (it->forward) {
                it->offset++;
                it->idx++;
                it->pos = (!isPlain(n) && it->offset < n->count) ? lpNext(n->data, p) : NULL;
            } else {
                it->offset--;
                it->idx--;
                it->pos = (!isPlain(n) && it->offset >= 0) ? lpPrev(n->data, p) : NULL;
            }
            return 1;
        }
        QlNode *nx = it->forward ? n->next : n->prev;
        iterLeave(it, 1);
        if (nx) iterEnter(it, nx, it->forward ? 0 : nx->count - 1);
    }
    return 0;
}

void quicklistIterDelete(QuicklistIter *it, QlEntry *e) {
    Quicklist *ql = it->ql;
    QlNode *n = e->node;
    if (n != it->node) corrupt("quicklistIterDelete: entry is not the iterator's");
    it->idx = it->forward ? it->lastIdx : it->lastIdx - 1;
    it->modified = 1;
    if (n->count == 1) {
        QlNode *nx = it->forward ? n->next : n->prev;
        n->flags &= ~NODE_PINNED;
        it->node = NULL;
        deleteNode(ql, n);
        if (nx) iterEnter(it, nx, it->forward ? 0 : nx->count - 1);
        compressPass(ql);
        return;
    }
    unsigned char *newp = NULL;
    nodeSetLp(n, lpDelete(n->data, e->lpPos, &newp), -1);
    ql->count--;
    if (it->forward) {
        it->offset = e->offset;
        it->pos = newp;
    } else {
        it->offset = e->offset - 1;
        it->pos = it->offset < 0 ? NULL : newp ? lpPrev(n->data, newp) : lpLast(n->data);
    }
}

void quicklistIterReplace(QuicklistIter *it, QlEntry *e, const void *value, size_t len) {
    Quicklist *ql = it->ql;
    QlNode *n = e->node;
    unsigned char *p = e->lpPos;
    if (n == it->node && replaceInPlace(ql, n, &p, value, len)) {
        if (isPlain(n)) {
            it->pos = NULL;
        } else if (it->forward) {
            it->pos = it->offset < n->count ? lpNext(n->data, p) : NULL;
        } else {
            it->pos = it->offset >= 0 ? lpPrev(n->data, p) : NULL;
        }
        return;
    }
    long last = it->lastIdx;
    iterLeave(it, 0);
    replaceAt(ql, n, e->offset, (unsigned long)last, value, len);
    it->idx = it->forward ? last + 1 : last - 1;
    it->seek = 1;
}

static void iterInsert(QuicklistIter *it, QlEntry *e, const void *value, size_t len, int after) {
    long last = it->lastIdx;
    iterLeave(it, 0);
    insertAt(it->ql, e->node, e->offset, value, len, after);
    it->idx = it->forward ? last + 2 : last - 1;
    it->seek = 1;
}

void quicklistInsertBefore(QuicklistIter *it, QlEntry *e, const void *value, size_t len) {
    iterInsert(it, e, value, len, 0);
}

void quicklistInsertAfter(QuicklistIter *it, QlEntry *e, const void *value, size_t len) {
    iterInsert(it, e, value, len, 1);
}

void quicklistIterRelease(QuicklistIter *it) {
    if (!it) return;
    iterLeave(it, 1);
    xfree(it);
}

int quicklistEntryEquals(const QlEntry *e, const void *s, size_t len) {
    if (e->str) return e->len == len && (len == 0 || memcmp(e->str, s, len) == 0);
    char buf[LP_INTBUF_SIZE];
    int n = longLongToString(buf, sizeof(buf), e->ival);
    return n > 0 && (size_t)n == len && memcmp(buf, s, len) == 0;
}

/* ---- Node-level access ---- */

int quicklistForEachNode(Quicklist *ql, QuicklistNodeFn fn, void *ctx) {
    for (QlNode *n = ql->head; n; n = n->next) {
        int rc;
        if (n->flags & NODE_COMPRESSED) {
            const LzfBlob *b = (const LzfBlob *)n->data;
            unsigned char *tmp = xmalloc(b->rawLen ? b->rawLen : 1);
            inflateBlob(b, tmp);
            rc = fn(ctx, isPlain(n), tmp, b->rawLen);
            xfree(tmp);
        } else {
            rc = fn(ctx, isPlain(n), n->data, rawLen(n));
        }
        if (rc) return rc;
    }
    return 0;
}

void quicklistAppendListpack(Quicklist *ql, unsigned char *lp) {
    unsigned long len = lpLength(lp);
    if (len == 0 || len > UINT16_MAX) {
        /* Too many for one node's counter: add the elements one by one. */
        for (unsigned char *p = lpFirst(lp); p; p = lpNext(lp, p)) {
            sds v = lpValueSds(p);
            quicklistPush(ql, v, sdsLen(v), QL_TAIL);
            sdsFree(v);
        }
        lpFree(lp);
        return;
    }
    QlNode *n = xcalloc(sizeof(QlNode));
    nodeSetLp(n, lp, (long)len);
    linkBefore(ql, NULL, n);
    ql->count += len;
    compressPass(ql);
}

void quicklistAppendPlain(Quicklist *ql, const void *value, size_t len) {
    linkBefore(ql, NULL, nodeNewPlain(value, len));
    ql->count++;
    compressPass(ql);
}

void quicklistGetStats(const Quicklist *ql, QuicklistStats *st) {
    memset(st, 0, sizeof(*st));
    for (const QlNode *n = ql->head; n; n = n->next) {
        st->nodes++;
        if (n->flags & NODE_COMPRESSED) {
            st->compressed++;
            st->storedBytes += sizeof(LzfBlob) + ((const LzfBlob *)n->data)->clen;
        } else {
            st->storedBytes += rawLen(n);
        }
        if (isPlain(n)) st->plain++;
        if (n->count > st->maxNodeCount) st->maxNodeCount = n->count;
        st->rawBytes += rawLen(n);
    }
}

static int validateNode(const QlNode *n) {
    if (n->count == 0) return 0;
    size_t len = rawLen(n);
    unsigned char *raw = n->data;
    if (n->flags & NODE_COMPRESSED) {
        raw = xmalloc(len ? len : 1);
        inflateBlob((const LzfBlob *)n->data, raw);
    }
    int ok;
    if (isPlain(n))
        ok = n->count == 1 && n->sz == cap32(len);
    else
        ok = len == n->sz && lpValidateIntegrity(raw, len, 1) && lpBytes(raw) == len &&
             lpLength(raw) == n->count;
    if (raw != n->data) xfree(raw);
    return ok;
}

int quicklistValidate(const Quicklist *ql) {
    unsigned long count = 0, nodes = 0;
    const QlNode *prev = NULL;
    for (const QlNode *n = ql->head; n; prev = n, n = n->next) {
        if (n->prev != prev || !validateNode(n)) return 0;
        count += n->count;
        nodes++;
    }
    if (prev != ql->tail || count != ql->count || nodes != ql->nodes) return 0;
    unsigned long i = 0;
    for (const QlNode *n = ql->head; n; n = n->next, i++) {
        int end = i < ql->compress || i + ql->compress >= nodes;
        int compressed = (n->flags & NODE_COMPRESSED) != 0;
        if (ql->compress == 0 || end) {
            if (compressed) return 0;
        } else if (!compressed && !(n->flags & (NODE_PINNED | NODE_INCOMPRESSIBLE))) {
            return 0;
        }
    }
    return 1;
}
