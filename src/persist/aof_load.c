/* aof_load.c -- the AOF manifest (parse, format, edit) and reading AOF
 * files: the RESP parser shared with cairn-check-aof, and the loader that
 * runs the commands on a fake client (aof_int.h).
 *
 * Input is untrusted: a count or length is checked against the bytes that
 * remain before anything is reserved; a command cut off by the end of the
 * file is "truncated", anything else malformed is "bad format". */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/client.h"
#include "core/command.h"
#include "core/dispatch.h"
#include "core/log.h"
#include "core/server.h"
#include "db/db.h"
#include "ds/alloc.h"
#include "ds/util.h"
#include "persist/aof_int.h"
#include "persist/persist.h"
#include "persist/rdb.h"

#define MANIFEST_MAX_LINE 1024

/* ------------------------------------------------------------------------ */
/* Manifest                                                                 */
/* ------------------------------------------------------------------------ */

AofManifest *aofManifestCreate(void) { return xcalloc(sizeof(AofManifest)); }

static void infoListFree(AofInfo *l, int n) {
    for (int i = 0; i < n; i++) sdsFree(l[i].name);
    xfree(l);
}

void aofManifestFree(AofManifest *m) {
    if (!m) return;
    if (m->hasBase) sdsFree(m->base.name);
    infoListFree(m->incr, m->incrCount);
    infoListFree(m->history, m->historyCount);
    xfree(m);
}

static AofInfo *infoListDup(const AofInfo *l, int n) {
    if (n == 0) return NULL;
    AofInfo *d = xmalloc(sizeof(AofInfo) * (size_t)n);
    for (int i = 0; i < n; i++) {
        d[i] = l[i];
        d[i].name = sdsDup(l[i].name);
    }
    return d;
}

AofManifest *aofManifestDup(const AofManifest *m) {
    AofManifest *d = aofManifestCreate();
    if (!m) return d;
    *d = *m;
    if (m->hasBase) d->base.name = sdsDup(m->base.name);
    d->incr = infoListDup(m->incr, m->incrCount);
    d->history = infoListDup(m->history, m->historyCount);
    return d;
}

static void infoPush(AofInfo **l, int *n, sds name, long long seq, char type) {
    *l = xrealloc(*l, sizeof(AofInfo) * (size_t)(*n + 1));
    (*l)[*n] = (AofInfo){name, seq, type};
    (*n)++;
}

/* A name needs quoting when it has a space, a quote or a byte that is not
 * printable (Redis writes such names with escapes). */
static sds catName(sds s, const char *name) {
    for (const char *p = name; *p; p++) {
        unsigned char ch = (unsigned char)*p;
        if (ch <= ' ' || ch >= 127 || ch == '"' || ch == '\'' || ch == '\\') return sdsCatRepr(s, name, strlen(name));
    }
    return sdsCat(s, name);
}

static sds catInfo(sds s, const AofInfo *f) {
    s = sdsCat(s, "file ");
    s = catName(s, f->name);
    return sdsCatPrintf(s, " seq %lld type %c\n", f->seq, f->type);
}

sds aofManifestFormat(const AofManifest *m) {
    sds s = sdsEmpty();
    if (m->hasBase) s = catInfo(s, &m->base);
    for (int i = 0; i < m->historyCount; i++) s = catInfo(s, &m->history[i]);
    for (int i = 0; i < m->incrCount; i++) s = catInfo(s, &m->incr[i]);
    return s;
}

/* One line of the manifest, already trimmed: "file <name> seq <n> type <t>"
 * as key/value pairs in any order (unknown keys ignored, for later
 * versions).  As Redis 7.0 reads it: the sequence is atoll's number (0 is
 * missing), the type the value's first byte.  Returns 0 or -1 with *why. */
static int parseManifestLine(AofManifest *m, const char *line, const char **why) {
    int argc;
    sds *argv = sdsSplitArgs(line, &argc);
    int rc = -1;
    sds name = NULL;
    long long seq = 0;
    char type = 0;
    if (!argv || argc < 6 || argc % 2) {
        *why = "Invalid AOF manifest file format";
        goto cleanup;
    }
    for (int i = 0; i < argc; i += 2) {
        if (!strcasecmp(argv[i], "file")) {
            sdsFree(name);
            name = sdsNew(argv[i + 1]);
            if (strchr(name, '/') || strchr(name, '\\')) {
                *why = "File can't be a path, just a filename";
                goto cleanup;
            }
        } else if (!strcasecmp(argv[i], "seq")) {
            seq = atoll(argv[i + 1]);
        } else if (!strcasecmp(argv[i], "type")) {
            type = argv[i + 1][0];
        }
    }
    if (!name || sdsLen(name) == 0 || seq == 0 || !type) {
        *why = "Invalid AOF manifest file format";
        goto cleanup;
    }
    if (type == 'b') {
        if (m->hasBase) {
            *why = "Found duplicate base file information";
            goto cleanup;
        }
        m->hasBase = 1;
        m->base = (AofInfo){name, seq, 'b'};
        m->baseSeq = seq;
        name = NULL;
    } else if (type == 'h') {
        infoPush(&m->history, &m->historyCount, name, seq, 'h');
        name = NULL;
    } else if (type == 'i') {
        if (seq <= m->incrSeq) {
            *why = "Found a non-monotonic sequence number";
            goto cleanup;
        }
        infoPush(&m->incr, &m->incrCount, name, seq, 'i');
        m->incrSeq = seq;
        name = NULL;
    } else {
        *why = "Unknown AOF file type";
        goto cleanup;
    }
    rc = 0;
cleanup:
    sdsFree(name);
    if (argv) sdsFreeSplitRes(argv, argc);
    return rc;
}

AofManifest *aofManifestLoadFile(const char *path, AofManifestError *err) {
    memset(err, 0, sizeof(*err));
    FILE *fp = fopen(path, "r");
    if (!fp) {
        err->openErrno = errno ? errno : EIO;
        return NULL;
    }
    AofManifest *m = aofManifestCreate();
    char buf[MANIFEST_MAX_LINE + 1];
    int lineNo = 0;
    const char *why = NULL;
    sds line = NULL;
    for (;;) {
        if (!fgets(buf, sizeof(buf), fp)) {
            if (!feof(fp)) why = "Read AOF manifest failed";
            else if (lineNo == 0) why = "Found an empty AOF manifest";
            break;
        }
        lineNo++;
        if (buf[0] == '#') continue;
        if (!strchr(buf, '\n')) {
            why = "The AOF manifest file contains too long line";
            break;
        }
        line = sdsTrim(sdsNew(buf), " \t\r\n");
        if (sdsLen(line) == 0) {
            why = "Invalid AOF manifest file format";
            break;
        }
        if (parseManifestLine(m, line, &why) < 0) break;
        sdsFree(line);
        line = NULL;
    }
    fclose(fp);
    if (why) {
        err->why = why;
        err->line = line;
        err->lineNo = lineNo;
        aofManifestFree(m);
        return NULL;
    }
    sdsFree(line);
    return m;
}

void aofManifestLogError(const char *path, AofManifestError *err) {
    if (err->openErrno) {
        serverLog(LL_WARNING, "Fatal error: can't open the AOF manifest file %s for reading: %s", path,
                  strerror(err->openErrno));
    } else {
        serverLog(LL_WARNING, "\n*** FATAL AOF MANIFEST FILE ERROR ***\n");
        if (err->line) {
            serverLog(LL_WARNING, "Reading the manifest file, at line %d\n", err->lineNo);
            serverLog(LL_WARNING, ">>> '%s'\n", err->line);
        }
        serverLog(LL_WARNING, "%s\n", err->why);
    }
    sdsFree(err->line);
    err->line = NULL;
}

const char *aofManifestAddIncr(AofManifest *m, const char *prefix) {
    long long seq = ++m->incrSeq;
    infoPush(&m->incr, &m->incrCount, sdsCatPrintf(sdsEmpty(), "%s.%lld.incr.aof", prefix, seq), seq, 'i');
    return m->incr[m->incrCount - 1].name;
}

const char *aofManifestNewBase(AofManifest *m, const char *prefix, int rdb) {
    if (m->hasBase) {
        infoPush(&m->history, &m->historyCount, m->base.name, m->base.seq, 'h');
        m->retiredBase = m->historyCount;
    }
    long long seq = ++m->baseSeq;
    m->hasBase = 1;
    m->base = (AofInfo){sdsCatPrintf(sdsEmpty(), "%s.%lld.base.%s", prefix, seq, rdb ? "rdb" : "aof"), seq, 'b'};
    return m->base.name;
}

void aofManifestSetBase(AofManifest *m, const char *name, long long seq) {
    if (m->hasBase) sdsFree(m->base.name);
    m->hasBase = 1;
    m->base = (AofInfo){sdsNew(name), seq, 'b'};
    if (seq > m->baseSeq) m->baseSeq = seq;
}

void aofManifestMarkIncrAsHistory(AofManifest *m, int keepLast) {
    int n = m->incrCount - (keepLast && m->incrCount ? 1 : 0);
    /* Redis puts what a rewrite retires first in the history: its incr
     * files in order, then the base it replaced, then older history. */
    int base = m->retiredBase > 0 && m->retiredBase <= m->historyCount ? m->retiredBase - 1 : -1;
    int total = m->historyCount + n, k = 0;
    AofInfo *h = xmalloc(sizeof(AofInfo) * (size_t)(total ? total : 1));
    for (int i = 0; i < n; i++) h[k++] = (AofInfo){m->incr[i].name, m->incr[i].seq, 'h'};
    if (base >= 0) h[k++] = m->history[base];
    for (int i = 0; i < m->historyCount; i++)
        if (i != base) h[k++] = m->history[i];
    xfree(m->history);
    m->history = h;
    m->historyCount = total;
    m->retiredBase = 0;
    if (n == 0) return;
    memmove(m->incr, m->incr + n, sizeof(AofInfo) * (size_t)(m->incrCount - n));
    m->incrCount -= n;
}

void aofManifestClearHistory(AofManifest *m) {
    infoListFree(m->history, m->historyCount);
    m->history = NULL;
    m->historyCount = 0;
    m->retiredBase = 0;
}

/* ------------------------------------------------------------------------ */
/* RESP parser                                                              */
/* ------------------------------------------------------------------------ */

/* Reads "<c><number>\r\n" at *pos.  Returns 0 (number in *out, *pos past
 * the line), 1 when the input ends first, -1 when malformed. */
static int readHeader(const unsigned char *p, size_t len, size_t *pos, char c, long long *out) {
    if (*pos >= len) return 1;
    if (p[*pos] != (unsigned char)c) return -1;
    size_t max = len - *pos < 32 ? len - *pos : 32;
    const unsigned char *nl = memchr(p + *pos, '\n', max);
    if (!nl) return max < 32 ? 1 : -1;
    size_t lineLen = (size_t)(nl - (p + *pos));
    if (lineLen < 2 || nl[-1] != '\r') return -1;
    if (!stringToLongLong((const char *)p + *pos + 1, lineLen - 2, out)) return -1;
    *pos += lineLen + 1;
    return 0;
}

int aofParse(const unsigned char *p, size_t len, size_t pos, AofCmdFn *cmd, AofAnnotFn *annot, void *ctx,
             size_t *stopPos) {
    sds *argv = NULL;
    int argvCap = 0, rc = AOF_PARSE_OK;
    while (pos < len) {
        size_t start = pos;
        *stopPos = start;
        if (p[pos] == '#') {
            const unsigned char *nl = memchr(p + pos, '\n', len - pos);
            if (!nl) {
                rc = AOF_PARSE_TRUNCATED;
                break;
            }
            size_t l = (size_t)(nl - (p + pos)) + 1;
            if (annot && annot(ctx, (const char *)p + pos, l, start) < 0) {
                rc = AOF_PARSE_STOPPED;
                break;
            }
            pos += l;
            continue;
        }
        long long argc;
        int r = readHeader(p, len, &pos, '*', &argc);
        if (r != 0 || argc < 1) {
            rc = r == 1 ? AOF_PARSE_TRUNCATED : AOF_PARSE_BAD_FORMAT;
            break;
        }
        /* Each argument takes at least 6 bytes ("$0\r\n\r\n"). */
        if ((unsigned long long)argc > (len - pos) / 6) {
            rc = AOF_PARSE_TRUNCATED;
            break;
        }
        if (argc > argvCap) {
            argv = xrealloc(argv, sizeof(sds) * (size_t)argc);
            argvCap = (int)argc;
        }
        int got = 0;
        for (; got < argc; got++) {
            long long l;
            r = readHeader(p, len, &pos, '$', &l);
            if (r == 0 && l < 0) r = -1;
            if (r == 0 && (unsigned long long)l + 2 > len - pos) r = 1;
            if (r == 0 && (p[pos + l] != '\r' || p[pos + l + 1] != '\n')) r = -1;
            if (r != 0) {
                rc = r == 1 ? AOF_PARSE_TRUNCATED : AOF_PARSE_BAD_FORMAT;
                break;
            }
            argv[got] = sdsNewLen(p + pos, (size_t)l);
            pos += (size_t)l + 2;
        }
        if (rc == AOF_PARSE_OK && cmd(ctx, (int)argc, argv, start, pos) < 0) rc = AOF_PARSE_STOPPED;
        for (int i = 0; i < got; i++) sdsFree(argv[i]);
        if (rc != AOF_PARSE_OK) break;
    }
    if (rc == AOF_PARSE_OK) *stopPos = pos;
    xfree(argv);
    return rc;
}

/* ------------------------------------------------------------------------ */
/* Loading                                                                  */
/* ------------------------------------------------------------------------ */

typedef struct LoadCtx {
    Client *c;
    size_t len, nextReport; /* progress: the loop turns every so many bytes */
    const char *name;
    int inMulti;
    size_t multiStart;  /* offset of the open MULTI */
    sds **queued;       /* argv of each queued command */
    int *queuedArgc;
    int queuedCount;
    const char *why; /* what stopped the load (logged with its offset) */
    int whyLogged;   /* Redis's line for it is already in the log */
    char whyBuf[128];
    size_t commands; /* run so far: the AOF LoadingProgress event every 1024 */
} LoadCtx;

static size_t spanDone, spanTotal;

void aofLoadSetProgressSpan(size_t done, size_t total) {
    spanDone = done;
    spanTotal = total;
}

/* The AOF LoadingProgress event, pos bytes into this file of len. */
static void aofProgressEvent(size_t pos, size_t len) {
    if (!persistLoading()) return;
    if (spanTotal) persistLoadingProgressEvent(spanDone + pos, spanTotal, 1);
    else persistLoadingProgressEvent(pos, len, 1);
}

/* Redis's line for an error the loading client is sent (the load goes
 * on): "after" names the command Redis names (EXEC for one of a
 * transaction). */
static void logErrorToLoader(const char *err, size_t len, const char *after) {
    serverLog(LL_WARNING,
              "== CRITICAL == This server is sending an error to its AOF-loading-client: '%.*s' after processing "
              "the command '%s'",
              (int)len, err, after);
}

/* Redis's errors sent from its shared reply objects: its line shows them
 * with their leading '-' (other errors show without "ERR "). */
static const char *const sharedErrors[] = {
    "WRONGTYPE Operation against a key holding the wrong kind of value",
    "ERR no such key",
    "ERR syntax error",
    "ERR source and destination objects are the same",
    "ERR index out of range",
    "BUSYKEY Target key name already exists.",
    "NOSCRIPT No matching script. Please use EVAL.",
    "EXECABORT Transaction discarded because of previous errors.",
};

/* Logs the error reply the loading client got from c's command (its
 * reply's first bytes: the loader's commands reply one item each, and the
 * output is discarded after each), with the text as Redis's line shows it.
 * The reply itself says whether it is an error: c->errorReplied counts
 * only the errors errorstats did not count. */
static void logCommandError(Client *c, const char *cmdName, const char *after) {
    if (c->bufpos < 2 || c->buf[0] != '-') return;
    const char *msg = c->buf + 1;
    const char *nl = memchr(msg, '\r', c->bufpos - 1);
    size_t len = nl ? (size_t)(nl - msg) : c->bufpos - 1;
    int shared = !strncasecmp(cmdName, "eval", 4) || !strncasecmp(cmdName, "fcall", 5);
    for (size_t i = 0; !shared && i < sizeof(sharedErrors) / sizeof(sharedErrors[0]); i++)
        shared = strlen(sharedErrors[i]) == len && !memcmp(sharedErrors[i], msg, len);
    if (shared) {
        msg--;
        len++;
    } else if (len > 4 && !memcmp(msg, "ERR ", 4)) {
        msg += 4;
        len -= 4;
    }
    logErrorToLoader(msg, len, after);
}

/* Runs one command on the loading client; an error it is sent is logged
 * as Redis logs it (the load goes on). */
static void runCommand(LoadCtx *ctx, int argc, sds *argv, Command *cmd, const char *after) {
    Client *c = ctx->c;
    c->argc = argc;
    c->argv = argv;
    callCommand(c, cmd);
    logCommandError(c, cmd->fullname, after ? after : cmd->fullname);
    clientDiscardReplies(c);
    c->argv = NULL;
    c->argc = 0;
    c->cmd = NULL;
}

static void dropQueue(LoadCtx *ctx) {
    for (int i = 0; i < ctx->queuedCount; i++) {
        for (int j = 0; j < ctx->queuedArgc[i]; j++) sdsFree(ctx->queued[i][j]);
        xfree(ctx->queued[i]);
    }
    xfree(ctx->queued);
    xfree(ctx->queuedArgc);
    ctx->queued = NULL;
    ctx->queuedArgc = NULL;
    ctx->queuedCount = 0;
}

/* Where a refused file goes wrong: Redis's lines name no offset, this one
 * does (cairn-check-aof shows the command there).  It goes before Redis's
 * line, so that the log still ends as Redis's does. */
static void logBadOffset(const char *name, size_t off, const char *why) {
    serverLog(LL_WARNING, "AOF file %s is invalid from offset %zu: %s", name, off, why);
}

static int loadCommand(void *priv, int argc, sds *argv, size_t start, size_t end) {
    LoadCtx *ctx = priv;
    if (++ctx->commands % 1024 == 0) aofProgressEvent(end, ctx->len);
    if (persistLoading() && end >= ctx->nextReport) {
        persistLoadingProgress(end, ctx->len);
        ctx->nextReport = end + (size_t)server.cfg.loadingProcessEventsIntervalBytes;
    }
    Command *cmd = commandLookupArgv(argc, argv);
    if (!cmd) {
        logBadOffset(ctx->name, start, "unknown command");
        serverLog(LL_WARNING, "Unknown command '%s' reading the append only file %s", argv[0], ctx->name);
        ctx->whyLogged = 1;
        return -1;
    }
    if ((cmd->arity > 0 && argc != cmd->arity) || (cmd->arity < 0 && argc < -cmd->arity)) {
        snprintf(ctx->whyBuf, sizeof(ctx->whyBuf), "wrong number of arguments for '%.64s'", argv[0]);
        ctx->why = ctx->whyBuf;
        return -1;
    }
    if (!strcasecmp(argv[0], "multi") && argc == 1 && !ctx->inMulti) {
        ctx->inMulti = 1;
        ctx->multiStart = start;
        return 0;
    }
    if (!strcasecmp(argv[0], "exec") && argc == 1) {
        if (!ctx->inMulti) {
            static const char msg[] = "EXEC without MULTI";
            logErrorToLoader(msg, sizeof(msg) - 1, "exec");
            return 0;
        }
        for (int i = 0; i < ctx->queuedCount; i++) {
            if (!strcasecmp(ctx->queued[i][0], "multi")) {
                /* Queued, it fails when the transaction runs. */
                static const char msg[] = "MULTI calls can not be nested";
                logErrorToLoader(msg, sizeof(msg) - 1, "exec");
                continue;
            }
            Command *q = commandLookupArgv(ctx->queuedArgc[i], ctx->queued[i]);
            runCommand(ctx, ctx->queuedArgc[i], ctx->queued[i], q, "exec");
        }
        dropQueue(ctx);
        ctx->inMulti = 0;
        return 0;
    }
    if (ctx->inMulti) {
        ctx->queued = xrealloc(ctx->queued, sizeof(sds *) * (size_t)(ctx->queuedCount + 1));
        ctx->queuedArgc = xrealloc(ctx->queuedArgc, sizeof(int) * (size_t)(ctx->queuedCount + 1));
        sds *copy = xmalloc(sizeof(sds) * (size_t)argc);
        for (int i = 0; i < argc; i++) copy[i] = sdsDup(argv[i]);
        ctx->queued[ctx->queuedCount] = copy;
        ctx->queuedArgc[ctx->queuedCount++] = argc;
        return 0;
    }
    runCommand(ctx, argc, argv, cmd, NULL);
    return 0;
}

#define BAD_FORMAT_MSG                                                                                             \
    "Bad file format reading the append only file %s: make a backup of your AOF file, then use ./cairn-check-aof " \
    "--fix <filename.manifest>"

/* A cut-off end at stop: with aof-load-truncated the file is trimmed there
 * (a caller refuses it unless it is the manifest's last file). */
static int loadTruncatedEnd(const char *path, const char *name, size_t stop, int loadTruncated) {
    if (!loadTruncated) {
        logBadOffset(name, stop, "unexpected end of file");
        serverLog(LL_WARNING,
                  "Unexpected end of file reading the append only file %s. You can: 1) Make a backup of your AOF "
                  "file, then use ./cairn-check-aof --fix <filename.manifest>. 2) Alternatively you can set the "
                  "'aof-load-truncated' configuration option to yes and restart the server.",
                  name);
        return AOF_LOAD_FAILED;
    }
    serverLog(LL_WARNING, "!!! Warning: short read while loading the AOF file %s!!!", name);
    serverLog(LL_WARNING, "!!! Truncating the AOF %s at offset %zu !!!", name, stop);
    if (truncate(path, (off_t)stop) == -1) {
        serverLog(LL_WARNING, "Error truncating the AOF file %s: %s", name, strerror(errno));
        return AOF_LOAD_FAILED;
    }
    serverLog(LL_WARNING, "AOF %s loaded anyway because aof-load-truncated is enabled", name);
    return AOF_LOAD_TRUNCATED;
}

int aofLoadFile(const char *path, const char *name, int loadTruncated) {
    int fd = open(path, O_RDONLY);
    if (fd < 0) {
        if (errno == ENOENT) {
            serverLog(LL_WARNING, "The append log file %s doesn't exist: %s", name, strerror(errno));
            return AOF_LOAD_NOT_EXIST;
        }
        serverLog(LL_WARNING, "Fatal error: can't open the append log file %s for reading: %s", name,
                  strerror(errno));
        return AOF_LOAD_FAILED;
    }
    struct stat st;
    if (fstat(fd, &st) < 0) {
        serverLog(LL_WARNING, "Unable to check the AOF length: %s", strerror(errno));
        close(fd);
        return AOF_LOAD_FAILED;
    }
    if (S_ISDIR(st.st_mode)) {
        /* Opened, then unreadable, as Redis finds it when it reads. */
        serverLog(LL_WARNING, "Unrecoverable error reading the append only file %s: %s", name, strerror(EISDIR));
        close(fd);
        return AOF_LOAD_FAILED;
    }
    size_t len = (size_t)st.st_size;
    if (len == 0) {
        close(fd);
        return AOF_LOAD_EMPTY;
    }
    const unsigned char *p = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
        serverLog(LL_WARNING, "Unrecoverable error reading the append only file %s: %s", name, strerror(errno));
        close(fd);
        return AOF_LOAD_FAILED;
    }
    madvise((void *)p, len, MADV_SEQUENTIAL);
    int rc = AOF_LOAD_OK;
    size_t pos = 0;
    if (len >= 5 && memcmp(p, "REDIS", 5) == 0) {
        /* Redis 6's single file (moved into the directory under its old
         * name) has an RDB preamble; a 7.0 base is an RDB. */
        int oldStyle = !strcmp(name, server.cfg.appendfilename);
        serverLog(LL_NOTICE, oldStyle ? "Reading RDB preamble from AOF file..." : "Reading RDB base file on AOF loading...");
        RdbLoadInfo info;
        sds rerr = NULL;
        if (rdbLoadBuffer(p, len, 0, &info, &pos, &rerr) < 0) {
            /* Which file, then the reason: Redis's last line. */
            serverLog(LL_WARNING, "%s %s, AOF loading aborted",
                      oldStyle ? "Error reading the RDB preamble of the AOF file" : "Error reading the RDB base file",
                      name);
            serverLog(LL_WARNING, "%s", rerr);
            sdsFree(rerr);
            rc = AOF_LOAD_FAILED;
            goto cleanup;
        }
        rdbLogLoaded(&info);
        if (oldStyle) serverLog(LL_NOTICE, "Reading the remaining AOF tail...");
    }
    LoadCtx ctx = {.name = name, .len = len, .nextReport = pos};
    aofProgressEvent(pos, len);
    ctx.c = clientCreateFake();
    int saved = dbNoLazyExpire;
    dbNoLazyExpire = 1;
    size_t stop;
    int pr = aofParse(p, len, pos, loadCommand, NULL, &ctx, &stop);
    dbNoLazyExpire = saved;
    if (pr == AOF_PARSE_OK && ctx.inMulti) {
        serverLog(LL_WARNING, "Revert incomplete MULTI/EXEC transaction in AOF file %s", name);
        stop = ctx.multiStart;
        pr = AOF_PARSE_TRUNCATED;
    } else if (pr == AOF_PARSE_TRUNCATED && ctx.inMulti) {
        /* Redis trims at the cut-off command, leaving the open MULTI for
         * later writes to land in; trimming at the MULTI loads the same. */
        stop = ctx.multiStart;
    }
    dropQueue(&ctx);
    ctx.c->db = &server.db[0];
    clientFree(ctx.c);
    if (pr == AOF_PARSE_STOPPED) {
        if (!ctx.whyLogged) {
            logBadOffset(name, stop, ctx.why ? ctx.why : "bad format");
            serverLog(LL_WARNING, BAD_FORMAT_MSG, name);
        }
        rc = AOF_LOAD_FAILED;
    } else if (pr == AOF_PARSE_BAD_FORMAT) {
        logBadOffset(name, stop, "not a command in RESP");
        serverLog(LL_WARNING, BAD_FORMAT_MSG, name);
        rc = AOF_LOAD_FAILED;
    } else if (pr == AOF_PARSE_TRUNCATED) {
        rc = loadTruncatedEnd(path, name, stop, loadTruncated);
    }
cleanup:
    munmap((void *)p, len);
    close(fd);
    return rc;
}
