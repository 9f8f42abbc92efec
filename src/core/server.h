/* server.h -- the server state, as named sub-structs, and the hooks between
 * layers.  Owned by the main thread; nothing here is touched by helper
 * threads. */
#ifndef CAIRN_SERVER_H
#define CAIRN_SERVER_H

#include <signal.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/client.h"
#include "core/command.h"
#include "core/config.h"
#include "core/event.h"
#include "db/db.h"

#define CAIRN_VERSION "0.1.0"
#define REDIS_COMPAT_VERSION "7.0.15"
#define REDIS_COMPAT_VERSION_NUM 0x0007000f

typedef struct ServerStats {
    long long numConnections;      /* total_connections_received */
    long long numCommands;         /* total_commands_processed */
    long long rejectedConns;       /* rejected_connections */
    long long netInputBytes, netOutputBytes;
    long long totalErrorReplies;   /* total_error_replies */
    long long unexpectedErrorReplies;
    long long expiredKeys;         /* mirrors dbStats */
    long long evictedKeys;
    long long evictedClients;
    long long totalReadsProcessed, totalWritesProcessed;
    long long clientQbufLimitDisconnections, clientOutbufLimitDisconnections;
    long long ioReadsProcessed;
    long long replyBufferShrinks, replyBufferExpands;
    long long statNumOps;          /* for instantaneous_ops_per_sec */
    long long lastResetMs;
} ServerStats;

/* Per-error-prefix counters (INFO errorstats). */
typedef struct ErrorStat {
    char *prefix;
    long long count;
    struct ErrorStat *next;
} ErrorStat;

typedef struct ServerNet {
    Client *clients;               /* all connected clients */
    unsigned long numClients;
    Client *pendingWrites;         /* clients with replies to write */
    uint64_t nextClientId;
    Client *current;               /* client whose command runs now */
    unsigned long closingClients;  /* clients flagged CLIENT_CLOSE_ASAP, not yet freed */
    unsigned long batchedReads;    /* clients flagged CLIENT_READ_BATCHED */
} ServerNet;

typedef struct ServerTime {
    long long startMs;             /* server start, unix ms */
    long long nowMs;               /* cached at each loop turn */
    long long nowUs;
    long long cronLoops;
    unsigned lruClock;
} ServerTime;

typedef struct Server {
    ServerConfig cfg;
    ServerStats stats;
    ServerNet net;
    ServerTime time;
    EventLoop *loop;
    Db *db;                        /* cfg.databases of them */
    pid_t pid;
    char runId[41];
    char *executable;              /* absolute path, for INFO */
    char **execArgv;               /* the command line, NULL-terminated (DEBUG RESTART re-executes it) */
    char *configFile;
    ErrorStat *errorStats;
    uint8_t hashSeed[16];
    long long lastSaveUnix;        /* LASTSAVE */
    long long dirty;               /* changes since last save */
    volatile sig_atomic_t shutdownAsap; /* the signal (SIGTERM/SIGINT) that asked for a shutdown */
    long long shutdownMs;          /* a shutdown waits for replicas until then (unix ms); 0: none */
    int hzCurrent;                 /* effective hz (dynamic-hz) */
    int activeExpireEnabled;       /* DEBUG SET-ACTIVE-EXPIRE */
    int pauseCron;                 /* DEBUG PAUSE-CRON: the timer skips its work */
    int expiryPaused;              /* CLIENT PAUSE: no active expiry */
    int isReplica;                 /* following a primary (src/repl): no active expiry */
    int forkChildActive;           /* a save/rewrite child shares our pages (set by persist):
                                      no active rehashing, no resizing (copy-on-write) */
    /* The default user's state, kept by the ACL (server/acl.c): */
    int authDefaultRequired;       /* it has a password or is off: new clients must AUTH */
    int authDefaultNopass;         /* it has no password (protected mode applies) */
} Server;

extern Server server;

/* Keyspace signals.  The commands and the keyspace call these; the feature
 * layers that act on them install their hooks at start-up (main.c).
 *
 * signalModifiedKey: a key's value changed or the key went (c is the client
 * whose command did it, NULL for expiry and eviction).  WATCH and client
 * tracking listen, in the order they were added. */
typedef void KeyModifiedHook(Client *c, Db *db, const char *key, size_t len);
void serverAddKeyModifiedHook(KeyModifiedHook *fn);
void signalModifiedKey(Client *c, Db *db, const char *key, size_t len);
/* signalDeletedKey: a key went outside any command (expiry, eviction, a
 * corrupt value dropped): signalModifiedKey(NULL, ...), then the hooks that
 * care only about such deletes (blocked clients waiting on the key), so
 * that a command's own writes do not pay for them. */
typedef void KeyDeletedHook(Db *db, const char *key, size_t len);
void serverAddKeyDeletedHook(KeyDeletedHook *fn);
void signalDeletedKey(Db *db, const char *key, size_t len);
/* notifyKeyspaceEvent: an event of class `type` (NOTIFY_*).  When
 * notify-keyspace-events enables that class and K or E, it goes to the one
 * sink (the pub/sub layer publishes it). */
typedef void KeyspaceEventSink(const char *event, const char *key, size_t keylen, int dbid);
void serverSetKeyspaceEventSink(KeyspaceEventSink *fn);
void notifyKeyspaceEvent(int type, const char *event, const char *key, size_t keylen, int dbid);
/* The module layer's keyspace subscribers see every event, whatever
 * notify-keyspace-events says (Redis's rule): its hook runs first. */
typedef void ModuleKeyspaceHook(int type, const char *event, const char *key, size_t keylen, int dbid);
void serverSetModuleKeyspaceHook(ModuleKeyspaceHook *fn);

/* Server events for the module layer (RedisModule_SubscribeToServerEvent).
 * The ids and subevents are Redis 7.0's REDISMODULE_EVENT_* numbers; p, a
 * and b are the event's data (a Client * for CLIENT_CHANGE, the flushed
 * database and the sync flag for FLUSHDB, the two databases for SWAPDB,
 * hz for CRON_LOOP).  Nothing runs until the module layer sets its hook. */
enum {
    SERVER_EVENT_ROLE_CHANGED = 0,  /* sub: 0 now a master, 1 now a replica */
    SERVER_EVENT_PERSISTENCE = 1,   /* sub: REDISMODULE_SUBEVENT_PERSISTENCE_* */
    SERVER_EVENT_LOADING = 3,       /* sub: REDISMODULE_SUBEVENT_LOADING_* */
    SERVER_EVENT_REPLICA_CHANGE = 6, /* sub: 0 online, 1 offline */
    SERVER_EVENT_MASTER_LINK = 7,   /* sub: 0 up, 1 down */
    SERVER_EVENT_LOADING_PROGRESS = 10, /* sub: 0 RDB, 1 AOF; a: progress 0..1024 */
    SERVER_EVENT_FORK_CHILD = 13,   /* sub: 0 born, 1 died */
    SERVER_EVENT_REPL_ASYNC_LOAD = 14, /* sub: 0 started, 1 aborted, 2 completed */
    SERVER_EVENT_EVENTLOOP = 15,    /* sub: 0 before sleep, 1 after sleep */
    SERVER_EVENT_FLUSHDB = 2,
    SERVER_EVENT_CLIENT_CHANGE = 4,
    SERVER_EVENT_SHUTDOWN = 5,
    SERVER_EVENT_CRON_LOOP = 8,
    SERVER_EVENT_SWAPDB = 11,
    SERVER_EVENT_CONFIG = 16, /* p: the names set (const char **), a: their count */
};
/* ROLE_CHANGED's p: the replication state after the change. */
typedef struct ServerReplInfo {
    int master;           /* 1: now a primary */
    const char *host;     /* the primary's, "" when none */
    int port;
    const char *replid1, *replid2;
    long long offset1, offset2;
} ServerReplInfo;
typedef void ServerEventHook(int event, int sub, void *p, long a, long b);
extern ServerEventHook *serverEventHook;
void serverSetEventHook(ServerEventHook *fn);
/* The module layer's say on a replica's diskless load (Redis's
 * useDisklessLoad): returns 0 (and logs why) when a loaded module cannot
 * take it (a data type not handling read errors; with swapdb, a module not
 * declaring async-load awareness), 1 otherwise.  NULL: no module layer. */
typedef int ServerDisklessLoadCheck(int swapdb);
extern ServerDisklessLoadCheck *serverDisklessLoadCheck;
#define serverFireEvent(ev, sub, p, a, b)                       \
    do {                                                        \
        if (serverEventHook) serverEventHook(ev, sub, p, a, b); \
    } while (0)

/* Whole-database events, for WATCH and clients blocked on keys.  A flush
 * is signalled before the data goes (dbid, or -1 for FLUSHALL); a swap
 * after SWAPDB exchanged the two.  Layers register with the Add functions. */
typedef void DbFlushHook(int dbid);
typedef void DbSwapHook(int a, int b);
void serverAddFlushHook(DbFlushHook *fn);
void serverAddSwapHook(DbSwapHook *fn);
void signalFlushedDb(int dbid);
void signalSwappedDb(int a, int b);

/* Keyspace notification classes (notify-keyspace-events flags). */
#define NOTIFY_KEYSPACE (1 << 0)
#define NOTIFY_KEYEVENT (1 << 1)
#define NOTIFY_GENERIC (1 << 2)
#define NOTIFY_STRING (1 << 3)
#define NOTIFY_LIST (1 << 4)
#define NOTIFY_SET (1 << 5)
#define NOTIFY_HASH (1 << 6)
#define NOTIFY_ZSET (1 << 7)
#define NOTIFY_EXPIRED (1 << 8)
#define NOTIFY_EVICTED (1 << 9)
#define NOTIFY_STREAM (1 << 10)
#define NOTIFY_KEY_MISS (1 << 11)
#define NOTIFY_LOADED (1 << 12)
#define NOTIFY_MODULE (1 << 13)
#define NOTIFY_NEW (1 << 14)
#define NOTIFY_ALL (NOTIFY_GENERIC | NOTIFY_STRING | NOTIFY_LIST | NOTIFY_SET | NOTIFY_HASH | \
                    NOTIFY_ZSET | NOTIFY_EXPIRED | NOTIFY_EVICTED | NOTIFY_STREAM | NOTIFY_MODULE)

/* Server-wide helpers. */
long long serverNowMs(void);         /* cached time of the current command */
void serverUpdateTime(void);
void serverIncrDirty(long long n);
int serverAuthRequired(const Client *c);
/* Whether c's user may read every key with the command it runs (an ACL
 * selector allowing the command with ~* or %R~*): SORT's BY and GET
 * patterns need it.  Installed by the ACL; NULL means yes. */
typedef int ServerFullKeyAccess(Client *c);
extern ServerFullKeyAccess *serverFullKeyReadAccess;
/* Whether c's user has the skip-sanitize-payload flag (RESTORE skips the
 * deep check under sanitize-dump-payload clients).  Installed by the ACL. */
typedef int ServerClientFlag(const Client *c);
extern ServerClientFlag *serverSkipSanitizePayload;
/* Loop plumbing used by main.c. */
long long serverCron(EventLoop *loop, long long id, void *data);
void serverBeforeSleep(EventLoop *loop);
/* The loop's idle work (eventSetIdle): key table rehash steps. */
void serverIdle(EventLoop *loop);
void serverSetupSignals(void);
void serverKeyExpiredHook(Db *db, const char *key, size_t len);
/* db.h dbHooks.valueCorrupt: a key whose value failed its deferred load
 * check was deleted: a warning, the count, DEL propagated, WATCH. */
void serverValueCorruptHook(Db *db, const char *key, size_t len, const char *why);
void serverKeyAddedHook(Db *db, const char *key, size_t len);
void serverKeyMissHook(Db *db, const char *key, size_t len);
/* Functions run at every timer tick (stats sampling, ...), on CONFIG
 * RESETSTAT, and before the loop sleeps (before replies are written); each
 * list runs in the order the hooks were added. */
typedef void ServerHook(void);
void serverAddCronHook(ServerHook *fn);
void serverAddResetStatsHook(ServerHook *fn);
void serverAddBeforeSleepHook(ServerHook *fn);
/* Stop accepting, close clients, remove pid file and unix socket, exit. */
void serverShutdown(int exitCode) __attribute__((noreturn));
/* A shutdown's flags (SHUTDOWN's arguments, shutdown-on-sigterm/-sigint).
 * What runs before exiting is no hook: server/shutdown.c calls each step
 * in its written order (ldbKillForkedSessions, then
 * persistPrepareShutdown). */
#define SHUTDOWN_NOFLAGS 0
#define SHUTDOWN_SAVE (1 << 0)
#define SHUTDOWN_NOSAVE (1 << 1)
#define SHUTDOWN_FORCE (1 << 2)
#define SHUTDOWN_NOW (1 << 3)   /* no wait for lagging replicas */
/* Run by FLUSHALL after every database was emptied (signalFlushedDb(-1)
 * ran before), before FLUSHALL propagates and replies; in the order added
 * (initFeatures, then persistInit).  Today one: persistence stops a save
 * child and, when save points are set, saves the empty dataset (Redis
 * does, so a restart does not bring the data back). */
void serverAddFlushAllDoneHook(ServerHook *fn);
void signalFlushAllDone(void);
/* Run before replies are written from a writable event (outside
 * beforeSleep), in the order added.  Today one: with appendfsync always
 * the AOF is written and fsynced there first (persist/aof.c), so that no
 * reply overtakes its write.  net.c calls serverBeforeReplyWrite, which
 * costs one test while the list is empty. */
void serverAddBeforeReplyWriteHook(ServerHook *fn);
extern int serverBeforeReplyWriteHookCount;
void serverRunBeforeReplyWriteHooks(void);
static inline void serverBeforeReplyWrite(void) {
    if (serverBeforeReplyWriteHookCount) serverRunBeforeReplyWriteHooks();
}
/* FAILOVER's pause of writes: replication signals it on (1) when a
 * FAILOVER starts waiting for its target and off (0) when the failover
 * ends; the hooks run in the order added (initFeatures).  Today one: the
 * pause feature (pauseInit) postpones write commands as under CLIENT
 * PAUSE WRITE until it is off; CLIENT UNPAUSE does not end it. */
typedef void FailoverPauseHook(int on);
void serverAddFailoverPauseHook(FailoverPauseHook *fn);
void signalFailoverPause(int on);

#endif
