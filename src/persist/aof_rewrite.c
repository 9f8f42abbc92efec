/* aof_rewrite.c -- the base file in command form (aof-use-rdb-preamble no):
 * the dataset written as the commands that rebuild it, as Redis 7.0 writes
 * them: FUNCTION LOAD per library, then per non-empty database a SELECT
 * and per key SET / RPUSH / SADD / ZADD / HMSET (at most 64 elements per
 * command) or, for a stream, one XADD per entry (XADD key MAXLEN 0 0-1 x y
 * for an empty one), XSETID with ENTRIESADDED and MAXDELETEDID, and per
 * group XGROUP CREATE ... ENTRIESREAD, an XCLAIM ... JUSTID FORCE per
 * pending entry and XGROUP CREATECONSUMER per consumer with none; then
 * PEXPIREAT for a key with a TTL. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/log.h"
#include "core/server.h"
#include "db/db.h"
#include "db/object.h"
#include "ds/alloc.h"
#include "ds/listpack.h"
#include "ds/quicklist.h"
#include "ds/rdbcodec.h"
#include "ds/stream.h"
#include "ds/util.h"
#include "persist/aof.h"
#include "persist/aof_int.h"
#include "persist/persist.h"
#include "persist/rdb.h"
#include "proto/resp_write.h"
#include "script/function.h"
#include "types/hash.h"
#include "types/list.h"
#include "types/member_ttl.h"
#include "types/set.h"
#include "types/zset.h"

#define ITEMS_PER_CMD 64
#define FLUSH_BYTES (64 * 1024)
#define INCREMENTAL_FSYNC_BYTES (4 * 1024 * 1024) /* aof-rewrite-incremental-fsync */

typedef struct Writer {
    int fd;
    sds buf;
    int failed;
    size_t sinceSync;  /* bytes since the last incremental fsync */
    /* The command being built: elements left in it, its header needs. */
    const kvobj *key;
    const char *cmd;
    long long left;    /* elements of the key not written yet */
    int inCmd;         /* elements written in the current command */
    int perElement;    /* bulk strings per element (2 for ZADD/HMSET) */
} Writer;

static void flushBuf(Writer *w) {
    if (w->fd < 0 || w->failed || sdsLen(w->buf) == 0) return; /* fd -1: the caller's buffer keeps it all */
    size_t off = 0, len = sdsLen(w->buf);
    while (off < len) {
        ssize_t n = write(w->fd, w->buf + off, len - off);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            w->failed = n < 0 ? errno : ENOSPC;
            break;
        }
        off += (size_t)n;
    }
    if (server.cfg.aofRewriteIncrementalFsync && (w->sinceSync += len) >= INCREMENTAL_FSYNC_BYTES) {
        fdatasync(w->fd);
        w->sinceSync = 0;
    }
    sdsClear(w->buf);
}

/* The pieces of a command, through proto's encoder (resp_write.h). */
static void header(Writer *w, long long argc) { w->buf = respCatHeader(w->buf, '*', (unsigned long long)argc); }

static void bulk(Writer *w, const void *p, size_t len) { w->buf = respCatBulk(w->buf, p, len); }

static void bulkNum(Writer *w, long long v) { w->buf = respCatBulkLongLong(w->buf, v); }

/* The header and the first argument, a command name. */
static void command(Writer *w, long long argc, const char *name) {
    header(w, argc);
    bulk(w, name, strlen(name));
}

/* Starts a command for the next element when the current one is full. */
static void element(Writer *w) {
    if (w->inCmd == 0) {
        long long n = w->left < ITEMS_PER_CMD ? w->left : ITEMS_PER_CMD;
        command(w, 2 + n * w->perElement, w->cmd);
        bulk(w, kvKey(w->key), kvKeyLen(w->key));
    }
    w->inCmd++;
    w->left--;
    if (w->inCmd == ITEMS_PER_CMD) w->inCmd = 0;
    if (sdsLen(w->buf) >= FLUSH_BYTES) flushBuf(w);
}

static void begin(Writer *w, const kvobj *o, const char *cmd, long long count, int perElement) {
    w->key = o;
    w->cmd = cmd;
    w->left = count;
    w->inCmd = 0;
    w->perElement = perElement;
}

static int listNode(void *ctx, int plain, const unsigned char *data, size_t len) {
    Writer *w = ctx;
    if (plain) {
        element(w);
        bulk(w, data, len);
        return 0;
    }
    unsigned char *lp = (unsigned char *)data;
    for (unsigned char *p = lpFirst(lp); p; p = lpNext(lp, p)) {
        unsigned int l;
        unsigned char ibuf[32];
        unsigned char *v = lpGetValue(p, &l, ibuf, NULL, NULL);
        element(w);
        bulk(w, v, l);
    }
    return 0;
}

static void setMember(void *priv, const char *m, size_t len) {
    Writer *w = priv;
    element(w);
    bulk(w, m, len);
}

static int zsetMember(void *priv, const unsigned char *m, size_t len, double score) {
    Writer *w = priv;
    element(w);
    char tmp[64];
    int l = snprintf(tmp, sizeof(tmp), "%.17g", score);
    bulk(w, tmp, (size_t)l);
    bulk(w, m, len);
    return 1;
}

static void hashPair(void *priv, const unsigned char *f, size_t flen, const unsigned char *v, size_t vlen) {
    Writer *w = priv;
    element(w);
    bulk(w, f, flen);
    bulk(w, v, vlen);
}

static void bulkKey(Writer *w, const kvobj *o) { bulk(w, kvKey(o), kvKeyLen(o)); }

/* A field's TTL after the hash's HMSET (issue 38), as Redis 7.4 rewrites it. */
static void hashFieldTtl(void *priv, const unsigned char *f, size_t flen, long long when) {
    Writer *w = priv;
    command(w, 6, "HPEXPIREAT");
    bulkKey(w, w->key);
    bulkNum(w, when);
    bulk(w, "FIELDS", 6);
    bulkNum(w, 1);
    bulk(w, f, flen);
}

static void bulkID(Writer *w, const StreamID *id) {
    char tmp[64];
    int l = snprintf(tmp, sizeof(tmp), "%llu-%llu", (unsigned long long)id->ms, (unsigned long long)id->seq);
    bulk(w, tmp, (size_t)l);
}

static void writeStream(Writer *w, const kvobj *o) {
    Stream *s = kvPtr(o);
    if (s->length) {
        StreamIter it;
        streamIterStart(&it, s, NULL, NULL, 0);
        StreamID id;
        long long nf;
        while (streamIterNext(&it, &id, &nf)) {
            command(w, 3 + nf * 2, "XADD");
            bulkKey(w, o);
            bulkID(w, &id);
            while (nf--) {
                const unsigned char *f, *v;
                size_t flen, vlen;
                streamIterField(&it, &f, &flen, &v, &vlen);
                bulk(w, f, flen);
                bulk(w, v, vlen);
            }
            if (sdsLen(w->buf) >= FLUSH_BYTES) flushBuf(w);
        }
    } else {
        command(w, 7, "XADD");
        bulkKey(w, o);
        bulk(w, "MAXLEN", 6);
        bulk(w, "0", 1);
        bulk(w, "0-1", 3);
        bulk(w, "x", 1);
        bulk(w, "y", 1);
    }
    command(w, 7, "XSETID");
    bulkKey(w, o);
    bulkID(w, &s->lastId);
    bulk(w, "ENTRIESADDED", 12);
    bulkNum(w, (long long)s->entriesAdded);
    bulk(w, "MAXDELETEDID", 12);
    bulkID(w, &s->maxDeletedId);
    if (!s->groups) return;
    for (OmapNode *g = omapFirst(s->groups); g; g = omapNext(g)) {
        size_t glen;
        const unsigned char *gname = omapKey(g, &glen);
        StreamCG *cg = omapValue(g);
        command(w, 7, "XGROUP");
        bulk(w, "CREATE", 6);
        bulkKey(w, o);
        bulk(w, gname, glen);
        bulkID(w, &cg->lastId);
        bulk(w, "ENTRIESREAD", 11);
        bulkNum(w, cg->entriesRead);
        for (OmapNode *cn = omapFirst(cg->consumers); cn; cn = omapNext(cn)) {
            StreamConsumer *c = omapValue(cn);
            if (omapSize(c->pel) == 0) {
                command(w, 5, "XGROUP");
                bulk(w, "CREATECONSUMER", 14);
                bulkKey(w, o);
                bulk(w, gname, glen);
                bulk(w, c->name, sdsLen(c->name));
                continue;
            }
            for (OmapNode *p = omapFirst(c->pel); p; p = omapNext(p)) {
                size_t klen;
                StreamID id;
                streamDecodeID(omapKey(p, &klen), &id);
                StreamNACK *nack = omapValue(p);
                command(w, 12, "XCLAIM");
                bulkKey(w, o);
                bulk(w, gname, glen);
                bulk(w, c->name, sdsLen(c->name));
                bulk(w, "0", 1);
                bulkID(w, &id);
                bulk(w, "TIME", 4);
                bulkNum(w, nack->deliveryTime);
                bulk(w, "RETRYCOUNT", 10);
                bulkNum(w, (long long)nack->deliveryCount);
                bulk(w, "JUSTID", 6);
                bulk(w, "FORCE", 5);
                if (sdsLen(w->buf) >= FLUSH_BYTES) flushBuf(w);
            }
        }
    }
}

int (*aofRewriteModuleValue)(sds *buf, const kvobj *o);

static void writeKey(Writer *w, const kvobj *o) {
    if (kvPacked(o)) { /* from a rebuilt copy: the walk's table stays as it is (db.h) */
        kvobj *copy = dbUnpackedCopy(o);
        writeKey(w, copy);
        kvFree(copy);
        return;
    }
    switch (kvType(o)) {
    case OBJ_MODULE:
        if (aofRewriteModuleValue && aofRewriteModuleValue(&w->buf, o) == -1) w->failed = 1;
        break;
    case OBJ_STRING: {
        char tmp[32];
        size_t len;
        const char *p = kvStringBytes(o, tmp, &len);
        command(w, 3, "SET");
        bulk(w, kvKey(o), kvKeyLen(o));
        bulk(w, p, len);
        break;
    }
    case OBJ_LIST: {
        ListRef lr;
        Quicklist *ql = listOpen(&lr, (kvobj *)o);
        begin(w, o, "RPUSH", (long long)quicklistCount(ql), 1);
        quicklistForEachNode(ql, listNode, w);
        listClose(&lr, 0);
        break;
    }
    case OBJ_SET:
        begin(w, o, "SADD", (long long)setValueLength(o), 1);
        setValueForEach(o, setMember, w);
        break;
    case OBJ_ZSET: {
        long n = (long)zsetLength(o);
        begin(w, o, "ZADD", n, 2);
        zsetForEachByRank(o, 0, n - 1, 0, zsetMember, w);
        break;
    }
    case OBJ_HASH:
        begin(w, o, "HMSET", (long long)hashValueLength(o), 2);
        hashValueForEach(o, hashPair, w);
        hashValueForEachTtl(o, hashFieldTtl, w);
        break;
    case OBJ_STREAM: writeStream(w, o); break;
    default: break;
    }
    long long when = kvExpire(o);
    if (when != -1) {
        command(w, 3, "PEXPIREAT");
        bulk(w, kvKey(o), kvKeyLen(o));
        bulkNum(w, when);
    }
    if (sdsLen(w->buf) >= FLUSH_BYTES) flushBuf(w);
}

/* PEXPIREMEMBERAT key member ms: a member TTL (types/member_ttl.h). */
static void memberTtl(void *priv, const kvobj *o, const char *m, size_t len, long long when) {
    Writer *w = priv;
    command(w, 4, "PEXPIREMEMBERAT");
    bulk(w, kvKey(o), kvKeyLen(o));
    bulk(w, m, len);
    bulkNum(w, when);
}

/* FUNCTION LOAD for each library: the codes come from the RDB records the
 * functions layer writes (uncompressed). */
static void writeFunctions(Writer *w) {
    sds recs = functionsRdbAppend(sdsEmpty(), 0);
    size_t pos = 0, len = sdsLen(recs);
    while (pos < len) {
        pos++; /* the opcode */
        sds code;
        if (rdbDecodeString((const unsigned char *)recs, len, &pos, &code) < 0) break;
        command(w, 3, "FUNCTION");
        bulk(w, "LOAD", 4);
        bulk(w, code, sdsLen(code));
        sdsFree(code);
    }
    sdsFree(recs);
}

void aofCommandsHead(sds *buf) {
    Writer w = {.fd = -1, .buf = *buf};
    if (server.cfg.aofTimestampEnabled) w.buf = sdsCatPrintf(w.buf, "#TS:%lld\r\n", (long long)time(NULL));
    writeFunctions(&w);
    *buf = w.buf;
}

void aofCommandsSelect(sds *buf, int db) {
    Writer w = {.fd = -1, .buf = *buf};
    command(&w, 2, "SELECT");
    bulkNum(&w, db);
    *buf = w.buf;
}

int aofCommandsKey(sds *buf, const kvobj *o, int db) {
    const char *why;
    if (dbVerify((kvobj *)o, &why) < 0) {
        serverLog(LL_WARNING, "AOF rewrite: skipping key '%.*s' (DB %d): %s", (int)kvKeyLen(o), kvKey(o), db, why);
        return 0;
    }
    Writer w = {.fd = -1, .buf = *buf};
    writeKey(&w, o);
    *buf = w.buf;
    return w.failed ? -1 : 0;
}

int aofWriteCommandsBase(const char *path) {
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) {
        serverLog(LL_WARNING, "Opening the temp file for AOF rewrite in rewriteAppendOnlyFile(): %s", strerror(errno));
        return -1;
    }
    Writer w = {.fd = fd, .buf = sdsEmpty()};
    if (server.cfg.aofTimestampEnabled) w.buf = sdsCatPrintf(w.buf, "#TS:%lld\r\n", (long long)time(NULL));
    writeFunctions(&w);
    long long keys = 0;
    for (int j = 0; j < server.cfg.databases && !w.failed; j++) {
        Db *db = &server.db[j];
        if (dbSize(db) == 0) continue;
        command(&w, 2, "SELECT");
        bulkNum(&w, j);
        rdbModuleDbId = j; /* a module value's GetDbIdFromIO */
        DbIter it;
        dbIterInit(&it, db);
        kvobj *o;
        while (!w.failed && (o = dbIterNext(&it)) != NULL) {
            /* A value loaded unverified is checked in place (this runs in
             * the rewrite child); a corrupt one is left out. */
            const char *why;
            if (dbVerify(o, &why) < 0) {
                serverLog(LL_WARNING, "AOF rewrite: skipping key '%.*s' (DB %d): %s", (int)kvKeyLen(o), kvKey(o),
                          j, why);
                continue;
            }
            writeKey(&w, o);
            memberTtlForEach(db, o, memberTtl, &w);
            if (server.cfg.rdbKeySaveDelay > 0) usleep((useconds_t)server.cfg.rdbKeySaveDelay);
            /* The rewrite child's progress (a no-op in the foreground),
             * checked at keys 1, 1025, ... as Redis's. */
            if ((keys++ & 1023) == 0) persistChildProgress(keys);
        }
        dbIterRelease(&it);
    }
    rdbModuleDbId = -1;
    flushBuf(&w);
    sdsFree(w.buf);
    int err = w.failed;
    if (!err && fsync(fd) < 0) err = errno;
    if (close(fd) < 0 && !err) err = errno;
    if (err) {
        serverLog(LL_WARNING, "Write error writing append only file on disk: %s", strerror(err));
        unlink(path);
        return -1;
    }
    return 0;
}
