/* push.h -- delivering push items (proto/push.h) to clients.
 *
 * Pub/sub, client-side caching and MONITOR state what they send as typed
 * items; this file renders an item with the receiving client's encoder
 * (clientPushEncoder) and appends the bytes with the byte-writer
 * (core/reply_write.h).  A fan-out (one item to many clients) renders the
 * item once per encoder in use and copies those bytes to each receiver.
 *
 * Per item and client, before any rendering:
 *   - a client closing (CLIENT_CLOSE_ASAP) gets nothing;
 *   - a MONITOR line is a reply in Redis's sense: CLIENT REPLY OFF|SKIP
 *     drop it; every other item is a push and passes them;
 *   - a client whose replies go to a sink (CLIENT_REPLY_SINK) gets the
 *     item through the sink's `push` (proto/reply_sink.h), or without one,
 *     a confirmation or tracking-redir-broken as reply items, the rest not
 *     at all.
 * Delivery does not re-count the client for client eviction; callers that
 * fan out do (netClientMemoryHook), as before. */
#ifndef CAIRN_CORE_PUSH_H
#define CAIRN_CORE_PUSH_H

#include "core/client.h"
#include "core/reply_write.h"
#include "proto/push.h"
#include "proto/resp_push.h"

/* The encoder that renders push items for c.  The one place that chooses:
 * today by the client's HELLO version; a listener that names an encoder
 * for its connections replaces this choice here. */
static inline const PushEncoder *clientPushEncoder(const Client *c) {
    return c->resp >= 3 ? &respPushEncoder3 : &respPushEncoder2;
}

/* Delivers one item to one client (rendered for it alone). */
void replyPush(Client *c, const PushItem *item);

/* One item on its way to many clients: each encoder's rendering, made at
 * its first receiver and reused for the others.  The rendering buffers
 * outlive the item (pushFanoutBegin reuses them), so a caller that fans
 * out often keeps one PushFanout; zero-initialised is ready. */
#define PUSH_FANOUT_ENCODERS 4
typedef struct PushFanout {
    const PushItem *item;                          /* borrowed until the next Begin/End */
    int rendered;                                  /* slots holding item's bytes */
    const PushEncoder *enc[PUSH_FANOUT_ENCODERS];  /* slot -> its encoder */
    const char *p[PUSH_FANOUT_ENCODERS];           /* slot -> the rendering (in bytes[slot]) */
    size_t len[PUSH_FANOUT_ENCODERS];              /* and its length */
    sds bytes[PUSH_FANOUT_ENCODERS];               /* slot -> buffer (kept across items) */
} PushFanout;

/* Starts delivering item (forgets the previous item's renderings). */
void pushFanoutBegin(PushFanout *f, const PushItem *item);
/* Ends the item: frees the buffers larger than keep bytes (0: all). */
void pushFanoutEnd(PushFanout *f, size_t keep);

/* Any of these takes a delivery off the fast path (push.h's rules). */
#define PUSH_SLOW_FLAGS (CLIENT_CLOSE_ASAP | CLIENT_REPLY_SINK | CLIENT_REPLY_OFF | CLIENT_REPLY_SKIP)

/* The general case of pushFanoutDeliver. */
void pushFanoutDeliverSlow(PushFanout *f, Client *c);

/* Delivers the current item to c.  Inline for the common receiver of a
 * big fan-out: no slow flag, the first encoder's rendering. */
static inline void pushFanoutDeliver(PushFanout *f, Client *c) {
    if (__builtin_expect(!(c->flags & PUSH_SLOW_FLAGS) && f->rendered && f->enc[0] == clientPushEncoder(c), 1)) {
        replyWriteBytes(c, f->p[0], f->len[0]);
        return;
    }
    pushFanoutDeliverSlow(f, c);
}

#endif
