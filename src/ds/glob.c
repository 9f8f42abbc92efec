/* glob.c -- linear-space glob matcher (see glob.h for the language).
 *
 * Since every non-star element consumes one byte, the match can be found
 * greedily: walk pattern and string together, and on a mismatch go back to
 * the most recent star and let it absorb one more byte.  Backtracking to an
 * earlier star is never needed: whatever an earlier star could absorb, the
 * later one can absorb instead.  The bracket parser mirrors how redis-server
 * 7.0.15 walks a set, including its treatment of unclosed sets and of a
 * '-' that swallows the closing ']'. */
#include "ds/glob.h"

#define GLOB_MAX_STAR_RUNS 1000

static int lower(int c) { return c >= 'A' && c <= 'Z' ? c + ('a' - 'A') : c; }

/* Does the set starting at pat[0] == '[' accept byte c?  Stores in *used the
 * number of pattern bytes the set occupies (independent of c). */
static int setMatch(const char *pat, size_t len, char c, int nocase, size_t *used) {
    size_t i = 1;
    int negate = 0, match = 0;
    if (i < len && pat[i] == '^') {
        negate = 1;
        i++;
    }
    for (;;) {
        if (i >= len) { /* unclosed: the set ends with the pattern */
            i--;
            break;
        }
        if (pat[i] == '\\' && len - i >= 2) {
            i++;
            if (pat[i] == c) match = 1;
        } else if (pat[i] == ']') {
            break;
        } else if (len - i >= 3 && pat[i + 1] == '-') {
            /* Range ends compare as signed chars, like redis-server. */
            int lo = (signed char)pat[i], hi = (signed char)pat[i + 2], x = (signed char)c;
            if (lo > hi) {
                int t = lo;
                lo = hi;
                hi = t;
            }
            if (nocase) {
                lo = lower(lo);
                hi = lower(hi);
                x = lower(x);
            }
            if (x >= lo && x <= hi) match = 1;
            i += 2;
        } else if (nocase ? lower((unsigned char)pat[i]) == lower((unsigned char)c) : pat[i] == c) {
            match = 1;
        }
        i++;
    }
    *used = i + 1;
    return negate ? !match : match;
}

/* Does the single-byte element at pat[0] (not '*') accept c?  Stores its
 * width in *used. */
static int elementMatch(const char *pat, size_t len, char c, int nocase, size_t *used) {
    switch (pat[0]) {
    case '?': *used = 1; return 1;
    case '[': return setMatch(pat, len, c, nocase, used);
    case '\\':
        if (len >= 2) {
            *used = 2;
            return nocase ? lower((unsigned char)pat[1]) == lower((unsigned char)c) : pat[1] == c;
        }
        break; /* trailing backslash is a literal */
    default: break;
    }
    *used = 1;
    return nocase ? lower((unsigned char)pat[0]) == lower((unsigned char)c) : pat[0] == c;
}

/* Number of runs of stars that have something after them (escaped and
 * bracketed stars are not stars). */
static size_t innerStarRuns(const char *pat, size_t len) {
    size_t runs = 0, i = 0, used;
    while (i < len) {
        if (pat[i] == '*') {
            while (i < len && pat[i] == '*') i++;
            if (i < len) runs++;
            continue;
        }
        elementMatch(pat + i, len - i, 'x', 0, &used);
        i += used;
    }
    return runs;
}

int globMatch(const char *pat, size_t patlen, const char *str, size_t strlen, int nocase) {
    /* redis-server never lets a pattern (even "*") match the empty string. */
    if (strlen == 0) return patlen == 0;
    /* redis-server gives up (no match) once its recursion passes more than
     * GLOB_MAX_STAR_RUNS star runs, and every match must pass all of them. */
    if (innerStarRuns(pat, patlen) > GLOB_MAX_STAR_RUNS) return 0;
    size_t p = 0, s = 0;
    size_t starP = 0, starS = 0; /* resume points after the last star */
    int haveStar = 0;
    while (s < strlen) {
        if (p < patlen && pat[p] == '*') {
            while (p < patlen && pat[p] == '*') p++;
            if (p == patlen) return 1;
            haveStar = 1;
            starP = p;
            starS = s;
            continue;
        }
        size_t used;
        if (p < patlen && elementMatch(pat + p, patlen - p, str[s], nocase, &used)) {
            p += used;
            s++;
            continue;
        }
        if (!haveStar) return 0;
        p = starP;
        s = ++starS;
    }
    while (p < patlen && pat[p] == '*') p++;
    return p == patlen;
}
