/* lua_bitfix.c -- Cairn's bit.tohex, replacing the one the `bit` library
 * brings.
 *
 * Redis answers bit.tohex(x [, n]) as LuaBitOp 1.0 documents it, with its
 * own fix for n == INT_MIN: x and n are reduced to 32-bit integers the
 * LuaBitOp way (add 2^52 + 2^51, keep the low 32 bits of the double, so
 * 1.5 -> 2 and 2.5 -> 2); n defaults to 8; n < 0 means upper case digits
 * and |n| digits; |n| is capped at 8 (INT_MIN counts as large, so 8).
 * Debian's lua-bitop 1.0.2 crashes on INT_MIN (it negates it and pushes a
 * huge length) and LuaJIT's built-in allows up to 16 digits and returns ""
 * for INT_MIN, so both get this version. */
#include <stdint.h>
#include <string.h>

#include <lauxlib.h>
#include <lua.h>

#include "script/lua_libs.h"

/* Argument idx as LuaBitOp's 32-bit integer. */
static int32_t toBits(lua_State *L, int idx) {
    double d = (double)luaL_checknumber(L, idx) + 6755399441055744.0; /* 2^52 + 2^51 */
    uint64_t bits;
    memcpy(&bits, &d, sizeof(bits));
    return (int32_t)(uint32_t)bits;
}

/* bit.tohex(x [, n]) */
static int bitToHex(lua_State *L) {
    uint32_t x = (uint32_t)toBits(L, 1);
    int32_t n = lua_isnone(L, 2) ? 8 : toBits(L, 2);
    const char *digits = "0123456789abcdef";
    if (n < 0) {
        digits = "0123456789ABCDEF";
        n = n == INT32_MIN ? 8 : -n;
    }
    if (n > 8) n = 8;
    char out[8];
    for (int i = n - 1; i >= 0; i--) {
        out[i] = digits[x & 15];
        x >>= 4;
    }
    lua_pushlstring(L, out, (size_t)n);
    return 1;
}

void luaPatchBit(lua_State *L) {
    lua_getglobal(L, "bit");
    if (lua_istable(L, -1)) {
        lua_pushcfunction(L, bitToHex);
        lua_setfield(L, -2, "tohex");
    }
    lua_pop(L, 1);
}
