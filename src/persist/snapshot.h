/* snapshot.h -- BGSAVE written by the main thread between commands, with
 * no fork (`cairn-snapshot inline`, Cairn's own directive); see
 * snapshot.c for how the snapshot stays the dataset of its first moment.
 *
 * Invariants: at most one runs; while it runs dbSnapshotActive is set and
 * core/dispatch.h's dispatchBeforeWrite points into it, both cleared when
 * it ends; it writes temp-<pid>.rdb and renames it over dbfilename only
 * once complete and fsynced (or, for an AOF rewrite's base, leaves the
 * complete file to aof.c). */
#ifndef CAIRN_SNAPSHOT_H
#define CAIRN_SNAPSHOT_H

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
 * slices from the event loop.  0, or -1 (logged; errno set) when the file
 * cannot be opened. */
int snapshotInlineStart(SnapshotDoneFn *done);
/* The same written to tmp, renamed to target once complete (NULL: left
 * as tmp for the caller, the AOF rewrite's base); aofBase sets the RDB's
 * aof-base AUX field, and FLUSHALL then does not cancel it (Redis kills
 * only an RDB child) but writes what is left first. */
int snapshotInlineStartFile(const char *tmp, const char *target, int aofBase, SnapshotDoneFn *done);
int snapshotInlineActive(void);
/* Stops a running save (shutdown, FLUSHALL) and removes its temporary
 * file; done gets -1. */
void snapshotInlineAbort(void);

#endif
