/* acl.h -- users and permissions (Redis 7.0's ACL).
 *
 * Every client runs as a user: c->user, NULL meaning the `default` user
 * (so core never has to know about users).  A user has flags (on/off,
 * nopass, sanitize-payload), passwords kept only as hex SHA-256, and
 * selectors: the root one and any added with "(...)".  A command runs when
 * one selector allows the command (or its first argument), every key it
 * touches (by the key spec's access flags: read needs R, insert/update/
 * delete need W) and every channel it publishes or subscribes to.
 *
 * processCommand asks aclRefuseCommandOrReply after authentication; the
 * check costs one test for the default user while it is unrestricted (the
 * common case).  EXEC re-checks each queued command; scripts check every
 * redis.call through the script layer's hook. */
#ifndef CAIRN_ACL_H
#define CAIRN_ACL_H

#include "core/client.h"
#include "core/config.h"

struct AclUser;

/* 1 while the default user may run everything (+@all ~* &*, one selector):
 * then its clients skip the check. */
extern int aclDefaultUnrestricted;

/* Creates the default user, applies requirepass, loads the `user` lines
 * of the config file or the aclfile; exits with Redis's message when they
 * are invalid or both are given.  Wires the script and config hooks. */
void aclInit(void);
/* Commands were added or removed at run time (a module's): re-index them
 * (ids below 1024, the caller checks). */
void aclCommandsChanged(void);
/* A command went: its id's permission (and first arguments) is cleared in
 * every selector, so that a command given the id later starts denied
 * (allowed only by +@all's flag, as a new command on Redis). */
void aclCommandRemoved(unsigned id);

/* The channels of a module command created with "getchannels-api"
 * (installed by src/module): appends each channel's argv index and flags
 * (bit 0 pattern, 1 publish, 2 subscribe, 3 unsubscribe, as the module
 * API's REDISMODULE_CMD_CHANNEL_*) to out; -1 when cmd has no such API.
 * The check applies to publish and subscribe channels, as Redis 7.0. */
extern int (*aclModuleChannels)(Command *cmd, int argc, sds *argv, KeyResult *out);

int aclRefuseCommandSlow(Client *c, Command *cmd);
/* processCommand's check: 0 when c's user may run cmd with c->argv, else
 * -1 after logging the denial in ACL LOG and refusing the command. */
static inline int aclRefuseCommandOrReply(Client *c, Command *cmd) {
    if (!c->user && aclDefaultUnrestricted) return 0;
    return aclRefuseCommandSlow(c, cmd);
}

/* EXEC's re-check of a queued command: 0 when allowed, else -1 after
 * logging it (context multi) and replying Redis's "ACLs rules changed"
 * error as the command's reply. */
int aclRefuseQueuedOrReply(Client *c, Command *cmd, int argc, sds *argv);
/* RedisModule_Call with "C": NULL when the calling client's user may run
 * cmd with argv, else Redis's error text after logging the denial in ACL
 * LOG (context "module"). */
const char *aclModuleCheck(Client *caller, Command *cmd, int argc, sds *argv);
/* The same with the permissions of user `as` (RedisModule_SetContextUser;
 * NULL: the caller's); the log entry still names the caller's user, and
 * there is none without a caller. */
struct AclUser;
const char *aclModuleCheckAs(Client *caller, struct AclUser *as, Command *cmd, int argc, sds *argv);

/* AUTH and HELLO AUTH: 0 and c authenticated as user, else -1 after
 * logging the failure (the caller replies WRONGPASS). */
int aclAuthenticate(Client *c, const sds user, const sds pass);
/* Authenticates c as the user named name without a password (the HTTP
 * gateway's http-user): 0, or -1 when there is no such user or it is off
 * (c then is the default user, unauthenticated unless it needs no
 * password). */
int aclAuthenticateAs(Client *c, const char *name, size_t len);
/* Whether the default user has no password (AUTH <pass> refuses then). */
int aclDefaultNopass(void);
/* Back to the default user (RESET). */
void aclResetClientUser(Client *c);

/* The name of c's user (CLIENT LIST user=). */
const char *aclClientUserName(const Client *c);
/* The user named name, NULL if none (CLIENT KILL USER). */
struct AclUser *aclUserByName(const char *name, size_t len);
/* c's user, the default user for NULL. */
struct AclUser *aclClientUser(const Client *c);

extern Command aclCommands[];

/* Clients that are not core's (Sentinel mode's, server/sentinel_acl.c,
 * which runs the ACL over fake Clients standing for its own): ACL LOG's
 * client-info of one; closing the clients of a user that DELUSER or ACL
 * LOAD removed; and, after SETUSER took channels from u, closing u's
 * clients with a subscription `denied` (called with arg) answers 1 for;
 * the current client after its reply, as done for core's clients.  NULL
 * members: nothing more than core's. */
typedef struct AclClientHooks {
    sds (*info)(sds out, const Client *c);
    void (*killUser)(struct AclUser *u, Client *current);
    void (*killSubscribers)(const struct AclUser *u, int (*denied)(const char *name, size_t len, int isPattern,
                                                                  void *arg),
                            void *arg, Client *current);
} AclClientHooks;
void aclSetClientHooks(const AclClientHooks *hooks);

/* The `user` config lines (parse one; the lines a rewrite writes), for
 * Sentinel mode, which reads and rewrites its config file itself. */
const ConfigLineKind *aclUserLineKind(void);

/* The module layer's access (src/module/module_acl.c).  Module users are
 * not in the user list (ACL LIST does not show them).
 *   aclModuleUserCreate     an unlinked user: off, no permissions;
 *   aclModuleUserFree       frees it; its clients are closed (the current
 *                           one after its reply), as Redis does;
 *   aclModuleUserSetRule    one rule (an ACL SETUSER word): 0 or -1;
 *   aclModuleUserSetRules   the rules of a string (words, quoted as on a
 *                           config line; unbalanced quotes: no rules):
 *                           NULL, or the error ACL SETUSER would give
 *                           (nothing changed then);
 *   aclUserDescribe         the rules as ACL LIST shows them (an sds);
 *   aclUserMayRun / MayAccessKey / MayAccessChannel: the checks, with
 *                           every selector (1 allowed);
 *   aclModuleLogAdd         an ACL LOG entry in context "module" for
 *                           client c: reason 0 auth, 1 command, 2 key,
 *                           3 channel, object as given;
 *   aclClientSetUser        c runs as u from now on (authenticated);
 *   aclRevokeClient         c goes back to the default user,
 *                           unauthenticated, and is closed.
 * The user-changed hook is called with a client before its user changes
 * (AUTH, HELLO AUTH, the two above, its module user freed). */
typedef void AclUserChangedHook(Client *c);
void aclSetUserChangedHook(AclUserChangedHook *fn);
struct AclUser *aclModuleUserCreate(const char *name, size_t len);
void aclModuleUserFree(struct AclUser *u);
int aclModuleUserSetRule(struct AclUser *u, const char *op, size_t len);
sds aclModuleUserSetRules(struct AclUser *u, const char *rules);
sds aclUserDescribe(const struct AclUser *u);
const char *aclUserName(const struct AclUser *u);
int aclUserIsOff(const struct AclUser *u);
int aclUserMayRun(struct AclUser *u, Command *cmd, int argc, sds *argv);
int aclUserMayAccessKey(struct AclUser *u, const char *key, size_t len, int read, int write);
int aclUserMayAccessChannel(struct AclUser *u, const char *ch, size_t len, int isPattern);
void aclModuleLogAdd(Client *c, const struct AclUser *u, const char *object, size_t len, int reason);
void aclClientSetUser(Client *c, struct AclUser *u);
void aclRevokeClient(Client *c);

/* Registers the ACL's directives (CONFIG GET/SET/REWRITE, the config
 * file).  Called once from main.c, before the defaults are applied. */
void aclRegisterConfig(void);

#endif
