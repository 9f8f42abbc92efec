/* pubsub.c -- SUBSCRIBE / PSUBSCRIBE / SSUBSCRIBE, their UNSUBSCRIBE
 * forms, PUBLISH, SPUBLISH and the PUBSUB container.
 *
 * Three independent namespaces ("kinds"): channels, patterns and shard
 * channels.  For each kind there is one global table of Targets (a channel
 * or pattern that has at least one subscriber) and, per client, a table of
 * Subs (that client's subscriptions of that kind).  A Sub links one client
 * to one Target and knows its slot in the Target's subscriber array, so
 * subscribe, unsubscribe and the per-subscriber step of a publish are O(1).
 *
 * Invariants:
 *  - a Target exists iff its subscriber array is non-empty; it is freed by
 *    the unsubscribe that empties it;
 *  - t->subs[s->pos] == s for every Sub s of t;
 *  - a client holds CLIENT_PUBSUB iff it has at least one subscription of
 *    any kind (a RESP3 client too: it selects the pubsub output-buffer
 *    class), and c->pubsubState is non-NULL iff it has one;
 *  - each client also keeps its Subs of a kind in subscription order, which
 *    is the order UNSUBSCRIBE-all reports them in (Redis reports patterns
 *    in that order and channels in hash order, which nobody can rely on).
 *
 * A published message, and each (un)subscribe confirmation, is a typed
 * push item (proto/push.h); core/push.c renders it in each receiver's
 * format.  A publish renders its item once per encoder in use (once more
 * per matching pattern, whose pmessage differs) and copies those bytes
 * into each receiver's output.
 *
 * RESP2 subscribed mode: pubsubRefuseInContextOrReply, one of
 * processCommand's checks, refuses every command but the (un)subscribe
 * family, PING, QUIT and RESET, as Redis 7.0 does. */
#include "server/pubsub.h"

#include <string.h>

#include "core/client.h"
#include "core/command.h"
#include "core/dispatch.h"
#include "core/effects.h"
#include "core/net.h"
#include "core/push.h"
#include "core/server.h"
#include "db/db.h"
#include "ds/alloc.h"
#include "ds/glob.h"
#include "ds/htab.h"
#include "ds/siphash.h"
#include "server/cluster.h"

enum { KIND_CHANNEL, KIND_PATTERN, KIND_SHARD, KIND_COUNT };

typedef struct Sub Sub;

/* A channel, pattern or shard channel with subscribers. */
typedef struct Target {
    void *next;   /* chain in targets[kind] */
    Sub **subs;   /* the subscribers, unordered */
    size_t count; /* used slots of subs */
    size_t cap;   /* allocated slots of subs */
    size_t len;   /* name length */
    char name[];  /* name bytes (binary, no terminator needed) */
} Target;

/* One client's subscription to one Target. */
struct Sub {
    void *next;        /* chain in the client's table */
    Target *t;         /* what it subscribes to */
    Client *c;         /* who */
    size_t pos;        /* index in t->subs */
    Sub *prev, *after; /* the client's subscriptions of this kind, in order */
};

typedef struct ClientSubs {
    Htab byName;       /* Sub entries keyed by their target's name */
    Sub *first, *last; /* subscription order */
} ClientSubs;

typedef struct PubsubState {
    ClientSubs kinds[KIND_COUNT];
} PubsubState;

/* Each kind's push items. */
static const struct {
    PushKind sub, unsub, msg;
} kindPush[KIND_COUNT] = {
    {PUSH_SUBSCRIBE, PUSH_UNSUBSCRIBE, PUSH_MESSAGE},
    {PUSH_PSUBSCRIBE, PUSH_PUNSUBSCRIBE, PUSH_PMESSAGE},
    {PUSH_SSUBSCRIBE, PUSH_SUNSUBSCRIBE, PUSH_SMESSAGE},
};

static Htab targets[KIND_COUNT];

/* The renderings publishes reuse (publishing never nests); buffers up to
 * MSG_BUF_KEEP bytes are kept for the next publish. */
#define MSG_BUF_KEEP 4096
static PushFanout fanout;

/* --- tables --- */

static uint64_t hashName(const void *key, size_t len) { return siphash(key, len, dbHashSeed); }

static void targetKey(const void *entry, const void **key, size_t *len) {
    const Target *t = entry;
    *key = t->name;
    *len = t->len;
}

static void subKey(const void *entry, const void **key, size_t *len) {
    const Sub *s = entry;
    *key = s->t->name;
    *len = s->t->len;
}

static const HtabType targetType = {hashName, targetKey, NULL, NULL, NULL, 0};
static const HtabType subType = {hashName, subKey, NULL, NULL, NULL, 0};

static PubsubState *stateOf(Client *c, int create) {
    if (!c->pubsubState && create) {
        PubsubState *st = xcalloc(sizeof(*st));
        for (int k = 0; k < KIND_COUNT; k++)
            htabInit(&st->kinds[k].byName, &subType);
        c->pubsubState = st;
    }
    return c->pubsubState;
}

static long kindCount(const Client *c, int kind) {
    const PubsubState *st = c->pubsubState;
    return st ? (long)htabSize(&st->kinds[kind].byName) : 0;
}

/* The count a (un)subscribe confirmation carries: channels plus patterns,
 * or shard channels alone. */
static long confirmCount(const Client *c, int kind) {
    if (kind == KIND_SHARD) return kindCount(c, KIND_SHARD);
    return kindCount(c, KIND_CHANNEL) + kindCount(c, KIND_PATTERN);
}

/* Clears CLIENT_PUBSUB and frees the state once nothing is left. */
static void releaseIfIdle(Client *c) {
    PubsubState *st = c->pubsubState;
    if (!st) return;
    for (int k = 0; k < KIND_COUNT; k++)
        if (htabSize(&st->kinds[k].byName)) return;
    for (int k = 0; k < KIND_COUNT; k++)
        htabClear(&st->kinds[k].byName, NULL, NULL);
    xfree(st);
    c->pubsubState = NULL;
    c->flags &= ~CLIENT_PUBSUB;
}

/* Subscribes c; returns 1 if new, 0 if it was already subscribed. */
static int subscribeOne(Client *c, int kind, const char *name, size_t len) {
    ClientSubs *cs = &stateOf(c, 1)->kinds[kind];
    if (htabFind(&cs->byName, name, len)) return 0;
    Target *t = htabFind(&targets[kind], name, len);
    if (!t) {
        t = xmalloc(sizeof(*t) + len);
        t->subs = NULL;
        t->count = t->cap = 0;
        t->len = len;
        memcpy(t->name, name, len);
        htabAdd(&targets[kind], t);
    }
    if (t->count == t->cap) {
        t->cap = t->cap ? t->cap * 2 : 4;
        t->subs = xrealloc(t->subs, t->cap * sizeof(*t->subs));
    }
    Sub *s = xmalloc(sizeof(*s));
    s->t = t;
    s->c = c;
    s->pos = t->count;
    t->subs[t->count++] = s;
    s->prev = cs->last;
    s->after = NULL;
    if (cs->last)
        cs->last->after = s;
    else
        cs->first = s;
    cs->last = s;
    htabAdd(&cs->byName, s);
    return 1;
}

/* Removes s (of c's subscriptions of kind) and frees it; frees its Target
 * when it was the last subscriber. */
static void unsubscribeSub(Client *c, int kind, Sub *s) {
    ClientSubs *cs = &((PubsubState *)c->pubsubState)->kinds[kind];
    Target *t = s->t;
    htabUnlink(&cs->byName, t->name, t->len);
    if (s->prev)
        s->prev->after = s->after;
    else
        cs->first = s->after;
    if (s->after)
        s->after->prev = s->prev;
    else
        cs->last = s->prev;
    Sub *moved = t->subs[--t->count];
    moved->pos = s->pos;
    t->subs[s->pos] = moved;
    xfree(s);
    if (t->count == 0) {
        htabUnlink(&targets[kind], t->name, t->len);
        xfree(t->subs);
        xfree(t);
    }
}

/* Confirmations are pushes (RESP2 too): CLIENT REPLY OFF does not drop
 * them.  name NULL: none. */
static void replyConfirm(Client *c, PushKind word, const char *name, size_t len, long count) {
    PushItem it = {.kind = word, .channel = {name, len}, .count = count};
    replyPush(c, &it);
}

/* Drops every subscription of kind, confirming each when `reply` (and
 * confirming "none" when there was none). */
static void unsubscribeAll(Client *c, int kind, int reply) {
    PubsubState *st = c->pubsubState;
    Sub *s = st ? st->kinds[kind].first : NULL;
    if (!s && reply) replyConfirm(c, kindPush[kind].unsub, NULL, 0, confirmCount(c, kind));
    while (s) {
        Sub *after = s->after;
        /* Confirmed first: the name lives in the Target, which may go with
         * the Sub; the count is the one left after it. */
        if (reply) replyConfirm(c, kindPush[kind].unsub, s->t->name, s->t->len, confirmCount(c, kind) - 1);
        unsubscribeSub(c, kind, s);
        s = after;
    }
}

/* --- publishing --- */

/* Delivers item to every subscriber of t. */
static long deliverTarget(const Target *t, const PushItem *item) {
    pushFanoutBegin(&fanout, item);
    for (size_t i = 0; i < t->count; i++) {
        Client *c = t->subs[i]->c;
        pushFanoutDeliver(&fanout, c);
        /* The subscriber is measured again with its new output, so client
         * eviction (maxmemory-clients) sees it before key eviction does. */
        if (netClientMemoryHook) netClientMemoryHook(c);
    }
    return (long)t->count;
}

/* Publish to the channel's (or shard channel's) subscribers and, for
 * channels, to the matching patterns' subscribers. */
static long publishKind(int kind, const char *channel, size_t clen, const char *msg, size_t mlen) {
    long receivers = 0;
    Target *t = htabFind(&targets[kind], channel, clen);
    int patterns = kind == KIND_CHANNEL && htabSize(&targets[KIND_PATTERN]) > 0;
    if (!t && !patterns) return 0;
    PushItem item = {.kind = kindPush[kind].msg, .channel = {channel, clen}, .payload = {msg, mlen}};
    if (t) receivers += deliverTarget(t, &item);
    if (patterns) {
        HtabIter it;
        htabIterInit(&it, &targets[KIND_PATTERN]);
        Target *p;
        while ((p = htabIterNext(&it)) != NULL) {
            if (!globMatch(p->name, p->len, channel, clen, 0)) continue;
            item.kind = PUSH_PMESSAGE;
            item.pattern = (PushBytes){p->name, p->len};
            receivers += deliverTarget(p, &item);
        }
        htabIterRelease(&it);
    }
    /* Keep small buffers for the next publish; let big ones go. */
    pushFanoutEnd(&fanout, MSG_BUF_KEEP);
    return receivers;
}

long pubsubPublish(const char *channel, size_t clen, const char *msg, size_t mlen) {
    return publishKind(KIND_CHANNEL, channel, clen, msg, mlen);
}

long pubsubPublishShard(const char *channel, size_t clen, const char *msg, size_t mlen) {
    return publishKind(KIND_SHARD, channel, clen, msg, mlen);
}

void pubsubShardDropSlot(unsigned slot) {
    if (htabSize(&targets[KIND_SHARD]) == 0) return;
    Target **drop = NULL;
    size_t n = 0, cap = 0;
    HtabIter it;
    htabIterInit(&it, &targets[KIND_SHARD]);
    Target *t;
    while ((t = htabIterNext(&it)) != NULL) {
        if (dbKeySlot(t->name, t->len) != slot) continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 8;
            drop = xrealloc(drop, cap * sizeof(*drop));
        }
        drop[n++] = t;
    }
    htabIterRelease(&it);
    for (size_t i = 0; i < n; i++) {
        t = drop[i];
        for (size_t k = t->count; k-- > 0;) {
            Sub *sub = t->subs[k];
            Client *c = sub->c;
            int last = t->count == 1;
            /* Confirmed first: the name lives in the Target, which goes
             * with its last subscriber. */
            replyConfirm(c, kindPush[KIND_SHARD].unsub, t->name, t->len, confirmCount(c, KIND_SHARD) - 1);
            unsubscribeSub(c, KIND_SHARD, sub);
            releaseIfIdle(c);
            if (last) break;
        }
    }
    xfree(drop);
}

size_t pubsubChannelCount(void) { return htabSize(&targets[KIND_CHANNEL]); }
size_t pubsubPatternCount(void) { return htabSize(&targets[KIND_PATTERN]); }
size_t pubsubShardChannelCount(void) { return htabSize(&targets[KIND_SHARD]); }

size_t pubsubClientMemory(const Client *c) {
    const PubsubState *st = c->pubsubState;
    if (!st) return 0;
    size_t bytes = sizeof(*st);
    for (int k = 0; k < KIND_COUNT; k++)
        bytes += htabSize(&st->kinds[k].byName) * (sizeof(Sub) + sizeof(Sub *)) +
                 htabBuckets(&st->kinds[k].byName) * sizeof(void *);
    return bytes;
}

void pubsubClientCounts(const Client *c, long *sub, long *psub, long *ssub) {
    *sub = kindCount(c, KIND_CHANNEL);
    *psub = kindCount(c, KIND_PATTERN);
    *ssub = kindCount(c, KIND_SHARD);
}

int pubsubClientAnySubscription(const Client *c, PubsubSubscriptionTest *test, void *arg) {
    const PubsubState *st = c->pubsubState;
    if (!st) return 0;
    for (int k = 0; k < KIND_COUNT; k++)
        for (const Sub *s = st->kinds[k].first; s; s = s->after)
            if (test(s->t->name, s->t->len, k == KIND_PATTERN, arg)) return 1;
    return 0;
}

/* --- commands --- */

/* Inside MULTI/EXEC (and scripts) a client cannot wait for messages; Redis
 * refuses SSUBSCRIBE there but lets SUBSCRIBE/PSUBSCRIBE through for
 * compatibility. */
static int denyBlocking(const Client *c) { return (c->flags & (CLIENT_MULTI | CLIENT_LUA)) != 0; }

static void subscribeGeneric(Client *c, int kind) {
    for (int j = 1; j < c->argc; j++) {
        subscribeOne(c, kind, c->argv[j], sdsLen(c->argv[j]));
        replyConfirm(c, kindPush[kind].sub, c->argv[j], sdsLen(c->argv[j]), confirmCount(c, kind));
    }
    c->flags |= CLIENT_PUBSUB;
}

static void unsubscribeGeneric(Client *c, int kind) {
    if (c->argc == 1) {
        unsubscribeAll(c, kind, 1);
    } else {
        PubsubState *st = c->pubsubState;
        for (int j = 1; j < c->argc; j++) {
            Sub *s = st ? htabFind(&st->kinds[kind].byName, c->argv[j], sdsLen(c->argv[j])) : NULL;
            if (s) unsubscribeSub(c, kind, s);
            replyConfirm(c, kindPush[kind].unsub, c->argv[j], sdsLen(c->argv[j]), confirmCount(c, kind));
        }
    }
    releaseIfIdle(c);
}

static void subscribeCommand(Client *c) {
    if ((c->flags & CLIENT_LUA) && !(c->flags & CLIENT_MULTI)) {
        replyError(c, "ERR SUBSCRIBE isn't allowed for a DENY BLOCKING client");
        return;
    }
    subscribeGeneric(c, KIND_CHANNEL);
}

static void psubscribeCommand(Client *c) {
    if ((c->flags & CLIENT_LUA) && !(c->flags & CLIENT_MULTI)) {
        replyError(c, "ERR PSUBSCRIBE isn't allowed for a DENY BLOCKING client");
        return;
    }
    subscribeGeneric(c, KIND_PATTERN);
}

static void ssubscribeCommand(Client *c) {
    if (denyBlocking(c)) {
        replyError(c, "ERR SSUBSCRIBE isn't allowed for a DENY BLOCKING client");
        return;
    }
    subscribeGeneric(c, KIND_SHARD);
}

static void unsubscribeCommand(Client *c) { unsubscribeGeneric(c, KIND_CHANNEL); }
static void punsubscribeCommand(Client *c) { unsubscribeGeneric(c, KIND_PATTERN); }
static void sunsubscribeCommand(Client *c) { unsubscribeGeneric(c, KIND_SHARD); }

/* PUBLISH and SPUBLISH reach replicas (not the AOF) as sent. */
static void publishCommand(Client *c) {
    if (clusterEnabled) clusterPropagatePublish(c->argv[1], sdsLen(c->argv[1]), c->argv[2], sdsLen(c->argv[2]), 0);
    else effectsForce(EFFECT_REPL);
    replyLongLong(c,
                  publishKind(KIND_CHANNEL, c->argv[1], sdsLen(c->argv[1]), c->argv[2], sdsLen(c->argv[2])));
}

static void spublishCommand(Client *c) {
    if (clusterEnabled) clusterPropagatePublish(c->argv[1], sdsLen(c->argv[1]), c->argv[2], sdsLen(c->argv[2]), 1);
    else effectsForce(EFFECT_REPL);
    replyLongLong(c, publishKind(KIND_SHARD, c->argv[1], sdsLen(c->argv[1]), c->argv[2], sdsLen(c->argv[2])));
}

/* PUBSUB CHANNELS / SHARDCHANNELS [pattern]: names in table order. */
static void listTargets(Client *c, int kind) {
    if (c->argc > 3) {
        replySubcommandSyntaxError(c);
        return;
    }
    const char *pat = c->argc == 3 ? c->argv[2] : NULL;
    size_t plen = pat ? sdsLen(c->argv[2]) : 0;
    void *node = replyDeferredLen(c);
    long n = 0;
    HtabIter it;
    htabIterInit(&it, &targets[kind]);
    Target *t;
    while ((t = htabIterNext(&it)) != NULL) {
        if (pat && !globMatch(pat, plen, t->name, t->len, 0)) continue;
        replyBulk(c, t->name, t->len);
        n++;
    }
    htabIterRelease(&it);
    replySetDeferredArrayLen(c, node, n);
}

/* PUBSUB NUMSUB / SHARDNUMSUB: name, count pairs (a flat array, also in
 * RESP3, as Redis 7.0 answers). */
static void countTargets(Client *c, int kind) {
    replyArrayLen(c, (long)(c->argc - 2) * 2);
    for (int j = 2; j < c->argc; j++) {
        Target *t = htabFind(&targets[kind], c->argv[j], sdsLen(c->argv[j]));
        replyBulkSds(c, c->argv[j]);
        replyLongLong(c, t ? (long long)t->count : 0);
    }
}

static void pubsubChannelsCommand(Client *c) { listTargets(c, KIND_CHANNEL); }
static void pubsubShardchannelsCommand(Client *c) { listTargets(c, KIND_SHARD); }
static void pubsubNumsubCommand(Client *c) { countTargets(c, KIND_CHANNEL); }
static void pubsubShardnumsubCommand(Client *c) { countTargets(c, KIND_SHARD); }
static void pubsubNumpatCommand(Client *c) { replyLongLong(c, (long long)htabSize(&targets[KIND_PATTERN])); }

static void pubsubHelpCommand(Client *c) {
    static const char *help[] = {
        "CHANNELS [<pattern>]",
        "    Return the currently active channels matching a <pattern> (default: '*').",
        "NUMPAT",
        "    Return number of subscriptions to patterns.",
        "NUMSUB [<channel> ...]",
        "    Return the number of subscribers for the specified channels, excluding",
        "    pattern subscriptions(default: no channels).",
        "SHARDCHANNELS [<pattern>]",
        "    Return the currently active shard level channels matching a <pattern> (default: '*').",
        "SHARDNUMSUB [<shardchannel> ...]",
        "    Return the number of subscribers for the specified shard level channel(s)",
        NULL,
    };
    replyHelp(c, help);
}

/* --- client lifecycle and subscribed mode --- */

static void pubsubClientReset(Client *c) {
    if (!c->pubsubState) {
        c->flags &= ~CLIENT_PUBSUB;
        return;
    }
    for (int k = 0; k < KIND_COUNT; k++)
        unsubscribeAll(c, k, 0);
    releaseIfIdle(c);
}

static int allowedWhenSubscribed(const Command *cmd) {
    static const char *names[] = {"subscribe",    "ssubscribe", "psubscribe", "unsubscribe", "sunsubscribe",
                                  "punsubscribe", "ping",       "quit",       "reset",       NULL};
    if (cmd->parent) return 0;
    for (int i = 0; names[i]; i++)
        if (!strcmp(cmd->name, names[i])) return 1;
    return 0;
}

int pubsubRefuseInContextOrReply(Client *c, Command *cmd) {
    if (!(c->flags & CLIENT_PUBSUB) || c->resp != 2 || allowedWhenSubscribed(cmd)) return 0;
    sds err = sdsCatPrintf(sdsEmpty(),
                           "ERR Can't execute '%s': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET "
                           "are allowed in this context",
                           cmd->fullname ? cmd->fullname : cmd->name);
    dispatchRejectCommand(c, err);
    sdsFree(err);
    return -1;
}

void pubsubInit(void) {
    for (int k = 0; k < KIND_COUNT; k++)
        htabInit(&targets[k], &targetType);
    clientAddFreeHook(pubsubClientReset);
    clientAddResetHook(pubsubClientReset);
}

static Command pubsubSubcommands[] = {
    {.name = "channels", .proc = pubsubChannelsCommand},
    {.name = "help", .proc = pubsubHelpCommand},
    {.name = "numpat", .proc = pubsubNumpatCommand},
    {.name = "numsub", .proc = pubsubNumsubCommand},
    {.name = "shardchannels", .proc = pubsubShardchannelsCommand},
    {.name = "shardnumsub", .proc = pubsubShardnumsubCommand},
    {0},
};

Command pubsubCommands[] = {
    {.name = "subscribe", .proc = subscribeCommand},
    {.name = "unsubscribe", .proc = unsubscribeCommand},
    {.name = "psubscribe", .proc = psubscribeCommand},
    {.name = "punsubscribe", .proc = punsubscribeCommand},
    {.name = "publish", .proc = publishCommand},
    {.name = "ssubscribe", .proc = ssubscribeCommand},
    {.name = "sunsubscribe", .proc = sunsubscribeCommand},
    {.name = "spublish", .proc = spublishCommand},
    {.name = "pubsub", .subcommands = pubsubSubcommands},
    {0},
};
