/* module_key.c -- the low-level key API of modules (RedisModule_OpenKey
 * and what works on an open key), for the string type in this slice:
 * KeyType/ValueLength answer for every type.
 *
 * A RedisModuleKey names a key of a database; the entry is looked up
 * again for each operation (dbFind), since a write may move it.  As in
 * Redis 7.0: opening for reading a key that is absent gives NULL; the key
 * API changes the dataset without propagating (the module replicates);
 * closing a key opened for writing signals it modified (WATCH,
 * tracking). */
#include <errno.h>
#include <stdarg.h>
#include <string.h>

#include "core/server.h"
#include "db/db.h"
#include "db/object.h"
#include "ds/alloc.h"
#include "ds/listpack.h"
#include "ds/quicklist.h"
#include "ds/util.h"
#include "module/module_int.h"
#include "types/hash.h"
#include "types/list.h"
#include "types/set.h"
#include "types/stream.h"
#include "types/zset.h"

#define STRING_MAX (512ULL * 1024 * 1024)


static kvobj *keyValue(RedisModuleKey *k) {
    kvobj *o = dbFind(k->db, k->key, sdsLen(k->key));
    if (o && kvIsExpired(o)) return NULL;
    return o;
}

static RedisModuleKey *RM_OpenKey(RedisModuleCtx *ctx, RedisModuleString *keyname, int mode) {
    moduleAssertGil("RedisModule_OpenKey");
    Client *c = ctx->client;
    Db *db = c ? c->db : server.db;
    kvobj *o;
    if (mode & REDISMODULE_WRITE)
        o = dbLookupWrite(db, keyname->s, sdsLen(keyname->s));
    else
        o = dbLookupRead(db, keyname->s, sdsLen(keyname->s),
                         (mode & REDISMODULE_OPEN_KEY_NOTOUCH) ? LOOKUP_NOTOUCH : LOOKUP_NONE);
    if (!o && !(mode & REDISMODULE_WRITE)) return NULL;
    RedisModuleKey *k = xmalloc(sizeof(*k));
    k->ctx = ctx;
    k->db = db;
    k->key = sdsDup(keyname->s);
    k->mode = mode;
    k->name = NULL;
    k->zrange = NULL;
    k->stream = NULL;
    moduleAutoAdd(ctx, AM_KEY, k);
    return k;
}

void moduleCloseKey(RedisModuleKey *k) {
    if (!k) return;
    int implicit = !k->ctx->module || !(k->ctx->module->options & REDISMODULE_OPTION_NO_IMPLICIT_SIGNAL_MODIFIED);
    if ((k->mode & REDISMODULE_WRITE) && implicit) signalModifiedKey(k->ctx->client, k->db, k->key, sdsLen(k->key));
    if (k->name) modStringRelease(k->name);
    moduleZsetRangeFree(k);
    moduleStreamIterFree(k);
    sdsFree(k->key);
    xfree(k);
}

static void RM_CloseKey(RedisModuleKey *k) {
    if (!k) return;
    moduleAutoForget(k->ctx, k);
    moduleCloseKey(k);
}

static int RM_KeyExists(RedisModuleCtx *ctx, RedisModuleString *keyname) {
    Db *db = ctx->client ? ctx->client->db : server.db;
    return dbLookupRead(db, keyname->s, sdsLen(keyname->s), LOOKUP_NOTOUCH) != NULL;
}

static int RM_KeyType(RedisModuleKey *k) {
    kvobj *o = k ? keyValue(k) : NULL;
    if (!o) return REDISMODULE_KEYTYPE_EMPTY;
    switch (kvType(o)) {
    case OBJ_STRING: return REDISMODULE_KEYTYPE_STRING;
    case OBJ_LIST: return REDISMODULE_KEYTYPE_LIST;
    case OBJ_SET: return REDISMODULE_KEYTYPE_SET;
    case OBJ_ZSET: return REDISMODULE_KEYTYPE_ZSET;
    case OBJ_HASH: return REDISMODULE_KEYTYPE_HASH;
    case OBJ_STREAM: return REDISMODULE_KEYTYPE_STREAM;
    case OBJ_MODULE: return REDISMODULE_KEYTYPE_MODULE;
    default: return REDISMODULE_KEYTYPE_EMPTY;
    }
}

static size_t RM_ValueLength(RedisModuleKey *k) {
    kvobj *o = k ? keyValue(k) : NULL;
    if (!o) return 0;
    switch (kvType(o)) {
    case OBJ_STRING: return kvStringLen(o);
    case OBJ_LIST: return listLength(o);
    case OBJ_SET: return setValueLength(o);
    case OBJ_ZSET: return zsetLength(o);
    case OBJ_HASH: return hashValueLength(o);
    case OBJ_STREAM: return (size_t)((const Stream *)kvPtr(o))->length;
    default: return 0;
    }
}

static int RM_DeleteKey(RedisModuleKey *k) {
    if (!(k->mode & REDISMODULE_WRITE)) return REDISMODULE_ERR;
    if (keyValue(k)) dbDelete(k->db, k->key, sdsLen(k->key));
    return REDISMODULE_OK;
}

static int RM_UnlinkKey(RedisModuleKey *k) {
    if (!(k->mode & REDISMODULE_WRITE)) return REDISMODULE_ERR;
    if (keyValue(k)) {
        kvobj *o = dbUnlink(k->db, k->key, sdsLen(k->key));
        if (o) kvFree(o);
    }
    return REDISMODULE_OK;
}

/* The value replaces whatever the key held, without its TTL (SET). */
static int RM_StringSet(RedisModuleKey *k, RedisModuleString *str) {
    if (!(k->mode & REDISMODULE_WRITE)) return REDISMODULE_ERR;
    dbSetKey(k->db, kvCreateString(k->key, sdsLen(k->key), str->s, sdsLen(str->s)), 0);
    return REDISMODULE_OK;
}

static char emptyDma[1];

/* The string's bytes, writable in place with REDISMODULE_WRITE (the
 * pointer is good until the next operation on the key). */
static char *RM_StringDMA(RedisModuleKey *k, size_t *len, int mode) {
    if ((mode & REDISMODULE_WRITE) && !(k->mode & REDISMODULE_WRITE)) return NULL;
    kvobj *o = keyValue(k);
    if (!o) {
        *len = 0;
        emptyDma[0] = '\0';
        return emptyDma;
    }
    if (kvType(o) != OBJ_STRING) return NULL;
    sds s = dbUnshareString(k->db, &o);
    kvSetPtr(o, s);
    *len = sdsLen(s);
    return s;
}

static int RM_StringTruncate(RedisModuleKey *k, size_t newlen) {
    if (!(k->mode & REDISMODULE_WRITE)) return REDISMODULE_ERR;
    kvobj *o = keyValue(k);
    if (o && kvType(o) != OBJ_STRING) return REDISMODULE_ERR;
    if (newlen > STRING_MAX) return REDISMODULE_ERR;
    if (!o) {
        if (newlen == 0) return REDISMODULE_OK;
        dbAdd(k->db, kvCreateRawString(k->key, sdsLen(k->key), sdsNewLen(NULL, newlen)));
        return REDISMODULE_OK;
    }
    sds s = dbUnshareString(k->db, &o);
    size_t cur = sdsLen(s);
    if (newlen > cur) {
        s = sdsGrowZero(s, newlen);
    } else if (newlen < cur) {
        sdsSetLen(s, newlen);
        if (sdsAvail(s) > newlen) s = sdsRemoveFreeSpace(s);
    }
    kvSetPtr(o, s);
    return REDISMODULE_OK;
}

static mstime_t RM_GetExpire(RedisModuleKey *k) {
    kvobj *o = keyValue(k);
    if (!o || !kvHasExpire(o)) return REDISMODULE_NO_EXPIRE;
    long long left = kvExpire(o) - mstime();
    return left >= 0 ? left : 0;
}

static int RM_SetExpire(RedisModuleKey *k, mstime_t expire) {
    if (!(k->mode & REDISMODULE_WRITE) || (expire < 0 && expire != REDISMODULE_NO_EXPIRE)) return REDISMODULE_ERR;
    kvobj *o = keyValue(k);
    if (!o) return REDISMODULE_ERR;
    if (expire != REDISMODULE_NO_EXPIRE)
        dbSetExpire(k->db, &o, mstime() + expire);
    else
        dbRemoveExpire(k->db, &o);
    return REDISMODULE_OK;
}

/* ---- lists (Redis 7.0: no notification, no dirty; errno says why a
 * call failed: EINVAL, ENOTSUP not a list, EBADF not opened for it, EDOM
 * index out of range) ---- */

static int listCheck(RedisModuleKey *k, int needWrite, int mayBeEmpty, kvobj **out) {
    if (!k) {
        errno = EINVAL;
        return -1;
    }
    kvobj *o = keyValue(k);
    if ((o && kvType(o) != OBJ_LIST) || (!o && !mayBeEmpty)) {
        errno = ENOTSUP;
        return -1;
    }
    if (!(k->mode & (needWrite ? REDISMODULE_WRITE : REDISMODULE_READ))) {
        errno = EBADF;
        return -1;
    }
    *out = o;
    return 0;
}

/* The list at k, opened in lr (created empty when absent). */
static Quicklist *listAt(RedisModuleKey *k, kvobj *o, ListRef *lr) {
    if (!o) {
        o = kvCreatePtr(k->key, sdsLen(k->key), OBJ_LIST, OBJ_ENC_LISTPACK, lpNew(0));
        dbAdd(k->db, o);
    }
    return listOpen(lr, o);
}

/* Closes lr after a removal; the key goes when the list is empty. */
static void listDone(RedisModuleKey *k, ListRef *lr, int shrunk) {
    unsigned long left = quicklistCount(lr->ql);
    listClose(lr, shrunk);
    if (shrunk && left == 0) dbDelete(k->db, k->key, sdsLen(k->key));
}

static RedisModuleString *entryString(RedisModuleCtx *ctx, const QlEntry *e) {
    if (e->str) return modStringNew(ctx, (const char *)e->str, e->len);
    return modStringTake(ctx, sdsFromLongLong(e->ival));
}

static int RM_ListPush(RedisModuleKey *k, int where, RedisModuleString *ele) {
    kvobj *o;
    if (!ele) {
        errno = EINVAL;
        return REDISMODULE_ERR;
    }
    if (listCheck(k, 1, 1, &o) < 0) return REDISMODULE_ERR;
    /* any other `where` is the tail, as Redis 7.0 reads it */
    ListRef lr;
    Quicklist *ql = listAt(k, o, &lr);
    quicklistPush(ql, ele->s, sdsLen(ele->s), where == REDISMODULE_LIST_HEAD ? QL_HEAD : QL_TAIL);
    listDone(k, &lr, 0);
    return REDISMODULE_OK;
}

static RedisModuleString *RM_ListPop(RedisModuleKey *k, int where) {
    kvobj *o;
    if (!k || (where != REDISMODULE_LIST_HEAD && where != REDISMODULE_LIST_TAIL)) {
        errno = EINVAL;
        return NULL;
    }
    if (listCheck(k, 1, 0, &o) < 0) return NULL;
    ListRef lr;
    Quicklist *ql = listOpen(&lr, o);
    int w = where == REDISMODULE_LIST_HEAD ? QL_HEAD : QL_TAIL;
    QlEntry e;
    quicklistPeek(ql, w, &e);
    RedisModuleString *s = entryString(k->ctx, &e);
    quicklistDelEnd(ql, w);
    listDone(k, &lr, 1);
    return s;
}

static RedisModuleString *RM_ListGet(RedisModuleKey *k, long index) {
    kvobj *o;
    if (listCheck(k, 0, 0, &o) < 0) return NULL;
    ListRef lr;
    Quicklist *ql = listOpen(&lr, o);
    QlEntry e;
    RedisModuleString *s = NULL;
    if (quicklistIndex(ql, index, &e))
        s = entryString(k->ctx, &e);
    else
        errno = EDOM;
    listClose(&lr, 0);
    return s;
}

static int RM_ListSet(RedisModuleKey *k, long index, RedisModuleString *value) {
    kvobj *o;
    if (!value) {
        errno = EINVAL;
        return REDISMODULE_ERR;
    }
    if (listCheck(k, 1, 0, &o) < 0) return REDISMODULE_ERR;
    ListRef lr;
    Quicklist *ql = listOpen(&lr, o);
    int ok = quicklistReplaceAtIndex(ql, index, value->s, sdsLen(value->s));
    listClose(&lr, 0);
    if (!ok) {
        errno = EDOM;
        return REDISMODULE_ERR;
    }
    return REDISMODULE_OK;
}

/* The new element gets index `index` (0: the head, -1 or the length: the
 * tail; negative counts from the tail after the insert). */
static int RM_ListInsert(RedisModuleKey *k, long index, RedisModuleString *value) {
    kvobj *o;
    if (!value) {
        errno = EINVAL;
        return REDISMODULE_ERR;
    }
    if (listCheck(k, 1, 1, &o) < 0) return REDISMODULE_ERR;
    long len = o ? (long)listLength(o) : 0;
    if (index == 0 || (!o && index == -1)) return RM_ListPush(k, REDISMODULE_LIST_HEAD, value);
    if (index == len || index == -1) return RM_ListPush(k, REDISMODULE_LIST_TAIL, value);
    if (index < 0) index += len + 1; /* the position after insertion */
    if (!o || index < 0 || index > len) {
        errno = EDOM;
        return REDISMODULE_ERR;
    }
    ListRef lr;
    Quicklist *ql = listOpen(&lr, o);
    QuicklistIter *it = quicklistIterAt(ql, index, QL_HEAD);
    QlEntry e;
    if (!it || !quicklistNext(it, &e)) {
        if (it) quicklistIterRelease(it);
        listClose(&lr, 0);
        errno = EDOM;
        return REDISMODULE_ERR;
    }
    quicklistInsertBefore(it, &e, value->s, sdsLen(value->s));
    quicklistIterRelease(it);
    listClose(&lr, 0);
    return REDISMODULE_OK;
}

static int RM_ListDelete(RedisModuleKey *k, long index) {
    kvobj *o;
    if (listCheck(k, 1, 0, &o) < 0) return REDISMODULE_ERR;
    ListRef lr;
    Quicklist *ql = listOpen(&lr, o);
    QlEntry e;
    if (!quicklistIndex(ql, index, &e)) {
        listClose(&lr, 0);
        errno = EDOM;
        return REDISMODULE_ERR;
    }
    quicklistDelRange(ql, index, 1);
    listDone(k, &lr, 1);
    return REDISMODULE_OK;
}

/* ---- hashes (Redis 7.0: no notification, no dirty) ---- */

#define HASH_DELETE_MARK ((RedisModuleString *)(long)1)

/* HashSet(key, flags, field, value, ..., NULL): value REDISMODULE_HASH_DELETE
 * deletes the field; NX/XX condition each set.  Returns the fields updated
 * or deleted (with COUNT_ALL also those inserted); 0 with errno ENOTSUP (not
 * a hash), EBADF (not opened for writing), ENOENT (nothing counted). */
static int RM_HashSet(RedisModuleKey *k, int flags, ...) {
    kvobj *o = keyValue(k);
    if (o && kvType(o) != OBJ_HASH) {
        errno = ENOTSUP;
        return 0;
    }
    if (!(k->mode & REDISMODULE_WRITE)) {
        errno = EBADF;
        return 0;
    }
    int count = 0;
    va_list ap;
    va_start(ap, flags);
    for (;;) {
        sds field;
        if (flags & REDISMODULE_HASH_CFIELDS) {
            const char *cf = va_arg(ap, const char *);
            if (!cf) break;
            field = sdsNew(cf);
        } else {
            RedisModuleString *fs = va_arg(ap, RedisModuleString *);
            if (!fs) break;
            field = sdsDup(fs->s);
        }
        RedisModuleString *value = va_arg(ap, RedisModuleString *);
        o = keyValue(k);
        int exists = 0;
        if (o) {
            sds cur = hashValueGetField(o, field, sdsLen(field));
            exists = cur != NULL;
            sdsFree(cur);
        }
        if (((flags & REDISMODULE_HASH_XX) && !exists) || ((flags & REDISMODULE_HASH_NX) && exists)) {
            sdsFree(field);
            continue;
        }
        if (value == HASH_DELETE_MARK) {
            count += hashModuleDelete(k->db, k->key, field);
        } else if (value) {
            int created = hashModuleSet(k->db, k->key, field, value->s);
            count += created ? ((flags & REDISMODULE_HASH_COUNT_ALL) != 0) : 1;
        }
        sdsFree(field);
    }
    va_end(ap);
    if (count == 0) errno = ENOENT;
    return count;
}

/* HashGet(key, flags, field, &value, ..., NULL): each value a new string
 * or NULL; with EXISTS, an int set to whether the field exists. */
static int RM_HashGet(RedisModuleKey *k, int flags, ...) {
    kvobj *o = keyValue(k);
    if (o && kvType(o) != OBJ_HASH) return REDISMODULE_ERR;
    va_list ap;
    va_start(ap, flags);
    for (;;) {
        const char *fp;
        size_t flen;
        if (flags & REDISMODULE_HASH_CFIELDS) {
            fp = va_arg(ap, const char *);
            if (!fp) break;
            flen = strlen(fp);
        } else {
            RedisModuleString *fs = va_arg(ap, RedisModuleString *);
            if (!fs) break;
            fp = fs->s;
            flen = sdsLen(fs->s);
        }
        sds v = o ? hashValueGetField(o, fp, flen) : NULL;
        if (flags & REDISMODULE_HASH_EXISTS) {
            int *existsp = va_arg(ap, int *);
            *existsp = v != NULL;
            sdsFree(v);
        } else {
            RedisModuleString **vp = va_arg(ap, RedisModuleString **);
            *vp = v ? modStringTake(k->ctx, v) : NULL;
        }
    }
    va_end(ap);
    return REDISMODULE_OK;
}

/* ---- sorted sets (add, increment, remove, score; Redis 7.0: no event,
 * no dirty) ---- */

static int zsetInFlags(int f) {
    int in = 0;
    if (f & REDISMODULE_ZADD_XX) in |= ZADD_IN_XX;
    if (f & REDISMODULE_ZADD_NX) in |= ZADD_IN_NX;
    if (f & REDISMODULE_ZADD_GT) in |= ZADD_IN_GT;
    if (f & REDISMODULE_ZADD_LT) in |= ZADD_IN_LT;
    return in;
}

static int zsetOutFlags(int out) {
    int f = 0;
    if (out & ZADD_OUT_ADDED) f |= REDISMODULE_ZADD_ADDED;
    if (out & ZADD_OUT_UPDATED) f |= REDISMODULE_ZADD_UPDATED;
    if (out & ZADD_OUT_NOP) f |= REDISMODULE_ZADD_NOP;
    return f;
}

static int zsetWrite(RedisModuleKey *k, double score, RedisModuleString *ele, int *flagsptr, int incr,
                     double *newscore) {
    if (!(k->mode & REDISMODULE_WRITE)) return REDISMODULE_ERR;
    kvobj *o = keyValue(k);
    if (o && kvType(o) != OBJ_ZSET) return REDISMODULE_ERR;
    int in = (flagsptr ? zsetInFlags(*flagsptr) : 0) | (incr ? ZADD_IN_INCR : 0), out = 0;
    if (!zsetModuleAdd(k->db, k->key, score, ele->s, in, &out, newscore)) {
        if (flagsptr) *flagsptr = 0;
        return REDISMODULE_ERR;
    }
    if (flagsptr) *flagsptr = zsetOutFlags(out);
    return REDISMODULE_OK;
}

static int RM_ZsetAdd(RedisModuleKey *k, double score, RedisModuleString *ele, int *flagsptr) {
    return zsetWrite(k, score, ele, flagsptr, 0, NULL);
}

static int RM_ZsetIncrby(RedisModuleKey *k, double score, RedisModuleString *ele, int *flagsptr, double *newscore) {
    return zsetWrite(k, score, ele, flagsptr, 1, newscore);
}

static int RM_ZsetRem(RedisModuleKey *k, RedisModuleString *ele, int *deleted) {
    if (!(k->mode & REDISMODULE_WRITE)) return REDISMODULE_ERR;
    kvobj *o = keyValue(k);
    if (o && kvType(o) != OBJ_ZSET) return REDISMODULE_ERR;
    int gone = o && zsetValueRemove(o, (const unsigned char *)ele->s, sdsLen(ele->s));
    if (gone && zsetLength(o) == 0) dbDelete(k->db, k->key, sdsLen(k->key));
    if (deleted) *deleted = gone;
    return REDISMODULE_OK;
}

static int RM_ZsetScore(RedisModuleKey *k, RedisModuleString *ele, double *score) {
    kvobj *o = keyValue(k);
    if (!o || kvType(o) != OBJ_ZSET) return REDISMODULE_ERR;
    return zsetGetScore(o, (const unsigned char *)ele->s, sdsLen(ele->s), score) ? REDISMODULE_OK : REDISMODULE_ERR;
}

/* ---- module data types ---- */

static int RM_ModuleTypeSetValue(RedisModuleKey *k, RedisModuleType *mt, void *value) {
    if (!(k->mode & REDISMODULE_WRITE)) return REDISMODULE_ERR;
    moduleSetValue(k->db, k->key, sdsLen(k->key), mt, value);
    return REDISMODULE_OK;
}

static RedisModuleType *RM_ModuleTypeGetType(RedisModuleKey *k) {
    kvobj *o = k ? keyValue(k) : NULL;
    return o && kvType(o) == OBJ_MODULE ? moduleValueType(o) : NULL;
}

static void *RM_ModuleTypeGetValue(RedisModuleKey *k) {
    kvobj *o = k ? keyValue(k) : NULL;
    return o && kvType(o) == OBJ_MODULE ? moduleValuePtr(o) : NULL;
}

static int RM_ModuleTypeReplaceValue(RedisModuleKey *k, RedisModuleType *mt, void *new_value, void **old_value) {
    kvobj *o = keyValue(k);
    if (!(k->mode & REDISMODULE_WRITE) || !o || kvType(o) != OBJ_MODULE || moduleValueType(o) != mt)
        return REDISMODULE_ERR;
    void *old = moduleReplaceValue(o, new_value);
    if (old_value) *old_value = old;
    return REDISMODULE_OK;
}

static const RedisModuleString *RM_GetKeyNameFromModuleKey(RedisModuleKey *k) {
    if (!k) return NULL;
    if (!k->name) k->name = modStringNew(NULL, k->key, sdsLen(k->key));
    return k->name;
}

static int RM_GetDbIdFromModuleKey(RedisModuleKey *k) { return k ? k->db->id : -1; }

#define API(fn) {"RedisModule_" #fn, (void *)(uintptr_t)RM_##fn}
const ApiEntry moduleKeyApi[] = {API(KeyExists),  API(OpenKey),     API(CloseKey),       API(KeyType),
                                 API(ValueLength), API(DeleteKey),  API(UnlinkKey),      API(StringSet),
                                 API(StringDMA),  API(StringTruncate), API(GetExpire),   API(SetExpire),
                                 API(ModuleTypeSetValue), API(ModuleTypeGetType), API(ModuleTypeGetValue),
                                 API(ModuleTypeReplaceValue), API(GetKeyNameFromModuleKey), API(GetDbIdFromModuleKey),
                                 API(ListPush), API(ListPop), API(ListGet), API(ListSet), API(ListInsert), API(ListDelete),
                                 API(HashSet), API(HashGet), API(ZsetAdd), API(ZsetIncrby), API(ZsetRem), API(ZsetScore),
                                 {NULL, NULL}};
