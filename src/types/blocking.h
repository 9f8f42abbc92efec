/* blocking.h -- clients blocked on keys (BLPOP, BLMOVE, BLMPOP,
 * BZPOPMIN/BZMPOP, XREAD/XREADGROUP), independent of the data type.
 *
 * A blocking command that finds nothing to serve calls blockForKeys with its
 * keys, a deadline and a type-specific serve callback.  The client gets
 * CLIENT_BLOCKED and keeps its argv (core stops reading its input).  Each
 * database indexes its waited-on keys in db->blockingKeys: key -> FIFO of
 * the clients blocked on it.
 *
 * Anything that may make a key servable calls signalKeyAsReady (pushes,
 * ZADD, XADD, ...; additionally every write command's keys are signalled
 * after it runs, which covers RENAME, COPY, RESTORE, SORT STORE...).  Ready
 * keys are served after the command completes at top level -- never inside
 * EXEC or a script, so a transaction wakes clients once, after it -- and
 * before the loop sleeps.  Serving a key offers it to its clients in the
 * order they blocked; the callback either serves (replies, changes the
 * data) or declines (the key is missing or of another type, the client stays
 * blocked).  A served client is unblocked: its argv is released and, before
 * the loop sleeps, the commands it pipelined meanwhile run.  When many are
 * served before the loop sleeps (a burst of due members), their replies
 * start leaving while the rest are served: the pending writes are flushed
 * (the AOF first, as before any reply) after 1, 2, 4, ... up to 64 served
 * clients (with appendfsync always the slices keep doubling: fewer
 * fsyncs).
 *
 * On timeout (checked each timer tick and before sleeping) or CLIENT UNBLOCK
 * TIMEOUT the client gets a null array; CLIENT UNBLOCK ERROR replies
 * "-UNBLOCKED ...".  A client freed or RESET while blocked leaves silently.
 * SWAPDB, FLUSHDB and FLUSHALL signal every waited-on key of the databases
 * involved, and a key deleted outside a command (expiry, eviction) is
 * signalled too, so a waiter whose key went hears of it (XREADGROUP's get
 * an error).  A key is served only if it is alive at the time of serving
 * (an expired one is deleted then, its DEL propagated).  While a client is
 * served it is server.net.current (tracking defers its own invalidations
 * until after its reply).  The EXPIRE family, XSETID and XGROUP SETID do
 * not signal their key (Redis does not).  A key can also be signalled at a
 * time of the caller's choosing (signalKeyAsReadyAt): BZPOPDUE's keys wake
 * their clients when their earliest member falls due, by a timer. */
#ifndef CAIRN_BLOCKING_H
#define CAIRN_BLOCKING_H

#include <stddef.h>

#include "core/client.h"
#include "db/db.h"
#include "ds/sds.h"

/* Installs the after-call, before-sleep, timer, swap and client hooks.
 * Called once at start-up. */
void blockingInit(void);

/* Try to serve blocked client c from key (in db).  Returns 1 when c got its
 * reply (a value, or an error it must see) and is to be unblocked, 0 when
 * the key cannot serve it now (absent, wrong type) and it stays blocked.
 * The callback does the data change, notifications and dirty count, and
 * states its effect with effectsAlso (the unit of the served client).
 * c->argv is the blocking command as sent. */
typedef int BlockServeFn(Client *c, Db *db, const char *key, size_t len);

/* Block c on keys[0..numKeys) of c->db until deadlineMs (unix ms; 0 =
 * forever).  Duplicate keys count once.  `priv` is type data the callback
 * can read with blockedPriv(); freed with privFree (may be NULL) when the
 * client is unblocked.  Keys are copied. */
void blockForKeys(Client *c, sds *keys, int numKeys, long long deadlineMs, BlockServeFn *serve, void *priv,
                  void (*privFree)(void *));
/* A blocked client's own timeout reply (module blocked clients: their
 * timeout callback), used on timeout and CLIENT UNBLOCK TIMEOUT instead of
 * the null array; with clientUnblock 0, CLIENT UNBLOCK leaves c blocked
 * (answers 0).  Set right after blockForKeys. */
typedef void BlockTimeoutFn(Client *c);
void blockSetTimeoutHandler(Client *c, BlockTimeoutFn *fn, int clientUnblock);
/* c got its reply from elsewhere (a module's UnblockClient): unblock it,
 * release its state (privFree runs) and run what it pipelined. */
void blockingUnblockReplied(Client *c);

/* The priv pointer given to blockForKeys, NULL when c is not blocked. */
void *blockedPriv(const Client *c);

/* Note that key in db may now serve blocked clients.  Cheap when nobody
 * waits on it.  Clients are served later (see the file comment). */
void signalKeyAsReady(Db *db, const char *key, size_t len);

/* Note that key in db will be able to serve its blocked clients at unix
 * us whenUs (BZPOPDUE: its earliest member falls due then): a timer
 * signals it at that microsecond (never before), as signalKeyAsReady
 * would.  Only the earliest time asked for a key is kept, until it is
 * signalled; the request ends with the key's last waiter.  Does nothing
 * when nobody waits on key. */
void signalKeyAsReadyAt(Db *db, const char *key, size_t len, long long whenUs);

/* Parse a blocking timeout in seconds (a float) as Redis 7.0 does and turn
 * it into an absolute deadline in unix ms (0 = wait forever).  Replies the
 * error and returns -1 on a bad value. */
int getBlockTimeoutOrReply(Client *c, const sds arg, long long *deadlineMs);

/* True when c may block now: not inside MULTI/EXEC, a script or a fake
 * client.  Blocking commands reply as if they timed out otherwise. */
int clientMayBlock(const Client *c);

/* CLIENT UNBLOCK: unblock c if it is blocked on keys, replying a null array
 * (error == 0, as a timeout) or "-UNBLOCKED client unblocked via CLIENT
 * UNBLOCK" (error == 1).  Returns 1 if c was blocked, 0 otherwise. */
int blockingUnblockClient(Client *c, int error);

/* Every client blocked on keys gets the error err (without the "-"), is
 * unblocked and closed once the reply is written: a server that becomes a
 * replica drops them, as Redis does (their keys now follow the primary). */
void blockingDisconnectAll(const char *err);

/* Clients blocked on keys (INFO blocked_clients) and keys that have
 * blocked clients, over all databases. */
unsigned long blockingClientCount(void);
unsigned long blockingKeyCount(void);

/* The optional [COUNT n] tail of LMPOP/BLMPOP/ZMPOP/BZMPOP starting at
 * argv[first]: *count is 1 when absent.  Replies Redis's error and returns
 * -1 on anything else. */
int getMpopCountOrReply(Client *c, int first, long *count);

#endif
