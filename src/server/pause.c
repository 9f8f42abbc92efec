/* pause.c -- CLIENT PAUSE timeout [WRITE|ALL] and CLIENT UNPAUSE.
 *
 * State: the pause type (OFF < WRITE < ALL) and its end time.  A new pause
 * never weakens the current one: the type and the end time each take the
 * larger of old and new (so "CLIENT PAUSE 0" during a WRITE pause turns it
 * into an ALL pause until the same end), as Redis 7.0 does.
 *
 * Postponing.  pausePostponeCommand, which processCommand calls after the
 * replica and subscribed-mode checks and before MULTI queueing, takes
 * every command of a normal client during an ALL pause, and during a WRITE
 * pause those flagged write or may-replicate (also an EXEC whose queue holds
 * one); EVAL* and FCALL* have the flags their script declares (a no-writes
 * script runs, a script without a shebang is held), as in Redis.  The
 * pausing client is not exempt, nor a replica's link to its primary: the
 * primary's stream stops at a postponed command until the pause ends
 * (repl's replicaResumeMaster then applies it), as in Redis.  The client
 * gets CLIENT_BLOCKED (core stops parsing its input) and keeps its argv;
 * it is appended to `postponed`.
 *
 * Release.  When the pause ends (UNPAUSE, or its end time seen by the timer
 * or before sleeping) the postponed clients move to `releasing`, and before
 * the loop sleeps each, in the order it was postponed, runs its command
 * through processCommand again (it may be postponed again by a newer pause) and
 * then what it pipelined meanwhile.  A client freed meanwhile is dropped
 * from both lists. */
#include "server/pause.h"

#include <limits.h>
#include <string.h>

#include "core/dispatch.h"
#include "core/net.h"
#include "core/server.h"
#include "ds/alloc.h"
#include "ds/util.h"
#include "repl/repl.h"
#include "script/script.h"
#include "server/multi.h"
#include "server/process.h"

enum { PAUSE_OFF = 0, PAUSE_WRITE = 1, PAUSE_ALL = 2 };

typedef struct ClientList {
    Client **items;
    size_t count, cap;
} ClientList;

static int pauseType = PAUSE_OFF;
static int failoverPause;    /* FAILOVER (bit 1) or a shutdown (bit 2) pauses writes until it ends */
static long long pauseEnd;   /* unix ms */
static ClientList postponed; /* waiting for the pause to end, in order */
static ClientList releasing; /* to run before the loop sleeps, in order */

static void listAppend(ClientList *l, Client *c) {
    if (l->count == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 8;
        l->items = xrealloc(l->items, l->cap * sizeof(Client *));
    }
    l->items[l->count++] = c;
}

/* Remove c from l (leaves the order of the others). */
static void listRemove(ClientList *l, const Client *c) {
    for (size_t i = 0; i < l->count; i++) {
        if (l->items[i] != c) continue;
        memmove(l->items + i, l->items + i + 1, (l->count - i - 1) * sizeof(Client *));
        l->count--;
        return;
    }
}

int pauseActive(void) { return pauseType != PAUSE_OFF; }

/* While clients are paused nothing may change the dataset on its own:
 * the active expiry cycle stops and lookups report expired keys absent
 * without deleting them (as Redis does, so a failover sees a frozen
 * dataset). */
static void setExpiryPaused(int paused) {
    server.expiryPaused = paused;
    /* A replica never deletes expired keys itself (src/repl sets bit 2). */
    dbNoLazyExpire = (dbNoLazyExpire & ~1) | (paused ? 1 : 0);
}

static void unpause(void) {
    pauseType = PAUSE_OFF;
    pauseEnd = 0;
    setExpiryPaused(failoverPause);
    for (size_t i = 0; i < postponed.count; i++) listAppend(&releasing, postponed.items[i]);
    postponed.count = 0;
}

static void checkPauseEnd(void) {
    if (pauseType != PAUSE_OFF && pauseEnd < mstime()) unpause();
}

/* A command a WRITE pause holds: flagged write or may-replicate, with the
 * flags a script declares in place of EVAL's and FCALL's own (a no-writes
 * script runs, one without a shebang is held), or an EXEC whose queue
 * holds such a command. */
static int isWriteLike(Client *c, Command *cmd) {
    const uint64_t w = CMD_WRITE | CMD_MAY_REPLICATE;
    if (scriptCommandFlags(c, cmd) & w) return 1;
    return strcmp(cmd->name, "exec") == 0 && (multiQueuedFlags(c) & w);
}

int pausePostponeCommand(Client *c, Command *cmd) {
    if ((pauseType | failoverPause) == PAUSE_OFF || (c->flags & (CLIENT_FAKE | CLIENT_LUA))) return 0;
    int type = pauseType == PAUSE_OFF ? PAUSE_WRITE : pauseType; /* FAILOVER pauses writes */
    if (type == PAUSE_WRITE && !isWriteLike(c, cmd)) return 0;
    c->flags |= CLIENT_BLOCKED;
    c->lastcmd = cmd; /* CLIENT LIST shows the postponed command */
    listAppend(&postponed, c);
    return 1;
}

/* Run a released client's command, then its pipelined input. */
static void resume(Client *c) {
    if (c->flags & CLIENT_MASTER) { /* a replica's link: the stream goes on */
        replicaResumeMaster(c);
        return;
    }
    c->flags &= ~CLIENT_BLOCKED;
    if (c->flags & (CLIENT_CLOSE_ASAP | CLIENT_CLOSE_AFTER_REPLY)) return;
    c->flags |= CLIENT_PROTECTED;
    if (c->argc > 0) {
        processCommand(c);
        if (!(c->flags & CLIENT_BLOCKED)) clientResetArgv(c);
    }
    netProcessInput(c);
    c->flags &= ~CLIENT_PROTECTED;
}

static void releaseClients(void) {
    /* resume() may pause again (re-postponing the rest) or free clients
     * (which removes them from `releasing`): take them one at a time. */
    while (releasing.count > 0) {
        Client *c = releasing.items[0];
        listRemove(&releasing, c);
        resume(c);
    }
}

static void beforeSleep(void) {
    checkPauseEnd();
    releaseClients();
}

static void clientGone(Client *c) {
    if (!(c->flags & CLIENT_BLOCKED)) return;
    listRemove(&postponed, c);
    listRemove(&releasing, c);
}

/* signalFailoverPause's hook: FAILOVER's own write pause, released (the
 * postponed clients run again, or wait for a CLIENT PAUSE still on) when
 * it ends. */
static void failoverPauseSet(int on) {
    failoverPause = on ? (failoverPause | 1) : (failoverPause & ~1);
    if (on) {
        setExpiryPaused(1);
    } else if (pauseType == PAUSE_OFF && !failoverPause) {
        unpause();
    }
}

/* A shutdown waiting for replicas pauses writes the same way (bit 2 of
 * failoverPause), until it is cancelled. */
void pauseShutdownWrites(int on) {
    failoverPause = on ? (failoverPause | 2) : (failoverPause & ~2);
    if (on) {
        setExpiryPaused(1);
    } else if (pauseType == PAUSE_OFF && !failoverPause) {
        unpause();
    }
}

void pauseInit(void) {
    serverAddFailoverPauseHook(failoverPauseSet);
    serverAddCronHook(checkPauseEnd);
    serverAddBeforeSleepHook(beforeSleep);
    clientAddFreeHook(clientGone);
}

/* CLIENT PAUSE timeout [WRITE|ALL] */
void clientPauseCommand(Client *c) {
    if (c->argc > 4) {
        replyErrorFormat(c, "ERR unknown subcommand or wrong number of arguments for '%s'. Try CLIENT HELP.",
                         c->argv[1]);
        return;
    }
    int type = PAUSE_ALL;
    if (c->argc == 4) {
        if (argIs(c->argv[3], "write"))
            type = PAUSE_WRITE;
        else if (!argIs(c->argv[3], "all")) {
            replyError(c, "ERR CLIENT PAUSE mode must be WRITE or ALL");
            return;
        }
    }
    long long ms;
    if (getLongLongOrReply(c, c->argv[2], &ms, "ERR timeout is not an integer or out of range") == -1) return;
    if (ms < 0) {
        replyError(c, "ERR timeout is negative");
        return;
    }
    long long now = serverNowMs();
    /* A timeout of 0 adds nothing to 0, and Redis 7.0 lets now + timeout
     * wrap to a negative end: either way the end time is not extended. */
    if (ms > 0) ms = ms > LLONG_MAX - now ? 0 : ms + now;
    if (type > pauseType) pauseType = type;
    if (ms > pauseEnd) pauseEnd = ms;
    setExpiryPaused(1);
    replyOk(c);
}

void clientUnpauseCommand(Client *c) {
    unpause();
    replyOk(c);
}
