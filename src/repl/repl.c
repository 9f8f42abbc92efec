/* repl.c -- the replication state both sides share: the two replication
 * ids and the offset, the backlog, the stream fed to replicas, the rules
 * processCommand applies, ROLE and INFO replication, and the wiring.
 *
 * Invariants: the effects sink is registered exactly while a backlog
 * exists; a primary's stream is what the sink encodes (plus PINGs and
 * GETACKs), a replica's is the bytes its primary sent, forwarded as
 * applied.  Either way replFeedStream is the one way into the backlog and
 * the replicas, so offsets agree everywhere.
 *
 * The backlog is the shared replication buffer: a list of blocks holding
 * the stream once, each replica reading it at its own place (a counted
 * reference in its block) and getting it copied to its socket output in a
 * small window; a block is freed from the head once no replica reads it
 * and the history after it covers repl-backlog-size. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "core/config.h"
#include "core/dispatch.h"
#include "core/effects.h"
#include "core/errors.h"
#include "core/log.h"
#include "core/net.h"
#include "core/server.h"
#include "ds/alloc.h"
#include "ds/rand.h"
#include "persist/rdb.h"
#include "proto/resp_write.h"
#include "script/script.h"
#include "repl/repl.h"
#include "repl/repl_int.h"

ReplState repl = {.secondOffset = -1, .selDb = -1, .conn = NULL, .xferFd = -1};

static sds sinkBuf;

void replNewId(char *id) {
    randHex(id, 40);
    id[40] = '\0';
}

/* --- the backlog --- */

static void effectsSink(const Effect *ops, int count, void *ctx) {
    (void)ctx;
    if (server.isReplica) return; /* a replica forwards its primary's bytes */
    sdsClear(sinkBuf);
    sinkBuf = effectsAppendResp(sinkBuf, &repl.selDb, ops, count, EFFECT_REPL);
    replFeedStream(sinkBuf, sdsLen(sinkBuf));
}

/* --- the shared replication buffer (the backlog) --- */

#define REPL_BLOCK_MIN (16 * 1024)
#define REPL_WINDOW (64 * 1024)
#define BLOCK_HDR sizeof(ReplBlock)

static ReplBlock *blockAppendNew(size_t want) {
    size_t size = want > REPL_BLOCK_MIN ? want : REPL_BLOCK_MIN;
    ReplBlock *b = xmalloc(BLOCK_HDR + size);
    b->next = NULL;
    b->off = repl.offset + 1;
    b->size = size;
    b->used = 0;
    b->refs = 0;
    b->seq = repl.blockSeq++;
    if (repl.bufTail) repl.bufTail->next = b;
    else repl.bufHead = b;
    repl.bufTail = b;
    repl.bufMem += BLOCK_HDR + size;
    return b;
}

static void syncBacklogFields(void) {
    repl.backlogOff = repl.bufHead ? repl.bufHead->off : repl.offset + 1;
    repl.histlen = repl.offset + 1 - repl.backlogOff;
}

/* Drops the oldest blocks no replica reads while what stays still holds
 * repl-backlog-size bytes of history (a lagging replica's blocks stay, and
 * the history with them, as Redis 7.0's backlog grows past its size). */
static void backlogTrim(void) {
    ReplBlock *b;
    while ((b = repl.bufHead) && b->next && b->refs == 0 &&
           repl.offset + 1 - b->next->off >= server.cfg.replBacklogSize) {
        repl.bufHead = b->next;
        repl.bufMem -= BLOCK_HDR + b->size;
        xfree(b);
    }
    syncBacklogFields();
}

void replBacklogCreate(void) {
    if (repl.backlogOn) return;
    repl.backlogOn = 1;
    repl.backlogSize = server.cfg.replBacklogSize;
    syncBacklogFields();
    if (!sinkBuf) sinkBuf = sdsEmpty();
    effectsAddSink(effectsSink, NULL, EFFECT_REPL);
}

/* The replicas reading the buffer are all being dropped (the callers
 * disconnect them first): their positions go with the blocks. */
void replBacklogFree(void) {
    if (!repl.backlogOn) return;
    for (int i = 0; i < repl.nreplicas; i++) {
        Replica *r = repl.replicas[i]->replState;
        r->blk = NULL;
        r->pos = 0;
    }
    while (repl.bufHead) {
        ReplBlock *b = repl.bufHead;
        repl.bufHead = b->next;
        xfree(b);
    }
    repl.bufTail = NULL;
    repl.bufMem = 0;
    repl.backlogOn = 0;
    repl.histlen = 0;
    effectsRemoveSink(effectsSink, NULL);
}

/* CONFIG SET repl-backlog-size: a smaller size trims at once, a bigger one
 * keeps all the history there is. */
static void backlogResize(void) {
    repl.backlogSize = server.cfg.replBacklogSize;
    if (repl.backlogOn) backlogTrim();
}

/* --- replicas' positions in the buffer --- */

/* r reads from stream offset `from` (backlogOff <= from <= offset + 1). */
void replReplicaSetPosition(Replica *r, long long from) {
    replReplicaDropPosition(r);
    if (!repl.backlogOn) replBacklogCreate(); /* positions live in the backlog's blocks */
    ReplBlock *b = repl.bufHead;
    while (b && from >= b->off + (long long)b->used && b->next) b = b->next;
    if (!b || from >= b->off + (long long)b->size) b = blockAppendNew(0); /* at the end, the tail full */
    r->blk = b;
    r->pos = (size_t)(from - b->off);
    b->refs++;
}

void replReplicaDropPosition(Replica *r) {
    if (!r->blk) return;
    r->blk->refs--;
    r->blk = NULL;
    r->pos = 0;
    backlogTrim();
}

/* Bytes of the stream r has not taken yet. */
static long long behind(const Replica *r) { return r->blk ? repl.offset + 1 - (r->blk->off + (long long)r->pos) : 0; }

/* A replica's hard output limit is at least the backlog size (a partial
 * resync would else be followed by a disconnection), as Redis 7.0. */
static unsigned long long replicaHardLimit(void) {
    unsigned long long hard = server.cfg.obufLimits[CLIENT_TYPE_REPLICA].hard;
    if (hard && hard < (unsigned long long)server.cfg.replBacklogSize) hard = (unsigned long long)server.cfg.replBacklogSize;
    return hard;
}

/* Copies what r has not taken of the buffer into c's socket output while
 * that holds less than the window (so a replica's own copy stays small:
 * the stream waits in the shared blocks, once for every replica). */
void replReplicaPump(Client *c) {
    Replica *r = c->replState;
    if (!r || !r->blk || r->state != RSTATE_ONLINE || r->onlineOnAck || (c->flags & CLIENT_CLOSE_ASAP)) return;
    /* The window stays under the configured limit itself (the socket
     * output is also checked against it, without the backlog raise). */
    unsigned long long hard = server.cfg.obufLimits[CLIENT_TYPE_REPLICA].hard;
    size_t window = REPL_WINDOW;
    unsigned long long soft = server.cfg.obufLimits[CLIENT_TYPE_REPLICA].soft;
    if (hard && hard / 2 < window) window = (size_t)(hard / 2);
    if (soft && soft / 2 < window) window = (size_t)(soft / 2);
    if (window < 1024) window = 1024;
    int moved = 0;
    while (c->replyBytes < window) {
        ReplBlock *b = r->blk;
        if (r->pos < b->used) {
            size_t n = b->used - r->pos, room = window - c->replyBytes;
            if (n > room) n = room;
            replyRaw(c, b->buf + r->pos, n);
            r->pos += n;
            continue;
        }
        if (!b->next) break;
        b->refs--;
        r->blk = b->next;
        r->pos = 0;
        r->blk->refs++;
        moved = 1;
    }
    if (moved) backlogTrim();
}

/* client-output-buffer-limit replica: what the replica has not taken of
 * the shared buffer and its own output, as Redis counts a replica's
 * output (its place in the shared buffer). */
static void checkReplicaLimit(Client *c, Replica *r) {
    if (c->flags & CLIENT_CLOSE_ASAP) return;
    const ObufLimit *lim = &server.cfg.obufLimits[CLIENT_TYPE_REPLICA];
    unsigned long long used = (unsigned long long)behind(r) + c->replyBytes, hard = replicaHardLimit();
    int over = hard && used >= hard;
    if (!over && lim->soft && used >= lim->soft) {
        if (!r->softSinceMs) r->softSinceMs = server.time.nowMs;
        else over = (server.time.nowMs - r->softSinceMs) / 1000 > lim->softSeconds;
    } else if (!over) {
        r->softSinceMs = 0;
    }
    if (!over) return;
    serverLog(LL_WARNING, "Client id=%llu addr=%s scheduled to be closed ASAP for overcoming of output buffer limits.",
              (unsigned long long)c->id, c->addr);
    server.stats.clientOutbufLimitDisconnections++;
    clientFreeAsync(c);
}

/* The soft limit is also enforced for a replica the stream no longer
 * reaches (from the timer). */
void replCheckReplicaLimits(void) {
    for (int i = 0; i < repl.nreplicas; i++) {
        Client *c = repl.replicas[i];
        Replica *r = c->replState;
        if (r->blk) checkReplicaLimit(c, r);
    }
}

void replFeedStream(const char *p, size_t len) {
    if (!repl.backlogOn) {
        repl.offset += (long long)len;
        return;
    }
    while (len) {
        ReplBlock *t = repl.bufTail;
        if (!t || t->used == t->size) t = blockAppendNew(len);
        size_t n = t->size - t->used < len ? t->size - t->used : len;
        memcpy(t->buf + t->used, p, n);
        t->used += n;
        repl.offset += (long long)n;
        p += n;
        len -= n;
    }
    backlogTrim();
    for (int i = 0; i < repl.nreplicas; i++) {
        Client *c = repl.replicas[i];
        Replica *r = c->replState;
        if (!r->blk) continue; /* its sync starts later, at a newer offset */
        replReplicaPump(c);
        checkReplicaLimit(c, r);
    }
}

/* Before the loop sleeps: replicas whose socket took their copy get
 * more. */
void replPumpAll(void) {
    for (int i = 0; i < repl.nreplicas; i++) replReplicaPump(repl.replicas[i]);
}

/* The buffer's allocation as Redis splits it: up to repl-backlog-size is
 * the backlog's; what passes it, while replicas read it, is theirs. */
static size_t bufferExcess(void) {
    return repl.nreplicas && (long long)repl.bufMem > server.cfg.replBacklogSize
               ? repl.bufMem - (size_t)server.cfg.replBacklogSize
               : 0;
}

size_t replBacklogMemory(void) { return repl.bufMem - bufferExcess(); }

size_t replReplicaSharedMemory(void) { return bufferExcess(); }

size_t replClientPendingMemory(const Client *c) {
    const Replica *r = (c->flags & CLIENT_SLAVE) ? c->replState : NULL;
    if (!r || !r->blk) return 0;
    const ReplBlock *t = repl.bufTail;
    return (size_t)(t->off - r->blk->off) + t->size + (size_t)(t->seq - r->blk->seq + 1) * BLOCK_HDR;
}

size_t replReplicaOutputMemory(void) {
    /* The shared replication buffer beyond the backlog, once, plus what
     * each replica's own output holds (its allocated blocks). */
    size_t total = bufferExcess();
    for (int i = 0; i < repl.nreplicas; i++) total += repl.replicas[i]->replyAllocBytes;
    return total;
}

void replDisconnectReplicas(void) {
    for (int i = 0; i < repl.nreplicas; i++) clientFreeAsync(repl.replicas[i]);
}

/* While a replica: no active expiry, and lookups report expired keys
 * absent without deleting them (bit 2 of dbNoLazyExpire; CLIENT PAUSE owns
 * bit 1). */
/* A replica's own writes (not its primary's): a writable replica
 * remembers the keys its clients gave a TTL (replica_keys.c). */
static void ownWritesSink(const Effect *ops, int count, void *ctx) {
    (void)ctx;
    if (server.isReplica && !repl.applying && !server.cfg.replicaReadOnly) replicaKeysNoteEffects(ops, count);
}

void replSetReplicaMode(int on) {
    if (on && !server.isReplica) effectsAddSink(ownWritesSink, NULL, EFFECT_REPL);
    if (!on && server.isReplica) {
        effectsRemoveSink(ownWritesSink, NULL);
        replicaKeysForget();
    }
    server.isReplica = on;
    dbNoLazyExpire = on ? (dbNoLazyExpire | DB_NOLAZY_REPLICA) : (dbNoLazyExpire & ~DB_NOLAZY_REPLICA);
    configApplyOomScoreAdj(CONFIG_OOM_BY_ROLE); /* the replica's oom-score-adj value, or the master's */
}

/* --- the rules processCommand applies --- */

#define ERR_NOREPLICAS "NOREPLICAS Not enough good replicas to write."
#define ERR_READONLY "READONLY You can't write against a read only replica."

/* The error a write gets now from replication, or NULL. */
static const char *writeError(const Client *c) {
    if (server.isReplica) {
        return server.cfg.replicaReadOnly && !(c && (c->flags & CLIENT_MASTER)) ? ERR_READONLY : NULL;
    }
    if (server.cfg.minReplicasToWrite && server.cfg.minReplicasMaxLag &&
        repl.goodReplicas < server.cfg.minReplicasToWrite)
        return ERR_NOREPLICAS;
    return NULL;
}

static const char *scriptWriteError(void) { return writeError(NULL); }

int replRefuseWriteSlow(Client *c, Command *cmd, int execWrites) {
    const char *err = writeError(c);
    if (!err || !((cmd->flags & CMD_WRITE) || execWrites || scriptDeclaresWrites(c, cmd))) return 0;
    dispatchRejectCommand(c, err);
    return -1;
}

/* A replica whose link is down, with replica-serve-stale-data no. */
static int runningStale(void) {
    return server.isReplica && repl.link != LINK_CONNECTED && !server.cfg.replicaServeStaleData;
}

int replRefuseStaleSlow(Client *c, Command *cmd, int execNotStale) {
    /* A script's declared flags count (allow-stale). */
    if (runningStale() && (!(scriptCommandFlags(c, cmd) & CMD_STALE) || execNotStale)) {
        dispatchRejectCommand(c, "MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'.");
        return -1;
    }
    return 0;
}

int replRefuseReplicaKeyspaceSlow(Client *c, Command *cmd) {
    if ((c->flags & (CLIENT_SLAVE | CLIENT_MASTER)) == CLIENT_SLAVE &&
        (cmd->flags & (CMD_WRITE | CMD_READONLY | CMD_MAY_REPLICATE))) {
        dispatchRejectCommand(c, "ERR Replica can't interact with the keyspace");
        return -1;
    }
    return 0;
}

/* --- ROLE and INFO --- */

const char *replReplicaIp(const Client *c, char *buf, size_t len) {
    const Replica *r = c->replState;
    if (r->ip[0]) return r->ip;
    const char *colon = strrchr(c->addr, ':');
    size_t n = colon ? (size_t)(colon - c->addr) : strlen(c->addr);
    if (n >= len) n = len - 1;
    memcpy(buf, c->addr, n);
    buf[n] = '\0';
    return buf;
}

const char *replReplicaName(const Client *c, char *buf, size_t len) {
    const Replica *r = c->replState;
    char ip[64];
    if (r && r->ip[0]) {
        snprintf(ip, sizeof(ip), "%s", r->ip);
    } else {
        const char *colon = strrchr(c->addr, ':');
        size_t n = colon ? (size_t)(colon - c->addr) : strlen(c->addr);
        if (n >= sizeof(ip)) n = sizeof(ip) - 1;
        memcpy(ip, c->addr, n);
        ip[n] = '\0';
    }
    if (!ip[0]) snprintf(buf, len, "client id #%llu", (unsigned long long)c->id);
    else if (r && r->port) snprintf(buf, len, strchr(ip, ':') ? "[%s]:%d" : "%s:%d", ip, r->port);
    else snprintf(buf, len, "%s:<unknown-replica-port>", ip);
    return buf;
}

int replReplicaAcks(long long *offset, ReplReplicaAck *out, int max) {
    *offset = repl.offset;
    for (int i = 0; i < repl.nreplicas && i < max; i++) {
        const Client *c = repl.replicas[i];
        const Replica *r = c->replState;
        replReplicaName(c, out[i].name, sizeof(out[i].name));
        out[i].ackOff = r->ackOff;
        out[i].ackMs = r->ackMs;
        out[i].state = r->state == RSTATE_ONLINE          ? "online"
                       : r->state == RSTATE_SEND_BULK     ? "send_bulk"
                       : r->state == RSTATE_NONE          ? ""
                                                          : "wait_bgsave";
    }
    return repl.nreplicas;
}

void replRequestAcks(void) { repl.getackPending = 1; }

static void roleCommand(Client *c) {
    if (server.isReplica) {
        replyArrayLen(c, 5);
        replyBulkCString(c, "slave");
        replyBulkCString(c, repl.masterHost);
        replyLongLong(c, repl.masterPort);
        replyBulkCString(c, replicaLinkName());
        replyLongLong(c, repl.master ? repl.offset : -1);
        return;
    }
    replyArrayLen(c, 3);
    replyBulkCString(c, "master");
    replyLongLong(c, repl.offset);
    void *len = replyDeferredLen(c);
    long n = 0;
    for (int i = 0; i < repl.nreplicas; i++) {
        Client *s = repl.replicas[i];
        Replica *r = s->replState;
        if (r->state != RSTATE_ONLINE) continue;
        char ip[64];
        replyArrayLen(c, 3);
        replyBulkCString(c, replReplicaIp(s, ip, sizeof(ip)));
        replyBulkLongLong(c, r->port);
        replyBulkLongLong(c, r->ackOff);
        n++;
    }
    replySetDeferredArrayLen(c, len, n);
}

static const char *replicaStateName(const Replica *r) {
    switch (r->state) {
    case RSTATE_WAIT_BGSAVE_START:
    case RSTATE_WAIT_BGSAVE_END: return "wait_bgsave";
    case RSTATE_SEND_BULK: return "send_bulk";
    case RSTATE_ONLINE: return "online";
    default: return "unknown";
    }
}

sds replInfoSection(sds s) {
    if (server.isReplica) {
        s = sdsCat(s, "role:slave\r\n");
        s = replicaInfoLines(s);
    } else {
        s = sdsCat(s, "role:master\r\n");
    }
    s = sdsCatPrintf(s, "connected_slaves:%d\r\n", repl.nreplicas);
    if (server.cfg.minReplicasToWrite && server.cfg.minReplicasMaxLag)
        s = sdsCatPrintf(s, "min_slaves_good_slaves:%d\r\n", repl.goodReplicas);
    long long now = server.time.nowMs;
    for (int i = 0, k = 0; i < repl.nreplicas; i++) {
        Client *c = repl.replicas[i];
        Replica *r = c->replState;
        char ip[64];
        s = sdsCatPrintf(s, "slave%d:ip=%s,port=%d,state=%s,offset=%lld,lag=%lld\r\n", k++,
                         replReplicaIp(c, ip, sizeof(ip)), r->port, replicaStateName(r), r->ackOff,
                         (now - r->ackMs) / 1000);
    }
    s = sdsCatPrintf(s,
                     "master_failover_state:%s\r\n"
                     "master_replid:%s\r\n"
                     "master_replid2:%s\r\n"
                     "master_repl_offset:%lld\r\n"
                     "second_repl_offset:%lld\r\n"
                     "repl_backlog_active:%d\r\n"
                     "repl_backlog_size:%lld\r\n"
                     "repl_backlog_first_byte_offset:%lld\r\n"
                     "repl_backlog_histlen:%lld\r\n",
                     failoverStateName(), repl.replid, repl.replid2, repl.offset, repl.secondOffset, repl.backlogOn,
                     server.cfg.replBacklogSize, repl.backlogOn ? repl.backlogOff : 0, repl.backlogOn ? repl.histlen : 0);
    return s;
}

long long replStatSyncs(int which) {
    return which == 0 ? repl.statFullSyncs : which == 1 ? repl.statPartialOk : repl.statPartialErr;
}

/* --- wiring --- */

/* The position a snapshot records (Redis's rdbPopulateSaveInfo). */
static int rdbInfo(RdbReplInfo *out) {
    if (!server.isReplica && !repl.backlogOn) return 0;
    if (server.isReplica && !repl.master && !repl.haveCached) return 0;
    if (!server.isReplica) out->streamDb = repl.selDb == -1 ? 0 : repl.selDb;
    else out->streamDb = repl.master ? repl.master->db->id : repl.cachedDb;
    memcpy(out->replid, repl.replid, 41);
    out->offset = repl.offset;
    return 1;
}

static void cron(void) {
    static long long lastSecond;
    int everySecond = server.time.nowMs - lastSecond >= 1000;
    if (everySecond) lastSecond = server.time.nowMs;
    replicaCron(everySecond);
    replicaKeysCron();
    primaryCron(everySecond);
    failoverCron();
}

static void clientFreed(Client *c) {
    if (c->flags & CLIENT_MASTER) replicaClientFreed(c);
    primaryClientFreed(c);
}

/* CONFIG SET of min-replicas-* or repl-backlog-size (Redis keeps the
 * backlog at 16 KB at least). */
static void configChanged(void) {
    if (server.cfg.replBacklogSize < REPL_BACKLOG_MIN) server.cfg.replBacklogSize = REPL_BACKLOG_MIN;
    backlogResize();
    primaryRefreshGoodReplicas();
}

static void resetStats(void) { repl.statFullSyncs = repl.statPartialOk = repl.statPartialErr = 0; }

void replChangeId(void) {
    replNewId(repl.replid);
    memset(repl.replid2, '0', 40);
    repl.replid2[40] = '\0';
    repl.secondOffset = -1;
}

static void collectExpired(int dbid, const char *key, size_t len);

void replInit(void) {
    replNewId(repl.replid);
    memset(repl.replid2, '0', 40);
    repl.replid2[40] = '\0';
    repl.rbuf = sdsEmpty();
    rdbReplInfoProvider = rdbInfo;
    dispatchWaitOffset = &repl.offset;
    scriptReplicaWriteError = scriptWriteError;
    scriptRunningStale = runningStale;
    serverAddCronHook(cron);
    serverAddBeforeSleepHook(primaryBeforeSleep);
    serverAddResetStatsHook(resetStats);
    clientAddFreeHook(clientFreed);
    /* A replica from the start loads dump.rdb as a replica does (expired
     * keys kept: the primary's DELs follow). */
    if (server.cfg.replicaof) replSetReplicaMode(1);
    else rdbLoadExpiredHook = collectExpired;
}

/* The start-up load of a primary: the DELs of the keys it skipped as
 * expired, as the stream would carry them (SELECT when the database
 * changes), fed once the position is known. */
static sds loadDels;
static int loadDelsDb = -1;

static void collectExpired(int dbid, const char *key, size_t len) {
    if (!loadDels) loadDels = sdsEmpty();
    if (dbid != loadDelsDb) {
        char num[UTIL_LONG_STR_SIZE];
        const char *sel[2] = {"SELECT", num};
        size_t lens[2] = {6, (size_t)longLongToString(num, sizeof(num), dbid)};
        loadDels = respCatCommandLen(loadDels, 2, sel, lens);
        loadDelsDb = dbid;
    }
    const char *del[2] = {server.cfg.lazyfreeLazyExpire ? "UNLINK" : "DEL", key};
    size_t lens[2] = {strlen(del[0]), len};
    loadDels = respCatCommandLen(loadDels, 2, del, lens);
}

/* A primary restarted from its own snapshot (appendonly off, as Redis
 * reads the position only from an RDB): the snapshot's id and offset
 * become replid2 / second_repl_offset and our offset, with a backlog from
 * there, so its replicas continue with +CONTINUE; the DELs of the keys the
 * load found expired go first.  Without a position the DELs still count
 * in the offset, as Redis counts them. */
static void primaryStart(void) {
    int have = rdbLastLoaded.hasRepl && !server.cfg.appendonly;
    if (have) {
        memcpy(repl.replid2, rdbLastLoaded.repl.replid, 41);
        repl.offset = rdbLastLoaded.repl.offset;
        repl.secondOffset = repl.offset + 1;
        replBacklogCreate();
        repl.noReplicasSinceMs = server.time.nowMs;
    }
    if (loadDels && !server.cfg.appendonly) {
        if (have) {
            repl.selDb = loadDelsDb;
            replFeedStream(loadDels, sdsLen(loadDels));
        } else {
            repl.offset += (long long)sdsLen(loadDels);
        }
    }
    sdsFree(loadDels);
    loadDels = NULL;
}

void replStart(void) {
    rdbLoadExpiredHook = NULL;
    if (!server.cfg.replicaof) {
        primaryStart();
        return;
    }
    char host[256];
    int port;
    if (sscanf(server.cfg.replicaof, "%255s %d", host, &port) != 2) return;
    if (rdbLastLoaded.hasRepl) {
        /* Restarted from our own snapshot: try to continue where it ends. */
        memcpy(repl.replid, rdbLastLoaded.repl.replid, 41);
        repl.offset = rdbLastLoaded.repl.offset;
        repl.haveCached = 1;
        repl.cachedDb = rdbLastLoaded.repl.streamDb;
    }
    replicaSetPrimary(host, port);
}

/* Defined in primary.c and replica.c. */
void syncCommand(Client *c);
void replconfCommand(Client *c);
void waitCommand(Client *c);
void waitaofCommand(Client *c);
void replicaofCommand(Client *c);
void failoverCommand(Client *c);

Command replCommands[] = {
    {.name = "replicaof", .proc = replicaofCommand},
    {.name = "slaveof", .proc = replicaofCommand},
    {.name = "sync", .proc = syncCommand},
    {.name = "psync", .proc = syncCommand},
    {.name = "replconf", .proc = replconfCommand},
    {.name = "role", .proc = roleCommand},
    {.name = "wait", .proc = waitCommand},
    {.name = "waitaof", .proc = waitaofCommand},
    {.name = "failover", .proc = failoverCommand},
    {0},
};

/* ------------------------------------------------------------------------ */
/* Configuration                                                             */
/* ------------------------------------------------------------------------ */

/* replicaof <host> <port> | no one: the primary to follow from start-up
 * (REPLICAOF changes it at run time, so CONFIG GET and REWRITE show the
 * live role). */
static int setReplicaof(ConfigDef *d, sds *argv, int argc, const char **err) {
    if (argc == 0) {
        configSetString(&server.cfg.replicaof, NULL);
        return 0;
    }
    if (argc != 2) {
        *err = "wrong number of arguments";
        return -1;
    }
    if (!strcasecmp(argv[0], "no") && !strcasecmp(argv[1], "one")) {
        configSetString(&server.cfg.replicaof, NULL);
        return 0;
    }
    char *end;
    errno = 0;
    long port = strtol(argv[1], &end, 10);
    if (errno || *end || end == argv[1] || port < 0 || port > 65535) {
        *err = "Invalid master port";
        return -1;
    }
    sds v = sdsCatPrintf(sdsEmpty(), "%s %ld", argv[0], port);
    configSetString(&server.cfg.replicaof, v);
    sdsFree(v);
    return 0;
}

static sds getReplicaof(const ConfigDef *d) {
    return sdsNew(server.cfg.replicaof ? server.cfg.replicaof : "");
}

static sds *rewriteReplicaof(const ConfigDef *d, int *count) {
    sds *out = xmalloc(sizeof(sds));
    *count = 0;
    if (server.cfg.replicaof) out[(*count)++] = sdsCatPrintf(sdsEmpty(), "replicaof %s", server.cfg.replicaof);
    return out;
}

static int applyReplicationConfig(const char **err) {
    (void)err;
    configChanged();
    return 0;
}

static const ConfigEnum propagationErrorEnum[] = {{"ignore", 0}, {"panic", 1}, {"panic-on-replicas", 2}, {NULL, 0}};
static const ConfigEnum disklessLoadEnum[] = {{"disabled", 0}, {"on-empty-db", 1}, {"swapdb", 2}, {NULL, 0}};

#define SC(field) server.cfg.field
/* Both sides of replication (primary.c, replica.c, repl.c read them; the
 * values stay in server.cfg: persistence and eviction read some too). */
static ConfigDef replConfig[] = {
    CONFIG_STRING("bind-source-addr", NULL, CF_EMPTY_NULL, SC(bindSourceAddr), ""),
    CONFIG_STRING("masterauth", NULL, CF_SENSITIVE | CF_EMPTY_NULL | CF_BINARY, SC(masterauth), ""),
    CONFIG_STRING("masteruser", NULL, CF_EMPTY_NULL, SC(masteruser), ""),
    CONFIG_INT("min-replicas-max-lag", "min-slaves-max-lag", 0, SC(minReplicasMaxLag), 0, INT_MAX, "10",
               .apply = applyReplicationConfig),
    CONFIG_INT("min-replicas-to-write", "min-slaves-to-write", 0, SC(minReplicasToWrite), 0, INT_MAX, "0",
               .apply = applyReplicationConfig),
    CONFIG_ENUM("propagation-error-behavior", NULL, 0, SC(propagationErrorBehavior), propagationErrorEnum, "ignore"),
    CONFIG_LL("repl-backlog-size", NULL, CF_MEMORY, SC(replBacklogSize), 1, LLONG_MAX, "1048576",
              .apply = applyReplicationConfig),
    CONFIG_LL("repl-backlog-ttl", NULL, 0, SC(replBacklogTtl), 0, LLONG_MAX, "3600"),
    CONFIG_BOOL("repl-disable-tcp-nodelay", NULL, 0, SC(replDisableTcpNodelay), "no"),
    CONFIG_ENUM("repl-diskless-load", NULL, 0, SC(replDisklessLoad), disklessLoadEnum, "disabled"),
    CONFIG_BOOL("repl-diskless-sync", NULL, 0, SC(replDisklessSync), "yes"),
    CONFIG_INT("repl-diskless-sync-delay", NULL, 0, SC(replDisklessSyncDelay), 0, INT_MAX, "5"),
    CONFIG_INT("repl-diskless-sync-max-replicas", NULL, 0, SC(replDisklessSyncMaxReplicas), 0, INT_MAX, "0"),
    CONFIG_INT("repl-ping-replica-period", "repl-ping-slave-period", 0, SC(replPingReplicaPeriod), 1, INT_MAX, "10"),
    CONFIG_INT("repl-timeout", NULL, 0, SC(replTimeout), 1, INT_MAX, "60"),
    CONFIG_STRING("replica-announce-ip", "slave-announce-ip", CF_EMPTY_NULL, SC(replicaAnnounceIp), ""),
    CONFIG_INT("replica-announce-port", "slave-announce-port", 0, SC(replicaAnnouncePort), 0, 65535, "0"),
    CONFIG_BOOL("replica-announced", NULL, 0, SC(replicaAnnounced), "yes"),
    CONFIG_BOOL("replica-ignore-disk-write-errors", NULL, 0, SC(replicaIgnoreDiskWriteErrors), "no"),
    CONFIG_BOOL("replica-ignore-maxmemory", "slave-ignore-maxmemory", 0, SC(replicaIgnoreMaxmemory), "yes"),
    CONFIG_BOOL("replica-lazy-flush", "slave-lazy-flush", 0, SC(replicaLazyFlush), "no"),
    CONFIG_INT("replica-priority", "slave-priority", 0, SC(replicaPriority), 0, INT_MAX, "100"),
    CONFIG_BOOL("replica-read-only", "slave-read-only", 0, SC(replicaReadOnly), "yes"),
    CONFIG_BOOL("replica-serve-stale-data", "slave-serve-stale-data", 0, SC(replicaServeStaleData), "yes"),
    CONFIG_SPECIAL("replicaof", "slaveof", CF_IMMUTABLE | CF_MULTI_ARG, "", setReplicaof, getReplicaof,
                   .rewrite = rewriteReplicaof),
};
#undef SC

void replRegisterConfig(void) { configRegister(replConfig, CONFIG_COUNT_OF(replConfig)); }
