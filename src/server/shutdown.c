/* shutdown.c -- SHUTDOWN and the signals' shutdown (shutdown.h).
 *
 * States: idle (server.shutdownMs == 0), or waiting for replicas until
 * server.shutdownMs (unix ms), writes paused (pause.c's shutdown pause) and
 * every SHUTDOWN caller blocked in `waiting`.  The wait ends, from the
 * timer, when every replica acknowledged master_repl_offset or the time is
 * up: then the steps before exiting run (exitSteps: the debugger's
 * forked sessions are killed, as Redis does, then persistence saves) and the process exits;
 * if the save fails, or on SHUTDOWN ABORT, the shutdown is cancelled: the
 * blocked callers get Redis's error and writes resume.
 * A signal only sets server.shutdownAsap; the timer starts the shutdown
 * with the shutdown-on-sigterm / -sigint flags. */
#include "server/shutdown.h"

#include <limits.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "core/log.h"
#include "core/net.h"
#include "core/server.h"
#include "ds/alloc.h"
#include "ds/util.h"
#include "persist/persist.h"
#include "repl/repl.h"
#include "script/ldb.h"
#include "script/script.h"
#include "server/pause.h"

static int shutdownFlags;  /* SHUTDOWN_* of the shutdown under way */
static Client **waiting;   /* SHUTDOWN callers blocked while waiting */
static int nwaiting;

/* The replicas' acknowledgements, or NULL when there are none (*n 0).
 * Caller frees. */
static ReplReplicaAck *replicaAcks(int *n, long long *offset) {
    *n = replReplicaAcks(offset, NULL, 0);
    if (*n == 0) return NULL;
    ReplReplicaAck *a = xmalloc(sizeof(*a) * (size_t)*n);
    replReplicaAcks(offset, a, *n);
    return a;
}

/* Every replica acknowledged the whole stream (true without replicas). */
static int readyToShutdown(void) {
    int n, ok = 1;
    long long off;
    ReplReplicaAck *a = replicaAcks(&n, &off);
    for (int i = 0; i < n; i++)
        if (a[i].ackOff != off) ok = 0;
    xfree(a);
    return ok;
}

/* Redis's lines: each lagging replica, then how many are in sync. */
static void logReplicas(void) {
    int n, lagging = 0;
    long long off;
    ReplReplicaAck *a = replicaAcks(&n, &off);
    for (int i = 0; i < n; i++) {
        if (a[i].ackOff == off) continue;
        lagging++;
        long lag = !strcmp(a[i].state, "online") ? (long)(server.time.nowMs / 1000 - a[i].ackMs / 1000) : 0;
        serverLog(LL_WARNING, "Lagging replica %s reported offset %lld behind master, lag=%ld, state=%s.", a[i].name,
                  off - a[i].ackOff, lag, a[i].state);
    }
    if (n > 0) serverLog(LL_NOTICE, "%d of %d replicas are in sync when shutting down.", n - lagging, n);
    xfree(a);
}

/* The blocked SHUTDOWN callers get Redis's error and go on with their
 * pipelined input. */
static void replyWaiting(void) {
    Client **list = waiting;
    int n = nwaiting;
    waiting = NULL;
    nwaiting = 0;
    for (int i = 0; i < n; i++) {
        Client *c = list[i];
        c->flags &= ~CLIENT_BLOCKED;
        replyError(c, "ERR Errors trying to SHUTDOWN. Check logs.");
        /* The caller whose SHUTDOWN runs now is reset by the dispatcher. */
        if (c != server.net.current) clientResetArgv(c);
    }
    for (int i = 0; i < n; i++)
        if (list[i] != server.net.current && sdsLen(list[i]->querybuf) > list[i]->qbPos) netProcessInput(list[i]);
    xfree(list);
}

static void cancelShutdown(void) {
    server.shutdownAsap = 0;
    server.shutdownMs = 0;
    shutdownFlags = 0;
    replyWaiting();
    pauseShutdownWrites(0);
}

/* What every shutdown does before exiting, in this order (direct calls,
 * no hook): the forked SCRIPT DEBUG sessions are killed (first, as Redis
 * does, so also when the save then refuses); persistence kills a save
 * child, flushes the AOF and saves the final snapshot per the flags, and
 * may refuse (-1: stay up, logged).  0: go on exiting. */
static int exitSteps(int flags) {
    ldbKillForkedSessions();
    if (persistPrepareShutdown(flags) < 0) return -1;
    return 0;
}

/* Saves (per the flags) and exits; returns -1 after logging and
 * cancelling when the save failed. */
static int finishShutdown(void) {
    logReplicas();
    if (exitSteps(shutdownFlags) < 0) {
        serverLog(LL_WARNING, "Errors trying to shut down the server. Check the logs for more information.");
        cancelShutdown();
        return -1;
    }
    netHandlePendingWrites(); /* best effort: what the replicas still have to receive */
    serverFireEvent(SERVER_EVENT_SHUTDOWN, 0, NULL, 0, 0);
    serverShutdown(0);
}

/* Starts a shutdown: exits at once (no return) unless replicas lag, in
 * which case it waits (-1); -1 too when one is already under way or the
 * save failed. */
static int prepareShutdown(int flags) {
    if (server.shutdownMs) return -1;
    shutdownFlags = flags;
    serverLog(LL_WARNING, "User requested shutdown...");
    if (!(flags & SHUTDOWN_NOW) && server.cfg.shutdownTimeout != 0 && !readyToShutdown()) {
        server.shutdownMs = server.time.nowMs + (long long)server.cfg.shutdownTimeout * 1000;
        if (!pauseActive()) replRequestAcks();
        pauseShutdownWrites(1);
        serverLog(LL_NOTICE, "Waiting for replicas before shutting down.");
        return -1;
    }
    return finishShutdown();
}

/* Redis's abortShutdown: 0 when a shutdown was under way or requested by
 * a signal (now forgotten), -1 when there was none. */
static int abortShutdown(void) {
    if (server.shutdownMs) cancelShutdown();
    else if (server.shutdownAsap) server.shutdownAsap = 0;
    else return -1;
    serverLog(LL_NOTICE, "Shutdown manually aborted.");
    return 0;
}

int shutdownForRestart(void) {
    if (server.shutdownMs) return -1;
    serverLog(LL_WARNING, "User requested shutdown...");
    logReplicas();
    if (exitSteps(SHUTDOWN_NOW) < 0) {
        serverLog(LL_WARNING, "Errors trying to shut down the server. Check the logs for more information.");
        return -1;
    }
    netHandlePendingWrites();
    netCloseListeners();
    if (server.cfg.pidfile && server.cfg.pidfile[0]) {
        serverLog(LL_NOTICE, "Removing the pid file.");
        unlink(server.cfg.pidfile);
    }
    serverLog(LL_WARNING, "Cairn is now ready to exit, bye bye...");
    return 0;
}

static void shutdownCron(void) {
    if (server.shutdownAsap && !server.shutdownMs) {
        int sig = server.shutdownAsap;
        int flags = sig == SIGINT ? server.cfg.shutdownOnSigint : server.cfg.shutdownOnSigterm;
        if (prepareShutdown(flags) == -1 && !server.shutdownMs) {
            /* the save failed: stay up */
            server.shutdownAsap = 0;
        }
    } else if (server.shutdownMs) {
        if (server.time.nowMs >= server.shutdownMs || readyToShutdown()) finishShutdown();
    }
}

static void waitingClientGone(Client *c) {
    if (!(c->flags & CLIENT_BLOCKED)) return;
    for (int i = 0; i < nwaiting; i++) {
        if (waiting[i] != c) continue;
        waiting[i] = waiting[--nwaiting];
        return;
    }
}

void shutdownCommand(Client *c) {
    int flags = 0, abort = 0;
    for (int j = 1; j < c->argc; j++) {
        if (argIs(c->argv[j], "nosave")) flags |= SHUTDOWN_NOSAVE;
        else if (argIs(c->argv[j], "save")) flags |= SHUTDOWN_SAVE;
        else if (argIs(c->argv[j], "now")) flags |= SHUTDOWN_NOW;
        else if (argIs(c->argv[j], "force")) flags |= SHUTDOWN_FORCE;
        else if (argIs(c->argv[j], "abort")) abort = 1;
        else {
            replyErrorSyntax(c);
            return;
        }
    }
    if ((abort && flags) || ((flags & SHUTDOWN_NOSAVE) && (flags & SHUTDOWN_SAVE))) {
        replyErrorSyntax(c);
        return;
    }
    if (abort) {
        if (abortShutdown() == 0) replyOk(c);
        else replyError(c, "ERR No shutdown in progress.");
        return;
    }
    /* Past busy-reply-threshold a script holds the server: only NOSAVE
     * may end it. */
    const char *busy = scriptBusyError();
    if (busy && !(flags & SHUTDOWN_NOSAVE)) {
        replyError(c, busy);
        return;
    }
    /* The timer does not run under a busy script: no waiting then. */
    if (busy) flags |= SHUTDOWN_NOW;
    /* Blocked until the shutdown ends: it exits, or cancels (the error). */
    c->flags |= CLIENT_BLOCKED;
    waiting = xrealloc(waiting, sizeof(Client *) * (size_t)(nwaiting + 1));
    waiting[nwaiting++] = c;
    prepareShutdown(flags);
}

void shutdownInit(void) {
    serverAddCronHook(shutdownCron);
    clientAddFreeHook(waitingClientGone);
}

/* ------------------------------------------------------------------------ */
/* Configuration                                                             */
/* ------------------------------------------------------------------------ */

/* shutdown-on-sigterm / shutdown-on-sigint: one or more of default, save,
 * nosave, now, force (as flags, SHUTDOWN_* of server.h; default is none),
 * SAVE and NOSAVE not together; shown in the enum's order. */
static int setShutdownOnSignal(ConfigDef *d, sds *argv, int argc, const char **err) {
    int flags = 0;
    if (argc == 0) return configEnumFind(d, "", err) ? 0 : -1;
    for (int i = 0; i < argc; i++) {
        const ConfigEnum *e = configEnumFind(d, argv[i], err);
        if (!e) return -1;
        flags |= e->value;
    }
    if ((flags & SHUTDOWN_SAVE) && (flags & SHUTDOWN_NOSAVE)) {
        *err = "shutdown options SAVE and NOSAVE can't be used simultaneously";
        return -1;
    }
    *(int *)d->var = flags;
    return 0;
}

static sds getShutdownOnSignal(const ConfigDef *d) {
    int flags = *(const int *)d->var;
    if (!flags) return sdsNew("default");
    sds s = sdsEmpty();
    for (const ConfigEnum *e = d->enums; e->name; e++)
        if (e->value && (flags & e->value)) s = sdsCatPrintf(s, "%s%s", sdsLen(s) ? " " : "", e->name);
    return s;
}

static const ConfigEnum shutdownOnSignalEnum[] = {{"default", 0},
                                                  {"save", SHUTDOWN_SAVE},
                                                  {"nosave", SHUTDOWN_NOSAVE},
                                                  {"now", SHUTDOWN_NOW},
                                                  {"force", SHUTDOWN_FORCE},
                                                  {NULL, 0}};

static ConfigDef shutdownConfig[] = {
    CONFIG_SPECIAL("shutdown-on-sigint", NULL, CF_MULTI_ARG, "default", setShutdownOnSignal, getShutdownOnSignal,
                   .var = &server.cfg.shutdownOnSigint, .enums = shutdownOnSignalEnum),
    CONFIG_SPECIAL("shutdown-on-sigterm", NULL, CF_MULTI_ARG, "default", setShutdownOnSignal, getShutdownOnSignal,
                   .var = &server.cfg.shutdownOnSigterm, .enums = shutdownOnSignalEnum),
    CONFIG_INT("shutdown-timeout", NULL, 0, server.cfg.shutdownTimeout, 0, INT_MAX, "10"),
};

void shutdownRegisterConfig(void) { configRegister(shutdownConfig, CONFIG_COUNT_OF(shutdownConfig)); }
