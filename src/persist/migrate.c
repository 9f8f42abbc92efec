/* migrate.c -- MIGRATE: move keys to another server (Cairn or Redis) as
 * RESTORE commands carrying DUMP payloads, and delete them here once the
 * target acknowledged each one (unless COPY).
 *
 * The transfer is synchronous, as in Redis: the server waits for the target
 * (each connect, write and reply read bounded by the command's timeout).
 * Connections are cached per "host:port" (at most MIGRATE_CACHE_MAX; one
 * dropped at random when full) with the database last SELECTed there, so a
 * series of MIGRATEs reuses one socket; the timer closes those idle for
 * MIGRATE_CACHE_TTL seconds.  A cached socket the target closed is noticed
 * when writing or reading the first reply: the command reconnects once and
 * tries again (never after a timeout).
 *
 * Replies and errors are Redis 7.0's: +OK, +NOKEY when none of the keys
 * exists, "IOERR error or timeout connecting to the client", "IOERR error
 * or timeout writing/reading to target instance", "Target instance replied
 * with error: ...".  Without COPY the command propagates as DEL of the keys
 * the target accepted. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/client.h"
#include "core/command.h"
#include "core/conn.h"
#include "core/effects.h"
#include "core/server.h"
#include "db/db.h"
#include "db/lazyfree.h"
#include "ds/alloc.h"
#include "ds/rand.h"
#include "ds/util.h"
#include "persist/persist.h"
#include "persist/rdb.h"
#include "proto/resp_write.h"

#define MIGRATE_CACHE_MAX 64
#define MIGRATE_CACHE_TTL 10 /* seconds */
#define MIGRATE_CHUNK (64 * 1024)
#define MIGRATE_LINE 1024

typedef struct MigrateConn {
    sds name;           /* "host:port" as given */
    Connection *conn;
    long lastDb;        /* database SELECTed on it, -1: unknown */
    long long lastUse;  /* unix seconds */
} MigrateConn;

static MigrateConn cache[MIGRATE_CACHE_MAX];
static int cacheCount;

/* --- blocking I/O with a timeout (ms): the connection layer's helpers --- */

/* Writes len bytes; each MIGRATE_CHUNK within timeout ms.  Returns 0 or
 * -1. */
static int writeAll(Connection *conn, const char *p, size_t len, long timeout) {
    size_t off = 0;
    while (off < len) {
        size_t chunk = len - off > MIGRATE_CHUNK ? MIGRATE_CHUNK : len - off;
        if (connSyncWrite(conn, p + off, chunk, deadlineAfter(mstime(), timeout)) < 0) return -1;
        off += chunk;
    }
    return 0;
}

/* The target's replies, read in blocks: a MIGRATE of n keys waits for
 * n + 2 lines at most, all of them answers to what it just wrote (the
 * target sends nothing else), so a block never holds bytes of a later
 * command's replies.  (One read per byte, as before, cost a system call
 * per byte: 5 per key of a reshard.) */
typedef struct ReplyReader {
    size_t at, end;
    char buf[16 * 1024];
} ReplyReader;

/* One line from rd (refilled from conn), as connSyncReadLine: its bytes
 * without CRLF, cut to size - 1, NUL-terminated in out; each refill
 * within timeoutMs.  Its length, or -1 (errno ETIMEDOUT, or ECONNRESET
 * when the peer closed). */
static int readReplyLine(Connection *conn, ReplyReader *rd, char *out, size_t size, long timeoutMs) {
    long long deadline = deadlineAfter(mstime(), timeoutMs);
    size_t len = 0;
    for (;;) {
        while (rd->at < rd->end) {
            char ch = rd->buf[rd->at++];
            if (ch == '\n') {
                if (len && out[len - 1] == '\r') len--;
                out[len] = '\0';
                return (int)len;
            }
            if (len < size - 1) out[len++] = ch;
        }
        rd->at = rd->end = 0;
        long n = connRead(conn, rd->buf, sizeof(rd->buf));
        if (n > 0) {
            rd->end = (size_t)n;
        } else if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
            long long left = deadline - mstime();
            if (left <= 0) {
                errno = ETIMEDOUT;
                return -1;
            }
            if (connWait(conn, EV_READABLE, left) < 0) return -1;
        } else {
            if (n == 0) errno = ECONNRESET;
            return -1;
        }
    }
}

/* --- the connection cache --- */

static void cacheDrop(int i) {
    connClose(cache[i].conn);
    sdsFree(cache[i].name);
    cache[i] = cache[--cacheCount];
}

static int cacheFind(const char *name) {
    for (int i = 0; i < cacheCount; i++)
        if (!strcmp(cache[i].name, name)) return i;
    return -1;
}

/* The cached connection to host:port, connected now when there is none.
 * NULL after replying IOERR. */
static MigrateConn *cacheGet(Client *c, const char *host, const char *port, long timeout) {
    sds name = sdsCatPrintf(sdsEmpty(), "%s:%s", host, port);
    int i = cacheFind(name);
    if (i >= 0) {
        sdsFree(name);
        cache[i].lastUse = (long long)time(NULL);
        return &cache[i];
    }
    if (cacheCount == MIGRATE_CACHE_MAX) cacheDrop((int)(randNext() % MIGRATE_CACHE_MAX));
    Connection *conn = connConnectTimeout(connTypeForCluster(), host, port, timeout);
    if (!conn) {
        sdsFree(name);
        replyError(c, "IOERR error or timeout connecting to the client");
        return NULL;
    }
    MigrateConn *m = &cache[cacheCount++];
    m->name = name;
    m->conn = conn;
    m->lastDb = -1;
    m->lastUse = (long long)time(NULL);
    return m;
}

static void cacheClose(const char *host, const char *port) {
    sds name = sdsCatPrintf(sdsEmpty(), "%s:%s", host, port);
    int i = cacheFind(name);
    if (i >= 0) cacheDrop(i);
    sdsFree(name);
}

int migrateCachedSockets(void) { return cacheCount; }

/* Timer: close connections idle too long. */
static void migrateCron(void) {
    long long now = (long long)time(NULL);
    for (int i = 0; i < cacheCount;) {
        if (now - cache[i].lastUse > MIGRATE_CACHE_TTL) cacheDrop(i);
        else i++;
    }
}

/* --- the command --- */

typedef struct MigrateArgs {
    int copy, replace;
    sds user, password; /* AUTH / AUTH2: the client's arguments, binary */
    int firstKey, numKeys;
    long db, timeout;
} MigrateArgs;

/* Parses MIGRATE's options as Redis does.  Returns 0, or -1 after
 * replying. */
static int migrateArgsOrReply(Client *c, MigrateArgs *a) {
    memset(a, 0, sizeof(*a));
    a->firstKey = 3;
    a->numKeys = 1;
    for (int j = 6; j < c->argc; j++) {
        int more = c->argc - 1 - j;
        if (argIs(c->argv[j], "copy")) {
            a->copy = 1;
        } else if (argIs(c->argv[j], "replace")) {
            a->replace = 1;
        } else if (argIs(c->argv[j], "auth")) {
            if (more < 1) {
                replyErrorSyntax(c);
                return -1;
            }
            a->password = c->argv[++j];
        } else if (argIs(c->argv[j], "auth2")) {
            if (more < 2) {
                replyErrorSyntax(c);
                return -1;
            }
            a->user = c->argv[++j];
            a->password = c->argv[++j];
        } else if (argIs(c->argv[j], "keys")) {
            if (sdsLen(c->argv[3]) != 0) {
                replyError(c, "ERR When using MIGRATE KEYS option, the key argument must be set to the empty string");
                return -1;
            }
            a->firstKey = j + 1;
            a->numKeys = c->argc - j - 1;
            break;
        } else {
            replyErrorSyntax(c);
            return -1;
        }
    }
    if (getLongOrReply(c, c->argv[5], &a->timeout, NULL) < 0) return -1;
    if (getLongOrReply(c, c->argv[4], &a->db, NULL) < 0) return -1;
    if (a->timeout <= 0) a->timeout = 1000;
    return 0;
}

/* Deletes a migrated key here, as DEL would (lazyfree-lazy-server-del). */
static void deleteMigrated(Client *c, sds key) {
    kvobj *old = dbUnlink(c->db, key, sdsLen(key));
    if (!old) return;
    if (server.cfg.lazyfreeLazyServerDel) lazyfreeEntry(old);
    else kvFree(old);
    signalModifiedKey(c, c->db, key, sdsLen(key));
    notifyKeyspaceEvent(NOTIFY_GENERIC, "del", key, sdsLen(key), c->db->id);
    serverIncrDirty(1);
}

static void migrateCommand(Client *c) {
    MigrateArgs a;
    if (migrateArgsOrReply(c, &a) < 0) return;
    /* The keys that exist (their names; values are found again below). */
    sds *keys = xmalloc(sizeof(sds) * (size_t)(a.numKeys ? a.numKeys : 1));
    int n = 0;
    for (int j = 0; j < a.numKeys; j++) {
        sds k = c->argv[a.firstKey + j];
        if (dbLookupRead(c->db, k, sdsLen(k), LOOKUP_NONE)) keys[n++] = k;
    }
    if (n == 0) {
        xfree(keys);
        replyStatus(c, "NOKEY");
        return;
    }
    const char *host = c->argv[1], *port = c->argv[2];
    int mayRetry = 1;
    EffectArg *del = NULL;
    int ndel;
try_again:;
    int writeError = 0;
    ndel = 1;
    MigrateConn *m = cacheGet(c, host, port, a.timeout);
    if (!m) {
        xfree(keys);
        return;
    }
    sds out = sdsEmpty();
    if (a.password) {
        const char *auth[3] = {"AUTH"};
        size_t lens[3] = {4};
        int na = 1;
        if (a.user) {
            auth[na] = a.user;
            lens[na++] = sdsLen(a.user);
        }
        auth[na] = a.password;
        lens[na++] = sdsLen(a.password); /* whole, NUL bytes included */
        out = respCatCommandLen(out, na, auth, lens);
    }
    int select = m->lastDb != a.db;
    if (select) {
        out = respCatHeader(out, '*', 2);
        out = respCatBulk(out, "SELECT", 6);
        out = respCatBulkLongLong(out, a.db);
    }
    /* Keys that expired since the lookup are left out. */
    int live = 0;
    for (int j = 0; j < n; j++) {
        kvobj *o = dbFind(c->db, keys[j], sdsLen(keys[j]));
        if (!o) continue;
        long long ttl = 0, when = kvExpire(o);
        if (when != -1) {
            ttl = when - serverNowMs();
            if (ttl < 0) continue;
            if (ttl < 1) ttl = 1;
        }
        keys[live++] = keys[j];
        sds payload = rdbDumpValue(o);
        char ttlText[UTIL_LONG_STR_SIZE];
        /* In cluster mode RESTORE-ASKING, as Redis: the target may be
         * importing the slot. */
        const char *verb = dbSlotsOn() ? "RESTORE-ASKING" : "RESTORE";
        const char *restore[5] = {verb, keys[j], ttlText, payload, "REPLACE"};
        size_t lens[5] = {strlen(verb), sdsLen(keys[j]), (size_t)longLongToString(ttlText, sizeof(ttlText), ttl),
                          sdsLen(payload), 7};
        out = respCatCommandLen(out, a.replace ? 5 : 4, restore, lens);
        sdsFree(payload);
    }
    n = live;
    errno = 0;
    if (writeAll(m->conn, out, sdsLen(out), a.timeout) < 0) {
        writeError = 1;
        sdsFree(out);
        goto socket_err;
    }
    sdsFree(out);
    char authReply[MIGRATE_LINE], selectReply[MIGRATE_LINE], reply[MIGRATE_LINE];
    static ReplyReader rd;
    rd.at = rd.end = 0;
    if (a.password && readReplyLine(m->conn, &rd, authReply, MIGRATE_LINE, a.timeout) < 0) goto socket_err;
    if (select && readReplyLine(m->conn, &rd, selectReply, MIGRATE_LINE, a.timeout) < 0) goto socket_err;
    int targetError = 0, socketError = 0, j;
    if (!a.copy) del = xmalloc(sizeof(EffectArg) * (size_t)(n + 1));
    for (j = 0; j < n; j++) {
        if (readReplyLine(m->conn, &rd, reply, MIGRATE_LINE, a.timeout) < 0) {
            socketError = 1;
            break;
        }
        const char *err = a.password && authReply[0] == '-' ? authReply
                          : select && selectReply[0] == '-' ? selectReply
                          : reply[0] == '-'                 ? reply
                                                            : NULL;
        if (err) {
            if (!targetError) {
                m->lastDb = -1;
                targetError = 1;
                replyErrorFormat(c, "ERR Target instance replied with error: %s", err + 1);
            }
        } else if (!a.copy) {
            deleteMigrated(c, keys[j]);
            del[ndel++] = EA_SDS(keys[j]);
        }
    }
    /* Nothing was answered on a connection found closed: reconnect once. */
    if (!targetError && socketError && j == 0 && mayRetry && errno != ETIMEDOUT) goto socket_err;
    if (socketError) cacheClose(host, port);
    if (!a.copy && ndel > 1) {
        del[0] = EA_STR("DEL");
        effectsRewrite(ndel, del);
    }
    xfree(del);
    del = NULL;
    if (!targetError && socketError) {
        mayRetry = 0;
        goto socket_err;
    }
    if (!targetError) {
        /* m may have been dropped only on a socket error, handled above. */
        m->lastDb = a.db;
        replyOk(c);
    }
    xfree(keys);
    return;

socket_err:
    xfree(del);
    del = NULL;
    cacheClose(host, port);
    if (errno != ETIMEDOUT && mayRetry) {
        mayRetry = 0;
        goto try_again;
    }
    xfree(keys);
    replyErrorFormat(c, "IOERR error or timeout %s to target instance", writeError ? "writing" : "reading");
}

void migrateInit(void) { serverAddCronHook(migrateCron); }

Command migrateCommands[] = {
    {.name = "migrate", .proc = migrateCommand},
    {0},
};
