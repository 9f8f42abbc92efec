/* partition_shim.c -- an LD_PRELOAD shim that cuts one server's cluster
 * bus off from the others while a control file exists, to test network
 * partitions (test_cluster_bus.py).
 *
 * CAIRN_PARTITION_CTL names the control file; CAIRN_PARTITION_PORTS lists
 * TCP ports (comma-separated: the node's own bus port and its peers').
 * While the file exists, connect() to one of those ports fails with
 * ECONNREFUSED, and reads and writes (the recvfrom / sendto / sendmsg the
 * server makes through syscall()) on a socket whose local or peer port is
 * one of them fail with ECONNRESET.  Client and replication traffic on
 * other ports is untouched.  Without the variables nothing changes. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <dlfcn.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

static int ports[64], nports = -1;
static const char *ctl;

static void init(void) {
    if (nports >= 0) return;
    nports = 0;
    ctl = getenv("CAIRN_PARTITION_CTL");
    const char *p = getenv("CAIRN_PARTITION_PORTS");
    while (p && *p && nports < 64) {
        ports[nports++] = atoi(p);
        p = strchr(p, ',');
        if (p) p++;
    }
}

static int active(void) {
    init();
    return ctl && nports > 0 && access(ctl, F_OK) == 0;
}

static int listed(int port) {
    for (int i = 0; i < nports; i++)
        if (ports[i] == port) return 1;
    return 0;
}

static int portOf(const struct sockaddr *sa) {
    if (sa->sa_family == AF_INET) return ntohs(((const struct sockaddr_in *)sa)->sin_port);
    if (sa->sa_family == AF_INET6) return ntohs(((const struct sockaddr_in6 *)sa)->sin6_port);
    return -1;
}

static int blocked(int fd) {
    struct sockaddr_storage ss;
    socklen_t len = sizeof(ss);
    if (getsockname(fd, (struct sockaddr *)&ss, &len) == 0 && listed(portOf((struct sockaddr *)&ss))) return 1;
    len = sizeof(ss);
    if (getpeername(fd, (struct sockaddr *)&ss, &len) == 0 && listed(portOf((struct sockaddr *)&ss))) return 1;
    return 0;
}

long syscall(long n, ...) {
    static long (*real)(long, ...);
    if (!real) real = (long (*)(long, ...))dlsym(RTLD_NEXT, "syscall");
    va_list ap;
    long a[6];
    va_start(ap, n);
    for (int i = 0; i < 6; i++) a[i] = va_arg(ap, long);
    va_end(ap);
    if ((n == SYS_recvfrom || n == SYS_sendto || n == SYS_sendmsg) && active() && blocked((int)a[0])) {
        errno = ECONNRESET;
        return -1;
    }
    return real(n, a[0], a[1], a[2], a[3], a[4], a[5]);
}

int connect(int fd, const struct sockaddr *sa, socklen_t len) {
    static int (*real)(int, const struct sockaddr *, socklen_t);
    if (!real) real = (int (*)(int, const struct sockaddr *, socklen_t))dlsym(RTLD_NEXT, "connect");
    if (active() && sa && listed(portOf(sa))) {
        errno = ECONNREFUSED;
        return -1;
    }
    return real(fd, sa, len);
}
