/* t_stream.c -- the stream type: XADD, XRANGE/XREVRANGE, XLEN, XDEL,
 * XTRIM, XREAD (with Redis 7.4's "+": the last entry), consumer groups (XGROUP, XREADGROUP, XACK, XPENDING,
 * XCLAIM, XAUTOCLAIM), XINFO, XSETID.
 *
 * A stream value is a ds/stream.h Stream (encoding OBJ_ENC_STREAM): entries
 * in listpack nodes in Redis's node format, groups with their PELs.  This
 * file parses arguments, checks Redis 7.0.15's rules and errors in its
 * order, replies and states effects:
 *   - XADD with `*`, `ms-*` or a trim: the ID it generated replaces the ID
 *     argument, and an approximate trim becomes an exact one to the length
 *     (MAXLEN = n) or first ID (MINID = id) reached, as Redis rewrites it;
 *   - XREADGROUP, XCLAIM, XAUTOCLAIM propagate one
 *     `XCLAIM key group consumer 0 id TIME ms RETRYCOUNT n FORCE JUSTID
 *     LASTID id` per entry delivered or claimed (or dropped from a PEL
 *     because the entry is gone), `XGROUP SETID key group id ENTRIESREAD
 *     n` when a NOACK read or LASTID moved the group, and `XGROUP
 *     CREATECONSUMER` for a consumer a NOACK read created; never
 *     themselves.
 * Blocking XREAD/XREADGROUP go through blocking.c: a blocked reader is
 * served (one stream in its reply, as Redis 7.0) when its key gets an entry
 * past its ID; a deleted key, or a key that is no longer a stream, answers
 * an XREADGROUP reader "UNBLOCKED the stream key no longer exists", a
 * destroyed group "NOGROUP the consumer group this client was blocked on no
 * longer exists". */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/client.h"
#include "core/command.h"
#include "core/effects.h"
#include "core/errors.h"
#include "core/server.h"
#include "db/db.h"
#include "db/object.h"
#include "ds/alloc.h"
#include "ds/sds.h"
#include "ds/stream.h"
#include "ds/util.h"
#include "types/blocking.h"
#include "types/stream.h"

/* stream-node-max-bytes and stream-node-max-entries: the directives at the
 * end of this file. */
static long long streamNodeMaxBytes, streamNodeMaxEntries;

#define ERR_INVALID_ID "ERR Invalid stream ID specified as stream command argument"
#define STREAM_ID_STR_SIZE 42
/* Entries a blocked reader without COUNT gets at most (Redis's default). */
#define XREAD_BLOCKED_DEFAULT_COUNT 1000

/* ------------------------------------------------------------------------ */
/* Value operations                                                           */
/* ------------------------------------------------------------------------ */

static void streamValueFree(void *ptr, int encoding) {
    (void)encoding;
    streamFree(ptr);
}

static void *streamValueDup(const void *ptr, int encoding) {
    (void)encoding;
    const Stream *s = ptr;
    Stream *d = streamCreate();
    /* The source's node cache is not part of its value. */
    Stream *src = (Stream *)s;
    OmapNode *tail = omapLast(s->nodes);
    for (OmapNode *n = omapFirst(s->nodes); n; n = omapNext(n)) {
        size_t klen, len;
        const unsigned char *key = omapKey(n, &klen);
        const unsigned char *lp = streamNodeBytes(src, n, &len);
        streamInsertNode(d, key, lp, len, n == tail);
    }
    d->length = s->length;
    d->lastId = s->lastId;
    d->firstId = s->firstId;
    d->maxDeletedId = s->maxDeletedId;
    d->entriesAdded = s->entriesAdded;
    if (s->groups) {
        for (OmapNode *g = omapFirst(s->groups); g; g = omapNext(g)) {
            size_t glen;
            const unsigned char *gname = omapKey(g, &glen);
            const StreamCG *cg = omapValue(g);
            StreamCG *ncg = streamCreateCG(d, (const char *)gname, glen, &cg->lastId, cg->entriesRead);
            for (OmapNode *cn = omapFirst(cg->consumers); cn; cn = omapNext(cn)) {
                const StreamConsumer *c = omapValue(cn);
                StreamConsumer *nc = streamCreateConsumer(ncg, c->name, sdsLen(c->name), c->seenTime);
                for (OmapNode *pn = omapFirst(c->pel); pn; pn = omapNext(pn)) {
                    size_t plen;
                    const unsigned char *id = omapKey(pn, &plen);
                    const StreamNACK *nack = omapValue(pn);
                    StreamNACK *nn = streamCreateNACK(nc, nack->deliveryTime);
                    nn->deliveryCount = nack->deliveryCount;
                    omapInsert(ncg->pel, id, plen, nn);
                    omapInsert(nc->pel, id, plen, nn);
                }
            }
        }
    }
    return d;
}

static size_t streamValueSize(const void *ptr, int encoding) {
    (void)encoding;
    return streamBytes(ptr);
}

const ObjectType streamObjectType = {.free = streamValueFree, .dup = streamValueDup, .size = streamValueSize};

/* ------------------------------------------------------------------------ */
/* IDs                                                                        */
/* ------------------------------------------------------------------------ */

static int idToString(char *buf, const StreamID *id) {
    int n = unsignedLongLongToString(buf, STREAM_ID_STR_SIZE, id->ms);
    buf[n++] = '-';
    n += unsignedLongLongToString(buf + n, (size_t)(STREAM_ID_STR_SIZE - n), id->seq);
    return n;
}

static void replyID(Client *c, const StreamID *id) {
    char buf[STREAM_ID_STR_SIZE];
    replyBulk(c, buf, (size_t)idToString(buf, id));
}

/* Redis's string2ull: a strict integer first, else strtoull's rules
 * (leading blanks and a sign allowed, the whole string consumed). */
static int parseULL(const char *s, unsigned long long *v) {
    long long ll;
    if (stringToLongLong(s, strlen(s), &ll)) {
        if (ll < 0) return 0;
        *v = (unsigned long long)ll;
        return 1;
    }
    errno = 0;
    char *end = NULL;
    *v = strtoull(s, &end, 10);
    if (errno == EINVAL || errno == ERANGE || !(*s != '\0' && *end == '\0')) return 0;
    return 1;
}

/* Parses an ID: "-", "+" (unless strict), "ms" (seq = missingSeq),
 * "ms-seq", and with seqGiven non-NULL "ms-*" (*seqGiven = 0).  Replies
 * the error (when c is not NULL) and returns -1 on bad input. */
static int parseIDGeneric(Client *c, const sds arg, StreamID *id, uint64_t missingSeq, int strict, int *seqGiven) {
    char buf[128];
    size_t len = sdsLen(arg);
    if (len > 127) goto invalid;
    memcpy(buf, arg, len);
    buf[len] = '\0';
    if (strict && (buf[0] == '-' || buf[0] == '+') && buf[1] == '\0') goto invalid;
    if (seqGiven) *seqGiven = 1;
    if (buf[0] == '-' && buf[1] == '\0') {
        id->ms = 0;
        id->seq = 0;
        return 0;
    }
    if (buf[0] == '+' && buf[1] == '\0') {
        id->ms = UINT64_MAX;
        id->seq = UINT64_MAX;
        return 0;
    }
    unsigned long long ms, seq;
    char *dash = strchr(buf, '-');
    if (dash) *dash = '\0';
    if (!parseULL(buf, &ms)) goto invalid;
    if (dash) {
        if (seqGiven && dash[1] == '*' && dash[2] == '\0') {
            seq = 0;
            *seqGiven = 0;
        } else if (!parseULL(dash + 1, &seq)) {
            goto invalid;
        }
    } else {
        seq = missingSeq;
    }
    id->ms = ms;
    id->seq = seq;
    return 0;
invalid:
    if (c) replyError(c, ERR_INVALID_ID);
    return -1;
}

int streamParseRangeID(const sds arg, StreamID *id) { return parseIDGeneric(NULL, arg, id, 0, 0, NULL); }

static int parseIDOrReply(Client *c, const sds arg, StreamID *id, uint64_t missingSeq) {
    return parseIDGeneric(c, arg, id, missingSeq, 0, NULL);
}

static int parseStrictIDOrReply(Client *c, const sds arg, StreamID *id, uint64_t missingSeq, int *seqGiven) {
    return parseIDGeneric(c, arg, id, missingSeq, 1, seqGiven);
}

/* An interval bound: "(" makes it exclusive (the rest parsed strictly). */
static int parseIntervalIDOrReply(Client *c, const sds arg, StreamID *id, int *exclude, uint64_t missingSeq) {
    size_t len = sdsLen(arg);
    *exclude = len > 1 && arg[0] == '(';
    if (*exclude) {
        sds t = sdsNewLen(arg + 1, len - 1);
        int r = parseStrictIDOrReply(c, t, id, missingSeq, NULL);
        sdsFree(t);
        return r;
    }
    return parseIDOrReply(c, arg, id, missingSeq);
}

/* Start and end of a range, exclusive bounds moved inward. */
static int parseRangeOrReply(Client *c, const sds startArg, const sds endArg, StreamID *start, StreamID *end) {
    int ex;
    if (parseIntervalIDOrReply(c, startArg, start, &ex, 0) == -1) return -1;
    if (ex && streamIncrID(start) == -1) {
        replyError(c, "ERR invalid start ID for the interval");
        return -1;
    }
    if (parseIntervalIDOrReply(c, endArg, end, &ex, UINT64_MAX) == -1) return -1;
    if (ex && streamDecrID(end) == -1) {
        replyError(c, "ERR invalid end ID for the interval");
        return -1;
    }
    return 0;
}

/* ------------------------------------------------------------------------ */
/* Lookup and replies                                                         */
/* ------------------------------------------------------------------------ */

static Stream *streamOf(const kvobj *o) { return kvPtr(o); }

/* The stream at key for writing, created when absent; NULL after WRONGTYPE. */
static kvobj *lookupCreateOrReply(Client *c, const sds key, int create) {
    int wrong;
    kvobj *o = lookupWriteOrReply(c, key, OBJ_STREAM, &wrong);
    if (o || wrong || !create) return o;
    o = kvCreatePtr(key, sdsLen(key), OBJ_STREAM, OBJ_ENC_STREAM, streamCreate());
    dbAdd(c->db, o);
    return o;
}

/* One entry: [id, [field, value, ...]]. */
static void replyEntry(Client *c, StreamIter *it, const StreamID *id, long long nf) {
    replyArrayLen(c, 2);
    replyID(c, id);
    replyArrayLen(c, nf * 2);
    for (long long i = 0; i < nf; i++) {
        const unsigned char *f, *v;
        size_t flen, vlen;
        streamIterField(it, &f, &flen, &v, &vlen);
        replyBulk(c, f, flen);
        replyBulk(c, v, vlen);
    }
}

/* Replies the entries of [start, end] (count 0 = all) as an array;
 * returns how many. */
static long long replyRange(Client *c, Stream *s, const StreamID *start, const StreamID *end, long long count,
                            int rev) {
    void *len = replyDeferredLen(c);
    StreamIter it;
    streamIterStart(&it, s, start, end, rev);
    StreamID id;
    long long nf, n = 0;
    while ((!count || n < count) && streamIterNext(&it, &id, &nf)) {
        replyEntry(c, &it, &id, nf);
        n++;
    }
    replySetDeferredArrayLen(c, len, n);
    return n;
}

/* Replies the one entry id (no array around it); 0 if it is not there. */
static int replyOneEntry(Client *c, Stream *s, const StreamID *id) {
    StreamIter it;
    streamIterStart(&it, s, id, id, 0);
    StreamID got;
    long long nf;
    if (!streamIterNext(&it, &got, &nf)) return 0;
    replyEntry(c, &it, &got, nf);
    return 1;
}

static int entryExists(Stream *s, const StreamID *id) {
    StreamIter it;
    streamIterStart(&it, s, id, id, 0);
    StreamID got;
    long long nf;
    return streamIterNext(&it, &got, &nf);
}

/* The last live entry's ID, or lastId when there is none. */
static void lastValidID(Stream *s, StreamID *id) {
    if (!streamEdgeID(s, 0, id)) *id = s->lastId;
}

/* ------------------------------------------------------------------------ */
/* XADD / XTRIM                                                               */
/* ------------------------------------------------------------------------ */

enum { TRIM_NONE, TRIM_MAXLEN, TRIM_MINID };

typedef struct AddTrimArgs {
    StreamID id;       /* XADD: the ID given */
    int idGiven, seqGiven;
    int noMkstream;
    int strategy;      /* TRIM_* */
    int strategyArg;   /* argv index of the threshold */
    int approx;
    long long maxLen;
    StreamID minId;
    long long limit;
} AddTrimArgs;

/* Parses XADD's options up to the ID (returns its index) or XTRIM's
 * options; -1 after replying an error. */
static int parseAddTrimArgsOrReply(Client *c, AddTrimArgs *a, int xadd) {
    int i = 2, limitGiven = 0;
    memset(a, 0, sizeof(*a));
    for (; i < c->argc; i++) {
        int more = c->argc - 1 - i;
        const char *opt = c->argv[i];
        if (xadd && opt[0] == '*' && opt[1] == '\0') break;
        if ((!strcasecmp(opt, "maxlen") || !strcasecmp(opt, "minid")) && more) {
            int maxlen = !strcasecmp(opt, "maxlen");
            if (a->strategy != TRIM_NONE) {
                replyError(c, "ERR syntax error, MAXLEN and MINID options at the same time are not compatible");
                return -1;
            }
            a->approx = 0;
            const char *next = c->argv[i + 1];
            if (more >= 2 && next[0] == '~' && next[1] == '\0') {
                a->approx = 1;
                i++;
            } else if (more >= 2 && next[0] == '=' && next[1] == '\0') {
                i++;
            }
            if (maxlen) {
                if (getLongLongOrReply(c, c->argv[i + 1], &a->maxLen, NULL) == -1) return -1;
                if (a->maxLen < 0) {
                    replyError(c, "ERR The MAXLEN argument must be >= 0.");
                    return -1;
                }
            } else if (parseStrictIDOrReply(c, c->argv[i + 1], &a->minId, 0, NULL) == -1) {
                return -1;
            }
            i++;
            a->strategy = maxlen ? TRIM_MAXLEN : TRIM_MINID;
            a->strategyArg = i;
        } else if (!strcasecmp(opt, "limit") && more) {
            if (getLongLongOrReply(c, c->argv[i + 1], &a->limit, NULL) == -1) return -1;
            if (a->limit < 0) {
                replyError(c, "ERR The LIMIT argument must be >= 0.");
                return -1;
            }
            limitGiven = 1;
            i++;
        } else if (xadd && !strcasecmp(opt, "nomkstream")) {
            a->noMkstream = 1;
        } else if (xadd) {
            if (parseStrictIDOrReply(c, c->argv[i], &a->id, 0, &a->seqGiven) == -1) return -1;
            a->idGiven = 1;
            break;
        } else {
            replyErrorSyntax(c);
            return -1;
        }
    }
    if (a->limit && a->strategy == TRIM_NONE) {
        replyError(c, "ERR syntax error, LIMIT cannot be used without specifying a trimming strategy");
        return -1;
    }
    if (!xadd && a->strategy == TRIM_NONE) {
        replyError(c, "ERR syntax error, XTRIM must be called with a trimming strategy");
        return -1;
    }
    if ((c->flags & CLIENT_MASTER) || (c->flags & (CLIENT_FAKE | CLIENT_LUA)) == CLIENT_FAKE) {
        a->limit = 0; /* the primary or the AOF: trims were rewritten exact */
    } else if (limitGiven) {
        if (!a->approx) {
            replyError(c, "ERR syntax error, LIMIT cannot be used without the special ~ option");
            return -1;
        }
    } else if (a->approx) {
        a->limit = 100 * streamNodeMaxEntries;
        if (a->limit <= 0 || a->limit > 1000000) a->limit = 10000;
    } else {
        a->limit = 0;
    }
    return i;
}

/* Trims per the arguments; returns entries removed. */
static long long trimStream(Stream *s, const AddTrimArgs *a) {
    return streamTrim(s, a->maxLen, a->strategy == TRIM_MINID ? &a->minId : NULL, a->approx, a->limit);
}

/* The effect of an approximate trim: "=" and the threshold reached. */
static int trimRewrite(Stream *s, const AddTrimArgs *a, int *pos, EffectArg *args, char *idbuf) {
    if (!a->approx) return 0;
    int n = 0;
    pos[n] = a->strategyArg - 1;
    args[n++] = EA_STR("=");
    pos[n] = a->strategyArg;
    if (a->strategy == TRIM_MAXLEN) {
        args[n++] = EA_NUM((long long)s->length);
    } else {
        /* The first entry, tombstones included; none: the maximal ID (Redis). */
        StreamID first;
        if (!streamFirstRawID(s, &first)) first = (StreamID){UINT64_MAX, UINT64_MAX};
        args[n++] = EA_BUF(idbuf, (size_t)idToString(idbuf, &first));
    }
    return n;
}

static void xaddCommand(Client *c) {
    AddTrimArgs a;
    int idpos = parseAddTrimArgsOrReply(c, &a, 1);
    if (idpos == -1) return;
    int fieldPos = idpos + 1;
    if (c->argc - fieldPos < 2 || (c->argc - fieldPos) % 2 == 1) {
        replyErrorArity(c);
        return;
    }
    if (a.idGiven && a.seqGiven && a.id.ms == 0 && a.id.seq == 0) {
        replyError(c, "ERR The ID specified in XADD must be greater than 0-0");
        return;
    }
    size_t total = 0;
    for (int j = fieldPos; j < c->argc; j++) total += sdsLen(c->argv[j]);
    int wrong;
    kvobj *o = lookupWriteOrReply(c, c->argv[1], OBJ_STREAM, &wrong);
    if (wrong) return;
    if (!o) {
        if (a.noMkstream) {
            replyNull(c);
            return;
        }
    }
    Stream *s = o ? streamOf(o) : NULL;
    if (s && s->lastId.ms == UINT64_MAX && s->lastId.seq == UINT64_MAX) {
        replyError(c, "ERR The stream has exhausted the last possible ID, unable to add more items");
        return;
    }
    StreamID last = s ? s->lastId : (StreamID){0, 0};
    StreamID id;
    if (a.idGiven) {
        if (a.seqGiven) {
            id = a.id;
        } else if (last.ms == a.id.ms) {
            if (last.seq == UINT64_MAX) goto smaller;
            id = last;
            id.seq++;
        } else {
            id = a.id;
        }
    } else {
        uint64_t ms = (uint64_t)mstime();
        if (ms > last.ms) id = (StreamID){ms, 0};
        else {
            id = last;
            streamIncrID(&id);
        }
    }
    if (streamCompareID(&id, &last) <= 0) goto smaller;
    if (total > STREAM_LISTPACK_MAX_SIZE) {
        replyError(c, "ERR Elements are too large to be stored");
        return;
    }
    if (!o) {
        o = lookupCreateOrReply(c, c->argv[1], 1);
        s = streamOf(o);
    }
    streamAppend(s, &id, c->argv + fieldPos, (c->argc - fieldPos) / 2, (size_t)streamNodeMaxBytes,
                 streamNodeMaxEntries);
    char idbuf[STREAM_ID_STR_SIZE];
    int idlen = idToString(idbuf, &id);
    replyBulk(c, idbuf, (size_t)idlen);
    signalModifiedKey(c, c->db, c->argv[1], sdsLen(c->argv[1]));
    notifyKeyspaceEvent(NOTIFY_STREAM, "xadd", c->argv[1], sdsLen(c->argv[1]), c->db->id);
    serverIncrDirty(1);
    int pos[3];
    EffectArg args[3];
    char firstbuf[STREAM_ID_STR_SIZE];
    int n = 0;
    if (a.strategy != TRIM_NONE) {
        if (trimStream(s, &a)) notifyKeyspaceEvent(NOTIFY_STREAM, "xtrim", c->argv[1], sdsLen(c->argv[1]), c->db->id);
        n = trimRewrite(s, &a, pos, args, firstbuf);
    }
    if (!a.idGiven || !a.seqGiven) {
        pos[n] = idpos;
        args[n++] = EA_BUF(idbuf, (size_t)idlen);
    }
    if (n) effectsRewriteSent(c, c->argc, n, pos, args);
    signalKeyAsReady(c->db, c->argv[1], sdsLen(c->argv[1]));
    return;
smaller:
    replyError(c, "ERR The ID specified in XADD is equal or smaller than the target stream top item");
}

static void xtrimCommand(Client *c) {
    AddTrimArgs a;
    if (parseAddTrimArgsOrReply(c, &a, 0) == -1) return;
    int wrong;
    kvobj *o = lookupWriteOrReply(c, c->argv[1], OBJ_STREAM, &wrong);
    if (!o) {
        if (!wrong) replyLongLong(c, 0);
        return;
    }
    Stream *s = streamOf(o);
    long long deleted = trimStream(s, &a);
    if (deleted) {
        notifyKeyspaceEvent(NOTIFY_STREAM, "xtrim", c->argv[1], sdsLen(c->argv[1]), c->db->id);
        signalModifiedKey(c, c->db, c->argv[1], sdsLen(c->argv[1]));
        serverIncrDirty(deleted);
        int pos[2];
        EffectArg args[2];
        char firstbuf[STREAM_ID_STR_SIZE];
        int n = trimRewrite(s, &a, pos, args, firstbuf);
        if (n) effectsRewriteSent(c, c->argc, n, pos, args);
    }
    replyLongLong(c, deleted);
}

/* ------------------------------------------------------------------------ */
/* XRANGE / XREVRANGE / XLEN / XDEL                                           */
/* ------------------------------------------------------------------------ */

static void rangeGeneric(Client *c, int rev) {
    StreamID start, end;
    const sds startArg = rev ? c->argv[3] : c->argv[2];
    const sds endArg = rev ? c->argv[2] : c->argv[3];
    if (parseRangeOrReply(c, startArg, endArg, &start, &end) == -1) return;
    long long count = -1;
    for (int j = 4; j < c->argc; j++) {
        if (argIs(c->argv[j], "count") && j + 1 < c->argc) {
            if (getLongLongOrReply(c, c->argv[j + 1], &count, NULL) == -1) return;
            if (count < 0) count = 0;
            j++;
        } else {
            replyErrorSyntax(c);
            return;
        }
    }
    int wrong;
    kvobj *o = lookupReadOrReply(c, c->argv[1], OBJ_STREAM, &wrong);
    if (wrong) return;
    if (!o) {
        replyEmptyArray(c);
        return;
    }
    if (count == 0) {
        replyNullArray(c);
        return;
    }
    replyRange(c, streamOf(o), &start, &end, count == -1 ? 0 : count, rev);
}

static void xrangeCommand(Client *c) { rangeGeneric(c, 0); }
static void xrevrangeCommand(Client *c) { rangeGeneric(c, 1); }

static void xlenCommand(Client *c) {
    int wrong;
    kvobj *o = lookupReadOrReply(c, c->argv[1], OBJ_STREAM, &wrong);
    if (wrong) return;
    replyLongLong(c, o ? (long long)streamOf(o)->length : 0);
}

static void xdelCommand(Client *c) {
    int wrong;
    kvobj *o = lookupWriteOrReply(c, c->argv[1], OBJ_STREAM, &wrong);
    if (!o) {
        if (!wrong) replyLongLong(c, 0);
        return;
    }
    int n = c->argc - 2;
    StreamID *ids = xmalloc(sizeof(StreamID) * (size_t)n);
    for (int j = 0; j < n; j++) {
        if (parseStrictIDOrReply(c, c->argv[j + 2], &ids[j], 0, NULL) == -1) goto cleanup;
    }
    Stream *s = streamOf(o);
    long long deleted = 0;
    int firstEntry = 0;
    for (int j = 0; j < n; j++) {
        if (!streamDeleteID(s, &ids[j])) continue;
        if (streamCompareID(&ids[j], &s->firstId) == 0) firstEntry = 1;
        if (streamCompareID(&ids[j], &s->maxDeletedId) > 0) s->maxDeletedId = ids[j];
        deleted++;
    }
    if (deleted) {
        if (s->length == 0) s->firstId = (StreamID){0, 0};
        else if (firstEntry) streamEdgeID(s, 1, &s->firstId);
        signalModifiedKey(c, c->db, c->argv[1], sdsLen(c->argv[1]));
        notifyKeyspaceEvent(NOTIFY_STREAM, "xdel", c->argv[1], sdsLen(c->argv[1]), c->db->id);
        serverIncrDirty(deleted);
    }
    replyLongLong(c, deleted);
cleanup:
    xfree(ids);
}

/* ------------------------------------------------------------------------ */
/* Consumer-group effects                                                     */
/* ------------------------------------------------------------------------ */

/* XCLAIM key group consumer 0 id TIME ms RETRYCOUNT n FORCE JUSTID LASTID
 * last: the state of one NACK, as Redis propagates it. */
static void propagateClaim(int dbid, const sds key, const StreamCG *cg, const sds group, const StreamID *id,
                           const StreamNACK *nack) {
    if (!effectsOn) return;
    char idbuf[STREAM_ID_STR_SIZE], lastbuf[STREAM_ID_STR_SIZE];
    int idlen = idToString(idbuf, id), lastlen = idToString(lastbuf, &cg->lastId);
    EffectArg args[14] = {EA_STR("XCLAIM"),
                          EA_SDS(key),
                          EA_SDS(group),
                          EA_SDS(nack->consumer->name),
                          EA_STR("0"),
                          EA_BUF(idbuf, (size_t)idlen),
                          EA_STR("TIME"),
                          EA_NUM(nack->deliveryTime),
                          EA_STR("RETRYCOUNT"),
                          EA_NUM((long long)nack->deliveryCount),
                          EA_STR("FORCE"),
                          EA_STR("JUSTID"),
                          EA_STR("LASTID"),
                          EA_BUF(lastbuf, (size_t)lastlen)};
    effectsAlso(dbid, 14, args);
}

/* XGROUP SETID key group last ENTRIESREAD n */
static void propagateGroupID(int dbid, const sds key, const StreamCG *cg, const sds group) {
    if (!effectsOn) return;
    char lastbuf[STREAM_ID_STR_SIZE];
    int lastlen = idToString(lastbuf, &cg->lastId);
    EffectArg args[7] = {EA_STR("XGROUP"), EA_STR("SETID"),       EA_SDS(key), EA_SDS(group),
                         EA_BUF(lastbuf, (size_t)lastlen), EA_STR("ENTRIESREAD"), EA_NUM(cg->entriesRead)};
    effectsAlso(dbid, 7, args);
}

/* A consumer by name, its seen time refreshed; created (dirty, event) when
 * absent, and then, for a NOACK read (no XCLAIM will name it), propagated
 * as XGROUP CREATECONSUMER key group consumer, as Redis does. */
static StreamConsumer *consumerFor(Db *db, const sds key, StreamCG *cg, const sds group, const sds name,
                                   int propagate) {
    long long now = mstime();
    StreamConsumer *consumer = streamLookupConsumer(cg, name, sdsLen(name));
    if (consumer) {
        consumer->seenTime = now;
        return consumer;
    }
    consumer = streamCreateConsumer(cg, name, sdsLen(name), now);
    notifyKeyspaceEvent(NOTIFY_STREAM, "xgroup-createconsumer", key, sdsLen(key), db->id);
    serverIncrDirty(1);
    if (propagate && effectsOn) {
        EffectArg args[5] = {EA_STR("XGROUP"), EA_STR("CREATECONSUMER"), EA_SDS(key), EA_SDS(group), EA_SDS(name)};
        effectsAlso(db->id, 5, args);
    }
    return consumer;
}

static void pelRemove(StreamCG *cg, const unsigned char *key, StreamNACK *nack) {
    streamPelRemove(cg, key, nack);
}

/* New entries after start for a group reader: updates the group's last ID
 * and read counter, adds NACKs (unless noack), propagates.  Replies an
 * array of the entries; returns how many. */
static long long replyGroupRange(Client *c, Db *db, const sds key, Stream *s, const StreamID *start, long long count,
                                 StreamCG *cg, const sds group, StreamConsumer *consumer, int noack) {
    void *len = replyDeferredLen(c);
    StreamIter it;
    streamIterStart(&it, s, start, NULL, 0);
    StreamID id;
    long long nf, n = 0;
    int propagateLast = 0;
    while (streamIterNext(&it, &id, &nf)) {
        int advanced;
        StreamNACK *nack = streamGroupDeliver(s, cg, consumer, &id, noack, noack ? 0 : mstime(), &advanced);
        if (advanced && noack) propagateLast = 1;
        replyEntry(c, &it, &id, nf);
        if (nack) propagateClaim(db->id, key, cg, group, &id, nack);
        n++;
        if (count && n == count) break;
    }
    if (propagateLast) propagateGroupID(db->id, key, cg, group);
    replySetDeferredArrayLen(c, len, n);
    return n;
}

/* A consumer's own pending entries from start: entries since deleted show
 * as [id, nil]. */
static long long replyConsumerPEL(Client *c, Stream *s, const StreamID *start, long long count,
                                  StreamConsumer *consumer) {
    void *len = replyDeferredLen(c);
    unsigned char key[STREAM_ID_BYTES];
    streamEncodeID(key, start);
    long long n = 0;
    for (OmapNode *p = omapSeekGE(consumer->pel, key, sizeof(key), 0); p && (!count || n < count); p = omapNext(p)) {
        size_t klen;
        StreamID id;
        streamDecodeID(omapKey(p, &klen), &id);
        if (!replyOneEntry(c, s, &id)) {
            replyArrayLen(c, 2);
            replyID(c, &id);
            replyNullArray(c);
        } else {
            StreamNACK *nack = omapValue(p);
            nack->deliveryTime = mstime();
            nack->deliveryCount++;
        }
        n++;
    }
    replySetDeferredArrayLen(c, len, n);
    return n;
}

/* ------------------------------------------------------------------------ */
/* XREAD / XREADGROUP                                                         */
/* ------------------------------------------------------------------------ */

/* What a blocked reader waits for. */
typedef struct StreamBlock {
    int numKeys;
    sds *keys;        /* copies */
    StreamID *ids;    /* per key: serve entries after this */
    long long count;
    sds group, consumer; /* XREADGROUP, else NULL */
    int noack;
} StreamBlock;

static void streamBlockFree(void *p) {
    StreamBlock *b = p;
    for (int i = 0; i < b->numKeys; i++) sdsFree(b->keys[i]);
    xfree(b->keys);
    xfree(b->ids);
    sdsFree(b->group);
    sdsFree(b->consumer);
    xfree(b);
}

static void replyStreamHeader(Client *c, long n) {
    if (c->resp == 2) replyArrayLen(c, n);
    else replyMapLen(c, n);
}

static int serveBlockedStream(Client *c, Db *db, const char *key, size_t len) {
    StreamBlock *b = blockedPriv(c);
    int idx = -1;
    for (int i = 0; i < b->numKeys && idx < 0; i++)
        if (sdsLen(b->keys[i]) == len && memcmp(b->keys[i], key, len) == 0) idx = i;
    if (idx < 0) return 0;
    kvobj *o = dbLookupWrite(db, key, len);
    if (!o || kvType(o) != OBJ_STREAM) {
        if (!b->group) return 0;
        replyError(c, "UNBLOCKED the stream key no longer exists");
        return 1;
    }
    Stream *s = streamOf(o);
    StreamCG *cg = NULL;
    StreamID *gt = &b->ids[idx];
    if (b->group) {
        cg = streamLookupCG(s, b->group, sdsLen(b->group));
        if (!cg) {
            replyError(c, "NOGROUP the consumer group this client was blocked on no longer exists");
            return 1;
        }
        *gt = cg->lastId;
    }
    if (streamCompareID(&s->lastId, gt) <= 0) return 0;
    StreamID start = *gt;
    streamIncrID(&start);
    replyStreamHeader(c, 1);
    if (c->resp == 2) replyArrayLen(c, 2);
    sds k = b->keys[idx];
    replyBulk(c, k, sdsLen(k));
    if (cg) {
        StreamConsumer *consumer = consumerFor(db, k, cg, b->group, b->consumer, b->noack);
        replyGroupRange(c, db, k, s, &start, b->count, cg, b->group, consumer, b->noack);
    } else {
        replyRange(c, s, &start, NULL, b->count, 0);
    }
    return 1;
}

/* BLOCK's argument: integer milliseconds (0 = forever). */
static int getBlockTimeoutMsOrReply(Client *c, const sds arg, long long *ms) {
    long long t;
    if (getLongLongOrReply(c, arg, &t, "ERR timeout is not an integer or out of range") == -1) return -1;
    if (t < 0) {
        replyError(c, ERR_TIMEOUT_NEG);
        return -1;
    }
    if (t > 0 && t > LLONG_MAX - mstime()) {
        replyError(c, "ERR timeout is out of range");
        return -1;
    }
    *ms = t;
    return 0;
}

static void readGeneric(Client *c, int xreadgroup) {
    long long timeout = -1, count = 0;
    int streamsArg = 0, numStreams = 0, noack = 0;
    sds group = NULL, consumerName = NULL;
    for (int i = 1; i < c->argc; i++) {
        int more = c->argc - i - 1;
        const sds o = c->argv[i];
        if (argIs(o, "block") && more) {
            if (c->flags & CLIENT_LUA) {
                replyErrorFormat(c, "ERR %s command is not allowed with BLOCK option from scripts", c->argv[0]);
                return;
            }
            i++;
            if (getBlockTimeoutMsOrReply(c, c->argv[i], &timeout) == -1) return;
        } else if (argIs(o, "count") && more) {
            i++;
            if (getLongLongOrReply(c, c->argv[i], &count, NULL) == -1) return;
            if (count < 0) count = 0;
        } else if (argIs(o, "streams") && more) {
            streamsArg = i + 1;
            numStreams = c->argc - streamsArg;
            if (numStreams % 2 != 0) {
                /* Redis 7.0 names XREAD and '$' for both commands. */
                replyError(c, "ERR Unbalanced XREAD list of streams: for each stream key an ID or '$' must be "
                              "specified.");
                return;
            }
            numStreams /= 2;
            break;
        } else if (argIs(o, "group") && more >= 2) {
            if (!xreadgroup) {
                replyError(c, "ERR The GROUP option is only supported by XREADGROUP. You called XREAD instead.");
                return;
            }
            group = c->argv[i + 1];
            consumerName = c->argv[i + 2];
            i += 2;
        } else if (argIs(o, "noack")) {
            if (!xreadgroup) {
                replyError(c, "ERR The NOACK option is only supported by XREADGROUP. You called XREAD instead.");
                return;
            }
            noack = 1;
        } else {
            replyErrorSyntax(c);
            return;
        }
    }
    if (streamsArg == 0) {
        replyErrorSyntax(c);
        return;
    }
    if (xreadgroup && !group) {
        replyError(c, "ERR Missing GROUP option for XREADGROUP");
        return;
    }
    StreamID *ids = xmalloc(sizeof(StreamID) * (size_t)numStreams);
    StreamCG **groups = group ? xmalloc(sizeof(StreamCG *) * (size_t)numStreams) : NULL;
    for (int i = 0; i < numStreams; i++) {
        const sds key = c->argv[streamsArg + i];
        const sds arg = c->argv[streamsArg + numStreams + i];
        int wrong;
        kvobj *o = lookupReadOrReply(c, key, OBJ_STREAM, &wrong);
        if (wrong) goto cleanup;
        if (group) {
            StreamCG *cg = o ? streamLookupCG(streamOf(o), group, sdsLen(group)) : NULL;
            if (!cg) {
                replyErrorFormat(c, "NOGROUP No such key '%s' or consumer group '%s' in XREADGROUP with GROUP option",
                                 key, group);
                goto cleanup;
            }
            groups[i] = cg;
        }
        if (strcmp(arg, "$") == 0) {
            if (xreadgroup) {
                replyError(c, "ERR The $ ID is meaningless in the context of XREADGROUP: you want to read the "
                              "history of this consumer by specifying a proper ID, or use the > ID to get new "
                              "messages. The $ ID would just return an empty result set.");
                goto cleanup;
            }
            ids[i] = o ? streamOf(o)->lastId : (StreamID){0, 0};
            continue;
        }
        if (!xreadgroup && strcmp(arg, "+") == 0) {
            /* Redis 7.4: the last entry -- read as from just below the
             * last valid ID; an empty or missing stream as "$". */
            Stream *s = o ? streamOf(o) : NULL;
            if (s && s->length) {
                lastValidID(s, &ids[i]);
                streamDecrID(&ids[i]); /* not 0-0: an entry has it */
            } else {
                ids[i] = s ? s->lastId : (StreamID){0, 0};
            }
            continue;
        }
        if (strcmp(arg, ">") == 0) {
            if (!xreadgroup) {
                replyError(c, "ERR The > ID can be specified only when calling XREADGROUP using the GROUP <group> "
                              "<consumer> option.");
                goto cleanup;
            }
            ids[i] = (StreamID){UINT64_MAX, UINT64_MAX};
            continue;
        }
        if (parseStrictIDOrReply(c, arg, &ids[i], 0, NULL) == -1) goto cleanup;
    }
    long served = 0;
    void *len = NULL;
    for (int i = 0; i < numStreams; i++) {
        const sds key = c->argv[streamsArg + i];
        kvobj *o = dbLookupRead(c->db, key, sdsLen(key), 0);
        if (!o || kvType(o) != OBJ_STREAM) continue;
        Stream *s = streamOf(o);
        StreamID *gt = &ids[i];
        int sync = 0, history = 0;
        if (groups) {
            if (gt->ms != UINT64_MAX || gt->seq != UINT64_MAX) {
                sync = history = 1;
            } else if (s->length) {
                StreamID maxid;
                lastValidID(s, &maxid);
                if (streamCompareID(&maxid, &groups[i]->lastId) > 0) {
                    sync = 1;
                    *gt = groups[i]->lastId;
                }
            }
        } else if (s->length) {
            StreamID maxid;
            lastValidID(s, &maxid);
            if (streamCompareID(&maxid, gt) > 0) sync = 1;
        }
        if (!sync) continue;
        if (++served == 1) len = replyDeferredLen(c);
        StreamID start = *gt;
        streamIncrID(&start);
        if (c->resp == 2) replyArrayLen(c, 2);
        replyBulk(c, key, sdsLen(key));
        if (groups) {
            StreamConsumer *consumer = consumerFor(c->db, key, groups[i], group, consumerName, noack);
            if (history) replyConsumerPEL(c, s, &start, count, consumer);
            else replyGroupRange(c, c->db, key, s, &start, count, groups[i], group, consumer, noack);
            serverIncrDirty(1);
        } else {
            replyRange(c, s, &start, NULL, count, 0);
        }
    }
    if (served) {
        if (c->resp == 2) replySetDeferredArrayLen(c, len, served);
        else replySetDeferredMapLen(c, len, served);
        goto cleanup;
    }
    if (timeout != -1) {
        if (!clientMayBlock(c)) {
            replyNullArray(c);
            goto cleanup;
        }
        StreamBlock *b = xcalloc(sizeof(*b));
        b->numKeys = numStreams;
        b->keys = xmalloc(sizeof(sds) * (size_t)numStreams);
        for (int i = 0; i < numStreams; i++) b->keys[i] = sdsDup(c->argv[streamsArg + i]);
        b->ids = ids;
        ids = NULL;
        b->count = count ? count : XREAD_BLOCKED_DEFAULT_COUNT;
        if (group) {
            b->group = sdsDup(group);
            b->consumer = sdsDup(consumerName);
        }
        b->noack = noack;
        long long deadline = timeout ? mstime() + timeout : 0;
        blockForKeys(c, c->argv + streamsArg, numStreams, deadline, serveBlockedStream, b, streamBlockFree);
        goto cleanup;
    }
    replyNullArray(c);
cleanup:
    if (xreadgroup) effectsPrevent();
    xfree(ids);
    xfree(groups);
}

static void xreadCommand(Client *c) { readGeneric(c, 0); }
static void xreadgroupCommand(Client *c) { readGeneric(c, 1); }

/* ------------------------------------------------------------------------ */
/* XGROUP                                                                     */
/* ------------------------------------------------------------------------ */

static int getEntriesReadOrReply(Client *c, const sds arg, long long *v) {
    if (getLongLongOrReply(c, arg, v, NULL) == -1) return -1;
    if (*v < 0 && *v != STREAM_ENTRIES_READ_INVALID) {
        replyError(c, "ERR value for ENTRIESREAD must be positive or -1");
        return -1;
    }
    return 0;
}

static void notifyStream(Client *c, const char *event, const sds key) {
    notifyKeyspaceEvent(NOTIFY_STREAM, event, key, sdsLen(key), c->db->id);
}

/* Every XGROUP subcommand: the key and group checks in Redis's order,
 * then the subcommand (argv[1]). */
static void xgroupGeneric(Client *c) {
    const sds opt = c->argv[1];
    const sds key = c->argv[2], grp = c->argv[3];
    int mkstream = 0;
    long long entriesRead = STREAM_ENTRIES_READ_INVALID;
    int create = argIs(opt, "create"), setid = argIs(opt, "setid");
    if (create || setid) {
        for (int i = 5; i < c->argc;) {
            if (create && argIs(c->argv[i], "mkstream")) {
                mkstream = 1;
                i++;
            } else if (argIs(c->argv[i], "entriesread") && i + 1 < c->argc) {
                if (getEntriesReadOrReply(c, c->argv[i + 1], &entriesRead) == -1) return;
                i += 2;
            } else {
                replySubcommandSyntaxError(c);
                return;
            }
        }
    }
    int wrong;
    kvobj *o = lookupWriteOrReply(c, key, OBJ_STREAM, &wrong);
    if (wrong) return;
    Stream *s = o ? streamOf(o) : NULL;
    StreamCG *cg = NULL;
    if (!mkstream) {
        if (!s) {
            replyError(c, "ERR The XGROUP subcommand requires the key to exist. Note that for CREATE you may want "
                          "to use the MKSTREAM option to create an empty stream automatically.");
            return;
        }
        cg = streamLookupCG(s, grp, sdsLen(grp));
        if (!cg && !create && !argIs(opt, "destroy")) {
            replyErrorFormat(c, "NOGROUP No such consumer group '%s' for key name '%s'", grp, key);
            return;
        }
    }
    if (create) {
        if (c->argc > 8) {
            replySubcommandSyntaxError(c);
            return;
        }
        StreamID id;
        if (strcmp(c->argv[4], "$") == 0) id = s ? s->lastId : (StreamID){0, 0};
        else if (parseStrictIDOrReply(c, c->argv[4], &id, 0, NULL) == -1) return;
        if (!s) {
            o = lookupCreateOrReply(c, key, 1);
            s = streamOf(o);
            signalModifiedKey(c, c->db, key, sdsLen(key));
        }
        if (streamCreateCG(s, grp, sdsLen(grp), &id, entriesRead)) {
            replyOk(c);
            serverIncrDirty(1);
            notifyStream(c, "xgroup-create", key);
        } else {
            replyError(c, "BUSYGROUP Consumer Group name already exists");
        }
    } else if (argIs(opt, "setid")) {
        StreamID id;
        if (strcmp(c->argv[4], "$") == 0) id = s->lastId;
        else if (parseIDOrReply(c, c->argv[4], &id, 0) == -1) return;
        if (c->argc != 5 && c->argc != 7) {
            replySubcommandSyntaxError(c);
            return;
        }
        cg->lastId = id;
        cg->entriesRead = entriesRead;
        replyOk(c);
        serverIncrDirty(1);
        notifyStream(c, "xgroup-setid", key);
    } else if (argIs(opt, "destroy")) {
        if (cg) {
            streamDestroyCG(s, grp, sdsLen(grp));
            replyLongLong(c, 1);
            serverIncrDirty(1);
            notifyStream(c, "xgroup-destroy", key);
            signalKeyAsReady(c->db, key, sdsLen(key));
        } else {
            replyLongLong(c, 0);
        }
    } else if (argIs(opt, "createconsumer")) {
        const sds name = c->argv[4];
        if (streamCreateConsumer(cg, name, sdsLen(name), mstime())) {
            notifyStream(c, "xgroup-createconsumer", key);
            serverIncrDirty(1);
            replyLongLong(c, 1);
        } else {
            replyLongLong(c, 0);
        }
    } else { /* delconsumer */
        const sds name = c->argv[4];
        StreamConsumer *consumer = streamLookupConsumer(cg, name, sdsLen(name));
        long long pending = 0;
        if (consumer) {
            pending = streamDeleteConsumer(cg, consumer);
            serverIncrDirty(1);
            notifyStream(c, "xgroup-delconsumer", key);
        }
        replyLongLong(c, pending);
    }
}

static void xgroupHelpCommand(Client *c) {
    static const char *help[] = {
        "CREATE <key> <groupname> <id|$> [option]",
        "    Create a new consumer group. Options are:",
        "    * MKSTREAM",
        "      Create the empty stream if it does not exist.",
        "    * ENTRIESREAD entries_read",
        "      Set the group's entries_read counter (internal use).",
        "CREATECONSUMER <key> <groupname> <consumer>",
        "    Create a new consumer in the specified group.",
        "DELCONSUMER <key> <groupname> <consumer>",
        "    Remove the specified consumer.",
        "DESTROY <key> <groupname>",
        "    Remove the specified group.",
        "SETID <key> <groupname> <id|$> [ENTRIESREAD entries_read]",
        "    Set the current group ID and entries_read counter.",
        NULL,
    };
    replyHelp(c, help);
}

/* ------------------------------------------------------------------------ */
/* XACK / XPENDING                                                            */
/* ------------------------------------------------------------------------ */

static void xackCommand(Client *c) {
    int wrong;
    kvobj *o = lookupReadOrReply(c, c->argv[1], OBJ_STREAM, &wrong);
    if (wrong) return;
    StreamCG *cg = o ? streamLookupCG(streamOf(o), c->argv[2], sdsLen(c->argv[2])) : NULL;
    if (!cg) {
        replyLongLong(c, 0);
        return;
    }
    int n = c->argc - 3;
    StreamID *ids = xmalloc(sizeof(StreamID) * (size_t)n);
    for (int j = 0; j < n; j++)
        if (parseStrictIDOrReply(c, c->argv[j + 3], &ids[j], 0, NULL) == -1) goto cleanup;
    long long acked = 0;
    for (int j = 0; j < n; j++) {
        if (!streamGroupAck(cg, &ids[j])) continue;
        acked++;
        serverIncrDirty(1);
    }
    replyLongLong(c, acked);
cleanup:
    xfree(ids);
}

static void xpendingCommand(Client *c) {
    int justinfo = c->argc == 3;
    StreamID start, end;
    long long count = 0, minidle = 0;
    sds consumerName = NULL;
    if (c->argc != 3 && (c->argc < 6 || c->argc > 9)) {
        replyErrorSyntax(c);
        return;
    }
    if (c->argc >= 6) {
        int idx = 3;
        if (argIs(c->argv[3], "idle")) {
            if (getLongLongOrReply(c, c->argv[4], &minidle, NULL) == -1) return;
            if (c->argc < 8) {
                replyErrorSyntax(c);
                return;
            }
            idx += 2;
        }
        if (getLongLongOrReply(c, c->argv[idx + 2], &count, NULL) == -1) return;
        if (count < 0) count = 0;
        if (parseRangeOrReply(c, c->argv[idx], c->argv[idx + 1], &start, &end) == -1) return;
        if (idx + 3 < c->argc) consumerName = c->argv[idx + 3];
    }
    int wrong;
    kvobj *o = lookupReadOrReply(c, c->argv[1], OBJ_STREAM, &wrong);
    if (wrong) return;
    StreamCG *cg = o ? streamLookupCG(streamOf(o), c->argv[2], sdsLen(c->argv[2])) : NULL;
    if (!cg) {
        replyErrorFormat(c, "NOGROUP No such key '%s' or consumer group '%s'", c->argv[1], c->argv[2]);
        return;
    }
    if (justinfo) {
        replyArrayLen(c, 4);
        replyLongLong(c, (long long)omapSize(cg->pel));
        if (omapSize(cg->pel) == 0) {
            replyNull(c);
            replyNull(c);
            replyNullArray(c);
            return;
        }
        size_t klen;
        StreamID id;
        streamDecodeID(omapKey(omapFirst(cg->pel), &klen), &id);
        replyID(c, &id);
        streamDecodeID(omapKey(omapLast(cg->pel), &klen), &id);
        replyID(c, &id);
        void *len = replyDeferredLen(c);
        long n = 0;
        for (OmapNode *cn = omapFirst(cg->consumers); cn; cn = omapNext(cn)) {
            StreamConsumer *consumer = omapValue(cn);
            if (omapSize(consumer->pel) == 0) continue;
            replyArrayLen(c, 2);
            replyBulkSds(c, consumer->name);
            replyBulkLongLong(c, (long long)omapSize(consumer->pel));
            n++;
        }
        replySetDeferredArrayLen(c, len, n);
        return;
    }
    Omap *pel = cg->pel;
    if (consumerName) {
        StreamConsumer *consumer = streamLookupConsumer(cg, consumerName, sdsLen(consumerName));
        if (!consumer) {
            replyEmptyArray(c);
            return;
        }
        pel = consumer->pel;
    }
    unsigned char startKey[STREAM_ID_BYTES], endKey[STREAM_ID_BYTES];
    streamEncodeID(startKey, &start);
    streamEncodeID(endKey, &end);
    long long now = mstime();
    void *len = replyDeferredLen(c);
    long n = 0;
    for (OmapNode *p = omapSeekGE(pel, startKey, sizeof(startKey), 0); count && p; p = omapNext(p)) {
        size_t klen;
        const unsigned char *k = omapKey(p, &klen);
        if (memcmp(k, endKey, sizeof(endKey)) > 0) break;
        StreamNACK *nack = omapValue(p);
        if (minidle && now - nack->deliveryTime < minidle) continue;
        n++;
        count--;
        StreamID id;
        streamDecodeID(k, &id);
        replyArrayLen(c, 4);
        replyID(c, &id);
        replyBulkSds(c, nack->consumer->name);
        long long elapsed = now - nack->deliveryTime;
        replyLongLong(c, elapsed < 0 ? 0 : elapsed);
        replyLongLong(c, (long long)nack->deliveryCount);
    }
    replySetDeferredArrayLen(c, len, n);
}

/* ------------------------------------------------------------------------ */
/* XCLAIM / XAUTOCLAIM                                                        */
/* ------------------------------------------------------------------------ */

/* The stream and group named by argv[1], argv[2] for claiming; NULL after
 * WRONGTYPE or NOGROUP. */
static StreamCG *claimGroupOrReply(Client *c, Stream **s) {
    int wrong;
    kvobj *o = lookupReadOrReply(c, c->argv[1], OBJ_STREAM, &wrong);
    if (wrong) return NULL;
    StreamCG *cg = o ? streamLookupCG(streamOf(o), c->argv[2], sdsLen(c->argv[2])) : NULL;
    if (!cg) {
        replyErrorFormat(c, "NOGROUP No such key '%s' or consumer group '%s'", c->argv[1], c->argv[2]);
        return NULL;
    }
    *s = streamOf(o);
    return cg;
}

static void xclaimCommand(Client *c) {
    Stream *s;
    StreamCG *cg = claimGroupOrReply(c, &s);
    if (!cg) return;
    long long minidle, retrycount = -1, deliverytime = -1;
    int force = 0, justid = 0;
    if (getLongLongOrReply(c, c->argv[4], &minidle, "ERR Invalid min-idle-time argument for XCLAIM") == -1) return;
    if (minidle < 0) minidle = 0;
    int j;
    StreamID *ids = xmalloc(sizeof(StreamID) * (size_t)(c->argc - 5 > 0 ? c->argc - 5 : 1));
    for (j = 5; j < c->argc; j++)
        if (parseStrictIDOrReply(NULL, c->argv[j], &ids[j - 5], 0, NULL) == -1) break;
    int lastIdArg = j - 1;
    long long now = mstime();
    StreamID lastId = {0, 0};
    int propagateLast = 0;
    for (; j < c->argc; j++) {
        int more = c->argc - 1 - j;
        const sds opt = c->argv[j];
        if (argIs(opt, "force")) {
            force = 1;
        } else if (argIs(opt, "justid")) {
            justid = 1;
        } else if (argIs(opt, "idle") && more) {
            j++;
            if (getLongLongOrReply(c, c->argv[j], &deliverytime, "ERR Invalid IDLE option argument for XCLAIM") == -1)
                goto cleanup;
            deliverytime = now - deliverytime;
        } else if (argIs(opt, "time") && more) {
            j++;
            if (getLongLongOrReply(c, c->argv[j], &deliverytime, "ERR Invalid TIME option argument for XCLAIM") == -1)
                goto cleanup;
        } else if (argIs(opt, "retrycount") && more) {
            j++;
            if (getLongLongOrReply(c, c->argv[j], &retrycount, "ERR Invalid RETRYCOUNT option argument for XCLAIM") ==
                -1)
                goto cleanup;
        } else if (argIs(opt, "lastid") && more) {
            j++;
            if (parseStrictIDOrReply(c, c->argv[j], &lastId, 0, NULL) == -1) goto cleanup;
        } else {
            replyErrorFormat(c, "ERR Unrecognized XCLAIM option '%s'", opt);
            goto cleanup;
        }
    }
    if (streamCompareID(&lastId, &cg->lastId) > 0) {
        cg->lastId = lastId;
        propagateLast = 1;
    }
    if (deliverytime != -1) {
        if (deliverytime < 0 || deliverytime > now) deliverytime = now;
    } else {
        deliverytime = now;
    }
    StreamConsumer *consumer = NULL;
    const sds name = c->argv[3];
    void *len = replyDeferredLen(c);
    long n = 0;
    for (int k = 5; k <= lastIdArg; k++) {
        StreamID id = ids[k - 5];
        unsigned char buf[STREAM_ID_BYTES];
        streamEncodeID(buf, &id);
        StreamNACK *nack = omapFind(cg->pel, buf, sizeof(buf));
        if (!entryExists(s, &id)) {
            if (nack) {
                propagateClaim(c->db->id, c->argv[1], cg, c->argv[2], &id, nack);
                propagateLast = 0;
                serverIncrDirty(1);
                pelRemove(cg, buf, nack);
            }
            continue;
        }
        if (force && !nack) {
            nack = streamCreateNACK(NULL, now);
            omapInsert(cg->pel, buf, sizeof(buf), nack);
        }
        if (!nack) continue;
        if (nack->consumer && minidle && now - nack->deliveryTime < minidle) continue;
        if (!consumer) consumer = consumerFor(c->db, c->argv[1], cg, c->argv[2], name, 0);
        if (nack->consumer != consumer && nack->consumer) omapDelete(nack->consumer->pel, buf, sizeof(buf));
        nack->deliveryTime = deliverytime;
        if (retrycount >= 0) nack->deliveryCount = (uint64_t)retrycount;
        else if (!justid) nack->deliveryCount++;
        if (nack->consumer != consumer) {
            omapInsert(consumer->pel, buf, sizeof(buf), nack);
            nack->consumer = consumer;
        }
        if (justid) replyID(c, &id);
        else if (!replyOneEntry(c, s, &id)) replyNull(c);
        n++;
        propagateClaim(c->db->id, c->argv[1], cg, c->argv[2], &id, nack);
        propagateLast = 0;
        serverIncrDirty(1);
    }
    if (propagateLast) {
        propagateGroupID(c->db->id, c->argv[1], cg, c->argv[2]);
        serverIncrDirty(1);
    }
    replySetDeferredArrayLen(c, len, n);
    effectsPrevent();
cleanup:
    xfree(ids);
}

static void xautoclaimCommand(Client *c) {
    long long minidle;
    long count = 100;
    const long attemptsFactor = 10;
    StreamID start;
    int ex, justid = 0;
    if (getLongLongOrReply(c, c->argv[4], &minidle, "ERR Invalid min-idle-time argument for XAUTOCLAIM") == -1)
        return;
    if (minidle < 0) minidle = 0;
    if (parseIntervalIDOrReply(c, c->argv[5], &start, &ex, 0) == -1) return;
    if (ex && streamIncrID(&start) == -1) {
        replyError(c, "ERR invalid start ID for the interval");
        return;
    }
    for (int j = 6; j < c->argc; j++) {
        int more = c->argc - 1 - j;
        if (argIs(c->argv[j], "count") && more) {
            long maxCount = LONG_MAX / (long)(sizeof(StreamID) > (size_t)attemptsFactor ? sizeof(StreamID)
                                                                                         : (size_t)attemptsFactor);
            if (getRangeLongOrReply(c, c->argv[j + 1], 1, maxCount, &count, "ERR COUNT must be > 0") == -1) return;
            j++;
        } else if (argIs(c->argv[j], "justid")) {
            justid = 1;
        } else {
            replyErrorSyntax(c);
            return;
        }
    }
    Stream *s;
    StreamCG *cg = claimGroupOrReply(c, &s);
    if (!cg) return;
    long long attempts = (long long)count * attemptsFactor;
    /* Claimed and deleted IDs, collected first: the cursor leads the reply. */
    StreamID *claimed = NULL, *deleted = NULL;
    long numClaimed = 0, capClaimed = 0, numDeleted = 0, capDeleted = 0;
    StreamConsumer *consumer = NULL;
    unsigned char startKey[STREAM_ID_BYTES];
    streamEncodeID(startKey, &start);
    long long now = mstime();
    OmapNode *next = omapSeekGE(cg->pel, startKey, sizeof(startKey), 0);
    while (attempts-- && count && next) {
        OmapNode *cur = next;
        next = omapNext(cur);
        size_t klen;
        unsigned char key[STREAM_ID_BYTES];
        memcpy(key, omapKey(cur, &klen), sizeof(key));
        StreamNACK *nack = omapValue(cur);
        StreamID id;
        streamDecodeID(key, &id);
        if (!entryExists(s, &id)) {
            propagateClaim(c->db->id, c->argv[1], cg, c->argv[2], &id, nack);
            serverIncrDirty(1);
            pelRemove(cg, key, nack);
            if (numDeleted == capDeleted) {
                capDeleted = capDeleted ? capDeleted * 2 : 16;
                deleted = xrealloc(deleted, sizeof(StreamID) * (size_t)capDeleted);
            }
            deleted[numDeleted++] = id;
            count--;
            continue;
        }
        if (minidle && now - nack->deliveryTime < minidle) continue;
        if (!consumer) consumer = consumerFor(c->db, c->argv[1], cg, c->argv[2], c->argv[3], 0);
        if (nack->consumer != consumer && nack->consumer) omapDelete(nack->consumer->pel, key, sizeof(key));
        nack->deliveryTime = now;
        if (!justid) nack->deliveryCount++;
        if (nack->consumer != consumer) {
            omapInsert(consumer->pel, key, sizeof(key), nack);
            nack->consumer = consumer;
        }
        if (numClaimed == capClaimed) {
            capClaimed = capClaimed ? capClaimed * 2 : 16;
            claimed = xrealloc(claimed, sizeof(StreamID) * (size_t)capClaimed);
        }
        claimed[numClaimed++] = id;
        count--;
        propagateClaim(c->db->id, c->argv[1], cg, c->argv[2], &id, nack);
        serverIncrDirty(1);
    }
    StreamID endId = {0, 0};
    if (next) {
        size_t klen;
        streamDecodeID(omapKey(next, &klen), &endId);
    }
    replyArrayLen(c, 3);
    replyID(c, &endId);
    replyArrayLen(c, numClaimed);
    for (long i = 0; i < numClaimed; i++) {
        if (justid) replyID(c, &claimed[i]);
        else if (!replyOneEntry(c, s, &claimed[i])) replyNull(c);
    }
    replyArrayLen(c, numDeleted);
    for (long i = 0; i < numDeleted; i++) replyID(c, &deleted[i]);
    xfree(claimed);
    xfree(deleted);
    effectsPrevent();
}

/* ------------------------------------------------------------------------ */
/* XINFO                                                                      */
/* ------------------------------------------------------------------------ */

static void replyLag(Client *c, Stream *s, StreamCG *cg) {
    long long lag = 0;
    int valid = 0;
    if (!s->entriesAdded) {
        valid = 1;
    } else if (cg->entriesRead != STREAM_ENTRIES_READ_INVALID && !streamRangeHasTombstones(s, &cg->lastId, NULL)) {
        lag = (long long)s->entriesAdded - cg->entriesRead;
        valid = 1;
    } else {
        long long read = streamEstimateDistance(s, &cg->lastId);
        if (read != STREAM_ENTRIES_READ_INVALID) {
            lag = (long long)s->entriesAdded - read;
            valid = 1;
        }
    }
    if (valid) replyLongLong(c, lag);
    else replyNull(c);
}

static void replyEntriesRead(Client *c, StreamCG *cg) {
    if (cg->entriesRead != STREAM_ENTRIES_READ_INVALID) replyLongLong(c, cg->entriesRead);
    else replyNull(c);
}

/* The stream at argv[2] for XINFO; NULL after the error. */
static Stream *xinfoStreamOrReply(Client *c) {
    int wrong;
    kvobj *o = lookupReadOrReply(c, c->argv[2], OBJ_STREAM, &wrong);
    if (wrong) return NULL;
    if (!o) {
        replyError(c, ERR_NO_SUCH_KEY);
        return NULL;
    }
    return streamOf(o);
}

static void xinfoConsumersCommand(Client *c) {
    Stream *s = xinfoStreamOrReply(c);
    if (!s) return;
    StreamCG *cg = streamLookupCG(s, c->argv[3], sdsLen(c->argv[3]));
    if (!cg) {
        replyErrorFormat(c, "NOGROUP No such consumer group '%s' for key name '%s'", c->argv[3], c->argv[2]);
        return;
    }
    replyArrayLen(c, (long)omapSize(cg->consumers));
    long long now = mstime();
    for (OmapNode *n = omapFirst(cg->consumers); n; n = omapNext(n)) {
        StreamConsumer *consumer = omapValue(n);
        long long idle = now - consumer->seenTime;
        replyMapLen(c, 3);
        replyBulkCString(c, "name");
        replyBulkSds(c, consumer->name);
        replyBulkCString(c, "pending");
        replyLongLong(c, (long long)omapSize(consumer->pel));
        replyBulkCString(c, "idle");
        replyLongLong(c, idle < 0 ? 0 : idle);
    }
}

static void xinfoGroupsCommand(Client *c) {
    Stream *s = xinfoStreamOrReply(c);
    if (!s) return;
    if (!s->groups) {
        replyEmptyArray(c);
        return;
    }
    replyArrayLen(c, (long)omapSize(s->groups));
    for (OmapNode *n = omapFirst(s->groups); n; n = omapNext(n)) {
        StreamCG *cg = omapValue(n);
        size_t klen;
        const unsigned char *name = omapKey(n, &klen);
        replyMapLen(c, 6);
        replyBulkCString(c, "name");
        replyBulk(c, name, klen);
        replyBulkCString(c, "consumers");
        replyLongLong(c, (long long)omapSize(cg->consumers));
        replyBulkCString(c, "pending");
        replyLongLong(c, (long long)omapSize(cg->pel));
        replyBulkCString(c, "last-delivered-id");
        replyID(c, &cg->lastId);
        replyBulkCString(c, "entries-read");
        replyEntriesRead(c, cg);
        replyBulkCString(c, "lag");
        replyLag(c, s, cg);
    }
}

static void replyFullGroups(Client *c, Stream *s, long long count) {
    if (!s->groups) {
        replyEmptyArray(c);
        return;
    }
    replyArrayLen(c, (long)omapSize(s->groups));
    for (OmapNode *g = omapFirst(s->groups); g; g = omapNext(g)) {
        StreamCG *cg = omapValue(g);
        size_t klen;
        const unsigned char *name = omapKey(g, &klen);
        replyMapLen(c, 7);
        replyBulkCString(c, "name");
        replyBulk(c, name, klen);
        replyBulkCString(c, "last-delivered-id");
        replyID(c, &cg->lastId);
        replyBulkCString(c, "entries-read");
        replyEntriesRead(c, cg);
        replyBulkCString(c, "lag");
        replyLag(c, s, cg);
        replyBulkCString(c, "pel-count");
        replyLongLong(c, (long long)omapSize(cg->pel));
        replyBulkCString(c, "pending");
        void *len = replyDeferredLen(c);
        long n = 0;
        for (OmapNode *p = omapFirst(cg->pel); p && (!count || n < count); p = omapNext(p)) {
            StreamNACK *nack = omapValue(p);
            StreamID id;
            streamDecodeID(omapKey(p, &klen), &id);
            replyArrayLen(c, 4);
            replyID(c, &id);
            replyBulkSds(c, nack->consumer->name);
            replyLongLong(c, nack->deliveryTime);
            replyLongLong(c, (long long)nack->deliveryCount);
            n++;
        }
        replySetDeferredArrayLen(c, len, n);
        replyBulkCString(c, "consumers");
        replyArrayLen(c, (long)omapSize(cg->consumers));
        for (OmapNode *cn = omapFirst(cg->consumers); cn; cn = omapNext(cn)) {
            StreamConsumer *consumer = omapValue(cn);
            replyMapLen(c, 4);
            replyBulkCString(c, "name");
            replyBulkSds(c, consumer->name);
            replyBulkCString(c, "seen-time");
            replyLongLong(c, consumer->seenTime);
            replyBulkCString(c, "pel-count");
            replyLongLong(c, (long long)omapSize(consumer->pel));
            replyBulkCString(c, "pending");
            void *plen = replyDeferredLen(c);
            long pn = 0;
            for (OmapNode *p = omapFirst(consumer->pel); p && (!count || pn < count); p = omapNext(p)) {
                StreamNACK *nack = omapValue(p);
                StreamID id;
                streamDecodeID(omapKey(p, &klen), &id);
                replyArrayLen(c, 3);
                replyID(c, &id);
                replyLongLong(c, nack->deliveryTime);
                replyLongLong(c, (long long)nack->deliveryCount);
                pn++;
            }
            replySetDeferredArrayLen(c, plen, pn);
        }
    }
}

static void xinfoStreamCommand(Client *c) {
    Stream *s = xinfoStreamOrReply(c);
    if (!s) return;
    int full = 0;
    long long count = 10;
    int argc = c->argc - 3;
    if (argc) {
        if (!argIs(c->argv[3], "full") || (argc > 1 && (argc != 3 || !argIs(c->argv[4], "count")))) {
            replySubcommandSyntaxError(c);
            return;
        }
        if (argc == 3) {
            if (getLongLongOrReply(c, c->argv[5], &count, NULL) == -1) return;
            if (count < 0) count = 10;
        }
        full = 1;
    }
    replyMapLen(c, full ? 9 : 10);
    replyBulkCString(c, "length");
    replyLongLong(c, (long long)s->length);
    replyBulkCString(c, "radix-tree-keys");
    replyLongLong(c, (long long)omapSize(s->nodes));
    replyBulkCString(c, "radix-tree-nodes");
    replyLongLong(c, (long long)streamRaxNodes(s));
    replyBulkCString(c, "last-generated-id");
    replyID(c, &s->lastId);
    replyBulkCString(c, "max-deleted-entry-id");
    replyID(c, &s->maxDeletedId);
    replyBulkCString(c, "entries-added");
    replyLongLong(c, (long long)s->entriesAdded);
    replyBulkCString(c, "recorded-first-entry-id");
    replyID(c, &s->firstId);
    if (!full) {
        replyBulkCString(c, "groups");
        replyLongLong(c, s->groups ? (long long)omapSize(s->groups) : 0);
        StreamID id;
        replyBulkCString(c, "first-entry");
        if (!streamEdgeID(s, 1, &id) || !replyOneEntry(c, s, &id)) replyNull(c);
        replyBulkCString(c, "last-entry");
        if (!streamEdgeID(s, 0, &id) || !replyOneEntry(c, s, &id)) replyNull(c);
        return;
    }
    replyBulkCString(c, "entries");
    replyRange(c, s, NULL, NULL, count, 0);
    replyBulkCString(c, "groups");
    replyFullGroups(c, s, count);
}

static void xinfoHelpCommand(Client *c) {
    static const char *help[] = {
        "CONSUMERS <key> <groupname>",
        "    Show consumers of <groupname>.",
        "GROUPS <key>",
        "    Show the stream consumer groups.",
        "STREAM <key> [FULL [COUNT <count>]",
        "    Show information about the stream.",
        NULL,
    };
    replyHelp(c, help);
}

/* ------------------------------------------------------------------------ */
/* XSETID                                                                     */
/* ------------------------------------------------------------------------ */

static void xsetidCommand(Client *c) {
    StreamID id, maxDel = {0, 0};
    long long entriesAdded = -1;
    if (parseStrictIDOrReply(c, c->argv[2], &id, 0, NULL) == -1) return;
    for (int i = 3; i < c->argc;) {
        int more = c->argc - 1 - i;
        if (argIs(c->argv[i], "entriesadded") && more) {
            if (getLongLongOrReply(c, c->argv[i + 1], &entriesAdded, NULL) == -1) return;
            if (entriesAdded < 0) {
                replyError(c, "ERR entries_added must be positive");
                return;
            }
            i += 2;
        } else if (argIs(c->argv[i], "maxdeletedid") && more) {
            if (parseStrictIDOrReply(c, c->argv[i + 1], &maxDel, 0, NULL) == -1) return;
            if (streamCompareID(&id, &maxDel) < 0) {
                replyError(c, "ERR The ID specified in XSETID is smaller than the provided max_deleted_entry_id");
                return;
            }
            i += 2;
        } else {
            replyErrorSyntax(c);
            return;
        }
    }
    int wrong;
    kvobj *o = lookupWriteOrReply(c, c->argv[1], OBJ_STREAM, &wrong);
    if (wrong) return;
    if (!o) {
        replyError(c, ERR_NO_SUCH_KEY);
        return;
    }
    Stream *s = streamOf(o);
    if (s->length > 0) {
        StreamID maxid;
        lastValidID(s, &maxid);
        if (streamCompareID(&id, &maxid) < 0) {
            replyError(c, "ERR The ID specified in XSETID is smaller than the target stream top item");
            return;
        }
        if (entriesAdded != -1 && s->length > (uint64_t)entriesAdded) {
            replyError(c, "ERR The entries_added specified in XSETID is smaller than the target stream length");
            return;
        }
    }
    s->lastId = id;
    if (entriesAdded != -1) s->entriesAdded = (uint64_t)entriesAdded;
    if (maxDel.ms || maxDel.seq) s->maxDeletedId = maxDel;
    signalModifiedKey(c, c->db, c->argv[1], sdsLen(c->argv[1]));
    notifyStream(c, "xsetid", c->argv[1]);
    serverIncrDirty(1);
    replyOk(c);
}

/* --- command handlers (metadata: src/core/command_data.c) --- */

static Command xgroupSubcommands[] = {
    {.name = "create", .proc = xgroupGeneric},
    {.name = "setid", .proc = xgroupGeneric},
    {.name = "destroy", .proc = xgroupGeneric},
    {.name = "createconsumer", .proc = xgroupGeneric},
    {.name = "delconsumer", .proc = xgroupGeneric},
    {.name = "help", .proc = xgroupHelpCommand},
    {0},
};

static Command xinfoSubcommands[] = {
    {.name = "consumers", .proc = xinfoConsumersCommand},
    {.name = "groups", .proc = xinfoGroupsCommand},
    {.name = "stream", .proc = xinfoStreamCommand},
    {.name = "help", .proc = xinfoHelpCommand},
    {0},
};

Command streamCommands[] = {
    {.name = "xadd", .proc = xaddCommand},
    {.name = "xrange", .proc = xrangeCommand},
    {.name = "xrevrange", .proc = xrevrangeCommand},
    {.name = "xlen", .proc = xlenCommand},
    {.name = "xdel", .proc = xdelCommand},
    {.name = "xtrim", .proc = xtrimCommand},
    {.name = "xread", .proc = xreadCommand},
    {.name = "xreadgroup", .proc = xreadgroupCommand},
    {.name = "xgroup", .subcommands = xgroupSubcommands},
    {.name = "xack", .proc = xackCommand},
    {.name = "xpending", .proc = xpendingCommand},
    {.name = "xclaim", .proc = xclaimCommand},
    {.name = "xautoclaim", .proc = xautoclaimCommand},
    {.name = "xinfo", .subcommands = xinfoSubcommands},
    {.name = "xsetid", .proc = xsetidCommand},
    {0},
};

/* ------------------------------------------------------------------------ */
/* Configuration                                                             */
/* ------------------------------------------------------------------------ */

static ConfigDef streamConfig[] = {
    CONFIG_LL("stream-node-max-bytes", NULL, CF_MEMORY, streamNodeMaxBytes, 0, LONG_MAX, "4096",
              .rank = CONFIG_RANK_ENCODINGS + 7),
    CONFIG_LL("stream-node-max-entries", NULL, 0, streamNodeMaxEntries, 0, LONG_MAX, "100",
              .rank = CONFIG_RANK_ENCODINGS + 8),
};

void streamRegisterConfig(void) { configRegister(streamConfig, CONFIG_COUNT_OF(streamConfig)); }

void streamNodeLimits(size_t *maxBytes, long long *maxEntries) {
    *maxBytes = (size_t)streamNodeMaxBytes;
    *maxEntries = streamNodeMaxEntries;
}
