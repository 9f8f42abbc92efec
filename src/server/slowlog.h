/* slowlog.h -- SLOWLOG (slowlog.c): its start-up wiring. */
#ifndef CAIRN_SLOWLOG_H
#define CAIRN_SLOWLOG_H

/* Installs the after-call hook that records slow commands.  Called once at
 * start-up. */
void slowlogInit(void);

#endif
