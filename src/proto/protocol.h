/* protocol.h -- the request side of a connection's protocol: bytes in,
 * commands (argv) out.
 *
 * A connection (core/client.h) holds a Protocol, a table of operations,
 * and that protocol's per-connection state.  The network layer owns the
 * socket and the pending buffer of bytes read and not yet consumed; it
 * never looks inside the bytes.  For each batch of bytes it asks the
 * protocol for the next command until the protocol needs more:
 *
 *     for (;;) {
 *         st = proto->next(state, qb + pos, qblen - pos, &lim, &cmd);
 *         pos += cmd.consumed;
 *         if (st == PROTO_INCOMPLETE) break;            // read more
 *         if (st == PROTO_ERROR) {                      // cmd.err says why
 *             reply the error, close after the replies; break;
 *         }
 *         if (cmd.argc == 0) continue;                  // nothing to run
 *         run cmd.argv...
 *         proto->recycle(state, cmd.argv, cmd.argc);    // or keep it
 *     }
 *
 * The caller owns a command it was handed: it gives it back with recycle
 * (the protocol may keep the array and strings for the next commands), or
 * keeps it (a MULTI queue) and frees it with sdsFree/xfree.  Where the next
 * read should go is the protocol's call too (directRoom): a protocol may
 * read a large argument straight into the string that will hold it.
 *
 * Replies are the other half and not part of this table: the reply API
 * (core/client.h) writes RESP bytes directly on the hot path, and hands
 * typed items to the client's ReplySink (proto/reply_sink.h, c->sink with
 * CLIENT_REPLY_SINK) for any other consumer.  A protocol whose replies are
 * not RESP (the HTTP/JSON gateway) installs such a sink on its connections
 * and encodes there.
 *
 * RESP (proto/resp_parse.h, respProtocol) is the one implementation today.
 * A second protocol is one module defining a Protocol and its state, and
 * the listener that gives its connections that Protocol. */
#ifndef CAIRN_PROTOCOL_H
#define CAIRN_PROTOCOL_H

#include <stddef.h>

#include "ds/sds.h"

typedef enum { PROTO_INCOMPLETE, PROTO_COMPLETE, PROTO_ERROR } ProtoStatus;

/* What the server allows this connection right now. */
typedef struct ProtoLimits {
    long long maxBulkLen; /* proto-max-bulk-len: the longest argument */
    int authRequired;     /* not yet authenticated while a password is set */
} ProtoLimits;

/* One call's result.  consumed is always set (bytes at the front of the
 * buffer the caller may drop); the rest after PROTO_COMPLETE (argv NULL
 * when argc is 0) or PROTO_ERROR (err: the error text, without "ERR "). */
typedef struct ProtoCommand {
    size_t consumed;
    sds *argv;
    int argc;
    size_t argvBytes; /* sum of the argument lengths */
    const char *err;
} ProtoCommand;

/* What a command still being read holds (CLIENT LIST qbuf and argv-mem,
 * a client's memory): its arguments received whole, and the big argument
 * being read into its own string, counted by its declared size as Redis
 * counts the query buffer it sizes for it. */
typedef struct ProtoPartial {
    int argc;            /* arguments received whole */
    size_t argvBytes;    /* their lengths */
    size_t bulkDeclared; /* the big argument's declared length + 2; 0: none */
    size_t bulkReceived; /* bytes of it received */
} ProtoPartial;

typedef struct Protocol {
    const char *name;
    /* Per-connection state: a new one, and its release (with anything a
     * half-parsed command holds). */
    void *(*create)(void);
    void (*free)(void *state);
    /* Parses at most one command from buf[0..len); see the loop above.
     * After PROTO_ERROR the state is not fed again. */
    ProtoStatus (*next)(void *state, const char *buf, size_t len, const ProtoLimits *lim, ProtoCommand *out);
    /* Takes back a command handed out by next (argv may be NULL, and
     * elements NULL: skipped). */
    void (*recycle)(void *state, sds *argv, int argc);
    /* 1 if argv is the command next handed out last, not yet given back
     * (its strings are plain sds a command may keep: clientAdoptArg). */
    int (*handedOut)(const void *state, const sds *argv);
    /* Gives back what the state keeps for reuse (an idle connection), and
     * how many bytes that is (CLIENT LIST tot-mem, INFO). */
    void (*trim)(void *state);
    size_t (*spareBytes)(const void *state);
    /* Bytes of a command being read held outside the pending buffer
     * (counted against client-query-buffer-limit). */
    size_t (*pendingBytes)(const void *state);
    /* With the pending buffer empty: 1 and where to read() next (*dst,
     * *room > 0) when the bytes should go straight into the protocol's
     * own memory; 0 to read into the pending buffer.  directWrote accounts
     * n bytes written there; then next is called as usual. */
    int (*directRoom)(void *state, char **dst, size_t *room);
    void (*directWrote)(void *state, size_t n);
    /* Fills *out (all zero when no command is being read). */
    void (*partial)(const void *state, ProtoPartial *out);
} Protocol;

#endif
