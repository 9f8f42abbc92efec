/* test_resp_parse.c -- unit tests for src/proto/resp_parse.c.
 *
 * Most tests run an input through feedAll(), which drives the parser the
 * way the network layer will (a pending buffer, bytes arriving in chunks,
 * big arguments optionally read straight into the parser) and returns a
 * transcript: "[a,b]" per command, "ERR(text)" on a protocol error, "..."
 * if the input ended inside a command.  check() asserts the same transcript
 * for one-shot, byte-by-byte and several chunk sizes, with and without the
 * direct big-argument path.  Expected behaviours were taken from
 * redis-server 7.0.15 over raw sockets. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ds/alloc.h"
#include "ds/sds.h"
#include "proto/resp_parse.h"

static const RespLimits authLimits = {RESP_DEFAULT_MAX_BULK_LEN, 1};

/* Transcribe a taken command, then give it back to p for reuse, or with p
 * NULL free it the way a keeper of the command would. */
static sds appendCommand(sds t, sds *argv, int argc, RespParser *p) {
    t = sdsCat(t, "[");
    for (int i = 0; i < argc; i++) {
        if (i) t = sdsCat(t, ",");
        assert_int_equal(argv[i][sdsLen(argv[i])], '\0');
        t = sdsCatSds(t, argv[i]);
    }
    if (p) {
        respParserRecycle(p, argv, argc);
    } else {
        for (int i = 0; i < argc; i++) sdsFree(argv[i]);
        xfree(argv);
    }
    return sdsCat(t, "]");
}

/* Drop the first n bytes of s. */
static void dropFront(sds s, size_t n) {
    size_t len = sdsLen(s);
    assert_true(n <= len);
    memmove(s, s + n, len - n);
    sdsSetLen(s, len - n);
}

/* Feed in[0..len) in chunks of `chunk` bytes (0: all at once); with
 * `direct`, bytes of a big argument go through respParserBigArgRoom. */
static sds feedAll(const char *in, size_t len, size_t chunk, int direct, const RespLimits *lim) {
    RespParser p;
    respParserInit(&p);
    sds t = sdsEmpty(), pend = sdsEmpty();
    size_t off = 0;
    int taken = 0;
    if (chunk == 0) chunk = len ? len : 1;
    for (;;) {
        for (;;) {
            size_t used = 12345;
            RespStatus st = respParse(&p, pend, sdsLen(pend), &used, lim);
            assert_true(used <= sdsLen(pend));
            dropFront(pend, used);
            if (st == RESP_ERROR) {
                assert_non_null(p.err);
                t = sdsCatPrintf(t, "ERR(%s)", p.err);
                goto done;
            }
            if (st == RESP_INCOMPLETE) break;
            assert_int_equal(st, RESP_COMPLETE);
            int argc;
            sds *argv = respParserTake(&p, &argc);
            /* Recycle most commands, so that later ones are parsed into
             * reused strings and arrays; free every third. */
            t = appendCommand(t, argv, argc, ++taken % 3 ? &p : NULL);
        }
        char *dst;
        size_t room;
        if (respParserBigArgRoom(&p, &dst, &room)) {
            /* respParse copies everything it can into a big argument. */
            assert_int_equal(sdsLen(pend), 0);
            assert_true(room > 0);
        }
        if (off == len) break;
        size_t n = len - off < chunk ? len - off : chunk;
        if (direct && respParserBigArgRoom(&p, &dst, &room)) {
            if (n > room) n = room;
            memcpy(dst, in + off, n);
            respParserBigArgWrote(&p, n);
        } else {
            pend = sdsCatLen(pend, in + off, n);
        }
        off += n;
    }
    if (sdsLen(pend) || p.multibulkLen) t = sdsCat(t, "...");
done:
    respParserFree(&p);
    sdsFree(pend);
    return t;
}

static void checkLen(const char *in, size_t len, const RespLimits *lim, const char *exp, size_t explen) {
    static const size_t smallChunks[] = {0, 1, 2, 3, 5, 16, 4096};
    static const size_t bigChunks[] = {0, 7, 1000, 16384};
    const size_t *chunks = len <= 4096 ? smallChunks : bigChunks;
    size_t n = len <= 4096 ? 7 : 4;
    for (size_t i = 0; i < n; i++) {
        for (int direct = 0; direct < 2; direct++) {
            sds t = feedAll(in, len, chunks[i], direct, lim);
            if (sdsLen(t) != explen || memcmp(t, exp, explen) != 0) {
                sds want = sdsCatRepr(sdsEmpty(), exp, explen > 300 ? 300 : explen);
                sds got = sdsCatRepr(sdsEmpty(), t, sdsLen(t) > 300 ? 300 : sdsLen(t));
                fail_msg("chunk %zu direct %d: want %s (%zu bytes) got %s (%zu bytes)", chunks[i], direct,
                         want, explen, got, sdsLen(t));
            }
            sdsFree(t);
        }
    }
}

#define CHECK(in, exp) checkLen(in, sizeof(in) - 1, NULL, exp, sizeof(exp) - 1)
#define CHECK_LIM(in, lim, exp) checkLen(in, sizeof(in) - 1, lim, exp, sizeof(exp) - 1)
#define CHECK_BUF(buf, len, exp) checkLen(buf, len, NULL, exp, strlen(exp))

/* Reservations may exceed a request by the allocator's size-class rounding
 * (jemalloc classes are at most 25% apart). */
#define ROUNDED(n) ((n) / 4 * 5 + 4096)

static size_t usedAtStart;

static int setup(void **state) {
    usedAtStart = xmallocUsed();
    return 0;
}

static int teardown(void **state) {
    assert_int_equal(xmallocUsed(), usedAtStart); /* nothing leaked */
    return 0;
}

static void test_multibulk_and_inline_basic(void **state) {
    CHECK("*1\r\n$4\r\nPING\r\n", "[PING]");
    CHECK("*3\r\n$3\r\nSET\r\n$1\r\na\r\n$0\r\n\r\n", "[SET,a,]");
    CHECK("PING\r\n", "[PING]");
    CHECK("SET a b\r\n", "[SET,a,b]");
    CHECK("*1\r\n$4\r\nPING\r\nPING\r\n*1\r\n$4\r\nPING\r\n", "[PING][PING][PING]");
    CHECK("", "");
}

static void test_pipelined_consumed(void **state) {
    const char in[] = "*2\r\n$4\r\nECHO\r\n$2\r\nhi\r\nGET k\r\n*0\r\n\n*1\r\n$4\r\nPI";
    size_t len = sizeof(in) - 1, pos = 0, used;
    const size_t want[] = {22, 7, 4, 1};
    const int wantArgc[] = {2, 2, 0, 0};
    RespParser p;
    respParserInit(&p);
    for (int i = 0; i < 4; i++) {
        assert_int_equal(respParse(&p, in + pos, len - pos, &used, NULL), RESP_COMPLETE);
        assert_int_equal(used, want[i]);
        int argc;
        sds *argv = respParserTake(&p, &argc);
        assert_int_equal(argc, wantArgc[i]);
        if (argc == 0) assert_null(argv);
        for (int j = 0; j < argc; j++)
            sdsFree(argv[j]);
        xfree(argv);
        pos += used;
    }
    /* The header lines of the last command are consumed, its payload not. */
    assert_int_equal(respParse(&p, in + pos, len - pos, &used, NULL), RESP_INCOMPLETE);
    assert_int_equal(used, 8);
    pos += used;
    assert_int_equal(respParse(&p, in + pos, len - pos, &used, NULL), RESP_INCOMPLETE);
    assert_int_equal(used, 0);
    assert_int_equal(respParse(&p, "PING\r\n", 6, &used, NULL), RESP_COMPLETE);
    assert_int_equal(used, 6);
    assert_int_equal(p.argc, 1);
    assert_memory_equal(p.argv[0], "PING", 4);
    respParserFree(&p);
}

static void test_partial_header_lines_not_consumed(void **state) {
    RespParser p;
    size_t used;
    respParserInit(&p);
    assert_int_equal(respParse(&p, "*1\r", 3, &used, NULL), RESP_INCOMPLETE);
    assert_int_equal(used, 0);
    assert_int_equal(respParse(&p, "*1\r\n$4\r", 7, &used, NULL), RESP_INCOMPLETE);
    assert_int_equal(used, 4);
    assert_int_equal(respParse(&p, "$4\r", 3, &used, NULL), RESP_INCOMPLETE);
    assert_int_equal(used, 0);
    assert_int_equal(respParse(&p, "", 0, &used, NULL), RESP_INCOMPLETE);
    assert_int_equal(respParse(&p, "$4\r\nPING\r", 9, &used, NULL), RESP_INCOMPLETE);
    assert_int_equal(used, 4); /* payload waits for its 2 trailing bytes */
    assert_int_equal(respParse(&p, "PING\r\n", 6, &used, NULL), RESP_COMPLETE);
    assert_int_equal(used, 6);
    respParserFree(&p);
    CHECK("PING", "...");
    CHECK("*1\r\nX", "...");
    CHECK("*1\r\nX\r", "..."); /* the error waits for the byte after '\r' */
}

static void test_multibulk_count_rules(void **state) {
    CHECK("*+1\r\n$4\r\nPING\r\n", "ERR(Protocol error: invalid multibulk length)");
    CHECK("*01\r\n$4\r\nPING\r\n", "ERR(Protocol error: invalid multibulk length)");
    CHECK("* 1\r\n", "ERR(Protocol error: invalid multibulk length)");
    CHECK("*1 \r\n", "ERR(Protocol error: invalid multibulk length)");
    CHECK("*\r\n", "ERR(Protocol error: invalid multibulk length)");
    CHECK("*-0\r\n", "ERR(Protocol error: invalid multibulk length)");
    CHECK("*2147483648\r\n", "ERR(Protocol error: invalid multibulk length)");
    CHECK("*99999999999999999999\r\n", "ERR(Protocol error: invalid multibulk length)");
    CHECK("*-9223372036854775809\r\n", "ERR(Protocol error: invalid multibulk length)");
    /* The count line ends at '\r'; a bare '\n' is part of the number. */
    CHECK("*1\n$4\r\nPING\r\n", "ERR(Protocol error: invalid multibulk length)");
    /* The byte after '\r' is not checked. */
    CHECK("*1\rX$4\r\nPING\r\n", "[PING]");
    CHECK("*1\r\n$4\rXPING\r\n", "[PING]");
    /* Count <= 0 is an empty command. */
    CHECK("*0\r\nPING\r\n", "[][PING]");
    CHECK("*-1\r\n", "[]");
    CHECK("*-5\r\nPING\r\n", "[][PING]");
    CHECK("*-9223372036854775808\r\nPING\r\n", "[][PING]");
    CHECK("*2147483647\r\n", "...");
    /* 9 and 10 digits: the quick header path stops at 9. */
    CHECK("*123456789\r\n", "...");
    CHECK("*1000000000\r\n", "...");
    CHECK("*1234567890\r", "...");
    CHECK("*1\r\n$999999999\r\n", "ERR(Protocol error: invalid bulk length)");
    CHECK("*1\r\n$1000000000\r\n", "ERR(Protocol error: invalid bulk length)");
    CHECK("*1\r\n$536870912\r", "...");
    /* An error after good commands: those are still returned first. */
    CHECK("PING\r\n*1\r\n$4\r\nPING\r\n*x\r\nPING\r\n",
          "[PING][PING]ERR(Protocol error: invalid multibulk length)");
}

static void test_unauthenticated_limits(void **state) {
    CHECK_LIM("*10\r\n", &authLimits, "...");
    CHECK_LIM("*11\r\n", &authLimits, "ERR(Protocol error: unauthenticated multibulk length)");
    CHECK_LIM("*-11\r\nPING\r\n", &authLimits, "[][PING]");
    CHECK_LIM("*2147483648\r\n", &authLimits, "ERR(Protocol error: invalid multibulk length)");
    CHECK_LIM("*1\r\n$16384\r\n", &authLimits, "...");
    CHECK_LIM("*1\r\n$16385\r\n", &authLimits, "ERR(Protocol error: unauthenticated bulk length)");
    CHECK_LIM("*1\r\n$536870913\r\n", &authLimits, "ERR(Protocol error: invalid bulk length)");
    CHECK_LIM("*1\r\n$-1\r\n", &authLimits, "ERR(Protocol error: invalid bulk length)");
    CHECK("*11\r\n", "...");
    CHECK("*1\r\n$16385\r\n", "...");
}

static void test_expected_dollar(void **state) {
    CHECK("*1\r\nX4\r\nPING\r\n", "ERR(Protocol error: expected '$', got 'X')");
    CHECK("*1\r\n\r\n", "ERR(Protocol error: expected '$', got ' ')");
    CHECK("*1\r\n\n\r\n", "ERR(Protocol error: expected '$', got ' ')");
    CHECK("*1\r\n\3774\r\n", "ERR(Protocol error: expected '$', got '\xff')");
    CHECK("*1\r\n\0014\r\n", "ERR(Protocol error: expected '$', got '\x01')");
    CHECK("*1\r\n\t\r\n", "ERR(Protocol error: expected '$', got '\t')");
    CHECK("*1\r\n*1\r\n", "ERR(Protocol error: expected '$', got '*')");
    CHECK("*2\r\n$4\r\nECHO\r\n:1\r\n", "ERR(Protocol error: expected '$', got ':')");
}

static void test_bulk_length_rules(void **state) {
    CHECK("*1\r\n$+4\r\nPING\r\n", "ERR(Protocol error: invalid bulk length)");
    CHECK("*1\r\n$04\r\nPING\r\n", "ERR(Protocol error: invalid bulk length)");
    CHECK("*1\r\n$ 4\r\nPING\r\n", "ERR(Protocol error: invalid bulk length)");
    CHECK("*1\r\n$-1\r\n", "ERR(Protocol error: invalid bulk length)");
    CHECK("*1\r\n$-0\r\n", "ERR(Protocol error: invalid bulk length)");
    CHECK("*1\r\n$\r\n", "ERR(Protocol error: invalid bulk length)");
    CHECK("*1\r\n$00\r\n", "ERR(Protocol error: invalid bulk length)");
    CHECK("*1\r\n$9223372036854775807\r\n", "ERR(Protocol error: invalid bulk length)");
    CHECK("*1\r\n$9223372036854775808\r\n", "ERR(Protocol error: invalid bulk length)");
    CHECK("*1\r\n$536870912\r\n", "...");
    CHECK("*1\r\n$536870913\r\n", "ERR(Protocol error: invalid bulk length)");
    CHECK("*1\r\n$0\r\n\r\n", "[]");
    const RespLimits small = {10, 0};
    CHECK_LIM("*1\r\n$10\r\n0123456789\r\n", &small, "[0123456789]");
    CHECK_LIM("*1\r\n$11\r\n", &small, "ERR(Protocol error: invalid bulk length)");
}

static void test_bulk_trailer_not_checked(void **state) {
    CHECK("*1\r\n$4\r\nPINGxxPING\r\n", "[PING][PING]");
    CHECK("*2\r\n$4\r\nECHO\r\n$3\r\na\r\n\r\n", "[ECHO,a\r\n]");
    CHECK("*1\r\n$4\r\nPING", "...");
    CHECK("*1\r\n$4\r\nPING\r", "...");
}

static void test_binary_bulks(void **state) {
    CHECK("*2\r\n$3\r\na\0b\r\n$6\r\n\r\n\0\r\n\0\r\n", "[a\0b,\r\n\0\r\n\0]");
    CHECK("*1\r\n$4\r\nPI\0G\r\n", "[PI\0G]");
}

/* Header and inline lines are searched like C strings: a NUL hides them. */
static void test_nul_hides_lines(void **state) {
    CHECK("ECHO a\0b\r\nPING\r\n", "...");
    CHECK("*1\0\r\n$4\r\nPING\r\n", "...");
    CHECK("*1\r\n$4\0\r\nPING\r\n", "...");
    CHECK("*1\r\n$4\r\nPING\r\n*1\r\n$3\r\nfoo\r\n\0\r\n", "[PING][foo]...");
    CHECK("*1\r\n\0\r\n", "...");
}

static void test_too_big_lines(void **state) {
    size_t n = RESP_INLINE_MAX + 2000;
    char *buf = xmalloc(n);
    /* "*" + digits: error once more than 64 KB are pending without '\r'. */
    buf[0] = '*';
    memset(buf + 1, '1', n - 1);
    CHECK_BUF(buf, RESP_INLINE_MAX, "...");
    CHECK_BUF(buf, RESP_INLINE_MAX + 1, "ERR(Protocol error: too big mbulk count string)");
    /* Same for a "$len" line, counted from the start of that line. */
    memcpy(buf, "*1\r\n$", 5);
    CHECK_BUF(buf, RESP_INLINE_MAX + 4, "...");
    CHECK_BUF(buf, RESP_INLINE_MAX + 5, "ERR(Protocol error: too big bulk count string)");
    /* Inline. */
    memset(buf, 'a', n);
    CHECK_BUF(buf, RESP_INLINE_MAX, "...");
    CHECK_BUF(buf, RESP_INLINE_MAX + 1, "ERR(Protocol error: too big inline request)");
    buf[1] = '\0'; /* a NUL does not reset the count */
    CHECK_BUF(buf, RESP_INLINE_MAX + 1, "ERR(Protocol error: too big inline request)");
    /* A terminator already in the buffer wins, as in Redis where a 70000
     * byte line arriving in one read is accepted. */
    memset(buf, 'a', n);
    memcpy(buf + n - 2, "\r\n", 2);
    sds t = feedAll(buf, n, 0, 0, NULL);
    assert_int_equal(sdsLen(t), n - 2 + 2);
    sdsFree(t);
    t = feedAll(buf, n, 1000, 0, NULL);
    assert_string_equal(t, "ERR(Protocol error: too big inline request)");
    sdsFree(t);
    xfree(buf);
}

static void test_inline_rules(void **state) {
    CHECK("PING\n", "[PING]");
    CHECK("\n", "[]");
    CHECK("\r\n", "[]");
    CHECK("  \r\n", "[]");
    CHECK("\r\n\n  \n", "[][][]");
    CHECK("PING\r\r\n", "[PING]");
    CHECK("\rPING\r\n", "[PING]");
    CHECK("PING\rPING\r\n", "[PING,PING]");
    CHECK(" *1\r\n$4\r\nPING\r\n", "[*1][$4][PING]");
    CHECK("ECHO \"a\\x41b\"\r\n", "[ECHO,aAb]");
    CHECK("ECHO 'a\\'b'\r\n", "[ECHO,a'b]");
    /* \v and \f separate only before a token, as in Redis. */
    CHECK("ECHO a\tb\vc\fd\r\n", "[ECHO,a,b\vc\fd]");
    CHECK("ECHO \vc\r\n", "[ECHO,c]");
    CHECK("ECHO \"a\"\v\r\n", "[ECHO,a]");
    CHECK("\"PING\r\n", "ERR(Protocol error: unbalanced quotes in request)");
    CHECK("PING \"a\"b\r\n", "ERR(Protocol error: unbalanced quotes in request)");
    CHECK("ECHO \"\r\n", "ERR(Protocol error: unbalanced quotes in request)");
    CHECK("ECHO \"a\nb\"\r\n", "ERR(Protocol error: unbalanced quotes in request)");
    CHECK("PING\r\nSET a b\nGET a\r\n", "[PING][SET,a,b][GET,a]");
    /* Plain lines (no quotes) are split without the general splitter:
     * more words than the first array holds, a word longer than a pooled
     * string, plain and quoted lines in turn. */
    CHECK("RPUSH k 1 2 3 4 5 6 7 8 9 10 11\r\n", "[RPUSH,k,1,2,3,4,5,6,7,8,9,10,11]");
    CHECK("SET k xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\r\n",
          "[SET,k,xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx]");
    CHECK("GET a\r\nECHO \"b c\"\r\nGET d\r\n", "[GET,a][ECHO,b c][GET,d]");
}

/* A stream mixing everything: every chunking gives the same commands. */
static void test_chunking_equivalence(void **state) {
    sds in = sdsEmpty();
    in = sdsCat(in, "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$5\r\nhello\r\n");
    in = sdsCat(in, "GET k\r\n\r\n*0\r\n*-1\r\n");
    in = sdsCatLen(in, "*2\r\n$4\r\nECHO\r\n$7\r\n\0\r\n\r\n\0\0\r\n", 27);
    sds big = sdsGrowZero(sdsEmpty(), 70000);
    for (size_t i = 0; i < 70000; i++)
        big[i] = (char)('a' + i % 26);
    in = sdsCatPrintf(in, "*2\r\n$4\r\nECHO\r\n$%zu\r\n", sdsLen(big));
    in = sdsCatSds(in, big);
    in = sdsCat(in, "\r\nECHO \"x y\" 'z'\n");
    sds exp = sdsNew("[SET,k,hello][GET,k][][][][ECHO,");
    exp = sdsCatLen(exp, "\0\r\n\r\n\0\0]", 8);
    exp = sdsCat(exp, "[ECHO,");
    exp = sdsCatSds(exp, big);
    exp = sdsCat(exp, "][ECHO,x y,z]");
    static const size_t chunks[] = {0, 1, 2, 3, 4, 5, 7, 13, 100, 4096, 16384, 32768, 65536};
    for (size_t i = 0; i < sizeof(chunks) / sizeof(chunks[0]); i++)
        for (int direct = 0; direct < 2; direct++) {
            sds t = feedAll(in, sdsLen(in), chunks[i], direct, NULL);
            assert_int_equal(sdsLen(t), sdsLen(exp));
            assert_memory_equal(t, exp, sdsLen(exp));
            sdsFree(t);
        }
    sdsFree(big);
    sdsFree(in);
    sdsFree(exp);
}

/* A 3 MB argument read through BigArgRoom: memory grows with the data,
 * never past the declared size, and the result is the argument itself. */
static void test_big_arg_direct(void **state) {
    const size_t size = 3 * 1024 * 1024 + 5;
    char hdr[64];
    int hlen = snprintf(hdr, sizeof(hdr), "*2\r\n$3\r\nSET\r\n$%zu\r\n", size);
    RespParser p;
    respParserInit(&p);
    size_t used;
    assert_int_equal(respParse(&p, hdr, (size_t)hlen, &used, NULL), RESP_INCOMPLETE);
    assert_int_equal(used, (size_t)hlen);
    char *dst;
    size_t room, written = 0, maxRoom = 0;
    while (respParserBigArgRoom(&p, &dst, &room)) {
        assert_true(room > 0 && room <= size + 2 - written);
        if (room > maxRoom) maxRoom = room;
        /* Reserved memory stays within RESP_BIG_ARG_JUMP times what was
         * received (or the eager first step) and within the declared size. */
        size_t reserved = sdsLen(p.bigArg) + sdsAvail(p.bigArg);
        assert_true(reserved <= ROUNDED(size + 2));
        size_t bound = 2 * written + RESP_BIG_ARG_EAGER;
        if (bound < RESP_BIG_ARG_JUMP * written) bound = RESP_BIG_ARG_JUMP * written;
        assert_true(reserved <= ROUNDED(bound));
        size_t n = room > 100000 ? 100000 : room;
        for (size_t i = 0; i < n; i++)
            dst[i] = (char)((written + i) % 251);
        if (written + n > size) memcpy(dst + (size - written), "\r\n", written + n - size);
        respParserBigArgWrote(&p, n);
        written += n;
        assert_int_equal(respParserPendingBytes(&p), written);
        assert_int_equal(respParse(&p, "", 0, &used, NULL),
                         written == size + 2 ? RESP_COMPLETE : RESP_INCOMPLETE);
        assert_int_equal(used, 0);
    }
    assert_int_equal(written, size + 2);
    assert_true(maxRoom > 100000); /* the caller could read big pieces */
    int argc;
    sds *argv = respParserTake(&p, &argc);
    assert_int_equal(argc, 2);
    assert_int_equal(sdsLen(argv[1]), size);
    for (size_t i = 0; i < size; i += 4099)
        assert_int_equal((unsigned char)argv[1][i], i % 251);
    assert_true(sdsAllocSize(argv[1]) <= ROUNDED(size + 2));
    for (int i = 0; i < argc; i++)
        sdsFree(argv[i]);
    xfree(argv);
    respParserFree(&p);
}

/* A 10 MB argument: the eager 1 MB first, then -- more than 1/16 of it
 * having arrived -- the whole declared size in one step: two reservations,
 * not five (1, 2, 4, 8 MB, then 10). */
static void test_big_arg_two_steps(void **state) {
    const size_t size = 10 * 1024 * 1024;
    char hdr[64];
    int hlen = snprintf(hdr, sizeof(hdr), "*1\r\n$%zu\r\n", size);
    RespParser p;
    respParserInit(&p);
    size_t used;
    assert_int_equal(respParse(&p, hdr, (size_t)hlen, &used, NULL), RESP_INCOMPLETE);
    char *dst;
    size_t room, written = 0, lastReserved = 0;
    int steps = 0;
    while (respParserBigArgRoom(&p, &dst, &room)) {
        size_t reserved = sdsLen(p.bigArg) + sdsAvail(p.bigArg);
        if (reserved != lastReserved) steps++;
        lastReserved = reserved;
        size_t n = room > 65536 ? 65536 : room;
        memset(dst, 'v', n);
        respParserBigArgWrote(&p, n);
        written += n;
    }
    assert_int_equal(written, size + 2);
    assert_int_equal(steps, 2);
    assert_int_equal(respParse(&p, "", 0, &used, NULL), RESP_COMPLETE);
    respParserFree(&p);
}

/* A hostile declared length with a trickle of bytes: the reservation stays
 * within RESP_BIG_ARG_JUMP times what arrived (past the eager 1 MB). */
static void test_big_arg_trickle(void **state) {
    RespParser p;
    size_t used, before = xmallocUsed();
    respParserInit(&p);
    assert_int_equal(respParse(&p, "*1\r\n$536870912\r\n", 17, &used, NULL), RESP_INCOMPLETE);
    char buf[4096];
    memset(buf, 'x', sizeof(buf));
    size_t written = 0;
    for (int i = 0; i < 1024; i++) { /* 4 MB in 4 KB pieces */
        assert_int_equal(respParse(&p, buf, sizeof(buf), &used, NULL), RESP_INCOMPLETE);
        assert_int_equal(used, sizeof(buf));
        written += used;
        size_t reserved = sdsLen(p.bigArg) + sdsAvail(p.bigArg);
        assert_true(reserved <= ROUNDED(2 * written + RESP_BIG_ARG_EAGER));
    }
    assert_true(xmallocUsed() - before < ROUNDED(2 * written + RESP_BIG_ARG_EAGER) + 16 * 1024);
    respParserFree(&p);
    assert_int_equal(xmallocUsed(), before);
}

/* An argument between RESP_BIG_ARG and RESP_BIG_ARG_EAGER is reserved once,
 * at its full size, when its header arrives. */
static void test_big_arg_reserved_once(void **state) {
    RespParser p;
    respParserInit(&p);
    size_t used;
    const char hdr[] = "*1\r\n$40000\r\n";
    assert_int_equal(respParse(&p, hdr, sizeof(hdr) - 1, &used, NULL), RESP_INCOMPLETE);
    assert_non_null(p.bigArg);
    char *start = p.bigArg;
    assert_true(sdsAvail(p.bigArg) >= 40002 && sdsAvail(p.bigArg) <= ROUNDED(40002));
    char *dst;
    size_t room;
    assert_true(respParserBigArgRoom(&p, &dst, &room));
    assert_int_equal(room, 40002);
    char *data = xmalloc(40002);
    memset(data, 'v', 40000);
    memcpy(data + 40000, "XY", 2); /* trailer bytes are not checked */
    assert_int_equal(respParse(&p, data, 30000, &used, NULL), RESP_INCOMPLETE);
    assert_int_equal(used, 30000);
    assert_true(p.bigArg == start);
    assert_true(respParserBigArgRoom(&p, &dst, &room));
    assert_int_equal(room, 10002);
    assert_int_equal(respParse(&p, data + 30000, 10002, &used, NULL), RESP_COMPLETE);
    assert_true(p.argv[0] == start);
    assert_int_equal(sdsLen(p.argv[0]), 40000);
    assert_int_equal(p.argv[0][40000], '\0');
    assert_false(respParserBigArgRoom(&p, &dst, &room));
    xfree(data);
    respParserFree(&p);
}

/* An argument of RESP_BIG_ARENA_MIN or more starts with 1/16 of its
 * length (the jump to the whole length then copies no more than that),
 * written in place through BigArgRoom it is terminated only once complete,
 * and its bytes survive the jump. */
static void test_big_arena_arg(void **state) {
    RespParser p;
    respParserInit(&p);
    size_t used, total = (10u << 20) + 2;
    const char hdr[] = "*1\r\n$10485760\r\n";
    assert_int_equal(respParse(&p, hdr, sizeof(hdr) - 1, &used, NULL), RESP_INCOMPLETE);
    char *dst;
    size_t room, got = 0, steps = 0;
    assert_true(respParserBigArgRoom(&p, &dst, &room));
    assert_true(room >= total / RESP_BIG_ARG_JUMP + 1 && room <= ROUNDED(total / RESP_BIG_ARG_JUMP + 1));
    while (respParserBigArgRoom(&p, &dst, &room)) {
        size_t n = room < 300000 ? room : 300000;
        for (size_t i = 0; i < n; i++) dst[i] = (char)('a' + (got + i) % 23);
        respParserBigArgWrote(&p, n);
        got += n;
        steps++;
    }
    assert_int_equal(got, total);
    assert_true(steps < 40);
    assert_int_equal(respParse(&p, "", 0, &used, NULL), RESP_COMPLETE);
    assert_int_equal(sdsLen(p.argv[0]), 10u << 20);
    assert_int_equal(p.argv[0][10u << 20], '\0');
    for (size_t i = 0; i < (10u << 20); i += 4099) assert_int_equal(p.argv[0][i], (char)('a' + i % 23));
    respParserFree(&p);
}

/* Declared sizes cost nothing until data arrives. */
static void test_huge_declarations_do_not_allocate(void **state) {
    RespParser p;
    size_t used, before = xmallocUsed();
    respParserInit(&p);
    assert_int_equal(respParse(&p, "*2147483647\r\n", 13, &used, NULL), RESP_INCOMPLETE);
    assert_int_equal(p.argvCap, 1024);
    assert_true(xmallocUsed() - before < 16 * 1024);
    assert_int_equal(respParse(&p, "$536870912\r\n", 12, &used, NULL), RESP_INCOMPLETE);
    assert_true(xmallocUsed() - before < ROUNDED(RESP_BIG_ARG_EAGER) + 16 * 1024);
    char *dst;
    size_t room;
    assert_true(respParserBigArgRoom(&p, &dst, &room));
    assert_true(room <= ROUNDED(RESP_BIG_ARG_EAGER));
    respParserFree(&p);
    assert_int_equal(xmallocUsed(), before);
}

/* argv grows past its first 1024 slots as arguments arrive. */
static void test_many_args(void **state) {
    sds in = sdsNew("*3000\r\n");
    sds exp = sdsNew("[");
    for (int i = 0; i < 3000; i++) {
        char a[16];
        int n = snprintf(a, sizeof(a), "%d", i);
        in = sdsCatPrintf(in, "$%d\r\n%s\r\n", n, a);
        if (i) exp = sdsCat(exp, ",");
        exp = sdsCat(exp, a);
    }
    exp = sdsCat(exp, "]");
    sds t = feedAll(in, sdsLen(in), 0, 0, NULL);
    assert_string_equal(t, exp);
    sdsFree(t);
    t = feedAll(in, sdsLen(in), 3, 0, NULL);
    assert_string_equal(t, exp);
    sdsFree(t);
    sdsFree(in);
    sdsFree(exp);
}

/* A command not taken is freed by the next call; Free mid-command and
 * after an error releases everything (teardown checks the counter). */
static void test_untaken_and_free_midway(void **state) {
    RespParser p;
    size_t used;
    respParserInit(&p);
    assert_int_equal(respParse(&p, "SET a b\r\n", 9, &used, NULL), RESP_COMPLETE);
    assert_int_equal(respParse(&p, "*1\r\n$1\r\nx\r\n", 11, &used, NULL), RESP_COMPLETE);
    assert_int_equal(p.argc, 1);
    const char partial[] = "*2\r\n$1\r\nx\r\n$70000\r\nabc";
    assert_int_equal(respParse(&p, partial, sizeof(partial) - 1, &used, NULL), RESP_INCOMPLETE);
    assert_int_equal(used, sizeof(partial) - 1);
    respParserFree(&p);
    respParserInit(&p);
    assert_int_equal(respParse(&p, "*2\r\n$1\r\nx\r\n$x\r\n", 15, &used, NULL), RESP_ERROR);
    assert_string_equal(p.err, "Protocol error: invalid bulk length");
    respParserFree(&p);
}

/* Parse exactly one complete command from in and take it. */
static sds *takeOne(RespParser *p, const char *in, int *argc) {
    size_t used;
    assert_int_equal(respParse(p, in, strlen(in), &used, NULL), RESP_COMPLETE);
    assert_int_equal(used, strlen(in));
    return respParserTake(p, argc);
}

static int contains(sds *argv, int argc, const char *s) {
    for (int i = 0; i < argc; i++)
        if (argv[i] == s) return 1;
    return 0;
}

/* A recycled command's array and small strings are what the next command
 * is parsed into, with its own contents and lengths. */
static void test_reuse_strings_and_array(void **state) {
    RespParser p;
    respParserInit(&p);
    int argc;
    sds *a = takeOne(&p, "*3\r\n$3\r\nSET\r\n$6\r\nkey:42\r\n$5\r\nhello\r\n", &argc);
    assert_int_equal(argc, 3);
    assert_int_equal(p.argvBytes, 14);
    sds s0 = a[0], s1 = a[1], s2 = a[2];
    respParserRecycle(&p, a, argc);
    assert_int_equal(p.poolCount, 3);
    assert_ptr_equal(p.argv, a); /* kept as the spare */

    /* Longest pooled size, an empty bulk, a binary one. */
    char big[RESP_POOL_CAP + 1];
    memset(big, 'x', RESP_POOL_CAP);
    big[RESP_POOL_CAP] = '\0';
    sds in = sdsCatPrintf(sdsEmpty(), "*3\r\n$%d\r\n%s\r\n$0\r\n\r\n$3\r\na", RESP_POOL_CAP, big);
    in = sdsCatLen(in, "\0b\r\n", 4);
    size_t used;
    assert_int_equal(respParse(&p, in, sdsLen(in), &used, NULL), RESP_COMPLETE);
    sds *b = respParserTake(&p, &argc);
    assert_ptr_equal(b, a);
    assert_int_equal(argc, 3);
    assert_int_equal(p.poolCount, 0);
    for (int i = 0; i < 3; i++) assert_true(b[i] == s0 || b[i] == s1 || b[i] == s2);
    assert_int_equal(sdsLen(b[0]), RESP_POOL_CAP);
    assert_memory_equal(b[0], big, RESP_POOL_CAP + 1); /* with its NUL */
    assert_int_equal(sdsLen(b[1]), 0);
    assert_int_equal(b[1][0], '\0');
    assert_int_equal(sdsLen(b[2]), 3);
    assert_memory_equal(b[2], "a\0b", 4);
    assert_int_equal(p.argvBytes, RESP_POOL_CAP + 3);
    respParserRecycle(&p, b, argc);
    sdsFree(in);

    /* A longer argument gets a string of its own, not pooled afterwards. */
    memset(big, 'y', RESP_POOL_CAP);
    in = sdsCatPrintf(sdsEmpty(), "*2\r\n$4\r\nECHO\r\n$%d\r\n%sz\r\n", RESP_POOL_CAP + 1, big);
    sds *c = takeOne(&p, in, &argc);
    assert_int_equal(p.poolCount, 2);
    assert_false(contains(c, argc, s0) && contains(c, argc, s1) && contains(c, argc, s2));
    assert_int_equal(sdsLen(c[1]), RESP_POOL_CAP + 1);
    assert_int_equal(c[1][RESP_POOL_CAP], 'z');
    respParserRecycle(&p, c, argc);
    assert_int_equal(p.poolCount, 3);
    assert_int_equal(respParserSpareBytes(&p), 3 * (RESP_POOL_CAP + 4) + (size_t)p.argvCap * sizeof(sds));
    sdsFree(in);

    /* Inline commands (exact-size strings) mix with pooled ones. */
    sds *d = takeOne(&p, "GET k\r\n", &argc);
    assert_int_equal(argc, 2);
    assert_string_equal(d[0], "GET");
    assert_int_equal(p.argvBytes, 4);
    respParserRecycle(&p, d, argc);
    d = takeOne(&p, "*1\r\n$4\r\nPING\r\n", &argc);
    assert_string_equal(d[0], "PING");
    respParserRecycle(&p, d, argc);

    respParserTrim(&p);
    assert_int_equal(p.poolCount, 0);
    assert_null(p.argv);
    assert_int_equal(respParserSpareBytes(&p), 0);
    respParserFree(&p);
}

/* The spare array is bounded: a big command's array and the strings past
 * the pool's size are freed when it is recycled. */
static void test_big_command_released(void **state) {
    RespParser p;
    respParserInit(&p);
    sds in = sdsNew("*100000\r\n");
    for (int i = 0; i < 100000; i++) in = sdsCat(in, "$2\r\nab\r\n");
    size_t before = xmallocUsed();
    int argc;
    sds *argv = takeOne(&p, in, &argc);
    assert_int_equal(argc, 100000);
    respParserRecycle(&p, argv, argc);
    assert_null(p.argv);
    assert_int_equal(p.poolCount, RESP_POOL_MAX);
    assert_true(xmallocUsed() - before <= ROUNDED(RESP_POOL_MAX * 64));
    assert_true(respParserSpareBytes(&p) <= RESP_POOL_MAX * 64);
    /* The next small command gets a small array again. */
    argv = takeOne(&p, "*2\r\n$3\r\nGET\r\n$1\r\nk\r\n", &argc);
    assert_int_equal(p.lentCap, RESP_ARGV_MIN);
    respParserRecycle(&p, argv, argc);
    /* An array up to RESP_ARGV_KEEP slots stays. */
    sdsClear(in);
    in = sdsCatPrintf(in, "*%d\r\n", RESP_ARGV_KEEP);
    for (int i = 0; i < RESP_ARGV_KEEP; i++) in = sdsCat(in, "$1\r\nv\r\n");
    argv = takeOne(&p, in, &argc);
    respParserRecycle(&p, argv, argc);
    assert_ptr_equal(p.argv, argv);
    assert_int_equal(p.argvCap, RESP_ARGV_KEEP);
    sdsFree(in);
    respParserFree(&p);
}

/* What a command keeps is never handed out again: a whole command kept (a
 * MULTI queue) or one argument taken out of argv before recycling. */
static void test_kept_arguments_not_reused(void **state) {
    RespParser p;
    respParserInit(&p);
    int argc;
    sds *warm = takeOne(&p, "*3\r\n$1\r\na\r\n$1\r\nb\r\n$1\r\nc\r\n", &argc);
    respParserRecycle(&p, warm, argc); /* the pool holds 3 strings */

    sds *queued = takeOne(&p, "*2\r\n$4\r\nINCR\r\n$3\r\nctr\r\n", &argc);
    assert_int_equal(argc, 2);
    sds *next = takeOne(&p, "*2\r\n$3\r\nGET\r\n$3\r\nxyz\r\n", &argc);
    assert_true(next != queued);
    assert_false(contains(next, 2, queued[0]) || contains(next, 2, queued[1]));
    respParserRecycle(&p, next, argc);

    sds *e = takeOne(&p, "*2\r\n$4\r\nECHO\r\n$4\r\nkeep\r\n", &argc);
    sds kept = e[1];
    e[1] = NULL; /* the command took it */
    respParserRecycle(&p, e, argc);
    for (int i = 0; i < 5; i++) {
        sds *f = takeOne(&p, "*3\r\n$3\r\nSET\r\n$2\r\nk2\r\n$5\r\nother\r\n", &argc);
        assert_false(contains(f, argc, kept) || contains(f, argc, queued[0]) || contains(f, argc, queued[1]));
        respParserRecycle(&p, f, argc);
    }
    assert_string_equal(kept, "keep");
    assert_string_equal(queued[0], "INCR");
    assert_string_equal(queued[1], "ctr");
    sdsFree(kept);
    /* The keeper frees with plain sdsFree/xfree. */
    sdsFree(queued[0]);
    sdsFree(queued[1]);
    xfree(queued);
    respParserFree(&p);
}

/* respProtocol, the table the network layer drives: the same commands,
 * errors, consumed counts, reuse and direct reads as the calls above. */
static void test_protocol_table(void **state) {
    (void)state;
    const Protocol *pr = &respProtocol;
    void *st = pr->create();
    ProtoCommand cmd;
    const char *in = "*2\r\n$3\r\nGET\r\n$1\r\nk\r\nPING\r\n*1\r\n$4\r\nPI";
    size_t len = strlen(in), pos = 0;
    assert_int_equal(pr->next(st, in, len, NULL, &cmd), PROTO_COMPLETE);
    pos += cmd.consumed;
    assert_int_equal(cmd.argc, 2);
    assert_string_equal(cmd.argv[0], "GET");
    assert_string_equal(cmd.argv[1], "k");
    assert_int_equal(cmd.argvBytes, 4);
    assert_true(pr->handedOut(st, cmd.argv));
    sds *first = cmd.argv;
    pr->recycle(st, cmd.argv, cmd.argc);
    assert_false(pr->handedOut(st, first));
    assert_true(pr->spareBytes(st) > 0); /* the array and strings kept */
    assert_int_equal(pr->next(st, in + pos, len - pos, NULL, &cmd), PROTO_COMPLETE);
    pos += cmd.consumed;
    assert_int_equal(cmd.argc, 1);
    assert_string_equal(cmd.argv[0], "PING");
    pr->recycle(st, cmd.argv, cmd.argc);
    assert_int_equal(pr->next(st, in + pos, len - pos, NULL, &cmd), PROTO_INCOMPLETE);
    pos += cmd.consumed;
    assert_int_equal(pr->pendingBytes(st), 0);
    char *dst;
    size_t room;
    assert_false(pr->directRoom(st, &dst, &room)); /* a small argument: no direct read */
    pr->trim(st);
    assert_int_equal(pr->spareBytes(st), 0);
    /* A protocol error, with Redis's text. */
    void *bad = pr->create();
    assert_int_equal(pr->next(bad, "*1\r\nx\r\n", 7, NULL, &cmd), PROTO_ERROR);
    assert_string_equal(cmd.err, "Protocol error: expected '$', got 'x'");
    pr->free(bad);
    pr->free(st); /* with a half-read command */
}

int main(void) {
    xmallocRegisterThread(); /* as the server's main() does first */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_multibulk_and_inline_basic, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pipelined_consumed, setup, teardown),
        cmocka_unit_test_setup_teardown(test_partial_header_lines_not_consumed, setup, teardown),
        cmocka_unit_test_setup_teardown(test_multibulk_count_rules, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unauthenticated_limits, setup, teardown),
        cmocka_unit_test_setup_teardown(test_expected_dollar, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bulk_length_rules, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bulk_trailer_not_checked, setup, teardown),
        cmocka_unit_test_setup_teardown(test_binary_bulks, setup, teardown),
        cmocka_unit_test_setup_teardown(test_nul_hides_lines, setup, teardown),
        cmocka_unit_test_setup_teardown(test_too_big_lines, setup, teardown),
        cmocka_unit_test_setup_teardown(test_inline_rules, setup, teardown),
        cmocka_unit_test_setup_teardown(test_chunking_equivalence, setup, teardown),
        cmocka_unit_test_setup_teardown(test_big_arg_direct, setup, teardown),
        cmocka_unit_test_setup_teardown(test_big_arg_reserved_once, setup, teardown),
        cmocka_unit_test_setup_teardown(test_big_arg_two_steps, setup, teardown),
        cmocka_unit_test_setup_teardown(test_big_arg_trickle, setup, teardown),
        cmocka_unit_test_setup_teardown(test_huge_declarations_do_not_allocate, setup, teardown),
        cmocka_unit_test_setup_teardown(test_big_arena_arg, setup, teardown),
        cmocka_unit_test_setup_teardown(test_many_args, setup, teardown),
        cmocka_unit_test_setup_teardown(test_untaken_and_free_midway, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reuse_strings_and_array, setup, teardown),
        cmocka_unit_test_setup_teardown(test_big_command_released, setup, teardown),
        cmocka_unit_test_setup_teardown(test_kept_arguments_not_reused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_protocol_table, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
