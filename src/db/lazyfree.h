/* lazyfree.h -- freeing large values and whole databases on a background
 * thread (UNLINK, FLUSHALL/FLUSHDB ASYNC, the lazyfree-lazy-* options).
 *
 * The thread only frees memory handed to it: entries and tables that are no
 * longer reachable from any Db.  It never touches the keyspace, so commands
 * keep running on the main thread without locks.  The allocator is
 * thread-safe; the per-type free operations (ObjectType.free) must not touch
 * shared state.  The thread starts on first use. */
#ifndef CAIRN_LAZYFREE_H
#define CAIRN_LAZYFREE_H

#include <stddef.h>

#include "db/db.h"

/* Values whose free effort (about one unit per allocation) exceeds this go
 * to the thread; smaller ones are freed inline, which is cheaper than the
 * hand-off.  Redis uses the same threshold of 64. */
#define LAZYFREE_THRESHOLD 64

/* Free an entry already unlinked from its Db (dbUnlink).  Takes ownership.
 * Strings and small values are freed now, large ones on the thread. */
void lazyfreeEntry(kvobj *o);

/* A module data type's free effort (src/module installs it): its
 * free_effort callback's answer, 1 without one (Redis: 0 means "free it on
 * the thread").  DEL's synchronous free does not ask. */
extern size_t (*lazyfreeModuleEffort)(const kvobj *o);

/* Free an entry now (DEL); a big one also asks for lazyfreePurge. */
void lazyfreeFreeNow(kvobj *o);

/* Return the allocator's freed pages to the system on the thread, after
 * the jobs queued before (FLUSHALL/FLUSHDB SYNC, a big DEL, a key table
 * that shrank or finished growing).  Requests made while one is pending
 * are merged. */
void lazyfreePurge(void);
/* Periodic (serverCron): once big arguments have paused, give the big
 * arena's kept pages back from the thread.  nowMs: monotonic milliseconds. */
void lazyfreeCron(long long nowMs);

/* Free a detached key table made by htabCreate (or a heap copy of a Db's
 * table) with all its entries, and a TTL index, on the thread.  Takes
 * ownership of both; keys may be NULL, ttl empty.  (Emptying a database
 * this way: db.h dbEmptyAsync.) */
void lazyfreeTable(Htab *keys, ChunkVec ttl);

/* lazyfreeTable for the n tables at tabs (a database's slot tables, in
 * cluster mode) holding `objects` entries in all, then the allocation
 * `block` holding them (may be NULL), and the TTL index.  Takes ownership. */
void lazyfreeTables(Htab *tabs, size_t n, size_t objects, void *block, ChunkVec ttl);

/* Free one plain allocation (a key table's old bucket array) on the
 * thread.  Takes ownership.  It counts as no object in the counters. */
void lazyfreeBlock(void *block);

/* A zeroed bucket array of `slots` slots for a growing key table, its
 * pages already touched by the thread; NULL while the thread prepares it
 * (the first call for a size queues the job; the caller keeps filling its
 * current array and asks again).  An array prepared for another size is
 * freed and a new one requested.  Without the thread: xcalloc now. */
void **lazyfreeTakeTable(size_t slots);
/* Free the prepared array (now: on this thread; else on the lazy-free
 * thread), or have the thread free it when done: flushes call it so that
 * no unused array stays resident.  olderThanMs > 0: only a ready array
 * unclaimed for that long (the timer's clean-up). */
void lazyfreeDropTable(int now, long long olderThanMs);

/* Jobs queued from a command do not wake the thread there (waking it
 * could hand it the main thread's CPU mid-command); this wakes it if jobs
 * wait.  Called after each event loop iteration's replies are written and
 * from the timer; WAKE_BATCH jobs queued un-woken wake it at once, and
 * lazyfreeWaitIdle wakes it first.  One relaxed load when nothing waits. */
void lazyfreeKick(void);

/* INFO memory: objects queued and not yet freed, and freed so far. */
size_t lazyfreePendingObjects(void);
size_t lazyfreedObjects(void);
/* CONFIG RESETSTAT: zero lazyfreed_objects. */
void lazyfreeResetStats(void);
/* Block until the queue is empty and the thread idle (tests, shutdown,
 * DEBUG).  Returns at once when the thread never started. */
void lazyfreeWaitIdle(void);

#endif
