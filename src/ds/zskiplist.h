/* zskiplist.h -- the skiplist of a sorted set (no server headers).
 *
 * Nodes are ordered by (score, member bytes) with memcmp order on the common
 * prefix, shorter first.  Levels are random (p = 1/4, at most ZSL_MAXLEVEL);
 * each forward link carries a span (number of level-0 steps it jumps) so
 * ranks are O(log n); level 0 also has backward links.
 *
 * A node is ONE allocation: the header below, `level` links, then the
 * member bytes.  Its first field `htnext` is not used by the skiplist: it is
 * the chain link for an intrusive hash table (ds/htab.h) that indexes the
 * same nodes by member, so a sorted set stores every member once.
 *
 * Ranks are 1-based in this API (0 means "not found"). */
#ifndef CAIRN_ZSKIPLIST_H
#define CAIRN_ZSKIPLIST_H

#include <stddef.h>
#include <stdint.h>

#define ZSL_MAXLEVEL 32
#define ZSL_P 0.25

typedef struct zskiplistNode zskiplistNode;

typedef struct zskiplistLevel {
    zskiplistNode *forward;
    unsigned long span;
} zskiplistLevel;

struct zskiplistNode {
    void *htnext;              /* hash-table chain link; must stay first */
    double score;
    zskiplistNode *backward;
    uint32_t len;              /* member length */
    uint32_t level;            /* number of links */
    zskiplistLevel lv[];       /* then the member bytes */
};

typedef struct zskiplist {
    zskiplistNode *header, *tail;
    unsigned long length;
    int level;
} zskiplist;

/* Score range: min..max with exclusive flags. */
typedef struct zrangespec {
    double min, max;
    int minex, maxex;
} zrangespec;

/* Lex range.  A bound is -inf (kind -1), +inf (kind 1) or bytes (kind 0),
 * inclusive or exclusive. */
typedef struct zlexrangespec {
    const unsigned char *min, *max;
    size_t minlen, maxlen;
    int minkind, maxkind;
    int minex, maxex;
} zlexrangespec;

static inline unsigned char *zslMember(const zskiplistNode *n) { return (unsigned char *)&n->lv[n->level]; }

zskiplist *zslCreate(void);
/* Frees every node and the list. */
void zslFree(zskiplist *zsl);
/* Frees the list, but not its nodes: their owner frees them (a sorted
 * set through its hash table, whose bucket array names the nodes ahead of
 * time, where the list's own links would wait on each node in turn). */
void zslFreeListOnly(zskiplist *zsl);
/* Random level in 1..ZSL_MAXLEVEL (P(level > k) = 0.25^k). */
int zslRandomLevel(void);
/* Sets the random source used by zslRandomLevel (NULL = internal). */
void zslSetRandom(uint64_t (*rnd)(void));

/* Compare (score, member) of a node with the given pair: <0, 0, >0. */
int zslCompare(const zskiplistNode *n, double score, const unsigned char *m, size_t len);

/* Inserts a new node; the (score, member) pair must not already be there
 * (the caller ensures the member is absent).  Returns the node. */
zskiplistNode *zslInsert(zskiplist *zsl, double score, const unsigned char *m, size_t len);
/* Unlinks the node with this exact (score, member) and returns it (the
 * caller frees it with zslFreeNode), or NULL if absent. */
zskiplistNode *zslDelete(zskiplist *zsl, double score, const unsigned char *m, size_t len);
void zslFreeNode(zskiplistNode *n);
/* Changes the score of node n (currently at curscore) to newscore, moving
 * it if needed.  The node keeps its address. */
void zslUpdateScore(zskiplist *zsl, zskiplistNode *n, double newscore);

/* 1-based rank of (score, member), 0 if absent. */
unsigned long zslGetRank(zskiplist *zsl, double score, const unsigned char *m, size_t len);
/* Node at a 1-based rank, NULL if out of range. */
zskiplistNode *zslGetByRank(zskiplist *zsl, unsigned long rank);

/* Bound checks. */
int zslValueGteMin(double v, const zrangespec *r);
int zslValueLteMax(double v, const zrangespec *r);
int zslLexValueGteMin(const unsigned char *s, size_t len, const zlexrangespec *r);
int zslLexValueLteMax(const unsigned char *s, size_t len, const zlexrangespec *r);
/* 1 when the range can contain nothing. */
int zslScoreRangeEmpty(const zrangespec *r);
int zslLexRangeEmpty(const zlexrangespec *r);

/* First / last node in a range, NULL if none. */
zskiplistNode *zslFirstInRange(zskiplist *zsl, const zrangespec *r);
zskiplistNode *zslLastInRange(zskiplist *zsl, const zrangespec *r);
zskiplistNode *zslFirstInLexRange(zskiplist *zsl, const zlexrangespec *r);
zskiplistNode *zslLastInLexRange(zskiplist *zsl, const zlexrangespec *r);

/* Delete nodes with 1-based ranks start..end (inclusive), calling
 * fn(priv, node) on each unlinked node (fn must free it).  Returns the
 * number removed. */
unsigned long zslDeleteRangeByRank(zskiplist *zsl, unsigned long start, unsigned long end,
                                   void (*fn)(void *priv, zskiplistNode *n), void *priv);
unsigned long zslDeleteRangeByScore(zskiplist *zsl, const zrangespec *r,
                                    void (*fn)(void *priv, zskiplistNode *n), void *priv);
unsigned long zslDeleteRangeByLex(zskiplist *zsl, const zlexrangespec *r,
                                  void (*fn)(void *priv, zskiplistNode *n), void *priv);

#endif
