/* monitor.h -- MONITOR (monitor.c): its start-up wiring and its rule in
 * processCommand. */
#ifndef CAIRN_MONITOR_H
#define CAIRN_MONITOR_H

#include "core/client.h"

/* Installs the client and after/before-call hooks.  Called once at
 * start-up. */
void monitorInit(void);
/* A monitoring client is a replica to Redis: a command that touches the
 * keyspace is refused ("Replica can't interact with the keyspace"; -1 after
 * replying).  0 lets the command go on. */
int monitorRefuseCommandOrReply(Client *c, Command *cmd);

#endif
