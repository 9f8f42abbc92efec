/* test_zskiplist.c -- unit tests for src/ds/zskiplist.c.
 *
 * A random model (a sorted array of (score, member)) is kept next to the
 * skiplist through inserts, deletes, score updates and range deletions;
 * after each step ranks, spans (rank of every node), backward links, range
 * lookups by score and by lex are checked against the model.  The level
 * distribution is checked against P(level > k) = 0.25^k. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ds/alloc.h"
#include "ds/rand.h"
#include "ds/zskiplist.h"

typedef struct Item {
    double score;
    char m[16];
    size_t len;
} Item;

static int itemCmp(const void *a, const void *b) {
    const Item *x = a, *y = b;
    if (x->score != y->score) return x->score < y->score ? -1 : 1;
    size_t min = x->len < y->len ? x->len : y->len;
    int c = memcmp(x->m, y->m, min);
    if (c) return c;
    return x->len < y->len ? -1 : (x->len > y->len);
}

static void checkAll(zskiplist *zsl, Item *model, size_t n) {
    assert_int_equal(zsl->length, n);
    zskiplistNode *x = zsl->header->lv[0].forward, *prev = NULL;
    for (size_t i = 0; i < n; i++) {
        assert_non_null(x);
        assert_true(x->score == model[i].score);
        assert_int_equal(x->len, model[i].len);
        assert_memory_equal(zslMember(x), model[i].m, model[i].len);
        assert_ptr_equal(x->backward, prev);
        assert_int_equal(zslGetRank(zsl, x->score, zslMember(x), x->len), i + 1);
        assert_ptr_equal(zslGetByRank(zsl, i + 1), x);
        prev = x;
        x = x->lv[0].forward;
    }
    assert_null(x);
    assert_ptr_equal(zsl->tail, prev);
    assert_null(zslGetByRank(zsl, n + 1));
}

static void randomItem(Item *it) {
    it->score = (double)((long)randBounded(20) - 10) / (randBounded(4) ? 1 : 2);
    it->len = (size_t)snprintf(it->m, sizeof(it->m), "m%u", (unsigned)randBounded(60));
}

static size_t findItem(Item *model, size_t n, const Item *it) {
    for (size_t i = 0; i < n; i++)
        if (model[i].len == it->len && !memcmp(model[i].m, it->m, it->len)) return i;
    return (size_t)-1;
}

static void test_random_model(void **state) {
    (void)state;
    randSeed(42);
    zskiplist *zsl = zslCreate();
    Item model[200];
    size_t n = 0;
    for (int step = 0; step < 3000; step++) {
        Item it;
        randomItem(&it);
        size_t pos = findItem(model, n, &it);
        unsigned op = (unsigned)randBounded(3);
        if (pos == (size_t)-1 && n < 200) {
            zslInsert(zsl, it.score, (unsigned char *)it.m, it.len);
            model[n++] = it;
        } else if (pos != (size_t)-1 && op == 0) {
            zskiplistNode *d = zslDelete(zsl, model[pos].score, (unsigned char *)it.m, it.len);
            assert_non_null(d);
            zslFreeNode(d);
            model[pos] = model[--n];
        } else if (pos != (size_t)-1) {
            zskiplistNode *x = zslGetByRank(zsl, 1);
            while (x && !(x->len == it.len && !memcmp(zslMember(x), it.m, it.len))) x = x->lv[0].forward;
            assert_non_null(x);
            zslUpdateScore(zsl, x, it.score);
            model[pos].score = it.score;
        }
        /* absent deletes find nothing */
        assert_null(zslDelete(zsl, 12345, (unsigned char *)"zz", 2));
        qsort(model, n, sizeof(Item), itemCmp);
        if (step % 10 == 0) checkAll(zsl, model, n);
    }
    checkAll(zsl, model, n);
    zslFree(zsl);
}

static void test_score_ranges(void **state) {
    (void)state;
    zskiplist *zsl = zslCreate();
    for (int i = 0; i < 100; i++) {
        char m[8];
        int l = snprintf(m, sizeof(m), "%03d", i);
        zslInsert(zsl, i / 2, (unsigned char *)m, (size_t)l); /* two members per score */
    }
    zrangespec r = {10, 20, 0, 0};
    zskiplistNode *f = zslFirstInRange(zsl, &r), *l = zslLastInRange(zsl, &r);
    assert_true(f->score == 10 && !memcmp(zslMember(f), "020", 3));
    assert_true(l->score == 20 && !memcmp(zslMember(l), "041", 3));
    r.minex = r.maxex = 1;
    f = zslFirstInRange(zsl, &r);
    l = zslLastInRange(zsl, &r);
    assert_true(f->score == 11 && !memcmp(zslMember(f), "022", 3));
    assert_true(l->score == 19 && !memcmp(zslMember(l), "039", 3));
    zrangespec empty = {5, 5, 1, 0};
    assert_null(zslFirstInRange(zsl, &empty));
    zrangespec none = {100, 200, 0, 0};
    assert_null(zslFirstInRange(zsl, &none));
    assert_null(zslLastInRange(zsl, &none));
    zrangespec inf = {-1.0 / 0.0, 1.0 / 0.0, 0, 0};
    assert_int_equal(zslGetRank(zsl, zslLastInRange(zsl, &inf)->score, zslMember(zslLastInRange(zsl, &inf)), 3), 100);
    /* delete by score: scores 10..20 inclusive = 22 members */
    r.minex = r.maxex = 0;
    assert_int_equal(zslDeleteRangeByScore(zsl, &r, NULL, NULL), 22);
    assert_int_equal(zsl->length, 78);
    assert_null(zslFirstInRange(zsl, &r));
    /* delete by rank: first 10 */
    assert_int_equal(zslDeleteRangeByRank(zsl, 1, 10, NULL, NULL), 10);
    assert_true(zslGetByRank(zsl, 1)->score == 5);
    assert_int_equal(zsl->length, 68);
    zslFree(zsl);
}

static void test_lex_ranges(void **state) {
    (void)state;
    zskiplist *zsl = zslCreate();
    const char *words[] = {"a", "ab", "abc", "b", "ba", "c", "d"};
    for (int i = 0; i < 7; i++) zslInsert(zsl, 0, (const unsigned char *)words[i], strlen(words[i]));
    zlexrangespec r = {(const unsigned char *)"ab", (const unsigned char *)"b", 2, 1, 0, 0, 0, 0};
    zskiplistNode *f = zslFirstInLexRange(zsl, &r), *l = zslLastInLexRange(zsl, &r);
    assert_int_equal(f->len, 2);
    assert_memory_equal(zslMember(f), "ab", 2);
    assert_int_equal(l->len, 1);
    assert_memory_equal(zslMember(l), "b", 1);
    r.minex = 1;
    r.maxex = 1;
    f = zslFirstInLexRange(zsl, &r);
    l = zslLastInLexRange(zsl, &r);
    assert_memory_equal(zslMember(f), "abc", 3);
    assert_memory_equal(zslMember(l), "abc", 3);
    zlexrangespec all = {NULL, NULL, 0, 0, -1, 1, 0, 0};
    assert_int_equal(zslFirstInLexRange(zsl, &all)->len, 1);
    assert_ptr_equal(zslLastInLexRange(zsl, &all), zsl->tail);
    zlexrangespec bad = {NULL, NULL, 0, 0, 1, -1, 0, 0}; /* + .. - */
    assert_true(zslLexRangeEmpty(&bad));
    assert_null(zslFirstInLexRange(zsl, &bad));
    zlexrangespec del = {(const unsigned char *)"b", NULL, 1, 0, 0, 1, 0, 0}; /* [b .. + */
    assert_int_equal(zslDeleteRangeByLex(zsl, &del, NULL, NULL), 4);
    assert_int_equal(zsl->length, 3);
    assert_memory_equal(zslMember(zsl->tail), "abc", 3);
    zslFree(zsl);
}

static void test_level_distribution(void **state) {
    (void)state;
    zslSetRandom(randNext);
    randSeed(7);
    long counts[ZSL_MAXLEVEL + 1] = {0};
    const long N = 400000;
    for (long i = 0; i < N; i++) {
        int l = zslRandomLevel();
        assert_true(l >= 1 && l <= ZSL_MAXLEVEL);
        counts[l]++;
    }
    /* P(level == 1) = 0.75, P(2) = 0.1875, P(3) = 0.046875 */
    double p1 = (double)counts[1] / N, p2 = (double)counts[2] / N, p3 = (double)counts[3] / N;
    assert_true(p1 > 0.74 && p1 < 0.76);
    assert_true(p2 > 0.18 && p2 < 0.195);
    assert_true(p3 > 0.043 && p3 < 0.051);
    zslSetRandom(NULL);
}

static void test_update_in_place(void **state) {
    (void)state;
    zskiplist *zsl = zslCreate();
    zskiplistNode *a = zslInsert(zsl, 1, (const unsigned char *)"a", 1);
    zslInsert(zsl, 2, (const unsigned char *)"b", 1);
    zslInsert(zsl, 3, (const unsigned char *)"c", 1);
    zslUpdateScore(zsl, a, 1.5); /* stays */
    assert_ptr_equal(zslGetByRank(zsl, 1), a);
    zslUpdateScore(zsl, a, 10); /* moves to the tail, same node */
    assert_ptr_equal(zsl->tail, a);
    assert_int_equal(zslGetRank(zsl, 10, (const unsigned char *)"a", 1), 3);
    zslUpdateScore(zsl, a, 2); /* equal score: ordered by member, before "b" */
    assert_ptr_equal(zslGetByRank(zsl, 1), a);
    zslFree(zsl);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_model),   cmocka_unit_test(test_score_ranges),
        cmocka_unit_test(test_lex_ranges),     cmocka_unit_test(test_level_distribution),
        cmocka_unit_test(test_update_in_place),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
