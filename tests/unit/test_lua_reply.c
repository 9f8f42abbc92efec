/* test_lua_reply.c -- unit tests for src/script/lua_reply.c, the reply
 * sink through which redis.call gets a command's reply as a Lua value.
 *
 * The reference is what redis.call returned before the sink existed: the
 * command's reply encoded as RESP (proto/resp_write.h) and read back by
 * the reader below, which is engine.c's reader as of commit 5b414c2 (its
 * arrays now grown unsized, as Redis's are, since holes show it).  Each
 * test drives the same sequence of reply items into both, for RESP2 and
 * RESP3, and requires equal Lua values: same types, numbers, strings, the
 * same tables with the same `#`, entries in the same `next` order, and the
 * same "is an error reply" answer.  Random item streams (seeded) cover
 * every item kind nested up to 5 levels deep, deferred lengths, attributes,
 * null aggregates and values after the first; a few fixed cases pin the
 * conversions the integration tests cannot reach through Redis's commands
 * (booleans, big numbers, verbatim strings, attributes, push). */
#include <lauxlib.h>
#include <lualib.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ds/sds.h"
#include "ds/util.h"
#include "proto/resp_write.h"
#include "script/engine.h"
#include "script/lua_reply.h"

/* ------------------------------------------------------------------ */
/* The reference: engine.c's RESP reader as of 5b414c2, verbatim. */

typedef struct ReplyReader {
    const char *p, *end;
    int resp;
} ReplyReader;

static const char *lineEnd(ReplyReader *r) {
    const char *e = memchr(r->p, '\r', (size_t)(r->end - r->p));
    return e && e + 1 < r->end ? e : NULL;
}

static long long readLength(ReplyReader *r) {
    /* Short plain digits (most lengths and integers) read inline. */
    const char *q = r->p + 1;
    long long v = 0;
    while (q < r->end && q < r->p + 16 && *q >= '0' && *q <= '9') v = v * 10 + (*q++ - '0');
    if (q > r->p + 1 && q + 1 < r->end && q[0] == '\r' && (q - r->p == 2 || r->p[1] != '0')) {
        r->p = q + 2;
        return v;
    }
    const char *e = lineEnd(r);
    long long n = -1;
    if (e) {
        if (!stringToLongLong(r->p + 1, (size_t)(e - r->p - 1), &n)) n = -1;
        r->p = e + 2;
    } else {
        r->p = r->end;
    }
    return n;
}

static void readValue(lua_State *L, ReplyReader *r);

static void readAggregate(lua_State *L, ReplyReader *r, char kind, long long n) {
    /* Sized up front (every element takes at least 3 bytes of the reply),
     * so that filling the table does not rehash it again and again. */
    long long room = (r->end - r->p) / 3;
    int size = (int)(n < room ? n : room);
    if (kind == '*') {
        /* An array is not sized: Redis's reader grows it item by item, and
         * `#` of one with nil holes (RESP3) depends on how it grew. */
        lua_newtable(L);
        for (long long i = 1; i <= n && r->p < r->end; i++) {
            readValue(L, r);
            lua_rawseti(L, -2, (int)i);
        }
        return;
    }
    lua_createtable(L, 0, 1);
    lua_createtable(L, 0, size);
    for (long long i = 0; i < n && r->p < r->end; i++) {
        readValue(L, r);
        if (kind == '%') readValue(L, r);
        else lua_pushboolean(L, 1);
        if (lua_isnil(L, -2)) lua_pop(L, 2);
        else lua_rawset(L, -3);
    }
    setSlotField(L, -2, kind == '%' ? SLOT_MAP : SLOT_SET);
}

static void readValue(lua_State *L, ReplyReader *r) {
    if (!lua_checkstack(L, 6) || r->p >= r->end) {
        lua_pushnil(L);
        r->p = r->end;
        return;
    }
    char kind = *r->p;
    const char *start = r->p + 1;
    switch (kind) {
    case '+':
    case '-': {
        const char *e = lineEnd(r);
        if (!e) e = r->end;
        lua_createtable(L, 0, 1);
        lua_pushlstring(L, start, (size_t)(e - start));
        setSlotField(L, -2, kind == '+' ? SLOT_OK : SLOT_ERR);
        r->p = e + 2;
        break;
    }
    case ':': {
        long long v = readLength(r);
        lua_pushnumber(L, (lua_Number)v);
        break;
    }
    case '$':
    case '=': {
        long long n = readLength(r);
        if (n < 0 || r->end - r->p < n + 2) {
            if (r->resp == 3 && n < 0) lua_pushnil(L);
            else lua_pushboolean(L, 0);
            if (n >= 0) r->p = r->end;
            break;
        }
        if (kind == '$') {
            lua_pushlstring(L, r->p, (size_t)n);
        } else {
            lua_newtable(L);
            lua_newtable(L);
            lua_pushlstring(L, r->p, n >= 3 ? 3 : (size_t)n);
            lua_setfield(L, -2, "format");
            lua_pushlstring(L, n >= 4 ? r->p + 4 : r->p, n >= 4 ? (size_t)n - 4 : 0);
            lua_setfield(L, -2, "string");
            lua_setfield(L, -2, "verbatim_string");
        }
        r->p += n + 2;
        break;
    }
    case '*':
    case '%':
    case '~':
    case '>': {
        long long n = readLength(r);
        if (n < 0) {
            lua_pushboolean(L, 0);
            break;
        }
        readAggregate(L, r, kind == '>' ? '*' : kind, n);
        break;
    }
    case '|': { /* attributes are skipped: read and drop, then the value */
        long long n = readLength(r);
        readAggregate(L, r, '%', n < 0 ? 0 : n);
        lua_pop(L, 1);
        readValue(L, r);
        break;
    }
    case '_':
        readLength(r);
        lua_pushnil(L);
        break;
    case '#': {
        const char *e = lineEnd(r);
        lua_pushboolean(L, start < r->end && *start == 't');
        r->p = e ? e + 2 : r->end;
        break;
    }
    case ',': {
        const char *e = lineEnd(r);
        if (!e) e = r->end;
        char buf[128];
        size_t n = (size_t)(e - start) < sizeof(buf) - 1 ? (size_t)(e - start) : sizeof(buf) - 1;
        memcpy(buf, start, n);
        buf[n] = '\0';
        lua_newtable(L);
        lua_pushnumber(L, strtod(buf, NULL));
        lua_setfield(L, -2, "double");
        r->p = e + 2;
        break;
    }
    case '(': {
        const char *e = lineEnd(r);
        if (!e) e = r->end;
        lua_newtable(L);
        lua_pushlstring(L, start, (size_t)(e - start));
        lua_setfield(L, -2, "big_number");
        r->p = e + 2;
        break;
    }
    default:
        lua_pushnil(L);
        r->p = r->end;
    }
    if (r->p > r->end) r->p = r->end;
}


/* pushFakeReply's answer: the value pushed; 1 if it is an error reply. */
static int referenceRead(lua_State *L, const char *p, size_t len, int resp) {
    ReplyReader r = {p, p + len, resp};
    readValue(L, &r);
    int isErr = 0;
    if (len > 0 && (p[0] == '-' || p[0] == '|') && lua_type(L, -1) == LUA_TTABLE) {
        pushSlot(L, SLOT_ERR);
        lua_rawget(L, -2);
        isErr = lua_isstring(L, -1);
        lua_pop(L, 1);
    }
    return isErr;
}

/* ------------------------------------------------------------------ */
/* A sink writing RESP bytes into an sds (what a RESP client receives). */

typedef struct BytesSink {
    ReplySink base;
    int resp;
    sds out;
    size_t marks[64]; /* offsets of deferred headers not yet set */
    int nmarks;
} BytesSink;

static BytesSink *bytesOf(ReplySink *s) { return (BytesSink *)s; }

static void bytesFramed(BytesSink *b, const char *head, size_t hlen, const char *p, size_t len) {
    b->out = sdsCatLen(b->out, head, hlen);
    b->out = sdsCatLen(b->out, p, len);
    b->out = sdsCatLen(b->out, "\r\n", 2);
}

static void bStatus(ReplySink *s, const char *p, size_t len) { bytesFramed(bytesOf(s), "+", 1, p, len); }
static void bError(ReplySink *s, const char *p, size_t len) { bytesFramed(bytesOf(s), "-", 1, p, len); }
static void bInteger(ReplySink *s, long long v) {
    char h[RESP_HEADER_MAX];
    bytesOf(s)->out = sdsCatLen(bytesOf(s)->out, h, respWriteInteger(h, v));
}
static void bDouble(ReplySink *s, double d) {
    char h[RESP_DOUBLE_MAX];
    bytesOf(s)->out = sdsCatLen(bytesOf(s)->out, h, respWriteDouble(h, bytesOf(s)->resp, d));
}
static void bBulk(ReplySink *s, const char *p, size_t len) {
    char h[RESP_HEADER_MAX];
    bytesFramed(bytesOf(s), h, respWriteHeader(h, '$', (long long)len), p, len);
}
static void bNull(ReplySink *s, ReplyNullKind kind) {
    size_t len;
    const char *p = respNull(bytesOf(s)->resp, kind, &len);
    bytesOf(s)->out = sdsCatLen(bytesOf(s)->out, p, len);
}
static void bBoolean(ReplySink *s, int v) { bytesOf(s)->out = sdsCatLen(bytesOf(s)->out, respBoolean(bytesOf(s)->resp, v), 4); }
static void bBigNumber(ReplySink *s, const char *p, size_t len) {
    char h[RESP_HEADER_MAX];
    bytesFramed(bytesOf(s), h, respWriteBigNumberHeader(h, bytesOf(s)->resp, len), p, len);
}
static void bVerbatim(ReplySink *s, const char *p, size_t len, const char *ext) {
    char h[RESP_VERBATIM_HEADER_MAX];
    bytesFramed(bytesOf(s), h, respWriteVerbatimHeader(h, bytesOf(s)->resp, len, ext), p, len);
}
static void bAggregate(ReplySink *s, ReplyAggregate kind, long n) {
    char h[RESP_HEADER_MAX];
    bytesOf(s)->out = sdsCatLen(bytesOf(s)->out, h, respWriteAggregate(h, bytesOf(s)->resp, kind, n));
}
static void *bDeferred(ReplySink *s) {
    BytesSink *b = bytesOf(s);
    assert_true(b->nmarks < 64);
    b->marks[b->nmarks++] = sdsLen(b->out);
    return (void *)(intptr_t)b->nmarks;
}
/* Splice the header in at its mark (deferred lengths are set innermost
 * first, so the mark being set is the last one). */
static void bSetDeferred(ReplySink *s, void *node, ReplyAggregate kind, long n) {
    BytesSink *b = bytesOf(s);
    assert_int_equal((intptr_t)node, b->nmarks);
    size_t at = b->marks[--b->nmarks];
    char h[RESP_HEADER_MAX];
    size_t hlen = respWriteAggregate(h, b->resp, kind, n);
    sds spliced = sdsNewLen(b->out, at);
    spliced = sdsCatLen(spliced, h, hlen);
    spliced = sdsCatLen(spliced, b->out + at, sdsLen(b->out) - at);
    sdsFree(b->out);
    b->out = spliced;
}

static const ReplySinkType bytesSinkType = {
    .name = "bytes", .status = bStatus, .error = bError, .integer = bInteger, .dbl = bDouble,
    .bulk = bBulk, .null = bNull, .boolean = bBoolean, .bigNumber = bBigNumber, .verbatim = bVerbatim,
    .aggregate = bAggregate, .deferred = bDeferred, .setDeferred = bSetDeferred, .raw = NULL,
};

/* ------------------------------------------------------------------ */
/* Reply item streams. */

typedef struct Gen {
    uint64_t s;
} Gen;

static unsigned rnd(Gen *g, unsigned n) {
    g->s = g->s * 6364136223846793005ULL + 1442695040888963407ULL;
    return (unsigned)(g->s >> 33) % n;
}

/* Text of up to 12 bytes from an alphabet; binary ones include CR, LF, NUL. */
static size_t genText(Gen *g, char *buf, int binary) {
    static const char plain[] = "abcXYZ 019_:.-";
    static const char bin[] = "ab\r\n\0 \xff$*%";
    size_t len = rnd(g, 13);
    for (size_t i = 0; i < len; i++)
        buf[i] = binary ? bin[rnd(g, sizeof(bin) - 1)] : plain[rnd(g, sizeof(plain) - 1)];
    return len;
}

static void genValue(Gen *g, ReplySink *k, int depth);

static void genItems(Gen *g, ReplySink *k, int depth, long n) {
    for (long i = 0; i < n; i++) genValue(g, k, depth + 1);
}

static void genValue(Gen *g, ReplySink *k, int depth) {
    static const long long ints[] = {0, 1, 9, 10, -1, 12345, LLONG_MAX, LLONG_MIN, 1LL << 53, (1LL << 53) + 1};
    static const double dbls[] = {0.0, -0.0, 1.5, 0.1, -2.5e-300, 1e300, 3.141};
    static const ReplyAggregate kinds[] = {REPLY_ARRAY, REPLY_MAP, REPLY_SET, REPLY_PUSH};
    const ReplySinkType *t = k->type;
    char buf[16];
    size_t len;
    switch (rnd(g, depth >= 5 ? 10 : 14)) {
    case 0: len = genText(g, buf, 0); t->status(k, buf, len); break;
    case 1: len = genText(g, buf, 0); t->error(k, buf, len); break;
    case 2: t->integer(k, ints[rnd(g, 10)]); break;
    case 3: {
        unsigned i = rnd(g, 10);
        t->dbl(k, i < 7 ? dbls[i] : i == 7 ? INFINITY : i == 8 ? -INFINITY : NAN);
        break;
    }
    case 4: len = genText(g, buf, 1); t->bulk(k, buf, len); break;
    case 5: t->null(k, rnd(g, 2) ? REPLY_NULL_ARRAY : REPLY_NULL_BULK); break;
    case 6: t->boolean(k, (int)rnd(g, 2)); break;
    case 7: t->bigNumber(k, "1234567999999999999999999999999999999", 37); break;
    case 8: len = genText(g, buf, 1); t->verbatim(k, buf, len, rnd(g, 2) ? "txt" : "mkd"); break;
    case 9: /* an aggregate announced as null */
        t->aggregate(k, kinds[rnd(g, 3)], -1);
        break;
    case 10:
    case 11: {
        ReplyAggregate kind = kinds[rnd(g, 4)];
        long n = (long)rnd(g, 6);
        t->aggregate(k, kind, n);
        genItems(g, k, depth, kind == REPLY_MAP ? 2 * n : n);
        break;
    }
    case 12: { /* an attribute annotating the value that follows */
        long n = 1 + (long)rnd(g, 2);
        t->aggregate(k, REPLY_ATTRIBUTE, n);
        genItems(g, k, depth, 2 * n);
        genValue(g, k, depth + 1);
        break;
    }
    default: { /* a deferred length */
        ReplyAggregate kind = kinds[rnd(g, 3)];
        long n = (long)rnd(g, 6);
        void *node = t->deferred(k);
        genItems(g, k, depth, kind == REPLY_MAP ? 2 * n : n);
        t->setDeferred(k, node, kind, n);
    }
    }
}

/* ------------------------------------------------------------------ */
/* Comparing Lua values. */

static int sameValue(lua_State *L, int a, int b, int depth);

/* A new table {k1, v1, k2, v2, ...} of t's entries in next() order. */
static int entries(lua_State *L, int t) {
    lua_newtable(L);
    int list = lua_gettop(L), n = 0;
    lua_pushnil(L);
    while (lua_next(L, t)) {
        lua_pushvalue(L, -2);
        lua_rawseti(L, list, ++n);
        lua_rawseti(L, list, ++n);
    }
    return n;
}

/* Entry i (1-based) of list la equals entry j of list lb. */
static int sameEntry(lua_State *L, int la, int i, int lb, int j, int depth) {
    int ok = 1;
    for (int part = 0; ok && part < 2; part++) {
        lua_rawgeti(L, la, 2 * i - 1 + part);
        lua_rawgeti(L, lb, 2 * j - 1 + part);
        ok = sameValue(L, lua_gettop(L) - 1, lua_gettop(L), depth + 1);
        lua_pop(L, 2);
    }
    return ok;
}

/* Tables a and b hold equal entries and have the same length.  The entries
 * must come in the same next() order, except in a table with tables for
 * keys, whose order follows addresses. */
static int sameTable(lua_State *L, int a, int b, int depth) {
    if (!lua_checkstack(L, 12)) return 0;
    if (lua_objlen(L, a) != lua_objlen(L, b)) return 0;
    int na = entries(L, a) / 2, nb = entries(L, b) / 2;
    int la = lua_gettop(L) - 1, lb = lua_gettop(L);
    int ok = na == nb, tableKeys = 0;
    for (int i = 1; i <= na; i++) {
        lua_rawgeti(L, la, 2 * i - 1);
        tableKeys |= lua_istable(L, -1);
        lua_pop(L, 1);
    }
    char used[64] = {0};
    for (int i = 1; ok && i <= na; i++) {
        if (!tableKeys) {
            ok = sameEntry(L, la, i, lb, i, depth);
            continue;
        }
        ok = 0;
        for (int j = 1; !ok && j <= nb && j <= 64; j++)
            if (!used[j - 1] && sameEntry(L, la, i, lb, j, depth)) used[j - 1] = ok = 1;
    }
    lua_pop(L, 2);
    return ok;
}

static int sameValue(lua_State *L, int a, int b, int depth) {
    if (depth > 50) return 0;
    if (lua_type(L, a) != lua_type(L, b)) return 0;
    switch (lua_type(L, a)) {
    case LUA_TNIL: return 1;
    case LUA_TBOOLEAN: return lua_toboolean(L, a) == lua_toboolean(L, b);
    case LUA_TNUMBER: {
        lua_Number x = lua_tonumber(L, a), y = lua_tonumber(L, b);
        if (isnan(x) || isnan(y)) return isnan(x) && isnan(y) && signbit(x) == signbit(y);
        return x == y && signbit(x) == signbit(y);
    }
    case LUA_TSTRING: {
        size_t la, lb;
        const char *sa = lua_tolstring(L, a, &la), *sb = lua_tolstring(L, b, &lb);
        return la == lb && memcmp(sa, sb, la) == 0;
    }
    case LUA_TTABLE: return sameTable(L, a, b, depth);
    default: return 0;
    }
}

/* ------------------------------------------------------------------ */

static lua_State *newState(void) {
    lua_State *L = luaL_newstate();
    static const char *const names[] = {"err", "ok", "double", "big_number", "map", "set", "verbatim_string",
                                        "ignore_error_stats_update"};
    for (int slot = SLOT_ERR; slot <= SLOT_ERR_COUNTED; slot++) {
        lua_pushstring(L, names[slot - SLOT_ERR]);
        lua_rawseti(L, LUA_REGISTRYINDEX, slot);
    }
    return L;
}

typedef void Emit(void *ctx, ReplySink *k);

/* Run emit into both paths for version resp; assert equal results. */
static void checkBoth(lua_State *L, int resp, Emit *emit, void *ctx, const char *what) {
    int base = lua_gettop(L);
    BytesSink b = {.base = {&bytesSinkType}, .resp = resp, .out = sdsEmpty(), .nmarks = 0};
    emit(ctx, &b.base);
    assert_int_equal(b.nmarks, 0);
    int refErr = referenceRead(L, b.out, sdsLen(b.out), resp);

    LuaReplySink k;
    luaReplySinkInit(&k, L, resp);
    emit(ctx, &k.base);
    int sinkErr = luaReplySinkFinish(&k);
    assert_int_equal(lua_gettop(L), base + 2);
    if (!sameValue(L, base + 1, base + 2, 0) || refErr != sinkErr) {
        sds repr = sdsCatRepr(sdsEmpty(), b.out, sdsLen(b.out));
        fail_msg("%s, RESP%d: sink differs from the RESP reader for %s", what, resp, repr);
    }
    sdsFree(b.out);
    lua_settop(L, base);
}

static void emitRandom(void *ctx, ReplySink *k) {
    Gen g = {*(uint64_t *)ctx};
    genValue(&g, k, 0);
    if (rnd(&g, 8) == 0) genValue(&g, k, 0); /* a second value: dropped by both */
}

static void test_random_streams(void **state) {
    (void)state;
    lua_State *L = newState();
    for (uint64_t seed = 1; seed <= 20000; seed++) {
        char what[64];
        snprintf(what, sizeof(what), "seed %llu", (unsigned long long)seed);
        checkBoth(L, 2, emitRandom, &seed, what);
        checkBoth(L, 3, emitRandom, &seed, what);
    }
    lua_close(L);
}

/* Fixed cases: RESP3 types no script can get from Redis's own commands. */
static void emitDebugProtocol(void *ctx, ReplySink *k) {
    const ReplySinkType *t = k->type;
    switch (*(int *)ctx) {
    case 0: t->boolean(k, 1); break;
    case 1: t->bigNumber(k, "1234567999999999999999999999999999999", 37); break;
    case 2: t->verbatim(k, "This is a verbatim\nstring", 25, "txt"); break;
    case 3: /* DEBUG PROTOCOL attrib */
        t->aggregate(k, REPLY_ATTRIBUTE, 1);
        t->bulk(k, "key-popularity", 14);
        t->aggregate(k, REPLY_ARRAY, 2);
        t->bulk(k, "key:123", 7);
        t->integer(k, 90);
        t->bulk(k, "Some real reply following the attribute", 39);
        break;
    case 4: /* DEBUG PROTOCOL push: a push, then a reply */
        t->aggregate(k, REPLY_PUSH, 2);
        t->bulk(k, "server-cpu-usage", 16);
        t->integer(k, 42);
        t->bulk(k, "Some real reply following the push reply", 40);
        break;
    case 5: /* a map with a nil key and a set with a nil member */
        t->aggregate(k, REPLY_MAP, 2);
        t->null(k, REPLY_NULL_BULK);
        t->integer(k, 1);
        t->bulk(k, "k", 1);
        t->aggregate(k, REPLY_SET, 2);
        t->null(k, REPLY_NULL_BULK);
        t->bulk(k, "m", 1);
        break;
    case 6: { /* nested deferred lengths, the outer one a map */
        void *outer = t->deferred(k);
        t->bulk(k, "a", 1);
        void *inner = t->deferred(k);
        t->integer(k, 1);
        t->null(k, REPLY_NULL_BULK);
        t->integer(k, 3);
        t->setDeferred(k, inner, REPLY_ARRAY, 3);
        t->bulk(k, "b", 1);
        t->aggregate(k, REPLY_SET, 0);
        t->setDeferred(k, outer, REPLY_MAP, 2);
        break;
    }
    case 7: t->error(k, "ERR boom", 8); break;
    case 8: /* an error after an attribute is still an error reply */
        t->aggregate(k, REPLY_ATTRIBUTE, 1);
        t->bulk(k, "k", 1);
        t->error(k, "ERR inner", 9);
        t->error(k, "ERR outer", 9);
        break;
    case 9: /* a status keeps what precedes a CR, as on the wire */
        t->status(k, "ab\rcd", 5);
        break;
    default: /* no reply at all */
        break;
    }
}

static void test_fixed_cases(void **state) {
    (void)state;
    lua_State *L = newState();
    for (int i = 0; i <= 10; i++) {
        char what[32];
        snprintf(what, sizeof(what), "case %d", i);
        checkBoth(L, 2, emitDebugProtocol, &i, what);
        checkBoth(L, 3, emitDebugProtocol, &i, what);
    }
    lua_close(L);
}

/* The comparison itself can fail: values that differ only in a table's
 * order, length or a number's sign are told apart. */
static void test_comparison_tells_apart(void **state) {
    (void)state;
    lua_State *L = newState();
    (void)luaL_dostring(L, "return {1, 2, 3}, {1, 2, nil, 4}, 0, 0, {a=1, b=2}, {b=2, a=1}, {1, 2, 3}");
    assert_int_equal(lua_gettop(L), 7);
    lua_pushnumber(L, -0.0);
    lua_replace(L, 3);
    assert_true(sameValue(L, 1, 7, 0));
    assert_false(sameValue(L, 1, 2, 0));
    assert_false(sameValue(L, 3, 4, 0));
    assert_false(sameValue(L, 1, 5, 0));
    lua_close(L);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_comparison_tells_apart),
        cmocka_unit_test(test_fixed_cases),
        cmocka_unit_test(test_random_streams),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
