/* dispatch.h -- from a parsed argv to a command run: lookup, checks in
 * Redis's order (unknown command, arity, auth), the call itself with its
 * stats, and the propagation point. */
#ifndef CAIRN_DISPATCH_H
#define CAIRN_DISPATCH_H

#include "core/client.h"

/* Run the command in c->argv (the caller frees argv afterwards). */
void dispatchCommand(Client *c);
/* Run an already-checked command (MULTI/EXEC and scripts reuse this). */
void callCommand(Client *c, Command *cmd);

/* A hook a later layer installs to take over a command before it runs
 * (MULTI queueing).  Returns 1 if it handled the command. */
typedef int DispatchInterceptor(Client *c, Command *cmd);
void dispatchSetInterceptor(DispatchInterceptor *fn);

/* Run after every command with its duration: latency histograms, MONITOR,
 * serving clients blocked on keys the command made ready.  Hooks run in
 * registration order; at most 8. */
typedef void DispatchAfterCall(Client *c, Command *cmd, long long usec);
void dispatchAddAfterCall(DispatchAfterCall *fn);

#endif
