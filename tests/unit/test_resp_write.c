/* test_resp_write.c -- unit tests for src/proto/resp_write.c: every reply
 * item in RESP2 and RESP3, as redis-server 7.0.15 writes it (the bytes were
 * checked against it with HELLO 2 / HELLO 3 over raw sockets: ZSCORE for
 * doubles, DEBUG PROTOCOL for the RESP3 types, HGETALL for maps); and the
 * encoder of a command (what the AOF and the replication stream hold). */
#include <limits.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ds/sds.h"
#include "proto/resp_write.h"

/* Assert that dst[0..len) is exactly the C string want. */
static void assertBytes(const char *dst, size_t len, const char *want) {
    assert_int_equal(len, strlen(want));
    assert_memory_equal(dst, want, len);
}

static void test_header(void **state) {
    (void)state;
    char b[RESP_HEADER_MAX];
    assertBytes(b, respWriteHeader(b, '*', 0), "*0\r\n");
    assertBytes(b, respWriteHeader(b, '$', 12345), "$12345\r\n");
    assertBytes(b, respWriteHeader(b, '*', -1), "*-1\r\n");
    assertBytes(b, respWriteHeader(b, ':', LLONG_MIN), ":-9223372036854775808\r\n");
    assertBytes(b, respWriteHeader(b, ':', LLONG_MAX), ":9223372036854775807\r\n");
}

static void test_integer(void **state) {
    (void)state;
    char b[RESP_HEADER_MAX];
    for (int i = 0; i <= 9; i++) {
        char want[8] = {':', (char)('0' + i), '\r', '\n', 0};
        assertBytes(b, respWriteInteger(b, i), want);
    }
    assertBytes(b, respWriteInteger(b, 10), ":10\r\n");
    assertBytes(b, respWriteInteger(b, -1), ":-1\r\n");
    assertBytes(b, respWriteInteger(b, LLONG_MIN), ":-9223372036854775808\r\n");
}

static void test_aggregates(void **state) {
    (void)state;
    char b[RESP_HEADER_MAX];
    static const struct {
        ReplyAggregate kind;
        long n;
        const char *resp2, *resp3;
    } cases[] = {
        {REPLY_ARRAY, 3, "*3\r\n", "*3\r\n"},       {REPLY_MAP, 3, "*6\r\n", "%3\r\n"},
        {REPLY_SET, 2, "*2\r\n", "~2\r\n"},         {REPLY_PUSH, 3, "*3\r\n", ">3\r\n"},
        {REPLY_ATTRIBUTE, 1, "|1\r\n", "|1\r\n"},   {REPLY_ARRAY, 0, "*0\r\n", "*0\r\n"},
        {REPLY_MAP, 0, "*0\r\n", "%0\r\n"},         {REPLY_ARRAY, -1, "*-1\r\n", "*-1\r\n"},
        {REPLY_MAP, LONG_MAX / 2, "*9223372036854775806\r\n", "%4611686018427387903\r\n"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        assertBytes(b, respWriteAggregate(b, 2, cases[i].kind, cases[i].n), cases[i].resp2);
        assertBytes(b, respWriteAggregate(b, 3, cases[i].kind, cases[i].n), cases[i].resp3);
    }
}

static void test_null_and_boolean(void **state) {
    (void)state;
    size_t len;
    const char *p = respNull(2, REPLY_NULL_BULK, &len);
    assertBytes(p, len, "$-1\r\n");
    p = respNull(2, REPLY_NULL_ARRAY, &len);
    assertBytes(p, len, "*-1\r\n");
    p = respNull(3, REPLY_NULL_BULK, &len);
    assertBytes(p, len, "_\r\n");
    p = respNull(3, REPLY_NULL_ARRAY, &len);
    assertBytes(p, len, "_\r\n");
    assertBytes(respBoolean(2, 1), 4, ":1\r\n");
    assertBytes(respBoolean(2, 0), 4, ":0\r\n");
    assertBytes(respBoolean(3, 1), 4, "#t\r\n");
    assertBytes(respBoolean(3, 0), 4, "#f\r\n");
}

static void test_bulk(void **state) {
    (void)state;
    char b[64];
    assertBytes(b, respWriteBulk(b, "", 0), "$0\r\n\r\n");
    assertBytes(b, respWriteBulk(b, "hello", 5), "$5\r\nhello\r\n");
    /* Binary payloads are copied as they are. */
    size_t n = respWriteBulk(b, "a\r\n\0b", 5);
    assert_int_equal(n, 4 + 5 + 2);
    assert_memory_equal(b, "$5\r\na\r\n\0b\r\n", n);
}

static void test_double(void **state) {
    (void)state;
    char b[RESP_DOUBLE_MAX];
    assertBytes(b, respWriteDouble(b, 2, 1.5), "$3\r\n1.5\r\n");
    assertBytes(b, respWriteDouble(b, 3, 1.5), ",1.5\r\n");
    assertBytes(b, respWriteDouble(b, 2, 0.1), "$19\r\n0.10000000000000001\r\n");
    assertBytes(b, respWriteDouble(b, 3, 0.1), ",0.10000000000000001\r\n");
    assertBytes(b, respWriteDouble(b, 2, INFINITY), "$3\r\ninf\r\n");
    assertBytes(b, respWriteDouble(b, 3, -INFINITY), ",-inf\r\n");
    assertBytes(b, respWriteDouble(b, 3, NAN), ",nan\r\n");
    assertBytes(b, respWriteDouble(b, 3, -1e300), ",-1.0000000000000001e+300\r\n");
    /* The longest %.17g text fits the documented room. */
    size_t n = respWriteDouble(b, 2, -2.2250738585072014e-308);
    assert_true(n <= RESP_DOUBLE_MAX);
    assertBytes(b, n, "$24\r\n-2.2250738585072014e-308\r\n");
}

static void test_big_number_and_verbatim(void **state) {
    (void)state;
    char b[RESP_VERBATIM_HEADER_MAX];
    assertBytes(b, respWriteBigNumberHeader(b, 3, 20), "(");
    assertBytes(b, respWriteBigNumberHeader(b, 2, 20), "$20\r\n");
    assertBytes(b, respWriteVerbatimHeader(b, 3, 11, "txt"), "=15\r\ntxt:");
    assertBytes(b, respWriteVerbatimHeader(b, 2, 11, "txt"), "$11\r\n");
    assertBytes(b, respWriteVerbatimHeader(b, 3, 0, "mkd"), "=4\r\nmkd:");
}

static void test_sds_helpers(void **state) {
    (void)state;
    sds s = respCatHeader(sdsNew("x"), '$', 0);
    s = respCatHeader(s, '*', 12345);
    s = respCatHeader(s, '>', 18446744073709551615ULL);
    assert_string_equal(s, "x$0\r\n*12345\r\n>18446744073709551615\r\n");
    assert_int_equal(sdsLen(s), strlen(s));
    sdsClear(s);
    s = respCatBulk(s, "message", 7);
    s = respCatBulk(s, "", 0);
    assert_string_equal(s, "$7\r\nmessage\r\n$0\r\n\r\n");
    sdsFree(s);
}

static void test_bulk_long_long(void **state) {
    (void)state;
    sds s = respCatBulkLongLong(sdsEmpty(), 0);
    s = respCatBulkLongLong(s, -1);
    s = respCatBulkLongLong(s, 1234567890123LL);
    assert_string_equal(s, "$1\r\n0\r\n$2\r\n-1\r\n$13\r\n1234567890123\r\n");
    sdsClear(s);
    s = respCatBulkLongLong(s, LLONG_MIN);
    assert_string_equal(s, "$20\r\n-9223372036854775808\r\n");
    sdsFree(s);
}

/* A command is appended after what the string holds, byte for byte as a
 * replica or the AOF loader reads it. */
static void test_command(void **state) {
    (void)state;
    sds argv[3] = {sdsNew("SET"), sdsNewLen("k\0y", 3), sdsEmpty()};
    sds s = respCatCommand(sdsNew("#"), 3, argv);
    const char want[] = "#*3\r\n$3\r\nSET\r\n$3\r\nk\0y\r\n$0\r\n\r\n";
    assert_int_equal(sdsLen(s), sizeof(want) - 1);
    assert_memory_equal(s, want, sizeof(want) - 1);
    assert_int_equal(s[sdsLen(s)], '\0');
    s = respCatCommand(s, 0, NULL);
    assert_int_equal(sdsLen(s), sizeof(want) - 1 + 4);
    assert_memory_equal(s + sizeof(want) - 1, "*0\r\n", 4);
    sdsFree(s);

    const char *sel[2] = {"SELECT", "12"};
    s = respCatCommandLen(sdsEmpty(), 2, sel, NULL);
    assert_string_equal(s, "*2\r\n$6\r\nSELECT\r\n$2\r\n12\r\n");
    const char *auth[2] = {"AUTH", "p\0w"};
    size_t lens[2] = {4, 3};
    s = respCatCommandLen(s, 2, auth, lens);
    const char want2[] = "*2\r\n$6\r\nSELECT\r\n$2\r\n12\r\n*2\r\n$4\r\nAUTH\r\n$3\r\np\0w\r\n";
    assert_int_equal(sdsLen(s), sizeof(want2) - 1);
    assert_memory_equal(s, want2, sizeof(want2) - 1);
    sdsFree(s);
    for (int i = 0; i < 3; i++) sdsFree(argv[i]);
}

/* Every length class of a header (1 to 6 digits, both sides of each power
 * of ten) and argument counts past 9 and 99: the sized one-growth writers
 * agree with the piecewise ones. */
static void test_command_lengths(void **state) {
    (void)state;
    static const size_t sizes[] = {0, 1, 9, 10, 99, 100, 999, 1000, 9999, 10000, 99999, 100000, 123457};
    enum { NSIZES = sizeof(sizes) / sizeof(sizes[0]) };
    enum { MAXLEN = 123457, MAXARGC = 120 }; /* argument j starts at bytes + j */
    char *bytes = malloc(MAXLEN + MAXARGC);
    assert_non_null(bytes);
    for (size_t i = 0; i < MAXLEN + MAXARGC; i++) bytes[i] = (char)(i * 7);
    for (int argc = 1; argc <= MAXARGC; argc += 17) {
        sds *argv = malloc(sizeof(sds) * (size_t)argc);
        const char **ptrs = malloc(sizeof(char *) * (size_t)argc);
        size_t *lens = malloc(sizeof(size_t) * (size_t)argc);
        assert_true(argv && ptrs && lens);
        sds want = respCatHeader(sdsNew("prefix"), '*', (unsigned long long)argc);
        for (int j = 0; j < argc; j++) {
            size_t len = sizes[(j + argc) % NSIZES];
            argv[j] = sdsNewLen(bytes + j, len);
            ptrs[j] = bytes + j;
            lens[j] = len;
            want = respCatBulk(want, bytes + j, len);
        }
        sds got = respCatCommand(sdsNew("prefix"), argc, argv);
        assert_int_equal(sdsLen(got), sdsLen(want));
        assert_memory_equal(got, want, sdsLen(want));
        sds got2 = respCatCommandLen(sdsNew("prefix"), argc, ptrs, lens);
        assert_int_equal(sdsLen(got2), sdsLen(want));
        assert_memory_equal(got2, want, sdsLen(want));
        for (int j = 0; j < argc; j++) sdsFree(argv[j]);
        sdsFree(got);
        sdsFree(got2);
        sdsFree(want);
        free(argv);
        free(ptrs);
        free(lens);
    }
    free(bytes);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_header),          cmocka_unit_test(test_integer),
        cmocka_unit_test(test_aggregates),      cmocka_unit_test(test_null_and_boolean),
        cmocka_unit_test(test_bulk),            cmocka_unit_test(test_double),
        cmocka_unit_test(test_big_number_and_verbatim), cmocka_unit_test(test_sds_helpers),
        cmocka_unit_test(test_bulk_long_long), cmocka_unit_test(test_command),
        cmocka_unit_test(test_command_lengths),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
