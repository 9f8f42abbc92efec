/* rdbcodec.h -- RDB's length and string encodings, over memory buffers.
 *
 * Lengths: the top two bits of the first byte choose the form -- 00: 6-bit
 * value; 01: 14-bit value (6 bits here, 8 in the next byte); 10: 0x80 then a
 * 32-bit big-endian value, or 0x81 then a 64-bit one; 11: not a length but
 * a special string encoding in the low 6 bits.
 *
 * Strings: a length then the bytes, or a special encoding: 0xC0/0xC1/0xC2
 * an integer in 1/2/4 little-endian bytes (the string is its decimal
 * form), 0xC3 LZF: compressed length, original length, compressed bytes.
 *
 * Decoders never read past the buffer they are given and report any
 * truncation or malformed encoding as -1. */
#ifndef CAIRN_RDBCODEC_H
#define CAIRN_RDBCODEC_H

#include <stddef.h>
#include <stdint.h>

#include "ds/sds.h"

/* Appends the length encoding of len to s. */
sds rdbEncodeLen(sds s, uint64_t len) SDS_MUST_USE;
/* Appends p[0..len) as an RDB string, the way redis-server writes it: an
 * integer encoding when the bytes are the canonical decimal form of a value
 * that fits 32 bits; else, when compress is set and len > 20, LZF when that
 * saves at least 4 bytes; else plain. */
sds rdbEncodeString(sds s, const void *p, size_t len, int compress) SDS_MUST_USE;

/* Reads a length at buf[*pos] (buf holds len bytes).  On success stores it
 * in *out, sets *special to 1 when the byte was a special string encoding
 * (then *out is that encoding's number), advances *pos and returns 0;
 * returns -1 when the buffer ends first. */
int rdbDecodeLen(const unsigned char *buf, size_t len, size_t *pos, uint64_t *out, int *special);
/* Reads a string at buf[*pos] into a new sds (the caller owns it) and
 * advances *pos.  Returns -1, leaving *out unset, on truncation, an unknown
 * encoding, or LZF data that does not expand to the stated length. */
int rdbDecodeString(const unsigned char *buf, size_t len, size_t *pos, sds *out);
/* The same string as a plain heap block of exactly *outLen bytes (at least
 * one allocated), which the caller frees with xfree or keeps as a listpack
 * or other blob: LZF expands straight into it. */
int rdbDecodeBlob(const unsigned char *buf, size_t len, size_t *pos, unsigned char **out, size_t *outLen);
/* The lengths after an LZF string's encoding byte (buf[*pos] is the
 * compressed length), checked as the decoders check them before they
 * reserve anything: both nonzero, the compressed bytes present, the
 * original at most RDBCODEC_MAX_EXPAND times the compressed and below
 * 4 GB.  0 with *pos at the compressed bytes, or -1. */
/* Where a reader that stops at a string cut off by the end of buf stands
 * after the length fields it could read (the string's length, or an LZF
 * string's encoding byte and its two lengths), as Redis's reader counts
 * them: pos when not even the first is whole. */
size_t rdbStringPrefixEnd(const unsigned char *buf, size_t len, size_t pos);
#define RDBCODEC_ENC_LZF 3
int rdbDecodeLzfHeader(const unsigned char *buf, size_t len, size_t *pos, size_t *clen, size_t *ulen);

#endif
