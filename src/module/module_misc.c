/* module_misc.c -- small parts of the module API: module options, the
 * server's version and the API's masks, keyspace notifications and
 * modified-key signals sent by modules, database size and random key,
 * the cluster API as Redis answers it with cluster mode off, and timers.
 *
 * Timers: each is an event-loop timer; its record (id, module, callback,
 * data, database, due time) lives in a list until it fires or is stopped.
 * A stopped timer's loop timer finds its record gone and ends.  The
 * callback runs with a context whose client is a fake one selected to the
 * database the timer was created in; what it propagates is one unit
 * (MULTI/EXEC when several), as on Redis.  A module's timers are dropped
 * with it when its init fails; one holding a timer cannot be unloaded
 * (Redis's rule). */
#include <string.h>

#include "core/effects.h"
#include "core/event.h"
#include "core/server.h"
#include "ds/alloc.h"
#include "ds/util.h"
#include "db/db.h"
#include "db/object.h"
#include "module/module_int.h"
#include "server/cluster.h"

static void RM_SetModuleOptions(RedisModuleCtx *ctx, int options) {
    if (ctx->module) ctx->module->options = options;
}

static int RM_GetServerVersion(void) { return REDIS_COMPAT_VERSION_NUM; }

static int RM_GetTypeMethodVersion(void) { return REDISMODULE_TYPE_METHOD_VERSION; }

/* The masks of what Redis 7.0 defines (each "next" bit minus one). */
static int RM_GetContextFlagsAll(void) { return (1 << 24) - 1; }
static int RM_GetKeyspaceNotificationFlagsAll(void) { return (1 << 15) - 1; }

static Db *ctxDb(RedisModuleCtx *ctx) { return ctx && ctx->client ? ctx->client->db : server.db; }

static int RM_NotifyKeyspaceEvent(RedisModuleCtx *ctx, int type, const char *event, RedisModuleString *key) {
    if (!ctx || !key || !event) return REDISMODULE_ERR;
    notifyKeyspaceEvent(type, event, key->s, sdsLen(key->s), ctxDb(ctx)->id);
    return REDISMODULE_OK;
}

static int RM_GetNotifyKeyspaceEvents(void) { return server.cfg.notifyFlags; }

static int RM_SignalModifiedKey(RedisModuleCtx *ctx, RedisModuleString *keyname) {
    signalModifiedKey(ctx->client, ctxDb(ctx), keyname->s, sdsLen(keyname->s));
    return REDISMODULE_OK;
}

static unsigned long long RM_DbSize(RedisModuleCtx *ctx) { return dbSize(ctxDb(ctx)); }

static RedisModuleString *RM_RandomKey(RedisModuleCtx *ctx) {
    kvobj *o = dbRandomKey(ctxDb(ctx));
    return o ? modStringNew(ctx, kvKey(o), kvKeyLen(o)) : NULL;
}

/* Without cluster mode Redis answers NULL and 0.  With it, the answers
 * of CLUSTER MYID and CLUSTER NODES (its lines), run as a module's call. */
static RedisModuleCallReply *clusterCall(const char *sub) {
    RedisModuleCtx ctx;
    moduleCtxInit(&ctx, NULL, NULL);
    RedisModuleCallReply *r = moduleCallCommand(&ctx, "CLUSTER", sub);
    moduleCtxDone(&ctx);
    return r;
}

static const char *RM_GetMyClusterID(void) {
    static char id[REDISMODULE_NODE_ID_LEN + 1];
    if (!clusterEnabled) return NULL;
    RedisModuleCallReply *r = clusterCall("MYID");
    size_t len = 0;
    const char *p = moduleCallReplyString(r, &len);
    if (!p || len != REDISMODULE_NODE_ID_LEN) {
        moduleFreeCallReplyTree(r);
        return NULL;
    }
    memcpy(id, p, len);
    id[len] = '\0';
    moduleFreeCallReplyTree(r);
    return id;
}

static size_t RM_GetClusterSize(void) {
    if (!clusterEnabled) return 0;
    RedisModuleCallReply *r = clusterCall("NODES");
    size_t len = 0, n = 0;
    const char *p = moduleCallReplyString(r, &len);
    for (size_t i = 0; p && i < len; i++) n += p[i] == '\n';
    moduleFreeCallReplyTree(r);
    return n;
}

/* ---- timers ---- */

typedef struct ModuleTimer {
    uint64_t id;
    Module *module;
    RedisModuleTimerProc callback;
    void *data;
    int dbid;
    long long dueMs; /* unix ms */
    struct ModuleTimer *next;
} ModuleTimer;

static ModuleTimer *timers;
static uint64_t nextTimerId;
static Client *timerClient;

static ModuleTimer **timerFind(uint64_t id) {
    ModuleTimer **pp = &timers;
    while (*pp && (*pp)->id != id) pp = &(*pp)->next;
    return pp;
}

static long long timerFired(EventLoop *loop, long long loopId, void *data) {
    (void)loop, (void)loopId;
    uint64_t id = (uint64_t)(uintptr_t)data;
    ModuleTimer **pp = timerFind(id);
    ModuleTimer *t = *pp;
    if (!t) return -1; /* stopped */
    *pp = t->next;
    if (!timerClient) {
        timerClient = clientCreateFake();
        /* what a callback replies goes nowhere (no sink) */
        timerClient->flags |= CLIENT_REPLY_SINK;
        timerClient->sink = NULL;
    }
    clientSelectDb(timerClient, t->dbid);
    RedisModuleCtx ctx;
    moduleCtxInit(&ctx, t->module, timerClient);
    effectsHold();
    t->callback(&ctx, t->data);
    moduleCtxDone(&ctx);
    effectsRelease();
    xfree(t);
    return -1;
}

static RedisModuleTimerID RM_CreateTimer(RedisModuleCtx *ctx, mstime_t period, RedisModuleTimerProc callback,
                                         void *data) {
    if (period < 0) period = 0;
    ModuleTimer *t = xmalloc(sizeof(*t));
    t->id = ++nextTimerId;
    t->module = ctx->module;
    t->callback = callback;
    t->data = data;
    t->dbid = ctx->client ? ctx->client->db->id : 0;
    t->dueMs = mstime() + period;
    t->next = timers;
    timers = t;
    eventAddTimer(server.loop, period, timerFired, (void *)(uintptr_t)t->id);
    return t->id;
}

/* Another module's timer, or none: REDISMODULE_ERR. */
static int RM_StopTimer(RedisModuleCtx *ctx, RedisModuleTimerID id, void **data) {
    ModuleTimer **pp = timerFind(id);
    ModuleTimer *t = *pp;
    if (!t || t->module != ctx->module) return REDISMODULE_ERR;
    if (data) *data = t->data;
    *pp = t->next;
    xfree(t);
    return REDISMODULE_OK;
}

static int RM_GetTimerInfo(RedisModuleCtx *ctx, RedisModuleTimerID id, uint64_t *remaining, void **data) {
    ModuleTimer *t = *timerFind(id);
    if (!t || t->module != ctx->module) return REDISMODULE_ERR;
    if (remaining) {
        long long left = t->dueMs - mstime();
        *remaining = left > 0 ? (uint64_t)left : 0;
    }
    if (data) *data = t->data;
    return REDISMODULE_OK;
}

int moduleHasTimers(const Module *m) {
    for (ModuleTimer *t = timers; t; t = t->next)
        if (t->module == m) return 1;
    return 0;
}

void moduleDropTimers(Module *m) {
    for (ModuleTimer **pp = &timers; *pp;) {
        if ((*pp)->module == m) {
            ModuleTimer *t = *pp;
            *pp = t->next;
            xfree(t);
        } else {
            pp = &(*pp)->next;
        }
    }
}

#define API(fn) {"RedisModule_" #fn, (void *)(uintptr_t)RM_##fn}
const ApiEntry moduleMiscApi[] = {API(CreateTimer), API(StopTimer), API(GetTimerInfo),API(SetModuleOptions),
                                  API(GetServerVersion),
                                  API(GetTypeMethodVersion),
                                  API(GetContextFlagsAll),
                                  API(GetKeyspaceNotificationFlagsAll),
                                  API(NotifyKeyspaceEvent),
                                  API(GetNotifyKeyspaceEvents),
                                  API(SignalModifiedKey),
                                  API(DbSize),
                                  API(RandomKey),
                                  API(GetMyClusterID),
                                  API(GetClusterSize),
                                  {NULL, NULL}};
