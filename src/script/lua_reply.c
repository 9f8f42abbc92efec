/* lua_reply.c -- what redis.call returns: the reply sink that turns a
 * command's reply items into one Lua value while the command runs.
 *
 * redis.call installs a LuaReplySink on the scripting pseudo-client for
 * the length of the command (CLIENT_REPLY_SINK), so no RESP is written or
 * read back.  The values are those Redis 7.0 makes of the RESP its
 * commands write, in the version the script chose with redis.setresp:
 *
 *   item          RESP2                      RESP3
 *   status        {ok=text}                  same
 *   error         {err=text}                 same
 *   integer       number                     same
 *   bulk          string                     same
 *   null          false                      nil
 *   double        string (its reply text)    {double=number}
 *   boolean       number 1 or 0              true / false
 *   big number    string                     {big_number=text}
 *   verbatim      string                     {verbatim_string={format=, string=}}
 *   array, push   table 1..n                 same
 *   map           table 1..2n (k, v, ...)    {map={[k]=v}}
 *   set           table 1..n                 {set={[v]=true}}
 *   attribute     dropped                    dropped
 *
 * A status's or big number's text ends at its first CR, as it would on the
 * wire; map entries with a nil key and set members that are nil are left
 * out.  Tables are sized as the RESP reader sized them (the header's
 * count), so `#` and `pairs` see the same tables as before; an array
 * holding a nil (RESP3 only) is rebuilt unsized, item by item, as Redis's
 * reader builds every table, since `#` of a table with holes depends on
 * how the table grew.
 *
 * The value is built on the Lua stack: each open aggregate's table sits
 * above its parent's (a RESP3 map or set has its outer {map=} table below
 * it; a map waiting for a value also has its key on top).
 * An item is placed into the innermost open aggregate; one that completes
 * is closed and placed in turn into its parent.  A deferred aggregate
 * collects its items in order into a plain table; setDeferred gives its
 * kind and count, and closing converts it (map, set) and sizes it.  Items
 * beyond a deferred aggregate's count, and values after the first complete
 * one, are dropped (a command never sends them). */
#include "script/lua_reply.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "ds/alloc.h"
#include "ds/util.h"
#include "script/engine.h"

enum { OPEN_ARRAY, OPEN_MAP, OPEN_SET, OPEN_ATTRIBUTE, OPEN_DEFERRED };

/* A table is never presized past this, whatever a header announces. */
#define PRESIZE_MAX (1 << 24)

static LuaReplySink *sinkOf(ReplySink *s) { return (LuaReplySink *)s; }

static int presize(long n) { return n < PRESIZE_MAX ? (int)n : PRESIZE_MAX; }

/* Stack room.  A scalar item needs at most 3 slots while it is built (a
 * table, its field name, the text), a map level one more for its key.  A
 * reply that is one scalar fits in the LUA_MINSTACK slots every C function
 * starts with (redis.call has popped its arguments), so only opening an
 * aggregate asks for room: enough for its tables and for building any item
 * placed in it (a deferred one's conversion included).  Once the stack
 * cannot grow (thousands of levels), nothing more is taken and the value
 * is what was built so far. */
#define LEVEL_ROOM 8

static int full(const LuaReplySink *k) { return __builtin_expect(k->full, 0); }

static int roomForLevel(LuaReplySink *k) {
    if (k->full) return 0;
    if (!lua_checkstack(k->L, LEVEL_ROOM)) k->full = 1;
    return !k->full;
}

static void closeTop(LuaReplySink *k);

/* The value on top is complete: put it where it belongs.  Completing the
 * innermost aggregate closes it, which places it in turn. */
static void place(LuaReplySink *k) {
    lua_State *L = k->L;
    if (k->depth == 0) {
        if (k->done) lua_pop(L, 1);
        else k->done = 1;
        return;
    }
    LuaReplyOpen *o = &k->open[k->depth - 1];
    switch (o->kind) {
    case OPEN_MAP:
        if (o->have++ % 2 == 0) return; /* a key: waits for its value */
        if (lua_isnil(L, -2)) lua_pop(L, 2);
        else lua_rawset(L, -3);
        break;
    case OPEN_SET:
        o->have++;
        lua_pushboolean(L, 1);
        if (lua_isnil(L, -2)) lua_pop(L, 2);
        else lua_rawset(L, -3);
        break;
    case OPEN_ATTRIBUTE:
        o->have++;
        lua_pop(L, 1);
        break;
    default: /* OPEN_ARRAY, OPEN_DEFERRED */
        if (lua_isnil(L, -1)) o->nils = 1;
        lua_rawseti(L, -2, (int)++o->have);
    }
    if (o->want >= 0 && o->have >= o->want) closeTop(k);
}

/* {map=t} or {set=t} of the table on top (which is popped). */
static void wrap(lua_State *L, int slot) {
    lua_createtable(L, 0, 1);
    lua_insert(L, -2);
    setSlotField(L, -2, slot);
}

/* Replace the array on top, which holds a nil, by one built as Redis's
 * RESP reader builds it: an empty table given items 1..n in order, nils
 * included (assigning nil to a missing key may still resize a table).
 * A table with holes has the same `#` and `next` order as in Redis. */
static void unsizeArray(lua_State *L, long n) {
    int src = lua_gettop(L);
    lua_newtable(L);
    for (long i = 1; i <= n; i++) {
        lua_rawgeti(L, src, (int)i);
        lua_rawseti(L, -2, (int)i);
    }
    lua_remove(L, src);
}

/* The deferred aggregate's table of items, on top, as its final value. */
static void convertDeferred(LuaReplySink *k, const LuaReplyOpen *o) {
    lua_State *L = k->L;
    int flat = lua_gettop(L);
    long n = o->want < o->have ? o->want : o->have;
    if (o->real == OPEN_ARRAY) {
        if (!o->nils && o->have <= o->want) return;
        if (o->nils) {
            unsizeArray(L, n);
            return;
        }
        lua_createtable(L, presize(o->want), 0);
        for (long i = 1; i <= n; i++) {
            lua_rawgeti(L, flat, (int)i);
            lua_rawseti(L, -2, (int)i);
        }
    } else {
        int isMap = o->real == OPEN_MAP;
        lua_createtable(L, 0, presize(isMap ? o->want / 2 : o->want));
        for (long i = 1; i <= n; i += isMap ? 2 : 1) {
            lua_rawgeti(L, flat, (int)i);
            if (isMap) lua_rawgeti(L, flat, (int)i + 1);
            else lua_pushboolean(L, 1);
            if (lua_isnil(L, -2)) lua_pop(L, 2);
            else lua_rawset(L, -3);
        }
        wrap(L, isMap ? SLOT_MAP : SLOT_SET);
    }
    lua_remove(L, flat);
}

/* Close the innermost aggregate and place its value (an attribute has
 * none: it only annotated what follows). */
static void closeTop(LuaReplySink *k) {
    lua_State *L = k->L;
    LuaReplyOpen o = k->open[--k->depth];
    switch (o.kind) {
    case OPEN_ATTRIBUTE:
        return;
    case OPEN_MAP:
    case OPEN_SET:
        if (o.kind == OPEN_MAP && o.have % 2) lua_pop(L, 1); /* a key without its value */
        setSlotField(L, -2, o.kind == OPEN_MAP ? SLOT_MAP : SLOT_SET);
        break;
    case OPEN_DEFERRED:
        if (o.want < 0) { /* never set: take it as the array it holds */
            o.want = o.have;
            o.real = OPEN_ARRAY;
        }
        convertDeferred(k, &o);
        break;
    default: /* OPEN_ARRAY */
        if (o.nils) unsizeArray(L, o.have);
        break;
    }
    place(k);
}

static void pushOpen(LuaReplySink *k, int kind, long want) {
    if (k->depth == k->cap) {
        int cap = k->cap * 2;
        LuaReplyOpen *grown = xmalloc(sizeof(*grown) * (size_t)cap);
        memcpy(grown, k->open, sizeof(*grown) * (size_t)k->depth);
        if (k->open != k->inlineOpen) xfree(k->open);
        k->open = grown;
        k->cap = cap;
    }
    LuaReplyOpen *o = &k->open[k->depth++];
    o->kind = kind;
    o->real = kind;
    o->want = want;
    o->have = 0;
    o->nils = 0;
}

/* A table {field=text} (status, error, big number). */
static void pushTextTable(LuaReplySink *k, int slot, const char *p, size_t len) {
    lua_createtable(k->L, 0, 1);
    lua_pushlstring(k->L, p, len);
    setSlotField(k->L, -2, slot);
}

/* The length of a line's text as the RESP reader saw it: up to a CR. */
static size_t lineLen(const char *p, size_t len) {
    const char *cr = memchr(p, '\r', len);
    return cr ? (size_t)(cr - p) : len;
}

static void sinkStatus(ReplySink *s, const char *p, size_t len) {
    LuaReplySink *k = sinkOf(s);
    if (full(k)) return;
    pushTextTable(k, SLOT_OK, p, lineLen(p, len));
    place(k);
}

static void sinkError(ReplySink *s, const char *p, size_t len) {
    LuaReplySink *k = sinkOf(s);
    if (full(k)) return;
    if (k->depth == 0 && !k->done) k->isError = 1;
    pushTextTable(k, SLOT_ERR, p, len);
    place(k);
}

static void sinkInteger(ReplySink *s, long long v) {
    LuaReplySink *k = sinkOf(s);
    if (full(k)) return;
    lua_pushnumber(k->L, (lua_Number)v);
    place(k);
}

static void sinkDouble(ReplySink *s, double d) {
    LuaReplySink *k = sinkOf(s);
    if (full(k)) return;
    if (k->resp == 2) {
        char text[UTIL_MAX_DOUBLE_CHARS];
        int len = doubleToString(text, sizeof(text), d);
        lua_pushlstring(k->L, text, (size_t)len);
    } else {
        /* The number the reply's text reads back as: the same, but a NaN
         * is always the positive one strtod gives. */
        lua_newtable(k->L);
        lua_pushnumber(k->L, isnan(d) ? (lua_Number)NAN : (lua_Number)d);
        setSlotField(k->L, -2, SLOT_DOUBLE);
    }
    place(k);
}

static void sinkBulk(ReplySink *s, const char *p, size_t len) {
    LuaReplySink *k = sinkOf(s);
    if (full(k)) return;
    lua_pushlstring(k->L, p, len);
    place(k);
}

static void sinkNull(ReplySink *s, ReplyNullKind kind) {
    LuaReplySink *k = sinkOf(s);
    (void)kind;
    if (full(k)) return;
    if (k->resp == 2) lua_pushboolean(k->L, 0);
    else lua_pushnil(k->L);
    place(k);
}

static void sinkBoolean(ReplySink *s, int b) {
    LuaReplySink *k = sinkOf(s);
    if (full(k)) return;
    if (k->resp == 2) lua_pushnumber(k->L, b ? 1 : 0);
    else lua_pushboolean(k->L, b);
    place(k);
}

static void sinkBigNumber(ReplySink *s, const char *p, size_t len) {
    LuaReplySink *k = sinkOf(s);
    if (full(k)) return;
    if (k->resp == 2) {
        lua_pushlstring(k->L, p, len);
    } else {
        lua_newtable(k->L);
        lua_pushlstring(k->L, p, lineLen(p, len));
        setSlotField(k->L, -2, SLOT_BIG_NUMBER);
    }
    place(k);
}

static void sinkVerbatim(ReplySink *s, const char *p, size_t len, const char *ext) {
    LuaReplySink *k = sinkOf(s);
    lua_State *L = k->L;
    if (full(k)) return;
    if (k->resp == 2) {
        lua_pushlstring(L, p, len);
    } else {
        lua_newtable(L);
        lua_newtable(L);
        lua_pushlstring(L, ext, 3);
        lua_setfield(L, -2, "format");
        lua_pushlstring(L, p, len);
        lua_setfield(L, -2, "string");
        setSlotField(L, -2, SLOT_VERBATIM);
    }
    place(k);
}

static void sinkAggregate(ReplySink *s, ReplyAggregate kind, long n) {
    LuaReplySink *k = sinkOf(s);
    lua_State *L = k->L;
    if (!roomForLevel(k)) return;
    if (kind == REPLY_ATTRIBUTE) {
        if (n > 0) pushOpen(k, OPEN_ATTRIBUTE, 2 * n);
        return;
    }
    if (n < 0) { /* a null array, whatever the version */
        lua_pushboolean(L, 0);
        place(k);
        return;
    }
    int open = OPEN_ARRAY;
    long want = n;
    if (kind == REPLY_MAP) want = 2 * n;
    if (k->resp >= 3 && (kind == REPLY_MAP || kind == REPLY_SET)) open = kind == REPLY_MAP ? OPEN_MAP : OPEN_SET;
    if (open == OPEN_ARRAY) {
        lua_createtable(L, presize(want), 0);
    } else { /* {map=t} / {set=t}: the outer table waits below t */
        lua_createtable(L, 0, 1);
        lua_createtable(L, 0, presize(n));
    }
    pushOpen(k, open, want);
    if (want == 0) closeTop(k);
}

static void *sinkDeferred(ReplySink *s) {
    LuaReplySink *k = sinkOf(s);
    if (!roomForLevel(k)) return (void *)(intptr_t)-1; /* non-NULL, matches nothing */
    lua_newtable(k->L);
    pushOpen(k, OPEN_DEFERRED, -1);
    return (void *)(intptr_t)k->depth;
}

static void sinkSetDeferred(ReplySink *s, void *node, ReplyAggregate kind, long n) {
    LuaReplySink *k = sinkOf(s);
    intptr_t at = (intptr_t)node;
    if (at < 1 || at > k->depth) return;
    LuaReplyOpen *o = &k->open[at - 1];
    if (o->kind != OPEN_DEFERRED || o->want >= 0) return;
    if (n < 0) n = 0;
    o->want = kind == REPLY_MAP ? 2 * n : n;
    o->real = OPEN_ARRAY;
    if (k->resp >= 3 && (kind == REPLY_MAP || kind == REPLY_SET)) o->real = kind == REPLY_MAP ? OPEN_MAP : OPEN_SET;
    if (at == k->depth && o->have >= o->want) closeTop(k);
}

static const ReplySinkType luaReplySinkType = {
    .name = "lua",
    .status = sinkStatus,
    .error = sinkError,
    .integer = sinkInteger,
    .dbl = sinkDouble,
    .bulk = sinkBulk,
    .null = sinkNull,
    .boolean = sinkBoolean,
    .bigNumber = sinkBigNumber,
    .verbatim = sinkVerbatim,
    .aggregate = sinkAggregate,
    .deferred = sinkDeferred,
    .setDeferred = sinkSetDeferred,
    .raw = NULL, /* pre-encoded messages go to subscribers, never to a script */
};

void luaReplySinkInit(LuaReplySink *k, lua_State *L, int resp) {
    k->base.type = &luaReplySinkType;
    k->L = L;
    k->resp = resp;
    k->depth = 0;
    k->cap = LUA_REPLY_DEPTH_INLINE;
    k->open = k->inlineOpen;
    k->done = 0;
    k->isError = 0;
    k->full = 0;
}

int luaReplySinkFinish(LuaReplySink *k) {
    while (k->depth > 0) closeTop(k);
    if (!k->done) {
        lua_checkstack(k->L, 1);
        lua_pushnil(k->L);
    }
    if (k->open != k->inlineOpen) xfree(k->open);
    k->open = k->inlineOpen;
    return k->isError;
}
