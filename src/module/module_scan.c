/* module_scan.c -- the scan API: ScanCursorCreate/Restart/Destroy, Scan
 * (the keys of the context's database) and ScanKey (the elements of a
 * hash, set or sorted set).
 *
 * Scan: each call takes one step of SCAN's walk (dbScan), copies the names
 * it got, and then calls the callback for each key still there, with the
 * key opened for reading (valid during the callback only); it returns 1
 * while the walk goes on, 0 when it is done -- SCAN's guarantees (a key
 * present throughout is seen once).  ScanKey hands the whole collection
 * over in one call and returns 0 (allowed by SCAN's contract, and what
 * Redis does for small encodings): fields with their values for a hash,
 * members with NULL for a set, members with their score (as
 * CreateStringFromLongDouble writes it, not human-friendly) for a sorted
 * set.  The elements are copied before any callback runs, so a callback
 * may change the collection.
 *
 * Invariants: a cursor that finished stays finished until Restart; a
 * wrong key type or a missing key makes ScanKey answer 0 with errno
 * EINVAL, as Redis. */
#include <errno.h>
#include <string.h>

#include "core/server.h"
#include "db/db.h"
#include "db/object.h"
#include "ds/alloc.h"
#include "ds/util.h"
#include "module/module_int.h"
#include "types/hash.h"
#include "types/scan.h"
#include "types/set.h"
#include "types/zset.h"

struct RedisModuleScanCursor {
    uint64_t cursor;
    int done;
};

static RedisModuleScanCursor *RM_ScanCursorCreate(void) { return xcalloc(sizeof(RedisModuleScanCursor)); }

static void RM_ScanCursorRestart(RedisModuleScanCursor *c) {
    c->cursor = 0;
    c->done = 0;
}

static void RM_ScanCursorDestroy(RedisModuleScanCursor *c) { xfree(c); }

typedef struct Names {
    sds *v;
    size_t n, cap;
} Names;

static void namesAdd(Names *ns, const char *p, size_t len) {
    if (ns->n == ns->cap) {
        ns->cap = ns->cap ? ns->cap * 2 : 16;
        ns->v = xrealloc(ns->v, sizeof(sds) * ns->cap);
    }
    ns->v[ns->n++] = sdsNewLen(p, len);
}

static void namesFree(Names *ns) {
    for (size_t i = 0; i < ns->n; i++) sdsFree(ns->v[i]);
    xfree(ns->v);
}

static void collectKey(void *priv, void *entry) {
    kvobj *o = entry;
    namesAdd(priv, kvKey(o), kvKeyLen(o));
}

static int RM_Scan(RedisModuleCtx *ctx, RedisModuleScanCursor *cursor, RedisModuleScanCB fn, void *privdata) {
    if (!cursor || cursor->done) {
        errno = ENOENT;
        return 0;
    }
    Db *db = ctx->client ? ctx->client->db : server.db;
    Names ns = {0};
    uint64_t next = dbScan(db, cursor->cursor, collectKey, &ns);
    for (size_t i = 0; i < ns.n; i++) {
        kvobj *o = dbFind(db, ns.v[i], sdsLen(ns.v[i]));
        if (!o || kvIsExpired(o)) continue;
        RedisModuleString *name = modStringNew(NULL, ns.v[i], sdsLen(ns.v[i]));
        RedisModuleKey key = {.ctx = ctx, .db = db, .key = ns.v[i], .mode = REDISMODULE_READ};
        fn(ctx, name, &key, privdata);
        if (key.name) modStringRelease(key.name);
        moduleZsetRangeFree(&key);
        modStringRelease(name);
    }
    namesFree(&ns);
    cursor->cursor = next;
    if (next == 0) {
        cursor->done = 1;
        errno = 0;
        return 0;
    }
    return 1;
}

/* Pairs (element, value or NULL) of a collection. */
typedef struct Pairs {
    Names el, val;
    int hasVal;
} Pairs;

static void visitHash(void *priv, const unsigned char *f, size_t flen, const unsigned char *v, size_t vlen) {
    Pairs *p = priv;
    namesAdd(&p->el, (const char *)f, flen);
    namesAdd(&p->val, (const char *)v, vlen);
}

static void visitSet(void *priv, const char *m, size_t len) { namesAdd(&((Pairs *)priv)->el, m, len); }

static int visitZset(void *priv, const unsigned char *m, size_t len, double score) {
    Pairs *p = priv;
    char buf[UTIL_MAX_LONG_DOUBLE_CHARS];
    int n = longDoubleToString(buf, sizeof(buf), (long double)score, 0);
    namesAdd(&p->el, (const char *)m, len);
    namesAdd(&p->val, buf, n > 0 ? (size_t)n : 0);
    return 1;
}

static int RM_ScanKey(RedisModuleKey *key, RedisModuleScanCursor *cursor, RedisModuleScanKeyCB fn, void *privdata) {
    kvobj *o = key ? dbFind(key->db, key->key, sdsLen(key->key)) : NULL;
    if (o && kvIsExpired(o)) o = NULL;
    if (!o || !cursor || (kvType(o) != OBJ_HASH && kvType(o) != OBJ_SET && kvType(o) != OBJ_ZSET)) {
        errno = EINVAL;
        return 0;
    }
    if (cursor->done) {
        errno = ENOENT;
        return 0;
    }
    Pairs p = {0};
    switch (kvType(o)) {
    case OBJ_HASH: hashValueForEach(o, visitHash, &p); p.hasVal = 1; break;
    case OBJ_SET: setValueForEach(o, visitSet, &p); break;
    default: {
        unsigned long len = zsetLength(o);
        if (len) zsetForEachByRank(o, 0, (long)len - 1, 0, visitZset, &p);
        p.hasVal = 1;
        break;
    }
    }
    for (size_t i = 0; i < p.el.n; i++) {
        RedisModuleString *e = modStringNew(NULL, p.el.v[i], sdsLen(p.el.v[i]));
        RedisModuleString *v = p.hasVal ? modStringNew(NULL, p.val.v[i], sdsLen(p.val.v[i])) : NULL;
        fn(key, e, v, privdata);
        modStringRelease(e);
        if (v) modStringRelease(v);
    }
    namesFree(&p.el);
    namesFree(&p.val);
    cursor->done = 1;
    errno = 0;
    return 0;
}

#define API(fn) {"RedisModule_" #fn, (void *)(uintptr_t)RM_##fn}
const ApiEntry moduleScanApi[] = {API(ScanCursorCreate), API(ScanCursorRestart), API(ScanCursorDestroy), API(Scan),
                                  API(ScanKey), {NULL, NULL}};
