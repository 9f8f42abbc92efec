/* rdbcodec.c -- RDB length and string encodings (see rdbcodec.h).
 *
 * Decoded lengths come from untrusted payloads: every length is checked
 * against the bytes that remain before anything is allocated, and an LZF
 * original length may not exceed RDBCODEC_MAX_EXPAND times its compressed
 * length (LZF cannot expand more than that). */
#include "ds/rdbcodec.h"

#include <liblzf/lzf.h>
#include <string.h>

#include "ds/alloc.h"
#include "ds/lzfdec.h"
#include "ds/util.h"

#define ENC_INT8 0
#define ENC_INT16 1
#define ENC_INT32 2
#define ENC_LZF 3
#define RDBCODEC_MAX_EXPAND 300 /* a back-reference emits at most 264 bytes from 2 */

sds rdbEncodeLen(sds s, uint64_t len) {
    unsigned char buf[9];
    size_t n;
    if (len < (1 << 6)) {
        buf[0] = (unsigned char)len;
        n = 1;
    } else if (len < (1 << 14)) {
        buf[0] = (unsigned char)(0x40 | (len >> 8));
        buf[1] = (unsigned char)(len & 0xff);
        n = 2;
    } else {
        int wide = len > UINT32_MAX;
        size_t bytes = wide ? 8 : 4;
        buf[0] = wide ? 0x81 : 0x80;
        for (size_t i = 0; i < bytes; i++)
            buf[1 + i] = (unsigned char)(len >> (8 * (bytes - 1 - i)));
        n = 1 + bytes;
    }
    return sdsCatLen(s, buf, n);
}

/* The integer encoding of p[0..len) into buf, or 0 bytes when the string
 * is not the canonical form of a 32-bit value. */
static size_t encodeInt(const void *p, size_t len, unsigned char *buf) {
    long long v;
    char canon[32];
    if (len == 0 || len > 11 || !stringToLongLong(p, len, &v)) return 0;
    if ((size_t)longLongToString(canon, sizeof(canon), v) != len || memcmp(canon, p, len) != 0) return 0;
    size_t bytes;
    if (v >= INT8_MIN && v <= INT8_MAX) {
        buf[0] = 0xC0 | ENC_INT8;
        bytes = 1;
    } else if (v >= INT16_MIN && v <= INT16_MAX) {
        buf[0] = 0xC0 | ENC_INT16;
        bytes = 2;
    } else if (v >= INT32_MIN && v <= INT32_MAX) {
        buf[0] = 0xC0 | ENC_INT32;
        bytes = 4;
    } else {
        return 0;
    }
    uint32_t u = (uint32_t)(int32_t)v;
    for (size_t i = 0; i < bytes; i++)
        buf[1 + i] = (unsigned char)(u >> (8 * i));
    return 1 + bytes;
}

static sds encodeLzf(sds s, const void *p, size_t len, int *done) {
    *done = 0;
    if (len <= 4 || len > UINT32_MAX) return s;
    size_t room = len - 4;
    unsigned char small[1024]; /* most values: no allocation */
    unsigned char *out = room <= sizeof(small) ? small : xmalloc(room);
    unsigned clen = lzf_compress(p, (unsigned)len, out, (unsigned)room);
    if (clen > 0) {
        unsigned char tag = 0xC0 | ENC_LZF;
        s = sdsCatLen(s, &tag, 1);
        s = rdbEncodeLen(s, clen);
        s = rdbEncodeLen(s, len);
        s = sdsCatLen(s, out, clen);
        *done = 1;
    }
    if (out != small) xfree(out);
    return s;
}

sds rdbEncodeString(sds s, const void *p, size_t len, int compress) {
    unsigned char ibuf[5];
    size_t n = encodeInt(p, len, ibuf);
    if (n) return sdsCatLen(s, ibuf, n);
    if (compress && len > 20) {
        int done;
        s = encodeLzf(s, p, len, &done);
        if (done) return s;
    }
    s = rdbEncodeLen(s, len);
    return sdsCatLen(s, p, len);
}

int rdbDecodeLen(const unsigned char *buf, size_t len, size_t *pos, uint64_t *out, int *special) {
    size_t i = *pos;
    if (i >= len) return -1;
    unsigned char b = buf[i];
    *special = 0;
    switch (b >> 6) {
    case 0:
        *out = b & 0x3f;
        *pos = i + 1;
        return 0;
    case 1:
        if (len - i < 2) return -1;
        *out = ((uint64_t)(b & 0x3f) << 8) | buf[i + 1];
        *pos = i + 2;
        return 0;
    case 3:
        *special = 1;
        *out = b & 0x3f;
        *pos = i + 1;
        return 0;
    }
    size_t bytes = b == 0x80 ? 4 : b == 0x81 ? 8 : 0;
    if (bytes == 0 || len - i < 1 + bytes) return -1;
    uint64_t v = 0;
    for (size_t k = 0; k < bytes; k++)
        v = (v << 8) | buf[i + 1 + k];
    *out = v;
    *pos = i + 1 + bytes;
    return 0;
}

int rdbDecodeLzfHeader(const unsigned char *buf, size_t len, size_t *pos, size_t *clen, size_t *ulen) {
    uint64_t c, u;
    int special;
    size_t i = *pos;
    if (rdbDecodeLen(buf, len, &i, &c, &special) < 0 || special) return -1;
    if (rdbDecodeLen(buf, len, &i, &u, &special) < 0 || special) return -1;
    if (c == 0 || c > len - i || u == 0 || u / RDBCODEC_MAX_EXPAND > c || u > UINT32_MAX) return -1;
    *pos = i;
    *clen = (size_t)c;
    *ulen = (size_t)u;
    return 0;
}

static int decodeInt(const unsigned char *buf, size_t len, size_t *pos, size_t bytes, sds *out) {
    if (len - *pos < bytes) return -1;
    uint32_t u = 0;
    for (size_t k = 0; k < bytes; k++)
        u |= (uint32_t)buf[*pos + k] << (8 * k);
    long long v = bytes == 1 ? (int8_t)u : bytes == 2 ? (int16_t)u : (int32_t)u;
    *pos += bytes;
    *out = sdsFromLongLong(v);
    return 0;
}

static int decodeLzf(const unsigned char *buf, size_t len, size_t *pos, sds *out) {
    size_t clen, ulen;
    if (rdbDecodeLzfHeader(buf, len, pos, &clen, &ulen) < 0) return -1;
    sds s = sdsEmptyCap(ulen); /* written once, by the decompression */
    if (lzfDecompress(buf + *pos, (size_t)clen, s, (size_t)ulen) != ulen) {
        sdsFree(s);
        return -1;
    }
    sdsSetLen(s, ulen);
    *pos += clen;
    *out = s;
    return 0;
}

size_t rdbStringPrefixEnd(const unsigned char *buf, size_t len, size_t pos) {
    uint64_t n;
    int special;
    size_t i = pos;
    if (rdbDecodeLen(buf, len, &i, &n, &special) < 0) return pos;
    if (!special || n != ENC_LZF) return i;
    for (int k = 0; k < 2; k++) {
        size_t j = i;
        if (rdbDecodeLen(buf, len, &j, &n, &special) < 0) break;
        i = j;
    }
    return i;
}

int rdbDecodeString(const unsigned char *buf, size_t len, size_t *pos, sds *out) {
    uint64_t n;
    int special;
    size_t i = *pos;
    if (rdbDecodeLen(buf, len, &i, &n, &special) < 0) return -1;
    int rc;
    if (!special) {
        if (n > len - i) return -1;
        *out = sdsNewLen(buf + i, n);
        i += n;
        rc = 0;
    } else if (n == ENC_INT8 || n == ENC_INT16 || n == ENC_INT32) {
        rc = decodeInt(buf, len, &i, (size_t)1 << n, out);
    } else if (n == ENC_LZF) {
        rc = decodeLzf(buf, len, &i, out);
    } else {
        rc = -1;
    }
    if (rc == 0) *pos = i;
    return rc;
}

int rdbDecodeBlob(const unsigned char *buf, size_t len, size_t *pos, unsigned char **out, size_t *outLen) {
    uint64_t n;
    int special;
    size_t i = *pos;
    if (rdbDecodeLen(buf, len, &i, &n, &special) < 0) return -1;
    if (special && n == ENC_LZF) {
        size_t clen, ulen;
        if (rdbDecodeLzfHeader(buf, len, &i, &clen, &ulen) < 0) return -1;
        unsigned char *b = xmalloc((size_t)ulen);
        if (lzfDecompress(buf + i, (size_t)clen, b, (size_t)ulen) != ulen) {
            xfree(b);
            return -1;
        }
        *pos = i + (size_t)clen;
        *out = b;
        *outLen = (size_t)ulen;
        return 0;
    }
    if (!special) {
        if (n > len - i) return -1;
        unsigned char *b = xmalloc(n ? (size_t)n : 1);
        memcpy(b, buf + i, (size_t)n);
        *pos = i + (size_t)n;
        *out = b;
        *outLen = (size_t)n;
        return 0;
    }
    /* An integer encoding: its decimal text. */
    sds s;
    if (rdbDecodeString(buf, len, pos, &s) < 0) return -1;
    *outLen = sdsLen(s);
    *out = xmalloc(*outLen ? *outLen : 1);
    memcpy(*out, s, *outLen);
    sdsFree(s);
    return 0;
}
