/* log.h -- Redis's log line format: "pid:R dd Mon yyyy hh:mm:ss.mmm * msg"
 * with role char M (master) and level marks . - * # for
 * debug/verbose/notice/warning.  Destination and level come from the
 * `logfile` and `loglevel` directives. */
#ifndef CAIRN_LOG_H
#define CAIRN_LOG_H

#include "core/config.h"

void serverLog(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Log without formatting (safe for arbitrary text). */
void serverLogRaw(int level, const char *msg);
/* Write text as is, without the line prefix (the start-up logo). */
void serverLogVerbatim(int level, const char *text);

#endif
