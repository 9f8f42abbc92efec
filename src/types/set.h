/* set.h -- read access to set values for other types' commands (ZUNION and
 * friends take sets as inputs, SORT sorts them).  The encodings (intset,
 * hashtable of member entries) stay private to t_set.c. */
#ifndef CAIRN_SET_H
#define CAIRN_SET_H

#include <stddef.h>

#include "db/object.h"

/* The operations on set values (free, dup, size), registered at start-up
 * (db/object.h). */
extern const ObjectType setObjectType;

/* Number of members of a set value. */
unsigned long setValueLength(const kvobj *o);
/* 1 if m is a member. */
int setValueContains(const kvobj *o, const char *m, size_t len);
/* Removes member m from a set value in place (the entry does not move);
 * 1 if it was there.  The caller deletes the key when it empties. */
int setValueRemove(kvobj *o, const char *m, size_t len);
/* Calls fn for every member; the bytes are valid during the call only. */
typedef void SetVisit(void *priv, const char *m, size_t len);
void setValueForEach(const kvobj *o, SetVisit *fn, void *priv);

/* Building a set value outside the keyspace (RDB loading, RESTORE) with
 * the encoding Redis 7.0 gives a loaded set: Begin starts a hashtable when
 * `hint` members exceed set-max-intset-entries, else an intset; Add adds a
 * member (0 for a duplicate) converting as SADD does.  LoadFree frees an
 * unfinished value. */
void setLoadBegin(size_t hint, int *enc, void **ptr);
int setLoadAdd(int *enc, void **ptr, const char *m, size_t len);
void setLoadFree(int enc, void *ptr);

/* Registers the set encoding directives (CONFIG GET/SET/REWRITE, the config
 * file).  Called once from main.c, before the defaults are applied. */
void setRegisterConfig(void);

#endif
