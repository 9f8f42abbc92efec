/* t_string.c -- the string commands: the SET and GET families, counters,
 * APPEND / SETRANGE / GETRANGE / STRLEN and LCS; and newer servers'
 * compare-and-set / compare-and-delete (issue 38): SET's IF* conditions,
 * DELEX, DIGEST, MSETEX (Redis 8.4) and DELIFEQ (Valkey 9.0).
 *
 * A string value has one of the three encodings Redis 7.0 reports:
 *   int     a canonical integer of at most 20 characters, stored inline;
 *   embstr  up to 44 bytes, stored inline in the key entry;
 *   raw     an sds owned by the entry.
 * Which command produces which encoding follows Redis exactly, because
 * OBJECT ENCODING makes it visible:
 *   - SET, SETNX, SETEX, PSETEX, GETSET, MSET, MSETNX, MSETEX and APPEND on
 *     a missing key pick the encoding from the bytes (kvCreateString);
 *   - INCR/DECR/INCRBY/DECRBY always store int;
 *   - INCRBYFLOAT stores its text as embstr (<= 44 bytes) or raw, never int;
 *   - APPEND on an existing key and SETRANGE with a non-empty value make the
 *     value raw first (dbUnshareString), even when nothing else changes.
 *
 * Expire times are absolute unix ms (serverNowMs() + relative).  Handlers
 * parse every argument before they look at or change the keyspace, except
 * where Redis itself checks the key first and clients can see the order
 * (GETEX's expire value, INCRBYFLOAT, LCS); those spots say so.
 *
 * Effects (core/effects.h): writes propagate as sent except where Redis
 * rewrites them: SET/SETEX/PSETEX with an expire become SET key value PXAT
 * <ms>, SET ... GET loses its GET, GETEX becomes PEXPIREAT/PERSIST/DEL,
 * GETDEL becomes DEL, INCRBYFLOAT becomes SET ... KEEPTTL.  Cairn's own
 * bounded counters (INCRBYBOUND, INCRBYFLOATBOUND) become SET ... KEEPTTL
 * too, and CL.THROTTLE (the redis-cell module's GCRA) becomes SET key
 * <tat> PXAT <ms>; the issue 38 commands take Redis 7.0 words (SET ... IF*
 * -> SET ... [KEEPTTL] / PXAT, DELEX and DELIFEQ -> DEL, MSETEX -> MSET or
 * a SET per key): so a Redis 7.0 replica or AOF reader stays equal.
 *
 * A digest is XXH3-64 (Debian's libxxhash) of the value's bytes -- an int
 * encoding's decimal text -- as 16 lower-case hex digits; IFDEQ/IFDNE take
 * any case, and check the length only once the key is a string. */
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <string.h>
#include <strings.h>
#include <xxhash.h>

#include "core/client.h"
#include "core/command.h"
#include "core/effects.h"
#include "core/errors.h"
#include "core/server.h"
#include "db/db.h"
#include "db/object.h"
#include "ds/alloc.h"
#include "ds/sds.h"
#include "ds/util.h"

/* Options of SET and GETEX. */
/* Values at least this long may keep the argument string (createValue). */
#define SET_ADOPT_MIN (OBJ_EMBSTR_MAX + 1)

#define OPT_NX (1 << 0)
#define OPT_XX (1 << 1)
#define OPT_GET (1 << 2)
#define OPT_KEEPTTL (1 << 3)
#define OPT_PERSIST (1 << 4)
#define OPT_EX (1 << 5)
#define OPT_PX (1 << 6)
#define OPT_EXAT (1 << 7)
#define OPT_PXAT (1 << 8)
#define OPT_ANY_EXPIRE (OPT_EX | OPT_PX | OPT_EXAT | OPT_PXAT)
/* Redis 8.4's compare-and-set conditions of SET (one at most, not with
 * NX or XX): on the value (IFEQ/IFNE) or on its digest (IFDEQ/IFDNE). */
#define OPT_IFEQ (1 << 9)
#define OPT_IFNE (1 << 10)
#define OPT_IFDEQ (1 << 11)
#define OPT_IFDNE (1 << 12)
#define OPT_ANY_IF (OPT_IFEQ | OPT_IFNE | OPT_IFDEQ | OPT_IFDNE)

/* DIGEST's form: XXH3-64 of the value as 16 lower-case hex digits. */
#define DIGEST_HEX_LEN 16
#define ERR_DIGEST_LEN "ERR must be exactly 16 hexadecimal characters"

/* --- shared helpers --- */

static void notifyString(Client *c, const char *event, const sds key) {
    notifyKeyspaceEvent(NOTIFY_STRING, event, key, sdsLen(key), c->db->id);
}

static void notifyGeneric(Client *c, const char *event, const sds key) {
    notifyKeyspaceEvent(NOTIFY_GENERIC, event, key, sdsLen(key), c->db->id);
}

/* Replies the error and returns -1 when a string of `size` bytes grown by
 * `append` bytes would exceed proto-max-bulk-len.  (Redis exempts its master
 * and the AOF loader; those clients do not exist yet.) */
static int checkStringLengthOrReply(Client *c, long long size, long long append) {
    long long max = server.cfg.protoMaxBulkLen;
    if (append > max || size > max - append) {
        replyError(c, ERR_STRING_TOO_LONG);
        return -1;
    }
    return 0;
}

/* The option an argument of SET or GETEX names (OPT_* flag), 0 if none.
 * The usual spellings are matched on their length and case-folded bytes
 * (b | 0x20 equals a lower-case letter only for that letter in either
 * case); anything else goes through strcasecmp, which, as in Redis, stops
 * at a NUL byte ("ex\0junk" is EX).  Five strcasecmp calls per SET EX
 * were a tenth of its instructions. */
static int optionFlag(const sds a) {
    const unsigned char *p = (const unsigned char *)a;
    size_t n = sdsLen(a);
    if (n == 2 && (p[1] | 0x20) == 'x') {
        switch (p[0] | 0x20) {
        case 'e': return OPT_EX;
        case 'p': return OPT_PX;
        case 'n': return OPT_NX;
        case 'x': return OPT_XX;
        }
    } else if (n == 4 && (p[1] | 0x20) == 'x' && (p[2] | 0x20) == 'a' && (p[3] | 0x20) == 't') {
        if ((p[0] | 0x20) == 'e') return OPT_EXAT;
        if ((p[0] | 0x20) == 'p') return OPT_PXAT;
    } else if (n == 3 && (p[0] | 0x20) == 'g' && (p[1] | 0x20) == 'e' && (p[2] | 0x20) == 't') {
        return OPT_GET;
    }
    static const struct {
        const char *name;
        int flag;
    } names[] = {{"ex", OPT_EX},   {"px", OPT_PX},           {"exat", OPT_EXAT},       {"pxat", OPT_PXAT}, {"nx", OPT_NX},
                 {"xx", OPT_XX},   {"get", OPT_GET},         {"keepttl", OPT_KEEPTTL}, {"persist", OPT_PERSIST},
                 {"ifeq", OPT_IFEQ}, {"ifne", OPT_IFNE},     {"ifdeq", OPT_IFDEQ},     {"ifdne", OPT_IFDNE}};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if (argIs(a, names[i].name)) return names[i].flag;
    return 0;
}

/* Parse the options of SET (forSet) or GETEX from argv[first..].  Stores the
 * flags, the expire argument (NULL if none) and, for SET, the IF* argument
 * in *matchOut (NULL if none; matchOut may be NULL for GETEX).  Replies the
 * syntax error and returns -1 on a bad or conflicting option.  An expire
 * option given twice is accepted and the last value wins, as in Redis; NX,
 * XX and the IF* conditions exclude each other in any order (Redis 8.4
 * with its later fix), one condition given twice is accepted. */
static int parseStringOptions(Client *c, int first, int forSet, int *flagsOut, sds *expireOut, sds *matchOut) {
    int flags = 0;
    sds expire = NULL;
    for (int j = first; j < c->argc; j++) {
        int opt = optionFlag(c->argv[j]);
        int exp = opt & OPT_ANY_EXPIRE;
        if (forSet && opt == OPT_NX && !(flags & (OPT_XX | OPT_ANY_IF))) {
            flags |= OPT_NX;
        } else if (forSet && opt == OPT_XX && !(flags & (OPT_NX | OPT_ANY_IF))) {
            flags |= OPT_XX;
        } else if (forSet && (opt & OPT_ANY_IF) && j + 1 < c->argc &&
                   !(flags & (OPT_NX | OPT_XX | (OPT_ANY_IF & ~opt)))) {
            flags |= opt;
            *matchOut = c->argv[++j];
        } else if (forSet && opt == OPT_GET) {
            flags |= OPT_GET;
        } else if (forSet && opt == OPT_KEEPTTL && !(flags & OPT_ANY_EXPIRE)) {
            flags |= OPT_KEEPTTL;
        } else if (!forSet && opt == OPT_PERSIST && !(flags & OPT_ANY_EXPIRE)) {
            flags |= OPT_PERSIST;
        } else if (exp && j + 1 < c->argc && !(flags & (OPT_KEEPTTL | OPT_PERSIST)) &&
                   !(flags & OPT_ANY_EXPIRE & ~exp)) {
            flags |= exp;
            expire = c->argv[++j];
        } else {
            replyError(c, ERR_SYNTAX);
            return -1;
        }
    }
    *flagsOut = flags;
    *expireOut = expire;
    return 0;
}

/* Turn an EX/PX/EXAT/PXAT argument into absolute unix ms.  Replies the error
 * and returns -1 when it is not an integer, not positive, or overflows. */
static int expireToAbsMsOrReply(Client *c, const sds arg, int flags, long long *when) {
    long long v;
    if (getLongLongOrReply(c, arg, &v, NULL) == -1) return -1;
    int seconds = (flags & (OPT_EX | OPT_EXAT)) != 0;
    if (v <= 0 || (seconds && v > LLONG_MAX / 1000)) goto invalid;
    if (seconds) v *= 1000;
    if (flags & (OPT_EX | OPT_PX)) {
        long long now = serverNowMs();
        if (v > LLONG_MAX - now) goto invalid;
        v += now;
    }
    *when = v;
    return 0;
invalid:
    replyErrorFormat(c, "ERR invalid expire time in '%s' command", c->cmd->name);
    return -1;
}

/* Reply the string at key (or null).  Returns -1 after WRONGTYPE. */
static int replyKeyValue(Client *c, const sds key) {
    int wrong = 0;
    kvobj *o = lookupReadOrReply(c, key, OBJ_STRING, &wrong);
    if (wrong) return -1;
    if (!o) replyNull(c);
    else replyBulkKv(c, o);
    return 0;
}

/* How setGeneric answers: SET/SETEX/PSETEX say +OK or null when NX/XX
 * stopped them; SETNX (this flag) says :1 or :0. */
#define OPT_REPLY_BOOL (1 << 13)

/* setEffect's rarer part (no expire; GET or an IF* condition given), out
 * of line so that plain SET's path stays short. */
static __attribute__((noinline)) void setEffectNoExpire(Client *c, const sds key, const sds val, int flags) {
    if (flags & OPT_ANY_IF) {
        EffectArg args[4] = {EA_STR("SET"), EA_SDS(key), EA_SDS(val), EA_STR("KEEPTTL")};
        effectsRewrite((flags & OPT_KEEPTTL) ? 4 : 3, args);
        return;
    }
    EffectArg *args = xmalloc(sizeof(EffectArg) * (size_t)c->argc);
    int argc = 0;
    for (int j = 0; j < c->argc; j++) {
        if (j >= 3 && sdsLen(c->argv[j]) == 3 && strncasecmp(c->argv[j], "get", 3) == 0) continue;
        args[argc++] = EA_SDS(c->argv[j]);
    }
    effectsRewrite(argc, args);
    xfree(args);
}

/* SET's effect, as Redis 7.0 rewrites it: with an expire, SET key value
 * PXAT <when> (NX/XX/GET/IF* dropped); else, after an IF* condition held,
 * SET key value [KEEPTTL] (what it did, in words a Redis 7.0 replica or
 * AOF reader knows); else, with GET, the command as sent without its GET
 * arguments (GET may repeat); else the command as sent. */
static inline __attribute__((always_inline)) void setEffect(Client *c, const sds key, const sds val, int flags,
                                                            int hasExpire, long long when) {
    if (!effectsOn) return;
    if (hasExpire) {
        EffectArg args[5] = {EA_STR("SET"), EA_SDS(key), EA_SDS(val), EA_STR("PXAT"), EA_NUM(when)};
        effectsRewrite(5, args);
    } else if (flags & (OPT_GET | OPT_ANY_IF)) {
        setEffectNoExpire(c, key, val, flags);
    }
}

/* The entry for SET key val, with its expire `when` when withExpire (built
 * with the expire's room from the start: no second block and move).  A big
 * value (past what the string conversion could shrink) keeps the
 * argument's own string when the client lets it go (clientAdoptArg): a
 * 10 MB value is not copied again. */
static inline __attribute__((always_inline)) kvobj *createValue(Client *c, const sds key, sds *valp, int withExpire,
                                                                 long long when) {
    sds val = *valp;
    size_t vlen = sdsLen(val);
    if (__builtin_expect(vlen >= SET_ADOPT_MIN, 0)) {
        int i = c->argc > 3 && c->argv[3] == val ? 3 : 2; /* SETEX/PSETEX: argv[3] */
        sds kept = c->argv[i] == val ? clientAdoptArg(c, i) : NULL;
        if (kept) {
            *valp = kept; /* it may have moved */
            return withExpire ? kvCreateRawStringExpire(key, sdsLen(key), kept, when)
                              : kvCreateRawString(key, sdsLen(key), kept);
        }
    }
    if (withExpire) return kvCreateStringExpire(key, sdsLen(key), val, vlen, when);
    return kvCreateString(key, sdsLen(key), val, vlen);
}

/* Writes the digest of string entry o (XXH3-64 of its bytes, an int
 * encoding as its decimal text) into out as 16 lower-case hex digits and
 * a NUL. */
static void kvDigestHex(const kvobj *o, char out[DIGEST_HEX_LEN + 1]) {
    char buf[UTIL_LONG_STR_SIZE];
    size_t len;
    const char *p = kvStringBytes(o, buf, &len);
    XXH64_hash_t h = XXH3_64bits(p, len);
    static const char hex[] = "0123456789abcdef";
    for (int i = DIGEST_HEX_LEN - 1; i >= 0; i--, h >>= 4) out[i] = hex[h & 0xf];
    out[DIGEST_HEX_LEN] = '\0';
}

/* Whether string entry o passes condition cond (one OPT_IF* flag) against
 * match: 1 yes, 0 no, -1 after replying the digest-length error (checked
 * only here, once the key is known to be a string, as Redis 8.4 does: a
 * short digest on a missing key is no error).  A value compares by its
 * bytes; a digest case-insensitively (Redis 8.4 takes upper-case hex). */
static int conditionHolds(Client *c, const kvobj *o, int cond, const sds match) {
    int equal;
    if (cond & (OPT_IFEQ | OPT_IFNE)) {
        char buf[UTIL_LONG_STR_SIZE];
        size_t len;
        const char *p = kvStringBytes(o, buf, &len);
        equal = len == sdsLen(match) && memcmp(p, match, len) == 0;
    } else {
        if (sdsLen(match) != DIGEST_HEX_LEN) {
            replyError(c, ERR_DIGEST_LEN);
            return -1;
        }
        char hex[DIGEST_HEX_LEN + 1];
        kvDigestHex(o, hex);
        equal = strncasecmp(hex, match, DIGEST_HEX_LEN) == 0;
    }
    return (cond & (OPT_IFEQ | OPT_IFDEQ)) ? equal : !equal;
}

/* setGeneric's entry when NX, XX, KEEPTTL or an IF* condition is given (off
 * the plain SET's path): NULL after replying when NX, XX or the condition
 * says no (or after WRONGTYPE / the digest error); else the entry, built
 * under KEEPTTL with old's expire in it from the start when old has a live
 * one, so that dbSetKey moves nothing.  (An expired old one -- seen on a
 * replica -- is left to dbSetKey, which deletes it or keeps its expire.)
 * IF* on a missing key: IFEQ/IFDEQ do not set, IFNE/IFDNE do; on a key of
 * another type: WRONGTYPE (with GET that was already the reply). */
static __attribute__((noinline)) kvobj *createConditional(Client *c, int flags, const sds key, sds *valp,
                                                          const kvobj *old, int withExpire, long long when,
                                                          const sds match) {
    int no;
    if (flags & OPT_ANY_IF) {
        if (!old) {
            no = (flags & (OPT_IFEQ | OPT_IFDEQ)) != 0;
        } else if (kvType(old) != OBJ_STRING) {
            replyError(c, ERR_WRONGTYPE);
            return NULL;
        } else {
            int holds = conditionHolds(c, old, flags & OPT_ANY_IF, match);
            if (holds < 0) return NULL;
            no = !holds;
        }
    } else {
        no = (flags & OPT_NX) ? old != NULL : (flags & OPT_XX) && old == NULL;
    }
    if (no) {
        if (!(flags & OPT_GET)) {
            if (flags & OPT_REPLY_BOOL) replyLongLong(c, 0);
            else replyNull(c);
        }
        return NULL;
    }
    if ((flags & OPT_KEEPTTL) && old && kvHasExpire(old) && !kvIsExpired(old))
        return createValue(c, key, valp, 1, kvExpire(old));
    return createValue(c, key, valp, withExpire, when);
}

/* The common core of SET, SETNX, SETEX and PSETEX.  expire is the EX/PX/...
 * argument named by flags, or NULL; match the IF* argument, or NULL. */
static void setGeneric(Client *c, int flags, const sds key, sds val, const sds expire, const sds match) {
    long long when = 0;
    if (expire && expireToAbsMsOrReply(c, expire, flags, &when) == -1) return;
    if ((flags & OPT_GET) && replyKeyValue(c, key) == -1) return;

    /* A plain SET (with or without a TTL) does not need the old value:
     * dbSetKey finds the key once, deletes it first if it expired, as the
     * lookup would, and replaces it.  The lookup stays where a condition,
     * GET or KEEPTTL reads the old value, and while keys with member TTLs
     * exist (a lookup may find all of a hash's fields expired and delete
     * the key, with its notifications, before the write). */
    kvobj *old = NULL;
    int seen = 0; /* the lookup was the write's access of the key (dbSetKey) */
    if (__builtin_expect((flags & (OPT_NX | OPT_XX | OPT_KEEPTTL | OPT_ANY_IF | OPT_GET)) || dbMemberTtlKeys, 0)) {
        old = dbLookupWrite(c->db, key, sdsLen(key));
        seen = DB_SET_SEEN;
    }
    if (__builtin_expect(flags & (OPT_NX | OPT_XX | OPT_KEEPTTL | OPT_ANY_IF), 0)) {
        kvobj *fresh = createConditional(c, flags, key, &val, old, expire != NULL, when, match);
        if (!fresh) return;
        dbSetKey(c->db, fresh, seen | ((flags & OPT_KEEPTTL) ? DB_SET_KEEPTTL : 0));
    } else if (!seen && sdsLen(val) < SET_ADOPT_MIN) { /* an int or embstr: may overwrite in place */
        dbSetString(c->db, key, sdsLen(key), val, sdsLen(val), expire != NULL, when);
    } else {
        dbSetKey(c->db, createValue(c, key, &val, expire != NULL, when), seen);
    }
    signalModifiedKey(c, c->db, key, sdsLen(key));
    serverIncrDirty(1);
    notifyString(c, "set", key);
    if (expire) notifyGeneric(c, "expire", key);
    setEffect(c, key, val, flags, expire != NULL, when);

    if (flags & OPT_GET) return; /* the old value was the reply */
    if (flags & OPT_REPLY_BOOL) replyLongLong(c, 1);
    else replyOk(c);
}

/* --- SET family --- */

/* SET key value [NX|XX|IFEQ v|IFNE v|IFDEQ digest|IFDNE digest] [GET]
 *     [EX s|PX ms|EXAT s|PXAT ms|KEEPTTL]  (the IF* conditions: Redis 8.4) */
static void setCommand(Client *c) {
    int flags;
    sds expire, match = NULL;
    if (parseStringOptions(c, 3, 1, &flags, &expire, &match) == -1) return;
    setGeneric(c, flags, c->argv[1], c->argv[2], expire, match);
}

/* SETNX key value */
static void setnxCommand(Client *c) { setGeneric(c, OPT_NX | OPT_REPLY_BOOL, c->argv[1], c->argv[2], NULL, NULL); }

/* SETEX key seconds value (effect: SET key value PXAT <when>) */
static void setexCommand(Client *c) {
    setGeneric(c, OPT_EX, c->argv[1], c->argv[3], c->argv[2], NULL);
}

/* PSETEX key milliseconds value (effect: SET key value PXAT <when>) */
static void psetexCommand(Client *c) {
    setGeneric(c, OPT_PX, c->argv[1], c->argv[3], c->argv[2], NULL);
}

/* GETSET key value: reply the old value, store the new one without TTL. */
static void getsetCommand(Client *c) {
    sds key = c->argv[1], val = c->argv[2];
    if (replyKeyValue(c, key) == -1) return;
    dbSetKey(c->db, kvCreateString(key, sdsLen(key), val, sdsLen(val)), 0);
    signalModifiedKey(c, c->db, key, sdsLen(key));
    serverIncrDirty(1);
    notifyString(c, "set", key);
    static const int pos[1] = {0};
    EffectArg args[1] = {EA_STR("SET")}; /* its effect: SET key value */
    effectsRewriteSent(c, 3, 1, pos, args);
}

/* MSET / MSETNX: argv holds key value pairs. */
static void msetGeneric(Client *c, int nx) {
    if (c->argc % 2 == 0) {
        replyErrorArity(c);
        return;
    }
    if (nx) {
        for (int j = 1; j < c->argc; j += 2) {
            if (dbLookupWrite(c->db, c->argv[j], sdsLen(c->argv[j]))) {
                replyLongLong(c, 0);
                return;
            }
        }
    }
    for (int j = 1; j < c->argc; j += 2) {
        sds key = c->argv[j], val = c->argv[j + 1];
        dbSetString(c->db, key, sdsLen(key), val, sdsLen(val), 0, 0);
        signalModifiedKey(c, c->db, key, sdsLen(key));
        notifyString(c, "set", key);
    }
    serverIncrDirty((c->argc - 1) / 2);
    if (nx) replyLongLong(c, 1);
    else replyOk(c);
}

static void msetCommand(Client *c) { msetGeneric(c, 0); }
static void msetnxCommand(Client *c) { msetGeneric(c, 1); }

/* The options of MSETEX after its pairs: NX|XX (one), one of EX/PX/EXAT/
 * PXAT (the last value wins when repeated) or KEEPTTL; anything else is a
 * syntax error, as in Redis 8.4.  0, or -1 after replying. */
static int parseMsetexOptionsOrReply(Client *c, int first, int *flagsOut, sds *expireOut) {
    int flags = 0;
    sds expire = NULL;
    for (int j = first; j < c->argc; j++) {
        int opt = optionFlag(c->argv[j]);
        int exp = opt & OPT_ANY_EXPIRE;
        if (opt == OPT_NX && !(flags & OPT_XX)) {
            flags |= OPT_NX;
        } else if (opt == OPT_XX && !(flags & OPT_NX)) {
            flags |= OPT_XX;
        } else if (opt == OPT_KEEPTTL && !(flags & OPT_ANY_EXPIRE)) {
            flags |= OPT_KEEPTTL;
        } else if (exp && j + 1 < c->argc && !(flags & OPT_KEEPTTL) && !(flags & OPT_ANY_EXPIRE & ~exp)) {
            flags |= exp;
            expire = c->argv[++j];
        } else {
            replyError(c, ERR_SYNTAX);
            return -1;
        }
    }
    *flagsOut = flags;
    *expireOut = expire;
    return 0;
}

/* MSETEX numkeys key value [key value ...] [NX|XX] [EX s|PX ms|EXAT s|PXAT ms|KEEPTTL]
 * (Redis 8.4): sets every pair, all with the one expire (KEEPTTL: each
 * keeps its own; neither: each loses its TTL, as MSET), or -- NX: some key
 * exists, XX: some key is missing -- none; replies 1 or 0.  Errors in
 * Redis's order: numkeys, the pairs' count, the options, the expire value.
 * Effect, for a Redis 7.0 replica or AOF reader: MSET with no expire
 * option; else SET key value PXAT <when> | KEEPTTL per key (one unit,
 * MULTI-wrapped).  Redis 8.4 itself propagates MSETEX with PXAT. */
static void msetexCommand(Client *c) {
    long numkeys;
    if (getRangeLongOrReply(c, c->argv[1], 1, INT_MAX, &numkeys, "ERR invalid numkeys value") == -1) return;
    if ((long long)numkeys * 2 + 2 > c->argc) {
        replyError(c, "ERR wrong number of key-value pairs");
        return;
    }
    int first = (int)numkeys * 2 + 2, flags;
    sds expire;
    long long when = 0;
    if (parseMsetexOptionsOrReply(c, first, &flags, &expire) == -1) return;
    if (expire && expireToAbsMsOrReply(c, expire, flags, &when) == -1) return;
    if (flags & (OPT_NX | OPT_XX)) {
        for (int j = 2; j < first; j += 2) {
            int found = dbLookupWrite(c->db, c->argv[j], sdsLen(c->argv[j])) != NULL;
            if ((flags & OPT_NX) ? found : !found) {
                replyLongLong(c, 0);
                return;
            }
        }
    }
    int keep = (flags & OPT_KEEPTTL) != 0;
    int setFlags = (keep ? DB_SET_KEEPTTL : 0) | ((flags & (OPT_NX | OPT_XX)) ? DB_SET_SEEN : 0);
    for (int j = 2; j < first; j += 2) {
        sds key = c->argv[j], val = c->argv[j + 1];
        kvobj *fresh = expire ? kvCreateStringExpire(key, sdsLen(key), val, sdsLen(val), when)
                              : kvCreateString(key, sdsLen(key), val, sdsLen(val));
        dbSetKey(c->db, fresh, setFlags);
        signalModifiedKey(c, c->db, key, sdsLen(key));
        if (expire) notifyGeneric(c, "expire", key);
        notifyString(c, "set", key);
        if (effectsOn && (expire || keep)) {
            EffectArg args[5] = {EA_STR("SET"), EA_SDS(key), EA_SDS(val), EA_STR("PXAT"), EA_NUM(when)};
            if (keep) args[3] = EA_STR("KEEPTTL");
            effectsAlso(c->db->id, expire ? 5 : 4, args);
        }
    }
    serverIncrDirty(numkeys);
    if (effectsOn) {
        if (expire || keep) {
            effectsPrevent();
        } else { /* MSET and the pairs: argv without numkeys */
            EffectArg *args = xmalloc(sizeof(EffectArg) * (size_t)(first - 1));
            args[0] = EA_STR("MSET");
            for (int j = 2; j < first; j++) args[j - 1] = EA_SDS(c->argv[j]);
            effectsRewrite(first - 1, args);
            xfree(args);
        }
    }
    replyLongLong(c, 1);
}

/* --- compare-and-delete, DIGEST --- */

/* Deletes key (found) for DELEX / DELIFEQ: its effect is DEL. */
static void deleteMatched(Client *c, const sds key) {
    dbDelete(c->db, key, sdsLen(key));
    signalModifiedKey(c, c->db, key, sdsLen(key));
    notifyGeneric(c, "del", key);
    serverIncrDirty(1);
    EffectArg args[2] = {EA_STR("DEL"), EA_SDS(key)};
    effectsRewrite(2, args);
}

/* The IF* condition an argument of DELEX names (OPT_IF* flag), 0 if none. */
static int delexCondition(const sds a) {
    int opt = optionFlag(a);
    return opt & OPT_ANY_IF;
}

/* DELEX key [IFEQ v|IFNE v|IFDEQ digest|IFDNE digest] (Redis 8.4).
 * Without a condition: DEL of one key, any type.  With one: 0 for a
 * missing key (before the condition is even read, as in Redis), "ERR Key
 * should be of string type ..." for a key that is not a string, the
 * condition error, else 1 when the
 * condition held and the key was deleted, 0 when not.  Arity (2 or 4
 * arguments) is checked first.  Effect: DEL key. */
static void delexCommand(Client *c) {
    if (c->argc != 2 && c->argc != 4) {
        replyErrorArity(c);
        return;
    }
    sds key = c->argv[1];
    kvobj *o = dbLookupWrite(c->db, key, sdsLen(key));
    if (!o) {
        replyLongLong(c, 0);
        return;
    }
    if (c->argc == 4) {
        if (kvType(o) != OBJ_STRING) {
            /* Redis 8.4's text (before the condition is read). */
            replyError(c, "ERR Key should be of string type if conditions are specified");
            return;
        }
        int cond = delexCondition(c->argv[2]);
        if (!cond) {
            replyError(c, "ERR Invalid condition. Use IFEQ, IFNE, IFDEQ, or IFDNE");
            return;
        }
        int holds = conditionHolds(c, o, cond, c->argv[3]);
        if (holds < 0) return;
        if (!holds) {
            replyLongLong(c, 0);
            return;
        }
    }
    deleteMatched(c, key);
    replyLongLong(c, 1);
}

/* DELIFEQ key value (Valkey 9.0): 1 when the string at key equals value
 * and was deleted; 0 when it differs or the key is missing; WRONGTYPE for
 * another type.  Effect: DEL key. */
static void delifeqCommand(Client *c) {
    sds key = c->argv[1];
    int wrong = 0;
    kvobj *o = lookupWriteOrReply(c, key, OBJ_STRING, &wrong);
    if (wrong) return;
    if (!o || conditionHolds(c, o, OPT_IFEQ, c->argv[2]) != 1) {
        replyLongLong(c, 0);
        return;
    }
    deleteMatched(c, key);
    replyLongLong(c, 1);
}

/* DIGEST key (Redis 8.4): the XXH3-64 digest of the string at key as 16
 * lower-case hex digits, null for a missing key, WRONGTYPE otherwise. */
static void digestCommand(Client *c) {
    int wrong = 0;
    kvobj *o = lookupReadOrReply(c, c->argv[1], OBJ_STRING, &wrong);
    if (wrong) return;
    if (!o) {
        replyNull(c);
        return;
    }
    char hex[DIGEST_HEX_LEN + 1];
    kvDigestHex(o, hex);
    replyBulk(c, hex, DIGEST_HEX_LEN);
}

/* --- GET family --- */

static void getCommand(Client *c) { replyKeyValue(c, c->argv[1]); }

/* MGET key [key ...]: null for missing keys and keys of another type. */
static void mgetCommand(Client *c) {
    replyArrayLen(c, c->argc - 1);
    for (int j = 1; j < c->argc; j++) {
        kvobj *o = dbLookupRead(c->db, c->argv[j], sdsLen(c->argv[j]), LOOKUP_NONE);
        if (o && kvType(o) == OBJ_STRING) replyBulkKv(c, o);
        else replyNull(c);
    }
}

/* GETDEL key */
static void getdelCommand(Client *c) {
    sds key = c->argv[1];
    int wrong = 0;
    kvobj *o = lookupReadOrReply(c, key, OBJ_STRING, &wrong);
    if (wrong) return;
    if (!o) {
        replyNull(c);
        return;
    }
    replyBulkKv(c, o);
    dbDelete(c->db, key, sdsLen(key));
    signalModifiedKey(c, c->db, key, sdsLen(key));
    notifyGeneric(c, "del", key);
    serverIncrDirty(1);
    EffectArg args[2] = {server.cfg.lazyfreeLazyUserDel ? EA_STR("UNLINK") : EA_STR("DEL"), EA_SDS(key)};
    effectsRewrite(2, args);
}

/* GETEX key [EX s|PX ms|EXAT s|PXAT ms|PERSIST] */
static void getexCommand(Client *c) {
    sds key = c->argv[1];
    int flags;
    sds expire;
    long long when = 0;
    if (parseStringOptions(c, 2, 0, &flags, &expire, NULL) == -1) return;

    /* Redis validates the expire only once it knows the key is a string:
     * GETEX missing EX 0 answers null. */
    int wrong = 0;
    kvobj *o = lookupReadOrReply(c, key, OBJ_STRING, &wrong);
    if (wrong) return;
    if (!o) {
        replyNull(c);
        return;
    }
    if (expire && expireToAbsMsOrReply(c, expire, flags, &when) == -1) return;
    replyBulkKv(c, o);

    if ((flags & (OPT_EXAT | OPT_PXAT)) && when <= serverNowMs()) {
        /* An absolute time already past deletes the key: DEL key (UNLINK
         * under lazyfree-lazy-expire). */
        dbDelete(c->db, key, sdsLen(key));
        signalModifiedKey(c, c->db, key, sdsLen(key));
        notifyGeneric(c, "del", key);
        serverIncrDirty(1);
        EffectArg args[2] = {server.cfg.lazyfreeLazyExpire ? EA_STR("UNLINK") : EA_STR("DEL"), EA_SDS(key)};
        effectsRewrite(2, args);
    } else if (expire) {
        dbSetExpire(c->db, &o, when);
        signalModifiedKey(c, c->db, key, sdsLen(key));
        notifyGeneric(c, "expire", key);
        serverIncrDirty(1);
        EffectArg args[3] = {EA_STR("PEXPIREAT"), EA_SDS(key), EA_NUM(when)};
        effectsRewrite(3, args);
    } else if ((flags & OPT_PERSIST) && dbRemoveExpire(c->db, &o)) {
        signalModifiedKey(c, c->db, key, sdsLen(key));
        notifyGeneric(c, "persist", key);
        serverIncrDirty(1);
        EffectArg args[2] = {EA_STR("PERSIST"), EA_SDS(key)};
        effectsRewrite(2, args);
    }
}

/* STRLEN key */
static void strlenCommand(Client *c) {
    int wrong = 0;
    kvobj *o = lookupReadOrReply(c, c->argv[1], OBJ_STRING, &wrong);
    if (wrong) return;
    replyLongLong(c, o ? (long long)kvStringLen(o) : 0);
}

/* GETRANGE key start end (and its old name SUBSTR).  Inclusive indexes,
 * negative ones count from the end; out-of-range ones are clamped. */
static void getrangeCommand(Client *c) {
    long long start, end;
    if (getLongLongOrReply(c, c->argv[2], &start, NULL) == -1) return;
    if (getLongLongOrReply(c, c->argv[3], &end, NULL) == -1) return;
    int wrong = 0;
    kvobj *o = lookupReadOrReply(c, c->argv[1], OBJ_STRING, &wrong);
    if (wrong) return;
    if (!o) {
        replyBulk(c, "", 0);
        return;
    }
    char buf[UTIL_LONG_STR_SIZE];
    size_t len;
    const char *p = kvStringBytes(o, buf, &len);
    long long n = (long long)len;

    if (start < 0 && end < 0 && start > end) {
        replyBulk(c, "", 0);
        return;
    }
    if (start < 0) start += n;
    if (end < 0) end += n;
    if (start < 0) start = 0;
    if (end < 0) end = 0;
    if (end >= n) end = n - 1;
    if (n == 0 || start > end) replyBulk(c, "", 0);
    else replyBulkKvPart(c, o, p + start, (size_t)(end - start + 1));
}

/* --- in-place edits --- */

/* APPEND key value */
static void appendCommand(Client *c) {
    sds key = c->argv[1], val = c->argv[2];
    int wrong = 0;
    kvobj *o = lookupWriteOrReply(c, key, OBJ_STRING, &wrong);
    if (wrong) return;
    size_t total;
    if (!o) {
        dbAdd(c->db, kvCreateString(key, sdsLen(key), val, sdsLen(val)));
        total = sdsLen(val);
    } else {
        if (checkStringLengthOrReply(c, (long long)kvStringLen(o), (long long)sdsLen(val)) == -1) return;
        sds s = dbUnshareString(c->db, &o);
        s = sdsCatLen(s, val, sdsLen(val));
        kvSetPtr(o, s);
        total = sdsLen(s);
    }
    signalModifiedKey(c, c->db, key, sdsLen(key));
    notifyString(c, "append", key);
    serverIncrDirty(1);
    replyLongLong(c, (long long)total);
}

/* SETRANGE key offset value: overwrite from offset, zero-padding as needed.
 * An empty value changes nothing (and creates no key). */
static void setrangeCommand(Client *c) {
    sds key = c->argv[1], val = c->argv[3];
    size_t vlen = sdsLen(val);
    long long offset;
    if (getLongLongOrReply(c, c->argv[2], &offset, NULL) == -1) return;
    if (offset < 0) {
        replyError(c, "ERR offset is out of range");
        return;
    }
    int wrong = 0;
    kvobj *o = lookupWriteOrReply(c, key, OBJ_STRING, &wrong);
    if (wrong) return;
    if (vlen == 0) {
        replyLongLong(c, o ? (long long)kvStringLen(o) : 0);
        return;
    }
    if (checkStringLengthOrReply(c, offset, (long long)vlen) == -1) return;

    sds s;
    if (!o) {
        s = sdsNewLen(NULL, (size_t)offset + vlen);
        dbAdd(c->db, kvCreateRawString(key, sdsLen(key), s));
    } else {
        s = dbUnshareString(c->db, &o);
        s = sdsGrowZero(s, (size_t)offset + vlen);
        kvSetPtr(o, s);
    }
    memcpy(s + offset, val, vlen);
    signalModifiedKey(c, c->db, key, sdsLen(key));
    notifyString(c, "setrange", key);
    serverIncrDirty(1);
    replyLongLong(c, (long long)sdsLen(s));
}

/* --- counters --- */

/* The integer value of a string entry; 0 and no reply when it is one. */
static int kvToLongLongOrReply(Client *c, const kvobj *o, long long *out) {
    if (kvEncoding(o) == OBJ_ENC_INT) {
        *out = kvInt(o);
        return 0;
    }
    char buf[UTIL_LONG_STR_SIZE];
    size_t len;
    const char *p = kvStringBytes(o, buf, &len);
    if (stringToLongLong(p, len, out)) return 0;
    replyError(c, ERR_NOT_INT);
    return -1;
}

/* INCR/DECR/INCRBY/DECRBY: add incr to the integer at key (0 if missing),
 * keeping the TTL.  Their effect is the command as sent.  With bounded
 * (INCRBYBOUND), a result outside [min, max] replies nil and changes
 * nothing; a stored result propagates as SET key value KEEPTTL, so that
 * a Redis 7.0 replica or AOF reader, which lacks the command, stays equal. */
static void incrDecrGeneric(Client *c, long long incr, int bounded, long long min, long long max) {
    sds key = c->argv[1];
    int wrong = 0;
    kvobj *o = lookupWriteOrReply(c, key, OBJ_STRING, &wrong);
    if (wrong) return;
    long long value = 0;
    if (o && kvToLongLongOrReply(c, o, &value) == -1) return;
    if ((incr < 0 && value < 0 && incr < LLONG_MIN - value) ||
        (incr > 0 && value > 0 && incr > LLONG_MAX - value)) {
        replyError(c, ERR_INCR_OVERFLOW);
        return;
    }
    value += incr;
    if (bounded) {
        if (value < min || value > max) {
            replyNull(c);
            return;
        }
        EffectArg args[4] = {EA_STR("SET"), EA_SDS(key), EA_NUM(value), EA_STR("KEEPTTL")};
        effectsRewrite(4, args);
    }
    if (o && kvEncoding(o) == OBJ_ENC_INT) kvSetInt(o, value);
    else if (o) /* built with the kept expire: dbReplace moves nothing */
        dbReplace(c->db, o,
                  kvHasExpire(o) ? kvCreateIntExpire(key, sdsLen(key), value, kvExpire(o))
                                 : kvCreateInt(key, sdsLen(key), value),
                  1);
    else dbAdd(c->db, kvCreateInt(key, sdsLen(key), value));
    signalModifiedKey(c, c->db, key, sdsLen(key));
    notifyString(c, "incrby", key);
    serverIncrDirty(1);
    replyLongLong(c, value);
}

static void incrDecr(Client *c, long long incr) { incrDecrGeneric(c, incr, 0, 0, 0); }

static void incrCommand(Client *c) { incrDecr(c, 1); }
static void decrCommand(Client *c) { incrDecr(c, -1); }

static void incrbyCommand(Client *c) {
    long long incr;
    if (getLongLongOrReply(c, c->argv[2], &incr, NULL) == -1) return;
    incrDecr(c, incr);
}

static void decrbyCommand(Client *c) {
    long long incr;
    if (getLongLongOrReply(c, c->argv[2], &incr, NULL) == -1) return;
    if (incr == LLONG_MIN) { /* cannot be negated */
        replyError(c, "ERR decrement would overflow");
        return;
    }
    incrDecr(c, -incr);
}

/* The bounds of INCRBYBOUND / INCRBYFLOATBOUND. */
#define ERR_MIN_GT_MAX "ERR min is greater than max"

/* INCRBYBOUND key increment min max: INCRBY that applies only when the
 * result stays within [min, max] (inclusive), else replies nil and changes
 * nothing.  As INCRBY, the numbers are parsed before the key is looked up:
 * a bad increment/min/max (ERR_NOT_INT), then min > max, then WRONGTYPE,
 * a non-integer stored value, overflow, and the range. */
static void incrbyboundCommand(Client *c) {
    long long incr, min, max;
    if (getLongLongOrReply(c, c->argv[2], &incr, NULL) == -1 || getLongLongOrReply(c, c->argv[3], &min, NULL) == -1 ||
        getLongLongOrReply(c, c->argv[4], &max, NULL) == -1)
        return;
    if (min > max) {
        replyError(c, ERR_MIN_GT_MAX);
        return;
    }
    incrDecrGeneric(c, incr, 1, min, max);
}

/* INCRBYFLOAT key increment, and (bounded) INCRBYFLOATBOUND key increment
 * min max.  As in Redis the key is looked up (and its type and value
 * checked) before any argument is parsed, so WRONGTYPE wins over a bad
 * increment; INCRBYFLOATBOUND keeps that order, then checks min, max and
 * min > max (bounds may be -inf/+inf).  The result is stored as text in
 * Redis's human-friendly form; its effect is SET key <result> KEEPTTL, so
 * that replicas never recompute floating point.  A result that is NaN or
 * infinite is refused as INCRBYFLOAT does; one outside [min, max]
 * replies nil and changes nothing. */
static void incrbyfloatGeneric(Client *c, int bounded) {
    sds key = c->argv[1];
    int wrong = 0;
    kvobj *o = lookupWriteOrReply(c, key, OBJ_STRING, &wrong);
    if (wrong) return;
    long double value = 0, incr, min = 0, max = 0;
    if (o) {
        if (kvEncoding(o) == OBJ_ENC_INT) {
            value = (long double)kvInt(o);
        } else {
            char ib[UTIL_LONG_STR_SIZE];
            size_t len;
            const char *p = kvStringBytes(o, ib, &len);
            if (!stringToLongDouble(p, len, &value)) {
                replyError(c, ERR_NOT_FLOAT);
                return;
            }
        }
    }
    if (getLongDoubleOrReply(c, c->argv[2], &incr, NULL) == -1) return;
    if (bounded) {
        if (getLongDoubleOrReply(c, c->argv[3], &min, NULL) == -1 ||
            getLongDoubleOrReply(c, c->argv[4], &max, NULL) == -1)
            return;
        if (min > max) {
            replyError(c, ERR_MIN_GT_MAX);
            return;
        }
    }
    value += incr;
    if (isnan(value) || isinf(value)) {
        replyError(c, ERR_NAN_OR_INF);
        return;
    }
    if (bounded && (value < min || value > max)) {
        replyNull(c);
        return;
    }
    char buf[UTIL_MAX_LONG_DOUBLE_CHARS];
    int len = longDoubleToString(buf, sizeof(buf), value, 1);
    kvobj *fresh;
    if (o && kvHasExpire(o)) /* built with the kept expire: dbReplace moves nothing */
        fresh = (size_t)len <= OBJ_EMBSTR_MAX
                    ? kvCreateEmbstrExpire(key, sdsLen(key), buf, (size_t)len, kvExpire(o))
                    : kvCreateRawStringExpire(key, sdsLen(key), sdsNewLen(buf, (size_t)len), kvExpire(o));
    else
        fresh = (size_t)len <= OBJ_EMBSTR_MAX ? kvCreateEmbstr(key, sdsLen(key), buf, (size_t)len)
                                              : kvCreateRawString(key, sdsLen(key), sdsNewLen(buf, (size_t)len));
    if (o) dbReplace(c->db, o, fresh, 1);
    else dbAdd(c->db, fresh);
    signalModifiedKey(c, c->db, key, sdsLen(key));
    notifyString(c, "incrbyfloat", key);
    serverIncrDirty(1);
    EffectArg args[4] = {EA_STR("SET"), EA_SDS(key), EA_BUF(buf, (size_t)len), EA_STR("KEEPTTL")};
    effectsRewrite(4, args);
    replyBulk(c, buf, (size_t)len);
}

static void incrbyfloatCommand(Client *c) { incrbyfloatGeneric(c, 0); }
static void incrbyfloatboundCommand(Client *c) { incrbyfloatGeneric(c, 1); }

/* --- CL.THROTTLE (Cairn's own) --- */

/* The redis-cell module's CL.THROTTLE, the generic cell rate algorithm:
 * the key holds the theoretical arrival time (TAT) in unix nanoseconds as
 * a decimal string, the module's own format, with a TTL ending when the
 * limiter is idle again (at the TAT).  Its effect is SET key <tat> PXAT
 * <ms>: no replica or AOF reader reads a clock.  "Now" is the command's
 * time (dbNowMs), in ns. */

/* The module's errors carry no code (a leading '-': no "ERR " added). */
#define CELL_USAGE "-Cell error: Usage: cl.throttle <key> <max_burst> <count per period> <period> [<quantity>]"
#define CELL_NS 1000000000LL

/* An integer argument as the module reads it; its error otherwise. */
static int cellArgOrReply(Client *c, const sds arg, long long *v) {
    if (stringToLongLong(arg, sdsLen(arg), v)) return 0;
    sds msg = sdsCatPrintf(sdsEmpty(), "-Cell error: Couldn't parse as integer: %s", arg);
    replyErrorLen(c, msg, sdsLen(msg));
    sdsFree(msg);
    return -1;
}

/* v within long long (a duration from a stored TAT the module never
 * wrote, e.g. a large negative number). */
static long long cellClamp(__int128 v) { return v > LLONG_MAX ? LLONG_MAX : v < LLONG_MIN ? LLONG_MIN : (long long)v; }

/* A duration in ns as whole seconds, the module's way: truncated, plus
 * one when at least a millisecond is left over (so a caller never retries
 * too early). */
static long long cellSeconds(long long ns) {
    long long s = ns / CELL_NS;
    if ((ns % CELL_NS) / 1000000 > 0) s++;
    return s;
}

/* CL.THROTTLE key max_burst count_per_period period [quantity]: replies
 * [limited 0|1, limit (max_burst + 1), remaining, retry_after s (-1 when
 * allowed), reset_after s].  The emission interval T is period/count
 * (ns, truncated), the tolerance max_burst + 1 intervals; a request of
 * quantity q moves the TAT to max(now, TAT) + q*T and is allowed when that
 * stays within the tolerance of now; quantity 0 only looks.  A request
 * larger than the tolerance is limited with retry_after -1.  Errors, in
 * order: a wrong argument count and non-integers in the module's words
 * ("Cell error: ..."), then Cairn's range checks (max_burst and quantity
 * >= 0, count and period >= 1: "ERR value is out of range, must be
 * positive"; parameters whose nanoseconds overflow: ERR_NOT_INT), then
 * WRONGTYPE, a stored value that is not an integer (the module's "Cell
 * error: invalid digit found in string"), a TAT that would overflow
 * (ERR_INCR_OVERFLOW). */
static void clthrottleCommand(Client *c) {
    if (c->argc != 5 && c->argc != 6) {
        replyError(c, CELL_USAGE);
        return;
    }
    long long burst, count, period, quantity = 1;
    if (cellArgOrReply(c, c->argv[2], &burst) == -1 || cellArgOrReply(c, c->argv[3], &count) == -1 ||
        cellArgOrReply(c, c->argv[4], &period) == -1 || (c->argc == 6 && cellArgOrReply(c, c->argv[5], &quantity) == -1))
        return;
    if (burst < 0 || count < 1 || period < 1 || quantity < 0) {
        replyError(c, "ERR value is out of range, must be positive");
        return;
    }
    long long periodNs, tolerance, increment;
    if (__builtin_mul_overflow(period, CELL_NS, &periodNs) || burst == LLONG_MAX) {
        replyError(c, ERR_NOT_INT);
        return;
    }
    long long interval = (long long)((double)periodNs / (double)count);
    if (__builtin_mul_overflow(interval, burst + 1, &tolerance) ||
        __builtin_mul_overflow(interval, quantity, &increment)) {
        replyError(c, ERR_NOT_INT);
        return;
    }
    const sds key = c->argv[1];
    int wrong = 0;
    kvobj *o = lookupWriteOrReply(c, key, OBJ_STRING, &wrong);
    if (wrong) return;
    long long now = dbNowMs * 1000000LL, tat = now;
    if (o) {
        char buf[UTIL_LONG_STR_SIZE];
        size_t len;
        const char *p = kvEncoding(o) == OBJ_ENC_INT ? NULL : kvStringBytes(o, buf, &len);
        if (!p) tat = kvInt(o);
        else if (!stringToLongLong(p, len, &tat)) {
            replyError(c, "-Cell error: invalid digit found in string");
            return;
        }
    }
    long long newTat, ttl, retry = -CELL_NS;
    if (__builtin_add_overflow(tat > now ? tat : now, increment, &newTat)) {
        replyError(c, ERR_INCR_OVERFLOW);
        return;
    }
    /* Allowed when now >= newTat - tolerance. */
    int limited = (__int128)newTat - tolerance > now;
    if (limited) {
        if (increment <= tolerance) retry = (long long)((__int128)newTat - tolerance - now);
        ttl = cellClamp((__int128)tat - now); /* a stored TAT may be far in the past */
    } else {
        ttl = newTat - now;
        if (newTat > now && newTat != tat) {
            long long when = newTat / 1000000 + (newTat % 1000000 != 0);
            char val[UTIL_LONG_STR_SIZE];
            int vlen = longLongToString(val, sizeof(val), newTat);
            dbSetKey(c->db, kvCreateStringExpire(key, sdsLen(key), val, (size_t)vlen, when), DB_SET_SEEN);
            signalModifiedKey(c, c->db, key, sdsLen(key));
            serverIncrDirty(1);
            notifyString(c, "set", key);
            notifyGeneric(c, "expire", key);
            EffectArg args[5] = {EA_STR("SET"), EA_SDS(key), EA_BUF(val, (size_t)vlen), EA_STR("PXAT"), EA_NUM(when)};
            effectsRewrite(5, args);
        }
    }
    long long remaining = 0;
    long long next = cellClamp((__int128)tolerance - ttl);
    if (next > -interval) {
        double q = (double)(next / 1000) / (double)(interval / 1000);
        if (q != q) remaining = 0;
        else if (q >= 9223372036854775807.0) remaining = LLONG_MAX;
        else if (q <= -9223372036854775808.0) remaining = LLONG_MIN;
        else remaining = (long long)q;
    }
    replyArrayLen(c, 5);
    replyLongLong(c, limited);
    replyLongLong(c, burst + 1);
    replyLongLong(c, remaining);
    replyLongLong(c, cellSeconds(retry));
    replyLongLong(c, cellSeconds(ttl));
}

/* --- LCS --- */

/* The DP table may not exceed this many bytes: Redis replies an error when
 * its (untrusted-size) allocation fails, but our allocator aborts instead,
 * so the size is checked up front. */
#define LCS_MAX_TABLE_BYTES (1ULL << 30)

/* Length of the LCS of a and b in two rows of memory (LCS ... LEN). */
static uint32_t lcsLength(const char *a, uint32_t alen, const char *b, uint32_t blen) {
    uint32_t *prev = xcalloc(((size_t)blen + 1) * sizeof(uint32_t));
    uint32_t *cur = xcalloc(((size_t)blen + 1) * sizeof(uint32_t));
    for (uint32_t i = 1; i <= alen; i++) {
        for (uint32_t j = 1; j <= blen; j++) {
            if (a[i - 1] == b[j - 1]) cur[j] = prev[j - 1] + 1;
            else cur[j] = prev[j] > cur[j - 1] ? prev[j] : cur[j - 1];
        }
        uint32_t *t = prev;
        prev = cur;
        cur = t;
    }
    uint32_t n = prev[blen];
    xfree(prev);
    xfree(cur);
    return n;
}

static void replyLcsMatch(Client *c, uint32_t as, uint32_t ae, uint32_t bs, uint32_t be, int withLen) {
    replyArrayLen(c, withLen ? 3 : 2);
    replyArrayLen(c, 2);
    replyLongLong(c, as);
    replyLongLong(c, ae);
    replyArrayLen(c, 2);
    replyLongLong(c, bs);
    replyLongLong(c, be);
    if (withLen) replyLongLong(c, (long long)ae - as + 1);
}

/* LCS key1 key2 [LEN] [IDX] [MINMATCHLEN n] [WITHMATCHLEN]
 * Missing keys count as empty strings.  With IDX the matching ranges are
 * reported from the end of the strings backwards, each as
 * [[a_start, a_end], [b_start, b_end] (, len)], then "len". */
static void lcsCommand(Client *c) {
    /* Redis checks the keys' types before it parses the options. */
    kvobj *oa = dbLookupRead(c->db, c->argv[1], sdsLen(c->argv[1]), LOOKUP_NONE);
    kvobj *ob = dbLookupRead(c->db, c->argv[2], sdsLen(c->argv[2]), LOOKUP_NONE);
    if ((oa && kvType(oa) != OBJ_STRING) || (ob && kvType(ob) != OBJ_STRING)) {
        replyError(c, "ERR The specified keys must contain string values");
        return;
    }
    int getLen = 0, getIdx = 0, withMatchLen = 0;
    long long minMatchLen = 0;
    for (int j = 3; j < c->argc; j++) {
        sds opt = c->argv[j];
        if (argIs(opt, "idx")) {
            getIdx = 1;
        } else if (argIs(opt, "len")) {
            getLen = 1;
        } else if (argIs(opt, "withmatchlen")) {
            withMatchLen = 1;
        } else if (argIs(opt, "minmatchlen") && j + 1 < c->argc) {
            if (getLongLongOrReply(c, c->argv[++j], &minMatchLen, NULL) == -1) return;
            if (minMatchLen < 0) minMatchLen = 0;
        } else {
            replyError(c, ERR_SYNTAX);
            return;
        }
    }
    if (getIdx && getLen) {
        replyError(c, "ERR If you want both the length and indexes, please just use IDX.");
        return;
    }

    char bufa[UTIL_LONG_STR_SIZE], bufb[UTIL_LONG_STR_SIZE];
    size_t la = 0, lb = 0;
    const char *a = oa ? kvStringBytes(oa, bufa, &la) : "";
    const char *b = ob ? kvStringBytes(ob, bufb, &lb) : "";
    if (la >= UINT32_MAX - 1 || lb >= UINT32_MAX - 1) {
        replyError(c, "ERR String too long for LCS");
        return;
    }
    uint32_t alen = (uint32_t)la, blen = (uint32_t)lb;
    if (getLen) {
        replyLongLong(c, lcsLength(a, alen, b, blen));
        return;
    }

    unsigned long long cells = (unsigned long long)(alen + 1ULL) * (blen + 1ULL);
    if (cells > LCS_MAX_TABLE_BYTES / sizeof(uint32_t)) {
        replyError(c, "ERR Insufficient memory, failed allocating transient memory for LCS");
        return;
    }
    /* t[i*(blen+1)+j] = LCS length of a[0..i) and b[0..j). */
    uint32_t *t = xmalloc((size_t)cells * sizeof(uint32_t));
    size_t w = (size_t)blen + 1;
#define LCS_AT(i, j) t[(size_t)(i) * w + (j)]
    for (uint32_t i = 0; i <= alen; i++) {
        for (uint32_t j = 0; j <= blen; j++) {
            if (i == 0 || j == 0) LCS_AT(i, j) = 0;
            else if (a[i - 1] == b[j - 1]) LCS_AT(i, j) = LCS_AT(i - 1, j - 1) + 1;
            else LCS_AT(i, j) = LCS_AT(i - 1, j) > LCS_AT(i, j - 1) ? LCS_AT(i - 1, j) : LCS_AT(i, j - 1);
        }
    }
    uint32_t total = LCS_AT(alen, blen);

    sds result = getIdx ? NULL : sdsNewLen(NULL, total);
    void *matchesLen = NULL;
    long matches = 0;
    if (getIdx) {
        replyMapLen(c, 2);
        replyBulkCString(c, "matches");
        matchesLen = replyDeferredLen(c);
    }

    /* Walk back from the end.  A run of consecutive matching bytes forms one
     * range; it is closed (and reported) at the first step that is not a
     * match, or when it reaches the start of either string. */
    uint32_t i = alen, j = blen, k = total;
    int inRange = 0;
    uint32_t aStart = 0, aEnd = 0, bStart = 0, bEnd = 0;
    while (i > 0 && j > 0) {
        int close = 0;
        if (a[i - 1] == b[j - 1]) {
            if (result) result[k - 1] = a[i - 1];
            if (!inRange) {
                inRange = 1;
                aStart = aEnd = i - 1;
                bStart = bEnd = j - 1;
            } else {
                aStart--;
                bStart--;
            }
            if (aStart == 0 || bStart == 0) close = 1;
            k--;
            i--;
            j--;
        } else {
            if (LCS_AT(i - 1, j) > LCS_AT(i, j - 1)) i--;
            else j--;
            if (inRange) close = 1;
        }
        if (close) {
            if (getIdx && (long long)(aEnd - aStart + 1) >= minMatchLen) {
                replyLcsMatch(c, aStart, aEnd, bStart, bEnd, withMatchLen);
                matches++;
            }
            inRange = 0;
        }
    }
#undef LCS_AT
    xfree(t);

    if (getIdx) {
        replySetDeferredArrayLen(c, matchesLen, matches);
        replyBulkCString(c, "len");
        replyLongLong(c, total);
    } else {
        replyBulkSds(c, result);
        sdsFree(result);
    }
}

/* --- command handlers (metadata: src/core/command_data.c) --- */

Command stringCommands[] = {
    {.name = "get", .proc = getCommand},
    {.name = "getex", .proc = getexCommand},
    {.name = "getdel", .proc = getdelCommand},
    {.name = "getset", .proc = getsetCommand},
    {.name = "set", .proc = setCommand},
    {.name = "setnx", .proc = setnxCommand},
    {.name = "setex", .proc = setexCommand},
    {.name = "psetex", .proc = psetexCommand},
    {.name = "mget", .proc = mgetCommand},
    {.name = "mset", .proc = msetCommand},
    {.name = "msetnx", .proc = msetnxCommand},
    {.name = "msetex", .proc = msetexCommand},
    {.name = "delex", .proc = delexCommand},
    {.name = "delifeq", .proc = delifeqCommand},
    {.name = "digest", .proc = digestCommand},
    {.name = "append", .proc = appendCommand},
    {.name = "strlen", .proc = strlenCommand},
    {.name = "getrange", .proc = getrangeCommand},
    {.name = "substr", .proc = getrangeCommand},
    {.name = "setrange", .proc = setrangeCommand},
    {.name = "incr", .proc = incrCommand},
    {.name = "decr", .proc = decrCommand},
    {.name = "incrby", .proc = incrbyCommand},
    {.name = "decrby", .proc = decrbyCommand},
    {.name = "incrbyfloat", .proc = incrbyfloatCommand},
    {.name = "incrbybound", .proc = incrbyboundCommand},
    {.name = "incrbyfloatbound", .proc = incrbyfloatboundCommand},
    {.name = "cl.throttle", .proc = clthrottleCommand},
    {.name = "lcs", .proc = lcsCommand},
    {0},
};
