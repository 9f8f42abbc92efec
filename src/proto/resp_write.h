/* resp_write.h -- the RESP2/RESP3 reply encoder (no I/O).
 *
 * How each reply item (proto/reply_sink.h) is written on the wire, in the
 * protocol version a connection chose with HELLO:
 *
 *   item          RESP2                     RESP3
 *   status        +text\r\n                 same
 *   error         -text\r\n                 same
 *   integer       :n\r\n                    same
 *   bulk          $len\r\nbytes\r\n         same
 *   null          $-1\r\n (array: *-1\r\n)  _\r\n
 *   double        a bulk of its text        ,text\r\n
 *   boolean       :1\r\n / :0\r\n           #t\r\n / #f\r\n
 *   big number    a bulk of its digits      (digits\r\n
 *   verbatim      a bulk of the text        =len+4\r\next:text\r\n
 *   array         *n\r\n                    same
 *   map of n      *2n\r\n                   %n\r\n
 *   set           *n\r\n                    ~n\r\n
 *   push          *n\r\n                    >n\r\n
 *   attribute     |n\r\n                    same
 *
 * A double's text is doubleToString's ("inf", "-inf", "nan" or %.17g).
 * The functions write into a caller's buffer of the stated room and return
 * the number of bytes written; the ones on every request's path are inline.
 * The reply API (core/reply.c) puts these bytes into a client's buffers;
 * the sds helpers at the end build whole RESP values in a string (the
 * push items' RESP encoders in proto/resp_push.c, commands).
 *
 * A command as RESP -- what the AOF, the replication stream, MIGRATE and a
 * replica's handshake carry -- is an array of bulk strings:
 *   *<argc>\r\n then per argument $<len>\r\n<bytes>\r\n
 * respCatCommand / respCatCommandLen append a whole one; a writer that
 * streams a long command piece by piece (AOF rewrite) uses respCatHeader
 * ('*', argc) and then respCatBulk / respCatBulkLongLong per argument.
 * These are the only encoders of a command in src/; lengths are decimal
 * without sign or leading zeros, arguments are binary-safe. */
#ifndef CAIRN_RESP_WRITE_H
#define CAIRN_RESP_WRITE_H

#include <stddef.h>

#include "ds/sds.h"
#include "ds/util.h"
#include "proto/reply_sink.h"

/* Room for a header line: prefix, sign and 19 digits (plus the NUL the
 * number formatter writes), CR LF. */
#define RESP_HEADER_MAX (UTIL_LONG_STR_SIZE + 3)
/* Room for a whole double item, in either version. */
#define RESP_DOUBLE_MAX (RESP_HEADER_MAX + UTIL_MAX_DOUBLE_CHARS + 2)
/* Room for a verbatim string's header: "=<n>\r\n" and "ext:". */
#define RESP_VERBATIM_HEADER_MAX (RESP_HEADER_MAX + 4)

/* "<prefix><n>\r\n" at dst (RESP_HEADER_MAX bytes of room). */
static inline size_t respWriteHeader(char *dst, char prefix, long long n) {
    dst[0] = prefix;
    int len = longLongToString(dst + 1, UTIL_LONG_STR_SIZE, n);
    dst[len + 1] = '\r';
    dst[len + 2] = '\n';
    return (size_t)len + 3;
}

/* ":<v>\r\n" at dst (RESP_HEADER_MAX bytes of room). */
static inline size_t respWriteInteger(char *dst, long long v) {
    if (v >= 0 && v <= 9) {
        dst[0] = ':';
        dst[1] = (char)('0' + v);
        dst[2] = '\r';
        dst[3] = '\n';
        return 4;
    }
    return respWriteHeader(dst, ':', v);
}

/* An aggregate's header in version resp (RESP_HEADER_MAX bytes of room). */
static inline size_t respWriteAggregate(char *dst, int resp, ReplyAggregate kind, long n) {
    static const char prefix3[] = {'*', '%', '~', '>', '|'};
    if (resp >= 3 || kind == REPLY_ATTRIBUTE) return respWriteHeader(dst, prefix3[kind], n);
    return respWriteHeader(dst, '*', kind == REPLY_MAP ? 2 * (long long)n : n);
}

/* The bytes of a null (static; *len set). */
static inline const char *respNull(int resp, ReplyNullKind kind, size_t *len) {
    *len = resp >= 3 ? 3 : 5;
    if (resp >= 3) return "_\r\n";
    return kind == REPLY_NULL_ARRAY ? "*-1\r\n" : "$-1\r\n";
}

/* The 4 bytes of a boolean. */
static inline const char *respBoolean(int resp, int b) {
    if (resp >= 3) return b ? "#t\r\n" : "#f\r\n";
    return b ? ":1\r\n" : ":0\r\n";
}

/* A whole bulk at dst (len + RESP_HEADER_MAX + 2 bytes of room). */
static inline size_t respWriteBulk(char *dst, const void *p, size_t len) {
    size_t h = respWriteHeader(dst, '$', (long long)len);
    __builtin_memcpy(dst + h, p, len);
    dst[h + len] = '\r';
    dst[h + len + 1] = '\n';
    return h + len + 2;
}

/* A whole double item (RESP_DOUBLE_MAX bytes of room). */
size_t respWriteDouble(char *dst, int resp, double d);

/* What goes before a big number's digits: "(" in RESP3, a bulk header in
 * RESP2 (RESP_HEADER_MAX bytes of room); "\r\n" follows the digits. */
size_t respWriteBigNumberHeader(char *dst, int resp, size_t len);

/* What goes before a verbatim string's text: "=<len+4>\r\n<ext>:" in RESP3,
 * a bulk header in RESP2 (RESP_VERBATIM_HEADER_MAX bytes of room); "\r\n"
 * follows the text.  ext is 3 characters. */
size_t respWriteVerbatimHeader(char *dst, int resp, size_t len, const char *ext);

/* Append "<type><n>\r\n", a header line ("$5\r\n", "*3\r\n"). */
sds respCatHeader(sds s, char type, unsigned long long n) SDS_MUST_USE;
/* Append p[0..len) as a bulk string: "$<len>\r\n<bytes>\r\n". */
sds respCatBulk(sds s, const char *p, size_t len) SDS_MUST_USE;
/* Append v's decimal text (as longLongToString writes it) as a bulk. */
sds respCatBulkLongLong(sds s, long long v) SDS_MUST_USE;
/* Append a command: "*<argc>\r\n" and argv[0..argc) as bulks (sds
 * strings, binary-safe).  argc >= 0.  Grows s once. */
sds respCatCommand(sds s, int argc, const sds *argv) SDS_MUST_USE;
/* The same for arguments given as pointers: argument i is argv[i][0..
 * lens[i]), or the C string argv[i] when lens is NULL. */
sds respCatCommandLen(sds s, int argc, const char *const *argv, const size_t *lens) SDS_MUST_USE;

#endif
