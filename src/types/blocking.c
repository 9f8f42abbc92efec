/* blocking.c -- clients blocked on keys; see blocking.h for the model.
 *
 * Structures:
 *   KeyWaiters  one per (db, key) with blocked clients, in db->blockingKeys
 *               (an Htab created on first use); holds a FIFO of Waiters.
 *   Waiter      one per (client, key): a node of that key's FIFO.
 *   BlockState  c->blockState while CLIENT_BLOCKED: the db, the deadline,
 *               the serve callback and the client's Waiters; all blocked
 *               clients are linked in one list for the timeout scan.
 * A KeyWaiters is freed as soon as its FIFO is empty, and the db's index
 * with its last KeyWaiters (so nothing is left for the db layer to free).  The ready list holds
 * (db, key copy) pairs; kw->ready avoids queueing a key twice.
 *   dueHeap     the KeyWaiters with a wake-up time (signalKeyAsReadyAt), a
 *               binary min-heap on kw->wakeAt (unix us); kw->heapPos is its
 *               place + 1 (0: not in it).  A KeyWaiters leaves it when
 *               signalled or freed, so it never holds more than the
 *               waited-on keys.  One event-loop timer (generation
 *               dueTimerGen, in us: the loop sleeps to the microsecond) is
 *               armed for the heap's earliest time, at most
 *               DUE_TIMER_MAX_US ahead (it re-arms itself when it fires
 *               early); arming an earlier one makes the older timer stale,
 *               and it removes itself when it fires.  So stale timers live
 *               at most DUE_TIMER_MAX_US.
 *
 * Unblocked clients are queued in `resumeList`; before the loop sleeps their
 * pipelined input runs (netProcessInput).  A client freed meanwhile is
 * taken off that queue by the free hook. */
#include "types/blocking.h"

#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "core/dispatch.h"
#include "core/event.h"
#include "core/effects.h"
#include "core/errors.h"
#include "core/net.h"
#include "core/server.h"
#include "ds/alloc.h"
#include "ds/htab.h"
#include "ds/siphash.h"
#include "ds/util.h"

typedef struct Waiter Waiter;

typedef struct KeyWaiters {
    void *next;          /* htab chain; must stay first */
    sds key;             /* the key name, owned */
    Waiter *head, *tail; /* clients in blocking order */
    unsigned long count; /* waiters in the FIFO */
    int ready;           /* queued in the ready list */
    Db *db;              /* the database of the key */
    long long wakeAt;    /* unix us to signal the key at, 0 = none */
    size_t heapPos;      /* place in dueHeap + 1, 0 = not in it */
} KeyWaiters;

struct Waiter {
    Waiter *prev, *next; /* in kw's FIFO */
    KeyWaiters *kw;      /* the key waited on */
    Client *c;           /* the blocked client */
};

typedef struct BlockState {
    Db *db;                     /* database of the keys */
    long long deadline;         /* unix ms, 0 = forever */
    BlockServeFn *serve;        /* type callback */
    void *priv;                 /* type data, freed with privFree */
    void (*privFree)(void *);
    int numWaiters;
    Waiter *waiters;            /* numWaiters of them */
    struct BlockState *prev, *next; /* all blocked clients */
    Client *c;
    BlockTimeoutFn *onTimeout;  /* replies on timeout instead of a null array */
    int noClientUnblock;        /* CLIENT UNBLOCK leaves it blocked */
} BlockState;

typedef struct ReadyKey {
    Db *db;
    sds key; /* owned copy */
} ReadyKey;

static BlockState *blockedList;
static unsigned long blockedCount;
static unsigned long keyCount;
static long long nextDeadline = LLONG_MAX; /* earliest deadline, maybe stale-low */

static ReadyKey *readyKeys;
static size_t readyCount, readyCap;
static int serving; /* serveReadyKeys is running */

/* Replies of a large batch of served clients start leaving while the rest
 * are served (flushEarly, before the loop sleeps only): the pending writes
 * are flushed after the first served client, then after 2, 4, ... up to
 * FLUSH_SLICE_MAX more, so the first reply leaves after one client's work
 * and the writes still go out in batches (one system call each with
 * io_uring).  With appendfsync always each flush fsyncs the AOF first, so
 * there the slices keep doubling (about log2(n) fsyncs for n clients, not
 * n / 64).  servedSince counts the clients served since the last flush. */
#define FLUSH_SLICE_MAX 64
static int flushEarly;
static unsigned servedSince, flushSlice = 1;

static Client **resumeList;
static size_t resumeCount, resumeCap;

static KeyWaiters **dueHeap;
static size_t dueCount, dueCap;
static long long dueTimerWhen = LLONG_MAX; /* unix us of the live timer */
static long long dueTimerGen;              /* the live timer's generation */

static void dueHeapRemove(KeyWaiters *kw);

/* --- the per-db key index --- */

static uint64_t kwHash(const void *key, size_t len) { return siphash(key, len, dbHashSeed); }

static void kwEntryKey(const void *entry, const void **key, size_t *len) {
    const KeyWaiters *kw = entry;
    *key = kw->key;
    *len = sdsLen(kw->key);
}

static const HtabType kwType = {kwHash, kwEntryKey, NULL, NULL, NULL, 0};

static KeyWaiters *kwFind(Db *db, const char *key, size_t len) {
    if (!db->blockingKeys || htabSize(db->blockingKeys) == 0) return NULL;
    return htabFind(db->blockingKeys, key, len);
}

static KeyWaiters *kwFindOrCreate(Db *db, const char *key, size_t len) {
    if (!db->blockingKeys) db->blockingKeys = htabCreate(&kwType);
    KeyWaiters *kw = htabFind(db->blockingKeys, key, len);
    if (kw) return kw;
    kw = xcalloc(sizeof(*kw));
    kw->key = sdsNewLen(key, len);
    kw->db = db;
    htabAdd(db->blockingKeys, kw);
    keyCount++;
    return kw;
}

static void waiterUnlink(Db *db, Waiter *w) {
    KeyWaiters *kw = w->kw;
    if (w->prev) w->prev->next = w->next;
    else kw->head = w->next;
    if (w->next) w->next->prev = w->prev;
    else kw->tail = w->prev;
    kw->count--;
    if (kw->count == 0) {
        htabUnlink(db->blockingKeys, kw->key, sdsLen(kw->key));
        if (kw->heapPos) dueHeapRemove(kw);
        sdsFree(kw->key);
        xfree(kw);
        keyCount--;
        /* Drop the index with its last key: the db layer does not know it. */
        if (htabSize(db->blockingKeys) == 0) {
            htabRelease(db->blockingKeys, NULL, NULL);
            db->blockingKeys = NULL;
        }
    }
}

static void waiterAppend(KeyWaiters *kw, Waiter *w) {
    w->kw = kw;
    w->next = NULL;
    w->prev = kw->tail;
    if (kw->tail) kw->tail->next = w;
    else kw->head = w;
    kw->tail = w;
    kw->count++;
}

/* --- blocking and unblocking --- */

void blockForKeys(Client *c, sds *keys, int numKeys, long long deadlineMs, BlockServeFn *serve, void *priv,
                  void (*privFree)(void *)) {
    BlockState *bs = xcalloc(sizeof(*bs));
    bs->db = c->db;
    bs->deadline = deadlineMs;
    bs->serve = serve;
    bs->priv = priv;
    bs->privFree = privFree;
    bs->c = c;
    bs->waiters = xcalloc((size_t)numKeys * sizeof(Waiter));
    for (int i = 0; i < numKeys; i++) {
        KeyWaiters *kw = kwFindOrCreate(c->db, keys[i], sdsLen(keys[i]));
        int dup = 0;
        for (int j = 0; j < bs->numWaiters; j++)
            if (bs->waiters[j].kw == kw) dup = 1;
        if (dup) continue;
        Waiter *w = &bs->waiters[bs->numWaiters++];
        w->c = c;
        waiterAppend(kw, w);
    }
    bs->next = blockedList;
    if (blockedList) blockedList->prev = bs;
    blockedList = bs;
    blockedCount++;
    if (deadlineMs && deadlineMs < nextDeadline) nextDeadline = deadlineMs;
    c->blockState = bs;
    c->flags |= CLIENT_BLOCKED;
}

void *blockedPriv(const Client *c) {
    const BlockState *bs = c->blockState;
    return bs ? bs->priv : NULL;
}

/* Drop c's block state: waiters, list link, priv.  No reply, no resume. */
static void releaseBlockState(Client *c) {
    BlockState *bs = c->blockState;
    if (!bs) return;
    for (int i = 0; i < bs->numWaiters; i++) waiterUnlink(bs->db, &bs->waiters[i]);
    if (bs->prev) bs->prev->next = bs->next;
    else blockedList = bs->next;
    if (bs->next) bs->next->prev = bs->prev;
    blockedCount--;
    if (bs->privFree) bs->privFree(bs->priv);
    xfree(bs->waiters);
    xfree(bs);
    c->blockState = NULL;
    c->flags &= ~CLIENT_BLOCKED;
}

/* Unblock a client that got its reply: release, drop its argv and queue it
 * to run what it pipelined meanwhile. */
static void unblockClient(Client *c) {
    releaseBlockState(c);
    clientResetArgv(c);
    if (clientIsFake(c) || (c->flags & (CLIENT_CLOSE_ASAP | CLIENT_CLOSE_AFTER_REPLY))) return;
    if (resumeCount == resumeCap) {
        resumeCap = resumeCap ? resumeCap * 2 : 16;
        resumeList = xrealloc(resumeList, resumeCap * sizeof(*resumeList));
    }
    resumeList[resumeCount++] = c;
}

static void replyTimedOut(Client *c) {
    BlockState *bs = c->blockState;
    if (bs && bs->onTimeout) bs->onTimeout(c);
    else replyNullArray(c);
}

void blockSetTimeoutHandler(Client *c, BlockTimeoutFn *fn, int clientUnblock) {
    BlockState *bs = c->blockState;
    if (!bs) return;
    bs->onTimeout = fn;
    bs->noClientUnblock = !clientUnblock;
}

void blockingUnblockReplied(Client *c) {
    if (c->blockState) unblockClient(c);
}

int blockingUnblockClient(Client *c, int error) {
    if (!(c->flags & CLIENT_BLOCKED) || !c->blockState) return 0;
    if (((BlockState *)c->blockState)->noClientUnblock) return 0;
    if (error) replyError(c, "UNBLOCKED client unblocked via CLIENT UNBLOCK");
    else replyTimedOut(c);
    unblockClient(c);
    dispatchBlockedDone(c, 0, 1); /* failed either way, argv gone: as Redis 7.0 counts it */
    return 1;
}

void blockingDisconnectAll(const char *err) {
    while (blockedList) {
        Client *c = blockedList->c;
        replyError(c, err);
        c->flags |= CLIENT_CLOSE_AFTER_REPLY;
        unblockClient(c);
    }
}

static void onClientFree(Client *c) {
    releaseBlockState(c);
    for (size_t i = 0; i < resumeCount; i++)
        if (resumeList[i] == c) resumeList[i] = NULL;
}

static void onClientReset(Client *c) { releaseBlockState(c); }

unsigned long blockingClientCount(void) { return blockedCount; }
unsigned long blockingKeyCount(void) { return keyCount; }

int clientMayBlock(const Client *c) { return !(c->flags & (CLIENT_MULTI | CLIENT_LUA | CLIENT_FAKE)); }

/* --- timeouts --- */

int getBlockTimeoutOrReply(Client *c, const sds arg, long long *deadlineMs) {
    long double secs;
    if (!stringToLongDouble(arg, sdsLen(arg), &secs)) {
        replyError(c, "ERR timeout is not a float or out of range");
        return -1;
    }
    /* Redis truncates seconds*1000 to an integer; values beyond the range
     * of long long come out negative on x86 (and so are refused). */
    long double ms = secs * 1000.0L;
    long long tval;
    if (isnan(ms) || ms >= 9223372036854775807.0L || ms < -9223372036854775807.0L) tval = LLONG_MIN;
    else tval = (long long)ms;
    if (tval < 0) {
        replyError(c, ERR_TIMEOUT_NEG);
        return -1;
    }
    /* A positive timeout below 1 ms still times out (Redis rounds up). */
    if (tval == 0 && secs > 0) tval = 1;
    if (tval == 0) {
        *deadlineMs = 0;
        return 0;
    }
    long long now = mstime();
    *deadlineMs = tval > LLONG_MAX - now ? LLONG_MAX : now + tval;
    return 0;
}

static void checkTimeouts(void) {
    if (!blockedList) {
        nextDeadline = LLONG_MAX;
        return;
    }
    long long now = mstime();
    if (now < nextDeadline) return;
    long long next = LLONG_MAX;
    BlockState *bs = blockedList;
    while (bs) {
        BlockState *following = bs->next;
        if (bs->deadline && bs->deadline <= now) {
            replyTimedOut(bs->c);
            unblockClient(bs->c);
        } else if (bs->deadline && bs->deadline < next) {
            next = bs->deadline;
        }
        bs = following;
    }
    nextDeadline = next;
}

/* --- serving ready keys --- */

void signalKeyAsReady(Db *db, const char *key, size_t len) {
    KeyWaiters *kw = kwFind(db, key, len);
    if (!kw || kw->ready) return;
    kw->ready = 1;
    if (readyCount == readyCap) {
        readyCap = readyCap ? readyCap * 2 : 16;
        readyKeys = xrealloc(readyKeys, readyCap * sizeof(*readyKeys));
    }
    readyKeys[readyCount].db = db;
    readyKeys[readyCount].key = sdsNewLen(key, len);
    readyCount++;
}

/* --- due-time wake-ups --- */

static int dueLess(size_t a, size_t b) { return dueHeap[a]->wakeAt < dueHeap[b]->wakeAt; }

static void dueSwap(size_t a, size_t b) {
    KeyWaiters *t = dueHeap[a];
    dueHeap[a] = dueHeap[b];
    dueHeap[b] = t;
    dueHeap[a]->heapPos = a + 1;
    dueHeap[b]->heapPos = b + 1;
}

static void dueSiftUp(size_t i) {
    while (i > 0 && dueLess(i, (i - 1) / 2)) {
        dueSwap(i, (i - 1) / 2);
        i = (i - 1) / 2;
    }
}

static void dueSiftDown(size_t i) {
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < dueCount && dueLess(l, m)) m = l;
        if (r < dueCount && dueLess(r, m)) m = r;
        if (m == i) return;
        dueSwap(i, m);
        i = m;
    }
}

static void dueHeapRemove(KeyWaiters *kw) {
    size_t i = kw->heapPos - 1;
    kw->heapPos = 0;
    kw->wakeAt = 0;
    if (--dueCount == i) return;
    KeyWaiters *moved = dueHeap[dueCount];
    dueHeap[i] = moved;
    moved->heapPos = i + 1;
    dueSiftUp(i);
    dueSiftDown(moved->heapPos - 1);
}

static long long dueTimerProc(EventLoop *loop, long long id, void *data);

#define DUE_TIMER_MAX_US 250000

/* The delay (us) to arm for unix us when, now being now, and sets
 * dueTimerWhen to the moment the timer will fire. */
static long long dueDelay(long long when, long long now) {
    long long delay = when - now;
    if (delay < 0) delay = 0;
    if (delay > DUE_TIMER_MAX_US) delay = DUE_TIMER_MAX_US;
    dueTimerWhen = now + delay;
    return delay;
}

/* Arms the timer for unix us when, unless the live one fires no later. */
static void dueArm(long long when) {
    if (when >= dueTimerWhen) return;
    long long delay = dueDelay(when, ustime());
    eventAddTimerUs(server.loop, delay, dueTimerProc, (void *)(intptr_t)++dueTimerGen);
}

/* Signals every key whose wake-up time has come, then goes on for the
 * next one, re-armed (or ends).  A stale timer (an earlier one was armed
 * after it) just ends. */
static long long dueTimerProc(EventLoop *loop, long long id, void *data) {
    (void)loop, (void)id;
    if ((intptr_t)data != dueTimerGen) return -1;
    long long now = ustime();
    while (dueCount > 0 && dueHeap[0]->wakeAt <= now) {
        KeyWaiters *kw = dueHeap[0];
        Db *db = kw->db;
        dueHeapRemove(kw);
        signalKeyAsReady(db, kw->key, sdsLen(kw->key));
    }
    if (dueCount == 0) {
        dueTimerWhen = LLONG_MAX;
        return -1;
    }
    return dueDelay(dueHeap[0]->wakeAt, now);
}

void signalKeyAsReadyAt(Db *db, const char *key, size_t len, long long whenUs) {
    KeyWaiters *kw = kwFind(db, key, len);
    if (!kw || (kw->heapPos && kw->wakeAt <= whenUs)) return;
    kw->wakeAt = whenUs;
    if (!kw->heapPos) {
        if (dueCount == dueCap) {
            dueCap = dueCap ? dueCap * 2 : 16;
            dueHeap = xrealloc(dueHeap, dueCap * sizeof(*dueHeap));
        }
        dueHeap[dueCount++] = kw;
        kw->heapPos = dueCount;
    }
    dueSiftUp(kw->heapPos - 1);
    dueArm(whenUs);
}

/* Offer key to the clients blocked on it, in blocking order.  Clients that
 * decline move to the back, so after one pass the order is unchanged. */
static void serveKey(Db *db, const sds key) {
    KeyWaiters *kw = kwFind(db, key, sdsLen(key));
    if (!kw) return;
    kw->ready = 0;
    unsigned long n = kw->count;
    while (n-- > 0) {
        kw = kwFind(db, key, sdsLen(key));
        if (!kw) return;
        Waiter *w = kw->head;
        Client *c = w->c;
        BlockState *bs = c->blockState;
        /* Each client served is a unit of effects of its own.  While it is
         * served it is the running client, as in Redis: a tracking
         * invalidation of a key its command writes (BLMOVE's destination)
         * follows its reply, and NOLOOP leaves it out. */
        effectsHold();
        Client *running = server.net.current;
        server.net.current = c;
        long long errors = server.stats.totalErrorReplies, start = ustime();
        /* An in-process snapshot writes the keys the command names first. */
        if (__builtin_expect(dispatchBeforeWrite != NULL, 0) && c->lastcmd) dispatchBeforeWrite(c, c->lastcmd);
        int served = bs->serve(c, db, key, sdsLen(key));
        server.net.current = running;
        effectsRelease();
        if (served) {
            /* Its stats and slow-log entry (dispatch.h), argv still set. */
            dispatchBlockedDone(c, ustime() - start, server.stats.totalErrorReplies != errors);
            unblockClient(c);
            if (flushEarly && ++servedSince >= flushSlice) {
                /* As before sleeping: the AOF first (appendfsync always
                 * writes it before any reply), then the replies. */
                serverBeforeReplyWrite();
                netHandlePendingWrites();
                servedSince = 0;
                if (flushSlice < FLUSH_SLICE_MAX || (flushSlice < (1u << 30) &&
                    server.cfg.appendonly && server.cfg.appendfsync == APPENDFSYNC_ALWAYS))
                    flushSlice *= 2;
            }
        } else if (kw->count > 1) {
            /* Rotate the head to the tail. */
            kw->head = w->next;
            kw->head->prev = NULL;
            w->prev = kw->tail;
            w->next = NULL;
            kw->tail->next = w;
            kw->tail = w;
        }
    }
}

static void serveReadyKeys(void) {
    if (serving) return;
    serving = 1;
    servedSince = 0;
    flushSlice = 1;
    /* Serving happens after the command (EXEC, a script) whose clock was
     * fixed when it started: a key is served only if it is alive now, so
     * the lookups see the current time (an expired key is deleted, its DEL
     * propagated, and its clients stay blocked). */
    dbNowUs = ustime();
    dbNowMs = dbNowUs / 1000;
    while (readyCount > 0) {
        ReadyKey *batch = readyKeys;
        size_t n = readyCount;
        readyKeys = NULL;
        readyCount = readyCap = 0;
        for (size_t i = 0; i < n; i++) {
            serveKey(batch[i].db, batch[i].key);
            sdsFree(batch[i].key);
        }
        xfree(batch);
    }
    serving = 0;
}

/* Run the input that unblocked clients pipelined while blocked. */
static void resumeUnblocked(void) {
    while (resumeCount > 0) {
        Client *c = resumeList[--resumeCount];
        if (!c || (c->flags & CLIENT_BLOCKED)) continue;
        c->flags |= CLIENT_PROTECTED;
        netProcessInput(c);
        c->flags &= ~CLIENT_PROTECTED;
        serveReadyKeys();
    }
}

/* Write commands whose key Redis does not signal: those that only change
 * a key's time to live (a waiter on a stream that is now logically expired
 * keeps waiting until the key is really deleted), XSETID (a waiter served
 * now would get an empty read) and XGROUP SETID (moving a group back does
 * not serve its waiters until the next XADD). */
static int unsignalledCommand(const Command *cmd) {
    static const char *const names[] = {"expire", "pexpire", "expireat", "pexpireat", "persist", "xsetid",
                                        "xgroup|setid"};
    const char *name = cmd->fullname ? cmd->fullname : cmd->name;
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if (strcmp(name, names[i]) == 0) return 1;
    return 0;
}

/* After every command: signal the keys a write touched (covers commands
 * that create keys without knowing about blocking, e.g. RENAME), then
 * serve -- at top level only, so EXEC and scripts wake clients once, after
 * they finish. */
static void afterCall(Client *c, Command *cmd, long long usec) {
    (void)usec;
    if (blockedList && (cmd->flags & CMD_WRITE) && !(c->flags & CLIENT_BLOCKED) && !unsignalledCommand(cmd)) {
        int stackKeys[16];
        int *pos = c->argc <= 16 ? stackKeys : xmalloc(sizeof(int) * (size_t)c->argc);
        int n = commandGetKeys(cmd, c, c->argc, c->argv, pos, c->argc);
        for (int i = 0; i < n; i++) {
            sds k = c->argv[pos[i]];
            signalKeyAsReady(c->db, k, sdsLen(k));
        }
        if (pos != stackKeys) xfree(pos);
    }
    if (server.net.current == NULL && readyCount > 0) serveReadyKeys();
}

static void beforeSleep(void) {
    flushEarly = 1;
    serveReadyKeys();
    flushEarly = 0;
    checkTimeouts();
    resumeUnblocked();
}

static void cron(void) { checkTimeouts(); }

/* Signal every key waited on in db: the serve callbacks then see what
 * each key is now (a new value, another type, or gone: XREADGROUP's
 * waiters get an error for a key that went). */
static void signalAllWaitedKeys(Db *db) {
    if (!db->blockingKeys || htabSize(db->blockingKeys) == 0) return;
    HtabIter it;
    htabIterInit(&it, db->blockingKeys);
    KeyWaiters *kw;
    while ((kw = htabIterNext(&it)) != NULL) signalKeyAsReady(db, kw->key, sdsLen(kw->key));
    htabIterRelease(&it);
}

/* SWAPDB: every key waited on in either db may have come, gone or changed
 * type.  A key that came in already expired is deleted (DEL propagated)
 * when it is looked up for serving. */
static void onSwap(int a, int b) {
    signalAllWaitedKeys(&server.db[a]);
    signalAllWaitedKeys(&server.db[b]);
}

/* FLUSHDB (dbid) / FLUSHALL (-1): signalled before the data goes; the keys
 * are served (found gone) after the command. */
static void onFlush(int dbid) {
    if (!blockedList) return;
    for (int i = 0; i < server.cfg.databases; i++)
        if (dbid == -1 || dbid == i) signalAllWaitedKeys(&server.db[i]);
}

/* A key deleted outside any command (expiry, lazy or active, or
 * eviction).  The commands' own keys are signalled after they run
 * (afterCall). */
static void onKeyDeleted(Db *db, const char *key, size_t len) {
    if (blockedList) signalKeyAsReady(db, key, len);
}

void blockingInit(void) {
    dispatchAddAfterCall(afterCall);
    serverAddBeforeSleepHook(beforeSleep);
    serverAddCronHook(cron);
    serverAddSwapHook(onSwap);
    serverAddFlushHook(onFlush);
    serverAddKeyDeletedHook(onKeyDeleted);
    clientAddFreeHook(onClientFree);
    clientAddResetHook(onClientReset);
}

int getMpopCountOrReply(Client *c, int first, long *count) {
    *count = -1;
    for (int j = first; j < c->argc; j++) {
        if (argIs(c->argv[j], "count") && j + 1 < c->argc && *count == -1) {
            if (getRangeLongOrReply(c, c->argv[++j], 1, LONG_MAX, count, "ERR count should be greater than 0") == -1)
                return -1;
        } else {
            replyErrorSyntax(c);
            return -1;
        }
    }
    if (*count == -1) *count = 1;
    return 0;
}
