/* lua_struct.c -- the `struct` library of Redis scripts: binary packing of
 * Lua values driven by a format string.
 *
 *   struct.pack(fmt, v1, ...)      -> string
 *   struct.unpack(fmt, s [, pos])  -> v1, ..., next position (1-based)
 *   struct.size(fmt)               -> bytes a fixed-size format takes
 *
 * Format letters (an optional decimal count follows c, i, I and !):
 *   <  >      little / big endian from here on (default: little, native)
 *   !n        align sized items to min(size, n); bare ! = native (8);
 *             n must be a power of 2; alignment starts at 1 (none)
 *   x         one zero byte (pack) / skip one byte (unpack)
 *   b B h H l L T    signed/unsigned char, short, long, size_t
 *   i[n] I[n] signed/unsigned integer of n bytes (default 4, at most 32)
 *   f d       float, double
 *   c[n]      n raw bytes (default 1); c0 packs the whole string, and on
 *             unpack takes its length from the value read just before
 *   s         zero-terminated string
 *   ' '       ignored
 *
 * Behaviour follows redis-server 7.0.15, observed case by case (see
 * tests/unit/test_lua_libs.c), including its quirks: the padding formula
 * (align - (pos & (align-1))) & (align-1) for non power of 2 sizes, the
 * double -> integer conversion of x86 gcc, struct.size ignoring unknown
 * alphanumeric letters.  Where Redis would read outside the data string
 * (negative positions) Cairn raises "data string too short" instead. */
#include <ctype.h>
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <lauxlib.h>
#include <lua.h>

#include "script/lua_libs.h"

#define STRUCT_MAX_INT_SIZE 32

/* Alignment of the most demanding basic type: what a bare '!' means. */
struct AlignProbe {
    char c;
    union {
        double d;
        void *p;
        long l;
        long long ll;
    } u;
};
#define STRUCT_NATIVE_ALIGN offsetof(struct AlignProbe, u)

/* Settings the control letters change while a format is walked. */
typedef struct FormatState {
    int little;      /* byte order of multi-byte items */
    size_t maxAlign; /* '!' cap on alignment; 1 = no alignment */
} FormatState;

static void formatStateInit(FormatState *st) {
    st->little = 1;
    st->maxAlign = 1;
}

/* Read the decimal count after an option letter, if any: dflt otherwise.
 * Counts above INT_MAX raise "integral size overflow". */
static size_t readCount(lua_State *L, const char **fmt, size_t dflt) {
    if (!isdigit((unsigned char)**fmt)) return dflt;
    size_t n = 0;
    while (isdigit((unsigned char)**fmt)) {
        size_t d = (size_t)(**fmt - '0');
        if (n > ((size_t)INT_MAX - d) / 10) luaL_error(L, "integral size overflow");
        n = n * 10 + d;
        (*fmt)++;
    }
    return n;
}

/* Bytes the data option opt takes (0 for s, c0, control and unknown
 * letters), reading its count from *fmt. */
static size_t optionSize(lua_State *L, char opt, const char **fmt) {
    switch (opt) {
    case 'b':
    case 'B':
    case 'x':
        return 1;
    case 'h':
    case 'H':
        return sizeof(short);
    case 'l':
    case 'L':
        return sizeof(long);
    case 'T':
        return sizeof(size_t);
    case 'f':
        return sizeof(float);
    case 'd':
        return sizeof(double);
    case 'c':
        return readCount(L, fmt, 1);
    case 'i':
    case 'I': {
        size_t n = readCount(L, fmt, sizeof(int));
        if (n > STRUCT_MAX_INT_SIZE)
            luaL_error(L, "integral size %d is larger than limit of %d", (int)n, STRUCT_MAX_INT_SIZE);
        return n;
    }
    default:
        return 0;
    }
}

/* Padding before an item of `size` bytes at offset pos.  Only numbers are
 * aligned; the alignment is min(size, maxAlign) and need not be a power of
 * 2 (i3), in which case the mask formula gives Redis's odd results. */
static size_t padding(const FormatState *st, char opt, size_t size, size_t pos) {
    if (strchr("bBhHlLTiIfd", opt) == NULL) return 0;
    size_t align = size < st->maxAlign ? size : st->maxAlign;
    if (align <= 1) return 0;
    return (align - (pos & (align - 1))) & (align - 1);
}

/* Apply a control letter; any other letter is an invalid option. */
static void controlOption(lua_State *L, char opt, const char **fmt, FormatState *st) {
    switch (opt) {
    case ' ':
        return;
    case '<':
        st->little = 1;
        return;
    case '>':
        st->little = 0;
        return;
    case '!': {
        size_t a = readCount(L, fmt, STRUCT_NATIVE_ALIGN);
        if (a == 0 || (a & (a - 1)) != 0) luaL_error(L, "alignment %d is not a power of 2", (int)a);
        st->maxAlign = a;
        return;
    }
    default: {
        char msg[48];
        snprintf(msg, sizeof(msg), "invalid format option '%c'", opt);
        luaL_argerror(L, 1, msg);
    }
    }
}

/* A Lua number as the 64-bit pattern Redis's struct writes: negative
 * values truncate as signed, others as unsigned; out of range values give
 * what x86 gcc conversions give (0 above 2^64, 2^63 below -2^63 or NaN). */
static uint64_t numberToBits(lua_Number n) {
    if (n < 0) {
        if (n >= -9223372036854775808.0) return (uint64_t)(int64_t)n;
        return UINT64_C(1) << 63;
    }
    if (n < 18446744073709551616.0) return (uint64_t)n;
    if (n >= 18446744073709551616.0) return 0; /* includes +inf */
    return UINT64_C(1) << 63;                  /* NaN */
}

/* Write the low `size` bytes of v (zeros beyond 8 bytes) into out. */
static void putInteger(char *out, uint64_t v, size_t size, int little) {
    for (size_t i = 0; i < size; i++) {
        unsigned char byte = i < 8 ? (unsigned char)(v >> (8 * i)) : 0;
        out[little ? i : size - 1 - i] = (char)byte;
    }
}

/* Read a `size`-byte integer; bytes above the low 8 are ignored.  Signed
 * values are sign-extended from bit size*8-1; for sizes above 8 that bit
 * number is taken modulo 64, which is what Redis's shift does on x86. */
static lua_Number getInteger(const char *in, size_t size, int little, int isSigned) {
    uint64_t v = 0;
    for (size_t i = 0; i < size && i < 8; i++) {
        unsigned char byte = (unsigned char)in[little ? i : size - 1 - i];
        v |= (uint64_t)byte << (8 * i);
    }
    if (isSigned && size > 0) {
        uint64_t mask = ~UINT64_C(0) << ((size * 8 - 1) & 63);
        if (v & mask) v |= mask;
    }
    if (isSigned) return (lua_Number)(int64_t)v;
    return (lua_Number)v;
}

/* Copy `size` bytes from src to dst, reversed unless the requested order
 * is the host's. */
static void copyOrdered(char *dst, const char *src, size_t size, int little) {
    const uint16_t probe = 1;
    int hostLittle = *(const unsigned char *)&probe == 1;
    for (size_t i = 0; i < size; i++)
        dst[i] = src[little == hostLittle ? i : size - 1 - i];
}

/* struct.pack(fmt, ...) */
static int structPack(lua_State *L) {
    const char *fmt = luaL_checkstring(L, 1);
    FormatState st;
    formatStateInit(&st);
    /* A nil between the arguments and the buffer's pieces: the first
     * missing argument reads as "got nil", as on Redis. */
    lua_pushnil(L);
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    size_t len = 0; /* bytes produced so far, for alignment */
    int arg = 2;
    while (*fmt) {
        char opt = *fmt++;
        size_t size = optionSize(L, opt, &fmt);
        size_t pad = padding(&st, opt, size, len);
        for (size_t i = 0; i < pad; i++)
            luaL_addchar(&b, '\0');
        len += pad;
        switch (opt) {
        case 'b':
        case 'B':
        case 'h':
        case 'H':
        case 'l':
        case 'L':
        case 'T':
        case 'i':
        case 'I': {
            char out[STRUCT_MAX_INT_SIZE];
            putInteger(out, numberToBits(luaL_checknumber(L, arg++)), size, st.little);
            luaL_addlstring(&b, out, size);
            break;
        }
        case 'x':
            luaL_addchar(&b, '\0');
            break;
        case 'f': {
            float f = (float)luaL_checknumber(L, arg++);
            char out[sizeof(f)];
            copyOrdered(out, (const char *)&f, sizeof(f), st.little);
            luaL_addlstring(&b, out, sizeof(f));
            break;
        }
        case 'd': {
            double d = (double)luaL_checknumber(L, arg++);
            char out[sizeof(d)];
            copyOrdered(out, (const char *)&d, sizeof(d), st.little);
            luaL_addlstring(&b, out, sizeof(d));
            break;
        }
        case 'c': {
            size_t l;
            const char *s = luaL_checklstring(L, arg, &l);
            if (size == 0) size = l;
            /* Redis names the argument after the string here. */
            luaL_argcheck(L, l >= size, arg + 1, "string too short");
            luaL_addlstring(&b, s, size);
            arg++;
            break;
        }
        case 's': {
            size_t l;
            const char *s = luaL_checklstring(L, arg++, &l);
            luaL_addlstring(&b, s, l);
            luaL_addchar(&b, '\0');
            size = l + 1;
            break;
        }
        default:
            controlOption(L, opt, &fmt, &st);
            break;
        }
        len += size;
    }
    luaL_pushresult(&b);
    return 1;
}

/* Whether [pos, pos + size) lies inside data of length ld. */
static int fits(size_t pos, size_t size, size_t ld) { return pos <= ld && size <= ld - pos; }

/* The string length a 'c0' takes from the value unpacked before it. */
static size_t previousSize(lua_State *L, int nvalues) {
    if (nvalues == 0 || !lua_isnumber(L, -1)) luaL_error(L, "format 'c0' needs a previous size");
    return (size_t)numberToBits(lua_tonumber(L, -1));
}

/* struct.unpack(fmt, data [, pos]) */
static int structUnpack(lua_State *L) {
    const char *fmt = luaL_checkstring(L, 1);
    size_t ld;
    const char *data = luaL_checklstring(L, 2, &ld);
    size_t pos = (size_t)luaL_optinteger(L, 3, 1);
    luaL_argcheck(L, pos > 0, 3, "offset must be 1 or greater");
    pos--;
    FormatState st;
    formatStateInit(&st);
    int n = 0; /* values pushed */
    while (*fmt) {
        char opt = *fmt++;
        luaL_checkstack(L, 2, "too many results");
        size_t size = optionSize(L, opt, &fmt);
        luaL_argcheck(L, pos <= ld, 2, "data string too short");
        pos += padding(&st, opt, size, pos);
        luaL_argcheck(L, fits(pos, size, ld), 2, "data string too short");
        switch (opt) {
        case 'b':
        case 'B':
        case 'h':
        case 'H':
        case 'l':
        case 'L':
        case 'T':
        case 'i':
        case 'I':
            lua_pushnumber(L, getInteger(data + pos, size, st.little, islower((unsigned char)opt)));
            n++;
            break;
        case 'x':
            break;
        case 'f': {
            float f;
            copyOrdered((char *)&f, data + pos, sizeof(f), st.little);
            lua_pushnumber(L, (lua_Number)f);
            n++;
            break;
        }
        case 'd': {
            double d;
            copyOrdered((char *)&d, data + pos, sizeof(d), st.little);
            lua_pushnumber(L, (lua_Number)d);
            n++;
            break;
        }
        case 'c':
            if (size == 0) {
                size = previousSize(L, n);
                lua_pop(L, 1);
                n--;
                luaL_argcheck(L, fits(pos, size, ld), 2, "data string too short");
            }
            lua_pushlstring(L, data + pos, size);
            n++;
            break;
        case 's': {
            const char *end = memchr(data + pos, '\0', ld - pos);
            if (end == NULL) luaL_error(L, "unfinished string in data");
            size = (size_t)(end - (data + pos));
            lua_pushlstring(L, data + pos, size);
            n++;
            size++;
            break;
        }
        default:
            controlOption(L, opt, &fmt, &st);
            break;
        }
        pos += size;
    }
    lua_pushinteger(L, (lua_Integer)(pos + 1));
    return n + 1;
}

/* struct.size(fmt): only formats without s and c0. */
static int structSize(lua_State *L) {
    const char *fmt = luaL_checkstring(L, 1);
    FormatState st;
    formatStateInit(&st);
    size_t total = 0;
    while (*fmt) {
        char opt = *fmt++;
        size_t size = optionSize(L, opt, &fmt);
        total += padding(&st, opt, size, total);
        if (opt == 's') luaL_argerror(L, 1, "option 's' has no fixed size");
        if (opt == 'c' && size == 0) luaL_argerror(L, 1, "option 'c0' has no fixed size");
        /* Unknown letters and digits count as 0 bytes, like Redis. */
        if (!isalnum((unsigned char)opt)) controlOption(L, opt, &fmt, &st);
        total += size;
    }
    lua_pushnumber(L, (lua_Number)total);
    return 1;
}

static const luaL_Reg structFuncs[] = {
    {"pack", structPack},
    {"unpack", structUnpack},
    {"size", structSize},
    {NULL, NULL},
};

int luaopen_struct(lua_State *L) {
    lua_newtable(L);
    luaL_register(L, NULL, structFuncs);
    return 1;
}
