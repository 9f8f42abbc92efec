/* module_misc2.c -- more small parts of the module API: the getkeys-api
 * family (a command's keys found by calling it with a position request),
 * the keys of any command (GetCommandKeys), stream IDs as strings, a key's
 * absolute expire and its LRU/LFU bits, clients by id (info, name) and the
 * name of the command running, ResetDataset.
 *
 * Position requests: a command created with the "getkeys-api" flag gets
 * moduleGetKeysViaApi as its key finder (module.c), which COMMAND GETKEYS,
 * ACL key checks, tracking and cluster routing reach through commandKeys.
 * It calls the command's function with a context that has no client (its
 * replies go nowhere) and copies of the arguments; while it runs, posCtx
 * names that context and posOut the result KeyAtPos appends to.  Requests
 * nest (the module may ask GetCommandKeys inside one): the previous pair
 * is restored after.  Only the main thread runs them.  A command created
 * with "getchannels-api" is asked the same way (posChannels set) for its
 * channels when an ACL check needs them (server/acl.c's hook). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "core/conn.h"
#include "core/server.h"
#include "ds/alloc.h"
#include "ds/util.h"
#include "db/db.h"
#include "db/object.h"
#include "module/module_int.h"
#include "persist/aof.h"
#include "server/acl.h"
#include "types/stream.h"

/* The key-spec flag bits Redis 7.0 defines (RO .. VARIABLE_FLAGS); Cairn's
 * KS_* bits are the same. */
#define KEY_FLAGS_MASK ((1 << 11) - 1)
/* RW | ACCESS | UPDATE: what KeyAtPos gives a key, as Redis. */
#define KEY_FULL_ACCESS (REDISMODULE_CMD_KEY_RW | REDISMODULE_CMD_KEY_ACCESS | REDISMODULE_CMD_KEY_UPDATE)

/* ---- the getkeys-api family ---- */

static RedisModuleCtx *posCtx;
static KeyResult *posOut;
static int posArgc;
static int posChannels; /* 1: a channel position request */

/* Calls mc's function with a position request context for argc/argv;
 * what KeyAtPos or ChannelAtPosWithFlags (as channels says) report is
 * appended to out.  Returns how many were. */
static int positionRequest(ModuleCommand *mc, int channels, int argc, char **argv, KeyResult *out) {
    int start = out->count;
    RedisModuleCtx ctx;
    moduleCtxInit(&ctx, mc->module, NULL);
    RedisModuleString **margv = xmalloc(sizeof(*margv) * (size_t)argc);
    for (int i = 0; i < argc; i++) margv[i] = modStringNew(NULL, argv[i], sdsLen(argv[i]));
    RedisModuleCtx *prevCtx = posCtx;
    KeyResult *prevOut = posOut;
    int prevArgc = posArgc, prevChannels = posChannels;
    posCtx = &ctx;
    posOut = out;
    posArgc = argc;
    posChannels = channels;
    mc->func(&ctx, margv, argc);
    posCtx = prevCtx;
    posOut = prevOut;
    posArgc = prevArgc;
    posChannels = prevChannels;
    moduleCtxDone(&ctx);
    for (int i = 0; i < argc; i++) modStringRelease(margv[i]);
    xfree(margv);
    return out->count - start;
}

int moduleGetKeysViaApi(int argc, char **argv, KeyResult *out) {
    ModuleCommand *mc = moduleCommandOf(commandLookupArgv(argc, argv));
    if (!mc || !mc->func || !mc->getkeysApi || argc < 1) return 0;
    return positionRequest(mc, 0, argc, argv, out);
}

int moduleGetChannelsViaApi(Command *cmd, int argc, char **argv, KeyResult *out) {
    ModuleCommand *mc = moduleCommandOf(cmd);
    if (!mc || !mc->func || !mc->getchannelsApi || argc < 1) return -1;
    return positionRequest(mc, 1, argc, argv, out);
}

static int RM_IsKeysPositionRequest(RedisModuleCtx *ctx) { return ctx && ctx == posCtx && !posChannels; }

static int RM_IsChannelsPositionRequest(RedisModuleCtx *ctx) { return ctx && ctx == posCtx && posChannels; }

/* Outside a channel position request, nothing; flags are the
 * REDISMODULE_CMD_CHANNEL_* bits (0..3).  A position outside the argument
 * list is dropped. */
static void RM_ChannelAtPosWithFlags(RedisModuleCtx *ctx, int pos, int flags) {
    if (!ctx || ctx != posCtx || !posChannels || pos <= 0 || pos >= posArgc) return;
    keyResultAdd(posOut, pos, (uint32_t)flags & 15u);
}

/* Outside a key position request, nothing.  A position outside the
 * argument list (Redis would read past it) is dropped. */
static void RM_KeyAtPosWithFlags(RedisModuleCtx *ctx, int pos, int flags) {
    if (!ctx || ctx != posCtx || posChannels || pos <= 0 || pos >= posArgc) return;
    keyResultAdd(posOut, pos, (uint32_t)flags & KEY_FLAGS_MASK);
}

static void RM_KeyAtPos(RedisModuleCtx *ctx, int pos) { RM_KeyAtPosWithFlags(ctx, pos, KEY_FULL_ACCESS); }

/* The keys GetCommandKeys reports, as Redis 7.0 finds them (not through
 * the key specs): a getkeys-api command's callback, else the command's
 * key finder, else its legacy first/last/step range with no flags.
 * Positions past argv are skipped. */
static int commandKeysLegacy(Command *cmd, int argc, char **argv, KeyResult *out) {
    if (cmd->getKeys) return cmd->getKeys(argc, argv, out);
    const CommandSpec *spec = cmd->spec;
    int first = spec->firstKey;
    if (first <= 0) return 0;
    long long last = spec->lastKey >= 0 ? spec->lastKey : (long long)argc + spec->lastKey;
    int step = spec->keyStep > 0 ? spec->keyStep : 1;
    int n = 0;
    for (long long j = first; j <= last; j += step) {
        if (j >= argc) continue;
        keyResultAdd(out, (int)j, 0);
        n++;
    }
    return n;
}

/* The key positions of argv's command and, when outFlags, their flags
 * (arrays the module frees with RedisModule_Free).  NULL with errno ENOENT
 * for an unknown command, EINVAL for a wrong argument count, 0 when the
 * command has no keys or none in argv; *numKeys is set when the keys were
 * looked for (Redis's rules). */
static int *RM_GetCommandKeysWithFlags(RedisModuleCtx *ctx, RedisModuleString **argv, int argc, int *numKeys,
                                       int **outFlags) {
    (void)ctx;
    if (argc < 1 || !argv) {
        errno = ENOENT;
        return NULL;
    }
    char *small[16];
    char **a = argc <= 16 ? small : xmalloc(sizeof(char *) * (size_t)argc);
    for (int i = 0; i < argc; i++) a[i] = argv[i]->s;
    int *res = NULL;
    Command *cmd = commandLookupArgv(argc, a);
    if (!cmd) {
        errno = ENOENT;
    } else if (!commandHasKeys(cmd)) {
        errno = 0;
    } else if ((cmd->arity > 0 && cmd->arity != argc) || argc < -cmd->arity) {
        errno = EINVAL;
    } else {
        KeyResult r;
        keyResultInit(&r);
        int n = commandKeysLegacy(cmd, argc, a, &r);
        *numKeys = n;
        if (n == 0) {
            errno = 0;
        } else {
            res = xmalloc(sizeof(int) * (size_t)n);
            if (outFlags) *outFlags = xmalloc(sizeof(int) * (size_t)n);
            for (int i = 0; i < n; i++) {
                res[i] = r.keys[i].pos;
                if (outFlags) (*outFlags)[i] = (int)(r.keys[i].flags & KEY_FLAGS_MASK);
            }
        }
        keyResultFree(&r);
    }
    if (a != small) xfree(a);
    return res;
}

static int *RM_GetCommandKeys(RedisModuleCtx *ctx, RedisModuleString **argv, int argc, int *numKeys) {
    return RM_GetCommandKeysWithFlags(ctx, argv, argc, numKeys, NULL);
}

/* ---- stream IDs ---- */

static RedisModuleString *RM_CreateStringFromStreamID(RedisModuleCtx *ctx, const RedisModuleStreamID *id) {
    char buf[48];
    int n = snprintf(buf, sizeof(buf), "%llu-%llu", (unsigned long long)id->ms, (unsigned long long)id->seq);
    return modStringNew(ctx, buf, (size_t)n);
}

/* As XRANGE reads an ID: "-" (0-0), "+" (the largest), "ms" (seq 0) or
 * "ms-seq"; at most 127 bytes. */
static int RM_StringToStreamID(const RedisModuleString *str, RedisModuleStreamID *id) {
    StreamID sid;
    if (!str || streamParseRangeID(str->s, &sid) < 0) return REDISMODULE_ERR;
    id->ms = sid.ms;
    id->seq = sid.seq;
    return REDISMODULE_OK;
}

/* ---- a key's absolute expire, LRU and LFU ---- */

#define LRU_CLOCK_MAX ((1u << 24) - 1)

static kvobj *openValue(RedisModuleKey *k) {
    if (!k) return NULL;
    kvobj *o = dbFind(k->db, k->key, sdsLen(k->key));
    return o && !kvIsExpired(o) ? o : NULL;
}

/* The expire as unix ms (even when passed), or REDISMODULE_NO_EXPIRE. */
static mstime_t RM_GetAbsExpire(RedisModuleKey *k) {
    kvobj *o = openValue(k);
    return o && kvHasExpire(o) ? kvExpire(o) : REDISMODULE_NO_EXPIRE;
}

static int RM_SetAbsExpire(RedisModuleKey *k, mstime_t expire) {
    kvobj *o = openValue(k);
    if (!o || !(k->mode & REDISMODULE_WRITE) || (expire < 0 && expire != REDISMODULE_NO_EXPIRE))
        return REDISMODULE_ERR;
    if (expire != REDISMODULE_NO_EXPIRE)
        dbSetExpire(k->db, &o, expire);
    else
        dbRemoveExpire(k->db, &o);
    return REDISMODULE_OK;
}

static int policyLfu(void) {
    int p = server.cfg.keyspace.maxmemoryPolicy;
    return p == MAXMEMORY_VOLATILE_LFU || p == MAXMEMORY_ALLKEYS_LFU;
}

static int policyLru(void) {
    int p = server.cfg.keyspace.maxmemoryPolicy;
    return p == MAXMEMORY_VOLATILE_LRU || p == MAXMEMORY_ALLKEYS_LRU;
}

/* Idle ms as the LRU clock (seconds) says; -1 under an LFU policy. */
static int RM_GetLRU(RedisModuleKey *k, mstime_t *idle) {
    *idle = -1;
    kvobj *o = openValue(k);
    if (!o) return REDISMODULE_ERR;
    if (policyLfu()) return REDISMODULE_OK;
    unsigned now = dbLruClock & LRU_CLOCK_MAX, lru = kvLru(o) & LRU_CLOCK_MAX;
    long long secs = now >= lru ? (long long)(now - lru) : (long long)now + (LRU_CLOCK_MAX - lru);
    *idle = secs * 1000;
    return REDISMODULE_OK;
}

/* Sets the access time idle ms ago (whole seconds); ERR under an LFU
 * policy or for a negative idle time. */
static int RM_SetLRU(RedisModuleKey *k, mstime_t idle) {
    kvobj *o = openValue(k);
    if (!o || policyLfu() || idle < 0) return REDISMODULE_ERR;
    long long clock = dbLruClock & LRU_CLOCK_MAX;
    long long at = clock - idle / 1000;
    if (at < 0) at = (clock + LRU_CLOCK_MAX / 2) % LRU_CLOCK_MAX;
    kvSetLru(o, (unsigned)at);
    return REDISMODULE_OK;
}

/* The decayed LFU counter; -1 under an LRU policy. */
static int RM_GetLFU(RedisModuleKey *k, long long *freq) {
    *freq = -1;
    kvobj *o = openValue(k);
    if (!o) return REDISMODULE_ERR;
    if (policyLru()) return REDISMODULE_OK;
    *freq = dbLfuDecayed(o);
    return REDISMODULE_OK;
}

/* Sets the counter (0..255; Redis asserts above) with now as its time;
 * ERR unless an LFU policy is set. */
static int RM_SetLFU(RedisModuleKey *k, long long freq) {
    kvobj *o = openValue(k);
    if (!o || !policyLfu() || freq < 0 || freq > 255) return REDISMODULE_ERR;
    unsigned minutes = (unsigned)((dbNowMs / 60000) & 65535);
    kvSetLru(o, (minutes << 8) | (unsigned)freq);
    return REDISMODULE_OK;
}

/* ---- clients by id, the command running ---- */

/* A connected client (not a fake one) by id, or NULL. */
static Client *clientById(uint64_t id) {
    for (Client *c = server.net.clients; c; c = c->nextClient)
        if (c->id == id && !clientIsFake(c)) return c;
    return NULL;
}

/* ERR when no such client or ci's version is not 1; ci NULL only checks
 * that the client exists. */
static int RM_GetClientInfoById(void *ci, uint64_t id) {
    Client *c = clientById(id);
    if (!c) return REDISMODULE_ERR;
    if (!ci) return REDISMODULE_OK;
    RedisModuleClientInfoV1 *info = ci;
    if (info->version != 1) return REDISMODULE_ERR;
    memset(info, 0, sizeof(*info));
    info->version = 1;
    if (c->flags & CLIENT_MULTI) info->flags |= REDISMODULE_CLIENTINFO_FLAG_MULTI;
    if (c->flags & CLIENT_PUBSUB) info->flags |= REDISMODULE_CLIENTINFO_FLAG_PUBSUB;
    if (c->flags & CLIENT_UNIX_SOCKET) info->flags |= REDISMODULE_CLIENTINFO_FLAG_UNIXSOCKET;
    if (c->flags & CLIENT_TRACKING) info->flags |= REDISMODULE_CLIENTINFO_FLAG_TRACKING;
    if (c->flags & CLIENT_BLOCKED) info->flags |= REDISMODULE_CLIENTINFO_FLAG_BLOCKED;
    if (c->conn && connTlsAvailable() && c->conn->type == &connTlsType)
        info->flags |= REDISMODULE_CLIENTINFO_FLAG_SSL;
    /* c->addr is "ip:port"; a unix socket's peer has no path (Redis). */
    if (!(c->flags & CLIENT_UNIX_SOCKET)) {
        const char *colon = strrchr(c->addr, ':');
        size_t n = colon ? (size_t)(colon - c->addr) : strlen(c->addr);
        if (n >= sizeof(info->addr)) n = sizeof(info->addr) - 1;
        memcpy(info->addr, c->addr, n);
        if (colon) info->port = (uint16_t)strtoul(colon + 1, NULL, 10);
    }
    info->db = (uint16_t)c->db->id;
    info->id = c->id;
    return REDISMODULE_OK;
}

/* The client's name; NULL when no such client or it has none (errno
 * untouched, as Redis 7.0). */
static RedisModuleString *RM_GetClientNameById(RedisModuleCtx *ctx, uint64_t id) {
    Client *c = clientById(id);
    if (!c || !c->name) return NULL;
    return modStringNew(ctx, c->name, sdsLen(c->name));
}

/* CLIENT SETNAME's rules: printable ASCII without spaces (else EINVAL);
 * an empty name clears it.  ENOENT when no such client. */
static int RM_SetClientNameById(uint64_t id, RedisModuleString *name) {
    Client *c = clientById(id);
    if (!c) {
        errno = ENOENT;
        return REDISMODULE_ERR;
    }
    size_t len = sdsLen(name->s);
    for (size_t i = 0; i < len; i++) {
        if (name->s[i] < '!' || name->s[i] > '~') {
            errno = EINVAL;
            return REDISMODULE_ERR;
        }
    }
    if (c->name) sdsFree(c->name);
    c->name = len ? sdsNewLen(name->s, len) : NULL;
    return REDISMODULE_OK;
}

/* The full name ("container|sub") of the context's client's command, or
 * NULL outside one. */
static const char *RM_GetCurrentCommandName(RedisModuleCtx *ctx) {
    if (!ctx || !ctx->client || !ctx->client->cmd) return NULL;
    return ctx->client->cmd->fullname;
}

/* ---- ResetDataset ---- */

/* FLUSHALL's work without its reply and propagation (Redis 7.0's
 * flushAllDataAndResetRDB): every database emptied (async: by the lazy-free
 * thread), the flush events and signals, the dirty count, a save child
 * stopped and the empty dataset saved when save points are set.  With
 * restartAof and the AOF on, the AOF starts again from a rewrite of the
 * empty dataset. */
static void RM_ResetDataset(int restartAof, int async) {
    moduleAssertGil("RedisModule_ResetDataset");
    long long removed = 0;
    serverFireEvent(SERVER_EVENT_FLUSHDB, 0, NULL, -1, !async);
    signalFlushedDb(-1);
    for (int i = 0; i < server.cfg.databases; i++) {
        Db *db = &server.db[i];
        long long n = async ? dbEmptyAsync(db) : dbEmpty(db);
        if (n && !async) xmallocPurge();
        removed += n;
    }
    serverFireEvent(SERVER_EVENT_FLUSHDB, 1, NULL, -1, !async);
    serverIncrDirty(removed);
    signalFlushAllDone();
    if (restartAof) aofRestartAfterSync();
}

#define API(n) {"RedisModule_" #n, (void *)(uintptr_t)RM_##n}
const ApiEntry moduleMisc2Api[] = {API(IsKeysPositionRequest),
                                   API(IsChannelsPositionRequest),
                                   API(ChannelAtPosWithFlags),
                                   API(KeyAtPos),
                                   API(KeyAtPosWithFlags),
                                   API(GetCommandKeys),
                                   API(GetCommandKeysWithFlags),
                                   API(CreateStringFromStreamID),
                                   API(StringToStreamID),
                                   API(GetAbsExpire),
                                   API(SetAbsExpire),
                                   API(GetLRU),
                                   API(SetLRU),
                                   API(GetLFU),
                                   API(SetLFU),
                                   API(GetClientInfoById),
                                   API(GetClientNameById),
                                   API(SetClientNameById),
                                   API(GetCurrentCommandName),
                                   API(ResetDataset),
                                   {NULL, NULL}};
