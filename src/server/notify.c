/* notify.c -- keyspace notifications (notify-keyspace-events).
 *
 * An event of a class the configuration enables is published, like
 * PUBLISH, on up to two channels, in this order:
 *   K  "__keyspace@<db>__:<key>"   with the event name as the message;
 *   E  "__keyevent@<db>__:<event>" with the key as the message.
 * server.cfg.notifyFlags holds the parsed classes (the directive at the end
 * of this file).
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

/* ------------------------------------------------------------------------ */
/* Configuration: notify-keyspace-events                                     */
/* ------------------------------------------------------------------------ */

/* notify-keyspace-events text -> NOTIFY_* bits (core/server.h); -1 on an
 * unknown class character. */
static int keyspaceEventsStringToFlags(const char *classes) {
    int flags = 0;
    for (const char *p = classes; *p; p++) {
        switch (*p) {
        case 'A': flags |= NOTIFY_ALL; break;
        case 'g': flags |= NOTIFY_GENERIC; break;
        case '$': flags |= NOTIFY_STRING; break;
        case 'l': flags |= NOTIFY_LIST; break;
        case 's': flags |= NOTIFY_SET; break;
        case 'h': flags |= NOTIFY_HASH; break;
        case 'z': flags |= NOTIFY_ZSET; break;
        case 'x': flags |= NOTIFY_EXPIRED; break;
        case 'e': flags |= NOTIFY_EVICTED; break;
        case 'K': flags |= NOTIFY_KEYSPACE; break;
        case 'E': flags |= NOTIFY_KEYEVENT; break;
        case 't': flags |= NOTIFY_STREAM; break;
        case 'm': flags |= NOTIFY_KEY_MISS; break;
        case 'd': flags |= NOTIFY_MODULE; break;
        case 'n': flags |= NOTIFY_NEW; break;
        default: return -1;
        }
    }
    return flags;
}

/* NOTIFY_* bits -> Redis's canonical text ("AKE", "g$xE"...), owned by the
 * caller. */
static sds keyspaceEventsFlagsToString(int flags) {
    sds s = sdsEmpty();
    if ((flags & NOTIFY_ALL) == NOTIFY_ALL) {
        s = sdsCat(s, "A");
    } else {
        static const struct {
            int flag;
            char c;
        } classes[] = {{NOTIFY_GENERIC, 'g'}, {NOTIFY_STRING, '$'}, {NOTIFY_LIST, 'l'},  {NOTIFY_SET, 's'},
                       {NOTIFY_HASH, 'h'},    {NOTIFY_ZSET, 'z'},   {NOTIFY_EXPIRED, 'x'}, {NOTIFY_EVICTED, 'e'},
                       {NOTIFY_STREAM, 't'},  {NOTIFY_MODULE, 'd'}};
        for (size_t i = 0; i < sizeof(classes) / sizeof(classes[0]); i++)
            if (flags & classes[i].flag) s = sdsCatLen(s, &classes[i].c, 1);
    }
    if (flags & NOTIFY_KEYSPACE) s = sdsCat(s, "K");
    if (flags & NOTIFY_KEYEVENT) s = sdsCat(s, "E");
    if (flags & NOTIFY_KEY_MISS) s = sdsCat(s, "m");
    /* Redis 7.0 accepts 'n' but leaves it out of CONFIG GET; so do we. */
    return s;
}

/* The parsed classes go to server.cfg.notifyFlags, which core reads to
 * drop the events no one enabled. */
static int setNotify(ConfigDef *d, sds *argv, int argc, const char **err) {
    if (argc != 1) {
        *err = "wrong number of arguments";
        return -1;
    }
    int flags = keyspaceEventsStringToFlags(argv[0]);
    if (flags == -1) {
        *err = "Invalid event class character. Use 'Ag$lshzxeKEtmdn'.";
        return -1;
    }
    server.cfg.notifyFlags = flags;
    return 0;
}

static sds getNotify(const ConfigDef *d) { return keyspaceEventsFlagsToString(server.cfg.notifyFlags); }

static ConfigDef notifyConfig[] = {
    CONFIG_SPECIAL("notify-keyspace-events", NULL, CF_QUOTED, "", setNotify, getNotify,
                   .rank = CONFIG_RANK_INTROSPECTION + 6),
};

void notifyRegisterConfig(void) { configRegister(notifyConfig, CONFIG_COUNT_OF(notifyConfig)); }
