/* pubsub.h -- the publish side of pub/sub, for keyspace notifications,
 * client tracking's __redis__:invalidate channel and INFO / CLIENT LIST. */
#ifndef CAIRN_PUBSUB_H
#define CAIRN_PUBSUB_H

#include <stddef.h>

#include "core/client.h"

/* Sends message to the subscribers of channel and of every pattern that
 * matches it, as PUBLISH does.  Returns the number of receivers.  Borrows
 * its arguments. */
/* Sets up the channel tables and the client hooks.  Called once at
 * start-up. */
void pubsubInit(void);
/* A RESP2 client in subscribed mode may run only (P|S)SUBSCRIBE,
 * (P|S)UNSUBSCRIBE, PING, QUIT and RESET: anything else is refused (-1
 * after replying).  0 lets the command go on. */
int pubsubRefuseInContextOrReply(Client *c, Command *cmd);

long pubsubPublish(const char *channel, size_t clen, const char *msg, size_t mlen);
/* The same for a shard channel (SPUBLISH's local delivery). */
long pubsubPublishShard(const char *channel, size_t clen, const char *msg, size_t mlen);
/* Cluster mode, a slot leaving myself's shard: every client subscribed
 * to a shard channel of that slot is unsubscribed from it, with the
 * sunsubscribe confirmation, as Redis 7.0 does. */
void pubsubShardDropSlot(unsigned slot);

/* INFO stats: channels with subscribers, distinct patterns, shard channels. */
size_t pubsubChannelCount(void);
size_t pubsubPatternCount(void);
size_t pubsubShardChannelCount(void);

/* CLIENT LIST sub= psub= ssub=. */
void pubsubClientCounts(const Client *c, long *sub, long *psub, long *ssub);
/* Bytes c's subscriptions hold (its part of each: entry, slot in the
 * target's subscriber list, its table): part of its memory (CLIENT LIST
 * tot-mem, client eviction), as Redis counts them. */
size_t pubsubClientMemory(const Client *c);

/* Whether test answers 1 for any of c's subscriptions (channels, patterns
 * with isPattern 1, shard channels), in subscription order per kind.  ACL
 * changes use it to find the clients that lost a channel. */
typedef int PubsubSubscriptionTest(const char *name, size_t len, int isPattern, void *arg);
int pubsubClientAnySubscription(const Client *c, PubsubSubscriptionTest *test, void *arg);

#endif
