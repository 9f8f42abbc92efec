/* loadgen.c -- a lean load generator for the throughput bench.
 *
 * At pipeline 1 redis-benchmark spends ~17 us of CPU per request here (two
 * epoll_ctl calls per request on each connection, plus its own bookkeeping),
 * more than either server spends answering it, so its runs measure the client
 * rather than the servers.  This one sends a request unit and reads replies:
 * per batch a send, a recv, and a share of one epoll_wait.
 *
 * usage: loadgen PORT CLIENTS TOTAL PIPELINE REPLIES NAME < unit
 *   unit     the bytes of one request unit (one or more RESP commands), read
 *            from standard input;
 *   REPLIES  how many top-level replies one unit gets (MULTI + 10 INCR + EXEC
 *            gets 12);
 *   CLIENTS  connections, each sending PIPELINE units per write (fewer in its
 *            last write) and waiting for all their replies before the next
 *            write; TOTAL units in all, shared out evenly.
 * Prints a redis-benchmark style CSV line "NAME","<units/s>" on stdout and,
 * on stderr, "<units done> <error replies>". */
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

#define MAX_DEPTH 32  /* nesting of aggregate replies */
#define MAX_LINE 128  /* bytes kept of a reply's header line (a long simple
                       * string or error is cut; its type byte is what counts) */
#define MAX_UNIT (1 << 20)

/* Where a connection is in the reply stream: inside a bulk body (skip bytes
 * left), or between headers, with the aggregates still open. */
typedef struct Conn {
    int fd;
    long unitsLeft; /* units not sent yet */
    long inFlight;  /* units of the batch in flight */
    long replies;   /* top-level replies of the batch in flight */
    long skip;      /* bulk body bytes (with CRLF) still to come */
    int depth;
    long open[MAX_DEPTH]; /* elements still due in each open aggregate */
    char line[MAX_LINE];
    size_t lineLen;
    char last; /* the byte before the line's '\n' must be '\r' */
} Conn;

static long errorReplies;

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

/* One element ended: close the aggregates it completes; a top-level element
 * is a whole reply. */
static void elementDone(Conn *c) {
    while (c->depth > 0) {
        if (--c->open[c->depth - 1] > 0) return;
        c->depth--;
    }
    c->replies++;
}

/* A header line (without CRLF) of the reply stream. */
static int onLine(Conn *c, const char *l, size_t n) {
    if (n == 0) return -1;
    char num[MAX_LINE];
    memcpy(num, l + 1, n - 1);
    num[n - 1] = '\0';
    long v;
    switch (l[0]) {
    case '-':
    case '!':
        errorReplies++;
        /* fall through */
    case '+':
    case ':':
    case '_':
    case ',':
    case '#':
    case '(':
        elementDone(c);
        return 0;
    case '$':
    case '=':
        v = strtol(num, NULL, 10);
        if (v < 0) elementDone(c);
        else c->skip = v + 2;
        return 0;
    case '*':
    case '~':
    case '>':
    case '%':
        v = strtol(num, NULL, 10);
        if (l[0] == '%') v *= 2;
        if (v <= 0) {
            elementDone(c);
            return 0;
        }
        if (c->depth == MAX_DEPTH) return -1;
        c->open[c->depth++] = v;
        return 0;
    default:
        return -1;
    }
}

/* Feeds received bytes through the reply parser. */
static int feed(Conn *c, const char *p, size_t n) {
    const char *end = p + n;
    while (p < end) {
        if (c->skip > 0) {
            size_t take = (size_t)(end - p) < (size_t)c->skip ? (size_t)(end - p) : (size_t)c->skip;
            p += take;
            c->skip -= (long)take;
            if (c->skip == 0) elementDone(c);
            continue;
        }
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t part = nl ? (size_t)(nl - p) : (size_t)(end - p); /* before the '\n' */
        size_t room = MAX_LINE - 1 - c->lineLen, keep = part < room ? part : room;
        memcpy(c->line + c->lineLen, p, keep);
        c->lineLen += keep;
        if (part) c->last = p[part - 1];
        p += part;
        if (!nl) break;
        p++;
        size_t ll = c->lineLen;
        c->lineLen = 0;
        if (c->last != '\r') return -1;
        c->last = 0;
        if (ll > 0 && c->line[ll - 1] == '\r') ll--; /* the whole line was kept */
        if (onLine(c, c->line, ll) < 0) return -1;
    }
    return 0;
}

/* Sends the connection's next batch: up to `pipeline` units.  Returns -1
 * when it has none left. */
static int sendBatch(Conn *c, const char *batch, size_t unitLen, long pipeline) {
    c->replies = 0;
    c->inFlight = c->unitsLeft < pipeline ? c->unitsLeft : pipeline;
    if (c->inFlight == 0) return -1;
    c->unitsLeft -= c->inFlight;
    sendAll(c->fd, batch, unitLen * (size_t)c->inFlight);
    return 0;
}

int main(int argc, char **argv) {
    if (argc != 7) {
        fprintf(stderr, "usage: %s PORT CLIENTS TOTAL PIPELINE REPLIES NAME < unit\n", argv[0]);
        return 2;
    }
    int port = atoi(argv[1]);
    long clients = atol(argv[2]), total = atol(argv[3]), pipeline = atol(argv[4]);
    long perUnit = atol(argv[5]);
    if (port <= 0 || clients <= 0 || total <= 0 || pipeline <= 0 || perUnit <= 0) {
        fprintf(stderr, "loadgen: arguments must be positive\n");
        return 2;
    }
    static char unit[MAX_UNIT];
    size_t unitLen = fread(unit, 1, sizeof(unit), stdin);
    if (unitLen == 0 || unitLen == sizeof(unit)) {
        fprintf(stderr, "loadgen: the request unit on stdin must be 1 byte to 1 MB\n");
        return 2;
    }
    size_t batchLen = unitLen * (size_t)pipeline;
    char *batch = malloc(batchLen);
    if (!batch) die("malloc");
    for (long i = 0; i < pipeline; i++) memcpy(batch + (size_t)i * unitLen, unit, unitLen);

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
        conns[i].unitsLeft = total / clients + (i < total % clients);
        struct epoll_event ev = {.events = EPOLLIN, .data.ptr = &conns[i]};
        if (epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) < 0) die("epoll_ctl");
    }

    double t0 = nowSec();
    long open = clients, done = 0;
    for (long i = 0; i < clients; i++) {
        if (sendBatch(&conns[i], batch, unitLen, pipeline) == 0) continue;
        epoll_ctl(ep, EPOLL_CTL_DEL, conns[i].fd, NULL);
        close(conns[i].fd);
        open--;
    }
    struct epoll_event evs[256];
    static char buf[1 << 16];
    while (open > 0) {
        int n = epoll_wait(ep, evs, 256, 5000);
        if (n < 0) {
            if (errno == EINTR) continue;
            die("epoll_wait");
        }
        if (n == 0) {
            fprintf(stderr, "loadgen: no reply for 5 s\n");
            return 1;
        }
        for (int i = 0; i < n; i++) {
            Conn *c = evs[i].data.ptr;
            ssize_t r = recv(c->fd, buf, sizeof(buf), 0);
            if (r <= 0) {
                if (r < 0 && (errno == EINTR || errno == EAGAIN)) continue;
                fprintf(stderr, "loadgen: connection closed by the server\n");
                return 1;
            }
            if (feed(c, buf, (size_t)r) < 0) {
                fprintf(stderr, "loadgen: malformed reply\n");
                return 1;
            }
            if (c->replies < c->inFlight * perUnit) continue;
            if (c->replies > c->inFlight * perUnit) {
                fprintf(stderr, "loadgen: more replies than requests\n");
                return 1;
            }
            done += c->inFlight;
            if (sendBatch(c, batch, unitLen, pipeline) < 0) {
                epoll_ctl(ep, EPOLL_CTL_DEL, c->fd, NULL);
                close(c->fd);
                open--;
            }
        }
    }
    double secs = nowSec() - t0;
    printf("\"%s\",\"%.2f\"\n", argv[6], secs > 0 ? (double)done / secs : 0.0);
    fprintf(stderr, "%ld %ld\n", done, errorReplies);
    free(conns);
    free(batch);
    return 0;
}
