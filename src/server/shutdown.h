/* shutdown.h -- SHUTDOWN and the shutdown on SIGTERM / SIGINT, as Redis 7.0
 * does them: with lagging replicas (an acknowledged offset short of
 * master_repl_offset) and shutdown-timeout > 0, writes are paused and the
 * server waits for them up to the timeout (INFO shutdown_in_milliseconds)
 * before saving and exiting; SHUTDOWN ABORT cancels.  The flags come from
 * SHUTDOWN's arguments or shutdown-on-sigterm / shutdown-on-sigint. */
#ifndef CAIRN_SHUTDOWN_H
#define CAIRN_SHUTDOWN_H

#include "core/client.h"

/* Installs the timer hook that starts a signal's shutdown and ends a
 * waiting one.  Called once at start-up. */
void shutdownInit(void);
/* What a shutdown does before exiting (the final save per the save
 * points, no wait for replicas, listeners closed, pid file removed), for
 * DEBUG RESTART, which then re-executes the server.  0, or -1 when it
 * failed (logged) or a shutdown is under way. */
int shutdownForRestart(void);
/* SHUTDOWN [NOSAVE|SAVE] [NOW] [FORCE] [ABORT] */
void shutdownCommand(Client *c);

/* Registers the shutdown's directives (CONFIG GET/SET/REWRITE, the config
 * file).  Called once from main.c, before the defaults are applied. */
void shutdownRegisterConfig(void);

#endif
