/* push.c -- what every encoder of push items (proto/push.h) shares: the
 * items' names. */
#include "proto/push.h"

static const char *const kindNames[] = {
    [PUSH_MESSAGE] = "message",
    [PUSH_PMESSAGE] = "pmessage",
    [PUSH_SMESSAGE] = "smessage",
    [PUSH_SUBSCRIBE] = "subscribe",
    [PUSH_UNSUBSCRIBE] = "unsubscribe",
    [PUSH_PSUBSCRIBE] = "psubscribe",
    [PUSH_PUNSUBSCRIBE] = "punsubscribe",
    [PUSH_SSUBSCRIBE] = "ssubscribe",
    [PUSH_SUNSUBSCRIBE] = "sunsubscribe",
    [PUSH_INVALIDATE] = "invalidate",
    [PUSH_TRACKING_REDIR_BROKEN] = "tracking-redir-broken",
    [PUSH_MONITOR] = "",
};

const char *pushKindName(PushKind kind) { return kindNames[kind]; }
