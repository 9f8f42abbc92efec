/* sentinel.h -- Sentinel mode: `cairn-sentinel` or `cairn-server --sentinel`.
 *
 * Sentinel mode is its own program inside the server binary: main() hands
 * over to sentinelMain before any of the data server's state (databases,
 * persistence, replication, the command table) is built, so nothing of it
 * runs on the data server's per-request path.  It owns its listener, its
 * clients, its config file and the links to the monitored instances, all
 * on one event loop through the connection layer (core/conn.h). */
#ifndef CAIRN_SENTINEL_H
#define CAIRN_SENTINEL_H

/* 1 when argv asks for Sentinel mode: the program is named *-sentinel or
 * an argument is --sentinel (as Redis's checkForSentinelMode). */
int sentinelModeRequested(int argc, char **argv);
/* Runs Sentinel mode to the end; its exit status. */
int sentinelMain(int argc, char **argv);

#endif
