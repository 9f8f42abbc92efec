/* rdb.h -- Redis's RDB format (version 10, as redis-server 7.0.15 writes
 * it): whole snapshots of the keyspace and single values (DUMP payloads).
 *
 * A snapshot is "REDIS0010", AUX fields, function libraries, then per
 * non-empty database SELECTDB, RESIZEDB and its keys (an optional expire,
 * an optional IDLE/FREQ under an LRU/LFU maxmemory-policy, the value type,
 * the key, the value), then EOF and the CRC-64 of everything before it
 * (zero when rdbchecksum is off).  A DUMP payload is one value's type and
 * body, the RDB version (2 bytes) and the CRC-64 (8 bytes), little endian.
 *
 * Writing: strings int/embstr/raw (LZF when rdbcompression is on), lists as
 * quicklists of listpacks and plain nodes, hashes/zsets as their listpack or
 * field by field, sets as intset blob or member by member; exactly what
 * redis-server writes for each encoding.
 *
 * Reading accepts what redis-server 7.0 reads: RDB versions 1 to 10, the
 * current encodings and the older ones (linked lists, ziplists, zipmaps,
 * quicklist v1), converted with Redis's thresholds so that OBJECT ENCODING
 * after loading is what Redis reports.  Input is untrusted: every length is
 * checked against the bytes that remain before anything is reserved, and
 * corrupt input gives an error with its offset, never a crash. */
#ifndef CAIRN_RDB_H
#define CAIRN_RDB_H

#include <stddef.h>
#include <stdint.h>

#include "db/db.h"
#include "db/object.h"
#include "ds/sds.h"

#define RDB_VERSION 10
/* The version a snapshot (or DUMP payload) with hash-field TTLs carries, as
 * Redis 7.4 writes it; files and payloads up to it are accepted. */
#define RDB_VERSION_FIELD_TTL 12

/* Fills the digest and RDB slots of every type's ObjectType (db/object.h)
 * with this layer's operations: once at start-up, after the types
 * registered theirs.  A new type's RDB code goes here (its save, load and
 * the RDB types it reads, objectTypeOfRdb in rdb.c) and its digest in
 * digest.c. */
void rdbRegisterTypes(void);

/* --- values whose body an upper layer writes and reads (a module's data
 * type, src/module): Redis's RDB_TYPE_MODULE_2, the RDB primitives. --- */
#define RDB_TYPE_MODULE_2 7
struct RdbWriter;
struct RdbReader;
/* The writer: a length (Redis's length encoding), a string (compressed
 * under rdbcompression as any string), raw bytes. */
void rdbPutLen(struct RdbWriter *w, uint64_t v);
void rdbPutString(struct RdbWriter *w, const void *p, size_t len);
void rdbPutBytes(struct RdbWriter *w, const void *p, size_t len);
/* The reader: each 0, or -1 with the reader's error set (then every
 * later call fails too). */
int rdbGetLen(struct RdbReader *r, uint64_t *v);
int rdbGetString(struct RdbReader *r, sds *out);
int rdbGetBytes(struct RdbReader *r, void *out, size_t len);
/* Sets the reader's error (the first one wins); returns -1. */
int rdbGetFail(struct RdbReader *r, const char *why);
/* The entry for key holding ptr (type, encoding), with the expire of the
 * record being read if it has one. */
kvobj *rdbNewEntryPtr(struct RdbReader *r, const char *key, size_t keylen, int type, int enc, void *ptr);
/* Saves run on the main thread only (a module's callbacks are not
 * thread-safe): set once a module creates a data type. */
extern int rdbSaveSingleThreaded;
/* Module aux data (Redis's RDB_OPCODE_MODULE_AUX records), installed by
 * src/module: rdbModuleAuxSave writes the records of the types whose
 * aux_save_triggers hold `when` (1: before the keys, 2: after them);
 * rdbModuleAuxLoad reads one record after its opcode (0, or -1 with the
 * reader's error set).  Without them a snapshot has no such record and a
 * file with one fails to load. */
extern void (*rdbModuleAuxSave)(struct RdbWriter *w, int when);
extern int (*rdbModuleAuxLoad)(struct RdbReader *r);
/* The database of the key whose module value is being saved or loaded in
 * a snapshot, -1 otherwise (RedisModule_GetDbIdFromIO). */
extern int rdbModuleDbId;
/* An in-memory writer and reader of RDB primitives (a module's
 * SaveDataTypeToString / LoadDataTypeFromString).  Done returns the
 * bytes written and frees the writer; the reader reads p[0..len), which
 * must outlive it. */
struct RdbWriter *rdbBufferWriter(void);
sds rdbBufferWriterDone(struct RdbWriter *w);
struct RdbReader *rdbBufferReader(const void *p, size_t len);
void rdbBufferReaderFree(struct RdbReader *r);
#define RDB_PAYLOAD_TRAILER 10 /* DUMP payload: version (2) + CRC-64 (8) */

/* A DUMP payload of o's value (caller owns it). */
sds rdbDumpValue(const kvobj *o);
/* Bytes of o's value as RDB writes it, type byte excluded (DEBUG OBJECT's
 * serializedlength). */
size_t rdbSerializedLength(const kvobj *o);
/* 1 when a DUMP payload ends in a version we read and a matching CRC. */
int rdbPayloadIsIntact(const unsigned char *p, size_t len);
/* Builds the entry for key from an intact payload.  NULL when the payload
 * is corrupt or holds an empty collection.  deep: sanitize it deeply
 * (sanitize-dump-payload): without it, duplicate members or fields inside
 * a listpack, ziplist, zipmap or intset are dropped rather than refused and
 * an intset's order is not checked; what keeps memory safe is always
 * checked. */
/* withExpire: the entry carries `expire` (absolute ms) from the start
 * (RESTORE with a TTL), no move when it is added. */
kvobj *rdbRestoreValue(const char *key, size_t keylen, const unsigned char *p, size_t len, int deep,
                       int withExpire, long long expire);

/* INFO dump_payload_sanitizations: the deep checks run, as Redis counts
 * them (one per listpack, ziplist, zipmap or intset value, per list node
 * in a listpack, per stream node), whether for RESTORE or a load; reset
 * by CONFIG RESETSTAT. */
extern long long rdbPayloadSanitizations;

/* cairn-check-rdb: the value of rdbType for key at p[*pos..len), read with
 * deep sanitization (as RESTORE with sanitize-dump-payload yes reads it);
 * *pos is where reading stopped.  NULL with *why (static text) when
 * corrupt, or with *empty set for an empty collection. */
kvobj *rdbCheckValue(const unsigned char *p, size_t len, size_t *pos, int rdbType, const char *key, size_t keylen,
                     int *empty, const char **why);

/* Writes the whole dataset to `filename` through a temporary file
 * (temp-<pid>.rdb in the same directory), fsynced and renamed over it, the
 * directory fsynced.  Returns 0, or -1 with errno set and the old file
 * untouched (the failure is logged). */
int rdbSaveFile(const char *filename);
/* The same, with the aof-base aux field set to aofBase (1 for the base
 * file of the append-only file). */
int rdbSaveFileEx(const char *filename, int aofBase);

/* The replication position a snapshot records (AUX repl-stream-db,
 * repl-id, repl-offset), so that a replica restarted from it, or fed it by
 * a full sync, can continue the stream. */
typedef struct RdbReplInfo {
    int streamDb;
    char replid[41];
    long long offset;
} RdbReplInfo;
/* Installed by the replication layer: fills *out and returns 1 when the
 * server has a position to record (a primary with a backlog, a replica),
 * else 0.  NULL: none recorded.  Read by every snapshot written. */
extern int (*rdbReplInfoProvider)(RdbReplInfo *out);
/* Installed by the replication layer for the start-up load of a primary:
 * called for each key a snapshot load skips because its expire passed, so
 * that the DEL reaches the replicas that continue from the snapshot's
 * position (Redis feeds them to its backlog).  NULL: nothing called. */
extern void (*rdbLoadExpiredHook)(int dbid, const char *key, size_t len);

/* Writes the whole dataset to fd (a pipe or socket of a full sync: no
 * fsync, no rename).  A write that would block waits for the fd (at most
 * timeoutMs per wait).  Returns 0, or -1 with errno set. */
int rdbSaveFd(int fd, long long timeoutMs);
/* The same without parts of the dataset (REPLCONF rdb-filter-only): the
 * keys (RDB_EXCLUDE_DATA) and/or the function libraries
 * (RDB_EXCLUDE_FUNCTIONS); the AUX fields are always written. */
#define RDB_EXCLUDE_DATA 1
#define RDB_EXCLUDE_FUNCTIONS 2
int rdbSaveFdFiltered(int fd, long long timeoutMs, int exclude);

/* Loading statistics. */
typedef struct RdbLoadInfo {
    long long keysLoaded;  /* keys added */
    long long keysExpired; /* keys skipped because their expire had passed */
    long long emptySkipped;
    long long rdbUsedMem;  /* the used-mem AUX field, 0 when absent */
    int hasRepl;           /* the file recorded repl-id and repl-offset */
    RdbReplInfo repl;
    int version;           /* the file's RDB version, 0 before the header */
    size_t errOffset;      /* a corrupt file: where reading stopped */
    const char *errReason; /* ... and why (static text), else NULL */
} RdbLoadInfo;

/* Progress of a long save or load, for the server to report it and (while
 * loading) to keep serving.  The save hook gets the keys written so far,
 * every 1024 keys; the load hook the bytes read of the file's total, at the
 * start and every loading-process-events-interval-bytes.  Both off (NULL)
 * by default; DUMP/RESTORE never call them. */
typedef void RdbSaveProgress(long long keysDone);
typedef void RdbLoadProgress(const RdbLoadInfo *info, size_t loaded, size_t total);
void rdbSetProgressHooks(RdbSaveProgress *save, RdbLoadProgress *load);

/* Loads a snapshot file into the databases and the functions.  A key or
 * library already present is an error, unless merge (then the file's
 * replaces it).  Returns 0; 1 when the file does not exist or is empty
 * (nothing loaded); -1 when it is corrupt or unreadable, with *err naming
 * the offset and reason (caller frees).  A failed load may leave part of
 * the data loaded. */
int rdbLoadFile(const char *filename, int merge, RdbLoadInfo *info, sds *err);
/* What the last rdbLoadFile that read a whole file found (the start-up
 * load's replication position, for a replica restarted from it). */
extern RdbLoadInfo rdbLastLoaded;
/* Loads the snapshot at the start of p[0..len) (an AOF's RDB preamble is
 * followed by commands).  Returns 0 with *used the bytes the snapshot
 * took, or -1 with *err (caller frees) and *used the offset of the error. */
/* The "Done loading RDB" line Redis logs after a load. */
void rdbLogLoaded(const RdbLoadInfo *info);
/* 1 (the default): a file or full-sync load without deep sanitization
 * (sanitize-dump-payload no, or clients) defers the checks of hash and
 * sorted-set listpacks beyond their header to first access; 0: checks
 * them at load as RESTORE does (DEBUG DEFER-LOAD-CHECKS, for tests). */
extern int rdbDeferLoadChecks;
/* DEBUG SET-SKIP-CHECKSUM-VALIDATION: nonzero skips the CRC-64 check of
 * loaded RDB files and of DUMP payloads (RESTORE); the version is still
 * checked. */
extern int rdbSkipChecksumValidation;
/* db.h dbHooks.verifyValue: the deferred check of such a value. */
int rdbVerifyValue(const kvobj *o, int *enc, void **ptr, const char **why);
int rdbLoadBuffer(const unsigned char *p, size_t len, int merge, RdbLoadInfo *info, size_t *used, sds *err);

/* A snapshot parsed as its bytes arrive (a replica's diskless load): the
 * top-level loop stops at a record whose bytes are not all there and
 * resumes there on the next feed, so the caller holds only the bytes of
 * the record in flight.  dbs: the server.cfg.databases databases to fill
 * (NULL: server.db); deferFunctions: function libraries are kept for
 * rdbStreamApplyFunctions instead of loaded.  The load-progress hook is not
 * called: the caller reports progress. */
typedef struct RdbStream RdbStream;
RdbStream *rdbStreamNew(Db *dbs, int deferFunctions);
/* Parses the records at the start of p[0..len) (the caller drops the bytes
 * earlier feeds consumed, so p starts at a record).  final: no byte will
 * follow, a short record is an error.  Returns the bytes consumed (nothing
 * after the EOF opcode and checksum), or -1 with *err (caller frees); *done
 * is 1 once the EOF and checksum are read, 2 when the feed stopped after
 * loading-process-events-interval-bytes (call again with the rest, after
 * turning the loop), 0 when it needs more bytes.  A short record is retried only once the bytes
 * offered doubled (or final), so a large record arriving in small pieces
 * costs O(its size) in all. */
long long rdbStreamFeed(RdbStream *s, const unsigned char *p, size_t len, int final, int *done, sds *err);
const RdbLoadInfo *rdbStreamInfo(const RdbStream *s);
/* The next feed parses a short record again even if its bytes did not
 * double (the sender went quiet: what it sent may be all there is). */
void rdbStreamRetry(RdbStream *s);
/* Bytes of the snapshot consumed so far. */
size_t rdbStreamConsumed(const RdbStream *s);
/* Loads the deferred function libraries into the server's (after the
 * caller flushed them).  Returns 0, or -1 with *err. */
int rdbStreamApplyFunctions(RdbStream *s, sds *err);
void rdbStreamFree(RdbStream *s);

#endif
