/* lua_cmsgpack.c -- the `cmsgpack` library of Redis scripts: MessagePack
 * encoding and decoding of Lua values.
 *
 *   cmsgpack.pack(v1, ...)                 -> the encodings, concatenated
 *   cmsgpack.unpack(s)                     -> every value in s
 *   cmsgpack.unpack_one(s [, off])         -> next offset, one value
 *   cmsgpack.unpack_limit(s, n [, off])    -> next offset, up to n values
 * Offsets are 0-based; the next offset is -1 once s is used up.
 *
 * Encoding (as Redis 7.0.15's bundled lua-cmsgpack 0.4.0 does it):
 *   - a number that is an integer in [-2^63, 2^63) takes the smallest
 *     integer form (unsigned forms for >= 0); any other number is a float32
 *     if that is exact (inf included), else a float64;
 *   - strings are str types (never bin); booleans and nil as such;
 *   - a table whose keys are exactly 1..n is an array (the empty table
 *     too), any other table a map in lua_next order; tables nested more
 *     than 16 deep (keys count) become nil; functions and the rest, nil.
 * Decoding accepts every type except bin and ext ("Bad data format in
 * input."); uint64 values come back as signed, like Redis.  Every length
 * is checked against the bytes left before anything is pushed ("Missing
 * bytes in input."), and the Lua stack is checked before every push with
 * the messages Redis gives, so deep nesting is an error, not a crash.
 *
 * The packed bytes grow in a Lua userdata kept at a fixed stack slot, so an
 * error in the middle (out of memory) leaks nothing. */
#include <limits.h>
#include <stdint.h>
#include <string.h>

#include <lauxlib.h>
#include <lua.h>

#include "script/lua_libs.h"

#define MSGPACK_MAX_NESTING 16 /* tables deeper than this pack as nil */
#define MSGPACK_PRESIZE_MAX 4096

/* ------------------------------------------------------------------ */
/* Packing                                                            */
/* ------------------------------------------------------------------ */

/* Output buffer: the bytes live in a userdata at stack slot `slot`. */
typedef struct PackBuf {
    int slot;            /* absolute stack index of the userdata */
    unsigned char *data; /* its memory */
    size_t len, cap;
} PackBuf;

static void bufInit(lua_State *L, PackBuf *b) {
    b->cap = 64;
    b->len = 0;
    b->data = lua_newuserdata(L, b->cap);
    b->slot = lua_gettop(L);
}

/* Room for n more bytes: a bigger userdata replaces the old one. */
static void bufReserve(lua_State *L, PackBuf *b, size_t n) {
    if (b->cap - b->len >= n) return;
    size_t cap = b->cap;
    while (cap - b->len < n) {
        if (cap > SIZE_MAX / 2) luaL_error(L, "MessagePack output too large");
        cap *= 2;
    }
    unsigned char *data = lua_newuserdata(L, cap);
    memcpy(data, b->data, b->len);
    lua_replace(L, b->slot);
    b->data = data;
    b->cap = cap;
}

static void bufAppend(lua_State *L, PackBuf *b, const void *p, size_t n) {
    bufReserve(L, b, n);
    memcpy(b->data + b->len, p, n);
    b->len += n;
}

/* A type byte followed by v in `width` big-endian bytes (width 0..8). */
static void bufTagged(lua_State *L, PackBuf *b, unsigned char tag, uint64_t v, int width) {
    unsigned char out[9];
    out[0] = tag;
    for (int i = 0; i < width; i++)
        out[1 + i] = (unsigned char)(v >> (8 * (width - 1 - i)));
    bufAppend(L, b, out, (size_t)width + 1);
}

static void packInteger(lua_State *L, PackBuf *b, int64_t v) {
    if (v >= 0) {
        uint64_t u = (uint64_t)v;
        if (u <= 0x7f)
            bufTagged(L, b, (unsigned char)u, 0, 0);
        else if (u <= 0xff)
            bufTagged(L, b, 0xcc, u, 1);
        else if (u <= 0xffff)
            bufTagged(L, b, 0xcd, u, 2);
        else if (u <= 0xffffffffu)
            bufTagged(L, b, 0xce, u, 4);
        else
            bufTagged(L, b, 0xcf, u, 8);
    } else {
        uint64_t u = (uint64_t)v; /* two's complement bits */
        if (v >= -32)
            bufTagged(L, b, (unsigned char)u, 0, 0);
        else if (v >= INT8_MIN)
            bufTagged(L, b, 0xd0, u, 1);
        else if (v >= INT16_MIN)
            bufTagged(L, b, 0xd1, u, 2);
        else if (v >= INT32_MIN)
            bufTagged(L, b, 0xd2, u, 4);
        else
            bufTagged(L, b, 0xd3, u, 8);
    }
}

static void packNumber(lua_State *L, PackBuf *b, lua_Number n) {
    if (n >= -9223372036854775808.0 && n < 9223372036854775808.0 && n == (lua_Number)(int64_t)n) {
        packInteger(L, b, (int64_t)n);
        return;
    }
    float f = (float)n;
    if ((lua_Number)f == n) {
        uint32_t bits;
        memcpy(&bits, &f, sizeof(bits));
        bufTagged(L, b, 0xca, bits, 4);
    } else {
        double d = (double)n;
        uint64_t bits;
        memcpy(&bits, &d, sizeof(bits));
        bufTagged(L, b, 0xcb, bits, 8);
    }
}

static void packString(lua_State *L, PackBuf *b, const char *s, size_t len) {
    if (len < 32)
        bufTagged(L, b, (unsigned char)(0xa0 | len), 0, 0);
    else if (len <= 0xff)
        bufTagged(L, b, 0xd9, len, 1);
    else if (len <= 0xffff)
        bufTagged(L, b, 0xda, len, 2);
    else if ((uint64_t)len <= 0xffffffffu)
        bufTagged(L, b, 0xdb, len, 4);
    else
        luaL_error(L, "MessagePack string too long");
    bufAppend(L, b, s, len);
}

/* Array or map header for n items: fix form, 16-bit or 32-bit count. */
static void packHeader(lua_State *L, PackBuf *b, int isMap, size_t n) {
    if (n <= 15)
        bufTagged(L, b, (unsigned char)((isMap ? 0x80 : 0x90) | n), 0, 0);
    else if (n <= 0xffff)
        bufTagged(L, b, isMap ? 0xde : 0xdc, n, 2);
    else
        bufTagged(L, b, isMap ? 0xdf : 0xdd, n, 4);
}

/* Whether the table at idx has exactly the keys 1..n; *count gets the
 * number of keys either way. */
static int tableIsArray(lua_State *L, int idx, size_t *count) {
    size_t n = 0;
    lua_Number max = 0;
    int onlyPositiveInts = 1;
    lua_pushnil(L);
    while (lua_next(L, idx)) {
        lua_pop(L, 1); /* the value */
        n++;
        if (lua_type(L, -1) == LUA_TNUMBER) {
            lua_Number k = lua_tonumber(L, -1);
            if (k >= 1 && k < 9223372036854775808.0 && k == (lua_Number)(int64_t)k) {
                if (k > max) max = k;
                continue;
            }
        }
        onlyPositiveInts = 0;
    }
    *count = n;
    return onlyPositiveInts && max == (lua_Number)n;
}

static void packValue(lua_State *L, PackBuf *b, int level);

/* The table at the stack top: elements (and keys) one level deeper. */
static void packTable(lua_State *L, PackBuf *b, int level) {
    int t = lua_gettop(L);
    size_t n;
    /* lua_next key + value, the key copy, a new buffer userdata */
    luaL_checkstack(L, 4, "in function cmsgpack.pack");
    if (tableIsArray(L, t, &n)) {
        packHeader(L, b, 0, n);
        for (size_t i = 1; i <= n; i++) {
            lua_rawgeti(L, t, (int)i);
            packValue(L, b, level + 1);
            lua_pop(L, 1);
        }
        return;
    }
    packHeader(L, b, 1, n);
    lua_pushnil(L);
    while (lua_next(L, t)) {
        lua_pushvalue(L, -2); /* the key, encoded from a copy */
        packValue(L, b, level + 1);
        lua_pop(L, 1);
        packValue(L, b, level + 1);
        lua_pop(L, 1); /* the value; the key stays for lua_next */
    }
}

/* Encode the value at the stack top (left there). */
static void packValue(lua_State *L, PackBuf *b, int level) {
    switch (lua_type(L, -1)) {
    case LUA_TSTRING: {
        size_t len;
        const char *s = lua_tolstring(L, -1, &len);
        packString(L, b, s, len);
        break;
    }
    case LUA_TNUMBER:
        packNumber(L, b, lua_tonumber(L, -1));
        break;
    case LUA_TBOOLEAN:
        bufTagged(L, b, lua_toboolean(L, -1) ? 0xc3 : 0xc2, 0, 0);
        break;
    case LUA_TTABLE:
        if (level < MSGPACK_MAX_NESTING)
            packTable(L, b, level);
        else
            bufTagged(L, b, 0xc0, 0, 0); /* too deep: nil */
        break;
    default:
        bufTagged(L, b, 0xc0, 0, 0);
        break;
    }
}

/* cmsgpack.pack(...) */
static int msgpackPack(lua_State *L) {
    int nargs = lua_gettop(L);
    if (nargs == 0) return luaL_argerror(L, 0, "MessagePack pack needs input.");
    /* Redis asks for as many free slots again as there are arguments (over
     * about 4000 arguments the Lua stack's limit refuses them). */
    if (!lua_checkstack(L, nargs)) return luaL_argerror(L, 0, "Too many arguments for MessagePack pack.");
    PackBuf b;
    bufInit(L, &b);
    for (int i = 1; i <= nargs; i++) {
        lua_pushvalue(L, i);
        packValue(L, &b, 0);
        lua_pop(L, 1);
    }
    lua_pushlstring(L, (const char *)b.data, b.len);
    return 1;
}

/* ------------------------------------------------------------------ */
/* Unpacking                                                          */
/* ------------------------------------------------------------------ */

typedef struct Cursor {
    const unsigned char *p; /* next byte */
    size_t left;            /* bytes from p to the end of the input */
} Cursor;

#define MSG_MISSING "Missing bytes in input."
#define MSG_BADFMT "Bad data format in input."

/* Consume n bytes; error if fewer are left. */
static const unsigned char *take(lua_State *L, Cursor *c, size_t n) {
    if (c->left < n) luaL_error(L, MSG_MISSING);
    const unsigned char *p = c->p;
    c->p += n;
    c->left -= n;
    return p;
}

/* A big-endian unsigned integer of width bytes. */
static uint64_t takeUint(lua_State *L, Cursor *c, int width) {
    const unsigned char *p = take(L, c, (size_t)width);
    uint64_t v = 0;
    for (int i = 0; i < width; i++)
        v = (v << 8) | p[i];
    return v;
}

static void unpackValue(lua_State *L, Cursor *c);

static int presize(size_t n, size_t left) {
    size_t m = n < left ? n : left;
    return (int)(m < MSGPACK_PRESIZE_MAX ? m : MSGPACK_PRESIZE_MAX);
}

static void unpackArray(lua_State *L, Cursor *c, size_t n) {
    lua_createtable(L, presize(n, c->left), 0);
    for (size_t i = 1; i <= n; i++) {
        luaL_checkstack(L, 1, "in function mp_decode_to_lua_array");
        lua_pushnumber(L, (lua_Number)i);
        unpackValue(L, c);
        lua_rawset(L, -3);
    }
}

static void unpackMap(lua_State *L, Cursor *c, size_t n) {
    lua_createtable(L, 0, presize(n, c->left / 2));
    for (size_t i = 0; i < n; i++) {
        unpackValue(L, c); /* key */
        unpackValue(L, c); /* value */
        lua_rawset(L, -3); /* nil / NaN keys raise Lua's own error */
    }
}

static void unpackString(lua_State *L, Cursor *c, size_t len) {
    const unsigned char *p = take(L, c, len);
    lua_pushlstring(L, (const char *)p, len);
}

static void unpackFloat32(lua_State *L, Cursor *c) {
    uint32_t bits = (uint32_t)takeUint(L, c, 4);
    float f;
    memcpy(&f, &bits, sizeof(f));
    lua_pushnumber(L, (lua_Number)f);
}

static void unpackFloat64(lua_State *L, Cursor *c) {
    uint64_t bits = takeUint(L, c, 8);
    double d;
    memcpy(&d, &bits, sizeof(d));
    lua_pushnumber(L, (lua_Number)d);
}

/* Decode one value and push it. */
static void unpackValue(lua_State *L, Cursor *c) {
    luaL_checkstack(L, 1, "too many return values at once; use unpack_one or unpack_limit instead.");
    unsigned char t = *take(L, c, 1);
    if (t <= 0x7f)
        lua_pushnumber(L, t);
    else if (t >= 0xe0)
        lua_pushnumber(L, (lua_Number)((int)t - 256));
    else if (t >= 0xa0 && t <= 0xbf)
        unpackString(L, c, t & 0x1f);
    else if (t >= 0x90 && t <= 0x9f)
        unpackArray(L, c, t & 0x0f);
    else if (t >= 0x80 && t <= 0x8f)
        unpackMap(L, c, t & 0x0f);
    else {
        switch (t) {
        case 0xc0:
            lua_pushnil(L);
            break;
        case 0xc2:
            lua_pushboolean(L, 0);
            break;
        case 0xc3:
            lua_pushboolean(L, 1);
            break;
        case 0xca:
            unpackFloat32(L, c);
            break;
        case 0xcb:
            unpackFloat64(L, c);
            break;
        case 0xcc:
            lua_pushnumber(L, (lua_Number)takeUint(L, c, 1));
            break;
        case 0xcd:
            lua_pushnumber(L, (lua_Number)takeUint(L, c, 2));
            break;
        case 0xce:
            lua_pushnumber(L, (lua_Number)takeUint(L, c, 4));
            break;
        case 0xcf:
            lua_pushnumber(L, (lua_Number)(int64_t)takeUint(L, c, 8));
            break; /* signed, as Redis */
        case 0xd0:
            lua_pushnumber(L, (lua_Number)(int8_t)takeUint(L, c, 1));
            break;
        case 0xd1:
            lua_pushnumber(L, (lua_Number)(int16_t)takeUint(L, c, 2));
            break;
        case 0xd2:
            lua_pushnumber(L, (lua_Number)(int32_t)takeUint(L, c, 4));
            break;
        case 0xd3:
            lua_pushnumber(L, (lua_Number)(int64_t)takeUint(L, c, 8));
            break;
        case 0xd9:
            unpackString(L, c, (size_t)takeUint(L, c, 1));
            break;
        case 0xda:
            unpackString(L, c, (size_t)takeUint(L, c, 2));
            break;
        case 0xdb:
            unpackString(L, c, (size_t)takeUint(L, c, 4));
            break;
        case 0xdc:
            unpackArray(L, c, (size_t)takeUint(L, c, 2));
            break;
        case 0xdd:
            unpackArray(L, c, (size_t)takeUint(L, c, 4));
            break;
        case 0xde:
            unpackMap(L, c, (size_t)takeUint(L, c, 2));
            break;
        case 0xdf:
            unpackMap(L, c, (size_t)takeUint(L, c, 4));
            break;
        default:
            luaL_error(L, MSG_BADFMT); /* 0xc1, bin, ext */
        }
    }
}

/* Decode from the string at index 1, starting at offset: everything when
 * decodeAll (no offset is returned), else up to limit values preceded by
 * the next offset.  Returns the number of results. */
static int unpackFull(lua_State *L, lua_Integer limit, lua_Integer offset, int decodeAll) {
    size_t len;
    const char *s = luaL_checklstring(L, 1, &len);
    /* Redis prints these as C ints (and the length as "limit"). */
    if (offset < 0 || limit < 0)
        return luaL_error(L, "Invalid request to unpack with offset of %d and limit of %d.", (int)offset,
                          (int)len);
    if ((size_t)offset > len)
        return luaL_error(L, "Start offset %d greater than input length %d.", (int)offset, (int)len);
    Cursor c = {(const unsigned char *)s + offset, len - (size_t)offset};
    int count = 0;
    while (c.left > 0 && (decodeAll || count < limit)) {
        unpackValue(L, &c);
        count++;
    }
    if (decodeAll) return count;
    luaL_checkstack(L, 1, "in function mp_unpack_full");
    lua_pushinteger(L, c.left == 0 ? -1 : (lua_Integer)(len - c.left));
    lua_insert(L, 2);
    return count + 1;
}

/* Drop the arguments after the input, so only it stays below the results
 * (this is what the stack limits of unpack_one/unpack_limit count).  With
 * no argument at all the "got no value" error must stay, so no settop. */
static void keepOnlyInput(lua_State *L) {
    if (lua_gettop(L) > 1) lua_settop(L, 1);
}

/* cmsgpack.unpack(s) */
static int msgpackUnpack(lua_State *L) { return unpackFull(L, 0, 0, 1); }

/* cmsgpack.unpack_one(s [, offset]) */
static int msgpackUnpackOne(lua_State *L) {
    lua_Integer offset = luaL_optinteger(L, 2, 0);
    keepOnlyInput(L);
    return unpackFull(L, 1, offset, 0);
}

/* cmsgpack.unpack_limit(s, limit [, offset]); limit 0 with offset 0 means
 * every value, like unpack. */
static int msgpackUnpackLimit(lua_State *L) {
    lua_Integer limit = luaL_checkinteger(L, 2);
    lua_Integer offset = luaL_optinteger(L, 3, 0);
    keepOnlyInput(L);
    return unpackFull(L, limit, offset, limit == 0 && offset == 0);
}

static const luaL_Reg msgpackFuncs[] = {
    {"pack", msgpackPack},
    {"unpack", msgpackUnpack},
    {"unpack_one", msgpackUnpackOne},
    {"unpack_limit", msgpackUnpackLimit},
    {NULL, NULL},
};

int luaopen_cmsgpack(lua_State *L) {
    lua_newtable(L);
    luaL_register(L, NULL, msgpackFuncs);
    /* The identification fields scripts can read on Redis. */
    lua_pushliteral(L, "cmsgpack");
    lua_setfield(L, -2, "_NAME");
    lua_pushliteral(L, "lua-cmsgpack 0.4.0");
    lua_setfield(L, -2, "_VERSION");
    lua_pushliteral(L, "MessagePack C implementation for Lua");
    lua_setfield(L, -2, "_DESCRIPTION");
    return 1;
}
