/* member_ttl.h -- member TTLs of sets and sorted sets (KeyDB's EXPIREMEMBER
 * family), kept beside the keyspace in types/t_member_ttl.c.
 *
 * What the rest of the server calls:
 *  - the set and sorted-set commands, when a member is added anew
 *    (memberTtlForget: a member removed and added again has no TTL);
 *  - TTL / PTTL with a member argument (memberTtlReply);
 *  - the server's timer, next to the key expiry cycle
 *    (memberTtlActiveCycle);
 *  - persistence: the RDB auxiliary field and the AOF rewrite
 *    (memberTtlRdbBlob / memberTtlRdbLoad, memberTtlForEach).
 * The keyspace reaches it through dbHooks (db.h, installed by
 * memberTtlInit) only while dbMemberTtlKeys is nonzero. */
#ifndef CAIRN_MEMBER_TTL_H
#define CAIRN_MEMBER_TTL_H

#include <stddef.h>

#include "db/db.h"
#include "ds/sds.h"

struct Client;

/* The name of the RDB auxiliary field that carries the member TTLs. */
#define MEMBER_TTL_AUX "cairn-member-ttl"

/* Installs the keyspace hooks and lets TTL/PTTL take a member argument.
 * Called once at start-up, after the command table is built. */
void memberTtlInit(void);

/* Member m of key (in db) was added anew: any TTL it had is dropped.
 * Callers test dbMemberTtlKeys first. */
void memberTtlForget(Db *db, const sds key, const sds m);

/* RENAME and MOVE carry a key's member TTLs, COPY copies them:
 * memberTtlDetach takes key's TTLs out of db (NULL when it has none)
 * before the key is unlinked, memberTtlAttach gives them to dkey in ddb
 * once it is added (dkey has none then); memberTtlCopy copies key's to
 * dkey.  Callers test dbMemberTtlKeys first. */
struct MtKey *memberTtlDetach(Db *db, const sds key);
void memberTtlAttach(Db *ddb, const sds dkey, struct MtKey *t);
void memberTtlCopy(Db *db, const sds key, Db *ddb, const sds dkey);

/* TTL key member (ms=0) / PTTL key member (ms=1): replies -2 when the key
 * or the member is missing (or the member is past its TTL), -1 when the
 * member has no TTL, else the time left. */
void memberTtlReply(struct Client *c, int ms);

/* Reclaims members past their TTL on a primary: at most about budgetUs
 * microseconds, and a bounded number of members, per call. */
void memberTtlActiveCycle(long long budgetUs);

/* The member TTLs of databases dbs[0..count) as one binary blob (NULL when
 * there is none), for the RDB auxiliary field MEMBER_TTL_AUX; the caller
 * frees it.  memberTtlRdbLoad restores a blob into dbs (the keys are
 * already loaded); malformed input is ignored past the last good record.
 * Returns the number of member TTLs restored. */
sds memberTtlRdbBlob(Db *dbs, int count);
long long memberTtlRdbLoad(Db *dbs, int count, const char *blob, size_t len);

/* Calls fn for each member TTL of key o in db (the AOF rewrite emits
 * PEXPIREMEMBERAT for each). */
typedef void MemberTtlVisit(void *priv, const kvobj *o, const char *m, size_t mlen, long long when);
void memberTtlForEach(Db *db, const kvobj *o, MemberTtlVisit *fn, void *priv);

#endif
