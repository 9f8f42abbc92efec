/* log.c -- the server log in Redis's line format.  Lines go to the file
 * named by `logfile` (opened per line, as Redis does, so log rotation
 * works), or stdout when it is empty. */
#include "core/log.h"

#include <stdarg.h>
#include <stdio.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "core/server.h"

void serverLogRaw(int level, const char *msg) {
    if (level < server.cfg.loglevel) return;
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
    fprintf(fp, "%d:M %s %c %s\n", (int)getpid(), when, marks[level < 4 ? level : 3], msg);
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
