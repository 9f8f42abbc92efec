/* push.c -- delivering push items to clients (see push.h): the per-client
 * checks, the sink fallback and the per-encoder renderings of a fan-out.
 *
 * Invariant: f->bytes[0..f->rendered) hold f->item as rendered by
 * f->enc[0..f->rendered), and f->p / f->len say where and how long; the
 * buffers past f->rendered are spare (or NULL).  More than PUSH_FANOUT_ENCODERS encoders in one fan-out:
 * the extra ones render into a temporary buffer per receiver. */
#include "core/push.h"

#include "core/reply_write.h"

/* A confirmation or tracking-redir-broken to a sink without `push`: the
 * aggregate of its fields, as reply items (which the sink receives, CLIENT
 * REPLY OFF notwithstanding: it is a push). */
static void pushAsItems(Client *c, const PushItem *it) {
    unsigned saved = replyPushBegin(c);
    if (it->kind == PUSH_TRACKING_REDIR_BROKEN) {
        replyPushLen(c, 2);
        replyBulkCString(c, pushKindName(it->kind));
    } else {
        replyPushLen(c, 3);
        replyBulkCString(c, pushKindName(it->kind));
        if (it->channel.p) replyBulk(c, it->channel.p, it->channel.len);
        else replyNull(c);
    }
    replyLongLong(c, it->count);
    replyPushEnd(c, saved);
}

/* The slow checks (push.h); 1 when the item was dealt with here (dropped
 * or given to a sink), 0 when c's encoder renders it. */
static int pushSlow(Client *c, const PushItem *it) {
    unsigned f = c->flags;
    if (f & CLIENT_CLOSE_ASAP) return 1;
    if (it->kind == PUSH_MONITOR && (f & (CLIENT_REPLY_OFF | CLIENT_REPLY_SKIP))) return 1;
    if (!(f & CLIENT_REPLY_SINK)) return 0;
    ReplySink *k = c->sink;
    if (k->type->push) k->type->push(k, it);
    else if (pushIsConfirmation(it->kind) || it->kind == PUSH_TRACKING_REDIR_BROKEN) pushAsItems(c, it);
    return 1;
}

void pushFanoutBegin(PushFanout *f, const PushItem *item) {
    f->item = item;
    f->rendered = 0;
}

void pushFanoutDeliverSlow(PushFanout *f, Client *c) {
    if ((c->flags & PUSH_SLOW_FLAGS) && pushSlow(c, f->item)) return;
    const PushEncoder *e = clientPushEncoder(c);
    int i = 0;
    while (i < f->rendered && f->enc[i] != e) i++;
    if (i == f->rendered) {
        if (i == PUSH_FANOUT_ENCODERS) {
            sds tmp = e->render(sdsEmpty(), f->item);
            replyWriteBytes(c, tmp, sdsLen(tmp));
            sdsFree(tmp);
            return;
        }
        sds b = f->bytes[i] ? f->bytes[i] : sdsEmpty();
        sdsClear(b);
        b = e->render(b, f->item);
        f->bytes[i] = b;
        f->enc[i] = e;
        f->p[i] = b;
        f->len[i] = sdsLen(b);
        f->rendered++;
    }
    replyWriteBytes(c, f->p[i], f->len[i]);
}

void pushFanoutEnd(PushFanout *f, size_t keep) {
    f->item = NULL;
    f->rendered = 0;
    for (int i = 0; i < PUSH_FANOUT_ENCODERS; i++) {
        if (f->bytes[i] && (keep == 0 || sdsAllocSize(f->bytes[i]) > keep)) {
            sdsFree(f->bytes[i]);
            f->bytes[i] = NULL;
        }
    }
}

/* The single-receiver deliveries share one fan-out's buffers. */
#define PUSH_SCRATCH_KEEP 4096
static PushFanout scratch;

void replyPush(Client *c, const PushItem *item) {
    pushFanoutBegin(&scratch, item);
    pushFanoutDeliverSlow(&scratch, c);
    pushFanoutEnd(&scratch, PUSH_SCRATCH_KEEP);
}
