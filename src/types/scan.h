/* scan.h -- what SCAN, SSCAN, HSCAN and ZSCAN share: Redis's cursor
 * parsing and collecting entries from htabScan.  Option parsing stays with
 * each command (they check arguments, key and options in different orders,
 * as Redis does). */
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

/* Entries gathered by htabScan (callback scanBatchCollect, priv = batch). */
typedef struct ScanBatch {
    void **items;
    size_t count, cap;
} ScanBatch;
void scanBatchCollect(void *priv, void *entry);
void scanBatchFree(ScanBatch *b);

/* The next cursor as the first element of a SCAN reply (a bulk string). */
void scanReplyCursor(Client *c, uint64_t cursor);

#endif
