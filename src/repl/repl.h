/* repl.h -- replication (Redis 7.0's PSYNC2 protocol), both sides.
 *
 * A primary keeps a backlog of its replication stream (the write effects
 * of src/core/effects.h encoded as RESP, with SELECTs and PINGs), serves
 * SYNC/PSYNC with a partial resync (+CONTINUE) when the backlog covers the
 * replica's offset under one of its two replication ids, or a full one
 * (+FULLRESYNC, an RDB written by a forked child to a pipe -- diskless,
 * "$EOF:<mark>" framing -- or to dbfilename and then sent as "$<len>"),
 * and counts acknowledged offsets for WAIT and min-replicas-to-write.
 *
 * A replica (REPLICAOF host port) connects, handshakes (PING, AUTH,
 * REPLCONF listening-port / ip-address / capa eof psync2), PSYNCs, loads a
 * full sync's RDB from a temporary file, then runs its primary's commands
 * without replying, forwarding the bytes it applied unchanged to its own
 * backlog and replicas (chained replication) and acknowledging its offset
 * every second.  Keys expire only on the primary: a replica reports an
 * expired key absent to its clients but keeps it until the primary's DEL
 * (a writable replica expires the keys its own clients gave a TTL).
 *
 * The layer sits between persist and server: process.c calls the rules
 * below, info.c prints the section. */
#ifndef CAIRN_REPL_H
#define CAIRN_REPL_H

#include "core/client.h"
#include "core/server.h"
#include "ds/sds.h"

/* Start-up (initFeatures): hooks (cron, before-sleep, client free, the RDB
 * replication info). */
void replInit(void);
/* DEBUG CHANGE-REPL-ID: a new replication ID, and no previous one. */
void replChangeId(void);
/* After the start-up load: a replica configured with replicaof continues
 * from the snapshot's repl-id / repl-offset, and starts connecting. */
void replStart(void);

/* processCommand's rules, in Redis's places: NOREPLICAS (too few good
 * replicas for a write) and READONLY (a write on a read-only replica)
 * after MISCONF; MASTERDOWN (a stale replica with replica-serve-stale-data
 * no) after the pub/sub context rule; a replica's own link touching the
 * keyspace after BUSY.  Each replies and returns -1 when it refuses, else
 * 0. */
int replRefuseWriteSlow(Client *c, Command *cmd, int execWrites);
int replRefuseStaleSlow(Client *c, Command *cmd, int execNotStale);
/* Inline so that a primary without min-replicas-to-write pays one test
 * per command for each. */
static inline int replRefuseWriteOrReply(Client *c, Command *cmd, int execWrites) {
    if (!(server.isReplica | server.cfg.minReplicasToWrite)) return 0;
    return replRefuseWriteSlow(c, cmd, execWrites);
}
/* execNotStale: an EXEC whose queue holds a command not flagged stale. */
static inline int replRefuseStaleOrReply(Client *c, Command *cmd, int execNotStale) {
    if (!(server.isReplica | (int)(c->flags & CLIENT_SLAVE))) return 0;
    return replRefuseStaleSlow(c, cmd, execNotStale);
}
int replRefuseReplicaKeyspaceSlow(Client *c, Command *cmd);
/* CLIENT UNBLOCK of a client blocked in WAIT: replies the replicas acked
 * so far (error 0, as a timeout) or "-UNBLOCKED client unblocked via
 * CLIENT UNBLOCK" and lets it go on; 0 if c is not in WAIT. */
int primaryUnblockWaiter(Client *c, int error);
static inline int replRefuseReplicaKeyspaceOrReply(Client *c, Command *cmd) {
    if (!(c->flags & CLIENT_SLAVE)) return 0;
    return replRefuseReplicaKeyspaceSlow(c, cmd);
}

/* Replication's memory (INFO memory, MEMORY STATS, eviction): the
 * backlog's allocation; the output waiting for the replicas (their reply
 * blocks and the stream held behind a full sync), which maxmemory does
 * not count, as Redis does not; and, for one client, the part of the
 * shared buffer it has not taken yet (0 unless a replica: its CLIENT LIST
 * omem, as Redis shows it). */
size_t replBacklogMemory(void);
size_t replReplicaOutputMemory(void);
size_t replClientPendingMemory(const Client *c);
/* The part of the shared replication buffer that is the replicas' (what
 * passes repl-backlog-size while replicas read it): INFO's
 * mem_clients_slaves counts it once, not per replica. */
size_t replReplicaSharedMemory(void);
/* CLIENT PAUSE postponed the primary's command on this replica (its
 * stream stops there); the pause ended: apply it and what followed. */
void replicaResumeMaster(Client *c);

/* INFO replication. */
sds replInfoSection(sds s);
/* INFO stats: sync_full (0), sync_partial_ok (1), sync_partial_err (2). */
long long replStatSyncs(int which);

/* The command family (REPLICAOF, SLAVEOF, SYNC, PSYNC, REPLCONF, ROLE,
 * WAIT). */
/* The replicas as a shutdown waiting for them sees them
 * (server/shutdown.c): each one's name as the log shows it ("ip:port"),
 * the offset it last acknowledged and when (unix ms), and its state
 * ("wait_bgsave", "send_bulk", "online").  Returns the number of replicas
 * (fills out[0..min(n, max))) and sets *offset to master_repl_offset. */
typedef struct ReplReplicaAck {
    char name[96];
    long long ackOff, ackMs;
    const char *state;
} ReplReplicaAck;
int replReplicaAcks(long long *offset, ReplReplicaAck *out, int max);
/* Asks every replica for an ACK (REPLCONF GETACK *, sent before the loop
 * sleeps). */
void replRequestAcks(void);

/* REPLICAOF host port and REPLICAOF NO ONE as cluster mode drives them
 * (CLUSTER REPLICATE, a failover): the replica (re)connects to host:port,
 * or becomes a primary with a new replication history. */
void replicaSetPrimary(const char *host, int port);
void replicaUnsetPrimary(void);
/* A replica's data age (a cluster replica's failover eligibility, as
 * Redis 7.0 measures it): ms since its primary's link last carried data
 * while it is up, else since the link went down (since the epoch when it
 * was never up after REPLICAOF). */
long long replicaDataAgeMs(void);

extern Command replCommands[];

/* Registers the replication directives (CONFIG GET/SET/REWRITE, the config
 * file).  Called once from main.c, before the defaults are applied. */
void replRegisterConfig(void);

#endif
