/* t_expire.c -- key expiry commands: EXPIRE, PEXPIRE, EXPIREAT, PEXPIREAT
 * (with NX / XX / GT / LT), TTL, PTTL, EXPIRETIME, PEXPIRETIME, PERSIST.
 *
 * Expire times are absolute unix milliseconds kept in the entry (db.c).
 * "No expire" counts as an infinite TTL for GT / LT, as in Redis.  Setting
 * a time that has already passed deletes the key at once (event "del"),
 * except while loading or on a replica, where the key waits for the
 * master's DEL.  Replies and error texts are redis-server 7.0.15's.
 * Effects: a time set is PEXPIREAT key <ms> [options as sent]; a time
 * already past deletes the key, DEL key (UNLINK under lazyfree-lazy-expire). */
#include <limits.h>
#include <string.h>

#include "core/client.h"
#include "core/command.h"
#include "core/effects.h"
#include "core/errors.h"
#include "core/server.h"
#include "db/db.h"
#include "db/lazyfree.h"
#include "types/member_ttl.h"

#define EXPIRE_NX (1 << 0)
#define EXPIRE_XX (1 << 1)
#define EXPIRE_GT (1 << 2)
#define EXPIRE_LT (1 << 3)

/* The NX / XX / GT / LT options from argv[3] on, or -1 after replying. */
static int parseExpireFlagsOrReply(Client *c, int *flags) {
    *flags = 0;
    for (int j = 3; j < c->argc; j++) {
        sds a = c->argv[j];
        if (argIs(a, "nx")) *flags |= EXPIRE_NX;
        else if (argIs(a, "xx")) *flags |= EXPIRE_XX;
        else if (argIs(a, "gt")) *flags |= EXPIRE_GT;
        else if (argIs(a, "lt")) *flags |= EXPIRE_LT;
        else {
            replyErrorFormat(c, "ERR Unsupported option %s", a);
            return -1;
        }
    }
    if ((*flags & EXPIRE_NX) && (*flags & (EXPIRE_XX | EXPIRE_GT | EXPIRE_LT))) {
        replyError(c, "ERR NX and XX, GT or LT options at the same time are not compatible");
        return -1;
    }
    if ((*flags & EXPIRE_GT) && (*flags & EXPIRE_LT)) {
        replyError(c, "ERR GT and LT options at the same time are not compatible");
        return -1;
    }
    return 0;
}

/* 1 when the options allow replacing the current expire `cur` (-1: none)
 * by `when`. */
static int expireAllowed(int flags, long long cur, long long when) {
    if ((flags & EXPIRE_NX) && cur != -1) return 0;
    if ((flags & EXPIRE_XX) && cur == -1) return 0;
    if ((flags & EXPIRE_GT) && (cur == -1 || when <= cur)) return 0;
    if ((flags & EXPIRE_LT) && cur != -1 && when >= cur) return 0;
    return 1;
}

/* EXPIRE / PEXPIRE / EXPIREAT / PEXPIREAT key time [NX|XX|GT|LT ...].
 * basetime is added to the (relative) time, in ms; seconds says the
 * argument is in seconds. */
static void expireGeneric(Client *c, long long basetime, int seconds) {
    sds key = c->argv[1];
    size_t len = sdsLen(key);
    int flags;
    long long when;
    if (parseExpireFlagsOrReply(c, &flags) == -1) return;
    if (getLongLongOrReply(c, c->argv[2], &when, NULL) == -1) return;
    if (seconds) {
        if (when > LLONG_MAX / 1000 || when < LLONG_MIN / 1000) goto invalid;
        when *= 1000;
    }
    if (when > LLONG_MAX - basetime) goto invalid;
    when += basetime;

    kvobj *o = dbLookupWrite(c->db, key, len);
    if (!o || !expireAllowed(flags, kvExpire(o), when)) {
        replyLongLong(c, 0);
        return;
    }
    if (when <= serverNowMs() && !dbNoLazyExpire) {
        kvobj *gone = dbUnlink(c->db, key, len);
        if (server.cfg.lazyfreeLazyExpire) lazyfreeEntry(gone);
        else kvFree(gone);
        signalModifiedKey(c, c->db, key, len);
        notifyKeyspaceEvent(NOTIFY_GENERIC, "del", key, len, c->db->id);
        EffectArg args[2] = {server.cfg.lazyfreeLazyExpire ? EA_STR("UNLINK") : EA_STR("DEL"), EA_SDS(key)};
        effectsRewrite(2, args);
    } else {
        dbSetExpire(c->db, &o, when);
        signalModifiedKey(c, c->db, key, len);
        notifyKeyspaceEvent(NOTIFY_GENERIC, "expire", key, len, c->db->id);
        if (basetime != 0 || seconds) {
            /* PEXPIREAT key <ms> with the options as sent. */
            static const int pos[2] = {0, 2};
            EffectArg args[2] = {EA_STR("PEXPIREAT"), EA_NUM(when)};
            effectsRewriteSent(c, c->argc, 2, pos, args);
        }
    }
    serverIncrDirty(1);
    replyLongLong(c, 1);
    return;

invalid:
    replyErrorFormat(c, "ERR invalid expire time in '%s' command", c->cmd ? c->cmd->name : "expire");
}

static void expireCommand(Client *c) { expireGeneric(c, serverNowMs(), 1); }
static void pexpireCommand(Client *c) { expireGeneric(c, serverNowMs(), 0); }
static void expireatCommand(Client *c) { expireGeneric(c, 0, 1); }
static void pexpireatCommand(Client *c) { expireGeneric(c, 0, 0); }

/* TTL / PTTL / EXPIRETIME / PEXPIRETIME: -2 when the key is missing, -1
 * without an expire; seconds are rounded to the nearest. */
static void ttlGeneric(Client *c, int ms, int absolute) {
    if (c->argc != 2) { /* TTL / PTTL key member */
        memberTtlReply(c, ms);
        return;
    }
    kvobj *o = dbLookupRead(c->db, c->argv[1], sdsLen(c->argv[1]), LOOKUP_NOTOUCH);
    if (!o) {
        replyLongLong(c, -2);
        return;
    }
    long long expire = kvExpire(o);
    if (expire == -1) {
        replyLongLong(c, -1);
        return;
    }
    long long t = absolute ? expire : expire - serverNowMs();
    if (t < 0) t = 0;
    /* Rounded without computing t + 500, which overflows for an expire
     * set near LLONG_MAX (PEXPIREAT k 9223372036854775807). */
    replyLongLong(c, ms ? t : t / 1000 + (t % 1000 >= 500));
}

static void ttlCommand(Client *c) { ttlGeneric(c, 0, 0); }
static void pttlCommand(Client *c) { ttlGeneric(c, 1, 0); }
static void expiretimeCommand(Client *c) { ttlGeneric(c, 0, 1); }
static void pexpiretimeCommand(Client *c) { ttlGeneric(c, 1, 1); }

static void persistCommand(Client *c) {
    sds key = c->argv[1];
    size_t len = sdsLen(key);
    kvobj *o = dbLookupWrite(c->db, key, len);
    if (!o || !dbRemoveExpire(c->db, &o)) {
        replyLongLong(c, 0);
        return;
    }
    signalModifiedKey(c, c->db, key, len);
    notifyKeyspaceEvent(NOTIFY_GENERIC, "persist", key, len, c->db->id);
    serverIncrDirty(1);
    replyLongLong(c, 1);
}

Command expireCommands[] = {
    {.name = "expire", .proc = expireCommand},
    {.name = "pexpire", .proc = pexpireCommand},
    {.name = "expireat", .proc = expireatCommand},
    {.name = "pexpireat", .proc = pexpireatCommand},
    {.name = "ttl", .proc = ttlCommand},
    {.name = "pttl", .proc = pttlCommand},
    {.name = "expiretime", .proc = expiretimeCommand},
    {.name = "pexpiretime", .proc = pexpiretimeCommand},
    {.name = "persist", .proc = persistCommand},
    {0},
};
