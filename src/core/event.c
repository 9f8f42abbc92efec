/* event.c -- epoll event loop with microsecond timers.
 *
 * File events are indexed by fd in a fixed array of `setsize` slots.
 * Timers are few (the server cron, stats sampling, BZPOPDUE's due timer),
 * so they sit in an unsorted list scanned each turn.  A timer callback
 * returns the delay to its next run (ms, or us for a timer added with
 * eventAddTimerUs) or -1 to be removed.
 *
 * Timers keep monotonic microseconds, and the poll sleeps until the
 * earliest one to the microsecond (epoll_pwait2 with a timespec).  Where
 * epoll_pwait2 is missing (an older kernel, a seccomp filter, valgrind
 * 3.19) the loop falls back for good to epoll_wait with the wait rounded
 * UP to whole ms.  Either way the poll never returns before the timer is
 * due, so a timer never runs early (runTimers runs only those whose time
 * has come by the clock; one the poll woke for a hair early waits one more
 * turn).
 *
 * A read batcher (eventSetReadBatch) sees, after each poll and before any
 * handler runs, the data of every ready fd whose read handler is the one
 * it registered for, so it can read them all at once; the handlers then
 * run as usual, in the order the poll returned.
 *
 * Idle work (eventSetIdle) runs in bounded steps, only when a poll found
 * nothing ready, so a ready client never waits more than one step.  After
 * a step the next poll may sleep up to IDLE_GAP_US (1 ms): a loop that polled
 * without blocking until its idle work was done kept its CPU 100% busy,
 * and on a small machine the clients it woke then queued behind each other
 * on the other CPUs (a probe client waited 3-4 ms for a CPU while a 10M-key
 * table rehashed).  A step then a sleep is at most about a sixth of a CPU
 * when nothing else happens. */
#include "core/event.h"

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

#include "ds/alloc.h"

typedef struct FileEvent {
    int mask;
    FileProc *rproc, *wproc;
    void *data;
} FileEvent;

typedef struct Timer {
    long long id;
    long long whenUs;  /* monotonic us */
    int usec;          /* proc's return value is in us (eventAddTimerUs) */
    TimerProc *proc;
    void *data;
    int removed;
    struct Timer *next;
} Timer;

struct EventLoop {
    int epfd;
    int setsize;
    FileEvent *events;
    struct epoll_event *fired;
    Timer *timers;
    long long nextTimerId;
    BeforeSleepProc *beforeSleep;
    SleepGateProc *sleepGate; /* around the main loop's poll, or NULL */
    BeforeSleepProc *afterSleep; /* eventLoopRun's, once each poll returned */
    IdleProc *idle;           /* background step, or NULL */
    const int *idlePending;   /* non-zero: idle has work */
    FileProc *batchRproc;     /* read handler whose fds go to batchProc */
    ReadBatchProc *batchProc;
    void **batchData;         /* setsize slots, allocated with the batcher */
    int stop;
};

static long long monoUs(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* 0 until epoll_pwait2 failed as unsupported: then epoll_wait for good. */
static int noPwait2;

EventLoop *eventLoopCreate(int setsize) {
    EventLoop *l = xcalloc(sizeof(*l));
    l->epfd = epoll_create1(EPOLL_CLOEXEC);
    if (l->epfd == -1) {
        xfree(l);
        return NULL;
    }
    l->setsize = setsize;
    l->events = xcalloc(sizeof(FileEvent) * (size_t)setsize);
    l->fired = xcalloc(sizeof(struct epoll_event) * (size_t)setsize);
    return l;
}

void eventLoopFree(EventLoop *l) {
    close(l->epfd);
    Timer *t = l->timers;
    while (t) {
        Timer *n = t->next;
        xfree(t);
        t = n;
    }
    xfree(l->events);
    xfree(l->fired);
    xfree(l->batchData);
    xfree(l);
}

int eventLoopSetSize(EventLoop *l) { return l->setsize; }

static int epollUpdate(EventLoop *l, int fd, int oldmask, int newmask) {
    struct epoll_event ee = {0};
    ee.events = (newmask & EV_READABLE ? EPOLLIN : 0) | (newmask & EV_WRITABLE ? EPOLLOUT : 0);
    ee.data.fd = fd;
    int op = oldmask == EV_NONE ? EPOLL_CTL_ADD : (newmask == EV_NONE ? EPOLL_CTL_DEL : EPOLL_CTL_MOD);
    return epoll_ctl(l->epfd, op, fd, &ee);
}

int eventAdd(EventLoop *l, int fd, int mask, FileProc *proc, void *data) {
    if (fd < 0 || fd >= l->setsize) return -1;
    FileEvent *fe = &l->events[fd];
    int newmask = fe->mask | mask;
    if (newmask != fe->mask && epollUpdate(l, fd, fe->mask, newmask) == -1) return -1;
    fe->mask = newmask;
    if (mask & EV_READABLE) fe->rproc = proc;
    if (mask & EV_WRITABLE) fe->wproc = proc;
    fe->data = data;
    return 0;
}

void eventDel(EventLoop *l, int fd, int mask) {
    if (fd < 0 || fd >= l->setsize) return;
    FileEvent *fe = &l->events[fd];
    if (fe->mask == EV_NONE) return;
    int newmask = fe->mask & ~mask;
    if (newmask != fe->mask) epollUpdate(l, fd, fe->mask, newmask);
    fe->mask = newmask;
}

int eventMask(EventLoop *l, int fd) {
    if (fd < 0 || fd >= l->setsize) return 0;
    return l->events[fd].mask;
}

/* Delays are capped far beyond any use (about 73,000 years) so that
 * now + delay cannot overflow. */
#define TIMER_MAX_US (LLONG_MAX / 4)

/* The monotonic us a delay of ms (or us, usec set) from now ends at. */
static long long timerDeadline(long long delay, int usec) {
    if (delay < 0) delay = 0;
    if (!usec) delay = delay > TIMER_MAX_US / 1000 ? TIMER_MAX_US : delay * 1000;
    return monoUs() + (delay > TIMER_MAX_US ? TIMER_MAX_US : delay);
}

static long long addTimer(EventLoop *l, long long delay, int usec, TimerProc *proc, void *data) {
    Timer *t = xcalloc(sizeof(*t));
    t->id = ++l->nextTimerId;
    t->whenUs = timerDeadline(delay, usec);
    t->usec = usec;
    t->proc = proc;
    t->data = data;
    t->next = l->timers;
    l->timers = t;
    return t->id;
}

long long eventAddTimer(EventLoop *l, long long ms, TimerProc *proc, void *data) {
    return addTimer(l, ms, 0, proc, data);
}

long long eventAddTimerUs(EventLoop *l, long long us, TimerProc *proc, void *data) {
    return addTimer(l, us, 1, proc, data);
}

void eventSetBeforeSleep(EventLoop *l, BeforeSleepProc *proc) { l->beforeSleep = proc; }
void eventSetSleepGate(EventLoop *l, SleepGateProc *proc) { l->sleepGate = proc; }
void eventSetAfterSleep(EventLoop *l, BeforeSleepProc *proc) { l->afterSleep = proc; }

void eventSetIdle(EventLoop *l, IdleProc *proc, const int *pending) {
    l->idle = proc;
    l->idlePending = pending;
}

void eventSetReadBatch(EventLoop *l, FileProc *rproc, ReadBatchProc *proc) {
    if (!l->batchData) l->batchData = xcalloc(sizeof(void *) * (size_t)l->setsize);
    l->batchRproc = rproc;
    l->batchProc = proc;
}

void eventLoopStop(EventLoop *l) { l->stop = 1; }

/* Microseconds until the earliest timer (0 if one is due), -1 if none. */
static long long usUntilNextTimer(EventLoop *l) {
    if (!l->timers) return -1;
    long long now = monoUs(), best = -1;
    for (Timer *t = l->timers; t; t = t->next) {
        if (t->removed) continue;
        long long d = t->whenUs - now;
        if (d < 0) d = 0;
        if (best == -1 || d < best) best = d;
    }
    return best;
}

static void runTimers(EventLoop *l) {
    long long now = monoUs();
    for (Timer *t = l->timers; t; t = t->next) {
        if (t->removed || t->whenUs > now) continue;
        long long next = t->proc(l, t->id, t->data);
        if (next < 0) t->removed = 1;
        else t->whenUs = timerDeadline(next, t->usec);
    }
    Timer **link = &l->timers;
    while (*link) {
        Timer *t = *link;
        if (t->removed) {
            *link = t->next;
            xfree(t);
        } else {
            link = &t->next;
        }
    }
}

/* One poll of at most waitUs (-1: no limit, 0: do not block).  A wait
 * that is not whole ms goes to epoll_pwait2; epoll_wait gets it rounded
 * up, so the poll never ends before waitUs unless an fd is ready. */
static int pollOnce(EventLoop *l, long long waitUs) {
    if (waitUs > 0 && waitUs % 1000 && !noPwait2) {
        struct timespec ts = {.tv_sec = (time_t)(waitUs / 1000000), .tv_nsec = (long)(waitUs % 1000000) * 1000};
        int n = epoll_pwait2(l->epfd, l->fired, l->setsize, &ts, NULL);
        if (n >= 0 || (errno != ENOSYS && errno != EPERM)) return n;
        noPwait2 = 1;
    }
    long long ms = waitUs < 0 ? -1 : (waitUs + 999) / 1000;
    return epoll_wait(l->epfd, l->fired, l->setsize, ms > INT32_MAX ? INT32_MAX : (int)ms);
}

static int processFileEvents(EventLoop *l, long long waitUs, int gated) {
    int n;
    if (gated && l->sleepGate) {
        l->sleepGate(l, 0);
        n = pollOnce(l, waitUs);
        l->sleepGate(l, 1);
    } else {
        n = pollOnce(l, waitUs);
    }
    if (gated && l->afterSleep) l->afterSleep(l);
    if (n < 0) return errno == EINTR ? 0 : -1;
    if (l->batchProc && n > 1) {
        int nb = 0;
        for (int i = 0; i < n; i++) {
            FileEvent *fe = &l->events[l->fired[i].data.fd];
            if ((fe->mask & EV_READABLE) && fe->rproc == l->batchRproc &&
                (l->fired[i].events & (EPOLLIN | EPOLLERR | EPOLLHUP)))
                l->batchData[nb++] = fe->data;
        }
        if (nb > 1) l->batchProc(l, l->batchData, nb);
    }
    for (int i = 0; i < n; i++) {
        int fd = l->fired[i].data.fd;
        uint32_t ev = l->fired[i].events;
        FileEvent *fe = &l->events[fd];
        int fired = 0;
        if ((fe->mask & EV_READABLE) && (ev & (EPOLLIN | EPOLLERR | EPOLLHUP))) {
            fe->rproc(l, fd, fe->data, EV_READABLE);
            fired = 1;
        }
        /* The read handler may have closed the fd; re-read the slot. */
        fe = &l->events[fd];
        if ((fe->mask & EV_WRITABLE) && (ev & (EPOLLOUT | EPOLLERR | EPOLLHUP))) {
            if (!fired || fe->wproc != fe->rproc) fe->wproc(l, fd, fe->data, EV_WRITABLE);
        }
    }
    return n;
}

int eventProcessFileEvents(EventLoop *l, long long waitMs) {
    return processFileEvents(l, waitMs < 0 ? -1 : (waitMs > LLONG_MAX / 1000 ? LLONG_MAX / 1000 : waitMs) * 1000, 0);
}

#define IDLE_GAP_US 1000

void eventLoopRun(EventLoop *l) {
    l->stop = 0;
    int stepped = 0; /* the last turn ran an idle step */
    while (!l->stop) {
        if (l->beforeSleep) l->beforeSleep(l);
        if (l->stop) break;
        int idle = l->idle && *l->idlePending;
        /* Idle work: no wait before a step, at most IDLE_GAP_US after one. */
        long long wait = idle && !stepped ? 0 : usUntilNextTimer(l);
        if (idle && stepped && (wait < 0 || wait > IDLE_GAP_US)) wait = IDLE_GAP_US;
        int n = processFileEvents(l, wait, 1);
        if (n < 0) break;
        runTimers(l);
        stepped = idle && n == 0;
        if (stepped) l->idle(l);
    }
}
