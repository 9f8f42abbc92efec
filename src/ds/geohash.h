/* geohash.h -- the geohash math of Redis's geo commands.
 *
 * A position is stored as a sorted-set score: a 52-bit integer (26 steps)
 * interleaving latitude bits (even positions) and longitude bits (odd
 * positions), each the fixed-point fraction of its range.  The ranges are
 * Web Mercator's: longitude [-180, 180], latitude [-85.05112878,
 * 85.05112878].  Decoding answers the centre of the cell, clamped to the
 * ranges.  Distances are haversine on a sphere of 6372797.560856 m.
 *
 * A search (radius or box) is answered from at most nine cells: the one
 * holding the centre, at a step estimated from the radius, and its eight
 * neighbours, minus those the search area cannot reach.  Every formula and
 * the order of floating-point operations follow Redis 7.0, so results,
 * their distances and their order are the same. */
#ifndef CAIRN_GEOHASH_H
#define CAIRN_GEOHASH_H

#include <stdint.h>

#define GEO_STEP_MAX 26
#define GEO_LAT_MIN -85.05112878
#define GEO_LAT_MAX 85.05112878
#define GEO_LONG_MIN -180
#define GEO_LONG_MAX 180

typedef struct GeoHashBits {
    uint64_t bits;
    uint8_t step;
} GeoHashBits;

typedef struct GeoHashRange {
    double min, max;
} GeoHashRange;

typedef struct GeoHashArea {
    GeoHashBits hash;
    GeoHashRange longitude, latitude;
} GeoHashArea;

enum { GEO_SHAPE_RADIUS = 1, GEO_SHAPE_BOX = 2 };

/* A search area around xy (longitude, latitude): a radius or a width x
 * height box, in units of `conversion` meters. */
typedef struct GeoShape {
    int type;
    double xy[2];
    double conversion;
    double radius;
    double width, height;
} GeoShape;

/* The nine cells to scan: [0] the centre, then N, S, E, W, NE, NW, SE, SW.
 * A cell with bits == 0 and step == 0 is skipped. */
typedef struct GeoCells {
    GeoHashBits cell[9];
} GeoCells;

/* Encode a position with the given ranges at `step` bits per coordinate
 * (1..32).  Returns 0 when the position is outside the geo limits or the
 * ranges. */
int geohashEncode(const GeoHashRange *lon, const GeoHashRange *lat, double longitude, double latitude,
                  uint8_t step, GeoHashBits *hash);
/* Encode with the Mercator ranges. */
int geohashEncodeWGS84(double longitude, double latitude, uint8_t step, GeoHashBits *hash);
/* The cell of a hash with the given ranges; 0 for the zero hash. */
int geohashDecode(GeoHashRange lon, GeoHashRange lat, GeoHashBits hash, GeoHashArea *area);
/* A sorted-set score to (longitude, latitude), as Redis decodes it. */
int geohashDecodeScore(double score, double *xy);
/* The 52-bit score of a hash (left-aligned). */
uint64_t geohashAlign52(GeoHashBits hash);
/* Haversine distance in meters. */
double geohashDistance(double lon1, double lat1, double lon2, double lat2);
/* 1 when the point (x2, y2) is inside the shape; sets *dist to its
 * distance from the centre in meters. */
int geohashInShape(const GeoShape *shape, double x2, double y2, double *dist);
/* The cells covering a search (see GeoCells). */
void geohashCellsForShape(const GeoShape *shape, GeoCells *out);
/* The 11-character standard geohash (latitude range [-90, 90]) of a
 * score; buf gets 11 characters and a NUL. */
int geohashString(double score, char *buf);

#endif
