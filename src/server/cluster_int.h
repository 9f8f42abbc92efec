/* cluster_int.h -- what cluster.c (the node's state, nodes.conf, the
 * CLUSTER commands, the key-slot check) and cluster_bus.c (the cluster
 * bus: links, Redis 7.0's binary messages, gossip, failure detection,
 * failover) share.  Not for other files.
 *
 * Invariants:
 *  - cs.nodes[0] is myself; names are 40 lowercase hex digits, unique;
 *  - node flags are Redis's bit values (NODE_*), the ones the bus carries
 *    in its headers and gossip entries;
 *  - a node's link is the connection this node opened to it (PINGs go
 *    out there), inLink the one it opened to this node (answered there);
 *    each link points back at its node (or at none while an inbound link
 *    has not said who it is);
 *  - a failure report is held by the reported node and names a master
 *    that reported it PFAIL or FAIL; deleting a node drops its links,
 *    the reports about it and the reports it made. */
#ifndef CAIRN_CLUSTER_INT_H
#define CAIRN_CLUSTER_INT_H

#include "core/client.h"
#include "db/db.h"
#include "ds/sds.h"

#define NAMELEN 40
#define WRITABLE_DELAY_MS 2000
#define MIN_REJOIN_DELAY_MS 500
#define MAX_REJOIN_DELAY_MS 5000

/* Node flags: Redis's values (on the wire too). */
#define NODE_MASTER (1 << 0)
#define NODE_SLAVE (1 << 1)
#define NODE_PFAIL (1 << 2)
#define NODE_FAIL (1 << 3)
#define NODE_MYSELF (1 << 4)
#define NODE_HANDSHAKE (1 << 5)
#define NODE_NOADDR (1 << 6)
#define NODE_MEET (1 << 7)
#define NODE_MIGRATE_TO (1 << 8)
#define NODE_NOFAILOVER (1 << 9)

typedef struct ClusterLink ClusterLink;
struct ClusterNode;

typedef struct FailReport {
    struct ClusterNode *node; /* the master that reported */
    long long time;           /* when it last did (ms) */
} FailReport;

typedef struct ClusterNode {
    char name[NAMELEN + 1];
    int flags;
    sds ip;          /* "" until known */
    sds hostname;    /* "" when none */
    int port, cport; /* client and bus ports */
    int pport;       /* plaintext client port when port is TLS's, else 0 */
    unsigned long long configEpoch;
    char masterName[NAMELEN + 1]; /* "" when a master or unknown */
    int numSlots;
    /* Bit s (bit s&7 of byte s>>3, the bus's order) set exactly when
     * cs.slots[s] is this node (slotAdd/slotDel keep it): a PING's slot
     * bitmap is a copy of it, and a received one is compared with it. */
    unsigned char slotBits[DB_SLOTS / 8];
    /* The bus's view (ms timestamps, 0: never). */
    long long ctime, pingSent, pongReceived, dataReceived, failTime, votedTime;
    long long replOffset, replOffsetTime, orphanedTime;
    ClusterLink *link, *inLink;
    FailReport *reports;
    int nreports;
} ClusterNode;

#define BUS_MSG_TYPES 11

typedef struct ClusterState {
    ClusterNode **nodes;
    int count;
    ClusterNode *slots[DB_SLOTS];
    ClusterNode *migrating[DB_SLOTS];
    ClusterNode *importing[DB_SLOTS];
    unsigned long long currentEpoch, lastVoteEpoch;
    int ok;         /* cluster_state:ok */
    int size;       /* masters serving slots, as last computed */
    int todoState;  /* recompute the state before sleeping */
    int todoSave;   /* rewrite the config file before sleeping */
    int lockFd;     /* holds the flock on the config file */
    /* Bus statistics (CLUSTER INFO). */
    long long sent[BUS_MSG_TYPES], received[BUS_MSG_TYPES];
    long long rejected; /* messages refused as malformed */
    unsigned long long linksLimitExceeded;
    /* Election (a replica whose master failed). */
    long long failoverAuthTime;
    int failoverAuthCount, failoverAuthSent, failoverAuthRank;
    unsigned long long failoverAuthEpoch;
    /* Manual failover: on the master, the replica doing it; on the
     * replica, the master's offset to reach (-1 until known). */
    long long mfEnd;
    ClusterNode *mfReplica;
    long long mfMasterOffset;
    int mfCanStart;
} ClusterState;

extern ClusterState cs;
#define myself (cs.nodes[0])

/* Directives (cluster.c's table). */
extern int clPort, clAnnounceTlsPort;
extern long long clNodeTimeout;
extern char *clAnnounceIp, *clAnnounceHostname;
extern int clReplicaValidityFactor, clMigrationBarrier, clAllowReplicaMigration, clReplicaNoFailover;
extern int clAllowPubsubshardWhenDown;
extern unsigned long long clLinkSendbufLimit;

/* cluster.c: the node table and slots. */
ClusterNode *nodeCreate(const char *name, int flags);
void nodeAppend(ClusterNode *n);
int validName(const char *s, size_t len);
ClusterNode *nodeLookup(const char *s, size_t len);
int nodeIsMaster(const ClusterNode *n);
ClusterNode *nodeMaster(const ClusterNode *n);
void slotAdd(ClusterNode *n, int slot);
void slotDel(int slot);
void nodeDelSlots(ClusterNode *n);
/* Removes a node other than myself: its slots, marks, links, reports. */
void nodeDelete(ClusterNode *n);
int bumpEpoch(void);
/* Writes nodes.conf atomically (temporary file, rename); fsync'd only
 * when an epoch changed since the last fsync'd write.  0 or -1 (errno). */
int saveConfig(void);
/* saveConfig with an fsync whatever changed (CLUSTER SAVECONFIG). */
int saveConfigSync(void);
void updateState(void);
void todoSaveAndState(void);
int replicasOf(const ClusterNode *m, ClusterNode **out);
/* A node's CLUSTER NODES / nodes.conf line; c (NULL for nodes.conf) is
 * the client it is for, whose transport picks the port shown. */
sds nodeDescription(sds s, const ClusterNode *n, int withMarks, const Client *c);
/* The ports myself announces (client, plaintext client, bus). */
void clusterMyPorts(int *port, int *pport, int *cport);
/* n's client port for c: the plaintext one (pport) for a plain client of
 * a TLS cluster, as Redis 7.0. */
int clusterClientPort(const ClusterNode *n, const Client *c);

/* cluster_bus.c */
/* Binds the bus listener (cluster-port, else port + 10000); exits as
 * Redis does when it cannot. */
void busInit(void);
/* Every 100 ms, from cluster.c's timer. */
void busCron(void);
/* Before the loop sleeps: the deferred config save and state update. */
void busBeforeSleep(void);
/* CLUSTER MEET ip port cport: 0, or -1 (the address is invalid). */
int busMeet(const char *ip, long long port, long long cport);
/* nodeDelete's part: frees n's links and the failure reports about it
 * and by it. */
void busNodeForget(ClusterNode *n);
/* CLUSTER FORGET: n's name is not re-added by gossip for a minute. */
void busBlacklistAdd(const char *name);
/* Valid failure reports about n (CLUSTER COUNT-FAILURE-REPORTS). */
int busFailureReports(ClusterNode *n);
/* CLUSTER LINKS's reply. */
void busLinksReply(Client *c);
/* Bus messages refused as malformed so far (INFO cluster shows it once
 * not 0). */
long long busRejected(void);
/* CLUSTER INFO's message statistics lines. */
sds busInfoStats(sds s);
/* CLUSTER REPLICATE: myself becomes a replica of n. */
void busSetMyMaster(ClusterNode *n);
/* CLUSTER FAILOVER [FORCE|TAKEOVER] on a replica: NULL when started,
 * else the error to reply. */
const char *busManualFailover(int force, int takeover);
/* CLUSTER RESET: the manual failover in progress (if any) ends. */
void busResetManualFailover(void);

#endif
