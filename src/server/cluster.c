/* cluster.c -- Redis Cluster mode (issue 36): the node's state,
 * nodes.conf, the CLUSTER commands and the key-slot check of every
 * command.  The bus (other nodes, failure detection, failover) is
 * cluster_bus.c's; the types both use are in cluster_int.h.
 *
 * Invariants:
 *  - cs.nodes[0] is myself; every node has a 40-hex-digit unique name;
 *  - cs.slots[s] is the node serving slot s or NULL; a node's numSlots is
 *    the count of slots pointing at it;
 *  - cs.migrating[s] / cs.importing[s] are set only for slots myself
 *    owns / does not own when they were set (SETSLOT's checks), and point
 *    at known nodes (forgetting a node clears them);
 *  - cs.currentEpoch >= every node's configEpoch once loaded or bumped;
 *  - the config file is locked (flock) by this process from clusterInit
 *    on; it is rewritten whole to a temporary file, fsync'd and renamed
 *    over, the new file locked before the rename (so it is never unlocked
 *    or half written);
 *  - cluster state (ok/fail) follows Redis 7.0's rules: fail for the first
 *    2 s after start while fail, fail while a slot is unserved (with
 *    cluster-require-full-coverage), back to ok only after the rejoin
 *    delay (cluster-node-timeout bounded to [500, 5000] ms).
 *
 * Keys and slots: db.h's slot index (dbUseSlots) counts, lists and drops a
 * slot's keys; only database 0 is used (SELECT refuses others). */
#include "server/cluster.h"
#include "server/cluster_int.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/file.h>
#include <unistd.h>

#include "core/config.h"
#include "core/conn.h"
#include "core/dispatch.h"
#include "core/event.h"
#include "core/log.h"
#include "core/server.h"
#include "db/db.h"
#include "ds/alloc.h"
#include "ds/rand.h"
#include "repl/repl.h"
#include "script/ldb.h"
#include "script/script.h"
#include "server/multi.h"
#include "server/pubsub.h"

_Static_assert(((CLIENT_READONLY | CLIENT_ASKING) & (CLIENT_LUA_DEBUG | CLIENT_LUA_DEBUG_SYNC)) == 0,
               "cluster and debugger client flags overlap");

/* Node flags as nodes.conf and CLUSTER NODES name them, in their order. */
static const struct {
    int flag;
    const char *name;
} flagNames[] = {{NODE_MYSELF, "myself"},       {NODE_MASTER, "master"}, {NODE_SLAVE, "slave"},
                 {NODE_PFAIL, "fail?"},         {NODE_FAIL, "fail"},     {NODE_HANDSHAKE, "handshake"},
                 {NODE_NOADDR, "noaddr"},       {NODE_NOFAILOVER, "nofailover"}};

ClusterState cs = {.lockFd = -1, .size = 1, .mfMasterOffset = -1};

int clusterEnabled;
int clusterModuleFlags;

/* ---- directives ------------------------------------------------------ */

static char *configFile;
int clPort;
long long clNodeTimeout;
char *clAnnounceIp, *clAnnounceHostname;
static int announcePort, announceBusPort;
int clAnnounceTlsPort;
static int preferredEndpoint; /* 0 ip, 1 hostname, 2 unknown-endpoint */
int clReplicaValidityFactor, clMigrationBarrier, clAllowReplicaMigration;
static int requireFullCoverage;
int clReplicaNoFailover, clAllowPubsubshardWhenDown;
static int allowReadsWhenDown;
unsigned long long clLinkSendbufLimit;

static const ConfigEnum endpointEnum[] = {{"ip", 0}, {"hostname", 1}, {"unknown-endpoint", 2}, {NULL, 0}};

/* cluster-announce-hostname: letters, digits, '-' and '.' (Redis's check). */
static int setAnnounceHostname(ConfigDef *d, sds *argv, int argc, const char **err) {
    (void)d;
    (void)argc;
    for (const char *p = argv[0]; *p; p++) {
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '-' ||
              *p == '.')) {
            *err = "Hostnames may only contain alphanumeric characters, hyphens or dots";
            return -1;
        }
    }
    configSetString(&clAnnounceHostname, argv[0]);
    if (clusterEnabled && cs.nodes) {
        sdsFree(myself->hostname);
        myself->hostname = sdsNew(clAnnounceHostname);
    }
    return 0;
}

static sds getAnnounceHostname(const ConfigDef *d) {
    (void)d;
    return sdsNew(clAnnounceHostname ? clAnnounceHostname : "");
}

/* cluster-announce-ip: the address myself shows (CLUSTER NODES/SLOTS). */
static int applyAnnounceIp(const char **err) {
    (void)err;
    if (clusterEnabled && cs.nodes) {
        sdsFree(myself->ip);
        myself->ip = sdsNew(clAnnounceIp ? clAnnounceIp : "");
    }
    return 0;
}

static int applyAnnouncePorts(const char **err);

static ConfigDef clusterConfig[] = {
    CONFIG_BOOL("cluster-allow-pubsubshard-when-down", NULL, 0, clAllowPubsubshardWhenDown, "yes"),
    CONFIG_BOOL("cluster-allow-reads-when-down", NULL, 0, allowReadsWhenDown, "no"),
    CONFIG_BOOL("cluster-allow-replica-migration", NULL, 0, clAllowReplicaMigration, "yes"),
    CONFIG_INT("cluster-announce-bus-port", NULL, 0, announceBusPort, 0, 65535, "0", .apply = applyAnnouncePorts),
    CONFIG_SPECIAL("cluster-announce-hostname", NULL, 0, "", setAnnounceHostname, getAnnounceHostname),
    CONFIG_STRING("cluster-announce-ip", NULL, CF_EMPTY_NULL, clAnnounceIp, "", .apply = applyAnnounceIp),
    CONFIG_INT("cluster-announce-port", NULL, 0, announcePort, 0, 65535, "0", .apply = applyAnnouncePorts),
    CONFIG_INT("cluster-announce-tls-port", NULL, 0, clAnnounceTlsPort, 0, 65535, "0", .apply = applyAnnouncePorts),
    CONFIG_STRING("cluster-config-file", NULL, CF_IMMUTABLE, configFile, "nodes.conf"),
    CONFIG_BOOL("cluster-enabled", NULL, CF_IMMUTABLE, clusterEnabled, "no"),
    {.name = "cluster-link-sendbuf-limit", .type = CT_ULL, .flags = CF_MEMORY, .var = &clLinkSendbufLimit,
     .min = 0, .max = LLONG_MAX, .deflt = "0"},
    CONFIG_INT("cluster-migration-barrier", NULL, 0, clMigrationBarrier, 0, INT_MAX, "1"),
    CONFIG_LL("cluster-node-timeout", NULL, 0, clNodeTimeout, 0, LLONG_MAX, "15000"),
    CONFIG_INT("cluster-port", NULL, CF_IMMUTABLE, clPort, 0, 65535, "0"),
    CONFIG_ENUM("cluster-preferred-endpoint-type", NULL, 0, preferredEndpoint, endpointEnum, "ip"),
    CONFIG_BOOL("cluster-replica-no-failover", "cluster-slave-no-failover", 0, clReplicaNoFailover, "no"),
    CONFIG_INT("cluster-replica-validity-factor", "cluster-slave-validity-factor", 0, clReplicaValidityFactor, 0,
               INT_MAX, "10"),
    CONFIG_BOOL("cluster-require-full-coverage", NULL, 0, requireFullCoverage, "yes"),
};

void clusterRegisterConfig(void) { configRegister(clusterConfig, CONFIG_COUNT_OF(clusterConfig)); }

/* ---- nodes ----------------------------------------------------------- */

ClusterNode *nodeCreate(const char *name, int flags) {
    ClusterNode *n = xcalloc(sizeof(*n));
    if (name) {
        memcpy(n->name, name, NAMELEN);
    } else {
        randHex(n->name, NAMELEN);
    }
    n->flags = flags;
    n->ip = sdsEmpty();
    n->hostname = sdsEmpty();
    n->ctime = serverNowMs();
    n->replOffset = -1;
    return n;
}

void nodeFree(ClusterNode *n) {
    sdsFree(n->ip);
    sdsFree(n->hostname);
    xfree(n);
}

void nodeAppend(ClusterNode *n) {
    cs.nodes = xrealloc(cs.nodes, sizeof(*cs.nodes) * (size_t)(cs.count + 1));
    cs.nodes[cs.count++] = n;
}

int validName(const char *s, size_t len) {
    if (len != NAMELEN) return 0;
    for (size_t i = 0; i < len; i++)
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f'))) return 0;
    return 1;
}

ClusterNode *nodeLookup(const char *s, size_t len) {
    if (!validName(s, len)) return NULL;
    for (int i = 0; i < cs.count; i++)
        if (!memcmp(cs.nodes[i]->name, s, NAMELEN)) return cs.nodes[i];
    return NULL;
}

int nodeIsMaster(const ClusterNode *n) { return (n->flags & NODE_MASTER) != 0; }

ClusterNode *nodeMaster(const ClusterNode *n) {
    return n->masterName[0] ? nodeLookup(n->masterName, NAMELEN) : NULL;
}

/* 1 when the bus and the ports it announces are TLS's (tls-cluster). */
static int tlsCluster(void) { return connTlsAvailable() && connTypeForCluster() == &connTlsType; }

/* The ports myself announces, as Redis 7.0 derives them: the client port
 * is the TLS port with tls-cluster (the plaintext one then goes as pport),
 * the bus port that + 10000 unless cluster-port says; cluster-announce-*
 * override them. */
void clusterMyPorts(int *port, int *pport, int *cport) {
    int tls = tlsCluster(), base = tls ? tlsPort() : server.cfg.port;
    *port = base;
    *pport = tls ? server.cfg.port : 0;
    *cport = clPort ? clPort : base + 10000;
    if (tls && clAnnounceTlsPort) {
        *port = clAnnounceTlsPort;
        *pport = announcePort;
    } else if (announcePort) {
        *port = announcePort;
    }
    if (announceBusPort) *cport = announceBusPort;
}

int clusterClientPort(const ClusterNode *n, const Client *c) {
    int usePport = c && c->conn && c->conn->type != &connTlsType && tlsCluster();
    return usePport && n->pport ? n->pport : n->port;
}

static int applyAnnouncePorts(const char **err) {
    (void)err;
    if (clusterEnabled && cs.nodes) clusterMyPorts(&myself->port, &myself->pport, &myself->cport);
    return 0;
}

void slotAdd(ClusterNode *n, int slot) {
    if (cs.slots[slot]) slotDel(slot);
    cs.slots[slot] = n;
    n->slotBits[slot >> 3] |= (unsigned char)(1u << (slot & 7));
    n->numSlots++;
}

void slotDel(int slot) {
    ClusterNode *n = cs.slots[slot];
    if (!n) return;
    /* A slot of myself's shard goes: its shard channels' subscribers too. */
    if (n == myself || (n->name[0] && !memcmp(myself->masterName, n->name, NAMELEN)))
        pubsubShardDropSlot((unsigned)slot);
    n->numSlots--;
    n->slotBits[slot >> 3] &= (unsigned char)~(1u << (slot & 7));
    cs.slots[slot] = NULL;
}

void nodeDelSlots(ClusterNode *n) {
    for (int s = 0; s < (int)DB_SLOTS; s++)
        if (cs.slots[s] == n) slotDel(s);
}

/* Removes a node other than myself (its slots and marks go too). */
void nodeDelete(ClusterNode *n) {
    busNodeForget(n);
    for (int s = 0; s < (int)DB_SLOTS; s++) {
        if (cs.migrating[s] == n) cs.migrating[s] = NULL;
        if (cs.importing[s] == n) cs.importing[s] = NULL;
    }
    nodeDelSlots(n);
    for (int i = 1; i < cs.count; i++) {
        if (cs.nodes[i] == n) {
            memmove(&cs.nodes[i], &cs.nodes[i + 1], sizeof(*cs.nodes) * (size_t)(cs.count - i - 1));
            cs.count--;
            break;
        }
    }
    nodeFree(n);
}

static unsigned long long maxEpoch(void) {
    unsigned long long m = cs.currentEpoch;
    for (int i = 0; i < cs.count; i++)
        if (cs.nodes[i]->configEpoch > m) m = cs.nodes[i]->configEpoch;
    return m;
}

/* Redis's bump without consensus: 0 when myself took a new epoch. */
int bumpEpoch(void) {
    unsigned long long m = maxEpoch();
    if (myself->configEpoch == 0 || myself->configEpoch != m) {
        cs.currentEpoch++;
        myself->configEpoch = cs.currentEpoch;
        return 0;
    }
    return -1;
}

/* ---- node descriptions (CLUSTER NODES, nodes.conf) ------------------- */

static sds catFlags(sds s, const ClusterNode *n) {
    int any = 0;
    for (size_t i = 0; i < sizeof(flagNames) / sizeof(flagNames[0]); i++) {
        if (!(n->flags & flagNames[i].flag)) continue;
        s = sdsCatPrintf(s, "%s%s", any ? "," : "", flagNames[i].name);
        any = 1;
    }
    return any ? s : sdsCat(s, "noflags");
}

static int slotBit(const ClusterNode *n, int j) { return (n->slotBits[j >> 3] >> (j & 7)) & 1; }

/* n's slots as " a-b c ..." ranges, from its bitmap: whole bytes of
 * slots not its own, or all its own, are passed 8 at a time. */
static sds catSlotRanges(sds s, const ClusterNode *n) {
    if (n->numSlots == 0) return s;
    for (int j = 0; j < (int)DB_SLOTS;) {
        if (!(j & 7) && n->slotBits[j >> 3] == 0) {
            j += 8;
            continue;
        }
        if (!slotBit(n, j)) {
            j++;
            continue;
        }
        int start = j++;
        while (j < (int)DB_SLOTS) {
            if (!(j & 7) && n->slotBits[j >> 3] == 0xff) j += 8;
            else if (slotBit(n, j)) j++;
            else break;
        }
        s = start == j - 1 ? sdsCatPrintf(s, " %d", start) : sdsCatPrintf(s, " %d-%d", start, j - 1);
    }
    return s;
}

/* One node's line, without the newline; withMarks adds myself's
 * migrating/importing marks (nodes.conf and CLUSTER NODES do). */
sds nodeDescription(sds s, const ClusterNode *n, int withMarks, const Client *c) {
    s = sdsCatPrintf(s, "%s %s:%d@%d", n->name, n->ip, c ? clusterClientPort(n, c) : n->port, n->cport);
    if (sdsLen(n->hostname)) s = sdsCatPrintf(s, ",%s", n->hostname);
    s = sdsCat(s, " ");
    s = catFlags(s, n);
    s = sdsCatPrintf(s, " %s %lld %lld %llu %s", n->masterName[0] ? n->masterName : "-", n->pingSent,
                     n->pongReceived, n->configEpoch, n == myself || n->link ? "connected" : "disconnected");
    s = catSlotRanges(s, n);
    if (withMarks && n == myself) {
        for (int j = 0; j < (int)DB_SLOTS; j++) {
            if (cs.migrating[j]) s = sdsCatPrintf(s, " [%d->-%s]", j, cs.migrating[j]->name);
            else if (cs.importing[j]) s = sdsCatPrintf(s, " [%d-<-%s]", j, cs.importing[j]->name);
        }
    }
    return s;
}

static sds nodesText(void) {
    sds s = sdsEmpty();
    for (int i = 0; i < cs.count; i++) {
        s = nodeDescription(s, cs.nodes[i], 1, NULL);
        s = sdsCat(s, "\n");
    }
    return s;
}

/* ---- the config file ------------------------------------------------- */

/* Writes the config file atomically: the text goes into "<file>.spare",
 * locked, fsync'd when sync is set, which is then renamed over the file
 * (the lock moves to the new file).  The replaced file is not freed: it
 * keeps a name across the rename (a hard link) and becomes the next
 * ".spare", rewritten in place.  Freeing and allocating the file's blocks
 * on every save made each CLUSTER SETSLOT wait for the device on a
 * filesystem mounted with `discard` (ext4 sends the discard when the last
 * link of a file goes).  0, or -1 with errno (the old file and lock stay). */
static int writeConfig(int sync) {
    sds text = nodesText();
    text = sdsCatPrintf(text, "vars currentEpoch %llu lastVoteEpoch %llu\n", cs.currentEpoch, cs.lastVoteEpoch);
    char spare[PATH_MAX], tmp[PATH_MAX];
    snprintf(spare, sizeof(spare), "%s.spare", configFile);
    snprintf(tmp, sizeof(tmp), "%s.tmp-%d", configFile, (int)getpid());
    int fd = open(spare, O_WRONLY | O_CREAT, 0644);
    int rc = -1, saved = 0;
    if (fd == -1) goto done;
    if (flock(fd, LOCK_EX | LOCK_NB) == -1) goto fail;
    size_t off = 0, len = sdsLen(text);
    while (off < len) {
        ssize_t w = write(fd, text + off, len - off);
        if (w <= 0) {
            if (w == -1 && errno == EINTR) continue;
            goto fail;
        }
        off += (size_t)w;
    }
    if (ftruncate(fd, (off_t)len) == -1) goto fail;
    if (sync && fsync(fd) == -1) goto fail;
    unlink(tmp); /* left by a crash between link and rename */
    int kept = link(configFile, tmp) == 0;
    if (rename(spare, configFile) == -1) {
        if (kept) unlink(tmp);
        goto fail;
    }
    if (kept && rename(tmp, spare) == -1) unlink(tmp);
    if (cs.lockFd != -1) close(cs.lockFd);
    cs.lockFd = fd;
    rc = 0;
    goto done;
fail:
    saved = errno;
    close(fd);
    unlink(spare);
    errno = saved;
done:
    sdsFree(text);
    return rc;
}

/* The epochs last written with an fsync: what a node must not forget
 * across a power loss (its votes and config epoch).  Slot moves and gossip
 * are written without one, as Redis 7.0 does (a restarted node learns them
 * again from its peers); an fsync per CLUSTER SETSLOT made a reshard wait
 * on the disk for every slot. */
static unsigned long long syncedEpochs[3];
static int syncedOnce;

int saveConfig(void) {
    unsigned long long now[3] = {cs.currentEpoch, cs.lastVoteEpoch, myself ? myself->configEpoch : 0};
    int sync = !syncedOnce || memcmp(now, syncedEpochs, sizeof(now)) != 0;
    int rc = writeConfig(sync);
    if (rc == 0 && sync) {
        memcpy(syncedEpochs, now, sizeof(now));
        syncedOnce = 1;
    }
    return rc;
}

int saveConfigSync(void) {
    syncedOnce = 0;
    return saveConfig();
}

static void saveConfigOrDie(void) {
    if (saveConfig() == -1) {
        serverLog(LL_WARNING, "Fatal: can't update cluster config file.");
        exit(1);
    }
}

static int parseSlotRange(const char *s, int *a, int *b) {
    char *end;
    long x = strtol(s, &end, 10), y = x;
    if (end == s) return -1;
    if (*end == '-') {
        const char *p = end + 1;
        y = strtol(p, &end, 10);
        if (end == p) return -1;
    }
    if (*end || x < 0 || y < x || y >= (long)DB_SLOTS) return -1;
    *a = (int)x;
    *b = (int)y;
    return 0;
}

/* Reads the config file into the state: -1 (the caller exits) when a line
 * is malformed.  Marks of slots refer to nodes read anywhere in the file. */
static int loadNodeLine(sds *argv, int argc, sds **marks, int *nmarks) {
    if (argc < 8 || !validName(argv[0], sdsLen(argv[0]))) return -1;
    ClusterNode *n = nodeLookup(argv[0], NAMELEN);
    if (!n) {
        n = nodeCreate(argv[0], 0);
        nodeAppend(n);
    }
    /* ip:port@cport[,hostname] */
    char *addr = argv[1], *comma = strchr(addr, ','), *at = strchr(addr, '@'), *colon = strrchr(addr, ':');
    if (comma) {
        *comma = '\0';
        sdsFree(n->hostname);
        n->hostname = sdsNew(comma + 1);
    }
    if (!colon || (at && at < colon)) return -1;
    sdsFree(n->ip);
    n->ip = sdsNewLen(addr, (size_t)(colon - addr));
    n->port = atoi(colon + 1);
    n->cport = at ? atoi(at + 1) : n->port + 10000;
    n->flags = 0;
    int fn = 0;
    sds *fl = sdsSplitLen(argv[2], (ssize_t)sdsLen(argv[2]), ",", 1, &fn);
    for (int i = 0; i < fn; i++)
        for (size_t k = 0; k < sizeof(flagNames) / sizeof(flagNames[0]); k++)
            if (!strcmp(fl[i], flagNames[k].name)) n->flags |= flagNames[k].flag;
    sdsFreeSplitRes(fl, fn);
    if (n->flags & NODE_MYSELF) {
        if (cs.count > 1 && cs.nodes[0] != n) {
            /* myself first */
            for (int i = 0; i < cs.count; i++) {
                if (cs.nodes[i] == n) {
                    cs.nodes[i] = cs.nodes[0];
                    cs.nodes[0] = n;
                    break;
                }
            }
        }
    }
    if (strcmp(argv[3], "-")) {
        if (!validName(argv[3], sdsLen(argv[3]))) return -1;
        memcpy(n->masterName, argv[3], NAMELEN);
    }
    n->configEpoch = strtoull(argv[6], NULL, 10);
    for (int i = 8; i < argc; i++) {
        if (argv[i][0] == '[') {
            *marks = xrealloc(*marks, sizeof(sds) * (size_t)(*nmarks + 2));
            (*marks)[(*nmarks)++] = sdsNew(argv[i]);
            (*marks)[(*nmarks)++] = sdsNew(n->name);
            continue;
        }
        int a, b;
        if (parseSlotRange(argv[i], &a, &b) == -1) return -1;
        for (int s = a; s <= b; s++) slotAdd(n, s);
    }
    return 0;
}

static int loadConfig(FILE *f) {
    char line[1 << 16];
    int rc = 0, sawMyself = 0;
    sds *marks = NULL;
    int nmarks = 0;
    while (rc == 0 && fgets(line, sizeof(line), f)) {
        int argc = 0;
        sds *argv = sdsSplitArgs(line, &argc);
        if (!argv) {
            rc = -1;
            break;
        }
        if (argc == 0) {
            sdsFreeSplitRes(argv, argc);
            continue;
        }
        if (!strcmp(argv[0], "vars")) {
            for (int i = 1; i + 1 < argc; i += 2) {
                if (!strcasecmp(argv[i], "currentEpoch")) cs.currentEpoch = strtoull(argv[i + 1], NULL, 10);
                else if (!strcasecmp(argv[i], "lastVoteEpoch")) cs.lastVoteEpoch = strtoull(argv[i + 1], NULL, 10);
            }
        } else {
            rc = loadNodeLine(argv, argc, &marks, &nmarks);
        }
        sdsFreeSplitRes(argv, argc);
    }
    for (int i = 0; i < cs.count; i++) sawMyself |= (cs.nodes[i]->flags & NODE_MYSELF) != 0;
    for (int i = 0; rc == 0 && i < nmarks; i += 2) {
        /* [slot->-name] or [slot-<-name] */
        int slot = atoi(marks[i] + 1);
        char *arrow = strchr(marks[i], '-');
        ClusterNode *other = arrow ? nodeLookup(arrow + 3, NAMELEN) : NULL;
        if (!other || slot < 0 || slot >= (int)DB_SLOTS) rc = -1;
        else if (arrow[1] == '>') cs.migrating[slot] = other;
        else cs.importing[slot] = other;
    }
    for (int i = 0; i < nmarks; i++) sdsFree(marks[i]);
    xfree(marks);
    if (rc == 0 && cs.count > 0 && !sawMyself) rc = -1;
    return rc;
}

static void askingReset(Client *c, Command *cmd, long long usec);
static const char *scriptClusterCheck(Client *caller, Command *cmd, int argc, sds *argv);

/* ---- state ----------------------------------------------------------- */

void updateState(void) {
    static long long firstCall, minorityTime;
    long long now = serverNowMs();
    cs.todoState = 0;
    if (firstCall == 0) firstCall = now;
    if (nodeIsMaster(myself) && !cs.ok && now - firstCall < WRITABLE_DELAY_MS) return;
    int ok = 1;
    if (requireFullCoverage) {
        for (int s = 0; s < (int)DB_SLOTS; s++) {
            if (!cs.slots[s] || (cs.slots[s]->flags & NODE_FAIL)) {
                ok = 0;
                break;
            }
        }
    }
    int reachable = 0;
    cs.size = 0;
    for (int i = 0; i < cs.count; i++) {
        ClusterNode *n = cs.nodes[i];
        if (nodeIsMaster(n) && n->numSlots) {
            cs.size++;
            if (!(n->flags & (NODE_FAIL | NODE_PFAIL))) reachable++;
        }
    }
    if (reachable < cs.size / 2 + 1) {
        ok = 0;
        minorityTime = now;
    }
    if (ok != cs.ok) {
        long long rejoin = clNodeTimeout;
        if (rejoin > MAX_REJOIN_DELAY_MS) rejoin = MAX_REJOIN_DELAY_MS;
        if (rejoin < MIN_REJOIN_DELAY_MS) rejoin = MIN_REJOIN_DELAY_MS;
        if (ok && nodeIsMaster(myself) && now - minorityTime < rejoin) return;
        serverLog(LL_NOTICE, "Cluster state changed: %s", ok ? "ok" : "fail");
        cs.ok = ok;
    }
}

static long long clusterCron(EventLoop *loop, long long id, void *data) {
    (void)loop;
    (void)id;
    (void)data;
    busCron();
    if (cs.todoState || !cs.ok) updateState();
    return 100;
}

static void clusterBeforeSleep(void) { busBeforeSleep(); }

void clusterInitEarly(void) {
    if (clusterEnabled) dbUseSlots();
}

void clusterInit(void) {
    if (!clusterEnabled) return;
    if ((tlsCluster() ? tlsPort() : server.cfg.port) > 55535 && clPort == 0) {
        serverLog(LL_WARNING, "Redis port number too high. Cluster communication port is 10,000 port numbers "
                              "higher than your Redis port. Your Redis port number must be 55535 or less.");
        exit(1);
    }
    int fd = open(configFile, O_RDWR | O_CREAT, 0644);
    if (fd == -1) {
        serverLog(LL_WARNING, "Can't open %s in order to acquire a lock: %s", configFile, strerror(errno));
        exit(1);
    }
    if (flock(fd, LOCK_EX | LOCK_NB) == -1) {
        if (errno == EWOULDBLOCK) {
            serverLog(LL_WARNING,
                      "Sorry, the cluster configuration file %s is already used by a different Redis Cluster "
                      "node. Please make sure that different nodes use different cluster configuration files.",
                      configFile);
        } else {
            serverLog(LL_WARNING, "Impossible to lock %s: %s", configFile, strerror(errno));
        }
        exit(1);
    }
    cs.lockFd = fd;
    FILE *f = fdopen(dup(fd), "r");
    int rc = f ? loadConfig(f) : -1;
    if (f) fclose(f);
    if (rc == -1) {
        serverLog(LL_WARNING, "Unrecoverable error: corrupted cluster config file \"%s\".", configFile);
        exit(1);
    }
    if (cs.count == 0) {
        nodeAppend(nodeCreate(NULL, NODE_MYSELF | NODE_MASTER));
        serverLog(LL_NOTICE, "No cluster configuration found, I'm %s", myself->name);
    } else {
        serverLog(LL_NOTICE, "Node configuration loaded, I'm %.40s", myself->name);
    }
    clusterMyPorts(&myself->port, &myself->pport, &myself->cport);
    sdsFree(myself->ip);
    myself->ip = sdsNew(clAnnounceIp ? clAnnounceIp : "");
    if (clAnnounceHostname) {
        sdsFree(myself->hostname);
        myself->hostname = sdsNew(clAnnounceHostname);
    }
    saveConfigOrDie();
    busInit();
    eventAddTimer(server.loop, 100, clusterCron, NULL);
    serverAddBeforeSleepHook(clusterBeforeSleep);
    dispatchAddAfterCall(askingReset); /* only in cluster mode: nothing per command otherwise */
    scriptSetClusterCheck(scriptClusterCheck);
}

/* ---- the key-slot check ---------------------------------------------- */

/* The endpoint clients are sent to for n. */
static const char *endpointOf(const ClusterNode *n) {
    if (preferredEndpoint == 0) return n->ip;
    if (preferredEndpoint == 1) return sdsLen(n->hostname) ? n->hostname : "?";
    return "?";
}

static void askingReset(Client *c, Command *cmd, long long usec) {
    (void)usec;
    if ((c->flags & CLIENT_ASKING) && !(c->flags & CLIENT_MULTI) && strcmp(cmd->name, "asking"))
        c->flags &= ~CLIENT_ASKING;
}

/* SPUBLISH, SSUBSCRIBE, SUNSUBSCRIBE: their shard channels (NOT_KEY
 * specs) route by slot like keys, as Redis 7.0 routes them. */
static int isShardPubsub(const Command *cmd) {
    return (cmd->flags & CMD_PUBSUB) && cmd->name[0] == 's' &&
           (!strcmp(cmd->name, "spublish") || !strcmp(cmd->name, "ssubscribe") || !strcmp(cmd->name, "sunsubscribe"));
}

/* EXEC and MIGRATE, found at the first check (the command table is
 * built after clusterInit): the check tells them apart by pointer, not by
 * name. */
static Command *execCmd, *migrateCmd;

static inline void findCommands(void) {
    if (__builtin_expect(execCmd != NULL, 1)) return;
    execCmd = commandLookup("exec", 4);
    migrateCmd = commandLookup("migrate", 7);
}

/* The position of cmd's one key when its key specs say it takes exactly
 * one at a fixed index (GET, SET, LPUSH...: one spec, begin-search index,
 * find-keys range of one key, not NOT_KEY nor INCOMPLETE), else 0.  Such a
 * command's keys are that argument alone, by spec or by its fallback
 * finder (SET's, BITFIELD's: the same position). */
static inline int singleKeyPos(const Command *cmd, int argc) {
    const CommandSpec *spec = cmd->spec;
    if (spec->keySpecCount != 1) return 0;
    const KeySpec *ks = &spec->keySpecs[0];
    if (ks->bsType != KSB_INDEX || ks->fkType != KSF_RANGE || ks->fk[0] != 0 ||
        (ks->flags & (KS_NOT_KEY | KS_INCOMPLETE)) || ks->bsIndex <= 0 || ks->bsIndex >= argc)
        return 0;
    return ks->bsIndex;
}

/* 1 when cmd (not EXEC) on argv surely runs here: its one key's slot is
 * ours, not migrating, and the cluster is up -- nodeForCommand would
 * answer myself.  0: ask nodeForCommand.  The slot computed here stays in
 * the keyspace's slot cache (db.h dbKeySlot), so the command's table
 * lookups of that key do not hash it again. */
static inline int servedHereFast(const Command *cmd, int argc, sds *argv) {
    int pos = singleKeyPos(cmd, argc);
    if (!pos || !cs.ok) return 0;
    unsigned slot = dbKeySlot(argv[pos], sdsLen(argv[pos]));
    return cs.slots[slot] == myself && !cs.migrating[slot];
}

enum { REDIR_NONE, REDIR_CROSSSLOT, REDIR_UNSTABLE, REDIR_ASK, REDIR_MOVED, REDIR_DOWN_STATE,
       REDIR_DOWN_RO_STATE, REDIR_DOWN_UNBOUND };

/* Redis's getNodeByQuery: the node that must serve the command, or for
 * EXEC every queued command together (NULL with *code on an error),
 * myself when it runs here. */
static ClusterNode *nodeForCommand(Client *c, Command *top, int topArgc, sds *topArgv, int *slotOut, int *code) {
    ClusterNode *n = NULL;
    int slot = -1, migrating = 0, importing = 0, multipleKeys = 0, missing = 0, isExec = 0, shard = 0;
    uint64_t flags = top->flags;
    *code = REDIR_NONE;
    if (clusterModuleFlags & CLUSTER_MODULE_NO_REDIRECTION) return myself;
    if (top == execCmd) {
        if (!(c->flags & CLIENT_MULTI)) return myself;
        isExec = 1;
        flags = multiQueuedFlags(c);
    }
    for (int q = 0;; q++) {
        Command *cmd = top;
        int argc = topArgc;
        sds *argv = topArgv;
        if (isExec) {
            cmd = multiQueuedAt(c, q, &argc, &argv);
            if (!cmd) break;
        } else if (q > 0) {
            break;
        }
        KeyResult kr;
        keyResultInit(&kr);
        int nkeys = commandKeys(cmd, argc, argv, &kr);
        int shardCmd = isShardPubsub(cmd);
        if (shardCmd) {
            shard = 1;
            for (int i = 1; i < (strcmp(cmd->name, "spublish") ? argc : 2); i++) keyResultAdd(&kr, i, 0);
            nkeys = kr.count;
        }
        for (int i = 0; i < nkeys; i++) {
            const char *key = argv[kr.keys[i].pos];
            size_t len = sdsLen(argv[kr.keys[i].pos]);
            int ks = (int)dbKeySlot(key, len);
            if (n == NULL) {
                slot = ks;
                n = cs.slots[slot];
                if (!n) {
                    keyResultFree(&kr);
                    *slotOut = slot;
                    *code = REDIR_DOWN_UNBOUND;
                    return NULL;
                }
                if (n == myself && cs.migrating[slot]) migrating = 1;
                else if (cs.importing[slot]) importing = 1;
            } else if (ks != slot) {
                keyResultFree(&kr);
                *code = REDIR_CROSSSLOT;
                return NULL;
            } else {
                multipleKeys = 1;
            }
            if ((migrating || importing) && !shardCmd && !dbFind(&server.db[0], key, len)) missing++;
        }
        keyResultFree(&kr);
        if (!isExec && cmd == migrateCmd && (migrating || importing)) {
            *slotOut = slot;
            return myself;
        }
    }
    *slotOut = slot;
    if (n == NULL) return myself;
    if (!cs.ok) {
        if (shard) {
            if (!clAllowPubsubshardWhenDown) {
                *code = REDIR_DOWN_STATE;
                return NULL;
            }
        } else if (!allowReadsWhenDown) {
            *code = REDIR_DOWN_STATE;
            return NULL;
        } else if (flags & CMD_WRITE) {
            *code = REDIR_DOWN_RO_STATE;
            return NULL;
        }
    }
    if (migrating && missing) {
        *code = REDIR_ASK;
        return cs.migrating[slot];
    }
    if (importing && ((c->flags & CLIENT_ASKING) || (flags & CMD_ASKING))) {
        if (multipleKeys && missing) {
            *code = REDIR_UNSTABLE;
            return NULL;
        }
        return myself;
    }
    if (((c->flags & CLIENT_READONLY) || shard) && !(flags & CMD_WRITE) && (myself->flags & NODE_SLAVE) &&
        nodeMaster(myself) == n)
        return myself;
    if (n != myself) *code = REDIR_MOVED;
    return n;
}

/* clusterRefuseOrReply past the fast path: the general check. */
static __attribute__((noinline)) int refuseOrReplySlow(Client *c, Command *cmd) {
    findCommands();
    int isExec = cmd == execCmd;
    if (!isExec && servedHereFast(cmd, c->argc, c->argv)) return 0;
    if (!isExec && !(cmd->flags & CMD_MOVABLE_KEYS) && !commandHasKeys(cmd) && !isShardPubsub(cmd)) return 0;
    int slot = -1, code;
    ClusterNode *n = nodeForCommand(c, cmd, c->argc, c->argv, &slot, &code);
    if (n == myself) return 0;
    sds err;
    switch (code) {
    case REDIR_CROSSSLOT: err = sdsNew("CROSSSLOT Keys in request don't hash to the same slot"); break;
    case REDIR_UNSTABLE: err = sdsNew("TRYAGAIN Multiple keys request during rehashing of slot"); break;
    case REDIR_DOWN_STATE: err = sdsNew("CLUSTERDOWN The cluster is down"); break;
    case REDIR_DOWN_RO_STATE: err = sdsNew("CLUSTERDOWN The cluster is down and only accepts read commands"); break;
    case REDIR_DOWN_UNBOUND: err = sdsNew("CLUSTERDOWN Hash slot not served"); break;
    default:
        err = sdsCatPrintf(sdsEmpty(), "%s %d %s:%d", code == REDIR_ASK ? "ASK" : "MOVED", slot, endpointOf(n),
                           clusterClientPort(n, c));
        break;
    }
    if (isExec) {
        /* Redis answers the redirection itself, not EXECABORT */
        cmd->stats.rejectedCalls++;
        multiDiscard(c);
        replyError(c, err);
    } else {
        dispatchRejectCommand(c, err);
    }
    sdsFree(err);
    return -1;
}

int clusterRefuseOrReply(Client *c, Command *cmd) {
    if (c->flags & (CLIENT_MASTER | CLIENT_FAKE)) return 0;
    /* (execCmd NULL: not looked up yet, the slow path does it) */
    if (__builtin_expect(execCmd != NULL, 1) && cmd != execCmd && servedHereFast(cmd, c->argc, c->argv)) return 0;
    return refuseOrReplySlow(c, cmd);
}

/* A script's call (script/script.h ScriptClusterCheck): Redis 7.0 checks
 * that its keys are served here and the cluster is up (the caller's
 * ASKING and READONLY count); calls for our primary or the AOF are not
 * checked. */
static const char *scriptClusterCheck(Client *caller, Command *cmd, int argc, sds *argv) {
    if (!caller || (caller->flags & (CLIENT_MASTER | CLIENT_FAKE))) return NULL;
    findCommands();
    if (cmd != execCmd && servedHereFast(cmd, argc, argv)) return NULL;
    int slot = -1, code;
    if (nodeForCommand(caller, cmd, argc, argv, &slot, &code) == myself) return NULL;
    if (code == REDIR_DOWN_RO_STATE)
        return "ERR Script attempted to execute a write command while the cluster is down and readonly";
    if (code == REDIR_DOWN_STATE) return "ERR Script attempted to execute a command while the cluster is down";
    return "ERR Script attempted to access a non local key in a cluster node";
}

/* ---- commands -------------------------------------------------------- */

static int getSlotOrReply(Client *c, const char *arg) {
    char *end;
    errno = 0;
    long long v = strtoll(arg, &end, 10);
    if (!*arg || *end || errno || v < 0 || v >= (long long)DB_SLOTS) {
        replyError(c, "ERR Invalid or out of range slot");
        return -1;
    }
    return (int)v;
}

static void replyUnknownNode(Client *c, const char *name) { replyErrorFormat(c, "ERR Unknown node %s", name); }

void todoSaveAndState(void) {
    cs.todoState = 1;
    if (saveConfig() == -1) serverLog(LL_WARNING, "Could not save the cluster config: %s", strerror(errno));
    updateState();
}

/* Checks start..end against the slots seen so far (seen[]), as Redis. */
static int checkSlots(Client *c, unsigned char *seen, int del, int start, int end) {
    for (int s = start; s <= end; s++) {
        if (del && !cs.slots[s]) {
            replyErrorFormat(c, "ERR Slot %d is already unassigned", s);
            return -1;
        }
        if (!del && cs.slots[s]) {
            replyErrorFormat(c, "ERR Slot %d is already busy", s);
            return -1;
        }
        if (seen[s]++ == 1) {
            replyErrorFormat(c, "ERR Slot %d specified multiple times", s);
            return -1;
        }
    }
    return 0;
}

static void applySlots(Client *c, unsigned char *seen, int del) {
    for (int s = 0; s < (int)DB_SLOTS; s++) {
        if (!seen[s]) continue;
        if (del) {
            slotDel(s);
        } else {
            cs.importing[s] = NULL;
            slotAdd(myself, s);
        }
    }
    todoSaveAndState();
    replyOk(c);
}

static void addDelSlots(Client *c, int del, int ranges) {
    if (ranges && c->argc % 2 == 1) {
        replyErrorFormat(c, "ERR wrong number of arguments for '%s' command", c->cmd->fullname);
        return;
    }
    int step = ranges ? 2 : 1;
    for (int j = 2; j < c->argc; j += step) {
        int a = getSlotOrReply(c, c->argv[j]);
        if (a == -1) return;
        if (ranges) {
            int b = getSlotOrReply(c, c->argv[j + 1]);
            if (b == -1) return;
            if (a > b) {
                replyErrorFormat(c, "ERR start slot number %d is greater than end slot number %d", a, b);
                return;
            }
        }
    }
    unsigned char *seen = xcalloc(DB_SLOTS);
    for (int j = 2; j < c->argc; j += step) {
        int a = atoi(c->argv[j]), b = ranges ? atoi(c->argv[j + 1]) : a;
        if (checkSlots(c, seen, del, a, b) == -1) {
            xfree(seen);
            return;
        }
    }
    applySlots(c, seen, del);
    xfree(seen);
}

static void setslot(Client *c) {
    if (myself->flags & NODE_SLAVE) {
        replyError(c, "ERR Please use SETSLOT only with masters.");
        return;
    }
    int slot = getSlotOrReply(c, c->argv[2]);
    if (slot == -1) return;
    const char *action = c->argc > 3 ? c->argv[3] : "";
    if (!strcasecmp(action, "migrating") && c->argc == 5) {
        if (cs.slots[slot] != myself) {
            replyErrorFormat(c, "ERR I'm not the owner of hash slot %d", slot);
            return;
        }
        ClusterNode *n = nodeLookup(c->argv[4], sdsLen(c->argv[4]));
        if (!n) {
            replyErrorFormat(c, "ERR I don't know about node %s", c->argv[4]);
            return;
        }
        if (!nodeIsMaster(n)) {
            replyError(c, "ERR Target node is not a master");
            return;
        }
        cs.migrating[slot] = n;
    } else if (!strcasecmp(action, "importing") && c->argc == 5) {
        if (cs.slots[slot] == myself) {
            replyErrorFormat(c, "ERR I'm already the owner of hash slot %d", slot);
            return;
        }
        ClusterNode *n = nodeLookup(c->argv[4], sdsLen(c->argv[4]));
        if (!n) {
            replyErrorFormat(c, "ERR I don't know about node %s", c->argv[4]);
            return;
        }
        if (!nodeIsMaster(n)) {
            replyError(c, "ERR Target node is not a master");
            return;
        }
        cs.importing[slot] = n;
    } else if (!strcasecmp(action, "stable") && c->argc == 4) {
        cs.importing[slot] = NULL;
        cs.migrating[slot] = NULL;
    } else if (!strcasecmp(action, "node") && c->argc == 5) {
        ClusterNode *n = nodeLookup(c->argv[4], sdsLen(c->argv[4]));
        if (!n) {
            replyUnknownNode(c, c->argv[4]);
            return;
        }
        if (!nodeIsMaster(n)) {
            replyError(c, "ERR Target node is not a master");
            return;
        }
        size_t keys = dbSlotCount(&server.db[0], (unsigned)slot);
        if (cs.slots[slot] == myself && n != myself && keys != 0) {
            replyErrorFormat(c,
                             "ERR Can't assign hashslot %d to a different node while I still hold keys for this "
                             "hash slot.",
                             slot);
            return;
        }
        if (keys == 0 && cs.migrating[slot]) cs.migrating[slot] = NULL;
        slotDel(slot);
        slotAdd(n, slot);
        if (n == myself && cs.importing[slot]) {
            if (bumpEpoch() == 0)
                serverLog(LL_WARNING, "configEpoch updated after importing slot %d", slot);
            cs.importing[slot] = NULL;
        }
    } else {
        replyError(c, "ERR Invalid CLUSTER SETSLOT action or number of arguments. Try CLUSTER HELP");
        return;
    }
    todoSaveAndState();
    replyOk(c);
}

static sds infoText(void) {
    int assigned = 0, okSlots = 0, pfail = 0, fail = 0;
    for (int s = 0; s < (int)DB_SLOTS; s++) {
        ClusterNode *n = cs.slots[s];
        if (!n) continue;
        assigned++;
        if (n->flags & NODE_FAIL) fail++;
        else if (n->flags & NODE_PFAIL) pfail++;
        else okSlots++;
    }
    ClusterNode *m = nodeIsMaster(myself) ? myself : nodeMaster(myself);
    unsigned long long myEpoch = m ? m->configEpoch : 0;
    sds s = sdsCatPrintf(sdsEmpty(),
                        "cluster_state:%s\r\ncluster_slots_assigned:%d\r\ncluster_slots_ok:%d\r\n"
                        "cluster_slots_pfail:%d\r\ncluster_slots_fail:%d\r\ncluster_known_nodes:%d\r\n"
                        "cluster_size:%d\r\ncluster_current_epoch:%llu\r\ncluster_my_epoch:%llu\r\n",
                        cs.ok ? "ok" : "fail", assigned, okSlots, pfail, fail, cs.count, cs.size, cs.currentEpoch,
                        myEpoch);
    return busInfoStats(s);
}

/* One node of CLUSTER SLOTS: endpoint, port, id, the other endpoints. */
static void replySlotsNode(Client *c, const ClusterNode *n) {
    replyArrayLen(c, 4);
    replyBulkCString(c, endpointOf(n));
    replyLongLong(c, clusterClientPort(n, c));
    replyBulk(c, n->name, NAMELEN);
    int extra = (preferredEndpoint != 0) + (preferredEndpoint != 1 && sdsLen(n->hostname) != 0);
    replyMapLen(c, extra);
    if (preferredEndpoint != 0) {
        replyBulkCString(c, "ip");
        replyBulkCString(c, n->ip);
    }
    if (preferredEndpoint != 1 && sdsLen(n->hostname)) {
        replyBulkCString(c, "hostname");
        replyBulkCString(c, n->hostname);
    }
}

int replicasOf(const ClusterNode *m, ClusterNode **out) {
    int k = 0;
    for (int i = 0; i < cs.count; i++) {
        ClusterNode *r = cs.nodes[i];
        if ((r->flags & NODE_SLAVE) && r->masterName[0] && !memcmp(r->masterName, m->name, NAMELEN)) {
            if (out) out[k] = r;
            k++;
        }
    }
    return k;
}

static void slotsCommand(Client *c) {
    int ranges = 0;
    for (int s = 0; s < (int)DB_SLOTS; s++) {
        if (!cs.slots[s]) continue;
        while (s + 1 < (int)DB_SLOTS && cs.slots[s + 1] == cs.slots[s]) s++;
        ranges++;
    }
    replyArrayLen(c, ranges);
    ClusterNode **reps = xmalloc(sizeof(*reps) * (size_t)cs.count);
    for (int s = 0; s < (int)DB_SLOTS; s++) {
        ClusterNode *n = cs.slots[s];
        if (!n) continue;
        int start = s;
        while (s + 1 < (int)DB_SLOTS && cs.slots[s + 1] == n) s++;
        int nr = replicasOf(n, reps), shown = 0;
        for (int i = 0; i < nr; i++) shown += !(reps[i]->flags & NODE_FAIL);
        replyArrayLen(c, 3 + shown);
        replyLongLong(c, start);
        replyLongLong(c, s);
        replySlotsNode(c, n);
        for (int i = 0; i < nr; i++)
            if (!(reps[i]->flags & NODE_FAIL)) replySlotsNode(c, reps[i]);
    }
    xfree(reps);
}

static void replyShardNode(Client *c, const ClusterNode *n) {
    int hasHost = sdsLen(n->hostname) != 0;
    /* With tls-cluster the node's port is its TLS one: "port" is then the
     * plaintext port (left out when it has none) and "tls-port" the TLS
     * one, whatever the client's transport, as Redis 7.0. */
    int tls = tlsCluster();
    int plain = tls ? n->pport : n->port, tlsp = tls ? n->port : 0;
    replyMapLen(c, 6 + (plain != 0) + (tlsp != 0) + hasHost);
    replyBulkCString(c, "id");
    replyBulk(c, n->name, NAMELEN);
    if (plain) {
        replyBulkCString(c, "port");
        replyLongLong(c, plain);
    }
    if (tlsp) {
        replyBulkCString(c, "tls-port");
        replyLongLong(c, tlsp);
    }
    replyBulkCString(c, "ip");
    replyBulkCString(c, n->ip);
    replyBulkCString(c, "endpoint");
    replyBulkCString(c, endpointOf(n));
    if (hasHost) {
        replyBulkCString(c, "hostname");
        replyBulkCString(c, n->hostname);
    }
    replyBulkCString(c, "role");
    replyBulkCString(c, nodeIsMaster(n) ? "master" : "replica");
    long long off = n->replOffset > 0 ? n->replOffset : 0; /* as the bus last said */
    if (n == myself) replReplicaAcks(&off, NULL, 0);
    replyBulkCString(c, "replication-offset");
    replyLongLong(c, off);
    replyBulkCString(c, "health");
    replyBulkCString(c, (n->flags & NODE_FAIL) ? "fail" : (!nodeIsMaster(n) && off == 0) ? "loading" : "online");
}

static void shardsCommand(Client *c) {
    int masters = 0;
    for (int i = 0; i < cs.count; i++) masters += nodeIsMaster(cs.nodes[i]);
    replyArrayLen(c, masters);
    ClusterNode **reps = xmalloc(sizeof(*reps) * (size_t)cs.count);
    for (int i = 0; i < cs.count; i++) {
        ClusterNode *m = cs.nodes[i];
        if (!nodeIsMaster(m)) continue;
        replyMapLen(c, 2);
        replyBulkCString(c, "slots");
        int ranges = 0;
        for (int s = 0; s < (int)DB_SLOTS; s++) {
            if (cs.slots[s] != m) continue;
            while (s + 1 < (int)DB_SLOTS && cs.slots[s + 1] == m) s++;
            ranges++;
        }
        replyArrayLen(c, ranges * 2);
        for (int s = 0; s < (int)DB_SLOTS; s++) {
            if (cs.slots[s] != m) continue;
            int start = s;
            while (s + 1 < (int)DB_SLOTS && cs.slots[s + 1] == m) s++;
            replyLongLong(c, start);
            replyLongLong(c, s);
        }
        replyBulkCString(c, "nodes");
        int nr = replicasOf(m, reps);
        replyArrayLen(c, 1 + nr);
        replyShardNode(c, m);
        for (int k = 0; k < nr; k++) replyShardNode(c, reps[k]);
    }
    xfree(reps);
}

typedef struct KeysCollect {
    Client *c;
    long long left;
    long long sent;
} KeysCollect;

static void collectKey(void *priv, void *entry) {
    KeysCollect *k = priv;
    if (k->left == 0) return;
    kvobj *o = entry;
    replyBulk(k->c, kvKey(o), kvKeyLen(o));
    k->left--;
    k->sent++;
}

static int getLLOrReply(Client *c, const char *arg, long long *v) {
    return getLongLongOrReply(c, (sds)arg, v, NULL);
}

static void resetCommand(Client *c) {
    int hard = 0;
    if (c->argc == 3) {
        if (!strcasecmp(c->argv[2], "hard")) hard = 1;
        else if (strcasecmp(c->argv[2], "soft")) {
            replyError(c, "ERR syntax error");
            return;
        }
    } else if (c->argc > 3) {
        replyError(c, "ERR syntax error");
        return;
    }
    if (nodeIsMaster(myself) && dbSize(&server.db[0]) != 0) {
        replyError(c, "ERR CLUSTER RESET can't be called with master nodes containing keys");
        return;
    }
    if (!nodeIsMaster(myself)) {
        /* A replica stops replicating and drops its copy of the data. */
        replicaUnsetPrimary();
        signalFlushedDb(-1);
        dbEmpty(&server.db[0]);
    }
    busResetManualFailover();
    memset(cs.migrating, 0, sizeof(cs.migrating));
    memset(cs.importing, 0, sizeof(cs.importing));
    myself->flags = (myself->flags & ~NODE_SLAVE) | NODE_MASTER;
    myself->masterName[0] = '\0';
    nodeDelSlots(myself);
    while (cs.count > 1) nodeDelete(cs.nodes[cs.count - 1]);
    if (hard) {
        cs.currentEpoch = 0;
        cs.lastVoteEpoch = 0;
        myself->configEpoch = 0;
        randHex(myself->name, NAMELEN);
        serverLog(LL_NOTICE, "Node hard reset, now I'm %.40s", myself->name);
    }
    saveConfigOrDie();
    cs.todoState = 1;
    updateState();
    replyOk(c);
}

static void clusterCommand(Client *c) {
    const char *sub = c->argv[1];
    if (!strcasecmp(sub, "myid")) {
        replyBulk(c, myself->name, NAMELEN);
    } else if (!strcasecmp(sub, "keyslot")) {
        replyLongLong(c, dbKeySlot(c->argv[2], sdsLen(c->argv[2])));
    } else if (!strcasecmp(sub, "countkeysinslot")) {
        long long slot;
        if (getLLOrReply(c, c->argv[2], &slot) == -1) return;
        if (slot < 0 || slot >= (long long)DB_SLOTS) {
            replyError(c, "ERR Invalid slot");
            return;
        }
        replyLongLong(c, (long long)dbSlotCount(&server.db[0], (unsigned)slot));
    } else if (!strcasecmp(sub, "getkeysinslot")) {
        long long slot, max;
        if (getLLOrReply(c, c->argv[2], &slot) == -1 || getLLOrReply(c, c->argv[3], &max) == -1) return;
        if (max < 0 || slot < 0 || slot >= (long long)DB_SLOTS) {
            replyError(c, "ERR Invalid slot or number of keys");
            return;
        }
        size_t have = dbSlotCount(&server.db[0], (unsigned)slot);
        long long n = (long long)have < max ? (long long)have : max;
        replyArrayLen(c, n);
        KeysCollect k = {c, n, 0};
        dbSlotVisit(&server.db[0], (unsigned)slot, collectKey, &k);
    } else if (!strcasecmp(sub, "addslots") || !strcasecmp(sub, "delslots")) {
        addDelSlots(c, sub[0] == 'd' || sub[0] == 'D', 0);
    } else if (!strcasecmp(sub, "addslotsrange") || !strcasecmp(sub, "delslotsrange")) {
        addDelSlots(c, sub[0] == 'd' || sub[0] == 'D', 1);
    } else if (!strcasecmp(sub, "flushslots")) {
        if (dbSize(&server.db[0]) != 0) {
            replyError(c, "ERR DB must be empty to perform CLUSTER FLUSHSLOTS.");
            return;
        }
        nodeDelSlots(myself);
        todoSaveAndState();
        replyOk(c);
    } else if (!strcasecmp(sub, "setslot")) {
        setslot(c);
    } else if (!strcasecmp(sub, "nodes")) {
        sds s = sdsEmpty();
        for (int i = 0; i < cs.count; i++) {
            s = nodeDescription(s, cs.nodes[i], 1, c);
            s = sdsCat(s, "\n");
        }
        replyVerbatim(c, s, sdsLen(s), "txt");
        sdsFree(s);
    } else if (!strcasecmp(sub, "slots")) {
        slotsCommand(c);
    } else if (!strcasecmp(sub, "shards")) {
        shardsCommand(c);
    } else if (!strcasecmp(sub, "info")) {
        sds s = infoText();
        replyVerbatim(c, s, sdsLen(s), "txt");
        sdsFree(s);
    } else if (!strcasecmp(sub, "saveconfig")) {
        if (saveConfigSync() == -1) replyErrorFormat(c, "ERR error saving the cluster node config: %s", strerror(errno));
        else replyOk(c);
    } else if (!strcasecmp(sub, "reset")) {
        resetCommand(c);
    } else if (!strcasecmp(sub, "set-config-epoch")) {
        long long epoch;
        if (getLLOrReply(c, c->argv[2], &epoch) == -1) return;
        if (epoch < 0) {
            replyErrorFormat(c, "ERR Invalid config epoch specified: %lld", epoch);
        } else if (cs.count > 1) {
            replyError(c, "ERR The user can assign a config epoch only when the node does not know any other node.");
        } else if (myself->configEpoch != 0) {
            replyError(c, "ERR Node config epoch is already non-zero");
        } else {
            myself->configEpoch = (unsigned long long)epoch;
            serverLog(LL_WARNING, "configEpoch set to %llu via CLUSTER SET-CONFIG-EPOCH", myself->configEpoch);
            if (cs.currentEpoch < (unsigned long long)epoch) cs.currentEpoch = (unsigned long long)epoch;
            todoSaveAndState();
            replyOk(c);
        }
    } else if (!strcasecmp(sub, "bumpepoch")) {
        int rc = bumpEpoch();
        if (rc == 0) todoSaveAndState();
        sds s = sdsCatPrintf(sdsEmpty(), "%s %llu", rc == 0 ? "BUMPED" : "STILL", myself->configEpoch);
        replyStatus(c, s);
        sdsFree(s);
    } else if (!strcasecmp(sub, "count-failure-reports")) {
        ClusterNode *n = nodeLookup(c->argv[2], sdsLen(c->argv[2]));
        if (!n) replyUnknownNode(c, c->argv[2]);
        else replyLongLong(c, busFailureReports(n));
    } else if (!strcasecmp(sub, "links")) {
        busLinksReply(c);
    } else if (!strcasecmp(sub, "replicas") || !strcasecmp(sub, "slaves")) {
        ClusterNode *n = nodeLookup(c->argv[2], sdsLen(c->argv[2]));
        if (!n) {
            replyUnknownNode(c, c->argv[2]);
            return;
        }
        if (!nodeIsMaster(n)) {
            replyError(c, "ERR The specified node is not a master");
            return;
        }
        ClusterNode **reps = xmalloc(sizeof(*reps) * (size_t)cs.count);
        int nr = replicasOf(n, reps);
        replyArrayLen(c, nr);
        for (int i = 0; i < nr; i++) {
            sds s = nodeDescription(sdsEmpty(), reps[i], 0, c);
            replyBulkSds(c, s);
        }
        xfree(reps);
    } else if (!strcasecmp(sub, "forget")) {
        ClusterNode *n = nodeLookup(c->argv[2], sdsLen(c->argv[2]));
        if (!n) {
            replyUnknownNode(c, c->argv[2]);
        } else if (n == myself) {
            replyError(c, "ERR I tried hard but I can't forget myself...");
        } else if ((myself->flags & NODE_SLAVE) && nodeMaster(myself) == n) {
            replyError(c, "ERR Can't forget my master!");
        } else {
            busBlacklistAdd(n->name);
            nodeDelete(n);
            todoSaveAndState();
            replyOk(c);
        }
    } else if (!strcasecmp(sub, "failover")) {
        if (c->argc == 3 && strcasecmp(c->argv[2], "force") && strcasecmp(c->argv[2], "takeover")) {
            replyError(c, "ERR syntax error");
        } else if (c->argc > 3) {
            replyError(c, "ERR syntax error");
        } else if (nodeIsMaster(myself)) {
            replyError(c, "ERR You should send CLUSTER FAILOVER to a replica");
        } else {
            int force = c->argc == 3 && !strcasecmp(c->argv[2], "force");
            int takeover = c->argc == 3 && !strcasecmp(c->argv[2], "takeover");
            const char *err = busManualFailover(force, takeover);
            if (err) replyError(c, err);
            else replyOk(c);
        }
    } else if (!strcasecmp(sub, "replicate")) {
        ClusterNode *n = nodeLookup(c->argv[2], sdsLen(c->argv[2]));
        if (!n) replyUnknownNode(c, c->argv[2]);
        else if (n == myself) replyError(c, "ERR Can't replicate myself");
        else if (n->flags & NODE_SLAVE) replyError(c, "ERR I can only replicate a master, not a replica.");
        else if (nodeIsMaster(myself) && (myself->numSlots != 0 || dbSize(&server.db[0]) != 0))
            replyError(c, "ERR To set a master the node must be empty and without assigned slots.");
        else {
            busSetMyMaster(n);
            todoSaveAndState();
            replyOk(c);
        }
    } else if (!strcasecmp(sub, "meet")) {
        long long port, cport = 0;
        char *end;
        errno = 0;
        port = strtoll(c->argv[3], &end, 10);
        if (!*c->argv[3] || *end || errno == ERANGE) {
            replyErrorFormat(c, "ERR Invalid TCP base port specified: %s", c->argv[3]);
            return;
        }
        cport = port + 10000;
        if (c->argc > 4) {
            errno = 0;
            cport = strtoll(c->argv[4], &end, 10);
            if (!*c->argv[4] || *end || errno == ERANGE) {
                replyErrorFormat(c, "ERR Invalid TCP bus port specified: %s", c->argv[4]);
                return;
            }
        }
        if (busMeet(c->argv[2], port, cport) == -1)
            replyErrorFormat(c, "ERR Invalid node address specified: %s:%s", c->argv[2], c->argv[3]);
        else
            replyOk(c);
    } else {
        /* CLUSTER HELP */
        /* The text redis-server 7.0.15 answers, line for line (checked by
         * test_cluster.py against the oracle). */
        static const char *help[] = {
            "ADDSLOTS <slot> [<slot> ...]",
            "    Assign slots to current node.",
            "ADDSLOTSRANGE <start slot> <end slot> [<start slot> <end slot> ...]",
            "    Assign slots which are between <start-slot> and <end-slot> to current node.",
            "BUMPEPOCH",
            "    Advance the cluster config epoch.",
            "COUNT-FAILURE-REPORTS <node-id>",
            "    Return number of failure reports for <node-id>.",
            "COUNTKEYSINSLOT <slot>",
            "    Return the number of keys in <slot>.",
            "DELSLOTS <slot> [<slot> ...]",
            "    Delete slots information from current node.",
            "DELSLOTSRANGE <start slot> <end slot> [<start slot> <end slot> ...]",
            "    Delete slots information which are between <start-slot> and <end-slot> from current node.",
            "FAILOVER [FORCE|TAKEOVER]",
            "    Promote current replica node to being a master.",
            "FORGET <node-id>",
            "    Remove a node from the cluster.",
            "GETKEYSINSLOT <slot> <count>",
            "    Return key names stored by current node in a slot.",
            "FLUSHSLOTS",
            "    Delete current node own slots information.",
            "INFO",
            "    Return information about the cluster.",
            "KEYSLOT <key>",
            "    Return the hash slot for <key>.",
            "MEET <ip> <port> [<bus-port>]",
            "    Connect nodes into a working cluster.",
            "MYID",
            "    Return the node id.",
            "NODES",
            "    Return cluster configuration seen by node. Output format:",
            "    <id> <ip:port> <flags> <master> <pings> <pongs> <epoch> <link> <slot> ...",
            "REPLICATE <node-id>",
            "    Configure current node as replica to <node-id>.",
            "RESET [HARD|SOFT]",
            "    Reset current node (default: soft).",
            "SET-CONFIG-EPOCH <epoch>",
            "    Set config epoch of current node.",
            "SETSLOT <slot> (IMPORTING <node-id>|MIGRATING <node-id>|STABLE|NODE <node-id>)",
            "    Set slot state.",
            "REPLICAS <node-id>",
            "    Return <node-id> replicas.",
            "SAVECONFIG",
            "    Force saving cluster configuration on disk.",
            "SLOTS",
            "    Return information about slots range mappings. Each range is made of:",
            "    start, end, master and replicas IP addresses, ports and ids",
            "SHARDS",
            "    Return information about slot range mappings and the nodes associated with them.",
            "LINKS",
            "    Return information about all network links between this node and its peers.",
            "    Output format is an array where each array element is a map containing attributes of a link",
            NULL};
        replyHelp(c, help);
    }
}

void clusterDispatch(Client *c) {
    if (!clusterEnabled) {
        replyError(c, "ERR This instance has cluster support disabled");
        return;
    }
    const char *name = c->argv[0];
    if (!strcasecmp(name, "cluster")) {
        clusterCommand(c);
    } else if (!strcasecmp(name, "asking")) {
        c->flags |= CLIENT_ASKING;
        replyOk(c);
    } else if (!strcasecmp(name, "readonly")) {
        c->flags |= CLIENT_READONLY;
        replyOk(c);
    } else {
        c->flags &= ~CLIENT_READONLY;
        replyOk(c);
    }
}

sds clusterInfoSection(sds s) {
    s = sdsCatPrintf(s, "cluster_enabled:%d\r\n", clusterEnabled ? 1 : 0);
    /* Cairn's own line, shown only once a bus message was refused (so
     * the section stays Redis's otherwise). */
    if (clusterEnabled && busRejected()) s = sdsCatPrintf(s, "cluster_bus_messages_rejected:%lld\r\n", busRejected());
    return s;
}
