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
 * processor does for unknown commands, arity and auth; counts c->cmd's
 * rejected_calls (none for an unknown command: c->cmd NULL).  Every check that
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
/* Run before every command flagged CMD_WRITE while set (an in-process
 * snapshot, persist/snapshot.c: it writes the keys the command names
 * before they change); NULL otherwise, then a write pays one branch. */
extern DispatchBeforeCall *dispatchBeforeWrite;
void dispatchAddAfterCall(DispatchAfterCall *fn);

/* The errors counted so far fail no running command: a script's call
 * refused before it ran counts its error itself, and the script is not
 * failed by it (Redis's reference point moves on, as after a nested call). */
void dispatchForgetErrors(void);

/* A blocked client's command is done: served (usec the time serving it
 * took, failed if that replied an error) or unblocked by CLIENT UNBLOCK
 * (failed, as Redis counts it).  Adds to its command's usec and
 * failed_calls and runs the unblock hooks (slow log, latency histogram),
 * which see c's argv as it is then.  Not for timeouts: Redis records
 * nothing for them.  (The call that blocked already counted the call.) */
void dispatchBlockedDone(Client *c, long long usec, int failed);
void dispatchAddUnblockHook(DispatchAfterCall *fn);

/* Command filters (the module layer's RedisModule_RegisterCommandFilter):
 * while one is installed, every command a client sends passes through it
 * before the lookup, once (dispatchCommand; not again when CLIENT PAUSE
 * re-processes it), as do a script's redis.call and a module's Call.  It
 * gets an argv of argc sds and returns NULL when nothing changed (argv
 * untouched), else a new array (xmalloc) owning its strings, *argc set to
 * its length (possibly 0): then every string of the old array was moved
 * into it or freed, and the caller frees only the old array itself.
 * caller: the module whose Call this is (NOSELF filters skip it), or NULL.
 * Unset (NULL) when no filter is registered: the cost is one branch. */
typedef sds *DispatchCommandFilter(sds *argv, int *argc, void *caller);
extern DispatchCommandFilter *dispatchCommandFilter;
void dispatchSetCommandFilter(DispatchCommandFilter *fn);

#endif
