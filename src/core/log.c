/* log.c -- the server log in Redis's line format.  Lines go to the file
 * named by `logfile` (opened per line, as Redis does, so log rotation
 * works), or stdout when it is empty, and to syslog when syslog-enabled. */
#include "core/log.h"

#include <stdarg.h>
#include <stdio.h>
#include <sys/time.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "core/server.h"

/* Also to syslog when syslog-enabled (opened on first use with
 * syslog-ident and syslog-facility, which are immutable). */
static void toSyslog(int level, const char *msg) {
    static int opened;
    static const int priorities[] = {LOG_DEBUG, LOG_INFO, LOG_NOTICE, LOG_WARNING};
    if (!opened) {
        openlog(server.cfg.syslogIdent ? server.cfg.syslogIdent : "redis", LOG_PID | LOG_NDELAY | LOG_NOWAIT,
                server.cfg.syslogFacility);
        opened = 1;
    }
    syslog(priorities[level < 4 ? level : 3], "%s", msg);
}

void serverLogVerbatim(int level, const char *text) {
    if (level < server.cfg.loglevel) return;
    const char *logfile = server.cfg.logfile ? server.cfg.logfile : "";
    FILE *fp = logfile[0] ? fopen(logfile, "a") : stdout;
    if (fp) {
        fputs(text, fp);
        fflush(fp);
        if (fp != stdout) fclose(fp);
    }
    if (server.cfg.syslogEnabled) toSyslog(level, text);
}

void serverLogRaw(int level, const char *msg) {
    if (level < server.cfg.loglevel) return;
    if (server.cfg.syslogEnabled) toSyslog(level, msg);
    const char *logfile = server.cfg.logfile ? server.cfg.logfile : "";
    FILE *fp = logfile[0] ? fopen(logfile, "a") : stdout;
    if (!fp) return;
    static const char marks[] = ".-*#";
    struct timeval tv;
    gettimeofday(&tv, NULL);
    struct tm tm;
    localtime_r(&tv.tv_sec, &tm);
    char when[64];
    size_t off = strftime(when, sizeof(when), "%d %b %Y %H:%M:%S.", &tm);
    snprintf(when + off, sizeof(when) - off, "%03d", (int)(tv.tv_usec / 1000));
    pid_t pid = getpid();
    /* A forked child (a background save) logs as Redis's do: role C. */
    char role = server.pid && pid != server.pid ? 'C' : 'M';
    fprintf(fp, "%d:%c %s %c %s\n", (int)pid, role, when, marks[level < 4 ? level : 3], msg);
    fflush(fp);
    if (fp != stdout) fclose(fp);
}

void serverLog(int level, const char *fmt, ...) {
    if (level < server.cfg.loglevel) return;
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    serverLogRaw(level, msg);
}
