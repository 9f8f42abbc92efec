/* alloc.c -- counting wrapper over the system allocator (jemalloc in the
 * normal build).  The counter is updated atomically because lazy-free
 * threads release memory too. */
#include "ds/alloc.h"

#include "ds/slab.h"

#include <limits.h>
#include <malloc.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <sys/types.h>
#include <unistd.h>

void (*xmallocOomHandler)(size_t size);

static __attribute__((noreturn)) void oom(size_t size) {
    if (xmallocOomHandler) xmallocOomHandler(size);
    fprintf(stderr, "cairn: out of memory allocating %zu bytes\n", size);
    fflush(stderr);
    abort();
}

void xmallocOom(size_t size) { oom(size); }

/* MEMORY MALLOC-STATS' last line: the slab allocator's blocks are not
 * jemalloc's (slab.h), with its prefaulting counters. */
static void slabStatsLine(void (*write)(void *ctx, const char *text), void *ctx) {
    char line[320];
    size_t pf, miss, ahead, trims;
    slabPrefaultStats(&pf, &miss, &ahead, &trims);
    snprintf(line, sizeof(line),
             "--- Cairn key-entry slabs: %zu bytes held in slabs of %zu, %zu bytes in slots in use; "
             "prefaulted %zu bytes, %zu resident ahead, %zu slabs not prefaulted, %zu idle give-backs\n",
             slabActiveBytes(), SLAB_BYTES, slabUsedBytes(), pf, ahead, miss, trims);
    write(ctx, line);
}

#ifdef CAIRN_JEMALLOC
/* jemalloc reads this at start-up.  A background thread returns freed pages
 * to the OS on jemalloc's decay schedule, as Redis's jemalloc-bg-thread
 * default does; without it freed memory stays resident until the next
 * allocation activity.  (Not every jemalloc build reads this symbol: the
 * server also sets it at start-up from jemalloc-bg-thread, through
 * xmallocSetBackgroundThread.) */
const char *malloc_conf = "background_thread:true";

/* jemalloc keeps, per thread, the bytes it allocated and deallocated (in
 * size classes).  used_memory is the sum over the threads that touch the
 * keyspace's memory, so the hot path does no accounting of its own. */
int mallctl(const char *name, void *oldp, size_t *oldlenp, void *newp, size_t newlen);
size_t nallocx(size_t size, int flags);

size_t xmallocGoodSize(size_t size) { return nallocx(size ? size : 1, 0); }

#define MAX_THREADS 16
static struct {
    uint64_t *allocated, *deallocated;
} threads[MAX_THREADS];
static _Atomic int threadCount;

void xmallocRegisterThread(void) {
    uint64_t *a = NULL, *d = NULL;
    size_t sz = sizeof(a);
    if (mallctl("thread.allocatedp", &a, &sz, NULL, 0) != 0) return;
    sz = sizeof(d);
    if (mallctl("thread.deallocatedp", &d, &sz, NULL, 0) != 0) return;
    int i = atomic_fetch_add(&threadCount, 1);
    if (i >= MAX_THREADS) return;
    threads[i].allocated = a;
    threads[i].deallocated = d;
}

void *xmalloc(size_t size) {
    void *p = malloc(size ? size : 1);
    if (!p) oom(size);
    return p;
}

void *xcalloc(size_t size) {
    void *p = calloc(1, size ? size : 1);
    if (!p) oom(size);
    return p;
}

void *xrealloc(void *ptr, size_t size) {
    void *p = realloc(ptr, size ? size : 1);
    if (!p) oom(size);
    return p;
}

void xfree(void *ptr) { free(ptr); }

size_t xmallocUsed(void) {
    int n = atomic_load(&threadCount);
    if (n > MAX_THREADS) n = MAX_THREADS;
    int64_t total = 0;
    for (int i = 0; i < n; i++) total += (int64_t)(*threads[i].allocated - *threads[i].deallocated);
    /* The slab allocator's slabs are jemalloc-free mappings: its slots in
     * use count as the blocks they are (slab.h). */
    total += (int64_t)slabUsedBytes();
    return total > 0 ? (size_t)total : 0;
}

void xmallocFlushThreadCache(void) { mallctl("thread.tcache.flush", NULL, NULL, NULL, 0); }

/* The big arena: created on first use, its decay off (-1) so that neither
 * the decay nor jemalloc's eager purge of freed extents of 8 MB and more
 * (oversize_threshold) hands its pages back; xmallocPurgeBig does, once big
 * allocations have paused.  bigArena 0: not tried yet; UINT_MAX: could not
 * be created (plain xrealloc). */
void *mallocx(size_t size, int flags);
void *rallocx(void *ptr, size_t size, int flags);
#define BIG_FLAGS(a) ((int)(((unsigned)(a) + 1) << 20) | (1 << 8) /* MALLOCX_ARENA(a) | MALLOCX_TCACHE_NONE */)
static unsigned bigArena;
static _Atomic unsigned long bigAllocs;

static unsigned bigArenaIndex(void) {
    if (bigArena) return bigArena;
    unsigned a = 0;
    size_t sz = sizeof(a);
    ssize_t never = -1;
    char name[48];
    bigArena = UINT_MAX;
    if (mallctl("arenas.create", &a, &sz, NULL, 0) != 0 || a == 0) return bigArena;
    snprintf(name, sizeof(name), "arena.%u.dirty_decay_ms", a);
    if (mallctl(name, NULL, NULL, &never, sizeof(never)) != 0) return bigArena;
    snprintf(name, sizeof(name), "arena.%u.muzzy_decay_ms", a);
    if (mallctl(name, NULL, NULL, &never, sizeof(never)) != 0) return bigArena;
    bigArena = a;
    return a;
}

void *xreallocBig(void *ptr, size_t size) {
    unsigned a = bigArenaIndex();
    if (a == UINT_MAX) return xrealloc(ptr, size);
    atomic_fetch_add_explicit(&bigAllocs, 1, memory_order_relaxed);
    void *p = ptr ? rallocx(ptr, size ? size : 1, BIG_FLAGS(a)) : mallocx(size ? size : 1, BIG_FLAGS(a));
    if (!p) oom(size);
    return p;
}

/* Counts big allocations and big frees alike: either starts the quiet
 * period over.  Counting only allocations missed a value freed after the
 * purge (a 12 MB value overwritten more than 250 ms after it was set stayed
 * resident for good: the big arena never purges by itself). */
void xmallocBigFreed(void) { atomic_fetch_add_explicit(&bigAllocs, 1, memory_order_relaxed); }

int xmallocBigQuiet(long long nowMs, long long quietMs) {
    static unsigned long seen, purged;
    static long long since;
    unsigned long n = atomic_load_explicit(&bigAllocs, memory_order_relaxed);
    if (n != seen) {
        seen = n;
        since = nowMs;
        return 0;
    }
    if (n == purged || nowMs - since < quietMs) return 0;
    purged = n;
    return 1;
}

#define ARENAS_ALL 4096u /* jemalloc's MALLCTL_ARENAS_ALL */

static void purgeArena(unsigned arena) {
    char name[32];
    snprintf(name, sizeof(name), "arena.%u.purge", arena);
    mallctl(name, NULL, NULL, NULL, 0);
}

/* jemalloc's stats are a snapshot taken at the last epoch bump. */
static void refreshStats(void) {
    uint64_t epoch = 1;
    size_t sz = sizeof(epoch);
    mallctl("epoch", &epoch, &sz, &epoch, sz);
}

void xmallocPurgeBig(void) {
    if (bigArena == 0 || bigArena == UINT_MAX) return;
    purgeArena(bigArena);
}

/* Whether more than XMALLOC_PURGE_SLACK bytes of dirty pages remain. */
static int dirtyLeft(void) {
    refreshStats();
    size_t pages = 0;
    size_t sz = sizeof(pages);
    char name[48];
    snprintf(name, sizeof(name), "stats.arenas.%u.pdirty", ARENAS_ALL);
    if (mallctl(name, &pages, &sz, NULL, 0) != 0) return 0;
    return pages * (size_t)sysconf(_SC_PAGESIZE) > XMALLOC_PURGE_SLACK;
}

void xmallocPurge(void) {
    slabPurge();
    purgeArena(ARENAS_ALL);
    if (!dirtyLeft()) return;
    /* Cut short by a background purge (alloc.h).  Stopping the background
     * threads waits for the pass they are in; the purge then finds no
     * purge running and returns everything, and the threads start again. */
    _Bool off = 0, on = 1, was = 0;
    size_t sz = sizeof(was);
    if (mallctl("background_thread", &was, &sz, &off, sizeof(off)) == 0 && was) {
        purgeArena(ARENAS_ALL);
        mallctl("background_thread", NULL, NULL, &on, sizeof(on));
    }
}

void xmallocStats(size_t *allocated, size_t *active, size_t *resident) {
    refreshStats();
    size_t v;
    size_t sz = sizeof(v);
    size_t slabUsed = slabUsedBytes(), slabHeld = slabActiveBytes();
    *allocated = mallctl("stats.allocated", &v, &sz, NULL, 0) == 0 ? v + slabUsed : xmallocUsed();
    sz = sizeof(v);
    *active = mallctl("stats.active", &v, &sz, NULL, 0) == 0 ? v + slabHeld : *allocated;
    sz = sizeof(v);
    *resident = mallctl("stats.resident", &v, &sz, NULL, 0) == 0 ? v + slabHeld : xmallocRss();
}

void malloc_stats_print(void (*write_cb)(void *, const char *), void *cbopaque, const char *opts);

void xmallocStatsReport(void (*write)(void *ctx, const char *text), void *ctx) {
    malloc_stats_print(write, ctx, NULL);
    slabStatsLine(write, ctx);
}

#else /* counting wrapper for sanitizer / libc builds */

void xmallocPurge(void) {
    slabPurge();
    malloc_trim(0);
}

void *xreallocBig(void *ptr, size_t size) { return xrealloc(ptr, size); }

void xmallocBigFreed(void) {}

int xmallocBigQuiet(long long nowMs, long long quietMs) {
    (void)nowMs, (void)quietMs;
    return 0;
}

void xmallocPurgeBig(void) {}

void xmallocFlushThreadCache(void) {}

void xmallocStats(size_t *allocated, size_t *active, size_t *resident) {
    *allocated = *active = xmallocUsed();
    *resident = xmallocRss();
}

void xmallocStatsReport(void (*write)(void *ctx, const char *text), void *ctx) {
    write(ctx, "Stats not supported for the current allocator\n");
    slabStatsLine(write, ctx);
}

static _Atomic size_t usedMemory;

size_t xmallocGoodSize(size_t size) { return size; }

void xmallocRegisterThread(void) {}

void *xmalloc(size_t size) {
    void *p = malloc(size ? size : 1);
    if (!p) oom(size);
    atomic_fetch_add_explicit(&usedMemory, malloc_usable_size(p), memory_order_relaxed);
    return p;
}

void *xcalloc(size_t size) {
    void *p = calloc(1, size ? size : 1);
    if (!p) oom(size);
    atomic_fetch_add_explicit(&usedMemory, malloc_usable_size(p), memory_order_relaxed);
    return p;
}

void *xrealloc(void *ptr, size_t size) {
    if (!ptr) return xmalloc(size);
    size_t old = malloc_usable_size(ptr);
    void *p = realloc(ptr, size ? size : 1);
    if (!p) oom(size);
    size_t now = malloc_usable_size(p);
    if (now >= old)
        atomic_fetch_add_explicit(&usedMemory, now - old, memory_order_relaxed);
    else
        atomic_fetch_sub_explicit(&usedMemory, old - now, memory_order_relaxed);
    return p;
}

void xfree(void *ptr) {
    if (!ptr) return;
    atomic_fetch_sub_explicit(&usedMemory, malloc_usable_size(ptr), memory_order_relaxed);
    free(ptr);
}

size_t xmallocUsed(void) { return atomic_load_explicit(&usedMemory, memory_order_relaxed) + slabUsedBytes(); }

#endif

char *xstrdup(const char *s) {
    size_t n = strlen(s) + 1;
    char *p = xmalloc(n);
    memcpy(p, s, n);
    return p;
}

size_t xmallocSize(void *ptr) {
    if (slabOwns(ptr)) return slabSlotSize(ptr);
    return ptr ? malloc_usable_size(ptr) : 0;
}

size_t xmallocRss(void) {
    FILE *f = fopen("/proc/self/statm", "r");
    if (!f) return 0;
    unsigned long size = 0, rss = 0;
    int n = fscanf(f, "%lu %lu", &size, &rss);
    fclose(f);
    if (n != 2) return 0;
    return (size_t)rss * (size_t)sysconf(_SC_PAGESIZE);
}

int xmallocRetainsAddressSpace(void) {
#ifdef CAIRN_JEMALLOC
    static _Atomic int known; /* 0 not asked yet, 1 no, 2 yes */
    int k = atomic_load_explicit(&known, memory_order_relaxed);
    if (!k) {
        _Bool retain = 0;
        size_t sz = sizeof(retain);
        k = mallctl("opt.retain", &retain, &sz, NULL, 0) == 0 && retain ? 2 : 1;
        atomic_store_explicit(&known, k, memory_order_relaxed);
    }
    return k == 2;
#else
    return 0;
#endif
}

int xmallocSetBackgroundThread(int on) {
#ifdef CAIRN_JEMALLOC
    _Bool b = on != 0;
    return mallctl("background_thread", NULL, NULL, &b, sizeof(b)) == 0 ? 0 : -1;
#else
    (void)on;
    return 0;
#endif
}

const char *xmallocLibrary(void) {
#ifdef CAIRN_JEMALLOC
    static char name[32];
    if (!name[0]) {
        const char *ver = "";
        size_t sz = sizeof(ver);
        if (mallctl("version", &ver, &sz, NULL, 0) == 0 && ver) {
            /* "5.3.0-0-g54eaed1d8b..." -> "jemalloc-5.3.0" */
            size_t n = strcspn(ver, "-");
            snprintf(name, sizeof(name), "jemalloc-%.*s", (int)n, ver);
        } else {
            snprintf(name, sizeof(name), "jemalloc");
        }
    }
    return name;
#else
    return "libc";
#endif
}
