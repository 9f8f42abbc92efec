/* clock_shim.c -- an LD_PRELOAD shim that lets a test set the server's wall
 * clock (test_native_limits.py, built by clockhelp.py).
 *
 * CAIRN_CLOCK_FILE names a file of 8 bytes: a little-endian int64 of unix
 * microseconds.  While it is non-zero, clock_gettime(CLOCK_REALTIME and
 * _COARSE), gettimeofday and time report it; at 0 they report the real
 * time.  The file is mapped shared once, so the test changes the time by
 * writing the 8 bytes.  The monotonic clocks (timers, the event loop) are
 * left alone. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static volatile int64_t *fake;
static int tried;

static int64_t fakeUs(void) {
    if (!tried) {
        tried = 1;
        const char *path = getenv("CAIRN_CLOCK_FILE");
        int fd = path ? open(path, O_RDONLY) : -1;
        if (fd >= 0) {
            void *p = mmap(NULL, 8, PROT_READ, MAP_SHARED, fd, 0);
            if (p != MAP_FAILED) fake = p;
            close(fd);
        }
    }
    return fake ? *fake : 0;
}

typedef int ClockFn(clockid_t, struct timespec *);

int clock_gettime(clockid_t id, struct timespec *ts) {
    static ClockFn *real;
    if (!real) real = (ClockFn *)dlsym(RTLD_NEXT, "clock_gettime");
    if (id == CLOCK_REALTIME || id == CLOCK_REALTIME_COARSE) {
        int64_t us = fakeUs();
        if (us) {
            ts->tv_sec = us / 1000000;
            ts->tv_nsec = (long)(us % 1000000) * 1000;
            return 0;
        }
    }
    return real(id, ts);
}

int gettimeofday(struct timeval *tv, void *tz) {
    int64_t us = fakeUs();
    if (!us) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        us = (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
    }
    (void)tz;
    if (tv) {
        tv->tv_sec = us / 1000000;
        tv->tv_usec = us % 1000000;
    }
    return 0;
}

time_t time(time_t *t) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    if (t) *t = ts.tv_sec;
    return ts.tv_sec;
}
