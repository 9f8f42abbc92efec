/* stream.h -- stream values for the layers above types (RDB, DUMP/RESTORE,
 * DEBUG DIGEST): the value is a ds/stream.h Stream, encoding "stream". */
#ifndef CAIRN_TYPES_STREAM_H
#define CAIRN_TYPES_STREAM_H

#include "db/object.h"
#include "ds/stream.h"

/* The operations on stream values (free, dup, size), registered at
 * start-up (db/object.h). */
extern const ObjectType streamObjectType;

#endif
