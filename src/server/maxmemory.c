/* maxmemory.c -- memory as a cache, the server's side (see maxmemory.h).
 *
 * Key eviction itself (sampling, the pool, the loop and its time limit)
 * is the keyspace's (db/evict.c); this file decides when it runs, what an
 * eviction means to the rest of the server, and answers MEMORY. */
#include "server/maxmemory.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "core/dispatch.h"
#include "core/effects.h"
#include "core/errors.h"
#include "core/log.h"
#include "core/net.h"
#include "db/evict.h"
#include "db/lazyfree.h"
#include "ds/alloc.h"
#include "ds/util.h"
#include "persist/aof.h"
#include "repl/repl.h"
#include "script/script.h"
#include "server/multi.h"
#include "server/pubsub.h"
#include "server/stats.h"
#include "server/tracking.h"

/* maxmemory-samples and maxmemory-eviction-tenacity: the directives at the
 * end of this file. */
static int maxmemorySamples;
static int maxmemoryEvictionTenacity;

/* --- key eviction --- */

static int timerRunning;        /* the eviction timer is scheduled */
static long long exceededSinceUs; /* when memory went over the limit (0: under) */
static long long exceededTotalUs;

size_t maxmemoryNotCounted(void) { return replReplicaOutputMemory() + aofBufferMemory(); }

static void fillParams(EvictParams *p) {
    p->maxmemory = server.cfg.maxmemory;
    p->notCounted = maxmemoryNotCounted();
    p->samples = maxmemorySamples;
    p->tenacity = maxmemoryEvictionTenacity;
    p->lazy = server.cfg.lazyfreeLazyEviction;
}

/* Redis evicts nothing while a script is past its time limit (the
 * dataset must look frozen to it), while loading, or while clients are
 * paused (no expiry either); nor on a replica, unless
 * replica-ignore-maxmemory is no. */
static int safeToEvict(void) {
    if (server.isReplica && server.cfg.replicaIgnoreMaxmemory) return 0;
    return !scriptBusyError() && !(dbNoLazyExpire & ~DB_NOLAZY_REPLICA) && !server.expiryPaused;
}

static void exceededEnd(void) {
    if (!exceededSinceUs) return;
    exceededTotalUs += ustime() - exceededSinceUs;
    exceededSinceUs = 0;
}

static long long evictTimerProc(EventLoop *loop, long long id, void *data);

/* One eviction run as Redis's performEvictions: EVICT_OK, _RUNNING (the
 * timer goes on with it) or _FAIL (over the limit, nothing to evict). */
static int evictNow(void) {
    if (!safeToEvict()) return EVICT_OK;
    EvictParams p;
    fillParams(&p);
    if (!evictOverLimit(&p, NULL, NULL)) {
        exceededEnd();
        return EVICT_OK;
    }
    if (!exceededSinceUs) exceededSinceUs = ustime();
    int rc = evictRun(server.db, server.cfg.databases, &p);
    if (rc == EVICT_RUNNING && !timerRunning) {
        timerRunning = 1;
        eventAddTimer(server.loop, 0, evictTimerProc, NULL);
    }
    if (rc == EVICT_OK) exceededEnd();
    return rc == EVICT_OK && timerRunning ? EVICT_RUNNING : rc;
}

/* Goes on evicting from the loop (every turn) while a run keeps reaching
 * its time limit. */
static long long evictTimerProc(EventLoop *loop, long long id, void *data) {
    (void)loop, (void)id, (void)data;
    if (!server.cfg.maxmemory) {
        timerRunning = 0;
        return -1;
    }
    EvictParams p;
    fillParams(&p);
    int rc = EVICT_RUNNING;
    if (safeToEvict()) {
        if (!exceededSinceUs && evictOverLimit(&p, NULL, NULL)) exceededSinceUs = ustime();
        rc = evictRun(server.db, server.cfg.databases, &p);
    }
    if (rc == EVICT_RUNNING) return 0;
    timerRunning = 0;
    if (rc == EVICT_OK) exceededEnd();
    return -1;
}

/* CONFIG SET maxmemory: Redis warns when the new limit is under the memory
 * counted, and starts the eviction timer, so eviction (and its `evicted`
 * events) begins right after the command, not at the next one a client
 * sends.  The timer ends itself once memory is under the limit. */
static void applyMaxmemory(void) {
    if (!server.cfg.maxmemory) return;
    EvictParams p;
    fillParams(&p);
    size_t used;
    evictOverLimit(&p, &used, NULL);
    if (server.cfg.maxmemory < used)
        serverLog(LL_WARNING,
                  "WARNING: the new maxmemory value set via CONFIG SET (%llu) is smaller than the current memory "
                  "usage (%zu). This will result in key eviction and/or the inability to accept new write commands "
                  "depending on the maxmemory-policy.",
                  server.cfg.maxmemory, used);
    if (!timerRunning) {
        timerRunning = 1;
        eventAddTimer(server.loop, 0, evictTimerProc, NULL);
    }
}

long long maxmemoryExceededTotalMs(void) {
    if (!server.cfg.maxmemory) exceededEnd();
    return (exceededTotalUs + (exceededSinceUs ? ustime() - exceededSinceUs : 0)) / 1000;
}

long long maxmemoryExceededCurrentMs(void) { return exceededSinceUs ? (ustime() - exceededSinceUs) / 1000 : 0; }

/* What an eviction means beyond the keyspace, in Redis's order. */
static void keyEvicted(Db *db, const char *key, size_t len) {
    server.stats.evictedKeys++;
    signalDeletedKey(db, key, len);
    notifyKeyspaceEvent(NOTIFY_EVICTED, "evicted", key, len, db->id);
    effectsDeleteKey(db->id, key, len, server.cfg.lazyfreeLazyEviction);
}

/* The commands that stay allowed inside MULTI when memory is full: they
 * end the transaction or the connection. */
static int endsTransaction(const Command *cmd) {
    return !strcmp(cmd->name, "exec") || !strcmp(cmd->name, "discard") || !strcmp(cmd->name, "quit") ||
           !strcmp(cmd->name, "reset");
}

int maxmemoryRefuseOrReplySlow(Client *c, Command *cmd) {
    if (scriptBusyError()) return 0; /* the BUSY rule answers */
    int oom = evictNow() == EVICT_FAIL;
    scriptOomAtStart = oom;
    if (!oom) return 0;
    int reject = (scriptCommandFlags(c, cmd) & CMD_DENYOOM) != 0;
    if (!strcmp(cmd->name, "exec") && (multiQueuedFlags(c) & CMD_DENYOOM)) reject = 1;
    /* Queueing may take any amount of memory. */
    if ((c->flags & CLIENT_MULTI) && !endsTransaction(cmd)) reject = 1;
    if (!reject) return 0;
    dispatchRejectCommand(c, ERR_OOM);
    return -1;
}

/* --- client eviction --- */

size_t clientMemoryUsage(const Client *c) {
    /* A command being read: its arguments so far, and a big argument by
     * its declared length (Redis sizes its query buffer for it at once). */
    ProtoPartial part;
    c->proto->partial(c->protoState, &part);
    size_t pending = c->proto->pendingBytes(c->protoState);
    if (part.bulkDeclared > pending) pending = part.bulkDeclared;
    return sizeof(Client) + c->bufSize + (c->querybuf ? sdsAllocSize(c->querybuf) : 0) + c->argvBytes +
           (size_t)c->argc * sizeof(sds) + part.argvBytes + (size_t)part.argc * sizeof(sds) + pending +
           c->replyBytes + multiQueuedBytes(c) + c->proto->spareBytes(c->protoState) + replClientPendingMemory(c) +
           multiWatchedMemory(c) + pubsubClientMemory(c) + trackingClientMemory(c);
}

/* Client eviction keeps its figures as it goes, as Redis 7.0 does, so a
 * command pays for its own client only: once maxmemory-clients is set,
 * each connection is measured when net.c reports it may have changed
 * (accepted, input processed, written, each cron tick) and counted at
 * that figure.  `clientsTotal` sums the normal and pub/sub connections
 * (what the limit is about: not replicas nor the primary's link); those
 * that may be disconnected are also in a bucket per power of two of
 * their size, Redis's: below 32 KB the first, then [2^k, 2^(k+1)) from
 * k = 15, and 4 GB or more ([2^32, ...)) the last; eviction takes them
 * from the highest bucket first.  Tracking stops (and forgets) at the
 * first cron tick after the limit is set back to 0. */
#define BUCKET_MIN_LOG 15 /* 32 KB */
#define BUCKET_MAX_LOG 33 /* bit length: 4 GB and more share the last */
#define NBUCKETS (BUCKET_MAX_LOG - BUCKET_MIN_LOG + 1)

static Client *buckets[NBUCKETS];
static size_t clientsTotal;
static int clientsTracked;

static int clientCounted(const Client *c) {
    return !clientIsFake(c) && !(c->flags & (CLIENT_CLOSE_ASAP | CLIENT_SLAVE | CLIENT_MASTER | CLIENT_FAKE));
}

static int bucketOf(size_t bytes) {
    int log = bytes ? 64 - __builtin_clzll((unsigned long long)bytes) : 0; /* bit length */
    if (log < BUCKET_MIN_LOG) log = BUCKET_MIN_LOG;
    if (log > BUCKET_MAX_LOG) log = BUCKET_MAX_LOG;
    return log - BUCKET_MIN_LOG;
}

static void bucketUnlink(Client *c) {
    if (!c->memBucket) return;
    if (c->memPrev) c->memPrev->memNext = c->memNext;
    else buckets[c->memBucket - 1] = c->memNext;
    if (c->memNext) c->memNext->memPrev = c->memPrev;
    c->memPrev = c->memNext = NULL;
    c->memBucket = 0;
}

static void bucketLink(Client *c, int b) {
    c->memPrev = NULL;
    c->memNext = buckets[b];
    if (buckets[b]) buckets[b]->memPrev = c;
    buckets[b] = c;
    c->memBucket = b + 1;
}

/* Counts c at its size now (netClientMemoryHook). */
static void clientMemoryUpdate(Client *c) {
    int counted = clientCounted(c);
    size_t bytes = counted ? clientMemoryUsage(c) : 0;
    clientsTotal = clientsTotal - c->memCounted + bytes;
    c->memCounted = bytes;
    int b = counted && !(c->flags & CLIENT_NO_EVICT) ? bucketOf(bytes) + 1 : 0;
    if (b == c->memBucket) return;
    bucketUnlink(c);
    if (b) bucketLink(c, b - 1);
}

static void clientMemoryForget(Client *c) {
    clientsTotal -= c->memCounted;
    c->memCounted = 0;
    bucketUnlink(c);
}

static void clientsTrackingStart(void) {
    clientsTracked = 1;
    netClientMemoryHook = clientMemoryUpdate;
    for (Client *c = server.net.clients; c; c = c->nextClient) clientMemoryUpdate(c);
}

static void clientsTrackingCron(void) {
    if (!clientsTracked || server.cfg.maxmemoryClients) return;
    clientsTracked = 0;
    netClientMemoryHook = NULL;
    for (Client *c = server.net.clients; c; c = c->nextClient) clientMemoryForget(c);
}

static size_t clientsLimit(void) {
    unsigned long long v = server.cfg.maxmemoryClients;
    if (server.cfg.maxmemoryClientsPercent) v = server.cfg.maxmemory * v / 100;
    return (size_t)v;
}

int maxmemoryEvictClientsSlow(Client *current) {
    size_t limit = clientsLimit();
    if (!limit) return 0;
    if (!clientsTracked) clientsTrackingStart();
    else if (current) clientMemoryUpdate(current);
    int evictedCurrent = 0;
    int b = NBUCKETS - 1;
    while (clientsTotal >= limit) {
        while (b >= 0 && !buckets[b]) b--;
        if (b < 0) break;
        Client *victim = buckets[b];
        sds info = sdsCatPrintf(sdsEmpty(), "id=%llu addr=%s name=%s tot-mem=%zu", (unsigned long long)victim->id,
                                victim->addr, victim->name ? victim->name : "", victim->memCounted);
        serverLog(LL_VERBOSE, "Evicting client: %s", info);
        sdsFree(info);
        server.stats.evictedClients++;
        if (victim == current) evictedCurrent = 1;
        clientFreeAsync(victim);
        clientMemoryUpdate(victim); /* closing: no longer counted */
    }
    return evictedCurrent ? -1 : 0;
}

sds maxmemoryClientEvictionReport(void) {
    if (!server.cfg.maxmemoryClients) return NULL;
    if (!clientsTracked) clientsTrackingStart();
    sds s = sdsEmpty();
    for (int b = 0; b < NBUCKETS; b++) {
        size_t bytes = 0;
        unsigned long n = 0;
        for (Client *c = buckets[b]; c; c = c->memNext, n++) bytes += c->memCounted;
        size_t low = b ? (size_t)1 << (b + BUCKET_MIN_LOG - 1) : 0;
        s = sdsCatPrintf(s, "bucket %10zu", low);
        if (b == NBUCKETS - 1) s = sdsCat(s, "+            : ");
        else s = sdsCatPrintf(s, " - %10zu: ", ((size_t)1 << (b + BUCKET_MIN_LOG)) - 1);
        s = sdsCatPrintf(s, "tot-mem: %10zu, clients: %lu\n", bytes, n);
    }
    return s;
}

static void evictClientsBeforeSleep(void) { maxmemoryEvictClients(NULL); }

/* Redis defers a key table's growth that would pass maxmemory while its
 * load factor is at most 1.618: the slots would only evict keys. */
static int tableGrowAllowed(size_t moreBytes, double load) {
    if (!server.cfg.maxmemory || load > 1.618) return 1;
    EvictParams p;
    fillParams(&p);
    size_t used;
    evictOverLimit(&p, &used, NULL);
    return used + moreBytes <= server.cfg.maxmemory;
}

void maxmemoryInit(void) {
    dbHooks.keyEvicted = keyEvicted;
    dbHooks.tableGrowAllowed = tableGrowAllowed;
    serverAddBeforeSleepHook(evictClientsBeforeSleep);
    serverAddCronHook(clientsTrackingCron);
    clientAddFreeHook(clientMemoryForget);
}

/* --- MEMORY --- */

void memoryOverhead(MemoryOverhead *m) {
    memset(m, 0, sizeof(*m));
    /* The script figures first: were a Lua VM missing (scriptCreateVms
     * makes both at startup), they would create it, and its memory must
     * be in the total this reports (a server set to this figure plus a
     * margin is not over it at the next command). */
    ScriptMemoryInfo sm = {0};
    evalMemoryInfo(&sm);
    functionsMemoryInfo(&sm);
    m->total = xmallocUsed();
    m->peak = statsPeakMemory();
    if (m->peak < m->total) m->peak = m->total;
    m->startup = statsStartupMemory();
    for (Client *c = server.net.clients; c; c = c->nextClient) {
        if (clientIsFake(c)) continue;
        /* Bytes a reply sends from a stored value (pinned) are the
         * dataset's, not the client's: they are not overhead. */
        size_t used = clientMemoryUsage(c) - c->replyPinnedBytes;
        /* A replica's place in the shared replication buffer is counted
         * once below, not per replica. */
        if (c->flags & CLIENT_SLAVE) m->clientsReplicas += used - replClientPendingMemory(c);
        else m->clientsNormal += used;
    }
    m->clientsReplicas += replReplicaSharedMemory();
    m->replBacklog = replBacklogMemory();
    m->replBuffers = m->replBacklog + replReplicaOutputMemory();
    m->aofBuffer = aofBufferMemory();
    m->luaCaches = sm.scriptsEval;
    m->functionsCaches = sm.functions;
    m->overheadTotal = m->startup + m->replBacklog + m->clientsReplicas + m->clientsNormal + m->aofBuffer +
                       m->luaCaches + m->functionsCaches;
    for (int i = 0; i < server.cfg.databases; i++) {
        Db *db = &server.db[i];
        size_t keys = dbSize(db);
        if (!keys) continue;
        m->keys += keys;
        size_t main, expires;
        dbIndexBytes(db, &main, &expires);
        m->overheadTotal += main + expires;
        if (m->dbCount < (int)(sizeof(m->dbs) / sizeof(m->dbs[0]))) {
            m->dbs[m->dbCount].id = i;
            m->dbs[m->dbCount].main = main;
            m->dbs[m->dbCount].expires = expires;
            m->dbCount++;
        }
    }
    m->netUsed = m->total > m->startup ? m->total - m->startup : 0;
    m->bytesPerKey = m->keys ? m->netUsed / m->keys : 0;
    m->dataset = m->total > m->overheadTotal ? m->total - m->overheadTotal : 0;
    m->datasetPerc = m->netUsed ? (double)m->dataset * 100 / (double)m->netUsed : 0;
    m->peakPerc = m->peak ? (double)m->total * 100 / (double)m->peak : 0;
    xmallocStats(&m->allocated, &m->active, &m->resident);
    m->rss = xmallocRss();
}

static double ratio(size_t a, size_t b) { return b ? (double)a / (double)b : 0; }

static void pairLong(Client *c, const char *name, long long v) {
    replyBulkCString(c, name);
    replyLongLong(c, v);
}

/* Redis keeps these as floats: the digits shown are a float's. */
static void pairFloat(Client *c, const char *name, double v) {
    replyBulkCString(c, name);
    replyDouble(c, (double)(float)v);
}

static void memoryStatsCommand(Client *c) {
    MemoryOverhead m;
    memoryOverhead(&m);
    replyMapLen(c, 27 + m.dbCount);
    pairLong(c, "peak.allocated", (long long)m.peak);
    pairLong(c, "total.allocated", (long long)m.total);
    pairLong(c, "startup.allocated", (long long)m.startup);
    pairLong(c, "replication.backlog", (long long)m.replBacklog);
    pairLong(c, "clients.slaves", (long long)m.clientsReplicas);
    pairLong(c, "clients.normal", (long long)m.clientsNormal);
    pairLong(c, "cluster.links", 0);
    pairLong(c, "aof.buffer", (long long)m.aofBuffer);
    pairLong(c, "lua.caches", (long long)m.luaCaches);
    pairLong(c, "functions.caches", (long long)m.functionsCaches);
    for (int i = 0; i < m.dbCount; i++) {
        char name[32];
        snprintf(name, sizeof(name), "db.%d", m.dbs[i].id);
        replyBulkCString(c, name);
        replyMapLen(c, 3);
        pairLong(c, "overhead.hashtable.main", (long long)m.dbs[i].main);
        pairLong(c, "overhead.hashtable.expires", (long long)m.dbs[i].expires);
        pairLong(c, "overhead.hashtable.slot-to-keys", 0);
    }
    pairLong(c, "overhead.total", (long long)m.overheadTotal);
    pairLong(c, "keys.count", (long long)m.keys);
    pairLong(c, "keys.bytes-per-key", (long long)m.bytesPerKey);
    pairLong(c, "dataset.bytes", (long long)m.dataset);
    pairFloat(c, "dataset.percentage", m.datasetPerc);
    pairFloat(c, "peak.percentage", m.peakPerc);
    pairLong(c, "allocator.allocated", (long long)m.allocated);
    pairLong(c, "allocator.active", (long long)m.active);
    pairLong(c, "allocator.resident", (long long)m.resident);
    pairFloat(c, "allocator-fragmentation.ratio", ratio(m.active, m.allocated));
    pairLong(c, "allocator-fragmentation.bytes", (long long)m.active - (long long)m.allocated);
    pairFloat(c, "allocator-rss.ratio", ratio(m.resident, m.active));
    pairLong(c, "allocator-rss.bytes", (long long)m.resident - (long long)m.active);
    pairFloat(c, "rss-overhead.ratio", ratio(m.rss, m.resident));
    pairLong(c, "rss-overhead.bytes", (long long)m.rss - (long long)m.resident);
    pairFloat(c, "fragmentation", ratio(m.rss, m.total));
    pairLong(c, "fragmentation.bytes", (long long)m.rss - (long long)m.total);
}

/* MEMORY USAGE key [SAMPLES count]: the entry's block and its value, big
 * collections estimated from count elements (default 5, 0: all). */
static void memoryUsageCommand(Client *c) {
    long long samples = 5;
    for (int j = 3; j < c->argc; j++) {
        if (!strcasecmp(c->argv[j], "samples") && j + 1 < c->argc) {
            if (!stringToLongLong(c->argv[j + 1], sdsLen(c->argv[j + 1]), &samples)) {
                replyErrorNotInt(c);
                return;
            }
            if (samples < 0) {
                replyErrorSyntax(c);
                return;
            }
            j++;
        } else {
            replyErrorSyntax(c);
            return;
        }
    }
    kvobj *o = dbLookupRead(c->db, c->argv[2], sdsLen(c->argv[2]), LOOKUP_NOTOUCH | LOOKUP_NONOTIFY);
    if (!o) {
        replyNull(c);
        return;
    }
    replyLongLong(c, (long long)objectMemoryUsage(o, (size_t)samples));
}

/* A finding of MEMORY DOCTOR: when the condition holds, a paragraph. */
typedef struct DoctorFinding {
    int found;
    const char *text;
} DoctorFinding;

/* MEMORY DOCTOR.  The replies for an (almost) empty instance and for one
 * with nothing to report are Redis's (asked of the oracle); each problem
 * found gets a paragraph in Cairn's own words, on the conditions Redis
 * looks at: a past peak far above current use, allocator fragmentation or
 * RSS overhead, RSS far above what the allocator holds, big client
 * buffers. */
static void memoryDoctorCommand(Client *c) {
    MemoryOverhead m;
    memoryOverhead(&m);
    if (m.total < 1024 * 1024 * 5) {
        const char *s = "Hi Sam, this instance is empty or is using very little memory, my issues detector can't be "
                        "used in these conditions. Please, leave for your mission on Earth and fill it with some "
                        "data. The new Sam and I will be back to our programming as soon as I finished rebooting.\n";
        replyVerbatim(c, s, strlen(s), "txt");
        return;
    }
    const size_t tenMb = 10 * 1024 * 1024;
    unsigned long nclients = 0, nreplicas = 0;
    for (Client *cl = server.net.clients; cl; cl = cl->nextClient) {
        if (clientIsFake(cl)) continue;
        if (cl->flags & CLIENT_SLAVE) nreplicas++;
        else nclients++;
    }
    DoctorFinding findings[] = {
        {m.peak > m.total / 2 * 3,
         " * Peak memory: the instance once used over 1.5 times the memory it uses now. Memory freed after a "
         "peak often stays with the process, which shows as fragmentation; MEMORY PURGE may return some of it.\n\n"},
        {ratio(m.active, m.allocated) > 1.1 && m.active - m.allocated > tenMb,
         " * High allocator fragmentation: the allocator's active pages exceed the allocated bytes by more than "
         "10%, usually after a peak or a workload of very mixed sizes.\n\n"},
        {ratio(m.resident, m.active) > 1.1 && m.resident - m.active > tenMb,
         " * High allocator RSS overhead: the allocator keeps resident pages more than 10% beyond its active "
         "ones; MEMORY PURGE may reclaim them.\n\n"},
        {ratio(m.rss, m.resident) > 1.1 && m.rss - m.resident > tenMb,
         " * High process RSS overhead: the process is resident well beyond what the allocator holds (Lua, "
         "thread stacks, libraries).\n\n"},
        {nclients && m.clientsNormal / nclients > 200 * 1024,
         " * Big client buffers: clients use over 200k each on average (slow pub/sub readers, big replies or long "
         "pipelines); CLIENT LIST shows which ones.\n\n"},
        {nreplicas && m.clientsReplicas / nreplicas > tenMb,
         " * Big replica buffers: replicas hold over 10 MB of output each on average; they read slower than the "
         "writes come (network, or a replica busy loading), and client-output-buffer-limit replica bounds it.\n\n"},
    };
    sds s = sdsEmpty();
    for (size_t i = 0; i < sizeof(findings) / sizeof(findings[0]); i++)
        if (findings[i].found) s = sdsCat(s, findings[i].text);
    sds out;
    if (sdsLen(s)) {
        out = sdsCatPrintf(sdsEmpty(), "Sam, I found these memory issues in this instance:\n\n%s",
                           s);
    } else {
        out = sdsNew("Hi Sam, I can't find any memory issue in your instance. I can only account for what occurs "
                     "on this base.\n");
    }
    replyVerbatim(c, out, sdsLen(out), "txt");
    sdsFree(out);
    sdsFree(s);
}

static void appendReport(void *ctx, const char *text) {
    sds *s = ctx;
    *s = sdsCat(*s, text);
}

static void memoryMallocStatsCommand(Client *c) {
    sds s = sdsEmpty();
    xmallocStatsReport(appendReport, &s);
    replyVerbatim(c, s, sdsLen(s), "txt");
    sdsFree(s);
}

static void memoryPurgeCommand(Client *c) {
    xmallocPurge();
    replyOk(c);
}

static void memoryHelpCommand(Client *c) {
    static const char *help[] = {
        "DOCTOR",
        "    Return memory problems reports.",
        "MALLOC-STATS",
        "    Return internal statistics report from the memory allocator.",
        "PURGE",
        "    Attempt to purge dirty pages for reclamation by the allocator.",
        "STATS",
        "    Return information about the memory usage of the server.",
        "USAGE <key> [SAMPLES <count>]",
        "    Return memory in bytes used by <key> and its value. Nested values are",
        "    sampled up to <count> times (default: 5, 0 means sample all).",
        NULL,
    };
    replyHelp(c, help);
}

static Command memorySubcommands[] = {
    {.name = "doctor", .proc = memoryDoctorCommand},
    {.name = "malloc-stats", .proc = memoryMallocStatsCommand},
    {.name = "purge", .proc = memoryPurgeCommand},
    {.name = "stats", .proc = memoryStatsCommand},
    {.name = "usage", .proc = memoryUsageCommand},
    {.name = "help", .proc = memoryHelpCommand},
    {0},
};

Command memoryCommands[] = {
    {.name = "memory", .subcommands = memorySubcommands},
    {0},
};

/* ------------------------------------------------------------------------ */
/* Configuration                                                             */
/* ------------------------------------------------------------------------ */

static int applyMaxmemoryConfig(const char **err) {
    (void)err;
    applyMaxmemory();
    return 0;
}

/* maxmemory-clients as given, normalized ("0", "1048576", "5%"). */
static sds maxmemoryClientsText;

/* maxmemory-clients: a memory value, or a percentage of maxmemory; kept
 * in server.cfg (maxmemoryClients, maxmemoryClientsPercent). */
static int setMaxmemoryClients(ConfigDef *d, sds *argv, int argc, const char **err) {
    if (argc != 1) {
        *err = "wrong number of arguments";
        return -1;
    }
    const char *arg = argv[0];
    size_t n = strlen(arg);
    unsigned long long v;
    int percent = n && arg[n - 1] == '%';
    sds num = sdsNewLen(arg, percent ? n - 1 : n);
    int ok = configParseMemory(num, &v) == 0 && (!percent || (n > 1 && strspn(num, "0123456789") == n - 1));
    sdsFree(num);
    if (!ok) {
        *err = "argument must be a memory or percent value";
        return -1;
    }
    sdsFree(maxmemoryClientsText);
    maxmemoryClientsText = percent ? sdsCatPrintf(sdsEmpty(), "%llu%%", v) : sdsCatPrintf(sdsEmpty(), "%llu", v);
    server.cfg.maxmemoryClientsPercent = percent;
    server.cfg.maxmemoryClients = v;
    return 0;
}

static sds getMaxmemoryClients(const ConfigDef *d) {
    return maxmemoryClientsText ? sdsDup(maxmemoryClientsText) : sdsEmpty();
}

static const ConfigEnum maxmemoryPolicyEnum[] = {{"volatile-lru", MAXMEMORY_VOLATILE_LRU},
                                                 {"volatile-lfu", MAXMEMORY_VOLATILE_LFU},
                                                 {"volatile-random", MAXMEMORY_VOLATILE_RANDOM},
                                                 {"volatile-ttl", MAXMEMORY_VOLATILE_TTL},
                                                 {"allkeys-lru", MAXMEMORY_ALLKEYS_LRU},
                                                 {"allkeys-lfu", MAXMEMORY_ALLKEYS_LFU},
                                                 {"allkeys-random", MAXMEMORY_ALLKEYS_RANDOM},
                                                 {"noeviction", MAXMEMORY_NO_EVICTION},
                                                 {NULL, 0}};

/* The eviction settings; maxmemory-policy and the LFU ones live in the
 * keyspace's DbConfig (server.cfg.keyspace, read by db/evict.c). */
static ConfigDef maxmemoryConfig[] = {
    {.name = "maxmemory", .type = CT_ULL, .flags = CF_MEMORY, .var = &server.cfg.maxmemory, .deflt = "0",
     .apply = applyMaxmemoryConfig, .rank = CONFIG_RANK_MEMORY + 0},
    CONFIG_ENUM("maxmemory-policy", NULL, 0, server.cfg.keyspace.maxmemoryPolicy, maxmemoryPolicyEnum, "noeviction",
                .rank = CONFIG_RANK_MEMORY + 1),
    CONFIG_INT("maxmemory-samples", NULL, 0, maxmemorySamples, 1, INT_MAX, "5", .rank = CONFIG_RANK_MEMORY + 2),
    CONFIG_INT("maxmemory-eviction-tenacity", NULL, 0, maxmemoryEvictionTenacity, 0, 100, "10",
               .rank = CONFIG_RANK_MEMORY + 3),
    CONFIG_INT("lfu-log-factor", NULL, 0, server.cfg.keyspace.lfuLogFactor, 0, INT_MAX, "10",
               .rank = CONFIG_RANK_MEMORY + 4),
    CONFIG_INT("lfu-decay-time", NULL, 0, server.cfg.keyspace.lfuDecayTime, 0, INT_MAX, "1",
               .rank = CONFIG_RANK_MEMORY + 5),
    /* Cairn's own: small collections idle this long are packed (db.h). */
    CONFIG_INT("cairn-pack-idle-seconds", NULL, CF_HIDDEN, server.cfg.keyspace.packIdleSeconds, 0, INT_MAX, "5",
               .rank = CONFIG_RANK_CAIRN + 40),
    CONFIG_SPECIAL("maxmemory-clients", NULL, 0, "0", setMaxmemoryClients, getMaxmemoryClients),
};

void maxmemoryRegisterConfig(void) { configRegister(maxmemoryConfig, CONFIG_COUNT_OF(maxmemoryConfig)); }
