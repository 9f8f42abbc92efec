/* sentinel_info.c -- INFO in Sentinel mode: the sections redis-sentinel
 * 7.0 has (Server, Clients, Stats, CPU, Sentinel; "default", "all",
 * "everything" or any list of names), with the same fields in the same
 * order.  The data server's sections that have no meaning here (memory,
 * persistence, replication, keyspace...) are not part of it, as in Redis.
 *
 * Invariants:
 *   - The counters in SentinelStats are only ever incremented by the
 *     client layer (sentinel_client.c); the instantaneous rates are the
 *     mean of the last 16 samples taken every 100 ms (sentinelStatsSample),
 *     as Redis's trackInstantaneousMetric. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "core/buildinfo.h"
#include "core/server.h"
#include "ds/sds.h"
#include "ds/util.h"
#include "server/sentinel_int.h"

SentinelStats sstats;

#define SAMPLES 16
enum { M_OPS, M_IN, M_OUT, M_N };
static struct {
    long long lastMs, lastValue;
    long long samples[SAMPLES];
    int idx;
} metric[M_N];

static void track(int m, long long value, long long now) {
    long long dt = now - metric[m].lastMs;
    if (metric[m].lastMs && dt > 0)
        metric[m].samples[metric[m].idx] = (value - metric[m].lastValue) * 1000 / dt;
    metric[m].idx = (metric[m].idx + 1) % SAMPLES;
    metric[m].lastMs = now;
    metric[m].lastValue = value;
}

static long long rate(int m) {
    long long sum = 0;
    for (int i = 0; i < SAMPLES; i++)
        sum += metric[m].samples[i];
    return sum / SAMPLES;
}

void sentinelStatsSample(long long now) {
    track(M_OPS, (long long)sentinel.commandsProcessed, now);
    track(M_IN, sstats.netInput, now);
    track(M_OUT, sstats.netOutput, now);
}

static const char *supervisedName(int mode) {
    switch (mode) {
    case SUPERVISED_SYSTEMD: return "systemd";
    case SUPERVISED_UPSTART: return "upstart";
    default: return "no";
    }
}

static sds catTimeval(sds s, const char *name, struct timeval tv) {
    return sdsCatPrintf(s, "%s:%ld.%06ld\r\n", name, (long)tv.tv_sec, (long)tv.tv_usec);
}

static sds sectionServer(sds s, long long now) {
    struct utsname name;
    if (uname(&name) != 0) memset(&name, 0, sizeof(name));
    long long uptime = (now - sentinel.startMs) / 1000;
    return sdsCatPrintf(s,
                        "# Server\r\nredis_version:%s\r\nredis_git_sha1:%s\r\nredis_git_dirty:%d\r\n"
                        "redis_build_id:%s\r\nredis_mode:sentinel\r\nos:%s %s %s\r\narch_bits:%d\r\n"
                        "monotonic_clock:POSIX clock_gettime\r\nmultiplexing_api:epoll\r\n"
                        "atomicvar_api:c11-builtin\r\ngcc_version:%d.%d.%d\r\nprocess_id:%d\r\n"
                        "process_supervised:%s\r\nrun_id:%s\r\ntcp_port:%d\r\nserver_time_usec:%lld\r\n"
                        "uptime_in_seconds:%lld\r\nuptime_in_days:%lld\r\nhz:10\r\nconfigured_hz:10\r\n"
                        "lru_clock:%lld\r\nexecutable:%s\r\nconfig_file:%s\r\nio_threads_active:0\r\n",
                        REDIS_COMPAT_VERSION, buildInfoGitSha1(), buildInfoGitDirty(), buildInfoId(), name.sysname,
                        name.release, name.machine, (int)(sizeof(long) * 8),
#ifdef __GNUC__
                        __GNUC__, __GNUC_MINOR__, __GNUC_PATCHLEVEL__,
#else
                        0, 0, 0,
#endif
                        (int)getpid(), supervisedName(server.cfg.supervised), sentinel.myid, sentinel.port,
                        ustime(), uptime, uptime / 86400, (now / 1000) & ((1 << 24) - 1),
                        server.executable ? server.executable : "", sentinel.configFile);
}

static sds sectionClients(sds s) {
    return sdsCatPrintf(s,
                        "# Clients\r\nconnected_clients:%d\r\ncluster_connections:0\r\nmaxclients:10000\r\n"
                        "client_recent_max_input_buffer:%zu\r\nclient_recent_max_output_buffer:%zu\r\n"
                        "blocked_clients:0\r\ntracking_clients:0\r\nclients_in_timeout_table:0\r\n",
                        sentinel.nclients, sentinelClientsMaxInput(), sentinelClientsMaxOutput());
}

static sds sectionStats(sds s) {
    int channels = 0, patterns = 0;
    sentinelPubsubCounts(&channels, &patterns);
    s = sdsCatPrintf(s,
                     "# Stats\r\ntotal_connections_received:%llu\r\ntotal_commands_processed:%llu\r\n"
                     "instantaneous_ops_per_sec:%lld\r\ntotal_net_input_bytes:%lld\r\n"
                     "total_net_output_bytes:%lld\r\ntotal_net_repl_input_bytes:0\r\n"
                     "total_net_repl_output_bytes:0\r\ninstantaneous_input_kbps:%.2f\r\n"
                     "instantaneous_output_kbps:%.2f\r\ninstantaneous_input_repl_kbps:0.00\r\n"
                     "instantaneous_output_repl_kbps:0.00\r\nrejected_connections:%lld\r\n",
                     sentinel.clientsReceived, sentinel.commandsProcessed, rate(M_OPS), sstats.netInput,
                     sstats.netOutput, (double)rate(M_IN) / 1024, (double)rate(M_OUT) / 1024, sstats.rejected);
    /* the data server's counters: nothing of them happens in Sentinel mode */
    s = sdsCat(s, "sync_full:0\r\nsync_partial_ok:0\r\nsync_partial_err:0\r\nexpired_keys:0\r\n"
                  "expired_stale_perc:0.00\r\nexpired_time_cap_reached_count:0\r\n"
                  "expire_cycle_cpu_milliseconds:0\r\nevicted_keys:0\r\nevicted_clients:0\r\n"
                  "total_eviction_exceeded_time:0\r\ncurrent_eviction_exceeded_time:0\r\nkeyspace_hits:0\r\n"
                  "keyspace_misses:0\r\n");
    s = sdsCatPrintf(s, "pubsub_channels:%d\r\npubsub_patterns:%d\r\npubsubshard_channels:0\r\n", channels,
                     patterns);
    s = sdsCat(s, "latest_fork_usec:0\r\ntotal_forks:0\r\nmigrate_cached_sockets:0\r\n"
                  "slave_expires_tracked_keys:0\r\nactive_defrag_hits:0\r\nactive_defrag_misses:0\r\n"
                  "active_defrag_key_hits:0\r\nactive_defrag_key_misses:0\r\ntotal_active_defrag_time:0\r\n"
                  "current_active_defrag_time:0\r\ntracking_total_keys:0\r\ntracking_total_items:0\r\n"
                  "tracking_total_prefixes:0\r\n");
    return sdsCatPrintf(s,
                        "unexpected_error_replies:0\r\ntotal_error_replies:%lld\r\n"
                        "dump_payload_sanitizations:0\r\ntotal_reads_processed:%lld\r\n"
                        "total_writes_processed:%lld\r\nio_threaded_reads_processed:0\r\n"
                        "io_threaded_writes_processed:0\r\nreply_buffer_shrinks:0\r\nreply_buffer_expands:0\r\n",
                        sstats.errorReplies, sstats.reads, sstats.writes);
}

static sds sectionCpu(sds s) {
    struct rusage self, children, thread;
    getrusage(RUSAGE_SELF, &self);
    getrusage(RUSAGE_CHILDREN, &children);
    getrusage(RUSAGE_THREAD, &thread);
    s = sdsCat(s, "# CPU\r\n");
    s = catTimeval(s, "used_cpu_sys", self.ru_stime);
    s = catTimeval(s, "used_cpu_user", self.ru_utime);
    s = catTimeval(s, "used_cpu_sys_children", children.ru_stime);
    s = catTimeval(s, "used_cpu_user_children", children.ru_utime);
    s = catTimeval(s, "used_cpu_sys_main_thread", thread.ru_stime);
    return catTimeval(s, "used_cpu_user_main_thread", thread.ru_utime);
}

static sds sectionSentinel(sds s, long long now) {
    s = sdsCatPrintf(s,
                     "# Sentinel\r\nsentinel_masters:%d\r\nsentinel_tilt:%d\r\nsentinel_tilt_since_seconds:%lld\r\n"
                     "sentinel_running_scripts:%d\r\nsentinel_scripts_queue_length:%d\r\n"
                     "sentinel_simulate_failure_flags:%d\r\n",
                     sentinel.nmasters, sentinel.tilt, sentinel.tilt ? (now - sentinel.tiltStart) / 1000 : -1LL,
                     sentinelScriptsRunning(), sentinelScriptsQueued(), sentinel.simFailure);
    for (int i = 0; i < sentinel.nmasters; i++) {
        SInst *m = sentinel.masters[i];
        s = sdsCatPrintf(s, "master%d:name=%s,status=%s,address=%s:%d,slaves=%d,sentinels=%d\r\n", i, m->name,
                         m->flags & SRI_O_DOWN   ? "odown"
                         : m->flags & SRI_S_DOWN ? "sdown"
                                                 : "ok",
                         sentinelAnnounceHost(m), m->port, m->nslaves, m->nsentinels + 1);
    }
    return s;
}

sds sentinelInfo(int argc, sds *argv) {
    static const char *names[] = {"server", "clients", "stats", "cpu", "sentinel"};
    int want[5] = {0};
    if (argc < 2) {
        for (int i = 0; i < 5; i++)
            want[i] = 1;
    }
    for (int a = 1; a < argc; a++) {
        if (!strcasecmp(argv[a], "default") || !strcasecmp(argv[a], "all") ||
            !strcasecmp(argv[a], "everything")) {
            for (int i = 0; i < 5; i++)
                want[i] = 1;
            continue;
        }
        for (int i = 0; i < 5; i++)
            if (!strcasecmp(argv[a], names[i])) want[i] = 1;
    }
    long long now = mstime();
    sds s = sdsEmpty();
    for (int i = 0; i < 5; i++) {
        if (!want[i]) continue;
        if (sdsLen(s)) s = sdsCat(s, "\r\n");
        switch (i) {
        case 0: s = sectionServer(s, now); break;
        case 1: s = sectionClients(s); break;
        case 2: s = sectionStats(s); break;
        case 3: s = sectionCpu(s); break;
        default: s = sectionSentinel(s, now); break;
        }
    }
    return s;
}
