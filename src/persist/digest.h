/* digest.h -- Redis's dataset digest (DEBUG DIGEST, DEBUG DIGEST-VALUE),
 * the same bytes redis-server 7.0.15 computes for the same contents
 * (definition in digest.c). */
#ifndef CAIRN_DIGEST_H
#define CAIRN_DIGEST_H

#include "db/object.h"

/* Folds o's value (type, elements, expire flag) into d, which the caller
 * zeroes (DIGEST-VALUE) or has mixed with the key name (DIGEST). */
void digestValue(const kvobj *o, unsigned char d[20]);
/* Redis's two digest steps: xor SHA-1(p) into d; and that followed by
 * d = SHA-1(d) (an ordered sequence).  Module data types' digests use
 * them too. */
void xorDigest(unsigned char d[20], const void *p, size_t len);
void mixDigest(unsigned char d[20], const void *p, size_t len);
/* The digest of every database: 20 zero bytes when all are empty. */
void digestDataset(unsigned char out[20]);
/* The database of the value being digested (a module type's digest
 * callback asks for it): digestDataset sets it per database, DEBUG
 * DIGEST-VALUE to the client's. */
extern int digestDbId;

/* Each type's elements (ObjectType.digest): what digestValue folds in
 * between the type number and the expire flag. */
void digestString(const kvobj *o, unsigned char d[20]);
void digestList(const kvobj *o, unsigned char d[20]);
void digestSet(const kvobj *o, unsigned char d[20]);
void digestZset(const kvobj *o, unsigned char d[20]);
void digestHash(const kvobj *o, unsigned char d[20]);
void digestStream(const kvobj *o, unsigned char d[20]);

#endif
