/* keys.h -- hooks of the generic key commands (t_keys.c) for layers above
 * types. */
#ifndef CAIRN_TYPES_KEYS_H
#define CAIRN_TYPES_KEYS_H

#include <stddef.h>

#include "core/client.h"
#include "db/db.h"

/* COPY of a module data type's value (src/module installs it): the new
 * entry named newkey[0..len) with o's expire, for database dst, copied
 * from key o of database src; NULL after replying the error to c (the
 * type cannot copy, or its copy failed), the destination then untouched. */
extern kvobj *(*keysModuleCopy)(Client *c, const kvobj *o, Db *src, Db *dst, const char *newkey, size_t len);

#endif
