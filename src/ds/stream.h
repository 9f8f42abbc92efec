/* stream.h -- the stream value: entries in listpack nodes, consumer groups,
 * pending-entry lists.  No server knowledge (ds layer).
 *
 * Entries live in listpacks in Redis 7.0's node format, so that a node is
 * written to an RDB file as it is:
 *   master entry: count, deleted, num-fields, field_1..field_N, 0
 *   each entry:   flags, ms-diff, seq-diff,
 *                 values_1..values_N            (flags & SAMEFIELDS), or
 *                 num-fields, field_1, value_1, ... (otherwise),
 *                 lp-count
 * The IDs are differences from the node's master ID (the ID of the first
 * entry the node got, its key in the index).  flags: 1 deleted, 2 same
 * fields as the master.  lp-count is the number of elements of the entry
 * before it (so an entry can be walked backwards).  A node is removed when
 * XDEL removes its last live entry; deleted entries stay as tombstones
 * otherwise, and an exact trim that deletes a node's last entries one by
 * one leaves the emptied node in place, as Redis does.
 *
 * Nodes are indexed by master ID in an ordered map (omap.h) keyed by the
 * 16-byte big-endian ID, where Redis uses a radix tree: IDs only grow, so
 * appends hit the tail, and a seek is O(log nodes).  Redis reports its
 * tree's node count (XINFO's radix-tree-nodes); streamRaxNodes computes the
 * count a radix tree holding these keys has.
 *
 * A node that is no longer the tail (closed: the next entry started a new
 * node) is kept LZF-compressed when that saves an eighth of it and it is
 * at most STREAM_Z_MAX_RAW bytes: the node's value in the map is then a
 * tagged pointer (low bit set) to a StreamZNode.  Readers get the
 * listpack's bytes back through a one-node cache per stream
 * (streamNodeBytes) and iterators copy them into their own buffer, so
 * nothing points into the cache for long; a change to a compressed node
 * (XDEL, an exact trim, an append after the tail was deleted) first makes
 * it a plain listpack again.  RDB and DUMP write the listpack bytes, as
 * Redis does.
 *
 * Consumer groups, consumers and pending entries (NACKs) follow Redis's
 * model: each group has a PEL (ID -> StreamNACK) and consumers (name ->
 * StreamConsumer), each consumer a PEL sharing the group's NACKs. */
#ifndef CAIRN_STREAM_H
#define CAIRN_STREAM_H

#include <stddef.h>
#include <stdint.h>

#include "ds/listpack.h"
#include "ds/omap.h"
#include "ds/sds.h"

#define STREAM_ITEM_DELETED 1
#define STREAM_ITEM_SAMEFIELDS 2
#define STREAM_ID_BYTES 16
#define STREAM_LISTPACK_MAX_SIZE (1u << 30)
/* Nodes up to this size are kept compressed once closed. */
#define STREAM_Z_MAX_RAW 8192
/* entries_read unknown (Redis's SCG_INVALID_ENTRIES_READ). */
#define STREAM_ENTRIES_READ_INVALID (-1LL)

typedef struct StreamID {
    uint64_t ms;
    uint64_t seq;
} StreamID;

typedef struct StreamConsumer StreamConsumer;

typedef struct StreamNACK {
    long long deliveryTime;   /* unix ms of the last delivery */
    uint64_t deliveryCount;   /* deliveries so far */
    StreamConsumer *consumer; /* the owner */
} StreamNACK;

struct StreamConsumer {
    long long seenTime; /* unix ms of the last read/claim */
    sds name;
    Omap *pel;          /* ID -> StreamNACK, shared with the group's PEL */
};

typedef struct StreamCG {
    StreamID lastId;
    long long entriesRead; /* logical read counter, or -1 */
    Omap *pel;             /* ID -> StreamNACK (owned here) */
    Omap *consumers;       /* name -> StreamConsumer (owned) */
} StreamCG;

typedef struct Stream {
    Omap *nodes;            /* master ID -> listpack */
    uint64_t length;        /* live entries */
    StreamID lastId;        /* greatest ID ever added (or set) */
    StreamID firstId;       /* first live entry's ID */
    StreamID maxDeletedId;  /* greatest ID removed by XDEL */
    uint64_t entriesAdded;  /* entries ever added */
    Omap *groups;           /* name -> StreamCG; NULL when none ever */
    OmapNode *zNode;        /* the compressed node whose bytes zBuf holds */
    unsigned char *zBuf;    /* STREAM_Z_MAX_RAW bytes, allocated on first use */
} Stream;

void streamEncodeID(unsigned char *buf, const StreamID *id);
void streamDecodeID(const unsigned char *buf, StreamID *id);
int streamCompareID(const StreamID *a, const StreamID *b);
/* id + 1 / id - 1; return -1 (id unchanged) on overflow. */
int streamIncrID(StreamID *id);
int streamDecrID(StreamID *id);

Stream *streamCreate(void);
void streamFree(Stream *s);
/* Bytes the stream uses (approximate). */
size_t streamBytes(const Stream *s);

/* The listpack bytes of node n (decompressed into the stream's cache when
 * the node is compressed); valid until the next call on s or a change to
 * s.  Sets *len to their size when len is not NULL. */
const unsigned char *streamNodeBytes(Stream *s, OmapNode *n, size_t *len);
/* The same without the cache, for a reader that must not change s (a
 * snapshot's save thread): a compressed node is expanded into scratch
 * (STREAM_Z_MAX_RAW bytes).  The bytes stay valid while the node does. */
const unsigned char *streamNodeRead(const OmapNode *n, unsigned char *scratch, size_t *len);
/* Adds a node (a listpack of `len` bytes at lp, copied) under its 16-byte
 * master-ID key, compressed unless it is to stay the tail (last).  0 if
 * the key is present. */
int streamInsertNode(Stream *s, const unsigned char *key, const unsigned char *lp, size_t len, int last);
/* Compresses every node but the tail (after loading). */
void streamCompressClosed(Stream *s);

/* Appends an entry with fields fv[0], fv[1] (field, value), ... (npairs
 * pairs) under id, which must be greater than s->lastId.  A new node is
 * started when the last one has maxEntries entries (live or deleted; 0 =
 * no limit) or would reach maxBytes (0 = 1 GB).  Updates length, lastId,
 * firstId, entriesAdded. */
void streamAppend(Stream *s, const StreamID *id, sds *fv, long npairs, size_t maxBytes, long long maxEntries);

/* Iteration over [start, end] forward or backward. */
typedef struct StreamIter {
    Stream *s;
    StreamID start, end;
    int rev;
    OmapNode *node;         /* current node, NULL when done */
    unsigned char *lp;      /* its listpack, NULL before it is entered */
    StreamID master;
    long long masterFields;
    unsigned char *masterFieldsPos; /* first master field */
    unsigned char *p;       /* forward: next entry's flags; backward: lp-count of the next entry */
    /* current entry */
    long entryOff;          /* offset of its flags in lp */
    int flags;
    long long numFields;
    unsigned char *fpos, *vpos; /* next field / value */
    unsigned char fbuf[LP_INTBUF_SIZE], vbuf[LP_INTBUF_SIZE];
    unsigned char zcopy[STREAM_Z_MAX_RAW]; /* a compressed node's bytes */
} StreamIter;

void streamIterStart(StreamIter *it, Stream *s, const StreamID *start, const StreamID *end, int rev);
/* The next live entry: 1 with its ID and field count, 0 at the end. */
int streamIterNext(StreamIter *it, StreamID *id, long long *numFields);
/* The next field/value pair of the current entry (numFields calls). */
void streamIterField(StreamIter *it, const unsigned char **f, size_t *flen, const unsigned char **v, size_t *vlen);
/* Marks the current entry deleted (the node goes when it empties); the
 * iteration goes on after it.  Updates s->length. */
void streamIterDelete(StreamIter *it);

/* Removes the entry id (XDEL): 1 if it was there. */
int streamDeleteID(Stream *s, const StreamID *id);

/* Trims by MAXLEN (minId NULL) or MINID; approx trims whole nodes only;
 * limit (0 = none) bounds the entries removed.  Returns entries removed.
 * Updates firstId. */
long long streamTrim(Stream *s, long long maxLen, const StreamID *minId, int approx, long long limit);

/* The first (or last) live entry's ID; 0 when the stream is empty. */
int streamEdgeID(Stream *s, int first, StreamID *id);
/* The first entry's ID counting deleted ones (tombstones): 0 when there
 * are no nodes. */
int streamFirstRawID(Stream *s, StreamID *id);
/* Sets firstId after a removal: the first live ID, 0-0 when none. */
void streamUpdateFirstID(Stream *s);

/* Checks an untrusted node listpack lp[0..size) with master ID `master`
 * (loaders): structure, counters, lp-counts, and entry IDs increasing from
 * the master and greater than `after` (NULL: no bound).  Sets the last
 * entry's ID and the live count.  1 valid, 0 corrupt. */
int streamValidateNode(unsigned char *lp, size_t size, const StreamID *master, const StreamID *after,
                       StreamID *last, uint64_t *live);

/* The number of nodes of a radix tree holding the node keys (as XINFO's
 * radix-tree-nodes).  O(nodes log nodes). */
unsigned long long streamRaxNodes(const Stream *s);

/* Logical read counter of id (Redis's estimate), or -1 when unknown. */
long long streamEstimateDistance(const Stream *s, const StreamID *id);
/* 1 if a deleted entry may lie in [start, end] (NULL = open). */
int streamRangeHasTombstones(const Stream *s, const StreamID *start, const StreamID *end);

/* Consumer groups. */
StreamCG *streamLookupCG(const Stream *s, const char *name, size_t len);
/* NULL if the group exists. */
StreamCG *streamCreateCG(Stream *s, const char *name, size_t len, const StreamID *id, long long entriesRead);
/* Destroys the group: 1 if it existed. */
int streamDestroyCG(Stream *s, const char *name, size_t len);
StreamConsumer *streamLookupConsumer(const StreamCG *cg, const char *name, size_t len);
/* NULL if it exists. */
StreamConsumer *streamCreateConsumer(StreamCG *cg, const char *name, size_t len, long long now);
/* Deletes a consumer and its pending entries; returns how many it had. */
long long streamDeleteConsumer(StreamCG *cg, StreamConsumer *consumer);
StreamNACK *streamCreateNACK(StreamConsumer *consumer, long long now);
/* Removes a pending entry (key: its 16-byte ID) from the group's and its
 * consumer's PEL and frees it. */
void streamPelRemove(StreamCG *cg, const unsigned char *key, StreamNACK *nack);
/* XREADGROUP's delivery of entry id to consumer: when id is past the
 * group's last-delivered ID, that ID and the entries-read counter move to
 * it (*advanced = 1); unless noack, the entry becomes pending for consumer
 * (a new NACK, or the group's NACK moved to it with its count reset to 1)
 * delivered at `now`.  Returns the NACK, NULL with noack. */
StreamNACK *streamGroupDeliver(Stream *s, StreamCG *cg, StreamConsumer *consumer, const StreamID *id, int noack,
                               long long now, int *advanced);
/* XACK of one ID: 1 if it was pending (it no longer is). */
int streamGroupAck(StreamCG *cg, const StreamID *id);
void streamFreeCG(void *cg);

#endif
