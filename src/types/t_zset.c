/* t_zset.c -- the sorted-set commands.
 *
 * A sorted-set value has one of the two encodings Redis 7.0 reports:
 *   listpack  member, score, member, score, ... ordered by (score, member
 *             bytes); scores are stored as text ("%.17g", integral values
 *             as integers so the listpack keeps them as integer entries,
 *             -0 as 0 as Redis does), while the set has at most
 *             zset-max-listpack-entries members of at most
 *             zset-max-listpack-value bytes;
 *   skiplist  a Zset: a skiplist (ds/zskiplist.h) ordered by (score,
 *             member) plus an intrusive Htab over the same nodes keyed by
 *             member, so every member is stored once, inside its node.
 * ZADD/ZINCRBY convert listpack -> skiplist when a member is too long or the
 * count passes the limit; nothing converts back, except that store results
 * (ZUNIONSTORE, ZINTERSTORE, ZDIFFSTORE, ZRANGESTORE) get the encoding their
 * size calls for, as in Redis.
 *
 * Range commands turn score and lex ranges into rank ranges first (both
 * encodings answer "rank of the first / last element in range"), then walk
 * or delete by rank.
 *
 * Cairn's own commands here state their effects as Redis 7.0 commands, so
 * no replica or AOF reader runs them or reads a clock: ZADD ... MAXLEN and
 * ZTRIM (ZREMRANGEBYRANK / ZREMRANGEBYSCORE), ZPOPDUE and BZPOPDUE (ZREM
 * key member ...; BZPOPDUE waits on a key's earliest due time through
 * signalKeyAsReadyAt), RL.LOG (ZREMRANGEBYSCORE, ZADD, PEXPIREAT). */
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
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
#include "ds/zskiplist.h"
#include "types/blocking.h"
#include "types/member_ttl.h"
#include "types/set.h"
#include "types/zset.h"
#include "types/scan.h"

/* zset-max-listpack-value: the directive at the end of this file (the
 * entry limit is in server.cfg: the RDB loader reads it too). */
static long long zsetMaxListpackValue;

#define ERR_MINMAX_FLOAT "ERR min or max is not a float"
#define ERR_MINMAX_LEX "ERR min or max not valid string range item"
#define ERR_NAN_SCORE "ERR resulting score is not a number (NaN)"
#define ERR_POSITIVE "ERR value is out of range, must be positive"
#define ERR_MAXLEN_NEG "ERR The MAXLEN argument must be >= 0."

/* --- skiplist encoding value --- */

typedef struct Zset {
    Htab ht;        /* member -> node (the nodes themselves) */
    zskiplist *zsl; /* ordered nodes */
} Zset;

static uint64_t zsetHash(const void *key, size_t len) { return siphash(key, len, dbHashSeed); }

static void zsetEntryKey(const void *entry, const void **key, size_t *len) {
    const zskiplistNode *n = entry;
    *key = zslMember(n);
    *len = n->len;
}

static const HtabType zsetHtabType = {zsetHash, zsetEntryKey, NULL, NULL, NULL, 0};

static Zset *zsetCreate(void) {
    Zset *z = xmalloc(sizeof(*z));
    htabInit(&z->ht, &zsetHtabType);
    z->zsl = zslCreate();
    return z;
}

static void zsetFreeNode(void *entry, void *priv) {
    (void)priv;
    zslFreeNode(entry);
}

/* The nodes are freed through the table (zslFreeListOnly). */
static void zsetFreeValue(Zset *z) {
    htabClear(&z->ht, zsetFreeNode, NULL);
    zslFreeListOnly(z->zsl);
    xfree(z);
}

static zskiplistNode *zsetFind(Zset *z, const unsigned char *m, size_t len) { return htabFind(&z->ht, m, len); }

/* Adds an absent member. */
static zskiplistNode *zsetInsert(Zset *z, const unsigned char *m, size_t len, double score) {
    zskiplistNode *n = zslInsert(z->zsl, score, m, len);
    htabAdd(&z->ht, n);
    return n;
}

static void zsetRemoveNode(Zset *z, zskiplistNode *n) {
    htabUnlink(&z->ht, zslMember(n), n->len);
    zskiplistNode *d = zslDelete(z->zsl, n->score, zslMember(n), n->len);
    (void)d;
    zslFreeNode(n);
}

static void unlinkFromHash(void *priv, zskiplistNode *n) {
    Zset *z = priv;
    htabUnlink(&z->ht, zslMember(n), n->len);
    zslFreeNode(n);
}

/* --- listpack helpers --- */

/* Score text as stored in a listpack. */
static int lpScoreText(char *buf, size_t cap, double score) {
    if (score == 0) {
        buf[0] = '0';
        return 1;
    }
    if (isinf(score)) return snprintf(buf, cap, "%s", score > 0 ? "inf" : "-inf");
    return doubleToString(buf, cap, score);
}

/* Score of the listpack element at sp. */
static double lpScoreAt(unsigned char *sp) {
    unsigned int len;
    int isInt;
    long long v;
    unsigned char *s = lpGetValue(sp, &len, NULL, &isInt, &v);
    if (isInt) return (double)v;
    double d;
    if (decimalToDouble((const char *)s, len, &d)) return d;
    char buf[128];
    if (len >= sizeof(buf)) len = sizeof(buf) - 1;
    memcpy(buf, s, len);
    buf[len] = '\0';
    return strtod(buf, NULL);
}

/* Member bytes of the element at p (ibuf for integers). */
static const unsigned char *lpMemberAt(unsigned char *p, size_t *len, unsigned char *ibuf) {
    unsigned int l;
    unsigned char *s = lpGetValue(p, &l, ibuf, NULL, NULL);
    *len = l;
    return s;
}

static int bytesCmp(const unsigned char *a, size_t alen, const unsigned char *b, size_t blen) {
    size_t min = alen < blen ? alen : blen;
    int c = min ? memcmp(a, b, min) : 0;
    if (c) return c;
    return alen < blen ? -1 : (alen > blen ? 1 : 0);
}

/* The member element equal to m, or NULL. */
static unsigned char *lpZFind(unsigned char *lp, const unsigned char *m, size_t len) {
    unsigned char *p = lpFirst(lp);
    if (!p) return NULL;
    return lpFind(lp, p, m, len, 1);
}

/* Inserts an absent member in order; returns the new listpack. */
static unsigned char *lpZInsert(unsigned char *lp, const unsigned char *m, size_t len, double score) {
    char sbuf[64];
    int slen = lpScoreText(sbuf, sizeof(sbuf), score);
    unsigned char *p = lpFirst(lp);
    while (p) {
        unsigned char *sp = lpNext(lp, p);
        double s = lpScoreAt(sp);
        if (s > score) break;
        if (s == score) {
            unsigned char ibuf[LP_INTBUF_SIZE];
            size_t ml;
            const unsigned char *mm = lpMemberAt(p, &ml, ibuf);
            if (bytesCmp(mm, ml, m, len) > 0) break;
        }
        p = lpNext(lp, sp);
    }
    if (!p) {
        lp = lpAppend(lp, m, len);
        return lpAppend(lp, (unsigned char *)sbuf, (size_t)slen);
    }
    unsigned char *np;
    lp = lpInsert(lp, m, len, p, LP_BEFORE, &np);
    return lpInsert(lp, (unsigned char *)sbuf, (size_t)slen, np, LP_AFTER, &np);
}

static unsigned char *lpZDeleteAt(unsigned char *lp, unsigned char *p) {
    return lpDeleteRangeWithEntry(lp, &p, 2);
}

/* --- the value abstraction --- */

static int isListpack(const kvobj *o) { return kvEncoding(o) == OBJ_ENC_LISTPACK; }

unsigned long zsetLength(const kvobj *o) {
    if (isListpack(o)) return lpLength(kvPtr(o)) / 2;
    return ((Zset *)kvPtr(o))->zsl->length;
}

static size_t maxListpackEntries(void) { return (size_t)server.cfg.zsetMaxListpackEntries; }
static size_t maxListpackValue(void) { return (size_t)zsetMaxListpackValue; }

/* A view of one element. */
typedef struct ZElem {
    const unsigned char *m;
    size_t len;
    double score;
    unsigned char ibuf[LP_INTBUF_SIZE];
} ZElem;

/* A position in rank order. */
typedef struct ZCur {
    unsigned char *lp, *p; /* listpack: member element */
    zskiplistNode *n;      /* skiplist */
    int lpenc;
} ZCur;

/* Position at 0-based rank; returns 0 if out of range. */
static int zcurSeek(ZCur *cur, const kvobj *o, unsigned long rank) {
    cur->lpenc = isListpack(o);
    cur->p = NULL;
    cur->n = NULL;
    if (cur->lpenc) {
        cur->lp = kvPtr(o);
        if (rank >= lpLength(cur->lp) / 2) return 0;
        cur->p = lpSeek(cur->lp, (long)(2 * rank));
        return cur->p != NULL;
    }
    Zset *z = kvPtr(o);
    cur->lp = NULL;
    cur->n = zslGetByRank(z->zsl, rank + 1);
    return cur->n != NULL;
}

static int zcurValid(const ZCur *cur) { return cur->lpenc ? cur->p != NULL : cur->n != NULL; }

static void zcurGet(const ZCur *cur, ZElem *e) {
    if (cur->lpenc) {
        e->m = lpMemberAt(cur->p, &e->len, e->ibuf);
        e->score = lpScoreAt(lpNext(cur->lp, cur->p));
    } else {
        e->m = zslMember(cur->n);
        e->len = cur->n->len;
        e->score = cur->n->score;
    }
}

static void zcurNext(ZCur *cur) {
    if (cur->lpenc) {
        unsigned char *sp = lpNext(cur->lp, cur->p);
        cur->p = sp ? lpNext(cur->lp, sp) : NULL;
    } else {
        cur->n = cur->n->lv[0].forward;
    }
}

static void zcurPrev(ZCur *cur) {
    if (cur->lpenc) {
        unsigned char *sp = lpPrev(cur->lp, cur->p);
        cur->p = sp ? lpPrev(cur->lp, sp) : NULL;
    } else {
        cur->n = cur->n->backward;
    }
}

static void zcurStep(ZCur *cur, int reverse) {
    if (reverse) zcurPrev(cur);
    else zcurNext(cur);
}

void zsetForEachByRank(const kvobj *o, long start, long end, int reverse, ZsetVisit *fn, void *priv) {
    unsigned long len = zsetLength(o);
    if (start < 0 || end < start || (unsigned long)start >= len) return;
    if ((unsigned long)end >= len) end = (long)len - 1;
    ZCur cur;
    unsigned long first = reverse ? len - 1 - (unsigned long)start : (unsigned long)start;
    if (!zcurSeek(&cur, o, first)) return;
    for (long i = start; i <= end && zcurValid(&cur); i++) {
        ZElem e;
        zcurGet(&cur, &e);
        if (!fn(priv, e.m, e.len, e.score)) return;
        zcurStep(&cur, reverse);
    }
}

/* Score of member m: 1 if present. */
static int zsetScore(const kvobj *o, const unsigned char *m, size_t len, double *score) {
    if (isListpack(o)) {
        unsigned char *lp = kvPtr(o);
        unsigned char *p = lpZFind(lp, m, len);
        if (!p) return 0;
        *score = lpScoreAt(lpNext(lp, p));
        return 1;
    }
    zskiplistNode *n = zsetFind(kvPtr(o), m, len);
    if (!n) return 0;
    *score = n->score;
    return 1;
}

int zsetGetScore(const kvobj *o, const unsigned char *m, size_t len, double *score) {
    return zsetScore(o, m, len, score);
}

/* Index of the first of the n sorted scores that is >= min. */
static size_t lowerBound(const double *scores, size_t n, double min) {
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (scores[mid] < min) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

void zsetForEachInScoreRanges(const kvobj *o, const double *ranges, int nranges, ZsetVisit *fn, void *priv) {
    if (isListpack(o)) { /* scores decoded once, each range found by binary search */
        unsigned char *lp = kvPtr(o);
        size_t n = lpLength(lp) / 2, i = 0;
        double *scores = xmalloc(sizeof(double) * (n ? n : 1));
        unsigned char **members = xmalloc(sizeof(unsigned char *) * (n ? n : 1));
        for (unsigned char *p = lpFirst(lp); p && i < n; i++) {
            unsigned char *sp = lpNext(lp, p);
            members[i] = p;
            scores[i] = lpScoreAt(sp);
            p = lpNext(lp, sp);
        }
        n = i;
        for (int r = 0; r < nranges; r++) {
            for (size_t j = lowerBound(scores, n, ranges[2 * r]); j < n && scores[j] < ranges[2 * r + 1]; j++) {
                unsigned char ibuf[LP_INTBUF_SIZE];
                size_t len;
                const unsigned char *m = lpMemberAt(members[j], &len, ibuf);
                if (!fn(priv, m, len, scores[j])) goto done;
            }
        }
    done:
        xfree(scores);
        xfree(members);
        return;
    }
    Zset *z = kvPtr(o);
    for (int r = 0; r < nranges; r++) {
        zrangespec spec = {.min = ranges[2 * r], .max = ranges[2 * r + 1], .minex = 0, .maxex = 1};
        for (zskiplistNode *n = zslFirstInRange(z->zsl, &spec); n && zslValueLteMax(n->score, &spec);
             n = n->lv[0].forward)
            if (!fn(priv, zslMember(n), n->len, n->score)) return;
    }
}

/* 0-based rank of m (ascending, or descending with reverse); -1 if absent. */
static long zsetRank(const kvobj *o, const unsigned char *m, size_t len, int reverse) {
    unsigned long n = zsetLength(o), rank;
    if (isListpack(o)) {
        unsigned char *lp = kvPtr(o);
        unsigned char *p = lpFirst(lp);
        rank = 0;
        while (p) {
            if (lpCompare(p, m, len)) break;
            p = lpNext(lp, lpNext(lp, p));
            rank++;
        }
        if (!p) return -1;
    } else {
        Zset *z = kvPtr(o);
        zskiplistNode *x = zsetFind(z, m, len);
        if (!x) return -1;
        rank = zslGetRank(z->zsl, x->score, m, len) - 1;
    }
    return (long)(reverse ? n - 1 - rank : rank);
}

/* Listpack -> skiplist. */
static void zsetConvertToSkiplist(kvobj *o) {
    unsigned char *lp = kvPtr(o);
    Zset *z = zsetCreate();
    unsigned char *p = lpFirst(lp);
    while (p) {
        unsigned char ibuf[LP_INTBUF_SIZE];
        size_t ml;
        const unsigned char *m = lpMemberAt(p, &ml, ibuf);
        unsigned char *sp = lpNext(lp, p);
        zsetInsert(z, m, ml, lpScoreAt(sp));
        p = lpNext(lp, sp);
    }
    lpFree(lp);
    kvSetEncoding(o, OBJ_ENC_SKIPLIST);
    kvSetPtr(o, z);
}

void zsetEnsureSkiplist(kvobj *o) {
    if (kvEncoding(o) == OBJ_ENC_LISTPACK) zsetConvertToSkiplist(o);
}

/* A listpack holding the skiplist's elements (in order). */
static unsigned char *zsetToListpack(Zset *z) {
    unsigned char *lp = lpNew(0);
    for (zskiplistNode *n = z->zsl->header->lv[0].forward; n; n = n->lv[0].forward) {
        char sbuf[64];
        int slen = lpScoreText(sbuf, sizeof(sbuf), n->score);
        lp = lpAppend(lp, zslMember(n), n->len);
        lp = lpAppend(lp, (unsigned char *)sbuf, (size_t)slen);
    }
    return lp;
}

/* ZADD_IN_* / ZADD_OUT_*: zset.h */

/* Adds or updates member m with score (ZADD semantics; see the flags).
 * Returns 0 (and ZADD_OUT_NAN) when the result would be NaN. */
static int zsetAdd(kvobj *o, double score, const unsigned char *m, size_t len, int in, int *out, double *newscore) {
    *out = 0;
    double cur;
    int exists = zsetScore(o, m, len, &cur);
    if (exists) {
        if (in & ZADD_IN_NX) {
            *out = ZADD_OUT_NOP;
            return 1;
        }
        if (in & ZADD_IN_INCR) {
            score += cur;
            if (isnan(score)) {
                *out = ZADD_OUT_NAN;
                return 0;
            }
        }
        if (((in & ZADD_IN_LT) && score >= cur) || ((in & ZADD_IN_GT) && score <= cur)) {
            *out = ZADD_OUT_NOP;
            return 1;
        }
        if (newscore) *newscore = score;
        if (score != cur) {
            if (isListpack(o)) {
                unsigned char *lp = kvPtr(o);
                unsigned char *p = lpZFind(lp, m, len);
                lp = lpZDeleteAt(lp, p);
                lp = lpZInsert(lp, m, len, score);
                kvSetPtr(o, lp);
            } else {
                Zset *z = kvPtr(o);
                zslUpdateScore(z->zsl, zsetFind(z, m, len), score);
            }
            *out = ZADD_OUT_UPDATED;
        }
        return 1;
    }
    if (in & ZADD_IN_XX) {
        *out = ZADD_OUT_NOP;
        return 1;
    }
    if (isListpack(o)) {
        if (zsetLength(o) + 1 > maxListpackEntries() || len > maxListpackValue()) {
            zsetConvertToSkiplist(o);
        } else {
            kvSetPtr(o, lpZInsert(kvPtr(o), m, len, score));
        }
    }
    if (!isListpack(o)) zsetInsert(kvPtr(o), m, len, score);
    if (newscore) *newscore = score;
    *out = ZADD_OUT_ADDED;
    return 1;
}

static int zsetRemove(kvobj *o, const unsigned char *m, size_t len) {
    if (isListpack(o)) {
        unsigned char *lp = kvPtr(o);
        unsigned char *p = lpZFind(lp, m, len);
        if (!p) return 0;
        kvSetPtr(o, lpZDeleteAt(lp, p));
        return 1;
    }
    Zset *z = kvPtr(o);
    zskiplistNode *n = zsetFind(z, m, len);
    if (!n) return 0;
    zsetRemoveNode(z, n);
    return 1;
}

int zsetValueRemove(kvobj *o, const unsigned char *m, size_t len) { return zsetRemove(o, m, len); }


/* Deletes 0-based ranks start..end (valid, inclusive). */
static unsigned long zsetDeleteRanks(kvobj *o, unsigned long start, unsigned long end) {
    if (isListpack(o)) {
        kvSetPtr(o, lpDeleteRange(kvPtr(o), (long)(2 * start), 2 * (end - start + 1)));
        return end - start + 1;
    }
    Zset *z = kvPtr(o);
    return zslDeleteRangeByRank(z->zsl, start + 1, end + 1, unlinkFromHash, z);
}

/* A new empty value for a key whose first member is len bytes. */
static kvobj *zsetCreateKey(const sds key, size_t firstLen) {
    if (maxListpackEntries() == 0 || firstLen > maxListpackValue())
        return kvCreatePtr(key, sdsLen(key), OBJ_ZSET, OBJ_ENC_SKIPLIST, zsetCreate());
    return kvCreatePtr(key, sdsLen(key), OBJ_ZSET, OBJ_ENC_LISTPACK, lpNew(0));
}

/* The module key API's ZsetAdd/ZsetIncrby (zset.h): ZADD's semantics on
 * the sorted set at key (created when absent and dropped again when
 * nothing was added), without event, signal or dirty. */
int zsetModuleAdd(Db *db, const sds key, double score, const sds m, int in, int *out, double *newscore) {
    *out = 0;
    if (isnan(score)) return 0;
    kvobj *o = dbFind(db, key, sdsLen(key));
    int created = 0;
    if (!o) {
        o = zsetCreateKey(key, sdsLen(m));
        dbAdd(db, o);
        o = dbFind(db, key, sdsLen(key));
        created = 1;
    }
    int ok = zsetAdd(o, score, (const unsigned char *)m, sdsLen(m), in, out, newscore);
    if (created && zsetLength(o) == 0) dbDelete(db, key, sdsLen(key));
    return ok;
}

/* --- ranges --- */

/* Parses one score bound ("(" exclusive, strtod text, no NaN). */
static int parseScoreBound(const sds s, double *v, int *ex) {
    const char *p = s;
    *ex = 0;
    if (p[0] == '(') {
        *ex = 1;
        p++;
    }
    char *eptr;
    *v = strtod(p, &eptr);
    if (eptr[0] != '\0' || isnan(*v)) return 0;
    return 1;
}

static int parseScoreRange(const sds min, const sds max, zrangespec *r) {
    return parseScoreBound(min, &r->min, &r->minex) && parseScoreBound(max, &r->max, &r->maxex);
}

static int parseLexBound(const sds s, const unsigned char **b, size_t *blen, int *kind, int *ex) {
    size_t len = sdsLen(s);
    *ex = 0;
    *b = NULL;
    *blen = 0;
    *kind = 0;
    if (len == 0) return 0;
    switch (s[0]) {
    case '+':
        if (len != 1) return 0;
        *kind = 1;
        return 1;
    case '-':
        if (len != 1) return 0;
        *kind = -1;
        return 1;
    case '(':
        *ex = 1;
        /* fall through */
    case '[':
        *b = (const unsigned char *)s + 1;
        *blen = len - 1;
        return 1;
    default:
        return 0;
    }
}

static int parseLexRange(const sds min, const sds max, zlexrangespec *r) {
    return parseLexBound(min, &r->min, &r->minlen, &r->minkind, &r->minex) &&
           parseLexBound(max, &r->max, &r->maxlen, &r->maxkind, &r->maxex);
}

enum { RANGE_RANK, RANGE_SCORE, RANGE_LEX };

typedef struct Range {
    int type;
    zrangespec score;
    zlexrangespec lex;
} Range;

static int elemInRange(const ZElem *e, const Range *r) {
    if (r->type == RANGE_SCORE) return zslValueGteMin(e->score, &r->score) && zslValueLteMax(e->score, &r->score);
    return zslLexValueGteMin(e->m, e->len, &r->lex) && zslLexValueLteMax(e->m, e->len, &r->lex);
}

/* 0-based ranks [*start, *end] of the elements in a score/lex range;
 * returns the count (0: none, start/end unset). */
static unsigned long rangeRanks(const kvobj *o, const Range *r, unsigned long *start, unsigned long *end) {
    if (r->type == RANGE_SCORE ? zslScoreRangeEmpty(&r->score) : zslLexRangeEmpty(&r->lex)) return 0;
    if (isListpack(o)) {
        ZCur cur;
        unsigned long rank = 0, count = 0;
        if (!zcurSeek(&cur, o, 0)) return 0;
        for (; zcurValid(&cur); zcurNext(&cur), rank++) {
            ZElem e;
            zcurGet(&cur, &e);
            if (elemInRange(&e, r)) {
                if (!count) *start = rank;
                *end = rank;
                count++;
            } else if (count) {
                break;
            }
        }
        return count;
    }
    Zset *z = kvPtr(o);
    zskiplistNode *first, *last;
    if (r->type == RANGE_SCORE) {
        first = zslFirstInRange(z->zsl, &r->score);
        last = first ? zslLastInRange(z->zsl, &r->score) : NULL;
    } else {
        first = zslFirstInLexRange(z->zsl, &r->lex);
        last = first ? zslLastInLexRange(z->zsl, &r->lex) : NULL;
    }
    if (!first || !last) return 0;
    *start = zslGetRank(z->zsl, first->score, zslMember(first), first->len) - 1;
    *end = zslGetRank(z->zsl, last->score, zslMember(last), last->len) - 1;
    if (*end < *start) return 0;
    return *end - *start + 1;
}

/* --- value hooks --- */

static void zsetValueFree(void *ptr, int encoding) {
    if (encoding == OBJ_ENC_LISTPACK) lpFree(ptr);
    else zsetFreeValue(ptr);
}

static void *zsetValueDup(const void *ptr, int encoding) {
    if (encoding == OBJ_ENC_LISTPACK) {
        size_t n = lpBytes((unsigned char *)ptr);
        unsigned char *lp = xmalloc(n);
        memcpy(lp, ptr, n);
        return lp;
    }
    const Zset *src = ptr;
    Zset *z = zsetCreate();
    for (zskiplistNode *n = src->zsl->header->lv[0].forward; n; n = n->lv[0].forward)
        zsetInsert(z, zslMember(n), n->len, n->score);
    return z;
}

/* Listpack: its bytes.  Skiplist: the structures, and the member count
 * times the average node of the first `samples` (0: all), as Redis walks
 * the skiplist's head. */
static size_t zsetValueMemUsage(const void *ptr, int encoding, size_t samples) {
    if (encoding == OBJ_ENC_LISTPACK) return lpBytes((unsigned char *)ptr);
    const Zset *z = ptr;
    size_t total = sizeof(Zset) + sizeof(zskiplist) + htabBuckets(&z->ht) * sizeof(void *), nodes = 0, n = 0;
    for (zskiplistNode *x = z->zsl->header->lv[0].forward; x && (!samples || n < samples); x = x->lv[0].forward) {
        nodes += xmallocSize(x);
        n++;
    }
    if (n) total += nodes / n * htabSize(&z->ht);
    return total;
}

/* An estimate from 16 nodes, as the hash and the set make theirs: walking
 * all the nodes (a cache miss and an allocator lookup each) took ~1 ms per
 * 100,000 members, in the UNLINK that hands the set to the lazy-free
 * thread. */
static size_t zsetValueSize(const void *ptr, int encoding) { return zsetValueMemUsage(ptr, encoding, 16); }

const ObjectType zsetObjectType = {
    .free = zsetValueFree, .dup = zsetValueDup, .size = zsetValueSize, .memUsage = zsetValueMemUsage};

/* --- reply and notification helpers --- */

static void notifyZset(Db *db, const char *event, const char *key, size_t len) {
    notifyKeyspaceEvent(NOTIFY_ZSET, event, key, len, db->id);
}

/* After a removal: deletes the key when empty (notifying "del").  Returns 1
 * if deleted. */
static int deleteIfEmpty(Db *db, kvobj *o, const char *key, size_t len) {
    if (zsetLength(o) > 0) return 0;
    dbDelete(db, key, len);
    notifyKeyspaceEvent(NOTIFY_GENERIC, "del", key, len, db->id);
    return 1;
}

static void replyElem(Client *c, const ZElem *e, int withscores) {
    if (withscores && c->resp >= 3) replyArrayLen(c, 2);
    replyBulk(c, e->m, e->len);
    if (withscores) replyDouble(c, e->score);
}

static void replyRangeLen(Client *c, unsigned long n, int withscores) {
    replyArrayLen(c, (long)(withscores && c->resp < 3 ? 2 * n : n));
}

/* Replies count elements from 0-based rank first, walking up or down. */
static void replyRanks(Client *c, const kvobj *o, unsigned long first, unsigned long count, int reverse,
                       int withscores) {
    replyRangeLen(c, count, withscores);
    if (!count) return;
    ZCur cur;
    zcurSeek(&cur, o, first);
    for (unsigned long i = 0; i < count && zcurValid(&cur); i++) {
        ZElem e;
        zcurGet(&cur, &e);
        replyElem(c, &e, withscores);
        zcurStep(&cur, reverse);
    }
}

/* Stores a result value at dst (listpack when small enough), or deletes dst
 * when empty; replies the count; notifies event / "del".  Takes tmp. */
static void storeResult(Client *c, const sds dst, Zset *tmp, size_t maxlen, const char *event) {
    unsigned long n = tmp->zsl->length;
    if (n) {
        kvobj *o;
        if (n <= maxListpackEntries() && maxlen <= maxListpackValue()) {
            o = kvCreatePtr(dst, sdsLen(dst), OBJ_ZSET, OBJ_ENC_LISTPACK, zsetToListpack(tmp));
            zsetFreeValue(tmp);
        } else {
            o = kvCreatePtr(dst, sdsLen(dst), OBJ_ZSET, OBJ_ENC_SKIPLIST, tmp);
        }
        dbSetKey(c->db, o, 0);
        replyLongLong(c, (long long)n);
        signalModifiedKey(c, c->db, dst, sdsLen(dst));
        notifyZset(c->db, event, dst, sdsLen(dst));
        signalKeyAsReady(c->db, dst, sdsLen(dst));
        serverIncrDirty(1);
        return;
    }
    zsetFreeValue(tmp);
    replyLongLong(c, 0);
    if (dbDelete(c->db, dst, sdsLen(dst))) {
        signalModifiedKey(c, c->db, dst, sdsLen(dst));
        notifyKeyspaceEvent(NOTIFY_GENERIC, "del", dst, sdsLen(dst), c->db->id);
        serverIncrDirty(1);
    }
}

/* --- ZADD / ZINCRBY / ZREM --- */

/* Parses "MAXLEN count [LOWEST|HIGHEST]" at argv[*idx] (which is MAXLEN),
 * the capped sorted set option of ZADD and ZTRIM.  Advances *idx to the
 * last argument consumed.  Replies the error and returns -1 when count is
 * missing (syntax error), not an integer or negative. */
static int parseMaxlenOrReply(Client *c, int *idx, long long *maxlen, int *highest) {
    int j = *idx + 1;
    if (j >= c->argc) {
        replyErrorSyntax(c);
        return -1;
    }
    if (getLongLongOrReply(c, c->argv[j], maxlen, NULL) == -1) return -1;
    if (*maxlen < 0) {
        replyError(c, ERR_MAXLEN_NEG);
        return -1;
    }
    *highest = 0;
    /* The next argument is usually a score: look at its first letter
     * before comparing it with a name (c | 0x20 folds only ASCII letters
     * onto 'l' and 'h'). */
    int next = j + 1 < c->argc ? c->argv[j + 1][0] | 0x20 : 0;
    if (next == 'l' && argIs(c->argv[j + 1], "lowest")) j++;
    else if (next == 'h' && argIs(c->argv[j + 1], "highest")) {
        *highest = 1;
        j++;
    }
    *idx = j;
    return 0;
}

/* Trims o (of key) to its maxlen lowest (highest == 1: evicts the highest
 * scores) or highest (default: evicts the lowest scores) members.  Stated
 * as ZREMRANGEBYRANK key start stop with absolute ranks, which a Redis 7.0
 * replica or AOF reader applies identically: the running command's own
 * effect when own (ZTRIM), else an effect added after the ZADD's.
 * Notifies as that command (and "del" when the key empties, which it
 * deletes).  Returns the number of members removed. */
static unsigned long zsetTrimToLen(Client *c, kvobj *o, const sds key, long long maxlen, int highest, int own) {
    unsigned long len = zsetLength(o);
    if ((unsigned long long)maxlen >= len) return 0;
    unsigned long n = len - (unsigned long)maxlen;
    unsigned long first = highest ? (unsigned long)maxlen : 0;
    zsetDeleteRanks(o, first, first + n - 1);
    EffectArg args[4] = {EA_STR("ZREMRANGEBYRANK"), EA_SDS(key), EA_NUM((long long)first),
                         EA_NUM((long long)(first + n - 1))};
    if (own) effectsRewrite(4, args);
    else effectsAlso(c->db->id, 4, args);
    signalModifiedKey(c, c->db, key, sdsLen(key));
    notifyZset(c->db, "zremrangebyrank", key, sdsLen(key));
    deleteIfEmpty(c->db, o, key, sdsLen(key));
    serverIncrDirty((long long)n);
    return n;
}

/* ZADD key [NX|XX] [GT|LT] [CH] [INCR] [MAXLEN count [LOWEST|HIGHEST]]
 * score member ...  MAXLEN (Cairn's own; options may come in any order)
 * caps the set after the add: the count members with the highest scores
 * stay (LOWEST, the default, evicts the lowest scores; HIGHEST evicts the
 * highest).  Plain ZADD pays one length compare for it.  With MAXLEN the
 * effects are the ZADD without its MAXLEN option, then the trim as
 * ZREMRANGEBYRANK (zsetTrimToLen). */
static void zaddGeneric(Client *c, int in) {
    int idx = 2;
    long long maxlen = -1;
    int highest = 0, maxlenAt = 0, maxlenEnd = 0;
    for (; idx < c->argc; idx++) {
        const sds a = c->argv[idx];
        /* The option names start with distinct letters: compare a with the
         * one its first letter selects (c | 0x20 folds only ASCII letters
         * onto these), so a score costs one switch, not seven compares. */
        int first = a[0] | 0x20;
        if (first == 'n' && argIs(a, "nx")) in |= ZADD_IN_NX;
        else if (first == 'x' && argIs(a, "xx")) in |= ZADD_IN_XX;
        else if (first == 'c' && argIs(a, "ch")) in |= 1 << 8;
        else if (first == 'i' && argIs(a, "incr")) in |= ZADD_IN_INCR;
        else if (first == 'g' && argIs(a, "gt")) in |= ZADD_IN_GT;
        else if (first == 'l' && argIs(a, "lt")) in |= ZADD_IN_LT;
        else if (first == 'm' && sdsLen(a) == 6 && argIs(a, "maxlen")) {
            if (maxlenAt) { /* given twice */
                replyErrorSyntax(c);
                return;
            }
            maxlenAt = idx;
            if (parseMaxlenOrReply(c, &idx, &maxlen, &highest) == -1) return;
            maxlenEnd = idx;
        } else break;
    }
    int ch = (in >> 8) & 1;
    in &= 0xff;
    int elements = c->argc - idx;
    if (elements % 2 || !elements) {
        replyErrorSyntax(c);
        return;
    }
    elements /= 2;
    if ((in & ZADD_IN_NX) && (in & ZADD_IN_XX)) {
        replyError(c, "ERR XX and NX options at the same time are not compatible");
        return;
    }
    if (((in & ZADD_IN_GT) && (in & ZADD_IN_NX)) || ((in & ZADD_IN_LT) && (in & ZADD_IN_NX)) ||
        ((in & ZADD_IN_GT) && (in & ZADD_IN_LT))) {
        replyError(c, "ERR GT, LT, and/or NX options at the same time are not compatible");
        return;
    }
    int incr = (in & ZADD_IN_INCR) != 0;
    if (incr && elements > 1) {
        replyError(c, "ERR INCR option supports a single increment-element pair");
        return;
    }
    double *scores = xmalloc(sizeof(double) * (size_t)elements);
    for (int j = 0; j < elements; j++) {
        if (getDoubleOrReply(c, c->argv[idx + 2 * j], &scores[j], NULL) == -1) {
            xfree(scores);
            return;
        }
    }
    const sds key = c->argv[1];
    int wrong;
    kvobj *o = lookupWriteOrReply(c, key, OBJ_ZSET, &wrong);
    if (wrong) {
        xfree(scores);
        return;
    }
    long added = 0, updated = 0, processed = 0;
    double newscore = 0;
    if (__builtin_expect(dbMemberTtlKeys != 0, 0) && o) {
        /* A member added anew has no TTL (one it had went with it). */
        for (int j = 0; j < elements; j++) {
            const sds m = c->argv[idx + 2 * j + 1];
            double cur;
            if (!zsetScore(o, (const unsigned char *)m, sdsLen(m), &cur)) memberTtlForget(c->db, key, m);
        }
    }
    if (!o) {
        if (in & ZADD_IN_XX) goto reply;
        o = zsetCreateKey(key, sdsLen(c->argv[idx + 1]));
        dbAdd(c->db, o);
        o = dbFind(c->db, key, sdsLen(key));
    }
    for (int j = 0; j < elements; j++) {
        const sds m = c->argv[idx + 2 * j + 1];
        int out;
        if (!zsetAdd(o, scores[j], (const unsigned char *)m, sdsLen(m), in, &out, &newscore)) {
            replyError(c, ERR_NAN_SCORE);
            if (zsetLength(o) == 0) dbDelete(c->db, key, sdsLen(key));
            xfree(scores);
            return;
        }
        if (out & ZADD_OUT_ADDED) added++;
        if (out & ZADD_OUT_UPDATED) updated++;
        if (!(out & ZADD_OUT_NOP)) processed++;
    }
    if (zsetLength(o) == 0) {
        dbDelete(c->db, key, sdsLen(key));
        o = NULL;
    }
reply:
    xfree(scores);
    if (incr) {
        if (processed) replyDouble(c, newscore);
        else replyNull(c);
    } else {
        replyLongLong(c, ch ? added + updated : added);
    }
    if (added || updated) {
        signalModifiedKey(c, c->db, key, sdsLen(key));
        notifyZset(c->db, incr ? "zincr" : "zadd", key, sdsLen(key));
        signalKeyAsReady(c->db, key, sdsLen(key));
        serverIncrDirty(added + updated);
    }
    if (maxlenAt) {
        /* The effects, in order: the ZADD without MAXLEN, then the trim. */
        effectsPrevent();
        if ((added || updated) && effectsOn) {
            EffectArg *args = xmalloc(sizeof(*args) * (size_t)c->argc);
            int n = 0;
            for (int j = 0; j < c->argc; j++)
                if (j < maxlenAt || j > maxlenEnd) args[n++] = EA_SDS(c->argv[j]);
            effectsAlso(c->db->id, n, args);
            xfree(args);
        }
        if (o) zsetTrimToLen(c, o, key, maxlen, highest, 0);
    }
}

static void zaddCommand(Client *c) { zaddGeneric(c, 0); }

void zsetZaddArgv(Client *c) { zaddGeneric(c, 0); }

struct ZsetBuild {
    Zset *z;
    size_t maxlen;
};

ZsetBuild *zsetBuildNew(void) {
    ZsetBuild *b = xmalloc(sizeof(*b));
    b->z = zsetCreate();
    b->maxlen = 0;
    return b;
}

void zsetBuildAdd(ZsetBuild *b, const unsigned char *m, size_t len, double score) {
    if (zsetFind(b->z, m, len)) return;
    zsetInsert(b->z, m, len, score);
    if (len > b->maxlen) b->maxlen = len;
}

void zsetBuildStore(Client *c, const sds dst, ZsetBuild *b, const char *event) {
    storeResult(c, dst, b->z, b->maxlen, event);
    xfree(b);
}

static void zincrbyCommand(Client *c) {
    /* ZINCRBY key increment member == ZADD key INCR increment member */
    double incr;
    if (getDoubleOrReply(c, c->argv[2], &incr, NULL) == -1) return;
    const sds key = c->argv[1], m = c->argv[3];
    int wrong;
    kvobj *o = lookupWriteOrReply(c, key, OBJ_ZSET, &wrong);
    if (wrong) return;
    int created = 0;
    if (!o) {
        o = zsetCreateKey(key, sdsLen(m));
        dbAdd(c->db, o);
        o = dbFind(c->db, key, sdsLen(key));
        created = 1;
    }
    int out;
    double newscore = 0;
    if (!zsetAdd(o, incr, (const unsigned char *)m, sdsLen(m), ZADD_IN_INCR, &out, &newscore)) {
        replyError(c, ERR_NAN_SCORE);
        if (created) dbDelete(c->db, key, sdsLen(key));
        return;
    }
    replyDouble(c, newscore);
    if ((out & ZADD_OUT_ADDED) && dbMemberTtlKeys) memberTtlForget(c->db, key, m);
    if (out & (ZADD_OUT_ADDED | ZADD_OUT_UPDATED)) {
        signalModifiedKey(c, c->db, key, sdsLen(key));
        notifyZset(c->db, "zincr", key, sdsLen(key));
        signalKeyAsReady(c->db, key, sdsLen(key));
        serverIncrDirty(1);
    }
}

static void zremCommand(Client *c) {
    const sds key = c->argv[1];
    int wrong;
    kvobj *o = lookupWriteOrReply(c, key, OBJ_ZSET, &wrong);
    if (!o) {
        if (!wrong) replyLongLong(c, 0);
        return;
    }
    long deleted = 0;
    int keyRemoved = 0;
    for (int j = 2; j < c->argc; j++) {
        deleted += zsetRemove(o, (const unsigned char *)c->argv[j], sdsLen(c->argv[j]));
        if (zsetLength(o) == 0) {
            dbDelete(c->db, key, sdsLen(key));
            keyRemoved = 1;
            break;
        }
    }
    if (deleted) {
        notifyZset(c->db, "zrem", key, sdsLen(key));
        if (keyRemoved) notifyKeyspaceEvent(NOTIFY_GENERIC, "del", key, sdsLen(key), c->db->id);
        signalModifiedKey(c, c->db, key, sdsLen(key));
        serverIncrDirty(deleted);
    }
    replyLongLong(c, deleted);
}

/* --- reads --- */

static void zcardCommand(Client *c) {
    int wrong;
    kvobj *o = lookupReadOrReply(c, c->argv[1], OBJ_ZSET, &wrong);
    if (wrong) return;
    replyLongLong(c, o ? (long long)zsetLength(o) : 0);
}

static void zscoreCommand(Client *c) {
    int wrong;
    kvobj *o = lookupReadOrReply(c, c->argv[1], OBJ_ZSET, &wrong);
    if (wrong) return;
    double s;
    if (o && zsetScore(o, (const unsigned char *)c->argv[2], sdsLen(c->argv[2]), &s)) replyDouble(c, s);
    else replyNull(c);
}

static void zmscoreCommand(Client *c) {
    int wrong;
    kvobj *o = lookupReadOrReply(c, c->argv[1], OBJ_ZSET, &wrong);
    if (wrong) return;
    replyArrayLen(c, c->argc - 2);
    for (int j = 2; j < c->argc; j++) {
        double s;
        if (o && zsetScore(o, (const unsigned char *)c->argv[j], sdsLen(c->argv[j]), &s)) replyDouble(c, s);
        else replyNull(c);
    }
}

static void zrankGeneric(Client *c, int reverse) {
    int wrong;
    kvobj *o = lookupReadOrReply(c, c->argv[1], OBJ_ZSET, &wrong);
    if (wrong) return;
    long r = o ? zsetRank(o, (const unsigned char *)c->argv[2], sdsLen(c->argv[2]), reverse) : -1;
    if (r < 0) replyNull(c);
    else replyLongLong(c, r);
}

static void zrankCommand(Client *c) { zrankGeneric(c, 0); }
static void zrevrankCommand(Client *c) { zrankGeneric(c, 1); }

static int parseRangeOrReply(Client *c, int type, const sds min, const sds max, Range *r) {
    r->type = type;
    if (type == RANGE_SCORE) {
        if (!parseScoreRange(min, max, &r->score)) {
            replyError(c, ERR_MINMAX_FLOAT);
            return -1;
        }
    } else if (!parseLexRange(min, max, &r->lex)) {
        replyError(c, ERR_MINMAX_LEX);
        return -1;
    }
    return 0;
}

static void zcountGeneric(Client *c, int type) {
    Range r;
    if (parseRangeOrReply(c, type, c->argv[2], c->argv[3], &r) == -1) return;
    int wrong;
    kvobj *o = lookupReadOrReply(c, c->argv[1], OBJ_ZSET, &wrong);
    if (wrong) return;
    unsigned long s, e;
    replyLongLong(c, o ? (long long)rangeRanks(o, &r, &s, &e) : 0);
}

static void zcountCommand(Client *c) { zcountGeneric(c, RANGE_SCORE); }
static void zlexcountCommand(Client *c) { zcountGeneric(c, RANGE_LEX); }

/* --- ZRANGE family --- */

enum { DIR_AUTO, DIR_FWD, DIR_REV };
#define RANGE_AUTO (-1)

/* Clamps a rank range to the length; returns the count (0 if empty). */
static unsigned long clampRanks(long start, long end, unsigned long llen, unsigned long *first) {
    long len = (long)llen;
    if (start < 0) start += len;
    if (end < 0) end += len;
    if (start < 0) start = 0;
    if (start > end || start >= len) return 0;
    if (end >= len) end = len - 1;
    *first = (unsigned long)start;
    return (unsigned long)(end - start + 1);
}

/* Z[REV]RANGE[BYSCORE|BYLEX] / ZRANGESTORE.  Arguments start at argv[ks]
 * (the source key); dst is the store key or NULL. */
static void zrangeGeneric(Client *c, int ks, const sds dst, int type, int dir) {
    int withscores = 0;
    long offset = 0, limit = -1;
    for (int j = ks + 3; j < c->argc; j++) {
        int left = c->argc - j - 1;
        const sds a = c->argv[j];
        if (!dst && argIs(a, "withscores")) {
            withscores = 1;
        } else if (argIs(a, "limit") && left >= 2) {
            if (getLongOrReply(c, c->argv[j + 1], &offset, NULL) == -1 ||
                getLongOrReply(c, c->argv[j + 2], &limit, NULL) == -1)
                return;
            j += 2;
        } else if (dir == DIR_AUTO && argIs(a, "rev")) {
            dir = DIR_REV;
        } else if (type == RANGE_AUTO && argIs(a, "bylex")) {
            type = RANGE_LEX;
        } else if (type == RANGE_AUTO && argIs(a, "byscore")) {
            type = RANGE_SCORE;
        } else {
            replyErrorSyntax(c);
            return;
        }
    }
    if (dir == DIR_AUTO) dir = DIR_FWD;
    if (type == RANGE_AUTO) type = RANGE_RANK;
    if (limit != -1 && type == RANGE_RANK) {
        replyError(c, "ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX");
        return;
    }
    if (withscores && type == RANGE_LEX) {
        replyError(c, "ERR syntax error, WITHSCORES not supported in combination with BYLEX");
        return;
    }
    int reverse = dir == DIR_REV;
    sds minArg = c->argv[ks + 1], maxArg = c->argv[ks + 2];
    if (reverse && type != RANGE_RANK) {
        sds t = minArg;
        minArg = maxArg;
        maxArg = t;
    }
    long start = 0, end = 0;
    Range r;
    if (type == RANGE_RANK) {
        if (getLongOrReply(c, minArg, &start, NULL) == -1 || getLongOrReply(c, maxArg, &end, NULL) == -1) return;
    } else if (parseRangeOrReply(c, type, minArg, maxArg, &r) == -1) {
        return;
    }
    int wrong;
    kvobj *o = lookupReadOrReply(c, c->argv[ks], OBJ_ZSET, &wrong);
    if (wrong) return;
    unsigned long first = 0, count = 0;
    if (o) {
        unsigned long llen = zsetLength(o);
        if (type == RANGE_RANK) {
            count = clampRanks(start, end, llen, &first);
            if (count && reverse) first = llen - 1 - first;
        } else {
            unsigned long s, e;
            unsigned long n = rangeRanks(o, &r, &s, &e);
            if (offset < 0 || (unsigned long)offset >= n) {
                count = 0;
            } else {
                count = n - (unsigned long)offset;
                if (limit >= 0 && (unsigned long)limit < count) count = (unsigned long)limit;
                first = reverse ? e - (unsigned long)offset : s + (unsigned long)offset;
            }
        }
    }
    if (!dst) {
        if (!o) {
            replyEmptyArray(c);
            return;
        }
        replyRanks(c, o, first, count, reverse, withscores);
        return;
    }
    Zset *tmp = zsetCreate();
    size_t maxlen = 0;
    if (count) {
        /* Redis fills a listpack and converts it on the first long member
         * or on the member past zset-max-listpack-entries: scores added
         * before that lose the sign of -0.  By rank it knows the count
         * first and starts with a skiplist when the count does not fit;
         * by score or lex it always starts with a listpack. */
        int asListpack = type != RANGE_RANK || count <= maxListpackEntries();
        ZCur cur;
        zcurSeek(&cur, o, first);
        for (unsigned long i = 0; i < count && zcurValid(&cur); i++) {
            ZElem e;
            zcurGet(&cur, &e);
            if (e.len > maxlen) maxlen = e.len;
            if (e.len > maxListpackValue() || i >= maxListpackEntries()) asListpack = 0;
            zsetInsert(tmp, e.m, e.len, asListpack && e.score == 0 ? 0.0 : e.score);
            zcurStep(&cur, reverse);
        }
    }
    storeResult(c, dst, tmp, maxlen, "zrangestore");
}

static void zrangeCommand(Client *c) { zrangeGeneric(c, 1, NULL, RANGE_AUTO, DIR_AUTO); }
static void zrangestoreCommand(Client *c) { zrangeGeneric(c, 2, c->argv[1], RANGE_AUTO, DIR_AUTO); }
static void zrevrangeCommand(Client *c) { zrangeGeneric(c, 1, NULL, RANGE_RANK, DIR_REV); }
static void zrangebyscoreCommand(Client *c) { zrangeGeneric(c, 1, NULL, RANGE_SCORE, DIR_FWD); }
static void zrevrangebyscoreCommand(Client *c) { zrangeGeneric(c, 1, NULL, RANGE_SCORE, DIR_REV); }
static void zrangebylexCommand(Client *c) { zrangeGeneric(c, 1, NULL, RANGE_LEX, DIR_FWD); }
static void zrevrangebylexCommand(Client *c) { zrangeGeneric(c, 1, NULL, RANGE_LEX, DIR_REV); }

/* --- ZREMRANGEBY* --- */

static void zremrangeGeneric(Client *c, int type) {
    const sds key = c->argv[1];
    long start = 0, end = 0;
    Range r;
    if (type == RANGE_RANK) {
        if (getLongOrReply(c, c->argv[2], &start, NULL) == -1 || getLongOrReply(c, c->argv[3], &end, NULL) == -1)
            return;
    } else if (parseRangeOrReply(c, type, c->argv[2], c->argv[3], &r) == -1) {
        return;
    }
    int wrong;
    kvobj *o = lookupWriteOrReply(c, key, OBJ_ZSET, &wrong);
    if (!o) {
        if (!wrong) replyLongLong(c, 0);
        return;
    }
    unsigned long first = 0, count;
    if (type == RANGE_RANK) {
        count = clampRanks(start, end, zsetLength(o), &first);
    } else {
        unsigned long e;
        count = rangeRanks(o, &r, &first, &e);
    }
    unsigned long deleted = count ? zsetDeleteRanks(o, first, first + count - 1) : 0;
    if (deleted) {
        const char *ev = type == RANGE_RANK ? "zremrangebyrank" : type == RANGE_SCORE ? "zremrangebyscore" : "zremrangebylex";
        signalModifiedKey(c, c->db, key, sdsLen(key));
        notifyZset(c->db, ev, key, sdsLen(key));
        deleteIfEmpty(c->db, o, key, sdsLen(key));
        serverIncrDirty((long long)deleted);
    }
    replyLongLong(c, (long long)deleted);
}

/* ZTRIM key MAXLEN count [LOWEST|HIGHEST] | MINSCORE score | MAXSCORE score
 * (Cairn's own): MAXLEN keeps count members as ZADD's MAXLEN does;
 * MINSCORE s removes the members with score < s, MAXSCORE s those with
 * score > s (s may be -inf/+inf).  Replies the number removed (0 for a
 * missing key); an emptied key is deleted.  Every argument is checked
 * before the key is looked up.  Effects: ZREMRANGEBYRANK key first last, or
 * ZREMRANGEBYSCORE key -inf (s / (s +inf with s in %.17g, so a Redis 7.0
 * replica or AOF reader removes exactly the same members. */
static void ztrimCommand(Client *c) {
    const sds key = c->argv[1];
    const sds opt = c->argv[2];
    long long maxlen = 0;
    int highest = 0, byScore = 0, below = 0;
    double bound = 0;
    if (argIs(opt, "maxlen")) {
        int idx = 2;
        if (parseMaxlenOrReply(c, &idx, &maxlen, &highest) == -1) return;
        if (idx != c->argc - 1) {
            replyErrorSyntax(c);
            return;
        }
    } else if (argIs(opt, "minscore") || argIs(opt, "maxscore")) {
        if (c->argc != 4) {
            replyErrorSyntax(c);
            return;
        }
        if (getDoubleOrReply(c, c->argv[3], &bound, NULL) == -1) return;
        byScore = 1;
        below = argIs(opt, "minscore");
    } else {
        replyErrorSyntax(c);
        return;
    }
    int wrong;
    kvobj *o = lookupWriteOrReply(c, key, OBJ_ZSET, &wrong);
    if (!o) {
        if (!wrong) replyLongLong(c, 0);
        return;
    }
    if (!byScore) {
        replyLongLong(c, (long long)zsetTrimToLen(c, o, key, maxlen, highest, 1));
        return;
    }
    Range r = {.type = RANGE_SCORE};
    if (below) r.score = (zrangespec){.min = -INFINITY, .max = bound, .minex = 0, .maxex = 1};
    else r.score = (zrangespec){.min = bound, .max = INFINITY, .minex = 1, .maxex = 0};
    unsigned long first = 0, last = 0;
    unsigned long count = rangeRanks(o, &r, &first, &last);
    if (count) {
        zsetDeleteRanks(o, first, last);
        char num[64];
        num[0] = '(';
        int nlen = snprintf(num + 1, sizeof(num) - 1, "%.17g", bound) + 1;
        EffectArg args[4] = {EA_STR("ZREMRANGEBYSCORE"), EA_SDS(key),
                             below ? EA_STR("-inf") : EA_BUF(num, (size_t)nlen),
                             below ? EA_BUF(num, (size_t)nlen) : EA_STR("+inf")};
        effectsRewrite(4, args);
        signalModifiedKey(c, c->db, key, sdsLen(key));
        notifyZset(c->db, "zremrangebyscore", key, sdsLen(key));
        deleteIfEmpty(c->db, o, key, sdsLen(key));
        serverIncrDirty((long long)count);
    }
    replyLongLong(c, (long long)count);
}

static void zremrangebyrankCommand(Client *c) { zremrangeGeneric(c, RANGE_RANK); }
static void zremrangebyscoreCommand(Client *c) { zremrangeGeneric(c, RANGE_SCORE); }
static void zremrangebylexCommand(Client *c) { zremrangeGeneric(c, RANGE_LEX); }

/* --- ZPOPMIN / ZPOPMAX / ZMPOP / blocking pops --- */

enum { POP_REPLY_ZPOP, POP_REPLY_ZPOP_COUNT, POP_REPLY_BZPOP, POP_REPLY_MPOP };

/* Pops up to count elements of the non-empty zset o at key (min or max
 * first) and replies in the given shape. */
static void popAndReply(Client *c, Db *db, kvobj *o, const char *key, size_t klen, long count, int max, int shape) {
    unsigned long llen = zsetLength(o);
    unsigned long n = (unsigned long)count < llen ? (unsigned long)count : llen;
    if (shape == POP_REPLY_BZPOP) {
        replyArrayLen(c, 3);
        replyBulk(c, key, klen);
    } else if (shape == POP_REPLY_MPOP) {
        replyArrayLen(c, 2);
        replyBulk(c, key, klen);
        replyArrayLen(c, (long)n);
    } else if (shape == POP_REPLY_ZPOP_COUNT && c->resp >= 3) {
        replyArrayLen(c, (long)n);
    } else {
        replyArrayLen(c, (long)(2 * n));
    }
    ZCur cur;
    zcurSeek(&cur, o, max ? llen - 1 : 0);
    for (unsigned long i = 0; i < n; i++) {
        ZElem e;
        zcurGet(&cur, &e);
        if (shape == POP_REPLY_MPOP || (shape == POP_REPLY_ZPOP_COUNT && c->resp >= 3)) replyArrayLen(c, 2);
        replyBulk(c, e.m, e.len);
        replyDouble(c, e.score);
        zcurStep(&cur, max);
    }
    if (max) zsetDeleteRanks(o, llen - n, llen - 1);
    else zsetDeleteRanks(o, 0, n - 1);
    notifyZset(db, max ? "zpopmax" : "zpopmin", key, klen);
    deleteIfEmpty(db, o, key, klen);
    signalModifiedKey(c, db, key, klen);
    serverIncrDirty((long long)n);
}

static void zpopGeneric(Client *c, int max) {
    long count = 1;
    int shape = POP_REPLY_ZPOP;
    if (c->argc > 3) {
        replyErrorSyntax(c);
        return;
    }
    if (c->argc == 3) {
        if (getPositiveLongOrReply(c, c->argv[2], &count, ERR_POSITIVE) == -1) return;
        shape = POP_REPLY_ZPOP_COUNT;
    }
    int wrong;
    kvobj *o = lookupWriteOrReply(c, c->argv[1], OBJ_ZSET, &wrong);
    if (wrong) return;
    if (!o || count == 0) {
        replyEmptyArray(c);
        return;
    }
    popAndReply(c, c->db, o, c->argv[1], sdsLen(c->argv[1]), count, max, shape);
}

static void zpopminCommand(Client *c) { zpopGeneric(c, 0); }
static void zpopmaxCommand(Client *c) { zpopGeneric(c, 1); }

typedef struct ZBlock {
    int max;
    int mpop;
    long count;
} ZBlock;

/* The effect of a blocking or multi-key pop: the plain pop it did,
 * ZPOPMIN|ZPOPMAX key (count < 0) or ... key <popped count>.  In the
 * command that popped it replaces the command as sent; for a client served
 * after blocking (served) it is an effect of that client's own unit. */
static void popEffect(Db *db, int served, kvobj *o, const char *key, size_t klen, int max, long count) {
    if (!effectsOn) return;
    unsigned long len = zsetLength(o);
    long n = count < 0 ? -1 : ((unsigned long)count > len ? (long)len : count);
    EffectArg args[3] = {max ? EA_STR("ZPOPMAX") : EA_STR("ZPOPMIN"), EA_BUF(key, klen), EA_NUM(n)};
    int argc = n < 0 ? 2 : 3;
    if (served) effectsAlso(db->id, argc, args);
    else effectsRewrite(argc, args);
}

static int serveBlockedZset(Client *c, Db *db, const char *key, size_t len) {
    const ZBlock *zb = blockedPriv(c);
    kvobj *o = dbLookupWrite(db, key, len);
    if (!o || kvType(o) != OBJ_ZSET || zsetLength(o) == 0) return 0;
    popEffect(db, 1, o, key, len, zb->max, zb->mpop ? zb->count : -1);
    popAndReply(c, db, o, key, len, zb->mpop ? zb->count : 1, zb->max, zb->mpop ? POP_REPLY_MPOP : POP_REPLY_BZPOP);
    return 1;
}

static void blockZset(Client *c, sds *keys, int numKeys, long long deadline, int max, int mpop, long count) {
    ZBlock *zb = xmalloc(sizeof(*zb));
    zb->max = max;
    zb->mpop = mpop;
    zb->count = count;
    blockForKeys(c, keys, numKeys, deadline, serveBlockedZset, zb, xfree);
}

/* Pops from the first non-empty zset among keys.  Returns 1 if it replied
 * (served or WRONGTYPE), 0 if every key is absent. */
static int popFirstNonEmpty(Client *c, sds *keys, int numKeys, int max, long count, int shape) {
    for (int i = 0; i < numKeys; i++) {
        int wrong;
        kvobj *o = lookupWriteOrReply(c, keys[i], OBJ_ZSET, &wrong);
        if (wrong) return 1;
        if (!o) continue;
        popEffect(c->db, 0, o, keys[i], sdsLen(keys[i]), max, shape == POP_REPLY_MPOP ? count : -1);
        popAndReply(c, c->db, o, keys[i], sdsLen(keys[i]), count, max, shape);
        return 1;
    }
    return 0;
}

static void bzpopGeneric(Client *c, int max) {
    long long deadline;
    if (getBlockTimeoutOrReply(c, c->argv[c->argc - 1], &deadline) == -1) return;
    sds *keys = c->argv + 1;
    int numKeys = c->argc - 2;
    if (popFirstNonEmpty(c, keys, numKeys, max, 1, POP_REPLY_BZPOP)) return;
    if (!clientMayBlock(c)) {
        replyNullArray(c);
        return;
    }
    blockZset(c, keys, numKeys, deadline, max, 0, 1);
}

static void bzpopminCommand(Client *c) { bzpopGeneric(c, 0); }
static void bzpopmaxCommand(Client *c) { bzpopGeneric(c, 1); }

/* [B]ZMPOP [timeout] numkeys key [key ...] MIN|MAX [COUNT count] */
static void zmpopGeneric(Client *c, int idx, int blocking) {
    long numKeys;
    if (getRangeLongOrReply(c, c->argv[idx], 1, LONG_MAX, &numKeys, "ERR numkeys should be greater than 0") == -1)
        return;
    if (numKeys > (long)c->argc - idx - 2) {
        replyErrorSyntax(c);
        return;
    }
    int whereIdx = idx + (int)numKeys + 1, max;
    if (argIs(c->argv[whereIdx], "min")) max = 0;
    else if (argIs(c->argv[whereIdx], "max")) max = 1;
    else {
        replyErrorSyntax(c);
        return;
    }
    long count;
    if (getMpopCountOrReply(c, whereIdx + 1, &count) == -1) return;
    long long deadline = 0;
    if (blocking && getBlockTimeoutOrReply(c, c->argv[1], &deadline) == -1) return;
    sds *keys = c->argv + idx + 1;
    if (popFirstNonEmpty(c, keys, (int)numKeys, max, count, POP_REPLY_MPOP)) return;
    if (!blocking || !clientMayBlock(c)) {
        replyNullArray(c);
        return;
    }
    blockZset(c, keys, (int)numKeys, deadline, max, 1, count);
}

static void zmpopCommand(Client *c) { zmpopGeneric(c, 1, 0); }
static void bzmpopCommand(Client *c) { zmpopGeneric(c, 2, 1); }

/* --- ZPOPDUE / BZPOPDUE (Cairn's own) --- */

/* Due-time queues: a member's score is the unix time in ms at which it
 * falls due; ZPOPDUE pops the due ones (score <= the command's time,
 * dbNowUs: a fractional score falls due at its microsecond), lowest
 * first, and BZPOPDUE waits for one, woken at that microsecond.  Their
 * effect is ZREM key member ..., so no replica or AOF reader ever reads a
 * clock.  Scores are compared in long double, where score * 1000 is exact
 * (64-bit mantissa), so a member is never popped before its time. */

/* The command's time in unix us (dueNow: dbNowUs when it is the moment of
 * dbNowMs, else the start of that ms -- never later than the clock). */
static long long dueNowUs(void) { return dbNowUs / 1000 == dbNowMs ? dbNowUs : dbNowMs * 1000; }

/* How many of o's lowest members are due at unix us now, at most limit. */
static unsigned long zsetDueCount(const kvobj *o, long long nowUs, unsigned long limit) {
    ZCur cur;
    unsigned long n = 0;
    if (!zcurSeek(&cur, o, 0)) return 0;
    long double now = (long double)nowUs;
    while (n < limit && zcurValid(&cur)) {
        ZElem e;
        zcurGet(&cur, &e);
        if (!((long double)e.score * 1000.0L <= now)) break;
        n++;
        zcurNext(&cur);
    }
    return n;
}

/* The unix us at which the non-empty o's lowest member falls due (its
 * score in us, rounded up), or 0 for never (a score beyond 2^53 ms, +inf). */
static long long zsetDueAt(const kvobj *o) {
    ZCur cur;
    ZElem e;
    zcurSeek(&cur, o, 0);
    zcurGet(&cur, &e);
    if (!(e.score <= 9007199254740992.0)) return 0;
    long double at = ceill((long double)e.score * 1000.0L);
    return at < 1 ? 1 : (long long)at;
}

/* Pops o's n lowest members (n >= 1, all due), replies them in shape (as
 * popAndReply), states ZREM key member ... (the command's own effect, or
 * one added for a client served after blocking), notifies "zrem" and
 * deletes an emptied key. */
static void popDueAndReply(Client *c, Db *db, kvobj *o, const char *key, size_t klen, unsigned long n, int shape,
                           int served) {
    if (shape == POP_REPLY_BZPOP) {
        replyArrayLen(c, 3);
        replyBulk(c, key, klen);
    } else if (shape == POP_REPLY_MPOP) {
        replyArrayLen(c, 2);
        replyBulk(c, key, klen);
        replyArrayLen(c, (long)n);
    } else if (shape == POP_REPLY_ZPOP_COUNT && c->resp >= 3) {
        replyArrayLen(c, (long)n);
    } else {
        replyArrayLen(c, (long)(2 * n));
    }
    /* The members stay readable until they are deleted, those of a
     * listpack kept as integers in their own ZElem: the effect is stated
     * from them without copies (a small pop uses the stack). */
    int on = effectsOn;
    ZElem stackElems[4];
    EffectArg stackArgs[6];
    ZElem *elems = on && n > 4 ? xmalloc(sizeof(*elems) * n) : stackElems;
    EffectArg *args = on && n > 4 ? xmalloc(sizeof(*args) * (n + 2)) : stackArgs;
    ZCur cur;
    zcurSeek(&cur, o, 0);
    for (unsigned long i = 0; i < n; i++) {
        ZElem *e = on ? &elems[i] : &stackElems[0];
        zcurGet(&cur, e);
        if (shape == POP_REPLY_MPOP || (shape == POP_REPLY_ZPOP_COUNT && c->resp >= 3)) replyArrayLen(c, 2);
        replyBulk(c, e->m, e->len);
        replyDouble(c, e->score);
        if (on) args[i + 2] = EA_BUF((const char *)e->m, e->len);
        zcurNext(&cur);
    }
    if (on) {
        args[0] = EA_STR("ZREM");
        args[1] = EA_BUF(key, klen);
        if (served) effectsAlso(db->id, (int)n + 2, args);
        else effectsRewrite((int)n + 2, args);
        if (elems != stackElems) {
            xfree(elems);
            xfree(args);
        }
    }
    zsetDeleteRanks(o, 0, n - 1);
    notifyZset(db, "zrem", key, klen);
    deleteIfEmpty(db, o, key, klen);
    signalModifiedKey(c, db, key, klen);
    serverIncrDirty((long long)n);
}

/* ZPOPDUE key [COUNT count]: pops the due members, lowest first: one
 * without COUNT (replied as ZPOPMIN key), at most count with it (as
 * ZPOPMIN key count: RESP3 pairs).  Nothing due, a missing key or COUNT 0:
 * an empty array.  COUNT is checked as ZPOPMIN's count, before the key. */
static void zpopdueCommand(Client *c) {
    long count = 1;
    int shape = POP_REPLY_ZPOP;
    if (c->argc == 4 && argIs(c->argv[2], "count")) {
        if (getPositiveLongOrReply(c, c->argv[3], &count, ERR_POSITIVE) == -1) return;
        shape = POP_REPLY_ZPOP_COUNT;
    } else if (c->argc != 2) {
        replyErrorSyntax(c);
        return;
    }
    int wrong;
    kvobj *o = lookupWriteOrReply(c, c->argv[1], OBJ_ZSET, &wrong);
    if (wrong) return;
    unsigned long n = o && count > 0 ? zsetDueCount(o, dueNowUs(), (unsigned long)count) : 0;
    if (n == 0) {
        replyEmptyArray(c);
        return;
    }
    popDueAndReply(c, c->db, o, c->argv[1], sdsLen(c->argv[1]), n, shape, 0);
}

/* A BZPOPDUE client offered key: served when a member is due, else it
 * asks to be woken when the lowest one falls due. */
static int serveBlockedDue(Client *c, Db *db, const char *key, size_t len) {
    const ZBlock *zb = blockedPriv(c);
    kvobj *o = dbLookupWrite(db, key, len);
    if (!o || kvType(o) != OBJ_ZSET || zsetLength(o) == 0) return 0;
    unsigned long n = zsetDueCount(o, dueNowUs(), zb->mpop ? (unsigned long)zb->count : 1);
    if (n == 0) {
        long long at = zsetDueAt(o);
        if (at) signalKeyAsReadyAt(db, key, len, at);
        return 0;
    }
    popDueAndReply(c, db, o, key, len, n, zb->mpop ? POP_REPLY_MPOP : POP_REPLY_BZPOP, 1);
    return 1;
}

/* BZPOPDUE key [key ...] timeout [COUNT count]: ZPOPDUE over the keys in
 * order, the first with a due member answering; else it blocks until a
 * member of one of them falls due (also one added later with an earlier
 * time), woken by a timer at that moment, or the timeout (a null array).
 * Without COUNT the reply is BZPOPMIN's [key, member, score]; with it
 * BZMPOP's [key, [[member, score], ...]].  A COUNT tail is recognised
 * when there are at least five arguments and the second to last is COUNT
 * (so BZPOPDUE k COUNT 1 waits on the keys k and COUNT); count is checked
 * as BZMPOP's, then the timeout as BZPOPMIN's, before any key.  Inside
 * MULTI or a script it never blocks. */
static void bzpopdueCommand(Client *c) {
    int tIdx = c->argc - 1;
    long count = -1;
    if (c->argc >= 5 && argIs(c->argv[c->argc - 2], "count")) {
        if (getRangeLongOrReply(c, c->argv[c->argc - 1], 1, LONG_MAX, &count, "ERR count should be greater than 0") ==
            -1)
            return;
        tIdx = c->argc - 3;
    }
    long long deadline;
    if (getBlockTimeoutOrReply(c, c->argv[tIdx], &deadline) == -1) return;
    sds *keys = c->argv + 1;
    int numKeys = tIdx - 1;
    int shape = count < 0 ? POP_REPLY_BZPOP : POP_REPLY_MPOP;
    for (int i = 0; i < numKeys; i++) {
        int wrong;
        kvobj *o = lookupWriteOrReply(c, keys[i], OBJ_ZSET, &wrong);
        if (wrong) return;
        if (!o) continue;
        unsigned long n = zsetDueCount(o, dueNowUs(), count < 0 ? 1 : (unsigned long)count);
        if (n == 0) continue;
        popDueAndReply(c, c->db, o, keys[i], sdsLen(keys[i]), n, shape, 0);
        return;
    }
    if (!clientMayBlock(c)) {
        replyNullArray(c);
        return;
    }
    ZBlock *zb = xmalloc(sizeof(*zb));
    zb->max = 0;
    zb->mpop = count > 0;
    zb->count = count;
    blockForKeys(c, keys, numKeys, deadline, serveBlockedDue, zb, xfree);
    for (int i = 0; i < numKeys; i++) {
        kvobj *o = dbFind(c->db, keys[i], sdsLen(keys[i]));
        long long at = o && kvType(o) == OBJ_ZSET && zsetLength(o) ? zsetDueAt(o) : 0;
        if (at) signalKeyAsReadyAt(c->db, keys[i], sdsLen(keys[i]), at);
    }
}

/* --- RL.LOG (Cairn's own) --- */

/* The ranks of o's members with score in [min, max] (count returned). */
static unsigned long scoreRanks(const kvobj *o, double min, double max, unsigned long *first) {
    Range r = {.type = RANGE_SCORE};
    r.score = (zrangespec){.min = min, .max = max, .minex = 0, .maxex = 0};
    unsigned long last;
    return rangeRanks(o, &r, first, &last);
}

/* RL.LOG key window_ms limit [quantity]: a sliding-window limiter over a
 * log.  The key is a sorted set of the requests of the last window_ms
 * (score: the unix ms of the request, member "<ms>-<n>", n counting the
 * requests of that ms from 0).  Entries at or before now - window_ms leave
 * it; then quantity requests (default 1) are logged at now if count +
 * quantity <= limit.  Replies [allowed 0|1, count (after logging), retry
 * after ms: 0 when allowed, when denied the wait until enough entries
 * have left the window, -1 when quantity > limit].  Quantity 0 only looks.
 * The key's TTL ends with its newest entry's window (PEXPIREAT newest +
 * window_ms); an emptied key is deleted.  Errors, before the key:
 * non-integers (ERR_NOT_INT), window_ms < 1 or limit < 0 ("ERR value is
 * out of range, must be positive"), quantity outside [0, 10000] (Redis's
 * range error: each request is a member), now + window_ms beyond ms
 * ("ERR invalid expire time in 'rl.log' command"); then WRONGTYPE.
 * Effects: ZREMRANGEBYSCORE key -inf <now - window_ms>, ZADD key <now>
 * <member> ..., PEXPIREAT key <now + window_ms>, as each happens, so no
 * replica or AOF reader reads a clock. */
#define RL_MAX_QUANTITY 10000 /* requests logged by one call (each a member) */

static void rllogCommand(Client *c) {
    long long window, limit, quantity = 1;
    if (c->argc > 5) {
        replyErrorSyntax(c);
        return;
    }
    if (getLongLongOrReply(c, c->argv[2], &window, NULL) == -1 ||
        getLongLongOrReply(c, c->argv[3], &limit, NULL) == -1 ||
        (c->argc == 5 && getLongLongOrReply(c, c->argv[4], &quantity, NULL) == -1))
        return;
    if (window < 1 || limit < 0) {
        replyError(c, ERR_POSITIVE);
        return;
    }
    if (quantity < 0 || quantity > RL_MAX_QUANTITY) {
        replyErrorFormat(c, "ERR value is out of range, value must between 0 and %d", RL_MAX_QUANTITY);
        return;
    }
    long long now = dbNowMs;
    if (window > LLONG_MAX - now) {
        replyError(c, "ERR invalid expire time in 'rl.log' command");
        return;
    }
    const sds key = c->argv[1];
    int wrong;
    kvobj *o = lookupWriteOrReply(c, key, OBJ_ZSET, &wrong);
    if (wrong) return;
    long long cutoff = now - window;
    unsigned long first = 0, count = 0;
    effectsPrevent();
    if (o) {
        unsigned long gone = scoreRanks(o, -INFINITY, (double)cutoff, &first);
        if (gone) {
            zsetDeleteRanks(o, first, first + gone - 1);
            EffectArg args[4] = {EA_STR("ZREMRANGEBYSCORE"), EA_SDS(key), EA_STR("-inf"), EA_NUM(cutoff)};
            effectsAlso(c->db->id, 4, args);
            signalModifiedKey(c, c->db, key, sdsLen(key));
            notifyZset(c->db, "zremrangebyscore", key, sdsLen(key));
            serverIncrDirty((long long)gone);
            if (deleteIfEmpty(c->db, o, key, sdsLen(key))) o = NULL;
        }
        if (o) count = zsetLength(o);
    }
    int allowed = (unsigned long long)quantity <= (unsigned long long)limit &&
                  count <= (unsigned long long)(limit - quantity);
    long long retry = 0;
    if (!allowed) {
        if (quantity > limit) {
            retry = -1;
        } else {
            /* The (count + quantity - limit)-th oldest entry must leave. */
            ZCur cur;
            ZElem e;
            zcurSeek(&cur, o, (unsigned long)((long long)count + quantity - limit - 1));
            zcurGet(&cur, &e);
            retry = (long long)e.score + window - now;
            if (retry < 1) retry = 1;
        }
    } else if (quantity > 0) {
        unsigned long at = 0;
        long long seq = o ? (long long)scoreRanks(o, (double)now, (double)now, &at) : 0;
        char buf[2 * UTIL_LONG_STR_SIZE];
        int prefix = longLongToString(buf, sizeof(buf), now);
        buf[prefix++] = '-';
        if (!o) {
            o = zsetCreateKey(key, (size_t)prefix + 20);
            dbAdd(c->db, o);
            o = dbFind(c->db, key, sdsLen(key));
        }
        int on = effectsOn;
        EffectArg *args = on ? xmalloc(sizeof(*args) * (size_t)(2 + 2 * quantity)) : NULL;
        sds *members = on ? xmalloc(sizeof(sds) * (size_t)quantity) : NULL;
        for (long long i = 0; i < quantity; i++) {
            int len = prefix + longLongToString(buf + prefix, sizeof(buf) - (size_t)prefix, seq + i);
            int out;
            double ns;
            zsetAdd(o, (double)now, (const unsigned char *)buf, (size_t)len, 0, &out, &ns);
            if (on) {
                members[i] = sdsNewLen(buf, (size_t)len);
                args[2 + 2 * i] = EA_NUM(now);
                args[3 + 2 * i] = EA_SDS(members[i]);
            }
        }
        if (on) {
            args[0] = EA_STR("ZADD");
            args[1] = EA_SDS(key);
            effectsAlso(c->db->id, (int)(2 + 2 * quantity), args);
            for (long long i = 0; i < quantity; i++) sdsFree(members[i]);
            xfree(members);
            xfree(args);
        }
        dbSetExpire(c->db, &o, now + window);
        EffectArg exp[3] = {EA_STR("PEXPIREAT"), EA_SDS(key), EA_NUM(now + window)};
        effectsAlso(c->db->id, 3, exp);
        count += (unsigned long)quantity;
        signalModifiedKey(c, c->db, key, sdsLen(key));
        notifyZset(c->db, "zadd", key, sdsLen(key));
        notifyKeyspaceEvent(NOTIFY_GENERIC, "expire", key, sdsLen(key), c->db->id);
        signalKeyAsReady(c->db, key, sdsLen(key));
        serverIncrDirty(quantity + 1);
    }
    replyArrayLen(c, 3);
    replyLongLong(c, allowed);
    replyLongLong(c, (long long)count);
    replyLongLong(c, retry);
}

/* --- ZRANDMEMBER --- */

static void zrandmemberWithCount(Client *c) {
    long l;
    int withscores = 0;
    if (getRangeLongOrReply(c, c->argv[2], -LONG_MAX, LONG_MAX, &l, NULL) == -1) return;
    if (c->argc > 4) {
        replyErrorSyntax(c);
        return;
    }
    if (c->argc == 4) {
        if (!argIs(c->argv[3], "withscores")) {
            replyErrorSyntax(c);
            return;
        }
        withscores = 1;
        if (l < -LONG_MAX / 2 || l > LONG_MAX / 2) {
            replyError(c, "ERR value is out of range");
            return;
        }
    }
    int wrong;
    kvobj *o = lookupReadOrReply(c, c->argv[1], OBJ_ZSET, &wrong);
    if (wrong) return;
    if (!o || l == 0) {
        replyEmptyArray(c);
        return;
    }
    unsigned long size = zsetLength(o);
    if (l < 0) {
        unsigned long count = (unsigned long)-l;
        replyRangeLen(c, count, withscores);
        for (unsigned long i = 0; i < count; i++) {
            ZCur cur;
            zcurSeek(&cur, o, (unsigned long)randBounded(size));
            ZElem e;
            zcurGet(&cur, &e);
            replyElem(c, &e, withscores);
        }
        return;
    }
    unsigned long count = (unsigned long)l;
    if (count >= size) {
        replyRanks(c, o, 0, size, 0, withscores);
        return;
    }
    /* Distinct ranks: partial Fisher-Yates when the set is small relative
     * to count, else rejection sampling of ranks. */
    replyRangeLen(c, count, withscores);
    if (count * 3 > size || size <= 1024) {
        unsigned long *idx = xmalloc(sizeof(unsigned long) * size);
        for (unsigned long i = 0; i < size; i++) idx[i] = i;
        for (unsigned long i = 0; i < count; i++) {
            unsigned long j = i + (unsigned long)randBounded(size - i);
            unsigned long t = idx[i];
            idx[i] = idx[j];
            idx[j] = t;
            ZCur cur;
            zcurSeek(&cur, o, idx[i]);
            ZElem e;
            zcurGet(&cur, &e);
            replyElem(c, &e, withscores);
        }
        xfree(idx);
        return;
    }
    /* count*3 <= size: open-addressing set of chosen ranks. */
    unsigned long cap = 1;
    while (cap < count * 2) cap <<= 1;
    unsigned long *slots = xmalloc(sizeof(unsigned long) * cap);
    for (unsigned long i = 0; i < cap; i++) slots[i] = ULONG_MAX;
    unsigned long got = 0;
    while (got < count) {
        unsigned long r = (unsigned long)randBounded(size);
        unsigned long h = (r * 0x9E3779B97F4A7C15UL) & (cap - 1);
        int dup = 0;
        while (slots[h] != ULONG_MAX) {
            if (slots[h] == r) {
                dup = 1;
                break;
            }
            h = (h + 1) & (cap - 1);
        }
        if (dup) continue;
        slots[h] = r;
        got++;
        ZCur cur;
        zcurSeek(&cur, o, r);
        ZElem e;
        zcurGet(&cur, &e);
        replyElem(c, &e, withscores);
    }
    xfree(slots);
}

static void zrandmemberCommand(Client *c) {
    if (c->argc >= 3) {
        zrandmemberWithCount(c);
        return;
    }
    int wrong;
    kvobj *o = lookupReadOrReply(c, c->argv[1], OBJ_ZSET, &wrong);
    if (wrong) return;
    if (!o) {
        replyNull(c);
        return;
    }
    ZCur cur;
    zcurSeek(&cur, o, (unsigned long)randBounded(zsetLength(o)));
    ZElem e;
    zcurGet(&cur, &e);
    replyBulk(c, e.m, e.len);
}

/* --- ZUNION / ZINTER / ZDIFF (+STORE), ZINTERCARD --- */

typedef struct Src {
    kvobj *o;          /* NULL: missing key (empty) */
    double weight;
    unsigned long len;
} Src;

static unsigned long srcLength(const kvobj *o) {
    if (!o) return 0;
    if (kvType(o) == OBJ_ZSET) return zsetLength(o);
    return setValueLength(o);
}

/* Score of member m in a zset or set input (1 for set members). */
static int srcFind(const Src *s, const unsigned char *m, size_t len, double *score) {
    if (!s->o) return 0;
    if (kvType(s->o) == OBJ_ZSET) return zsetScore(s->o, m, len, score);
    *score = 1.0;
    return setValueContains(s->o, (const char *)m, len);
}

typedef void SrcVisit(void *priv, const unsigned char *m, size_t len, double score);

/* Set members are inputs with score 1. */
typedef struct SetVisitCtx {
    SrcVisit *fn;
    void *priv;
} SetVisitCtx;

static void setVisitAdapter(void *priv, const char *m, size_t len) {
    SetVisitCtx *ctx = priv;
    ctx->fn(ctx->priv, (const unsigned char *)m, len, 1.0);
}

/* Visits every element of an input (not weighted). */
static void srcForEach(const Src *s, SrcVisit *fn, void *priv) {
    if (!s->o) return;
    if (kvType(s->o) == OBJ_ZSET) {
        ZCur cur;
        if (!zcurSeek(&cur, s->o, 0)) return;
        for (; zcurValid(&cur); zcurNext(&cur)) {
            ZElem e;
            zcurGet(&cur, &e);
            fn(priv, e.m, e.len, e.score);
        }
    } else {
        SetVisitCtx ctx = {fn, priv};
        setValueForEach(s->o, setVisitAdapter, &ctx);
    }
}

enum { AGG_SUM, AGG_MIN, AGG_MAX };
enum { OP_UNION, OP_INTER, OP_DIFF };

static double weighted(double w, double s) {
    double v = w * s;
    return isnan(v) ? 0 : v;
}

static double aggregate(int agg, double a, double b) {
    if (agg == AGG_SUM) {
        double v = a + b;
        return isnan(v) ? 0 : v;
    }
    if (agg == AGG_MIN) return b < a ? b : a;
    return b > a ? b : a;
}

typedef struct OpCtx {
    Src *srcs;
    int n;
    int agg;
    int op;
    Zset *out;
    size_t maxlen;
    double weight; /* of the source being visited (union) */
    long limit;    /* intercard */
    long card;
    int cardOnly;
} OpCtx;

static void unionVisit(void *priv, const unsigned char *m, size_t len, double score) {
    OpCtx *x = priv;
    double v = weighted(x->weight, score);
    zskiplistNode *n = zsetFind(x->out, m, len);
    if (n) {
        double nv = aggregate(x->agg, n->score, v);
        if (nv != n->score || (nv == 0 && signbit(nv) != signbit(n->score))) zslUpdateScore(x->out->zsl, n, nv);
        return;
    }
    zsetInsert(x->out, m, len, v);
    if (len > x->maxlen) x->maxlen = len;
}

static void interVisit(void *priv, const unsigned char *m, size_t len, double score) {
    OpCtx *x = priv;
    if (x->cardOnly && x->limit && x->card >= x->limit) return;
    double v = weighted(x->srcs[0].weight, score);
    for (int j = 1; j < x->n; j++) {
        double s;
        if (x->srcs[j].o == x->srcs[0].o) {
            s = score;
        } else if (!srcFind(&x->srcs[j], m, len, &s)) {
            return;
        }
        v = aggregate(x->agg, v, x->srcs[j].weight * s); /* NaN handled by the sum */
    }
    if (x->cardOnly) {
        x->card++;
        return;
    }
    zsetInsert(x->out, m, len, v);
    if (len > x->maxlen) x->maxlen = len;
}

static void diffVisit(void *priv, const unsigned char *m, size_t len, double score) {
    OpCtx *x = priv;
    for (int j = 1; j < x->n; j++) {
        double s;
        if (srcFind(&x->srcs[j], m, len, &s)) return;
    }
    zsetInsert(x->out, m, len, score);
    if (len > x->maxlen) x->maxlen = len;
}

/* Stable insertion sort by ascending cardinality. */
static void sortSrcs(Src *s, int n) {
    for (int i = 1; i < n; i++) {
        Src t = s[i];
        int j = i - 1;
        while (j >= 0 && s[j].len > t.len) {
            s[j + 1] = s[j];
            j--;
        }
        s[j + 1] = t;
    }
}

static const char *opCommandName(int op, int store, int cardOnly) {
    if (cardOnly) return "zintercard";
    if (op == OP_UNION) return store ? "zunionstore" : "zunion";
    if (op == OP_INTER) return store ? "zinterstore" : "zinter";
    return store ? "zdiffstore" : "zdiff";
}

static void zsetOpGeneric(Client *c, int idx, const sds dst, int op, int cardOnly) {
    long numKeys;
    if (getLongOrReply(c, c->argv[idx], &numKeys, NULL) == -1) return;
    if (numKeys < 1) {
        replyErrorFormat(c, "ERR at least 1 input key is needed for '%s' command", opCommandName(op, dst != NULL, cardOnly));
        return;
    }
    if (numKeys > (long)c->argc - idx - 1) {
        replyErrorSyntax(c);
        return;
    }
    int n = (int)numKeys;
    Src *srcs = xcalloc((size_t)n * sizeof(Src));
    for (int i = 0; i < n; i++) {
        const sds k = c->argv[idx + 1 + i];
        kvobj *o = dbLookupRead(c->db, k, sdsLen(k), LOOKUP_NONE);
        if (o && kvType(o) != OBJ_ZSET && kvType(o) != OBJ_SET) {
            xfree(srcs);
            replyErrorWrongType(c);
            return;
        }
        srcs[i].o = o;
        srcs[i].weight = 1.0;
        srcs[i].len = srcLength(o);
    }
    int agg = AGG_SUM, withscores = 0;
    long limit = 0;
    for (int j = idx + 1 + n; j < c->argc; j++) {
        int remaining = c->argc - j;
        const sds a = c->argv[j];
        if (op != OP_DIFF && !cardOnly && remaining >= n + 1 && argIs(a, "weights")) {
            for (int i = 0; i < n; i++) {
                j++;
                if (!stringToDouble(c->argv[j], sdsLen(c->argv[j]), &srcs[i].weight)) {
                    xfree(srcs);
                    replyError(c, "ERR weight value is not a float");
                    return;
                }
            }
        } else if (op != OP_DIFF && !cardOnly && remaining >= 2 && argIs(a, "aggregate")) {
            const sds v = c->argv[++j];
            if (argIs(v, "sum")) agg = AGG_SUM;
            else if (argIs(v, "min")) agg = AGG_MIN;
            else if (argIs(v, "max")) agg = AGG_MAX;
            else {
                xfree(srcs);
                replyErrorSyntax(c);
                return;
            }
        } else if (!dst && !cardOnly && argIs(a, "withscores")) {
            withscores = 1;
        } else if (cardOnly && remaining >= 2 && argIs(a, "limit")) {
            if (getPositiveLongOrReply(c, c->argv[++j], &limit, "ERR LIMIT can't be negative") == -1) {
                xfree(srcs);
                return;
            }
        } else {
            xfree(srcs);
            replyErrorSyntax(c);
            return;
        }
    }
    OpCtx x = {.srcs = srcs, .n = n, .agg = agg, .op = op, .out = zsetCreate(), .limit = limit, .cardOnly = cardOnly};
    if (op == OP_UNION) {
        sortSrcs(srcs, n);
        for (int i = 0; i < n; i++) {
            x.weight = srcs[i].weight;
            srcForEach(&srcs[i], unionVisit, &x);
        }
    } else if (op == OP_INTER) {
        sortSrcs(srcs, n);
        if (srcs[0].len > 0) srcForEach(&srcs[0], interVisit, &x);
    } else if (srcs[0].len > 0) {
        srcForEach(&srcs[0], diffVisit, &x);
    }
    xfree(srcs);
    if (cardOnly) {
        zsetFreeValue(x.out);
        replyLongLong(c, x.card);
        return;
    }
    if (dst) {
        storeResult(c, dst, x.out, x.maxlen,
                    op == OP_UNION ? "zunionstore" : op == OP_INTER ? "zinterstore" : "zdiffstore");
        return;
    }
    replyRangeLen(c, x.out->zsl->length, withscores);
    for (zskiplistNode *nd = x.out->zsl->header->lv[0].forward; nd; nd = nd->lv[0].forward) {
        ZElem e;
        e.m = zslMember(nd);
        e.len = nd->len;
        e.score = nd->score;
        replyElem(c, &e, withscores);
    }
    zsetFreeValue(x.out);
}

static void zunionCommand(Client *c) { zsetOpGeneric(c, 1, NULL, OP_UNION, 0); }
static void zinterCommand(Client *c) { zsetOpGeneric(c, 1, NULL, OP_INTER, 0); }
static void zdiffCommand(Client *c) { zsetOpGeneric(c, 1, NULL, OP_DIFF, 0); }
static void zunionstoreCommand(Client *c) { zsetOpGeneric(c, 2, c->argv[1], OP_UNION, 0); }
static void zinterstoreCommand(Client *c) { zsetOpGeneric(c, 2, c->argv[1], OP_INTER, 0); }
static void zdiffstoreCommand(Client *c) { zsetOpGeneric(c, 2, c->argv[1], OP_DIFF, 0); }
static void zintercardCommand(Client *c) { zsetOpGeneric(c, 1, NULL, OP_INTER, 1); }

/* --- ZSCAN --- */

static void zscanCommand(Client *c) {
    uint64_t cursor;
    long count;
    sds pat;
    kvobj *o = scanKeyStartOrReply(c, OBJ_ZSET, &cursor, &count, &pat);
    if (!o) return;
    replyArrayLen(c, 2);
    if (isListpack(o)) {
        replyBulk(c, "0", 1);
        void *lenNode = replyDeferredLen(c);
        long n = 0;
        unsigned char *lp = kvPtr(o);
        for (unsigned char *p = lpFirst(lp); p; p = lpNext(lp, lpNext(lp, p))) {
            unsigned char ib1[LP_INTBUF_SIZE], ib2[LP_INTBUF_SIZE];
            unsigned int ml, sl;
            unsigned char *m = lpGetValue(p, &ml, ib1, NULL, NULL);
            if (pat && !globMatch(pat, sdsLen(pat), (const char *)m, ml, 0)) continue;
            unsigned char *s = lpGetValue(lpNext(lp, p), &sl, ib2, NULL, NULL);
            replyBulk(c, m, ml);
            replyBulk(c, s, sl);
            n += 2;
        }
        replySetDeferredArrayLen(c, lenNode, n);
        return;
    }
    Zset *z = kvPtr(o);
    ScanBatch b = {0};
    long maxIter = count > LONG_MAX / 10 ? LONG_MAX : count * 10;
    do {
        cursor = htabScan(&z->ht, cursor, scanBatchCollect, &b);
    } while (cursor && maxIter-- && b.count < (size_t)count);
    scanReplyCursor(c, cursor);
    void *lenNode = replyDeferredLen(c);
    long n = 0;
    for (size_t i = 0; i < b.count; i++) {
        zskiplistNode *nd = b.items[i];
        if (pat && !globMatch(pat, sdsLen(pat), (const char *)zslMember(nd), nd->len, 0)) continue;
        char sbuf[64];
        int sl = doubleToString(sbuf, sizeof(sbuf), nd->score);
        replyBulk(c, zslMember(nd), nd->len);
        replyBulk(c, sbuf, (size_t)sl);
        n += 2;
    }
    replySetDeferredArrayLen(c, lenNode, n);
    scanBatchFree(&b);
}

/* --- command handlers (metadata: src/core/command_data.c) --- */

Command zsetCommands[] = {
    {.name = "zadd", .proc = zaddCommand},
    {.name = "zincrby", .proc = zincrbyCommand},
    {.name = "zrem", .proc = zremCommand},
    {.name = "zcard", .proc = zcardCommand},
    {.name = "zcount", .proc = zcountCommand},
    {.name = "zlexcount", .proc = zlexcountCommand},
    {.name = "zscore", .proc = zscoreCommand},
    {.name = "zmscore", .proc = zmscoreCommand},
    {.name = "zrank", .proc = zrankCommand},
    {.name = "zrevrank", .proc = zrevrankCommand},
    {.name = "zrange", .proc = zrangeCommand},
    {.name = "zrangestore", .proc = zrangestoreCommand},
    {.name = "zrangebyscore", .proc = zrangebyscoreCommand},
    {.name = "zrevrangebyscore", .proc = zrevrangebyscoreCommand},
    {.name = "zrangebylex", .proc = zrangebylexCommand},
    {.name = "zrevrangebylex", .proc = zrevrangebylexCommand},
    {.name = "zrevrange", .proc = zrevrangeCommand},
    {.name = "ztrim", .proc = ztrimCommand},
    {.name = "zremrangebyrank", .proc = zremrangebyrankCommand},
    {.name = "zremrangebyscore", .proc = zremrangebyscoreCommand},
    {.name = "zremrangebylex", .proc = zremrangebylexCommand},
    {.name = "zpopmin", .proc = zpopminCommand},
    {.name = "zpopmax", .proc = zpopmaxCommand},
    {.name = "zmpop", .proc = zmpopCommand},
    {.name = "bzmpop", .proc = bzmpopCommand},
    {.name = "bzpopmin", .proc = bzpopminCommand},
    {.name = "bzpopmax", .proc = bzpopmaxCommand},
    {.name = "zpopdue", .proc = zpopdueCommand},
    {.name = "bzpopdue", .proc = bzpopdueCommand},
    {.name = "rl.log", .proc = rllogCommand},
    {.name = "zrandmember", .proc = zrandmemberCommand},
    {.name = "zunion", .proc = zunionCommand},
    {.name = "zinter", .proc = zinterCommand},
    {.name = "zdiff", .proc = zdiffCommand},
    {.name = "zunionstore", .proc = zunionstoreCommand},
    {.name = "zinterstore", .proc = zinterstoreCommand},
    {.name = "zdiffstore", .proc = zdiffstoreCommand},
    {.name = "zintercard", .proc = zintercardCommand},
    {.name = "zscan", .proc = zscanCommand},
    {0},
};

/* --- values built outside the keyspace (RDB, DUMP/RESTORE) --- */

void zsetLoadBegin(size_t hint, int *enc, void **ptr) {
    Zset *z = zsetCreate();
    if (hint > 16) htabExpand(&z->ht, hint);
    *enc = OBJ_ENC_SKIPLIST;
    *ptr = z;
}

int zsetLoadAdd(int *enc, void **ptr, const unsigned char *m, size_t len, double score) {
    (void)enc;
    Zset *z = *ptr;
    if (zsetFind(z, m, len)) return 0;
    zsetInsert(z, m, len, score);
    return 1;
}

void zsetLoadEnd(int *enc, void **ptr) {
    Zset *z = *ptr;
    if (z->zsl->length > maxListpackEntries()) return;
    size_t total = 0;
    for (zskiplistNode *n = z->zsl->header->lv[0].forward; n; n = n->lv[0].forward) {
        if (n->len > maxListpackValue()) return;
        total += n->len;
    }
    if (!lpSafeToAdd(NULL, total)) return;
    *ptr = zsetToListpack(z);
    *enc = OBJ_ENC_LISTPACK;
    zsetFreeValue(z);
}

void zsetLoadFree(int enc, void *ptr) { zsetValueFree(ptr, enc); }

/* A listpack score entry as a number: an integer, or text strtod reads
 * whole; NaN is not a score.  Returns 0 or -1. */
static int listpackScore(unsigned char *p, double *out) {
    unsigned int len;
    int isInt;
    long long v;
    unsigned char *s = lpGetValue(p, &len, NULL, &isInt, &v);
    if (isInt) {
        *out = (double)v;
        return 0;
    }
    if (decimalToDouble((const char *)s, len, out)) return 0;
    char tmp[128];
    if (len == 0 || len >= sizeof(tmp)) return -1;
    memcpy(tmp, s, len);
    tmp[len] = '\0';
    char *end;
    double d = strtod(tmp, &end);
    if (*end || isnan(d)) return -1;
    *out = d;
    return 0;
}

int zsetLoadListpack(unsigned char *lp, int *enc, void **ptr) {
    unsigned long n = lpLength(lp);
    if (n == 0 || n % 2 || n / 2 > maxListpackEntries()) return 0;
    double prevScore = 0;
    unsigned char prevBuf[LP_INTBUF_SIZE], *prev = NULL;
    unsigned int prevLen = 0;
    size_t maxv = maxListpackValue();
    LpDupSet dups;
    lpDupInit(&dups, n / 2);
    int ok = 1;
    for (unsigned char *p = lpFirst(lp); p && ok; p = lpNext(lp, p)) {
        unsigned char buf[LP_INTBUF_SIZE];
        unsigned int len;
        unsigned char *m = lpGetValue(p, &len, buf, NULL, NULL);
        unsigned char *sp = lpNext(lp, p);
        double score;
        if (len > maxv || !sp || listpackScore(sp, &score) < 0) {
            ok = 0;
            break;
        }
        /* Strictly ascending by (score, member), as the encoding keeps it;
         * members distinct (equal ones with equal scores fail the order). */
        if (prev) {
            int c = score < prevScore ? -1 : score > prevScore ? 1 : 0;
            if (c == 0) {
                int k = memcmp(m, prev, len < prevLen ? len : prevLen);
                c = k ? k : (len > prevLen) - (len < prevLen);
            }
            if (c <= 0) {
                ok = 0;
                break;
            }
        }
        if (lpDupAdd(&dups, lp, p, m, len)) {
            ok = 0;
            break;
        }
        if (m == buf) {
            memcpy(prevBuf, buf, len);
            prev = prevBuf;
        } else {
            prev = m;
        }
        prevLen = len;
        prevScore = score;
        p = sp;
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

static ConfigDef zsetConfig[] = {
    CONFIG_LL("zset-max-listpack-entries", "zset-max-ziplist-entries", 0, server.cfg.zsetMaxListpackEntries, 0,
              LONG_MAX, "128", .rank = CONFIG_RANK_ENCODINGS + 5),
    CONFIG_LL("zset-max-listpack-value", "zset-max-ziplist-value", CF_MEMORY, zsetMaxListpackValue, 0, LONG_MAX, "64",
              .rank = CONFIG_RANK_ENCODINGS + 6),
};

void zsetRegisterConfig(void) { configRegister(zsetConfig, CONFIG_COUNT_OF(zsetConfig)); }
