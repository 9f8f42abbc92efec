/* dispatch.c -- running a parsed command.
 *
 * Order of checks, as Redis 7.0 does them: an HTTP request line (POST,
 * Host:) closes the connection; unknown command (or unknown
 * subcommand of a container), wrong arity, authentication; then a later
 * layer may take the command (MULTI queueing); then the call.  The call
 * fixes the time the command sees, counts stats, and opens the effects
 * frame (effects.h) in which a write's effects are recorded; the outermost
 * call hands them to persistence and replicas. */
#include "core/dispatch.h"

#include <string.h>
#include <strings.h>

#include "core/effects.h"
#include "core/errors.h"
#include "core/log.h"
#include "core/server.h"
#include "ds/util.h"

static DispatchInterceptor *interceptors[8];
static int interceptorCount;
static DispatchAfterCall *afterCalls[8];
static int afterCallCount;

static DispatchBeforeCall *beforeCall;

void dispatchSetBeforeCall(DispatchBeforeCall *fn) { beforeCall = fn; }

void dispatchAddAfterCall(DispatchAfterCall *fn) {
    if (afterCallCount < 8) afterCalls[afterCallCount++] = fn;
}

void dispatchAddInterceptor(DispatchInterceptor *fn) {
    if (interceptorCount < 8) interceptors[interceptorCount++] = fn;
}

/* The transaction layer sees every refused command: a refusal inside MULTI
 * dooms the transaction, and a refused EXEC answers EXECABORT (the hook
 * then replies itself and returns 1). */
static DispatchRejectHook *rejectHook;

void dispatchSetRejectHook(DispatchRejectHook *fn) { rejectHook = fn; }

void dispatchRejectCommand(Client *c, const char *err) {
    if (rejectHook && rejectHook(c, err)) return;
    replyError(c, err);
}

static void rejectUnknown(Client *c) {
    sds args = sdsEmpty();
    for (int i = 1; i < c->argc && sdsLen(args) < 128; i++)
        args = sdsCatPrintf(args, "'%.*s' ", 128 - (int)sdsLen(args), c->argv[i]);
    sds err = sdsCatPrintf(sdsEmpty(), "ERR unknown command '%.128s', with args beginning with: %s", c->argv[0], args);
    dispatchRejectCommand(c, err);
    sdsFree(err);
    sdsFree(args);
}

static void rejectUnknownSub(Client *c) {
    sds up = sdsNew(c->argv[0]);
    sdsToUpper(up);
    sds err = sdsCatPrintf(sdsEmpty(), "ERR unknown subcommand '%.128s'. Try %s HELP.", c->argv[1], up);
    dispatchRejectCommand(c, err);
    sdsFree(err);
    sdsFree(up);
}

void callCommand(Client *c, Command *cmd) {
    long long dirtyBefore = server.dirty;
    EffectsFrame frame;
    effectsEnter(&frame);
    c->cmd = cmd;
    c->errorReplied = 0;
    c->flags |= CLIENT_EXECUTING;
    Client *prev = server.net.current;
    server.net.current = c;
    long long start = ustime();
    /* The time a command sees for expiry is fixed when the outermost call
     * starts: the commands EXEC (or, later, a script) runs all see the
     * same clock, as in Redis. */
    if (!prev) dbNowMs = start / 1000;
    if ((cmd->flags & CMD_MONITOR_FIRST) && beforeCall) beforeCall(c, cmd);
    cmd->proc(c);
    long long duration = ustime() - start;
    server.net.current = prev;
    c->flags &= ~CLIENT_EXECUTING;
    cmd->stats.calls++;
    cmd->stats.usec += duration;
    if (c->errorReplied) cmd->stats.failedCalls++;
    /* The unit's effects leave before the after-call hooks serve blocked
     * clients, whose pops are units of their own. */
    effectsLeave(&frame, c, cmd, server.dirty - dirtyBefore, prev == NULL);
    for (int i = 0; i < afterCallCount; i++) afterCalls[i](c, cmd, duration);
    c->lastcmd = cmd;
    server.stats.numCommands++;
    server.stats.statNumOps++;
}

/* The top-level command the client ran last, when argv[0] names it again:
 * pipelines repeat commands, and this spares the table lookup. */
static Command *repeatedCommand(const Client *c) {
    Command *last = c->lastcmd;
    if (!last) return NULL;
    if (last->parent) last = last->parent;
    return commandNameIs(last, c->argv[0], sdsLen(c->argv[0])) ? last : NULL;
}

/* A request whose first word is POST or Host: is an HTTP request sent to
 * this port, most likely by a web page exploiting a browser to reach a
 * server on localhost (cross-protocol scripting).  The connection is closed
 * without a reply and nothing after that line runs; the warning is logged at
 * most once a minute.  Returns 1 if the client was closed.  Neither word
 * names a command, so only unknown commands get here: the check costs the
 * commands nothing. */
static int crossProtocolAttack(Client *c) {
    static long long loggedMs = -60001;
    if (c->fd == -1) return 0; /* a fake client (no connection to close) */
    if (strcasecmp(c->argv[0], "post") != 0 && strcasecmp(c->argv[0], "host:") != 0) return 0;
    if (server.time.nowMs - loggedMs > 60000 || server.time.nowMs < loggedMs) {
        serverLog(LL_WARNING,
                  "Possible SECURITY ATTACK detected. It looks like somebody is sending POST or Host: commands to "
                  "Redis. This is likely due to an attacker attempting to use Cross Protocol Scripting to compromise "
                  "your Redis instance. Connection aborted.");
        loggedMs = server.time.nowMs;
    }
    clientFreeAsync(c);
    return 1;
}

void dispatchCommand(Client *c) {
    c->errorReplied = 0;
    Command *cmd = repeatedCommand(c);
    if (!cmd) cmd = commandLookup(c->argv[0], sdsLen(c->argv[0]));
    if (!cmd) {
        c->cmd = NULL;
        if (!crossProtocolAttack(c)) rejectUnknown(c);
        return;
    }
    if (cmd->subcommands) {
        if (c->argc >= 2) {
            Command *sub = commandLookupSub(cmd, c->argv[1], sdsLen(c->argv[1]));
            if (!sub) {
                c->cmd = cmd;
                rejectUnknownSub(c);
                return;
            }
            cmd = sub;
        }
    }
    c->cmd = cmd;
    if ((cmd->arity > 0 && c->argc != cmd->arity) || c->argc < -cmd->arity) {
        cmd->stats.rejectedCalls++;
        sds err = sdsCatPrintf(sdsEmpty(), "ERR wrong number of arguments for '%s' command", cmd->fullname);
        dispatchRejectCommand(c, err);
        sdsFree(err);
        return;
    }
    if (serverAuthRequired(c) && !(cmd->flags & CMD_NO_AUTH)) {
        cmd->stats.rejectedCalls++;
        dispatchRejectCommand(c, ERR_NOAUTH);
        return;
    }
    for (int i = 0; i < interceptorCount; i++)
        if (interceptors[i](c, cmd)) return;
    /* CLIENT REPLY SKIP applies to the command after the one that set it. */
    int skipThis = (c->flags & CLIENT_REPLY_SKIP_NEXT) != 0;
    if (skipThis) {
        c->flags &= ~CLIENT_REPLY_SKIP_NEXT;
        c->flags |= CLIENT_REPLY_SKIP;
    }
    callCommand(c, cmd);
    if (skipThis) c->flags &= ~CLIENT_REPLY_SKIP;
}
