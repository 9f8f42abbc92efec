/* iobatch.h -- many socket reads or writes in one system call (io_uring).
 *
 * A caller queues up to IOBATCH_MAX non-blocking recv/send operations,
 * each on a buffer that must stay put until ioBatchRun returns, then runs
 * them all at once.  Contract: after ioBatchRun, every queued operation
 * has finished (none is left in flight and no buffer is referenced any
 * more), and res[i] is the i-th queued operation's result: bytes moved,
 * or a negated errno (-EAGAIN when the socket had no data or no room).
 *
 * When io_uring cannot be used (kernel without it, a seccomp filter,
 * kernel.io_uring_disabled, or CAIRN_IO_URING=no in the environment)
 * ioBatchInit returns -1 and ioBatchEnabled stays 0; callers then make
 * one system call per socket. */
#ifndef CAIRN_IOBATCH_H
#define CAIRN_IOBATCH_H

#include <stddef.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#define IOBATCH_MAX 256

/* One socket call at a time.  Clients' sockets (TCP or unix, always
 * sockets) are read with recvfrom(2) and written with sendto(2)/sendmsg(2):
 * unlike read/write these skip the VFS layer (fdget_pos, rw_verify_area
 * with its permission hook, fsnotify, sock_read_iter/sock_write_iter), ~2%
 * of the server's CPU per request at pipeline 1.  MSG_NOSIGNAL makes a
 * closed peer an EPIPE error even if SIGPIPE's disposition changes.
 *
 * They go through syscall(2): once the process has more than one thread
 * (lazy freeing, the script watchdog, the allocator's), glibc's wrappers
 * switch each call to asynchronous cancellation and back, ~60 instructions
 * a request; the server never cancels a thread, and syscall(2) is not a
 * cancellation point. */
static inline long ioRecv(int fd, void *buf, size_t n) {
    return syscall(SYS_recvfrom, fd, buf, n, 0, NULL, NULL);
}
static inline long ioSend(int fd, const void *buf, size_t n) {
    return syscall(SYS_sendto, fd, buf, n, MSG_NOSIGNAL, NULL, 0);
}
static inline long ioSendv(int fd, const struct iovec *iov, int cnt) {
    struct msghdr m = {.msg_iov = (struct iovec *)iov, .msg_iovlen = (size_t)cnt};
    return syscall(SYS_sendmsg, fd, &m, MSG_NOSIGNAL);
}

/* Set up the ring.  0 when batching is available, -1 otherwise. */
int ioBatchInit(void);
/* 1 once ioBatchInit succeeded. */
int ioBatchEnabled(void);
/* Queue a recv into buf / a send of buf on socket fd.  The caller queues
 * at most IOBATCH_MAX before running them. */
void ioBatchRecv(int fd, void *buf, size_t len);
void ioBatchSend(int fd, const void *buf, size_t len);
/* Run every queued operation and fill res[0..n-1]; returns n. */
int ioBatchRun(long *res);

#endif
