/* client.h -- a connected client: its query buffer, protocol (the request
 * side: bytes to commands, proto/protocol.h), current command, reply
 * buffers and per-connection settings; and the reply API.
 *
 * Replies are appended to the client's reply buffer, then to a chain of
 * blocks; the event loop writes them before it sleeps.  The buffer starts
 * at 16 KB and is resized from cron as Redis 7.0 resizes its own (net.c:
 * shrunk to the recent peak, down to 1 KB, for a client whose replies are
 * small; doubled back, up to 16 KB, while replies fill it).  Every reply function
 * writes one reply item (proto/reply_sink.h) in the client's protocol
 * version (c->resp 2 or 3), or, for a client flagged CLIENT_REPLY_SINK,
 * hands it to c->sink instead (redis.call's Lua values).  A client
 * flagged CLIENT_CLOSE_AFTER_REPLY is closed once its replies are written;
 * nothing more is read from it. */
#ifndef CAIRN_CLIENT_H
#define CAIRN_CLIENT_H

#include <stddef.h>
#include <stdint.h>

#include "core/command.h"
#include "core/conn.h"
#include "db/db.h"
#include "ds/sds.h"
#include "proto/reply_sink.h"
#include "proto/protocol.h"

#define CLIENT_REPLY_BUF 16384    /* the reply buffer's first and largest size */
#define CLIENT_REPLY_BUF_MIN 1024 /* its smallest */

/* c->flags */
#define CLIENT_CLOSE_AFTER_REPLY (1u << 0) /* close once replies are written */
#define CLIENT_CLOSE_ASAP (1u << 1)        /* close at the next loop turn */
#define CLIENT_UNIX_SOCKET (1u << 2)
#define CLIENT_MULTI (1u << 3)
#define CLIENT_DIRTY_CAS (1u << 4)         /* a watched key changed */
#define CLIENT_DIRTY_EXEC (1u << 5)        /* queued-command error: EXECABORT */
#define CLIENT_BLOCKED (1u << 6)
#define CLIENT_PUBSUB (1u << 7)
#define CLIENT_MONITOR (1u << 8)
#define CLIENT_TRACKING (1u << 9)
#define CLIENT_NO_EVICT (1u << 10)
#define CLIENT_PENDING_WRITE (1u << 11)    /* in the loop's pending-write list */
#define CLIENT_REPLY_OFF (1u << 12)        /* CLIENT REPLY OFF */
#define CLIENT_REPLY_SKIP_NEXT (1u << 13)  /* CLIENT REPLY SKIP: skip the next */
#define CLIENT_REPLY_SKIP (1u << 14)       /* skipping the current command */
#define CLIENT_LUA (1u << 15)              /* the scripting pseudo-client */
#define CLIENT_PROTECTED (1u << 16)        /* must not be freed now */
#define CLIENT_EXECUTING (1u << 17)        /* running a command now */
#define CLIENT_FAKE (1u << 18)             /* made by clientCreateFake: no connection (Lua, AOF loading) */
#define CLIENT_NO_TOUCH (1u << 19)
#define CLIENT_READ_BATCHED (1u << 20)     /* read by this turn's batch: parse only */
#define CLIENT_PUSHING (1u << 21)          /* writing a push: CLIENT REPLY OFF|SKIP let it pass */
#define CLIENT_REPLY_SINK (1u << 22)       /* replies go to c->sink, not RESP bytes */
#define CLIENT_MASTER (1u << 23)           /* the link to our primary (src/repl) */
#define CLIENT_SLAVE (1u << 24)            /* a replica of ours (src/repl) */
/* Bits defined by upper layers (one list, so none is taken twice):
 * 25-26 server/cluster.h (READONLY, ASKING), 29-30 script/ldb.h (the Lua
 * debugger's); free: 27, 28, 31. */

/* A block of the reply chain.  Its bytes are refLen bytes at ref (a big
 * string value sent from where it lies: ref points into `pinned`, a string
 * this block holds a pin on, sds.h), then buf[0..used). */
typedef struct ReplyBlock {
    struct ReplyBlock *next;
    size_t size;       /* capacity of buf */
    size_t used;       /* bytes filled */
    int deferred;      /* a placeholder for a length set later */
    sds pinned;        /* NULL, or the string ref points into */
    const char *ref;
    size_t refLen;
    char buf[];
} ReplyBlock;

static inline size_t replyBlockLen(const ReplyBlock *b) { return b->refLen + b->used; }
/* Frees a block, dropping its pin. */
void replyBlockFree(ReplyBlock *b);

typedef struct Client {
    /* Fields every request touches come first, together, so that a request
     * reads few cache lines of its client. */
    uint64_t id;            /* CLIENT ID, unique, increasing */
    Connection *conn;       /* its connection; NULL: a fake client (clientIsFake) */
    unsigned flags;         /* CLIENT_* */
    int resp;               /* 2 or 3 */
    int authenticated;      /* passed AUTH (or no password set) */
    struct AclUser *user;   /* the ACL user it runs as; NULL: the default user */
    Db *db;                 /* selected database */
    long long lastInteraction; /* unix ms of last read/write (timeout, idle) */
    long long woff;            /* master_repl_offset after its last command (WAIT) */

    /* Input. */
    sds querybuf;           /* bytes read, not yet parsed past qbPos */
    size_t qbPos;           /* parsed up to here */
    size_t qbPeak;          /* recent peak size, for shrinking */
    const Protocol *proto;  /* the connection's protocol (RESP) */
    void *protoState;       /* its per-connection state */
    int argc;
    sds *argv;              /* current command, owned */
    size_t argvBytes;       /* sum of argument lengths (argv-mem) */
    int adoptedArg;         /* 1 + index of the argument a command kept as a
                             * stored value (clientAdoptArg), or 0 */
    Command *cmd, *lastcmd; /* current / last command run */

    /* Output (the bytes themselves: buf, then blocks). */
    char *buf;              /* the reply buffer (its own allocation) */
    size_t bufSize;         /* its usable size (CLIENT LIST rbs) */
    size_t bufpos;          /* used bytes of buf */
    size_t bufPeak;         /* most of buf used since the last peak reset (CLIENT LIST rbp) */
    long long bufPeakResetMs; /* when bufPeak was last reset */
    size_t sentlen;         /* bytes of the head (buf or first block) sent */
    ReplyBlock *replyHead, *replyTail;
    /* Open deferred lengths kept in buf (reply.c): the outer, then one
     * nested in it; the outer's length if it was set first. */
    char *bufDeferred[2];
    int bufDeferredCount;
    int bufDeferredOuterKind; /* ReplyAggregate, -1: not set yet */
    long bufDeferredOuterLen;
    size_t replyBytes;      /* bytes in blocks (obl/oll/omem), referenced ones included */
    size_t replyPinnedBytes; /* of which referenced (sent from pinned values) */
    unsigned long replyBlocks;
    size_t replyAllocBytes; /* the blocks' allocated sizes (a replica's share of
                             * mem_not_counted_for_evict) */
    long long obufSoftLimitReachedTime; /* client-output-buffer-limit soft */
    int errorReplied;       /* errors the current command replied that were not counted in errorstats */

    /* Links kept by the server. */
    struct Client *prevClient, *nextClient;   /* all clients list */
    struct Client *nextPendingWrite;          /* pending-write list */

    /* Feature state owned by later layers (transactions, pubsub, blocking,
     * scripting); opaque here so that core does not depend on them. */
    void *multiState;
    void *pubsubState;
    void *blockState;
    void *watchState;
    void *trackingState;
    void *replState;        /* CLIENT_SLAVE: its sync state (src/repl) */

    /* Rarely used. */
    sds name;               /* CLIENT SETNAME, NULL if none */
    sds libName, libVer;    /* CLIENT SETINFO */
    char addr[64];          /* peer "ip:port" or "path:0" for unix */
    char laddr[64];         /* local address */
    long long ctime;        /* creation, unix ms */
    ReplySink *sink;        /* with CLIENT_REPLY_SINK: takes the replies */
    /* Client eviction's bookkeeping (server/maxmemory.c): the bytes this
     * client was last counted at, and its place in a memory bucket. */
    size_t memCounted;
    int memBucket;          /* 1 + bucket index, 0: in none */
    struct Client *memPrev, *memNext;
} Client;

/* --- Reply API (all borrow their arguments) --- */
void replyRaw(Client *c, const void *p, size_t len);
void replyOk(Client *c);
void replyStatus(Client *c, const char *s);           /* +s */
void replyStatusLen(Client *c, const char *s, size_t len);
/* Error replies.  `err` is the full text after '-', e.g. "ERR syntax error"
 * or "WRONGTYPE Operation ...".  Text without an uppercase code word gets
 * "ERR " prepended; text starting with '-' is sent as is (scripts' error
 * tables), as Redis does.  Newlines are replaced by spaces.
 * Counts INFO errorstats and marks the command failed. */
void replyError(Client *c, const char *err);
/* An error already counted in errorstats (a script passing on the error
 * of a command it called). */
void replyErrorLenNoStats(Client *c, const char *err, size_t len);
void replyErrorLen(Client *c, const char *err, size_t len);
/* Counts an error (the final text, "CODE message") in INFO errorstats and
 * total_error_replies without replying it: one replied earlier where it
 * could not be counted (a module thread's). */
void replyCountError(const char *err, size_t len);
void replyErrorFormat(Client *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void replyErrorArity(Client *c);          /* wrong number of arguments for '<cmd>' command */
void replyErrorSyntax(Client *c);         /* ERR syntax error */
void replyErrorWrongType(Client *c);      /* WRONGTYPE ... */
void replyErrorNotInt(Client *c);         /* ERR value is not an integer or out of range */
void replyErrorNotFloat(Client *c);       /* ERR value is not a valid float */
void replyErrorOutOfRange(Client *c);     /* ERR value is out of range, must be positive? see errors.h */
void replyLongLong(Client *c, long long v);  /* :v */
void replyBulk(Client *c, const void *p, size_t len);
void replyBulkCString(Client *c, const char *s);  /* NULL => null bulk */
void replyBulkSds(Client *c, const sds s);
void replyBulkLongLong(Client *c, long long v);
/* A string value, or the part p[0..len) of o's string value.  A big raw
 * value (REPLY_PIN_MIN bytes or more) is not copied: the reply pins it
 * (sds.h) and the socket is written straight from it. */
void replyBulkKv(Client *c, const kvobj *o);
void replyBulkKvPart(Client *c, const kvobj *o, const char *p, size_t len);
#define REPLY_PIN_MIN (64 * 1024)
void replyNull(Client *c);        /* RESP2 $-1, RESP3 _ */
void replyNullArray(Client *c);   /* RESP2 *-1, RESP3 _ */
void replyArrayLen(Client *c, long n);
void replyMapLen(Client *c, long n);  /* RESP2: array of 2n */
void replySetLen(Client *c, long n);  /* RESP2: array of n */
void replyAttributeLen(Client *c, long n);
void replyPushLen(Client *c, long n); /* RESP2: array of n */
/* Brackets a push message (pub/sub message or confirmation, tracking
 * invalidation): it is not a reply, so CLIENT REPLY OFF|SKIP do not drop
 * it.  replyPushBegin returns the flag to hand back to replyPushEnd. */
unsigned replyPushBegin(Client *c);
void replyPushEnd(Client *c, unsigned saved);
void replyEmptyArray(Client *c);
void replyDouble(Client *c, double d);  /* RESP2 bulk, RESP3 ',' */
void replyLongDouble(Client *c, long double d); /* human-friendly bulk */
void replyBool(Client *c, int b);       /* RESP2 :1/:0, RESP3 #t/#f */
void replyBigNumber(Client *c, const char *num, size_t len);
void replyVerbatim(Client *c, const char *s, size_t len, const char *ext); /* RESP2 bulk */
/* Help text: "<CMD> <subcommand> [<arg> ...]. Subcommands are:" + lines +
 * "HELP" lines, as Redis formats them.  lines is NULL-terminated. */
void replyHelp(Client *c, const char **lines);
/* Unknown subcommand error: "ERR unknown subcommand 'x'. Try CMD HELP." */
void replySubcommandSyntaxError(Client *c);

/* Deferred lengths, for replies whose count is known only at the end. */
void *replyDeferredLen(Client *c);
void replySetDeferredArrayLen(Client *c, void *node, long n);
void replySetDeferredMapLen(Client *c, void *node, long n);
void replySetDeferredSetLen(Client *c, void *node, long n);
void replySetDeferredAttributeLen(Client *c, void *node, long n);

/* --- Argument helpers: parse or reply the error and return -1. --- */
int getLongLongOrReply(Client *c, const sds s, long long *out, const char *msg);
int getLongOrReply(Client *c, const sds s, long *out, const char *msg);
int getPositiveLongOrReply(Client *c, const sds s, long *out, const char *msg);
int getRangeLongOrReply(Client *c, const sds s, long min, long max, long *out, const char *msg);
int getDoubleOrReply(Client *c, const sds s, double *out, const char *msg);
int getLongDoubleOrReply(Client *c, const sds s, long double *out, const char *msg);
/* Case-insensitive compare of an argument with a literal. */
int argIs(const sds arg, const char *literal);

/* Look up a key for reading/writing and check its type: returns the entry,
 * NULL when absent; when present with another type replies WRONGTYPE and
 * sets *wrongType (pass NULL to not care, but then NULL is ambiguous). */
kvobj *lookupReadOrReply(Client *c, const sds key, int type, int *wrongType);
kvobj *lookupWriteOrReply(Client *c, const sds key, int type, int *wrongType);

/* Lifecycle (networking). */
/* Feature layers (transactions, pub/sub, blocking...) register a hook that
 * releases their per-client state when a client is freed. */
typedef void ClientFreeHook(Client *c);
void clientAddFreeHook(ClientFreeHook *hook);
/* Hooks run by RESET (and HELLO-less connection resets): leave MULTI,
 * unsubscribe, stop tracking, unblock. */
void clientAddResetHook(ClientFreeHook *hook);
void clientRunResetHooks(Client *c);
/* A client on conn, which it owns from now on (clientFree closes it); its
 * protocol is conn's listener's (RESP for a connection we made).  The
 * caller fills addr/laddr and registers conn's read handler. */
Client *clientCreate(Connection *conn);
/* A client without a connection (a script's caller, AOF loading, MULTI
 * replay): its replies are read by whoever runs it, never written. */
Client *clientCreateFake(void);
/* A fake client is one without a connection. */
static inline int clientIsFake(const Client *c) { return c->conn == NULL; }
/* Its socket's descriptor, -1 for a fake client (CLIENT LIST fd=). */
static inline int clientFd(const Client *c) { return c->conn ? connFd(c->conn) : -1; }
void clientFree(Client *c);
void clientFreeAsync(Client *c);  /* close at the next loop turn */
int clientSelectDb(Client *c, int id);  /* 0 ok, -1 out of range */
int clientHasPendingReplies(const Client *c);
size_t clientOutputBytes(const Client *c);
/* Drop the replies not yet written (a fake client's, once read). */
void clientDiscardReplies(Client *c);
/* Free the current command's argv. */
void clientResetArgv(Client *c);
/* Let the running command keep argv[i] as a stored value instead of copying
 * it (a big SET value).  Returns the string, or NULL when it cannot be
 * kept: the argv is not this client's own parsed command (a MULTI queue, a
 * script's call) or an argument was already kept.  Spare room is given
 * back first, which may move the string: argv[i] is updated, and the
 * caller must use the returned pointer.  It stays readable through argv[i] until
 * the command's argv is reset (effects, SLOWLOG, MONITOR see it), and only
 * then belongs to the value alone: nothing may change the value before
 * that, which holds because no other command runs in between. */
sds clientAdoptArg(Client *c, int i);

#endif
