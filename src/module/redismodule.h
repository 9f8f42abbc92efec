/* redismodule.h -- Cairn's header for loadable modules: the Redis 7.0
 * module API, binary-compatible.
 *
 * A module is a shared library exporting
 *     int RedisModule_OnLoad(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);
 * The server calls it with a context whose first member is a pointer to
 * the lookup function `int GetApi(const char *name, void *funcptr)`.  The
 * inline RedisModule_Init below reads that pointer, asks for every API
 * function by its name ("RedisModule_" + name) and stores it in the
 * module's own function pointer of that name, then registers the module
 * (RedisModule_SetModuleAttribs).  A function the server does not export
 * stays NULL in the module: calling it crashes the module, which is why
 * Cairn exports every function this header declares.
 *
 * Invariants shared with Redis 7.0.15 (so that a module compiled against
 * either header loads into either server): the constants' values, the
 * order of the fields of every public struct (RedisModuleTypeMethods,
 * RedisModuleCommandInfo and the structs it points to, RedisModuleEvent),
 * and each function's signature.  The handle types (RedisModuleCtx,
 * RedisModuleString, RedisModuleKey, RedisModuleCallReply, RedisModuleIO,
 * RedisModuleType...) are opaque pointers.
 *
 * Written for Cairn from the public module API reference; the server side
 * is src/module/module.c. */
#ifndef REDISMODULE_H
#define REDISMODULE_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/types.h>

/* ---- constants (the same values as Redis 7.0's) ---- */

#define REDISMODULE_OK 0
#define REDISMODULE_ERR 1
#define REDISMODULE_APIVER_1 1
#define REDISMODULE_TYPE_METHOD_VERSION 4

/* OpenKey modes */
#define REDISMODULE_READ (1 << 0)
#define REDISMODULE_WRITE (1 << 1)
#define REDISMODULE_OPEN_KEY_NOTOUCH (1 << 16)

#define REDISMODULE_LIST_HEAD 0
#define REDISMODULE_LIST_TAIL 1

/* KeyType answers */
#define REDISMODULE_KEYTYPE_EMPTY 0
#define REDISMODULE_KEYTYPE_STRING 1
#define REDISMODULE_KEYTYPE_LIST 2
#define REDISMODULE_KEYTYPE_HASH 3
#define REDISMODULE_KEYTYPE_SET 4
#define REDISMODULE_KEYTYPE_ZSET 5
#define REDISMODULE_KEYTYPE_MODULE 6
#define REDISMODULE_KEYTYPE_STREAM 7

/* CallReplyType answers */
#define REDISMODULE_REPLY_UNKNOWN -1
#define REDISMODULE_REPLY_STRING 0
#define REDISMODULE_REPLY_ERROR 1
#define REDISMODULE_REPLY_INTEGER 2
#define REDISMODULE_REPLY_ARRAY 3
#define REDISMODULE_REPLY_NULL 4
#define REDISMODULE_REPLY_MAP 5
#define REDISMODULE_REPLY_SET 6
#define REDISMODULE_REPLY_BOOL 7
#define REDISMODULE_REPLY_DOUBLE 8
#define REDISMODULE_REPLY_BIG_NUMBER 9
#define REDISMODULE_REPLY_VERBATIM_STRING 10
#define REDISMODULE_REPLY_ATTRIBUTE 11

/* ReplyWithArray/Map/Set/Attribute: the length is given later */
#define REDISMODULE_POSTPONED_ARRAY_LEN -1
#define REDISMODULE_POSTPONED_LEN -1

#define REDISMODULE_NO_EXPIRE -1

/* sorted-set API flags */
#define REDISMODULE_ZADD_XX (1 << 0)
#define REDISMODULE_ZADD_NX (1 << 1)
#define REDISMODULE_ZADD_ADDED (1 << 2)
#define REDISMODULE_ZADD_UPDATED (1 << 3)
#define REDISMODULE_ZADD_NOP (1 << 4)
#define REDISMODULE_ZADD_GT (1 << 5)
#define REDISMODULE_ZADD_LT (1 << 6)

/* hash API flags */
#define REDISMODULE_HASH_NONE 0
#define REDISMODULE_HASH_NX (1 << 0)
#define REDISMODULE_HASH_XX (1 << 1)
#define REDISMODULE_HASH_CFIELDS (1 << 2)
#define REDISMODULE_HASH_EXISTS (1 << 3)
#define REDISMODULE_HASH_COUNT_ALL (1 << 4)
/* HashSet: this value deletes the field */
#define REDISMODULE_HASH_DELETE ((RedisModuleString *)(long)1)

/* GetContextFlags bits */
#define REDISMODULE_CTX_FLAGS_LUA (1 << 0)
#define REDISMODULE_CTX_FLAGS_MULTI (1 << 1)
#define REDISMODULE_CTX_FLAGS_MASTER (1 << 2)
#define REDISMODULE_CTX_FLAGS_SLAVE (1 << 3)
#define REDISMODULE_CTX_FLAGS_READONLY (1 << 4)
#define REDISMODULE_CTX_FLAGS_CLUSTER (1 << 5)
#define REDISMODULE_CTX_FLAGS_AOF (1 << 6)
#define REDISMODULE_CTX_FLAGS_RDB (1 << 7)
#define REDISMODULE_CTX_FLAGS_MAXMEMORY (1 << 8)
#define REDISMODULE_CTX_FLAGS_EVICT (1 << 9)
#define REDISMODULE_CTX_FLAGS_OOM (1 << 10)
#define REDISMODULE_CTX_FLAGS_OOM_WARNING (1 << 11)
#define REDISMODULE_CTX_FLAGS_REPLICATED (1 << 12)
#define REDISMODULE_CTX_FLAGS_LOADING (1 << 13)
#define REDISMODULE_CTX_FLAGS_DENY_BLOCKING (1 << 21)
#define REDISMODULE_CTX_FLAGS_RESP3 (1 << 22)

/* RedisModule_Yield flags */
#define REDISMODULE_YIELD_FLAG_NONE (1 << 0)
#define REDISMODULE_YIELD_FLAG_CLIENTS (1 << 1)

/* keyspace notification classes (NOTIFY_* of the server) */
#define REDISMODULE_NOTIFY_KEYSPACE (1 << 0)
#define REDISMODULE_NOTIFY_KEYEVENT (1 << 1)
#define REDISMODULE_NOTIFY_GENERIC (1 << 2)
#define REDISMODULE_NOTIFY_STRING (1 << 3)
#define REDISMODULE_NOTIFY_LIST (1 << 4)
#define REDISMODULE_NOTIFY_SET (1 << 5)
#define REDISMODULE_NOTIFY_HASH (1 << 6)
#define REDISMODULE_NOTIFY_ZSET (1 << 7)
#define REDISMODULE_NOTIFY_EXPIRED (1 << 8)
#define REDISMODULE_NOTIFY_EVICTED (1 << 9)
#define REDISMODULE_NOTIFY_STREAM (1 << 10)
#define REDISMODULE_NOTIFY_KEY_MISS (1 << 11)
#define REDISMODULE_NOTIFY_LOADED (1 << 12)
#define REDISMODULE_NOTIFY_MODULE (1 << 13)
#define REDISMODULE_NOTIFY_NEW (1 << 14)

#define REDISMODULE_ERRORMSG_WRONGTYPE "WRONGTYPE Operation against a key holding the wrong kind of value"

#define REDISMODULE_POSITIVE_INFINITE (1.0 / 0.0)
#define REDISMODULE_NEGATIVE_INFINITE (-1.0 / 0.0)

#define REDISMODULE_NOT_USED(V) ((void)V)

#define REDISMODULE_NODE_ID_LEN 40

#define REDISMODULE_LOGLEVEL_DEBUG "debug"
#define REDISMODULE_LOGLEVEL_VERBOSE "verbose"
#define REDISMODULE_LOGLEVEL_NOTICE "notice"
#define REDISMODULE_LOGLEVEL_WARNING "warning"

/* SetModuleOptions */
#define REDISMODULE_OPTIONS_HANDLE_IO_ERRORS (1 << 0)
#define REDISMODULE_OPTION_NO_IMPLICIT_SIGNAL_MODIFIED (1 << 1)
#define REDISMODULE_OPTIONS_HANDLE_REPL_ASYNC_LOAD (1 << 2)

#define REDISMODULE_AUX_BEFORE_RDB (1 << 0)
#define REDISMODULE_AUX_AFTER_RDB (1 << 1)

/* ---- command metadata (SetCommandInfo), Redis 7.0's layout ---- */

typedef enum {
    REDISMODULE_ARG_TYPE_STRING,
    REDISMODULE_ARG_TYPE_INTEGER,
    REDISMODULE_ARG_TYPE_DOUBLE,
    REDISMODULE_ARG_TYPE_KEY,
    REDISMODULE_ARG_TYPE_PATTERN,
    REDISMODULE_ARG_TYPE_UNIX_TIME,
    REDISMODULE_ARG_TYPE_PURE_TOKEN,
    REDISMODULE_ARG_TYPE_ONEOF,
    REDISMODULE_ARG_TYPE_BLOCK
} RedisModuleCommandArgType;

#define REDISMODULE_CMD_ARG_NONE (0)
#define REDISMODULE_CMD_ARG_OPTIONAL (1 << 0)
#define REDISMODULE_CMD_ARG_MULTIPLE (1 << 1)
#define REDISMODULE_CMD_ARG_MULTIPLE_TOKEN (1 << 2)

typedef enum {
    REDISMODULE_KSPEC_BS_INVALID = 0, /* zero: the field left out of a literal */
    REDISMODULE_KSPEC_BS_UNKNOWN,
    REDISMODULE_KSPEC_BS_INDEX,
    REDISMODULE_KSPEC_BS_KEYWORD
} RedisModuleKeySpecBeginSearchType;

typedef enum {
    REDISMODULE_KSPEC_FK_OMITTED = 0, /* zero: the field left out of a literal */
    REDISMODULE_KSPEC_FK_UNKNOWN,
    REDISMODULE_KSPEC_FK_RANGE,
    REDISMODULE_KSPEC_FK_KEYNUM
} RedisModuleKeySpecFindKeysType;

#define REDISMODULE_CMD_KEY_RO (1ULL << 0)
#define REDISMODULE_CMD_KEY_RW (1ULL << 1)
#define REDISMODULE_CMD_KEY_OW (1ULL << 2)
#define REDISMODULE_CMD_KEY_RM (1ULL << 3)
#define REDISMODULE_CMD_KEY_ACCESS (1ULL << 4)
#define REDISMODULE_CMD_KEY_UPDATE (1ULL << 5)
#define REDISMODULE_CMD_KEY_INSERT (1ULL << 6)
#define REDISMODULE_CMD_KEY_DELETE (1ULL << 7)
#define REDISMODULE_CMD_KEY_NOT_KEY (1ULL << 8)
#define REDISMODULE_CMD_KEY_INCOMPLETE (1ULL << 9)
#define REDISMODULE_CMD_KEY_VARIABLE_FLAGS (1ULL << 10)

typedef struct RedisModuleCommandArg {
    const char *name;
    RedisModuleCommandArgType type;
    int key_spec_index; /* ARG_TYPE_KEY: its key spec, else -1 */
    const char *token;
    const char *summary;
    const char *since;
    int flags; /* REDISMODULE_CMD_ARG_* */
    const char *deprecated_since;
    struct RedisModuleCommandArg *subargs; /* ONEOF/BLOCK: zero-terminated */
} RedisModuleCommandArg;

typedef struct {
    const char *since;
    const char *changes;
} RedisModuleCommandHistoryEntry;

typedef struct {
    const char *notes;
    uint64_t flags; /* REDISMODULE_CMD_KEY_* */
    RedisModuleKeySpecBeginSearchType begin_search_type;
    union {
        struct {
            int pos; /* argv index of the first key */
        } index;
        struct {
            const char *keyword; /* keys follow this argument */
            int startfrom;       /* searched from here (negative: from the end, backwards) */
        } keyword;
    } bs;
    RedisModuleKeySpecFindKeysType find_keys_type;
    union {
        struct {
            int lastkey; /* relative to the start; negative: from the end */
            int keystep;
            int limit;
        } range;
        struct {
            int keynumidx; /* relative to the start */
            int firstkey;  /* relative to the start */
            int keystep;
        } keynum;
    } fk;
} RedisModuleCommandKeySpec;

/* Sizes of the array elements the module was compiled with: the server
 * walks the arrays with these strides. */
typedef struct {
    int version;
    size_t sizeof_historyentry;
    size_t sizeof_keyspec;
    size_t sizeof_arg;
} RedisModuleCommandInfoVersion;

static const RedisModuleCommandInfoVersion RedisModule_CurrentCommandInfoVersion = {
    .version = 1,
    .sizeof_historyentry = sizeof(RedisModuleCommandHistoryEntry),
    .sizeof_keyspec = sizeof(RedisModuleCommandKeySpec),
    .sizeof_arg = sizeof(RedisModuleCommandArg)};

#define REDISMODULE_COMMAND_INFO_VERSION (&RedisModule_CurrentCommandInfoVersion)

typedef struct {
    const RedisModuleCommandInfoVersion *version; /* REDISMODULE_COMMAND_INFO_VERSION */
    const char *summary;
    const char *complexity;
    const char *since;
    RedisModuleCommandHistoryEntry *history; /* zero-terminated */
    const char *tips;                        /* space-separated */
    int arity;                               /* -N: at least N */
    RedisModuleCommandKeySpec *key_specs;    /* zero-terminated */
    RedisModuleCommandArg *args;             /* zero-terminated */
} RedisModuleCommandInfo;

/* ---- server events (identifiers only in this slice) ---- */

typedef struct RedisModuleEvent {
    uint64_t id;      /* REDISMODULE_EVENT_* */
    uint64_t dataver; /* version of the struct passed as data */
} RedisModuleEvent;

#define REDISMODULE_EVENT_REPLICATION_ROLE_CHANGED 0
#define REDISMODULE_EVENT_PERSISTENCE 1
#define REDISMODULE_EVENT_FLUSHDB 2
#define REDISMODULE_EVENT_LOADING 3
#define REDISMODULE_EVENT_CLIENT_CHANGE 4
#define REDISMODULE_EVENT_SHUTDOWN 5
#define REDISMODULE_EVENT_REPLICA_CHANGE 6
#define REDISMODULE_EVENT_MASTER_LINK_CHANGE 7
#define REDISMODULE_EVENT_CRON_LOOP 8
#define REDISMODULE_EVENT_MODULE_CHANGE 9
#define REDISMODULE_EVENT_LOADING_PROGRESS 10
#define REDISMODULE_EVENT_SWAPDB 11
#define REDISMODULE_EVENT_REPL_BACKUP 12 /* deprecated */
#define REDISMODULE_EVENT_FORK_CHILD 13
#define REDISMODULE_EVENT_REPL_ASYNC_LOAD 14
#define REDISMODULE_EVENT_EVENTLOOP 15
#define REDISMODULE_EVENT_CONFIG 16
#define _REDISMODULE_EVENT_NEXT 17

static const RedisModuleEvent RedisModuleEvent_ReplicationRoleChanged = {REDISMODULE_EVENT_REPLICATION_ROLE_CHANGED, 1},
                              RedisModuleEvent_Persistence = {REDISMODULE_EVENT_PERSISTENCE, 1},
                              RedisModuleEvent_FlushDB = {REDISMODULE_EVENT_FLUSHDB, 1},
                              RedisModuleEvent_Loading = {REDISMODULE_EVENT_LOADING, 1},
                              RedisModuleEvent_ClientChange = {REDISMODULE_EVENT_CLIENT_CHANGE, 1},
                              RedisModuleEvent_Shutdown = {REDISMODULE_EVENT_SHUTDOWN, 1},
                              RedisModuleEvent_ReplicaChange = {REDISMODULE_EVENT_REPLICA_CHANGE, 1},
                              RedisModuleEvent_CronLoop = {REDISMODULE_EVENT_CRON_LOOP, 1},
                              RedisModuleEvent_MasterLinkChange = {REDISMODULE_EVENT_MASTER_LINK_CHANGE, 1},
                              RedisModuleEvent_ModuleChange = {REDISMODULE_EVENT_MODULE_CHANGE, 1},
                              RedisModuleEvent_LoadingProgress = {REDISMODULE_EVENT_LOADING_PROGRESS, 1},
                              RedisModuleEvent_SwapDB = {REDISMODULE_EVENT_SWAPDB, 1},
                              RedisModuleEvent_ForkChild = {REDISMODULE_EVENT_FORK_CHILD, 1},
                              RedisModuleEvent_ReplAsyncLoad = {REDISMODULE_EVENT_REPL_ASYNC_LOAD, 1},
                              RedisModuleEvent_EventLoop = {REDISMODULE_EVENT_EVENTLOOP, 1},
                              RedisModuleEvent_Config = {REDISMODULE_EVENT_CONFIG, 1};

/* subevents */
#define REDISMODULE_SUBEVENT_FLUSHDB_START 0
#define REDISMODULE_SUBEVENT_FLUSHDB_END 1
#define REDISMODULE_SUBEVENT_CLIENT_CHANGE_CONNECTED 0
#define REDISMODULE_SUBEVENT_CLIENT_CHANGE_DISCONNECTED 1
#define REDISMODULE_SUBEVENT_MODULE_LOADED 0
#define REDISMODULE_SUBEVENT_MODULE_UNLOADED 1

/* the data of the events (version 1 of each) */
#define REDISMODULE_CLIENTINFO_VERSION 1
typedef struct RedisModuleClientInfo {
    uint64_t version;
    uint64_t flags;
    uint64_t id;
    char addr[46];
    uint16_t port;
    uint16_t db;
} RedisModuleClientInfoV1;
#define RedisModuleClientInfo RedisModuleClientInfoV1
#define REDISMODULE_CLIENTINFO_FLAG_SSL (1 << 0)
#define REDISMODULE_CLIENTINFO_FLAG_PUBSUB (1 << 1)
#define REDISMODULE_CLIENTINFO_FLAG_BLOCKED (1 << 2)
#define REDISMODULE_CLIENTINFO_FLAG_TRACKING (1 << 3)
#define REDISMODULE_CLIENTINFO_FLAG_UNIXSOCKET (1 << 4)
#define REDISMODULE_CLIENTINFO_FLAG_MULTI (1 << 5)

#define REDISMODULE_FLUSHINFO_VERSION 1
typedef struct RedisModuleFlushInfo {
    uint64_t version;
    int32_t sync;  /* 1: synchronous flush */
    int32_t dbnum; /* -1: FLUSHALL */
} RedisModuleFlushInfoV1;
#define RedisModuleFlushInfo RedisModuleFlushInfoV1

#define REDISMODULE_MODULE_CHANGE_VERSION 1
typedef struct RedisModuleModuleChange {
    uint64_t version;
    const char *module_name;
    int32_t module_version;
} RedisModuleModuleChangeV1;
#define RedisModuleModuleChange RedisModuleModuleChangeV1

#define REDISMODULE_CRON_LOOP_VERSION 1
typedef struct RedisModuleCronLoopInfo {
    uint64_t version;
    int32_t hz;
} RedisModuleCronLoopV1;
#define RedisModuleCronLoop RedisModuleCronLoopV1

#define REDISMODULE_SUBEVENT_CONFIG_CHANGE 0
#define REDISMODULE_CONFIGCHANGE_VERSION 1
typedef struct RedisModuleConfigChange {
    uint64_t version;
    uint32_t num_changes;
    const char **config_names;
} RedisModuleConfigChangeV1;
#define RedisModuleConfigChange RedisModuleConfigChangeV1

#define REDISMODULE_SWAPDBINFO_VERSION 1
typedef struct RedisModuleSwapDbInfo {
    uint64_t version;
    int32_t dbnum_first;
    int32_t dbnum_second;
} RedisModuleSwapDbInfoV1;
#define RedisModuleSwapDbInfo RedisModuleSwapDbInfoV1

/* ---- opaque handles ---- */

typedef long long mstime_t;
typedef long long ustime_t;

typedef struct RedisModuleCtx RedisModuleCtx;
typedef struct RedisModuleCommand RedisModuleCommand;
typedef struct RedisModuleKey RedisModuleKey;
typedef struct RedisModuleString RedisModuleString;
typedef struct RedisModuleCallReply RedisModuleCallReply;
typedef struct RedisModuleInfoCtx RedisModuleInfoCtx;
typedef struct RedisModuleServerInfoData RedisModuleServerInfoData;
typedef void (*RedisModuleInfoFunc)(RedisModuleInfoCtx *ctx, int for_crash_report);
typedef struct RedisModuleScanCursor RedisModuleScanCursor;
typedef void (*RedisModuleScanCB)(RedisModuleCtx *ctx, RedisModuleString *keyname, RedisModuleKey *key,
                                  void *privdata);
typedef void (*RedisModuleScanKeyCB)(RedisModuleKey *key, RedisModuleString *field, RedisModuleString *value,
                                     void *privdata);

/* module configs */
#define REDISMODULE_CONFIG_DEFAULT 0
#define REDISMODULE_CONFIG_IMMUTABLE (1ULL << 0)
#define REDISMODULE_CONFIG_SENSITIVE (1ULL << 1)
#define REDISMODULE_CONFIG_HIDDEN (1ULL << 4)
#define REDISMODULE_CONFIG_PROTECTED (1ULL << 5)
#define REDISMODULE_CONFIG_DENY_LOADING (1ULL << 6)
#define REDISMODULE_CONFIG_MEMORY (1ULL << 7)
#define REDISMODULE_CONFIG_BITFLAGS (1ULL << 8)
typedef RedisModuleString *(*RedisModuleConfigGetStringFunc)(const char *name, void *privdata);
typedef long long (*RedisModuleConfigGetNumericFunc)(const char *name, void *privdata);
typedef int (*RedisModuleConfigGetBoolFunc)(const char *name, void *privdata);
typedef int (*RedisModuleConfigGetEnumFunc)(const char *name, void *privdata);
typedef int (*RedisModuleConfigSetStringFunc)(const char *name, RedisModuleString *val, void *privdata,
                                              RedisModuleString **err);
typedef int (*RedisModuleConfigSetNumericFunc)(const char *name, long long val, void *privdata,
                                               RedisModuleString **err);
typedef int (*RedisModuleConfigSetBoolFunc)(const char *name, int val, void *privdata, RedisModuleString **err);
typedef int (*RedisModuleConfigSetEnumFunc)(const char *name, int val, void *privdata, RedisModuleString **err);
typedef int (*RedisModuleConfigApplyFunc)(RedisModuleCtx *ctx, void *privdata, RedisModuleString **err);
typedef int (*RedisModuleNotificationFunc)(RedisModuleCtx *ctx, int type, const char *event, RedisModuleString *key);
typedef void (*RedisModuleEventCallback)(RedisModuleCtx *ctx, RedisModuleEvent eid, uint64_t subevent, void *data);
typedef struct RedisModuleIO RedisModuleIO;
typedef struct RedisModuleType RedisModuleType;
typedef struct RedisModuleDigest RedisModuleDigest;
typedef struct RedisModuleBlockedClient RedisModuleBlockedClient;
typedef struct RedisModuleInfoCtx RedisModuleInfoCtx;
typedef struct RedisModuleDefragCtx RedisModuleDefragCtx;
typedef struct RedisModuleKeyOptCtx RedisModuleKeyOptCtx;

typedef int (*RedisModuleCmdFunc)(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);
typedef uint64_t RedisModuleTimerID;
typedef void (*RedisModuleTimerProc)(RedisModuleCtx *ctx, void *data);
typedef void (*RedisModuleDisconnectFunc)(RedisModuleCtx *ctx, RedisModuleBlockedClient *bc);

/* data type callbacks (RedisModuleTypeMethods) */
typedef void *(*RedisModuleTypeLoadFunc)(RedisModuleIO *rdb, int encver);
typedef void (*RedisModuleTypeSaveFunc)(RedisModuleIO *rdb, void *value);
typedef int (*RedisModuleTypeAuxLoadFunc)(RedisModuleIO *rdb, int encver, int when);
typedef void (*RedisModuleTypeAuxSaveFunc)(RedisModuleIO *rdb, int when);
typedef void (*RedisModuleTypeRewriteFunc)(RedisModuleIO *aof, RedisModuleString *key, void *value);
typedef size_t (*RedisModuleTypeMemUsageFunc)(const void *value);
typedef size_t (*RedisModuleTypeMemUsageFunc2)(RedisModuleKeyOptCtx *ctx, const void *value, size_t sample_size);
typedef void (*RedisModuleTypeDigestFunc)(RedisModuleDigest *digest, void *value);
typedef void (*RedisModuleTypeFreeFunc)(void *value);
typedef size_t (*RedisModuleTypeFreeEffortFunc)(RedisModuleString *key, const void *value);
typedef size_t (*RedisModuleTypeFreeEffortFunc2)(RedisModuleKeyOptCtx *ctx, const void *value);
typedef void (*RedisModuleTypeUnlinkFunc)(RedisModuleString *key, const void *value);
typedef void (*RedisModuleTypeUnlinkFunc2)(RedisModuleKeyOptCtx *ctx, const void *value);
typedef void *(*RedisModuleTypeCopyFunc)(RedisModuleString *fromkey, RedisModuleString *tokey, const void *value);
typedef void *(*RedisModuleTypeCopyFunc2)(RedisModuleKeyOptCtx *ctx, const void *value);
typedef int (*RedisModuleTypeDefragFunc)(RedisModuleDefragCtx *ctx, RedisModuleString *key, void **value);

/* Field order is the ABI (version 4 = Redis 7.0). */
typedef struct RedisModuleTypeMethods {
    uint64_t version;
    RedisModuleTypeLoadFunc rdb_load;
    RedisModuleTypeSaveFunc rdb_save;
    RedisModuleTypeRewriteFunc aof_rewrite;
    RedisModuleTypeMemUsageFunc mem_usage;
    RedisModuleTypeDigestFunc digest;
    RedisModuleTypeFreeFunc free;
    RedisModuleTypeAuxLoadFunc aux_load;
    RedisModuleTypeAuxSaveFunc aux_save;
    int aux_save_triggers;
    RedisModuleTypeFreeEffortFunc free_effort;
    RedisModuleTypeUnlinkFunc unlink;
    RedisModuleTypeCopyFunc copy;
    RedisModuleTypeDefragFunc defrag;
    RedisModuleTypeMemUsageFunc2 mem_usage2;
    RedisModuleTypeFreeEffortFunc2 free_effort2;
    RedisModuleTypeUnlinkFunc2 unlink2;
    RedisModuleTypeCopyFunc2 copy2;
} RedisModuleTypeMethods;

/* ---- dictionaries, streams, data-type options and defrag (module_dict.c,
 * module_stream.c, module_type.c) ---- */

typedef struct RedisModuleDict RedisModuleDict;
typedef struct RedisModuleDictIter RedisModuleDictIter;

#define REDISMODULE_STREAM_ADD_AUTOID (1 << 0)
#define REDISMODULE_STREAM_ITERATOR_EXCLUSIVE (1 << 0)
#define REDISMODULE_STREAM_ITERATOR_REVERSE (1 << 1)
#define REDISMODULE_STREAM_TRIM_APPROX (1 << 0)

typedef struct RedisModuleStreamID {
    uint64_t ms;
    uint64_t seq;
} RedisModuleStreamID;

typedef int (*RedisModuleDefragFunc)(RedisModuleDefragCtx *ctx);

/* ---- command filters, fork, ACL, more server events (module_filter.c,
 * module_fork.c, module_acl.c, module_events.c) ---- */

#define REDISMODULE_CMDFILTER_NOSELF (1 << 0)
typedef struct RedisModuleCommandFilterCtx RedisModuleCommandFilterCtx;
typedef struct RedisModuleCommandFilter RedisModuleCommandFilter;
typedef void (*RedisModuleCommandFilterFunc)(RedisModuleCommandFilterCtx *filter);

typedef void (*RedisModuleForkDoneHandler)(int exitcode, int bysignal, void *user_data);

typedef struct RedisModuleUser RedisModuleUser;
typedef void (*RedisModuleUserChangedFunc)(uint64_t client_id, void *privdata);
typedef enum {
    REDISMODULE_ACL_LOG_AUTH = 0,
    REDISMODULE_ACL_LOG_CMD,
    REDISMODULE_ACL_LOG_KEY,
    REDISMODULE_ACL_LOG_CHANNEL
} RedisModuleACLLogEntryReason;
#define REDISMODULE_CMD_CHANNEL_PATTERN (1ULL << 0)
#define REDISMODULE_CMD_CHANNEL_PUBLISH (1ULL << 1)
#define REDISMODULE_CMD_CHANNEL_SUBSCRIBE (1ULL << 2)
#define REDISMODULE_CMD_CHANNEL_UNSUBSCRIBE (1ULL << 3)

#define REDISMODULE_SUBEVENT_REPLROLECHANGED_NOW_MASTER 0
#define REDISMODULE_SUBEVENT_REPLROLECHANGED_NOW_REPLICA 1
#define REDISMODULE_SUBEVENT_PERSISTENCE_RDB_START 0
#define REDISMODULE_SUBEVENT_PERSISTENCE_AOF_START 1
#define REDISMODULE_SUBEVENT_PERSISTENCE_SYNC_RDB_START 2
#define REDISMODULE_SUBEVENT_PERSISTENCE_ENDED 3
#define REDISMODULE_SUBEVENT_PERSISTENCE_FAILED 4
#define REDISMODULE_SUBEVENT_PERSISTENCE_SYNC_AOF_START 5
#define REDISMODULE_SUBEVENT_LOADING_RDB_START 0
#define REDISMODULE_SUBEVENT_LOADING_AOF_START 1
#define REDISMODULE_SUBEVENT_LOADING_REPL_START 2
#define REDISMODULE_SUBEVENT_LOADING_ENDED 3
#define REDISMODULE_SUBEVENT_LOADING_FAILED 4
#define REDISMODULE_SUBEVENT_REPLICA_CHANGE_ONLINE 0
#define REDISMODULE_SUBEVENT_REPLICA_CHANGE_OFFLINE 1
#define REDISMODULE_SUBEVENT_MASTER_LINK_UP 0
#define REDISMODULE_SUBEVENT_MASTER_LINK_DOWN 1
#define REDISMODULE_SUBEVENT_LOADING_PROGRESS_RDB 0
#define REDISMODULE_SUBEVENT_LOADING_PROGRESS_AOF 1
#define REDISMODULE_SUBEVENT_REPL_BACKUP_CREATE 0
#define REDISMODULE_SUBEVENT_REPL_BACKUP_RESTORE 1
#define REDISMODULE_SUBEVENT_REPL_BACKUP_DISCARD 2
#define REDISMODULE_SUBEVENT_FORK_CHILD_BORN 0
#define REDISMODULE_SUBEVENT_FORK_CHILD_DIED 1
#define REDISMODULE_SUBEVENT_REPL_ASYNC_LOAD_STARTED 0
#define REDISMODULE_SUBEVENT_REPL_ASYNC_LOAD_ABORTED 1
#define REDISMODULE_SUBEVENT_REPL_ASYNC_LOAD_COMPLETED 2
#define REDISMODULE_SUBEVENT_EVENTLOOP_BEFORE_SLEEP 0
#define REDISMODULE_SUBEVENT_EVENTLOOP_AFTER_SLEEP 1

#define REDISMODULE_REPLICATIONINFO_VERSION 1
typedef struct RedisModuleReplicationInfo {
    uint64_t version;
    int master; /* 1: now a master */
    char *masterhost;
    int masterport;
    char *replid1;
    char *replid2;
    uint64_t repl1_offset;
    uint64_t repl2_offset;
} RedisModuleReplicationInfoV1;
#define RedisModuleReplicationInfo RedisModuleReplicationInfoV1

#define REDISMODULE_LOADING_PROGRESS_VERSION 1
typedef struct RedisModuleLoadingProgressInfo {
    uint64_t version;
    int32_t hz;
    int32_t progress; /* 0..1024, -1 unknown */
} RedisModuleLoadingProgressV1;
#define RedisModuleLoadingProgress RedisModuleLoadingProgressV1

#ifndef REDISMODULE_CORE
/* (the common-definition macros are set below; these pointers are
 * declared with REDISMODULE_FN once it exists) */
#define REDISMODULE_SYS_DECLS                                                                                        \
    REDISMODULE_FN(RedisModuleCommandFilter *, RegisterCommandFilter,                                              \
                   (RedisModuleCtx * ctx, RedisModuleCommandFilterFunc cb, int flags));                            \
    REDISMODULE_FN(int, UnregisterCommandFilter, (RedisModuleCtx * ctx, RedisModuleCommandFilter * filter));       \
    REDISMODULE_FN(int, CommandFilterArgsCount, (RedisModuleCommandFilterCtx * fctx));                             \
    REDISMODULE_FN(RedisModuleString *, CommandFilterArgGet, (RedisModuleCommandFilterCtx * fctx, int pos));       \
    REDISMODULE_FN(int, CommandFilterArgInsert, (RedisModuleCommandFilterCtx * fctx, int pos, RedisModuleString *arg)); \
    REDISMODULE_FN(int, CommandFilterArgReplace, (RedisModuleCommandFilterCtx * fctx, int pos, RedisModuleString *arg)); \
    REDISMODULE_FN(int, CommandFilterArgDelete, (RedisModuleCommandFilterCtx * fctx, int pos));                    \
    REDISMODULE_FN(int, Fork, (RedisModuleForkDoneHandler cb, void *user_data));                                   \
    REDISMODULE_FN(void, SendChildHeartbeat, (double progress));                                                   \
    REDISMODULE_FN(int, ExitFromChild, (int retcode));                                                             \
    REDISMODULE_FN(int, KillForkChild, (int child_pid));                                                           \
    REDISMODULE_FN(RedisModuleUser *, CreateModuleUser, (const char *name));                                       \
    REDISMODULE_FN(int, FreeModuleUser, (RedisModuleUser * user));                                                 \
    REDISMODULE_FN(int, SetModuleUserACL, (RedisModuleUser * user, const char *acl));                              \
    REDISMODULE_FN(int, SetModuleUserACLString,                                                                    \
                   (RedisModuleCtx * ctx, RedisModuleUser * user, const char *acl, RedisModuleString **error));   \
    REDISMODULE_FN(RedisModuleString *, GetModuleUserACLString, (RedisModuleUser * user));                         \
    REDISMODULE_FN(RedisModuleString *, GetCurrentUserName, (RedisModuleCtx * ctx));                               \
    REDISMODULE_FN(RedisModuleUser *, GetModuleUserFromUserName, (RedisModuleString * name));                      \
    REDISMODULE_FN(int, ACLCheckCommandPermissions, (RedisModuleUser * user, RedisModuleString **argv, int argc)); \
    REDISMODULE_FN(int, ACLCheckKeyPermissions, (RedisModuleUser * user, RedisModuleString *key, int flags));      \
    REDISMODULE_FN(int, ACLCheckChannelPermissions, (RedisModuleUser * user, RedisModuleString *ch, int literal)); \
    REDISMODULE_FN(void, ACLAddLogEntry,                                                                           \
                   (RedisModuleCtx * ctx, RedisModuleUser *user, RedisModuleString *object,                       \
                    RedisModuleACLLogEntryReason reason));                                                         \
    REDISMODULE_FN(int, AuthenticateClientWithUser,                                                                \
                   (RedisModuleCtx * ctx, RedisModuleUser * user, RedisModuleUserChangedFunc callback,            \
                    void *privdata, uint64_t *client_id));                                                         \
    REDISMODULE_FN(int, AuthenticateClientWithACLUser,                                                             \
                   (RedisModuleCtx * ctx, const char *name, size_t len, RedisModuleUserChangedFunc callback,      \
                    void *privdata, uint64_t *client_id));                                                         \
    REDISMODULE_FN(int, DeauthenticateAndCloseClient, (RedisModuleCtx * ctx, uint64_t client_id));                 \
    REDISMODULE_FN(int, RedactClientCommandArgument, (RedisModuleCtx * ctx, int pos));                             \
    REDISMODULE_FN(RedisModuleString *, GetClientCertificate, (RedisModuleCtx * ctx, uint64_t id));                \
    REDISMODULE_FN(RedisModuleString *, GetClientUserNameById, (RedisModuleCtx * ctx, uint64_t id));              \
    REDISMODULE_FN(void, SetContextUser, (RedisModuleCtx * ctx, const RedisModuleUser *user))
#define REDISMODULE_SYS_GET_APIS()                       \
    do {                                                 \
        REDISMODULE_GET_API(RegisterCommandFilter);      \
        REDISMODULE_GET_API(UnregisterCommandFilter);    \
        REDISMODULE_GET_API(CommandFilterArgsCount);     \
        REDISMODULE_GET_API(CommandFilterArgGet);        \
        REDISMODULE_GET_API(CommandFilterArgInsert);     \
        REDISMODULE_GET_API(CommandFilterArgReplace);    \
        REDISMODULE_GET_API(CommandFilterArgDelete);     \
        REDISMODULE_GET_API(Fork);                       \
        REDISMODULE_GET_API(SendChildHeartbeat);         \
        REDISMODULE_GET_API(ExitFromChild);              \
        REDISMODULE_GET_API(KillForkChild);              \
        REDISMODULE_GET_API(CreateModuleUser);           \
        REDISMODULE_GET_API(FreeModuleUser);             \
        REDISMODULE_GET_API(SetModuleUserACL);           \
        REDISMODULE_GET_API(SetModuleUserACLString);     \
        REDISMODULE_GET_API(GetModuleUserACLString);     \
        REDISMODULE_GET_API(GetCurrentUserName);         \
        REDISMODULE_GET_API(GetModuleUserFromUserName);  \
        REDISMODULE_GET_API(ACLCheckCommandPermissions); \
        REDISMODULE_GET_API(ACLCheckKeyPermissions);     \
        REDISMODULE_GET_API(ACLCheckChannelPermissions); \
        REDISMODULE_GET_API(ACLAddLogEntry);             \
        REDISMODULE_GET_API(AuthenticateClientWithUser); \
        REDISMODULE_GET_API(AuthenticateClientWithACLUser); \
        REDISMODULE_GET_API(DeauthenticateAndCloseClient); \
        REDISMODULE_GET_API(RedactClientCommandArgument); \
        REDISMODULE_GET_API(GetClientCertificate);       \
        REDISMODULE_GET_API(GetClientUserNameById);      \
        REDISMODULE_GET_API(SetContextUser);             \
    } while (0)
#endif

/* ---- the API, as function pointers the module fills at init ---- */

/* module_misc3.c: cluster node flags and SetClusterFlags's bits */
#define REDISMODULE_NODE_MYSELF (1 << 0)
#define REDISMODULE_NODE_MASTER (1 << 1)
#define REDISMODULE_NODE_SLAVE (1 << 2)
#define REDISMODULE_NODE_PFAIL (1 << 3)
#define REDISMODULE_NODE_FAIL (1 << 4)
#define REDISMODULE_NODE_NOFAILOVER (1 << 5)
#define REDISMODULE_CLUSTER_FLAG_NONE 0
#define REDISMODULE_CLUSTER_FLAG_NO_FAILOVER (1 << 1)
#define REDISMODULE_CLUSTER_FLAG_NO_REDIRECTION (1 << 2)
/* module_misc3.c: the event loop's masks and callbacks */
#define REDISMODULE_EVENTLOOP_READABLE 1
#define REDISMODULE_EVENTLOOP_WRITABLE 2
typedef void (*RedisModuleEventLoopFunc)(int fd, void *user_data, int mask);
typedef void (*RedisModuleEventLoopOneShotFunc)(void *user_data);
typedef void (*RedisModuleClusterMessageReceiver)(RedisModuleCtx *ctx, const char *sender_id, uint8_t type,
                                                  const unsigned char *payload, uint32_t len);

#ifndef REDISMODULE_CORE

#if defined(__GNUC__) && !(defined(__clang__) && defined(__cplusplus))
#define REDISMODULE_ATTR_COMMON __attribute__((__common__))
#else
#define REDISMODULE_ATTR_COMMON
#endif
#ifdef __GNUC__
#define REDISMODULE_ATTR_PRINTF(idx, cnt) __attribute__((format(printf, idx, cnt)))
#else
#define REDISMODULE_ATTR_PRINTF(idx, cnt)
#endif
/* Each pointer is a tentative ("common") definition, so every file of a
 * module may include this header. */
#ifndef REDISMODULE_API
#define REDISMODULE_API
#endif
#ifndef REDISMODULE_ATTR
#define REDISMODULE_ATTR REDISMODULE_ATTR_COMMON
#endif

/* Declares pointer RedisModule_<name>. */
#define REDISMODULE_FN(ret, name, args) REDISMODULE_API ret(*RedisModule_##name) args REDISMODULE_ATTR

/* command filters, fork, ACL (the block above) */
REDISMODULE_SYS_DECLS;

/* module, commands */
REDISMODULE_FN(int, GetApi, (const char *, void *));
REDISMODULE_FN(void, SetModuleAttribs, (RedisModuleCtx *ctx, const char *name, int ver, int apiver));
REDISMODULE_FN(int, IsModuleNameBusy, (const char *name));
REDISMODULE_FN(int, CreateCommand, (RedisModuleCtx *ctx, const char *name, RedisModuleCmdFunc cmdfunc,
                                    const char *strflags, int firstkey, int lastkey, int keystep));
REDISMODULE_FN(RedisModuleCommand *, GetCommand, (RedisModuleCtx *ctx, const char *name));
REDISMODULE_FN(int, CreateSubcommand, (RedisModuleCommand *parent, const char *name, RedisModuleCmdFunc cmdfunc,
                                       const char *strflags, int firstkey, int lastkey, int keystep));
REDISMODULE_FN(int, SetCommandInfo, (RedisModuleCommand *command, const RedisModuleCommandInfo *info));
REDISMODULE_FN(int, WrongArity, (RedisModuleCtx *ctx));
REDISMODULE_FN(int, GetSelectedDb, (RedisModuleCtx *ctx));
REDISMODULE_FN(int, SelectDb, (RedisModuleCtx *ctx, int newid));
REDISMODULE_FN(unsigned long long, GetClientId, (RedisModuleCtx *ctx));
REDISMODULE_FN(int, GetContextFlags, (RedisModuleCtx *ctx));
REDISMODULE_FN(void, AutoMemory, (RedisModuleCtx *ctx));
REDISMODULE_FN(void, SetModuleOptions, (RedisModuleCtx *ctx, int options));
REDISMODULE_FN(int, GetServerVersion, (void));
REDISMODULE_FN(int, GetTypeMethodVersion, (void));
REDISMODULE_FN(int, GetContextFlagsAll, (void));
REDISMODULE_FN(int, GetKeyspaceNotificationFlagsAll, (void));
REDISMODULE_FN(int, NotifyKeyspaceEvent, (RedisModuleCtx *ctx, int type, const char *event, RedisModuleString *key));
REDISMODULE_FN(int, GetNotifyKeyspaceEvents, (void));
REDISMODULE_FN(int, SubscribeToKeyspaceEvents, (RedisModuleCtx *ctx, int types, RedisModuleNotificationFunc cb));
REDISMODULE_FN(int, SubscribeToServerEvent, (RedisModuleCtx *ctx, RedisModuleEvent event, RedisModuleEventCallback cb));
REDISMODULE_FN(int, IsSubEventSupported, (RedisModuleEvent event, uint64_t subevent));
REDISMODULE_FN(int, RegisterStringConfig,
               (RedisModuleCtx *ctx, const char *name, const char *default_val, unsigned int flags,
                RedisModuleConfigGetStringFunc getfn, RedisModuleConfigSetStringFunc setfn,
                RedisModuleConfigApplyFunc applyfn, void *privdata));
REDISMODULE_FN(int, RegisterBoolConfig,
               (RedisModuleCtx *ctx, const char *name, int default_val, unsigned int flags,
                RedisModuleConfigGetBoolFunc getfn, RedisModuleConfigSetBoolFunc setfn,
                RedisModuleConfigApplyFunc applyfn, void *privdata));
REDISMODULE_FN(int, RegisterEnumConfig,
               (RedisModuleCtx *ctx, const char *name, int default_val, unsigned int flags,
                const char **enum_values, const int *int_values, int num_enum_vals,
                RedisModuleConfigGetEnumFunc getfn, RedisModuleConfigSetEnumFunc setfn,
                RedisModuleConfigApplyFunc applyfn, void *privdata));
REDISMODULE_FN(int, RegisterNumericConfig,
               (RedisModuleCtx *ctx, const char *name, long long default_val, unsigned int flags, long long min,
                long long max, RedisModuleConfigGetNumericFunc getfn, RedisModuleConfigSetNumericFunc setfn,
                RedisModuleConfigApplyFunc applyfn, void *privdata));
REDISMODULE_FN(int, LoadConfigs, (RedisModuleCtx *ctx));
REDISMODULE_FN(int, SignalModifiedKey, (RedisModuleCtx *ctx, RedisModuleString *keyname));
REDISMODULE_FN(unsigned long long, DbSize, (RedisModuleCtx *ctx));
REDISMODULE_FN(RedisModuleString *, RandomKey, (RedisModuleCtx *ctx));
REDISMODULE_FN(const char *, GetMyClusterID, (void));
REDISMODULE_FN(size_t, GetClusterSize, (void));
REDISMODULE_FN(RedisModuleTimerID, CreateTimer,
               (RedisModuleCtx *ctx, mstime_t period, RedisModuleTimerProc callback, void *data));
REDISMODULE_FN(int, StopTimer, (RedisModuleCtx *ctx, RedisModuleTimerID id, void **data));
REDISMODULE_FN(int, GetTimerInfo, (RedisModuleCtx *ctx, RedisModuleTimerID id, uint64_t *remaining, void **data));
REDISMODULE_FN(long long, Milliseconds, (void));
REDISMODULE_FN(void, Log, (RedisModuleCtx *ctx, const char *level, const char *fmt, ...)) REDISMODULE_ATTR_PRINTF(3, 4);
REDISMODULE_FN(void, LogIOError, (RedisModuleIO *io, const char *levelstr, const char *fmt, ...))
    REDISMODULE_ATTR_PRINTF(3, 4);
REDISMODULE_FN(int, Replicate, (RedisModuleCtx *ctx, const char *cmdname, const char *fmt, ...));
REDISMODULE_FN(int, ReplicateVerbatim, (RedisModuleCtx *ctx));

/* memory */
REDISMODULE_FN(void *, Alloc, (size_t bytes));
REDISMODULE_FN(void *, TryAlloc, (size_t bytes));
REDISMODULE_FN(void *, Calloc, (size_t nmemb, size_t size));
REDISMODULE_FN(void *, Realloc, (void *ptr, size_t bytes));
REDISMODULE_FN(void, Free, (void *ptr));
REDISMODULE_FN(char *, Strdup, (const char *str));
REDISMODULE_FN(void *, PoolAlloc, (RedisModuleCtx *ctx, size_t bytes));
REDISMODULE_FN(size_t, MallocSize, (void *ptr));

/* strings */
REDISMODULE_FN(RedisModuleString *, CreateString, (RedisModuleCtx *ctx, const char *ptr, size_t len));
REDISMODULE_FN(RedisModuleString *, CreateStringFromLongLong, (RedisModuleCtx *ctx, long long ll));
REDISMODULE_FN(RedisModuleString *, CreateStringFromULongLong, (RedisModuleCtx *ctx, unsigned long long ull));
REDISMODULE_FN(RedisModuleString *, CreateStringFromDouble, (RedisModuleCtx *ctx, double d));
REDISMODULE_FN(RedisModuleString *, CreateStringFromLongDouble,
               (RedisModuleCtx *ctx, long double ld, int humanfriendly));
REDISMODULE_FN(RedisModuleString *, CreateStringFromString, (RedisModuleCtx *ctx, const RedisModuleString *str));
REDISMODULE_FN(RedisModuleString *, CreateStringPrintf, (RedisModuleCtx *ctx, const char *fmt, ...))
    REDISMODULE_ATTR_PRINTF(2, 3);
REDISMODULE_FN(void, FreeString, (RedisModuleCtx *ctx, RedisModuleString *str));
REDISMODULE_FN(void, RetainString, (RedisModuleCtx *ctx, RedisModuleString *str));
REDISMODULE_FN(RedisModuleString *, HoldString, (RedisModuleCtx *ctx, RedisModuleString *str));
REDISMODULE_FN(const char *, StringPtrLen, (const RedisModuleString *str, size_t *len));
REDISMODULE_FN(int, StringToLongLong, (const RedisModuleString *str, long long *ll));
REDISMODULE_FN(int, StringToULongLong, (const RedisModuleString *str, unsigned long long *ull));
REDISMODULE_FN(int, StringToDouble, (const RedisModuleString *str, double *d));
REDISMODULE_FN(int, StringToLongDouble, (const RedisModuleString *str, long double *d));
REDISMODULE_FN(int, StringCompare, (RedisModuleString *a, RedisModuleString *b));
REDISMODULE_FN(int, StringAppendBuffer, (RedisModuleCtx *ctx, RedisModuleString *str, const char *buf, size_t len));
REDISMODULE_FN(void, TrimStringAllocation, (RedisModuleString *str));

/* replies */
REDISMODULE_FN(int, ReplyWithLongLong, (RedisModuleCtx *ctx, long long ll));
REDISMODULE_FN(int, ReplyWithError, (RedisModuleCtx *ctx, const char *err));
REDISMODULE_FN(int, ReplyWithSimpleString, (RedisModuleCtx *ctx, const char *msg));
REDISMODULE_FN(int, ReplyWithArray, (RedisModuleCtx *ctx, long len));
REDISMODULE_FN(int, ReplyWithMap, (RedisModuleCtx *ctx, long len));
REDISMODULE_FN(int, ReplyWithSet, (RedisModuleCtx *ctx, long len));
REDISMODULE_FN(int, ReplyWithAttribute, (RedisModuleCtx *ctx, long len));
REDISMODULE_FN(int, ReplyWithNullArray, (RedisModuleCtx *ctx));
REDISMODULE_FN(int, ReplyWithEmptyArray, (RedisModuleCtx *ctx));
REDISMODULE_FN(void, ReplySetArrayLength, (RedisModuleCtx *ctx, long len));
REDISMODULE_FN(void, ReplySetMapLength, (RedisModuleCtx *ctx, long len));
REDISMODULE_FN(void, ReplySetSetLength, (RedisModuleCtx *ctx, long len));
REDISMODULE_FN(void, ReplySetAttributeLength, (RedisModuleCtx *ctx, long len));
REDISMODULE_FN(int, ReplyWithStringBuffer, (RedisModuleCtx *ctx, const char *buf, size_t len));
REDISMODULE_FN(int, ReplyWithCString, (RedisModuleCtx *ctx, const char *buf));
REDISMODULE_FN(int, ReplyWithString, (RedisModuleCtx *ctx, RedisModuleString *str));
REDISMODULE_FN(int, ReplyWithEmptyString, (RedisModuleCtx *ctx));
REDISMODULE_FN(int, ReplyWithVerbatimString, (RedisModuleCtx *ctx, const char *buf, size_t len));
REDISMODULE_FN(int, ReplyWithVerbatimStringType, (RedisModuleCtx *ctx, const char *buf, size_t len, const char *ext));
REDISMODULE_FN(int, ReplyWithNull, (RedisModuleCtx *ctx));
REDISMODULE_FN(int, ReplyWithBool, (RedisModuleCtx *ctx, int b));
REDISMODULE_FN(int, ReplyWithDouble, (RedisModuleCtx *ctx, double d));
REDISMODULE_FN(int, ReplyWithBigNumber, (RedisModuleCtx *ctx, const char *bignum, size_t len));
REDISMODULE_FN(int, ReplyWithLongDouble, (RedisModuleCtx *ctx, long double d));
REDISMODULE_FN(int, ReplyWithCallReply, (RedisModuleCtx *ctx, RedisModuleCallReply *reply));

/* RedisModule_Call and its replies */
REDISMODULE_FN(RedisModuleCallReply *, Call, (RedisModuleCtx *ctx, const char *cmdname, const char *fmt, ...));
REDISMODULE_FN(const char *, CallReplyProto, (RedisModuleCallReply *reply, size_t *len));
REDISMODULE_FN(void, FreeCallReply, (RedisModuleCallReply *reply));
REDISMODULE_FN(int, CallReplyType, (RedisModuleCallReply *reply));
REDISMODULE_FN(long long, CallReplyInteger, (RedisModuleCallReply *reply));
REDISMODULE_FN(double, CallReplyDouble, (RedisModuleCallReply *reply));
REDISMODULE_FN(int, CallReplyBool, (RedisModuleCallReply *reply));
REDISMODULE_FN(const char *, CallReplyBigNumber, (RedisModuleCallReply *reply, size_t *len));
REDISMODULE_FN(const char *, CallReplyVerbatim, (RedisModuleCallReply *reply, size_t *len, const char **format));
REDISMODULE_FN(RedisModuleCallReply *, CallReplySetElement, (RedisModuleCallReply *reply, size_t idx));
REDISMODULE_FN(int, CallReplyMapElement,
               (RedisModuleCallReply *reply, size_t idx, RedisModuleCallReply **key, RedisModuleCallReply **val));
REDISMODULE_FN(int, CallReplyAttributeElement,
               (RedisModuleCallReply *reply, size_t idx, RedisModuleCallReply **key, RedisModuleCallReply **val));
REDISMODULE_FN(RedisModuleCallReply *, CallReplyAttribute, (RedisModuleCallReply *reply));
REDISMODULE_FN(size_t, CallReplyLength, (RedisModuleCallReply *reply));
REDISMODULE_FN(RedisModuleCallReply *, CallReplyArrayElement, (RedisModuleCallReply *reply, size_t idx));
REDISMODULE_FN(const char *, CallReplyStringPtr, (RedisModuleCallReply *reply, size_t *len));
REDISMODULE_FN(RedisModuleString *, CreateStringFromCallReply, (RedisModuleCallReply *reply));

/* the key API */
REDISMODULE_FN(int, KeyExists, (RedisModuleCtx *ctx, RedisModuleString *keyname));
REDISMODULE_FN(RedisModuleKey *, OpenKey, (RedisModuleCtx *ctx, RedisModuleString *keyname, int mode));
REDISMODULE_FN(void, CloseKey, (RedisModuleKey *kp));
REDISMODULE_FN(int, KeyType, (RedisModuleKey *kp));
REDISMODULE_FN(size_t, ValueLength, (RedisModuleKey *kp));
REDISMODULE_FN(int, DeleteKey, (RedisModuleKey *key));
REDISMODULE_FN(int, UnlinkKey, (RedisModuleKey *key));
REDISMODULE_FN(int, StringSet, (RedisModuleKey *key, RedisModuleString *str));
REDISMODULE_FN(char *, StringDMA, (RedisModuleKey *key, size_t *len, int mode));
REDISMODULE_FN(int, StringTruncate, (RedisModuleKey *key, size_t newlen));
REDISMODULE_FN(mstime_t, GetExpire, (RedisModuleKey *key));
REDISMODULE_FN(int, ListPush, (RedisModuleKey *kp, int where, RedisModuleString *ele));
REDISMODULE_FN(RedisModuleString *, ListPop, (RedisModuleKey *key, int where));
REDISMODULE_FN(RedisModuleString *, ListGet, (RedisModuleKey *key, long index));
REDISMODULE_FN(int, ListSet, (RedisModuleKey *key, long index, RedisModuleString *value));
REDISMODULE_FN(int, ListInsert, (RedisModuleKey *key, long index, RedisModuleString *value));
REDISMODULE_FN(int, ListDelete, (RedisModuleKey *key, long index));
REDISMODULE_FN(int, HashSet, (RedisModuleKey *key, int flags, ...));
REDISMODULE_FN(int, HashGet, (RedisModuleKey *key, int flags, ...));
REDISMODULE_FN(int, ZsetAdd, (RedisModuleKey *key, double score, RedisModuleString *ele, int *flagsptr));
REDISMODULE_FN(int, ZsetIncrby,
               (RedisModuleKey *key, double score, RedisModuleString *ele, int *flagsptr, double *newscore));
REDISMODULE_FN(int, ZsetScore, (RedisModuleKey *key, RedisModuleString *ele, double *score));
REDISMODULE_FN(int, ZsetRem, (RedisModuleKey *key, RedisModuleString *ele, int *deleted));
REDISMODULE_FN(void, ZsetRangeStop, (RedisModuleKey *key));
REDISMODULE_FN(int, ZsetFirstInScoreRange, (RedisModuleKey *key, double min, double max, int minex, int maxex));
REDISMODULE_FN(int, ZsetLastInScoreRange, (RedisModuleKey *key, double min, double max, int minex, int maxex));
REDISMODULE_FN(int, ZsetFirstInLexRange, (RedisModuleKey *key, RedisModuleString *min, RedisModuleString *max));
REDISMODULE_FN(int, ZsetLastInLexRange, (RedisModuleKey *key, RedisModuleString *min, RedisModuleString *max));
REDISMODULE_FN(RedisModuleString *, ZsetRangeCurrentElement, (RedisModuleKey *key, double *score));
REDISMODULE_FN(int, ZsetRangeNext, (RedisModuleKey *key));
REDISMODULE_FN(int, ZsetRangePrev, (RedisModuleKey *key));
REDISMODULE_FN(int, ZsetRangeEndReached, (RedisModuleKey *key));
REDISMODULE_FN(int, RegisterInfoFunc, (RedisModuleCtx *ctx, RedisModuleInfoFunc cb));
REDISMODULE_FN(int, InfoAddSection, (RedisModuleInfoCtx *ctx, const char *name));
REDISMODULE_FN(int, InfoBeginDictField, (RedisModuleInfoCtx *ctx, const char *name));
REDISMODULE_FN(int, InfoEndDictField, (RedisModuleInfoCtx *ctx));
REDISMODULE_FN(int, InfoAddFieldString, (RedisModuleInfoCtx *ctx, const char *field, RedisModuleString *value));
REDISMODULE_FN(int, InfoAddFieldCString, (RedisModuleInfoCtx *ctx, const char *field, const char *value));
REDISMODULE_FN(int, InfoAddFieldDouble, (RedisModuleInfoCtx *ctx, const char *field, double value));
REDISMODULE_FN(int, InfoAddFieldLongLong, (RedisModuleInfoCtx *ctx, const char *field, long long value));
REDISMODULE_FN(int, InfoAddFieldULongLong, (RedisModuleInfoCtx *ctx, const char *field, unsigned long long value));
REDISMODULE_FN(RedisModuleServerInfoData *, GetServerInfo, (RedisModuleCtx *ctx, const char *section));
REDISMODULE_FN(void, FreeServerInfo, (RedisModuleCtx *ctx, RedisModuleServerInfoData *data));
REDISMODULE_FN(RedisModuleString *, ServerInfoGetField,
               (RedisModuleCtx *ctx, RedisModuleServerInfoData *data, const char *field));
REDISMODULE_FN(const char *, ServerInfoGetFieldC, (RedisModuleServerInfoData *data, const char *field));
REDISMODULE_FN(long long, ServerInfoGetFieldSigned, (RedisModuleServerInfoData *data, const char *field, int *out_err));
REDISMODULE_FN(unsigned long long, ServerInfoGetFieldUnsigned,
               (RedisModuleServerInfoData *data, const char *field, int *out_err));
REDISMODULE_FN(double, ServerInfoGetFieldDouble, (RedisModuleServerInfoData *data, const char *field, int *out_err));
REDISMODULE_FN(RedisModuleScanCursor *, ScanCursorCreate, (void));
REDISMODULE_FN(void, ScanCursorRestart, (RedisModuleScanCursor *cursor));
REDISMODULE_FN(void, ScanCursorDestroy, (RedisModuleScanCursor *cursor));
REDISMODULE_FN(int, Scan, (RedisModuleCtx *ctx, RedisModuleScanCursor *cursor, RedisModuleScanCB fn, void *privdata));
REDISMODULE_FN(int, ScanKey,
               (RedisModuleKey *key, RedisModuleScanCursor *cursor, RedisModuleScanKeyCB fn, void *privdata));
REDISMODULE_FN(const RedisModuleString *, GetKeyNameFromModuleKey, (RedisModuleKey *key));
REDISMODULE_FN(int, GetDbIdFromModuleKey, (RedisModuleKey *key));
REDISMODULE_FN(int, SetExpire, (RedisModuleKey *key, mstime_t expire));

/* module data types, RDB I/O, digest */
REDISMODULE_FN(RedisModuleType *, CreateDataType,
               (RedisModuleCtx *ctx, const char *name, int encver, void *typemethods));
REDISMODULE_FN(int, ModuleTypeSetValue, (RedisModuleKey *key, RedisModuleType *mt, void *value));
REDISMODULE_FN(int, ModuleTypeReplaceValue,
               (RedisModuleKey *key, RedisModuleType *mt, void *new_value, void **old_value));
REDISMODULE_FN(RedisModuleType *, ModuleTypeGetType, (RedisModuleKey *key));
REDISMODULE_FN(void *, ModuleTypeGetValue, (RedisModuleKey *key));
REDISMODULE_FN(int, IsIOError, (RedisModuleIO *io));
REDISMODULE_FN(void, SaveUnsigned, (RedisModuleIO *io, uint64_t value));
REDISMODULE_FN(uint64_t, LoadUnsigned, (RedisModuleIO *io));
REDISMODULE_FN(void, SaveSigned, (RedisModuleIO *io, int64_t value));
REDISMODULE_FN(int64_t, LoadSigned, (RedisModuleIO *io));
REDISMODULE_FN(void, SaveString, (RedisModuleIO *io, RedisModuleString *s));
REDISMODULE_FN(void, SaveStringBuffer, (RedisModuleIO *io, const char *str, size_t len));
REDISMODULE_FN(RedisModuleString *, LoadString, (RedisModuleIO *io));
REDISMODULE_FN(char *, LoadStringBuffer, (RedisModuleIO *io, size_t *lenptr));
REDISMODULE_FN(void, SaveDouble, (RedisModuleIO *io, double value));
REDISMODULE_FN(double, LoadDouble, (RedisModuleIO *io));
REDISMODULE_FN(void, SaveFloat, (RedisModuleIO *io, float value));
REDISMODULE_FN(float, LoadFloat, (RedisModuleIO *io));
REDISMODULE_FN(void, SaveLongDouble, (RedisModuleIO *io, long double value));
REDISMODULE_FN(long double, LoadLongDouble, (RedisModuleIO *io));
REDISMODULE_FN(RedisModuleCtx *, GetContextFromIO, (RedisModuleIO *io));
REDISMODULE_FN(const RedisModuleString *, GetKeyNameFromIO, (RedisModuleIO *io));
REDISMODULE_FN(void, DigestAddStringBuffer, (RedisModuleDigest *md, const char *ele, size_t len));
REDISMODULE_FN(void, DigestAddLongLong, (RedisModuleDigest *md, long long ele));
REDISMODULE_FN(void, DigestEndSequence, (RedisModuleDigest *md));
REDISMODULE_FN(void, EmitAOF, (RedisModuleIO *io, const char *cmdname, const char *fmt, ...));

/* blocked clients, thread-safe contexts, the GIL, Yield (module_block.c) */
REDISMODULE_FN(RedisModuleBlockedClient *, BlockClient,
               (RedisModuleCtx *ctx, RedisModuleCmdFunc reply_callback, RedisModuleCmdFunc timeout_callback,
                void (*free_privdata)(RedisModuleCtx *, void *), long long timeout_ms));
REDISMODULE_FN(RedisModuleBlockedClient *, BlockClientOnKeys,
               (RedisModuleCtx *ctx, RedisModuleCmdFunc reply_callback, RedisModuleCmdFunc timeout_callback,
                void (*free_privdata)(RedisModuleCtx *, void *), long long timeout_ms, RedisModuleString **keys,
                int numkeys, void *privdata));
REDISMODULE_FN(void, SignalKeyAsReady, (RedisModuleCtx *ctx, RedisModuleString *key));
REDISMODULE_FN(RedisModuleString *, GetBlockedClientReadyKey, (RedisModuleCtx *ctx));
REDISMODULE_FN(int, UnblockClient, (RedisModuleBlockedClient *bc, void *privdata));
REDISMODULE_FN(int, IsBlockedReplyRequest, (RedisModuleCtx *ctx));
REDISMODULE_FN(int, IsBlockedTimeoutRequest, (RedisModuleCtx *ctx));
REDISMODULE_FN(void *, GetBlockedClientPrivateData, (RedisModuleCtx *ctx));
REDISMODULE_FN(RedisModuleBlockedClient *, GetBlockedClientHandle, (RedisModuleCtx *ctx));
REDISMODULE_FN(int, AbortBlock, (RedisModuleBlockedClient *bc));
REDISMODULE_FN(int, BlockedClientMeasureTimeStart, (RedisModuleBlockedClient *bc));
REDISMODULE_FN(int, BlockedClientMeasureTimeEnd, (RedisModuleBlockedClient *bc));
REDISMODULE_FN(int, BlockedClientDisconnected, (RedisModuleCtx *ctx));
REDISMODULE_FN(void, SetDisconnectCallback, (RedisModuleBlockedClient *bc, RedisModuleDisconnectFunc callback));
REDISMODULE_FN(RedisModuleCtx *, GetThreadSafeContext, (RedisModuleBlockedClient *bc));
REDISMODULE_FN(RedisModuleCtx *, GetDetachedThreadSafeContext, (RedisModuleCtx *ctx));
REDISMODULE_FN(void, FreeThreadSafeContext, (RedisModuleCtx *ctx));
REDISMODULE_FN(void, ThreadSafeContextLock, (RedisModuleCtx *ctx));
REDISMODULE_FN(int, ThreadSafeContextTryLock, (RedisModuleCtx *ctx));
REDISMODULE_FN(void, ThreadSafeContextUnlock, (RedisModuleCtx *ctx));
REDISMODULE_FN(void, Yield, (RedisModuleCtx *ctx, int flags, const char *busy_reply));
REDISMODULE_FN(int, AvoidReplicaTraffic, (void));

/* Fills every pointer above through the server's lookup function (the
 * first member of ctx), then registers the module.  Returns
 * REDISMODULE_ERR when a module of that name is already loaded. */
#define REDISMODULE_GET_API(name) RedisModule_GetApi("RedisModule_" #name, ((void **)&RedisModule_##name))

/* dictionaries, streams, data-type options and defrag: their pointers,
 * and the part of RedisModule_Init that fills them */
REDISMODULE_FN(RedisModuleDict *, CreateDict, (RedisModuleCtx *ctx));
REDISMODULE_FN(void, FreeDict, (RedisModuleCtx *ctx, RedisModuleDict *d));
REDISMODULE_FN(uint64_t, DictSize, (RedisModuleDict *d));
REDISMODULE_FN(int, DictSetC, (RedisModuleDict *d, void *key, size_t keylen, void *ptr));
REDISMODULE_FN(int, DictReplaceC, (RedisModuleDict *d, void *key, size_t keylen, void *ptr));
REDISMODULE_FN(int, DictSet, (RedisModuleDict *d, RedisModuleString *key, void *ptr));
REDISMODULE_FN(int, DictReplace, (RedisModuleDict *d, RedisModuleString *key, void *ptr));
REDISMODULE_FN(void *, DictGetC, (RedisModuleDict *d, void *key, size_t keylen, int *nokey));
REDISMODULE_FN(void *, DictGet, (RedisModuleDict *d, RedisModuleString *key, int *nokey));
REDISMODULE_FN(int, DictDelC, (RedisModuleDict *d, void *key, size_t keylen, void *oldval));
REDISMODULE_FN(int, DictDel, (RedisModuleDict *d, RedisModuleString *key, void *oldval));
REDISMODULE_FN(RedisModuleDictIter *, DictIteratorStartC, (RedisModuleDict *d, const char *op, void *key, size_t keylen));
REDISMODULE_FN(RedisModuleDictIter *, DictIteratorStart, (RedisModuleDict *d, const char *op, RedisModuleString *key));
REDISMODULE_FN(void, DictIteratorStop, (RedisModuleDictIter *di));
REDISMODULE_FN(int, DictIteratorReseekC, (RedisModuleDictIter *di, const char *op, void *key, size_t keylen));
REDISMODULE_FN(int, DictIteratorReseek, (RedisModuleDictIter *di, const char *op, RedisModuleString *key));
REDISMODULE_FN(void *, DictNextC, (RedisModuleDictIter *di, size_t *keylen, void **dataptr));
REDISMODULE_FN(void *, DictPrevC, (RedisModuleDictIter *di, size_t *keylen, void **dataptr));
REDISMODULE_FN(RedisModuleString *, DictNext, (RedisModuleCtx *ctx, RedisModuleDictIter *di, void **dataptr));
REDISMODULE_FN(RedisModuleString *, DictPrev, (RedisModuleCtx *ctx, RedisModuleDictIter *di, void **dataptr));
REDISMODULE_FN(int, DictCompareC, (RedisModuleDictIter *di, const char *op, void *key, size_t keylen));
REDISMODULE_FN(int, DictCompare, (RedisModuleDictIter *di, const char *op, RedisModuleString *key));
REDISMODULE_FN(int, StreamAdd, (RedisModuleKey *key, int flags, RedisModuleStreamID *id, RedisModuleString **argv,
                                int64_t numfields));
REDISMODULE_FN(int, StreamDelete, (RedisModuleKey *key, RedisModuleStreamID *id));
REDISMODULE_FN(int, StreamIteratorStart, (RedisModuleKey *key, int flags, RedisModuleStreamID *startid,
                                          RedisModuleStreamID *endid));
REDISMODULE_FN(int, StreamIteratorStop, (RedisModuleKey *key));
REDISMODULE_FN(int, StreamIteratorNextID, (RedisModuleKey *key, RedisModuleStreamID *id, long *numfields));
REDISMODULE_FN(int, StreamIteratorNextField, (RedisModuleKey *key, RedisModuleString **field_ptr,
                                              RedisModuleString **value_ptr));
REDISMODULE_FN(int, StreamIteratorDelete, (RedisModuleKey *key));
REDISMODULE_FN(long long, StreamTrimByLength, (RedisModuleKey *key, int flags, long long length));
REDISMODULE_FN(long long, StreamTrimByID, (RedisModuleKey *key, int flags, RedisModuleStreamID *id));
REDISMODULE_FN(RedisModuleString *, SaveDataTypeToString, (RedisModuleCtx *ctx, void *data, const RedisModuleType *mt));
REDISMODULE_FN(void *, LoadDataTypeFromString, (const RedisModuleString *str, const RedisModuleType *mt));
REDISMODULE_FN(void *, LoadDataTypeFromStringEncver, (const RedisModuleString *str, const RedisModuleType *mt,
                                                      int encver));
REDISMODULE_FN(int, GetDbIdFromIO, (RedisModuleIO *io));
REDISMODULE_FN(const RedisModuleString *, GetKeyNameFromOptCtx, (RedisModuleKeyOptCtx *ctx));
REDISMODULE_FN(const RedisModuleString *, GetToKeyNameFromOptCtx, (RedisModuleKeyOptCtx *ctx));
REDISMODULE_FN(int, GetDbIdFromOptCtx, (RedisModuleKeyOptCtx *ctx));
REDISMODULE_FN(int, GetToDbIdFromOptCtx, (RedisModuleKeyOptCtx *ctx));
REDISMODULE_FN(int, RegisterDefragFunc, (RedisModuleCtx *ctx, RedisModuleDefragFunc func));
REDISMODULE_FN(int, DefragShouldStop, (RedisModuleDefragCtx *ctx));
REDISMODULE_FN(int, DefragCursorSet, (RedisModuleDefragCtx *ctx, unsigned long cursor));
REDISMODULE_FN(int, DefragCursorGet, (RedisModuleDefragCtx *ctx, unsigned long *cursor));
REDISMODULE_FN(void *, DefragAlloc, (RedisModuleDefragCtx *ctx, void *ptr));
REDISMODULE_FN(RedisModuleString *, DefragRedisModuleString, (RedisModuleDefragCtx *ctx, RedisModuleString *str));
REDISMODULE_FN(const RedisModuleString *, GetKeyNameFromDefragCtx, (RedisModuleDefragCtx *ctx));
REDISMODULE_FN(int, GetDbIdFromDefragCtx, (RedisModuleDefragCtx *ctx));

static void RedisModule_InitDataApi_(void) __attribute__((unused));
static void RedisModule_InitDataApi_(void) {
    REDISMODULE_GET_API(CreateDict);
    REDISMODULE_GET_API(FreeDict);
    REDISMODULE_GET_API(DictSize);
    REDISMODULE_GET_API(DictSetC);
    REDISMODULE_GET_API(DictReplaceC);
    REDISMODULE_GET_API(DictSet);
    REDISMODULE_GET_API(DictReplace);
    REDISMODULE_GET_API(DictGetC);
    REDISMODULE_GET_API(DictGet);
    REDISMODULE_GET_API(DictDelC);
    REDISMODULE_GET_API(DictDel);
    REDISMODULE_GET_API(DictIteratorStartC);
    REDISMODULE_GET_API(DictIteratorStart);
    REDISMODULE_GET_API(DictIteratorStop);
    REDISMODULE_GET_API(DictIteratorReseekC);
    REDISMODULE_GET_API(DictIteratorReseek);
    REDISMODULE_GET_API(DictNextC);
    REDISMODULE_GET_API(DictPrevC);
    REDISMODULE_GET_API(DictNext);
    REDISMODULE_GET_API(DictPrev);
    REDISMODULE_GET_API(DictCompareC);
    REDISMODULE_GET_API(DictCompare);
    REDISMODULE_GET_API(StreamAdd);
    REDISMODULE_GET_API(StreamDelete);
    REDISMODULE_GET_API(StreamIteratorStart);
    REDISMODULE_GET_API(StreamIteratorStop);
    REDISMODULE_GET_API(StreamIteratorNextID);
    REDISMODULE_GET_API(StreamIteratorNextField);
    REDISMODULE_GET_API(StreamIteratorDelete);
    REDISMODULE_GET_API(StreamTrimByLength);
    REDISMODULE_GET_API(StreamTrimByID);
    REDISMODULE_GET_API(SaveDataTypeToString);
    REDISMODULE_GET_API(LoadDataTypeFromString);
    REDISMODULE_GET_API(LoadDataTypeFromStringEncver);
    REDISMODULE_GET_API(GetDbIdFromIO);
    REDISMODULE_GET_API(GetKeyNameFromOptCtx);
    REDISMODULE_GET_API(GetToKeyNameFromOptCtx);
    REDISMODULE_GET_API(GetDbIdFromOptCtx);
    REDISMODULE_GET_API(GetToDbIdFromOptCtx);
    REDISMODULE_GET_API(RegisterDefragFunc);
    REDISMODULE_GET_API(DefragShouldStop);
    REDISMODULE_GET_API(DefragCursorSet);
    REDISMODULE_GET_API(DefragCursorGet);
    REDISMODULE_GET_API(DefragAlloc);
    REDISMODULE_GET_API(DefragRedisModuleString);
    REDISMODULE_GET_API(GetKeyNameFromDefragCtx);
    REDISMODULE_GET_API(GetDbIdFromDefragCtx);
}

/* the getkeys-api and getchannels-api families, stream IDs as strings, absolute expire and
 * LRU/LFU of a key, clients by id, the current command, digest key and
 * database, ResetDataset (module_misc2.c; the digest pair module_type.c):
 * their pointers, and the part of RedisModule_Init that fills them */
REDISMODULE_FN(int, IsKeysPositionRequest, (RedisModuleCtx *ctx));
REDISMODULE_FN(int, IsChannelsPositionRequest, (RedisModuleCtx *ctx));
REDISMODULE_FN(void, ChannelAtPosWithFlags, (RedisModuleCtx *ctx, int pos, int flags));
REDISMODULE_FN(void, KeyAtPos, (RedisModuleCtx *ctx, int pos));
REDISMODULE_FN(void, KeyAtPosWithFlags, (RedisModuleCtx *ctx, int pos, int flags));
REDISMODULE_FN(int *, GetCommandKeys, (RedisModuleCtx *ctx, RedisModuleString **argv, int argc, int *num_keys));
REDISMODULE_FN(int *, GetCommandKeysWithFlags,
               (RedisModuleCtx *ctx, RedisModuleString **argv, int argc, int *num_keys, int **out_flags));
REDISMODULE_FN(RedisModuleString *, CreateStringFromStreamID, (RedisModuleCtx *ctx, const RedisModuleStreamID *id));
REDISMODULE_FN(int, StringToStreamID, (const RedisModuleString *str, RedisModuleStreamID *id));
REDISMODULE_FN(mstime_t, GetAbsExpire, (RedisModuleKey *key));
REDISMODULE_FN(int, SetAbsExpire, (RedisModuleKey *key, mstime_t expire));
REDISMODULE_FN(int, GetLRU, (RedisModuleKey *key, mstime_t *lru_idle));
REDISMODULE_FN(int, SetLRU, (RedisModuleKey *key, mstime_t lru_idle));
REDISMODULE_FN(int, GetLFU, (RedisModuleKey *key, long long *lfu_freq));
REDISMODULE_FN(int, SetLFU, (RedisModuleKey *key, long long lfu_freq));
REDISMODULE_FN(int, GetClientInfoById, (void *ci, uint64_t id));
REDISMODULE_FN(RedisModuleString *, GetClientNameById, (RedisModuleCtx *ctx, uint64_t id));
REDISMODULE_FN(int, SetClientNameById, (uint64_t id, RedisModuleString *name));
REDISMODULE_FN(const char *, GetCurrentCommandName, (RedisModuleCtx *ctx));
REDISMODULE_FN(const RedisModuleString *, GetKeyNameFromDigest, (RedisModuleDigest *dig));
REDISMODULE_FN(int, GetDbIdFromDigest, (RedisModuleDigest *dig));
REDISMODULE_FN(void, ResetDataset, (int restart_aof, int async));

static void RedisModule_InitMisc2Api_(void) __attribute__((unused));
static void RedisModule_InitMisc2Api_(void) {
    REDISMODULE_GET_API(IsKeysPositionRequest);
    REDISMODULE_GET_API(IsChannelsPositionRequest);
    REDISMODULE_GET_API(ChannelAtPosWithFlags);
    REDISMODULE_GET_API(KeyAtPos);
    REDISMODULE_GET_API(KeyAtPosWithFlags);
    REDISMODULE_GET_API(GetCommandKeys);
    REDISMODULE_GET_API(GetCommandKeysWithFlags);
    REDISMODULE_GET_API(CreateStringFromStreamID);
    REDISMODULE_GET_API(StringToStreamID);
    REDISMODULE_GET_API(GetAbsExpire);
    REDISMODULE_GET_API(SetAbsExpire);
    REDISMODULE_GET_API(GetLRU);
    REDISMODULE_GET_API(SetLRU);
    REDISMODULE_GET_API(GetLFU);
    REDISMODULE_GET_API(SetLFU);
    REDISMODULE_GET_API(GetClientInfoById);
    REDISMODULE_GET_API(GetClientNameById);
    REDISMODULE_GET_API(SetClientNameById);
    REDISMODULE_GET_API(GetCurrentCommandName);
    REDISMODULE_GET_API(GetKeyNameFromDigest);
    REDISMODULE_GET_API(GetDbIdFromDigest);
    REDISMODULE_GET_API(ResetDataset);
}

/* module_misc3.c: the event loop, shared APIs, random bytes, memory
 * sizes, the monotonic clock, latency samples, publishing and asserts */
REDISMODULE_FN(int, EventLoopAdd, (int fd, int mask, RedisModuleEventLoopFunc func, void *user_data));
REDISMODULE_FN(int, EventLoopDel, (int fd, int mask));
REDISMODULE_FN(int, EventLoopAddOneShot, (RedisModuleEventLoopOneShotFunc func, void *user_data));
REDISMODULE_FN(int, ExportSharedAPI, (RedisModuleCtx *ctx, const char *apiname, void *func));
REDISMODULE_FN(void *, GetSharedAPI, (RedisModuleCtx *ctx, const char *apiname));
REDISMODULE_FN(void, GetRandomBytes, (unsigned char *dst, size_t len));
REDISMODULE_FN(void, GetRandomHexChars, (char *dst, size_t len));
REDISMODULE_FN(float, GetUsedMemoryRatio, (void));
REDISMODULE_FN(size_t, MallocUsableSize, (void *ptr));
REDISMODULE_FN(size_t, MallocSizeString, (RedisModuleString *str));
REDISMODULE_FN(size_t, MallocSizeDict, (RedisModuleDict *dict));
REDISMODULE_FN(uint64_t, MonotonicMicroseconds, (void));
REDISMODULE_FN(void, LatencyAddSample, (const char *event, mstime_t latency));
REDISMODULE_FN(int, PublishMessage, (RedisModuleCtx *ctx, RedisModuleString *channel, RedisModuleString *message));
REDISMODULE_FN(int, PublishMessageShard, (RedisModuleCtx *ctx, RedisModuleString *channel,
                                          RedisModuleString *message));
REDISMODULE_FN(void, _Assert, (const char *estr, const char *file, int line));
REDISMODULE_FN(char **, GetClusterNodesList, (RedisModuleCtx *ctx, size_t *numnodes));
REDISMODULE_FN(void, FreeClusterNodesList, (char **ids));
REDISMODULE_FN(int, GetClusterNodeInfo, (RedisModuleCtx *ctx, const char *id, char *ip, char *master_id, int *port,
                                         int *flags));
REDISMODULE_FN(void, SetClusterFlags, (RedisModuleCtx *ctx, uint64_t flags));
REDISMODULE_FN(void, RegisterClusterMessageReceiver, (RedisModuleCtx *ctx, uint8_t type,
                                                      RedisModuleClusterMessageReceiver callback));
REDISMODULE_FN(int, SendClusterMessage, (RedisModuleCtx *ctx, const char *target_id, uint8_t type, const char *msg,
                                         uint32_t len));
#define RedisModule_Assert(_e) ((_e) ? (void)0 : (RedisModule__Assert(#_e, __FILE__, __LINE__), __builtin_unreachable()))

static void RedisModule_InitMisc3Api_(void) __attribute__((unused));
static void RedisModule_InitMisc3Api_(void) {
    REDISMODULE_GET_API(EventLoopAdd);
    REDISMODULE_GET_API(EventLoopDel);
    REDISMODULE_GET_API(EventLoopAddOneShot);
    REDISMODULE_GET_API(ExportSharedAPI);
    REDISMODULE_GET_API(GetSharedAPI);
    REDISMODULE_GET_API(GetRandomBytes);
    REDISMODULE_GET_API(GetRandomHexChars);
    REDISMODULE_GET_API(GetUsedMemoryRatio);
    REDISMODULE_GET_API(MallocUsableSize);
    REDISMODULE_GET_API(MallocSizeString);
    REDISMODULE_GET_API(MallocSizeDict);
    REDISMODULE_GET_API(MonotonicMicroseconds);
    REDISMODULE_GET_API(LatencyAddSample);
    REDISMODULE_GET_API(PublishMessage);
    REDISMODULE_GET_API(PublishMessageShard);
    REDISMODULE_GET_API(_Assert);
    REDISMODULE_GET_API(GetClusterNodesList);
    REDISMODULE_GET_API(FreeClusterNodesList);
    REDISMODULE_GET_API(GetClusterNodeInfo);
    REDISMODULE_GET_API(SetClusterFlags);
    REDISMODULE_GET_API(RegisterClusterMessageReceiver);
    REDISMODULE_GET_API(SendClusterMessage);
}

static int RedisModule_Init(RedisModuleCtx *ctx, const char *name, int ver, int apiver)
    __attribute__((unused));
static int RedisModule_Init(RedisModuleCtx *ctx, const char *name, int ver, int apiver) {
    void *getapi = ((void **)ctx)[0];
    RedisModule_GetApi = (int (*)(const char *, void *))(unsigned long)getapi;
    REDISMODULE_GET_API(SetModuleAttribs);
    REDISMODULE_GET_API(IsModuleNameBusy);
    REDISMODULE_GET_API(CreateCommand);
    REDISMODULE_GET_API(GetCommand);
    REDISMODULE_GET_API(CreateSubcommand);
    REDISMODULE_GET_API(SetCommandInfo);
    REDISMODULE_GET_API(WrongArity);
    REDISMODULE_GET_API(GetSelectedDb);
    REDISMODULE_GET_API(SelectDb);
    REDISMODULE_GET_API(GetClientId);
    REDISMODULE_GET_API(GetContextFlags);
    REDISMODULE_GET_API(AutoMemory);
    REDISMODULE_GET_API(SetModuleOptions);
    REDISMODULE_GET_API(GetServerVersion);
    REDISMODULE_GET_API(GetTypeMethodVersion);
    REDISMODULE_GET_API(GetContextFlagsAll);
    REDISMODULE_GET_API(GetKeyspaceNotificationFlagsAll);
    REDISMODULE_GET_API(NotifyKeyspaceEvent);
    REDISMODULE_GET_API(GetNotifyKeyspaceEvents);
    REDISMODULE_GET_API(SubscribeToKeyspaceEvents);
    REDISMODULE_GET_API(SubscribeToServerEvent);
    REDISMODULE_GET_API(IsSubEventSupported);
    REDISMODULE_GET_API(RegisterStringConfig);
    REDISMODULE_GET_API(RegisterBoolConfig);
    REDISMODULE_GET_API(RegisterEnumConfig);
    REDISMODULE_GET_API(RegisterNumericConfig);
    REDISMODULE_GET_API(LoadConfigs);
    REDISMODULE_GET_API(SignalModifiedKey);
    REDISMODULE_GET_API(DbSize);
    REDISMODULE_GET_API(RandomKey);
    REDISMODULE_GET_API(GetMyClusterID);
    REDISMODULE_GET_API(GetClusterSize);
    REDISMODULE_GET_API(CreateTimer);
    REDISMODULE_GET_API(StopTimer);
    REDISMODULE_GET_API(GetTimerInfo);
    REDISMODULE_GET_API(GetKeyNameFromModuleKey);
    REDISMODULE_GET_API(GetDbIdFromModuleKey);
    REDISMODULE_GET_API(Milliseconds);
    REDISMODULE_GET_API(Log);
    REDISMODULE_GET_API(LogIOError);
    REDISMODULE_GET_API(Replicate);
    REDISMODULE_GET_API(ReplicateVerbatim);
    REDISMODULE_GET_API(Alloc);
    REDISMODULE_GET_API(TryAlloc);
    REDISMODULE_GET_API(Calloc);
    REDISMODULE_GET_API(Realloc);
    REDISMODULE_GET_API(Free);
    REDISMODULE_GET_API(Strdup);
    REDISMODULE_GET_API(PoolAlloc);
    REDISMODULE_GET_API(MallocSize);
    REDISMODULE_GET_API(CreateString);
    REDISMODULE_GET_API(CreateStringFromLongLong);
    REDISMODULE_GET_API(CreateStringFromULongLong);
    REDISMODULE_GET_API(CreateStringFromDouble);
    REDISMODULE_GET_API(CreateStringFromLongDouble);
    REDISMODULE_GET_API(CreateStringFromString);
    REDISMODULE_GET_API(CreateStringPrintf);
    REDISMODULE_GET_API(FreeString);
    REDISMODULE_GET_API(RetainString);
    REDISMODULE_GET_API(HoldString);
    REDISMODULE_GET_API(StringPtrLen);
    REDISMODULE_GET_API(StringToLongLong);
    REDISMODULE_GET_API(StringToULongLong);
    REDISMODULE_GET_API(StringToDouble);
    REDISMODULE_GET_API(StringToLongDouble);
    REDISMODULE_GET_API(StringCompare);
    REDISMODULE_GET_API(StringAppendBuffer);
    REDISMODULE_GET_API(TrimStringAllocation);
    REDISMODULE_GET_API(ReplyWithLongLong);
    REDISMODULE_GET_API(ReplyWithError);
    REDISMODULE_GET_API(ReplyWithSimpleString);
    REDISMODULE_GET_API(ReplyWithArray);
    REDISMODULE_GET_API(ReplyWithMap);
    REDISMODULE_GET_API(ReplyWithSet);
    REDISMODULE_GET_API(ReplyWithAttribute);
    REDISMODULE_GET_API(ReplyWithNullArray);
    REDISMODULE_GET_API(ReplyWithEmptyArray);
    REDISMODULE_GET_API(ReplySetArrayLength);
    REDISMODULE_GET_API(ReplySetMapLength);
    REDISMODULE_GET_API(ReplySetSetLength);
    REDISMODULE_GET_API(ReplySetAttributeLength);
    REDISMODULE_GET_API(ReplyWithStringBuffer);
    REDISMODULE_GET_API(ReplyWithCString);
    REDISMODULE_GET_API(ReplyWithString);
    REDISMODULE_GET_API(ReplyWithEmptyString);
    REDISMODULE_GET_API(ReplyWithVerbatimString);
    REDISMODULE_GET_API(ReplyWithVerbatimStringType);
    REDISMODULE_GET_API(ReplyWithNull);
    REDISMODULE_GET_API(ReplyWithBool);
    REDISMODULE_GET_API(ReplyWithDouble);
    REDISMODULE_GET_API(ReplyWithBigNumber);
    REDISMODULE_GET_API(ReplyWithLongDouble);
    REDISMODULE_GET_API(ReplyWithCallReply);
    REDISMODULE_GET_API(Call);
    REDISMODULE_GET_API(CallReplyProto);
    REDISMODULE_GET_API(FreeCallReply);
    REDISMODULE_GET_API(CallReplyType);
    REDISMODULE_GET_API(CallReplyInteger);
    REDISMODULE_GET_API(CallReplyDouble);
    REDISMODULE_GET_API(CallReplyBool);
    REDISMODULE_GET_API(CallReplyBigNumber);
    REDISMODULE_GET_API(CallReplyVerbatim);
    REDISMODULE_GET_API(CallReplySetElement);
    REDISMODULE_GET_API(CallReplyMapElement);
    REDISMODULE_GET_API(CallReplyAttributeElement);
    REDISMODULE_GET_API(CallReplyAttribute);
    REDISMODULE_GET_API(CallReplyLength);
    REDISMODULE_GET_API(CallReplyArrayElement);
    REDISMODULE_GET_API(CallReplyStringPtr);
    REDISMODULE_GET_API(CreateStringFromCallReply);
    REDISMODULE_GET_API(KeyExists);
    REDISMODULE_GET_API(OpenKey);
    REDISMODULE_GET_API(CloseKey);
    REDISMODULE_GET_API(KeyType);
    REDISMODULE_GET_API(ValueLength);
    REDISMODULE_GET_API(DeleteKey);
    REDISMODULE_GET_API(UnlinkKey);
    REDISMODULE_GET_API(StringSet);
    REDISMODULE_GET_API(StringDMA);
    REDISMODULE_GET_API(StringTruncate);
    REDISMODULE_GET_API(GetExpire);
    REDISMODULE_GET_API(ListPush);
    REDISMODULE_GET_API(ListPop);
    REDISMODULE_GET_API(ListGet);
    REDISMODULE_GET_API(ListSet);
    REDISMODULE_GET_API(ListInsert);
    REDISMODULE_GET_API(ListDelete);
    REDISMODULE_GET_API(HashSet);
    REDISMODULE_GET_API(HashGet);
    REDISMODULE_GET_API(ZsetAdd);
    REDISMODULE_GET_API(ZsetIncrby);
    REDISMODULE_GET_API(ZsetScore);
    REDISMODULE_GET_API(ZsetRem);
    REDISMODULE_GET_API(ZsetRangeStop);
    REDISMODULE_GET_API(ZsetFirstInScoreRange);
    REDISMODULE_GET_API(ZsetLastInScoreRange);
    REDISMODULE_GET_API(ZsetFirstInLexRange);
    REDISMODULE_GET_API(ZsetLastInLexRange);
    REDISMODULE_GET_API(ZsetRangeCurrentElement);
    REDISMODULE_GET_API(ZsetRangeNext);
    REDISMODULE_GET_API(ZsetRangePrev);
    REDISMODULE_GET_API(ZsetRangeEndReached);
    REDISMODULE_GET_API(RegisterInfoFunc);
    REDISMODULE_GET_API(InfoAddSection);
    REDISMODULE_GET_API(InfoBeginDictField);
    REDISMODULE_GET_API(InfoEndDictField);
    REDISMODULE_GET_API(InfoAddFieldString);
    REDISMODULE_GET_API(InfoAddFieldCString);
    REDISMODULE_GET_API(InfoAddFieldDouble);
    REDISMODULE_GET_API(InfoAddFieldLongLong);
    REDISMODULE_GET_API(InfoAddFieldULongLong);
    REDISMODULE_GET_API(GetServerInfo);
    REDISMODULE_GET_API(FreeServerInfo);
    REDISMODULE_GET_API(ServerInfoGetField);
    REDISMODULE_GET_API(ServerInfoGetFieldC);
    REDISMODULE_GET_API(ServerInfoGetFieldSigned);
    REDISMODULE_GET_API(ServerInfoGetFieldUnsigned);
    REDISMODULE_GET_API(ServerInfoGetFieldDouble);
    REDISMODULE_GET_API(ScanCursorCreate);
    REDISMODULE_GET_API(ScanCursorRestart);
    REDISMODULE_GET_API(ScanCursorDestroy);
    REDISMODULE_GET_API(Scan);
    REDISMODULE_GET_API(ScanKey);
    REDISMODULE_GET_API(SetExpire);
    REDISMODULE_GET_API(CreateDataType);
    REDISMODULE_GET_API(ModuleTypeSetValue);
    REDISMODULE_GET_API(ModuleTypeReplaceValue);
    REDISMODULE_GET_API(ModuleTypeGetType);
    REDISMODULE_GET_API(ModuleTypeGetValue);
    REDISMODULE_GET_API(IsIOError);
    REDISMODULE_GET_API(SaveUnsigned);
    REDISMODULE_GET_API(LoadUnsigned);
    REDISMODULE_GET_API(SaveSigned);
    REDISMODULE_GET_API(LoadSigned);
    REDISMODULE_GET_API(SaveString);
    REDISMODULE_GET_API(SaveStringBuffer);
    REDISMODULE_GET_API(LoadString);
    REDISMODULE_GET_API(LoadStringBuffer);
    REDISMODULE_GET_API(SaveDouble);
    REDISMODULE_GET_API(LoadDouble);
    REDISMODULE_GET_API(SaveFloat);
    REDISMODULE_GET_API(LoadFloat);
    REDISMODULE_GET_API(SaveLongDouble);
    REDISMODULE_GET_API(LoadLongDouble);
    REDISMODULE_GET_API(GetContextFromIO);
    REDISMODULE_GET_API(GetKeyNameFromIO);
    REDISMODULE_GET_API(DigestAddStringBuffer);
    REDISMODULE_GET_API(DigestAddLongLong);
    REDISMODULE_GET_API(DigestEndSequence);
    REDISMODULE_GET_API(EmitAOF);
    RedisModule_InitDataApi_();
    RedisModule_InitMisc2Api_();
    RedisModule_InitMisc3Api_();
    REDISMODULE_GET_API(BlockClient);
    REDISMODULE_GET_API(BlockClientOnKeys);
    REDISMODULE_GET_API(SignalKeyAsReady);
    REDISMODULE_GET_API(GetBlockedClientReadyKey);
    REDISMODULE_GET_API(UnblockClient);
    REDISMODULE_GET_API(IsBlockedReplyRequest);
    REDISMODULE_GET_API(IsBlockedTimeoutRequest);
    REDISMODULE_GET_API(GetBlockedClientPrivateData);
    REDISMODULE_GET_API(GetBlockedClientHandle);
    REDISMODULE_GET_API(AbortBlock);
    REDISMODULE_GET_API(BlockedClientMeasureTimeStart);
    REDISMODULE_GET_API(BlockedClientMeasureTimeEnd);
    REDISMODULE_GET_API(BlockedClientDisconnected);
    REDISMODULE_GET_API(SetDisconnectCallback);
    REDISMODULE_GET_API(GetThreadSafeContext);
    REDISMODULE_GET_API(GetDetachedThreadSafeContext);
    REDISMODULE_GET_API(FreeThreadSafeContext);
    REDISMODULE_GET_API(ThreadSafeContextLock);
    REDISMODULE_GET_API(ThreadSafeContextTryLock);
    REDISMODULE_GET_API(ThreadSafeContextUnlock);
    REDISMODULE_GET_API(Yield);
    REDISMODULE_GET_API(AvoidReplicaTraffic);
    REDISMODULE_SYS_GET_APIS();
    if (RedisModule_IsModuleNameBusy && RedisModule_IsModuleNameBusy(name)) return REDISMODULE_ERR;
    RedisModule_SetModuleAttribs(ctx, name, ver, apiver);
    return REDISMODULE_OK;
}

#endif /* !REDISMODULE_CORE */
#endif /* REDISMODULE_H */
