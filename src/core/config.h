/* config.h -- the directive registry, with Redis's names and defaults.
 *
 * Each feature owns its directives: it declares a table of ConfigDef rows
 * (name, alias, type, bounds or enum values, default, flags, where the
 * value lives, an optional apply function run by CONFIG SET) in its own
 * file and hands it to configRegister from main.c's start-up wiring,
 * before the defaults are applied.  config.c holds the engine (the file
 * parser, `--name value` arguments, CONFIG GET/SET/REWRITE/RESETSTAT) and
 * the core's own directives (network, logging, process).  Values live
 * where the row's `var` points: a field of `server.cfg` (ServerConfig)
 * when several layers read it, else the feature's own variable. */
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
    int shutdownOnSigterm, shutdownOnSigint; /* SHUTDOWN_* flags of shutdown-on-sigterm/-sigint (server.h) */
    int shutdownTimeout;         /* seconds a shutdown waits for lagging replicas */
    char *procTitleTemplate;
    int setProcTitle;
    /* Memory: maxmemory and the keyspace's eviction settings are
     * server/maxmemory.c's directives, the lazy-free and expiry ones core's. */
    unsigned long long maxmemory;
    DbConfig keyspace;           /* maxmemory-policy, lfu-log-factor, lfu-decay-time (db.h) */
    unsigned long long maxmemoryClients; /* maxmemory-clients: bytes, or percent of maxmemory */
    int maxmemoryClientsPercent;
    int activeExpireEffort;
    int lazyfreeLazyEviction, lazyfreeLazyExpire, lazyfreeLazyServerDel;
    int lazyfreeLazyUserDel, lazyfreeLazyUserFlush;
    int activeRehashing;
    /* Encodings read outside their type's file (the rest are the types' own). */
    long long hashMaxListpackEntries; /* types/t_hash.c; the RDB loader reads it too */
    long long listMaxListpackSize;   /* types/t_list.c; SORT and the RDB loader too */
    int listCompressDepth;
    long long zsetMaxListpackEntries; /* types/t_zset.c; the RDB loader reads it too */
    /* Introspection: notify-keyspace-events (server/notify.c's directive;
     * core drops the events no one enabled) and busy-reply-threshold
     * (script/engine.c's; the debugger reads it too). */
    int notifyFlags;             /* notify-keyspace-events, parsed (server/notify.c) */
    long long busyReplyThreshold;
    /* Persistence: the directives of persist/persist.c and persist/aof.c
     * (replication and the RDB writer read them too), and the core's own
     * process settings (CPU lists, OOM score, jemalloc, THP). */
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
    /* Replication: repl/repl.c's directives. */
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
    /* The append-only file: persist/aof.c's directives. */
    int aofLoadTruncated;        /* load a cut-off last command (trimmed) */
    int aofTimestampEnabled;     /* #TS:<unix> annotations */
    int aofUseRdbPreamble;       /* base file as RDB (else commands) */
    int aofRewriteIncrementalFsync;
    int aofDisableAutoGc;        /* keep history files after a rewrite */
    int noAppendfsyncOnRewrite;  /* no fsync while a child runs */
    int autoAofRewritePerc;
    long long autoAofRewriteMinSize;
} ServerConfig;

/* ------------------------------------------------------------------------
 * Directive tables
 *
 * A feature declares `static ConfigDef xxxConfig[] = {...}` with the
 * CONFIG_* row macros below and registers it once, from main.c, with
 * configRegister(xxxConfig, n) before configInitDefaults.  A row is the
 * whole definition of a directive: the file parser, `--name value`, CONFIG
 * GET/SET/REWRITE and the defaults all follow it.  The row's `var` points
 * at the value (the type says which C type); defaults are applied by
 * parsing `deflt` through the same setter a config file line uses.
 *
 * Order: CONFIG GET * and the lines CONFIG REWRITE appends list the
 * directives by `rank`, then by name: the CONFIG_RANK_* sections keep
 * Cairn's historical order (a row's rank is its section plus its place),
 * rank 0 (the default) sorts a directive by name among Redis's others,
 * after the sections, which is where a new feature's directives go.
 * ------------------------------------------------------------------------ */
typedef enum {
    CT_BOOL,    /* int, yes/no */
    CT_INT,     /* int */
    CT_UINT,    /* int field holding an unsigned range (maxclients) */
    CT_LL,      /* long long */
    CT_ULONG,   /* unsigned long */
    CT_ULL,     /* unsigned long long */
    CT_ENUM,    /* int, one of `enums` */
    CT_STRING,  /* char * (sds with CF_BINARY), owned by the engine */
    CT_SPECIAL, /* the row's own set/get (and optional rewrite) */
    CT_RAW,     /* not implemented by Cairn: text stored as given */
} ConfigType;

#define CF_IMMUTABLE (1u << 0)  /* CONFIG SET refuses */
#define CF_SENSITIVE (1u << 1)  /* value never logged */
#define CF_MEMORY (1u << 2)     /* numeric parsed with units (1gb, 100k) */
#define CF_MULTI_ARG (1u << 3)  /* takes several arguments on one line */
#define CF_HIDDEN (1u << 4)     /* only an exact name matches CONFIG GET */
#define CF_PROTECTED (1u << 5)  /* CONFIG SET needs enable-protected-configs */
#define CF_EMPTY_NULL (1u << 6) /* string: "" is stored as NULL */
#define CF_BASENAME (1u << 7)   /* string: a file or directory name, not a path */
#define CF_ONLY_DEFAULT (1u << 8) /* raw or enum: a feature Cairn lacks; other values refused */
#define CF_RAW_BOOL (1u << 9)   /* raw: validated as yes/no */
#define CF_RAW_INT (1u << 10)   /* raw: validated as an integer in [min, max] */
#define CF_BINARY (1u << 11)    /* string: an sds keeping every byte (NUL too), as Redis's sds configs */
#define CF_EMPTY_ARG (1u << 12) /* multi-arg: an empty value is one empty argument (`save ""`), not none */
#define CF_QUOTED (1u << 13)    /* special: CONFIG REWRITE writes the value as one quoted string */
#define CF_ALWAYS_REWRITE (1u << 14) /* CONFIG REWRITE writes it even at its default (dir) */

#define CONFIG_RANK_NETWORK 100
#define CONFIG_RANK_USERS 200
#define CONFIG_RANK_GENERAL 300
#define CONFIG_RANK_MEMORY 400
#define CONFIG_RANK_ENCODINGS 500
#define CONFIG_RANK_INTROSPECTION 600
#define CONFIG_RANK_PERSISTENCE 700
#define CONFIG_RANK_BY_NAME 0     /* Redis's other directives, by name (the default) */
#define CONFIG_RANK_HIDDEN 2000   /* hidden test and debug directives, by name */
#define CONFIG_RANK_CAIRN 3000    /* Cairn's own hidden tuning, in its place */

typedef struct ConfigEnum {
    const char *name;
    int value;
} ConfigEnum;

typedef struct ConfigDef ConfigDef;
/* CT_SPECIAL: parse argv (the directive's arguments) into d->var (or the
 * feature's state); on error return -1 with *err set (static text, or
 * configErrorBuffer()) and the old value untouched. */
typedef int ConfigSetFn(ConfigDef *d, sds *argv, int argc, const char **err);
/* CT_SPECIAL: the value as CONFIG GET shows it; the caller owns it. */
typedef sds ConfigGetFn(const ConfigDef *d);
/* The lines CONFIG REWRITE writes for the value (each "name args"), in an
 * array the caller frees with sdsFreeSplitRes; *count may be 0. */
typedef sds *ConfigRewriteFn(const ConfigDef *d, int *count);
/* Run once by CONFIG SET after a value changed (the new one is in place):
 * 0, or -1 with *err, and CONFIG SET restores the old values and runs it
 * again. */
typedef int ConfigApplyFn(const char **err);

struct ConfigDef {
    const char *name;
    const char *alias;        /* older name, or NULL */
    ConfigType type;
    unsigned flags;           /* CF_* */
    void *var;                /* the value (CT_RAW: NULL) */
    long long min, max;       /* numeric bounds (inclusive) */
    const char *deflt;        /* default, as a config file would write it */
    const ConfigEnum *enums;  /* CT_ENUM: NULL-name-terminated */
    ConfigSetFn *set;         /* CT_SPECIAL */
    ConfigGetFn *get;         /* CT_SPECIAL */
    ConfigRewriteFn *rewrite; /* several lines, or NULL */
    ConfigApplyFn *apply;     /* run after CONFIG SET changed it, or NULL */
    int rank;                 /* CONFIG_RANK_* (see above) */
    /* Instead of apply: run once per distinct (applyDef, applyKey) of the
     * changed values, given the first such row (module configs). */
    int (*applyDef)(ConfigDef *d, const char **err);
    const void *applyKey;
    const char *applyName; /* applyDef failed: the name CONFIG SET's error gives */
    /* The engine's run-time state (leave unset). */
    sds raw;                  /* CT_RAW: current text */
    sds defaultValue;         /* the default as CONFIG GET shows it (REWRITE) */
    int seenInFile;           /* set while loading (unsupported log, save reset) */
};

/* Row macros; the trailing arguments are more fields (.apply = fn,
 * .rank = CONFIG_RANK_MEMORY + 2, .enums = ...). */
#define CONFIG_BOOL(n, a, fl, v, def, ...) \
    {.name = n, .alias = a, .type = CT_BOOL, .flags = fl, .var = &(v), .min = 0, .max = 1, .deflt = def, __VA_ARGS__}
#define CONFIG_INT(n, a, fl, v, lo, hi, def, ...) \
    {.name = n, .alias = a, .type = CT_INT, .flags = fl, .var = &(v), .min = lo, .max = hi, .deflt = def, __VA_ARGS__}
#define CONFIG_LL(n, a, fl, v, lo, hi, def, ...) \
    {.name = n, .alias = a, .type = CT_LL, .flags = fl, .var = &(v), .min = lo, .max = hi, .deflt = def, __VA_ARGS__}
#define CONFIG_ENUM(n, a, fl, v, en, def, ...) \
    {.name = n, .alias = a, .type = CT_ENUM, .flags = fl, .var = &(v), .enums = en, .deflt = def, __VA_ARGS__}
#define CONFIG_STRING(n, a, fl, v, def, ...) \
    {.name = n, .alias = a, .type = CT_STRING, .flags = fl, .var = &(v), .deflt = def, __VA_ARGS__}
#define CONFIG_SPECIAL(n, a, fl, def, setf, getf, ...) \
    {.name = n, .alias = a, .type = CT_SPECIAL, .flags = fl, .deflt = def, .set = setf, .get = getf, __VA_ARGS__}
#define CONFIG_COUNT_OF(table) (sizeof(table) / sizeof((table)[0]))

/* Add a feature's directives (the rows stay the feature's; the engine
 * keeps pointers).  A name or alias registered twice aborts start-up. */
void configRegister(ConfigDef *defs, size_t n);
/* Run-time registration (module configs): a row added after start-up,
 * with its defaultValue set by the caller; -1 when the name is taken.
 * configUnregister takes it out (the caller frees it). */
int configRegisterDynamic(ConfigDef *d);
void configUnregister(ConfigDef *d);
/* The handler of a config file line whose unknown name has a dot (a
 * module's config, `module.name value`): NULL or the error text. */
void configSetDottedLineHandler(const char *(*fn)(sds *argv, int argc));
/* Whether a config file or `--name value` arguments are being read (a
 * setter may treat a file's repeated lines differently from CONFIG SET). */
int configIsLoading(void);
/* A buffer for a setter's formatted error text, valid until the next
 * setter runs. */
char *configErrorBuffer(size_t *size);
/* Shared parsers for special setters: yes/no (1, 0, or -1); a memory
 * value with an optional unit (0 or -1); a string directive's value into
 * an owned C string (NULL stays NULL). */
int configYesNo(const char *s);
int configParseMemory(const char *s, unsigned long long *out);
void configSetString(char **slot, const char *v);
/* The entry of d's enum named arg (case-insensitive), or NULL after
 * setting *err to Redis's list of the allowed words. */
const ConfigEnum *configEnumFind(const ConfigDef *d, const char *arg, const char **err);
/* A byte count as CONFIG REWRITE writes it (1gb, 64mb, 3kb, 1000). */
sds configMemoryText(unsigned long long v);

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

/* A kind of config file line that is not a directive (the ACL's `user`
 * lines): CONFIG GET/SET know nothing of it, the feature keeps the lines.
 * parse gets the line split (argv[0] the name, lower case) and where it
 * was read (for configFatalLineError later), and returns NULL or the
 * error text reported at that line.  rewrite returns the lines CONFIG
 * REWRITE writes (an array the caller frees with sdsFreeSplitRes, NULL
 * when none): they take the places of the file's lines of that kind, in
 * order (extra old ones become blank), the rest are appended after the
 * signature, before the directives. */
typedef struct ConfigLineKind {
    const char *name;
    const char *(*parse)(sds *argv, int argc, int linenum, const char *line);
    sds *(*rewrite)(int *count);
} ConfigLineKind;
/* Register a line kind (kept by pointer), from main.c's registerConfig. */
void configRegisterLineKind(const ConfigLineKind *kind);

/* Report an error of a config file line as a bad directive is reported
 * (Redis's FATAL CONFIG FILE ERROR on stderr) and exit(1). */
_Noreturn void configFatalLineError(int linenum, const char *line, const char *err);

/* Fill every registered directive with its default (the core's table is
 * registered here, first); call once, after the features' configRegister
 * calls and before configLoadFromArgs. */
void configInitDefaults(void);
/* Parse the command line as redis-server does: [configfile] [--name value
 * ...] ["-" to read config from stdin]; loads the file(s).  On an invalid
 * directive, prints Redis's "*** FATAL CONFIG FILE ERROR ***" report to
 * stderr and exits 1.  Directives Redis 7.0 knows but Cairn ignores are
 * logged once each ("... not supported by Cairn, ignored") at the end. */
void configLoadFromArgs(int argc, char **argv);
/* Path of the config file loaded, NULL if none (CONFIG REWRITE, INFO). */
const char *configFilePath(void);
/* Sentinel mode's use of a registered directive (it reads its own config
 * file): sets the directive named name from argv (its arguments, the name
 * excluded) as a config file line would (main.c applied the defaults
 * before Sentinel mode starts).  0, or
 * -1 with *err set (also for a name nobody registered). */
int configSetDirective(const char *name, sds *argv, int argc, const char **err);

/* Implemented by the server: re-open the listeners after CONFIG SET
 * changed port / bind in server.cfg.  Returns 0, or -1 with *err set to
 * the reason CONFIG SET reports, Redis's for each (the old values are then
 * restored and the hook is called again). */
int configApplyPort(const char **err);
int configApplyBind(const char **err);
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
