/* command_cmd.c -- the COMMAND container: COMMAND, COMMAND INFO, COUNT, LIST,
 * DOCS, GETKEYS, GETKEYSANDFLAGS, HELP.
 *
 * Everything is generated from the command table (commandIterate).  Two
 * things Redis shows are not in a Command entry: key specifications and
 * command tips.  They come from `metaTable` at the end of this file, which
 * holds them for every Redis 7.0.15 command, generated from redis-server
 * 7.0.15's COMMAND output.  A command with no row there gets key specs
 * derived from its firstKey/lastKey/keyStep range.
 *
 * Row syntax: specs are separated by '|'; a spec is
 *   "<flags>;<begin>;<find>[;<notes>]"
 * with <begin> "i<index>", "k<startfrom>,<KEYWORD>" or "u" (unknown) and
 * <find> "r<lastkey>,<keystep>,<limit>", "n<keynumidx>,<firstkey>,<keystep>"
 * or "u".
 *
 * ACL categories are the explicit ones plus those Redis derives from the
 * flags: write -> @write, readonly -> @read (not for scripting commands),
 * admin -> @admin @dangerous, pubsub -> @pubsub, fast -> @fast (else @slow),
 * blocking -> @blocking.
 *
 * COMMAND DOCS gives summary, since, group, complexity and subcommands; the
 * argument descriptions, history and doc flags are not in the table and are
 * left out. */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/client.h"
#include "core/command.h"
#include "ds/alloc.h"
#include "ds/glob.h"

typedef struct CommandMeta {
    const char *fullname;
    const char *tips;  /* space-separated */
    const char *specs; /* see the file comment */
} CommandMeta;

static const CommandMeta metaTable[];
static const size_t metaCount;

static int compareMeta(const void *key, const void *elem) {
    return strcmp(key, ((const CommandMeta *)elem)->fullname);
}

static const CommandMeta *findMeta(const Command *cmd) {
    const char *name = cmd->fullname ? cmd->fullname : cmd->name;
    return bsearch(name, metaTable, metaCount, sizeof(metaTable[0]), compareMeta);
}

/* --- key specs --- */

enum { BS_INDEX, BS_KEYWORD, BS_UNKNOWN };
enum { FK_RANGE, FK_KEYNUM, FK_UNKNOWN };

typedef struct KeySpec {
    char flags[64];    /* space-separated */
    int bsType;
    int bsIndex;       /* BS_INDEX: index; BS_KEYWORD: startfrom */
    char keyword[24];
    int fkType;
    int fk[3];         /* range: lastkey keystep limit; keynum: keynumidx firstkey keystep */
    const char *notes; /* into the meta row, up to the next '|' */
    size_t notesLen;
} KeySpec;

#define MAX_SPECS 8

/* Parses the spec list of a meta row; returns the count. */
static int parseSpecs(const char *p, KeySpec *out) {
    int n = 0;
    while (p && *p && n < MAX_SPECS) {
        KeySpec *ks = &out[n++];
        memset(ks, 0, sizeof(*ks));
        const char *semi = strchr(p, ';');
        size_t fl = (size_t)(semi - p);
        if (fl >= sizeof(ks->flags)) fl = sizeof(ks->flags) - 1;
        memcpy(ks->flags, p, fl);
        p = semi + 1;
        if (*p == 'i') {
            ks->bsType = BS_INDEX;
            ks->bsIndex = atoi(p + 1);
        } else if (*p == 'k') {
            ks->bsType = BS_KEYWORD;
            ks->bsIndex = atoi(p + 1);
            const char *comma = strchr(p, ',') + 1;
            size_t kl = strcspn(comma, ";");
            if (kl >= sizeof(ks->keyword)) kl = sizeof(ks->keyword) - 1;
            memcpy(ks->keyword, comma, kl);
        } else {
            ks->bsType = BS_UNKNOWN;
        }
        p = strchr(p, ';') + 1;
        if (*p == 'r' || *p == 'n') {
            ks->fkType = *p == 'r' ? FK_RANGE : FK_KEYNUM;
            const char *q = p + 1;
            for (int i = 0; i < 3; i++) {
                ks->fk[i] = atoi(q);
                q = strchr(q, ',');
                if (!q) break;
                q++;
            }
        } else {
            ks->fkType = FK_UNKNOWN;
        }
        p += strcspn(p, ";|");
        if (*p == ';') {
            ks->notes = ++p;
            ks->notesLen = strcspn(p, "|");
            p += ks->notesLen;
        }
        if (*p == '|') p++;
    }
    return n;
}

/* The key specs of cmd: from its meta row, else its legacy key range. */
static int commandKeySpecs(const Command *cmd, KeySpec *out) {
    const CommandMeta *m = findMeta(cmd);
    if (m) return parseSpecs(m->specs, out);
    if (cmd->firstKey <= 0) return 0;
    memset(out, 0, sizeof(*out));
    strcpy(out->flags, (cmd->flags & CMD_WRITE) ? "RW access update" : "RO access");
    out->bsType = BS_INDEX;
    out->bsIndex = cmd->firstKey;
    out->fkType = FK_RANGE;
    out->fk[0] = cmd->lastKey < 0 ? cmd->lastKey : cmd->lastKey - cmd->firstKey;
    out->fk[1] = cmd->keyStep > 0 ? cmd->keyStep : 1;
    return 1;
}

/* Replies a space-separated word list as a set of status strings, or of
 * bulk strings when bulk (tips are bulk strings in Redis). */
static void replyWordSetAs(Client *c, const char *words, size_t len, int bulk) {
    long n = 0;
    for (size_t i = 0; i < len;) {
        while (i < len && words[i] == ' ') i++;
        if (i < len) n++;
        while (i < len && words[i] != ' ') i++;
    }
    replySetLen(c, n);
    for (size_t i = 0; i < len;) {
        while (i < len && words[i] == ' ') i++;
        size_t start = i;
        while (i < len && words[i] != ' ') i++;
        if (i <= start) continue;
        if (bulk)
            replyBulk(c, words + start, i - start);
        else
            replyStatusLen(c, words + start, i - start);
    }
}

static void replyWordSet(Client *c, const char *words, size_t len) { replyWordSetAs(c, words, len, 0); }

static void replyKeySpec(Client *c, const KeySpec *ks) {
    replyMapLen(c, ks->notes ? 4 : 3);
    if (ks->notes) {
        replyBulkCString(c, "notes");
        replyBulk(c, ks->notes, ks->notesLen);
    }
    replyBulkCString(c, "flags");
    replyWordSet(c, ks->flags, strlen(ks->flags));

    replyBulkCString(c, "begin_search");
    replyMapLen(c, 2);
    replyBulkCString(c, "type");
    if (ks->bsType == BS_INDEX) {
        replyBulkCString(c, "index");
        replyBulkCString(c, "spec");
        replyMapLen(c, 1);
        replyBulkCString(c, "index");
        replyLongLong(c, ks->bsIndex);
    } else if (ks->bsType == BS_KEYWORD) {
        replyBulkCString(c, "keyword");
        replyBulkCString(c, "spec");
        replyMapLen(c, 2);
        replyBulkCString(c, "keyword");
        replyBulkCString(c, ks->keyword);
        replyBulkCString(c, "startfrom");
        replyLongLong(c, ks->bsIndex);
    } else {
        replyBulkCString(c, "unknown");
        replyBulkCString(c, "spec");
        replyMapLen(c, 0);
    }

    static const char *rangeNames[] = {"lastkey", "keystep", "limit"};
    static const char *keynumNames[] = {"keynumidx", "firstkey", "keystep"};
    replyBulkCString(c, "find_keys");
    replyMapLen(c, 2);
    replyBulkCString(c, "type");
    if (ks->fkType == FK_UNKNOWN) {
        replyBulkCString(c, "unknown");
        replyBulkCString(c, "spec");
        replyMapLen(c, 0);
        return;
    }
    const char **names = ks->fkType == FK_RANGE ? rangeNames : keynumNames;
    replyBulkCString(c, ks->fkType == FK_RANGE ? "range" : "keynum");
    replyBulkCString(c, "spec");
    replyMapLen(c, 3);
    for (int i = 0; i < 3; i++) {
        replyBulkCString(c, names[i]);
        replyLongLong(c, ks->fk[i]);
    }
}

/* --- flags and ACL categories --- */

static const struct {
    uint64_t flag;
    const char *name;
} flagNames[] = {
    {CMD_WRITE, "write"},
    {CMD_READONLY, "readonly"},
    {CMD_DENYOOM, "denyoom"},
    {CMD_MODULE, "module"},
    {CMD_ADMIN, "admin"},
    {CMD_PUBSUB, "pubsub"},
    {CMD_NOSCRIPT, "noscript"},
    {CMD_BLOCKING, "blocking"},
    {CMD_LOADING, "loading"},
    {CMD_STALE, "stale"},
    {CMD_SKIP_MONITOR, "skip_monitor"},
    {CMD_SKIP_SLOWLOG, "skip_slowlog"},
    {CMD_ASKING, "asking"},
    {CMD_FAST, "fast"},
    {CMD_NO_AUTH, "no_auth"},
    {CMD_NO_MANDATORY_KEYS, "no_mandatory_keys"},
    {CMD_NO_ASYNC_LOADING, "no_async_loading"},
    {CMD_NO_MULTI, "no_multi"},
    {CMD_MOVABLE_KEYS, "movablekeys"},
    {CMD_ALLOW_BUSY, "allow_busy"},
};

static const char *aclNames[] = {"keyspace", "read",   "write",      "set",        "sortedset",   "list",
                                 "hash",     "string", "bitmap",     "hyperloglog", "geo",         "stream",
                                 "pubsub",   "admin",  "fast",       "slow",       "blocking",    "dangerous",
                                 "connection", "transaction", "scripting"};
#define ACL_NAME_COUNT (sizeof(aclNames) / sizeof(aclNames[0]))

static uint64_t commandAclCategories(const Command *cmd) {
    uint64_t acl = cmd->acl;
    if (cmd->flags & CMD_WRITE) acl |= ACL_WRITE;
    if ((cmd->flags & CMD_READONLY) && !(acl & ACL_SCRIPTING)) acl |= ACL_READ;
    if (cmd->flags & CMD_ADMIN) acl |= ACL_ADMIN | ACL_DANGEROUS;
    if (cmd->flags & CMD_PUBSUB) acl |= ACL_PUBSUB;
    if (cmd->flags & CMD_FAST) acl |= ACL_FAST;
    if (cmd->flags & CMD_BLOCKING) acl |= ACL_BLOCKING;
    if (!(cmd->flags & CMD_FAST)) acl |= ACL_SLOW;
    return acl;
}

static int commandHasMovableKeys(const Command *cmd) {
    if ((cmd->flags & CMD_MOVABLE_KEYS) || cmd->getKeys) return 1;
    KeySpec specs[MAX_SPECS];
    int n = commandKeySpecs(cmd, specs);
    for (int i = 0; i < n; i++)
        if (specs[i].bsType != BS_INDEX || specs[i].fkType != FK_RANGE) return 1;
    return 0;
}

static uint64_t commandShownFlags(const Command *cmd) {
    uint64_t f = cmd->flags;
    if (commandHasMovableKeys(cmd)) f |= CMD_MOVABLE_KEYS;
    return f;
}

static void replyFlags(Client *c, const Command *cmd) {
    uint64_t f = commandShownFlags(cmd);
    long n = 0;
    for (size_t i = 0; i < sizeof(flagNames) / sizeof(flagNames[0]); i++)
        if (f & flagNames[i].flag) n++;
    replySetLen(c, n);
    for (size_t i = 0; i < sizeof(flagNames) / sizeof(flagNames[0]); i++)
        if (f & flagNames[i].flag) replyStatus(c, flagNames[i].name);
}

static void replyAclCategories(Client *c, const Command *cmd) {
    uint64_t acl = commandAclCategories(cmd);
    replySetLen(c, __builtin_popcountll(acl & ((1ULL << ACL_NAME_COUNT) - 1)));
    for (size_t i = 0; i < ACL_NAME_COUNT; i++) {
        if (!(acl & (1ULL << i))) continue;
        char buf[32];
        buf[0] = '@';
        size_t len = strlen(aclNames[i]);
        memcpy(buf + 1, aclNames[i], len);
        replyStatusLen(c, buf, len + 1);
    }
}

/* --- COMMAND INFO --- */

static void replyCommandInfo(Client *c, const Command *cmd) {
    const CommandMeta *m = findMeta(cmd);
    KeySpec specs[MAX_SPECS];
    int nspecs = commandKeySpecs(cmd, specs);

    replyArrayLen(c, 10);
    const char *name = cmd->fullname ? cmd->fullname : cmd->name;
    replyBulkCString(c, name);
    replyLongLong(c, cmd->arity);
    replyFlags(c, cmd);
    replyLongLong(c, cmd->firstKey);
    replyLongLong(c, cmd->lastKey);
    replyLongLong(c, cmd->keyStep);
    replyAclCategories(c, cmd);
    if (m)
        replyWordSetAs(c, m->tips, strlen(m->tips), 1);
    else
        replySetLen(c, 0);
    replySetLen(c, nspecs);
    for (int i = 0; i < nspecs; i++) replyKeySpec(c, &specs[i]);
    long nsub = 0;
    for (const Command *sub = cmd->subcommands; sub && sub->name; sub++) nsub++;
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
            replyNullArray(c);
    }
}

static void commandCountCommand(Client *c) { replyLongLong(c, commandCount()); }

/* --- COMMAND DOCS --- */

static void replyCommandDocs(Client *c, const Command *cmd) {
    long nsub = 0;
    for (const Command *sub = cmd->subcommands; sub && sub->name; sub++) nsub++;
    /* Fields a command does not have are left out, as Redis does. */
    const char *fields[][2] = {{"summary", cmd->summary},
                               {"since", cmd->since},
                               {"group", cmd->group},
                               {"complexity", cmd->complexity}};
    long n = nsub > 0;
    for (size_t i = 0; i < 4; i++) n += fields[i][1] != NULL;
    replyMapLen(c, n);
    for (size_t i = 0; i < 4; i++) {
        if (!fields[i][1]) continue;
        replyBulkCString(c, fields[i][0]);
        replyBulkCString(c, fields[i][1]);
    }
    if (nsub == 0) return;
    replyBulkCString(c, "subcommands");
    replyMapLen(c, nsub);
    for (const Command *sub = cmd->subcommands; sub && sub->name; sub++) {
        replyBulkCString(c, sub->fullname ? sub->fullname : sub->name);
        replyCommandDocs(c, sub);
    }
}

static void commandDocsCommand(Client *c) {
    if (c->argc == 2) {
        replyMapLen(c, commandCount());
        unsigned cursor = 0;
        Command *cmd;
        while ((cmd = commandIterate(&cursor)) != NULL) {
            replyBulkCString(c, cmd->fullname ? cmd->fullname : cmd->name);
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
        replyBulkCString(c, cmd->fullname ? cmd->fullname : cmd->name);
        replyCommandDocs(c, cmd);
    }
}

/* --- COMMAND LIST --- */

enum { FILTER_NONE, FILTER_MODULE, FILTER_ACLCAT, FILTER_PATTERN };

static int listFilterMatches(const Command *cmd, int type, const sds arg) {
    const char *name = cmd->fullname ? cmd->fullname : cmd->name;
    switch (type) {
    case FILTER_MODULE: return 0; /* no module commands */
    case FILTER_ACLCAT: {
        uint64_t acl = commandAclCategories(cmd);
        for (size_t i = 0; i < ACL_NAME_COUNT; i++)
            if ((acl & (1ULL << i)) && strcasecmp(aclNames[i], arg) == 0) return 1;
        return 0;
    }
    case FILTER_PATTERN: return globMatch(arg, sdsLen(arg), name, strlen(name), 1);
    default: return 1;
    }
}

static long replyListMatching(Client *c, const Command *cmd, int type, const sds arg) {
    long n = 0;
    if (listFilterMatches(cmd, type, arg)) {
        replyBulkCString(c, cmd->fullname ? cmd->fullname : cmd->name);
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

static int commandHasKeys(const Command *cmd) {
    KeySpec specs[MAX_SPECS];
    return cmd->firstKey > 0 || cmd->getKeys || commandKeySpecs(cmd, specs) > 0;
}

/* Whether argv index `idx` is a key that spec `ks` finds. */
static int specFindsKey(const KeySpec *ks, int argc, char **argv, int idx) {
    int first;
    if (ks->bsType == BS_INDEX) {
        first = ks->bsIndex;
    } else if (ks->bsType == BS_KEYWORD) {
        int from = ks->bsIndex >= 0 ? ks->bsIndex : argc + ks->bsIndex;
        int step = ks->bsIndex >= 0 ? 1 : -1;
        first = -1;
        for (int i = from; i > 0 && i < argc; i += step)
            if (strcasecmp(argv[i], ks->keyword) == 0) {
                first = i + 1;
                break;
            }
        if (first < 0) return 0;
    } else {
        return 0;
    }
    int last, step;
    if (ks->fkType == FK_RANGE) {
        last = ks->fk[0] >= 0 ? first + ks->fk[0] : argc + ks->fk[0];
        if (ks->fk[0] < 0 && ks->fk[2] > 1) last = first + (argc - first) / ks->fk[2] - 1;
        step = ks->fk[1];
    } else if (ks->fkType == FK_KEYNUM) {
        int ni = first + ks->fk[0];
        if (ni >= argc) return 0;
        int numkeys = atoi(argv[ni]);
        first = ni + ks->fk[1];
        step = ks->fk[2];
        last = first + (numkeys - 1) * step;
    } else {
        return 0;
    }
    if (step <= 0) step = 1;
    return idx >= first && idx <= last && (idx - first) % step == 0;
}

/* The flags of key argv[idx], from the first spec that finds it. */
static const char *keyFlags(const Command *cmd, const KeySpec *specs, int n, int argc, char **argv, int idx) {
    const char *name = cmd->fullname ? cmd->fullname : cmd->name;
    /* Commands whose flags depend on their arguments (Redis's
     * variable_flags). */
    if (strcmp(name, "set") == 0) {
        for (int i = 3; i < argc; i++)
            if (strcasecmp(argv[i], "get") == 0) return "RW access update";
        return "OW update";
    }
    if (strcmp(name, "bitfield") == 0) {
        for (int i = 2; i < argc; i++)
            if (strcasecmp(argv[i], "set") == 0 || strcasecmp(argv[i], "incrby") == 0) return "RW access update";
        return "RO access";
    }
    for (int i = 0; i < n; i++)
        if (specFindsKey(&specs[i], argc, argv, idx)) return specs[i].flags;
    return n > 0 ? specs[0].flags : "";
}

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
    int *keys = xmalloc(sizeof(int) * (size_t)argc);
    int n = commandGetKeys(cmd, c, argc, argv, keys, argc);
    if (n == 0) {
        if (cmd->flags & CMD_NO_MANDATORY_KEYS)
            replyArrayLen(c, 0);
        else
            replyError(c, "ERR Invalid arguments specified for command");
        goto cleanup;
    }
    KeySpec specs[MAX_SPECS];
    int nspecs = withFlags ? commandKeySpecs(cmd, specs) : 0;
    replyArrayLen(c, n);
    for (int i = 0; i < n; i++) {
        if (withFlags) {
            replyArrayLen(c, 2);
            replyBulkSds(c, argv[keys[i]]);
            const char *f = keyFlags(cmd, specs, nspecs, argc, argv, keys[i]);
            replyWordSet(c, f, strlen(f));
        } else {
            replyBulkSds(c, argv[keys[i]]);
        }
    }
cleanup:
    xfree(keys);
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

#define COMMAND_SUB_FLAGS (CMD_LOADING | CMD_STALE)

static Command commandSubcommands[] = {
    {.name = "info", .proc = commandInfoCommand, .arity = -2, .flags = COMMAND_SUB_FLAGS, .acl = ACL_CONNECTION,
     .group = "server", .since = "2.8.13", .complexity = "O(N) where N is the number of commands to look up",
     .summary = "Get array of specific Redis command details, or all when no argument is given."},
    {.name = "count", .proc = commandCountCommand, .arity = 2, .flags = COMMAND_SUB_FLAGS, .acl = ACL_CONNECTION,
     .group = "server", .since = "2.8.13", .complexity = "O(1)", .summary = "Get total number of Redis commands"},
    {.name = "list", .proc = commandListCommand, .arity = -2, .flags = COMMAND_SUB_FLAGS, .acl = ACL_CONNECTION,
     .group = "server", .since = "7.0.0", .complexity = "O(N) where N is the total number of Redis commands",
     .summary = "Get an array of Redis command names"},
    {.name = "docs", .proc = commandDocsCommand, .arity = -2, .flags = COMMAND_SUB_FLAGS, .acl = ACL_CONNECTION,
     .group = "server", .since = "7.0.0", .complexity = "O(N) where N is the number of commands to look up",
     .summary = "Get array of specific Redis command documentation"},
    {.name = "getkeys", .proc = commandGetkeysCommand, .arity = -4, .flags = COMMAND_SUB_FLAGS,
     .acl = ACL_CONNECTION, .group = "server", .since = "2.8.13",
     .complexity = "O(N) where N is the number of arguments to the command",
     .summary = "Extract keys given a full Redis command"},
    {.name = "getkeysandflags", .proc = commandGetkeysandflagsCommand, .arity = -4, .flags = COMMAND_SUB_FLAGS,
     .acl = ACL_CONNECTION, .group = "server", .since = "7.0.0",
     .complexity = "O(N) where N is the number of arguments to the command",
     .summary = "Extract keys and access flags given a full Redis command"},
    {.name = "help", .proc = commandHelpCommand, .arity = 2, .flags = COMMAND_SUB_FLAGS, .acl = ACL_CONNECTION,
     .group = "server", .since = "5.0.0", .complexity = "O(1)",
     .summary = "Show helpful text about the different subcommands"},
    {0},
};

Command commandCommands[] = {
    {.name = "command", .proc = commandCommand, .arity = -1, .flags = COMMAND_SUB_FLAGS, .acl = ACL_CONNECTION,
     .group = "server", .since = "2.8.13", .complexity = "O(N) where N is the total number of Redis commands",
     .summary = "Get array of Redis command details", .subcommands = commandSubcommands},
    {0},
};

/* Key specs and tips of Redis 7.0.15's commands, sorted by full name
 * (generated from redis-server 7.0.15's COMMAND reply). */
static const CommandMeta metaTable[] = {
    {"append", "", "RW insert;i1;r0,1,0"},
    {"bitcount", "", "RO access;i1;r0,1,0"},
    {"bitfield", "", "RW access update variable_flags;i1;r0,1,0;This command allows both access and modification of the key"},
    {"bitfield_ro", "", "RO access;i1;r0,1,0"},
    {"bitop", "", "OW update;i2;r0,1,0|RO access;i3;r-1,1,0"},
    {"bitpos", "", "RO access;i1;r0,1,0"},
    {"blmove", "", "RW access delete;i1;r0,1,0|RW insert;i2;r0,1,0"},
    {"blmpop", "", "RW access delete;i2;n0,1,1"},
    {"blpop", "", "RW access delete;i1;r-2,1,0"},
    {"brpop", "", "RW access delete;i1;r-2,1,0"},
    {"brpoplpush", "", "RW access delete;i1;r0,1,0|RW insert;i2;r0,1,0"},
    {"bzmpop", "", "RW access delete;i2;n0,1,1"},
    {"bzpopmax", "", "RW access delete;i1;r-2,1,0"},
    {"bzpopmin", "", "RW access delete;i1;r-2,1,0"},
    {"client|info", "nondeterministic_output", ""},
    {"client|list", "nondeterministic_output", ""},
    {"cluster|bumpepoch", "nondeterministic_output", ""},
    {"cluster|count-failure-reports", "nondeterministic_output", ""},
    {"cluster|getkeysinslot", "nondeterministic_output", ""},
    {"cluster|info", "nondeterministic_output", ""},
    {"cluster|links", "nondeterministic_output", ""},
    {"cluster|nodes", "nondeterministic_output", ""},
    {"cluster|replicas", "nondeterministic_output", ""},
    {"cluster|shards", "nondeterministic_output", ""},
    {"cluster|slaves", "nondeterministic_output", ""},
    {"cluster|slots", "nondeterministic_output", ""},
    {"command", "nondeterministic_output_order", ""},
    {"command|docs", "nondeterministic_output_order", ""},
    {"command|info", "nondeterministic_output_order", ""},
    {"command|list", "nondeterministic_output_order", ""},
    {"config|set", "request_policy:all_nodes response_policy:all_succeeded", ""},
    {"copy", "", "RO access;i1;r0,1,0|OW update;i2;r0,1,0"},
    {"dbsize", "request_policy:all_shards response_policy:agg_sum", ""},
    {"decr", "", "RW access update;i1;r0,1,0"},
    {"decrby", "", "RW access update;i1;r0,1,0"},
    {"del", "request_policy:multi_shard response_policy:agg_sum", "RM delete;i1;r-1,1,0"},
    {"dump", "nondeterministic_output", "RO access;i1;r0,1,0"},
    {"eval", "", "RW access update;i2;n0,1,1;We cannot tell how the keys will be used so we assume the worst, RW and UPDATE"},
    {"eval_ro", "", "RO access;i2;n0,1,1;We cannot tell how the keys will be used so we assume the worst, RO and ACCESS"},
    {"evalsha", "", "RW access update;i2;n0,1,1"},
    {"evalsha_ro", "", "RO access;i2;n0,1,1"},
    {"exists", "request_policy:multi_shard response_policy:agg_sum", "RO;i1;r-1,1,0"},
    {"expire", "", "RW update;i1;r0,1,0"},
    {"expireat", "", "RW update;i1;r0,1,0"},
    {"expiretime", "", "RO access;i1;r0,1,0"},
    {"fcall", "", "RW access update;i2;n0,1,1;We cannot tell how the keys will be used so we assume the worst, RW and UPDATE"},
    {"fcall_ro", "", "RO access;i2;n0,1,1;We cannot tell how the keys will be used so we assume the worst, RO and ACCESS"},
    {"flushall", "request_policy:all_shards response_policy:all_succeeded", ""},
    {"flushdb", "request_policy:all_shards response_policy:all_succeeded", ""},
    {"function|delete", "request_policy:all_shards response_policy:all_succeeded", ""},
    {"function|flush", "request_policy:all_shards response_policy:all_succeeded", ""},
    {"function|kill", "request_policy:all_shards response_policy:one_succeeded", ""},
    {"function|list", "nondeterministic_output_order", ""},
    {"function|load", "request_policy:all_shards response_policy:all_succeeded", ""},
    {"function|restore", "request_policy:all_shards response_policy:all_succeeded", ""},
    {"function|stats", "nondeterministic_output request_policy:all_shards response_policy:special", ""},
    {"geoadd", "", "RW update;i1;r0,1,0"},
    {"geodist", "", "RO access;i1;r0,1,0"},
    {"geohash", "", "RO access;i1;r0,1,0"},
    {"geopos", "", "RO access;i1;r0,1,0"},
    {"georadius", "", "RO access;i1;r0,1,0|OW update;k6,STORE;r0,1,0|OW update;k6,STOREDIST;r0,1,0"},
    {"georadius_ro", "", "RO access;i1;r0,1,0"},
    {"georadiusbymember", "", "RO access;i1;r0,1,0|OW update;k5,STORE;r0,1,0|OW update;k5,STOREDIST;r0,1,0"},
    {"georadiusbymember_ro", "", "RO access;i1;r0,1,0"},
    {"geosearch", "", "RO access;i1;r0,1,0"},
    {"geosearchstore", "", "OW update;i1;r0,1,0|RO access;i2;r0,1,0"},
    {"get", "", "RO access;i1;r0,1,0"},
    {"getbit", "", "RO access;i1;r0,1,0"},
    {"getdel", "", "RW access delete;i1;r0,1,0"},
    {"getex", "", "RW access update;i1;r0,1,0;RW and UPDATE because it changes the TTL"},
    {"getrange", "", "RO access;i1;r0,1,0"},
    {"getset", "", "RW access update;i1;r0,1,0"},
    {"hdel", "", "RW delete;i1;r0,1,0"},
    {"hexists", "", "RO;i1;r0,1,0"},
    {"hget", "", "RO access;i1;r0,1,0"},
    {"hgetall", "nondeterministic_output_order", "RO access;i1;r0,1,0"},
    {"hincrby", "", "RW access update;i1;r0,1,0"},
    {"hincrbyfloat", "", "RW access update;i1;r0,1,0"},
    {"hkeys", "nondeterministic_output_order", "RO access;i1;r0,1,0"},
    {"hlen", "", "RO;i1;r0,1,0"},
    {"hmget", "", "RO access;i1;r0,1,0"},
    {"hmset", "", "RW update;i1;r0,1,0"},
    {"hrandfield", "nondeterministic_output", "RO access;i1;r0,1,0"},
    {"hscan", "nondeterministic_output", "RO access;i1;r0,1,0"},
    {"hset", "", "RW update;i1;r0,1,0"},
    {"hsetnx", "", "RW insert;i1;r0,1,0"},
    {"hstrlen", "", "RO;i1;r0,1,0"},
    {"hvals", "nondeterministic_output_order", "RO access;i1;r0,1,0"},
    {"incr", "", "RW access update;i1;r0,1,0"},
    {"incrby", "", "RW access update;i1;r0,1,0"},
    {"incrbyfloat", "", "RW access update;i1;r0,1,0"},
    {"info", "nondeterministic_output request_policy:all_shards response_policy:special", ""},
    {"keys", "request_policy:all_shards nondeterministic_output_order", ""},
    {"lastsave", "nondeterministic_output", ""},
    {"latency|doctor", "nondeterministic_output request_policy:all_nodes response_policy:special", ""},
    {"latency|graph", "nondeterministic_output request_policy:all_nodes response_policy:special", ""},
    {"latency|histogram", "nondeterministic_output request_policy:all_nodes response_policy:special", ""},
    {"latency|history", "nondeterministic_output request_policy:all_nodes response_policy:special", ""},
    {"latency|latest", "nondeterministic_output request_policy:all_nodes response_policy:special", ""},
    {"latency|reset", "request_policy:all_nodes response_policy:all_succeeded", ""},
    {"lcs", "", "RO access;i1;r1,1,0"},
    {"lindex", "", "RO access;i1;r0,1,0"},
    {"linsert", "", "RW insert;i1;r0,1,0"},
    {"llen", "", "RO;i1;r0,1,0"},
    {"lmove", "", "RW access delete;i1;r0,1,0|RW insert;i2;r0,1,0"},
    {"lmpop", "", "RW access delete;i1;n0,1,1"},
    {"lpop", "", "RW access delete;i1;r0,1,0"},
    {"lpos", "", "RO access;i1;r0,1,0"},
    {"lpush", "", "RW insert;i1;r0,1,0"},
    {"lpushx", "", "RW insert;i1;r0,1,0"},
    {"lrange", "", "RO access;i1;r0,1,0"},
    {"lrem", "", "RW delete;i1;r0,1,0"},
    {"lset", "", "RW update;i1;r0,1,0"},
    {"ltrim", "", "RW delete;i1;r0,1,0"},
    {"memory|doctor", "nondeterministic_output request_policy:all_shards response_policy:special", ""},
    {"memory|malloc-stats", "nondeterministic_output request_policy:all_shards response_policy:special", ""},
    {"memory|purge", "request_policy:all_shards response_policy:all_succeeded", ""},
    {"memory|stats", "nondeterministic_output request_policy:all_shards response_policy:special", ""},
    {"memory|usage", "", "RO;i2;r0,1,0"},
    {"mget", "request_policy:multi_shard", "RO access;i1;r-1,1,0"},
    {"migrate", "nondeterministic_output", "RW access delete;i3;r0,1,0|RW access delete incomplete;k-2,KEYS;r-1,1,0"},
    {"module|list", "nondeterministic_output_order", ""},
    {"move", "", "RW access update;i1;r0,1,0"},
    {"mset", "request_policy:multi_shard response_policy:all_succeeded", "OW update;i1;r-1,2,0"},
    {"msetnx", "request_policy:multi_shard response_policy:agg_min", "OW insert;i1;r-1,2,0"},
    {"object|encoding", "nondeterministic_output", "RO;i2;r0,1,0"},
    {"object|freq", "nondeterministic_output", "RO;i2;r0,1,0"},
    {"object|idletime", "nondeterministic_output", "RO;i2;r0,1,0"},
    {"object|refcount", "nondeterministic_output", "RO;i2;r0,1,0"},
    {"persist", "", "RW update;i1;r0,1,0"},
    {"pexpire", "", "RW update;i1;r0,1,0"},
    {"pexpireat", "", "RW update;i1;r0,1,0"},
    {"pexpiretime", "", "RO access;i1;r0,1,0"},
    {"pfadd", "", "RW insert;i1;r0,1,0"},
    {"pfcount", "", "RW access;i1;r-1,1,0;RW because it may change the internal representation of the key, and propagate to replicas"},
    {"pfdebug", "", "RW access;i2;r0,1,0"},
    {"pfmerge", "", "RW access insert;i1;r0,1,0|RO access;i2;r-1,1,0"},
    {"ping", "request_policy:all_shards response_policy:all_succeeded", ""},
    {"psetex", "", "OW update;i1;r0,1,0"},
    {"pttl", "nondeterministic_output", "RO access;i1;r0,1,0"},
    {"randomkey", "request_policy:all_shards nondeterministic_output", ""},
    {"rename", "", "RW access delete;i1;r0,1,0|OW update;i2;r0,1,0"},
    {"renamenx", "", "RW access delete;i1;r0,1,0|OW insert;i2;r0,1,0"},
    {"restore", "", "OW update;i1;r0,1,0"},
    {"restore-asking", "", "OW update;i1;r0,1,0"},
    {"rpop", "", "RW access delete;i1;r0,1,0"},
    {"rpoplpush", "", "RW access delete;i1;r0,1,0|RW insert;i2;r0,1,0"},
    {"rpush", "", "RW insert;i1;r0,1,0"},
    {"rpushx", "", "RW insert;i1;r0,1,0"},
    {"sadd", "", "RW insert;i1;r0,1,0"},
    {"scan", "nondeterministic_output request_policy:special", ""},
    {"scard", "", "RO;i1;r0,1,0"},
    {"script|exists", "request_policy:all_shards response_policy:agg_logical_and", ""},
    {"script|flush", "request_policy:all_nodes response_policy:all_succeeded", ""},
    {"script|kill", "request_policy:all_shards response_policy:one_succeeded", ""},
    {"script|load", "request_policy:all_nodes response_policy:all_succeeded", ""},
    {"sdiff", "nondeterministic_output_order", "RO access;i1;r-1,1,0"},
    {"sdiffstore", "", "OW update;i1;r0,1,0|RO access;i2;r-1,1,0"},
    {"set", "", "RW access update variable_flags;i1;r0,1,0;RW and ACCESS due to the optional `GET` argument"},
    {"setbit", "", "RW access update;i1;r0,1,0"},
    {"setex", "", "OW update;i1;r0,1,0"},
    {"setnx", "", "OW insert;i1;r0,1,0"},
    {"setrange", "", "RW update;i1;r0,1,0"},
    {"sinter", "nondeterministic_output_order", "RO access;i1;r-1,1,0"},
    {"sintercard", "", "RO access;i1;n0,1,1"},
    {"sinterstore", "", "RW update;i1;r0,1,0|RO access;i2;r-1,1,0"},
    {"sismember", "", "RO;i1;r0,1,0"},
    {"slowlog|get", "request_policy:all_nodes nondeterministic_output", ""},
    {"slowlog|len", "request_policy:all_nodes response_policy:agg_sum nondeterministic_output", ""},
    {"slowlog|reset", "request_policy:all_nodes response_policy:all_succeeded", ""},
    {"smembers", "nondeterministic_output_order", "RO access;i1;r0,1,0"},
    {"smismember", "", "RO access;i1;r0,1,0"},
    {"smove", "", "RW access delete;i1;r0,1,0|RW insert;i2;r0,1,0"},
    {"sort", "", "RO access;i1;r0,1,0|RO access;u;u;For the optional BY/GET keyword. It is marked 'unknown' because the key names derive from the content of the key we sort|OW update;u;u;For the optional STORE keyword. It is marked 'unknown' because the keyword can appear anywhere in the argument array"},
    {"sort_ro", "", "RO access;i1;r0,1,0|RO access;u;u;For the optional BY/GET keyword. It is marked 'unknown' because the key names derive from the content of the key we sort"},
    {"spop", "nondeterministic_output", "RW access delete;i1;r0,1,0"},
    {"spublish", "", "not_key;i1;r0,1,0"},
    {"srandmember", "nondeterministic_output", "RO access;i1;r0,1,0"},
    {"srem", "", "RW delete;i1;r0,1,0"},
    {"sscan", "nondeterministic_output", "RO access;i1;r0,1,0"},
    {"ssubscribe", "", "not_key;i1;r-1,1,0"},
    {"strlen", "", "RO;i1;r0,1,0"},
    {"substr", "", "RO access;i1;r0,1,0"},
    {"sunion", "nondeterministic_output_order", "RO access;i1;r-1,1,0"},
    {"sunionstore", "", "OW update;i1;r0,1,0|RO access;i2;r-1,1,0"},
    {"sunsubscribe", "", "not_key;i1;r-1,1,0"},
    {"time", "nondeterministic_output", ""},
    {"touch", "request_policy:multi_shard response_policy:agg_sum", "RO;i1;r-1,1,0"},
    {"ttl", "nondeterministic_output", "RO access;i1;r0,1,0"},
    {"type", "", "RO;i1;r0,1,0"},
    {"unlink", "request_policy:multi_shard response_policy:agg_sum", "RM delete;i1;r-1,1,0"},
    {"wait", "request_policy:all_shards response_policy:agg_min", ""},
    {"watch", "", "RO;i1;r-1,1,0"},
    {"xack", "", "RW update;i1;r0,1,0"},
    {"xadd", "nondeterministic_output", "RW update;i1;r0,1,0;UPDATE instead of INSERT because of the optional trimming feature"},
    {"xautoclaim", "nondeterministic_output", "RW delete;i1;r0,1,0"},
    {"xclaim", "nondeterministic_output", "RW update;i1;r0,1,0"},
    {"xdel", "", "RW delete;i1;r0,1,0"},
    {"xgroup|create", "", "RW insert;i2;r0,1,0"},
    {"xgroup|createconsumer", "", "RW insert;i2;r0,1,0"},
    {"xgroup|delconsumer", "", "RW delete;i2;r0,1,0"},
    {"xgroup|destroy", "", "RW delete;i2;r0,1,0"},
    {"xgroup|setid", "", "RW update;i2;r0,1,0"},
    {"xinfo|consumers", "nondeterministic_output", "RO access;i2;r0,1,0"},
    {"xinfo|groups", "", "RO access;i2;r0,1,0"},
    {"xinfo|stream", "", "RO access;i2;r0,1,0"},
    {"xlen", "", "RO;i1;r0,1,0"},
    {"xpending", "nondeterministic_output", "RO access;i1;r0,1,0"},
    {"xrange", "", "RO access;i1;r0,1,0"},
    {"xread", "", "RO access;k1,STREAMS;r-1,1,2"},
    {"xreadgroup", "", "RO access;k4,STREAMS;r-1,1,2"},
    {"xrevrange", "", "RO access;i1;r0,1,0"},
    {"xsetid", "", "RW update;i1;r0,1,0"},
    {"xtrim", "nondeterministic_output", "RW delete;i1;r0,1,0"},
    {"zadd", "", "RW update;i1;r0,1,0"},
    {"zcard", "", "RO;i1;r0,1,0"},
    {"zcount", "", "RO access;i1;r0,1,0"},
    {"zdiff", "", "RO access;i1;n0,1,1"},
    {"zdiffstore", "", "OW update;i1;r0,1,0|RO access;i2;n0,1,1"},
    {"zincrby", "", "RW access update;i1;r0,1,0"},
    {"zinter", "", "RO access;i1;n0,1,1"},
    {"zintercard", "", "RO access;i1;n0,1,1"},
    {"zinterstore", "", "OW update;i1;r0,1,0|RO access;i2;n0,1,1"},
    {"zlexcount", "", "RO access;i1;r0,1,0"},
    {"zmpop", "", "RW access delete;i1;n0,1,1"},
    {"zmscore", "", "RO access;i1;r0,1,0"},
    {"zpopmax", "", "RW access delete;i1;r0,1,0"},
    {"zpopmin", "", "RW access delete;i1;r0,1,0"},
    {"zrandmember", "nondeterministic_output", "RO access;i1;r0,1,0"},
    {"zrange", "", "RO access;i1;r0,1,0"},
    {"zrangebylex", "", "RO access;i1;r0,1,0"},
    {"zrangebyscore", "", "RO access;i1;r0,1,0"},
    {"zrangestore", "", "OW update;i1;r0,1,0|RO access;i2;r0,1,0"},
    {"zrank", "", "RO access;i1;r0,1,0"},
    {"zrem", "", "RW delete;i1;r0,1,0"},
    {"zremrangebylex", "", "RW delete;i1;r0,1,0"},
    {"zremrangebyrank", "", "RW delete;i1;r0,1,0"},
    {"zremrangebyscore", "", "RW delete;i1;r0,1,0"},
    {"zrevrange", "", "RO access;i1;r0,1,0"},
    {"zrevrangebylex", "", "RO access;i1;r0,1,0"},
    {"zrevrangebyscore", "", "RO access;i1;r0,1,0"},
    {"zrevrank", "", "RO access;i1;r0,1,0"},
    {"zscan", "nondeterministic_output", "RO access;i1;r0,1,0"},
    {"zscore", "", "RO access;i1;r0,1,0"},
    {"zunion", "", "RO access;i1;n0,1,1"},
    {"zunionstore", "", "OW update;i1;r0,1,0|RO access;i2;n0,1,1"},
};
static const size_t metaCount = sizeof(metaTable) / sizeof(metaTable[0]);
