/* filter.c -- test module: command filters (RegisterCommandFilter with and
 * without REDISMODULE_CMDFILTER_NOSELF, UnregisterCommandFilter and the
 * CommandFilterArg* functions).
 *
 * The first filter (no flags) rewrites any command's arguments:
 *   @delme         is deleted
 *   @insertbefore  gets "--before--" inserted before it
 *   @insertafter   gets "--after--" inserted after it
 *   @replaceme     becomes "--replaced--"
 *   @retain X      X is retained (RetainString) for filter.retained, and
 *                  "@retain" is deleted
 *   @count         becomes the argument count the filter saw
 *   @dropall       every argument is deleted (nothing runs)
 * The second (NOSELF) turns "@noself" into "--noself--", except in what
 * this module runs through RedisModule_Call.
 *
 *   filter.call cmd arg...  RedisModule_Call(cmd, "v", args), its reply
 *                           ("%x" is passed on as "@x")
 *   filter.retained         the retained string (or null)
 *   filter.unregister       unregisters the first filter (twice: OK, ERR)
 *   filter.badpos           ArgGet/Insert/Replace/Delete out of range
 *                           (seen by the next command: see below)
 * Replies are compared byte for byte with redis-server 7.0.15's. */
#include <string.h>

#include "redismodule.h"

static RedisModuleCommandFilter *first;
static RedisModuleString *retained;
static int badpos[5];
static int checkBad;

static int is(RedisModuleString *s, const char *lit) {
    size_t len;
    const char *p = RedisModule_StringPtrLen(s, &len);
    return len == strlen(lit) && !memcmp(p, lit, len);
}

static void rewrite(RedisModuleCommandFilterCtx *f) {
    if (checkBad) {
        int n = RedisModule_CommandFilterArgsCount(f);
        RedisModuleString *x = RedisModule_CreateString(NULL, "x", 1);
        badpos[0] = RedisModule_CommandFilterArgGet(f, n) == NULL;
        badpos[1] = RedisModule_CommandFilterArgInsert(f, n + 1, x);
        badpos[2] = RedisModule_CommandFilterArgReplace(f, n, x);
        badpos[3] = RedisModule_CommandFilterArgDelete(f, -1);
        badpos[4] = RedisModule_CommandFilterArgGet(f, -1) == NULL;
        RedisModule_FreeString(NULL, x);
        checkBad = 0;
    }
    for (int i = 0; i < RedisModule_CommandFilterArgsCount(f); i++) {
        RedisModuleString *a = RedisModule_CommandFilterArgGet(f, i);
        if (is(a, "@delme")) {
            RedisModule_CommandFilterArgDelete(f, i);
            i--;
        } else if (is(a, "@insertbefore")) {
            RedisModule_CommandFilterArgInsert(f, i, RedisModule_CreateString(NULL, "--before--", 10));
            i++;
        } else if (is(a, "@insertafter")) {
            RedisModule_CommandFilterArgInsert(f, i + 1, RedisModule_CreateString(NULL, "--after--", 9));
            i++;
        } else if (is(a, "@replaceme")) {
            RedisModule_CommandFilterArgReplace(f, i, RedisModule_CreateString(NULL, "--replaced--", 12));
        } else if (is(a, "@retain") && i + 1 < RedisModule_CommandFilterArgsCount(f)) {
            if (retained) RedisModule_FreeString(NULL, retained);
            retained = RedisModule_CommandFilterArgGet(f, i + 1);
            RedisModule_RetainString(NULL, retained);
            RedisModule_CommandFilterArgDelete(f, i);
            i--;
        } else if (is(a, "@count")) {
            RedisModule_CommandFilterArgReplace(
                f, i, RedisModule_CreateStringFromLongLong(NULL, RedisModule_CommandFilterArgsCount(f)));
        } else if (is(a, "@dropall")) {
            while (RedisModule_CommandFilterArgsCount(f) > 0) RedisModule_CommandFilterArgDelete(f, 0);
            return;
        }
    }
}

static void noself(RedisModuleCommandFilterCtx *f) {
    for (int i = 0; i < RedisModule_CommandFilterArgsCount(f); i++)
        if (is(RedisModule_CommandFilterArgGet(f, i), "@noself"))
            RedisModule_CommandFilterArgReplace(f, i, RedisModule_CreateString(NULL, "--noself--", 10));
}

static int cmdCall(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    if (argc < 2) return RedisModule_WrongArity(ctx);
    const char *cmd = RedisModule_StringPtrLen(argv[1], NULL);
    /* "%x" reaches the Call as "@x" (the client's own command
     * went through the filters already) */
    RedisModuleString *args[16];
    if (argc - 2 > 16) return RedisModule_ReplyWithError(ctx, "ERR too many");
    for (int i = 2; i < argc; i++) {
        size_t len;
        const char *p = RedisModule_StringPtrLen(argv[i], &len);
        if (len > 1 && p[0] == '%') {
            args[i - 2] = RedisModule_CreateStringPrintf(ctx, "@%.*s", (int)len - 1, p + 1);
        } else {
            args[i - 2] = argv[i];
        }
    }
    RedisModuleCallReply *r = RedisModule_Call(ctx, cmd, "v", args, (size_t)(argc - 2));
    for (int i = 2; i < argc; i++)
        if (args[i - 2] != argv[i]) RedisModule_FreeString(ctx, args[i - 2]);
    if (!r) return RedisModule_ReplyWithError(ctx, "ERR call failed");
    RedisModule_ReplyWithCallReply(ctx, r);
    RedisModule_FreeCallReply(r);
    return REDISMODULE_OK;
}

static int cmdRetained(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    (void)argv, (void)argc;
    if (!retained) return RedisModule_ReplyWithNull(ctx);
    return RedisModule_ReplyWithString(ctx, retained);
}

static int cmdUnregister(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    (void)argv, (void)argc;
    int rc = RedisModule_UnregisterCommandFilter(ctx, first);
    return RedisModule_ReplyWithSimpleString(ctx, rc == REDISMODULE_OK ? "OK" : "ERR");
}

static int cmdBadpos(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    (void)argv, (void)argc;
    if (argc == 1) {
        checkBad = 1; /* the next command's filter run checks */
        return RedisModule_ReplyWithSimpleString(ctx, "armed");
    }
    RedisModule_ReplyWithArray(ctx, 5);
    for (int i = 0; i < 5; i++) RedisModule_ReplyWithLongLong(ctx, badpos[i]);
    return REDISMODULE_OK;
}

int RedisModule_OnLoad(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    (void)argv, (void)argc;
    if (RedisModule_Init(ctx, "filter", 1, REDISMODULE_APIVER_1) == REDISMODULE_ERR) return REDISMODULE_ERR;
    first = RedisModule_RegisterCommandFilter(ctx, rewrite, 0);
    if (!first || !RedisModule_RegisterCommandFilter(ctx, noself, REDISMODULE_CMDFILTER_NOSELF))
        return REDISMODULE_ERR;
    if (RedisModule_CreateCommand(ctx, "filter.call", cmdCall, "write", 0, 0, 0) == REDISMODULE_ERR ||
        RedisModule_CreateCommand(ctx, "filter.retained", cmdRetained, "readonly", 0, 0, 0) == REDISMODULE_ERR ||
        RedisModule_CreateCommand(ctx, "filter.unregister", cmdUnregister, "readonly", 0, 0, 0) == REDISMODULE_ERR ||
        RedisModule_CreateCommand(ctx, "filter.badpos", cmdBadpos, "readonly", 0, 0, 0) == REDISMODULE_ERR)
        return REDISMODULE_ERR;
    return REDISMODULE_OK;
}
