/* lzfdec.h -- LZF decompression of untrusted input.
 *
 * The LZF format (what liblzf's lzf_compress writes, and RDB strings carry):
 * a sequence of tokens, each starting with a control byte c:
 *   c < 32    a literal run: the next c+1 bytes are copied as they are;
 *   c >= 32   a back-reference: length L = c >> 5, and when L is 7 one more
 *             byte is added to it; the offset is (c & 31) << 8 plus the
 *             next byte; L+2 bytes are copied from offset+1 bytes before
 *             the current output position (the copy may overlap itself,
 *             byte by byte: a distance of 1 repeats the last byte).
 * The result is the same as liblzf's lzf_decompress; this version copies
 * eight bytes at a time where the buffers allow it, and never reads or
 * writes outside the buffers it is given. */
#ifndef CAIRN_LZFDEC_H
#define CAIRN_LZFDEC_H

#include <stddef.h>

/* Decompresses in[0..inLen) into out[0..outLen).  Returns the bytes
 * written, or 0 when the input is malformed (a run or reference past
 * either end, a reference before the start of the output) or would
 * expand beyond outLen. */
size_t lzfDecompress(const void *in, size_t inLen, void *out, size_t outLen);

#endif
