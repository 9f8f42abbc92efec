/* tracking.h -- server-assisted client-side caching (CLIENT TRACKING).
 *
 * tracking.c owns CLIENT TRACKING / CACHING / GETREDIR / TRACKINGINFO, the
 * table of keys read by tracking clients, the BCAST prefix table, and the
 * invalidation messages.  It learns about modified keys through the
 * transaction layer's key-modified hook and about flushes through the
 * server's flush hook; nothing else needs to call it. */
#ifndef CAIRN_TRACKING_H
#define CAIRN_TRACKING_H

#include <stddef.h>

#include "core/client.h"
#include "db/db.h"

/* Invalidate key for every client that read it (default mode) and queue it
 * for the BCAST clients whose prefix matches.  c is the client whose
 * command changed the key (NULL for expiry).  The tracking table is global
 * to all databases, as in Redis, so db is not used for matching. */
/* Sets up the tracking table and installs the key-modified, flush,
 * after-call, before-sleep and client hooks.  Called once at start-up,
 * after multiInit (WATCH sees a modified key before tracking does). */
void trackingInit(void);

void trackingInvalidateKey(Client *c, Db *db, const char *key, size_t len);

/* INFO stats: tracking_total_keys, tracking_total_items,
 * tracking_total_prefixes. */
unsigned long long trackingTotalKeys(void);
unsigned long long trackingTotalItems(void);
unsigned long long trackingTotalPrefixes(void);
/* Bytes c's tracking state holds (its BCAST prefixes): part of its memory
 * (CLIENT LIST tot-mem, client eviction), as Redis counts them. */
size_t trackingClientMemory(const Client *c);

/* CLIENT LIST: redir= (-1 when not tracking, 0 without redirection) and the
 * extra flag letters 'R' (broken redirection) and 'B' (BCAST). */
long long trackingClientRedirect(const Client *c);
int trackingClientBrokenRedirect(const Client *c);
int trackingClientBcast(const Client *c);

/* CLIENT subcommand handlers (registered by client_cmd.c). */
void clientTrackingCommand(Client *c);
void clientCachingCommand(Client *c);
void clientGetredirCommand(Client *c);
void clientTrackinginfoCommand(Client *c);

/* Registers the client-side caching's directives (CONFIG GET/SET/REWRITE, the config
 * file).  Called once from main.c, before the defaults are applied. */
void trackingRegisterConfig(void);

#endif
