/* reply.c -- the reply API: each call is one reply item
 * (proto/reply_sink.h), written as RESP2/RESP3 bytes into the client's
 * output buffers, or handed to the client's own sink; and the argument
 * helpers that reply their own errors.
 *
 * What is the server's and not the protocol's is done here for every
 * client: error counting (INFO errorstats), the "ERR " prefix of errors
 * without a code, CLIENT REPLY OFF / SKIP, a client closing.  Then one flag
 * test (REPLY_SLOW_FLAGS) per item picks the path: the common one writes
 * the bytes proto/resp_write.h encodes, with no indirect call; otherwise
 * the item is dropped (replies off, except inside a push message; the
 * client closing) or goes to c->sink
 * (CLIENT_REPLY_SINK: redis.call's Lua values, later other protocols).
 *
 * Bytes go to c->buf while no block is queued, then to the tail block of the
 * chain (16 KB blocks, or larger for one big payload).  A deferred length
 * opened while the output is all in c->buf is a position there, the bytes
 * after it moved up when the length is known (two may be open, one nested
 * in the other, as XREAD's per-stream entries in its array of streams);
 * otherwise (or nested deeper) it is a small placeholder block whose bytes
 * are written later, and nothing is appended into a placeholder.  Every append marks the client as having
 * pending writes; net.c writes them before the loop sleeps.
 *
 * That byte path is exported as replyWriteBytes (core/reply_write.h) for
 * the encoders that are not this file's RESP: a sink writing its own
 * format, the push encoders (core/push.c). */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "core/client.h"
#include "core/errors.h"
#include "core/log.h"
#include "core/net.h"
#include "core/reply_write.h"
#include "core/server.h"
#include "ds/alloc.h"
#include "ds/util.h"
#include "proto/resp_write.h"

#define REPLY_BLOCK_SIZE (16 * 1024)

/* Any of these takes a reply off the RESP fast path. */
#define REPLY_SLOW_FLAGS (CLIENT_REPLY_OFF | CLIENT_REPLY_SKIP | CLIENT_CLOSE_ASAP | CLIENT_REPLY_SINK)

static inline int replySlow(const Client *c) { return __builtin_expect((c->flags & REPLY_SLOW_FLAGS) != 0, 0); }

/* On the slow path: 1 when the item is not written as RESP bytes, with *k
 * the sink that takes it instead, or NULL when it is dropped: a client
 * closing now, or CLIENT REPLY OFF|SKIP unless the item belongs to a push
 * message.  0: write it as usual. */
static int notResp(const Client *c, ReplySink **k) {
    unsigned f = c->flags;
    *k = NULL;
    if (f & CLIENT_CLOSE_ASAP) return 1;
    if ((f & (CLIENT_REPLY_OFF | CLIENT_REPLY_SKIP)) && !(f & CLIENT_PUSHING)) return 1;
    if (f & CLIENT_REPLY_SINK) {
        *k = c->sink;
        return 1;
    }
    return 0;
}

static ReplyBlock *newBlock(size_t size) {
    ReplyBlock *b = xmalloc(sizeof(ReplyBlock) + size);
    b->next = NULL;
    b->size = size;
    b->used = 0;
    b->deferred = 0;
    b->pinned = NULL;
    b->ref = NULL;
    b->refLen = 0;
    return b;
}

void replyBlockFree(ReplyBlock *b) {
    if (b->pinned) sdsUnpin(b->pinned);
    xfree(b);
}

static void appendBlock(Client *c, ReplyBlock *b) {
    if (c->replyTail) c->replyTail->next = b;
    else c->replyHead = b;
    c->replyTail = b;
    c->replyBlocks++;
    c->replyAllocBytes += sizeof(ReplyBlock) + b->size;
}

/* Copy bytes into the output, growing the chain as needed.  The caller has
 * checked that the client takes RESP bytes now (not replySlow). */
static void addBytes(Client *c, const void *p, size_t len) {
    if (len == 0) return;
    netMarkPendingWrite(c);
    const char *s = p;
    if (!c->replyHead) {
        size_t room = c->bufSize - c->bufpos;
        size_t n = len < room ? len : room;
        memcpy(c->buf + c->bufpos, s, n);
        c->bufpos += n;
        s += n;
        len -= n;
        if (!len) return;
    }
    ReplyBlock *t = c->replyTail;
    if (t && !t->deferred && t->used < t->size) {
        size_t room = t->size - t->used;
        size_t n = len < room ? len : room;
        memcpy(t->buf + t->used, s, n);
        t->used += n;
        c->replyBytes += n;
        s += n;
        len -= n;
    }
    if (len) {
        ReplyBlock *b = newBlock(len > REPLY_BLOCK_SIZE ? len : REPLY_BLOCK_SIZE);
        memcpy(b->buf, s, len);
        b->used = len;
        c->replyBytes += len;
        appendBlock(c, b);
    }
    netCheckOutputLimits(c);
}

void replyWriteBytes(Client *c, const void *p, size_t len) { addBytes(c, p, len); }

/* "<prefix bytes><payload>\r\n": one copy into c->buf when it fits there,
 * as most replies do. */
static void addFramed(Client *c, const char *head, size_t hlen, const void *p, size_t len) {
    if (!c->replyHead && len <= c->bufSize && c->bufSize - c->bufpos >= hlen + len + 2) {
        char *d = c->buf + c->bufpos;
        memcpy(d, head, hlen);
        memcpy(d + hlen, p, len);
        d[hlen + len] = '\r';
        d[hlen + len + 1] = '\n';
        c->bufpos += hlen + len + 2;
        netMarkPendingWrite(c);
        return;
    }
    addBytes(c, head, hlen);
    addBytes(c, p, len);
    addBytes(c, "\r\n", 2);
}

void replyRaw(Client *c, const void *p, size_t len) {
    ReplySink *k;
    if (replySlow(c) && notResp(c, &k)) {
        if (k && k->type->raw) k->type->raw(k, p, len);
        return;
    }
    addBytes(c, p, len);
}

void replyOk(Client *c) {
    ReplySink *k;
    if (replySlow(c) && notResp(c, &k)) {
        if (k) k->type->status(k, "OK", 2);
        return;
    }
    addBytes(c, "+OK\r\n", 5);
}

void replyStatusLen(Client *c, const char *s, size_t len) {
    ReplySink *k;
    if (replySlow(c) && notResp(c, &k)) {
        if (k) k->type->status(k, s, len);
        return;
    }
    addFramed(c, "+", 1, s, len);
}

void replyStatus(Client *c, const char *s) { replyStatusLen(c, s, strlen(s)); }

/* Count the error for INFO errorstats / total_error_replies.  Its code is
 * the text before the first space within its first 31 bytes, else ERR
 * ("nocode", a code of 32 letters or more), as Redis 7.0 counts.  Every
 * distinct code is kept (7.0 has no cap); a code found moves to the front
 * of the list, so the usual ones are found at once. */
static void countError(const char *err, size_t len) {
    server.stats.totalErrorReplies++;
    size_t plen = 0, scan = len < 31 ? len : 31;
    while (plen < scan && err[plen] != ' ') plen++;
    if (plen == scan) {
        err = "ERR";
        plen = 3;
    }
    ErrorStat *e, **link = &server.errorStats;
    for (e = server.errorStats; e; link = &e->next, e = e->next)
        if (strlen(e->prefix) == plen && memcmp(e->prefix, err, plen) == 0) break;
    if (e) {
        *link = e->next;
    } else {
        e = xcalloc(sizeof(*e));
        e->prefix = xmalloc(plen + 1);
        memcpy(e->prefix, err, plen);
        e->prefix[plen] = '\0';
    }
    e->next = server.errorStats;
    server.errorStats = e;
    e->count++;
}

void replyCountError(const char *err, size_t len) { countError(err, len); }

/* True when the text starts with an error code word (all capitals). */
static int hasErrorCode(const char *err, size_t len) {
    size_t i = 0;
    while (i < len && isupper((unsigned char)err[i])) i++;
    return i >= 2 && i < len && err[i] == ' ';
}

static void replyErrorCounted(Client *c, const char *err, size_t len, int count);

void replyErrorLen(Client *c, const char *err, size_t len) { replyErrorCounted(c, err, len, 1); }

void replyErrorLenNoStats(Client *c, const char *err, size_t len) { replyErrorCounted(c, err, len, 0); }

static void replyErrorCounted(Client *c, const char *err, size_t len, int count) {
    /* A leading '-' means the caller gives the code: the text goes as is. */
    int code = 1;
    if (len && err[0] == '-') {
        err++;
        len--;
    } else {
        code = hasErrorCode(err, len);
    }
    char stackbuf[512];
    size_t total = (code ? 0 : 4) + len;
    char *msg = total <= sizeof(stackbuf) ? stackbuf : xmalloc(total);
    size_t off = 0;
    if (!code) {
        memcpy(msg, "ERR ", 4);
        off = 4;
    }
    for (size_t i = 0; i < len; i++) msg[off + i] = (err[i] == '\r' || err[i] == '\n') ? ' ' : err[i];
    /* A counted error fails the command through total_error_replies
     * (dispatch.c); one not counted again fails it by itself, each one
     * (Redis adds a failed call per such error). */
    if (count) countError(msg, total);
    else c->errorReplied++;
    /* Errors are suppressed by CLIENT REPLY OFF too, as in Redis. */
    ReplySink *k;
    if (replySlow(c) && notResp(c, &k)) {
        if (k) k->type->error(k, msg, total);
    } else {
        addFramed(c, "-", 1, msg, total);
    }
    if (msg != stackbuf) xfree(msg);
}

void replyError(Client *c, const char *err) { replyErrorLen(c, err, strlen(err)); }

void replyErrorFormat(Client *c, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    sds s = sdsCatVPrintf(sdsEmpty(), fmt, ap);
    va_end(ap);
    replyErrorLen(c, s, sdsLen(s));
    sdsFree(s);
}

void replyErrorArity(Client *c) {
    const char *name = c->cmd ? c->cmd->fullname : c->argv[0];
    replyErrorFormat(c, "ERR wrong number of arguments for '%s' command", name);
}

void replyErrorSyntax(Client *c) { replyError(c, ERR_SYNTAX); }
void replyErrorWrongType(Client *c) { replyError(c, ERR_WRONGTYPE); }
void replyErrorNotInt(Client *c) { replyError(c, ERR_NOT_INT); }
void replyErrorNotFloat(Client *c) { replyError(c, ERR_NOT_FLOAT); }
void replyErrorOutOfRange(Client *c) { replyError(c, "ERR value is out of range, must be positive"); }

void replyLongLong(Client *c, long long v) {
    ReplySink *k;
    if (replySlow(c) && notResp(c, &k)) {
        if (k) k->type->integer(k, v);
        return;
    }
    char b[RESP_HEADER_MAX];
    addBytes(c, b, respWriteInteger(b, v));
}

static void replyBulkPinned(Client *c, sds owner, const char *p, size_t len);

/* A bulk reply.  `pinnable`: p[0..len) is a whole stored raw string value
 * (kvStringBytes), which a bulk too long for the buffers is sent from
 * (pinned) instead of copied; only such a value is REPLY_PIN_MIN long.
 * Inlined with a constant `pinnable`, so the test costs nothing on the
 * path of bulks that fit. */
static inline __attribute__((always_inline)) void bulk(Client *c, const char *p, size_t len, int pinnable) {
    ReplySink *k;
    if (replySlow(c) && notResp(c, &k)) {
        if (k) k->type->bulk(k, p, len);
        return;
    }
    /* Most bulks fit whole in c->buf: one copy, one pending-write mark. */
    if (!c->replyHead) {
        if (len <= c->bufSize && c->bufSize - c->bufpos >= len + RESP_HEADER_MAX + 2) {
            c->bufpos += respWriteBulk(c->buf + c->bufpos, p, len);
            netMarkPendingWrite(c);
            return;
        }
    } else {
        /* Or in the tail block (after a deferred length, or once c->buf
         * is full): one copy, one limits check. */
        ReplyBlock *t = c->replyTail;
        if (!t->deferred && t->size - t->used >= len + RESP_HEADER_MAX + 2) {
            size_t n = respWriteBulk(t->buf + t->used, p, len);
            t->used += n;
            c->replyBytes += n;
            netMarkPendingWrite(c);
            netCheckOutputLimits(c);
            return;
        }
    }
    if (pinnable && len >= REPLY_PIN_MIN) {
        replyBulkPinned(c, (sds)p, p, len);
        return;
    }
    char h[RESP_HEADER_MAX];
    addBytes(c, h, respWriteHeader(h, '$', (long long)len));
    addBytes(c, p, len);
    addBytes(c, "\r\n", 2);
}

void replyBulk(Client *c, const void *p, size_t len) { bulk(c, p, len, 0); }

void replyBulkCString(Client *c, const char *s) {
    if (!s) replyNull(c);
    else replyBulk(c, s, strlen(s));
}

void replyBulkSds(Client *c, const sds s) { replyBulk(c, s, sdsLen(s)); }

void replyBulkLongLong(Client *c, long long v) {
    char buf[32];
    int len = longLongToString(buf, sizeof(buf), v);
    replyBulk(c, buf, (size_t)len);
}

/* Room after a referenced value for what follows it: its "\r\n", and
 * the next replies' first bytes (a pipeline of big GETs then takes no
 * 16 KB block per value). */
#define REPLY_PIN_TAIL 240

/* A bulk of p[0..len), which lies in the string `owner`: sent from there,
 * the block holding a pin, when the client takes RESP bytes over a socket;
 * else (a sink, a fake client, SDS_PIN_MAX pins out) copied. */
static void replyBulkPinned(Client *c, sds owner, const char *p, size_t len) {
    if (replySlow(c) || clientIsFake(c) || sdsPin(owner) == -1) {
        replyBulk(c, p, len);
        return;
    }
    char h[RESP_HEADER_MAX];
    /* Redis would have filled its buffer with the value's first bytes: the
     * buffer counts as full for its resizing (net.c). */
    if (!c->replyHead) c->bufPeak = c->bufSize;
    addBytes(c, h, respWriteHeader(h, '$', (long long)len));
    ReplyBlock *b = newBlock(REPLY_PIN_TAIL);
    b->pinned = owner;
    b->ref = p;
    b->refLen = len;
    b->buf[0] = '\r';
    b->buf[1] = '\n';
    b->used = 2;
    appendBlock(c, b);
    c->replyBytes += len + 2;
    c->replyPinnedBytes += len;
    netCheckOutputLimits(c);
}

void replyBulkKv(Client *c, const kvobj *o) {
    char buf[24];
    size_t len;
    const char *p = kvStringBytes(o, buf, &len);
    bulk(c, p, len, 1);
}

void replyBulkKvPart(Client *c, const kvobj *o, const char *p, size_t len) {
    if (len >= REPLY_PIN_MIN && kvEncoding(o) == OBJ_ENC_RAW) replyBulkPinned(c, kvPtr(o), p, len);
    else replyBulk(c, p, len);
}

static void replyNullKind(Client *c, ReplyNullKind kind) {
    ReplySink *k;
    if (replySlow(c) && notResp(c, &k)) {
        if (k) k->type->null(k, kind);
        return;
    }
    size_t len;
    const char *p = respNull(c->resp, kind, &len);
    addBytes(c, p, len);
}

void replyNull(Client *c) { replyNullKind(c, REPLY_NULL_BULK); }
void replyNullArray(Client *c) { replyNullKind(c, REPLY_NULL_ARRAY); }

static void replyAggregate(Client *c, ReplyAggregate kind, long n) {
    ReplySink *k;
    if (replySlow(c) && notResp(c, &k)) {
        if (k) k->type->aggregate(k, kind, n);
        return;
    }
    char b[RESP_HEADER_MAX];
    addBytes(c, b, respWriteAggregate(b, c->resp, kind, n));
}

void replyArrayLen(Client *c, long n) { replyAggregate(c, REPLY_ARRAY, n); }
void replyMapLen(Client *c, long n) { replyAggregate(c, REPLY_MAP, n); }
void replySetLen(Client *c, long n) { replyAggregate(c, REPLY_SET, n); }
void replyAttributeLen(Client *c, long n) { replyAggregate(c, REPLY_ATTRIBUTE, n); }
void replyPushLen(Client *c, long n) { replyAggregate(c, REPLY_PUSH, n); }

unsigned replyPushBegin(Client *c) {
    unsigned saved = c->flags & CLIENT_PUSHING;
    c->flags |= CLIENT_PUSHING;
    return saved;
}

void replyPushEnd(Client *c, unsigned saved) { c->flags = (c->flags & ~CLIENT_PUSHING) | saved; }
void replyEmptyArray(Client *c) { replyAggregate(c, REPLY_ARRAY, 0); }

void replyDouble(Client *c, double d) {
    ReplySink *k;
    if (replySlow(c) && notResp(c, &k)) {
        if (k) k->type->dbl(k, d);
        return;
    }
    char b[RESP_DOUBLE_MAX];
    addBytes(c, b, respWriteDouble(b, c->resp, d));
}

void replyLongDouble(Client *c, long double d) {
    char buf[5600];
    int len = longDoubleToString(buf, sizeof(buf), d, 1);
    replyBulk(c, buf, (size_t)len);
}

void replyBool(Client *c, int b) {
    ReplySink *k;
    if (replySlow(c) && notResp(c, &k)) {
        if (k) k->type->boolean(k, b);
        return;
    }
    addBytes(c, respBoolean(c->resp, b), 4);
}

void replyBigNumber(Client *c, const char *num, size_t len) {
    ReplySink *k;
    if (replySlow(c) && notResp(c, &k)) {
        if (k) k->type->bigNumber(k, num, len);
        return;
    }
    char h[RESP_HEADER_MAX];
    addFramed(c, h, respWriteBigNumberHeader(h, c->resp, len), num, len);
}

void replyVerbatim(Client *c, const char *s, size_t len, const char *ext) {
    ReplySink *k;
    if (replySlow(c) && notResp(c, &k)) {
        if (k) k->type->verbatim(k, s, len, ext);
        return;
    }
    char h[RESP_VERBATIM_HEADER_MAX];
    addFramed(c, h, respWriteVerbatimHeader(h, c->resp, len, ext), s, len);
}

void replyHelp(Client *c, const char **lines) {
    sds cmd = sdsNew(c->argv[0]);
    sdsToUpper(cmd);
    long n = 0;
    while (lines[n]) n++;
    replyArrayLen(c, n + 3);
    sds head = sdsCatPrintf(sdsEmpty(), "%s <subcommand> [<arg> [value] [opt] ...]. Subcommands are:", cmd);
    replyStatusLen(c, head, sdsLen(head));
    for (long i = 0; i < n; i++) replyStatus(c, lines[i]);
    replyStatus(c, "HELP");
    replyStatus(c, "    Prints this help.");
    sdsFree(head);
    sdsFree(cmd);
}

void replySubcommandSyntaxError(Client *c) {
    sds cmd = sdsNew(c->argv[0]);
    sdsToUpper(cmd);
    replyErrorFormat(c, "ERR unknown subcommand or wrong number of arguments for '%.128s'. Try %s HELP.",
                     c->argc > 1 ? c->argv[1] : "", cmd);
    sdsFree(cmd);
}

/* --- deferred lengths --- */

void *replyDeferredLen(Client *c) {
    ReplySink *k;
    if (replySlow(c) && notResp(c, &k)) return k ? k->type->deferred(k) : NULL;
    netMarkPendingWrite(c);
    /* While the output is all in c->buf, the handle is the position the
     * length goes to; setDeferred moves what follows to make room.  Two
     * such handles at a time, at different positions (a handle is its
     * position): a deeper one is a placeholder block. */
    char *pos = c->buf + c->bufpos;
    int n = c->bufDeferredCount;
    if (!c->replyHead && (n == 0 || (n == 1 && c->bufDeferred[0] != pos))) {
        if (n == 0) c->bufDeferredOuterKind = -1;
        c->bufDeferred[c->bufDeferredCount++] = pos;
        return pos;
    }
    ReplyBlock *b = newBlock(32);
    b->deferred = 1;
    appendBlock(c, b);
    return b;
}

/* Writes a length at pos in c->buf: the bytes after it move up to make
 * room, in c->buf while they fit, else with the length into a new first
 * block (the reply went on into blocks, or fills c->buf). */
static void fillInBuf(Client *c, char *pos, ReplyAggregate kind, long n) {
    size_t off = (size_t)(pos - c->buf);
    if (off > c->bufpos || off < c->sentlen) return;
    char h[RESP_HEADER_MAX];
    size_t hlen = respWriteAggregate(h, c->resp, kind, n);
    size_t after = c->bufpos - off;
    if (!c->replyHead && c->bufSize - c->bufpos >= hlen) {
        memmove(pos + hlen, pos, after);
        memcpy(pos, h, hlen);
        c->bufpos += hlen;
        return;
    }
    ReplyBlock *b = newBlock(hlen + after);
    memcpy(b->buf, h, hlen);
    memcpy(b->buf + hlen, pos, after);
    b->used = hlen + after;
    b->next = c->replyHead;
    c->replyHead = b;
    if (!c->replyTail) c->replyTail = b;
    c->replyBlocks++;
    c->replyAllocBytes += sizeof(ReplyBlock) + b->size;
    c->replyBytes += b->used;
    c->bufpos = off;
    netCheckOutputLimits(c);
}

/* A length whose handle is a position in c->buf.  The nested one is
 * written first (the outer's position does not move then); an outer one
 * set before it waits for it.  A handle whose output was discarded
 * meanwhile is dropped. */
static void setDeferredInBuf(Client *c, char *pos, ReplyAggregate kind, long n) {
    int i = c->bufDeferredCount;
    while (i > 0 && c->bufDeferred[i - 1] != pos) i--;
    if (i == 0) return;
    if (i < c->bufDeferredCount) {
        c->bufDeferredOuterKind = (int)kind;
        c->bufDeferredOuterLen = n;
        return;
    }
    c->bufDeferredCount--;
    fillInBuf(c, pos, kind, n);
    if (c->bufDeferredCount == 1 && c->bufDeferredOuterKind != -1) {
        c->bufDeferredCount = 0;
        fillInBuf(c, c->bufDeferred[0], (ReplyAggregate)c->bufDeferredOuterKind, c->bufDeferredOuterLen);
    }
}

/* The node came from replyDeferredLen: a sink's handle if the client had
 * a sink then (it keeps it for the whole command), else a placeholder
 * block, which is filled whatever the client's state now. */
static void setDeferred(Client *c, void *node, ReplyAggregate kind, long n) {
    if (!node) return;
    if (c->flags & CLIENT_REPLY_SINK) {
        c->sink->type->setDeferred(c->sink, node, kind, n);
        return;
    }
    if ((char *)node >= c->buf && (char *)node <= c->buf + c->bufSize) {
        setDeferredInBuf(c, node, kind, n);
        return;
    }
    ReplyBlock *b = node;
    b->used = respWriteAggregate(b->buf, c->resp, kind, n);
    b->deferred = 0;
    c->replyBytes += b->used;
}

void replySetDeferredArrayLen(Client *c, void *node, long n) { setDeferred(c, node, REPLY_ARRAY, n); }
void replySetDeferredMapLen(Client *c, void *node, long n) { setDeferred(c, node, REPLY_MAP, n); }
void replySetDeferredSetLen(Client *c, void *node, long n) { setDeferred(c, node, REPLY_SET, n); }
void replySetDeferredAttributeLen(Client *c, void *node, long n) { setDeferred(c, node, REPLY_ATTRIBUTE, n); }

/* --- argument helpers --- */

int argIs(const sds arg, const char *literal) { return strcasecmp(arg, literal) == 0; }

int getLongLongOrReply(Client *c, const sds s, long long *out, const char *msg) {
    if (stringToLongLong(s, sdsLen(s), out)) return 0;
    replyError(c, msg ? msg : ERR_NOT_INT);
    return -1;
}

int getLongOrReply(Client *c, const sds s, long *out, const char *msg) {
    long long v;
    if (getLongLongOrReply(c, s, &v, msg) == -1) return -1;
    *out = (long)v;
    return 0;
}

int getRangeLongOrReply(Client *c, const sds s, long min, long max, long *out, const char *msg) {
    long v;
    if (getLongOrReply(c, s, &v, msg) == -1) return -1;
    if (v < min || v > max) {
        if (msg) replyError(c, msg);
        else replyErrorFormat(c, "ERR value is out of range, value must between %ld and %ld", min, max);
        return -1;
    }
    *out = v;
    return 0;
}

int getPositiveLongOrReply(Client *c, const sds s, long *out, const char *msg) {
    long v;
    if (getLongOrReply(c, s, &v, msg) == -1) return -1;
    if (v < 0) {
        replyError(c, msg ? msg : "ERR value is out of range, must be positive");
        return -1;
    }
    *out = v;
    return 0;
}

int getDoubleOrReply(Client *c, const sds s, double *out, const char *msg) {
    if (stringToDouble(s, sdsLen(s), out)) return 0;
    replyError(c, msg ? msg : ERR_NOT_FLOAT);
    return -1;
}

int getLongDoubleOrReply(Client *c, const sds s, long double *out, const char *msg) {
    if (stringToLongDouble(s, sdsLen(s), out)) return 0;
    replyError(c, msg ? msg : ERR_NOT_FLOAT);
    return -1;
}

static kvobj *checkType(Client *c, kvobj *o, int type, int *wrongType) {
    if (wrongType) *wrongType = 0;
    if (o && type >= 0 && kvType(o) != type) {
        replyErrorWrongType(c);
        if (wrongType) *wrongType = 1;
        return NULL;
    }
    return o;
}

kvobj *lookupReadOrReply(Client *c, const sds key, int type, int *wrongType) {
    int flags = (c->flags & CLIENT_NO_TOUCH) ? LOOKUP_NOTOUCH : LOOKUP_NONE;
    return checkType(c, dbLookupRead(c->db, key, sdsLen(key), flags), type, wrongType);
}

kvobj *lookupWriteOrReply(Client *c, const sds key, int type, int *wrongType) {
    return checkType(c, dbLookupWrite(c->db, key, sdsLen(key)), type, wrongType);
}
