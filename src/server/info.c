/* info.c -- INFO, TIME and LASTSAVE.
 *
 * INFO prints Redis 7.0.15's sections, fields and field order; every value is
 * Cairn's real state, and features Cairn does not have yet (replicas,
 * persistence jobs, Lua, modules, cluster) show the values an idle Redis
 * without them shows.  Sections are chosen as Redis does:
 *   - no argument or "default": the default sections;
 *   - "all": every built-in section; "everything" and "modules" add the
 *     sections modules register (RedisModule_RegisterInfoFunc), which a
 *     module's or section's name also selects;
 *   - otherwise the named sections (case-insensitive), unknown names ignored.
 * The output keeps the fixed section order whatever the argument order,
 * and each line ends in CRLF, with an empty line between sections. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "core/buildinfo.h"
#include "core/client.h"
#include "core/command.h"
#include "core/net.h"
#include "core/server.h"
#include "script/script.h"
#include "db/db.h"
#include "ds/alloc.h"
#include "db/lazyfree.h"
#include "ds/util.h"
#include "persist/persist.h"
#include "persist/rdb.h"
#include "repl/repl.h"
#include "server/cluster.h"
#include "server/info.h"
#include "server/maxmemory.h"
#include "server/pubsub.h"
#include "server/tracking.h"
#include "types/hash.h"
#include "server/stats.h"

typedef sds InfoSectionProc(sds s);

/* --- Server --- */

static const char *supervisedName(int mode) {
    switch (mode) {
    case SUPERVISED_SYSTEMD: return "systemd";
    case SUPERVISED_UPSTART: return "upstart";
    default: return "no";
    }
}

static sds infoServer(sds s) {
    struct utsname name;
    if (uname(&name) != 0) memset(&name, 0, sizeof(name));
    long long nowUs = ustime();
    long long uptime = (nowUs / 1000 - server.time.startMs) / 1000;
    s = sdsCatPrintf(s,
                     "redis_version:%s\r\n"
                     "cairn_version:%s\r\n"
                     "cairn_lua_engine:%s\r\n"
                     "redis_git_sha1:%s\r\n"
                     "redis_git_dirty:%d\r\n"
                     "redis_build_id:%s\r\n"
                     "redis_mode:standalone\r\n"
                     "os:%s %s %s\r\n"
                     "arch_bits:%d\r\n"
                     "monotonic_clock:POSIX clock_gettime\r\n"
                     "multiplexing_api:epoll\r\n"
                     "atomicvar_api:c11-builtin\r\n"
                     "gcc_version:%d.%d.%d\r\n"
                     "process_id:%lld\r\n"
                     "process_supervised:%s\r\n"
                     "run_id:%s\r\n"
                     "tcp_port:%d\r\n"
                     "server_time_usec:%lld\r\n"
                     "uptime_in_seconds:%lld\r\n"
                     "uptime_in_days:%lld\r\n"
                     "hz:%d\r\n"
                     "configured_hz:%d\r\n"
                     "lru_clock:%u\r\n"
                     "executable:%s\r\n"
                     "config_file:%s\r\n"
                     "io_threads_active:0\r\n",
                     REDIS_COMPAT_VERSION, CAIRN_VERSION, scriptLuaEngine(), buildInfoGitSha1(),
                     buildInfoGitDirty(), buildInfoId(), name.sysname, name.release,
                     name.machine, (int)(sizeof(long) * 8),
#ifdef __GNUC__
                     __GNUC__, __GNUC_MINOR__, __GNUC_PATCHLEVEL__,
#else
                     0, 0, 0,
#endif
                     (long long)server.pid, supervisedName(server.cfg.supervised), server.runId,
                     server.cfg.port, nowUs, uptime, uptime / 86400,
                     server.hzCurrent ? server.hzCurrent : server.cfg.hz, server.cfg.hz,
                     dbLruClock, server.executable ? server.executable : "",
                     configFilePath() ? configFilePath() : "");
    /* While a shutdown waits for lagging replicas (server/shutdown.c). */
    if (server.shutdownMs)
        s = sdsCatPrintf(s, "shutdown_in_milliseconds:%lld\r\n", server.shutdownMs - server.time.nowMs);
    return s;
}

/* --- Clients --- */

static sds infoClients(sds s) {
    size_t maxIn = 0, maxOut = 0;
    long long blocked = 0, tracking = 0;
    for (Client *c = server.net.clients; c; c = c->nextClient) {
        ProtoPartial part; /* a big argument being read counts as Redis's query buffer sized for it */
        c->proto->partial(c->protoState, &part);
        size_t in = (c->querybuf ? sdsAllocSize(c->querybuf) : 0) + part.bulkDeclared;
        size_t out = c->replyBytes;
        if (in > maxIn) maxIn = in;
        if (out > maxOut) maxOut = out;
        if (c->flags & CLIENT_BLOCKED) blocked++;
        if (c->flags & CLIENT_TRACKING) tracking++;
    }
    return sdsCatPrintf(s,
                        "connected_clients:%lu\r\n"
                        "cluster_connections:0\r\n"
                        "maxclients:%d\r\n"
                        "client_recent_max_input_buffer:%zu\r\n"
                        "client_recent_max_output_buffer:%zu\r\n"
                        "blocked_clients:%lld\r\n"
                        "tracking_clients:%lld\r\n"
                        "clients_in_timeout_table:0\r\n",
                        server.net.numClients, server.cfg.maxclients, maxIn, maxOut, blocked, tracking);
}

/* --- Memory --- */

static const char *maxmemoryPolicyName(int p) {
    static const char *names[] = {"volatile-lru", "volatile-lfu", "volatile-random", "volatile-ttl",
                                  "allkeys-lru",  "allkeys-lfu",  "allkeys-random",  "noeviction"};
    return p >= 0 && p < (int)(sizeof(names) / sizeof(names[0])) ? names[p] : "noeviction";
}

static sds infoMemory(sds s) {
    MemoryOverhead m;
    memoryOverhead(&m);
    size_t used = m.total, rss = m.rss, peak = m.peak, startup = m.startup;
    size_t overhead = m.overheadTotal < used ? m.overheadTotal : used;
    size_t dataset = m.dataset, netUsed = m.netUsed;
    long long pages = sysconf(_SC_PHYS_PAGES), pageSize = sysconf(_SC_PAGESIZE);
    unsigned long long sysMem = pages > 0 && pageSize > 0 ? (unsigned long long)pages * pageSize : 0;
    double fragRatio = used ? (double)rss / used : 0;
    size_t allocated = m.allocated, active = m.active, resident = m.resident;

    s = sdsCatPrintf(s, "used_memory:%zu\r\nused_memory_human:", used);
    s = statsCatHumanBytes(s, used);
    s = sdsCatPrintf(s, "\r\nused_memory_rss:%zu\r\nused_memory_rss_human:", rss);
    s = statsCatHumanBytes(s, rss);
    s = sdsCatPrintf(s, "\r\nused_memory_peak:%zu\r\nused_memory_peak_human:", peak);
    s = statsCatHumanBytes(s, peak);
    s = sdsCatPrintf(s,
                     "\r\nused_memory_peak_perc:%.2f%%\r\n"
                     "used_memory_overhead:%zu\r\n"
                     "used_memory_startup:%zu\r\n"
                     "used_memory_dataset:%zu\r\n"
                     "used_memory_dataset_perc:%.2f%%\r\n"
                     "allocator_allocated:%zu\r\n"
                     "allocator_active:%zu\r\n"
                     "allocator_resident:%zu\r\n"
                     "total_system_memory:%llu\r\n"
                     "total_system_memory_human:",
                     peak ? (double)used * 100 / peak : 0, overhead, startup, dataset,
                     netUsed ? (double)dataset * 100 / netUsed : 0, allocated, active, resident, sysMem);
    s = statsCatHumanBytes(s, sysMem);
    ScriptMemoryInfo sm = {0};
    evalMemoryInfo(&sm);
    functionsMemoryInfo(&sm);
    size_t vmTotal = sm.vmEval + sm.vmFunctions, scriptsTotal = sm.scriptsEval + sm.functions;
    s = sdsCatPrintf(s, "\r\nused_memory_lua:%zu\r\nused_memory_vm_eval:%zu\r\nused_memory_lua_human:", sm.vmEval,
                     sm.vmEval);
    s = statsCatHumanBytes(s, sm.vmEval);
    s = sdsCatPrintf(s,
                     "\r\nused_memory_scripts_eval:%zu\r\nnumber_of_cached_scripts:%zu\r\n"
                     "number_of_functions:%zu\r\nnumber_of_libraries:%zu\r\nused_memory_vm_functions:%zu\r\n"
                     "used_memory_vm_total:%zu\r\nused_memory_vm_total_human:",
                     sm.scriptsEval, sm.numScripts, sm.numFunctions, sm.numLibraries, sm.vmFunctions, vmTotal);
    s = statsCatHumanBytes(s, vmTotal);
    s = sdsCatPrintf(s, "\r\nused_memory_functions:%zu\r\nused_memory_scripts:%zu\r\nused_memory_scripts_human:",
                     sm.functions, scriptsTotal);
    s = statsCatHumanBytes(s, scriptsTotal);
    s = sdsCat(s, "\r\n");
    s = sdsCatPrintf(s, "maxmemory:%llu\r\nmaxmemory_human:", server.cfg.maxmemory);
    s = statsCatHumanBytes(s, server.cfg.maxmemory);
    s = sdsCatPrintf(s,
                     "\r\nmaxmemory_policy:%s\r\n"
                     "allocator_frag_ratio:%.2f\r\n"
                     "allocator_frag_bytes:%lld\r\n"
                     "allocator_rss_ratio:%.2f\r\n"
                     "allocator_rss_bytes:%lld\r\n"
                     "rss_overhead_ratio:%.2f\r\n"
                     "rss_overhead_bytes:%lld\r\n"
                     "mem_fragmentation_ratio:%.2f\r\n"
                     "mem_fragmentation_bytes:%lld\r\n"
                     "mem_not_counted_for_evict:%zu\r\n"
                     "mem_replication_backlog:%zu\r\n"
                     "mem_total_replication_buffers:%zu\r\n"
                     "mem_clients_slaves:%zu\r\n"
                     "mem_clients_normal:%zu\r\n"
                     "mem_cluster_links:0\r\n"
                     "mem_aof_buffer:%zu\r\n"
                     "mem_allocator:%s\r\n"
                     "active_defrag_running:0\r\n"
                     "lazyfree_pending_objects:%zu\r\n"
                     "lazyfreed_objects:%zu\r\n",
                     maxmemoryPolicyName(server.cfg.keyspace.maxmemoryPolicy),
                     allocated ? (double)active / allocated : 0, (long long)active - (long long)allocated,
                     active ? (double)resident / active : 0, (long long)resident - (long long)active,
                     resident ? (double)rss / resident : 0, (long long)rss - (long long)resident, fragRatio,
                     (long long)rss - (long long)used, maxmemoryNotCounted(), m.replBacklog, m.replBuffers,
                     m.clientsReplicas, m.clientsNormal, m.aofBuffer, xmallocLibrary(), lazyfreePendingObjects(),
                     lazyfreedObjects());
    /* Cairn's own: packed idle collections (db.h). */
    s = sdsCatPrintf(s, "cairn_packed_keys:%lld\r\ncairn_packs:%lld\r\ncairn_unpacks:%lld\r\ncairn_pack_passes:%lld\r\n",
                     dbPackStats.packedKeys, dbPackStats.packs, dbPackStats.unpacks, dbPackStats.passes);
    return s;
}

/* --- Persistence --- */

static sds infoPersistence(sds s) { return persistInfoSection(s); }

/* --- Stats --- */

static sds infoStats(sds s) {
    const ServerStats *st = &server.stats;
    /* Redis 8's expired_subkeys (hash fields deleted by expiry), shown once
     * a field TTL was used: until then the layout stays Redis 7.0's. */
    char subkeys[64] = "";
    if (hashFieldTtlEverUsed())
        snprintf(subkeys, sizeof(subkeys), "expired_subkeys:%lld\r\n", hashExpiredFieldCount());
    return sdsCatPrintf(s,
                        "total_connections_received:%lld\r\n"
                        "total_commands_processed:%lld\r\n"
                        "instantaneous_ops_per_sec:%lld\r\n"
                        "total_net_input_bytes:%lld\r\n"
                        "total_net_output_bytes:%lld\r\n"
                        "total_net_repl_input_bytes:0\r\n"
                        "total_net_repl_output_bytes:0\r\n"
                        "instantaneous_input_kbps:%.2f\r\n"
                        "instantaneous_output_kbps:%.2f\r\n"
                        "instantaneous_input_repl_kbps:0.00\r\n"
                        "instantaneous_output_repl_kbps:0.00\r\n"
                        "rejected_connections:%lld\r\n"
                        "sync_full:%lld\r\n"
                        "sync_partial_ok:%lld\r\n"
                        "sync_partial_err:%lld\r\n"
                        "%s"
                        "expired_keys:%lld\r\n"
                        "expired_stale_perc:%.2f\r\n"
                        "expired_time_cap_reached_count:%lld\r\n"
                        "expire_cycle_cpu_milliseconds:%lld\r\n"
                        "evicted_keys:%lld\r\n"
                        "evicted_clients:%lld\r\n"
                        "total_eviction_exceeded_time:%lld\r\n"
                        "current_eviction_exceeded_time:%lld\r\n"
                        "keyspace_hits:%lld\r\n"
                        "keyspace_misses:%lld\r\n"
                        "pubsub_channels:%zu\r\n"
                        "pubsub_patterns:%zu\r\n"
                        "pubsubshard_channels:%zu\r\n"
                        "latest_fork_usec:%lld\r\n"
                        "total_forks:%lld\r\n"
                        "migrate_cached_sockets:%d\r\n"
                        "slave_expires_tracked_keys:0\r\n"
                        "active_defrag_hits:0\r\n"
                        "active_defrag_misses:0\r\n"
                        "active_defrag_key_hits:0\r\n"
                        "active_defrag_key_misses:0\r\n"
                        "total_active_defrag_time:0\r\n"
                        "current_active_defrag_time:0\r\n"
                        "tracking_total_keys:%llu\r\n"
                        "tracking_total_items:%llu\r\n"
                        "tracking_total_prefixes:%llu\r\n"
                        "unexpected_error_replies:%lld\r\n"
                        "total_error_replies:%lld\r\n"
                        "dump_payload_sanitizations:%lld\r\n"
                        "total_reads_processed:%lld\r\n"
                        "total_writes_processed:%lld\r\n"
                        "io_threaded_reads_processed:0\r\n"
                        "io_threaded_writes_processed:0\r\n"
                        "reply_buffer_shrinks:%lld\r\n"
                        "reply_buffer_expands:%lld\r\n",
                        st->numConnections, st->numCommands, statsInstantaneousOps(), st->netInputBytes,
                        st->netOutputBytes, statsInstantaneousInputKbps(), statsInstantaneousOutputKbps(),
                        st->rejectedConns, replStatSyncs(0), replStatSyncs(1), replStatSyncs(2), subkeys, dbStats.expiredKeys, dbStats.expiredStalePerc * 100,
                        dbStats.expiredTimeCapReached, dbStats.expireCycleCpuUs / 1000, st->evictedKeys,
                        st->evictedClients, maxmemoryExceededTotalMs(), maxmemoryExceededCurrentMs(), dbStats.keyspaceHits, dbStats.keyspaceMisses,
                        pubsubChannelCount(), pubsubPatternCount(), pubsubShardChannelCount(),
                        persistLatestForkUsec(), persistTotalForks(), migrateCachedSockets(), trackingTotalKeys(), trackingTotalItems(), trackingTotalPrefixes(),
                        st->unexpectedErrorReplies, st->totalErrorReplies,
                        rdbPayloadSanitizations,
                        st->totalReadsProcessed,
                        st->totalWritesProcessed, st->replyBufferShrinks, st->replyBufferExpands);
}

/* --- Replication --- */

static sds infoReplication(sds s) { return replInfoSection(s); }

/* --- CPU --- */

static sds catTimeval(sds s, const char *name, struct timeval tv) {
    return sdsCatPrintf(s, "%s:%ld.%06ld\r\n", name, (long)tv.tv_sec, (long)tv.tv_usec);
}

static sds infoCpu(sds s) {
    struct rusage self, children, thread;
    getrusage(RUSAGE_SELF, &self);
    getrusage(RUSAGE_CHILDREN, &children);
    getrusage(RUSAGE_THREAD, &thread);
    s = catTimeval(s, "used_cpu_sys", self.ru_stime);
    s = catTimeval(s, "used_cpu_user", self.ru_utime);
    s = catTimeval(s, "used_cpu_sys_children", children.ru_stime);
    s = catTimeval(s, "used_cpu_user_children", children.ru_utime);
    s = catTimeval(s, "used_cpu_sys_main_thread", thread.ru_stime);
    return catTimeval(s, "used_cpu_user_main_thread", thread.ru_utime);
}

/* --- Modules (src/module fills it), Cluster --- */

static InfoSectionProc *modulesSection;
static sds infoModules(sds s) { return modulesSection ? modulesSection(s) : s; }
void infoSetModulesSection(sds (*fn)(sds s)) { modulesSection = fn; }
static sds (*moduleSectionsHook)(sds s, char **names, int nnames, int *first);
void infoSetModuleSectionsHook(sds (*fn)(sds s, char **names, int nnames, int *first)) { moduleSectionsHook = fn; }

static sds infoCluster(sds s) { return clusterInfoSection(s); }

/* --- Commandstats, Latencystats --- */

static int commandHasStats(const Command *cmd) {
    return cmd->stats.calls || cmd->stats.failedCalls || cmd->stats.rejectedCalls;
}

static sds catCommandStats(sds s, const Command *cmd) {
    const CommandStats *st = &cmd->stats;
    if (commandHasStats(cmd))
        s = sdsCatPrintf(s, "cmdstat_%s:calls=%lld,usec=%lld,usec_per_call=%.2f,rejected_calls=%lld,failed_calls=%lld\r\n",
                         cmd->fullname ? cmd->fullname : cmd->name, st->calls, st->usec,
                         st->calls ? (double)st->usec / (double)st->calls : 0, st->rejectedCalls,
                         st->failedCalls);
    return s;
}

/* Applies fn to every command and subcommand: a container, then its
 * subcommands. */
static sds forEachCommand(sds s, sds (*fn)(sds, const Command *)) {
    unsigned cursor = 0;
    Command *cmd;
    while ((cmd = commandIterate(&cursor)) != NULL) {
        s = fn(s, cmd);
        for (Command *sub = cmd->subcommands; sub && sub->name; sub++) s = fn(s, sub);
    }
    return s;
}

static sds infoCommandStats(sds s) { return forEachCommand(s, catCommandStats); }

static sds infoLatencyStats(sds s) { return forEachCommand(s, statsCatLatencyLine); }

/* --- Errorstats: sorted by prefix, as Redis's radix tree yields them --- */

static int compareErrorStat(const void *a, const void *b) {
    const ErrorStat *x = *(const ErrorStat *const *)a, *y = *(const ErrorStat *const *)b;
    return strcmp(x->prefix, y->prefix);
}

static sds infoErrorStats(sds s) {
    size_t n = 0;
    for (ErrorStat *e = server.errorStats; e; e = e->next) n++;
    if (n == 0) return s;
    ErrorStat **sorted = xmalloc(n * sizeof(*sorted));
    n = 0;
    for (ErrorStat *e = server.errorStats; e; e = e->next) sorted[n++] = e;
    qsort(sorted, n, sizeof(*sorted), compareErrorStat);
    for (size_t i = 0; i < n; i++)
        s = sdsCatPrintf(s, "errorstat_%s:count=%lld\r\n", sorted[i]->prefix, sorted[i]->count);
    xfree(sorted);
    return s;
}

/* --- Keyspace --- */

static sds infoKeyspace(sds s) {
    for (int i = 0; i < server.cfg.databases; i++) {
        Db *db = &server.db[i];
        size_t keys = dbSize(db), expires = dbExpiresCount(db);
        if (keys == 0 && expires == 0) continue;
        s = sdsCatPrintf(s, "db%d:keys=%zu,expires=%zu,avg_ttl=%lld", i, keys, expires, dbAvgTtl(db));
        /* Redis 8's subexpiry (hashes with field TTLs), once they were used. */
        if (hashFieldTtlEverUsed()) s = sdsCatPrintf(s, ",subexpiry=%zu", hashDbSubexpiry(i));
        s = sdsCat(s, "\r\n");
    }
    return s;
}

/* --- Section selection --- */

typedef struct InfoSection {
    const char *name;   /* lowercase, as INFO takes it */
    const char *title;  /* header text */
    InfoSectionProc *proc;
    int isDefault;
} InfoSection;

static const InfoSection sections[] = {
    {"server", "Server", infoServer, 1},
    {"clients", "Clients", infoClients, 1},
    {"memory", "Memory", infoMemory, 1},
    {"persistence", "Persistence", infoPersistence, 1},
    {"stats", "Stats", infoStats, 1},
    {"replication", "Replication", infoReplication, 1},
    {"cpu", "CPU", infoCpu, 1},
    {"modules", "Modules", infoModules, 1},
    {"commandstats", "Commandstats", infoCommandStats, 0},
    {"errorstats", "Errorstats", infoErrorStats, 1},
    {"latencystats", "Latencystats", infoLatencyStats, 0},
    {"cluster", "Cluster", infoCluster, 1},
    {"keyspace", "Keyspace", infoKeyspace, 1},
};
#define SECTION_COUNT (sizeof(sections) / sizeof(sections[0]))

/* Marks in want[] the sections that INFO's arguments select. */
static void selectSections(int argc, char **argv, int *want) {
    if (argc == 0) {
        for (size_t i = 0; i < SECTION_COUNT; i++) want[i] = sections[i].isDefault;
        return;
    }
    for (int a = 0; a < argc; a++) {
        if (argIs(argv[a], "all") || argIs(argv[a], "everything")) {
            for (size_t i = 0; i < SECTION_COUNT; i++) want[i] = 1;
        } else if (argIs(argv[a], "default")) {
            for (size_t i = 0; i < SECTION_COUNT; i++) want[i] |= sections[i].isDefault;
        } else {
            for (size_t i = 0; i < SECTION_COUNT; i++)
                if (argIs(argv[a], sections[i].name)) want[i] = 1;
        }
    }
}

/* The INFO text for the sections named in argv (none = default).  The
 * caller owns the result. */
static sds infoGenerate(int argc, char **argv) {
    int want[SECTION_COUNT] = {0};
    selectSections(argc, argv, want);
    sds s = sdsEmpty();
    int first = 1;
    for (size_t i = 0; i < SECTION_COUNT; i++) {
        if (!want[i]) continue;
        if (!first) s = sdsCat(s, "\r\n");
        first = 0;
        s = sdsCatPrintf(s, "# %s\r\n", sections[i].title);
        s = sections[i].proc(s);
    }
    /* Module sections: with "everything" or "modules" all of them, else
     * those the names no built-in section took (Redis's rule; "all" and
     * the default have none). */
    if (moduleSectionsHook && argc > 0) {
        int every = 0, n = 0;
        char **names = xmalloc(sizeof(char *) * (size_t)argc);
        for (int a = 0; a < argc; a++) {
            if (argIs(argv[a], "everything") || argIs(argv[a], "modules")) every = 1;
            int known = argIs(argv[a], "all") || argIs(argv[a], "default") || argIs(argv[a], "everything");
            for (size_t i = 0; i < SECTION_COUNT && !known; i++) known = argIs(argv[a], sections[i].name);
            if (!known) names[n++] = argv[a];
        }
        if (every || n) s = moduleSectionsHook(s, names, every ? -1 : n, &first);
        xfree(names);
    }
    return s;
}

sds infoText(int argc, char **argv) { return infoGenerate(argc, argv); }

static void infoCommand(Client *c) {
    sds s = infoGenerate(c->argc - 1, c->argv + 1);
    replyVerbatim(c, s, sdsLen(s), "txt");
    sdsFree(s);
}

/* TIME: the wall clock now (not the cached command time), as Redis does. */
static void timeCommand(Client *c) {
    long long us = ustime();
    replyArrayLen(c, 2);
    replyBulkLongLong(c, us / 1000000);
    replyBulkLongLong(c, us % 1000000);
}

/* LASTSAVE: the last successful save; the start time until one happens. */
static void lastsaveCommand(Client *c) {
    replyLongLong(c, server.lastSaveUnix ? server.lastSaveUnix : server.time.startMs / 1000);
}

Command infoCommands[] = {
    {.name = "info", .proc = infoCommand},
    {.name = "time", .proc = timeCommand},
    {.name = "lastsave", .proc = lastsaveCommand},
    {0},
};
