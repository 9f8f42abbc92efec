/* dispatch.c -- running a command.
 *
 * The checks a parsed command passes before it runs live above core, in one
 * function (server/process.c processCommand) that main.c installs as the
 * processor; dispatchCommand hands each parsed command to it.  callCommand
 * is the call itself: it fixes the time the command sees, counts stats, runs
 * the after-call hooks, and opens the effects frame (effects.h) in which a
 * write's effects are recorded; the outermost call hands them to
 * persistence and replicas. */
#include "core/dispatch.h"

#include <string.h>

#include "core/effects.h"
#include "core/log.h"
#include "core/server.h"
#include "ds/alloc.h"
#include "ds/util.h"

static DispatchAfterCall **afterCalls;
static int afterCallCount;
static DispatchBeforeCall *beforeCall;
static DispatchProcessor *processor;

void dispatchSetBeforeCall(DispatchBeforeCall *fn) { beforeCall = fn; }
DispatchBeforeCall *dispatchBeforeWrite;

void dispatchAddAfterCall(DispatchAfterCall *fn) {
    afterCalls = xrealloc(afterCalls, sizeof(*afterCalls) * (size_t)(afterCallCount + 1));
    afterCalls[afterCallCount++] = fn;
}

void dispatchSetProcessor(DispatchProcessor *fn) { processor = fn; }

DispatchCommandFilter *dispatchCommandFilter;

void dispatchSetCommandFilter(DispatchCommandFilter *fn) { dispatchCommandFilter = fn; }

/* Runs the filters on c's argv; the old array goes back to the protocol
 * (its strings moved or freed by the filter). */
static __attribute__((noinline)) void filterClientArgv(Client *c) {
    int argc = c->argc;
    sds *nv = dispatchCommandFilter(c->argv, &argc, NULL);
    if (!nv) return;
    sds *old = c->argv;
    int oldc = c->argc;
    for (int i = 0; i < oldc; i++) old[i] = NULL;
    if (c->proto) c->proto->recycle(c->protoState, old, oldc);
    else xfree(old);
    c->argv = nv;
    c->argc = argc;
    size_t bytes = 0;
    for (int i = 0; i < argc; i++) bytes += sdsLen(nv[i]);
    c->argvBytes = bytes;
}

void dispatchCommand(Client *c) {
    if (__builtin_expect(dispatchCommandFilter != NULL, 0)) {
        filterClientArgv(c);
        if (c->argc == 0) { /* a filter deleted every argument: nothing to run */
            replyError(c, "ERR unknown command '', with args beginning with: ");
            return;
        }
    }
    processor(c);
}

/* The transaction layer sees every refused command: a refusal inside MULTI
 * dooms the transaction, and a refused EXEC answers EXECABORT (the hook
 * then replies itself and returns 1). */
static DispatchRejectHook *rejectHook;

void dispatchSetRejectHook(DispatchRejectHook *fn) { rejectHook = fn; }

void dispatchRejectCommand(Client *c, const char *err) {
    if (c->cmd) c->cmd->stats.rejectedCalls++;
    if (rejectHook && rejectHook(c, err)) return;
    replyError(c, err);
}

/* total_error_replies when the current call began or its last nested call
 * ended (Redis's point of reference for failed_calls). */
static long long errorMark;

void dispatchForgetErrors(void) { errorMark = server.stats.totalErrorReplies; }

static DispatchAfterCall **unblockHooks;
static int unblockHookCount;

void dispatchAddUnblockHook(DispatchAfterCall *fn) {
    unblockHooks = xrealloc(unblockHooks, sizeof(*unblockHooks) * (size_t)(unblockHookCount + 1));
    unblockHooks[unblockHookCount++] = fn;
}

void dispatchBlockedDone(Client *c, long long usec, int failed) {
    Command *cmd = c->lastcmd;
    if (!cmd) return;
    cmd->stats.usec += usec;
    if (failed) cmd->stats.failedCalls++;
    for (int i = 0; i < unblockHookCount; i++) unblockHooks[i](c, cmd, usec);
}

/* The AOF load's client: fake, not a script's. */
static int isAofClient(const Client *c) { return c && (c->flags & (CLIENT_FAKE | CLIENT_LUA)) == CLIENT_FAKE; }

static const long long noOffset;
const long long *dispatchWaitOffset = &noOffset;

void callCommand(Client *c, Command *cmd) {
    long long dirtyBefore = server.dirty;
    EffectsFrame frame;
    effectsEnter(&frame);
    c->cmd = cmd;
    c->errorReplied = 0;
    errorMark = server.stats.totalErrorReplies;
    c->flags |= CLIENT_EXECUTING;
    Client *prev = server.net.current;
    server.net.current = c;
    long long start = ustime();
    /* The time a command sees for expiry is fixed when the outermost call
     * starts: the commands EXEC (or, later, a script) runs all see the
     * same clock, as in Redis. */
    if (!prev) {
        dbNowMs = start / 1000;
        dbNowUs = start;
        /* Also for what it runs (EXEC, scripts); serverBeforeSleep clears
         * it for the lookups made outside commands. */
        dbNoTouch = (int)(c->flags & CLIENT_NO_TOUCH);
    }
    if ((cmd->flags & CMD_MONITOR_FIRST) && beforeCall) beforeCall(c, cmd);
    if (__builtin_expect(dispatchBeforeWrite != NULL, 0) && (cmd->flags & CMD_WRITE)) dispatchBeforeWrite(c, cmd);
    cmd->proc(c);
    long long duration = ustime() - start;
    server.net.current = prev;
    c->flags &= ~CLIENT_EXECUTING;
    /* What the AOF load replays (its client, or a script it runs) is not
     * counted (commandstats, total_commands_processed), as in Redis. */
    int counted = !(__builtin_expect(((c->flags | (prev ? prev->flags : 0)) & CLIENT_FAKE) != 0, 0) &&
                    (isAofClient(c) || isAofClient(prev)));
    if (counted) {
        cmd->stats.calls++;
        cmd->stats.usec += duration;
    }
    /* Failed: once if an error was counted since the call began or since
     * its last nested call ended (also one replied to another client, as
     * CLIENT UNBLOCK ERROR's), plus once per error of its own not counted
     * again (a script passing on its commands' errors), as Redis counts.
     * So a command failing inside EXEC or a script fails itself, not EXEC
     * or the script. */
    if (counted) cmd->stats.failedCalls += c->errorReplied + (server.stats.totalErrorReplies > errorMark);
    errorMark = server.stats.totalErrorReplies;
    if (prev) prev->errorReplied = 0;
    /* The unit's effects leave before the after-call hooks serve blocked
     * clients, whose pops are units of their own. */
    effectsLeave(&frame, c, cmd, server.dirty - dirtyBefore, prev == NULL);
    c->woff = *dispatchWaitOffset;
    for (int i = 0; i < afterCallCount; i++) afterCalls[i](c, cmd, duration);
    c->lastcmd = cmd;
    server.stats.numCommands += counted;
    server.stats.statNumOps += counted;
}
