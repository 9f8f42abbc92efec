/* pause.h -- CLIENT PAUSE / CLIENT UNPAUSE (Redis 7.0 semantics).
 *
 * pause.c owns the pause state and the clients postponed by it.  pauseInit
 * installs its timer, before-sleep and client hooks; processCommand asks
 * pausePostponeCommand. */
#ifndef CAIRN_PAUSE_H
#define CAIRN_PAUSE_H

#include "core/client.h"

/* 1 while a pause (WRITE or ALL) is in effect.  Redis 7.0 also stops
 * active expiry and eviction meanwhile; db.c may ask this. */
int pauseActive(void);
/* Installs the timer, before-sleep and client-free hooks.  Called once at
 * start-up. */
void pauseInit(void);
/* During a pause that covers cmd, postpones it: the client is blocked with
 * its argv until the pause ends, and nothing is replied yet (returns 1).
 * 0 lets the command go on. */
int pausePostponeCommand(Client *c, Command *cmd);
/* A shutdown waiting for its replicas (server/shutdown.c) pauses writes
 * (on: 1) as CLIENT PAUSE WRITE does, independently of FAILOVER's pause
 * and of CLIENT PAUSE, until it ends or is cancelled (on: 0); CLIENT
 * UNPAUSE does not end it. */
void pauseShutdownWrites(int on);

/* CLIENT subcommand handlers (registered by client_cmd.c). */
void clientPauseCommand(Client *c);
void clientUnpauseCommand(Client *c);

#endif
