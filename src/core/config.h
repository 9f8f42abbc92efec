/* config.h -- every directive Cairn has, with Redis's names and defaults.
 *
 * The values live in `server.cfg` (ServerConfig).  config.c holds one
 * declarative table: name, alias, type, bounds or enum values, default,
 * flags (immutable, sensitive...), and an optional apply hook run by CONFIG
 * SET.  The file parser, `--name value` arguments, CONFIG GET/SET/REWRITE and
 * the annotated cairn.conf all follow that table. */
#ifndef CAIRN_CONFIG_H
#define CAIRN_CONFIG_H

#include <stddef.h>
#include <sys/types.h>

#include "core/command.h"
#include "db/db.h"
#include "ds/sds.h"

enum { LL_DEBUG = 0, LL_VERBOSE = 1, LL_NOTICE = 2, LL_WARNING = 3, LL_NOTHING = 4 };
enum { SUPERVISED_NONE = 0, SUPERVISED_AUTODETECT, SUPERVISED_SYSTEMD, SUPERVISED_UPSTART };
enum { DEBUGCMD_NO = 0, DEBUGCMD_YES = 1, DEBUGCMD_LOCAL = 2 };
enum { APPENDFSYNC_NO = 0, APPENDFSYNC_ALWAYS = 1, APPENDFSYNC_EVERYSEC = 2 };
#define CONFIG_MAX_BIND 16

/* Client output buffer limits, per class. */
enum { CLIENT_TYPE_NORMAL = 0, CLIENT_TYPE_REPLICA = 1, CLIENT_TYPE_PUBSUB = 2, CLIENT_TYPE_COUNT = 3 };
/* The link to our primary (CLIENT KILL TYPE master): no output limit. */
#define CLIENT_TYPE_MASTER 3
typedef struct ObufLimit {
    unsigned long long hard, soft;
    long long softSeconds;
} ObufLimit;

/* A `user` directive: argv[0] is the name, then its rules; where it was
 * read (line number in its file, the line's text) for the ACL's errors. */
typedef struct ConfigUserLine {
    sds *argv;
    int argc;
    int linenum;
    sds line;
} ConfigUserLine;

typedef struct ServerConfig {
    /* Network. */
    int port;
    char *bind[CONFIG_MAX_BIND];
    int bindCount;
    int tcpBacklog;
    int tcpKeepalive;
    char *unixsocket;            /* NULL when unset */
    mode_t unixsocketperm;
    int protectedMode;
    int maxclients;
    int timeout;                 /* seconds idle before close, 0 = never */
    long long protoMaxBulkLen;
    long long clientQueryBufferLimit;
    ObufLimit obufLimits[CLIENT_TYPE_COUNT];
    sds requirepass;             /* NULL when unset; binary (may hold NUL bytes) */
    /* Users (the ACL, server/acl.c, applies them). */
    char *aclfile;               /* NULL when unset */
    int aclPubsubDefault;        /* new users: 1 resetchannels (7.0's default), 0 allchannels */
    long long acllogMaxLen;
    ConfigUserLine *aclUsers;    /* the config file's `user` lines, in order */
    int aclUserCount;
    /* General. */
    int hz;
    int dynamicHz;
    int databases;
    int loglevel;
    char *logfile;               /* "" = stdout */
    int syslogEnabled;
    char *syslogIdent;
    int syslogFacility;          /* LOG_USER, LOG_LOCAL0..7 */
    int alwaysShowLogo;
    int daemonize;
    char *pidfile;               /* NULL when unset */
    int supervised;
    char *dir;                   /* working directory (applied with chdir) */
    int enableDebugCommand;
    int enableProtectedConfigs;
    int enableModuleCommand;
    int crashLogEnabled;
    int crashMemcheckEnabled;    /* a crash report ends with a fast memory test (core/crash.c) */
    int useExitOnPanic;          /* use-exit-on-panic (hidden): a panic or assert exits 1, no abort() */
    int luaEnableDeprecatedApi;  /* lua-enable-deprecated-api (hidden, immutable): scripts keep getfenv/setfenv/newproxy */
    int watchdogPeriod;          /* watchdog-period (hidden): ms, 0 = the software watchdog is off */
    int shutdownOnSigterm, shutdownOnSigint; /* SHUTDOWN_* flags of shutdown-on-sigterm/-sigint (server.h) */
    int shutdownTimeout;         /* seconds a shutdown waits for lagging replicas */
    char *procTitleTemplate;
    int setProcTitle;
    /* Memory. */
    unsigned long long maxmemory;
    DbConfig keyspace;           /* maxmemory-policy, lfu-log-factor, lfu-decay-time (db.h) */
    int maxmemorySamples;
    unsigned long long maxmemoryClients; /* maxmemory-clients: bytes, or percent of maxmemory */
    int maxmemoryClientsPercent;
    int maxmemoryEvictionTenacity;
    int activeExpireEffort;
    int lazyfreeLazyEviction, lazyfreeLazyExpire, lazyfreeLazyServerDel;
    int lazyfreeLazyUserDel, lazyfreeLazyUserFlush;
    int activeRehashing;
    /* Encodings (used by the collection issues). */
    long long hashMaxListpackEntries, hashMaxListpackValue;
    long long listMaxListpackSize;
    int listCompressDepth;
    long long setMaxIntsetEntries;
    long long zsetMaxListpackEntries, zsetMaxListpackValue;
    long long streamNodeMaxBytes, streamNodeMaxEntries;
    long long hllSparseMaxBytes;
    /* Introspection. */
    long long slowlogLogSlowerThan;
    unsigned long slowlogMaxLen;
    long long latencyMonitorThreshold;
    int latencyTracking;         /* per-command latency histograms on */
    long long trackingTableMaxKeys; /* 0 = no limit */
    double *latencyPercentiles;  /* INFO latencystats percentiles, owned */
    int latencyPercentileCount;
    char *notifyKeyspaceEvents;  /* as given, e.g. "" or "KEA" */
    int notifyFlags;             /* parsed form */
    long long busyReplyThreshold;
    /* Persistence (parsed now, used by the persistence issue). */
    char *dbfilename;
    char *saveParams;            /* "3600 1 300 100 60 10000" or "" */
    int appendonly;
    char *appendfilename;
    char *appenddirname;
    int appendfsync;
    int rdbcompression, rdbchecksum;
    int stopWritesOnBgsaveError;
    char *serverCpulist, *bioCpulist; /* CPU lists (Redis's "0-3,8,10-14:2"), NULL when unset */
    char *aofRewriteCpulist, *bgsaveCpulist;
    long long socketMarkId;      /* SO_MARK of the listening TCP sockets, 0 none */
    int rdbSaveIncrementalFsync; /* fsync an RDB being written every few MB */
    int jemallocBgThread;        /* jemalloc's background purging threads */
    int disableThp;              /* disable-thp: no transparent huge pages for this process */
    int oomScoreAdj;             /* OOM_SCORE_ADJ_* */
    int oomScoreAdjValues[3];    /* by CONFIG_OOM_* class, each in [-2000, 2000] */
    int rdbKeySaveDelay;         /* microseconds slept per key saved (tests) */
    int rdbSaveThreads;          /* rdb-save-threads (Cairn's own): threads serializing a snapshot, 0 auto */
    int rdbLoadThreads;          /* rdb-load-threads (Cairn's own): threads decompressing a loaded file, 0 auto */
    int keyLoadDelay;            /* microseconds slept per key loaded (tests; < 0: 1 µs once in -n keys) */
    int loadingProcessEventsIntervalBytes; /* the loop turns every so many bytes loaded */
    int rdbDelSyncFiles;         /* remove an RDB made only for replication when persistence is off */
    int sanitizeDumpPayload;     /* SANITIZE_PAYLOAD_* */
    /* Replication (src/repl). */
    char *replicaof;             /* "host port" while a replica (REPLICAOF keeps it live), NULL when a primary */
    sds masterauth;              /* NULL when unset; binary (may hold NUL bytes) */
    char *masteruser;            /* NULL when unset */
    long long replBacklogSize, replBacklogTtl;
    int replDisklessSync, replDisklessSyncDelay, replDisklessSyncMaxReplicas, replDisklessLoad;
    int replPingReplicaPeriod, replTimeout, replDisableTcpNodelay;
    char *replicaAnnounceIp;     /* NULL when unset */
    int replicaAnnouncePort, replicaAnnounced, replicaPriority;
    int replicaReadOnly, replicaServeStaleData, replicaLazyFlush;
    int propagationErrorBehavior; /* 0 ignore, 1 panic, 2 panic-on-replicas */
    int replicaIgnoreDiskWriteErrors; /* apply the primary's writes despite MISCONF */
    int replicaIgnoreMaxmemory;   /* a replica does not evict (the primary's DELs do) */
    char *bindSourceAddr;        /* bind-source-addr: the replica link's local address, NULL: any */
    int minReplicasToWrite, minReplicasMaxLag;
    /* The append-only file (persist/aof.c). */
    int aofLoadTruncated;        /* load a cut-off last command (trimmed) */
    int aofTimestampEnabled;     /* #TS:<unix> annotations */
    int aofUseRdbPreamble;       /* base file as RDB (else commands) */
    int aofRewriteIncrementalFsync;
    int aofDisableAutoGc;        /* keep history files after a rewrite */
    int noAppendfsyncOnRewrite;  /* no fsync while a child runs */
    int autoAofRewritePerc;
    long long autoAofRewriteMinSize;
} ServerConfig;

#define OOM_SCORE_ADJ_NO 0
#define OOM_SCORE_ADJ_RELATIVE 1 /* also "yes" */
#define OOM_SCORE_ADJ_ABSOLUTE 2
#define CONFIG_OOM_MASTER 0
#define CONFIG_OOM_REPLICA 1
#define CONFIG_OOM_BGCHILD 2
#define CONFIG_OOM_BY_ROLE (-1) /* the main process: master or replica by its role */

/* Write /proc/self/oom_score_adj for a process of the class (CONFIG_OOM_*)
 * as oom-score-adj says: with "relative" the class's value is added to the
 * score the process had when Cairn first adjusted it, with "absolute" it
 * replaces it (both clamped to [-1000, 1000]); back to "no" restores that
 * first score.  Nothing is written while the setting is "no" and nothing
 * was adjusted.  0, or -1 (logged) when the file cannot be read/written.
 * Called at start-up, on a role change, by each fork child, and by CONFIG
 * SET of either directive. */
int configApplyOomScoreAdj(int processClass);

/* Bind the calling thread to the CPUs of cpulist (server_cpulist's format:
 * comma-separated CPUs or ranges "a-b", a range with a step "a-b:s").  A
 * list that does not parse, or that the kernel refuses, changes nothing,
 * as in Redis.  NULL or "" does nothing. */
void configSetCpuAffinity(const char *cpulist);
/* Start-up: server_cpulist for the main thread, bio_cpulist for the
 * background threads started from now on. */
void configApplyCpuLists(void);
/* Start-up: jemalloc-bg-thread no stops jemalloc's background threads
 * (on by default); with disable-thp, a kernel whose transparent huge pages
 * are "always" gives this process none (as Redis: less latency and copy-
 * on-write after a fork); "madvise" or "never" need nothing. */
void configApplyMemorySettings(void);

#define SANITIZE_PAYLOAD_NO 0
#define SANITIZE_PAYLOAD_YES 1
#define SANITIZE_PAYLOAD_CLIENTS 2

/* The ACL's hooks: CONFIG SET requirepass gives the default user that
 * password (its bytes, NUL included; NULL when unset); CONFIG REWRITE writes the users as `user` lines (the caller
 * frees them with sdsFreeSplitRes). */
typedef void ConfigRequirepassHook(const char *pass, size_t len);
typedef sds *ConfigUserLinesHook(int *count);
void configSetAclHooks(ConfigRequirepassHook *onRequirepass, ConfigUserLinesHook *userLines);

/* Report an error of a config file line as a bad directive is reported
 * (Redis's FATAL CONFIG FILE ERROR on stderr) and exit(1). */
_Noreturn void configFatalLineError(int linenum, const char *line, const char *err);

/* Fill cfg with the defaults of every directive. */
void configInitDefaults(ServerConfig *cfg);
/* Parse the command line as redis-server does: [configfile] [--name value
 * ...] ["-" to read config from stdin]; loads the file(s).  On an invalid
 * directive, prints Redis's "*** FATAL CONFIG FILE ERROR ***" report to
 * stderr and exits 1.  Directives Redis 7.0 knows but Cairn ignores are
 * logged once each ("... not supported by Cairn, ignored") at the end. */
void configLoadFromArgs(ServerConfig *cfg, int argc, char **argv);
/* Path of the config file loaded, NULL if none (CONFIG REWRITE, INFO). */
const char *configFilePath(void);

/* notify-keyspace-events text <-> NOTIFY_* bits (server.h).  The parser
 * returns -1 on an unknown class character; the printer returns Redis's
 * canonical form ("AKE", "g$xE"...), owned by the caller. */
int keyspaceEventsStringToFlags(const char *classes);
sds keyspaceEventsFlagsToString(int flags);

/* Implemented by the server: re-open the listeners after CONFIG SET
 * changed port / bind in server.cfg.  Returns 0, or -1 with *err set to
 * the reason CONFIG SET reports, Redis's for each (the old values are then
 * restored and the hook is called again). */
int configApplyPort(const char **err);
int configApplyBind(const char **err);
/* Installed by persistence: CONFIG SET appendonly starts or stops the
 * append-only file (server.cfg.appendonly is the new value).  Returns 0,
 * or -1 with *err when the AOF could not be started. */
extern int (*configApplyAppendonlyHook)(const char **err);
/* Installed by persistence: CONFIG SET aof-disable-auto-gc (turned off, the
 * AOF's history files are removed at once, as Redis does). */
extern void (*configApplyAofAutoGcHook)(void);
/* Installed by server/maxmemory.c: CONFIG SET maxmemory changed the limit
 * (a lower one evicts at once, as Redis does). */
extern void (*configApplyMaxmemoryHook)(void);
/* Installed by replication: CONFIG SET min-replicas-to-write,
 * min-replicas-max-lag or repl-backlog-size changed (the good replicas are
 * counted again and the backlog resized at once, as Redis does). */
extern void (*configApplyReplicationHook)(void);
/* A double as Redis prints a config's or INFO's (printf "%f" without the
 * trailing zeros and dot) into buf (at least 128 bytes). */
void configFormatDouble(char *buf, double d);
/* Implemented by the server: CONFIG RESETSTAT. */
void serverResetStats(void);

/* CONFIG command handlers (src/core/config.c). */
struct Client;
void configGetCommand(struct Client *c);
void configSetCommand(struct Client *c);
void configResetStatCommand(struct Client *c);
void configRewriteCommand(struct Client *c);
/* CONFIG REWRITE of the loaded file (forceAll: every directive written,
 * DEBUG CONFIG-REWRITE-FORCE-ALL): 0, or -1 with errno set. */
int configRewriteFile(int forceAll);
void configHelpCommand(struct Client *c);
/* The "config" container command and its subcommands. */
extern Command configCommands[];

#endif
