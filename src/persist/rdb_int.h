/* rdb_int.h -- the RDB writer's private face, shared by rdb.c (the format)
 * and rdb_threads.c (a snapshot's keys serialized by several threads). */
#ifndef CAIRN_RDB_INT_H
#define CAIRN_RDB_INT_H

#include <stddef.h>
#include <stdint.h>

#include "db/db.h"
#include "db/object.h"
#include "ds/sds.h"

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

#endif
