/* hash.h -- read access to hash values for other types' commands (SORT's
 * BY/GET key->field lookups).  The encodings stay private to t_hash.c. */
#ifndef CAIRN_HASH_H
#define CAIRN_HASH_H

#include <stddef.h>

#include "db/object.h"
#include "ds/sds.h"

/* The value of field f as a new sds (caller owns), NULL when absent. */
sds hashValueGetField(kvobj *o, const char *f, size_t flen);

#endif
