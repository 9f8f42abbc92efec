/* check_rdb.c -- cairn-check-rdb: checks an RDB file without a running
 * server (the server binary run under that name, as redis-check-rdb is
 * redis-server's).
 *
 * The file goes through the server's own loader (rdb.c) into empty
 * databases, so what the tool accepts is exactly what the server loads.  It
 * prints the version, then either the offset and reason of the first error
 * (exit 1) or the keys read per type, the expires and the keys already
 * expired (exit 0). */
#include <stdio.h>
#include <string.h>

#include "core/log.h"
#include "core/server.h"
#include "db/db.h"
#include "db/object.h"
#include "ds/htab.h"
#include "persist/persist.h"
#include "persist/rdb.h"

int rdbCheckInvoked(const char *argv0) {
    const char *base = strrchr(argv0, '/');
    base = base ? base + 1 : argv0;
    return strstr(base, "cairn-check-rdb") != NULL;
}

static const char *rdbTypeNameOf(int type) {
    switch (type) {
    case OBJ_STRING: return "string";
    case OBJ_LIST: return "list";
    case OBJ_SET: return "set";
    case OBJ_ZSET: return "zset";
    case OBJ_HASH: return "hash";
    default: return "other";
    }
}

/* Counts what the load put in the databases. */
static void reportKeys(const RdbLoadInfo *info) {
    long long perType[8] = {0}, expires = 0;
    for (int j = 0; j < server.cfg.databases; j++) {
        HtabIter it;
        htabIterInit(&it, &server.db[j].keys);
        kvobj *o;
        while ((o = htabIterNext(&it)) != NULL) {
            int t = kvType(o);
            perType[t >= 0 && t < 8 ? t : 7]++;
            if (kvExpire(o) != -1) expires++;
        }
        htabIterRelease(&it);
    }
    printf("[info] %lld keys read\n", info->keysLoaded + info->keysExpired);
    printf("[info] %lld expires\n", expires + info->keysExpired);
    printf("[info] %lld already expired\n", info->keysExpired);
    for (int t = 0; t < 8; t++)
        if (perType[t]) printf("[info] %lld %s keys\n", perType[t], rdbTypeNameOf(t));
}

int rdbCheckMain(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "Usage: %s <rdb-file-name>\n", argv[0]);
        return 1;
    }
    const char *path = argv[1];
    server.cfg.loglevel = LL_WARNING + 1; /* the loader's lines are not the report */
    printf("[offset 0] Checking RDB file %s\n", path);
    fflush(stdout);
    RdbLoadInfo info;
    sds err = NULL;
    int rc = rdbLoadFile(path, 0, &info, &err);
    if (rc == 1) {
        printf("--- RDB ERROR DETECTED ---\n[offset 0] The file is missing or empty\n");
        return 1;
    }
    if (info.version) printf("[offset 9] RDB version %d\n", info.version);
    if (rc < 0) {
        printf("--- RDB ERROR DETECTED ---\n");
        if (info.errReason)
            printf("[offset %zu] %s\n", info.errOffset, info.errReason);
        else
            printf("[offset 0] %s\n", err);
        printf("[info] %lld keys read before the error\n", info.keysLoaded + info.keysExpired);
        sdsFree(err);
        return 1;
    }
    printf("\\o/ RDB looks OK! \\o/\n");
    reportKeys(&info);
    return 0;
}
