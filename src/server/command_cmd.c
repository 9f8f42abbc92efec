/* command_cmd.c -- the COMMAND container: COMMAND, COMMAND INFO, COUNT, LIST,
 * DOCS, GETKEYS, GETKEYSANDFLAGS, HELP.
 *
 * Everything is generated from the command table: each Command's row in
 * command_data.c (core/command.h) gives arity, flags, ACL categories, the
 * legacy key range, tips, key specs and the COMMAND DOCS fields, in the
 * order and with the reply types redis-server 7.0.15 uses.  GETKEYS and
 * GETKEYSANDFLAGS walk the key specs through commandKeys. */
#include <string.h>
#include <strings.h>

#include "core/client.h"
#include "core/command.h"
#include "ds/glob.h"

static const char *commandName(const Command *cmd) { return cmd->fullname ? cmd->fullname : cmd->name; }

static long subcommandCount(const Command *cmd) {
    long n = 0;
    for (const Command *sub = cmd->subcommands; sub && sub->name; sub++) n++;
    return n;
}

/* Replies the names of the bits set in `bits` as a set of status strings,
 * names[i] naming bit i; bits named "" are not shown. */
static void replyBitNames(Client *c, uint64_t bits, const char *const *names, size_t count) {
    long n = 0;
    for (size_t i = 0; i < count; i++) n += ((bits >> i) & 1) && names[i][0];
    replySetLen(c, n);
    for (size_t i = 0; i < count; i++)
        if (((bits >> i) & 1) && names[i][0]) replyStatus(c, names[i]);
}

/* --- key specs --- */

static const char *const keySpecFlagNames[] = {"RO",     "RW",     "OW",      "RM",         "access",        "update",
                                               "insert", "delete", "not_key", "incomplete", "variable_flags"};
#define KEY_FLAG_COUNT (sizeof(keySpecFlagNames) / sizeof(keySpecFlagNames[0]))

static void replyKeyFlags(Client *c, uint32_t flags) { replyBitNames(c, flags, keySpecFlagNames, KEY_FLAG_COUNT); }

static void replyKeySpec(Client *c, const KeySpec *ks) {
    replyMapLen(c, ks->notes ? 4 : 3);
    if (ks->notes) {
        replyBulkCString(c, "notes");
        replyBulkCString(c, ks->notes);
    }
    replyBulkCString(c, "flags");
    replyKeyFlags(c, ks->flags);

    replyBulkCString(c, "begin_search");
    replyMapLen(c, 2);
    replyBulkCString(c, "type");
    if (ks->bsType == KSB_INDEX) {
        replyBulkCString(c, "index");
        replyBulkCString(c, "spec");
        replyMapLen(c, 1);
        replyBulkCString(c, "index");
        replyLongLong(c, ks->bsIndex);
    } else if (ks->bsType == KSB_KEYWORD) {
        replyBulkCString(c, "keyword");
        replyBulkCString(c, "spec");
        replyMapLen(c, 2);
        replyBulkCString(c, "keyword");
        replyBulkCString(c, ks->bsKeyword);
        replyBulkCString(c, "startfrom");
        replyLongLong(c, ks->bsIndex);
    } else {
        replyBulkCString(c, "unknown");
        replyBulkCString(c, "spec");
        replyMapLen(c, 0);
    }

    static const char *const rangeNames[] = {"lastkey", "keystep", "limit"};
    static const char *const keynumNames[] = {"keynumidx", "firstkey", "keystep"};
    replyBulkCString(c, "find_keys");
    replyMapLen(c, 2);
    replyBulkCString(c, "type");
    if (ks->fkType != KSF_RANGE && ks->fkType != KSF_KEYNUM) {
        replyBulkCString(c, "unknown");
        replyBulkCString(c, "spec");
        replyMapLen(c, 0);
        return;
    }
    const char *const *names = ks->fkType == KSF_RANGE ? rangeNames : keynumNames;
    replyBulkCString(c, ks->fkType == KSF_RANGE ? "range" : "keynum");
    replyBulkCString(c, "spec");
    replyMapLen(c, 3);
    for (int i = 0; i < 3; i++) {
        replyBulkCString(c, names[i]);
        replyLongLong(c, ks->fk[i]);
    }
}

/* --- flags and ACL categories --- */

/* COMMAND INFO's flag names, indexed by CMD_* bit ("" for the bits Redis
 * keeps hidden: may_replicate, sentinel, only_sentinel, protected). */
static const char *const flagNames[] = {
    "write",  "readonly", "denyoom", "module", "admin",   "pubsub", "noscript",         "",
    "blocking", "loading", "stale",  "skip_monitor", "skip_slowlog", "asking", "fast", "no_auth",
    "",       "",         "",        "no_mandatory_keys", "",  "",  "",                 "no_async_loading",
    "no_multi", "movablekeys", "allow_busy",
};
#define FLAG_NAME_COUNT (sizeof(flagNames) / sizeof(flagNames[0]))

static const char *const aclNames[] = {"keyspace",  "read",        "write",      "set",        "sortedset",
                                       "list",      "hash",        "string",     "bitmap",     "hyperloglog",
                                       "geo",       "stream",      "pubsub",     "admin",      "fast",
                                       "slow",      "blocking",    "dangerous",  "connection", "transaction",
                                       "scripting"};
#define ACL_NAME_COUNT (sizeof(aclNames) / sizeof(aclNames[0]))

static void replyAclCategories(Client *c, uint64_t acl) {
    long n = 0;
    for (size_t i = 0; i < ACL_NAME_COUNT; i++) n += (acl >> i) & 1;
    replySetLen(c, n);
    char buf[32];
    for (size_t i = 0; i < ACL_NAME_COUNT; i++) {
        if (!((acl >> i) & 1)) continue;
        buf[0] = '@';
        size_t len = strlen(aclNames[i]);
        memcpy(buf + 1, aclNames[i], len);
        replyStatusLen(c, buf, len + 1);
    }
}

/* --- COMMAND / COMMAND INFO / COUNT --- */

static void replyCommandInfo(Client *c, const Command *cmd) {
    const CommandSpec *spec = cmd->spec;
    replyArrayLen(c, 10);
    replyBulkCString(c, commandName(cmd));
    replyLongLong(c, spec->arity);
    replyBitNames(c, spec->flags & ~CMD_INTERNAL_MASK, flagNames, FLAG_NAME_COUNT);
    replyLongLong(c, spec->firstKey);
    replyLongLong(c, spec->lastKey);
    replyLongLong(c, spec->keyStep);
    replyAclCategories(c, spec->acl);
    long ntips = 0;
    for (const char *const *t = spec->tips; t && *t; t++) ntips++;
    replySetLen(c, ntips);
    for (long i = 0; i < ntips; i++) replyBulkCString(c, spec->tips[i]);
    replySetLen(c, spec->keySpecCount);
    for (int i = 0; i < spec->keySpecCount; i++) replyKeySpec(c, &spec->keySpecs[i]);
    long nsub = subcommandCount(cmd);
    if (nsub == 0) {
        replySetLen(c, 0);
        return;
    }
    replyArrayLen(c, nsub);
    for (const Command *sub = cmd->subcommands; sub && sub->name; sub++) replyCommandInfo(c, sub);
}

/* Finds "name" or "container|sub" (case-insensitive). */
static Command *lookupByFullName(const char *name, size_t len) {
    const char *bar = memchr(name, '|', len);
    if (!bar) return commandLookup(name, len);
    Command *parent = commandLookup(name, (size_t)(bar - name));
    if (!parent || !parent->subcommands) return NULL;
    return commandLookupSub(parent, bar + 1, len - (size_t)(bar - name) - 1);
}

static void commandAllInfo(Client *c) {
    replyArrayLen(c, commandCount());
    unsigned cursor = 0;
    Command *cmd;
    while ((cmd = commandIterate(&cursor)) != NULL) replyCommandInfo(c, cmd);
}

/* COMMAND with no subcommand: every command's info. */
static void commandCommand(Client *c) { commandAllInfo(c); }

static void commandInfoCommand(Client *c) {
    if (c->argc == 2) {
        commandAllInfo(c);
        return;
    }
    replyArrayLen(c, c->argc - 2);
    for (int i = 2; i < c->argc; i++) {
        Command *cmd = lookupByFullName(c->argv[i], sdsLen(c->argv[i]));
        if (cmd)
            replyCommandInfo(c, cmd);
        else
            replyNull(c); /* RESP2 $-1, as Redis */
    }
}

static void commandCountCommand(Client *c) { replyLongLong(c, commandCount()); }

/* --- COMMAND DOCS --- */

static const char *const argTypeNames[] = {"string",    "integer",    "double", "key",  "pattern",
                                           "unix-time", "pure-token", "oneof",  "block"};
static const char *const argFlagNames[] = {"optional", "multiple", "multiple_token"};
static const char *const docFlagNames[] = {"deprecated", "syscmd"};

static void replyBulkField(Client *c, const char *name, const char *value) {
    replyBulkCString(c, name);
    replyBulkCString(c, value);
}

static void replyArgs(Client *c, const CommandArg *args, int count) {
    replyArrayLen(c, count);
    for (int i = 0; i < count; i++) {
        const CommandArg *a = &args[i];
        long n = 2 + (a->keySpecIndex >= 0) + (a->token != NULL) + (a->summary != NULL) + (a->since != NULL) +
                 (a->flags != 0) + (a->deprecatedSince != NULL) + (a->subargCount > 0);
        replyMapLen(c, n);
        replyBulkField(c, "name", a->name);
        replyBulkField(c, "type", argTypeNames[a->type]);
        if (a->keySpecIndex >= 0) {
            replyBulkCString(c, "key_spec_index");
            replyLongLong(c, a->keySpecIndex);
        }
        if (a->token) replyBulkField(c, "token", a->token);
        if (a->summary) replyBulkField(c, "summary", a->summary);
        if (a->since) replyBulkField(c, "since", a->since);
        if (a->flags) {
            replyBulkCString(c, "flags");
            replyBitNames(c, a->flags, argFlagNames, 3);
        }
        if (a->deprecatedSince) replyBulkField(c, "deprecated_since", a->deprecatedSince);
        if (a->subargCount > 0) {
            replyBulkCString(c, "arguments");
            replyArgs(c, a->subargs, a->subargCount);
        }
    }
}

static void replyCommandDocs(Client *c, const Command *cmd) {
    const CommandSpec *spec = cmd->spec;
    long nsub = subcommandCount(cmd);
    /* Fields a command does not have are left out, as Redis does. */
    long n = (spec->summary != NULL) + (spec->since != NULL) + (spec->group != NULL) +
             (spec->complexity != NULL) + (spec->docFlags != 0) + (spec->deprecatedSince != NULL) +
             (spec->replacedBy != NULL) + (spec->historyCount > 0) + (spec->argCount > 0) + (nsub > 0) +
             (spec->module != NULL);
    replyMapLen(c, n);
    if (spec->summary) replyBulkField(c, "summary", spec->summary);
    if (spec->since) replyBulkField(c, "since", spec->since);
    if (spec->group) replyBulkField(c, "group", spec->group);
    if (spec->complexity) replyBulkField(c, "complexity", spec->complexity);
    if (spec->module) replyBulkField(c, "module", spec->module);
    if (spec->docFlags) {
        replyBulkCString(c, "doc_flags");
        replyBitNames(c, spec->docFlags, docFlagNames, 2);
    }
    if (spec->deprecatedSince) replyBulkField(c, "deprecated_since", spec->deprecatedSince);
    if (spec->replacedBy) replyBulkField(c, "replaced_by", spec->replacedBy);
    if (spec->historyCount > 0) {
        replyBulkCString(c, "history");
        replySetLen(c, spec->historyCount);
        for (int i = 0; i < spec->historyCount; i++) {
            replyArrayLen(c, 2);
            replyBulkCString(c, spec->history[i].since);
            replyBulkCString(c, spec->history[i].changes);
        }
    }
    if (spec->argCount > 0) {
        replyBulkCString(c, "arguments");
        replyArgs(c, spec->args, spec->argCount);
    }
    if (nsub == 0) return;
    replyBulkCString(c, "subcommands");
    replyMapLen(c, nsub);
    for (const Command *sub = cmd->subcommands; sub && sub->name; sub++) {
        replyBulkCString(c, commandName(sub));
        replyCommandDocs(c, sub);
    }
}

static void commandDocsCommand(Client *c) {
    if (c->argc == 2) {
        replyMapLen(c, commandCount());
        unsigned cursor = 0;
        Command *cmd;
        while ((cmd = commandIterate(&cursor)) != NULL) {
            replyBulkCString(c, commandName(cmd));
            replyCommandDocs(c, cmd);
        }
        return;
    }
    long found = 0;
    for (int i = 2; i < c->argc; i++)
        if (lookupByFullName(c->argv[i], sdsLen(c->argv[i]))) found++;
    replyMapLen(c, found);
    for (int i = 2; i < c->argc; i++) {
        Command *cmd = lookupByFullName(c->argv[i], sdsLen(c->argv[i]));
        if (!cmd) continue;
        replyBulkCString(c, commandName(cmd));
        replyCommandDocs(c, cmd);
    }
}

/* --- COMMAND LIST --- */

enum { FILTER_NONE, FILTER_MODULE, FILTER_ACLCAT, FILTER_PATTERN };

static int listFilterMatches(const Command *cmd, int type, const sds arg) {
    const char *name = commandName(cmd);
    switch (type) {
    case FILTER_MODULE: return cmd->spec->module && strcasecmp(cmd->spec->module, arg) == 0;
    case FILTER_ACLCAT:
        for (size_t i = 0; i < ACL_NAME_COUNT; i++)
            if (((cmd->spec->acl >> i) & 1) && strcasecmp(aclNames[i], arg) == 0) return 1;
        return 0;
    case FILTER_PATTERN: return globMatch(arg, sdsLen(arg), name, strlen(name), 1);
    default: return 1;
    }
}

static long replyListMatching(Client *c, const Command *cmd, int type, const sds arg) {
    long n = 0;
    if (listFilterMatches(cmd, type, arg)) {
        replyBulkCString(c, commandName(cmd));
        n++;
    }
    for (const Command *sub = cmd->subcommands; sub && sub->name; sub++) n += replyListMatching(c, sub, type, arg);
    return n;
}

static void commandListCommand(Client *c) {
    int type = FILTER_NONE;
    sds arg = NULL;
    if (c->argc == 5 && argIs(c->argv[2], "filterby")) {
        arg = c->argv[4];
        if (argIs(c->argv[3], "module"))
            type = FILTER_MODULE;
        else if (argIs(c->argv[3], "aclcat"))
            type = FILTER_ACLCAT;
        else if (argIs(c->argv[3], "pattern"))
            type = FILTER_PATTERN;
        else {
            replyErrorSyntax(c);
            return;
        }
    } else if (c->argc != 2) {
        replyErrorSyntax(c);
        return;
    }
    void *len = replyDeferredLen(c);
    long n = 0;
    unsigned cursor = 0;
    Command *cmd;
    while ((cmd = commandIterate(&cursor)) != NULL) n += replyListMatching(c, cmd, type, arg);
    replySetDeferredArrayLen(c, len, n);
}

/* --- COMMAND GETKEYS / GETKEYSANDFLAGS --- */

/* Replies the keys of the command line c->argv[2..] (with their flags
 * when withFlags), or Redis's error for it. */
static void getKeysGeneric(Client *c, int withFlags) {
    int argc = c->argc - 2;
    char **argv = c->argv + 2;
    Command *cmd = commandLookupArgv(argc, argv);
    if (!cmd) {
        replyError(c, "ERR Invalid command specified");
        return;
    }
    if (!commandHasKeys(cmd)) {
        replyError(c, "ERR The command has no key arguments");
        return;
    }
    if ((cmd->arity > 0 && cmd->arity != argc) || argc < -cmd->arity) {
        replyError(c, "ERR Invalid number of arguments specified for command");
        return;
    }
    KeyResult keys;
    keyResultInit(&keys);
    int n = commandKeys(cmd, argc, argv, &keys);
    if (n == 0) {
        if (cmd->flags & CMD_NO_MANDATORY_KEYS)
            replyArrayLen(c, 0);
        else
            replyError(c, "ERR Invalid arguments specified for command");
    } else {
        replyArrayLen(c, n);
        for (int i = 0; i < n; i++) {
            if (withFlags) replyArrayLen(c, 2);
            replyBulkSds(c, argv[keys.keys[i].pos]);
            if (withFlags) replyKeyFlags(c, keys.keys[i].flags);
        }
    }
    keyResultFree(&keys);
}

static void commandGetkeysCommand(Client *c) { getKeysGeneric(c, 0); }
static void commandGetkeysandflagsCommand(Client *c) { getKeysGeneric(c, 1); }

static void commandHelpCommand(Client *c) {
    static const char *help[] = {
        "(no subcommand)",
        "    Details about every command.",
        "COUNT",
        "    How many commands this server has.",
        "LIST [FILTERBY (MODULE <module-name>|ACLCAT <category>|PATTERN <pattern>)]",
        "    The names of all commands, or of those matching the filter.",
        "INFO [<command-name> ...]",
        "    Details about the named commands (all of them when none is named).",
        "DOCS [<command-name> ...]",
        "    Documentation of the named commands (all of them when none is named).",
        "GETKEYS <full-command>",
        "    The key arguments of a complete command line.",
        "GETKEYSANDFLAGS <full-command>",
        "    The key arguments of a complete command line and how each is accessed.",
        NULL,
    };
    replyHelp(c, help);
}

static Command commandSubcommands[] = {
    {.name = "info", .proc = commandInfoCommand},
    {.name = "count", .proc = commandCountCommand},
    {.name = "list", .proc = commandListCommand},
    {.name = "docs", .proc = commandDocsCommand},
    {.name = "getkeys", .proc = commandGetkeysCommand},
    {.name = "getkeysandflags", .proc = commandGetkeysandflagsCommand},
    {.name = "help", .proc = commandHelpCommand},
    {0},
};

Command commandCommands[] = {
    {.name = "command", .proc = commandCommand, .subcommands = commandSubcommands},
    {0},
};
