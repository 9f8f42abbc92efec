/* test_slab.c -- the slab allocator for the 8-byte-step size classes
 * (ds/slab.h): which sizes it serves, that slots are distinct and keep
 * their bytes, that emptied slabs go back to the system (used memory and
 * RSS), resizing across classes and to and from xmalloc, frees from other
 * threads while the main thread allocates, and fork while another thread
 * holds the lock; prefaulting the slabs ahead of need and giving that
 * memory back when idle; and, in a child under an address-space limit,
 * the range refused or used up (every block then xmalloc's). */
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "ds/alloc.h"
#include "ds/slab.h"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#endif

/* Each block is filled with a pattern derived from its index, so a slot
 * handed out twice or overwritten by a neighbour is caught. */
static void fill(unsigned char *p, size_t n, uint32_t seed) {
    for (size_t i = 0; i < n; i++) p[i] = (unsigned char)(seed * 31u + i);
}

static int intact(const unsigned char *p, size_t n, uint32_t seed) {
    for (size_t i = 0; i < n; i++)
        if (p[i] != (unsigned char)(seed * 31u + i)) return 0;
    return 1;
}

static void test_classes(void **state) {
    (void)state;
    assert_int_equal(slabGoodSize(34), 40); /* reserves the range: this machine can */
    assert_true(slabRangeBytes > 0);
    assert_int_equal(slabGoodSize(32), 32);
    assert_int_equal(slabGoodSize(128), 128);
    assert_int_equal(slabGoodSize(200), xmallocGoodSize(200));
    for (size_t size = 0; size <= 300; size++) {
        int c = slabClassOf(size);
        size_t rounded = (size + 7) & ~(size_t)7;
        if (size == 0 || size > SLAB_MAX_SIZE) {
            assert_int_equal(c, -1);
        } else {
            assert_true(c >= 0 && c < SLAB_CLASSES);
            assert_int_equal(slabClassSize(c), rounded);
        }
    }
    assert_int_equal(slabClassSize(-1), 0);
    assert_int_equal(slabClassSize(SLAB_CLASSES), 0);
}

/* Bigger sizes are not slab slots; NULL is not one. */
static void test_other_sizes_use_xmalloc(void **state) {
    (void)state;
    static const size_t sizes[] = {0, 129, 136, 200, 5000};
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        void *p = slabAlloc(sizes[i]);
        assert_false(slabOwns(p));
        assert_true(xmallocSize(p) >= sizes[i]);
        memset(p, 0x5a, sizes[i]);
        slabFree(p);
    }
    assert_false(slabOwns(NULL));
    slabFree(NULL);
}

#define N 20000

/* Many blocks of one class: distinct, their bytes kept, counted at the
 * slot size; all freed, used bytes return and the slabs go (one kept). */
static void test_alloc_free_accounting(void **state) {
    (void)state;
    slabPurge();
    unsigned char **v = malloc(N * sizeof(*v));
    size_t used0 = slabUsedBytes(), slabs0 = slabCount(), x0 = xmallocUsed();
    for (uint32_t i = 0; i < N; i++) {
        v[i] = slabAlloc(34);
        assert_true(slabOwns(v[i]));
        assert_int_equal(xmallocSize(v[i]), 40);
        fill(v[i], 34, i);
    }
    assert_int_equal(slabUsedBytes(), used0 + (size_t)N * 40);
    assert_int_equal(xmallocUsed(), x0 + (size_t)N * 40);
    assert_true(slabCount() >= slabs0 + (size_t)N * 40 / SLAB_BYTES);
    assert_true(slabActiveBytes() >= (size_t)N * 40);
    for (uint32_t i = 0; i < N; i++) assert_true(intact(v[i], 34, i));
    /* Free every other block, then refill: the freed slots are reused. */
    size_t slabsFull = slabCount();
    for (uint32_t i = 0; i < N; i += 2) slabFree(v[i]);
    assert_int_equal(slabUsedBytes(), used0 + (size_t)N / 2 * 40);
    for (uint32_t i = 0; i < N; i += 2) {
        v[i] = slabAlloc(40);
        fill(v[i], 40, i);
    }
    assert_int_equal(slabCount(), slabsFull);
    for (uint32_t i = 0; i < N; i++) assert_true(intact(v[i], 34, i));
    for (uint32_t i = 0; i < N; i++) slabFree(v[i]);
    assert_int_equal(slabUsedBytes(), used0);
    assert_int_equal(xmallocUsed(), x0);
    assert_true(slabCount() <= slabs0 + 1); /* the spare */
    slabPurge();
    assert_int_equal(slabCount(), 0);
    assert_int_equal(slabActiveBytes(), 0);
    free(v);
}

/* A freed slot is the next one handed out (its slab is the class's
 * first), and a slab emptied while another empty one is kept goes back. */
static void test_reuse_and_slab_return(void **state) {
    (void)state;
    slabPurge();
    size_t per = (SLAB_BYTES - 64) / 56; /* at least the slots of one slab */
    size_t n = per * 4;
    void **v = malloc(n * sizeof(*v));
    for (size_t i = 0; i < n; i++) v[i] = slabAlloc(56);
    void *p = v[n / 2];
    slabFree(p);
    void *q = slabAlloc(50);
    assert_ptr_equal(p, q);
    v[n / 2] = q;
    size_t held = slabCount();
    assert_true(held >= 4);
    for (size_t i = 0; i < n; i++) slabFree(v[i]);
    assert_int_equal(slabCount(), 1); /* one empty slab kept */
    slabPurge();
    assert_int_equal(slabCount(), 0);
    free(v);
}

/* Freed slabs give their pages back: RSS falls by about what they held. */
static void test_rss_returns(void **state) {
    (void)state;
    slabPurge();
    size_t n = (64u << 20) / 24; /* 64 MB of 24-byte slots */
    void **v = malloc(n * sizeof(*v));
    for (size_t i = 0; i < n; i++) {
        v[i] = slabAlloc(20);
        memset(v[i], 1, 20);
    }
    size_t full = xmallocRss();
    for (size_t i = 0; i < n; i++) slabFree(v[i]);
    slabPurge();
    size_t after = xmallocRss();
    free(v);
    assert_true(full > after);
    assert_true(full - after > (48u << 20));
}

/* A batch (slabReleaseBatch): the slabs emptied meanwhile keep their
 * pages until its end, then go back in runs of adjacent slabs -- a few
 * madvise calls for hundreds of slabs -- and are reused as any handed-back
 * slab; outside a batch, one call per slab. */
static void test_batched_release(void **state) {
    (void)state;
    slabPurge();
    size_t n = (16u << 20) / 24; /* 16 MB of 24-byte slots: ~1000 slabs */
    void **v = malloc(n * sizeof(*v));
    for (size_t i = 0; i < n; i++) {
        v[i] = slabAlloc(20);
        fill(v[i], 20, (uint32_t)i);
    }
    size_t slabs = slabCount(), full = xmallocRss(), calls0 = slabReleaseCalls();
    assert_true(slabs > 900);
    slabReleaseBatch(1);
    for (size_t i = 0; i < n; i += 2) slabFree(v[i]); /* none emptied yet */
    for (size_t i = 1; i < n; i += 2) slabFree(v[i]);
    assert_true(slabCount() <= 1);                    /* no longer held ... */
    assert_int_equal(slabReleaseCalls(), calls0);     /* ... but not handed back yet */
    assert_true(xmallocRss() + (4u << 20) > full);    /* still resident */
    slabReleaseBatch(0);
    size_t calls = slabReleaseCalls() - calls0;
    assert_true(calls >= 1);
    assert_true(calls <= 4); /* one run, split only where the kept spare slab sits */
    assert_true(full - xmallocRss() > (12u << 20));
    /* Reused, with their bytes kept apart. */
    for (size_t i = 0; i < n; i++) {
        v[i] = slabAlloc(20);
        fill(v[i], 20, (uint32_t)i + 7);
    }
    for (size_t i = 0; i < n; i++) assert_true(intact(v[i], 20, (uint32_t)i + 7));
    /* Outside a batch: a call per slab handed back. */
    calls0 = slabReleaseCalls();
    for (size_t i = 0; i < n; i++) slabFree(v[i]);
    assert_true(slabReleaseCalls() - calls0 > 900);
    slabPurge();
    free(v);
}

/* slabRealloc: within a class in place; across classes, to xmalloc and
 * back, the bytes are kept. */
static void test_resize(void **state) {
    (void)state;
    unsigned char *p = slabRealloc(NULL, 34);
    assert_true(slabOwns(p));
    fill(p, 34, 7);
    assert_ptr_equal(slabRealloc(p, 36), p); /* same 40-byte class */
    p = slabRealloc(p, 50);                  /* 56 */
    assert_true(slabOwns(p));
    assert_int_equal(xmallocSize(p), 56);
    assert_true(intact(p, 34, 7));
    fill(p, 50, 8);
    p = slabRealloc(p, 100); /* 104 */
    assert_int_equal(xmallocSize(p), 104);
    assert_true(intact(p, 50, 8));
    fill(p, 100, 9);
    p = slabRealloc(p, 300); /* to xmalloc */
    assert_false(slabOwns(p));
    assert_true(intact(p, 100, 9));
    fill(p, 300, 10);
    p = slabRealloc(p, 200); /* still xmalloc's */
    assert_false(slabOwns(p));
    assert_true(intact(p, 200, 10));
    p = slabRealloc(p, 20); /* back to a slab */
    assert_true(slabOwns(p));
    assert_int_equal(xmallocSize(p), 24);
    assert_true(intact(p, 20, 10));
    slabFree(p);
}

/* Sanitizer builds: a free slot and a slab's unused tail are poisoned
 * (a use after slabFree is reported), a handed-out slot is not. */
static void test_poisoning(void **state) {
    (void)state;
#if defined(__SANITIZE_ADDRESS__)
    unsigned char *p = slabAlloc(40);
    assert_int_equal(__asan_region_is_poisoned(p, 40), 0);
    assert_true(__asan_address_is_poisoned(p + 40) || slabSlotSize(p) > 40); /* the next slot: never used */
    slabFree(p);
    for (int i = 0; i < 40; i += 8) assert_true(__asan_address_is_poisoned(p + i));
    unsigned char *q = slabAlloc(40);
    assert_ptr_equal(p, q);
    assert_int_equal(__asan_region_is_poisoned(q, 40), 0);
    slabFree(q);
#else
    print_message("skipped: poisoning exists only in the sanitizer build\n");
    skip();
#endif
}

/* --- other threads --- */

#define XN 200000

typedef struct {
    unsigned char **v;
    size_t from, to;
    size_t damaged; /* blocks found overwritten (cmocka asserts only on the main thread) */
} Range;

static void *freeRange(void *arg) {
    Range *r = arg;
    slabThreadMayWait(); /* as the lazy-free thread */
    for (size_t i = r->from; i < r->to; i++) {
        if (!intact(r->v[i], 34, (uint32_t)i)) r->damaged++;
        slabFree(r->v[i]);
    }
    return NULL;
}

/* The lazy-free case: another thread frees entries while the main thread
 * allocates and frees its own; nothing is handed out twice, and the bytes
 * and the used count come out exact. */
static void test_cross_thread_frees(void **state) {
    (void)state;
    slabPurge();
    size_t used0 = slabUsedBytes();
    unsigned char **v = malloc(XN * sizeof(*v));
    for (uint32_t i = 0; i < XN; i++) {
        v[i] = slabAlloc(34);
        fill(v[i], 34, i);
    }
    Range r = {v, 0, XN, 0};
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, freeRange, &r), 0);
    unsigned char **mine = malloc(XN * sizeof(*mine));
    for (uint32_t i = 0; i < XN; i++) {
        mine[i] = slabAlloc(i % 2 ? 34 : 18);
        fill(mine[i], 18, i ^ 0x55u);
        if (i % 3 == 0) {
            slabFree(mine[i]);
            mine[i] = NULL;
        }
    }
    assert_int_equal(pthread_join(t, NULL), 0);
    assert_int_equal(r.damaged, 0);
    /* This thread gives up on a busy lock: its frees may wait on the
     * deferred stack, and a block may have come from xmalloc. */
    while (slabDrainDeferred((size_t)-1)) {
    }
    size_t live = 0;
    for (uint32_t i = 0; i < XN; i++) {
        if (!mine[i]) continue;
        assert_true(intact(mine[i], 18, i ^ 0x55u));
        if (slabOwns(mine[i])) live += i % 2 ? 40 : 24;
    }
    assert_int_equal(slabUsedBytes(), used0 + live);
    for (uint32_t i = 0; i < XN; i++) slabFree(mine[i]);
    while (slabDrainDeferred((size_t)-1)) {
    }
    assert_int_equal(slabUsedBytes(), used0);
    slabPurge();
    assert_int_equal(slabCount(), 0);
    free(v);
    free(mine);
}

static volatile int stopChurn;

static void *churn(void *arg) {
    (void)arg;
    void *ring[64] = {0};
    for (unsigned i = 0; !stopChurn; i++) {
        unsigned k = i % 64;
        slabFree(ring[k]);
        ring[k] = slabAlloc(24 + (i % 7) * 16);
    }
    for (unsigned k = 0; k < 64; k++) slabFree(ring[k]);
    return NULL;
}

/* fork() while another thread is allocating: the child's allocator is
 * usable (the lock is not left held), and it exits within its alarm. */
static void test_fork_while_busy(void **state) {
    (void)state;
    pthread_t t;
    stopChurn = 0;
    assert_int_equal(pthread_create(&t, NULL, churn, NULL), 0);
    for (int round = 0; round < 20; round++) {
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
            alarm(10);
            for (int i = 0; i < 1000; i++) slabFree(slabAlloc(40));
            _exit(0);
        }
        int status = 0;
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFEXITED(status));
        assert_int_equal(WEXITSTATUS(status), 0);
    }
    stopChurn = 1;
    assert_int_equal(pthread_join(t, NULL), 0);
}


/* Prefaulting (slab.h): the hook is asked for once a new slab leaves too
 * little resident memory ahead; slabPrefault (here run at once by the
 * hook) makes the bytes past the newest slab resident without changing a
 * slot; later slabs then find their pages resident (no more misses); an
 * idle allocator gives them back (mincore shows them gone). */
static int hookCalls;
static void syncHook(void) {
    hookCalls++;
    slabPrefault();
}

static int residentPages(const char *p, size_t len) {
    size_t page = (size_t)sysconf(_SC_PAGESIZE), n = len / page, in = 0;
    unsigned char *vec = malloc(n);
    assert_int_equal(mincore((void *)p, len, vec), 0);
    for (size_t i = 0; i < n; i++) in += vec[i] & 1;
    free(vec);
    return (int)in;
}

static void test_prefault(void **state) {
    (void)state;
    size_t pf0, miss0, ahead, trims0, pf, miss, trims;
    slabPrefaultStats(&pf0, &miss0, &ahead, &trims0);
    slabPrefaultHook = syncHook;
    size_t cap = (256u << 20) / 40, n = 0, extra = 0;
    void **v = malloc(cap * sizeof(*v));
    char *high = NULL;
    /* Until the hook ran and 2 MB more were taken (any slabs handed back
     * by earlier tests are reused first, below the range prefaulted). */
    while (n < cap && (hookCalls == 0 || extra < (2u << 20) / 40)) {
        v[n] = slabAlloc(40);
        fill(v[n], 40, (uint32_t)n);
        char *slab = (char *)((uintptr_t)v[n] & ~(uintptr_t)(SLAB_BYTES - 1));
        if (slab > high) high = slab;
        if (hookCalls) extra++;
        n++;
    }
    assert_true(hookCalls > 0);
    slabPrefaultStats(&pf, &miss, &ahead, &trims);
    assert_true(pf > pf0);
    assert_true(ahead >= SLAB_BYTES && ahead <= (4u << 20));
    /* One miss at most: the slab that found nothing ready and asked. */
    assert_true(miss - miss0 <= 1);
    /* The bytes ahead of the newest slab are resident. */
    assert_int_equal(residentPages(high + SLAB_BYTES, ahead), (int)(ahead / (size_t)sysconf(_SC_PAGESIZE)));
    for (size_t i = 0; i < n; i++) assert_true(intact(v[i], 40, (uint32_t)i));
    /* Idle: nothing given back before quietMs, everything after. */
    assert_int_equal(slabPrefaultIdle(10000, 1000), 0);
    assert_int_equal(slabPrefaultIdle(10500, 1000), 0);
    int calls = 0;
    while (!slabPrefaultIdle(11500 + calls, 1000)) assert_true(++calls < 4); /* 1 MB per call */
    slabPrefaultStats(&pf, &miss, &ahead, &trims);
    assert_int_equal(ahead, 0);
    assert_int_equal(trims, trims0 + 1);
    assert_int_equal(residentPages(high + SLAB_BYTES, 256u << 10), 0);
    for (size_t i = 0; i < n; i++) assert_true(intact(v[i], 40, (uint32_t)i));
    slabPrefaultHook = NULL;
    for (size_t i = 0; i < n; i++) slabFree(v[i]);
    slabPurge();
    free(v);
}

/* Handed-back slabs are reused first and their pages were given back: the
 * next ones to be reused are made resident ahead too (one miss, the slab
 * that asked), their slots are sound, and idle gives them back. */
static void test_prefault_reuse(void **state) {
    (void)state;
    size_t per = (SLAB_BYTES - 64) / 40, n = per * 60;
    void **v = malloc(n * sizeof(*v));
    for (size_t i = 0; i < n; i++) v[i] = slabAlloc(40);
    for (size_t i = 0; i < n; i++) slabFree(v[i]);
    slabPurge(); /* all 60 handed back */
    size_t pf0, miss0, ahead, trims0, pf, miss, trims;
    slabPrefaultStats(&pf0, &miss0, &ahead, &trims0);
    slabPrefaultHook = syncHook;
    hookCalls = 0;
    size_t m = per * 40; /* 40 of the 60 reused */
    for (size_t i = 0; i < m; i++) {
        v[i] = slabAlloc(40);
        fill(v[i], 40, (uint32_t)i);
    }
    slabPrefaultStats(&pf, &miss, &ahead, &trims);
    assert_true(hookCalls >= 2);
    assert_true(pf > pf0);
    assert_true(miss - miss0 <= 1);
    assert_true(ahead > 0 && ahead <= (4u << 20));
    for (size_t i = 0; i < m; i++) assert_true(intact(v[i], 40, (uint32_t)i));
    int calls = 0;
    while (!slabPrefaultIdle(100000 + 2000 * (calls > 0) + calls, 1000)) assert_true(++calls < 64);
    slabPrefaultStats(&pf, &miss, &ahead, &trims);
    assert_int_equal(ahead, 0);
    assert_int_equal(trims, trims0 + 1);
    for (size_t i = 0; i < m; i++) assert_true(intact(v[i], 40, (uint32_t)i));
    slabPrefaultHook = NULL;
    for (size_t i = 0; i < m; i++) slabFree(v[i]);
    slabPurge();
    free(v);
}

/* A thread other than the lazy-free one never waits for a busy lock (held
 * here by the test, as by a preempted holder): its allocation comes from
 * xmalloc, its free is deferred; both work, and the deferred free is done
 * (bytes and slot back) by slabDrainDeferred once the lock is free. */
static void test_busy_lock_gives_up(void **state) {
    (void)state;
    slabPurge();
    size_t used0 = slabUsedBytes();
    unsigned char *a = slabAlloc(40), *b = slabAlloc(40);
    assert_true(slabOwns(a) && slabOwns(b));
    fill(b, 40, 7);
    size_t d0 = slabDeferredFrees();
    slabTestHoldLock(1);
    unsigned char *c = slabAlloc(40);
    assert_false(slabOwns(c)); /* xmalloc's */
    fill(c, 40, 9);
    slabFree(a); /* deferred */
    assert_int_equal(slabDeferredFrees(), d0 + 1);
    assert_int_equal(slabDrainDeferred(100), 0); /* still busy: nothing */
    slabTestHoldLock(0);
    assert_int_equal(slabUsedBytes(), used0 + 80);
    assert_int_equal(slabDrainDeferred(100), 1);
    assert_int_equal(slabUsedBytes(), used0 + 40);
    assert_true(intact(b, 40, 7) && intact(c, 40, 9));
    unsigned char *a2 = slabAlloc(40);
    assert_ptr_equal(a2, a); /* the slot is free again */
    slabFree(a2);
    slabFree(b);
    slabFree(c);
    assert_int_equal(slabUsedBytes(), used0);
    slabPurge();
}

/* slabFreeSlots: slots of mixed classes freed together (more than one
 * batch's worth) give back exactly their bytes and empty their slabs as
 * slot-by-slot frees do, the neighbours kept intact; with the lock busy,
 * a thread that may not wait defers each slot, and the drain frees them. */
static void test_free_slots(void **state) {
    (void)state;
    slabPurge();
    size_t used0 = slabUsedBytes(), n = 5000;
    void **v = malloc(n * sizeof(*v));
    for (size_t i = 0; i < n; i++) {
        size_t sz = 8 + (i % 5) * 24;
        v[i] = slabAlloc(sz);
        fill(v[i], sz, (uint32_t)i);
    }
    void **odd = malloc(n / 2 * sizeof(*odd));
    size_t k = 0, freedBytes = 0;
    for (size_t i = 1; i < n; i += 2) {
        odd[k++] = v[i];
        freedBytes += slabSlotSize(v[i]);
    }
    size_t before = slabUsedBytes();
    slabFreeSlots(odd, k); /* 2500 slots: many batches */
    assert_int_equal(slabUsedBytes(), before - freedBytes);
    for (size_t i = 0; i < n; i += 2) assert_true(intact(v[i], 8 + (i % 5) * 24, (uint32_t)i));
    k = 0;
    for (size_t i = 0; i < n; i += 2) odd[k++] = v[i];
    slabFreeSlots(odd, k);
    slabFreeSlots(odd, 0); /* nothing */
    assert_int_equal(slabUsedBytes(), used0);
    assert_true(slabCount() <= 5); /* at most the spare of each class used */
    /* Busy lock: each slot is deferred, then drained. */
    void *a[3];
    for (int i = 0; i < 3; i++) a[i] = slabAlloc(40);
    size_t d0 = slabDeferredFrees(), u1 = slabUsedBytes();
    slabTestHoldLock(1);
    slabFreeSlots(a, 3);
    assert_int_equal(slabDeferredFrees(), d0 + 3);
    slabTestHoldLock(0);
    assert_int_equal(slabDrainDeferred(100), 3);
    assert_int_equal(slabUsedBytes(), u1 - 120);
    slabPurge();
    assert_int_equal(slabCount(), 0);
    free(odd);
    free(v);
}

#if !defined(__SANITIZE_ADDRESS__) /* AddressSanitizer's shadow needs far more address space */
/* In a child: limits the address space to what is mapped now plus
 * `extraMb`, then runs fn, whose return is the child's exit status (0:
 * passed); the test asserts it.  For the tests that run before this
 * process's first slab allocation (first in the list): the child's
 * allocator starts unreserved. */
static void underAddressLimit(long extraMb, int (*fn)(void)) {
    assert_int_equal(slabRangeBytes, 0); /* nothing reserved yet */
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        long vm = 0;
        char line[256];
        FILE *f = fopen("/proc/self/status", "r");
        while (f && fgets(line, sizeof(line), f))
            if (sscanf(line, "VmSize: %ld kB", &vm) == 1) break;
        if (f) fclose(f);
        struct rlimit rl = {(rlim_t)(vm + extraMb * 1024) * 1024, (rlim_t)(vm + extraMb * 1024) * 1024};
        if (vm <= 0 || setrlimit(RLIMIT_AS, &rl) != 0) _exit(100);
        _exit(fn());
    }
    int st = 0;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 0);
}

static int rangeRefused(void) {
    static unsigned char *v[N];
    for (int i = 0; i < N; i++) {
        v[i] = slabAlloc((size_t)(i % 128) + 1);
        fill(v[i], (size_t)(i % 128) + 1, (uint32_t)i);
    }
    if (slabRangeBytes != 0 || slabCount() != 0) return 3; /* the reservation was refused */
    for (int i = 0; i < N; i++)
        if (slabOwns(v[i]) || !intact(v[i], (size_t)(i % 128) + 1, (uint32_t)i)) return 4;
    if (slabGoodSize(24) != xmallocGoodSize(24)) return 5;
    for (int i = 0; i < N; i += 2) {
        size_t kept = (size_t)(i % 128) + 1 < 100 ? (size_t)(i % 128) + 1 : 100;
        v[i] = slabRealloc(v[i], 100);
        if (slabOwns(v[i]) || !intact(v[i], kept, (uint32_t)i)) return 6;
    }
    for (int i = 0; i < N; i++) slabFree(v[i]);
    return slabUsedBytes() != 0 ? 7 : 0;
}

#endif

/* The range cannot be reserved (an address-space limit below the smallest
 * try, 64 MB): the allocator stays off and every block is xmalloc's,
 * usable, resizable and freed as such. */
static void test_range_refused(void **state) {
    (void)state;
#if defined(__SANITIZE_ADDRESS__)
    print_message("skipped: AddressSanitizer's shadow needs far more address space than the limit\n");
    skip();
#else
    underAddressLimit(32, rangeRefused);
#endif
}

#if !defined(__SANITIZE_ADDRESS__)
/* The smallest size slabReserve tries on this machine (64-128 MB): it
 * halves from the machine's memory while at least 64 MB. */
static size_t smallestTry(void) {
    long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
    size_t want = pages > 0 && psz > 0 ? (size_t)pages * (size_t)psz : (size_t)1 << 32;
    if (want > ((size_t)1 << 40)) want = (size_t)1 << 40;
    if (want < ((size_t)1 << 30)) want = (size_t)1 << 30;
    want &= ~(SLAB_BYTES - 1);
    while (want / 2 >= ((size_t)64 << 20)) want /= 2;
    return want;
}

static int rangeUsedUp(void) {
    /* The limit leaves room for the smallest try only. */
    unsigned char *first = slabAlloc(128);
    size_t range = slabRangeBytes, n = range / 128 + 1024, i;
    if (!slabOwns(first) || range != smallestTry()) return 3;
    unsigned char **v = xmalloc(n * sizeof(*v));
    v[0] = first;
    fill(first, 128, 0);
    /* Slots until one is not the range's: it is full. */
    for (i = 1; i < n; i++) {
        v[i] = slabAlloc(128);
        fill(v[i], 128, (uint32_t)i);
        if (!slabOwns(v[i])) break;
    }
    if (i == n || slabCount() != range / SLAB_BYTES) return 4;
    size_t full = i; /* v[full] is the first of xmalloc's */
    for (size_t k = 0; k < 1000; k++) {
        unsigned char *p = slabAlloc((k % 128) + 1);
        if (slabOwns(p)) return 5;
        fill(p, (k % 128) + 1, (uint32_t)k);
        if (!intact(p, (k % 128) + 1, (uint32_t)k)) return 6;
        slabFree(p);
    }
    if (slabGoodSize(128) != xmallocGoodSize(128)) return 7;
    /* A freed slot is what the next 128-byte allocation gets. */
    unsigned char *freed = v[full / 2];
    slabFree(freed);
    unsigned char *again = slabAlloc(128);
    if (again != freed) return 8;
    fill(again, 128, (uint32_t)(full / 2));
    for (size_t k = 0; k <= full; k++)
        if (!intact(v[k], 128, (uint32_t)k)) return 9;
    for (size_t k = 0; k <= full; k++) slabFree(v[k]);
    xfree(v);
    return slabUsedBytes() != 0 ? 10 : 0;
}

#endif

/* The range used up (the smallest try reserved under an address-space
 * limit, then filled): further blocks are xmalloc's, the
 * filled slots keep their bytes, a freed slot is handed out again. */
static void test_range_used_up(void **state) {
    (void)state;
#if defined(__SANITIZE_ADDRESS__)
    print_message("skipped: AddressSanitizer's shadow needs far more address space than the limit\n");
    skip();
#else
    /* The next larger try (twice as big) does not fit; 64 MB are left
     * for xmalloc's blocks. */
    underAddressLimit((long)(smallestTry() >> 20) + 64, rangeUsedUp);
#endif
}

int main(void) {
    xmallocRegisterThread();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_range_refused), /* these two first: before any slab allocation */
        cmocka_unit_test(test_range_used_up),
        cmocka_unit_test(test_prefault),
        cmocka_unit_test(test_prefault_reuse),
        cmocka_unit_test(test_classes),
        cmocka_unit_test(test_other_sizes_use_xmalloc),
        cmocka_unit_test(test_alloc_free_accounting),
        cmocka_unit_test(test_reuse_and_slab_return),
        cmocka_unit_test(test_rss_returns),
        cmocka_unit_test(test_batched_release),
        cmocka_unit_test(test_resize),
        cmocka_unit_test(test_poisoning),
        cmocka_unit_test(test_cross_thread_frees),
        cmocka_unit_test(test_busy_lock_gives_up),
        cmocka_unit_test(test_free_slots),
        cmocka_unit_test(test_fork_while_busy),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
