/* sds.h -- binary-safe dynamic strings.
 *
 * An `sds` is a `char *` that points at the string bytes, so it can be passed
 * to any function that reads a C string.  The bytes may contain NULs; the
 * length lives in a header stored immediately before them:
 *
 *     [ len | cap | flags ][ bytes ... ][ '\0' ][ spare ... ]
 *                          ^ sds points here
 *
 * `flags` is the byte at s[-1]; its low two bits select the header width
 * (8, 16, 32 or 64-bit len/cap fields), chosen from the capacity so a short
 * string pays 3 bytes of header.  Invariants:
 *   - len <= cap, and s[len] == '\0' always (even after sdsSetLen/IncrLen);
 *   - cap is the usable payload size of the allocation, excluding the header
 *     and the terminator byte (allocator slack is folded in, clamped to what
 *     the header width can express);
 *   - the header width is the smallest that holds cap.
 *
 * Ownership: functions returning `sds` return a string the caller owns and
 * must sdsFree.  Functions that take an `sds` and return one may move it;
 * the argument must be considered freed and the result used instead (they
 * are marked warn_unused_result).  Allocation goes through ds/alloc.h and
 * never fails (out of memory aborts). */
#ifndef CAIRN_SDS_H
#define CAIRN_SDS_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

typedef char *sds;

#define SDS_MUST_USE __attribute__((warn_unused_result))

/* Header layouts.  Packed so that the flags byte is always s[-1].  Exposed
 * only because sdsLen/sdsAvail are inline; use the functions below. */
struct __attribute__((packed)) SdsHdr8 {
    uint8_t len;
    uint8_t cap;
    unsigned char flags;
    char buf[];
};
struct __attribute__((packed)) SdsHdr16 {
    uint16_t len;
    uint16_t cap;
    unsigned char flags;
    char buf[];
};
struct __attribute__((packed)) SdsHdr32 {
    uint32_t len;
    uint32_t cap;
    unsigned char flags;
    char buf[];
};
struct __attribute__((packed)) SdsHdr64 {
    uint64_t len;
    uint64_t cap;
    unsigned char flags;
    char buf[];
};

#define SDS_TYPE_8 0
#define SDS_TYPE_16 1
#define SDS_TYPE_32 2
#define SDS_TYPE_64 3
#define SDS_TYPE_MASK 3
#define SDS_HDR(T, s) ((struct SdsHdr##T *)((s) - sizeof(struct SdsHdr##T)))

/* Number of bytes in the string (not counting the terminator).  O(1). */
static inline size_t sdsLen(const sds s) {
    switch ((unsigned char)s[-1] & SDS_TYPE_MASK) {
    case SDS_TYPE_8: return SDS_HDR(8, s)->len;
    case SDS_TYPE_16: return SDS_HDR(16, s)->len;
    case SDS_TYPE_32: return SDS_HDR(32, s)->len;
    default: return (size_t)SDS_HDR(64, s)->len;
    }
}

/* Bytes that can be appended without reallocating.  O(1). */
static inline size_t sdsAvail(const sds s) {
    switch ((unsigned char)s[-1] & SDS_TYPE_MASK) {
    case SDS_TYPE_8: return (size_t)(SDS_HDR(8, s)->cap - SDS_HDR(8, s)->len);
    case SDS_TYPE_16: return (size_t)(SDS_HDR(16, s)->cap - SDS_HDR(16, s)->len);
    case SDS_TYPE_32: return (size_t)(SDS_HDR(32, s)->cap - SDS_HDR(32, s)->len);
    default: return (size_t)(SDS_HDR(64, s)->cap - SDS_HDR(64, s)->len);
    }
}

/* Capacity: the most bytes the string holds without reallocating.  O(1). */
static inline size_t sdsCap(const sds s) {
    switch ((unsigned char)s[-1] & SDS_TYPE_MASK) {
    case SDS_TYPE_8: return SDS_HDR(8, s)->cap;
    case SDS_TYPE_16: return SDS_HDR(16, s)->cap;
    case SDS_TYPE_32: return SDS_HDR(32, s)->cap;
    default: return (size_t)SDS_HDR(64, s)->cap;
    }
}

/* New string holding a copy of init[0..len); init NULL gives len zero bytes. */
sds sdsNewLen(const void *init, size_t len);
/* New string copied from a C string.  cstr NULL gives an empty string. */
sds sdsNew(const char *cstr);
/* New empty string. */
sds sdsEmpty(void);
/* New empty string whose capacity is exactly cap (not rounded up to the
 * allocator's block): for strings that are refilled and must be told apart
 * by their capacity. */
sds sdsEmptyCap(size_t cap);
/* New string with the same bytes as s (capacity trimmed to fit). */
sds sdsDup(const sds s);
/* Release s.  NULL is a no-op. */
void sdsFree(sds s);

/* Set the length to len (must be <= len + avail) without writing the
 * terminator: for a string being filled in place by the kernel (a big
 * request argument), where writing s[len] after every read touches a page
 * only the kernel has written so far, which costs a fault on some virtual
 * machines.  The string must get sdsSetLen before anything reads it as a C
 * string. */
static inline void sdsSetLenUnterminated(sds s, size_t len) {
    switch ((unsigned char)s[-1] & SDS_TYPE_MASK) {
    case SDS_TYPE_8: SDS_HDR(8, s)->len = (uint8_t)len; break;
    case SDS_TYPE_16: SDS_HDR(16, s)->len = (uint16_t)len; break;
    case SDS_TYPE_32: SDS_HDR(32, s)->len = (uint32_t)len; break;
    default: SDS_HDR(64, s)->len = len; break;
    }
}
/* Set the length to len (must be <= len + avail) and write s[len] = '\0'.
 * Used after writing into the spare space directly.  Inline: the parser
 * calls it for every argument. */
static inline void sdsSetLen(sds s, size_t len) {
    sdsSetLenUnterminated(s, len);
    s[len] = '\0';
}
/* Move the length by incr (negative shrinks; must stay within 0..cap) and
 * write the terminator. */
void sdsIncrLen(sds s, ssize_t incr);
/* Empty the string in place, keeping its allocation. */
void sdsClear(sds s);

/* Make sure at least addlen bytes can be appended.  Greedy: the new capacity
 * is twice the needed length below 1 MB, else the needed length plus 1 MB.
 * Length and contents are unchanged. */
sds sdsMakeRoomFor(sds s, size_t addlen) SDS_MUST_USE;
/* Like sdsMakeRoomFor but reserves exactly what is needed. */
sds sdsMakeRoomForNonGreedy(sds s, size_t addlen) SDS_MUST_USE;
/* Like sdsMakeRoomForNonGreedy, the block coming from the allocator's big
 * arena (xreallocBig): for a big request argument. */
sds sdsMakeRoomForBig(sds s, size_t addlen) SDS_MUST_USE;
/* Shrink the allocation to fit the current length. */
sds sdsRemoveFreeSpace(sds s) SDS_MUST_USE;
/* Reallocate so capacity is `size` bytes (or the allocator's rounding of it);
 * if size < len the string is truncated to size. */
sds sdsResize(sds s, size_t size) SDS_MUST_USE;
/* Grow the string to len bytes, the new bytes zeroed.  No-op if already at
 * least len long. */
sds sdsGrowZero(sds s, size_t len) SDS_MUST_USE;

/* Append len bytes from t (binary safe).  t may point into s itself. */
sds sdsCatLen(sds s, const void *t, size_t len) SDS_MUST_USE;
/* Append a C string. */
sds sdsCat(sds s, const char *t) SDS_MUST_USE;
/* Append another sds (binary safe). */
sds sdsCatSds(sds s, const sds t) SDS_MUST_USE;
/* Replace the contents with t[0..len). */
sds sdsCpyLen(sds s, const char *t, size_t len) SDS_MUST_USE;
/* Replace the contents with a C string. */
sds sdsCpy(sds s, const char *t) SDS_MUST_USE;
/* Append printf-formatted text. */
sds sdsCatPrintf(sds s, const char *fmt, ...) SDS_MUST_USE __attribute__((format(printf, 2, 3)));
sds sdsCatVPrintf(sds s, const char *fmt, va_list ap) SDS_MUST_USE;
/* Append p[0..len) as a double-quoted literal: \\ \" \n \r \t \a \b are
 * escaped, bytes outside 0x20..0x7e become \xhh (lowercase).  This is the
 * form MONITOR and redis-cli print. */
sds sdsCatRepr(sds s, const char *p, size_t len) SDS_MUST_USE;
/* New string with the decimal text of v. */
sds sdsFromLongLong(long long v);

/* Keep only bytes start..end (inclusive).  Negative indexes count from the
 * end (-1 is the last byte); out-of-range indexes are clamped; start > end
 * leaves the string empty.  In place, no reallocation. */
void sdsRange(sds s, ssize_t start, ssize_t end);
/* Remove from both ends every byte that appears in the C string cset (NUL
 * bytes are never removed).  In place; returns s. */
sds sdsTrim(sds s, const char *cset) SDS_MUST_USE;
/* ASCII case conversion in place. */
void sdsToLower(sds s);
void sdsToUpper(sds s);
/* memcmp over the common prefix, then the shorter string sorts first.
 * Returns <0, 0 or >0. */
int sdsCmp(const sds a, const sds b);
/* Total bytes reserved for s, header included (what MEMORY USAGE counts). */
size_t sdsAllocSize(const sds s);
/* Start of the underlying allocation (the header). */
void *sdsAllocPtr(const sds s);

/* Split s[0..len) on every occurrence of sep[0..seplen).  Returns an array of
 * *count new strings (caller frees with sdsFreeSplitRes); len 0 gives a
 * non-NULL array with *count 0.  Returns NULL (and *count 0) if len < 0 or
 * seplen < 1. */
sds *sdsSplitLen(const char *s, ssize_t len, const char *sep, int seplen, int *count);
/* Tokenize a config line or inline command.  Whitespace separates tokens.
 * "double quotes" accept \n \r \t \b \a \\ \" \xHH (other \c gives c);
 * 'single quotes' accept only \' as an escape.  A closing quote must be
 * followed by whitespace or the end of the line.  Returns NULL on unbalanced
 * quotes or a bad closing quote; otherwise an array of *argc new strings
 * (non-NULL even when *argc is 0), freed with sdsFreeSplitRes. */
sds *sdsSplitArgs(const char *line, int *argc);
/* Free an array returned by sdsSplitLen/sdsSplitArgs.  NULL is a no-op. */
void sdsFreeSplitRes(sds *tokens, int count);
/* New string: the C strings argv[0..argc) separated by sep. */
sds sdsJoin(char **argv, int argc, const char *sep);

/* Pins: a reader that uses the bytes later (a reply that sends a stored
 * value from where it lies instead of copying it) pins the string; its
 * owner then never changes it in place (it copies first: sdsIsPinned) and
 * lets go of it with sdsDisown instead of sdsFree, so the bytes stay as
 * they were until the last pin goes.  The count (at most SDS_PIN_MAX) and
 * the "owner let go" mark are the flags byte's spare bits, changed with
 * atomic operations: the owner may let go on another thread (a lazy-free
 * thread) than the one that pins and unpins.  sdsFree of a pinned string
 * is a bug. */
#define SDS_PIN_MAX 31
/* Take a pin: 0, or -1 when SDS_PIN_MAX pins are already out (the caller
 * copies the bytes instead). */
int sdsPin(sds s);
/* Drop a pin; frees s when its owner let go and this was the last one. */
void sdsUnpin(sds s);
/* True while at least one pin is out. */
static inline int sdsIsPinned(const sds s) { return ((unsigned char)s[-1] >> 3) != 0; }
/* The owner lets go of s: freed now when no pin is out, else by the last
 * sdsUnpin.  NULL is a no-op. */
void sdsDisown(sds s);

#endif
