/* dispatch.h -- from a parsed argv to a command run: the hand-off to the
 * command processor (the checks, server/process.c), the call itself with
 * its stats and hooks, and the effects frame around it (core/effects.h). */
#ifndef CAIRN_DISPATCH_H
#define CAIRN_DISPATCH_H

#include "core/client.h"

/* Run the command in c->argv through the installed processor (the caller
 * frees argv afterwards). */
void dispatchCommand(Client *c);
/* The processor: looks the command up, runs the checks in order and calls
 * it (server/process.c processCommand).  Installed once at start-up. */
typedef void DispatchProcessor(Client *c);
void dispatchSetProcessor(DispatchProcessor *fn);
/* Run an already-checked command (MULTI/EXEC and scripts reuse this). */
void callCommand(Client *c, Command *cmd);
/* What a client's WAIT counts from (c->woff) is read here at the end of
 * each call, once its effects reached the sinks: master_repl_offset, as
 * Redis 7.0 records it after every command.  The replication layer points
 * it at its offset (a constant 0 before). */
extern const long long *dispatchWaitOffset;

/* Refuse the current command with err (full text, "ERR ..."), as the
 * processor does for unknown commands, arity and auth.  Every check that
 * refuses a command uses it, so that a refusal inside MULTI dooms the
 * transaction and a refused EXEC answers EXECABORT. */
void dispatchRejectCommand(Client *c, const char *err);
/* Installed by the transaction layer; returns 1 if it replied itself. */
typedef int DispatchRejectHook(Client *c, const char *err);
void dispatchSetRejectHook(DispatchRejectHook *fn);

/* Run after every command with its duration: latency histograms, MONITOR,
 * serving clients blocked on keys the command made ready.  Hooks run in
 * the order they were added. */
typedef void DispatchAfterCall(Client *c, Command *cmd, long long usec);
/* Run before commands flagged CMD_MONITOR_FIRST (MONITOR's feed).  One. */
typedef void DispatchBeforeCall(Client *c, Command *cmd);
void dispatchSetBeforeCall(DispatchBeforeCall *fn);
void dispatchAddAfterCall(DispatchAfterCall *fn);

#endif
