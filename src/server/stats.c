/* stats.c -- sampled rates, the memory peak and per-command latency
 * histograms (see stats.h).
 *
 * Rates: every 100 ms statsCron turns the growth of a counter since the
 * previous sample into a per-second value and stores it in a ring of 16;
 * INFO prints the ring's average.
 *
 * Latency histograms record nanoseconds in log-linear buckets: values below
 * 256 ns exactly, then each power-of-two range [2^k, 2^(k+1)) split into 128
 * equal buckets (two significant decimal digits).  A blocked command is
 * recorded when it is served or unblocked (dispatchBlockedDone), not when
 * it blocks.  A percentile reports the
 * highest value of the bucket it falls in, which is what INFO latencystats
 * prints (so 8 us shows as 8.031).  Values are clamped to [1 ns, 1 s].  A
 * command gets its histogram (12.5 KB) on its first recorded run. */
#include "server/stats.h"

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/client.h"
#include "core/server.h"
#include "ds/alloc.h"
#include "ds/util.h"

/* latency-tracking (per-command latency histograms on) and
 * latency-tracking-info-percentiles (INFO latencystats' percentiles,
 * owned): the directives at the end of this file. */
static int latencyTracking;
static double *latencyPercentiles;
static int latencyPercentileCount;

#define SAMPLE_PERIOD_MS 100
#define SAMPLES 16

enum { METRIC_OPS = 0, METRIC_NET_IN, METRIC_NET_OUT, METRIC_COUNT };

typedef struct RateMetric {
    long long lastMs;           /* time of the previous sample, 0 = none yet */
    long long lastValue;        /* counter value at that time */
    long long samples[SAMPLES]; /* per-second rates */
    int idx;
} RateMetric;

static RateMetric metrics[METRIC_COUNT];
static size_t peakMemory;
static size_t startupMemory;
static int initialized;

/* --- latency histograms --- */

#define HIST_MIN_NS 1LL
#define HIST_MAX_NS 1000000000LL
#define HIST_LINEAR 256         /* exact buckets below this */
#define HIST_SUB 128            /* buckets per power of two above */
#define HIST_TOP_BIT 29         /* 2^29 <= 1e9 < 2^30 */
#define HIST_BUCKETS (HIST_LINEAR + (HIST_TOP_BIT - 8 + 1) * HIST_SUB)

typedef struct Histogram {
    long long total;
    uint32_t counts[HIST_BUCKETS];
} Histogram;

static Histogram **histograms; /* indexed by Command.id */
static unsigned histCap;

void statsInit(void) {
    startupMemory = xmallocUsed();
    if (peakMemory < startupMemory) peakMemory = startupMemory;
    initialized = 1;
}

size_t statsStartupMemory(void) { return startupMemory; }

size_t statsPeakMemory(void) {
    size_t used = xmallocUsed();
    if (used > peakMemory) peakMemory = used;
    return peakMemory;
}

static void sampleMetric(RateMetric *m, long long value, long long nowMs) {
    if (m->lastMs != 0 && nowMs > m->lastMs) {
        m->samples[m->idx] = (value - m->lastValue) * 1000 / (nowMs - m->lastMs);
        m->idx = (m->idx + 1) % SAMPLES;
    }
    m->lastMs = nowMs;
    m->lastValue = value;
}

static long long metricAverage(const RateMetric *m) {
    long long sum = 0;
    for (int i = 0; i < SAMPLES; i++) sum += m->samples[i];
    return sum / SAMPLES;
}

void statsCron(void) {
    if (!initialized) statsInit();
    statsPeakMemory();
    long long now = mstime();
    if (metrics[METRIC_OPS].lastMs != 0 && now - metrics[METRIC_OPS].lastMs < SAMPLE_PERIOD_MS) return;
    sampleMetric(&metrics[METRIC_OPS], server.stats.numCommands, now);
    sampleMetric(&metrics[METRIC_NET_IN], server.stats.netInputBytes, now);
    sampleMetric(&metrics[METRIC_NET_OUT], server.stats.netOutputBytes, now);
}

long long statsInstantaneousOps(void) { return metricAverage(&metrics[METRIC_OPS]); }
double statsInstantaneousInputKbps(void) { return (double)metricAverage(&metrics[METRIC_NET_IN]) / 1024; }
double statsInstantaneousOutputKbps(void) { return (double)metricAverage(&metrics[METRIC_NET_OUT]) / 1024; }

static unsigned bucketOf(long long v) {
    if (v < HIST_LINEAR) return (unsigned)v;
    int k = 63 - __builtin_clzll((unsigned long long)v);
    unsigned sub = (unsigned)(v >> (k - 7)) - HIST_SUB;
    return HIST_LINEAR + (unsigned)(k - 8) * HIST_SUB + sub;
}

/* Highest value that falls in bucket i. */
static long long bucketHighest(unsigned i) {
    if (i < HIST_LINEAR) return i;
    unsigned k = 8 + (i - HIST_LINEAR) / HIST_SUB;
    long long sub = (i - HIST_LINEAR) % HIST_SUB + HIST_SUB;
    long long width = 1LL << (k - 7);
    return sub * width + width - 1;
}

static void recordLatency(Command *cmd, long long usec);

void statsRecordLatency(struct Client *c, Command *cmd, long long usec) {
    /* A command that blocked is recorded when it is served (its unblock
     * hook), not when it blocks, nor when it times out, as in Redis 7.0. */
    if (!latencyTracking || (c->flags & CLIENT_BLOCKED)) return;
    if ((c->flags & (CLIENT_FAKE | CLIENT_LUA)) == CLIENT_FAKE) return; /* the AOF load's */
    recordLatency(cmd, usec);
}

void statsRecordUnblockedLatency(struct Client *c, Command *cmd, long long usec) {
    (void)c;
    if (latencyTracking) recordLatency(cmd, usec);
}

void statsForgetCommand(unsigned id) {
    if (id < histCap && histograms[id]) {
        xfree(histograms[id]);
        histograms[id] = NULL;
    }
}

static void recordLatency(Command *cmd, long long usec) {
    if (cmd->id >= histCap) {
        unsigned ncap = histCap ? histCap : 64;
        while (ncap <= cmd->id) ncap *= 2;
        histograms = xrealloc(histograms, ncap * sizeof(*histograms));
        memset(histograms + histCap, 0, (ncap - histCap) * sizeof(*histograms));
        histCap = ncap;
    }
    Histogram *h = histograms[cmd->id];
    if (!h) h = histograms[cmd->id] = xcalloc(sizeof(*h));
    long long ns = usec * 1000;
    if (ns < HIST_MIN_NS) ns = HIST_MIN_NS;
    if (ns > HIST_MAX_NS) ns = HIST_MAX_NS;
    h->counts[bucketOf(ns)]++;
    h->total++;
}

static long long percentileNs(const Histogram *h, double p) {
    long long want = (long long)(p / 100 * (double)h->total + 0.5);
    if (want < 1) want = 1;
    long long seen = 0;
    for (unsigned i = 0; i < HIST_BUCKETS; i++) {
        seen += h->counts[i];
        if (seen >= want) return bucketHighest(i);
    }
    return bucketHighest(HIST_BUCKETS - 1);
}

int statsHasLatencyHistogram(const Command *cmd) { return cmd->id < histCap && histograms[cmd->id] != NULL; }

/* LATENCY HISTOGRAM reports the cumulative count at the log levels 1024 ns,
 * 2048 ns, ... up to 2^29 ns, each as the highest value of the bucket
 * holding the level, in whole microseconds, and only the levels where the
 * count grew: what Redis's log iteration of its histogram (first bucket
 * 1024, base 2) yields.  Samples above the last level are counted in
 * "calls" only, as in Redis. */
#define CDF_FIRST_NS 1024LL
#define CDF_LAST_NS (1LL << HIST_TOP_BIT)

void statsReplyLatencyHistogram(struct Client *c, const Command *cmd) {
    const Histogram *h = histograms[cmd->id];
    long long us[32], cum[32];
    int n = 0;
    long long seen = 0, prev = 0;
    unsigned next = 0; /* first bucket not yet added to seen */
    for (long long level = CDF_FIRST_NS; level <= CDF_LAST_NS; level *= 2) {
        unsigned b = bucketOf(level);
        for (; next <= b; next++) seen += h->counts[next];
        if (seen > prev) {
            us[n] = bucketHighest(b) / 1000;
            cum[n++] = seen;
        }
        prev = seen;
    }
    replyMapLen(c, 2);
    replyBulkCString(c, "calls");
    replyLongLong(c, h->total);
    replyBulkCString(c, "histogram_usec");
    replyMapLen(c, n);
    for (int i = 0; i < n; i++) {
        replyLongLong(c, us[i]);
        replyLongLong(c, cum[i]);
    }
}

sds statsCatLatencyLine(sds s, const Command *cmd) {
    if (!latencyTracking || cmd->id >= histCap || !histograms[cmd->id]) return s;
    const Histogram *h = histograms[cmd->id];
    s = sdsCatPrintf(s, "latency_percentiles_usec_%s:", cmd->fullname ? cmd->fullname : cmd->name);
    char label[128];
    for (int i = 0; i < latencyPercentileCount; i++) {
        double p = latencyPercentiles[i];
        configFormatDouble(label, p);
        s = sdsCatPrintf(s, "%sp%s=%.3f", i ? "," : "", label, (double)percentileNs(h, p) / 1000.0);
    }
    return sdsCat(s, "\r\n");
}

void statsReset(void) {
    for (unsigned i = 0; i < histCap; i++) {
        xfree(histograms[i]);
        histograms[i] = NULL;
    }
    memset(metrics, 0, sizeof(metrics));
    peakMemory = xmallocUsed();
}

sds statsCatHumanBytes(sds s, unsigned long long n) {
    static const char units[] = "KMGTPE";
    if (n < 1024) return sdsCatPrintf(s, "%lluB", n);
    double d = (double)n / 1024;
    int u = 0;
    while (d >= 1024 && u < 5) {
        d /= 1024;
        u++;
    }
    return sdsCatPrintf(s, "%.2f%c", d, units[u]);
}

/* ------------------------------------------------------------------------ */
/* Configuration                                                             */
/* ------------------------------------------------------------------------ */

/* latency-tracking-info-percentiles: numbers in [0, 100], none allowed. */
static int setPercentiles(ConfigDef *d, sds *argv, int argc, const char **err) {
    double *v = argc ? xmalloc(sizeof(double) * (size_t)argc) : NULL;
    for (int i = 0; i < argc; i++) {
        char *end;
        errno = 0;
        v[i] = strtod(argv[i], &end);
        if (argv[i][0] == '\0' || *end != '\0' || errno || v[i] != v[i]) {
            *err = "Invalid latency-tracking-info-percentiles parameters";
        } else if (v[i] < 0 || v[i] > 100) {
            *err = "latency-tracking-info-percentiles parameters should sit between [0.0,100.0]";
        } else {
            continue;
        }
        xfree(v);
        return -1;
    }
    xfree(latencyPercentiles);
    latencyPercentiles = v;
    latencyPercentileCount = argc;
    return 0;
}

static sds getPercentiles(const ConfigDef *d) {
    sds s = sdsEmpty();
    char buf[128];
    for (int i = 0; i < latencyPercentileCount; i++) {
        configFormatDouble(buf, latencyPercentiles[i]);
        s = sdsCatPrintf(s, "%s%s", i ? " " : "", buf);
    }
    return s;
}

static ConfigDef statsConfig[] = {
    CONFIG_BOOL("latency-tracking", NULL, 0, latencyTracking, "yes", .rank = CONFIG_RANK_INTROSPECTION + 3),
    CONFIG_SPECIAL("latency-tracking-info-percentiles", NULL, CF_MULTI_ARG, "50 99 99.9", setPercentiles,
                   getPercentiles, .rank = CONFIG_RANK_INTROSPECTION + 5),
};

void statsRegisterConfig(void) { configRegister(statsConfig, CONFIG_COUNT_OF(statsConfig)); }
