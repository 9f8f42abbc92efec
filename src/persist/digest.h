/* digest.h -- Redis's dataset digest (DEBUG DIGEST, DEBUG DIGEST-VALUE),
 * the same bytes redis-server 7.0.15 computes for the same contents
 * (definition in digest.c). */
#ifndef CAIRN_DIGEST_H
#define CAIRN_DIGEST_H

#include "db/object.h"

/* Folds o's value (type, elements, expire flag) into d, which the caller
 * zeroes (DIGEST-VALUE) or has mixed with the key name (DIGEST). */
void digestValue(const kvobj *o, unsigned char d[20]);
/* The digest of every database: 20 zero bytes when all are empty. */
void digestDataset(unsigned char out[20]);

#endif
