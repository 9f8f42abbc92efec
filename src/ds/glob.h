/* glob.h -- the pattern language of KEYS, SCAN MATCH, PSUBSCRIBE and
 * CONFIG GET, with redis-server 7.0.15's exact results.
 *
 *   *        any run of bytes (consecutive stars act as one)
 *   ?        any single byte
 *   [abc]    one byte from the set;  [^abc] one byte not in it
 *   [a-z]    a range; reversed ranges ([z-a]) are swapped; range ends are
 *            compared as signed chars, as Redis does on x86/ARM Linux
 *   \c       the byte c literally, also inside brackets; a trailing lone
 *            backslash matches a backslash
 *   [...     an unclosed bracket is a set running to the end of the pattern
 *            (so "[abc" matches one of a, b, c)
 *
 * Like redis-server, a pattern with more than 1000 runs of stars that are
 * followed by something never matches, and nothing but "" matches "".
 *
 * Every element other than '*' consumes exactly one byte.  Matching runs in
 * O(patlen * strlen) worst case and constant extra space, so pathological
 * patterns such as "a*a*a*...b" cannot blow up. */
#ifndef CAIRN_GLOB_H
#define CAIRN_GLOB_H

#include <stddef.h>

/* 1 if str[0..strlen) matches pat[0..patlen), else 0.  nocase folds ASCII
 * letters.  Both inputs are binary safe and need no terminator. */
int globMatch(const char *pat, size_t patlen, const char *str, size_t strlen, int nocase);

#endif
