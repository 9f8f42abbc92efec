/* hll.h -- HyperLogLog sketches in Redis's "HYLL" string format.
 *
 * A sketch is an sds string:
 *
 *   [ "HYLL" | enc | 3 unused | card: 8 bytes LE ][ registers ... ]
 *
 * 16,384 registers of 6 bits (precision 14).  enc 0 (dense): the registers
 * packed little-endian, register i at bit 6*i, 12,288 bytes, so a dense
 * sketch is exactly HLL_DENSE_SIZE bytes.  enc 1 (sparse): run-length
 * opcodes that must cover exactly 16,384 registers:
 *   00xxxxxx           ZERO:  xxxxxx+1 (1..64) zero registers
 *   01xxxxxx yyyyyyyy  XZERO: the 14 bits + 1 (1..16384) zero registers
 *   1vvvvvxx           VAL:   xx+1 (1..4) registers of value vvvvv+1 (1..32)
 * The card bytes cache the last computed cardinality; the cache is valid
 * when the top bit of card[7] is clear.
 *
 * Elements hash with MurmurHash64A (seed 0xadc83b19): the low 14 bits pick
 * the register, and the position of the lowest set bit of the rest (1..51)
 * is the candidate value.  The estimate is Ertl's improved estimator (the
 * one Redis 7.0 uses), so counts and bytes equal Redis's for the same
 * sequence of operations.
 *
 * Every function that walks a sparse sketch is bounded by its length and by
 * the register count: a corrupt sketch is reported (-1 / *invalid), never
 * read or written out of bounds.
 *
 * The byte after the string: a sketch may end in a lone XZERO byte, whose
 * second byte is then read from s[len] (Redis reads its sds terminator).
 * Every function here takes sketches that are readable at s[len] (sds
 * strings), and keeps that byte as Redis does: splitting such an opcode
 * writes the last byte of the new sequence there, where the next reads
 * find it.  Callers must not reset it (sdsIncrLen/growth would; the sparse
 * writer restores it). */
#ifndef CAIRN_HLL_H
#define CAIRN_HLL_H

#include <stddef.h>
#include <stdint.h>

#include "ds/sds.h"

#define HLL_P 14
#define HLL_REGISTERS (1 << HLL_P)
#define HLL_BITS 6
#define HLL_HDR_SIZE 16
#define HLL_DENSE_BYTES ((HLL_REGISTERS * HLL_BITS + 7) / 8)
#define HLL_DENSE_SIZE (HLL_HDR_SIZE + HLL_DENSE_BYTES)
#define HLL_DENSE 0
#define HLL_SPARSE 1
#define HLL_SPARSE_VAL_MAX 32

/* MurmurHash64A of key[0..len) (little-endian reads). */
uint64_t hllMurmur64A(const void *key, size_t len, uint64_t seed);

/* Register index (0..16383) and candidate value (1..51) of an element. */
int hllPatLen(const unsigned char *ele, size_t len, long *index);

/* A new empty sparse sketch (valid cached cardinality 0). */
sds hllCreate(void);

/* 1 when s[0..len) is an HLL string Redis accepts: at least a header, the
 * magic, encoding 0 or 1, and for dense exactly HLL_DENSE_SIZE bytes. */
int hllIsValid(const unsigned char *s, size_t len);

/* Cached cardinality: returns 1 and sets *card when the cache is valid. */
int hllCacheGet(const unsigned char *s, uint64_t *card);
void hllCacheSet(unsigned char *s, uint64_t card);
void hllCacheInvalidate(unsigned char *s);

/* Dense register access (regs: the 12,288 register bytes). */
unsigned hllDenseGet(const unsigned char *regs, long i);
void hllDenseSetReg(unsigned char *regs, long i, unsigned val);

/* Add an element: 1 if a register changed, 0 if not, -1 if the sketch is
 * corrupt.  A sparse sketch that would grow past sparseMax bytes (or needs a
 * value above 32) becomes dense.  May move *s. */
int hllAdd(sds *s, const unsigned char *ele, size_t len, size_t sparseMax);

/* Raise register `index` to `val` if it is lower (PFMERGE's writer):
 * 1 changed, 0 not, -1 corrupt.  May move *s. */
int hllSetRegister(sds *s, long index, unsigned val, size_t sparseMax);

/* Make the sketch dense (no-op when dense): 0 ok, -1 corrupt sparse
 * opcodes (the sketch is then unchanged).  May move *s. */
int hllToDense(sds *s);

/* max[i] = MAX(max[i], register i) over a valid-header sketch; -1 when its
 * sparse opcodes are corrupt (max may be partly updated). */
int hllMergeInto(uint8_t *max, const unsigned char *s, size_t len);

/* Cardinality estimate of a sketch; sets *invalid (when given) for corrupt
 * sparse opcodes. */
uint64_t hllCount(const unsigned char *s, size_t len, int *invalid);
/* Cardinality estimate of raw registers (one byte each). */
uint64_t hllCountRaw(const uint8_t *regs);

/* PFDEBUG DECODE text of a sparse sketch ("z:N Z:N v:V,N" tokens). */
sds hllDecodeSparse(const unsigned char *s, size_t len);

#endif
