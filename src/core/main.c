/* main.c -- the composition root: the one file that knows every layer.
 * It loads the configuration, builds the server state, starts each feature
 * in a written order (initFeatures) and runs the loop.  No constructor
 * runs before main. */
#include <errno.h>
#include <fcntl.h>
#include <locale.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/banner.h"
#include "core/cli.h"
#include "core/conn.h"
#include "core/crash.h"
#include "core/dispatch.h"
#include "core/effects.h"
#include "core/log.h"
#include "core/net.h"
#include "core/server.h"
#include "ds/alloc.h"
#include "ds/rand.h"
#include "ds/util.h"
#include "db/db.h"
#include "db/lazyfree.h"
#include "persist/aof.h"
#include "persist/persist.h"
#include "persist/rdb.h"
#include "repl/repl.h"
#include "script/ldb.h"
#include "script/script.h"
#include "server/cluster.h"
#include "server/acl.h"
#include "server/http.h"
#include "server/latency.h"
#include "server/maxmemory.h"
#include "server/monitor.h"
#include "server/multi.h"
#include "server/notify.h"
#include "server/pause.h"
#include "server/process.h"
#include "server/pubsub.h"
#include "server/sentinel.h"
#include "server/shutdown.h"
#include "server/slowlog.h"
#include "server/stats.h"
#include "server/tracking.h"
#include "types/blocking.h"
#include "types/hash.h"
#include "types/hll.h"
#include "types/list.h"
#include "types/member_ttl.h"
#include "types/set.h"
#include "types/stream.h"
#include "types/zset.h"
#include "module/module.h"

/* --- process set-up --- */

static void daemonize(void) {
    if (fork() != 0) exit(0);
    setsid();
    int fd = open("/dev/null", O_RDWR);
    if (fd != -1) {
        dup2(fd, STDIN_FILENO);
        dup2(fd, STDOUT_FILENO);
        dup2(fd, STDERR_FILENO);
        if (fd > STDERR_FILENO) close(fd);
    }
}

static void writePidFile(void) {
    if (!server.cfg.pidfile || !server.cfg.pidfile[0]) return;
    FILE *fp = fopen(server.cfg.pidfile, "w");
    if (!fp) {
        serverLog(LL_WARNING, "Failed to write PID file: %s", strerror(errno));
        return;
    }
    fprintf(fp, "%d\n", (int)getpid());
    fclose(fp);
}

/* A created key: the "new" keyspace event, and clients blocked on that
 * key (a MOVE or COPY into another database reaches them this way). */
static void keyAdded(Db *db, const char *key, size_t len) {
    serverKeyAddedHook(db, key, len);
    signalKeyAsReady(db, key, len);
}

/* Every feature's directives, before their defaults are applied and the
 * config file is read (the rest of the core's are config.c's).  The order of
 * these calls changes nothing visible: CONFIG GET * and CONFIG REWRITE
 * list the directives by rank and name (config.h). */
static void registerConfig(void) {
    crashRegisterConfig();
    aclRegisterConfig();
    maxmemoryRegisterConfig();
    hashRegisterConfig();
    listRegisterConfig();
    setRegisterConfig();
    zsetRegisterConfig();
    streamRegisterConfig();
    hllRegisterConfig();
    slowlogRegisterConfig();
    latencyRegisterConfig();
    clusterRegisterConfig();
    statsRegisterConfig();
    trackingRegisterConfig();
    notifyRegisterConfig();
    scriptRegisterConfig();
    shutdownRegisterConfig();
    persistRegisterConfig();
    aofRegisterConfig();
    replRegisterConfig();
    httpRegisterConfig();
    tlsRegisterConfig();
    moduleRegisterConfig();
}

/* Wires every feature into core, once, before the first client.  Each
 * feature's init installs its hooks; a hook list runs in the order of the
 * calls below, and some of those orders are visible to clients:
 *  - after a command, MONITOR's feed (monitorInit) and its slow-log entry
 *    come before the clients that command woke run theirs (blockingInit;
 *    their entries are newer, as in Redis), and latency, tracking and
 *    stats follow;
 *  - before sleeping, clients released by CLIENT UNPAUSE (pauseInit) run
 *    before blocked clients are served and tracking flushes;
 *  - a modified key reaches WATCH (multiInit) before tracking. */
static void initFeatures(void) {
    /* The checks a command passes before it runs: one function. */
    dispatchSetProcessor(processCommand);
    /* The keyspace: the value operations of each collection type (strings
     * are db's own) and where its events go. */
    objectRegisterType(OBJ_LIST, &listObjectType);
    objectRegisterType(OBJ_SET, &setObjectType);
    objectRegisterType(OBJ_ZSET, &zsetObjectType);
    objectRegisterType(OBJ_HASH, &hashObjectType);
    hashInit(); /* hash-field expiry: its index and active cycle */
    objectRegisterType(OBJ_STREAM, &streamObjectType);
    rdbRegisterTypes(); /* the digest and RDB slots of each type */
    dbConfig = &server.cfg.keyspace;
    dbHooks.keyExpired = serverKeyExpiredHook;
    dbHooks.keyAdded = keyAdded;
    dbHooks.keyMiss = serverKeyMissHook;
    dbHooks.latency = latencyAddSampleIfNeeded;
    dbHooks.verifyValue = rdbVerifyValue;
    dbHooks.valueCorrupt = serverValueCorruptHook;
    notifyInit();
    /* Features, in hook order. */
    monitorInit();
    pubsubInit();
    pauseInit();
    slowlogInit();
    blockingInit();
    latencyInit();
    multiInit();
    maxmemoryInit();
    trackingInit();
    replInit();
    shutdownInit();
    httpInit();
    moduleInit();
    serverAddCronHook(statsCron);
    serverAddResetStatsHook(statsReset);
    dispatchAddAfterCall(statsRecordLatency);
    dispatchAddUnblockHook(statsRecordUnblockedLatency);
}

#ifdef CAIRN_SANITIZE
/* An exit() other than serverShutdown's -- a fatal load error, a refused
 * start -- with keys in memory frees them first, for serverShutdown's
 * reason: a chained entry's link shares its word with the entry's own
 * bytes (ds/htab.h), where LeakSanitizer cannot see it, so a key second in
 * its bucket's chain would be reported as leaked.  Only in the process
 * that registered it (not in a fork child). */
static pid_t freeAtExitPid;
static void freeDataAtExit(void) {
    if (!server.db || getpid() != freeAtExitPid) return;
    lazyfreeWaitIdle();
    dbClearAll(server.db, server.cfg.databases); /* the databases stay: see serverShutdown */
}
#endif

int main(int argc, char **argv) {
    xmallocRegisterThread();
    /* ALPHA sorting (strcoll) collates per the environment, as Redis. */
    setlocale(LC_COLLATE, "");
    cliHandleInfoArgs(argc, argv); /* --version, --help, --check-system exit here */
    server.pid = getpid();
    randSeedFromOs();
    for (int i = 0; i < 16; i++) dbHashSeed[i] = (uint8_t)randNext();
    randHex(server.runId, 40);
    server.runId[40] = '\0';
    serverUpdateTime();
    server.time.startMs = server.time.nowMs;
    server.lastSaveUnix = server.time.nowMs / 1000;
    server.activeExpireEnabled = 1;
    char exe[4096];
    ssize_t el = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    if (el > 0) {
        exe[el] = '\0';
        server.executable = xstrdup(exe);
    } else {
        server.executable = xstrdup(argv[0]);
    }

    server.execArgv = xcalloc(sizeof(char *) * (size_t)(argc + 1));
    for (int i = 0; i < argc; i++) server.execArgv[i] = xstrdup(argv[i]);
    registerConfig();
    configInitDefaults();
    /* cairn-sentinel (or --sentinel): Sentinel mode, a program of its own
     * that builds none of the data server's state (server/sentinel.h). */
    if (sentinelModeRequested(argc, argv)) return sentinelMain(argc, argv);
    /* cairn-check-aof and cairn-check-rdb are this binary under another
     * name (as Redis's redis-check-aof / redis-check-rdb), so that files are
     * read by the real loader. */
    const char *base = strrchr(argv[0], '/');
    int checkAof = strstr(base ? base + 1 : argv[0], "check-aof") != NULL;
    if (checkAof || rdbCheckInvoked(argv[0])) {
        server.db = dbCreateAll(server.cfg.databases);
        initFeatures();
        commandTableInit();
        memberTtlInit();
        return checkAof ? aofCheckMain(argc, argv) : rdbCheckMain(argc, argv);
    }
    configLoadFromArgs(argc, argv);
    if (server.cfg.daemonize) daemonize();
    server.pid = getpid();
    /* `dir` took effect while the config was read (chdir at its line, so
     * a relative one is relative to where the server started). */
    serverLog(LL_NOTICE, "oO0OoO0OoO0Oo Cairn is starting oO0OoO0OoO0Oo");
    serverLog(LL_NOTICE, "Cairn version=%s (Redis %s compatible), bits=%d, pid=%d, just started", CAIRN_VERSION,
              REDIS_COMPAT_VERSION, (int)(sizeof(long) * 8), (int)server.pid);
    if (configFilePath()) serverLog(LL_NOTICE, "Configuration loaded");
    else serverLog(LL_WARNING, "Warning: no config file specified, using the default config. In order to specify a config file use %s /path/to/cairn.conf", argv[0]);

    serverSetupSignals();
    server.loop = eventLoopCreate(server.cfg.maxclients + 128);
    connInit(server.loop);
    clusterInitEarly();
    server.db = dbCreateAll(server.cfg.databases);
    clusterInit();
    initFeatures();
    commandTableInit();
    memberTtlInit(); /* after the table: TTL/PTTL take a member */
    /* Users refer to commands by id: after the table.  Before listening,
     * so the first client meets the configured default user. */
    aclInit();
    configApplyOomScoreAdj(CONFIG_OOM_BY_ROLE);
    configApplyCpuLists();
    configApplyMemorySettings();
    effectsInitTestSink();
    if (tlsStartup() == -1) exit(1);
    if (netListen() == -1) exit(1);
    if (httpListen() == -1) exit(1);
    bannerShow();
    eventAddTimer(server.loop, 1, serverCron, NULL);
    eventSetBeforeSleep(server.loop, serverBeforeSleep);
    eventSetIdle(server.loop, serverIdle, &dbRehashPending);
    writePidFile();
    scriptCreateVms(); /* before statsInit: in used_memory_startup, as Redis's */
    statsInit();
    serverLog(LL_NOTICE, "Server initialized");
    /* Modules before the data: a module's types must exist to load it. */
    moduleLoadQueued();
#ifdef CAIRN_SANITIZE
    freeAtExitPid = getpid();
    atexit(freeDataAtExit);
#endif
    persistInit();
    ldbInit();
    replStart();
    serverLog(LL_NOTICE, "Ready to accept connections");
    if (server.cfg.supervised == SUPERVISED_SYSTEMD ||
        (server.cfg.supervised == SUPERVISED_AUTODETECT && getenv("NOTIFY_SOCKET"))) {
        connNotifySystemd("STATUS=Ready to accept connections\n");
        connNotifySystemd("READY=1\n");
    }
    eventLoopRun(server.loop);
    return 0;
}
