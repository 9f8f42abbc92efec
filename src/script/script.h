/* script.h -- what the scripting layer offers the rest of the server
 * (no Lua types here: only src/script includes Lua headers). */
#ifndef CAIRN_SCRIPT_H
#define CAIRN_SCRIPT_H

#include <stddef.h>

#include <stdint.h>

#include "core/client.h"
#include "core/command.h"

#define ERR_BUSY_EVAL "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE."
#define ERR_BUSY_FUNCTION "BUSY Redis is busy running a script. You can only call FUNCTION KILL or SHUTDOWN NOSAVE."

/* For INFO memory. */
typedef struct ScriptMemoryInfo {
    size_t vmEval;          /* used_memory_vm_eval (used_memory_lua) */
    size_t scriptsEval;     /* used_memory_scripts_eval */
    size_t numScripts;      /* number_of_cached_scripts */
    size_t vmFunctions;     /* used_memory_vm_functions */
    size_t functions;       /* used_memory_functions */
    size_t numFunctions, numLibraries;
} ScriptMemoryInfo;

void evalMemoryInfo(ScriptMemoryInfo *m);
/* Creates the EVAL and the functions VMs, at startup as Redis does (SCRIPT
 * FLUSH and FUNCTION FLUSH put fresh ones in their place at once): made on
 * first use instead, the first INFO memory paid 0.8-1.8 ms for it. */
void scriptCreateVms(void);
void functionsMemoryInfo(ScriptMemoryInfo *m);

/* The Lua engine this server was built with: "lua5.1" or "luajit" (INFO
 * server's cairn_lua_engine). */
const char *scriptLuaEngine(void);

/* The client whose EVAL/FCALL is running now, or NULL: a script's
 * commands act on its behalf (client tracking, NOLOOP). */
Client *scriptCaller(void);

/* A script or function has run past busy-reply-threshold and the server
 * answers other clients BUSY: the error they get, else NULL. */
const char *scriptBusyError(void);
/* A module command yielding with REDISMODULE_YIELD_FLAG_CLIENTS sets the
 * BUSY error other clients get while it processes events (NULL: none);
 * scriptBusyError answers it when no script is past its threshold. */
void scriptSetModuleBusy(const char *err);
/* SCRIPT KILL (isEval) / FUNCTION KILL: replies OK, NOTBUSY, UNKILLABLE or
 * BUSY as Redis does. */
void scriptKill(Client *c, int isEval);
/* Whether c's EVAL / EVALSHA / FCALL (or _RO) runs a script that declares
 * flags (a shebang, or a function's flags) without no-writes: such a call
 * is a write for the checks before it runs (MISCONF), as in Redis.  0 for
 * other commands, for scripts without a shebang (their write commands are
 * checked as they run) and for unknown scripts. */
int scriptDeclaresWrites(Client *c, const Command *cmd);
/* Before a script declaring writes runs: -1 after replying MISCONF when
 * persistence refuses writes (the check processCommand makes, for the
 * calls that pass it: queued in a transaction before a save failed).
 * In cluster mode a script flagged no-cluster is refused first. */
int scriptRefuseWritesOrReply(Client *c, unsigned flags);
/* The flags of cmd as run by c: for EVAL* and FCALL* (CMD_SCRIPT_FLAGS)
 * those the script states in its shebang or registration (write, deny-oom,
 * stale), as Redis's getCommandFlags; cmd->flags otherwise. */
uint64_t scriptCommandFlags(Client *c, const Command *cmd);
/* Whether memory was over maxmemory when the running top-level command
 * began (set by the server's OOM check).  A script's first deny-oom call
 * is refused when it was, as Redis 7.0 decides at the script's start. */
extern int scriptOomAtStart;
/* DEBUG SET-DISABLE-DENY-SCRIPTS: scripts may call the commands flagged
 * noscript (Redis's test hook). */
extern int scriptAllowNoscriptCommands;

/* Installed by replication: 1 while this replica's link is down and
 * replica-serve-stale-data is no.  Then an EVAL without a shebang answers
 * MASTERDOWN, and a script (allow-stale) may call only the commands
 * flagged stale, as in Redis.  NULL: never stale. */
extern int (*scriptRunningStale)(void);

/* The verdicts a script's write command asks before it runs, each
 * answered by the one layer that holds the state and installed by its
 * init; NULL (the pointer or its answer) means allowed, else the error,
 * without the "-".  checkScriptCommand asks them in this order:
 *  1. scriptReplicaWriteError, installed by replication (replInit):
 *     READONLY on a read-only replica (not for a script of its primary or
 *     its AOF), NOREPLICAS without enough good replicas;
 *  2. scriptDiskError, installed by persistence (persistInit), only while
 *     the script has written nothing: MISCONF while a failed RDB save or
 *     AOF write denies writes, with *rdb (when not NULL) set to 1 when the
 *     RDB save is the cause.  scriptRefuseWritesOrReply asks it too. */
typedef const char *ScriptReplicaWriteError(void);
typedef const char *ScriptDiskError(int *rdb);
extern ScriptReplicaWriteError *scriptReplicaWriteError;
extern ScriptDiskError *scriptDiskError;

/* Installed by the ACL (server/acl.c): NULL when the script's caller may
 * run cmd with argv, else the error redis.call raises (after the denial
 * is logged).  Without it every command is allowed. */
typedef const char *ScriptAclCheck(Client *caller, Command *cmd, int argc, sds *argv);
void scriptSetAclCheck(ScriptAclCheck *fn);
/* Installed by the ACL: whether the script's caller may run cmd with argv
 * (its command, keys and channels), for redis.acl_check_cmd; nothing is
 * logged.  argc may be below cmd's arity.  Without it, everything is. */
typedef int ScriptAclAllowed(Client *caller, Command *cmd, int argc, sds *argv);
void scriptSetAclAllowed(ScriptAclAllowed *fn);
/* Installed by cluster mode (server/cluster.c): NULL when the script's
 * caller may run cmd with argv on this node (its keys' slot is served
 * here and the cluster is up), else the error redis.call raises.  Checked
 * after every other check, as Redis does.  Without it nothing is. */
typedef const char *ScriptClusterCheck(Client *caller, Command *cmd, int argc, sds *argv);
void scriptSetClusterCheck(ScriptClusterCheck *fn);
/* Parse numkeys at argv[idx] with Redis's errors; -1 after replying. */
int scriptGetNumkeys(Client *c, int idx, long long *numkeys);

/* Registers the scripting directives (CONFIG GET/SET/REWRITE, the config
 * file).  Called once from main.c, before the defaults are applied. */
void scriptRegisterConfig(void);

#endif
