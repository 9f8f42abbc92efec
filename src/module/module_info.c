/* module_info.c -- the info API: RegisterInfoFunc, InfoAddSection,
 * InfoBeginDictField, InfoEndDictField, InfoAddFieldString,
 * InfoAddFieldCString, InfoAddFieldDouble, InfoAddFieldLongLong,
 * InfoAddFieldULongLong.
 *
 * INFO everything / INFO modules call every module's info function; INFO
 * <name> calls them when name is no built-in section, and keeps the
 * sections named <module> or <module>_<section> (server/info.c decides).
 * A section is "# <module>" (empty name) or "# <module>_<name>"; its fields
 * are "<module>_<field>:<value>", a dict field "<module>_<field>:k=v,k=v".
 * InfoAddSection answers ERR for a section not asked for, and the fields
 * that follow it are left out.
 *
 * Invariants: a module's info function goes with the module (it is a
 * field of Module); a dict field left open is closed by the next section,
 * field or the end of the module's function. */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "ds/alloc.h"
#include "module/module_int.h"
#include "server/info.h"

struct RedisModuleInfoCtx {
    Module *module;
    sds s;
    char **names;
    int nnames; /* -1: every section */
    int *first;
    int inSection; /* the current section was asked for */
    int inDict;
};

static int RM_RegisterInfoFunc(RedisModuleCtx *ctx, RedisModuleInfoFunc cb) {
    if (!ctx || !ctx->module) return REDISMODULE_ERR;
    ctx->module->infoFunc = cb;
    return REDISMODULE_OK;
}

static void endDict(RedisModuleInfoCtx *ic) {
    if (!ic->inDict) return;
    if (sdsLen(ic->s) && ic->s[sdsLen(ic->s) - 1] == ',') sdsSetLen(ic->s, sdsLen(ic->s) - 1);
    ic->s = sdsCat(ic->s, "\r\n");
    ic->inDict = 0;
}

static int wanted(RedisModuleInfoCtx *ic, const char *full) {
    if (ic->nnames < 0) return 1;
    for (int i = 0; i < ic->nnames; i++)
        if (!strcasecmp(ic->names[i], full) || !strcasecmp(ic->names[i], ic->module->name)) return 1;
    return 0;
}

static int RM_InfoAddSection(RedisModuleInfoCtx *ic, const char *name) {
    endDict(ic);
    sds full = sdsNew(ic->module->name);
    if (name && *name) full = sdsCat(sdsCat(full, "_"), name);
    ic->inSection = wanted(ic, full);
    if (ic->inSection) {
        if (!*ic->first) ic->s = sdsCat(ic->s, "\r\n");
        *ic->first = 0;
        ic->s = sdsCatPrintf(ic->s, "# %s\r\n", full);
    }
    sdsFree(full);
    return ic->inSection ? REDISMODULE_OK : REDISMODULE_ERR;
}

static int RM_InfoBeginDictField(RedisModuleInfoCtx *ic, const char *name) {
    if (!ic->inSection) return REDISMODULE_ERR;
    endDict(ic);
    ic->s = sdsCatPrintf(ic->s, "%s_%s:", ic->module->name, name);
    ic->inDict = 1;
    return REDISMODULE_OK;
}

static int RM_InfoEndDictField(RedisModuleInfoCtx *ic) {
    if (!ic->inDict) return REDISMODULE_ERR;
    endDict(ic);
    return REDISMODULE_OK;
}

/* One field: "k=v," inside a dict, else "<module>_k:v\r\n". */
static int addField(RedisModuleInfoCtx *ic, const char *field, const char *v, size_t len) {
    if (!ic->inSection) return REDISMODULE_ERR;
    if (ic->inDict) {
        ic->s = sdsCatPrintf(ic->s, "%s=", field);
        ic->s = sdsCatLen(ic->s, v, len);
        ic->s = sdsCat(ic->s, ",");
    } else {
        ic->s = sdsCatPrintf(ic->s, "%s_%s:", ic->module->name, field);
        ic->s = sdsCatLen(ic->s, v, len);
        ic->s = sdsCat(ic->s, "\r\n");
    }
    return REDISMODULE_OK;
}

static int RM_InfoAddFieldString(RedisModuleInfoCtx *ic, const char *field, RedisModuleString *value) {
    return addField(ic, field, value->s, sdsLen(value->s));
}

static int RM_InfoAddFieldCString(RedisModuleInfoCtx *ic, const char *field, const char *value) {
    return addField(ic, field, value, strlen(value));
}

static int RM_InfoAddFieldDouble(RedisModuleInfoCtx *ic, const char *field, double value) {
    char buf[64];
    int n = snprintf(buf, sizeof(buf), "%.17g", value);
    return addField(ic, field, buf, (size_t)n);
}

static int RM_InfoAddFieldLongLong(RedisModuleInfoCtx *ic, const char *field, long long value) {
    char buf[32];
    int n = snprintf(buf, sizeof(buf), "%lld", value);
    return addField(ic, field, buf, (size_t)n);
}

static int RM_InfoAddFieldULongLong(RedisModuleInfoCtx *ic, const char *field, unsigned long long value) {
    char buf[32];
    int n = snprintf(buf, sizeof(buf), "%llu", value);
    return addField(ic, field, buf, (size_t)n);
}

static sds moduleSections(sds s, char **names, int nnames, int *first) {
    for (Module *m = moduleList(); m; m = m->next) {
        if (!m->infoFunc) continue;
        RedisModuleInfoCtx ic = {.module = m, .s = s, .names = names, .nnames = nnames, .first = first};
        ((RedisModuleInfoFunc)m->infoFunc)(&ic, 0);
        endDict(&ic);
        s = ic.s;
    }
    return s;
}

void moduleInfoInit(void) { infoSetModuleSectionsHook(moduleSections); }

#define API(fn) {"RedisModule_" #fn, (void *)(uintptr_t)RM_##fn}
const ApiEntry moduleInfoApi[] = {API(RegisterInfoFunc),     API(InfoAddSection),     API(InfoBeginDictField),
                                  API(InfoEndDictField),     API(InfoAddFieldString), API(InfoAddFieldCString),
                                  API(InfoAddFieldDouble),   API(InfoAddFieldLongLong), API(InfoAddFieldULongLong),
                                  {NULL, NULL}};
