/* aof.c -- the append-only file (aof.h): manifest, writing the effects
 * stream, fsync policies, loading, rewriting, turning it on and off.
 *
 * Writing.  The effects sink appends every unit, in RESP, to `buf`; before
 * the loop sleeps (before any reply of this turn is written) buf goes to
 * the incr file in one write -- group commit.  appendfsync always then
 * fsyncs in the same place, so no reply leaves before its write is on
 * disk; a failed write or fsync under always exits the process rather
 * than acknowledge.  everysec hands the fsync to a background thread once
 * a second; while one is still running, writes are postponed (buf grows)
 * for up to 2 seconds, then written anyway (aof_delayed_fsync).  A failed
 * write under everysec/no is cut back to the last good size (ftruncate),
 * kept in buf and retried; meanwhile writes are refused with MISCONF.
 *
 * Rewriting.  BGREWRITEAOF first opens a fresh incr file (named in a new
 * manifest before anything is written to it), then forks: the child writes
 * a base (RDB with aof-base=1, or commands) to temp-rewriteaof-bg-<pid>.aof
 * in `dir`.  The parent keeps appending to the fresh incr file, so a failed
 * rewrite loses nothing.  On success the temp file is renamed into the
 * directory as the next base, the old base and every incr file but the
 * current one become history in a new manifest, and history files are
 * removed.  Turning the AOF on at run time (AOF_WAIT_REWRITE) appends to
 * temp-<appendfilename>.incr until the first rewrite ends, which renames it
 * to the next incr file.
 *
 * Loading.  A file starting with "REDIS" is an RDB (the preamble), which
 * may be followed by commands; commands run on a fake client, a MULTI's
 * queue only once its EXEC is read. */
#include "persist/aof.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/command.h"
#include "core/dispatch.h"
#include "core/effects.h"
#include "core/log.h"
#include "core/server.h"
#include "db/db.h"
#include "ds/alloc.h"
#include "ds/util.h"
#include "persist/aof_int.h"
#include "persist/persist.h"
#include "persist/rdb.h"
#include "persist/snapshot.h"
#include "script/function.h"

enum { AOF_OFF = 0, AOF_ON, AOF_WAIT_REWRITE };

#define POSTPONE_MAX_SEC 2        /* everysec: longest a write waits for a running fsync */
#define REWRITE_RETRY_BASE_SEC 60 /* after 3 failed automatic rewrites: 1 min, doubling */
#define REWRITE_RETRY_MAX_SEC 3600

static struct {
    int state;                  /* AOF_* */
    int fd;                     /* the file appended to, -1 */
    sds buf;                    /* effects not written yet (aof_buf) */
    int selectedDb;             /* of the file appended to; -1 forces a SELECT */
    long long curTimestamp;     /* last #TS annotation written */
    AofManifest *manifest;
    long long currentSize;      /* aof_current_size */
    long long baseSize;         /* aof_base_size: the size after the last rewrite/load */
    long long lastIncrSize;     /* of the incr file appended to */
    long long fsyncOffset;      /* currentSize when the last fsync was asked */
    /* For WAITAOF (Redis 7.2): bytes the sink ever appended (never reset),
     * those of them known to be fsynced, and those the background fsync
     * under way (everysec) covers once it ends. */
    long long fedBytes, syncedBytes, bioSyncBytes;
    long long lastFsyncSec;
    long long postponedStart;   /* unix s when a write was first postponed, 0 */
    long long delayedFsync;     /* aof_delayed_fsync */
    int lastWriteOk;
    int lastWriteErrno;
    int fsyncErrLogged;         /* a failed background fsync was logged */
    int restartPending;         /* aofRestartAfterSync failed: retried by the timer */
    /* The rewrite child. */
    pid_t childPid;
    int inlineRewrite; /* the base is written in process (snapshot.h); childPid is ours */
    long long childStartSec;
    int scheduled;              /* aof_rewrite_scheduled */
    long long lastRewriteTimeSec;
    int lastRewriteOk;
    long long rewrites;
    long long consecutiveFailures;
    long long nextAutoRewriteSec; /* retry limit after repeated failures */
    int retryDelaySec;
} aof = {.state = AOF_OFF, .fd = -1, .selectedDb = -1, .lastWriteOk = 1, .childPid = -1,
         .lastRewriteTimeSec = -1, .lastRewriteOk = 1};

static void latencySample(const char *event, long long us) {
    if (dbHooks.latency) dbHooks.latency(event, us / 1000);
}

/* ------------------------------------------------------------------------ */
/* The background thread: fsync and close jobs, in order                   */
/* ------------------------------------------------------------------------ */

typedef struct BioJob {
    int fd;
    int close; /* close after the fsync */
    struct BioJob *next;
} BioJob;

static pthread_mutex_t bioLock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t bioCond = PTHREAD_COND_INITIALIZER;
static BioJob *bioHead, *bioTail;
static int bioStarted;
static atomic_int bioPendingFsync; /* aof_pending_bio_fsync */
static atomic_int bioFsyncErr;     /* errno of the last failed fsync, 0 after a good one */

static void *bioMain(void *arg) {
    (void)arg;
    for (;;) {
        pthread_mutex_lock(&bioLock);
        while (!bioHead) pthread_cond_wait(&bioCond, &bioLock);
        BioJob *j = bioHead;
        bioHead = j->next;
        if (!bioHead) bioTail = NULL;
        pthread_mutex_unlock(&bioLock);
        if (!j->close) {
            if (fdatasync(j->fd) == -1 && errno != EBADF && errno != EINVAL) {
                atomic_store(&bioFsyncErr, errno);
            } else {
                atomic_store(&bioFsyncErr, 0);
            }
            atomic_fetch_sub(&bioPendingFsync, 1);
        } else {
            fsync(j->fd);
            close(j->fd);
        }
        free(j);
    }
    return NULL;
}

static void bioSubmit(int fd, int closeIt) {
    if (!bioStarted) {
        if (startDetachedThread(bioMain, NULL) != 0) {
            /* No thread: do it here. */
            if (closeIt) close(fd);
            else fdatasync(fd);
            return;
        }
        bioStarted = 1;
    }
    BioJob *j = malloc(sizeof(*j));
    if (!j) abort();
    j->fd = fd;
    j->close = closeIt;
    j->next = NULL;
    if (!closeIt) atomic_fetch_add(&bioPendingFsync, 1);
    pthread_mutex_lock(&bioLock);
    if (bioTail) bioTail->next = j;
    else bioHead = j;
    bioTail = j;
    pthread_cond_signal(&bioCond);
    pthread_mutex_unlock(&bioLock);
}

/* ------------------------------------------------------------------------ */
/* Paths                                                                    */
/* ------------------------------------------------------------------------ */

/* dir-relative path of a file in the AOF directory (caller frees). */
static sds aofPath(const char *name) { return sdsCatPrintf(sdsEmpty(), "%s/%s", server.cfg.appenddirname, name); }

static sds manifestName(void) { return sdsCatPrintf(sdsEmpty(), "%s%s", server.cfg.appendfilename, ".manifest"); }

static sds tempIncrName(void) { return sdsCatPrintf(sdsEmpty(), "temp-%s.incr", server.cfg.appendfilename); }

static int fileExists(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

static long long fileSize(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 ? (long long)st.st_size : 0;
}

static int fsyncDir(const char *dir) {
    int fd = open(dir, O_RDONLY);
    if (fd < 0) return -1;
    int rc = fsync(fd);
    close(fd);
    return rc;
}

static int dirCreateIfMissing(const char *dir) {
    if (mkdir(dir, 0755) == 0 || errno == EEXIST) return 0;
    return -1;
}

/* ------------------------------------------------------------------------ */
/* The manifest                                                             */
/* ------------------------------------------------------------------------ */

/* Writes m as the manifest: temp file, fsync, rename, directory fsync.
 * Returns 0 or -1 (logged). */
static int manifestPersist(const AofManifest *m) {
    if (dirCreateIfMissing(server.cfg.appenddirname) < 0) {
        serverLog(LL_WARNING, "Can't open or create append-only dir %s: %s", server.cfg.appenddirname,
                  strerror(errno));
        return -1;
    }
    sds name = manifestName();
    sds path = aofPath(name);
    sds tmpName = sdsCatPrintf(sdsEmpty(), "temp-%s", name);
    sds tmp = aofPath(tmpName);
    sds text = aofManifestFormat(m);
    int rc = -1;
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) {
        serverLog(LL_WARNING, "Can't open the AOF manifest file %s: %s", tmpName, strerror(errno));
        goto cleanup;
    }
    size_t off = 0, len = sdsLen(text);
    while (off < len) {
        ssize_t w = write(fd, text + off, len - off);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) {
            serverLog(LL_WARNING, "Can't write the AOF manifest file %s: %s", tmpName,
                      w < 0 ? strerror(errno) : "short write");
            close(fd);
            unlink(tmp);
            goto cleanup;
        }
        off += (size_t)w;
    }
    if (fsync(fd) == -1) {
        serverLog(LL_WARNING, "Fail to fsync the temp AOF file %s: %s.", tmpName, strerror(errno));
        close(fd);
        unlink(tmp);
        goto cleanup;
    }
    close(fd);
    if (rename(tmp, path) < 0) {
        serverLog(LL_WARNING, "Error trying to rename the temporary AOF manifest file %s into %s: %s", tmpName, name,
                  strerror(errno));
        unlink(tmp);
        goto cleanup;
    }
    fsyncDir(server.cfg.appenddirname);
    rc = 0;
cleanup:
    sdsFree(name);
    sdsFree(path);
    sdsFree(tmpName);
    sdsFree(tmp);
    sdsFree(text);
    return rc;
}

/* Reads the manifest from the AOF directory.  Returns the manifest (caller
 * frees), NULL when there is none; a broken one is logged as Redis logs it
 * and exits the process (or, when !exitOnError, is taken as none). */
static AofManifest *manifestLoad(int exitOnError) {
    sds name = manifestName();
    sds path = aofPath(name);
    AofManifest *m = NULL;
    if (!fileExists(path)) goto cleanup;
    AofManifestError err;
    m = aofManifestLoadFile(path, &err);
    if (!m) {
        aofManifestLogError(path, &err);
        if (exitOnError) exit(1);
    }
cleanup:
    sdsFree(name);
    sdsFree(path);
    return m;
}

/* Removes the history files (unless aof-disable-auto-gc) and writes the
 * manifest without them. */
static void deleteHistoryFiles(void) {
    AofManifest *m = aof.manifest;
    if (!m || m->historyCount == 0 || server.cfg.aofDisableAutoGc) return;
    for (int i = 0; i < m->historyCount; i++) {
        serverLog(LL_NOTICE, "Removing the history file %s in the background", m->history[i].name);
        sds p = aofPath(m->history[i].name);
        unlink(p);
        sdsFree(p);
    }
    aofManifestClearHistory(m);
    manifestPersist(m);
}

/* ------------------------------------------------------------------------ */
/* Writing                                                                  */
/* ------------------------------------------------------------------------ */

static int childActive(void) { return persistChildActive(); }

/* The effects sink: one unit, appended to buf. */
static void aofSink(const Effect *ops, int count, void *ctx) {
    (void)ctx;
    if (aof.state == AOF_OFF || (aof.state == AOF_WAIT_REWRITE && aof.childPid < 0)) return;
    if (server.cfg.aofTimestampEnabled) {
        long long now = (long long)time(NULL);
        if (now > aof.curTimestamp) {
            aof.buf = sdsCatPrintf(aof.buf, "#TS:%lld\r\n", now);
            aof.curTimestamp = now;
        }
    }
    size_t before = sdsLen(aof.buf);
    aof.buf = effectsAppendResp(aof.buf, &aof.selectedDb, ops, count, EFFECT_AOF);
    aof.fedBytes += (long long)(sdsLen(aof.buf) - before);
}

/* write(2) until everything is written or an error.  Returns the bytes
 * written (errno set when fewer than len). */
static ssize_t writeAll(int fd, const char *p, size_t len) {
    size_t off = 0;
    while (off < len) {
        ssize_t w = write(fd, p + off, len - off);
        if (w < 0) {
            if (errno == EINTR) continue;
            return off ? (ssize_t)off : -1;
        }
        if (w == 0) {
            errno = ENOSPC;
            return (ssize_t)off;
        }
        off += (size_t)w;
    }
    return (ssize_t)off;
}

/* Writes buf to the file and fsyncs per appendfsync (see the file header).
 * force: write even if an everysec fsync is still running. */
int aofFlushSleepUs;

static void flushAof(int force) {
    if (aof.fd < 0) return;
    long long now = (long long)time(NULL);
    int everysec = server.cfg.appendfsync == APPENDFSYNC_EVERYSEC;
    int syncInProgress = 0;
    if (sdsLen(aof.buf) == 0) {
        /* Nothing new; but an everysec fsync may still be owed, or the last
         * one failed (writes are refused until one succeeds). */
        if (everysec && (aof.fsyncOffset != aof.currentSize || atomic_load(&bioFsyncErr)) &&
            now > aof.lastFsyncSec && atomic_load(&bioPendingFsync) == 0)
            goto tryFsync;
        return;
    }
    if (everysec) syncInProgress = atomic_load(&bioPendingFsync) != 0;
    if (everysec && !force && syncInProgress) {
        if (aof.postponedStart == 0) {
            aof.postponedStart = now;
            return;
        } else if (now - aof.postponedStart < POSTPONE_MAX_SEC) {
            return;
        }
        aof.delayedFsync++;
        serverLog(LL_NOTICE, "Asynchronous AOF fsync is taking too long (disk is busy?). Writing the AOF buffer "
                             "without waiting for fsync to complete, this may slow down Cairn.");
    }
    if (aofFlushSleepUs) usleep((useconds_t)aofFlushSleepUs); /* DEBUG AOF-FLUSH-SLEEP */
    long long start = ustime();
    ssize_t n = writeAll(aof.fd, aof.buf, sdsLen(aof.buf));
    int werr = errno;
    long long took = ustime() - start;
    latencySample("aof-write", took);
    latencySample(syncInProgress ? "aof-write-pending-fsync"
                  : childActive() ? "aof-write-active-child"
                                  : "aof-write-alone",
                  took);
    aof.postponedStart = 0;
    if (n != (ssize_t)sdsLen(aof.buf)) {
        if (n == -1) {
            serverLog(LL_WARNING, "Error writing to the AOF file: %s", strerror(werr));
        } else {
            serverLog(LL_WARNING, "Short write while writing to the AOF file: (nwritten=%lld, expected=%lld)",
                      (long long)n, (long long)sdsLen(aof.buf));
        }
        aof.lastWriteErrno = werr ? werr : ENOSPC;
        if (n > 0) {
            /* Cut the partial command away, so the file stays loadable. */
            if (ftruncate(aof.fd, (off_t)aof.lastIncrSize) == -1) {
                serverLog(LL_WARNING, "Could not remove short write from the append-only file.  Cairn may refuse "
                                      "to load the AOF the next time it starts.  ftruncate: %s",
                          strerror(errno));
                aof.currentSize += n;
                aof.lastIncrSize += n;
                sdsRange(aof.buf, n, -1);
            }
        }
        if (server.cfg.appendfsync == APPENDFSYNC_ALWAYS) {
            serverLog(LL_WARNING, "Can't recover from AOF write error when the AOF fsync policy is 'always'. "
                                  "Exiting...");
            exit(1);
        }
        aof.lastWriteOk = 0;
        return; /* retried at the next turn or tick */
    }
    if (!aof.lastWriteOk) {
        serverLog(LL_WARNING, "AOF write error looks solved, Cairn can write again.");
        aof.lastWriteOk = 1;
    }
    aof.currentSize += n;
    aof.lastIncrSize += n;
    if (sdsAllocSize(aof.buf) < 4000) sdsClear(aof.buf);
    else {
        sdsFree(aof.buf);
        aof.buf = sdsEmpty();
    }
tryFsync:
    if (server.cfg.noAppendfsyncOnRewrite && childActive()) return;
    if (server.cfg.appendfsync == APPENDFSYNC_ALWAYS) {
        start = ustime();
        if (fdatasync(aof.fd) == -1) {
            serverLog(LL_WARNING, "Can't persist the AOF for fsync error when the AOF fsync policy is 'always': %s. "
                                  "Exiting...",
                      strerror(errno));
            exit(1);
        }
        latencySample("aof-fsync-always", ustime() - start);
        aof.fsyncOffset = aof.currentSize;
        aof.lastFsyncSec = now;
        aof.syncedBytes = aof.fedBytes - (long long)sdsLen(aof.buf);
    } else if (everysec && now > aof.lastFsyncSec) {
        if (atomic_load(&bioPendingFsync) == 0) {
            aofSyncedBytes(); /* takes what the previous fsync covered */
            bioSubmit(aof.fd, 0);
            aof.fsyncOffset = aof.currentSize;
            aof.bioSyncBytes = aof.fedBytes - (long long)sdsLen(aof.buf);
        }
        aof.lastFsyncSec = now;
    }
}

/* Before the loop sleeps, and before a reply is written from a writable
 * event: everything this turn produced goes to the file first. */
static void aofBeforeSleep(void) {
    if (aof.fd >= 0 && (sdsLen(aof.buf) || server.cfg.appendfsync == APPENDFSYNC_EVERYSEC)) flushAof(0);
}

void aofFlushPending(void) { aofBeforeSleep(); }

static void aofBeforeReplyWrite(void) {
    if (aof.fd >= 0 && sdsLen(aof.buf) && server.cfg.appendfsync == APPENDFSYNC_ALWAYS) flushAof(0);
}

/* Writes and fsyncs everything buffered, waiting for nothing (shutdown,
 * stop, rewrite start). */
static void flushAndSync(void) {
    if (aof.fd < 0) return;
    flushAof(1);
    if (fsync(aof.fd) == 0 && sdsLen(aof.buf) == 0) aof.syncedBytes = aof.fedBytes;
    aof.fsyncOffset = aof.currentSize;
}

long long aofFedBytes(void) { return aof.fedBytes; }

long long aofSyncedBytes(void) {
    if (aof.bioSyncBytes > aof.syncedBytes && atomic_load(&bioPendingFsync) == 0 && atomic_load(&bioFsyncErr) == 0)
        aof.syncedBytes = aof.bioSyncBytes;
    return aof.syncedBytes;
}

int aofOn(void) { return aof.state != AOF_OFF; }

size_t aofBufferMemory(void) { return aof.state != AOF_OFF && aof.buf ? sdsAllocSize(aof.buf) : 0; }

int aofWriteErrorText(const char **err) {
    static char text[160];
    if (aof.state == AOF_OFF) return 0;
    int e = 0;
    if (!aof.lastWriteOk) e = aof.lastWriteErrno;
    else if (atomic_load(&bioFsyncErr)) e = atomic_load(&bioFsyncErr);
    if (!e) return 0;
    snprintf(text, sizeof(text), "MISCONF Errors writing to the AOF file: %s", strerror(e));
    *err = text;
    return 1;
}

/* ------------------------------------------------------------------------ */
/* Opening the incr file                                                    */
/* ------------------------------------------------------------------------ */

static int openAppend(const char *path, int truncate) {
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | (truncate ? O_TRUNC : 0), 0644);
    if (fd < 0) serverLog(LL_WARNING, "Can't open the append-only file %s: %s", path, strerror(errno));
    return fd;
}

/* Switches appending to fd: the old one is fsynced and closed in the
 * background. */
static void switchFd(int fd) {
    if (aof.fd >= 0) bioSubmit(aof.fd, 1);
    aof.fd = fd;
    aof.lastIncrSize = 0;
    aof.selectedDb = -1;
}

/* A new incr file, named in a new manifest before it is used.  Returns 0
 * or -1 (logged; nothing changed). */
static int openNewIncr(const char *why) {
    if (aof.state == AOF_WAIT_REWRITE) {
        sds name = tempIncrName();
        sds path = aofPath(name);
        int fd = openAppend(path, 1);
        if (fd >= 0) serverLog(LL_NOTICE, "Creating AOF incr file %s on %s", name, why);
        sdsFree(name);
        sdsFree(path);
        if (fd < 0) return -1;
        switchFd(fd);
        return 0;
    }
    if (aof.state != AOF_ON) return 0;
    AofManifest *m = aofManifestDup(aof.manifest);
    const char *name = aofManifestAddIncr(m, server.cfg.appendfilename);
    sds path = aofPath(name);
    int fd = openAppend(path, 0);
    if (fd < 0 || manifestPersist(m) < 0) {
        if (fd >= 0) {
            close(fd);
            unlink(path);
        }
        sdsFree(path);
        aofManifestFree(m);
        return -1;
    }
    serverLog(LL_NOTICE, "Creating AOF incr file %s on %s", name, why);
    sdsFree(path);
    aofManifestFree(aof.manifest);
    aof.manifest = m;
    switchFd(fd);
    return 0;
}

/* ------------------------------------------------------------------------ */
/* The base file                                                            */
/* ------------------------------------------------------------------------ */

/* Writes a base (per aof-use-rdb-preamble) to path.  Returns 0 or -1. */
static int writeBase(const char *path) {
    if (server.cfg.aofUseRdbPreamble) return rdbSaveFileEx(path, 1);
    return aofWriteCommandsBase(path);
}

/* The foreground rewrite done on start-up when there is no AOF yet (and by
 * DEBUG / start with an empty directory).  Returns 0 or -1. */
static int createBaseNow(void) {
    if (dirCreateIfMissing(server.cfg.appenddirname) < 0) {
        serverLog(LL_WARNING, "Can't open or create append-only dir %s: %s", server.cfg.appenddirname,
                  strerror(errno));
        return -1;
    }
    AofManifest *m = aof.manifest ? aofManifestDup(aof.manifest) : aofManifestCreate();
    const char *name = aofManifestNewBase(m, server.cfg.appendfilename, server.cfg.aofUseRdbPreamble);
    sds path = aofPath(name);
    char tmp[64];
    snprintf(tmp, sizeof(tmp), "temp-rewriteaof-%d.aof", (int)getpid());
    /* The modules' Persistence SYNC_AOF_START, then ENDED or FAILED once
     * the file is in place: Redis's one foreground AOF write. */
    serverFireEvent(SERVER_EVENT_PERSISTENCE, 5, NULL, 0, 0);
    int rc = writeBase(tmp);
    if (rc == 0 && rename(tmp, path) < 0) {
        serverLog(LL_WARNING, "Error trying to rename the temporary AOF file %s into %s: %s", tmp, name,
                  strerror(errno));
        rc = -1;
    }
    if (rc < 0) unlink(tmp);
    serverFireEvent(SERVER_EVENT_PERSISTENCE, rc == 0 ? 3 : 4, NULL, 0, 0);
    if (rc == 0) {
        aofManifestMarkIncrAsHistory(m, 0);
        rc = manifestPersist(m);
    }
    if (rc == 0) {
        serverLog(LL_NOTICE, "Creating AOF base file %s on server start", name);
        aofManifestFree(aof.manifest);
        aof.manifest = m;
    } else {
        aofManifestFree(m);
    }
    sdsFree(path);
    return rc;
}

/* ------------------------------------------------------------------------ */
/* Rewriting in the background                                              */
/* ------------------------------------------------------------------------ */

static void removeChildTemp(pid_t pid) {
    char tmp[64];
    snprintf(tmp, sizeof(tmp), "temp-rewriteaof-bg-%d.aof", (int)pid);
    unlink(tmp);
    snprintf(tmp, sizeof(tmp), "temp-%d.rdb", (int)pid);
    unlink(tmp);
}

static void rewriteDone(pid_t pid, int st);
static void inlineRewriteDone(int ok, int unused);

/* Starts a rewrite.  Returns 0 (child forked, or the base -- RDB preamble
 * or command form -- being written in process under cairn-snapshot
 * inline) or -1
 * (logged). */
static int rewriteBackground(void) {
    if (childActive()) return -1;
    if (dirCreateIfMissing(server.cfg.appenddirname) < 0) {
        serverLog(LL_WARNING, "Can't open or create append-only dir %s: %s", server.cfg.appenddirname,
                  strerror(errno));
        aof.lastRewriteOk = 0;
        return -1;
    }
    /* With the AOF off the manifest on disk (if any) still names the
     * files; the new base takes the next sequence number after them. */
    if (!aof.manifest) aof.manifest = manifestLoad(0);
    flushAof(1);
    if (openNewIncr("background rewrite") < 0) {
        aof.lastRewriteOk = 0;
        return -1;
    }
    if (aof.fd >= 0) fsync(aof.fd);
    if (snapshotMethod == SNAPSHOT_INLINE && snapshotInlineUsable()) {
        static const SnapshotFormat commands = {.head = aofCommandsHead, .dbHead = aofCommandsSelect,
                                                .key = aofCommandsKey};
        char tmp[64];
        snprintf(tmp, sizeof(tmp), "temp-rewriteaof-bg-%d.aof", (int)getpid());
        int rc = server.cfg.aofUseRdbPreamble ? snapshotInlineStartFile(tmp, NULL, 1, inlineRewriteDone)
                                              : snapshotInlineStartCommands(tmp, &commands, inlineRewriteDone);
        if (rc < 0) {
            aof.lastRewriteOk = 0;
            return -1;
        }
        serverLog(LL_NOTICE, "Background append only file rewriting started (in process, no fork)");
        aof.inlineRewrite = 1;
        aof.childPid = getpid();
        aof.childStartSec = (long long)time(NULL);
        aof.scheduled = 0;
        aof.rewrites++;
        return 0;
    }
    persistChildInfoOpen();
    long long start = ustime();
    pid_t pid = fork();
    if (pid == 0) {
        char tmp[64];
        snprintf(tmp, sizeof(tmp), "temp-rewriteaof-bg-%d.aof", (int)getpid());
        persistChildInfoInChild("AOF rewrite");
        /* The modules' Persistence AOF_START, ENDED or FAILED: in the
         * child, as on Redis (7.0 writes an AOF base nowhere else, so its
         * SYNC_AOF_START never fires). */
        serverFireEvent(SERVER_EVENT_PERSISTENCE, 1, NULL, 0, 0);
        if (writeBase(tmp) == 0) {
            serverFireEvent(SERVER_EVENT_PERSISTENCE, 3, NULL, 0, 0);
            serverLog(LL_NOTICE, "Successfully created the temporary AOF base file %s", tmp);
            persistChildInfoFinal();
            _exit(0);
        }
        serverFireEvent(SERVER_EVENT_PERSISTENCE, 4, NULL, 0, 0);
        _exit(1);
    }
    persistChildForked(pid);
    if (pid < 0) {
        serverLog(LL_WARNING, "Can't rewrite append only file in background: fork: %s", strerror(errno));
        aof.lastRewriteOk = 0;
        return -1;
    }
    persistNoteFork(ustime() - start);
    serverLog(LL_NOTICE, "Background append only file rewriting started by pid %ld", (long)pid);
    aof.childPid = pid;
    aof.childStartSec = (long long)time(NULL);
    aof.scheduled = 0;
    aof.rewrites++;
    return 0;
}

/* The child succeeded: put its base in place, write the manifest. */
static int installRewrite(pid_t pid) {
    char tmp[64];
    snprintf(tmp, sizeof(tmp), "temp-rewriteaof-bg-%d.aof", (int)pid);
    AofManifest *m = aofManifestDup(aof.manifest);
    const char *baseName = aofManifestNewBase(m, server.cfg.appendfilename, server.cfg.aofUseRdbPreamble);
    sds basePath = aofPath(baseName);
    sds incrPath = NULL;
    int rc = -1;
    long long start = ustime();
    if (rename(tmp, basePath) < 0) {
        serverLog(LL_WARNING, "Error trying to rename the temporary AOF base file %s into %s: %s", tmp, baseName,
                  strerror(errno));
        unlink(tmp);
        goto cleanup;
    }
    latencySample("aof-rename", ustime() - start);
    serverLog(LL_NOTICE, "Successfully renamed the temporary AOF base file %s into %s", tmp, baseName);
    if (aof.state == AOF_WAIT_REWRITE) {
        sds tname = tempIncrName();
        sds tpath = aofPath(tname);
        const char *incrName = aofManifestAddIncr(m, server.cfg.appendfilename);
        incrPath = aofPath(incrName);
        int r = rename(tpath, incrPath);
        if (r < 0)
            serverLog(LL_WARNING, "Error trying to rename the temporary AOF incr file %s into %s: %s", tname,
                      incrName, strerror(errno));
        else
            serverLog(LL_NOTICE, "Successfully renamed the temporary AOF incr file %s into %s", tname, incrName);
        sdsFree(tname);
        sdsFree(tpath);
        if (r < 0) {
            unlink(basePath);
            goto cleanup;
        }
    }
    /* Every incr file but the one appended to now is in the new base. */
    aofManifestMarkIncrAsHistory(m, aof.fd >= 0 ? 1 : 0);
    if (manifestPersist(m) < 0) {
        unlink(basePath);
        if (incrPath) {
            sds tname = tempIncrName();
            sds tpath = aofPath(tname);
            rename(incrPath, tpath);
            sdsFree(tname);
            sdsFree(tpath);
        }
        goto cleanup;
    }
    aofManifestFree(aof.manifest);
    aof.manifest = m;
    m = NULL;
    start = ustime();
    aof.currentSize = fileSize(basePath) + aof.lastIncrSize;
    latencySample("aof-fstat", ustime() - start);
    aof.baseSize = aof.currentSize;
    aof.fsyncOffset = aof.currentSize;
    if (aof.state == AOF_WAIT_REWRITE) aof.state = AOF_ON, persistRefusalHint = 1;
    deleteHistoryFiles();
    rc = 0;
cleanup:
    if (m) aofManifestFree(m);
    sdsFree(basePath);
    sdsFree(incrPath);
    return rc;
}

static void rewriteDone(pid_t pid, int st) {
    int ok = 0;
    persistChildEnded();
    if (WIFEXITED(st) && WEXITSTATUS(st) == 0) {
        serverLog(LL_NOTICE, "Background AOF rewrite terminated with success");
        ok = installRewrite(pid) == 0;
        if (ok) serverLog(LL_NOTICE, "Background AOF rewrite finished successfully");
    } else if (WIFSIGNALED(st)) {
        if (WTERMSIG(st) != SIGUSR1) serverLog(LL_WARNING, "Background AOF rewrite terminated by signal %d", WTERMSIG(st));
    } else {
        serverLog(LL_WARNING, "Background AOF rewrite terminated with error");
    }
    removeChildTemp(pid);
    aof.lastRewriteTimeSec = (long long)time(NULL) - aof.childStartSec;
    aof.childPid = -1;
    aof.lastRewriteOk = ok;
    if (ok) {
        aof.consecutiveFailures = 0;
        aof.retryDelaySec = 0;
        aof.nextAutoRewriteSec = 0;
    } else {
        aof.consecutiveFailures++;
        /* Turning on waits for a rewrite: try again. */
        if (aof.state == AOF_WAIT_REWRITE) aof.scheduled = 1;
    }
}

/* The end of an in-process rewrite: as its child's exit (ok 1: status 0,
 * 0: status 1), or, cancelled (-1), as killChild's. */
static void inlineRewriteDone(int ok, int unused) {
    (void)unused;
    pid_t pid = aof.childPid;
    aof.inlineRewrite = 0;
    if (ok == 1) persistInlineSaveCompleted(1);
    if (ok >= 0) {
        rewriteDone(pid, ok == 1 ? 0 : 1 << 8); /* wait statuses of exit(0), exit(1) */
        return;
    }
    removeChildTemp(pid);
    aof.childPid = -1;
    aof.lastRewriteTimeSec = (long long)time(NULL) - aof.childStartSec;
}

static void killChild(void) {
    if (aof.childPid < 0) return;
    if (aof.inlineRewrite) {
        serverLog(LL_NOTICE, "Stopping the running AOF rewrite (in process)");
        snapshotInlineAbort();
        return;
    }
    serverLog(LL_NOTICE, "Killing running AOF rewrite child: %ld", (long)aof.childPid);
    kill(aof.childPid, SIGUSR1);
    int st;
    while (waitpid(aof.childPid, &st, 0) < 0 && errno == EINTR) {
    }
    removeChildTemp(aof.childPid);
    persistChildEnded();
    aof.childPid = -1;
    aof.lastRewriteTimeSec = (long long)time(NULL) - aof.childStartSec;
}

pid_t aofChildPid(void) { return aof.childPid; }

void aofScheduleRewrite(void) { aof.scheduled = 1; }

/* After 3 failed automatic rewrites in a row the next waits 1 minute,
 * doubling up to an hour, as Redis limits them. */
static int autoRewriteLimited(long long now) {
    if (aof.consecutiveFailures < 3) return 0;
    if (aof.nextAutoRewriteSec == 0) {
        aof.retryDelaySec = aof.retryDelaySec ? aof.retryDelaySec * 2 : REWRITE_RETRY_BASE_SEC;
        if (aof.retryDelaySec > REWRITE_RETRY_MAX_SEC) aof.retryDelaySec = REWRITE_RETRY_MAX_SEC;
        aof.nextAutoRewriteSec = now + aof.retryDelaySec;
        serverLog(LL_WARNING, "Background AOF rewrite has repeatedly failed and triggered the limit, will retry in "
                              "%d minutes",
                  aof.retryDelaySec / 60);
        return 1;
    }
    if (now < aof.nextAutoRewriteSec) return 1;
    aof.nextAutoRewriteSec = 0;
    return 0;
}

void aofRestartAfterSync(void);

static void aofCron(void) {
    long long now = (long long)time(NULL);
    if (aof.restartPending && !childActive()) aofRestartAfterSync();
    if (aof.childPid >= 0 && !aof.inlineRewrite) {
        int st;
        pid_t pid = waitpid(aof.childPid, &st, WNOHANG);
        if (pid == aof.childPid) rewriteDone(pid, st);
    }
    if (!childActive() && aof.scheduled && !(aof.state != AOF_WAIT_REWRITE && autoRewriteLimited(now)))
        rewriteBackground();
    if (aof.state == AOF_ON && !childActive() && server.cfg.autoAofRewritePerc &&
        aof.currentSize > server.cfg.autoAofRewriteMinSize) {
        long long base = aof.baseSize ? aof.baseSize : 1;
        long long growth = (aof.currentSize * 100 / base) - 100;
        if (growth >= server.cfg.autoAofRewritePerc && !autoRewriteLimited(now)) {
            serverLog(LL_NOTICE, "Starting automatic rewriting of AOF on %lld%% growth", growth);
            rewriteBackground();
        }
    }
    /* A postponed write, a failed write to retry, an everysec fsync due. */
    int fsyncErr = atomic_load(&bioFsyncErr);
    if (fsyncErr && !aof.fsyncErrLogged) serverLog(LL_WARNING, "Fail to fsync the AOF file: %s", strerror(fsyncErr));
    else if (!fsyncErr && aof.fsyncErrLogged) serverLog(LL_WARNING, "AOF fsync error looks solved, Cairn can write again.");
    aof.fsyncErrLogged = fsyncErr != 0;
    if (aof.fd >= 0 && (sdsLen(aof.buf) || !aof.lastWriteOk || fsyncErr)) flushAof(0);
}

/* ------------------------------------------------------------------------ */
/* Loading                                                                  */
/* ------------------------------------------------------------------------ */

/* Loads every file of m, logging as Redis 7.0 does, in the loading state
 * (persistLoadingBegin) with the modules' Loading AOF_START then ENDED (or
 * FAILED before exiting), as Redis's startLoading/stopLoading, unless
 * every file is empty.  Returns AOF_LOAD_OK,
 * AOF_LOAD_EMPTY (nothing in any file) or exits.  *totalSize: the files'
 * bytes after the load; *baseSize: the base file's (Redis's
 * aof_rewrite_base_size after a restart, INFO aof_base_size). */
static int loadManifestFiles(AofManifest *m, long long *totalSize, long long *baseSize) {
    int files = (m->hasBase ? 1 : 0) + m->incrCount;
    *totalSize = *baseSize = 0;
    /* Every file listed must be there before anything is loaded. */
    for (int i = 0; i < files; i++) {
        AofInfo *f = m->hasBase ? (i == 0 ? &m->base : &m->incr[i - 1]) : &m->incr[i];
        sds path = aofPath(f->name);
        struct stat st;
        if (stat(path, &st) < 0) {
            serverLog(LL_WARNING, "Unable to obtain the AOF file %s length. stat: %s", f->name, strerror(errno));
            exit(1);
        }
        *totalSize += (long long)st.st_size;
        sdsFree(path);
    }
    if (*totalSize == 0) return AOF_LOAD_EMPTY;
    /* Loading from here (Redis's startLoading): the modules' Loading
     * AOF_START, and ENDED or FAILED at the end. */
    persistLoadingBegin();
    serverFireEvent(SERVER_EVENT_LOADING, 1, NULL, 0, 0);
    effectsSuppress(1);
    size_t done = 0;
    for (int i = 0; i < files; i++) {
        AofInfo *f = m->hasBase ? (i == 0 ? &m->base : &m->incr[i - 1]) : &m->incr[i];
        sds path = aofPath(f->name);
        int last = i == files - 1;
        long long t = ustime();
        aofLoadSetProgressSpan(done, (size_t)*totalSize);
        long long before = fileSize(path);
        int rc = aofLoadFile(path, f->name, server.cfg.aofLoadTruncated);
        if (before > 0) done += (size_t)before;
        if (rc == AOF_LOAD_OK || (rc == AOF_LOAD_TRUNCATED && last))
            serverLog(LL_NOTICE, "DB loaded from %s file %s: %.3f seconds", f->type == 'b' ? "base" : "incr",
                      f->name, (double)(ustime() - t) / 1000000);
        else if (rc == AOF_LOAD_TRUNCATED)
            serverLog(LL_WARNING, "Fatal error: the truncated file is not the last file");
        if (rc == AOF_LOAD_FAILED || rc == AOF_LOAD_NOT_EXIST || (rc == AOF_LOAD_TRUNCATED && !last)) {
            persistLoadingEnd();
            serverFireEvent(SERVER_EVENT_LOADING, 4, NULL, 0, 0); /* FAILED, then Redis exits too */
            exit(1);
        }
        sdsFree(path);
    }
    /* A trimmed file is shorter now. */
    *totalSize = 0;
    for (int i = 0; i < files; i++) {
        AofInfo *f = m->hasBase ? (i == 0 ? &m->base : &m->incr[i - 1]) : &m->incr[i];
        sds path = aofPath(f->name);
        long long size = fileSize(path);
        *totalSize += size;
        if (f == &m->base) *baseSize = size;
        sdsFree(path);
    }
    effectsSuppress(0);
    aofLoadSetProgressSpan(0, 0);
    server.dirty = 0;
    persistLoadingEnd();
    serverFireEvent(SERVER_EVENT_LOADING, 3, NULL, 0, 0); /* ENDED */
    return AOF_LOAD_OK;
}

static int dirExists(const char *dir) {
    struct stat st;
    return stat(dir, &st) == 0 && S_ISDIR(st.st_mode);
}

/* Redis 6's single file (appendfilename in dir) becomes the base of a
 * multi-part AOF: the manifest naming it is written, then the file moved
 * into the directory.  As Redis 7.0 does, this happens when the directory
 * does not exist, or the manifest is missing or lists no file, or the
 * upgrade was interrupted between the two steps (the manifest lists only
 * that file as its base and the file is not in the directory yet); a crash
 * at any point is resumed at the next start. */
static void upgradeOldAofIfNeeded(void) {
    const char *old = server.cfg.appendfilename;
    if (!fileExists(old)) return;
    AofManifest *m = aof.manifest;
    sds dst = aofPath(old);
    int empty = !m || (!m->hasBase && m->incrCount == 0);
    int interrupted = m && m->hasBase && m->incrCount == 0 && !strcmp(m->base.name, old) && !fileExists(dst);
    if (dirExists(server.cfg.appenddirname) && !empty && !interrupted) {
        sdsFree(dst);
        return;
    }
    if (dirCreateIfMissing(server.cfg.appenddirname) < 0) {
        serverLog(LL_WARNING, "Can't open or create append-only dir %s: %s", server.cfg.appenddirname,
                  strerror(errno));
        exit(1);
    }
    if (!m) m = aof.manifest = aofManifestCreate();
    aofManifestSetBase(m, old, 1);
    m->baseSeq = 1;
    if (manifestPersist(m) < 0) exit(1);
    if (rename(old, dst) < 0) {
        serverLog(LL_WARNING, "Error trying to move the old AOF file %s into dir %s: %s", old,
                  server.cfg.appenddirname, strerror(errno));
        exit(1);
    }
    fsyncDir(server.cfg.appenddirname);
    fsyncDir(".");
    sdsFree(dst);
    serverLog(LL_NOTICE, "Successfully migrated an old-style AOF file (%s) into the AOF directory (%s).", old,
              server.cfg.appenddirname);
}

/* Opens the last incr file for appending, creating one (in a new manifest)
 * if there is none. */
static void openOnStart(void) {
    if (!aof.manifest) aof.manifest = aofManifestCreate();
    if (!aof.manifest->hasBase && aof.manifest->incrCount == 0) {
        if (createBaseNow() < 0) {
            serverLog(LL_WARNING, "Can't create the AOF base file on server start. Exiting.");
            exit(1);
        }
    }
    if (aof.manifest->incrCount == 0) {
        AofManifest *m = aofManifestDup(aof.manifest);
        const char *name = aofManifestAddIncr(m, server.cfg.appendfilename);
        sds path = aofPath(name);
        int fd = openAppend(path, 0);
        if (fd < 0 || manifestPersist(m) < 0) exit(1);
        serverLog(LL_NOTICE, "Creating AOF incr file %s on server start", name);
        aofManifestFree(aof.manifest);
        aof.manifest = m;
        aof.fd = fd;
        aof.lastIncrSize = 0;
        sdsFree(path);
    } else {
        AofInfo *last = &aof.manifest->incr[aof.manifest->incrCount - 1];
        sds path = aofPath(last->name);
        int fd = openAppend(path, 0);
        if (fd < 0) exit(1);
        serverLog(LL_NOTICE, "Opening AOF incr file %s on server start", last->name);
        aof.fd = fd;
        aof.lastIncrSize = fileSize(path);
        sdsFree(path);
    }
    aof.selectedDb = -1;
}

void aofLoadManifestAtStartup(void) {
    aof.manifest = manifestLoad(1);
    /* With the AOF off Redis still removes the manifest's history files
     * at start-up (with it on, aofInitAtStartup does after the load). */
    if (!server.cfg.appendonly) deleteHistoryFiles();
}

void aofInitAtStartup(void) {
    aof.state = AOF_ON, persistRefusalHint = 1;
    upgradeOldAofIfNeeded();
    long long total = 0;
    if (aof.manifest && (aof.manifest->hasBase || aof.manifest->incrCount)) {
        long long start = ustime();
        long long baseSize;
        int rc = loadManifestFiles(aof.manifest, &total, &baseSize);
        serverLog(LL_NOTICE, "DB loaded from append only file: %.3f seconds", (double)(ustime() - start) / 1000000);
        if (rc == AOF_LOAD_OK) {
            aof.currentSize = total;
            aof.baseSize = baseSize;
        }
    }
    openOnStart();
    aof.fsyncOffset = aof.currentSize;
    deleteHistoryFiles();
    effectsAddSink(aofSink, NULL, EFFECT_AOF);
}

void aofDebugLoad(void) {
    if (aof.state == AOF_ON) flushAndSync();
    serverFireEvent(SERVER_EVENT_FLUSHDB, 0, NULL, -1, 1); /* Redis's emptyData fires them */
    signalFlushedDb(-1);
    for (int j = 0; j < server.cfg.databases; j++) dbEmpty(&server.db[j]);
    functionsRdbFlush();
    serverFireEvent(SERVER_EVENT_FLUSHDB, 1, NULL, -1, 1);
    /* The manifest is read again from disk (it may have been edited), its
     * history removed, an old single file upgraded, as at start-up. */
    AofManifest *m = manifestLoad(1);
    aofManifestFree(aof.manifest);
    aof.manifest = m ? m : aofManifestCreate();
    deleteHistoryFiles();
    upgradeOldAofIfNeeded();
    m = aof.manifest;
    /* No AOF at all is fatal here, as in Redis. */
    if (!m->hasBase && m->incrCount == 0) exit(1);
    /* Other clients get -LOADING meanwhile (also while a slow script of
     * the file runs), as at start-up. */
    long long total, baseSize;
    int rc = loadManifestFiles(m, &total, &baseSize);
    if (rc == AOF_LOAD_OK) {
        aof.currentSize = total;
        aof.baseSize = baseSize;
        aof.fsyncOffset = total;
    }
    server.dirty = 0;
    serverLog(LL_WARNING, "Append Only File loaded by DEBUG LOADAOF");
}

/* ------------------------------------------------------------------------ */
/* Turning it on and off, shutdown                                          */
/* ------------------------------------------------------------------------ */

static int startAppendOnly(const char **err) {
    if (!aof.manifest) aof.manifest = manifestLoad(0);
    if (!aof.manifest) aof.manifest = aofManifestCreate();
    aof.state = AOF_WAIT_REWRITE, persistRefusalHint = 1;
    aof.lastWriteOk = 1;
    if (aof.childPid < 0 && persistChildActive()) {
        aof.scheduled = 1;
        serverLog(LL_WARNING, "AOF was enabled but there is already another background operation. An AOF background "
                              "was scheduled to start when possible.");
    } else {
        if (aof.childPid >= 0) {
            serverLog(LL_WARNING, "AOF was enabled but there is already an AOF rewriting in background. Stopping "
                                  "background AOF and starting a rewrite now.");
            killChild();
        }
        if (rewriteBackground() < 0) {
            if (aof.fd >= 0) {
                close(aof.fd);
                aof.fd = -1;
            }
            aof.state = AOF_OFF, persistRefusalHint = 1;
            serverLog(LL_WARNING, "Cairn needs to enable the AOF but can't trigger a background AOF rewrite "
                                  "operation. Check the above logs for more info about the error.");
            *err = "Cairn needs to enable the AOF but can't trigger a background AOF rewrite operation";
            return -1;
        }
    }
    aof.lastFsyncSec = (long long)time(NULL);
    effectsAddSink(aofSink, NULL, EFFECT_AOF);
    return 0;
}

static void stopAppendOnly(void) {
    flushAndSync();
    if (aof.fd >= 0) {
        close(aof.fd);
        aof.fd = -1;
    }
    aof.state = AOF_OFF, persistRefusalHint = 1;
    aof.scheduled = 0;
    killChild();
    sdsClear(aof.buf);
    aof.lastWriteOk = 1;
    effectsRemoveSink(aofSink, NULL);
}

static int applyAppendonly(const char **err) {
    if (server.cfg.appendonly && aof.state == AOF_OFF) return startAppendOnly(err);
    if (!server.cfg.appendonly && aof.state != AOF_OFF) stopAppendOnly();
    return 0;
}

void aofRestartAfterSync(void) {
    if (!server.cfg.appendonly) aof.restartPending = 0;
    if (aof.state == AOF_OFF && !aof.restartPending) return;
    if (aof.state != AOF_OFF) stopAppendOnly();
    const char *err = NULL;
    if (startAppendOnly(&err) < 0) {
        serverLog(LL_WARNING, "Failed enabling the AOF after successful master synchronization! Trying it again in "
                              "one second.");
        aof.restartPending = 1;
        return;
    }
    aof.restartPending = 0;
}

int aofPrepareShutdown(int force) {
    if (aof.childPid >= 0) {
        if (aof.state == AOF_WAIT_REWRITE) {
            if (!force) {
                serverLog(LL_WARNING, "Writing initial AOF, can't exit.");
                return -1;
            }
            serverLog(LL_WARNING, "Writing initial AOF. Exit anyway.");
        }
        serverLog(LL_WARNING, "There is a child rewriting the AOF. Killing it!");
        killChild();
        if (aof.state == AOF_WAIT_REWRITE) {
            sds name = tempIncrName();
            sds path = aofPath(name);
            unlink(path);
            sdsFree(name);
            sdsFree(path);
        }
    }
    if (aof.state != AOF_OFF && aof.fd >= 0) {
        serverLog(LL_NOTICE, "Calling fsync() on the AOF file.");
        flushAndSync();
    }
    return 0;
}

/* ------------------------------------------------------------------------ */
/* Commands and INFO                                                        */
/* ------------------------------------------------------------------------ */

void aofBgrewriteaofCommand(Client *c) {
    if (aof.childPid >= 0) {
        replyError(c, "ERR Background append only file rewriting already in progress");
    } else if (childActive() || (c->flags & CLIENT_MULTI)) {
        aof.scheduled = 1;
        replyStatus(c, "Background append only file rewriting scheduled");
    } else if (rewriteBackground() == 0) {
        replyStatus(c, "Background append only file rewriting started");
    } else {
        replyError(c, "ERR Can't execute an AOF background rewriting. Please check the server logs for more "
                      "information.");
    }
}

sds aofInfoMain(sds s) {
    long long cur = aof.childPid >= 0 ? (long long)time(NULL) - aof.childStartSec : -1;
    int writeOk = aof.lastWriteOk && atomic_load(&bioFsyncErr) == 0;
    return sdsCatPrintf(s,
                        "aof_enabled:%d\r\n"
                        "aof_rewrite_in_progress:%d\r\n"
                        "aof_rewrite_scheduled:%d\r\n"
                        "aof_last_rewrite_time_sec:%lld\r\n"
                        "aof_current_rewrite_time_sec:%lld\r\n"
                        "aof_last_bgrewrite_status:%s\r\n"
                        "aof_rewrites:%lld\r\n"
                        "aof_rewrites_consecutive_failures:%lld\r\n"
                        "aof_last_write_status:%s\r\n"
                        "aof_last_cow_size:%zu\r\n",
                        aof.state != AOF_OFF, aof.childPid >= 0, aof.scheduled, aof.lastRewriteTimeSec, cur,
                        aof.lastRewriteOk ? "ok" : "err", aof.rewrites, aof.consecutiveFailures,
                        writeOk ? "ok" : "err", persistAofLastCowSize());
}

sds aofInfoEnabled(sds s) {
    if (aof.state == AOF_OFF) return s;
    return sdsCatPrintf(s,
                        "aof_current_size:%lld\r\n"
                        "aof_base_size:%lld\r\n"
                        "aof_pending_rewrite:%d\r\n"
                        "aof_buffer_length:%zu\r\n"
                        "aof_pending_bio_fsync:%d\r\n"
                        "aof_delayed_fsync:%lld\r\n",
                        aof.currentSize, aof.baseSize, aof.scheduled, sdsLen(aof.buf), atomic_load(&bioPendingFsync),
                        aof.delayedFsync);
}

static void aofResetStats(void) { aof.delayedFsync = 0; }

void aofInitHooks(void) {
    aof.buf = sdsEmpty();
    serverAddCronHook(aofCron);
    serverAddBeforeSleepHook(aofBeforeSleep);
    serverAddResetStatsHook(aofResetStats);
    serverAddBeforeReplyWriteHook(aofBeforeReplyWrite);
}

/* ------------------------------------------------------------------------ */
/* Configuration                                                             */
/* ------------------------------------------------------------------------ */

/* appendonly: a yes/no; CONFIG SET starts or stops the append-only file
 * (applyAppendonly). */
static int setAppendonly(ConfigDef *d, sds *argv, int argc, const char **err) {
    int b = argc == 1 ? configYesNo(argv[0]) : -1;
    if (b == -1) {
        *err = argc == 1 ? "argument must be 'yes' or 'no'" : "wrong number of arguments";
        return -1;
    }
    server.cfg.appendonly = b;
    return 0;
}

static sds getAppendonly(const ConfigDef *d) { return sdsNew(server.cfg.appendonly ? "yes" : "no"); }

/* CONFIG SET aof-disable-auto-gc: turned off, the history files go at
 * once, as Redis does. */
static int applyAofAutoGc(const char **err) {
    (void)err;
    deleteHistoryFiles();
    return 0;
}

static const ConfigEnum appendfsyncEnum[] = {
    {"everysec", APPENDFSYNC_EVERYSEC}, {"always", APPENDFSYNC_ALWAYS}, {"no", APPENDFSYNC_NO}, {NULL, 0}};

/* The values stay in server.cfg: persistence, the RDB writer and
 * replication read them too. */
static ConfigDef aofConfig[] = {
    CONFIG_SPECIAL("appendonly", NULL, 0, "no", setAppendonly, getAppendonly, .var = &server.cfg.appendonly,
                   .max = 1, .apply = applyAppendonly, .rank = CONFIG_RANK_PERSISTENCE + 2),
    CONFIG_STRING("appendfilename", NULL, CF_BASENAME | CF_IMMUTABLE, server.cfg.appendfilename, "appendonly.aof",
                  .rank = CONFIG_RANK_PERSISTENCE + 3),
    CONFIG_STRING("appenddirname", NULL, CF_BASENAME | CF_IMMUTABLE, server.cfg.appenddirname, "appendonlydir",
                  .rank = CONFIG_RANK_PERSISTENCE + 4),
    CONFIG_ENUM("appendfsync", NULL, 0, server.cfg.appendfsync, appendfsyncEnum, "everysec",
                .rank = CONFIG_RANK_PERSISTENCE + 5),
    CONFIG_BOOL("aof-disable-auto-gc", NULL, 0, server.cfg.aofDisableAutoGc, "no", .apply = applyAofAutoGc),
    CONFIG_BOOL("aof-load-truncated", NULL, 0, server.cfg.aofLoadTruncated, "yes"),
    CONFIG_BOOL("aof-rewrite-incremental-fsync", NULL, 0, server.cfg.aofRewriteIncrementalFsync, "yes"),
    CONFIG_BOOL("aof-timestamp-enabled", NULL, 0, server.cfg.aofTimestampEnabled, "no"),
    CONFIG_BOOL("aof-use-rdb-preamble", NULL, 0, server.cfg.aofUseRdbPreamble, "yes"),
    CONFIG_STRING("aof_rewrite_cpulist", NULL, CF_IMMUTABLE | CF_EMPTY_NULL, server.cfg.aofRewriteCpulist, ""),
    CONFIG_LL("auto-aof-rewrite-min-size", NULL, CF_MEMORY, server.cfg.autoAofRewriteMinSize, 0, LLONG_MAX,
              "67108864"),
    CONFIG_INT("auto-aof-rewrite-percentage", NULL, 0, server.cfg.autoAofRewritePerc, 0, INT_MAX, "100"),
    CONFIG_BOOL("no-appendfsync-on-rewrite", NULL, 0, server.cfg.noAppendfsyncOnRewrite, "no"),
};

void aofRegisterConfig(void) { configRegister(aofConfig, CONFIG_COUNT_OF(aofConfig)); }
