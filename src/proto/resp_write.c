/* resp_write.c -- the RESP2/RESP3 reply encoder (see resp_write.h): the
 * items not inlined in the header, and the sds helpers that pre-encode
 * messages. */
#include "proto/resp_write.h"

#include <math.h>
#include <string.h>

size_t respWriteDouble(char *dst, int resp, double d) {
    char text[UTIL_MAX_DOUBLE_CHARS];
    size_t len = (size_t)doubleToString(text, sizeof(text), d);
    if (isnan(d) && signbit(d)) { /* "%.17g" writes a negative NaN (Lua's 0/0) as "-nan" */
        memcpy(text, "-nan", 4);
        len = 4;
    }
    size_t h;
    if (resp >= 3) {
        dst[0] = ',';
        h = 1;
    } else {
        h = respWriteHeader(dst, '$', (long long)len);
    }
    memcpy(dst + h, text, len);
    dst[h + len] = '\r';
    dst[h + len + 1] = '\n';
    return h + len + 2;
}

size_t respWriteBigNumberHeader(char *dst, int resp, size_t len) {
    if (resp < 3) return respWriteHeader(dst, '$', (long long)len);
    dst[0] = '(';
    return 1;
}

size_t respWriteVerbatimHeader(char *dst, int resp, size_t len, const char *ext) {
    if (resp < 3) return respWriteHeader(dst, '$', (long long)len);
    size_t h = respWriteHeader(dst, '=', (long long)len + 4);
    memcpy(dst + h, ext, 3);
    dst[h + 3] = ':';
    return h + 4;
}

sds respCatHeader(sds s, char type, unsigned long long n) {
    char buf[RESP_HEADER_MAX];
    buf[0] = type;
    int len = unsignedLongLongToString(buf + 1, sizeof(buf) - 3, n);
    buf[len + 1] = '\r';
    buf[len + 2] = '\n';
    return sdsCatLen(s, buf, (size_t)len + 3);
}

sds respCatBulk(sds s, const char *p, size_t len) {
    s = respCatHeader(s, '$', len);
    s = sdsCatLen(s, p, len);
    return sdsCatLen(s, "\r\n", 2);
}
