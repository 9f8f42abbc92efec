/* module_zrange.c -- the sorted-set range iterators of the key API:
 * ZsetFirstInScoreRange, ZsetLastInScoreRange, ZsetFirstInLexRange,
 * ZsetLastInLexRange, ZsetRangeCurrentElement, ZsetRangeNext,
 * ZsetRangePrev, ZsetRangeEndReached, ZsetRangeStop.
 *
 * Starting a range takes the members in it (in (score, member) order, the
 * walk stopping at the range's end) into the key's ZRange, positioned at
 * its first or last; Next/Prev move along it and set "end reached" when
 * they would leave it, as Redis's do.  A range with no member starts at its
 * end.  The walk sees the set as it was when the range started (Redis's
 * iterator reads the live set; a module that changes the set while walking
 * it is on its own on both).
 *
 * Invariants: a key has at most one range (starting one stops the last);
 * closing the key stops it. */
#include <math.h>
#include <string.h>

#include "db/db.h"
#include "db/object.h"
#include "ds/alloc.h"
#include "module/module_int.h"
#include "types/zset.h"

typedef struct ZItem {
    sds member;
    double score;
} ZItem;

typedef struct ZRange {
    ZItem *items;
    long n, cap, pos;
    int ended;
    /* the bounds while collecting */
    int lex;
    double min, max;
    int minex, maxex;
    sds lmin, lmax; /* NULL: - / + */
    int lminex, lmaxex;
} ZRange;

void moduleZsetRangeFree(RedisModuleKey *k) {
    ZRange *r = k ? k->zrange : NULL;
    if (!r) return;
    for (long i = 0; i < r->n; i++) sdsFree(r->items[i].member);
    xfree(r->items);
    sdsFree(r->lmin);
    sdsFree(r->lmax);
    xfree(r);
    k->zrange = NULL;
}

static void RM_ZsetRangeStop(RedisModuleKey *k) { moduleZsetRangeFree(k); }

static kvobj *zsetOf(RedisModuleKey *k) {
    kvobj *o = k ? dbFind(k->db, k->key, sdsLen(k->key)) : NULL;
    if (!o || kvIsExpired(o) || kvType(o) != OBJ_ZSET) return NULL;
    return o;
}

static int lexCmp(const unsigned char *m, size_t len, const sds b) {
    size_t bl = sdsLen(b);
    int c = memcmp(m, b, len < bl ? len : bl);
    if (c) return c;
    return len < bl ? -1 : len > bl;
}

/* Visitor: 1 to go on; appends members in range, stops past the end. */
static int collect(void *priv, const unsigned char *m, size_t len, double score) {
    ZRange *r = priv;
    if (r->lex) {
        if (r->lmax) {
            int c = lexCmp(m, len, r->lmax);
            if (c > 0 || (c == 0 && r->lmaxex)) return 0;
        }
        if (r->lmin) {
            int c = lexCmp(m, len, r->lmin);
            if (c < 0 || (c == 0 && r->lminex)) return 1;
        }
    } else {
        if (score > r->max || (score == r->max && r->maxex)) return 0;
        if (score < r->min || (score == r->min && r->minex)) return 1;
    }
    if (r->n == r->cap) {
        r->cap = r->cap ? r->cap * 2 : 16;
        r->items = xrealloc(r->items, sizeof(ZItem) * (size_t)r->cap);
    }
    r->items[r->n].member = sdsNewLen((const char *)m, len);
    r->items[r->n].score = score;
    r->n++;
    return 1;
}

static int startRange(RedisModuleKey *k, kvobj *o, ZRange *r, int last) {
    unsigned long len = zsetLength(o);
    if (len) zsetForEachByRank(o, 0, (long)len - 1, 0, collect, r);
    r->ended = r->n == 0;
    r->pos = last ? r->n - 1 : 0;
    k->zrange = r;
    return REDISMODULE_OK;
}

static int scoreRange(RedisModuleKey *k, double min, double max, int minex, int maxex, int last) {
    kvobj *o = zsetOf(k);
    if (!o || isnan(min) || isnan(max)) return REDISMODULE_ERR;
    moduleZsetRangeFree(k);
    ZRange *r = xcalloc(sizeof(*r));
    r->min = min;
    r->max = max;
    r->minex = minex;
    r->maxex = maxex;
    return startRange(k, o, r, last);
}

static int RM_ZsetFirstInScoreRange(RedisModuleKey *k, double min, double max, int minex, int maxex) {
    return scoreRange(k, min, max, minex, maxex, 0);
}

static int RM_ZsetLastInScoreRange(RedisModuleKey *k, double min, double max, int minex, int maxex) {
    return scoreRange(k, min, max, minex, maxex, 1);
}

/* "-" / "+" (*out NULL), "[x" or "(x": 0, else -1. */
static int parseLex(const RedisModuleString *s, int isMax, sds *out, int *ex) {
    const char *p = s->s;
    size_t len = sdsLen(s->s);
    *out = NULL;
    *ex = 0;
    if (len == 1 && p[0] == (isMax ? '+' : '-')) return 0;
    if (len == 1 && p[0] == (isMax ? '-' : '+')) {
        /* the opposite infinity: an empty range */
        *out = sdsEmpty();
        *ex = 2;
        return 0;
    }
    if (len >= 1 && (p[0] == '[' || p[0] == '(')) {
        *ex = p[0] == '(';
        *out = sdsNewLen(p + 1, len - 1);
        return 0;
    }
    return -1;
}

static int lexRange(RedisModuleKey *k, RedisModuleString *min, RedisModuleString *max, int last) {
    kvobj *o = zsetOf(k);
    if (!o || !min || !max) return REDISMODULE_ERR;
    ZRange *r = xcalloc(sizeof(*r));
    r->lex = 1;
    if (parseLex(min, 0, &r->lmin, &r->lminex) == -1 || parseLex(max, 1, &r->lmax, &r->lmaxex) == -1) {
        sdsFree(r->lmin);
        sdsFree(r->lmax);
        xfree(r);
        return REDISMODULE_ERR;
    }
    moduleZsetRangeFree(k);
    if (r->lminex == 2 || r->lmaxex == 2) { /* min "+" or max "-": nothing */
        r->ended = 1;
        k->zrange = r;
        return REDISMODULE_OK;
    }
    return startRange(k, o, r, last);
}

static int RM_ZsetFirstInLexRange(RedisModuleKey *k, RedisModuleString *min, RedisModuleString *max) {
    return lexRange(k, min, max, 0);
}

static int RM_ZsetLastInLexRange(RedisModuleKey *k, RedisModuleString *min, RedisModuleString *max) {
    return lexRange(k, min, max, 1);
}

static RedisModuleString *RM_ZsetRangeCurrentElement(RedisModuleKey *k, double *score) {
    ZRange *r = k ? k->zrange : NULL;
    /* After the end it is still the member the walk stopped at (Redis's
     * iterator keeps it); none in an empty range. */
    if (!r || r->pos < 0 || r->pos >= r->n) return NULL;
    if (score) *score = r->items[r->pos].score;
    return modStringNew(k->ctx, r->items[r->pos].member, sdsLen(r->items[r->pos].member));
}

static int RM_ZsetRangeNext(RedisModuleKey *k) {
    ZRange *r = k ? k->zrange : NULL;
    if (!r || r->ended) return 0;
    if (r->pos + 1 >= r->n) {
        r->ended = 1;
        return 0;
    }
    r->pos++;
    return 1;
}

static int RM_ZsetRangePrev(RedisModuleKey *k) {
    ZRange *r = k ? k->zrange : NULL;
    if (!r || r->ended) return 0;
    if (r->pos <= 0) {
        r->ended = 1;
        return 0;
    }
    r->pos--;
    return 1;
}

static int RM_ZsetRangeEndReached(RedisModuleKey *k) {
    ZRange *r = k ? k->zrange : NULL;
    if (r) return r->ended;
    /* no range started: 1 without a sorted set, 0 with one (Redis's answers) */
    return zsetOf(k) == NULL;
}

#define API(fn) {"RedisModule_" #fn, (void *)(uintptr_t)RM_##fn}
const ApiEntry moduleZrangeApi[] = {API(ZsetRangeStop),         API(ZsetFirstInScoreRange), API(ZsetLastInScoreRange),
                                    API(ZsetFirstInLexRange),   API(ZsetLastInLexRange),
                                    API(ZsetRangeCurrentElement), API(ZsetRangeNext),       API(ZsetRangePrev),
                                    API(ZsetRangeEndReached),   {NULL, NULL}};
