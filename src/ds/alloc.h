/* alloc.h -- the one allocator wrapper.
 *
 * Every allocation in Cairn goes through these functions so that
 * `used_memory` (INFO, maxmemory, MEMORY USAGE) is exact.  They never return
 * NULL: running out of memory aborts the process with a log line, so callers
 * do not check.  Sizes a client controls must be checked against limits
 * BEFORE calling here.  Under jemalloc (the default build) the usable size of
 * a block is what is counted (jemalloc's own per-thread counters); under
 * sanitizer builds the wrapper counts glibc's usable sizes itself. */
#ifndef CAIRN_ALLOC_H
#define CAIRN_ALLOC_H

#include <stddef.h>

void *xmalloc(size_t size);
void *xcalloc(size_t size);
void *xrealloc(void *ptr, size_t size);
void xfree(void *ptr);
char *xstrdup(const char *s);
/* Every thread that allocates or frees keyspace memory registers once at
 * its start so that xmallocUsed counts it: the main thread first thing in
 * main(), the lazy-free thread when it starts.  It must live as long
 * as the process: its counters are read in place. */
void xmallocRegisterThread(void);
/* Bytes really reserved for a block returned by this module, or the slot
 * size of a block from the slab allocator (ds/slab.h). */
size_t xmallocSize(void *ptr);
/* Bytes a request of `size` would really reserve (its size class); without
 * jemalloc, size itself. */
size_t xmallocGoodSize(size_t size);
/* Bytes currently reserved through this module (all threads), plus the
 * slab allocator's slots in use. */
size_t xmallocUsed(void);
/* Process resident set size in bytes, read from /proc (0 if unknown). */
size_t xmallocRss(void);
/* Give the allocator's freed-but-resident pages back to the system now
 * (jemalloc: purge every arena's dirty pages, as Redis does after a flush;
 * libc: malloc_trim).  Costs time in proportion to what is returned: call
 * it from a background thread (lazyfreePurge).  jemalloc skips an arena
 * whose decay purge is already running (its background thread's, a few
 * pages of an older free), so a flush's purge could do nothing and leave
 * hundreds of MB to the 10 s decay: when more than XMALLOC_PURGE_SLACK
 * bytes of dirty pages remain, it stops the background threads (waiting
 * for their pass), purges again and restarts them.  A FLUSHALL SYNC of 10M
 * keys with TTLs left 704 MB resident when it returned; now 27 MB. */
#define XMALLOC_PURGE_SLACK (8u << 20)
void xmallocPurge(void);
/* Big buffers (a request's argument of RESP_BIG_ARENA_MIN bytes or more,
 * which SET then keeps as the value) come from an arena of their own whose
 * freed pages jemalloc never returns by itself: the next big argument reuses
 * them instead of faulting in fresh pages (2,560 faults for 10 MB, most of
 * the cost of a big SET).  Like xrealloc otherwise (ptr may be NULL; any
 * block from here is freed with xfree).  Without jemalloc: xrealloc. */
void *xreallocBig(void *ptr, size_t size);
/* Called periodically (serverCron): 1, once, when big buffers were
 * allocated but none for quietMs since — time to give that arena's freed
 * pages back (xmallocPurgeBig, from a background thread).  nowMs is any
 * monotonic clock in milliseconds. */
int xmallocBigQuiet(long long nowMs, long long quietMs);
/* A block of XMALLOC_BIG_MIN bytes or more was freed (sdsFree says so):
 * it may have been the big arena's, so xmallocBigQuiet starts counting
 * quiet time again and answers 1 once more after it.  Any thread. */
#define XMALLOC_BIG_MIN (4u << 20)
void xmallocBigFreed(void);
/* Purge the big arena's freed pages (xmallocPurge purges it too). */
void xmallocPurgeBig(void);
/* Return the calling thread's cached free blocks to their arenas (cheap):
 * before asking another thread to purge what this one freed. */
void xmallocFlushThreadCache(void);
/* 1 when the allocator never unmaps address space it got (jemalloc's
 * opt.retain, its default on Linux): the pages of a block, even one freed
 * meanwhile, stay readable.  0 otherwise (glibc malloc may unmap). */
int xmallocRetainsAddressSpace(void);
/* jemalloc-bg-thread: start (on) or stop jemalloc's background purging
 * threads.  0, or -1 when the allocator refused (nothing to do without
 * jemalloc). */
int xmallocSetBackgroundThread(int on);
/* The allocator's own view (jemalloc's stats.allocated / active /
 * resident, refreshed on each call); without jemalloc, used memory and
 * RSS.  For INFO memory and MEMORY STATS. */
void xmallocStats(size_t *allocated, size_t *active, size_t *resident);
/* The allocator's statistics report as text (MEMORY MALLOC-STATS): calls
 * write(ctx, text) for each piece.  Without jemalloc one "Stats not
 * supported for the current allocator" piece. */
void xmallocStatsReport(void (*write)(void *ctx, const char *text), void *ctx);
/* Out of memory: the server's handler (a crash report; it does not
 * return), else a line on stderr and abort().  xmallocOom runs that path
 * as a failed request of `size` bytes would (DEBUG OOM). */
extern void (*xmallocOomHandler)(size_t size);
void xmallocOom(size_t size) __attribute__((noreturn));
/* Allocator name for INFO mem_allocator. */
const char *xmallocLibrary(void);

#endif
