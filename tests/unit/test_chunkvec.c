/* test_chunkvec.c -- unit tests for src/ds/chunkvec.c: pushes across chunk
 * boundaries, slots that never move while the vector grows, the swap-remove
 * pattern of the TTL index against a model array, shrinking with its spare
 * chunk, and freeing (run under ASan for leaks). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "ds/alloc.h"
#include "ds/chunkvec.h"
#include "ds/rand.h"
#include "ds/util.h"

static void *tag(uintptr_t i) { return (void *)(i * 8 + 8); }

static void test_empty(void **state) {
    (void)state;
    ChunkVec v = {0};
    assert_int_equal(v.count, 0);
    assert_int_equal(cvBytes(&v), 0);
    cvShrink(&v);
    assert_null(v.chunks);
    cvFree(&v);
    cvFree(&v); /* twice is harmless */
}

static void test_small_first_chunk(void **state) {
    (void)state;
    ChunkVec v = {0};
    cvPush(&v, tag(0));
    /* One slot costs the first chunk's few bytes and the directory. */
    assert_true(cvBytes(&v) <= CHUNKVEC_FIRST * sizeof(void *) + 8 * sizeof(void **));
    for (uint32_t i = 1; i < 100; i++) assert_int_equal(cvPush(&v, tag(i)), i);
    for (uint32_t i = 0; i < 100; i++) assert_ptr_equal(cvGet(&v, i), tag(i));
    assert_true(cvBytes(&v) < 2048);
    assert_int_equal(v.nchunks, 1);
    cvFree(&v);
}

static void test_boundaries(void **state) {
    (void)state;
    ChunkVec v = {0};
    uint32_t n = 3 * CHUNKVEC_SLOTS + 1;
    void **firstChunk = NULL;
    for (uint32_t i = 0; i < n; i++) {
        assert_int_equal(cvPush(&v, tag(i)), i);
        assert_int_equal(v.count, i + 1);
        assert_int_equal(v.nchunks, i / CHUNKVEC_SLOTS + 1);
        /* The first chunk grows in place until full, then never moves. */
        if (i == CHUNKVEC_SLOTS - 1) firstChunk = v.chunks[0];
        if (i >= CHUNKVEC_SLOTS - 1) assert_ptr_equal(v.chunks[0], firstChunk);
    }
    for (uint32_t i = 0; i < n; i++) assert_ptr_equal(cvGet(&v, i), tag(i));
    cvSet(&v, CHUNKVEC_SLOTS, tag(7));
    assert_ptr_equal(cvGet(&v, CHUNKVEC_SLOTS), tag(7));
    assert_ptr_equal(cvGet(&v, CHUNKVEC_SLOTS - 1), tag(CHUNKVEC_SLOTS - 1));
    assert_true(cvBytes(&v) >= (size_t)4 * CHUNKVEC_SLOTS * sizeof(void *));
    /* Pop back to exactly one full chunk: shrinking keeps it plus a spare. */
    while (v.count > CHUNKVEC_SLOTS) cvPop(&v);
    cvShrink(&v);
    assert_int_equal(v.nchunks, 2);
    assert_ptr_equal(cvGet(&v, CHUNKVEC_SLOTS - 1), tag(CHUNKVEC_SLOTS - 1));
    /* A push at the boundary reuses the spare chunk. */
    void **spare = v.chunks[1];
    cvPush(&v, tag(1));
    assert_ptr_equal(v.chunks[1], spare);
    while (v.count) cvPop(&v);
    cvShrink(&v);
    assert_int_equal(v.nchunks, 1);
    cvFree(&v);
    assert_int_equal(v.count, 0);
    assert_null(v.chunks);
}

/* The TTL index's pattern: push, remove at a random position by moving the
 * last slot into it, compared with a plain array. */
static void test_random_model(void **state) {
    (void)state;
    ChunkVec v = {0};
    size_t cap = 40000, n = 0;
    void **model = malloc(cap * sizeof(void *));
    for (int step = 0; step < 200000; step++) {
        uint64_t r = randBounded(10);
        if (r < 6 && n < cap) {
            void *p = tag((uintptr_t)step);
            assert_int_equal(cvPush(&v, p), n);
            model[n++] = p;
        } else if (n > 0) {
            uint32_t pos = (uint32_t)randBounded(n);
            void *last = cvPop(&v);
            assert_ptr_equal(last, model[n - 1]);
            if (pos != n - 1) cvSet(&v, pos, last);
            model[pos] = model[n - 1];
            n--;
        }
        if (r == 9) cvShrink(&v);
        assert_int_equal(v.count, n);
    }
    for (size_t i = 0; i < n; i++) assert_ptr_equal(cvGet(&v, (uint32_t)i), model[i]);
    cvFree(&v);
    free(model);
}

static void test_directory_shrinks(void **state) {
    (void)state;
    ChunkVec v = {0};
    for (uint32_t i = 0; i < 64 * CHUNKVEC_SLOTS; i++) cvPush(&v, tag(i));
    uint32_t dir = v.dirCap;
    assert_true(dir >= 64);
    while (v.count > 10) cvPop(&v);
    cvShrink(&v);
    assert_int_equal(v.nchunks, 2);
    assert_true(v.dirCap < dir);
    for (uint32_t i = 0; i < 10; i++) assert_ptr_equal(cvGet(&v, i), tag(i));
    cvFree(&v);
}


/* Each full-size chunk added asks for its pages past the first to be made
 * resident on another thread (prefaultLater): the range lies inside the
 * chunk just added, and nothing is asked for the small first chunk. */
static void *asked[16];
static size_t askedLen[16];
static int nAsked;
static void recordHook(void *p, size_t len) {
    if (nAsked < 16) {
        asked[nAsked] = p;
        askedLen[nAsked] = len;
    }
    nAsked++;
}

static void test_new_chunks_ask_for_prefault(void **state) {
    (void)state;
    ChunkVec v = {0};
    prefaultLaterHook = recordHook;
    nAsked = 0;
    for (uint32_t i = 0; i < CHUNKVEC_SLOTS; i++) cvPush(&v, (void *)(uintptr_t)(i + 1));
    assert_int_equal(nAsked, 0); /* the first chunk grew by realloc */
    assert_null(v.ahead);
    size_t chunkBytes = sizeof(void *) * CHUNKVEC_SLOTS;
    /* The first full-size growth: the new chunk's pages past the first,
     * and the whole of the chunk made ahead for the next growth. */
    cvPush(&v, (void *)(uintptr_t)(CHUNKVEC_SLOTS + 1));
    assert_int_equal(nAsked, 2);
    assert_ptr_equal(asked[0], (char *)v.chunks[1] + 4096);
    assert_int_equal(askedLen[0], chunkBytes - 4096);
    assert_non_null(v.ahead);
    assert_ptr_equal(asked[1], v.ahead);
    assert_int_equal(askedLen[1], chunkBytes);
    assert_int_equal(cvBytes(&v), 3 * chunkBytes + (size_t)v.dirCap * sizeof(void **));
    /* The next growth takes that chunk and makes the next one ahead. */
    void **made = v.ahead;
    for (uint32_t i = CHUNKVEC_SLOTS + 1; i < 3 * CHUNKVEC_SLOTS; i++) cvPush(&v, (void *)(uintptr_t)(i + 1));
    assert_int_equal(nAsked, 3);
    assert_ptr_equal(v.chunks[2], made);
    assert_ptr_equal(asked[2], v.ahead);
    assert_int_equal(askedLen[2], chunkBytes);
    prefaultLaterHook = NULL;
    for (uint32_t i = 0; i < 3 * CHUNKVEC_SLOTS; i++) assert_ptr_equal(cvGet(&v, i), (void *)(uintptr_t)(i + 1));
    cvFree(&v);
    assert_null(v.ahead);
    assert_int_equal(cvBytes(&v), 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_empty),
        cmocka_unit_test(test_small_first_chunk),
        cmocka_unit_test(test_boundaries),
        cmocka_unit_test(test_random_model),
        cmocka_unit_test(test_directory_shrinks),
        cmocka_unit_test(test_new_chunks_ask_for_prefault),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
