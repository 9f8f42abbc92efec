/* resp_parse.h -- incremental parser for client requests (no I/O).
 *
 * Parses what a client sends to the server: RESP2 multibulk requests
 * ("*2\r\n$3\r\nGET\r\n$1\r\nk\r\n") and inline commands ("GET k\r\n"),
 * with exactly the acceptance rules and "Protocol error: ..." texts of
 * Redis 7.0.15.  A request is a multibulk when its first byte is '*',
 * otherwise inline.
 *
 * Feeding model.  The caller keeps a pending buffer of bytes read from the
 * socket and not yet consumed.  respParse() looks at that buffer, consumes
 * at most one command, and reports in *consumed how many bytes at the front
 * may be dropped.  The next call must be given the bytes that follow them
 * (the unconsumed tail plus whatever arrived since).  A multibulk's header
 * lines and finished arguments are consumed as soon as they are complete;
 * an inline line or a partial header line is not consumed until complete.
 *
 * Network layer contract (the network layer reaches the parser through
 * respProtocol, the Protocol table at the end of this file, whose loop in
 * proto/protocol.h is this one):
 *
 *     for (;;) {
 *         st = respParse(p, qb + pos, qblen - pos, &used, &lim);
 *         pos += used;
 *         if (st == RESP_INCOMPLETE) break;          // read more
 *         if (st == RESP_ERROR) {
 *             reply "-ERR " + p->err + "\r\n", stop reading and executing,
 *             close the connection once the replies already queued and
 *             this one are written (Redis: CLIENT_CLOSE_AFTER_REPLY);
 *             break;
 *         }
 *         argv = respParserTake(p, &argc);
 *         if (argc == 0) continue;                    // empty: no reply
 *         execute argv...
 *         respParserRecycle(p, argv, argc);          // or free it all
 *     }
 *
 * Commands before the bad one in the same buffer are executed and their
 * replies precede the error.  After RESP_ERROR the parser must not be fed
 * again; respParserFree() releases it.
 *
 * Large arguments.  A bulk of RESP_BIG_ARG bytes or more is copied straight
 * into the string that becomes the argument (never through an intermediate
 * buffer), and respParserBigArgRoom() lets the caller read() the rest of it
 * directly into that string.  Its memory is reserved as data arrives: the
 * whole size at once up to RESP_BIG_ARG_EAGER, beyond that doubling until
 * 1/RESP_BIG_ARG_JUMP of the declared length has arrived, then the rest in
 * one step, always capped by the declared length.  So a client that
 * declares a 512 MB bulk and sends nothing costs at most RESP_BIG_ARG_EAGER
 * bytes, and one that trickles at most RESP_BIG_ARG_JUMP times what it
 * sent, while a real 10 MB value is copied once (its first 1 MB); every declared
 * count and length is checked against the limits before anything is
 * reserved, and the argv array starts at min(count, 1024) slots.
 *
 * Reuse.  Allocating the argv array and one string per argument, and
 * freeing them after the command, is a large share of what a small command
 * costs.  So a command handed back with respParserRecycle() is not freed:
 * its array is kept for the next command (unless it has more than
 * RESP_ARGV_KEEP slots) and its small strings (those with capacity exactly
 * RESP_POOL_CAP, which is what the parser gives every argument that fits)
 * go to a pool of at most RESP_POOL_MAX strings that the next arguments are
 * copied into.  Whoever keeps a command instead (a MULTI queue) simply does
 * not recycle it: the strings are ordinary sds, freed with sdsFree.  Spare
 * memory is never more than RESP_POOL_MAX * 64 + RESP_ARGV_KEEP * 8 bytes,
 * and respParserTrim() gives it back (an idle client).
 *
 * Known Redis quirks reproduced on purpose: header and inline lines are
 * searched like C strings, so a NUL byte before the line end hides the line
 * (the request waits until the 64 KB limit trips); the two bytes after a
 * bulk payload and the byte after a header's '\r' are skipped without being
 * checked. */
#ifndef CAIRN_RESP_PARSE_H
#define CAIRN_RESP_PARSE_H

#include <stddef.h>

#include "ds/sds.h"
#include "proto/protocol.h"

/* Bulks at least this long are read in place (Redis PROTO_MBULK_BIG_ARG). */
#define RESP_BIG_ARG (1024 * 32)
/* A big argument up to this size is reserved in full when it starts. */
#define RESP_BIG_ARG_EAGER (1024 * 1024)
/* A big argument declared at least this long is reserved from the
 * allocator's big arena (xreallocBig: its freed pages are kept for the next
 * one).  jemalloc hands freed blocks of 8 MB and more back to the system at
 * once; smaller ones are reused without this (it starts at half that). */
#define RESP_BIG_ARENA_MIN (4LL * 1024 * 1024)
/* Past 1/RESP_BIG_ARG_JUMP of its declared length, the rest of a big
 * argument is reserved at once. */
#define RESP_BIG_ARG_JUMP 16
/* Longest inline line or header line without its terminator being found
 * (Redis PROTO_INLINE_MAX_SIZE). */
#define RESP_INLINE_MAX (1024 * 64)
/* proto-max-bulk-len default. */
#define RESP_DEFAULT_MAX_BULK_LEN (512LL * 1024 * 1024)
/* Limits for a connection that still has to AUTH. */
#define RESP_UNAUTH_MAX_MULTIBULK 10
#define RESP_UNAUTH_MAX_BULK 16384

/* Arguments up to this many bytes are copied into pooled strings: each is
 * one 64-byte block (3-byte header, payload, NUL).  64 covers the usual
 * keys, fields and small values while keeping a pooled client's spare
 * memory small (see RESP_POOL_MAX); longer arguments get a string of their
 * own size, freed after the command. */
#define RESP_POOL_CAP 60
/* Most spare small strings kept: a command of up to this many small
 * arguments (MSET of 15 pairs) allocates none; at most 2 KB per client. */
#define RESP_POOL_MAX 32
/* A recycled argv array with more slots than this is freed (a client that
 * once sent 100,000 arguments does not keep 800 KB). */
#define RESP_ARGV_KEEP 64
/* Smallest argv array allocated, so that a client's first command (often a
 * short one) leaves an array the usual commands fit in. */
#define RESP_ARGV_MIN 8

typedef enum { RESP_INCOMPLETE, RESP_COMPLETE, RESP_ERROR } RespStatus;

/* proto-max-bulk-len (default 512 MB) and whether AUTH is still due. */
typedef ProtoLimits RespLimits;

typedef struct RespParser {
    int argc;               /* arguments of the command being assembled */
    sds *argv;              /* argc strings, owned; NULL when argvCap is 0 */
    const char *err;        /* on RESP_ERROR: Redis's text, e.g. "Protocol
                             * error: invalid bulk length"; NULL otherwise */
    int argvCap;            /* slots allocated in argv */
    int complete;           /* argv holds a finished command not yet taken */
    long long multibulkLen; /* bulks of the current multibulk still to read;
                             * 0 when no multibulk is in progress */
    long long bulkLen;      /* length of the bulk being read, -1 while its
                             * "$len" line is still expected */
    sds bigArg;             /* big bulk being filled in place (payload plus
                             * the 2 trailing bytes), or NULL */
    char errBuf[48];        /* storage for err when it embeds a byte */
    size_t argvBytes;       /* sum of the argument lengths of argv; valid
                             * after RESP_COMPLETE until the next respParse */
    sds *lent;              /* the array respParserTake last handed out, */
    int lentCap;            /* and its slots (for respParserRecycle) */
    int poolCount;          /* spare strings in pool */
    sds pool[RESP_POOL_MAX]; /* spare strings of capacity RESP_POOL_CAP */
} RespParser;

/* Prepare an empty parser. */
void respParserInit(RespParser *p);
/* Release argv, the pool and any partial state; the parser may be Init'ed
 * again. */
void respParserFree(RespParser *p);
/* Free the spare strings and, between commands, the spare argv array: for a
 * client that has gone idle.  The parser stays usable. */
void respParserTrim(RespParser *p);
/* Bytes held for reuse (spare strings and a spare argv array). */
size_t respParserSpareBytes(const RespParser *p);

/* Parse at most one command from buf[0..len).  lim NULL means the defaults
 * (512 MB bulks, authenticated).  *consumed is always set: the bytes at the
 * front of buf the caller may drop (<= len).
 *   RESP_INCOMPLETE: more bytes are needed.
 *   RESP_COMPLETE: p->argc/p->argv hold the command; argc is 0 for an empty
 *     inline line, "*0" or a negative count (the caller skips those).  A
 *     command not taken with respParserTake is freed by the next call.
 *   RESP_ERROR: p->err says why; see the contract above. */
RespStatus respParse(RespParser *p, const char *buf, size_t len, size_t *consumed, const RespLimits *lim);

/* After RESP_COMPLETE: hand over the command.  Returns the argv array
 * (NULL when *argc is 0); the caller owns it, and either gives it back with
 * respParserRecycle or frees each sds and then the array with xfree.  The
 * parser is ready for the next command. */
sds *respParserTake(RespParser *p, int *argc);
/* Takes ownership of argv[0..argc) and the array argv (either may be NULL;
 * NULL elements are skipped): what fits is kept for the next commands (see
 * "Reuse" above), the rest is freed.  argv should be the array
 * respParserTake last returned (any xmalloc'ed array holding argc strings
 * is accepted, but only that one is kept at its full size). */
void respParserRecycle(RespParser *p, sds *argv, int argc);

/* 1 if the parser is filling a big argument that still needs bytes: *dst is
 * where the caller may read() into and *room (> 0) how many bytes it may
 * write there, never more than the argument still needs including its
 * trailing CRLF (memory is reserved on demand, so room may be less than what
 * is still needed; ask again after each write).  0 otherwise.  Call only
 * when the caller's pending buffer is empty -- which is always the case
 * right after respParse returned RESP_INCOMPLETE inside a big argument,
 * since it consumes everything it can copy. */
int respParserBigArgRoom(RespParser *p, char **dst, size_t *room);
/* The caller wrote n (<= room) bytes at dst.  Then call respParse (with the
 * pending buffer, possibly empty) to finish the argument. */
void respParserBigArgWrote(RespParser *p, size_t n);

/* Bytes of the big argument read so far (0 if none): what Redis counts in
 * the query buffer for client-query-buffer-limit besides the pending
 * buffer. */
size_t respParserPendingBytes(const RespParser *p);

/* RESP as a connection's Protocol (proto/protocol.h): the state is a
 * RespParser, next is respParse + respParserTake, directRoom/directWrote
 * are the big-argument calls above. */
extern const Protocol respProtocol;

#endif
