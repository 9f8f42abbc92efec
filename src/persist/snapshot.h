/* snapshot.h -- BGSAVE written by the main thread between commands, with
 * no fork (`cairn-snapshot inline`, Cairn's own directive); see
 * snapshot.c for how the snapshot stays the dataset of its first moment.
 *
 * Invariants: at most one runs; while it runs dbSnapshotActive is set and
 * core/dispatch.h's dispatchBeforeWrite points into it, both cleared when
 * it ends; it writes temp-<pid>.rdb and renames it over dbfilename only
 * once complete and fsynced (or, for an AOF rewrite's base, leaves the
 * complete file to aof.c), or streams it to a consumer (a diskless full
 * sync) that is never handed more while it says it is busy. */
#ifndef CAIRN_SNAPSHOT_H
#define CAIRN_SNAPSHOT_H

#include <stddef.h>

/* cairn-snapshot: how BGSAVE writes its snapshot. */
#define SNAPSHOT_FORK 0
#define SNAPSHOT_INLINE 1
extern int snapshotMethod;

/* Called once when the save ends: ok 1 (the file is in place), 0 (failed:
 * logged, the temporary file removed), -1 (cancelled: snapshotInlineAbort). */
typedef void SnapshotDoneFn(int ok, int unused);

/* Whether an inline save can keep its point in time for this dataset:
 * not with hash-slot key tables, field or member TTLs (changed outside
 * commands), or a module data type. */
int snapshotInlineUsable(void);
/* Opens the temporary file and writes the head; the rest follows in
 * slices from the event loop.  0, or -1 when a save already runs.  A file
 * that cannot be opened is logged at once and fails the save in its
 * first slice (done gets 0), as a child's failed save would. */
int snapshotInlineStart(SnapshotDoneFn *done);
/* The same written to tmp, renamed to target once complete (NULL: left
 * as tmp for the caller, the AOF rewrite's base); aofBase sets the RDB's
 * aof-base AUX field, and FLUSHALL then does not cancel it (Redis kills
 * only an RDB child) but writes what is left first. */
int snapshotInlineStartFile(const char *tmp, const char *target, int aofBase, SnapshotDoneFn *done);
/* A stream's consumer (a diskless full sync's replicas): put takes n
 * bytes of the RDB, in order; busy answers 1 while the consumer holds
 * enough unsent -- the walk then waits (keys a write command names still
 * go ahead of it, kept in the save's buffer until busy answers 0). */
typedef struct SnapshotStream {
    void (*put)(const char *p, size_t n);
    int (*busy)(void);
} SnapshotStream;
/* The same written to out instead of a file: no temporary file, nothing
 * renamed; FLUSHALL cancels it (done gets -1).  0 (it cannot fail to
 * start). */
int snapshotInlineStartStream(const SnapshotStream *out, SnapshotDoneFn *done);
/* Another encoding of the same walk (the AOF rewrite's command form, or
 * NULL for the RDB): head once, dbHead before a database's keys and
 * before a key written ahead of the walk in another database than the
 * last, key per key (0, or -1: the save fails).  No trailer, no CRC. */
struct kvobj;
typedef struct SnapshotFormat {
    void (*head)(char **buf);
    void (*dbHead)(char **buf, int db);
    int (*key)(char **buf, const struct kvobj *o, int db);
} SnapshotFormat;
/* snapshotInlineStartFile for an AOF base (no rename) in fmt. */
int snapshotInlineStartCommands(const char *tmp, const SnapshotFormat *fmt, SnapshotDoneFn *done);
int snapshotInlineActive(void);
/* The running save's figures for INFO (zeros when none runs): keys written
 * so far (ahead of the walk included), keys at its start, and the memory
 * it holds beyond the dataset -- the `done` names and its write buffer --
 * now and at its peak (what stands for copy-on-write here). */
void snapshotInlineStats(long long *keys, long long *total, size_t *now, size_t *peak);
/* The peak of the last save that completed (rdb_last_cow_size /
 * aof_last_cow_size of an in-process save). */
size_t snapshotInlineLastPeak(void);
/* Stops a running save (shutdown, FLUSHALL) and removes its temporary
 * file; done gets -1. */
void snapshotInlineAbort(void);

#endif
