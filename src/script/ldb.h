/* ldb.h -- the Lua debugger of SCRIPT DEBUG YES|SYNC|NO (Redis 7.0's
 * `redis-cli --ldb` protocol).  See ldb.c. */
#ifndef CAIRN_SCRIPT_LDB_H
#define CAIRN_SCRIPT_LDB_H

#include "core/client.h"
#include "proto/reply_sink.h"

struct lua_State;
struct lua_Debug;

/* Client flags set by SCRIPT DEBUG (kept in client.h's free high bits). */
#define CLIENT_LUA_DEBUG (1u << 29)
#define CLIENT_LUA_DEBUG_SYNC (1u << 30)

/* Nonzero while a session runs and the debugger is stepping: redis.call
 * logs its command and reply. */
extern int ldbLogCalls;

void scriptDebugCommand(Client *c);
/* Start a session for EVAL from c: 1 to run the script now (the session's
 * process), 0 if not (the parent of a forked session, or a fork error that
 * was replied). */
int ldbStartSession(Client *c);
/* After the script ran and replied: end the session (a forked child exits). */
void ldbEndSession(Client *c);
/* The line hook to run the debugged script with. */
void ldbHook(struct lua_State *L, struct lua_Debug *ar);
/* Session is active (redis.debug / redis.breakpoint act). */
int ldbActive(void);

/* Logging from redis.call while ldbLogCalls. */
void ldbLogCommand(int argc, sds *argv);
void ldbLogError(const char *msg);
/* A sink that passes every reply event to inner and records it, for the
 * `<reply>` line. */
ReplySink *ldbTeeBegin(ReplySink *inner, int resp);
void ldbTeeEnd(void);

int ldbRedisDebug(struct lua_State *L);      /* redis.debug() */
int ldbRedisBreakpoint(struct lua_State *L); /* redis.breakpoint() */

/* Installs the timer hook that reaps finished forked sessions. */
void ldbInit(void);
/* A shutdown's step (server/shutdown.c, after persistence's): kills every
 * forked SCRIPT DEBUG session (SIGKILL, logged) and waits for them. */
void ldbKillForkedSessions(void);

#endif
