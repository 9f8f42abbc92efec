/* acl.c -- test module: module users and authentication (CreateModuleUser,
 * FreeModuleUser, SetModuleUserACL, SetModuleUserACLString,
 * GetModuleUserACLString, GetModuleUserFromUserName, GetCurrentUserName,
 * AuthenticateClientWithUser / WithACLUser with their callback,
 * DeauthenticateAndCloseClient, GetClientUserNameById), the ACL checks
 * (ACLCheckCommandPermissions, KeyPermissions, ChannelPermissions),
 * ACLAddLogEntry, RedactClientCommandArgument and GetClientCertificate.
 *
 *   macl.create name          the module user (one at a time)
 *   macl.set rule...          SetModuleUserACL per rule: OK/ERR each
 *   macl.setstr rules         SetModuleUserACLString: OK or its error
 *   macl.getstr               GetModuleUserACLString
 *   macl.free                 FreeModuleUser
 *   macl.auth [cb]            authenticates as the module user (cb: with
 *                             the callback); replies OK or ERR
 *   macl.authacl name [cb]    the same with the ACL user name
 *   macl.events               the callbacks seen ("changed"), then cleared
 *   macl.deauth id            DeauthenticateAndCloseClient
 *   macl.whoami               GetCurrentUserName
 *   macl.nameof id            GetClientUserNameById (or null)
 *   macl.checkcmd who cmd...  who: "module" or an ACL user name; OK, or
 *                             "DENIED <errno>"
 *   macl.checkkey who flags key     flags: any of R I D U, or "-" (none),
 *                                   or "X" (an invalid flag)
 *   macl.checkchan who flags ch     flags: any of P(attern) U(nsub) S P
 *   macl.log who reason object      ACLAddLogEntry (reason 0..3)
 *   macl.redact pos...        RedactClientCommandArgument each: 0/1
 *   macl.cert                 GetClientCertificate of the caller (null
 *                             without TLS)
 *   macl.callas who cmd arg...  SetContextUser(who), then Call with "CE" */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "redismodule.h"

static RedisModuleUser *mu;
#define EV_MAX 64
static char evs[EV_MAX][64];
static int nevs;

static void changed(uint64_t id, void *privdata) {
    (void)id;
    if (nevs < EV_MAX) {
        strncpy(evs[nevs], privdata ? (const char *)privdata : "?", sizeof(evs[0]) - 1);
        nevs++;
    }
}

static const char *arg(RedisModuleString *s) { return RedisModule_StringPtrLen(s, NULL); }

static int errnoReply(RedisModuleCtx *ctx) {
    const char *e = errno == ENOENT ? "DENIED ENOENT" : errno == EACCES ? "DENIED EACCES"
                    : errno == EINVAL ? "DENIED EINVAL" : "DENIED OTHER";
    return RedisModule_ReplyWithSimpleString(ctx, e);
}

static int cmdCreate(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    if (argc != 2) return RedisModule_WrongArity(ctx);
    if (mu) RedisModule_FreeModuleUser(mu);
    mu = RedisModule_CreateModuleUser(arg(argv[1]));
    return RedisModule_ReplyWithSimpleString(ctx, mu ? "OK" : "ERR");
}

static int cmdSet(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    if (!mu) return RedisModule_ReplyWithError(ctx, "ERR no user");
    RedisModule_ReplyWithArray(ctx, argc - 1);
    for (int i = 1; i < argc; i++)
        RedisModule_ReplyWithSimpleString(ctx, RedisModule_SetModuleUserACL(mu, arg(argv[i])) == REDISMODULE_OK ? "OK"
                                                                                                          : "ERR");
    return REDISMODULE_OK;
}

static int cmdSetStr(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    if (argc != 2) return RedisModule_WrongArity(ctx);
    if (!mu) return RedisModule_ReplyWithError(ctx, "ERR no user");
    RedisModuleString *err = NULL;
    if (RedisModule_SetModuleUserACLString(ctx, mu, arg(argv[1]), &err) == REDISMODULE_OK)
        return RedisModule_ReplyWithSimpleString(ctx, "OK");
    RedisModule_ReplyWithString(ctx, err);
    RedisModule_FreeString(ctx, err);
    return REDISMODULE_OK;
}

static int cmdGetStr(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    (void)argv, (void)argc;
    if (!mu) return RedisModule_ReplyWithError(ctx, "ERR no user");
    RedisModuleString *s = RedisModule_GetModuleUserACLString(mu);
    RedisModule_ReplyWithString(ctx, s);
    RedisModule_FreeString(NULL, s);
    return REDISMODULE_OK;
}

static int cmdFree(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    (void)argv, (void)argc;
    if (!mu) return RedisModule_ReplyWithError(ctx, "ERR no user");
    RedisModule_FreeModuleUser(mu);
    mu = NULL;
    return RedisModule_ReplyWithSimpleString(ctx, "OK");
}

static int cmdAuth(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    (void)argv;
    uint64_t id = 0;
    int rc = RedisModule_AuthenticateClientWithUser(ctx, mu, argc > 1 ? changed : NULL, "changed:module", &id);
    if (rc == REDISMODULE_OK && id != RedisModule_GetClientId(ctx)) return RedisModule_ReplyWithError(ctx, "ERR id");
    return RedisModule_ReplyWithSimpleString(ctx, rc == REDISMODULE_OK ? "OK" : "ERR");
}

static int cmdAuthAcl(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    if (argc < 2) return RedisModule_WrongArity(ctx);
    size_t len;
    const char *name = RedisModule_StringPtrLen(argv[1], &len);
    int rc = RedisModule_AuthenticateClientWithACLUser(ctx, name, len, argc > 2 ? changed : NULL, "changed:acl", NULL);
    return RedisModule_ReplyWithSimpleString(ctx, rc == REDISMODULE_OK ? "OK" : "ERR");
}

static int cmdEvents(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    (void)argv, (void)argc;
    RedisModule_ReplyWithArray(ctx, nevs);
    for (int i = 0; i < nevs; i++) RedisModule_ReplyWithSimpleString(ctx, evs[i]);
    nevs = 0;
    return REDISMODULE_OK;
}

static int cmdDeauth(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    long long id;
    if (argc != 2 || RedisModule_StringToLongLong(argv[1], &id) != REDISMODULE_OK)
        return RedisModule_WrongArity(ctx);
    int rc = RedisModule_DeauthenticateAndCloseClient(ctx, (uint64_t)id);
    return RedisModule_ReplyWithSimpleString(ctx, rc == REDISMODULE_OK ? "OK" : "ERR");
}

static int cmdWhoami(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    (void)argv, (void)argc;
    RedisModule_AutoMemory(ctx);
    return RedisModule_ReplyWithString(ctx, RedisModule_GetCurrentUserName(ctx));
}

static int cmdNameOf(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    long long id;
    if (argc != 2 || RedisModule_StringToLongLong(argv[1], &id) != REDISMODULE_OK)
        return RedisModule_WrongArity(ctx);
    RedisModuleString *s = RedisModule_GetClientUserNameById(ctx, (uint64_t)id);
    if (!s) return errnoReply(ctx);
    RedisModule_ReplyWithString(ctx, s);
    RedisModule_FreeString(ctx, s);
    return REDISMODULE_OK;
}

/* The user named: the module user, or an ACL user's wrapper (freed by
 * the caller when *tmp). */
static RedisModuleUser *who(RedisModuleString *name, int *tmp) {
    *tmp = 0;
    if (!strcmp(arg(name), "module")) return mu;
    *tmp = 1;
    return RedisModule_GetModuleUserFromUserName(name);
}

static int cmdCheckCmd(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    if (argc < 3) return RedisModule_WrongArity(ctx);
    int tmp;
    RedisModuleUser *u = who(argv[1], &tmp);
    if (!u) return RedisModule_ReplyWithError(ctx, "ERR no such user");
    int rc = RedisModule_ACLCheckCommandPermissions(u, argv + 2, argc - 2);
    if (rc == REDISMODULE_OK) RedisModule_ReplyWithSimpleString(ctx, "OK");
    else errnoReply(ctx);
    if (tmp) RedisModule_FreeModuleUser(u);
    return REDISMODULE_OK;
}

static int cmdCheckKey(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    if (argc != 4) return RedisModule_WrongArity(ctx);
    int tmp;
    RedisModuleUser *u = who(argv[1], &tmp);
    if (!u) return RedisModule_ReplyWithError(ctx, "ERR no such user");
    int flags = 0;
    for (const char *p = arg(argv[2]); *p; p++) {
        if (*p == 'R') flags |= REDISMODULE_CMD_KEY_ACCESS;
        if (*p == 'I') flags |= REDISMODULE_CMD_KEY_INSERT;
        if (*p == 'D') flags |= REDISMODULE_CMD_KEY_DELETE;
        if (*p == 'U') flags |= REDISMODULE_CMD_KEY_UPDATE;
        if (*p == 'X') flags |= REDISMODULE_CMD_KEY_RW;
    }
    errno = 0;
    int rc = RedisModule_ACLCheckKeyPermissions(u, argv[3], flags);
    if (rc == REDISMODULE_OK) RedisModule_ReplyWithSimpleString(ctx, "OK");
    else errnoReply(ctx);
    if (tmp) RedisModule_FreeModuleUser(u);
    return REDISMODULE_OK;
}

static int cmdCheckChan(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    if (argc != 4) return RedisModule_WrongArity(ctx);
    int tmp;
    RedisModuleUser *u = who(argv[1], &tmp);
    if (!u) return RedisModule_ReplyWithError(ctx, "ERR no such user");
    int flags = 0;
    for (const char *p = arg(argv[2]); *p; p++) {
        if (*p == 'p') flags |= REDISMODULE_CMD_CHANNEL_PATTERN;
        if (*p == 'P') flags |= REDISMODULE_CMD_CHANNEL_PUBLISH;
        if (*p == 'S') flags |= REDISMODULE_CMD_CHANNEL_SUBSCRIBE;
        if (*p == 'U') flags |= REDISMODULE_CMD_CHANNEL_UNSUBSCRIBE;
        if (*p == 'X') flags |= 1 << 8;
    }
    errno = 0;
    int rc = RedisModule_ACLCheckChannelPermissions(u, argv[3], flags);
    if (rc == REDISMODULE_OK) RedisModule_ReplyWithSimpleString(ctx, "OK");
    else errnoReply(ctx);
    if (tmp) RedisModule_FreeModuleUser(u);
    return REDISMODULE_OK;
}

static int cmdLog(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    long long reason;
    if (argc != 4 || RedisModule_StringToLongLong(argv[2], &reason) != REDISMODULE_OK)
        return RedisModule_WrongArity(ctx);
    int tmp;
    RedisModuleUser *u = who(argv[1], &tmp);
    if (!u) return RedisModule_ReplyWithError(ctx, "ERR no such user");
    RedisModule_ACLAddLogEntry(ctx, u, argv[3], (RedisModuleACLLogEntryReason)reason);
    if (tmp) RedisModule_FreeModuleUser(u);
    return RedisModule_ReplyWithSimpleString(ctx, "OK");
}

static int cmdRedact(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    RedisModule_ReplyWithArray(ctx, argc - 1);
    for (int i = 1; i < argc; i++) {
        long long pos = 0;
        RedisModule_StringToLongLong(argv[i], &pos);
        RedisModule_ReplyWithLongLong(ctx, RedisModule_RedactClientCommandArgument(ctx, (int)pos) == REDISMODULE_OK);
    }
    return REDISMODULE_OK;
}

static int cmdCallAs(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    if (argc < 3) return RedisModule_WrongArity(ctx);
    int tmp;
    RedisModuleUser *u = who(argv[1], &tmp);
    if (!u) return RedisModule_ReplyWithError(ctx, "ERR no such user");
    RedisModule_SetContextUser(ctx, u);
    RedisModuleCallReply *r = RedisModule_Call(ctx, RedisModule_StringPtrLen(argv[2], NULL), "CEv", argv + 3,
                                               (size_t)(argc - 3));
    RedisModule_SetContextUser(ctx, NULL);
    if (tmp) RedisModule_FreeModuleUser(u);
    if (!r) return errnoReply(ctx);
    RedisModule_ReplyWithCallReply(ctx, r);
    RedisModule_FreeCallReply(r);
    return REDISMODULE_OK;
}

static int cmdCert(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    (void)argv, (void)argc;
    RedisModuleString *s = RedisModule_GetClientCertificate(ctx, RedisModule_GetClientId(ctx));
    if (!s) return RedisModule_ReplyWithNull(ctx);
    RedisModule_ReplyWithString(ctx, s);
    RedisModule_FreeString(ctx, s);
    return REDISMODULE_OK;
}

int RedisModule_OnLoad(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    (void)argv, (void)argc;
    if (RedisModule_Init(ctx, "macl", 1, REDISMODULE_APIVER_1) == REDISMODULE_ERR) return REDISMODULE_ERR;
    static const struct {
        const char *name;
        RedisModuleCmdFunc fn;
        const char *flags;
    } cmds[] = {{"macl.create", cmdCreate, ""},       {"macl.set", cmdSet, ""},
                {"macl.setstr", cmdSetStr, ""},       {"macl.getstr", cmdGetStr, ""},
                {"macl.free", cmdFree, ""},           {"macl.auth", cmdAuth, "no-auth"},
                {"macl.authacl", cmdAuthAcl, "no-auth"}, {"macl.events", cmdEvents, ""},
                {"macl.deauth", cmdDeauth, ""},       {"macl.whoami", cmdWhoami, ""},
                {"macl.nameof", cmdNameOf, ""},       {"macl.checkcmd", cmdCheckCmd, ""},
                {"macl.checkkey", cmdCheckKey, ""},   {"macl.checkchan", cmdCheckChan, ""},
                {"macl.log", cmdLog, ""},             {"macl.redact", cmdRedact, ""},
                {"macl.cert", cmdCert, ""},           {"macl.callas", cmdCallAs, ""}};
    for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
        if (RedisModule_CreateCommand(ctx, cmds[i].name, cmds[i].fn, cmds[i].flags, 0, 0, 0) == REDISMODULE_ERR)
            return REDISMODULE_ERR;
    return REDISMODULE_OK;
}
