/* crash.c -- crash reports and the software watchdog (crash.h).
 *
 * Invariants:
 *  - Everything a signal handler runs here is async-signal-safe in
 *    practice: write(2)/open(2), clock_gettime, backtrace (warmed up at
 *    start-up, so that its one-time dlopen of the unwinder is done) and
 *    backtrace_symbols_fd (no malloc), a formatter of our own, and a local
 *    time computed from an offset cached by the timer (no tz lock).
 *  - A fatal signal's handler is one-shot (SA_RESETHAND): a fault inside
 *    the report kills the process with the default action, never loops.
 *  - While the memory test overwrites memory, nothing else runs on it:
 *    no other thread (each is held), no signal handler (blocked), and the
 *    kernel finds every thread's rseq area intact (its page is skipped).
 *  - The watchdog's SIGALRM comes from a POSIX timer aimed at the main
 *    thread (SIGEV_THREAD_ID), so the stack logged is the event loop's. */
#include "core/crash.h"

#include <errno.h>
#include <execinfo.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#if defined(__linux__) && defined(__has_include)
#if __has_include(<sys/rseq.h>)
#include <sys/rseq.h>
#define HAVE_RSEQ_AREA 1
#endif
#endif
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "core/client.h"
#include "core/log.h"
#include "core/server.h"
#include "ds/alloc.h"
#include "ds/util.h"

/* crash-log-enabled, crash-memcheck-enabled, use-exit-on-panic (hidden: a
 * panic or assert exits 1, no abort()) and watchdog-period (hidden: ms, 0
 * off): the directives at the end of this file. */
static int crashLogEnabled, crashMemcheckEnabled, useExitOnPanic, watchdogPeriod;

/* --- a signal-safe log writer --- */

typedef struct Out {
    char buf[1024];
    size_t len;
} Out;

static void outChar(Out *o, char c) {
    if (o->len + 1 < sizeof(o->buf)) o->buf[o->len++] = c;
}

static void outStr(Out *o, const char *s) {
    if (!s) s = "(null)";
    while (*s) outChar(o, *s++);
}

/* v in base 10 or 16, at least width digits (padded with pad). */
static void outNum(Out *o, unsigned long long v, unsigned base, int width, char pad) {
    char tmp[32];
    int n = 0;
    do {
        tmp[n++] = "0123456789abcdef"[v % base];
        v /= base;
    } while (v && n < (int)sizeof(tmp));
    while (width-- > n) outChar(o, pad);
    while (n) outChar(o, tmp[--n]);
}

/* A printf subset: %[0][width][l|ll|z](d|i|u|x) %s %c %p %%. */
static void outVFormat(Out *o, const char *fmt, va_list ap) {
    for (const char *p = fmt; *p; p++) {
        if (*p != '%') {
            outChar(o, *p);
            continue;
        }
        p++;
        char pad = ' ';
        int width = 0, longs = 0, size = 0;
        if (*p == '0') pad = '0', p++;
        while (*p >= '0' && *p <= '9') width = width * 10 + (*p++ - '0');
        while (*p == 'l') longs++, p++;
        if (*p == 'z') size = 1, p++;
        switch (*p) {
        case 'd':
        case 'i': {
            long long v = size ? (long long)va_arg(ap, ssize_t)
                               : longs >= 2 ? va_arg(ap, long long)
                               : longs ? va_arg(ap, long) : va_arg(ap, int);
            if (v < 0) outChar(o, '-');
            outNum(o, v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v, 10, width, pad);
            break;
        }
        case 'u':
        case 'x': {
            unsigned long long v = size ? va_arg(ap, size_t)
                                        : longs >= 2 ? va_arg(ap, unsigned long long)
                                        : longs ? va_arg(ap, unsigned long) : va_arg(ap, unsigned);
            outNum(o, v, *p == 'x' ? 16 : 10, width, pad);
            break;
        }
        case 'p':
            outStr(o, "0x");
            outNum(o, (uintptr_t)va_arg(ap, void *), 16, 0, '0');
            break;
        case 's': outStr(o, va_arg(ap, const char *)); break;
        case 'c': outChar(o, (char)va_arg(ap, int)); break;
        case '%': outChar(o, '%'); break;
        default: return;
        }
    }
}

/* The local time zone's offset from UTC, refreshed by crashCron (outside
 * any handler); a handler only adds it. */
static volatile long tzOffsetSec;

void crashCron(void) {
    time_t now = time(NULL);
    struct tm tm;
    if (localtime_r(&now, &tm)) tzOffsetSec = tm.tm_gmtoff;
}

/* "dd Mon yyyy hh:mm:ss.mmm" in local time, as log.c writes it. */
static void outTime(Out *o) {
    static const char *months[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                   "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    long long t = (long long)ts.tv_sec + tzOffsetSec;
    long long days = t / 86400, secs = t % 86400;
    if (secs < 0) secs += 86400, days--;
    /* The civil date of a day count since 1970-01-01 (proleptic
     * Gregorian): eras of 400 years, March-based years. */
    long long z = days + 719468;
    long long era = (z >= 0 ? z : z - 146096) / 146097;
    long long doe = z - era * 146097;
    long long yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    long long doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    long long mp = (5 * doy + 2) / 153;
    long long d = doy - (153 * mp + 2) / 5 + 1;
    long long m = mp < 10 ? mp + 3 : mp - 9;
    long long y = yoe + era * 400 + (m <= 2);
    outNum(o, (unsigned long long)d, 10, 2, '0');
    outChar(o, ' ');
    outStr(o, months[m - 1]);
    outChar(o, ' ');
    outNum(o, (unsigned long long)y, 10, 4, '0');
    outChar(o, ' ');
    outNum(o, (unsigned long long)(secs / 3600), 10, 2, '0');
    outChar(o, ':');
    outNum(o, (unsigned long long)(secs / 60 % 60), 10, 2, '0');
    outChar(o, ':');
    outNum(o, (unsigned long long)(secs % 60), 10, 2, '0');
    outChar(o, '.');
    outNum(o, (unsigned long long)(ts.tv_nsec / 1000000), 10, 3, '0');
}

/* The log's descriptor for one report: the logfile (appended), or stdout. */
static int logOpen(void) {
    const char *lf = server.cfg.logfile;
    if (lf && lf[0]) return open(lf, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    return STDOUT_FILENO;
}

static void logClose(int fd) {
    if (fd > STDERR_FILENO) close(fd);
}

static void writeAll(int fd, const char *s, size_t n) {
    while (n && fd >= 0) {
        ssize_t w = write(fd, s, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return;
        s += w;
        n -= (size_t)w;
    }
}

static void crashRaw(const char *s) {
    int fd = logOpen();
    writeAll(fd, s, strlen(s));
    logClose(fd);
}

/* A warning line in log.c's format ("pid:R date # msg"). */
static void crashLog(const char *fmt, ...) {
    Out o = {.len = 0};
    pid_t pid = getpid();
    outNum(&o, (unsigned long long)pid, 10, 0, ' ');
    outChar(&o, ':');
    outChar(&o, server.pid && pid != server.pid ? 'C' : 'M');
    outChar(&o, ' ');
    outTime(&o);
    outStr(&o, " # ");
    va_list ap;
    va_start(ap, fmt);
    outVFormat(&o, fmt, ap);
    va_end(ap);
    outChar(&o, '\n');
    int fd = logOpen();
    writeAll(fd, o.buf, o.len);
    logClose(fd);
}

/* Redis's line from a signal handler: "pid:signal-handler (unixtime) msg". */
void serverLogFromHandler(const char *msg) {
    Out o = {.len = 0};
    outNum(&o, (unsigned long long)getpid(), 10, 0, ' ');
    outStr(&o, ":signal-handler (");
    outNum(&o, (unsigned long long)time(NULL), 10, 0, ' ');
    outStr(&o, ") ");
    outStr(&o, msg);
    outChar(&o, '\n');
    int fd = logOpen();
    writeAll(fd, o.buf, o.len);
    logClose(fd);
}

/* --- report sections --- */

static void *contextEip(void *secret) {
#if defined(__linux__) && defined(__x86_64__)
    return secret ? (void *)((ucontext_t *)secret)->uc_mcontext.gregs[REG_RIP] : NULL;
#elif defined(__linux__) && defined(__aarch64__)
    return secret ? (void *)((ucontext_t *)secret)->uc_mcontext.pc : NULL;
#else
    (void)secret;
    return NULL;
#endif
}

/* The STACK TRACE section: the faulting instruction (when known), then
 * the frames of the calling thread, skipping this function's own and
 * `skip` more (a signal handler's: the trace starts at the kernel's
 * trampoline, as Redis's). */
static __attribute__((noinline)) void logStackTrace(void *eip, int skip) {
    int fd = logOpen();
    static const char head[] = "\n------ STACK TRACE ------\n";
    writeAll(fd, head, sizeof(head) - 1);
    if (eip) {
        writeAll(fd, "EIP:\n", 5);
        backtrace_symbols_fd(&eip, 1, fd);
    }
    writeAll(fd, "\nBacktrace:\n", 12);
    void *frames[100];
    int n = backtrace(frames, 100);
    if (n > 1 + skip) backtrace_symbols_fd(frames + 1 + skip, n - 1 - skip, fd);
    logClose(fd);
}

/* The REGISTERS section (x86-64 Linux; elsewhere nothing). */
static void logRegisters(void *secret) {
#if defined(__linux__) && defined(__x86_64__)
    if (!secret) return;
    const greg_t *g = ((ucontext_t *)secret)->uc_mcontext.gregs;
    static const struct {
        const char *name;
        int reg;
    } regs[] = {{"RAX", REG_RAX}, {"RBX", REG_RBX}, {"RCX", REG_RCX}, {"RDX", REG_RDX}, {"RDI", REG_RDI},
                {"RSI", REG_RSI}, {"RBP", REG_RBP}, {"RSP", REG_RSP}, {"R8 ", REG_R8},  {"R9 ", REG_R9},
                {"R10", REG_R10}, {"R11", REG_R11}, {"R12", REG_R12}, {"R13", REG_R13}, {"R14", REG_R14},
                {"R15", REG_R15}, {"RIP", REG_RIP}, {"EFL", REG_EFL}};
    Out o = {.len = 0};
    outStr(&o, "\n------ REGISTERS ------\n");
    for (size_t i = 0; i < sizeof(regs) / sizeof(regs[0]); i++) {
        outStr(&o, regs[i].name);
        outChar(&o, ':');
        outNum(&o, (unsigned long long)g[regs[i].reg], 16, 16, '0');
        outChar(&o, i % 2 ? '\n' : ' ');
    }
    outStr(&o, "CSGSFS:");
    outNum(&o, (unsigned long long)g[REG_CSGSFS], 16, 16, '0');
    outChar(&o, '\n');
    int fd = logOpen();
    writeAll(fd, o.buf, o.len);
    logClose(fd);
#else
    (void)secret;
#endif
}

/* The command being run when it happened, its bytes escaped. */
static void logCurrentClient(void) {
    const Client *c = server.net.current;
    if (!c || c->argc <= 0 || !c->argv) return;
    crashRaw("\n------ CURRENT CLIENT INFO ------\n");
    crashLog("id=%llu addr=%s fd=%d name=%s db=%d argc=%d", (unsigned long long)c->id, c->addr, clientFd(c),
             c->name ? c->name : "", c->db ? c->db->id : -1, c->argc);
    for (int j = 0; j < c->argc && j < 32; j++) {
        Out o = {.len = 0};
        outStr(&o, "argv[");
        outNum(&o, (unsigned long long)j, 10, 0, ' ');
        outStr(&o, "]: '\"");
        size_t len = sdsLen(c->argv[j]);
        for (size_t i = 0; i < len && i < 128; i++) {
            unsigned char ch = (unsigned char)c->argv[j][i];
            if (ch >= 32 && ch < 127 && ch != '"' && ch != '\\') {
                outChar(&o, (char)ch);
            } else {
                outStr(&o, "\\x");
                outNum(&o, ch, 16, 2, '0');
            }
        }
        outStr(&o, len > 128 ? "\"...'\n" : "\"'\n");
        int fd = logOpen();
        writeAll(fd, o.buf, o.len);
        logClose(fd);
    }
}

/* --- the fast memory test (crash-memcheck-enabled) --- */

static void watchdogArm(long long ms);

#if defined(__linux__) && !defined(CAIRN_SANITIZE)
#define MEMTEST_PAGE 4096
static unsigned long memtestSaved[MEMTEST_PAGE / sizeof(unsigned long)];

/* Tests one page in place: its words saved, then filled with each
 * pattern (and each with its own address) and read back, then restored.
 * Returns the number of mismatches. */
static unsigned long memtestPage(volatile unsigned long *p) {
    static const unsigned long patterns[] = {0UL, ~0UL, 0xaaaaaaaaaaaaaaaaUL, 0x5555555555555555UL};
    const size_t words = MEMTEST_PAGE / sizeof(unsigned long);
    unsigned long errors = 0;
    for (size_t i = 0; i < words; i++) memtestSaved[i] = p[i];
    for (size_t k = 0; k <= sizeof(patterns) / sizeof(patterns[0]); k++) {
        for (size_t i = 0; i < words; i++)
            p[i] = k < sizeof(patterns) / sizeof(patterns[0]) ? patterns[k] : (unsigned long)(uintptr_t)&p[i];
        for (size_t i = 0; i < words; i++)
            if (p[i] != (k < sizeof(patterns) / sizeof(patterns[0]) ? patterns[k] : (unsigned long)(uintptr_t)&p[i]))
                errors++;
    }
    for (size_t i = 0; i < words; i++) p[i] = memtestSaved[i];
    return errors;
}

static unsigned long long parseHex(const char **s) {
    unsigned long long v = 0;
    for (;; (*s)++) {
        char ch = **s;
        if (ch >= '0' && ch <= '9') v = v * 16 + (unsigned)(ch - '0');
        else if (ch >= 'a' && ch <= 'f') v = v * 16 + (unsigned)(ch - 'a' + 10);
        else return v;
    }
}

/* The pages the test must leave alone although they are ordinary memory:
 * each thread's rseq area (glibc registers one per thread).  The kernel
 * reads its critical-section pointer whenever the thread is preempted or
 * takes a signal; a test pattern there is a wild pointer, and the kernel
 * kills the process with SIGSEGV. */
#define MEMTEST_MAX_SKIP 64
static void *memtestSkip[MEMTEST_MAX_SKIP];
static _Atomic int memtestSkipCount;

static void *threadRseqArea(void) {
#ifdef HAVE_RSEQ_AREA
    if (__rseq_size > 0) return (char *)__builtin_thread_pointer() + __rseq_offset;
#endif
    return NULL;
}

static void memtestSkipAdd(void *p) {
    if (!p) return;
    int i = atomic_fetch_add(&memtestSkipCount, 1);
    if (i < MEMTEST_MAX_SKIP) memtestSkip[i] = p;
}

static int memtestSkipped(uintptr_t page) {
    int n = atomic_load(&memtestSkipCount);
    if (n > MEMTEST_MAX_SKIP) n = MEMTEST_MAX_SKIP;
    for (int i = 0; i < n; i++)
        if ((uintptr_t)memtestSkip[i] - page < MEMTEST_PAGE) return 1;
    return 0;
}

/* Every other thread of the process is held, before the test writes its
 * patterns into their stacks and into what they read: each is sent
 * FREEZE_SIGNAL, whose handler records the thread's rseq area and then
 * waits, every signal blocked, until the process ends.  (Redis cancels its
 * own threads instead; this holds a module's threads too.)  A thread that
 * blocks the signal (jemalloc's, stopped before) is not waited for beyond
 * a short deadline. */
#define FREEZE_SIGNAL (SIGRTMAX - 1)
static _Atomic int frozenThreads;

static void freezeHandler(int sig) {
    (void)sig;
    memtestSkipAdd(threadRseqArea());
    atomic_fetch_add(&frozenThreads, 1);
    sigset_t all;
    sigfillset(&all);
    for (;;) sigsuspend(&all);
}

struct linuxDirent64 {
    unsigned long long d_ino;
    long long d_off;
    unsigned short d_reclen;
    unsigned char d_type;
    char d_name[];
};

static void freezeOtherThreads(void) {
    struct sigaction act;
    memset(&act, 0, sizeof(act));
    act.sa_handler = freezeHandler;
    sigemptyset(&act.sa_mask);
    sigaction(FREEZE_SIGNAL, &act, NULL);
    int fd = open("/proc/self/task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd == -1) return;
    pid_t self = (pid_t)syscall(SYS_gettid), pid = getpid();
    int sent = 0;
    static char dents[4096];
    long n;
    while ((n = syscall(SYS_getdents64, fd, dents, sizeof(dents))) > 0) {
        for (long at = 0; at < n;) {
            struct linuxDirent64 *d = (struct linuxDirent64 *)(dents + at);
            at += d->d_reclen;
            const char *s = d->d_name;
            long tid = 0;
            while (*s >= '0' && *s <= '9') tid = tid * 10 + (*s++ - '0');
            if (*s || tid <= 0 || tid == self) continue;
            if (syscall(SYS_tgkill, pid, (pid_t)tid, FREEZE_SIGNAL) == 0) sent++;
        }
    }
    close(fd);
    struct timespec nap = {0, 1000000};
    long long deadline = monotonicUs() + 200000;
    while (atomic_load(&frozenThreads) < sent && monotonicUs() < deadline) nanosleep(&nap, NULL);
}

/* One /proc/self/maps line: tests it when it is private anonymous
 * writable memory other than a stack and other than the test's own
 * buffer or the signal stack.  Returns the mismatches. */
static unsigned long memtestMapsLine(const char *line, const void *avoid1, const void *avoid2, int test) {
    const char *s = line;
    uintptr_t start = (uintptr_t)parseHex(&s);
    if (*s++ != '-') return 0;
    uintptr_t end = (uintptr_t)parseHex(&s);
    if (strncmp(s, " rw-p ", 6) != 0 || !strstr(line, " 00:00 ") || strstr(line, "stack") || strstr(line, "vdso") ||
        strstr(line, "vsyscall"))
        return 0;
    const char *name = strstr(line, " 00:00 ") + 7;
    while (*name && *name != ' ') name++; /* the inode */
    while (*name == ' ') name++;
    if (*name && *name != '[') return 0; /* a file's mapping */
    if (((uintptr_t)avoid1 >= start && (uintptr_t)avoid1 < end) || ((uintptr_t)avoid2 >= start && (uintptr_t)avoid2 < end))
        return 0;
    int fd = logOpen();
    unsigned long errors = 0;
    if (!test) {
        Out o = {.len = 0};
        outStr(&o, "*** Preparing to test memory region ");
        outNum(&o, start, 16, 0, '0');
        outStr(&o, " (");
        outNum(&o, end - start, 10, 0, ' ');
        outStr(&o, " bytes)\n");
        writeAll(fd, o.buf, o.len);
    } else {
        for (uintptr_t p = start; p + MEMTEST_PAGE <= end; p += MEMTEST_PAGE)
            if (!memtestSkipped(p)) errors += memtestPage((unsigned long *)p);
        writeAll(fd, ".O", 2);
    }
    logClose(fd);
    return errors;
}

/* Redis's FAST MEMORY TEST section. */
static void logMemoryTest(void) {
    if (!crashMemcheckEnabled) return;
    crashRaw("\n------ FAST MEMORY TEST ------\n");
    /* The test writes patterns into every anonymous page, so nothing else
     * may run meanwhile.  jemalloc's background threads (which block every
     * signal) are stopped first, then every other thread is held
     * (freezeOtherThreads).  No signal handler may run either: it would
     * read patterns, so every signal the process can hold is blocked but
     * the faults and SIGALRM.  The watchdog's timer is disarmed, and
     * SIGALRM is put back to its default action: should the test hang (a
     * crash inside the allocator), an alarm ends the process. */
    watchdogArm(0);
    struct sigaction dfl;
    memset(&dfl, 0, sizeof(dfl));
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    sigaction(SIGALRM, &dfl, NULL);
    alarm(30);
    sigset_t held;
    sigfillset(&held);
    sigdelset(&held, SIGALRM);
    sigdelset(&held, SIGSEGV);
    sigdelset(&held, SIGBUS);
    sigdelset(&held, SIGFPE);
    sigdelset(&held, SIGILL);
    sigdelset(&held, SIGABRT);
    sigprocmask(SIG_BLOCK, &held, NULL);
    xmallocSetBackgroundThread(0);
    freezeOtherThreads();
    memtestSkipAdd(threadRseqArea());
    static char buf[8192];
    char line[512];
    unsigned long errors = 0;
    int here;
    /* Two passes, as Redis's: the regions listed, then tested. */
    for (int test = 0; test < 2; test++) {
        int mfd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
        if (mfd == -1) return;
        size_t ll = 0;
        ssize_t n;
        while ((n = read(mfd, buf, sizeof(buf))) > 0) {
            for (ssize_t i = 0; i < n; i++) {
                if (buf[i] != '\n') {
                    if (ll + 1 < sizeof(line)) line[ll++] = buf[i];
                    continue;
                }
                line[ll] = '\0';
                errors += memtestMapsLine(line, memtestSaved, &here, test);
                ll = 0;
            }
        }
        close(mfd);
    }
    crashRaw(errors ? "\n!!! MEMORY ERROR DETECTED! Check your memory ASAP !!!\n"
                    : "\nFast memory test PASSED, however your memory can still be broken. Please run a memory test "
                      "for several hours if possible.\n");
}
#else
static void logMemoryTest(void) {}
#endif

static volatile sig_atomic_t reportStarted;

static void bugReportStart(void) {
    if (reportStarted) return;
    reportStarted = 1;
    crashRaw("\n\n=== REDIS BUG REPORT START: Cut & paste starting from here ===\n");
}

/* The END marker, then the process ends: by the signal sig again under
 * its default action (killViaSignal), else by abort(), or exit status 1
 * under use-exit-on-panic. */
static __attribute__((noreturn)) void bugReportEnd(int killViaSignal, int sig) {
    crashRaw("\n=== REDIS BUG REPORT END. Make sure to include from START to END. ===\n\n"
             "       Please report the crash to the Cairn project with the log lines\n"
             "       from START to END and, if you can, the command that caused it.\n\n");
    if (server.cfg.daemonize && server.cfg.pidfile && server.cfg.pidfile[0]) unlink(server.cfg.pidfile);
    if (!killViaSignal) {
        if (useExitOnPanic) _exit(1);
        struct sigaction dfl;
        memset(&dfl, 0, sizeof(dfl));
        dfl.sa_handler = SIG_DFL;
        sigemptyset(&dfl.sa_mask);
        sigaction(SIGABRT, &dfl, NULL);
        abort();
    }
    struct sigaction act;
    memset(&act, 0, sizeof(act));
    act.sa_handler = SIG_DFL;
    sigemptyset(&act.sa_mask);
    sigaction(sig, &act, NULL);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, sig);
    sigprocmask(SIG_UNBLOCK, &set, NULL);
    raise(sig);
    _exit(128 + sig);
}

/* --- fatal signals --- */

static void crashHandler(int sig, siginfo_t *info, void *secret) {
    void *eip = contextEip(secret);
    bugReportStart();
    crashLog("Cairn %s crashed by signal: %d, si_code: %d", CAIRN_VERSION, sig, info->si_code);
    if (sig == SIGSEGV || sig == SIGBUS) crashLog("Accessing address: %p", info->si_addr);
    if (info->si_code == SI_USER && info->si_pid != -1)
        crashLog("Killed by PID: %ld, UID: %d", (long)info->si_pid, (int)info->si_uid);
    if (eip) crashLog("Crashed running the instruction at: %p", eip);
    logStackTrace(eip, 1);
    logRegisters(secret);
    logCurrentClient();
    logMemoryTest();
    bugReportEnd(1, sig);
}

#ifdef CAIRN_SANITIZE
/* The sanitizer runtime reports these itself (with its own stack). */
static const int fatalSignals[] = {SIGABRT};
#else
static const int fatalSignals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
static char altStack[64 * 1024]; /* a stack overflow's report needs a stack */
#endif

void crashSetupHandlers(void) {
    static int warmed;
    if (!warmed) {
        void *f[2];
        backtrace(f, 2); /* loads the unwinder now, not inside a handler */
        crashCron();
#ifndef CAIRN_SANITIZE
        stack_t ss = {.ss_sp = altStack, .ss_size = sizeof(altStack), .ss_flags = 0};
        sigaltstack(&ss, NULL);
#endif
        warmed = 1;
    }
    struct sigaction act;
    memset(&act, 0, sizeof(act));
    sigemptyset(&act.sa_mask);
    if (crashLogEnabled) {
        act.sa_flags = SA_SIGINFO | SA_NODEFER | SA_RESETHAND | SA_ONSTACK;
        act.sa_sigaction = crashHandler;
    } else {
        act.sa_handler = SIG_DFL;
    }
    for (size_t i = 0; i < sizeof(fatalSignals) / sizeof(fatalSignals[0]); i++)
        sigaction(fatalSignals[i], &act, NULL);
}

/* --- panics, assertions, out of memory --- */

static const char *baseName(const char *path) {
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

void serverPanicAt(const char *file, int line, const char *fmt, ...) {
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    bugReportStart();
    crashLog("------------------------------------------------");
    crashLog("!!! Software Failure. Press left mouse button to continue");
    crashLog("Guru Meditation: %s #%s:%d", msg, baseName(file), line);
    logStackTrace(NULL, 0);
    logCurrentClient();
    logMemoryTest();
    bugReportEnd(0, 0);
}

void serverAssertFailedAt(const char *expr, const char *file, int line) {
    bugReportStart();
    const Client *c = server.net.current;
    if (c && c->argv) {
        crashLog("=== ASSERTION FAILED CLIENT CONTEXT ===");
        crashLog("client->flags = %u", c->flags);
        crashLog("client->conn = fd=%d", clientFd(c));
        crashLog("client->argc = %d", c->argc);
        for (int j = 0; j < c->argc && j < 32; j++)
            crashLog("client->argv[%d] = \"%s\" (refcount: 1)", j, c->argv[j]);
    }
    crashLog("=== ASSERTION FAILED ===");
    crashLog("==> %s:%d '%s' is not true", baseName(file), line, expr);
    logStackTrace(NULL, 0);
    logCurrentClient();
    logMemoryTest();
    bugReportEnd(0, 0);
}

void serverOomPanic(size_t size) {
    crashLog("Out Of Memory allocating %zu bytes!", size);
    serverPanic("Cairn aborting for OUT OF MEMORY. Allocating %zu bytes!", size);
}

/* --- the software watchdog --- */

static timer_t watchdogTimer;
static int watchdogTimerCreated;

static void watchdogHandler(int sig, siginfo_t *info, void *secret) {
    (void)sig, (void)info;
    serverLogFromHandler("\n--- WATCHDOG TIMER EXPIRED ---");
    logStackTrace(contextEip(secret), 1);
    serverLogFromHandler("--------\n");
}

/* Arms the one-shot timer for the period (at least two timer ticks), or
 * disarms it (ms 0). */
static void watchdogArm(long long ms) {
    if (!watchdogTimerCreated) return;
    struct itimerspec its;
    memset(&its, 0, sizeof(its));
    if (ms > 0) {
        int hz = server.cfg.hz > 0 ? server.cfg.hz : 10;
        long long min = (1000 / hz) * 2;
        if (ms < min) ms = min;
        its.it_value.tv_sec = ms / 1000;
        its.it_value.tv_nsec = (ms % 1000) * 1000000;
    }
    timer_settime(watchdogTimer, 0, &its, NULL);
}

void watchdogApply(void) {
    if (watchdogPeriod <= 0) {
        watchdogArm(0);
        return;
    }
    if (!watchdogTimerCreated) {
        /* CONFIG SET runs on the main thread: the timer aims at it. */
        struct sigaction act;
        memset(&act, 0, sizeof(act));
        sigemptyset(&act.sa_mask);
        act.sa_flags = SA_SIGINFO | SA_RESTART;
        act.sa_sigaction = watchdogHandler;
        sigaction(SIGALRM, &act, NULL);
        struct sigevent sev;
        memset(&sev, 0, sizeof(sev));
        sev.sigev_notify = SIGEV_THREAD_ID;
        sev.sigev_signo = SIGALRM;
#ifdef sigev_notify_thread_id
        sev.sigev_notify_thread_id = (pid_t)syscall(SYS_gettid);
#else
        sev._sigev_un._tid = (pid_t)syscall(SYS_gettid);
#endif
        if (timer_create(CLOCK_MONOTONIC, &sev, &watchdogTimer) == -1) {
            serverLog(LL_WARNING, "Cannot create the watchdog timer: %s", strerror(errno));
            return;
        }
        watchdogTimerCreated = 1;
    }
    watchdogArm(watchdogPeriod);
}

void watchdogCron(void) {
    if (watchdogPeriod > 0) watchdogArm(watchdogPeriod);
}

/* ------------------------------------------------------------------------ */
/* Configuration                                                             */
/* ------------------------------------------------------------------------ */

/* crash-log-enabled and watchdog-period take effect at once. */
static int applyCrashLog(const char **err) {
    (void)err;
    crashSetupHandlers();
    return 0;
}

static int applyWatchdog(const char **err) {
    (void)err;
    watchdogApply();
    return 0;
}

static ConfigDef crashConfig[] = {
    CONFIG_BOOL("crash-log-enabled", NULL, 0, crashLogEnabled, "yes", .apply = applyCrashLog,
                .rank = CONFIG_RANK_GENERAL + 16),
    CONFIG_BOOL("crash-memcheck-enabled", NULL, 0, crashMemcheckEnabled, "yes"),
    CONFIG_BOOL("use-exit-on-panic", NULL, CF_HIDDEN, useExitOnPanic, "no", .rank = CONFIG_RANK_HIDDEN),
    CONFIG_INT("watchdog-period", NULL, CF_HIDDEN, watchdogPeriod, 0, INT_MAX, "0", .apply = applyWatchdog,
               .rank = CONFIG_RANK_HIDDEN),
};

void crashRegisterConfig(void) { configRegister(crashConfig, CONFIG_COUNT_OF(crashConfig)); }
