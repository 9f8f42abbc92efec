/* event.h -- the epoll event loop: file events and timers (kept and slept
 * for to the microsecond; never run before their time).
 * Single-threaded; callbacks run on the loop's thread. */
#ifndef CAIRN_EVENT_H
#define CAIRN_EVENT_H

#define EV_NONE 0
#define EV_READABLE 1
#define EV_WRITABLE 2

typedef struct EventLoop EventLoop;
typedef void FileProc(EventLoop *loop, int fd, void *data, int mask);
/* Returns the ms (us for a timer added with eventAddTimerUs) until it
 * should run again, or -1 to be removed. */
typedef long long TimerProc(EventLoop *loop, long long id, void *data);
typedef void BeforeSleepProc(EventLoop *loop);
/* Called by eventLoopRun with awake 0 just before each poll and with
 * awake 1 just after it, before any handler (the module GIL: released
 * while the loop sleeps).  Not around eventProcessFileEvents's polls. */
typedef void SleepGateProc(EventLoop *loop, int awake);
/* One bounded step of background work. */
typedef void IdleProc(EventLoop *loop);
/* Gets the data of n (> 1) ready fds, each once, in poll order. */
typedef void ReadBatchProc(EventLoop *loop, void **data, int n);

/* setsize bounds the fds the loop can watch (maxclients + reserve). */
EventLoop *eventLoopCreate(int setsize);
void eventLoopFree(EventLoop *loop);
/* 0 ok, -1 when fd >= setsize or epoll fails. */
int eventAdd(EventLoop *loop, int fd, int mask, FileProc *proc, void *data);
void eventDel(EventLoop *loop, int fd, int mask);
int eventMask(EventLoop *loop, int fd);
/* Run proc once ms (or us) from now, then as it says.  Returns the id. */
long long eventAddTimer(EventLoop *loop, long long ms, TimerProc *proc, void *data);
long long eventAddTimerUs(EventLoop *loop, long long us, TimerProc *proc, void *data);
void eventSetBeforeSleep(EventLoop *loop, BeforeSleepProc *proc);
void eventSetSleepGate(EventLoop *loop, SleepGateProc *proc);
/* Called by eventLoopRun each time its poll returned, before the ready
 * events are handled (the module layer's EventLoop after-sleep event; NULL
 * when no module listens). */
void eventSetAfterSleep(EventLoop *loop, BeforeSleepProc *proc);
/* Background work for the moments nothing is ready: while *pending is
 * non-zero, whenever a poll found no fd ready the loop runs proc (which
 * updates *pending), and the poll after a step sleeps at most a
 * millisecond.  A command that arrives meanwhile waits at most one step.
 * *pending is owned by the caller and may be set by anyone on the loop's
 * thread. */
void eventSetIdle(EventLoop *loop, IdleProc *proc, const int *pending);
/* After each poll and before any handler runs, pass proc the data of the
 * ready fds whose read handler is rproc (when there are two or more), so
 * it can read them in one go.  Their handlers still run afterwards. */
void eventSetReadBatch(EventLoop *loop, FileProc *rproc, ReadBatchProc *proc);
void eventLoopRun(EventLoop *loop);
/* One poll: wait up to waitMs, run the handlers of the ready fds (no
 * timers, no beforeSleep).  A long script uses it to keep answering.
 * Returns the fds handled, -1 on error. */
int eventProcessFileEvents(EventLoop *loop, long long waitMs);
void eventLoopStop(EventLoop *loop);
int eventLoopSetSize(EventLoop *loop);

#endif
