/* slowlog.h -- SLOWLOG (slowlog.c): its start-up wiring. */
#ifndef CAIRN_SLOWLOG_H
#define CAIRN_SLOWLOG_H

/* Installs the after-call hook that records slow commands.  Called once at
 * start-up. */
void slowlogInit(void);

/* Registers the slow log's directives (CONFIG GET/SET/REWRITE, the config
 * file).  Called once from main.c, before the defaults are applied. */
void slowlogRegisterConfig(void);

#endif
