/* module.c -- loadable modules: the registry, MODULE LOAD/LOADEX/LIST/
 * UNLOAD, the `loadmodule` directive, INFO modules, the commands modules
 * create, and the API's core (init, contexts, memory, strings, replies).
 * RedisModule_Call and replication are module_call.c, the key API
 * module_key.c.
 *
 * Loading (Redis 7.0's order): dlopen(RTLD_NOW|RTLD_LOCAL), find
 * RedisModule_OnLoad, call it with a context whose first member is
 * moduleGetApi.  A module that fails its init, or never registers itself
 * (SetModuleAttribs), is undone: its commands go, the library is closed,
 * the server is as before.  A module's commands are Command rows added
 * to the command table at run time (commandAdd) with a CommandSpec built
 * here; their proc is moduleCommandProc, which finds the module command
 * by c->cmd's id (byId).  A module's container command has subcommands
 * in an array reserved whole (their Commands never move).
 *
 * Every API function the header declares is in the table `api` (here and
 * in module_call.c / module_key.c); GetApi answers REDISMODULE_ERR for
 * any other name, leaving the module's pointer NULL, as Redis does for a
 * name it does not know. */
#include <dlfcn.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/config.h"
#include "core/effects.h"
#include "core/log.h"
#include "core/server.h"
#include "ds/alloc.h"
#include "ds/util.h"
#include "module/module.h"
#include "module/module_int.h"
#include "server/acl.h"
#include "server/cluster.h"
#include "server/multi.h"
#include "server/stats.h"
#include "server/info.h"

#define ERR_MODULE_LOAD "ERR Error loading the extension. Please check the server logs."
#define COMMAND_MAX_IDS 1024 /* server/acl.c's permission bitmaps */

static Module *modules;

/* `loadmodule` lines, loaded once the server is initialised. */
typedef struct QueuedModule {
    sds path;
    int argc;
    sds *argv;
} QueuedModule;
static QueuedModule *queued;
static int queuedCount;

/* ------------------------------------------------------------------ */
/* contexts                                                            */
/* ------------------------------------------------------------------ */

struct PoolBlock {
    PoolBlock *next;
    size_t used, size;
    char data[];
};

/* The postponed arrays are used only up to postponedCount: not cleared. */
void moduleCtxInit(RedisModuleCtx *ctx, Module *m, Client *c) {
    ctx->getapifuncptr = (void *)(uintptr_t)moduleGetApi;
    ctx->module = m;
    ctx->client = c;
    ctx->flags = 0;
    ctx->am = NULL;
    ctx->amCount = ctx->amCap = 0;
    ctx->pool = NULL;
    ctx->postponedCount = 0;
    ctx->blocked = NULL;
    ctx->blockedPriv = NULL;
    ctx->readyKey = NULL;
    ctx->blkFlags = 0;
    ctx->yieldAt = 0;
}

void moduleAutoAdd(RedisModuleCtx *ctx, int kind, void *ptr) {
    if (!ctx || !(ctx->flags & CTX_AUTO_MEMORY)) return;
    if (ctx->amCount == ctx->amCap) {
        ctx->amCap = ctx->amCap ? ctx->amCap * 2 : 16;
        ctx->am = xrealloc(ctx->am, sizeof(AutoEntry) * (size_t)ctx->amCap);
    }
    ctx->am[ctx->amCount].kind = kind;
    ctx->am[ctx->amCount].ptr = ptr;
    ctx->amCount++;
}

void moduleAutoForget(RedisModuleCtx *ctx, void *ptr) {
    if (!ctx || !(ctx->flags & CTX_AUTO_MEMORY)) return;
    for (int i = ctx->amCount - 1; i >= 0; i--) {
        if (ctx->am[i].ptr == ptr) {
            ctx->am[i].kind = 0;
            return;
        }
    }
}

void moduleCtxDone(RedisModuleCtx *ctx) {
    moduleAclCtxDone(ctx);
    /* Auto memory: keys first (a key may refer to strings), then replies
     * and strings. */
    for (int pass = 0; pass < 2; pass++) {
        for (int i = 0; i < ctx->amCount; i++) {
            AutoEntry *e = &ctx->am[i];
            if (pass == 0 && e->kind == AM_KEY) {
                moduleCloseKey(e->ptr);
                e->kind = 0;
            } else if (pass == 1 && e->kind == AM_REPLY) {
                moduleFreeCallReplyTree(e->ptr);
            } else if (pass == 1 && e->kind == AM_STRING) {
                modStringRelease(e->ptr);
            } else if (pass == 1 && e->kind == AM_INFO) {
                moduleFreeServerInfo(e->ptr);
            } else if (pass == 1 && e->kind == AM_DICT) {
                moduleDictFree(e->ptr);
            }
        }
    }
    xfree(ctx->am);
    ctx->am = NULL;
    ctx->amCount = ctx->amCap = 0;
    for (PoolBlock *b = ctx->pool, *next; b; b = next) {
        next = b->next;
        xfree(b);
    }
    ctx->pool = NULL;
}

/* ------------------------------------------------------------------ */
/* module strings                                                      */
/* ------------------------------------------------------------------ */

/* Freed string handles kept for reuse (a command's argv wraps each
 * argument in one): allocation is most of what wrapping costs. */
#define STRING_CACHE_MAX 64
static RedisModuleString *stringCache[STRING_CACHE_MAX];
static int stringCacheCount;

static RedisModuleString *stringHandleNew(void) {
    return stringCacheCount ? stringCache[--stringCacheCount] : xmalloc(sizeof(RedisModuleString));
}

static void stringHandleFree(RedisModuleString *str) {
    if (stringCacheCount < STRING_CACHE_MAX)
        stringCache[stringCacheCount++] = str;
    else
        xfree(str);
}

RedisModuleString *modStringTake(RedisModuleCtx *ctx, sds s) {
    RedisModuleString *str = stringHandleNew();
    str->s = s;
    str->refcount = 1;
    str->borrowed = 0;
    moduleAutoAdd(ctx, AM_STRING, str);
    return str;
}

RedisModuleString *modStringNew(RedisModuleCtx *ctx, const char *p, size_t len) {
    return modStringTake(ctx, sdsNewLen(p, len));
}

void modStringRelease(RedisModuleString *str) {
    if (!str || --str->refcount > 0) return;
    if (!str->borrowed) sdsFree(str->s);
    stringHandleFree(str);
}

static RedisModuleString *RM_CreateString(RedisModuleCtx *ctx, const char *ptr, size_t len) {
    return modStringNew(ctx, ptr, len);
}

static RedisModuleString *RM_CreateStringFromLongLong(RedisModuleCtx *ctx, long long ll) {
    return modStringTake(ctx, sdsFromLongLong(ll));
}

static RedisModuleString *RM_CreateStringFromULongLong(RedisModuleCtx *ctx, unsigned long long ull) {
    char buf[32];
    int n = unsignedLongLongToString(buf, sizeof(buf), ull);
    return modStringNew(ctx, buf, (size_t)n);
}

/* Redis formats with %.17g. */
static RedisModuleString *RM_CreateStringFromDouble(RedisModuleCtx *ctx, double d) {
    char buf[128];
    int n = snprintf(buf, sizeof(buf), "%.17g", d);
    return modStringNew(ctx, buf, (size_t)n);
}

static RedisModuleString *RM_CreateStringFromLongDouble(RedisModuleCtx *ctx, long double ld, int humanfriendly) {
    char buf[UTIL_MAX_LONG_DOUBLE_CHARS];
    int n = longDoubleToString(buf, sizeof(buf), ld, humanfriendly);
    return modStringNew(ctx, buf, n > 0 ? (size_t)n : 0);
}

static RedisModuleString *RM_CreateStringFromString(RedisModuleCtx *ctx, const RedisModuleString *str) {
    return modStringNew(ctx, str->s, sdsLen(str->s));
}

static RedisModuleString *RM_CreateStringPrintf(RedisModuleCtx *ctx, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    sds s = sdsCatVPrintf(sdsEmpty(), fmt, ap);
    va_end(ap);
    return modStringTake(ctx, s);
}

static void RM_FreeString(RedisModuleCtx *ctx, RedisModuleString *str) {
    if (!str) return;
    if (str->refcount == 1) moduleAutoForget(ctx, str);
    modStringRelease(str);
}

/* With auto memory on, a retained string is one the auto release would
 * otherwise free: forget it instead of taking a reference (Redis's rule). */
static void RM_RetainString(RedisModuleCtx *ctx, RedisModuleString *str) {
    if (ctx && (ctx->flags & CTX_AUTO_MEMORY)) {
        for (int i = ctx->amCount - 1; i >= 0; i--) {
            if (ctx->am[i].kind == AM_STRING && ctx->am[i].ptr == str) {
                ctx->am[i].kind = 0;
                return;
            }
        }
    }
    str->refcount++;
}

static RedisModuleString *RM_HoldString(RedisModuleCtx *ctx, RedisModuleString *str) {
    if (!str) return NULL;
    RM_RetainString(ctx, str);
    return str;
}

static const char *RM_StringPtrLen(const RedisModuleString *str, size_t *len) {
    if (!str) {
        static const char errmsg[] = "(NULL string reply referenced in module)";
        if (len) *len = sizeof(errmsg) - 1;
        return errmsg;
    }
    if (len) *len = sdsLen(str->s);
    return str->s;
}

static int RM_StringToLongLong(const RedisModuleString *str, long long *ll) {
    return stringToLongLong(str->s, sdsLen(str->s), ll) ? REDISMODULE_OK : REDISMODULE_ERR;
}

static int RM_StringToULongLong(const RedisModuleString *str, unsigned long long *ull) {
    return stringToUnsignedLongLong(str->s, sdsLen(str->s), ull) ? REDISMODULE_OK : REDISMODULE_ERR;
}

static int RM_StringToDouble(const RedisModuleString *str, double *d) {
    return stringToDouble(str->s, sdsLen(str->s), d) ? REDISMODULE_OK : REDISMODULE_ERR;
}

static int RM_StringToLongDouble(const RedisModuleString *str, long double *d) {
    return stringToLongDouble(str->s, sdsLen(str->s), d) ? REDISMODULE_OK : REDISMODULE_ERR;
}

static int RM_StringCompare(RedisModuleString *a, RedisModuleString *b) {
    size_t la = sdsLen(a->s), lb = sdsLen(b->s);
    int cmp = memcmp(a->s, b->s, la < lb ? la : lb);
    if (cmp) return cmp;
    return la < lb ? -1 : la > lb;
}

/* Only a string the module owns alone may grow (Redis refuses shared
 * ones). */
static int RM_StringAppendBuffer(RedisModuleCtx *ctx, RedisModuleString *str, const char *buf, size_t len) {
    (void)ctx;
    if (str->refcount != 1 || str->borrowed) return REDISMODULE_ERR;
    str->s = sdsCatLen(str->s, buf, len);
    return REDISMODULE_OK;
}

static void RM_TrimStringAllocation(RedisModuleString *str) {
    if (str && str->refcount == 1 && !str->borrowed) str->s = sdsRemoveFreeSpace(str->s);
}

/* ------------------------------------------------------------------ */
/* memory                                                              */
/* ------------------------------------------------------------------ */

static void *RM_Alloc(size_t bytes) { return xmalloc(bytes ? bytes : 1); }
/* The server's allocator stops the server when out of memory, so the
 * "try" never fails: it is Alloc. */
static void *RM_TryAlloc(size_t bytes) { return xmalloc(bytes ? bytes : 1); }
static void *RM_Calloc(size_t nmemb, size_t size) {
    if (size && nmemb > SIZE_MAX / size) xmallocOom(SIZE_MAX);
    size_t total = nmemb * size;
    return xcalloc(total ? total : 1);
}
static void *RM_Realloc(void *ptr, size_t bytes) { return xrealloc(ptr, bytes ? bytes : 1); }
static void RM_Free(void *ptr) { xfree(ptr); }
static char *RM_Strdup(const char *str) { return xstrdup(str); }
static size_t RM_MallocSize(void *ptr) { return ptr ? xmallocSize(ptr) : 0; }

/* Memory freed when the command returns; aligned to the size's power of
 * two up to 8 bytes, as Redis aligns it. */
static void *RM_PoolAlloc(RedisModuleCtx *ctx, size_t bytes) {
    if (bytes == 0) return NULL;
    size_t align = bytes >= 8 ? 8 : bytes >= 4 ? 4 : bytes >= 2 ? 2 : 1;
    PoolBlock *b = ctx->pool;
    if (b) {
        size_t off = (b->used + align - 1) & ~(align - 1);
        if (off + bytes <= b->size) {
            b->used = off + bytes;
            return b->data + off;
        }
    }
    size_t size = bytes > 8192 ? bytes : 8192;
    b = xmalloc(sizeof(PoolBlock) + size);
    b->size = size;
    b->used = bytes;
    b->next = ctx->pool;
    ctx->pool = b;
    return b->data;
}

/* ------------------------------------------------------------------ */
/* module, context                                                     */
/* ------------------------------------------------------------------ */

static Module *moduleFind(const char *name) {
    for (Module *m = modules; m; m = m->next)
        if (!strcasecmp(m->name, name)) return m;
    return NULL;
}

static int RM_IsModuleNameBusy(const char *name) { return moduleFind(name) != NULL; }

/* Registers the module being loaded (once: a second call is ignored). */
static void RM_SetModuleAttribs(RedisModuleCtx *ctx, const char *name, int ver, int apiver) {
    if (!ctx->module || ctx->module->name) return;
    ctx->module->name = xstrdup(name);
    ctx->module->ver = ver;
    ctx->module->apiver = apiver;
}

static int RM_WrongArity(RedisModuleCtx *ctx) {
    if (ctx->client) replyErrorArity(ctx->client);
    return REDISMODULE_OK;
}

static int RM_GetSelectedDb(RedisModuleCtx *ctx) { return ctx->client ? ctx->client->db->id : 0; }

static int RM_SelectDb(RedisModuleCtx *ctx, int newid) {
    if (!ctx->client) return REDISMODULE_ERR;
    return clientSelectDb(ctx->client, newid) == 0 ? REDISMODULE_OK : REDISMODULE_ERR;
}

static unsigned long long RM_GetClientId(RedisModuleCtx *ctx) {
    if (!ctx->client || clientIsFake(ctx->client)) return 0;
    return ctx->client->id;
}

static int RM_GetContextFlags(RedisModuleCtx *ctx) {
    int flags = 0;
    Client *c = ctx ? ctx->client : NULL;
    if (c) {
        if (c->flags & CLIENT_LUA) flags |= REDISMODULE_CTX_FLAGS_LUA;
        if (c->flags & CLIENT_MULTI) flags |= REDISMODULE_CTX_FLAGS_MULTI;
        /* Redis's CLIENT_DENY_BLOCKING: the script client, EXEC */
        if (c->flags & (CLIENT_LUA | CLIENT_MULTI)) flags |= REDISMODULE_CTX_FLAGS_DENY_BLOCKING;
        if (c->flags & CLIENT_MASTER) flags |= REDISMODULE_CTX_FLAGS_REPLICATED;
        if (c->resp == 3) flags |= REDISMODULE_CTX_FLAGS_RESP3;
    }
    flags |= server.isReplica ? REDISMODULE_CTX_FLAGS_SLAVE : REDISMODULE_CTX_FLAGS_MASTER;
    if (server.cfg.maxmemory) flags |= REDISMODULE_CTX_FLAGS_MAXMEMORY;
    return flags;
}

static void RM_AutoMemory(RedisModuleCtx *ctx) { ctx->flags |= CTX_AUTO_MEMORY; }

static long long RM_Milliseconds(void) { return mstime(); }

static int logLevelOf(const char *level) {
    if (!strcasecmp(level, "debug")) return LL_DEBUG;
    if (!strcasecmp(level, "verbose")) return LL_VERBOSE;
    if (!strcasecmp(level, "notice")) return LL_NOTICE;
    if (!strcasecmp(level, "warning")) return LL_WARNING;
    return LL_VERBOSE; /* Redis's default for an unknown level */
}

/* "<module:name> message", as Redis prefixes a module's log lines. */
static void moduleLogV(Module *m, const char *level, const char *fmt, va_list ap) {
    sds s = sdsCatPrintf(sdsEmpty(), "<%s> ", m && m->name ? m->name : "module");
    s = sdsCatVPrintf(s, fmt, ap);
    serverLogRaw(logLevelOf(level), s);
    sdsFree(s);
}

static void RM_Log(RedisModuleCtx *ctx, const char *level, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    moduleLogV(ctx ? ctx->module : NULL, level, fmt, ap);
    va_end(ap);
}

static void RM_LogIOError(RedisModuleIO *io, const char *level, const char *fmt, ...) {
    (void)io;
    va_list ap;
    va_start(ap, fmt);
    moduleLogV(NULL, level, fmt, ap);
    va_end(ap);
}

/* ------------------------------------------------------------------ */
/* replies                                                             */
/* ------------------------------------------------------------------ */

static int RM_ReplyWithLongLong(RedisModuleCtx *ctx, long long ll) {
    if (!ctx->client) return REDISMODULE_OK;
    replyLongLong(ctx->client, ll);
    return REDISMODULE_OK;
}

/* The text goes as given (Redis: "-%s"): the module writes the code. */
static int RM_ReplyWithError(RedisModuleCtx *ctx, const char *err) {
    if (!ctx->client) return REDISMODULE_OK;
    size_t len = strlen(err);
    char *msg = xmalloc(len + 2);
    msg[0] = '-';
    memcpy(msg + 1, err, len + 1);
    /* A thread-safe context may run off the main thread: INFO errorstats
     * are the main thread's (its errors are counted when delivered). */
    if (ctx->blkFlags & CTX_BLK_THREAD_SAFE) {
        replyErrorLenNoStats(ctx->client, msg, len + 1);
        moduleBlockNoteError(ctx, err, len); /* counted when delivered */
    } else {
        replyErrorLen(ctx->client, msg, len + 1);
    }
    xfree(msg);
    return REDISMODULE_OK;
}

static int RM_ReplyWithSimpleString(RedisModuleCtx *ctx, const char *msg) {
    if (!ctx->client) return REDISMODULE_OK;
    /* a status line cannot hold CR or LF: Redis replaces them */
    size_t len = strlen(msg);
    if (strpbrk(msg, "\r\n")) {
        char *copy = xstrdup(msg);
        for (size_t i = 0; i < len; i++)
            if (copy[i] == '\r' || copy[i] == '\n') copy[i] = ' ';
        replyStatusLen(ctx->client, copy, len);
        xfree(copy);
    } else {
        replyStatusLen(ctx->client, msg, len);
    }
    return REDISMODULE_OK;
}

static int replyAggregate(RedisModuleCtx *ctx, long len, int kind) {
    Client *c = ctx->client;
    if (!c) return REDISMODULE_OK;
    if (len == REDISMODULE_POSTPONED_LEN) {
        if (ctx->postponedCount == CTX_POSTPONED_MAX) {
            serverLog(LL_WARNING, "Module %s: more than %d postponed replies open", ctx->module->name,
                      CTX_POSTPONED_MAX);
            return REDISMODULE_ERR;
        }
        ctx->postponed[ctx->postponedCount] = replyDeferredLen(c);
        ctx->postponedKind[ctx->postponedCount] = kind;
        ctx->postponedCount++;
        return REDISMODULE_OK;
    }
    switch (kind) {
    case REPLY_MAP: replyMapLen(c, len); break;
    case REPLY_SET: replySetLen(c, len); break;
    case REPLY_ATTRIBUTE: replyAttributeLen(c, len); break;
    default: replyArrayLen(c, len); break;
    }
    return REDISMODULE_OK;
}

static int RM_ReplyWithArray(RedisModuleCtx *ctx, long len) { return replyAggregate(ctx, len, REPLY_ARRAY); }
static int RM_ReplyWithMap(RedisModuleCtx *ctx, long len) { return replyAggregate(ctx, len, REPLY_MAP); }
static int RM_ReplyWithSet(RedisModuleCtx *ctx, long len) { return replyAggregate(ctx, len, REPLY_SET); }

/* Attributes exist in RESP3 only: in RESP2 Redis refuses them. */
static int RM_ReplyWithAttribute(RedisModuleCtx *ctx, long len) {
    if (!ctx->client || ctx->client->resp < 3) return REDISMODULE_ERR;
    return replyAggregate(ctx, len, REPLY_ATTRIBUTE);
}

/* Sets the length of the newest postponed reply of that kind; a call with
 * none open is logged and ignored, as Redis does. */
static void setPostponed(RedisModuleCtx *ctx, long len, int kind, const char *what) {
    Client *c = ctx->client;
    if (!c) return;
    int i = ctx->postponedCount - 1;
    while (i >= 0 && ctx->postponedKind[i] != kind) i--;
    if (i < 0) {
        serverLog(LL_WARNING, "API misuse detected in module %s: RedisModule_ReplySet%sLength() called without "
                  "previous RedisModule_ReplyWith%s(ctx, REDISMODULE_POSTPONED_LEN) call.",
                  ctx->module ? ctx->module->name : "?", what, what);
        return;
    }
    void *node = ctx->postponed[i];
    memmove(&ctx->postponed[i], &ctx->postponed[i + 1], sizeof(void *) * (size_t)(ctx->postponedCount - i - 1));
    memmove(&ctx->postponedKind[i], &ctx->postponedKind[i + 1],
            sizeof(int) * (size_t)(ctx->postponedCount - i - 1));
    ctx->postponedCount--;
    switch (kind) {
    case REPLY_MAP: replySetDeferredMapLen(c, node, len); break;
    case REPLY_SET: replySetDeferredSetLen(c, node, len); break;
    case REPLY_ATTRIBUTE: replySetDeferredAttributeLen(c, node, len); break;
    default: replySetDeferredArrayLen(c, node, len); break;
    }
}

static void RM_ReplySetArrayLength(RedisModuleCtx *ctx, long len) { setPostponed(ctx, len, REPLY_ARRAY, "Array"); }
static void RM_ReplySetMapLength(RedisModuleCtx *ctx, long len) { setPostponed(ctx, len, REPLY_MAP, "Map"); }
static void RM_ReplySetSetLength(RedisModuleCtx *ctx, long len) { setPostponed(ctx, len, REPLY_SET, "Set"); }
static void RM_ReplySetAttributeLength(RedisModuleCtx *ctx, long len) {
    setPostponed(ctx, len, REPLY_ATTRIBUTE, "Attribute");
}

static int RM_ReplyWithNullArray(RedisModuleCtx *ctx) {
    if (ctx->client) replyNullArray(ctx->client);
    return REDISMODULE_OK;
}

static int RM_ReplyWithEmptyArray(RedisModuleCtx *ctx) {
    if (ctx->client) replyArrayLen(ctx->client, 0);
    return REDISMODULE_OK;
}

static int RM_ReplyWithStringBuffer(RedisModuleCtx *ctx, const char *buf, size_t len) {
    if (ctx->client) replyBulk(ctx->client, buf, len);
    return REDISMODULE_OK;
}

static int RM_ReplyWithCString(RedisModuleCtx *ctx, const char *buf) {
    if (ctx->client) replyBulk(ctx->client, buf, strlen(buf));
    return REDISMODULE_OK;
}

static int RM_ReplyWithString(RedisModuleCtx *ctx, RedisModuleString *str) {
    if (ctx->client) replyBulk(ctx->client, str->s, sdsLen(str->s));
    return REDISMODULE_OK;
}

static int RM_ReplyWithEmptyString(RedisModuleCtx *ctx) {
    if (ctx->client) replyBulk(ctx->client, "", 0);
    return REDISMODULE_OK;
}

static int RM_ReplyWithVerbatimStringType(RedisModuleCtx *ctx, const char *buf, size_t len, const char *ext) {
    if (ctx->client) replyVerbatim(ctx->client, buf, len, ext);
    return REDISMODULE_OK;
}

static int RM_ReplyWithVerbatimString(RedisModuleCtx *ctx, const char *buf, size_t len) {
    return RM_ReplyWithVerbatimStringType(ctx, buf, len, "txt");
}

static int RM_ReplyWithNull(RedisModuleCtx *ctx) {
    if (ctx->client) replyNull(ctx->client);
    return REDISMODULE_OK;
}

static int RM_ReplyWithBool(RedisModuleCtx *ctx, int b) {
    if (ctx->client) replyBool(ctx->client, b);
    return REDISMODULE_OK;
}

static int RM_ReplyWithDouble(RedisModuleCtx *ctx, double d) {
    if (ctx->client) replyDouble(ctx->client, d);
    return REDISMODULE_OK;
}

static int RM_ReplyWithBigNumber(RedisModuleCtx *ctx, const char *bignum, size_t len) {
    if (ctx->client) replyBigNumber(ctx->client, bignum, len);
    return REDISMODULE_OK;
}

/* The human-friendly text: a bulk string in RESP2, a double in RESP3. */
static int RM_ReplyWithLongDouble(RedisModuleCtx *ctx, long double d) {
    Client *c = ctx->client;
    if (!c) return REDISMODULE_OK;
    if (c->resp < 3 || (c->flags & CLIENT_REPLY_SINK)) {
        replyLongDouble(c, d);
        return REDISMODULE_OK;
    }
    char buf[UTIL_MAX_LONG_DOUBLE_CHARS + 4];
    buf[0] = ',';
    int n = longDoubleToString(buf + 1, sizeof(buf) - 3, d, 1);
    if (n <= 0) n = 0;
    memcpy(buf + 1 + n, "\r\n", 2);
    replyRaw(c, buf, (size_t)n + 3);
    return REDISMODULE_OK;
}

/* ------------------------------------------------------------------ */
/* commands                                                            */
/* ------------------------------------------------------------------ */

/* The module command of each command id (top-level or subcommand). */
static ModuleCommand *byId[COMMAND_MAX_IDS];

ModuleCommand *moduleCommandOf(const Command *cmd) {
    return cmd && (cmd->flags & CMD_MODULE) && cmd->id < COMMAND_MAX_IDS ? byId[cmd->id] : NULL;
}

/* Runs a module command: its argv as module strings, a context freed
 * after (auto memory, pool, postponed replies left open). */
static void moduleCommandProc(Client *c) {
    ModuleCommand *mc = byId[c->cmd->id];
    RedisModuleCtx ctx;
    moduleCtxInit(&ctx, mc->module, c);
    int argc = c->argc;
    RedisModuleString *small[16];
    RedisModuleString **argv = argc <= 16 ? small : xmalloc(sizeof(*argv) * (size_t)argc);
    for (int i = 0; i < argc; i++) {
        argv[i] = stringHandleNew();
        argv[i]->s = c->argv[i];
        argv[i]->refcount = 1;
        argv[i]->borrowed = 1;
    }
    /* A module command never propagates as sent (Redis 7.0): what it
     * replicates it states (Replicate, ReplicateVerbatim, Call with "!"). */
    if (effectsOn) effectsPrevent();
    moduleFilterEnterCall(mc->module);
    mc->func(&ctx, argv, argc);
    moduleFilterLeaveCall();
    /* A postponed length never set: Redis leaves the reply broken; Cairn
     * closes it empty so that the connection stays usable. */
    while (ctx.postponedCount > 0) {
        ctx.postponedCount--;
        serverLog(LL_WARNING, "Module %s: postponed reply length never set", mc->module->name);
        void *node = ctx.postponed[ctx.postponedCount];
        switch (ctx.postponedKind[ctx.postponedCount]) {
        case REPLY_MAP: replySetDeferredMapLen(c, node, 0); break;
        case REPLY_SET: replySetDeferredSetLen(c, node, 0); break;
        default: replySetDeferredArrayLen(c, node, 0); break;
        }
    }
    moduleCtxDone(&ctx);
    for (int i = 0; i < argc; i++) {
        RedisModuleString *s = argv[i];
        if (s->refcount > 1) { /* retained: it keeps its own copy */
            s->s = sdsDup(s->s);
            s->borrowed = 0;
        }
        modStringRelease(s);
    }
    if (argv != small) xfree(argv);
    moduleApplyRedactions(c);
}

/* Redis 7.0's command flags string: 0 ok, -1 an unknown flag. */
static int parseCommandFlags(const char *s, uint64_t *flags, uint64_t *acl, int *noCluster, int *getkeysApi,
                             int *getchannelsApi) {
    *flags = CMD_MODULE;
    *getkeysApi = 0;
    *getchannelsApi = 0;
    *acl = 0;
    *noCluster = 0;
    if (!s) return 0;
    int n = 0;
    sds *tok = sdsSplitLen(s, (ssize_t)strlen(s), " ", 1, &n);
    int rc = 0;
    for (int i = 0; i < n && rc == 0; i++) {
        const char *t = tok[i];
        if (!t[0]) continue;
        if (!strcasecmp(t, "write")) *flags |= CMD_WRITE;
        else if (!strcasecmp(t, "readonly")) *flags |= CMD_READONLY;
        else if (!strcasecmp(t, "admin")) *flags |= CMD_ADMIN;
        else if (!strcasecmp(t, "deny-oom")) *flags |= CMD_DENYOOM;
        else if (!strcasecmp(t, "deny-script")) *flags |= CMD_NOSCRIPT;
        else if (!strcasecmp(t, "allow-loading")) *flags |= CMD_LOADING;
        else if (!strcasecmp(t, "pubsub")) *flags |= CMD_PUBSUB;
        else if (!strcasecmp(t, "random")) { /* no flag in 7.0 */
        } else if (!strcasecmp(t, "allow-stale")) *flags |= CMD_STALE;
        else if (!strcasecmp(t, "no-monitor")) *flags |= CMD_SKIP_MONITOR;
        else if (!strcasecmp(t, "no-slowlog")) *flags |= CMD_SKIP_SLOWLOG;
        else if (!strcasecmp(t, "fast")) *flags |= CMD_FAST;
        else if (!strcasecmp(t, "no-auth")) *flags |= CMD_NO_AUTH;
        else if (!strcasecmp(t, "may-replicate")) *flags |= CMD_MAY_REPLICATE;
        else if (!strcasecmp(t, "getkeys-api")) {
            *flags |= CMD_MOVABLE_KEYS;
            *getkeysApi = 1;
        } else if (!strcasecmp(t, "getchannels-api")) *getchannelsApi = 1;
        else if (!strcasecmp(t, "no-cluster")) *noCluster = 1;
        else if (!strcasecmp(t, "no-mandatory-keys")) *flags |= CMD_NO_MANDATORY_KEYS;
        else if (!strcasecmp(t, "allow-busy")) *flags |= CMD_ALLOW_BUSY;
        else if (!strcasecmp(t, "blocking")) *flags |= CMD_BLOCKING;
        else rc = -1;
    }
    sdsFreeSplitRes(tok, n);
    /* Redis 7.0 gives a module's commands no ACL category. */
    return rc;
}

/* Fills mc's row: name (lower case) and the flags string's meaning, the
 * legacy first/last/step range as Redis 7.0 turns it into one key spec. */
static int fillCommand(ModuleCommand *mc, Module *m, const char *fullname, RedisModuleCmdFunc cmdfunc,
                       const char *strflags, int firstkey, int lastkey, int keystep) {
    uint64_t flags, acl;
    int noCluster;
    if (parseCommandFlags(strflags, &flags, &acl, &noCluster, &mc->getkeysApi, &mc->getchannelsApi) == -1)
        return -1;
    if (noCluster && clusterEnabled) return -1;
    char *lower = xstrdup(fullname);
    for (char *p = lower; *p; p++)
        if (*p >= 'A' && *p <= 'Z') *p = (char)(*p - 'A' + 'a');
    mc->module = m;
    mc->func = cmdfunc;
    mc->spec.fullname = lower;
    mc->spec.arity = cmdfunc ? -1 : -2;
    mc->spec.flags = flags;
    mc->spec.acl = acl;
    mc->spec.firstKey = firstkey;
    mc->spec.lastKey = lastkey;
    mc->spec.keyStep = keystep;
    mc->spec.module = m->name;
    mc->spec.group = "module";
    if (firstkey > 0) {
        /* With "getkeys-api" the flags are the callback's (Redis 7.0
         * marks the spec so, and its keys come from the callback). */
        mc->keySpec.flags = KS_RW | KS_ACCESS | KS_UPDATE | (mc->getkeysApi ? KS_VARIABLE_FLAGS : 0);
        mc->keySpec.bsType = KSB_INDEX;
        mc->keySpec.bsIndex = firstkey;
        mc->keySpec.fkType = KSF_RANGE;
        mc->keySpec.fk[0] = lastkey < 0 ? lastkey : lastkey - firstkey;
        mc->keySpec.fk[1] = keystep;
        mc->keySpec.fk[2] = 0;
        mc->spec.keySpecs = &mc->keySpec;
        mc->spec.keySpecCount = 1;
    }
    return 0;
}

static int RM_CreateCommand(RedisModuleCtx *ctx, const char *name, RedisModuleCmdFunc cmdfunc, const char *strflags,
                            int firstkey, int lastkey, int keystep) {
    Module *m = ctx->module;
    if (!m || !m->onload) return REDISMODULE_ERR;
    size_t len = strlen(name);
    if (len == 0 || strchr(name, '|') || strchr(name, ' ')) return REDISMODULE_ERR;
    if (commandLookup(name, len)) return REDISMODULE_ERR;
    if (commandIdCount() >= COMMAND_MAX_IDS && !commandHasFreeId()) {
        serverLog(LL_WARNING, "Module %s: no command id left for '%s'", m->name ? m->name : "?", name);
        return REDISMODULE_ERR;
    }
    ModuleCommand *mc = xcalloc(sizeof(*mc));
    if (fillCommand(mc, m, name, cmdfunc, strflags, firstkey, lastkey, keystep) == -1) {
        xfree(mc);
        return REDISMODULE_ERR;
    }
    mc->self = &mc->cmd;
    mc->cmd.name = mc->spec.fullname;
    mc->cmd.proc = cmdfunc ? moduleCommandProc : NULL;
    if (commandAdd(&mc->cmd, &mc->spec) == -1) {
        xfree((char *)mc->spec.fullname);
        xfree(mc);
        return REDISMODULE_ERR;
    }
    byId[mc->cmd.id] = mc;
    if (mc->getkeysApi) mc->cmd.getKeys = moduleGetKeysViaApi;
    if (mc->getchannelsApi) aclModuleChannels = moduleGetChannelsViaApi;
    m->cmds = xrealloc(m->cmds, sizeof(ModuleCommand *) * (size_t)(m->ncmds + 1));
    m->cmds[m->ncmds++] = mc;
    aclCommandsChanged();
    return REDISMODULE_OK;
}

#define MODULE_SUBCOMMANDS_MAX 64

/* A subcommand of a container the module created (its cmdfunc NULL);
 * one level only, as Redis.  The parent's subcommand array is reserved
 * whole at the first one, so that its Commands never move. */
static int RM_CreateSubcommand(RedisModuleCommand *parentHandle, const char *name, RedisModuleCmdFunc cmdfunc,
                               const char *strflags, int firstkey, int lastkey, int keystep) {
    ModuleCommand *parent = (ModuleCommand *)parentHandle;
    if (!parent || !parent->module->onload || parent->parent || parent->func) return REDISMODULE_ERR;
    size_t len = strlen(name);
    if (len == 0 || strchr(name, '|') || strchr(name, ' ')) return REDISMODULE_ERR;
    Command *pc = parent->self;
    if (commandLookupSub(pc, name, len)) return REDISMODULE_ERR;
    if (parent->nsubs == MODULE_SUBCOMMANDS_MAX) return REDISMODULE_ERR;
    if (commandIdCount() >= COMMAND_MAX_IDS && !commandHasFreeId()) return REDISMODULE_ERR;
    ModuleCommand *mc = xcalloc(sizeof(*mc));
    sds full = sdsCatPrintf(sdsEmpty(), "%s|%s", pc->name, name);
    int rc = fillCommand(mc, parent->module, full, cmdfunc, strflags, firstkey, lastkey, keystep);
    sdsFree(full);
    if (rc == -1) {
        xfree(mc);
        return REDISMODULE_ERR;
    }
    if (!parent->subs) {
        parent->subs = xcalloc(sizeof(Command) * (MODULE_SUBCOMMANDS_MAX + 1));
        parent->subMc = xcalloc(sizeof(ModuleCommand *) * MODULE_SUBCOMMANDS_MAX);
        pc->subcommands = parent->subs;
    }
    Command *sub = &parent->subs[parent->nsubs];
    mc->spec.arity = -2; /* the container's name and the subcommand's */
    mc->self = sub;
    mc->parent = parent;
    sub->name = strchr(mc->spec.fullname, '|') + 1;
    sub->proc = moduleCommandProc;
    sub->flags = mc->spec.flags;
    sub->spec = &mc->spec;
    sub->arity = mc->spec.arity;
    sub->parent = pc;
    sub->fullname = (char *)mc->spec.fullname;
    sub->nameLen = strlen(sub->name);
    sub->id = commandNewId();
    byId[sub->id] = mc;
    if (mc->getkeysApi) sub->getKeys = moduleGetKeysViaApi;
    if (mc->getchannelsApi) aclModuleChannels = moduleGetChannelsViaApi;
    parent->subMc[parent->nsubs++] = mc;
    aclCommandsChanged();
    return REDISMODULE_OK;
}

/* A command of this module, by name, "cmd" or "cmd|sub" (Redis: only the
 * module's own). */
static RedisModuleCommand *RM_GetCommand(RedisModuleCtx *ctx, const char *name) {
    Command *cmd = commandLookupFullName(name, strlen(name));
    ModuleCommand *mc = cmd && cmd->id < COMMAND_MAX_IDS ? byId[cmd->id] : NULL;
    if (!mc || mc->self != cmd || mc->module != ctx->module) return NULL;
    return (RedisModuleCommand *)mc;
}

static void forgetId(unsigned id) {
    aclCommandRemoved(id);
    statsForgetCommand(id);
    byId[id] = NULL;
}

/* No client keeps a pointer to a command that goes: its last command is
 * forgotten (CLIENT LIST), a transaction that queued it fails at EXEC. */
static void forgetInClients(const Command *cmd) {
    for (Client *c = server.net.clients; c; c = c->nextClient) {
        if (c->lastcmd == cmd || (c->lastcmd && c->lastcmd->parent == cmd)) c->lastcmd = NULL;
        if (c->flags & CLIENT_MULTI) multiForgetCommand(c, cmd);
    }
}

static void moduleRemoveCommands(Module *m) {
    for (int i = 0; i < m->ncmds; i++) {
        ModuleCommand *mc = m->cmds[i];
        forgetInClients(&mc->cmd);
        for (int j = 0; j < mc->nsubs; j++) {
            ModuleCommand *sub = mc->subMc[j];
            forgetId(sub->self->id);
            commandFreeId(sub->self->id);
            moduleFreeCommandInfo(sub);
            xfree((char *)sub->spec.fullname);
            xfree(sub);
        }
        forgetId(mc->cmd.id);
        commandRemove(&mc->cmd);
        moduleFreeCommandInfo(mc);
        xfree(mc->subs);
        xfree(mc->subMc);
        xfree((char *)mc->spec.fullname);
        xfree(mc);
    }
    xfree(m->cmds);
    m->cmds = NULL;
    m->ncmds = 0;
    aclCommandsChanged();
}

/* ------------------------------------------------------------------ */
/* GetApi                                                              */
/* ------------------------------------------------------------------ */

#define API(fn) {"RedisModule_" #fn, (void *)(uintptr_t)RM_##fn}
static const ApiEntry coreApi[] = {
    API(SetModuleAttribs), API(IsModuleNameBusy), API(CreateCommand), API(GetCommand), API(CreateSubcommand), API(WrongArity),
    API(GetSelectedDb), API(SelectDb), API(GetClientId), API(GetContextFlags), API(AutoMemory), API(Milliseconds),
    API(Log), API(LogIOError), API(Alloc), API(TryAlloc), API(Calloc), API(Realloc), API(Free), API(Strdup),
    API(PoolAlloc), API(MallocSize), API(CreateString), API(CreateStringFromLongLong), API(CreateStringFromULongLong),
    API(CreateStringFromDouble), API(CreateStringFromLongDouble), API(CreateStringFromString),
    API(CreateStringPrintf), API(FreeString), API(RetainString), API(HoldString), API(StringPtrLen),
    API(StringToLongLong), API(StringToULongLong), API(StringToDouble), API(StringToLongDouble), API(StringCompare),
    API(StringAppendBuffer), API(TrimStringAllocation), API(ReplyWithLongLong), API(ReplyWithError),
    API(ReplyWithSimpleString), API(ReplyWithArray), API(ReplyWithMap), API(ReplyWithSet), API(ReplyWithAttribute),
    API(ReplyWithNullArray), API(ReplyWithEmptyArray), API(ReplySetArrayLength), API(ReplySetMapLength),
    API(ReplySetSetLength), API(ReplySetAttributeLength), API(ReplyWithStringBuffer), API(ReplyWithCString),
    API(ReplyWithString), API(ReplyWithEmptyString), API(ReplyWithVerbatimString), API(ReplyWithVerbatimStringType),
    API(ReplyWithNull), API(ReplyWithBool), API(ReplyWithDouble), API(ReplyWithBigNumber), API(ReplyWithLongDouble),
    {NULL, NULL}};

static void *apiLookup(const ApiEntry *t, const char *name) {
    for (; t->name; t++)
        if (!strcmp(t->name, name)) return t->fn;
    return NULL;
}

int moduleGetApi(const char *name, void **out) {
    void *fn = apiLookup(coreApi, name);
    if (!fn) fn = apiLookup(moduleCallApi, name);
    if (!fn) fn = apiLookup(moduleKeyApi, name);
    if (!fn) fn = apiLookup(moduleTypeApi, name);
    if (!fn) fn = apiLookup(moduleCmdInfoApi, name);
    if (!fn) fn = apiLookup(moduleMiscApi, name);
    if (!fn) fn = apiLookup(moduleMisc2Api, name);
    if (!fn) fn = apiLookup(moduleEventsApi, name);
    if (!fn) fn = apiLookup(moduleConfigApi, name);
    if (!fn) fn = apiLookup(moduleZrangeApi, name);
    if (!fn) fn = apiLookup(moduleScanApi, name);
    if (!fn) fn = apiLookup(moduleInfoApi, name);
    if (!fn) fn = apiLookup(moduleDictApi, name);
    if (!fn) fn = apiLookup(moduleStreamApi, name);
    if (!fn) fn = apiLookup(moduleBlockApi, name);
    if (!fn) fn = apiLookup(moduleFilterApi, name);
    if (!fn) fn = apiLookup(moduleForkApi, name);
    if (!fn) fn = apiLookup(moduleAclApi, name);
    if (!fn) fn = apiLookup(moduleMisc3Api, name);
    if (!fn) return REDISMODULE_ERR;
    *out = fn;
    return REDISMODULE_OK;
}

/* ------------------------------------------------------------------ */
/* load, unload                                                        */
/* ------------------------------------------------------------------ */

typedef int (*OnLoadFn)(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);

static void moduleFree(Module *m) {
    for (int i = 0; i < m->nargs; i++) sdsFree(m->args[i]);
    xfree(m->args);
    xfree(m->name);
    xfree(m->path);
    xfree(m);
}

/* Loads the library at path, its OnLoad given args: 0, or -1 with the
 * reason logged and nothing changed. */
int moduleLoad(const char *path, sds *args, int nargs) {
    void *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        serverLog(LL_WARNING, "Module %s failed to load: %s", path, dlerror());
        return -1;
    }
    OnLoadFn onload = (OnLoadFn)(uintptr_t)dlsym(handle, "RedisModule_OnLoad");
    if (!onload) {
        dlclose(handle);
        serverLog(LL_WARNING, "Module %s does not export RedisModule_OnLoad() symbol. Module not loaded.", path);
        return -1;
    }
    Module *m = xcalloc(sizeof(*m));
    m->handle = handle;
    m->path = xstrdup(path);
    m->onload = 1;
    moduleBlockStart(); /* a thread it starts may want the GIL */
    moduleMisc3Start();
    RedisModuleCtx ctx;
    moduleCtxInit(&ctx, m, NULL);
    RedisModuleString **argv = xmalloc(sizeof(*argv) * (size_t)(nargs ? nargs : 1));
    for (int i = 0; i < nargs; i++) argv[i] = modStringNew(NULL, args[i], sdsLen(args[i]));
    int rc = onload(&ctx, argv, nargs);
    m->onload = 0;
    moduleCtxDone(&ctx);
    for (int i = 0; i < nargs; i++) modStringRelease(argv[i]);
    xfree(argv);
    if (rc == REDISMODULE_OK && m->name && moduleHasConfigs(m) && !m->configsLoaded) {
        serverLog(LL_WARNING, "Module Configurations were not set, likely a missing LoadConfigs call. Unloading the "
                              "module.");
        rc = REDISMODULE_ERR;
    }
    if (rc != REDISMODULE_OK || !m->name) {
        moduleDropConfigs(m);
        moduleRemoveCommands(m);
        moduleDropTypes(m);
        moduleDropTimers(m);
        moduleDropSubscriptions(m);
        moduleDropFilters(m);
        moduleAclDropModule(m);
        moduleDropSharedApis(m);
        dlclose(handle);
        serverLog(LL_WARNING, "Module %s initialization failed. Module not loaded", path);
        moduleFree(m);
        return -1;
    }
    m->args = xmalloc(sizeof(sds) * (size_t)(nargs ? nargs : 1));
    for (int i = 0; i < nargs; i++) m->args[i] = sdsDup(args[i]);
    m->nargs = nargs;
    Module **tail = &modules;
    while (*tail) tail = &(*tail)->next;
    *tail = m;
    serverLog(LL_NOTICE, "Module '%s' loaded from %s", m->name, path);
    moduleFireModuleChange(m, 0);
    return 0;
}

/* 0, or -1 with *err Redis's reason. */
static int moduleUnload(const char *name, const char **err) {
    Module *m = moduleFind(name);
    if (!m) {
        *err = "no such module with that name";
        return -1;
    }
    if (moduleHasTypes(m)) {
        *err = "the module exports one or more module-side data types, can't unload";
        return -1;
    }
    if (moduleSharedApiInUse(m)) {
        *err = "the module exports APIs used by other modules. Please unload them first and try again";
        return -1;
    }
    if (moduleBlockedCount(m) > 0) {
        *err = "the module has blocked clients. Please wait them unblocked and try again";
        return -1;
    }
    if (moduleHasTimers(m)) {
        *err = "the module holds timer that is not fired. Please stop the timer or wait until it fires.";
        return -1;
    }
    OnLoadFn onunload = (OnLoadFn)(uintptr_t)dlsym(m->handle, "RedisModule_OnUnload");
    if (onunload) {
        RedisModuleCtx ctx;
        moduleCtxInit(&ctx, m, NULL);
        int rc = ((int (*)(RedisModuleCtx *))(uintptr_t)onunload)(&ctx);
        moduleCtxDone(&ctx);
        if (rc == REDISMODULE_ERR) {
            serverLog(LL_WARNING, "Module %s OnUnload failed.  Unload canceled.", name);
            *err = "operation not possible.";
            errno = ECANCELED;
            return -1;
        }
    }
    moduleRemoveCommands(m);
    moduleDropTimers(m);
    moduleDropSubscriptions(m);
    moduleDropFilters(m);
    moduleAclDropModule(m);
    moduleDropConfigs(m);
    moduleDropSharedApis(m);
    for (Module **pp = &modules; *pp; pp = &(*pp)->next) {
        if (*pp == m) {
            *pp = m->next;
            break;
        }
    }
    if (dlclose(m->handle) == -1) serverLog(LL_WARNING, "Error when trying to close the %s module: %s", m->name, dlerror());
    serverLog(LL_NOTICE, "Module %s unloaded", m->name);
    moduleFireModuleChange(m, 1);
    moduleFree(m);
    return 0;
}

/* ------------------------------------------------------------------ */
/* MODULE                                                              */
/* ------------------------------------------------------------------ */

static void moduleListCommand(Client *c) {
    long n = 0;
    for (Module *m = modules; m; m = m->next) n++;
    replyArrayLen(c, n);
    for (Module *m = modules; m; m = m->next) {
        replyMapLen(c, 4);
        replyBulkCString(c, "name");
        replyBulkCString(c, m->name);
        replyBulkCString(c, "ver");
        replyLongLong(c, m->ver);
        replyBulkCString(c, "path");
        replyBulkCString(c, m->path);
        replyBulkCString(c, "args");
        replyArrayLen(c, m->nargs);
        for (int i = 0; i < m->nargs; i++) replyBulkSds(c, m->args[i]);
    }
}

static void moduleLoadCommand(Client *c) {
    if (moduleLoad(c->argv[2], c->argv + 3, c->argc - 3) == 0)
        replyOk(c);
    else
        replyError(c, ERR_MODULE_LOAD);
}

/* MODULE LOADEX <path> [CONFIG name value ...] [ARGS ...]: the CONFIG
 * values are queued for the module's LoadConfigs; one it does not take
 * fails the load (the module is unloaded again), as in Redis 7.0. */
static void moduleLoadexCommand(Client *c) {
    int argsAt = c->argc;
    moduleClearQueuedConfigs();
    for (int i = 3; i < c->argc; i++) {
        if (!strcasecmp(c->argv[i], "config")) {
            if (i + 2 >= c->argc) {
                serverLog(LL_NOTICE, "CONFIG specified without name value pair");
                moduleClearQueuedConfigs();
                replyError(c, ERR_MODULE_LOAD);
                return;
            }
            moduleQueueConfig(c->argv[i + 1], c->argv[i + 2]);
            i += 2;
        } else if (!strcasecmp(c->argv[i], "args")) {
            argsAt = i + 1;
            break;
        } else {
            serverLog(LL_NOTICE, "Syntax Error from arguments to loadex around %s.", c->argv[i]);
            moduleClearQueuedConfigs();
            replyError(c, ERR_MODULE_LOAD);
            return;
        }
    }
    Module *before = modules;
    while (before && before->next) before = before->next;
    if (moduleLoad(c->argv[2], c->argv + argsAt, c->argc - argsAt) == -1) {
        moduleClearQueuedConfigs();
        replyError(c, ERR_MODULE_LOAD);
        return;
    }
    if (moduleQueuedConfigCount() > 0) {
        serverLog(LL_WARNING, "Module Configuration detected without loadmodule directive or no ApplyConfig call: "
                              "aborting");
        moduleClearQueuedConfigs();
        Module *m = before ? before->next : modules;
        const char *err;
        if (m) moduleUnload(m->name, &err);
        replyError(c, ERR_MODULE_LOAD);
        return;
    }
    replyOk(c);
}

static void moduleUnloadCommand(Client *c) {
    const char *err;
    if (moduleUnload(c->argv[2], &err) == 0)
        replyOk(c);
    else
        replyErrorFormat(c, "ERR Error unloading module: %s", err);
}

static void moduleHelpCommand(Client *c) {
    static const char *help[] = {
        "LIST",
        "    Return a list of loaded modules.",
        "LOAD <path> [<arg> ...]",
        "    Load a module library from <path>, passing to it any optional arguments.",
        "LOADEX <path> [[CONFIG NAME VALUE] [CONFIG NAME VALUE]] [ARGS ...]",
        "    Load a module library from <path>, while passing it module configurations and optional arguments.",
        "UNLOAD <name>",
        "    Unload a module.",
        NULL};
    replyHelp(c, help);
}

static Command moduleSubcommands[] = {
    {.name = "help", .proc = moduleHelpCommand},     {.name = "list", .proc = moduleListCommand},
    {.name = "load", .proc = moduleLoadCommand},     {.name = "loadex", .proc = moduleLoadexCommand},
    {.name = "unload", .proc = moduleUnloadCommand}, {0}};

Command moduleCommands[] = {{.name = "module", .subcommands = moduleSubcommands}, {0}};

/* ------------------------------------------------------------------ */
/* INFO modules, loadmodule, start-up                                  */
/* ------------------------------------------------------------------ */

static sds moduleInfoSection(sds s) {
    for (Module *m = modules; m; m = m->next)
        s = sdsCatPrintf(s, "module:name=%s,ver=%d,api=%d,filters=0,usedby=[],using=[],options=[]\r\n", m->name,
                         m->ver, m->apiver);
    return s;
}

static const char *parseLoadmoduleLine(sds *argv, int argc, int linenum, const char *line) {
    (void)linenum;
    (void)line;
    if (argc < 2) return "wrong number of arguments";
    queued = xrealloc(queued, sizeof(QueuedModule) * (size_t)(queuedCount + 1));
    QueuedModule *q = &queued[queuedCount++];
    q->path = sdsDup(argv[1]);
    q->argc = argc - 2;
    q->argv = xmalloc(sizeof(sds) * (size_t)(q->argc ? q->argc : 1));
    for (int i = 0; i < q->argc; i++) q->argv[i] = sdsDup(argv[i + 2]);
    return NULL;
}

/* CONFIG REWRITE writes one line per loaded module (however it was
 * loaded), with its path and arguments, as Redis 7.0. */
static sds *loadmoduleLines(int *count) {
    *count = 0;
    int n = 0;
    for (Module *m = modules; m; m = m->next) n++;
    if (n == 0) return NULL;
    sds *lines = xmalloc(sizeof(sds) * (size_t)n);
    for (Module *m = modules; m; m = m->next) {
        sds l = sdsCat(sdsNew("loadmodule "), m->path);
        for (int j = 0; j < m->nargs; j++) l = sdsCatSds(sdsCat(l, " "), m->args[j]);
        lines[(*count)++] = l;
    }
    return lines;
}

static const ConfigLineKind loadmoduleLineKind = {"loadmodule", parseLoadmoduleLine, loadmoduleLines};

void moduleRegisterConfig(void) {
    configRegisterLineKind(&loadmoduleLineKind);
    moduleConfigInit();
}

/* Redis 7.0's conditions for a replica's diskless load: every module with a
 * data type handles read errors (REDISMODULE_OPTIONS_HANDLE_IO_ERRORS);
 * with swapdb, every module also declares it copes with async loading
 * (REDISMODULE_OPTIONS_HANDLE_REPL_ASYNC_LOAD).  Otherwise the load goes
 * through a file, with Redis's log line. */
static int disklessLoadCheck(int swapdb) {
    for (Module *m = modules; m; m = m->next)
        if (moduleHasTypes(m) && !(m->options & REDISMODULE_OPTIONS_HANDLE_IO_ERRORS)) {
            serverLog(LL_WARNING, "Skipping diskless-load because there are modules that don't handle read errors.");
            return 0;
        }
    if (!swapdb) return 1;
    for (Module *m = modules; m; m = m->next)
        if (!(m->options & REDISMODULE_OPTIONS_HANDLE_REPL_ASYNC_LOAD)) {
            serverLog(LL_WARNING, "Skipping diskless-load because there are modules that are not aware of async replication.");
            return 0;
        }
    return 1;
}

void moduleInit(void) {
    serverDisklessLoadCheck = disklessLoadCheck;
    moduleTypesInit();
    infoSetModulesSection(moduleInfoSection);
    infoSetHelloModules(moduleListCommand);
    moduleInfoInit();
    moduleBlockInit();
}

Module *moduleList(void) { return modules; }

void moduleLoadQueued(void) {
    for (int i = 0; i < queuedCount; i++) {
        if (moduleLoad(queued[i].path, queued[i].argv, queued[i].argc) == -1) {
            serverLog(LL_WARNING, "Can't load module from %s: server aborting", queued[i].path);
            exit(1);
        }
    }
    if (moduleQueuedConfigCount() > 0) {
        serverLog(LL_WARNING, "Module Configuration detected without loadmodule directive or no ApplyConfig call: "
                              "aborting");
        exit(1);
    }
}
