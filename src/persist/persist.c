/* persist.c -- SAVE, BGSAVE, save points, start-up loading, the final save
 * at shutdown, DUMP and RESTORE, MISCONF, INFO persistence (persist.h).
 *
 * BGSAVE forks: the child writes the snapshot with rdbSaveFile (its own
 * temp-<pid>.rdb, renamed over dbfilename on success) and exits 0 or 1; the
 * parent keeps serving and reaps the child from the timer (persistCron),
 * where the outcome becomes LASTSAVE, the dirty counter (less the changes
 * made while the child ran) and rdb_last_bgsave_status.  A child killed by
 * a signal leaves its temporary file, which the parent removes. */
#include "persist/persist.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/client.h"
#include "core/command.h"
#include "core/dispatch.h"
#include "core/effects.h"
#include "core/event.h"
#include "core/log.h"
#include "core/net.h"
#include "core/server.h"
#include "ds/alloc.h"
#include "ds/htab.h"
#include "db/db.h"
#include "db/lazyfree.h"
#include "ds/util.h"
#include "persist/aof.h"
#include "persist/rdb.h"
#include "persist/rdb_int.h"
#include "persist/snapshot.h"
#include "script/function.h"
#include "script/script.h"

#define BGSAVE_RETRY_DELAY 5 /* seconds between save-point retries after a failure */

static struct {
    pid_t childPid;             /* -1: no save child */
    int inlineSave;             /* a BGSAVE written in process (snapshot.c) runs */
    pid_t syncChildPid;         /* a replication full sync's save child, -1: none */
    int syncChildDisk;          /* ... writing dbfilename (else the replicas' sockets) */
    int syncChildKilled;        /* ... killed on purpose (not a failed save) */
    long long childStartMs;     /* when it was forked */
    long long dirtyBeforeBgsave;
    int lastBgsaveOk;           /* rdb_last_bgsave_status */
    long long lastBgsaveTimeSec;/* rdb_last_bgsave_time_sec, -1 before one */
    long long lastBgsaveTry;    /* unix seconds of the last attempt */
    long long saves;            /* rdb_saves */
    int scheduled;              /* BGSAVE SCHEDULE waiting for the child slot */
    long long loadKeysLoaded, loadKeysExpired;
    long long latestForkUsec, totalForks;
    /* The start-up load while it runs (loading:1 and the loading_* fields). */
    int loading;
    int asyncLoading;           /* a replica's swapdb load beside the old data */
    long long loadingStartUnix, loadingRdbUsedMem, loadingLastLogMs, loadingKeys;
    void (*loadingTick)(void);  /* a replica's sync load: its link's keep-alive */
    long long loadingTickMs;
    int loadingLogProgress; /* the start-up RDB load logs its progress (Redis's AOF load does not) */
    size_t loadingTotalBytes, loadingLoadedBytes;
    /* What a fork child reports through infoPipe (Redis's child info). */
    int infoPipe[2];            /* read end (parent), write end (child); -1 */
    size_t cowSize, cowPeak;    /* current_cow_size, current_cow_peak */
    long long cowUpdatedMs;     /* when current_cow_size came, 0: never */
    long long keysProcessed;    /* current_save_keys_processed */
    long long keysTotal;        /* current_save_keys_total (at fork) */
    size_t lastCowSize;         /* rdb_last_cow_size: the last RDB child's peak */
    size_t lastAofCowSize;      /* aof_last_cow_size: the last rewrite child's peak */
    pid_t moduleChildPid;       /* RedisModule_Fork's child, -1: none */
    void (*moduleChildDone)(int exitcode, int bysignal);
    size_t lastModuleCowSize;   /* module_fork_last_cow_size */
} state = {.childPid = -1, .syncChildPid = -1, .moduleChildPid = -1, .lastBgsaveOk = 1, .lastBgsaveTimeSec = -1, .infoPipe = {-1, -1}};

static void noteForkChild(void);

static long long nowUnix(void) { return (long long)time(NULL); }

/* --- saving --- */

/* SAVE and the shutdown save: the snapshot in the foreground.  Returns 0
 * or -1. */
static int saveForeground(void) {
    serverFireEvent(SERVER_EVENT_PERSISTENCE, 2, NULL, 0, 0); /* SYNC_RDB_START */
    if (rdbSaveFile(server.cfg.dbfilename) < 0) {
        serverFireEvent(SERVER_EVENT_PERSISTENCE, 4, NULL, 0, 0); /* FAILED */
        return -1;
    }
    serverFireEvent(SERVER_EVENT_PERSISTENCE, 3, NULL, 0, 0); /* ENDED */
    serverLog(LL_NOTICE, "DB saved on disk");
    server.dirty = 0;
    server.lastSaveUnix = nowUnix();
    state.lastBgsaveOk = 1;
    return 0;
}

/* --- the children's reports --- */

/* Every fork child (BGSAVE, a replication sync's save, an AOF rewrite)
 * reports to the parent through infoPipe, as Redis's child info pipe:
 * about once a second its copy-on-write bytes and the keys written so far,
 * and when it succeeded a last sample.  The parent opens the pipe before
 * the fork; the child's end is the write end, the parent's the read end.
 * One message is written whole (it is smaller than PIPE_BUF, so writes
 * are atomic). */
typedef struct ChildInfo {
    int final;          /* 1: the child is done, cow is the last sample */
    size_t cow;         /* private dirty bytes of the child now */
    long long keys;     /* keys written so far */
} ChildInfo;

/* Bytes of this process's private dirty pages: the pages copied since the
 * fork (copy-on-write).  0 when /proc cannot tell. */
static size_t privateDirtyBytes(void) {
    FILE *f = fopen("/proc/self/smaps_rollup", "r");
    if (!f) f = fopen("/proc/self/smaps", "r");
    if (!f) return 0;
    char line[256];
    size_t kb = 0;
    while (fgets(line, sizeof(line), f)) {
        if (!strncmp(line, "Private_Dirty:", 14)) kb += strtoull(line + 14, NULL, 10);
    }
    fclose(f);
    return kb * 1024;
}

/* In the child only (what != NULL): its own side of the reports. */
static struct {
    const char *what; /* "RDB" or "AOF rewrite", for the log line */
    long long lastSentMs;
    size_t peak, sum;
    long long samples;
} child;

static void childSend(int final, long long keys) {
    ChildInfo m = {.final = final, .cow = privateDirtyBytes(), .keys = keys};
    if (m.cow > child.peak) child.peak = m.cow;
    child.sum += m.cow;
    child.samples++;
    if (state.infoPipe[1] != -1) {
        ssize_t w = write(state.infoPipe[1], &m, sizeof(m));
        (void)w; /* a full pipe drops a report: the next one carries on */
    }
    serverLog(final ? LL_NOTICE : LL_VERBOSE, "Fork CoW for %s: current %zu MB, peak %zu MB, average %llu MB",
              child.what, m.cow >> 20, child.peak >> 20,
              (unsigned long long)(child.sum / (size_t)child.samples) >> 20);
}

void persistChildProgress(long long keysDone) {
    if (!child.what) return;
    long long now = mstime();
    if (now - child.lastSentMs < 1000) return;
    child.lastSentMs = now;
    childSend(0, keysDone);
}

void persistChildInfoOpen(void) {
    if (pipe(state.infoPipe) < 0) {
        state.infoPipe[0] = state.infoPipe[1] = -1;
        return;
    }
    fcntl(state.infoPipe[0], F_SETFL, O_NONBLOCK);
    fcntl(state.infoPipe[1], F_SETFL, O_NONBLOCK);
}

void persistChildInfoInChild(const char *what) {
    configApplyOomScoreAdj(CONFIG_OOM_BGCHILD);
    /* A module's child keeps the parent's CPUs, as Redis's. */
    configSetCpuAffinity(!strcmp(what, "RDB")             ? server.cfg.bgsaveCpulist
                         : !strcmp(what, "AOF rewrite") ? server.cfg.aofRewriteCpulist
                                                          : NULL);
    if (state.infoPipe[0] != -1) close(state.infoPipe[0]);
    state.infoPipe[0] = -1;
    child.what = what;
    child.lastSentMs = 0; /* the first report goes at once, as Redis's */
    rdbSetProgressHooks(persistChildProgress, NULL);
}

void persistChildInfoFinal(void) {
    if (child.what) childSend(1, 0);
}

static void pipeClose(void) {
    for (int i = 0; i < 2; i++) {
        if (state.infoPipe[i] != -1) close(state.infoPipe[i]);
        state.infoPipe[i] = -1;
    }
}

/* Parent: reads every report waiting on the pipe.  A final one sets the
 * last child's copy-on-write (its peak) for INFO's rdb_/aof_last_cow_size. */
static void childInfoReceive(void) {
    ChildInfo m;
    if (state.infoPipe[0] == -1) return;
    while (read(state.infoPipe[0], &m, sizeof(m)) == (ssize_t)sizeof(m)) {
        if (m.cow > state.cowPeak) state.cowPeak = m.cow;
        if (m.final) {
            int kind = persistChildType();
            if (kind == PERSIST_CHILD_AOF) state.lastAofCowSize = state.cowPeak;
            else if (kind == PERSIST_CHILD_MODULE) state.lastModuleCowSize = state.cowPeak;
            else state.lastCowSize = state.cowPeak;
        } else {
            state.cowSize = m.cow;
            state.cowUpdatedMs = serverNowMs();
            state.keysProcessed = m.keys;
        }
    }
}

static void childInfoReset(void) {
    state.cowSize = state.cowPeak = 0;
    state.cowUpdatedMs = state.keysProcessed = state.keysTotal = 0;
}

static long long totalKeys(void) {
    long long n = 0;
    for (int j = 0; j < server.cfg.databases; j++) n += (long long)dbSize(&server.db[j]);
    return n;
}

void persistChildForked(pid_t pid) {
    if (pid < 0) {
        pipeClose();
        return;
    }
    if (state.infoPipe[1] != -1) close(state.infoPipe[1]);
    state.infoPipe[1] = -1;
    childInfoReset();
    state.keysTotal = totalKeys();
    serverFireEvent(SERVER_EVENT_FORK_CHILD, 0, NULL, 0, 0); /* born */
}

/* Every child's end fires ForkChild died here, but the module child's,
 * whose done handler runs first (Redis's order). */
static int childDiedLater;

void persistChildEnded(void) {
    childInfoReceive();
    pipeClose();
    childInfoReset();
    if (!childDiedLater) serverFireEvent(SERVER_EVENT_FORK_CHILD, 1, NULL, 0, 0);
}

/* The save child: no listeners, no timers; write, report and go. */
static void bgsaveChild(void) {
    netCloseListenersInChild();
    persistChildInfoInChild("RDB");
    serverFireEvent(SERVER_EVENT_PERSISTENCE, 0, NULL, 0, 0); /* RDB_START, in the child as on Redis */
    int rc = rdbSaveFile(server.cfg.dbfilename);
    serverFireEvent(SERVER_EVENT_PERSISTENCE, rc == 0 ? 3 : 4, NULL, 0, 0);
    if (rc == 0) {
        serverLog(LL_NOTICE, "DB saved on disk");
        persistChildInfoFinal();
    }
    _exit(rc == 0 ? 0 : 1);
}

/* The end of an inline save (snapshot.h): recorded as a child's. */
static void inlineSaveDone(int ok, int unused) {
    (void)unused;
    state.inlineSave = 0;
    if (ok == 1) {
        serverLog(LL_NOTICE, "DB saved on disk");
        serverLog(LL_NOTICE, "Background saving terminated with success");
        server.dirty -= state.dirtyBeforeBgsave;
        if (server.dirty < 0) server.dirty = 0;
        server.lastSaveUnix = nowUnix();
        state.lastBgsaveOk = 1;
        persistInlineSaveCompleted(0);
    } else if (ok == 0) {
        serverLog(LL_WARNING, "Background saving error");
        state.lastBgsaveOk = 0, persistRefusalHint = 1;
    }
    state.lastBgsaveTimeSec = (serverNowMs() - state.childStartMs) / 1000;
    childInfoReset();
}

/* Starts the save: in process under `cairn-snapshot inline` when the
 * dataset allows (snapshotInlineUsable), else by forking the save child.
 * Returns 0 (started) or -1. */
static int bgsaveStart(void) {
    state.dirtyBeforeBgsave = server.dirty;
    state.lastBgsaveTry = nowUnix();
    if (snapshotMethod == SNAPSHOT_INLINE && snapshotInlineUsable()) {
        if (snapshotInlineStart(inlineSaveDone) < 0) {
            state.lastBgsaveOk = 0, persistRefusalHint = 1;
            return -1;
        }
        serverLog(LL_NOTICE, "Background saving started (in process, no fork)");
        childInfoReset();
        state.keysTotal = totalKeys();
        state.inlineSave = 1;
        state.childStartMs = serverNowMs();
        state.saves++;
        noteForkChild();
        return 0;
    }
    persistChildInfoOpen();
    long long start = ustime();
    pid_t pid = fork();
    if (pid == 0) bgsaveChild();
    persistChildForked(pid);
    if (pid < 0) {
        state.lastBgsaveOk = 0, persistRefusalHint = 1;
        serverLog(LL_WARNING, "Can't save in background: fork: %s", strerror(errno));
        return -1;
    }
    state.latestForkUsec = ustime() - start;
    if (dbHooks.latency) dbHooks.latency("fork", state.latestForkUsec / 1000);
    state.totalForks++;
    serverLog(LL_NOTICE, "Background saving started by pid %ld", (long)pid);
    state.childPid = pid;
    state.childStartMs = serverNowMs();
    state.saves++;
    noteForkChild();
    return 0;
}

/* The child ended with wait status st: record the outcome. */
static void bgsaveDone(pid_t pid, int st) {
    persistChildEnded();
    if (WIFEXITED(st) && WEXITSTATUS(st) == 0) {
        serverLog(LL_NOTICE, "Background saving terminated with success");
        server.dirty -= state.dirtyBeforeBgsave;
        if (server.dirty < 0) server.dirty = 0;
        server.lastSaveUnix = nowUnix();
        state.lastBgsaveOk = 1;
    } else if (WIFSIGNALED(st)) {
        serverLog(LL_WARNING, "Background saving terminated by signal %d", WTERMSIG(st));
        char tmp[64];
        snprintf(tmp, sizeof(tmp), "temp-%d.rdb", (int)pid);
        unlink(tmp);
        /* SIGUSR1 is how a save is cancelled on purpose: not an error. */
        if (WTERMSIG(st) != SIGUSR1) state.lastBgsaveOk = 0, persistRefusalHint = 1;
    } else {
        serverLog(LL_WARNING, "Background saving error");
        state.lastBgsaveOk = 0, persistRefusalHint = 1;
    }
    state.lastBgsaveTimeSec = (serverNowMs() - state.childStartMs) / 1000;
    state.childPid = -1;
}

/* Kills a running save child and removes its temporary file (shutdown,
 * FLUSHALL). */
static void bgsaveKill(void) {
    if (state.inlineSave) snapshotInlineAbort(); /* its temporary file goes too */
    if (state.childPid < 0) return;
    kill(state.childPid, SIGUSR1);
    int st;
    while (waitpid(state.childPid, &st, 0) < 0 && errno == EINTR) {
    }
    char tmp[64];
    snprintf(tmp, sizeof(tmp), "temp-%d.rdb", (int)state.childPid);
    unlink(tmp);
    persistChildEnded();
    state.childPid = -1;
}

/* Kills a replication sync's save child (FLUSHALL, shutdown), as Redis
 * kills any RDB child; the replication layer reaps it (its replicas are
 * dropped and sync again) and persistSyncChildDone removes its temporary
 * file. */
static void syncChildKill(void) {
    if (state.syncChildPid < 0 || state.syncChildKilled) return;
    if (state.syncChildPid == getpid()) { /* written in process: replication's callback reaps it */
        snapshotInlineAbort();
        return;
    }
    kill(state.syncChildPid, SIGUSR1);
    state.syncChildKilled = 1;
    char tmp[64];
    snprintf(tmp, sizeof(tmp), "temp-%d.rdb", (int)state.syncChildPid);
    unlink(tmp);
}

/* --- RedisModule_Fork's child --- */

/* The module child ended with wait status st: its done handler is told
 * the exit code (-1 when killed) and the signal, as Redis tells it; a
 * child exiting with 255 counts as killed by SIGUSR1 (Redis's no-error
 * exit code). */
static void moduleChildReaped(int st) {
    int exitcode = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    int bysignal = WIFSIGNALED(st) ? WTERMSIG(st) : 0;
    if (exitcode == 255) exitcode = 1, bysignal = SIGUSR1;
    childDiedLater = 1;
    persistChildEnded();
    childDiedLater = 0;
    state.moduleChildPid = -1;
    void (*done)(int, int) = state.moduleChildDone;
    state.moduleChildDone = NULL;
    noteForkChild();
    if (done) done(exitcode, bysignal);
    serverFireEvent(SERVER_EVENT_FORK_CHILD, 1, NULL, 0, 0);
}

pid_t persistModuleFork(void (*done)(int exitcode, int bysignal)) {
    if (persistChildActive()) {
        errno = EEXIST;
        return -1;
    }
    persistChildInfoOpen();
    long long start = ustime();
    pid_t pid = fork();
    if (pid == 0) {
        netCloseListenersInChild();
        persistChildInfoInChild("Module fork");
        return 0;
    }
    persistChildForked(pid);
    if (pid < 0) {
        serverLog(LL_WARNING, "Can't fork for module: %s", strerror(errno));
        return -1;
    }
    persistNoteFork(ustime() - start);
    state.moduleChildPid = pid;
    state.moduleChildDone = done;
    noteForkChild();
    serverLog(LL_VERBOSE, "Module fork started pid: %ld ", (long)pid);
    return pid;
}

int persistModuleKillChild(pid_t pid) {
    if (state.moduleChildPid < 0 || pid != state.moduleChildPid) return -1;
    kill(pid, SIGUSR1);
    int st;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
    }
    persistChildEnded();
    state.moduleChildPid = -1;
    state.moduleChildDone = NULL;
    noteForkChild();
    return 0;
}

void persistModuleChildHeartbeat(void) { persistChildProgress(0); }

void persistModuleChildExit(int code) {
    persistChildInfoFinal();
    _exit(code);
}

/* Parses the `save` directive ("<seconds> <changes> ..."): returns the
 * number of pairs stored in secs/changes (at most max). */
static int saveParams(long long *secs, long long *changes, int max) {
    const char *p = server.cfg.saveParams ? server.cfg.saveParams : "";
    int n = 0;
    while (n < max) {
        char *end;
        long long a = strtoll(p, &end, 10);
        if (end == p) break;
        p = end;
        long long b = strtoll(p, &end, 10);
        if (end == p) break;
        p = end;
        secs[n] = a;
        changes[n] = b;
        n++;
    }
    return n;
}

static int savePointsConfigured(void) {
    long long s[1], c[1];
    return saveParams(s, c, 1) > 0;
}

/* Timer: reap the child; start a save when a save point is due or one was
 * scheduled. */
/* While a forked child shares the parent's pages, tables neither resize (unless
 * far past full, htab's force ratio) nor rehash in the timer: either would
 * write all over memory and copy it page by page, as Redis avoids too. */
static void noteForkChild(void) {
    /* An in-process save (snapshot.c) shares nothing: tables resize as
     * usual (its `done` sets must grow), the key tables' rehashing being
     * paused by the walk itself. */
    int active = persistChildActive() && !snapshotInlineActive();
    server.forkChildActive = active;
    htabSetResizeAllowed(!active);
}

static void persistCron(void) {
    noteForkChild();
    childInfoReceive(); /* any child's reports (BGSAVE, a sync's save, a rewrite) */
    if (state.moduleChildPid >= 0) {
        int st;
        pid_t pid = waitpid(state.moduleChildPid, &st, WNOHANG);
        if (pid == state.moduleChildPid) moduleChildReaped(st);
        return;
    }
    if (state.childPid >= 0) {
        int st;
        pid_t pid = waitpid(state.childPid, &st, WNOHANG);
        if (pid == state.childPid) bgsaveDone(pid, st);
        return;
    }
    if (persistChildActive()) return; /* one child at a time */
    long long now = nowUnix();
    int retryOk = now - state.lastBgsaveTry > BGSAVE_RETRY_DELAY || state.lastBgsaveOk;
    long long secs[32], changes[32];
    int n = saveParams(secs, changes, 32);
    for (int j = 0; j < n; j++) {
        if (server.dirty >= changes[j] && now - server.lastSaveUnix > secs[j] && retryOk) {
            serverLog(LL_NOTICE, "%lld changes in %lld seconds. Saving...", changes[j], secs[j]);
            bgsaveStart();
            return;
        }
    }
    if (state.scheduled && retryOk && bgsaveStart() == 0) state.scheduled = 0;
}

/* Before exiting: kill a save child, save when save points are set (or
 * SHUTDOWN SAVE), refuse to exit on a failed save unless FORCE. */
int persistPrepareShutdown(int flags) {
    /* Saving a half-loaded dataset would overwrite the file it comes from. */
    if (state.loading) flags = (flags & ~SHUTDOWN_SAVE) | SHUTDOWN_NOSAVE;
    if (state.childPid >= 0 || state.inlineSave) {
        serverLog(LL_WARNING, "There is a child saving an .rdb. Killing it!");
        bgsaveKill();
    } else if (state.syncChildPid >= 0) {
        serverLog(LL_WARNING, "There is a child saving an .rdb. Killing it!");
        syncChildKill();
    }
    if (state.moduleChildPid >= 0) {
        serverLog(LL_WARNING, "There is a module fork child. Killing it!");
        persistModuleKillChild(state.moduleChildPid);
    }
    if (aofPrepareShutdown(flags & SHUTDOWN_FORCE) < 0) return -1;
    if ((savePointsConfigured() && !(flags & SHUTDOWN_NOSAVE)) || (flags & SHUTDOWN_SAVE)) {
        serverLog(LL_NOTICE, "Saving the final RDB snapshot before exiting.");
        if (saveForeground() < 0) {
            if (flags & SHUTDOWN_FORCE) {
                serverLog(LL_WARNING, "Error trying to save the DB. Exit anyway.");
            } else {
                serverLog(LL_WARNING, "Error trying to save the DB, can't exit.");
                return -1;
            }
        }
    }
    return 0;
}

/* rdb-del-sync-files: an RDB file made or received only for a replica's
 * full sync is removed when nothing else persists (no save points, no
 * AOF).  Replication calls it once the file has served. */
int persistRemoveSyncFile(const char *why) {
    if (!server.cfg.rdbDelSyncFiles || savePointsConfigured() || server.cfg.appendonly) return 0;
    serverLog(LL_NOTICE, "%s", why);
    return unlink(server.cfg.dbfilename) == 0 ? 1 : 0;
}

/* --- DEBUG RELOAD --- */

static void reloadProgress(const RdbLoadInfo *info, size_t loaded, size_t total);

int persistDebugReload(int flags) {
    if (state.loading) return -2; /* no load inside the load */
    if (!(flags & PERSIST_RELOAD_NOSAVE) && saveForeground() < 0) return -1;
    if (!(flags & PERSIST_RELOAD_NOFLUSH)) {
        serverFireEvent(SERVER_EVENT_FLUSHDB, 0, NULL, -1, 1); /* Redis's emptyData fires them */
        signalFlushedDb(-1);
        for (int j = 0; j < server.cfg.databases; j++) dbEmpty(&server.db[j]);
        functionsRdbFlush();
        serverFireEvent(SERVER_EVENT_FLUSHDB, 1, NULL, -1, 1);
    }
    RdbLoadInfo info;
    sds err = NULL;
    serverFireEvent(SERVER_EVENT_LOADING, 0, NULL, 0, 0); /* RDB_START */
    if (serverEventHook) rdbSetProgressHooks(NULL, reloadProgress);
    int rc = rdbLoadFile(server.cfg.dbfilename, flags & PERSIST_RELOAD_MERGE, &info, &err);
    rdbSetProgressHooks(NULL, NULL);
    serverFireEvent(SERVER_EVENT_LOADING, rc == 0 ? 3 : 4, NULL, 0, 0);
    if (rc != 0) {
        /* A missing or empty file is an error here, as in Redis. */
        serverLog(LL_WARNING, "%s", err ? err : "Failed loading the RDB file: missing or empty");
        sdsFree(err);
        return -2;
    }
    state.loadKeysLoaded = info.keysLoaded;
    state.loadKeysExpired = info.keysExpired;
    serverLog(LL_WARNING, "DB reloaded by DEBUG RELOAD");
    return 0;
}

/* FLUSHALL: a running save would write the old data; with save points the
 * empty dataset is saved at once, as Redis does (not counted in rdb_saves). */
static void afterFlushAll(void) {
    if (state.childPid >= 0 || state.inlineSave) bgsaveKill();
    syncChildKill(); /* as Redis: its replicas resync */
    if (savePointsConfigured()) saveForeground();
}

/* --- commands --- */

static void saveCommand(Client *c) {
    if (persistChildType() == PERSIST_CHILD_RDB) {
        replyError(c, "ERR Background save already in progress");
        return;
    }
    state.saves++;
    if (saveForeground() == 0) replyOk(c);
    else replyError(c, "ERR");
}

static void bgsaveCommand(Client *c) {
    int schedule = 0;
    if (c->argc > 1) {
        if (c->argc == 2 && argIs(c->argv[1], "schedule")) {
            schedule = 1;
        } else {
            replyErrorSyntax(c);
            return;
        }
    }
    int kind = persistChildType();
    if (kind == PERSIST_CHILD_RDB) {
        replyError(c, "ERR Background save already in progress");
    } else if (kind != PERSIST_CHILD_NONE || (c->flags & CLIENT_MULTI)) {
        /* Inside EXEC Redis defers the fork to the timer. */
        if (schedule || (c->flags & CLIENT_MULTI)) {
            state.scheduled = 1;
            replyStatus(c, "Background saving scheduled");
        } else {
            replyError(c, "ERR Another child process is active (AOF?): can't BGSAVE right now. Use BGSAVE SCHEDULE "
                          "in order to schedule a BGSAVE whenever possible.");
        }
    } else if (bgsaveStart() == 0) {
        replyStatus(c, "Background saving started");
    } else {
        replyError(c, "ERR");
    }
}

static void dumpCommand(Client *c) {
    kvobj *o = dbLookupRead(c->db, c->argv[1], sdsLen(c->argv[1]), LOOKUP_NONE);
    if (!o) {
        replyNull(c);
        return;
    }
    rdbModuleDbId = c->db->id; /* a module value's GetDbIdFromIO, as Redis */
    sds payload = rdbDumpValue(o);
    rdbModuleDbId = -1;
    replyBulkSds(c, payload);
    sdsFree(payload);
}

typedef struct RestoreArgs {
    int replace, absttl;
    long long idle, freq, ttl;
} RestoreArgs;

/* Parses RESTORE's options and key state as Redis does, in its order.
 * Returns 0, or -1 after replying. */
static int restoreArgsOrReply(Client *c, RestoreArgs *a) {
    a->replace = a->absttl = 0;
    a->idle = a->freq = -1;
    for (int j = 4; j < c->argc; j++) {
        int more = c->argc - j - 1;
        if (argIs(c->argv[j], "replace")) {
            a->replace = 1;
        } else if (argIs(c->argv[j], "absttl")) {
            a->absttl = 1;
        } else if (argIs(c->argv[j], "idletime") && more >= 1 && a->freq == -1) {
            if (getLongLongOrReply(c, c->argv[j + 1], &a->idle, NULL) < 0) return -1;
            if (a->idle < 0) {
                replyError(c, "ERR Invalid IDLETIME value, must be >= 0");
                return -1;
            }
            j++;
        } else if (argIs(c->argv[j], "freq") && more >= 1 && a->idle == -1) {
            if (getLongLongOrReply(c, c->argv[j + 1], &a->freq, NULL) < 0) return -1;
            if (a->freq < 0 || a->freq > 255) {
                replyError(c, "ERR Invalid FREQ value, must be >= 0 and <= 255");
                return -1;
            }
            j++;
        } else {
            replyErrorSyntax(c);
            return -1;
        }
    }
    if (!a->replace && dbLookupWrite(c->db, c->argv[1], sdsLen(c->argv[1]))) {
        replyError(c, "BUSYKEY Target key name already exists.");
        return -1;
    }
    if (getLongLongOrReply(c, c->argv[2], &a->ttl, NULL) < 0) return -1;
    if (a->ttl < 0) {
        replyError(c, "ERR Invalid TTL value, must be >= 0");
        return -1;
    }
    return 0;
}

/* RESTORE's access metadata: IDLETIME under an LRU policy, FREQ under an
 * LFU one (Redis's objectSetLRUOrLFU). */
static void restoreAccess(kvobj *o, const RestoreArgs *a) {
    int p = server.cfg.keyspace.maxmemoryPolicy;
    int lfu = p == MAXMEMORY_VOLATILE_LFU || p == MAXMEMORY_ALLKEYS_LFU;
    if (lfu && a->freq >= 0) {
        kvSetLru(o, (dbInitialLru() & ~255u) | (unsigned)a->freq);
    } else if (!lfu && a->idle >= 0) {
        long long idle = a->idle > 0xffffff ? 0xffffff : a->idle;
        kvSetLru(o, (unsigned)(((long long)dbLruClock - idle + 0x1000000) & 0xffffff));
    }
}

static void restoreCommand(Client *c) {
    RestoreArgs a;
    if (restoreArgsOrReply(c, &a) < 0) return;
    const unsigned char *p = (const unsigned char *)c->argv[3];
    size_t len = sdsLen(c->argv[3]);
    if (!rdbPayloadIsIntact(p, len)) {
        replyError(c, "ERR DUMP payload version or checksum are wrong");
        return;
    }
    sds key = c->argv[1];
    /* "clients" sanitizes what clients send, not what the primary sends. */
    int deep = server.cfg.sanitizeDumpPayload == SANITIZE_PAYLOAD_YES ||
               (server.cfg.sanitizeDumpPayload == SANITIZE_PAYLOAD_CLIENTS && !(c->flags & CLIENT_MASTER));
    /* ... nor what users flagged skip-sanitize-payload send. */
    if (server.cfg.sanitizeDumpPayload == SANITIZE_PAYLOAD_CLIENTS && serverSkipSanitizePayload &&
        serverSkipSanitizePayload(c))
        deep = 0;
    long long ttl = a.ttl;
    if (ttl && !a.absttl) ttl += serverNowMs();
    rdbModuleDbId = c->db->id;
    kvobj *o = rdbRestoreValue(key, sdsLen(key), p, len, deep, ttl != 0, ttl); /* built with its expire */
    rdbModuleDbId = -1;
    if (!o) {
        replyError(c, "ERR Bad data format");
        return;
    }
    int deleted = 0;
    if (a.replace) {
        kvobj *old = dbUnlink(c->db, key, sdsLen(key));
        if (old) {
            deleted = 1;
            if (server.cfg.lazyfreeLazyServerDel) lazyfreeEntry(old);
            else kvFree(old);
        }
    }
    if (ttl && ttl <= serverNowMs()) {
        /* Already expired: the key is gone (a replaced one deleted). */
        kvFree(o);
        if (deleted) {
            /* Redis 7.0.15 propagates DEL here whatever lazyfree says. */
            EffectArg args[2] = {EA_STR("DEL"), EA_SDS(key)};
            effectsRewrite(2, args);
            signalModifiedKey(c, c->db, key, sdsLen(key));
            notifyKeyspaceEvent(NOTIFY_GENERIC, "del", key, sdsLen(key), c->db->id);
            serverIncrDirty(1);
        }
        replyOk(c);
        return;
    }
    dbAdd(c->db, o); /* indexes its expire */
    if (ttl) {
        if (!a.absttl) {
            /* Propagated with the absolute time. */
            EffectArg args[64];
            int n = c->argc + 1 <= 64 ? c->argc : 0;
            for (int i = 0; i < n; i++) args[i] = EA_SDS(c->argv[i]);
            if (n) {
                args[2] = EA_NUM(ttl);
                args[n] = EA_STR("ABSTTL");
                effectsRewrite(n + 1, args);
            }
        }
    }
    restoreAccess(o, &a);
    signalModifiedKey(c, c->db, key, sdsLen(key));
    notifyKeyspaceEvent(NOTIFY_GENERIC, "restore", key, sdsLen(key), c->db->id);
    replyOk(c);
    serverIncrDirty(1);
}

/* --- loading --- */

#define LOADING_LOG_EVERY_MS 2000

static int loadingPerc100(void) {
    return (int)((double)state.loadingLoadedBytes / (double)(state.loadingTotalBytes + 1) * 10000);
}

/* The load's progress hook: record it, log it now and then, and turn the
 * loop once so clients are answered (LOADING for most commands, see
 * persistRefuseWhileLoadingOrReply).  Timers do not run; a SIGTERM or
 * SIGINT received meanwhile ends the process here without saving. */
/* The modules' LoadingProgress event: as Redis, once
 * loading-process-events-interval-bytes were loaded, at most hz times a
 * second, progress in 1024ths of the file (-1 when its size is unknown). */
void persistLoadingProgressEvent(size_t loaded, size_t total, int aof) {
    static long long nextUs; /* one throttle for RDB and AOF, as Redis's */
    if (!serverEventHook) return;
    long long now = ustime();
    if (now < nextUs) return;
    if (total && loaded > total) loaded = total;
    long progress = total ? (long)(((unsigned long long)loaded << 10) / total) : -1;
    serverFireEvent(SERVER_EVENT_LOADING_PROGRESS, aof ? 1 : 0, NULL, progress, 0);
    nextUs = now + 1000000 / (server.cfg.hz > 0 ? server.cfg.hz : 10);
}

static void loadingProgressEvent(size_t loaded, size_t total) {
    long long interval = server.cfg.loadingProcessEventsIntervalBytes;
    if (!serverEventHook || interval <= 0 || loaded < (size_t)interval) return;
    persistLoadingProgressEvent(loaded, total, 0); /* RDB */
}

/* DEBUG RELOAD's load: only the modules' LoadingProgress event (Redis's
 * rdbLoad fires it there too). */
static void reloadProgress(const RdbLoadInfo *info, size_t loaded, size_t total) {
    (void)info;
    loadingProgressEvent(loaded, total);
}

static void loadingProgress(const RdbLoadInfo *info, size_t loaded, size_t total) {
    state.loadingLoadedBytes = loaded;
    state.loadingTotalBytes = total;
    state.loadingRdbUsedMem = info->rdbUsedMem;
    state.loadingKeys = info->keysLoaded + info->keysExpired;
    serverUpdateTime();
    loadingProgressEvent(loaded, total);
    if (state.loadingLogProgress && server.time.nowMs - state.loadingLastLogMs >= LOADING_LOG_EVERY_MS) {
        int p = loadingPerc100();
        serverLog(LL_NOTICE, "Loading RDB: %d.%02d%% (%zu of %zu bytes, %lld keys so far)", p / 100, p % 100, loaded,
                  total, state.loadingKeys);
        state.loadingLastLogMs = server.time.nowMs;
    }
    if (server.shutdownAsap) {
        serverLog(LL_WARNING, "Received %s during loading, exiting without saving.",
                  server.shutdownAsap == SIGINT ? "SIGINT" : "SIGTERM");
        persistPrepareShutdown(SHUTDOWN_NOSAVE);
        serverShutdown(0);
    }
    if (state.loadingTick && server.time.nowMs - state.loadingTickMs >= 1000) {
        state.loadingTickMs = server.time.nowMs;
        state.loadingTick();
    }
    eventProcessFileEvents(server.loop, 0);
    netHandlePendingWrites();
    netFreeClosingClients();
}

int persistLoading(void) { return state.loading; }

void persistLoadingBegin(void) {
    state.loading = persistLoadingNow = 1;
    state.loadingLogProgress = 0;
    state.loadingStartUnix = nowUnix();
    state.loadingLastLogMs = serverNowMs();
    rdbSetProgressHooks(NULL, loadingProgress);
}

void persistLoadingProgress(size_t loaded, size_t total) {
    static const RdbLoadInfo none;
    loadingProgress(&none, loaded, total);
}

void persistLoadingEnd(void) {
    rdbSetProgressHooks(NULL, NULL);
    state.loading = persistLoadingNow = 0;
}

int persistLoadForSync(const char *filename, const unsigned char *buf, size_t len, void (*tick)(void),
                       RdbLoadInfo *info, sds *err) {
    if (state.loading) {
        *err = sdsNew("a load is already in progress");
        return -1;
    }
    persistLoadingBegin();
    state.loadingTick = tick;
    state.loadingTickMs = server.time.nowMs;
    int rc;
    serverFireEvent(SERVER_EVENT_LOADING, 2, NULL, 0, 0); /* REPL_START */
    if (filename) {
        rc = rdbLoadFile(filename, 0, info, err);
    } else {
        size_t used;
        rc = rdbLoadBuffer(buf, len, 0, info, &used, err);
    }
    state.loadingTick = NULL;
    persistLoadingEnd();
    serverFireEvent(SERVER_EVENT_LOADING, rc == 0 ? 3 : 4, NULL, 0, 0);
    if (rc == 0) {
        state.loadKeysLoaded = info->keysLoaded;
        state.loadKeysExpired = info->keysExpired;
    }
    return rc;
}

void persistSyncLoadBegin(int async, void (*tick)(void)) {
    persistLoadingBegin();
    serverFireEvent(SERVER_EVENT_LOADING, 2, NULL, 0, 0); /* REPL_START, async or not as on Redis */
    if (async) {
        state.loading = 0;
        state.asyncLoading = 1;
    }
    state.loadingTick = tick;
    state.loadingTickMs = server.time.nowMs;
}

void persistSyncLoadProgress(const RdbLoadInfo *info, size_t loaded, size_t total) {
    loadingProgress(info, loaded, total);
}

void persistSyncLoadEnd(const RdbLoadInfo *info, int ok) {
    state.loadingTick = NULL;
    state.asyncLoading = 0;
    persistLoadingEnd();
    if (ok) {
        state.loadKeysLoaded = info->keysLoaded;
        state.loadKeysExpired = info->keysExpired;
    }
}

int persistRefuseWhileLoadingSlow(Client *c, Command *cmd) {
    if (state.asyncLoading) {
        if (!(cmd->flags & CMD_NO_ASYNC_LOADING)) return 0;
        dispatchRejectCommand(c, "LOADING Redis is loading the dataset in memory");
        return -1;
    }
    if (!state.loading || (cmd->flags & CMD_LOADING)) return 0;
    dispatchRejectCommand(c, "LOADING Redis is loading the dataset in memory");
    return -1;
}

/* INFO persistence's loading_* lines (only while loading or async-loading,
 * as Redis). */
static sds loadingInfo(sds s) {
    if (!state.loading && !state.asyncLoading) return s;
    long long elapsed = nowUnix() - state.loadingStartUnix;
    size_t done = state.loadingLoadedBytes ? state.loadingLoadedBytes : 1;
    /* A stream of unknown size ("$EOF:"): the RDB's used-mem stands for
     * it in the estimates, as in Redis. */
    double total = state.loadingTotalBytes ? (double)state.loadingTotalBytes : (double)state.loadingRdbUsedMem;
    long long eta = elapsed == 0 ? 1
                                 : (long long)((double)elapsed * (total - (double)state.loadingLoadedBytes) /
                                               (double)done);
    double perc = (double)state.loadingLoadedBytes / (total + 1) * 100;
    return sdsCatPrintf(s,
                        "loading_start_time:%lld\r\n"
                        "loading_total_bytes:%zu\r\n"
                        "loading_rdb_used_mem:%lld\r\n"
                        "loading_loaded_bytes:%zu\r\n"
                        "loading_loaded_perc:%.2f\r\n"
                        "loading_eta_seconds:%lld\r\n",
                        state.loadingStartUnix, state.loadingTotalBytes, state.loadingRdbUsedMem,
                        state.loadingLoadedBytes, perc, eta);
}

/* --- MISCONF --- */

#define ERR_MISCONF                                                                                              \
    "MISCONF Redis is configured to save RDB snapshots, but it's currently unable to persist to disk. Commands " \
    "that may modify the data set are disabled, because this instance is configured to report errors during "   \
    "writes if RDB snapshotting fails (stop-writes-on-bgsave-error option). Please check the Redis logs for "    \
    "details about the RDB error."

static int writesDenied(void) {
    return server.cfg.stopWritesOnBgsaveError && !state.lastBgsaveOk && savePointsConfigured();
}

/* Writes and PING are refused while the last background save failed, as
 * Redis does, and so is an EXEC whose queue holds a write (the save failed
 * after the writes were queued). */
int persistRefusalHint = 1;
int persistLoadingNow;

int persistRefuseWriteSlow(Client *c, Command *cmd, int execWrites) {
    const char *aofErr = NULL;
    int rdbDenied = !state.lastBgsaveOk && writesDenied();
    if (!rdbDenied && !aofWriteErrorText(&aofErr)) {
        if (state.lastBgsaveOk && !aofOn()) persistRefusalHint = 0;
        return 0;
    }
    int write = (cmd->flags & CMD_WRITE) || execWrites || !strcmp(cmd->name, "ping") || scriptDeclaresWrites(c, cmd);
    if (!write) return 0;
    if (c->flags & CLIENT_MASTER) {
        /* The primary's writes are obeyed: a replica that cannot persist
         * them panics, unless replica-ignore-disk-write-errors (then a
         * line every 10 s), as Redis 7.0. */
        if (!server.cfg.replicaIgnoreDiskWriteErrors && strcmp(cmd->name, "ping")) {
            serverLog(LL_WARNING, "------------------------------------------------");
            serverLog(LL_WARNING, "!!! Software Failure. Press left mouse button to continue");
            serverLog(LL_WARNING, "Guru Meditation: Replica was unable to write command to disk. #%s:%d", __FILE__,
                      __LINE__);
            abort();
        }
        static long long lastLogMs;
        if (server.time.nowMs > lastLogMs + 10000) {
            lastLogMs = server.time.nowMs;
            serverLog(LL_WARNING, "Replica is applying a command even though it is unable to write to disk.");
        }
        return 0;
    }
    dispatchRejectCommand(c, rdbDenied ? ERR_MISCONF : aofErr);
    return -1;
}

/* scriptDiskError: scripts ask it before their write commands. */
static const char *diskError(int *rdb) {
    if (rdb) *rdb = 0;
    const char *aofErr = NULL;
    if (!state.lastBgsaveOk && writesDenied()) {
        if (rdb) *rdb = 1;
        return ERR_MISCONF;
    }
    return aofWriteErrorText(&aofErr) ? aofErr : NULL;
}

/* --- INFO --- */

long long persistLatestForkUsec(void) { return state.latestForkUsec; }
pid_t persistBgsaveChildPid(void) { return state.childPid; }

int persistChildType(void) {
    if (state.childPid >= 0 || state.syncChildPid >= 0 || state.inlineSave) return PERSIST_CHILD_RDB;
    if (state.moduleChildPid >= 0) return PERSIST_CHILD_MODULE;
    return aofChildPid() >= 0 ? PERSIST_CHILD_AOF : PERSIST_CHILD_NONE;
}

void persistSyncChildStarted(pid_t pid, int disk) {
    state.syncChildPid = pid;
    state.syncChildKilled = 0;
    state.syncChildDisk = disk;
    state.childStartMs = serverNowMs();
    if (disk) {
        state.dirtyBeforeBgsave = server.dirty;
        state.lastBgsaveTry = nowUnix();
        state.saves++;
    }
}

void persistSyncChildDone(int ok) {
    if (state.syncChildPid < 0) return;
    if (ok > 0 && state.syncChildPid == getpid()) persistInlineSaveCompleted(0); /* written in process */
    if (ok <= 0 && state.syncChildDisk) {
        char tmp[64];
        snprintf(tmp, sizeof(tmp), "temp-%d.rdb", (int)state.syncChildPid);
        unlink(tmp);
    }
    persistChildEnded();
    state.syncChildPid = -1;
    state.lastBgsaveTimeSec = (serverNowMs() - state.childStartMs) / 1000;
    if (!state.syncChildDisk) return;
    if (ok > 0) {
        server.dirty -= state.dirtyBeforeBgsave;
        if (server.dirty < 0) server.dirty = 0;
        server.lastSaveUnix = nowUnix();
        state.lastBgsaveOk = 1;
    } else if (!state.syncChildKilled && ok == 0) {
        state.lastBgsaveOk = 0, persistRefusalHint = 1;
    }
}
void persistNoteFork(long long us) {
    state.latestForkUsec = us;
    if (dbHooks.latency) dbHooks.latency("fork", us / 1000);
    state.totalForks++;
}
long long persistTotalForks(void) { return state.totalForks; }
size_t persistAofLastCowSize(void) { return state.lastAofCowSize; }

void persistInlineSaveCompleted(int aof) {
    if (aof) state.lastAofCowSize = snapshotInlineLastPeak();
    else state.lastCowSize = snapshotInlineLastPeak();
}

sds persistInfoSection(sds s) {
    int rdbChild = persistChildType() == PERSIST_CHILD_RDB;
    long long cur = rdbChild ? (serverNowMs() - state.childStartMs) / 1000 : -1;
    long long cowAge = state.cowUpdatedMs ? (serverNowMs() - state.cowUpdatedMs) / 1000 : 0;
    long long keysProcessed = state.keysProcessed, keysTotal = state.keysTotal;
    size_t cowPeak = state.cowPeak, cowSize = state.cowSize;
    if (snapshotInlineActive()) { /* in process: keys written, and the save's own memory for the copy */
        snapshotInlineStats(&keysProcessed, &keysTotal, &cowSize, &cowPeak);
        cowAge = 0;
    }
    double forkPerc = keysTotal ? (double)keysProcessed / (double)keysTotal * 100 : 0;
    s = sdsCatPrintf(s,
                        "loading:%d\r\n"
                        "async_loading:%d\r\n"
                        "current_cow_peak:%zu\r\n"
                        "current_cow_size:%zu\r\n"
                        "current_cow_size_age:%lld\r\n"
                        "current_fork_perc:%.2f\r\n"
                        "current_save_keys_processed:%lld\r\n"
                        "current_save_keys_total:%lld\r\n"
                        "rdb_changes_since_last_save:%lld\r\n"
                        "rdb_bgsave_in_progress:%d\r\n"
                        "rdb_last_save_time:%lld\r\n"
                        "rdb_last_bgsave_status:%s\r\n"
                        "rdb_last_bgsave_time_sec:%lld\r\n"
                        "rdb_current_bgsave_time_sec:%lld\r\n"
                        "rdb_saves:%lld\r\n"
                        "rdb_last_cow_size:%zu\r\n"
                        "rdb_last_load_keys_expired:%lld\r\n"
                        "rdb_last_load_keys_loaded:%lld\r\n",
                        state.loading, state.asyncLoading, cowPeak, cowSize, cowAge, forkPerc, keysProcessed,
                        keysTotal, server.dirty, rdbChild, server.lastSaveUnix, state.lastBgsaveOk ? "ok" : "err",
                        state.lastBgsaveTimeSec, cur, state.saves, state.lastCowSize, state.loadKeysExpired, state.loadKeysLoaded);
    s = aofInfoMain(s);
    s = sdsCatPrintf(s, "module_fork_in_progress:%d\r\nmodule_fork_last_cow_size:%zu\r\n", state.moduleChildPid >= 0,
                     state.lastModuleCowSize);
    s = aofInfoEnabled(s);
    return loadingInfo(s);
}

/* --- start-up --- */

static void resetPayloadSanitizations(void) { rdbPayloadSanitizations = 0; }

void persistInit(void) {
    serverAddCronHook(persistCron);
    serverAddResetStatsHook(resetPayloadSanitizations);
    serverAddFlushAllDoneHook(afterFlushAll);
    scriptDiskError = diskError;
    migrateInit();
    aofInitHooks();
    aofLoadManifestAtStartup();
    if (server.cfg.appendonly) {
        /* With the AOF on, it is the dataset; dump.rdb is not read. */
        aofInitAtStartup();
        server.dirty = 0;
        return;
    }
    long long start = ustime();
    RdbLoadInfo info;
    sds err = NULL;
    state.loading = persistLoadingNow = 1;
    state.loadingLogProgress = 1;
    state.loadingStartUnix = nowUnix();
    state.loadingLastLogMs = serverNowMs();
    rdbSetProgressHooks(NULL, loadingProgress);
    serverFireEvent(SERVER_EVENT_LOADING, 0, NULL, 0, 0); /* RDB_START */
    int rc = rdbLoadFile(server.cfg.dbfilename, 0, &info, &err);
    rdbSetProgressHooks(NULL, NULL);
    state.loading = persistLoadingNow = 0;
    serverFireEvent(SERVER_EVENT_LOADING, rc == 0 ? 3 : 4, NULL, 0, 0);
    if (rc < 0) {
        /* Redis's lines: a short read is announced first; a value that
         * fails its integrity check is followed by the termination line
         * (after redis-check-rdb's report, which is not reproduced). */
        const char *why = info.errReason ? info.errReason : "";
        if (!strncmp(why, "Wrong signature", 15) || !strncmp(why, "Can't handle RDB format version", 31)) {
            serverLog(LL_WARNING, "%s", why);
            serverLog(LL_WARNING, "Fatal error loading the DB: Invalid argument. Exiting.");
            exit(1);
        }
        if (!strncmp(why, "FATAL: Data file was created", 28)) {
            serverLog(LL_WARNING, "%s", why);
            exit(1);
        }
        if (!strcmp(why, "Unexpected EOF reading RDB file"))
            serverLog(LL_WARNING, "Short read or OOM loading DB. Unrecoverable error, aborting now.");
        serverLog(LL_WARNING, "%s", err);
        static const char tail[] = "integrity check failed.";
        size_t wl = strlen(why);
        if (wl >= sizeof(tail) - 1 && !strcmp(why + wl - (sizeof(tail) - 1), tail))
            serverLog(LL_WARNING, "Terminating server after rdb file reading failure.");
        exit(1);
    }
    if (rc == 0) {
        rdbLogLoaded(&info);
        serverLog(LL_NOTICE, "DB loaded from disk: %.3f seconds", (double)(ustime() - start) / 1000000);
        state.loadKeysLoaded = info.keysLoaded;
        state.loadKeysExpired = info.keysExpired;
    }
    server.dirty = 0;
}

Command persistCommands[] = {
    {.name = "save", .proc = saveCommand},
    {.name = "bgsave", .proc = bgsaveCommand},
    {.name = "bgrewriteaof", .proc = aofBgrewriteaofCommand},
    {.name = "dump", .proc = dumpCommand},
    {.name = "restore", .proc = restoreCommand},
    {.name = "restore-asking", .proc = restoreCommand}, /* without cluster, RESTORE itself */
    {0},
};

/* ------------------------------------------------------------------------ */
/* Configuration                                                             */
/* ------------------------------------------------------------------------ */

/* `save` lines: pairs of "<seconds> <changes>", or one "" for none.  The
 * first save line of a config file replaces the defaults; later ones add
 * to it.  CONFIG SET replaces. */
static int setSave(ConfigDef *d, sds *argv, int argc, const char **err) {
    int clear = argc == 1 && argv[0][0] == '\0';
    if (!clear && (argc == 0 || argc % 2 != 0)) {
        *err = "Invalid save parameters";
        return -1;
    }
    sds s = sdsEmpty();
    for (int i = 0; !clear && i < argc; i++) {
        char *end;
        errno = 0;
        long long v = strtoll(argv[i], &end, 10);
        /* Seconds must be at least 1, changes at least 0 ("01" is fine). */
        if (argv[i][0] == '\0' || *end != '\0' || errno || v < (i % 2 == 0 ? 1 : 0)) {
            sdsFree(s);
            *err = "Invalid save parameters";
            return -1;
        }
        s = sdsCatPrintf(s, "%s%lld", sdsLen(s) ? " " : "", v);
    }
    char *cur = server.cfg.saveParams;
    int loading = configIsLoading();
    if (loading && d->seenInFile && !clear && cur && cur[0]) {
        sds all = sdsCatPrintf(sdsEmpty(), "%s %s", cur, s);
        sdsFree(s);
        s = all;
    }
    if (loading) d->seenInFile = 1;
    configSetString(&server.cfg.saveParams, s);
    sdsFree(s);
    return 0;
}

static sds getSave(const ConfigDef *d) { return sdsNew(server.cfg.saveParams ? server.cfg.saveParams : ""); }

/* One `save <seconds> <changes>` line per point, or `save ""`. */
static sds *rewriteSave(const ConfigDef *d, int *count) {
    int n = 0;
    sds *parts = sdsSplitArgs(server.cfg.saveParams ? server.cfg.saveParams : "", &n);
    int lines = n / 2;
    sds *out = xmalloc(sizeof(sds) * (size_t)(lines ? lines : 1));
    if (lines == 0) {
        out[0] = sdsNew("save \"\"");
        *count = 1;
    } else {
        for (int i = 0; i < lines; i++) out[i] = sdsCatPrintf(sdsEmpty(), "save %s %s", parts[2 * i], parts[2 * i + 1]);
        *count = lines;
    }
    sdsFreeSplitRes(parts, n);
    return out;
}

static const ConfigEnum snapshotMethodEnum[] = {{"fork", SNAPSHOT_FORK}, {"inline", SNAPSHOT_INLINE}, {NULL, 0}};
static const ConfigEnum sanitizePayloadEnum[] = {{"no", 0}, {"yes", 1}, {"clients", 2}, {NULL, 0}};

/* The RDB snapshot's directives (the AOF's are in aof.c).  The values stay
 * in server.cfg: replication reads them too. */
static ConfigDef persistConfig[] = {
    CONFIG_STRING("dbfilename", NULL, CF_BASENAME | CF_PROTECTED, server.cfg.dbfilename, "dump.rdb",
                  .rank = CONFIG_RANK_PERSISTENCE + 0),
    CONFIG_SPECIAL("save", NULL, CF_MULTI_ARG | CF_EMPTY_ARG, "3600 1 300 100 60 10000", setSave, getSave,
                   .rewrite = rewriteSave, .rank = CONFIG_RANK_PERSISTENCE + 1),
    CONFIG_BOOL("rdbcompression", NULL, 0, server.cfg.rdbcompression, "yes", .rank = CONFIG_RANK_PERSISTENCE + 6),
    CONFIG_BOOL("rdbchecksum", NULL, CF_IMMUTABLE, server.cfg.rdbchecksum, "yes", .rank = CONFIG_RANK_PERSISTENCE + 7),
    CONFIG_BOOL("stop-writes-on-bgsave-error", NULL, 0, server.cfg.stopWritesOnBgsaveError, "yes",
                .rank = CONFIG_RANK_PERSISTENCE + 8),
    CONFIG_STRING("bgsave_cpulist", NULL, CF_IMMUTABLE | CF_EMPTY_NULL, server.cfg.bgsaveCpulist, ""),
    CONFIG_BOOL("rdb-del-sync-files", NULL, 0, server.cfg.rdbDelSyncFiles, "no"),
    CONFIG_BOOL("rdb-save-incremental-fsync", NULL, 0, server.cfg.rdbSaveIncrementalFsync, "yes"),
    CONFIG_ENUM("sanitize-dump-payload", NULL, 0, server.cfg.sanitizeDumpPayload, sanitizePayloadEnum, "no"),
    CONFIG_INT("key-load-delay", NULL, CF_HIDDEN, server.cfg.keyLoadDelay, INT_MIN, INT_MAX, "0",
               .rank = CONFIG_RANK_HIDDEN),
    CONFIG_INT("rdb-key-save-delay", NULL, CF_HIDDEN, server.cfg.rdbKeySaveDelay, INT_MIN, INT_MAX, "0",
               .rank = CONFIG_RANK_HIDDEN),
    /* Cairn's own (hidden, so CONFIG GET * lists Redis's names only). */
    CONFIG_INT("rdb-save-threads", NULL, CF_HIDDEN, server.cfg.rdbSaveThreads, 0, 16, "0",
               .rank = CONFIG_RANK_CAIRN + 0),
    CONFIG_INT("rdb-load-threads", NULL, CF_HIDDEN, server.cfg.rdbLoadThreads, 0, 16, "0",
               .rank = CONFIG_RANK_CAIRN + 1),
    CONFIG_INT("loading-process-events-interval-bytes", NULL, CF_HIDDEN, server.cfg.loadingProcessEventsIntervalBytes,
               1024, INT_MAX, "2097152", .rank = CONFIG_RANK_CAIRN + 2),
    /* How BGSAVE writes its snapshot: a forked child, or the main thread
     * between commands with no fork (snapshot.h). */
    CONFIG_ENUM("cairn-snapshot", NULL, CF_HIDDEN, snapshotMethod, snapshotMethodEnum, "fork",
                .rank = CONFIG_RANK_CAIRN + 3),
};

void persistRegisterConfig(void) { configRegister(persistConfig, CONFIG_COUNT_OF(persistConfig)); }
