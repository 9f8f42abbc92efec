/* latency.c -- the latency monitor: LATENCY LATEST / HISTORY / RESET /
 * DOCTOR / GRAPH / HISTOGRAM / HELP (HISTOGRAM reports the per-command
 * histograms that stats.c keeps for INFO latencystats).
 *
 * Each event (a name such as "command") has a series of the last 160
 * seconds that had a spike: one sample per second holding the worst latency
 * of that second, in a ring, plus the worst of all time.  Spikes are
 * recorded only while latency-monitor-threshold (ms) is non-zero and only
 * when they reach it.  An after-call hook records every executed command as
 * "fast-command" (CMD_FAST) or "command", as Redis does; other layers call
 * latencyAddSampleIfNeeded for their own events.  Events are few, so they
 * live in a list in creation order. */
#include "server/latency.h"

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "core/dispatch.h"
#include "core/server.h"
#include "server/stats.h"
#include "ds/alloc.h"

/* latency-monitor-threshold (ms, 0 off): the directive at the end of this
 * file. */
static long long latencyMonitorThreshold;

#define LATENCY_TS_LEN 160

typedef struct LatencySample {
    int32_t time;     /* unix seconds; 0 = unused slot */
    uint32_t latency; /* worst spike of that second, ms */
} LatencySample;

typedef struct LatencySeries {
    struct LatencySeries *next;
    char *event;      /* owned */
    int idx;          /* next slot to write */
    uint32_t max;     /* worst of all time */
    LatencySample samples[LATENCY_TS_LEN];
} LatencySeries;

static LatencySeries *series;

static LatencySeries *findSeries(const char *event) {
    for (LatencySeries *s = series; s; s = s->next)
        if (strcmp(s->event, event) == 0) return s;
    return NULL;
}

static void latencyAddSample(const char *event, uint32_t ms) {
    LatencySeries *s = findSeries(event);
    if (!s) {
        s = xcalloc(sizeof(*s));
        s->event = xstrdup(event);
        LatencySeries **tail = &series;
        while (*tail) tail = &(*tail)->next;
        *tail = s;
    }
    if (ms > s->max) s->max = ms;
    int32_t now = (int32_t)time(NULL);
    LatencySample *prev = &s->samples[(s->idx + LATENCY_TS_LEN - 1) % LATENCY_TS_LEN];
    if (prev->time == now) {
        if (ms > prev->latency) prev->latency = ms;
        return;
    }
    s->samples[s->idx] = (LatencySample){now, ms};
    s->idx = (s->idx + 1) % LATENCY_TS_LEN;
}

void latencyAddSampleIfNeeded(const char *event, long long ms) {
    long long threshold = latencyMonitorThreshold;
    if (threshold && ms >= threshold) latencyAddSample(event, ms > UINT32_MAX ? UINT32_MAX : (uint32_t)ms);
}

static void latencyAfterCall(Client *c, Command *cmd, long long usec) {
    if (c->flags & (CLIENT_BLOCKED | CLIENT_LUA)) return;
    latencyAddSampleIfNeeded((cmd->flags & CMD_FAST) ? "fast-command" : "command", usec / 1000);
}

void latencyInit(void) { dispatchAddAfterCall(latencyAfterCall); }

static void freeSeries(LatencySeries *s) {
    xfree(s->event);
    xfree(s);
}

/* Removes the named event; returns 1 if it existed. */
static int resetEvent(const char *event) {
    for (LatencySeries **link = &series; *link; link = &(*link)->next) {
        if (strcmp((*link)->event, event) == 0) {
            LatencySeries *s = *link;
            *link = s->next;
            freeSeries(s);
            return 1;
        }
    }
    return 0;
}

static long resetAll(void) {
    long n = 0;
    while (series) {
        LatencySeries *s = series;
        series = s->next;
        freeSeries(s);
        n++;
    }
    return n;
}

static const LatencySample *latestSample(const LatencySeries *s) {
    return &s->samples[(s->idx + LATENCY_TS_LEN - 1) % LATENCY_TS_LEN];
}

static void latencyLatestCommand(Client *c) {
    long n = 0;
    for (LatencySeries *s = series; s; s = s->next) n++;
    replyArrayLen(c, n);
    for (LatencySeries *s = series; s; s = s->next) {
        const LatencySample *last = latestSample(s);
        replyArrayLen(c, 4);
        replyBulkCString(c, s->event);
        replyLongLong(c, last->time);
        replyLongLong(c, last->latency);
        replyLongLong(c, s->max);
    }
}

static void latencyHistoryCommand(Client *c) {
    LatencySeries *s = findSeries(c->argv[2]);
    if (!s) {
        replyArrayLen(c, 0);
        return;
    }
    long n = 0;
    for (int i = 0; i < LATENCY_TS_LEN; i++) n += s->samples[i].time != 0;
    replyArrayLen(c, n);
    for (int k = 0; k < LATENCY_TS_LEN; k++) {
        const LatencySample *smp = &s->samples[(s->idx + k) % LATENCY_TS_LEN];
        if (!smp->time) continue;
        replyArrayLen(c, 2);
        replyLongLong(c, smp->time);
        replyLongLong(c, smp->latency);
    }
}

static void latencyResetCommand(Client *c) {
    if (c->argc == 2) {
        replyLongLong(c, resetAll());
        return;
    }
    long n = 0;
    for (int i = 2; i < c->argc; i++) n += resetEvent(c->argv[i]);
    replyLongLong(c, n);
}

/* Summary of one event's recorded spikes. */
typedef struct SeriesStats {
    long samples;
    unsigned long avg, mad;
    double period; /* seconds between spikes on average */
} SeriesStats;

static SeriesStats analyze(const LatencySeries *s) {
    SeriesStats st = {0};
    unsigned long long sum = 0;
    int32_t oldest = 0;
    for (int i = 0; i < LATENCY_TS_LEN; i++) {
        const LatencySample *smp = &s->samples[i];
        if (!smp->time) continue;
        st.samples++;
        sum += smp->latency;
        if (!oldest || smp->time < oldest) oldest = smp->time;
    }
    if (!st.samples) return st;
    st.avg = (unsigned long)(sum / (unsigned long long)st.samples);
    unsigned long long dev = 0;
    for (int i = 0; i < LATENCY_TS_LEN; i++) {
        const LatencySample *smp = &s->samples[i];
        if (!smp->time) continue;
        dev += smp->latency > st.avg ? smp->latency - st.avg : st.avg - smp->latency;
    }
    st.mad = (unsigned long)(dev / (unsigned long long)st.samples);
    long long span = (long long)time(NULL) - oldest;
    if (span <= 0) span = 1;
    st.period = (double)span / (double)st.samples;
    return st;
}

static sds doctorReport(void) {
    if (!series && latencyMonitorThreshold == 0)
        return sdsNew("I'm sorry, Dave, I can't do that. Latency monitoring is disabled in this Redis instance. "
                      "You may use \"CONFIG SET latency-monitor-threshold <milliseconds>.\" in order to enable "
                      "it. If we weren't in a deep space mission I'd suggest to take a look at "
                      "https://redis.io/topics/latency-monitor.\n");
    if (!series)
        return sdsNew("Dave, no latency spike was observed during the lifetime of this Redis instance, not in "
                      "the slightest bit. I honestly think you ought to sit down calmly, take a stress pill, and "
                      "think things over.\n");
    sds r = sdsNew("Dave, I have observed latency spikes in this Redis instance. You don't mind talking about "
                   "it, do you Dave?\n\n");
    int num = 1, commandSpikes = 0;
    for (LatencySeries *s = series; s; s = s->next, num++) {
        SeriesStats st = analyze(s);
        r = sdsCatPrintf(r,
                         "%d. %s: %ld latency spikes (average %lums, mean deviation %lums, period %.2f sec). "
                         "Worst all time event %lums.\n",
                         num, s->event, st.samples, st.avg, st.mad, st.period, (unsigned long)s->max);
        if (strcmp(s->event, "command") == 0 || strcmp(s->event, "fast-command") == 0) commandSpikes = 1;
    }
    r = sdsCat(r, "\nI have a few advices for you:\n\n");
    if (commandSpikes)
        r = sdsCat(r, "- Some commands are slow. Use SLOWLOG GET to see which ones (CONFIG SET "
                      "slowlog-log-slower-than sets what counts as slow), and prefer commands whose cost does "
                      "not grow with the size of the value.\n");
    else
        r = sdsCat(r, "- Look at what the server was doing when these events were recorded; LATENCY HISTORY "
                      "<event> shows when they happened.\n");
    return r;
}

static void latencyDoctorCommand(Client *c) {
    sds r = doctorReport();
    replyVerbatim(c, r, sdsLen(r), "txt");
    sdsFree(r);
}

/* --- LATENCY GRAPH --- */

/* The graph is 80 columns wide and 4 rows tall, one column per sample
 * (oldest first, wrapping after 80), Redis's layout: each column's height
 * is its latency scaled between the series' low and high in 12 steps of 3
 * glyphs per row ('_', 'o', '#'; '|' below the top glyph), then a blank
 * line, then each column's age label ("12s", "3m", "1h", "2d") written
 * downwards, one character per line. */
#define GRAPH_COLS 80
#define GRAPH_ROWS 4
#define GRAPH_GLYPHS 3

typedef struct GraphPoint {
    uint32_t value;
    char label[32];
} GraphPoint;

static sds graphRange(sds out, const GraphPoint *pts, int len, uint32_t lo, uint32_t hi) {
    static const char glyph[GRAPH_GLYPHS] = {'_', 'o', '#'};
    double span = hi - lo ? (double)(hi - lo) : 1;
    int steps = GRAPH_GLYPHS * GRAPH_ROWS;
    char line[GRAPH_COLS];
    /* Bars, top row first. */
    for (int row = 0; row < GRAPH_ROWS; row++) {
        memset(line, ' ', (size_t)len);
        for (int j = 0; j < len; j++) {
            int step = (int)((double)(pts[j].value - lo) * steps / span);
            if (step < 0) step = 0;
            if (step >= steps) step = steps - 1;
            int g = step - (GRAPH_ROWS - row - 1) * GRAPH_GLYPHS;
            if (g >= 0 && g < GRAPH_GLYPHS) line[j] = glyph[g];
            else if (g >= GRAPH_GLYPHS) line[j] = '|';
        }
        out = sdsCatLen(out, line, (size_t)len);
        out = sdsCatLen(out, "\n", 1);
    }
    /* A blank line, then the labels downwards while any has characters. */
    size_t longest = 0;
    for (int j = 0; j < len; j++)
        if (strlen(pts[j].label) > longest) longest = strlen(pts[j].label);
    memset(line, ' ', (size_t)len);
    out = sdsCatLen(out, line, (size_t)len);
    out = sdsCatLen(out, "\n", 1);
    for (size_t k = 0; k < longest; k++) {
        for (int j = 0; j < len; j++) line[j] = k < strlen(pts[j].label) ? pts[j].label[k] : ' ';
        out = sdsCatLen(out, line, (size_t)len);
        out = sdsCatLen(out, "\n", 1);
    }
    return out;
}

static sds graphOf(const LatencySeries *s) {
    GraphPoint pts[LATENCY_TS_LEN];
    int n = 0;
    uint32_t lo = 0, hi = 0;
    long long now = (long long)time(NULL);
    for (int k = 0; k < LATENCY_TS_LEN; k++) {
        const LatencySample *smp = &s->samples[(s->idx + k) % LATENCY_TS_LEN];
        if (!smp->time) continue;
        if (n == 0 || smp->latency < lo) lo = smp->latency;
        if (n == 0 || smp->latency > hi) hi = smp->latency;
        long long age = now - smp->time;
        GraphPoint *p = &pts[n++];
        p->value = smp->latency;
        if (age < 60) snprintf(p->label, sizeof(p->label), "%llds", age);
        else if (age < 3600) snprintf(p->label, sizeof(p->label), "%lldm", age / 60);
        else if (age < 86400) snprintf(p->label, sizeof(p->label), "%lldh", age / 3600);
        else snprintf(p->label, sizeof(p->label), "%lldd", age / 86400);
    }
    sds out = sdsCatPrintf(sdsEmpty(), "%s - high %lu ms, low %lu ms (all time high %lu ms)\n", s->event,
                           (unsigned long)hi, (unsigned long)lo, (unsigned long)s->max);
    for (int j = 0; j < GRAPH_COLS; j++) out = sdsCatLen(out, "-", 1);
    out = sdsCatLen(out, "\n", 1);
    for (int j = 0; j < n; j += GRAPH_COLS) {
        if (j) out = sdsCatLen(out, "\n", 1);
        out = graphRange(out, pts + j, n - j < GRAPH_COLS ? n - j : GRAPH_COLS, lo, hi);
    }
    return out;
}

static void latencyGraphCommand(Client *c) {
    LatencySeries *s = findSeries(c->argv[2]);
    if (!s) {
        replyErrorFormat(c, "No samples available for event '%s'", c->argv[2]);
        return;
    }
    sds g = graphOf(s);
    replyVerbatim(c, g, sdsLen(g), "txt");
    sdsFree(g);
}

/* --- LATENCY HISTOGRAM --- */

/* Appends cmd, then its subcommands, that have a histogram; returns the
 * new count (each replied when reply is set). */
static long histogramEntries(Client *c, const Command *cmd, int reply) {
    long n = 0;
    if (statsHasLatencyHistogram(cmd)) {
        if (reply) {
            replyBulkCString(c, cmd->fullname ? cmd->fullname : cmd->name);
            statsReplyLatencyHistogram(c, cmd);
        }
        n++;
    }
    for (const Command *sub = cmd->subcommands; sub && sub->name; sub++) n += histogramEntries(c, sub, reply);
    return n;
}

/* LATENCY HISTOGRAM [command ...]: a map of command name to its histogram,
 * for the named commands (unknown names skipped, a container standing for
 * its subcommands) or for every command that ran. */
static void latencyHistogramCommand(Client *c) {
    for (int pass = 0; pass < 2; pass++) {
        long n = 0;
        if (c->argc == 2) {
            unsigned cursor = 0;
            Command *cmd;
            while ((cmd = commandIterate(&cursor)) != NULL) n += histogramEntries(c, cmd, pass);
        } else {
            for (int i = 2; i < c->argc; i++) {
                Command *cmd = commandLookupFullName(c->argv[i], sdsLen(c->argv[i]));
                if (cmd) n += histogramEntries(c, cmd, pass);
            }
        }
        if (pass == 0) replyMapLen(c, n);
    }
}

static void latencyHelpCommand(Client *c) {
    static const char *lines[] = {
        "DOCTOR",
        "    Return a human readable latency analysis report.",
        "GRAPH <event>",
        "    Return an ASCII latency graph for the <event> class.",
        "HISTORY <event>",
        "    Return time-latency samples for the <event> class.",
        "LATEST",
        "    Return the latest latency samples for all events.",
        "RESET [<event> ...]",
        "    Reset latency data of one or more <event> classes.",
        "    (default: reset all data for all event classes)",
        "HISTOGRAM [COMMAND ...]",
        "    Return a cumulative distribution of latencies in the format of a histogram for the specified command "
        "names.",
        "    If no commands are specified then all histograms are replied.",
        NULL,
    };
    replyHelp(c, lines);
}

static Command latencySubcommands[] = {
    {.name = "help", .proc = latencyHelpCommand},
    {.name = "doctor", .proc = latencyDoctorCommand},
    {.name = "latest", .proc = latencyLatestCommand},
    {.name = "history", .proc = latencyHistoryCommand},
    {.name = "reset", .proc = latencyResetCommand},
    {.name = "histogram", .proc = latencyHistogramCommand},
    {.name = "graph", .proc = latencyGraphCommand},
    {0},
};

Command latencyCommands[] = {
    {.name = "latency", .subcommands = latencySubcommands},
    {0},
};

/* ------------------------------------------------------------------------ */
/* Configuration                                                             */
/* ------------------------------------------------------------------------ */

static ConfigDef latencyConfig[] = {
    CONFIG_LL("latency-monitor-threshold", NULL, 0, latencyMonitorThreshold, 0, LLONG_MAX, "0",
              .rank = CONFIG_RANK_INTROSPECTION + 2),
};

void latencyRegisterConfig(void) { configRegister(latencyConfig, CONFIG_COUNT_OF(latencyConfig)); }
