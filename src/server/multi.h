/* multi.h -- what the transaction layer (multi.c) offers other layers.
 *
 * multi.c owns MULTI/EXEC/DISCARD/WATCH/UNWATCH, the per-db index of watched
 * keys and the strong signalModifiedKey.  Other layers that must learn about
 * every modified key (client tracking invalidation) register here instead
 * of defining signalModifiedKey a second time. */
#ifndef CAIRN_MULTI_H
#define CAIRN_MULTI_H

#include <stddef.h>
#include <stdint.h>

#include "core/client.h"

/* Called by signalModifiedKey after WATCH has been served.  c is the client
 * whose command changed the key, NULL for expiry / eviction.  At most 4. */
typedef void KeyModifiedHook(Client *c, Db *db, const char *key, size_t len);
void multiAddKeyModifiedHook(KeyModifiedHook *fn);

/* Number of commands queued by a client in MULTI (CLIENT LIST multi=). */
int multiQueuedCount(const Client *c);
/* Memory of the queued argv (CLIENT LIST multi-mem=): the argument bytes
 * plus one pointer per argument, summed over the queue, as Redis counts. */
size_t multiQueuedBytes(const Client *c);
/* Union of the CMD_* flags of the queued commands (0 when none): CLIENT
 * PAUSE WRITE treats an EXEC that carries writes as a write. */
uint64_t multiQueuedFlags(const Client *c);


#endif
