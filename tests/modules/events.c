/* events.c -- test module: keyspace-notification subscriptions and server
 * events (SubscribeToKeyspaceEvents, SubscribeToServerEvent,
 * IsSubEventSupported).
 *
 * Every event is appended to a log in the module's memory:
 *   ks:<type>:<event>:<key>:db<selected db>   first keyspace subscriber
 *   ks2:<type>:<event>:<key>                  second one (STRING class only)
 *   flush:<sub>:<dbnum>:<sync>:<dbsize of db 0>
 *   swap:<first>:<second>
 *   mod:<sub>:<name>:<ver>
 *   client:<sub>:<has port>
 *   config:<sub>:<count>:<name>...        (CONFIG SET)
 * The first subscriber, on "set" of a key starting "trig:", INCRs
 * "counter" through Call with "!" (the INCR's events reach ks2 but not
 * itself).  CronLoop events are counted, not logged; Shutdown writes
 * "events module: shutdown event seen" to the server's log.
 *
 *   ev.log           the log (then cleared)
 *   ev.cron          1 when a CronLoop event with hz > 0 came
 *   ev.unsub name    unsubscribes from flushdb|client|module
 *   ev.supported     IsSubEventSupported of FlushDB 0, 1, 2 and an event
 *                    id past the last (4 integers) */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "redismodule.h"

#define LOG_MAX 256
static char *logs[LOG_MAX];
static int nlogs;
static int cronSeen;

static void logf_(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void logf_(const char *fmt, ...) {
    if (nlogs == LOG_MAX) return;
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    logs[nlogs++] = RedisModule_Strdup(buf);
}

static int onKey(RedisModuleCtx *ctx, int type, const char *event, RedisModuleString *key) {
    size_t len;
    const char *k = RedisModule_StringPtrLen(key, &len);
    logf_("ks:%d:%s:%.*s:db%d", type, event, (int)len, k, RedisModule_GetSelectedDb(ctx));
    if (!strcmp(event, "set") && len > 5 && !memcmp(k, "trig:", 5)) {
        RedisModuleCallReply *r = RedisModule_Call(ctx, "INCR", "c!", "counter");
        if (r) RedisModule_FreeCallReply(r);
    }
    return REDISMODULE_OK;
}

static int onKey2(RedisModuleCtx *ctx, int type, const char *event, RedisModuleString *key) {
    (void)ctx;
    size_t len;
    const char *k = RedisModule_StringPtrLen(key, &len);
    logf_("ks2:%d:%s:%.*s", type, event, (int)len, k);
    return REDISMODULE_OK;
}

static void onFlush(RedisModuleCtx *ctx, RedisModuleEvent e, uint64_t sub, void *data) {
    RedisModuleFlushInfo *fi = data;
    logf_("flush:%d:%d:%d:%llu:v%d:e%d", (int)sub, (int)fi->dbnum, (int)fi->sync, RedisModule_DbSize(ctx),
          (int)fi->version, (int)e.id);
}

static void onSwap(RedisModuleCtx *ctx, RedisModuleEvent e, uint64_t sub, void *data) {
    (void)ctx, (void)e;
    RedisModuleSwapDbInfo *si = data;
    logf_("swap:%d:%d:%d", (int)sub, (int)si->dbnum_first, (int)si->dbnum_second);
}

static void onModule(RedisModuleCtx *ctx, RedisModuleEvent e, uint64_t sub, void *data) {
    (void)ctx, (void)e;
    RedisModuleModuleChange *mc = data;
    logf_("mod:%d:%s:%d", (int)sub, mc->module_name, (int)mc->module_version);
}

static void onClient(RedisModuleCtx *ctx, RedisModuleEvent e, uint64_t sub, void *data) {
    (void)ctx, (void)e;
    RedisModuleClientInfo *ci = data;
    logf_("client:%d:%d:%d", (int)sub, ci->port != 0, ci->id > 0);
}

static void onConfig(RedisModuleCtx *ctx, RedisModuleEvent e, uint64_t sub, void *data) {
    (void)ctx, (void)e;
    RedisModuleConfigChange *cc = data;
    char buf[400];
    int n = snprintf(buf, sizeof(buf), "config:%d:%u", (int)sub, cc->num_changes);
    for (uint32_t i = 0; i < cc->num_changes && n < (int)sizeof(buf) - 1; i++)
        n += snprintf(buf + n, sizeof(buf) - (size_t)n, ":%s", cc->config_names[i]);
    logf_("%s", buf);
}

static void onShutdown(RedisModuleCtx *ctx, RedisModuleEvent e, uint64_t sub, void *data) {
    (void)e, (void)sub, (void)data;
    RedisModule_Log(ctx, "warning", "events module: shutdown event seen");
}

static void onCron(RedisModuleCtx *ctx, RedisModuleEvent e, uint64_t sub, void *data) {
    (void)ctx, (void)e, (void)sub;
    RedisModuleCronLoop *cl = data;
    if (cl->hz > 0) cronSeen = 1;
}

static int cmdLog(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    (void)argv;
    if (argc != 1) return RedisModule_WrongArity(ctx);
    int n = nlogs;
    RedisModule_ReplyWithArray(ctx, n);
    for (int i = 0; i < n; i++) {
        RedisModule_ReplyWithSimpleString(ctx, logs[i]);
        RedisModule_Free(logs[i]);
    }
    nlogs = 0;
    return REDISMODULE_OK;
}

static int cmdCron(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    (void)argv, (void)argc;
    return RedisModule_ReplyWithLongLong(ctx, cronSeen);
}

static int cmdUnsub(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    if (argc != 2) return RedisModule_WrongArity(ctx);
    const char *w = RedisModule_StringPtrLen(argv[1], NULL);
    RedisModuleEvent e = !strcmp(w, "flushdb") ? RedisModuleEvent_FlushDB
                         : !strcmp(w, "client") ? RedisModuleEvent_ClientChange
                                                : RedisModuleEvent_ModuleChange;
    return RedisModule_ReplyWithLongLong(ctx, RedisModule_SubscribeToServerEvent(ctx, e, NULL));
}

static int cmdSupported(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    (void)argv, (void)argc;
    RedisModuleEvent past = {_REDISMODULE_EVENT_NEXT + 5, 1};
    RedisModule_ReplyWithArray(ctx, 4);
    RedisModule_ReplyWithLongLong(ctx, RedisModule_IsSubEventSupported(RedisModuleEvent_FlushDB, 0));
    RedisModule_ReplyWithLongLong(ctx, RedisModule_IsSubEventSupported(RedisModuleEvent_FlushDB, 1));
    RedisModule_ReplyWithLongLong(ctx, RedisModule_IsSubEventSupported(RedisModuleEvent_FlushDB, 2));
    return RedisModule_ReplyWithLongLong(ctx, RedisModule_IsSubEventSupported(past, 0));
}

int RedisModule_OnLoad(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    (void)argv, (void)argc;
    if (RedisModule_Init(ctx, "events", 3, REDISMODULE_APIVER_1) == REDISMODULE_ERR) return REDISMODULE_ERR;
    int ks = REDISMODULE_NOTIFY_GENERIC | REDISMODULE_NOTIFY_STRING | REDISMODULE_NOTIFY_HASH |
             REDISMODULE_NOTIFY_EXPIRED | REDISMODULE_NOTIFY_KEY_MISS | REDISMODULE_NOTIFY_NEW |
             REDISMODULE_NOTIFY_KEYSPACE;
    RedisModuleEvent past = {_REDISMODULE_EVENT_NEXT, 1};
    if (RedisModule_SubscribeToKeyspaceEvents(ctx, ks, onKey) != REDISMODULE_OK ||
        RedisModule_SubscribeToKeyspaceEvents(ctx, REDISMODULE_NOTIFY_STRING, onKey2) != REDISMODULE_OK ||
        RedisModule_SubscribeToServerEvent(ctx, RedisModuleEvent_FlushDB, onFlush) != REDISMODULE_OK ||
        RedisModule_SubscribeToServerEvent(ctx, RedisModuleEvent_SwapDB, onSwap) != REDISMODULE_OK ||
        RedisModule_SubscribeToServerEvent(ctx, RedisModuleEvent_ModuleChange, onModule) != REDISMODULE_OK ||
        RedisModule_SubscribeToServerEvent(ctx, RedisModuleEvent_ClientChange, onClient) != REDISMODULE_OK ||
        RedisModule_SubscribeToServerEvent(ctx, RedisModuleEvent_CronLoop, onCron) != REDISMODULE_OK ||
        RedisModule_SubscribeToServerEvent(ctx, RedisModuleEvent_Shutdown, onShutdown) != REDISMODULE_OK ||
        RedisModule_SubscribeToServerEvent(ctx, RedisModuleEvent_Config, onConfig) != REDISMODULE_OK ||
        RedisModule_SubscribeToServerEvent(ctx, past, onCron) != REDISMODULE_ERR)
        return REDISMODULE_ERR;
    if (RedisModule_CreateCommand(ctx, "ev.log", cmdLog, "readonly", 0, 0, 0) == REDISMODULE_ERR ||
        RedisModule_CreateCommand(ctx, "ev.cron", cmdCron, "readonly", 0, 0, 0) == REDISMODULE_ERR ||
        RedisModule_CreateCommand(ctx, "ev.unsub", cmdUnsub, "readonly", 0, 0, 0) == REDISMODULE_ERR ||
        RedisModule_CreateCommand(ctx, "ev.supported", cmdSupported, "readonly", 0, 0, 0) == REDISMODULE_ERR)
        return REDISMODULE_ERR;
    return REDISMODULE_OK;
}

int RedisModule_OnUnload(RedisModuleCtx *ctx) {
    (void)ctx;
    for (int i = 0; i < nlogs; i++) RedisModule_Free(logs[i]);
    nlogs = 0;
    return REDISMODULE_OK;
}
