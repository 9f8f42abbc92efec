/* t_sort.c -- SORT and SORT_RO over lists, sets and sorted sets.
 *
 * SORT copies the elements of the container into a vector of SortItem
 * (element bytes as an owned sds, plus the numeric weight or the ALPHA
 * comparison string), sorts the vector and replies (or stores, as a list)
 * the range LIMIT selects, each element optionally replaced by GET lookups.
 * Nothing in the keyspace changes before the reply except the STORE
 * destination, which is written once, at the end.
 *
 * Semantics follow Redis 7.0, quirks included:
 *  - patterns (BY, GET) substitute the element for the FIRST '*' only; a
 *    "->field" after that '*' reads a hash field; "#" is the element itself;
 *    a key of another type than expected reads as missing (never WRONGTYPE);
 *    patterns are scanned as C strings (a NUL byte ends the search for '*'
 *    and "->"), as Redis does;
 *  - a BY pattern without '*' means "do not sort" (nosort), for good: a
 *    later BY with '*' does not undo it.  Lists and sorted sets then keep
 *    their order (reversed by DESC) and LIMIT picks the range directly; a set
 *    is still sorted (ALPHA) when the result is stored or the caller is a
 *    script, so that replicas and AOF see the same result;
 *  - numeric weights are parsed with strtod on the C string: trailing
 *    garbage, overflow/underflow (ERANGE) and NaN are errors ("One or more
 *    scores can't be converted into double"); an empty string is 0; a
 *    missing weight is 0.  Equal weights fall back to the elements' bytes;
 *  - ALPHA compares with strcoll (the process collates per LC_COLLATE from
 *    the environment, set at start-up as Redis does) unless STORE is given,
 *    which compares bytes so that the stored list does not depend on the
 *    locale.  With BY, a missing weight sorts first and equal weights keep
 *    the container's order (a stable sort, as glibc's qsort is);
 *  - LIMIT clamps: a negative offset is 0, a negative count means "all".
 *
 * Containers are read through their owners' read APIs: set.h for sets,
 * zset.h for sorted sets, hash.h for the "->" field lookups. */
#include <errno.h>
#include <locale.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/client.h"
#include "core/command.h"
#include "core/server.h"
#include "db/db.h"
#include "db/object.h"
#include "ds/alloc.h"
#include "ds/quicklist.h"
#include "types/list.h"
#include "ds/sds.h"
#include "ds/util.h"
#include "types/hash.h"
#include "types/set.h"
#include "types/zset.h"

#define ERR_SCORES "ERR One or more scores can't be converted into double"

/* One element of the vector being sorted. */
typedef struct SortItem {
    sds elem;     /* the element's bytes, owned */
    double score; /* numeric weight (0 when missing) */
    sds cmp;      /* ALPHA BY weight, owned; NULL when missing or unused */
} SortItem;

/* How to compare, shared by the comparison function of one sort. */
typedef struct SortSpec {
    int desc;      /* DESC */
    int alpha;     /* ALPHA */
    int byPattern; /* BY with '*' (weights come from lookups) */
    int store;     /* STORE: compare bytes, not per locale */
} SortSpec;

/* --- pattern lookups --- */

/* The value `pattern` names for element `elem` (see the file comment), as
 * an owned sds, or NULL when there is none. */
static sds lookupByPattern(Db *db, const sds pattern, const sds elem) {
    if (pattern[0] == '#' && pattern[1] == '\0') return sdsDup(elem);
    const char *star = strchr(pattern, '*');
    if (!star) return NULL;
    const char *arrow = strstr(star + 1, "->");
    size_t patlen = sdsLen(pattern), fieldlen = 0;
    if (arrow && arrow[2] != '\0') fieldlen = patlen - (size_t)(arrow - pattern) - 2;
    size_t prefix = (size_t)(star - pattern);
    size_t postfix = patlen - prefix - 1 - (fieldlen ? fieldlen + 2 : 0);

    sds key = sdsNewLen(pattern, prefix);
    key = sdsCatLen(key, elem, sdsLen(elem));
    key = sdsCatLen(key, star + 1, postfix);
    kvobj *o = dbLookupRead(db, key, sdsLen(key), LOOKUP_NONE);
    sds val = NULL;
    if (o && fieldlen) {
        if (kvType(o) == OBJ_HASH) val = hashValueGetField(o, arrow + 2, fieldlen);
    } else if (o && kvType(o) == OBJ_STRING) {
        val = kvStringDup(o);
    }
    sdsFree(key);
    return val;
}

/* --- comparison and sorting --- */

/* Byte order, shorter first on a common prefix. */
static int compareBytes(const sds a, const sds b) {
    size_t la = sdsLen(a), lb = sdsLen(b);
    int cmp = memcmp(a, b, la < lb ? la : lb);
    if (cmp) return cmp;
    return la < lb ? -1 : la > lb ? 1 : 0;
}

static int compareItems(const SortItem *a, const SortItem *b, const SortSpec *s) {
    int cmp;
    if (!s->alpha) {
        if (a->score > b->score)
            cmp = 1;
        else if (a->score < b->score)
            cmp = -1;
        else
            cmp = compareBytes(a->elem, b->elem);
    } else if (s->byPattern) {
        if (!a->cmp || !b->cmp)
            cmp = (a->cmp == b->cmp) ? 0 : a->cmp ? 1 : -1;
        else
            cmp = s->store ? compareBytes(a->cmp, b->cmp) : strcoll(a->cmp, b->cmp);
    } else {
        cmp = s->store ? compareBytes(a->elem, b->elem) : strcoll(a->elem, b->elem);
    }
    return s->desc ? -cmp : cmp;
}

/* Stable merge sort of v[0..n) using tmp[0..n) as scratch. */
static void mergeSort(SortItem *v, SortItem *tmp, size_t n, const SortSpec *s) {
    if (n < 2) return;
    size_t half = n / 2;
    mergeSort(v, tmp, half, s);
    mergeSort(v + half, tmp, n - half, s);
    size_t i = 0, j = half, k = 0;
    while (i < half && j < n)
        tmp[k++] = compareItems(&v[j], &v[i], s) < 0 ? v[j++] : v[i++];
    while (i < half)
        tmp[k++] = v[i++];
    while (j < n)
        tmp[k++] = v[j++];
    memcpy(v, tmp, n * sizeof(*v));
}

/* --- loading the container --- */

typedef struct Vector {
    SortItem *items;
    size_t len, cap;
} Vector;

static void vectorPush(Vector *v, sds elem) {
    if (v->len == v->cap) {
        v->cap = v->cap ? v->cap * 2 : 16;
        v->items = xrealloc(v->items, v->cap * sizeof(SortItem));
    }
    v->items[v->len++] = (SortItem){elem, 0, NULL};
}

static void vectorFree(Vector *v) {
    for (size_t j = 0; j < v->len; j++) {
        sdsFree(v->items[j].elem);
        if (v->items[j].cmp) sdsFree(v->items[j].cmp);
    }
    xfree(v->items);
}

static sds entryToSds(const QlEntry *e) {
    if (e->str) return sdsNewLen(e->str, e->len);
    return sdsFromLongLong(e->ival);
}

/* Appends up to `count` list elements from index `start` walking towards
 * the tail, or (reverse) towards the head. */
static void loadList(Vector *v, kvobj *o, long start, long count, int reverse) {
    ListRef lr;
    QuicklistIter *it = quicklistIterAt(listOpen(&lr, o), start, reverse ? QL_TAIL : QL_HEAD);
    if (it) {
        QlEntry e;
        while (count-- > 0 && quicklistNext(it, &e))
            vectorPush(v, entryToSds(&e));
        quicklistIterRelease(it);
    }
    listClose(&lr, 0);
}

static void setVisitPush(void *priv, const char *m, size_t len) { vectorPush(priv, sdsNewLen(m, len)); }

static void loadSet(Vector *v, const kvobj *o) { setValueForEach(o, setVisitPush, v); }

static int zsetVisitPush(void *priv, const unsigned char *member, size_t len, double score) {
    (void)score;
    vectorPush(priv, sdsNewLen(member, len));
    return 1;
}

/* --- weights --- */

/* Fills the weights of every item; returns -1 if a numeric weight is not a
 * number (all weights are still loaded, as Redis does). */
static int loadWeights(Db *db, Vector *v, const sds by, const SortSpec *s) {
    int bad = 0;
    for (size_t j = 0; j < v->len; j++) {
        SortItem *it = &v->items[j];
        sds w = by ? lookupByPattern(db, by, it->elem) : NULL;
        if (by && !w) continue; /* missing: 0, or first in ALPHA */
        if (s->alpha) {
            it->cmp = w; /* NULL without BY: the element is compared */
            continue;
        }
        const char *str = w ? w : it->elem;
        char *end;
        errno = 0;
        it->score = strtod(str, &end);
        if (*end != '\0' || errno == ERANGE || isnan(it->score)) bad = 1;
        if (w) sdsFree(w);
    }
    return bad ? -1 : 0;
}

/* --- the command --- */

typedef struct SortArgs {
    SortSpec spec;
    long offset, count; /* LIMIT, count -1 = all */
    int dontsort;       /* BY pattern without '*' */
    sds by;             /* BY pattern with '*' (borrowed), or NULL */
    sds store;          /* STORE destination (borrowed), or NULL */
    sds *gets;          /* GET patterns (borrowed array, owned) */
    int ngets;
} SortArgs;

/* Parses the options; replies the error and returns -1 on a bad one. */
static int fullKeyAccess(Client *c) { return !serverFullKeyReadAccess || serverFullKeyReadAccess(c); }

static int parseSortArgs(Client *c, int readonly, SortArgs *a) {
    memset(a, 0, sizeof(*a));
    a->count = -1;
    a->gets = xmalloc(sizeof(sds) * (size_t)c->argc);
    for (int j = 2; j < c->argc; j++) {
        int left = c->argc - j - 1;
        sds arg = c->argv[j];
        if (argIs(arg, "asc")) {
            a->spec.desc = 0;
        } else if (argIs(arg, "desc")) {
            a->spec.desc = 1;
        } else if (argIs(arg, "alpha")) {
            a->spec.alpha = 1;
        } else if (argIs(arg, "limit") && left >= 2) {
            if (getLongOrReply(c, c->argv[j + 1], &a->offset, NULL) == -1 ||
                getLongOrReply(c, c->argv[j + 2], &a->count, NULL) == -1)
                return -1;
            j += 2;
        } else if (!readonly && argIs(arg, "store") && left >= 1) {
            a->store = c->argv[++j];
        } else if (argIs(arg, "by") && left >= 1) {
            a->by = c->argv[++j];
            if (!strchr(a->by, '*')) {
                a->dontsort = 1;
            } else if (!fullKeyAccess(c)) {
                replyError(c, "ERR BY option of SORT denied due to insufficient ACL permissions.");
                return -1;
            }
        } else if (argIs(arg, "get") && left >= 1) {
            /* Patterns read keys no key spec names: only for users that
             * may read every key (ACL). */
            if (!fullKeyAccess(c)) {
                replyError(c, "ERR GET option of SORT denied due to insufficient ACL permissions.");
                return -1;
            }
            a->gets[a->ngets++] = c->argv[++j];
        } else {
            replyErrorSyntax(c);
            return -1;
        }
    }
    return 0;
}

/* Replies (or pushes to ql when storing) the result for item `it`. */
static void emitItem(Client *c, const SortArgs *a, const SortItem *it, Quicklist *ql) {
    if (a->ngets == 0) {
        if (ql)
            quicklistPush(ql, it->elem, sdsLen(it->elem), QL_TAIL);
        else
            replyBulkSds(c, it->elem);
        return;
    }
    for (int g = 0; g < a->ngets; g++) {
        sds val = lookupByPattern(c->db, a->gets[g], it->elem);
        if (ql)
            quicklistPush(ql, val ? val : "", val ? sdsLen(val) : 0, QL_TAIL);
        else if (val)
            replyBulkSds(c, val);
        else
            replyNull(c);
        if (val) sdsFree(val);
    }
}

/* Stores the result list at the destination (or deletes it when empty),
 * replies the count.  Takes ownership of ql. */
static void storeResult(Client *c, const sds dst, Quicklist *ql) {
    long long n = (long long)quicklistCount(ql);
    if (n > 0) {
        unsigned char *lp = quicklistToListpack(ql); /* a small result: a bare listpack */
        kvobj *stored = lp ? kvCreatePtr(dst, sdsLen(dst), OBJ_LIST, OBJ_ENC_LISTPACK, lp)
                           : kvCreatePtr(dst, sdsLen(dst), OBJ_LIST, OBJ_ENC_QUICKLIST, ql);
        dbSetKey(c->db, stored, 0);
        signalModifiedKey(c, c->db, dst, sdsLen(dst));
        notifyKeyspaceEvent(NOTIFY_LIST, "sortstore", dst, sdsLen(dst), c->db->id);
        serverIncrDirty(n);
    } else {
        quicklistRelease(ql);
        if (dbDelete(c->db, dst, sdsLen(dst))) {
            signalModifiedKey(c, c->db, dst, sdsLen(dst));
            notifyKeyspaceEvent(NOTIFY_GENERIC, "del", dst, sdsLen(dst), c->db->id);
            serverIncrDirty(1);
        }
    }
    replyLongLong(c, n);
}

static void sortGeneric(Client *c, int readonly) {
    SortArgs a;
    Vector v = {0};
    if (parseSortArgs(c, readonly, &a) == -1) goto cleanup;

    kvobj *o = dbLookupRead(c->db, c->argv[1], sdsLen(c->argv[1]), LOOKUP_NONE);
    int type = o ? kvType(o) : OBJ_LIST;
    if (type != OBJ_LIST && type != OBJ_SET && type != OBJ_ZSET) {
        replyErrorWrongType(c);
        goto cleanup;
    }
    /* An unsorted set would differ between master and replica (and between
     * script runs): sort it when the result is stored or scripted. */
    if (a.dontsort && type == OBJ_SET && (a.store || (c->flags & CLIENT_LUA))) {
        a.dontsort = 0;
        a.spec.alpha = 1;
        a.by = NULL;
    }
    if (a.dontsort) a.by = NULL;
    if (type == OBJ_ZSET) zsetEnsureSkiplist(o);
    a.spec.byPattern = a.by != NULL;
    a.spec.store = a.store != NULL;

    long len = 0;
    if (o)
        len = type == OBJ_LIST ? (long)listLength(o)
              : type == OBJ_SET
                  ? (long)setValueLength(o)
                  : (long)zsetLength(o);

    /* LIMIT: the output range [start, end], clamped to the element count. */
    long start = a.offset < 0 ? 0 : a.offset > len ? len : a.offset;
    long count = a.count < -1 ? -1 : a.count > len ? len : a.count;
    long end = count < 0 ? len - 1 : start + count - 1;
    if (start >= len) {
        start = len - 1;
        end = len - 2;
    }
    if (end >= len) end = len - 1;

    if (a.dontsort && type != OBJ_SET) {
        /* The container's own order: load just the range. */
        if (o && end >= start) {
            long n = end - start + 1;
            if (type == OBJ_LIST)
                loadList(&v, o, a.spec.desc ? len - 1 - start : start, n, a.spec.desc);
            else
                zsetForEachByRank(o, start, end, a.spec.desc, zsetVisitPush, &v);
        }
        end -= start;
        start = 0;
    } else if (o) {
        if (type == OBJ_LIST)
            loadList(&v, o, 0, len, 0);
        else if (type == OBJ_SET)
            loadSet(&v, o);
        else
            zsetForEachByRank(o, 0, len - 1, 0, zsetVisitPush, &v);
    }

    if (!a.dontsort) {
        if (loadWeights(c->db, &v, a.by, &a.spec) == -1) {
            replyError(c, ERR_SCORES);
            goto cleanup;
        }
        SortItem *tmp = xmalloc(sizeof(SortItem) * (v.len ? v.len : 1));
        mergeSort(v.items, tmp, v.len, &a.spec);
        xfree(tmp);
    }

    Quicklist *ql = NULL;
    if (a.store)
        ql = quicklistCreate(server.cfg.listMaxListpackSize, server.cfg.listCompressDepth);
    else
        replyArrayLen(c, (end - start + 1) * (a.ngets ? a.ngets : 1));
    for (long j = start; j <= end; j++)
        emitItem(c, &a, &v.items[j], ql);
    if (ql) storeResult(c, a.store, ql);

cleanup:
    vectorFree(&v);
    xfree(a.gets);
}

static void sortCommand(Client *c) { sortGeneric(c, 0); }
static void sortroCommand(Client *c) { sortGeneric(c, 1); }

Command sortCommands[] = {
    {.name = "sort", .proc = sortCommand},
    {.name = "sort_ro", .proc = sortroCommand},
    {0},
};
