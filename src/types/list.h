/* list.h -- what t_list.c offers outside its commands. */
#ifndef CAIRN_LIST_H
#define CAIRN_LIST_H

#include "db/object.h"

/* The operations on list values (free, dup, size), registered at start-up
 * (db/object.h). */
extern const ObjectType listObjectType;

#endif
