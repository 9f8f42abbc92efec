/* cluster_bus.c -- the cluster bus (issue 36): the node-to-node links and
 * Redis 7.0's binary messages on them, so Cairn and redis-server 7.0
 * nodes form one cluster.
 *
 * Wire format (every integer big-endian; written and read field by field
 * at fixed offsets, never through a packed struct):
 *   header, 2256 bytes: "RCmb", totlen u32, version u16 (1), port u16,
 *   type u16, count u16, currentEpoch u64, configEpoch u64, offset u64,
 *   sender name [40], slot bitmap [2048] (bit s of byte s/8 is slot s),
 *   master name [40] (zeros: none), ip [46] (zeros: take the peer's),
 *   extension count u16, 30 unused bytes, plaintext port u16, bus port
 *   u16, flags u16, state u8 (0 ok, 1 fail), message flags [3];
 *   then per type: PING/PONG/MEET `count` gossip entries of 104 bytes
 *   (name [40], ping_sent u32 s, pong_received u32 s, ip [46], port u16,
 *   cport u16, flags u16, pport u16, 2 unused) and, with message flag
 *   EXT_DATA, `extension count` extensions (length u32 including its
 *   8-byte head, type u16, 2 unused, data padded to 8; type 0 is the
 *   hostname, NUL-terminated); FAIL a name [40]; PUBLISH/PUBLISHSHARD
 *   channel length u32, message length u32, both; UPDATE configEpoch u64,
 *   name [40], slot bitmap [2048]; MODULE id u64, length u32, type u8,
 *   payload; FAILOVER_AUTH_REQUEST/ACK and MFSTART nothing more.
 *
 * Invariants:
 *  - every link is on the `links` list until linkFree; a link's node (if
 *    any) points back at it as link (outbound) or inLink (inbound);
 *  - a message is read in two steps: its first 8 bytes, then, once the
 *    signature and a length in [HDR_LEN, MAX_MSG] are seen, the rest; the
 *    receive buffer grows only as bytes arrive (a lying length costs no
 *    memory it does not receive); a whole message is validated (its exact
 *    length for its type and counts) before any field past the header is
 *    read; a malformed one is counted (cs.rejected) and dropped, a bad
 *    signature or length closes the link;
 *  - a handler that may free the link it runs on (processing a message)
 *    returns 0 then, and its caller stops touching the link.
 *
 * The behaviour (handshake, gossip, epochs and their collisions, slot
 * ownership by configEpoch and UPDATE, PFAIL/FAIL with failure reports,
 * replica elections, manual failover) follows Redis 7.0's documented
 * cluster specification; see docs/architecture.md's Cluster section. */
#include "server/cluster.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <arpa/inet.h>

#include "core/conn.h"
#include "core/log.h"
#include "core/net.h"
#include "core/server.h"
#include "ds/alloc.h"
#include "ds/rand.h"
#include "ds/util.h"
#include "repl/repl.h"
#include "server/cluster_int.h"
#include "server/pause.h"
#include "server/pubsub.h"

enum { MSG_PING, MSG_PONG, MSG_MEET, MSG_FAIL, MSG_PUBLISH, MSG_AUTH_REQUEST, MSG_AUTH_ACK, MSG_UPDATE,
       MSG_MFSTART, MSG_MODULE, MSG_PUBLISHSHARD };

static const char *msgTypeNames[BUS_MSG_TYPES] = {"ping",     "pong",     "meet",   "fail",    "publish",     "auth-req",
                                                  "auth-ack", "update",   "mfstart", "module", "publishshard"};

/* Header offsets. */
#define H_TOTLEN 4
#define H_VER 8
#define H_PORT 10
#define H_TYPE 12
#define H_COUNT 14
#define H_CUREPOCH 16
#define H_CFGEPOCH 24
#define H_OFFSET 32
#define H_SENDER 40
#define H_SLOTS 80
#define H_MASTER 2128
#define H_IP 2168
#define H_EXTS 2214
#define H_PPORT 2246
#define H_CPORT 2248
#define H_FLAGS 2250
#define H_STATE 2252
#define H_MFLAGS 2253
#define HDR_LEN 2256
#define IPLEN 46
#define SLOTS_BYTES (DB_SLOTS / 8)
#define GOSSIP_LEN 104
#define UPDATE_LEN (8 + NAMELEN + SLOTS_BYTES)
/* The largest message accepted: a PUBLISH of up to 64 MB. */
#define MAX_MSG (64u << 20)

#define MF0_PAUSED 1
#define MF0_FORCEACK 2
#define MF0_EXT_DATA 4

#define EXT_HOSTNAME 0

#define MF_TIMEOUT_MS 5000
#define BLACKLIST_TTL_MS 60000

struct ClusterLink {
    Connection *conn;
    ClusterNode *node;
    int inbound;
    int connected; /* outbound: the connect finished */
    long long ctime;
    sds sndbuf;
    unsigned char *rbuf;
    size_t rlen, rcap;
    ClusterLink *prev, *next;
};

static ClusterLink *links;
static Listener busListener = {.name = "cluster-bus"};

typedef struct Blacklisted {
    char name[NAMELEN];
    long long expire;
} Blacklisted;
static Blacklisted *blacklist;
static int nblacklist;

/* ---- small helpers ------------------------------------------------------ */

static void put16(unsigned char *p, unsigned v) {
    p[0] = (unsigned char)(v >> 8);
    p[1] = (unsigned char)v;
}
static void put32(unsigned char *p, uint32_t v) {
    for (int i = 0; i < 4; i++) p[i] = (unsigned char)(v >> (24 - 8 * i));
}
static void put64(unsigned char *p, uint64_t v) {
    for (int i = 0; i < 8; i++) p[i] = (unsigned char)(v >> (56 - 8 * i));
}
static unsigned get16(const unsigned char *p) { return (unsigned)p[0] << 8 | p[1]; }
static uint32_t get32(const unsigned char *p) {
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}
static uint64_t get64(const unsigned char *p) {
    uint64_t v = 0;
    for (int i = 0; i < 8; i++) v = v << 8 | p[i];
    return v;
}
static int bitTest(const unsigned char *map, int j) { return (map[j >> 3] >> (j & 7)) & 1; }

static long long now(void) { return mstime(); }

static int nodeTimedOut(const ClusterNode *n) { return (n->flags & NODE_PFAIL) != 0; }
static int nodeFailed(const ClusterNode *n) { return (n->flags & NODE_FAIL) != 0; }

static void todo(int save) {
    cs.todoState = 1;
    if (save) cs.todoSave = 1;
}

/* The ip part of "ip:port" (IPv6 addresses keep their colons, lose any
 * brackets) into out (size IPLEN). */
static void hostOfAddr(const char *addr, char *out) {
    const char *colon = strrchr(addr, ':');
    size_t len = colon ? (size_t)(colon - addr) : strlen(addr);
    if (len && addr[0] == '[' && addr[len - 1] == ']') {
        addr++;
        len -= 2;
    }
    if (len >= IPLEN) len = IPLEN - 1;
    memcpy(out, addr, len);
    out[len] = '\0';
}

static int myReplOffset(long long *off) {
    replReplicaAcks(off, NULL, 0);
    return 0;
}

/* ---- links -------------------------------------------------------------- */

static void linkReadable(EventLoop *loop, int fd, void *data, int mask);
static void linkWritable(EventLoop *loop, int fd, void *data, int mask);

static ClusterLink *linkCreate(Connection *conn, ClusterNode *node, int inbound) {
    ClusterLink *l = xcalloc(sizeof(*l));
    l->conn = conn;
    l->node = node;
    l->inbound = inbound;
    l->ctime = now();
    l->sndbuf = sdsEmpty();
    l->next = links;
    if (links) links->prev = l;
    links = l;
    return l;
}

static void linkFree(ClusterLink *l) {
    if (l->conn) connClose(l->conn);
    if (l->node) {
        if (l->node->link == l) l->node->link = NULL;
        if (l->node->inLink == l) l->node->inLink = NULL;
    }
    if (l->prev) l->prev->next = l->next;
    else links = l->next;
    if (l->next) l->next->prev = l->prev;
    sdsFree(l->sndbuf);
    xfree(l->rbuf);
    xfree(l);
}

static void linkSend(ClusterLink *l, const unsigned char *msg, size_t len) {
    if (!l || !l->conn) return;
    if (sdsLen(l->sndbuf) == 0 && (l->inbound || l->connected))
        connEventAdd(l->conn, EV_WRITABLE, linkWritable, l);
    l->sndbuf = sdsCatLen(l->sndbuf, (const char *)msg, len);
    unsigned type = get16(msg + H_TYPE);
    if (type < BUS_MSG_TYPES) cs.sent[type]++;
}

static void linkWritable(EventLoop *loop, int fd, void *data, int mask) {
    (void)loop;
    (void)fd;
    (void)mask;
    ClusterLink *l = data;
    size_t len = sdsLen(l->sndbuf);
    if (len) {
        long n = connWrite(l->conn, l->sndbuf, len);
        if (n < 0) {
            if (errno == EAGAIN || errno == EINTR) return;
            serverLog(LL_DEBUG, "I/O error writing to node link: %s", strerror(errno));
            linkFree(l);
            return;
        }
        sdsRange(l->sndbuf, n, -1);
    }
    if (sdsLen(l->sndbuf) == 0) connEventDel(l->conn, EV_WRITABLE);
}

/* ---- building messages -------------------------------------------------- */

static ClusterNode *myMasterOrMe(void) {
    ClusterNode *m = nodeIsMaster(myself) ? myself : nodeMaster(myself);
    return m ? m : myself;
}

static int mfPaused(void) { return cs.mfEnd && nodeIsMaster(myself) && cs.mfReplica; }

/* A zeroed message of len bytes with the header filled in. */
static unsigned char *msgNew(int type, size_t len) {
    unsigned char *m = xcalloc(len);
    memcpy(m, "RCmb", 4);
    put32(m + H_TOTLEN, (uint32_t)len);
    put16(m + H_VER, 1);
    put16(m + H_PORT, (unsigned)myself->port);
    put16(m + H_TYPE, (unsigned)type);
    ClusterNode *master = myMasterOrMe();
    put64(m + H_CUREPOCH, cs.currentEpoch);
    put64(m + H_CFGEPOCH, master->configEpoch);
    long long off = 0;
    myReplOffset(&off);
    put64(m + H_OFFSET, (uint64_t)off);
    memcpy(m + H_SENDER, myself->name, NAMELEN);
    if (master->numSlots) memcpy(m + H_SLOTS, master->slotBits, DB_SLOTS / 8);
    if (!nodeIsMaster(myself) && myself->masterName[0]) memcpy(m + H_MASTER, myself->masterName, NAMELEN);
    if (clAnnounceIp) strncpy((char *)m + H_IP, clAnnounceIp, IPLEN - 1);
    put16(m + H_PPORT, (unsigned)myself->pport);
    put16(m + H_CPORT, (unsigned)myself->cport);
    put16(m + H_FLAGS, (unsigned)myself->flags & 0xffff);
    m[H_STATE] = cs.ok ? 0 : 1;
    if (mfPaused()) m[H_MFLAGS] |= MF0_PAUSED;
    return m;
}

static void gossipEntry(unsigned char *g, const ClusterNode *n) {
    memcpy(g, n->name, NAMELEN);
    put32(g + 40, (uint32_t)(n->pingSent / 1000));
    put32(g + 44, (uint32_t)(n->pongReceived / 1000));
    strncpy((char *)g + 48, n->ip, IPLEN - 1);
    put16(g + 94, (unsigned)n->port);
    put16(g + 96, (unsigned)n->cport);
    put16(g + 98, (unsigned)n->flags & 0xffff);
    put16(g + 100, (unsigned)n->pport);
}

/* PING, PONG or MEET on l: gossip about a tenth of the nodes (at least 3)
 * and every node in PFAIL, then the hostname extension when announced. */
static void sendPing(ClusterLink *l, int type) {
    int fresh = cs.count - 2, wanted = cs.count / 10, pfail = 0;
    if (wanted < 3) wanted = 3;
    if (wanted > fresh) wanted = fresh;
    if (wanted < 0) wanted = 0;
    for (int i = 0; i < cs.count; i++) pfail += nodeTimedOut(cs.nodes[i]) ? 1 : 0;
    size_t hlen = sdsLen(myself->hostname), extlen = hlen ? 8 + ((hlen + 1 + 7) / 8) * 8 : 0;
    size_t cap = HDR_LEN + (size_t)(wanted + pfail) * GOSSIP_LEN + extlen;
    unsigned char *m = msgNew(type, cap);
    if (l->node && type == MSG_PING) l->node->pingSent = now();
    int n = 0, tries = wanted * 3;
    while (fresh > 0 && n < wanted && tries-- > 0) {
        ClusterNode *x = cs.nodes[randBounded((uint64_t)cs.count)];
        if (x == myself || nodeTimedOut(x)) continue;
        if ((x->flags & (NODE_HANDSHAKE | NODE_NOADDR)) || (!x->link && x->numSlots == 0)) continue;
        int dup = 0;
        for (int k = 0; k < n && !dup; k++) dup = !memcmp(m + HDR_LEN + (size_t)k * GOSSIP_LEN, x->name, NAMELEN);
        if (dup) continue;
        fresh--;
        gossipEntry(m + HDR_LEN + (size_t)n++ * GOSSIP_LEN, x);
    }
    for (int i = 0; i < cs.count && pfail; i++) {
        ClusterNode *x = cs.nodes[i];
        if (!nodeTimedOut(x) || (x->flags & (NODE_HANDSHAKE | NODE_NOADDR))) continue;
        gossipEntry(m + HDR_LEN + (size_t)n++ * GOSSIP_LEN, x);
        pfail--;
    }
    size_t len = HDR_LEN + (size_t)n * GOSSIP_LEN;
    if (hlen) {
        unsigned char *e = m + len;
        put32(e, (uint32_t)extlen);
        put16(e + 4, EXT_HOSTNAME);
        memcpy(e + 8, myself->hostname, hlen);
        len += extlen;
        put16(m + H_EXTS, 1);
        m[H_MFLAGS] |= MF0_EXT_DATA;
    }
    put16(m + H_COUNT, (unsigned)n);
    put32(m + H_TOTLEN, (uint32_t)len);
    linkSend(l, m, len);
    xfree(m);
}

static void broadcast(const unsigned char *m, size_t len) {
    for (int i = 1; i < cs.count; i++) {
        ClusterNode *n = cs.nodes[i];
        if (!n->link || (n->flags & (NODE_HANDSHAKE | NODE_MYSELF))) continue;
        linkSend(n->link, m, len);
    }
}

/* PONG to every node (all), or to the other replicas of my master. */
static void broadcastPong(int all) {
    for (int i = 1; i < cs.count; i++) {
        ClusterNode *n = cs.nodes[i];
        if (!n->link || (n->flags & NODE_HANDSHAKE)) continue;
        if (!all) {
            if (!(n->flags & NODE_SLAVE) || !myself->masterName[0] ||
                memcmp(n->masterName, myself->masterName, NAMELEN))
                continue;
        }
        sendPing(n->link, MSG_PONG);
    }
}

static void sendFail(const char *name) {
    unsigned char *m = msgNew(MSG_FAIL, HDR_LEN + NAMELEN);
    memcpy(m + HDR_LEN, name, NAMELEN);
    broadcast(m, HDR_LEN + NAMELEN);
    xfree(m);
}

static void sendUpdate(ClusterLink *l, ClusterNode *n) {
    if (!l) return;
    unsigned char *m = msgNew(MSG_UPDATE, HDR_LEN + UPDATE_LEN);
    put64(m + HDR_LEN, n->configEpoch);
    memcpy(m + HDR_LEN + 8, n->name, NAMELEN);
    memcpy(m + HDR_LEN + 8 + NAMELEN, n->slotBits, DB_SLOTS / 8);
    linkSend(l, m, HDR_LEN + UPDATE_LEN);
    xfree(m);
}

void clusterPropagatePublish(const char *ch, size_t clen, const char *msg, size_t mlen, int shard) {
    if (!clusterEnabled || clen > MAX_MSG || mlen > MAX_MSG - HDR_LEN - 8 - clen) return;
    size_t len = HDR_LEN + 8 + clen + mlen;
    unsigned char *m = msgNew(shard ? MSG_PUBLISHSHARD : MSG_PUBLISH, len);
    put32(m + HDR_LEN, (uint32_t)clen);
    put32(m + HDR_LEN + 4, (uint32_t)mlen);
    memcpy(m + HDR_LEN + 8, ch, clen);
    memcpy(m + HDR_LEN + 8 + clen, msg, mlen);
    if (!shard) {
        broadcast(m, len);
    } else {
        ClusterNode *master = myMasterOrMe();
        for (int i = 1; i < cs.count; i++) {
            ClusterNode *n = cs.nodes[i];
            if (!n->link || (n->flags & NODE_HANDSHAKE)) continue;
            if (n == master || (n->masterName[0] && !memcmp(n->masterName, master->name, NAMELEN)))
                linkSend(n->link, m, len);
        }
    }
    xfree(m);
}

static ClusterModuleMessageHook *moduleMessageHook;

void clusterSetModuleMessageHook(ClusterModuleMessageHook *hook) { moduleMessageHook = hook; }

int clusterSendModuleMessage(const char *target, uint64_t moduleId, uint8_t type, const unsigned char *payload,
                             uint32_t len) {
    if (!clusterEnabled || len > MAX_MSG - HDR_LEN - 13) return -1;
    ClusterNode *to = NULL;
    if (target) {
        to = strlen(target) == NAMELEN ? nodeLookup(target, NAMELEN) : NULL;
        if (!to || !to->link) return -1;
    }
    size_t total = HDR_LEN + 13 + (size_t)len;
    unsigned char *m = msgNew(MSG_MODULE, total);
    memcpy(m + HDR_LEN, &moduleId, 8);
    put32(m + HDR_LEN + 8, len);
    m[HDR_LEN + 12] = type;
    if (len) memcpy(m + HDR_LEN + 13, payload, len);
    if (to) linkSend(to->link, m, total);
    else broadcast(m, total);
    xfree(m);
    return 0;
}

/* ---- failure reports ---------------------------------------------------- */

static void reportsPrune(ClusterNode *n) {
    long long maxAge = clNodeTimeout * 2, t = now();
    int k = 0;
    for (int i = 0; i < n->nreports; i++)
        if (t - n->reports[i].time <= maxAge) n->reports[k++] = n->reports[i];
    n->nreports = k;
}

/* 1 when sender's report about n is new. */
static int reportAdd(ClusterNode *n, ClusterNode *sender) {
    for (int i = 0; i < n->nreports; i++) {
        if (n->reports[i].node == sender) {
            n->reports[i].time = now();
            return 0;
        }
    }
    n->reports = xrealloc(n->reports, sizeof(*n->reports) * (size_t)(n->nreports + 1));
    n->reports[n->nreports++] = (FailReport){sender, now()};
    return 1;
}

static void reportDel(ClusterNode *n, ClusterNode *sender) {
    for (int i = 0; i < n->nreports; i++) {
        if (n->reports[i].node == sender) {
            n->reports[i] = n->reports[--n->nreports];
            return;
        }
    }
}

int busFailureReports(ClusterNode *n) {
    reportsPrune(n);
    return n->nreports;
}

/* PFAIL becomes FAIL when a majority of the masters (myself counted when
 * a master) agree; the FAIL is then broadcast. */
static void markFailingIfNeeded(ClusterNode *n) {
    int quorum = cs.size / 2 + 1;
    if (!nodeTimedOut(n) || nodeFailed(n)) return;
    int failures = busFailureReports(n) + (nodeIsMaster(myself) ? 1 : 0);
    if (failures < quorum) return;
    serverLog(LL_NOTICE, "Marking node %.40s as failing (quorum reached).", n->name);
    n->flags = (n->flags & ~NODE_PFAIL) | NODE_FAIL;
    n->failTime = now();
    if (nodeIsMaster(myself)) sendFail(n->name);
    todo(1);
}

/* A FAIL node that answers again: replicas and slot-less masters at
 * once, masters with slots after 2 node timeouts without a failover. */
static void clearFailureIfNeeded(ClusterNode *n) {
    long long t = now();
    if ((n->flags & NODE_SLAVE) || n->numSlots == 0) {
        serverLog(LL_NOTICE, "Clear FAIL state for node %.40s: %s is reachable again.", n->name,
                  (n->flags & NODE_SLAVE) ? "replica" : "master without slots");
        n->flags &= ~NODE_FAIL;
        todo(1);
    }
    if (nodeIsMaster(n) && n->numSlots > 0 && t - n->failTime > clNodeTimeout * 2) {
        serverLog(LL_NOTICE, "Clear FAIL state for node %.40s: is reachable again and nobody is serving its slots after some time.",
                  n->name);
        n->flags &= ~NODE_FAIL;
        todo(1);
    }
}

void busNodeForget(ClusterNode *n) {
    if (n->link) linkFree(n->link);
    if (n->inLink) linkFree(n->inLink);
    for (ClusterLink *l = links; l; l = l->next)
        if (l->node == n) l->node = NULL;
    for (int i = 0; i < cs.count; i++) reportDel(cs.nodes[i], n);
    xfree(n->reports);
    n->reports = NULL;
    n->nreports = 0;
    if (cs.mfReplica == n) cs.mfReplica = NULL;
}

void busBlacklistAdd(const char *name) {
    long long t = now();
    int k = 0;
    for (int i = 0; i < nblacklist; i++)
        if (blacklist[i].expire > t && memcmp(blacklist[i].name, name, NAMELEN)) blacklist[k++] = blacklist[i];
    nblacklist = k;
    blacklist = xrealloc(blacklist, sizeof(*blacklist) * (size_t)(nblacklist + 1));
    memcpy(blacklist[nblacklist].name, name, NAMELEN);
    blacklist[nblacklist++].expire = t + BLACKLIST_TTL_MS;
}

static int blacklisted(const char *name) {
    long long t = now();
    for (int i = 0; i < nblacklist; i++)
        if (blacklist[i].expire > t && !memcmp(blacklist[i].name, name, NAMELEN)) return 1;
    return 0;
}

/* ---- roles and slots ---------------------------------------------------- */

static void setNodeAsMaster(ClusterNode *n) {
    if (nodeIsMaster(n)) return;
    n->flags = (n->flags & ~NODE_SLAVE) | NODE_MASTER;
    n->masterName[0] = '\0';
    todo(1);
}

static void resetManualFailover(void) {
    if (cs.mfEnd && cs.mfReplica) pauseShutdownWrites(0);
    cs.mfEnd = 0;
    cs.mfCanStart = 0;
    cs.mfReplica = NULL;
    cs.mfMasterOffset = -1;
}

void busResetManualFailover(void) { resetManualFailover(); }

void busSetMyMaster(ClusterNode *n) {
    if (nodeIsMaster(myself)) {
        myself->flags = (myself->flags & ~(NODE_MASTER | NODE_MIGRATE_TO)) | NODE_SLAVE;
        memset(cs.migrating, 0, sizeof(cs.migrating));
        memset(cs.importing, 0, sizeof(cs.importing));
    }
    memcpy(myself->masterName, n->name, NAMELEN);
    myself->masterName[NAMELEN] = '\0';
    replicaSetPrimary(n->ip, n->port);
    resetManualFailover();
    todo(1);
}

/* Applies sender's claim (at senderEpoch) on the slots of bitmap: each
 * slot unowned or owned at a lower epoch moves to sender.  When myself
 * (or my master) loses its last slot to sender, myself follows sender as
 * its replica; slots myself lost with keys have them deleted. */
static void updateSlotsConfigWith(ClusterNode *sender, unsigned long long senderEpoch, const unsigned char *bitmap) {
    if (sender == myself) return;
    ClusterNode *cur = myMasterOrMe(), *newMaster = NULL;
    int dirty[64], ndirty = 0, ownLost = 0, senderSlots = 0;
    for (int j = 0; j < (int)DB_SLOTS; j++) {
        if (!bitTest(bitmap, j)) continue;
        senderSlots++;
        if (cs.slots[j] == sender || cs.importing[j]) continue;
        if (cs.slots[j] == NULL || cs.slots[j]->configEpoch < senderEpoch) {
            if (cs.slots[j] == myself && dbSlotCount(&server.db[0], (unsigned)j) && ndirty < 64) dirty[ndirty++] = j;
            else if (cs.slots[j] == myself && dbSlotCount(&server.db[0], (unsigned)j) &&
                     !(clusterModuleFlags & CLUSTER_MODULE_NO_REDIRECTION))
                dbSlotDrop(&server.db[0], (unsigned)j);
            if (cs.slots[j] == cur) {
                newMaster = sender;
                ownLost++;
            }
            slotDel(j);
            slotAdd(sender, j);
            cs.migrating[j] = NULL;
            todo(1);
        }
    }
    if (clusterModuleFlags & CLUSTER_MODULE_NO_REDIRECTION) return;
    if (newMaster && cur->numSlots == 0 && (clAllowReplicaMigration || senderSlots == ownLost)) {
        serverLog(LL_WARNING, "Configuration change detected. Reconfiguring myself as a replica of %.40s",
                  sender->name);
        busSetMyMaster(sender);
    } else if (ndirty) {
        for (int i = 0; i < ndirty; i++) {
            serverLog(LL_WARNING, "Deleting keys in dirty slot %d on node %.40s", dirty[i], myself->name);
            dbSlotDrop(&server.db[0], (unsigned)dirty[i]);
        }
    }
}

/* Two masters with one configEpoch: the one with the smaller name takes a
 * new epoch. */
static void handleEpochCollision(ClusterNode *sender) {
    if (sender->configEpoch != myself->configEpoch || !nodeIsMaster(sender) || !nodeIsMaster(myself)) return;
    if (memcmp(sender->name, myself->name, NAMELEN) <= 0) return;
    cs.currentEpoch++;
    myself->configEpoch = cs.currentEpoch;
    todo(1);
    serverLog(LL_VERBOSE, "WARNING: configEpoch collision with node %.40s. configEpoch set to %llu", sender->name,
              cs.currentEpoch);
}

/* ---- receiving ---------------------------------------------------------- */

/* 1 when the whole message m (len bytes, len >= HDR_LEN) has the exact
 * length its type and counts say. */
static int validMessage(const unsigned char *m, size_t len) {
    unsigned type = get16(m + H_TYPE);
    uint64_t exp = HDR_LEN;
    if (get16(m + H_VER) != 1) return 0;
    switch (type) {
    case MSG_PING:
    case MSG_PONG:
    case MSG_MEET:
        exp += (uint64_t)get16(m + H_COUNT) * GOSSIP_LEN;
        if (m[H_MFLAGS] & MF0_EXT_DATA) {
            unsigned exts = get16(m + H_EXTS);
            for (unsigned i = 0; i < exts; i++) {
                if (exp + 8 > len) return 0;
                uint32_t el = get32(m + exp);
                if (el < 8 || el % 8 || exp + el > len) return 0;
                exp += el;
            }
        }
        break;
    case MSG_FAIL: exp += NAMELEN; break;
    case MSG_PUBLISH:
    case MSG_PUBLISHSHARD:
        if (len < HDR_LEN + 8) return 0;
        exp += 8 + (uint64_t)get32(m + HDR_LEN) + get32(m + HDR_LEN + 4);
        break;
    case MSG_AUTH_REQUEST:
    case MSG_AUTH_ACK:
    case MSG_MFSTART: break;
    case MSG_UPDATE: exp += UPDATE_LEN; break;
    case MSG_MODULE:
        if (len < HDR_LEN + 13) return 0;
        exp += 13 + (uint64_t)get32(m + HDR_LEN + 8);
        break;
    default: return 1; /* unknown types are ignored */
    }
    return exp == len;
}

/* The sender's address: the header's ip when set, else the peer's. */
static void senderIp(ClusterLink *l, const unsigned char *m, char *ip) {
    if (m[H_IP]) {
        memcpy(ip, m + H_IP, IPLEN);
        ip[IPLEN - 1] = '\0';
        return;
    }
    char addr[128];
    if (connPeerAddr(l->conn, addr, sizeof(addr)) == -1) addr[0] = '\0';
    hostOfAddr(addr, ip);
}

/* Sender's address changed (seen on a PING it sent us): take the new one
 * and reconnect. */
static void updateAddressIfNeeded(ClusterNode *n, ClusterLink *l, const unsigned char *m) {
    if (l == n->link) return;
    char ip[IPLEN];
    senderIp(l, m, ip);
    int port = (int)get16(m + H_PORT), cport = (int)get16(m + H_CPORT), pport = (int)get16(m + H_PPORT);
    if (!strcmp(ip, n->ip) && n->port == port && n->cport == cport && n->pport == pport) return;
    sdsFree(n->ip);
    n->ip = sdsNew(ip);
    n->port = port;
    n->cport = cport;
    n->pport = pport;
    if (n->link) linkFree(n->link);
    n->flags &= ~NODE_NOADDR;
    serverLog(LL_NOTICE, "Address updated for node %.40s, now %s:%d", n->name, n->ip, n->port);
    if (!nodeIsMaster(myself) && !memcmp(myself->masterName, n->name, NAMELEN)) replicaSetPrimary(n->ip, n->port);
    todo(1);
}

/* The gossip section of a PING/PONG/MEET that arrived on l. */
static void processGossip(ClusterLink *l, ClusterNode *sender, const unsigned char *m) {
    unsigned count = get16(m + H_COUNT);
    long long t = now();
    for (unsigned i = 0; i < count; i++) {
        const unsigned char *g = m + HDR_LEN + (size_t)i * GOSSIP_LEN;
        int flags = (int)get16(g + 98);
        if (!validName((const char *)g, NAMELEN)) continue;
        ClusterNode *n = nodeLookup((const char *)g, NAMELEN);
        char ip[IPLEN];
        memcpy(ip, g + 48, IPLEN);
        ip[IPLEN - 1] = '\0';
        if (n) {
            if (sender && nodeIsMaster(sender) && n != myself) {
                if (flags & (NODE_FAIL | NODE_PFAIL)) {
                    if (reportAdd(n, sender))
                        serverLog(LL_VERBOSE, "Node %.40s reported node %.40s as not reachable.", sender->name, n->name);
                    markFailingIfNeeded(n);
                } else {
                    reportDel(n, sender);
                }
            }
            if (!(flags & (NODE_FAIL | NODE_PFAIL)) && n->pingSent == 0 && n->nreports == 0) {
                long long pong = (long long)get32(g + 44) * 1000;
                if (pong <= t + 500 && pong > n->pongReceived) n->pongReceived = pong;
            }
            /* (never the link this message is being read from) */
            if ((n->flags & (NODE_FAIL | NODE_PFAIL)) && !(flags & NODE_NOADDR) && !(flags & (NODE_FAIL | NODE_PFAIL)) &&
                n->link != l && n->inLink != l &&
                (strcasecmp(n->ip, ip) || n->port != (int)get16(g + 94) || n->cport != (int)get16(g + 96))) {
                if (n->link) linkFree(n->link);
                sdsFree(n->ip);
                n->ip = sdsNew(ip);
                n->port = (int)get16(g + 94);
                n->cport = (int)get16(g + 96);
                n->pport = (int)get16(g + 100);
                n->flags &= ~NODE_NOADDR;
            }
        } else if (sender && !(flags & NODE_NOADDR) && !blacklisted((const char *)g) && ip[0]) {
            /* With the role the gossip gives it, as Redis does: a node
             * known with no role until its first PONG would be gossiped
             * on with none, and a Redis node that learns of it so never
             * flags it a replica later (it sets the replica flag only on
             * a node it knew as a master), so its CLUSTER SHARDS calls the
             * replica a master for good. */
            n = nodeCreate((const char *)g, flags & (NODE_MASTER | NODE_SLAVE));
            sdsFree(n->ip);
            n->ip = sdsNew(ip);
            n->port = (int)get16(g + 94);
            n->cport = (int)get16(g + 96);
            n->pport = (int)get16(g + 100);
            nodeAppend(n);
            todo(1);
        }
    }
}

static void processExtensions(ClusterNode *sender, const unsigned char *m, size_t len) {
    size_t off = HDR_LEN + (size_t)get16(m + H_COUNT) * GOSSIP_LEN;
    const char *host = NULL;
    size_t hostLen = 0;
    if (m[H_MFLAGS] & MF0_EXT_DATA) {
        unsigned exts = get16(m + H_EXTS);
        for (unsigned i = 0; i < exts && off + 8 <= len; i++) {
            uint32_t el = get32(m + off);
            if (get16(m + off + 4) == EXT_HOSTNAME && el > 8) {
                const char *p = (const char *)m + off + 8;
                const char *nul = memchr(p, 0, el - 8);
                if (nul) {
                    host = p;
                    hostLen = (size_t)(nul - p);
                }
            }
            off += el;
        }
    }
    if (hostLen != sdsLen(sender->hostname) || (hostLen && memcmp(host, sender->hostname, hostLen))) {
        sdsFree(sender->hostname);
        sender->hostname = sdsNewLen(host ? host : "", hostLen);
        todo(1);
    }
}

static void sendFailoverAuthIfNeeded(ClusterNode *node, const unsigned char *m);
static void takeOverMaster(void);

/* One whole, validated message on l.  0 when l was freed. */
static int processMessage(ClusterLink *l, const unsigned char *m, size_t len) {
    unsigned type = get16(m + H_TYPE);
    long long t = now();
    if (type < BUS_MSG_TYPES) cs.received[type]++;
    if (!validMessage(m, len)) {
        cs.rejected++;
        return 1;
    }
    if (type >= BUS_MSG_TYPES) return 1;
    const char *senderName = (const char *)m + H_SENDER;
    ClusterNode *sender = (l->node && !(l->node->flags & NODE_HANDSHAKE)) ? l->node : nodeLookup(senderName, NAMELEN);
    /* A message in my own name (a MEET to my own address, or a forgery)
     * says nothing about any node. */
    int fromMyName = sender == myself;
    if (fromMyName) sender = NULL;
    if (sender && l->inbound && !l->node) {
        if (sender->inLink && sender->inLink != l) linkFree(sender->inLink);
        sender->inLink = l;
        l->node = sender;
    }
    if (sender) sender->dataReceived = t;
    unsigned long long senderCur = get64(m + H_CUREPOCH), senderCfg = get64(m + H_CFGEPOCH);
    if (sender && !(sender->flags & NODE_HANDSHAKE)) {
        if (senderCur > cs.currentEpoch) {
            cs.currentEpoch = senderCur;
            todo(1);
        }
        if (senderCfg > sender->configEpoch) {
            sender->configEpoch = senderCfg;
            todo(1);
        }
        sender->replOffset = (long long)get64(m + H_OFFSET);
        sender->replOffsetTime = t;
        /* The manual failover's master offset, once its master paused. */
        if (cs.mfEnd && !nodeIsMaster(myself) && !memcmp(myself->masterName, sender->name, NAMELEN) &&
            (m[H_MFLAGS] & MF0_PAUSED) && cs.mfMasterOffset == -1) {
            cs.mfMasterOffset = sender->replOffset;
            serverLog(LL_WARNING, "Received replication offset for paused master manual failover: %lld",
                      cs.mfMasterOffset);
        }
    }

    if (type == MSG_PING || type == MSG_MEET) {
        if ((type == MSG_MEET || !myself->ip[0]) && !clAnnounceIp) {
            char addr[128], ip[IPLEN];
            if (connLocalAddr(l->conn, addr, sizeof(addr)) == 0) {
                hostOfAddr(addr, ip);
                if (strcmp(ip, myself->ip)) {
                    sdsFree(myself->ip);
                    myself->ip = sdsNew(ip);
                    serverLog(LL_WARNING, "IP address for this node updated to %s", myself->ip);
                    todo(1);
                }
            }
        }
        if (!sender && !fromMyName && type == MSG_MEET) {
            ClusterNode *n = nodeCreate(NULL, NODE_HANDSHAKE);
            char ip[IPLEN];
            senderIp(l, m, ip);
            sdsFree(n->ip);
            n->ip = sdsNew(ip);
            n->port = (int)get16(m + H_PORT);
            n->pport = (int)get16(m + H_PPORT);
            n->cport = (int)get16(m + H_CPORT);
            nodeAppend(n);
            todo(1);
        }
        if (!sender && type == MSG_MEET) processGossip(l, NULL, m);
        sendPing(l, MSG_PONG);
    }

    if (type == MSG_PING || type == MSG_PONG || type == MSG_MEET) {
        if (!l->inbound) {
            ClusterNode *ln = l->node;
            if (ln && (ln->flags & NODE_HANDSHAKE)) {
                if (sender) {
                    /* Already known under its name: drop the handshake node. */
                    if (type == MSG_PING || !(sender->flags & NODE_HANDSHAKE)) updateAddressIfNeeded(sender, l, m);
                    nodeDelete(ln);
                    return 0;
                }
                if (!validName(senderName, NAMELEN) || fromMyName) {
                    nodeDelete(ln);
                    return 0;
                }
                serverLog(LL_VERBOSE, "Renaming node %.40s into %.40s", ln->name, senderName);
                memcpy(ln->name, senderName, NAMELEN);
                ln->flags &= ~NODE_HANDSHAKE;
                ln->flags |= (int)get16(m + H_FLAGS) & (NODE_MASTER | NODE_SLAVE);
                todo(1);
                sender = ln;
            } else if (ln && memcmp(ln->name, senderName, NAMELEN)) {
                serverLog(LL_VERBOSE, "PONG contains mismatching sender ID. Node %.40s is now marked NOADDR.",
                          ln->name);
                ln->flags |= NODE_NOADDR;
                sdsClear(ln->ip);
                ln->port = ln->cport = ln->pport = 0;
                linkFree(l);
                todo(1);
                return 0;
            }
        }
        if (sender) {
            if (get16(m + H_FLAGS) & NODE_NOFAILOVER) sender->flags |= NODE_NOFAILOVER;
            else sender->flags &= ~NODE_NOFAILOVER;
        }
        if (sender && type == MSG_PING && !(sender->flags & NODE_HANDSHAKE)) updateAddressIfNeeded(sender, l, m);
        if (!l->inbound && l->node && type == MSG_PONG) {
            ClusterNode *ln = l->node;
            ln->pongReceived = t;
            ln->pingSent = 0;
            if (nodeTimedOut(ln)) {
                ln->flags &= ~NODE_PFAIL;
                todo(1);
            } else if (nodeFailed(ln)) {
                clearFailureIfNeeded(ln);
            }
        }
        if (!sender) return 1;
        /* Role. */
        const char *masterName = (const char *)m + H_MASTER;
        int noMaster = 1;
        for (int i = 0; i < NAMELEN && noMaster; i++) noMaster = masterName[i] == 0;
        if (noMaster) {
            setNodeAsMaster(sender);
        } else if (validName(masterName, NAMELEN)) {
            if (nodeIsMaster(sender)) {
                nodeDelSlots(sender);
                sender->flags = (sender->flags & ~(NODE_MASTER | NODE_MIGRATE_TO)) | NODE_SLAVE;
                todo(1);
            } else if (!(sender->flags & NODE_SLAVE)) {
                sender->flags |= NODE_SLAVE;
                todo(1);
            }
            if (memcmp(sender->masterName, masterName, NAMELEN)) {
                memcpy(sender->masterName, masterName, NAMELEN);
                sender->masterName[NAMELEN] = '\0';
                todo(1);
            }
        }
        /* Slots. */
        const unsigned char *claimed = m + H_SLOTS;
        ClusterNode *senderMaster = nodeIsMaster(sender) ? sender : nodeMaster(sender);
        if (senderMaster && nodeIsMaster(sender)) {
            /* Nothing to do when the claim is what we know (no slot it
             * claims is another node's): the common PING costs one
             * compare, not two walks of the slots. */
            int dirty = memcmp(claimed, sender->slotBits, DB_SLOTS / 8) != 0;
            if (dirty) updateSlotsConfigWith(sender, senderCfg, claimed);
            /* A claim older than what we know: tell the sender. */
            for (int j = 0; j < (int)DB_SLOTS && dirty; j++) {
                if (!bitTest(claimed, j) || cs.slots[j] == sender || !cs.slots[j]) continue;
                if (cs.slots[j]->configEpoch > senderCfg) {
                    serverLog(LL_VERBOSE, "Node %.40s has old slots configuration, sending an UPDATE message about %.40s",
                              sender->name, cs.slots[j]->name);
                    sendUpdate(sender->link ? sender->link : l, cs.slots[j]);
                    break;
                }
            }
        }
        if (nodeIsMaster(sender) && nodeIsMaster(myself) && senderCfg == myself->configEpoch)
            handleEpochCollision(sender);
        processGossip(l, sender, m);
        processExtensions(sender, m, len);
    } else if (type == MSG_FAIL) {
        if (!sender) return 1;
        ClusterNode *f = nodeLookup((const char *)m + HDR_LEN, NAMELEN);
        if (f && !(f->flags & (NODE_FAIL | NODE_MYSELF))) {
            serverLog(LL_NOTICE, "FAIL message received from %.40s about %.40s", sender->name, f->name);
            f->flags = (f->flags & ~NODE_PFAIL) | NODE_FAIL;
            f->failTime = t;
            todo(1);
        }
    } else if (type == MSG_PUBLISH || type == MSG_PUBLISHSHARD) {
        if (!sender) return 1;
        uint32_t clen = get32(m + HDR_LEN), mlen = get32(m + HDR_LEN + 4);
        const char *ch = (const char *)m + HDR_LEN + 8;
        if (type == MSG_PUBLISH) pubsubPublish(ch, clen, ch + clen, mlen);
        else pubsubPublishShard(ch, clen, ch + clen, mlen);
    } else if (type == MSG_MODULE) {
        if (!sender) return 1; /* only known nodes reach the modules */
        uint64_t id;
        memcpy(&id, m + HDR_LEN, 8);
        if (moduleMessageHook)
            moduleMessageHook(sender->name, id, m[HDR_LEN + 12], m + HDR_LEN + 13, get32(m + HDR_LEN + 8));
    } else if (type == MSG_AUTH_REQUEST) {
        if (!sender) return 1;
        sendFailoverAuthIfNeeded(sender, m);
    } else if (type == MSG_AUTH_ACK) {
        if (!sender) return 1;
        if (nodeIsMaster(sender) && sender->numSlots > 0 && senderCur >= cs.failoverAuthEpoch) {
            cs.failoverAuthCount++;
        }
    } else if (type == MSG_MFSTART) {
        if (!sender || !sender->masterName[0] || memcmp(sender->masterName, myself->name, NAMELEN)) return 1;
        resetManualFailover();
        cs.mfEnd = t + MF_TIMEOUT_MS;
        cs.mfReplica = sender;
        pauseShutdownWrites(1);
        serverLog(LL_WARNING, "Manual failover requested by replica %.40s.", sender->name);
        if (sender->link) sendPing(sender->link, MSG_PING);
    } else if (type == MSG_UPDATE) {
        if (!sender) return 1;
        const unsigned char *u = m + HDR_LEN;
        ClusterNode *n = nodeLookup((const char *)u + 8, NAMELEN);
        unsigned long long epoch = get64(u);
        if (!n || n == myself || n->configEpoch >= epoch) return 1;
        if (!nodeIsMaster(n)) setNodeAsMaster(n);
        n->configEpoch = epoch;
        updateSlotsConfigWith(n, epoch, u + 8 + NAMELEN);
        todo(1);
    }
    return 1;
}

static void linkReadable(EventLoop *loop, int fd, void *data, int mask) {
    (void)loop;
    (void)fd;
    (void)mask;
    ClusterLink *l = data;
    /* Bounded: a peer that never stops sending does not hold the loop. */
    for (int reads = 0; reads < 64; reads++) {
        size_t want;
        uint32_t totlen = 0;
        if (l->rlen < 8) {
            want = 8 - l->rlen;
        } else {
            totlen = get32(l->rbuf + H_TOTLEN);
            want = totlen - l->rlen;
        }
        if (want > 65536) want = 65536;
        if (l->rlen + want > l->rcap) {
            size_t cap = l->rcap ? l->rcap : 64;
            while (cap < l->rlen + want) cap *= 2;
            if (totlen && cap > totlen) cap = totlen;
            l->rbuf = xrealloc(l->rbuf, cap);
            l->rcap = cap;
        }
        long n = connRead(l->conn, l->rbuf + l->rlen, want);
        if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
            serverLog(LL_DEBUG, "I/O error reading from node link: %s", n == 0 ? "connection closed" : strerror(errno));
            linkFree(l);
            return;
        }
        if (n < 0) return;
        l->rlen += (size_t)n;
        if (l->rlen == 8) {
            uint32_t tl = get32(l->rbuf + H_TOTLEN);
            if (memcmp(l->rbuf, "RCmb", 4) || tl < HDR_LEN || tl > MAX_MSG) {
                char addr[128];
                if (connPeerAddr(l->conn, addr, sizeof(addr)) == -1) strcpy(addr, "?");
                serverLog(LL_WARNING, "Bad message length or signature received on the Cluster bus from %s", addr);
                cs.rejected++;
                linkFree(l);
                return;
            }
        }
        if (l->rlen >= 8 && l->rlen == get32(l->rbuf + H_TOTLEN)) {
            size_t len = l->rlen;
            unsigned char *msg = l->rbuf;
            l->rbuf = NULL;
            l->rlen = l->rcap = 0;
            int alive = processMessage(l, msg, len);
            xfree(msg);
            if (!alive) return;
        }
    }
}

static void linkConnected(EventLoop *loop, int fd, void *data, int mask) {
    (void)loop;
    (void)fd;
    (void)mask;
    ClusterLink *l = data;
    int err = connCheckConnected(l->conn);
    if (err == EAGAIN || err == EINPROGRESS) return;
    if (err) {
        serverLog(LL_VERBOSE, "Connection with Node %.40s at %s:%d failed: %s", l->node ? l->node->name : "?",
                  l->node ? l->node->ip : "?", l->node ? l->node->cport : 0, strerror(err));
        linkFree(l);
        return;
    }
    connEventDel(l->conn, EV_WRITABLE);
    l->connected = 1;
    connEventAdd(l->conn, EV_READABLE, linkReadable, l);
    if (sdsLen(l->sndbuf)) connEventAdd(l->conn, EV_WRITABLE, linkWritable, l);
    ClusterNode *n = l->node;
    long long oldPing = n->pingSent;
    sendPing(l, (n->flags & NODE_MEET) ? MSG_MEET : MSG_PING);
    if (oldPing) n->pingSent = oldPing;
    n->flags &= ~NODE_MEET;
    serverLog(LL_DEBUG, "Connecting with Node %.40s at %s:%d", n->name, n->ip, n->cport);
}

static void busAccept(EventLoop *loop, int fd, void *data, int mask) {
    (void)loop;
    (void)mask;
    Listener *ls = data;
    for (int i = 0; i < 1000; i++) {
        char peer[128];
        Connection *conn = connAccept(ls, fd, peer, sizeof(peer));
        if (!conn) return;
        connSetNoDelay(conn, 1);
        connSetKeepalive(conn, 300);
        ClusterLink *l = linkCreate(conn, NULL, 1);
        connEventAdd(conn, EV_READABLE, linkReadable, l);
        serverLog(LL_VERBOSE, "Accepting cluster node connection from %s", peer);
    }
}

/* ---- elections ---------------------------------------------------------- */

static void sendFailoverAuthIfNeeded(ClusterNode *node, const unsigned char *m) {
    ClusterNode *master = nodeMaster(node);
    unsigned long long reqCur = get64(m + H_CUREPOCH), reqCfg = get64(m + H_CFGEPOCH);
    int force = (m[H_MFLAGS] & MF0_FORCEACK) != 0;
    long long t = now();
    if (!nodeIsMaster(myself) || myself->numSlots == 0) return;
    if (reqCur < cs.currentEpoch) return;
    if (cs.lastVoteEpoch == cs.currentEpoch) return;
    if (nodeIsMaster(node) || !master || (!nodeFailed(master) && !force)) return;
    if (t - master->votedTime < clNodeTimeout * 2) return;
    for (int j = 0; j < (int)DB_SLOTS; j++) {
        if (!bitTest(m + H_SLOTS, j) || !cs.slots[j]) continue;
        if (cs.slots[j]->configEpoch > reqCfg) return;
    }
    cs.lastVoteEpoch = cs.currentEpoch;
    master->votedTime = t;
    todo(1);
    saveConfig();
    unsigned char *ack = msgNew(MSG_AUTH_ACK, HDR_LEN);
    if (node->link) linkSend(node->link, ack, HDR_LEN);
    xfree(ack);
    serverLog(LL_WARNING, "Failover auth granted to %.40s for epoch %llu", node->name, cs.currentEpoch);
}

static int myRank(void) {
    ClusterNode *master = nodeMaster(myself);
    if (!master) return 0;
    long long mine = 0;
    myReplOffset(&mine);
    int rank = 0;
    for (int i = 1; i < cs.count; i++) {
        ClusterNode *n = cs.nodes[i];
        if (!(n->flags & NODE_SLAVE) || memcmp(n->masterName, master->name, NAMELEN)) continue;
        if (n->flags & NODE_NOFAILOVER) continue;
        if (n->replOffset > mine) rank++;
    }
    return rank;
}

static void takeOverMaster(void) {
    ClusterNode *old = nodeMaster(myself);
    if (nodeIsMaster(myself) || !old) return;
    setNodeAsMaster(myself);
    replicaUnsetPrimary();
    for (int j = 0; j < (int)DB_SLOTS; j++) {
        if (cs.slots[j] != old) continue;
        slotDel(j);
        slotAdd(myself, j);
    }
    updateState();
    saveConfig();
    broadcastPong(1);
    resetManualFailover();
}

static void handleReplicaFailover(void) {
    ClusterNode *master = nodeMaster(myself);
    long long t = now();
    int quorum = cs.size / 2 + 1, manual = cs.mfEnd && cs.mfCanStart;
    long long authTimeout = clNodeTimeout * 2 > 2000 ? clNodeTimeout * 2 : 2000, retry = authTimeout * 2;
    if (nodeIsMaster(myself) || !master || (!nodeFailed(master) && !manual) || (clReplicaNoFailover && !manual) ||
        master->numSlots == 0)
        return;
    long long age = replicaDataAgeMs();
    if (age > clNodeTimeout) age -= clNodeTimeout;
    if (clReplicaValidityFactor && age > 1000 + clNodeTimeout * clReplicaValidityFactor && !manual) return;
    if (t - cs.failoverAuthTime > retry) {
        cs.failoverAuthTime = t + 500 + (long long)randBounded(500);
        cs.failoverAuthCount = 0;
        cs.failoverAuthSent = 0;
        cs.failoverAuthRank = myRank();
        cs.failoverAuthTime += cs.failoverAuthRank * 1000;
        if (manual) {
            cs.failoverAuthTime = t;
            cs.failoverAuthRank = 0;
        }
        serverLog(LL_WARNING, "Start of election delayed for %lld milliseconds (rank #%d, offset %lld).",
                  cs.failoverAuthTime - t, cs.failoverAuthRank, master->replOffset);
        broadcastPong(0);
        return;
    }
    if (!cs.failoverAuthSent && !manual) {
        int rank = myRank();
        if (rank > cs.failoverAuthRank) {
            cs.failoverAuthTime += (rank - cs.failoverAuthRank) * 1000;
            cs.failoverAuthRank = rank;
        }
    }
    if (t < cs.failoverAuthTime) return;
    if (t - cs.failoverAuthTime > authTimeout) return;
    if (!cs.failoverAuthSent) {
        cs.currentEpoch++;
        cs.failoverAuthEpoch = cs.currentEpoch;
        serverLog(LL_WARNING, "Starting a failover election for epoch %llu.", cs.currentEpoch);
        unsigned char *req = msgNew(MSG_AUTH_REQUEST, HDR_LEN);
        if (manual) req[H_MFLAGS] |= MF0_FORCEACK;
        broadcast(req, HDR_LEN);
        xfree(req);
        cs.failoverAuthSent = 1;
        todo(1);
        return;
    }
    if (cs.failoverAuthCount >= quorum) {
        serverLog(LL_WARNING, "Failover election won: I'm the new master.");
        if (myself->configEpoch < cs.failoverAuthEpoch) {
            myself->configEpoch = cs.failoverAuthEpoch;
            serverLog(LL_WARNING, "configEpoch set to %llu after successful failover", myself->configEpoch);
        }
        takeOverMaster();
    }
}

static void handleManualFailover(void) {
    if (!cs.mfEnd) return;
    if (now() > cs.mfEnd) {
        serverLog(LL_WARNING, "Manual failover timed out.");
        resetManualFailover();
        return;
    }
    if (cs.mfCanStart || nodeIsMaster(myself) || cs.mfMasterOffset == -1) return;
    long long off = 0;
    myReplOffset(&off);
    /* (at least: a primary may still send a replication PING while paused) */
    if (off >= cs.mfMasterOffset) {
        cs.mfCanStart = 1;
        serverLog(LL_WARNING, "All master replication stream processed, manual failover can start.");
    }
}

const char *busManualFailover(int force, int takeover) {
    ClusterNode *master = nodeMaster(myself);
    if (!master) return "ERR I'm a replica but my master is unknown to me";
    if (!force && !takeover && (nodeFailed(master) || !master->link))
        return "ERR Master is down or failed, please use CLUSTER FAILOVER FORCE";
    resetManualFailover();
    cs.mfEnd = now() + MF_TIMEOUT_MS;
    if (takeover) {
        serverLog(LL_WARNING, "Taking over the master (user request).");
        bumpEpoch();
        takeOverMaster();
    } else if (force) {
        serverLog(LL_WARNING, "Forced failover user request accepted.");
        cs.mfCanStart = 1;
    } else {
        serverLog(LL_WARNING, "Manual failover user request accepted.");
        unsigned char *m = msgNew(MSG_MFSTART, HDR_LEN);
        linkSend(master->link, m, HDR_LEN);
        xfree(m);
    }
    return NULL;
}

/* Replicas of m not in FAIL. */
static int okReplicas(const ClusterNode *m) {
    int k = 0;
    for (int i = 0; i < cs.count; i++) {
        const ClusterNode *r = cs.nodes[i];
        if ((r->flags & NODE_SLAVE) && !nodeFailed(r) && !memcmp(r->masterName, m->name, NAMELEN)) k++;
    }
    return k;
}

/* Replica migration: a master with slots and no working replica (that
 * had one once: MIGRATE_TO) for 5 s gets a replica from the master with
 * the most replicas, beyond cluster-migration-barrier; of its replicas
 * the one with the smallest name moves. */
static void handleReplicaMigration(void) {
    long long t = now();
    ClusterNode *mine = nodeMaster(myself), *target = NULL, *candidate = myself;
    int maxReplicas = 0, orphaned = 0;
    for (int i = 0; i < cs.count; i++) {
        ClusterNode *m = cs.nodes[i];
        if (!nodeIsMaster(m) || nodeFailed(m)) continue;
        int ok = okReplicas(m);
        if (ok > 0) m->flags |= NODE_MIGRATE_TO;
        if (ok == 0 && m->numSlots > 0 && (m->flags & NODE_MIGRATE_TO)) {
            orphaned++;
            if (!m->orphanedTime) m->orphanedTime = t;
            if (!target) target = m;
        } else {
            m->orphanedTime = 0;
        }
        if (ok > maxReplicas) maxReplicas = ok;
    }
    if (nodeIsMaster(myself) || !mine || !orphaned || !clAllowReplicaMigration || !cs.ok) return;
    int mineOk = okReplicas(mine);
    if (mineOk != maxReplicas || maxReplicas < 2 || mineOk <= clMigrationBarrier) return;
    for (int i = 0; i < cs.count; i++) {
        ClusterNode *m = cs.nodes[i];
        if (!nodeIsMaster(m) || nodeFailed(m) || okReplicas(m) != maxReplicas) continue;
        for (int k = 0; k < cs.count; k++) {
            ClusterNode *r = cs.nodes[k];
            if ((r->flags & NODE_SLAVE) && !nodeFailed(r) && !memcmp(r->masterName, m->name, NAMELEN) &&
                memcmp(r->name, candidate->name, NAMELEN) < 0)
                candidate = r;
        }
    }
    if (target && candidate == myself && t - target->orphanedTime > 5000) {
        serverLog(LL_WARNING, "Migrating to orphaned master %.40s", target->name);
        busSetMyMaster(target);
    }
}

/* ---- start, cron, commands ---------------------------------------------- */

void busInit(void) {
    /* cluster-port, else the client port (tls-port with tls-cluster) +
     * 10000, as Redis 7.0. */
    int tls = connTlsAvailable() && connTypeForCluster() == &connTlsType;
    int cport = clPort ? clPort : (tls ? tlsPort() : server.cfg.port) + 10000;
    busListener.type = connTypeForCluster();
    for (int i = 0; i < server.cfg.bindCount; i++) {
        const char *addr = server.cfg.bind[i];
        int optional = addr[0] == '-';
        if (optional) addr++;
        ConnListenSpec spec = {.addr = addr, .port = cport, .backlog = server.cfg.tcpBacklog};
        if (listenerBind(&busListener, &spec) == -1) {
            if (optional || errno == EAFNOSUPPORT || errno == EADDRNOTAVAIL) continue;
            serverLog(LL_WARNING, "Could not bind the cluster bus on %s:%d: %s", addr, cport, strerror(errno));
            exit(1);
        }
    }
    if (busListener.count == 0) {
        serverLog(LL_WARNING, "Failed listening on port %d (cluster), aborting.", cport);
        exit(1);
    }
    /* Attached so that fork children and the shutdown close it with the
     * server's listeners; the bus's accept handler then replaces the
     * server's on its sockets. */
    if (netAttachListener(&busListener) == -1) {
        serverLog(LL_WARNING, "Could not attach the cluster bus listener");
        exit(1);
    }
    listenerInstall(&busListener, busAccept);
    /* A replica by its nodes.conf replicates its master again. */
    ClusterNode *m = nodeMaster(myself);
    if (!nodeIsMaster(myself) && m && sdsLen(m->ip)) replicaSetPrimary(m->ip, m->port);
}

static void connectNode(ClusterNode *n) {
    char port[16];
    const char *err = NULL;
    snprintf(port, sizeof(port), "%d", n->cport);
    Connection *conn = connConnect(connTypeForCluster(), n->ip, port, NULL, &err);
    if (!conn) {
        if (n->pingSent == 0) n->pingSent = now();
        serverLog(LL_DEBUG, "Unable to connect to Cluster Node [%s]:%d -> %s", n->ip, n->cport, err ? err : "");
        return;
    }
    connSetNoDelay(conn, 1);
    ClusterLink *l = linkCreate(conn, n, 0);
    n->link = l;
    connEventAdd(conn, EV_WRITABLE, linkConnected, l);
}

void busCron(void) {
    static unsigned iteration;
    long long t = now();
    /* tls-cluster, the announce directives and cluster-replica-no-failover
     * may change at run time. */
    clusterMyPorts(&myself->port, &myself->pport, &myself->cport);
    int oldFlags = myself->flags;
    if (clReplicaNoFailover) myself->flags |= NODE_NOFAILOVER;
    else myself->flags &= ~NODE_NOFAILOVER;
    if (myself->flags != oldFlags) todo(1);
    long long handshakeTimeout = clNodeTimeout > 1000 ? clNodeTimeout : 1000;
    iteration++;
    for (int i = 1; i < cs.count; i++) {
        ClusterNode *n = cs.nodes[i];
        if (n->flags & NODE_NOADDR) continue;
        if ((n->flags & NODE_HANDSHAKE) && t - n->ctime > handshakeTimeout) {
            nodeDelete(n);
            i--;
            continue;
        }
        if (!n->link && sdsLen(n->ip) && n->cport) connectNode(n);
    }
    /* The send buffer limit; inbound links that never said who they are
     * (a node says it in its first PING after the handshake) close. */
    for (ClusterLink *l = links, *next; l; l = next) {
        next = l->next;
        if (clLinkSendbufLimit && sdsLen(l->sndbuf) > clLinkSendbufLimit) {
            cs.linksLimitExceeded++;
            linkFree(l);
        } else if (l->inbound && !l->node && t - l->ctime > 2 * handshakeTimeout) {
            linkFree(l);
        }
    }
    if (iteration % 10 == 0 && cs.count > 1) {
        ClusterNode *min = NULL;
        for (int k = 0; k < 5; k++) {
            ClusterNode *n = cs.nodes[randBounded((uint64_t)cs.count)];
            if (n == myself || !n->link || n->pingSent || (n->flags & NODE_HANDSHAKE)) continue;
            if (!min || n->pongReceived < min->pongReceived) min = n;
        }
        if (min) sendPing(min->link, MSG_PING);
    }
    int updateNeeded = 0;
    for (int i = 1; i < cs.count; i++) {
        ClusterNode *n = cs.nodes[i];
        if (n->flags & (NODE_NOADDR | NODE_HANDSHAKE)) continue;
        if (n->link && t - n->link->ctime > clNodeTimeout && n->pingSent && t - n->pingSent > clNodeTimeout / 2 &&
            t - n->dataReceived > clNodeTimeout / 2) {
            linkFree(n->link);
        }
        if (n->link && n->pingSent == 0 && t - n->pongReceived > clNodeTimeout / 2) {
            sendPing(n->link, MSG_PING);
            continue;
        }
        if (cs.mfEnd && nodeIsMaster(myself) && cs.mfReplica == n && n->link) {
            sendPing(n->link, MSG_PING);
            continue;
        }
        if (n->pingSent == 0) continue;
        long long delay = t - n->pingSent, dataDelay = t - n->dataReceived;
        if (dataDelay < delay) delay = dataDelay;
        if (delay > clNodeTimeout && !(n->flags & (NODE_PFAIL | NODE_FAIL))) {
            serverLog(LL_DEBUG, "*** NODE %.40s possibly failing", n->name);
            n->flags |= NODE_PFAIL;
            updateNeeded = 1;
        }
    }
    if (cs.mfEnd && nodeIsMaster(myself) && t > cs.mfEnd) resetManualFailover();
    if (!nodeIsMaster(myself)) {
        handleManualFailover();
        /* a module's NO_FAILOVER stops automatic failovers; a manual one
         * still runs (redis-server 7.0.15 does the same) */
        if (!(clusterModuleFlags & CLUSTER_MODULE_NO_FAILOVER) || cs.mfEnd) handleReplicaFailover();
    }
    handleReplicaMigration();
    if (updateNeeded) cs.todoState = 1;
}

void busBeforeSleep(void) {
    if (!nodeIsMaster(myself)) {
        handleManualFailover();
        if (cs.mfCanStart) handleReplicaFailover();
    }
    if (cs.todoSave) {
        cs.todoSave = 0;
        if (saveConfig() == -1) serverLog(LL_WARNING, "Could not save the cluster config: %s", strerror(errno));
    }
    if (cs.todoState) updateState();
}

int busMeet(const char *ip, long long port, long long cport) {
    unsigned char buf[16];
    char norm[IPLEN];
    int v6 = strchr(ip, ':') != NULL;
    if (inet_pton(v6 ? AF_INET6 : AF_INET, ip, buf) != 1 || port <= 0 || port > 65535 || cport <= 0 ||
        cport > 65535)
        return -1;
    inet_ntop(v6 ? AF_INET6 : AF_INET, buf, norm, sizeof(norm));
    for (int i = 1; i < cs.count; i++) {
        ClusterNode *n = cs.nodes[i];
        if ((n->flags & NODE_HANDSHAKE) && !strcasecmp(n->ip, norm) && n->port == port && n->cport == cport)
            return 0;
    }
    ClusterNode *n = nodeCreate(NULL, NODE_HANDSHAKE | NODE_MEET);
    sdsFree(n->ip);
    n->ip = sdsNew(norm);
    n->port = (int)port;
    n->cport = (int)cport;
    nodeAppend(n);
    todo(1);
    return 0;
}

static int linksCount(void) {
    int k = 0;
    for (int i = 1; i < cs.count; i++) k += (cs.nodes[i]->link != NULL) + (cs.nodes[i]->inLink != NULL);
    return k;
}

static void replyLink(Client *c, ClusterLink *l) {
    replyMapLen(c, 6);
    replyBulkCString(c, "direction");
    replyBulkCString(c, l->inbound ? "from" : "to");
    replyBulkCString(c, "node");
    replyBulk(c, l->node->name, NAMELEN);
    replyBulkCString(c, "create-time");
    replyLongLong(c, l->ctime);
    replyBulkCString(c, "events");
    int mask = connEventMask(l->conn);
    replyBulkCString(c, (mask & EV_READABLE) ? ((mask & EV_WRITABLE) ? "rw" : "r") : (mask & EV_WRITABLE) ? "w" : "");
    replyBulkCString(c, "send-buffer-allocated");
    replyLongLong(c, (long long)(sdsLen(l->sndbuf) + sdsAvail(l->sndbuf)));
    replyBulkCString(c, "send-buffer-used");
    replyLongLong(c, (long long)sdsLen(l->sndbuf));
}

void busLinksReply(Client *c) {
    replyArrayLen(c, linksCount());
    for (int i = 1; i < cs.count; i++) {
        if (cs.nodes[i]->link) replyLink(c, cs.nodes[i]->link);
        if (cs.nodes[i]->inLink) replyLink(c, cs.nodes[i]->inLink);
    }
}

long long busRejected(void) { return cs.rejected; }

sds busInfoStats(sds s) {
    long long sent = 0, recv = 0;
    for (int i = 0; i < BUS_MSG_TYPES; i++) {
        if (!cs.sent[i]) continue;
        sent += cs.sent[i];
        s = sdsCatPrintf(s, "cluster_stats_messages_%s_sent:%lld\r\n", msgTypeNames[i], cs.sent[i]);
    }
    s = sdsCatPrintf(s, "cluster_stats_messages_sent:%lld\r\n", sent);
    for (int i = 0; i < BUS_MSG_TYPES; i++) {
        if (!cs.received[i]) continue;
        recv += cs.received[i];
        s = sdsCatPrintf(s, "cluster_stats_messages_%s_received:%lld\r\n", msgTypeNames[i], cs.received[i]);
    }
    s = sdsCatPrintf(s, "cluster_stats_messages_received:%lld\r\n", recv);
    s = sdsCatPrintf(s, "total_cluster_links_buffer_limit_exceeded:%llu\r\n", cs.linksLimitExceeded);
    return s;
}
