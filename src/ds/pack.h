/* pack.h -- a compact form of small listpacks and intsets ("packed"), for
 * collections that have been idle a while (db.c keeps them in their key
 * entry in this form and rebuilds the listpack/intset on first access).
 *
 * Format (all varints are unsigned LEB128, at most 10 bytes):
 *
 *   varint bodyLen | body[bodyLen]
 *   listpack body:  varint origBytes | varint count | element * count
 *   intset body:    width (1: 2, 4 or 8) | varint count | varint zz * count
 *
 * Elements are coded against the previous element of the same "role"
 * (element index modulo the stride: 2 for field/value or member/score
 * pairs, 1 for a set), which starts as the empty string and the integer 0:
 *
 *   1pppp sss               string: p bytes of the previous string of the
 *                           role, then s new bytes (p < 16, s < 8)
 *   01vvvvvv (v < 63)       integer: previous integer of the role + the
 *                           zigzag delta v (64-bit wrapping arithmetic)
 *   01111111 varint         integer, zigzag delta = 63 + varint
 *   00000000 varint p, s    string with longer prefix or suffix
 *
 * An intset's integers are zigzag deltas from the previous one (0 before
 * the first).  Decoding rebuilds a listpack the canonical way (ds/listpack
 * lpAppendItems: an integer as the smallest integer encoding), so a
 * listpack that is not canonical does not round-trip: packListpack checks
 * by decoding and comparing bytes, and refuses (returns 0) unless the
 * result is byte-identical.  Decoders treat their input as hostile: every
 * length is checked against the bytes present and the declared sizes, and
 * a corrupt blob yields NULL, never a read or write out of bounds. */
#ifndef CAIRN_PACK_H
#define CAIRN_PACK_H

#include <stddef.h>

/* Largest listpack or intset packed (bytes): decoders refuse more. */
#define PACK_MAX_ORIG 65536

/* Packs listpack lp (stride 1 or 2) into out[0..cap); returns the packed
 * bytes, or 0 when lp is too big, out too small, or the packed form would
 * not decode to exactly lp's bytes. */
size_t packListpack(const unsigned char *lp, unsigned stride, unsigned char *out, size_t cap);
/* The same for an intset (is: its bytes, isBytes long). */
size_t packIntset(const unsigned char *is, size_t isBytes, unsigned char *out, size_t cap);

/* Bytes of the packed blob at p (the length varint plus its body), or 0
 * when the length varint is malformed.  Trusts nothing beyond `avail`. */
size_t packLength(const unsigned char *p, size_t avail);

/* Decodes a packed listpack of `len` bytes: a new listpack (lpFree) or NULL
 * when corrupt. */
unsigned char *unpackListpack(const unsigned char *p, size_t len, unsigned stride);
/* Decodes a packed intset: a new intset blob (intsetFree / xfree), its size
 * in *bytes, or NULL when corrupt. */
unsigned char *unpackIntset(const unsigned char *p, size_t len, size_t *bytes);

#endif
