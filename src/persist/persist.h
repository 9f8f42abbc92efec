/* persist.h -- RDB persistence as the server runs it: SAVE, BGSAVE (a
 * forked child writing the snapshot), save points, loading dump.rdb at
 * start-up, saving on shutdown, DUMP/RESTORE, the MISCONF rule and the
 * INFO persistence section.
 *
 * Invariants: at most one save child exists (state.childPid); the parent
 * reaps it in the timer and only then updates LASTSAVE, the dirty counter
 * and the bgsave status; a failed save never replaces the previous file
 * (rdb.c writes a temporary file and renames it). */
#ifndef CAIRN_PERSIST_H
#define CAIRN_PERSIST_H

#include <sys/types.h>

#include "core/client.h"
#include "ds/sds.h"
#include "persist/rdb.h"

/* Start-up: registers the timer and after-FLUSHALL hooks, then loads the
 * dbfilename in dir.  Exits the process (status 1) when the file is
 * corrupt or unreadable, as redis-server does. */
void persistInit(void);

/* Persistence's step of a shutdown (SHUTDOWN, SIGTERM/SIGINT, DEBUG
 * RESTART; server/shutdown.c calls it first): kills a save child, has the
 * AOF flushed and fsynced (aofPrepareShutdown), saves the final snapshot
 * when save points are set or flags has SHUTDOWN_SAVE (never with
 * SHUTDOWN_NOSAVE, nor while loading).  flags: SHUTDOWN_* (core/server.h).
 * Returns 0 to go on exiting, -1 to stay up (logged): a failed save or
 * AOF flush without SHUTDOWN_FORCE. */
int persistPrepareShutdown(int flags);

/* DEBUG RELOAD: save (unless NOSAVE), empty the data and the functions
 * (unless NOFLUSH), load the file back (MERGE: the file's keys and
 * libraries replace existing ones).  Returns 0, -1 when the save failed,
 * -2 when the load failed. */
#define PERSIST_RELOAD_MERGE (1 << 0)
#define PERSIST_RELOAD_NOFLUSH (1 << 1)
#define PERSIST_RELOAD_NOSAVE (1 << 2)
int persistDebugReload(int flags);

/* rdb-del-sync-files: after a full sync used dbfilename (sent to a replica,
 * or loaded from a master), removes it, logging why, when
 * rdb-del-sync-files is on and nothing else persists (save "" and
 * appendonly no).  Returns 1 if the file was removed.  For the
 * replication layer. */
int persistRemoveSyncFile(const char *why);

/* INFO stats: the duration of the last fork (µs) and the forks so far. */
long long persistLatestForkUsec(void);
long long persistTotalForks(void);

/* MISCONF: while the last background save failed (and
 * stop-writes-on-bgsave-error is set with save points), writes and PING
 * are refused (-1 after replying), as Redis does.  0 lets cmd go on.  One
 * of processCommand's checks.  execWrites: cmd is an EXEC whose queue holds
 * a write (Redis counts that EXEC as a write: it answers EXECABORT). */
int persistRefuseWriteSlow(Client *c, Command *cmd, int execWrites);
/* Nonzero while MISCONF could apply (a background save failed, or the AOF
 * is on): set by whatever makes it possible, cleared by the slow check when
 * nothing can refuse, so that a healthy server pays one test per command. */
extern int persistRefusalHint;
static inline int persistRefuseWriteOrReply(Client *c, Command *cmd, int execWrites) {
    if (!persistRefusalHint) return 0;
    return persistRefuseWriteSlow(c, cmd, execWrites);
}

/* While the start-up load runs (the loop turns every
 * loading-process-events-interval-bytes), commands without the loading
 * flag get -LOADING (-1 after replying).  One of processCommand's checks. */
int persistRefuseWhileLoadingSlow(Client *c, Command *cmd);
/* 1 while the start-up load runs (persistLoading's answer, read inline). */
extern int persistLoadingNow;
static inline int persistRefuseWhileLoadingOrReply(Client *c, Command *cmd) {
    if (!persistLoadingNow) return 0;
    return persistRefuseWhileLoadingSlow(c, cmd);
}
/* 1 while the start-up load runs. */
int persistLoading(void);
/* The AOF's start-up load runs inside these (loading:1, -LOADING for
 * clients); progress turns the event loop every
 * loading-process-events-interval-bytes. */
void persistLoadingBegin(void);
void persistLoadingProgress(size_t loaded, size_t total);
/* The modules' LoadingProgress event (subevent AOF when aof, else RDB),
 * at most hz times a second (one throttle for both, as Redis), progress in
 * 1024ths of total (-1 when total is 0). */
void persistLoadingProgressEvent(size_t loaded, size_t total, int aof);
void persistLoadingEnd(void);
/* A replica's full sync: loads the primary's RDB from filename, or from
 * buf[0..len) when filename is NULL, with loading:1 and the loading_*
 * fields in INFO and -LOADING for clients while the loop turns (every
 * loading-process-events-interval-bytes).  tick, when not NULL, runs about
 * once a second meanwhile (the link's keep-alive).  Records the
 * rdb_last_load_keys_* figures.  Returns rdbLoadFile's codes (0, 1 for a
 * missing or empty file, -1 with *err). */
int persistLoadForSync(const char *filename, const unsigned char *buf, size_t len, void (*tick)(void),
                       RdbLoadInfo *info, sds *err);
/* A replica's diskless load, parsed as the bytes come (rdbStreamFeed) by
 * the replication layer, which calls Progress at least every
 * loading-process-events-interval-bytes (it turns the loop once).  Begin:
 * loading:1 and -LOADING as above, or with async (a swapdb load beside the
 * old data) async_loading:1: clients keep using the old data and only
 * commands flagged no-async-loading get -LOADING.  tick as in
 * persistLoadForSync.  End: ok records the rdb_last_load_keys_* figures.
 * The modules' Loading event: Begin fires REPL_START (async or not, as
 * Redis); the caller fires ENDED or FAILED once the outcome is final (a
 * swapdb load: after the swap and its ReplAsyncLoad event). */
void persistSyncLoadBegin(int async, void (*tick)(void));
void persistSyncLoadProgress(const RdbLoadInfo *info, size_t loaded, size_t total);
void persistSyncLoadEnd(const RdbLoadInfo *info, int ok);
/* The BGSAVE child's pid, -1 when none. */
pid_t persistBgsaveChildPid(void);

/* One background child at a time, as Redis: the kind running now.  RDB is
 * a BGSAVE or a replication full sync's save (BGSAVE and SAVE answer
 * "already in progress", INFO shows rdb_bgsave_in_progress:1), AOF a
 * rewrite (BGSAVE waits or is scheduled, BGREWRITEAOF is scheduled after
 * any other).  SCRIPT DEBUG's forked sessions do not count, as in Redis. */
enum { PERSIST_CHILD_NONE = 0, PERSIST_CHILD_RDB, PERSIST_CHILD_AOF, PERSIST_CHILD_MODULE };
int persistChildType(void);
static inline int persistChildActive(void) { return persistChildType() != PERSIST_CHILD_NONE; }
/* A replication full sync forked pid to write the RDB (to dbfilename when
 * disk, else to the replicas' sockets); its end once reaped (ok: 1 exited 0, 0 failed, -1 cancelled on purpose by SIGUSR1:
 * not a failed save), which also ends its reports (persistChildEnded).  A disk one is
 * a save like BGSAVE's (rdb_saves, LASTSAVE, the dirty counter,
 * rdb_last_bgsave_status), a socket one only a child. */
void persistSyncChildStarted(pid_t pid, int disk);
void persistSyncChildDone(int ok);
/* The child info pipe: every fork child (BGSAVE, a sync's save, an AOF
 * rewrite) reports its copy-on-write and the keys written, which INFO
 * shows as current_cow_*, current_fork_perc and current_save_keys_*, and
 * its last copy-on-write as rdb_last_cow_size / aof_last_cow_size.  The
 * forking code calls, in order:
 *   persistChildInfoOpen        parent, before the fork (opens the pipe);
 *   persistChildInfoInChild     the child, first; what is "RDB" or "AOF
 *                               rewrite" (its "Fork CoW for ..." log lines;
 *                               it also takes oom-score-adj's child value);
 *                               RDB writers then report by themselves,
 *                               others call persistChildProgress per key;
 *   persistChildInfoFinal       the child, when it succeeded (the NOTICE line);
 *   persistChildForked          parent, right after fork() (pid < 0: closes
 *                               the pipe; else current_save_keys_total);
 *   persistChildEnded           parent, once the child is reaped or killed,
 *                               while it still counts as running. */
void persistChildInfoOpen(void);
void persistChildInfoInChild(const char *what);
void persistChildProgress(long long keysDone);
void persistChildInfoFinal(void);
void persistChildForked(pid_t pid);
void persistChildEnded(void);
size_t persistAofLastCowSize(void);
/* An in-process save (snapshot.h) completed: its peak extra memory becomes
 * rdb_last_cow_size (aof 0) or aof_last_cow_size (aof 1). */
void persistInlineSaveCompleted(int aof);
/* RedisModule_Fork's child (the module layer): one background child at a
 * time with the others (PERSIST_CHILD_MODULE; BGSAVE then answers
 * "Another child process is active", a rewrite is scheduled).
 *   persistModuleFork        forks: the pid in the parent, 0 in the child,
 *                            -1 with errno (EEXIST while another child
 *                            runs); done is called from the timer that
 *                            reaps children (exit code, signal);
 *   persistModuleKillChild   parent: kills (SIGUSR1) and reaps the module
 *                            child pid, done not called; -1 when pid is
 *                            not the module child;
 *   persistModuleChildHeartbeat  child: a copy-on-write report;
 *   persistModuleChildExit   child: the final report, then _exit(code).
 * INFO shows module_fork_in_progress and module_fork_last_cow_size. */
pid_t persistModuleFork(void (*done)(int exitcode, int bysignal));
int persistModuleKillChild(pid_t pid);
void persistModuleChildHeartbeat(void);
void persistModuleChildExit(int code);
/* A fork took us microseconds (INFO latest_fork_usec, total_forks). */
void persistNoteFork(long long us);

/* MIGRATE (migrate.c): registers the timer that closes idle cached
 * connections.  Called by persistInit. */
void migrateInit(void);
/* INFO's migrate_cached_sockets: MIGRATE's cached connections open now. */
int migrateCachedSockets(void);

/* cairn-check-rdb (check_rdb.c): the binary invoked under that name
 * checks the RDB file named by argv[1] and returns the exit status. */
int rdbCheckInvoked(const char *argv0);
int rdbCheckMain(int argc, char **argv);
/* The check of the RDB at p[0..len) (named path), printed as
 * redis-check-rdb prints it; returns 0 (sane) or 1, *used the bytes it
 * read.  A value failing its integrity check exits the process, as
 * redis-check-rdb does (cairn-check-aof checks an RDB preamble with it). */
int rdbCheckReport(const char *path, const unsigned char *p, size_t len, size_t *used);

/* Appends the lines of INFO persistence to s. */
sds persistInfoSection(sds s);

/* Registers the RDB snapshot's directives (CONFIG GET/SET/REWRITE, the config
 * file).  Called once from main.c, before the defaults are applied. */
void persistRegisterConfig(void);

#endif
