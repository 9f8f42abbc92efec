/* maxmemory.h -- memory as a cache, the server's side (maxmemory.c):
 *
 *  - the OOM rule of processCommand: with maxmemory set, keys are evicted
 *    (db/evict.c) before every command, and a command that may grow
 *    memory (deny-oom; any command but EXEC/DISCARD/QUIT/RESET inside
 *    MULTI; a script that may write) is refused with -OOM when nothing
 *    could be evicted;
 *  - the eviction timer: a run that stopped at its time limit goes on
 *    from the event loop until memory is under the limit;
 *  - what an eviction does beyond the keyspace (evicted_keys, the
 *    "evicted" event, DEL/UNLINK for the AOF and replicas, WATCH);
 *  - client eviction (maxmemory-clients, CLIENT NO-EVICT), with client
 *    memory tracked incrementally while the limit is set;
 *  - the MEMORY command.
 *
 * With maxmemory 0 the rule costs one load and a branch per command. */
#ifndef CAIRN_MAXMEMORY_H
#define CAIRN_MAXMEMORY_H

#include <stddef.h>

#include "core/client.h"
#include "core/server.h"

/* Installs the eviction hook and the client-eviction check before sleep. */
void maxmemoryInit(void);

int maxmemoryRefuseOrReplySlow(Client *c, Command *cmd);
/* processCommand's rule: evict, and refuse (reply -OOM, return -1) a
 * command that may grow memory when the server stays over maxmemory;
 * 0 to go on. */
static inline int maxmemoryRefuseOrReply(Client *c, Command *cmd) {
    if (!server.cfg.maxmemory) return 0;
    return maxmemoryRefuseOrReplySlow(c, cmd);
}

int maxmemoryEvictClientsSlow(Client *current);
/* processCommand's rule before it (Redis's order): with maxmemory-clients
 * set, disconnect the clients using the most memory (taken from the
 * highest power-of-two bucket first, as Redis 7.0) until the normal and
 * pub/sub clients use less than the limit.  Costs O(1) per call under
 * the limit: client memory is tracked as it changes (see maxmemory.c).
 * -1 when the current client was one of them (its command does not
 * run). */
static inline int maxmemoryEvictClients(Client *current) {
    if (!server.cfg.maxmemoryClients) return 0;
    return maxmemoryEvictClientsSlow(current);
}

/* DEBUG CLIENT-EVICTION's text: each bucket's size range, the memory of
 * its clients and their count, as Redis prints them; NULL when
 * maxmemory-clients is 0 (the caller frees the text). */
sds maxmemoryClientEvictionReport(void);

/* Bytes a client uses: the structure with its reply buffer, query buffer,
 * arguments, reply blocks, queued MULTI commands and the parser's spares
 * (CLIENT LIST tot-mem, client eviction). */
size_t clientMemoryUsage(const Client *c);

/* Used memory maxmemory does not count, as Redis: the output waiting for
 * replicas and the AOF buffer (INFO mem_not_counted_for_evict). */
size_t maxmemoryNotCounted(void);

/* What INFO memory, MEMORY STATS and DOCTOR report, as Redis's
 * getMemoryOverheadData: used memory split into the server's overhead
 * (start-up, replication, clients, AOF buffer, script caches, key tables)
 * and the dataset. */
typedef struct MemoryOverhead {
    size_t peak, total, startup;
    size_t replBacklog;     /* the backlog's allocation */
    size_t replBuffers;     /* the backlog and the replicas' output */
    size_t clientsReplicas; /* replica connections, with their output */
    size_t clientsNormal;   /* every other connection */
    size_t aofBuffer;
    size_t luaCaches, functionsCaches, overheadTotal;
    size_t keys, bytesPerKey, dataset, netUsed;
    double datasetPerc, peakPerc;
    size_t allocated, active, resident, rss;
    int dbCount;
    struct {
        int id;
        size_t main, expires;
    } dbs[64];
} MemoryOverhead;
/* Fills m; O(clients + databases). */
void memoryOverhead(MemoryOverhead *m);

/* INFO stats: ms the server spent over maxmemory in total, and in the
 * current stretch (0 when under). */
long long maxmemoryExceededTotalMs(void);
long long maxmemoryExceededCurrentMs(void);

/* The MEMORY command family. */
extern Command memoryCommands[];

/* Registers the eviction's directives (CONFIG GET/SET/REWRITE, the config
 * file).  Called once from main.c, before the defaults are applied. */
void maxmemoryRegisterConfig(void);

#endif
