/* slab.c -- the slab allocator for blocks of up to 128 bytes in 8-byte steps (see
 * slab.h for the contract and the invariants).
 *
 * Layout: one reserved range [slabRangeBase, + slabRangeBytes), PROT_NONE
 * beyond `committed` (made read-write 1 MB at a time as `top` grows).
 * Slabs are handed out from the range's low end (`top`) or, first, from
 * the stack of address ranges whose slabs were handed back (`freeIdx`,
 * slab numbers, in a separate mapping: a handed-back slab's own pages are
 * not resident, and writing a list link into them would make one so).
 * Past `top`, [top, ready) is resident ahead of need (slabPrefault).
 * Everything below is guarded by `spin`. */
#include "ds/slab.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "ds/alloc.h"
#include "ds/util.h"

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* Linux 5.14; older kernels refuse it (EINVAL) */
#endif

#if defined(__SANITIZE_ADDRESS__)
#define SLAB_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SLAB_ASAN 1
#endif
#endif

#ifdef SLAB_ASAN
#include <sanitizer/asan_interface.h>
#include <sanitizer/lsan_interface.h>
#define POISON(p, n) ASAN_POISON_MEMORY_REGION((p), (n))
#define UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION((p), (n))
/* The allocator reads and writes the free list inside poisoned slots. */
#define NO_ASAN __attribute__((no_sanitize_address))
#else
#define POISON(p, n) ((void)(p), (void)(n))
#define UNPOISON(p, n) ((void)(p), (void)(n))
#define NO_ASAN
#endif

typedef struct Slab {
    void *free;              /* freed slots, linked through their first word */
    char *tail;              /* first never-used slot (== end when none) */
    char *end;               /* end of the last whole slot */
    struct Slab *prev, *next; /* the class's list of slabs with a free slot */
    uint32_t used;           /* slots in use */
    uint32_t cap;            /* slots in the slab */
    uint32_t size;           /* slot size */
    uint8_t cls;
    uint8_t listed;          /* on the class's list */
} Slab;

/* Slots start after the header, 8-aligned (ASan's shadow granularity). */
#define SLOT0 ((sizeof(Slab) + 15) & ~(size_t)15)
#define COMMIT_STEP ((size_t)1 << 20)

static const uint32_t classSize[SLAB_CLASSES] = {8, 16, 24, 32, 40, 48, 56, 64, 72, 80, 88, 96, 104, 112, 120, 128};

_Atomic uintptr_t slabRangeBase;
_Atomic size_t slabRangeBytes;

static atomic_int spin;
static Slab *partial[SLAB_CLASSES]; /* slabs with a free slot, per class */
static Slab *spare[SLAB_CLASSES];   /* the one empty slab kept, per class */
static size_t committed;            /* bytes made read-write from the base */
static size_t top;                  /* bytes ever handed out as slabs */
static uint32_t *freeIdx;           /* handed-back slab numbers (a stack) */
static size_t nFree;
static size_t nSlabs;               /* slabs held */
static _Atomic size_t usedBytes;    /* written under the lock, read anywhere */
static _Atomic size_t activeBytes;

/* Prefaulting (slabPrefault): [top, ready) is made resident ahead of use,
 * `ahead` bytes past `top` are wanted (AHEAD_MIN..AHEAD_MAX, doubled when
 * a new slab finds no resident memory while a request is out, once per
 * request), and `asked` is set from a request until slabPrefault has run
 * (2: it has doubled `ahead`).  `fresh`
 * counts slabs taken from `top`; slabPrefaultIdle compares it across calls.
 * All under `spin`, except the counters read by slabPrefaultStats. */
#define AHEAD_MIN ((size_t)256 << 10)
#define AHEAD_MAX ((size_t)4 << 20)
#define TRIM_STEP ((size_t)1 << 20)
static size_t ready;
static size_t ahead = AHEAD_MIN;
static int asked;
static size_t fresh;
static size_t freshSeen;
static long long quietSinceMs = -1;
/* Handed-back slabs are reused first (freeIdx), and their pages were given
 * back: the top `reuseReady` entries of freeIdx are made resident again
 * ahead of reuse (releaseSlab inserts below them, so they stay on top);
 * `pushGen` counts releases (slabPrefault's snapshot is stale if one came
 * while it ran). */
static size_t reuseReady;
static size_t pushGen;
#define REUSE_MAX (AHEAD_MAX / SLAB_BYTES)
static _Atomic size_t pfBytes;  /* bytes made resident by slabPrefault */
static _Atomic size_t pfMisses; /* slabs from `top` that were not resident */
static _Atomic size_t pfTrims;  /* idle give-backs */
void (*slabPrefaultHook)(void);

static inline void cpuRelax(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

static void lockSlow(void) {
    for (unsigned i = 0;; i++) {
        if (!atomic_load_explicit(&spin, memory_order_relaxed) &&
            !atomic_exchange_explicit(&spin, 1, memory_order_acquire))
            return;
        if (i < 100) cpuRelax();
        else sched_yield();
    }
}

static inline void lock(void) {
    if (atomic_exchange_explicit(&spin, 1, memory_order_acquire)) lockSlow();
}

static inline void unlock(void) { atomic_store_explicit(&spin, 0, memory_order_release); }

/* Threads that wait for a busy lock (slabThreadMayWait: the lazy-free
 * thread).  Any other thread -- the main thread above all -- gives up
 * after a spin: the holder is then most likely preempted (on a busy
 * machine, while the lazy-free thread frees millions of entries), and
 * waiting for it cost SETs 2.5-11 ms during FLUSHALL ASYNC of 2M keys.
 * Instead its allocation goes to xmalloc and its free is deferred.  The
 * spin is 20 pauses, ~0.4 us here (a pause is ~18 ns on this AMD EPYC,
 * ~40 ns on Intel since Skylake): a holder that is running frees the lock
 * within a few dozen instructions.  At 200 pauses (3.6 us) every give-up
 * was a slow SET: during a 2M-key FLUSHALL ASYNC under the SET/GET load,
 * 182 SETs of 2-4 us and 45 of 4-8 us against 30 and 11 (LATENCY
 * HISTOGRAM, one run each), for 154 and 275 give-ups. */
static _Thread_local int mayWait;
#define GIVE_UP_SPINS 20

void slabThreadMayWait(void) { mayWait = 1; }

/* The lock, or 0 when it stayed busy past the spin (never for a thread
 * that may wait). */
static inline int lockOrGiveUp(void) {
    if (__builtin_expect(!atomic_exchange_explicit(&spin, 1, memory_order_acquire), 1)) return 1;
    if (mayWait) {
        lockSlow();
        return 1;
    }
    for (unsigned i = 0; i < GIVE_UP_SPINS; i++) {
        cpuRelax();
        if (!atomic_load_explicit(&spin, memory_order_relaxed) &&
            !atomic_exchange_explicit(&spin, 1, memory_order_acquire))
            return 1;
    }
    return 0;
}

/* Slots whose free gave up on the lock: a stack through their first word
 * (pushed without the lock; taken whole by slabDrainDeferred). */
static _Atomic(void *) deferred;
static _Atomic size_t nDeferred; /* pushed so far, for tests */

static void forkPrepare(void) { lock(); }
static void forkParent(void) { unlock(); }
static void forkChild(void) { unlock(); }

/* Reserve the range: as much address space as the machine has memory (the
 * entries cannot outgrow it), at most 1 TB; smaller when refused.  Once,
 * on the first slab allocation, with the lock held; a failure leaves the
 * allocator off (everything goes to xmalloc). */
static int reserved;

static void slabReserve(void) {
    reserved = 1;
    long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
    size_t want = pages > 0 && psz > 0 ? (size_t)pages * (size_t)psz : (size_t)1 << 32;
    if (want > ((size_t)1 << 40)) want = (size_t)1 << 40;
    if (want < ((size_t)1 << 30)) want = (size_t)1 << 30;
    want &= ~(SLAB_BYTES - 1);
    for (; want >= ((size_t)64 << 20); want /= 2) {
        char *p = mmap(NULL, want + SLAB_BYTES, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (p == MAP_FAILED) continue;
        void *idx = mmap(NULL, want / SLAB_BYTES * sizeof(uint32_t), PROT_READ | PROT_WRITE,
                         MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (idx == MAP_FAILED) {
            munmap(p, want + SLAB_BYTES);
            continue;
        }
        uintptr_t base = ((uintptr_t)p + SLAB_BYTES - 1) & ~(uintptr_t)(SLAB_BYTES - 1);
        /* Give back the alignment slack on both sides. */
        if (base > (uintptr_t)p) munmap(p, base - (uintptr_t)p);
        size_t after = (uintptr_t)p + want + SLAB_BYTES - (base + want);
        if (after) munmap((char *)(base + want), after);
        freeIdx = idx;
        /* slabOwns may be asked on another thread at any time: the base
         * is in place before the size makes the range non-empty. */
        atomic_store_explicit(&slabRangeBase, base, memory_order_relaxed);
        atomic_store_explicit(&slabRangeBytes, want, memory_order_release);
        pthread_atfork(forkPrepare, forkParent, forkChild);
#ifdef SLAB_ASAN
        /* Entries point at values (sds, listpacks): LeakSanitizer must see
         * them as referenced (only the mapped, readable part is scanned). */
        __lsan_register_root_region((void *)base, want);
#endif
        return;
    }
}

size_t slabGoodSize(size_t size) {
    if (!slabServes(size)) return xmallocGoodSize(size);
    lock();
    if (!reserved) slabReserve();
    int on = slabRangeBytes > 0;
    unlock();
    return on ? (size + 7) & ~(size_t)7 : xmallocGoodSize(size);
}

size_t slabClassSize(int c) { return c >= 0 && c < SLAB_CLASSES ? classSize[c] : 0; }

static inline Slab *slabOf(const void *p) { return (Slab *)((uintptr_t)p & ~(uintptr_t)(SLAB_BYTES - 1)); }

static void listPush(Slab *s) {
    Slab **head = &partial[s->cls];
    s->prev = NULL;
    s->next = *head;
    if (*head) (*head)->prev = s;
    *head = s;
    s->listed = 1;
}

static void listRemove(Slab *s) {
    if (s->prev) s->prev->next = s->next;
    else partial[s->cls] = s->next;
    if (s->next) s->next->prev = s->prev;
    s->prev = s->next = NULL;
    s->listed = 0;
}

#ifdef SLAB_ASAN
static void fail(const char *what) {
    fprintf(stderr, "cairn: slab allocator: %s\n", what);
    abort();
}
#endif

/* A new slab of class c on its class's list, or NULL when the range is
 * used up.  Called with the lock held. */
static Slab *newSlab(int c, int *wantPrefault) {
    char *mem;
    if (!reserved) slabReserve();
    if (nFree) {
        mem = (char *)slabRangeBase + (size_t)freeIdx[--nFree] * SLAB_BYTES;
        fresh++;
        if (reuseReady) {
            reuseReady--;
        } else {
            atomic_store_explicit(&pfMisses, atomic_load_explicit(&pfMisses, memory_order_relaxed) + 1,
                                  memory_order_relaxed);
            if (asked == 1 && ahead < AHEAD_MAX) {
                ahead *= 2;
                asked = 2;
            }
        }
        if (!asked && slabPrefaultHook && reuseReady * SLAB_BYTES < ahead / 2 && nFree > reuseReady) {
            asked = 1;
            *wantPrefault = 1;
        }
    } else {
        if (top + SLAB_BYTES > slabRangeBytes) return NULL;
        if (top + SLAB_BYTES > committed) {
            size_t step = COMMIT_STEP;
            if (committed + step > slabRangeBytes) step = slabRangeBytes - committed;
            if (mprotect((char *)slabRangeBase + committed, step, PROT_READ | PROT_WRITE) != 0) return NULL;
            committed += step;
        }
        mem = (char *)slabRangeBase + top;
        top += SLAB_BYTES;
        fresh++;
        if (top > ready) {
            /* This slab's pages fault as it fills: the prefaulter is
             * behind (or was never asked): want more ahead. */
            atomic_store_explicit(&pfMisses, atomic_load_explicit(&pfMisses, memory_order_relaxed) + 1,
                                  memory_order_relaxed);
            if (asked == 1 && ahead < AHEAD_MAX) {
                ahead *= 2;
                asked = 2; /* once per request: it may simply not have run yet */
            }
            ready = top;
        }
        if (!asked && slabPrefaultHook && ready - top < ahead / 2) {
            asked = 1;
            *wantPrefault = 1;
        }
    }
    Slab *s = (Slab *)mem;
    uint32_t size = classSize[c];
    s->free = NULL;
    s->tail = mem + SLOT0;
    s->cap = (uint32_t)((SLAB_BYTES - SLOT0) / size);
    s->end = s->tail + (size_t)s->cap * size;
    s->used = 0;
    s->size = size;
    s->cls = (uint8_t)c;
    POISON(s->tail, SLAB_BYTES - SLOT0);
    listPush(s);
    nSlabs++;
    atomic_store_explicit(&activeBytes, nSlabs * SLAB_BYTES, memory_order_relaxed);
    return s;
}

/* Batched hand-back (slabReleaseBatch): the slabs this thread emptied,
 * by number, waiting for the batch's end; at most BATCH_MAX of them. */
#define BATCH_MAX ((size_t)1 << 16)
static __thread uint32_t *batchIdx; /* grown as needed, freed at the batch's end */
static __thread size_t batchN, batchCap;
static __thread int batching;
static _Atomic size_t releaseCalls; /* madvise calls that handed slabs back */

static int cmpIdx(const void *a, const void *b) {
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

/* The batch's slabs: their pages back in runs of adjacent slabs (one
 * madvise each), their numbers onto the stack under one lock. */
static void flushBatch(void) {
    if (!batchN) return;
    qsort(batchIdx, batchN, sizeof(*batchIdx), cmpIdx);
    char *base = (char *)slabRangeBase;
    size_t calls = 0;
    for (size_t i = 0, j; i < batchN; i = j) {
        for (j = i + 1; j < batchN && batchIdx[j] == batchIdx[j - 1] + 1; j++) {
        }
        (void)madvise(base + (size_t)batchIdx[i] * SLAB_BYTES, (j - i) * SLAB_BYTES, MADV_DONTNEED);
        calls++;
    }
    atomic_fetch_add_explicit(&releaseCalls, calls, memory_order_relaxed);
    lock();
    size_t at = nFree - reuseReady; /* below the resident entries on top */
    memmove(&freeIdx[at + batchN], &freeIdx[at], reuseReady * sizeof(*freeIdx));
    memcpy(&freeIdx[at], batchIdx, batchN * sizeof(*freeIdx));
    nFree += batchN;
    pushGen++;
    unlock();
    batchN = 0;
}

void slabReleaseBatch(int on) {
    if (on) {
        batching = 1;
        return;
    }
    batching = 0;
    flushBatch();
    xfree(batchIdx);
    batchIdx = NULL;
    batchCap = 0;
}

size_t slabReleaseCalls(void) { return atomic_load_explicit(&releaseCalls, memory_order_relaxed); }

/* Hands slab s's pages back to the system and its address range to the
 * stack of reusable ones (in a batch: at the batch's end).  s is on no
 * list; called without the lock. */
static void releaseSlab(Slab *s) {
    uint32_t idx = (uint32_t)(((uintptr_t)s - slabRangeBase) / SLAB_BYTES);
    if (batching) {
        if (batchN == BATCH_MAX) flushBatch();
        if (batchN == batchCap) {
            batchCap = batchCap ? batchCap * 2 : 1024;
            batchIdx = xrealloc(batchIdx, batchCap * sizeof(*batchIdx));
        }
        batchIdx[batchN++] = idx;
        return;
    }
    /* The header too: the next user of the range rewrites it.  An error
     * only leaves the pages resident. */
    (void)madvise(s, SLAB_BYTES, MADV_DONTNEED);
    atomic_fetch_add_explicit(&releaseCalls, 1, memory_order_relaxed);
    lock();
    /* Below the resident entries on top (at most REUSE_MAX of them). */
    size_t at = nFree - reuseReady;
    memmove(&freeIdx[at + 1], &freeIdx[at], reuseReady * sizeof(*freeIdx));
    freeIdx[at] = idx;
    nFree++;
    pushGen++;
    unlock();
}

/* newSlabAsking's answer when it gave up on the lock (not held then). */
#define GAVE_UP ((Slab *)1)

/* A new slab's allocation, out of line: asks for prefaulting after the
 * lock is dropped (the hook queues a job). */
static __attribute__((noinline)) Slab *newSlabAsking(int c) {
    int want = 0;
    Slab *s = newSlab(c, &want);
    if (want) {
        unlock();
        slabPrefaultHook();
        if (!lockOrGiveUp()) return GAVE_UP;
        s = partial[c]; /* another thread may have filled it meanwhile */
        if (!s) s = newSlab(c, &want);
    }
    return s;
}

NO_ASAN void *slabAllocClass(int c) {
    if (__builtin_expect(!lockOrGiveUp(), 0)) return NULL; /* slabAlloc: xmalloc's */
    Slab *s = partial[c];
    if (__builtin_expect(!s, 0)) {
        s = newSlabAsking(c);
        if (!s || s == GAVE_UP) {
            if (s) return NULL; /* the lock is not held */
            unlock();
            return NULL;
        }
    }
    void *p = s->free;
    if (p) {
        s->free = *(void **)p;
    } else {
        p = s->tail;
        s->tail += s->size;
    }
    if (s == spare[c]) spare[c] = NULL;
    if (++s->used == s->cap) listRemove(s);
    atomic_store_explicit(&usedBytes, atomic_load_explicit(&usedBytes, memory_order_relaxed) + s->size,
                          memory_order_relaxed);
    UNPOISON(p, s->size);
    unlock();
    return p;
}

/* Frees slot p with the lock held; returns its slab when that is to be
 * handed back (after the unlock). */
NO_ASAN static Slab *freeLocked(void *p) {
    Slab *s = slabOf(p);
    Slab *release = NULL;
    POISON(p, s->size);
    *(void **)p = s->free;
    s->free = p;
    atomic_store_explicit(&usedBytes, atomic_load_explicit(&usedBytes, memory_order_relaxed) - s->size,
                          memory_order_relaxed);
    if (s->used-- == s->cap) {
        listPush(s);
    } else if (s->used == 0) {
        if (!spare[s->cls]) {
            spare[s->cls] = s;
        } else {
            listRemove(s);
            nSlabs--;
            atomic_store_explicit(&activeBytes, nSlabs * SLAB_BYTES, memory_order_relaxed);
            release = s;
        }
    }
    return release;
}

NO_ASAN void slabFreeSlot(void *p) {
#ifdef SLAB_ASAN
    if (__asan_address_is_poisoned(p)) fail("slabFree of a free slot");
#endif
    if (__builtin_expect(!lockOrGiveUp(), 0)) {
        /* The slot is still in use for the allocator (counted, unpoisoned)
         * until slabDrainDeferred frees it. */
        void *head = atomic_load_explicit(&deferred, memory_order_relaxed);
        do {
            *(void **)p = head;
        } while (!atomic_compare_exchange_weak_explicit(&deferred, &head, p, memory_order_release,
                                                        memory_order_relaxed));
        atomic_fetch_add_explicit(&nDeferred, 1, memory_order_relaxed);
        return;
    }
    Slab *release = freeLocked(p);
    unlock();
    if (release) releaseSlab(release);
}

#define FREE_SLOTS_MAX 64

NO_ASAN void slabFreeSlots(void *const *p, size_t n) {
    while (n > FREE_SLOTS_MAX) {
        slabFreeSlots(p, FREE_SLOTS_MAX);
        p += FREE_SLOTS_MAX;
        n -= FREE_SLOTS_MAX;
    }
    if (!n) return;
    for (size_t i = 0; i < n; i++) {
#ifdef SLAB_ASAN
        if (__asan_address_is_poisoned(p[i])) fail("slabFree of a free slot");
#endif
        __builtin_prefetch(slabOf(p[i]), 1);
    }
    if (!lockOrGiveUp()) { /* each slot then takes slabFreeSlot's give-up path */
        for (size_t i = 0; i < n; i++) slabFreeSlot(p[i]);
        return;
    }
    Slab *rel[FREE_SLOTS_MAX];
    size_t nrel = 0;
    for (size_t i = 0; i < n; i++) {
        Slab *r = freeLocked(p[i]);
        if (r) rel[nrel++] = r;
    }
    unlock();
    for (size_t i = 0; i < nrel; i++) releaseSlab(rel[i]);
}

NO_ASAN size_t slabDrainDeferred(size_t most) {
    if (!atomic_load_explicit(&deferred, memory_order_relaxed)) return 0;
    if (!lockOrGiveUp()) return 0;
    void *p = atomic_exchange_explicit(&deferred, NULL, memory_order_acquire);
    size_t n = 0, nrel = 0;
    Slab *rel[64];
    while (p && n < most && nrel < 64) {
        void *next = *(void **)p;
        Slab *r = freeLocked(p);
        if (r) rel[nrel++] = r;
        p = next;
        n++;
    }
    unlock();
    /* What is left goes back on the stack for the next call. */
    while (p) {
        void *next = *(void **)p, *head = atomic_load_explicit(&deferred, memory_order_relaxed);
        do {
            *(void **)p = head;
        } while (!atomic_compare_exchange_weak_explicit(&deferred, &head, p, memory_order_release,
                                                        memory_order_relaxed));
        p = next;
    }
    for (size_t i = 0; i < nrel; i++) releaseSlab(rel[i]);
    return n;
}

void slabTestHoldLock(int hold) {
    if (hold) lock();
    else unlock();
}

size_t slabDeferredFrees(void) { return atomic_load_explicit(&nDeferred, memory_order_relaxed); }

size_t slabSlotSize(const void *p) { return slabOf(p)->size; }

void *slabRealloc(void *p, size_t size) {
    if (!p) return slabAlloc(size);
    int c = slabClassOf(size);
    size_t old;
    if (slabOwns(p)) {
        old = slabSlotSize(p);
        if (c >= 0 && classSize[c] == old) return p;
    } else {
        if (c < 0) return xrealloc(p, size);
        old = xmallocSize(p);
    }
    void *n = slabAlloc(size);
    memcpy(n, p, old < size ? old : size);
    slabFree(p);
    return n;
}

void slabPurge(void) {
    for (int c = 0; c < SLAB_CLASSES; c++) {
        lock();
        Slab *s = spare[c];
        if (s) {
            spare[c] = NULL;
            listRemove(s);
            nSlabs--;
            atomic_store_explicit(&activeBytes, nSlabs * SLAB_BYTES, memory_order_relaxed);
        }
        unlock();
        if (s) releaseSlab(s);
    }
}

/* Makes one page writable-and-resident without changing what it holds:
 * an atomic add of 0 (another thread may be writing that page's slots). */
NO_ASAN static void touchPages(char *p, size_t len, size_t page) {
    for (size_t i = 0; i < len; i += page) __atomic_fetch_add((uint64_t *)(p + i), 0, __ATOMIC_RELAXED);
}

/* slabPrefault's part for handed-back slabs: makes the freeIdx entries
 * just below the resident ones resident, up to `ahead` bytes in all.
 * Called with the lock held; returns with it held. */
static void prefaultReuse(void) {
    size_t want = ahead / SLAB_BYTES;
    if (want > REUSE_MAX) want = REUSE_MAX;
    if (reuseReady >= want || nFree <= reuseReady) return;
    size_t k = want < nFree ? want : nFree; /* the top k entries */
    size_t bottom = nFree - k, n = k - reuseReady, gen = pushGen;
    uint32_t batch[REUSE_MAX];
    memcpy(batch, &freeIdx[bottom], n * sizeof(*batch));
    unlock();
    /* Populating never changes a byte: a slab popped (and used) meanwhile
     * is safe.  One released again meanwhile may stay resident while free
     * (pushGen changed: not counted as ready; reused first anyway). */
    for (size_t i = 0; i < n; i++) {
        char *slab = (char *)slabRangeBase + (size_t)batch[i] * SLAB_BYTES;
        if (madvise(slab, SLAB_BYTES, MADV_POPULATE_WRITE) == 0) prefaultReadPages(slab, SLAB_BYTES);
    }
    lock();
    atomic_store_explicit(&pfBytes, atomic_load_explicit(&pfBytes, memory_order_relaxed) + n * SLAB_BYTES,
                          memory_order_relaxed);
    if (pushGen == gen) reuseReady = nFree > bottom ? nFree - bottom : 0;
}

void slabPrefault(void) {
    lock();
    if (!reserved || !slabRangeBytes) {
        asked = 0;
        unlock();
        return;
    }
    prefaultReuse();
    size_t from = ready > top ? ready : top;
    size_t to = top + ahead;
    if (to > slabRangeBytes) to = slabRangeBytes;
    size_t have = committed;
    unlock();
    if (to > from) {
        char *base = (char *)slabRangeBase;
        size_t commitTo = have;
        if (to > have) { /* what newSlab would do, a step at a time; idempotent if it races */
            commitTo = (to + COMMIT_STEP - 1) & ~(COMMIT_STEP - 1);
            if (commitTo > slabRangeBytes) commitTo = slabRangeBytes;
            if (mprotect(base + have, commitTo - have, PROT_READ | PROT_WRITE) != 0) commitTo = have;
            if (to > commitTo) to = commitTo;
        }
        /* Only faults pages in (and reads them: prefaultReadPages, so the
         * main thread's first write into a new slab takes no host fault;
         * it was each new slab's 8-16 us): safe while another thread
         * writes slots in the range (a slab handed out meanwhile). */
        if (to > from) {
            if (madvise(base + from, to - from, MADV_POPULATE_WRITE) == 0) prefaultReadPages(base + from, to - from);
            else touchPages(base + from, to - from, (size_t)sysconf(_SC_PAGESIZE));
        }
        lock();
        if (commitTo > committed) committed = commitTo;
        if (to > ready) {
            atomic_store_explicit(&pfBytes, atomic_load_explicit(&pfBytes, memory_order_relaxed) + (to - from),
                                  memory_order_relaxed);
            ready = to;
        }
        asked = 0;
        unlock();
        return;
    }
    lock();
    asked = 0;
    unlock();
}

int slabPrefaultIdle(long long nowMs, long long quietMs) {
    int gave = 0;
    slabDrainDeferred(4096);
    if (!lockOrGiveUp()) return 0;
    if (fresh != freshSeen || asked) {
        freshSeen = fresh;
        quietSinceMs = nowMs;
    } else if (quietSinceMs < 0) {
        quietSinceMs = nowMs;
    } else if (reuseReady && nowMs - quietSinceMs >= quietMs) {
        /* The resident handed-back slabs on top, a few per call. */
        for (int i = 0; i < 16 && reuseReady; i++, reuseReady--)
            (void)madvise((char *)slabRangeBase + (size_t)freeIdx[nFree - reuseReady] * SLAB_BYTES, SLAB_BYTES,
                          MADV_DONTNEED);
        if (!reuseReady && ready == top) {
            ahead = AHEAD_MIN;
            atomic_store_explicit(&pfTrims, atomic_load_explicit(&pfTrims, memory_order_relaxed) + 1,
                                  memory_order_relaxed);
            gave = 1;
        }
    } else if (ready > top && nowMs - quietSinceMs >= quietMs) {
        /* Under the lock: no slab can be handed out of the range while
         * its pages go.  At most TRIM_STEP per call, from the far end, so
         * the timer tick (and a command arriving meanwhile, or another
         * thread's allocation waiting for the lock) waits some tens of us
         * at most; 4 MB take 4 ticks. */
        size_t n = ready - top < TRIM_STEP ? ready - top : TRIM_STEP;
        ready -= n;
        (void)madvise((char *)slabRangeBase + ready, n, MADV_DONTNEED);
        if (ready == top) {
            ahead = AHEAD_MIN;
            atomic_store_explicit(&pfTrims, atomic_load_explicit(&pfTrims, memory_order_relaxed) + 1,
                                  memory_order_relaxed);
            gave = 1;
        }
    }
    unlock();
    return gave;
}

void slabPrefaultStats(size_t *prefaulted, size_t *misses, size_t *aheadBytes, size_t *trims) {
    *prefaulted = atomic_load_explicit(&pfBytes, memory_order_relaxed);
    *misses = atomic_load_explicit(&pfMisses, memory_order_relaxed);
    lock();
    *aheadBytes = (ready > top ? ready - top : 0) + reuseReady * SLAB_BYTES;
    unlock();
    *trims = atomic_load_explicit(&pfTrims, memory_order_relaxed);
}

size_t slabUsedBytes(void) { return atomic_load_explicit(&usedBytes, memory_order_relaxed); }

size_t slabActiveBytes(void) { return atomic_load_explicit(&activeBytes, memory_order_relaxed); }

size_t slabCount(void) {
    lock();
    size_t n = nSlabs;
    unlock();
    return n;
}
