/* test_event.c -- unit tests for the event loop (src/core/event.c): its
 * idle work (steps run only when nothing is ready, a ready fd is served
 * before the next step, and the loop sleeps between steps instead of
 * polling without blocking), its timers, which never run before their
 * time, in us (eventAddTimerUs) or ms, and the sleep gate (the module
 * GIL): released before each poll of the loop and taken back after it,
 * before any handler, never around eventProcessFileEvents. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <time.h>
#include <unistd.h>

#include "core/event.h"

typedef struct {
    int pending;    /* what the loop reads through eventSetIdle */
    int steps;      /* idle steps run */
    int stopAfter;  /* > 0: no more idle work after this many steps */
    int writeAt;    /* > 0: write to wfd in this step */
    int wfd;
    int stepsAtRead; /* steps run when the read handler ran, or -1 */
} IdleState;

static IdleState st;

static void idleStep(EventLoop *l) {
    (void)l;
    st.steps++;
    if (st.writeAt > 0 && st.steps == st.writeAt) assert_int_equal(write(st.wfd, "x", 1), 1);
    if (st.stopAfter > 0 && st.steps >= st.stopAfter) st.pending = 0;
}

static long long stopLoop(EventLoop *l, long long id, void *data) {
    (void)id;
    (void)data;
    eventLoopStop(l);
    return -1;
}

static void onReadable(EventLoop *l, int fd, void *data, int mask) {
    (void)l;
    (void)data;
    (void)mask;
    char c;
    assert_int_equal(read(fd, &c, 1), 1);
    if (st.stepsAtRead < 0) st.stepsAtRead = st.steps;
}

static EventLoop *loopWithIdle(long long runMs) {
    EventLoop *l = eventLoopCreate(64);
    assert_non_null(l);
    eventSetIdle(l, idleStep, &st.pending);
    eventAddTimer(l, runMs, stopLoop, NULL);
    return l;
}

/* With idle work pending and nothing else to do, 200 ms of loop run at
 * most one step per millisecond or so (it sleeps up to 1 ms after each);
 * a loop that polled without blocking ran tens of thousands.  A slower
 * machine can only run fewer. */
static void test_idle_steps_sleep_between(void **state) {
    (void)state;
    st = (IdleState){.pending = 1, .stepsAtRead = -1};
    EventLoop *l = loopWithIdle(200);
    eventLoopRun(l);
    assert_true(st.steps >= 1);
    assert_true(st.steps <= 260);
    eventLoopFree(l);
}

/* A fd that becomes ready during a step is served before the next step. */
static void test_ready_fd_before_next_step(void **state) {
    (void)state;
    int p[2];
    assert_int_equal(pipe(p), 0);
    st = (IdleState){.pending = 1, .writeAt = 3, .wfd = p[1], .stepsAtRead = -1};
    EventLoop *l = loopWithIdle(100);
    assert_int_equal(eventAdd(l, p[0], EV_READABLE, onReadable, NULL), 0);
    eventLoopRun(l);
    assert_int_equal(st.stepsAtRead, 3);
    assert_true(st.steps > 3);
    eventLoopFree(l);
    close(p[0]);
    close(p[1]);
}

/* Once the idle work is done no step runs again: the loop sleeps until
 * its timer. */
static void test_no_steps_once_done(void **state) {
    (void)state;
    st = (IdleState){.pending = 1, .stopAfter = 2, .stepsAtRead = -1};
    EventLoop *l = loopWithIdle(50);
    eventLoopRun(l);
    assert_int_equal(st.steps, 2);
    eventLoopFree(l);
}

static long long nowUs(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

typedef struct {
    long long due;   /* monotonic us the next run may not precede */
    long long every; /* the re-arm delay it returns (us or ms) */
    int usec;        /* every is in us */
    int runs, left;  /* runs so far, runs until it stops the loop */
    int early;       /* runs that came before due */
} TimerState;

static long long notEarlyTimer(EventLoop *l, long long id, void *data) {
    (void)id;
    TimerState *t = data;
    if (nowUs() < t->due) t->early++;
    t->runs++;
    if (--t->left == 0) {
        eventLoopStop(l);
        return -1;
    }
    t->due = nowUs() + (t->usec ? t->every : t->every * 1000);
    return t->every;
}

/* Timers of sub-ms delays (300 us, then re-armed every 700 us) and of ms
 * run each time, never before their time (the poll sleeps to the us, or
 * to the next whole ms where epoll_pwait2 is missing). */
static void test_timers_never_early(void **state) {
    (void)state;
    EventLoop *l = eventLoopCreate(64);
    assert_non_null(l);
    TimerState us = {.due = nowUs() + 300, .every = 700, .usec = 1, .left = 20};
    eventAddTimerUs(l, 300, notEarlyTimer, &us);
    TimerState ms = {.due = nowUs() + 1000, .every = 1, .usec = 0, .left = 1000000};
    eventAddTimer(l, 1, notEarlyTimer, &ms);
    eventLoopRun(l);
    assert_int_equal(us.runs, 20);
    assert_int_equal(us.early, 0);
    assert_true(ms.runs >= 1);
    assert_int_equal(ms.early, 0);
    eventLoopFree(l);
}

/* The sleep gate: 0 then 1 around each poll of eventLoopRun; a handler
 * always runs with the gate taken (awake); eventProcessFileEvents's polls
 * do not call it. */
static int gateState = 1, gateCalls, handlerSawAsleep;

static void gate(EventLoop *l, int awake) {
    (void)l;
    assert_int_equal(gateState, !awake); /* strictly alternating */
    gateState = awake;
    gateCalls++;
}

static void gateRead(EventLoop *l, int fd, void *data, int mask) {
    (void)data, (void)mask;
    char b;
    assert_int_equal(read(fd, &b, 1), 1);
    if (!gateState) handlerSawAsleep = 1;
    eventLoopStop(l);
}

static void test_sleep_gate(void **state) {
    (void)state;
    EventLoop *l = eventLoopCreate(64);
    int p[2];
    assert_int_equal(pipe(p), 0);
    assert_int_equal(eventAdd(l, p[0], EV_READABLE, gateRead, NULL), 0);
    eventSetSleepGate(l, gate);
    assert_int_equal(write(p[1], "x", 1), 1);
    eventProcessFileEvents(l, 0); /* no gate here */
    assert_int_equal(gateCalls, 0);
    assert_int_equal(write(p[1], "y", 1), 1);
    eventLoopRun(l);
    assert_int_equal(gateCalls, 2);
    assert_int_equal(gateState, 1);
    assert_int_equal(handlerSawAsleep, 0);
    close(p[0]);
    close(p[1]);
    eventLoopFree(l);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_idle_steps_sleep_between),
        cmocka_unit_test(test_ready_fd_before_next_step),
        cmocka_unit_test(test_no_steps_once_done),
        cmocka_unit_test(test_timers_never_early),
        cmocka_unit_test(test_sleep_gate),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
