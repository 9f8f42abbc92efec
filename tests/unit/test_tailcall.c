/* test_tailcall.c -- unit tests for src/script/tailcall.c: which `return
 * <call>` statements it rewrites (library calls ending a block) and which
 * it leaves (local functions, calls inside expressions, text in strings
 * and comments), that lines keep their numbers, and that the helper's name
 * never matches a name of the chunk. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <string.h>

#include "script/tailcall.h"

#define PREFIX "local cairn_tail=...;return function(...) "
#define SUFFIX "\nend"

/* Assert that src is rewritten to PREFIX want SUFFIX (want NULL: left as
 * is). */
static void expectRewrite(const char *src, const char *want) {
    sds got = tailcallRewrite(src, strlen(src));
    if (!want) {
        if (got) print_error("unexpected rewrite of [%s]: [%s]\n", src, got);
        assert_null(got);
        return;
    }
    assert_non_null(got);
    sds full = sdsCatPrintf(sdsEmpty(), PREFIX "%s" SUFFIX, want);
    assert_string_equal(got, full);
    sdsFree(full);
    sdsFree(got);
}

static void test_library_calls_are_wrapped(void **state) {
    (void)state;
    expectRewrite("return redis.call('get', KEYS[1])", "return cairn_tail(redis.call('get', KEYS[1]))");
    expectRewrite("return string.rep('x', 'y')", "return cairn_tail(string.rep('x', 'y'))");
    expectRewrite("return tostring(1);", "return cairn_tail(tostring(1));");
    expectRewrite("return cjson.encode{1, 2}", "return cairn_tail(cjson.encode{1, 2})");
    expectRewrite("return string.format'%d'", "return cairn_tail(string.format'%d')");
    expectRewrite("return redis.call([==[a]]b]==])", "return cairn_tail(redis.call([==[a]]b]==]))");
    expectRewrite("return KEYS[1]:upper()", "return cairn_tail(KEYS[1]:upper())");
    expectRewrite("return redis.call('x')('y')", "return cairn_tail(redis.call('x')('y'))");
}

static void test_only_returns_ending_a_block(void **state) {
    (void)state;
    expectRewrite("return tostring(1) .. 'x'", NULL);
    expectRewrite("return tostring(1), 2", NULL);
    expectRewrite("return redis.call", NULL);
    expectRewrite("return redis.call('a').b", NULL);
    expectRewrite("if x then return tostring(1) else return tostring(2) end",
                  "if x then return cairn_tail(tostring(1)) else return cairn_tail(tostring(2)) end");
    expectRewrite("repeat return error('x') until true", "repeat return cairn_tail(error('x')) until true");
    expectRewrite("if a then return f() elseif b then return g() end",
                  "if a then return cairn_tail(f()) elseif b then return cairn_tail(g()) end");
}

static void test_seed_scripts_are_unchanged(void **state) {
    (void)state;
    expectRewrite("local c = redis.call('incr', KEYS[1]) if c == 1 then redis.call('expire', KEYS[1], ARGV[1]) "
                  "end return c",
                  NULL);
    expectRewrite("return 1", NULL);
    expectRewrite("", NULL);
}

static void test_lua_functions_keep_their_tail_calls(void **state) {
    (void)state;
    expectRewrite("local function f(n) if n == 0 then return 0 end return f(n - 1) end return f(10)", NULL);
    expectRewrite("local t = {} function t.f() end return t.f()", NULL);
    expectRewrite("local redis = {call = function() end} return redis.call('x')", NULL);
    expectRewrite("local function g(redis) return redis.call('x') end", NULL);
    expectRewrite("for i, f in ipairs(x) do return f(i) end", NULL);
    expectRewrite("return (tostring)(1)", NULL);
    expectRewrite("local s = 'x' return s:rep(2)", NULL);
    /* the local is gone after its block */
    expectRewrite("do local string = {} end return string.rep('a', 2)",
                  "do local string = {} end return cairn_tail(string.rep('a', 2))");
    expectRewrite("for _, k in ipairs(KEYS) do return tostring(k) end",
                  "for _, k in ipairs(KEYS) do return cairn_tail(tostring(k)) end");
}

static void test_aliases_of_library_paths(void **state) {
    (void)state;
    expectRewrite("local rcall = redis.call\nreturn rcall('x')", "local rcall = redis.call\nreturn cairn_tail(rcall('x'))");
    expectRewrite("local r = redis local c = r.call return c('x')",
                  "local r = redis local c = r.call return cairn_tail(c('x'))");
    expectRewrite("local t = {} local rcall = redis.call t.rcall = 1 return rcall('x')",
                  "local t = {} local rcall = redis.call t.rcall = 1 return cairn_tail(rcall('x'))");
    /* assigned again (even later in the text), or not a plain path */
    expectRewrite("local rcall = redis.call rcall = function() end return rcall()", NULL);
    expectRewrite("local rcall = redis.call local function h() return rcall() end rcall, x = nil, 1", NULL);
    expectRewrite("local rcall = redis.call local function rcall() end return rcall()", NULL);
    expectRewrite("local rcall = redis.call('x') return rcall()", NULL);
    expectRewrite("local a, b = redis.call return a()", NULL);
    expectRewrite("local f = redis.call or function() end return f()", NULL);
}

static void test_strings_and_comments_are_text(void **state) {
    (void)state;
    expectRewrite("local s = \"return f()\" -- return g()\n--[[ return h() ]] return 1", NULL);
    expectRewrite("local s = 'it\\'s return f()' return s", NULL);
    expectRewrite("local s = [[\nreturn f()\n]] return #s", NULL);
    expectRewrite("--[==[ ]] return f() ]==] return 0", NULL);
}

static void test_nested_functions(void **state) {
    (void)state;
    expectRewrite("return pcall(function() return redis.call('x') end)",
                  "return cairn_tail(pcall(function() return cairn_tail(redis.call('x')) end))");
    expectRewrite("local function f()\n  return redis.call('incr', 's')\nend\n\nf()",
                  "local function f()\n  return cairn_tail(redis.call('incr', 's'))\nend\n\nf()");
    expectRewrite("local o = {} function o:m() return self.x() end", NULL);
}

static void test_lines_and_helper_name(void **state) {
    (void)state;
    const char *src = "\nlocal a = 1\nreturn redis.call(\n'get',\n[[k\n]])";
    sds got = tailcallRewrite(src, strlen(src));
    assert_non_null(got);
    size_t inLines = 0, outLines = 0;
    for (const char *p = src; *p; p++) inLines += *p == '\n';
    for (const char *p = got; *p; p++) outLines += *p == '\n';
    assert_int_equal(outLines, inLines + 1); /* only the newline before the final `end` */
    assert_true(strchr(got, '\n') > strstr(got, "function(...)"));
    sdsFree(got);

    src = "local cairn_tail, cairn_tail1 = 1 return tostring(cairn_tail)";
    got = tailcallRewrite(src, strlen(src));
    assert_non_null(got);
    assert_string_equal(got, "local cairn_tail2=...;return function(...) local cairn_tail, cairn_tail1 = 1 "
                             "return cairn_tail2(tostring(cairn_tail))\nend");
    sdsFree(got);
}

/* ---------------------------------------------------------------- */
/* scriptRewrite: globals passed in as upvalues. */

/* The sandbox as scriptRewrite's callers see it, in small. */
static int kindOf(void *ctx, const char *name, size_t len) {
    (void)ctx;
    static const char *tables[] = {"redis", "string", "math", "table", "cjson", "struct", "_G", NULL};
    static const char *functions[] = {"tonumber", "tostring", "ipairs", "unpack", "pairs", "type",
                                      "loadstring", "load", "pcall", "error", "select", NULL};
    sds n = sdsNewLen(name, len);
    int kind = GLOBAL_ABSENT;
    if (!strcmp(n, "KEYS") || !strcmp(n, "ARGV")) kind = GLOBAL_PER_RUN;
    for (int i = 0; tables[i]; i++)
        if (!strcmp(n, tables[i])) kind = GLOBAL_TABLE;
    for (int i = 0; functions[i]; i++)
        if (!strcmp(n, functions[i])) kind = GLOBAL_FUNCTION;
    sdsFree(n);
    return kind;
}

/* The aliases of src as "name name* ..." (a * marks a per-run table the
 * script only reads), "" for none; and the text, in *text (caller frees). */
static sds aliasesOf(const char *src, sds *text) {
    ScriptRewrite rw;
    scriptRewrite(src, strlen(src), kindOf, NULL, &rw);
    sds out = sdsEmpty();
    for (int a = 0; a < rw.naliases; a++) {
        out = sdsCatPrintf(out, "%s%s%s", a ? " " : "", rw.aliases[a], rw.readOnly[a] ? "*" : "");
    }
    if (text) *text = rw.text ? sdsDup(rw.text) : NULL;
    scriptRewriteFree(&rw);
    return out;
}

static void expectAliases(const char *src, const char *want) {
    sds got = aliasesOf(src, NULL);
    if (strcmp(got, want) != 0) print_error("aliases of [%s]: [%s], want [%s]\n", src, got, want);
    assert_string_equal(got, want);
    sdsFree(got);
}

static void test_globals_become_upvalues(void **state) {
    (void)state;
    sds text;
    sds got = aliasesOf("local x = tonumber(ARGV[1])\nreturn redis.call('incr', KEYS[1]) + x", &text);
    assert_string_equal(got, "tonumber ARGV* redis KEYS*");
    assert_string_equal(text, "local cairn_tail,tonumber,ARGV,redis,KEYS=...;return function(...) "
                              "local x = tonumber(ARGV[1])\nreturn redis.call('incr', KEYS[1]) + x\nend");
    sdsFree(got);
    sdsFree(text);
    /* with a tail call too: one wrapper */
    got = aliasesOf("return redis.call('get', KEYS[1])", &text);
    assert_string_equal(got, "redis KEYS*");
    assert_string_equal(text, "local cairn_tail,redis,KEYS=...;return function(...) "
                              "return cairn_tail(redis.call('get', KEYS[1]))\nend");
    sdsFree(got);
    sdsFree(text);
    /* nothing to pass: no rewrite */
    got = aliasesOf("local a = 1 return a", &text);
    assert_string_equal(got, "");
    assert_null(text);
    sdsFree(got);
    expectAliases("return x", ""); /* unknown to the sandbox */
    expectAliases("for _, v in ipairs(ARGV) do end return #KEYS", "ipairs ARGV* KEYS*");
    expectAliases("return {unpack(KEYS, 2)}, select('#', unpack(ARGV))", "unpack KEYS* select ARGV*");
    expectAliases("return cjson.encode({KEYS[1], [KEYS[2]] = ARGV[1]})", "cjson KEYS* ARGV*");
    expectAliases("local a, b = KEYS[1], KEYS[2] return a", "KEYS*");
    expectAliases("local f = tonumber return f(ARGV[1]) == 1", "tonumber ARGV*");
}

static void test_uses_that_keep_a_global(void **state) {
    (void)state;
    /* assigned (an error: the globals are read-only) */
    expectAliases("redis = 1 return redis.call('ping')", "");
    expectAliases("local x = tonumber('1') tonumber, y = 1, 2", "");
    expectAliases("function tonumber() end return tonumber('1')", "");
    expectAliases("KEYS = {} return KEYS[1]", "");
    /* errors that would name the variable's kind */
    expectAliases("return redis()", "");
    expectAliases("return redis.call('ping'), redis 'x'", "");
    expectAliases("return tonumber.x", "");
    expectAliases("return #tonumber", "");
    expectAliases("return tonumber('1'), -tonumber", "");
    expectAliases("return redis .. 'x'", "");
    expectAliases("return 1 + KEYS[1], KEYS * 2", "");
    /* a per-run table either way: both stay global */
    expectAliases("return KEYS(), ARGV[1]", "");
    /* no longer names of the sandbox's globals */
    expectAliases("local redis = {} return redis.call()", "");
    expectAliases("local function f(KEYS) return KEYS[1] end return f({})", "");
    expectAliases("for KEYS = 1, 2 do end return 1", "");
    expectAliases("return {redis = 1, KEYS = 2}", "");
    expectAliases("local t = {} return t.redis, t:tonumber()", "");
    expectAliases("goto redis ::redis:: return 1", "");
}

static void test_per_run_tables(void **state) {
    (void)state;
    /* written, kept or passed on: a new table each run (no '*') */
    expectAliases("KEYS[1] = 'x' return KEYS[1]", "KEYS");
    expectAliases("KEYS[1], ARGV[1] = 'x', 'y'", "KEYS ARGV");
    expectAliases("local t = KEYS return t[1]", "KEYS");
    expectAliases("table.insert(ARGV, 'x') return #ARGV", "table ARGV");
    expectAliases("return ARGV", "ARGV");
    expectAliases("return KEYS.n", "KEYS");
    expectAliases("local x = 1 x, KEYS[1] = 2, 3", "KEYS");
    /* a way to the globals themselves: KEYS and ARGV stay global */
    expectAliases("return _G.KEYS[1], ARGV[1]", "_G");
    expectAliases("return loadstring('return 1')(), KEYS[1]", "loadstring");
    expectAliases("return load(function() end), ARGV[1]", "load");
    expectAliases("local _G = {} return _G.x, KEYS[1]", "KEYS*");
    /* a local of those names (its initialiser may read the global) */
    expectAliases("local KEYS = KEYS return {KEYS[1], ARGV[1]}", "");
    expectAliases("local function f(ARGV) return ARGV end return f(KEYS)", "");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_library_calls_are_wrapped),
        cmocka_unit_test(test_only_returns_ending_a_block),
        cmocka_unit_test(test_seed_scripts_are_unchanged),
        cmocka_unit_test(test_lua_functions_keep_their_tail_calls),
        cmocka_unit_test(test_aliases_of_library_paths),
        cmocka_unit_test(test_strings_and_comments_are_text),
        cmocka_unit_test(test_nested_functions),
        cmocka_unit_test(test_lines_and_helper_name),
        cmocka_unit_test(test_globals_become_upvalues),
        cmocka_unit_test(test_uses_that_keep_a_global),
        cmocka_unit_test(test_per_run_tables),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
