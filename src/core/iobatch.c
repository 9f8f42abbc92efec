/* iobatch.c -- many socket reads or writes in one system call (io_uring).
 *
 * At pipeline 1 each request costs the server one recvfrom and one sendto,
 * and every system call pays the kernel's entry and exit (~275 ns on the
 * VMs here, with retpolines): about 5% of the server's CPU per request.
 * When one loop turn finds many clients ready, the net layer queues their
 * reads here (and, before sleeping, their writes) and runs them with one
 * io_uring_enter.
 *
 * Every operation carries MSG_DONTWAIT, so io_uring never parks it to wait
 * for readiness: a socket with no data or no room completes at once with
 * -EAGAIN, and every operation completes inside the submitting call.
 * ioBatchRun still waits for all completions before returning, so no
 * buffer is referenced after it returns whatever the kernel does.
 *
 * A batch of one is made as a plain system call, which is cheaper.  If the
 * ring ever fails to take a batch, it is torn down (which drops whatever
 * it had not started), the batch is made one call at a time and batching
 * stays off. */
#include "core/iobatch.h"

#include <errno.h>
#include <liburing.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"

typedef struct IoOp {
    int fd;
    int send;          /* 1 send, 0 recv */
    void *buf;
    size_t len;
} IoOp;

static struct io_uring ring;
static int enabled;
static IoOp ops[IOBATCH_MAX];
static int queued;

int ioBatchInit(void) {
    const char *env = getenv("CAIRN_IO_URING");
    if (env && (strcmp(env, "no") == 0 || strcmp(env, "0") == 0)) {
        serverLog(LL_NOTICE, "io_uring is off (CAIRN_IO_URING=%s): one system call per socket read or write", env);
        return -1;
    }
    /* One thread submits; completions need no task work from interrupts. */
    unsigned flags = IORING_SETUP_SUBMIT_ALL | IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN;
    int r = io_uring_queue_init(IOBATCH_MAX, &ring, flags);
    if (r == -EINVAL) r = io_uring_queue_init(IOBATCH_MAX, &ring, 0); /* kernels before 6.1 */
    if (r < 0) {
        serverLog(LL_NOTICE, "io_uring is not available (%s): one system call per socket read or write", strerror(-r));
        return -1;
    }
    serverLog(LL_NOTICE, "Socket reads and writes are batched with io_uring");
    enabled = 1;
    return 0;
}

int ioBatchEnabled(void) { return enabled; }

static void queue(int fd, int send, void *buf, size_t len) {
    IoOp *op = &ops[queued++];
    op->fd = fd;
    op->send = send;
    op->buf = buf;
    op->len = len;
}

void ioBatchRecv(int fd, void *buf, size_t len) { queue(fd, 0, buf, len); }
void ioBatchSend(int fd, const void *buf, size_t len) { queue(fd, 1, (void *)buf, len); }

static long runOne(const IoOp *op) {
    long r = op->send ? ioSend(op->fd, op->buf, op->len) : ioRecv(op->fd, op->buf, op->len);
    return r < 0 ? -errno : r;
}

/* Submit the batch and collect every completion.  0, or -1 if the ring
 * could not take it (nothing was started then). */
static int runRing(long *res, int n) {
    for (int i = 0; i < n; i++) {
        struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
        if (ops[i].send)
            io_uring_prep_send(sqe, ops[i].fd, ops[i].buf, ops[i].len, MSG_DONTWAIT | MSG_NOSIGNAL);
        else
            io_uring_prep_recv(sqe, ops[i].fd, ops[i].buf, ops[i].len, MSG_DONTWAIT);
        io_uring_sqe_set_data64(sqe, (unsigned long long)i);
    }
    int r;
    int tries = 0;
    do {
        r = io_uring_submit_and_wait(&ring, (unsigned)n);
    } while ((r == -EINTR || r == -EAGAIN) && ++tries < 100);
    if (r < 0) return -1;
    /* r == n: with SUBMIT_ALL an operation that fails still completes. */
    int got = 0;
    while (got < n) {
        struct io_uring_cqe *cqe;
        int w = io_uring_wait_cqe(&ring, &cqe);
        if (w == -EINTR) continue;
        if (w < 0) abort(); /* buffers may still be in use: cannot go on */
        unsigned long long i = io_uring_cqe_get_data64(cqe);
        if (i < (unsigned long long)n) {
            res[i] = cqe->res;
            got++;
        }
        io_uring_cqe_seen(&ring, cqe);
    }
    return 0;
}

int ioBatchRun(long *res) {
    int n = queued;
    queued = 0;
    if (n == 0) return 0;
    if (n > 1 && enabled && runRing(res, n) == 0) return n;
    if (n > 1 && enabled) {
        serverLog(LL_WARNING, "io_uring failed to take a batch: one system call per socket read or write from now on");
        io_uring_queue_exit(&ring);
        enabled = 0;
    }
    for (int i = 0; i < n; i++) res[i] = runOne(&ops[i]);
    return n;
}
