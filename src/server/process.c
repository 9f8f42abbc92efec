/* process.c -- the one place that decides what happens to a parsed command
 * before it runs, top to bottom, in Redis 7.0.15's order (its
 * processCommand), so that a command meeting several refusals at once gets
 * the error Redis gives:
 *
 *   0. an HTTP request line (POST, Host:) closes the connection unanswered;
 *   1. unknown command, or unknown subcommand of a container;
 *   2. wrong number of arguments;
 *   2b. a protected command (DEBUG, MODULE LOAD/LOADEX/UNLOAD) unless its
 *      enable-*-command directive allows it for this client;
 *   3. authentication (the default user's password);
 *   4. inside MULTI, a no-multi command (SAVE, SHUTDOWN) is refused;
 *   5. ACL permissions: the command, its keys and channels (server/acl.c);
 *   5a. cluster mode: the slot of the keys (-MOVED, -ASK, -CROSSSLOT, ...;
 *      server/cluster.c);
 *   5b. maxmemory-clients: the clients using the most memory are
 *      disconnected (the current one's command then does not run);
 *   5c. maxmemory: keys are evicted, and a command that may grow memory
 *      is refused with -OOM when memory stays over the limit (inside
 *      MULTI, anything but EXEC/DISCARD/QUIT/RESET);
 *   6. MISCONF: writes (and PING) while the last background save failed;
 *   7. NOREPLICAS (min-replicas-to-write), READONLY (a read-only replica);
 *   8. a RESP2 client in subscribed mode runs only the pub/sub commands;
 *   9. MASTERDOWN (a stale replica);
 *  10. LOADING: while dump.rdb loads at start-up, only the commands flagged
 *      loading-ok run;
 *  11. a script past busy-reply-threshold: BUSY, but for allow-busy commands;
 *  12. a replica's link, or a MONITOR client (a replica in Redis), may not
 *      touch the keyspace;
 *  13. CLIENT PAUSE postpones the command (no reply yet);
 *  14. inside MULTI the command is queued;
 *  15. the call (core's callCommand), honouring CLIENT REPLY SKIP.
 *
 * tests/integration/test_command_order.py sets up conflicting conditions
 * on Cairn and redis-server and compares the errors.  Every refusal goes
 * through dispatchRejectCommand, so that a refusal inside MULTI dooms the
 * transaction and a refused EXEC answers EXECABORT.  Each feature owns its
 * own rule and exposes it as a function called here. */
#include "server/process.h"

#include <string.h>
#include <strings.h>

#include "core/log.h"
#include "core/dispatch.h"
#include "core/errors.h"
#include "core/server.h"
#include "persist/persist.h"
#include "repl/repl.h"
#include "script/script.h"
#include "server/acl.h"
#include "server/cluster.h"
#include "server/maxmemory.h"
#include "server/monitor.h"
#include "server/multi.h"
#include "server/pause.h"
#include "server/pubsub.h"

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

/* A request whose first word is POST or Host: is an HTTP request sent to
 * this port, most likely by a web page exploiting a browser to reach a
 * server on localhost (cross-protocol scripting).  The connection is closed
 * without a reply and nothing after that line runs; the warning is logged at
 * most once a minute.  Returns 1 if the client was closed.  Neither word
 * names a command, so only unknown commands get here: the check costs the
 * commands nothing. */
static int crossProtocolAttack(Client *c) {
    static long long loggedMs = -60001;
    if (clientIsFake(c)) return 0; /* a fake client (no connection to close) */
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

/* The top-level command the client ran last, when argv[0] names it again:
 * pipelines repeat commands, and this spares the table lookup. */
static Command *repeatedCommand(const Client *c) {
    Command *last = c->lastcmd;
    if (!last) return NULL;
    if (last->parent) last = last->parent;
    return commandNameIs(last, c->argv[0], sdsLen(c->argv[0])) ? last : NULL;
}

/* The command (or subcommand) c->argv names, with c->cmd set to it; NULL
 * after refusing an unknown name (or closing an HTTP request's
 * connection). */
static Command *lookupCommandOrReply(Client *c) {
    Command *cmd = repeatedCommand(c);
    if (!cmd) cmd = commandLookup(c->argv[0], sdsLen(c->argv[0]));
    if (!cmd) {
        c->cmd = NULL;
        if (!crossProtocolAttack(c)) rejectUnknown(c);
        return NULL;
    }
    if (cmd->subcommands && c->argc >= 2) {
        Command *sub = commandLookupSub(cmd, c->argv[1], sdsLen(c->argv[1]));
        if (!sub) {
            c->cmd = NULL; /* no command's rejected_calls, as in Redis */
            rejectUnknownSub(c);
            return NULL;
        }
        cmd = sub;
    }
    c->cmd = cmd;
    return cmd;
}

static int arityMatches(const Client *c, const Command *cmd) {
    return cmd->arity > 0 ? c->argc == cmd->arity : c->argc >= -cmd->arity;
}

/* Whether a CMD_PROTECTED command may run for c: its enable-debug-command
 * or enable-module-command is "yes", or "local" and c is on a unix socket
 * or a loopback address.  NULL when it may, else the refusal. */
static const char *protectedRefusal(const Client *c, const Command *cmd) {
    int isModule = cmd->parent && !strcmp(cmd->parent->name, "module");
    int mode = isModule ? server.cfg.enableModuleCommand : server.cfg.enableDebugCommand;
    if (mode == DEBUGCMD_YES) return NULL;
    if (mode == DEBUGCMD_LOCAL && ((c->flags & (CLIENT_UNIX_SOCKET | CLIENT_FAKE)) || !strncmp(c->addr, "127.", 4) ||
                                   !strncmp(c->addr, "::1:", 4) || !strncmp(c->addr, "[::1]:", 6)))
        return NULL;
    if (isModule)
        return "ERR MODULE command not allowed. If the enable-module-command option is set to \"local\", you can "
               "run it from a local connection, otherwise you need to set this option in the configuration file, "
               "and then restart the server.";
    return "ERR DEBUG command not allowed. If the enable-debug-command option is set to \"local\", you can run "
           "it from a local connection, otherwise you need to set this option in the configuration file, and then "
           "restart the server.";
}

/* CLIENT REPLY SKIP applies to the command after the one that set it. */
static void callHonouringReplySkip(Client *c, Command *cmd) {
    int skipThis = (c->flags & CLIENT_REPLY_SKIP_NEXT) != 0;
    if (skipThis) {
        c->flags &= ~CLIENT_REPLY_SKIP_NEXT;
        c->flags |= CLIENT_REPLY_SKIP;
    }
    callCommand(c, cmd);
    if (skipThis) c->flags &= ~CLIENT_REPLY_SKIP;
}

void processCommand(Client *c) {
    c->errorReplied = 0;
    Command *cmd = lookupCommandOrReply(c);
    if (!cmd) return;
    if (!arityMatches(c, cmd)) {
        sds err = sdsCatPrintf(sdsEmpty(), "ERR wrong number of arguments for '%s' command", cmd->fullname);
        dispatchRejectCommand(c, err);
        sdsFree(err);
        return;
    }
    if (cmd->flags & CMD_PROTECTED) {
        const char *refusal = protectedRefusal(c, cmd);
        if (refusal) {
            dispatchRejectCommand(c, refusal);
            return;
        }
    }
    if (serverAuthRequired(c) && !(cmd->flags & CMD_NO_AUTH)) {
        dispatchRejectCommand(c, ERR_NOAUTH);
        return;
    }
    if (multiRefuseNoMultiOrReply(c, cmd) == -1) return;
    if (aclRefuseCommandOrReply(c, cmd) == -1) return;
    if (clusterEnabled && clusterRefuseOrReply(c, cmd) == -1) return;
    if (maxmemoryEvictClients(c) == -1) return;
    if (maxmemoryRefuseOrReply(c, cmd) == -1) return;
    /* An EXEC whose queue holds a write is a write for MISCONF, NOREPLICAS
     * and READONLY, as in Redis (the condition may have arisen after the
     * writes were queued). */
    int execWrites = (c->flags & CLIENT_MULTI) && (multiQueuedFlags(c) & CMD_WRITE) && !strcmp(cmd->name, "exec");
    if (persistRefuseWriteOrReply(c, cmd, execWrites) == -1) return;
    if (replRefuseWriteOrReply(c, cmd, execWrites) == -1) return;
    if (pubsubRefuseInContextOrReply(c, cmd) == -1) return;
    if (replRefuseStaleOrReply(c, cmd,
                               (c->flags & CLIENT_MULTI) && (multiQueuedInvFlags(c) & CMD_STALE) &&
                                   !strcmp(cmd->name, "exec")) == -1)
        return;
    if (persistRefuseWhileLoadingOrReply(c, cmd) == -1) return;
    const char *busy = scriptBusyError();
    if (busy && !(cmd->flags & CMD_ALLOW_BUSY)) {
        dispatchRejectCommand(c, busy);
        return;
    }
    if (replRefuseReplicaKeyspaceOrReply(c, cmd) == -1) return;
    if (monitorRefuseCommandOrReply(c, cmd) == -1) return;
    if (pausePostponeCommand(c, cmd)) return;
    if (multiQueueCommand(c, cmd)) return;
    callHonouringReplySkip(c, cmd);
}
