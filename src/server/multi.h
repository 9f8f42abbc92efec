/* multi.h -- what the transaction layer (multi.c) offers other layers.
 *
 * multi.c owns MULTI/EXEC/DISCARD/WATCH/UNWATCH and the per-db index of
 * watched keys. */
#ifndef CAIRN_MULTI_H
#define CAIRN_MULTI_H

#include <stddef.h>
#include <stdint.h>

#include "core/client.h"

/* Installs the refusal, key-modified, client, flush and swap hooks.  Called
 * once at start-up. */
void multiInit(void);
/* Inside MULTI, a command flagged no-multi (SAVE, SHUTDOWN) is refused:
 * -1 after the error.  0 otherwise.  Right after authentication, as Redis
 * checks it. */
int multiRefuseNoMultiOrReply(Client *c, Command *cmd);
/* Inside MULTI, queues cmd (+QUEUED) and returns 1; MULTI, EXEC, DISCARD,
 * WATCH, QUIT, RESET and commands outside MULTI are left to run (0). */
int multiQueueCommand(Client *c, Command *cmd);

/* Number of commands queued by a client in MULTI (CLIENT LIST multi=). */
int multiQueuedCount(const Client *c);
/* Memory of the queued argv (CLIENT LIST multi-mem=): the argument bytes
 * plus one pointer per argument, summed over the queue, as Redis counts. */
size_t multiQueuedBytes(const Client *c);
/* Bytes c's WATCH records hold: part of its memory (CLIENT LIST tot-mem,
 * client eviction), as Redis counts its watched keys. */
size_t multiWatchedMemory(const Client *c);
/* Union of the CMD_* flags of the queued commands (0 when none): CLIENT
 * PAUSE WRITE treats an EXEC that carries writes as a write. */
uint64_t multiQueuedFlags(const Client *c);
/* The flags some queued command lacks (the union of their complements):
 * EXEC of a queue with a command not flagged stale is refused by a stale
 * replica, as in Redis. */
uint64_t multiQueuedInvFlags(const Client *c);
/* The i-th queued command of c (0-based) and its arguments, or NULL past
 * the end (cluster mode checks the slots of an EXEC's commands). */
Command *multiQueuedAt(const Client *c, int i, int *argc, sds **argv);
/* Leaves the transaction: the queue is dropped, WATCHes too (cluster
 * mode's refused EXEC answers with the redirection, not EXECABORT). */
void multiDiscard(Client *c);
/* A command goes (a module's, unloaded): a transaction that queued it
 * fails at EXEC (EXECABORT) instead of running a command that is gone. */
void multiForgetCommand(Client *c, const Command *cmd);


#endif
