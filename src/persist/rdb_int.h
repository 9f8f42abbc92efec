/* rdb_int.h -- the RDB writer's private face, shared by rdb.c (the format)
 * and rdb_threads.c (a snapshot's keys serialized by several threads). */
#ifndef CAIRN_RDB_INT_H
#define CAIRN_RDB_INT_H

#include <stddef.h>
#include <stdint.h>

#include "db/db.h"
#include "db/object.h"
#include "ds/sds.h"

/* Value types. */
#define RDB_TYPE_STRING 0
#define RDB_TYPE_LIST 1
#define RDB_TYPE_SET 2
#define RDB_TYPE_ZSET 3
#define RDB_TYPE_HASH 4
#define RDB_TYPE_ZSET_2 5
#define RDB_TYPE_HASH_ZIPMAP 9
#define RDB_TYPE_LIST_ZIPLIST 10
#define RDB_TYPE_SET_INTSET 11
#define RDB_TYPE_ZSET_ZIPLIST 12
#define RDB_TYPE_HASH_ZIPLIST 13
#define RDB_TYPE_LIST_QUICKLIST 14
#define RDB_TYPE_HASH_LISTPACK 16
#define RDB_TYPE_ZSET_LISTPACK 17
#define RDB_TYPE_LIST_QUICKLIST_2 18
#define RDB_TYPE_STREAM_LISTPACKS 15
#define RDB_TYPE_STREAM_LISTPACKS_2 19
/* Hashes with field TTLs (Redis 7.4, RDB version 12): field, value and TTL
 * per field; the _PRE_GA forms (7.4 release candidates) lack the minimum
 * expire that the GA forms write first. */
#define RDB_TYPE_HASH_METADATA_PRE_GA 22
#define RDB_TYPE_HASH_LISTPACK_EX_PRE_GA 23
#define RDB_TYPE_HASH_METADATA 24
#define RDB_TYPE_HASH_LISTPACK_EX 25

/* Opcodes. */
#define RDB_OPCODE_FUNCTION2 245
#define RDB_OPCODE_FUNCTION_PRE_GA 246
#define RDB_OPCODE_MODULE_AUX 247
#define RDB_OPCODE_IDLE 248
#define RDB_OPCODE_FREQ 249
#define RDB_OPCODE_AUX 250
#define RDB_OPCODE_RESIZEDB 251
#define RDB_OPCODE_EXPIRETIME_MS 252
#define RDB_OPCODE_EXPIRETIME 253
#define RDB_OPCODE_SELECTDB 254
#define RDB_OPCODE_EOF 255

#define QUICKLIST_NODE_PLAIN 1
#define QUICKLIST_NODE_PACKED 2

/* Bytes on their way out: an sds buffer flushed to a file descriptor every
 * flushAt bytes (or kept whole for a DUMP payload), the CRC-64 folded in
 * as bytes leave.  A save thread's writer has no descriptor but a sink,
 * which hands its buffer to the thread that writes the file. */
typedef struct RdbWriter {
    sds buf;        /* bytes not yet written */
    int fd;         /* -1: keep everything in buf (DUMP, a save thread) */
    int compress;   /* rdbcompression */
    int checksum;   /* fold bytes into crc */
    uint64_t crc;
    int failed;     /* a write failed (errno kept in err) */
    int err;
    long long keysDone;          /* keys written so far (save progress) */
    long long waitMs;            /* >0: a write that would block polls this long */
    size_t syncEvery, sinceSync; /* fdatasync every so many bytes (0: never) */
    size_t flushAt;              /* flush once buf holds this much (0: RDB_FLUSH_BYTES) */
    int (*sink)(struct RdbWriter *w); /* set: takes buf's bytes instead of fd; 0 or -1 */
    void *sinkCtx;
} RdbWriter;

/* Appends key o as a snapshot holds it (expire, IDLE/FREQ under an LRU/LFU
 * policy, type, key, value) to w, flushing as a large value fills it.
 * Only reads o and the server's configuration: save threads call it on
 * distinct keys at once. */
void rdbKeyBytes(RdbWriter *w, const kvobj *o, int lru, int lfu);
/* After n more keys reached w's file: rdb-key-save-delay for each, and the
 * save progress hook when a multiple of 1024 keys is passed.  The writing
 * thread only. */
void rdbKeysSaved(RdbWriter *w, long long n);
/* Writes p[0..n), whose CRC-64 from zero is crc, to w's file after what w
 * holds.  0, or -1 (sticky). */
int rdbWriterPutChecked(RdbWriter *w, const char *p, size_t n, uint64_t crc);

/* The pieces of a snapshot, for a writer that interleaves them with other
 * work (persist/snapshot.c), in this order: the head (magic, AUX fields,
 * functions; aofBase: the AOF base's AUX field set); per database its head (SELECTDB, and RESIZEDB when size >
 * 0) and its keys (rdbKeyBytes); the tail (EOF, CRC-64, flushed: 0 or
 * -1).  The bytes are rwSnapshot's for the same keys in the same order. */
void rdbSnapshotHead(RdbWriter *w, int aofBase);
void rdbSnapshotDbHead(RdbWriter *w, int j, uint64_t size, uint64_t expires);
int rdbSnapshotTail(RdbWriter *w);
/* Flushes w's buffer when it passed its flush size (rdbWriterMaybeFlush)
 * or at once (rdbWriterFlush).  0, or -1 after a failed write (sticky). */
int rdbWriterMaybeFlush(RdbWriter *w);
int rdbWriterFlush(RdbWriter *w);
/* Whether keys carry IDLE (LRU policy) or FREQ (LFU policy) records. */
void rdbSaveMetaPolicy(int *lru, int *lfu);
/* fsync of the directory holding path (a rename made durable); 0 or -1. */
int rdbFsyncDirOf(const char *path);

/* A thread count directive's value: `configured` when above 0, else one
 * per online CPU in the process's affinity, at most autoMax (1 with one
 * CPU). */
int rdbThreadCount(int configured, int autoMax);
/* Threads that serialize a snapshot's keys (rdb-save-threads; 0 picks one
 * per online CPU, at most RDB_SAVE_THREADS_AUTO_MAX); 1: the saving thread
 * alone. */
#define RDB_SAVE_THREADS_AUTO_MAX 4
int rdbSaveThreadCount(void);
/* Writes db's keys to w (the SELECTDB/RESIZEDB before them already in w)
 * with `threads` serializing threads, the bytes the same as rdbKeyBytes
 * on one thread would give, in the same order.  Returns 0, -1 on a write
 * error (w->failed), or 1 when it wrote nothing (a small database, or no
 * thread could start): the caller writes the keys itself. */
int rdbSaveDbThreaded(RdbWriter *w, Db *db, int lru, int lfu, int threads);

/* Threads that expand a loaded file's LZF strings (rdb-load-threads; 0
 * picks one per online CPU, at most RDB_LOAD_THREADS_AUTO_MAX, the loading
 * thread included); 1: the loading thread alone. */
#define RDB_LOAD_THREADS_AUTO_MAX 4
int rdbLoadThreadCount(void);
/* The LZF strings of the input ahead of the loader, expanded by worker
 * threads (rdb_load_threads.c).  Started on input p[0..len) whose records
 * begin at `from`; NULL when threads < 2 or the input is small (the
 * loader expands everything itself). */
typedef struct RdbPrefetch RdbPrefetch;
#define RDB_PF_SDS 1  /* a string read as an sds */
#define RDB_PF_BLOB 2 /* a listpack, ziplist, zipmap, intset or list node */
RdbPrefetch *rdbPrefetchStart(const unsigned char *p, size_t len, size_t from, int threads);
/* At a record boundary rec the loader reached once rec >= *wake (as last
 * returned): scans and queues more input.  Sets *next, the offset of the
 * next expanded string, and *wake. */
void rdbPrefetchAt(RdbPrefetch *pf, size_t rec, size_t *next, size_t *wake);
/* The loader is to read a string of kind at pos (pos >= *next): 1 with the
 * expanded bytes (caller owns buf: an sds or an xmalloc block of *len
 * bytes) and *end the offset after the string; 0 when it must decode the
 * string itself (not noted, or its LZF is corrupt).  Updates *next. */
int rdbPrefetchTake(RdbPrefetch *pf, size_t pos, int kind, void **buf, size_t *len, size_t *end, size_t *next);
/* Waits for the workers, frees what was not taken, joins them. */
void rdbPrefetchStop(RdbPrefetch *pf);

#endif
