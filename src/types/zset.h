/* zset.h - small sorted-set API for other type code (SORT, geo). */
#ifndef CAIRN_ZSET_H
#define CAIRN_ZSET_H

#include <stddef.h>
#include "db/object.h"

/* The operations on sorted-set values (free, dup, size), registered at
 * start-up (db/object.h). */
extern const ObjectType zsetObjectType;

/* Number of members of a sorted-set value (OBJ_ZSET). */
unsigned long zsetLength(const kvobj *o);
/* Converts a listpack-encoded sorted set to a skiplist in place (SORT does
 * this to every sorted set it reads, as Redis 7.0 does, so OBJECT ENCODING
 * after a SORT is Redis's). */
void zsetEnsureSkiplist(kvobj *o);

/* Visitor: return 0 to stop the iteration. */
typedef int ZsetVisit(void *priv, const unsigned char *member, size_t len, double score);

/* Visit members with rank start..end (inclusive, already clamped by the
 * caller to 0..len-1, start <= end), ascending by (score, member) or, with
 * reverse, descending (rank 0 is then the highest). */
void zsetForEachByRank(const kvobj *o, long start, long end, int reverse, ZsetVisit *fn, void *priv);

/* Score of member m: 1 if present (sets *score), 0 if not. */
/* Removes member m from a sorted-set value in place (the entry does not
 * move); 1 if it was there.  The caller deletes the key when it empties. */
int zsetValueRemove(kvobj *o, const unsigned char *m, size_t len);
/* For the module key API (src/module): ZADD's semantics for one member of
 * the sorted set at key in db (created when absent, removed again when it
 * stayed empty); in: ZADD_IN_* flags, *out: ZADD_OUT_*; *newscore (may be
 * NULL) the member's score after.  0 when the score is or would become
 * NaN.  No event, signal or dirty. */
#define ZADD_IN_INCR (1 << 0)
#define ZADD_IN_NX (1 << 1)
#define ZADD_IN_XX (1 << 2)
#define ZADD_IN_GT (1 << 3)
#define ZADD_IN_LT (1 << 4)
#define ZADD_OUT_NOP (1 << 0)
#define ZADD_OUT_NAN (1 << 1)
#define ZADD_OUT_ADDED (1 << 2)
#define ZADD_OUT_UPDATED (1 << 3)
struct Db;
int zsetModuleAdd(struct Db *db, const sds key, double score, const sds m, int in, int *out, double *newscore);
int zsetGetScore(const kvobj *o, const unsigned char *m, size_t len, double *score);

/* For each range r in turn (ranges[2r] <= score < ranges[2r+1]), visit its
 * members in ascending (score, member) order, until fn returns 0. */
void zsetForEachInScoreRanges(const kvobj *o, const double *ranges, int nranges, ZsetVisit *fn, void *priv);

/* ZADD with the client's current argv (GEOADD rewrites its arguments into
 * a ZADD argv and runs it: the same options, replies and events). */
struct Client;
void zsetZaddArgv(struct Client *c);

/* A sorted set being built for a store command (GEOSEARCHSTORE, GEORADIUS
 * STORE).  zsetBuildStore stores it at dst as the other store commands do
 * (listpack when small enough, dst deleted when empty; replies the count,
 * notifies `event`) and frees the builder. */
typedef struct ZsetBuild ZsetBuild;
ZsetBuild *zsetBuildNew(void);
void zsetBuildAdd(ZsetBuild *b, const unsigned char *m, size_t len, double score);
void zsetBuildStore(struct Client *c, const sds dst, ZsetBuild *b, const char *event);

/* Building a sorted-set value outside the keyspace (RDB loading,
 * RESTORE) with the encoding Redis 7.0 gives a loaded one: Begin starts a
 * skiplist (hint: expected members); Add inserts a member (0, adding
 * nothing, when it is already there); End converts to a listpack when the
 * set fits zset-max-listpack-entries and -value, as Redis does after
 * loading.  LoadFree frees an unfinished value. */
void zsetLoadBegin(size_t hint, int *enc, void **ptr);
/* A sorted set's listpack as RDB stores it (member, score pairs; the
 * caller validated its entries; a heap block), adopted as the value (the
 * value then owns lp) when it is
 * what the listpack encoding holds: within zset-max-listpack-entries and
 * -value, every score a number, members unique and in (score, member)
 * order.  Returns 1 with *enc and *ptr set, else 0 (build it with
 * zsetLoadAdd; zsetLoadEnd is then not called for an adopted one). */
int zsetLoadListpack(unsigned char *lp, int *enc, void **ptr);
int zsetLoadAdd(int *enc, void **ptr, const unsigned char *m, size_t len, double score);
void zsetLoadEnd(int *enc, void **ptr);
void zsetLoadFree(int enc, void *ptr);

/* Registers the sorted set encoding directives (CONFIG GET/SET/REWRITE, the config
 * file).  Called once from main.c, before the defaults are applied. */
void zsetRegisterConfig(void);

#endif
