/* t_geo.c -- the geo commands: GEOADD, GEODIST, GEOHASH, GEOPOS, GEORADIUS,
 * GEORADIUSBYMEMBER (and their _RO forms), GEOSEARCH, GEOSEARCHSTORE.
 *
 * A geo set is an ordinary sorted set whose scores are 52-bit geohashes
 * (ds/geohash.h), so ZRANGE, ZREM, DUMP and the rest work on it and the
 * values interchange with Redis.  GEOADD is ZADD with the positions turned
 * into scores (it runs the sorted-set code with a rewritten argv, so its
 * options, replies and events are ZADD's, and it propagates as that ZADD).
 *
 * A search collects candidates from the (up to) nine geohash cells that
 * cover the area, in Redis's cell order and score order within a cell,
 * keeps those inside the shape, then sorts them by distance with the C
 * library's qsort (a stable merge sort in glibc, as on the Redis build) or,
 * when COUNT cuts the result, with the same partial quicksort as Redis
 * (so ties come out in the same order either way).
 * Distances are printed with "%.4f" after dividing by the unit, and
 * coordinates in the human long-double form (RESP3: as doubles). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/client.h"
#include "core/command.h"
#include "core/effects.h"
#include "core/errors.h"
#include "core/server.h"
#include "db/db.h"
#include "db/object.h"
#include "ds/alloc.h"
#include "ds/geohash.h"
#include "ds/sds.h"
#include "ds/util.h"
#include "types/zset.h"

/* --- argument helpers --- */

/* Parses argv[0..1] as longitude, latitude into xy.  Returns -1 after
 * replying an error. */
static int lonLatOrReply(Client *c, sds *argv, double *xy) {
    for (int i = 0; i < 2; i++)
        if (getDoubleOrReply(c, argv[i], &xy[i], NULL) == -1) return -1;
    if (xy[0] < GEO_LONG_MIN || xy[0] > GEO_LONG_MAX || xy[1] < GEO_LAT_MIN || xy[1] > GEO_LAT_MAX) {
        replyErrorFormat(c, "-ERR invalid longitude,latitude pair %f,%f", xy[0], xy[1]);
        return -1;
    }
    return 0;
}

/* Meters per unit, or -1 after replying an error. */
static double unitOrReply(Client *c, const sds u) {
    if (argIs(u, "m")) return 1;
    if (argIs(u, "km")) return 1000;
    if (argIs(u, "ft")) return 0.3048;
    if (argIs(u, "mi")) return 1609.34;
    replyError(c, "ERR unsupported unit provided. please use M, KM, FT, MI");
    return -1;
}

/* "<radius> <unit>" into shape.  Returns -1 after replying an error. */
static int radiusOrReply(Client *c, sds *argv, GeoShape *shape) {
    double r;
    if (getDoubleOrReply(c, argv[0], &r, "ERR need numeric radius") == -1) return -1;
    if (r < 0) {
        replyError(c, "ERR radius cannot be negative");
        return -1;
    }
    double conv = unitOrReply(c, argv[1]);
    if (conv < 0) return -1;
    shape->type = GEO_SHAPE_RADIUS;
    shape->radius = r;
    shape->conversion = conv;
    return 0;
}

/* "<width> <height> <unit>" into shape.  Returns -1 after replying. */
static int boxOrReply(Client *c, sds *argv, GeoShape *shape) {
    double w, h;
    if (getDoubleOrReply(c, argv[0], &w, "ERR need numeric width") == -1) return -1;
    if (getDoubleOrReply(c, argv[1], &h, "ERR need numeric height") == -1) return -1;
    if (h < 0 || w < 0) {
        replyError(c, "ERR height or width cannot be negative");
        return -1;
    }
    double conv = unitOrReply(c, argv[2]);
    if (conv < 0) return -1;
    shape->type = GEO_SHAPE_BOX;
    shape->width = w;
    shape->height = h;
    shape->conversion = conv;
    return 0;
}

/* Position of member m of zset o into xy: 0, or -1 when absent. */
static int memberPosition(const kvobj *o, const sds m, double *xy) {
    double score;
    if (!zsetGetScore(o, (const unsigned char *)m, sdsLen(m), &score)) return -1;
    return geohashDecodeScore(score, xy) ? 0 : -1;
}

/* --- replies --- */

static void replyDistance(Client *c, double d) {
    char buf[128];
    int len = snprintf(buf, sizeof(buf), "%.4f", d);
    replyBulk(c, buf, (size_t)len);
}

/* A coordinate: RESP2 bulk, RESP3 double, both in the human long-double
 * form. */
static void replyCoord(Client *c, double v) {
    char buf[128]; /* |v| <= 180: "%.17Lf" needs 22 bytes */
    int len = longDoubleToString(buf, sizeof(buf), (long double)v, 1);
    if (c->resp < 3) {
        replyBulk(c, buf, (size_t)len);
        return;
    }
    replyRaw(c, ",", 1);
    replyRaw(c, buf, (size_t)len);
    replyRaw(c, "\r\n", 2);
}

/* --- GEOADD --- */

/* GEOADD key [NX|XX] [CH] longitude latitude member [...] */
static void geoaddCommand(Client *c) {
    int xx = 0, nx = 0, lonIdx = 2;
    for (; lonIdx < c->argc; lonIdx++) {
        if (argIs(c->argv[lonIdx], "nx")) nx = 1;
        else if (argIs(c->argv[lonIdx], "xx")) xx = 1;
        else if (!argIs(c->argv[lonIdx], "ch")) break;
    }
    if ((c->argc - lonIdx) % 3 || (xx && nx)) {
        replyErrorSyntax(c);
        return;
    }
    int elements = (c->argc - lonIdx) / 3;
    int argc = lonIdx + elements * 2;
    sds *argv = xmalloc(sizeof(sds) * (size_t)argc);
    for (int i = 0; i < lonIdx; i++) argv[i] = c->argv[i];
    for (int i = 0; i < elements; i++) {
        double xy[2];
        if (lonLatOrReply(c, c->argv + lonIdx + i * 3, xy) == -1) {
            for (int j = 0; j < i; j++) sdsFree(argv[lonIdx + j * 2]);
            xfree(argv);
            return;
        }
        GeoHashBits hash;
        geohashEncodeWGS84(xy[0], xy[1], GEO_STEP_MAX, &hash);
        argv[lonIdx + i * 2] = sdsFromLongLong((long long)geohashAlign52(hash));
        argv[lonIdx + i * 2 + 1] = c->argv[lonIdx + i * 3 + 2];
    }
    if (effectsOn) { /* propagated as the ZADD it runs, as Redis does */
        EffectArg *ea = xmalloc(sizeof(EffectArg) * (size_t)argc);
        ea[0] = EA_STR("zadd");
        for (int i = 1; i < argc; i++) ea[i] = EA_SDS(argv[i]);
        effectsRewrite(argc, ea);
        xfree(ea);
    }
    sds *savedArgv = c->argv;
    int savedArgc = c->argc;
    c->argv = argv;
    c->argc = argc;
    zsetZaddArgv(c);
    c->argv = savedArgv;
    c->argc = savedArgc;
    for (int i = 0; i < elements; i++) sdsFree(argv[lonIdx + i * 2]);
    xfree(argv);
}

/* --- search --- */

/* One candidate; the layout of Redis's (40 bytes), so the library sort
 * sees the same element size. */
typedef struct GeoPoint {
    double lon, lat, dist, score;
    sds member;
} GeoPoint;

typedef struct GeoArray {
    GeoPoint *p;
    size_t used, cap;
    const GeoShape *shape;
    size_t limit; /* COUNT ANY: stop once this many are found; 0: all */
} GeoArray;

static int collectVisit(void *priv, const unsigned char *m, size_t len, double score) {
    GeoArray *ga = priv;
    double xy[2], dist = 0;
    if (geohashDecodeScore(score, xy) && geohashInShape(ga->shape, xy[0], xy[1], &dist)) {
        if (ga->used == ga->cap) {
            ga->cap = ga->cap ? ga->cap * 2 : 8;
            ga->p = xrealloc(ga->p, sizeof(GeoPoint) * ga->cap);
        }
        GeoPoint *gp = &ga->p[ga->used++];
        gp->lon = xy[0];
        gp->lat = xy[1];
        gp->dist = dist;
        gp->score = score;
        gp->member = sdsNewLen(m, len);
    }
    return !(ga->used && ga->limit && ga->used >= ga->limit);
}

/* Candidates of the cells covering the shape, in Redis's order. */
static void collectPoints(const kvobj *o, const GeoShape *shape, GeoArray *ga) {
    GeoCells cells;
    double ranges[18];
    int n = 0, last = 0;
    geohashCellsForShape(shape, &cells);
    for (int i = 0; i < 9; i++) {
        GeoHashBits h = cells.cell[i];
        if (h.bits == 0 && h.step == 0) continue;
        /* Large radii make neighbours repeat: skip a repeat of the last one. */
        if (last && h.bits == cells.cell[last].bits && h.step == cells.cell[last].step) continue;
        ranges[2 * n] = (double)geohashAlign52(h);
        h.bits++;
        ranges[2 * n + 1] = (double)geohashAlign52(h);
        n++;
        last = i;
    }
    zsetForEachInScoreRanges(o, ranges, n, collectVisit, ga);
}

static int byDistAsc(const void *a, const void *b) {
    const GeoPoint *x = a, *y = b;
    if (x->dist > y->dist) return 1;
    if (x->dist == y->dist) return 0;
    return -1;
}

static int byDistDesc(const void *a, const void *b) { return -byDistAsc(a, b); }

typedef int GeoCmp(const void *, const void *);

static void swapPoints(GeoPoint *a, GeoPoint *b) {
    GeoPoint t = *a;
    *a = *b;
    *b = t;
}

static void swapRuns(GeoPoint *a, GeoPoint *b, size_t n) {
    for (size_t i = 0; i < n; i++) swapPoints(&a[i], &b[i]);
}

static GeoPoint *median3(GeoPoint *a, GeoPoint *b, GeoPoint *c, GeoCmp *cmp) {
    if (cmp(a, b) < 0) return cmp(b, c) < 0 ? b : (cmp(a, c) < 0 ? c : a);
    return cmp(b, c) > 0 ? b : (cmp(a, c) < 0 ? a : c);
}

static void insertionSort(GeoPoint *a, size_t n, GeoCmp *cmp) {
    for (size_t m = 1; m < n; m++)
        for (size_t l = m; l > 0 && cmp(&a[l - 1], &a[l]) > 0; l--) swapPoints(&a[l], &a[l - 1]);
}

/* Sorts just enough of a[0..n) that ranks lo..hi (indexes into the whole
 * array `base`) hold the right points in order: Bentley and McIlroy's
 * three-way quicksort ("Engineering a Sort Function", 1993: ninther pivot
 * above 40 points, insertion sort below 7) that skips the partitions
 * outside lo..hi.  The tie order is that
 * algorithm's, which Redis's partial sort (pqsort) also follows, so a
 * COUNT-cut reply with equal distances comes out in the same order. */
static void partialSort(GeoPoint *base, GeoPoint *a, size_t n, size_t lo, size_t hi, GeoCmp *cmp) {
    for (;;) {
        if (n < 7) {
            insertionSort(a, n, cmp);
            return;
        }
        GeoPoint *pm = a + n / 2;
        if (n > 7) {
            GeoPoint *pl = a, *pn = a + n - 1;
            if (n > 40) {
                size_t d = n / 8;
                pl = median3(pl, pl + d, pl + 2 * d, cmp);
                pm = median3(pm - d, pm, pm + d, cmp);
                pn = median3(pn - 2 * d, pn - d, pn, cmp);
            }
            pm = median3(pl, pm, pn, cmp);
        }
        swapPoints(a, pm);
        GeoPoint *pa = a + 1, *pb = a + 1, *pc = a + n - 1, *pd = a + n - 1;
        for (;;) {
            int r;
            while (pb <= pc && (r = cmp(pb, a)) <= 0) {
                if (r == 0) {
                    swapPoints(pa, pb);
                    pa++;
                }
                pb++;
            }
            while (pb <= pc && (r = cmp(pc, a)) >= 0) {
                if (r == 0) {
                    swapPoints(pc, pd);
                    pd--;
                }
                pc--;
            }
            if (pb > pc) break;
            swapPoints(pb, pc);
            pb++;
            pc--;
        }
        GeoPoint *pn = a + n;
        size_t r = (size_t)(pa - a) < (size_t)(pb - pa) ? (size_t)(pa - a) : (size_t)(pb - pa);
        swapRuns(a, pb - r, r);
        r = (size_t)(pd - pc) < (size_t)(pn - pd - 1) ? (size_t)(pd - pc) : (size_t)(pn - pd - 1);
        swapRuns(pb, pn - r, r);
        size_t left = (size_t)(pb - pa), right = (size_t)(pd - pc);
        size_t first = (size_t)(a - base);
        /* The "less" run is a[0..left), the "greater" run the last `right`. */
        if (left > 1 && !(hi < first || lo > first + left - 1)) partialSort(base, a, left, lo, hi, cmp);
        if (right <= 1) return;
        a = pn - right;
        n = right;
        first = (size_t)(a - base);
        if (hi < first || lo > first + n - 1) return;
    }
}

enum { SORT_NONE, SORT_ASC, SORT_DESC };

#define RADIUS_COORDS (1 << 0)
#define RADIUS_MEMBER (1 << 1)
#define RADIUS_NOSTORE (1 << 2)
#define GEOSEARCH (1 << 3)
#define GEOSEARCHSTORE (1 << 4)

typedef struct SearchOpts {
    int withDist, withHash, withCoord, sort, any, storeDist;
    int fromMember, fromLonLat, byRadius, byBox;
    long long count;
    sds storeKey;
} SearchOpts;

/* Parses the options after argv[base].  zobj is the source (NULL when
 * absent: FROMMEMBER is then only skipped).  Returns -1 after replying. */
static int searchOptsOrReply(Client *c, int base, int flags, const kvobj *zobj, GeoShape *shape, SearchOpts *o) {
    int remaining = c->argc - base;
    for (int i = 0; i < remaining; i++) {
        sds a = c->argv[base + i], *next = c->argv + base + i + 1;
        if (argIs(a, "withdist")) o->withDist = 1;
        else if (argIs(a, "withhash")) o->withHash = 1;
        else if (argIs(a, "withcoord")) o->withCoord = 1;
        else if (argIs(a, "any")) o->any = 1;
        else if (argIs(a, "asc")) o->sort = SORT_ASC;
        else if (argIs(a, "desc")) o->sort = SORT_DESC;
        else if (argIs(a, "count") && i + 1 < remaining) {
            if (getLongLongOrReply(c, next[0], &o->count, NULL) == -1) return -1;
            if (o->count <= 0) {
                replyError(c, "ERR COUNT must be > 0");
                return -1;
            }
            i++;
        } else if ((argIs(a, "store") || argIs(a, "storedist")) && i + 1 < remaining &&
                   !(flags & (RADIUS_NOSTORE | GEOSEARCH))) {
            o->storeKey = next[0];
            o->storeDist = argIs(a, "storedist");
            i++;
        } else if (argIs(a, "storedist") && (flags & GEOSEARCH) && (flags & GEOSEARCHSTORE)) {
            o->storeDist = 1;
        } else if (argIs(a, "frommember") && i + 1 < remaining && (flags & GEOSEARCH) && !o->fromLonLat) {
            if (zobj && memberPosition(zobj, next[0], shape->xy) == -1) {
                replyError(c, "ERR could not decode requested zset member");
                return -1;
            }
            o->fromMember = 1;
            i++;
        } else if (argIs(a, "fromlonlat") && i + 2 < remaining && (flags & GEOSEARCH) && !o->fromMember) {
            if (lonLatOrReply(c, next, shape->xy) == -1) return -1;
            o->fromLonLat = 1;
            i += 2;
        } else if (argIs(a, "byradius") && i + 2 < remaining && (flags & GEOSEARCH) && !o->byBox) {
            if (radiusOrReply(c, next, shape) == -1) return -1;
            o->byRadius = 1;
            i += 2;
        } else if (argIs(a, "bybox") && i + 3 < remaining && (flags & GEOSEARCH) && !o->byRadius) {
            if (boxOrReply(c, next, shape) == -1) return -1;
            o->byBox = 1;
            i += 3;
        } else {
            replyErrorSyntax(c);
            return -1;
        }
    }
    return 0;
}

/* Checks the option combinations.  Returns -1 after replying. */
static int searchOptsValidOrReply(Client *c, int flags, const SearchOpts *o) {
    if (o->storeKey && (o->withDist || o->withHash || o->withCoord)) {
        replyErrorFormat(c, "ERR %s is not compatible with WITHDIST, WITHHASH and WITHCOORD options",
                         (flags & GEOSEARCHSTORE) ? "GEOSEARCHSTORE" : "STORE option in GEORADIUS");
        return -1;
    }
    if ((flags & GEOSEARCH) && !(o->fromMember || o->fromLonLat)) {
        replyErrorFormat(c, "ERR exactly one of FROMMEMBER or FROMLONLAT can be specified for %s", c->argv[0]);
        return -1;
    }
    if ((flags & GEOSEARCH) && !(o->byRadius || o->byBox)) {
        replyErrorFormat(c, "ERR exactly one of BYRADIUS and BYBOX can be specified for %s", c->argv[0]);
        return -1;
    }
    if (o->any && !o->count) {
        replyError(c, "ERR the ANY argument requires COUNT argument");
        return -1;
    }
    return 0;
}

static void replyPoints(Client *c, GeoArray *ga, size_t n, const SearchOpts *o, double conversion) {
    int extra = o->withDist + o->withHash + o->withCoord;
    replyArrayLen(c, (long)n);
    for (size_t i = 0; i < n; i++) {
        GeoPoint *gp = &ga->p[i];
        if (extra) replyArrayLen(c, extra + 1);
        replyBulkSds(c, gp->member);
        if (o->withDist) replyDistance(c, gp->dist / conversion);
        if (o->withHash) replyLongLong(c, (long long)gp->score);
        if (o->withCoord) {
            replyArrayLen(c, 2);
            replyCoord(c, gp->lon);
            replyCoord(c, gp->lat);
        }
    }
}

static void storePoints(Client *c, GeoArray *ga, size_t n, const SearchOpts *o, double conversion, int flags) {
    ZsetBuild *b = zsetBuildNew();
    for (size_t i = 0; i < n; i++) {
        GeoPoint *gp = &ga->p[i];
        double score = o->storeDist ? gp->dist / conversion : gp->score;
        zsetBuildAdd(b, (const unsigned char *)gp->member, sdsLen(gp->member), score);
    }
    zsetBuildStore(c, o->storeKey, b, (flags & GEOSEARCH) ? "geosearchstore" : "georadiusstore");
    if (n > 1) serverIncrDirty((long long)n - 1); /* Redis counts one change per stored member */
}

/* The source key is missing: STORE deletes the destination. */
static void replyNoSource(Client *c, const SearchOpts *o) {
    if (!o->storeKey) {
        replyEmptyArray(c);
        return;
    }
    if (dbDelete(c->db, o->storeKey, sdsLen(o->storeKey))) {
        signalModifiedKey(c, c->db, o->storeKey, sdsLen(o->storeKey));
        notifyKeyspaceEvent(NOTIFY_GENERIC, "del", o->storeKey, sdsLen(o->storeKey), c->db->id);
        serverIncrDirty(1);
    }
    replyLongLong(c, 0);
}

/* GEORADIUS key lon lat radius unit ..., GEORADIUSBYMEMBER key member radius
 * unit ..., GEOSEARCH key ..., GEOSEARCHSTORE dst key ... */
static void georadiusGeneric(Client *c, int srcIdx, int flags) {
    int wrong = 0;
    kvobj *zobj = lookupReadOrReply(c, c->argv[srcIdx], OBJ_ZSET, &wrong);
    if (wrong) return;
    GeoShape shape = {0};
    SearchOpts o = {0};
    int base;
    if (flags & RADIUS_COORDS) {
        base = 6;
        if (lonLatOrReply(c, c->argv + 2, shape.xy) == -1) return;
        if (radiusOrReply(c, c->argv + 4, &shape) == -1) return;
    } else if (flags & RADIUS_MEMBER) {
        base = 5;
        if (zobj) {
            if (memberPosition(zobj, c->argv[2], shape.xy) == -1) {
                replyError(c, "ERR could not decode requested zset member");
                return;
            }
            if (radiusOrReply(c, c->argv + 3, &shape) == -1) return;
        }
    } else {
        base = (flags & GEOSEARCHSTORE) ? 3 : 2;
        if (flags & GEOSEARCHSTORE) o.storeKey = c->argv[1];
    }
    if (searchOptsOrReply(c, base, flags, zobj, &shape, &o) == -1) return;
    if (searchOptsValidOrReply(c, flags, &o) == -1) return;
    if (!zobj) {
        replyNoSource(c, &o);
        return;
    }
    if (o.count && o.sort == SORT_NONE && !o.any) o.sort = SORT_ASC;

    GeoArray ga = {.shape = &shape, .limit = o.any ? (size_t)o.count : 0};
    collectPoints(zobj, &shape, &ga);
    if (ga.used == 0 && !o.storeKey) {
        replyEmptyArray(c);
        goto cleanup;
    }
    size_t n = ga.used;
    if (o.count && (size_t)o.count < n) n = (size_t)o.count;
    if (o.sort != SORT_NONE) {
        int (*cmp)(const void *, const void *) = o.sort == SORT_ASC ? byDistAsc : byDistDesc;
        if (n == ga.used) {
            if (n > 1) qsort(ga.p, ga.used, sizeof(GeoPoint), cmp);
        }
        else partialSort(ga.p, ga.p, ga.used, 0, n - 1, cmp);
    }
    if (o.storeKey) storePoints(c, &ga, n, &o, shape.conversion, flags);
    else replyPoints(c, &ga, n, &o, shape.conversion);

cleanup:
    for (size_t i = 0; i < ga.used; i++) sdsFree(ga.p[i].member);
    xfree(ga.p);
}

static void georadiusCommand(Client *c) { georadiusGeneric(c, 1, RADIUS_COORDS); }
static void georadiusbymemberCommand(Client *c) { georadiusGeneric(c, 1, RADIUS_MEMBER); }
static void georadiusroCommand(Client *c) { georadiusGeneric(c, 1, RADIUS_COORDS | RADIUS_NOSTORE); }
static void georadiusbymemberroCommand(Client *c) { georadiusGeneric(c, 1, RADIUS_MEMBER | RADIUS_NOSTORE); }
static void geosearchCommand(Client *c) { georadiusGeneric(c, 1, GEOSEARCH); }
static void geosearchstoreCommand(Client *c) { georadiusGeneric(c, 2, GEOSEARCH | GEOSEARCHSTORE); }

/* --- GEOHASH / GEOPOS / GEODIST --- */

/* GEOHASH key [member ...]: 11-character standard geohashes. */
static void geohashCommand(Client *c) {
    int wrong = 0;
    kvobj *zobj = lookupReadOrReply(c, c->argv[1], OBJ_ZSET, &wrong);
    if (wrong) return;
    replyArrayLen(c, c->argc - 2);
    for (int j = 2; j < c->argc; j++) {
        double score;
        char buf[12];
        if (!zobj || !zsetGetScore(zobj, (const unsigned char *)c->argv[j], sdsLen(c->argv[j]), &score) ||
            !geohashString(score, buf))
            replyNull(c);
        else
            replyBulk(c, buf, 11);
    }
}

/* GEOPOS key [member ...] */
static void geoposCommand(Client *c) {
    int wrong = 0;
    kvobj *zobj = lookupReadOrReply(c, c->argv[1], OBJ_ZSET, &wrong);
    if (wrong) return;
    replyArrayLen(c, c->argc - 2);
    for (int j = 2; j < c->argc; j++) {
        double xy[2];
        if (!zobj || memberPosition(zobj, c->argv[j], xy) == -1) {
            replyNullArray(c);
            continue;
        }
        replyArrayLen(c, 2);
        replyCoord(c, xy[0]);
        replyCoord(c, xy[1]);
    }
}

/* GEODIST key member1 member2 [unit] */
static void geodistCommand(Client *c) {
    double toMeters = 1;
    if (c->argc == 5) {
        toMeters = unitOrReply(c, c->argv[4]);
        if (toMeters < 0) return;
    } else if (c->argc > 5) {
        replyErrorSyntax(c);
        return;
    }
    int wrong = 0;
    kvobj *zobj = lookupReadOrReply(c, c->argv[1], OBJ_ZSET, &wrong);
    if (wrong) return;
    double a[2], b[2];
    if (!zobj || memberPosition(zobj, c->argv[2], a) == -1 || memberPosition(zobj, c->argv[3], b) == -1) {
        replyNull(c);
        return;
    }
    replyDistance(c, geohashDistance(a[0], a[1], b[0], b[1]) / toMeters);
}

/* --- command handlers (metadata: src/core/command_data.c) --- */

Command geoCommands[] = {
    {.name = "geoadd", .proc = geoaddCommand},
    {.name = "geodist", .proc = geodistCommand},
    {.name = "geohash", .proc = geohashCommand},
    {.name = "geopos", .proc = geoposCommand},
    {.name = "georadius", .proc = georadiusCommand},
    {.name = "georadius_ro", .proc = georadiusroCommand},
    {.name = "georadiusbymember", .proc = georadiusbymemberCommand},
    {.name = "georadiusbymember_ro", .proc = georadiusbymemberroCommand},
    {.name = "geosearch", .proc = geosearchCommand},
    {.name = "geosearchstore", .proc = geosearchstoreCommand},
    {0},
};
