/* slab.c -- the slab allocator for blocks of up to 128 bytes in 8-byte steps (see
 * slab.h for the contract and the invariants).
 *
 * Layout: one reserved range [slabRangeBase, + slabRangeBytes), PROT_NONE
 * beyond `committed` (made read-write 1 MB at a time as `top` grows).
 * Slabs are handed out from the range's low end (`top`) or, first, from
 * the stack of address ranges whose slabs were handed back (`freeIdx`,
 * slab numbers, in a separate mapping: a handed-back slab's own pages are
 * not resident, and writing a list link into them would make one so).
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
static Slab *newSlab(int c) {
    char *mem;
    if (!reserved) slabReserve();
    if (nFree) {
        mem = (char *)slabRangeBase + (size_t)freeIdx[--nFree] * SLAB_BYTES;
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

/* Hands slab s's pages back to the system and its address range to the
 * stack of reusable ones.  s is on no list; called without the lock. */
static void releaseSlab(Slab *s) {
    /* The header too: the next user of the range rewrites it.  An error
     * only leaves the pages resident. */
    (void)madvise(s, SLAB_BYTES, MADV_DONTNEED);
    lock();
    freeIdx[nFree++] = (uint32_t)(((uintptr_t)s - slabRangeBase) / SLAB_BYTES);
    unlock();
}

NO_ASAN void *slabAllocClass(int c) {
    lock();
    Slab *s = partial[c];
    if (__builtin_expect(!s, 0)) {
        s = newSlab(c);
        if (!s) {
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

NO_ASAN void slabFreeSlot(void *p) {
    Slab *s = slabOf(p);
    Slab *release = NULL;
#ifdef SLAB_ASAN
    if (__asan_address_is_poisoned(p)) fail("slabFree of a free slot");
#endif
    lock();
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
    unlock();
    if (release) releaseSlab(release);
}

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

size_t slabUsedBytes(void) { return atomic_load_explicit(&usedBytes, memory_order_relaxed); }

size_t slabActiveBytes(void) { return atomic_load_explicit(&activeBytes, memory_order_relaxed); }

size_t slabCount(void) {
    lock();
    size_t n = nSlabs;
    unlock();
    return n;
}
