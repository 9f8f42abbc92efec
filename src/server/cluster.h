/* cluster.h -- Redis Cluster mode (issue 36): the node's cluster state
 * (identity, epochs, slot ownership, migrating/importing marks, the other
 * nodes), its cluster-* directives, the CLUSTER / ASKING / READONLY /
 * READWRITE commands, the key-slot check of every command (-MOVED, -ASK,
 * -CROSSSLOT, -TRYAGAIN, -CLUSTERDOWN), and the cluster bus
 * (cluster_bus.c: Redis 7.0's node-to-node protocol).
 *
 * With cluster-enabled no (the default) nothing here runs: clusterEnabled
 * is 0, the check in processCommand is one test of it, the commands answer
 * as Redis without cluster support. */
#ifndef CAIRN_CLUSTER_H
#define CAIRN_CLUSTER_H

#include "core/client.h"
#include "core/command.h"

/* Client flags of cluster mode (c->flags). */
#define CLIENT_READONLY (1u << 25) /* READONLY: reads served on a replica */
#define CLIENT_ASKING (1u << 26)   /* ASKING: the next command may use an importing slot */

/* cluster-enabled, read once at start-up (immutable). */
extern int clusterEnabled;

/* RedisModule_SetClusterFlags's bits (set, never cleared, as Redis): this
 * replica starts no automatic failover (CLUSTER FAILOVER still works, as
 * on redis-server 7.0.15); keys of every slot are served here (no -MOVED/-ASK/-CLUSTERDOWN)
 * and a slot taken over by another node neither drops its keys here nor
 * turns this master into a replica. */
#define CLUSTER_MODULE_NO_FAILOVER (1 << 1)
#define CLUSTER_MODULE_NO_REDIRECTION (1 << 2)
extern int clusterModuleFlags;

/* MODULE bus messages (Redis 7.0's type 9: module id, 8 bytes as the
 * sender's memory holds it; payload length, 4 bytes big-endian; type, one
 * byte; the payload).  Sent to the node named target (a 40-character id,
 * NUL-terminated) or, target NULL, to every node with a link: 0, or -1
 * without cluster mode, for an unknown or unlinked target or a payload
 * over the bus's limit.  The hook (the module layer's) gets each one a
 * known node sends. */
typedef void ClusterModuleMessageHook(const char *sender, uint64_t moduleId, uint8_t type,
                                      const unsigned char *payload, uint32_t len);
int clusterSendModuleMessage(const char *target, uint64_t moduleId, uint8_t type, const unsigned char *payload,
                             uint32_t len);
void clusterSetModuleMessageHook(ClusterModuleMessageHook *hook);

/* main.c's wiring: the directives (registerConfig); after the config is
 * read and before the databases exist, clusterInitEarly has the keyspace
 * index keys by slot; after they exist, clusterInit loads or creates
 * cluster-config-file (locked for this process; exits as Redis does when
 * it cannot) and starts the state timer.  Both do nothing when disabled. */
void clusterRegisterConfig(void);
void clusterInitEarly(void);
void clusterInit(void);

/* processCommand's check (after ACL): 0 when the command may run here,
 * -1 after replying the redirection or CLUSTERDOWN/CROSSSLOT/TRYAGAIN
 * error (the transaction is flagged, or discarded for EXEC).  Call only
 * when clusterEnabled. */
int clusterRefuseOrReply(Client *c, Command *cmd);

/* The CLUSTER subcommands, ASKING, READONLY and READWRITE (conn_cmd.c's
 * table points at it): "cluster support disabled" unless enabled. */
void clusterDispatch(Client *c);

/* PUBLISH (shard 0) and SPUBLISH (shard 1) in cluster mode: the message
 * goes on the cluster bus to every node, or to the nodes of myself's
 * shard, instead of the replication stream (Redis 7.0). */
void clusterPropagatePublish(const char *ch, size_t clen, const char *msg, size_t mlen, int shard);

/* INFO's "# Cluster" section body. */
sds clusterInfoSection(sds s);

#endif
