/* command.c -- joins the family arrays (name -> handler) with the command
 * table rows of command_data.c into the lookup table, and walks key specs.
 *
 * The families are listed in `families` below; a command exists when its
 * family binds a handler to a row.  Start-up fails (with a log line naming
 * the command) when a family entry has no row, a row has no handler, or a
 * command whose keys move (movablekeys or VARIABLE_FLAGS specs) has no
 * fallback key finder in `keyFinders`.  Lookup is case-insensitive, through
 * an open-addressing table of 1024 slots keyed by FNV-1a.
 *
 * Key finding follows Redis 7.0.15: the key specs first, unless one is
 * VARIABLE_FLAGS; a spec that cannot be resolved on the given argv (an
 * unknown begin or find step, an INCOMPLETE spec, a key count that is not
 * a non-negative integer, a range outside argv) voids the whole result and
 * the command's fallback finder (Redis's getkeys procedures, reproduced in
 * `keyFinders`, flags and quirks included) answers instead. */
#include "core/command.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/client.h"
#include "core/log.h"
#include "ds/alloc.h"
#include "ds/sds.h"
#include "ds/util.h"

extern Command connCommands[], stringCommands[], bitmapCommands[], keyCommands[], expireCommands[],
    configCommands[], infoCommands[], clientCommands[], commandCommands[], debugCommands[], listCommands[],
    hashCommands[], setCommands[], zsetCommands[], sortCommands[], multiCommands[], pubsubCommands[],
    monitorCommands[], slowlogCommands[], latencyCommands[], scriptCommands[], functionCommands[], hllCommands[],
    geoCommands[], persistCommands[], replCommands[], migrateCommands[], aclCommands[], streamCommands[],
    lolwutCommands[], memoryCommands[], memberTtlCommands[], moduleCommands[];

static Command *families[] = {connCommands,    stringCommands,  bitmapCommands,  keyCommands,     expireCommands,
                              configCommands,  infoCommands,    clientCommands,  commandCommands, debugCommands,
                              listCommands,    hashCommands,    setCommands,     zsetCommands,    sortCommands,
                              multiCommands,   pubsubCommands,  monitorCommands, slowlogCommands, latencyCommands,
                              scriptCommands,  functionCommands, hllCommands,     geoCommands,
                              persistCommands, replCommands, migrateCommands, aclCommands, streamCommands,
                              lolwutCommands, memoryCommands, memberTtlCommands, moduleCommands};

#define TABLE_SLOTS 1024
static Command *table[TABLE_SLOTS];
static Command *ordered[TABLE_SLOTS]; /* registration order, for iteration */
static unsigned count;
static unsigned nextId;
static unsigned freeIds[TABLE_SLOTS]; /* ids of removed commands, reused first */
static unsigned freeIdCount;

/* --- key results --- */

void keyResultInit(KeyResult *r) {
    r->keys = r->inlineKeys;
    r->count = 0;
    r->cap = KEY_RESULT_INLINE;
}

void keyResultFree(KeyResult *r) {
    if (r->keys != r->inlineKeys) xfree(r->keys);
    keyResultInit(r);
}

void keyResultAdd(KeyResult *r, int pos, uint32_t flags) {
    if (r->count == r->cap) {
        int cap = r->cap * 2;
        KeyPos *keys = xmalloc(sizeof(KeyPos) * (size_t)cap);
        memcpy(keys, r->keys, sizeof(KeyPos) * (size_t)r->count);
        if (r->keys != r->inlineKeys) xfree(r->keys);
        r->keys = keys;
        r->cap = cap;
    }
    r->keys[r->count].pos = pos;
    r->keys[r->count++].flags = flags;
}

/* --- fallback key finders (Redis's getkeys procedures) --- */

/* argv[countAt] is a key count N (read as C's atoi does) followed at
 * firstAt by N keys; storeAt, when not 0, is a destination key listed
 * after them.  No keys when N < 1 or N exceeds the arguments.  The keys
 * carry no flags, as in Redis. */
static int numkeysFinder(int storeAt, int countAt, int firstAt, int argc, char **argv, KeyResult *out) {
    if (countAt >= argc) return 0;
    long n = strtol(argv[countAt], NULL, 10);
    int num = (int)n; /* atoi's truncation */
    if (num < 1 || num > argc - firstAt) return 0;
    for (int i = 0; i < num; i++) keyResultAdd(out, firstAt + i, 0);
    if (storeAt) keyResultAdd(out, storeAt, 0);
    return storeAt ? num + 1 : num;
}

static int numkeysAt1(int argc, char **argv, KeyResult *out) { return numkeysFinder(0, 1, 2, argc, argv, out); }
static int numkeysAt2(int argc, char **argv, KeyResult *out) { return numkeysFinder(0, 2, 3, argc, argv, out); }
static int storeNumkeysAt2(int argc, char **argv, KeyResult *out) { return numkeysFinder(1, 2, 3, argc, argv, out); }

/* SET: RW+ACCESS+UPDATE when a GET option or (Redis 8.4) an IF* condition
 * follows the value (it reads the old value), else OW+UPDATE. */
static int setFinder(int argc, char **argv, KeyResult *out) {
    uint32_t flags = KS_OW | KS_UPDATE;
    for (int i = 3; i < argc; i++)
        if (strcasecmp(argv[i], "get") == 0 || strcasecmp(argv[i], "ifeq") == 0 || strcasecmp(argv[i], "ifne") == 0 ||
            strcasecmp(argv[i], "ifdeq") == 0 || strcasecmp(argv[i], "ifdne") == 0) {
            flags = KS_RW | KS_ACCESS | KS_UPDATE;
            break;
        }
    keyResultAdd(out, 1, flags);
    return 1;
}

/* DELEX (Redis 8.4): RW+ACCESS+DELETE with a condition (it reads the
 * value), else RM+DELETE as DEL. */
static int delexFinder(int argc, char **argv, KeyResult *out) {
    (void)argv;
    keyResultAdd(out, 1, argc > 2 ? KS_RW | KS_ACCESS | KS_DELETE : KS_RM | KS_DELETE);
    return 1;
}

/* MSETEX numkeys key value ... (Redis 8.4): the keys of its numkeys pairs,
 * OW+UPDATE as its key spec says; none when numkeys is below 1 or exceeds
 * the arguments. */
static int msetexFinder(int argc, char **argv, KeyResult *out) {
    if (argc < 2) return 0;
    long n = strtol(argv[1], NULL, 10);
    if (n < 1 || n > (argc - 2) / 2) return 0;
    for (int i = 0; i < (int)n; i++) keyResultAdd(out, 2 + 2 * i, KS_OW | KS_UPDATE);
    return (int)n;
}

/* BITFIELD: read-only while every operation is a complete GET or OVERFLOW;
 * a SET, INCRBY or anything unparsable makes it RW. */
static int bitfieldFinder(int argc, char **argv, KeyResult *out) {
    int readonly = 1;
    for (int i = 2; i < argc && readonly; i++) {
        int rest = argc - i - 1;
        if (strcasecmp(argv[i], "get") == 0 && rest >= 2)
            i += 2;
        else if (strcasecmp(argv[i], "overflow") == 0 && rest >= 1)
            i += 1;
        else
            readonly = 0;
    }
    keyResultAdd(out, 1, readonly ? KS_RO | KS_ACCESS : KS_RW | KS_ACCESS | KS_UPDATE);
    return 1;
}

/* SORT_RO: the sorted key only. */
static int sortRoFinder(int argc, char **argv, KeyResult *out) {
    (void)argc;
    (void)argv;
    keyResultAdd(out, 1, KS_RO | KS_ACCESS);
    return 1;
}

/* SORT: the sorted key and the argument after the last STORE, skipping
 * the operands of LIMIT (2), GET and BY (1) as Redis's scan does (the
 * STORE operand itself is not skipped). */
static int sortFinder(int argc, char **argv, KeyResult *out) {
    int store = 0;
    for (int i = 2; i < argc; i++) {
        if (strcasecmp(argv[i], "limit") == 0)
            i += 2;
        else if (strcasecmp(argv[i], "store") == 0 && i + 1 < argc)
            store = i + 1;
        else if (strcasecmp(argv[i], "get") == 0 || strcasecmp(argv[i], "by") == 0)
            i += 1;
    }
    keyResultAdd(out, 1, KS_RO | KS_ACCESS);
    if (store) keyResultAdd(out, store, KS_OW | KS_UPDATE);
    return store ? 2 : 1;
}

/* GEORADIUS / GEORADIUSBYMEMBER: the source, and the argument after the
 * last STORE or STOREDIST from argv[5] on (for both commands, as Redis
 * scans).  No flags, as in Redis. */
static int georadiusFinder(int argc, char **argv, KeyResult *out) {
    int store = 0;
    for (int i = 5; i < argc; i++)
        if ((strcasecmp(argv[i], "store") == 0 || strcasecmp(argv[i], "storedist") == 0) && i + 1 < argc) {
            store = i + 1;
            i++;
        }
    keyResultAdd(out, 1, 0);
    if (store) keyResultAdd(out, store, 0);
    return store ? 2 : 1;
}

/* MIGRATE: argv[3], or with a KEYS option (found past COPY, REPLACE and
 * the operands of AUTH (1) and AUTH2 (2)) every argument after it, which
 * Redis allows only with an empty argv[3] (else no keys).  RW, ACCESS and
 * DELETE, as Redis flags them. */
static int migrateFinder(int argc, char **argv, KeyResult *out) {
    int first = 3, num = 1;
    for (int i = 6; i < argc; i++) {
        if (strcasecmp(argv[i], "keys") == 0) {
            if (argv[3][0] != '\0') return 0;
            first = i + 1;
            num = argc - first;
            break;
        }
        if (strcasecmp(argv[i], "auth") == 0) i += 1;
        else if (strcasecmp(argv[i], "auth2") == 0) i += 2;
    }
    for (int i = 0; i < num; i++) keyResultAdd(out, first + i, KS_RW | KS_ACCESS | KS_DELETE);
    return num;
}

/* XREAD / XREADGROUP: the keys after the STREAMS that ends the options
 * (skipping the operands of BLOCK, COUNT and GROUP), half of what follows
 * it; none when that is not an even, non-zero count. */
static int xreadFinder(int argc, char **argv, KeyResult *out) {
    int streamsPos = -1;
    for (int i = 1; i < argc; i++) {
        if (strcasecmp(argv[i], "block") == 0 || strcasecmp(argv[i], "count") == 0)
            i++;
        else if (strcasecmp(argv[i], "group") == 0)
            i += 2;
        else if (strcasecmp(argv[i], "noack") == 0)
            continue;
        else {
            if (strcasecmp(argv[i], "streams") == 0) streamsPos = i;
            break;
        }
    }
    int num = argc - streamsPos - 1;
    if (streamsPos == -1 || num == 0 || num % 2 != 0) return 0;
    num /= 2;
    for (int i = 0; i < num; i++) keyResultAdd(out, streamsPos + 1 + i, 0);
    return num;
}

/* BZPOPDUE key [key ...] timeout [COUNT n] (Cairn's own): the keys end
 * before the timeout, which is followed by COUNT n when there are at least
 * five arguments and the second to last is COUNT (as the command reads
 * them). */
static int bzpopdueFinder(int argc, char **argv, KeyResult *out) {
    int last = argc >= 5 && strcasecmp(argv[argc - 2], "count") == 0 ? argc - 4 : argc - 2;
    for (int i = 1; i <= last; i++) keyResultAdd(out, i, KS_RW | KS_ACCESS | KS_DELETE);
    return last > 0 ? last : 0;
}

static const struct {
    const char *fullname;
    GetKeysProc *finder;
} keyFinders[] = {
    {"migrate", migrateFinder},
    {"bzpopdue", bzpopdueFinder},
    {"bitfield", bitfieldFinder},     {"blmpop", numkeysAt2},      {"bzmpop", numkeysAt2},
    {"eval", numkeysAt2},             {"eval_ro", numkeysAt2},     {"evalsha", numkeysAt2},
    {"evalsha_ro", numkeysAt2},       {"fcall", numkeysAt2},       {"fcall_ro", numkeysAt2},
    {"georadius", georadiusFinder},   {"georadiusbymember", georadiusFinder},
    {"lmpop", numkeysAt1},            {"set", setFinder},          {"sintercard", numkeysAt1},
    {"sort", sortFinder},             {"sort_ro", sortRoFinder},   {"zdiff", numkeysAt1},
    {"zdiffstore", storeNumkeysAt2},  {"zinter", numkeysAt1},      {"zintercard", numkeysAt1},
    {"zinterstore", storeNumkeysAt2}, {"zmpop", numkeysAt1},       {"zunion", numkeysAt1},
    {"zunionstore", storeNumkeysAt2}, {"xread", xreadFinder},     {"xreadgroup", xreadFinder},
    {"delex", delexFinder},           {"msetex", msetexFinder},
};

static GetKeysProc *keyFinderFor(const char *fullname) {
    for (size_t i = 0; i < sizeof(keyFinders) / sizeof(keyFinders[0]); i++)
        if (strcmp(keyFinders[i].fullname, fullname) == 0) return keyFinders[i].finder;
    return NULL;
}

/* --- table construction --- */

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

static int compareSpec(const void *key, const void *elem) {
    return strcmp(key, ((const CommandSpec *)elem)->fullname);
}

const CommandSpec *commandSpecFind(const char *fullname) {
    return bsearch(fullname, commandSpecs, commandSpecCount, sizeof(commandSpecs[0]), compareSpec);
}

static _Noreturn void tableBroken(const char *what, const char *name) {
    serverLog(LL_WARNING, "Command table: %s '%s' (see src/core/command_data.c)", what, name);
    abort();
}

/* Whether the keys of cmd can move (Redis shows movablekeys) or have
 * argument-dependent flags: such a command needs a fallback finder. */
static int needsFinder(const CommandSpec *spec) {
    if (spec->flags & CMD_MOVABLE_KEYS) return 1;
    for (int i = 0; i < spec->keySpecCount; i++)
        if (spec->keySpecs[i].flags & KS_VARIABLE_FLAGS) return 1;
    return 0;
}

/* Binds cmd to its row; marks the row bound in `bound`. */
static void bindCommand(Command *cmd, char *fullname, unsigned char *bound) {
    const CommandSpec *spec = commandSpecFind(fullname);
    if (!spec) tableBroken("no row for the handler of", fullname);
    if (cmd->flags & ~CMD_INTERNAL_MASK) tableBroken("a family array sets a COMMAND flag for", fullname);
    if (!cmd->proc && !cmd->subcommands) tableBroken("neither handler nor subcommands for", fullname);
    bound[spec - commandSpecs] = 1;
    cmd->spec = spec;
    cmd->fullname = fullname;
    cmd->nameLen = strlen(cmd->name);
    cmd->arity = spec->arity;
    cmd->flags |= spec->flags;
    cmd->getKeys = keyFinderFor(fullname);
    if (needsFinder(spec) && !cmd->getKeys) tableBroken("no fallback key finder in command.c for", fullname);
    cmd->id = nextId++;
}

void commandTableInit(void) {
    unsigned char *bound = xcalloc(commandSpecCount);
    for (size_t f = 0; f < sizeof(families) / sizeof(families[0]); f++) {
        for (Command *cmd = families[f]; cmd->name; cmd++) {
            bindCommand(cmd, xstrdup(cmd->name), bound);
            insert(cmd);
            for (Command *sub = cmd->subcommands; sub && sub->name; sub++) {
                sub->parent = cmd;
                bindCommand(sub, joinName(cmd->name, sub->name), bound);
            }
        }
    }
    for (size_t i = 0; i < commandSpecCount; i++)
        if (!bound[i]) tableBroken("no handler for the row", commandSpecs[i].fullname);
    xfree(bound);
}

/* --- commands added at run time --- */

int commandAdd(Command *cmd, const CommandSpec *spec) {
    size_t len = strlen(cmd->name);
    if (commandLookup(cmd->name, len) || count >= TABLE_SLOTS / 2) return -1;
    cmd->spec = spec;
    cmd->fullname = (char *)spec->fullname;
    cmd->nameLen = len;
    cmd->arity = spec->arity;
    cmd->flags |= spec->flags;
    cmd->getKeys = NULL;
    cmd->parent = NULL;
    cmd->subcommands = NULL;
    cmd->id = commandNewId();
    insert(cmd);
    return 0;
}

int commandHasFreeId(void) { return freeIdCount > 0; }

unsigned commandNewId(void) { return freeIdCount ? freeIds[--freeIdCount] : nextId++; }

void commandFreeId(unsigned id) {
    if (freeIdCount < TABLE_SLOTS) freeIds[freeIdCount++] = id;
}

void commandRemove(Command *cmd) {
    commandFreeId(cmd->id);
    unsigned j = 0;
    for (unsigned i = 0; i < count; i++)
        if (ordered[i] != cmd) ordered[j++] = ordered[i];
    count = j;
    /* open addressing: rebuild the slots without it */
    memset(table, 0, sizeof(table));
    for (unsigned i = 0; i < count; i++) {
        unsigned s = slotFor(ordered[i]->name, strlen(ordered[i]->name));
        while (table[s]) s = (s + 1) & (TABLE_SLOTS - 1);
        table[s] = ordered[i];
    }
}

/* --- lookup --- */

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

Command *commandLookupFullName(const char *name, size_t len) {
    const char *bar = memchr(name, '|', len);
    if (!bar) return commandLookup(name, len);
    Command *parent = commandLookup(name, (size_t)(bar - name));
    if (!parent || !parent->subcommands) return NULL;
    const char *sub = bar + 1;
    size_t sublen = len - (size_t)(sub - name);
    if (memchr(sub, '|', sublen)) return NULL;
    return commandLookupSub(parent, sub, sublen);
}

Command *commandLookupArgv(int argc, char **argv) {
    if (argc < 1) return NULL;
    Command *cmd = commandLookup(argv[0], sdsLen(argv[0]));
    if (cmd && cmd->subcommands && argc >= 2) return commandLookupSub(cmd, argv[1], sdsLen(argv[1]));
    return cmd;
}

Command *commandIterate(unsigned *cursor) { return *cursor < count ? ordered[(*cursor)++] : NULL; }

unsigned commandCount(void) { return count; }

unsigned commandIdCount(void) { return nextId; }

/* --- key specs --- */

int commandHasKeys(const Command *cmd) {
    if (cmd->getKeys) return 1;
    for (int i = 0; i < cmd->spec->keySpecCount; i++)
        if (!(cmd->spec->keySpecs[i].flags & KS_NOT_KEY)) return 1;
    return 0;
}

/* The argv index where ks's keys start, 0 when its keyword is absent, -1
 * when it cannot say (unknown begin search). */
static int specStart(const KeySpec *ks, int argc, char **argv) {
    if (ks->bsType == KSB_INDEX) return ks->bsIndex;
    if (ks->bsType != KSB_KEYWORD) return -1;
    int from = ks->bsIndex > 0 ? ks->bsIndex : argc + ks->bsIndex;
    int step = ks->bsIndex > 0 ? 1 : -1;
    int end = ks->bsIndex > 0 ? argc - 1 : 1;
    /* Redis stops before `end`: a keyword in the last argument (forwards)
     * or in argv[1] (backwards) has no key after it to find. */
    for (int i = from; i != end; i += step) {
        if (i >= argc || i < 1) break;
        if (strcasecmp(argv[i], ks->bsKeyword) == 0) return i + 1;
    }
    return 0;
}

/* Appends the keys spec ks finds in argv.  Returns 0, or -1 when the spec
 * cannot be resolved on this argv (the caller voids the result). */
static int specKeys(const KeySpec *ks, int argc, char **argv, KeyResult *out) {
    int first = specStart(ks, argc, argv);
    if (first == 0) return 0;
    if (first < 0) return -1;
    long long last;
    int step;
    if (ks->fkType == KSF_RANGE) {
        step = ks->fk[1];
        if (ks->fk[0] >= 0)
            last = (long long)first + ks->fk[0];
        else if (ks->fk[2] == 0)
            last = (long long)argc + ks->fk[0];
        else
            last = (long long)first + (argc - first) / ks->fk[2] + ks->fk[0];
    } else if (ks->fkType == KSF_KEYNUM) {
        step = ks->fk[2];
        long long n;
        int at = first + ks->fk[0];
        if (ks->fk[0] >= argc || at >= argc) return -1;
        if (!stringToLongLong(argv[at], sdsLen(argv[at]), &n) || n < 0) return -1;
        first += ks->fk[1];
        last = (long long)first + (int)(uint32_t)(unsigned long long)n - 1; /* Redis's (int) cast */
        /* A key step above 1 (MSETEX's pairs, Redis 8.4) spans n steps. */
        if (step > 1) last = first + ((long long)last - first) * step;
    } else {
        return -1;
    }
    if (last >= argc || last < first || first >= argc) return -1;
    if (step < 1) step = 1;
    for (long long i = first; i <= last; i += step) keyResultAdd(out, (int)i, ks->flags);
    return (ks->flags & KS_INCOMPLETE) ? -1 : 0;
}

int commandKeys(const Command *cmd, int argc, char **argv, KeyResult *out) {
    const CommandSpec *spec = cmd->spec;
    int start = out->count, reliable = 0, variable = 0;
    for (int i = 0; i < spec->keySpecCount; i++) {
        if (!(spec->keySpecs[i].flags & KS_NOT_KEY)) reliable = 1;
        if (spec->keySpecs[i].flags & KS_VARIABLE_FLAGS) variable = 1;
    }
    if (reliable && !variable) {
        int ok = 1;
        for (int i = 0; i < spec->keySpecCount && ok; i++) {
            const KeySpec *ks = &spec->keySpecs[i];
            if (!(ks->flags & KS_NOT_KEY) && specKeys(ks, argc, argv, out) < 0) ok = 0;
        }
        if (ok) return out->count - start;
        out->count = start;
    }
    return cmd->getKeys ? cmd->getKeys(argc, argv, out) : 0;
}

int commandGetKeys(Command *cmd, Client *c, int argc, char **argv, int *out, int max) {
    (void)c;
    KeyResult r;
    keyResultInit(&r);
    int n = commandKeys(cmd, argc, argv, &r);
    if (n > max) n = max;
    for (int i = 0; i < n; i++) out[i] = r.keys[i].pos;
    keyResultFree(&r);
    return n;
}
