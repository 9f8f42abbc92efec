/* command.c -- gathers the per-family command arrays into one lookup
 * table.  The families are listed in `families` below; adding a command is
 * adding an entry to its family's array.  Lookup is case-insensitive,
 * through an open-addressing table of 1024 slots keyed by SipHash. */
#include "core/command.h"

#include <string.h>

#include "core/client.h"
#include "ds/alloc.h"
#include "ds/sds.h"
#include "ds/util.h"

extern Command connCommands[], stringCommands[], bitmapCommands[], keyCommands[], expireCommands[],
    configCommands[], infoCommands[], clientCommands[], commandCommands[], debugCommands[];

/* Families being built: an empty weak array stands in until the family's
 * file defines the real one, so adding a family never edits this file
 * twice.  (An empty family has no commands: they answer unknown command.) */
#define FUTURE_FAMILY(name) __attribute__((weak)) Command name[] = {{0}}
FUTURE_FAMILY(listCommands);
FUTURE_FAMILY(hashCommands);
FUTURE_FAMILY(setCommands);
FUTURE_FAMILY(zsetCommands);
FUTURE_FAMILY(sortCommands);
FUTURE_FAMILY(blockingCommands);
FUTURE_FAMILY(multiCommands);
FUTURE_FAMILY(pubsubCommands);
FUTURE_FAMILY(monitorCommands);
FUTURE_FAMILY(slowlogCommands);
FUTURE_FAMILY(latencyCommands);
FUTURE_FAMILY(scriptCommands);
FUTURE_FAMILY(functionCommands);
FUTURE_FAMILY(persistCommands);
FUTURE_FAMILY(hllCommands);
FUTURE_FAMILY(geoCommands);

static Command *families[] = {connCommands,     stringCommands,   bitmapCommands,  keyCommands,
                              expireCommands,   configCommands,   infoCommands,    clientCommands,
                              commandCommands,  debugCommands,    listCommands,    hashCommands,
                              setCommands,      zsetCommands,     sortCommands,    blockingCommands,
                              multiCommands,    pubsubCommands,   monitorCommands, slowlogCommands,
                              latencyCommands,  scriptCommands,   functionCommands, persistCommands,
                              hllCommands,      geoCommands};

#define TABLE_SLOTS 1024
static Command *table[TABLE_SLOTS];
static Command *ordered[TABLE_SLOTS]; /* registration order, for iteration */
static unsigned count;
static unsigned nextId;
/* FNV-1a over the bytes with bit 5 set (ASCII letters lowered; other
 * bytes may map together, which only makes names share a slot).  A keyed
 * hash is not needed: the table holds only the server's own names, so a
 * client's choice of name can lengthen no probe beyond what those names
 * already form. */
static unsigned slotFor(const char *name, size_t len) {
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < len; i++) h = (h ^ ((unsigned char)name[i] | 0x20u)) * 16777619u;
    return (h ^ (h >> 16)) & (TABLE_SLOTS - 1);
}

static void insert(Command *cmd) {
    unsigned i = slotFor(cmd->name, strlen(cmd->name));
    while (table[i]) i = (i + 1) & (TABLE_SLOTS - 1);
    table[i] = cmd;
    ordered[count++] = cmd;
}

static char *joinName(const char *a, const char *b) {
    size_t la = strlen(a), lb = strlen(b);
    char *s = xmalloc(la + lb + 2);
    memcpy(s, a, la);
    s[la] = '|';
    memcpy(s + la + 1, b, lb + 1);
    return s;
}

void commandTableInit(void) {
    for (size_t f = 0; f < sizeof(families) / sizeof(families[0]); f++) {
        for (Command *cmd = families[f]; cmd->name; cmd++) {
            cmd->fullname = xstrdup(cmd->name);
            cmd->nameLen = strlen(cmd->name);
            cmd->id = nextId++;
            insert(cmd);
            for (Command *sub = cmd->subcommands; sub && sub->name; sub++) {
                sub->parent = cmd;
                sub->fullname = joinName(cmd->name, sub->name);
                sub->nameLen = strlen(sub->name);
                sub->id = nextId++;
            }
        }
    }
}

Command *commandLookup(const char *name, size_t len) {
    unsigned i = slotFor(name, len);
    while (table[i]) {
        if (commandNameIs(table[i], name, len)) return table[i];
        i = (i + 1) & (TABLE_SLOTS - 1);
    }
    return NULL;
}

Command *commandLookupSub(Command *parent, const char *name, size_t len) {
    for (Command *sub = parent->subcommands; sub && sub->name; sub++)
        if (commandNameIs(sub, name, len)) return sub;
    return NULL;
}

Command *commandLookupArgv(int argc, char **argv) {
    if (argc < 1) return NULL;
    Command *cmd = commandLookup(argv[0], sdsLen(argv[0]));
    if (cmd && cmd->subcommands && argc >= 2) return commandLookupSub(cmd, argv[1], sdsLen(argv[1]));
    return cmd;
}

Command *commandIterate(unsigned *cursor) { return *cursor < count ? ordered[(*cursor)++] : NULL; }

unsigned commandCount(void) { return count; }

int commandNumkeysKeys(int idx, int argc, char **argv, int *out, int max) {
    long long n;
    if (idx >= argc || !stringToLongLong(argv[idx], sdsLen(argv[idx]), &n) || n <= 0 || n > argc - idx - 1)
        return 0;
    int found = 0;
    for (int i = 0; i < n && found < max; i++) out[found++] = idx + 1 + i;
    return found;
}

int commandGetKeys(Command *cmd, Client *c, int argc, char **argv, int *out, int max) {
    if (cmd->getKeys) return cmd->getKeys(c, argc, argv, out, max);
    if (cmd->firstKey <= 0) return 0;
    int last = cmd->lastKey < 0 ? argc + cmd->lastKey : cmd->lastKey;
    int step = cmd->keyStep > 0 ? cmd->keyStep : 1;
    int n = 0;
    for (int i = cmd->firstKey; i <= last && i < argc && n < max; i += step) out[n++] = i;
    return n;
}
