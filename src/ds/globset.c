/* globset.c -- a set of tagged glob patterns, queried by string (see
 * globset.h).
 *
 * Layout: the entries are grouped by the first byte of their literal
 * prefix, group b running from group[b].start to group[b+1].start; the
 * entries whose pattern starts with a glob character (or is empty) form
 * group 256, which every query also tries (group 257 only marks its end).
 * Within a group the quick prefixes (a literal of at most 8 bytes, then
 * stars) come first, up to quickEnd, and the general globs last.  An entry keeps up to 8 bytes of its
 * literal part as a word and mask (in the host's byte order), so
 * confirming a literal of at most 8 bytes against a string of at least 8
 * is one load and compare (globSetMatchQuick, inline in globset.h).
 *
 * The shapes and why they agree with globMatch (which, like Redis, lets
 * nothing but the empty pattern match the empty string):
 *   EXACT   no glob character at all: the string equals the pattern.
 *   PREFIX  literal bytes (at least one) then only stars: the string
 *           starts with them (the stars may match nothing).
 *   SUFFIX  stars then literal bytes (at least one): the string ends with
 *           them (so it is not empty).
 *   ANY     only stars: any non-empty string.
 *   GLOB    anything else: globMatch, after its literal prefix (if any)
 *           has matched. */
#include "ds/globset.h"

#include <stdint.h>
#include <string.h>

#include "ds/alloc.h"
#include "ds/glob.h"

enum { GS_EXACT, GS_PREFIX, GS_ANY, GS_SUFFIX, GS_GLOB };

static int isGlobChar(char c) { return c == '*' || c == '?' || c == '[' || c == '\\'; }

static void classify(GlobEntry *g) {
    const char *p = g->pat;
    size_t len = g->len, i = 0;
    while (i < len && !isGlobChar(p[i])) i++;
    size_t stars = i;
    while (stars < len && p[stars] == '*') stars++;
    g->lit = p;
    g->litLen = i;
    if (i == len) {
        g->kind = GS_EXACT;
    } else if (i > 0 && stars == len) {
        g->kind = GS_PREFIX;
    } else if (i == 0 && stars == len) {
        g->kind = GS_ANY;
    } else if (i == 0) {
        size_t j = stars;
        while (j < len && !isGlobChar(p[j])) j++;
        if (j == len) {
            g->kind = GS_SUFFIX;
            g->lit = p + stars;
            g->litLen = len - stars;
        } else {
            g->kind = GS_GLOB;
        }
    } else {
        g->kind = GS_GLOB;
    }
    /* word and mask in the host's byte order, as a load of a string's
     * first 8 bytes reads them. */
    unsigned char wb[8] = {0}, mb[8] = {0};
    size_t w = g->litLen < 8 ? g->litLen : 8;
    memcpy(wb, g->lit, w);
    memset(mb, 0xff, w);
    memcpy(&g->word, wb, 8);
    memcpy(&g->mask, mb, 8);
    g->quick = g->kind == GS_PREFIX && g->litLen <= 8;
}

/* The bucket an entry goes to: its literal first byte, or 256. */
static unsigned bucketOf(const GlobEntry *g) {
    if (g->kind == GS_SUFFIX || g->kind == GS_ANY || g->litLen == 0) return 256;
    return (unsigned char)g->pat[0];
}

/* The order within a group: quick prefixes, then the kinds cheapest to
 * test. */
static int rank(const GlobEntry *g) { return g->quick ? 0 : 1 + g->kind; }

GlobSet *globSetCreate(const char *const *pats, const size_t *lens, const unsigned char *tags, size_t n) {
    GlobSet *gs = xcalloc(sizeof(*gs));
    size_t total = 0;
    for (size_t i = 0; i < n; i++) total += lens[i];
    gs->bytes = xmalloc(total ? total : 1);
    GlobEntry *tmp = xmalloc(sizeof(GlobEntry) * (n ? n : 1));
    gs->e = xmalloc(sizeof(GlobEntry) * (n ? n : 1));
    gs->n = n;
    size_t off = 0;
    size_t count[257] = {0};
    for (size_t i = 0; i < n; i++) {
        memcpy(gs->bytes + off, pats[i], lens[i]);
        tmp[i].pat = gs->bytes + off;
        tmp[i].len = lens[i];
        tmp[i].tag = tags[i];
        off += lens[i];
        classify(&tmp[i]);
        count[bucketOf(&tmp[i])]++;
    }
    size_t fill[257], at = 0;
    for (unsigned b = 0; b < 257; b++) {
        gs->group[b].start = gs->e + at;
        fill[b] = at;
        at += count[b];
    }
    gs->group[257].start = gs->group[257].quickEnd = gs->e + n;
    /* Counting sort by bucket, then within each bucket by rank: the quick
     * prefixes first (globSetMatch's loop), the general globs last. */
    for (int r = 0; r <= GS_GLOB + 1; r++)
        for (size_t i = 0; i < n; i++)
            if (rank(&tmp[i]) == r) gs->e[fill[bucketOf(&tmp[i])]++] = tmp[i];
    for (unsigned b = 0; b < 257; b++) {
        const GlobEntry *g = gs->group[b].start;
        while (g < gs->group[b + 1].start && g->quick) g++;
        gs->group[b].quickEnd = g;
    }
    xfree(tmp);
    return gs;
}

void globSetFree(GlobSet *gs) {
    if (!gs) return;
    xfree(gs->e);
    xfree(gs->bytes);
    xfree(gs);
}

/* Whether s (at least g->litLen bytes) starts with g's literal. */
static inline int litEqual(const GlobEntry *g, const char *s, size_t len) {
    if (len >= 8) {
        uint64_t w;
        memcpy(&w, s, 8);
        if ((w ^ g->word) & g->mask) return 0;
        return g->litLen <= 8 || memcmp(s + 8, g->lit + 8, g->litLen - 8) == 0;
    }
    return memcmp(s, g->lit, g->litLen) == 0;
}

static int entryMatch(const GlobEntry *g, const char *s, size_t len) {
    switch (g->kind) {
    case GS_EXACT: return len == g->litLen && litEqual(g, s, len);
    case GS_PREFIX: return len >= g->litLen && litEqual(g, s, len);
    case GS_ANY: return len > 0;
    case GS_SUFFIX: return len >= g->litLen && memcmp(s + len - g->litLen, g->lit, g->litLen) == 0;
    default:
        if (len < g->litLen || !litEqual(g, s, len)) return 0;
        return globMatch(g->pat, g->len, s, len, 0);
    }
}

int globSetMatch(const GlobSet *gs, const char *s, size_t len, unsigned need) {
    if (globSetMatchQuick(gs, s, len, need)) return 1;
    if (len > 0) {
        unsigned b = (unsigned char)s[0];
        for (const GlobEntry *g = gs->group[b].start; g < gs->group[b + 1].start; g++)
            if ((g->tag & need) == need && entryMatch(g, s, len)) return 1;
    }
    for (const GlobEntry *g = gs->group[256].start; g < gs->group[257].start; g++)
        if ((g->tag & need) == need && entryMatch(g, s, len)) return 1;
    return 0;
}
