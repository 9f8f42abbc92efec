/* slab.h -- small blocks in 8-byte-step size classes.
 *
 * Debian's jemalloc spaces its small size classes 16 bytes apart (8, 16,
 * 32, 48, 64, 80, ..., 128), so a 34-byte key-table entry costs 48.  This
 * allocator serves every size up to 128 bytes from slabs of its own, in
 * classes 8 bytes apart (8, 16, 24, ..., 128): the ones jemalloc lacks, and
 * the ones it has too, because one test (size <= 128) is cheaper on every
 * allocation than picking out the odd classes, and its paths are no longer
 * than jemalloc's (SET's instructions stay as they were).  Bigger blocks go
 * to xmalloc.  It is meant for blocks of which there are millions
 * (key-table entries: db/object.c); a block from slabAlloc is freed with slabFree,
 * resized with slabRealloc, and its size is xmallocSize's (alloc.c asks
 * slabOwns).  Never pass one to xfree or xrealloc.
 *
 * Invariants:
 *  - All slabs live in one range of address space reserved on the first
 *    slab allocation (PROT_NONE, made writable as slabs are first used), so whether a block
 *    is a slab slot is one comparison (slabOwns), whatever its size or its
 *    owner's layout.  When the range is used up or could not be reserved,
 *    slabAlloc falls back to xmalloc: callers never need to know.
 *  - A slab is SLAB_BYTES long and aligned to SLAB_BYTES; its header (class,
 *    slot size, use count, free list, list links) is at its start, so a
 *    slot's header is its address with the low bits cleared.  Free slots
 *    are threaded through their first 8 bytes; slots never used yet are
 *    taken from the slab's unused tail (so a new slab's pages are touched
 *    as they fill, unless prefaulting made them resident: below).
 *  - Per class, the slabs with a free slot form a list; a slab whose last
 *    slot is freed is handed back to the system (madvise(MADV_DONTNEED)
 *    on its pages; its address range is reused by the next new slab),
 *    except that one empty slab per class is kept for reuse (slabPurge
 *    hands those back too: MEMORY PURGE, after a flush).
 *  - Any thread may allocate and free: one spinlock guards the allocator
 *    (held for a few dozen instructions; the lazy-free thread yields after
 *    a short spin, any other thread gives up: below).  Fork handlers take
 *    it around fork().
 *  - used_memory: slabUsedBytes() is the bytes of slots in use (the slot
 *    size, as jemalloc counts a block's class), which alloc.c adds to
 *    xmallocUsed; slabActiveBytes() counts the slabs held (empty slots
 *    included), the allocator's "active" and "resident".
 *  - Sanitizer builds poison free slots and unused tails (AddressSanitizer's
 *    manual poisoning), so a use after slabFree is reported as it is for
 *    malloc'd memory; a second slabFree of a slot aborts. */
#ifndef CAIRN_SLAB_H
#define CAIRN_SLAB_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "ds/alloc.h"

#define SLAB_BYTES ((size_t)16384)
#define SLAB_CLASSES 16
#define SLAB_MAX_SIZE 128

/* The reserved range (0 and 0 until the first slab allocation reserves it,
 * or when it could not be): for slabOwns only.  Atomic because any thread
 * may ask while the first allocation sets them (relaxed loads: plain
 * loads on x86-64 and arm64). */
extern _Atomic uintptr_t slabRangeBase;
extern _Atomic size_t slabRangeBytes;

/* Whether p is a slab slot (any address may be asked; NULL is not one). */
static inline int slabOwns(const void *p) {
    size_t bytes = atomic_load_explicit(&slabRangeBytes, memory_order_acquire);
    return (uintptr_t)p - atomic_load_explicit(&slabRangeBase, memory_order_relaxed) < bytes;
}

/* A hint that slot p is about to be freed (or its slab otherwise read):
 * fetches its slab's header, which slabFreeSlot reads and writes.  Any
 * address may be given; one outside the range is ignored. */
static inline void slabPrefetchHeader(const void *p) {
    if (slabOwns(p)) __builtin_prefetch((const void *)((uintptr_t)p & ~(uintptr_t)(SLAB_BYTES - 1)), 1);
}

/* Whether a request of `size` bytes is one for a slab class: 1 to 128. */
static inline int slabServes(size_t size) { return size - 1 < SLAB_MAX_SIZE; }

/* The slab class of a request of `size` bytes (slot size 8 * (class + 1)),
 * or -1 for sizes that go to xmalloc (0, more than 128). */
static inline int slabClassOf(size_t size) { return slabServes(size) ? (int)((size - 1) >> 3) : -1; }

/* Bytes slabAlloc(size) really reserves: the slot size for a slab class
 * (while the range has room), else xmallocGoodSize's. */
size_t slabGoodSize(size_t size);

/* A free slot of class c, or NULL when no slab can be had (the range is
 * used up). */
void *slabAllocClass(int c);
/* Frees a slot (slabOwns(p) must hold). */
void slabFreeSlot(void *p);
/* The slot size of slot p (slabOwns(p) must hold). */
size_t slabSlotSize(const void *p);

/* A block of at least `size` bytes: a slot when size has a slab class and
 * one is free, else xmalloc's.  Never NULL (out of memory aborts, as
 * xmalloc does). */
static inline void *slabAlloc(size_t size) {
    if (slabServes(size)) {
        void *p = slabAllocClass((int)((size - 1) >> 3));
        if (p) return p;
    }
    return xmalloc(size);
}

/* Frees a block from slabAlloc / slabRealloc (NULL: nothing). */
static inline void slabFree(void *p) {
    if (slabOwns(p)) slabFreeSlot(p);
    else xfree(p);
}

/* Frees n slots (slabOwns must hold for each) under one take of the lock,
 * their slabs' headers fetched first: a thread that frees millions of
 * entries (the lazy-free thread) then takes the lock, whose cache line the
 * main thread's allocations also need, once per batch instead of once per
 * slot.  A thread that may not wait for the lock (slabThreadMayWait), finding
 * it busy past its spin, frees them one by one (slabFreeSlot's give-up). */
void slabFreeSlots(void *const *p, size_t n);

/* Resizes a block from slabAlloc (realloc's contract: the first
 * min(old, size) bytes are kept; the block may move).  A block ends up
 * where slabAlloc would put a new one of `size`; it stays in place when its
 * slot already has that class. */
void *slabRealloc(void *p, size_t size);

/* Bytes of slots in use, and bytes of the slabs held (all threads). */
size_t slabUsedBytes(void);
size_t slabActiveBytes(void);
/* Hands back the empty slabs kept for reuse (one per class at most). */
void slabPurge(void);
/* Batched hand-back on the calling thread.  Between slabReleaseBatch(1)
 * and slabReleaseBatch(0) the slabs this thread empties keep their pages
 * (they are no longer counted as held) until the end, or until 65536 are
 * waiting, and then go back sorted, in runs of adjacent slabs, one
 * madvise per run.  Freeing a whole key table (FLUSHALL ASYNC) empties
 * thousands of slabs, and each madvise of a process whose other threads
 * run on other CPUs interrupts them (a TLB shootdown): one per slab put
 * 4,478 of them into a 2M-key FLUSHALL ASYNC, inside the main thread's
 * commands.  slabReleaseCalls counts the madvise calls that handed slabs
 * back. */
void slabReleaseBatch(int on);
size_t slabReleaseCalls(void);

/* Prefaulting.  A new slab's pages would fault one by one as its slots are
 * first used (~5-25 us each on a VM), about every 100 new keys: inside the
 * SETs of a load.  So the allocator keeps the range just past the slabs
 * handed out resident ahead of need, made so on another thread:
 *  - when fewer than half of the bytes wanted ahead are resident, a new
 *    slab calls slabPrefaultHook (set by the lazy-free thread's owner;
 *    NULL: no prefaulting), without the lock held, once until
 *    slabPrefault has run: it queues a job that calls slabPrefault and
 *    must not wait for it;
 *  - slabPrefault (that job, on any thread but without the lock) makes
 *    the wanted bytes ahead writable and resident, past the newest slab
 *    and in the handed-back slabs to be reused next (MADV_POPULATE_WRITE,
 *    else one atomic add of 0 per page: the contents are never changed,
 *    so a slab handed out meanwhile is safe).  The bytes wanted ahead
 *    start at 256 KB and double, up to 4 MB, each time a new slab still
 *    finds its pages not resident (the fill outruns the prefaulter);
 *  - slabPrefaultIdle (the main thread's timer) gives the resident bytes
 *    ahead back (MADV_DONTNEED, 1 MB per call) once no slab has been
 *    taken for quietMs, and the bytes wanted return to 256 KB: an idle
 *    server holds nothing ahead, a filling one at most 4 MB (and as much
 *    in handed-back slabs about to be reused).  Returns 1 when the last
 *    of them went; it also drains the deferred frees (below). */
extern void (*slabPrefaultHook)(void);
void slabPrefault(void);
int slabPrefaultIdle(long long nowMs, long long quietMs);
/* Bytes made resident ahead so far, new slabs whose pages were not
 * resident ("misses"), resident bytes ahead now, idle give-backs. */
void slabPrefaultStats(size_t *prefaulted, size_t *misses, size_t *aheadBytes, size_t *trims);

/* Waiting for the lock.  Only a thread that called slabThreadMayWait (the
 * lazy-free thread) waits for a busy lock; any other gives up after a
 * short spin, since the holder is then most likely preempted: its
 * slabAllocClass returns NULL (slabAlloc falls back to xmalloc), its
 * slabFreeSlot defers the free to a lock-free stack, which
 * slabDrainDeferred (the main thread's timer, via slabPrefaultIdle; a
 * waiting thread may call it too) frees, at most `most` per call.
 * Returns the slots freed; slabDeferredFrees counts the deferrals. */
void slabThreadMayWait(void);
size_t slabDrainDeferred(size_t most);
size_t slabDeferredFrees(void);
/* For tests: take (1) or release (0) the lock, as a holder would. */
void slabTestHoldLock(int hold);

/* For tests: the slot size of class c, and the number of slabs held. */
size_t slabClassSize(int c);
size_t slabCount(void);

#endif
