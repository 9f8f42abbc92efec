/* t_list.c -- the list commands, blocking ones included.
 *
 * A list is a bare listpack while it fits one node, else a Quicklist
 * (list.h: listOpen/listClose give every command a quicklist view of
 * either); OBJECT ENCODING says "quicklist" for both, as Redis 7.0 reports
 * for all lists.  The list-max-listpack-size and list-compress-depth in
 * force when a command runs apply to what it changes.  A list never exists empty:
 * the command that removes its last element deletes the key and sends the
 * "del" event.
 *
 * Writes follow Redis 7.0's order: parse everything, look up (WRONGTYPE),
 * change, signalModifiedKey, keyspace event(s), dirty count, reply.  Every
 * push also calls signalKeyAsReady so that clients blocked in BLPOP & co
 * are served once the command completes (blocking.c).
 *
 * The blocking commands try to serve at once like their non-blocking
 * forms; when every key is empty they block (or, inside MULTI or a script,
 * reply as on a timeout).  A ListBlock (the client's blocking priv) records
 * what to do when a key becomes ready; serveBlockedList does it. */
#include <limits.h>
#include <stdint.h>
#include <string.h>

#include "core/client.h"
#include "core/command.h"
#include "core/effects.h"
#include "core/errors.h"
#include "core/server.h"
#include "db/db.h"
#include "db/object.h"
#include "ds/alloc.h"
#include "ds/listpack.h"
#include "ds/quicklist.h"
#include "ds/sds.h"
#include "ds/util.h"
#include "types/blocking.h"
#include "types/list.h"

#define LIST_HEAD QL_HEAD
#define LIST_TAIL QL_TAIL

/* --- value hooks --- */

static void listFreeValue(void *ptr, int encoding) {
    if (encoding == OBJ_ENC_LISTPACK) lpFree(ptr);
    else quicklistRelease(ptr);
}

static void *listDupValue(const void *ptr, int encoding) {
    if (encoding == OBJ_ENC_LISTPACK) {
        size_t n = lpBytes(ptr);
        unsigned char *copy = xmalloc(n);
        memcpy(copy, ptr, n);
        return copy;
    }
    return quicklistDup(ptr);
}

static size_t listValueSize(const void *ptr, int encoding) {
    if (encoding == OBJ_ENC_LISTPACK) return xmallocSize((void *)ptr);
    return quicklistMemUsage(ptr);
}

const ObjectType listObjectType = {.free = listFreeValue, .dup = listDupValue, .size = listValueSize};

/* --- shared helpers --- */

Quicklist *listOpen(ListRef *r, kvobj *o) {
    r->o = o;
    if (kvEncoding(o) == OBJ_ENC_QUICKLIST) {
        r->lent = 0;
        r->ql = kvPtr(o);
    } else {
        r->lent = 1;
        r->ql = quicklistLend(&r->loan, kvPtr(o), server.cfg.listMaxListpackSize, server.cfg.listCompressDepth);
    }
    return r->ql;
}

void listClose(ListRef *r, int shrunk) {
    kvobj *o = r->o;
    if (r->lent) {
        unsigned char *lp;
        Quicklist *grown = quicklistEndLoan(&r->loan, &lp);
        if (grown) {
            kvSetEncoding(o, OBJ_ENC_QUICKLIST);
            kvSetPtr(o, grown);
        } else {
            kvSetPtr(o, lp);
        }
    } else if (shrunk) {
        unsigned char *lp = quicklistToListpack(r->ql);
        if (lp) {
            kvSetEncoding(o, OBJ_ENC_LISTPACK);
            kvSetPtr(o, lp);
        }
    }
    r->ql = NULL;
}

unsigned long listLength(const kvobj *o) {
    return kvEncoding(o) == OBJ_ENC_LISTPACK ? lpLength(kvPtr(o)) : quicklistCount(kvPtr(o));
}

/* A new empty list stored at key (absent before), opened in r.  A new list
 * is a bare listpack (Redis 7.2's rule; OBJECT ENCODING still answers
 * quicklist as 7.0 does). */
static Quicklist *listCreateAt(ListRef *r, Db *db, const char *key, size_t len) {
    kvobj *o = kvCreatePtr(key, len, OBJ_LIST, OBJ_ENC_LISTPACK, lpNew(0));
    dbAdd(db, o);
    return listOpen(r, o);
}

static void notifyList(Db *db, const char *event, const char *key, size_t len) {
    notifyKeyspaceEvent(NOTIFY_LIST, event, key, len, db->id);
}

/* Closes r after elements were removed, and deletes the key when its list
 * became empty, with the "del" event.  Returns 1 if deleted. */
static int deleteIfEmpty(Db *db, const char *key, size_t len, ListRef *r) {
    unsigned long left = quicklistCount(r->ql);
    listClose(r, 1);
    if (left != 0) return 0;
    dbDelete(db, key, len);
    notifyKeyspaceEvent(NOTIFY_GENERIC, "del", key, len, db->id);
    return 1;
}

static void replyEntry(Client *c, const QlEntry *e) {
    if (e->str) replyBulk(c, e->str, e->len);
    else replyBulkLongLong(c, e->ival);
}

/* LEFT / RIGHT argument; replies a syntax error and returns -1 otherwise. */
static int getWhereOrReply(Client *c, const sds arg, int *where) {
    if (argIs(arg, "left")) *where = LIST_HEAD;
    else if (argIs(arg, "right")) *where = LIST_TAIL;
    else {
        replyErrorSyntax(c);
        return -1;
    }
    return 0;
}

/* --- pushes --- */

static void pushGeneric(Client *c, int where, int onlyExisting) {
    const sds key = c->argv[1];
    int wrong;
    kvobj *o = lookupWriteOrReply(c, key, OBJ_LIST, &wrong);
    if (wrong) return;
    if (!o && onlyExisting) {
        replyLongLong(c, 0);
        return;
    }
    ListRef lr;
    Quicklist *ql = o ? listOpen(&lr, o) : listCreateAt(&lr, c->db, key, sdsLen(key));
    for (int j = 2; j < c->argc; j++) quicklistPush(ql, c->argv[j], sdsLen(c->argv[j]), where);
    replyLongLong(c, (long long)quicklistCount(ql));
    listClose(&lr, 0);
    signalModifiedKey(c, c->db, key, sdsLen(key));
    notifyList(c->db, where == LIST_HEAD ? "lpush" : "rpush", key, sdsLen(key));
    serverIncrDirty(c->argc - 2);
    signalKeyAsReady(c->db, key, sdsLen(key));
}

static void lpushCommand(Client *c) { pushGeneric(c, LIST_HEAD, 0); }
static void rpushCommand(Client *c) { pushGeneric(c, LIST_TAIL, 0); }
static void lpushxCommand(Client *c) { pushGeneric(c, LIST_HEAD, 1); }
static void rpushxCommand(Client *c) { pushGeneric(c, LIST_TAIL, 1); }

/* --- pops --- */

/* Pops the head or tail element (the list is not empty) into the reply,
 * straight from the listpack. */
static void replyPopped(Client *c, Quicklist *ql, int where) {
    QlEntry e;
    quicklistPeek(ql, where, &e);
    replyEntry(c, &e);
    quicklistDelEnd(ql, where);
}

/* Pops up to count elements from the list at key (which exists) and
 * replies them as an array; events, key deletion, dirty.  withKey: reply
 * [key, [elements]] (LMPOP/BLMPOP). */
static void popRangeAndReply(Client *c, Db *db, const sds key, ListRef *lr, long count, int where, int withKey) {
    Quicklist *ql = lr->ql;
    unsigned long llen = quicklistCount(ql);
    unsigned long n = (unsigned long)count > llen ? llen : (unsigned long)count;
    if (withKey) {
        replyArrayLen(c, 2);
        replyBulk(c, key, sdsLen(key));
    }
    replyArrayLen(c, (long)n);
    for (unsigned long i = 0; i < n; i++) replyPopped(c, ql, where);
    notifyList(db, where == LIST_HEAD ? "lpop" : "rpop", key, sdsLen(key));
    deleteIfEmpty(db, key, sdsLen(key), lr);
    signalModifiedKey(c, db, key, sdsLen(key));
    serverIncrDirty((long long)n);
}

/* LPOP/RPOP key [count] */
static void popGeneric(Client *c, int where) {
    if (c->argc > 3) {
        replyErrorArity(c);
        return;
    }
    long count = 0;
    int hasCount = c->argc == 3;
    if (hasCount && getPositiveLongOrReply(c, c->argv[2], &count, "ERR value is out of range, must be positive") == -1)
        return;
    const sds key = c->argv[1];
    int wrong;
    kvobj *o = lookupWriteOrReply(c, key, OBJ_LIST, &wrong);
    if (wrong) return;
    if (!o) {
        if (hasCount) replyNullArray(c);
        else replyNull(c);
        return;
    }
    if (hasCount && count == 0) {
        replyEmptyArray(c);
        return;
    }
    ListRef lr;
    Quicklist *ql = listOpen(&lr, o);
    if (hasCount) {
        popRangeAndReply(c, c->db, key, &lr, count, where, 0);
        return;
    }
    replyPopped(c, ql, where);
    notifyList(c->db, where == LIST_HEAD ? "lpop" : "rpop", key, sdsLen(key));
    deleteIfEmpty(c->db, key, sdsLen(key), &lr);
    signalModifiedKey(c, c->db, key, sdsLen(key));
    serverIncrDirty(1);
}

static void lpopCommand(Client *c) { popGeneric(c, LIST_HEAD); }
static void rpopCommand(Client *c) { popGeneric(c, LIST_TAIL); }

/* --- reads --- */

static void llenCommand(Client *c) {
    int wrong;
    kvobj *o = lookupReadOrReply(c, c->argv[1], OBJ_LIST, &wrong);
    if (wrong) return;
    replyLongLong(c, o ? (long long)listLength(o) : 0);
}

static void lindexCommand(Client *c) {
    /* Redis looks the key up before it parses the index. */
    int wrong;
    kvobj *o = lookupReadOrReply(c, c->argv[1], OBJ_LIST, &wrong);
    if (wrong) return;
    if (!o) {
        replyNull(c);
        return;
    }
    long long index;
    if (getLongLongOrReply(c, c->argv[2], &index, NULL) == -1) return;
    QlEntry e;
    ListRef lr;
    Quicklist *ql = listOpen(&lr, o);
    if (index > LONG_MAX || index < LONG_MIN || !quicklistIndex(ql, (long)index, &e)) replyNull(c);
    else replyEntry(c, &e);
    listClose(&lr, 0);
}

/* Clamp [start, end] to a list of llen elements the way LRANGE/LTRIM do.
 * Returns 0 when the range is empty. */
static int clampRange(long long llen, long long *start, long long *end) {
    if (*start < 0) *start = llen + *start;
    if (*end < 0) *end = llen + *end;
    if (*start < 0) *start = 0;
    if (*start > *end || *start >= llen) return 0;
    if (*end >= llen) *end = llen - 1;
    return 1;
}

static void lrangeCommand(Client *c) {
    long long start, end;
    if (getLongLongOrReply(c, c->argv[2], &start, NULL) == -1) return;
    if (getLongLongOrReply(c, c->argv[3], &end, NULL) == -1) return;
    int wrong;
    kvobj *o = lookupReadOrReply(c, c->argv[1], OBJ_LIST, &wrong);
    if (wrong) return;
    if (!o) {
        replyEmptyArray(c);
        return;
    }
    if (!clampRange((long long)listLength(o), &start, &end)) {
        replyEmptyArray(c);
        return;
    }
    ListRef lr;
    Quicklist *ql = listOpen(&lr, o);
    long long n = end - start + 1;
    replyArrayLen(c, (long)n);
    QuicklistIter *it = quicklistIterAt(ql, (long)start, QL_HEAD);
    QlEntry e;
    while (n-- > 0 && quicklistNext(it, &e)) replyEntry(c, &e);
    quicklistIterRelease(it);
    listClose(&lr, 0);
}

/* LPOS key element [RANK rank] [COUNT num-matches] [MAXLEN len] */
static void lposCommand(Client *c) {
    long long rank = 1, count = -1, maxlen = 0;
    for (int j = 3; j < c->argc; j++) {
        const sds opt = c->argv[j];
        int more = c->argc - j - 1;
        if (argIs(opt, "rank") && more) {
            if (getLongLongOrReply(c, c->argv[++j], &rank, NULL) == -1) return;
            if (rank == 0) {
                replyError(c, "ERR RANK can't be zero: use 1 to start from the first match, 2 from the second ... or "
                              "use negative to start from the end of the list");
                return;
            }
        } else if (argIs(opt, "count") && more) {
            if (getLongLongOrReply(c, c->argv[++j], &count, "ERR COUNT can't be negative") == -1) return;
            if (count < 0) {
                replyError(c, "ERR COUNT can't be negative");
                return;
            }
        } else if (argIs(opt, "maxlen") && more) {
            if (getLongLongOrReply(c, c->argv[++j], &maxlen, "ERR MAXLEN can't be negative") == -1) return;
            if (maxlen < 0) {
                replyError(c, "ERR MAXLEN can't be negative");
                return;
            }
        } else {
            replyErrorSyntax(c);
            return;
        }
    }
    int wrong;
    kvobj *o = lookupReadOrReply(c, c->argv[1], OBJ_LIST, &wrong);
    if (wrong) return;
    if (!o) {
        if (count != -1) replyEmptyArray(c);
        else replyNull(c);
        return;
    }
    ListRef lr;
    Quicklist *ql = listOpen(&lr, o);
    int direction = rank > 0 ? QL_HEAD : QL_TAIL;
    /* Matches to skip before the first reported one.  Redis negates the
     * rank, which leaves LLONG_MIN negative: it then skips nothing. */
    unsigned long long skip = rank > 0 ? (unsigned long long)rank - 1
                              : rank == LLONG_MIN ? 0
                                                  : (unsigned long long)(-(rank + 1));
    /* ...and its count check overflows then, so COUNT stops nothing. */
    if (rank == LLONG_MIN && count > 0) count = 0;
    long long llen = (long long)quicklistCount(ql);
    void *deferred = count != -1 ? replyDeferredLen(c) : NULL;
    long long matches = 0, scanned = 0;
    const sds elem = c->argv[2];
    QuicklistIter *it = quicklistIter(ql, direction);
    QlEntry e;
    while ((maxlen == 0 || scanned < maxlen) && quicklistNext(it, &e)) {
        long long idx = direction == QL_HEAD ? scanned : llen - 1 - scanned;
        scanned++;
        if (!quicklistEntryEquals(&e, elem, sdsLen(elem))) continue;
        if (skip > 0) {
            skip--;
            continue;
        }
        matches++;
        replyLongLong(c, idx);
        if (count != -1 && count != 0 && matches == count) break;
        if (count == -1) break;
    }
    quicklistIterRelease(it);
    listClose(&lr, 0);
    if (count != -1) replySetDeferredArrayLen(c, deferred, (long)matches);
    else if (matches == 0) replyNull(c);
}

/* --- in-place changes --- */

static void lsetCommand(Client *c) {
    /* Redis looks the key up before it parses the index. */
    const sds key = c->argv[1];
    int wrong;
    kvobj *o = lookupWriteOrReply(c, key, OBJ_LIST, &wrong);
    if (wrong) return;
    if (!o) {
        replyError(c, ERR_NO_SUCH_KEY);
        return;
    }
    long long index;
    if (getLongLongOrReply(c, c->argv[2], &index, NULL) == -1) return;
    const sds val = c->argv[3];
    ListRef lr;
    Quicklist *ql = listOpen(&lr, o);
    int done = index <= LONG_MAX && index >= LONG_MIN && quicklistReplaceAtIndex(ql, (long)index, val, sdsLen(val));
    listClose(&lr, 1);
    if (!done) {
        replyError(c, ERR_OUT_OF_RANGE);
        return;
    }
    replyOk(c);
    signalModifiedKey(c, c->db, key, sdsLen(key));
    notifyList(c->db, "lset", key, sdsLen(key));
    serverIncrDirty(1);
}

/* LINSERT key BEFORE|AFTER pivot element */
static void linsertCommand(Client *c) {
    int after;
    if (argIs(c->argv[2], "after")) after = 1;
    else if (argIs(c->argv[2], "before")) after = 0;
    else {
        replyErrorSyntax(c);
        return;
    }
    const sds key = c->argv[1], pivot = c->argv[3], val = c->argv[4];
    int wrong;
    kvobj *o = lookupWriteOrReply(c, key, OBJ_LIST, &wrong);
    if (wrong) return;
    if (!o) {
        replyLongLong(c, 0);
        return;
    }
    ListRef lr;
    Quicklist *ql = listOpen(&lr, o);
    QuicklistIter *it = quicklistIter(ql, QL_HEAD);
    QlEntry e;
    int found = 0;
    while (quicklistNext(it, &e)) {
        if (quicklistEntryEquals(&e, pivot, sdsLen(pivot))) {
            if (after) quicklistInsertAfter(it, &e, val, sdsLen(val));
            else quicklistInsertBefore(it, &e, val, sdsLen(val));
            found = 1;
            break;
        }
    }
    quicklistIterRelease(it);
    unsigned long llen = quicklistCount(ql);
    listClose(&lr, 0);
    if (!found) {
        replyLongLong(c, -1);
        return;
    }
    signalModifiedKey(c, c->db, key, sdsLen(key));
    notifyList(c->db, "linsert", key, sdsLen(key));
    serverIncrDirty(1);
    replyLongLong(c, (long long)llen);
}

/* LREM key count element */
static void lremCommand(Client *c) {
    long long toremove;
    if (getLongLongOrReply(c, c->argv[2], &toremove, NULL) == -1) return;
    const sds key = c->argv[1], elem = c->argv[3];
    int wrong;
    kvobj *o = lookupWriteOrReply(c, key, OBJ_LIST, &wrong);
    if (wrong) return;
    if (!o) {
        replyLongLong(c, 0);
        return;
    }
    ListRef lr;
    Quicklist *ql = listOpen(&lr, o);
    QuicklistIter *it = quicklistIter(ql, toremove < 0 ? QL_TAIL : QL_HEAD);
    /* |toremove| without overflowing on LLONG_MIN. */
    unsigned long long limit = toremove < 0 ? 0ULL - (unsigned long long)toremove : (unsigned long long)toremove;
    unsigned long long removed = 0;
    QlEntry e;
    while (quicklistNext(it, &e)) {
        if (!quicklistEntryEquals(&e, elem, sdsLen(elem))) continue;
        quicklistIterDelete(it, &e);
        removed++;
        if (limit && removed == limit) break;
    }
    quicklistIterRelease(it);
    if (!removed) listClose(&lr, 0);
    if (removed) {
        notifyList(c->db, "lrem", key, sdsLen(key));
        deleteIfEmpty(c->db, key, sdsLen(key), &lr);
        signalModifiedKey(c, c->db, key, sdsLen(key));
        serverIncrDirty((long long)removed);
    }
    replyLongLong(c, (long long)removed);
}

static void ltrimCommand(Client *c) {
    long long start, end;
    if (getLongLongOrReply(c, c->argv[2], &start, NULL) == -1) return;
    if (getLongLongOrReply(c, c->argv[3], &end, NULL) == -1) return;
    const sds key = c->argv[1];
    int wrong;
    kvobj *o = lookupWriteOrReply(c, key, OBJ_LIST, &wrong);
    if (wrong) return;
    if (!o) {
        replyOk(c);
        return;
    }
    ListRef lr;
    Quicklist *ql = listOpen(&lr, o);
    long long llen = (long long)quicklistCount(ql);
    long long ltrim, rtrim;
    if (!clampRange(llen, &start, &end)) {
        ltrim = llen;
        rtrim = 0;
    } else {
        ltrim = start;
        rtrim = llen - end - 1;
    }
    if (ltrim) quicklistDelRange(ql, 0, (long)ltrim);
    if (rtrim) quicklistDelRange(ql, (long)-rtrim, (long)rtrim);
    notifyList(c->db, "ltrim", key, sdsLen(key));
    deleteIfEmpty(c->db, key, sdsLen(key), &lr);
    signalModifiedKey(c, c->db, key, sdsLen(key));
    serverIncrDirty(ltrim + rtrim);
    replyOk(c);
}

/* --- moves --- */

/* Pops from src (a non-empty list at srcKey) and pushes to dstKey, whose
 * entry dst is a list or NULL (created).  Replies the moved element. */
static void moveElement(Client *c, Db *db, const sds srcKey, kvobj *src, const sds dstKey, kvobj *dst,
                        int wherefrom, int whereto) {
    sds v;
    ListRef lr; /* src is closed before dst opens: they may be the same list */
    quicklistPop(listOpen(&lr, src), wherefrom, &v);
    listClose(&lr, 1);
    Quicklist *dql = dst ? listOpen(&lr, dst) : listCreateAt(&lr, db, dstKey, sdsLen(dstKey));
    signalModifiedKey(c, db, dstKey, sdsLen(dstKey));
    quicklistPush(dql, v, sdsLen(v), whereto);
    listClose(&lr, 0);
    notifyList(db, whereto == LIST_HEAD ? "lpush" : "rpush", dstKey, sdsLen(dstKey));
    signalKeyAsReady(db, dstKey, sdsLen(dstKey));
    replyBulk(c, v, sdsLen(v));
    sdsFree(v);
    notifyList(db, wherefrom == LIST_HEAD ? "lpop" : "rpop", srcKey, sdsLen(srcKey));
    if (listLength(src) == 0) {
        dbDelete(db, srcKey, sdsLen(srcKey));
        notifyKeyspaceEvent(NOTIFY_GENERIC, "del", srcKey, sdsLen(srcKey), db->id);
    }
    signalModifiedKey(c, db, srcKey, sdsLen(srcKey));
    serverIncrDirty(1);
}

/* LMOVE/RPOPLPUSH once the directions are known: src at argv[1], dst at
 * argv[2].  Returns 1 if something was moved or an error replied, 0 when
 * the source is absent (nothing replied). */
static int moveGeneric(Client *c, int wherefrom, int whereto) {
    const sds srcKey = c->argv[1], dstKey = c->argv[2];
    int wrong;
    kvobj *src = lookupWriteOrReply(c, srcKey, OBJ_LIST, &wrong);
    if (wrong) return 1;
    if (!src) return 0;
    kvobj *dst = lookupWriteOrReply(c, dstKey, OBJ_LIST, &wrong);
    if (wrong) return 1;
    moveElement(c, c->db, srcKey, src, dstKey, dst, wherefrom, whereto);
    return 1;
}

static void lmoveCommand(Client *c) {
    int from, to;
    if (getWhereOrReply(c, c->argv[3], &from) == -1 || getWhereOrReply(c, c->argv[4], &to) == -1) return;
    if (!moveGeneric(c, from, to)) replyNull(c);
}

static void rpoplpushCommand(Client *c) {
    if (!moveGeneric(c, LIST_TAIL, LIST_HEAD)) replyNull(c);
}

/* --- LMPOP and the blocking commands --- */

enum { LB_POP, LB_MPOP, LB_MOVE };

/* What a blocked list client does when a key becomes ready. */
typedef struct ListBlock {
    int kind;    /* LB_* */
    int where;   /* pop side */
    int whereTo; /* LB_MOVE: push side */
    long count;  /* LB_MPOP */
} ListBlock;

/* How many elements a pop of count takes from the list o. */
static long popCount(const kvobj *o, long count) {
    unsigned long llen = listLength(o);
    return (unsigned long)count > llen ? (long)llen : count;
}

/* The effect of a blocking or multi-key pop: the plain pop it did,
 * [LR]POP key (n < 0) or [LR]POP key n.  In the command that popped it
 * replaces the command as sent; for a client served after blocking
 * (served) it is an effect of that client's own unit. */
static void popEffect(Db *db, int served, int where, const sds key, long n) {
    if (!effectsOn) return;
    EffectArg args[3] = {where == LIST_HEAD ? EA_STR("LPOP") : EA_STR("RPOP"), EA_SDS(key), EA_NUM(n)};
    int argc = n < 0 ? 2 : 3;
    if (served) effectsAlso(db->id, argc, args);
    else effectsRewrite(argc, args);
}

static EffectArg whereArg(int where) { return where == LIST_HEAD ? EA_STR("left") : EA_STR("right"); }

/* The effect of BLMOVE/BRPOPLPUSH (c->argv as sent): RPOPLPUSH src dst, or
 * LMOVE src dst from to -- with the directions as sent when it moved at
 * once, in lower case when it was served after blocking (as Redis). */
static void moveEffect(Client *c, Db *db, int served, int wherefrom, int whereto) {
    if (!effectsOn) return;
    int brpoplpush = c->argc == 4;
    EffectArg args[5] = {brpoplpush ? EA_STR("RPOPLPUSH") : EA_STR("LMOVE"), EA_SDS(c->argv[1]), EA_SDS(c->argv[2]),
                         whereArg(wherefrom), whereArg(whereto)};
    int argc = brpoplpush ? 3 : 5;
    if (served) {
        effectsAlso(db->id, argc, args);
        return;
    }
    if (!brpoplpush) {
        args[3] = EA_SDS(c->argv[3]);
        args[4] = EA_SDS(c->argv[4]);
    }
    effectsRewrite(argc, args);
}

static int serveBlockedList(Client *c, Db *db, const char *key, size_t len) {
    const ListBlock *lb = blockedPriv(c);
    kvobj *o = dbLookupWrite(db, key, len);
    if (!o || kvType(o) != OBJ_LIST) return 0;
    sds k = sdsNewLen(key, len);
    ListRef lr;
    if (lb->kind == LB_MOVE) {
        const sds dstKey = c->argv[2];
        kvobj *dst = dbLookupWrite(db, dstKey, sdsLen(dstKey));
        if (dst && kvType(dst) != OBJ_LIST) {
            replyErrorWrongType(c);
        } else {
            moveEffect(c, db, 1, lb->where, lb->whereTo);
            moveElement(c, db, k, o, dstKey, dst, lb->where, lb->whereTo);
        }
    } else if (lb->kind == LB_MPOP) {
        popEffect(db, 1, lb->where, k, popCount(o, lb->count));
        listOpen(&lr, o);
        popRangeAndReply(c, db, k, &lr, lb->count, lb->where, 1);
    } else {
        popEffect(db, 1, lb->where, k, -1);
        replyArrayLen(c, 2);
        replyBulk(c, key, len);
        replyPopped(c, listOpen(&lr, o), lb->where);
        notifyList(db, lb->where == LIST_HEAD ? "lpop" : "rpop", key, len);
        deleteIfEmpty(db, key, len, &lr);
        signalModifiedKey(c, db, key, len);
        serverIncrDirty(1);
    }
    sdsFree(k);
    return 1;
}

static void blockList(Client *c, sds *keys, int numKeys, long long deadline, int kind, int where, int whereTo,
                      long count) {
    ListBlock *lb = xmalloc(sizeof(*lb));
    lb->kind = kind;
    lb->where = where;
    lb->whereTo = whereTo;
    lb->count = count;
    blockForKeys(c, keys, numKeys, deadline, serveBlockedList, lb, xfree);
}

/* Pops from the first non-empty list among keys (LMPOP, BLMPOP, BLPOP,
 * BRPOP).  count < 0: BLPOP-style reply [key, element].  Returns 1 if it
 * replied (served or WRONGTYPE), 0 if every key is absent.  The effect is
 * the plain pop: [LR]POP key, or [LR]POP key <popped count>. */
static int popFirstNonEmpty(Client *c, sds *keys, int numKeys, int where, long count) {
    for (int i = 0; i < numKeys; i++) {
        int wrong;
        kvobj *o = lookupWriteOrReply(c, keys[i], OBJ_LIST, &wrong);
        if (wrong) return 1;
        if (!o) continue;
        popEffect(c->db, 0, where, keys[i], count >= 0 ? popCount(o, count) : -1);
        ListRef lr;
        Quicklist *ql = listOpen(&lr, o);
        if (count >= 0) {
            popRangeAndReply(c, c->db, keys[i], &lr, count, where, 1);
            return 1;
        }
        replyArrayLen(c, 2);
        replyBulkSds(c, keys[i]);
        replyPopped(c, ql, where);
        notifyList(c->db, where == LIST_HEAD ? "lpop" : "rpop", keys[i], sdsLen(keys[i]));
        deleteIfEmpty(c->db, keys[i], sdsLen(keys[i]), &lr);
        signalModifiedKey(c, c->db, keys[i], sdsLen(keys[i]));
        serverIncrDirty(1);
        return 1;
    }
    return 0;
}

/* BLPOP/BRPOP key [key ...] timeout */
static void blockingPop(Client *c, int where) {
    long long deadline;
    if (getBlockTimeoutOrReply(c, c->argv[c->argc - 1], &deadline) == -1) return;
    sds *keys = c->argv + 1;
    int numKeys = c->argc - 2;
    if (popFirstNonEmpty(c, keys, numKeys, where, -1)) return;
    if (!clientMayBlock(c)) {
        replyNullArray(c);
        return;
    }
    blockList(c, keys, numKeys, deadline, LB_POP, where, 0, -1);
}

static void blpopCommand(Client *c) { blockingPop(c, LIST_HEAD); }
static void brpopCommand(Client *c) { blockingPop(c, LIST_TAIL); }

/* [B]LMPOP [timeout] numkeys key [key ...] LEFT|RIGHT [COUNT count]:
 * numkeys at argv[idx]. */
static void mpopGeneric(Client *c, int idx, int blocking) {
    long numKeys;
    if (getRangeLongOrReply(c, c->argv[idx], 1, LONG_MAX, &numKeys, "ERR numkeys should be greater than 0") == -1)
        return;
    if (numKeys > (long)c->argc - idx - 2) {
        replyErrorSyntax(c);
        return;
    }
    int whereIdx = idx + (int)numKeys + 1, where;
    if (getWhereOrReply(c, c->argv[whereIdx], &where) == -1) return;
    long count;
    if (getMpopCountOrReply(c, whereIdx + 1, &count) == -1) return;
    long long deadline = 0;
    if (blocking && getBlockTimeoutOrReply(c, c->argv[1], &deadline) == -1) return;
    sds *keys = c->argv + idx + 1;
    if (popFirstNonEmpty(c, keys, (int)numKeys, where, count)) return;
    if (!blocking || !clientMayBlock(c)) {
        replyNullArray(c);
        return;
    }
    blockList(c, keys, (int)numKeys, deadline, LB_MPOP, where, 0, count);
}

static void lmpopCommand(Client *c) { mpopGeneric(c, 1, 0); }
static void blmpopCommand(Client *c) { mpopGeneric(c, 2, 1); }

/* BLMOVE/BRPOPLPUSH with directions known; timeout at argv[timeoutIdx]. */
static void blockingMove(Client *c, int wherefrom, int whereto, int timeoutIdx) {
    long long deadline;
    if (getBlockTimeoutOrReply(c, c->argv[timeoutIdx], &deadline) == -1) return;
    int wrong;
    kvobj *src = lookupWriteOrReply(c, c->argv[1], OBJ_LIST, &wrong);
    if (wrong) return;
    if (src) {
        moveEffect(c, c->db, 0, wherefrom, whereto);
        moveGeneric(c, wherefrom, whereto);
        return;
    }
    if (!clientMayBlock(c)) {
        replyNull(c);
        return;
    }
    blockList(c, c->argv + 1, 1, deadline, LB_MOVE, wherefrom, whereto, 0);
}

static void blmoveCommand(Client *c) {
    int from, to;
    if (getWhereOrReply(c, c->argv[3], &from) == -1 || getWhereOrReply(c, c->argv[4], &to) == -1) return;
    blockingMove(c, from, to, 5);
}

static void brpoplpushCommand(Client *c) { blockingMove(c, LIST_TAIL, LIST_HEAD, 3); }

Command listCommands[] = {
    {.name = "lpush", .proc = lpushCommand},
    {.name = "rpush", .proc = rpushCommand},
    {.name = "lpushx", .proc = lpushxCommand},
    {.name = "rpushx", .proc = rpushxCommand},
    {.name = "lpop", .proc = lpopCommand},
    {.name = "rpop", .proc = rpopCommand},
    {.name = "llen", .proc = llenCommand},
    {.name = "lrange", .proc = lrangeCommand},
    {.name = "lindex", .proc = lindexCommand},
    {.name = "lset", .proc = lsetCommand},
    {.name = "linsert", .proc = linsertCommand},
    {.name = "lrem", .proc = lremCommand},
    {.name = "ltrim", .proc = ltrimCommand},
    {.name = "lpos", .proc = lposCommand},
    {.name = "lmove", .proc = lmoveCommand},
    {.name = "rpoplpush", .proc = rpoplpushCommand},
    {.name = "lmpop", .proc = lmpopCommand},
    {.name = "blpop", .proc = blpopCommand},
    {.name = "brpop", .proc = brpopCommand},
    {.name = "blmove", .proc = blmoveCommand},
    {.name = "brpoplpush", .proc = brpoplpushCommand},
    {.name = "blmpop", .proc = blmpopCommand},
    {0},
};

/* ------------------------------------------------------------------------ */
/* Configuration                                                             */
/* ------------------------------------------------------------------------ */

/* The values stay in server.cfg: SORT ... STORE and the RDB loader build
 * lists too. */
static ConfigDef listConfig[] = {
    CONFIG_LL("list-max-listpack-size", "list-max-ziplist-size", 0, server.cfg.listMaxListpackSize, INT_MIN, INT_MAX,
              "-2", .rank = CONFIG_RANK_ENCODINGS + 2),
    CONFIG_INT("list-compress-depth", NULL, 0, server.cfg.listCompressDepth, 0, INT_MAX, "0",
               .rank = CONFIG_RANK_ENCODINGS + 3),
};

void listRegisterConfig(void) { configRegister(listConfig, CONFIG_COUNT_OF(listConfig)); }
