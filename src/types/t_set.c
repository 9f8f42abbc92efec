/* t_set.c -- the set commands: SADD, SREM, SMEMBERS, SISMEMBER, SMISMEMBER,
 * SCARD, SPOP, SRANDMEMBER, SMOVE, SINTER/SINTERCARD/SINTERSTORE,
 * SUNION/SUNIONSTORE, SDIFF/SDIFFSTORE and SSCAN.
 *
 * A set value has one of the two encodings Redis 7.0 reports:
 *   intset     an intset (ds/intset.h) while every member is a canonical
 *              64-bit decimal integer (stringToLongLong, Redis's string2ll)
 *              and there are at most set-max-intset-entries (capped at 2^30)
 *              members;
 *   hashtable  an Htab of SetMember entries: one allocation per member
 *              holding the chain link, the length and the bytes.  No sds, no
 *              value: a member shorter than 65535 bytes costs 8 + len bytes
 *              (its length rides in the link word's high bits) plus its
 *              bucket slot.
 * Conversion is one-way (intset -> hashtable) and happens exactly where
 * Redis converts: adding a non-integer, or a successful integer add that
 * takes the count over the limit.  New sets start as intset when their first
 * member is an integer (SADD, SMOVE), and store results start as an empty
 * intset filled member by member (SINTERSTORE, SUNIONSTORE, SDIFFSTORE), so
 * OBJECT ENCODING matches Redis's, including SDIFF's second algorithm, which
 * adds the whole first set before removing.  SPOP's rebuild strategy (few
 * members remain) gives the remaining set a fresh encoding, as in Redis.
 *
 * Replies iterate the value in its own order: ascending for an intset, hash
 * order for a hashtable (nondeterministic, as in Redis).  Handlers parse all
 * arguments first; multi-key commands check every key's type before
 * anything changes. */
#include <limits.h>
#include <stdint.h>
#include <string.h>

#include "core/client.h"
#include "core/command.h"
#include "core/effects.h"
#include "core/errors.h"
#include "core/server.h"
#include "db/db.h"
#include "db/object.h"
#include "ds/alloc.h"
#include "ds/glob.h"
#include "ds/htab.h"
#include "ds/intset.h"
#include "ds/rand.h"
#include "ds/sds.h"
#include "ds/siphash.h"
#include "ds/util.h"
#include "types/member_ttl.h"
#include "types/set.h"
#include "types/scan.h"

/* set-max-intset-entries: the directive at the end of this file. */
static long long setMaxIntsetEntries;

#define ERR_POSITIVE "ERR value is out of range, must be positive"
#define ERR_RAND_RANGE "ERR value is out of range"
/* SPOP rebuilds the set from the members that stay when fewer than
 * count / SPOP_MOVE_STRATEGY_MUL of them remain (Redis's threshold). */
#define SPOP_MOVE_STRATEGY_MUL 5
/* SRANDMEMBER with a positive count copies the whole set and discards
 * members when count * SRANDMEMBER_SUB_STRATEGY_MUL > size. */
#define SRANDMEMBER_SUB_STRATEGY_MUL 3
/* A negative-count SRANDMEMBER whose reply would exceed this many bytes is
 * refused (Redis 7.0 would build it in memory until the process dies). */
#define SRAND_MAX_REPLY_BYTES (1LL << 30)

/* --- hashtable members --- */

/* A member entry: its link word (htab.h; the chain link in the low 48
 * bits, the length in the high 16 when below SM_LONG), then, for a longer
 * member, its length as a uint32, then the bytes. */
typedef struct SetMember {
    uint64_t link;         /* Htab link word; must stay first */
    unsigned char data[];  /* [uint32 len,] member bytes */
} SetMember;

#define SM_LONG 0xFFFF

static inline size_t memberLen(const SetMember *m) {
    size_t l = (size_t)(m->link >> 48);
    if (l != SM_LONG) return l;
    uint32_t v;
    memcpy(&v, m->data, 4);
    return v;
}

static inline const unsigned char *memberBytes(const SetMember *m) {
    return (m->link >> 48) != SM_LONG ? m->data : m->data + 4;
}

static uint64_t memberHash(const void *key, size_t len) { return siphash(key, len, dbHashSeed); }

static void memberKey(const void *entry, const void **key, size_t *len) {
    const SetMember *m = entry;
    *key = memberBytes(m);
    *len = memberLen(m);
}

static const HtabType setHtabType = {memberHash, memberKey, NULL, NULL, NULL, 0};

/* A new member entry (caller owns it; not linked). */
static SetMember *memberCreate(const char *s, size_t len) {
    int isLong = len >= SM_LONG;
    SetMember *m = xmalloc(sizeof(SetMember) + (isLong ? 4 : 0) + len);
    m->link = (uint64_t)(isLong ? SM_LONG : len) << 48;
    if (isLong) {
        uint32_t v = (uint32_t)len;
        memcpy(m->data, &v, 4);
    }
    memcpy(m->data + (isLong ? 4 : 0), s, len);
    return m;
}

static void memberFree(void *entry, void *priv) {
    (void)priv;
    xfree(entry);
}

/* --- the set value abstraction --- */

/* A view of a set value: its encoding and pointer.  After a change, store
 * both back into the key entry with setStore (the pointer may move). */
typedef struct Set {
    int enc;   /* OBJ_ENC_INTSET or OBJ_ENC_HT */
    void *ptr; /* intset * or Htab * */
} Set;

/* One member as iteration yields it: its bytes, and for intset members the
 * integer too (the text then lives in buf). */
typedef struct SetElem {
    const char *str;
    size_t len;
    long long v;
    int isInt;
    char buf[UTIL_LONG_STR_SIZE];
} SetElem;

typedef struct SetIter {
    Set *s;
    uint32_t pos;  /* intset position */
    HtabIter hit;  /* hashtable iterator */
} SetIter;

static Set setOf(const kvobj *o) { return (Set){kvEncoding(o), kvPtr(o)}; }

static void setStore(kvobj *o, const Set *s) {
    kvSetEncoding(o, s->enc);
    kvSetPtr(o, s->ptr);
}

static size_t maxIntsetEntries(void) {
    long long m = setMaxIntsetEntries;
    if (m < 0) m = 0;
    if (m >= (1LL << 30)) m = 1LL << 30;
    return (size_t)m;
}

static void elemFromInt(SetElem *e, long long v) {
    e->v = v;
    e->isInt = 1;
    e->len = (size_t)longLongToString(e->buf, sizeof(e->buf), v);
    e->str = e->buf;
}

static void elemFromMember(SetElem *e, const SetMember *m) {
    e->str = (const char *)memberBytes(m);
    e->len = memberLen(m);
    e->isInt = 0;
}

static size_t setSize(const Set *s) {
    return s->enc == OBJ_ENC_INTSET ? intsetLen(s->ptr) : htabSize(s->ptr);
}

/* An empty set that will receive `first` first: intset when it is an
 * integer, else hashtable (Redis's setTypeCreate). */
static Set setCreateFor(const char *first, size_t len) {
    long long v;
    if (stringToLongLong(first, len, &v)) return (Set){OBJ_ENC_INTSET, intsetNew()};
    return (Set){OBJ_ENC_HT, htabCreate(&setHtabType)};
}

static Set setCreateIntset(void) { return (Set){OBJ_ENC_INTSET, intsetNew()}; }

static void setFreeValue(Set *s) {
    if (s->enc == OBJ_ENC_INTSET)
        intsetFree(s->ptr);
    else
        htabRelease(s->ptr, memberFree, NULL);
    s->ptr = NULL;
}

static void setConvertToHt(Set *s) {
    intset *is = s->ptr;
    Htab *h = htabCreate(&setHtabType);
    uint32_t n = intsetLen(is);
    htabExpand(h, n);
    for (uint32_t i = 0; i < n; i++) {
        long long v;
        char buf[UTIL_LONG_STR_SIZE];
        intsetGet(is, i, &v);
        int len = longLongToString(buf, sizeof(buf), v);
        htabAdd(h, memberCreate(buf, (size_t)len));
    }
    intsetFree(is);
    s->enc = OBJ_ENC_HT;
    s->ptr = h;
}

/* Adds an integer to an intset-encoded set; converts when the count passes
 * the limit.  Returns 1 if added. */
static int intsetAddChecked(Set *s, long long v) {
    int added = 0;
    s->ptr = intsetAdd(s->ptr, v, &added);
    if (added && intsetLen(s->ptr) > maxIntsetEntries()) setConvertToHt(s);
    return added;
}

static int htAdd(Set *s, const char *m, size_t len) {
    if (htabFind(s->ptr, m, len)) return 0;
    htabAdd(s->ptr, memberCreate(m, len));
    return 1;
}

/* Adds a member; returns 1 if it was not there. */
static int setAdd(Set *s, const char *m, size_t len) {
    if (s->enc == OBJ_ENC_INTSET) {
        long long v;
        if (stringToLongLong(m, len, &v)) return intsetAddChecked(s, v);
        setConvertToHt(s);
    }
    return htAdd(s, m, len);
}

static int setAddElem(Set *s, const SetElem *e) {
    if (s->enc == OBJ_ENC_INTSET && e->isInt) return intsetAddChecked(s, e->v);
    return setAdd(s, e->str, e->len);
}

/* Removes a member; returns 1 if it was there. */
static int setRemove(Set *s, const char *m, size_t len) {
    if (s->enc == OBJ_ENC_INTSET) {
        long long v;
        int removed = 0;
        if (!stringToLongLong(m, len, &v)) return 0;
        s->ptr = intsetRemove(s->ptr, v, &removed);
        return removed;
    }
    SetMember *e = htabUnlink(s->ptr, m, len);
    if (!e) return 0;
    xfree(e);
    return 1;
}

int setValueRemove(kvobj *o, const char *m, size_t len) {
    Set s = setOf(o);
    int removed = setRemove(&s, m, len);
    setStore(o, &s);
    return removed;
}

static int setRemoveElem(Set *s, const SetElem *e) {
    if (s->enc == OBJ_ENC_INTSET && e->isInt) {
        int removed = 0;
        s->ptr = intsetRemove(s->ptr, e->v, &removed);
        return removed;
    }
    return setRemove(s, e->str, e->len);
}

static int setIsMember(const Set *s, const char *m, size_t len) {
    if (s->enc == OBJ_ENC_INTSET) {
        long long v;
        return stringToLongLong(m, len, &v) && intsetFind(s->ptr, v);
    }
    return htabFind(s->ptr, m, len) != NULL;
}

/* --- set.h: read access for other types --- */

unsigned long setValueLength(const kvobj *o) {
    Set s = setOf(o);
    return s.enc == OBJ_ENC_INTSET ? intsetLen(s.ptr) : htabSize(s.ptr);
}

int setValueContains(const kvobj *o, const char *m, size_t len) {
    Set s = setOf(o);
    return setIsMember(&s, m, len);
}

static int setHasElem(const Set *s, const SetElem *e) {
    if (s->enc == OBJ_ENC_INTSET && e->isInt) return intsetFind(s->ptr, e->v);
    return setIsMember(s, e->str, e->len);
}

/* Iteration.  The hashtable iterator is safe: the caller may remove the
 * member last returned.  Always release. */
static void setIterInit(SetIter *it, Set *s) {
    it->s = s;
    it->pos = 0;
    if (s->enc == OBJ_ENC_HT) htabIterInit(&it->hit, s->ptr);
}

static int setIterNext(SetIter *it, SetElem *e) {
    if (it->s->enc == OBJ_ENC_INTSET) {
        long long v;
        if (!intsetGet(it->s->ptr, it->pos, &v)) return 0;
        it->pos++;
        elemFromInt(e, v);
        return 1;
    }
    SetMember *m = htabIterNext(&it->hit);
    if (!m) return 0;
    elemFromMember(e, m);
    return 1;
}

static void setIterRelease(SetIter *it) {
    if (it->s->enc == OBJ_ENC_HT) htabIterRelease(&it->hit);
}

void setValueForEach(const kvobj *o, SetVisit *fn, void *priv) {
    Set s = setOf(o);
    SetIter it;
    SetElem e;
    setIterInit(&it, &s);
    while (setIterNext(&it, &e)) fn(priv, e.str, e.len);
    setIterRelease(&it);
}

/* A random member of a non-empty set.  For a hashtable the element points
 * into the member entry (valid until it is removed). */
static void setRandomElem(Set *s, SetElem *e) {
    if (s->enc == OBJ_ENC_INTSET)
        elemFromInt(e, intsetRandom(s->ptr));
    else
        elemFromMember(e, htabRandom(s->ptr));
}

/* Copies an element so that it survives the removal of its member. */
static void elemDetach(SetElem *e, sds *owned) {
    *owned = NULL;
    if (!e->isInt) {
        *owned = sdsNewLen(e->str, e->len);
        e->str = *owned;
    }
}

/* --- value hooks (free, dup, size) --- */

static void setValueFree(void *ptr, int encoding) {
    Set s = {encoding, ptr};
    setFreeValue(&s);
}

static void *setValueDup(const void *ptr, int encoding) {
    if (encoding == OBJ_ENC_INTSET) return intsetDup(ptr);
    Htab *src = (Htab *)ptr, *h = htabCreate(&setHtabType);
    htabExpand(h, htabSize(src));
    HtabIter it;
    htabIterInit(&it, src);
    SetMember *m;
    while ((m = htabIterNext(&it)) != NULL) htabAdd(h, memberCreate((const char *)memberBytes(m), memberLen(m)));
    htabIterRelease(&it);
    return h;
}

/* Intset: its blob.  Hashtable: the table, its slots and the members,
 * estimated from up to 16 of them (the hook runs on every lazy-free
 * decision, so it does not walk a big set). */
/* Intset: its bytes.  Hashtable: table, buckets, and the member count
 * times the average size of `samples` members (0: all). */
static size_t setValueMemUsage(const void *ptr, int encoding, size_t samples) {
    if (encoding == OBJ_ENC_INTSET) return intsetBlobLen(ptr);
    Htab *h = (Htab *)ptr;
    size_t n = htabSize(h), sampled = 0, bytes = 0;
    HtabIter it;
    htabIterInit(&it, h);
    SetMember *m;
    while ((!samples || sampled < samples) && (m = htabIterNext(&it)) != NULL) {
        bytes += xmallocSize(m);
        sampled++;
    }
    htabIterRelease(&it);
    size_t members = sampled ? bytes / sampled * n : 0;
    return sizeof(Htab) + htabBuckets(h) * sizeof(void *) + members;
}

static size_t setValueSize(const void *ptr, int encoding) { return setValueMemUsage(ptr, encoding, 16); }

const ObjectType setObjectType = {
    .free = setValueFree, .dup = setValueDup, .size = setValueSize, .memUsage = setValueMemUsage};

/* --- helpers for handlers --- */

static void notifySet(Client *c, const char *event, const char *key, size_t len) {
    notifyKeyspaceEvent(NOTIFY_SET, event, key, len, c->db->id);
}

static void notifyDel(Client *c, const char *key, size_t len) {
    notifyKeyspaceEvent(NOTIFY_GENERIC, "del", key, len, c->db->id);
}

static void replyElem(Client *c, const SetElem *e) { replyBulk(c, e->str, e->len); }

/* Replies every member of s (as a set: '~' in RESP3). */
static void replySetMembers(Client *c, Set *s) {
    replySetLen(c, (long)setSize(s));
    SetIter it;
    SetElem e;
    setIterInit(&it, s);
    while (setIterNext(&it, &e)) replyElem(c, &e);
    setIterRelease(&it);
}

/* Stores s at key `dst` (replacing any value and its TTL), or deletes dst
 * when s is empty; replies the size and notifies `event` / "del".  Takes
 * ownership of s. */
static void storeResult(Client *c, const sds dst, Set *s, const char *event) {
    size_t n = setSize(s);
    if (n > 0) {
        dbSetKey(c->db, kvCreatePtr(dst, sdsLen(dst), OBJ_SET, s->enc, s->ptr), 0);
        replyLongLong(c, (long long)n);
        signalModifiedKey(c, c->db, dst, sdsLen(dst));
        notifySet(c, event, dst, sdsLen(dst));
        serverIncrDirty(1);
        return;
    }
    setFreeValue(s);
    replyLongLong(c, 0);
    if (dbDelete(c->db, dst, sdsLen(dst))) {
        signalModifiedKey(c, c->db, dst, sdsLen(dst));
        notifyDel(c, dst, sdsLen(dst));
        serverIncrDirty(1);
    }
}

/* --- SADD / SREM / SMOVE --- */

static void saddCommand(Client *c) {
    int wrongType;
    sds key = c->argv[1];
    kvobj *o = lookupWriteOrReply(c, key, OBJ_SET, &wrongType);
    if (wrongType) return;
    Set s;
    if (!o) {
        s = setCreateFor(c->argv[2], sdsLen(c->argv[2]));
        o = kvCreatePtr(key, sdsLen(key), OBJ_SET, s.enc, s.ptr);
        dbAdd(c->db, o);
    } else {
        s = setOf(o);
        /* A member added anew has no TTL (one it had went with it). */
        if (__builtin_expect(dbMemberTtlKeys != 0, 0))
            for (int j = 2; j < c->argc; j++)
                if (!setIsMember(&s, c->argv[j], sdsLen(c->argv[j]))) memberTtlForget(c->db, key, c->argv[j]);
    }
    long long added = 0;
    for (int j = 2; j < c->argc; j++) added += setAdd(&s, c->argv[j], sdsLen(c->argv[j]));
    setStore(o, &s);
    if (added) {
        signalModifiedKey(c, c->db, key, sdsLen(key));
        notifySet(c, "sadd", key, sdsLen(key));
        serverIncrDirty(added);
    }
    replyLongLong(c, added);
}

static void sremCommand(Client *c) {
    int wrongType;
    sds key = c->argv[1];
    kvobj *o = lookupWriteOrReply(c, key, OBJ_SET, &wrongType);
    if (!o) {
        if (!wrongType) replyLongLong(c, 0);
        return;
    }
    Set s = setOf(o);
    long long removed = 0;
    int emptied = 0;
    for (int j = 2; j < c->argc; j++) {
        removed += setRemove(&s, c->argv[j], sdsLen(c->argv[j]));
        if (setSize(&s) == 0) {
            emptied = 1;
            break;
        }
    }
    setStore(o, &s);
    if (removed) {
        notifySet(c, "srem", key, sdsLen(key));
        if (emptied) {
            dbDelete(c->db, key, sdsLen(key));
            notifyDel(c, key, sdsLen(key));
        }
        signalModifiedKey(c, c->db, key, sdsLen(key));
        serverIncrDirty(removed);
    }
    replyLongLong(c, removed);
}

/* SMOVE source destination member.  A missing source answers 0 before the
 * types are checked, as in Redis. */
static void smoveCommand(Client *c) {
    sds src = c->argv[1], dst = c->argv[2], m = c->argv[3];
    kvobj *so = dbLookupWrite(c->db, src, sdsLen(src));
    kvobj *dobj = dbLookupWrite(c->db, dst, sdsLen(dst));
    if (!so) {
        replyLongLong(c, 0);
        return;
    }
    if (kvType(so) != OBJ_SET || (dobj && kvType(dobj) != OBJ_SET)) {
        replyErrorWrongType(c);
        return;
    }
    Set ss = setOf(so);
    if (so == dobj) {
        replyLongLong(c, setIsMember(&ss, m, sdsLen(m)));
        return;
    }
    if (!setRemove(&ss, m, sdsLen(m))) {
        replyLongLong(c, 0);
        return;
    }
    setStore(so, &ss);
    notifySet(c, "srem", src, sdsLen(src));
    if (setSize(&ss) == 0) {
        dbDelete(c->db, src, sdsLen(src));
        notifyDel(c, src, sdsLen(src));
    }
    Set ds;
    if (!dobj) {
        ds = setCreateFor(m, sdsLen(m));
        dobj = kvCreatePtr(dst, sdsLen(dst), OBJ_SET, ds.enc, ds.ptr);
        dbAdd(c->db, dobj);
    } else {
        ds = setOf(dobj);
    }
    signalModifiedKey(c, c->db, src, sdsLen(src));
    serverIncrDirty(1);
    if (setAdd(&ds, m, sdsLen(m))) {
        if (dbMemberTtlKeys) memberTtlForget(c->db, dst, m);
        setStore(dobj, &ds);
        signalModifiedKey(c, c->db, dst, sdsLen(dst));
        notifySet(c, "sadd", dst, sdsLen(dst));
        serverIncrDirty(1);
    }
    replyLongLong(c, 1);
}

/* --- SISMEMBER / SMISMEMBER / SCARD --- */

static void sismemberCommand(Client *c) {
    int wrongType;
    kvobj *o = lookupReadOrReply(c, c->argv[1], OBJ_SET, &wrongType);
    if (wrongType) return;
    if (!o) {
        replyLongLong(c, 0);
        return;
    }
    Set s = setOf(o);
    replyLongLong(c, setIsMember(&s, c->argv[2], sdsLen(c->argv[2])));
}

static void smismemberCommand(Client *c) {
    int wrongType;
    kvobj *o = lookupReadOrReply(c, c->argv[1], OBJ_SET, &wrongType);
    if (wrongType) return;
    replyArrayLen(c, c->argc - 2);
    Set s = o ? setOf(o) : (Set){0, NULL};
    for (int j = 2; j < c->argc; j++) replyLongLong(c, o ? setIsMember(&s, c->argv[j], sdsLen(c->argv[j])) : 0);
}

static void scardCommand(Client *c) {
    int wrongType;
    kvobj *o = lookupReadOrReply(c, c->argv[1], OBJ_SET, &wrongType);
    if (wrongType) return;
    Set s = o ? setOf(o) : (Set){0, NULL};
    replyLongLong(c, o ? (long long)setSize(&s) : 0);
}

/* --- SPOP --- */

/* The effect of popping e from the set at key: SREM key member.  SPOP key
 * rewrites itself so; SPOP key count states one SREM per member. */
static void spopEffect(Client *c, const sds key, const SetElem *e, int rewrite) {
    if (!effectsOn) return;
    EffectArg args[3] = {EA_STR("SREM"), EA_SDS(key), EA_BUF(e->str, e->len)};
    if (rewrite) effectsRewrite(3, args);
    else effectsAlso(c->db->id, 3, args);
}

static void spopOne(Client *c) {
    int wrongType;
    sds key = c->argv[1];
    kvobj *o = lookupWriteOrReply(c, key, OBJ_SET, &wrongType);
    if (!o) {
        if (!wrongType) replyNull(c);
        return;
    }
    Set s = setOf(o);
    SetElem e;
    sds owned;
    setRandomElem(&s, &e);
    elemDetach(&e, &owned);
    setRemoveElem(&s, &e);
    setStore(o, &s);
    replyElem(c, &e);
    spopEffect(c, key, &e, 1);
    sdsFree(owned);
    notifySet(c, "spop", key, sdsLen(key));
    if (setSize(&s) == 0) {
        dbDelete(c->db, key, sdsLen(key));
        notifyDel(c, key, sdsLen(key));
    }
    signalModifiedKey(c, c->db, key, sdsLen(key));
    serverIncrDirty(1);
}

/* SPOP key count with 0 < count < size: pops random members one by one, or,
 * when few members remain, moves the remaining ones to a new set (whose
 * encoding is chosen afresh) and replies the rest. */
static void spopSome(Client *c, kvobj *o, Set *s, size_t count) {
    size_t remaining = setSize(s) - count;
    SetElem e;
    sds owned;
    replySetLen(c, (long)count);
    if (remaining * SPOP_MOVE_STRATEGY_MUL > count) {
        while (count--) {
            setRandomElem(s, &e);
            elemDetach(&e, &owned);
            setRemoveElem(s, &e);
            replyElem(c, &e);
            spopEffect(c, c->argv[1], &e, 0);
            sdsFree(owned);
        }
        setStore(o, s);
        return;
    }
    Set keep = {0, NULL};
    while (remaining--) {
        setRandomElem(s, &e);
        elemDetach(&e, &owned);
        if (!keep.ptr) keep = setCreateFor(e.str, e.len);
        setAdd(&keep, e.str, e.len);
        setRemoveElem(s, &e);
        sdsFree(owned);
    }
    SetIter it;
    setIterInit(&it, s);
    while (setIterNext(&it, &e)) {
        replyElem(c, &e);
        spopEffect(c, c->argv[1], &e, 0);
    }
    setIterRelease(&it);
    setFreeValue(s);
    *s = keep;
    setStore(o, s);
}

static void spopWithCount(Client *c) {
    long count;
    int wrongType;
    sds key = c->argv[1];
    if (getPositiveLongOrReply(c, c->argv[2], &count, ERR_POSITIVE) == -1) return;
    kvobj *o = lookupWriteOrReply(c, key, OBJ_SET, &wrongType);
    if (!o) {
        if (!wrongType) replySetLen(c, 0);
        return;
    }
    if (count == 0) {
        replySetLen(c, 0);
        return;
    }
    Set s = setOf(o);
    size_t size = setSize(&s);
    if ((unsigned long)count >= size) {
        replySetMembers(c, &s);
        dbDelete(c->db, key, sdsLen(key));
        notifySet(c, "spop", key, sdsLen(key));
        notifyDel(c, key, sdsLen(key));
        signalModifiedKey(c, c->db, key, sdsLen(key));
        serverIncrDirty((long long)size);
        EffectArg args[2] = {EA_STR("DEL"), EA_SDS(key)};
        effectsRewrite(2, args);
        return;
    }
    effectsPrevent();
    spopSome(c, o, &s, (size_t)count);
    notifySet(c, "spop", key, sdsLen(key));
    signalModifiedKey(c, c->db, key, sdsLen(key));
    serverIncrDirty(count);
}

static void spopCommand(Client *c) {
    if (c->argc == 3) {
        spopWithCount(c);
        return;
    }
    if (c->argc > 3) {
        replyErrorSyntax(c);
        return;
    }
    spopOne(c);
}

/* --- SRANDMEMBER --- */

/* Estimated reply bytes for n random members: bulk headers plus the mean
 * length of a few sampled members. */
static long double randReplyBytes(Set *s, unsigned long n) {
    size_t bytes = 0;
    SetElem e;
    for (int i = 0; i < 8; i++) {
        setRandomElem(s, &e);
        bytes += e.len + 6 + digits10(e.len);
    }
    return (long double)bytes / 8 * n;
}

/* count distinct members, count < size. */
static void srandDistinct(Client *c, Set *s, size_t count) {
    size_t size = setSize(s);
    replyArrayLen(c, (long)count);
    if (count * SRANDMEMBER_SUB_STRATEGY_MUL > size) {
        /* Collect all, then a partial Fisher-Yates shuffle picks count. */
        SetElem *all = xmalloc(sizeof(SetElem) * size);
        SetIter it;
        size_t n = 0;
        setIterInit(&it, s);
        while (n < size && setIterNext(&it, &all[n])) {
            if (all[n].isInt) all[n].str = all[n].buf;
            n++;
        }
        setIterRelease(&it);
        for (size_t i = 0; i < count; i++) {
            size_t j = i + (size_t)randBounded(n - i);
            SetElem t = all[i];
            all[i] = all[j];
            all[j] = t;
            if (all[i].isInt) all[i].str = all[i].buf;
            replyElem(c, &all[i]);
        }
        xfree(all);
        return;
    }
    /* Few members of a big set: draw until count distinct ones were seen. */
    Set seen = {OBJ_ENC_HT, htabCreate(&setHtabType)};
    size_t got = 0;
    SetElem e;
    while (got < count) {
        setRandomElem(s, &e);
        if (htAdd(&seen, e.str, e.len)) {
            replyElem(c, &e);
            got++;
        }
    }
    setFreeValue(&seen);
}

static void srandmemberWithCount(Client *c) {
    long count;
    int wrongType;
    if (getRangeLongOrReply(c, c->argv[2], -LONG_MAX, LONG_MAX, &count, NULL) == -1) return;
    kvobj *o = lookupReadOrReply(c, c->argv[1], OBJ_SET, &wrongType);
    if (!o) {
        if (!wrongType) replyEmptyArray(c);
        return;
    }
    if (count == 0) {
        replyEmptyArray(c);
        return;
    }
    Set s = setOf(o);
    SetElem e;
    if (count < 0) {
        unsigned long n = (unsigned long)-count;
        if (randReplyBytes(&s, n) > (long double)SRAND_MAX_REPLY_BYTES) {
            replyError(c, ERR_RAND_RANGE);
            return;
        }
        replyArrayLen(c, (long)n);
        while (n--) {
            setRandomElem(&s, &e);
            replyElem(c, &e);
        }
        return;
    }
    size_t size = setSize(&s);
    if ((unsigned long)count >= size) {
        replyArrayLen(c, (long)size);
        SetIter it;
        setIterInit(&it, &s);
        while (setIterNext(&it, &e)) replyElem(c, &e);
        setIterRelease(&it);
        return;
    }
    srandDistinct(c, &s, (size_t)count);
}

static void srandmemberCommand(Client *c) {
    if (c->argc == 3) {
        srandmemberWithCount(c);
        return;
    }
    if (c->argc > 3) {
        replyErrorSyntax(c);
        return;
    }
    int wrongType;
    kvobj *o = lookupReadOrReply(c, c->argv[1], OBJ_SET, &wrongType);
    if (!o) {
        if (!wrongType) replyNull(c);
        return;
    }
    Set s = setOf(o);
    SetElem e;
    setRandomElem(&s, &e);
    replyElem(c, &e);
}

/* --- multi-set operations --- */

/* Looks up keys[0..n) as sets.  Read lookups even for the STORE forms:
 * Redis counts their sources as keyspace hits and misses.  Missing keys
 * leave a NULL kvobj.  Returns -1 after replying WRONGTYPE if any key holds
 * another type, else the number of missing keys. */
static int lookupSets(Client *c, sds *keys, int n, kvobj **out) {
    int missing = 0;
    for (int j = 0; j < n; j++) {
        int wrongType;
        out[j] = lookupReadOrReply(c, keys[j], OBJ_SET, &wrongType);
        if (wrongType) return -1;
        if (!out[j]) missing++;
    }
    return missing;
}

/* Stable sort of sets by size: ascending, or descending when desc. */
static void sortBySize(Set *sets, kvobj **objs, int n, int desc) {
    for (int i = 1; i < n; i++) {
        Set s = sets[i];
        kvobj *o = objs[i];
        size_t sz = s.ptr ? setSize(&s) : 0;
        int j = i - 1;
        while (j >= 0) {
            size_t szj = sets[j].ptr ? setSize(&sets[j]) : 0;
            if (desc ? szj >= sz : szj <= sz) break;
            sets[j + 1] = sets[j];
            objs[j + 1] = objs[j];
            j--;
        }
        sets[j + 1] = s;
        objs[j + 1] = o;
    }
}

/* SINTER, SINTERCARD (cardOnly, limit 0 = none) and SINTERSTORE (dst). */
static void sinterGeneric(Client *c, sds *keys, int n, sds dst, int cardOnly, long limit) {
    kvobj **objs = xmalloc(sizeof(kvobj *) * (size_t)n);
    Set *sets = xmalloc(sizeof(Set) * (size_t)n);
    int missing = lookupSets(c, keys, n, objs);
    if (missing < 0) goto cleanup;
    if (missing > 0) {
        if (dst) {
            replyLongLong(c, 0);
            if (dbDelete(c->db, dst, sdsLen(dst))) {
                signalModifiedKey(c, c->db, dst, sdsLen(dst));
                notifyDel(c, dst, sdsLen(dst));
                serverIncrDirty(1);
            }
        } else if (cardOnly) {
            replyLongLong(c, 0);
        } else {
            replySetLen(c, 0);
        }
        goto cleanup;
    }
    for (int j = 0; j < n; j++) sets[j] = setOf(objs[j]);
    sortBySize(sets, objs, n, 0);

    Set out = setCreateIntset();
    void *lenNode = (!dst && !cardOnly) ? replyDeferredLen(c) : NULL;
    long card = 0;
    SetIter it;
    SetElem e;
    setIterInit(&it, &sets[0]);
    while (setIterNext(&it, &e)) {
        int j;
        for (j = 1; j < n; j++) {
            if (objs[j] == objs[0]) continue;
            if (!setHasElem(&sets[j], &e)) break;
        }
        if (j < n) continue;
        card++;
        if (dst)
            setAddElem(&out, &e);
        else if (!cardOnly)
            replyElem(c, &e);
        if (cardOnly && limit && card >= limit) break;
    }
    setIterRelease(&it);

    if (dst) {
        storeResult(c, dst, &out, "sinterstore");
    } else {
        setFreeValue(&out);
        if (cardOnly)
            replyLongLong(c, card);
        else
            replySetDeferredSetLen(c, lenNode, card);
    }
cleanup:
    xfree(objs);
    xfree(sets);
}

static void sinterCommand(Client *c) { sinterGeneric(c, c->argv + 1, c->argc - 1, NULL, 0, 0); }

static void sinterstoreCommand(Client *c) { sinterGeneric(c, c->argv + 2, c->argc - 2, c->argv[1], 0, 0); }

/* SINTERCARD numkeys key [key ...] [LIMIT limit] */
static void sintercardCommand(Client *c) {
    long numkeys, limit = 0;
    if (!stringToLong(c->argv[1], sdsLen(c->argv[1]), &numkeys) || numkeys <= 0) {
        replyError(c, "ERR numkeys should be greater than 0");
        return;
    }
    if (numkeys > c->argc - 2) {
        replyError(c, "ERR Number of keys can't be greater than number of args");
        return;
    }
    for (int j = 2 + (int)numkeys; j < c->argc; j++) {
        if (argIs(c->argv[j], "limit") && j + 1 < c->argc) {
            if (getPositiveLongOrReply(c, c->argv[j + 1], &limit, "ERR LIMIT can't be negative") == -1) return;
            j++;
        } else {
            replyErrorSyntax(c);
            return;
        }
    }
    sinterGeneric(c, c->argv + 2, (int)numkeys, NULL, 1, limit);
}

enum { SET_OP_UNION, SET_OP_DIFF };

/* The result of SDIFF: algorithm 1 checks each member of the first set
 * against the others (sorted by decreasing size); algorithm 2 adds the first
 * set and removes the others' members.  Redis picks by estimated work, and
 * the choice shows in the result's encoding. */
static void diffInto(Set *out, Set *sets, kvobj **objs, int n) {
    long long work1 = 0, work2 = 0;
    for (int j = 0; j < n; j++) {
        if (!objs[j]) continue;
        work1 += (long long)setSize(&sets[0]);
        work2 += (long long)setSize(&sets[j]);
    }
    work1 /= 2;
    SetIter it;
    SetElem e;
    if (work1 <= work2) {
        if (n > 1) sortBySize(sets + 1, objs + 1, n - 1, 1);
        setIterInit(&it, &sets[0]);
        while (setIterNext(&it, &e)) {
            int j;
            for (j = 1; j < n; j++)
                if (objs[j] && setHasElem(&sets[j], &e)) break;
            if (j == n) setAddElem(out, &e);
        }
        setIterRelease(&it);
        return;
    }
    for (int j = 0; j < n; j++) {
        if (!objs[j]) continue;
        setIterInit(&it, &sets[j]);
        while (setIterNext(&it, &e)) {
            if (j == 0)
                setAddElem(out, &e);
            else
                setRemoveElem(out, &e);
        }
        setIterRelease(&it);
        if (setSize(out) == 0) break;
    }
}

/* SUNION, SDIFF and their STORE forms (dst non-NULL). */
static void sunionDiffGeneric(Client *c, sds *keys, int n, sds dst, int op) {
    kvobj **objs = xmalloc(sizeof(kvobj *) * (size_t)n);
    Set *sets = xmalloc(sizeof(Set) * (size_t)n);
    if (lookupSets(c, keys, n, objs) < 0) goto cleanup;
    int sameSet = 0;
    for (int j = 0; j < n; j++) {
        sets[j] = objs[j] ? setOf(objs[j]) : (Set){0, NULL};
        if (j > 0 && objs[j] && objs[j] == objs[0]) sameSet = 1;
    }
    Set out = setCreateIntset();
    if (op == SET_OP_UNION) {
        SetIter it;
        SetElem e;
        for (int j = 0; j < n; j++) {
            if (!objs[j]) continue;
            setIterInit(&it, &sets[j]);
            while (setIterNext(&it, &e)) setAddElem(&out, &e);
            setIterRelease(&it);
        }
    } else if (objs[0] && !sameSet) {
        diffInto(&out, sets, objs, n);
    }
    if (dst) {
        storeResult(c, dst, &out, op == SET_OP_UNION ? "sunionstore" : "sdiffstore");
    } else {
        replySetMembers(c, &out);
        setFreeValue(&out);
    }
cleanup:
    xfree(objs);
    xfree(sets);
}

static void smembersCommand(Client *c) { sinterGeneric(c, c->argv + 1, 1, NULL, 0, 0); }
static void sunionCommand(Client *c) { sunionDiffGeneric(c, c->argv + 1, c->argc - 1, NULL, SET_OP_UNION); }
static void sunionstoreCommand(Client *c) {
    sunionDiffGeneric(c, c->argv + 2, c->argc - 2, c->argv[1], SET_OP_UNION);
}
static void sdiffCommand(Client *c) { sunionDiffGeneric(c, c->argv + 1, c->argc - 1, NULL, SET_OP_DIFF); }
static void sdiffstoreCommand(Client *c) { sunionDiffGeneric(c, c->argv + 2, c->argc - 2, c->argv[1], SET_OP_DIFF); }

/* --- SSCAN --- */

/* SSCAN key cursor [MATCH pattern] [COUNT count].  An intset answers every
 * member at once with cursor 0; a hashtable scans at most 10 x COUNT
 * buckets or until COUNT members were gathered, then filters by MATCH. */
static void sscanCommand(Client *c) {
    uint64_t cursor;
    long count;
    sds pat;
    kvobj *o = scanKeyStartOrReply(c, OBJ_SET, &cursor, &count, &pat);
    if (!o) return;

    Set s = setOf(o);
    replyArrayLen(c, 2);
    if (s.enc == OBJ_ENC_INTSET) {
        replyBulk(c, "0", 1);
        void *lenNode = replyDeferredLen(c);
        long n = 0;
        SetIter it;
        SetElem e;
        setIterInit(&it, &s);
        while (setIterNext(&it, &e)) {
            if (pat && !globMatch(pat, sdsLen(pat), e.str, e.len, 0)) continue;
            replyElem(c, &e);
            n++;
        }
        setIterRelease(&it);
        replySetDeferredArrayLen(c, lenNode, n);
        return;
    }
    ScanBatch b = {0};
    long maxIter = count > LONG_MAX / 10 ? LONG_MAX : count * 10;
    do {
        cursor = htabScan(s.ptr, cursor, scanBatchCollect, &b);
    } while (cursor && maxIter-- && b.count < (size_t)count);
    scanReplyCursor(c, cursor);
    void *lenNode = replyDeferredLen(c);
    long n = 0;
    for (size_t i = 0; i < b.count; i++) {
        SetMember *m = b.items[i];
        if (pat && !globMatch(pat, sdsLen(pat), (const char *)memberBytes(m), memberLen(m), 0)) continue;
        replyBulk(c, memberBytes(m), memberLen(m));
        n++;
    }
    replySetDeferredArrayLen(c, lenNode, n);
    scanBatchFree(&b);
}

/* --- command handlers (metadata: src/core/command_data.c) --- */

Command setCommands[] = {
    {.name = "sadd", .proc = saddCommand},
    {.name = "srem", .proc = sremCommand},
    {.name = "smembers", .proc = smembersCommand},
    {.name = "sismember", .proc = sismemberCommand},
    {.name = "smismember", .proc = smismemberCommand},
    {.name = "scard", .proc = scardCommand},
    {.name = "spop", .proc = spopCommand},
    {.name = "srandmember", .proc = srandmemberCommand},
    {.name = "smove", .proc = smoveCommand},
    {.name = "sinter", .proc = sinterCommand},
    {.name = "sintercard", .proc = sintercardCommand},
    {.name = "sinterstore", .proc = sinterstoreCommand},
    {.name = "sunion", .proc = sunionCommand},
    {.name = "sunionstore", .proc = sunionstoreCommand},
    {.name = "sdiff", .proc = sdiffCommand},
    {.name = "sdiffstore", .proc = sdiffstoreCommand},
    {.name = "sscan", .proc = sscanCommand},
    {0},
};

/* --- values built outside the keyspace (RDB, DUMP/RESTORE) --- */

void setLoadBegin(size_t hint, int *enc, void **ptr) {
    Set s = hint > maxIntsetEntries() ? (Set){OBJ_ENC_HT, htabCreate(&setHtabType)} : setCreateIntset();
    if (s.enc == OBJ_ENC_HT) htabExpand(s.ptr, hint);
    *enc = s.enc;
    *ptr = s.ptr;
}

int setLoadAdd(int *enc, void **ptr, const char *m, size_t len) {
    Set s = {*enc, *ptr};
    int added = setAdd(&s, m, len);
    *enc = s.enc;
    *ptr = s.ptr;
    return added;
}

void setLoadFree(int enc, void *ptr) {
    Set s = {enc, ptr};
    setFreeValue(&s);
}

/* ------------------------------------------------------------------------ */
/* Configuration                                                             */
/* ------------------------------------------------------------------------ */

static ConfigDef setConfig[] = {
    CONFIG_LL("set-max-intset-entries", NULL, 0, setMaxIntsetEntries, 0, LONG_MAX, "512",
              .rank = CONFIG_RANK_ENCODINGS + 4),
};

void setRegisterConfig(void) { configRegister(setConfig, CONFIG_COUNT_OF(setConfig)); }
