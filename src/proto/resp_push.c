/* resp_push.c -- the RESP2 and RESP3 encoders of push items (proto/push.h).
 *
 * Every item is one aggregate whose first element names it, except a
 * MONITOR line, a status line in both versions:
 *
 *   item              RESP3 (push)                        RESP2 (array)
 *   message           >3 message <channel> <payload>      *3 ...
 *   pmessage          >4 pmessage <pattern> <ch> <pl>     *4 ...
 *   smessage          >3 smessage <channel> <payload>     *3 ...
 *   (un)subscribe...  >3 <word> <name or null> :<count>   *3 ... ($-1 for null)
 *   invalidate        >2 invalidate <keys>                *3 message __redis__:invalidate <keys>
 *   redir broken      >2 tracking-redir-broken :<id>      *2 ...
 *   monitor           +<line>                             same
 *
 * <keys> is an array of bulk strings, or for a flush a null in the
 * tracking client's version (PUSH_FLAG_NULL_RESP3: _, else $-1).  RESP2
 * has no out-of-band type: an invalidation reaches a RESP2 client only as
 * a message of the channel __redis__:invalidate (tracking REDIRECT to a
 * subscribed client), and redir-broken never does (the tracking layer asks
 * `unsolicited` first). */
#include "proto/resp_push.h"

#include <string.h>

#include "proto/resp_write.h"

static sds catName(sds s, PushKind kind) {
    const char *w = pushKindName(kind);
    return respCatBulk(s, w, strlen(w));
}

static sds catInteger(sds s, long long v) {
    char b[RESP_HEADER_MAX];
    return sdsCatLen(s, b, respWriteInteger(b, v));
}

/* The keys of an invalidation: an array of bulks, or a flush's null. */
static sds catKeys(sds s, const PushItem *it) {
    if (!it->keys) return it->flags & PUSH_FLAG_NULL_RESP3 ? sdsCatLen(s, "_\r\n", 3) : sdsCatLen(s, "$-1\r\n", 5);
    s = respCatHeader(s, '*', it->nkeys);
    for (size_t i = 0; i < it->nkeys; i++) s = respCatBulk(s, it->keys[i].p, it->keys[i].len);
    return s;
}

/* The item in version resp (2 or 3). */
static sds render(sds s, const PushItem *it, int resp) {
    char head = resp >= 3 ? '>' : '*';
    switch (it->kind) {
    case PUSH_MESSAGE:
    case PUSH_SMESSAGE:
    case PUSH_PMESSAGE: {
        /* An array of bulks, as a command is written (one growth). */
        const char *argv[4];
        size_t lens[4];
        int n = 0;
        argv[n] = pushKindName(it->kind);
        lens[n] = strlen(argv[n]);
        n++;
        if (it->kind == PUSH_PMESSAGE) {
            argv[n] = it->pattern.p;
            lens[n++] = it->pattern.len;
        }
        argv[n] = it->channel.p;
        lens[n++] = it->channel.len;
        argv[n] = it->payload.p;
        lens[n++] = it->payload.len;
        size_t at = sdsLen(s);
        s = respCatCommandLen(s, n, argv, lens);
        s[at] = head;
        return s;
    }
    case PUSH_SUBSCRIBE:
    case PUSH_UNSUBSCRIBE:
    case PUSH_PSUBSCRIBE:
    case PUSH_PUNSUBSCRIBE:
    case PUSH_SSUBSCRIBE:
    case PUSH_SUNSUBSCRIBE:
        s = respCatHeader(s, head, 3);
        s = catName(s, it->kind);
        if (it->channel.p) s = respCatBulk(s, it->channel.p, it->channel.len);
        else s = resp >= 3 ? sdsCatLen(s, "_\r\n", 3) : sdsCatLen(s, "$-1\r\n", 5);
        return catInteger(s, it->count);
    case PUSH_INVALIDATE:
        if (resp >= 3) {
            s = sdsCatLen(s, ">2\r\n", 4);
            s = catName(s, it->kind);
        } else {
            s = sdsCatLen(s, "*3\r\n", 4);
            s = catName(s, PUSH_MESSAGE);
            s = respCatBulk(s, "__redis__:invalidate", 20);
        }
        return catKeys(s, it);
    case PUSH_TRACKING_REDIR_BROKEN:
        s = respCatHeader(s, head, 2);
        s = catName(s, it->kind);
        return catInteger(s, it->count);
    case PUSH_MONITOR:
        s = sdsCatLen(s, "+", 1);
        s = sdsCatLen(s, it->payload.p, it->payload.len);
        return sdsCatLen(s, "\r\n", 2);
    }
    return s;
}

static sds render2(sds s, const PushItem *it) { return render(s, it, 2); }
static sds render3(sds s, const PushItem *it) { return render(s, it, 3); }

const PushEncoder respPushEncoder2 = {.name = "resp2", .unsolicited = 0, .render = render2};
const PushEncoder respPushEncoder3 = {.name = "resp3", .unsolicited = 1, .render = render3};
