/* latency.h -- the latency monitor (LATENCY command): per-event series of
 * spikes at or above latency-monitor-threshold milliseconds. */
#ifndef CAIRN_LATENCY_H
#define CAIRN_LATENCY_H

/* Record a spike of `ms` milliseconds for event (e.g. "expire-cycle") when
 * the monitor is enabled and ms >= latency-monitor-threshold.  The
 * "command" and "fast-command" events are recorded by latency.c itself. */
/* Installs the after-call hook that samples command latency.  Called once
 * at start-up. */
void latencyInit(void);

void latencyAddSampleIfNeeded(const char *event, long long ms);

/* Registers the latency monitor's directives (CONFIG GET/SET/REWRITE, the config
 * file).  Called once from main.c, before the defaults are applied. */
void latencyRegisterConfig(void);

#endif
