/* hash.h -- read access to hash values for other types' commands (SORT's
 * BY/GET key->field lookups).  The encodings stay private to t_hash.c. */
#ifndef CAIRN_HASH_H
#define CAIRN_HASH_H

#include <stddef.h>

#include "db/db.h"
#include "db/object.h"
#include "ds/sds.h"

/* The operations on hash values (free, dup, size), registered at start-up
 * (db/object.h). */
extern const ObjectType hashObjectType;

/* The value of field f as a new sds (caller owns), NULL when absent. */
sds hashValueGetField(kvobj *o, const char *f, size_t flen);

/* The module key API (src/module): sets field f of the hash at key
 * (created when absent; the caller checked the type), 1 when the field is
 * new; deletes field f, 1 when it was there (the key goes with its last
 * field).  Neither notifies, signals nor counts a change. */
int hashModuleSet(Db *db, const sds key, const sds f, const sds v);
int hashModuleDelete(Db *db, const sds key, const sds f);

/* Number of fields. */
unsigned long hashValueLength(const kvobj *o);
/* Calls fn for every field and value of a hash, in the value's own order
 * (listpack order, or hash order).  fn must not change the hash. */
typedef void HashVisit(void *priv, const unsigned char *f, size_t flen, const unsigned char *v, size_t vlen);
void hashValueForEach(const kvobj *o, HashVisit *fn, void *priv);

/* Calls fn for every field that has a TTL (expired or not: what is
 * written must not depend on the clock), with its expire (unix ms):
 * nothing for a hash without field TTLs.  fn must not change the hash. */
typedef void HashTtlVisit(void *priv, const unsigned char *f, size_t flen, long long when);
void hashValueForEachTtl(const kvobj *o, HashTtlVisit *fn, void *priv);
/* Every field with its value and expire (0: none). */
typedef void HashFieldVisit(void *priv, const unsigned char *f, size_t flen, const unsigned char *v, size_t vlen,
                            long long when);
void hashValueForEachWithTtl(const kvobj *o, HashFieldVisit *fn, void *priv);
/* A hash with field TTLs loaded under key in database dbid (RDB): named in
 * the index the active expiry cycle walks. */
void hashIndexKey(int dbid, const char *key, size_t len);
/* Whether a field of the hash has a TTL (expired or not, so the answer
 * does not depend on the clock): RDB and DUMP then write Redis 7.4's
 * hash-with-TTL type, else Redis 7.0's hash types. */
int hashValueHasTtl(const kvobj *o);
/* Whether the hash has the field-TTL layout (kept once a TTL was set). */
int hashValueTtlLayout(const kvobj *o);
/* Whether any hash may have field TTLs (RDB saves then write version 12). */
int hashAnyFieldTtl(void);

/* Building a hash value outside the keyspace (RDB loading, RESTORE) with
 * the encoding Redis 7.0 gives a loaded hash: Begin starts a hashtable when
 * `hint` fields exceed hash-max-listpack-entries, else a listpack; Add
 * appends a field (returns 0, adding nothing, for a duplicate field) and
 * converts to a hashtable when a field or value exceeds
 * hash-max-listpack-value or the count passes the limit.  *enc / *ptr are
 * the value's encoding and pointer; LoadFree frees an unfinished value. */
void hashLoadBegin(size_t hint, int *enc, void **ptr);
/* A hash's listpack as RDB stores it (field, value pairs; the caller
 * validated its entries; a heap block), adopted as the value (the value
 * then owns lp) when a hash built
 * from it would stay a listpack: within hash-max-listpack-entries and
 * -value, no repeated field.  Returns 1 with *enc and *ptr set, else 0 (build
 * it with hashLoadAdd). */
int hashLoadListpack(unsigned char *lp, int *enc, void **ptr);
int hashLoadAdd(int *enc, void **ptr, const void *f, size_t flen, const void *v, size_t vlen);
/* hashLoadAdd for a hash with field TTLs: the value takes the TTL layout
 * (listpackex, or a hashtable with expires) at the first call; when is the
 * field's expire (unix ms, 0: none). */
int hashLoadAddTtl(int *enc, void **ptr, const void *f, size_t flen, const void *v, size_t vlen, long long when);
/* hashLoadAddTtl keeps the listpackex order Redis gives fields it adds
 * one by one (RDB_TYPE_HASH_METADATA); this variant appends, keeping the
 * order of a listpack Redis wrote (RDB_TYPE_HASH_LISTPACK_EX). */
int hashLoadAddTtlKeepOrder(int *enc, void **ptr, const void *f, size_t flen, const void *v, size_t vlen,
                            long long when);
void hashLoadFree(int enc, void *ptr);

/* Registers the hash encoding directives (CONFIG GET/SET/REWRITE, the config
 * file).  Called once from main.c, before the defaults are applied. */
void hashRegisterConfig(void);
/* Installs the hash-field-expiry hooks (the index of hashes with field
 * TTLs kept across RENAME/MOVE/FLUSHDB/SWAPDB, the active cycle on the
 * timer).  Once, at start-up. */
void hashInit(void);
/* EXPIREMEMBER family on a hash key (types/t_member_ttl.c): field f of o
 * (c->argv[1], looked up for writing) expires at when (unix ms; a time
 * already past deletes it).  Replies 1 (set or deleted) or 0 (no such
 * field), with HEXPIRE's effects and events.  Runs HEXPIRE's mechanism. */
void hashExpireMember(Client *c, kvobj *o, const sds f, long long when);
/* TTL / PTTL key field on a hash key: -2 (absent or expired), -1 (no
 * TTL), else the time left in seconds (rounded up) or ms. */
void hashMemberTtlReply(Client *c, kvobj *o, const sds f, int ms);
/* Fields deleted by expiry since start-up (lazily or actively). */
long long hashExpiredFieldCount(void);
/* Whether a hash ever had a field TTL in this process: INFO then shows
 * Redis 8's expired_subkeys and subexpiry (a Redis 7.0 workload keeps
 * Redis 7.0's INFO layout). */
int hashFieldTtlEverUsed(void);
/* Hashes of database dbid that have a field with a TTL (INFO keyspace's
 * subexpiry); walks the index of such hashes. */
size_t hashDbSubexpiry(int dbid);

#endif
