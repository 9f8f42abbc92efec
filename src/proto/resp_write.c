/* resp_write.c -- the RESP2/RESP3 reply encoder (see resp_write.h): the
 * items not inlined in the header, the sds helpers that pre-encode
 * messages, and the encoder of a command as RESP.
 *
 * respCatCommand* size the whole command first and grow the string once
 * (the AOF and the replication stream call it for every write command), so
 * they write exactly the bytes respCatHeader + respCatBulk would. */
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

sds respCatBulkLongLong(sds s, long long v) {
    char tmp[UTIL_LONG_STR_SIZE];
    int len = longLongToString(tmp, sizeof(tmp), v);
    return respCatBulk(s, tmp, (size_t)len);
}

/* Bytes of "<prefix><n>\r\n" for n >= 0. */
static inline size_t headerLen(size_t n) { return (n < 10 ? 1 : n < 100 ? 2 : digits10(n)) + 3; }

sds respCatCommand(sds s, int argc, const sds *argv) {
    size_t need = headerLen((size_t)argc);
    for (int i = 0; i < argc; i++) {
        size_t len = sdsLen(argv[i]);
        need += headerLen(len) + len + 2;
    }
    size_t cur = sdsLen(s);
    s = sdsMakeRoomFor(s, need);
    char *p = s + cur;
    p += respWriteHeader(p, '*', argc);
    for (int i = 0; i < argc; i++) p += respWriteBulk(p, argv[i], sdsLen(argv[i]));
    sdsSetLen(s, cur + need);
    return s;
}

sds respCatCommandLen(sds s, int argc, const char *const *argv, const size_t *lens) {
    size_t need = headerLen((size_t)argc);
    for (int i = 0; i < argc; i++) {
        size_t len = lens ? lens[i] : strlen(argv[i]);
        need += headerLen(len) + len + 2;
    }
    size_t cur = sdsLen(s);
    s = sdsMakeRoomFor(s, need);
    char *p = s + cur;
    p += respWriteHeader(p, '*', argc);
    for (int i = 0; i < argc; i++) p += respWriteBulk(p, argv[i], lens ? lens[i] : strlen(argv[i]));
    sdsSetLen(s, cur + need);
    return s;
}
