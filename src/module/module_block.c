/* module_block.c -- blocked clients, thread-safe contexts and the GIL,
 * RedisModule_Yield (Redis 7.0's semantics).
 *
 * Blocked clients.  A RedisModuleBlockedClient (bc) is made by BlockClient
 * or BlockClientOnKeys on the main thread.  Its client is blocked through
 * types/blocking.c (blockForKeys: no keys for BlockClient), so timeouts,
 * INFO blocked_clients, CLIENT UNBLOCK and a client freed while blocked go
 * the way every blocked client goes; the module's part is hooked in:
 *   - the serve callback (keys): the key must exist (Redis 7.0 serves a
 *     module waiter only then); the reply callback runs with the ready
 *     key and either replies (REDISMODULE_OK: served, unblocked) or not
 *     (stays blocked);
 *   - the timeout handler: the timeout callback replies (also for CLIENT
 *     UNBLOCK TIMEOUT; without a timeout callback CLIENT UNBLOCK answers 0);
 *   - the privFree of the block state (bcReleased): runs whenever the
 *     client leaves the blocked state; the disconnect callback runs then
 *     unless the module's own path (reply, timeout, serve) cleared it; a
 *     bc on keys is finished there unless UnblockClient queued it.
 * UnblockClient (any thread) queues the bc (mutex) and writes a byte to
 * the wake-up pipe; the main thread takes the queue before it sleeps
 * (a before-sleep hook): the reply callback runs (not for a bc on keys),
 * the replies a thread-safe context made go after it, the client is
 * unblocked, then the private data is freed (free_privdata) and the bc.
 * A bc whose client is gone (timeout, disconnect) or that never blocked
 * (MULTI, Lua: the command got an error) is only freed.
 *
 * Invariants:
 *  - bc->client is the blocked client while it is blocked, else NULL;
 *  - a bc is freed exactly once, on the main thread: by the queue after
 *    UnblockClient, or by bcReleased for a bc on keys never queued;
 *  - bc->replyClient (a fake client made on the main thread) collects what
 *    thread-safe contexts of the bc reply; it lives as long as the bc.
 *
 * The GIL is a mutex.  Until a module thread first asks for it nothing is
 * locked anywhere (no cost on the event loop); the first request (a byte
 * on the pipe) makes the main thread take it and install the loop's
 * sleep gate, which releases it just before each poll and takes it back
 * right after.  So a thread holding it runs while the main thread sleeps.
 * moduleGilHeld (thread-local) is 1 on the main thread and on a thread
 * between Lock and Unlock; API functions that touch server state check
 * it (moduleAssertGil) and end the server when it is 0. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/crash.h"
#include "core/dispatch.h"
#include "core/event.h"
#include "core/log.h"
#include "core/net.h"
#include "core/server.h"
#include "db/object.h"
#include "ds/alloc.h"
#include "ds/util.h"
#include "module/module_int.h"
#include "persist/persist.h"
#include "script/script.h"
#include "server/pause.h"
#include "types/blocking.h"

struct RedisModuleBlockedClient {
    Client *client; /* while blocked, else NULL */
    Module *module;
    RedisModuleCmdFunc replyCb, timeoutCb;
    void (*freePriv)(RedisModuleCtx *, void *);
    void (*disconnectCb)(RedisModuleCtx *, RedisModuleBlockedClient *);
    void *privdata;
    Client *replyClient; /* thread-safe contexts' replies */
    sds *errors;         /* the errors among them, counted on delivery */
    int nerrors;
    int onKeys;
    _Atomic int unblocked; /* UnblockClient queued it */
    int served;            /* a key served it (on keys) */
    long long bgStart, bgUs; /* BlockedClientMeasureTimeStart/End */
    RedisModuleBlockedClient *nextQueued;
    RedisModuleBlockedClient *prevLive, *nextLive; /* main thread's list */
};

#define CTX_BLK_OWN_CLIENT (1 << 8)    /* a thread-safe context's own fake client */
#define CTX_BLK_DISCONNECTED (1 << 9)  /* free_privdata: the client was gone */

_Thread_local int moduleGilHeld;
static _Thread_local int isMainThread;

static pthread_mutex_t gil = PTHREAD_MUTEX_INITIALIZER;
static _Atomic int gilActive, gilWanted;

static pthread_mutex_t queueLock = PTHREAD_MUTEX_INITIALIZER;
static RedisModuleBlockedClient *queueHead, *queueTail;
static Client **freeLater; /* thread-safe contexts' clients freed off the main thread */
static size_t freeLaterCount, freeLaterCap;
static _Atomic int queuePending;

static int wakeFds[2] = {-1, -1};
static int started;
static RedisModuleBlockedClient *liveList;

/* ------------------------------------------------------------------ */
/* the GIL                                                             */
/* ------------------------------------------------------------------ */

void moduleAssertGilSlow(const char *fn) {
    serverPanic("Module API %s called from a thread that does not hold the GIL "
                "(RedisModule_ThreadSafeContextLock)",
                fn);
}

static void wake(void) {
    if (wakeFds[1] == -1) return;
    ssize_t n = write(wakeFds[1], "x", 1);
    (void)n; /* EAGAIN: a wake-up is pending already */
}

static void gilGate(EventLoop *loop, int awake) {
    (void)loop;
    if (awake) pthread_mutex_lock(&gil);
    else pthread_mutex_unlock(&gil);
}

/* Main thread, awake: from now on it holds the GIL but while it sleeps. */
static void gilActivate(void) {
    if (atomic_load(&gilActive)) return;
    pthread_mutex_lock(&gil);
    eventSetSleepGate(server.loop, gilGate);
    atomic_store(&gilActive, 1);
}

/* A module thread: wait until the main thread has activated the GIL. */
static void gilRequest(void) {
    if (atomic_load(&gilActive)) return;
    atomic_store(&gilWanted, 1);
    for (int i = 0; !atomic_load(&gilActive); i++) {
        if (i % 100 == 0) wake();
        usleep(100);
    }
}

static void wakeReadable(EventLoop *loop, int fd, void *data, int mask) {
    (void)loop, (void)data, (void)mask;
    char buf[256];
    while (read(fd, buf, sizeof(buf)) > 0) {
    }
    if (atomic_load(&gilWanted)) gilActivate();
}

/* Keys SignalKeyAsReady named since the loop last slept: Redis 7.0 wakes
 * module waiters on writes to lists, sorted sets, streams and module
 * values, and on SignalKeyAsReady whatever the type; Cairn signals every
 * written key, so the others are told apart here. */
typedef struct Explicit {
    Db *db;
    sds key;
} Explicit;
static Explicit *explicitKeys;
static size_t explicitCount, explicitCap;

static int explicitlySignalled(Db *db, const char *key, size_t len) {
    for (size_t i = 0; i < explicitCount; i++)
        if (explicitKeys[i].db == db && sdsLen(explicitKeys[i].key) == len && !memcmp(explicitKeys[i].key, key, len))
            return 1;
    return 0;
}

static void clearExplicit(void) {
    for (size_t i = 0; i < explicitCount; i++) sdsFree(explicitKeys[i].key);
    explicitCount = 0;
}

/* ------------------------------------------------------------------ */
/* the unblock queue                                                   */
/* ------------------------------------------------------------------ */

static RedisModuleString **wrapArgv(Client *c) {
    RedisModuleString **argv = xmalloc(sizeof(*argv) * (size_t)(c->argc ? c->argc : 1));
    for (int i = 0; i < c->argc; i++) {
        argv[i] = xmalloc(sizeof(RedisModuleString));
        argv[i]->s = c->argv[i];
        argv[i]->refcount = 1;
        argv[i]->borrowed = 1;
    }
    return argv;
}

static void unwrapArgv(RedisModuleString **argv, int argc) {
    for (int i = 0; i < argc; i++) {
        RedisModuleString *s = argv[i];
        if (s->refcount > 1) { /* retained: it keeps its own copy */
            s->s = sdsDup(s->s);
            s->borrowed = 0;
        }
        modStringRelease(s);
    }
    xfree(argv);
}

/* Runs a reply or timeout callback of bc for its client c (argv: the
 * blocking command). */
static int runCallback(RedisModuleBlockedClient *bc, RedisModuleCmdFunc fn, int kind, Client *c,
                       RedisModuleString *readyKey) {
    RedisModuleCtx ctx;
    moduleCtxInit(&ctx, bc->module, c);
    ctx.blocked = bc;
    ctx.blockedPriv = bc->privdata;
    ctx.blkFlags = kind;
    ctx.readyKey = readyKey;
    int argc = c->argc;
    RedisModuleString **argv = wrapArgv(c);
    int rc = fn(&ctx, argv, argc);
    while (ctx.postponedCount > 0) {
        ctx.postponedCount--;
        replySetDeferredArrayLen(c, ctx.postponed[ctx.postponedCount], 0);
    }
    moduleCtxDone(&ctx);
    unwrapArgv(argv, argc);
    return rc;
}

/* The bytes a thread-safe context replied go to c, in order. */
static void moveReplies(Client *dst, Client *src) {
    if (src->bufpos) replyRaw(dst, src->buf, src->bufpos);
    for (ReplyBlock *b = src->replyHead; b; b = b->next) {
        if (b->refLen) replyRaw(dst, b->ref, b->refLen);
        if (b->used) replyRaw(dst, b->buf, b->used);
    }
    src->bufpos = 0;
    while (src->replyHead) {
        ReplyBlock *next = src->replyHead->next;
        replyBlockFree(src->replyHead);
        src->replyHead = next;
    }
    src->replyTail = NULL;
    src->replyBytes = src->replyPinnedBytes = src->replyAllocBytes = 0;
    src->replyBlocks = 0;
    src->bufDeferredCount = 0;
}

/* The reply an unblocked bc owes its client c: the reply callback (not
 * for a bc on keys), then what thread-safe contexts replied. */
static void deliver(RedisModuleBlockedClient *bc, Client *c) {
    if (!bc->onKeys && bc->replyCb) runCallback(bc, bc->replyCb, CTX_BLK_REPLY, c, NULL);
    moveReplies(c, bc->replyClient);
    pthread_mutex_lock(&queueLock);
    for (int i = 0; i < bc->nerrors; i++) {
        replyCountError(bc->errors[i], sdsLen(bc->errors[i]));
        sdsFree(bc->errors[i]);
    }
    bc->nerrors = 0;
    pthread_mutex_unlock(&queueLock);
}

void moduleBlockNoteError(RedisModuleCtx *ctx, const char *err, size_t len) {
    RedisModuleBlockedClient *bc = ctx->blocked;
    if (!bc) return; /* no client to get it: nothing replied */
    pthread_mutex_lock(&queueLock);
    bc->errors = xrealloc(bc->errors, sizeof(sds) * (size_t)(bc->nerrors + 1));
    bc->errors[bc->nerrors++] = sdsNewLen(err, len);
    pthread_mutex_unlock(&queueLock);
}

/* The end of a bc: its private data, its reply client, itself. */
static void bcFinish(RedisModuleBlockedClient *bc, int gone) {
    if (bc->privdata && bc->freePriv) {
        RedisModuleCtx ctx;
        moduleCtxInit(&ctx, bc->module, NULL);
        if (gone) ctx.blkFlags = CTX_BLK_DISCONNECTED;
        ctx.blockedPriv = bc->privdata;
        bc->freePriv(&ctx, bc->privdata);
        moduleCtxDone(&ctx);
    }
    clientFree(bc->replyClient);
    for (int i = 0; i < bc->nerrors; i++) sdsFree(bc->errors[i]);
    xfree(bc->errors);
    if (bc->prevLive) bc->prevLive->nextLive = bc->nextLive;
    else liveList = bc->nextLive;
    if (bc->nextLive) bc->nextLive->prevLive = bc->prevLive;
    xfree(bc);
}

int moduleBlockedCount(const Module *m) {
    int n = 0;
    for (RedisModuleBlockedClient *bc = liveList; bc; bc = bc->nextLive)
        if (bc->module == m) n++;
    return n;
}

/* Before the loop sleeps: the bcs UnblockClient queued, and the clients
 * of thread-safe contexts freed off the main thread. */
static void processQueue(void) {
    if (explicitCount) clearExplicit(); /* the ready keys were served */
    if (!atomic_load(&queuePending)) return;
    pthread_mutex_lock(&queueLock);
    RedisModuleBlockedClient *list = queueHead;
    queueHead = queueTail = NULL;
    Client **fl = freeLater;
    size_t nfl = freeLaterCount;
    freeLater = NULL;
    freeLaterCount = freeLaterCap = 0;
    atomic_store(&queuePending, 0);
    pthread_mutex_unlock(&queueLock);
    for (size_t i = 0; i < nfl; i++) clientFree(fl[i]);
    xfree(fl);
    int resumed = 0;
    while (list) {
        RedisModuleBlockedClient *bc = list;
        list = bc->nextQueued;
        Client *c = bc->client;
        if (c) {
            long long errors = server.stats.totalErrorReplies, start = ustime();
            deliver(bc, c);
            bc->disconnectCb = NULL; /* unblocked by the module: not a disconnection */
            if (!bc->onKeys)
                dispatchBlockedDone(c, bc->bgUs + (ustime() - start), server.stats.totalErrorReplies != errors);
            blockingUnblockReplied(c);
            resumed = 1;
        }
        bcFinish(bc, c == NULL);
    }
    /* The unblocked clients' pipelined commands run at the next turn. */
    if (resumed) wake();
}

static void enqueue(RedisModuleBlockedClient *bc, void *privdata, int setPriv) {
    pthread_mutex_lock(&queueLock);
    if (setPriv) bc->privdata = privdata;
    atomic_store(&bc->unblocked, 1);
    bc->nextQueued = NULL;
    if (queueTail) queueTail->nextQueued = bc;
    else queueHead = bc;
    queueTail = bc;
    atomic_store(&queuePending, 1);
    pthread_mutex_unlock(&queueLock);
    wake();
}

void moduleBlockInit(void) { moduleGilHeld = isMainThread = 1; }

void moduleBlockStart(void) {
    if (started || !server.loop) return;
    if (pipe(wakeFds) == -1) {
        serverLog(LL_WARNING, "Can't create the module wake-up pipe: %s", strerror(errno));
        wakeFds[0] = wakeFds[1] = -1;
        return;
    }
    for (int i = 0; i < 2; i++) {
        fcntl(wakeFds[i], F_SETFL, fcntl(wakeFds[i], F_GETFL) | O_NONBLOCK);
        fcntl(wakeFds[i], F_SETFD, FD_CLOEXEC);
    }
    if (eventAdd(server.loop, wakeFds[0], EV_READABLE, wakeReadable, NULL) == -1) {
        serverLog(LL_WARNING, "Can't watch the module wake-up pipe");
        close(wakeFds[0]);
        close(wakeFds[1]);
        wakeFds[0] = wakeFds[1] = -1;
        return;
    }
    serverAddBeforeSleepHook(processQueue);
    started = 1;
}

/* ------------------------------------------------------------------ */
/* blocking                                                            */
/* ------------------------------------------------------------------ */

/* The client leaves the blocked state (any way). */
static void bcReleased(void *p) {
    RedisModuleBlockedClient *bc = p;
    if (bc->disconnectCb) {
        void (*cb)(RedisModuleCtx *, RedisModuleBlockedClient *) = bc->disconnectCb;
        bc->disconnectCb = NULL;
        RedisModuleCtx ctx;
        moduleCtxInit(&ctx, bc->module, bc->client);
        ctx.blockedPriv = bc->privdata;
        cb(&ctx, bc);
        moduleCtxDone(&ctx);
    }
    bc->client = NULL;
    /* A bc on keys ends with its client unless UnblockClient queued it. */
    if (bc->onKeys && !atomic_load(&bc->unblocked)) bcFinish(bc, !bc->served);
}

/* A key bc waits on was signalled (blocking.c serves c from it). */
static int serveKey(Client *c, Db *db, const char *key, size_t len) {
    RedisModuleBlockedClient *bc = blockedPriv(c);
    if (!bc || !bc->replyCb || atomic_load(&bc->unblocked)) return 0;
    kvobj *o = dbLookupRead(db, key, len, LOOKUP_NOTOUCH | LOOKUP_NOSTATS | LOOKUP_NONOTIFY);
    if (!o) return 0;
    int t = kvType(o);
    if (t != OBJ_LIST && t != OBJ_ZSET && t != OBJ_STREAM && t != OBJ_MODULE && !explicitlySignalled(db, key, len))
        return 0;
    RedisModuleString *rk = modStringNew(NULL, key, len);
    int rc = runCallback(bc, bc->replyCb, CTX_BLK_REPLY, c, rk);
    modStringRelease(rk);
    if (rc != REDISMODULE_OK) return 0;
    bc->disconnectCb = NULL;
    bc->served = 1;
    return 1;
}

/* Timeout, CLIENT UNBLOCK TIMEOUT: the timeout callback replies. */
static void onTimeout(Client *c) {
    RedisModuleBlockedClient *bc = blockedPriv(c);
    if (!bc) return;
    if (atomic_load(&bc->unblocked)) {
        /* UnblockClient came first: its reply, now. */
        deliver(bc, c);
        bc->disconnectCb = NULL;
        return;
    }
    long long errors = server.stats.totalErrorReplies;
    if (bc->timeoutCb) runCallback(bc, bc->timeoutCb, CTX_BLK_TIMEOUT, c, NULL);
    dispatchBlockedDone(c, bc->bgUs, server.stats.totalErrorReplies != errors);
    bc->disconnectCb = NULL; /* the timeout callback is the module's hook */
}

static RedisModuleBlockedClient *blockClient(RedisModuleCtx *ctx, RedisModuleCmdFunc replyCb,
                                             RedisModuleCmdFunc timeoutCb, void (*freePriv)(RedisModuleCtx *, void *),
                                             long long timeoutMs, RedisModuleString **keys, int numkeys,
                                             void *privdata) {
    moduleAssertGil("RedisModule_BlockClient");
    moduleBlockStart();
    Client *c = ctx->client;
    RedisModuleBlockedClient *bc = xcalloc(sizeof(*bc));
    bc->module = ctx->module;
    bc->replyCb = replyCb;
    bc->timeoutCb = timeoutCb;
    bc->freePriv = freePriv;
    bc->privdata = privdata;
    bc->onKeys = keys != NULL;
    bc->replyClient = clientCreateFake();
    if (c) {
        bc->replyClient->db = c->db;
        bc->replyClient->resp = c->resp;
    }
    bc->nextLive = liveList;
    if (liveList) liveList->prevLive = bc;
    liveList = bc;
    if (!c || (c->flags & (CLIENT_LUA | CLIENT_MULTI)) || clientIsFake(c) || (ctx->blkFlags & CTX_BLK_THREAD_SAFE)) {
        /* Redis 7.0: a handle already aborted, and an error for the caller. */
        if (c && !(ctx->blkFlags & CTX_BLK_THREAD_SAFE))
            replyError(c, (c->flags & CLIENT_LUA) ? "Blocking module command called from Lua script"
                                                  : "Blocking module command called from transaction");
        return bc;
    }
    long long deadline = 0;
    if (timeoutMs) {
        deadline = mstime() + timeoutMs;
        if (deadline <= 0) deadline = 1;
    }
    sds small[8];
    sds *ks = numkeys <= 8 ? small : xmalloc(sizeof(sds) * (size_t)numkeys);
    for (int i = 0; i < numkeys; i++) ks[i] = keys[i]->s;
    blockForKeys(c, ks, keys ? numkeys : 0, deadline, keys ? serveKey : NULL, bc, bcReleased);
    if (ks != small) xfree(ks);
    blockSetTimeoutHandler(c, onTimeout, timeoutCb != NULL);
    bc->client = c;
    return bc;
}

static RedisModuleBlockedClient *RM_BlockClient(RedisModuleCtx *ctx, RedisModuleCmdFunc reply_callback,
                                                RedisModuleCmdFunc timeout_callback,
                                                void (*free_privdata)(RedisModuleCtx *, void *), long long timeout_ms) {
    return blockClient(ctx, reply_callback, timeout_callback, free_privdata, timeout_ms, NULL, 0, NULL);
}

static RedisModuleBlockedClient *RM_BlockClientOnKeys(RedisModuleCtx *ctx, RedisModuleCmdFunc reply_callback,
                                                      RedisModuleCmdFunc timeout_callback,
                                                      void (*free_privdata)(RedisModuleCtx *, void *),
                                                      long long timeout_ms, RedisModuleString **keys, int numkeys,
                                                      void *privdata) {
    if (numkeys < 0) numkeys = 0;
    return blockClient(ctx, reply_callback, timeout_callback, free_privdata, timeout_ms, keys, numkeys, privdata);
}

/* A bc on keys is unblocked as if it timed out (its timeout callback
 * replies, now: main thread); another's reply comes from the queue. */
static int RM_UnblockClient(RedisModuleBlockedClient *bc, void *privdata) {
    if (bc->onKeys) {
        if (!bc->timeoutCb) return REDISMODULE_ERR;
        if (atomic_load(&bc->unblocked)) return REDISMODULE_OK;
        moduleAssertGil("RedisModule_UnblockClient");
        if (bc->client) onTimeout(bc->client);
        enqueue(bc, NULL, 0);
        return REDISMODULE_OK;
    }
    enqueue(bc, privdata, 1);
    return REDISMODULE_OK;
}

static int RM_AbortBlock(RedisModuleBlockedClient *bc) {
    bc->replyCb = NULL;
    bc->disconnectCb = NULL;
    return RM_UnblockClient(bc, NULL);
}

static void RM_SetDisconnectCallback(RedisModuleBlockedClient *bc,
                                     void (*callback)(RedisModuleCtx *, RedisModuleBlockedClient *)) {
    bc->disconnectCb = callback;
}

static int RM_IsBlockedReplyRequest(RedisModuleCtx *ctx) { return (ctx->blkFlags & CTX_BLK_REPLY) != 0; }
static int RM_IsBlockedTimeoutRequest(RedisModuleCtx *ctx) { return (ctx->blkFlags & CTX_BLK_TIMEOUT) != 0; }
static void *RM_GetBlockedClientPrivateData(RedisModuleCtx *ctx) { return ctx->blockedPriv; }
static RedisModuleString *RM_GetBlockedClientReadyKey(RedisModuleCtx *ctx) { return ctx->readyKey; }
static RedisModuleBlockedClient *RM_GetBlockedClientHandle(RedisModuleCtx *ctx) { return ctx->blocked; }
static int RM_BlockedClientDisconnected(RedisModuleCtx *ctx) { return (ctx->blkFlags & CTX_BLK_DISCONNECTED) != 0; }

static int RM_BlockedClientMeasureTimeStart(RedisModuleBlockedClient *bc) {
    bc->bgStart = ustime();
    return REDISMODULE_OK;
}

static int RM_BlockedClientMeasureTimeEnd(RedisModuleBlockedClient *bc) {
    if (!bc->bgStart) return REDISMODULE_ERR;
    bc->bgUs += ustime() - bc->bgStart;
    return REDISMODULE_OK;
}

static void RM_SignalKeyAsReady(RedisModuleCtx *ctx, RedisModuleString *key) {
    moduleAssertGil("RedisModule_SignalKeyAsReady");
    Db *db = ctx->client ? ctx->client->db : &server.db[0];
    if (!explicitlySignalled(db, key->s, sdsLen(key->s))) {
        if (explicitCount == explicitCap) {
            explicitCap = explicitCap ? explicitCap * 2 : 8;
            explicitKeys = xrealloc(explicitKeys, sizeof(*explicitKeys) * explicitCap);
        }
        explicitKeys[explicitCount].db = db;
        explicitKeys[explicitCount].key = sdsDup(key->s);
        explicitCount++;
    }
    signalKeyAsReady(db, key->s, sdsLen(key->s));
}

/* ------------------------------------------------------------------ */
/* thread-safe contexts                                                */
/* ------------------------------------------------------------------ */

static RedisModuleCtx *threadSafeCtx(Module *m, RedisModuleBlockedClient *bc) {
    RedisModuleCtx *ctx = xmalloc(sizeof(*ctx));
    moduleCtxInit(ctx, m, NULL);
    ctx->blkFlags = CTX_BLK_THREAD_SAFE;
    if (bc) {
        ctx->blocked = bc;
        ctx->client = bc->replyClient;
    } else if (moduleGilHeld) {
        /* Its own client (the database it selects, Call's caller); made
         * later, under the GIL, when asked for from another thread. */
        ctx->client = clientCreateFake();
        ctx->blkFlags |= CTX_BLK_OWN_CLIENT;
    }
    return ctx;
}

static RedisModuleCtx *RM_GetThreadSafeContext(RedisModuleBlockedClient *bc) {
    return threadSafeCtx(bc ? bc->module : NULL, bc);
}

static RedisModuleCtx *RM_GetDetachedThreadSafeContext(RedisModuleCtx *ctx) {
    return threadSafeCtx(ctx->module, NULL);
}

static void RM_FreeThreadSafeContext(RedisModuleCtx *ctx) {
    moduleCtxDone(ctx);
    if (ctx->blkFlags & CTX_BLK_OWN_CLIENT) {
        if (moduleGilHeld) {
            clientFree(ctx->client);
        } else {
            pthread_mutex_lock(&queueLock);
            if (freeLaterCount == freeLaterCap) {
                freeLaterCap = freeLaterCap ? freeLaterCap * 2 : 8;
                freeLater = xrealloc(freeLater, sizeof(*freeLater) * freeLaterCap);
            }
            freeLater[freeLaterCount++] = ctx->client;
            atomic_store(&queuePending, 1);
            pthread_mutex_unlock(&queueLock);
            wake();
        }
    }
    xfree(ctx);
}

/* Called on a thread holding the GIL now. */
static void lockedCtx(RedisModuleCtx *ctx) {
    if (ctx && !ctx->client && !ctx->blocked) {
        ctx->client = clientCreateFake();
        ctx->blkFlags |= CTX_BLK_OWN_CLIENT;
    }
}

/* The main thread holds the GIL already: Lock/Unlock do nothing there
 * (Redis would deadlock). */
static void RM_ThreadSafeContextLock(RedisModuleCtx *ctx) {
    if (isMainThread || moduleGilHeld) return;
    gilRequest();
    pthread_mutex_lock(&gil);
    moduleGilHeld = 1;
    lockedCtx(ctx);
}

static int RM_ThreadSafeContextTryLock(RedisModuleCtx *ctx) {
    if (isMainThread || moduleGilHeld) {
        errno = EBUSY;
        return REDISMODULE_ERR;
    }
    if (!atomic_load(&gilActive)) { /* not yet: the main thread is asked */
        atomic_store(&gilWanted, 1);
        wake();
        errno = EBUSY;
        return REDISMODULE_ERR;
    }
    int rc = pthread_mutex_trylock(&gil);
    if (rc != 0) {
        errno = rc;
        return REDISMODULE_ERR;
    }
    moduleGilHeld = 1;
    lockedCtx(ctx);
    return REDISMODULE_OK;
}

static void RM_ThreadSafeContextUnlock(RedisModuleCtx *ctx) {
    (void)ctx;
    if (isMainThread || !moduleGilHeld) return;
    moduleGilHeld = 0;
    pthread_mutex_unlock(&gil);
}

/* ------------------------------------------------------------------ */
/* Yield                                                               */
/* ------------------------------------------------------------------ */

static const char *yieldBusy; /* the BUSY error while a Yield processes events */

static void processEventsWhileYielding(void) {
    netProcessBatchedReads();
    eventProcessFileEvents(server.loop, 0);
    netHandlePendingWrites();
    netFreeClosingClients();
}

/* Redis 7.0: nothing before busy-reply-threshold from the command's start
 * (1/hz while loading), then at most every 1/hz.  With FLAG_CLIENTS other
 * clients' commands get BUSY (busy_reply's text, or Redis's default) but
 * for allow-busy ones; without it their commands wait until the command
 * ends (Cairn leaves their input unread meanwhile).  Only on the main
 * thread (a module thread holding the GIL: nothing). */
static void RM_Yield(RedisModuleCtx *ctx, int flags, const char *busy_reply) {
    static int nesting;
    if (nesting || !isMainThread) return;
    nesting++;
    long long now = ustime();
    int hz = server.cfg.hz > 0 ? server.cfg.hz : 10;
    if (!ctx->yieldAt)
        ctx->yieldAt = persistLoading() ? now + 1000000 / hz : serverNowMs() * 1000 + server.cfg.busyReplyThreshold * 1000;
    if (now >= ctx->yieldAt) {
        if (persistLoading()) {
            processEventsWhileYielding();
        } else if (flags & REDISMODULE_YIELD_FLAG_CLIENTS) {
            const char *prev = yieldBusy;
            sds err = busy_reply ? sdsCatPrintf(sdsEmpty(), "BUSY %s", busy_reply) : NULL;
            yieldBusy = err ? err : "BUSY Redis is busy running a module command.";
            scriptSetModuleBusy(yieldBusy);
            processEventsWhileYielding();
            yieldBusy = prev;
            scriptSetModuleBusy(prev);
            sdsFree(err);
        }
        ctx->yieldAt = now + 1000000 / hz;
    }
    nesting--;
}

/* Redis 7.0: true while clients are paused (CLIENT PAUSE, FAILOVER). */
static int RM_AvoidReplicaTraffic(void) { return pauseActive(); }

#define API(fn) {"RedisModule_" #fn, (void *)(uintptr_t)RM_##fn}
const ApiEntry moduleBlockApi[] = {
    API(BlockClient), API(BlockClientOnKeys), API(UnblockClient), API(AbortBlock), API(SetDisconnectCallback),
    API(IsBlockedReplyRequest), API(IsBlockedTimeoutRequest), API(GetBlockedClientPrivateData),
    API(GetBlockedClientReadyKey), API(GetBlockedClientHandle), API(BlockedClientDisconnected), API(BlockedClientMeasureTimeStart),
    API(BlockedClientMeasureTimeEnd), API(SignalKeyAsReady), API(GetThreadSafeContext),
    API(GetDetachedThreadSafeContext), API(FreeThreadSafeContext), API(ThreadSafeContextLock),
    API(ThreadSafeContextTryLock), API(ThreadSafeContextUnlock), API(Yield), API(AvoidReplicaTraffic),
    {NULL, NULL}};
