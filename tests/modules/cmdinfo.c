/* cmdinfo.c -- test module: command metadata (SetCommandInfo with key
 * specs, arguments, history, tips, arity), GetCommand, and a container
 * command with subcommands (CreateSubcommand).  Every command replies
 * its argument count, so that dispatch (arity, subcommands) shows too. */
#include <string.h>

#include "redismodule.h"

static int cmdCount(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    (void)argv;
    return RedisModule_ReplyWithLongLong(ctx, argc);
}

int RedisModule_OnLoad(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    (void)argv, (void)argc;
    if (RedisModule_Init(ctx, "cmdinfo", 2, REDISMODULE_APIVER_1) == REDISMODULE_ERR) return REDISMODULE_ERR;

    if (RedisModule_CreateCommand(ctx, "ci.plain", cmdCount, "write deny-oom", 0, 0, 0) == REDISMODULE_ERR)
        return REDISMODULE_ERR;
    RedisModuleCommand *plain = RedisModule_GetCommand(ctx, "ci.plain");
    if (!plain || RedisModule_GetCommand(ctx, "get") != NULL) return REDISMODULE_ERR;
    RedisModuleCommandHistoryEntry history[] = {{"1.1.0", "Added the MODE argument."}, {0}};
    RedisModuleCommandArg modeArgs[] = {{.name = "nx", .type = REDISMODULE_ARG_TYPE_PURE_TOKEN, .token = "NX"},
                                        {.name = "xx", .type = REDISMODULE_ARG_TYPE_PURE_TOKEN, .token = "XX"},
                                        {0}};
    RedisModuleCommandArg args[] = {
        {.name = "key", .type = REDISMODULE_ARG_TYPE_KEY, .key_spec_index = 0},
        {.name = "mode", .type = REDISMODULE_ARG_TYPE_ONEOF, .flags = REDISMODULE_CMD_ARG_OPTIONAL,
         .subargs = modeArgs, .since = "1.1.0"},
        {.name = "value", .type = REDISMODULE_ARG_TYPE_STRING, .flags = REDISMODULE_CMD_ARG_MULTIPLE,
         .summary = "the values"},
        {0}};
    RedisModuleCommandKeySpec plainSpecs[] = {{.notes = "the target",
                                               .flags = REDISMODULE_CMD_KEY_RW | REDISMODULE_CMD_KEY_UPDATE,
                                               .begin_search_type = REDISMODULE_KSPEC_BS_INDEX,
                                               .bs.index.pos = 1,
                                               .find_keys_type = REDISMODULE_KSPEC_FK_RANGE,
                                               .fk.range = {0, 1, 0}},
                                              {0}};
    RedisModuleCommandInfo plainInfo = {.version = REDISMODULE_COMMAND_INFO_VERSION,
                                        .summary = "Sets values.",
                                        .complexity = "O(N)",
                                        .since = "1.0.0",
                                        .history = history,
                                        .tips = "nondeterministic_output request_policy:all_shards",
                                        .arity = -3,
                                        .key_specs = plainSpecs,
                                        .args = args};
    if (RedisModule_SetCommandInfo(plain, &plainInfo) == REDISMODULE_ERR) return REDISMODULE_ERR;

    /* keys after a keyword, counted: movable keys */
    if (RedisModule_CreateCommand(ctx, "ci.keyword", cmdCount, "readonly", 0, 0, 0) == REDISMODULE_ERR)
        return REDISMODULE_ERR;
    RedisModuleCommandKeySpec kwSpecs[] = {{.flags = REDISMODULE_CMD_KEY_RO | REDISMODULE_CMD_KEY_ACCESS,
                                            .begin_search_type = REDISMODULE_KSPEC_BS_KEYWORD,
                                            .bs.keyword = {"KEYS", 1},
                                            .find_keys_type = REDISMODULE_KSPEC_FK_KEYNUM,
                                            .fk.keynum = {0, 1, 1}},
                                           {.flags = REDISMODULE_CMD_KEY_OW | REDISMODULE_CMD_KEY_INSERT,
                                            .begin_search_type = REDISMODULE_KSPEC_BS_INDEX,
                                            .bs.index.pos = 1},
                                           {0}};
    RedisModuleCommandInfo kwInfo = {.version = REDISMODULE_COMMAND_INFO_VERSION, .arity = -2, .key_specs = kwSpecs};
    if (RedisModule_SetCommandInfo(RedisModule_GetCommand(ctx, "ci.keyword"), &kwInfo) == REDISMODULE_ERR)
        return REDISMODULE_ERR;

    /* invalid infos are refused */
    RedisModuleCommandKeySpec badSpecs[] = {{.flags = REDISMODULE_CMD_KEY_RO | REDISMODULE_CMD_KEY_RW,
                                             .begin_search_type = REDISMODULE_KSPEC_BS_INDEX,
                                             .bs.index.pos = 1},
                                            {0}};
    RedisModuleCommandInfo badInfo = {.version = REDISMODULE_COMMAND_INFO_VERSION, .key_specs = badSpecs};
    if (RedisModule_SetCommandInfo(plain, &badInfo) != REDISMODULE_ERR) return REDISMODULE_ERR;

    /* a container and its subcommands */
    if (RedisModule_CreateCommand(ctx, "ci.container", NULL, "", 0, 0, 0) == REDISMODULE_ERR)
        return REDISMODULE_ERR;
    RedisModuleCommand *parent = RedisModule_GetCommand(ctx, "ci.container");
    if (!parent || RedisModule_CreateSubcommand(parent, "get", cmdCount, "readonly fast", 2, 2, 1) ==
                       REDISMODULE_ERR ||
        RedisModule_CreateSubcommand(parent, "set", cmdCount, "write", 2, 2, 1) == REDISMODULE_ERR ||
        RedisModule_CreateSubcommand(parent, "get", cmdCount, "", 0, 0, 0) != REDISMODULE_ERR ||
        RedisModule_CreateSubcommand(plain, "sub", cmdCount, "", 0, 0, 0) != REDISMODULE_ERR)
        return REDISMODULE_ERR;
    RedisModuleCommand *sub = RedisModule_GetCommand(ctx, "ci.container|set");
    if (!sub || RedisModule_CreateSubcommand(sub, "deeper", cmdCount, "", 0, 0, 0) != REDISMODULE_ERR)
        return REDISMODULE_ERR;
    RedisModuleCommandInfo subInfo = {.version = REDISMODULE_COMMAND_INFO_VERSION, .summary = "Sets it.", .arity = 4};
    if (RedisModule_SetCommandInfo(sub, &subInfo) == REDISMODULE_ERR) return REDISMODULE_ERR;
    return REDISMODULE_OK;
}
