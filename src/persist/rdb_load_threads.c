/* rdb_load_threads.c -- a loaded snapshot's LZF strings expanded by
 * several threads.
 *
 * LZF decompression is most of what loading a compressed file costs
 * (hash and sorted-set listpacks, list nodes, long strings), and each
 * compressed string can be expanded on its own.  The loading thread stays
 * the only one that parses records, builds values and inserts keys, in
 * file order, exactly as the single-threaded loader does; ahead of it, it
 * scans the record framing of the next batch of input (about BATCH_INPUT
 * bytes of whole records) without building anything, notes every LZF
 * string there (its offset, compressed and original lengths, checked as
 * the decoder checks them) and reserves each one's memory at its final
 * size: an sds for a string, a plain block for a listpack, ziplist,
 * zipmap, intset or list node.  Worker threads expand the batch's strings
 * into those blocks (the first touch of that memory is theirs), chunk by
 * chunk.  When the loader reaches a noted string, it takes the expanded
 * block instead of expanding it itself: it expands the chunks up to that
 * string's that nobody took yet, and does not wait for one a worker is
 * still on (on a busy machine that worker may be descheduled for a whole
 * time slice): it decodes that string itself, as one thread would.
 *
 * The result is the single-threaded load's by construction: the loader
 * reads the same bytes in the same order and gets the same strings; a
 * string that failed to expand (corrupt LZF) is not handed over, so the
 * loader expands it itself and fails where and as it always did; framing
 * the scanner cannot follow (a corrupt or truncated record, a stream, an
 * unknown type) just ends the batch there, and scanning resumes once the
 * loader is past that record.  Nothing else is shared: workers read the
 * input and write their blocks, no allocation, no server state.
 *
 * Memory is bounded: at most two batches in flight, each with at most
 * BATCH_OUTPUT expanded bytes (and BATCH_ENTRIES strings); past that a
 * record's remaining strings are left to the loader.  Every block is
 * reserved and freed by the loading thread (used_memory stays exact: the
 * workers allocate nothing); a block not handed over (the load failed, or
 * the loader did not read it as noted) is freed when its batch retires.
 *
 * A scan that finds little to expand (small uncompressed strings) is not
 * repeated for a while (the pause doubles up to IDLE_SKIP_MAX bytes of
 * input), so a file of small keys pays little for the scanner. */
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "core/server.h"
#include "ds/alloc.h"
#include "ds/lzfdec.h"
#include "ds/rdbcodec.h"
#include "ds/sds.h"
#include "persist/rdb_int.h"

#define LOAD_THREADS_MAX 16
#define LOAD_THREADS_MIN_BYTES (256 * 1024) /* a smaller input is loaded by one thread */
#define BATCH_INPUT (256 * 1024)
#define BATCH_OUTPUT (8 << 20)
#define BATCH_ENTRIES 8192
#define CHUNK_INPUT (16 * 1024)
#define CHUNK_ENTRIES 256
#define IDLE_SKIP_MIN (1 << 20)
#define IDLE_SKIP_MAX (64 << 20)
#define CHUNK_WAIT_NS 200000 /* a worker's chunk is waited for this long */

typedef struct Entry {
    size_t pos, end;  /* the string's encoding in the input: [pos, end) */
    size_t src;       /* its compressed bytes: [src, end) */
    size_t ulen;      /* expanded length */
    void *buf;        /* sds (RDB_PF_SDS) or block of ulen bytes (RDB_PF_BLOB) */
    unsigned chunk;   /* the chunk that holds it */
    unsigned char kind;
    unsigned char ok; /* expanded (written by the worker that did it) */
    unsigned char taken;
} Entry;

typedef struct Batch {
    Entry *e;
    size_t n, cap;
    size_t *chunk; /* chunk i: entries [chunk[i], chunk[i + 1]) */
    unsigned char *done; /* chunk i expanded (under the mutex) */
    size_t nchunks, chunkCap;
    size_t nextChunk, doneChunks; /* under the mutex */
    size_t to;   /* the input scanned: up to this record boundary */
    size_t take; /* next entry the loader may take */
    int ready;   /* the loader saw every chunk expanded (loader only) */
} Batch;

struct RdbPrefetch {
    const unsigned char *p;
    size_t len;
    pthread_mutex_t mu;
    pthread_cond_t work; /* workers: a batch was queued, or the end */
    pthread_cond_t done; /* the loader: a chunk was expanded */
    Batch b[2];
    unsigned head, count; /* b[head % 2] is the oldest of count batches */
    int end;
    int waiting; /* the loader waits for a chunk (under the mutex) */
    size_t scanPos;    /* the next scan starts here (a record boundary) */
    size_t pauseUntil; /* nonzero: no scan until the loader reaches it */
    size_t idleSkip;
    int nthreads;
    pthread_t tids[LOAD_THREADS_MAX];
};

int rdbLoadThreadCount(void) { return rdbThreadCount(server.cfg.rdbLoadThreads, RDB_LOAD_THREADS_AUTO_MAX); }

/* --- expanding (workers, and the loader while it waits) --- */

static void expandChunk(RdbPrefetch *pf, Batch *b, size_t c) {
    for (size_t i = b->chunk[c]; i < b->chunk[c + 1]; i++) {
        Entry *e = &b->e[i];
        size_t clen = e->end - e->src;
        if (lzfDecompress(pf->p + e->src, clen, e->buf, e->ulen) != e->ulen) continue;
        if (e->kind == RDB_PF_SDS) sdsSetLen(e->buf, e->ulen);
        e->ok = 1;
    }
}

/* Under the mutex: a chunk nobody took yet, oldest batch first. */
static int takeChunk(RdbPrefetch *pf, Batch **bp, size_t *c) {
    for (unsigned k = 0; k < pf->count; k++) {
        Batch *b = &pf->b[(pf->head + k) % 2];
        if (b->nextChunk < b->nchunks) {
            *bp = b;
            *c = b->nextChunk++;
            return 1;
        }
    }
    return 0;
}

static void *worker(void *arg) {
    RdbPrefetch *pf = arg;
    pthread_mutex_lock(&pf->mu);
    for (;;) {
        Batch *b;
        size_t c;
        while (!pf->end && !takeChunk(pf, &b, &c)) pthread_cond_wait(&pf->work, &pf->mu);
        if (pf->end) break;
        pthread_mutex_unlock(&pf->mu);
        expandChunk(pf, b, c);
        pthread_mutex_lock(&pf->mu);
        b->done[c] = 1;
        if (++b->doneChunks == b->nchunks || pf->waiting) pthread_cond_broadcast(&pf->done);
    }
    pthread_mutex_unlock(&pf->mu);
    return NULL;
}

/* The loader: is chunk c of batch b expanded?  It expands the chunks up to
 * c nobody took yet itself.  While a worker is still on c, the loader
 * expands the next chunks nobody took (work it would otherwise leave to
 * the workers: with one worker beside it, that is what balances the two
 * threads when expanding costs more than parsing and inserting); with none
 * left, c is waited for CHUNK_WAIT_NS at most (the worker may be
 * descheduled on a busy machine): then 0, and the loader decodes that
 * string itself. */
static int chunkReady(RdbPrefetch *pf, Batch *b, size_t c) {
    if (b->ready) return 1;
    pthread_mutex_lock(&pf->mu);
    while (b->nextChunk <= c) {
        size_t k = b->nextChunk++;
        pthread_mutex_unlock(&pf->mu);
        expandChunk(pf, b, k);
        pthread_mutex_lock(&pf->mu);
        b->done[k] = 1;
        if (++b->doneChunks == b->nchunks) pthread_cond_broadcast(&pf->done);
    }
    Batch *t;
    size_t k;
    while (!b->done[c] && takeChunk(pf, &t, &k)) {
        pthread_mutex_unlock(&pf->mu);
        expandChunk(pf, t, k);
        pthread_mutex_lock(&pf->mu);
        t->done[k] = 1;
        if (++t->doneChunks == t->nchunks) pthread_cond_broadcast(&pf->done);
    }
    if (!b->done[c]) {
        /* A running worker ends a chunk in about a tenth of a millisecond;
         * a descheduled one may take a time slice. */
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_nsec += CHUNK_WAIT_NS;
        if (until.tv_nsec >= 1000000000L) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000L;
        }
        pf->waiting = 1;
        while (!b->done[c] && pthread_cond_timedwait(&pf->done, &pf->mu, &until) == 0) {}
        pf->waiting = 0;
    }
    int ok = b->done[c];
    if (b->doneChunks == b->nchunks) b->ready = 1;
    pthread_mutex_unlock(&pf->mu);
    return ok;
}

/* 1 when every chunk of b was expanded. */
static int batchDone(RdbPrefetch *pf, Batch *b) {
    if (b->ready) return 1;
    pthread_mutex_lock(&pf->mu);
    int done = b->doneChunks == b->nchunks;
    pthread_mutex_unlock(&pf->mu);
    return done;
}

/* The loader: until batch b is expanded, helps with its chunks (and older
 * ones), then waits for the workers' last ones. */
static void awaitBatch(RdbPrefetch *pf, Batch *b) {
    if (b->ready) return;
    pthread_mutex_lock(&pf->mu);
    while (b->nextChunk < b->nchunks) {
        Batch *t;
        size_t c;
        if (!takeChunk(pf, &t, &c)) break;
        pthread_mutex_unlock(&pf->mu);
        expandChunk(pf, t, c);
        pthread_mutex_lock(&pf->mu);
        t->done[c] = 1;
        if (++t->doneChunks == t->nchunks) pthread_cond_broadcast(&pf->done);
    }
    while (b->doneChunks < b->nchunks) pthread_cond_wait(&pf->done, &pf->mu);
    pthread_mutex_unlock(&pf->mu);
    b->ready = 1;
}

/* --- scanning the framing (the loader) --- */

typedef struct Scan {
    RdbPrefetch *pf;
    Batch *b;
    size_t pos;
    size_t out;    /* expanded bytes noted in this batch */
    size_t packed; /* compressed bytes noted */
    size_t chunkFrom, chunkBytes;
    int full;      /* limits reached: the rest of the record is not noted */
} Scan;

static void closeChunk(Scan *s) {
    Batch *b = s->b;
    if (b->n == s->chunkFrom) return;
    if (b->nchunks + 2 > b->chunkCap) {
        b->chunkCap = b->chunkCap ? b->chunkCap * 2 : 16;
        b->chunk = xrealloc(b->chunk, sizeof(size_t) * b->chunkCap);
        b->done = xrealloc(b->done, b->chunkCap);
    }
    if (b->nchunks == 0) b->chunk[0] = 0;
    b->done[b->nchunks] = 0;
    for (size_t i = s->chunkFrom; i < b->n; i++) b->e[i].chunk = (unsigned)b->nchunks;
    b->chunk[++b->nchunks] = b->n;
    s->chunkFrom = b->n;
    s->chunkBytes = 0;
}

/* Skips the string at s->pos, noting it when it is LZF and kind is not 0.
 * -1 when the framing cannot be followed. */
static int skipString(Scan *s, int kind) {
    const unsigned char *p = s->pf->p;
    size_t len = s->pf->len;
    uint64_t n;
    int special;
    size_t at = s->pos;
    if (rdbDecodeLen(p, len, &s->pos, &n, &special) < 0) return -1;
    if (!special) {
        if (n > len - s->pos) return -1;
        s->pos += (size_t)n;
        return 0;
    }
    if (n <= 2) {
        size_t bytes = (size_t)1 << n;
        if (len - s->pos < bytes) return -1;
        s->pos += bytes;
        return 0;
    }
    if (n != RDBCODEC_ENC_LZF) return -1;
    size_t clen, ulen;
    if (rdbDecodeLzfHeader(p, len, &s->pos, &clen, &ulen) < 0) return -1;
    size_t src = s->pos;
    s->pos += clen;
    Batch *b = s->b;
    if (!kind || s->full) return 0;
    if (b->n == BATCH_ENTRIES || (b->n > 0 && s->out + ulen > BATCH_OUTPUT)) {
        s->full = 1;
        return 0;
    }
    if (b->n == b->cap) {
        b->cap = b->cap ? b->cap * 2 : 256;
        b->e = xrealloc(b->e, sizeof(Entry) * b->cap);
    }
    Entry *e = &b->e[b->n++];
    e->pos = at;
    e->end = s->pos;
    e->src = src;
    e->ulen = ulen;
    e->kind = (unsigned char)kind;
    e->ok = e->taken = 0;
    e->buf = kind == RDB_PF_SDS ? (void *)sdsEmptyCap(ulen) : xmalloc(ulen);
    s->out += ulen;
    s->packed += clen;
    s->chunkBytes += clen;
    if (s->chunkBytes >= CHUNK_INPUT || b->n - s->chunkFrom >= CHUNK_ENTRIES) closeChunk(s);
    return 0;
}

static int skipBytes(Scan *s, size_t n) {
    if (s->pf->len - s->pos < n) return -1;
    s->pos += n;
    return 0;
}

static int skipLen(Scan *s, uint64_t *v) {
    int special;
    uint64_t x;
    if (rdbDecodeLen(s->pf->p, s->pf->len, &s->pos, &x, &special) < 0 || special) return -1;
    if (v) *v = x;
    return 0;
}

/* Skips n elements of `strings` strings each (a score after each for the
 * old sorted sets: zset2 8 bytes, zset 1 byte of length then text). */
static int skipElements(Scan *s, uint64_t n, int strings, int score) {
    for (uint64_t i = 0; i < n; i++) {
        for (int k = 0; k < strings; k++)
            if (skipString(s, RDB_PF_SDS) < 0) return -1;
        if (score == 2 && skipBytes(s, 8) < 0) return -1;
        if (score == 1) {
            if (s->pos >= s->pf->len) return -1;
            unsigned char l = s->pf->p[s->pos++];
            if (l < 253 && skipBytes(s, l) < 0) return -1;
        }
    }
    return 0;
}

/* Skips the record at s->pos.  0, 1 at the end of the snapshot, -1 when
 * the scanner cannot follow it (s->pos is then meaningless). */
static int skipRecord(Scan *s) {
    if (s->pos >= s->pf->len) return -1;
    unsigned char type = s->pf->p[s->pos++];
    uint64_t n;
    switch (type) {
    case RDB_OPCODE_EXPIRETIME: return skipBytes(s, 4);
    case RDB_OPCODE_EXPIRETIME_MS: return skipBytes(s, 8);
    case RDB_OPCODE_FREQ: return skipBytes(s, 1);
    case RDB_OPCODE_IDLE:
    case RDB_OPCODE_SELECTDB: return skipLen(s, NULL);
    case RDB_OPCODE_RESIZEDB: return skipLen(s, NULL) < 0 ? -1 : skipLen(s, NULL);
    case RDB_OPCODE_AUX: return skipString(s, 0) < 0 ? -1 : skipString(s, 0);
    case RDB_OPCODE_FUNCTION2: return skipString(s, 0);
    case RDB_OPCODE_EOF: return 1;
    default: break;
    }
    if (skipString(s, RDB_PF_SDS) < 0) return -1; /* the key */
    switch (type) {
    case RDB_TYPE_STRING: return skipString(s, RDB_PF_SDS);
    case RDB_TYPE_LIST:
    case RDB_TYPE_SET: return skipLen(s, &n) < 0 ? -1 : skipElements(s, n, 1, 0);
    case RDB_TYPE_HASH: return skipLen(s, &n) < 0 ? -1 : skipElements(s, n, 2, 0);
    case RDB_TYPE_ZSET: return skipLen(s, &n) < 0 ? -1 : skipElements(s, n, 1, 1);
    case RDB_TYPE_ZSET_2: return skipLen(s, &n) < 0 ? -1 : skipElements(s, n, 1, 2);
    case RDB_TYPE_HASH_ZIPMAP:
    case RDB_TYPE_LIST_ZIPLIST:
    case RDB_TYPE_SET_INTSET:
    case RDB_TYPE_ZSET_ZIPLIST:
    case RDB_TYPE_HASH_ZIPLIST:
    case RDB_TYPE_HASH_LISTPACK:
    case RDB_TYPE_ZSET_LISTPACK: return skipString(s, RDB_PF_BLOB);
    case RDB_TYPE_LIST_QUICKLIST:
    case RDB_TYPE_LIST_QUICKLIST_2:
        if (skipLen(s, &n) < 0) return -1;
        for (uint64_t i = 0; i < n; i++) {
            if (type == RDB_TYPE_LIST_QUICKLIST_2 && skipLen(s, NULL) < 0) return -1;
            if (skipString(s, RDB_PF_BLOB) < 0) return -1;
        }
        return 0;
    default: return -1; /* streams, modules, unknown: the loader's */
    }
}

/* Scans whole records from pf->scanPos into a new batch (queued when it
 * noted anything).  Pauses the scanner when the records could not be
 * followed or held little to expand. */
static void scanBatch(RdbPrefetch *pf) {
    Batch *b = &pf->b[(pf->head + pf->count) % 2];
    b->n = b->nchunks = b->nextChunk = b->doneChunks = b->take = 0;
    b->ready = 0;
    Scan s = {.pf = pf, .b = b, .pos = pf->scanPos};
    size_t start = pf->scanPos;
    int stuck = 0;
    while (s.pos - start < BATCH_INPUT && !s.full) {
        size_t rec = s.pos;
        int rc = skipRecord(&s);
        if (rc != 0) {
            /* Unfollowable (or the end): the batch ends before it, and
             * what this record noted is dropped. */
            for (size_t i = b->n; i > 0 && b->e[i - 1].pos >= rec; i--) {
                Entry *e = &b->e[--b->n];
                if (e->kind == RDB_PF_SDS) sdsFree(e->buf);
                else xfree(e->buf);
            }
            while (b->nchunks && b->chunk[b->nchunks] > b->n) b->nchunks--;
            s.chunkFrom = b->nchunks ? b->chunk[b->nchunks] : 0;
            s.chunkBytes = 0;
            s.pos = rec;
            stuck = 1;
            break;
        }
    }
    closeChunk(&s);
    b->to = s.pos;
    pf->scanPos = s.pos;
    if (stuck) {
        pf->pauseUntil = s.pos + 1; /* resumes past the record the loader reads itself */
    } else if (s.packed * 8 < s.pos - start) {
        pf->pauseUntil = s.pos + pf->idleSkip;
        if (pf->idleSkip < IDLE_SKIP_MAX) pf->idleSkip *= 2;
    } else {
        pf->idleSkip = IDLE_SKIP_MIN;
    }
    if (b->n == 0) return;
    pthread_mutex_lock(&pf->mu);
    pf->count++;
    pthread_cond_broadcast(&pf->work);
    pthread_mutex_unlock(&pf->mu);
}

/* Frees what the oldest batch did not hand over, once it is expanded. */
static void retireBatch(RdbPrefetch *pf) {
    Batch *b = &pf->b[pf->head % 2];
    awaitBatch(pf, b);
    for (size_t i = 0; i < b->n; i++) {
        Entry *e = &b->e[i];
        if (e->taken) continue;
        if (e->kind == RDB_PF_SDS) sdsFree(e->buf);
        else xfree(e->buf);
    }
    pthread_mutex_lock(&pf->mu);
    b->n = b->nchunks = 0;
    pf->head++;
    pf->count--;
    pthread_mutex_unlock(&pf->mu);
}

/* The next noted string the loader has not passed, or SIZE_MAX. */
static size_t nextPos(RdbPrefetch *pf) {
    for (unsigned k = 0; k < pf->count; k++) {
        Batch *b = &pf->b[(pf->head + k) % 2];
        if (b->take < b->n) return b->e[b->take].pos;
    }
    return SIZE_MAX;
}

/* Where the loader calls rdbPrefetchAt next. */
static size_t wakePos(RdbPrefetch *pf) {
    if (pf->count) return pf->b[pf->head % 2].to;
    if (pf->pauseUntil) return pf->pauseUntil;
    return pf->scanPos < pf->len ? pf->scanPos : SIZE_MAX;
}

void rdbPrefetchAt(RdbPrefetch *pf, size_t rec, size_t *next, size_t *wake) {
    /* A batch the loader passed is retired once its workers are done with
     * it (not waited for: the loader goes on, decoding itself what no
     * batch holds). */
    while (pf->count && pf->b[pf->head % 2].to <= rec && batchDone(pf, &pf->b[pf->head % 2])) retireBatch(pf);
    if (pf->pauseUntil && rec >= pf->pauseUntil && pf->count == 0) {
        pf->pauseUntil = 0;
        pf->scanPos = rec;
    }
    if (pf->scanPos < rec && !pf->pauseUntil) pf->scanPos = rec;
    while (pf->count < 2 && !pf->pauseUntil && pf->scanPos < pf->len) {
        size_t before = pf->scanPos;
        scanBatch(pf);
        if (pf->scanPos == before && !pf->pauseUntil) break;
    }
    *next = nextPos(pf);
    *wake = wakePos(pf);
}

int rdbPrefetchTake(RdbPrefetch *pf, size_t pos, int kind, void **buf, size_t *len, size_t *end, size_t *next) {
    int rc = 0;
    for (unsigned k = 0; k < pf->count; k++) {
        Batch *b = &pf->b[(pf->head + k) % 2];
        while (b->take < b->n && b->e[b->take].pos < pos) b->take++; /* not read as noted */
        if (b->take == b->n) continue;
        Entry *e = &b->e[b->take];
        if (e->pos == pos && e->kind == kind) {
            b->take++;
            if (chunkReady(pf, b, e->chunk) && e->ok) {
                e->taken = 1;
                *buf = e->buf;
                *len = e->ulen;
                *end = e->end;
                rc = 1;
            }
        }
        break;
    }
    *next = nextPos(pf);
    return rc;
}

RdbPrefetch *rdbPrefetchStart(const unsigned char *p, size_t len, size_t from, int threads) {
    if (threads <= 1 || len < LOAD_THREADS_MIN_BYTES) return NULL;
    if (threads > LOAD_THREADS_MAX) threads = LOAD_THREADS_MAX;
    RdbPrefetch *pf = xcalloc(sizeof(*pf));
    pf->p = p;
    pf->len = len;
    pf->scanPos = from;
    pf->idleSkip = IDLE_SKIP_MIN;
    pthread_mutex_init(&pf->mu, NULL);
    pthread_cond_init(&pf->work, NULL);
    pthread_cond_init(&pf->done, NULL);
    /* Signals stay with the loading thread.  The loader expands too:
     * threads - 1 workers. */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    for (int i = 0; i < threads - 1; i++)
        if (pthread_create(&pf->tids[pf->nthreads], NULL, worker, pf) == 0) pf->nthreads++;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (pf->nthreads == 0) {
        rdbPrefetchStop(pf);
        return NULL;
    }
    return pf;
}

void rdbPrefetchStop(RdbPrefetch *pf) {
    if (!pf) return;
    while (pf->count) retireBatch(pf);
    pthread_mutex_lock(&pf->mu);
    pf->end = 1;
    pthread_cond_broadcast(&pf->work);
    pthread_mutex_unlock(&pf->mu);
    for (int i = 0; i < pf->nthreads; i++) pthread_join(pf->tids[i], NULL);
    for (int i = 0; i < 2; i++) {
        xfree(pf->b[i].e);
        xfree(pf->b[i].chunk);
        xfree(pf->b[i].done);
    }
    pthread_cond_destroy(&pf->done);
    pthread_cond_destroy(&pf->work);
    pthread_mutex_destroy(&pf->mu);
    xfree(pf);
}
