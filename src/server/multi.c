/* multi.c -- transactions: MULTI, EXEC, DISCARD, WATCH, UNWATCH; WATCH
 * listens to signalModifiedKey through a key-modified hook.
 *
 * Queueing.  A client in MULTI (CLIENT_MULTI) has every command other than
 * EXEC, DISCARD, MULTI, WATCH, QUIT and RESET taken by multiQueueCommand
 * (the last of processCommand's checks), which answers +QUEUED.  A command
 * flagged CMD_NO_MULTI is refused earlier (multiRefuseNoMultiOrReply, right
 * after authentication, where Redis checks it).  Any refusal while in MULTI (also
 * those processCommand makes before: unknown command, arity, auth -- see
 * multiCommandRejected) sets CLIENT_DIRTY_EXEC, and EXEC then answers
 * EXECABORT.  A transaction already doomed (DIRTY_EXEC or DIRTY_CAS) still
 * answers +QUEUED but stores nothing, as Redis does.
 *
 * EXEC keeps CLIENT_MULTI set while it runs the queued commands through
 * callCommand, so blocking commands see it and behave non-blocking, and
 * CLIENT LIST shows the queue; the queue is freed after the last one.
 *
 * WATCH.  Each Db has an index `watchedKeys` (NULL while nobody watches a
 * key there): key -> WatchNode, which lists
 * the Watch records of the clients watching that key in that db.  A client
 * holds its Watch records in a WatchState (c->watchState).  Every Watch is
 * in exactly one node's array (at index `pos`) and one client's array; it
 * is freed when either the client unwatches or the client is freed, and a
 * node is freed when its last watcher goes.  A modified key (the hook
 * touchWatchedKey) marks its watchers CLIENT_DIRTY_CAS.  A key that was already logically expired when
 * watched (`expired`) is not "modified" by its deletion, only by being
 * written; a watched key that expires logically before EXEC aborts EXEC
 * (Redis 7.0).  FLUSHDB/FLUSHALL and SWAPDB touch watched keys through the
 * server's flush/swap hooks with Redis 7.0's rules. */
#include "server/multi.h"
#include "server/acl.h"

#include <string.h>

#include "core/dispatch.h"
#include "core/server.h"
#include "ds/alloc.h"
#include "ds/htab.h"
#include "ds/siphash.h"
#include "script/script.h"

/* --- state --- */

typedef struct QueuedCommand {
    Command *cmd;   /* resolved at queue time */
    int argc;
    sds *argv;      /* owned */
} QueuedCommand;

typedef struct MultiState {
    QueuedCommand *cmds; /* queued, in order */
    int count;           /* used slots */
    int cap;             /* allocated slots: 2, then doubling (Redis's growth) */
    uint64_t flags;      /* union of the queued commands' CMD_* flags */
    uint64_t invFlags;   /* union of their complements: a flag some lack */
    size_t bytes;        /* multi-mem: argument bytes + a pointer per argument */
} MultiState;

struct WatchNode;

typedef struct Watch {
    Client *client;
    Db *db;
    struct WatchNode *node; /* the key's node in db->watchedKeys */
    int pos;                /* index in node->watchers */
    int expired;            /* the key was logically expired when watched */
} Watch;

typedef struct WatchNode {
    void *next;       /* htab chain link (must be first) */
    sds key;          /* owned */
    Watch **watchers; /* the clients watching this key in this db */
    int count, cap;
} WatchNode;

typedef struct WatchState {
    Watch **watches; /* this client's watched keys */
    int count, cap;
} WatchState;

static uint64_t watchHashKey(const void *key, size_t len) { return siphash(key, len, dbHashSeed); }

static void watchEntryKey(const void *entry, const void **key, size_t *len) {
    const WatchNode *n = entry;
    *key = n->key;
    *len = sdsLen(n->key);
}

static const HtabType watchHtabType = {watchHashKey, watchEntryKey, NULL, NULL, NULL, 0};

static void multiCommand(Client *c);
static void execCommand(Client *c);
static void discardCommand(Client *c);
static void watchCommand(Client *c);

/* --- the queue --- */

static void freeQueue(Client *c) {
    MultiState *ms = c->multiState;
    if (!ms) return;
    for (int i = 0; i < ms->count; i++) {
        for (int j = 0; j < ms->cmds[i].argc; j++) sdsFree(ms->cmds[i].argv[j]);
        xfree(ms->cmds[i].argv);
    }
    xfree(ms->cmds);
    xfree(ms);
    c->multiState = NULL;
}

/* Moves the current command's argv into the queue; the client is left
 * with none (clientResetArgv copes with that). */
static void queueCommand(Client *c, Command *cmd) {
    MultiState *ms = c->multiState;
    if (!ms) ms = c->multiState = xcalloc(sizeof(*ms));
    if (ms->count == ms->cap) {
        ms->cap = ms->cap ? ms->cap * 2 : 2;
        ms->cmds = xrealloc(ms->cmds, sizeof(QueuedCommand) * (size_t)ms->cap);
    }
    QueuedCommand *q = &ms->cmds[ms->count++];
    q->cmd = cmd;
    q->argc = c->argc;
    q->argv = c->argv;
    uint64_t flags = scriptCommandFlags(c, cmd); /* a script's declared flags, as Redis queues them */
    ms->flags |= flags;
    ms->invFlags |= ~flags;
    ms->bytes += c->argvBytes + sizeof(sds) * (size_t)q->argc;
    c->argv = NULL;
    c->argc = 0;
}

int multiQueuedCount(const Client *c) {
    const MultiState *ms = c->multiState;
    return ms ? ms->count : 0;
}

size_t multiQueuedBytes(const Client *c) {
    const MultiState *ms = c->multiState;
    return ms ? ms->bytes : 0;
}

size_t multiWatchedMemory(const Client *c) {
    const WatchState *ws = c->watchState;
    return ws ? sizeof(*ws) + (size_t)ws->cap * sizeof(Watch *) + (size_t)ws->count * sizeof(Watch) : 0;
}

uint64_t multiQueuedFlags(const Client *c) {
    const MultiState *ms = c->multiState;
    return ms ? ms->flags : 0;
}

uint64_t multiQueuedInvFlags(const Client *c) {
    const MultiState *ms = c->multiState;
    return ms ? ms->invFlags : 0;
}

Command *multiQueuedAt(const Client *c, int i, int *argc, sds **argv) {
    const MultiState *ms = c->multiState;
    if (!ms || i < 0 || i >= ms->count) return NULL;
    *argc = ms->cmds[i].argc;
    *argv = ms->cmds[i].argv;
    return ms->cmds[i].cmd;
}

/* --- watched keys --- */

static Htab *watchIndex(Db *db) {
    if (!db->watchedKeys) db->watchedKeys = htabCreate(&watchHtabType);
    return db->watchedKeys;
}

static int isWatching(const WatchNode *n, const Client *c) {
    for (int i = 0; i < n->count; i++)
        if (n->watchers[i]->client == c) return 1;
    return 0;
}

static void watchKey(Client *c, Db *db, const sds key) {
    Htab *idx = watchIndex(db);
    WatchNode *n = htabFind(idx, key, sdsLen(key));
    if (n && isWatching(n, c)) return;
    if (!n) {
        n = xcalloc(sizeof(*n));
        n->key = sdsDup(key);
        htabAdd(idx, n);
    }
    Watch *w = xmalloc(sizeof(*w));
    kvobj *o = dbFind(db, key, sdsLen(key));
    *w = (Watch){.client = c, .db = db, .node = n, .pos = n->count, .expired = o && kvIsExpired(o)};
    if (n->count == n->cap) {
        n->cap = n->cap ? n->cap * 2 : 4;
        n->watchers = xrealloc(n->watchers, sizeof(Watch *) * (size_t)n->cap);
    }
    n->watchers[n->count++] = w;
    WatchState *ws = c->watchState;
    if (!ws) ws = c->watchState = xcalloc(sizeof(*ws));
    if (ws->count == ws->cap) {
        ws->cap = ws->cap ? ws->cap * 2 : 4;
        ws->watches = xrealloc(ws->watches, sizeof(Watch *) * (size_t)ws->cap);
    }
    ws->watches[ws->count++] = w;
}

/* Removes w from its node (freeing the node when it was the last). */
static void detachWatch(Watch *w) {
    WatchNode *n = w->node;
    Watch *last = n->watchers[--n->count];
    n->watchers[w->pos] = last;
    last->pos = w->pos;
    if (n->count == 0) {
        Db *db = w->db;
        htabUnlink(db->watchedKeys, n->key, sdsLen(n->key));
        sdsFree(n->key);
        xfree(n->watchers);
        xfree(n);
        /* An index exists only while someone watches in this db. */
        if (htabSize(db->watchedKeys) == 0) {
            htabRelease(db->watchedKeys, NULL, NULL);
            db->watchedKeys = NULL;
        }
    }
}

static void unwatchAllKeys(Client *c) {
    WatchState *ws = c->watchState;
    if (!ws) return;
    for (int i = 0; i < ws->count; i++) {
        detachWatch(ws->watches[i]);
        xfree(ws->watches[i]);
    }
    xfree(ws->watches);
    xfree(ws);
    c->watchState = NULL;
}

/* Redis 7.0: EXEC fails when a key that was alive at WATCH time is now
 * logically expired, even if nothing deleted it yet. */
static int watchedKeyExpired(const Client *c) {
    const WatchState *ws = c->watchState;
    if (!ws) return 0;
    for (int i = 0; i < ws->count; i++) {
        const Watch *w = ws->watches[i];
        if (w->expired) continue;
        kvobj *o = dbFind(w->db, w->node->key, sdsLen(w->node->key));
        if (o && kvIsExpired(o)) return 1;
    }
    return 0;
}

/* The key-modified hook (server.h signalModifiedKey): marks the key's
 * watchers CLIENT_DIRTY_CAS. */
static void touchWatchedKey(Client *c, Db *db, const char *key, size_t len) {
    (void)c;
    if (db->watchedKeys && htabSize(db->watchedKeys) > 0) {
        WatchNode *n = htabFind(db->watchedKeys, key, len);
        for (int i = 0; n && i < n->count; i++) {
            Watch *w = n->watchers[i];
            /* A key already expired when watched: its deletion changes
             * nothing logically; from then on it is a plain absent key. */
            if (w->expired && !dbFind(db, key, len)) {
                w->expired = 0;
                continue;
            }
            w->client->flags |= CLIENT_DIRTY_CAS;
        }
    }
}

/* Redis's rule for FLUSHDB/FLUSHALL (replaced == NULL) and SWAPDB: a
 * watched key of `db` is touched when it existed in the old content
 * (`emptied`) or exists in the new one (`replaced`), except that a key
 * expired before and gone or still expired after is no logical change. */
static void touchAllWatchedKeys(Db *db, Db *emptied, Db *replaced) {
    if (!db->watchedKeys || htabSize(db->watchedKeys) == 0) return;
    HtabIter it;
    htabIterInit(&it, db->watchedKeys);
    WatchNode *n;
    while ((n = htabIterNext(&it))) {
        size_t len = sdsLen(n->key);
        int existedBefore = dbFind(emptied, n->key, len) != NULL;
        kvobj *after = replaced ? dbFind(replaced, n->key, len) : NULL;
        if (!existedBefore && !after) continue;
        int afterExpired = after && kvIsExpired(after);
        for (int i = 0; i < n->count; i++) {
            Watch *w = n->watchers[i];
            if (w->expired) {
                if (!after) {
                    w->expired = 0;
                    continue;
                }
                if (afterExpired) continue;
            } else if (!existedBefore && afterExpired) {
                w->expired = 1; /* an absent key replaced by an expired one */
                continue;
            }
            w->client->flags |= CLIENT_DIRTY_CAS;
        }
    }
    htabIterRelease(&it);
}

/* Signalled before the flush empties the data. */
static void flushHook(int dbid) {
    for (int i = 0; i < server.cfg.databases; i++)
        if (dbid == -1 || dbid == i) touchAllWatchedKeys(&server.db[i], &server.db[i], NULL);
}

/* Signalled after SWAPDB exchanged the contents: db a now holds what b
 * held and the other way round; watchers stay with their db number. */
static void swapHook(int a, int b) {
    if (a == b) return;
    Db *da = &server.db[a], *db = &server.db[b];
    touchAllWatchedKeys(da, db, da);
    touchAllWatchedKeys(db, da, db);
}

/* --- leaving a transaction --- */

static void discardTransaction(Client *c) {
    freeQueue(c);
    c->flags &= ~(CLIENT_MULTI | CLIENT_DIRTY_CAS | CLIENT_DIRTY_EXEC);
    unwatchAllKeys(c);
}

static void clientGone(Client *c) { discardTransaction(c); }

void multiForgetCommand(Client *c, const Command *cmd) {
    MultiState *ms = c->multiState;
    if (!ms) return;
    for (int i = 0; i < ms->count; i++) {
        if (ms->cmds[i].cmd == cmd || (ms->cmds[i].cmd && ms->cmds[i].cmd->parent == cmd)) {
            ms->cmds[i].cmd = NULL;
            c->flags |= CLIENT_DIRTY_EXEC;
        }
    }
}

void multiDiscard(Client *c) { discardTransaction(c); }

/* --- dispatch integration --- */

/* Commands that run at once inside MULTI instead of being queued. */
static int runsInsideMulti(const Command *cmd) {
    if (cmd->proc == execCommand || cmd->proc == discardCommand || cmd->proc == multiCommand ||
        cmd->proc == watchCommand)
        return 1;
    return !cmd->parent && (strcmp(cmd->name, "quit") == 0 || strcmp(cmd->name, "reset") == 0);
}

/* The dispatch reject hook: every command refused before it runs
 * (unknown, arity, auth, BUSY, another check's refusal) comes here with its
 * error text.  Inside MULTI the refusal dooms the transaction.  A refused
 * EXEC discards the transaction and answers "EXECABORT Transaction
 * discarded because of: <err>" itself (returns 1). */
static int multiCommandRejected(Client *c, const char *err) {
    if (c->flags & CLIENT_MULTI) c->flags |= CLIENT_DIRTY_EXEC;
    if (!c->cmd || c->cmd->proc != execCommand) return 0;
    discardTransaction(c);
    if (strncmp(err, "ERR ", 4) == 0) err += 4;
    replyErrorFormat(c, "EXECABORT Transaction discarded because of: %s", err);
    return 1;
}

int multiRefuseNoMultiOrReply(Client *c, Command *cmd) {
    if (!(c->flags & CLIENT_MULTI) || !(cmd->flags & CMD_NO_MULTI)) return 0;
    dispatchRejectCommand(c, "ERR Command not allowed inside a transaction");
    return -1;
}

int multiQueueCommand(Client *c, Command *cmd) {
    if (!(c->flags & CLIENT_MULTI) || runsInsideMulti(cmd)) return 0;
    c->lastcmd = cmd;
    /* A doomed transaction keeps answering QUEUED but stores nothing. */
    if (!(c->flags & (CLIENT_DIRTY_CAS | CLIENT_DIRTY_EXEC))) queueCommand(c, cmd);
    replyStatus(c, "QUEUED");
    return 1;
}

void multiInit(void) {
    serverAddKeyModifiedHook(touchWatchedKey);
    dispatchSetRejectHook(multiCommandRejected);
    clientAddFreeHook(clientGone);
    clientAddResetHook(clientGone);
    serverAddFlushHook(flushHook);
    serverAddSwapHook(swapHook);
}

/* --- commands --- */

static void multiCommand(Client *c) {
    if (c->flags & CLIENT_MULTI) {
        replyError(c, "ERR MULTI calls can not be nested");
        return;
    }
    c->flags |= CLIENT_MULTI;
    replyOk(c);
}

static void discardCommand(Client *c) {
    if (!(c->flags & CLIENT_MULTI)) {
        replyError(c, "ERR DISCARD without MULTI");
        return;
    }
    discardTransaction(c);
    replyOk(c);
}

/* Runs the queue with the client's own argv slots borrowed for each
 * command; a command may replace c->argv, so the queue takes back what it
 * finds there afterwards. */
static void runQueue(Client *c, MultiState *ms) {
    int argc = c->argc;
    sds *argv = c->argv;
    size_t argvBytes = c->argvBytes;
    Command *self = c->cmd;
    replyArrayLen(c, ms->count);
    for (int i = 0; i < ms->count; i++) {
        QueuedCommand *q = &ms->cmds[i];
        c->argc = q->argc;
        c->argv = q->argv;
        size_t bytes = 0;
        for (int j = 0; j < q->argc; j++) bytes += sdsLen(q->argv[j]);
        c->argvBytes = bytes;
        /* Permissions may have changed since the command was queued (the
         * log shows the client running EXEC, as Redis's). */
        c->cmd = self;
        if (aclRefuseQueuedOrReply(c, q->cmd, q->argc, q->argv) == -1) continue;
        callCommand(c, q->cmd);
        c->flags |= CLIENT_EXECUTING; /* EXEC itself is still running */
        q->argc = c->argc;
        q->argv = c->argv;
    }
    c->argc = argc;
    c->argv = argv;
    c->argvBytes = argvBytes;
    c->cmd = self;
}

static void execCommand(Client *c) {
    if (!(c->flags & CLIENT_MULTI)) {
        replyError(c, "ERR EXEC without MULTI");
        return;
    }
    if (watchedKeyExpired(c)) c->flags |= CLIENT_DIRTY_CAS;
    if (c->flags & (CLIENT_DIRTY_CAS | CLIENT_DIRTY_EXEC)) {
        if (c->flags & CLIENT_DIRTY_EXEC) replyError(c, "EXECABORT Transaction discarded because of previous errors.");
        else replyNullArray(c);
        discardTransaction(c);
        return;
    }
    unwatchAllKeys(c); /* nothing can abort it any more */
    MultiState *ms = c->multiState;
    if (ms) runQueue(c, ms);
    else replyArrayLen(c, 0);
    discardTransaction(c);
}

static void watchCommand(Client *c) {
    if (c->flags & CLIENT_MULTI) {
        replyError(c, "ERR WATCH inside MULTI is not allowed");
        return;
    }
    /* Already doomed: watching more changes nothing. */
    if (!(c->flags & CLIENT_DIRTY_CAS))
        for (int i = 1; i < c->argc; i++) watchKey(c, c->db, c->argv[i]);
    replyOk(c);
}

static void unwatchCommand(Client *c) {
    unwatchAllKeys(c);
    c->flags &= ~CLIENT_DIRTY_CAS;
    replyOk(c);
}

Command multiCommands[] = {
    {.name = "multi", .proc = multiCommand},
    {.name = "exec", .proc = execCommand},
    {.name = "discard", .proc = discardCommand},
    {.name = "watch", .proc = watchCommand},
    {.name = "unwatch", .proc = unwatchCommand},
    {0},
};
