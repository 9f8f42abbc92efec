/* test_geohash.c -- unit tests for src/ds/geohash.c.
 *
 * The vectors are redis-server 7.0.15's answers: GEOADD scores, GEOPOS
 * coordinates (printed "%.17Lf" like Redis's human long doubles), GEOHASH
 * strings and GEODIST distances ("%.4f"). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "ds/geohash.h"

static uint64_t scoreOf(double lon, double lat) {
    GeoHashBits h;
    assert_true(geohashEncodeWGS84(lon, lat, GEO_STEP_MAX, &h));
    return geohashAlign52(h);
}

static void test_scores_match_redis(void **state) {
    (void)state;
    assert_true(scoreOf(13.361389, 38.115556) == 3479099956230698ULL);
    assert_true(scoreOf(15.087269, 37.502669) == 3479447370796909ULL);
    assert_true(scoreOf(180, 85.05112878) == 13510798882111488ULL); /* the top edge overflows a step */
    assert_true(scoreOf(-180, -85.05112878) == 0);
    GeoHashBits h;
    assert_false(geohashEncodeWGS84(180.0001, 0, GEO_STEP_MAX, &h));
    assert_false(geohashEncodeWGS84(0, -85.06, GEO_STEP_MAX, &h));
}

static void test_decode_and_strings(void **state) {
    (void)state;
    double xy[2];
    char buf[64];
    assert_true(geohashDecodeScore(3479099956230698.0, xy));
    snprintf(buf, sizeof(buf), "%.17Lf,%.17Lf", (long double)xy[0], (long double)xy[1]);
    assert_string_equal(buf, "13.36138933897018433,38.11555639549629859");
    assert_true(geohashDecodeScore(13510798882111488.0, xy));
    assert_true(xy[0] == 180 && xy[1] == GEO_LAT_MAX);
    char gh[12];
    assert_true(geohashString(3479099956230698.0, gh));
    assert_string_equal(gh, "sqc8b49rny0");
    assert_true(geohashString(13510798882111488.0, gh));
    assert_string_equal(gh, "bp05b5048p0");
    assert_true(geohashString(0, gh));
    assert_string_equal(gh, "00bh0hbj200");
}

static void test_distance_matches_redis(void **state) {
    (void)state;
    double a[2], b[2];
    char buf[64];
    geohashDecodeScore(3479099956230698.0, a);
    geohashDecodeScore(3479447370796909.0, b);
    snprintf(buf, sizeof(buf), "%.4f", geohashDistance(a[0], a[1], b[0], b[1]));
    assert_string_equal(buf, "166274.1516");
    /* Same longitude: the meridian shortcut (7.0.15's formula). */
    assert_true(geohashDistance(180, -50.29286125447132605, 180, 49.48413565609379816) == 11097826.19147368);
}

static void test_cells_cover_the_search(void **state) {
    (void)state;
    GeoShape s = {.type = GEO_SHAPE_RADIUS, .xy = {15, 37}, .conversion = 1000, .radius = 100};
    GeoCells cells;
    geohashCellsForShape(&s, &cells);
    int live = 0;
    for (int i = 0; i < 9; i++) live += !(cells.cell[i].bits == 0 && cells.cell[i].step == 0);
    assert_true(live >= 1 && cells.cell[0].step >= 1 && cells.cell[0].step <= 26);
    double d;
    assert_true(geohashInShape(&s, 15.087269, 37.502669, &d));
    assert_false(geohashInShape(&s, 13.361389, 38.115556, &d));
    GeoShape box = {.type = GEO_SHAPE_BOX, .xy = {15, 37}, .conversion = 1000, .width = 400, .height = 400};
    assert_true(geohashInShape(&box, 13.361389, 38.115556, &d));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_scores_match_redis),
        cmocka_unit_test(test_decode_and_strings),
        cmocka_unit_test(test_distance_matches_redis),
        cmocka_unit_test(test_cells_cover_the_search),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
