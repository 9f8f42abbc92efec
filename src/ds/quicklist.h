/* quicklist.h -- the list type: a doubly linked list of listpack nodes.
 *
 * A Quicklist is a chain of nodes; each node holds either a listpack of
 * several elements ("packed" node) or one large element on its own ("plain"
 * node).  How full a packed node may get is the `fill` option
 * (list-max-listpack-size):
 *   - fill > 0: at most `fill` elements per node, and a node's listpack stays
 *     within an 8 KB safety limit (so huge counts do not make huge nodes);
 *   - fill -1..-5: a node's listpack stays within 4/8/16/32/64 KB;
 *   - fill 0: one element per node.
 * An element of at least the packed threshold (1 GB unless
 * quicklistSetPackedThreshold changed it, as Redis 7.0's DEBUG
 * QUICKLIST-PACKED-THRESHOLD does) lives in a plain node; a smaller one
 * that alone exceeds the node size limit gets a packed node of its own.
 * Nodes that become small after deletions are merged with a neighbour
 * when both fit in one node.
 *
 * Compression (list-compress-depth): with depth N > 0, the N nodes at each
 * end are always raw; every other node is kept LZF-compressed when its
 * listpack is at least 48 bytes and compression saves bytes.  Reads of a
 * compressed node decompress on access; an iterator keeps its current node
 * raw while it sits on it and compresses it again when it moves on.
 *
 * Entries (QlEntry) are views into the list: valid until the next change to
 * the list, or, for an entry returned by quicklistIndex from a compressed
 * node, until the next quicklist call in the same thread.
 *
 * Only one iterator per list at a time may modify the list; read-only
 * iterators may nest when the list is not compressed.
 *
 * Not thread-safe.  All memory comes from alloc.h. */
#ifndef CAIRN_QUICKLIST_H
#define CAIRN_QUICKLIST_H

#include <stddef.h>

#include "ds/sds.h"

typedef struct Quicklist Quicklist;
typedef struct QuicklistIter QuicklistIter;

typedef struct QlEntry {      /* a view of one element (valid until the next change) */
    const unsigned char *str; /* bytes, or NULL for an integer */
    size_t len;               /* length of str */
    long long ival;           /* the value when str == NULL */
    /* private: node and position for iterator operations */
    void *node;           /* the node holding the element */
    unsigned char *lpPos; /* element inside the node's listpack (plain: the bytes) */
    long offset;          /* index of the element inside its node */
} QlEntry;

#define QL_HEAD 0
#define QL_TAIL 1

/* Limits applied to the options (as Redis clamps them). */
#define QL_FILL_MAX (1 << 15)
#define QL_FILL_MIN (-5)
#define QL_COMPRESS_MAX 65535

/* Set the size from which an element gets a plain node (process-wide);
 * 0 restores the 1 GB default.  Returns 0 (nothing changed) above 4 GB - 1 MB. */
int quicklistSetPackedThreshold(unsigned long long sz);

/* A new empty list; the caller owns it (quicklistRelease). */
Quicklist *quicklistCreate(int fill, int compressDepth);
/* Change the options; applies to later changes (existing nodes stay). */
void quicklistSetOptions(Quicklist *ql, int fill, int compressDepth);
void quicklistRelease(Quicklist *ql);
/* A deep copy; the caller owns it. */
Quicklist *quicklistDup(const Quicklist *ql);
/* Number of elements. */
unsigned long quicklistCount(const Quicklist *ql);
/* Number of nodes. */
unsigned long quicklistNodeCount(const Quicklist *ql);
/* Bytes reserved for the list (header, nodes and their data). */
size_t quicklistMemUsage(const Quicklist *ql);

/* Add a copy of value at the head (QL_HEAD) or tail (QL_TAIL). */
void quicklistPush(Quicklist *ql, const void *value, size_t len, int where);
/* Pop from head/tail into a new sds (caller owns); 0 if empty. */
int quicklistPop(Quicklist *ql, int where, sds *out);
/* The element at the head or tail as a view (see QlEntry); 0 if empty.
 * Popping into a reply: peek, reply from the view, then quicklistDelEnd --
 * no copy of the element. */
int quicklistPeek(Quicklist *ql, int where, QlEntry *out);
/* Remove the element at the head or tail (the list must not be empty). */
void quicklistDelEnd(Quicklist *ql, int where);
/* Element at index (negative from the tail) into *out; 0 out of range. */
int quicklistIndex(Quicklist *ql, long index, QlEntry *out);
/* Replace the element at index with a copy of value; 0 out of range. */
int quicklistReplaceAtIndex(Quicklist *ql, long index, const void *value, size_t len);
/* Delete up to count elements from start on (start may be negative; a start
 * out of range deletes nothing; a negative start deletes at most up to the
 * tail).  Returns 1 if something was deleted. */
int quicklistDelRange(Quicklist *ql, long start, long count);

/* Iterators.  direction QL_HEAD walks from head towards tail, QL_TAIL from
 * tail towards head.  The caller owns the iterator (quicklistIterRelease). */
/* Start at startIndex (negative from the tail); NULL if out of range. */
QuicklistIter *quicklistIterAt(Quicklist *ql, long startIndex, int direction);
/* Start at the head (QL_HEAD) or the tail (QL_TAIL). */
QuicklistIter *quicklistIter(Quicklist *ql, int direction);
/* Next element into *e; 0 at the end. */
int quicklistNext(QuicklistIter *it, QlEntry *e);
/* Delete e (the entry last returned by quicklistNext); the next
 * quicklistNext returns the element that followed e in the direction. */
void quicklistIterDelete(QuicklistIter *it, QlEntry *e);
/* Replace e's value (e as last returned by quicklistNext); iteration
 * continues after e.  *e is stale afterwards. */
void quicklistIterReplace(QuicklistIter *it, QlEntry *e, const void *value, size_t len);
/* Insert a copy of value before/after e (towards the head/tail), e as last
 * returned by quicklistNext.  Iteration continues with the element that
 * followed e in the iteration direction (the new element is not returned).
 * *e is stale afterwards. */
void quicklistInsertBefore(QuicklistIter *it, QlEntry *e, const void *value, size_t len);
void quicklistInsertAfter(QuicklistIter *it, QlEntry *e, const void *value, size_t len);
void quicklistIterRelease(QuicklistIter *it);

/* 1 if the entry's value equals the bytes s (integers compare by their
 * decimal text, as Redis does). */
int quicklistEntryEquals(const QlEntry *e, const void *s, size_t len);

/* ---- Bare listpacks ----
 *
 * A small list can be kept as a bare listpack (no quicklist header, no
 * node).  To run any quicklist operation on it, lend it: quicklistLend
 * wraps it, in the caller's QuicklistLoan, as a one-node quicklist, and
 * quicklistEndLoan gives back what the list became.  While lent, the
 * listpack belongs to the quicklist (it may move or be freed); iterators
 * must be released before the loan ends.  Not thread-safe (a small pool of
 * spare nodes is shared). */
typedef struct QuicklistLoan {
    unsigned long long hdr[4]; /* the quicklist header lives here */
    void *node;                /* the node lent with the listpack, or NULL */
    unsigned char *emptyLp;    /* an empty listpack lent without a node */
} QuicklistLoan;

/* A quicklist view of lp (fill and depth as for quicklistCreate). */
Quicklist *quicklistLend(QuicklistLoan *loan, unsigned char *lp, int fill, int compressDepth);
/* End the loan.  Returns NULL when the list is still one packed node:
 * *lp is its listpack (an empty one when the list emptied).  Otherwise the
 * list outgrew a listpack and the result is a heap quicklist the caller
 * owns from now on (*lp is not set). */
Quicklist *quicklistEndLoan(QuicklistLoan *loan, unsigned char **lp);
/* When ql is one packed node whose listpack would still fit the node limits
 * at twice its size and count (Redis 7.2's rule for going back), free ql and
 * return that listpack; else NULL (ql unchanged). */
unsigned char *quicklistToListpack(Quicklist *ql);

/* ---- Node-level access for persistence and DEBUG ---- */

/* Called for each node from head to tail with its raw bytes: plain = 1 for a
 * single-element node (data = the element), 0 for a listpack.  Return
 * nonzero to stop; quicklistForEachNode then returns that value. */
typedef int (*QuicklistNodeFn)(void *ctx, int plain, const unsigned char *data, size_t len);
int quicklistForEachNode(Quicklist *ql, QuicklistNodeFn fn, void *ctx);
/* Append a whole listpack as a new tail node (RDB loading).  Takes
 * ownership of lp; an empty lp is freed and nothing is added. */
void quicklistAppendListpack(Quicklist *ql, unsigned char *lp);
/* Append a copy of value as a new plain tail node (RDB loading). */
void quicklistAppendPlain(Quicklist *ql, const void *value, size_t len);

typedef struct QuicklistStats {
    unsigned long nodes;        /* nodes */
    unsigned long compressed;   /* nodes currently compressed */
    unsigned long plain;        /* plain (single large element) nodes */
    unsigned long maxNodeCount; /* most elements in one node */
    size_t rawBytes;            /* sum of the uncompressed node sizes */
    size_t storedBytes;         /* sum of the bytes as stored (compressed or not) */
} QuicklistStats;
void quicklistGetStats(const Quicklist *ql, QuicklistStats *st);

/* Check every invariant (counts, sizes, links, compression of inner nodes);
 * 1 if all hold.  For tests; O(total bytes). */
int quicklistValidate(const Quicklist *ql);

#endif
