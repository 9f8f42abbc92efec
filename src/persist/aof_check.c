/* aof_check.c -- cairn-check-aof: checks an AOF (a manifest and its files,
 * or a single file) and reports the offset of the first bad command;
 * --fix truncates a cut-off or broken end of the last file (after asking),
 * --truncate-to-timestamp T cuts the last file before its first #TS
 * annotation later than T.  The server binary runs this when called by
 * that name (main.c), so RDB preambles are checked by the server's own
 * loader. */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/server.h"
#include "ds/alloc.h"
#include "ds/util.h"
#include "persist/aof.h"
#include "persist/aof_int.h"
#include "persist/rdb.h"

typedef struct CheckCtx {
    long long line;        /* lines up to the last good command */
    long long truncateTs;  /* --truncate-to-timestamp, 0 when not given */
    size_t tsCut;          /* offset of the first annotation later than it */
    int tsFound;
} CheckCtx;

static int countCommand(void *priv, int argc, sds *argv, size_t start, size_t end) {
    CheckCtx *c = priv;
    c->line += 1 + 2 * (long long)argc;
    (void)argv;
    (void)start;
    (void)end;
    return 0;
}

static int checkAnnotation(void *priv, const char *line, size_t len, size_t start) {
    CheckCtx *c = priv;
    c->line++;
    if (c->truncateTs && !c->tsFound && len > 4 && memcmp(line, "#TS:", 4) == 0) {
        long long ts;
        size_t l = len - 4;
        while (l && (line[4 + l - 1] == '\n' || line[4 + l - 1] == '\r')) l--;
        if (stringToLongLong(line + 4, l, &ts) && ts > c->truncateTs) {
            c->tsFound = 1;
            c->tsCut = start;
            return -1;
        }
    }
    return 0;
}

static int askYes(void) {
    char buf[2] = {0};
    printf("Continue? [y/N]: ");
    fflush(stdout);
    if (fgets(buf, sizeof(buf), stdin) == NULL || (buf[0] != 'y' && buf[0] != 'Y')) {
        printf("Aborting...\n");
        return 0;
    }
    return 1;
}

/* Checks one file.  Returns 0 valid (or fixed), 1 invalid. */
static int checkFile(const char *path, const char *label, int last, int fix, long long truncateTs) {
    int fd = open(path, fix || truncateTs ? O_RDWR : O_RDONLY);
    if (fd < 0) {
        printf("Cannot open file %s: %s\n", path, strerror(errno));
        return 1;
    }
    struct stat st;
    if (fstat(fd, &st) < 0) {
        printf("Cannot stat file %s: %s\n", path, strerror(errno));
        close(fd);
        return 1;
    }
    size_t len = (size_t)st.st_size;
    if (len == 0) {
        printf("%s %s is empty\n", label, path);
        close(fd);
        return 0;
    }
    const unsigned char *p = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) {
        printf("Cannot read file %s: %s\n", path, strerror(errno));
        close(fd);
        return 1;
    }
    size_t pos = 0;
    int rc = 0;
    if (len >= 5 && memcmp(p, "REDIS", 5) == 0) {
        printf("The AOF appears to start with an RDB preamble.\nChecking the RDB preamble to start:\n");
        RdbLoadInfo info;
        sds err = NULL;
        if (rdbLoadBuffer(p, len, 1, &info, &pos, &err) < 0) {
            printf("RDB preamble of AOF file is not sane, aborting: %s\n", err);
            sdsFree(err);
            rc = 1;
            goto cleanup;
        }
        printf("RDB preamble is OK, proceeding with AOF tail...\n");
    }
    CheckCtx ctx = {.truncateTs = truncateTs};
    size_t stop;
    int pr = aofParse(p, len, pos, countCommand, checkAnnotation, &ctx, &stop);
    if (truncateTs) {
        if (pr == AOF_PARSE_STOPPED && ctx.tsFound) {
            if (!last) {
                printf("Only the last AOF file can be truncated to a timestamp: %s\n", path);
                rc = 1;
            } else if (ftruncate(fd, (off_t)ctx.tsCut) < 0) {
                printf("Failed to truncate AOF %s to timestamp %lld: %s\n", path, truncateTs, strerror(errno));
                rc = 1;
            } else {
                printf("Successfully truncated AOF %s to timestamp %lld\n", path, truncateTs);
            }
            goto cleanup;
        }
        if (pr == AOF_PARSE_STOPPED) pr = AOF_PARSE_OK;
    }
    if (pr == AOF_PARSE_OK) {
        printf("%s %s is valid\n", label, path);
        goto cleanup;
    }
    const char *why = pr == AOF_PARSE_TRUNCATED ? "truncated (a command is cut off)" : "bad format";
    printf("0x%16llx: %s\n", (unsigned long long)stop, why);
    printf("AOF analyzed: filename=%s, size=%zu, ok_up_to=%zu, ok_up_to_line=%lld, diff=%zu\n", path, len, stop,
           ctx.line + 1, len - stop);
    if (!fix) {
        printf("AOF %s is not valid. Use the --fix option to try fixing it.\n", path);
        rc = 1;
    } else if (!last) {
        printf("Only the last AOF file can be fixed: %s\n", path);
        rc = 1;
    } else {
        printf("This will shrink the AOF %s from %zu bytes, with %zu bytes, to %zu bytes\n", path, len, len - stop,
               stop);
        if (!askYes()) {
            rc = 1;
        } else if (ftruncate(fd, (off_t)stop) < 0) {
            printf("Failed to truncate AOF %s: %s\n", path, strerror(errno));
            rc = 1;
        } else {
            printf("Successfully truncated AOF %s\n", path);
        }
    }
cleanup:
    munmap((void *)p, len);
    close(fd);
    return rc;
}

/* A manifest is a text file whose first non-comment line starts with
 * "file ". */
static int looksLikeManifest(const char *path) {
    FILE *fp = fopen(path, "r");
    if (!fp) return 0;
    char buf[1100];
    int yes = 0;
    while (fgets(buf, sizeof(buf), fp)) {
        if (buf[0] == '#') continue;
        yes = strncmp(buf, "file ", 5) == 0;
        break;
    }
    fclose(fp);
    return yes;
}

static int checkManifest(const char *path, int fix, long long truncateTs) {
    printf("Start checking Multi Part AOF\n");
    sds err = NULL;
    AofManifest *m = aofManifestLoadFile(path, &err);
    if (!m) {
        printf("%s\n", err);
        sdsFree(err);
        return 1;
    }
    char *copy = xstrdup(path);
    sds dir = sdsNew(dirname(copy));
    xfree(copy);
    int rc = 0;
    int files = (m->hasBase ? 1 : 0) + m->incrCount;
    if (m->hasBase) {
        sds fp = sdsCatPrintf(sdsEmpty(), "%s/%s", dir, m->base.name);
        printf("Start to check BASE AOF.\n");
        rc |= checkFile(fp, "BASE AOF", files == 1, fix, truncateTs);
        sdsFree(fp);
    }
    if (m->incrCount) printf("Start to check INCR files.\n");
    for (int i = 0; i < m->incrCount && !rc; i++) {
        sds fp = sdsCatPrintf(sdsEmpty(), "%s/%s", dir, m->incr[i].name);
        rc |= checkFile(fp, "INCR AOF", i == m->incrCount - 1, fix, truncateTs);
        sdsFree(fp);
    }
    if (!rc) printf("All AOF files and manifest are valid\n");
    sdsFree(dir);
    aofManifestFree(m);
    return rc;
}

int aofCheckMain(int argc, char **argv) {
    int fix = 0;
    long long truncateTs = 0;
    const char *path = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--fix")) {
            fix = 1;
        } else if (!strcmp(argv[i], "--truncate-to-timestamp") && i + 1 < argc) {
            if (!stringToLongLong(argv[i + 1], strlen(argv[i + 1]), &truncateTs) || truncateTs <= 0) {
                printf("Invalid timestamp: %s\n", argv[i + 1]);
                return 1;
            }
            i++;
        } else if (!path && argv[i][0] != '-') {
            path = argv[i];
        } else {
            path = NULL;
            break;
        }
    }
    if (!path || (fix && truncateTs)) {
        printf("Usage: %s [--fix|--truncate-to-timestamp $timestamp] <file.manifest|file.aof>\n", argv[0]);
        return 1;
    }
    int rc = looksLikeManifest(path) ? checkManifest(path, fix, truncateTs)
                                     : checkFile(path, "AOF", 1, fix, truncateTs);
    return rc ? 1 : 0;
}
