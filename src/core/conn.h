/* conn.h -- the connection layer: every socket the server opens, accepts,
 * reads or writes goes through a Connection.
 *
 * A Connection is a socket (fd) with a ConnectionType, the table of its
 * operations: accept, connect, read, write, writev, close, peer and local
 * address, TCP options, event registration, and whether io_uring may batch
 * its reads and writes (core/iobatch.h).  Plain TCP (connTcpType) and unix
 * sockets (connUnixType) are the two types today; a TLS type plugs in its
 * own read/write/connect/accept and says it cannot be batched.
 *
 * A Listener binds addresses to a connection type, the request protocol
 * its clients speak (proto/protocol.h) and the reply encoder that turns
 * their replies into bytes.  The server's speak RESP; the HTTP gateway
 * (server/http.c) is one more Listener, with its own protocol and sink.
 *
 * Invariants:
 *   - Only the connection layer (conn.c, conn.h, iobatch.c, iobatch.h)
 *     makes socket calls; scripts/check-layers.sh enforces it.
 *   - A client without a connection is a fake client (Lua's caller, AOF
 *     loading, MULTI replay): c->conn == NULL, clientIsFake(c).
 *   - The per-request calls (connRead, connWrite, connWritev) are inline:
 *     for a type flagged plain (CONN_PLAIN: its read/write are the socket
 *     calls themselves) they make the system call directly, with no
 *     indirect call; another type goes through its table.
 *   - Connections are non-blocking unless connSetBlocking says otherwise.
 *
 * Errors follow the system calls': -1 with errno set (EAGAIN: try later),
 * 0 from a read at end of stream. */
#ifndef CAIRN_CONN_H
#define CAIRN_CONN_H

#include <errno.h>
#include <stddef.h>
#include <sys/uio.h>

#include "core/event.h"
#include "core/iobatch.h"
#include "proto/protocol.h"
#include "proto/reply_sink.h"

typedef struct Connection Connection;
typedef struct Listener Listener;

/* Where and how a type listens (ConnectionType.listen). */
typedef struct ConnListenSpec {
    const char *addr;   /* TCP: an IPv4/IPv6 address ("*", "::*", "localhost"); unix: the path */
    int port;           /* TCP only */
    int backlog;
    unsigned mark;      /* TCP: SO_MARK, 0: none */
    unsigned perm;      /* unix: the socket file's mode, 0: leave it */
} ConnListenSpec;

typedef struct ConnectionType {
    const char *name;   /* "tcp", "unix" */
    int isUnix;         /* clients flagged CLIENT_UNIX_SOCKET */
    /* CONN_PLAIN: read/write/writev are recvfrom/sendto/sendmsg on fd, so
     * the inline calls make them directly and io_uring may batch them. */
    unsigned flags;
    /* A listening socket for spec (non-blocking, close-on-exec): its fd,
     * or -1 with errno set. */
    int (*listen)(const ConnListenSpec *spec);
    /* One connection from listening socket lfd of l: the new connection
     * (non-blocking) with its peer's address written to peer ("ip:port",
     * "path:0"), or NULL with errno set (EAGAIN: none waiting). */
    Connection *(*accept)(Listener *l, int lfd, char *peer, size_t peerLen);
    /* Starts a non-blocking connect to host:port (port as getaddrinfo's
     * service: a number or a name; unix: host is the path) from source
     * (NULL: any) on its first address.  The connection, or NULL with *err
     * saying why (a static string). */
    Connection *(*connect)(const char *host, const char *port, const char *source, const char **err);
    /* Connects to host:port trying each address in turn until one connects
     * or is in progress, then waits up to timeoutMs for it to become
     * writable.  As Redis's MIGRATE: only a connect that fails at once is
     * an error; a refused or slow one shows at the first write.  The
     * connection (non-blocking), or NULL. */
    Connection *(*connectTimeout)(const char *host, const char *port, long timeoutMs);
    long (*read)(Connection *conn, void *buf, size_t len);
    long (*write)(Connection *conn, const void *buf, size_t len);
    long (*writev)(Connection *conn, const struct iovec *iov, int cnt);
    /* Unregisters its events, closes the socket, frees conn. */
    void (*close)(Connection *conn);
    /* "ip:port" (TCP) or "path:0" (unix) into buf; 0, or -1 when unknown. */
    int (*peerAddr)(Connection *conn, char *buf, size_t len);
    int (*localAddr)(Connection *conn, char *buf, size_t len);
    /* TCP_NODELAY on or off; keepalive every secs (0: leave it).  No-ops
     * for unix sockets. */
    void (*setNoDelay)(Connection *conn, int on);
    void (*setKeepalive)(Connection *conn, int secs);
    /* Event registration on the server's loop (core/event.h). */
    int (*eventAdd)(Connection *conn, int mask, FileProc *proc, void *data);
    void (*eventDel)(Connection *conn, int mask);
    /* Optional (NULL for plain sockets, whose answers come from the fd):
     * the events registered by eventAdd (EV_READABLE | EV_WRITABLE), which
     * a type that registers its own handler on the fd keeps apart;
     * whether bytes already read from the socket wait inside the type
     * (TLS records OpenSSL has decrypted); and connCheckConnected's answer
     * for a connection whose connect is more than the socket's (a TLS
     * handshake). */
    int (*eventMask)(const Connection *conn);
    int (*pending)(const Connection *conn);
    int (*checkConnected)(Connection *conn);
} ConnectionType;

#define CONN_PLAIN 1u        /* ConnectionType.flags */
#define CONN_LOOPBACK 2u     /* Connection.flags: accepted from 127.0.0.1, ::1 (or unix) */

struct Connection {
    const ConnectionType *type;
    int fd;                   /* the socket */
    unsigned flags;           /* the type's CONN_PLAIN, CONN_LOOPBACK */
    const Listener *listener; /* accepted from; NULL for one we connected */
};

extern const ConnectionType connTcpType;
extern const ConnectionType connUnixType;

/* --- TLS (core/conn_tls.c; with `make TLS=no` these say TLS is off) --- */

/* The TLS type (OpenSSL): accepted connections run the server side of a
 * non-blocking handshake bounded in time before their handler sees any
 * event; connected ones run the client side before the writable event a
 * connect waits for.  Not plain: never batched by io_uring.  NULL-safe to
 * name only when connTlsAvailable(). */
extern const ConnectionType connTlsType;
/* 1 when the binary is built with TLS. */
int connTlsAvailable(void);
/* The certificate the peer of a TLS connection presented, PEM-encoded (a
 * new sds), or NULL: not a TLS connection, or no certificate. */
sds connTlsPeerCertPem(Connection *c);
/* The tls-* directives (from main.c's registerConfig). */
void tlsRegisterConfig(void);
/* At start-up, after the config is read: builds the TLS contexts when
 * tls-port, tls-replication or tls-cluster asks for TLS.  0, or -1 after
 * logging why (the caller exits). */
int tlsStartup(void);
/* tls-port (0: none). */
int tlsPort(void);
/* For a listener on connTlsType other than tls-port's (the HTTP gateway's
 * http-tls-port): builds the server context from the tls-* directives if
 * it is not built yet, and keeps it rebuilt by CONFIG SET tls-* from then
 * on.  0, or -1 after logging why (no TLS in this build, bad files). */
int tlsRequireServer(void);
/* The type the replica's link (tls-replication) and MIGRATE (tls-cluster,
 * as Redis) connect with: connTlsType or connTcpType. */
const ConnectionType *connTypeForReplication(void);
const ConnectionType *connTypeForCluster(void);

/* A listener's reply encoder: how its clients' replies become bytes.  RESP
 * (respEncoder) has no sink: the reply API writes RESP2/RESP3 bytes itself
 * (core/reply.c).  A front-end with another wire format names a sink type
 * whose instance its clients reply through (CLIENT_REPLY_SINK). */
struct Client;
typedef struct ReplyEncoder {
    const char *name;            /* "resp" */
    const ReplySinkType *sink;   /* NULL: RESP bytes inline */
    /* With a sink: the instance a new client of the listener replies
     * through (clientCreate flags it CLIENT_REPLY_SINK); it may live in
     * the client's protocol state. */
    ReplySink *(*attach)(struct Client *c);
} ReplyEncoder;

extern const ReplyEncoder respEncoder;

#define LISTENER_MAX_FDS 32 /* at least CONFIG_MAX_BIND (16) addresses */

/* A listener: its bound sockets and what its connections speak. */
struct Listener {
    const char *name;             /* for logs: "tcp", "unix" */
    const ConnectionType *type;
    const Protocol *proto;        /* the request parser its clients get */
    const ReplyEncoder *encoder;  /* their reply encoder */
    const char *path;             /* unix: the bound path (owned), NULL */
    int fds[LISTENER_MAX_FDS];    /* listening sockets */
    int count;
};

/* Binds spec with l's type and adds the socket to l.  0, or -1 with errno
 * set (nothing added).  A unix listener keeps the path to unlink at
 * close. */
int listenerBind(Listener *l, const ConnListenSpec *spec);
/* Calls proc (data: l) when a listening socket of l has connections. */
void listenerInstall(Listener *l, FileProc *proc);
/* Unregisters and closes every socket of l; with unlinkPath a unix
 * listener also removes its socket file.  l may be bound again. */
void listenerClose(Listener *l, int unlinkPath);
/* In a forked child: closes its copies of l's sockets, nothing else (the
 * epoll set and the socket file are the parent's). */
void listenerCloseInChild(Listener *l);
/* One waiting connection on lfd (see ConnectionType.accept). */
static inline Connection *connAccept(Listener *l, int lfd, char *peer, size_t peerLen) {
    return l->type->accept(l, lfd, peer, peerLen);
}

/* --- the per-request path: inline, direct for plain types --- */

static inline long connRead(Connection *conn, void *buf, size_t len) {
    if (conn->flags & CONN_PLAIN) return ioRecv(conn->fd, buf, len);
    return conn->type->read(conn, buf, len);
}
static inline long connWrite(Connection *conn, const void *buf, size_t len) {
    if (conn->flags & CONN_PLAIN) return ioSend(conn->fd, buf, len);
    return conn->type->write(conn, buf, len);
}
static inline long connWritev(Connection *conn, const struct iovec *iov, int cnt) {
    if (conn->flags & CONN_PLAIN) return ioSendv(conn->fd, iov, cnt);
    return conn->type->writev(conn, iov, cnt);
}

/* io_uring batching (core/iobatch.h): 1 when conn's reads and writes may
 * be queued in a batch (batching is on and the type is plain). */
static inline int connCanBatch(const Connection *conn) { return (conn->flags & CONN_PLAIN) && ioBatchEnabled(); }
/* Sets up batching (ioBatchInit): 0 when it is available, -1 otherwise. */
static inline int connBatchInit(void) { return ioBatchInit(); }
/* Queue a read into / a write of buf for the next connBatchRun (at most
 * IOBATCH_MAX queued; buf must stay put until then). */
static inline void connBatchRead(Connection *conn, void *buf, size_t len) { ioBatchRecv(conn->fd, buf, len); }
static inline void connBatchWrite(Connection *conn, const void *buf, size_t len) { ioBatchSend(conn->fd, buf, len); }
/* Runs every queued read and write: res[i] is the i-th one's bytes or
 * -errno (ioBatchRun).  Returns how many ran. */
static inline int connBatchRun(long *res) { return ioBatchRun(res); }

/* --- events --- */

static inline int connEventAdd(Connection *conn, int mask, FileProc *proc, void *data) {
    return conn->type->eventAdd(conn, mask, proc, data);
}
static inline void connEventDel(Connection *conn, int mask) { conn->type->eventDel(conn, mask); }
/* The loop connections register on (connInit). */
extern EventLoop *connLoop;
/* Wires the layer to the server's event loop, once, before any
 * connection exists. */
void connInit(EventLoop *loop);
/* The events registered for conn (EV_READABLE | EV_WRITABLE). */
static inline int connEventMask(const Connection *conn) {
    if (conn->flags & CONN_PLAIN) return eventMask(connLoop, conn->fd);
    return conn->type->eventMask(conn);
}

/* --- the rest of the operations --- */

static inline void connClose(Connection *conn) { conn->type->close(conn); }
static inline int connPeerAddr(Connection *conn, char *buf, size_t len) { return conn->type->peerAddr(conn, buf, len); }
static inline int connLocalAddr(Connection *conn, char *buf, size_t len) {
    return conn->type->localAddr(conn, buf, len);
}
static inline void connSetNoDelay(Connection *conn, int on) { conn->type->setNoDelay(conn, on); }
static inline void connSetKeepalive(Connection *conn, int secs) { conn->type->setKeepalive(conn, secs); }
/* The socket's descriptor (CLIENT LIST fd=, crash reports). */
static inline int connFd(const Connection *conn) { return conn->fd; }
/* 1 when the peer is 127.0.0.1, ::1 or on a unix socket (protected mode). */
static inline int connIsLoopback(const Connection *conn) { return (conn->flags & CONN_LOOPBACK) != 0; }

/* A non-blocking connect to host:port started with type (from source when
 * not NULL), first address only; the caller waits for EV_WRITABLE and then
 * calls connCheckConnected.  NULL with *err (static text) on failure. */
static inline Connection *connConnect(const ConnectionType *type, const char *host, const char *port,
                                      const char *source, const char **err) {
    return type->connect(host, port, source, err);
}
/* After a non-blocking connect signalled writable: 0 when connected, else
 * the socket's error (an errno value). */
int connCheckConnected(Connection *conn);

/* --- blocking helpers with timeouts (MIGRATE, the replica's load, a later
 * cluster bus).  Deadlines and timeouts are in ms. --- */

/* A connection made with type's connectTimeout (see there). */
static inline Connection *connConnectTimeout(const ConnectionType *type, const char *host, const char *port,
                                             long timeoutMs) {
    return type->connectTimeout(host, port, timeoutMs);
}
/* Waits until conn is readable (EV_READABLE) or writable (EV_WRITABLE) for
 * at most ms.  1 ready, 0 not yet (timeout or a signal), -1 error. */
int connWait(Connection *conn, int mask, long long ms);
/* Writes all len bytes before deadline (mstime() scale).  0, or -1 (errno
 * ETIMEDOUT on the deadline). */
int connSyncWrite(Connection *conn, const char *p, size_t len, long long deadline);
/* Reads one line, up to '\n', within timeoutMs: its bytes without CRLF,
 * cut to size - 1, NUL-terminated in buf.  Its length, or -1 (errno
 * ETIMEDOUT, or ECONNRESET when the peer closed). */
int connSyncReadLine(Connection *conn, char *buf, size_t size, long timeoutMs);
/* Writes all len bytes on a blocking connection (retrying on EINTR).  0 or
 * -1. */
int connWriteAll(Connection *conn, const char *p, size_t len);
/* Blocking mode on (with a send timeout of sendTimeoutSec) or off again. */
void connSetBlocking(Connection *conn, int on, int sendTimeoutSec);

/* sd_notify without libsystemd: one datagram with msg to $NOTIFY_SOCKET
 * (nothing when it is not set). */
void connNotifySystemd(const char *msg);

/* host as a numeric address in out (at most outLen bytes, 46 suffice):
 * an IPv4/IPv6 literal as is (normalized), else, unless ipOnly, the first
 * address the resolver gives (a blocking lookup).  0, or -1. */
int connResolveHost(const char *host, int ipOnly, char *out, size_t outLen);

#endif
