/* monitor.c -- MONITOR: every command any client runs, as one status line
 * per command to each monitoring client, in Redis 7.0's format:
 *
 *   +1502873561.856390 [0 127.0.0.1:53546] "SET" "k" "v"
 *   +1502873561.856390 [0 unix:/tmp/redis.sock] "GET" "k"
 *   +1502873561.856390 [0 lua] "HINCRBY" "app_id_99" "RUNNING" "-1"
 *
 * The line is fed after the command ran (dispatch's after-call hook), as
 * Redis 7.0 does: commands refused before running (unknown, arity,
 * authentication, subscribed mode) are not shown; commands queued by MULTI
 * appear when EXEC runs them, before the EXEC line; the database is the
 * client's after the command (SELECT shows the new one).  Commands flagged
 * admin or skip-monitor are never shown.  Arguments are quoted like
 * sdsCatRepr; AUTH's arguments, HELLO's AUTH username and password and
 * MIGRATE's AUTH / AUTH2 ones are shown as "(redacted)" exactly where Redis
 * redacts them (commandFindRedacted, which SLOWLOG uses too).
 *
 * Each line is a push item (PUSH_MONITOR, proto/push.h) rendered once per
 * encoder in use (RESP: a status line in both versions) and copied to each
 * monitor; CLIENT REPLY OFF drops it, as Redis drops it (core/push.h).
 *
 * A monitoring client holds CLIENT_MONITOR and sits in `monitors`; like a
 * Redis replica it may not run commands that touch the keyspace
 * (monitorRefuseCommandOrReply, one of processCommand's checks).  It stops
 * on RESET and when freed. */
#include "server/monitor.h"

#include <string.h>

#include "core/client.h"
#include "core/command.h"
#include "core/dispatch.h"
#include "core/push.h"
#include "core/server.h"
#include "ds/alloc.h"
#include "ds/sds.h"
#include "ds/util.h"

static Client **monitors; /* monitoring clients, in MONITOR order */
static size_t monitorCount, monitorCap;

static void removeMonitor(Client *c) {
    if (!(c->flags & CLIENT_MONITOR)) return;
    for (size_t i = 0; i < monitorCount; i++) {
        if (monitors[i] == c) {
            memmove(monitors + i, monitors + i + 1, (monitorCount - i - 1) * sizeof(*monitors));
            monitorCount--;
            break;
        }
    }
    c->flags &= ~CLIENT_MONITOR;
}

static void monitorCommand(Client *c) {
    /* Inside MULTI/EXEC or a script a client expects one reply per command. */
    if (c->flags & (CLIENT_MULTI | CLIENT_LUA)) {
        replyError(c, "ERR MONITOR isn't allowed for DENY BLOCKING client");
        return;
    }
    if (c->flags & CLIENT_MONITOR) return; /* Redis ignores it silently: no reply */
    if (monitorCount == monitorCap) {
        monitorCap = monitorCap ? monitorCap * 2 : 4;
        monitors = xrealloc(monitors, monitorCap * sizeof(*monitors));
    }
    monitors[monitorCount++] = c;
    c->flags |= CLIENT_MONITOR;
    replyOk(c);
}

/* MIGRATE's AUTH password and AUTH2 user and password, among the options
 * it parses before KEYS or a syntax error. */
static void findRedactedMigrate(int argc, sds *argv, char *redact) {
    for (int j = 6; j < argc; j++) {
        int more = argc - 1 - j;
        if (argIs(argv[j], "copy") || argIs(argv[j], "replace")) continue;
        if (argIs(argv[j], "auth") && more >= 1) {
            redact[++j] = 1;
        } else if (argIs(argv[j], "auth2") && more >= 2) {
            redact[j + 1] = redact[j + 2] = 1;
            j += 2;
        } else {
            return;
        }
    }
}

void commandFindRedacted(const Command *cmd, int argc, sds *argv, char *redact) {
    if (cmd->parent) {
        /* Every argument after ACL SETUSER; the values of the configs
         * Redis 7.0.15 flags sensitive in a well-formed CONFIG SET. */
        if (!strcmp(cmd->parent->name, "acl") && !strcmp(cmd->name, "setuser")) {
            for (int j = 2; j < argc; j++) redact[j] = 1;
        } else if (!strcmp(cmd->parent->name, "config") && !strcmp(cmd->name, "set") && argc >= 4 &&
                   argc % 2 == 0) {
            for (int j = 2; j < argc; j += 2)
                if (argIs(argv[j], "requirepass") || argIs(argv[j], "masterauth") || argIs(argv[j], "masteruser"))
                    redact[j + 1] = 1;
        }
        return;
    }
    if (!strcmp(cmd->name, "migrate")) {
        findRedactedMigrate(argc, argv, redact);
        return;
    }
    if (!strcmp(cmd->name, "auth")) {
        if (argc <= 3)
            for (int j = 1; j < argc; j++)
                redact[j] = 1;
        return;
    }
    if (strcmp(cmd->name, "hello") || argc < 2) return;
    long long ver;
    if (!stringToLongLong(argv[1], sdsLen(argv[1]), &ver) || ver < 2 || ver > 3) return;
    for (int j = 2; j < argc; j++) {
        int more = argc - 1 - j;
        if (argIs(argv[j], "auth") && more >= 2) {
            redact[j + 1] = redact[j + 2] = 1;
            j += 2;
        } else if (argIs(argv[j], "setname") && more >= 1) {
            j++;
        } else {
            return;
        }
    }
}

/* The line's text: "<time> [<db> <addr>] <args>", no line end. */
static sds formatLine(Client *c, Command *cmd) {
    long long us = ustime();
    sds line =
        sdsCatPrintf(sdsEmpty(), "%lld.%06lld [%d ", us / 1000000, us % 1000000, c->db ? c->db->id : 0);
    if (c->flags & CLIENT_LUA)
        line = sdsCatLen(line, "lua", 3);
    else if (c->flags & CLIENT_UNIX_SOCKET)
        line = sdsCatPrintf(line, "unix:%s", server.cfg.unixsocket ? server.cfg.unixsocket : "");
    else
        line = sdsCatLen(line, c->addr, strlen(c->addr));
    line = sdsCatLen(line, "] ", 2);
    char small[16];
    char *redact = c->argc <= (int)sizeof(small) ? small : xmalloc((size_t)c->argc);
    memset(redact, 0, (size_t)c->argc);
    commandFindRedacted(cmd, c->argc, c->argv, redact);
    for (int j = 0; j < c->argc; j++) {
        if (redact[j])
            line = sdsCatLen(line, "\"(redacted)\"", 12);
        else
            line = sdsCatRepr(line, c->argv[j], sdsLen(c->argv[j]));
        if (j != c->argc - 1) line = sdsCatLen(line, " ", 1);
    }
    if (redact != small) xfree(redact);
    return line;
}

static void feedMonitors(Client *c, Command *cmd) {
    sds line = formatLine(c, cmd);
    PushItem item = {.kind = PUSH_MONITOR, .payload = {line, sdsLen(line)}};
    PushFanout f = {0};
    pushFanoutBegin(&f, &item);
    for (size_t i = 0; i < monitorCount; i++)
        pushFanoutDeliver(&f, monitors[i]);
    pushFanoutEnd(&f, 0);
    sdsFree(line);
}

static void monitorAfterCall(Client *c, Command *cmd, long long usec) {
    (void)usec;
    if (monitorCount == 0 || (cmd->flags & (CMD_ADMIN | CMD_SKIP_MONITOR))) return;
    /* Fake clients other than scripts (loading) are not shown. */
    if ((c->flags & CLIENT_FAKE) && !(c->flags & CLIENT_LUA)) return;
    feedMonitors(c, cmd);
}

/* EVAL, FCALL (flagged skip-monitor, as in Redis) are shown before they
 * run, ahead of the commands their script calls. */
static void monitorBeforeCall(Client *c, Command *cmd) {
    if (monitorCount == 0 || (c->flags & CLIENT_FAKE)) return;
    feedMonitors(c, cmd);
}

int monitorRefuseCommandOrReply(Client *c, Command *cmd) {
    if (!(c->flags & CLIENT_MONITOR) || !(cmd->flags & (CMD_WRITE | CMD_READONLY | CMD_MAY_REPLICATE)))
        return 0;
    dispatchRejectCommand(c, "ERR Replica can't interact with the keyspace");
    return -1;
}

void monitorInit(void) {
    clientAddFreeHook(removeMonitor);
    clientAddResetHook(removeMonitor);
    dispatchAddAfterCall(monitorAfterCall);
    dispatchSetBeforeCall(monitorBeforeCall);
}

Command monitorCommands[] = {
    {.name = "monitor", .proc = monitorCommand},
    {0},
};
