/* crc64.h -- the CRC-64 that RDB files and DUMP payloads carry.
 *
 * Parameters (the "Jones" CRC-64): polynomial 0xad93d23594c935a9, input and
 * output reflected, initial value 0, no final xor.  The check value of the
 * ASCII string "123456789" is 0xe9c6d914c4b8d9ca.  Payloads store the
 * result little endian. */
#ifndef CAIRN_CRC64_H
#define CAIRN_CRC64_H

#include <stddef.h>
#include <stdint.h>

/* Continues a CRC over p[0..len): start with crc = 0; feeding a buffer in
 * pieces gives the same result as feeding it whole. */
uint64_t crc64(uint64_t crc, const void *p, size_t len);
/* Fills the tables and probes the CPU now rather than at the first call
 * (before several threads compute CRCs). */
void crc64Init(void);
/* The CRC of A then B from crcA = crc64(0, A), crcB = crc64(0, B) and B's
 * length: pieces checksummed apart (by several threads) join up.  Costs a
 * few 64-step multiplications, whatever lenB. */
uint64_t crc64Combine(uint64_t crcA, uint64_t crcB, uint64_t lenB);

#endif
