/* list.h -- what t_list.c offers outside its commands. */
#ifndef CAIRN_LIST_H
#define CAIRN_LIST_H

#include "db/object.h"
#include "ds/quicklist.h"

/* The operations on list values (free, dup, size), registered at start-up
 * (db/object.h). */
extern const ObjectType listObjectType;

/* A list value is a bare listpack (OBJ_ENC_LISTPACK) while it fits one
 * node of list-max-listpack-size, a quicklist past that, back to a
 * listpack once it shrinks to one node of half the limit (Redis 7.2's
 * rule).  OBJECT ENCODING, DEBUG and RDB/DUMP see a quicklist either way,
 * as in Redis 7.0.  Every operation goes through a quicklist view:
 *
 *     ListRef r;
 *     Quicklist *ql = listOpen(&r, o);
 *     ... quicklist calls on ql ...
 *     listClose(&r, shrunk);   // before anything else touches o
 *
 * listClose stores what the list became in o (encoding and pointer; the
 * entry itself does not move); shrunk = elements may have been removed
 * (then a small quicklist goes back to a listpack).  One ListRef per list
 * at a time; close one list before opening the same key again. */
typedef struct ListRef {
    kvobj *o;
    Quicklist *ql;
    int lent;
    QuicklistLoan loan;
} ListRef;
Quicklist *listOpen(ListRef *r, kvobj *o);
void listClose(ListRef *r, int shrunk);
/* Elements of a list value without opening it. */
unsigned long listLength(const kvobj *o);
/* The encoding Redis 7.0 reports for a list: always quicklist. */
#define LIST_REPORTED_ENCODING OBJ_ENC_QUICKLIST

/* Registers the list encoding directives (CONFIG GET/SET/REWRITE, the config
 * file).  Called once from main.c, before the defaults are applied. */
void listRegisterConfig(void);

#endif
