/* fuzz_http.c -- libFuzzer target for src/proto/http_parse.c and
 * src/proto/websocket.c (the HTTP gateway's request side).
 *
 * Input layout: byte 0 seeds the chunk sizes; byte 1 bit 0 starts the
 * connection as a WebSocket (after a valid handshake prepended here), so
 * short inputs reach the frame parser; the rest is the byte stream a
 * client sends.  The stream is fed the way net.c feeds a connection: the
 * pending bytes grow by pseudo-random chunks, next() is called until it
 * needs more, consumed bytes are dropped.  Checked: consumed <= len; every
 * command has argc > 0 and non-NULL arguments; nothing leaks (xmallocUsed
 * returns to its start). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ds/alloc.h"
#include "ds/sds.h"
#include "proto/http_parse.h"

#define FUZZ_ASSERT(c)                                                                                       \
    do {                                                                                                     \
        if (!(c)) abort();                                                                                   \
    } while (0)

static uint32_t rngState;

static uint32_t rng(void) {
    rngState ^= rngState << 13;
    rngState ^= rngState >> 17;
    rngState ^= rngState << 5;
    return rngState;
}

static int fakeDb;
static const int defaultDb = 0;
static const long long maxRequest = 64 * 1024;
static size_t written;

static void answer(void *owner, int status, int closeAfter) {
    (void)owner;
    (void)closeAfter;
    FUZZ_ASSERT(status >= 200 && status < 600);
    written++;
}
static void writeBytes(void *owner, const char *p, size_t len, int closeAfter) {
    (void)owner;
    (void)closeAfter;
    FUZZ_ASSERT(p && len > 0);
    written += len;
}
static int currentDb(void *owner) {
    (void)owner;
    return fakeDb;
}

static int consoleOn;

static void feed(const uint8_t *data, size_t size, int chunked) {
    HttpConn *st = httpProtocol.create();
    consoleOn = size ? data[0] & 1 : 0; /* GET / as the console (http-console) or as Webdis's 403 */
    st->hooks = (HttpHooks){.owner = st, .answer = answer, .write = writeBytes, .currentDb = currentDb,
                            .defaultDb = &defaultDb, .maxRequestSize = &maxRequest, .console = &consoleOn};
    sds pending = sdsEmpty();
    size_t fed = 0;
    ProtoLimits lim = {512 * 1024 * 1024, 0};
    while (fed < size) {
        size_t n = chunked ? 1 + rng() % 64 : size;
        if (n > size - fed) n = size - fed;
        pending = sdsCatLen(pending, (const char *)data + fed, n);
        fed += n;
        for (int guard = 0; guard < 100000; guard++) {
            ProtoCommand cmd;
            ProtoStatus s = httpProtocol.next(st, pending, sdsLen(pending), &lim, &cmd);
            FUZZ_ASSERT(cmd.consumed <= sdsLen(pending));
            sdsRange(pending, (ssize_t)cmd.consumed, -1);
            if (s == PROTO_INCOMPLETE) break;
            FUZZ_ASSERT(s == PROTO_COMPLETE);
            if (cmd.argc == 0) continue;
            FUZZ_ASSERT(cmd.argv);
            for (int i = 0; i < cmd.argc; i++) FUZZ_ASSERT(cmd.argv[i]);
            FUZZ_ASSERT(httpProtocol.handedOut(st, cmd.argv));
            /* What the gateway's SELECT does to the connection. */
            if (sdsLen(cmd.argv[0]) == 6 && memcmp(cmd.argv[0], "SELECT", 6) == 0 && cmd.argc == 2)
                fakeDb = atoi(cmd.argv[1]);
            httpProtocol.recycle(st, cmd.argv, cmd.argc);
        }
    }
    sdsFree(pending);
    httpProtocol.free(st);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 2) return 0;
    static const char hs[] = "GET /.json HTTP/1.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                             "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n";
    size_t before = xmallocUsed();
    uint8_t *buf = malloc(size + sizeof(hs));
    size_t len = 0;
    if (data[1] & 1) {
        memcpy(buf, hs, sizeof(hs) - 1);
        len = sizeof(hs) - 1;
    }
    memcpy(buf + len, data + 2, size - 2);
    len += size - 2;
    fakeDb = 0;
    feed(buf, len, 0);
    rngState = 0x9e3779b9u ^ data[0];
    fakeDb = 0;
    feed(buf, len, 1);
    free(buf);
    FUZZ_ASSERT(xmallocUsed() == before);
    return 0;
}
