/* chunkvec.h -- a growable array of pointers stored in fixed-size chunks.
 *
 * Slot i lives in chunk i >> CHUNKVEC_SHIFT at i & CHUNKVEC_MASK.  Growing
 * allocates one more chunk (32 KB) and, rarely, grows the small directory
 * of chunk pointers; no slot past the first chunk ever moves, so a push
 * never copies more than that chunk and never touches more than one fresh
 * chunk of pages.  The first chunk starts at CHUNKVEC_FIRST slots and
 * doubles (realloc) up to the full size, so a small vector (a database's
 * first keys with a TTL) costs bytes, not 32 KB: a server at maxmemory is
 * not pushed into evicting by it.  (A dense array
 * grown by realloc copies and first-touches tens of megabytes at once when
 * it holds millions of entries: a stall of hundreds of milliseconds.)
 *
 * Indices are uint32_t: at most 2^32 - 1 slots.  Not thread-safe.  All
 * memory comes from alloc.h. */
#ifndef CAIRN_CHUNKVEC_H
#define CAIRN_CHUNKVEC_H

#include <stddef.h>
#include <stdint.h>

#define CHUNKVEC_SHIFT 12
#define CHUNKVEC_SLOTS (1u << CHUNKVEC_SHIFT) /* slots per chunk */
#define CHUNKVEC_MASK (CHUNKVEC_SLOTS - 1)
#define CHUNKVEC_FIRST 16u /* slots of a new vector's first chunk */

typedef struct ChunkVec {
    void ***chunks;   /* directory: chunks[0..nchunks) are allocated */
    uint32_t count;   /* slots in use: 0..count-1 */
    uint32_t nchunks; /* chunks allocated (count <= nchunks * CHUNKVEC_SLOTS) */
    uint32_t dirCap;  /* slots of the directory */
    uint64_t cap;     /* slots allocated: chunk 0's while it is the only one
                       * (CHUNKVEC_FIRST..CHUNKVEC_SLOTS), else nchunks * CHUNKVEC_SLOTS */
    void **ahead;     /* the next chunk, made resident ahead of use (NULL until
                       * the vector has two full-size chunks) */
} ChunkVec;

/* An empty vector needs no call: a zeroed ChunkVec is empty. */
static inline void *cvGet(const ChunkVec *v, uint32_t i) { return v->chunks[i >> CHUNKVEC_SHIFT][i & CHUNKVEC_MASK]; }
static inline void cvSet(ChunkVec *v, uint32_t i, void *p) { v->chunks[i >> CHUNKVEC_SHIFT][i & CHUNKVEC_MASK] = p; }
/* Add a chunk (and maybe grow the directory): cvPush's slow path. */
void cvGrow(ChunkVec *v);
/* Append p; returns its index. */
static inline uint32_t cvPush(ChunkVec *v, void *p) {
    uint32_t i = v->count;
    if (__builtin_expect((uint64_t)i == v->cap, 0)) cvGrow(v);
    cvSet(v, i, p);
    v->count = i + 1;
    return i;
}
/* Remove and return the last slot (the vector must not be empty). */
static inline void *cvPop(ChunkVec *v) { return cvGet(v, --v->count); }
/* Free the chunks past the one in use plus one spare (keeps a push/pop at
 * a chunk boundary from allocating each time), and shrink the directory
 * when it is mostly unused. */
void cvShrink(ChunkVec *v);
/* Free everything; the vector is empty afterwards. */
void cvFree(ChunkVec *v);
/* Bytes reserved (chunks and directory). */
size_t cvBytes(const ChunkVec *v);

#endif
