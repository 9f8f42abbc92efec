/* conn.c -- the connection layer (conn.h): plain TCP and unix socket
 * connection types, listeners, and the blocking helpers with timeouts.
 *
 * This file, conn.h and iobatch.{c,h} are the only places that make socket
 * calls (scripts/check-layers.sh).  The two types share every operation
 * but listen, accept and the addresses: both are plain sockets, read with
 * recvfrom and written with sendto/sendmsg (iobatch.h's ioRecv/ioSend/
 * ioSendv, called inline by conn.h for CONN_PLAIN types), registered on
 * the server's event loop by fd. */
#include "core/conn.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "ds/alloc.h"
#include "ds/util.h"

const ReplyEncoder respEncoder = {.name = "resp", .sink = NULL};

EventLoop *connLoop;

void connInit(EventLoop *loop) { connLoop = loop; }

/* --- helpers --- */

static int waitUntil(Connection *conn, int mask, long long deadline);

static int setNonBlock(int fd, int on) {
    int flags = fcntl(fd, F_GETFL);
    if (flags == -1) return -1;
    return fcntl(fd, F_SETFL, on ? flags | O_NONBLOCK : flags & ~O_NONBLOCK);
}

static Connection *connNew(const ConnectionType *type, int fd, const Listener *l) {
    Connection *conn = xcalloc(sizeof(Connection));
    conn->type = type;
    conn->fd = fd;
    conn->flags = type->flags & CONN_PLAIN;
    conn->listener = l;
    return conn;
}

static void formatAddr(const struct sockaddr_storage *sa, char *out, size_t outlen) {
    char ip[INET6_ADDRSTRLEN] = "?";
    int port = 0;
    if (sa->ss_family == AF_INET) {
        const struct sockaddr_in *s = (const struct sockaddr_in *)sa;
        inet_ntop(AF_INET, &s->sin_addr, ip, sizeof(ip));
        port = ntohs(s->sin_port);
    } else if (sa->ss_family == AF_INET6) {
        const struct sockaddr_in6 *s = (const struct sockaddr_in6 *)sa;
        inet_ntop(AF_INET6, &s->sin6_addr, ip, sizeof(ip));
        port = ntohs(s->sin6_port);
    }
    snprintf(out, outlen, "%s:%d", ip, port);
}

/* Protected mode trusts exactly 127.0.0.1 and ::1, as Redis does (not the
 * rest of 127/8). */
static int isLoopback(const struct sockaddr_storage *sa) {
    if (sa->ss_family == AF_INET) {
        const struct sockaddr_in *s = (const struct sockaddr_in *)sa;
        return ntohl(s->sin_addr.s_addr) == 0x7f000001;
    }
    if (sa->ss_family == AF_INET6) {
        const struct sockaddr_in6 *s = (const struct sockaddr_in6 *)sa;
        return IN6_IS_ADDR_LOOPBACK(&s->sin6_addr);
    }
    return 0;
}

/* --- operations both socket types share --- */

static long sockRead(Connection *conn, void *buf, size_t len) { return ioRecv(conn->fd, buf, len); }
static long sockWrite(Connection *conn, const void *buf, size_t len) { return ioSend(conn->fd, buf, len); }
static long sockWritev(Connection *conn, const struct iovec *iov, int cnt) { return ioSendv(conn->fd, iov, cnt); }

static void sockClose(Connection *conn) {
    if (conn->fd != -1) {
        eventDel(connLoop, conn->fd, EV_READABLE | EV_WRITABLE);
        close(conn->fd);
    }
    xfree(conn);
}

static int sockEventAdd(Connection *conn, int mask, FileProc *proc, void *data) {
    return eventAdd(connLoop, conn->fd, mask, proc, data);
}

static void sockEventDel(Connection *conn, int mask) { eventDel(connLoop, conn->fd, mask); }


static void noOption(Connection *conn, int v) { (void)conn, (void)v; }

/* --- TCP --- */

static int tcpListen(const ConnListenSpec *spec) {
    const char *addr = spec->addr;
    int v6 = strchr(addr, ':') != NULL;
    struct sockaddr_storage ss;
    memset(&ss, 0, sizeof(ss));
    socklen_t len;
    if (v6) {
        struct sockaddr_in6 *s = (struct sockaddr_in6 *)&ss;
        s->sin6_family = AF_INET6;
        s->sin6_port = htons((uint16_t)spec->port);
        const char *host = strcmp(addr, "::*") == 0 ? "::" : addr;
        if (inet_pton(AF_INET6, host, &s->sin6_addr) != 1) {
            errno = EINVAL;
            return -1;
        }
        len = sizeof(*s);
    } else {
        struct sockaddr_in *s = (struct sockaddr_in *)&ss;
        s->sin_family = AF_INET;
        s->sin_port = htons((uint16_t)spec->port);
        const char *host = strcmp(addr, "*") == 0 ? "0.0.0.0" : addr;
        if (strcmp(host, "localhost") == 0) host = "127.0.0.1";
        if (inet_pton(AF_INET, host, &s->sin_addr) != 1) {
            errno = EINVAL;
            return -1;
        }
        len = sizeof(*s);
    }
    int fd = socket(v6 ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd == -1) return -1;
    int yes = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
    if (v6) setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &yes, sizeof(yes));
    unsigned mark = spec->mark; /* socket-mark-id */
    if ((mark && setsockopt(fd, SOL_SOCKET, SO_MARK, &mark, sizeof(mark)) == -1) ||
        bind(fd, (struct sockaddr *)&ss, len) == -1 || listen(fd, spec->backlog) == -1 || setNonBlock(fd, 1) == -1) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    return fd;
}

static Connection *tcpAccept(Listener *l, int lfd, char *peer, size_t peerLen) {
    struct sockaddr_storage sa;
    socklen_t len = sizeof(sa);
    int fd = accept4(lfd, (struct sockaddr *)&sa, &len, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd == -1) return NULL;
    Connection *conn = connNew(&connTcpType, fd, l);
    if (isLoopback(&sa)) conn->flags |= CONN_LOOPBACK;
    formatAddr(&sa, peer, peerLen);
    return conn;
}

/* bind-source-addr: the connection leaves from that address (best effort:
 * when it cannot be bound it goes from any). */
static void bindSource(int fd, int family, const char *source) {
    struct addrinfo hints = {.ai_family = family, .ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE}, *src = NULL;
    if (getaddrinfo(source, NULL, &hints, &src) != 0) return;
    for (struct addrinfo *a = src; a; a = a->ai_next)
        if (bind(fd, a->ai_addr, a->ai_addrlen) == 0) break;
    freeaddrinfo(src);
}

static Connection *tcpConnect(const char *host, const char *port, const char *source, const char **err) {
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *res = NULL;
    int rc = getaddrinfo(host, port, &hints, &res);
    if (rc != 0) {
        *err = gai_strerror(rc);
        return NULL;
    }
    int fd = socket(res->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd != -1 && source) bindSource(fd, res->ai_family, source);
    if (fd == -1 || (connect(fd, res->ai_addr, res->ai_addrlen) == -1 && errno != EINPROGRESS)) {
        *err = strerror(errno);
        if (fd != -1) close(fd);
        freeaddrinfo(res);
        return NULL;
    }
    freeaddrinfo(res);
    Connection *conn = connNew(&connTcpType, fd, NULL);
    connSetNoDelay(conn, 1);
    return conn;
}

static Connection *tcpConnectTimeout(const char *host, const char *port, long timeoutMs) {
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *res, *ai;
    if (getaddrinfo(host, port, &hints, &res) != 0) return NULL;
    Connection *conn = NULL;
    long long deadline = deadlineAfter(mstime(), timeoutMs);
    for (ai = res; ai; ai = ai->ai_next) {
        int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
        if (fd < 0) continue;
        setNonBlock(fd, 1);
        conn = connNew(&connTcpType, fd, NULL);
        int rc = connect(fd, ai->ai_addr, ai->ai_addrlen);
        if (rc < 0 && errno == EINPROGRESS) {
            waitUntil(conn, EV_WRITABLE, deadline);
            rc = 0;
        }
        if (rc == 0) break;
        close(fd);
        xfree(conn);
        conn = NULL;
    }
    freeaddrinfo(res);
    if (conn) connSetNoDelay(conn, 1);
    return conn;
}

static int tcpAddr(Connection *conn, char *buf, size_t len, int local) {
    struct sockaddr_storage sa;
    socklen_t sl = sizeof(sa);
    int r = local ? getsockname(conn->fd, (struct sockaddr *)&sa, &sl) : getpeername(conn->fd, (struct sockaddr *)&sa, &sl);
    if (r == -1) return -1;
    formatAddr(&sa, buf, len);
    return 0;
}

static int tcpPeerAddr(Connection *conn, char *buf, size_t len) { return tcpAddr(conn, buf, len, 0); }
static int tcpLocalAddr(Connection *conn, char *buf, size_t len) { return tcpAddr(conn, buf, len, 1); }

static void tcpSetNoDelay(Connection *conn, int on) {
    setsockopt(conn->fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof(on));
}

static void tcpSetKeepalive(Connection *conn, int interval) {
    if (interval <= 0) return;
    int yes = 1, fd = conn->fd;
    setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &yes, sizeof(yes));
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &interval, sizeof(interval));
    int intvl = interval / 3 ? interval / 3 : 1, cnt = 3;
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &intvl, sizeof(intvl));
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &cnt, sizeof(cnt));
}

const ConnectionType connTcpType = {
    .name = "tcp",
    .isUnix = 0,
    .flags = CONN_PLAIN,
    .listen = tcpListen,
    .accept = tcpAccept,
    .connect = tcpConnect,
    .connectTimeout = tcpConnectTimeout,
    .read = sockRead,
    .write = sockWrite,
    .writev = sockWritev,
    .close = sockClose,
    .peerAddr = tcpPeerAddr,
    .localAddr = tcpLocalAddr,
    .setNoDelay = tcpSetNoDelay,
    .setKeepalive = tcpSetKeepalive,
    .eventAdd = sockEventAdd,
    .eventDel = sockEventDel,
};

/* --- unix sockets --- */

static int unixListen(const ConnListenSpec *spec) {
    const char *path = spec->addr;
    struct sockaddr_un sa;
    memset(&sa, 0, sizeof(sa));
    sa.sun_family = AF_UNIX;
    if (strlen(path) >= sizeof(sa.sun_path)) {
        errno = ENAMETOOLONG;
        return -1;
    }
    strcpy(sa.sun_path, path);
    unlink(path);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd == -1 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == -1 || listen(fd, spec->backlog) == -1 ||
        setNonBlock(fd, 1) == -1) {
        int e = errno;
        if (fd != -1) close(fd);
        errno = e;
        return -1;
    }
    if (spec->perm) chmod(path, spec->perm);
    return fd;
}

static Connection *unixAccept(Listener *l, int lfd, char *peer, size_t peerLen) {
    int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd == -1) return NULL;
    Connection *conn = connNew(&connUnixType, fd, l);
    conn->flags |= CONN_LOOPBACK;
    snprintf(peer, peerLen, "%s:0", l->path ? l->path : "");
    return conn;
}

static Connection *unixConnect(const char *path, const char *port, const char *source, const char **err) {
    (void)port, (void)source;
    struct sockaddr_un sa;
    memset(&sa, 0, sizeof(sa));
    sa.sun_family = AF_UNIX;
    if (strlen(path) >= sizeof(sa.sun_path)) {
        *err = strerror(ENAMETOOLONG);
        return NULL;
    }
    strcpy(sa.sun_path, path);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd == -1 || (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == -1 && errno != EINPROGRESS)) {
        *err = strerror(errno);
        if (fd != -1) close(fd);
        return NULL;
    }
    return connNew(&connUnixType, fd, NULL);
}

static Connection *unixConnectTimeout(const char *path, const char *port, long timeoutMs) {
    const char *err;
    Connection *conn = unixConnect(path, port, NULL, &err);
    if (conn) waitUntil(conn, EV_WRITABLE, deadlineAfter(mstime(), timeoutMs));
    return conn;
}

/* Redis names both ends of a unix connection "path:0". */
static int unixAddr(Connection *conn, char *buf, size_t len) {
    if (!conn->listener || !conn->listener->path) return -1;
    snprintf(buf, len, "%s:0", conn->listener->path);
    return 0;
}

const ConnectionType connUnixType = {
    .name = "unix",
    .isUnix = 1,
    .flags = CONN_PLAIN,
    .listen = unixListen,
    .accept = unixAccept,
    .connect = unixConnect,
    .connectTimeout = unixConnectTimeout,
    .read = sockRead,
    .write = sockWrite,
    .writev = sockWritev,
    .close = sockClose,
    .peerAddr = unixAddr,
    .localAddr = unixAddr,
    .setNoDelay = noOption,
    .setKeepalive = noOption,
    .eventAdd = sockEventAdd,
    .eventDel = sockEventDel,
};

/* --- listeners --- */

int listenerBind(Listener *l, const ConnListenSpec *spec) {
    if (l->count == LISTENER_MAX_FDS) {
        errno = EMFILE;
        return -1;
    }
    int fd = l->type->listen(spec);
    if (fd == -1) return -1;
    l->fds[l->count++] = fd;
    if (l->type->isUnix) {
        xfree((char *)l->path);
        l->path = xstrdup(spec->addr);
    }
    return 0;
}

void listenerInstall(Listener *l, FileProc *proc) {
    for (int i = 0; i < l->count; i++) eventAdd(connLoop, l->fds[i], EV_READABLE, proc, l);
}

void listenerClose(Listener *l, int unlinkPath) {
    for (int i = 0; i < l->count; i++) {
        eventDel(connLoop, l->fds[i], EV_READABLE);
        close(l->fds[i]);
    }
    if (unlinkPath && l->count && l->path) unlink(l->path);
    l->count = 0;
}

void listenerCloseInChild(Listener *l) {
    for (int i = 0; i < l->count; i++) close(l->fds[i]);
}

/* --- connecting --- */

int connCheckConnected(Connection *conn) {
    if (conn->type->checkConnected) return conn->type->checkConnected(conn);
    int err = 0;
    socklen_t len = sizeof(err);
    if (getsockopt(conn->fd, SOL_SOCKET, SO_ERROR, &err, &len) == -1) err = errno;
    return err;
}

/* --- blocking helpers --- */

int connWait(Connection *conn, int mask, long long ms) {
    if ((mask & EV_READABLE) && conn->type->pending && conn->type->pending(conn)) return 1;
    struct pollfd p = {.fd = conn->fd, .events = (short)((mask & EV_READABLE ? POLLIN : 0) | (mask & EV_WRITABLE ? POLLOUT : 0))};
    int n = poll(&p, 1, (int)(ms > 1000000 ? 1000000 : ms));
    if (n > 0) return 1;
    if (n == 0 || errno == EINTR) return 0;
    return -1;
}

/* Waits for mask until deadline: 0 ready, -1 (errno ETIMEDOUT on the
 * deadline). */
static int waitUntil(Connection *conn, int mask, long long deadline) {
    for (;;) {
        long long left = deadline - mstime();
        if (left <= 0) {
            errno = ETIMEDOUT;
            return -1;
        }
        int r = connWait(conn, mask, left);
        if (r > 0) return 0;
        if (r < 0) return -1;
    }
}

int connSyncWrite(Connection *conn, const char *p, size_t len, long long deadline) {
    size_t done = 0;
    while (done < len) {
        long n = connWrite(conn, p + done, len - done);
        if (n > 0) {
            done += (size_t)n;
        } else if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
            if (waitUntil(conn, EV_WRITABLE, deadline) < 0) return -1;
        } else {
            return -1;
        }
    }
    return 0;
}

int connSyncReadLine(Connection *conn, char *buf, size_t size, long timeoutMs) {
    long long deadline = deadlineAfter(mstime(), timeoutMs);
    size_t len = 0;
    for (;;) {
        char ch;
        long n = connRead(conn, &ch, 1);
        if (n == 1) {
            if (ch == '\n') break;
            if (len < size - 1) buf[len++] = ch;
        } else if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
            if (waitUntil(conn, EV_READABLE, deadline) < 0) return -1;
        } else {
            if (n == 0) errno = ECONNRESET;
            return -1;
        }
    }
    if (len && buf[len - 1] == '\r') len--;
    buf[len] = '\0';
    return (int)len;
}

int connWriteAll(Connection *conn, const char *p, size_t len) {
    while (len) {
        long n = connWrite(conn, p, len);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return -1;
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

void connSetBlocking(Connection *conn, int on, int sendTimeoutSec) {
    if (fcntl(conn->fd, F_GETFL) == -1) return;
    setNonBlock(conn->fd, !on);
    struct timeval tv = {on ? sendTimeoutSec : 0, 0};
    setsockopt(conn->fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
}

void connNotifySystemd(const char *msg) {
    const char *path = getenv("NOTIFY_SOCKET");
    if (!path || !path[0]) return;
    struct sockaddr_un sa;
    memset(&sa, 0, sizeof(sa));
    sa.sun_family = AF_UNIX;
    size_t len = strlen(path);
    if (len >= sizeof(sa.sun_path)) return;
    memcpy(sa.sun_path, path, len);
    if (sa.sun_path[0] == '@') sa.sun_path[0] = '\0'; /* abstract namespace */
    int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd == -1) return;
    sendto(fd, msg, strlen(msg), 0, (struct sockaddr *)&sa, (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len));
    close(fd);
}

int connResolveHost(const char *host, int ipOnly, char *out, size_t outLen) {
    unsigned char buf[sizeof(struct in6_addr)];
    if (inet_pton(AF_INET, host, buf) == 1) return inet_ntop(AF_INET, buf, out, (socklen_t)outLen) ? 0 : -1;
    if (inet_pton(AF_INET6, host, buf) == 1) return inet_ntop(AF_INET6, buf, out, (socklen_t)outLen) ? 0 : -1;
    if (ipOnly) return -1;
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *res;
    if (getaddrinfo(host, NULL, &hints, &res) != 0) return -1;
    int rc = -1;
    if (res->ai_family == AF_INET)
        rc = inet_ntop(AF_INET, &((struct sockaddr_in *)res->ai_addr)->sin_addr, out, (socklen_t)outLen) ? 0 : -1;
    else if (res->ai_family == AF_INET6)
        rc = inet_ntop(AF_INET6, &((struct sockaddr_in6 *)res->ai_addr)->sin6_addr, out, (socklen_t)outLen) ? 0
                                                                                                          : -1;
    freeaddrinfo(res);
    return rc;
}
