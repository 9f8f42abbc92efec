/* module_misc.c -- small parts of the module API: module options, the
 * server's version and the API's masks, keyspace notifications and
 * modified-key signals sent by modules, database size and random key,
 * and the cluster API as Redis answers it with cluster mode off. */
#include <string.h>

#include "core/server.h"
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

#define API(fn) {"RedisModule_" #fn, (void *)(uintptr_t)RM_##fn}
const ApiEntry moduleMiscApi[] = {API(SetModuleOptions),
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
