/* test_alloc.c -- the counting allocator: used_memory follows allocations,
 * frees, reallocs and frees made by other registered threads. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "ds/alloc.h"

static void test_used_memory_tracks_malloc_and_free(void **state) {
    (void)state;
    size_t base = xmallocUsed();
    void *p = xmalloc(1000);
    size_t during = xmallocUsed();
    assert_true(during >= base + 1000);
    assert_true(xmallocSize(p) >= 1000);
    xfree(p);
    assert_int_equal(xmallocUsed(), base);
}

static void test_realloc_and_calloc(void **state) {
    (void)state;
    size_t base = xmallocUsed();
    unsigned char *p = xcalloc(64);
    for (int i = 0; i < 64; i++) assert_int_equal(p[i], 0);
    p = xrealloc(p, 100000);
    assert_true(xmallocUsed() >= base + 100000);
    p = xrealloc(p, 10);
    assert_true(xmallocUsed() < base + 100000);
    xfree(p);
    assert_int_equal(xmallocUsed(), base);
    char *s = xstrdup("cairn");
    assert_string_equal(s, "cairn");
    xfree(s);
    xfree(NULL);
    assert_int_equal(xmallocUsed(), base);
}

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int stage;
static pthread_t freer;
static int freerStarted;

/* Registers, frees the block, then stays alive until every test has run:
 * a registered thread must outlive all readings of xmallocUsed (its
 * counters live in its thread-local storage, reused once it exits; a later
 * test then saw used memory off by the megabyte this thread freed). */
static void *freeInThread(void *arg) {
    xmallocRegisterThread();
    xfree(arg);
    pthread_mutex_lock(&lock);
    stage = 1;
    pthread_cond_broadcast(&cond);
    while (stage != 2) pthread_cond_wait(&cond, &lock);
    pthread_mutex_unlock(&lock);
    return NULL;
}

/* Lazy free: memory allocated here and freed by another thread must leave
 * used_memory where it started. */
static void test_free_in_registered_thread(void **state) {
    (void)state;
    size_t base = xmallocUsed();
    void *p = xmalloc(1 << 20);
    assert_true(xmallocUsed() >= base + (1 << 20));
    assert_int_equal(pthread_create(&freer, NULL, freeInThread, p), 0); /* main() lets it end */
    freerStarted = 1;
    pthread_mutex_lock(&lock);
    while (stage != 1) pthread_cond_wait(&cond, &lock);
    /* The megabyte is gone; the new thread's own small bookkeeping may
     * remain. */
    size_t after = xmallocUsed();
    pthread_mutex_unlock(&lock);
    assert_true(after >= base);
    assert_true(after < base + 4096);
}

static void test_rss_and_library_name(void **state) {
    (void)state;
    assert_true(xmallocRss() > 0);
    assert_non_null(xmallocLibrary());
    assert_true(strlen(xmallocLibrary()) > 0);
}

/* Big blocks: a fresh one and a grown one keep their bytes, count in
 * used_memory like any block, and go back with xfree; the quiet signal
 * comes once per pause, only after big allocations. */
static void test_big_blocks(void **state) {
    (void)state;
    size_t base = xmallocUsed();
    char *p = xreallocBig(NULL, 1 << 20);
    memset(p, 'a', 1 << 20);
    assert_true(xmallocUsed() >= base + (1 << 20));
    p = xreallocBig(p, 10 << 20);
    for (size_t i = 0; i < (1 << 20); i += 4093) assert_int_equal(p[i], 'a');
    p[(10 << 20) - 1] = 'z';
    xfree(p);
    assert_int_equal(xmallocUsed(), base);
    /* A second one reuses what the first freed: still fully writable. */
    char *q = xreallocBig(NULL, 10 << 20);
    memset(q, 'b', 10 << 20);
    assert_int_equal(q[12345], 'b');
    xfree(q);
    assert_int_equal(xmallocUsed(), base);

    long long t = 1000000;
    (void)xmallocBigQuiet(t, 250); /* notes the allocations above */
#ifdef CAIRN_JEMALLOC
    assert_int_equal(xmallocBigQuiet(t + 100, 250), 0); /* not quiet long enough */
    assert_int_equal(xmallocBigQuiet(t + 300, 250), 1);
#endif
    assert_int_equal(xmallocBigQuiet(t + 600, 250), 0); /* once per pause */
    xmallocPurgeBig();
    q = xreallocBig(NULL, 5 << 20);
    q[0] = 'c';
    xfree(q);
    assert_int_equal(xmallocBigQuiet(t + 700, 250), 0); /* a new allocation: quiet starts again */
}

int main(void) {
    xmallocRegisterThread(); /* as the server's main() does first */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_used_memory_tracks_malloc_and_free),
        cmocka_unit_test(test_realloc_and_calloc),
        cmocka_unit_test(test_free_in_registered_thread),
        cmocka_unit_test(test_rss_and_library_name),
        cmocka_unit_test(test_big_blocks),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    if (freerStarted) {
        pthread_mutex_lock(&lock);
        stage = 2;
        pthread_cond_broadcast(&cond);
        pthread_mutex_unlock(&lock);
        pthread_join(freer, NULL);
    }
    return failed;
}
