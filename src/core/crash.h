/* crash.h -- crash reports (fatal signals, panics, failed assertions, out
 * of memory) and the software watchdog (`watchdog-period`).
 *
 * A report goes to the log (logfile, or stdout) in Redis's layout: the
 * "=== REDIS BUG REPORT START" marker, a "crashed by signal" or "Guru
 * Meditation" / "ASSERTION FAILED" header, a STACK TRACE section
 * (backtrace(3); names need the binary's -rdynamic), the command being
 * run, and the END marker.  It is written with write(2) and a formatter of
 * its own, so that a crash inside malloc or stdio cannot deadlock it.
 *
 * After a fatal signal the process dies by that same signal (default
 * action re-raised), as Redis does; after a panic, an assertion or an OOM
 * it aborts (SIGABRT), or exits with status 1 under use-exit-on-panic. */
#ifndef CAIRN_CRASH_H
#define CAIRN_CRASH_H

#include <stddef.h>

/* Installs (crash-log-enabled yes) or removes (no) the handlers of
 * SIGSEGV, SIGBUS, SIGFPE, SIGILL and SIGABRT.  Sanitizer builds keep
 * their own handlers for the first four.  Safe to call again (CONFIG SET). */
void crashSetupHandlers(void);
/* Refreshes what the signal-time formatter needs (the local time zone's
 * offset); called once a second from the timer. */
void crashCron(void);

/* A line as Redis logs from a signal handler ("pid:signal-handler
 * (unixtime) msg"), written async-signal-safely. */
void serverLogFromHandler(const char *msg);

/* Logs a panic report for msg (a printf format) at file:line, then ends
 * the process (abort, or exit 1 under use-exit-on-panic). */
void serverPanicAt(const char *file, int line, const char *fmt, ...)
    __attribute__((noreturn, format(printf, 3, 4)));
#define serverPanic(...) serverPanicAt(__FILE__, __LINE__, __VA_ARGS__)
/* Logs an assertion report (the current client's command, then "==>
 * file:line 'expr' is not true"), then ends the process as a panic. */
void serverAssertFailedAt(const char *expr, const char *file, int line) __attribute__((noreturn));
#define serverAssert(e) ((e) ? (void)0 : serverAssertFailedAt(#e, __FILE__, __LINE__))
/* The out-of-memory end: "Out Of Memory allocating <n> bytes!", then a
 * panic report.  Installed as the allocator's OOM handler. */
void serverOomPanic(size_t size) __attribute__((noreturn));

/* The software watchdog: with watchdog-period > 0, a SIGALRM aimed at the
 * main thread fires when the event loop did not re-arm it for that long
 * (at least two timer periods), and logs "--- WATCHDOG TIMER EXPIRED ---"
 * with the main thread's stack.  watchdogApply follows a change of the
 * period; watchdogCron re-arms (from the timer). */
void watchdogApply(void);
void watchdogCron(void);

/* Registers the crash report's and watchdog's directives (CONFIG
 * GET/SET/REWRITE, the config file).  Called once from main.c, before the
 * defaults are applied. */
void crashRegisterConfig(void);

#endif
