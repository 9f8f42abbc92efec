/* repl_int.h -- the replication state shared by primary.c, replica.c and
 * repl.c (private to src/repl).
 *
 * Offsets are Redis's: master_repl_offset counts every byte of the stream
 * this server produced (a primary) or applied (a replica); the backlog
 * holds the last histlen of them, the first at backlogOff.  A replica
 * always has a backlog once synced, so its applied offset is `offset`. */
#ifndef CAIRN_REPL_INT_H
#define CAIRN_REPL_INT_H

#include <sys/types.h>

#include "core/client.h"
#include "ds/sds.h"

/* The smallest backlog (CONFIG SET repl-backlog-size raises a smaller one). */
#define REPL_BACKLOG_MIN (16 * 1024)

/* The replica side's link, as ROLE names it. */
enum {
    LINK_NONE = 0,   /* a primary */
    LINK_CONNECT,    /* to connect */
    LINK_CONNECTING, /* connecting (non-blocking) */
    LINK_RECV_PONG,  /* PING sent */
    LINK_RECV_AUTH,  /* AUTH sent (pipelined with the REPLCONFs) */
    LINK_RECV_PORT,
    LINK_RECV_IP,
    LINK_RECV_CAPA,
    LINK_RECV_PSYNC, /* PSYNC sent */
    LINK_TRANSFER,   /* receiving the RDB */
    LINK_CONNECTED,
};

/* repl-diskless-load, as config.c's enum numbers it. */
enum { DISKLESS_LOAD_DISABLED = 0, DISKLESS_LOAD_ON_EMPTY_DB = 1, DISKLESS_LOAD_SWAPDB = 2 };

/* The replication stream is held once, in a list of blocks that is the
 * backlog and that every replica reads at its own place (Redis 7.0's
 * shared replication buffer).  A block is freed from the head once no
 * replica reads it and the history after it covers the backlog size. */
typedef struct ReplBlock {
    struct ReplBlock *next;
    long long off;  /* stream offset of buf[0] (the first byte is offset 1) */
    long long seq;  /* position in the list, for counting blocks */
    size_t size, used;
    int refs;       /* replicas whose place is in this block */
    char buf[];
} ReplBlock;

/* A replica of ours: c->replState (also set by REPLCONF before PSYNC). */
enum { RSTATE_NONE = 0, RSTATE_WAIT_BGSAVE_START, RSTATE_WAIT_BGSAVE_END, RSTATE_SEND_BULK, RSTATE_ONLINE };
#define CAPA_EOF 1
#define CAPA_PSYNC2 2
typedef struct Replica {
    int state;           /* RSTATE_* */
    int onlineOnAck;     /* diskless: the stream waits for the first ACK */
    int preSync;         /* SYNC, not PSYNC: no +FULLRESYNC line, no ACKs */
    int capa;            /* CAPA_* */
    int rdbOnly;         /* REPLCONF rdb-only 1: the RDB, then closed */
    int exclude;         /* REPLCONF rdb-filter-only: RDB_EXCLUDE_* */
    int port;            /* REPLCONF listening-port */
    char ip[64];         /* REPLCONF ip-address, "" for the peer's */
    long long ackOff, ackMs;
    long long aofAckOff; /* REPLCONF ACK ... FACK <off>: its AOF is fsynced up to there (WAITAOF) */
    long long waitSinceMs; /* entered RSTATE_WAIT_BGSAVE_START */
    /* Its place in the shared buffer: the next byte of the stream to copy
     * to its socket is blk->buf[pos] (blk holds a reference).  Set from
     * the +FULLRESYNC offset while its RDB goes (copying starts once it is
     * online) or from the PSYNC offset; NULL before its sync starts. */
    ReplBlock *blk;
    size_t pos;
    long long softSinceMs; /* over the replica soft output limit since, 0: not */
} Replica;

typedef struct ReplState {
    char replid[41], replid2[41];
    long long offset;       /* master_repl_offset */
    long long secondOffset; /* second_repl_offset, -1 when none */
    /* The backlog: the shared buffer's blocks, oldest first; it holds at
     * least backlogSize bytes of history once there are that many, more
     * while a lagging replica still reads older blocks. */
    int backlogOn;
    ReplBlock *bufHead, *bufTail;
    size_t bufMem;          /* the blocks' allocation */
    long long blockSeq;
    long long backlogSize, histlen, backlogOff;
    long long noReplicasSinceMs;
    int selDb;              /* the stream's database, -1: SELECT next */
    Client **replicas;
    int nreplicas;
    int goodReplicas;       /* online with lag <= min-replicas-max-lag */
    int getackPending;      /* a WAIT needs REPLCONF GETACK sent */
    /* The replica side (masterHost NULL on a primary). */
    char *masterHost;
    int masterPort;
    int link;               /* LINK_* */
    Connection *conn;       /* handshake / transfer link, NULL: none */
    Client *master;
    int haveCached;         /* PSYNC our replid/offset (else ? -1) */
    int cachedDb;
    long long linkDownSinceMs; /* 0: never up */
    long long lastIoMs, nextConnectMs;
    sds rbuf;               /* handshake and transfer bytes not used yet */
    char pendingReplid[41]; /* from +FULLRESYNC */
    long long pendingOffset;
    int xferFd;             /* temporary RDB file */
    int xferMem;            /* repl-diskless-load: parsed from the socket */
    char xferTmp[128];
    long long xferSize;     /* -1: EOF-marked, -2: before the "$" line */
    long long xferRead;     /* to the file, or consumed by the parser */
    char xferMark[41];
    char xferTail[40];      /* the last 40 bytes read (mark check) */
    int applying;           /* running the primary's command */
    long long statFullSyncs, statPartialOk, statPartialErr;
} ReplState;

extern ReplState repl;

/* repl.c */
void replNewId(char *id);
void replBacklogCreate(void);
void replBacklogFree(void);
/* Appends to the shared buffer (offset advances); the replicas online get
 * it copied to their sockets (those over their output limit are
 * dropped). */
void replFeedStream(const char *p, size_t len);
/* A replica's place in the buffer: set to stream offset `from` (between
 * backlogOff and offset + 1), or dropped. */
void replReplicaSetPosition(Replica *r, long long from);
void replReplicaDropPosition(Replica *r);
/* Copy to an online replica's socket output what it has not taken yet, up
 * to a small window; for all of them before the loop sleeps. */
void replReplicaPump(Client *c);
void replPumpAll(void);
/* client-output-buffer-limit replica, from the timer too. */
void replCheckReplicaLimits(void);
void replDisconnectReplicas(void);
void replSetReplicaMode(int on);

/* failover.c */
enum { FAILOVER_NONE = 0, FAILOVER_WAIT_SYNC, FAILOVER_IN_PROGRESS };
int failoverState(void);
const char *failoverStateName(void);
void failoverCron(void);
void failoverAbort(const char *why);
/* The target answered our PSYNC FAILOVER: accepted (+CONTINUE or
 * +FULLRESYNC) or not. */
void failoverPsyncDone(int accepted);
const char *replReplicaIp(const Client *c, char *buf, size_t len);
/* A replica as Redis's log lines name it: "ip:listening-port" (the
 * announced ip, else the peer's), "ip:<unknown-replica-port>" before its
 * REPLCONF listening-port. */
const char *replReplicaName(const Client *c, char *buf, size_t len);

/* primary.c */
void primaryCron(int everySecond);
void primaryBeforeSleep(void);
void primaryClientFreed(Client *c);
/* Counts the online replicas whose lag is within min-replicas-max-lag. */
void primaryRefreshGoodReplicas(void);
int primaryWaitingClients(void);
/* Every client blocked in WAIT gets the error err (without the "-") and is
 * closed once it is written (the server became a replica). */
void primaryDisconnectWaiters(const char *err);

/* replica_keys.c: a writable replica's own keys with a TTL. */
struct Effect;
void replicaKeysNoteEffects(const struct Effect *ops, int count);
void replicaKeysCron(void);
void replicaKeysForget(void);
size_t replicaKeysCount(void);

/* replica.c */
void replicaCron(int everySecond);
void replicaClientFreed(Client *c);
void replicaSendAck(void);
void replicaSetPrimary(const char *host, int port);
void replicaUnsetPrimary(void);
const char *replicaLinkName(void);
sds replicaInfoLines(sds s);

#endif
