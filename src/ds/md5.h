/* md5.h -- MD5 (RFC 1321), for the HTTP gateway's ETag (Webdis sends the
 * MD5 of a reply's body as its ETag).  Not for security. */
#ifndef CAIRN_MD5_H
#define CAIRN_MD5_H

#include <stddef.h>
#include <stdint.h>

/* One call: the digest of data[0..len) as 32 lowercase hex digits and a
 * NUL into out. */
void md5Hex(const void *data, size_t len, char out[33]);

#endif
