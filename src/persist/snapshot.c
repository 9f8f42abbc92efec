/* snapshot.c -- BGSAVE without a fork: the snapshot written by the main
 * thread in time slices between commands (`cairn-snapshot inline`).
 *
 * A fork's snapshot costs, under overwrites, a copy of every page a write
 * touches (docs/architecture.md, RDB snapshots: 160-240 us per page on
 * this VM, and up to a second copy of the dataset).  Here nothing is
 * copied: the file is written from the live dataset, and a change to a key
 * the walk has not reached yet first writes that key as it was.
 *
 * Point in time (the moment snapshotInlineStart ran):
 *  - the walk visits each database's key table by walk units (db.h:
 *    dbWalkUnitOf / dbWalkVisit, buckets in a fixed order while the
 *    table's rehashing is paused, which it is from the start to the end);
 *    (db, unit) below (snap.db, snap.cursor) is "visited"; the walk
 *    ends at the units the table had at the start: a table that starts
 *    growing meanwhile adds a bucket array that only keys created since
 *    go into (a key leaving the table is captured first, below), so
 *    those units count as visited;
 *  - before a write command runs (core/dispatch.h dispatchBeforeWrite, also
 *    for a blocked command when it is served) every key it names, in its
 *    database (and MOVE's / COPY's target database), is "captured": if its
 *    unit is not visited and it is not in that database's `done` set, its
 *    current value is written now (if it exists) and its name goes into
 *    `done` -- so a key created after the start is never written, and one
 *    written ahead is not written again when the walk gets there;
 *  - a key leaving the table for any other reason (expiry, eviction,
 *    lazy deletion) is captured first (db.h snapshotKeyGone);
 *  - FLUSHDB, SWAPDB, a replica's flush: every key of the database(s) not
 *    written yet is written first, and the database is then complete
 *    (snapshotDbGone); FLUSHALL cancels the save, as it kills Redis's child;
 *  - commands (MULTI/EXEC, scripts) run whole between slices, so they are
 *    atomic with respect to the snapshot.
 * Keys written ahead of the walk sit under their own SELECTDB: the file is
 * Redis's format (7.0 loads it), though not byte for byte a fork's.
 *
 * Not used (BGSAVE forks as before) with hash-slot key tables (cluster
 * mode), or when a hash holds field TTLs or a set member TTLs (their
 * background expiry changes values outside commands).
 *
 * The file is temp-<pid>.rdb until it is complete, fsynced and renamed,
 * so a save that fails or is cut short (SHUTDOWN, kill -9) leaves the old
 * dump.rdb as it was.
 *
 * The same walk also writes an AOF base in command form (a SnapshotFormat
 * instead of the RDB's records), or streams the RDB to a consumer (a
 * diskless full sync): the writer's sink hands the buffer on unless the
 * consumer is busy, in which case slices wait and bytes of keys written
 * ahead stay in the buffer (their CRC is folded when they go).
 *
 * Slices: every loop turn (a 0 us timer); their length follows the load
 * (sliceBudget).  Tables resize as usual meanwhile (persist's
 * noteForkChild only stops that for a real child): the key tables'
 * rehashing stays paused by dbWalkFreeze, and the done sets must grow. */
#include "persist/snapshot.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/command.h"
#include "core/dispatch.h"
#include "core/event.h"
#include "core/log.h"
#include "core/server.h"
#include "db/db.h"
#include "ds/alloc.h"
#include "ds/crc64.h"
#include "ds/htab.h"
#include "ds/siphash.h"
#include "ds/util.h"
#include "persist/rdb.h"
#include "persist/rdb_int.h"
#include "types/hash.h"

int snapshotMethod = SNAPSHOT_FORK;

#define SLICE_MIN_US 100
#define SLICE_BUSY_MAX_US 1000
#define SLICE_BUSY_SHARE 3
#define SLICE_IDLE_US 2000
#define SLICE_UNITS 64 /* units between clock reads */
#define STREAM_FLUSH_BYTES (64 * 1024) /* a stream's bytes go out in pieces of about this */
#define STREAM_BUSY_RETRY_US 1000      /* a busy consumer is asked again after this */
#define SNAPSHOT_FSYNC_BYTES (4 * 1024 * 1024) /* rdb-save-incremental-fsync's step, as rdb.c's */

/* A key of `done`: written ahead of the walk, or created after the start. */
typedef struct Done {
    void *next;
    size_t len;
    char key[];
} Done;

static const uint8_t doneSeed[16] = {7, 1, 4, 2, 8, 5, 7, 1, 4, 2, 8, 5, 7, 1, 4, 2};
static uint64_t doneHash(const void *k, size_t len) { return siphash(k, len, doneSeed); }
static void doneKey(const void *e, const void **k, size_t *len) {
    const Done *d = e;
    *k = d->key;
    *len = d->len;
}
static const HtabType doneType = {.hashKey = doneHash, .entryKey = doneKey};

static struct {
    int active;
    RdbWriter w;
    int fd;
    char tmp[64];
    int db;           /* database being walked (databases: all walked) */
    size_t cursor;    /* its next walk unit */
    int selected;     /* database of the last SELECTDB written, -1 none */
    int lru, lfu;
    Htab *done;       /* per database */
    unsigned char *complete; /* per database: nothing left to write */
    unsigned char *frozen;   /* per database: its rehashing paused by us */
    size_t *sizes, *expires; /* per database, at the start */
    size_t *units;           /* per database: its walk units at the start, the walk's end */
    unsigned long gen; /* the save's number: a slice timer of an older one stops */
    long long lastSliceEndUs;
    long long lastCommands; /* server.stats.numCommands at the last slice */
    SnapshotDoneFn *finished;
    char *target;            /* renamed to this when complete; NULL: left as tmp */
    int cancelOnFlushall;    /* a BGSAVE (Redis kills its child); not an AOF base */
    int streaming;           /* to out, not to fd */
    SnapshotStream out;
    int draining;            /* the tail: out takes everything, busy or not */
    size_t sent;             /* a stream's buffer bytes out already */
    int openFailed;          /* the file could not be opened (logged): the first slice fails the save */
    const SnapshotFormat *fmt; /* NULL: the RDB */
    size_t doneBytes;        /* the done sets' entries */
    size_t peak;             /* the most extra() was */
    long long total;         /* keys at the start */
} snap = {.fd = -1};

static size_t lastPeak; /* the peak of the last save that completed */

/* What the save holds beyond the dataset: the done sets and its buffer. */
static size_t extra(void) {
    size_t n = snap.doneBytes + (snap.w.buf ? sdsAllocSize(snap.w.buf) : 0);
    for (int j = 0; j < server.cfg.databases; j++) n += htabBuckets(&snap.done[j]) * sizeof(void *);
    return n;
}

static void notePeak(void) {
    size_t n = extra();
    if (n > snap.peak) snap.peak = n;
}

int snapshotInlineActive(void) { return snap.active; }

static void freeDone(void *e, void *priv) {
    (void)priv;
    xfree(e);
}

static void selectDb(int j) {
    if (snap.selected == j) return;
    if (snap.fmt) snap.fmt->dbHead(&snap.w.buf, j);
    else rdbSnapshotDbHead(&snap.w, j, 0, 0);
    snap.selected = j;
}

/* A unit at or past units[j] is of a bucket array the table started
 * growing into after the start (rehashing paused, no entry moves there):
 * it holds only keys created since, never written. */
static int visited(int j, size_t unit) {
    return j < snap.db || snap.complete[j] || unit >= snap.units[j] || (j == snap.db && unit < snap.cursor);
}

static void writeKey(int j, const kvobj *o) {
    selectDb(j);
    if (!snap.fmt) rdbKeyBytes(&snap.w, o, snap.lru, snap.lfu);
    else if (snap.fmt->key(&snap.w.buf, o, j) < 0 && !snap.w.failed) snap.w.failed = 1, snap.w.err = EINVAL;
    snap.w.keysDone++; /* rdb-key-save-delay: the slices pace the walk instead (sliceTimer) */
    rdbWriterMaybeFlush(&snap.w); /* a failure is sticky: the next slice ends the save */
}

/* Writes key of db as it is now unless written, walked past or created
 * since the start; from now on it counts as written. */
static void captureKey(Db *db, const char *key, size_t len) {
    int j = db->id;
    if (j < 0 || j >= server.cfg.databases) return;
    if (visited(j, dbWalkUnitOf(db, key, len))) return;
    Htab *done = &snap.done[j];
    if (htabFind(done, key, len)) return;
    kvobj *o = dbFind(db, key, len);
    if (o) writeKey(j, o);
    Done *d = xmalloc(sizeof(*d) + len);
    snap.doneBytes += sizeof(*d) + len;
    d->len = len;
    memcpy(d->key, key, len);
    htabAdd(done, d);
}

typedef struct Visit {
    int j;
} Visit;

static void visitKey(void *priv, void *entry) {
    const Visit *v = priv;
    const kvobj *o = entry;
    Htab *done = &snap.done[v->j];
    if (htabSize(done) && htabFind(done, kvKey(o), kvKeyLen(o))) return;
    writeKey(v->j, o);
}

static void thaw(int j) {
    if (!snap.frozen[j]) return;
    dbWalkThaw(&server.db[j]);
    snap.frozen[j] = 0;
}

/* Starts database snap.db's walk (its SELECTDB / RESIZEDB), skipping
 * complete or empty ones. */
static void nextDb(void) {
    while (snap.db < server.cfg.databases && (snap.complete[snap.db] || snap.sizes[snap.db] == 0)) {
        thaw(snap.db);
        snap.db++;
    }
    if (snap.db >= server.cfg.databases) return;
    if (snap.fmt) snap.fmt->dbHead(&snap.w.buf, snap.db);
    else rdbSnapshotDbHead(&snap.w, snap.db, snap.sizes[snap.db], snap.expires[snap.db]);
    snap.selected = snap.db;
    snap.cursor = 0;
}

/* Writes the rest of database j (FLUSHDB, SWAPDB): then it is complete. */
static void captureDb(Db *db) {
    int j = db->id;
    if (!snap.active || j < 0 || j >= server.cfg.databases || snap.complete[j] || j < snap.db) return;
    size_t from = j == snap.db ? snap.cursor : 0, units = snap.units[j];
    Visit v = {j};
    if (from < units) dbWalkVisit(db, from, units, visitKey, &v);
    snap.complete[j] = 1;
    thaw(j);
    if (j == snap.db) {
        snap.db++;
        nextDb();
    }
}

static void keyGone(Db *db, const char *key, size_t len) {
    if (snap.active) captureKey(db, key, len);
}

static void dbGone(Db *db) { captureDb(db); }

static int dbArg(const sds a) {
    char *end;
    errno = 0;
    long v = strtol(a, &end, 10);
    if (errno || end == a || *end || v < 0 || v >= server.cfg.databases) return -1;
    return (int)v;
}

static void cleanup(void) {
    for (int j = 0; j < server.cfg.databases; j++) {
        thaw(j);
        htabClear(&snap.done[j], freeDone, NULL);
    }
    xfree(snap.done);
    xfree(snap.complete);
    xfree(snap.frozen);
    xfree(snap.sizes);
    xfree(snap.expires);
    xfree(snap.units);
    sdsFree(snap.w.buf);
    snap.w.buf = NULL;
    if (snap.fd >= 0) close(snap.fd);
    snap.fd = -1;
    xfree(snap.target);
    snap.target = NULL;
    snap.active = 0;
    dbSnapshotActive = 0;
    dispatchBeforeWrite = NULL;
    snap.gen++; /* a pending slice timer sees it and goes */
}

void snapshotInlineAbort(void) {
    if (!snap.active) return;
    cleanup();
    if (snap.tmp[0]) unlink(snap.tmp);
    SnapshotDoneFn *fn = snap.finished;
    if (fn) fn(-1, 0);
}

static void beforeWrite(Client *c, Command *cmd) {
    if (!snap.active || !(cmd->flags & CMD_WRITE)) return;
    const char *name = cmd->name;
    if (!strcmp(name, "flushall") && snap.cancelOnFlushall) {
        serverLog(LL_NOTICE, "FLUSHALL: the background save (inline) is cancelled");
        snapshotInlineAbort();
        return;
    }
    KeyResult kr;
    keyResultInit(&kr);
    int n = commandKeys(cmd, c->argc, c->argv, &kr);
    for (int i = 0; i < n; i++) {
        const sds k = c->argv[kr.keys[i].pos];
        captureKey(c->db, k, sdsLen(k));
    }
    keyResultFree(&kr);
    /* Keys of another database than the client's. */
    int target = -1;
    if (!strcmp(name, "move") && c->argc == 3) target = dbArg(c->argv[2]);
    if (!strcmp(name, "copy")) {
        for (int i = 3; i + 1 < c->argc; i++)
            if (argIs(c->argv[i], "db")) target = dbArg(c->argv[i + 1]);
    }
    if (target >= 0 && c->argc > 2) {
        const sds k = c->argv[!strcmp(name, "move") ? 1 : 2];
        captureKey(&server.db[target], k, sdsLen(k));
    }
}

static void writeErrorLog(int e) {
    if (snap.fmt) serverLog(LL_WARNING, "Write error writing append only file on disk: %s", strerror(e));
    else serverLog(LL_WARNING, "Write error saving DB on disk: %s", strerror(e));
}

/* The end: EOF, CRC, fsync, rename.  0, or -1 (logged). */
static int finish(void) {
    if (snap.streaming) {
        snap.draining = 1;
        return rdbSnapshotTail(&snap.w);
    }
    int rc = snap.fmt ? rdbWriterFlush(&snap.w) : rdbSnapshotTail(&snap.w), e = snap.w.err;
    if (rc == 0 && fsync(snap.fd) < 0) rc = -1, e = errno;
    if (close(snap.fd) < 0 && rc == 0) rc = -1, e = errno;
    snap.fd = -1;
    if (rc < 0) {
        writeErrorLog(e);
        return -1;
    }
    if (!snap.target) return 0;
    if (rename(snap.tmp, snap.target) < 0) {
        e = errno;
        char cwd[1024];
        serverLog(LL_WARNING, "Error moving temp DB file %s on the final destination %s (in server root dir %s): %s",
                  snap.tmp, snap.target, getcwd(cwd, sizeof(cwd)) ? cwd : "unknown", strerror(e));
        return -1;
    }
    rdbFsyncDirOf(snap.target);
    return 0;
}

static void end(int ok) {
    SnapshotDoneFn *fn = snap.finished;
    if (ok) lastPeak = snap.peak;
    char tmp[sizeof(snap.tmp)];
    memcpy(tmp, snap.tmp, sizeof(tmp));
    cleanup();
    if (!ok && tmp[0]) unlink(tmp);
    if (fn) fn(ok ? 1 : 0, 0);
}

/* The slice's budget.  Busy (commands ran since the last slice): a
 * third of the time the loop spent elsewhere, so clients keep about three
 * quarters of the main thread, between SLICE_MIN_US and SLICE_BUSY_MAX_US
 * (a client that arrives waits at most that).  Idle (no command since):
 * SLICE_IDLE_US, the loop then polls again at once. */
static long long sliceBudget(long long start) {
    long long commands = server.stats.numCommands;
    int busy = commands != snap.lastCommands;
    snap.lastCommands = commands;
    if (!busy) return SLICE_IDLE_US;
    long long budget = (start - snap.lastSliceEndUs) / SLICE_BUSY_SHARE;
    if (budget < SLICE_MIN_US) budget = SLICE_MIN_US;
    if (budget > SLICE_BUSY_MAX_US) budget = SLICE_BUSY_MAX_US;
    return budget;
}

/* One slice: walk units for sliceBudget's time. */
static long long sliceTimer(EventLoop *loop, long long id, void *data) {
    (void)loop, (void)id;
    if (!snap.active || (unsigned long)(uintptr_t)data != snap.gen) return -1;
    if (snap.streaming && snap.out.busy()) return STREAM_BUSY_RETRY_US;
    long long start = ustime(), budget = sliceBudget(start);
    /* A save slowed by rdb-key-save-delay (tests) pauses that long after
     * each walk unit that wrote a key, between slices rather than asleep,
     * so the server keeps answering as it does beside a slowed child. */
    long long delay = server.cfg.rdbKeySaveDelay > 0 ? server.cfg.rdbKeySaveDelay : 0;
    int paused = 0;
    while (snap.db < server.cfg.databases && !snap.w.failed) {
        Db *db = &server.db[snap.db];
        size_t units = snap.units[snap.db];
        if (snap.cursor >= units) {
            snap.complete[snap.db] = 1;
            thaw(snap.db);
            snap.db++;
            nextDb();
            continue;
        }
        size_t step = delay ? 1 : SLICE_UNITS;
        size_t to = snap.cursor + step < units ? snap.cursor + step : units;
        Visit v = {snap.db};
        long long keys = snap.w.keysDone;
        dbWalkVisit(db, snap.cursor, to, visitKey, &v);
        snap.cursor = to;
        if (delay && snap.w.keysDone > keys) {
            paused = 1;
            break;
        }
        if (ustime() - start >= budget) break;
        if (snap.streaming && snap.out.busy()) break; /* what is written waits in the buffer */
    }
    notePeak();
    if (snap.streaming || paused) rdbWriterFlush(&snap.w); /* the slice's bytes go out now, as far as taken */
    if (snap.w.failed) {
        if (!snap.openFailed) writeErrorLog(snap.w.err);
        end(0);
        return -1;
    }
    snap.lastSliceEndUs = ustime();
    if (paused) return delay; /* the last key's pause too, before the end */
    if (snap.db >= server.cfg.databases) {
        /* A stream's tail goes once the consumer took the rest. */
        if (snap.streaming && (snap.out.busy() || sdsLen(snap.w.buf) > 0)) return STREAM_BUSY_RETRY_US;
        end(finish() == 0);
        return -1;
    }
    return 0;
}

int snapshotInlineUsable(void) {
    return !dbSlotsOn() && !hashAnyFieldTtl() && dbMemberTtlKeys == 0 && !rdbSaveSingleThreaded;
}

int snapshotInlineStart(SnapshotDoneFn *done) {
    char tmp[64];
    snprintf(tmp, sizeof(tmp), "temp-%d.rdb", (int)getpid());
    return snapshotInlineStartFile(tmp, server.cfg.dbfilename, 0, done);
}

/* A stream's writer sink: the buffer to the consumer, a piece at a time,
 * while it is not busy (or the tail is being written); what it does not
 * take stays, from snap.sent on, and its CRC is folded as it goes. */
static int streamSink(RdbWriter *w) {
    size_t n = sdsLen(w->buf);
    while (snap.sent < n) {
        if (!snap.draining && snap.out.busy()) return 0;
        size_t k = n - snap.sent < STREAM_FLUSH_BYTES ? n - snap.sent : STREAM_FLUSH_BYTES;
        if (w->checksum) w->crc = crc64(w->crc, w->buf + snap.sent, k);
        snap.out.put(w->buf + snap.sent, k);
        snap.sent += k;
    }
    sdsClear(w->buf);
    snap.sent = 0;
    return 0;
}

/* Starts the save into w (its fd or sink set by the caller). */
static void begin(int aofBase, SnapshotDoneFn *done) {
    int n = server.cfg.databases;
    snap.done = xcalloc((size_t)n * sizeof(Htab));
    for (int j = 0; j < n; j++) htabInit(&snap.done[j], &doneType);
    snap.complete = xcalloc((size_t)n);
    snap.frozen = xcalloc((size_t)n);
    snap.sizes = xcalloc((size_t)n * sizeof(size_t));
    snap.expires = xcalloc((size_t)n * sizeof(size_t));
    snap.units = xcalloc((size_t)n * sizeof(size_t));
    for (int j = 0; j < n; j++) {
        snap.sizes[j] = dbSize(&server.db[j]);
        snap.expires[j] = dbExpiresCount(&server.db[j]);
        dbWalkFreeze(&server.db[j]);
        snap.frozen[j] = 1;
        snap.units[j] = dbWalkUnits(&server.db[j]);
    }
    snap.doneBytes = snap.peak = 0;
    snap.total = 0;
    for (int j = 0; j < n; j++) snap.total += (long long)snap.sizes[j];
    rdbSaveMetaPolicy(&snap.lru, &snap.lfu);
    if (snap.fmt) snap.fmt->head(&snap.w.buf);
    else rdbSnapshotHead(&snap.w, aofBase);
    snap.selected = -1;
    snap.db = 0;
    snap.cursor = 0;
    snap.finished = done;
    snap.active = 1;
    nextDb();
    dbHooks.snapshotKeyGone = keyGone;
    dbHooks.snapshotDbGone = dbGone;
    dbSnapshotActive = 1;
    dispatchBeforeWrite = beforeWrite;
    snap.lastSliceEndUs = ustime();
    snap.lastCommands = server.stats.numCommands;
    eventAddTimerUs(server.loop, 0, sliceTimer, (void *)(uintptr_t)snap.gen);
}

static int startFile(const char *tmp, const char *target, int aofBase, const SnapshotFormat *fmt,
                     SnapshotDoneFn *done) {
    if (snap.active || strlen(tmp) >= sizeof(snap.tmp)) return -1;
    memcpy(snap.tmp, tmp, strlen(tmp) + 1);
    /* A file that cannot be opened fails the save, not its start: as a
     * child's save, BGSAVE answers "started" and the save then fails
     * (rdb_last_bgsave_status:err, "Background saving error"). */
    int fd = open(snap.tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644), e = errno;
    if (fd < 0) {
        char cwd[1024];
        if (aofBase) /* an AOF base, either form: the rewrite's line */
            serverLog(LL_WARNING, "Opening the temp file for AOF rewrite in rewriteAppendOnlyFile(): %s", strerror(e));
        else
            serverLog(LL_WARNING, "Failed opening the temp RDB file %s (in server root dir %s) for saving: %s",
                      snap.tmp, getcwd(cwd, sizeof(cwd)) ? cwd : "unknown", strerror(e));
        snap.tmp[0] = '\0'; /* nothing to remove */
    }
    snap.fd = fd;
    snap.openFailed = fd < 0;
    snap.w = (RdbWriter){.buf = sdsEmpty(), .fd = fd, .compress = server.cfg.rdbcompression,
                         .checksum = fmt ? 0 : server.cfg.rdbchecksum,
                         .failed = fd < 0, .err = fd < 0 ? e : 0,
                         .syncEvery = (aofBase ? server.cfg.aofRewriteIncrementalFsync
                                               : server.cfg.rdbSaveIncrementalFsync)
                                          ? SNAPSHOT_FSYNC_BYTES
                                          : 0};
    snap.target = target ? xstrdup(target) : NULL;
    snap.cancelOnFlushall = !aofBase;
    snap.streaming = snap.draining = 0;
    snap.fmt = fmt;
    begin(aofBase, done);
    return 0;
}

int snapshotInlineStartFile(const char *tmp, const char *target, int aofBase, SnapshotDoneFn *done) {
    return startFile(tmp, target, aofBase, NULL, done);
}

int snapshotInlineStartCommands(const char *tmp, const SnapshotFormat *fmt, SnapshotDoneFn *done) {
    return startFile(tmp, NULL, 1, fmt, done);
}

int snapshotInlineStartStream(const SnapshotStream *out, SnapshotDoneFn *done) {
    if (snap.active) return -1;
    snap.tmp[0] = '\0'; /* no file */
    snap.fd = -1;
    snap.w = (RdbWriter){.buf = sdsEmpty(), .fd = -1, .compress = server.cfg.rdbcompression,
                         .checksum = server.cfg.rdbchecksum, .flushAt = STREAM_FLUSH_BYTES, .sink = streamSink};
    snap.target = NULL;
    snap.cancelOnFlushall = 1;
    snap.streaming = 1;
    snap.draining = 0;
    snap.sent = 0;
    snap.openFailed = 0;
    snap.fmt = NULL;
    snap.out = *out;
    begin(0, done);
    return 0;
}

void snapshotInlineStats(long long *keys, long long *total, size_t *now, size_t *peak) {
    if (!snap.active) {
        *keys = *total = 0;
        *now = *peak = 0;
        return;
    }
    notePeak();
    *keys = snap.w.keysDone;
    *total = snap.total;
    *now = extra();
    *peak = snap.peak;
}

size_t snapshotInlineLastPeak(void) { return lastPeak; }
