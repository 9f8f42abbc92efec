/* notify.c -- keyspace notifications (notify-keyspace-events).
 *
 * An event of a class the configuration enables is published, like
 * PUBLISH, on up to two channels, in this order:
 *   K  "__keyspace@<db>__:<key>"   with the event name as the message;
 *   E  "__keyevent@<db>__:<event>" with the key as the message.
 * server.cfg.notifyFlags holds the parsed classes (src/core/config.c).
 * Callers emit events with notifyKeyspaceEvent (core/server.h) after their
 * change, in Redis's order; core drops the classes not enabled and hands
 * the rest to this file's sink, which only formats and publishes. */
#include <string.h>

#include "server/notify.h"

#include "core/server.h"
#include "ds/sds.h"
#include "ds/util.h"
#include "server/pubsub.h"

static void publishKeyspaceEvent(const char *event, const char *key, size_t keylen, int dbid) {
    int flags = server.cfg.notifyFlags;
    size_t elen = strlen(event);
    char db[24];
    int dblen = longLongToString(db, sizeof(db), dbid);
    sds chan = sdsEmpty();
    if (flags & NOTIFY_KEYSPACE) {
        chan = sdsCatLen(chan, "__keyspace@", 11);
        chan = sdsCatLen(chan, db, (size_t)dblen);
        chan = sdsCatLen(chan, "__:", 3);
        chan = sdsCatLen(chan, key, keylen);
        pubsubPublish(chan, sdsLen(chan), event, elen);
    }
    if (flags & NOTIFY_KEYEVENT) {
        sdsClear(chan);
        chan = sdsCatLen(chan, "__keyevent@", 11);
        chan = sdsCatLen(chan, db, (size_t)dblen);
        chan = sdsCatLen(chan, "__:", 3);
        chan = sdsCatLen(chan, event, elen);
        pubsubPublish(chan, sdsLen(chan), key, keylen);
    }
    sdsFree(chan);
}

void notifyInit(void) { serverSetKeyspaceEventSink(publishKeyspaceEvent); }
