/* tracking.c -- server-assisted client-side caching, as Redis 7.0 does it.
 *
 * Default mode.  After a read-only command of a tracking client, each of
 * its keys is remembered in `table` (key -> sorted ids of the clients that
 * read it).  The table is global to all databases, like Redis's.  When a
 * key is modified (the transaction layer's key-modified hook), its entry is
 * removed and every id in it that still names a tracking, non-BCAST client
 * gets an invalidation.  OPTIN remembers only after CLIENT CACHING YES,
 * OPTOUT skips after CLIENT CACHING NO; that CACHING flag lives until the
 * next command other than a CLIENT subcommand, or until EXEC's end.
 *
 * BCAST mode.  `prefixes` (sorted bytewise) lists every prefix some BCAST
 * client registered ("" when it gave none), each with its clients and the
 * keys modified since the last broadcast (with the id of the last writer,
 * for NOLOOP).  Before the loop sleeps, each prefix sends its keys, sorted,
 * as one message to each of its clients.
 *
 * Delivery.  An invalidation is a typed push item (PUSH_INVALIDATE,
 * proto/push.h) that the receiver's encoder renders (core/push.h): RESP3
 * clients get `>2 invalidate <keys>`; with REDIRECT the item goes to the
 * target client instead: a RESP3 push, or for a RESP2 target in pub/sub
 * mode a `message` on `__redis__:invalidate` (a format without unsolicited
 * pushes takes nothing else).  One key's item to several readers, and a
 * BCAST prefix's to its clients, is rendered once per encoder.  A missing
 * target marks the redirection broken and tells the tracking client (if
 * its format has unsolicited pushes) `tracking-redir-broken <id>`.  An
 * invalidation for the client whose command is running waits in `pending`
 * until that command (or its whole EXEC) has replied.  FLUSHDB/FLUSHALL
 * send a null to every tracking client and empty the table.
 *
 * A client's TrackingState exists exactly while it has CLIENT_TRACKING.
 * Clients are never referenced by the tables after they stop tracking: ids
 * are looked up when needed, BCAST prefixes drop the client at once. */
#include "server/tracking.h"

#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/dispatch.h"
#include "core/net.h"
#include "core/push.h"
#include "core/server.h"
#include "ds/alloc.h"
#include "ds/htab.h"
#include "ds/siphash.h"
#include "ds/util.h"
#include "script/script.h"
#include "server/multi.h"

/* tracking-table-max-keys (0: no limit): the directive at the end of this
 * file. */
static long long trackingTableMaxKeys;

#define TRK_BCAST (1u << 0)
#define TRK_OPTIN (1u << 1)
#define TRK_OPTOUT (1u << 2)
#define TRK_NOLOOP (1u << 3)
#define TRK_CACHING (1u << 4)      /* CLIENT CACHING given for the next command */
#define TRK_BROKEN_REDIR (1u << 5) /* the redirect target is gone */

typedef struct TrackingState {
    uint64_t redirect; /* client receiving our invalidations, 0 = ourselves */
    unsigned opts;     /* TRK_* */
    sds *prefixes;     /* BCAST prefixes, sorted bytewise */
    int numPrefixes;
    size_t prefixBytes; /* what the prefixes cost this client (its memory) */
} TrackingState;

/* A key read by tracking clients. */
typedef struct TrackedKey {
    void *next;     /* htab link */
    uint64_t *ids;  /* sorted, unique */
    uint32_t count, cap;
    size_t len;
    char key[];
} TrackedKey;

/* A key modified since the last broadcast, under one prefix. */
typedef struct PendingKey {
    void *next;      /* htab link */
    uint64_t writer; /* id of the last client that changed it, 0 = none */
    size_t len;
    char key[];
} PendingKey;

typedef struct BcastPrefix {
    sds prefix;
    Client **clients; /* BCAST clients registered for it */
    int count, cap;
    Htab keys;        /* PendingKey */
} BcastPrefix;

/* An invalidation held until the running command has replied. */
typedef struct Deferred {
    Client *c;
    sds key; /* NULL: a flush (null) */
} Deferred;

static uint64_t keyHash(const void *key, size_t len) { return siphash(key, len, dbHashSeed); }
static void trackedKeyOf(const void *e, const void **key, size_t *len) {
    const TrackedKey *t = e;
    *key = t->key;
    *len = t->len;
}
static void pendingKeyOf(const void *e, const void **key, size_t *len) {
    const PendingKey *p = e;
    *key = p->key;
    *len = p->len;
}
static const HtabType trackedType = {keyHash, trackedKeyOf, NULL, NULL, NULL, 0};
static const HtabType pendingType = {keyHash, pendingKeyOf, NULL, NULL, NULL, 0};

static Htab table;
static unsigned long long totalItems; /* sum of the id counts in table */
static BcastPrefix **prefixes;
static int numPrefixes, capPrefixes;
static Deferred *deferred;
static size_t numDeferred, capDeferred;
static long trackingClients;
/* Renders an invalidation for its several receivers (never nests). */
#define FANOUT_KEEP 4096
static PushFanout fanout;

/* --- helpers --- */

static Client *findClient(uint64_t id) {
    for (Client *o = server.net.clients; o; o = o->nextClient)
        if (o->id == id) return o;
    return NULL;
}

static int bytesCmp(const char *a, size_t alen, const char *b, size_t blen) {
    int r = memcmp(a, b, alen < blen ? alen : blen);
    if (r) return r;
    return alen < blen ? -1 : alen > blen;
}

/* One of the two is a prefix of the other. */
static int prefixesOverlap(const sds a, const sds b) {
    size_t la = sdsLen(a), lb = sdsLen(b);
    return memcmp(a, b, la < lb ? la : lb) == 0;
}

static unsigned optsOf(const Client *c) {
    const TrackingState *ts = c->trackingState;
    return ts ? ts->opts : 0;
}

/* Sends the invalidation `it` meant for tracking client c to c or to its
 * redirection target; through the fan-out f (which holds it), or alone
 * when f is NULL. */
static void sendTrackingMessage(Client *c, const PushItem *it, PushFanout *f) {
    TrackingState *ts = c->trackingState;
    Client *dst = c;
    int redirected = 0;
    if (ts && ts->redirect) {
        dst = findClient(ts->redirect);
        if (!dst) {
            ts->opts |= TRK_BROKEN_REDIR;
            if (clientPushEncoder(c)->unsolicited) {
                PushItem broken = {.kind = PUSH_TRACKING_REDIR_BROKEN, .count = (long long)ts->redirect};
                replyPush(c, &broken);
            }
            return;
        }
        redirected = 1;
    }
    if (!clientPushEncoder(dst)->unsolicited && !(redirected && (dst->flags & CLIENT_PUBSUB)))
        return; /* RESP2 without a pub/sub target: nowhere to say it */
    if (f) pushFanoutDeliver(f, dst);
    else replyPush(dst, it);
    /* Its output grew: client eviction counts it now (as Redis does). */
    if (netClientMemoryHook) netClientMemoryHook(dst);
}

/* The invalidation of one key (key NULL: a flush) for tracking client c.
 * A flush's null is in c's version, wherever it goes (as in Redis). */
static PushItem keyItem(const Client *c, const PushBytes *key) {
    PushItem it = {.kind = PUSH_INVALIDATE, .keys = key, .nkeys = key ? 1 : 0};
    if (!key && c->resp > 2) it.flags = PUSH_FLAG_NULL_RESP3;
    return it;
}

static void sendKey(Client *c, const char *key, size_t len) {
    PushBytes k = {key, len};
    PushItem it = keyItem(c, key ? &k : NULL);
    sendTrackingMessage(c, &it, NULL);
}

static void defer(Client *c, const char *key, size_t len) {
    if (numDeferred == capDeferred) {
        capDeferred = capDeferred ? capDeferred * 2 : 8;
        deferred = xrealloc(deferred, capDeferred * sizeof(*deferred));
    }
    deferred[numDeferred].c = c;
    deferred[numDeferred].key = key ? sdsNewLen(key, len) : NULL;
    numDeferred++;
}

static void sendDeferred(void) {
    for (size_t i = 0; i < numDeferred; i++) {
        Deferred *d = &deferred[i];
        if (d->c) sendKey(d->c, d->key, d->key ? sdsLen(d->key) : 0);
        if (d->key) sdsFree(d->key);
    }
    numDeferred = 0;
}

/* --- the key table --- */

static void freeTrackedKey(void *e, void *priv) {
    (void)priv;
    TrackedKey *t = e;
    xfree(t->ids);
    xfree(t);
}

static void rememberKey(const char *key, size_t len, uint64_t id) {
    TrackedKey *t = htabFind(&table, key, len);
    if (!t) {
        t = xmalloc(sizeof(*t) + len);
        t->ids = NULL;
        t->count = t->cap = 0;
        t->len = len;
        memcpy(t->key, key, len);
        htabAdd(&table, t);
    }
    uint32_t lo = 0, hi = t->count;
    while (lo < hi) {
        uint32_t mid = (lo + hi) / 2;
        if (t->ids[mid] < id) lo = mid + 1;
        else hi = mid;
    }
    if (lo < t->count && t->ids[lo] == id) return;
    if (t->count == t->cap) {
        t->cap = t->cap ? t->cap * 2 : 2;
        t->ids = xrealloc(t->ids, t->cap * sizeof(*t->ids));
    }
    memmove(t->ids + lo + 1, t->ids + lo, (t->count - lo) * sizeof(*t->ids));
    t->ids[lo] = id;
    t->count++;
    totalItems++;
}

static int isClientSubcommand(const Command *cmd) {
    return cmd->parent && strcmp(cmd->parent->name, "client") == 0;
}

/* The client a command acts for: a script's commands act for the client
 * that runs the script, as on Redis (its NOLOOP, its tracked keys). */
static Client *actingClient(Client *c) {
    if (c && (c->flags & CLIENT_LUA)) {
        Client *caller = scriptCaller();
        if (caller) return caller;
    }
    return c;
}

static int isReadOnlyScript(const Command *cmd) {
    return !strcmp(cmd->name, "eval_ro") || !strcmp(cmd->name, "evalsha_ro") || !strcmp(cmd->name, "fcall_ro");
}

/* Remember the keys of command cmd of tracking client c (its argv),
 * unless OPTIN/OPTOUT and CLIENT CACHING say otherwise. */
static void rememberCommandKeys(Client *c, Command *cmd) {
    unsigned o = optsOf(c);
    if (o & TRK_BCAST) return;
    int caching = (o & TRK_CACHING) != 0;
    if (((o & TRK_OPTIN) && !caching) || ((o & TRK_OPTOUT) && caching)) return;
    if (cmd->flags & CMD_PUBSUB) return; /* shard channels look like keys */
    int stackPos[16];
    int *pos = c->argc <= 16 ? stackPos : xmalloc(sizeof(int) * (size_t)c->argc);
    int n = commandGetKeys(cmd, c, c->argc, c->argv, pos, c->argc);
    for (int i = 0; i < n; i++) rememberKey(c->argv[pos[i]], sdsLen(c->argv[pos[i]]), c->id);
    if (pos != stackPos) xfree(pos);
}

/* --- BCAST prefixes --- */

/* Index of the prefix p in `prefixes`, or -(insertion point) - 1. */
static int findPrefix(const char *p, size_t len) {
    int lo = 0, hi = numPrefixes;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        int r = bytesCmp(prefixes[mid]->prefix, sdsLen(prefixes[mid]->prefix), p, len);
        if (r == 0) return mid;
        if (r < 0) lo = mid + 1;
        else hi = mid;
    }
    return -lo - 1;
}

static void freePendingKey(void *e, void *priv) {
    (void)priv;
    xfree(e);
}

/* Registers BCAST client c for prefix p (once). */
static void addClientPrefix(Client *c, const char *p, size_t len) {
    TrackingState *ts = c->trackingState;
    int lo = 0, hi = ts->numPrefixes;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        int r = bytesCmp(ts->prefixes[mid], sdsLen(ts->prefixes[mid]), p, len);
        if (r == 0) return;
        if (r < 0) lo = mid + 1;
        else hi = mid;
    }
    ts->prefixes = xrealloc(ts->prefixes, (size_t)(ts->numPrefixes + 1) * sizeof(sds));
    memmove(ts->prefixes + lo + 1, ts->prefixes + lo, (size_t)(ts->numPrefixes - lo) * sizeof(sds));
    ts->prefixes[lo] = sdsNewLen(p, len);
    ts->numPrefixes++;
    /* Its string, its slot here and in the prefix's client list. */
    ts->prefixBytes += sdsAllocSize(ts->prefixes[lo]) + sizeof(sds) + sizeof(Client *);

    int at = findPrefix(p, len);
    BcastPrefix *bp;
    if (at >= 0) {
        bp = prefixes[at];
    } else {
        at = -at - 1;
        bp = xcalloc(sizeof(*bp));
        bp->prefix = sdsNewLen(p, len);
        htabInit(&bp->keys, &pendingType);
        if (numPrefixes == capPrefixes) {
            capPrefixes = capPrefixes ? capPrefixes * 2 : 4;
            prefixes = xrealloc(prefixes, (size_t)capPrefixes * sizeof(*prefixes));
        }
        memmove(prefixes + at + 1, prefixes + at, (size_t)(numPrefixes - at) * sizeof(*prefixes));
        prefixes[at] = bp;
        numPrefixes++;
    }
    if (bp->count == bp->cap) {
        bp->cap = bp->cap ? bp->cap * 2 : 4;
        bp->clients = xrealloc(bp->clients, (size_t)bp->cap * sizeof(Client *));
    }
    bp->clients[bp->count++] = c;
}

static void removeClientPrefix(Client *c, const sds p) {
    int at = findPrefix(p, sdsLen(p));
    if (at < 0) return;
    BcastPrefix *bp = prefixes[at];
    for (int i = 0; i < bp->count; i++) {
        if (bp->clients[i] != c) continue;
        memmove(bp->clients + i, bp->clients + i + 1, (size_t)(bp->count - i - 1) * sizeof(Client *));
        bp->count--;
        break;
    }
    if (bp->count > 0) return;
    htabClear(&bp->keys, freePendingKey, NULL);
    xfree(bp->clients);
    sdsFree(bp->prefix);
    xfree(bp);
    memmove(prefixes + at, prefixes + at + 1, (size_t)(numPrefixes - at - 1) * sizeof(*prefixes));
    numPrefixes--;
}

static void queueForBroadcast(Client *writer, const char *key, size_t len) {
    for (int i = 0; i < numPrefixes; i++) {
        BcastPrefix *bp = prefixes[i];
        size_t plen = sdsLen(bp->prefix);
        if (plen > len || memcmp(bp->prefix, key, plen) != 0) continue;
        PendingKey *pk = htabFind(&bp->keys, key, len);
        if (!pk) {
            pk = xmalloc(sizeof(*pk) + len);
            pk->len = len;
            memcpy(pk->key, key, len);
            htabAdd(&bp->keys, pk);
        }
        pk->writer = writer ? writer->id : 0;
    }
}

static int pendingKeyCmp(const void *a, const void *b) {
    const PendingKey *x = *(PendingKey *const *)a, *y = *(PendingKey *const *)b;
    return bytesCmp(x->key, x->len, y->key, y->len);
}

/* The invalidation of keys[0..n) into list (room for n), skipping those
 * last written by `skip` unless it is 0; nkeys 0 when that leaves none. */
static PushItem broadcastItem(PushBytes *list, PendingKey **keys, size_t n, uint64_t skip) {
    size_t count = 0;
    for (size_t i = 0; i < n; i++) {
        if (skip && keys[i]->writer == skip) continue;
        list[count++] = (PushBytes){keys[i]->key, keys[i]->len};
    }
    return (PushItem){.kind = PUSH_INVALIDATE, .keys = list, .nkeys = count};
}

static void broadcastPrefix(BcastPrefix *bp) {
    size_t n = htabSize(&bp->keys);
    if (n == 0) return;
    PendingKey **keys = xmalloc(n * sizeof(*keys));
    HtabIter it;
    htabIterInit(&it, &bp->keys);
    size_t k = 0;
    PendingKey *pk;
    while ((pk = htabIterNext(&it)) && k < n) keys[k++] = pk;
    qsort(keys, k, sizeof(*keys), pendingKeyCmp);
    PushBytes *list = xmalloc(2 * k * sizeof(*list)); /* all keys, then one NOLOOP client's */
    PushItem common = broadcastItem(list, keys, k, 0);
    pushFanoutBegin(&fanout, &common);
    for (int i = 0; i < bp->count; i++) {
        Client *c = bp->clients[i];
        if (optsOf(c) & TRK_NOLOOP) {
            PushItem own = broadcastItem(list + k, keys, k, c->id);
            if (own.nkeys) sendTrackingMessage(c, &own, NULL);
        } else {
            sendTrackingMessage(c, &common, &fanout);
        }
    }
    pushFanoutEnd(&fanout, FANOUT_KEEP);
    xfree(list);
    xfree(keys);
    htabClear(&bp->keys, freePendingKey, NULL);
}

/* --- enabling and disabling --- */

static void disableTracking(Client *c) {
    TrackingState *ts = c->trackingState;
    if (!ts) return;
    for (int i = 0; i < ts->numPrefixes; i++) {
        removeClientPrefix(c, ts->prefixes[i]);
        sdsFree(ts->prefixes[i]);
    }
    xfree(ts->prefixes);
    xfree(ts);
    c->trackingState = NULL;
    c->flags &= ~CLIENT_TRACKING;
    trackingClients--;
}

static void enableTracking(Client *c, uint64_t redirect, unsigned opts, sds *pfx, int n) {
    TrackingState *ts = c->trackingState;
    if (!ts) {
        ts = xcalloc(sizeof(*ts));
        c->trackingState = ts;
        trackingClients++;
    }
    c->flags |= CLIENT_TRACKING;
    ts->opts &= ~(TRK_BROKEN_REDIR | TRK_BCAST | TRK_OPTIN | TRK_OPTOUT | TRK_NOLOOP);
    ts->redirect = redirect;
    if (opts & TRK_BCAST) {
        ts->opts |= TRK_BCAST;
        if (n == 0) addClientPrefix(c, "", 0);
        for (int i = 0; i < n; i++) addClientPrefix(c, pfx[i], sdsLen(pfx[i]));
    }
    ts->opts |= opts & (TRK_OPTIN | TRK_OPTOUT | TRK_NOLOOP);
}

static void clientGone(Client *c) {
    disableTracking(c);
    for (size_t i = 0; i < numDeferred; i++)
        if (deferred[i].c == c) deferred[i].c = NULL;
}

/* --- hooks --- */

/* Drop key from the table and tell the clients that read it (the running
 * command's own client after its reply, unless NOLOOP).  Not inlined: a
 * write with no tracked key pays only trackingInvalidateKey's tests. */
static __attribute__((noinline)) void invalidateTracked(const char *key, size_t len) {
    if (htabSize(&table) == 0) return;
    TrackedKey *t = htabUnlink(&table, key, len);
    if (!t) return;
    totalItems -= t->count;
    Client *cur = actingClient(server.net.current);
    PushBytes k = {key, len};
    PushItem it = keyItem(NULL, &k);
    pushFanoutBegin(&fanout, &it);
    for (uint32_t i = 0; i < t->count; i++) {
        Client *target = findClient(t->ids[i]);
        if (!target || !(target->flags & CLIENT_TRACKING) || (optsOf(target) & TRK_BCAST)) continue;
        if (target == cur) {
            if (!(optsOf(target) & TRK_NOLOOP)) defer(target, key, len);
        } else {
            sendTrackingMessage(target, &it, &fanout);
        }
    }
    pushFanoutEnd(&fanout, FANOUT_KEEP);
    freeTrackedKey(t, NULL);
}

void trackingInvalidateKey(Client *c, Db *db, const char *key, size_t len) {
    (void)db;
    /* BCAST's NOLOOP compares with the writer itself: a script's writes
     * reach its caller, as on Redis. */
    if (numPrefixes > 0) queueForBroadcast(c, key, len);
    /* Every key in the table has a reader: no items, no keys. */
    if (totalItems > 0) invalidateTracked(key, len);
}

/* tracking-table-max-keys: while the table holds more keys, random ones
 * are dropped and their readers told, as if the keys changed.  As in
 * Redis, one pass does bounded work (100 keys, more on each pass that
 * could not finish), so a lowered limit is reached over a few passes. */
static void limitTable(void) {
    static int unfinished;
    long long max = trackingTableMaxKeys;
    if (max == 0 || (long long)htabSize(&table) <= max) return;
    int effort = 100 * (unfinished + 1);
    while (effort-- > 0 && (long long)htabSize(&table) > max) {
        TrackedKey *t = htabRandom(&table);
        sds key = sdsNewLen(t->key, t->len);
        invalidateTracked(key, sdsLen(key));
        sdsFree(key);
    }
    unfinished = (long long)htabSize(&table) > max ? unfinished + 1 : 0;
}

static void onFlush(int dbid) {
    (void)dbid;
    if (trackingClients > 0) {
        for (Client *o = server.net.clients; o; o = o->nextClient) {
            if (!(o->flags & CLIENT_TRACKING)) continue;
            if (o == actingClient(server.net.current))
                defer(o, NULL, 0);
            else
                sendKey(o, NULL, 0);
        }
    }
    htabClear(&table, freeTrackedKey, NULL);
    totalItems = 0;
}

static void afterCall(Client *c, Command *cmd, long long usec) {
    (void)usec;
    /* A read-only command tracks its keys; one a script runs tracks the
     * keys the script declared (EVAL_RO itself tracks nothing). */
    if (cmd->flags & CMD_READONLY) {
        Client *t = actingClient(c);
        if (t != c && t->cmd) cmd = t->cmd;
        if ((t->flags & CLIENT_TRACKING) && (t != c || !isReadOnlyScript(cmd))) rememberCommandKeys(t, cmd);
    }
    /* CLIENT CACHING applies to the next command (or transaction) only. */
    TrackingState *ts = c->trackingState;
    if (ts && (ts->opts & TRK_CACHING) && !(c->flags & CLIENT_MULTI) && !isClientSubcommand(cmd))
        ts->opts &= ~TRK_CACHING;
    if (server.net.current == NULL) {
        if (trackingClients > 0) limitTable();
        if (numDeferred > 0) sendDeferred();
    }
}

static void beforeSleep(void) {
    if (trackingClients > 0) limitTable();
    if (numDeferred > 0) sendDeferred();
    for (int i = 0; i < numPrefixes; i++) broadcastPrefix(prefixes[i]);
}

void trackingInit(void) {
    htabInit(&table, &trackedType);
    serverAddKeyModifiedHook(trackingInvalidateKey);
    serverAddFlushHook(onFlush);
    dispatchAddAfterCall(afterCall);
    serverAddBeforeSleepHook(beforeSleep);
    clientAddFreeHook(clientGone);
    clientAddResetHook(clientGone);
}

/* --- INFO / CLIENT LIST --- */

unsigned long long trackingTotalKeys(void) { return htabSize(&table); }
unsigned long long trackingTotalItems(void) { return totalItems; }
size_t trackingClientMemory(const Client *c) {
    const TrackingState *ts = c->trackingState;
    return ts ? sizeof(*ts) + ts->prefixBytes : 0;
}

unsigned long long trackingTotalPrefixes(void) { return (unsigned long long)numPrefixes; }

long long trackingClientRedirect(const Client *c) {
    const TrackingState *ts = c->trackingState;
    return ts ? (long long)ts->redirect : -1;
}
int trackingClientBrokenRedirect(const Client *c) { return (optsOf(c) & TRK_BROKEN_REDIR) != 0; }
int trackingClientBcast(const Client *c) { return (optsOf(c) & TRK_BCAST) != 0; }

/* --- commands --- */

/* Redis 7.0's prefix check, including its quirk: an overlap between two
 * given prefixes found past the first one replies the error and still lets
 * the command go on (returns non-zero). */
static int checkPrefixCollisionsOrReply(Client *c, sds *pfx, int n) {
    const TrackingState *ts = c->trackingState;
    for (int i = 0; i < n; i++) {
        for (int k = 0; ts && k < ts->numPrefixes; k++) {
            if (prefixesOverlap(ts->prefixes[k], pfx[i])) {
                replyErrorFormat(c,
                                 "ERR Prefix '%s' overlaps with an existing prefix '%s'. "
                                 "Prefixes for a single client must not overlap.",
                                 pfx[i], ts->prefixes[k]);
                return 0;
            }
        }
        for (int j = i + 1; j < n; j++) {
            if (prefixesOverlap(pfx[i], pfx[j])) {
                replyErrorFormat(c,
                                 "ERR Prefix '%s' overlaps with another provided prefix '%s'. "
                                 "Prefixes for a single client must not overlap.",
                                 pfx[i], pfx[j]);
                return i;
            }
        }
    }
    return 1;
}

/* Checks the ON options against each other and the current state. */
static int checkOnOptionsOrReply(Client *c, unsigned opts, int numPfx) {
    unsigned cur = optsOf(c);
    int tracking = (c->flags & CLIENT_TRACKING) != 0;
    if (!(opts & TRK_BCAST) && numPfx) {
        replyError(c, "ERR PREFIX option requires BCAST mode to be enabled");
        return 0;
    }
    if (tracking && !!(cur & TRK_BCAST) != !!(opts & TRK_BCAST)) {
        replyError(c, "ERR You can't switch BCAST mode on/off before disabling tracking for this client, and "
                      "then re-enabling it with a different mode.");
        return 0;
    }
    if ((opts & TRK_BCAST) && (opts & (TRK_OPTIN | TRK_OPTOUT))) {
        replyError(c, "ERR OPTIN and OPTOUT are not compatible with BCAST");
        return 0;
    }
    if ((opts & TRK_OPTIN) && (opts & TRK_OPTOUT)) {
        replyError(c, "ERR You can't specify both OPTIN mode and OPTOUT mode");
        return 0;
    }
    if (((opts & TRK_OPTIN) && (cur & TRK_OPTOUT)) || ((opts & TRK_OPTOUT) && (cur & TRK_OPTIN))) {
        replyError(c, "ERR You can't switch OPTIN/OPTOUT mode before disabling tracking for this client, and "
                      "then re-enabling it with a different mode.");
        return 0;
    }
    return 1;
}

/* CLIENT TRACKING ON|OFF [REDIRECT id] [BCAST] [PREFIX p ...] [OPTIN]
 * [OPTOUT] [NOLOOP] */
void clientTrackingCommand(Client *c) {
    long long redirect = 0;
    unsigned opts = 0;
    sds *pfx = NULL;
    int numPfx = 0;
    for (int j = 3; j < c->argc; j++) {
        int more = c->argc - 1 - j;
        sds a = c->argv[j];
        if (argIs(a, "redirect") && more) {
            j++;
            if (redirect != 0) {
                replyError(c, "ERR A client can only redirect to a single other client");
                goto cleanup;
            }
            if (getLongLongOrReply(c, c->argv[j], &redirect, NULL) == -1) goto cleanup;
            if (redirect <= 0 || !findClient((uint64_t)redirect)) {
                replyError(c, "ERR The client ID you want redirect to does not exist");
                goto cleanup;
            }
        } else if (argIs(a, "bcast")) {
            opts |= TRK_BCAST;
        } else if (argIs(a, "optin")) {
            opts |= TRK_OPTIN;
        } else if (argIs(a, "optout")) {
            opts |= TRK_OPTOUT;
        } else if (argIs(a, "noloop")) {
            opts |= TRK_NOLOOP;
        } else if (argIs(a, "prefix") && more) {
            j++;
            pfx = xrealloc(pfx, (size_t)(numPfx + 1) * sizeof(sds));
            pfx[numPfx++] = c->argv[j];
        } else {
            replyErrorSyntax(c);
            goto cleanup;
        }
    }
    if (argIs(c->argv[2], "on")) {
        if (!checkOnOptionsOrReply(c, opts, numPfx)) goto cleanup;
        if ((opts & TRK_BCAST) && !checkPrefixCollisionsOrReply(c, pfx, numPfx)) goto cleanup;
        enableTracking(c, (uint64_t)redirect, opts, pfx, numPfx);
    } else if (argIs(c->argv[2], "off")) {
        disableTracking(c);
    } else {
        replyErrorSyntax(c);
        goto cleanup;
    }
    replyOk(c);
cleanup:
    xfree(pfx);
}

/* CLIENT CACHING YES|NO */
void clientCachingCommand(Client *c) {
    if (!(c->flags & CLIENT_TRACKING)) {
        replyError(c, "ERR CLIENT CACHING can be called only when the client is in tracking mode with OPTIN or "
                      "OPTOUT mode enabled");
        return;
    }
    TrackingState *ts = c->trackingState;
    if (argIs(c->argv[2], "yes")) {
        if (!(ts->opts & TRK_OPTIN)) {
            replyError(c, "ERR CLIENT CACHING YES is only valid when tracking is enabled in OPTIN mode.");
            return;
        }
    } else if (argIs(c->argv[2], "no")) {
        if (!(ts->opts & TRK_OPTOUT)) {
            replyError(c, "ERR CLIENT CACHING NO is only valid when tracking is enabled in OPTOUT mode.");
            return;
        }
    } else {
        replyErrorSyntax(c);
        return;
    }
    ts->opts |= TRK_CACHING;
    replyOk(c);
}

void clientGetredirCommand(Client *c) { replyLongLong(c, trackingClientRedirect(c)); }

void clientTrackinginfoCommand(Client *c) {
    const TrackingState *ts = c->trackingState;
    unsigned o = optsOf(c);
    replyMapLen(c, 3);
    replyBulkCString(c, "flags");
    void *len = replyDeferredLen(c);
    long n = 1;
    replyBulkCString(c, ts ? "on" : "off");
    static const struct {
        unsigned bit;
        const char *name;
    } names[] = {{TRK_BCAST, "bcast"}, {TRK_OPTIN, "optin"}, {TRK_OPTOUT, "optout"},
                 {TRK_NOLOOP, "noloop"}, {TRK_BROKEN_REDIR, "broken_redirect"}};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        if (!(o & names[i].bit)) continue;
        replyBulkCString(c, names[i].name);
        n++;
        if ((o & TRK_CACHING) && names[i].bit == TRK_OPTIN) {
            replyBulkCString(c, "caching-yes");
            n++;
        }
        if ((o & TRK_CACHING) && names[i].bit == TRK_OPTOUT) {
            replyBulkCString(c, "caching-no");
            n++;
        }
    }
    replySetDeferredSetLen(c, len, n);
    replyBulkCString(c, "redirect");
    replyLongLong(c, trackingClientRedirect(c));
    replyBulkCString(c, "prefixes");
    replyArrayLen(c, ts ? ts->numPrefixes : 0);
    for (int i = 0; ts && i < ts->numPrefixes; i++) replyBulkSds(c, ts->prefixes[i]);
}

/* ------------------------------------------------------------------------ */
/* Configuration                                                             */
/* ------------------------------------------------------------------------ */

static ConfigDef trackingConfig[] = {
    CONFIG_LL("tracking-table-max-keys", NULL, 0, trackingTableMaxKeys, 0, LONG_MAX, "1000000",
              .rank = CONFIG_RANK_INTROSPECTION + 4),
};

void trackingRegisterConfig(void) { configRegister(trackingConfig, CONFIG_COUNT_OF(trackingConfig)); }
