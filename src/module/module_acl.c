/* module_acl.c -- users and authentication for modules: CreateModuleUser,
 * FreeModuleUser, SetModuleUserACL, SetModuleUserACLString,
 * GetModuleUserACLString, GetModuleUserFromUserName, GetCurrentUserName,
 * ACLCheckCommandPermissions / KeyPermissions / ChannelPermissions,
 * ACLAddLogEntry, AuthenticateClientWithUser / WithACLUser,
 * DeauthenticateAndCloseClient, RedactClientCommandArgument,
 * GetClientCertificate, GetClientUserNameById and SetContextUser.
 *
 * The rules and checks are server/acl.c's (this file holds no ACL logic).
 * A RedisModuleUser wraps an AclUser: one the module created (freed with
 * it, its clients closed) or an ACL user looked up by name (FreeModuleUser
 * frees only the wrapper).
 *
 * Authentication callbacks: a client a module authenticated with a
 * callback has an entry here (client id, callback, privdata).  The
 * callback is called once, when the client's user changes next (AUTH,
 * another module authentication, Deauthenticate, its module user freed)
 * or when the client goes (ACL DELUSER of its user closes it), and the
 * entry goes, as on Redis.  acl.c's user-changed hook and the client
 * disconnection event (module_events.c calls moduleAclClientGone) feed it;
 * the event hook is kept set while entries exist.
 *
 * RedactClientCommandArgument: see moduleApplyRedactions.
 *
 * Invariants: entries are unique per client; a module's entries go when it
 * unloads (no call into unloaded code). */
#include <errno.h>
#include <string.h>

#include "core/conn.h"
#include "core/server.h"
#include "ds/alloc.h"
#include "module/module_int.h"
#include "server/acl.h"

struct RedisModuleUser {
    struct AclUser *user;
    int owned; /* created by CreateModuleUser: freed with the wrapper */
};

typedef struct AuthEntry {
    uint64_t clientId;
    RedisModuleUserChangedFunc cb;
    void *privdata;
    Module *module;
} AuthEntry;

static AuthEntry *auths;
static int nauths, capauths;

int moduleAclHasCallbacks(void) { return nauths > 0; }

/* Calls and drops the callback of client id, if any. */
static void notifyChanged(uint64_t id) {
    for (int i = 0; i < nauths; i++) {
        if (auths[i].clientId != id) continue;
        AuthEntry e = auths[i];
        auths[i] = auths[--nauths];
        if (e.cb) e.cb(id, e.privdata);
        moduleEventsHookRefresh();
        return;
    }
}

static void userChanged(Client *c) {
    if (nauths) notifyChanged(c->id);
}

void moduleAclClientGone(Client *c) {
    if (nauths) notifyChanged(c->id);
}

void moduleAclDropModule(Module *m) {
    for (int i = 0; i < nauths;) {
        if (auths[i].module == m) auths[i] = auths[--nauths];
        else i++;
    }
    moduleEventsHookRefresh();
}

static Client *clientById(uint64_t id) {
    for (Client *c = server.net.clients; c; c = c->nextClient)
        if (c->id == id && !(c->flags & CLIENT_FAKE)) return c;
    return NULL;
}

static RedisModuleUser *RM_CreateModuleUser(const char *name) {
    if (!name) return NULL;
    RedisModuleUser *u = xmalloc(sizeof(*u));
    u->user = aclModuleUserCreate(name, strlen(name));
    u->owned = 1;
    aclSetUserChangedHook(userChanged);
    return u;
}

static int RM_FreeModuleUser(RedisModuleUser *u) {
    if (!u) return REDISMODULE_ERR;
    if (u->owned) aclModuleUserFree(u->user);
    xfree(u);
    return REDISMODULE_OK;
}

static int RM_SetModuleUserACL(RedisModuleUser *u, const char *acl) {
    if (!u || !acl) return REDISMODULE_ERR;
    return aclModuleUserSetRule(u->user, acl, strlen(acl)) == 0 ? REDISMODULE_OK : REDISMODULE_ERR;
}

static int RM_SetModuleUserACLString(RedisModuleCtx *ctx, RedisModuleUser *u, const char *acl,
                                     RedisModuleString **error) {
    if (!u || !acl) return REDISMODULE_ERR;
    sds err = aclModuleUserSetRules(u->user, acl);
    if (!err) return REDISMODULE_OK;
    if (error) *error = modStringTake(ctx, err);
    else sdsFree(err);
    return REDISMODULE_ERR;
}

static RedisModuleString *RM_GetModuleUserACLString(RedisModuleUser *u) {
    if (!u) return NULL;
    return modStringTake(NULL, aclUserDescribe(u->user));
}

static RedisModuleUser *RM_GetModuleUserFromUserName(RedisModuleString *name) {
    if (!name) return NULL;
    struct AclUser *acl = aclUserByName(name->s, sdsLen(name->s));
    if (!acl) return NULL;
    RedisModuleUser *u = xmalloc(sizeof(*u));
    u->user = acl;
    u->owned = 0;
    return u;
}

static RedisModuleString *RM_GetCurrentUserName(RedisModuleCtx *ctx) {
    if (!ctx || !ctx->client) return NULL;
    return modStringNew(ctx, aclClientUserName(ctx->client), strlen(aclClientUserName(ctx->client)));
}

static int RM_ACLCheckCommandPermissions(RedisModuleUser *u, RedisModuleString **argv, int argc) {
    if (!u || !argv || argc <= 0) {
        errno = EINVAL;
        return REDISMODULE_ERR;
    }
    sds small[16];
    sds *av = argc <= 16 ? small : xmalloc(sizeof(sds) * (size_t)argc);
    for (int i = 0; i < argc; i++) av[i] = argv[i]->s;
    Command *cmd = commandLookupArgv(argc, av);
    int rc = REDISMODULE_OK;
    if (!cmd) {
        errno = ENOENT;
        rc = REDISMODULE_ERR;
    } else if (!aclUserMayRun(u->user, cmd, argc, av)) {
        errno = EACCES;
        rc = REDISMODULE_ERR;
    }
    if (av != small) xfree(av);
    return rc;
}

static int RM_ACLCheckKeyPermissions(RedisModuleUser *u, RedisModuleString *key, int flags) {
    const int allowed = REDISMODULE_CMD_KEY_ACCESS | REDISMODULE_CMD_KEY_INSERT | REDISMODULE_CMD_KEY_DELETE |
                        REDISMODULE_CMD_KEY_UPDATE;
    if (!u || !key || (flags & allowed) != flags) {
        errno = EINVAL;
        return REDISMODULE_ERR;
    }
    int read = (flags & REDISMODULE_CMD_KEY_ACCESS) != 0;
    int write = (flags & (REDISMODULE_CMD_KEY_INSERT | REDISMODULE_CMD_KEY_DELETE | REDISMODULE_CMD_KEY_UPDATE)) != 0;
    if (!aclUserMayAccessKey(u->user, key->s, sdsLen(key->s), read, write)) {
        errno = EACCES;
        return REDISMODULE_ERR;
    }
    return REDISMODULE_OK;
}

static int RM_ACLCheckChannelPermissions(RedisModuleUser *u, RedisModuleString *ch, int flags) {
    const int allowed = REDISMODULE_CMD_CHANNEL_PUBLISH | REDISMODULE_CMD_CHANNEL_SUBSCRIBE |
                        REDISMODULE_CMD_CHANNEL_UNSUBSCRIBE | REDISMODULE_CMD_CHANNEL_PATTERN;
    if (!u || !ch || (flags & allowed) != flags) {
        errno = EINVAL;
        return REDISMODULE_ERR;
    }
    if (flags & REDISMODULE_CMD_CHANNEL_UNSUBSCRIBE) return REDISMODULE_OK; /* always allowed, as on Redis */
    int pattern = (flags & REDISMODULE_CMD_CHANNEL_PATTERN) != 0;
    if (!aclUserMayAccessChannel(u->user, ch->s, sdsLen(ch->s), pattern))
        return REDISMODULE_ERR; /* errno untouched, as on Redis */
    return REDISMODULE_OK;
}

static void RM_ACLAddLogEntry(RedisModuleCtx *ctx, RedisModuleUser *u, RedisModuleString *object,
                              RedisModuleACLLogEntryReason reason) {
    if (!ctx || !u || !object) return;
    aclModuleLogAdd(ctx->client, u->user, object->s, sdsLen(object->s), (int)reason);
}

static int authenticate(RedisModuleCtx *ctx, struct AclUser *user, RedisModuleUserChangedFunc cb, void *privdata,
                        uint64_t *clientId) {
    if (!user || aclUserIsOff(user)) return REDISMODULE_ERR;
    Client *c = ctx ? ctx->client : NULL;
    if (!c || (c->flags & CLIENT_FAKE)) return REDISMODULE_ERR;
    aclSetUserChangedHook(userChanged);
    aclClientSetUser(c, user); /* a previous callback is called first */
    if (cb) {
        if (nauths == capauths) {
            capauths = capauths ? capauths * 2 : 8;
            auths = xrealloc(auths, sizeof(*auths) * (size_t)capauths);
        }
        auths[nauths].clientId = c->id;
        auths[nauths].cb = cb;
        auths[nauths].privdata = privdata;
        auths[nauths].module = ctx->module;
        nauths++;
        moduleEventsHookRefresh();
    }
    if (clientId) *clientId = c->id;
    return REDISMODULE_OK;
}

static int RM_AuthenticateClientWithUser(RedisModuleCtx *ctx, RedisModuleUser *u, RedisModuleUserChangedFunc cb,
                                         void *privdata, uint64_t *clientId) {
    return authenticate(ctx, u ? u->user : NULL, cb, privdata, clientId);
}

static int RM_AuthenticateClientWithACLUser(RedisModuleCtx *ctx, const char *name, size_t len,
                                            RedisModuleUserChangedFunc cb, void *privdata, uint64_t *clientId) {
    if (!name) return REDISMODULE_ERR;
    return authenticate(ctx, aclUserByName(name, len), cb, privdata, clientId);
}

static int RM_DeauthenticateAndCloseClient(RedisModuleCtx *ctx, uint64_t id) {
    (void)ctx;
    Client *c = clientById(id);
    if (!c) return REDISMODULE_ERR;
    aclRevokeClient(c);
    return REDISMODULE_OK;
}

/* Redaction: the argument shows as "(redacted)" in SLOWLOG and MONITOR,
 * which read the client's argv after the command: once the module's
 * command returned (its argument strings no longer borrow argv),
 * moduleApplyRedactions replaces each such argument. */
#define REDACT_MAX 64
static struct {
    Client *c;
    int pos;
} redactions[REDACT_MAX];
static int nredactions;

static int RM_RedactClientCommandArgument(RedisModuleCtx *ctx, int pos) {
    if (!ctx || !ctx->client || pos <= 0 || pos >= ctx->client->argc) return REDISMODULE_ERR;
    if (nredactions < REDACT_MAX) {
        redactions[nredactions].c = ctx->client;
        redactions[nredactions].pos = pos;
        nredactions++;
    }
    return REDISMODULE_OK;
}

void moduleApplyRedactions(Client *c) {
    for (int i = 0; i < nredactions;) {
        if (redactions[i].c != c) {
            i++;
            continue;
        }
        int pos = redactions[i].pos;
        if (pos < c->argc && c->argv[pos]) {
            sdsFree(c->argv[pos]);
            c->argv[pos] = sdsNew("(redacted)");
        }
        redactions[i] = redactions[--nredactions];
    }
}

static RedisModuleString *RM_GetClientCertificate(RedisModuleCtx *ctx, uint64_t id) {
    Client *c = clientById(id);
    if (!c || !c->conn) return NULL;
    sds pem = connTlsPeerCertPem(c->conn);
    return pem ? modStringTake(ctx, pem) : NULL;
}

static RedisModuleString *RM_GetClientUserNameById(RedisModuleCtx *ctx, uint64_t id) {
    Client *c = clientById(id);
    if (!c) {
        errno = ENOENT;
        return NULL;
    }
    const char *name = aclClientUserName(c);
    return modStringNew(ctx, name, strlen(name));
}

/* SetContextUser: the contexts with a user, a short table (contexts live
 * for one callback; moduleCtxDone drops the entry). */
#define CTX_USERS_MAX 64
static struct {
    RedisModuleCtx *ctx;
    struct AclUser *user;
} ctxUsers[CTX_USERS_MAX];
static int nctxUsers;

struct AclUser *moduleCtxUser(RedisModuleCtx *ctx) {
    for (int i = 0; i < nctxUsers; i++)
        if (ctxUsers[i].ctx == ctx) return ctxUsers[i].user;
    return NULL;
}

void moduleAclCtxDone(RedisModuleCtx *ctx) {
    for (int i = 0; i < nctxUsers; i++) {
        if (ctxUsers[i].ctx == ctx) {
            ctxUsers[i] = ctxUsers[--nctxUsers];
            return;
        }
    }
}

/* Calls with "C" on ctx are checked with user's permissions (NULL: the
 * context client's again). */
static void RM_SetContextUser(RedisModuleCtx *ctx, const RedisModuleUser *u) {
    if (!ctx) return;
    moduleAclCtxDone(ctx);
    if (!u || nctxUsers == CTX_USERS_MAX) return;
    ctxUsers[nctxUsers].ctx = ctx;
    ctxUsers[nctxUsers].user = u->user;
    nctxUsers++;
}

#define API(fn) {"RedisModule_" #fn, (void *)(uintptr_t)RM_##fn}
const ApiEntry moduleAclApi[] = {
    API(CreateModuleUser), API(FreeModuleUser), API(SetModuleUserACL), API(SetModuleUserACLString),
    API(GetModuleUserACLString), API(GetModuleUserFromUserName), API(GetCurrentUserName),
    API(ACLCheckCommandPermissions), API(ACLCheckKeyPermissions), API(ACLCheckChannelPermissions),
    API(ACLAddLogEntry), API(AuthenticateClientWithUser), API(AuthenticateClientWithACLUser),
    API(DeauthenticateAndCloseClient), API(RedactClientCommandArgument), API(GetClientCertificate),
    API(GetClientUserNameById), API(SetContextUser), {NULL, NULL}};
