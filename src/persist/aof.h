/* aof.h -- the append-only file, as Redis 7.0 keeps it (multi-part).
 *
 * In `dir`/`appenddirname` live the manifest (`<appendfilename>.manifest`,
 * one line per file: "file <name> seq <n> type b|h|i"), one base file (an
 * RDB with aux aof-base=1, `.base.rdb`, or commands, `.base.aof`) and the
 * incremental files (`.incr.aof`) holding the effects stream in RESP
 * (core/effects.h), the last of which is appended to.  History files (type
 * h) are what a rewrite replaced; they are removed after it.
 *
 * Invariants: the manifest on disk is only ever replaced whole (temp file,
 * fsync, rename, directory fsync), so a crash leaves the old or the new
 * one; a rewrite never touches the files the manifest names until its new
 * base is renamed into place; at most one child process (BGSAVE or
 * BGREWRITEAOF) runs at a time (persist.c and this file each check the
 * other's). */
#ifndef CAIRN_AOF_H
#define CAIRN_AOF_H

#include <sys/types.h>

#include "core/client.h"
#include "ds/sds.h"

/* Start-up, whether the AOF is on or not (as Redis 7.0): reads the
 * manifest of appenddirname if there is one (with the AOF off, removing
 * its history files unless aof-disable-auto-gc); a broken one is logged
 * with Redis's lines and exits the process. */
void aofLoadManifestAtStartup(void);
/* Start-up (persistInit, with appendonly yes, after the manifest): upgrade
 * an old single appendonly.aof (or resume its interrupted upgrade), load
 * the manifest's files into the databases, then
 * open the incr file (creating a base first when there is none) and start
 * appending.  Exits the process on a file it must refuse, as Redis does. */
void aofInitAtStartup(void);
/* Registers the timer, before-sleep and write hooks (always, even with the
 * AOF off: BGREWRITEAOF works then too). */
void aofInitHooks(void);

/* pid of the rewrite child, -1 when none. */
pid_t aofChildPid(void);
/* A rewrite is waiting for the child slot (aof_rewrite_scheduled). */
void aofScheduleRewrite(void);
/* A replica loaded its primary's dataset: with the AOF on, it is started
 * again from a rewrite of the new data (retried each second on failure),
 * as Redis does. */
void aofRestartAfterSync(void);
/* SHUTDOWN: kill a rewrite child, write and fsync what is buffered.
 * Returns -1 (logged) to stay up while the first rewrite of an AOF turned
 * on at run time is still being written, unless force, as Redis does (the
 * dataset would exist nowhere else). */
int aofPrepareShutdown(int force);
/* DEBUG LOADAOF: write what is buffered, empty the data, load the AOF back.
 * Exits the process when the AOF cannot be loaded, as Redis does. */
void aofDebugLoad(void);
/* DEBUG AOF-FLUSH-SLEEP: microseconds slept before each write of the AOF
 * buffer to the file (0: none). */
extern int aofFlushSleepUs;

/* BGREWRITEAOF (a row of persist.c's family). */
void aofBgrewriteaofCommand(Client *c);

/* MISCONF: the last write or fsync of the AOF failed; *err is the text
 * after "MISCONF " (static).  0 when writes may go on. */
int aofWriteErrorText(const char **err);
/* 1 while the AOF is on (or waiting for its first rewrite). */
int aofOn(void);
/* WAITAOF (Redis 7.2): the bytes of effects the AOF was ever given (never
 * reset, rewrites included), and how many of them are known to be fsynced
 * (appendfsync always: after each write; everysec: once the background
 * fsync ends; no: never, but at shutdown). */
long long aofFedBytes(void);
long long aofSyncedBytes(void);
/* Writes (and, per appendfsync, fsyncs) what is buffered now rather than
 * before the loop sleeps: WAITAOF, and a replica about to report its
 * fsynced offset. */
void aofFlushPending(void);
/* Bytes allocated for effects not yet written to the file (aof_buf), 0
 * with the AOF off: INFO mem_aof_buffer, and not counted for eviction. */
size_t aofBufferMemory(void);

/* INFO persistence lines: the aof_* fields from aof_enabled to
 * aof_last_cow_size, and the ones shown only with the AOF on. */
sds aofInfoMain(sds s);
sds aofInfoEnabled(sds s);

/* cairn-check-aof [--fix] [--truncate-to-timestamp T] <file|manifest>:
 * the server binary runs it when called by that name.  Returns the exit
 * status. */
int aofCheckMain(int argc, char **argv);

/* Registers the append-only file's directives (CONFIG GET/SET/REWRITE, the config
 * file).  Called once from main.c, before the defaults are applied. */
void aofRegisterConfig(void);

/* An AOF rewrite without the RDB preamble writes a module value (type
 * OBJ_MODULE) as the commands this hook appends to buf in RESP (the
 * module type's aof_rewrite callback): installed by src/module.  Returns
 * -1 when the type cannot be rewritten (the rewrite fails, as Redis's).
 * NULL: such values are not written. */
extern int (*aofRewriteModuleValue)(sds *buf, const kvobj *o);

#endif
