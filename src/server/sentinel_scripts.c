/* sentinel_scripts.c -- Sentinel's user scripts: a primary's
 * notification-script (run on every WARNING event about it, with the
 * event's type and text) and client-reconfig-script (run when its address
 * changes, with name, role, state, from and to addresses), queued and run
 * as redis-sentinel 7.0 runs them.
 *
 * Rules (Redis's):
 *   - At most 256 jobs queued (a new one past that drops the oldest job
 *     not running) and 16 running at once.
 *   - A script that exits 1 or dies by a signal is retried, up to 10 runs,
 *     after script-retry-delay doubled at each retry (30 s, 60 s, ...);
 *     another non-zero exit is an error (-script-error), no retry.
 *   - A script running longer than script-max-runtime (60 s) gets SIGKILL
 *     (-script-timeout), then counts as killed by a signal.
 *
 * Invariants:
 *   - `running` is the number of jobs with a live child (pid != 0).
 *   - A job leaves the queue only when its last run has been reaped.
 *   - The child closes every descriptor above stderr before execve: a
 *     script never holds the sentinel's listener or links. */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/log.h"
#include "core/server.h"
#include "ds/alloc.h"
#include "ds/sds.h"
#include "ds/util.h"
#include "server/sentinel_int.h"

extern char **environ;

#define SCRIPT_MAX_QUEUE 256
#define SCRIPT_MAX_RUNNING 16
#define SCRIPT_MAX_RETRY 10
#define SCRIPT_MAX_ARGS 16

typedef struct SJob {
    char **argv; /* NULL-terminated; argv[0] the path */
    int running;
    int retryNum;        /* runs started so far */
    long long startTime; /* running: started at; else not before (0: now) */
    pid_t pid;
    struct SJob *next;
} SJob;

static SJob *head, *tail;
static int queued, running;

static void jobFree(SJob *j) {
    for (int i = 0; j->argv[i]; i++)
        xfree(j->argv[i]);
    xfree(j->argv);
    xfree(j);
}

static void jobUnlink(SJob *j) {
    SJob **pp = &head, *prev = NULL;
    while (*pp && *pp != j) {
        prev = *pp;
        pp = &(*pp)->next;
    }
    if (!*pp) return;
    *pp = j->next;
    if (tail == j) tail = prev;
    queued--;
}

void sentinelScheduleScript(const char *path, ...) {
    char *args[SCRIPT_MAX_ARGS + 1];
    int argc = 0;
    args[argc++] = xstrdup(path);
    va_list ap;
    va_start(ap, path);
    for (const char *a; argc < SCRIPT_MAX_ARGS && (a = va_arg(ap, const char *));)
        args[argc++] = xstrdup(a);
    va_end(ap);
    args[argc] = NULL;
    SJob *j = xcalloc(sizeof(*j));
    j->argv = xmalloc(sizeof(char *) * (size_t)(argc + 1));
    memcpy(j->argv, args, sizeof(char *) * (size_t)(argc + 1));
    if (tail)
        tail->next = j;
    else
        head = j;
    tail = j;
    queued++;
    if (queued > SCRIPT_MAX_QUEUE) {
        for (SJob *o = head; o; o = o->next) {
            if (o->running) continue;
            jobUnlink(o);
            jobFree(o);
            break;
        }
    }
}

static void startDue(long long now) {
    for (SJob *j = head; j && running < SCRIPT_MAX_RUNNING; j = j->next) {
        if (j->running || (j->startTime && j->startTime > now)) continue;
        j->running = 1;
        j->startTime = now;
        j->retryNum++;
        pid_t pid = fork();
        if (pid == -1) {
            sentinelEvent(LL_WARNING, "-script-error", NULL, "%s %d %d", j->argv[0], 99, 0);
            j->running = 0;
            j->pid = 0;
        } else if (pid == 0) {
            struct rlimit rl;
            long maxFd = getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < 65536 ? (long)rl.rlim_cur : 65536;
            for (long fd = 3; fd < maxFd; fd++)
                close((int)fd);
            signal(SIGPIPE, SIG_DFL);
            signal(SIGTERM, SIG_DFL);
            signal(SIGINT, SIG_DFL);
            execve(j->argv[0], j->argv, environ);
            _exit(2);
        } else {
            running++;
            j->pid = pid;
            sentinelEvent(LL_DEBUG, "+script-child", NULL, "%ld", (long)pid);
        }
    }
}

/* The delay before retry n (n >= 1 runs done): the base doubled n-1 times. */
static long long retryDelay(int n) {
    long long d = stun.scriptRetryDelay;
    while (n-- > 1 && d < (1LL << 50))
        d *= 2;
    return d;
}

static void reap(long long now) {
    int status;
    pid_t pid;
    while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
        int exitcode = WIFEXITED(status) ? WEXITSTATUS(status) : 0;
        int bysignal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
        sentinelEvent(LL_DEBUG, "-script-child", NULL, "%ld %d %d", (long)pid, exitcode, bysignal);
        SJob *j = head;
        while (j && !(j->running && j->pid == pid))
            j = j->next;
        if (!j) {
            serverLog(LL_WARNING, "waitpid() returned a pid (%ld) we can't find in our scripts execution queue!",
                      (long)pid);
            continue;
        }
        running--;
        if ((bysignal || exitcode == 1) && j->retryNum != SCRIPT_MAX_RETRY) {
            j->running = 0;
            j->pid = 0;
            j->startTime = now + retryDelay(j->retryNum);
        } else {
            if (bysignal || exitcode != 0)
                sentinelEvent(LL_WARNING, "-script-error", NULL, "%s %d %d", j->argv[0], bysignal, exitcode);
            jobUnlink(j);
            jobFree(j);
        }
    }
}

static void killTimedOut(long long now) {
    for (SJob *j = head; j; j = j->next) {
        if (!j->running || now - j->startTime <= stun.scriptMaxRuntime) continue;
        sentinelEvent(LL_WARNING, "-script-timeout", NULL, "%s %ld", j->argv[0], (long)j->pid);
        kill(j->pid, SIGKILL);
    }
}

void sentinelScriptsTimer(void) {
    startDue(mstime());
    reap(mstime());
    killTimedOut(mstime());
}

int sentinelScriptsRunning(void) { return running; }
int sentinelScriptsQueued(void) { return queued; }

static sds bulk(sds out, const char *s) { return sdsCatPrintf(out, "$%zu\r\n%s\r\n", strlen(s), s); }
static sds bulkLL(sds out, long long v) {
    char b[32];
    snprintf(b, sizeof(b), "%lld", v);
    return bulk(out, b);
}

sds sentinelPendingScriptsReply(sds out, int resp) {
    long long now = mstime();
    out = sdsCatPrintf(out, "*%d\r\n", queued);
    for (SJob *j = head; j; j = j->next) {
        int n = 0;
        while (j->argv[n])
            n++;
        out = sdsCat(out, resp == 3 ? "%5\r\n" : "*10\r\n");
        out = bulk(out, "argv");
        out = sdsCatPrintf(out, "*%d\r\n", n);
        for (int i = 0; i < n; i++)
            out = bulk(out, j->argv[i]);
        out = bulk(out, "flags");
        out = bulk(out, j->running ? "running" : "scheduled");
        out = bulk(out, "pid");
        out = bulkLL(out, (long long)j->pid);
        if (j->running) {
            out = bulk(out, "run-time");
            out = bulkLL(out, now - j->startTime);
        } else {
            long long delay = j->startTime ? j->startTime - now : 0;
            out = bulk(out, "run-delay");
            out = bulkLL(out, delay < 0 ? 0 : delay);
        }
        out = bulk(out, "retry-num");
        out = bulkLL(out, j->retryNum);
    }
    return out;
}

void sentinelCallReconfScript(SInst *m, int leader, const char *state, const char *fromIp, int fromPort,
                              const char *toIp, int toPort) {
    if (!m->clientReconfigScript) return;
    char fp[16], tp[16];
    snprintf(fp, sizeof(fp), "%d", fromPort);
    snprintf(tp, sizeof(tp), "%d", toPort);
    sentinelScheduleScript(m->clientReconfigScript, m->name, leader ? "leader" : "observer", state, fromIp, fp,
                           toIp, tp, (const char *)NULL);
}
