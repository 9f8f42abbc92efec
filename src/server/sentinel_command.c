/* sentinel_command.c -- COMMAND in Sentinel mode: COMMAND, COMMAND COUNT,
 * LIST [FILTERBY MODULE|ACLCAT|PATTERN], INFO, DOCS, GETKEYS and
 * GETKEYSANDFLAGS, answered from the generated table
 * (sentinel_command_data.c) of the commands and subcommands this Sentinel
 * runs, as redis-sentinel answers them.
 *
 * Invariants:
 *   - The table lists a command's subcommands right after it; a row's
 *     INFO entry already holds its subcommands' entries.
 *   - None of Sentinel's commands has key arguments. */
#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "ds/glob.h"
#include "ds/sds.h"
#include "server/sentinel_int.h"

static const SentinelCommandInfo *lookup(const char *name) {
    for (int i = 0; i < sentinelCommandCount; i++)
        if (!strcasecmp(sentinelCommandTable[i].name, name)) return &sentinelCommandTable[i];
    return NULL;
}

static int topLevelCount(void) {
    int n = 0;
    for (int i = 0; i < sentinelCommandCount; i++)
        n += !sentinelCommandTable[i].isSub;
    return n;
}

static sds bulk(sds out, const char *s) { return sdsCatPrintf(out, "$%zu\r\n%s\r\n", strlen(s), s); }

static sds arityError(sds out, const char *sub) {
    char nm[64];
    snprintf(nm, sizeof(nm), "command|%s", sub);
    for (char *q = nm; *q; q++)
        *q = (char)tolower((unsigned char)*q);
    return sdsCatPrintf(out, "-ERR wrong number of arguments for '%s' command\r\n", nm);
}

/* Whether row r is listed by COMMAND LIST FILTERBY kind value. */
static int listMatches(const SentinelCommandInfo *r, const char *kind, const char *value) {
    if (!strcasecmp(kind, "module")) return 0; /* no modules */
    if (!strcasecmp(kind, "pattern")) return globMatch(value, strlen(value), r->name, strlen(r->name), 1);
    /* aclcat: one of its categories */
    size_t vl = strlen(value);
    for (const char *p = r->categories; *p;) {
        size_t n = strcspn(p, " ");
        if (n == vl && !strncasecmp(p, value, n)) return 1;
        p += n;
        while (*p == ' ')
            p++;
    }
    return 0;
}

sds sentinelCommandCommand(sds out, int resp, int argc, sds *argv) {
    if (argc == 1) {
        out = sdsCatPrintf(out, "*%d\r\n", topLevelCount());
        for (int i = 0; i < sentinelCommandCount; i++)
            if (!sentinelCommandTable[i].isSub)
                out = sdsCat(out, resp == 3 ? sentinelCommandTable[i].info3 : sentinelCommandTable[i].info2);
        return out;
    }
    const char *sub = argv[1];
    char full[64];
    snprintf(full, sizeof(full), "command|%s", sub);
    const SentinelCommandInfo *self = lookup(full);
    if (!self)
        return sdsCatPrintf(out, "-ERR unknown subcommand '%.128s'. Try COMMAND HELP.\r\n", sub);
    if ((self->arity > 0 && argc != self->arity) || (self->arity < 0 && argc < -self->arity))
        return arityError(out, sub);
    if (!strcasecmp(sub, "count")) return sdsCatPrintf(out, ":%d\r\n", topLevelCount());
    if (!strcasecmp(sub, "info")) {
        if (argc == 2) return sentinelCommandCommand(out, resp, 1, argv);
        out = sdsCatPrintf(out, "*%d\r\n", argc - 2);
        for (int i = 2; i < argc; i++) {
            const SentinelCommandInfo *r = lookup(argv[i]);
            out = r ? sdsCat(out, resp == 3 ? r->info3 : r->info2) : sdsCat(out, resp == 3 ? "_\r\n" : "$-1\r\n");
        }
        return out;
    }
    if (!strcasecmp(sub, "docs")) {
        int n = 0;
        sds body = sdsEmpty();
        for (int i = 0; i < sentinelCommandCount; i++) {
            const SentinelCommandInfo *r = &sentinelCommandTable[i];
            int want = argc == 2 ? !r->isSub : 0;
            for (int k = 2; k < argc && !want; k++)
                want = !strcasecmp(argv[k], r->name);
            if (!want) continue;
            body = bulk(body, r->name);
            body = sdsCat(body, resp == 3 ? r->docs3 : r->docs2);
            n++;
        }
        out = resp == 3 ? sdsCatPrintf(out, "%%%d\r\n", n) : sdsCatPrintf(out, "*%d\r\n", 2 * n);
        out = sdsCatSds(out, body);
        sdsFree(body);
        return out;
    }
    if (!strcasecmp(sub, "list")) {
        const char *kind = NULL, *value = NULL;
        if (argc == 5 && !strcasecmp(argv[2], "filterby") &&
            (!strcasecmp(argv[3], "module") || !strcasecmp(argv[3], "aclcat") || !strcasecmp(argv[3], "pattern"))) {
            kind = argv[3];
            value = argv[4];
        } else if (argc != 2) {
            return sdsCat(out, "-ERR syntax error\r\n");
        }
        int n = 0;
        sds body = sdsEmpty();
        for (int i = 0; i < sentinelCommandCount; i++) {
            const SentinelCommandInfo *r = &sentinelCommandTable[i];
            if (kind && !listMatches(r, kind, value)) continue;
            body = bulk(body, r->name);
            n++;
        }
        out = sdsCatPrintf(out, "*%d\r\n", n);
        out = sdsCatSds(out, body);
        sdsFree(body);
        return out;
    }
    /* getkeys, getkeysandflags: as Redis, the command named must exist (a
     * container's subcommand too); then, none of Sentinel's commands
     * having keys, that is the answer (checked before the arity) */
    const SentinelCommandInfo *r = lookup(argv[2]);
    int container = 0;
    if (r) {
        size_t nl = strlen(r->name);
        for (int i = 0; i < sentinelCommandCount; i++)
            if (!strncasecmp(sentinelCommandTable[i].name, r->name, nl) && sentinelCommandTable[i].name[nl] == '|')
                container = 1;
    }
    if (r && container) {
        char subFull[64];
        snprintf(subFull, sizeof(subFull), "%s|%s", argv[2], argc > 3 ? argv[3] : "");
        r = argc > 3 ? lookup(subFull) : NULL;
    }
    if (!r) return sdsCat(out, "-ERR Invalid command specified\r\n");
    return sdsCat(out, "-ERR The command has no key arguments\r\n");
}
