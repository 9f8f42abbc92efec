/* pause.h -- CLIENT PAUSE / CLIENT UNPAUSE (Redis 7.0 semantics).
 *
 * pause.c owns the pause state and the clients postponed by it.  It
 * registers its own dispatch interceptor, timer and before-sleep hooks; other
 * layers only need the queries below. */
#ifndef CAIRN_PAUSE_H
#define CAIRN_PAUSE_H

#include "core/client.h"

/* 1 while a pause (WRITE or ALL) is in effect.  Redis 7.0 also stops
 * active expiry and eviction meanwhile; db.c may ask this. */
int pauseActive(void);

/* CLIENT subcommand handlers (registered by client_cmd.c). */
void clientPauseCommand(Client *c);
void clientUnpauseCommand(Client *c);

#endif
