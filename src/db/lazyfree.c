/* lazyfree.c -- one background thread that frees what the main thread hands
 * it (see lazyfree.h).
 *
 * Jobs sit in a FIFO guarded by one mutex; the thread sleeps on a condition
 * variable while the queue is empty.  A job is one entry, a whole detached
 * key table plus its TTL index, a plain block (a key table's old bucket
 * array), or nothing but a purge request; a job that
 * asks for a purge (xmallocPurge: freed pages back to the system) gets it
 * once the queue has drained, so a burst of requests purges once.  `pending` counts the objects
 * (entries) queued and not yet freed; `freed` the objects freed so far.
 * Both are atomics so INFO can read them without the lock.  A job queued
 * does not wake the thread by itself: the main thread wakes it after its
 * replies are written (lazyfreeKick), or at once past WAKE_BATCH jobs. */
#include "db/lazyfree.h"

#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

#include "ds/alloc.h"
#include "ds/htab.h"
#include "ds/omap.h"
#include "ds/slab.h"
#include "ds/stream.h"
#include "ds/util.h"

typedef struct LazyJob {
    struct LazyJob *next;
    kvobj *entry;   /* one entry, or NULL */
    void *block;    /* one plain allocation, or NULL */
    size_t prepare; /* > 0: prepare a bucket array of this many slots */
    Htab *keys;     /* a detached table with its entries, or NULL */
    ChunkVec ttl;   /* the TTL index that went with keys (may be empty) */
    Htab *tabs;     /* detached slot tables with their entries, or NULL */
    size_t ntabs;   /* how many at tabs */
    void *tabsBlock; /* the allocation holding them, freed after */
    size_t objects; /* entries this job frees (for the counters) */
    int slabs;      /* make the slab allocator's next slabs resident (slabPrefault) */
    void *populate; /* prefaultLater's range, or NULL */
    size_t populateLen;
    int purge;      /* then return freed pages to the system */
    int purgeBig;   /* return the big arena's freed pages (xmallocPurgeBig) */
} LazyJob;

static pthread_once_t startOnce = PTHREAD_ONCE_INIT;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t wake = PTHREAD_COND_INITIALIZER;  /* a job was queued */
static pthread_cond_t idle = PTHREAD_COND_INITIALIZER;  /* the queue drained */
static LazyJob *head, *tail;                             /* under lock */
static int busy;                                         /* under lock: a job runs */
static int started;
static atomic_size_t pending;
static atomic_size_t freed;
/* Jobs queued since the thread was last woken (under lock), and whether
 * lazyfreeKick has a wake to give.  Waking the thread from inside a command
 * handed it the CPU there: on a busy machine the scheduler preempted the
 * main thread for the woken one, and the command (a FLUSHALL ASYNC, a SET
 * whose table asked for a bigger bucket array) took milliseconds. */
static int unwoken;
static atomic_int kickWanted;
/* More jobs than this waiting un-woken: wake at once (the queue must not
 * grow unbounded while no event loop iteration ends, as in a long load). */
#define WAKE_BATCH 64

/* The bucket array prepared for a growing key table (lazyfreeTakeTable):
 * PREP_PENDING while the thread allocates and touches it, PREP_READY once
 * prepTable holds it.  prepSlots is set by the main thread before the job
 * is queued; prepDrop (under lock) asks the thread to free it instead. */
enum { PREP_IDLE, PREP_PENDING, PREP_READY };
static atomic_int prepState;
static void **prepTable;
static size_t prepSlots;
static int prepDrop;
static long long prepReadyMs;

static long long monotonicMs(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void prepareTable(size_t slots) {
    size_t bytes = slots * sizeof(void *);
    char *t = xcalloc(bytes);
    /* The page faults happen here, not in the main thread's rehash. */
    prefaultRange(t, bytes);
    pthread_mutex_lock(&lock);
    if (prepDrop) {
        prepDrop = 0;
        pthread_mutex_unlock(&lock);
        xfree(t);
        atomic_store(&prepState, PREP_IDLE);
        return;
    }
    prepTable = (void **)t;
    prepReadyMs = monotonicMs();
    atomic_store(&prepState, PREP_READY);
    pthread_mutex_unlock(&lock);
}

static void runJob(LazyJob *j) {
    if (j->slabs) slabPrefault();
    if (j->populate) prefaultPopulate(j->populate, j->populateLen);
    if (j->entry) kvFree(j->entry);
    xfree(j->block);
    if (j->prepare) prepareTable(j->prepare);
    /* A whole table's emptied slabs go back in runs at its end. */
    slabReleaseBatch(1);
    KvFreeBatch batch = {.n = 0}; /* htabClear has read an entry's link before it is added */
    if (j->keys) htabRelease(j->keys, kvFreeBatchCb, &batch);
    for (size_t i = 0; i < j->ntabs; i++) htabClear(&j->tabs[i], kvFreeBatchCb, &batch);
    kvFreeBatchEnd(&batch);
    slabReleaseBatch(0);
    xfree(j->tabsBlock);
    cvFree(&j->ttl);
    if (j->purgeBig) xmallocPurgeBig();
}

static void *lazyfreeMain(void *arg) {
    (void)arg;
    xmallocRegisterThread(); /* its frees must count in used_memory */
    slabThreadMayWait();     /* it frees millions of entries: may wait for the slabs' lock */
    int wantPurge = 0;       /* a job asked for a purge: done when the queue empties */
    pthread_mutex_lock(&lock);
    for (;;) {
        while (!head) pthread_cond_wait(&wake, &lock);
        LazyJob *j = head;
        head = j->next;
        if (!head) tail = NULL;
        busy = 1;
        pthread_mutex_unlock(&lock);

        runJob(j);
        wantPurge |= j->purge;
        atomic_fetch_sub(&pending, j->objects);
        atomic_fetch_add(&freed, j->objects);
        xfree(j);

        pthread_mutex_lock(&lock);
        if (wantPurge && !head) { /* once, after the last queued job */
            wantPurge = 0;
            pthread_mutex_unlock(&lock);
            xmallocPurge();
            pthread_mutex_lock(&lock);
        }
        busy = 0;
        if (!head) pthread_cond_broadcast(&idle);
    }
    return NULL;
}

static void startThread(void) {
    /* If the thread cannot start, jobs are run inline (see enqueue). */
    started = startDetachedThread(lazyfreeMain, NULL) == 0;
}

static void enqueue(LazyJob *j) {
    pthread_once(&startOnce, startThread);
    if (!started) {
        runJob(j);
        if (j->purge) xmallocPurge();
        atomic_fetch_add(&freed, j->objects);
        xfree(j);
        return;
    }
    atomic_fetch_add(&pending, j->objects);
    j->next = NULL;
    pthread_mutex_lock(&lock);
    if (tail) tail->next = j;
    else head = j;
    tail = j;
    if (++unwoken >= WAKE_BATCH) {
        unwoken = 0;
        pthread_cond_signal(&wake);
    } else {
        atomic_store_explicit(&kickWanted, 1, memory_order_relaxed);
    }
    pthread_mutex_unlock(&lock);
}

void lazyfreeKick(void) {
    if (!atomic_load_explicit(&kickWanted, memory_order_relaxed)) return;
    atomic_store_explicit(&kickWanted, 0, memory_order_relaxed);
    pthread_mutex_lock(&lock);
    if (unwoken) {
        unwoken = 0;
        pthread_cond_signal(&wake);
    }
    pthread_mutex_unlock(&lock);
}

size_t (*lazyfreeModuleEffort)(const kvobj *o);

/* About one unit per allocation the value is made of (a module value's:
 * its type's free effort, lazyfreeModuleEffort, 0 taken as the most).
 * Compact encodings are a single block; a quicklist is one block per node of about 8 KB; the
 * other encodings hold one small block per element.  *bytes gets the
 * value's size (objectValueSize: the hash, set and sorted set estimate it
 * from a sample, so this stays O(1) for them), computed once. */
static size_t freeEffort(const kvobj *o, size_t *bytes) {
    *bytes = 0;
    if (kvType(o) == OBJ_MODULE) {
        size_t e = lazyfreeModuleEffort ? lazyfreeModuleEffort(o) : 1;
        return e == 0 ? SIZE_MAX : e;
    }
    if (kvType(o) == OBJ_STRING) {
        if (kvEncoding(o) == OBJ_ENC_RAW) *bytes = objectValueSize(o);
        return 1;
    }
    switch (kvEncoding(o)) {
    case OBJ_ENC_LISTPACK:
    case OBJ_ENC_INTSET:
    case OBJ_ENC_ZIPLIST:
    case OBJ_ENC_ZIPMAP: return 1; /* never worth a purge: size not needed */
    case OBJ_ENC_QUICKLIST: *bytes = objectValueSize(o); return *bytes / 8192 + 1;
    case OBJ_ENC_STREAM: {
        /* Its nodes, and each group's PEL and consumers, from their
         * counts: streamBytes walks every node (UNLINK of 1M entries took
         * ~0.7 ms sizing it).  A node is taken as 4 KB, the default
         * stream-node-max-bytes, for the purge's threshold. */
        const Stream *st = kvPtr(o);
        size_t nodes = omapSize(st->nodes), small = 0;
        if (st->groups)
            for (OmapNode *g = omapFirst(st->groups); g; g = omapNext(g)) {
                const StreamCG *cg = omapValue(g);
                small += omapSize(cg->pel) + omapSize(cg->consumers);
            }
        *bytes = nodes * 4096 + small * 64;
        return nodes + small + 1;
    }
    default: *bytes = objectValueSize(o); return *bytes / 64 + 1;
    }
}

void lazyfreePurge(void) {
    xmallocFlushThreadCache();
    LazyJob *j = xcalloc(sizeof(*j));
    j->purge = 1;
    enqueue(j);
}

/* Big request arguments (and the values SET kept from them) come from the
 * allocator's big arena, whose freed pages stay for the next big argument;
 * once none has been allocated for BIG_QUIET_MS they go back, so memory
 * freed by overwriting a big value returns within about BIG_QUIET_MS plus
 * one cron period (deleting one purges at once, below). */
#define BIG_QUIET_MS 250

/* slabPrefaultHook: a new slab found too little resident memory ahead
 * (slab.h).  Any thread; queued like any job, so it runs after the frees
 * queued before it and wakes with them (lazyfreeKick). */
static void askSlabPrefault(void) {
    LazyJob *j = xcalloc(sizeof(*j));
    j->slabs = 1;
    enqueue(j);
}

/* prefaultLaterHook: the same, for a range (a TTL index chunk). */
static void askPopulate(void *p, size_t len) {
    LazyJob *j = xcalloc(sizeof(*j));
    j->populate = p;
    j->populateLen = len;
    enqueue(j);
}

/* The slabs' resident bytes ahead go back after this long without a new
 * slab (slabPrefaultIdle). */
#define SLAB_QUIET_MS 1000

void lazyfreeCron(long long nowMs) {
    /* The hook is set here, on the main thread's first timer tick, so a
     * process that never runs the timer (a tool, a unit test) does not
     * start the thread for it. */
    if (!slabPrefaultHook) slabPrefaultHook = askSlabPrefault;
    if (!prefaultLaterHook) prefaultLaterHook = askPopulate;
    if (!htabBigArrayFree) htabBigArrayFree = lazyfreeBlock;
    if (!htabBigArrayAlloc) htabBigArrayAlloc = lazyfreeTakeTable;
    slabPrefaultIdle(nowMs, SLAB_QUIET_MS);
    if (!xmallocBigQuiet(nowMs, BIG_QUIET_MS)) return;
    LazyJob *j = xcalloc(sizeof(*j));
    j->purgeBig = 1;
    enqueue(j);
}

/* Values of at least this many bytes leave enough freed pages to be worth
 * a purge. */
#define PURGE_BYTES (8u << 20)

static int worthPurge(const kvobj *o, size_t effort, size_t bytes) {
    if (effort <= LAZYFREE_THRESHOLD && !(kvType(o) == OBJ_STRING && kvEncoding(o) == OBJ_ENC_RAW)) return 0;
    return bytes >= PURGE_BYTES;
}

void lazyfreeFreeNow(kvobj *o) {
    if (!o) return;
    if (kvType(o) == OBJ_MODULE) { /* a synchronous free: its effort is not asked (Redis) */
        kvFree(o);
        return;
    }
    size_t bytes, effort = freeEffort(o, &bytes);
    int purge = worthPurge(o, effort, bytes);
    kvFree(o);
    if (purge) lazyfreePurge();
}

void lazyfreeEntry(kvobj *o) {
    if (!o) return;
    size_t bytes, effort = freeEffort(o, &bytes);
    if (effort <= LAZYFREE_THRESHOLD) {
        int purge = worthPurge(o, effort, bytes);
        kvFree(o);
        if (purge) lazyfreePurge();
        return;
    }
    LazyJob *j = xcalloc(sizeof(*j));
    j->entry = o;
    j->objects = 1;
    j->purge = worthPurge(o, effort, bytes);
    enqueue(j);
}

void lazyfreeBlock(void *block) {
    if (!block) return;
    LazyJob *j = xcalloc(sizeof(*j));
    j->block = block;
    enqueue(j);
}

void **lazyfreeTakeTable(size_t slots) {
    int st = atomic_load(&prepState);
    if (st == PREP_PENDING) return NULL;
    if (st == PREP_READY) {
        void **t = prepTable;
        prepTable = NULL;
        atomic_store(&prepState, PREP_IDLE);
        if (prepSlots == slots) return t;
        lazyfreeBlock(t); /* made for another size */
    }
    pthread_once(&startOnce, startThread);
    if (!started) return xcalloc(slots * sizeof(void *));
    prepSlots = slots;
    atomic_store(&prepState, PREP_PENDING);
    LazyJob *j = xcalloc(sizeof(*j));
    j->prepare = slots;
    enqueue(j);
    return NULL;
}

void lazyfreeDropTable(int now, long long olderThanMs) {
    if (atomic_load(&prepState) == PREP_IDLE) return;
    void **t = NULL;
    pthread_mutex_lock(&lock);
    int st = atomic_load(&prepState);
    if (st == PREP_READY && (olderThanMs <= 0 || monotonicMs() - prepReadyMs >= olderThanMs)) {
        t = prepTable;
        prepTable = NULL;
        atomic_store(&prepState, PREP_IDLE);
    } else if (st == PREP_PENDING && olderThanMs <= 0) {
        prepDrop = 1;
    }
    pthread_mutex_unlock(&lock);
    if (!t) return;
    if (now) xfree(t);
    else lazyfreeBlock(t);
}

void lazyfreeTable(Htab *keys, ChunkVec ttl) {
    if (!keys && !ttl.nchunks && !ttl.chunks) return;
    LazyJob *j = xcalloc(sizeof(*j));
    j->keys = keys;
    j->ttl = ttl;
    j->objects = keys ? htabSize(keys) : 0;
    j->purge = 1;
    enqueue(j);
}

void lazyfreeTables(Htab *tabs, size_t n, size_t objects, void *block, ChunkVec ttl) {
    LazyJob *j = xcalloc(sizeof(*j));
    j->tabs = tabs;
    j->ntabs = n;
    j->tabsBlock = block;
    j->ttl = ttl;
    j->objects = objects;
    j->purge = 1;
    enqueue(j);
}

size_t lazyfreePendingObjects(void) { return atomic_load(&pending); }

size_t lazyfreedObjects(void) { return atomic_load(&freed); }

void lazyfreeResetStats(void) { atomic_store(&freed, 0); }

void lazyfreeWaitIdle(void) {
    if (!started) return;
    lazyfreeKick();
    pthread_mutex_lock(&lock);
    while (head || busy) pthread_cond_wait(&idle, &lock);
    pthread_mutex_unlock(&lock);
}
