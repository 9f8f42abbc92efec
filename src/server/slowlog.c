/* slowlog.c -- SLOWLOG GET / LEN / RESET / HELP: the last
 * slowlog-max-len commands that ran for at least slowlog-log-slower-than
 * microseconds (-1 disables, 0 logs everything).
 *
 * Entries are recorded by an after-call hook, so every command run through
 * callCommand counts, including each command EXEC runs (EXEC itself is
 * flagged skip-slowlog, as Redis), and each command a script calls (peer
 * "?:0").  Not recorded: commands flagged CMD_SKIP_SLOWLOG, a client that
 * just blocked (its command has not finished), and the commands the AOF
 * load replays.  Secrets are "(redacted)" as in Redis (commandFindRedacted).  A blocked command is
 * recorded when it is served (with the time serving it took) or unblocked
 * by CLIENT UNBLOCK (its argv already released: an entry with no
 * arguments, as Redis 7.0 logs it), not when it times out.  The list is
 * newest first; ids keep increasing across SLOWLOG RESET.  A shorter
 * slowlog-max-len takes effect at the next recorded entry, as in Redis.
 *
 * An entry keeps at most 32 arguments (the 32nd then says "... (N more
 * arguments)") and at most 128 bytes of each ("... (N more bytes)"). */
#include "server/slowlog.h"

#include <limits.h>
#include <string.h>
#include <time.h>

#include "core/dispatch.h"
#include "core/server.h"
#include "ds/alloc.h"
#include "server/monitor.h"

/* slowlog-log-slower-than (us, -1 off) and slowlog-max-len: set through
 * the directives at the end of this file. */
static long long slowlogLogSlowerThan;
static unsigned long slowlogMaxLen;

#define SLOWLOG_MAX_ARGC 32
#define SLOWLOG_MAX_ARGLEN 128

typedef struct SlowlogEntry {
    struct SlowlogEntry *next, *prev; /* towards older / newer entries */
    long long id;
    long long time;     /* unix seconds */
    long long duration; /* microseconds */
    int argc;
    sds *argv;          /* trimmed copies, owned */
    sds peer;           /* client address */
    sds name;           /* client name, "" when none */
} SlowlogEntry;

static SlowlogEntry *newest, *oldest;
static unsigned long length;
static long long nextId;

static sds trimmedArg(const sds arg) {
    size_t len = sdsLen(arg);
    if (len <= SLOWLOG_MAX_ARGLEN) return sdsDup(arg);
    sds s = sdsNewLen(arg, SLOWLOG_MAX_ARGLEN);
    return sdsCatPrintf(s, "... (%zu more bytes)", len - SLOWLOG_MAX_ARGLEN);
}

static SlowlogEntry *entryCreate(Client *c, Command *cmd, long long usec) {
    SlowlogEntry *e = xcalloc(sizeof(*e));
    int argc = c->argc < SLOWLOG_MAX_ARGC ? c->argc : SLOWLOG_MAX_ARGC;
    char small[SLOWLOG_MAX_ARGC];
    char *redact = c->argc <= SLOWLOG_MAX_ARGC ? small : xmalloc((size_t)c->argc);
    memset(redact, 0, (size_t)(c->argc > 0 ? c->argc : 0));
    commandFindRedacted(cmd, c->argc, c->argv, redact);
    e->argc = argc;
    e->argv = xmalloc(sizeof(sds) * (size_t)(argc > 0 ? argc : 1));
    for (int i = 0; i < argc; i++) {
        if (argc != c->argc && i == argc - 1)
            e->argv[i] = sdsCatPrintf(sdsEmpty(), "... (%d more arguments)", c->argc - argc + 1);
        else if (redact[i])
            e->argv[i] = sdsNew("(redacted)");
        else
            e->argv[i] = trimmedArg(c->argv[i]);
    }
    if (redact != small) xfree(redact);
    e->id = nextId++;
    e->time = (long long)time(NULL);
    e->duration = usec;
    e->peer = sdsNew(clientIsFake(c) ? "?:0" : c->addr); /* a script's calls: no peer */
    e->name = c->name ? sdsDup(c->name) : sdsEmpty();
    return e;
}

static void entryFree(SlowlogEntry *e) {
    for (int i = 0; i < e->argc; i++) sdsFree(e->argv[i]);
    xfree(e->argv);
    sdsFree(e->peer);
    sdsFree(e->name);
    xfree(e);
}

static void dropOldest(void) {
    SlowlogEntry *e = oldest;
    oldest = e->prev;
    if (oldest) oldest->next = NULL;
    else newest = NULL;
    length--;
    entryFree(e);
}

static void slowlogReset(void) {
    while (oldest) dropOldest();
}

static void slowlogPush(Client *c, Command *cmd, long long usec) {
    long long threshold = slowlogLogSlowerThan;
    if (threshold < 0 || usec < threshold) return;
    /* A script's calls are logged; what the AOF load runs is not. */
    if ((cmd->flags & CMD_SKIP_SLOWLOG) || (c->flags & (CLIENT_FAKE | CLIENT_LUA)) == CLIENT_FAKE) return;
    SlowlogEntry *e = entryCreate(c, cmd, usec);
    e->next = newest;
    if (newest) newest->prev = e;
    else oldest = e;
    newest = e;
    length++;
    while (length > slowlogMaxLen) dropOldest();
}

static void slowlogAfterCall(Client *c, Command *cmd, long long usec) {
    if (!(c->flags & CLIENT_BLOCKED)) slowlogPush(c, cmd, usec);
}

void slowlogInit(void) {
    dispatchAddAfterCall(slowlogAfterCall);
    dispatchAddUnblockHook(slowlogPush);
}

static void replyEntry(Client *c, const SlowlogEntry *e) {
    replyArrayLen(c, 6);
    replyLongLong(c, e->id);
    replyLongLong(c, e->time);
    replyLongLong(c, e->duration);
    replyArrayLen(c, e->argc);
    for (int i = 0; i < e->argc; i++) replyBulkSds(c, e->argv[i]);
    replyBulkSds(c, e->peer);
    replyBulkSds(c, e->name);
}

static void slowlogGetCommand(Client *c) {
    long count = 10;
    if (c->argc > 3) {
        replySubcommandSyntaxError(c);
        return;
    }
    if (c->argc == 3 &&
        getRangeLongOrReply(c, c->argv[2], -1, LONG_MAX, &count, "count should be greater than or equal to -1") == -1)
        return;
    if (count == -1 || (unsigned long)count > length) count = (long)length;
    replyArrayLen(c, count);
    const SlowlogEntry *e = newest;
    for (long i = 0; i < count; i++, e = e->next) replyEntry(c, e);
}

static void slowlogLenCommand(Client *c) { replyLongLong(c, (long long)length); }

static void slowlogResetCommand(Client *c) {
    slowlogReset();
    replyOk(c);
}

static void slowlogHelpCommand(Client *c) {
    static const char *lines[] = {
        "GET [<count>]",
        "    Return top <count> entries from the slowlog (default: 10, -1 mean all).",
        "    Entries are made of:",
        "    id, timestamp, time in microseconds, arguments array, client IP and port,",
        "    client name",
        "LEN",
        "    Return the length of the slowlog.",
        "RESET",
        "    Reset the slowlog.",
        NULL,
    };
    replyHelp(c, lines);
}

static Command slowlogSubcommands[] = {
    {.name = "reset", .proc = slowlogResetCommand},
    {.name = "len", .proc = slowlogLenCommand},
    {.name = "get", .proc = slowlogGetCommand},
    {.name = "help", .proc = slowlogHelpCommand},
    {0},
};

Command slowlogCommands[] = {
    {.name = "slowlog", .subcommands = slowlogSubcommands},
    {0},
};

/* ------------------------------------------------------------------------ */
/* Configuration                                                             */
/* ------------------------------------------------------------------------ */

static ConfigDef slowlogConfig[] = {
    CONFIG_LL("slowlog-log-slower-than", NULL, 0, slowlogLogSlowerThan, -1, LLONG_MAX, "10000",
              .rank = CONFIG_RANK_INTROSPECTION + 0),
    {.name = "slowlog-max-len", .type = CT_ULONG, .var = &slowlogMaxLen, .min = 0, .max = LONG_MAX, .deflt = "128",
     .rank = CONFIG_RANK_INTROSPECTION + 1},
};

void slowlogRegisterConfig(void) { configRegister(slowlogConfig, CONFIG_COUNT_OF(slowlogConfig)); }
