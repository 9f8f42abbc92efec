/* intset.h -- Redis's intset: a sorted set of integers in one allocation.
 * The bytes are exactly Redis 7.0's format, so RDB files store it verbatim:
 *
 *     <encoding u32 LE> <length u32 LE> <length integers, LE, ascending>
 *
 * encoding is the width of every integer in bytes: 2, 4 or 8.  Adding a
 * value that does not fit the current width upgrades the whole set to the
 * smallest width that holds it; removals never downgrade.  Values are unique.
 *
 * Functions that change an intset may move it: they return the new pointer
 * (the old one is invalid).  The caller owns what intsetNew/intsetDup return
 * and frees it with intsetFree.  Allocation goes through ds/alloc.h. */
#ifndef CAIRN_INTSET_H
#define CAIRN_INTSET_H

#include <stddef.h>
#include <stdint.h>

typedef struct intset intset; /* opaque blob */

#define INTSET_MUST_USE __attribute__((warn_unused_result))

/* An empty intset with 16-bit encoding.  Caller owns it. */
intset *intsetNew(void);
void intsetFree(intset *is);
/* Add value; *added (if non-NULL) is 1 if it was not present. */
intset *intsetAdd(intset *is, long long value, int *added) INTSET_MUST_USE; /* may upgrade encoding / move */
/* Remove value; *removed (if non-NULL) is 1 if it was present. */
intset *intsetRemove(intset *is, long long value, int *removed) INTSET_MUST_USE;
/* 1 if value is present (binary search). */
int intsetFind(const intset *is, long long value);
uint32_t intsetLen(const intset *is);
/* Value at sorted position pos: 1 ok, 0 if pos is out of range. */
int intsetGet(const intset *is, uint32_t pos, long long *value); /* 1 ok */
/* A uniformly random member (ds/rand.h); the set must not be empty. */
long long intsetRandom(const intset *is);
/* Smallest / largest member; the set must not be empty. */
long long intsetMin(const intset *is);
long long intsetMax(const intset *is);
/* Bytes of the serialized form (header + contents). */
size_t intsetBlobLen(const intset *is);
/* A copy; caller owns it. */
intset *intsetDup(const intset *is);
/* RDB loader check of size untrusted bytes: 1 valid, 0 corrupt.  Checks the
 * encoding and that the size matches the length; with deep also that the
 * values are strictly ascending.  Never reads outside is[0..size). */
int intsetValidateIntegrity(const unsigned char *is, size_t size, int deep);

#endif
