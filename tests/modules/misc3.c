/* misc3.c -- test module: the event loop (a pipe's read end watched, a
 * thread writing to it; one-shots from a thread), shared APIs (exports
 * "misc3.add" at load), random bytes and hex, memory sizes and ratio, the
 * monotonic clock, latency samples, publishing and RedisModule_Assert.
 *
 *   m3.pipe key val      a pipe's read end joins the loop; a thread writes
 *                        val; the read callback sets key to it, removes the
 *                        fd and closes the pipe
 *   m3.oneshot key val   a thread adds a one-shot that sets key to val
 *   m3.errs              the errno of EventLoopAdd/Del/AddOneShot misuse
 *   m3.export name       ExportSharedAPI(name) at run time: 1 ok, 0 err
 *   m3.rand n            [n hex chars all in 0-9a-f, two n-byte draws differ]
 *   m3.ratio             GetUsedMemoryRatio as a double
 *   m3.sizes             [usable >= asked, string size > len, dict size > 0]
 *   m3.mono              the monotonic clock does not go back (1)
 *   m3.latency ev ms     LatencyAddSample
 *   m3.publish ch msg | m3.spublish ch msg   the receivers
 *   m3.assert            RedisModule_Assert(0): the server aborts
 *   m3.nodes             GetClusterNodesList's ids (nil without cluster)
 *   m3.nodeinfo id       [ip, master id (40 bytes), port, flags] or ERR
 *   m3.clusterflags n    SetClusterFlags(n)
 *   m3.msgrecv type      a receiver of type: sets msg:<type> to
 *                        "<sender id>:<payload>"
 *   m3.msgsend id|* type payload   SendClusterMessage (* to every node):
 *                        1 ok, 0 err */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "redismodule.h"

static RedisModuleCtx *detached;

typedef struct Job {
    int fds[2];
    char *key, *val;
    size_t vlen;
} Job;

static void setKey(const char *key, const char *val, size_t vlen) {
    RedisModuleCallReply *r = RedisModule_Call(detached, "SET", "cb", key, val, vlen);
    if (r) RedisModule_FreeCallReply(r);
}

static void pipeReadable(int fd, void *data, int mask) {
    Job *j = data;
    char buf[256];
    ssize_t n = read(fd, buf, sizeof(buf));
    if (n <= 0 || !(mask & REDISMODULE_EVENTLOOP_READABLE)) return;
    setKey(j->key, buf, (size_t)n);
    RedisModule_EventLoopDel(fd, REDISMODULE_EVENTLOOP_READABLE);
    close(j->fds[0]);
    close(j->fds[1]);
    RedisModule_Free(j->key);
    RedisModule_Free(j->val);
    RedisModule_Free(j);
}

/* The writer thread owns its copy of the bytes and of the write end: the
 * read callback may free the job and close the pipe as soon as the bytes
 * arrive, before write() has returned here. */
typedef struct Write {
    int fd;
    size_t len;
    char buf[];
} Write;

static void *writer(void *arg) {
    Write *w = arg;
    ssize_t n = write(w->fd, w->buf, w->len);
    (void)n;
    close(w->fd);
    free(w);
    return NULL;
}

static Job *newJob(RedisModuleString **argv) {
    Job *j = RedisModule_Calloc(1, sizeof(*j));
    size_t kl, vl;
    const char *k = RedisModule_StringPtrLen(argv[1], &kl);
    const char *v = RedisModule_StringPtrLen(argv[2], &vl);
    j->key = RedisModule_Calloc(1, kl + 1);
    memcpy(j->key, k, kl);
    j->val = RedisModule_Calloc(1, vl + 1);
    memcpy(j->val, v, vl);
    j->vlen = vl;
    return j;
}

static int cmdPipe(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    if (argc != 3) return RedisModule_WrongArity(ctx);
    Job *j = newJob(argv);
    if (pipe(j->fds) == -1) return RedisModule_ReplyWithError(ctx, "ERR pipe");
    if (RedisModule_EventLoopAdd(j->fds[0], REDISMODULE_EVENTLOOP_READABLE, pipeReadable, j) != REDISMODULE_OK)
        return RedisModule_ReplyWithError(ctx, "ERR add");
    Write *w = malloc(sizeof(*w) + j->vlen);
    w->fd = dup(j->fds[1]);
    w->len = j->vlen;
    memcpy(w->buf, j->val, j->vlen);
    pthread_t t;
    if (pthread_create(&t, NULL, writer, w) != 0) return RedisModule_ReplyWithError(ctx, "ERR thread");
    pthread_detach(t);
    return RedisModule_ReplyWithSimpleString(ctx, "OK");
}

static void oneShot(void *data) {
    Job *j = data;
    setKey(j->key, j->val, j->vlen);
    RedisModule_Free(j->key);
    RedisModule_Free(j->val);
    RedisModule_Free(j);
}

static void *oneShotThread(void *arg) {
    RedisModule_EventLoopAddOneShot(oneShot, arg);
    return NULL;
}

static int cmdOneShot(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    if (argc != 3) return RedisModule_WrongArity(ctx);
    Job *j = newJob(argv);
    pthread_t t;
    if (pthread_create(&t, NULL, oneShotThread, j) != 0) return RedisModule_ReplyWithError(ctx, "ERR thread");
    pthread_detach(t);
    return RedisModule_ReplyWithSimpleString(ctx, "OK");
}

static void noop(int fd, void *data, int mask) { (void)fd, (void)data, (void)mask; }

static int cmdErrs(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    (void)argv, (void)argc;
    int fds[2];
    if (pipe(fds) == -1) return RedisModule_ReplyWithError(ctx, "ERR pipe");
    int rc[9], en[9], i = 0;
#define TRY(expr) (errno = 12345, rc[i] = (expr), en[i] = errno, i++)
    TRY(RedisModule_EventLoopAdd(-1, REDISMODULE_EVENTLOOP_READABLE, noop, NULL));
    TRY(RedisModule_EventLoopAdd(1 << 30, REDISMODULE_EVENTLOOP_READABLE, noop, NULL));
    TRY(RedisModule_EventLoopAdd(fds[0], 4, noop, NULL));
    TRY(RedisModule_EventLoopAdd(fds[0], REDISMODULE_EVENTLOOP_READABLE, NULL, NULL));
    TRY(RedisModule_EventLoopAdd(-1, 4, NULL, NULL));
    TRY(RedisModule_EventLoopDel(-1, REDISMODULE_EVENTLOOP_READABLE));
    TRY(RedisModule_EventLoopDel(fds[0], 8));
    TRY(RedisModule_EventLoopDel(fds[0], REDISMODULE_EVENTLOOP_READABLE)); /* never added */
    TRY(RedisModule_EventLoopAddOneShot(NULL, NULL));
#undef TRY
    close(fds[0]);
    close(fds[1]);
    RedisModule_ReplyWithArray(ctx, 2 * i);
    for (int k = 0; k < i; k++) {
        RedisModule_ReplyWithLongLong(ctx, rc[k]);
        const char *name = en[k] == ERANGE ? "ERANGE" : en[k] == EINVAL ? "EINVAL" : en[k] == 0 ? "0" : "other";
        RedisModule_ReplyWithSimpleString(ctx, name);
    }
    return REDISMODULE_OK;
}

static long long sharedAdd(long long a, long long b) { return a + b; }

static int cmdExport(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    if (argc != 2) return RedisModule_WrongArity(ctx);
    int rc = RedisModule_ExportSharedAPI(ctx, RedisModule_StringPtrLen(argv[1], NULL), (void *)sharedAdd);
    return RedisModule_ReplyWithLongLong(ctx, rc == REDISMODULE_OK);
}

static int cmdRand(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    long long n;
    if (argc != 2 || RedisModule_StringToLongLong(argv[1], &n) != REDISMODULE_OK || n < 1 || n > 4096)
        return RedisModule_ReplyWithError(ctx, "ERR n");
    char *hex = RedisModule_Alloc((size_t)n);
    RedisModule_GetRandomHexChars(hex, (size_t)n);
    int ok = 1;
    for (long long i = 0; i < n; i++)
        if (!((hex[i] >= '0' && hex[i] <= '9') || (hex[i] >= 'a' && hex[i] <= 'f'))) ok = 0;
    RedisModule_Free(hex);
    unsigned char a[64], b[64];
    size_t bn = n < 64 ? (size_t)n : 64;
    RedisModule_GetRandomBytes(a, bn);
    RedisModule_GetRandomBytes(b, bn);
    RedisModule_ReplyWithArray(ctx, 2);
    RedisModule_ReplyWithLongLong(ctx, ok);
    /* 8+ bytes: two draws equal has chance 2^-64 */
    return RedisModule_ReplyWithLongLong(ctx, bn < 8 || memcmp(a, b, bn) != 0);
}

static int cmdRatio(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    (void)argv, (void)argc;
    return RedisModule_ReplyWithDouble(ctx, RedisModule_GetUsedMemoryRatio());
}

static int cmdSizes(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    (void)argv, (void)argc;
    void *p = RedisModule_Alloc(100);
    size_t usable = RedisModule_MallocUsableSize(p);
    RedisModule_Free(p);
    RedisModuleString *s = RedisModule_CreateString(ctx, "0123456789012345678901234567890123456789", 40);
    size_t ss = RedisModule_MallocSizeString(s);
    RedisModule_FreeString(ctx, s);
    RedisModuleDict *d = RedisModule_CreateDict(ctx);
    for (int i = 0; i < 100; i++) {
        char k[16];
        int kl = snprintf(k, sizeof(k), "k%d", i);
        RedisModule_DictSetC(d, k, (size_t)kl, (void *)1);
    }
    size_t ds = RedisModule_MallocSizeDict(d);
    RedisModule_FreeDict(ctx, d);
    RedisModule_ReplyWithArray(ctx, 3);
    RedisModule_ReplyWithLongLong(ctx, usable >= 100);
    RedisModule_ReplyWithLongLong(ctx, ss > 40);
    return RedisModule_ReplyWithLongLong(ctx, ds > 100);
}

static int cmdMono(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    (void)argv, (void)argc;
    uint64_t a = RedisModule_MonotonicMicroseconds();
    usleep(2000);
    uint64_t b = RedisModule_MonotonicMicroseconds();
    return RedisModule_ReplyWithLongLong(ctx, a > 0 && b >= a + 1000);
}

static int cmdLatency(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    long long ms;
    if (argc != 3 || RedisModule_StringToLongLong(argv[2], &ms) != REDISMODULE_OK)
        return RedisModule_ReplyWithError(ctx, "ERR args");
    RedisModule_LatencyAddSample(RedisModule_StringPtrLen(argv[1], NULL), ms);
    return RedisModule_ReplyWithSimpleString(ctx, "OK");
}

static int cmdPublish(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    if (argc != 3) return RedisModule_WrongArity(ctx);
    return RedisModule_ReplyWithLongLong(ctx, RedisModule_PublishMessage(ctx, argv[1], argv[2]));
}

static int cmdSPublish(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    if (argc != 3) return RedisModule_WrongArity(ctx);
    return RedisModule_ReplyWithLongLong(ctx, RedisModule_PublishMessageShard(ctx, argv[1], argv[2]));
}

static int cmdAssert(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    RedisModule_Assert(argc == 100);
    (void)argv;
    return RedisModule_ReplyWithSimpleString(ctx, "unreachable");
}

static int cmdNodes(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    (void)argv, (void)argc;
    size_t n = 12345;
    char **ids = RedisModule_GetClusterNodesList(ctx, &n);
    if (!ids) return RedisModule_ReplyWithNull(ctx);
    RedisModule_ReplyWithArray(ctx, (long)n);
    for (size_t i = 0; i < n; i++) RedisModule_ReplyWithStringBuffer(ctx, ids[i], REDISMODULE_NODE_ID_LEN);
    RedisModule_FreeClusterNodesList(ids);
    return REDISMODULE_OK;
}

static int cmdNodeInfo(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    if (argc != 2) return RedisModule_WrongArity(ctx);
    char ip[46], master[REDISMODULE_NODE_ID_LEN];
    int port = -1, flags = -1;
    memset(ip, 'x', sizeof(ip));
    memset(master, 'x', sizeof(master));
    if (RedisModule_GetClusterNodeInfo(ctx, RedisModule_StringPtrLen(argv[1], NULL), ip, master, &port, &flags) !=
        REDISMODULE_OK)
        return RedisModule_ReplyWithError(ctx, "ERR no such node");
    RedisModule_ReplyWithArray(ctx, 4);
    RedisModule_ReplyWithStringBuffer(ctx, ip, strnlen(ip, sizeof(ip)));
    RedisModule_ReplyWithStringBuffer(ctx, master, sizeof(master));
    RedisModule_ReplyWithLongLong(ctx, port);
    return RedisModule_ReplyWithLongLong(ctx, flags);
}

static int cmdClusterFlags(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    long long f;
    if (argc != 2 || RedisModule_StringToLongLong(argv[1], &f) != REDISMODULE_OK)
        return RedisModule_ReplyWithError(ctx, "ERR flags");
    RedisModule_SetClusterFlags(ctx, (uint64_t)f);
    return RedisModule_ReplyWithSimpleString(ctx, "OK");
}

static void msgReceived(RedisModuleCtx *ctx, const char *sender, uint8_t type, const unsigned char *payload,
                        uint32_t len) {
    (void)ctx;
    char key[16], *val = RedisModule_Alloc(REDISMODULE_NODE_ID_LEN + 1 + len + 1);
    snprintf(key, sizeof(key), "msg:%u", (unsigned)type);
    memcpy(val, sender, REDISMODULE_NODE_ID_LEN);
    val[REDISMODULE_NODE_ID_LEN] = ':';
    if (len) memcpy(val + REDISMODULE_NODE_ID_LEN + 1, payload, len);
    setKey(key, val, REDISMODULE_NODE_ID_LEN + 1 + len);
    RedisModule_Free(val);
}

static int cmdMsgRecv(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    long long t;
    if (argc != 2 || RedisModule_StringToLongLong(argv[1], &t) != REDISMODULE_OK || t < 0 || t > 255)
        return RedisModule_ReplyWithError(ctx, "ERR type");
    RedisModule_RegisterClusterMessageReceiver(ctx, (uint8_t)t, msgReceived);
    return RedisModule_ReplyWithSimpleString(ctx, "OK");
}

static int cmdMsgSend(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    long long t;
    if (argc != 4 || RedisModule_StringToLongLong(argv[2], &t) != REDISMODULE_OK || t < 0 || t > 255)
        return RedisModule_ReplyWithError(ctx, "ERR type");
    const char *target = RedisModule_StringPtrLen(argv[1], NULL);
    size_t len;
    const char *payload = RedisModule_StringPtrLen(argv[3], &len);
    int rc = RedisModule_SendClusterMessage(ctx, strcmp(target, "*") ? target : NULL, (uint8_t)t, payload,
                                            (uint32_t)len);
    return RedisModule_ReplyWithLongLong(ctx, rc == REDISMODULE_OK);
}

int RedisModule_OnLoad(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    (void)argv, (void)argc;
    if (RedisModule_Init(ctx, "misc3", 1, REDISMODULE_APIVER_1) == REDISMODULE_ERR) return REDISMODULE_ERR;
    if (RedisModule_ExportSharedAPI(ctx, "misc3.add", (void *)sharedAdd) != REDISMODULE_OK) return REDISMODULE_ERR;
    detached = RedisModule_GetDetachedThreadSafeContext(ctx);
    struct {
        const char *name;
        RedisModuleCmdFunc fn;
        const char *flags;
    } cmds[] = {{"m3.pipe", cmdPipe, "write"},       {"m3.oneshot", cmdOneShot, "write"},
                {"m3.errs", cmdErrs, ""},            {"m3.export", cmdExport, ""},
                {"m3.rand", cmdRand, ""},            {"m3.ratio", cmdRatio, ""},
                {"m3.sizes", cmdSizes, ""},          {"m3.mono", cmdMono, ""},
                {"m3.latency", cmdLatency, ""},      {"m3.publish", cmdPublish, "pubsub"},
                {"m3.spublish", cmdSPublish, "pubsub"}, {"m3.assert", cmdAssert, ""},
                {"m3.nodes", cmdNodes, ""},          {"m3.nodeinfo", cmdNodeInfo, ""},
                {"m3.clusterflags", cmdClusterFlags, ""}, {"m3.msgrecv", cmdMsgRecv, ""},
                {"m3.msgsend", cmdMsgSend, ""}};
    for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
        if (RedisModule_CreateCommand(ctx, cmds[i].name, cmds[i].fn, cmds[i].flags, 0, 0, 0) == REDISMODULE_ERR)
            return REDISMODULE_ERR;
    return REDISMODULE_OK;
}

int RedisModule_OnUnload(RedisModuleCtx *ctx) {
    (void)ctx;
    if (detached) RedisModule_FreeThreadSafeContext(detached);
    detached = NULL;
    return REDISMODULE_OK;
}
