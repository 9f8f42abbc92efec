/* listpack.h -- Redis's listpack: a list of strings and integers serialized
 * in one contiguous allocation.  The bytes are exactly Redis 7.0's format, so
 * RDB files store a listpack verbatim and Redis can read what Cairn writes.
 *
 *     <total-bytes u32 LE> <num-elements u16 LE> <entry> ... <entry> <0xFF>
 *
 * num-elements is 65535 when the count does not fit; lpLength then counts.
 * Each entry is <encoding+data> <backlen>, where backlen is the size of
 * encoding+data written so it can be read backwards (1-5 bytes of 7 bits).
 * Encodings (first byte):
 *     0xxxxxxx              7-bit unsigned integer 0..127
 *     10xxxxxx + data       string of up to 63 bytes
 *     110xxxxx yyyyyyyy     13-bit signed integer
 *     1110xxxx yyyyyyyy     string of up to 4095 bytes (length big-end first)
 *     11110000 <u32 len>    string of any length
 *     11110001/2/3/4        16/24/32/64-bit signed integer, little-endian
 *     11111111              end of the listpack
 * A string that is a canonical integer of up to 20 characters (the rule of
 * util.h stringToLongLong) is stored as the smallest integer encoding.
 *
 * Element pointers (`p`) point at an entry's first byte.  Functions that
 * change a listpack may move it: they return the new pointer (the old one
 * and every element pointer into it are invalid) and are warn_unused_result.
 * Allocation goes through ds/alloc.h; the caller owns what lpNew returns and
 * frees it with lpFree.  Functions other than lpValidateIntegrity trust the
 * listpack (validate untrusted bytes first). */
#ifndef CAIRN_LISTPACK_H
#define CAIRN_LISTPACK_H

#include <stddef.h>
#include <stdint.h>

#define LP_INTBUF_SIZE 21
#define LP_BEFORE 0
#define LP_AFTER 1

#define LP_MUST_USE __attribute__((warn_unused_result))

/* Bytes of an empty listpack: header and terminator. */
#define LP_EMPTY_BYTES 7

/* A new empty listpack with room reserved for `capacity` bytes (at least the
 * 7 bytes of an empty one).  Caller owns it. */
unsigned char *lpNew(size_t capacity);
void lpFree(unsigned char *lp);
/* Writes an empty listpack at dst (LP_EMPTY_BYTES bytes of memory the
 * caller owns, e.g. inside a larger block). */
void lpInitEmpty(unsigned char *dst);

/* A listpack that lives inside a larger block (a small hash stored in its
 * key entry) cannot be reallocated by this module.  Its owner installs a
 * resizer around the changes it makes: every change that needs a different
 * size then calls fn(ctx, lp, bytes) instead of reallocating -- before
 * writing when growing (fn must return where the listpack now is, its
 * current bytes intact, with room for `bytes`), after when shrinking (fn
 * may return lp unchanged and trim later).  NULL restores the normal heap
 * behaviour.  Per thread; lpMerge ignores it. */
typedef unsigned char *LpResizeFn(void *ctx, unsigned char *lp, size_t bytes);
void lpSetResizer(LpResizeFn *fn, void *ctx);
/* Total bytes as recorded in the header. */
size_t lpBytes(const unsigned char *lp);
/* Number of elements.  When the header holds 65535 this walks the listpack
 * and, if the count fits again, stores it back into the header. */
unsigned long lpLength(const unsigned char *lp);
unsigned char *lpFirst(unsigned char *lp);                  /* NULL if empty */
unsigned char *lpLast(unsigned char *lp);                   /* NULL if empty */
unsigned char *lpNext(unsigned char *lp, unsigned char *p); /* NULL after the last */
unsigned char *lpPrev(unsigned char *lp, unsigned char *p); /* NULL before the first */
/* Element at index (negative counts from the end, -1 = last); NULL out of
 * range.  Walks from whichever end is nearer. */
unsigned char *lpSeek(unsigned char *lp, long index);
/* Element value: for a string returns a pointer to its bytes and sets *len;
 * for an integer writes its decimal text into intbuf (LP_INTBUF_SIZE bytes),
 * sets *len, returns intbuf, and if isInt/ival are non-NULL sets *isInt=1 and
 * *ival.  For a string *isInt is set to 0 (when non-NULL).  intbuf may be
 * NULL when isInt and ival are non-NULL: integers then return NULL with
 * *len = 0 and only *ival set (no text formatting). */
unsigned char *lpGetValue(unsigned char *p, unsigned int *len, unsigned char *intbuf, int *isInt,
                          long long *ival);

/* Mutations return the (possibly moved) listpack; pointers into the old one
 * are invalid. */
unsigned char *lpAppend(unsigned char *lp, const unsigned char *s, size_t len) LP_MUST_USE;
unsigned char *lpPrepend(unsigned char *lp, const unsigned char *s, size_t len) LP_MUST_USE;
unsigned char *lpAppendInteger(unsigned char *lp, long long v) LP_MUST_USE;
/* Appends n elements with one resize: item i is the string s (len bytes,
 * encoded as lpAppend would, integers included), or the integer v when s
 * is NULL.  The strings must not lie inside lp. */
typedef struct LpItem {
    const unsigned char *s;
    size_t len;
    long long v;
} LpItem;
unsigned char *lpAppendItems(unsigned char *lp, const LpItem *items, size_t n) LP_MUST_USE;
/* Insert s before or after (where = LP_BEFORE / LP_AFTER) element p.  p may
 * be NULL or point at the 0xFF terminator: the element is then appended.
 * newp (if non-NULL) receives the inserted element. */
unsigned char *lpInsert(unsigned char *lp, const unsigned char *s, size_t len, unsigned char *p, int where,
                        unsigned char **newp) LP_MUST_USE;
/* Replace the element *p with s; *p is updated to the new element. */
unsigned char *lpReplace(unsigned char *lp, unsigned char **p, const unsigned char *s, size_t len) LP_MUST_USE;
/* Delete element p; newp (if non-NULL) receives the element after it, NULL
 * if it was the last. */
unsigned char *lpDelete(unsigned char *lp, unsigned char *p, unsigned char **newp) LP_MUST_USE;
/* Delete up to count elements starting at index (negative from the end).
 * An out-of-range index deletes nothing. */
unsigned char *lpDeleteRange(unsigned char *lp, long index, unsigned long count) LP_MUST_USE;
/* Delete up to count elements starting at element *p; *p receives the
 * element that followed the deleted ones, NULL if none. */
unsigned char *lpDeleteRangeWithEntry(unsigned char *lp, unsigned char **p, unsigned long count) LP_MUST_USE;
/* 1 if two of the elements at 0, step, 2*step, ... are equal (by their
 * text, so 12 and "12" are equal): the fields of a hash or the members of
 * a sorted set stored as pairs (step 2).  A temporary table is sized by
 * the listpack's length; the listpack must be valid. */
int lpHasDuplicates(unsigned char *lp, unsigned int step);
/* The same check for a caller that visits the elements itself (one pass
 * that also checks other things): lpDupInit for at most n elements, then
 * lpDupAdd(element p of lp, its text v) returns 1 when an equal element
 * was added before; lpDupFree at the end. */
#define LP_DUP_INLINE 256
typedef struct LpDupSet {
    struct LpDupSlot {
        uint32_t tag, off; /* off 0: free (no element starts there) */
    } *slots, inline_[LP_DUP_INLINE];
    size_t mask;
} LpDupSet;
void lpDupInit(LpDupSet *d, unsigned long n);
int lpDupAdd(LpDupSet *d, unsigned char *lp, unsigned char *p, const unsigned char *v, size_t len);
void lpDupFree(LpDupSet *d);
/* 1 if the element equals the bytes (integers compare by decimal text). */
int lpCompare(unsigned char *p, const unsigned char *s, size_t len);
/* Find an element equal to s starting at p (included), comparing every
 * (skip+1)-th element (skip=1 for hash fields), NULL if none. */
unsigned char *lpFind(unsigned char *lp, unsigned char *p, const unsigned char *s, size_t len, unsigned int skip);
/* Appends *second to *first in one listpack and frees the other.  The
 * listpack reused (the larger one) is updated through its pointer, the other
 * pointer is set to NULL; returns the merged listpack.  If one of them is
 * NULL, returns the other unchanged; NULL if both are. */
unsigned char *lpMerge(unsigned char **first, unsigned char **second);
/* Bytes of a listpack holding v repeated rep times. */
size_t lpEstimateBytesRepeatedInteger(long long v, unsigned long rep);
/* 1 if adding `add` bytes keeps the listpack (may be NULL) under 1 GB. */
int lpSafeToAdd(unsigned char *lp, size_t add);
/* RDB loader check of size untrusted bytes: 1 valid, 0 corrupt.  Without
 * deep only the header and terminator are checked; with deep every entry
 * (encodings, lengths, backlens, element count).  Never reads outside
 * lp[0..size). */
int lpValidateIntegrity(unsigned char *lp, size_t size, int deep);
/* A uniformly random element (ds/rand.h); NULL if empty. */
unsigned char *lpRandom(unsigned char *lp);

#endif
