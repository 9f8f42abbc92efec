/* push.h -- typed push items: what the server sends a client that is not
 * (only) the reply to its command, and the interface of the encoders that
 * render them.
 *
 * A push item says what happened (a message was published on a channel, a
 * key a client cached changed, a command ran under MONITOR, a subscription
 * was confirmed), never how it looks on the wire.  Each encoder renders an
 * item in its own format: RESP2 and RESP3 (proto/resp_push.c), later JSON.
 * The server (core/push.h) picks the encoder per receiving client and, for
 * a fan-out (a PUBLISH to many subscribers), renders each item once per
 * encoder and copies the same bytes to every receiver that uses it.
 *
 * Items borrow every byte they point to: an item lives for the call that
 * delivers it.  Nothing here knows a server type: this header is free of
 * server includes. */
#ifndef CAIRN_PUSH_H
#define CAIRN_PUSH_H

#include <stddef.h>

#include "ds/sds.h"

typedef enum {
    /* A published message: channel, payload (pattern too for PMESSAGE). */
    PUSH_MESSAGE,
    PUSH_PMESSAGE,
    PUSH_SMESSAGE, /* SPUBLISH's, to SSUBSCRIBE clients */
    /* The confirmation of one (un)subscription, the reply of the (un)
     * subscribe family: name (p NULL: the client had none to drop), and
     * count, the subscriptions of its namespace the client still holds
     * (channels and patterns together, or shard channels). */
    PUSH_SUBSCRIBE,
    PUSH_UNSUBSCRIBE,
    PUSH_PSUBSCRIBE,
    PUSH_PUNSUBSCRIBE,
    PUSH_SSUBSCRIBE,
    PUSH_SUNSUBSCRIBE,
    /* Client-side caching: keys[0..nkeys) changed, or (keys NULL) every
     * key did (a flush).  Sent to the tracking client, or to the client it
     * redirects to. */
    PUSH_INVALIDATE,
    /* The client a tracking client redirects to is gone: count is its id. */
    PUSH_TRACKING_REDIR_BROKEN,
    /* One MONITOR line: payload is the text ("<time> [<db> <addr>]
     * <args>"), one line, no line end. */
    PUSH_MONITOR,
} PushKind;

/* A borrowed byte string. */
typedef struct PushBytes {
    const char *p;
    size_t len;
} PushBytes;

/* PUSH_INVALIDATE flush only: RESP's null for "every key" is written in
 * the tracking client's protocol version, also when the item goes to a
 * redirect target of the other version (as Redis 7.0 writes it).  Set
 * when the tracking client speaks RESP3; other encoders ignore it. */
#define PUSH_FLAG_NULL_RESP3 (1u << 0)

typedef struct PushItem {
    PushKind kind;
    unsigned flags;          /* PUSH_FLAG_* */
    PushBytes channel;       /* messages: the channel; confirmations: the name */
    PushBytes pattern;       /* PUSH_PMESSAGE: the pattern that matched */
    PushBytes payload;       /* messages: the message; PUSH_MONITOR: the line */
    long long count;         /* confirmations: subscriptions left; redir-broken: the id */
    const PushBytes *keys;   /* PUSH_INVALIDATE: the keys, NULL: a flush */
    size_t nkeys;
} PushItem;

/* The word a RESP or JSON rendering names the item by ("message",
 * "subscribe", "invalidate", ...); "" for PUSH_MONITOR. */
const char *pushKindName(PushKind kind);

/* True for the (un)subscribe confirmations: they answer the receiving
 * client's own command. */
static inline int pushIsConfirmation(PushKind kind) { return kind >= PUSH_SUBSCRIBE && kind <= PUSH_SUNSUBSCRIBE; }

/* An encoder of push items: one per wire format. */
typedef struct PushEncoder {
    const char *name;
    /* 1: the format can carry an item the client did not subscribe to
     * (an invalidation for a tracking client itself, tracking-redir-broken):
     * RESP3's push type.  0: only messages on channels the client
     * subscribed to can reach it (RESP2, whose subscribed mode reads
     * nothing else), so invalidations go only to a redirect target in
     * subscribed mode, as a message on __redis__:invalidate. */
    int unsolicited;
    /* Appends the item's bytes to out and returns it (sds rules). */
    sds (*render)(sds out, const PushItem *item);
} PushEncoder;

#endif
