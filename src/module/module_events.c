/* module_events.c -- keyspace-notification subscriptions and server events
 * (RedisModule_SubscribeToKeyspaceEvents, SubscribeToServerEvent,
 * IsSubEventSupported).
 *
 * Keyspace subscribers: a list in subscription order.  Each sees every
 * event whose class is in its mask, whatever notify-keyspace-events says
 * (Redis's rule; core's notifyKeyspaceEvent calls the hook first), with the
 * KEYSPACE/KEYEVENT bits removed from the type it is given.  While a
 * subscriber's callback runs it is marked active and gets no event that
 * callback causes (no loop), as on Redis.  The callback's context has a
 * fake client selected to the event's database; what it replies goes
 * nowhere.
 *
 * Server events: one callback per (module, event); subscribing again
 * replaces it, a NULL callback unsubscribes.  Every 7.0 event can be
 * subscribed to; IsSubEventSupported answers as Redis 7.0 does (by its
 * subevent counts).  Cairn fires: FlushDB (start and end, for FLUSHDB,
 * FLUSHALL, DEBUG RELOAD and a replica's full sync), ClientChange,
 * Shutdown, CronLoop, ModuleChange, SwapDB, Config, ReplicationRoleChanged
 * (REPLICAOF), MasterLinkChange (a replica's link up and down),
 * ReplicaChange (a replica online, an online replica gone), Persistence
 * (SAVE and the other foreground saves: sync RDB start, ended, failed; the
 * start-up AOF base: sync AOF start; a BGSAVE's or BGREWRITEAOF's start
 * and end fire in its child, as on Redis), Loading (the start-up RDB or
 * AOF load, DEBUG RELOAD, DEBUG LOADAOF, a replica's sync load, async or
 * not: start, ended, failed), LoadingProgress (RDB loads, DEBUG RELOAD
 * included, every loading-process-events-interval-bytes; AOF loads before
 * the first command of a file and after every 1024th; at most hz a
 * second), ReplAsyncLoad (a replica's swapdb diskless load: started,
 * aborted, completed), EventLoop (before sleep: serverBeforeSleep; after
 * sleep: the loop's after-sleep proc, set only while a module listens),
 * ForkChild (born and died, for every background child).  Not fired:
 * ReplBackup (deprecated; Redis 7.0 never fires it).  The data given is
 * the version 1 struct of Redis 7.0's header.
 *
 * Each firing nested in another's callback gets its own fake client (see
 * fakeClientAcquire).
 *
 * Invariants: a module's subscriptions go with it (init failure, unload),
 * so no callback points into unloaded code; callbacks may subscribe or
 * unsubscribe (the lists are walked with the next pointer saved, and a
 * removed entry is only unlinked when no walk is under way). */
#include <stdlib.h>
#include <string.h>

#include "core/effects.h"
#include "core/event.h"
#include "core/server.h"
#include "ds/alloc.h"
#include "module/module_int.h"

typedef struct KsSub {
    Module *module;
    int mask;
    RedisModuleNotificationFunc cb;
    int active;
    int dead; /* unsubscribed during a walk */
    struct KsSub *next;
} KsSub;

typedef struct EvSub {
    Module *module;
    uint64_t id;
    RedisModuleEventCallback cb; /* NULL: removed during a walk */
    struct EvSub *next;
} EvSub;

static KsSub *ksSubs;
static EvSub *evSubs;
static int walking; /* nesting depth of walks over either list */
/* The callbacks' fake clients, one per nesting level: an event fired
 * while a callback runs (its Call deletes a key, flushes, saves) gets its
 * own client, so that the outer callback's selected database and state
 * are not changed under it.  Levels past EVENT_CLIENTS_KEPT get a client
 * made and freed for the one firing. */
#define EVENT_CLIENTS_KEPT 8
static Client *eventClients[EVENT_CLIENTS_KEPT];
static int eventDepth;

static Client *fakeClientAcquire(int dbid) {
    Client *c = eventDepth < EVENT_CLIENTS_KEPT ? eventClients[eventDepth] : NULL;
    if (!c) {
        c = clientCreateFake();
        c->flags |= CLIENT_REPLY_SINK;
        c->sink = NULL;
        if (eventDepth < EVENT_CLIENTS_KEPT) eventClients[eventDepth] = c;
    }
    eventDepth++;
    if (dbid >= 0 && dbid < server.cfg.databases) clientSelectDb(c, dbid);
    return c;
}

static void fakeClientRelease(Client *c) {
    eventDepth--;
    if (eventDepth >= EVENT_CLIENTS_KEPT) clientFree(c);
}

static void keyspaceHook(int type, const char *event, const char *key, size_t keylen, int dbid);
static void serverEvent(int event, int sub, void *p, long a, long b);
static void refreshAfterSleep(void);

/* Unlinks what was removed during walks, once none is under way; the
 * core hooks are set only while there are subscribers (nothing on the
 * hot path otherwise). */
static void sweep(void) {
    if (walking) return;
    for (KsSub **pp = &ksSubs; *pp;) {
        if ((*pp)->dead) {
            KsSub *s = *pp;
            *pp = s->next;
            xfree(s);
        } else {
            pp = &(*pp)->next;
        }
    }
    for (EvSub **pp = &evSubs; *pp;) {
        if (!(*pp)->cb) {
            EvSub *s = *pp;
            *pp = s->next;
            xfree(s);
        } else {
            pp = &(*pp)->next;
        }
    }
    serverSetModuleKeyspaceHook(ksSubs ? keyspaceHook : NULL);
    serverSetEventHook(evSubs || moduleAclHasCallbacks() ? serverEvent : NULL);
    refreshAfterSleep();
}

static void afterSleep(EventLoop *loop) {
    (void)loop;
    serverFireEvent(SERVER_EVENT_EVENTLOOP, 1, NULL, 0, 0);
}

/* The loop calls afterSleep only while a module listens to EventLoop. */
static void refreshAfterSleep(void) {
    int any = 0;
    for (EvSub *s = evSubs; s && !any; s = s->next) any = s->cb && s->id == REDISMODULE_EVENT_EVENTLOOP;
    eventSetAfterSleep(server.loop, any ? afterSleep : NULL);
}

void moduleEventsHookRefresh(void) { serverSetEventHook(evSubs || moduleAclHasCallbacks() ? serverEvent : NULL); }

static void keyspaceHook(int type, const char *event, const char *key, size_t keylen, int dbid) {
    type &= ~(NOTIFY_KEYSPACE | NOTIFY_KEYEVENT);
    walking++;
    for (KsSub *s = ksSubs; s; s = s->next) {
        if (s->dead || s->active || !(s->mask & type)) continue;
        Client *c = fakeClientAcquire(dbid);
        RedisModuleCtx ctx;
        moduleCtxInit(&ctx, s->module, c);
        RedisModuleString *k = modStringNew(NULL, key, keylen);
        s->active = 1;
        s->cb(&ctx, type, event, k);
        s->active = 0;
        modStringRelease(k);
        moduleCtxDone(&ctx);
        fakeClientRelease(c);
    }
    walking--;
    sweep();
}

/* Adds a subscription (Redis allows several per module, each called). */
static int RM_SubscribeToKeyspaceEvents(RedisModuleCtx *ctx, int types, RedisModuleNotificationFunc cb) {
    if (!ctx || !ctx->module || !cb) return REDISMODULE_ERR;
    KsSub *s = xcalloc(sizeof(*s));
    s->module = ctx->module;
    s->mask = types;
    s->cb = cb;
    KsSub **tail = &ksSubs;
    while (*tail) tail = &(*tail)->next;
    *tail = s;
    serverSetModuleKeyspaceHook(keyspaceHook);
    return REDISMODULE_OK;
}

/* Redis 7.0's subevent counts per event (its _NEXT values): a subevent
 * is supported when below it, so the events without subevents answer 0
 * for every one, as on Redis. */
static int subeventCount(uint64_t id) {
    switch (id) {
    case REDISMODULE_EVENT_REPLICATION_ROLE_CHANGED:
    case REDISMODULE_EVENT_FLUSHDB:
    case REDISMODULE_EVENT_CLIENT_CHANGE:
    case REDISMODULE_EVENT_REPLICA_CHANGE:
    case REDISMODULE_EVENT_MASTER_LINK_CHANGE:
    case REDISMODULE_EVENT_MODULE_CHANGE:
    case REDISMODULE_EVENT_LOADING_PROGRESS:
    case REDISMODULE_EVENT_FORK_CHILD:
    case REDISMODULE_EVENT_EVENTLOOP: return 2;
    case REDISMODULE_EVENT_PERSISTENCE: return 6;
    case REDISMODULE_EVENT_LOADING: return 5;
    case REDISMODULE_EVENT_REPL_ASYNC_LOAD: return 3;
    case REDISMODULE_EVENT_CONFIG: return 1;
    default: return 0; /* Shutdown, CronLoop, SwapDB, ReplBackup (deprecated), unknown ids */
    }
}

static int RM_IsSubEventSupported(RedisModuleEvent event, uint64_t subevent) {
    return subevent < (uint64_t)subeventCount(event.id);
}

static int RM_SubscribeToServerEvent(RedisModuleCtx *ctx, RedisModuleEvent event, RedisModuleEventCallback cb) {
    if (!ctx || !ctx->module || event.id >= _REDISMODULE_EVENT_NEXT) return REDISMODULE_ERR;
    EvSub *found = NULL;
    for (EvSub *s = evSubs; s; s = s->next)
        if (s->cb && s->module == ctx->module && s->id == event.id) found = s;
    if (found) {
        found->cb = cb; /* NULL: removed (unlinked by sweep) */
        sweep();
        return REDISMODULE_OK;
    }
    if (!cb) return REDISMODULE_OK;
    EvSub *s = xcalloc(sizeof(*s));
    s->module = ctx->module;
    s->id = event.id;
    s->cb = cb;
    EvSub **tail = &evSubs;
    while (*tail) tail = &(*tail)->next;
    *tail = s;
    serverSetEventHook(serverEvent);
    refreshAfterSleep();
    return REDISMODULE_OK;
}

/* Calls each subscriber of event id (except module skip) with data. */
static void fire(uint64_t id, uint64_t sub, void *data, int dbid, Module *skip) {
    if (!evSubs) return;
    RedisModuleEvent ev = {id, 1};
    walking++;
    for (EvSub *s = evSubs; s; s = s->next) {
        if (!s->cb || s->id != id || s->module == skip) continue;
        Client *c = fakeClientAcquire(dbid);
        RedisModuleCtx ctx;
        moduleCtxInit(&ctx, s->module, c);
        effectsHold();
        s->cb(&ctx, ev, sub, data);
        moduleCtxDone(&ctx);
        effectsRelease();
        fakeClientRelease(c);
    }
    walking--;
    sweep();
}

static void serverEvent(int event, int sub, void *p, long a, long b) {
    if (event == SERVER_EVENT_CLIENT_CHANGE && sub == 1) moduleAclClientGone(p);
    if (!evSubs) return;
    switch (event) {
    case SERVER_EVENT_FLUSHDB: {
        RedisModuleFlushInfo fi = {REDISMODULE_FLUSHINFO_VERSION, (int32_t)b, (int32_t)a};
        fire(REDISMODULE_EVENT_FLUSHDB, (uint64_t)sub, &fi, 0, NULL);
        break;
    }
    case SERVER_EVENT_SWAPDB: {
        RedisModuleSwapDbInfo si = {REDISMODULE_SWAPDBINFO_VERSION, (int32_t)a, (int32_t)b};
        fire(REDISMODULE_EVENT_SWAPDB, 0, &si, 0, NULL);
        break;
    }
    case SERVER_EVENT_CRON_LOOP: {
        RedisModuleCronLoop ci = {REDISMODULE_CRON_LOOP_VERSION, (int32_t)a};
        fire(REDISMODULE_EVENT_CRON_LOOP, 0, &ci, 0, NULL);
        break;
    }
    case SERVER_EVENT_SHUTDOWN: fire(REDISMODULE_EVENT_SHUTDOWN, 0, NULL, 0, NULL); break;
    case SERVER_EVENT_PERSISTENCE: fire(REDISMODULE_EVENT_PERSISTENCE, (uint64_t)sub, NULL, 0, NULL); break;
    case SERVER_EVENT_LOADING: fire(REDISMODULE_EVENT_LOADING, (uint64_t)sub, NULL, 0, NULL); break;
    case SERVER_EVENT_REPLICA_CHANGE: fire(REDISMODULE_EVENT_REPLICA_CHANGE, (uint64_t)sub, NULL, 0, NULL); break;
    case SERVER_EVENT_MASTER_LINK: fire(REDISMODULE_EVENT_MASTER_LINK_CHANGE, (uint64_t)sub, NULL, 0, NULL); break;
    case SERVER_EVENT_FORK_CHILD: fire(REDISMODULE_EVENT_FORK_CHILD, (uint64_t)sub, NULL, 0, NULL); break;
    case SERVER_EVENT_REPL_ASYNC_LOAD: fire(REDISMODULE_EVENT_REPL_ASYNC_LOAD, (uint64_t)sub, NULL, 0, NULL); break;
    case SERVER_EVENT_EVENTLOOP: fire(REDISMODULE_EVENT_EVENTLOOP, (uint64_t)sub, NULL, 0, NULL); break;
    case SERVER_EVENT_LOADING_PROGRESS: {
        RedisModuleLoadingProgress lp = {REDISMODULE_LOADING_PROGRESS_VERSION, (int32_t)server.cfg.hz, (int32_t)a};
        fire(REDISMODULE_EVENT_LOADING_PROGRESS, (uint64_t)sub, &lp, 0, NULL);
        break;
    }
    case SERVER_EVENT_ROLE_CHANGED: {
        const ServerReplInfo *r = p;
        RedisModuleReplicationInfo ri;
        memset(&ri, 0, sizeof(ri));
        ri.version = REDISMODULE_REPLICATIONINFO_VERSION;
        ri.master = r->master;
        ri.masterhost = (char *)(uintptr_t)r->host;
        ri.masterport = r->port;
        ri.replid1 = (char *)(uintptr_t)r->replid1;
        ri.replid2 = (char *)(uintptr_t)r->replid2;
        ri.repl1_offset = (uint64_t)r->offset1;
        ri.repl2_offset = (uint64_t)r->offset2;
        fire(REDISMODULE_EVENT_REPLICATION_ROLE_CHANGED, (uint64_t)sub, &ri, 0, NULL);
        break;
    }
    case SERVER_EVENT_CONFIG: {
        RedisModuleConfigChange cc = {REDISMODULE_CONFIGCHANGE_VERSION, (uint32_t)a, (const char **)p};
        fire(REDISMODULE_EVENT_CONFIG, REDISMODULE_SUBEVENT_CONFIG_CHANGE, &cc, 0, NULL);
        break;
    }
    case SERVER_EVENT_CLIENT_CHANGE: {
        Client *c = p;
        RedisModuleClientInfo ci;
        memset(&ci, 0, sizeof(ci));
        ci.version = REDISMODULE_CLIENTINFO_VERSION;
        ci.id = c->id;
        if (c->flags & CLIENT_UNIX_SOCKET) ci.flags |= REDISMODULE_CLIENTINFO_FLAG_UNIXSOCKET;
        if (c->conn && !(c->flags & CLIENT_UNIX_SOCKET)) {
            char addr[128];
            char *colon;
            if (connPeerAddr(c->conn, addr, sizeof(addr)) == 0 && (colon = strrchr(addr, ':'))) {
                size_t n = (size_t)(colon - addr);
                if (n >= sizeof(ci.addr)) n = sizeof(ci.addr) - 1;
                memcpy(ci.addr, addr, n);
                ci.port = (uint16_t)atoi(colon + 1);
            }
        }
        ci.db = (uint16_t)(c->db ? c->db->id : 0);
        fire(REDISMODULE_EVENT_CLIENT_CHANGE, (uint64_t)sub, &ci, 0, NULL);
        break;
    }
    default: break;
    }
}

void moduleFireModuleChange(Module *m, int unloaded) {
    RedisModuleModuleChange mc = {REDISMODULE_MODULE_CHANGE_VERSION, m->name, m->ver};
    fire(REDISMODULE_EVENT_MODULE_CHANGE, unloaded ? REDISMODULE_SUBEVENT_MODULE_UNLOADED : REDISMODULE_SUBEVENT_MODULE_LOADED,
         &mc, 0, unloaded ? m : NULL);
}

void moduleDropSubscriptions(Module *m) {
    for (KsSub *s = ksSubs; s; s = s->next)
        if (s->module == m) s->dead = 1;
    for (EvSub *s = evSubs; s; s = s->next)
        if (s->module == m) s->cb = NULL;
    sweep();
}

#define API(fn) {"RedisModule_" #fn, (void *)(uintptr_t)RM_##fn}
const ApiEntry moduleEventsApi[] = {API(SubscribeToKeyspaceEvents), API(SubscribeToServerEvent),
                                    API(IsSubEventSupported), {NULL, NULL}};
