/* reply.c -- the reply API: RESP2/RESP3 encoding into a client's output
 * buffers, and the argument helpers that reply their own errors.
 *
 * Bytes go to c->buf while no block is queued, then to the tail block of the
 * chain (16 KB blocks, or larger for one big payload).  A deferred length
 * is a small placeholder block whose bytes are written later; nothing is
 * appended into a placeholder.  Every append marks the client as having
 * pending writes; net.c writes them before the loop sleeps. */
#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "core/client.h"
#include "core/errors.h"
#include "core/log.h"
#include "core/net.h"
#include "core/server.h"
#include "ds/alloc.h"
#include "ds/util.h"

#define REPLY_BLOCK_SIZE (16 * 1024)

/* Replies are dropped for a client closing now, and under CLIENT REPLY
 * OFF|SKIP unless the bytes belong to a push message. */
static int replyDisabled(const Client *c) {
    unsigned f = c->flags;
    if (f & CLIENT_CLOSE_ASAP) return 1;
    return (f & (CLIENT_REPLY_OFF | CLIENT_REPLY_SKIP)) != 0 && !(f & CLIENT_PUSHING);
}

static ReplyBlock *newBlock(size_t size) {
    ReplyBlock *b = xmalloc(sizeof(ReplyBlock) + size);
    b->next = NULL;
    b->size = size;
    b->used = 0;
    b->deferred = 0;
    return b;
}

static void appendBlock(Client *c, ReplyBlock *b) {
    if (c->replyTail) c->replyTail->next = b;
    else c->replyHead = b;
    c->replyTail = b;
    c->replyBlocks++;
}

/* Copy bytes into the output, growing the chain as needed. */
static void addBytes(Client *c, const void *p, size_t len) {
    if (replyDisabled(c) || len == 0) return;
    netMarkPendingWrite(c);
    const char *s = p;
    if (!c->replyHead) {
        size_t room = CLIENT_REPLY_BUF - c->bufpos;
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

void replyRaw(Client *c, const void *p, size_t len) { addBytes(c, p, len); }

/* Room formatHeader may use: prefix, sign and 19 digits (plus the NUL
 * the formatter writes), CR LF. */
#define HEADER_MAX (UTIL_LONG_STR_SIZE + 3)

/* Write "<prefix><n>\r\n" at dst (HEADER_MAX bytes of room); returns its
 * length. */
static size_t formatHeader(char *dst, char prefix, long long n) {
    dst[0] = prefix;
    int len = longLongToString(dst + 1, UTIL_LONG_STR_SIZE, n);
    dst[len + 1] = '\r';
    dst[len + 2] = '\n';
    return (size_t)len + 3;
}

static void addHeader(Client *c, char prefix, long long n) {
    char buf[HEADER_MAX];
    addBytes(c, buf, formatHeader(buf, prefix, n));
}

void replyOk(Client *c) { addBytes(c, "+OK\r\n", 5); }

void replyStatusLen(Client *c, const char *s, size_t len) {
    addBytes(c, "+", 1);
    addBytes(c, s, len);
    addBytes(c, "\r\n", 2);
}

void replyStatus(Client *c, const char *s) { replyStatusLen(c, s, strlen(s)); }

/* Count the error for INFO errorstats / total_error_replies. */
static void countError(const char *err, size_t len) {
    server.stats.totalErrorReplies++;
    size_t plen = 0;
    while (plen < len && err[plen] != ' ') plen++;
    ErrorStat *e;
    int n = 0;
    for (e = server.errorStats; e; e = e->next, n++)
        if (strlen(e->prefix) == plen && memcmp(e->prefix, err, plen) == 0) break;
    if (!e) {
        if (n >= 128) return; /* Redis caps the distinct prefixes tracked */
        e = xcalloc(sizeof(*e));
        e->prefix = xmalloc(plen + 1);
        memcpy(e->prefix, err, plen);
        e->prefix[plen] = '\0';
        e->next = server.errorStats;
        server.errorStats = e;
    }
    e->count++;
}

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
    c->errorReplied = 1;
    if (count) countError(msg, total);
    /* Errors are sent even with CLIENT REPLY OFF? No: Redis suppresses them too. */
    addBytes(c, "-", 1);
    addBytes(c, msg, total);
    addBytes(c, "\r\n", 2);
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
    if (v >= 0 && v <= 9) {
        char b[4] = {':', (char)('0' + v), '\r', '\n'};
        addBytes(c, b, 4);
        return;
    }
    addHeader(c, ':', v);
}

void replyBulk(Client *c, const void *p, size_t len) {
    if (replyDisabled(c)) return;
    /* Most bulks fit whole in c->buf: one copy, one pending-write mark. */
    if (!c->replyHead && len <= CLIENT_REPLY_BUF && CLIENT_REPLY_BUF - c->bufpos >= len + HEADER_MAX + 2) {
        char *d = c->buf + c->bufpos;
        size_t h = formatHeader(d, '$', (long long)len);
        memcpy(d + h, p, len);
        d[h + len] = '\r';
        d[h + len + 1] = '\n';
        c->bufpos += h + len + 2;
        netMarkPendingWrite(c);
        return;
    }
    addHeader(c, '$', (long long)len);
    addBytes(c, p, len);
    addBytes(c, "\r\n", 2);
}

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

void replyBulkKv(Client *c, const kvobj *o) {
    char buf[24];
    size_t len;
    const char *p = kvStringBytes(o, buf, &len);
    replyBulk(c, p, len);
}

void replyNull(Client *c) {
    if (c->resp >= 3) addBytes(c, "_\r\n", 3);
    else addBytes(c, "$-1\r\n", 5);
}

void replyNullArray(Client *c) {
    if (c->resp >= 3) addBytes(c, "_\r\n", 3);
    else addBytes(c, "*-1\r\n", 5);
}

void replyArrayLen(Client *c, long n) { addHeader(c, '*', n); }
void replyMapLen(Client *c, long n) { addHeader(c, c->resp >= 3 ? '%' : '*', c->resp >= 3 ? n : 2 * n); }
void replySetLen(Client *c, long n) { addHeader(c, c->resp >= 3 ? '~' : '*', n); }
void replyAttributeLen(Client *c, long n) { addHeader(c, '|', n); }
void replyPushLen(Client *c, long n) { addHeader(c, c->resp >= 3 ? '>' : '*', n); }
unsigned replyPushBegin(Client *c) {
    unsigned saved = c->flags & CLIENT_PUSHING;
    c->flags |= CLIENT_PUSHING;
    return saved;
}

void replyPushEnd(Client *c, unsigned saved) { c->flags = (c->flags & ~CLIENT_PUSHING) | saved; }
void replyEmptyArray(Client *c) { addBytes(c, "*0\r\n", 4); }

void replyDouble(Client *c, double d) {
    char buf[64];
    int len;
    if (isinf(d)) len = snprintf(buf, sizeof(buf), "%s", d > 0 ? "inf" : "-inf");
    else len = doubleToString(buf, sizeof(buf), d);
    if (c->resp >= 3) {
        addBytes(c, ",", 1);
        addBytes(c, buf, (size_t)len);
        addBytes(c, "\r\n", 2);
    } else {
        replyBulk(c, buf, (size_t)len);
    }
}

void replyLongDouble(Client *c, long double d) {
    char buf[5600];
    int len = longDoubleToString(buf, sizeof(buf), d, 1);
    replyBulk(c, buf, (size_t)len);
}

void replyBool(Client *c, int b) {
    if (c->resp >= 3) addBytes(c, b ? "#t\r\n" : "#f\r\n", 4);
    else replyLongLong(c, b ? 1 : 0);
}

void replyBigNumber(Client *c, const char *num, size_t len) {
    if (c->resp >= 3) {
        addBytes(c, "(", 1);
        addBytes(c, num, len);
        addBytes(c, "\r\n", 2);
    } else {
        replyBulk(c, num, len);
    }
}

void replyVerbatim(Client *c, const char *s, size_t len, const char *ext) {
    if (c->resp < 3) {
        replyBulk(c, s, len);
        return;
    }
    addHeader(c, '=', (long long)len + 4);
    addBytes(c, ext, 3);
    addBytes(c, ":", 1);
    addBytes(c, s, len);
    addBytes(c, "\r\n", 2);
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
    if (replyDisabled(c)) return NULL;
    netMarkPendingWrite(c);
    ReplyBlock *b = newBlock(32);
    b->deferred = 1;
    appendBlock(c, b);
    return b;
}

static void setDeferred(Client *c, void *node, char prefix, long n) {
    ReplyBlock *b = node;
    if (!b) return;
    char buf[32];
    buf[0] = prefix;
    int len = longLongToString(buf + 1, sizeof(buf) - 3, n);
    buf[len + 1] = '\r';
    buf[len + 2] = '\n';
    memcpy(b->buf, buf, (size_t)len + 3);
    b->used = (size_t)len + 3;
    b->deferred = 0;
    c->replyBytes += b->used;
}

void replySetDeferredArrayLen(Client *c, void *node, long n) { setDeferred(c, node, '*', n); }
void replySetDeferredMapLen(Client *c, void *node, long n) {
    setDeferred(c, node, c->resp >= 3 ? '%' : '*', c->resp >= 3 ? n : 2 * n);
}
void replySetDeferredSetLen(Client *c, void *node, long n) { setDeferred(c, node, c->resp >= 3 ? '~' : '*', n); }

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
