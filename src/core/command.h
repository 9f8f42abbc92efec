/* command.h -- the command table.
 *
 * Each command family (a file in src/types or src/server) declares a
 * NULL-name-terminated array of Command; command.c gathers them into one
 * lookup table at start-up.  COMMAND, COMMAND INFO/DOCS/COUNT/LIST/GETKEYS
 * are generated from these entries, so a command exists for clients exactly
 * when it has an entry here.  Container commands (CONFIG, CLIENT, OBJECT...)
 * list their subcommands in `subcommands`; dispatch resolves them and reports
 * Redis's errors for unknown subcommands and wrong arity. */
#ifndef CAIRN_COMMAND_H
#define CAIRN_COMMAND_H

#include <stddef.h>
#include <stdint.h>

struct Client;
typedef void CommandProc(struct Client *c);

/* Flags (Redis 7.0 names in COMMAND INFO). */
#define CMD_WRITE (1ULL << 0)
#define CMD_READONLY (1ULL << 1)
#define CMD_DENYOOM (1ULL << 2)
#define CMD_MODULE (1ULL << 3)
#define CMD_ADMIN (1ULL << 4)
#define CMD_PUBSUB (1ULL << 5)
#define CMD_NOSCRIPT (1ULL << 6)
#define CMD_BLOCKING (1ULL << 8)
#define CMD_LOADING (1ULL << 9)
#define CMD_STALE (1ULL << 10)
#define CMD_SKIP_MONITOR (1ULL << 11)
#define CMD_SKIP_SLOWLOG (1ULL << 12)
#define CMD_ASKING (1ULL << 13)
#define CMD_FAST (1ULL << 14)
#define CMD_NO_AUTH (1ULL << 15)
#define CMD_MAY_REPLICATE (1ULL << 16)
#define CMD_SENTINEL (1ULL << 17)
#define CMD_ONLY_SENTINEL (1ULL << 18)
#define CMD_NO_MANDATORY_KEYS (1ULL << 19)
#define CMD_PROTECTED (1ULL << 20)
#define CMD_NO_ASYNC_LOADING (1ULL << 23)
#define CMD_NO_MULTI (1ULL << 24)
#define CMD_MOVABLE_KEYS (1ULL << 25)
#define CMD_ALLOW_BUSY (1ULL << 26)
/* Cairn-internal (not shown by COMMAND): MONITOR shows the command before
 * it runs, so that EVAL comes before the commands its script calls. */
#define CMD_MONITOR_FIRST (1ULL << 40)

/* ACL categories (COMMAND INFO shows them as @name). */
#define ACL_KEYSPACE (1ULL << 0)
#define ACL_READ (1ULL << 1)
#define ACL_WRITE (1ULL << 2)
#define ACL_SET (1ULL << 3)
#define ACL_SORTEDSET (1ULL << 4)
#define ACL_LIST (1ULL << 5)
#define ACL_HASH (1ULL << 6)
#define ACL_STRING (1ULL << 7)
#define ACL_BITMAP (1ULL << 8)
#define ACL_HYPERLOGLOG (1ULL << 9)
#define ACL_GEO (1ULL << 10)
#define ACL_STREAM (1ULL << 11)
#define ACL_PUBSUB (1ULL << 12)
#define ACL_ADMIN (1ULL << 13)
#define ACL_FAST (1ULL << 14)
#define ACL_SLOW (1ULL << 15)
#define ACL_BLOCKING (1ULL << 16)
#define ACL_DANGEROUS (1ULL << 17)
#define ACL_CONNECTION (1ULL << 18)
#define ACL_TRANSACTION (1ULL << 19)
#define ACL_SCRIPTING (1ULL << 20)

/* Fills `out` with the argv indexes of the keys of a command whose keys are
 * not a simple first/last/step range.  Returns the count (at most max). */
typedef int GetKeysProc(struct Client *c, int argc, char **argv, int *out, int max);

typedef struct CommandStats {
    long long calls;          /* successful or failed executions */
    long long usec;           /* total time spent */
    long long rejectedCalls;  /* refused before running (arity, auth, ...) */
    long long failedCalls;    /* ran and replied with an error */
} CommandStats;

typedef struct Command {
    const char *name;         /* lowercase; subcommands: the sub name only */
    CommandProc *proc;        /* NULL for a container with subcommands */
    int arity;                /* >0 exact argc, <0 at least -arity */
    uint64_t flags;           /* CMD_* */
    uint64_t acl;             /* ACL_* besides those implied by flags */
    int firstKey, lastKey, keyStep; /* key positions, 0 when none */
    GetKeysProc *getKeys;     /* when keys are not a simple range */
    const char *group;        /* COMMAND DOCS group: "string", "generic", ... */
    const char *since;        /* version that added it */
    const char *complexity;   /* COMMAND DOCS complexity */
    const char *summary;      /* one line */
    struct Command *subcommands; /* NULL-name-terminated, or NULL */
    /* Filled at start-up / run time: */
    struct Command *parent;   /* container of a subcommand */
    char *fullname;           /* "config|get" */
    CommandStats stats;
    unsigned id;              /* dense index, for per-command tables */
    size_t nameLen;           /* strlen(name) */
} Command;

/* 1 if s[0..len) names cmd, ignoring ASCII case (names are lowercase):
 * strncasecmp's answer in the C locale, without the call. */
static inline int commandNameIs(const Command *cmd, const char *s, size_t len) {
    if (cmd->nameLen != len) return 0;
    for (size_t i = 0; i < len; i++) {
        unsigned char ch = (unsigned char)s[i];
        if ((unsigned)(ch - 'A') < 26) ch += 'a' - 'A';
        if (ch != (unsigned char)cmd->name[i]) return 0;
    }
    return 1;
}

/* Register the built-in families and build the lookup table. */
void commandTableInit(void);
/* Find by name (case-insensitive), NULL if unknown. */
Command *commandLookup(const char *name, size_t len);
/* Find a subcommand of a container by name, NULL if unknown. */
Command *commandLookupSub(Command *parent, const char *name, size_t len);
/* Resolve argv to a command or subcommand (no errors replied). */
Command *commandLookupArgv(int argc, char **argv);
/* Iterate all top-level commands: returns NULL at the end. */
Command *commandIterate(unsigned *cursor);
unsigned commandCount(void);
/* For GetKeysProc implementations: argv[idx] is a key count N followed by
 * N keys (LMPOP, ZMPOP, ...).  Fills out with their positions; 0 when N is
 * not a positive integer that fits the arguments. */
int commandNumkeysKeys(int idx, int argc, char **argv, int *out, int max);
/* The key positions of argv for cmd; returns count. */
int commandGetKeys(Command *cmd, struct Client *c, int argc, char **argv, int *out, int max);

#endif
