/* replica.c -- the replica side: REPLICAOF, the link to the primary (a
 * non-blocking connect, the handshake, PSYNC), the RDB of a full sync
 * (received into temp-<time>.<pid>.rdb, then renamed over dbfilename and
 * loaded), and the primary's client.
 *
 * The primary's client is a Client flagged CLIENT_MASTER with replies off,
 * read by its own handler: its query buffer keeps every byte from the
 * start of the first command not yet applied, so that after each command
 * (outside MULTI: after EXEC) exactly the bytes applied are forwarded to
 * our backlog and replicas and counted in our offset.  While it runs a
 * command, dbIgnoreExpire makes keys that expired on our clock still exist
 * for it: only the primary's DEL removes them. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "core/conn.h"
#include "core/dispatch.h"
#include "core/log.h"
#include "core/net.h"
#include "core/server.h"
#include "ds/alloc.h"
#include "ds/crc64.h"
#include "ds/util.h"
#include "persist/aof.h"
#include "persist/persist.h"
#include "persist/rdb.h"
#include "proto/resp_write.h"
#include "repl/repl.h"
#include "repl/repl_int.h"
#include "script/function.h"
#include "types/blocking.h"

#define READ_CHUNK (16 * 1024)

static void linkReadable(EventLoop *loop, int fd, void *data, int mask);

const char *replicaLinkName(void) {
    switch (repl.link) {
    case LINK_CONNECT: return "connect";
    case LINK_CONNECTING: return "connecting";
    case LINK_TRANSFER: return "sync";
    case LINK_CONNECTED: return "connected";
    case LINK_NONE: return "none";
    default: return "handshake";
    }
}

/* --- the link before it carries the stream --- */

static void closeXfer(void) {
    if (repl.xferFd != -1) {
        close(repl.xferFd);
        repl.xferFd = -1;
        unlink(repl.xferTmp);
    }
    repl.xferMem = 0;
}

/* Drop the handshake or transfer in progress (not the connected client). */
static void cancelLink(void) {
    if (repl.conn) {
        connClose(repl.conn); /* unregisters its events too */
        repl.conn = NULL;
    }
    closeXfer();
    sdsClear(repl.rbuf);
    if (repl.link != LINK_NONE && repl.link != LINK_CONNECTED) repl.link = LINK_CONNECT;
}

static void linkFailed(const char *why) {
    serverLog(LL_WARNING, "%s", why);
    cancelLink();
    repl.nextConnectMs = server.time.nowMs + 1000;
    if (failoverState() == FAILOVER_IN_PROGRESS) failoverAbort("the link to the failover target failed");
}

static int sendCommand(Connection *conn, int argc, const char **argv) {
    sds s = respCatCommandLen(sdsEmpty(), argc, argv, NULL);
    long n = connWrite(conn, s, sdsLen(s));
    int ok = n == (ssize_t)sdsLen(s);
    sdsFree(s);
    return ok ? 0 : -1;
}

static void connectToPrimary(void) {
    /* bind-source-addr: the link leaves from that address, as Redis's does
     * (best effort: when it cannot be bound the link goes from any). */
    const char *err = NULL;
    char port[16];
    snprintf(port, sizeof(port), "%d", repl.masterPort);
    Connection *conn = connConnect(connTypeForReplication(), repl.masterHost, port, server.cfg.bindSourceAddr, &err);
    if (!conn) {
        serverLog(LL_WARNING, "Unable to connect to MASTER: %s", err);
        repl.nextConnectMs = server.time.nowMs + 1000;
        return;
    }
    repl.conn = conn;
    repl.link = LINK_CONNECTING;
    repl.lastIoMs = server.time.nowMs;
    connEventAdd(conn, EV_WRITABLE, linkReadable, NULL);
    serverLog(LL_NOTICE, "MASTER <-> REPLICA sync started");
}

/* The next line of rbuf (without CRLF) into line; 0 when none yet. */
static int takeLine(sds *line) {
    char *nl = memchr(repl.rbuf, '\n', sdsLen(repl.rbuf));
    if (!nl) return 0;
    size_t len = (size_t)(nl - repl.rbuf);
    *line = sdsNewLen(repl.rbuf, len && nl[-1] == '\r' ? len - 1 : len);
    size_t left = sdsLen(repl.rbuf) - len - 1;
    memmove(repl.rbuf, nl + 1, left);
    sdsSetLen(repl.rbuf, left);
    return 1;
}

static void sendHandshake(void) {
    Connection *conn = repl.conn;
    int rc = 0;
    if (server.cfg.masterauth) {
        /* masterauth is binary (an sds that may hold NUL bytes): sent whole. */
        const sds pass = server.cfg.masterauth;
        const char *auth[3] = {"AUTH"};
        size_t lens[3] = {4};
        int na = 1;
        if (server.cfg.masteruser) {
            auth[na] = server.cfg.masteruser;
            lens[na++] = strlen(server.cfg.masteruser);
        }
        auth[na] = pass;
        lens[na++] = sdsLen(pass);
        sds s = respCatCommandLen(sdsEmpty(), na, auth, lens);
        if (connWrite(conn, s, sdsLen(s)) != (long)sdsLen(s)) rc = -1;
        sdsFree(s);
    }
    char port[16];
    /* Over TLS the port a replica announces is its TLS one, as Redis's. */
    int listening = connTypeForReplication() == &connTlsType && tlsPort() ? tlsPort() : server.cfg.port;
    snprintf(port, sizeof(port), "%d", server.cfg.replicaAnnouncePort ? server.cfg.replicaAnnouncePort : listening);
    const char *p[3] = {"REPLCONF", "listening-port", port};
    rc |= sendCommand(conn, 3, p);
    if (server.cfg.replicaAnnounceIp) {
        const char *ip[3] = {"REPLCONF", "ip-address", server.cfg.replicaAnnounceIp};
        rc |= sendCommand(conn, 3, ip);
    }
    const char *capa[5] = {"REPLCONF", "capa", "eof", "capa", "psync2"};
    rc |= sendCommand(conn, 5, capa);
    if (rc) linkFailed("Error writing to MASTER during the handshake");
    else repl.link = server.cfg.masterauth ? LINK_RECV_AUTH : LINK_RECV_PORT;
}

static void sendPsync(void) {
    char off[32];
    const char *id = "?";
    if (repl.haveCached) {
        id = repl.replid;
        snprintf(off, sizeof(off), "%lld", repl.offset + 1);
        serverLog(LL_NOTICE, "Trying a partial resynchronization (request %s:%s).", id, off);
    } else {
        strcpy(off, "-1");
        serverLog(LL_NOTICE, "Partial resynchronization not possible (no cached master)");
    }
    /* During our FAILOVER the target promotes itself on this PSYNC. */
    const char *a[4] = {"PSYNC", id, off, "FAILOVER"};
    if (sendCommand(repl.conn, failoverState() == FAILOVER_IN_PROGRESS ? 4 : 3, a))
        linkFailed("Error writing PSYNC to MASTER");
    else repl.link = LINK_RECV_PSYNC;
}

/* --- the stream --- */

static void masterReadable(EventLoop *loop, int fd, void *data, int mask);

/* The module layer's ReplicationRoleChanged event (its data: the state
 * after the change, as Redis gives it). */
static void fireRoleChanged(int nowReplica) {
    ServerReplInfo ri = {!nowReplica, repl.masterHost ? repl.masterHost : "", repl.masterPort, repl.replid,
                         repl.replid2, repl.offset, repl.secondOffset};
    serverFireEvent(SERVER_EVENT_ROLE_CHANGED, nowReplica, &ri, 0, 0);
}

/* Our offset is the stream applied: the backlog exists from here on. */
static void becomeConnected(Connection *conn, int dbid) {
    connEventDel(conn, EV_READABLE | EV_WRITABLE);
    Client *c = clientCreate(conn);
    c->flags |= CLIENT_MASTER | CLIENT_REPLY_OFF;
    c->authenticated = 1;
    snprintf(c->addr, sizeof(c->addr), "%s:%d", repl.masterHost, repl.masterPort);
    clientSelectDb(c, dbid >= 0 && dbid < server.cfg.databases ? dbid : 0);
    repl.master = c;
    repl.conn = NULL; /* the client owns it now */
    repl.link = LINK_CONNECTED;
    repl.haveCached = 0;
    replBacklogCreate();
    connEventAdd(conn, EV_READABLE, masterReadable, c);
    /* Bytes that came with the last handshake read are the stream's. */
    if (sdsLen(repl.rbuf)) {
        c->querybuf = sdsCatLen(c->querybuf, repl.rbuf, sdsLen(repl.rbuf));
        sdsClear(repl.rbuf);
        serverFireEvent(SERVER_EVENT_MASTER_LINK, 0, NULL, 0, 0); /* up */
        masterReadable(server.loop, connFd(conn), c, 0);
        return;
    }
    serverFireEvent(SERVER_EVENT_MASTER_LINK, 0, NULL, 0, 0); /* up */
}

/* Apply every complete command in the primary's buffer. */
/* Run the primary's command parsed into c->argv.  A CLIENT PAUSE on this
 * replica may postpone it (CLIENT_BLOCKED, argv kept): the stream stops
 * there until replicaResumeMaster, as in Redis. */
/* While the primary's command runs, its client's replies go to this sink,
 * which drops them but reports each error: a replica answering its
 * primary with an error has diverged (Redis's "== CRITICAL ==" line, and
 * propagation-error-behavior). */
typedef struct ErrorSink {
    ReplySink base;
    Client *c;
} ErrorSink;

static void esNone(ReplySink *s) { (void)s; }
static void esStatus(ReplySink *s, const char *p, size_t len) { (void)p, (void)len, esNone(s); }
static void esInteger(ReplySink *s, long long v) { (void)v, esNone(s); }
static void esDouble(ReplySink *s, double d) { (void)d, esNone(s); }
static void esNull(ReplySink *s, ReplyNullKind k) { (void)k, esNone(s); }
static void esBool(ReplySink *s, int b) { (void)b, esNone(s); }
static void esVerbatim(ReplySink *s, const char *p, size_t len, const char *ext) { (void)p, (void)len, (void)ext, esNone(s); }
static void esAggregate(ReplySink *s, ReplyAggregate k, long n) { (void)k, (void)n, esNone(s); }
static void *esDeferred(ReplySink *s) { return s; }
static void esSetDeferred(ReplySink *s, void *node, ReplyAggregate k, long n) { (void)node, (void)k, (void)n, esNone(s); }

/* The last bytes (up to 256) of our backlog, as Redis logs them. */
static void logLatestBacklog(void) {
    if (!repl.backlogOn || repl.histlen == 0 || !repl.bufTail) return;
    long long want = repl.histlen < 256 ? repl.histlen : 256;
    sds dump = sdsEmpty();
    long long from = repl.offset + 1 - want;
    for (ReplBlock *b = repl.bufHead; b; b = b->next) {
        long long end = b->off + (long long)b->used;
        if (end <= from) continue;
        long long start = from > b->off ? from - b->off : 0;
        dump = sdsCatLen(dump, b->buf + start, (size_t)((long long)b->used - start));
    }
    sds shown = sdsCatRepr(sdsEmpty(), dump, sdsLen(dump));
    serverLog(LL_WARNING, "Latest backlog is: '%s'", shown);
    sdsFree(shown);
    sdsFree(dump);
}

static void esError(ReplySink *s, const char *p, size_t len) {
    Client *c = ((ErrorSink *)s)->c;
    const char *cmd = c->cmd ? (c->cmd->fullname ? c->cmd->fullname : c->cmd->name) : "<unknown>";
    if (len > 4096) len = 4096;
    serverLog(LL_WARNING,
              "== CRITICAL == This replica is sending an error to its master: '-%.*s' after processing the command '%s'",
              (int)len, p, cmd);
    logLatestBacklog();
    server.stats.unexpectedErrorReplies++;
    /* panic and panic-on-replicas stop a read-only replica here rather
     * than let it go on diverged. */
    if (server.cfg.replicaReadOnly && server.cfg.propagationErrorBehavior != 0) {
        serverLog(LL_WARNING, "------------------------------------------------");
        serverLog(LL_WARNING, "!!! Software Failure. Press left mouse button to continue");
        serverLog(LL_WARNING, "Guru Meditation: This replica panicked sending an error to its master after processing the command '%s' #%s:%d",
                  cmd, __FILE__, __LINE__);
        abort();
    }
}

static const ReplySinkType errorSinkType = {
    .name = "primary-errors", .status = esStatus, .error = esError, .integer = esInteger, .dbl = esDouble,
    .bulk = esStatus, .null = esNull, .boolean = esBool, .bigNumber = esStatus, .verbatim = esVerbatim,
    .aggregate = esAggregate, .deferred = esDeferred, .setDeferred = esSetDeferred, .raw = NULL};

static void applyParsed(Client *c) {
    ErrorSink es = {{&errorSinkType}, c};
    ReplySink *savedSink = c->sink;
    repl.applying = 1;
    dbIgnoreExpire = 1;
    unsigned replyOff = c->flags & CLIENT_REPLY_OFF;
    c->sink = &es.base;
    c->flags = (c->flags & ~CLIENT_REPLY_OFF) | CLIENT_REPLY_SINK;
    dispatchCommand(c);
    c->flags = (c->flags & ~CLIENT_REPLY_SINK) | replyOff;
    c->sink = savedSink;
    dbIgnoreExpire = 0;
    repl.applying = 0;
    if (!(c->flags & CLIENT_BLOCKED)) clientResetArgv(c);
}

/* Drop the first `start` bytes of the query buffer (forwarded). */
static void dropApplied(Client *c, size_t start) {
    if (!start) return;
    size_t left = sdsLen(c->querybuf) - start;
    memmove(c->querybuf, c->querybuf + start, left);
    sdsSetLen(c->querybuf, left);
    c->qbPos -= start;
}

static void applyInput(Client *c) {
    size_t start = 0; /* first byte not applied */
    ProtoLimits lim = {server.cfg.protoMaxBulkLen, 0};
    c->flags |= CLIENT_PROTECTED;
    while (!(c->flags & (CLIENT_CLOSE_ASAP | CLIENT_BLOCKED))) {
        ProtoCommand cmd;
        ProtoStatus st = c->proto->next(c->protoState, c->querybuf + c->qbPos, sdsLen(c->querybuf) - c->qbPos, &lim,
                                        &cmd);
        c->qbPos += cmd.consumed;
        if (st == PROTO_INCOMPLETE) break;
        if (st == PROTO_ERROR) {
            serverLog(LL_WARNING, "Protocol error (%s) from MASTER, closing the link", cmd.err);
            clientFreeAsync(c);
            break;
        }
        if (cmd.argc > 0) {
            c->argv = cmd.argv;
            c->argc = cmd.argc;
            c->argvBytes = cmd.argvBytes;
            applyParsed(c);
            if (c->flags & CLIENT_BLOCKED) break; /* postponed: not applied yet */
        }
        if (!(c->flags & CLIENT_MULTI)) {
            replFeedStream(c->querybuf + start, c->qbPos - start);
            start = c->qbPos;
        }
    }
    c->flags &= ~CLIENT_PROTECTED;
    dropApplied(c, start);
}

void replicaResumeMaster(Client *c) {
    c->flags &= ~CLIENT_BLOCKED;
    if (c->flags & CLIENT_CLOSE_ASAP) return;
    if (c->argc > 0) {
        c->flags |= CLIENT_PROTECTED;
        applyParsed(c);
        c->flags &= ~CLIENT_PROTECTED;
        if (c->flags & CLIENT_BLOCKED) return; /* postponed again */
    }
    /* The buffer starts with the bytes not forwarded yet: this command's
     * (and, inside MULTI, those queued before it). */
    if (!(c->flags & CLIENT_MULTI)) {
        replFeedStream(c->querybuf, c->qbPos);
        dropApplied(c, c->qbPos);
    }
    applyInput(c);
}

static void masterReadable(EventLoop *loop, int fd, void *data, int mask) {
    (void)loop, (void)fd;
    Client *c = data;
    if (c->flags & (CLIENT_EXECUTING | CLIENT_CLOSE_ASAP)) return;
    if (mask) {
        c->querybuf = sdsMakeRoomFor(c->querybuf, READ_CHUNK);
        long n = connRead(c->conn, c->querybuf + sdsLen(c->querybuf), READ_CHUNK);
        if (n < 0 && (errno == EAGAIN || errno == EINTR)) return;
        if (n <= 0) {
            serverLog(LL_NOTICE, "Connection with master lost.");
            clientFree(c);
            return;
        }
        sdsIncrLen(c->querybuf, n);
        server.stats.netInputBytes += n;
        c->lastInteraction = server.time.nowMs;
    }
    applyInput(c);
}

/* REPLCONF ACK <offset>, and with the AOF on FACK <offset> (Redis 7.2):
 * the offset up to which what was applied is fsynced to the AOF (the
 * current one when nothing fed to the AOF awaits its fsync, else the last
 * one sent so).  A Redis 7.0 primary reads the ACK and ignores the rest. */
void replicaSendAck(void) {
    Client *c = repl.master;
    if (!c) return;
    static long long fackOff;
    char off[UTIL_LONG_STR_SIZE], foff[UTIL_LONG_STR_SIZE];
    const char *ack[5] = {"REPLCONF", "ACK", off, "FACK", foff};
    size_t lens[5] = {8, 3, (size_t)longLongToString(off, sizeof(off), repl.offset), 4, 0};
    int argc = 3;
    if (aofOn()) {
        if (aofSyncedBytes() >= aofFedBytes()) fackOff = repl.offset;
        lens[4] = (size_t)longLongToString(foff, sizeof(foff), fackOff);
        argc = 5;
    }
    sds buf = respCatCommandLen(sdsEmpty(), argc, ack, lens);
    unsigned saved = c->flags & (CLIENT_REPLY_OFF | CLIENT_REPLY_SINK);
    c->flags &= ~(CLIENT_REPLY_OFF | CLIENT_REPLY_SINK);
    replyRaw(c, buf, sdsLen(buf));
    c->flags |= saved;
    sdsFree(buf);
}

/* --- full sync --- */

static void emptyData(void) {
    replicaKeysForget();
    serverFireEvent(SERVER_EVENT_FLUSHDB, 0, NULL, -1, !server.cfg.replicaLazyFlush);
    signalFlushedDb(-1);
    for (int j = 0; j < server.cfg.databases; j++) {
        if (server.cfg.replicaLazyFlush) dbEmptyAsync(&server.db[j]);
        else dbEmpty(&server.db[j]);
    }
    functionsRdbFlush();
    serverFireEvent(SERVER_EVENT_FLUSHDB, 1, NULL, -1, !server.cfg.replicaLazyFlush);
}

/* While the RDB loads, a newline to the primary each second tells it
 * we are alive (it counts as an ACK). */
static void loadKeepAlive(void) {
    if (repl.conn && connWrite(repl.conn, "\n", 1) == 1) server.stats.netOutputBytes++;
}

/* repl-diskless-load: the RDB goes to memory and is parsed from there
 * (never to disk) with swapdb, or with on-empty-db when we hold no key,
 * when the loaded modules allow it. */
static int useDisklessLoad(void) {
    int swap = server.cfg.replDisklessLoad == DISKLESS_LOAD_SWAPDB;
    if (!swap) {
        if (server.cfg.replDisklessLoad != DISKLESS_LOAD_ON_EMPTY_DB) return 0;
        for (int j = 0; j < server.cfg.databases; j++)
            if (dbSize(&server.db[j])) return 0;
    }
    /* Loaded modules may forbid it (Redis's conditions, module layer). */
    return !serverDisklessLoadCheck || serverDisklessLoadCheck(swap);
}

/* The function libraries as an RDB holding only them (swapdb keeps the
 * old ones to give back if the new ones cannot be loaded). */
static sds functionsSnapshot(void) {
    sds f = sdsCatPrintf(sdsEmpty(), "REDIS%04d", RDB_VERSION);
    f = functionsRdbAppend(f, 0);
    f = sdsCatLen(f, "\xff", 1);
    uint64_t crc = crc64(0, f, sdsLen(f));
    unsigned char le[8];
    for (int i = 0; i < 8; i++) le[i] = (unsigned char)(crc >> (8 * i));
    return sdsCatLen(f, (const char *)le, 8);
}

static void functionsRestore(sds snap) {
    functionsRdbFlush();
    RdbLoadInfo info;
    size_t used;
    sds err = NULL;
    if (rdbLoadBuffer((const unsigned char *)snap, sdsLen(snap), 0, &info, &used, &err) < 0) {
        serverLog(LL_WARNING, "Failed restoring the function libraries: %s", err);
        sdsFree(err);
    }
}

/* Drops databases filled aside (their memory is freed in the background
 * as replica-lazy-flush would). */
static void dropTempDbs(Db *dbs) {
    for (int j = 0; j < server.cfg.databases; j++) dbEmptyAsync(&dbs[j]);
    dbFreeAll(dbs, server.cfg.databases);
}

/* The sync's RDB is our data now: take the primary's history and start
 * applying its stream. */
static void syncSucceeded(Connection *conn, const RdbLoadInfo *info) {
    aofRestartAfterSync(); /* the AOF must describe the new data */
    memcpy(repl.replid, repl.pendingReplid, 41);
    repl.offset = repl.pendingOffset;
    memset(repl.replid2, '0', 40);
    repl.secondOffset = -1;
    repl.haveCached = 0;
    serverLog(LL_NOTICE, "MASTER <-> REPLICA sync: Finished with success");
    int eofMarked = repl.xferSize == -1;
    becomeConnected(conn, info->hasRepl ? info->repl.streamDb : 0);
    /* The primary holds the stream until this first ACK (diskless). */
    if (eofMarked && repl.master) replicaSendAck();
}

/* The RDB is in the temporary file: it becomes our data. */
static void loadTransfer(void) {
    Connection *conn = repl.conn;
    if (fsync(repl.xferFd) == -1) serverLog(LL_WARNING, "Failed trying to sync the temp DB to disk: %s", strerror(errno));
    close(repl.xferFd);
    repl.xferFd = -1;
    serverLog(LL_NOTICE, "MASTER <-> REPLICA sync: Flushing old data");
    /* Our replicas must sync again: our history just changed. */
    replDisconnectReplicas();
    replBacklogFree();
    emptyData();
    if (rename(repl.xferTmp, server.cfg.dbfilename) == -1) {
        serverLog(LL_WARNING, "Failed trying to rename the temp DB into %s in MASTER <-> REPLICA synchronization: %s",
                  server.cfg.dbfilename, strerror(errno));
        unlink(repl.xferTmp);
        cancelLink();
        return;
    }
    serverLog(LL_NOTICE, "MASTER <-> REPLICA sync: Loading DB in memory");
    /* Clients get -LOADING while the loop turns; the primary's stream
     * waits in the socket until the load ends. */
    connEventDel(conn, EV_READABLE);
    RdbLoadInfo info;
    sds err = NULL;
    int rc = persistLoadForSync(server.cfg.dbfilename, NULL, 0, loadKeepAlive, &info, &err);
    if (rc != 0) {
        serverLog(LL_WARNING, "Failed trying to load the MASTER synchronization DB from disk: %s", err ? err : "");
        sdsFree(err);
        emptyData();
        repl.haveCached = 0;
        cancelLink();
        repl.nextConnectMs = server.time.nowMs + 1000;
        return;
    }
    persistRemoveSyncFile("Removing the RDB file obtained from the master. This replica has persistence disabled");
    syncSucceeded(conn, &info);
}

/* --- diskless load: the RDB parsed as it comes from the socket --- */

#define LOAD_READ (256 * 1024)
#define LOAD_POLL_MS 10

/* Reads what the link has into rbuf, waiting at most LOAD_POLL_MS.
 * Returns 1 (bytes came), 0 (none yet) or -1 (the link is lost). */
static int loadRead(Connection *conn) {
    if (connWait(conn, EV_READABLE, LOAD_POLL_MS) == 0) return 0;
    /* Room for a read; a big record in flight doubles the buffer, so
     * growing it costs O(the record). */
    size_t len = sdsLen(repl.rbuf);
    if (sdsAvail(repl.rbuf) < LOAD_READ) repl.rbuf = sdsMakeRoomForNonGreedy(repl.rbuf, len > LOAD_READ ? len : LOAD_READ);
    long n = connRead(conn, repl.rbuf + len, LOAD_READ);
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) return 0;
    if (n <= 0) return -1;
    sdsIncrLen(repl.rbuf, n);
    server.stats.netInputBytes += n;
    repl.lastIoMs = mstime();
    return 1;
}

static void dropRbuf(size_t n) {
    if (!n) return; /* a record in flight stays where it is */
    size_t left = sdsLen(repl.rbuf) - n;
    memmove(repl.rbuf, repl.rbuf + n, left);
    sdsSetLen(repl.rbuf, left);
    /* The room a big record took goes back once it is parsed. */
    if (sdsAvail(repl.rbuf) > 16 * LOAD_READ && left < LOAD_READ) repl.rbuf = sdsResize(repl.rbuf, 2 * LOAD_READ);
}

/* Parses the RDB as it arrives (rbuf holds only the bytes of the record
 * in flight), into server.db (on-empty-db, flushed first) or, with
 * swapdb, into databases aside that replace ours when it ends well.
 * Clients get -LOADING meanwhile, or, when the primary continues our own
 * history (same replication id), keep reading the old data
 * (async_loading).  The loop turns every loading-process-events-interval-
 * bytes and whenever the link is quiet for LOAD_POLL_MS; a newline a
 * second keeps the primary from timing us out.  Returns when it ended:
 * connected, or the link reset to retry. */
static void disklessLoad(void) {
    Connection *conn = repl.conn;
    int swap = server.cfg.replDisklessLoad == DISKLESS_LOAD_SWAPDB;
    int async = swap && !memcmp(repl.replid, repl.pendingReplid, 40);
    int eofMark = repl.xferSize == -1;
    connEventDel(conn, EV_READABLE);
    Db *temp = NULL;
    if (swap) {
        temp = dbCreateAll(server.cfg.databases);
        /* Redis fires it for every swapdb load, async or not. */
        serverFireEvent(SERVER_EVENT_REPL_ASYNC_LOAD, 0, NULL, 0, 0); /* STARTED */
    } else {
        serverLog(LL_NOTICE, "MASTER <-> REPLICA sync: Flushing old data");
        /* Our replicas must sync again: our history just changed. */
        replDisconnectReplicas();
        replBacklogFree();
        emptyData();
    }
    serverLog(LL_NOTICE, "MASTER <-> REPLICA sync: Loading DB in memory");
    RdbStream *st = rdbStreamNew(temp, swap);
    persistSyncLoadBegin(async, loadKeepAlive);
    size_t total = repl.xferSize > 0 ? (size_t)repl.xferSize : 0;
    size_t interval = (size_t)server.cfg.loadingProcessEventsIntervalBytes;
    size_t reported = 0;
    long long reportedMs = mstime(), timeoutMs = (long long)server.cfg.replTimeout * 1000;
    sds err = NULL;
    const char *lost = NULL;
    int done = 0;
    size_t quietTried = 0; /* rbuf's length at the last retry when quiet */
    repl.xferRead = 0;
    persistSyncLoadProgress(rdbStreamInfo(st), 0, total);
    for (;;) {
        if (repl.conn != conn || repl.link != LINK_TRANSFER) {
            lost = "the link was reset during the load";
            break;
        }
        size_t have = sdsLen(repl.rbuf), offer = have;
        int final = 0;
        if (!eofMark) {
            size_t left = (size_t)(repl.xferSize - repl.xferRead);
            if (offer >= left) {
                offer = left;
                final = 1;
            }
        } else if (have >= 40 && !memcmp(repl.rbuf + have - 40, repl.xferMark, 40)) {
            /* The stream ended: what precedes the mark is all there is. */
            offer = have - 40;
            final = 1;
        }
        long long used = rdbStreamFeed(st, (const unsigned char *)repl.rbuf, offer, final, &done, &err);
        if (used < 0) break;
        dropRbuf((size_t)used);
        repl.xferRead += used;
        if (done == 1) break;
        long long now = mstime();
        if (done == 2 || (size_t)repl.xferRead - reported >= interval || now - reportedMs >= LOAD_POLL_MS) {
            persistSyncLoadProgress(rdbStreamInfo(st), (size_t)repl.xferRead, total);
            reported = (size_t)repl.xferRead;
            reportedMs = mstime();
            continue; /* the link may have changed meanwhile */
        }
        int rr = loadRead(conn);
        if (rr < 0) {
            lost = "I/O error trying to sync with MASTER: connection lost";
            break;
        }
        if (rr == 0 && sdsLen(repl.rbuf) != quietTried) {
            /* The primary went quiet: parse what came, whatever its size. */
            quietTried = sdsLen(repl.rbuf);
            rdbStreamRetry(st);
        }
        if (rr == 0 && mstime() - repl.lastIoMs > timeoutMs) {
            lost = "Timeout receiving bulk data from MASTER... If the problem persists try to set the 'repl-timeout' parameter in redis.conf to a larger value.";
            break;
        }
    }
    done = done == 1;
    /* After the RDB: the EOF mark, or nothing more of the announced size. */
    while (done && !lost && eofMark && sdsLen(repl.rbuf) < 40) {
        int rr = loadRead(conn);
        if (rr < 0) lost = "I/O error trying to sync with MASTER: connection lost";
        else if (rr == 0 && mstime() - repl.lastIoMs > timeoutMs) lost = "Timeout receiving the EOF mark from MASTER";
    }
    if (done && !lost && eofMark) {
        if (memcmp(repl.rbuf, repl.xferMark, 40) != 0) err = sdsNew("Replication stream EOF marker is broken");
        else dropRbuf(40);
    } else if (done && !lost && repl.xferRead != repl.xferSize) {
        err = sdsNew("the RDB ended before the size the master announced");
    }
    RdbLoadInfo info = *rdbStreamInfo(st);
    int ok = done && !lost && !err;
    persistSyncLoadEnd(&info, ok);
    sds oldFunctions = NULL;
    if (ok && swap) {
        oldFunctions = functionsSnapshot();
        functionsRdbFlush();
        if (rdbStreamApplyFunctions(st, &err) < 0) {
            functionsRestore(oldFunctions);
            ok = 0;
        }
    }
    rdbStreamFree(st);
    if (!ok) {
        serverFireEvent(SERVER_EVENT_LOADING, 4, NULL, 0, 0); /* FAILED */
        if (err) serverLog(LL_WARNING, "%s", err);
        serverLog(LL_WARNING, "Failed trying to load the MASTER synchronization DB from socket: %s",
                  lost ? lost : "the RDB is corrupt");
        sdsFree(err);
        sdsFree(oldFunctions);
        if (swap) {
            serverFireEvent(SERVER_EVENT_REPL_ASYNC_LOAD, 1, NULL, 0, 0); /* ABORTED */
            dropTempDbs(temp);
            serverLog(LL_NOTICE, "MASTER <-> REPLICA sync: Discarding temporary DB in background");
        } else {
            emptyData();
            repl.haveCached = 0;
        }
        if (repl.conn == conn) {
            cancelLink();
            repl.nextConnectMs = server.time.nowMs + 1000;
        }
        if (failoverState() == FAILOVER_IN_PROGRESS) failoverAbort("the link to the failover target failed");
        return;
    }
    rdbLogLoaded(&info);
    if (swap) {
        sdsFree(oldFunctions);
        if (repl.haveCached) serverLog(LL_NOTICE, "Discarding previously cached master state.");
        replDisconnectReplicas();
        replBacklogFree();
        serverLog(LL_NOTICE, "MASTER <-> REPLICA sync: Swapping active DB with loaded DB");
        signalFlushedDb(-1);
        for (int j = 0; j < server.cfg.databases; j++) dbSwap(&server.db[j], &temp[j]);
        serverFireEvent(SERVER_EVENT_REPL_ASYNC_LOAD, 2, NULL, 0, 0); /* COMPLETED */
        dropTempDbs(temp);
        serverLog(LL_NOTICE, "MASTER <-> REPLICA sync: Discarding old DB in background");
    }
    serverFireEvent(SERVER_EVENT_LOADING, 3, NULL, 0, 0); /* ENDED, after the swap as on Redis */
    syncSucceeded(conn, &info);
}

/* Bytes of the RDB: write them to the temporary file. */
static int xferWrite(const char *p, size_t len) {
    while (len) {
        ssize_t n = write(repl.xferFd, p, len);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            linkFailed("Write error or short write writing to the DB dump file needed for MASTER <-> REPLICA synchronization");
            return -1;
        }
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

/* Consume what rbuf holds of the transfer.  Returns 1 when it ended. */
static int xferConsume(void) {
    if (repl.xferFd == -1) { /* the "$<len>" or "$EOF:<mark>" line first */
        sds line;
        for (;;) {
            if (!takeLine(&line)) return 0;
            if (sdsLen(line)) break;
            sdsFree(line); /* a newline the primary sends to keep us waiting */
        }
        if (line[0] == '-') {
            serverLog(LL_WARNING, "MASTER aborted replication with an error: %s", line + 1);
            sdsFree(line);
            linkFailed("MASTER aborted replication");
            return 0;
        }
        if (line[0] != '$') {
            serverLog(LL_WARNING, "Bad protocol from MASTER, the first byte is not '$' (we received '%s'), are you sure the host and port are right?", line);
            sdsFree(line);
            linkFailed("Bad protocol from MASTER");
            return 0;
        }
        repl.xferMem = useDisklessLoad();
        if (sdsLen(line) == 5 + 40 && !strncmp(line, "$EOF:", 5)) {
            memcpy(repl.xferMark, line + 5, 40);
            repl.xferSize = -1;
            serverLog(LL_NOTICE, "MASTER <-> REPLICA sync: receiving streamed RDB from master with EOF %s",
                      repl.xferMem ? "to parser" : "to disk");
        } else {
            long long size;
            if (!stringToLongLong(line + 1, sdsLen(line) - 1, &size) || size < 0) {
                sdsFree(line);
                linkFailed("Bad protocol from MASTER: invalid bulk length");
                return 0;
            }
            repl.xferSize = size;
            serverLog(LL_NOTICE, "MASTER <-> REPLICA sync: receiving %lld bytes from master %s", size,
                      repl.xferMem ? "to parser" : "to disk");
        }
        sdsFree(line);
        repl.xferRead = 0;
        if (repl.xferMem) {
            disklessLoad();
            return 0;
        }
        snprintf(repl.xferTmp, sizeof(repl.xferTmp), "temp-%d.%ld.rdb", (int)time(NULL), (long)getpid());
        repl.xferFd = open(repl.xferTmp, O_CREAT | O_WRONLY | O_EXCL | O_TRUNC, 0644);
        if (repl.xferFd == -1) {
            serverLog(LL_WARNING, "Opening the temp file needed for MASTER <-> REPLICA synchronization: %s", strerror(errno));
            linkFailed("Can't open the temp file");
            return 0;
        }
    }
    size_t have = sdsLen(repl.rbuf);
    if (repl.xferSize >= 0) {
        size_t want = (size_t)(repl.xferSize - repl.xferRead);
        size_t n = have < want ? have : want;
        if (xferWrite(repl.rbuf, n) < 0) return 0;
        repl.xferRead += (long long)n;
        memmove(repl.rbuf, repl.rbuf + n, have - n);
        sdsSetLen(repl.rbuf, have - n);
        return repl.xferRead == repl.xferSize;
    }
    /* EOF-marked: the primary sends nothing after the mark before our
     * first ACK, so the mark ends what we hold. */
    if (have == 0) return 0;
    if (xferWrite(repl.rbuf, have) < 0) return 0;
    repl.xferRead += (long long)have;
    if (have >= 40) {
        memcpy(repl.xferTail, repl.rbuf + have - 40, 40);
    } else {
        memmove(repl.xferTail, repl.xferTail + have, 40 - have);
        memcpy(repl.xferTail + 40 - have, repl.rbuf, have);
    }
    sdsClear(repl.rbuf);
    if (repl.xferRead >= 40 && memcmp(repl.xferTail, repl.xferMark, 40) == 0) {
        /* Cut the mark off the file. */
        if (ftruncate(repl.xferFd, repl.xferRead - 40) == -1) {
            linkFailed("Error truncating the RDB file received from the master");
            return 0;
        }
        return 1;
    }
    return 0;
}

/* One line of the handshake. */
static void handshakeLine(sds line) {
    switch (repl.link) {
    case LINK_RECV_PONG:
        if (line[0] == '-' && strncmp(line, "-NOAUTH", 7) && strncmp(line, "-NOPERM", 7) &&
            strncmp(line, "-ERR operation not permitted", 28)) {
            serverLog(LL_WARNING, "Error reply to PING from master: '%s'", line);
            linkFailed("Error reply to PING from master");
            return;
        }
        serverLog(LL_NOTICE, "Master replied to PING, replication can continue...");
        sendHandshake();
        return;
    case LINK_RECV_AUTH:
        if (line[0] == '-') {
            serverLog(LL_WARNING, "Unable to AUTH to MASTER: %s", line);
            linkFailed("Unable to AUTH to MASTER");
            return;
        }
        repl.link = LINK_RECV_PORT;
        return;
    case LINK_RECV_PORT:
        if (line[0] == '-') serverLog(LL_NOTICE, "(Non critical) Master does not understand REPLCONF listening-port: %s", line);
        repl.link = server.cfg.replicaAnnounceIp ? LINK_RECV_IP : LINK_RECV_CAPA;
        return;
    case LINK_RECV_IP:
        if (line[0] == '-') serverLog(LL_NOTICE, "(Non critical) Master does not understand REPLCONF ip-address: %s", line);
        repl.link = LINK_RECV_CAPA;
        return;
    case LINK_RECV_CAPA:
        if (line[0] == '-') serverLog(LL_NOTICE, "(Non critical) Master does not understand REPLCONF capa: %s", line);
        sendPsync();
        return;
    case LINK_RECV_PSYNC: {
        if (sdsLen(line) == 0) return; /* a keep-alive newline */
        if (!strncmp(line, "+FULLRESYNC", 11)) {
            char id[41];
            long long off;
            if (sscanf(line, "+FULLRESYNC %40s %lld", id, &off) != 2 || strlen(id) != 40) {
                linkFailed("Master replied with wrong +FULLRESYNC syntax.");
                return;
            }
            memcpy(repl.pendingReplid, id, 41);
            repl.pendingOffset = off;
            serverLog(LL_NOTICE, "Full resync from master: %s:%lld", id, off);
            repl.link = LINK_TRANSFER;
            repl.xferFd = -1;
            repl.xferSize = -2; /* not known before the "$" line */
            repl.xferRead = 0;
            failoverPsyncDone(1);
            return;
        }
        if (!strncmp(line, "+CONTINUE", 9)) {
            const char *id = line + 9;
            while (*id == ' ') id++;
            serverLog(LL_NOTICE, "Successful partial resynchronization with master.");
            if (strlen(id) == 40 && strcmp(id, repl.replid) != 0) {
                /* The primary changed id (a failover): keep ours as the
                 * second, so our replicas can continue too. */
                memcpy(repl.replid2, repl.replid, 41);
                repl.secondOffset = repl.offset + 1;
                memcpy(repl.replid, id, 41);
                replDisconnectReplicas();
                serverLog(LL_NOTICE, "Master replication ID changed to %s", id);
            }
            serverLog(LL_NOTICE, "MASTER <-> REPLICA sync: Master accepted a Partial Resynchronization.");
            becomeConnected(repl.conn, repl.cachedDb);
            failoverPsyncDone(1);
            return;
        }
        if (!strncmp(line, "-NOMASTERLINK", 13) || !strncmp(line, "-LOADING", 8))
            serverLog(LL_NOTICE, "Master is currently unable to PSYNC but should be in the future: %s", line);
        else if (strncmp(line, "-ERR", 4))
            serverLog(LL_WARNING, "Unexpected reply to PSYNC from master: %s", line);
        else
            serverLog(LL_NOTICE, "Master does not support PSYNC or is in error state (reply: %s)", line);
        /* During our FAILOVER: the target refused to take over. */
        if (failoverState() == FAILOVER_IN_PROGRESS) {
            failoverPsyncDone(0);
            return;
        }
        linkFailed("PSYNC failed");
        return;
    }
    default: return;
    }
}

static void linkReadable(EventLoop *loop, int fd, void *data, int mask) {
    (void)loop, (void)fd, (void)data;
    Connection *conn = repl.conn; /* the handler is registered on it only */
    if (repl.link == LINK_CONNECTING) {
        int err = connCheckConnected(conn);
        if (err) {
            serverLog(LL_WARNING, "Error condition on socket for SYNC: %s", strerror(err));
            linkFailed("Error condition on socket for SYNC");
            return;
        }
        connEventDel(conn, EV_WRITABLE);
        connEventAdd(conn, EV_READABLE, linkReadable, NULL);
        serverLog(LL_NOTICE, "Non blocking connect for SYNC fired the event.");
        const char *ping[1] = {"PING"};
        if (sendCommand(conn, 1, ping)) {
            linkFailed("Error writing PING to MASTER");
            return;
        }
        repl.link = LINK_RECV_PONG;
        repl.lastIoMs = server.time.nowMs;
        return;
    }
    if (!(mask & EV_READABLE)) return;
    repl.rbuf = sdsMakeRoomFor(repl.rbuf, READ_CHUNK * 4);
    long n = connRead(conn, repl.rbuf + sdsLen(repl.rbuf), READ_CHUNK * 4);
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) return;
    if (n <= 0) {
        linkFailed(repl.link == LINK_TRANSFER ? "I/O error trying to sync with MASTER: connection lost"
                                              : "Master closed the connection during the handshake");
        return;
    }
    sdsIncrLen(repl.rbuf, n);
    server.stats.netInputBytes += n;
    repl.lastIoMs = server.time.nowMs;
    while (repl.conn == conn && repl.link != LINK_CONNECTED) {
        if (repl.link == LINK_TRANSFER) {
            if (xferConsume()) loadTransfer();
            return;
        }
        sds line;
        if (!takeLine(&line)) return;
        handshakeLine(line);
        sdsFree(line);
    }
}

/* --- REPLICAOF --- */

/* What a client blocked on keys or in WAIT gets when the server turns into
 * a replica (Redis's words). */
#define ERR_UNBLOCKED_ROLE_CHANGE \
    "UNBLOCKED force unblock from blocking operation, instance state changed (master -> replica?)"

void replicaSetPrimary(const char *host, int port) {
    int wasPrimary = !server.isReplica;
    xfree(repl.masterHost);
    repl.masterHost = xstrdup(host);
    repl.masterPort = port;
    sds v = sdsCatPrintf(sdsEmpty(), "%s %d", host, port);
    xfree(server.cfg.replicaof);
    server.cfg.replicaof = xstrdup(v);
    sdsFree(v);
    if (repl.master) {
        /* Continue from what we applied, with the new primary. */
        Client *m = repl.master;
        repl.master = NULL;
        repl.haveCached = 1;
        repl.cachedDb = m->db->id;
        serverFireEvent(SERVER_EVENT_MASTER_LINK, 1, NULL, 0, 0); /* down */
        clientFree(m);
    }
    cancelLink();
    /* Our replicas stay: they may continue with us if the new primary
     * continues our history; they are dropped when our replication id
     * changes (+CONTINUE with another id) or a full sync's data is about
     * to be loaded, as Redis 7.0 does.  Clients blocked here (on keys, in
     * WAIT) get an error and are closed: from now on their keys follow
     * the primary. */
    blockingDisconnectAll(ERR_UNBLOCKED_ROLE_CHANGE);
    primaryDisconnectWaiters(ERR_UNBLOCKED_ROLE_CHANGE);
    if (wasPrimary) {
        /* Our own history is what we ask the new primary to continue. */
        repl.haveCached = 1;
        repl.cachedDb = repl.selDb == -1 ? 0 : repl.selDb;
    }
    replSetReplicaMode(1);
    fireRoleChanged(1);
    repl.link = LINK_CONNECT;
    repl.linkDownSinceMs = 0;
    repl.nextConnectMs = 0;
    connectToPrimary();
}

long long replicaDataAgeMs(void) {
    long long now = server.time.nowMs;
    if (repl.link == LINK_CONNECTED && repl.master) return now - repl.master->lastInteraction;
    return now - repl.linkDownSinceMs; /* never up since REPLICAOF: the whole clock */
}

void replicaUnsetPrimary(void) {
    if (repl.master) {
        Client *m = repl.master;
        repl.master = NULL;
        /* Redis 7.0 tells the modules twice here: once for leaving the
         * primary, once for the link it drops. */
        serverFireEvent(SERVER_EVENT_MASTER_LINK, 1, NULL, 0, 0); /* down */
        serverFireEvent(SERVER_EVENT_MASTER_LINK, 1, NULL, 0, 0);
        clientFree(m);
    }
    cancelLink();
    /* A new history starts here; the old id stays valid up to here. */
    memcpy(repl.replid2, repl.replid, 41);
    repl.secondOffset = repl.offset + 1;
    replNewId(repl.replid);
    replDisconnectReplicas();
    xfree(repl.masterHost);
    repl.masterHost = NULL;
    xfree(server.cfg.replicaof);
    server.cfg.replicaof = NULL;
    repl.link = LINK_NONE;
    repl.haveCached = 0;
    repl.selDb = -1;
    replSetReplicaMode(0);
    repl.noReplicasSinceMs = server.time.nowMs;
    fireRoleChanged(0);
}

static sds clientDesc(Client *c) {
    return sdsCatPrintf(sdsEmpty(), "id=%llu addr=%s laddr=%s fd=%d name=%s", (unsigned long long)c->id, c->addr,
                        c->laddr, clientFd(c), c->name ? c->name : "");
}

/* REPLICAOF host port | NO ONE */
void replicaofCommand(Client *c) {
    if (argIs(c->argv[1], "no") && argIs(c->argv[2], "one")) {
        if (server.isReplica) {
            replicaUnsetPrimary();
            sds d = clientDesc(c);
            serverLog(LL_NOTICE, "MASTER MODE enabled (user request from '%s')", d);
            sdsFree(d);
        }
        replyOk(c);
        return;
    }
    if (c->flags & CLIENT_SLAVE) {
        replyError(c, "ERR Command is not valid when client is a replica.");
        return;
    }
    if (failoverState() != FAILOVER_NONE) {
        replyError(c, "ERR REPLICAOF not allowed while failing over.");
        return;
    }
    long port;
    if (getRangeLongOrReply(c, c->argv[2], 0, 65535, &port, "Invalid master port") < 0) return;
    if (server.isReplica && !strcasecmp(repl.masterHost, c->argv[1]) && repl.masterPort == port) {
        serverLog(LL_NOTICE, "REPLICAOF would result into synchronization with the master we are already connected with. No operation performed.");
        replyStatus(c, "OK Already connected to specified master");
        return;
    }
    replicaSetPrimary(c->argv[1], (int)port);
    sds d = clientDesc(c);
    serverLog(LL_NOTICE, "REPLICAOF %s:%ld enabled (user request from '%s')", c->argv[1], port, d);
    sdsFree(d);
    replyOk(c);
}

/* --- liveness --- */

void replicaClientFreed(Client *c) {
    if (c != repl.master) return;
    repl.master = NULL;
    serverFireEvent(SERVER_EVENT_MASTER_LINK, 1, NULL, 0, 0); /* down */
    if (!server.isReplica) return;
    /* Keep our position: the next PSYNC continues from it. */
    repl.haveCached = 1;
    repl.cachedDb = c->db ? c->db->id : 0;
    repl.link = LINK_CONNECT;
    repl.linkDownSinceMs = server.time.nowMs;
    repl.nextConnectMs = 0;
}

void replicaCron(int everySecond) {
    if (!server.isReplica) return;
    long long now = server.time.nowMs;
    long long timeout = (long long)server.cfg.replTimeout * 1000;
    if (repl.link == LINK_CONNECT && now >= repl.nextConnectMs) {
        serverLog(LL_NOTICE, "Connecting to MASTER %s:%d", repl.masterHost, repl.masterPort);
        connectToPrimary();
    } else if (repl.link > LINK_CONNECT && repl.link < LINK_CONNECTED && now - repl.lastIoMs > timeout) {
        linkFailed(repl.link == LINK_TRANSFER ? "Timeout receiving bulk data from MASTER... If the problem persists try to set the 'repl-timeout' parameter in redis.conf to a larger value."
                                              : "Timeout connecting to the MASTER...");
    } else if (repl.link == LINK_CONNECTED && repl.master && now - repl.master->lastInteraction > timeout) {
        serverLog(LL_WARNING, "MASTER timeout: no data nor PING received...");
        clientFreeAsync(repl.master);
    }
    if (everySecond && repl.master && !(repl.master->flags & CLIENT_CLOSE_ASAP)) replicaSendAck();
}

sds replicaInfoLines(sds s) {
    long long now = server.time.nowMs;
    long long off = repl.master || repl.haveCached ? repl.offset : 1;
    s = sdsCatPrintf(s,
                     "master_host:%s\r\n"
                     "master_port:%d\r\n"
                     "master_link_status:%s\r\n"
                     "master_last_io_seconds_ago:%d\r\n"
                     "master_sync_in_progress:%d\r\n"
                     "slave_read_repl_offset:%lld\r\n"
                     "slave_repl_offset:%lld\r\n",
                     repl.masterHost, repl.masterPort, repl.link == LINK_CONNECTED ? "up" : "down",
                     repl.master ? (int)((now - repl.master->lastInteraction) / 1000) : -1,
                     repl.link == LINK_TRANSFER, off, off);
    if (repl.link == LINK_TRANSFER) {
        long long total = repl.xferSize, read = repl.xferRead;
        /* As Redis: -1 before the "$" line, 0 for an "$EOF:" stream; parsed
         * from the socket, no byte counts as read (the loading_* fields show
         * the load). */
        if (total == -2) total = -1;
        else if (total < 0) total = 0;
        if (repl.xferMem) read = 0;
        double perc = total > 0 ? (double)read * 100 / (double)total : 0;
        s = sdsCatPrintf(s,
                         "master_sync_total_bytes:%lld\r\n"
                         "master_sync_read_bytes:%lld\r\n"
                         "master_sync_left_bytes:%lld\r\n"
                         "master_sync_perc:%.2f\r\n"
                         "master_sync_last_io_seconds_ago:%d\r\n",
                         total, read, total - read, perc, (int)((now - repl.lastIoMs) / 1000));
    }
    if (repl.link != LINK_CONNECTED)
        s = sdsCatPrintf(s, "master_link_down_since_seconds:%lld\r\n",
                         repl.linkDownSinceMs ? (now - repl.linkDownSinceMs) / 1000 : -1);
    return sdsCatPrintf(s,
                        "slave_priority:%d\r\n"
                        "slave_read_only:%d\r\n"
                        "replica_announced:%d\r\n",
                        server.cfg.replicaPriority, server.cfg.replicaReadOnly, server.cfg.replicaAnnounced);
}
