/* zset.h - small sorted-set API for other type code (SORT). */
#ifndef CAIRN_ZSET_H
#define CAIRN_ZSET_H

#include <stddef.h>
#include "db/object.h"

/* Number of members of a sorted-set value (OBJ_ZSET). */
unsigned long zsetLength(const kvobj *o);

/* Visitor: return 0 to stop the iteration. */
typedef int ZsetVisit(void *priv, const unsigned char *member, size_t len, double score);

/* Visit members with rank start..end (inclusive, already clamped by the
 * caller to 0..len-1, start <= end), ascending by (score, member) or, with
 * reverse, descending (rank 0 is then the highest). */
void zsetForEachByRank(const kvobj *o, long start, long end, int reverse, ZsetVisit *fn, void *priv);

#endif
