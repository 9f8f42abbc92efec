/* scan.h -- what SCAN, SSCAN, HSCAN and ZSCAN share: Redis's cursor
 * parsing, the MATCH/COUNT options of the per-key scans, and collecting
 * entries from dbScan or htabScan.  Each command keeps its own order of checks
 * (cursor, key, options), as Redis does. */
#ifndef CAIRN_SCAN_H
#define CAIRN_SCAN_H

#include <stddef.h>
#include <stdint.h>

#include "core/client.h"

/* Cursor text as Redis reads it (strtoul on the C string): no leading
 * space, an optional sign (negative values wrap), decimal digits, nothing
 * after them; the empty string is cursor 0.  Replies "ERR invalid cursor"
 * and returns -1 otherwise. */
int scanParseCursorOrReply(Client *c, const sds s, uint64_t *cursor);

/* [MATCH pattern] [COUNT count] from argv[first..] (SSCAN, HSCAN, ZSCAN):
 * *count keeps its default when absent; *pattern is NULL when absent or
 * "*".  Replies "ERR syntax error" (odd options, unknown option, COUNT < 1)
 * or the integer error, and returns -1. */
int scanParseOptionsOrReply(Client *c, int first, long *count, sds *pattern);

/* The start of SSCAN, HSCAN and ZSCAN (key cursor [MATCH p] [COUNT n]) in
 * Redis's order: the cursor, then the key (of `type`), then the options.  A
 * missing key answers an empty scan (cursor "0", no elements) without
 * looking at the options.  COUNT defaults to 10, MATCH to none (NULL).
 * Returns the key's entry, or NULL when a reply (that empty scan or an
 * error) has been sent. */
kvobj *scanKeyStartOrReply(Client *c, int type, uint64_t *cursor, long *count, sds *pattern);

/* Entries gathered by dbScan or htabScan (callback scanBatchCollect, priv = batch). */
typedef struct ScanBatch {
    void **items;
    size_t count, cap;
} ScanBatch;
void scanBatchCollect(void *priv, void *entry);
void scanBatchFree(ScanBatch *b);

/* The next cursor as the first element of a SCAN reply (a bulk string). */
void scanReplyCursor(Client *c, uint64_t cursor);

#endif
