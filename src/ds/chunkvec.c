/* chunkvec.c -- pointer array in fixed-size chunks (see chunkvec.h). */
#include "ds/chunkvec.h"

#include "ds/alloc.h"
#include "ds/util.h"

#define DIR_MIN 8

void cvGrow(ChunkVec *v) {
    if (v->nchunks == 1 && v->cap < CHUNKVEC_SLOTS) { /* the first chunk doubles */
        v->cap *= 2;
        v->chunks[0] = xrealloc(v->chunks[0], sizeof(void *) * v->cap);
        return;
    }
    if (v->nchunks == v->dirCap) {
        /* The directory is 1/4096 of the slots: copying it is cheap. */
        uint32_t cap = v->dirCap < DIR_MIN ? DIR_MIN : v->dirCap * 2;
        v->chunks = xrealloc(v->chunks, sizeof(void **) * cap);
        v->dirCap = cap;
    }
    if (v->nchunks == 0) {
        v->chunks[v->nchunks++] = xmalloc(sizeof(void *) * CHUNKVEC_FIRST);
        v->cap = CHUNKVEC_FIRST;
        return;
    }
    /* The pushes that fill a fresh chunk would fault on each of its 8
     * pages (on a load of keys with a TTL, inside a SET every 512 keys;
     * ~10 us each on this kind of VM).  So the chunk taken now is the one
     * made at the previous growth, which the other thread has made
     * resident since (prefaultLater), and the next one is made now.  The
     * first growth to full chunks has none ready: the other thread makes
     * the pages past the first resident while they fill. */
    void **chunk = v->ahead;
    if (!chunk) {
        chunk = xmalloc(sizeof(void *) * CHUNKVEC_SLOTS);
        prefaultLater(chunk + 512, sizeof(void *) * (CHUNKVEC_SLOTS - 512));
    }
    v->chunks[v->nchunks++] = chunk;
    v->cap = (uint64_t)v->nchunks << CHUNKVEC_SHIFT;
    v->ahead = xmalloc(sizeof(void *) * CHUNKVEC_SLOTS);
    prefaultLater(v->ahead, sizeof(void *) * CHUNKVEC_SLOTS);
}

void cvShrink(ChunkVec *v) {
    uint32_t need = (v->count + CHUNKVEC_SLOTS - 1) >> CHUNKVEC_SHIFT;
    uint32_t keep = need + 1;
    while (v->nchunks > keep) xfree(v->chunks[--v->nchunks]);
    if (v->nchunks > 1 || v->cap > CHUNKVEC_SLOTS) v->cap = (uint64_t)v->nchunks << CHUNKVEC_SHIFT;
    if (v->nchunks == 0) {
        cvFree(v);
        return;
    }
    if (v->dirCap > DIR_MIN && v->nchunks < v->dirCap / 4) {
        uint32_t cap = v->nchunks * 2 < DIR_MIN ? DIR_MIN : v->nchunks * 2;
        v->chunks = xrealloc(v->chunks, sizeof(void **) * cap);
        v->dirCap = cap;
    }
}

void cvFree(ChunkVec *v) {
    for (uint32_t c = 0; c < v->nchunks; c++) xfree(v->chunks[c]);
    xfree(v->chunks);
    xfree(v->ahead);
    v->chunks = NULL;
    v->ahead = NULL;
    v->count = v->nchunks = v->dirCap = 0;
    v->cap = 0;
}

size_t cvBytes(const ChunkVec *v) {
    size_t slots = (v->nchunks == 1 ? (size_t)v->cap : (size_t)v->nchunks * CHUNKVEC_SLOTS) +
                   (v->ahead ? CHUNKVEC_SLOTS : 0);
    return slots * sizeof(void *) + (size_t)v->dirCap * sizeof(void **);
}
