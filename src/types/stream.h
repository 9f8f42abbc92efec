/* stream.h -- stream values for the layers above types (RDB, DUMP/RESTORE,
 * DEBUG DIGEST): the value is a ds/stream.h Stream, encoding "stream". */
#ifndef CAIRN_TYPES_STREAM_H
#define CAIRN_TYPES_STREAM_H

#include "db/object.h"
#include "ds/stream.h"

/* The operations on stream values (free, dup, size), registered at
 * start-up (db/object.h). */
extern const ObjectType streamObjectType;

/* Registers the stream node directives (CONFIG GET/SET/REWRITE, the config
 * file).  Called once from main.c, before the defaults are applied. */
void streamRegisterConfig(void);

/* stream-node-max-bytes and stream-node-max-entries (for streamAppend and
 * Redis's approximate-trim limit, outside XADD: the module API). */
void streamNodeLimits(size_t *maxBytes, long long *maxEntries);

/* An ID as XRANGE reads it: "-" (0-0), "+" (the largest), "ms" (seq 0) or
 * "ms-seq", each part Redis's string2ull; at most 127 bytes.  0, or -1
 * when arg is not one (nothing replied; the module API's StringToStreamID). */
int streamParseRangeID(const sds arg, StreamID *id);

#endif
