/* globset.h -- a set of glob patterns (glob.h's language), each with a
 * tag of a few bits, asked whether some pattern whose tag holds every bit
 * of `need` matches a string.  ACL's key patterns are one: the tag is the
 * read/write permission, the string a key.
 *
 * Building sorts the patterns by their first literal byte and classifies
 * each (an exact string, a literal prefix then stars, stars then a literal
 * suffix, only stars, or a general glob), so a query looks only at the
 * patterns that can start with the string's first byte (plus those that
 * start with a glob character) and settles the common shapes with a
 * masked 8-byte compare instead of the glob walk.  The answer is always
 * globMatch's (nocase off). */
#ifndef CAIRN_GLOBSET_H
#define CAIRN_GLOBSET_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* The structures are here only for globSetMatchQuick; use the functions. */
typedef struct GlobEntry {
    uint64_t word;        /* lit's first min(8, litLen) bytes as a load reads them, zeros after */
    uint64_t mask;        /* the bytes of word that count */
    unsigned char tag;
    unsigned char quick;  /* a literal prefix of at most 8 bytes then stars: a string of 8
                           * bytes or more matches iff its first 8 do under mask */
    unsigned char kind;   /* globset.c's GS_* */
    const char *pat;      /* the pattern's bytes, in the set's copy */
    size_t len;           /* pattern bytes */
    const char *lit;      /* the literal part (a prefix, or a suffix after stars) */
    size_t litLen;        /* its bytes */
} GlobEntry;

typedef struct GlobSet {
    /* Group b (256: no literal first byte) runs from group[b].start to
     * group[b + 1].start, its quick entries first, up to group[b].quickEnd. */
    struct {
        const GlobEntry *start, *quickEnd;
    } group[258];
    size_t n;
    GlobEntry *e;
    char *bytes;          /* all patterns, back to back */
} GlobSet;

/* A set of the n patterns pats[i] (lens[i] bytes) with tags[i]; the set
 * copies the bytes.  The caller owns the result (globSetFree). */
GlobSet *globSetCreate(const char *const *pats, const size_t *lens, const unsigned char *tags, size_t n);
void globSetFree(GlobSet *gs);

/* 1 when a quick pattern (a literal prefix of at most 8 bytes, then
 * stars) whose tag has every bit of need matches s; 0 says nothing
 * (globSetMatch decides), and is all a string shorter than 8 bytes gets.
 * Inline, a load and compare per candidate: the common case of a
 * permission check. */
static inline int globSetMatchQuick(const GlobSet *gs, const char *s, size_t len, unsigned need) {
    if (len < 8) return 0;
    uint64_t w;
    memcpy(&w, s, 8);
    unsigned b = (unsigned char)s[0];
    for (const GlobEntry *g = gs->group[b].start, *end = gs->group[b].quickEnd; g < end; g++)
        if ((g->tag & need) == need && ((w ^ g->word) & g->mask) == 0) return 1;
    return 0;
}

/* 1 if a pattern whose tag has every bit of need matches s[0..len). */
int globSetMatch(const GlobSet *gs, const char *s, size_t len, unsigned need);

#endif
