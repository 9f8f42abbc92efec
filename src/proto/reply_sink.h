/* reply_sink.h -- the protocol-neutral reply interface.
 *
 * A command states its reply as a sequence of typed items; a sink turns
 * them into what its consumer reads.  The server's reply API
 * (replyXxx(Client *, ...) in core/client.h) maps each call onto one of
 * these items and applies what is the server's business (error counting,
 * "ERR " prefixes, CLIENT REPLY OFF) before a sink sees anything, so a sink
 * only encodes.  RESP connections do not go through this table: the reply
 * API writes their bytes directly with proto/resp_write.h (one flag test
 * per reply decides).  Other consumers install a sink on their client:
 * script/engine.c builds Lua values for redis.call, a second protocol (the
 * HTTP gateway) would build its own encoding.
 *
 * Item grammar, the same as RESP3's:
 *   - an aggregate header of n announces the next n items (2n for a map or
 *     an attribute: key, value, key, value...);
 *   - an attribute annotates the item that follows it and does not count
 *     as an item of the aggregate around it;
 *   - deferred() opens an aggregate whose kind and length are given later
 *     by setDeferred(), once its items have been sent; the handle it
 *     returns is only good for that one setDeferred();
 *   - a reply is one item (possibly an aggregate with nested items).
 * The protocol version (RESP2 or RESP3 semantics: what a map, a double, a
 * null become) is the sink's own setting, fixed when it is installed.
 *
 * Nothing here knows a server type: this header is free of server
 * includes. */
#ifndef CAIRN_REPLY_SINK_H
#define CAIRN_REPLY_SINK_H

#include <stddef.h>

#include "proto/push.h"

/* Aggregate kinds. */
typedef enum {
    REPLY_ARRAY,
    REPLY_MAP,       /* n pairs */
    REPLY_SET,
    REPLY_PUSH,      /* out-of-band data (pub/sub, invalidations) */
    REPLY_ATTRIBUTE, /* n pairs annotating the next item */
} ReplyAggregate;

/* RESP2 has two nulls: a missing string and a missing array. */
typedef enum { REPLY_NULL_BULK, REPLY_NULL_ARRAY } ReplyNullKind;

typedef struct ReplySink ReplySink;

/* One sink implementation.  All text arguments are borrowed for the call. */
typedef struct ReplySinkType {
    const char *name;
    void (*status)(ReplySink *s, const char *p, size_t len);
    /* The final error text ("ERR message", "WRONGTYPE ..."), without the
     * protocol's '-' and line end; never contains CR or LF. */
    void (*error)(ReplySink *s, const char *p, size_t len);
    void (*integer)(ReplySink *s, long long v);
    void (*dbl)(ReplySink *s, double d);
    void (*bulk)(ReplySink *s, const char *p, size_t len);
    void (*null)(ReplySink *s, ReplyNullKind kind);
    void (*boolean)(ReplySink *s, int b);
    void (*bigNumber)(ReplySink *s, const char *p, size_t len);
    /* ext is exactly 3 characters ("txt", "mkd"). */
    void (*verbatim)(ReplySink *s, const char *p, size_t len, const char *ext);
    /* A negative n is a null aggregate (RESP2 "*-1"). */
    void (*aggregate)(ReplySink *s, ReplyAggregate kind, long n);
    /* Returns a non-NULL handle for setDeferred. */
    void *(*deferred)(ReplySink *s);
    void (*setDeferred)(ReplySink *s, void *node, ReplyAggregate kind, long n);
    /* Pre-encoded RESP bytes (replyRaw: a replica link's stream, GEO's
     * RESP3 doubles).  NULL: the sink cannot take them and they are
     * dropped. */
    void (*raw)(ReplySink *s, const char *p, size_t len);
    /* A push item (proto/push.h: a published message, an invalidation, a
     * MONITOR line, a subscription's confirmation) for the sink's client,
     * to render as the sink's format does.  NULL: a confirmation (the
     * reply to the client's own command) and tracking-redir-broken come as
     * reply items instead (a push aggregate of their fields), the rest are
     * dropped. */
    void (*push)(ReplySink *s, const PushItem *item);
} ReplySinkType;

/* Embedded first in each implementation's state. */
struct ReplySink {
    const ReplySinkType *type;
};

#endif
