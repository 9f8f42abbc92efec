/* sentinel_acl.c -- Sentinel mode's ACL: acl.c's users, rules, passwords,
 * selectors, permission check, ACL LOG and ACL command, run over Sentinel's
 * own command table and clients.
 *
 * Sentinel mode builds none of the data server's state, so its command
 * table (sentinel_command_data.c, redis-sentinel 7.0.15's commands) is
 * registered here into core's otherwise empty table, as Command entries
 * with a CommandSpec made from each row (arity, ACL categories, the
 * no_auth flag): acl.c then indexes, describes and checks exactly the
 * commands redis-sentinel has ("+get" is unknown, "+@read" allows
 * nothing, "-sentinel|masters" works).  Only ACL's subcommands get
 * handlers (acl.c's own); the other commands keep running in
 * sentinel_client.c, which asks sentinelAclCheck first.
 *
 * Each sentinel client owns a bridge: a fake Client (no connection)
 * holding its user, authentication, protocol and current argv while acl.c
 * looks at it; whatever acl.c replies into it is moved to the sentinel
 * client's output at once.
 *
 * Invariants:
 *   - The tables are registered once, before aclInit, and never change.
 *   - A bridge's argv is borrowed from the sentinel client only while
 *     acl.c runs (cleared after), and its replies never stay in it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/client.h"
#include "core/command.h"
#include "core/config.h"
#include "core/server.h"
#include "ds/alloc.h"
#include "ds/sds.h"
#include "server/acl.h"
#include "server/sentinel_int.h"

static CommandSpec *specs; /* one per table row */
static Command *tops;      /* the top-level commands (kept by core by pointer) */

/* ACL_* bits of a row's space-separated category names (acl.c's order,
 * which is command.h's bit order). */
static uint64_t categoryBits(const char *cats) {
    static const char *names[] = {"keyspace",  "read",   "write",  "set",        "sortedset", "list",
                                  "hash",      "string", "bitmap", "hyperloglog", "geo",       "stream",
                                  "pubsub",    "admin",  "fast",   "slow",       "blocking",  "dangerous",
                                  "connection", "transaction", "scripting"};
    uint64_t bits = 0;
    for (const char *p = cats; *p;) {
        size_t n = strcspn(p, " ");
        for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
            if (strlen(names[i]) == n && !strncmp(names[i], p, n)) bits |= 1ULL << i;
        p += n;
        while (*p == ' ')
            p++;
    }
    return bits;
}

/* acl.c's handler of the ACL subcommand named name, NULL if none. */
static CommandProc *aclProc(const char *name) {
    for (Command *sub = aclCommands[0].subcommands; sub && sub->name; sub++)
        if (!strcmp(sub->name, name)) return sub->proc;
    return NULL;
}

/* A row's COMMAND DOCS group ("server", "pubsub"...), into buf. */
static const char *rowGroup(const SentinelCommandInfo *row, char *buf, size_t len) {
    const char *p = strstr(row->docs2, "$5\r\ngroup\r\n$");
    buf[0] = '\0';
    if (!p) return buf;
    p += strlen("$5\r\ngroup\r\n$");
    size_t n = (size_t)strtoul(p, NULL, 10);
    p = strstr(p, "\r\n");
    if (p && n < len) {
        memcpy(buf, p + 2, n);
        buf[n] = '\0';
    }
    return buf;
}

/* Redis's command id order, which ACL LIST's single-command rules follow:
 * by group, then name (its generated table's order); a container's
 * subcommands right after it, by name. */
static int rowBefore(int a, int b) {
    const SentinelCommandInfo *x = &sentinelCommandTable[a], *y = &sentinelCommandTable[b];
    if (!x->isSub) {
        char ga[32], gb[32];
        int c = strcmp(rowGroup(x, ga, sizeof(ga)), rowGroup(y, gb, sizeof(gb)));
        if (c) return c < 0;
    }
    return strcmp(x->name, y->name) < 0;
}

/* Sorts the row indices idx[0..n) by rowBefore (insertion sort: a few
 * dozen rows, once). */
static void sortRows(int *idx, int n) {
    for (int i = 1; i < n; i++) {
        int v = idx[i], j = i;
        while (j > 0 && rowBefore(v, idx[j - 1])) {
            idx[j] = idx[j - 1];
            j--;
        }
        idx[j] = v;
    }
}

/* Registers Sentinel's table as core's commands (see the header). */
static void registerCommands(void) {
    int n = sentinelCommandCount;
    specs = xcalloc(sizeof(CommandSpec) * (size_t)n);
    tops = xcalloc(sizeof(Command) * (size_t)n);
    int *order = xmalloc(sizeof(int) * (size_t)n), *subOrder = xmalloc(sizeof(int) * (size_t)n);
    int norder = 0;
    for (int i = 0; i < n; i++)
        if (!sentinelCommandTable[i].isSub) order[norder++] = i;
    sortRows(order, norder);
    int ntops = 0;
    for (int o = 0; o < norder; o++) {
        int i = order[o];
        const SentinelCommandInfo *row = &sentinelCommandTable[i];
        CommandSpec *spec = &specs[i];
        spec->fullname = row->name;
        spec->arity = row->arity;
        spec->acl = categoryBits(row->categories);
        if (strstr(row->info2, "+no_auth\r\n")) spec->flags |= CMD_NO_AUTH;
        Command *top = &tops[ntops++];
        top->name = row->name;
        int nsubs = 0;
        while (i + 1 + nsubs < n && sentinelCommandTable[i + 1 + nsubs].isSub)
            nsubs++;
        if (commandAdd(top, spec) != 0) continue;
        if (nsubs) {
            Command *subs = xcalloc(sizeof(Command) * (size_t)(nsubs + 1));
            for (int k = 0; k < nsubs; k++)
                subOrder[k] = i + 1 + k;
            sortRows(subOrder, nsubs);
            for (int k = 0; k < nsubs; k++) {
                const SentinelCommandInfo *srow = &sentinelCommandTable[subOrder[k]];
                CommandSpec *sspec = &specs[subOrder[k]];
                Command *sub = &subs[k];
                const char *bar = strchr(srow->name, '|');
                sspec->fullname = srow->name;
                sspec->arity = srow->arity;
                sspec->acl = categoryBits(srow->categories);
                if (strstr(srow->info2, "+no_auth\r\n")) sspec->flags |= CMD_NO_AUTH;
                sub->name = bar ? bar + 1 : srow->name;
                sub->nameLen = strlen(sub->name);
                sub->spec = sspec;
                sub->arity = sspec->arity;
                sub->flags = sspec->flags;
                sub->fullname = (char *)srow->name;
                sub->parent = top;
                sub->id = commandNewId();
                if (!strcmp(row->name, "acl")) sub->proc = aclProc(sub->name);
            }
            top->subcommands = subs;
        }
    }
    xfree(order);
    xfree(subOrder);
}

static const AclClientHooks hooks = {sentinelClientInfoOf, sentinelClientsCloseUser, sentinelClientsCloseSubscribers};

void sentinelAclInit(void) {
    registerCommands();
    aclInit();
    aclSetClientHooks(&hooks);
}

struct Client *sentinelAclClientCreate(void) {
    Client *c = clientCreateFake();
    /* its replies are small and moved out at once: the smallest buffer
     * (longer ones go to reply blocks) */
    c->buf = xrealloc(c->buf, CLIENT_REPLY_BUF_MIN);
    c->bufSize = xmallocSize(c->buf);
    c->bufPeak = 0;
    aclResetClientUser(c);
    return c;
}

void sentinelAclClientFree(struct Client *c) {
    if (!c) return;
    c->argv = NULL;
    c->argc = 0;
    clientFree(c);
}

/* Moves what acl.c replied into c to out. */
static sds takeReplies(Client *c, sds out) {
    out = sdsCatLen(out, c->buf, c->bufpos);
    for (ReplyBlock *b = c->replyHead; b; b = b->next) {
        if (b->refLen) out = sdsCatLen(out, b->ref, b->refLen);
        out = sdsCatLen(out, b->buf, b->used);
    }
    clientDiscardReplies(c);
    return out;
}

static void borrow(Client *c, int resp, int argc, sds *argv, Command *cmd) {
    c->resp = resp;
    c->argc = argc;
    c->argv = argv;
    c->cmd = cmd;
    c->lastcmd = cmd;
}

static void giveBack(Client *c) {
    c->argc = 0;
    c->argv = NULL;
    c->cmd = NULL;
}

/* The command or subcommand argv names, when it exists and argc fits its
 * arity; else NULL (the command's handler replies the error, as Redis
 * checks those before the permissions). */
static Command *checkedCommand(int argc, sds *argv) {
    Command *cmd = commandLookup(argv[0], sdsLen(argv[0]));
    if (!cmd) return NULL;
    if (cmd->subcommands) {
        if (argc < 2) return NULL;
        cmd = commandLookupSub(cmd, argv[1], sdsLen(argv[1]));
        if (!cmd) return NULL;
    }
    if ((cmd->arity > 0 && argc != cmd->arity) || (cmd->arity < 0 && argc < -cmd->arity)) return NULL;
    return cmd;
}

int sentinelAclCheck(struct Client *c, int resp, int argc, sds *argv, sds *out) {
    if (!c->user && aclDefaultUnrestricted) return 0;
    Command *cmd = checkedCommand(argc, argv);
    if (!cmd) return 0;
    borrow(c, resp, argc, argv, cmd);
    int rc = aclRefuseCommandSlow(c, cmd);
    *out = takeReplies(c, *out);
    giveBack(c);
    return rc;
}

int sentinelAclAuth(struct Client *c, int argc, sds *argv, const sds user, const sds pass) {
    borrow(c, c->resp, argc, argv, NULL);
    int rc = aclAuthenticate(c, user, pass);
    giveBack(c);
    return rc;
}

int sentinelAclAuthRequired(const struct Client *c) { return server.authDefaultRequired && !c->authenticated; }

int sentinelAclDefaultNopass(void) { return aclDefaultNopass(); }

const char *sentinelAclUserName(const struct Client *c) { return aclClientUserName(c); }

struct AclUser *sentinelAclUserByName(const char *name, size_t len) { return aclUserByName(name, len); }

int sentinelAclHasUser(const struct Client *c, const struct AclUser *u) { return aclClientUser(c) == u; }

void sentinelAclDeauth(struct Client *c) {
    c->user = NULL;
    c->authenticated = 0;
}

sds sentinelAclCommand(struct Client *c, int resp, int argc, sds *argv, sds out) {
    if (argc < 2) return sdsCat(out, "-ERR wrong number of arguments for 'acl' command\r\n");
    Command *parent = commandLookup("acl", 3);
    Command *cmd = parent ? commandLookupSub(parent, argv[1], sdsLen(argv[1])) : NULL;
    if (!cmd || !cmd->proc) {
        sds sub = sdsNewLen(argv[1], sdsLen(argv[1]) > 128 ? 128 : sdsLen(argv[1]));
        out = sdsCatPrintf(out, "-ERR unknown subcommand '%s'. Try ACL HELP.\r\n", sub);
        sdsFree(sub);
        return out;
    }
    if ((cmd->arity > 0 && argc != cmd->arity) || (cmd->arity < 0 && argc < -cmd->arity))
        return sdsCatPrintf(out, "-ERR wrong number of arguments for '%s' command\r\n", cmd->fullname);
    borrow(c, resp, argc, argv, cmd);
    cmd->proc(c);
    out = takeReplies(c, out);
    giveBack(c);
    return out;
}

/* --- config --- */

const char *sentinelAclConfigLine(int argc, sds *argv, int linenum, const char *line, int *handled) {
    const char *k = argv[0];
    *handled = 1;
    if (!strcasecmp(k, "user")) {
        sdsToLower(argv[0]);
        return aclUserLineKind()->parse(argv, argc, linenum, line);
    }
    if (!strcasecmp(k, "aclfile") || !strcasecmp(k, "requirepass") || !strcasecmp(k, "acllog-max-len") ||
        !strcasecmp(k, "acl-pubsub-default")) {
        const char *err = NULL;
        if (argc < 2) return "wrong number of arguments";
        if (configSetDirective(k, argv + 1, argc - 1, &err) != 0) return err;
        return NULL;
    }
    *handled = 0;
    return NULL;
}

sds *sentinelAclUserLines(int *count) { return aclUserLineKind()->rewrite(count); }
