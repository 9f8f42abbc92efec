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
/* Marks in redact[0..argc) the arguments Redis 7.0 hides from MONITOR and
 * SLOWLOG as "(redacted)": AUTH's (at most two), HELLO's AUTH pair(s),
 * MIGRATE's AUTH / AUTH2 secrets, all of ACL SETUSER's after the
 * subcommand, and the values of requirepass, masterauth and masteruser in
 * a well-formed CONFIG SET.  redact must be zeroed by the caller. */
void commandFindRedacted(const Command *cmd, int argc, sds *argv, char *redact);

#endif
