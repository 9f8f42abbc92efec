/* net.c -- the client path: the server's listeners (TCP and unix, both
 * RESP), accepting, reading and writing, client lifecycle.  Every socket
 * call goes through the client's Connection (core/conn.h).
 *
 * Reading: one read of up to 16 KB per readable event into the query
 * buffer (or where the connection's protocol asks: RESP reads a big
 * argument straight into its final string), then every complete command
 * the protocol finds in the buffer (c->proto->next, proto/protocol.h) is
 * run before anything is written.  Parsing is the protocol's: a new
 * connection gets RESP (respProtocol, RESP2), and only the refusals of a
 * connection at accept (max clients, protected mode) are written here as
 * pre-encoded RESP errors.
 * Writing: clients with replies are queued; before the loop sleeps each is
 * written (connWrite, or connWritev for several buffers); only a socket that
 * cannot take everything gets a writable handler.  A client is never freed
 * while its command runs: it is flagged and freed by
 * netFreeClosingClients. */
#include "core/net.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/uio.h>

#include "core/conn.h"
#include "core/dispatch.h"
#include "core/errors.h"
#include "core/log.h"
#include "core/server.h"
#include "db/db.h"
#include "ds/alloc.h"
#include "ds/util.h"
#include "proto/resp_parse.h"

#define READ_CHUNK (16 * 1024)
#define MAX_ACCEPTS_PER_CALL 1000
#define IOV_MAX_WRITE 64
/* A client quiet this long gives back what its protocol keeps for reuse. */
#define IDLE_TRIM_MS 2000
/* A client that has not authenticated while a password is set gets at most
 * this much query buffer (newer Redis's cap; 7.0.15 has none: a client that
 * sent QUIT and keeps sending while not reading grows it to
 * client-query-buffer-limit) ... */
#define UNAUTH_QUERY_MAX (1024 * 1024)
/* ... and at most this many bytes of reply blocks beyond the 16 KB buffer,
 * whatever client-output-buffer-limit says (CVE-2025-21605: one that
 * pipelines commands without reading its -NOAUTH replies). */
#define UNAUTH_REPLY_MAX 1024

static void readHandler(EventLoop *loop, int fd, void *data, int mask);
static void writeHandler(EventLoop *loop, int fd, void *data, int mask);

void (*netClientMemoryHook)(Client *c);
/* The next client netClientsCron visits (NULL: start again at the head).
 * clientFree moves it past a client it unlinks. */
static Client *cronCursor;
static void readBatch(EventLoop *loop, void **data, int n);

/* --- listeners --- */

/* The two listeners: TCP on every bind address, and the unix socket.  Both
 * speak RESP (the request parser respProtocol, the reply API's RESP
 * bytes). */
static Listener tcpListener = {.name = "tcp", .type = &connTcpType, .proto = &respProtocol, .encoder = &respEncoder};
static Listener unixListener = {.name = "unix", .type = &connUnixType, .proto = &respProtocol, .encoder = &respEncoder};
/* TLS on tls-port (every bind address), RESP too. */
static Listener tlsListener = {.name = "tls", .type = &connTlsType, .proto = &respProtocol, .encoder = &respEncoder};

static void acceptHandler(EventLoop *loop, int fd, void *data, int mask);

/* Bind every bind address on port into l; returns 0 or -1 (none bound
 * then). */
static int openTcpListeners(Listener *l, int port, const char **err) {
    if (port == 0) return 0;
    for (int i = 0; i < server.cfg.bindCount; i++) {
        const char *addr = server.cfg.bind[i];
        int optional = addr[0] == '-';
        if (optional) addr++;
        ConnListenSpec spec = {.addr = addr, .port = port, .backlog = server.cfg.tcpBacklog,
                               .mark = (unsigned)server.cfg.socketMarkId};
        if (listenerBind(l, &spec) == -1) {
            if (optional || errno == EAFNOSUPPORT || errno == EADDRNOTAVAIL) {
                if (!optional)
                    serverLog(LL_WARNING, "Could not create server TCP listening socket %s:%d: %s", addr,
                              port, strerror(errno));
                continue;
            }
            serverLog(LL_WARNING, "Warning: Could not create server TCP listening socket %s:%d: %s", addr,
                      port, strerror(errno));
            if (err) *err = "Unable to listen on this port";
            listenerClose(l, 0);
            return -1;
        }
    }
    if (l->count == 0 && server.cfg.bindCount > 0) {
        serverLog(LL_WARNING, "Failed listening on port %d (%s), aborting.", port, l->name);
        if (err) *err = "Unable to listen on this port";
        return -1;
    }
    return 0;
}

static int openUnix(void) {
    const char *path = server.cfg.unixsocket;
    if (!path || !path[0]) return 0;
    ConnListenSpec spec = {.addr = path, .backlog = server.cfg.tcpBacklog, .perm = server.cfg.unixsocketperm};
    if (listenerBind(&unixListener, &spec) == -1) {
        if (errno == ENAMETOOLONG) serverLog(LL_WARNING, "Failed opening Unix socket: path too long");
        else serverLog(LL_WARNING, "Failed opening Unix socket: %s", strerror(errno));
        return -1;
    }
    listenerInstall(&unixListener, acceptHandler);
    return 0;
}

int netListen(void) {
    if (connBatchInit() == 0) eventSetReadBatch(server.loop, readHandler, readBatch);
    if (openTcpListeners(&tcpListener, server.cfg.port, NULL) < 0) return -1;
    listenerInstall(&tcpListener, acceptHandler);
    if (openTcpListeners(&tlsListener, tlsPort(), NULL) < 0) return -1;
    listenerInstall(&tlsListener, acceptHandler);
    if (openUnix() == -1) return -1;
    if (tcpListener.count == 0 && unixListener.count == 0 && tlsListener.count == 0) {
        serverLog(LL_WARNING, "Configured to not listen anywhere, exiting.");
        return -1;
    }
    return 0;
}

/* Listeners of features (the HTTP gateway), closed with the server's. */
#define NET_MAX_EXTRA_LISTENERS 4
static Listener *extraListeners[NET_MAX_EXTRA_LISTENERS];

int netAttachListener(Listener *l) {
    int free = -1;
    for (int i = 0; i < NET_MAX_EXTRA_LISTENERS; i++) {
        if (extraListeners[i] == l) free = i;
        else if (!extraListeners[i] && free == -1) free = i;
    }
    if (free == -1) return -1;
    extraListeners[free] = l;
    listenerInstall(l, acceptHandler);
    return 0;
}

void netDetachListener(Listener *l) {
    listenerClose(l, 0);
    for (int i = 0; i < NET_MAX_EXTRA_LISTENERS; i++)
        if (extraListeners[i] == l) extraListeners[i] = NULL;
}

void netCloseListeners(void) {
    listenerClose(&tcpListener, 0);
    listenerClose(&tlsListener, 0);
    listenerClose(&unixListener, 1);
    for (int i = 0; i < NET_MAX_EXTRA_LISTENERS; i++)
        if (extraListeners[i]) listenerClose(extraListeners[i], 0);
}

void netCloseListenersInChild(void) {
    /* The epoll set is shared with the parent: only the descriptors go. */
    listenerCloseInChild(&tcpListener);
    listenerCloseInChild(&tlsListener);
    listenerCloseInChild(&unixListener);
    for (int i = 0; i < NET_MAX_EXTRA_LISTENERS; i++)
        if (extraListeners[i]) listenerCloseInChild(extraListeners[i]);
}

int netRebindTcp(const char **err) {
    listenerClose(&tcpListener, 0);
    if (openTcpListeners(&tcpListener, server.cfg.port, err) < 0) return -1;
    listenerInstall(&tcpListener, acceptHandler);
    return 0;
}

int netRebindTls(const char **err) {
    listenerClose(&tlsListener, 0);
    if (openTcpListeners(&tlsListener, tlsPort(), err) < 0) return -1;
    listenerInstall(&tlsListener, acceptHandler);
    return 0;
}

int netRebindUnix(const char **err) {
    listenerClose(&unixListener, 0);
    if (openUnix() == -1) {
        *err = "Unable to listen on this unix socket";
        return -1;
    }
    return 0;
}

/* --- client lifecycle --- */

Client *clientCreateFake(void) {
    Client *c = xcalloc(sizeof(Client));
    c->id = ++server.net.nextClientId; /* ids start at 1, as in Redis */
    c->conn = NULL;
    c->flags = CLIENT_FAKE;
    c->resp = 2;
    c->authenticated = 1;
    c->db = &server.db[0];
    c->querybuf = sdsEmpty();
    c->buf = xmalloc(CLIENT_REPLY_BUF);
    c->bufSize = xmallocSize(c->buf);
    /* The peak starts at the whole buffer, and (bufPeakResetMs 0) is reset
     * at the first cron tick: Redis 7.0.15's new client shows rbp=rbs,
     * then 0, and its buffer shrinks at the tick after. */
    c->bufPeak = c->bufSize;
    c->ctime = c->lastInteraction = server.time.nowMs;
    c->proto = &respProtocol;
    c->protoState = respProtocol.create();
    return c;
}

static Client *clientsTail; /* the newest of server.net.clients */

Client *clientCreate(Connection *conn) {
    Client *c = clientCreateFake();
    c->conn = conn;
    c->flags = conn->type->isUnix ? CLIENT_UNIX_SOCKET : 0;
    /* The listener's protocol (RESP, which the fake client has already). */
    const Protocol *proto = conn->listener ? conn->listener->proto : &respProtocol;
    if (proto != c->proto) {
        c->proto->free(c->protoState);
        c->proto = proto;
        c->protoState = proto->create();
    }
    /* A listener whose replies are not RESP gives its clients a sink. */
    if (conn->listener && conn->listener->encoder->attach) {
        c->sink = conn->listener->encoder->attach(c);
        c->flags |= CLIENT_REPLY_SINK;
    }
    c->authenticated = !server.authDefaultRequired;
    /* Appended: the list is oldest first (CLIENT LIST's order, Redis's). */
    c->prevClient = clientsTail;
    if (clientsTail) clientsTail->nextClient = c;
    else server.net.clients = c;
    clientsTail = c;
    server.net.numClients++;
    serverFireEvent(SERVER_EVENT_CLIENT_CHANGE, 0, c, 0, 0);
    return c;
}

sds clientAdoptArg(Client *c, int i) {
    if (c->adoptedArg || !c->argv || !c->proto->handedOut(c->protoState, c->argv) || i < 0 || i >= c->argc)
        return NULL;
    sds s = c->argv[i];
    /* The value must not keep the slack of the reservation (a 10 MB
     * argument sits in jemalloc's 12 MB class): give it back -- jemalloc
     * shrinks a large block in place, without a copy. */
    if (sdsAvail(s) > sdsLen(s) / 16) s = c->argv[i] = sdsRemoveFreeSpace(s);
    c->adoptedArg = i + 1;
    return s;
}

void clientResetArgv(Client *c) {
    /* An adopted argument belongs to a stored value now. */
    if (c->adoptedArg) {
        if (c->argv) c->argv[c->adoptedArg - 1] = NULL;
        c->adoptedArg = 0;
    }
    /* The protocol keeps the array and the small strings for the next
     * command.  A command kept elsewhere (a MULTI queue) left NULL. */
    c->proto->recycle(c->protoState, c->argv, c->argc);
    c->argv = NULL;
    c->argc = 0;
    c->argvBytes = 0;
    c->cmd = NULL;
}

static void freeReplies(Client *c) {
    ReplyBlock *b = c->replyHead;
    while (b) {
        ReplyBlock *n = b->next;
        replyBlockFree(b);
        b = n;
    }
    c->replyHead = c->replyTail = NULL;
    c->replyBytes = 0;
    c->replyPinnedBytes = 0;
    c->replyBlocks = 0;
    c->replyAllocBytes = 0;
    c->bufpos = c->sentlen = 0;
    c->bufDeferredCount = 0;
}

void clientDiscardReplies(Client *c) { freeReplies(c); }

static void unlinkPendingWrite(Client *c) {
    if (!(c->flags & CLIENT_PENDING_WRITE)) return;
    Client **link = &server.net.pendingWrites;
    while (*link && *link != c) link = &(*link)->nextPendingWrite;
    if (*link) *link = c->nextPendingWrite;
    c->flags &= ~CLIENT_PENDING_WRITE;
}

/* Hooks for feature layers to release their per-client state. */
static ClientFreeHook **clientFreeHooks;
static int clientFreeHookCount;
static ClientFreeHook **clientResetHooks;
static int clientResetHookCount;

void clientAddFreeHook(ClientFreeHook *hook) {
    clientFreeHooks = xrealloc(clientFreeHooks, sizeof(*clientFreeHooks) * (size_t)(clientFreeHookCount + 1));
    clientFreeHooks[clientFreeHookCount++] = hook;
}

void clientAddResetHook(ClientFreeHook *hook) {
    clientResetHooks = xrealloc(clientResetHooks, sizeof(*clientResetHooks) * (size_t)(clientResetHookCount + 1));
    clientResetHooks[clientResetHookCount++] = hook;
}

void clientRunResetHooks(Client *c) {
    for (int i = 0; i < clientResetHookCount; i++) clientResetHooks[i](c);
}

void clientFree(Client *c) {
    if (c->flags & (CLIENT_PROTECTED | CLIENT_EXECUTING)) {
        clientFreeAsync(c);
        return;
    }
    if (!(c->flags & CLIENT_FAKE)) serverFireEvent(SERVER_EVENT_CLIENT_CHANGE, 1, c, 0, 0);
    for (int i = 0; i < clientFreeHookCount; i++) clientFreeHooks[i](c);
    if (c->flags & CLIENT_CLOSE_ASAP) server.net.closingClients--;
    if (c->flags & CLIENT_READ_BATCHED) server.net.batchedReads--;
    if (c->conn) {
        connClose(c->conn); /* unregisters its events too */
        c->conn = NULL;
    }
    if (!(c->flags & CLIENT_FAKE)) {
        if (c->prevClient) c->prevClient->nextClient = c->nextClient;
        else server.net.clients = c->nextClient;
        if (c->nextClient) c->nextClient->prevClient = c->prevClient;
        else clientsTail = c->prevClient;
        if (cronCursor == c) cronCursor = c->nextClient;
        server.net.numClients--;
    }
    unlinkPendingWrite(c);
    if (server.net.current == c) server.net.current = NULL;
    clientResetArgv(c);
    c->proto->free(c->protoState);
    sdsFree(c->querybuf);
    sdsFree(c->name);
    sdsFree(c->libName);
    sdsFree(c->libVer);
    freeReplies(c);
    xfree(c->buf);
    xfree(c);
}

void clientFreeAsync(Client *c) {
    if (c->flags & CLIENT_CLOSE_ASAP) return;
    c->flags |= CLIENT_CLOSE_ASAP;
    server.net.closingClients++;
    if (c->conn) connEventDel(c->conn, EV_READABLE);
}

/* Runs before every sleep: the walk over all clients happens only when
 * some client is flagged. */
void netFreeClosingClients(void) {
    if (server.net.closingClients == 0) return;
    Client *c = server.net.clients;
    while (c) {
        Client *next = c->nextClient;
        if ((c->flags & CLIENT_CLOSE_ASAP) && !(c->flags & (CLIENT_PROTECTED | CLIENT_EXECUTING))) clientFree(c);
        c = next;
    }
}

int clientSelectDb(Client *c, int id) {
    if (id < 0 || id >= server.cfg.databases) return -1;
    c->db = &server.db[id];
    return 0;
}

int clientHasPendingReplies(const Client *c) { return c->bufpos > 0 || c->replyHead != NULL; }

size_t clientOutputBytes(const Client *c) { return c->replyBytes; }

int clientType(const Client *c) {
    if (c->flags & CLIENT_MASTER) return CLIENT_TYPE_MASTER;
    if ((c->flags & (CLIENT_SLAVE | CLIENT_MONITOR)) == CLIENT_SLAVE) return CLIENT_TYPE_REPLICA;
    if (c->flags & CLIENT_PUBSUB) return CLIENT_TYPE_PUBSUB;
    return CLIENT_TYPE_NORMAL;
}

const char *clientEvents(const Client *c) {
    if (clientIsFake(c)) return "";
    int m = connEventMask(c->conn);
    if ((m & EV_READABLE) && (m & EV_WRITABLE)) return "rw";
    if (m & EV_READABLE) return "r";
    if (m & EV_WRITABLE) return "w";
    return "";
}

/* --- accept --- */

/* Refuses conn with msg (an error line) and closes it. */
static void rejectConn(Connection *conn, const char *msg) {
    long w = connWrite(conn, msg, strlen(msg));
    (void)w;
    connClose(conn);
    server.stats.rejectedConns++;
}

/* conn comes from connAccept, non-blocking; peer is its address. */
static void acceptOne(Connection *conn, const char *peer) {
    int isUnix = conn->type->isUnix;
    connSetNoDelay(conn, 1);
    connSetKeepalive(conn, server.cfg.tcpKeepalive);
    server.stats.numConnections++;
    if (server.net.numClients >= (unsigned long)server.cfg.maxclients) {
        rejectConn(conn, "-" ERR_MAXCLIENTS "\r\n");
        return;
    }
    int denied = !isUnix && server.cfg.protectedMode && server.authDefaultNopass && !connIsLoopback(conn);
    if (denied && (conn->flags & CONN_PLAIN)) {
        rejectConn(conn, ERR_DENIED_PROTECTED);
        return;
    }
    if (connFd(conn) >= eventLoopSetSize(server.loop)) {
        rejectConn(conn, "-" ERR_MAXCLIENTS "\r\n");
        return;
    }
    Client *c = clientCreate(conn);
    snprintf(c->addr, sizeof(c->addr), "%s", peer);
    if (connLocalAddr(conn, c->laddr, sizeof(c->laddr)) == -1) c->laddr[0] = '\0';
    if (connEventAdd(conn, EV_READABLE, readHandler, c) == -1) {
        clientFree(c);
        return;
    }
    if (denied) {
        /* A TLS client is refused as Redis refuses it: over TLS, once the
         * handshake is over (the refusal waits in the reply buffer until
         * the connection can carry it, then the client is closed). */
        replyRaw(c, ERR_DENIED_PROTECTED, strlen(ERR_DENIED_PROTECTED));
        c->flags |= CLIENT_CLOSE_AFTER_REPLY;
        server.stats.rejectedConns++;
        return;
    }
    if (netClientMemoryHook) netClientMemoryHook(c);
}

static void acceptHandler(EventLoop *loop, int lfd, void *data, int mask) {
    Listener *l = data;
    for (int i = 0; i < MAX_ACCEPTS_PER_CALL; i++) {
        char peer[64];
        Connection *conn = connAccept(l, lfd, peer, sizeof(peer));
        if (!conn) {
            if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
                serverLog(LL_VERBOSE, "Accepting client connection: %s", strerror(errno));
            return;
        }
        acceptOne(conn, peer);
    }
}

/* --- reading --- */

static ProtoLimits limitsFor(const Client *c) {
    ProtoLimits lim = {server.cfg.protoMaxBulkLen, serverAuthRequired(c)};
    return lim;
}

static void protocolError(Client *c, const char *err) {
    if (server.cfg.loglevel <= LL_VERBOSE)
        serverLog(LL_VERBOSE, "Protocol error (%s) from client: id=%llu addr=%s", err,
                  (unsigned long long)c->id, c->addr);
    c->flags &= ~(CLIENT_REPLY_OFF | CLIENT_REPLY_SKIP);
    replyError(c, err);
    c->flags |= CLIENT_CLOSE_AFTER_REPLY;
}

void netProcessInput(Client *c) {
    while (!(c->flags & (CLIENT_CLOSE_AFTER_REPLY | CLIENT_CLOSE_ASAP | CLIENT_BLOCKED))) {
        size_t avail = sdsLen(c->querybuf) - c->qbPos;
        ProtoLimits lim = limitsFor(c);
        ProtoCommand cmd;
        ProtoStatus st = c->proto->next(c->protoState, c->querybuf + c->qbPos, avail, &lim, &cmd);
        c->qbPos += cmd.consumed;
        if (st == PROTO_INCOMPLETE) break;
        if (st == PROTO_ERROR) {
            protocolError(c, cmd.err);
            break;
        }
        if (cmd.argc == 0) continue;
        c->argv = cmd.argv;
        c->argc = cmd.argc;
        c->argvBytes = cmd.argvBytes;
        dispatchCommand(c);
        if (!(c->flags & CLIENT_BLOCKED)) clientResetArgv(c);
    }
    /* Drop what was parsed. */
    if (c->qbPos > 0) {
        size_t left = sdsLen(c->querybuf) - c->qbPos;
        if (left == 0) {
            sdsClear(c->querybuf);
        } else {
            memmove(c->querybuf, c->querybuf + c->qbPos, left);
            sdsSetLen(c->querybuf, left);
        }
        c->qbPos = 0;
    }
}

/* A socket call on the client failed with -err (n).  Returns 0 when it is
 * only to be tried later (EAGAIN, EINTR); otherwise logs "what: error",
 * frees the client and returns -1. */
static int socketFailed(Client *c, long n, const char *what) {
    if (n == -EAGAIN || n == -EINTR) return 0;
    serverLog(LL_VERBOSE, "%s: %s", what, strerror((int)-n));
    clientFree(c);
    return -1;
}

/* Where the client's next read goes: the query buffer, or straight into a
 * big argument's final string (*big set).  Returns the room at *dst. */
static size_t readTarget(Client *c, char **dst, int *big) {
    size_t room;
    *big = sdsLen(c->querybuf) == c->qbPos && c->proto->directRoom(c->protoState, dst, &room);
    if (*big) return room;
    size_t qlen = sdsLen(c->querybuf);
    if (qlen > c->qbPeak) c->qbPeak = qlen;
    /* An empty buffer gets exactly one chunk of room: such a buffer is
     * never shrunk by the cron, so a client sending small commands keeps
     * one block.  Only a command that spans reads grows it greedily. */
    c->querybuf = qlen == 0 ? sdsMakeRoomForNonGreedy(c->querybuf, READ_CHUNK) : sdsMakeRoomFor(c->querybuf, READ_CHUNK);
    *dst = c->querybuf + qlen;
    return READ_CHUNK;
}

/* Account a read into readTarget's place: n bytes, or -err.  Returns 1 if
 * bytes arrived, 0 if none (EAGAIN), -1 if the client was freed (closed,
 * failed, or over the query buffer limit). */
static int readDone(Client *c, long n, int big) {
    if (n < 0) return socketFailed(c, n, "Reading from client");
    if (n == 0) {
        serverLog(LL_VERBOSE, "Client closed connection id=%llu addr=%s", (unsigned long long)c->id, c->addr);
        clientFree(c);
        return -1;
    }
    if (big) c->proto->directWrote(c->protoState, (size_t)n);
    else sdsIncrLen(c->querybuf, n);
    c->lastInteraction = server.time.nowMs;
    server.stats.netInputBytes += n;
    server.stats.totalReadsProcessed++;
    size_t qsize = sdsLen(c->querybuf) + c->proto->pendingBytes(c->protoState);
    /* The configured limit is at least UNAUTH_QUERY_MAX, so below it nothing
     * is checked. */
    if (qsize > UNAUTH_QUERY_MAX &&
        (serverAuthRequired(c) ||
         (server.cfg.clientQueryBufferLimit && qsize > (size_t)server.cfg.clientQueryBufferLimit))) {
        serverLog(LL_WARNING, "Closing client that reached max query buffer length: id=%llu addr=%s (qbuf initial bytes: ...)",
                  (unsigned long long)c->id, c->addr);
        server.stats.clientQbufLimitDisconnections++;
        clientFree(c);
        return -1;
    }
    return 1;
}

static void readHandler(EventLoop *loop, int fd, void *data, int mask) {
    Client *c = data;
    /* A client whose command is running (a long script serving other
     * clients meanwhile) is read once the command returns. */
    if (c->flags & CLIENT_EXECUTING) return;
    if (c->flags & CLIENT_READ_BATCHED) { /* readBatch already read it */
        c->flags &= ~CLIENT_READ_BATCHED;
        server.net.batchedReads--;
    } else {
        char *dst;
        int big;
        size_t room = readTarget(c, &dst, &big);
        long n = connRead(c->conn, dst, room);
        if (readDone(c, n < 0 ? -errno : n, big) <= 0) return;
    }
    c->flags |= CLIENT_PROTECTED;
    netProcessInput(c);
    c->flags &= ~CLIENT_PROTECTED;
    if (netClientMemoryHook) netClientMemoryHook(c);
}

/* --- key prefetch ---
 * Once a batch of reads is in, the keys its commands will look up are
 * fetched ahead (db.h dbPrefetchStart / dbPrefetchEntry / dbPrefetchChain):
 * every key's bucket slot, then every key's entry, then the next entry of
 * the chain where the first is another key's (a third to half of lookups
 * at the table's load of 2/3 to 1) or the value behind the key's own,
 * before the first command runs.  A lookup's dependent cache misses (the
 * slot, then the entry) took about half of a SET's or GET's time inside
 * the command on a dataset larger than the cache (~0.3 of 0.6 us here);
 * fetched ahead they overlap each other and the parsing and dispatch of
 * the batch.  The key taken is
 * each command's second argument (the first key of nearly every command
 * that has one), read from the RESP multibulk headers in the query buffer
 * without parsing them into strings: a buffer that is not what it seems
 * (another command's argument, a partial command) costs only a wasted
 * fetch. */
#define PREFETCH_KEYS 256      /* keys fetched ahead per batch (a pipelined load's batch: ~170) */
#define PREFETCH_PER_CLIENT 16 /* of one client's pipeline */
#define PREFETCH_SCAN_ARGS 64  /* argument headers read per client */

/* The decimal at *p (1-9 digits) ended by CRLF, *p moved past it; -1 if
 * the bytes before end are not that. */
static long peekDecimal(const char **p, const char *end) {
    const char *s = *p;
    long v = 0;
    int digits = 0;
    while (s < end && *s >= '0' && *s <= '9' && digits < 10) {
        v = v * 10 + (*s++ - '0');
        digits++;
    }
    if (digits == 0 || digits > 9 || end - s < 2 || s[0] != '\r' || s[1] != '\n') return -1;
    *p = s + 2;
    return v;
}

/* The second argument of each of c's next commands in its query buffer,
 * up to most of them (fewer where the buffer ends or stops looking like
 * RESP multibulk).  Returns how many. */
static int peekKeys(const Client *c, const char **keys, size_t *lens, int most) {
    const char *p = c->querybuf + c->qbPos, *end = c->querybuf + sdsLen(c->querybuf);
    int n = 0, budget = PREFETCH_SCAN_ARGS;
    while (n < most && p < end && *p == '*') {
        p++;
        long argc = peekDecimal(&p, end);
        if (argc < 1) break;
        for (long i = 0; i < argc; i++) {
            if (budget-- == 0 || p >= end || *p != '$') return n;
            p++;
            long len = peekDecimal(&p, end);
            if (len < 0 || end - p < len + 2) return n;
            if (i == 1) {
                keys[n] = p;
                lens[n++] = (size_t)len;
            }
            p += len + 2;
        }
    }
    return n;
}

static void prefetchKeys(Client *const *cl, int n) {
    DbPrefetch pf[PREFETCH_KEYS];
    const char *keys[PREFETCH_PER_CLIENT];
    size_t lens[PREFETCH_PER_CLIENT];
    int k = 0;
    for (int i = 0; i < n && k < PREFETCH_KEYS; i++) {
        const Client *c = cl[i];
        if (c->proto != &respProtocol || !c->db) continue;
        int most = PREFETCH_KEYS - k < PREFETCH_PER_CLIENT ? PREFETCH_KEYS - k : PREFETCH_PER_CLIENT;
        int m = peekKeys(c, keys, lens, most);
        for (int j = 0; j < m; j++) dbPrefetchStart(c->db, keys[j], lens[j], &pf[k++]);
    }
    for (int i = 0; i < k; i++) dbPrefetchEntry(&pf[i]);
    for (int i = 0; i < k; i++) dbPrefetchChain(&pf[i]);
}

/* The event loop's read batcher: read every ready client in one system
 * call before any of their commands runs.  A client that got bytes is
 * flagged CLIENT_READ_BATCHED and its readHandler only parses and runs;
 * one that got none is left for its handler to read (a spurious wakeup).
 * Reading early changes nothing a client can see: the bytes were already
 * in the socket, and whatever runs before the client's handler (another
 * client's command unblocking or killing it) finds them in its query
 * buffer as if they had been read a turn earlier. */
static void readBatch(EventLoop *loop, void **data, int n) {
    Client *cl[IOBATCH_MAX];
    int big[IOBATCH_MAX];
    long res[IOBATCH_MAX];
    int i = 0;
    while (i < n) {
        int k = 0;
        for (; i < n && k < IOBATCH_MAX; i++) {
            Client *c = data[i];
            /* A connection that cannot be batched is read by its handler. */
            if (c->flags & CLIENT_EXECUTING || !connCanBatch(c->conn)) continue;
            char *dst;
            size_t room = readTarget(c, &dst, &big[k]);
            connBatchRead(c->conn, dst, room);
            cl[k++] = c;
        }
        connBatchRun(res);
        int got = 0;
        for (int j = 0; j < k; j++) {
            /* cl[j] may be freed here (closed, failed, over its limit):
             * only the clients that got bytes stay in cl, for the prefetch. */
            if (readDone(cl[j], res[j], big[j]) == 1) {
                if (!(cl[j]->flags & CLIENT_READ_BATCHED)) {
                    cl[j]->flags |= CLIENT_READ_BATCHED;
                    server.net.batchedReads++;
                }
                cl[got++] = cl[j];
            }
        }
        prefetchKeys(cl, got);
    }
}

void netProcessBatchedReads(void) {
    if (server.net.batchedReads == 0) return;
    for (Client *c = server.net.clients, *next; c; c = next) {
        next = c->nextClient;
        if (c->flags & CLIENT_READ_BATCHED) readHandler(server.loop, connFd(c->conn), c, EV_READABLE);
    }
}

/* --- writing --- */

void netMarkPendingWrite(Client *c) {
    if (c->flags & CLIENT_PENDING_WRITE || clientIsFake(c)) return;
    c->flags |= CLIENT_PENDING_WRITE;
    c->nextPendingWrite = server.net.pendingWrites;
    server.net.pendingWrites = c;
}

void netCheckOutputLimits(Client *c) {
    if (clientIsFake(c) || (c->flags & (CLIENT_CLOSE_ASAP | CLIENT_MASTER))) return;
    const ObufLimit *lim = &server.cfg.obufLimits[clientType(c)];
    size_t used = c->replyBytes;
    int hard = (lim->hard && used >= lim->hard) || (used > UNAUTH_REPLY_MAX && serverAuthRequired(c));
    int soft = lim->soft && used >= lim->soft;
    if (soft && !hard) {
        if (c->obufSoftLimitReachedTime == 0) {
            c->obufSoftLimitReachedTime = server.time.nowMs;
            soft = 0;
        } else {
            soft = (server.time.nowMs - c->obufSoftLimitReachedTime) / 1000 > lim->softSeconds;
        }
    } else if (!soft) {
        c->obufSoftLimitReachedTime = 0;
    }
    if (hard || soft) {
        serverLog(LL_WARNING,
                  "Client id=%llu addr=%s scheduled to be closed ASAP for overcoming of output buffer limits.",
                  (unsigned long long)c->id, c->addr);
        server.stats.clientOutbufLimitDisconnections++;
        clientFreeAsync(c);
    }
}

/* Gather the unsent reply bytes into iov: at most max buffers, stopping
 * before a block whose length is not known yet.  Returns the buffers
 * used; *total gets their bytes. */
static int replyIov(const Client *c, struct iovec *iov, int max, size_t *total) {
    int cnt = 0;
    size_t skip = c->sentlen;
    *total = 0;
    if (c->bufpos > 0) {
        iov[cnt].iov_base = (char *)c->buf + skip;
        iov[cnt].iov_len = c->bufpos - skip;
        *total += iov[cnt].iov_len;
        cnt++;
        skip = 0;
    }
    for (ReplyBlock *b = c->replyHead; b && cnt < max; b = b->next) {
        if (b->deferred) break; /* length not known yet: stop before it */
        if (skip < b->refLen) { /* referenced bytes first, then buf */
            iov[cnt].iov_base = (char *)b->ref + skip;
            iov[cnt].iov_len = b->refLen - skip;
            *total += iov[cnt].iov_len;
            cnt++;
            skip = 0;
            if (b->used == 0) continue;
            if (cnt == max) break;
            iov[cnt].iov_base = b->buf;
            iov[cnt].iov_len = b->used;
            *total += b->used;
            cnt++;
            continue;
        }
        skip -= b->refLen;
        if (b->used - skip == 0) {
            skip = 0;
            continue;
        }
        iov[cnt].iov_base = b->buf + skip;
        iov[cnt].iov_len = b->used - skip;
        *total += iov[cnt].iov_len;
        cnt++;
        skip = 0;
    }
    return cnt;
}

/* Account a write of what replyIov gathered (total bytes): n bytes went,
 * or -err.  Returns 1 if all of it went (more may follow), 0 if the
 * socket took less or nothing, -1 if the write failed and the client was
 * freed. */
static int writeDone(Client *c, long n, size_t total) {
    if (n < 0) return socketFailed(c, n, "Error writing to client");
    if (c->bufpos > c->bufPeak) c->bufPeak = c->bufpos;
    server.stats.netOutputBytes += n;
    server.stats.totalWritesProcessed++;
    c->lastInteraction = server.time.nowMs;
    /* Advance over what was written. */
    size_t left = (size_t)n;
    if (c->bufpos > 0) {
        size_t inbuf = c->bufpos - c->sentlen;
        if (left >= inbuf) {
            left -= inbuf;
            c->bufpos = 0;
            c->sentlen = 0;
        } else {
            c->sentlen += left;
            left = 0;
        }
    }
    while (left > 0 && c->replyHead) {
        ReplyBlock *b = c->replyHead;
        size_t inb = replyBlockLen(b) - c->sentlen;
        if (left >= inb) {
            left -= inb;
            c->replyHead = b->next;
            if (!c->replyHead) c->replyTail = NULL;
            c->replyBytes -= replyBlockLen(b);
            c->replyPinnedBytes -= b->refLen;
            c->replyBlocks--;
            c->replyAllocBytes -= sizeof(ReplyBlock) + b->size;
            c->sentlen = 0;
            replyBlockFree(b);
        } else {
            c->sentlen += left;
            left = 0;
        }
    }
    /* Drop fully sent empty blocks at the head. */
    while (c->replyHead && !c->replyHead->deferred && replyBlockLen(c->replyHead) == 0 && c->bufpos == 0) {
        ReplyBlock *b = c->replyHead;
        c->replyHead = b->next;
        if (!c->replyHead) c->replyTail = NULL;
        c->replyBlocks--;
        c->replyAllocBytes -= sizeof(ReplyBlock) + b->size;
        replyBlockFree(b);
    }
    return (size_t)n == total;
}

/* After writing: with nothing left, drop the writable handler (and free a
 * client that asked to close after its reply); with bytes left, make sure
 * the writable handler will send them.  Returns -1 if the client was
 * freed. */
static int writeFinish(Client *c) {
    if (!clientHasPendingReplies(c)) {
        c->obufSoftLimitReachedTime = 0;
        if (connEventMask(c->conn) & EV_WRITABLE) connEventDel(c->conn, EV_WRITABLE);
        if (c->flags & CLIENT_CLOSE_AFTER_REPLY) {
            clientFree(c);
            return -1;
        }
    } else if (!(connEventMask(c->conn) & EV_WRITABLE)) {
        connEventAdd(c->conn, EV_WRITABLE, writeHandler, c);
    }
    return 0;
}

/* Write as much as the socket takes.  Returns -1 if the client was freed. */
static int writeToClient(Client *c) {
    while (clientHasPendingReplies(c)) {
        struct iovec iov[IOV_MAX_WRITE];
        size_t total;
        int cnt = replyIov(c, iov, IOV_MAX_WRITE, &total);
        if (total == 0) break;
        /* One buffer (the usual small reply): sendto(), which costs the
         * kernel less than sendmsg(). */
        long n = cnt == 1 ? connWrite(c->conn, iov[0].iov_base, iov[0].iov_len) : connWritev(c->conn, iov, cnt);
        int r = writeDone(c, n < 0 ? -errno : n, total);
        if (r == -1) return -1;
        if (r == 0) break; /* socket full */
    }
    if (netClientMemoryHook) netClientMemoryHook(c);
    return writeFinish(c);
}

static void writeHandler(EventLoop *loop, int fd, void *data, int mask) {
    Client *c = data;
    serverBeforeReplyWrite();
    writeToClient(c);
}

/* Clients whose whole reply is in their buf, queued in the I/O batch. */
typedef struct WriteBatch {
    int n;
    Client *c[IOBATCH_MAX];
    size_t total[IOBATCH_MAX];
} WriteBatch;

/* Send the batch in one system call, then finish each client as
 * writeToClient would (a client the socket took everything from but that
 * has more, a deferred block now complete, goes on with writeToClient). */
static void flushWriteBatch(WriteBatch *wb) {
    long res[IOBATCH_MAX];
    connBatchRun(res);
    for (int i = 0; i < wb->n; i++) {
        Client *c = wb->c[i];
        int r = writeDone(c, res[i], wb->total[i]);
        if (r == -1) continue;
        if (r == 1 && clientHasPendingReplies(c)) writeToClient(c);
        else writeFinish(c);
    }
    wb->n = 0;
}

/* Before the loop sleeps: write every client with replies.  With io_uring
 * the replies that fit in the client's buf (nearly all at low pipelining)
 * go out in one system call; the rest, and everything without io_uring,
 * one write per client. */
void netHandlePendingWrites(void) {
    WriteBatch wb;
    wb.n = 0;
    for (;;) {
        while (server.net.pendingWrites) {
            Client *c = server.net.pendingWrites;
            server.net.pendingWrites = c->nextPendingWrite;
            c->flags &= ~CLIENT_PENDING_WRITE;
            if (c->flags & CLIENT_CLOSE_ASAP) continue;
            if (connEventMask(c->conn) & EV_WRITABLE) continue; /* the handler will do it */
            if (!clientHasPendingReplies(c)) {
                if (c->flags & CLIENT_CLOSE_AFTER_REPLY) clientFree(c);
                continue;
            }
            if (!c->replyHead && connCanBatch(c->conn)) { /* all of it in buf */
                size_t total = c->bufpos - c->sentlen;
                connBatchWrite(c->conn, c->buf + c->sentlen, total);
                wb.c[wb.n] = c;
                wb.total[wb.n++] = total;
                if (wb.n == IOBATCH_MAX) flushWriteBatch(&wb);
                continue;
            }
            writeToClient(c);
        }
        if (wb.n == 0) break;
        flushWriteBatch(&wb); /* finishing may queue more clients */
    }
}

/* --- cron --- */

long long netReplyBufferPeakResetMs = NET_REPLY_PEAK_RESET_DEFAULT_MS;
int netReplyBufferResizing = 1;

/* Redis 7.0's reply buffer resizing, at each cron tick: a buffer whose
 * recent peak (bufPeak, or what it holds now) stays under half its size
 * shrinks to just above that peak (1 KB at least); one that was filled
 * doubles (16 KB at most).  The peak is then reset every
 * netReplyBufferPeakResetMs (negative: never), so a client whose big
 * replies stopped gets a small buffer back.  DEBUG REPLYBUFFER RESIZING 0
 * stops both (the peak too).  A buffer holding an open deferred length
 * (a command is replying) is not moved. */
static void resizeReplyBuffer(Client *c, long long now) {
    if (!netReplyBufferResizing) return;
    size_t peak = c->bufPeak > c->bufpos ? c->bufPeak : c->bufpos;
    size_t size = 0;
    if (c->bufDeferredCount) {
        /* a length is open in the buffer: no move this tick */
    } else if (c->bufSize / 2 >= CLIENT_REPLY_BUF_MIN && peak < c->bufSize / 2) {
        size = peak + 1 > CLIENT_REPLY_BUF_MIN ? peak + 1 : CLIENT_REPLY_BUF_MIN;
        server.stats.replyBufferShrinks++;
    } else if (c->bufSize < CLIENT_REPLY_BUF && peak >= c->bufSize) {
        size = c->bufSize * 2 < CLIENT_REPLY_BUF ? c->bufSize * 2 : CLIENT_REPLY_BUF;
        server.stats.replyBufferExpands++;
    }
    if (netReplyBufferPeakResetMs >= 0 && now - c->bufPeakResetMs >= netReplyBufferPeakResetMs) {
        c->bufPeak = c->bufpos;
        c->bufPeakResetMs = now;
    }
    if (!size) return;
    char *buf = xmalloc(size);
    memcpy(buf, c->buf, c->bufpos);
    xfree(c->buf);
    c->buf = buf;
    c->bufSize = xmallocSize(buf);
}

/* Clients visited per cron tick at least (all of them when fewer). */
#define CLIENTS_CRON_MIN_VISITS 16

/* One client's periodic checks: the idle timeout, the query buffer's
 * shrink, the protocol's idle trim, the reply buffer's resize, the memory
 * re-measure and the output soft limit's seconds.  May free c. */
static void clientCronVisit(Client *c, long long now) {
    if (server.cfg.timeout &&
        !(c->flags & (CLIENT_BLOCKED | CLIENT_PUBSUB | CLIENT_MONITOR | CLIENT_MASTER | CLIENT_SLAVE)) &&
        (now - c->lastInteraction) / 1000 > server.cfg.timeout) {
        serverLog(LL_VERBOSE, "Closing idle client");
        clientFree(c);
        return;
    }
    if (sdsLen(c->querybuf) == 0 && sdsAllocSize(c->querybuf) > 2 * READ_CHUNK && c->qbPeak < 4096) {
        sdsFree(c->querybuf);
        c->querybuf = sdsEmpty();
    } else {
        c->qbPeak = sdsLen(c->querybuf);
    }
    /* An idle client gives back what its protocol keeps for reuse, so
     * many idle connections cost no more than before pooling. */
    if (now - c->lastInteraction >= IDLE_TRIM_MS) c->proto->trim(c->protoState);
    resizeReplyBuffer(c, now);
    if (netClientMemoryHook) netClientMemoryHook(c);
    /* The soft output limit's seconds run out without more output:
     * checked here too, as Redis's cron does. */
    if (c->obufSoftLimitReachedTime) netCheckOutputLimits(c);
}

/* Called hz times a second: visits a share of the clients, resuming where
 * the previous tick stopped, so a tick's time does not grow with the number
 * of connections (walking 1,000 idle clients every tick took ~0.3 ms).
 * Each tick visits ceil(clients / hz) of them, CLIENTS_CRON_MIN_VISITS at
 * least, so every client is visited at least once a second (hz ticks), as
 * in Redis: the timeout and the soft limit count whole seconds, and the
 * buffers' shrinks and the peak reset only need to come eventually.
 * Clients connected during a pass are appended at the tail and visited in
 * the same pass. */
void netClientsCron(void) {
    long long now = server.time.nowMs;
    unsigned long hz = server.cfg.hz > 0 ? (unsigned long)server.cfg.hz : 10;
    unsigned long visits = (server.net.numClients + hz - 1) / hz;
    if (visits < CLIENTS_CRON_MIN_VISITS) visits = CLIENTS_CRON_MIN_VISITS;
    if (visits > server.net.numClients) visits = server.net.numClients;
    while (visits--) {
        if (!cronCursor) cronCursor = server.net.clients;
        Client *c = cronCursor;
        if (!c) break;
        cronCursor = c->nextClient; /* before the visit: it may free c */
        clientCronVisit(c, now);
    }
}
