/* omap.h -- an ordered map from byte strings to pointers (a skiplist).
 *
 * Keys are ordered as memcmp orders them, a shorter key first when one is
 * a prefix of the other: the order of Redis's radix tree, so that stream
 * consumer groups, consumers and pending entries (16-byte big-endian IDs)
 * list in the order Redis lists them.  Each node is one allocation holding
 * its forward links and the key bytes (copied).  Values are borrowed: the
 * map never frees them except through omapFree's callback.  Search, insert
 * and delete are O(log n); iteration in either direction is O(1) a step.
 * An iterator stays valid across deletions of other nodes only; deleting
 * the node it stands on goes through omapIterDelete. */
#ifndef CAIRN_OMAP_H
#define CAIRN_OMAP_H

#include <stddef.h>
#include <stdint.h>

typedef struct OmapNode OmapNode;
typedef struct Omap Omap;

Omap *omapCreate(void);
/* Frees the map; freeVal (may be NULL) is called on every value. */
void omapFree(Omap *m, void (*freeVal)(void *));
size_t omapSize(const Omap *m);
/* Bytes the map's own nodes use (approximate). */
size_t omapBytes(const Omap *m);
/* The value of key, NULL when absent (values must not be NULL). */
void *omapFind(const Omap *m, const void *key, size_t len);
/* Adds key -> val; returns 0 (and changes nothing) if key is present. */
int omapInsert(Omap *m, const void *key, size_t len, void *val);
/* Replaces the value of a present key; returns 0 if absent. */
int omapReplace(Omap *m, const void *key, size_t len, void *val);
/* Removes key; returns its value, NULL when absent. */
void *omapDelete(Omap *m, const void *key, size_t len);

/* Node access. */
OmapNode *omapFirst(const Omap *m);
OmapNode *omapLast(const Omap *m);
OmapNode *omapNext(const OmapNode *n);
OmapNode *omapPrev(const OmapNode *n);
/* The first node with key >= k (strict: > k); NULL if none. */
OmapNode *omapSeekGE(const Omap *m, const void *key, size_t len, int strict);
/* The last node with key <= k (strict: < k); NULL if none. */
OmapNode *omapSeekLE(const Omap *m, const void *key, size_t len, int strict);
const unsigned char *omapKey(const OmapNode *n, size_t *len);
void *omapValue(const OmapNode *n);
void omapSetValue(OmapNode *n, void *val);

#endif
