/* module_int.h -- what the files of src/module share: the module registry,
 * the context a module's code runs with, module strings and the API table.
 *
 * Invariants:
 *  - RedisModuleCtx's first member is the pointer to moduleGetApi (the
 *    module's inline RedisModule_Init reads it there);
 *  - a RedisModuleString is a ModString: an sds and a reference count; a
 *    string handed in as a command argument borrows the client's sds until
 *    the command returns, when a retained one takes a copy;
 *  - a context with auto memory frees, when the command returns, every
 *    string, call reply and key it created that the module did not free. */
#ifndef CAIRN_MODULE_INT_H
#define CAIRN_MODULE_INT_H

#include <stdarg.h>
#include <stddef.h>

#include "core/client.h"
#include "core/command.h"
#include "ds/sds.h"

#define REDISMODULE_CORE 1
#include "module/redismodule.h"

typedef struct Module Module;

/* One command a module created. */
typedef struct ModuleCommand {
    Command cmd;   /* a top-level command's row in the table */
    Command *self; /* &cmd, or a subcommand's entry in its parent's subs */
    CommandSpec spec;
    KeySpec keySpec; /* the legacy first/last/step range as a key spec */
    Module *module;
    RedisModuleCmdFunc func; /* NULL: a container of subcommands */
    struct ModuleCommand *parent;
    Command *subs; /* a container's subcommands (MODULE_SUBCOMMANDS_MAX + 1) */
    struct ModuleCommand **subMc;
    int nsubs;
    void *info; /* what SetCommandInfo allocated (module_cmdinfo.c) */
    int getkeysApi; /* the "getkeys-api" flag: its keys come from calling it */
    int getchannelsApi; /* "getchannels-api": its channels (ACL) likewise */
} ModuleCommand;

/* SetCommandInfo's allocations of mc go. */
void moduleFreeCommandInfo(ModuleCommand *mc);
/* A module's timers go (unload: no callback into unloaded code). */
void moduleDropTimers(Module *m);
int moduleHasTimers(const Module *m);

struct Module {
    char *name;
    int ver, apiver;
    void *handle;
    char *path;
    sds *args; /* as given to OnLoad (MODULE LIST) */
    int nargs;
    ModuleCommand **cmds;
    int ncmds;
    int onload; /* inside RedisModule_OnLoad: commands may be created */
    int options; /* SetModuleOptions */
    int configsLoaded; /* LoadConfigs was called */
    void *infoFunc;    /* RegisterInfoFunc's callback, or NULL */
    Module *next;
};

struct RedisModuleString {
    sds s;
    int refcount;
    int borrowed; /* s belongs to a client's argv */
};

typedef struct AutoEntry {
    int kind; /* AM_STRING, AM_REPLY, AM_KEY */
    void *ptr;
} AutoEntry;
enum { AM_STRING = 1, AM_REPLY, AM_KEY, AM_INFO, AM_DICT };

#define CTX_AUTO_MEMORY (1 << 0)
#define CTX_POSTPONED_MAX 64

typedef struct PoolBlock PoolBlock;

struct RedisModuleCtx {
    void *getapifuncptr; /* must be first */
    Module *module;
    Client *client;
    int flags;
    AutoEntry *am;
    int amCount, amCap;
    PoolBlock *pool;
    void *postponed[CTX_POSTPONED_MAX]; /* open postponed-length replies, newest last */
    int postponedKind[CTX_POSTPONED_MAX];
    int postponedCount;
    /* module_block.c: the blocked client of a reply/timeout/free callback
     * or of a thread-safe context, its private data and ready key, the
     * CTX_BLK_* flags, and the next time RedisModule_Yield acts (us). */
    struct RedisModuleBlockedClient *blocked;
    void *blockedPriv;
    RedisModuleString *readyKey;
    int blkFlags;
    long long yieldAt;
};
#define CTX_BLK_REPLY (1 << 0)
#define CTX_BLK_TIMEOUT (1 << 1)
#define CTX_BLK_THREAD_SAFE (1 << 2)

int moduleGetApi(const char *name, void **out);
void moduleCtxInit(RedisModuleCtx *ctx, Module *m, Client *c);
/* Frees what auto memory tracks and the pool; the ctx may not be used. */
void moduleCtxDone(RedisModuleCtx *ctx);
void moduleAutoAdd(RedisModuleCtx *ctx, int kind, void *ptr);
void moduleAutoForget(RedisModuleCtx *ctx, void *ptr);

/* A string owning a copy of p[0..len). */
RedisModuleString *modStringNew(RedisModuleCtx *ctx, const char *p, size_t len);
/* A string taking ownership of s. */
RedisModuleString *modStringTake(RedisModuleCtx *ctx, sds s);
void modStringRelease(RedisModuleString *str);

/* The API table rows of module_call.c / module_key.c. */
typedef struct ApiEntry {
    const char *name;
    void *fn;
} ApiEntry;
extern const ApiEntry moduleCallApi[];
extern const ApiEntry moduleKeyApi[];
extern const ApiEntry moduleTypeApi[];
extern const ApiEntry moduleCmdInfoApi[];
extern const ApiEntry moduleMiscApi[];
extern const ApiEntry moduleEventsApi[];
extern const ApiEntry moduleConfigApi[];

/* module_config.c: a module's configs; the values queued for modules not
 * yet loaded (config file lines, MODULE LOADEX's CONFIG pairs). */
int moduleHasConfigs(const Module *m);
void moduleDropConfigs(Module *m);
void moduleQueueConfig(const char *name, const char *value);
int moduleQueuedConfigCount(void);
void moduleClearQueuedConfigs(void);
void moduleConfigInit(void);

/* module_events.c: a module's subscriptions go (init failure, unload);
 * MODULE_CHANGE's subscribers hear of a load or unload. */
void moduleDropSubscriptions(Module *m);
void moduleFireModuleChange(Module *m, int unloaded);

/* module_type.c: data types and their values. */
struct kvobj;
struct Db;
void moduleTypesInit(void);
int moduleHasTypes(const Module *m);
void moduleDropTypes(Module *m);
RedisModuleType *moduleValueType(const struct kvobj *o);
void *moduleValuePtr(const struct kvobj *o);
void moduleSetValue(struct Db *db, const char *key, size_t keylen, RedisModuleType *t, void *value);
void *moduleReplaceValue(struct kvobj *o, void *value);

/* The argv of a Call/Replicate/EmitAOF format (c s b l v, and flag
 * characters, returned in *flagsOut); NULL with errno EINVAL for an
 * unknown format character.  The caller frees each sds and the array. */
sds *moduleBuildArgv(const char *cmdname, const char *fmt, va_list ap, int *argcOut, int *flagsOut);
/* RedisModule_Call(ctx, cmd, "c", arg) for the server's own use; the
 * reply (never NULL) is the caller's to free (moduleFreeCallReplyTree). */
RedisModuleCallReply *moduleCallCommand(RedisModuleCtx *ctx, const char *cmd, const char *arg);
/* A string or status reply's bytes, else NULL. */
const char *moduleCallReplyString(RedisModuleCallReply *r, size_t *len);
/* Frees a call reply tree (module_call.c). */
void moduleFreeCallReplyTree(RedisModuleCallReply *r);
/* An open key (module_key.c). */
struct RedisModuleKey {
    RedisModuleCtx *ctx;
    struct Db *db;
    sds key;
    int mode;
    RedisModuleString *name; /* GetKeyNameFromModuleKey, made when asked */
    void *zrange;            /* module_zrange.c: the sorted-set range being walked */
    void *stream;            /* module_stream.c: the stream iterator, or NULL */
};
/* Ends a key's sorted-set range walk (module_zrange.c). */
void moduleZsetRangeFree(RedisModuleKey *k);
extern const ApiEntry moduleZrangeApi[];
extern const ApiEntry moduleScanApi[];
extern const ApiEntry moduleInfoApi[];
/* module_dict.c / module_stream.c: dictionaries, the stream key API. */
extern const ApiEntry moduleDictApi[];
extern const ApiEntry moduleStreamApi[];
void moduleDictFree(RedisModuleDict *d);
/* Ends a key's stream iteration (CloseKey). */
void moduleStreamIterFree(RedisModuleKey *k);
/* module_block.c: blocked clients, thread-safe contexts and the GIL,
 * Yield.  moduleBlockInit runs at start-up (main thread); moduleAssertGil
 * aborts the server when the calling thread is neither the main thread
 * nor holding the GIL (fn names the API function). */
extern const ApiEntry moduleBlockApi[];
void moduleBlockInit(void);
/* The wake-up pipe joins the event loop (idempotent; at each load). */
void moduleBlockStart(void);
/* Blocked-client handles of m not yet freed (MODULE UNLOAD refuses). */
int moduleBlockedCount(const Module *m);
/* A thread-safe context replied an error: counted (errorstats, the
 * command's failure) when its blocked client gets the reply. */
void moduleBlockNoteError(RedisModuleCtx *ctx, const char *err, size_t len);
void moduleAssertGilSlow(const char *fn);
/* 1 on the main thread (always) and on a module thread between
 * ThreadSafeContextLock and Unlock. */
extern _Thread_local int moduleGilHeld;
static inline void moduleAssertGil(const char *fn) {
    if (!moduleGilHeld) moduleAssertGilSlow(fn);
}
/* module_info.c: INFO's module sections. */
void moduleInfoInit(void);
/* Frees a GetServerInfo result. */
void moduleFreeServerInfo(void *d);
/* The loaded modules, oldest first. */
Module *moduleList(void);
/* module_misc2.c: the getkeys-api family and other small parts.  The
 * module command of a command row (NULL for a server command); the key
 * finder of a "getkeys-api" command, which calls it with a position
 * request context (a GetKeysProc). */
extern const ApiEntry moduleMisc2Api[];
ModuleCommand *moduleCommandOf(const Command *cmd);
int moduleGetKeysViaApi(int argc, char **argv, KeyResult *out);
/* The channels of a "getchannels-api" command, from calling it with a
 * channel position request (server/acl.h's aclModuleChannels); -1 for
 * another command. */
int moduleGetChannelsViaApi(Command *cmd, int argc, char **argv, KeyResult *out);
/* Closes a key (module_key.c). */
void moduleCloseKey(RedisModuleKey *k);

/* module_filter.c: command filters.  A module command's run is inside its
 * module's call (NOSELF filters skip what it runs); moduleFilterArgv runs
 * the filters on a Call's argv (core/dispatch.h's contract). */
extern const ApiEntry moduleFilterApi[];
void moduleFilterEnterCall(Module *m);
void moduleFilterLeaveCall(void);
sds *moduleFilterArgv(Module *caller, sds *argv, int *argc);
void moduleDropFilters(Module *m);
int moduleHasFilters(const Module *m);
/* module_fork.c, module_acl.c */
extern const ApiEntry moduleForkApi[];
extern const ApiEntry moduleAclApi[];
/* module_acl.c: authentication callbacks (a client's user changed or the
 * client went), a module's callbacks dropped, pending redactions of c's
 * arguments applied once its module command returned. */
int moduleAclHasCallbacks(void);
void moduleAclClientGone(Client *c);
void moduleAclDropModule(Module *m);
void moduleApplyRedactions(Client *c);
/* SetContextUser's user of ctx (NULL: none); forgotten when ctx is done. */
struct AclUser *moduleCtxUser(RedisModuleCtx *ctx);
void moduleAclCtxDone(RedisModuleCtx *ctx);
/* module_events.c: the core event hook set or cleared as subscribers and
 * authentication callbacks come and go. */
void moduleEventsHookRefresh(void);
/* module_misc3.c: the event loop, shared APIs and the rest of its table;
 * the one-shot pipe joins the loop (idempotent; at each load); whether
 * another module uses m's shared APIs (MODULE UNLOAD refuses); m's
 * exports and uses go (unload, init failure). */
extern const ApiEntry moduleMisc3Api[];
void moduleMisc3Start(void);
int moduleSharedApiInUse(const Module *m);
void moduleDropSharedApis(Module *m); /* and its cluster message receivers */
void moduleDropReceivers(Module *m);
/* module_dict.c: bytes a dictionary uses (MallocSizeDict). */
size_t moduleDictMemory(const RedisModuleDict *d);

#endif
