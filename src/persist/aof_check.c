/* aof_check.c -- cairn-check-aof: checks an AOF as redis-check-aof 7.0
 * does, with its output: a manifest and its files ("Multi Part AOF"), or
 * a single file ("Old-Style AOF", RESP or with an RDB preamble).
 * --fix truncates a cut-off or broken end of the last file (after asking);
 * --truncate-to-timestamp T cuts the last file at its first "#TS:"
 * annotation later than T.  The server binary runs this when called by
 * that name (main.c), so RDB preambles are checked by the server's own
 * loader.
 *
 * The file is read through stdio a line or a bulk at a time, the way
 * redis-check-aof reads it, so that a broken file is reported at the same
 * offset with the same words.  Invariants: `line` (the lines consumed,
 * reported as ok_up_to_line) and the first error text carry over from one
 * file of a manifest to the next, as redis-check-aof's do; every failure
 * that is not a report of an invalid file exits at once with status 1. */
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/log.h"
#include "core/server.h"
#include "ds/alloc.h"
#include "persist/aof.h"
#include "persist/aof_int.h"
#include "persist/persist.h"
#include "persist/rdb.h"

enum { CHECK_OK, CHECK_EMPTY, CHECK_TRUNCATED, CHECK_TS_TRUNCATED };

#define ANNOTATION_MAX 1024
#define MANIFEST_LINE_MAX 1024

static char errText[1100]; /* the first problem found ("" for none) */
static off_t errPos;       /* where the item being read starts */
static long long line = 1;
static long toTimestamp; /* 0: no --truncate-to-timestamp */
static off_t fileSize;   /* of the file being checked */

/* Records the problem at errPos (prefixed with it, as redis-check-aof
 * prints it). */
static void setError(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void setError(const char *fmt, ...) {
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    snprintf(errText, sizeof(errText), "0x%16llx: %s", (long long)errPos, msg);
}

/* p must start with CRLF; counts a line. */
static int expectCrlf(const char *p) {
    if (strncmp(p, "\r\n", 2) != 0) {
        setError("Expected \\r\\n, got: %02x%02x", p[0], p[1]);
        return 0;
    }
    line++;
    return 1;
}

/* Reads "<prefix><number>\r\n".  0 at the end of the file or on an error
 * (recorded). */
static int readNumber(FILE *fp, char prefix, long *out) {
    char buf[128], *end;
    errPos = ftello(fp);
    if (!fgets(buf, sizeof(buf), fp)) return 0;
    if (buf[0] != prefix) {
        setError("Expected prefix '%c', got: '%c'", prefix, buf[0]);
        return 0;
    }
    *out = strtol(buf + 1, &end, 10);
    return expectCrlf(end);
}

/* Reads one bulk string; *out (caller frees) is NUL-terminated. */
static int readBulk(FILE *fp, char **out) {
    long len;
    *out = NULL;
    if (!readNumber(fp, '$', &len)) return 0;
    if (len < 0 || len > LONG_MAX - 2) {
        setError("Expected to read string of %ld bytes, which is not in the suitable range", len);
        return 0;
    }
    /* A length the file cannot hold is read short below; do not reserve
     * more than what remains. */
    off_t here = ftello(fp);
    long avail = fileSize > here ? (long)(fileSize - here) : 0;
    long want = len + 2;
    char *b = xmalloc((size_t)(want < avail ? want : avail) + 2);
    errPos = here;
    long got = (long)fread(b, 1, (size_t)(want < avail ? want : avail), fp);
    if (got != want) {
        setError("Expected to read %ld bytes, got %ld bytes", want, got);
        xfree(b);
        return 0;
    }
    if (!expectCrlf(b + len)) {
        xfree(b);
        return 0;
    }
    b[len] = '\0';
    *out = b;
    return 1;
}

/* One command; *multi counts the open MULTI. */
static int checkCommand(FILE *fp, const char *path, int *multi) {
    long argc;
    if (!readNumber(fp, '*', &argc)) return 0;
    for (long i = 0; i < argc; i++) {
        char *s;
        if (!readBulk(fp, &s)) return 0;
        if (i == 0) {
            if (!strcasecmp(s, "multi")) {
                if ((*multi)++) {
                    setError("Unexpected MULTI in AOF %s", path);
                    xfree(s);
                    return 0;
                }
            } else if (!strcasecmp(s, "exec")) {
                if (--(*multi)) {
                    setError("Unexpected EXEC in AOF %s", path);
                    xfree(s);
                    return 0;
                }
            }
        }
        xfree(s);
    }
    return 1;
}

/* An annotation line.  With --truncate-to-timestamp, the first "#TS:"
 * later than it cuts the file there (only the last file; never at offset
 * 0, which would leave nothing).  Returns 1 to go on, 0 when the file was
 * cut; exits on a refusal. */
static int checkAnnotation(FILE *fp, const char *path, int lastFile) {
    char buf[ANNOTATION_MAX];
    errPos = ftello(fp);
    if (!fgets(buf, sizeof(buf), fp)) {
        printf("Failed to read annotations from AOF %s, aborting...\n", path);
        exit(1);
    }
    if (!toTimestamp || strncmp(buf, "#TS:", 4) != 0) return 1;
    char *end;
    errno = 0;
    long ts = strtol(buf + 4, &end, 10);
    if (errno != 0 || *end != '\r') {
        printf("Invalid timestamp annotation\n");
        exit(1);
    }
    if (ts <= toTimestamp) return 1;
    if (errPos == 0) {
        printf("AOF %s has nothing before timestamp %ld, aborting...\n", path, toTimestamp);
        exit(1);
    }
    if (!lastFile) {
        printf("Failed to truncate AOF %s to timestamp %ld to offset %ld because it is not the last file.\n", path,
               toTimestamp, (long)errPos);
        printf("If you insist, please delete all files after this file according to the manifest file and delete "
               "the corresponding records in manifest file manually. Then re-run cairn-check-aof.\n");
        exit(1);
    }
    if (ftruncate(fileno(fp), errPos) == -1) {
        printf("Failed to truncate AOF %s to timestamp %ld\n", path, toTimestamp);
        exit(1);
    }
    return 0;
}

/* Checks the RDB at the start of fp with cairn-check-rdb's report (as
 * redis-check-aof runs redis-check-rdb's) and leaves fp after it; exits
 * when it is not sane. */
static void checkPreamble(FILE *fp, const char *path, off_t size) {
    const unsigned char *p = mmap(NULL, (size_t)size, PROT_READ, MAP_PRIVATE, fileno(fp), 0);
    size_t used = 0;
    int rc = p == MAP_FAILED ? 1 : rdbCheckReport(path, p, (size_t)size, &used);
    if (p != MAP_FAILED) munmap((void *)p, (size_t)size);
    if (rc) {
        printf("RDB preamble of AOF file is not sane, aborting.\n");
        exit(1);
    }
    printf("RDB preamble is OK, proceeding with AOF tail...\n");
    if (fseeko(fp, (off_t)used, SEEK_SET) == -1) {
        printf("Failed to fseek in AOF %s: %s", path, strerror(errno));
        exit(1);
    }
}

static int askYes(void) {
    char buf[2];
    printf("Continue? [y/N]: ");
    fflush(stdout);
    return fgets(buf, sizeof(buf), stdin) != NULL && strncasecmp(buf, "y", 1) == 0;
}

/* Checks one file: name is how it is reported, path where it is.
 * Returns CHECK_*; an invalid file (not fixed) exits. */
static int checkOne(const char *name, const char *path, int lastFile, int fix, int preamble) {
    FILE *fp = fopen(path, "r+");
    if (!fp) {
        printf("Cannot open file %s: %s, aborting...\n", path, strerror(errno));
        exit(1);
    }
    struct stat st;
    if (fstat(fileno(fp), &st) == -1) {
        printf("Cannot stat file: %s, aborting...\n", name);
        exit(1);
    }
    off_t size = fileSize = st.st_size;
    if (size == 0) {
        fclose(fp);
        return CHECK_EMPTY;
    }
    if (preamble) checkPreamble(fp, name, size);
    off_t pos = 0;
    int multi = 0;
    for (;;) {
        if (!multi) pos = ftello(fp);
        int ch = fgetc(fp);
        if (ch == EOF) {
            if (feof(fp)) break;
            printf("Failed to read from AOF %s, aborting...\n", name);
            exit(1);
        }
        ungetc(ch, fp);
        if (ch == '#') {
            if (!checkAnnotation(fp, path, lastFile)) {
                fclose(fp);
                return CHECK_TS_TRUNCATED;
            }
        } else if (ch == '*') {
            if (!checkCommand(fp, path, &multi)) break;
        } else {
            printf("AOF %s format error\n", name);
            break;
        }
    }
    if (feof(fp) && multi && !errText[0]) setError("Reached EOF before reading EXEC for MULTI");
    if (errText[0]) printf("%s\n", errText);
    off_t diff = size - pos;
    if (diff == 0 && toTimestamp) {
        printf("Truncate nothing in AOF %s to timestamp %ld\n", name, toTimestamp);
        fclose(fp);
        return CHECK_OK;
    }
    printf("AOF analyzed: filename=%s, size=%lld, ok_up_to=%lld, ok_up_to_line=%lld, diff=%lld\n", name,
           (long long)size, (long long)pos, line, (long long)diff);
    if (diff > 0) {
        if (!fix) {
            printf("AOF %s is not valid. Use the --fix option to try fixing it.\n", name);
            exit(1);
        }
        if (!lastFile) {
            printf("Failed to truncate AOF %s because it is not the last file\n", name);
            exit(1);
        }
        printf("This will shrink the AOF %s from %lld bytes, with %lld bytes, to %lld bytes\n", name, (long long)size,
               (long long)diff, (long long)pos);
        if (!askYes()) {
            printf("Aborting...\n");
            exit(1);
        }
        if (ftruncate(fileno(fp), pos) == -1) {
            printf("Failed to truncate AOF %s\n", name);
            exit(1);
        }
        fclose(fp);
        return CHECK_TRUNCATED;
    }
    fclose(fp);
    return CHECK_OK;
}

static FILE *openOrExit(const char *path, off_t *size) {
    FILE *fp = fopen(path, "r");
    if (!fp) {
        printf("Cannot open file %s: %s\n", path, strerror(errno));
        exit(1);
    }
    struct stat st;
    if (fstat(fileno(fp), &st) == -1) {
        printf("Cannot stat file: %s\n", path);
        exit(1);
    }
    *size = st.st_size;
    return fp;
}

/* An RDB (an old-style preamble AOF or an RDB base): "REDIS" at the start
 * of a file that holds at least an RDB header. */
static int fileIsRdb(const char *path) {
    off_t size;
    FILE *fp = openOrExit(path, &size);
    char sig[5];
    int yes = size >= 8 && fread(sig, sizeof(sig), 1, fp) == 1 && memcmp(sig, "REDIS", 5) == 0;
    fclose(fp);
    return yes;
}

/* A manifest: some line that is not a comment starts with "file". */
static int fileIsManifest(const char *path) {
    off_t size;
    FILE *fp = openOrExit(path, &size);
    char buf[MANIFEST_LINE_MAX + 1];
    int yes = 0;
    while (size > 0) {
        if (!fgets(buf, sizeof(buf), fp)) {
            if (feof(fp)) break;
            printf("Cannot read file: %s\n", path);
            exit(1);
        }
        if (buf[0] != '#' && !memcmp(buf, "file", 4)) yes = 1;
    }
    fclose(fp);
    return yes;
}

static void printResult(int rc, const char *name, const char *kind) {
    if (rc == CHECK_OK) printf("%s %s is valid\n", kind, name);
    else if (rc == CHECK_EMPTY) printf("%s %s is empty\n", kind, name);
    else if (rc == CHECK_TS_TRUNCATED) printf("Successfully truncated AOF %s to timestamp %ld\n", name, toTimestamp);
    else if (rc == CHECK_TRUNCATED) printf("Successfully truncated AOF %s\n", name);
}

/* The base and incr files of the manifest at path, in order; only the
 * last one may be truncated. */
static void checkMultiPart(const char *dir, const char *path, int fix) {
    printf("Start checking Multi Part AOF\n");
    AofManifestError err;
    AofManifest *m = aofManifestLoadFile(path, &err);
    if (!m) {
        aofManifestLogError(path, &err);
        exit(1);
    }
    int total = (m->hasBase ? 1 : 0) + m->incrCount, n = 0;
    if (m->hasBase) {
        sds fp = sdsCatPrintf(sdsEmpty(), "%s/%s", dir, m->base.name);
        int rdb = fileIsRdb(fp);
        printf("Start to check BASE AOF (%s format).\n", rdb ? "RDB" : "RESP");
        int rc = checkOne(m->base.name, fp, ++n == total, fix, rdb);
        printResult(rc, m->base.name, "BASE AOF");
        sdsFree(fp);
    }
    if (m->incrCount) printf("Start to check INCR files.\n");
    for (int i = 0; i < m->incrCount; i++) {
        sds fp = sdsCatPrintf(sdsEmpty(), "%s/%s", dir, m->incr[i].name);
        int rc = checkOne(m->incr[i].name, fp, ++n == total, fix, 0);
        printResult(rc, m->incr[i].name, "INCR AOF");
        sdsFree(fp);
    }
    aofManifestFree(m);
    printf("All AOF files and manifest are valid\n");
}

int aofCheckMain(int argc, char **argv) {
    const char *path = NULL;
    int fix = 0;
    /* No server here: the log lines a broken manifest prints show role C,
     * as redis-check-aof's do. */
    server.pid = -1;
    if (argc == 2) {
        path = argv[1];
    } else if (argc == 3 && !strcmp(argv[1], "--fix")) {
        path = argv[2];
        fix = 1;
    } else if (argc == 4 && !strcmp(argv[1], "--truncate-to-timestamp")) {
        char *end;
        errno = 0;
        toTimestamp = strtol(argv[2], &end, 10);
        if (errno != 0 || *end != '\0') {
            printf("Invalid timestamp, aborting...\n");
            return 1;
        }
        path = argv[3];
    } else {
        printf("Usage: %s [--fix|--truncate-to-timestamp $timestamp] <file.manifest|file.aof>\n", argv[0]);
        return 1;
    }
    char *copy = xstrdup(path);
    sds dir = sdsNew(dirname(copy));
    xfree(copy);
    if (fileIsManifest(path)) {
        checkMultiPart(dir, path, fix);
    } else {
        int rdb = fileIsRdb(path);
        printf("Start checking Old-Style AOF\n");
        printResult(checkOne(path, path, 1, fix, rdb), path, "AOF");
    }
    sdsFree(dir);
    return 0;
}
