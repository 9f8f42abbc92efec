/* lolwut.c -- LOLWUT [VERSION v] [arg ...]: a piece of computer art, then
 * the version line.
 *
 * As in Redis 7.0, the version is an integer (anything else: the integer
 * error), and a version without art of its own (7, the default, or any
 * other but 5 and 6) answers just "Redis ver. 7.0.15\n".  Versions 5 and 6
 * are Cairn's own drawings, each followed by a blank line and a caption
 * that ends with the same version line:
 *   - 5 [columns [stones [seed]]]: a cairn, a pile of stones narrowing
 *     upwards, each stone's width and offset varied by the seed
 *     (defaults 66, 8, 12; clamped to 1..1000, 1..200, 1..200);
 *   - 6 [columns [rows]]: a field of cairns of different heights under a
 *     sky of a few stars (defaults 80, 20; each clamped to 1..1000).
 * Arguments after VERSION v that are not integers answer the integer
 * error.  The reply is a verbatim string ("txt"). */
#include <stdint.h>
#include <string.h>

#include "core/client.h"
#include "core/server.h"
#include "ds/alloc.h"
#include "ds/sds.h"
#include "ds/util.h"

/* A small deterministic mix of (a, b): the drawings are the same for the
 * same arguments. */
static uint32_t mix(uint32_t a, uint32_t b) {
    uint32_t h = a * 0x9e3779b1u ^ (b + 0x7f4a7c15u + (a << 6) + (a >> 2));
    h ^= h >> 15;
    h *= 0x2c1b3c6du;
    h ^= h >> 12;
    h *= 0x297a2d39u;
    h ^= h >> 15;
    return h;
}

/* A character canvas of cols x rows, rows kept as one block. */
typedef struct Canvas {
    int cols, rows;
    char *cells;
} Canvas;

static void canvasInit(Canvas *cv, int cols, int rows) {
    cv->cols = cols;
    cv->rows = rows;
    cv->cells = xmalloc((size_t)cols * (size_t)rows);
    memset(cv->cells, ' ', (size_t)cols * (size_t)rows);
}

static void canvasPut(Canvas *cv, int x, int y, char ch) {
    if (x >= 0 && x < cv->cols && y >= 0 && y < cv->rows) cv->cells[(size_t)y * (size_t)cv->cols + (size_t)x] = ch;
}

/* The canvas as text, each row without its trailing spaces. */
static sds canvasRender(sds out, const Canvas *cv) {
    for (int y = 0; y < cv->rows; y++) {
        const char *row = cv->cells + (size_t)y * (size_t)cv->cols;
        int len = cv->cols;
        while (len > 0 && row[len - 1] == ' ') len--;
        out = sdsCatLen(out, row, (size_t)len);
        out = sdsCatLen(out, "\n", 1);
    }
    return out;
}

/* One stone whose bottom row is y, w wide from x: a rounded top (when the
 * stone is wide enough for two rows) over a body with a little texture.
 * Returns the rows it took. */
static int drawStone(Canvas *cv, int x, int y, int w, uint32_t grain) {
    if (w < 3) w = 3;
    canvasPut(cv, x, y, '(');
    canvasPut(cv, x + w - 1, y, ')');
    for (int i = 1; i < w - 1; i++) canvasPut(cv, x + i, y, mix(grain, (uint32_t)i) % 7 == 0 ? '.' : '_');
    if (w < 6) return 1;
    canvasPut(cv, x + 1, y - 1, '.');
    canvasPut(cv, x + w - 2, y - 1, '.');
    for (int i = 2; i < w - 2; i++) canvasPut(cv, x + i, y - 1, '-');
    return 2;
}

/* A pile of `stones` stones standing on row `ground`, centred on column
 * cx, the widest `base` columns; returns the top row used. */
static int drawCairn(Canvas *cv, int cx, int ground, int base, int stones, uint32_t seed) {
    int y = ground;
    for (int s = 0; s < stones; s++) {
        uint32_t h = mix(seed, (uint32_t)s);
        int w = base - (base * s) / (stones + 1);
        w += (int)(h % 5) - 2; /* uneven stones */
        if (w < 3) w = 3;
        int shift = (int)((h >> 8) % 3) - 1;
        int x = cx - w / 2 + (w > 8 ? shift : 0);
        y -= drawStone(cv, x, y, w, h);
    }
    return y + 1;
}

static void reply(Client *c, sds art) {
    replyVerbatim(c, art, sdsLen(art), "txt");
    sdsFree(art);
}

static sds versionLine(sds s) { return sdsCatPrintf(s, "Redis ver. %s\n", REDIS_COMPAT_VERSION); }

/* The integer at argv[i] clamped to [lo, hi], or def when absent; -1 after
 * replying the integer error. */
static int argOr(Client *c, int argc, sds *argv, int i, long def, long lo, long hi, long *out) {
    long long v = def;
    if (i < argc && getLongLongOrReply(c, argv[i], &v, NULL) == -1) return -1;
    if (v < lo) v = lo;
    if (v > hi) v = hi;
    *out = (long)v;
    return 0;
}

/* VERSION 5: one cairn. */
static void lolwutStones(Client *c, int argc, sds *argv) {
    long cols, stones, seed;
    if (argOr(c, argc, argv, 1, 66, 1, 1000, &cols) == -1 || argOr(c, argc, argv, 2, 8, 1, 200, &stones) == -1 ||
        argOr(c, argc, argv, 3, 12, 1, 200, &seed) == -1)
        return;
    int rows = (int)stones * 2 + 1;
    Canvas cv;
    canvasInit(&cv, (int)cols, rows);
    int base = (int)cols * 3 / 4;
    if (base < 3) base = 3;
    drawCairn(&cv, (int)cols / 2, rows - 2, base, (int)stones, (uint32_t)seed);
    for (int x = 0; x < cols; x++) canvasPut(&cv, x, rows - 1, mix((uint32_t)seed, (uint32_t)x) % 5 ? '~' : '-');
    sds art = canvasRender(sdsEmpty(), &cv);
    xfree(cv.cells);
    art = sdsCatPrintf(art, "\nA cairn of %ld stone%s: each one placed by someone who passed this way. ", stones,
                       stones == 1 ? "" : "s");
    reply(c, versionLine(art));
}

/* VERSION 6: a field of cairns. */
static void lolwutField(Client *c, int argc, sds *argv) {
    long cols, rows;
    if (argOr(c, argc, argv, 1, 80, 1, 1000, &cols) == -1 || argOr(c, argc, argv, 2, 20, 1, 1000, &rows) == -1)
        return;
    Canvas cv;
    canvasInit(&cv, (int)cols, (int)rows);
    int ground = (int)rows - 1;
    for (int x = 0; x < cols; x++) canvasPut(&cv, x, ground, '_');
    /* A few stars in the upper third. */
    for (int y = 0; y < rows / 3; y++)
        for (int x = 0; x < cols; x++)
            if (mix((uint32_t)x, (uint32_t)y) % 53 == 0) canvasPut(&cv, x, y, mix((uint32_t)y, (uint32_t)x) % 3 ? '.' : '*');
    /* Cairns about every 14 columns, taller towards the middle. */
    for (int cx = 7, i = 0; cx < cols; cx += 14, i++) {
        uint32_t h = mix((uint32_t)i, 0x5eed);
        int mid = (int)cols / 2, dist = cx > mid ? cx - mid : mid - cx;
        int stones = 2 + (int)(h % 3) + (mid - dist) * 4 / (mid + 1);
        int maxStones = ((int)rows - 2) / 2;
        if (stones > maxStones) stones = maxStones;
        if (stones > 0) drawCairn(&cv, cx, ground - 1, 9 + (int)(h % 4), stones, h);
    }
    sds art = canvasRender(sdsEmpty(), &cv);
    xfree(cv.cells);
    art = sdsCat(art, "\nA field of cairns, for the travellers who come after. ");
    reply(c, versionLine(art));
}

static void lolwutCommand(Client *c) {
    long long v = 7; /* the major version: no art of its own */
    int argc = c->argc;
    sds *argv = c->argv;
    if (argc >= 3 && argIs(argv[1], "version")) {
        if (getLongLongOrReply(c, argv[2], &v, NULL) == -1) return;
        argc -= 2;
        argv += 2;
    }
    if (v == 5) lolwutStones(c, argc, argv);
    else if (v == 6) lolwutField(c, argc, argv);
    else reply(c, versionLine(sdsEmpty()));
}

Command lolwutCommands[] = {
    {.name = "lolwut", .proc = lolwutCommand},
    {0},
};
