/* acl.c -- users, their rules, the permission check and the ACL command
 * (Redis 7.0.15's ACL; ACL LOG's entries are acl_log.c's).
 *
 * Users live in `users`, an array sorted by name (bytes, shorter first on
 * a common prefix: the order ACL USERS/LIST print).  The default user is
 * always users' entry named "default" and is never freed; every other
 * user is freed only by DELUSER or ACL LOAD, which first move its clients
 * back to the default user, unauthenticated, and close them.  SETUSER
 * stages the rules on a copy and swaps the contents in, so a user object
 * (and the clients pointing at it) survives every change.
 *
 * A selector's command permissions are a bitmap over command ids (parents
 * and subcommands each have one), a `future` bit (set by +@all: commands
 * added later would be allowed, which is how Redis decides between
 * "+@all ..." and "-@all ..." when describing), and per command the first
 * arguments allowed when the command's bit is clear (+select|0).  Rules
 * are not kept as text: ACL LIST rebuilds them from the bitmap as Redis
 * does (the categories that fit best, then single commands), so the same
 * permissions print the same rules. */
#include "server/acl.h"
#include "server/acl_int.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "core/config.h"
#include "core/dispatch.h"
#include "core/log.h"
#include "core/server.h"
#include "ds/alloc.h"
#include "ds/glob.h"
#include "ds/globset.h"
#include "ds/sha256.h"
#include "ds/util.h"
#include "script/script.h"
#include "server/pubsub.h"

/* requirepass (the default user's password: every byte kept, NULL when
 * unset), aclfile (NULL when unset), acl-pubsub-default (new users: 1
 * resetchannels, 0 allchannels) and acllog-max-len: the directives at the
 * end of this file. */
static sds requirepass;
static char *aclfile;
static int aclPubsubDefault;
long long acllogMaxLen;

/* A config file's `user` line: argv[0] is the name, then its rules; where
 * it was read (line number in its file, the line's text) for the errors
 * aclInit reports.  Kept in order by parseUserLine (end of this file). */
typedef struct ConfigUserLine {
    sds *argv;
    int argc;
    int linenum;
    sds line;
} ConfigUserLine;
static ConfigUserLine *configUsers;
static int configUserCount;

#define ACL_MAX_IDS 1024 /* command ids a bitmap holds; checked at start-up */
#define ACL_WORDS (ACL_MAX_IDS / 64)
#define HASH_LEN 64      /* hex SHA-256 */

/* Selector flags. */
#define SEL_ROOT (1 << 0)
#define SEL_ALLKEYS (1 << 1)
#define SEL_ALLCOMMANDS (1 << 2)
#define SEL_ALLCHANNELS (1 << 3)

/* User flags, in the order ACL LIST and GETUSER print them. */
#define USER_ON (1 << 0)
#define USER_OFF (1 << 1)
#define USER_NOPASS (1 << 2)
#define USER_SKIP_SANITIZE (1 << 3)
#define USER_SANITIZE (1 << 4)
static const struct {
    const char *name;
    int flag;
} userFlagNames[] = {{"on", USER_ON},
                     {"off", USER_OFF},
                     {"nopass", USER_NOPASS},
                     {"skip-sanitize-payload", USER_SKIP_SANITIZE},
                     {"sanitize-payload", USER_SANITIZE}};

#define PERM_R 1
#define PERM_W 2
#define PERM_ALL 3


/* Why a rule was refused (Redis's errno codes, by their texts). */
enum { RULE_OK = 0, RULE_UNKNOWN, RULE_SYNTAX, RULE_KEYS_AFTER_ALL, RULE_CHANNELS_AFTER_ALL, RULE_NO_SUCH_PASS,
       RULE_BAD_HASH, RULE_FIRSTARG_OF_SUB };

static const char *categoryNames[] = {"keyspace", "read", "write", "set", "sortedset", "list", "hash",
                                      "string", "bitmap", "hyperloglog", "geo", "stream", "pubsub", "admin",
                                      "fast", "slow", "blocking", "dangerous", "connection", "transaction",
                                      "scripting"};
#define CATEGORY_COUNT (int)(sizeof(categoryNames) / sizeof(categoryNames[0]))

typedef struct KeyPattern {
    sds pat;
    int perm;          /* PERM_* */
} KeyPattern;

typedef struct Selector {
    int flags;                    /* SEL_* */
    int future;                   /* +@all's reserved bit */
    uint64_t bits[ACL_WORDS];     /* allowed command ids */
    sds **firstArgs;              /* NULL, or per id NULL / a NULL-terminated array */
    KeyPattern *pats;  /* in the order added (ACL LIST prints them so) */
    int npats;
    GlobSet *keySet;   /* pats compiled for the check; NULL until first used after a change */
    sds *chans;
    int nchans;
} Selector;

typedef struct AclUser {
    sds name;
    int flags;          /* USER_* */
    sds *passes;        /* hex SHA-256 of each password, in the order added */
    int npasses;
    Selector **sels;    /* sels[0] is the root selector */
    int nsels;
    int unrestricted;   /* enabled, one selector, all commands, keys and channels */
    /* The check's quick table (see quickTableBuild), built from sels[0]
     * when it is the only selector, with its compiled keys; NULL until
     * built.  Every change to the user's rules passes userSetInner or
     * userClearContents, which drop it. */
    unsigned char *quick;
    const GlobSet *quickKeys;
} AclUser;

int aclDefaultUnrestricted = 1;
static AclUser **users;
static int userCount;
static AclUser *defaultUser;
static unsigned idCount;        /* command ids in use */
static Command **byId;          /* the command of each id */
/* Channel arguments: which commands publish or subscribe. */
enum { CHAN_NONE, CHAN_FIRST, CHAN_ALL, CHAN_ALL_PATTERNS };

/* How the check finds a command's keys, per command id, set at start-up
 * from the key specs.  PLAN_FIXED: every key spec takes keys from a fixed
 * index up to a fixed offset from it (or from argc), with fixed flags, so
 * the check reads the positions straight from argv; it gives commandKeys's
 * answer whenever those ranges fit argv.  PLAN_FIXED_MAX: the same, but the
 * flags vary with the arguments (SET ... GET, BITFIELD), so a key allowed
 * with every permission is allowed, and only a refusal takes the generic
 * walk.  PLAN_GENERIC: commandKeys.  PLAN_NONE: no keys. */
enum { PLAN_NONE, PLAN_FIXED, PLAN_FIXED_MAX, PLAN_GENERIC };
#define PLAN_SPECS 4
typedef struct KeyPlan {
    unsigned char kind;   /* PLAN_* */
    unsigned char chan;   /* CHAN_*: the channel arguments */
    unsigned char nspecs; /* PLAN_FIXED*: key specs */
    unsigned char quickPos; /* PLAN_FIXED* with one key, at this argv index, and no channels; else 0 */
    struct {
        short first;      /* argv index of the first key */
        short last;       /* >= 0: the last key is first + last; < 0: argc + last */
        short step;
        unsigned char need; /* PERM_* */
    } spec[PLAN_SPECS];
} KeyPlan;
static KeyPlan *keyPlans; /* per id */
const AclClientHooks *aclClientHooks; /* NULL: core's clients only */

void aclSetClientHooks(const AclClientHooks *hooks) { aclClientHooks = hooks; }
static Command *execCommandEntry; /* EXEC, for the log's client info */
static AclUserChangedHook *userChangedHook; /* the module layer's (auth callbacks) */

/* ------------------------------------------------------------------------ */
/* Selectors                                                                 */
/* ------------------------------------------------------------------------ */

static Selector *selectorCreate(int flags) {
    Selector *s = xcalloc(sizeof(*s));
    s->flags = flags;
    return s;
}

static void resetFirstArgsFor(Selector *s, unsigned id) {
    if (!s->firstArgs || !s->firstArgs[id]) return;
    for (sds *p = s->firstArgs[id]; *p; p++) sdsFree(*p);
    xfree(s->firstArgs[id]);
    s->firstArgs[id] = NULL;
}

static void resetFirstArgs(Selector *s) {
    if (!s->firstArgs) return;
    for (unsigned i = 0; i < idCount; i++) resetFirstArgsFor(s, i);
    xfree(s->firstArgs);
    s->firstArgs = NULL;
}

/* The key patterns changed: the check compiles them again when next used. */
static void keysChanged(Selector *s) {
    globSetFree(s->keySet);
    s->keySet = NULL;
}

static void resetKeys(Selector *s) {
    for (int i = 0; i < s->npats; i++) sdsFree(s->pats[i].pat);
    xfree(s->pats);
    s->pats = NULL;
    s->npats = 0;
    keysChanged(s);
}

static void resetChannels(Selector *s) {
    for (int i = 0; i < s->nchans; i++) sdsFree(s->chans[i]);
    xfree(s->chans);
    s->chans = NULL;
    s->nchans = 0;
}

static void selectorFree(Selector *s) {
    if (!s) return;
    resetFirstArgs(s);
    resetKeys(s);
    resetChannels(s);
    xfree(s);
}

static Selector *selectorDup(const Selector *src) {
    Selector *s = selectorCreate(src->flags);
    s->future = src->future;
    memcpy(s->bits, src->bits, sizeof(s->bits));
    if (src->firstArgs) {
        s->firstArgs = xcalloc(sizeof(sds *) * ACL_MAX_IDS);
        for (unsigned i = 0; i < idCount; i++) {
            if (!src->firstArgs[i]) continue;
            int n = 0;
            while (src->firstArgs[i][n]) n++;
            s->firstArgs[i] = xmalloc(sizeof(sds) * (size_t)(n + 1));
            for (int j = 0; j < n; j++) s->firstArgs[i][j] = sdsDup(src->firstArgs[i][j]);
            s->firstArgs[i][n] = NULL;
        }
    }
    if (src->npats) {
        s->pats = xmalloc(sizeof(KeyPattern) * (size_t)src->npats);
        for (int i = 0; i < src->npats; i++) {
            s->pats[i] = src->pats[i];
            s->pats[i].pat = sdsDup(src->pats[i].pat);
        }
        s->npats = src->npats;
    }
    if (src->nchans) {
        s->chans = xmalloc(sizeof(sds) * (size_t)src->nchans);
        for (int i = 0; i < src->nchans; i++) s->chans[i] = sdsDup(src->chans[i]);
        s->nchans = src->nchans;
    }
    return s;
}

static int getBit(const Selector *s, unsigned id) { return (s->bits[id / 64] >> (id % 64)) & 1; }

static void setBit(Selector *s, unsigned id, int on) {
    if (on) {
        s->bits[id / 64] |= 1ULL << (id % 64);
    } else {
        s->bits[id / 64] &= ~(1ULL << (id % 64));
        s->flags &= ~SEL_ALLCOMMANDS;
    }
}

/* A command and all its subcommands on or off; its first args go. */
static void changePerm(Selector *s, Command *cmd, int on) {
    setBit(s, cmd->id, on);
    resetFirstArgsFor(s, cmd->id);
    for (Command *sub = cmd->subcommands; sub && sub->name; sub++) setBit(s, sub->id, on);
}

static int categoryIndex(const char *name) {
    for (int i = 0; i < CATEGORY_COUNT; i++)
        if (!strcasecmp(name, categoryNames[i])) return i;
    return -1;
}

static void setCategory(Selector *s, int cat, int on) {
    uint64_t flag = 1ULL << cat;
    unsigned cursor = 0;
    for (Command *cmd; (cmd = commandIterate(&cursor));) {
        if (cmd->spec->acl & flag) changePerm(s, cmd, on);
        for (Command *sub = cmd->subcommands; sub && sub->name; sub++)
            if (sub->spec->acl & flag) changePerm(s, sub, on);
    }
}

static void countCategory(const Selector *s, int cat, unsigned *on, unsigned *off) {
    uint64_t flag = 1ULL << cat;
    unsigned cursor = 0;
    *on = *off = 0;
    for (Command *cmd; (cmd = commandIterate(&cursor));) {
        if (cmd->spec->acl & flag) getBit(s, cmd->id) ? (*on)++ : (*off)++;
        for (Command *sub = cmd->subcommands; sub && sub->name; sub++)
            if (sub->spec->acl & flag) getBit(s, sub->id) ? (*on)++ : (*off)++;
    }
}

static void addFirstArg(Selector *s, unsigned id, const char *arg, size_t len) {
    if (!s->firstArgs) s->firstArgs = xcalloc(sizeof(sds *) * ACL_MAX_IDS);
    int n = 0;
    if (s->firstArgs[id]) {
        for (; s->firstArgs[id][n]; n++)
            if (sdsLen(s->firstArgs[id][n]) == len && !strncasecmp(s->firstArgs[id][n], arg, len)) return;
    }
    s->firstArgs[id] = xrealloc(s->firstArgs[id], sizeof(sds) * (size_t)(n + 2));
    s->firstArgs[id][n] = sdsNewLen(arg, len);
    sdsToLower(s->firstArgs[id][n]);
    s->firstArgs[id][n + 1] = NULL;
}

static int addKeyPattern(Selector *s, const char *op, size_t len) {
    if (s->flags & SEL_ALLKEYS) return RULE_KEYS_AFTER_ALL;
    int perm = 0;
    size_t off = 1;
    if (op[0] == '%') {
        for (; off < len; off++) {
            char ch = op[off];
            if ((ch == 'R' || ch == 'r') && !(perm & PERM_R)) perm |= PERM_R;
            else if ((ch == 'W' || ch == 'w') && !(perm & PERM_W)) perm |= PERM_W;
            else if (ch == '~') {
                off++;
                break;
            } else return RULE_SYNTAX;
        }
        if (!perm) return RULE_SYNTAX;
    } else {
        perm = PERM_ALL;
    }
    for (int i = 0; i < s->npats; i++) {
        if (sdsLen(s->pats[i].pat) == len - off && !memcmp(s->pats[i].pat, op + off, len - off)) {
            s->pats[i].perm |= perm;
            keysChanged(s);
            return RULE_OK;
        }
    }
    s->pats = xrealloc(s->pats, sizeof(KeyPattern) * (size_t)(s->npats + 1));
    s->pats[s->npats].pat = sdsNewLen(op + off, len - off);
    s->pats[s->npats++].perm = perm;
    keysChanged(s);
    return RULE_OK;
}

static int addChannel(Selector *s, const char *op, size_t len) {
    if (s->flags & SEL_ALLCHANNELS) return RULE_CHANNELS_AFTER_ALL;
    for (int i = 0; i < s->nchans; i++)
        if (sdsLen(s->chans[i]) == len - 1 && !memcmp(s->chans[i], op + 1, len - 1)) return RULE_OK;
    s->chans = xrealloc(s->chans, sizeof(sds) * (size_t)(s->nchans + 1));
    s->chans[s->nchans++] = sdsNewLen(op + 1, len - 1);
    return RULE_OK;
}

/* +cmd, +cmd|sub (a subcommand, or a first argument of a command without
 * subcommands), -cmd, -cmd|sub. */
static int commandRule(Selector *s, const char *op, size_t len) {
    int on = op[0] == '+';
    const char *name = op + 1;
    size_t nlen = len - 1;
    const char *bar = NULL;
    for (size_t i = nlen; i-- > 0;)
        if (name[i] == '|') {
            bar = name + i;
            break;
        }
    if (!bar || !on) {
        Command *cmd = commandLookupFullName(name, nlen);
        if (!cmd) return RULE_UNKNOWN;
        changePerm(s, cmd, on);
        return RULE_OK;
    }
    Command *cmd = commandLookupFullName(name, (size_t)(bar - name));
    if (!cmd) return RULE_UNKNOWN;
    if (cmd->parent) return RULE_FIRSTARG_OF_SUB;
    const char *sub = bar + 1;
    size_t sublen = nlen - (size_t)(sub - name);
    if (sublen == 0) return RULE_SYNTAX;
    if (cmd->subcommands) {
        Command *sc = commandLookupSub(cmd, sub, sublen);
        if (!sc) return RULE_UNKNOWN;
        changePerm(s, sc, 1);
    } else {
        serverLog(LL_WARNING,
                  "Deprecation warning: Allowing a first arg of an otherwise blocked command is a misuse of ACL "
                  "and may get disabled in the future (offender: %.*s)",
                  (int)len, op);
        addFirstArg(s, cmd->id, sub, sublen);
    }
    return RULE_OK;
}

static int selectorSet(Selector *s, const char *op, size_t len) {
    if (!strcasecmp(op, "allkeys") || !strcmp(op, "~*")) {
        s->flags |= SEL_ALLKEYS;
        resetKeys(s);
    } else if (!strcasecmp(op, "resetkeys")) {
        s->flags &= ~SEL_ALLKEYS;
        resetKeys(s);
    } else if (!strcasecmp(op, "allchannels") || !strcmp(op, "&*")) {
        s->flags |= SEL_ALLCHANNELS;
        resetChannels(s);
    } else if (!strcasecmp(op, "resetchannels")) {
        s->flags &= ~SEL_ALLCHANNELS;
        resetChannels(s);
    } else if (!strcasecmp(op, "allcommands") || !strcasecmp(op, "+@all")) {
        s->flags |= SEL_ALLCOMMANDS;
        s->future = 1;
        memset(s->bits, 0xff, sizeof(s->bits));
        resetFirstArgs(s);
    } else if (!strcasecmp(op, "nocommands") || !strcasecmp(op, "-@all")) {
        s->flags &= ~SEL_ALLCOMMANDS;
        s->future = 0;
        memset(s->bits, 0, sizeof(s->bits));
        resetFirstArgs(s);
    } else if (op[0] == '~' || op[0] == '%') {
        return addKeyPattern(s, op, len);
    } else if (op[0] == '&') {
        return addChannel(s, op, len);
    } else if ((op[0] == '+' || op[0] == '-') && op[1] != '@') {
        return commandRule(s, op, len);
    } else if ((op[0] == '+' || op[0] == '-') && op[1] == '@') {
        int cat = categoryIndex(op + 2);
        if (cat < 0 || memchr(op, '\0', len)) return RULE_UNKNOWN;
        setCategory(s, cat, op[0] == '+');
    } else {
        return RULE_SYNTAX;
    }
    return RULE_OK;
}

/* ------------------------------------------------------------------------ */
/* Users                                                                     */
/* ------------------------------------------------------------------------ */

static void userUpdateUnrestricted(AclUser *u) {
    Selector *r = u->sels[0];
    int all = SEL_ALLKEYS | SEL_ALLCOMMANDS | SEL_ALLCHANNELS;
    u->unrestricted = u->nsels == 1 && (r->flags & all) == all;
    if (u == defaultUser) aclDefaultUnrestricted = u->unrestricted;
}

/* A user with no password, off, no permissions; channels as
 * acl-pubsub-default says.  Not linked anywhere. */
static AclUser *userCreateUnlinked(const char *name, size_t len) {
    AclUser *u = xcalloc(sizeof(*u));
    u->name = sdsNewLen(name, len);
    u->flags = USER_OFF;
    u->sels = xmalloc(sizeof(Selector *));
    u->sels[0] = selectorCreate(SEL_ROOT | (aclPubsubDefault ? 0 : SEL_ALLCHANNELS));
    u->nsels = 1;
    userUpdateUnrestricted(u);
    return u;
}

/* The user's rules change: the quick table goes (rebuilt when next
 * needed). */
static void userChanged(AclUser *u) {
    xfree(u->quick);
    u->quick = NULL;
    u->quickKeys = NULL;
}

static void userClearContents(AclUser *u) {
    userChanged(u);
    for (int i = 0; i < u->npasses; i++) sdsFree(u->passes[i]);
    xfree(u->passes);
    for (int i = 0; i < u->nsels; i++) selectorFree(u->sels[i]);
    xfree(u->sels);
    u->passes = NULL;
    u->npasses = 0;
    u->sels = NULL;
    u->nsels = 0;
}

static void userFree(AclUser *u) {
    if (!u) return;
    userClearContents(u);
    sdsFree(u->name);
    xfree(u);
}

/* dst gets src's rules (its name stays). */
static void userCopyRules(AclUser *dst, const AclUser *src) {
    userClearContents(dst);
    dst->flags = src->flags;
    if (src->npasses) {
        dst->passes = xmalloc(sizeof(sds) * (size_t)src->npasses);
        for (int i = 0; i < src->npasses; i++) dst->passes[i] = sdsDup(src->passes[i]);
    }
    dst->npasses = src->npasses;
    dst->sels = xmalloc(sizeof(Selector *) * (size_t)src->nsels);
    for (int i = 0; i < src->nsels; i++) dst->sels[i] = selectorDup(src->sels[i]);
    dst->nsels = src->nsels;
    userUpdateUnrestricted(dst);
}

static int isHexHash(const char *p, size_t len) {
    if (len != HASH_LEN) return 0;
    for (size_t i = 0; i < len; i++)
        if (!((p[i] >= '0' && p[i] <= '9') || (p[i] >= 'a' && p[i] <= 'f'))) return 0;
    return 1;
}

static int findPass(const AclUser *u, const char *hash) {
    for (int i = 0; i < u->npasses; i++)
        if (!memcmp(u->passes[i], hash, HASH_LEN)) return i;
    return -1;
}

static int passwordRule(AclUser *u, const char *op, size_t len) {
    char hash[HASH_LEN + 1];
    if (op[0] == '>' || op[0] == '<') {
        sha256Hex(op + 1, len - 1, hash);
    } else {
        if (!isHexHash(op + 1, len - 1)) return RULE_BAD_HASH;
        memcpy(hash, op + 1, HASH_LEN);
        hash[HASH_LEN] = '\0';
    }
    int at = findPass(u, hash);
    if (op[0] == '>' || op[0] == '#') {
        if (at < 0) {
            u->passes = xrealloc(u->passes, sizeof(sds) * (size_t)(u->npasses + 1));
            u->passes[u->npasses++] = sdsNewLen(hash, HASH_LEN);
        }
        u->flags &= ~USER_NOPASS;
        return RULE_OK;
    }
    if (at < 0) return RULE_NO_SUCH_PASS;
    sdsFree(u->passes[at]);
    memmove(u->passes + at, u->passes + at + 1, sizeof(sds) * (size_t)(u->npasses - at - 1));
    u->npasses--;
    return RULE_OK;
}

static int selectorFromText(AclUser *u, const char *op, size_t len) {
    Selector *s = selectorCreate(0);
    sds inner = sdsNewLen(op + 1, len - 2);
    int argc = 0, rc = RULE_OK;
    sds *argv = sdsSplitArgs(inner, &argc);
    for (int i = 0; argv && i < argc && rc == RULE_OK; i++) rc = selectorSet(s, argv[i], sdsLen(argv[i]));
    sdsFreeSplitRes(argv, argc);
    sdsFree(inner);
    if (rc != RULE_OK) {
        selectorFree(s);
        return rc;
    }
    u->sels = xrealloc(u->sels, sizeof(Selector *) * (size_t)(u->nsels + 1));
    u->sels[u->nsels++] = s;
    return RULE_OK;
}

static int userSet(AclUser *u, const char *op, size_t len);

static int userSetInner(AclUser *u, const char *op, size_t len) {
    userChanged(u);
    if (len == 0) return RULE_OK;
    if (!strcasecmp(op, "on")) {
        u->flags = (u->flags | USER_ON) & ~USER_OFF;
    } else if (!strcasecmp(op, "off")) {
        u->flags = (u->flags | USER_OFF) & ~USER_ON;
    } else if (!strcasecmp(op, "skip-sanitize-payload")) {
        u->flags = (u->flags | USER_SKIP_SANITIZE) & ~USER_SANITIZE;
    } else if (!strcasecmp(op, "sanitize-payload")) {
        u->flags = (u->flags | USER_SANITIZE) & ~USER_SKIP_SANITIZE;
    } else if (!strcasecmp(op, "nopass")) {
        u->flags |= USER_NOPASS;
        for (int i = 0; i < u->npasses; i++) sdsFree(u->passes[i]);
        u->npasses = 0;
    } else if (!strcasecmp(op, "resetpass")) {
        u->flags &= ~USER_NOPASS;
        for (int i = 0; i < u->npasses; i++) sdsFree(u->passes[i]);
        u->npasses = 0;
    } else if (op[0] == '>' || op[0] == '#' || op[0] == '<' || op[0] == '!') {
        return passwordRule(u, op, len);
    } else if (op[0] == '(' && op[len - 1] == ')') {
        return selectorFromText(u, op, len);
    } else if (!strcasecmp(op, "clearselectors")) {
        for (int i = 1; i < u->nsels; i++) selectorFree(u->sels[i]);
        u->nsels = 1;
    } else if (!strcasecmp(op, "reset")) {
        userSet(u, "resetpass", 9);
        userSet(u, "resetkeys", 9);
        userSet(u, "resetchannels", 13);
        if (!aclPubsubDefault) userSet(u, "allchannels", 11);
        userSet(u, "off", 3);
        userSet(u, "sanitize-payload", 16);
        userSet(u, "clearselectors", 14);
        userSet(u, "-@all", 5);
    } else {
        return selectorSet(u->sels[0], op, len);
    }
    return RULE_OK;
}

/* Applies one rule to u; RULE_OK or why it was refused (u may then be
 * partly changed: callers work on a copy). */
static int userSet(AclUser *u, const char *op, size_t len) {
    int rc = userSetInner(u, op, len);
    userUpdateUnrestricted(u);
    return rc;
}

static const char *ruleError(int rc) {
    switch (rc) {
    case RULE_UNKNOWN: return "Unknown command or category name in ACL";
    case RULE_SYNTAX: return "Syntax error";
    case RULE_KEYS_AFTER_ALL:
        return "Adding a pattern after the * pattern (or the 'allkeys' flag) is not valid and does not have any "
               "effect. Try 'resetkeys' to start with an empty list of patterns";
    case RULE_CHANNELS_AFTER_ALL:
        return "Adding a pattern after the * pattern (or the 'allchannels' flag) is not valid and does not have "
               "any effect. Try 'resetchannels' to start with an empty list of channels";
    case RULE_NO_SUCH_PASS: return "The password you are trying to remove from the user does not exist";
    case RULE_BAD_HASH:
        return "The password hash must be exactly 64 characters and contain only lowercase hexadecimal characters";
    case RULE_FIRSTARG_OF_SUB: return "Allowing first-arg of a subcommand is not supported";
    default: return "Wrong format";
    }
}

/* Joins the arguments of a selector spread over several words ("(~x",
 * "+get)") into one; NULL with *bad set to the opening word's index when
 * a parenthesis is not closed.  The caller frees the result. */
static sds *mergeSelectorArgs(sds *argv, int argc, int *outc, int *bad) {
    sds *out = xmalloc(sizeof(sds) * (size_t)(argc ? argc : 1));
    sds open = NULL;
    int openAt = -1;
    *outc = 0;
    for (int i = 0; i < argc; i++) {
        size_t len = sdsLen(argv[i]);
        if (!open && len && argv[i][0] == '(' && argv[i][len - 1] != ')') {
            open = sdsDup(argv[i]);
            openAt = i;
            continue;
        }
        if (open) {
            open = sdsCat(open, " ");
            open = sdsCatSds(open, argv[i]);
            if (len && argv[i][len - 1] == ')') {
                out[(*outc)++] = open;
                open = NULL;
            }
            continue;
        }
        out[(*outc)++] = sdsDup(argv[i]);
    }
    if (open) {
        sdsFree(open);
        sdsFreeSplitRes(out, *outc);
        *bad = openAt;
        return NULL;
    }
    return out;
}

static int userIndex(const char *name, size_t len, int *found) {
    int lo = 0, hi = userCount;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        const sds n = users[mid]->name;
        size_t nl = sdsLen(n), m = nl < len ? nl : len;
        int c = memcmp(n, name, m);
        if (c == 0) c = nl < len ? -1 : nl > len ? 1 : 0;
        if (c == 0) {
            *found = 1;
            return mid;
        }
        if (c < 0) lo = mid + 1;
        else hi = mid;
    }
    *found = 0;
    return lo;
}

AclUser *aclUserByName(const char *name, size_t len) {
    int found;
    int i = userIndex(name, len, &found);
    return found ? users[i] : NULL;
}

static void linkUser(AclUser *u) {
    int found;
    int i = userIndex(u->name, sdsLen(u->name), &found);
    users = xrealloc(users, sizeof(AclUser *) * (size_t)(userCount + 1));
    memmove(users + i + 1, users + i, sizeof(AclUser *) * (size_t)(userCount - i));
    users[i] = u;
    userCount++;
}

static void unlinkUser(AclUser *u) {
    int found;
    int i = userIndex(u->name, sdsLen(u->name), &found);
    if (!found) return;
    memmove(users + i, users + i + 1, sizeof(AclUser *) * (size_t)(userCount - i - 1));
    userCount--;
}

AclUser *aclClientUser(const Client *c) { return c->user ? c->user : defaultUser; }

const char *aclClientUserName(const Client *c) { return aclClientUser(c)->name; }

static int hasSpaces(const char *s, size_t len) {
    for (size_t i = 0; i < len; i++)
        if (s[i] == ' ' || s[i] == '\0' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r' || s[i] == '\v' ||
            s[i] == '\f')
            return 1;
    return 0;
}

/* ------------------------------------------------------------------------ */
/* Describing rules                                                          */
/* ------------------------------------------------------------------------ */

static sds catSingleCommand(sds out, const Selector *s, Selector *fake, Command *cmd) {
    int ubit = getBit(s, cmd->id), fbit = getBit(fake, cmd->id);
    if (ubit != fbit) {
        out = sdsCatPrintf(out, "%c%s ", ubit ? '+' : '-', cmd->fullname);
        changePerm(fake, cmd, ubit);
    }
    for (Command *sub = cmd->subcommands; sub && sub->name; sub++) out = catSingleCommand(out, s, fake, sub);
    if (!ubit && s->firstArgs && s->firstArgs[cmd->id])
        for (sds *p = s->firstArgs[cmd->id]; *p; p++) out = sdsCatPrintf(out, "+%s|%s ", cmd->fullname, *p);
    return out;
}

/* The command rules that give s's permissions: +@all or -@all, the
 * categories that fit best (fewest differences, then most in common),
 * then single commands and first args.  No trailing space. */
static sds describeCommands(const Selector *s) {
    int additive = !s->future;
    sds out = sdsNew(additive ? "-@all " : "+@all ");
    Selector *fake = selectorCreate(0), *temp = selectorCreate(0);
    selectorSet(fake, additive ? "-@all" : "+@all", 5);
    memcpy(temp->bits, s->bits, sizeof(temp->bits));
    char applied[CATEGORY_COUNT] = {0};
    for (;;) {
        int best = -1;
        unsigned mindiff = ~0u, maxsame = 0;
        for (int j = 0; j < CATEGORY_COUNT; j++) {
            if (applied[j]) continue;
            unsigned on, off;
            countCategory(temp, j, &on, &off);
            unsigned diff = additive ? off : on, same = additive ? on : off;
            if (same > diff && (diff < mindiff || (diff == mindiff && same > maxsame))) {
                best = j;
                mindiff = diff;
                maxsame = same;
            }
        }
        if (best < 0) break;
        setCategory(fake, best, additive);
        setCategory(temp, best, !additive);
        out = sdsCatPrintf(out, "%c@%s ", additive ? '+' : '-', categoryNames[best]);
        applied[best] = 1;
    }
    unsigned cursor = 0;
    for (Command *cmd; (cmd = commandIterate(&cursor));) out = catSingleCommand(out, s, fake, cmd);
    selectorFree(fake);
    selectorFree(temp);
    sdsSetLen(out, sdsLen(out) - 1);
    return out;
}

static sds catKeyPattern(sds out, const KeyPattern *p) {
    if (p->perm == PERM_ALL) out = sdsCat(out, "~");
    else out = sdsCatPrintf(out, "%%%s%s~", p->perm & PERM_R ? "R" : "", p->perm & PERM_W ? "W" : "");
    return sdsCatSds(out, p->pat);
}

/* GETUSER's "keys": the patterns separated by spaces. */
static sds describeKeys(const Selector *s) {
    if (s->flags & SEL_ALLKEYS) return sdsNew("~*");
    sds out = sdsEmpty();
    for (int i = 0; i < s->npats; i++) {
        if (i) out = sdsCat(out, " ");
        out = catKeyPattern(out, &s->pats[i]);
    }
    return out;
}

static sds describeChannels(const Selector *s) {
    if (s->flags & SEL_ALLCHANNELS) return sdsNew("&*");
    sds out = sdsEmpty();
    for (int i = 0; i < s->nchans; i++) out = sdsCatPrintf(out, "%s&%s", i ? " " : "", s->chans[i]);
    return out;
}

static sds describeSelector(const Selector *s) {
    sds out = sdsEmpty();
    if (s->flags & SEL_ALLKEYS) out = sdsCat(out, "~* ");
    else
        for (int i = 0; i < s->npats; i++) out = sdsCat(catKeyPattern(out, &s->pats[i]), " ");
    if (s->flags & SEL_ALLCHANNELS) {
        out = sdsCat(out, "&* ");
    } else {
        out = sdsCat(out, "resetchannels ");
        for (int i = 0; i < s->nchans; i++) out = sdsCatPrintf(out, "&%s ", s->chans[i]);
    }
    sds cmds = describeCommands(s);
    out = sdsCatSds(out, cmds);
    sdsFree(cmds);
    return out;
}

/* ACL LIST's rules of u (after "user <name> "). */
static sds describeUser(const AclUser *u) {
    sds out = sdsEmpty();
    for (size_t j = 0; j < sizeof(userFlagNames) / sizeof(userFlagNames[0]); j++)
        if (u->flags & userFlagNames[j].flag) out = sdsCatPrintf(out, "%s ", userFlagNames[j].name);
    for (int i = 0; i < u->npasses; i++) out = sdsCatPrintf(out, "#%s ", u->passes[i]);
    for (int i = 0; i < u->nsels; i++) {
        sds d = describeSelector(u->sels[i]);
        if (i == 0) out = sdsCatSds(out, d);
        else out = sdsCatPrintf(out, " (%s)", d);
        sdsFree(d);
    }
    return out;
}

/* ------------------------------------------------------------------------ */
/* The check                                                                 */
/* ------------------------------------------------------------------------ */

/* The permissions a key with these KS_* flags needs. */
static unsigned keyNeed(uint32_t ksflags) {
    unsigned need = 0;
    if (ksflags & KS_ACCESS) need |= PERM_R;
    if (ksflags & (KS_INSERT | KS_DELETE | KS_UPDATE)) need |= PERM_W;
    return need;
}

static void compileKeys(Selector *s) {
    const char **pats = xmalloc(sizeof(char *) * (size_t)(s->npats + 1));
    size_t *lens = xmalloc(sizeof(size_t) * (size_t)(s->npats + 1));
    unsigned char *perms = xmalloc((size_t)(s->npats + 1));
    for (int i = 0; i < s->npats; i++) {
        pats[i] = s->pats[i].pat;
        lens[i] = sdsLen(s->pats[i].pat);
        perms[i] = (unsigned char)s->pats[i].perm;
    }
    s->keySet = globSetCreate(pats, lens, perms, (size_t)s->npats);
    xfree(pats);
    xfree(lens);
    xfree(perms);
}

/* Whether one of s's patterns with the permissions `need` (PERM_*)
 * matches the key. */
static int keyAllowed(Selector *s, const char *key, size_t len, unsigned need) {
    if (!s->keySet) compileKeys(s);
    return globSetMatch(s->keySet, key, len, need);
}

/* Patterns (PSUBSCRIBE) must appear literally in the list; channels match
 * its patterns. */
static int channelAllowed(sds *chans, int nchans, const char *ch, size_t len, int isPattern) {
    for (int i = 0; i < nchans; i++) {
        if (isPattern) {
            if (sdsLen(chans[i]) == len && !memcmp(chans[i], ch, len)) return 1;
        } else if (globMatch(chans[i], sdsLen(chans[i]), ch, len, 0)) {
            return 1;
        }
    }
    return 0;
}

typedef struct KeyCache {
    int init;
    KeyResult keys;
} KeyCache;

/* The quick table of a user with one selector: per command id,
 * QUICK_ALLOW when the selector allows the command whatever its arguments
 * (its bit is set and it has no keys and no channels, or the selector has
 * allkeys); else, for a command allowed whose one key sits at a fixed argv
 * index (KeyPlan.quickPos), that index and the permissions (PERM_*) the
 * key needs, shifted by QUICK_NEED_SHIFT; else 0: the full check. */
#define QUICK_POS 0x3f
#define QUICK_NEED_SHIFT 6
#define QUICK_ALLOW 0xff

static void quickTableBuild(AclUser *u) {
    Selector *s = u->sels[0];
    unsigned char *t = xcalloc(idCount ? idCount : 1);
    if (!(s->flags & SEL_ALLKEYS) && !s->keySet) compileKeys(s);
    for (unsigned id = 0; id < idCount; id++) {
        const Command *cmd = byId[id];
        const KeyPlan *kp = &keyPlans[id];
        if (!cmd || !(getBit(s, id) || (cmd->flags & CMD_NO_AUTH)) || kp->chan != CHAN_NONE) continue;
        /* a module's channels are known by calling it (moduleChannelsCheck) */
        if ((cmd->flags & CMD_MODULE) && aclModuleChannels && !(s->flags & SEL_ALLCHANNELS)) continue;
        if (kp->kind == PLAN_NONE || (kp->quickPos && (s->flags & SEL_ALLKEYS)))
            t[id] = QUICK_ALLOW;
        else if (kp->quickPos && kp->quickPos < QUICK_POS) /* 63 with R|W would read as QUICK_ALLOW */
            t[id] = (unsigned char)(kp->quickPos | kp->spec[0].need << QUICK_NEED_SHIFT);
    }
    u->quick = t;
    u->quickKeys = s->keySet;
}

/* The keys of a PLAN_FIXED or PLAN_FIXED_MAX command: 1 when s allows
 * them all; 0 when it refuses one (its index in *errpos; PLAN_FIXED
 * only); -1 when the plan cannot say for this argv (a range out of argv,
 * where commandKeys would fall back to the command's finder, or a
 * FIXED_MAX key refused with every permission, where the finder's flags
 * may ask for less): then the caller walks the keys as commandKeys finds
 * them. */
static int fixedKeysCheck(Selector *s, const KeyPlan *kp, int argc, sds *argv, int *errpos) {
    for (int i = 0; i < kp->nspecs; i++) {
        int first = kp->spec[i].first;
        int last = kp->spec[i].last >= 0 ? first + kp->spec[i].last : argc + kp->spec[i].last;
        if (last >= argc || last < first) return -1;
    }
    for (int i = 0; i < kp->nspecs; i++) {
        int first = kp->spec[i].first;
        int last = kp->spec[i].last >= 0 ? first + kp->spec[i].last : argc + kp->spec[i].last;
        for (int pos = first; pos <= last; pos += kp->spec[i].step) {
            if (keyAllowed(s, argv[pos], sdsLen(argv[pos]), kp->spec[i].need)) continue;
            if (kp->kind == PLAN_FIXED_MAX) return -1;
            *errpos = pos;
            return 0;
        }
    }
    return 1;
}

int (*aclModuleChannels)(Command *cmd, int argc, sds *argv, KeyResult *out);

/* A getchannels-api module command's publish and subscribe channels
 * against s: ACL_OK, or DENIED_CHANNEL with the argv index in *errpos. */
static int moduleChannelsCheck(Selector *s, Command *cmd, int argc, sds *argv, int *errpos) {
    KeyResult ch;
    keyResultInit(&ch);
    int n = aclModuleChannels(cmd, argc, argv, &ch), rc = ACL_OK;
    for (int j = 0; j < n && rc == ACL_OK; j++) {
        uint32_t f = ch.keys[j].flags;
        int pos = ch.keys[j].pos;
        if (!(f & ((1u << 1) | (1u << 2))) || pos <= 0 || pos >= argc) continue;
        if (!channelAllowed(s->chans, s->nchans, argv[pos], sdsLen(argv[pos]), (int)(f & 1u))) {
            *errpos = pos;
            rc = DENIED_CHANNEL;
        }
    }
    keyResultFree(&ch);
    return rc;
}

static int selectorCheck(Selector *s, Command *cmd, int argc, sds *argv, int *errpos, KeyCache *kc) {
    if (!(s->flags & SEL_ALLCOMMANDS) && !(cmd->flags & CMD_NO_AUTH) && !getBit(s, cmd->id)) {
        sds *fa = s->firstArgs ? s->firstArgs[cmd->id] : NULL;
        if (argc < 2 || !fa) return DENIED_CMD;
        int idx = cmd->parent ? 2 : 1;
        if (idx >= argc) return DENIED_CMD;
        for (; *fa; fa++)
            if (!strcasecmp(*fa, argv[idx])) break;
        if (!*fa) return DENIED_CMD;
    }
    const KeyPlan *kp = &keyPlans[cmd->id];
    if (!(s->flags & SEL_ALLKEYS) && kp->kind != PLAN_NONE) {
        int rc = kp->kind == PLAN_GENERIC ? -1 : fixedKeysCheck(s, kp, argc, argv, errpos);
        if (rc == 0) return DENIED_KEY;
        if (rc < 0 && !kc->init) {
            keyResultInit(&kc->keys);
            commandKeys(cmd, argc, argv, &kc->keys);
            kc->init = 1;
        }
        for (int j = 0; rc < 0 && j < kc->keys.count; j++) {
            int pos = kc->keys.keys[j].pos;
            /* A finder's fixed position past a short argv (redis.acl_check_cmd
             * does not check arity): a key no pattern allows, as in Redis. */
            if (pos >= argc || !keyAllowed(s, argv[pos], sdsLen(argv[pos]), keyNeed(kc->keys.keys[j].flags))) {
                *errpos = pos;
                return DENIED_KEY;
            }
        }
    }
    if ((cmd->flags & CMD_MODULE) && aclModuleChannels && !(s->flags & SEL_ALLCHANNELS)) {
        int rc = moduleChannelsCheck(s, cmd, argc, argv, errpos);
        if (rc != ACL_OK) return rc;
    }
    int kind = kp->chan;
    if (!(s->flags & SEL_ALLCHANNELS) && kind != CHAN_NONE) {
        int last = kind == CHAN_FIRST ? 1 : argc - 1;
        for (int j = 1; j <= last && j < argc; j++) {
            if (!channelAllowed(s->chans, s->nchans, argv[j], sdsLen(argv[j]), kind == CHAN_ALL_PATTERNS)) {
                *errpos = j;
                return DENIED_CHANNEL;
            }
        }
    }
    return ACL_OK;
}

/* Whether u may run cmd with argv: ACL_OK, or the denial to report (no
 * selector allows the command: DENIED_CMD; else the last key or channel
 * no selector allowed) with its argv index in *errpos. */
static int userCheck(const AclUser *u, Command *cmd, int argc, sds *argv, int *errpos) {
    if (u->unrestricted) return ACL_OK;
    int relevant = DENIED_CMD, lastIdx = 0;
    KeyCache kc;
    kc.init = 0; /* the KeyResult is set up only if a selector needs it */
    for (int i = 0; i < u->nsels; i++) {
        int pos = 0;
        int rc = selectorCheck(u->sels[i], cmd, argc, argv, &pos, &kc);
        if (rc == ACL_OK) {
            relevant = ACL_OK;
            break;
        }
        if (rc > relevant || (rc == relevant && pos > lastIdx)) {
            relevant = rc;
            lastIdx = pos;
        }
    }
    if (kc.init) keyResultFree(&kc.keys);
    *errpos = lastIdx;
    return relevant;
}

/* ------------------------------------------------------------------------ */
/* Enforcement                                                               */
/* ------------------------------------------------------------------------ */

/* The primary's link runs what the primary ran, unchecked (Redis gives it
 * no user). */
static int unchecked(const Client *c) { return (c->flags & CLIENT_MASTER) != 0; }

/* aclRefuseCommandSlow past its quick check.  Kept out of line so that
 * the quick check saves no registers. */
__attribute__((noinline)) static int refuseCommandFull(Client *c, Command *cmd) {
    if (unchecked(c)) return 0;
    AclUser *u = aclClientUser(c);
    if (u->nsels == 1 && !u->quick) quickTableBuild(u);
    int pos = 0;
    int rc = userCheck(u, cmd, c->argc, c->argv, &pos);
    if (rc == ACL_OK) return 0;
    c->lastcmd = cmd; /* the log's client info names the refused command, as Redis's */
    aclLogAdd(c, c, rc, (c->flags & CLIENT_MULTI) ? CTX_MULTI : CTX_TOPLEVEL, c->argc, c->argv, cmd, pos, u->name,
              sdsLen(u->name));
    if (rc == DENIED_CMD) {
        sds err = sdsCatPrintf(sdsEmpty(), "NOPERM this user has no permissions to run the '%s' command",
                               cmd->fullname);
        dispatchRejectCommand(c, err);
        sdsFree(err);
    } else if (rc == DENIED_KEY) {
        dispatchRejectCommand(c, "NOPERM this user has no permissions to access one of the keys used as arguments");
    } else {
        dispatchRejectCommand(c,
                              "NOPERM this user has no permissions to access one of the channels used as arguments");
    }
    return -1;
}

int aclRefuseCommandSlow(Client *c, Command *cmd) {
    /* The common case in few instructions and no calls (so no registers
     * to save): one selector, whose quick table allows the command
     * outright or once its one key matches a quick prefix.  Anything else,
     * a refusal included, takes the full check, which also finds what to
     * report. */
    const AclUser *u = aclClientUser(c);
    if (u->quick) {
        unsigned q = u->quick[cmd->id];
        if (q == QUICK_ALLOW) return 0;
        unsigned pos = q & QUICK_POS;
        if (pos && (int)pos < c->argc) {
            sds key = c->argv[pos];
            if (globSetMatchQuick(u->quickKeys, key, sdsLen(key), q >> QUICK_NEED_SHIFT)) return 0;
        }
    }
    return refuseCommandFull(c, cmd);
}

int aclRefuseQueuedOrReply(Client *c, Command *cmd, int argc, sds *argv) {
    AclUser *u = aclClientUser(c);
    if (u->unrestricted || unchecked(c)) return 0;
    int pos = 0;
    int rc = userCheck(u, cmd, argc, argv, &pos);
    if (rc == ACL_OK) return 0;
    aclLogAdd(c, c, rc, CTX_MULTI, argc, argv, cmd, pos, u->name, sdsLen(u->name));
    const char *why = rc == DENIED_CMD   ? "no permission to execute the command or subcommand"
                      : rc == DENIED_KEY ? "no permission to touch the specified keys"
                                         : "no permission to access one of the channels used as arguments";
    replyErrorFormat(c,
                     "-NOPERM ACLs rules changed between the moment the transaction was accumulated and the EXEC "
                     "call. This command is no longer allowed for the following reason: %s",
                     why);
    return -1;
}

const char *aclModuleCheck(Client *caller, Command *cmd, int argc, sds *argv) {
    return aclModuleCheckAs(caller, NULL, cmd, argc, argv);
}

const char *aclModuleCheckAs(Client *caller, AclUser *as, Command *cmd, int argc, sds *argv) {
    if (!as && (!caller || unchecked(caller))) return NULL;
    AclUser *u = as ? as : aclClientUser(caller);
    if (u->unrestricted) return NULL;
    int pos = 0;
    int rc = userCheck(u, cmd, argc, argv, &pos);
    if (rc == ACL_OK) return NULL;
    /* The entry names the calling client's user, as Redis's does. */
    if (caller) {
        const AclUser *lu = aclClientUser(caller);
        aclLogAdd(caller, caller, rc, CTX_MODULE, argc, argv, cmd, pos, lu->name, sdsLen(lu->name));
    }
    if (rc == DENIED_CMD) return "ERR acl verification failed, can't run this command or subcommand.";
    if (rc == DENIED_KEY)
        return "ERR acl verification failed, can't access at least one of the keys mentioned in the command "
               "arguments.";
    return "ERR acl verification failed, can't publish to the channel mentioned in the command.";
}

/* The script layer's hook: may the script's caller run cmd? */
static const char *scriptCheck(Client *caller, Command *cmd, int argc, sds *argv) {
    if (!caller || unchecked(caller)) return NULL;
    AclUser *u = aclClientUser(caller);
    if (u->unrestricted) return NULL;
    int pos = 0;
    int rc = userCheck(u, cmd, argc, argv, &pos);
    if (rc == ACL_OK) return NULL;
    /* Inside EXEC the log shows the client running EXEC, as Redis's. */
    Command *running = caller->cmd;
    if (caller->flags & CLIENT_MULTI) caller->cmd = execCommandEntry;
    aclLogAdd(caller, caller, rc, CTX_LUA, argc, argv, cmd, pos, u->name, sdsLen(u->name));
    caller->cmd = running;
    if (rc == DENIED_CMD) return "ERR The user executing the script can't run this command or subcommand";
    if (rc == DENIED_KEY)
        return "ERR The user executing the script can't access at least one of the keys mentioned in the command "
               "arguments";
    return "ERR The user executing the script can't publish to the channel mentioned in the command";
}

/* redis.acl_check_cmd: whether the script's caller may run it (nothing
 * logged). */
static int scriptAllowed(Client *caller, Command *cmd, int argc, sds *argv) {
    if (!caller || unchecked(caller)) return 1;
    int pos = 0;
    return userCheck(aclClientUser(caller), cmd, argc, argv, &pos) == ACL_OK;
}

/* SORT's BY/GET patterns: does a selector that allows the command let the
 * user read every key?  A script's commands are its caller's. */
static int fullKeyReadAccess(Client *c) {
    Client *who = (c->flags & CLIENT_LUA) && scriptCaller() ? scriptCaller() : c;
    AclUser *u = aclClientUser(who);
    if (u->unrestricted || !c->cmd || unchecked(who)) return 1;
    KeyCache kc = {0};
    int full = 0;
    for (int i = 0; i < u->nsels && !full; i++) {
        Selector *s = u->sels[i];
        int pos = 0;
        if (selectorCheck(s, c->cmd, c->argc, c->argv, &pos, &kc) != ACL_OK) continue;
        if (s->flags & SEL_ALLKEYS) full = 1;
        for (int j = 0; j < s->npats && !full; j++)
            full = (s->pats[j].perm & PERM_R) && !strcmp(s->pats[j].pat, "*");
    }
    if (kc.init) keyResultFree(&kc.keys);
    return full;
}

static int skipsSanitizePayload(const Client *c) {
    const Client *who = (c->flags & CLIENT_LUA) && scriptCaller() ? scriptCaller() : c;
    return (aclClientUser(who)->flags & USER_SKIP_SANITIZE) != 0;
}

/* Constant time in the bytes compared (both are HASH_LEN hex digits). */
static int hashEqual(const char *a, const char *b) {
    unsigned diff = 0;
    for (int i = 0; i < HASH_LEN; i++) diff |= (unsigned char)a[i] ^ (unsigned char)b[i];
    return diff == 0;
}

static int credentialsValid(const AclUser *u, const sds pass) {
    if (!u || (u->flags & USER_OFF)) return 0;
    if (u->flags & USER_NOPASS) return 1;
    char hash[HASH_LEN + 1];
    sha256Hex(pass, sdsLen(pass), hash);
    int ok = 0;
    for (int i = 0; i < u->npasses; i++) ok |= hashEqual(hash, u->passes[i]);
    return ok;
}

int aclAuthenticate(Client *c, const sds user, const sds pass) {
    AclUser *u = aclUserByName(user, sdsLen(user));
    if (credentialsValid(u, pass)) {
        if (userChangedHook) userChangedHook(c);
        c->authenticated = 1;
        c->user = u == defaultUser ? NULL : u;
        return 0;
    }
    aclLogAdd(c, c, DENIED_AUTH, (c->flags & CLIENT_MULTI) ? CTX_MULTI : CTX_TOPLEVEL, c->argc, c->argv, NULL, 0,
              user, sdsLen(user));
    return -1;
}

int aclAuthenticateAs(Client *c, const char *name, size_t len) {
    AclUser *u = aclUserByName(name, len);
    if (!u || (u->flags & USER_OFF)) {
        aclResetClientUser(c);
        return -1;
    }
    c->authenticated = 1;
    c->user = u == defaultUser ? NULL : u;
    return 0;
}

int aclDefaultNopass(void) { return (defaultUser->flags & USER_NOPASS) != 0; }

/* Core's view of the default user: whether new clients must authenticate. */
static void publishDefaultAuth(void) {
    server.authDefaultRequired = !(defaultUser->flags & USER_NOPASS) || (defaultUser->flags & USER_OFF);
    server.authDefaultNopass = (defaultUser->flags & USER_NOPASS) != 0;
}

void aclResetClientUser(Client *c) {
    c->user = NULL;
    c->authenticated = !server.authDefaultRequired;
}

/* The clients authenticated as u go back to the default user,
 * unauthenticated, and are closed (the current one after its reply). */
static void killClientsOf(AclUser *u, Client *current) {
    for (Client *o = server.net.clients; o; o = o->nextClient) {
        if (o->user != u) continue;
        o->user = NULL;
        o->authenticated = 0;
        if (o == current) o->flags |= CLIENT_CLOSE_AFTER_REPLY;
        else clientFreeAsync(o);
    }
    if (aclClientHooks && aclClientHooks->killUser) aclClientHooks->killUser(u, current);
}

/* Subscriptions a user's new rules no longer allow (the channels of all
 * its selectors, gathered in one list, as Redis checks). */
typedef struct ChannelList {
    sds *chans;
    int n;
} ChannelList;

static int subscriptionDenied(const char *name, size_t len, int isPattern, void *arg) {
    ChannelList *l = arg;
    return !channelAllowed(l->chans, l->n, name, len, isPattern);
}

/* After SETUSER: pub/sub clients of the user subscribed to something the
 * new rules do not allow are closed, unless the new channels are a
 * superset of the old ones or a selector allows all channels. */
static void killPubsubClientsIfNeeded(const AclUser *newu, AclUser *orig, Client *current) {
    ChannelList upcoming = {NULL, 0};
    for (int i = 0; i < newu->nsels; i++)
        if (newu->sels[i]->flags & SEL_ALLCHANNELS) return;
    for (int i = 0; i < newu->nsels; i++) {
        const Selector *s = newu->sels[i];
        upcoming.chans = xrealloc(upcoming.chans, sizeof(sds) * (size_t)(upcoming.n + s->nchans + 1));
        for (int j = 0; j < s->nchans; j++) upcoming.chans[upcoming.n++] = s->chans[j];
    }
    int superset = 1;
    for (int i = 0; i < orig->nsels && superset; i++) {
        const Selector *s = orig->sels[i];
        if (s->flags & SEL_ALLCHANNELS) superset = 0; /* had every channel, has not now */
        for (int j = 0; j < s->nchans && superset; j++) {
            int found = 0;
            for (int k = 0; k < upcoming.n && !found; k++) found = aclSameSds(upcoming.chans[k], s->chans[j]);
            superset = found;
        }
    }
    if (!superset) {
        for (Client *o = server.net.clients; o; o = o->nextClient) {
            if (aclClientUser(o) != orig || !(o->flags & CLIENT_PUBSUB)) continue;
            if (!pubsubClientAnySubscription(o, subscriptionDenied, &upcoming)) continue;
            if (o == current) o->flags |= CLIENT_CLOSE_AFTER_REPLY;
            else clientFreeAsync(o);
        }
        if (aclClientHooks && aclClientHooks->killSubscribers)
            aclClientHooks->killSubscribers(orig, subscriptionDenied, &upcoming, current);
    }
    xfree(upcoming.chans);
}

/* ------------------------------------------------------------------------ */
/* Setting users from text (SETUSER, config, aclfile)                        */
/* ------------------------------------------------------------------------ */

/* Applies argv's rules to a copy of u (a new user when u is NULL) and,
 * when all are valid, to u; returns NULL or the error text (caller
 * frees). */
static sds setUserFromArgs(AclUser *u, const char *name, size_t nlen, sds *argv, int argc, Client *current) {
    int mc = 0, bad = 0;
    sds *merged = mergeSelectorArgs(argv, argc, &mc, &bad);
    if (!merged) return sdsCatPrintf(sdsEmpty(), "Unmatched parenthesis in acl selector starting at '%s'.", argv[bad]);
    AclUser *temp = userCreateUnlinked(name, nlen);
    if (u) userCopyRules(temp, u);
    sds err = NULL;
    for (int j = 0; j < mc; j++) {
        int rc = userSet(temp, merged[j], sdsLen(merged[j]));
        if (rc != RULE_OK) {
            err = sdsCatPrintf(sdsEmpty(), "Error in ACL SETUSER modifier '%s': %s", merged[j], ruleError(rc));
            break;
        }
    }
    sdsFreeSplitRes(merged, mc);
    if (err) {
        userFree(temp);
        return err;
    }
    if (u) {
        killPubsubClientsIfNeeded(temp, u, current);
        userCopyRules(u, temp);
        userFree(temp);
    } else {
        linkUser(temp);
    }
    if (u == defaultUser) publishDefaultAuth();
    return NULL;
}

static void setDefaultPassword(const char *pass, size_t len) {
    userSet(defaultUser, "resetpass", 9);
    if (pass && len) {
        sds op = sdsCatLen(sdsNew(">"), pass, len);
        userSet(defaultUser, op, sdsLen(op));
        sdsFree(op);
    } else {
        userSet(defaultUser, "nopass", 6);
    }
    publishDefaultAuth();
}

static AclUser *createDefaultUser(void) {
    AclUser *u = userCreateUnlinked("default", 7);
    userSet(u, "+@all", 5);
    userSet(u, "~*", 2);
    userSet(u, "&*", 2);
    userSet(u, "on", 2);
    userSet(u, "nopass", 6);
    return u;
}

/* Loads the aclfile into a new set of users; on success it replaces the
 * current set (the default user object stays, with the file's rules) and
 * the clients of every other old user are closed.  Returns NULL or the
 * errors (caller frees); on errors nothing changed. */
static sds loadAclFile(const char *path, Client *current) {
    FILE *fp = fopen(path, "r");
    if (!fp) return sdsCatPrintf(sdsEmpty(), "Error loading ACLs, opening file '%s': %s", path, strerror(errno));
    sds text = sdsEmpty();
    char buf[16384];
    size_t n;
    while ((n = fread(buf, 1, sizeof(buf), fp)) > 0) text = sdsCatLen(text, buf, n);
    fclose(fp);

    AclUser **oldUsers = users;
    int oldCount = userCount;
    AclUser *oldDefault = defaultUser;
    users = NULL;
    userCount = 0;
    defaultUser = NULL;

    sds errors = sdsEmpty();
    int nlines = 0;
    sds *lines = sdsSplitLen(text, (ssize_t)sdsLen(text), "\n", 1, &nlines);
    sdsFree(text);
    for (int i = 0; i < nlines; i++) {
        int linenum = i + 1;
        lines[i] = sdsTrim(lines[i], " \t\r\n");
        if (lines[i][0] == '\0') continue; /* 7.0 has no comments here: '#' is an error */
        /* Words are split at single spaces, without quoting (as 7.0). */
        int argc = 0;
        sds *argv = sdsSplitLen(lines[i], (ssize_t)sdsLen(lines[i]), " ", 1, &argc);
        if (argc == 0) {
            sdsFreeSplitRes(argv, argc);
            continue;
        }
        if (strcmp(argv[0], "user") || argc < 2) {
            errors = sdsCatPrintf(errors, "%s:%d should start with user keyword followed by the username. ", path,
                                  linenum);
            sdsFreeSplitRes(argv, argc);
            continue;
        }
        if (hasSpaces(argv[1], sdsLen(argv[1]))) {
            errors = sdsCatPrintf(errors, "'%s:%d: username '%s' contains invalid characters. ", path, linenum,
                                  argv[1]);
            sdsFreeSplitRes(argv, argc);
            continue;
        }
        if (aclUserByName(argv[1], sdsLen(argv[1]))) {
            errors = sdsCatPrintf(errors, "WARNING: Duplicate user '%s' found on line %d. ", argv[1], linenum);
            sdsFreeSplitRes(argv, argc);
            continue;
        }
        AclUser *u = userCreateUnlinked(argv[1], sdsLen(argv[1]));
        linkUser(u);
        int mc = 0, bad = 0;
        sds *merged = mergeSelectorArgs(argv + 2, argc - 2, &mc, &bad);
        if (!merged) {
            errors = sdsCatPrintf(errors, "%s:%d: Unmatched parenthesis in selector definition.", path, linenum);
            mc = 0;
        }
        int syntaxError = 0;
        for (int j = 0; j < mc; j++) {
            merged[j] = sdsTrim(merged[j], "\t\r\n");
            int rc = userSet(u, merged[j], sdsLen(merged[j]));
            if (rc == RULE_OK) continue;
            if (rc == RULE_UNKNOWN) {
                errors = sdsCatPrintf(errors, "%s:%d: Error in applying operation '%s': %s. ", path, linenum, merged[j],
                                      ruleError(rc));
            } else if (!syntaxError) {
                errors = sdsCatPrintf(errors, "%s:%d: %s. ", path, linenum, ruleError(rc));
                syntaxError = 1;
            }
        }
        if (merged) sdsFreeSplitRes(merged, mc);
        sdsFreeSplitRes(argv, argc);
    }
    sdsFreeSplitRes(lines, nlines);

    if (sdsLen(errors)) {
        for (int i = 0; i < userCount; i++) userFree(users[i]);
        xfree(users);
        users = oldUsers;
        userCount = oldCount;
        defaultUser = oldDefault;
        errors = sdsCat(errors, "WARNING: ACL errors detected, no change to the previously active ACL rules was "
                                "performed");
        return errors;
    }
    sdsFree(errors);

    /* The default user object stays (clients point at it through NULL);
     * it takes the file's rules, or a fresh default's. */
    AclUser *fileDefault = aclUserByName("default", 7);
    if (!fileDefault) fileDefault = createDefaultUser();
    else unlinkUser(fileDefault);
    defaultUser = oldDefault;
    userCopyRules(defaultUser, fileDefault);
    userFree(fileDefault);
    linkUser(defaultUser);
    for (int i = 0; i < oldCount; i++) {
        if (oldUsers[i] == oldDefault) continue;
        killClientsOf(oldUsers[i], current);
        userFree(oldUsers[i]);
    }
    xfree(oldUsers);
    publishDefaultAuth();
    return NULL;
}

/* Writes every user to the aclfile (through a temporary file renamed
 * over it).  0 or -1 (logged). */
static int saveAclFile(const char *path) {
    sds text = sdsEmpty();
    for (int i = 0; i < userCount; i++) {
        sds d = describeUser(users[i]);
        text = sdsCatPrintf(text, "user %s %s\n", users[i]->name, d);
        sdsFree(d);
    }
    sds tmp = sdsCatPrintf(sdsEmpty(), "%s.tmp-%d-%lld", path, (int)getpid(), serverNowMs());
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int ok = fd >= 0;
    if (!ok) serverLog(LL_WARNING, "Opening temp ACL file for ACL SAVE: %s", strerror(errno));
    size_t off = 0;
    while (ok && off < sdsLen(text)) {
        ssize_t w = write(fd, text + off, sdsLen(text) - off);
        if (w <= 0) {
            serverLog(LL_WARNING, "Writing ACL file for ACL SAVE: %s", strerror(errno));
            ok = 0;
        } else {
            off += (size_t)w;
        }
    }
    if (ok && fsync(fd) == -1) ok = 0;
    if (fd >= 0) close(fd);
    if (ok && rename(tmp, path) == -1) {
        serverLog(LL_WARNING, "Renaming ACL file for ACL SAVE: %s", strerror(errno));
        ok = 0;
    }
    if (!ok) unlink(tmp);
    sdsFree(tmp);
    sdsFree(text);
    return ok ? 0 : -1;
}

/* CONFIG REWRITE's `user` lines (none with an aclfile). */
static sds *configUserLines(int *count) {
    *count = 0;
    if (aclfile && aclfile[0]) return NULL;
    sds *out = xmalloc(sizeof(sds) * (size_t)(userCount ? userCount : 1));
    for (int i = 0; i < userCount; i++) {
        sds d = describeUser(users[i]);
        out[(*count)++] = sdsCatPrintf(sdsEmpty(), "user %s %s", users[i]->name, d);
        sdsFree(d);
    }
    return out;
}

/* ------------------------------------------------------------------------ */
/* Start-up                                                                  */
/* ------------------------------------------------------------------------ */

/* The commands whose finder (command.c) returns exactly their one key
 * spec's key, only with flags that depend on the arguments. */
static const char *const sameKeysAsSpec[] = {"set", "bitfield"};

/* cmd's KeyPlan (see there). */
static void planKeys(const Command *cmd, KeyPlan *kp) {
    const CommandSpec *spec = cmd->spec;
    kp->kind = PLAN_GENERIC;
    if (!commandHasKeys(cmd)) {
        kp->kind = PLAN_NONE;
        return;
    }
    int variable = 0, n = 0;
    for (int i = 0; i < spec->keySpecCount; i++) {
        const KeySpec *ks = &spec->keySpecs[i];
        if (ks->flags & KS_NOT_KEY) continue;
        if (ks->flags & KS_VARIABLE_FLAGS) variable = 1;
        if (n == PLAN_SPECS || ks->bsType != KSB_INDEX || ks->bsIndex < 1 || ks->bsIndex > 100 ||
            ks->fkType != KSF_RANGE || (ks->flags & KS_INCOMPLETE) || ks->fk[0] > 100 || ks->fk[0] < -100 ||
            (ks->fk[0] < 0 && ks->fk[2] != 0) || ks->fk[1] > 100)
            return;
        kp->spec[n].first = (short)ks->bsIndex;
        kp->spec[n].last = (short)ks->fk[0];
        kp->spec[n].step = (short)(ks->fk[1] < 1 ? 1 : ks->fk[1]);
        kp->spec[n].need = (unsigned char)keyNeed(ks->flags);
        n++;
    }
    if (n == 0) return; /* no reliable spec: the finder */
    kp->nspecs = (unsigned char)n;
    if (!variable) {
        kp->kind = PLAN_FIXED;
    } else {
        for (size_t i = 0; i < sizeof(sameKeysAsSpec) / sizeof(sameKeysAsSpec[0]); i++) {
            if (n == 1 && !strcmp(spec->fullname, sameKeysAsSpec[i])) {
                kp->kind = PLAN_FIXED_MAX;
                kp->spec[0].need = PERM_ALL;
            }
        }
    }
    if (kp->kind != PLAN_GENERIC && n == 1 && kp->spec[0].last == 0) kp->quickPos = (unsigned char)kp->spec[0].first;
}

static void indexCommands(void) {
    idCount = commandIdCount();
    if (idCount >= ACL_MAX_IDS) {
        serverLog(LL_WARNING, "ACL: %u command ids, more than the %d a permission bitmap holds", idCount,
                  ACL_MAX_IDS);
        exit(1);
    }
    /* Room for every id a bitmap holds: commands added later (modules)
     * take the next ids. */
    xfree(byId);
    xfree(keyPlans);
    byId = xcalloc(sizeof(Command *) * ACL_MAX_IDS);
    keyPlans = xcalloc(sizeof(KeyPlan) * ACL_MAX_IDS);
    unsigned cursor = 0;
    for (Command *cmd; (cmd = commandIterate(&cursor));) {
        byId[cmd->id] = cmd;
        planKeys(cmd, &keyPlans[cmd->id]);
        for (Command *sub = cmd->subcommands; sub && sub->name; sub++) {
            byId[sub->id] = sub;
            planKeys(sub, &keyPlans[sub->id]);
        }
    }
    static const struct {
        const char *name;
        int kind;
    } chanCmds[] = {{"publish", CHAN_FIRST},
                    {"spublish", CHAN_FIRST},
                    {"subscribe", CHAN_ALL},
                    {"ssubscribe", CHAN_ALL},
                    {"psubscribe", CHAN_ALL_PATTERNS}};
    execCommandEntry = commandLookup("exec", 4);
    for (size_t i = 0; i < sizeof(chanCmds) / sizeof(chanCmds[0]); i++) {
        Command *cmd = commandLookup(chanCmds[i].name, strlen(chanCmds[i].name));
        if (!cmd) continue;
        keyPlans[cmd->id].chan = (unsigned char)chanCmds[i].kind;
        keyPlans[cmd->id].quickPos = 0; /* the quick check sees no channels */
    }
}

static _Noreturn void startupFailure(const char *what) {
    serverLog(LL_WARNING, "%s", what);
    exit(1);
}

/* The first of Redis's two checks of the config's `user` lines, made as if
 * while the file is read: each line's rules are tried on a scratch user,
 * and an error other than an unknown command or category (left for the
 * second check) is a config file error.  Redis names in it the word of the
 * line (counting `user` as 0) at the failing rule's index among the rules,
 * and an unclosed selector parenthesis as an unknown name; so does Cairn. */
static void checkUserLine(const ConfigUserLine *l) {
    int mc = 0, bad = 0;
    sds *merged = mergeSelectorArgs(l->argv + 1, l->argc - 1, &mc, &bad);
    const char *msg = NULL;
    int at = 0;
    if (!merged) {
        msg = ruleError(RULE_UNKNOWN);
        at = bad;
    } else {
        AclUser *scratch = userCreateUnlinked(l->argv[0], sdsLen(l->argv[0]));
        for (int j = 0; j < mc && !msg; j++) {
            int rc = userSet(scratch, merged[j], sdsLen(merged[j]));
            if (rc != RULE_OK && rc != RULE_UNKNOWN) {
                msg = ruleError(rc);
                at = j;
            }
        }
        userFree(scratch);
        sdsFreeSplitRes(merged, mc);
    }
    if (!msg) return;
    const char *word = at == 0 ? "user" : l->argv[at - 1];
    sds e = sdsCatPrintf(sdsEmpty(), "Error in user declaration '%s': %s", word, msg);
    configFatalLineError(l->linenum, l->line, e);
}

static _Noreturn void aclLoadFailure(void) {
    serverLog(LL_WARNING, "Critical error while loading ACLs. Exiting.");
    exit(1);
}

/* Creates the config's users in order (a `user default` line resets the
 * default user first), as Redis's second check: a name with spaces or a
 * rule that fails now (an unknown command) ends the start-up. */
static void loadConfiguredUsers(void) {
    for (int i = 0; i < configUserCount; i++) checkUserLine(&configUsers[i]);
    for (int i = 0; i < configUserCount; i++) {
        sds *argv = configUsers[i].argv;
        int argc = configUsers[i].argc;
        const sds name = argv[0];
        if (hasSpaces(name, sdsLen(name))) {
            serverLog(LL_WARNING, "Spaces not allowed in ACL usernames");
            aclLoadFailure();
        }
        AclUser *u = aclUserByName(name, sdsLen(name));
        if (u) {
            userSet(u, "reset", 5);
        } else {
            u = userCreateUnlinked(name, sdsLen(name));
            linkUser(u);
        }
        int mc = 0, bad = 0;
        sds *merged = mergeSelectorArgs(argv + 1, argc - 1, &mc, &bad);
        for (int j = 0; merged && j < mc; j++) {
            int rc = userSet(u, merged[j], sdsLen(merged[j]));
            if (rc != RULE_OK) {
                serverLog(LL_WARNING, "Error loading ACL rule '%s' for the user named '%s': %s", merged[j], name,
                          ruleError(rc));
                aclLoadFailure();
            }
        }
        sdsFreeSplitRes(merged, mc);
    }
}

void aclCommandRemoved(unsigned id) {
    for (int i = 0; i < userCount; i++) {
        for (int j = 0; j < users[i]->nsels; j++) {
            Selector *s = users[i]->sels[j];
            s->bits[id / 64] &= ~(1ULL << (id % 64)); /* SEL_ALLCOMMANDS stays */
            resetFirstArgsFor(s, id);
        }
    }
}

void aclCommandsChanged(void) {
    if (!byId) return; /* before aclInit: it indexes them */
    indexCommands();
    for (int i = 0; i < userCount; i++) userChanged(users[i]);
}

void aclInit(void) {
    indexCommands();
    defaultUser = createDefaultUser();
    linkUser(defaultUser);
    setDefaultPassword(requirepass, requirepass ? sdsLen(requirepass) : 0);
    int haveFile = aclfile && aclfile[0];
    if (haveFile && configUserCount)
        startupFailure("Configuring Redis with users defined in redis.conf and at the same setting an ACL file "
                       "path is invalid. This setup is very likely to lead to configuration errors and security "
                       "holes, please define either an ACL file or declare users directly in your redis.conf, "
                       "but not both.");
    if (haveFile) {
        sds err = loadAclFile(aclfile, NULL);
        if (err) {
            sds e = sdsCatPrintf(sdsEmpty(), "Aborting Redis startup because of ACL errors: %s", err);
            startupFailure(e);
        }
    } else {
        loadConfiguredUsers();
    }
    publishDefaultAuth();
    scriptSetAclCheck(scriptCheck);
    scriptSetAclAllowed(scriptAllowed);
    serverFullKeyReadAccess = fullKeyReadAccess;
    serverSkipSanitizePayload = skipsSanitizePayload;
}

/* ------------------------------------------------------------------------ */
/* The ACL command                                                           */
/* ------------------------------------------------------------------------ */

static void aclSetuserCommand(Client *c) {
    sds name = c->argv[2];
    if (hasSpaces(name, sdsLen(name))) {
        replyError(c, "ERR Usernames can't contain spaces or null characters");
        return;
    }
    AclUser *u = aclUserByName(name, sdsLen(name));
    sds err = setUserFromArgs(u, name, sdsLen(name), c->argv + 3, c->argc - 3, c);
    if (err) {
        replyErrorLen(c, err, sdsLen(err));
        sdsFree(err);
        return;
    }
    replyOk(c);
}

static void replySelectorFields(Client *c, const Selector *s) {
    sds parts[3] = {describeCommands(s), describeKeys(s), describeChannels(s)};
    static const char *names[3] = {"commands", "keys", "channels"};
    for (int i = 0; i < 3; i++) {
        replyBulkCString(c, names[i]);
        replyBulkSds(c, parts[i]);
        sdsFree(parts[i]);
    }
}

static void aclGetuserCommand(Client *c) {
    AclUser *u = aclUserByName(c->argv[2], sdsLen(c->argv[2]));
    if (!u) {
        replyNull(c);
        return;
    }
    replyMapLen(c, 6);
    replyBulkCString(c, "flags");
    int nflags = 0;
    for (size_t j = 0; j < sizeof(userFlagNames) / sizeof(userFlagNames[0]); j++)
        if (u->flags & userFlagNames[j].flag) nflags++;
    replySetLen(c, nflags);
    for (size_t j = 0; j < sizeof(userFlagNames) / sizeof(userFlagNames[0]); j++)
        if (u->flags & userFlagNames[j].flag) replyBulkCString(c, userFlagNames[j].name);
    replyBulkCString(c, "passwords");
    replyArrayLen(c, u->npasses);
    for (int i = 0; i < u->npasses; i++) replyBulkSds(c, u->passes[i]);
    replySelectorFields(c, u->sels[0]);
    replyBulkCString(c, "selectors");
    replyArrayLen(c, u->nsels - 1);
    for (int i = 1; i < u->nsels; i++) {
        replyMapLen(c, 3);
        replySelectorFields(c, u->sels[i]);
    }
}

static void aclDeluserCommand(Client *c) {
    long long deleted = 0;
    for (int j = 2; j < c->argc; j++) {
        if (!strcmp(c->argv[j], "default")) {
            replyError(c, "ERR The 'default' user cannot be removed");
            return;
        }
    }
    for (int j = 2; j < c->argc; j++) {
        AclUser *u = aclUserByName(c->argv[j], sdsLen(c->argv[j]));
        if (!u) continue;
        unlinkUser(u);
        killClientsOf(u, c);
        userFree(u);
        deleted++;
    }
    replyLongLong(c, deleted);
}

static void aclUsersCommand(Client *c) {
    replyArrayLen(c, userCount);
    for (int i = 0; i < userCount; i++) replyBulkSds(c, users[i]->name);
}

static void aclListCommand(Client *c) {
    replyArrayLen(c, userCount);
    for (int i = 0; i < userCount; i++) {
        sds d = describeUser(users[i]);
        sds line = sdsCatPrintf(sdsEmpty(), "user %s %s", users[i]->name, d);
        replyBulkSds(c, line);
        sdsFree(line);
        sdsFree(d);
    }
}

static void aclWhoamiCommand(Client *c) { replyBulkCString(c, aclClientUserName(c)); }

static void aclCatCommand(Client *c) {
    if (c->argc > 3) { /* at most one category, as Redis's ACL CAT */
        replySubcommandSyntaxError(c);
        return;
    }
    if (c->argc == 2) {
        replyArrayLen(c, CATEGORY_COUNT);
        for (int i = 0; i < CATEGORY_COUNT; i++) replyBulkCString(c, categoryNames[i]);
        return;
    }
    int cat = categoryIndex(c->argv[2]);
    if (cat < 0) {
        replyErrorFormat(c, "ERR Unknown category '%.128s'", c->argv[2]);
        return;
    }
    uint64_t flag = 1ULL << cat;
    void *len = replyDeferredLen(c);
    long n = 0;
    unsigned cursor = 0;
    for (Command *cmd; (cmd = commandIterate(&cursor));) {
        if (cmd->spec->acl & flag) {
            replyBulkCString(c, cmd->fullname);
            n++;
        }
        for (Command *sub = cmd->subcommands; sub && sub->name; sub++) {
            if (sub->spec->acl & flag) {
                replyBulkCString(c, sub->fullname);
                n++;
            }
        }
    }
    replySetDeferredArrayLen(c, len, n);
}

static void aclGenpassCommand(Client *c) {
    long bits = 256;
    if (c->argc == 3 && getLongOrReply(c, c->argv[2], &bits, NULL) == -1) return;
    if (c->argc > 3) {
        replySubcommandSyntaxError(c);
        return;
    }
    if (bits <= 0 || bits > 4096) {
        replyError(c, "ERR ACL GENPASS argument must be the number of bits for the output password, a positive "
                      "number up to 4096");
        return;
    }
    size_t chars = (size_t)(bits + 3) / 4;
    unsigned char raw[1024];
    int fd = open("/dev/urandom", O_RDONLY);
    size_t got = 0;
    while (fd >= 0 && got < (chars + 1) / 2) {
        ssize_t r = read(fd, raw + got, (chars + 1) / 2 - got);
        if (r <= 0) break;
        got += (size_t)r;
    }
    if (fd >= 0) close(fd);
    for (; got < (chars + 1) / 2; got++) raw[got] = (unsigned char)rand(); /* /dev/urandom missing */
    static const char hex[] = "0123456789abcdef";
    char out[1025];
    for (size_t i = 0; i < chars; i++) out[i] = hex[(raw[i / 2] >> (i % 2 ? 0 : 4)) & 15];
    replyBulk(c, out, chars);
}

static void aclDryrunCommand(Client *c) {
    AclUser *u = aclUserByName(c->argv[2], sdsLen(c->argv[2]));
    if (!u) {
        replyErrorFormat(c, "ERR User '%s' not found", c->argv[2]);
        return;
    }
    int argc = c->argc - 3;
    sds *argv = c->argv + 3;
    Command *cmd = commandLookup(argv[0], sdsLen(argv[0]));
    if (cmd && cmd->subcommands && argc >= 2) cmd = commandLookupSub(cmd, argv[1], sdsLen(argv[1]));
    if (!cmd) {
        replyErrorFormat(c, "ERR Command '%s' not found", argv[0]);
        return;
    }
    if ((cmd->arity > 0 && cmd->arity != argc) || argc < -cmd->arity) {
        replyErrorFormat(c, "ERR wrong number of arguments for '%s' command", cmd->fullname);
        return;
    }
    int pos = 0;
    int rc = userCheck(u, cmd, argc, argv, &pos);
    if (rc == ACL_OK) {
        replyOk(c);
        return;
    }
    sds msg;
    if (rc == DENIED_CMD)
        msg = sdsCatPrintf(sdsEmpty(), "This user has no permissions to run the '%s' command", cmd->fullname);
    else if (rc == DENIED_KEY)
        msg = sdsCatPrintf(sdsEmpty(), "This user has no permissions to access the '%s' key", argv[pos]);
    else
        msg = sdsCatPrintf(sdsEmpty(), "This user has no permissions to access the '%s' channel", argv[pos]);
    replyBulkSds(c, msg);
    sdsFree(msg);
}

static const char *noAclFile =
    "ERR This Redis instance is not configured to use an ACL file. You may want to specify users via the ACL "
    "SETUSER command and then issue a CONFIG REWRITE (assuming you have a Redis configuration file set) in order "
    "to store users in the Redis configuration.";

static void aclSaveCommand(Client *c) {
    if (!aclfile || !aclfile[0]) {
        replyError(c, noAclFile);
        return;
    }
    if (saveAclFile(aclfile) == -1) {
        replyError(c, "ERR There was an error trying to save the ACLs. Please check the server logs for more "
                      "information");
        return;
    }
    replyOk(c);
}

static void aclLoadCommand(Client *c) {
    if (!aclfile || !aclfile[0]) {
        replyError(c, noAclFile);
        return;
    }
    sds err = loadAclFile(aclfile, c);
    if (err) {
        replyErrorLen(c, err, sdsLen(err));
        sdsFree(err);
        return;
    }
    replyOk(c);
}

static void aclHelpCommand(Client *c) {
    static const char *help[] = {
        "CAT [<category>]",
        "    List all commands that belong to <category>, or all command categories",
        "    when no category is specified.",
        "DELUSER <username> [<username> ...]",
        "    Delete a list of users.",
        "DRYRUN <username> <command> [<arg> ...]",
        "    Returns whether the user can execute the given command without executing the command.",
        "GETUSER <username>",
        "    Get the user's details.",
        "GENPASS [<bits>]",
        "    Generate a secure 256-bit user password. The optional `bits` argument can",
        "    be used to specify a different size.",
        "LIST",
        "    Show users details in config file format.",
        "LOAD",
        "    Reload users from the ACL file.",
        "LOG [<count> | RESET]",
        "    Show the ACL log entries.",
        "SAVE",
        "    Save the current config to the ACL file.",
        "SETUSER <username> <attribute> [<attribute> ...]",
        "    Create or modify a user with the specified attributes.",
        "USERS",
        "    List all the registered usernames.",
        "WHOAMI",
        "    Return the current connection username.",
        NULL};
    replyHelp(c, help);
}

static Command aclSubcommands[] = {
    {.name = "cat", .proc = aclCatCommand},
    {.name = "deluser", .proc = aclDeluserCommand},
    {.name = "dryrun", .proc = aclDryrunCommand},
    {.name = "genpass", .proc = aclGenpassCommand},
    {.name = "getuser", .proc = aclGetuserCommand},
    {.name = "help", .proc = aclHelpCommand},
    {.name = "list", .proc = aclListCommand},
    {.name = "load", .proc = aclLoadCommand},
    {.name = "log", .proc = aclLogCommand},
    {.name = "save", .proc = aclSaveCommand},
    {.name = "setuser", .proc = aclSetuserCommand},
    {.name = "users", .proc = aclUsersCommand},
    {.name = "whoami", .proc = aclWhoamiCommand},
    {0}};

Command aclCommands[] = {{.name = "acl", .subcommands = aclSubcommands}, {0}};

/* ------------------------------------------------------------------------ */
/* Configuration                                                             */
/* ------------------------------------------------------------------------ */

/* CONFIG SET requirepass: the default user gets the password (or nopass). */
static int applyRequirepass(const char **err) {
    (void)err;
    setDefaultPassword(requirepass, requirepass ? sdsLen(requirepass) : 0);
    return 0;
}

static const ConfigEnum aclPubsubEnum[] = {{"allchannels", 0}, {"resetchannels", 1}, {NULL, 0}};

static ConfigDef aclConfig[] = {
    CONFIG_STRING("requirepass", NULL, CF_SENSITIVE | CF_EMPTY_NULL | CF_BINARY, requirepass, "",
                  .apply = applyRequirepass, .rank = CONFIG_RANK_NETWORK + 12),
    CONFIG_STRING("aclfile", NULL, CF_IMMUTABLE | CF_EMPTY_NULL, aclfile, "", .rank = CONFIG_RANK_USERS + 0),
    CONFIG_ENUM("acl-pubsub-default", NULL, 0, aclPubsubDefault, aclPubsubEnum, "resetchannels",
                .rank = CONFIG_RANK_USERS + 1),
    CONFIG_LL("acllog-max-len", NULL, 0, acllogMaxLen, 0, LLONG_MAX, "128", .rank = CONFIG_RANK_USERS + 2),
};

/* A `user` line of the config file: kept for aclInit, which applies them
 * once the commands exist.  A user is declared once (the default user
 * too), as in Redis. */
static const char *parseUserLine(sds *argv, int argc, int linenum, const char *line) {
    static char err[512];
    if (argc < 2) return "Bad directive or wrong number of arguments";
    for (int i = 0; i < configUserCount; i++) {
        const sds other = configUsers[i].argv[0];
        if (sdsLen(other) == sdsLen(argv[1]) && !memcmp(other, argv[1], sdsLen(other))) {
            snprintf(err, sizeof(err),
                     "Error in user declaration '%s': Duplicate user found. A user can only be defined once in "
                     "config files", argv[1]);
            return err;
        }
    }
    configUsers = xrealloc(configUsers, sizeof(ConfigUserLine) * (size_t)(configUserCount + 1));
    ConfigUserLine *l = &configUsers[configUserCount++];
    l->argc = argc - 1;
    l->argv = xmalloc(sizeof(sds) * (size_t)(argc - 1));
    for (int i = 1; i < argc; i++) l->argv[i - 1] = sdsDup(argv[i]);
    l->linenum = linenum;
    l->line = sdsNew(line ? line : "");
    return NULL;
}

/* `user` lines: read by parseUserLine, written by CONFIG REWRITE from the
 * users of the moment (configUserLines). */
static const ConfigLineKind userLineKind = {"user", parseUserLine, configUserLines};

const ConfigLineKind *aclUserLineKind(void) { return &userLineKind; }

void aclRegisterConfig(void) {
    configRegister(aclConfig, CONFIG_COUNT_OF(aclConfig));
    configRegisterLineKind(&userLineKind);
}

/* ------------------------------------------------------------------------ */
/* The module layer's access (RedisModule_*ModuleUser, ACLCheck*,            */
/* AuthenticateClientWith*, ACLAddLogEntry)                                  */
/* ------------------------------------------------------------------------ */

void aclSetUserChangedHook(AclUserChangedHook *fn) { userChangedHook = fn; }

AclUser *aclModuleUserCreate(const char *name, size_t len) { return userCreateUnlinked(name, len); }

void aclModuleUserFree(AclUser *u) {
    if (!u) return;
    for (Client *o = server.net.clients; o; o = o->nextClient)
        if (o->user == u && userChangedHook) userChangedHook(o);
    killClientsOf(u, server.net.current);
    userFree(u);
}

int aclModuleUserSetRule(AclUser *u, const char *op, size_t len) { return userSet(u, op, len) == RULE_OK ? 0 : -1; }

sds aclModuleUserSetRules(AclUser *u, const char *rules) {
    int argc = 0;
    sds *argv = sdsSplitArgs(rules, &argc);
    if (!argv) return NULL; /* unbalanced quotes: no rules, as Redis's split gives */
    sds err = setUserFromArgs(u, u->name, sdsLen(u->name), argv, argc, server.net.current);
    sdsFreeSplitRes(argv, argc);
    return err;
}

sds aclUserDescribe(const AclUser *u) { return describeUser(u); }

const char *aclUserName(const AclUser *u) { return u->name; }

int aclUserIsOff(const AclUser *u) { return (u->flags & USER_OFF) != 0; }

int aclUserMayRun(AclUser *u, Command *cmd, int argc, sds *argv) {
    int pos = 0;
    return userCheck(u, cmd, argc, argv, &pos) == ACL_OK;
}

int aclUserMayAccessKey(AclUser *u, const char *key, size_t len, int read, int write) {
    unsigned need = (read ? PERM_R : 0) | (write ? PERM_W : 0);
    for (int i = 0; i < u->nsels; i++) {
        Selector *s = u->sels[i];
        if ((s->flags & SEL_ALLKEYS) || keyAllowed(s, key, len, need)) return 1;
    }
    return 0;
}

int aclUserMayAccessChannel(AclUser *u, const char *ch, size_t len, int isPattern) {
    for (int i = 0; i < u->nsels; i++) {
        Selector *s = u->sels[i];
        if ((s->flags & SEL_ALLCHANNELS) || channelAllowed(s->chans, s->nchans, ch, len, isPattern)) return 1;
    }
    return 0;
}

void aclModuleLogAdd(Client *c, const AclUser *u, const char *object, size_t len, int reason) {
    static const int reasons[] = {DENIED_AUTH, DENIED_CMD, DENIED_KEY, DENIED_CHANNEL};
    if (!c || reason < 0 || reason > 3) return;
    sds obj = sdsNewLen(object, len);
    Command fake;
    memset(&fake, 0, sizeof(fake));
    fake.fullname = obj;
    aclLogAdd(c, c, reasons[reason], CTX_MODULE, 1, &obj, &fake, 0, u->name, sdsLen(u->name));
    sdsFree(obj);
}

void aclClientSetUser(Client *c, AclUser *u) {
    if (userChangedHook) userChangedHook(c);
    c->user = u == defaultUser ? NULL : u;
    c->authenticated = 1;
}

void aclRevokeClient(Client *c) {
    if (userChangedHook) userChangedHook(c);
    c->user = NULL;
    c->authenticated = 0;
    if (c == server.net.current) c->flags |= CLIENT_CLOSE_AFTER_REPLY;
    else clientFreeAsync(c);
}
