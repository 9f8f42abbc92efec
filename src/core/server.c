/* server.c -- the server state, the timer (`hz`), beforeSleep, signals and
 * shutdown, and the server-wide hooks (keyspace signals, flush and swap,
 * timer, before-sleep and stats-reset lists) that features install at
 * start-up.  The start-up order itself is main.c's. */
#include "core/server.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "core/crash.h"
#include "core/dispatch.h"
#include "core/effects.h"
#include "core/log.h"
#include "core/net.h"
#include "db/lazyfree.h"
#include "ds/alloc.h"
#include "ds/htab.h"
#include "ds/rand.h"
#include "ds/util.h"

Server server;

/* --- hooks that the feature layers install at start-up --- */

/* Each list grows as main.c's init functions register; a hook runs in the
 * order it was added. */
static KeyModifiedHook **keyModifiedHooks;
static int keyModifiedHookCount;
static KeyspaceEventSink *keyspaceEventSink;
static DbFlushHook **flushHooks;
static int flushHookCount;
static DbSwapHook **swapHooks;
static int swapHookCount;

void serverAddKeyModifiedHook(KeyModifiedHook *fn) {
    keyModifiedHooks = xrealloc(keyModifiedHooks, sizeof(*keyModifiedHooks) * (size_t)(keyModifiedHookCount + 1));
    keyModifiedHooks[keyModifiedHookCount++] = fn;
}

void signalModifiedKey(Client *c, Db *db, const char *key, size_t len) {
    for (int i = 0; i < keyModifiedHookCount; i++) keyModifiedHooks[i](c, db, key, len);
}

static KeyDeletedHook **keyDeletedHooks;
static int keyDeletedHookCount;

void serverAddKeyDeletedHook(KeyDeletedHook *fn) {
    keyDeletedHooks = xrealloc(keyDeletedHooks, sizeof(*keyDeletedHooks) * (size_t)(keyDeletedHookCount + 1));
    keyDeletedHooks[keyDeletedHookCount++] = fn;
}

void signalDeletedKey(Db *db, const char *key, size_t len) {
    signalModifiedKey(NULL, db, key, len);
    for (int i = 0; i < keyDeletedHookCount; i++) keyDeletedHooks[i](db, key, len);
}

void serverSetKeyspaceEventSink(KeyspaceEventSink *fn) { keyspaceEventSink = fn; }

static ModuleKeyspaceHook *moduleKeyspaceHook;
ServerEventHook *serverEventHook;
ServerDisklessLoadCheck *serverDisklessLoadCheck;

void serverSetModuleKeyspaceHook(ModuleKeyspaceHook *fn) { moduleKeyspaceHook = fn; }
void serverSetEventHook(ServerEventHook *fn) { serverEventHook = fn; }

/* The delivery, out of line: notifyKeyspaceEvent's common case (nobody
 * listens) stays a few tests with no stack frame, as it was before
 * modules could subscribe (a call in it cost every write ~14 instructions
 * of register saves). */
static __attribute__((noinline)) void notifyDeliver(int type, const char *event, const char *key, size_t keylen,
                                                    int dbid) {
    if (moduleKeyspaceHook) moduleKeyspaceHook(type, event, key, keylen, dbid);
    int flags = server.cfg.notifyFlags;
    if (!(flags & type) || !(flags & (NOTIFY_KEYSPACE | NOTIFY_KEYEVENT)) || !keyspaceEventSink) return;
    keyspaceEventSink(event, key, keylen, dbid);
}

void notifyKeyspaceEvent(int type, const char *event, const char *key, size_t keylen, int dbid) {
    int flags = server.cfg.notifyFlags;
    if (__builtin_expect(!moduleKeyspaceHook, 1) &&
        (!(flags & type) || !(flags & (NOTIFY_KEYSPACE | NOTIFY_KEYEVENT)) || !keyspaceEventSink))
        return;
    notifyDeliver(type, event, key, keylen, dbid);
}

void serverAddFlushHook(DbFlushHook *fn) {
    flushHooks = xrealloc(flushHooks, sizeof(*flushHooks) * (size_t)(flushHookCount + 1));
    flushHooks[flushHookCount++] = fn;
}

void serverAddSwapHook(DbSwapHook *fn) {
    swapHooks = xrealloc(swapHooks, sizeof(*swapHooks) * (size_t)(swapHookCount + 1));
    swapHooks[swapHookCount++] = fn;
}

void signalFlushedDb(int dbid) {
    for (int i = 0; i < flushHookCount; i++) flushHooks[i](dbid);
}

void signalSwappedDb(int a, int b) {
    for (int i = 0; i < swapHookCount; i++) swapHooks[i](a, b);
}

void serverKeyAddedHook(Db *db, const char *key, size_t len) {
    notifyKeyspaceEvent(NOTIFY_NEW, "new", key, len, db->id);
}

void serverKeyMissHook(Db *db, const char *key, size_t len) {
    notifyKeyspaceEvent(NOTIFY_KEY_MISS, "keymiss", key, len, db->id);
}

/* A key deleted by expiry propagates as DEL (UNLINK under
 * lazyfree-lazy-expire), before the effects of the command that found it
 * expired, as in Redis. */
void serverKeyExpiredHook(Db *db, const char *key, size_t len) {
    server.stats.expiredKeys++;
    effectsDeleteKey(db->id, key, len, server.cfg.lazyfreeLazyExpire);
    notifyKeyspaceEvent(NOTIFY_EXPIRED, "expired", key, len, db->id);
    signalDeletedKey(db, key, len);
}

void serverValueCorruptHook(Db *db, const char *key, size_t len, const char *why) {
    serverLog(LL_WARNING,
              "Corrupt value of key '%.*s' (DB %d) found on first access after loading the dataset (%s): "
              "the key was deleted",
              (int)(len > 128 ? 128 : len), key, db->id, why);
    /* A replica (no lazy deletes there) drops its copy without
     * propagating: its stream is its primary's, which holds the same bytes
     * and drops the key itself on its first access. */
    if (!dbNoLazyExpire) effectsDeleteKey(db->id, key, len, 0);
    signalDeletedKey(db, key, len);
}

/* --- small helpers --- */

static ServerHook **resetHooks;
static int resetHookCount;
static ServerHook **sleepHooks;
static int sleepHookCount;
static ServerHook **cronHooks;
static int cronHookCount;

/* Appends fn to the list *hooks of *count entries. */
static void addHook(ServerHook ***hooks, int *count, ServerHook *fn) {
    *hooks = xrealloc(*hooks, sizeof(**hooks) * (size_t)(*count + 1));
    (*hooks)[(*count)++] = fn;
}

static ServerHook **flushAllDoneHooks;
static int flushAllDoneHookCount;
static ServerHook **beforeReplyWriteHooks;
int serverBeforeReplyWriteHookCount;
static FailoverPauseHook **failoverPauseHooks;
static int failoverPauseHookCount;

void serverAddBeforeSleepHook(ServerHook *fn) { addHook(&sleepHooks, &sleepHookCount, fn); }
void serverAddFlushAllDoneHook(ServerHook *fn) { addHook(&flushAllDoneHooks, &flushAllDoneHookCount, fn); }
void serverAddBeforeReplyWriteHook(ServerHook *fn) {
    addHook(&beforeReplyWriteHooks, &serverBeforeReplyWriteHookCount, fn);
}

void signalFlushAllDone(void) {
    for (int i = 0; i < flushAllDoneHookCount; i++) flushAllDoneHooks[i]();
}

void serverRunBeforeReplyWriteHooks(void) {
    for (int i = 0; i < serverBeforeReplyWriteHookCount; i++) beforeReplyWriteHooks[i]();
}

void serverAddFailoverPauseHook(FailoverPauseHook *fn) {
    failoverPauseHooks =
        xrealloc(failoverPauseHooks, sizeof(*failoverPauseHooks) * (size_t)(failoverPauseHookCount + 1));
    failoverPauseHooks[failoverPauseHookCount++] = fn;
}

void signalFailoverPause(int on) {
    for (int i = 0; i < failoverPauseHookCount; i++) failoverPauseHooks[i](on);
}
void serverAddCronHook(ServerHook *fn) { addHook(&cronHooks, &cronHookCount, fn); }
void serverAddResetStatsHook(ServerHook *fn) { addHook(&resetHooks, &resetHookCount, fn); }

long long serverNowMs(void) { return dbNowMs ? dbNowMs : mstime(); }

void serverIncrDirty(long long n) { server.dirty += n; }

ServerFullKeyAccess *serverFullKeyReadAccess;
ServerClientFlag *serverSkipSanitizePayload;

int serverAuthRequired(const Client *c) {
    return server.authDefaultRequired && !c->authenticated;
}

void serverUpdateTime(void) {
    server.time.nowUs = ustime();
    server.time.nowMs = server.time.nowUs / 1000;
    dbNowMs = server.time.nowMs;
    dbNowUs = server.time.nowUs;
    server.time.lruClock = (unsigned)((server.time.nowMs / 1000) & ((1 << 24) - 1));
    dbLruClock = server.time.lruClock;
}

void serverResetStats(void) {
    memset(&server.stats, 0, sizeof(server.stats));
    server.stats.lastResetMs = server.time.nowMs;
    dbStats.keyspaceHits = dbStats.keyspaceMisses = 0;
    dbStats.expiredKeys = dbStats.expiredTimeCapReached = 0;
    dbStats.expiredStalePerc = 0;
    dbStats.expireCycleCpuUs = 0;
    unsigned cur = 0;
    Command *cmd;
    while ((cmd = commandIterate(&cur))) {
        memset(&cmd->stats, 0, sizeof(cmd->stats));
        for (Command *sub = cmd->subcommands; sub && sub->name; sub++) memset(&sub->stats, 0, sizeof(sub->stats));
    }
    ErrorStat *e = server.errorStats;
    while (e) {
        ErrorStat *n = e->next;
        xfree(e->prefix);
        xfree(e);
        e = n;
    }
    server.errorStats = NULL;
    for (int i = 0; i < resetHookCount; i++) resetHooks[i]();
}

int configApplyPort(const char **err) {
    if (netRebindTcp(err) == 0) return 0;
    *err = "Unable to listen on this port. Check server logs.";
    return -1;
}

int configApplyBind(const char **err) {
    if (netRebindTcp(err) == 0 && netRebindTls(err) == 0) return 0;
    *err = "Failed to bind to specified addresses.";
    return -1;
}
int configApplyUnixSocket(const char **err) { return netRebindUnix(err); }

/* --- shutdown --- */

void serverShutdown(int exitCode) {
    netCloseListeners();
    if (server.cfg.pidfile && server.cfg.pidfile[0]) {
        serverLog(LL_NOTICE, "Removing the pid file.");
        unlink(server.cfg.pidfile);
    }
#ifdef CAIRN_SANITIZE
    /* Values sit at unaligned offsets inside packed entries, where
     * LeakSanitizer cannot see them: free every key so that a leak report
     * at exit means a real leak.  What a FLUSHALL ASYNC handed to the
     * lazyfree thread is freed first.  The databases themselves stay: the
     * watched and blocking keys of clients still connected hang on them. */
    lazyfreeWaitIdle();
    dbClearAll(server.db, server.cfg.databases);
#endif
    serverLog(LL_WARNING, "Cairn is now ready to exit, bye bye...");
    exit(exitCode);
}

/* Appends v in decimal at buf[*at] (async-signal-safe). */
static void catDecimal(char *buf, size_t *at, unsigned long long v) {
    char digits[24];
    int n = 0;
    do digits[n++] = (char)('0' + v % 10);
    while ((v /= 10) != 0);
    while (n) buf[(*at)++] = digits[--n];
}

/* SIGTERM / SIGINT: logged as Redis logs it from its handler; the timer
 * starts the shutdown (server/shutdown.c).  A second SIGINT exits now. */
static void sigShutdownHandler(int sig) {
    if (server.shutdownAsap && sig == SIGINT) {
        serverLogFromHandler("You insist... exiting now.");
        /* As Redis: the temp-<pid>.rdb of a save this process is writing
         * (SAVE, the shutdown save, or in a BGSAVE child its own) does not
         * stay behind.  Built by hand: only async-signal-safe calls here. */
        char name[40] = "temp-";
        size_t at = 5;
        catDecimal(name, &at, (unsigned long long)getpid());
        memcpy(name + at, ".rdb", 5);
        unlink(name);
        _exit(1);
    }
    serverLogFromHandler(sig == SIGINT ? "Received SIGINT scheduling shutdown..."
                                       : "Received SIGTERM scheduling shutdown...");
    server.shutdownAsap = sig;
}

void serverSetupSignals(void) {
    struct sigaction act;
    memset(&act, 0, sizeof(act));
    act.sa_handler = sigShutdownHandler;
    sigemptyset(&act.sa_mask);
    sigaction(SIGTERM, &act, NULL);
    sigaction(SIGINT, &act, NULL);
    signal(SIGPIPE, SIG_IGN);
    signal(SIGHUP, SIG_IGN);
    crashSetupHandlers();
    xmallocOomHandler = serverOomPanic;
    watchdogApply();
}

/* --- timer and loop hooks --- */

long long serverCron(EventLoop *loop, long long id, void *data) {
    (void)loop, (void)id, (void)data;
    watchdogCron();
    serverUpdateTime();
    if (server.pauseCron) return 1000 / (server.cfg.hz > 0 ? server.cfg.hz : 10); /* DEBUG PAUSE-CRON */
    server.time.cronLoops++;
    serverFireEvent(SERVER_EVENT_CRON_LOOP, 0, NULL, server.cfg.hz, 0);
    if (server.time.cronLoops % (server.cfg.hz > 0 ? server.cfg.hz : 10) == 0) crashCron(); /* about once a second */
    if (server.activeExpireEnabled && !server.expiryPaused && !server.isReplica)
        dbActiveExpireCycle(server.db, server.cfg.databases, 25000 / (server.cfg.hz ? server.cfg.hz : 10), 0);
    if (server.cfg.activeRehashing && !server.forkChildActive) dbTimerMaintenance(server.db, server.cfg.databases);
    /* Packing idle small collections (db.h): not while a fork child shares
     * the pages, nor under an inline snapshot. */
    dbPackCron(server.db, server.cfg.databases, !server.forkChildActive && !dbSnapshotActive, 1000);
    lazyfreeCron(monotonicUs() / 1000);
    lazyfreeKick();
    netClientsCron();
    for (int i = 0; i < cronHookCount; i++) cronHooks[i]();
    return 1000 / (server.cfg.hz > 0 ? server.cfg.hz : 10);
}

/* Rehash steps between polls while nothing is ready (eventSetIdle): short
 * enough that a command arriving meanwhile hardly waits. */
#define IDLE_REHASH_US 200

void serverIdle(EventLoop *loop) {
    (void)loop;
    if (!server.cfg.activeRehashing || server.forkChildActive) {
        dbRehashPending = 0; /* the timer sets it again once rehashing may resume */
        return;
    }
    dbRehashIdle(server.db, server.cfg.databases, IDLE_REHASH_US);
}

void serverBeforeSleep(EventLoop *loop) {
    (void)loop;
    serverUpdateTime();
    dbNoTouch = 0; /* the last command's CLIENT NO-TOUCH ends with it */
    if (server.activeExpireEnabled && !server.expiryPaused && !server.isReplica)
        dbActiveExpireCycle(server.db, server.cfg.databases, 1000, 1);
    for (int i = 0; i < sleepHookCount; i++) sleepHooks[i]();
    serverFireEvent(SERVER_EVENT_EVENTLOOP, 0, NULL, 0, 0); /* before sleep */
    netHandlePendingWrites();
    netFreeClosingClients();
    dbPayRehash(server.db, server.cfg.databases);
    lazyfreeKick(); /* after the replies: see lazyfree.h */
}

