/* sentinel.c -- Sentinel mode (issue 40): monitoring of primaries, their
 * replicas and the other sentinels (links, PING, INFO, hello messages),
 * subjective and objective down, events, and failover: leader election by
 * epoch, replica selection, promotion and reconfiguration
 * (failoverStateMachine); the program's entry (sentinelMain).
 *
 * Model (the names are Redis 7.0's, the protocol on the wire is theirs):
 *   - A SInst is a monitored primary ("master"), one of its replicas
 *     ("slave") or another sentinel watching it.  Each has a command link
 *     (PING every second, INFO every 10 s, PUBLISH of hello messages every
 *     2 s); a primary or replica also has a pub/sub link subscribed to
 *     __sentinel__:hello, where hello messages of other sentinels arrive.
 *   - A link is a non-blocking Connection (connConnect) with an input
 *     buffer parsed as RESP replies and a FIFO of callbacks, one per
 *     command sent; a pub/sub link has no FIFO, every message goes to the
 *     hello handler.
 *   - Clients of the sentinel and the commands they run live in
 *     sentinel_client.c; user scripts in sentinel_scripts.c; TILT, the
 *     time parameters (SENTINEL DEBUG) and failure simulation in
 *     sentinel_tilt.c; the config file in sentinel_conf.c.
 *
 * Invariants:
 *   - Every state change that Redis persists (a monitored primary added or
 *     removed, a setting, a discovered replica or sentinel, an epoch)
 *     rewrites the config file (sentinelFlushConfig), atomically.
 *   - Instances are freed only from the timer or a command, never from a
 *     link callback running on that instance's link (links hold a
 *     back-pointer; freeing marks links dead and closes them).
 *   - Times are mstime() milliseconds. */
#include "server/sentinel.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/conn.h"
#include "core/errors.h"
#include "core/event.h"
#include "core/log.h"
#include "core/server.h"
#include "ds/alloc.h"
#include "ds/glob.h"
#include "ds/rand.h"
#include "ds/sds.h"
#include "ds/util.h"
#include "proto/resp_parse.h"
#include "server/sentinel_int.h"

Sentinel sentinel;

/* ---------------------------------------------------------------------
 * RESP values (replies from instances, requests from clients)
 * ------------------------------------------------------------------- */

void rvFree(RVal *v) {
    if (!v) return;
    for (long i = 0; i < v->n; i++)
        rvFree(v->elem[i]);
    xfree(v->elem);
    xfree(v->str);
    xfree(v);
}

/* Parses one RESP2 value from buf[0..len): the bytes it took (> 0) with
 * *out set, 0 when more bytes are needed, -1 on a protocol error. */
static long rvParseDepth(const char *buf, size_t len, RVal **out, int depth) {
    *out = NULL;
    if (len == 0) return 0;
    if (depth > 8) return -1;
    const char *nl = memchr(buf, '\n', len);
    if (!nl) return len > 65536 ? -1 : 0;
    size_t lineLen = (size_t)(nl - buf);
    if (lineLen == 0 || buf[lineLen - 1] != '\r') return -1;
    size_t body = lineLen - 1; /* without type byte and CR: buf+1 .. buf+body */
    char type = buf[0];
    RVal *v = xcalloc(sizeof(*v));
    v->type = type;
    size_t used = lineLen + 1;
    if (type == '+' || type == '-') {
        v->len = body - 1;
        v->str = xmalloc(v->len + 1);
        memcpy(v->str, buf + 1, v->len);
        v->str[v->len] = '\0';
        *out = v;
        return (long)used;
    }
    char num[32];
    if (body - 1 >= sizeof(num) || body < 2) {
        xfree(v);
        return -1;
    }
    memcpy(num, buf + 1, body - 1);
    num[body - 1] = '\0';
    char *end;
    errno = 0;
    long long n = strtoll(num, &end, 10);
    if (*end || errno) {
        xfree(v);
        return -1;
    }
    if (type == ':') {
        v->ll = n;
        *out = v;
        return (long)used;
    }
    if (type == '$') {
        if (n < 0) {
            v->ll = -1; /* null bulk: str NULL */
            *out = v;
            return (long)used;
        }
        if (n > 512 * 1024 * 1024LL) {
            xfree(v);
            return -1;
        }
        if (len - used < (size_t)n + 2) {
            xfree(v);
            return 0;
        }
        v->len = (size_t)n;
        v->str = xmalloc(v->len + 1);
        memcpy(v->str, buf + used, v->len);
        v->str[v->len] = '\0';
        *out = v;
        return (long)(used + (size_t)n + 2);
    }
    if (type == '*') {
        if (n < 0) {
            v->ll = -1;
            *out = v;
            return (long)used;
        }
        if (n > 1024 * 1024) {
            xfree(v);
            return -1;
        }
        v->elem = xcalloc(sizeof(RVal *) * (size_t)(n ? n : 1));
        for (long long i = 0; i < n; i++) {
            RVal *e;
            long r = rvParseDepth(buf + used, len - used, &e, depth + 1);
            if (r <= 0) {
                rvFree(v);
                return r;
            }
            v->elem[v->n++] = e;
            used += (size_t)r;
        }
        *out = v;
        return (long)used;
    }
    xfree(v);
    return -1;
}

long rvParse(const char *buf, size_t len, RVal **out) { return rvParseDepth(buf, len, out, 0); }

/* ---------------------------------------------------------------------
 * Outgoing links
 * ------------------------------------------------------------------- */

static void linkReadable(EventLoop *loop, int fd, void *data, int mask);
static void linkWritable(EventLoop *loop, int fd, void *data, int mask);

/* Closes l's connection and drops its pending callbacks (each called with
 * a NULL reply so that it can account for the loss). */
static void linkDisconnect(SLink *l) {
    if (l->conn) connClose(l->conn);
    l->conn = NULL;
    l->connected = 0;
    sdsClear(l->rbuf);
    sdsClear(l->wbuf);
    while (l->head) {
        SReplyCb *cb = l->head;
        l->head = cb->next;
        if (cb->fn) cb->fn(l->ri, NULL, cb->priv);
        xfree(cb);
    }
    l->tail = NULL;
    l->pending = 0;
    l->disconnectedAt = mstime();
}

SLink *linkCreate(SInst *ri, int pubsub) {
    SLink *l = xcalloc(sizeof(*l));
    l->ri = ri;
    l->pubsub = pubsub;
    l->rbuf = sdsEmpty();
    l->wbuf = sdsEmpty();
    l->disconnectedAt = mstime();
    return l;
}

void linkFree(SLink *l) {
    if (!l) return;
    linkDisconnect(l);
    sdsFree(l->rbuf);
    sdsFree(l->wbuf);
    xfree(l);
}

static void linkFlush(SLink *l) {
    if (!l->conn || !l->connected || sdsLen(l->wbuf) == 0) return;
    long n = connWrite(l->conn, l->wbuf, sdsLen(l->wbuf));
    if (n < 0 && errno != EAGAIN) {
        linkDisconnect(l);
        return;
    }
    if (n > 0) sdsRange(l->wbuf, n, -1);
    if (sdsLen(l->wbuf))
        connEventAdd(l->conn, EV_WRITABLE, linkWritable, l);
    else if (connEventMask(l->conn) & EV_WRITABLE)
        connEventDel(l->conn, EV_WRITABLE);
}

/* Sends a command (argv of C strings) on l; fn gets its reply (NULL when
 * the link went down first).  0, or -1 when l is not connected. */
int linkCommand(SLink *l, SReplyFn *fn, void *priv, int argc, const char **argv) {
    if (!l->conn) return -1;
    l->wbuf = sdsCatPrintf(l->wbuf, "*%d\r\n", argc);
    for (int i = 0; i < argc; i++) {
        const char *a = i == 0 ? sentinelMapCommand(l->ri, argv[0]) : argv[i];
        size_t n = strlen(a);
        l->wbuf = sdsCatPrintf(l->wbuf, "$%zu\r\n", n);
        l->wbuf = sdsCatLen(l->wbuf, a, n);
        l->wbuf = sdsCatLen(l->wbuf, "\r\n", 2);
    }
    if (!l->pubsub || fn) {
        SReplyCb *cb = xcalloc(sizeof(*cb));
        cb->fn = fn;
        cb->priv = priv;
        if (l->tail)
            l->tail->next = cb;
        else
            l->head = cb;
        l->tail = cb;
        l->pending++;
    }
    linkFlush(l);
    return 0;
}

static void linkWritable(EventLoop *loop, int fd, void *data, int mask) {
    SLink *l = data;
    if (!l->connected) {
        int err = connCheckConnected(l->conn);
        if (err) {
            linkDisconnect(l);
            return;
        }
        l->connected = 1;
        connEventAdd(l->conn, EV_READABLE, linkReadable, l);
    }
    linkFlush(l);
}

static void linkReadable(EventLoop *loop, int fd, void *data, int mask) {
    SLink *l = data;
    char buf[16384];
    long n = connRead(l->conn, buf, sizeof(buf));
    if (n == 0 || (n < 0 && errno != EAGAIN)) {
        linkDisconnect(l);
        return;
    }
    if (n < 0) return;
    l->rbuf = sdsCatLen(l->rbuf, buf, (size_t)n);
    size_t off = 0;
    while (off < sdsLen(l->rbuf)) {
        RVal *v;
        long r = rvParse(l->rbuf + off, sdsLen(l->rbuf) - off, &v);
        if (r == 0) break;
        if (r < 0) {
            linkDisconnect(l);
            return;
        }
        off += (size_t)r;
        SInst *ri = l->ri;
        if (l->pubsub) l->lastActivity = mstime();
        if (l->pubsub && !l->head) {
            sentinelPubsubMessage(ri, v);
        } else if (l->head) {
            SReplyCb *cb = l->head;
            l->head = cb->next;
            if (!l->head) l->tail = NULL;
            l->pending--;
            if (cb->fn) cb->fn(ri, v, cb->priv);
            xfree(cb);
        }
        rvFree(v);
        if (!l->conn) return; /* a callback closed it */
    }
    sdsRange(l->rbuf, (ssize_t)off, -1);
}

/* Starts connecting l to ri's address (non-blocking). 0 or -1. */
int linkConnect(SLink *l, const char *ip, int port) {
    char ps[16];
    snprintf(ps, sizeof(ps), "%d", port);
    const char *err = NULL;
    linkDisconnect(l);
    /* tls-replication: every link (monitored servers, other sentinels)
     * is TLS, as Redis's */
    l->conn = connConnect(connTypeForReplication(), ip, ps, NULL, &err);
    if (!l->conn) return -1;
    l->connectedAt = l->lastActivity = mstime();
    connEventAdd(l->conn, EV_WRITABLE, linkWritable, l);
    return 0;
}

/* ---------------------------------------------------------------------
 * Instances and events
 * ------------------------------------------------------------------- */

int sentinelResolve(const char *host, char *ip, size_t len) {
    return connResolveHost(host, !sentinel.resolveHostnames, ip, len);
}

const char *sentinelAnnounceHost(const SInst *ri) { return sentinel.announceHostnames ? ri->host : ri->ip; }

SInst *instCreate(int flags, const char *name, const char *host, int port, SInst *master) {
    char ip[64];
    if (port < 0 || port > 65535 || sentinelResolve(host, ip, sizeof(ip)) != 0) return NULL;
    SInst *ri = xcalloc(sizeof(*ri));
    ri->flags = flags;
    ri->host = xstrdup(host);
    ri->ip = xstrdup(ip);
    char addr[160];
    /* a replica is named by its announced address, IPv6 in brackets */
    const char *ann = sentinelAnnounceHost(ri);
    snprintf(addr, sizeof(addr), strchr(ann, ':') ? "[%s]:%d" : "%s:%d", ann, port);
    ri->name = xstrdup(name ? name : addr);
    ri->port = port;
    ri->master = master;
    ri->createdAt = mstime();
    ri->lastAvail = ri->createdAt;
    ri->lastPong = ri->createdAt;
    ri->downAfter = master ? master->downAfter : stun.defaultDownAfter;
    ri->quorum = 2;
    ri->failoverTimeout = stun.defaultFailoverTimeout;
    ri->parallelSyncs = 1;
    ri->slavePriority = 100;
    ri->roleReported = flags & SRI_SLAVE ? SRI_SLAVE : SRI_MASTER;
    ri->roleReportedTime = ri->createdAt;
    ri->slaveConfChangeTime = ri->createdAt;
    ri->cc = linkCreate(ri, 0);
    if (!(flags & SRI_SENTINEL)) ri->pc = linkCreate(ri, 1);
    return ri;
}

void instFree(SInst *ri) {
    for (int i = 0; i < ri->nslaves; i++)
        instFree(ri->slaves[i]);
    for (int i = 0; i < ri->nsentinels; i++)
        instFree(ri->sentinels[i]);
    xfree(ri->slaves);
    xfree(ri->sentinels);
    linkFree(ri->cc);
    linkFree(ri->pc);
    xfree(ri->name);
    xfree(ri->ip);
    xfree(ri->host);
    xfree(ri->authPass);
    xfree(ri->authUser);
    xfree(ri->slaveMasterHost);
    xfree(ri->leader);
    xfree(ri->pendingSwitchIp);
    xfree(ri->notificationScript);
    xfree(ri->clientReconfigScript);
    for (int i = 0; i < ri->nrenames * 2; i++)
        xfree(ri->renames[i]);
    xfree(ri->renames);
    sdsFree(ri->info);
    xfree(ri);
}

const char *sentinelMapCommand(const SInst *ri, const char *cmd) {
    const SInst *m = ri->master ? ri->master : ri;
    for (int i = 0; i < m->nrenames; i++)
        if (!strcasecmp(m->renames[2 * i], cmd)) return m->renames[2 * i + 1];
    return cmd;
}

SInst *masterByName(const char *name) {
    for (int i = 0; i < sentinel.nmasters; i++)
        if (!strcmp(sentinel.masters[i]->name, name)) return sentinel.masters[i];
    return NULL;
}

SInst *slaveByAddr(SInst *m, const char *ip, int port) {
    for (int i = 0; i < m->nslaves; i++)
        if (m->slaves[i]->port == port && !strcmp(m->slaves[i]->ip, ip)) return m->slaves[i];
    return NULL;
}

static SInst *sentinelByRunid(SInst *m, const char *runid) {
    for (int i = 0; i < m->nsentinels; i++)
        if (!strcmp(m->sentinels[i]->runid, runid)) return m->sentinels[i];
    return NULL;
}

static void instAppend(SInst ***arr, int *n, SInst *ri) {
    *arr = xrealloc(*arr, sizeof(SInst *) * (size_t)(*n + 1));
    (*arr)[(*n)++] = ri;
}

void sentinelInstRemoveAt(SInst **arr, int *n, int i) {
    memmove(arr + i, arr + i + 1, sizeof(SInst *) * (size_t)(*n - i - 1));
    (*n)--;
}

static void switchMaster(SInst *m, const char *ip, int port);
SInst *sentinelSelectSlave(SInst *m, long long now);
static int sendTransaction(SInst *ri, const char *host, const char *port);

const char *sentinelInstTypeName(const SInst *ri) {
    return ri->flags & SRI_MASTER ? "master" : ri->flags & SRI_SLAVE ? "slave" : "sentinel";
}

/* Publishes an event on channel `type` to subscribed clients and logs it,
 * as Redis's sentinelEvent: with ri (fmt "%@") the message starts with
 * "<type> <name> <ip> <port>" and, for a non-master, "@ <master> <ip>
 * <port>" follows; then the rest of fmt. */

static void eventV(int level, const char *type, SInst *ri, int prefix, const char *fmt, va_list ap) {
    char msg[1024];
    size_t off = 0;
    msg[0] = '\0';
    if (ri && prefix) {
        off = (size_t)snprintf(msg, sizeof(msg), "%s %s %s %d", sentinelInstTypeName(ri), ri->name,
                               sentinelAnnounceHost(ri), ri->port);
        if (ri->master && off < sizeof(msg))
            off += (size_t)snprintf(msg + off, sizeof(msg) - off, " @ %s %s %d", ri->master->name,
                                    sentinelAnnounceHost(ri->master), ri->master->port);
    }
    if (fmt && off < sizeof(msg)) vsnprintf(msg + off, sizeof(msg) - off, fmt, ap);
    serverLog(level, "%s %s", type, msg);
    if (level == LL_DEBUG) return; /* logged only, as Redis's */
    sentinelPublish(type, msg);
    if (level == LL_WARNING && ri) {
        SInst *m = ri->flags & SRI_MASTER ? ri : ri->master;
        if (m && m->notificationScript) sentinelScheduleScript(m->notificationScript, type, msg, (const char *)NULL);
    }
}

void sentinelEvent(int level, const char *type, SInst *ri, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    eventV(level, type, ri, 1, fmt, ap);
    va_end(ap);
}

/* As sentinelEvent, but the text is fmt alone: ri only chooses the
 * notification script (Redis's events whose format has no "%@"). */
void sentinelEventAbout(int level, const char *type, SInst *ri, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    eventV(level, type, ri, 0, fmt, ap);
    va_end(ap);
}

/* ---------------------------------------------------------------------
 * Monitoring: replies from instances
 * ------------------------------------------------------------------- */

static void pingReply(SInst *ri, RVal *r, void *priv) {
    long long now = mstime();
    ri->pingSentAt = 0;
    if (!r) return;
    ri->lastPong = now;
    if (r->type == '+' ||
        (r->type == '-' && (!strncmp(r->str, "LOADING", 7) || !strncmp(r->str, "MASTERDOWN", 10)))) {
        ri->lastAvail = now;
        ri->actPing = 0;
    }
    if ((ri->flags & SRI_MASTER_REBOOT) && r->type == '+' && !strncmp(r->str, "PONG", 4))
        ri->flags &= ~SRI_MASTER_REBOOT;
}

static void ignoreReply(SInst *ri, RVal *r, void *priv) {}

/* A field of INFO text: the value after "name:" on its own line, copied
 * into out (cut at outLen - 1).  1 found, 0 not. */
static int infoField(const char *info, const char *name, char *out, size_t outLen) {
    size_t nl = strlen(name);
    const char *p = info;
    while (p && *p) {
        if (!strncmp(p, name, nl) && p[nl] == ':') {
            const char *v = p + nl + 1;
            size_t n = strcspn(v, "\r\n");
            if (n >= outLen) n = outLen - 1;
            memcpy(out, v, n);
            out[n] = '\0';
            return 1;
        }
        p = strchr(p, '\n');
        if (p) p++;
    }
    return 0;
}

/* Redis's sentinelMasterLooksSane: m is up, reports itself a primary,
 * and its INFO is fresher than two INFO periods. */
static int masterLooksSane(const SInst *m, long long now) {
    return (m->flags & SRI_MASTER) && m->roleReported == SRI_MASTER && !(m->flags & (SRI_S_DOWN | SRI_O_DOWN)) &&
           m->infoRefresh && now - m->infoRefresh < stun.infoPeriod * 2;
}

/* 1 when ri has not been subjectively or objectively down within the
 * last ms milliseconds (or never). */
static int noDownFor(const SInst *ri, long long ms, long long now) {
    long long last = ri->sdownSince > ri->odownSince ? ri->sdownSince : ri->odownSince;
    return !last || now - last > ms;
}

/* 1 when the replica ri reports (INFO master_host/master_port) the
 * address of m: its port, and a host that is m's or resolves to m's ip. */
static int slaveReplicatesFrom(const SInst *ri, const SInst *m) {
    if (ri->slaveMasterPort != m->port || !ri->slaveMasterHost) return 0;
    if (!strcasecmp(ri->slaveMasterHost, m->ip) || !strcasecmp(ri->slaveMasterHost, m->host)) return 1;
    char ip[64];
    return sentinelResolve(ri->slaveMasterHost, ip, sizeof(ip)) == 0 && !strcasecmp(ip, m->ip);
}

static void infoReply(SInst *ri, RVal *r, void *priv) {
    ri->flags &= ~SRI_INFO_PENDING;
    if (!r || r->type != '$' || !r->str) return;
    const char *info = r->str;
    long long now = mstime();
    ri->infoRefresh = now;
    sdsFree(ri->info);
    ri->info = sdsNewLen(r->str, r->len);
    char v[256];
    if (infoField(info, "run_id", v, sizeof(v)) && strlen(v) == 40) {
        if (ri->runid[0] && strcmp(ri->runid, v)) {
            sentinelEvent(LL_NOTICE, "+reboot", ri, "%s", "");
            if ((ri->flags & SRI_MASTER) && ri->rebootDownAfter) {
                ri->flags |= SRI_MASTER_REBOOT;
                ri->rebootSince = now;
            }
        }
        memcpy(ri->runid, v, 41);
    }
    int role = 0;
    if (infoField(info, "role", v, sizeof(v))) role = !strcmp(v, "master") ? SRI_MASTER : SRI_SLAVE;
    if (role && role != ri->roleReported) {
        ri->roleReported = role;
        ri->roleReportedTime = now;
        if (role == SRI_SLAVE) ri->slaveConfChangeTime = now;
    }
    if ((ri->flags & SRI_MASTER) && role == SRI_MASTER) {
        /* slaveN:ip=...,port=...,state=...,offset=...,lag=... */
        int changed = 0;
        for (int i = 0; i < 1024; i++) {
            char key[32];
            snprintf(key, sizeof(key), "slave%d", i);
            if (!infoField(info, key, v, sizeof(v))) break;
            char ip[64] = "";
            int port = 0;
            char *ipp = strstr(v, "ip="), *pp = strstr(v, "port=");
            if (!ipp || !pp) continue;
            size_t n = strcspn(ipp + 3, ",");
            if (n >= sizeof(ip)) continue;
            memcpy(ip, ipp + 3, n);
            ip[n] = '\0';
            port = atoi(pp + 5);
            if (port <= 0 || !ip[0]) continue;
            char rip[64];
            if (sentinelResolve(ip, rip, sizeof(rip)) != 0) continue;
            if (!slaveByAddr(ri, rip, port)) {
                SInst *s = instCreate(SRI_SLAVE, NULL, ip, port, ri);
                if (!s) continue;
                instAppend(&ri->slaves, &ri->nslaves, s);
                sentinelEvent(LL_NOTICE, "+slave", s, "%s", "");
                changed = 1;
            }
        }
        if (changed) sentinelFlushConfig();
    }
    /* A replica we know reporting itself a primary (an old primary back
     * after a failover): made a replica of the current primary, as
     * Redis's rule has it: not in TILT, the primary looking sane (up,
     * reporting itself a primary, its INFO fresher than two periods),
     * the replica not down within the last four publish periods and
     * reporting itself a primary for longer than that (8 s by default;
     * not the failover timeout, 3 minutes by default).  SLAVEOF goes at
     * most once per that wait. */
    long long convertWait = stun.publishPeriod * 4;
    if ((ri->flags & SRI_SLAVE) && role == SRI_MASTER && !(ri->flags & SRI_PROMOTED) && !sentinel.tilt &&
        !(ri->master->flags & SRI_FAILOVER_IN_PROGRESS) && !(ri->master->flags & (SRI_S_DOWN | SRI_O_DOWN)) &&
        ri->master->roleReported == SRI_MASTER && ri->master->infoRefresh &&
        now - ri->master->infoRefresh < stun.infoPeriod * 2 &&
        (!ri->sdownSince || now - ri->sdownSince > convertWait) && now - ri->roleReportedTime > convertWait &&
        now - ri->reconfSentTime > convertWait) {
        char port[16];
        snprintf(port, sizeof(port), "%d", ri->master->port);
        ri->reconfSentTime = now;
        sentinelEvent(LL_NOTICE, "+convert-to-slave", ri, "%s", "");
        sendTransaction(ri, sentinelAnnounceHost(ri->master), port);
    }
    if (ri->flags & SRI_SLAVE) {
        if (infoField(info, "master_link_down_since_seconds", v, sizeof(v)))
            ri->masterLinkDownTime = strtoll(v, NULL, 10) * 1000;
        else
            ri->masterLinkDownTime = 0;
        if (infoField(info, "master_host", v, sizeof(v)) &&
            (!ri->slaveMasterHost || strcasecmp(ri->slaveMasterHost, v))) {
            xfree(ri->slaveMasterHost);
            ri->slaveMasterHost = xstrdup(v);
            ri->slaveConfChangeTime = now;
        }
        if (infoField(info, "master_port", v, sizeof(v)) && atoi(v) != ri->slaveMasterPort) {
            ri->slaveMasterPort = atoi(v);
            ri->slaveConfChangeTime = now;
        }
        if (infoField(info, "master_link_status", v, sizeof(v))) ri->masterLinkUp = !strcmp(v, "up");
        if (infoField(info, "slave_priority", v, sizeof(v)) ||
            infoField(info, "replica_priority", v, sizeof(v)))
            ri->slavePriority = atoi(v);
        if (infoField(info, "slave_repl_offset", v, sizeof(v))) ri->slaveReplOffset = strtoll(v, NULL, 10);
        if (infoField(info, "replica_announced", v, sizeof(v)))
            ri->replicaAnnounced = atoi(v);
        else
            ri->replicaAnnounced = 1;
    }
    /* A replica replicating from another address than its group's
     * primary (pointed elsewhere by hand, or left behind by a failover it
     * missed): made a replica of the right one (+fix-slave-config), as
     * Redis's rule has it: not in TILT, the primary looking sane, the
     * replica not down within the failover timeout and its reported
     * primary unchanged for longer than that.  A promoted replica reports
     * itself a primary, so it never gets here. */
    if ((ri->flags & SRI_SLAVE) && role == SRI_SLAVE && !sentinel.tilt && ri->slaveMasterHost &&
        !slaveReplicatesFrom(ri, ri->master)) {
        long long wait = ri->master->failoverTimeout;
        if (masterLooksSane(ri->master, now) && noDownFor(ri, wait, now) && now - ri->slaveConfChangeTime > wait) {
            char port[16];
            snprintf(port, sizeof(port), "%d", ri->master->port);
            if (sendTransaction(ri, sentinelAnnounceHost(ri->master), port) == 0)
                sentinelEvent(LL_NOTICE, "+fix-slave-config", ri, "%s", "");
        }
    }
}

/* A hello message "ip,port,runid,epoch,mname,mip,mport,mepoch" about a
 * master this sentinel monitors: adds or updates the sender; from
 * another sentinel (not itself). */

/* A decimal epoch without sign or overflow: 0, or -1. */
static int parseEpoch(const char *s, unsigned long long *out) {
    char *end;
    if (*s < '0' || *s > '9') return -1;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (*end || errno) return -1;
    *out = v;
    return 0;
}

void sentinelProcessHello(const char *hello, size_t len) {
    char buf[512];
    if (len >= sizeof(buf)) return;
    memcpy(buf, hello, len);
    buf[len] = '\0';
    char *tok[8];
    int n = 0;
    char *save = NULL;
    for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        if (n == 8) return; /* more than 8 fields */
        tok[n++] = t;
    }
    if (n != 8) return;
    const char *ip = tok[0], *runid = tok[2], *mname = tok[4], *mip = tok[5];
    long long port, mport;
    unsigned long long epoch, mepoch;
    /* Malformed fields: the message is ignored, as Redis ignores one whose
     * token count is wrong. */
    if (sentinelParseLL(tok[1], &port) || port <= 0 || port > 65535 || sentinelParseLL(tok[6], &mport) || mport <= 0 ||
        mport > 65535 || parseEpoch(tok[3], &epoch) || parseEpoch(tok[7], &mepoch) || strlen(runid) != 40)
        return;
    SInst *m = masterByName(mname);
    if (!m) return;
    if (!strcmp(runid, sentinel.myid)) return;
    /* A newer configuration of the primary: follow it (a failover of ours
     * in an older epoch is dropped by the switch). */
    char mipResolved[64], ipResolved[64];
    if (sentinelResolve(mip, mipResolved, sizeof(mipResolved)) != 0 ||
        sentinelResolve(ip, ipResolved, sizeof(ipResolved)) != 0)
        return; /* as Redis: an address it cannot resolve is not used */
    /* The switch is made by the timer (this runs on one of m's links),
     * and m's config epoch changes with its address there, never before:
     * a hello or a config file pairing the new epoch with the old address
     * would make the sentinels that read it take the epoch without the
     * switch, and then ignore every correct hello of that epoch. */
    int otherAddr = m->port != mport || strcmp(m->ip, mipResolved);
    unsigned long long known = m->configEpoch;
    if (m->pendingSwitchIp && m->pendingSwitchEpoch > known) known = m->pendingSwitchEpoch;
    if (otherAddr && mepoch > known) {
        sentinelEvent(LL_WARNING, "+config-update-from", NULL, "sentinel %s %s %lld @ %s %s %d", runid, ip,
                      port, m->name, sentinelAnnounceHost(m), m->port);
        xfree(m->pendingSwitchIp);
        m->pendingSwitchIp = xstrdup(mip);
        m->pendingSwitchPort = (int)mport;
        m->pendingSwitchEpoch = mepoch;
    } else if (!otherAddr && mepoch > m->configEpoch) {
        m->configEpoch = mepoch;
        /* a newer config naming the address we have: no switch pending */
        if (m->pendingSwitchIp && mepoch >= m->pendingSwitchEpoch) {
            xfree(m->pendingSwitchIp);
            m->pendingSwitchIp = NULL;
        }
        sentinelFlushConfig();
    }
    SInst *si = sentinelByRunid(m, runid);
    if (!si) {
        /* Same address, other run id: a restarted sentinel. */
        for (int i = 0; i < m->nsentinels; i++) {
            SInst *o = m->sentinels[i];
            if (o->port == port && !strcmp(o->ip, ipResolved)) {
                sentinelEvent(LL_NOTICE, "-dup-sentinel", o, " #duplicate of %s:%lld or %s", ip, port, runid);
                instFree(o);
                sentinelInstRemoveAt(m->sentinels, &m->nsentinels, i);
                break;
            }
        }
        si = instCreate(SRI_SENTINEL, runid, ip, (int)port, m); /* named by run id, as Redis's */
        if (!si) return;
        memcpy(si->runid, runid, 41);
        instAppend(&m->sentinels, &m->nsentinels, si);
        sentinelEvent(LL_NOTICE, "+sentinel", si, "%s", "");
        if (epoch > sentinel.currentEpoch) {
            sentinel.currentEpoch = epoch;
            sentinelEventAbout(LL_WARNING, "+new-epoch", m, "%llu", epoch);
        }
        sentinelFlushConfig();
    } else if (epoch > sentinel.currentEpoch) {
        sentinel.currentEpoch = epoch;
        sentinelFlushConfig();
        sentinelEventAbout(LL_WARNING, "+new-epoch", m, "%llu", epoch);
    }
    si->lastHelloRecv = mstime();
}

void sentinelPubsubMessage(SInst *ri, RVal *msg) {
    if (msg->type != '*' || msg->n != 3) return;
    RVal *kind = msg->elem[0], *payload = msg->elem[2];
    if (kind->type != '$' || !kind->str || strcmp(kind->str, "message")) return;
    if (payload->type != '$' || !payload->str) return;
    sentinelProcessHello(payload->str, payload->len);
}

static const char *announceIp(SInst *ri, char *buf, size_t len) {
    if (sentinel.announceIp) return sentinel.announceIp;
    if (ri->cc->conn && connLocalAddr(ri->cc->conn, buf, len) == 0) {
        char *colon = strrchr(buf, ':');
        if (colon) *colon = '\0';
        return buf;
    }
    return NULL;
}

/* Where m's primary is now: the promoted replica once the failover
 * reconfigures the others (as Redis's sentinelGetCurrentMasterAddress),
 * else m itself. */
const SInst *sentinelCurrentMasterAddr(const SInst *m) {
    if (m->promoted && m->failoverState >= FO_RECONF_SLAVES) return m->promoted;
    return m;
}

/* The port other sentinels reach this one at: tls-port when the links are
 * TLS (tls-replication), else port (Redis's rule). */
static int sentinelAnnouncedPort(void) {
    return connTypeForReplication() == &connTcpType ? sentinel.port : tlsPort();
}

static void sendHello(SInst *ri) {
    SInst *m = ri->flags & SRI_MASTER ? ri : ri->master;
    char ipbuf[128];
    const char *ip = announceIp(ri, ipbuf, sizeof(ipbuf));
    if (!ip || !ri->cc->connected) return;
    char payload[512];
    const SInst *cur = sentinelCurrentMasterAddr(m);
    snprintf(payload, sizeof(payload), "%s,%d,%s,%llu,%s,%s,%d,%llu", ip,
             sentinel.announcePort ? sentinel.announcePort : sentinelAnnouncedPort(), sentinel.myid,
             sentinel.currentEpoch, m->name, sentinelAnnounceHost(cur), cur->port, m->configEpoch);
    const char *argv[3] = {"PUBLISH", "__sentinel__:hello", payload};
    linkCommand(ri->cc, ignoreReply, NULL, 3, argv);
    ri->lastHelloSent = mstime();
}

static void isDownReply(SInst *si, RVal *r, void *priv) {
    if (!r || r->type != '*' || r->n != 3 || r->elem[0]->type != ':' || r->elem[1]->type != '$' ||
        r->elem[2]->type != ':' || !r->elem[1]->str)
        return;
    si->lastMasterDownReply = mstime();
    if (r->elem[0]->ll == 1)
        si->flags |= SRI_MASTER_DOWN;
    else
        si->flags &= ~SRI_MASTER_DOWN;
    if (strcmp(r->elem[1]->str, "*")) {
        if (!si->leader || strcmp(si->leader, r->elem[1]->str) ||
            si->leaderEpoch != (unsigned long long)r->elem[2]->ll) {
            xfree(si->leader);
            si->leader = xstrdup(r->elem[1]->str);
            si->leaderEpoch = (unsigned long long)r->elem[2]->ll;
        }
    }
}

/* Connects ri's links when they are down (at most once a second) and
 * authenticates and names them, as Redis's sentinelReconnectInstance. */
static void reconnectInstance(SInst *ri, long long now) {
    SLink *links[2] = {ri->cc, ri->pc};
    SInst *m = ri->flags & SRI_MASTER ? ri : ri->master;
    for (int i = 0; i < 2; i++) {
        SLink *l = links[i];
        if (!l || l->conn) continue;
        if (now - l->lastReconnect < 1000) continue;
        l->lastReconnect = now;
        if (linkConnect(l, ri->ip, ri->port) != 0) continue;
        /* data nodes: the primary's auth-user/auth-pass; other sentinels:
         * sentinel-user/sentinel-pass (as Redis's sentinelSendAuthIfNeeded) */
        const char *user = m->authUser, *pass = m->authPass;
        if (ri->flags & SRI_SENTINEL) {
            /* without sentinel-pass, our own requirepass (Redis's compatibility rule) */
            user = sentinel.sentinelPass ? sentinel.sentinelUser : NULL;
            pass = sentinel.sentinelPass ? sentinel.sentinelPass : sentinel.requirepass;
        }
        if (pass) {
            if (user) {
                const char *a[3] = {"AUTH", user, pass};
                linkCommand(l, ignoreReply, NULL, 3, a);
            } else {
                const char *a[2] = {"AUTH", pass};
                linkCommand(l, ignoreReply, NULL, 2, a);
            }
        }
        char cname[64];
        snprintf(cname, sizeof(cname), "sentinel-%.8s-%s", sentinel.myid, l->pubsub ? "pubsub" : "cmd");
        const char *sn[3] = {"CLIENT", "SETNAME", cname};
        linkCommand(l, ignoreReply, NULL, 3, sn);
        if (l->pubsub) {
            const char *sub[2] = {"SUBSCRIBE", "__sentinel__:hello"};
            linkCommand(l, ignoreReply, NULL, 2, sub);
        } else {
            const char *ping[1] = {"PING"};
            ri->pingSentAt = now;
            ri->lastPingSent = now;
            if (!ri->actPing) ri->actPing = now;
            linkCommand(l, pingReply, NULL, 1, ping);
        }
    }
}

/* One instance's timer work: links, PING, INFO and hello; and, unless
 * act is 0 (TILT), its subjective-down state. */
static void periodicInstance(SInst *ri, long long now, int act) {
    reconnectInstance(ri, now);
    SLink *cc = ri->cc;
    if (cc->conn && cc->pending < 100) {
        long long infoPeriod = stun.infoPeriod;
        if ((ri->flags & SRI_SLAVE) && (ri->master->flags & (SRI_O_DOWN | SRI_FAILOVER_IN_PROGRESS)))
            infoPeriod = 1000;
        if (!(ri->flags & SRI_SENTINEL) && (!ri->infoRefresh || now - ri->infoRefresh > infoPeriod) &&
            now - ri->lastPingTry >= 0) {
            if (!ri->infoRefresh || now - ri->infoRefresh > infoPeriod) {
                const char *a[1] = {"INFO"};
                /* one INFO in flight at a time: refresh is set on reply */
                if (!(ri->flags & SRI_INFO_PENDING)) {
                    ri->flags |= SRI_INFO_PENDING;
                    linkCommand(cc, infoReply, NULL, 1, a);
                }
            }
        }
        long long pingPeriod = ri->downAfter < stun.pingPeriod ? ri->downAfter : stun.pingPeriod;
        if (!ri->pingSentAt && now - ri->lastPingSent > pingPeriod) {
            const char *a[1] = {"PING"};
            ri->pingSentAt = now;
            ri->lastPingSent = now;
            if (!ri->actPing) ri->actPing = now;
            linkCommand(cc, pingReply, NULL, 1, a);
        }
        if (now - ri->lastHelloSent > stun.publishPeriod) sendHello(ri);
    }
    if (!act) return;
    /* Links that look connected but are not working are closed, to be
     * reconnected (Redis's rules, outside TILT): the command link when a
     * PING has gone unanswered, and no reply of any kind came, for half
     * down-after-milliseconds; the pub/sub link when nothing (no hello,
     * ours included: we publish one every publish period) arrived on it
     * for three publish periods.  Either only once connected for longer
     * than min-link-reconnect-period. */
    if (cc->conn && cc->connected && now - cc->connectedAt > stun.minLinkReconnectPeriod && ri->actPing &&
        now - ri->actPing > ri->downAfter / 2 && now - ri->lastPong > ri->downAfter / 2) {
        cc->lastReconnect = 0;
        ri->pingSentAt = 0;
        /* linkFree/Create to drop its callbacks too */
        SLink *n = linkCreate(ri, 0);
        linkFree(cc);
        ri->cc = cc = n;
        ri->flags &= ~SRI_INFO_PENDING;
    }
    SLink *pc = ri->pc;
    if (pc && pc->conn && now - pc->connectedAt > stun.minLinkReconnectPeriod &&
        now - pc->lastActivity > stun.publishPeriod * 3) {
        linkDisconnect(pc);
        pc->lastReconnect = 0;
    }
    /* subjective down */
    /* As Redis: how long the oldest PING has gone without a valid reply;
     * with none pending, how long since the last valid one while the link
     * is down. */
    long long elapsed = 0;
    if (ri->actPing)
        elapsed = now - ri->actPing;
    else if (!cc->connected)
        elapsed = now - ri->lastAvail;
    int down = elapsed > ri->downAfter;
    if ((ri->flags & SRI_MASTER) && ri->roleReported == SRI_SLAVE &&
        now - ri->roleReportedTime > ri->downAfter + stun.infoPeriod * 2)
        down = 1;
    /* rebooted and not answering PONG for master-reboot-down-after-period */
    if ((ri->flags & SRI_MASTER_REBOOT) && now - ri->rebootSince > ri->rebootDownAfter) down = 1;
    if (down && !(ri->flags & SRI_S_DOWN)) {
        ri->flags |= SRI_S_DOWN;
        ri->sdownSince = now;
        sentinelEvent(LL_WARNING, "+sdown", ri, "%s", "");
    } else if (!down && (ri->flags & SRI_S_DOWN)) {
        ri->flags &= ~SRI_S_DOWN;
        sentinelEvent(LL_WARNING, "-sdown", ri, "%s", "");
    }
}

static void checkObjectivelyDown(SInst *m, long long now) {
    int votes = 0, odown = 0;
    if (m->flags & SRI_S_DOWN) {
        votes = 1;
        for (int i = 0; i < m->nsentinels; i++) {
            SInst *s = m->sentinels[i];
            if (now - s->lastMasterDownReply > stun.askPeriod * 5) s->flags &= ~SRI_MASTER_DOWN;
            if (s->flags & SRI_MASTER_DOWN) votes++;
        }
        if (votes >= m->quorum) odown = 1;
    }
    if (odown && !(m->flags & SRI_O_DOWN)) {
        m->flags |= SRI_O_DOWN;
        m->odownSince = now;
        sentinelEvent(LL_WARNING, "+odown", m, " #quorum %d/%d", votes, m->quorum);
    } else if (!odown && (m->flags & SRI_O_DOWN)) {
        m->flags &= ~SRI_O_DOWN;
        sentinelEvent(LL_WARNING, "-odown", m, "%s", "");
    }
    /* Ask the others while we think it is down (once a second). */
    if ((m->flags & SRI_S_DOWN) && now - m->lastIsDownAsk >= stun.askPeriod) {
        m->lastIsDownAsk = now;
        char port[16], epoch[32];
        snprintf(port, sizeof(port), "%d", m->port);
        snprintf(epoch, sizeof(epoch), "%llu", sentinel.currentEpoch);
        const char *who = m->failoverState > FO_NONE ? sentinel.myid : "*";
        for (int i = 0; i < m->nsentinels; i++) {
            SInst *s = m->sentinels[i];
            if (!s->cc->connected) continue;
            const char *a[6] = {"SENTINEL", "is-master-down-by-addr", sentinelAnnounceHost(m), port, epoch, who};
            linkCommand(s->cc, isDownReply, NULL, 6, a);
        }
    } else if (!(m->flags & SRI_S_DOWN)) {
        for (int i = 0; i < m->nsentinels; i++)
            m->sentinels[i]->flags &= ~SRI_MASTER_DOWN;
    }
}

static volatile sig_atomic_t shutdownAsked;

/* ---------------------------------------------------------------------
 * Failover (Redis's sentinelFailoverStateMachine, same order of events)
 * ------------------------------------------------------------------- */

static void setFailoverState(SInst *m, int state, const char *event, SInst *about) {
    m->failoverState = state;
    m->failoverStateChangeTime = mstime();
    if (event) sentinelEvent(LL_WARNING, event, about ? about : m, "%s", "");
}

static void abortFailover(SInst *m, const char *why) {
    sentinelEvent(LL_WARNING, why, m, "%s", "");
    m->flags &= ~(SRI_FAILOVER_IN_PROGRESS | SRI_FORCE_FAILOVER);
    m->failoverState = FO_NONE;
    m->failoverStateChangeTime = mstime();
    if (m->promoted) m->promoted->flags &= ~SRI_PROMOTED;
    m->promoted = NULL;
    for (int i = 0; i < m->nslaves; i++)
        m->slaves[i]->flags &= ~(SRI_RECONF_SENT | SRI_RECONF_DONE);
}

static void startFailoverIfNeeded(SInst *m, long long now) {
    if (!(m->flags & SRI_O_DOWN) || (m->flags & SRI_FAILOVER_IN_PROGRESS)) return;
    if (now - m->failoverStartTime < m->failoverTimeout * 2) {
        /* said once per attempt, as Redis: when the next may start */
        if (m->failoverDelayLogged != m->failoverStartTime) {
            time_t at = (time_t)((m->failoverStartTime + m->failoverTimeout * 2) / 1000);
            char when[32];
            struct tm tm;
            localtime_r(&at, &tm);
            strftime(when, sizeof(when), "%a %b %e %H:%M:%S %Y", &tm);
            m->failoverDelayLogged = m->failoverStartTime;
            serverLog(LL_WARNING, "Next failover delay: I will not start a failover before %s", when);
        }
        return;
    }
    sentinel.currentEpoch++;
    m->failoverEpoch = sentinel.currentEpoch;
    m->flags |= SRI_FAILOVER_IN_PROGRESS;
    sentinelEventAbout(LL_WARNING, "+new-epoch", m, "%llu", sentinel.currentEpoch);
    sentinelEvent(LL_WARNING, "+try-failover", m, "%s", "");
    m->failoverState = FO_WAIT_START;
    m->failoverStartTime = now + (long long)(randNext() % 1000);
    m->failoverStateChangeTime = now;
    m->lastIsDownAsk = 0; /* ask for votes now */
    sentinelFlushConfig();
}

/* The run id that has a majority of the votes (and at least the quorum)
 * in the failover epoch, counting our own vote (given to the most voted,
 * or to ourselves); NULL when none. */
static const char *getLeader(SInst *m, unsigned long long epoch) {
    const char *ids[64];
    int votes[64], n = 0;
    int voters = m->nsentinels + 1;
    for (int i = 0; i < m->nsentinels && n < 63; i++) {
        SInst *s = m->sentinels[i];
        if (!s->leader || s->leaderEpoch != epoch) continue;
        int j;
        for (j = 0; j < n; j++)
            if (!strcmp(ids[j], s->leader)) break;
        if (j == n) {
            ids[n] = s->leader;
            votes[n++] = 0;
        }
        votes[j]++;
    }
    const char *winner = NULL;
    int best = 0;
    for (int j = 0; j < n; j++)
        if (votes[j] > best) best = votes[j], winner = ids[j];
    sentinelVoteLeader(m, epoch, winner ? winner : sentinel.myid);
    const char *mine = m->leader && m->leaderEpoch == epoch ? m->leader : NULL;
    if (mine) {
        int j;
        for (j = 0; j < n; j++)
            if (!strcmp(ids[j], mine)) break;
        if (j == n) {
            ids[n] = mine;
            votes[n++] = 0;
        }
        votes[j]++;
        if (votes[j] > best) best = votes[j], winner = ids[j];
    }
    if (!winner) return NULL;
    if (best < voters / 2 + 1 || best < m->quorum) return NULL;
    return winner;
}

static int slaveCmp(const void *a, const void *b) {
    const SInst *x = *(SInst *const *)a, *y = *(SInst *const *)b;
    if (x->slavePriority != y->slavePriority) return x->slavePriority - y->slavePriority;
    if (x->slaveReplOffset != y->slaveReplOffset) return x->slaveReplOffset > y->slaveReplOffset ? -1 : 1;
    return strcasecmp(x->runid, y->runid);
}

SInst *sentinelSelectSlave(SInst *m, long long now) {
    SInst *cand[256];
    int n = 0;
    long long maxLinkDown = ((m->flags & SRI_S_DOWN) ? now - m->sdownSince : 0) + m->downAfter * 10;
    long long infoValidity = (m->flags & SRI_S_DOWN) ? 5000 : 30000;
    for (int i = 0; i < m->nslaves && n < 256; i++) {
        SInst *s = m->slaves[i];
        if (s->flags & (SRI_S_DOWN | SRI_O_DOWN)) continue;
        if (!s->cc->connected) continue;
        if (now - s->lastAvail > 5000) continue;
        if (s->slavePriority == 0) continue;
        if (!s->infoRefresh || now - s->infoRefresh > infoValidity) continue;
        if (s->masterLinkDownTime > maxLinkDown) continue;
        if (!s->runid[0]) continue;
        cand[n++] = s;
    }
    if (!n) return NULL;
    qsort(cand, (size_t)n, sizeof(cand[0]), slaveCmp);
    return cand[0];
}

static int sendTransaction(SInst *ri, const char *host, const char *port) {
    const char *multi[1] = {"MULTI"};
    if (linkCommand(ri->cc, ignoreReply, NULL, 1, multi) != 0) return -1;
    if (host) {
        const char *a[3] = {"SLAVEOF", host, port};
        linkCommand(ri->cc, ignoreReply, NULL, 3, a);
    } else {
        const char *a[3] = {"SLAVEOF", "NO", "ONE"};
        linkCommand(ri->cc, ignoreReply, NULL, 3, a);
    }
    const char *rw[2] = {"CONFIG", "REWRITE"};
    linkCommand(ri->cc, ignoreReply, NULL, 2, rw);
    const char *kill[4] = {"CLIENT", "KILL", "TYPE", "normal"};
    linkCommand(ri->cc, ignoreReply, NULL, 4, kill);
    const char *exec[1] = {"EXEC"};
    linkCommand(ri->cc, ignoreReply, NULL, 1, exec);
    return 0;
}

/* The primary m now lives at ip:port: its replicas are the old ones (but
 * the new primary) and the old primary; links restart. */
static void switchMaster(SInst *m, const char *ip, int port) {
    char oldHost[256], oldShown[256], newIp[64];
    int oldPort = m->port;
    if (sentinelResolve(ip, newIp, sizeof(newIp)) != 0) return;
    snprintf(oldHost, sizeof(oldHost), "%s", m->host);
    snprintf(oldShown, sizeof(oldShown), "%s", sentinelAnnounceHost(m));
    int sameAddr = oldPort == port && !strcmp(m->ip, newIp);
    char(*addrs)[256] = xcalloc(sizeof(*addrs) * (size_t)(m->nslaves + 1));
    int *ports = xcalloc(sizeof(int) * (size_t)(m->nslaves + 1));
    int n = 0;
    for (int i = 0; i < m->nslaves; i++) {
        SInst *s = m->slaves[i];
        if (s->port == port && !strcmp(s->ip, newIp)) continue;
        snprintf(addrs[n], sizeof(addrs[n]), "%s", s->host);
        ports[n++] = s->port;
    }
    if (!sameAddr) {
        snprintf(addrs[n], sizeof(addrs[n]), "%s", oldHost);
        ports[n++] = oldPort;
    }
    unsigned long long cfgEpoch = m->configEpoch;
    sentinelResetMasterKeepSentinels(m);
    m->configEpoch = cfgEpoch;
    xfree(m->ip);
    xfree(m->host);
    m->ip = xstrdup(newIp);
    m->host = xstrdup(ip);
    sentinelEventAbout(LL_WARNING, "+switch-master", m, "%s %s %d %s %d", m->name, oldShown, oldPort,
                       sentinelAnnounceHost(m), port);
    m->port = port;
    for (int i = 0; i < n; i++) {
        SInst *s = instCreate(SRI_SLAVE, NULL, addrs[i], ports[i], m);
        if (!s) continue;
        instAppend(&m->slaves, &m->nslaves, s);
        sentinelEvent(LL_NOTICE, "+slave", s, "%s", "");
    }
    xfree(addrs);
    xfree(ports);
    sentinelFlushConfig();
}

static void failoverStateMachine(SInst *m, long long now) {
    if (!(m->flags & SRI_FAILOVER_IN_PROGRESS)) return;
    switch (m->failoverState) {
    case FO_WAIT_START: {
        if (now < m->failoverStartTime) return;
        const char *leader = getLeader(m, m->failoverEpoch);
        if ((!leader || strcmp(leader, sentinel.myid)) && !(m->flags & SRI_FORCE_FAILOVER)) {
            long long electionTimeout =
                m->failoverTimeout < stun.electionTimeout ? m->failoverTimeout : stun.electionTimeout;
            /* the next attempt waits twice the failover timeout from this
             * one's start (not from the abort), as Redis's */
            if (now - m->failoverStartTime > electionTimeout) abortFailover(m, "-failover-abort-not-elected");
            return;
        }
        sentinelEvent(LL_WARNING, "+elected-leader", m, "%s", "");
        sentinelSimFailureMaybeCrash(SIMFAIL_CRASH_AFTER_ELECTION);
        setFailoverState(m, FO_SELECT_SLAVE, "+failover-state-select-slave", NULL);
        break;
    }
    case FO_SELECT_SLAVE: {
        SInst *s = sentinelSelectSlave(m, now);
        if (!s) {
            abortFailover(m, "-failover-abort-no-good-slave");
            return;
        }
        sentinelEvent(LL_WARNING, "+selected-slave", s, "%s", "");
        s->flags |= SRI_PROMOTED;
        m->promoted = s;
        setFailoverState(m, FO_SEND_SLAVEOF_NOONE, "+failover-state-send-slaveof-noone", s);
        break;
    }
    case FO_SEND_SLAVEOF_NOONE: {
        SInst *s = m->promoted;
        if (!s->cc->connected) {
            if (now - m->failoverStateChangeTime > m->failoverTimeout)
                abortFailover(m, "-failover-abort-slave-timeout");
            return;
        }
        sendTransaction(s, NULL, NULL);
        setFailoverState(m, FO_WAIT_PROMOTION, "+failover-state-wait-promotion", s);
        break;
    }
    case FO_WAIT_PROMOTION:
        if (m->promoted->roleReported == SRI_MASTER) {
            m->configEpoch = m->failoverEpoch;
            sentinelEvent(LL_WARNING, "+promoted-slave", m->promoted, "%s", "");
            sentinelFlushConfig();
            sentinelSimFailureMaybeCrash(SIMFAIL_CRASH_AFTER_PROMOTION);
            setFailoverState(m, FO_RECONF_SLAVES, "+failover-state-reconf-slaves", NULL);
            sentinelCallReconfScript(m, 1, "start", sentinelAnnounceHost(m), m->port,
                                     sentinelAnnounceHost(m->promoted), m->promoted->port);
        } else if (now - m->failoverStateChangeTime > m->failoverTimeout) {
            abortFailover(m, "-failover-abort-slave-timeout");
        }
        break;
    case FO_RECONF_SLAVES: {
        char port[16];
        snprintf(port, sizeof(port), "%d", m->promoted->port);
        int inProgress = 0, done = 1;
        for (int i = 0; i < m->nslaves; i++) {
            SInst *s = m->slaves[i];
            if (s == m->promoted) continue;
            if (s->flags & SRI_RECONF_SENT) inProgress++;
            if (!(s->flags & SRI_RECONF_DONE)) done = 0;
        }
        for (int i = 0; i < m->nslaves && inProgress < m->parallelSyncs; i++) {
            SInst *s = m->slaves[i];
            if (s == m->promoted || (s->flags & (SRI_RECONF_SENT | SRI_RECONF_DONE))) continue;
            if (!s->cc->connected || (s->flags & SRI_S_DOWN)) continue;
            sendTransaction(s, sentinelAnnounceHost(m->promoted), port);
            s->flags |= SRI_RECONF_SENT;
            s->reconfSentTime = now;
            sentinelEvent(LL_NOTICE, "+slave-reconf-sent", s, "%s", "");
            inProgress++;
        }
        /* a replica reconfigured: its INFO names the new primary, link up */
        for (int i = 0; i < m->nslaves; i++) {
            SInst *s = m->slaves[i];
            if (!(s->flags & SRI_RECONF_SENT)) continue;
            if (s->slaveMasterHost &&
                (!strcmp(s->slaveMasterHost, m->promoted->ip) || !strcmp(s->slaveMasterHost, m->promoted->host)) &&
                s->slaveMasterPort == m->promoted->port && s->masterLinkUp &&
                s->infoRefresh > s->reconfSentTime) {
                s->flags = (s->flags & ~SRI_RECONF_SENT) | SRI_RECONF_DONE;
                sentinelEvent(LL_NOTICE, "+slave-reconf-done", s, "%s", "");
            } else if (now - s->reconfSentTime > stun.slaveReconfTimeout) {
                /* as Redis: given up on after slave-reconf-timeout */
                s->flags = (s->flags & ~SRI_RECONF_SENT) | SRI_RECONF_DONE;
                sentinelEvent(LL_NOTICE, "-slave-reconf-sent-timeout", s, "%s", "");
            }
        }
        /* replicas that are down are left for later (as Redis does) */
        done = 1;
        for (int i = 0; i < m->nslaves; i++) {
            SInst *s = m->slaves[i];
            if (s == m->promoted || (s->flags & SRI_S_DOWN)) continue;
            if (!(s->flags & SRI_RECONF_DONE)) done = 0;
        }
        if (done || now - m->failoverStateChangeTime > m->failoverTimeout) {
            sentinelEvent(LL_WARNING, "+failover-end", m, "%s", "");
            m->failoverState = FO_UPDATE_CONFIG;
        }
        break;
    }
    case FO_UPDATE_CONFIG: {
        char ip[128];
        snprintf(ip, sizeof(ip), "%s", m->promoted->host);
        int port = m->promoted->port;
        m->flags &= ~SRI_FAILOVER_IN_PROGRESS;
        m->failoverState = FO_NONE;
        m->promoted = NULL;
        switchMaster(m, ip, port);
        break;
    }
    }
}

static long long sentinelTimer(EventLoop *loop, long long id, void *data) {
    long long now = mstime();
    if (shutdownAsked) sentinelShutdown();
    /* TILT (sentinel_tilt.c): monitor, but do not act. */
    int act = !sentinelTiltCheck(now);
    for (int i = 0; i < sentinel.nmasters; i++) {
        SInst *m = sentinel.masters[i];
        /* A switch heard in a hello first: the hellos sent below name
         * the new address with the new epoch. */
        if (m->pendingSwitchIp) {
            char *ip = m->pendingSwitchIp;
            char oldIp[128];
            int oldPort = m->port;
            snprintf(oldIp, sizeof(oldIp), "%s", sentinelAnnounceHost(m));
            m->pendingSwitchIp = NULL;
            char resolved[64];
            /* (an address that no longer resolves: no switch, no epoch) */
            if (sentinelResolve(ip, resolved, sizeof(resolved)) == 0) {
                if (m->pendingSwitchEpoch > m->configEpoch) m->configEpoch = m->pendingSwitchEpoch;
                switchMaster(m, ip, m->pendingSwitchPort);
                sentinelCallReconfScript(m, 0, "start", oldIp, oldPort, sentinelAnnounceHost(m), m->port);
            }
            xfree(ip);
        }
        periodicInstance(m, now, act);
        for (int j = 0; j < m->nslaves; j++)
            periodicInstance(m->slaves[j], now, act);
        for (int j = 0; j < m->nsentinels; j++)
            periodicInstance(m->sentinels[j], now, act);
        if (act) {
            checkObjectivelyDown(m, now);
            startFailoverIfNeeded(m, now);
            failoverStateMachine(m, now);
        }
    }
    sentinelScriptsTimer();
    sentinelStatsSample(now);
    sentinelClientsResume();
    return 100;
}

int sentinelParseLL(const char *s, long long *out) {
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (!*s || *end || errno) return -1;
    *out = v;
    return 0;
}

static int validName(const char *s) {
    for (; *s; s++)
        if (*s <= ' ' || *s == '"' || *s == '\'') return 0;
    return 1;
}

/* SENTINEL MONITOR's checks and effect: NULL or the error. */
const char *sentinelAddMaster(const char *name, const char *ip, const char *portS, const char *quorumS,
                              SInst **out) {
    long long port, quorum;
    if (sentinelParseLL(quorumS, &quorum) || quorum <= 0) return "Quorum must be 1 or greater.";
    if (sentinelParseLL(portS, &port) || port < 0 || port > 65535) return "Invalid port number.";
    if (!validName(name)) return "Invalid master name";
    if (masterByName(name)) return "Duplicate master name.";
    SInst *m = instCreate(SRI_MASTER, name, ip, (int)port, NULL);
    if (!m) return "Can't resolve instance hostname.";
    m->quorum = (int)quorum;
    instAppend(&sentinel.masters, &sentinel.nmasters, m);
    if (out) *out = m;
    return NULL;
}

void sentinelResetMasterKeepSentinels(SInst *m) {
    SInst **sents = m->sentinels;
    int n = m->nsentinels;
    m->sentinels = NULL;
    m->nsentinels = 0;
    sentinelResetMaster(m);
    xfree(m->sentinels);
    m->sentinels = sents;
    m->nsentinels = n;
}

void sentinelResetMaster(SInst *m) {
    for (int i = 0; i < m->nslaves; i++)
        instFree(m->slaves[i]);
    for (int i = 0; i < m->nsentinels; i++)
        instFree(m->sentinels[i]);
    m->nslaves = m->nsentinels = 0;
    m->flags &= SRI_MASTER;
    m->failoverState = FO_NONE;
    m->promoted = NULL;
    linkFree(m->cc);
    linkFree(m->pc);
    m->cc = linkCreate(m, 0);
    m->pc = linkCreate(m, 1);
    m->runid[0] = '\0';
    m->infoRefresh = 0;
    /* As Redis: the down timer starts over from the reset (a PING left
     * unanswered by the old address would make the new one +sdown at
     * once), and the role is master from now on. */
    long long now = mstime();
    m->lastAvail = m->lastPong = now;
    m->actPing = now;
    m->pingSentAt = 0;
    m->roleReported = SRI_MASTER;
    m->roleReportedTime = now;
}

/* --- the SENTINEL command --- */

void sentinelVoteLeader(SInst *m, unsigned long long reqEpoch, const char *runid) {
    if (reqEpoch > sentinel.currentEpoch) {
        sentinel.currentEpoch = reqEpoch;
        sentinelFlushConfig();
        sentinelEventAbout(LL_WARNING, "+new-epoch", m, "%llu", reqEpoch);
    }
    if (m->leaderEpoch < reqEpoch && sentinel.currentEpoch <= reqEpoch) {
        xfree(m->leader);
        m->leader = xstrdup(runid);
        m->leaderEpoch = sentinel.currentEpoch;
        /* voted for another: no failover of our own for a while */
        if (strcmp(runid, sentinel.myid)) m->failoverStartTime = mstime() + (long long)(randNext() % 1000);
        sentinelFlushConfig();
        sentinelEvent(LL_WARNING, "+vote-for-leader", m, " %s %llu", runid, m->leaderEpoch);
    }
}

void sentinelShutdown(void) {
    serverLog(LL_WARNING, "User requested shutdown...");
    sentinelFlushConfig();
    serverLog(LL_WARNING, "Sentinel is now ready to exit, bye bye...");
    exit(0);
}

/* SIGTERM/SIGINT: the timer exits (config flushed) on its next run. */
static void sigtermHandler(int sig) {
    (void)sig;
    shutdownAsked = 1;
}

int sentinelModeRequested(int argc, char **argv) {
    const char *base = strrchr(argv[0], '/');
    base = base ? base + 1 : argv[0];
    size_t bl = strlen(base);
    if (bl >= 8 && !strcmp(base + bl - 8, "sentinel")) return 1;
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--sentinel")) return 1;
    return 0;
}

int sentinelMain(int argc, char **argv) {
    memset(&sentinel, 0, sizeof(sentinel));
    sentinel.port = 26379;
    sentinel.denyScriptsReconfig = 1;
    sentinelTunablesInit();
    sentinel.startMs = mstime();
    const char *path = NULL;
    if (argc >= 2 && argv[1][0] != '-') path = argv[1];
    if (!path) {
        fprintf(stderr, "Sentinel needs config file on disk to save state.  Exiting...\n");
        return 1;
    }
    if (sentinelLoadConfig(path, argc, argv) != 0) return 1;
    sentinelAclInit();
    if (access(sentinel.configFile, W_OK) != 0) {
        fprintf(stderr, "Sentinel config file %s is not writable: %s. Exiting...\n", sentinel.configFile,
                strerror(errno));
        return 1;
    }
    if (server.cfg.daemonize) {
        if (fork() != 0) exit(0);
        setsid();
        int fd = open("/dev/null", O_RDWR);
        if (fd != -1) {
            dup2(fd, STDIN_FILENO);
            dup2(fd, STDOUT_FILENO);
            dup2(fd, STDERR_FILENO);
            if (fd > STDERR_FILENO) close(fd);
        }
    }
    if (server.cfg.pidfile && server.cfg.pidfile[0]) {
        FILE *fp = fopen(server.cfg.pidfile, "w");
        if (fp) {
            fprintf(fp, "%d\n", (int)getpid());
            fclose(fp);
        }
    }
    if (!sentinel.myid[0]) {
        randHex(sentinel.myid, 40);
        sentinel.myid[40] = '\0';
    }
    signal(SIGPIPE, SIG_IGN);
    signal(SIGTERM, sigtermHandler);
    signal(SIGINT, sigtermHandler);
    EventLoop *loop = eventLoopCreate(10000 + 128);
    connInit(loop);
    if (tlsStartup() != 0) return 1;
    if (sentinelListen() != 0) return 1;
    serverLog(LL_NOTICE, "Cairn %s (Redis %s compatible) running in sentinel mode, port %d, pid %d",
              CAIRN_VERSION, REDIS_COMPAT_VERSION, sentinel.port, (int)getpid());
    sentinelFlushConfig();
    serverLog(LL_WARNING, "Sentinel ID is %s", sentinel.myid);
    for (int i = 0; i < sentinel.nmasters; i++)
        sentinelEvent(LL_WARNING, "+monitor", sentinel.masters[i], " quorum %d", sentinel.masters[i]->quorum);
    /* --supervised: systemd waits for READY=1 (Type=notify); upstart for
     * the process to stop itself, as redis-sentinel's. */
    if (server.cfg.supervised == SUPERVISED_SYSTEMD ||
        (server.cfg.supervised == SUPERVISED_AUTODETECT && getenv("NOTIFY_SOCKET"))) {
        connNotifySystemd("STATUS=Ready to accept connections\n");
        connNotifySystemd("READY=1\n");
    } else if (server.cfg.supervised == SUPERVISED_UPSTART && getenv("UPSTART_JOB")) {
        raise(SIGSTOP);
        unsetenv("UPSTART_JOB");
    }
    eventAddTimer(loop, 100, sentinelTimer, NULL);
    eventSetBeforeSleep(loop, sentinelBeforeSleep);
    eventLoopRun(loop);
    return 0;
}
