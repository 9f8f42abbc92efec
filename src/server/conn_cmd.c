/* conn_cmd.c -- connection commands: PING, ECHO, AUTH, HELLO, QUIT, RESET,
 * SHUTDOWN (server/shutdown.c).  Users and passwords are the ACL's
 * (server/acl.c); while the default user needs no password every connection
 * starts authenticated.
 *
 * Also the commands of features Cairn does not have, answered as Redis
 * 7.0.15 answers them with the feature off, so that they exist in COMMAND,
 * in ACL rules (+readonly) and in scripts: CLUSTER (every subcommand),
 * READONLY, READWRITE and ASKING (cluster support disabled).  MODULE is
 * src/module's; HELLO's "modules" field is its list (infoSetHelloModules). */
#include <string.h>
#include <strings.h>

#include "core/errors.h"
#include "core/log.h"
#include "core/server.h"
#include "script/script.h"
#include "server/cluster.h"
#include "server/acl.h"
#include "server/info.h"
#include "server/shutdown.h"
#include "ds/util.h"

/* AUTH and HELLO AUTH: 0 when user/pass are valid (the client is then
 * authenticated as user), else -1 after replying WRONGPASS (the failure
 * is in ACL LOG). */
static int authenticateOrReply(Client *c, const sds user, const sds pass) {
    if (aclAuthenticate(c, user, pass) == 0) return 0;
    replyError(c, ERR_WRONGPASS);
    return -1;
}

static void pingCommand(Client *c) {
    if (c->argc > 2) {
        replyErrorArity(c);
        return;
    }
    if (c->flags & CLIENT_PUBSUB && c->resp == 2) {
        replyArrayLen(c, 2);
        replyBulk(c, "pong", 4);
        if (c->argc == 1) replyBulk(c, "", 0);
        else replyBulkSds(c, c->argv[1]);
        return;
    }
    if (c->argc == 1) replyStatus(c, "PONG");
    else replyBulkSds(c, c->argv[1]);
}

static void echoCommand(Client *c) { replyBulkSds(c, c->argv[1]); }

static void authCommand(Client *c) {
    if (c->argc > 3) {
        replyErrorSyntax(c);
        return;
    }
    if (c->argc == 2 && aclDefaultNopass()) {
        replyError(c, ERR_NOPASS);
        return;
    }
    sds pass = c->argv[c->argc - 1];
    if (c->argc == 3) {
        if (authenticateOrReply(c, c->argv[1], pass) == -1) return;
    } else {
        sds user = sdsNew("default");
        int rc = authenticateOrReply(c, user, pass);
        sdsFree(user);
        if (rc == -1) return;
    }
    replyOk(c);
}

/* HELLO's "modules" field: the module layer's list, installed at start-up. */
static void (*helloModules)(Client *c);

static void helloCommand(Client *c) {
    long long ver = 0;
    int next = 1;
    if (c->argc >= 2) {
        if (!stringToLongLong(c->argv[1], sdsLen(c->argv[1]), &ver)) {
            replyError(c, "ERR Protocol version is not an integer or out of range");
            return;
        }
        next = 2;
        if (ver < 2 || ver > 3) {
            replyError(c, "NOPROTO unsupported protocol version");
            return;
        }
    }
    sds name = NULL;
    for (int j = next; j < c->argc; j++) {
        int more = c->argc - j - 1;
        if (argIs(c->argv[j], "AUTH") && more >= 2) {
            /* As Redis: authenticated at once, whatever follows. */
            if (authenticateOrReply(c, c->argv[j + 1], c->argv[j + 2]) == -1) return;
            j += 2;
        } else if (argIs(c->argv[j], "SETNAME") && more >= 1) {
            name = c->argv[j + 1];
            j++;
        } else {
            replyErrorFormat(c, "ERR Syntax error in HELLO option '%s'", c->argv[j]);
            return;
        }
    }
    if (serverAuthRequired(c)) {
        replyError(c, "NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO AUTH <user> <pass> option can be used to authenticate the client and select the RESP protocol version at the same time");
        return;
    }
    if (name) {
        for (size_t i = 0; i < sdsLen(name); i++) {
            if (name[i] < '!' || name[i] > '~') {
                replyError(c, "ERR Client names cannot contain spaces, newlines or special characters.");
                return;
            }
        }
        sdsFree(c->name);
        c->name = sdsLen(name) ? sdsDup(name) : NULL;
    }
    if (ver) c->resp = (int)ver;
    replyMapLen(c, 7);
    replyBulkCString(c, "server");
    replyBulkCString(c, "redis");
    replyBulkCString(c, "version");
    replyBulkCString(c, REDIS_COMPAT_VERSION);
    replyBulkCString(c, "proto");
    replyLongLong(c, c->resp);
    replyBulkCString(c, "id");
    replyLongLong(c, (long long)c->id);
    replyBulkCString(c, "mode");
    replyBulkCString(c, "standalone");
    replyBulkCString(c, "role");
    replyBulkCString(c, "master");
    replyBulkCString(c, "modules");
    if (helloModules)
        helloModules(c);
    else
        replyArrayLen(c, 0);
}

void infoSetHelloModules(void (*fn)(Client *c)) { helloModules = fn; }

static void quitCommand(Client *c) {
    replyOk(c);
    c->flags |= CLIENT_CLOSE_AFTER_REPLY;
}

static void resetCommand(Client *c) {
    clientRunResetHooks(c);
    clientSelectDb(c, 0);
    c->resp = 2;
    aclResetClientUser(c);
    sdsFree(c->name);
    c->name = NULL;
    c->flags &= ~(CLIENT_REPLY_OFF | CLIENT_REPLY_SKIP_NEXT | CLIENT_NO_TOUCH | CLIENT_NO_EVICT);
    replyStatus(c, "RESET");
}

/* --- cluster commands without the feature --- */



static Command clusterSubcommands[] = {
    {.name = "addslots", .proc = clusterDispatch},
    {.name = "addslotsrange", .proc = clusterDispatch},
    {.name = "bumpepoch", .proc = clusterDispatch},
    {.name = "count-failure-reports", .proc = clusterDispatch},
    {.name = "countkeysinslot", .proc = clusterDispatch},
    {.name = "delslots", .proc = clusterDispatch},
    {.name = "delslotsrange", .proc = clusterDispatch},
    {.name = "failover", .proc = clusterDispatch},
    {.name = "flushslots", .proc = clusterDispatch},
    {.name = "forget", .proc = clusterDispatch},
    {.name = "getkeysinslot", .proc = clusterDispatch},
    {.name = "help", .proc = clusterDispatch},
    {.name = "info", .proc = clusterDispatch},
    {.name = "keyslot", .proc = clusterDispatch},
    {.name = "links", .proc = clusterDispatch},
    {.name = "meet", .proc = clusterDispatch},
    {.name = "myid", .proc = clusterDispatch},
    {.name = "nodes", .proc = clusterDispatch},
    {.name = "replicas", .proc = clusterDispatch},
    {.name = "replicate", .proc = clusterDispatch},
    {.name = "reset", .proc = clusterDispatch},
    {.name = "saveconfig", .proc = clusterDispatch},
    {.name = "set-config-epoch", .proc = clusterDispatch},
    {.name = "setslot", .proc = clusterDispatch},
    {.name = "shards", .proc = clusterDispatch},
    {.name = "slaves", .proc = clusterDispatch},
    {.name = "slots", .proc = clusterDispatch},
    {0}};


Command connCommands[] = {
    {.name = "asking", .proc = clusterDispatch},
    {.name = "cluster", .subcommands = clusterSubcommands},
    {.name = "readonly", .proc = clusterDispatch},
    {.name = "readwrite", .proc = clusterDispatch},
    {.name = "ping", .proc = pingCommand},
    {.name = "echo", .proc = echoCommand},
    {.name = "auth", .proc = authCommand},
    {.name = "hello", .proc = helloCommand},
    {.name = "quit", .proc = quitCommand},
    {.name = "reset", .proc = resetCommand},
    {.name = "shutdown", .proc = shutdownCommand},
    {0}};
