/* notify.c -- keyspace notifications (notify-keyspace-events).
 *
 * An event of a class the configuration enables is published, like
 * PUBLISH, on up to two channels, in this order:
 *   K  "__keyspace@<db>__:<key>"   with the event name as the message;
 *   E  "__keyevent@<db>__:<event>" with the key as the message.
 * server.cfg.notifyFlags holds the parsed classes (src/core/config.c); with
 * neither K nor E nothing is published.  Callers emit events after their
 * change, in Redis's order; this file only formats and publishes. */
#include <stdio.h>
#include <string.h>

#include "core/server.h"
#include "ds/sds.h"
#include "server/pubsub.h"

void notifyKeyspaceEvent(int type, const char *event, const char *key, size_t keylen, int dbid) {
    int flags = server.cfg.notifyFlags;
    if (!(flags & type) || !(flags & (NOTIFY_KEYSPACE | NOTIFY_KEYEVENT))) return;
    size_t elen = strlen(event);
    char prefix[48];
    sds chan = sdsEmpty();
    if (flags & NOTIFY_KEYSPACE) {
        int n = snprintf(prefix, sizeof(prefix), "__keyspace@%d__:", dbid);
        chan = sdsCatLen(chan, prefix, (size_t)n);
        chan = sdsCatLen(chan, key, keylen);
        pubsubPublish(chan, sdsLen(chan), event, elen);
    }
    if (flags & NOTIFY_KEYEVENT) {
        sdsClear(chan);
        int n = snprintf(prefix, sizeof(prefix), "__keyevent@%d__:", dbid);
        chan = sdsCatLen(chan, prefix, (size_t)n);
        chan = sdsCatLen(chan, event, elen);
        pubsubPublish(chan, sdsLen(chan), key, keylen);
    }
    sdsFree(chan);
}
