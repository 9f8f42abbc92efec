/* sentinel_client.c -- the clients of a sentinel: connections accepted on
 * its port, RESP2 or RESP3 (HELLO), and the commands Sentinel mode runs
 * (SENTINEL ..., INFO, ROLE, PING, (P)SUBSCRIBE, PUBLISH of hello
 * messages, AUTH, HELLO, CLIENT, COMMAND, SHUTDOWN); everything else
 * answers redis-sentinel's unknown-command error.
 *
 * Invariants:
 *   - A client's replies go to its obuf and are written before the loop
 *     sleeps (sentinelBeforeSleep) or at once after its input; a client is
 *     freed only by itself (closeAfterReply), a write error, or CLIENT KILL
 *     from another client (never while its own handler runs).
 *   - Maps and pushes follow the client's protocol (addMap, addPush). */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "core/conn.h"
#include "core/errors.h"
#include "core/event.h"
#include "core/log.h"
#include "core/server.h"
#include "ds/alloc.h"
#include "ds/glob.h"
#include "ds/sds.h"
#include "ds/util.h"
#include "proto/resp_parse.h"
#include "server/sentinel_int.h"

typedef struct SClient {
    Connection *conn;
    sds qbuf, obuf;
    struct Client *acl; /* its user and authentication (sentinel_acl.c) */
    int resp;   /* 2 or 3 (HELLO) */
    sds name;   /* CLIENT SETNAME, NULL: none */
    unsigned long long id;
    long long ctime, lastInteraction; /* ms */
    char addr[128], laddr[128];
    char lastCmd[48];
    int replyOff, skipNext, skipThis; /* CLIENT REPLY OFF / SKIP */
    int noEvict;                      /* CLIENT NO-EVICT (shown in CLIENT LIST) */
    /* CLIENT TRACKING: the state only (a sentinel has no keys, so nothing
     * is ever invalidated) */
    int tracking;
    unsigned trk; /* TRK_* */
    unsigned long long redirect;
    sds *prefixes; /* sorted, as Redis's radix tree lists them */
    int nprefixes;
    int closeAfterReply;
    sds *channels;
    int nchannels;
    sds *patterns;
    int npatterns;
    struct SClient *next;
} SClient;

static SClient *clients;

#define TRK_BCAST 1u
#define TRK_OPTIN 2u
#define TRK_OPTOUT 4u
#define TRK_NOLOOP 8u
#define TRK_CACHING 16u /* CLIENT CACHING, for the next command */
/* CLIENT PAUSE: until pauseUntil (ms), every command (ALL) or PUBLISH
 * (WRITE, as redis-sentinel) waits in its client's input. */
static long long pauseUntil;
static int pauseAll;
static Listener sentinelListener = {
    .name = "tcp", .type = &connTcpType, .proto = &respProtocol, .encoder = &respEncoder};

static void sclientWritable(EventLoop *el, int fd, void *data, int mask);

static void sclientFree(SClient *c) {
    SClient **pp = &clients;
    while (*pp && *pp != c)
        pp = &(*pp)->next;
    if (*pp) *pp = c->next;
    connClose(c->conn);
    sentinelAclClientFree(c->acl);
    sdsFree(c->qbuf);
    sdsFree(c->obuf);
    sdsFree(c->name);
    for (int i = 0; i < c->nprefixes; i++)
        sdsFree(c->prefixes[i]);
    xfree(c->prefixes);
    for (int i = 0; i < c->nchannels; i++)
        sdsFree(c->channels[i]);
    for (int i = 0; i < c->npatterns; i++)
        sdsFree(c->patterns[i]);
    xfree(c->channels);
    xfree(c->patterns);
    xfree(c);
    sentinel.nclients--;
}

/* Writes what it can of c's output; 0, or -1 when c was freed. */
static int sclientFlush(SClient *c) {
    while (sdsLen(c->obuf)) {
        long n = connWrite(c->conn, c->obuf, sdsLen(c->obuf));
        sstats.writes++;
        if (n > 0) sstats.netOutput += n;
        if (n < 0 && errno == EAGAIN) break;
        if (n <= 0) {
            sclientFree(c);
            return -1;
        }
        sdsRange(c->obuf, n, -1);
    }
    if (sdsLen(c->obuf)) {
        connEventAdd(c->conn, EV_WRITABLE, sclientWritable, c);
        return 0;
    }
    if (connEventMask(c->conn) & EV_WRITABLE) connEventDel(c->conn, EV_WRITABLE);
    if (c->closeAfterReply) {
        sclientFree(c);
        return -1;
    }
    return 0;
}

static void sclientWritable(EventLoop *el, int fd, void *data, int mask) { sclientFlush(data); }

static void addRaw(SClient *c, const char *s) { c->obuf = sdsCat(c->obuf, s); }
static void addStatus(SClient *c, const char *s) { c->obuf = sdsCatPrintf(c->obuf, "+%s\r\n", s); }
static void addError(SClient *c, const char *s) { c->obuf = sdsCatPrintf(c->obuf, "-%s\r\n", s); }
static void addLL(SClient *c, long long v) { c->obuf = sdsCatPrintf(c->obuf, ":%lld\r\n", v); }
static void addArray(SClient *c, long n) { c->obuf = sdsCatPrintf(c->obuf, "*%ld\r\n", n); }
static void addNullArray(SClient *c) { addRaw(c, c->resp == 3 ? "_\r\n" : "*-1\r\n"); }
static void addNull(SClient *c) { addRaw(c, c->resp == 3 ? "_\r\n" : "$-1\r\n"); }
/* A map of n pairs: RESP3's map, RESP2's flat array of 2n. */
static void addMap(SClient *c, long n) {
    c->obuf = sdsCatPrintf(c->obuf, c->resp == 3 ? "%%%ld\r\n" : "*%ld\r\n", c->resp == 3 ? n : 2 * n);
}
/* CMD HELP: the usage line, lines, and HELP itself, as status replies
 * (the shape of Redis's help replies; the text is Cairn's). */
static void addHelp(SClient *c, const char *cmd, const char **lines) {
    long n = 0;
    while (lines[n])
        n++;
    addArray(c, n + 3);
    c->obuf = sdsCatPrintf(c->obuf, "+%s <subcommand> [<arg> [value] [opt] ...]. Subcommands are:\r\n", cmd);
    for (long i = 0; i < n; i++)
        addStatus(c, lines[i]);
    addStatus(c, "HELP");
    addStatus(c, "    Prints this help.");
}

/* A pub/sub message or (un)subscribe confirmation: RESP3's push. */
static void addPush(SClient *c, long n) { c->obuf = sdsCatPrintf(c->obuf, "%c%ld\r\n", c->resp == 3 ? '>' : '*', n); }
static void addBulkLen(SClient *c, const char *p, size_t n) {
    c->obuf = sdsCatPrintf(c->obuf, "$%zu\r\n", n);
    c->obuf = sdsCatLen(c->obuf, p, n);
    c->obuf = sdsCatLen(c->obuf, "\r\n", 2);
}
static void addBulk(SClient *c, const char *s) { addBulkLen(c, s, strlen(s)); }
static void addBulkLL(SClient *c, long long v) {
    char b[32];
    snprintf(b, sizeof(b), "%lld", v);
    addBulk(c, b);
}

void sentinelPublish(const char *channel, const char *msg) {
    for (SClient *c = clients; c; c = c->next) {
        if (c->replyOff) continue; /* CLIENT REPLY OFF drops pushes too, as Redis */
        for (int i = 0; i < c->nchannels; i++) {
            if (strcmp(c->channels[i], channel)) continue;
            addPush(c, 3);
            addBulk(c, "message");
            addBulk(c, channel);
            addBulk(c, msg);
        }
        for (int i = 0; i < c->npatterns; i++) {
            if (!globMatch(c->patterns[i], sdsLen(c->patterns[i]), channel, strlen(channel), 0)) continue;
            addPush(c, 4);
            addBulk(c, "pmessage");
            addBulk(c, c->patterns[i]);
            addBulk(c, channel);
            addBulk(c, msg);
        }
    }
    /* flushed before sleeping (beforeSleep) */
}

/* --- SENTINEL replies about instances --- */

/* The flags field of SENTINEL MASTER/REPLICAS/SENTINELS, in Redis's
 * order. */
static const char *flagsString(const SInst *ri, char *buf, size_t len) {
    static const struct {
        int flag;
        const char *name;
    } names[] = {{SRI_S_DOWN, "s_down"},
                 {SRI_O_DOWN, "o_down"},
                 {SRI_MASTER, "master"},
                 {SRI_SLAVE, "slave"},
                 {SRI_SENTINEL, "sentinel"},
                 {-1, "disconnected"},
                 {SRI_MASTER_DOWN, "master_down"},
                 {SRI_FAILOVER_IN_PROGRESS, "failover_in_progress"},
                 {SRI_PROMOTED, "promoted"},
                 {SRI_RECONF_SENT, "reconf_sent"},
                 {SRI_RECONF_DONE, "reconf_done"},
                 {SRI_FORCE_FAILOVER, "force_failover"}};
    size_t off = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        int on = names[i].flag == -1 ? !(ri->cc->conn && ri->cc->connected) : (ri->flags & names[i].flag) != 0;
        if (!on || off >= len) continue;
        off += (size_t)snprintf(buf + off, len - off, "%s%s", off ? "," : "", names[i].name);
    }
    return buf;
}

static void addInstance(SClient *c, SInst *ri) {
    long long now = mstime();
    char fl[128];
    sds body = c->obuf;
    c->obuf = sdsEmpty();
    long fields = 0;
#define F(k) (addBulk(c, k), fields++)
    F("name");
    addBulk(c, ri->name);
    F("ip");
    addBulk(c, sentinelAnnounceHost(ri));
    F("port");
    addBulkLL(c, ri->port);
    F("runid");
    addBulk(c, ri->runid);
    F("flags");
    addBulk(c, flagsString(ri, fl, sizeof(fl)));
    F("link-pending-commands");
    addBulkLL(c, ri->cc->pending);
    F("link-refcount");
    addBulkLL(c, 1);
    if (ri->flags & SRI_FAILOVER_IN_PROGRESS) {
        static const char *states[] = {"none",           "wait_start",    "select_slave", "send_slaveof_noone",
                                       "wait_promotion", "reconf_slaves", "update_config"};
        F("failover-state");
        addBulk(c, states[ri->failoverState]);
    }
    F("last-ping-sent");
    addBulkLL(c, ri->actPing ? now - ri->actPing : 0);
    F("last-ok-ping-reply");
    addBulkLL(c, now - ri->lastAvail);
    F("last-ping-reply");
    addBulkLL(c, now - ri->lastPong);
    if (ri->flags & SRI_S_DOWN) {
        F("s-down-time");
        addBulkLL(c, now - ri->sdownSince);
    }
    if (ri->flags & SRI_O_DOWN) {
        F("o-down-time");
        addBulkLL(c, now - ri->odownSince);
    }
    F("down-after-milliseconds");
    addBulkLL(c, ri->downAfter);
    if (ri->flags & (SRI_MASTER | SRI_SLAVE)) {
        F("info-refresh");
        addBulkLL(c, ri->infoRefresh ? now - ri->infoRefresh : 0);
        F("role-reported");
        addBulk(c, ri->roleReported == SRI_MASTER ? "master" : "slave");
        F("role-reported-time");
        addBulkLL(c, now - ri->roleReportedTime);
    }
    if (ri->flags & SRI_MASTER) {
        F("config-epoch");
        addBulkLL(c, (long long)ri->configEpoch);
        F("num-slaves");
        addBulkLL(c, ri->nslaves);
        F("num-other-sentinels");
        addBulkLL(c, ri->nsentinels);
        F("quorum");
        addBulkLL(c, ri->quorum);
        F("failover-timeout");
        addBulkLL(c, ri->failoverTimeout);
        F("parallel-syncs");
        addBulkLL(c, ri->parallelSyncs);
        if (ri->notificationScript) {
            F("notification-script");
            addBulk(c, ri->notificationScript);
        }
        if (ri->clientReconfigScript) {
            F("client-reconfig-script");
            addBulk(c, ri->clientReconfigScript);
        }
    }
    if (ri->flags & SRI_SLAVE) {
        F("master-link-down-time");
        addBulkLL(c, ri->masterLinkDownTime);
        F("master-link-status");
        addBulk(c, ri->masterLinkUp ? "ok" : "err");
        F("master-host");
        addBulk(c, ri->slaveMasterHost ? ri->slaveMasterHost : "?");
        F("master-port");
        addBulkLL(c, ri->slaveMasterPort);
        F("slave-priority");
        addBulkLL(c, ri->slavePriority);
        F("slave-repl-offset");
        addBulkLL(c, ri->slaveReplOffset);
        F("replica-announced");
        addBulkLL(c, ri->replicaAnnounced);
    }
    if (ri->flags & SRI_SENTINEL) {
        F("last-hello-message");
        addBulkLL(c, ri->lastHelloRecv ? now - ri->lastHelloRecv : now - ri->createdAt);
        F("voted-leader");
        addBulk(c, ri->leader ? ri->leader : "?");
        F("voted-leader-epoch");
        addBulkLL(c, (long long)ri->leaderEpoch);
    }
#undef F
    sds items = c->obuf;
    c->obuf = sdsCatPrintf(body, c->resp == 3 ? "%%%ld\r\n" : "*%ld\r\n", c->resp == 3 ? fields : fields * 2);
    c->obuf = sdsCatSds(c->obuf, items);
    sdsFree(items);
}

static SInst *masterOrError(SClient *c, const char *name) {
    SInst *m = masterByName(name);
    if (!m) addError(c, "ERR No such master with that name");
    return m;
}

/* SENTINEL SET name option value ...: applies the options in order up to
 * the first bad one (an event "+set" each, as Redis's); the reply. */
static void sentinelSet(SClient *c, SInst *m, int argc, sds *argv) {
    int changes = 0;
    const char *deny = "ERR Reconfiguration of scripts path is denied for security reasons. Check the "
                       "deny-scripts-reconfig configuration directive in your Sentinel configuration";
    for (int j = 3; j < argc; j++) {
        const char *opt = argv[j];
        int more = argc - 1 - j, first = j, redacted = 0, bad = 0;
        long long ll = 0;
        if (!strcasecmp(opt, "down-after-milliseconds") && more > 0) {
            if (sentinelParseLL(argv[++j], &ll) || ll <= 0) bad = j;
            else {
                m->downAfter = ll;
                for (int k = 0; k < m->nslaves; k++)
                    m->slaves[k]->downAfter = ll;
                for (int k = 0; k < m->nsentinels; k++)
                    m->sentinels[k]->downAfter = ll;
            }
        } else if (!strcasecmp(opt, "failover-timeout") && more > 0) {
            if (sentinelParseLL(argv[++j], &ll) || ll <= 0) bad = j;
            else m->failoverTimeout = ll;
        } else if (!strcasecmp(opt, "parallel-syncs") && more > 0) {
            if (sentinelParseLL(argv[++j], &ll) || ll <= 0 || ll > 0x7fffffff) bad = j;
            else m->parallelSyncs = (int)ll;
        } else if (!strcasecmp(opt, "quorum") && more > 0) {
            if (sentinelParseLL(argv[++j], &ll) || ll <= 0 || ll > 0x7fffffff) bad = j;
            else m->quorum = (int)ll;
        } else if ((!strcasecmp(opt, "notification-script") || !strcasecmp(opt, "client-reconfig-script")) &&
                   more > 0) {
            const char *val = argv[++j];
            int notif = !strcasecmp(opt, "notification-script");
            if (sentinel.denyScriptsReconfig) {
                addError(c, deny);
                goto seterr;
            }
            if (val[0] && access(val, X_OK) == -1) {
                addError(c, notif ? "ERR Notification script seems non existing or non executable"
                                  : "ERR Client reconfiguration script seems non existing or non executable");
                goto seterr;
            }
            char **slot = notif ? &m->notificationScript : &m->clientReconfigScript;
            xfree(*slot);
            *slot = val[0] ? xstrdup(val) : NULL;
        } else if (!strcasecmp(opt, "auth-pass") && more > 0) {
            const char *val = argv[++j];
            xfree(m->authPass);
            m->authPass = val[0] ? xstrdup(val) : NULL;
            redacted = 1;
        } else if (!strcasecmp(opt, "auth-user") && more > 0) {
            const char *val = argv[++j];
            xfree(m->authUser);
            m->authUser = val[0] ? xstrdup(val) : NULL;
        } else if (!strcasecmp(opt, "rename-command") && more > 1) {
            const char *from = argv[++j], *to = argv[++j];
            if (!from[0] || !to[0]) {
                bad = to[0] ? j - 1 : j;
            } else {
                for (int k = 0; k < m->nrenames; k++) {
                    if (strcasecmp(m->renames[2 * k], from)) continue;
                    xfree(m->renames[2 * k]);
                    xfree(m->renames[2 * k + 1]);
                    memmove(m->renames + 2 * k, m->renames + 2 * k + 2,
                            sizeof(char *) * (size_t)(2 * (m->nrenames - k - 1)));
                    m->nrenames--;
                    break;
                }
                if (strcasecmp(from, to)) { /* renaming to itself removes the entry */
                    m->renames = xrealloc(m->renames, sizeof(char *) * (size_t)(2 * (m->nrenames + 1)));
                    m->renames[2 * m->nrenames] = xstrdup(from);
                    m->renames[2 * m->nrenames + 1] = xstrdup(to);
                    m->nrenames++;
                }
            }
        } else if (!strcasecmp(opt, "master-reboot-down-after-period") && more > 0) {
            if (sentinelParseLL(argv[++j], &ll) || ll < 0) bad = j;
            else m->rebootDownAfter = ll;
        } else {
            c->obuf = sdsCatPrintf(c->obuf, "-ERR Unknown option or number of arguments for SENTINEL SET '%s'\r\n",
                                   opt);
            goto seterr;
        }
        if (bad) {
            c->obuf = sdsCatPrintf(c->obuf, "-ERR Invalid argument '%s' for SENTINEL SET '%s'\r\n", argv[bad], opt);
            goto seterr;
        }
        changes++;
        if (j - first + 1 == 2)
            sentinelEvent(LL_WARNING, "+set", m, " %s %s", opt, redacted ? "******" : argv[first + 1]);
        else if (j - first + 1 == 3)
            sentinelEvent(LL_WARNING, "+set", m, " %s %s %s", opt, argv[first + 1], argv[first + 2]);
        else
            sentinelEvent(LL_WARNING, "+set", m, " %s", opt);
    }
    if (changes && sentinelFlushConfig() != 0) {
        addError(c, "ERR Failed to save Sentinel new configuration on disk");
        return;
    }
    addStatus(c, "OK");
    return;
seterr:
    if (changes) sentinelFlushConfig();
}

static void wrongArity(SClient *c, const char *name) {
    c->obuf = sdsCatPrintf(c->obuf, "-ERR wrong number of arguments for '%s' command\r\n", name);
}

static void sentinelCommand(SClient *c, int argc, sds *argv) {
    if (argc < 2) {
        wrongArity(c, "sentinel");
        return;
    }
    const char *sub = argv[1];
    SInst *m;
    if (argc > 2 && !strcasecmp(sub, "help")) {
        wrongArity(c, "sentinel|help");
        return;
    }
    if (argc == 2 && !strcasecmp(sub, "help")) {
        static const char *help[] = {
            "CKQUORUM <master-name>",
            "    Whether enough sentinels are reachable to reach the quorum and authorize a failover.",
            "CONFIG SET <param> <value>",
            "    Set a global setting (announce-*, resolve-hostnames, sentinel-user, sentinel-pass).",
            "CONFIG GET <pattern>",
            "    The global settings whose names match <pattern>.",
            "DEBUG [<param> <value> ...]",
            "    The time parameters in milliseconds, or set some of them.",
            "GET-MASTER-ADDR-BY-NAME <master-name>",
            "    The address of the current primary of <master-name>.",
            "FAILOVER <master-name>",
            "    Fail over now, without asking the other sentinels.",
            "FLUSHCONFIG",
            "    Rewrite the configuration file with the current state.",
            "INFO-CACHE <master-name> [<master-name> ...]",
            "    The last INFO replies of the primaries and their replicas, with their ages.",
            "IS-MASTER-DOWN-BY-ADDR <ip> <port> <current-epoch> <runid>",
            "    Whether the primary at <ip>:<port> looks down here; with a run id, a vote request.",
            "MASTER <master-name>",
            "    The state of a monitored primary.",
            "MASTERS",
            "    The state of every monitored primary.",
            "MONITOR <name> <ip> <port> <quorum>",
            "    Start monitoring a primary.",
            "MYID",
            "    This sentinel's id.",
            "PENDING-SCRIPTS",
            "    The notification and reconfiguration scripts queued or running.",
            "REMOVE <master-name>",
            "    Stop monitoring a primary.",
            "REPLICAS <master-name>",
            "    The state of the replicas of a primary.",
            "RESET <pattern>",
            "    Forget the replicas and sentinels of the primaries whose names match <pattern>.",
            "SENTINELS <master-name>",
            "    The state of the other sentinels watching a primary.",
            "SLAVES <master-name>",
            "    The same as REPLICAS.",
            "SET <master-name> <option> <value> [<option> <value> ...]",
            "    Change settings of a monitored primary.",
            "SIMULATE-FAILURE [CRASH-AFTER-ELECTION] [CRASH-AFTER-PROMOTION] [HELP]",
            "    Make this sentinel exit at a point of its next failover.",
            NULL};
        addHelp(c, "SENTINEL", help);
        return;
    }
#define ARITY(n, exact)                                                                                      \
    do {                                                                                                     \
        if ((exact) ? argc != (n) : argc < (n)) {                                                            \
            char nm[64];                                                                                     \
            snprintf(nm, sizeof(nm), "sentinel|%s", sub);                                                    \
            for (char *q = nm; *q; q++)                                                                      \
                *q = (char)tolower((unsigned char)*q);                                                       \
            wrongArity(c, nm);                                                                               \
            return;                                                                                          \
        }                                                                                                    \
    } while (0)
    if (!strcasecmp(sub, "masters")) {
        ARITY(2, 1);
        addArray(c, sentinel.nmasters);
        for (int i = 0; i < sentinel.nmasters; i++)
            addInstance(c, sentinel.masters[i]);
    } else if (!strcasecmp(sub, "master")) {
        ARITY(3, 1);
        if ((m = masterOrError(c, argv[2]))) addInstance(c, m);
    } else if (!strcasecmp(sub, "replicas") || !strcasecmp(sub, "slaves")) {
        ARITY(3, 1);
        if (!(m = masterOrError(c, argv[2]))) return;
        addArray(c, m->nslaves);
        for (int i = 0; i < m->nslaves; i++)
            addInstance(c, m->slaves[i]);
    } else if (!strcasecmp(sub, "sentinels")) {
        ARITY(3, 1);
        if (!(m = masterOrError(c, argv[2]))) return;
        addArray(c, m->nsentinels);
        for (int i = 0; i < m->nsentinels; i++)
            addInstance(c, m->sentinels[i]);
    } else if (!strcasecmp(sub, "get-master-addr-by-name")) {
        ARITY(3, 1);
        m = masterByName(argv[2]);
        if (!m) {
            addNullArray(c);
            return;
        }
        const SInst *cur = sentinelCurrentMasterAddr(m);
        addArray(c, 2);
        addBulk(c, sentinelAnnounceHost(cur));
        addBulkLL(c, cur->port);
    } else if (!strcasecmp(sub, "myid")) {
        ARITY(2, 1);
        addBulk(c, sentinel.myid);
    } else if (!strcasecmp(sub, "ckquorum")) {
        ARITY(3, 1);
        if (!(m = masterOrError(c, argv[2]))) return;
        int voters = m->nsentinels + 1, usable = 1;
        for (int i = 0; i < m->nsentinels; i++)
            if (!(m->sentinels[i]->flags & (SRI_S_DOWN | SRI_O_DOWN))) usable++;
        if (usable < m->quorum)
            c->obuf =
                sdsCatPrintf(c->obuf,
                             "-NOQUORUM %d usable Sentinels. Not enough available Sentinels to reach the "
                             "specified quorum for this master\r\n",
                             usable);
        else if (usable < voters / 2 + 1)
            c->obuf =
                sdsCatPrintf(c->obuf,
                             "-NOQUORUM %d usable Sentinels. Not enough available Sentinels to reach the "
                             "majority and authorize a failover\r\n",
                             usable);
        else
            c->obuf = sdsCatPrintf(c->obuf,
                                   "+OK %d usable Sentinels. Quorum and failover authorization can be "
                                   "reached\r\n",
                                   usable);
    } else if (!strcasecmp(sub, "reset")) {
        ARITY(3, 1);
        int n = 0;
        for (int i = 0; i < sentinel.nmasters; i++) {
            SInst *mm = sentinel.masters[i];
            if (!globMatch(argv[2], sdsLen(argv[2]), mm->name, strlen(mm->name), 0)) continue;
            sentinelResetMaster(mm);
            sentinelEvent(LL_WARNING, "+reset-master", mm, "%s", "");
            n++;
        }
        if (n) sentinelFlushConfig();
        addLL(c, n);
    } else if (!strcasecmp(sub, "monitor")) {
        ARITY(6, 1);
        /* Redis's checks, in its order: quorum and port are integers,
         * quorum >= 1, the address an IP (hostnames are not resolved),
         * then the port's range and the name */
        long long quorum, port;
        if (sentinelParseLL(argv[5], &quorum) || quorum < -2147483648LL || quorum > 2147483647LL) {
            addError(c, "ERR Invalid quorum");
            return;
        }
        if (sentinelParseLL(argv[4], &port) || port < -2147483648LL || port > 2147483647LL) {
            addError(c, "ERR Invalid port");
            return;
        }
        if (quorum <= 0) {
            addError(c, "ERR Quorum must be 1 or greater.");
            return;
        }
        char rip[64];
        if (sentinelResolve(argv[3], rip, sizeof(rip)) != 0) {
            addError(c, "ERR Invalid IP address or hostname specified");
            return;
        }
        if (port < 0 || port > 65535) {
            addError(c, "ERR Invalid port number.");
            return;
        }
        const char *err = sentinelAddMaster(argv[2], argv[3], argv[4], argv[5], &m);
        if (err) {
            c->obuf = sdsCatPrintf(c->obuf, "-ERR %s\r\n", err);
            return;
        }
        m->downAfter = stun.defaultDownAfter;
        sentinelFlushConfig();
        sentinelEvent(LL_WARNING, "+monitor", m, " quorum %d", m->quorum);
        addStatus(c, "OK");
    } else if (!strcasecmp(sub, "remove")) {
        ARITY(3, 1);
        if (!(m = masterOrError(c, argv[2]))) return;
        sentinelEvent(LL_WARNING, "-monitor", m, "%s", "");
        for (int i = 0; i < sentinel.nmasters; i++)
            if (sentinel.masters[i] == m) sentinelInstRemoveAt(sentinel.masters, &sentinel.nmasters, i);
        instFree(m);
        sentinelFlushConfig();
        addStatus(c, "OK");
    } else if (!strcasecmp(sub, "set")) {
        ARITY(4, 0);
        if (!(m = masterOrError(c, argv[2]))) return;
        sentinelSet(c, m, argc, argv);
    } else if (!strcasecmp(sub, "failover")) {
        ARITY(3, 1);
        if (!(m = masterOrError(c, argv[2]))) return;
        if (m->flags & SRI_FAILOVER_IN_PROGRESS) {
            addError(c, "INPROG Failover already in progress");
            return;
        }
        if (!sentinelSelectSlave(m, mstime())) {
            addError(c, "NOGOODSLAVE No suitable replica to promote");
            return;
        }
        sentinel.currentEpoch++;
        m->failoverEpoch = sentinel.currentEpoch;
        m->flags |= SRI_FAILOVER_IN_PROGRESS | SRI_FORCE_FAILOVER;
        sentinelEventAbout(LL_WARNING, "+new-epoch", m, "%llu", sentinel.currentEpoch);
        sentinelEvent(LL_WARNING, "+try-failover", m, "%s", "");
        m->failoverState = FO_WAIT_START;
        m->failoverStartTime = m->failoverStateChangeTime = mstime();
        sentinelFlushConfig();
        addStatus(c, "OK");
    } else if (!strcasecmp(sub, "flushconfig")) {
        ARITY(2, 1);
        if (sentinelFlushConfig() == 0)
            addStatus(c, "OK");
        else
            c->obuf = sdsCatPrintf(c->obuf, "-ERR Error flushing the config: %s\r\n", strerror(errno));
    } else if (!strcasecmp(sub, "is-master-down-by-addr")) {
        ARITY(6, 1);
        long long port, epoch;
        if (sentinelParseLL(argv[3], &port) || sentinelParseLL(argv[4], &epoch)) {
            addError(c, "ERR value is not an integer or out of range");
            return;
        }
        SInst *found = NULL;
        char askIp[64] = "";
        if (sentinelResolve(argv[2], askIp, sizeof(askIp)) != 0) askIp[0] = '\0';
        for (int i = 0; i < sentinel.nmasters; i++)
            if (sentinel.masters[i]->port == port && askIp[0] && !strcmp(sentinel.masters[i]->ip, askIp))
                found = sentinel.masters[i];
        int down = found && !sentinel.tilt && (found->flags & SRI_S_DOWN) && (found->flags & SRI_MASTER);
        /* As Redis: a vote request (a run id, not "*") is answered whether
         * or not the primary looks down here; the vote is the one given in
         * that epoch (sentinelVoteLeader keeps the first). */
        int vote = found && strcmp(argv[5], "*");
        if (vote) sentinelVoteLeader(found, (unsigned long long)epoch, argv[5]);
        addArray(c, 3);
        addLL(c, down);
        addBulk(c, vote && found->leader ? found->leader : "*");
        addLL(c, vote ? (long long)found->leaderEpoch : 0);
    } else if (!strcasecmp(sub, "pending-scripts")) {
        ARITY(2, 1);
        c->obuf = sentinelPendingScriptsReply(c->obuf, c->resp);
    } else if (!strcasecmp(sub, "debug")) {
        ARITY(2, 0);
        c->obuf = sentinelDebugCommand(c->obuf, c->resp, argc, argv);
    } else if (!strcasecmp(sub, "simulate-failure")) {
        ARITY(3, 0);
        c->obuf = sentinelSimulateFailureCommand(c->obuf, argc, argv);
    } else if (!strcasecmp(sub, "info-cache")) {
        ARITY(3, 0);
        /* the named primaries that exist, each once, in the order of
         * SENTINEL MASTERS; per primary its INFO and its replicas' */
        long long now = mstime();
        int n = 0;
        for (int i = 0; i < sentinel.nmasters; i++)
            for (int k = 2; k < argc; k++)
                if (!strcmp(argv[k], sentinel.masters[i]->name)) {
                    n++;
                    break;
                }
        addArray(c, n * 2);
        for (int i = 0; i < sentinel.nmasters; i++) {
            SInst *mm = sentinel.masters[i];
            int named = 0;
            for (int k = 2; k < argc && !named; k++)
                named = !strcmp(argv[k], mm->name);
            if (!named) continue;
            addBulk(c, mm->name);
            addArray(c, mm->nslaves + 1);
            for (int k = -1; k < mm->nslaves; k++) {
                SInst *ri = k < 0 ? mm : mm->slaves[k];
                addArray(c, 2);
                /* as Redis: a replica's age is 0 while the primary has no INFO */
                addLL(c, mm->infoRefresh ? now - ri->infoRefresh : 0);
                if (ri->info)
                    addBulkLen(c, ri->info, sdsLen(ri->info));
                else
                    addNull(c);
            }
        }
    } else if (!strcasecmp(sub, "config")) {
        ARITY(3, 0);
        if (!strcasecmp(argv[2], "get") && argc == 4) {
            const char *opt = argv[3];
            int n = 0;
            sds out = sdsEmpty();
            char num[32];
            struct {
                const char *name;
                const char *val;
            } opts[] = {
                {"resolve-hostnames", sentinel.resolveHostnames ? "yes" : "no"},
                {"announce-hostnames", sentinel.announceHostnames ? "yes" : "no"},
                {"announce-ip", sentinel.announceIp ? sentinel.announceIp : ""},
                {"announce-port", num},
                {"sentinel-user", sentinel.sentinelUser ? sentinel.sentinelUser : ""},
                {"sentinel-pass", sentinel.sentinelPass ? sentinel.sentinelPass : ""},
            };
            snprintf(num, sizeof(num), "%d", sentinel.announcePort);
            for (size_t i = 0; i < sizeof(opts) / sizeof(opts[0]); i++) {
                if (!globMatch(opt, strlen(opt), opts[i].name, strlen(opts[i].name), 1)) continue;
                out = sdsCatPrintf(out, "$%zu\r\n%s\r\n$%zu\r\n%s\r\n", strlen(opts[i].name), opts[i].name,
                                   strlen(opts[i].val), opts[i].val);
                n++;
            }
            addMap(c, n);
            c->obuf = sdsCatSds(c->obuf, out);
            sdsFree(out);
        } else if (!strcasecmp(argv[2], "set") && argc == 5) {
            if (!strcasecmp(argv[3], "announce-ip")) {
                xfree(sentinel.announceIp);
                sentinel.announceIp = sdsLen(argv[4]) ? xstrdup(argv[4]) : NULL;
            } else if (!strcasecmp(argv[3], "announce-port")) {
                long long p;
                if (sentinelParseLL(argv[4], &p) || p < 0 || p > 65535) {
                    c->obuf = sdsCatPrintf(c->obuf,
                                           "-ERR Invalid value '%s' to SENTINEL CONFIG SET 'announce-port'\r\n",
                                           argv[4]);
                    return;
                }
                sentinel.announcePort = (int)p;
            } else if (!strcasecmp(argv[3], "resolve-hostnames") || !strcasecmp(argv[3], "announce-hostnames")) {
                if (strcasecmp(argv[4], "yes") && strcasecmp(argv[4], "no")) {
                    c->obuf = sdsCatPrintf(c->obuf, "-ERR Invalid value '%s' to SENTINEL CONFIG SET '%s'\r\n",
                                           argv[4], argv[3]);
                    return;
                }
                int yes = !strcasecmp(argv[4], "yes");
                if (!strcasecmp(argv[3], "resolve-hostnames"))
                    sentinel.resolveHostnames = yes;
                else
                    sentinel.announceHostnames = yes;
            } else if (!strcasecmp(argv[3], "sentinel-user") || !strcasecmp(argv[3], "sentinel-pass")) {
                char **slot = !strcasecmp(argv[3], "sentinel-user") ? &sentinel.sentinelUser : &sentinel.sentinelPass;
                xfree(*slot);
                *slot = sdsLen(argv[4]) ? xstrdup(argv[4]) : NULL;
                /* links to other sentinels authenticate anew */
                for (int i = 0; i < sentinel.nmasters; i++)
                    for (int k = 0; k < sentinel.masters[i]->nsentinels; k++) {
                        SInst *si = sentinel.masters[i]->sentinels[k];
                        SLink *n = linkCreate(si, 0);
                        linkFree(si->cc);
                        si->cc = n;
                    }
            } else {
                c->obuf =
                    sdsCatPrintf(c->obuf, "-ERR Invalid argument '%s' to SENTINEL CONFIG SET\r\n", argv[3]);
                return;
            }
            sentinelFlushConfig();
            addStatus(c, "OK");
        } else {
            addError(c, "ERR Only SENTINEL CONFIG GET <option> / SET <option> <value> are supported.");
        }
    } else {
        c->obuf = sdsCatPrintf(c->obuf, "-ERR unknown subcommand '%.128s'. Try SENTINEL HELP.\r\n", sub);
    }
#undef ARITY
}

/* --- the other commands --- */

static void infoCommand(SClient *c, int argc, sds *argv) {
    sds s = sentinelInfo(argc, argv);
    addBulkLen(c, s, sdsLen(s));
    sdsFree(s);
}

size_t sentinelClientsMaxInput(void) {
    size_t m = 0;
    for (SClient *c = clients; c; c = c->next)
        if (sdsCap(c->qbuf) > m) m = sdsCap(c->qbuf);
    return m;
}

size_t sentinelClientsMaxOutput(void) {
    size_t m = 0;
    for (SClient *c = clients; c; c = c->next)
        if (sdsLen(c->obuf) > m) m = sdsLen(c->obuf);
    return m;
}

/* Distinct names across clients (a small number: a quadratic scan). */
static int distinctNames(int pattern) {
    int n = 0;
    for (SClient *c = clients; c; c = c->next) {
        sds *arr = pattern ? c->patterns : c->channels;
        int cnt = pattern ? c->npatterns : c->nchannels;
        for (int i = 0; i < cnt; i++) {
            int seen = 0;
            for (SClient *o = clients; o != c && !seen; o = o->next) {
                sds *oa = pattern ? o->patterns : o->channels;
                int on = pattern ? o->npatterns : o->nchannels;
                for (int k = 0; k < on && !seen; k++)
                    seen = !strcmp(oa[k], arr[i]);
            }
            if (!seen) n++;
        }
    }
    return n;
}

void sentinelPubsubCounts(int *channels, int *patterns) {
    *channels = distinctNames(0);
    *patterns = distinctNames(1);
}

static void subscribeCommand(SClient *c, int argc, sds *argv, int pattern) {
    for (int i = 1; i < argc; i++) {
        sds **arr = pattern ? &c->patterns : &c->channels;
        int *n = pattern ? &c->npatterns : &c->nchannels;
        int have = 0;
        for (int j = 0; j < *n; j++)
            if (!strcmp((*arr)[j], argv[i])) have = 1;
        if (!have) {
            *arr = xrealloc(*arr, sizeof(sds) * (size_t)(*n + 1));
            (*arr)[(*n)++] = sdsDup(argv[i]);
        }
        addPush(c, 3);
        addBulk(c, pattern ? "psubscribe" : "subscribe");
        addBulk(c, argv[i]);
        addLL(c, c->nchannels + c->npatterns);
    }
}

static void unsubscribeCommand(SClient *c, int argc, sds *argv, int pattern) {
    sds **arr = pattern ? &c->patterns : &c->channels;
    int *n = pattern ? &c->npatterns : &c->nchannels;
    const char *kind = pattern ? "punsubscribe" : "unsubscribe";
    if (argc == 1) {
        if (*n == 0) {
            addPush(c, 3);
            addBulk(c, kind);
            addNull(c);
            addLL(c, c->nchannels + c->npatterns);
        }
        /* In subscription order: redis-sentinel 7.0's order for patterns
         * (a list); for channels it uses its dict's order under a hash
         * seed drawn at start, different in every process, so no order
         * can match it and this one is kept. */
        int total = *n;
        for (int i = 0; i < total; i++) {
            sds ch = (*arr)[i];
            (*n)--;
            addPush(c, 3);
            addBulk(c, kind);
            addBulk(c, ch);
            addLL(c, c->nchannels + c->npatterns);
            sdsFree(ch);
        }
        return;
    }
    for (int i = 1; i < argc; i++) {
        for (int j = 0; j < *n; j++) {
            if (strcmp((*arr)[j], argv[i])) continue;
            sdsFree((*arr)[j]);
            memmove(*arr + j, *arr + j + 1, sizeof(sds) * (size_t)(*n - j - 1));
            (*n)--;
            break;
        }
        addPush(c, 3);
        addBulk(c, kind);
        addBulk(c, argv[i]);
        addLL(c, c->nchannels + c->npatterns);
    }
}

static void unknownCommand(SClient *c, int argc, sds *argv) {
    sds args = sdsEmpty();
    for (int i = 1; i < argc && sdsLen(args) < 128; i++)
        args = sdsCatPrintf(args, "'%.*s' ", (int)(128 - sdsLen(args)), argv[i]);
    c->obuf = sdsCatPrintf(c->obuf, "-ERR unknown command '%.128s', with args beginning with: %s\r\n",
                           argv[0], args);
    sdsFree(args);
}

/* CLIENT SETNAME / HELLO SETNAME: 0, or -1 after Redis's error (a name
 * has no spaces, newlines or other special characters; "" clears it). */
static int setClientName(SClient *c, const char *name) {
    for (const char *p = name; *p; p++)
        if (*p < '!' || *p > '~') {
            addError(c, "ERR Client names cannot contain spaces, newlines or special characters.");
            return -1;
        }
    sdsFree(c->name);
    c->name = name[0] ? sdsNew(name) : NULL;
    return 0;
}

/* One CLIENT LIST / CLIENT INFO line (Redis's fields; the memory ones are
 * this sentinel's buffers). */
static sds clientLine(sds out, SClient *c, long long now) {
    char flags[8];
    int nf = 0;
    if (c->nchannels + c->npatterns) flags[nf++] = 'P';
    if (c->closeAfterReply) flags[nf++] = 'c';
    if (c->noEvict) flags[nf++] = 'e';
    if (!nf) flags[nf++] = 'N';
    flags[nf] = '\0';
    return sdsCatPrintf(out,
                        "id=%llu addr=%s laddr=%s fd=%d name=%s age=%lld idle=%lld flags=%s db=0 sub=%d psub=%d "
                        "ssub=0 multi=-1 qbuf=%zu qbuf-free=%zu argv-mem=0 multi-mem=0 rbs=16384 rbp=16384 "
                        "obl=%zu oll=0 omem=0 tot-mem=%zu events=r cmd=%s user=%s redir=-1 resp=%d\n",
                        c->id, c->addr, c->laddr, connFd(c->conn), c->name ? c->name : "", (now - c->ctime) / 1000,
                        (now - c->lastInteraction) / 1000, flags, c->nchannels, c->npatterns, sdsLen(c->qbuf),
                        sdsAvail(c->qbuf), sdsLen(c->obuf), sdsCap(c->qbuf) + sdsCap(c->obuf) + sizeof(*c), c->lastCmd[0] ? c->lastCmd : "NULL",
                        sentinelAclUserName(c->acl), c->resp);
}

/* CLIENT KILL's filter (Redis 7.0's options). */
typedef struct KillFilter {
    unsigned long long id;
    int type; /* -1 any, 0 normal, 1 pubsub, 2 master/replica: none here */
    const char *addr, *laddr;
    const struct AclUser *user; /* NULL: any */
    int skipme;
} KillFilter;

/* The CLIENT type named s: 0 normal, 1 pubsub, 2 master or replica (a
 * sentinel has none of those), -1 unknown. */
static int clientTypeByName(const char *s) {
    if (!strcasecmp(s, "normal")) return 0;
    if (!strcasecmp(s, "pubsub")) return 1;
    if (!strcasecmp(s, "master") || !strcasecmp(s, "replica") || !strcasecmp(s, "slave")) return 2;
    return -1;
}

static int clientTypeOf(const SClient *c) { return c->nchannels + c->npatterns ? 1 : 0; }

static SClient *clientById(unsigned long long id) {
    for (SClient *o = clients; o; o = o->next)
        if (o->id == id) return o;
    return NULL;
}

static void trackingOff(SClient *c) {
    for (int i = 0; i < c->nprefixes; i++)
        sdsFree(c->prefixes[i]);
    xfree(c->prefixes);
    c->prefixes = NULL;
    c->nprefixes = 0;
    c->tracking = 0;
    c->trk = 0;
    c->redirect = 0;
}

static int prefixesOverlap(const char *a, const char *b) {
    size_t la = strlen(a), lb = strlen(b);
    return memcmp(a, b, la < lb ? la : lb) == 0;
}

static void addPrefix(SClient *c, const char *p) {
    int i = 0;
    while (i < c->nprefixes && strcmp(c->prefixes[i], p) < 0)
        i++;
    if (i < c->nprefixes && !strcmp(c->prefixes[i], p)) return;
    c->prefixes = xrealloc(c->prefixes, sizeof(sds) * (size_t)(c->nprefixes + 1));
    memmove(c->prefixes + i + 1, c->prefixes + i, sizeof(sds) * (size_t)(c->nprefixes - i));
    c->prefixes[i] = sdsNew(p);
    c->nprefixes++;
}

/* CLIENT TRACKING ON|OFF [REDIRECT id] [BCAST] [PREFIX p ...] [OPTIN]
 * [OPTOUT] [NOLOOP]: Redis 7.0's checks, in its order and texts. */
static void clientTracking(SClient *c, int argc, sds *argv) {
    long long redirect = 0;
    unsigned opts = 0;
    int npfx = 0;
    const char **pfx = xcalloc(sizeof(char *) * (size_t)argc);
    for (int j = 3; j < argc; j++) {
        int more = argc - 1 - j;
        const char *a = argv[j];
        if (!strcasecmp(a, "redirect") && more) {
            j++;
            if (redirect != 0) {
                addError(c, "ERR A client can only redirect to a single other client");
                goto done;
            }
            if (sentinelParseLL(argv[j], &redirect)) {
                addError(c, "ERR value is not an integer or out of range");
                goto done;
            }
            if (redirect <= 0 || !clientById((unsigned long long)redirect)) {
                addError(c, "ERR The client ID you want redirect to does not exist");
                goto done;
            }
        } else if (!strcasecmp(a, "bcast")) {
            opts |= TRK_BCAST;
        } else if (!strcasecmp(a, "optin")) {
            opts |= TRK_OPTIN;
        } else if (!strcasecmp(a, "optout")) {
            opts |= TRK_OPTOUT;
        } else if (!strcasecmp(a, "noloop")) {
            opts |= TRK_NOLOOP;
        } else if (!strcasecmp(a, "prefix") && more) {
            pfx[npfx++] = argv[++j];
        } else {
            addError(c, "ERR syntax error");
            goto done;
        }
    }
    if (!strcasecmp(argv[2], "on")) {
        if (!(opts & TRK_BCAST) && npfx) {
            addError(c, "ERR PREFIX option requires BCAST mode to be enabled");
            goto done;
        }
        if (c->tracking && !!(c->trk & TRK_BCAST) != !!(opts & TRK_BCAST)) {
            addError(c, "ERR You can't switch BCAST mode on/off before disabling tracking for this client, and "
                        "then re-enabling it with a different mode.");
            goto done;
        }
        if ((opts & TRK_BCAST) && (opts & (TRK_OPTIN | TRK_OPTOUT))) {
            addError(c, "ERR OPTIN and OPTOUT are not compatible with BCAST");
            goto done;
        }
        if ((opts & TRK_OPTIN) && (opts & TRK_OPTOUT)) {
            addError(c, "ERR You can't specify both OPTIN mode and OPTOUT mode");
            goto done;
        }
        if (((opts & TRK_OPTIN) && (c->trk & TRK_OPTOUT)) || ((opts & TRK_OPTOUT) && (c->trk & TRK_OPTIN))) {
            addError(c, "ERR You can't switch OPTIN/OPTOUT mode before disabling tracking for this client, and "
                        "then re-enabling it with a different mode.");
            goto done;
        }
        if (opts & TRK_BCAST) {
            /* Redis's check, with its quirk: an overlap between two given
             * prefixes found past the first one replies the error, still
             * enables tracking and replies OK as well */
            int proceed = 1;
            for (int i = 0; i < npfx && proceed == 1; i++) {
                for (int k = 0; k < c->nprefixes; k++)
                    if (prefixesOverlap(c->prefixes[k], pfx[i])) {
                        c->obuf = sdsCatPrintf(c->obuf,
                                               "-ERR Prefix '%s' overlaps with an existing prefix '%s'. Prefixes "
                                               "for a single client must not overlap.\r\n",
                                               pfx[i], c->prefixes[k]);
                        goto done;
                    }
                for (int k = i + 1; k < npfx; k++)
                    if (prefixesOverlap(pfx[i], pfx[k])) {
                        c->obuf = sdsCatPrintf(c->obuf,
                                               "-ERR Prefix '%s' overlaps with another provided prefix '%s'. "
                                               "Prefixes for a single client must not overlap.\r\n",
                                               pfx[i], pfx[k]);
                        if (i == 0) goto done;
                        proceed = 2;
                        break;
                    }
            }
            c->tracking = 1;
            c->trk = (c->trk & TRK_CACHING) | TRK_BCAST | (opts & TRK_NOLOOP);
            c->redirect = (unsigned long long)redirect;
            if (npfx == 0) addPrefix(c, "");
            for (int i = 0; i < npfx; i++)
                addPrefix(c, pfx[i]);
            addStatus(c, "OK"); /* after the error too, as Redis 7.0 (two replies) */
            goto done;
        }
        c->tracking = 1;
        c->trk = (c->trk & TRK_CACHING) | (opts & (TRK_OPTIN | TRK_OPTOUT | TRK_NOLOOP));
        c->redirect = (unsigned long long)redirect;
    } else if (!strcasecmp(argv[2], "off")) {
        trackingOff(c);
    } else {
        addError(c, "ERR syntax error");
        goto done;
    }
    addStatus(c, "OK");
done:
    xfree(pfx);
}

/* CLIENT ID|GETNAME|SETNAME|INFO|LIST|KILL: 0, or -1 when c was freed. */
static int clientCommand(SClient *c, int argc, sds *argv) {
    if (argc < 2) {
        wrongArity(c, "client");
        return 0;
    }
    const char *sub = argv[1];
    long long now = mstime();
    if (!strcasecmp(sub, "help") && argc == 2) {
        static const char *help[] = {
            "GETNAME",
            "    The name of this connection.",
            "ID",
            "    The id of this connection.",
            "INFO",
            "    One CLIENT LIST line about this connection.",
            "KILL <ip:port>",
            "    Close the connection from <ip:port>.",
            "KILL <filter> <value> [<filter> <value> ...]",
            "    Close every connection matching all the filters:",
            "    * ID <client-id>",
            "    * ADDR <ip:port> (remote end)",
            "    * LADDR <ip:port> (local end)",
            "    * TYPE NORMAL|MASTER|REPLICA|PUBSUB",
            "    * USER <username>",
            "    * SKIPME YES|NO (whether to spare this connection; default YES)",
            "LIST [TYPE NORMAL|MASTER|REPLICA|PUBSUB | ID <client-id> [<client-id> ...]]",
            "    One line per connection, optionally filtered.",
            "SETNAME <name>",
            "    Name this connection (an empty name clears it).",
            "NO-EVICT ON|OFF",
            "    Mark this connection as one not to evict, or not (shown as flag e).",
            "REPLY ON|OFF|SKIP",
            "    Send replies, stop sending them, or skip the reply to the next command.",
            "PAUSE <timeout> [WRITE|ALL]",
            "    Hold every command (ALL) or PUBLISH (WRITE) of every client for <timeout> ms.",
            "UNPAUSE",
            "    End the current CLIENT PAUSE and run the held commands.",
            "TRACKING ON|OFF [REDIRECT <id>] [BCAST] [PREFIX <prefix> [...]] [OPTIN] [OPTOUT] [NOLOOP]",
            "    Turn client-side caching tracking on or off (a sentinel has no keys to invalidate).",
            "CACHING YES|NO",
            "    In OPTIN/OPTOUT tracking, whether the next command's keys are tracked.",
            "GETREDIR",
            "    The id of the client receiving this connection's invalidations (0: none, -1: not tracking).",
            "TRACKINGINFO",
            "    This connection's tracking mode, redirection and prefixes.",
            "UNBLOCK <clientid> [TIMEOUT|ERROR]",
            "    Unblock a blocked client: none ever is in Sentinel mode (0).",
            NULL};
        addHelp(c, "CLIENT", help);
        return 0;
    }
    if (!strcasecmp(sub, "id") && argc == 2) {
        addLL(c, (long long)c->id);
    } else if (!strcasecmp(sub, "getname") && argc == 2) {
        if (c->name)
            addBulkLen(c, c->name, sdsLen(c->name));
        else
            addNull(c);
    } else if (!strcasecmp(sub, "setname") && argc == 3) {
        if (setClientName(c, argv[2]) == 0) addStatus(c, "OK");
    } else if (!strcasecmp(sub, "info") && argc == 2) {
        sds line = clientLine(sdsEmpty(), c, now);
        addBulkLen(c, line, sdsLen(line));
        sdsFree(line);
    } else if (!strcasecmp(sub, "list")) {
        int type = -1;
        unsigned long long *ids = NULL;
        long nids = 0;
        if (argc == 4 && !strcasecmp(argv[2], "type")) {
            if ((type = clientTypeByName(argv[3])) < 0) {
                c->obuf = sdsCatPrintf(c->obuf, "-ERR Unknown client type '%s'\r\n", argv[3]);
                return 0;
            }
        } else if (argc > 3 && !strcasecmp(argv[2], "id")) {
            ids = xmalloc(sizeof(*ids) * (size_t)(argc - 3));
            for (int i = 3; i < argc; i++) {
                long long v;
                if (sentinelParseLL(argv[i], &v) || v <= 0) {
                    xfree(ids);
                    addError(c, "ERR Invalid client ID");
                    return 0;
                }
                ids[nids++] = (unsigned long long)v;
            }
        } else if (argc != 2) {
            addError(c, "ERR syntax error");
            return 0;
        }
        sds out = sdsEmpty();
        for (SClient *o = clients; o; o = o->next) {
            if (type >= 0 && clientTypeOf(o) != type) continue;
            if (ids) {
                int hit = 0;
                for (long i = 0; i < nids && !hit; i++)
                    hit = ids[i] == o->id;
                if (!hit) continue;
            }
            out = clientLine(out, o, now);
        }
        xfree(ids);
        addBulkLen(c, out, sdsLen(out));
        sdsFree(out);
    } else if (!strcasecmp(sub, "kill") && argc >= 3) {
        KillFilter f = {.type = -1, .skipme = 1};
        int oldForm = argc == 3;
        if (oldForm) {
            f.addr = argv[2];
            f.skipme = 0;
        } else if (argc % 2) {
            addError(c, "ERR syntax error");
            return 0;
        } else {
            for (int i = 2; i < argc; i += 2) {
                const char *o = argv[i], *v = argv[i + 1];
                long long ll;
                if (!strcasecmp(o, "id")) {
                    if (sentinelParseLL(v, &ll) || ll <= 0) {
                        addError(c, "ERR client-id should be greater than 0");
                        return 0;
                    }
                    f.id = (unsigned long long)ll;
                } else if (!strcasecmp(o, "type")) {
                    if ((f.type = clientTypeByName(v)) < 0) {
                        c->obuf = sdsCatPrintf(c->obuf, "-ERR Unknown client type '%s'\r\n", v);
                        return 0;
                    }
                } else if (!strcasecmp(o, "addr")) {
                    f.addr = v;
                } else if (!strcasecmp(o, "laddr")) {
                    f.laddr = v;
                } else if (!strcasecmp(o, "user")) {
                    f.user = sentinelAclUserByName(v, sdsLen(argv[i + 1]));
                    if (!f.user) {
                        c->obuf = sdsCatPrintf(c->obuf, "-ERR No such user '%s'\r\n", v);
                        return 0;
                    }
                } else if (!strcasecmp(o, "skipme")) {
                    if (!strcasecmp(v, "yes"))
                        f.skipme = 1;
                    else if (!strcasecmp(v, "no"))
                        f.skipme = 0;
                    else {
                        addError(c, "ERR syntax error");
                        return 0;
                    }
                } else {
                    addError(c, "ERR syntax error");
                    return 0;
                }
            }
        }
        long killed = 0;
        int self = 0;
        SClient *o = clients;
        while (o) {
            SClient *next = o->next;
            int match = (!f.id || o->id == f.id) && (f.type < 0 || clientTypeOf(o) == f.type) &&
                        (!f.addr || !strcmp(o->addr, f.addr)) && (!f.laddr || !strcmp(o->laddr, f.laddr)) &&
                        (!f.user || sentinelAclHasUser(o->acl, f.user)) && !(f.skipme && o == c);
            if (match) {
                killed++;
                if (o == c)
                    self = 1;
                else
                    sclientFree(o);
            }
            o = next;
        }
        if (oldForm) {
            if (killed)
                addStatus(c, "OK");
            else
                addError(c, "ERR No such client");
        } else {
            addLL(c, killed);
        }
        if (self) c->closeAfterReply = 1;
    } else if (!strcasecmp(sub, "reply") && argc == 3) {
        if (!strcasecmp(argv[2], "on")) {
            c->replyOff = 0;
            addStatus(c, "OK");
        } else if (!strcasecmp(argv[2], "off")) {
            c->replyOff = 1;
        } else if (!strcasecmp(argv[2], "skip")) {
            if (!c->replyOff) c->skipNext = c->skipThis = 1;
        } else {
            addError(c, "ERR syntax error");
        }
    } else if (!strcasecmp(sub, "no-evict") && argc == 3) {
        if (!strcasecmp(argv[2], "on") || !strcasecmp(argv[2], "off")) {
            c->noEvict = !strcasecmp(argv[2], "on");
            addStatus(c, "OK");
        } else {
            addError(c, "ERR syntax error");
        }
    } else if (!strcasecmp(sub, "pause") && (argc == 3 || argc == 4)) {
        long long ms;
        if (sentinelParseLL(argv[2], &ms)) {
            addError(c, "ERR timeout is not an integer or out of range");
        } else if (ms < 0) {
            addError(c, "ERR timeout is negative");
        } else if (argc == 4 && strcasecmp(argv[3], "write") && strcasecmp(argv[3], "all")) {
            addError(c, "ERR CLIENT PAUSE mode must be WRITE or ALL");
        } else {
            int all = argc == 3 || !strcasecmp(argv[3], "all");
            long long until = now + ms;
            /* as Redis: while a pause lasts, the later end and the stricter
             * mode win */
            int active = pauseUntil && now < pauseUntil;
            pauseAll = active ? (pauseAll || all) : all;
            pauseUntil = active && pauseUntil > until ? pauseUntil : until;
            addStatus(c, "OK");
        }
    } else if (!strcasecmp(sub, "pause") && argc > 4) {
        c->obuf = sdsCatPrintf(c->obuf,
                               "-ERR unknown subcommand or wrong number of arguments for '%.128s'. Try CLIENT "
                               "HELP.\r\n",
                               sub);
    } else if (!strcasecmp(sub, "unpause") && argc == 2) {
        if (pauseUntil) pauseUntil = now; /* the timer resumes the waiting clients */
        addStatus(c, "OK");
    } else if (!strcasecmp(sub, "tracking") && argc >= 3) {
        clientTracking(c, argc, argv);
    } else if (!strcasecmp(sub, "caching") && argc == 3) {
        if (!c->tracking) {
            addError(c, "ERR CLIENT CACHING can be called only when the client is in tracking mode with OPTIN or "
                        "OPTOUT mode enabled");
        } else if (!strcasecmp(argv[2], "yes") && !(c->trk & TRK_OPTIN)) {
            addError(c, "ERR CLIENT CACHING YES is only valid when tracking is enabled in OPTIN mode.");
        } else if (!strcasecmp(argv[2], "no") && !(c->trk & TRK_OPTOUT)) {
            addError(c, "ERR CLIENT CACHING NO is only valid when tracking is enabled in OPTOUT mode.");
        } else if (strcasecmp(argv[2], "yes") && strcasecmp(argv[2], "no")) {
            addError(c, "ERR syntax error");
        } else {
            c->trk |= TRK_CACHING;
            addStatus(c, "OK");
        }
    } else if (!strcasecmp(sub, "getredir") && argc == 2) {
        addLL(c, c->tracking ? (long long)c->redirect : -1);
    } else if (!strcasecmp(sub, "trackinginfo") && argc == 2) {
        static const struct {
            unsigned bit;
            const char *name;
        } names[] = {{TRK_BCAST, "bcast"}, {TRK_OPTIN, "optin"}, {TRK_OPTOUT, "optout"}, {TRK_NOLOOP, "noloop"}};
        const char *fl[8];
        int nf = 0;
        fl[nf++] = c->tracking ? "on" : "off";
        for (size_t i = 0; c->tracking && i < sizeof(names) / sizeof(names[0]); i++) {
            if (!(c->trk & names[i].bit)) continue;
            fl[nf++] = names[i].name;
            if ((c->trk & TRK_CACHING) && names[i].bit == TRK_OPTIN) fl[nf++] = "caching-yes";
            if ((c->trk & TRK_CACHING) && names[i].bit == TRK_OPTOUT) fl[nf++] = "caching-no";
        }
        addMap(c, 3);
        addBulk(c, "flags");
        c->obuf = sdsCatPrintf(c->obuf, "%c%d\r\n", c->resp == 3 ? '~' : '*', nf);
        for (int i = 0; i < nf; i++)
            addBulk(c, fl[i]);
        addBulk(c, "redirect");
        addLL(c, c->tracking ? (long long)c->redirect : -1);
        addBulk(c, "prefixes");
        addArray(c, c->nprefixes);
        for (int i = 0; i < c->nprefixes; i++)
            addBulk(c, c->prefixes[i]);
    } else if (!strcasecmp(sub, "unblock") && (argc == 3 || argc == 4)) {
        long long id;
        if (sentinelParseLL(argv[2], &id)) {
            addError(c, "ERR value is not an integer or out of range");
        } else if (argc == 4 && strcasecmp(argv[3], "timeout") && strcasecmp(argv[3], "error")) {
            addError(c, "ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR");
        } else {
            addLL(c, 0); /* no client is ever blocked in Sentinel mode */
        }
    } else if (!strcasecmp(sub, "unblock") && argc > 4) {
        /* Redis's generic answer for the extra argument */
        c->obuf = sdsCatPrintf(c->obuf,
                               "-ERR unknown subcommand or wrong number of arguments for '%.128s'. Try CLIENT "
                               "HELP.\r\n",
                               sub);
    } else if (!strcasecmp(sub, "id") || !strcasecmp(sub, "getname") || !strcasecmp(sub, "setname") ||
               !strcasecmp(sub, "info") || !strcasecmp(sub, "kill") || !strcasecmp(sub, "help") ||
               !strcasecmp(sub, "reply") || !strcasecmp(sub, "no-evict") || !strcasecmp(sub, "getredir") ||
               !strcasecmp(sub, "trackinginfo") || !strcasecmp(sub, "unblock") || !strcasecmp(sub, "pause") ||
               !strcasecmp(sub, "unpause") || !strcasecmp(sub, "tracking") || !strcasecmp(sub, "caching")) {
        char nm[32];
        snprintf(nm, sizeof(nm), "client|%s", sub);
        for (char *q = nm; *q; q++)
            *q = (char)tolower((unsigned char)*q);
        wrongArity(c, nm);
    } else {
        /* the subcommands not built in Sentinel mode (tracking, pause, ...)
         * answer as unknown ones */
        c->obuf = sdsCatPrintf(c->obuf, "-ERR unknown subcommand '%.128s'. Try CLIENT HELP.\r\n", sub);
    }
    return 0;
}

/* Runs one command of c.  0, or -1 when c was freed. */
static int processCommandOf(SClient *c, int argc, sds *argv) {
    const char *cmd = argv[0];
    sentinel.commandsProcessed++;
    c->lastInteraction = mstime();
    snprintf(c->lastCmd, sizeof(c->lastCmd), "%s", cmd);
    for (char *q = c->lastCmd; *q; q++)
        *q = (char)tolower((unsigned char)*q);
    if (argc >= 2 && (!strcasecmp(cmd, "sentinel") || !strcasecmp(cmd, "client") || !strcasecmp(cmd, "command") ||
                      !strcasecmp(cmd, "acl"))) {
        size_t l = strlen(c->lastCmd);
        snprintf(c->lastCmd + l, sizeof(c->lastCmd) - l, "|%s", argv[1]);
        for (char *q = c->lastCmd + l; *q; q++)
            *q = (char)tolower((unsigned char)*q);
    }
    if (!strcasecmp(cmd, "auth")) {
        if (argc < 2) {
            wrongArity(c, "auth");
        } else if (argc > 3) {
            addError(c, "ERR syntax error");
        } else if (sentinelAclDefaultNopass() && argc == 2) {
            addError(
                c, "ERR AUTH <password> called without any password configured for the default user. Are you "
                   "sure your configuration is correct?");
        } else {
            sds user = argc == 3 ? argv[1] : sdsNew("default");
            if (sentinelAclAuth(c->acl, argc, argv, user, argv[argc - 1]) != 0)
                addError(c, "WRONGPASS invalid username-password pair or user is disabled.");
            else
                addStatus(c, "OK");
            if (argc == 2) sdsFree(user);
        }
        return 0;
    }
    if (!strcasecmp(cmd, "hello")) {
        long long proto = 0;
        const char *setname = NULL;
        if (argc >= 2 && sentinelParseLL(argv[1], &proto)) {
            addError(c, "ERR Protocol version is not an integer or out of range");
            return 0;
        }
        if (argc >= 2 && (proto < 2 || proto > 3)) {
            addError(c, "NOPROTO unsupported protocol version");
            return 0;
        }
        sds authUser = NULL, authPass = NULL;
        for (int i = 2; i < argc; i++) {
            if (!strcasecmp(argv[i], "auth") && i + 2 < argc) {
                authUser = argv[i + 1];
                authPass = argv[i + 2];
                i += 2;
            } else if (!strcasecmp(argv[i], "setname") && i + 1 < argc) {
                setname = argv[++i];
            } else {
                c->obuf = sdsCatPrintf(c->obuf, "-ERR Syntax error in HELLO option '%s'\r\n", argv[i]);
                return 0;
            }
        }
        if (authUser && sentinelAclAuth(c->acl, argc, argv, authUser, authPass) != 0) {
            addError(c, "WRONGPASS invalid username-password pair or user is disabled.");
            return 0;
        }
        if (sentinelAclAuthRequired(c->acl)) {
            addError(
                c, "NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO "
                   "AUTH <user> <pass> option can be used to authenticate the client and select the "
                   "RESP protocol version at the same time");
            return 0;
        }
        if (setname && setClientName(c, setname) != 0) return 0;
        if (proto) c->resp = (int)proto;
        /* Sentinel mode's HELLO has no "role" (Redis: 6 fields) */
        addMap(c, 6);
        addBulk(c, "server");
        addBulk(c, "redis");
        addBulk(c, "version");
        addBulk(c, REDIS_COMPAT_VERSION);
        addBulk(c, "proto");
        addLL(c, c->resp);
        addBulk(c, "id");
        addLL(c, (long long)c->id);
        addBulk(c, "mode");
        addBulk(c, "sentinel");
        addBulk(c, "modules");
        addArray(c, 0);
        return 0;
    }
    if (sentinelAclAuthRequired(c->acl)) {
        addError(c, "NOAUTH Authentication required.");
        return 0;
    }
    /* unknown commands first (Redis checks the name before the context) */
    static const char *known[] = {"ping",    "sentinel", "info",  "role",     "subscribe", "psubscribe",
                                  "unsubscribe", "punsubscribe", "publish", "client", "shutdown", "quit",
                                  "command", "acl", NULL};
    int isKnown = 0;
    for (int i = 0; known[i] && !isKnown; i++)
        isKnown = !strcasecmp(cmd, known[i]);
    if (!isKnown) {
        unknownCommand(c, argc, argv);
        return 0;
    }
    /* the user's permissions (Redis checks them before the context) */
    if (strcasecmp(cmd, "quit") && sentinelAclCheck(c->acl, c->resp, argc, argv, &c->obuf) != 0) return 0;
    /* RESP2 only: a subscribed RESP3 client runs any command (Redis) */
    int subscribed = c->nchannels + c->npatterns > 0 && c->resp == 2;
    if (subscribed && strcasecmp(cmd, "subscribe") && strcasecmp(cmd, "psubscribe") &&
        strcasecmp(cmd, "unsubscribe") && strcasecmp(cmd, "punsubscribe") && strcasecmp(cmd, "ping") &&
        strcasecmp(cmd, "quit") && strcasecmp(cmd, "reset")) {
        c->obuf = sdsCatPrintf(
            c->obuf,
            "-ERR Can't execute '%s': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET "
            "are allowed in this context\r\n",
            c->lastCmd); /* Redis names the command in lower case (and CLIENT's as client|sub) */
        return 0;
    }
    if (!strcasecmp(cmd, "ping")) {
        if (argc > 2)
            wrongArity(c, "ping");
        else if (subscribed) {
            addArray(c, 2);
            addBulk(c, "pong");
            addBulk(c, argc == 2 ? argv[1] : "");
        } else if (argc == 2)
            addBulkLen(c, argv[1], sdsLen(argv[1]));
        else
            addStatus(c, "PONG");
    } else if (!strcasecmp(cmd, "sentinel")) {
        sentinelCommand(c, argc, argv);
    } else if (!strcasecmp(cmd, "info")) {
        infoCommand(c, argc, argv);
    } else if (!strcasecmp(cmd, "role")) {
        if (argc != 1) {
            wrongArity(c, "role");
            return 0;
        }
        addArray(c, 2);
        addBulk(c, "sentinel");
        addArray(c, sentinel.nmasters);
        for (int i = 0; i < sentinel.nmasters; i++)
            addBulk(c, sentinel.masters[i]->name);
    } else if (!strcasecmp(cmd, "subscribe") || !strcasecmp(cmd, "psubscribe")) {
        if (argc < 2)
            wrongArity(c, strcasecmp(cmd, "subscribe") ? "psubscribe" : "subscribe");
        else
            subscribeCommand(c, argc, argv, !strcasecmp(cmd, "psubscribe"));
    } else if (!strcasecmp(cmd, "unsubscribe") || !strcasecmp(cmd, "punsubscribe")) {
        unsubscribeCommand(c, argc, argv, !strcasecmp(cmd, "punsubscribe"));
    } else if (!strcasecmp(cmd, "publish")) {
        if (argc != 3)
            wrongArity(c, "publish");
        else if (strcmp(argv[1], "__sentinel__:hello"))
            addError(c, "ERR Only HELLO messages are accepted by Sentinel instances.");
        else {
            sentinelProcessHello(argv[2], sdsLen(argv[2]));
            addLL(c, 1);
        }
    } else if (!strcasecmp(cmd, "client")) {
        if (clientCommand(c, argc, argv) < 0) return -1;
    } else if (!strcasecmp(cmd, "command")) {
        if (argc == 2 && !strcasecmp(argv[1], "help")) {
            static const char *help[] = {
                "(no subcommand)",
                "    Every command's details.",
                "COUNT",
                "    The number of commands.",
                "DOCS [<command-name> ...]",
                "    The documentation of the commands named, or of all.",
                "GETKEYS <full-command>",
                "    The key names in a command line (Sentinel's commands have none).",
                "GETKEYSANDFLAGS <full-command>",
                "    The key names and their flags in a command line.",
                "INFO [<command-name> ...]",
                "    The details of the commands named, or of all.",
                "LIST [FILTERBY (MODULE <module-name>|ACLCAT <category>|PATTERN <pattern>)]",
                "    The command names, optionally filtered.",
                NULL};
            addHelp(c, "COMMAND", help);
        } else {
            c->obuf = sentinelCommandCommand(c->obuf, c->resp, argc, argv);
        }
    } else if (!strcasecmp(cmd, "acl")) {
        c->obuf = sentinelAclCommand(c->acl, c->resp, argc, argv, c->obuf);
    } else if (!strcasecmp(cmd, "shutdown")) {
        sentinelShutdown();
    } else if (!strcasecmp(cmd, "quit")) {
        addStatus(c, "OK");
        c->closeAfterReply = 1;
    } else {
        unknownCommand(c, argc, argv);
    }
    return 0;
}

/* Splits an inline command line into c->argv form. */
static sds *inlineArgs(const char *line, size_t len, int *argc) {
    sds tmp = sdsNewLen(line, len);
    sds *argv = sdsSplitArgs(tmp, argc);
    sdsFree(tmp);
    return argv;
}


static int pausedFor(const char *cmd) {
    if (!pauseUntil) return 0;
    if (mstime() >= pauseUntil) {
        pauseUntil = 0;
        return 0;
    }
    return pauseAll || !strcasecmp(cmd, "publish");
}

static void processInput(SClient *c);

static void sclientReadable(EventLoop *el, int fd, void *data, int mask) {
    SClient *c = data;
    char buf[16384];
    long n = connRead(c->conn, buf, sizeof(buf));
    sstats.reads++;
    if (n > 0) sstats.netInput += n;
    if (n == 0 || (n < 0 && errno != EAGAIN)) {
        sclientFree(c);
        return;
    }
    if (n < 0) return;
    c->qbuf = sdsCatLen(c->qbuf, buf, (size_t)n);
    processInput(c);
}

void sentinelClientsResume(void) {
    if (!pauseUntil || mstime() < pauseUntil) return;
    pauseUntil = 0;
    SClient *c = clients;
    while (c) {
        SClient *next = c->next;
        if (sdsLen(c->qbuf)) processInput(c);
        c = next;
    }
}

/* Runs the complete commands in c's input (up to one that must wait for
 * CLIENT PAUSE), then writes the replies; c may be freed. */
static void processInput(SClient *c) {
    size_t off = 0;
    while (off < sdsLen(c->qbuf) && !c->closeAfterReply) {
        size_t cmdStart = off;
        const char *p = c->qbuf + off;
        size_t left = sdsLen(c->qbuf) - off;
        int argc = 0;
        sds *argv = NULL;
        if (p[0] == '*') {
            RVal *v;
            long r = rvParse(p, left, &v);
            if (r == 0) break;
            if (r < 0 || v->type != '*') {
                rvFree(v);
                addError(c, "ERR Protocol error: invalid multibulk length");
                c->closeAfterReply = 1;
                break;
            }
            off += (size_t)r;
            argv = xcalloc(sizeof(sds) * (size_t)(v->n ? v->n : 1));
            for (long i = 0; i < v->n; i++) {
                RVal *e = v->elem[i];
                argv[argc++] = e->str ? sdsNewLen(e->str, e->len) : sdsEmpty();
            }
            rvFree(v);
        } else {
            const char *nl = memchr(p, '\n', left);
            if (!nl) {
                if (left > 65536) {
                    addError(c, "ERR Protocol error: too big inline request");
                    c->closeAfterReply = 1;
                }
                break;
            }
            size_t ll = (size_t)(nl - p);
            off += ll + 1;
            if (ll && p[ll - 1] == '\r') ll--;
            argv = inlineArgs(p, ll, &argc);
            if (!argv) {
                addError(c, "ERR Protocol error: unbalanced quotes in request");
                c->closeAfterReply = 1;
                break;
            }
        }
        if (argc > 0 && pausedFor(argv[0])) {
            /* left in the input: run when the pause ends */
            off = cmdStart;
            for (int i = 0; i < argc; i++)
                sdsFree(argv[i]);
            xfree(argv);
            break;
        }
        if (argc > 0) {
            size_t before = sdsLen(c->obuf);
            c->skipThis = c->skipNext;
            c->skipNext = 0;
            processCommandOf(c, argc, argv);
            if (sdsLen(c->obuf) > before && c->obuf[before] == '-') sstats.errorReplies++;
            if (c->replyOff || c->skipThis) sdsSetLen(c->obuf, before); /* CLIENT REPLY OFF|SKIP */
            /* CLIENT CACHING applies to the next command only (CLIENT's own
             * subcommands do not use it up) */
            if ((c->trk & TRK_CACHING) && strcasecmp(argv[0], "client")) c->trk &= ~TRK_CACHING;
        }
        for (int i = 0; i < argc; i++)
            sdsFree(argv[i]);
        xfree(argv);
    }
    sdsRange(c->qbuf, (ssize_t)off, -1);
    sclientFlush(c);
}

static void acceptHandler(EventLoop *el, int fd, void *data, int mask) {
    Listener *l = data;
    for (int i = 0; i < 100; i++) {
        char peer[128];
        Connection *conn = connAccept(l, fd, peer, sizeof(peer));
        if (!conn) return;
        sentinel.clientsReceived++;
        if (sentinel.protectedMode && sentinel.nbind == 0 && sentinelAclDefaultNopass() && !connIsLoopback(conn)) {
            sstats.rejected++;
            connWrite(conn, ERR_DENIED_PROTECTED, strlen(ERR_DENIED_PROTECTED));
            connClose(conn);
            continue;
        }
        SClient *c = xcalloc(sizeof(*c));
        c->conn = conn;
        c->acl = sentinelAclClientCreate();
        c->qbuf = sdsEmpty();
        c->obuf = sdsEmpty();
        c->resp = 2;
        c->id = sentinel.clientsReceived;
        c->ctime = c->lastInteraction = mstime();
        snprintf(c->addr, sizeof(c->addr), "%s", peer);
        if (connLocalAddr(conn, c->laddr, sizeof(c->laddr)) != 0) c->laddr[0] = '\0';
        c->next = clients;
        clients = c;
        sentinel.nclients++;
        connSetNoDelay(conn, 1);
        connEventAdd(conn, EV_READABLE, sclientReadable, c);
    }
}

sds sentinelClientInfoOf(sds out, const struct Client *ac) {
    for (SClient *c = clients; c; c = c->next) {
        if (c->acl != ac) continue;
        out = clientLine(out, c, mstime());
        if (sdsLen(out) && out[sdsLen(out) - 1] == '\n') sdsSetLen(out, sdsLen(out) - 1);
        return out;
    }
    return out;
}

void sentinelClientsCloseUser(struct AclUser *u, struct Client *current) {
    SClient *c = clients;
    while (c) {
        SClient *next = c->next;
        if (sentinelAclHasUser(c->acl, u)) {
            sentinelAclDeauth(c->acl);
            if (c->acl == current) c->closeAfterReply = 1;
            else sclientFree(c);
        }
        c = next;
    }
}

void sentinelClientsCloseSubscribers(const struct AclUser *u,
                                     int (*denied)(const char *name, size_t len, int isPattern, void *arg), void *arg,
                                     struct Client *current) {
    SClient *c = clients;
    while (c) {
        SClient *next = c->next;
        int drop = 0;
        if (sentinelAclHasUser(c->acl, u)) {
            for (int i = 0; i < c->nchannels && !drop; i++)
                drop = denied(c->channels[i], sdsLen(c->channels[i]), 0, arg);
            for (int i = 0; i < c->npatterns && !drop; i++)
                drop = denied(c->patterns[i], sdsLen(c->patterns[i]), 1, arg);
        }
        if (drop) {
            if (c->acl == current) c->closeAfterReply = 1;
            else sclientFree(c);
        }
        c = next;
    }
}

void sentinelBeforeSleep(EventLoop *el) {
    SClient *c = clients;
    while (c) {
        SClient *next = c->next;
        if (sdsLen(c->obuf)) sclientFlush(c);
        c = next;
    }
}


/* Binds l on every bind address (default: all IPv4 and IPv6) at port and
 * installs it.  0, or 1 after logging Redis's message. */
static int listenOn(Listener *l, int port, const char *kind) {
    const char *defBind[2] = {"*", "::*"};
    int nb = sentinel.nbind ? sentinel.nbind : 2;
    int bound = 0;
    for (int i = 0; i < nb; i++) {
        ConnListenSpec spec = {.addr = sentinel.nbind ? sentinel.bind[i] : defBind[i], .port = port, .backlog = 511};
        if (listenerBind(l, &spec) == 0)
            bound++;
        else if (sentinel.nbind) {
            serverLog(LL_WARNING, "Warning: Could not create server %s listening socket %s:%d: %s",
                      !strcmp(kind, "tls") ? "TLS" : "TCP", spec.addr, port, strerror(errno));
            return 1;
        }
    }
    if (!bound) {
        serverLog(LL_WARNING, "Failed listening on port %d (%s), aborting.", port, kind);
        return 1;
    }
    listenerInstall(l, acceptHandler);
    return 0;
}

int sentinelListen(void) {
    /* port 0: no plain port (a tls-port only sentinel) */
    if (sentinel.port && listenOn(&sentinelListener, sentinel.port, "tcp") != 0) return 1;
    if (tlsPort()) {
        static Listener tlsListener = {
            .name = "tls", .proto = &respProtocol, .encoder = &respEncoder};
        tlsListener.type = &connTlsType;
        if (listenOn(&tlsListener, tlsPort(), "tls") != 0) return 1;
    }
    if (!sentinel.port && !tlsPort()) {
        serverLog(LL_WARNING, "Configured to not listen anywhere, exiting.");
        return 1;
    }
    return 0;
}
