/* check_rdb.c -- cairn-check-rdb: checks an RDB file without a running
 * server (the server binary run under that name, as redis-check-rdb is
 * redis-server's), printing what redis-check-rdb 7.0 prints.
 *
 * The file is walked record by record here (header, opcodes, keys), and
 * each value is read by the server's own loader (rdbCheckValue, with deep
 * sanitization, as redis-check-rdb reads them), so what the tool accepts
 * is what the server loads.  Output: "[offset N] ..." lines for the file,
 * each AUX field, each SELECTDB and the checksum (N the bytes read so
 * far), then "\o/ RDB looks OK! \o/" and the keys, expires and keys
 * already expired (exit 0); or "--- RDB ERROR DETECTED ---", the offset
 * and reason, what was being read, the same counts (exit 1).  Invariant:
 * a sound file gives redis-check-rdb's output byte for byte; a broken
 * one its lines with Cairn's reason for a value (Redis's names a line of
 * its rdb.c). */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/log.h"
#include "core/server.h"
#include "db/object.h"
#include "ds/crc64.h"
#include "ds/rdbcodec.h"
#include "ds/util.h"
#include "persist/persist.h"
#include "persist/rdb.h"
#include "persist/rdb_int.h"

int rdbCheckInvoked(const char *argv0) {
    const char *base = strrchr(argv0, '/');
    base = base ? base + 1 : argv0;
    return strstr(base, "cairn-check-rdb") != NULL;
}

/* What was being read when an error is found (redis-check-rdb's words). */
enum { DOING_START, DOING_TYPE, DOING_EXPIRE, DOING_KEY, DOING_VALUE, DOING_CHECKSUM, DOING_LEN, DOING_AUX };
static const char *const doingNames[] = {"start",    "read-type", "read-expire", "read-key",
                                         "read-object-value", "check-sum", "read-len",   "read-aux"};

/* Type names by RDB type byte, as redis-check-rdb 7.0 names them (its
 * table ends at 18: type 19, a 7.0 stream, is "unknown" there too). */
static const char *const typeNames[] = {
    "string",      "list-linked",  "set-hashtable", "zset-v1",     "hash-hashtable", "zset-v2",
    "module-pre-release", "module-value", "", "hash-zipmap", "list-ziplist",   "set-intset",
    "zset-ziplist", "hash-ziplist", "quicklist",    "stream",      "hash-listpack",  "zset-listpack",
    "quicklist-v2"};
/* Redis 7.4's hashes with field TTLs (types 22-25), as its check names them. */
static const char *const fieldTtlTypeNames[] = {"hash-hashtable-md-pre-ga", "hash-listpack-md-pre-ga",
                                                "hash-hashtable-md", "hash-listpack-md"};

static const char *checkTypeName(int t) {
    if ((unsigned)t < sizeof(typeNames) / sizeof(typeNames[0])) return typeNames[t];
    if (t >= RDB_TYPE_HASH_METADATA_PRE_GA && t <= RDB_TYPE_HASH_LISTPACK_EX)
        return fieldTtlTypeNames[t - RDB_TYPE_HASH_METADATA_PRE_GA];
    return "unknown";
}

typedef struct Check {
    const unsigned char *p;
    size_t len, pos;
    int doing;
    int keyType; /* 0 until a key is read, as redis-check-rdb starts */
    sds key;     /* the key whose value is being read */
    unsigned long keys, expires, expired;
} Check;

static void showCounts(const Check *c) {
    printf("[info] %lu keys read\n", c->keys);
    printf("[info] %lu expires\n", c->expires);
    printf("[info] %lu already expired\n", c->expired);
}

static void info(const Check *c, const char *msg) { printf("[offset %zu] %s\n", c->pos, msg); }

static int fail(const Check *c, const char *msg) {
    printf("--- RDB ERROR DETECTED ---\n");
    printf("[offset %zu] %s\n", c->pos, msg);
    printf("[additional info] While doing: %s\n", doingNames[c->doing]);
    if (c->key) printf("[additional info] Reading key '%s'\n", c->key);
    if (c->keyType != -1)
        printf("[additional info] Reading type %d (%s)\n", c->keyType, checkTypeName(c->keyType));
    showCounts(c);
    return 1;
}

static int failEof(const Check *c) { return fail(c, "Unexpected EOF reading RDB file"); }

static int readBytes(Check *c, size_t n, const unsigned char **out) {
    if (c->len - c->pos < n) return -1;
    *out = c->p + c->pos;
    c->pos += n;
    return 0;
}

static int readLen(Check *c, uint64_t *v) {
    int special;
    size_t pos = c->pos;
    if (rdbDecodeLen(c->p, c->len, &pos, v, &special) < 0 || special) return -1;
    c->pos = pos;
    return 0;
}

/* A string; when it is cut off by the end, c->pos stays past the length
 * fields that were whole (the offset redis-check-rdb reports). */
static int readString(Check *c, sds *out) {
    size_t pos = c->pos;
    if (rdbDecodeString(c->p, c->len, &pos, out) < 0) {
        c->pos = rdbStringPrefixEnd(c->p, c->len, c->pos);
        return -1;
    }
    c->pos = pos;
    return 0;
}

/* 22-25: Redis 7.4's hashes with field TTLs (in version 12 files). */
static int isObjectType(int t) {
    return (t >= 0 && t <= 7) || (t >= 9 && t <= 19) || (t >= RDB_TYPE_HASH_METADATA_PRE_GA && t <= RDB_TYPE_HASH_LISTPACK_EX);
}

/* The items of a module value or aux record up to the module EOF opcode:
 * the check has no module to read them, so, as redis-check-rdb, it reads
 * past them by their opcodes (integers, float, double, string).  -1 when
 * cut off or an opcode is unknown. */
static int skipModuleItems(Check *c) {
    for (;;) {
        uint64_t op, v;
        const unsigned char *b;
        sds str;
        if (readLen(c, &op) < 0) return -1;
        switch (op) {
        case 0: return 0;
        case 1:
        case 2:
            if (readLen(c, &v) < 0) return -1;
            break;
        case 3:
            if (readBytes(c, 4, &b) < 0) return -1;
            break;
        case 4:
            if (readBytes(c, 8, &b) < 0) return -1;
            break;
        case 5:
            if (readString(c, &str) < 0) return -1;
            sdsFree(str);
            break;
        default: return -1;
        }
    }
}

static int checkBuffer(Check *c) {
    const unsigned char *b;
    if (readBytes(c, 9, &b) < 0) {
        c->pos = 0;
        return failEof(c);
    }
    if (memcmp(b, "REDIS", 5) != 0) return fail(c, "Wrong signature trying to load DB from file");
    char ver[5];
    memcpy(ver, b + 5, 4);
    ver[4] = '\0';
    int version = atoi(ver);
    if (version < 1 || (version > RDB_VERSION && version != RDB_VERSION_FIELD_TTL)) {
        char msg[64];
        snprintf(msg, sizeof(msg), "Can't handle RDB format version %d", version);
        return fail(c, msg);
    }
    long long now = mstime(), expire = -1;
    for (;;) {
        c->doing = DOING_TYPE;
        if (readBytes(c, 1, &b) < 0) return failEof(c);
        int type = b[0];
        uint64_t v;
        if (type == RDB_OPCODE_EXPIRETIME || type == RDB_OPCODE_EXPIRETIME_MS) {
            c->doing = DOING_EXPIRE;
            size_t n = type == RDB_OPCODE_EXPIRETIME ? 4 : 8;
            if (readBytes(c, n, &b) < 0) return failEof(c);
            uint64_t t = 0;
            for (size_t i = 0; i < n; i++) t |= (uint64_t)b[i] << (8 * i);
            expire = type == RDB_OPCODE_EXPIRETIME ? (long long)(int32_t)t * 1000 : (long long)t;
            continue;
        }
        if (type == RDB_OPCODE_FREQ) {
            if (readBytes(c, 1, &b) < 0) return failEof(c);
            continue;
        }
        if (type == RDB_OPCODE_IDLE) {
            if (readLen(c, &v) < 0) return failEof(c);
            continue;
        }
        if (type == RDB_OPCODE_EOF) break;
        if (type == RDB_OPCODE_SELECTDB) {
            c->doing = DOING_LEN;
            if (readLen(c, &v) < 0) return failEof(c);
            char msg[64];
            snprintf(msg, sizeof(msg), "Selecting DB ID %llu", (unsigned long long)v);
            info(c, msg);
            continue;
        }
        if (type == RDB_OPCODE_RESIZEDB) {
            c->doing = DOING_LEN;
            if (readLen(c, &v) < 0 || readLen(c, &v) < 0) return failEof(c);
            continue;
        }
        if (type == RDB_OPCODE_AUX) {
            c->doing = DOING_AUX;
            sds k = NULL, val = NULL;
            if (readString(c, &k) < 0 || readString(c, &val) < 0) {
                sdsFree(k);
                return failEof(c);
            }
            /* Printed as C strings, as redis-check-rdb prints them. */
            sds msg = sdsCatPrintf(sdsEmpty(), "AUX FIELD %s = '%s'", k, val);
            info(c, msg);
            sdsFree(msg);
            sdsFree(k);
            sdsFree(val);
            continue;
        }
        if (type == RDB_OPCODE_MODULE_AUX) {
            c->doing = DOING_AUX;
            uint64_t when;
            if (readLen(c, &v) < 0 || readLen(c, &when) < 0) return failEof(c);
            uint64_t whenOp = when;
            if (readLen(c, &when) < 0) return failEof(c);
            if (whenOp != 2) return fail(c, "bad when_opcode");
            /* the type's name from its id: 9 characters of 6 bits */
            static const char set[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
            char msg[64] = "MODULE AUX for: ";
            uint64_t id = v >> 10;
            for (int i = 8; i >= 0; i--, id >>= 6) msg[16 + i] = set[id & 63];
            msg[25] = '\0';
            info(c, msg);
            if (skipModuleItems(c) < 0) return failEof(c);
            continue;
        }
        if (type == RDB_OPCODE_FUNCTION2) {
            sds code;
            if (readString(c, &code) < 0) return failEof(c);
            sdsFree(code);
            continue;
        }
        if (!isObjectType(type)) {
            char msg[64];
            snprintf(msg, sizeof(msg), "Invalid object type: %d", type);
            return fail(c, msg);
        }
        c->keyType = type;
        c->doing = DOING_KEY;
        if (readString(c, &c->key) < 0) return failEof(c);
        c->keys++;
        c->doing = DOING_VALUE;
        if (type == RDB_TYPE_MODULE_2) { /* the module's type id, its items */
            if (readLen(c, &v) < 0 || skipModuleItems(c) < 0) return failEof(c);
            if (expire != -1) {
                c->expires++;
                if (expire < now) c->expired++;
            }
            sdsFree(c->key);
            c->key = NULL;
            c->keyType = -1;
            expire = -1;
            continue;
        }
        int empty = 0;
        const char *why = NULL;
        kvobj *o = rdbCheckValue(c->p, c->len, &c->pos, type, c->key, sdsLen(c->key), &empty, &why);
        if (!o && !empty) {
            char msg[512];
            if (!why || !strcmp(why, "Unexpected EOF reading RDB file"))
                snprintf(msg, sizeof(msg), "Unexpected EOF reading RDB file");
            else
                snprintf(msg, sizeof(msg), "Internal error in RDB reading offset 0, function at rdb.c: %s", why);
            fail(c, msg);
            /* A value that fails its integrity check ends the process at
             * once, as in redis-check-rdb (and so in redis-check-aof). */
            size_t wl = why ? strlen(why) : 0;
            static const char tail[] = "integrity check failed.";
            if (wl >= sizeof(tail) - 1 && !strcmp(why + wl - (sizeof(tail) - 1), tail)) {
                fflush(stdout);
                serverLog(LL_WARNING, "Terminating server after rdb file reading failure.");
                exit(1);
            }
            return 1;
        }
        if (o) kvFree(o);
        if (expire != -1) {
            c->expires++;
            if (expire < now) c->expired++;
        }
        sdsFree(c->key);
        c->key = NULL;
        c->keyType = -1;
        expire = -1;
    }
    if (version >= 5 && server.cfg.rdbchecksum) {
        size_t end = c->pos;
        c->doing = DOING_CHECKSUM;
        if (readBytes(c, 8, &b) < 0) return failEof(c);
        uint64_t stored = 0;
        for (int i = 0; i < 8; i++) stored |= (uint64_t)b[i] << (8 * i);
        if (stored == 0) info(c, "RDB file was saved with checksum disabled: no check performed.");
        else if (stored != crc64(0, c->p, end)) return fail(c, "RDB CRC error");
        else info(c, "Checksum OK");
    }
    return 0;
}

int rdbCheckReport(const char *path, const unsigned char *p, size_t len, size_t *used) {
    printf("[offset 0] Checking RDB file %s\n", path);
    Check c = {.p = p, .len = len};
    int rc = checkBuffer(&c);
    if (rc == 0) {
        info(&c, "\\o/ RDB looks OK! \\o/");
        showCounts(&c);
    }
    fflush(stdout);
    sdsFree(c.key);
    *used = c.pos;
    return rc;
}

int rdbCheckMain(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "Usage: %s <rdb-file-name>\n", argv[0]);
        return 1;
    }
    const char *path = argv[1];
    /* No server: log lines show role C, as redis-check-rdb's do; the
     * loader's own lines are not the report. */
    server.pid = -1;
    int fd = open(path, O_RDONLY);
    if (fd < 0) {
        printf("[offset 0] Checking RDB file %s\n", path);
        return 1; /* redis-check-rdb says nothing more */
    }
    struct stat st;
    if (fstat(fd, &st) < 0) {
        close(fd);
        return 1;
    }
    size_t len = (size_t)st.st_size;
    const unsigned char *p = len ? mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0) : (const unsigned char *)"";
    close(fd);
    if (p == MAP_FAILED) {
        printf("[offset 0] Checking RDB file %s\n", path);
        return 1;
    }
    size_t used;
    int rc = rdbCheckReport(path, p, len, &used);
    if (len) munmap((void *)p, len);
    return rc;
}
