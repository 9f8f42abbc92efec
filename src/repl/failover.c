/* failover.c -- FAILOVER [TO host port [FORCE]] [ABORT] [TIMEOUT ms]: a
 * primary hands its role to one of its replicas without losing writes.
 *
 * waiting-for-sync: writes are paused (signalFailoverPause) while the
 * target (or, without TO, the first replica to do so) acknowledges our
 * whole offset; no PINGs are added meanwhile.  failover-in-progress: we
 * become a replica of the target and send it "PSYNC <our replid> <offset+1>
 * FAILOVER"; the target, when that replid is its own, promotes itself
 * first, so the PSYNC continues partially under its new id.  A +CONTINUE
 * or +FULLRESYNC ends the failover (writes resume, and get READONLY
 * here); a refusal, a broken link or the timeout (without FORCE) aborts it
 * and we are a primary again. */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/log.h"
#include "core/server.h"
#include "ds/alloc.h"
#include "ds/util.h"
#include "repl/repl.h"
#include "repl/repl_int.h"

static struct {
    int state;       /* FAILOVER_* */
    char *host;      /* target, NULL: any replica that catches up */
    int port;
    int force;
    long long endMs; /* 0: no timeout */
} fo;

int failoverState(void) { return fo.state; }

const char *failoverStateName(void) {
    return fo.state == FAILOVER_WAIT_SYNC ? "waiting-for-sync"
           : fo.state == FAILOVER_IN_PROGRESS ? "failover-in-progress" : "no-failover";
}

static void clearState(void) {
    fo.state = FAILOVER_NONE;
    xfree(fo.host);
    fo.host = NULL;
    fo.force = 0;
    fo.endMs = 0;
    signalFailoverPause(0);
}

void failoverAbort(const char *why) {
    if (fo.state == FAILOVER_NONE) return;
    if (fo.host) serverLog(LL_NOTICE, "FAILOVER to %s:%d aborted: %s", fo.host, fo.port, why);
    else serverLog(LL_NOTICE, "FAILOVER to any replica aborted: %s", why);
    if (fo.state == FAILOVER_IN_PROGRESS) replicaUnsetPrimary();
    clearState();
}

void failoverPsyncDone(int accepted) {
    if (fo.state != FAILOVER_IN_PROGRESS) return;
    if (accepted) {
        serverLog(LL_NOTICE, "Failover target %s:%d accepted the PSYNC: the failover is complete", fo.host, fo.port);
        clearState();
    } else {
        failoverAbort("Failover target rejected psync request");
    }
}

/* The replica at host:port (its announced address), or NULL. */
static Client *findReplica(const char *host, int port) {
    for (int i = 0; i < repl.nreplicas; i++) {
        Client *c = repl.replicas[i];
        Replica *r = c->replState;
        char ip[64];
        if (r->port == port && !strcasecmp(replReplicaIp(c, ip, sizeof(ip)), host)) return c;
    }
    return NULL;
}

static void start(void) {
    fo.state = FAILOVER_IN_PROGRESS;
    replicaSetPrimary(fo.host, fo.port);
}

/* Each loop turn and timer tick while waiting for the target. */
void failoverCron(void) {
    if (fo.state != FAILOVER_WAIT_SYNC) return;
    if (fo.endMs && server.time.nowMs >= fo.endMs) {
        if (fo.force && fo.host) {
            serverLog(LL_NOTICE, "FAILOVER to %s:%d time out exceeded, failing over.", fo.host, fo.port);
            start();
        } else {
            failoverAbort("Replica never caught up before timeout");
        }
        return;
    }
    Client *target = fo.host ? findReplica(fo.host, fo.port) : NULL;
    if (!fo.host) {
        for (int i = 0; i < repl.nreplicas && !target; i++) {
            Replica *r = repl.replicas[i]->replState;
            if (r->state == RSTATE_ONLINE && r->ackOff == repl.offset) target = repl.replicas[i];
        }
    }
    if (!target || ((Replica *)target->replState)->ackOff != repl.offset) return;
    if (!fo.host) {
        char ip[64];
        fo.host = xstrdup(replReplicaIp(target, ip, sizeof(ip)));
        fo.port = ((Replica *)target->replState)->port;
    }
    serverLog(LL_NOTICE, "Failover target %s:%d is synced, failing over.", fo.host, fo.port);
    start();
}

/* FAILOVER [TO host port [FORCE]] [ABORT] [TIMEOUT ms] */
void failoverCommand(Client *c) {
    const char *host = NULL;
    long port = 0;
    long long timeout = 0;
    int force = 0, abortReq = 0;
    for (int j = 1; j < c->argc; j++) {
        if (argIs(c->argv[j], "to") && !host && j + 2 < c->argc) {
            host = c->argv[++j];
            if (getLongOrReply(c, c->argv[++j], &port, NULL) < 0) return;
        } else if (argIs(c->argv[j], "timeout") && !timeout && j + 1 < c->argc) {
            if (getLongLongOrReply(c, c->argv[++j], &timeout, NULL) < 0) return;
            if (timeout <= 0) {
                replyError(c, "ERR FAILOVER timeout must be greater than 0");
                return;
            }
        } else if (argIs(c->argv[j], "force") && !force) {
            force = 1;
        } else if (argIs(c->argv[j], "abort") && !abortReq) {
            abortReq = 1;
        } else {
            replyErrorSyntax(c);
            return;
        }
    }
    if (abortReq) {
        if (host || timeout || force) {
            replyErrorSyntax(c);
            return;
        }
        if (fo.state == FAILOVER_NONE) {
            replyError(c, "ERR No failover in progress.");
            return;
        }
        failoverAbort("Failover manually aborted");
        replyOk(c);
        return;
    }
    if (server.isReplica) {
        replyError(c, "ERR FAILOVER is not valid when server is a replica.");
        return;
    }
    if (repl.nreplicas == 0) {
        replyError(c, "ERR FAILOVER requires connected replicas.");
        return;
    }
    if (force && (!timeout || !host)) {
        replyError(c, "ERR FAILOVER with force option requires both a timeout and target HOST and IP.");
        return;
    }
    if (fo.state != FAILOVER_NONE) {
        replyError(c, "ERR FAILOVER already in progress.");
        return;
    }
    if (host) {
        Client *r = findReplica(host, (int)port);
        if (!r) {
            replyError(c, "ERR FAILOVER target HOST and PORT is not a replica.");
            return;
        }
        if (((Replica *)r->replState)->state != RSTATE_ONLINE) {
            replyError(c, "ERR FAILOVER target replica is not online.");
            return;
        }
        fo.host = xstrdup(host);
        fo.port = (int)port;
        serverLog(LL_NOTICE, "FAILOVER requested to %s:%ld.", host, port);
    } else {
        serverLog(LL_NOTICE, "FAILOVER requested to any replica.");
    }
    fo.endMs = timeout ? deadlineAfter(server.time.nowMs, timeout) : 0;
    fo.force = force;
    fo.state = FAILOVER_WAIT_SYNC;
    signalFailoverPause(1);
    replyOk(c);
}
