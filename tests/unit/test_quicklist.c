/* test_quicklist.c -- unit tests for src/ds/quicklist.c.
 *
 * Every list is checked against a reference model (an array of sds) by
 * reading it forwards, backwards and by index, and against its own
 * invariants (quicklistValidate: links, counts, listpack integrity, ends raw
 * and inner nodes compressed) and the node limits of its fill.  The
 * randomized test runs thousands of mixed operations per option set. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ds/alloc.h"
#include "ds/listpack.h"
#include "ds/rand.h"
#include "ds/quicklist.h"
#include "ds/sds.h"

/* ---- Reference model ---- */

typedef struct Model {
    sds *v;     /* elements */
    size_t len; /* elements in use */
    size_t cap; /* slots allocated */
} Model;

static void modelInsert(Model *m, size_t at, const void *s, size_t len) {
    if (m->len == m->cap) {
        m->cap = m->cap ? m->cap * 2 : 16;
        m->v = realloc(m->v, m->cap * sizeof(sds));
    }
    memmove(m->v + at + 1, m->v + at, (m->len - at) * sizeof(sds));
    m->v[at] = sdsNewLen(s, len);
    m->len++;
}

static void modelDelete(Model *m, size_t at, size_t n) {
    for (size_t i = at; i < at + n; i++)
        sdsFree(m->v[i]);
    memmove(m->v + at, m->v + at + n, (m->len - at - n) * sizeof(sds));
    m->len -= n;
}

static void modelReplace(Model *m, size_t at, const void *s, size_t len) {
    sdsFree(m->v[at]);
    m->v[at] = sdsNewLen(s, len);
}

static void modelFree(Model *m) {
    modelDelete(m, 0, m->len);
    free(m->v);
    memset(m, 0, sizeof(*m));
}

/* ---- Helpers ---- */

static uint64_t rngState = 0x9e3779b97f4a7c15ULL;
static uint64_t rnd(void) {
    rngState ^= rngState << 13;
    rngState ^= rngState >> 7;
    rngState ^= rngState << 17;
    return rngState;
}
static size_t rndBelow(size_t n) { return n ? (size_t)(rnd() % n) : 0; }

static sds entrySds(const QlEntry *e) {
    return e->str ? sdsNewLen(e->str, e->len) : sdsFromLongLong(e->ival);
}

static void expectEntry(const QlEntry *e, const sds want) {
    sds got = entrySds(e);
    if (sdsLen(got) != sdsLen(want) || memcmp(got, want, sdsLen(got)) != 0) {
        fail_msg("entry '%.40s' (len %zu) != expected '%.40s' (len %zu)", got, sdsLen(got), want,
                 sdsLen(want));
    }
    assert_true(quicklistEntryEquals(e, want, sdsLen(want)));
    sdsFree(got);
}

typedef struct LimitCtx {
    int fill;            /* the list's fill */
    unsigned long nodes; /* nodes seen */
    unsigned long plain; /* plain nodes seen */
} LimitCtx;

static size_t limitOf(int fill) { return fill < 0 ? (size_t)4096 << (-fill - 1) : 8192; }

/* Packed nodes of more than one element respect the fill. */
/* The packed threshold in force (quicklistSetPackedThreshold). */
static size_t testThreshold = (size_t)1 << 30;

static void setThreshold(size_t t) {
    assert_true(quicklistSetPackedThreshold(t));
    testThreshold = t ? t : (size_t)1 << 30;
}

static int checkNodeLimit(void *ctx, int plain, const unsigned char *data, size_t len) {
    LimitCtx *lc = ctx;
    lc->nodes++;
    if (plain) {
        lc->plain++;
        assert_true(len >= testThreshold);
        return 0;
    }
    unsigned long n = lpLength((unsigned char *)data);
    assert_int_equal(lpBytes(data), len);
    assert_true(n > 0);
    if (n > 1) {
        assert_true(len <= limitOf(lc->fill));
        if (lc->fill >= 0) assert_true(n <= (unsigned long)lc->fill);
    }
    return 0;
}

/* Full comparison of ql with the model. */
static void expectList(Quicklist *ql, const Model *m, int fill) {
    assert_true(quicklistValidate(ql));
    assert_int_equal(quicklistCount(ql), m->len);
    LimitCtx lc = {fill, 0, 0};
    quicklistForEachNode(ql, checkNodeLimit, &lc);
    assert_int_equal(lc.nodes, quicklistNodeCount(ql));

    QlEntry e;
    size_t i = 0;
    QuicklistIter *it = quicklistIter(ql, QL_HEAD);
    while (quicklistNext(it, &e)) {
        assert_true(i < m->len);
        expectEntry(&e, m->v[i++]);
    }
    quicklistIterRelease(it);
    assert_int_equal(i, m->len);

    it = quicklistIter(ql, QL_TAIL);
    while (quicklistNext(it, &e)) {
        assert_true(i > 0);
        expectEntry(&e, m->v[--i]);
    }
    quicklistIterRelease(it);
    assert_int_equal(i, 0);
    assert_true(quicklistValidate(ql));

    /* Some positions by index, both signs. */
    for (int k = 0; k < 8 && m->len; k++) {
        size_t at = rndBelow(m->len);
        assert_true(quicklistIndex(ql, (long)at, &e));
        expectEntry(&e, m->v[at]);
        assert_true(quicklistIndex(ql, (long)at - (long)m->len, &e));
        expectEntry(&e, m->v[at]);
    }
    assert_false(quicklistIndex(ql, (long)m->len, &e));
    assert_false(quicklistIndex(ql, -(long)m->len - 1, &e));
}

/* A value of some shape: integers, short, medium and (rarely) big strings. */
static sds randomValue(int allowBig) {
    switch (rndBelow(allowBig ? 10 : 9)) {
    case 0:
    case 1:
        return sdsFromLongLong((long long)rnd() % 100000 - 50000);
    case 2:
        return sdsFromLongLong((long long)rnd());
    case 3:
        return sdsNewLen("", 0);
    case 4:
        return sdsNew("007");
    case 5:
    case 6: {
        sds s = sdsNewLen(NULL, 1 + rndBelow(30));
        for (size_t i = 0; i < sdsLen(s); i++)
            s[i] = (char)('a' + rndBelow(26));
        return s;
    }
    case 7:
    case 8: {
        sds s = sdsNewLen(NULL, 50 + rndBelow(600));
        for (size_t i = 0; i < sdsLen(s); i++)
            s[i] = (char)('a' + (i % 7));
        return s;
    }
    default: {
        sds s = sdsNewLen(NULL, 5000 + rndBelow(70000));
        for (size_t i = 0; i < sdsLen(s); i++)
            s[i] = (char)rnd();
        return s;
    }
    }
}

/* "val-<i>" padded with a repeating pattern: compresses well. */
static sds patterned(long i, size_t pad) {
    sds s = sdsCatPrintf(sdsEmpty(), "val-%ld-", i);
    for (size_t k = 0; k < pad; k++)
        s = sdsCatLen(s, "abcd", 4);
    return s;
}

static void pushBoth(Quicklist *ql, Model *m, sds v, int where) {
    quicklistPush(ql, v, sdsLen(v), where);
    modelInsert(m, where == QL_HEAD ? 0 : m->len, v, sdsLen(v));
}

static const int FILLS[] = {0, 1, 2, 3, 4, 5, 16, 128, -1, -2, -3, -5};
#define NFILLS (sizeof(FILLS) / sizeof(FILLS[0]))

/* ---- Tests ---- */

static void test_push_pop_both_ends(void **state) {
    (void)state;
    for (size_t f = 0; f < NFILLS; f++) {
        int fill = FILLS[f];
        Quicklist *ql = quicklistCreate(fill, 0);
        Model m = {0};
        for (long i = 0; i < 600; i++) {
            sds v = (i % 3) ? patterned(i, (size_t)(i % 20)) : sdsFromLongLong(i * 7919);
            pushBoth(ql, &m, v, (i % 5 < 2) ? QL_HEAD : QL_TAIL);
            sdsFree(v);
        }
        expectList(ql, &m, fill);
        if (fill >= 0 && fill <= 16)
            assert_true(quicklistNodeCount(ql) >= 600UL / (unsigned long)(fill ? fill : 1));
        if (fill == 0) assert_int_equal(quicklistNodeCount(ql), 600);
        if (fill == 4) assert_true(quicklistNodeCount(ql) <= 300);
        /* Pop alternately from both ends. */
        for (int k = 0; m.len > 0; k++) {
            sds got;
            int where = (k % 3 == 0) ? QL_TAIL : QL_HEAD;
            assert_true(quicklistPop(ql, where, &got));
            size_t at = where == QL_HEAD ? 0 : m.len - 1;
            assert_int_equal(sdsLen(got), sdsLen(m.v[at]));
            assert_memory_equal(got, m.v[at], sdsLen(got));
            sdsFree(got);
            modelDelete(&m, at, 1);
            if (k % 97 == 0) expectList(ql, &m, fill);
        }
        sds none = NULL;
        assert_false(quicklistPop(ql, QL_HEAD, &none));
        assert_false(quicklistPop(ql, QL_TAIL, &none));
        assert_null(none);
        assert_int_equal(quicklistNodeCount(ql), 0);
        expectList(ql, &m, fill);
        modelFree(&m);
        quicklistRelease(ql);
    }
}

static void test_fill_limits(void **state) {
    (void)state;
    /* Positive fill: exactly `fill` small elements per node. */
    Quicklist *ql = quicklistCreate(3, 0);
    for (int i = 0; i < 10; i++)
        quicklistPush(ql, "x", 1, QL_TAIL);
    assert_int_equal(quicklistNodeCount(ql), 4);
    quicklistRelease(ql);
    /* Negative fill: by bytes.  100-byte strings, 4 KB nodes: ~39 per node. */
    ql = quicklistCreate(-1, 0);
    char big[100];
    memset(big, 'q', sizeof(big));
    for (int i = 0; i < 1000; i++)
        quicklistPush(ql, big, sizeof(big), QL_TAIL);
    QuicklistStats st;
    quicklistGetStats(ql, &st);
    assert_true(st.maxNodeCount >= 38 && st.maxNodeCount <= 40);
    assert_int_equal(st.plain, 0);
    quicklistRelease(ql);
    /* Positive fill is still held to the 8 KB safety limit. */
    ql = quicklistCreate(1000, 0);
    for (int i = 0; i < 1000; i++)
        quicklistPush(ql, big, sizeof(big), QL_TAIL);
    quicklistGetStats(ql, &st);
    assert_true(st.maxNodeCount < 80);
    assert_true(st.nodes >= 13);
    quicklistRelease(ql);
    /* A depth past the maximum is clamped, not wrapped (65537 is not 1). */
    ql = quicklistCreate(8, 65537);
    for (int i = 0; i < 2000; i++)
        quicklistPush(ql, big, sizeof(big), QL_TAIL);
    quicklistGetStats(ql, &st);
    assert_int_equal(st.compressed, 0);
    quicklistRelease(ql);
    /* Options are clamped. */
    ql = quicklistCreate(-100, -3);
    for (int i = 0; i < 2000; i++)
        quicklistPush(ql, big, sizeof(big), QL_TAIL);
    quicklistGetStats(ql, &st);
    assert_true(st.maxNodeCount > 600); /* 64 KB nodes */
    assert_int_equal(st.compressed, 0);
    quicklistRelease(ql);
}

static void test_index_negative(void **state) {
    (void)state;
    Quicklist *ql = quicklistCreate(4, 0);
    Model m = {0};
    for (long i = 0; i < 101; i++) {
        sds v = sdsCatPrintf(sdsEmpty(), "e%ld", i);
        pushBoth(ql, &m, v, QL_TAIL);
        sdsFree(v);
    }
    QlEntry e;
    for (long i = 0; i < 101; i++) {
        assert_true(quicklistIndex(ql, i, &e));
        expectEntry(&e, m.v[i]);
        assert_true(quicklistIndex(ql, i - 101, &e));
        expectEntry(&e, m.v[i]);
    }
    assert_true(quicklistIndex(ql, -1, &e));
    expectEntry(&e, m.v[100]);
    assert_false(quicklistIndex(ql, 101, &e));
    assert_false(quicklistIndex(ql, -102, &e));
    assert_false(quicklistIndex(ql, LONG_MAX, &e));
    assert_false(quicklistIndex(ql, LONG_MIN, &e));
    /* Integers come back as integers. */
    quicklistPush(ql, "12345", 5, QL_HEAD);
    assert_true(quicklistIndex(ql, 0, &e));
    assert_null(e.str);
    assert_int_equal(e.ival, 12345);
    assert_true(quicklistEntryEquals(&e, "12345", 5));
    assert_false(quicklistEntryEquals(&e, "012345", 6));
    assert_false(quicklistEntryEquals(&e, "1234", 4));
    quicklistPush(ql, "-0", 2, QL_HEAD);
    assert_true(quicklistIndex(ql, 0, &e));
    assert_non_null(e.str);
    assert_true(quicklistEntryEquals(&e, "-0", 2));
    assert_false(quicklistEntryEquals(&e, "0", 1));
    modelFree(&m);
    quicklistRelease(ql);
    /* Empty list. */
    ql = quicklistCreate(-2, 0);
    assert_false(quicklistIndex(ql, 0, &e));
    assert_false(quicklistIndex(ql, -1, &e));
    assert_null(quicklistIterAt(ql, 0, QL_HEAD));
    QuicklistIter *it = quicklistIter(ql, QL_TAIL);
    assert_false(quicklistNext(it, &e));
    quicklistIterRelease(it);
    quicklistRelease(ql);
}

static void test_replace(void **state) {
    (void)state;
    int fills[] = {4, -1, 1};
    for (size_t f = 0; f < 3; f++) {
        Quicklist *ql = quicklistCreate(fills[f], 0);
        Model m = {0};
        for (long i = 0; i < 200; i++) {
            sds v = patterned(i, 20); /* ~90 bytes: 4 KB nodes fill up */
            pushBoth(ql, &m, v, QL_TAIL);
            sdsFree(v);
        }
        assert_false(quicklistReplaceAtIndex(ql, 200, "x", 1));
        assert_false(quicklistReplaceAtIndex(ql, -201, "x", 1));
        for (int k = 0; k < 300; k++) {
            long at = (long)rndBelow(200);
            sds v;
            if (k % 3 == 0)
                v = sdsFromLongLong(k);
            else if (k % 3 == 1)
                v = patterned(k, rndBelow(200)); /* may not fit in place */
            else
                v = sdsNewLen("", 0);
            assert_true(quicklistReplaceAtIndex(ql, k % 2 ? at : at - 200, v, sdsLen(v)));
            modelReplace(&m, (size_t)at, v, sdsLen(v));
            sdsFree(v);
            if (k % 50 == 0) expectList(ql, &m, fills[f]);
        }
        expectList(ql, &m, fills[f]);
        modelFree(&m);
        quicklistRelease(ql);
    }
}

/* Insert before/after every position of full nodes, through an iterator. */
static void test_insert_middle_of_full_nodes(void **state) {
    (void)state;
    int fills[] = {4, 5, -1};
    for (size_t f = 0; f < 3; f++) {
        int fill = fills[f];
        for (long pos = 0; pos < 20; pos++) {
            for (int after = 0; after < 2; after++) {
                for (int dir = 0; dir < 2; dir++) {
                    Quicklist *ql = quicklistCreate(fill, 0);
                    Model m = {0};
                    size_t pad = fill < 0 ? 250 : 0; /* ~4 KB nodes hold ~4 */
                    for (long i = 0; i < 20; i++) {
                        sds v = patterned(i, pad);
                        pushBoth(ql, &m, v, QL_TAIL);
                        sdsFree(v);
                    }
                    unsigned long nodesBefore = quicklistNodeCount(ql);
                    QuicklistIter *it = quicklistIterAt(ql, pos, dir == 0 ? QL_HEAD : QL_TAIL);
                    assert_non_null(it);
                    QlEntry e;
                    assert_true(quicklistNext(it, &e));
                    expectEntry(&e, m.v[pos]);
                    sds nv = patterned(1000 + pos, pad);
                    if (after)
                        quicklistInsertAfter(it, &e, nv, sdsLen(nv));
                    else
                        quicklistInsertBefore(it, &e, nv, sdsLen(nv));
                    modelInsert(&m, (size_t)pos + (size_t)after, nv, sdsLen(nv));
                    sdsFree(nv);
                    /* Iteration goes on after the old neighbour of e. */
                    size_t eAt = (size_t)pos + (after ? 0 : 1);
                    if (dir == 0) {
                        size_t want = eAt + 1 + (after ? 1 : 0);
                        while (want < m.len) {
                            assert_true(quicklistNext(it, &e));
                            expectEntry(&e, m.v[want++]);
                        }
                    } else {
                        long want = (long)eAt - 1 - (after ? 0 : 1);
                        while (want >= 0) {
                            assert_true(quicklistNext(it, &e));
                            expectEntry(&e, m.v[want--]);
                        }
                    }
                    assert_false(quicklistNext(it, &e));
                    quicklistIterRelease(it);
                    assert_true(quicklistNodeCount(ql) >= nodesBefore);
                    assert_true(quicklistNodeCount(ql) <= nodesBefore + 2);
                    expectList(ql, &m, fill);
                    modelFree(&m);
                    quicklistRelease(ql);
                }
            }
        }
    }
}

/* quicklistDelRange against Redis's rules for start/count. */
static void test_delrange(void **state) {
    (void)state;
    struct {
        long start, count;
    } cases[] = {{0, 5},    {3, 10},  {-5, 3},       {-5, 100},     {-60, 10},    {50, 1},
                 {10, 0},   {10, -1}, {0, 1000},     {-1, 1},       {49, 5},      {-50, 1},
                 {-51, 1},  {2, 4},   {1, 48},       {4, 4},        {3, 2},       {6, 30},
                 {-49, 47}, {0, 1},   {LONG_MIN, 3}, {LONG_MAX, 1}, {5, LONG_MAX}};
    int fills[] = {4, 1, -1, 7};
    for (size_t f = 0; f < 4; f++) {
        for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
            Quicklist *ql = quicklistCreate(fills[f], 0);
            Model m = {0};
            for (long i = 0; i < 50; i++) {
                sds v = patterned(i, fills[f] < 0 ? 200 : 0);
                pushBoth(ql, &m, v, QL_TAIL);
                sdsFree(v);
            }
            long start = cases[c].start, count = cases[c].count;
            long n = 50, s = start < 0 ? (start < -n ? -1 : n + start) : start;
            int expect = count > 0 && s >= 0 && s < n;
            assert_int_equal(quicklistDelRange(ql, start, count), expect);
            if (expect) {
                long del = count > n - s ? n - s : count;
                modelDelete(&m, (size_t)s, (size_t)del);
            }
            expectList(ql, &m, fills[f]);
            modelFree(&m);
            quicklistRelease(ql);
        }
    }
    /* Neighbours left half-empty merge: fill 4, 40 elements = 10 nodes;
     * deleting [2,6) leaves 2 + 2 elements that fit in one node. */
    Quicklist *ql = quicklistCreate(4, 0);
    for (int i = 0; i < 40; i++)
        quicklistPush(ql, "v", 1, QL_TAIL);
    assert_int_equal(quicklistNodeCount(ql), 10);
    assert_true(quicklistDelRange(ql, 2, 4));
    assert_int_equal(quicklistNodeCount(ql), 9);
    assert_true(quicklistValidate(ql));
    quicklistRelease(ql);
}

/* Delete while iterating, both directions: every element is visited once. */
static void test_iter_delete(void **state) {
    (void)state;
    int fills[] = {1, 3, 4, -1, -2, 0};
    for (size_t f = 0; f < 6; f++) {
        for (int dir = 0; dir < 2; dir++) {
            for (int mode = 0; mode < 4; mode++) {
                Quicklist *ql = quicklistCreate(fills[f], mode == 3 ? 1 : 0);
                Model m = {0};
                for (long i = 0; i < 300; i++) {
                    sds v = patterned(i, fills[f] < 0 ? (size_t)(i % 50) : 0);
                    pushBoth(ql, &m, v, QL_TAIL);
                    sdsFree(v);
                }
                QuicklistIter *it = quicklistIter(ql, dir == 0 ? QL_HEAD : QL_TAIL);
                QlEntry e;
                size_t visited = 0;
                long at = dir == 0 ? 0 : (long)m.len - 1;
                while (quicklistNext(it, &e)) {
                    expectEntry(&e, m.v[at]);
                    visited++;
                    /* mode 0: delete all, 1: every other, 2: runs of 7 of 10, 3: every third */
                    int del = mode == 0 || (mode == 1 && visited % 2) || (mode == 2 && visited % 10 < 7) ||
                              (mode == 3 && visited % 3 == 0);
                    if (del) {
                        quicklistIterDelete(it, &e);
                        modelDelete(&m, (size_t)at, 1);
                        if (dir == 0) at--;
                    }
                    at += dir == 0 ? 1 : -1;
                }
                quicklistIterRelease(it);
                assert_int_equal(visited, 300);
                expectList(ql, &m, fills[f]);
                if (mode == 0) assert_int_equal(quicklistNodeCount(ql), 0);
                modelFree(&m);
                quicklistRelease(ql);
            }
        }
    }
    /* Deleting a stretch in the middle then stopping: merges happen. */
    Quicklist *ql = quicklistCreate(4, 0);
    for (int i = 0; i < 40; i++)
        quicklistPush(ql, "v", 1, QL_TAIL);
    QuicklistIter *it = quicklistIterAt(ql, 2, QL_HEAD);
    QlEntry e;
    for (int k = 0; k < 4; k++) {
        assert_true(quicklistNext(it, &e));
        quicklistIterDelete(it, &e);
    }
    quicklistIterRelease(it);
    assert_int_equal(quicklistCount(ql), 36);
    assert_int_equal(quicklistNodeCount(ql), 9);
    assert_true(quicklistValidate(ql));
    quicklistRelease(ql);
}

/* Deletes, then an insert further on: the iterator's index bookkeeping
 * must have followed the deletes. */
static void test_iter_delete_then_insert(void **state) {
    (void)state;
    for (int dir = 0; dir < 2; dir++) {
        Quicklist *ql = quicklistCreate(4, 0);
        Model m = {0};
        for (long i = 0; i < 40; i++) {
            sds v = patterned(i, 0);
            pushBoth(ql, &m, v, QL_TAIL);
            sdsFree(v);
        }
        QuicklistIter *it = quicklistIter(ql, dir == 0 ? QL_HEAD : QL_TAIL);
        QlEntry e;
        long at = dir == 0 ? 0 : 39;
        for (int k = 0; k < 20; k++) {
            assert_true(quicklistNext(it, &e));
            expectEntry(&e, m.v[at]);
            if (k % 3 != 2) {
                quicklistIterDelete(it, &e);
                modelDelete(&m, (size_t)at, 1);
                if (dir == 0) at--;
            }
            at += dir == 0 ? 1 : -1;
        }
        assert_true(quicklistNext(it, &e));
        expectEntry(&e, m.v[at]);
        quicklistInsertAfter(it, &e, "new", 3);
        modelInsert(&m, (size_t)at + 1, "new", 3);
        long next = dir == 0 ? at + 2 : at - 1;
        assert_true(quicklistNext(it, &e));
        expectEntry(&e, m.v[next]);
        quicklistIterRelease(it);
        expectList(ql, &m, 4);
        modelFree(&m);
        quicklistRelease(ql);
    }
}

static void test_iter_replace(void **state) {
    (void)state;
    Quicklist *ql = quicklistCreate(-1, 0);
    Model m = {0};
    for (long i = 0; i < 200; i++) {
        sds v = patterned(i, 10);
        pushBoth(ql, &m, v, QL_TAIL);
        sdsFree(v);
    }
    for (int dir = 0; dir < 2; dir++) {
        QuicklistIter *it = quicklistIter(ql, dir == 0 ? QL_HEAD : QL_TAIL);
        QlEntry e;
        long at = dir == 0 ? 0 : 199, visited = 0;
        while (quicklistNext(it, &e)) {
            expectEntry(&e, m.v[at]);
            visited++;
            if (at % 3 == 0) {
                /* Alternate small, bigger (forces a split) and large (plain). */
                sds v = at % 9 == 0   ? patterned(at, 400)
                        : at % 9 == 3 ? patterned(at, 2000)
                                      : sdsFromLongLong(at);
                quicklistIterReplace(it, &e, v, sdsLen(v));
                modelReplace(&m, (size_t)at, v, sdsLen(v));
                sdsFree(v);
            }
            at += dir == 0 ? 1 : -1;
        }
        quicklistIterRelease(it);
        assert_int_equal(visited, 200);
        expectList(ql, &m, -1);
    }
    modelFree(&m);
    quicklistRelease(ql);
}

static int countSmallNode(void *ctx, int plain, const unsigned char *data, size_t len) {
    if (len < 64) ++*(unsigned long *)ctx;
    return 0;
}

/* Every inner node is compressed, except tiny ones (LZF cannot shrink them). */
static void checkCompressed(Quicklist *ql, int depth) {
    QuicklistStats st;
    quicklistGetStats(ql, &st);
    unsigned long inner = st.nodes > 2 * (unsigned long)depth ? st.nodes - 2 * (unsigned long)depth : 0;
    unsigned long small = 0;
    quicklistForEachNode(ql, countSmallNode, &small);
    assert_true(st.compressed <= inner);
    assert_true(st.compressed + small >= inner);
    assert_true(quicklistValidate(ql));
}

static void test_compression(void **state) {
    (void)state;
    for (int depth = 1; depth <= 2; depth++) {
        Quicklist *ql = quicklistCreate(8, depth);
        Quicklist *raw = quicklistCreate(8, 0);
        Model m = {0};
        /* Few nodes: nothing inner. */
        for (long i = 0; i < 8 * 2 * depth; i++) {
            sds v = patterned(i, 8);
            pushBoth(ql, &m, v, QL_TAIL);
            sdsFree(v);
        }
        QuicklistStats st;
        quicklistGetStats(ql, &st);
        assert_int_equal(st.compressed, 0);
        for (long i = 8 * 2 * depth; i < 1000; i++) {
            sds v = patterned(i, 8);
            pushBoth(ql, &m, v, i % 2 ? QL_TAIL : QL_HEAD);
            quicklistPush(raw, v, sdsLen(v), i % 2 ? QL_TAIL : QL_HEAD);
            sdsFree(v);
        }
        checkCompressed(ql, depth);
        quicklistGetStats(ql, &st);
        assert_true(st.compressed > 100);
        assert_true(st.storedBytes < st.rawBytes / 2);
        assert_true(quicklistMemUsage(ql) < quicklistMemUsage(raw));
        expectList(ql, &m, 8);
        checkCompressed(ql, depth); /* reading recompressed what it opened */

        /* Changes in the middle keep inner nodes compressed. */
        for (int k = 0; k < 200; k++) {
            long at = (long)rndBelow(m.len);
            sds v = patterned(5000 + k, rndBelow(12));
            switch (k % 4) {
            case 0:
                assert_true(quicklistReplaceAtIndex(ql, at, v, sdsLen(v)));
                modelReplace(&m, (size_t)at, v, sdsLen(v));
                break;
            case 1: {
                QuicklistIter *it = quicklistIterAt(ql, at, QL_HEAD);
                QlEntry e;
                assert_true(quicklistNext(it, &e));
                quicklistInsertAfter(it, &e, v, sdsLen(v));
                quicklistIterRelease(it);
                modelInsert(&m, (size_t)at + 1, v, sdsLen(v));
                break;
            }
            case 2: {
                long n = 1 + (long)rndBelow(20);
                if (at + n > (long)m.len) n = (long)m.len - at;
                assert_true(quicklistDelRange(ql, at, n));
                modelDelete(&m, (size_t)at, (size_t)n);
                break;
            }
            default: {
                QuicklistIter *it = quicklistIterAt(ql, at, QL_TAIL);
                QlEntry e;
                for (int d = 0; d < 5 && quicklistNext(it, &e); d++) {
                    expectEntry(&e, m.v[at]);
                    quicklistIterDelete(it, &e);
                    modelDelete(&m, (size_t)at, 1);
                    at--;
                }
                quicklistIterRelease(it);
            }
            }
            sdsFree(v);
            checkCompressed(ql, depth);
        }
        expectList(ql, &m, 8);
        /* An Index entry from a compressed node reads right. */
        QlEntry e;
        assert_true(quicklistIndex(ql, (long)m.len / 2, &e));
        expectEntry(&e, m.v[m.len / 2]);
        checkCompressed(ql, depth);

        /* Shrinking to the ends leaves everything raw. */
        assert_true(quicklistDelRange(ql, 5, (long)m.len - 10));
        modelDelete(&m, 5, m.len - 10);
        checkCompressed(ql, depth);
        expectList(ql, &m, 8);

        /* Switching compression off and on. */
        for (long i = 0; i < 500; i++) {
            sds v = patterned(i, 8);
            pushBoth(ql, &m, v, QL_TAIL);
            sdsFree(v);
        }
        quicklistSetOptions(ql, 8, 0);
        quicklistGetStats(ql, &st);
        assert_int_equal(st.compressed, 0);
        assert_true(quicklistValidate(ql));
        quicklistSetOptions(ql, 8, depth);
        checkCompressed(ql, depth);
        expectList(ql, &m, 8);

        /* Pop everything. */
        while (m.len) {
            sds got;
            assert_true(quicklistPop(ql, QL_TAIL, &got));
            assert_int_equal(sdsCmp(got, m.v[m.len - 1]), 0);
            sdsFree(got);
            modelDelete(&m, m.len - 1, 1);
            if (m.len % 50 == 0) checkCompressed(ql, depth);
        }
        modelFree(&m);
        quicklistRelease(ql);
        quicklistRelease(raw);
    }
    /* Huge compressible plain elements in the middle get compressed too. */
    {
        setThreshold(100000);
        Quicklist *hq = quicklistCreate(-2, 1);
        Model hm = {0};
        for (long i = 0; i < 5; i++) {
            sds v = patterned(i, 30000); /* 120 KB */
            pushBoth(hq, &hm, v, QL_TAIL);
            sdsFree(v);
        }
        QuicklistStats hs;
        quicklistGetStats(hq, &hs);
        assert_int_equal(hs.plain, 5);
        assert_int_equal(hs.compressed, 3);
        assert_true(hs.storedBytes < hs.rawBytes * 2 / 5 + 5000); /* 2 raw ends + 3 tiny */
        expectList(hq, &hm, -2);
        checkCompressed(hq, 1);
        modelFree(&hm);
        quicklistRelease(hq);
        setThreshold(0);
    }
    /* Random bytes do not compress: nodes stay raw, still valid. */
    Quicklist *ql = quicklistCreate(8, 1);
    for (int i = 0; i < 200; i++) {
        unsigned char buf[40];
        for (size_t k = 0; k < sizeof(buf); k++)
            buf[k] = (unsigned char)rnd();
        quicklistPush(ql, buf, sizeof(buf), QL_TAIL);
    }
    QuicklistStats st;
    quicklistGetStats(ql, &st);
    assert_int_equal(st.compressed, 0);
    assert_true(quicklistValidate(ql));
    quicklistRelease(ql);
}

static void test_dup(void **state) {
    (void)state;
    for (int depth = 0; depth <= 1; depth++) {
        Quicklist *ql = quicklistCreate(-2, depth);
        Model m = {0};
        for (long i = 0; i < 2000; i++) {
            sds v = i % 100 == 0 ? patterned(i, 3000) : patterned(i, (size_t)(i % 9));
            pushBoth(ql, &m, v, QL_TAIL);
            sdsFree(v);
        }
        Quicklist *copy = quicklistDup(ql);
        assert_int_equal(quicklistNodeCount(copy), quicklistNodeCount(ql));
        expectList(copy, &m, -2);
        assert_true(quicklistDelRange(ql, 0, 1000));
        quicklistPush(ql, "changed", 7, QL_HEAD);
        expectList(copy, &m, -2);
        quicklistRelease(ql);
        expectList(copy, &m, -2);
        if (depth) checkCompressed(copy, depth);
        quicklistRelease(copy);
        modelFree(&m);
    }
    /* Dup while an iterator holds an inner node open: the copy is not held. */
    Quicklist *ql = quicklistCreate(8, 1);
    for (long i = 0; i < 400; i++) {
        sds v = patterned(i, 8);
        quicklistPush(ql, v, sdsLen(v), QL_TAIL);
        sdsFree(v);
    }
    QuicklistIter *it = quicklistIterAt(ql, 200, QL_HEAD);
    QlEntry e;
    assert_true(quicklistNext(it, &e));
    Quicklist *held = quicklistDup(ql);
    quicklistIterRelease(it);
    checkCompressed(ql, 1);
    checkCompressed(held, 1);
    quicklistRelease(held);
    quicklistRelease(ql);

    Quicklist *empty = quicklistCreate(4, 0);
    Quicklist *copy = quicklistDup(empty);
    assert_int_equal(quicklistCount(copy), 0);
    quicklistRelease(empty);
    quicklistRelease(copy);
}

static void test_large_elements(void **state) {
    (void)state;
    int fills[] = {-2, 128, -1};
    for (size_t f = 0; f < 3; f++) {
        int fill = fills[f];
        for (int depth = 0; depth <= 1; depth++) {
            setThreshold(6000);
            Quicklist *ql = quicklistCreate(fill, depth);
            Model m = {0};
            sds big = patterned(1, 3000); /* 12 KB: plain */
            sds mid = patterned(2, 1200); /* 4.8 KB: packed, alone for -1 */
            for (long i = 0; i < 30; i++) {
                sds small = patterned(i, 4);
                pushBoth(ql, &m, small, QL_TAIL);
                sdsFree(small);
            }
            pushBoth(ql, &m, big, QL_TAIL);
            pushBoth(ql, &m, big, QL_HEAD);
            pushBoth(ql, &m, mid, QL_TAIL);
            QuicklistStats st;
            quicklistGetStats(ql, &st);
            assert_int_equal(st.plain, 2);
            expectList(ql, &m, fill);
            /* Insert a large value in the middle of a packed node. */
            QuicklistIter *it = quicklistIterAt(ql, 10, QL_HEAD);
            QlEntry e;
            assert_true(quicklistNext(it, &e));
            quicklistInsertAfter(it, &e, big, sdsLen(big));
            modelInsert(&m, 11, big, sdsLen(big));
            quicklistIterRelease(it);
            expectList(ql, &m, fill);
            /* Replace: small -> large, large -> small, large -> large. */
            assert_true(quicklistReplaceAtIndex(ql, 5, big, sdsLen(big)));
            modelReplace(&m, 5, big, sdsLen(big));
            assert_true(quicklistReplaceAtIndex(ql, 0, "tiny", 4));
            modelReplace(&m, 0, "tiny", 4);
            sds big2 = patterned(3, 5000);
            assert_true(quicklistReplaceAtIndex(ql, 11, big2, sdsLen(big2)));
            modelReplace(&m, 11, big2, sdsLen(big2));
            expectList(ql, &m, fill);
            /* Index of a plain element returns its bytes. */
            assert_true(quicklistIndex(ql, 11, &e));
            assert_int_equal(e.len, sdsLen(big2));
            assert_memory_equal(e.str, big2, e.len);
            /* Delete plain nodes while iterating backwards. */
            it = quicklistIter(ql, QL_TAIL);
            long at = (long)m.len - 1;
            while (quicklistNext(it, &e)) {
                expectEntry(&e, m.v[at]);
                if (e.len > 4000) {
                    quicklistIterDelete(it, &e);
                    modelDelete(&m, (size_t)at, 1);
                }
                at--;
            }
            quicklistIterRelease(it);
            quicklistGetStats(ql, &st);
            assert_int_equal(st.plain, 0);
            expectList(ql, &m, fill);
            /* Pop a plain element. */
            pushBoth(ql, &m, big, QL_HEAD);
            sds got;
            assert_true(quicklistPop(ql, QL_HEAD, &got));
            assert_int_equal(sdsCmp(got, big), 0);
            sdsFree(got);
            modelDelete(&m, 0, 1);
            expectList(ql, &m, fill);
            sdsFree(big);
            sdsFree(mid);
            sdsFree(big2);
            modelFree(&m);
            quicklistRelease(ql);
            setThreshold(0);
        }
    }
}

/* With the default threshold (1 GB) a big element is a packed node of its
 * own, never plain, as in Redis 7.0; the threshold's bounds are Redis's. */
static void test_packed_threshold(void **state) {
    (void)state;
    Quicklist *ql = quicklistCreate(-2, 0);
    Model m = {0};
    sds big = patterned(1, 5000); /* 20 KB, over the 8 KB node limit */
    for (long i = 0; i < 20; i++) {
        sds small = patterned(i, 4);
        pushBoth(ql, &m, small, i % 2 ? QL_HEAD : QL_TAIL);
        sdsFree(small);
    }
    pushBoth(ql, &m, big, QL_TAIL);
    pushBoth(ql, &m, big, QL_HEAD);
    QuicklistStats st;
    quicklistGetStats(ql, &st);
    assert_int_equal(st.plain, 0);
    assert_int_equal(st.nodes, 3); /* big, smalls, big */
    expectList(ql, &m, -2);
    /* At exactly the threshold an element goes plain, one byte below not. */
    setThreshold(20000);
    sds at = sdsNewLen(NULL, 20000), below = sdsNewLen(NULL, 19999);
    memset(at, 'a', 20000);
    memset(below, 'b', 19999);
    pushBoth(ql, &m, at, QL_TAIL);
    pushBoth(ql, &m, below, QL_TAIL);
    quicklistGetStats(ql, &st);
    assert_int_equal(st.plain, 1);
    expectList(ql, &m, -2);
    setThreshold(0);
    assert_false(quicklistSetPackedThreshold((1ULL << 32) - (1ULL << 20) + 1));
    assert_true(quicklistSetPackedThreshold((1ULL << 32) - (1ULL << 20)));
    assert_true(quicklistSetPackedThreshold(0));
    sdsFree(below);
    sdsFree(at);
    sdsFree(big);
    modelFree(&m);
    quicklistRelease(ql);
}

static void test_mem_usage(void **state) {
    (void)state;
    Quicklist *ql = quicklistCreate(-2, 0);
    size_t empty = quicklistMemUsage(ql);
    assert_true(empty > 0 && empty <= 48);
    size_t prev = empty;
    for (int i = 0; i < 10; i++) {
        quicklistPush(ql, "item", 4, QL_TAIL);
        size_t now = quicklistMemUsage(ql);
        assert_true(now >= prev);
        prev = now;
    }
    /* Ten small items: header + one node + one listpack, no per-element blocks. */
    assert_int_equal(quicklistNodeCount(ql), 1);
    assert_true(prev <= 32 + 32 + 96);
    for (int i = 0; i < 100000; i++)
        quicklistPush(ql, "item", 4, QL_TAIL);
    size_t big = quicklistMemUsage(ql);
    assert_true(big > 100000 * 5);
    assert_true(big < 100000 * 9);
    quicklistRelease(ql);
}

/* Thousands of mixed operations against the model, several option sets. */
static void test_randomized(void **state) {
    (void)state;
    struct {
        int fill, depth;
    } opts[] = {{-2, 0}, {4, 0}, {1, 1}, {3, 2}, {-1, 1}, {128, 0}, {16, 3}, {0, 1}};
    for (size_t o = 0; o < sizeof(opts) / sizeof(opts[0]); o++) {
        int fill = opts[o].fill, depth = opts[o].depth;
        Quicklist *ql = quicklistCreate(fill, depth);
        Model m = {0};
        for (int op = 0; op < 4000; op++) {
            sds v = randomValue(op % 16 == 0);
            size_t n = m.len;
            switch (rndBelow(10)) {
            case 0:
            case 1:
                pushBoth(ql, &m, v, (int)rndBelow(2));
                break;
            case 2: {
                sds got = NULL;
                int where = (int)rndBelow(2);
                assert_int_equal(quicklistPop(ql, where, &got), n > 0);
                if (n) {
                    size_t at = where == QL_HEAD ? 0 : n - 1;
                    assert_int_equal(sdsCmp(got, m.v[at]), 0);
                    modelDelete(&m, at, 1);
                    sdsFree(got);
                }
                break;
            }
            case 3: {
                long at = (long)rndBelow(n + 2) - 1;
                int ok = quicklistReplaceAtIndex(ql, at, v, sdsLen(v));
                assert_int_equal(ok, at >= 0 ? (size_t)at < n : n > 0);
                if (ok) modelReplace(&m, at >= 0 ? (size_t)at : n - 1, v, sdsLen(v));
                break;
            }
            case 4:
            case 5: {
                if (!n) break;
                size_t at = rndBelow(n);
                int dir = (int)rndBelow(2), after = (int)rndBelow(2);
                QuicklistIter *it = quicklistIterAt(ql, (long)at, dir == 0 ? QL_HEAD : QL_TAIL);
                QlEntry e;
                assert_true(quicklistNext(it, &e));
                expectEntry(&e, m.v[at]);
                if (after)
                    quicklistInsertAfter(it, &e, v, sdsLen(v));
                else
                    quicklistInsertBefore(it, &e, v, sdsLen(v));
                modelInsert(&m, at + (size_t)after, v, sdsLen(v));
                /* one more step must return e's old neighbour */
                long next = dir == 0 ? (long)at + 2 : (long)at - 1;
                int more = quicklistNext(it, &e);
                assert_int_equal(more, next >= 0 && (size_t)next < m.len);
                if (more) expectEntry(&e, m.v[next]);
                quicklistIterRelease(it);
                break;
            }
            case 6: {
                long start = (long)rndBelow(2 * n + 4) - (long)n - 2;
                long count = (long)rndBelow(n / 2 + 3) - 1;
                long s = start < 0 ? (start < -(long)n ? -1 : (long)n + start) : start;
                int expect = count > 0 && s >= 0 && s < (long)n;
                assert_int_equal(quicklistDelRange(ql, start, count), expect);
                if (expect) modelDelete(&m, (size_t)s, (size_t)(count > (long)n - s ? (long)n - s : count));
                break;
            }
            case 7: {
                if (!n) break;
                size_t at = rndBelow(n);
                int dir = (int)rndBelow(2);
                QuicklistIter *it = quicklistIterAt(ql, (long)at, dir == 0 ? QL_HEAD : QL_TAIL);
                QlEntry e;
                long cur = (long)at;
                for (int k = 0; k < 40 && quicklistNext(it, &e); k++) {
                    expectEntry(&e, m.v[cur]);
                    if (rndBelow(3) == 0) {
                        quicklistIterDelete(it, &e);
                        modelDelete(&m, (size_t)cur, 1);
                        if (dir == 0) cur--;
                    }
                    cur += dir == 0 ? 1 : -1;
                }
                quicklistIterRelease(it);
                break;
            }
            case 8: {
                if (!n) break;
                size_t at = rndBelow(n);
                QuicklistIter *it = quicklistIterAt(ql, (long)at, QL_HEAD);
                QlEntry e;
                assert_true(quicklistNext(it, &e));
                quicklistIterReplace(it, &e, v, sdsLen(v));
                modelReplace(&m, at, v, sdsLen(v));
                if (at + 1 < m.len) {
                    assert_true(quicklistNext(it, &e));
                    expectEntry(&e, m.v[at + 1]);
                }
                quicklistIterRelease(it);
                break;
            }
            default: {
                QlEntry e;
                long at = (long)rndBelow(2 * n + 2) - (long)n - 1;
                int ok = quicklistIndex(ql, at, &e);
                assert_int_equal(ok, at >= 0 ? (size_t)at < n : (size_t)(-at) <= n);
                if (ok) expectEntry(&e, m.v[at >= 0 ? (size_t)at : n + (size_t)at]);
            }
            }
            sdsFree(v);
            if (op % 200 == 0)
                expectList(ql, &m, fill);
            else
                assert_true(quicklistValidate(ql));
            assert_int_equal(quicklistCount(ql), m.len);
        }
        expectList(ql, &m, fill);
        Quicklist *copy = quicklistDup(ql);
        expectList(copy, &m, fill);
        quicklistRelease(copy);
        modelFree(&m);
        quicklistRelease(ql);
    }
}

static void test_append_listpack_and_foreach(void **state) {
    (void)state;
    Quicklist *ql = quicklistCreate(-2, 1);
    Model m = {0};
    for (int n = 0; n < 5; n++) {
        unsigned char *lp = lpNew(0);
        for (int i = 0; i < 50; i++) {
            sds v = patterned(n * 100 + i, 6);
            lp = lpAppend(lp, (unsigned char *)v, sdsLen(v));
            modelInsert(&m, m.len, v, sdsLen(v));
            sdsFree(v);
        }
        quicklistAppendListpack(ql, lp);
    }
    quicklistAppendListpack(ql, lpNew(0)); /* empty: ignored */
    sds big = patterned(9, 5000);
    quicklistAppendPlain(ql, big, sdsLen(big));
    modelInsert(&m, m.len, big, sdsLen(big));
    sdsFree(big);
    assert_int_equal(quicklistNodeCount(ql), 6);
    checkCompressed(ql, 1);
    testThreshold = 0; /* a loaded plain node may be any size (RDB says plain) */
    expectList(ql, &m, -2);
    testThreshold = (size_t)1 << 30;
    modelFree(&m);
    quicklistRelease(ql);
}

/* ---- bare listpacks: loans and conversions ---- */

/* A list held the way t_list.c holds it: a bare listpack or a quicklist. */
typedef struct Held {
    unsigned char *lp;
    Quicklist *ql;
} Held;

static Quicklist *heldOpen(Held *h, QuicklistLoan *loan, int fill) {
    return h->lp ? quicklistLend(loan, h->lp, fill, 0) : h->ql;
}

static void heldClose(Held *h, QuicklistLoan *loan, int shrunk) {
    if (h->lp) {
        unsigned char *lp;
        Quicklist *grown = quicklistEndLoan(loan, &lp);
        if (grown) {
            h->lp = NULL;
            h->ql = grown;
        } else {
            h->lp = lp;
        }
    } else if (shrunk) {
        unsigned char *lp = quicklistToListpack(h->ql);
        if (lp) {
            h->lp = lp;
            h->ql = NULL;
        }
    }
}

static void expectHeld(Held *h, const Model *m, int fill) {
    QuicklistLoan loan;
    Quicklist *ql = heldOpen(h, &loan, fill);
    expectList(ql, m, fill);
    heldClose(h, &loan, 0);
}

static void heldFree(Held *h) {
    if (h->lp) lpFree(h->lp);
    else quicklistRelease(h->ql);
}

/* Count limit 5: five elements stay a listpack, the sixth makes a
 * quicklist; it goes back once one node of at most 2 (5/2) remains (two
 * nodes never do, however small). */
static void test_loan_count_boundary(void **state) {
    (void)state;
    Held h = {lpNew(0), NULL};
    Model m = {0};
    QuicklistLoan loan;
    for (int i = 0; i < 5; i++) {
        sds v = patterned(i, 1);
        pushBoth(heldOpen(&h, &loan, 5), &m, v, QL_TAIL);
        heldClose(&h, &loan, 0);
        sdsFree(v);
        assert_non_null(h.lp);
        assert_int_equal(lpLength(h.lp), (unsigned long)i + 1);
    }
    expectHeld(&h, &m, 5);
    sds v = patterned(5, 1);
    pushBoth(heldOpen(&h, &loan, 5), &m, v, QL_HEAD);
    heldClose(&h, &loan, 0);
    sdsFree(v);
    assert_null(h.lp);
    assert_int_equal(quicklistNodeCount(h.ql), 2);
    expectHeld(&h, &m, 5);
    /* Shrinking: two nodes stay a quicklist; one node of 3 (3*2 > 5) too. */
    sds out;
    for (int left = 5; left >= 0; left--) {
        Quicklist *ql = heldOpen(&h, &loan, 5);
        assert_true(quicklistPop(ql, QL_HEAD, &out)); /* nodes [1] [5]: the head node goes first */
        sdsFree(out);
        modelDelete(&m, 0, 1);
        heldClose(&h, &loan, 1);
        if (left > 2)
            assert_null(h.lp); /* one node of 3..5: twice that exceeds 5 */
        else
            assert_non_null(h.lp); /* at most 2 left in one node: a listpack */
        expectHeld(&h, &m, 5);
    }
    assert_int_equal(lpLength(h.lp), 0);
    heldFree(&h);
    modelFree(&m);
}

/* Size limit (fill -1: 4 KB): a listpack grows to the node limit, one
 * more element makes a quicklist; it goes back at half the limit. */
static void test_loan_size_boundary(void **state) {
    (void)state;
    Held h = {lpNew(0), NULL};
    Model m = {0};
    QuicklistLoan loan;
    int i = 0;
    while (h.lp) {
        sds v = patterned(i++, 25); /* ~110 bytes */
        pushBoth(heldOpen(&h, &loan, -1), &m, v, QL_TAIL);
        heldClose(&h, &loan, 0);
        sdsFree(v);
        if (h.lp) assert_true(lpBytes(h.lp) <= 4096);
    }
    assert_int_equal(quicklistNodeCount(h.ql), 2);
    expectHeld(&h, &m, -1);
    /* Trim from the head until one node remains, then until half size. */
    while (h.ql) {
        Quicklist *ql = heldOpen(&h, &loan, -1);
        quicklistDelRange(ql, 0, 1);
        modelDelete(&m, 0, 1);
        heldClose(&h, &loan, 1);
    }
    assert_true(lpBytes(h.lp) * 2 <= 4096);
    expectHeld(&h, &m, -1);
    heldFree(&h);
    modelFree(&m);
}

/* A plain element (at the packed threshold) makes a quicklist at once;
 * emptying a lent list gives an empty listpack; inserts that split. */
static void test_loan_plain_empty_split(void **state) {
    (void)state;
    QuicklistLoan loan;
    Model m = {0};
    Held h = {lpNew(0), NULL};
    setThreshold(1000);
    sds big = patterned(1, 300);
    pushBoth(heldOpen(&h, &loan, -2), &m, big, QL_TAIL);
    heldClose(&h, &loan, 0);
    assert_null(h.lp);
    expectHeld(&h, &m, -2);
    heldFree(&h);
    modelFree(&m);
    setThreshold(0);
    /* Empty again. */
    h.lp = lpNew(0);
    h.ql = NULL;
    memset(&m, 0, sizeof(m));
    for (int i = 0; i < 3; i++) {
        sds v = patterned(i, 2);
        pushBoth(heldOpen(&h, &loan, -2), &m, v, QL_TAIL);
        heldClose(&h, &loan, 0);
        sdsFree(v);
    }
    Quicklist *ql = heldOpen(&h, &loan, -2);
    assert_int_equal(quicklistDelRange(ql, 0, 3), 1);
    heldClose(&h, &loan, 1);
    assert_non_null(h.lp);
    assert_int_equal(lpLength(h.lp), 0);
    modelFree(&m);
    memset(&m, 0, sizeof(m));
    /* Fill 4: inserting in the middle of a full lent node splits it. */
    for (int i = 0; i < 4; i++) {
        sds v = patterned(i, 2);
        pushBoth(heldOpen(&h, &loan, 4), &m, v, QL_TAIL);
        heldClose(&h, &loan, 0);
        sdsFree(v);
    }
    ql = heldOpen(&h, &loan, 4);
    QuicklistIter *it = quicklistIterAt(ql, 1, QL_HEAD);
    QlEntry e;
    assert_true(quicklistNext(it, &e));
    quicklistInsertAfter(it, &e, big, sdsLen(big));
    quicklistIterRelease(it);
    modelInsert(&m, 2, big, sdsLen(big));
    heldClose(&h, &loan, 0);
    assert_null(h.lp);
    expectHeld(&h, &m, 4);
    heldFree(&h);
    modelFree(&m);
    sdsFree(big);
}

/* Random operations through loans and conversions against the model. */
static void test_loan_random(void **state) {
    (void)state;
    int fills[] = {4, -1, 16};
    for (int f = 0; f < 3; f++) {
        int fill = fills[f];
        Held h = {lpNew(0), NULL};
        Model m = {0};
        for (int step = 0; step < 3000; step++) {
            QuicklistLoan loan;
            Quicklist *ql = heldOpen(&h, &loan, fill);
            int op = (int)randBounded(6), shrunk = 0;
            sds v = patterned(step, randBounded(3) ? randBounded(4) : randBounded(60));
            if (op <= 1 || m.len == 0) {
                pushBoth(ql, &m, v, op ? QL_HEAD : QL_TAIL);
            } else if (op == 2) {
                long at = (long)randBounded(m.len);
                QuicklistIter *it = quicklistIterAt(ql, at, QL_HEAD);
                QlEntry e;
                assert_true(quicklistNext(it, &e));
                quicklistInsertBefore(it, &e, v, sdsLen(v));
                quicklistIterRelease(it);
                modelInsert(&m, (size_t)at, v, sdsLen(v));
            } else if (op == 3) {
                long at = (long)randBounded(m.len);
                assert_true(quicklistReplaceAtIndex(ql, at, v, sdsLen(v)));
                modelDelete(&m, (size_t)at, 1);
                modelInsert(&m, (size_t)at, v, sdsLen(v));
                shrunk = 1;
            } else {
                long n = (long)randBounded(m.len < 8 ? m.len : 8) + 1;
                long at = (long)randBounded(m.len - (size_t)n + 1);
                quicklistDelRange(ql, at, n);
                modelDelete(&m, (size_t)at, (size_t)n);
                shrunk = 1;
            }
            sdsFree(v);
            heldClose(&h, &loan, shrunk);
            if (step % 100 == 0) expectHeld(&h, &m, fill);
        }
        expectHeld(&h, &m, fill);
        heldFree(&h);
        modelFree(&m);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_push_pop_both_ends),
        cmocka_unit_test(test_fill_limits),
        cmocka_unit_test(test_index_negative),
        cmocka_unit_test(test_replace),
        cmocka_unit_test(test_insert_middle_of_full_nodes),
        cmocka_unit_test(test_delrange),
        cmocka_unit_test(test_iter_delete),
        cmocka_unit_test(test_iter_delete_then_insert),
        cmocka_unit_test(test_iter_replace),
        cmocka_unit_test(test_compression),
        cmocka_unit_test(test_dup),
        cmocka_unit_test(test_large_elements),
        cmocka_unit_test(test_packed_threshold),
        cmocka_unit_test(test_loan_count_boundary),
        cmocka_unit_test(test_loan_size_boundary),
        cmocka_unit_test(test_loan_plain_empty_split),
        cmocka_unit_test(test_loan_random),
        cmocka_unit_test(test_mem_usage),
        cmocka_unit_test(test_randomized),
        cmocka_unit_test(test_append_listpack_and_foreach),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
