/* zskiplist.c -- see zskiplist.h. */
#include "ds/zskiplist.h"

#include <string.h>

#include "ds/alloc.h"

static uint64_t (*zslRand)(void);
static uint64_t zslState = 0x9E3779B97F4A7C15ULL;

static uint64_t zslInternalRand(void) {
    /* xorshift64* */
    uint64_t x = zslState;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    zslState = x;
    return x * 0x2545F4914F6CDD1DULL;
}

void zslSetRandom(uint64_t (*rnd)(void)) { zslRand = rnd; }

int zslRandomLevel(void) {
    uint64_t r = zslRand ? zslRand() : zslInternalRand();
    int level = 1;
    /* Two random bits per level: continue with probability 1/4. */
    while (level < ZSL_MAXLEVEL && (r & 3) == 0) {
        level++;
        r >>= 2;
    }
    return level;
}

static zskiplistNode *nodeCreate(int level, double score, const unsigned char *m, size_t len) {
    zskiplistNode *n = xmalloc(sizeof(zskiplistNode) + (size_t)level * sizeof(zskiplistLevel) + len);
    n->htnext = NULL;
    n->score = score;
    n->backward = NULL;
    n->len = (uint32_t)len;
    n->level = (uint32_t)level;
    if (len) memcpy(zslMember(n), m, len);
    return n;
}

void zslFreeNode(zskiplistNode *n) { xfree(n); }

zskiplist *zslCreate(void) {
    zskiplist *zsl = xmalloc(sizeof(*zsl));
    zsl->header = nodeCreate(ZSL_MAXLEVEL, 0, NULL, 0);
    for (int i = 0; i < ZSL_MAXLEVEL; i++) {
        zsl->header->lv[i].forward = NULL;
        zsl->header->lv[i].span = 0;
    }
    zsl->tail = NULL;
    zsl->length = 0;
    zsl->level = 1;
    return zsl;
}

void zslFree(zskiplist *zsl) {
    zskiplistNode *n = zsl->header->lv[0].forward;
    while (n) {
        zskiplistNode *next = n->lv[0].forward;
        xfree(n);
        n = next;
    }
    zslFreeListOnly(zsl);
}

void zslFreeListOnly(zskiplist *zsl) {
    xfree(zsl->header);
    xfree(zsl);
}

static int memberCmp(const unsigned char *a, size_t alen, const unsigned char *b, size_t blen) {
    size_t min = alen < blen ? alen : blen;
    int c = min ? memcmp(a, b, min) : 0;
    if (c) return c;
    return alen < blen ? -1 : (alen > blen ? 1 : 0);
}

int zslCompare(const zskiplistNode *n, double score, const unsigned char *m, size_t len) {
    if (n->score < score) return -1;
    if (n->score > score) return 1;
    return memberCmp(zslMember(n), n->len, m, len);
}

/* Fills update[] with the last node at each level strictly before
 * (score, m) and rank[] with its rank (0 for the header). */
static void findPath(zskiplist *zsl, double score, const unsigned char *m, size_t len, zskiplistNode **update,
                     unsigned long *rank) {
    zskiplistNode *x = zsl->header;
    for (int i = zsl->level - 1; i >= 0; i--) {
        rank[i] = i == zsl->level - 1 ? 0 : rank[i + 1];
        while (x->lv[i].forward && zslCompare(x->lv[i].forward, score, m, len) < 0) {
            rank[i] += x->lv[i].span;
            x = x->lv[i].forward;
        }
        update[i] = x;
    }
}

/* Links node x (with x->level links) after the path in update/rank. */
static void linkNode(zskiplist *zsl, zskiplistNode *x, zskiplistNode **update, unsigned long *rank) {
    int level = (int)x->level;
    if (level > zsl->level) {
        for (int i = zsl->level; i < level; i++) {
            rank[i] = 0;
            update[i] = zsl->header;
            update[i]->lv[i].span = zsl->length;
        }
        zsl->level = level;
    }
    for (int i = 0; i < level; i++) {
        x->lv[i].forward = update[i]->lv[i].forward;
        update[i]->lv[i].forward = x;
        x->lv[i].span = update[i]->lv[i].span - (rank[0] - rank[i]);
        update[i]->lv[i].span = (rank[0] - rank[i]) + 1;
    }
    for (int i = level; i < zsl->level; i++) update[i]->lv[i].span++;
    x->backward = update[0] == zsl->header ? NULL : update[0];
    if (x->lv[0].forward)
        x->lv[0].forward->backward = x;
    else
        zsl->tail = x;
    zsl->length++;
}

zskiplistNode *zslInsert(zskiplist *zsl, double score, const unsigned char *m, size_t len) {
    zskiplistNode *update[ZSL_MAXLEVEL];
    unsigned long rank[ZSL_MAXLEVEL];
    findPath(zsl, score, m, len, update, rank);
    zskiplistNode *x = nodeCreate(zslRandomLevel(), score, m, len);
    linkNode(zsl, x, update, rank);
    return x;
}

/* Unlinks x given the update path (update[i] precedes x at level i). */
static void unlinkNode(zskiplist *zsl, zskiplistNode *x, zskiplistNode **update) {
    for (int i = 0; i < zsl->level; i++) {
        if (update[i]->lv[i].forward == x) {
            update[i]->lv[i].span += x->lv[i].span - 1;
            update[i]->lv[i].forward = x->lv[i].forward;
        } else {
            update[i]->lv[i].span -= 1;
        }
    }
    if (x->lv[0].forward)
        x->lv[0].forward->backward = x->backward;
    else
        zsl->tail = x->backward;
    while (zsl->level > 1 && zsl->header->lv[zsl->level - 1].forward == NULL) zsl->level--;
    zsl->length--;
}

zskiplistNode *zslDelete(zskiplist *zsl, double score, const unsigned char *m, size_t len) {
    zskiplistNode *update[ZSL_MAXLEVEL];
    unsigned long rank[ZSL_MAXLEVEL];
    findPath(zsl, score, m, len, update, rank);
    zskiplistNode *x = update[0]->lv[0].forward;
    if (!x || zslCompare(x, score, m, len) != 0) return NULL;
    unlinkNode(zsl, x, update);
    return x;
}

void zslUpdateScore(zskiplist *zsl, zskiplistNode *n, double newscore) {
    zskiplistNode *update[ZSL_MAXLEVEL];
    unsigned long rank[ZSL_MAXLEVEL];
    /* Stays in place when the order with its neighbours is kept. */
    zskiplistNode *prev = n->backward, *next = n->lv[0].forward;
    const unsigned char *m = zslMember(n);
    if ((!prev || prev->score < newscore || (prev->score == newscore && memberCmp(zslMember(prev), prev->len, m, n->len) < 0)) &&
        (!next || next->score > newscore || (next->score == newscore && memberCmp(zslMember(next), next->len, m, n->len) > 0))) {
        n->score = newscore;
        return;
    }
    findPath(zsl, n->score, m, n->len, update, rank);
    unlinkNode(zsl, n, update);
    n->score = newscore;
    findPath(zsl, newscore, m, n->len, update, rank);
    linkNode(zsl, n, update, rank);
}

unsigned long zslGetRank(zskiplist *zsl, double score, const unsigned char *m, size_t len) {
    zskiplistNode *x = zsl->header;
    unsigned long rank = 0;
    for (int i = zsl->level - 1; i >= 0; i--) {
        while (x->lv[i].forward && zslCompare(x->lv[i].forward, score, m, len) <= 0) {
            rank += x->lv[i].span;
            x = x->lv[i].forward;
        }
        if (x != zsl->header && zslCompare(x, score, m, len) == 0) return rank;
    }
    return 0;
}

zskiplistNode *zslGetByRank(zskiplist *zsl, unsigned long rank) {
    if (rank == 0 || rank > zsl->length) return NULL;
    zskiplistNode *x = zsl->header;
    unsigned long traversed = 0;
    for (int i = zsl->level - 1; i >= 0; i--) {
        while (x->lv[i].forward && traversed + x->lv[i].span <= rank) {
            traversed += x->lv[i].span;
            x = x->lv[i].forward;
        }
        if (traversed == rank) return x;
    }
    return NULL;
}

int zslValueGteMin(double v, const zrangespec *r) { return r->minex ? v > r->min : v >= r->min; }
int zslValueLteMax(double v, const zrangespec *r) { return r->maxex ? v < r->max : v <= r->max; }

int zslScoreRangeEmpty(const zrangespec *r) {
    return r->min > r->max || (r->min == r->max && (r->minex || r->maxex));
}

/* Compare bytes s with a lex bound. */
static int lexCmpBound(const unsigned char *s, size_t len, const unsigned char *b, size_t blen, int kind) {
    if (kind < 0) return 1;  /* anything > -inf */
    if (kind > 0) return -1; /* anything < +inf */
    return memberCmp(s, len, b, blen);
}

int zslLexValueGteMin(const unsigned char *s, size_t len, const zlexrangespec *r) {
    int c = lexCmpBound(s, len, r->min, r->minlen, r->minkind);
    return r->minex ? c > 0 : c >= 0;
}

int zslLexValueLteMax(const unsigned char *s, size_t len, const zlexrangespec *r) {
    int c = lexCmpBound(s, len, r->max, r->maxlen, r->maxkind);
    return r->maxex ? c < 0 : c <= 0;
}

int zslLexRangeEmpty(const zlexrangespec *r) {
    if (r->minkind > 0 || r->maxkind < 0) return 1;
    if (r->minkind < 0 || r->maxkind > 0) return 0;
    int c = memberCmp(r->min, r->minlen, r->max, r->maxlen);
    return c > 0 || (c == 0 && (r->minex || r->maxex));
}

zskiplistNode *zslFirstInRange(zskiplist *zsl, const zrangespec *r) {
    if (zslScoreRangeEmpty(r)) return NULL;
    zskiplistNode *x = zsl->header;
    for (int i = zsl->level - 1; i >= 0; i--)
        while (x->lv[i].forward && !zslValueGteMin(x->lv[i].forward->score, r)) x = x->lv[i].forward;
    x = x->lv[0].forward;
    if (!x || !zslValueLteMax(x->score, r)) return NULL;
    return x;
}

zskiplistNode *zslLastInRange(zskiplist *zsl, const zrangespec *r) {
    if (zslScoreRangeEmpty(r)) return NULL;
    zskiplistNode *x = zsl->header;
    for (int i = zsl->level - 1; i >= 0; i--)
        while (x->lv[i].forward && zslValueLteMax(x->lv[i].forward->score, r)) x = x->lv[i].forward;
    if (x == zsl->header || !zslValueGteMin(x->score, r)) return NULL;
    return x;
}

zskiplistNode *zslFirstInLexRange(zskiplist *zsl, const zlexrangespec *r) {
    if (zslLexRangeEmpty(r)) return NULL;
    zskiplistNode *x = zsl->header;
    for (int i = zsl->level - 1; i >= 0; i--)
        while (x->lv[i].forward && !zslLexValueGteMin(zslMember(x->lv[i].forward), x->lv[i].forward->len, r))
            x = x->lv[i].forward;
    x = x->lv[0].forward;
    if (!x || !zslLexValueLteMax(zslMember(x), x->len, r)) return NULL;
    return x;
}

zskiplistNode *zslLastInLexRange(zskiplist *zsl, const zlexrangespec *r) {
    if (zslLexRangeEmpty(r)) return NULL;
    zskiplistNode *x = zsl->header;
    for (int i = zsl->level - 1; i >= 0; i--)
        while (x->lv[i].forward && zslLexValueLteMax(zslMember(x->lv[i].forward), x->lv[i].forward->len, r))
            x = x->lv[i].forward;
    if (x == zsl->header || !zslLexValueGteMin(zslMember(x), x->len, r)) return NULL;
    return x;
}

unsigned long zslDeleteRangeByRank(zskiplist *zsl, unsigned long start, unsigned long end,
                                   void (*fn)(void *priv, zskiplistNode *n), void *priv) {
    zskiplistNode *update[ZSL_MAXLEVEL];
    if (start == 0) start = 1;
    if (end > zsl->length) end = zsl->length;
    if (start > end) return 0;
    zskiplistNode *x = zsl->header;
    unsigned long traversed = 0, removed = 0;
    for (int i = zsl->level - 1; i >= 0; i--) {
        while (x->lv[i].forward && traversed + x->lv[i].span < start) {
            traversed += x->lv[i].span;
            x = x->lv[i].forward;
        }
        update[i] = x;
    }
    x = x->lv[0].forward;
    traversed++;
    while (x && traversed <= end) {
        zskiplistNode *next = x->lv[0].forward;
        unlinkNode(zsl, x, update);
        if (fn) fn(priv, x); else xfree(x);
        removed++;
        traversed++;
        x = next;
    }
    return removed;
}

/* Removes the nodes from x onwards while keep(x) holds; update is the path
 * before x. */
static unsigned long deleteWhile(zskiplist *zsl, zskiplistNode *x, zskiplistNode **update, int lex, const void *r,
                                 void (*fn)(void *priv, zskiplistNode *n), void *priv) {
    unsigned long removed = 0;
    while (x && (lex ? zslLexValueLteMax(zslMember(x), x->len, r) : zslValueLteMax(x->score, r))) {
        zskiplistNode *next = x->lv[0].forward;
        unlinkNode(zsl, x, update);
        if (fn) fn(priv, x); else xfree(x);
        removed++;
        x = next;
    }
    return removed;
}

unsigned long zslDeleteRangeByScore(zskiplist *zsl, const zrangespec *r,
                                    void (*fn)(void *priv, zskiplistNode *n), void *priv) {
    zskiplistNode *update[ZSL_MAXLEVEL];
    if (zslScoreRangeEmpty(r)) return 0;
    zskiplistNode *x = zsl->header;
    for (int i = zsl->level - 1; i >= 0; i--) {
        while (x->lv[i].forward && !zslValueGteMin(x->lv[i].forward->score, r)) x = x->lv[i].forward;
        update[i] = x;
    }
    return deleteWhile(zsl, x->lv[0].forward, update, 0, r, fn, priv);
}

unsigned long zslDeleteRangeByLex(zskiplist *zsl, const zlexrangespec *r,
                                  void (*fn)(void *priv, zskiplistNode *n), void *priv) {
    zskiplistNode *update[ZSL_MAXLEVEL];
    if (zslLexRangeEmpty(r)) return 0;
    zskiplistNode *x = zsl->header;
    for (int i = zsl->level - 1; i >= 0; i--) {
        while (x->lv[i].forward && !zslLexValueGteMin(zslMember(x->lv[i].forward), x->lv[i].forward->len, r))
            x = x->lv[i].forward;
        update[i] = x;
    }
    return deleteWhile(zsl, x->lv[0].forward, update, 1, r, fn, priv);
}
