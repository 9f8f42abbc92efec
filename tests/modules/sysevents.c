/* sysevents.c -- test module: the server events of persistence, loading,
 * replication and fork children, and IsSubEventSupported over every event.
 *
 * Logged (sev.log returns the log, then clears it):
 *   role:<sub>:<master>:<host>:<port>   ReplicationRoleChanged
 *   persist:<sub>                       Persistence
 *   loading:<sub>                       Loading
 *   replica:<sub>                       ReplicaChange
 *   link:<sub>                          MasterLinkChange
 *   fork:<sub>                          ForkChild
 *   flush:<sub>:<dbnum>:<sync>          FlushDB
 *   progress:<sub>:ok                   LoadingProgress (data in range)
 *   async:<sub>                         ReplAsyncLoad
 *   outer:db<n>                         the nesting check below
 *
 * Persistence events are also written to the server's log ("sev-event
 * persist:<sub>"): those of a fork child (BGSAVE, BGREWRITEAOF) fire
 * there, where the log above cannot be read.
 *
 * Loaded with the argument "async" it declares
 * REDISMODULE_OPTIONS_HANDLE_REPL_ASYNC_LOAD (a swapdb replica may then
 * load diskless).
 *
 *   sev.supported   IsSubEventSupported(id, sub) for id 0..17, sub 0..6
 *   sev.loop        whether EventLoop before-sleep and after-sleep events
 *                   came (2 integers)
 *
 * Nesting: on "set" of key "outer" the first keyspace subscriber SETs
 * "inner" through Call; the second subscriber, on "set" of "inner",
 * selects db 9 in its own context; the first then logs its selected db
 * (still the event's: each firing has its own client). */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "redismodule.h"

#define LOG_MAX 256
static char *logs[LOG_MAX];
static int nlogs;

static void add(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void add(const char *fmt, ...) {
    if (nlogs == LOG_MAX) return;
    char buf[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    logs[nlogs++] = RedisModule_Strdup(buf);
}

static void onEvent(RedisModuleCtx *ctx, RedisModuleEvent e, uint64_t sub, void *data) {
    switch (e.id) {
    case REDISMODULE_EVENT_REPLICATION_ROLE_CHANGED: {
        RedisModuleReplicationInfo *ri = data;
        add("role:%d:%d:%s:%d:v%d", (int)sub, ri->master, ri->masterhost ? ri->masterhost : "(null)",
            ri->master ? 0 : ri->masterport, (int)ri->version);
        break;
    }
    case REDISMODULE_EVENT_PERSISTENCE:
        add("persist:%d", (int)sub);
        RedisModule_Log(ctx, "warning", "sev-event persist:%d", (int)sub);
        break;
    case REDISMODULE_EVENT_REPL_ASYNC_LOAD: add("async:%d", (int)sub); break;
    case REDISMODULE_EVENT_LOADING: add("loading:%d", (int)sub); break;
    case REDISMODULE_EVENT_REPLICA_CHANGE: add("replica:%d", (int)sub); break;
    case REDISMODULE_EVENT_MASTER_LINK_CHANGE: add("link:%d", (int)sub); break;
    case REDISMODULE_EVENT_FORK_CHILD: add("fork:%d", (int)sub); break;
    case REDISMODULE_EVENT_LOADING_PROGRESS: {
        RedisModuleLoadingProgress *lp = data;
        add("progress:%d:%s", (int)sub, lp->progress >= 0 && lp->progress <= 1024 && lp->hz > 0 ? "ok" : "bad");
        break;
    }
    case REDISMODULE_EVENT_FLUSHDB: {
        RedisModuleFlushInfo *fi = data;
        add("flush:%d:%d:%d", (int)sub, (int)fi->dbnum, (int)fi->sync);
        break;
    }
    default: break;
    }
}

static long long loopCounts[2];

static void onLoop(RedisModuleCtx *ctx, RedisModuleEvent e, uint64_t sub, void *data) {
    (void)ctx, (void)e, (void)data;
    if (sub < 2) loopCounts[sub]++;
}

static int cmdLoop(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    (void)argv, (void)argc;
    RedisModule_ReplyWithArray(ctx, 2);
    RedisModule_ReplyWithLongLong(ctx, loopCounts[0] > 0);
    return RedisModule_ReplyWithLongLong(ctx, loopCounts[1] > 0);
}

static int onOuter(RedisModuleCtx *ctx, int type, const char *event, RedisModuleString *key) {
    (void)type;
    if (strcmp(event, "set") || strcmp(RedisModule_StringPtrLen(key, NULL), "outer")) return REDISMODULE_OK;
    RedisModuleCallReply *r = RedisModule_Call(ctx, "SET", "cc", "inner", "x");
    if (r) RedisModule_FreeCallReply(r);
    add("outer:db%d", RedisModule_GetSelectedDb(ctx));
    return REDISMODULE_OK;
}

static int onInner(RedisModuleCtx *ctx, int type, const char *event, RedisModuleString *key) {
    (void)type;
    if (strcmp(event, "set") || strcmp(RedisModule_StringPtrLen(key, NULL), "inner")) return REDISMODULE_OK;
    RedisModule_SelectDb(ctx, 9);
    return REDISMODULE_OK;
}

static int cmdLog(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    (void)argv, (void)argc;
    int n = nlogs;
    RedisModule_ReplyWithArray(ctx, n);
    for (int i = 0; i < n; i++) {
        RedisModule_ReplyWithSimpleString(ctx, logs[i]);
        RedisModule_Free(logs[i]);
    }
    nlogs = 0;
    return REDISMODULE_OK;
}

static int cmdSupported(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    (void)argv, (void)argc;
    RedisModule_ReplyWithArray(ctx, 18 * 7);
    for (uint64_t id = 0; id < 18; id++) {
        RedisModuleEvent e = {id, 1};
        for (uint64_t sub = 0; sub < 7; sub++) RedisModule_ReplyWithLongLong(ctx, RedisModule_IsSubEventSupported(e, sub));
    }
    return REDISMODULE_OK;
}

int RedisModule_OnLoad(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    if (RedisModule_Init(ctx, "sysevents", 1, REDISMODULE_APIVER_1) == REDISMODULE_ERR) return REDISMODULE_ERR;
    if (argc == 1 && !strcmp(RedisModule_StringPtrLen(argv[0], NULL), "async"))
        RedisModule_SetModuleOptions(ctx, REDISMODULE_OPTIONS_HANDLE_REPL_ASYNC_LOAD);
    RedisModuleEvent evs[] = {RedisModuleEvent_ReplicationRoleChanged, RedisModuleEvent_Persistence,
                              RedisModuleEvent_Loading, RedisModuleEvent_ReplicaChange,
                              RedisModuleEvent_MasterLinkChange, RedisModuleEvent_ForkChild,
                              RedisModuleEvent_FlushDB, RedisModuleEvent_LoadingProgress,
                              RedisModuleEvent_ReplAsyncLoad};
    for (size_t i = 0; i < sizeof(evs) / sizeof(evs[0]); i++)
        if (RedisModule_SubscribeToServerEvent(ctx, evs[i], onEvent) == REDISMODULE_ERR) return REDISMODULE_ERR;
    if (RedisModule_SubscribeToServerEvent(ctx, RedisModuleEvent_EventLoop, onLoop) == REDISMODULE_ERR)
        return REDISMODULE_ERR;
    if (RedisModule_SubscribeToKeyspaceEvents(ctx, REDISMODULE_NOTIFY_STRING, onOuter) == REDISMODULE_ERR ||
        RedisModule_SubscribeToKeyspaceEvents(ctx, REDISMODULE_NOTIFY_STRING, onInner) == REDISMODULE_ERR)
        return REDISMODULE_ERR;
    if (RedisModule_CreateCommand(ctx, "sev.log", cmdLog, "", 0, 0, 0) == REDISMODULE_ERR ||
        RedisModule_CreateCommand(ctx, "sev.supported", cmdSupported, "", 0, 0, 0) == REDISMODULE_ERR ||
        RedisModule_CreateCommand(ctx, "sev.loop", cmdLoop, "", 0, 0, 0) == REDISMODULE_ERR)
        return REDISMODULE_ERR;
    return REDISMODULE_OK;
}
