/* alloc.c -- counting wrapper over the system allocator (jemalloc in the
 * normal build).  The counter is updated atomically because lazy-free
 * threads release memory too. */
#include "ds/alloc.h"

#include <malloc.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static _Atomic size_t usedMemory;

#ifdef CAIRN_JEMALLOC
/* jemalloc reads this at start-up.  A background thread returns freed pages
 * to the OS on jemalloc's decay schedule, as Redis's jemalloc-bg-thread
 * default does; without it freed memory stays resident until the next
 * allocation activity. */
const char *malloc_conf = "background_thread:true";
#endif

static void oom(size_t size) {
    fprintf(stderr, "cairn: out of memory allocating %zu bytes\n", size);
    fflush(stderr);
    abort();
}

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

char *xstrdup(const char *s) {
    size_t n = strlen(s) + 1;
    char *p = xmalloc(n);
    memcpy(p, s, n);
    return p;
}

size_t xmallocSize(void *ptr) { return ptr ? malloc_usable_size(ptr) : 0; }

size_t xmallocUsed(void) { return atomic_load_explicit(&usedMemory, memory_order_relaxed); }

size_t xmallocRss(void) {
    FILE *f = fopen("/proc/self/statm", "r");
    if (!f) return 0;
    unsigned long size = 0, rss = 0;
    int n = fscanf(f, "%lu %lu", &size, &rss);
    fclose(f);
    if (n != 2) return 0;
    return (size_t)rss * (size_t)sysconf(_SC_PAGESIZE);
}

const char *xmallocLibrary(void) {
#ifdef CAIRN_JEMALLOC
    return "jemalloc";
#else
    return "libc";
#endif
}
