/* dispatch.h -- from a parsed argv to a command run: lookup, checks in
 * Redis's order (unknown command, arity, auth), the call itself with its
 * stats, and the effects frame around it (core/effects.h). */
#ifndef CAIRN_DISPATCH_H
#define CAIRN_DISPATCH_H

#include "core/client.h"

/* Run the command in c->argv (the caller frees argv afterwards). */
void dispatchCommand(Client *c);
/* Run an already-checked command (MULTI/EXEC and scripts reuse this). */
void callCommand(Client *c, Command *cmd);

/* Refuse the current command with err (full text, "ERR ..."), as dispatch
 * does for unknown commands, arity and auth.  Interceptors that refuse a
 * command use it too, so that a refusal inside MULTI dooms the transaction
 * and a refused EXEC answers EXECABORT. */
void dispatchRejectCommand(Client *c, const char *err);
/* Installed by the transaction layer; returns 1 if it replied itself. */
typedef int DispatchRejectHook(Client *c, const char *err);
void dispatchSetRejectHook(DispatchRejectHook *fn);

/* Hooks later layers install to take over or refuse a command after the
 * arity and auth checks, before it runs (RESP2 subscribed-mode
 * restrictions, MULTI queueing, CLIENT PAUSE).  They run in registration
 * order; the first that returns 1 has handled the command (queued it or
 * replied an error).  At most 8. */
typedef int DispatchInterceptor(Client *c, Command *cmd);
void dispatchAddInterceptor(DispatchInterceptor *fn);

/* Run after every command with its duration: latency histograms, MONITOR,
 * serving clients blocked on keys the command made ready.  Hooks run in
 * registration order; at most 8. */
typedef void DispatchAfterCall(Client *c, Command *cmd, long long usec);
/* Run before commands flagged CMD_MONITOR_FIRST (MONITOR's feed).  One. */
typedef void DispatchBeforeCall(Client *c, Command *cmd);
void dispatchSetBeforeCall(DispatchBeforeCall *fn);
void dispatchAddAfterCall(DispatchAfterCall *fn);

#endif
