/* geohash.c -- the geohash math of the geo commands (see geohash.h). */
#include "ds/geohash.h"

#include <math.h>
#include <stddef.h>

#define D_R (M_PI / 180.0)
#define EARTH_RADIUS_IN_METERS 6372797.560856
#define MERCATOR_MAX 20037726.37

static double degRad(double ang) { return ang * D_R; }
static double radDeg(double ang) { return ang / D_R; }

/* Spreads the 32 bits of v to the even bit positions of a 64-bit word. */
static uint64_t spreadBits(uint32_t v) {
    uint64_t x = v;
    x = (x | (x << 16)) & 0x0000FFFF0000FFFFULL;
    x = (x | (x << 8)) & 0x00FF00FF00FF00FFULL;
    x = (x | (x << 4)) & 0x0F0F0F0F0F0F0F0FULL;
    x = (x | (x << 2)) & 0x3333333333333333ULL;
    x = (x | (x << 1)) & 0x5555555555555555ULL;
    return x;
}

/* The inverse of spreadBits: the even bits of x, packed. */
static uint32_t squeezeBits(uint64_t x) {
    x &= 0x5555555555555555ULL;
    x = (x | (x >> 1)) & 0x3333333333333333ULL;
    x = (x | (x >> 2)) & 0x0F0F0F0F0F0F0F0FULL;
    x = (x | (x >> 4)) & 0x00FF00FF00FF00FFULL;
    x = (x | (x >> 8)) & 0x0000FFFF0000FFFFULL;
    x = (x | (x >> 16)) & 0x00000000FFFFFFFFULL;
    return (uint32_t)x;
}

static void mercatorRanges(GeoHashRange *lon, GeoHashRange *lat) {
    lon->min = GEO_LONG_MIN;
    lon->max = GEO_LONG_MAX;
    lat->min = GEO_LAT_MIN;
    lat->max = GEO_LAT_MAX;
}

int geohashEncode(const GeoHashRange *lon, const GeoHashRange *lat, double longitude, double latitude,
                  uint8_t step, GeoHashBits *hash) {
    if (step > 32 || step == 0) return 0;
    if ((lat->min == 0 && lat->max == 0) || (lon->min == 0 && lon->max == 0)) return 0;
    if (longitude > GEO_LONG_MAX || longitude < GEO_LONG_MIN || latitude > GEO_LAT_MAX || latitude < GEO_LAT_MIN)
        return 0;
    hash->bits = 0;
    hash->step = step;
    if (latitude < lat->min || latitude > lat->max || longitude < lon->min || longitude > lon->max) return 0;
    double latOff = (latitude - lat->min) / (lat->max - lat->min);
    double lonOff = (longitude - lon->min) / (lon->max - lon->min);
    latOff *= (double)(1ULL << step);
    lonOff *= (double)(1ULL << step);
    hash->bits = spreadBits((uint32_t)latOff) | (spreadBits((uint32_t)lonOff) << 1);
    return 1;
}

int geohashEncodeWGS84(double longitude, double latitude, uint8_t step, GeoHashBits *hash) {
    GeoHashRange lon, lat;
    mercatorRanges(&lon, &lat);
    return geohashEncode(&lon, &lat, longitude, latitude, step, hash);
}

int geohashDecode(GeoHashRange lon, GeoHashRange lat, GeoHashBits hash, GeoHashArea *area) {
    if (hash.bits == 0 && hash.step == 0) return 0;
    area->hash = hash;
    uint32_t ilat = squeezeBits(hash.bits), ilon = squeezeBits(hash.bits >> 1);
    double latScale = lat.max - lat.min, lonScale = lon.max - lon.min;
    double cells = (double)(1ULL << hash.step);
    area->latitude.min = lat.min + (ilat * 1.0 / cells) * latScale;
    area->latitude.max = lat.min + ((uint32_t)(ilat + 1) * 1.0 / cells) * latScale;
    area->longitude.min = lon.min + (ilon * 1.0 / cells) * lonScale;
    area->longitude.max = lon.min + ((uint32_t)(ilon + 1) * 1.0 / cells) * lonScale;
    return 1;
}

/* (uint64_t)score as x86-64 computes it for every double (scores of
 * sorted sets not written by GEOADD can be anything). */
static uint64_t scoreBits(double s) {
    if (s >= 0 && s < 18446744073709551616.0) return (uint64_t)s;
    if (s < 0 && s > -9223372036854775808.0) return (uint64_t)(int64_t)s;
    if (s < 0) return 0x8000000000000000ULL;
    return 0;
}

int geohashDecodeScore(double score, double *xy) {
    GeoHashRange lon, lat;
    GeoHashArea area;
    GeoHashBits hash = {scoreBits(score), GEO_STEP_MAX};
    mercatorRanges(&lon, &lat);
    if (!geohashDecode(lon, lat, hash, &area)) return 0;
    xy[0] = (area.longitude.min + area.longitude.max) / 2;
    if (xy[0] > GEO_LONG_MAX) xy[0] = GEO_LONG_MAX;
    if (xy[0] < GEO_LONG_MIN) xy[0] = GEO_LONG_MIN;
    xy[1] = (area.latitude.min + area.latitude.max) / 2;
    if (xy[1] > GEO_LAT_MAX) xy[1] = GEO_LAT_MAX;
    if (xy[1] < GEO_LAT_MIN) xy[1] = GEO_LAT_MIN;
    return 1;
}

uint64_t geohashAlign52(GeoHashBits hash) { return hash.bits << (52 - hash.step * 2); }

/* Distance along a meridian (the haversine formula reduces to this when
 * the longitudes are equal). */
static double latDistance(double lat1d, double lat2d) {
    return EARTH_RADIUS_IN_METERS * fabs(degRad(lat2d) - degRad(lat1d));
}

double geohashDistance(double lon1d, double lat1d, double lon2d, double lat2d) {
    double lon1r = degRad(lon1d), lon2r = degRad(lon2d);
    double v = sin((lon2r - lon1r) / 2);
    if (v == 0.0) return latDistance(lat1d, lat2d);
    double lat1r = degRad(lat1d), lat2r = degRad(lat2d);
    double u = sin((lat2r - lat1r) / 2);
    double a = u * u + cos(lat1r) * cos(lat2r) * v * v;
    return 2.0 * EARTH_RADIUS_IN_METERS * asin(sqrt(a));
}

int geohashInShape(const GeoShape *shape, double x2, double y2, double *dist) {
    double x1 = shape->xy[0], y1 = shape->xy[1];
    if (shape->type == GEO_SHAPE_RADIUS) {
        *dist = geohashDistance(x1, y1, x2, y2);
        return *dist <= shape->radius * shape->conversion;
    }
    double widthM = shape->width * shape->conversion, heightM = shape->height * shape->conversion;
    if (latDistance(y2, y1) > heightM / 2) return 0;
    if (geohashDistance(x2, y2, x1, y2) > widthM / 2) return 0;
    *dist = geohashDistance(x1, y1, x2, y2);
    return 1;
}

/* Step (bits per coordinate) of the cells for a search of this radius. */
static uint8_t stepsForRadius(double meters, double lat) {
    if (meters == 0) return 26;
    int step = 1;
    while (meters < MERCATOR_MAX) {
        meters *= 2;
        step++;
    }
    step -= 2;
    if (lat > 66 || lat < -66) {
        step--;
        if (lat > 80 || lat < -80) step--;
    }
    if (step < 1) step = 1;
    if (step > 26) step = 26;
    return (uint8_t)step;
}

/* bounds: min lon, min lat, max lon, max lat of the search area. */
static void boundingBox(const GeoShape *shape, double *bounds) {
    double lon = shape->xy[0], lat = shape->xy[1];
    int radius = shape->type == GEO_SHAPE_RADIUS;
    double height = shape->conversion * (radius ? shape->radius : shape->height / 2);
    double width = shape->conversion * (radius ? shape->radius : shape->width / 2);
    const double latDelta = radDeg(height / EARTH_RADIUS_IN_METERS);
    const double lonDeltaTop = radDeg(width / EARTH_RADIUS_IN_METERS / cos(degRad(lat + latDelta)));
    const double lonDeltaBottom = radDeg(width / EARTH_RADIUS_IN_METERS / cos(degRad(lat - latDelta)));
    int south = lat < 0;
    bounds[0] = south ? lon - lonDeltaBottom : lon - lonDeltaTop;
    bounds[2] = south ? lon + lonDeltaBottom : lon + lonDeltaTop;
    bounds[1] = lat - latDelta;
    bounds[3] = lat + latDelta;
}

/* Moves a cell one step east (d > 0) or west along the odd (longitude)
 * bits, wrapping within its step. */
static void moveX(GeoHashBits *h, int d) {
    uint64_t x = h->bits & 0xaaaaaaaaaaaaaaaaULL, y = h->bits & 0x5555555555555555ULL;
    uint64_t zz = 0x5555555555555555ULL >> (64 - h->step * 2);
    if (d > 0) {
        x = x + (zz + 1);
    } else {
        x = x | zz;
        x = x - (zz + 1);
    }
    x &= (0xaaaaaaaaaaaaaaaaULL >> (64 - h->step * 2));
    h->bits = x | y;
}

/* Moves a cell one step north (d > 0) or south along the even bits. */
static void moveY(GeoHashBits *h, int d) {
    uint64_t x = h->bits & 0xaaaaaaaaaaaaaaaaULL, y = h->bits & 0x5555555555555555ULL;
    uint64_t zz = 0xaaaaaaaaaaaaaaaaULL >> (64 - h->step * 2);
    if (d > 0) {
        y = y + (zz + 1);
    } else {
        y = y | zz;
        y = y - (zz + 1);
    }
    y &= (0x5555555555555555ULL >> (64 - h->step * 2));
    h->bits = x | y;
}

enum { C_SELF, C_N, C_S, C_E, C_W, C_NE, C_NW, C_SE, C_SW };

static void neighbours(GeoHashBits h, GeoCells *out) {
    static const int dx[9] = {0, 0, 0, 1, -1, 1, -1, 1, -1};
    static const int dy[9] = {0, 1, -1, 0, 0, 1, 1, -1, -1};
    for (int i = 0; i < 9; i++) {
        GeoHashBits n = h;
        if (dx[i]) moveX(&n, dx[i]);
        if (dy[i]) moveY(&n, dy[i]);
        out->cell[i] = n;
    }
}

static void zeroCells(GeoCells *c, int a, int b, int d) {
    c->cell[a].bits = c->cell[b].bits = c->cell[d].bits = 0;
    c->cell[a].step = c->cell[b].step = c->cell[d].step = 0;
}

void geohashCellsForShape(const GeoShape *shape, GeoCells *out) {
    GeoHashRange lonR, latR;
    GeoHashBits hash;
    GeoHashArea area;
    double b[4];
    boundingBox(shape, b);
    double minLon = b[0], minLat = b[1], maxLon = b[2], maxLat = b[3];
    double lon = shape->xy[0], lat = shape->xy[1];
    double meters = shape->type == GEO_SHAPE_RADIUS
                        ? shape->radius
                        : sqrt((shape->width / 2) * (shape->width / 2) + (shape->height / 2) * (shape->height / 2));
    meters *= shape->conversion;
    uint8_t steps = stepsForRadius(meters, lat);
    mercatorRanges(&lonR, &latR);
    geohashEncode(&lonR, &latR, lon, lat, steps, &hash);
    neighbours(hash, out);
    geohashDecode(lonR, latR, hash, &area);

    /* Coarser cells when a side neighbour does not reach the area's edge. */
    GeoHashArea n, s, e, w;
    geohashDecode(lonR, latR, out->cell[C_N], &n);
    geohashDecode(lonR, latR, out->cell[C_S], &s);
    geohashDecode(lonR, latR, out->cell[C_E], &e);
    geohashDecode(lonR, latR, out->cell[C_W], &w);
    int decrease = n.latitude.max < maxLat || s.latitude.min > minLat || e.longitude.max < maxLon ||
                   w.longitude.min > minLon;
    if (steps > 1 && decrease) {
        steps--;
        geohashEncode(&lonR, &latR, lon, lat, steps, &hash);
        neighbours(hash, out);
        geohashDecode(lonR, latR, hash, &area);
    }

    /* Drop the neighbours the area cannot reach. */
    if (steps >= 2) {
        if (area.latitude.min < minLat) zeroCells(out, C_S, C_SW, C_SE);
        if (area.latitude.max > maxLat) zeroCells(out, C_N, C_NE, C_NW);
        if (area.longitude.min < minLon) zeroCells(out, C_W, C_SW, C_NW);
        if (area.longitude.max > maxLon) zeroCells(out, C_E, C_SE, C_NE);
    }
}

int geohashString(double score, char *buf) {
    static const char alphabet[] = "0123456789bcdefghjkmnpqrstuvwxyz";
    double xy[2];
    if (!geohashDecodeScore(score, xy)) return 0;
    GeoHashRange lon = {-180, 180}, lat = {-90, 90};
    GeoHashBits hash = {0, 0};
    geohashEncode(&lon, &lat, xy[0], xy[1], 26, &hash);
    for (int i = 0; i < 10; i++) buf[i] = alphabet[(hash.bits >> (52 - (i + 1) * 5)) & 0x1f];
    buf[10] = '0';
    buf[11] = '\0';
    return 1;
}
