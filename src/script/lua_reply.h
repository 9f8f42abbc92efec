/* lua_reply.h -- the reply sink of redis.call / redis.pcall: a command's
 * reply items become one Lua value, built on the Lua stack while the
 * command runs.  Internal to src/script. */
#ifndef CAIRN_SCRIPT_LUA_REPLY_H
#define CAIRN_SCRIPT_LUA_REPLY_H

#include <lua.h>

#include "proto/reply_sink.h"

/* An aggregate being filled. */
typedef struct LuaReplyOpen {
    int kind;  /* OPEN_* (lua_reply.c) */
    int real;  /* a deferred aggregate's kind once set */
    long want; /* items it takes (2 per map pair); -1 while deferred, unset */
    long have; /* items placed so far */
    int nils;  /* an array (or deferred aggregate) holds a nil item */
} LuaReplyOpen;

#define LUA_REPLY_DEPTH_INLINE 8

typedef struct LuaReplySink {
    ReplySink base;
    lua_State *L;
    int resp;            /* the script's redis.setresp version: 2 or 3 */
    int depth;           /* open aggregates, innermost last */
    int cap;             /* slots at open */
    LuaReplyOpen *open;  /* inline, or allocated past LUA_REPLY_DEPTH_INLINE */
    int done;            /* the reply's value is complete on the stack */
    int isError;         /* ... and it is an error reply */
    int full;            /* the Lua stack could not grow: the rest is dropped */
    LuaReplyOpen inlineOpen[LUA_REPLY_DEPTH_INLINE];
} LuaReplySink;

/* Get k ready to take one reply for L, in protocol version resp. */
void luaReplySinkInit(LuaReplySink *k, lua_State *L, int resp);
/* After the command: leave exactly one value pushed (nil if there was no
 * reply; an aggregate left unfinished is closed with what it has) and
 * release k.  Returns 1 if the value is an error reply ({err=...}). */
int luaReplySinkFinish(LuaReplySink *k);

#endif
