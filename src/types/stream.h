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

#endif
