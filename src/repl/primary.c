/* primary.c -- the primary side: SYNC/PSYNC, REPLCONF, full syncs, the
 * replicas' liveness, WAIT, WAITAOF (Redis 7.2: the local AOF's fsync and
 * the replicas' FACK offsets) and the good-replicas count.
 *
 * A full sync is one forked child at a time.  Diskless
 * (repl-diskless-sync yes, the default): after repl-diskless-sync-delay
 * seconds (or as soon as repl-diskless-sync-max-replicas wait) the child
 * writes the RDB to a pipe; the parent copies it to each replica after
 * "$EOF:<40-byte mark>\r\n" and ends with the mark; the stream produced
 * meanwhile waits in the shared buffer (repl.c: each replica's place is
 * the fork's offset) until its first REPLCONF ACK (the replica cannot
 * tell the mark from what would follow it).  On disk: the child saves
 * dbfilename; the parent then sends it as "$<len>\r\n<bytes>" and the
 * held stream right after.  The parent
 * reads the pipe or the file only while every replica of the sync has
 * less than PUMP_HIGH bytes of output queued, so memory stays bounded.
 * Under `cairn-snapshot inline` there is no child: the disk sync's file,
 * or the diskless sync's RDB (into the members' output, the walk pausing
 * at the same PUMP_HIGH), is written by the main thread between commands
 * (persist/snapshot.h); job.pid is then our own pid, never signalled. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/conn.h"
#include "core/dispatch.h"
#include "core/log.h"
#include "core/net.h"
#include "core/server.h"
#include "ds/alloc.h"
#include "ds/rand.h"
#include "ds/util.h"
#include "persist/aof.h"
#include "persist/persist.h"
#include "persist/rdb.h"
#include "persist/snapshot.h"
#include "proto/resp_write.h"
#include "repl/repl.h"
#include "repl/repl_int.h"

/* The replica's name for a log line (a buffer that lives to the end of
 * the statement). */
#define RNAME(c) replReplicaName((c), (char[96]){0}, 96)

#define PUMP_HIGH (8 * 1024 * 1024)
#define PUMP_CHUNK (64 * 1024)


/* The full sync in progress. */
static struct {
    pid_t pid;         /* -1: none */
    int inlineSave;    /* a disk sync's file written in process (snapshot.h): pid is ours */
    int disk;
    int srcFd;         /* the pipe (diskless) or, once saved, the file */
    int sending;       /* disk: the file is being sent */
    int throttled;     /* diskless: the pipe's read event is off */
    char mark[41];
    long long offset;  /* the stream's offset at the fork (+FULLRESYNC) */
    Client **members;
    int n;
} job = {.pid = -1, .srcFd = -1};

/* Clients blocked in WAIT. */
typedef struct Waiter {
    Client *c;
    long long offset, deadlineMs;
    long numreplicas;
    /* WAITAOF: numlocal (0/1) and the local AOF's fed bytes to see fsynced;
     * offset is then compared with the replicas' FACK offsets. */
    int aof;
    long numlocal;
    long long aofTarget;
} Waiter;
static Waiter *waiters;
static int nwaiters;
/* Taken out of WAIT by CLIENT UNBLOCK: what they pipelined runs before the
 * loop sleeps (not inside CLIENT UNBLOCK). */
static Client **unblocked;
static int nunblocked;

static int attachToDiskSave(Client *c);

static Replica *replicaOf(Client *c) {
    if (!c->replState) {
        Replica *r = xcalloc(sizeof(Replica));
        c->replState = r;
    }
    return c->replState;
}

static void addReplica(Client *c) {
    repl.replicas = xrealloc(repl.replicas, sizeof(Client *) * (size_t)(repl.nreplicas + 1));
    repl.replicas[repl.nreplicas++] = c;
    c->flags |= CLIENT_SLAVE;
    /* repl-disable-tcp-nodelay: fewer, bigger packets to the replica (not
     * critical if it fails). */
    if (server.cfg.replDisableTcpNodelay && !(c->flags & CLIENT_UNIX_SOCKET)) connSetNoDelay(c->conn, 0);
}

void primaryRefreshGoodReplicas(void) {
    int good = 0;
    for (int i = 0; i < repl.nreplicas; i++) {
        Replica *r = repl.replicas[i]->replState;
        if (r->state == RSTATE_ONLINE && (server.time.nowMs - r->ackMs) / 1000 <= server.cfg.minReplicasMaxLag) good++;
    }
    repl.goodReplicas = good;
}

/* --- partial resync --- */

/* +CONTINUE when the backlog covers psync offset `from` under id. */
static int tryPartial(Client *c, const char *id, const sds offArg) {
    long long from;
    if (!stringToLongLong(offArg, sdsLen(offArg), &from)) return -1;
    if (strcasecmp(id, repl.replid) != 0 &&
        (strcasecmp(id, repl.replid2) != 0 || from > repl.secondOffset)) {
        if (id[0] != '?') {
            if (strcasecmp(id, repl.replid) && strcasecmp(id, repl.replid2))
                serverLog(LL_NOTICE, "Partial resynchronization not accepted: Replication ID mismatch (Replica asked for '%s', my replication IDs are '%s' and '%s')", id, repl.replid, repl.replid2);
            else
                serverLog(LL_NOTICE, "Partial resynchronization not accepted: Requested offset for second ID was %lld, but I can reply up to %lld", from, repl.secondOffset);
        } else {
            serverLog(LL_NOTICE, "Full resync requested by replica %s", RNAME(c));
        }
        return -1;
    }
    if (!repl.backlogOn || from < repl.backlogOff || from > repl.offset + 1) {
        serverLog(LL_NOTICE, "Unable to partial resync with replica %s for lack of backlog (Replica request was: %lld).", RNAME(c), from);
        return -1;
    }
    Replica *r = replicaOf(c);
    r->state = RSTATE_ONLINE;
    r->ackMs = server.time.nowMs;
    addReplica(c);
    serverFireEvent(SERVER_EVENT_REPLICA_CHANGE, 0, NULL, 0, 0); /* online */
    char line[64];
    int n = (r->capa & CAPA_PSYNC2) ? snprintf(line, sizeof(line), "+CONTINUE %s\r\n", repl.replid)
                                    : snprintf(line, sizeof(line), "+CONTINUE\r\n");
    replyRaw(c, line, (size_t)n);
    long long sent = repl.offset + 1 - from;
    replReplicaSetPosition(r, from);
    replReplicaPump(c);
    serverLog(LL_NOTICE, "Partial resynchronization request from %s accepted. Sending %lld bytes of backlog starting from offset %lld.", RNAME(c), sent, from);
    repl.statPartialOk++;
    primaryRefreshGoodReplicas();
    return 0;
}

/* SYNC | PSYNC replid offset */
void syncCommand(Client *c) {
    if (c->flags & CLIENT_SLAVE) return;
    if (c->argc > 3 && argIs(c->argv[0], "psync") && argIs(c->argv[3], "failover")) {
        if (strcasecmp(c->argv[1], repl.replid) != 0) {
            replyError(c, "ERR PSYNC FAILOVER replid must match my replid.");
            return;
        }
        /* Our primary hands us its role: promote, then continue it. */
        if (server.isReplica) replicaUnsetPrimary();
        serverLog(LL_NOTICE, "Failover request received for replid %s from client %s", c->argv[1], c->addr);
    }
    if (failoverState() != FAILOVER_NONE) {
        replyError(c, "-NOMASTERLINK Can't SYNC while failing over");
        return;
    }
    if (server.isReplica && repl.link != LINK_CONNECTED) {
        replyError(c, "NOMASTERLINK Can't SYNC while not connected with my master");
        return;
    }
    if (clientHasPendingReplies(c)) {
        replyError(c, "ERR SYNC and PSYNC are invalid with pending output");
        return;
    }
    /* A filtered RDB goes only over the socket (never into dbfilename). */
    if (c->replState && ((Replica *)c->replState)->exclude && !(((Replica *)c->replState)->capa & CAPA_EOF)) {
        replyError(c, "ERR Filtered replica requires EOF capability");
        return;
    }
    serverLog(LL_NOTICE, "Replica %s asks for synchronization", RNAME(c));
    Replica *r = replicaOf(c);
    if (argIs(c->argv[0], "psync")) {
        if (tryPartial(c, c->argv[1], c->argv[2]) == 0) return;
        if (c->argv[1][0] != '?') repl.statPartialErr++;
    } else {
        r->preSync = 1;
    }
    repl.statFullSyncs++;
    r->state = RSTATE_WAIT_BGSAVE_START;
    r->waitSinceMs = server.time.nowMs;
    r->ackMs = server.time.nowMs;
    addReplica(c);
    if (repl.nreplicas == 1 && !repl.backlogOn) {
        replNewId(repl.replid);
        memset(repl.replid2, '0', 40);
        repl.secondOffset = -1;
        replBacklogCreate();
        serverLog(LL_NOTICE, "Replication backlog created, my new replication IDs are '%s' and '%s'", repl.replid, repl.replid2);
    }
    if (job.pid != -1 && !job.disk) {
        serverLog(LL_NOTICE, "Current BGSAVE has socket target. Waiting for next BGSAVE for SYNC");
    } else if (job.pid != -1 || persistChildType() == PERSIST_CHILD_RDB) {
        if (attachToDiskSave(c)) serverLog(LL_NOTICE, "Waiting for end of BGSAVE for SYNC");
        else serverLog(LL_NOTICE, "Can't attach the replica to the current BGSAVE. Waiting for next BGSAVE for SYNC");
    } else if (server.cfg.replDisklessSync && (r->capa & CAPA_EOF) && server.cfg.replDisklessSyncDelay) {
        serverLog(LL_NOTICE, "Delay next BGSAVE for diskless SYNC");
    } else if (persistChildActive()) {
        serverLog(LL_NOTICE, "No BGSAVE in progress, but another BG operation is active. BGSAVE for replication delayed");
    }
    /* The cron starts the sync when no other child runs (one at a time). */
}

/* REPLCONF <option> <value> ... */
void replconfCommand(Client *c) {
    if (c->argc % 2 == 0) {
        replyErrorSyntax(c);
        return;
    }
    for (int j = 1; j < c->argc; j += 2) {
        sds opt = c->argv[j], val = c->argv[j + 1];
        if (argIs(opt, "listening-port")) {
            long port;
            if (getRangeLongOrReply(c, val, 0, 65535, &port, NULL) < 0) return;
            replicaOf(c)->port = (int)port;
        } else if (argIs(opt, "ip-address")) {
            if (sdsLen(val) >= sizeof(((Replica *)0)->ip)) {
                replyErrorFormat(c, "ERR REPLCONF ip-address provided by replica instance is too long: %zd bytes", sdsLen(val));
                return;
            }
            memcpy(replicaOf(c)->ip, val, sdsLen(val) + 1);
        } else if (argIs(opt, "capa")) {
            if (argIs(val, "eof")) replicaOf(c)->capa |= CAPA_EOF;
            else if (argIs(val, "psync2")) replicaOf(c)->capa |= CAPA_PSYNC2;
        } else if (argIs(opt, "ack")) {
            if (!(c->flags & CLIENT_SLAVE)) return;
            long long off;
            if (!stringToLongLong(val, sdsLen(val), &off)) return;
            Replica *r = c->replState;
            if (off > r->ackOff) r->ackOff = off;
            r->ackMs = server.time.nowMs;
            /* Redis 7.2's replicas add FACK <aof offset> (a Redis 7.0
             * primary stops reading after the ACK, so it ignores it). */
            long long fack;
            if (j + 3 < c->argc && argIs(c->argv[j + 2], "fack") &&
                stringToLongLong(c->argv[j + 3], sdsLen(c->argv[j + 3]), &fack) && fack > r->aofAckOff)
                r->aofAckOff = fack;
            if (r->onlineOnAck && r->state == RSTATE_ONLINE) {
                r->onlineOnAck = 0;
                replReplicaPump(c);
                serverLog(LL_NOTICE, "Synchronization with replica %s succeeded", RNAME(c));
            }
            return; /* no reply */
        } else if (argIs(opt, "getack")) {
            if (server.isReplica && repl.master) {
                aofFlushPending(); /* so that the FACK covers what was applied */
                replicaSendAck();
            }
            return;
        } else if (argIs(opt, "rdb-only")) {
            long v;
            if (getRangeLongOrReply(c, val, 0, 1, &v, NULL) < 0) return;
            replicaOf(c)->rdbOnly = (int)v;
        } else if (argIs(opt, "rdb-filter-only")) {
            /* Include filters for the RDB: only "functions" exists; ""
             * gives an RDB with neither keys nor functions. */
            int n;
            sds *f = sdsSplitArgs(val, &n);
            if (!f) {
                replyError(c, "ERR Missing rdb-filter-only values");
                return;
            }
            int exclude = RDB_EXCLUDE_DATA | RDB_EXCLUDE_FUNCTIONS;
            for (int k = 0; k < n; k++) {
                if (argIs(f[k], "functions")) {
                    exclude &= ~RDB_EXCLUDE_FUNCTIONS;
                } else {
                    replyErrorFormat(c, "ERR Unsupported rdb-filter-only option: %s", f[k]);
                    sdsFreeSplitRes(f, n);
                    return;
                }
            }
            sdsFreeSplitRes(f, n);
            replicaOf(c)->exclude = exclude;
        } else {
            replyErrorFormat(c, "ERR Unrecognized REPLCONF option: %s", opt);
            return;
        }
    }
    replyOk(c);
}

/* A replica arriving while a disk save for others runs joins it, as
 * Redis does: it gets the same +FULLRESYNC offset, a copy of the stream
 * held for a member since the fork, and the file when it is saved.
 * Returns 0 when it must wait for the next sync (a diskless one, or the
 * file already on its way). */
static int attachToDiskSave(Client *c) {
    if (job.pid == -1 || !job.disk || job.sending || ((Replica *)c->replState)->exclude) return 0;
    Replica *src = NULL;
    for (int i = 0; i < job.n && !src; i++) {
        Replica *m = job.members[i]->replState;
        if (m->state == RSTATE_WAIT_BGSAVE_END && m->blk) src = m;
    }
    if (!src) return 0;
    Replica *r = c->replState;
    job.members = xrealloc(job.members, sizeof(Client *) * (size_t)(job.n + 1));
    job.members[job.n++] = c;
    r->state = RSTATE_WAIT_BGSAVE_END;
    replReplicaSetPosition(r, src->blk->off + (long long)src->pos);
    if (!r->preSync) {
        char line[96];
        int n = snprintf(line, sizeof(line), "+FULLRESYNC %s %lld\r\n", repl.replid, job.offset);
        replyRaw(c, line, (size_t)n);
    }
    return 1;
}

/* --- full sync --- */

/* Returns 1 when c was a member of the sync. */
static int jobRemove(Client *c) {
    for (int i = 0; i < job.n; i++) {
        if (job.members[i] != c) continue;
        job.members[i] = job.members[--job.n];
        return 1;
    }
    return 0;
}

static void pipeReadable(EventLoop *loop, int fd, void *data, int mask);

static void closeSource(void);

/* The last replica of a diskless sync left: the child is killed (the timer
 * reaps it), as Redis does. */
static void cancelDiskless(void) {
    if (job.inlineSave) {
        serverLog(LL_WARNING, "Diskless rdb transfer, last replica dropped, stopping the in-process save.");
        snapshotInlineAbort(); /* syncStreamDone ends the job */
        return;
    }
    if (job.pid != -1 && job.srcFd != -1) {
        serverLog(LL_WARNING, "Diskless rdb transfer, last replica dropped, killing fork child.");
        kill(job.pid, SIGUSR1);
    }
    closeSource();
}

static void closeSource(void) {
    if (job.srcFd == -1) return;
    if (!job.disk && !job.throttled) eventDel(server.loop, job.srcFd, EV_READABLE);
    close(job.srcFd);
    job.srcFd = -1;
}

static void jobEnd(void) {
    closeSource();
    xfree(job.members);
    job.members = NULL;
    job.n = 0;
    job.pid = -1;
    job.sending = job.throttled = 0;
}

/* The sync ended: its replicas go online (diskless: once they ACK) or,
 * when it failed, are dropped. */
static void jobFinish(int ok) {
    for (int i = 0; i < job.n; i++) {
        Client *c = job.members[i];
        Replica *r = c->replState;
        if (!ok) {
            clientFreeAsync(c);
            continue;
        }
        if (!job.disk) replyRaw(c, job.mark, 40);
        if (r->rdbOnly) {
            /* It asked for the RDB alone: no stream, closed once sent. */
            replReplicaDropPosition(r);
            r->state = RSTATE_SEND_BULK;
            c->flags |= CLIENT_CLOSE_AFTER_REPLY;
            netMarkPendingWrite(c);
            continue;
        }
        r->state = RSTATE_ONLINE;
        r->ackMs = server.time.nowMs;
        r->onlineOnAck = !job.disk;
        serverFireEvent(SERVER_EVENT_REPLICA_CHANGE, 0, NULL, 0, 0); /* online */
        if (job.disk) {
            replReplicaPump(c);
            serverLog(LL_NOTICE, "Synchronization with replica %s succeeded", RNAME(c));
        } else {
            serverLog(LL_NOTICE, "Streamed RDB transfer with replica %s succeeded (socket). Waiting for REPLCONF ACK from slave to enable streaming", RNAME(c));
        }
    }
    int disk = job.disk;
    jobEnd();
    if (disk && ok) persistRemoveSyncFile("Removing the RDB file used to feed replicas in a persistence-less instance");
    primaryRefreshGoodReplicas();
}

static int membersBelowHigh(void) {
    for (int i = 0; i < job.n; i++)
        if (job.members[i]->replyBytes >= PUMP_HIGH) return 0;
    return 1;
}

/* Copy source bytes to the replicas of the sync while they keep up. */
static void pump(void) {
    char buf[PUMP_CHUNK];
    while (job.srcFd != -1 && (job.disk ? job.sending : 1)) {
        if (job.n == 0) { /* nobody left to send it to */
            if (job.disk) jobEnd();
            else cancelDiskless();
            return;
        }
        if (!membersBelowHigh()) {
            if (!job.disk && !job.throttled) {
                eventDel(server.loop, job.srcFd, EV_READABLE);
                job.throttled = 1;
            }
            return;
        }
        ssize_t n = read(job.srcFd, buf, sizeof(buf));
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && errno == EAGAIN) return;
        if (n > 0) {
            for (int i = 0; i < job.n; i++) replyRaw(job.members[i], buf, (size_t)n);
            continue;
        }
        /* End of the RDB (or a read error). */
        if (job.disk) {
            jobFinish(n == 0);
            return;
        }
        int st = 0;
        closeSource();
        while (waitpid(job.pid, &st, 0) < 0 && errno == EINTR) {
        }
        int ok = n == 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0;
        if (ok) {
            serverLog(LL_WARNING, "Diskless rdb transfer, done reading from pipe, %d replicas still up.", job.n);
            serverLog(LL_NOTICE, "Background RDB transfer terminated with success");
        } else if (WIFSIGNALED(st)) {
            serverLog(LL_WARNING, "Background transfer terminated by signal %d", WTERMSIG(st));
        } else {
            serverLog(LL_WARNING, "Background transfer error");
        }
        /* The replicas go online before the child's end is recorded (the
         * modules' ReplicaChange then ForkChild died, Redis's order). */
        jobFinish(ok);
        persistSyncChildDone(ok ? 1 : WIFSIGNALED(st) && WTERMSIG(st) == SIGUSR1 ? -1 : 0);
        return;
    }
}

static void pipeReadable(EventLoop *loop, int fd, void *data, int mask) {
    (void)loop, (void)fd, (void)data, (void)mask;
    pump();
}

/* The child's SIGUSR1 (the parent cancels the sync, or died: see
 * childSetup): Redis's line from the handler, then the default action, so
 * the parent sees the signal.  Only async-signal-safe calls. */
static void childCancelled(int sig) {
    char line[160];
    size_t n = 0;
    char num[24];
    long long vals[2] = {(long long)getpid(), (long long)time(NULL)};
    const char *parts[3] = {":signal-handler (", ") Received SIGUSR1 in child, exiting now.\n", NULL};
    for (int k = 0; k < 2; k++) {
        int d = 0;
        long long v = vals[k];
        do num[d++] = (char)('0' + v % 10); while ((v /= 10) && d < (int)sizeof(num));
        while (d) line[n++] = num[--d];
        for (const char *p = parts[k]; *p; p++) line[n++] = *p;
    }
    const char *logfile = server.cfg.logfile ? server.cfg.logfile : "";
    int fd = logfile[0] ? open(logfile, O_WRONLY | O_APPEND | O_CREAT, 0644) : STDOUT_FILENO;
    if (fd != -1) {
        ssize_t w = write(fd, line, n);
        (void)w;
        if (fd != STDOUT_FILENO) close(fd);
    }
    signal(sig, SIG_DFL);
    raise(sig);
}

/* In the child, first: SIGUSR1 cancels it, and it gets SIGUSR1 when the
 * parent dies (a sync child must not outlive its server). */
static void childSetup(pid_t parent, const sigset_t *oldMask) {
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = childCancelled;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGUSR1, &sa, NULL);
    prctl(PR_SET_PDEATHSIG, SIGUSR1);
    /* A SIGUSR1 sent since the fork was held (blocked): it runs the
     * handler now. */
    sigprocmask(SIG_SETMASK, oldMask, NULL);
    if (getppid() != parent) raise(SIGUSR1); /* it died before the prctl */
}

static void diskSaved(int ok);
static void jobFinish(int ok);

/* The end of a disk sync's in-process save: as the child's reaping. */
static void syncInlineDone(int ok, int unused) {
    (void)unused;
    job.inlineSave = 0;
    job.pid = -1;
    persistSyncChildDone(ok);
    if (ok < 0) jobFinish(0);
    else diskSaved(ok == 1);
}

/* The sync's save started (pid: its child, or this process for an
 * in-process save): every member now waits for its end, at the sync's
 * offset, and is told +FULLRESYNC unless its handshake already was. */
static void jobStarted(pid_t pid, int disk) {
    job.pid = pid;
    job.offset = repl.offset;
    job.disk = disk;
    job.sending = job.throttled = 0;
    for (int i = 0; i < job.n; i++) {
        Client *c = job.members[i];
        Replica *r = c->replState;
        r->state = RSTATE_WAIT_BGSAVE_END;
        replReplicaSetPosition(r, repl.offset + 1);
        if (!r->preSync) {
            char line[96];
            int n = snprintf(line, sizeof(line), "+FULLRESYNC %s %lld\r\n", repl.replid, job.offset);
            replyRaw(c, line, (size_t)n);
        }
    }
}

/* --- a diskless sync written in process (snapshot.h's stream) --- */

static void streamPut(const char *p, size_t n) {
    for (int i = 0; i < job.n; i++) replyRaw(job.members[i], p, n);
}

static int streamBusy(void) { return !membersBelowHigh(); }

/* The end of a diskless sync's in-process save: the mark follows the RDB
 * (jobFinish), as when the child's pipe ends. */
static void syncStreamDone(int ok, int unused) {
    (void)unused;
    job.inlineSave = 0;
    job.pid = -1;
    if (ok > 0) {
        serverLog(LL_NOTICE, "Diskless rdb transfer, done writing in process, %d replicas still up.", job.n);
        serverLog(LL_NOTICE, "Background RDB transfer terminated with success");
    } else if (ok < 0) {
        serverLog(LL_WARNING, "Background transfer cancelled");
    } else {
        serverLog(LL_WARNING, "Background transfer error");
    }
    jobFinish(ok > 0);
    persistSyncChildDone(ok);
}

/* Starts a diskless sync whose RDB the main thread writes between
 * commands straight into the members' output, after the $EOF head.  0, or
 * -1 when the dataset needs a fork (snapshotInlineUsable). */
static int startStream(void) {
    static const SnapshotStream out = {.put = streamPut, .busy = streamBusy};
    if (snapshotMethod != SNAPSHOT_INLINE || !snapshotInlineUsable()) return -1;
    /* The RDB's head (its repl-offset) and the members' +FULLRESYNC are
     * both this moment's; the head reaches them only after the $EOF line. */
    if (snapshotInlineStartStream(&out, syncStreamDone) < 0) return -1;
    job.inlineSave = 1;
    persistSyncChildStarted(getpid(), 0);
    jobStarted(getpid(), 0);
    serverLog(LL_NOTICE, "Starting BGSAVE for SYNC with target: replicas sockets");
    serverLog(LL_NOTICE, "Background RDB transfer started (in process, no fork)");
    randHex(job.mark, 40);
    job.mark[40] = '\0';
    char head[64];
    int n = snprintf(head, sizeof(head), "$EOF:%s\r\n", job.mark);
    for (int i = 0; i < job.n; i++) replyRaw(job.members[i], head, (size_t)n);
    return 0;
}

static void startSync(int disk, int exclude) {
    int pfd[2] = {-1, -1};
    if (!disk && pipe(pfd) == -1) {
        serverLog(LL_WARNING, "Can't start diskless sync: pipe: %s", strerror(errno));
        return;
    }
    /* Everyone waiting joins this sync, at this offset. */
    job.n = 0;
    job.members = xmalloc(sizeof(Client *) * (size_t)(repl.nreplicas ? repl.nreplicas : 1));
    for (int i = 0; i < repl.nreplicas; i++) {
        Client *c = repl.replicas[i];
        Replica *r = c->replState;
        if (r->state != RSTATE_WAIT_BGSAVE_START || r->exclude != exclude) continue;
        if (!disk && !(r->capa & CAPA_EOF)) continue; /* it waits for a disk sync */
        job.members[job.n++] = c;
    }
    repl.selDb = -1; /* the stream after the RDB starts with a SELECT */
    if (!disk && !exclude && startStream() == 0) return;
    if (disk && snapshotMethod == SNAPSHOT_INLINE && snapshotInlineUsable()) {
        if (snapshotInlineStart(syncInlineDone) < 0) {
            for (int i = 0; i < job.n; i++) clientFreeAsync(job.members[i]);
            xfree(job.members);
            job.members = NULL;
            job.n = 0;
            return;
        }
        job.inlineSave = 1;
        persistSyncChildStarted(getpid(), disk);
        jobStarted(getpid(), disk);
        serverLog(LL_NOTICE, "Starting BGSAVE for SYNC with target: disk");
        serverLog(LL_NOTICE, "Background saving started (in process, no fork)");
        return;
    }
    persistChildInfoOpen();
    long long start = ustime();
    pid_t parent = getpid();
    sigset_t usr1, oldMask;
    sigemptyset(&usr1);
    sigaddset(&usr1, SIGUSR1);
    sigprocmask(SIG_BLOCK, &usr1, &oldMask);
    pid_t pid = fork();
    if (pid == 0) {
        childSetup(parent, &oldMask);
        netCloseListenersInChild();
        persistChildInfoInChild("RDB");
        int rc;
        if (disk) {
            rc = rdbSaveFile(server.cfg.dbfilename);
            if (rc == 0) serverLog(LL_NOTICE, "DB saved on disk");
        } else {
            close(pfd[0]);
            rc = rdbSaveFdFiltered(pfd[1], (long long)server.cfg.replTimeout * 1000, exclude);
        }
        if (rc == 0) persistChildInfoFinal();
        _exit(rc == 0 ? 0 : 1);
    }
    int forkErrno = errno;
    sigprocmask(SIG_SETMASK, &oldMask, NULL);
    persistChildForked(pid);
    if (pid == -1) {
        serverLog(LL_WARNING, "Can't save in background: fork: %s", strerror(forkErrno));
        if (!disk) {
            close(pfd[0]);
            close(pfd[1]);
        }
        for (int i = 0; i < job.n; i++) clientFreeAsync(job.members[i]);
        xfree(job.members);
        job.members = NULL;
        job.n = 0;
        return;
    }
    persistNoteFork(ustime() - start); /* INFO's total_forks counts it, as Redis */
    persistSyncChildStarted(pid, disk);   /* the one child, for BGSAVE, BGREWRITEAOF and INFO */
    jobStarted(pid, disk);
    if (disk) {
        serverLog(LL_NOTICE, "Starting BGSAVE for SYNC with target: disk");
        serverLog(LL_NOTICE, "Background saving started by pid %d", (int)pid);
        return;
    }
    serverLog(LL_NOTICE, "Starting BGSAVE for SYNC with target: replicas sockets");
    serverLog(LL_NOTICE, "Background RDB transfer started by pid %d", (int)pid);
    close(pfd[1]);
    job.srcFd = pfd[0];
    fcntl(job.srcFd, F_SETFL, fcntl(job.srcFd, F_GETFL) | O_NONBLOCK);
    randHex(job.mark, 40);
    job.mark[40] = '\0';
    char head[64];
    int n = snprintf(head, sizeof(head), "$EOF:%s\r\n", job.mark);
    for (int i = 0; i < job.n; i++) replyRaw(job.members[i], head, (size_t)n);
    eventAdd(server.loop, job.srcFd, EV_READABLE, pipeReadable, NULL);
}

/* Disk sync: the child saved the file; send it. */
static void diskSaved(int ok) {
    if (!ok) {
        serverLog(LL_WARNING, "Background saving error");
        jobFinish(0);
        return;
    }
    serverLog(LL_NOTICE, "Background saving terminated with success");
    int fd = open(server.cfg.dbfilename, O_RDONLY);
    struct stat st;
    if (fd == -1 || fstat(fd, &st) == -1) {
        serverLog(LL_WARNING, "SYNC failed. Can't open/stat DB after BGSAVE: %s", strerror(errno));
        if (fd != -1) close(fd);
        jobFinish(0);
        return;
    }
    job.srcFd = fd;
    job.sending = 1;
    char head[64];
    int n = snprintf(head, sizeof(head), "$%lld\r\n", (long long)st.st_size);
    for (int i = 0; i < job.n; i++) {
        replyRaw(job.members[i], head, (size_t)n);
        ((Replica *)job.members[i]->replState)->state = RSTATE_SEND_BULK;
    }
    pump();
}

static void maybeStartSync(void) {
    if (job.pid != -1 || job.sending || persistChildActive()) return;
    int waiting = 0, eof = 0, exclude = 0;
    long long oldest = 0;
    /* The oldest waiting replica's filter decides; only replicas asking
     * for the same RDB join it. */
    for (int i = 0; i < repl.nreplicas; i++) {
        Replica *r = repl.replicas[i]->replState;
        if (r->state != RSTATE_WAIT_BGSAVE_START) continue;
        if (!waiting || r->waitSinceMs < oldest) oldest = r->waitSinceMs, exclude = r->exclude;
        waiting++;
    }
    if (!waiting) return;
    waiting = 0;
    for (int i = 0; i < repl.nreplicas; i++) {
        Replica *r = repl.replicas[i]->replState;
        if (r->state != RSTATE_WAIT_BGSAVE_START || r->exclude != exclude) continue;
        waiting++;
        if (r->capa & CAPA_EOF) eof++;
    }
    if ((server.cfg.replDisklessSync || exclude) && eof == waiting) {
        int maxr = server.cfg.replDisklessSyncMaxReplicas;
        if (server.cfg.replDisklessSync && server.time.nowMs - oldest < (long long)server.cfg.replDisklessSyncDelay * 1000 &&
            !(maxr > 0 && waiting >= maxr))
            return;
        startSync(0, exclude);
    } else {
        startSync(1, 0);
    }
}

/* --- WAIT --- */

static int ackedReplicas(long long offset) {
    int n = 0;
    for (int i = 0; i < repl.nreplicas; i++) {
        Replica *r = repl.replicas[i]->replState;
        if (r->state == RSTATE_ONLINE && r->ackOff >= offset) n++;
    }
    return n;
}

/* WAIT numreplicas timeout */
void waitCommand(Client *c) {
    if (server.isReplica) {
        replyError(c, "ERR WAIT cannot be used with replica instances. Please also note that since Redis 4.0 if a "
                      "replica is configured to be writable (which is not the default) writes to replicas are just "
                      "local and are not propagated.");
        return;
    }
    long numreplicas;
    long long timeout;
    if (getLongOrReply(c, c->argv[1], &numreplicas, NULL) < 0) return;
    if (getLongLongOrReply(c, c->argv[2], &timeout, "timeout is not an integer or out of range") < 0) return;
    if (timeout < 0) {
        replyError(c, "ERR timeout is negative");
        return;
    }
    /* The offset as of the end of the client's previous command, as
     * Redis 7.0 counts (a new client's first WAIT: the replicas online). */
    long long offset = c->woff;
    int acked = ackedReplicas(offset);
    if (acked >= numreplicas || (c->flags & (CLIENT_MULTI | CLIENT_LUA | CLIENT_FAKE)) || (c->flags & CLIENT_EXECUTING && server.net.current != c)) {
        replyLongLong(c, acked);
        return;
    }
    waiters = xrealloc(waiters, sizeof(Waiter) * (size_t)(nwaiters + 1));
    waiters[nwaiters++] = (Waiter){.c = c, .offset = offset,
                                   .deadlineMs = timeout ? deadlineAfter(server.time.nowMs, timeout) : 0,
                                   .numreplicas = numreplicas};
    c->flags |= CLIENT_BLOCKED;
    repl.getackPending = 1;
}

/* Replicas whose AOF is fsynced up to offset (their FACK). */
static int aofAckedReplicas(long long offset) {
    int n = 0;
    for (int i = 0; i < repl.nreplicas; i++) {
        Replica *r = repl.replicas[i]->replState;
        if (r->state == RSTATE_ONLINE && r->aofAckOff >= offset) n++;
    }
    return n;
}

/* WAITAOF's reply: [local AOF fsynced (0/1), replicas' AOFs fsynced]. */
static void replyWaitaof(Client *c, long long aofTarget, long long offset) {
    replyArrayLen(c, 2);
    replyLongLong(c, aofOn() && aofSyncedBytes() >= aofTarget);
    replyLongLong(c, aofAckedReplicas(offset));
}

/* WAITAOF numlocal numreplicas timeout (Redis 7.2): waits until this
 * client's writes so far are fsynced to the local AOF (numlocal 1) and
 * to the AOF of numreplicas replicas, or the timeout (ms, 0: forever);
 * replies [local, replicas] as counted then.  "So far" is every effect the
 * AOF was given when WAITAOF runs (a bound at least as late as Redis's
 * offset of the client's previous command) and, for replicas, that
 * offset.  In MULTI or a script it answers at once. */
void waitaofCommand(Client *c) {
    long numlocal, numreplicas;
    long long timeout;
    if (getRangeLongOrReply(c, c->argv[1], 0, 1, &numlocal, NULL) < 0) return;
    /* Redis gives the range text for a non-integer too (checked against 8.0). */
    if (getPositiveLongOrReply(c, c->argv[2], &numreplicas, "ERR value is out of range, must be positive") < 0) return;
    if (getLongLongOrReply(c, c->argv[3], &timeout, "timeout is not an integer or out of range") < 0) return;
    if (timeout < 0) {
        replyError(c, "ERR timeout is negative");
        return;
    }
    if (server.isReplica) {
        replyError(c, "ERR WAITAOF cannot be used with replica instances. Please also note that writes to replicas "
                      "are just local and are not propagated.");
        return;
    }
    if (numlocal && !server.cfg.appendonly) {
        replyError(c, "ERR WAITAOF cannot be used when numlocal is set but appendonly is disabled.");
        return;
    }
    long long offset = c->woff, aofTarget = aofFedBytes();
    int local = aofOn() && aofSyncedBytes() >= aofTarget;
    if ((local >= numlocal && aofAckedReplicas(offset) >= numreplicas) ||
        (c->flags & (CLIENT_MULTI | CLIENT_LUA | CLIENT_FAKE)) ||
        (c->flags & CLIENT_EXECUTING && server.net.current != c)) {
        replyWaitaof(c, aofTarget, offset);
        return;
    }
    waiters = xrealloc(waiters, sizeof(Waiter) * (size_t)(nwaiters + 1));
    waiters[nwaiters++] = (Waiter){.c = c, .offset = offset,
                                   .deadlineMs = timeout ? deadlineAfter(server.time.nowMs, timeout) : 0,
                                   .numreplicas = numreplicas, .aof = 1, .numlocal = numlocal,
                                   .aofTarget = aofTarget};
    c->flags |= CLIENT_BLOCKED;
    if (numreplicas) repl.getackPending = 1;
}

int primaryWaitingClients(void) { return nwaiters; }

int primaryUnblockWaiter(Client *c, int error) {
    int i = 0;
    while (i < nwaiters && waiters[i].c != c) i++;
    if (i == nwaiters) return 0;
    Waiter w = waiters[i];
    waiters[i] = waiters[--nwaiters];
    c->flags &= ~CLIENT_BLOCKED;
    if (error) replyError(c, "UNBLOCKED client unblocked via CLIENT UNBLOCK");
    else if (w.aof) replyWaitaof(c, w.aofTarget, w.offset); /* as on its timeout */
    else replyLongLong(c, ackedReplicas(w.offset));
    clientResetArgv(c);
    dispatchBlockedDone(c, 0, 1); /* failed either way, as Redis 7.0 counts it */
    unblocked = xrealloc(unblocked, sizeof(Client *) * (size_t)(nunblocked + 1));
    unblocked[nunblocked++] = c;
    return 1;
}

/* Reply `acked` (WAIT) or the counts (WAITAOF) to waiter i and let its
 * client go on. */
static void unblockWaiter(int i, int acked) {
    Waiter w = waiters[i];
    Client *c = w.c;
    waiters[i] = waiters[--nwaiters];
    c->flags &= ~CLIENT_BLOCKED;
    if (w.aof) replyWaitaof(c, w.aofTarget, w.offset);
    else replyLongLong(c, acked);
    clientResetArgv(c);
    /* Commands pipelined behind WAIT run now. */
    if (sdsLen(c->querybuf) > c->qbPos) netProcessInput(c);
}

void primaryDisconnectWaiters(const char *err) {
    while (nwaiters > 0) {
        Client *c = waiters[--nwaiters].c;
        c->flags &= ~CLIENT_BLOCKED;
        replyError(c, err);
        c->flags |= CLIENT_CLOSE_AFTER_REPLY;
        clientResetArgv(c);
    }
}

static void serveWaiters(void) {
    /* WAITAOF's local fsync: what this turn buffered goes now, not after
     * this hook (persistence's runs later), so the waiter is served now. */
    for (int i = 0; i < nwaiters; i++)
        if (waiters[i].aof && waiters[i].numlocal && aofSyncedBytes() < waiters[i].aofTarget) {
            aofFlushPending();
            break;
        }
    for (int i = 0; i < nwaiters;) {
        Waiter *w = &waiters[i];
        int acked, done;
        if (w->aof) {
            acked = aofAckedReplicas(w->offset);
            done = acked >= w->numreplicas && (aofOn() && aofSyncedBytes() >= w->aofTarget) >= w->numlocal;
        } else {
            acked = ackedReplicas(w->offset);
            done = acked >= w->numreplicas;
        }
        if (done || (w->deadlineMs && server.time.nowMs >= w->deadlineMs)) {
            unblockWaiter(i, acked);
            continue;
        }
        i++;
    }
}

/* --- liveness --- */

/* Feeds the stream a command of the primary's own (C-string arguments). */
static void feedCommand(int argc, const char *const *argv) {
    sds s = respCatCommandLen(sdsEmpty(), argc, argv, NULL);
    replFeedStream(s, sdsLen(s));
    sdsFree(s);
}

void primaryBeforeSleep(void) {
    if (repl.getackPending && !server.isReplica && repl.nreplicas) {
        static const char *const getack[3] = {"REPLCONF", "GETACK", "*"};
        feedCommand(3, getack);
    }
    repl.getackPending = 0;
    replPumpAll();
    if (nwaiters) serveWaiters();
    while (nunblocked > 0) {
        Client *c = unblocked[--nunblocked];
        if (!(c->flags & CLIENT_BLOCKED) && sdsLen(c->querybuf) > c->qbPos) netProcessInput(c);
    }
    if (job.srcFd != -1 && (job.sending || job.throttled) && membersBelowHigh()) {
        if (job.throttled) {
            job.throttled = 0;
            eventAdd(server.loop, job.srcFd, EV_READABLE, pipeReadable, NULL);
        }
        pump();
    }
}

void primaryCron(int everySecond) {
    /* A disk sync's child, or a diskless one whose replicas all left. */
    if (job.pid != -1 && !job.inlineSave && (job.disk ? !job.sending : job.srcFd == -1)) {
        int st;
        pid_t p = waitpid(job.pid, &st, WNOHANG);
        if (p == job.pid) {
            job.pid = -1;
            int ok = WIFEXITED(st) && WEXITSTATUS(st) == 0;
            /* SIGUSR1 is a cancelled sync, not a failed save. */
            persistSyncChildDone(ok ? 1 : WIFSIGNALED(st) && WTERMSIG(st) == SIGUSR1 ? -1 : 0);
            if (WIFSIGNALED(st)) {
                serverLog(LL_WARNING, job.disk ? "Background saving terminated by signal %d"
                                               : "Background transfer terminated by signal %d",
                          WTERMSIG(st));
                jobFinish(0);
            } else if (job.disk) {
                diskSaved(ok);
            } else {
                jobEnd();
            }
        }
    }
    maybeStartSync();
    if (nwaiters) serveWaiters();
    if (!everySecond) return;
    long long now = server.time.nowMs;
    static long long loops;
    loops++;
    /* PING the replicas now and then, so they can tell a dead link. */
    if (!server.isReplica && repl.nreplicas && loops % server.cfg.replPingReplicaPeriod == 0 &&
        failoverState() == FAILOVER_NONE && !server.expiryPaused) {
        static const char *const ping[1] = {"PING"};
        feedCommand(1, ping);
    }
    for (int i = 0; i < repl.nreplicas; i++) {
        Client *c = repl.replicas[i];
        Replica *r = c->replState;
        /* A newline keeps a replica waiting for its RDB from timing out. */
        if (r->state == RSTATE_WAIT_BGSAVE_START || (r->state == RSTATE_WAIT_BGSAVE_END && job.disk))
            replyRaw(c, "\n", 1);
        /* A diskless replica that took nothing of its RDB for
         * repl-timeout holds the others back: it goes (Redis's rule). */
        if (r->state == RSTATE_WAIT_BGSAVE_END && !job.disk && job.pid != -1 && clientHasPendingReplies(c) &&
            now - c->lastInteraction > (long long)server.cfg.replTimeout * 1000) {
            serverLog(LL_WARNING, "Disconnecting timedout replica (full sync): %s", RNAME(c));
            clientFreeAsync(c);
            continue;
        }
        /* A replica loading our RDB sends newlines instead of ACKs. */
        long long heard = r->ackMs > c->lastInteraction ? r->ackMs : c->lastInteraction;
        if (r->state == RSTATE_ONLINE && !r->preSync && now - heard > (long long)server.cfg.replTimeout * 1000) {
            serverLog(LL_WARNING, "Disconnecting timedout replica (streaming sync): %s", RNAME(c));
            clientFreeAsync(c);
        }
    }
    replCheckReplicaLimits();
    /* The backlog goes after repl-backlog-ttl without replicas. */
    if (repl.nreplicas == 0 && repl.backlogOn && !server.isReplica && server.cfg.replBacklogTtl &&
        now - repl.noReplicasSinceMs > server.cfg.replBacklogTtl * 1000) {
        replNewId(repl.replid);
        memset(repl.replid2, '0', 40);
        repl.secondOffset = -1;
        replBacklogFree();
        serverLog(LL_NOTICE, "Replication backlog freed after %lld seconds without connected replicas.",
                  server.cfg.replBacklogTtl);
    }
    primaryRefreshGoodReplicas();
}

void primaryClientFreed(Client *c) {
    for (int i = 0; i < nwaiters; i++) {
        if (waiters[i].c != c) continue;
        waiters[i] = waiters[--nwaiters];
        break;
    }
    for (int i = 0; i < nunblocked; i++)
        if (unblocked[i] == c) unblocked[i--] = unblocked[--nunblocked];
    Replica *r = c->replState;
    if (!r) return;
    if (c->flags & CLIENT_SLAVE) {
        for (int i = 0; i < repl.nreplicas; i++) {
            if (repl.replicas[i] != c) continue;
            repl.replicas[i] = repl.replicas[--repl.nreplicas];
            break;
        }
        int wasMember = jobRemove(c);
        serverLog(LL_WARNING, "Connection with replica %s lost.", RNAME(c));
        if (r->state == RSTATE_ONLINE) serverFireEvent(SERVER_EVENT_REPLICA_CHANGE, 1, NULL, 0, 0); /* offline */
        if (wasMember && job.n == 0 && job.pid != -1) {
            /* No one needs the RDB the child writes any more: a diskless
             * one at once; a disk one unless save points want the file
             * (Redis 7.0). */
            if (!job.disk) cancelDiskless();
            else if (!job.sending && !(server.cfg.saveParams && server.cfg.saveParams[0])) {
                if (job.inlineSave) snapshotInlineAbort();
                else kill(job.pid, SIGUSR1);
            }
        }
        if (repl.nreplicas == 0) repl.noReplicasSinceMs = server.time.nowMs;
        primaryRefreshGoodReplicas();
    }
    replReplicaDropPosition(r);
    xfree(r);
    c->replState = NULL;
}
