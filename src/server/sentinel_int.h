/* sentinel_int.h -- Sentinel mode's shared state, between sentinel.c (links,
 * monitoring, commands) and sentinel_conf.c (its config file).  Not for
 * other files: Sentinel mode is separate from the data server. */
#ifndef CAIRN_SENTINEL_INT_H
#define CAIRN_SENTINEL_INT_H

#include <stddef.h>

#include "core/conn.h"
#include "core/event.h"
#include "ds/sds.h"

/* A parsed RESP value: type is the RESP2 prefix ('+', '-', ':', '$', '*');
 * a null bulk or array has ll == -1 and no str/elem. */
typedef struct RVal {
    char type;
    char *str;
    size_t len;
    long long ll;
    struct RVal **elem;
    long n;
} RVal;

void rvFree(RVal *v);
/* One value from buf: bytes taken (> 0), 0 incomplete, -1 error. */
long rvParse(const char *buf, size_t len, RVal **out);

typedef struct SInst SInst;
typedef void SReplyFn(SInst *ri, RVal *reply, void *priv);

typedef struct SReplyCb {
    SReplyFn *fn;
    void *priv;
    struct SReplyCb *next;
} SReplyCb;

typedef struct SLink {
    SInst *ri;
    Connection *conn; /* NULL: disconnected */
    int connected;    /* the connect completed */
    int pubsub;       /* replies without callbacks are messages */
    sds rbuf, wbuf;
    SReplyCb *head, *tail; /* one per command sent, in order */
    int pending;
    long long connectedAt, disconnectedAt;
    long long lastReconnect;
    long long lastActivity; /* pub/sub links: connect, or the last reply or message read */
} SLink;

#define SRI_MASTER 1
#define SRI_SLAVE 2
#define SRI_SENTINEL 4
#define SRI_S_DOWN 8
#define SRI_O_DOWN 16
#define SRI_MASTER_DOWN 32  /* a sentinel said the master is down */
#define SRI_INFO_PENDING 64 /* an INFO is in flight */
#define SRI_FAILOVER_IN_PROGRESS 128
#define SRI_PROMOTED 256
#define SRI_RECONF_SENT 512
#define SRI_RECONF_DONE 1024
#define SRI_FORCE_FAILOVER 2048 /* SENTINEL FAILOVER: no election */
#define SRI_MASTER_REBOOT 4096  /* rebooted (new run id), not yet PONGing */

/* A primary's failover state (Redis's SENTINEL_FAILOVER_STATE_*). */
enum {
    FO_NONE,
    FO_WAIT_START,
    FO_SELECT_SLAVE,
    FO_SEND_SLAVEOF_NOONE,
    FO_WAIT_PROMOTION,
    FO_RECONF_SLAVES,
    FO_UPDATE_CONFIG
};

struct SInst {
    int flags;
    char *name; /* master: its name; others "ip:port" */
    char *host; /* the address as configured or announced (a hostname with resolve-hostnames) */
    char *ip;   /* host resolved: what links connect to and addresses compare by */
    int port;
    char runid[41]; /* "" until known */
    SInst *master;  /* slaves and sentinels: theirs */
    SLink *cc, *pc; /* command link; pub/sub link (not sentinels) */
    long long createdAt;
    long long pingSentAt;   /* the pending PING's time, 0: none pending */
    long long lastPingSent; /* the last PING's time */
    long long actPing;      /* the oldest PING not validly answered, 0: none */
    long long lastAvail;    /* last valid PING reply */
    long long lastPong;     /* last PING reply of any kind */
    long long lastPingTry;
    long long infoRefresh; /* last INFO reply, 0: none yet */
    long long lastHelloSent;
    long long lastHelloRecv;
    long long sdownSince, odownSince;
    long long roleReportedTime;
    int roleReported; /* SRI_MASTER or SRI_SLAVE */
    long long downAfter;
    /* masters */
    int quorum;
    long long failoverTimeout;
    int parallelSyncs;
    char *authPass, *authUser;
    unsigned long long configEpoch;
    SInst **slaves;
    int nslaves;
    SInst **sentinels;
    int nsentinels;
    long long lastIsDownAsk;
    int failoverState;
    unsigned long long failoverEpoch;
    long long failoverStartTime, failoverStateChangeTime, failoverDelayLogged;
    SInst *promoted;
    char *pendingSwitchIp; /* a newer config heard in a hello */
    int pendingSwitchPort;
    unsigned long long pendingSwitchEpoch; /* its config epoch: configEpoch takes it at the switch */
    long long reconfSentTime; /* slaves: SLAVEOF sent */
    long long slaveConfChangeTime; /* slaves: created, turned replica, or its reported primary changed */
    /* slaves: from their INFO */
    long long masterLinkDownTime;
    int masterLinkUp;
    char *slaveMasterHost;
    int slaveMasterPort;
    int slavePriority;
    long long slaveReplOffset;
    int replicaAnnounced;
    /* sentinels: vote and master-down replies */
    char *leader;
    unsigned long long leaderEpoch;
    long long lastMasterDownReply;
    /* masters: scripts (NULL: none), renamed commands, reboot detection */
    char *notificationScript, *clientReconfigScript;
    char **renames; /* pairs: old name, new name */
    int nrenames;
    long long rebootDownAfter; /* master-reboot-down-after-period, 0: off */
    long long rebootSince;     /* SRI_MASTER_REBOOT set at */
    /* masters and slaves: the last INFO reply (SENTINEL INFO-CACHE) */
    sds info;
};

typedef struct Sentinel {
    char myid[41];
    unsigned long long currentEpoch;
    SInst **masters;
    int nmasters;
    char *configFile; /* absolute path */
    int port;
    char *bind[16];
    int nbind;
    int protectedMode;
    char *requirepass;
    char *announceIp;
    int announcePort;
    long long startMs;
    int tilt;
    long long tiltStart;
    long long prevTimer;
    int denyScriptsReconfig; /* default 1 */
    int simFailure;          /* SIMFAIL_* */
    char *sentinelUser, *sentinelPass; /* AUTH to other sentinels */
    int resolveHostnames, announceHostnames;
    unsigned long long clientsReceived, commandsProcessed;
    int nclients;
} Sentinel;

extern Sentinel sentinel;

#define SIMFAIL_CRASH_AFTER_ELECTION 1
#define SIMFAIL_CRASH_AFTER_PROMOTION 2

/* Sentinel's time parameters, in milliseconds (Redis's SENTINEL DEBUG
 * names; sentinel_tilt.c). */
typedef struct SentinelTunables {
    long long infoPeriod, pingPeriod, askPeriod, publishPeriod;
    long long defaultDownAfter, defaultFailoverTimeout;
    long long tiltTrigger, tiltPeriod;
    long long slaveReconfTimeout, minLinkReconnectPeriod, electionTimeout;
    long long scriptMaxRuntime, scriptRetryDelay;
} SentinelTunables;

extern SentinelTunables stun;

/* Publishes and logs an event (Redis's sentinelEvent; see sentinel.c);
 * a WARNING about an instance also runs its master's notification
 * script. */
void sentinelEvent(int level, const char *type, SInst *ri, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* As sentinelEvent, but the text is fmt alone: ri only chooses the
 * notification script (Redis's events whose format has no "%@"). */
void sentinelEventAbout(int level, const char *type, SInst *ri, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* sentinel_tilt.c */
void sentinelTunablesInit(void);
/* TILT: enters it when the timer ran late or the clock went back (call
 * once per timer run, with its time); 1 while Sentinel must not act. */
int sentinelTiltCheck(long long now);
/* SENTINEL DEBUG [name value ...]: the reply (RESP resp) appended to out. */
sds sentinelDebugCommand(sds out, int resp, int argc, sds *argv);
/* SENTINEL SIMULATE-FAILURE ...: the reply appended to out. */
sds sentinelSimulateFailureCommand(sds out, int argc, sds *argv);
/* Exits as Redis does for a simulated crash at the point `flag`. */
void sentinelSimFailureMaybeCrash(int flag);

/* sentinel_scripts.c: the queue of notification and reconfig scripts. */
/* Queues path with the NULL-terminated arguments. */
void sentinelScheduleScript(const char *path, ...);
/* Starts due scripts, reaps finished ones, kills timed-out ones. */
void sentinelScriptsTimer(void);
int sentinelScriptsRunning(void);
int sentinelScriptsQueued(void);
/* SENTINEL PENDING-SCRIPTS: the reply (RESP resp) appended to out. */
sds sentinelPendingScriptsReply(sds out, int resp);
/* The client-reconfig-script of m, as Redis's: name, role ("leader" or
 * "observer"), state, from ip and port, to ip and port. */
void sentinelCallReconfScript(SInst *m, int leader, const char *state, const char *fromIp, int fromPort,
                              const char *toIp, int toPort);

/* sentinel.c, for the commands (sentinel_client.c). */
int sentinelParseLL(const char *s, long long *out); /* 0, or -1: not an integer */
const char *sentinelInstTypeName(const SInst *ri);   /* "master", "slave", "sentinel" */
void sentinelInstRemoveAt(SInst **arr, int *n, int i);
/* Forgets m's replicas and sentinels (or its replicas only) and
 * reconnects (SENTINEL RESET, a switch). */
void sentinelResetMaster(SInst *m);
void sentinelResetMasterKeepSentinels(SInst *m);
/* Votes for runid as m's failover leader in reqEpoch when not voted yet. */
void sentinelVoteLeader(SInst *m, unsigned long long reqEpoch, const char *runid);
/* Flushes the config and exits 0 (SHUTDOWN, SIGTERM). */
void sentinelShutdown(void);
/* The replica a failover of m would promote now, NULL if none. */
SInst *sentinelSelectSlave(SInst *m, long long now);
/* Where m's primary is now (the promoted replica late in a failover). */
const SInst *sentinelCurrentMasterAddr(const SInst *m);
/* A hello message (PUBLISH __sentinel__:hello from a client, or the
 * pub/sub link). */
void sentinelProcessHello(const char *hello, size_t len);
/* SENTINEL MONITOR's checks and effect: NULL or the error. */
const char *sentinelAddMaster(const char *name, const char *ip, const char *portS, const char *quorumS,
                              SInst **out);

/* sentinel_client.c: clients of the sentinel (RESP2/RESP3, the commands
 * Sentinel mode has). */
/* Sends an event to the clients subscribed to its channel. */
void sentinelPublish(const char *channel, const char *msg);
/* Binds the listeners (bind/port) and accepts clients: 0, or -1 logged. */
int sentinelListen(void);
/* Runs the commands held by a CLIENT PAUSE that has ended (timer). */
void sentinelClientsResume(void);
/* Flushes the clients' output (the loop's before-sleep hook). */
void sentinelBeforeSleep(EventLoop *el);

/* Counters of the client layer (INFO stats; sentinel_info.c). */
typedef struct SentinelStats {
    long long netInput, netOutput; /* bytes read from / written to clients */
    long long reads, writes;       /* read and write calls */
    long long rejected;            /* connections refused (protected mode) */
    long long errorReplies;
} SentinelStats;
extern SentinelStats sstats;
/* sentinel_info.c: INFO [section ...]'s text; a sample for the rates. */
sds sentinelInfo(int argc, sds *argv);
void sentinelStatsSample(long long now);
/* sentinel_client.c, for INFO: the largest client input and output
 * buffers, and the channels and patterns subscribed (distinct). */
size_t sentinelClientsMaxInput(void);
size_t sentinelClientsMaxOutput(void);
void sentinelPubsubCounts(int *channels, int *patterns);

/* sentinel_command_data.c (generated): Sentinel mode's command table for
 * COMMAND (sentinel_command.c). */
typedef struct SentinelCommandInfo {
    const char *name;   /* full name: "ping", "sentinel|masters" */
    int arity;
    const char *categories; /* ACL categories without '@', space-separated */
    int isSub;
    const char *info2, *info3; /* COMMAND INFO entry, RESP2 / RESP3 */
    const char *docs2, *docs3; /* COMMAND DOCS value, RESP2 / RESP3 */
} SentinelCommandInfo;
extern const SentinelCommandInfo sentinelCommandTable[];
extern const int sentinelCommandCount;
/* COMMAND [COUNT|LIST|INFO|DOCS|GETKEYS|GETKEYSANDFLAGS ...]: the reply
 * (RESP resp) appended to out. */
sds sentinelCommandCommand(sds out, int resp, int argc, sds *argv);

/* sentinel_acl.c: Sentinel mode's ACL (acl.c over Sentinel's command
 * table; each client runs as a user through its bridge, a fake core
 * Client). */
struct Client;
struct AclUser;
/* Registers the command table with core and loads the users (the config's
 * `user` lines or aclfile, requirepass); exits with Redis's message when
 * they are invalid.  Once, after the config file is read. */
void sentinelAclInit(void);
/* A new client's bridge: the default user, authenticated unless it has a
 * password. */
struct Client *sentinelAclClientCreate(void);
void sentinelAclClientFree(struct Client *c);
/* Whether c's user may run argv (a known command): 0, or -1 after logging
 * the denial in ACL LOG and appending the NOPERM error to *out.  A command
 * whose subcommand is unknown or whose argc breaks its arity is allowed
 * here: its handler replies the error, as Redis's checks come first. */
int sentinelAclCheck(struct Client *c, int resp, int argc, sds *argv, sds *out);
/* AUTH / HELLO AUTH as user with pass: 0 (c now runs as user), or -1 after
 * logging the failure (argv: the command, for the log). */
int sentinelAclAuth(struct Client *c, int argc, sds *argv, const sds user, const sds pass);
/* Whether c must authenticate before running commands (NOAUTH). */
int sentinelAclAuthRequired(const struct Client *c);
/* Whether the default user needs no password (AUTH <pass>, protected mode). */
int sentinelAclDefaultNopass(void);
const char *sentinelAclUserName(const struct Client *c);
int sentinelAclHasUser(const struct Client *c, const struct AclUser *u);
/* The user named name, NULL if none (CLIENT KILL USER). */
struct AclUser *sentinelAclUserByName(const char *name, size_t len);
/* c back to the default user, unauthenticated (its user was removed). */
void sentinelAclDeauth(struct Client *c);
/* ACL <subcommand> ...: the reply (RESP resp) appended to out. */
sds sentinelAclCommand(struct Client *c, int resp, int argc, sds *argv, sds out);
/* A config line that is the ACL's (user, aclfile, requirepass,
 * acllog-max-len, acl-pubsub-default): *handled 1 and NULL or the error;
 * else *handled 0. */
const char *sentinelAclConfigLine(int argc, sds *argv, int linenum, const char *line, int *handled);
/* The `user` lines a rewrite writes (none with an aclfile): an array the
 * caller frees with sdsFreeSplitRes, NULL when none. */
sds *sentinelAclUserLines(int *count);
/* sentinel_client.c, for the ACL: ACL LOG's client-info of the client
 * whose bridge is c (CLIENT LIST's line), and closing the clients of a
 * removed user (current: after its reply). */
sds sentinelClientInfoOf(sds out, const struct Client *c);
void sentinelClientsCloseUser(struct AclUser *u, struct Client *current);
/* ... and of u's clients with a subscription denied() answers 1 for. */
void sentinelClientsCloseSubscribers(const struct AclUser *u,
                                     int (*denied)(const char *name, size_t len, int isPattern, void *arg), void *arg,
                                     struct Client *current);

/* The name to send for command `cmd` to ri (its master's rename-command). */
const char *sentinelMapCommand(const SInst *ri, const char *cmd);

SLink *linkCreate(SInst *ri, int pubsub);
void linkFree(SLink *l);
int linkConnect(SLink *l, const char *ip, int port);
int linkCommand(SLink *l, SReplyFn *fn, void *priv, int argc, const char **argv);

/* A hello message or subscription confirmation on ri's pub/sub link. */
void sentinelPubsubMessage(SInst *ri, RVal *msg);

/* Instances. */
/* A new instance at host:port (resolved as resolve-hostnames says), NULL
 * when the host does not resolve or the port is out of 0..65535. */
SInst *instCreate(int flags, const char *name, const char *host, int port, SInst *master);
/* host as an IP in ip (resolve-hostnames: a hostname too): 0, or -1. */
int sentinelResolve(const char *host, char *ip, size_t len);
/* The address to show for ri: its host with announce-hostnames, its IP
 * otherwise (Redis's announceSentinelAddr). */
const char *sentinelAnnounceHost(const SInst *ri);
void instFree(SInst *ri);
SInst *masterByName(const char *name);
SInst *slaveByAddr(SInst *m, const char *ip, int port);

/* sentinel_conf.c: the config file.  Load: 0, or -1 after printing the
 * error in Redis's format. */
int sentinelLoadConfig(const char *path, int argc, char **argv);
/* Rewrites the config file from the current state (atomically, comments
 * and other lines kept).  0 or -1 (errno). */
int sentinelFlushConfig(void);
/* One `sentinel ...` line's arguments (after the word sentinel), at load:
 * NULL, or the error text. */
const char *sentinelHandleConfigLine(int argc, sds *argv);

#endif
