/* module_call.c -- RedisModule_Call, its replies, and replication
 * (RedisModule_Replicate, RedisModule_ReplicateVerbatim).
 *
 * A call runs the command on a fake client (one per server, reused; a
 * nested call from a command a call runs takes a fresh one) whose replies
 * go to a reply sink that builds a tree of RedisModuleCallReply nodes.
 * The tree is in the protocol the call asked for: RESP2 by default (a map
 * becomes an array, a double a bulk string...), RESP3 with "3", the
 * caller's with "0".  CallReplyProto encodes a node back to RESP bytes.
 *
 * Propagation, as Redis 7.0: a module command never propagates as sent;
 * what it runs through Call propagates only with the "!" flag (without
 * "A": to the AOF, without "R": to replicas); Replicate and
 * ReplicateVerbatim add effects to the command's unit, which the effects
 * layer wraps in MULTI/EXEC when it holds several. */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <string.h>
#include <strings.h>

#include "core/dispatch.h"
#include "core/effects.h"
#include "core/errors.h"
#include "core/server.h"
#include "ds/alloc.h"
#include "ds/util.h"
#include "module/module_int.h"
#include "proto/reply_sink.h"
#include "proto/resp_write.h"
#include "server/acl.h"

struct RedisModuleCallReply {
    int type; /* REDISMODULE_REPLY_* */
    long long integer;
    double dbl;
    sds str;       /* string, error, big number, verbatim text */
    char fmt[4];   /* verbatim format */
    RedisModuleCallReply **el; /* array/set: len; map/attribute: 2*len */
    size_t len;
    RedisModuleCallReply *attribute;
    sds proto;     /* CallReplyProto, built when asked */
    int resp;
    RedisModuleCtx *ctx; /* auto memory of the root, or NULL */
};

static RedisModuleCallReply *nodeNew(int type, int resp) {
    RedisModuleCallReply *r = xcalloc(sizeof(*r));
    r->type = type;
    r->resp = resp;
    return r;
}

void moduleFreeCallReplyTree(RedisModuleCallReply *r) {
    if (!r) return;
    size_t n = (r->type == REDISMODULE_REPLY_MAP || r->type == REDISMODULE_REPLY_ATTRIBUTE) ? r->len * 2 : r->len;
    for (size_t i = 0; r->el && i < n; i++) moduleFreeCallReplyTree(r->el[i]);
    xfree(r->el);
    moduleFreeCallReplyTree(r->attribute);
    sdsFree(r->str);
    sdsFree(r->proto);
    xfree(r);
}

/* ---- the sink building the tree ---- */

#define CALL_DEPTH_MAX 128

typedef struct Open {
    RedisModuleCallReply *node;
    long remaining; /* items still to come; -1: deferred (until setDeferred) */
    size_t cap;
    size_t count; /* items attached */
} Open;

typedef struct TreeSink {
    ReplySink base;
    Client *client; /* its protocol is the client's of the moment (HELLO in a call) */
    int resp;
    RedisModuleCallReply *root;
    RedisModuleCallReply *pendingAttr; /* annotates the next item */
    Open stack[CALL_DEPTH_MAX];
    int depth;
    int overflow; /* nesting beyond CALL_DEPTH_MAX: the rest is dropped */
} TreeSink;

static void closeFinished(TreeSink *k);

/* Adds a complete or opening item where it belongs. */
static void attach(TreeSink *k, RedisModuleCallReply *r) {
    if (k->pendingAttr && r->type != REDISMODULE_REPLY_ATTRIBUTE) {
        r->attribute = k->pendingAttr;
        k->pendingAttr = NULL;
    }
    if (k->depth == 0) {
        if (!k->root) k->root = r;
        else moduleFreeCallReplyTree(r); /* a second top-level item: ignored */
        return;
    }
    Open *o = &k->stack[k->depth - 1];
    if (o->count == o->cap) {
        o->cap = o->cap ? o->cap * 2 : 4;
        o->node->el = xrealloc(o->node->el, sizeof(*o->node->el) * o->cap);
    }
    o->node->el[o->count++] = r;
    if (o->remaining > 0) o->remaining--;
}

static void leaf(TreeSink *k, RedisModuleCallReply *r) {
    if (k->overflow) {
        moduleFreeCallReplyTree(r);
        return;
    }
    attach(k, r);
    closeFinished(k);
}

static void setLen(RedisModuleCallReply *n, size_t items) {
    n->len = (n->type == REDISMODULE_REPLY_MAP || n->type == REDISMODULE_REPLY_ATTRIBUTE) ? items / 2 : items;
}

static void closeFinished(TreeSink *k) {
    while (k->depth > 0 && k->stack[k->depth - 1].remaining == 0) {
        Open *o = &k->stack[--k->depth];
        setLen(o->node, o->count);
        if (o->node->type == REDISMODULE_REPLY_ATTRIBUTE) {
            /* detach it from its parent: it annotates the next item */
            if (k->depth > 0) {
                Open *p = &k->stack[k->depth - 1];
                p->count--;
                if (p->remaining >= 0) p->remaining++;
            } else {
                k->root = NULL;
            }
            moduleFreeCallReplyTree(k->pendingAttr);
            k->pendingAttr = o->node;
        }
    }
}

static void sinkStatus(ReplySink *s, const char *p, size_t len) {
    TreeSink *k = (TreeSink *)s;
    if (k->client) k->resp = k->client->resp;
    RedisModuleCallReply *r = nodeNew(REDISMODULE_REPLY_STRING, k->resp);
    r->str = sdsNewLen(p, len);
    r->integer = 1; /* status: proto is +... */
    leaf(k, r);
}

static void sinkError(ReplySink *s, const char *p, size_t len) {
    TreeSink *k = (TreeSink *)s;
    if (k->client) k->resp = k->client->resp;
    RedisModuleCallReply *r = nodeNew(REDISMODULE_REPLY_ERROR, k->resp);
    r->str = sdsNewLen(p, len);
    leaf(k, r);
}

static void sinkInteger(ReplySink *s, long long v) {
    TreeSink *k = (TreeSink *)s;
    if (k->client) k->resp = k->client->resp;
    RedisModuleCallReply *r = nodeNew(REDISMODULE_REPLY_INTEGER, k->resp);
    r->integer = v;
    leaf(k, r);
}

static void sinkBulk(ReplySink *s, const char *p, size_t len) {
    TreeSink *k = (TreeSink *)s;
    if (k->client) k->resp = k->client->resp;
    RedisModuleCallReply *r = nodeNew(REDISMODULE_REPLY_STRING, k->resp);
    r->str = sdsNewLen(p, len);
    leaf(k, r);
}

static void sinkDouble(ReplySink *s, double d) {
    TreeSink *k = (TreeSink *)s;
    if (k->client) k->resp = k->client->resp;
    if (k->resp == 2) {
        char buf[RESP_HEADER_MAX + 128];
        size_t n = respWriteDouble(buf, 2, d);
        /* "$<len>\r\n<text>\r\n": keep the text */
        char *text = memchr(buf, '\n', n);
        sinkBulk(s, text + 1, (size_t)(buf + n - 2 - (text + 1)));
        return;
    }
    RedisModuleCallReply *r = nodeNew(REDISMODULE_REPLY_DOUBLE, k->resp);
    r->dbl = d;
    leaf(k, r);
}

static void sinkNull(ReplySink *s, ReplyNullKind kind) {
    TreeSink *k = (TreeSink *)s;
    if (k->client) k->resp = k->client->resp;
    RedisModuleCallReply *r = nodeNew(REDISMODULE_REPLY_NULL, k->resp);
    r->integer = kind; /* RESP2 proto: $-1 or *-1 */
    leaf(k, r);
}

static void sinkBoolean(ReplySink *s, int b) {
    TreeSink *k = (TreeSink *)s;
    if (k->client) k->resp = k->client->resp;
    if (k->resp == 2) {
        sinkInteger(s, b ? 1 : 0);
        return;
    }
    RedisModuleCallReply *r = nodeNew(REDISMODULE_REPLY_BOOL, k->resp);
    r->integer = b != 0;
    leaf(k, r);
}

static void sinkBigNumber(ReplySink *s, const char *p, size_t len) {
    TreeSink *k = (TreeSink *)s;
    if (k->client) k->resp = k->client->resp;
    if (k->resp == 2) {
        sinkBulk(s, p, len);
        return;
    }
    RedisModuleCallReply *r = nodeNew(REDISMODULE_REPLY_BIG_NUMBER, k->resp);
    r->str = sdsNewLen(p, len);
    leaf(k, r);
}

static void sinkVerbatim(ReplySink *s, const char *p, size_t len, const char *ext) {
    TreeSink *k = (TreeSink *)s;
    if (k->client) k->resp = k->client->resp;
    if (k->resp == 2) {
        sinkBulk(s, p, len);
        return;
    }
    RedisModuleCallReply *r = nodeNew(REDISMODULE_REPLY_VERBATIM_STRING, k->resp);
    r->str = sdsNewLen(p, len);
    memcpy(r->fmt, ext, 3);
    leaf(k, r);
}

static int typeOfAggregate(int resp, ReplyAggregate kind) {
    if (resp == 2) return REDISMODULE_REPLY_ARRAY;
    switch (kind) {
    case REPLY_MAP: return REDISMODULE_REPLY_MAP;
    case REPLY_SET: return REDISMODULE_REPLY_SET;
    case REPLY_ATTRIBUTE: return REDISMODULE_REPLY_ATTRIBUTE;
    default: return REDISMODULE_REPLY_ARRAY;
    }
}

static void openAggregate(TreeSink *k, int type, long items) {
    if (k->overflow || k->depth == CALL_DEPTH_MAX) {
        k->overflow++;
        return;
    }
    RedisModuleCallReply *r = nodeNew(type, k->resp);
    attach(k, r);
    Open *o = &k->stack[k->depth++];
    o->node = r;
    o->remaining = items;
    o->cap = 0;
    o->count = 0;
    if (items > 0) {
        o->cap = (size_t)items < 1024 ? (size_t)items : 1024;
        r->el = xmalloc(sizeof(*r->el) * o->cap);
    }
    closeFinished(k);
}

static void sinkAggregate(ReplySink *s, ReplyAggregate kind, long n) {
    TreeSink *k = (TreeSink *)s;
    if (k->client) k->resp = k->client->resp;
    if (n < 0) {
        sinkNull(s, REPLY_NULL_ARRAY);
        return;
    }
    if (k->resp == 2 && kind == REPLY_ATTRIBUTE) {
        /* RESP2 has no attributes: the pairs are dropped */
        openAggregate(k, REDISMODULE_REPLY_ATTRIBUTE, 2 * n);
        return;
    }
    int type = typeOfAggregate(k->resp, kind);
    long items = (kind == REPLY_MAP || kind == REPLY_ATTRIBUTE) ? 2 * n : n;
    openAggregate(k, type, items);
}

static void *sinkDeferred(ReplySink *s) {
    TreeSink *k = (TreeSink *)s;
    if (k->client) k->resp = k->client->resp;
    openAggregate(k, REDISMODULE_REPLY_ARRAY, -1);
    return k->overflow ? (void *)k : (void *)k->stack[k->depth - 1].node;
}

static void sinkSetDeferred(ReplySink *s, void *node, ReplyAggregate kind, long n) {
    TreeSink *k = (TreeSink *)s;
    if (k->client) k->resp = k->client->resp;
    (void)n;
    if (k->overflow) {
        k->overflow--;
        return;
    }
    for (int i = k->depth - 1; i >= 0; i--) {
        if (k->stack[i].node == node) {
            k->stack[i].node->type = typeOfAggregate(k->resp, kind);
            k->stack[i].remaining = 0;
            /* close it and anything opened after it */
            while (k->depth > i + 1) {
                Open *o = &k->stack[--k->depth];
                setLen(o->node, o->count);
            }
            closeFinished(k);
            return;
        }
    }
}

static const ReplySinkType treeSinkType = {
    .name = "module-call",
    .status = sinkStatus,
    .error = sinkError,
    .integer = sinkInteger,
    .dbl = sinkDouble,
    .bulk = sinkBulk,
    .null = sinkNull,
    .boolean = sinkBoolean,
    .bigNumber = sinkBigNumber,
    .verbatim = sinkVerbatim,
    .aggregate = sinkAggregate,
    .deferred = sinkDeferred,
    .setDeferred = sinkSetDeferred,
    .raw = NULL,
    .push = NULL,
};

/* ---- RedisModule_Call ---- */

#define CALL_REPLICATE (1 << 0)
#define CALL_NO_AOF (1 << 1)
#define CALL_NO_REPLICAS (1 << 2)
#define CALL_RESP3 (1 << 3)
#define CALL_RESP_AUTO (1 << 4)
#define CALL_RUN_AS_USER (1 << 5)
#define CALL_SCRIPT_MODE (1 << 6)
#define CALL_NO_WRITES (1 << 7)
#define CALL_ERRORS_AS_REPLIES (1 << 8)
#define CALL_RESPECT_DENY_OOM (1 << 9)

static Client *idleFake;

/* argv from the format; NULL on a bad format (errno EINVAL). */
sds *moduleBuildArgv(const char *cmdname, const char *fmt, va_list ap, int *argcOut, int *flagsOut) {
    int cap = 8, argc = 0, flags = 0;
    sds *argv = xmalloc(sizeof(sds) * (size_t)cap);
    argv[argc++] = sdsNew(cmdname);
    for (const char *p = fmt; *p; p++) {
        sds add = NULL;
        RedisModuleString **vec = NULL;
        size_t veclen = 0;
        switch (*p) {
        case 'c': add = sdsNew(va_arg(ap, char *)); break;
        case 's': {
            RedisModuleString *s = va_arg(ap, RedisModuleString *);
            add = sdsNewLen(s->s, sdsLen(s->s));
            break;
        }
        case 'b': {
            char *buf = va_arg(ap, char *);
            size_t len = va_arg(ap, size_t);
            add = sdsNewLen(buf, len);
            break;
        }
        case 'l': add = sdsFromLongLong(va_arg(ap, long long)); break;
        case 'v':
            vec = va_arg(ap, RedisModuleString **);
            veclen = va_arg(ap, size_t);
            break;
        case '!': flags |= CALL_REPLICATE; break;
        case 'A': flags |= CALL_NO_AOF; break;
        case 'R': flags |= CALL_NO_REPLICAS; break;
        case '3': flags |= CALL_RESP3; break;
        case '0': flags |= CALL_RESP_AUTO; break;
        case 'C': flags |= CALL_RUN_AS_USER; break;
        case 'S': flags |= CALL_SCRIPT_MODE; break;
        case 'W': flags |= CALL_NO_WRITES; break;
        case 'E': flags |= CALL_ERRORS_AS_REPLIES; break;
        case 'M': flags |= CALL_RESPECT_DENY_OOM; break;
        default:
            for (int i = 0; i < argc; i++) sdsFree(argv[i]);
            xfree(argv);
            errno = EINVAL;
            return NULL;
        }
        size_t need = (size_t)argc + (add ? 1 : veclen);
        if (need > (size_t)cap) {
            while ((size_t)cap < need) cap *= 2;
            argv = xrealloc(argv, sizeof(sds) * (size_t)cap);
        }
        if (add) argv[argc++] = add;
        for (size_t i = 0; i < veclen; i++) argv[argc++] = sdsNewLen(vec[i]->s, sdsLen(vec[i]->s));
    }
    *argcOut = argc;
    *flagsOut = flags;
    return argv;
}

static void freeArgv(sds *argv, int argc) {
    for (int i = 0; i < argc; i++) sdsFree(argv[i]);
    xfree(argv);
}

static RedisModuleCallReply *errorReply(RedisModuleCtx *ctx, int resp, sds msg) {
    RedisModuleCallReply *r = nodeNew(REDISMODULE_REPLY_ERROR, resp);
    r->str = msg;
    r->ctx = ctx;
    moduleAutoAdd(ctx, AM_REPLY, r);
    return r;
}

/* A refusal before the command runs: NULL with errno, or with "E" an
 * error reply with Redis's message. */
static RedisModuleCallReply *refuse(RedisModuleCtx *ctx, int flags, int resp, int err, sds msg) {
    if (flags & CALL_ERRORS_AS_REPLIES) return errorReply(ctx, resp, msg);
    sdsFree(msg);
    errno = err;
    return NULL;
}

static RedisModuleCallReply *RM_Call(RedisModuleCtx *ctx, const char *cmdname, const char *fmt, ...) {
    moduleAssertGil("RedisModule_Call");
    int argc = 0, flags = 0;
    va_list ap;
    va_start(ap, fmt);
    sds *argv = moduleBuildArgv(cmdname, fmt, ap, &argc, &flags);
    va_end(ap);
    if (!argv) return NULL;
    if (__builtin_expect(dispatchCommandFilter != NULL, 0)) {
        sds *nv = moduleFilterArgv(ctx->module, argv, &argc);
        if (nv) {
            xfree(argv);
            argv = nv;
        }
        if (argc == 0) {
            xfree(argv);
            errno = EINVAL;
            return NULL;
        }
    }
    Client *caller = ctx->client;
    int resp = (flags & CALL_RESP3) ? 3 : ((flags & CALL_RESP_AUTO) && caller) ? caller->resp : 2;
    /* The existence and arity checks give processCommand's errors. */
    Command *cmd = commandLookup(argv[0], sdsLen(argv[0]));
    if (!cmd) {
        sds args = sdsEmpty();
        for (int i = 1; i < argc && sdsLen(args) < 128; i++)
            args = sdsCatPrintf(args, "'%.*s' ", 128 - (int)sdsLen(args), argv[i]);
        sds msg = sdsCatPrintf(sdsEmpty(), "ERR unknown command '%.128s', with args beginning with: %s", argv[0], args);
        sdsFree(args);
        freeArgv(argv, argc);
        return refuse(ctx, flags, resp, ENOENT, msg);
    }
    if (cmd->subcommands && argc >= 2) {
        Command *sub = commandLookupSub(cmd, argv[1], sdsLen(argv[1]));
        if (!sub) {
            sds up = sdsNew(argv[0]);
            sdsToUpper(up);
            sds msg = sdsCatPrintf(sdsEmpty(), "ERR unknown subcommand '%.128s'. Try %s HELP.", argv[1], up);
            sdsFree(up);
            freeArgv(argv, argc);
            return refuse(ctx, flags, resp, ENOENT, msg);
        }
        cmd = sub;
    }
    if ((cmd->arity > 0 && cmd->arity != argc) || argc < -cmd->arity) {
        sds msg = sdsCatPrintf(sdsEmpty(), "ERR wrong number of arguments for '%s' command", cmd->fullname);
        freeArgv(argv, argc);
        return refuse(ctx, flags, resp, EINVAL, msg);
    }
    if ((flags & CALL_SCRIPT_MODE) && (cmd->flags & CMD_NOSCRIPT)) {
        sds msg = sdsCatPrintf(sdsEmpty(), "ERR command '%s' is not allowed on script mode", cmd->fullname);
        freeArgv(argv, argc);
        return refuse(ctx, flags, resp, ESPIPE, msg);
    }
    if ((flags & CALL_NO_WRITES) && (cmd->flags & CMD_WRITE)) {
        sds msg = sdsCatPrintf(sdsEmpty(), "ERR Write command '%s' was called while write is not allowed.",
                               cmd->fullname);
        freeArgv(argv, argc);
        return refuse(ctx, flags, resp, ENOSPC, msg);
    }
    if ((flags & CALL_RESPECT_DENY_OOM) && (cmd->flags & CMD_DENYOOM) && server.cfg.maxmemory &&
        xmallocUsed() > server.cfg.maxmemory) {
        freeArgv(argv, argc);
        return refuse(ctx, flags, resp, ENOSPC, sdsNew(ERR_OOM));
    }
    if ((flags & CALL_RUN_AS_USER) && (caller || moduleCtxUser(ctx))) {
        const char *denied = aclModuleCheckAs(caller, moduleCtxUser(ctx), cmd, argc, argv);
        if (denied) {
            freeArgv(argv, argc);
            return refuse(ctx, flags, resp, EACCES, sdsNew(denied));
        }
    }
    Client *fake = idleFake ? idleFake : clientCreateFake();
    idleFake = NULL;
    fake->flags |= CLIENT_PROTECTED;
    if (caller) fake->db = caller->db;
    fake->user = NULL; /* runs unchecked, as Redis's module client */
    TreeSink sink; /* its stack is used up to depth: not cleared */
    sink.root = NULL;
    sink.pendingAttr = NULL;
    sink.depth = 0;
    sink.overflow = 0;
    sink.base.type = &treeSinkType;
    sink.resp = resp;
    sink.client = fake;
    fake->argv = argv;
    fake->argc = argc;
    fake->resp = resp;
    fake->sink = &sink.base;
    fake->flags |= CLIENT_REPLY_SINK;
    int target = 0;
    if (flags & CALL_REPLICATE) {
        target = EFFECT_ALL;
        if (flags & CALL_NO_AOF) target &= ~EFFECT_AOF;
        if (flags & CALL_NO_REPLICAS) target &= ~EFFECT_REPL;
    }
    int mask = effectsSetCallMask(target);
    callCommand(fake, cmd);
    effectsSetCallMask(mask);
    fake->flags &= ~(CLIENT_REPLY_SINK | CLIENT_PROTECTED);
    fake->sink = NULL;
    /* the command may have replaced argv (clientAdoptArg, rewrites) */
    freeArgv(fake->argv, fake->argc);
    fake->argv = NULL;
    fake->argc = 0;
    fake->user = NULL;
    if (caller && fake->db != caller->db) fake->db = caller->db;
    /* Each call runs on a client as new (Redis makes one per call): one the
     * command left with state (MULTI, WATCH, subscriptions, tracking, a
     * name, a reply mode) is freed, not reused. */
    int dirty = (fake->flags & (CLIENT_MULTI | CLIENT_DIRTY_CAS | CLIENT_DIRTY_EXEC | CLIENT_PUBSUB |
                                CLIENT_TRACKING | CLIENT_REPLY_OFF | CLIENT_REPLY_SKIP_NEXT | CLIENT_NO_EVICT |
                                CLIENT_NO_TOUCH | CLIENT_CLOSE_AFTER_REPLY | CLIENT_CLOSE_ASAP)) ||
                fake->multiState || fake->watchState || fake->pubsubState || fake->trackingState || fake->name;
    if (!idleFake && !dirty) idleFake = fake;
    else clientFree(fake);
    while (sink.depth > 0) { /* an unfinished aggregate: close what came */
        Open *o = &sink.stack[--sink.depth];
        setLen(o->node, o->count);
    }
    moduleFreeCallReplyTree(sink.pendingAttr);
    RedisModuleCallReply *r = sink.root;
    if (!r) r = nodeNew(REDISMODULE_REPLY_NULL, resp);
    r->ctx = ctx;
    moduleAutoAdd(ctx, AM_REPLY, r);
    return r;
}

RedisModuleCallReply *moduleCallCommand(RedisModuleCtx *ctx, const char *cmd, const char *arg) {
    RedisModuleCallReply *r = RM_Call(ctx, cmd, "cE", arg);
    if (r) {
        moduleAutoForget(ctx, r);
        r->ctx = NULL;
    }
    return r ? r : nodeNew(REDISMODULE_REPLY_NULL, 2);
}

/* ---- call reply accessors ---- */

static int RM_CallReplyType(RedisModuleCallReply *r) { return r ? r->type : REDISMODULE_REPLY_UNKNOWN; }

static long long RM_CallReplyInteger(RedisModuleCallReply *r) {
    return r && r->type == REDISMODULE_REPLY_INTEGER ? r->integer : LLONG_MIN;
}

static double RM_CallReplyDouble(RedisModuleCallReply *r) {
    return r && r->type == REDISMODULE_REPLY_DOUBLE ? r->dbl : 0.0;
}

static int RM_CallReplyBool(RedisModuleCallReply *r) {
    return r && r->type == REDISMODULE_REPLY_BOOL ? (int)r->integer : 0;
}

static const char *RM_CallReplyBigNumber(RedisModuleCallReply *r, size_t *len) {
    if (!r || r->type != REDISMODULE_REPLY_BIG_NUMBER) return NULL;
    *len = sdsLen(r->str);
    return r->str;
}

static const char *RM_CallReplyVerbatim(RedisModuleCallReply *r, size_t *len, const char **format) {
    if (!r || r->type != REDISMODULE_REPLY_VERBATIM_STRING) return NULL;
    *len = sdsLen(r->str);
    if (format) *format = r->fmt;
    return r->str;
}

static size_t RM_CallReplyLength(RedisModuleCallReply *r) {
    if (!r) return 0;
    switch (r->type) {
    case REDISMODULE_REPLY_STRING:
    case REDISMODULE_REPLY_ERROR:
    case REDISMODULE_REPLY_BIG_NUMBER:
    case REDISMODULE_REPLY_VERBATIM_STRING: return sdsLen(r->str);
    case REDISMODULE_REPLY_ARRAY:
    case REDISMODULE_REPLY_SET:
    case REDISMODULE_REPLY_MAP:
    case REDISMODULE_REPLY_ATTRIBUTE: return r->len;
    default: return 0;
    }
}

const char *moduleCallReplyString(RedisModuleCallReply *r, size_t *len) {
    if (!r || r->type != REDISMODULE_REPLY_STRING) return NULL;
    *len = sdsLen(r->str);
    return r->str;
}

static RedisModuleCallReply *RM_CallReplyArrayElement(RedisModuleCallReply *r, size_t idx) {
    if (!r || r->type != REDISMODULE_REPLY_ARRAY || idx >= r->len) return NULL;
    return r->el[idx];
}

static RedisModuleCallReply *RM_CallReplySetElement(RedisModuleCallReply *r, size_t idx) {
    if (!r || r->type != REDISMODULE_REPLY_SET || idx >= r->len) return NULL;
    return r->el[idx];
}

static int pairElement(RedisModuleCallReply *r, int type, size_t idx, RedisModuleCallReply **key,
                       RedisModuleCallReply **val) {
    if (!r || r->type != type || idx >= r->len) return REDISMODULE_ERR;
    if (key) *key = r->el[2 * idx];
    if (val) *val = r->el[2 * idx + 1];
    return REDISMODULE_OK;
}

static int RM_CallReplyMapElement(RedisModuleCallReply *r, size_t idx, RedisModuleCallReply **key,
                                  RedisModuleCallReply **val) {
    return pairElement(r, REDISMODULE_REPLY_MAP, idx, key, val);
}

static int RM_CallReplyAttributeElement(RedisModuleCallReply *r, size_t idx, RedisModuleCallReply **key,
                                        RedisModuleCallReply **val) {
    return pairElement(r, REDISMODULE_REPLY_ATTRIBUTE, idx, key, val);
}

static RedisModuleCallReply *RM_CallReplyAttribute(RedisModuleCallReply *r) { return r ? r->attribute : NULL; }

static const char *RM_CallReplyStringPtr(RedisModuleCallReply *r, size_t *len) {
    if (!r || (r->type != REDISMODULE_REPLY_STRING && r->type != REDISMODULE_REPLY_ERROR)) return NULL;
    if (len) *len = sdsLen(r->str);
    return r->str;
}

static RedisModuleString *RM_CreateStringFromCallReply(RedisModuleCallReply *r) {
    if (!r) return NULL;
    RedisModuleCtx *ctx = r->ctx;
    switch (r->type) {
    case REDISMODULE_REPLY_STRING:
    case REDISMODULE_REPLY_ERROR: return modStringNew(ctx, r->str, sdsLen(r->str));
    case REDISMODULE_REPLY_INTEGER: return modStringTake(ctx, sdsFromLongLong(r->integer));
    default: return NULL;
    }
}

/* Only the root is freed (its elements go with it), as in Redis. */
static void RM_FreeCallReply(RedisModuleCallReply *r) {
    if (!r) return;
    if (r->ctx) moduleAutoForget(r->ctx, r);
    if (r->ctx || !r->resp) moduleFreeCallReplyTree(r);
}

/* ---- RESP encoding of a node (CallReplyProto, ReplyWithCallReply) ---- */

static sds catProto(sds s, const RedisModuleCallReply *r) {
    char buf[RESP_HEADER_MAX + 128];
    size_t n;
    if (r->attribute) s = catProto(s, r->attribute);
    switch (r->type) {
    case REDISMODULE_REPLY_STRING:
        if (r->integer == 1) return sdsCatLen(sdsCatLen(sdsCatLen(s, "+", 1), r->str, sdsLen(r->str)), "\r\n", 2);
        return respCatBulk(s, r->str, sdsLen(r->str));
    case REDISMODULE_REPLY_ERROR: return sdsCatLen(sdsCatLen(sdsCatLen(s, "-", 1), r->str, sdsLen(r->str)), "\r\n", 2);
    case REDISMODULE_REPLY_INTEGER: n = respWriteInteger(buf, r->integer); return sdsCatLen(s, buf, n);
    case REDISMODULE_REPLY_NULL: {
        const char *p = respNull(r->resp, (ReplyNullKind)r->integer, &n);
        return sdsCatLen(s, p, n);
    }
    case REDISMODULE_REPLY_BOOL: return sdsCat(s, respBoolean(r->resp, (int)r->integer));
    case REDISMODULE_REPLY_DOUBLE: n = respWriteDouble(buf, r->resp, r->dbl); return sdsCatLen(s, buf, n);
    case REDISMODULE_REPLY_BIG_NUMBER:
        n = respWriteBigNumberHeader(buf, r->resp, sdsLen(r->str));
        return sdsCatLen(sdsCatLen(sdsCatLen(s, buf, n), r->str, sdsLen(r->str)), "\r\n", 2);
    case REDISMODULE_REPLY_VERBATIM_STRING:
        n = respWriteVerbatimHeader(buf, r->resp, sdsLen(r->str), r->fmt);
        return sdsCatLen(sdsCatLen(sdsCatLen(s, buf, n), r->str, sdsLen(r->str)), "\r\n", 2);
    default: break;
    }
    ReplyAggregate kind = r->type == REDISMODULE_REPLY_MAP         ? REPLY_MAP
                          : r->type == REDISMODULE_REPLY_SET       ? REPLY_SET
                          : r->type == REDISMODULE_REPLY_ATTRIBUTE ? REPLY_ATTRIBUTE
                                                                   : REPLY_ARRAY;
    n = respWriteAggregate(buf, r->resp, kind, (long)r->len);
    s = sdsCatLen(s, buf, n);
    size_t items = (kind == REPLY_MAP || kind == REPLY_ATTRIBUTE) ? 2 * r->len : r->len;
    for (size_t i = 0; i < items; i++) s = catProto(s, r->el[i]);
    return s;
}

static const char *RM_CallReplyProto(RedisModuleCallReply *r, size_t *len) {
    if (!r) return NULL;
    if (!r->proto) r->proto = catProto(sdsEmpty(), r);
    *len = sdsLen(r->proto);
    return r->proto;
}

/* Replies the node to the context's client through the reply API, in the
 * client's protocol. */
static void replyNode(Client *c, const RedisModuleCallReply *r) {
    if (r->attribute && c->resp >= 3) replyNode(c, r->attribute);
    switch (r->type) {
    case REDISMODULE_REPLY_STRING:
        if (r->integer == 1) replyStatusLen(c, r->str, sdsLen(r->str));
        else replyBulk(c, r->str, sdsLen(r->str));
        return;
    case REDISMODULE_REPLY_ERROR: {
        sds e = sdsCatSds(sdsNew("-"), r->str);
        replyErrorLen(c, e, sdsLen(e));
        sdsFree(e);
        return;
    }
    case REDISMODULE_REPLY_INTEGER: replyLongLong(c, r->integer); return;
    case REDISMODULE_REPLY_NULL:
        if (r->integer == REPLY_NULL_ARRAY) replyNullArray(c);
        else replyNull(c);
        return;
    case REDISMODULE_REPLY_BOOL: replyBool(c, (int)r->integer); return;
    case REDISMODULE_REPLY_DOUBLE: replyDouble(c, r->dbl); return;
    case REDISMODULE_REPLY_BIG_NUMBER: replyBigNumber(c, r->str, sdsLen(r->str)); return;
    case REDISMODULE_REPLY_VERBATIM_STRING: replyVerbatim(c, r->str, sdsLen(r->str), r->fmt); return;
    case REDISMODULE_REPLY_MAP: replyMapLen(c, (long)r->len); break;
    case REDISMODULE_REPLY_SET: replySetLen(c, (long)r->len); break;
    case REDISMODULE_REPLY_ATTRIBUTE:
        if (c->resp < 3) return;
        replyAttributeLen(c, (long)r->len);
        break;
    default: replyArrayLen(c, (long)r->len); break;
    }
    size_t items = (r->type == REDISMODULE_REPLY_MAP || r->type == REDISMODULE_REPLY_ATTRIBUTE) ? 2 * r->len : r->len;
    for (size_t i = 0; i < items; i++) replyNode(c, r->el[i]);
}

/* As Redis 7.0: the reply's own bytes go to the client, whatever its
 * protocol (a RESP3 reply reaches a RESP2 client as RESP3); an error
 * reply is counted as the client's error.  A client with a reply sink
 * (a script calling the command) gets the items. */
static int RM_ReplyWithCallReply(RedisModuleCtx *ctx, RedisModuleCallReply *reply) {
    Client *c = ctx->client;
    if (!c) return REDISMODULE_OK;
    /* Strings, integers and errors have the same bytes in both protocols:
     * replied directly, without building the proto. */
    int leaf = !reply->attribute && (reply->type == REDISMODULE_REPLY_STRING || reply->type == REDISMODULE_REPLY_INTEGER);
    if (leaf || reply->type == REDISMODULE_REPLY_ERROR || (c->flags & CLIENT_REPLY_SINK)) {
        replyNode(c, reply);
        return REDISMODULE_OK;
    }
    size_t len;
    const char *p = RM_CallReplyProto(reply, &len);
    replyRaw(c, p, len);
    return REDISMODULE_OK;
}

/* ---- replication ---- */

static int RM_Replicate(RedisModuleCtx *ctx, const char *cmdname, const char *fmt, ...) {
    int argc = 0, flags = 0;
    va_list ap;
    va_start(ap, fmt);
    sds *argv = moduleBuildArgv(cmdname, fmt, ap, &argc, &flags);
    va_end(ap);
    if (!argv) return REDISMODULE_ERR;
    Command *cmd = commandLookupArgv(argc, argv);
    if (!cmd) {
        freeArgv(argv, argc);
        return REDISMODULE_ERR;
    }
    int target = EFFECT_ALL;
    if (flags & CALL_NO_AOF) target &= ~EFFECT_AOF;
    if (flags & CALL_NO_REPLICAS) target &= ~EFFECT_REPL;
    if (effectsOn && target) {
        EffectArg *args = xmalloc(sizeof(EffectArg) * (size_t)argc);
        for (int i = 0; i < argc; i++) args[i] = EA_SDS(argv[i]);
        int dbid = ctx->client ? ctx->client->db->id : 0;
        effectsAlsoTo(dbid, target, argc, args);
        xfree(args);
    }
    freeArgv(argv, argc);
    return REDISMODULE_OK;
}

static int RM_ReplicateVerbatim(RedisModuleCtx *ctx) {
    Client *c = ctx->client;
    if (!c) return REDISMODULE_ERR;
    if (effectsOn) {
        EffectArg *args = xmalloc(sizeof(EffectArg) * (size_t)c->argc);
        for (int i = 0; i < c->argc; i++) args[i] = EA_SDS(c->argv[i]);
        effectsAlso(c->db->id, c->argc, args);
        xfree(args);
    }
    serverIncrDirty(1);
    return REDISMODULE_OK;
}

#define API(fn) {"RedisModule_" #fn, (void *)(uintptr_t)RM_##fn}
const ApiEntry moduleCallApi[] = {API(Call),
                                  API(CallReplyProto),
                                  API(FreeCallReply),
                                  API(CallReplyType),
                                  API(CallReplyInteger),
                                  API(CallReplyDouble),
                                  API(CallReplyBool),
                                  API(CallReplyBigNumber),
                                  API(CallReplyVerbatim),
                                  API(CallReplySetElement),
                                  API(CallReplyMapElement),
                                  API(CallReplyAttributeElement),
                                  API(CallReplyAttribute),
                                  API(CallReplyLength),
                                  API(CallReplyArrayElement),
                                  API(CallReplyStringPtr),
                                  API(CreateStringFromCallReply),
                                  API(ReplyWithCallReply),
                                  API(Replicate),
                                  API(ReplicateVerbatim),
                                  {NULL, NULL}};
