/* blocking.c -- test module: blocked clients, thread-safe contexts and
 * the GIL, Yield (module name "blk").
 *
 *   blk.pop key timeout_ms     BLPOP-like: pops the list's head, or blocks
 *                              on the key (BlockClientOnKeys) until a push;
 *                              timeout: "TIMEOUT" from the timeout callback
 *   blk.waitkey key timeout_ms blocks on key; served (reply "served:<v>")
 *                              only when the key is a string, else stays
 *                              blocked (reply callback returns ERR)
 *   blk.signal key             SignalKeyAsReady
 *   blk.unblockkeys            UnblockClient on every waiter of blk.waitkey
 *   blk.thread ms value [to]   a thread sleeps ms, then UnblockClient with
 *                              value as private data: the reply callback
 *                              replies it; timeout (to ms): "TIMEDOUT"
 *   blk.threadreply ms         a thread replies [INCR blk:n, "done"] itself
 *                              through a thread-safe context under the GIL
 *   blk.park [nt]              blocks with no timeout until blk.release;
 *                              nt: no timeout callback (CLIENT UNBLOCK: 0)
 *   blk.release value          UnblockClient of every parked client (their
 *                              reply: value); replies how many
 *   blk.releasethread value    the same, from another thread
 *   blk.flags                  GetContextFlags & (LUA|MULTI|DENY_BLOCKING)
 *   blk.stats                  [privdata freed, disconnect callbacks,
 *                               freed while disconnected, parked]
 *   blk.detached               a detached thread-safe context: a thread
 *                              locks, SETs blk:detached, unlocks; the
 *                              command waits for it (join) and replies OK
 *   blk.trylock                a thread's TryLock loop until OK, INCR
 *                              blk:try, then the command replies its value
 *   blk.busy ms flags [reply]  runs ms, calling Yield (flags: 0 none,
 *                              1 clients) every millisecond; replies OK
 *   blk.nogil                  a thread calls RedisModule_Call without the
 *                              GIL (the server must stop: a test of the
 *                              check; never run against Redis)
 *   blk.measure ms             a thread measures ms of background time,
 *                              then unblocks: reply "measured" */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "redismodule.h"

static long long freedPriv, disconnects, freedGone;
static void forgetKeyWaiter(RedisModuleBlockedClient *bc);

#define PARK_MAX 64
static RedisModuleBlockedClient *parked[PARK_MAX];
static int nparked;
static RedisModuleBlockedClient *keyWaiters[PARK_MAX];
static int nkeyWaiters;

static void sleepMs(long long ms) {
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static void freePriv(RedisModuleCtx *ctx, void *p) {
    freedPriv++;
    if (RedisModule_BlockedClientDisconnected(ctx)) freedGone++;
    RedisModule_Free(p);
}

/* ---- blk.pop ---- */

static int popReply(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    (void)argv, (void)argc;
    if (!RedisModule_IsBlockedReplyRequest(ctx)) return REDISMODULE_ERR;
    RedisModuleString *key = RedisModule_GetBlockedClientReadyKey(ctx);
    RedisModuleCallReply *r = RedisModule_Call(ctx, "LPOP", "!s", key);
    if (!r || RedisModule_CallReplyType(r) != REDISMODULE_REPLY_STRING) {
        if (r) RedisModule_FreeCallReply(r);
        return REDISMODULE_ERR;
    }
    RedisModule_ReplyWithArray(ctx, 2);
    RedisModule_ReplyWithString(ctx, key);
    RedisModule_ReplyWithCallReply(ctx, r);
    RedisModule_FreeCallReply(r);
    return REDISMODULE_OK;
}

static int popTimeout(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    (void)argv, (void)argc;
    if (!RedisModule_IsBlockedTimeoutRequest(ctx)) return RedisModule_ReplyWithError(ctx, "ERR not a timeout");
    long long *n = RedisModule_GetBlockedClientPrivateData(ctx);
    RedisModule_ReplyWithArray(ctx, 2);
    RedisModule_ReplyWithSimpleString(ctx, "TIMEOUT");
    return RedisModule_ReplyWithLongLong(ctx, n ? *n : -1);
}

static int cmdPop(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    long long to;
    if (argc != 3) return RedisModule_WrongArity(ctx);
    if (RedisModule_StringToLongLong(argv[2], &to) != REDISMODULE_OK || to < 0)
        return RedisModule_ReplyWithError(ctx, "ERR invalid timeout");
    RedisModuleCallReply *r = RedisModule_Call(ctx, "LPOP", "!s", argv[1]);
    if (r && RedisModule_CallReplyType(r) == REDISMODULE_REPLY_STRING) {
        RedisModule_ReplyWithArray(ctx, 2);
        RedisModule_ReplyWithString(ctx, argv[1]);
        RedisModule_ReplyWithCallReply(ctx, r);
        RedisModule_FreeCallReply(r);
        return REDISMODULE_OK;
    }
    if (r) RedisModule_FreeCallReply(r);
    long long *n = RedisModule_Alloc(sizeof(*n));
    *n = to;
    RedisModule_BlockClientOnKeys(ctx, popReply, popTimeout, freePriv, to, &argv[1], 1, n);
    return REDISMODULE_OK;
}

/* ---- blk.waitkey / blk.signal / blk.unblockkeys ---- */

static void forgetKeyWaiter(RedisModuleBlockedClient *bc) {
    for (int i = 0; i < nkeyWaiters; i++)
        if (keyWaiters[i] == bc) keyWaiters[i] = keyWaiters[--nkeyWaiters];
}

/* The handle of a waiter on keys goes with its client. */
static void onKeyDisconnect(RedisModuleCtx *ctx, RedisModuleBlockedClient *bc) {
    (void)ctx;
    disconnects++;
    forgetKeyWaiter(bc);
}

static int waitReply(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    (void)argv, (void)argc;
    RedisModuleString *key = RedisModule_GetBlockedClientReadyKey(ctx);
    RedisModuleKey *k = RedisModule_OpenKey(ctx, key, REDISMODULE_READ);
    if (RedisModule_KeyType(k) != REDISMODULE_KEYTYPE_STRING) {
        RedisModule_CloseKey(k);
        return REDISMODULE_ERR;
    }
    size_t len;
    const char *v = RedisModule_StringDMA(k, &len, REDISMODULE_READ);
    RedisModuleString *s = RedisModule_CreateStringPrintf(ctx, "served:%.*s", (int)len, v);
    RedisModule_CloseKey(k);
    RedisModule_ReplyWithString(ctx, s);
    RedisModule_FreeString(ctx, s);
    forgetKeyWaiter(RedisModule_GetBlockedClientHandle(ctx));
    return REDISMODULE_OK;
}

static int waitTimeout(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    (void)argv, (void)argc;
    forgetKeyWaiter(RedisModule_GetBlockedClientHandle(ctx));
    return RedisModule_ReplyWithSimpleString(ctx, "WAIT-TIMEOUT");
}

static int cmdWaitKey(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    long long to;
    if (argc != 3) return RedisModule_WrongArity(ctx);
    if (RedisModule_StringToLongLong(argv[2], &to) != REDISMODULE_OK || to < 0)
        return RedisModule_ReplyWithError(ctx, "ERR invalid timeout");
    if (nkeyWaiters == PARK_MAX) return RedisModule_ReplyWithError(ctx, "ERR too many");
    RedisModuleBlockedClient *bc =
        RedisModule_BlockClientOnKeys(ctx, waitReply, waitTimeout, NULL, to, &argv[1], 1, NULL);
    if (!(RedisModule_GetContextFlags(ctx) & REDISMODULE_CTX_FLAGS_DENY_BLOCKING)) {
        keyWaiters[nkeyWaiters++] = bc;
        RedisModule_SetDisconnectCallback(bc, onKeyDisconnect);
    }
    return REDISMODULE_OK;
}

static int cmdSignal(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    if (argc != 2) return RedisModule_WrongArity(ctx);
    RedisModule_SignalKeyAsReady(ctx, argv[1]);
    return RedisModule_ReplyWithSimpleString(ctx, "OK");
}

static int cmdUnblockKeys(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    (void)argv;
    if (argc != 1) return RedisModule_WrongArity(ctx);
    int n = 0;
    while (nkeyWaiters > 0) {
        RedisModuleBlockedClient *bc = keyWaiters[--nkeyWaiters];
        if (RedisModule_UnblockClient(bc, NULL) == REDISMODULE_OK) n++;
    }
    return RedisModule_ReplyWithLongLong(ctx, n);
}

/* ---- blk.thread / blk.threadreply / blk.measure ---- */

static int privReply(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    (void)argv, (void)argc;
    if (!RedisModule_IsBlockedReplyRequest(ctx)) return RedisModule_ReplyWithError(ctx, "ERR not a reply");
    char *v = RedisModule_GetBlockedClientPrivateData(ctx);
    return RedisModule_ReplyWithCString(ctx, v ? v : "(none)");
}

static int privTimeout(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    (void)argv, (void)argc;
    return RedisModule_ReplyWithSimpleString(ctx, "TIMEDOUT");
}

typedef struct Job {
    RedisModuleBlockedClient *bc;
    long long ms;
    char *value;
    int measure;
} Job;

static void *threadMain(void *arg) {
    Job *j = arg;
    if (j->measure) RedisModule_BlockedClientMeasureTimeStart(j->bc);
    sleepMs(j->ms);
    if (j->measure) RedisModule_BlockedClientMeasureTimeEnd(j->bc);
    RedisModule_UnblockClient(j->bc, j->value);
    RedisModule_Free(j);
    return NULL;
}

static int startThread(void *(*fn)(void *), void *arg) {
    pthread_t t;
    if (pthread_create(&t, NULL, fn, arg) != 0) return -1;
    pthread_detach(t);
    return 0;
}

static int cmdThread(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    long long ms, to = 0;
    if (argc != 3 && argc != 4) return RedisModule_WrongArity(ctx);
    if (RedisModule_StringToLongLong(argv[1], &ms) != REDISMODULE_OK ||
        (argc == 4 && RedisModule_StringToLongLong(argv[3], &to) != REDISMODULE_OK))
        return RedisModule_ReplyWithError(ctx, "ERR invalid number");
    RedisModuleBlockedClient *bc = RedisModule_BlockClient(ctx, privReply, privTimeout, freePriv, to);
    Job *j = RedisModule_Alloc(sizeof(*j));
    j->bc = bc;
    j->ms = ms;
    j->measure = 0;
    size_t len;
    const char *v = RedisModule_StringPtrLen(argv[2], &len);
    j->value = RedisModule_Alloc(len + 1);
    memcpy(j->value, v, len + 1);
    if (startThread(threadMain, j) != 0) {
        RedisModule_AbortBlock(bc);
        return RedisModule_ReplyWithError(ctx, "ERR no thread");
    }
    return REDISMODULE_OK;
}

static int cmdMeasure(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    long long ms;
    if (argc != 2 || RedisModule_StringToLongLong(argv[1], &ms) != REDISMODULE_OK)
        return RedisModule_WrongArity(ctx);
    RedisModuleBlockedClient *bc = RedisModule_BlockClient(ctx, privReply, NULL, freePriv, 0);
    Job *j = RedisModule_Alloc(sizeof(*j));
    j->bc = bc;
    j->ms = ms;
    j->measure = 1;
    j->value = RedisModule_Alloc(9);
    memcpy(j->value, "measured", 9);
    startThread(threadMain, j);
    return REDISMODULE_OK;
}

static void *threadReplyMain(void *arg) {
    Job *j = arg;
    sleepMs(j->ms);
    RedisModuleCtx *ts = RedisModule_GetThreadSafeContext(j->bc);
    RedisModule_ThreadSafeContextLock(ts);
    RedisModuleCallReply *r = RedisModule_Call(ts, "INCR", "c", "blk:n");
    long long n = RedisModule_CallReplyInteger(r);
    RedisModule_FreeCallReply(r);
    RedisModule_ThreadSafeContextUnlock(ts);
    RedisModule_ReplyWithArray(ts, 2);
    RedisModule_ReplyWithLongLong(ts, n);
    RedisModule_ReplyWithSimpleString(ts, "done");
    RedisModule_FreeThreadSafeContext(ts);
    RedisModule_UnblockClient(j->bc, NULL);
    RedisModule_Free(j);
    return NULL;
}

static void *threadErrMain(void *arg) {
    Job *j = arg;
    RedisModuleCtx *ts = RedisModule_GetThreadSafeContext(j->bc);
    RedisModule_ReplyWithArray(ts, 2);
    RedisModule_ReplyWithError(ts, "THREADERR from a thread");
    RedisModule_ReplyWithError(ts, "plain error");
    RedisModule_FreeThreadSafeContext(ts);
    RedisModule_UnblockClient(j->bc, NULL);
    RedisModule_Free(j);
    return NULL;
}

/* blk.threaderr: a thread replies an array of two errors. */
static int cmdThreadErr(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    (void)argv, (void)argc;
    Job *j = RedisModule_Alloc(sizeof(*j));
    j->bc = RedisModule_BlockClient(ctx, NULL, NULL, NULL, 0);
    startThread(threadErrMain, j);
    return REDISMODULE_OK;
}

static int cmdThreadReply(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    long long ms;
    if (argc != 2 || RedisModule_StringToLongLong(argv[1], &ms) != REDISMODULE_OK)
        return RedisModule_WrongArity(ctx);
    RedisModuleBlockedClient *bc = RedisModule_BlockClient(ctx, NULL, NULL, NULL, 0);
    Job *j = RedisModule_Alloc(sizeof(*j));
    j->bc = bc;
    j->ms = ms;
    j->measure = 0;
    j->value = NULL;
    startThread(threadReplyMain, j);
    return REDISMODULE_OK;
}

/* ---- blk.park / blk.release ---- */

static void forgetParked(RedisModuleBlockedClient *bc) {
    for (int i = 0; i < nparked; i++)
        if (parked[i] == bc) parked[i] = parked[--nparked];
}

static void onDisconnect(RedisModuleCtx *ctx, RedisModuleBlockedClient *bc) {
    (void)ctx;
    disconnects++;
    forgetParked(bc);
    RedisModule_UnblockClient(bc, NULL);
}

static int cmdPark(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    (void)argv;
    if (argc > 2) return RedisModule_WrongArity(ctx);
    if (nparked == PARK_MAX) return RedisModule_ReplyWithError(ctx, "ERR too many");
    RedisModuleBlockedClient *bc = RedisModule_BlockClient(ctx, privReply, argc == 2 ? NULL : privTimeout, freePriv, 0);
    RedisModule_SetDisconnectCallback(bc, onDisconnect);
    parked[nparked++] = bc;
    return REDISMODULE_OK;
}

static int releaseAll(const char *v, size_t len) {
    int n = 0;
    while (nparked > 0) {
        RedisModuleBlockedClient *bc = parked[--nparked];
        char *p = RedisModule_Alloc(len + 1);
        memcpy(p, v, len);
        p[len] = 0;
        RedisModule_UnblockClient(bc, p);
        n++;
    }
    return n;
}

static int cmdRelease(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    if (argc != 2) return RedisModule_WrongArity(ctx);
    size_t len;
    const char *v = RedisModule_StringPtrLen(argv[1], &len);
    return RedisModule_ReplyWithLongLong(ctx, releaseAll(v, len));
}

typedef struct Rel {
    char *v;
    size_t len;
    RedisModuleBlockedClient *parked[PARK_MAX];
    int n;
} Rel;

static void *releaseMain(void *arg) {
    Rel *r = arg;
    for (int i = 0; i < r->n; i++) {
        char *p = RedisModule_Alloc(r->len + 1);
        memcpy(p, r->v, r->len + 1);
        RedisModule_UnblockClient(r->parked[i], p);
    }
    RedisModule_Free(r->v);
    RedisModule_Free(r);
    return NULL;
}

/* The handles are taken on the main thread; the thread only unblocks. */
static int cmdReleaseThread(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    if (argc != 2) return RedisModule_WrongArity(ctx);
    Rel *r = RedisModule_Alloc(sizeof(*r));
    const char *v = RedisModule_StringPtrLen(argv[1], &r->len);
    r->v = RedisModule_Alloc(r->len + 1);
    memcpy(r->v, v, r->len + 1);
    r->n = nparked;
    memcpy(r->parked, parked, sizeof(parked[0]) * (size_t)nparked);
    nparked = 0;
    int n = r->n;
    startThread(releaseMain, r);
    return RedisModule_ReplyWithLongLong(ctx, n);
}

/* ---- misc ---- */

static int cmdFlags(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    (void)argv, (void)argc;
    int f = RedisModule_GetContextFlags(ctx);
    return RedisModule_ReplyWithLongLong(
        ctx, f & (REDISMODULE_CTX_FLAGS_LUA | REDISMODULE_CTX_FLAGS_MULTI | REDISMODULE_CTX_FLAGS_DENY_BLOCKING));
}

static int cmdStats(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    (void)argv, (void)argc;
    RedisModule_ReplyWithArray(ctx, 4);
    RedisModule_ReplyWithLongLong(ctx, freedPriv);
    RedisModule_ReplyWithLongLong(ctx, disconnects);
    RedisModule_ReplyWithLongLong(ctx, freedGone);
    return RedisModule_ReplyWithLongLong(ctx, nparked);
}

static RedisModuleCtx *detachedCtx;

static void *detachedMain(void *arg) {
    (void)arg;
    RedisModule_ThreadSafeContextLock(detachedCtx);
    RedisModuleCallReply *r = RedisModule_Call(detachedCtx, "SET", "cc", "blk:detached", "yes");
    RedisModule_FreeCallReply(r);
    RedisModule_ThreadSafeContextUnlock(detachedCtx);
    return NULL;
}

/* The thread runs while the command waits for it: the command must not
 * hold the GIL meanwhile, so it gives the thread a later turn: it starts
 * it and blocks itself until the thread is done (a second thread joins). */
static void *joinMain(void *arg) {
    Job *j = arg;
    pthread_t t;
    pthread_create(&t, NULL, detachedMain, NULL);
    pthread_join(t, NULL);
    RedisModule_UnblockClient(j->bc, NULL);
    RedisModule_Free(j);
    return NULL;
}

static int okReply(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    (void)argv, (void)argc;
    RedisModuleCallReply *r = RedisModule_Call(ctx, "GET", "c", "blk:detached");
    RedisModule_ReplyWithCallReply(ctx, r);
    RedisModule_FreeCallReply(r);
    return REDISMODULE_OK;
}

static int cmdDetached(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    (void)argv, (void)argc;
    Job *j = RedisModule_Alloc(sizeof(*j));
    j->bc = RedisModule_BlockClient(ctx, okReply, NULL, NULL, 0);
    startThread(joinMain, j);
    return REDISMODULE_OK;
}

static void *tryMain(void *arg) {
    Job *j = arg;
    RedisModuleCtx *ts = RedisModule_GetThreadSafeContext(j->bc);
    while (RedisModule_ThreadSafeContextTryLock(ts) != REDISMODULE_OK) sleepMs(1);
    RedisModuleCallReply *r = RedisModule_Call(ts, "INCR", "c", "blk:try");
    long long n = RedisModule_CallReplyInteger(r);
    RedisModule_FreeCallReply(r);
    RedisModule_ThreadSafeContextUnlock(ts);
    RedisModule_ReplyWithLongLong(ts, n);
    RedisModule_FreeThreadSafeContext(ts);
    RedisModule_UnblockClient(j->bc, NULL);
    RedisModule_Free(j);
    return NULL;
}

static int cmdTryLock(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    (void)argv, (void)argc;
    Job *j = RedisModule_Alloc(sizeof(*j));
    j->bc = RedisModule_BlockClient(ctx, NULL, NULL, NULL, 0);
    startThread(tryMain, j);
    return REDISMODULE_OK;
}

static int cmdBusy(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    long long ms, flags;
    if (argc != 3 && argc != 4) return RedisModule_WrongArity(ctx);
    if (RedisModule_StringToLongLong(argv[1], &ms) != REDISMODULE_OK ||
        RedisModule_StringToLongLong(argv[2], &flags) != REDISMODULE_OK)
        return RedisModule_ReplyWithError(ctx, "ERR invalid number");
    const char *reply = argc == 4 ? RedisModule_StringPtrLen(argv[3], NULL) : NULL;
    long long end = RedisModule_Milliseconds() + ms;
    while (RedisModule_Milliseconds() < end) {
        RedisModule_Yield(ctx, flags ? REDISMODULE_YIELD_FLAG_CLIENTS : REDISMODULE_YIELD_FLAG_NONE, reply);
        sleepMs(1);
    }
    return RedisModule_ReplyWithSimpleString(ctx, "OK");
}

static void *noGilMain(void *arg) {
    RedisModuleCtx *ts = arg;
    RedisModuleCallReply *r = RedisModule_Call(ts, "PING", "");
    if (r) RedisModule_FreeCallReply(r);
    return NULL;
}

static int cmdNoGil(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    (void)argv, (void)argc;
    RedisModuleCtx *ts = RedisModule_GetDetachedThreadSafeContext(ctx);
    startThread(noGilMain, ts);
    return RedisModule_ReplyWithSimpleString(ctx, "started");
}

static int cmdAvoid(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    (void)argv, (void)argc;
    return RedisModule_ReplyWithLongLong(ctx, RedisModule_AvoidReplicaTraffic());
}

int RedisModule_OnLoad(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    (void)argv, (void)argc;
    if (RedisModule_Init(ctx, "blk", 1, REDISMODULE_APIVER_1) == REDISMODULE_ERR) return REDISMODULE_ERR;
    struct {
        const char *name;
        RedisModuleCmdFunc fn;
        const char *flags;
        int first, last, step;
    } cmds[] = {
        {"blk.pop", cmdPop, "write", 1, 1, 1},
        {"blk.waitkey", cmdWaitKey, "readonly", 1, 1, 1},
        {"blk.signal", cmdSignal, "readonly", 1, 1, 1},
        {"blk.unblockkeys", cmdUnblockKeys, "readonly", 0, 0, 0},
        {"blk.thread", cmdThread, "readonly", 0, 0, 0},
        {"blk.threadreply", cmdThreadReply, "write", 0, 0, 0},
        {"blk.threaderr", cmdThreadErr, "readonly", 0, 0, 0},
        {"blk.measure", cmdMeasure, "readonly", 0, 0, 0},
        {"blk.park", cmdPark, "readonly", 0, 0, 0},
        {"blk.release", cmdRelease, "readonly", 0, 0, 0},
        {"blk.releasethread", cmdReleaseThread, "readonly", 0, 0, 0},
        {"blk.flags", cmdFlags, "readonly", 0, 0, 0},
        {"blk.stats", cmdStats, "readonly", 0, 0, 0},
        {"blk.detached", cmdDetached, "write", 0, 0, 0},
        {"blk.trylock", cmdTryLock, "write", 0, 0, 0},
        {"blk.busy", cmdBusy, "readonly", 0, 0, 0},
        {"blk.nogil", cmdNoGil, "readonly", 0, 0, 0},
        {"blk.avoid", cmdAvoid, "readonly", 0, 0, 0},
    };
    for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
        if (RedisModule_CreateCommand(ctx, cmds[i].name, cmds[i].fn, cmds[i].flags, cmds[i].first, cmds[i].last,
                                      cmds[i].step) == REDISMODULE_ERR)
            return REDISMODULE_ERR;
    detachedCtx = RedisModule_GetDetachedThreadSafeContext(ctx);
    return REDISMODULE_OK;
}

int RedisModule_OnUnload(RedisModuleCtx *ctx) {
    (void)ctx;
    if (detachedCtx) RedisModule_FreeThreadSafeContext(detachedCtx);
    detachedCtx = NULL;
    return REDISMODULE_OK;
}
