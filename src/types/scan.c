/* scan.c -- the pieces the SCAN family shares (see scan.h). */
#include "types/scan.h"

#include <errno.h>
#include <stdlib.h>

#include "ds/alloc.h"
#include "ds/util.h"

int scanParseCursorOrReply(Client *c, const sds s, uint64_t *cursor) {
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if ((s[0] == ' ' || (s[0] >= '\t' && s[0] <= '\r')) || *end != '\0' || errno == ERANGE) {
        replyError(c, "ERR invalid cursor");
        return -1;
    }
    *cursor = v;
    return 0;
}

kvobj *scanKeyStartOrReply(Client *c, int type, uint64_t *cursor, long *count, sds *pattern) {
    *count = 10;
    *pattern = NULL;
    if (scanParseCursorOrReply(c, c->argv[2], cursor) == -1) return NULL;
    int wrongType;
    kvobj *o = lookupReadOrReply(c, c->argv[1], type, &wrongType);
    if (!o) {
        if (wrongType) return NULL;
        replyArrayLen(c, 2);
        replyBulk(c, "0", 1);
        replyArrayLen(c, 0);
        return NULL;
    }
    if (scanParseOptionsOrReply(c, 3, count, pattern) == -1) return NULL;
    return o;
}

int scanParseOptionsOrReply(Client *c, int first, long *count, sds *pattern) {
    *pattern = NULL;
    for (int j = first; j < c->argc; j += 2) {
        if (j + 1 >= c->argc) {
            replyErrorSyntax(c);
            return -1;
        }
        if (argIs(c->argv[j], "count")) {
            if (getLongOrReply(c, c->argv[j + 1], count, NULL) == -1) return -1;
            if (*count < 1) {
                replyErrorSyntax(c);
                return -1;
            }
        } else if (argIs(c->argv[j], "match")) {
            *pattern = c->argv[j + 1];
        } else {
            replyErrorSyntax(c);
            return -1;
        }
    }
    if (*pattern && sdsLen(*pattern) == 1 && (*pattern)[0] == '*') *pattern = NULL;
    return 0;
}

void scanBatchCollect(void *priv, void *entry) {
    ScanBatch *b = priv;
    if (b->count == b->cap) {
        b->cap = b->cap ? b->cap * 2 : 16;
        b->items = xrealloc(b->items, sizeof(void *) * b->cap);
    }
    b->items[b->count++] = entry;
}

void scanBatchFree(ScanBatch *b) {
    xfree(b->items);
    b->items = NULL;
    b->count = b->cap = 0;
}

void scanReplyCursor(Client *c, uint64_t cursor) {
    char cur[UTIL_LONG_STR_SIZE];
    int len = unsignedLongLongToString(cur, sizeof(cur), cursor);
    replyBulk(c, cur, (size_t)len);
}
