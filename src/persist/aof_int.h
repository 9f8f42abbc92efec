/* aof_int.h -- the append-only file's private face: the manifest, the
 * RESP file parser and loader (aof_load.c), the command-form base writer
 * (aof_rewrite.c).  Used by aof.c and the cairn-check-aof tool
 * (aof_check.c). */
#ifndef CAIRN_AOF_INT_H
#define CAIRN_AOF_INT_H

#include <stddef.h>

#include "ds/sds.h"

/* One file of the manifest. */
typedef struct AofInfo {
    sds name;
    long long seq;
    char type; /* 'b' base, 'h' history, 'i' incr */
} AofInfo;

typedef struct AofManifest {
    int hasBase;
    AofInfo base;
    AofInfo *incr;      /* in sequence order; the last one is appended to */
    int incrCount;
    AofInfo *history;
    int historyCount;
    long long baseSeq;  /* highest base sequence used */
    long long incrSeq;  /* highest incr sequence used */
    int retiredBase;    /* 1 + history index of the base aofManifestNewBase replaced (0: none);
                         * Redis lists it after the incr files retired with it */
} AofManifest;

AofManifest *aofManifestCreate(void);
void aofManifestFree(AofManifest *m);
AofManifest *aofManifestDup(const AofManifest *m); /* NULL gives an empty one */
/* The manifest's text, one "file .. seq .. type .." line per file (caller
 * frees). */
sds aofManifestFormat(const AofManifest *m);
/* Why a manifest could not be read: the file would not open (openErrno),
 * or why names what is wrong (Redis's words) at line lineNo, whose
 * trimmed text is line when the error concerns one line (NULL for an
 * empty file or a line too long). */
typedef struct AofManifestError {
    int openErrno;
    const char *why;
    sds line;
    int lineNo;
} AofManifestError;

/* Parses the manifest file at path as Redis 7.0 does.  NULL with *err
 * filled (free it with aofManifestLogError) when it is broken: a line too
 * long or without its newline, an empty line, not in key/value pairs, no
 * name or sequence or type, a name with a path, an unknown type, two
 * bases, an incr sequence that does not increase, an empty file.  A file
 * of comments only is an empty manifest (no file at all). */
AofManifest *aofManifestLoadFile(const char *path, AofManifestError *err);
/* Logs err with Redis's lines (the last one the reason) and frees it. */
void aofManifestLogError(const char *path, AofManifestError *err);
/* Adds the next incr file (<prefix>.<seq>.incr.aof); returns its name,
 * owned by m. */
const char *aofManifestAddIncr(AofManifest *m, const char *prefix);
/* Makes the next base (<prefix>.<seq>.base.rdb|aof), the old one going to
 * history; returns its name, owned by m. */
const char *aofManifestNewBase(AofManifest *m, const char *prefix, int rdb);
/* Sets the base to name with sequence seq (the upgrade of an old file). */
void aofManifestSetBase(AofManifest *m, const char *name, long long seq);
/* Every incr file becomes history, except the last when keepLast. */
void aofManifestMarkIncrAsHistory(AofManifest *m, int keepLast);
void aofManifestClearHistory(AofManifest *m);

/* The RESP parser: calls cmd for each command of p[pos..len) (argv owned
 * by the parser, valid during the call; start/end its byte range) and
 * annot for each "#..." annotation line.  A callback returns 0 to go on,
 * -1 to stop.  Returns AOF_PARSE_*; *stopPos is where a truncated or bad
 * command starts (or where the callback stopped). */
enum { AOF_PARSE_OK = 0, AOF_PARSE_TRUNCATED, AOF_PARSE_BAD_FORMAT, AOF_PARSE_STOPPED };
typedef int AofCmdFn(void *ctx, int argc, sds *argv, size_t start, size_t end);
typedef int AofAnnotFn(void *ctx, const char *line, size_t len, size_t start);
int aofParse(const unsigned char *p, size_t len, size_t pos, AofCmdFn *cmd, AofAnnotFn *annot, void *ctx,
             size_t *stopPos);

/* Loads one AOF file (an RDB preamble, then commands) into the databases,
 * logging as Redis 7.0 does (plus the offset where a refused file goes
 * wrong).  A cut-off end is, with loadTruncated, trimmed from the file and
 * AOF_LOAD_TRUNCATED returned (only the manifest's last file may be), else
 * AOF_LOAD_FAILED. */
enum { AOF_LOAD_OK = 0, AOF_LOAD_EMPTY, AOF_LOAD_NOT_EXIST, AOF_LOAD_FAILED, AOF_LOAD_TRUNCATED };
int aofLoadFile(const char *path, const char *name, int loadTruncated);
/* The modules' LoadingProgress AOF events of the next aofLoadFile calls:
 * done bytes of the load precede the file, of total in all (0, 0: the
 * file alone).  As Redis's loop, the event is offered (throttled) before
 * the first command and after every 1024th. */
void aofLoadSetProgressSpan(size_t done, size_t total);

/* Writes the dataset as commands (the base with aof-use-rdb-preamble no)
 * to path, fsynced.  Returns 0 or -1 (logged). */
int aofWriteCommandsBase(const char *path);
/* The same base's pieces appended to *buf, for a rewrite written in
 * process (snapshot.h's SnapshotFormat): the head (#TS when enabled,
 * FUNCTION LOAD per library), a database's SELECT, and one key's commands
 * (a value that fails dbVerify is logged and left out, as the child does;
 * -1 only for a module value that cannot be written). */
void aofCommandsHead(sds *buf);
void aofCommandsSelect(sds *buf, int db);
int aofCommandsKey(sds *buf, const struct kvobj *o, int db);

#endif
