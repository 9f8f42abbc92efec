/* multiload.c -- load generator for the bench's multi10incr workload:
 * MULTI, 10 x INCR multibench, EXEC, sent by `clients` connections,
 * `pipeline` transactions per write, `total` transactions in all.
 * redis-benchmark cannot send a transaction as one unit, and a Python loop
 * spent as much CPU per transaction as the servers did, so the runs measured
 * the load generator; this one costs a send and a receive per batch.
 *
 * usage: multiload PORT CLIENTS TOTAL PIPELINE
 * prints a redis-benchmark style CSV line: "MULTI_10_INCR","<txns/s>" and,
 * on stderr, the transactions completed. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define EXEC_HEADER "*10\r\n"
#define TAIL (sizeof(EXEC_HEADER) - 2) /* bytes kept to see a header cut in two */

typedef struct Conn {
    int fd;
    long batchesLeft; /* batches still to send after the one in flight */
    long execsSeen;   /* EXEC replies of the batch in flight */
    char tail[TAIL];
    size_t tailLen;
} Conn;

static double nowSec(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void die(const char *what) {
    perror(what);
    exit(1);
}

static void sendAll(int fd, const char *p, size_t n) {
    while (n > 0) {
        ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
        if (w < 0) {
            if (errno == EINTR) continue;
            die("send");
        }
        p += w;
        n -= (size_t)w;
    }
}

/* Counts EXEC reply headers in tail+data and keeps the new tail. */
static long countExecs(Conn *c, const char *data, size_t n) {
    static char scan[TAIL + (1 << 16)];
    memcpy(scan, c->tail, c->tailLen);
    memcpy(scan + c->tailLen, data, n);
    size_t len = c->tailLen + n, hl = strlen(EXEC_HEADER);
    long found = 0;
    for (const char *p = scan, *end = scan + len; (size_t)(end - p) >= hl;) {
        const char *q = memchr(p, '*', (size_t)(end - p));
        if (!q || (size_t)(end - q) < hl) break;
        if (memcmp(q, EXEC_HEADER, hl) == 0) {
            found++;
            q += hl;
        } else {
            q++;
        }
        p = q;
    }
    c->tailLen = len < TAIL ? len : TAIL;
    memcpy(c->tail, scan + len - c->tailLen, c->tailLen);
    return found;
}

int main(int argc, char **argv) {
    if (argc != 5) {
        fprintf(stderr, "usage: %s PORT CLIENTS TOTAL PIPELINE\n", argv[0]);
        return 2;
    }
    int port = atoi(argv[1]);
    long clients = atol(argv[2]), total = atol(argv[3]), pipeline = atol(argv[4]);
    if (port <= 0 || clients <= 0 || total <= 0 || pipeline <= 0) {
        fprintf(stderr, "multiload: arguments must be positive\n");
        return 2;
    }
    static const char txn[] = "MULTI\r\n"
                              "INCR multibench\r\nINCR multibench\r\nINCR multibench\r\nINCR multibench\r\n"
                              "INCR multibench\r\nINCR multibench\r\nINCR multibench\r\nINCR multibench\r\n"
                              "INCR multibench\r\nINCR multibench\r\n"
                              "EXEC\r\n";
    size_t txnLen = sizeof(txn) - 1, batchLen = txnLen * (size_t)pipeline;
    char *batch = malloc(batchLen);
    if (!batch) die("malloc");
    for (long i = 0; i < pipeline; i++) memcpy(batch + (size_t)i * txnLen, txn, txnLen);
    long per = total / (clients * pipeline);
    if (per < 1) per = 1;

    int ep = epoll_create1(0);
    if (ep < 0) die("epoll_create1");
    Conn *conns = calloc((size_t)clients, sizeof(Conn));
    if (!conns) die("calloc");
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    for (long i = 0; i < clients; i++) {
        int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;
        if (fd < 0) die("socket");
        if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) die("connect");
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        conns[i].fd = fd;
        conns[i].batchesLeft = per - 1;
        struct epoll_event ev = {.events = EPOLLIN, .data.ptr = &conns[i]};
        if (epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) < 0) die("epoll_ctl");
    }

    double t0 = nowSec();
    for (long i = 0; i < clients; i++) sendAll(conns[i].fd, batch, batchLen);
    long open = clients, done = 0;
    struct epoll_event evs[256];
    char buf[1 << 16];
    while (open > 0) {
        int n = epoll_wait(ep, evs, 256, 5000);
        if (n < 0) {
            if (errno == EINTR) continue;
            die("epoll_wait");
        }
        if (n == 0) {
            fprintf(stderr, "multiload: no reply for 5 s\n");
            return 1;
        }
        for (int i = 0; i < n; i++) {
            Conn *c = evs[i].data.ptr;
            ssize_t r = recv(c->fd, buf, sizeof(buf), 0);
            if (r <= 0) {
                if (r < 0 && (errno == EINTR || errno == EAGAIN)) continue;
                fprintf(stderr, "multiload: connection closed by the server\n");
                return 1;
            }
            c->execsSeen += countExecs(c, buf, (size_t)r);
            if (c->execsSeen < pipeline) continue;
            c->execsSeen -= pipeline;
            done += pipeline;
            if (c->batchesLeft > 0) {
                c->batchesLeft--;
                sendAll(c->fd, batch, batchLen);
            } else {
                epoll_ctl(ep, EPOLL_CTL_DEL, c->fd, NULL);
                close(c->fd);
                open--;
            }
        }
    }
    double secs = nowSec() - t0;
    printf("\"MULTI_10_INCR\",\"%.2f\"\n", secs > 0 ? (double)done / secs : 0.0);
    fprintf(stderr, "%ld\n", done);
    free(conns);
    free(batch);
    return 0;
}
