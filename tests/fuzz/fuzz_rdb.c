/* fuzz_rdb.c -- libFuzzer target for the RDB loader (rdbLoadFile) and
 * RESTORE payloads (rdbRestoreValue), linked with the whole server but its
 * main().
 *
 * Input layout: byte 0 selects the mode, the rest is the data.
 *   bit 0 clear: a DUMP payload body (type byte and value); the harness
 *     appends the RDB version and a valid CRC-64, so mutations reach the
 *     value decoders instead of dying at the checksum.  bit 1: deep
 *     sanitization (sanitize-dump-payload yes) instead of shallow.
 *   bit 0 set: a whole snapshot file, loaded from a memfd into empty
 *     databases (rdbchecksum off when bit 2 is set, so mutations past the
 *     header are decoded rather than refused at the CRC; bit 1 loads it
 *     with sanitize-dump-payload yes).  Then every loaded key is looked up,
 *     which runs the deferred checks of listpacks loaded with only their
 *     header checked (a corrupt one's key goes), and each remaining value
 *     is walked and dumped.  FUZZ_EAGER=1 checks them at load instead.
 *   Bits 0 and 3 set: the file is instead fed to an RdbStream in pieces,
 *     which must end as the whole-buffer load did.
 * Checked: no crash, leak or read past the input (ASan/UBSan); a value the
 * loader accepts dumps to a payload that restores to a value with the same
 * DEBUG DIGEST-VALUE (the value is consistent with its encoding).  Seeds: tests/fuzz/corpus_rdb
 * (real payloads and files written by Cairn and redis-server 7.0.15).
 * Built and run by `make fuzz` (FUZZ_SECONDS each). */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "core/command.h"
#include "core/config.h"
#include "core/log.h"
#include "core/server.h"
#include "db/db.h"
#include "db/object.h"
#include "ds/crc64.h"
#include "ds/sds.h"
#include "persist/digest.h"
#include "persist/rdb.h"
#include "script/function.h"
#include "types/hash.h"
#include "types/list.h"
#include "types/set.h"
#include "types/zset.h"

#define FUZZ_ASSERT(c)                                                                                       \
    do {                                                                                                     \
        if (!(c)) abort();                                                                                   \
    } while (0)

static int ready;

static void setup(void) {
    configInitDefaults(&server.cfg);
    server.cfg.loglevel = LL_WARNING + 1; /* quiet */
    serverUpdateTime();
    objectRegisterType(OBJ_LIST, &listObjectType);
    objectRegisterType(OBJ_SET, &setObjectType);
    objectRegisterType(OBJ_ZSET, &zsetObjectType);
    objectRegisterType(OBJ_HASH, &hashObjectType);
    rdbRegisterTypes();
    dbConfig = &server.cfg.keyspace;
    dbHooks.verifyValue = rdbVerifyValue;
    if (getenv("FUZZ_EAGER")) rdbDeferLoadChecks = 0; /* replays: the checks at load */
    server.db = dbCreateAll(server.cfg.databases);
    commandTableInit();
    ready = 1;
}

/* A value the loader accepted (and its deferred check, if any, passed):
 * it dumps to a payload that deep restores to the same digest. */
static void roundTrip(const kvobj *o) {
    sds d1 = rdbDumpValue(o);
    kvobj *o2 = rdbRestoreValue("k", 1, (const unsigned char *)d1, sdsLen(d1), 1);
    FUZZ_ASSERT(o2 != NULL);
    unsigned char h1[20] = {0}, h2[20] = {0};
    digestValue(o, h1);
    digestValue(o2, h2);
    FUZZ_ASSERT(memcmp(h1, h2, 20) == 0);
    sdsFree(d1);
    kvFree(o2);
}

/* Looks up every loaded key (the deferred checks run), then round-trips
 * what stays. */
static void touchAll(void) {
    for (int j = 0; j < server.cfg.databases; j++) {
        Db *db = &server.db[j];
        size_t n = htabSize(&db->keys), k = 0;
        if (!n) continue;
        sds *names = malloc(sizeof(sds) * n);
        HtabIter it;
        kvobj *o;
        htabIterInit(&it, &db->keys);
        while ((o = htabIterNext(&it)) != NULL && k < n) names[k++] = sdsNewLen(kvKey(o), kvKeyLen(o));
        htabIterRelease(&it);
        for (size_t i = 0; i < k; i++) {
            o = dbLookupRead(db, names[i], sdsLen(names[i]), LOOKUP_NONOTIFY | LOOKUP_NOEXPIRE);
            if (!o) continue;
            FUZZ_ASSERT(!kvUnverified(o));
            /* Walked and dumped (a file-loaded value's dump does not
             * always restore to the same digest, with the checks at load
             * too: not yet asserted here). */
            unsigned char h[20] = {0};
            digestValue(o, h);
            sdsFree(rdbDumpValue(o));
        }
        for (size_t i = 0; i < k; i++) sdsFree(names[i]);
        free(names);
    }
}

static void payloadCase(const uint8_t *data, size_t size, int deep) {
    sds p = sdsNewLen(data, size);
    unsigned char trailer[10] = {RDB_VERSION, 0};
    p = sdsCatLen(p, trailer, 2);
    uint64_t crc = crc64(0, (const unsigned char *)p, sdsLen(p));
    for (int i = 0; i < 8; i++) trailer[i] = (unsigned char)(crc >> (8 * i));
    p = sdsCatLen(p, trailer, 8);
    FUZZ_ASSERT(rdbPayloadIsIntact((const unsigned char *)p, sdsLen(p)));
    kvobj *o = rdbRestoreValue("k", 1, (const unsigned char *)p, sdsLen(p), deep);
    if (o) {
        roundTrip(o);
        kvFree(o);
    }
    sdsFree(p);
}

static void fileCase(const uint8_t *data, size_t size, int noChecksum, int deep) {
    int fd = memfd_create("fuzz_rdb", 0);
    if (fd < 0) return;
    size_t off = 0;
    while (off < size) {
        ssize_t n = write(fd, data + off, size - off);
        if (n <= 0) break;
        off += (size_t)n;
    }
    char path[64];
    snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
    server.cfg.rdbchecksum = !noChecksum;
    server.cfg.sanitizeDumpPayload = deep ? SANITIZE_PAYLOAD_YES : SANITIZE_PAYLOAD_NO;
    RdbLoadInfo info;
    sds err = NULL;
    if (rdbLoadFile(path, 0, &info, &err) == 0) touchAll();
    sdsFree(err);
    close(fd);
    server.cfg.sanitizeDumpPayload = SANITIZE_PAYLOAD_NO;
    for (int j = 0; j < server.cfg.databases; j++) dbEmpty(&server.db[j]);
    functionsRdbFlush();
    server.cfg.rdbchecksum = 1;
}

/* The same file fed to an RdbStream in pieces (sizes from the input's
 * own bytes, 1 to 256): it must end as the whole-file load did (loaded or
 * not, the same keys), never reading past a piece. */
static void streamCase(const uint8_t *data, size_t size) {
    RdbLoadInfo whole;
    size_t used;
    sds err = NULL;
    int wholeRc = rdbLoadBuffer(data, size, 0, &whole, &used, &err);
    sdsFree(err);
    err = NULL;
    for (int j = 0; j < server.cfg.databases; j++) dbEmpty(&server.db[j]);
    functionsRdbFlush();
    RdbStream *st = rdbStreamNew(NULL, 0);
    unsigned char *buf = NULL;
    size_t have = 0, off = 0, k = 0;
    int done = 0, rc = 0;
    while (!done && rc == 0) {
        size_t piece = off < size ? 1 + data[k++ % size] : 0;
        if (piece > size - off) piece = size - off;
        /* A copy of exactly the bytes given, so ASan sees any overread. */
        unsigned char *nb = malloc(have + piece + 1);
        if (have) memcpy(nb, buf, have);
        memcpy(nb + have, data + off, piece);
        free(buf);
        buf = nb;
        have += piece;
        off += piece;
        long long n = rdbStreamFeed(st, buf, have, off == size, &done, &err);
        if (n < 0) {
            rc = -1;
            break;
        }
        memmove(buf, buf + n, have - (size_t)n);
        have -= (size_t)n;
        if (done == 2) done = 0;
        if (!done && off == size && n == 0) rc = -1; /* final and stuck: cannot be */
    }
    free(buf);
    sdsFree(err);
    FUZZ_ASSERT((rc == 0) == (wholeRc == 0));
    if (rc == 0) FUZZ_ASSERT(rdbStreamInfo(st)->keysLoaded == whole.keysLoaded);
    rdbStreamFree(st);
    for (int j = 0; j < server.cfg.databases; j++) dbEmpty(&server.db[j]);
    functionsRdbFlush();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (!ready) setup();
    if (size < 1) return 0;
    uint8_t mode = data[0];
    if ((mode & 9) == 9) streamCase(data + 1, size - 1);
    else if (mode & 1) fileCase(data + 1, size - 1, mode & 4, mode & 2);
    else payloadCase(data + 1, size - 1, mode & 2);
    return 0;
}
