/* acl_int.h -- shared between acl.c (users, rules, the check, the ACL
 * command) and acl_log.c (ACL LOG).  Not for other files. */
#ifndef CAIRN_ACL_INT_H
#define CAIRN_ACL_INT_H

#include <string.h>

#include "core/client.h"
#include "server/acl.h"

/* Check results, ordered as Redis picks which denial to report. */
enum { ACL_OK = 0, DENIED_CMD, DENIED_KEY, DENIED_AUTH, DENIED_CHANNEL };
/* Where a denied command ran (ACL LOG's context). */
enum { CTX_TOPLEVEL, CTX_MULTI, CTX_LUA, CTX_MODULE };

static inline int aclSameSds(const sds a, const sds b) {
    return sdsLen(a) == sdsLen(b) && !memcmp(a, b, sdsLen(a));
}

/* acllog-max-len (acl.c's directive). */
extern long long acllogMaxLen;
/* The hooks for clients that are not core's, NULL when none (acl.c). */
extern const AclClientHooks *aclClientHooks;

/* Records a denial (reason DENIED_*, context CTX_*) in ACL LOG.  object:
 * the command's full name, the argument at argpos (key, channel) or
 * argv[0] (auth).  The client info is real's (a script's caller). */
void aclLogAdd(Client *c, Client *real, int reason, int context, int argc, sds *argv, Command *cmd, int argpos,
               const char *username, size_t ulen);
/* ACL LOG [count | RESET]. */
void aclLogCommand(Client *c);

#endif
