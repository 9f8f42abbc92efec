/* module_misc3.c -- more small parts of the module API: the event loop
 * (file events and one-shot calls from any thread), APIs modules share
 * with each other, random bytes, memory sizes and ratio, the monotonic
 * clock, latency samples, publishing, RedisModule__Assert, and the
 * cluster API's node list, node info and module flags.
 *
 * Invariants:
 *  - loopFds[fd] is the module callbacks of fd while a module watches it
 *    (for reading and/or writing); the loop's data of fd is that record;
 *  - one-shots queue under oneShotLock from any thread; the main thread
 *    runs them (holding the GIL) when the one-shot pipe wakes it, in the
 *    order they were queued, each once;
 *  - a shared API has one exporter; every module that got it through
 *    GetSharedAPI is listed once in its users, and while that list is not
 *    empty the exporter cannot be unloaded (Redis's rule).  An exporter's
 *    APIs go with it; a user leaving is struck from every list. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>

#include "core/crash.h"
#include "core/event.h"
#include "core/log.h"
#include "core/server.h"
#include "ds/alloc.h"
#include "ds/rand.h"
#include "ds/util.h"
#include "module/module_int.h"
#include "server/cluster.h"
#include "server/cluster_int.h"
#include "server/latency.h"
#include "server/maxmemory.h"
#include "server/pubsub.h"

/* ---- event loop ---- */

typedef struct LoopFd {
    RedisModuleEventLoopFunc rfunc, wfunc;
    void *rdata, *wdata;
} LoopFd;

static LoopFd **loopFds;
static int loopFdsCap;

static void loopFdProc(EventLoop *loop, int fd, void *data, int mask) {
    (void)loop;
    LoopFd *lf = data;
    if ((mask & EV_READABLE) && lf->rfunc) lf->rfunc(fd, lf->rdata, REDISMODULE_EVENTLOOP_READABLE);
    /* the read callback may have removed the fd */
    if (fd < loopFdsCap && loopFds[fd] == lf && (mask & EV_WRITABLE) && lf->wfunc)
        lf->wfunc(fd, lf->wdata, REDISMODULE_EVENTLOOP_WRITABLE);
}

/* Watches fd for mask (READABLE|WRITABLE) on the main loop, calling func
 * with fd, data and the mask that fired.  ERR with errno ERANGE for an fd
 * outside the loop's set, EINVAL for no func or an unknown mask bit. */
static int RM_EventLoopAdd(int fd, int mask, RedisModuleEventLoopFunc func, void *data) {
    if (fd < 0 || fd >= eventLoopSetSize(server.loop)) {
        errno = ERANGE;
        return REDISMODULE_ERR;
    }
    if (!func || (mask & ~(REDISMODULE_EVENTLOOP_READABLE | REDISMODULE_EVENTLOOP_WRITABLE))) {
        errno = EINVAL;
        return REDISMODULE_ERR;
    }
    if (fd >= loopFdsCap) {
        int cap = loopFdsCap ? loopFdsCap : 64;
        while (cap <= fd) cap *= 2;
        loopFds = xrealloc(loopFds, sizeof(*loopFds) * (size_t)cap);
        memset(loopFds + loopFdsCap, 0, sizeof(*loopFds) * (size_t)(cap - loopFdsCap));
        loopFdsCap = cap;
    }
    int fresh = loopFds[fd] == NULL;
    LoopFd *lf = fresh ? xcalloc(sizeof(*lf)) : loopFds[fd];
    LoopFd old = *lf;
    if (mask & REDISMODULE_EVENTLOOP_READABLE) lf->rfunc = func, lf->rdata = data;
    if (mask & REDISMODULE_EVENTLOOP_WRITABLE) lf->wfunc = func, lf->wdata = data;
    errno = 0;
    int evmask = (mask & REDISMODULE_EVENTLOOP_READABLE ? EV_READABLE : 0) |
                 (mask & REDISMODULE_EVENTLOOP_WRITABLE ? EV_WRITABLE : 0);
    if (eventAdd(server.loop, fd, evmask, loopFdProc, lf) == -1) {
        if (fresh) xfree(lf);
        else *lf = old;
        return REDISMODULE_ERR;
    }
    loopFds[fd] = lf;
    return REDISMODULE_OK;
}

/* Stops watching fd for mask; ERANGE / EINVAL as EventLoopAdd. */
static int RM_EventLoopDel(int fd, int mask) {
    if (fd < 0 || fd >= eventLoopSetSize(server.loop)) {
        errno = ERANGE;
        return REDISMODULE_ERR;
    }
    if (mask & ~(REDISMODULE_EVENTLOOP_READABLE | REDISMODULE_EVENTLOOP_WRITABLE)) {
        errno = EINVAL;
        return REDISMODULE_ERR;
    }
    int evmask = (mask & REDISMODULE_EVENTLOOP_READABLE ? EV_READABLE : 0) |
                 (mask & REDISMODULE_EVENTLOOP_WRITABLE ? EV_WRITABLE : 0);
    LoopFd *lf = fd < loopFdsCap ? loopFds[fd] : NULL;
    if (lf) {
        eventDel(server.loop, fd, evmask);
        if (evmask & EV_READABLE) lf->rfunc = NULL, lf->rdata = NULL;
        if (evmask & EV_WRITABLE) lf->wfunc = NULL, lf->wdata = NULL;
        if (!(eventMask(server.loop, fd) & (EV_READABLE | EV_WRITABLE))) {
            loopFds[fd] = NULL;
            xfree(lf);
        }
    }
    errno = 0;
    return REDISMODULE_OK;
}

typedef struct OneShot {
    RedisModuleEventLoopOneShotFunc func;
    void *data;
    struct OneShot *next;
} OneShot;

static pthread_mutex_t oneShotLock = PTHREAD_MUTEX_INITIALIZER;
static OneShot *oneShotHead, **oneShotTail = &oneShotHead;
static int oneShotFds[2] = {-1, -1};

static void oneShotReadable(EventLoop *loop, int fd, void *data, int mask) {
    (void)loop, (void)data, (void)mask;
    char buf[256];
    while (read(fd, buf, sizeof(buf)) > 0) {
    }
    pthread_mutex_lock(&oneShotLock);
    OneShot *o = oneShotHead;
    oneShotHead = NULL;
    oneShotTail = &oneShotHead;
    pthread_mutex_unlock(&oneShotLock);
    while (o) {
        OneShot *next = o->next;
        o->func(o->data);
        xfree(o);
        o = next;
    }
}

void moduleMisc3Start(void) {
    if (oneShotFds[0] != -1) return;
    if (pipe(oneShotFds) == -1) {
        serverLog(LL_WARNING, "Can't create the module one-shot pipe: %s", strerror(errno));
        oneShotFds[0] = oneShotFds[1] = -1;
        return;
    }
    for (int i = 0; i < 2; i++) {
        fcntl(oneShotFds[i], F_SETFL, fcntl(oneShotFds[i], F_GETFL) | O_NONBLOCK);
        fcntl(oneShotFds[i], F_SETFD, FD_CLOEXEC);
    }
    if (eventAdd(server.loop, oneShotFds[0], EV_READABLE, oneShotReadable, NULL) == -1) {
        serverLog(LL_WARNING, "Can't watch the module one-shot pipe");
        close(oneShotFds[0]);
        close(oneShotFds[1]);
        oneShotFds[0] = oneShotFds[1] = -1;
    }
}

/* Any thread: func(data) runs once on the main thread soon.  EINVAL for
 * no func. */
static int RM_EventLoopAddOneShot(RedisModuleEventLoopOneShotFunc func, void *data) {
    if (!func) {
        errno = EINVAL;
        return REDISMODULE_ERR;
    }
    OneShot *o = xmalloc(sizeof(*o));
    o->func = func;
    o->data = data;
    o->next = NULL;
    pthread_mutex_lock(&oneShotLock);
    *oneShotTail = o;
    oneShotTail = &o->next;
    pthread_mutex_unlock(&oneShotLock);
    if (oneShotFds[1] != -1) {
        ssize_t n = write(oneShotFds[1], "A", 1);
        (void)n; /* full: a wake-up is pending already */
    }
    errno = 0;
    return REDISMODULE_OK;
}

/* ---- shared APIs ---- */

typedef struct SharedApi {
    char *name;
    void *func;
    Module *owner;
    struct SharedApi *next;
} SharedApi;

typedef struct ApiUser {
    Module *user, *owner;
    struct ApiUser *next;
} ApiUser;

static SharedApi *sharedApis;
static ApiUser *apiUsers;

/* ERR when an API of that name is exported already. */
static int RM_ExportSharedAPI(RedisModuleCtx *ctx, const char *name, void *func) {
    if (!ctx || !ctx->module || !name) return REDISMODULE_ERR;
    for (SharedApi *a = sharedApis; a; a = a->next)
        if (!strcmp(a->name, name)) return REDISMODULE_ERR;
    SharedApi *a = xmalloc(sizeof(*a));
    a->name = xstrdup(name);
    a->func = func;
    a->owner = ctx->module;
    a->next = sharedApis;
    sharedApis = a;
    return REDISMODULE_OK;
}

/* The function exported under name, or NULL; the caller's module now
 * depends on its exporter (listed once). */
static void *RM_GetSharedAPI(RedisModuleCtx *ctx, const char *name) {
    if (!name) return NULL;
    SharedApi *a = sharedApis;
    while (a && strcmp(a->name, name)) a = a->next;
    if (!a) return NULL;
    Module *user = ctx ? ctx->module : NULL;
    if (user) {
        ApiUser *u = apiUsers;
        while (u && !(u->user == user && u->owner == a->owner)) u = u->next;
        if (!u) {
            u = xmalloc(sizeof(*u));
            u->user = user;
            u->owner = a->owner;
            u->next = apiUsers;
            apiUsers = u;
        }
    }
    return a->func;
}

int moduleSharedApiInUse(const Module *m) {
    for (ApiUser *u = apiUsers; u; u = u->next)
        if (u->owner == m && u->user != m) return 1;
    return 0;
}

void moduleDropSharedApis(Module *m) {
    moduleDropReceivers(m);
    for (SharedApi **pp = &sharedApis; *pp;) {
        SharedApi *a = *pp;
        if (a->owner == m) {
            *pp = a->next;
            xfree(a->name);
            xfree(a);
        } else {
            pp = &a->next;
        }
    }
    for (ApiUser **pp = &apiUsers; *pp;) {
        ApiUser *u = *pp;
        if (u->user == m || u->owner == m) {
            *pp = u->next;
            xfree(u);
        } else {
            pp = &u->next;
        }
    }
}

/* ---- random, memory, clock, latency, publish, assert ---- */

/* Random bytes from the OS (/dev/urandom's getrandom), else the PRNG. */
static void RM_GetRandomBytes(unsigned char *dst, size_t len) {
    size_t done = 0;
    while (done < len) {
        char hex[2 * 128];
        size_t n = len - done < 128 ? len - done : 128;
        randHex(hex, 2 * n);
        for (size_t i = 0; i < n; i++) {
            int hi = hex[2 * i] <= '9' ? hex[2 * i] - '0' : hex[2 * i] - 'a' + 10;
            int lo = hex[2 * i + 1] <= '9' ? hex[2 * i + 1] - '0' : hex[2 * i + 1] - 'a' + 10;
            dst[done + i] = (unsigned char)(hi << 4 | lo);
        }
        done += n;
    }
}

/* len random lowercase hex digits (no terminator). */
static void RM_GetRandomHexChars(char *dst, size_t len) { randHex(dst, len); }

/* Used memory (what maxmemory counts) over maxmemory; 0 without one. */
static float RM_GetUsedMemoryRatio(void) {
    if (!server.cfg.maxmemory) return 0;
    size_t used = xmallocUsed();
    size_t nc = maxmemoryNotCounted();
    used = used > nc ? used - nc : 0;
    return (float)((double)used / (double)server.cfg.maxmemory);
}

static size_t RM_MallocUsableSize(void *ptr) { return ptr ? xmallocSize(ptr) : 0; }

static size_t RM_MallocSizeString(RedisModuleString *str) {
    if (!str) return 0;
    return sizeof(*str) + xmallocSize(sdsAllocPtr(str->s));
}

static size_t RM_MallocSizeDict(RedisModuleDict *d) { return moduleDictMemory(d); }

static uint64_t RM_MonotonicMicroseconds(void) { return (uint64_t)monotonicUs(); }

/* Records a sample of event (ms) when the latency monitor is on and it is
 * at least the threshold (LATENCY LATEST / HISTORY show it). */
static void RM_LatencyAddSample(const char *event, mstime_t latency) {
    if (event) latencyAddSampleIfNeeded(event, latency);
}

/* PUBLISH / SPUBLISH: the receivers here; in cluster mode the message goes
 * to the other nodes (all, or the shard's) as the commands send it. */
static int RM_PublishMessage(RedisModuleCtx *ctx, RedisModuleString *channel, RedisModuleString *message) {
    (void)ctx;
    if (clusterEnabled)
        clusterPropagatePublish(channel->s, sdsLen(channel->s), message->s, sdsLen(message->s), 0);
    return (int)pubsubPublish(channel->s, sdsLen(channel->s), message->s, sdsLen(message->s));
}

static int RM_PublishMessageShard(RedisModuleCtx *ctx, RedisModuleString *channel, RedisModuleString *message) {
    (void)ctx;
    if (clusterEnabled)
        clusterPropagatePublish(channel->s, sdsLen(channel->s), message->s, sdsLen(message->s), 1);
    return (int)pubsubPublishShard(channel->s, sdsLen(channel->s), message->s, sdsLen(message->s));
}

/* RedisModule_Assert's failure: the crash report, then abort. */
static void RM__Assert(const char *estr, const char *file, int line) { serverAssertFailedAt(estr, file, line); }

/* ---- cluster nodes ---- */

/* Without cluster mode NULL; else the ids (REDISMODULE_NODE_ID_LEN bytes
 * each, no terminator) of the nodes known but those in handshake or
 * without an address, NULL-terminated; *numnodes their count. */
static char **RM_GetClusterNodesList(RedisModuleCtx *ctx, size_t *numnodes) {
    (void)ctx;
    if (!clusterEnabled) return NULL;
    char **ids = xmalloc(sizeof(*ids) * ((size_t)cs.count + 1));
    size_t j = 0;
    for (int i = 0; i < cs.count; i++) {
        ClusterNode *n = cs.nodes[i];
        if (n->flags & (NODE_NOADDR | NODE_HANDSHAKE)) continue;
        ids[j] = xmalloc(REDISMODULE_NODE_ID_LEN);
        memcpy(ids[j], n->name, REDISMODULE_NODE_ID_LEN);
        j++;
    }
    ids[j] = NULL;
    if (numnodes) *numnodes = j;
    return ids;
}

static void RM_FreeClusterNodesList(char **ids) {
    if (!ids) return;
    for (size_t j = 0; ids[j]; j++) xfree(ids[j]);
    xfree(ids);
}

/* The node's ip (NUL-terminated, at most 46 bytes), its master's id (40
 * bytes; zeros when a master or unknown), client port and
 * REDISMODULE_NODE_* flags; each output may be NULL.  ERR without cluster
 * mode, for an unknown id, a node in handshake or without an address.
 * The id's first 40 bytes are used (ids of GetClusterNodesList have no
 * terminator). */
static int RM_GetClusterNodeInfo(RedisModuleCtx *ctx, const char *id, char *ip, char *master_id, int *port,
                                 int *flags) {
    (void)ctx;
    if (!clusterEnabled || !id || strnlen(id, REDISMODULE_NODE_ID_LEN) != REDISMODULE_NODE_ID_LEN)
        return REDISMODULE_ERR;
    ClusterNode *n = nodeLookup(id, REDISMODULE_NODE_ID_LEN);
    if (!n || (n->flags & (NODE_NOADDR | NODE_HANDSHAKE))) return REDISMODULE_ERR;
    if (ip) {
        strncpy(ip, n->ip, 46);
        ip[45] = '\0';
    }
    if (master_id) {
        if ((n->flags & NODE_SLAVE) && n->masterName[0]) memcpy(master_id, n->masterName, REDISMODULE_NODE_ID_LEN);
        else memset(master_id, 0, REDISMODULE_NODE_ID_LEN);
    }
    if (port) *port = n->port;
    if (flags) {
        int f = 0;
        if (n->flags & NODE_MYSELF) f |= REDISMODULE_NODE_MYSELF;
        if (n->flags & NODE_MASTER) f |= REDISMODULE_NODE_MASTER;
        if (n->flags & NODE_SLAVE) f |= REDISMODULE_NODE_SLAVE;
        if (n->flags & NODE_PFAIL) f |= REDISMODULE_NODE_PFAIL;
        if (n->flags & NODE_FAIL) f |= REDISMODULE_NODE_FAIL;
        if (n->flags & NODE_NOFAILOVER) f |= REDISMODULE_NODE_NOFAILOVER;
        *flags = f;
    }
    return REDISMODULE_OK;
}

/* Adds (never removes) NO_FAILOVER and NO_REDIRECTION (cluster.h). */
static void RM_SetClusterFlags(RedisModuleCtx *ctx, uint64_t flags) {
    (void)ctx;
    if (flags & REDISMODULE_CLUSTER_FLAG_NO_FAILOVER) clusterModuleFlags |= CLUSTER_MODULE_NO_FAILOVER;
    if (flags & REDISMODULE_CLUSTER_FLAG_NO_REDIRECTION) clusterModuleFlags |= CLUSTER_MODULE_NO_REDIRECTION;
}

/* ---- cluster messages ---- */

/* One receiver per (module id, type); the module id is Redis's encoding of
 * the module's name as a data type name (0 unless 9 characters of the
 * type-name set), so modules of other names share id 0, as on Redis. */
typedef struct Receiver {
    uint64_t moduleId;
    uint8_t type;
    Module *module;
    RedisModuleClusterMessageReceiver func;
    struct Receiver *next;
} Receiver;

static Receiver *receivers;

static uint64_t moduleNameId(const char *name) {
    static const char set[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    if (!name || strlen(name) != 9) return 0;
    uint64_t id = 0;
    for (int i = 0; i < 9; i++) {
        const char *p = strchr(set, name[i]);
        if (!p) return 0;
        id = (id << 6) | (uint64_t)(p - set);
    }
    return id << 10;
}

static void clusterMessageArrived(const char *sender, uint64_t moduleId, uint8_t type, const unsigned char *payload,
                                  uint32_t len) {
    for (Receiver *r = receivers; r; r = r->next) {
        if (r->moduleId != moduleId || r->type != type) continue;
        RedisModuleCtx ctx;
        moduleCtxInit(&ctx, r->module, NULL);
        r->func(&ctx, sender, type, payload, len);
        moduleCtxDone(&ctx);
        return;
    }
}

/* Without cluster mode nothing; else callback (NULL: none) gets the
 * module's messages of type from other nodes. */
static void RM_RegisterClusterMessageReceiver(RedisModuleCtx *ctx, uint8_t type,
                                              RedisModuleClusterMessageReceiver callback) {
    if (!clusterEnabled || !ctx || !ctx->module) return;
    uint64_t id = moduleNameId(ctx->module->name);
    for (Receiver **pp = &receivers; *pp; pp = &(*pp)->next) {
        Receiver *r = *pp;
        if (r->moduleId != id || r->type != type) continue;
        if (callback) {
            r->func = callback;
            r->module = ctx->module;
        } else {
            *pp = r->next;
            xfree(r);
        }
        return;
    }
    if (!callback) return;
    Receiver *r = xmalloc(sizeof(*r));
    r->moduleId = id;
    r->type = type;
    r->module = ctx->module;
    r->func = callback;
    r->next = receivers;
    receivers = r;
    clusterSetModuleMessageHook(clusterMessageArrived);
}

/* ERR without cluster mode, or for an unknown or unlinked target; target
 * NULL: every node. */
static int RM_SendClusterMessage(RedisModuleCtx *ctx, const char *target_id, uint8_t type, const char *msg,
                                 uint32_t len) {
    if (!clusterEnabled || !ctx || !ctx->module) return REDISMODULE_ERR;
    return clusterSendModuleMessage(target_id, moduleNameId(ctx->module->name), type, (const unsigned char *)msg,
                                    len) == 0
               ? REDISMODULE_OK
               : REDISMODULE_ERR;
}

void moduleDropReceivers(Module *m) {
    for (Receiver **pp = &receivers; *pp;) {
        Receiver *r = *pp;
        if (r->module == m) {
            *pp = r->next;
            xfree(r);
        } else {
            pp = &r->next;
        }
    }
}

#define API(n) {"RedisModule_" #n, (void *)RM_##n}
const ApiEntry moduleMisc3Api[] = {API(EventLoopAdd),
                                   API(EventLoopDel),
                                   API(EventLoopAddOneShot),
                                   API(ExportSharedAPI),
                                   API(GetSharedAPI),
                                   API(GetRandomBytes),
                                   API(GetRandomHexChars),
                                   API(GetUsedMemoryRatio),
                                   API(MallocUsableSize),
                                   API(MallocSizeString),
                                   API(MallocSizeDict),
                                   API(MonotonicMicroseconds),
                                   API(LatencyAddSample),
                                   API(PublishMessage),
                                   API(PublishMessageShard),
                                   {"RedisModule__Assert", (void *)RM__Assert},
                                   API(GetClusterNodesList),
                                   API(FreeClusterNodesList),
                                   API(GetClusterNodeInfo),
                                   API(SetClusterFlags),
                                   API(RegisterClusterMessageReceiver),
                                   API(SendClusterMessage),
                                   {NULL, NULL}};
