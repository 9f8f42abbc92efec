/* stats.h -- server statistics that need sampling or per-command tables:
 * the instantaneous rates of INFO stats (ops/sec, input/output kbps), the
 * used-memory peak, and per-command latency histograms (INFO latencystats).
 *
 * The plain counters live in server.stats (server.h), dbStats (db.h) and
 * Command.stats (command.h); this module only adds what needs state of its
 * own.  Everything here runs on the main thread. */
#ifndef CAIRN_STATS_H
#define CAIRN_STATS_H

#include <stddef.h>

#include "core/command.h"
#include "ds/sds.h"

/* Call from the server timer, at any hz: takes a rate sample every 100 ms
 * (16 samples are averaged, as Redis does) and tracks the memory peak. */
void statsCron(void);

/* Averaged rates from the samples statsCron took. */
long long statsInstantaneousOps(void);
double statsInstantaneousInputKbps(void);
double statsInstantaneousOutputKbps(void);

/* used_memory_peak: the highest xmallocUsed() seen (updated on each call). */
size_t statsPeakMemory(void);
/* used_memory_startup: xmallocUsed() when statsInit ran. */
size_t statsStartupMemory(void);
/* Record the start-up memory baseline; call once after the server set up
 * (optional: the first statsCron does it otherwise). */
void statsInit(void);

/* Latency of one run of cmd (the subcommand if any), in microseconds, for
 * INFO latencystats.  Call after every executed command. */
void statsRecordLatency(struct Client *c, Command *cmd, long long usec);
/* The same for a blocked command served or unblocked (an unblock hook). */
void statsRecordUnblockedLatency(struct Client *c, Command *cmd, long long usec);
/* Appends "latency_percentiles_usec_<fullname>:p50=..,p99=..,p99.9=..\r\n"
 * when cmd has samples; returns the (possibly moved) string. */
sds statsCatLatencyLine(sds s, const Command *cmd) SDS_MUST_USE;
/* A command went (a module's): its latency histogram goes with it, so
 * that a command given its id later starts empty. */
void statsForgetCommand(unsigned id);

/* LATENCY HISTOGRAM: whether cmd has recorded runs, and its entry (a map
 * of "calls" and "histogram_usec", the cumulative distribution as Redis
 * 7.0 reports it).  The reply only for a command that has one. */
int statsHasLatencyHistogram(const Command *cmd);
void statsReplyLatencyHistogram(struct Client *c, const Command *cmd);

/* CONFIG RESETSTAT: drops the latency histograms, rate samples and resets
 * the memory peak to the current usage. */
void statsReset(void);

/* "1015.54K"-style text of a byte count, as INFO prints *_human fields. */
sds statsCatHumanBytes(sds s, unsigned long long n) SDS_MUST_USE;

/* Registers the latency tracking's directives (CONFIG GET/SET/REWRITE, the config
 * file).  Called once from main.c, before the defaults are applied. */
void statsRegisterConfig(void);

#endif
