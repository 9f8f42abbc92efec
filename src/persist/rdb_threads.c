/* rdb_threads.c -- a snapshot's keys serialized by several threads.
 *
 * The saving thread (the server's for SAVE, DEBUG RELOAD and a shutdown's
 * save; a fork child's for BGSAVE, a replication sync and an AOF
 * rewrite's RDB preamble) cuts a database's keys into jobs, runs of
 * consecutive walk units (db.h dbWalkUnits: the key table's buckets),
 * queued in a ring of slots.  Worker threads take the
 * jobs in order, walk their units (dbWalkVisit) and serialize each
 * key with rdbKeyBytes into the slot's buffer (LZF compression is most of
 * that work), with the buffer's CRC-64; the saving thread writes the
 * slots out in ring order and joins their CRCs (crc64Combine).  A key's
 * bytes depend on the key alone and units are written in the order a
 * database iterator gives, so the file is byte for byte the single-threaded
 * one.
 *
 * Read only: during a snapshot nothing changes the dataset (SAVE blocks
 * the server; a child has its own copy), and serializing changes nothing
 * either -- keys are walked, never looked up (no lazy expiry), a list is
 * read without lending it a quicklist view, a stream's compressed nodes
 * are expanded into a scratch buffer instead of the stream's node cache.
 * A key is read by one worker only.
 *
 * Memory is bounded: RING_PER_THREAD slots per worker; a job holds about
 * JOB_TARGET_BYTES of output (its unit count follows the bytes per
 * unit seen so far); a worker whose buffer passes JOB_FLUSH_BYTES in the middle of a
 * job (a large value) hands it to the saving thread and waits until it is
 * written.
 *
 * used_memory counts registered threads only (ds/alloc.h).  Workers are
 * not registered, and whatever a worker allocates a worker frees (slot
 * buffers too: the last worker to exit frees them); the saving thread
 * frees only its own blocks.  A save leaves used_memory as it was. */
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <unistd.h>

#include "core/server.h"
#include "ds/alloc.h"
#include "ds/crc64.h"
#include "persist/rdb.h"
#include "persist/rdb_int.h"

#define RDB_THREADS_MIN_KEYS 128 /* a smaller database is written on one thread */
#define RDB_THREADS_MAX 16       /* rdb-save-threads' limit */
#define RING_PER_THREAD 4
#define JOB_MAX_UNITS 16384
#define JOB_FIRST_UNITS 32
#define JOB_TARGET_BYTES (128 * 1024)
#define JOB_FLUSH_BYTES (1024 * 1024)

typedef enum { SLOT_FREE, SLOT_QUEUED, SLOT_RUNNING, SLOT_PARTIAL, SLOT_DONE } SlotState;

typedef struct Slot {
    SlotState state;   /* under the pipe's mutex */
    size_t from, to;   /* the job: walk units [from, to) */
    long long nkeys;   /* keys serialized (set by the worker when DONE) */
    sds buf;           /* output: allocated, grown and freed by workers */
    uint64_t crc;      /* of buf's bytes, when the pipe checksums */
} Slot;

typedef struct Pipe {
    pthread_mutex_t mu;
    pthread_cond_t work;   /* workers: a job was queued, or the end */
    pthread_cond_t resume; /* workers: a handed-over buffer was written, or abort */
    pthread_cond_t ready;  /* the saving thread: a slot has bytes */
    Slot *slots;
    unsigned nslots;
    unsigned long long head; /* next slot to write (saving thread only) */
    unsigned long long next; /* next slot a worker takes */
    unsigned long long tail; /* next slot to fill */
    int end;   /* no more jobs: workers exit when none is left */
    int abort; /* a write failed: workers drop their bytes and exit */
    int live;  /* workers not yet exited */
    const Db *db; /* frozen (dbWalkFreeze) while the pipe runs */
    int compress, checksum, lru, lfu;
} Pipe;

typedef struct Job {
    Pipe *p;
    Slot *s;
    RdbWriter *w;
    long long nkeys;
    int stop; /* the save was aborted: skip the remaining keys */
} Job;

int rdbThreadCount(int configured, int autoMax) {
    if (configured > 0) return configured;
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) < cpus) cpus = CPU_COUNT(&set);
    if (cpus < 2) return 1;
    return cpus > autoMax ? autoMax : (int)cpus;
}

int rdbSaveThreadCount(void) {
    if (rdbSaveSingleThreaded) return 1;
    return rdbThreadCount(server.cfg.rdbSaveThreads, RDB_SAVE_THREADS_AUTO_MAX);
}

/* A worker's sink: gives its buffer to the saving thread and waits until
 * that one has written it; then the buffer is empty again.  -1 once the
 * save is aborted (the bytes are dropped). */
static int handOver(RdbWriter *w) {
    Job *j = w->sinkCtx;
    Pipe *p = j->p;
    uint64_t crc = p->checksum ? crc64(0, w->buf, sdsLen(w->buf)) : 0;
    pthread_mutex_lock(&p->mu);
    j->s->buf = w->buf;
    j->s->crc = crc;
    if (!p->abort) {
        j->s->state = SLOT_PARTIAL;
        pthread_cond_signal(&p->ready);
        while (j->s->state == SLOT_PARTIAL && !p->abort) pthread_cond_wait(&p->resume, &p->mu);
    }
    int rc = p->abort ? -1 : 0;
    pthread_mutex_unlock(&p->mu);
    sdsClear(w->buf);
    if (rc < 0) j->stop = 1;
    return rc;
}

static void saveKey(void *priv, void *entry) {
    Job *j = priv;
    if (j->stop) return;
    rdbKeyBytes(j->w, entry, j->p->lru, j->p->lfu);
    j->nkeys++;
    if (sdsLen(j->w->buf) >= JOB_FLUSH_BYTES) handOver(j->w);
}

static void *worker(void *arg) {
    Pipe *p = arg;
    pthread_mutex_lock(&p->mu);
    for (;;) {
        while (!p->abort && !p->end && p->next == p->tail) pthread_cond_wait(&p->work, &p->mu);
        if (p->abort || p->next == p->tail) break;
        Slot *s = &p->slots[p->next++ % p->nslots];
        s->state = SLOT_RUNNING;
        pthread_mutex_unlock(&p->mu);
        RdbWriter w = {.buf = s->buf ? s->buf : sdsEmpty(), .fd = -1, .compress = p->compress,
                       .flushAt = JOB_FLUSH_BYTES, .sink = handOver};
        Job j = {.p = p, .s = s, .w = &w};
        w.sinkCtx = &j;
        sdsClear(w.buf);
        dbWalkVisit(p->db, s->from, s->to, saveKey, &j);
        uint64_t crc = p->checksum ? crc64(0, w.buf, sdsLen(w.buf)) : 0;
        pthread_mutex_lock(&p->mu);
        s->buf = w.buf;
        s->crc = crc;
        s->nkeys = j.nkeys;
        s->state = SLOT_DONE;
        pthread_cond_signal(&p->ready);
    }
    if (--p->live == 0) {
        for (unsigned i = 0; i < p->nslots; i++) {
            sdsFree(p->slots[i].buf);
            p->slots[i].buf = NULL;
        }
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

static void queueJob(Pipe *p, Slot *s) {
    pthread_mutex_lock(&p->mu);
    s->state = SLOT_QUEUED;
    p->tail++;
    pthread_cond_signal(&p->work);
    pthread_mutex_unlock(&p->mu);
}

/* What the saving thread wrote so far. */
typedef struct Written {
    long long bytes, units; /* walk units of the jobs done */
} Written;

/* Writes the bytes of the oldest slot when it has some (waiting for them
 * when wait is set).  Returns 0 when it wrote, 1 when nothing was ready,
 * -1 on a write error. */
static int writeHead(Pipe *p, RdbWriter *w, int wait, Written *done) {
    Slot *s = &p->slots[p->head % p->nslots];
    pthread_mutex_lock(&p->mu);
    while (wait && s->state != SLOT_PARTIAL && s->state != SLOT_DONE) pthread_cond_wait(&p->ready, &p->mu);
    SlotState st = s->state;
    pthread_mutex_unlock(&p->mu);
    if (st != SLOT_PARTIAL && st != SLOT_DONE) return 1;
    /* The worker is waiting (PARTIAL) or finished (DONE): the buffer is
     * ours to read until the state changes. */
    size_t n = sdsLen(s->buf);
    if (rdbWriterPutChecked(w, s->buf, n, s->crc) < 0) return -1;
    done->bytes += (long long)n;
    pthread_mutex_lock(&p->mu);
    if (st == SLOT_PARTIAL) {
        s->state = SLOT_RUNNING;
        pthread_cond_broadcast(&p->resume);
    } else {
        s->state = SLOT_FREE;
        p->head++;
    }
    pthread_mutex_unlock(&p->mu);
    if (st == SLOT_DONE) {
        done->units += (long long)(s->to - s->from);
        rdbKeysSaved(w, s->nkeys);
    }
    return 0;
}

/* Cuts the keys into jobs and writes the jobs' bytes in order. */
static int writeKeys(Pipe *p, RdbWriter *w) {
    Written done = {0, 0};
    size_t perJob = JOB_FIRST_UNITS;
    int rc = 0;
    size_t size = dbWalkUnits(p->db);
    for (size_t from = 0; from < size && rc == 0;) {
        while (rc == 0 && p->tail - p->head == p->nslots) rc = writeHead(p, w, 1, &done);
        if (rc < 0) break;
        Slot *s = &p->slots[p->tail % p->nslots];
        s->from = from;
        s->to = size - from > perJob ? from + perJob : size;
        from = s->to;
        queueJob(p, s);
        int r = 0;
        while (p->head < p->tail && (r = writeHead(p, w, 0, &done)) == 0) {}
        if (p->head < p->tail && r < 0) rc = -1;
        /* Units for JOB_TARGET_BYTES at the bytes per unit so far. */
        if (done.bytes > 0 && done.units > 0) {
            long long k = JOB_TARGET_BYTES * done.units / done.bytes;
            perJob = k < 1 ? 1 : k > JOB_MAX_UNITS ? JOB_MAX_UNITS : (size_t)k;
        }
    }
    while (rc == 0 && p->head < p->tail) rc = writeHead(p, w, 1, &done);
    return rc;
}

int rdbSaveDbThreaded(RdbWriter *w, Db *db, int lru, int lfu, int threads) {
    if (dbSize(db) < RDB_THREADS_MIN_KEYS) return 1;
    if (threads > RDB_THREADS_MAX) threads = RDB_THREADS_MAX;
    Pipe p = {.nslots = (unsigned)(RING_PER_THREAD * threads), .live = threads, .db = db,
              .compress = w->compress, .checksum = w->checksum, .lru = lru, .lfu = lfu};
    crc64Init(); /* before the threads use it */
    dbWalkFreeze(db);
    pthread_mutex_init(&p.mu, NULL);
    pthread_cond_init(&p.work, NULL);
    pthread_cond_init(&p.resume, NULL);
    pthread_cond_init(&p.ready, NULL);
    p.slots = xcalloc(sizeof(Slot) * p.nslots);
    /* Signals stay with the saving thread. */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    pthread_t tids[RDB_THREADS_MAX];
    int started = 0;
    for (int i = 0; i < threads; i++)
        if (pthread_create(&tids[started], NULL, worker, &p) == 0) started++;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    pthread_mutex_lock(&p.mu);
    p.live -= threads - started;
    pthread_mutex_unlock(&p.mu);

    int rc = started ? writeKeys(&p, w) : 1;

    pthread_mutex_lock(&p.mu);
    if (rc < 0) p.abort = 1;
    p.end = 1;
    pthread_cond_broadcast(&p.work);
    pthread_cond_broadcast(&p.resume);
    pthread_mutex_unlock(&p.mu);
    for (int i = 0; i < started; i++) pthread_join(tids[i], NULL);
    xfree(p.slots);
    dbWalkThaw(db);
    pthread_cond_destroy(&p.ready);
    pthread_cond_destroy(&p.resume);
    pthread_cond_destroy(&p.work);
    pthread_mutex_destroy(&p.mu);
    return rc;
}
