/* chunkvec.c -- pointer array in fixed-size chunks (see chunkvec.h). */
#include "ds/chunkvec.h"

#include "ds/alloc.h"

#define DIR_MIN 8

void cvGrow(ChunkVec *v) {
    if (v->nchunks == v->dirCap) {
        /* The directory is 1/4096 of the slots: copying it is cheap. */
        uint32_t cap = v->dirCap < DIR_MIN ? DIR_MIN : v->dirCap * 2;
        v->chunks = xrealloc(v->chunks, sizeof(void **) * cap);
        v->dirCap = cap;
    }
    v->chunks[v->nchunks++] = xmalloc(sizeof(void *) * CHUNKVEC_SLOTS);
}

void cvShrink(ChunkVec *v) {
    uint32_t need = (v->count + CHUNKVEC_SLOTS - 1) >> CHUNKVEC_SHIFT;
    uint32_t keep = need + 1;
    while (v->nchunks > keep) xfree(v->chunks[--v->nchunks]);
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
    v->chunks = NULL;
    v->count = v->nchunks = v->dirCap = 0;
}

size_t cvBytes(const ChunkVec *v) {
    return (size_t)v->nchunks * CHUNKVEC_SLOTS * sizeof(void *) + (size_t)v->dirCap * sizeof(void **);
}
