/* set.h -- read access to set values for other types' commands (ZUNION and
 * friends take sets as inputs, SORT sorts them).  The encodings (intset,
 * hashtable of member entries) stay private to t_set.c. */
#ifndef CAIRN_SET_H
#define CAIRN_SET_H

#include <stddef.h>

#include "db/object.h"

/* Number of members of a set value. */
unsigned long setValueLength(const kvobj *o);
/* 1 if m is a member. */
int setValueContains(const kvobj *o, const char *m, size_t len);
/* Calls fn for every member; the bytes are valid during the call only. */
typedef void SetVisit(void *priv, const char *m, size_t len);
void setValueForEach(const kvobj *o, SetVisit *fn, void *priv);

#endif
