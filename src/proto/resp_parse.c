/* resp_parse.c -- the client request parser (see resp_parse.h).
 *
 * State between calls: a multibulk in progress has multibulkLen > 0 bulks
 * still to read; bulkLen is -1 while the next "$len" line is awaited, else
 * the payload length being waited for.  A small payload is copied out only
 * once it is wholly in the caller's buffer (plus its 2 trailing bytes); a
 * big one (>= RESP_BIG_ARG) is copied into bigArg piece by piece, so the
 * caller's buffer never has to hold it.  Inline lines are stateless: they
 * are parsed when their '\n' is in the buffer.
 *
 * Lines are searched the way Redis searches its NUL-terminated query
 * buffer with strchr: a NUL byte ends the search.  findByte() does that.
 *
 * Between commands argv may be a spare array (argc 0, argvCap slots) kept
 * for the next one, and pool[0..poolCount) holds spare strings of capacity
 * RESP_POOL_CAP; no string is both in pool and in argv or a handed-out
 * command. */
#include "proto/resp_parse.h"

#include <assert.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "ds/alloc.h"
#include "ds/util.h"

static const RespLimits defaultLimits = {RESP_DEFAULT_MAX_BULK_LEN, 0};

void respParserInit(RespParser *p) {
    memset(p, 0, sizeof(*p));
    p->bulkLen = -1;
}

/* Keep s for a later argument if it is a pooled-size string and the pool
 * has room; free it otherwise. */
static void recycleString(RespParser *p, sds s) {
    if (sdsCap(s) == RESP_POOL_CAP && p->poolCount < RESP_POOL_MAX)
        p->pool[p->poolCount++] = s;
    else
        sdsFree(s);
}

/* Drop the current command's arguments and partial state; the array
 * stays as the spare. */
static void resetCommand(RespParser *p) {
    for (int i = 0; i < p->argc; i++)
        recycleString(p, p->argv[i]);
    sdsFree(p->bigArg);
    p->argc = 0;
    p->bigArg = NULL;
    p->complete = 0;
    p->multibulkLen = 0;
    p->bulkLen = -1;
}

void respParserTrim(RespParser *p) {
    for (int i = 0; i < p->poolCount; i++)
        sdsFree(p->pool[i]);
    p->poolCount = 0;
    if (p->argc == 0 && p->multibulkLen == 0) {
        xfree(p->argv);
        p->argv = NULL;
        p->argvCap = 0;
    }
}

void respParserFree(RespParser *p) {
    for (int i = 0; i < p->argc; i++)
        sdsFree(p->argv[i]);
    p->argc = 0;
    resetCommand(p);
    respParserTrim(p);
    p->lent = NULL;
    p->err = NULL;
}

size_t respParserSpareBytes(const RespParser *p) {
    size_t bytes = (size_t)p->poolCount * (RESP_POOL_CAP + 4);
    if (p->argc == 0 && p->multibulkLen == 0) bytes += (size_t)p->argvCap * sizeof(sds);
    return bytes;
}

/* Index of the first c in buf[0..len), or -1 if a NUL or the end comes
 * first (strchr on Redis's query buffer). */
static long findByte(const char *buf, size_t len, char c) {
    /* Header lines ("$3", "*2") are a few bytes: look at the first bytes
     * one by one before paying for two memchr calls. */
    size_t head = len < 16 ? len : 16;
    for (size_t i = 0; i < head; i++) {
        if (buf[i] == c) return (long)i;
        if (buf[i] == '\0') return -1;
    }
    if (head == len) return -1;
    const char *hit = memchr(buf + head, c, len - head);
    size_t upto = hit ? (size_t)(hit - buf) : len;
    if (memchr(buf + head, '\0', upto - head)) return -1;
    return hit ? (long)upto : -1;
}

static RespStatus fail(RespParser *p, const char *msg) {
    p->err = msg;
    return RESP_ERROR;
}

/* An empty string of capacity RESP_POOL_CAP: a spare one, or a new one. */
static inline sds pooledString(RespParser *p) {
    return p->poolCount ? p->pool[--p->poolCount] : sdsEmptyCap(RESP_POOL_CAP);
}

/* Append arg, whose length is len. */
static inline void pushArg(RespParser *p, sds arg, size_t len) {
    if (p->argc == p->argvCap) {
        /* Grow with the arguments actually received, never past a
         * multibulk's count (an inline line has no count). */
        long long cap = p->argvCap ? (long long)p->argvCap * 2 : RESP_ARGV_MIN;
        if (p->multibulkLen > 0 && cap > p->argc + p->multibulkLen) cap = p->argc + p->multibulkLen;
        p->argv = xrealloc(p->argv, (size_t)cap * sizeof(sds));
        p->argvCap = (int)cap;
    }
    p->argv[p->argc++] = arg;
    p->argvBytes += len;
}

static int inlineSpace(char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

/* The common inline line (redis-benchmark's PING_INLINE, a telnet user):
 * no quotes.  Split it the way sdsSplitArgs would (the line ends at a NUL;
 * any whitespace separates words, but only space, tab, CR and LF end one)
 * straight into pooled strings, without copying the line first.  Returns 0,
 * having done nothing, when the line has a quote. */
static int splitPlainInline(RespParser *p, const char *buf, size_t linelen) {
    const char *nul = memchr(buf, '\0', linelen);
    const char *end = nul ? nul : buf + linelen;
    size_t n = (size_t)(end - buf);
    if (memchr(buf, '"', n) || memchr(buf, '\'', n)) return 0;
    p->argvBytes = 0;
    const char *q = buf;
    for (;;) {
        while (q < end && inlineSpace(*q)) q++;
        if (q == end) break;
        const char *w = q;
        while (q < end && *q != ' ' && *q != '\t' && *q != '\n' && *q != '\r') q++;
        size_t wlen = (size_t)(q - w);
        sds arg;
        if (wlen <= RESP_POOL_CAP) {
            arg = pooledString(p);
            memcpy(arg, w, wlen);
            sdsSetLen(arg, wlen);
        } else {
            arg = sdsNewLen(w, wlen);
        }
        pushArg(p, arg, wlen);
    }
    return 1;
}

static RespStatus parseInline(RespParser *p, const char *buf, size_t len, size_t *consumed) {
    long nl = findByte(buf, len, '\n');
    if (nl < 0) {
        if (len > RESP_INLINE_MAX) return fail(p, "Protocol error: too big inline request");
        return RESP_INCOMPLETE;
    }
    size_t linelen = (size_t)nl;
    if (linelen > 0 && buf[linelen - 1] == '\r') linelen--;
    if (splitPlainInline(p, buf, linelen)) {
        p->complete = 1;
        *consumed = (size_t)nl + 1;
        return RESP_COMPLETE;
    }
    sds line = sdsNewLen(buf, linelen);
    int argc;
    sds *argv = sdsSplitArgs(line, &argc);
    sdsFree(line);
    if (!argv) return fail(p, "Protocol error: unbalanced quotes in request");
    /* The split's strings are exact-size, so after the command they are
     * freed rather than pooled (unless exactly RESP_POOL_CAP long): inline
     * commands are rare.  Its array replaces the spare only if larger. */
    if (argc > p->argvCap) {
        xfree(p->argv);
        p->argv = argv;
        p->argvCap = argc;
    } else {
        if (argc) memcpy(p->argv, argv, (size_t)argc * sizeof(sds));
        xfree(argv);
    }
    p->argc = argc;
    p->argvBytes = 0;
    for (int i = 0; i < argc; i++) p->argvBytes += sdsLen(p->argv[i]);
    p->complete = 1;
    *consumed = (size_t)nl + 1;
    return RESP_COMPLETE;
}

/* The usual header line: buf[0] is the type byte, then 1-9 digits without
 * a leading zero, '\r', and at least one more byte.  Sets *n and returns
 * the index of the '\r'; 0 when the line is anything else (the general
 * path then gives the exact result or error). */
static inline __attribute__((always_inline)) size_t quickHeader(const char *buf, size_t len, long long *n) {
    if (len < 4) return 0;
    unsigned d = (unsigned)(unsigned char)buf[1] - '0';
    if (d - 1 > 8) return 0; /* not 1-9 */
    /* The '\r' may be at index 10 at most (9 digits) and must have a byte
     * after it, so no index past `last` is a digit we want. */
    size_t last = len - 2 < 10 ? len - 2 : 10, i = 2;
    long long v = d;
    for (; i <= last; i++) {
        d = (unsigned)(unsigned char)buf[i] - '0';
        if (d > 9) break;
        v = v * 10 + d;
    }
    if (i > last || buf[i] != '\r') return 0;
    *n = v;
    return i;
}

/* Read the "*count" line at buf[0].  Returns RESP_COMPLETE with *used set
 * when the line was read (p->multibulkLen is then the count, or 0 for an
 * empty command), RESP_INCOMPLETE or RESP_ERROR. */
static RespStatus parseCount(RespParser *p, const char *buf, size_t len, size_t *used,
                             const RespLimits *lim) {
    long long n;
    long cr = (long)quickHeader(buf, len, &n);
    if (cr == 0) {
        cr = findByte(buf, len, '\r');
        if (cr < 0) {
            if (len > RESP_INLINE_MAX) return fail(p, "Protocol error: too big mbulk count string");
            return RESP_INCOMPLETE;
        }
        if ((size_t)cr + 2 > len) return RESP_INCOMPLETE; /* the byte after '\r' */
        if (!stringToLongLong(buf + 1, (size_t)cr - 1, &n) || n > INT_MAX)
            return fail(p, "Protocol error: invalid multibulk length");
    }
    if (n > RESP_UNAUTH_MAX_MULTIBULK && lim->authRequired)
        return fail(p, "Protocol error: unauthenticated multibulk length");
    *used = (size_t)cr + 2;
    if (n <= 0) return RESP_COMPLETE;
    p->multibulkLen = n;
    p->argvBytes = 0;
    /* Reserve at most 1024 slots up front (the count is the client's word;
     * pushArg grows with the arguments that really arrive). */
    int want = n < 1024 ? (int)n : 1024;
    if (want > p->argvCap) {
        if (want < RESP_ARGV_MIN) want = RESP_ARGV_MIN;
        xfree(p->argv); /* a spare array holds nothing */
        p->argv = xmalloc((size_t)want * sizeof(sds));
        p->argvCap = want;
    }
    return RESP_COMPLETE;
}

/* Read a "$len" line at buf[0]; same results as parseCount, setting
 * p->bulkLen and starting bigArg for a big bulk. */
static RespStatus parseBulkLen(RespParser *p, const char *buf, size_t len, size_t *used,
                               const RespLimits *lim) {
    long long n;
    long cr = buf[0] == '$' ? (long)quickHeader(buf, len, &n) : 0;
    if (cr == 0) {
        cr = findByte(buf, len, '\r');
        if (cr < 0) {
            if (len > RESP_INLINE_MAX) return fail(p, "Protocol error: too big bulk count string");
            return RESP_INCOMPLETE;
        }
        if ((size_t)cr + 2 > len) return RESP_INCOMPLETE;
        if (buf[0] != '$') {
            /* Redis prints the byte raw, except that CR and LF become spaces
             * (an error reply must not contain a newline). */
            char c = buf[0] == '\r' || buf[0] == '\n' ? ' ' : buf[0];
            snprintf(p->errBuf, sizeof(p->errBuf), "Protocol error: expected '$', got '%c'", c);
            return fail(p, p->errBuf);
        }
        if (!stringToLongLong(buf + 1, (size_t)cr - 1, &n) || n < 0)
            return fail(p, "Protocol error: invalid bulk length");
    }
    if (n > lim->maxBulkLen) return fail(p, "Protocol error: invalid bulk length");
    if (n > RESP_UNAUTH_MAX_BULK && lim->authRequired)
        return fail(p, "Protocol error: unauthenticated bulk length");
    *used = (size_t)cr + 2;
    p->bulkLen = n;
    if (n >= RESP_BIG_ARG) {
        size_t total = (size_t)n + 2;
        size_t first = total < RESP_BIG_ARG_EAGER ? total : RESP_BIG_ARG_EAGER;
        if (n >= RESP_BIG_ARENA_MIN) {
            /* Just what makes growBigArg jump to the whole length when it
             * is full: the jump copies it, so the less the better. */
            if (total / RESP_BIG_ARG_JUMP + 1 < first) first = total / RESP_BIG_ARG_JUMP + 1;
            p->bigArg = sdsMakeRoomForBig(sdsEmpty(), first);
        } else {
            p->bigArg = sdsMakeRoomForNonGreedy(sdsEmpty(), first);
        }
    }
    return RESP_COMPLETE;
}

/* Make room in bigArg for at least `want` more bytes (want <= what it still
 * needs).  Once the bytes received are at least 1/RESP_BIG_ARG_JUMP of the
 * declared size, the rest is reserved in one step (a 10 MB value is copied
 * once, from its first 1 MB, instead of through 1, 2, 4 and 8 MB buffers);
 * before that the reservation doubles, at least RESP_BIG_ARG_EAGER.  So a
 * client reserves at most RESP_BIG_ARG_JUMP times what it has sent, never
 * more than the declared size. */
static void growBigArg(RespParser *p, size_t want) {
    size_t have = sdsLen(p->bigArg), total = (size_t)p->bulkLen + 2;
    if (sdsAvail(p->bigArg) >= want) return;
    size_t target;
    if (have >= total / RESP_BIG_ARG_JUMP)
        target = total;
    else
        target = have * 2 < RESP_BIG_ARG_EAGER ? RESP_BIG_ARG_EAGER : have * 2;
    if (target < have + want) target = have + want;
    if (target > total) target = total;
    p->bigArg = p->bulkLen >= RESP_BIG_ARENA_MIN ? sdsMakeRoomForBig(p->bigArg, target - have)
                                                 : sdsMakeRoomForNonGreedy(p->bigArg, target - have);
}

/* Copy what is available of the current bulk's payload.  Returns 1 when the
 * bulk became an argument, 0 if more bytes are needed. */
static int takeBulk(RespParser *p, const char *buf, size_t len, size_t *used) {
    size_t total = (size_t)p->bulkLen + 2;
    if (!p->bigArg) {
        if (len < total) return 0;
        size_t n = (size_t)p->bulkLen;
        sds arg;
        if (n <= RESP_POOL_CAP) {
            /* A pooled-size string, from the pool or new, so that it can
             * go back to the pool after the command. */
            arg = pooledString(p);
            /* A pooled string has room for RESP_POOL_CAP + 1 bytes: when
             * the buffer has that many, copy them all (a constant size the
             * compiler inlines) instead of calling memcpy for n; sdsSetLen
             * then writes the terminator. */
            if (len > RESP_POOL_CAP)
                memcpy(arg, buf, RESP_POOL_CAP + 1);
            else
                memcpy(arg, buf, n);
            sdsSetLen(arg, n);
        } else {
            arg = sdsNewLen(buf, n);
        }
        pushArg(p, arg, n);
        *used = total;
    } else {
        size_t need = total - sdsLen(p->bigArg);
        size_t n = len < need ? len : need;
        if (n > 0) {
            growBigArg(p, n);
            memcpy(p->bigArg + sdsLen(p->bigArg), buf, n);
            sdsIncrLen(p->bigArg, (ssize_t)n);
        }
        *used = n;
        if (n < need) return 0;
        sdsSetLen(p->bigArg, (size_t)p->bulkLen); /* drop the 2 trailing bytes */
        pushArg(p, p->bigArg, (size_t)p->bulkLen);
        p->bigArg = NULL;
    }
    p->bulkLen = -1;
    p->multibulkLen--;
    return 1;
}

static RespStatus parseMultibulk(RespParser *p, const char *buf, size_t len, size_t *consumed,
                                 const RespLimits *lim) {
    size_t pos = 0, used = 0;
    RespStatus st;
    if (p->multibulkLen == 0) {
        st = parseCount(p, buf, len, &used, lim);
        if (st != RESP_COMPLETE) return st;
        pos = used;
        if (p->multibulkLen == 0) { /* "*0" or a negative count */
            p->complete = 1;
            *consumed = pos;
            return RESP_COMPLETE;
        }
    }
    while (p->multibulkLen > 0) {
        if (p->bulkLen < 0) {
            st = parseBulkLen(p, buf + pos, len - pos, &used, lim);
            if (st == RESP_ERROR) return st;
            if (st == RESP_INCOMPLETE) break;
            pos += used;
        }
        used = 0;
        int done = takeBulk(p, buf + pos, len - pos, &used);
        pos += used;
        if (!done) break;
    }
    *consumed = pos;
    if (p->multibulkLen > 0) return RESP_INCOMPLETE;
    p->complete = 1;
    return RESP_COMPLETE;
}

/* The bodies of respParse, respParserTake and respParserRecycle, inlined
 * into both the public calls and respProtocol's (one call per command on
 * the hot path, not two). */
static inline __attribute__((always_inline)) RespStatus parseOne(RespParser *p, const char *buf, size_t len,
                                                                 size_t *consumed, const RespLimits *lim) {
    *consumed = 0;
    p->err = NULL;
    if (!lim) lim = &defaultLimits;
    if (p->complete) resetCommand(p); /* the previous command was not taken */
    if (p->multibulkLen > 0) return parseMultibulk(p, buf, len, consumed, lim);
    if (len == 0) return RESP_INCOMPLETE;
    if (buf[0] == '*') return parseMultibulk(p, buf, len, consumed, lim);
    return parseInline(p, buf, len, consumed);
}

RespStatus respParse(RespParser *p, const char *buf, size_t len, size_t *consumed, const RespLimits *lim) {
    return parseOne(p, buf, len, consumed, lim);
}

static inline __attribute__((always_inline)) sds *takeCommand(RespParser *p, int *argc) {
    *argc = p->argc;
    if (p->argc == 0) { /* nothing to hand over: keep the array */
        resetCommand(p);
        return NULL;
    }
    sds *argv = p->lent = p->argv;
    p->lentCap = p->argvCap;
    p->argv = NULL;
    p->argc = p->argvCap = 0;
    p->complete = 0; /* the rest of the state is already reset */
    return argv;
}

sds *respParserTake(RespParser *p, int *argc) { return takeCommand(p, argc); }

static inline __attribute__((always_inline)) void recycleCommand(RespParser *p, sds *argv, int argc) {
    for (int i = 0; i < argc; i++)
        if (argv[i]) recycleString(p, argv[i]);
    /* Only the array handed out last has a known size; any other holds at
     * least argc slots. */
    int cap = argv == p->lent ? p->lentCap : argc;
    p->lent = NULL;
    if (!argv) return;
    if (p->argv || cap > RESP_ARGV_KEEP) {
        xfree(argv);
    } else {
        p->argv = argv;
        p->argvCap = cap;
    }
}

void respParserRecycle(RespParser *p, sds *argv, int argc) { recycleCommand(p, argv, argc); }

int respParserBigArgRoom(RespParser *p, char **dst, size_t *room) {
    if (!p->bigArg) return 0;
    size_t have = sdsLen(p->bigArg), need = (size_t)p->bulkLen + 2 - have;
    if (need == 0) return 0;
    if (sdsAvail(p->bigArg) == 0) growBigArg(p, 1);
    size_t avail = sdsAvail(p->bigArg);
    *dst = p->bigArg + have;
    *room = avail < need ? avail : need;
    return 1;
}

void respParserBigArgWrote(RespParser *p, size_t n) {
    assert(p->bigArg && n <= (size_t)p->bulkLen + 2 - sdsLen(p->bigArg));
    /* Terminated once complete (takeBulk's sdsSetLen). */
    sdsSetLenUnterminated(p->bigArg, sdsLen(p->bigArg) + n);
}

size_t respParserPendingBytes(const RespParser *p) { return p->bigArg ? sdsLen(p->bigArg) : 0; }

/* --- RESP as a Protocol --- */

static void *respCreate(void) {
    RespParser *p = xmalloc(sizeof(*p));
    respParserInit(p);
    return p;
}

static void respDestroy(void *state) {
    respParserFree(state);
    xfree(state);
}

static ProtoStatus respNext(void *state, const char *buf, size_t len, const ProtoLimits *lim, ProtoCommand *out) {
    RespParser *p = state;
    RespStatus st = parseOne(p, buf, len, &out->consumed, lim);
    if (st == RESP_COMPLETE) {
        out->argvBytes = p->argvBytes;
        out->argv = takeCommand(p, &out->argc);
        return PROTO_COMPLETE;
    }
    if (st == RESP_ERROR) {
        out->err = p->err;
        return PROTO_ERROR;
    }
    return PROTO_INCOMPLETE;
}

static void respRecycle(void *state, sds *argv, int argc) { recycleCommand(state, argv, argc); }

static int respHandedOut(const void *state, const sds *argv) {
    const RespParser *p = state;
    return argv && argv == p->lent;
}

static void respTrim(void *state) {
    RespParser *p = state;
    if (p->poolCount + p->argvCap > 0) respParserTrim(p);
}

static size_t respSpare(const void *state) { return respParserSpareBytes(state); }
static size_t respPending(const void *state) { return respParserPendingBytes(state); }
static int respDirectRoom(void *state, char **dst, size_t *room) { return respParserBigArgRoom(state, dst, room); }
static void respDirectWrote(void *state, size_t n) { respParserBigArgWrote(state, n); }

static void respPartial(const void *state, ProtoPartial *out) {
    const RespParser *p = state;
    memset(out, 0, sizeof(*out));
    if (p->multibulkLen <= 0 || p->complete) return;
    out->argc = p->argc;
    out->argvBytes = p->argvBytes;
    if (p->bigArg) {
        out->bulkDeclared = (size_t)p->bulkLen + 2;
        out->bulkReceived = sdsLen(p->bigArg);
    }
}

const Protocol respProtocol = {
    .name = "resp",
    .create = respCreate,
    .free = respDestroy,
    .next = respNext,
    .recycle = respRecycle,
    .handedOut = respHandedOut,
    .trim = respTrim,
    .spareBytes = respSpare,
    .pendingBytes = respPending,
    .directRoom = respDirectRoom,
    .directWrote = respDirectWrote,
    .partial = respPartial,
};
