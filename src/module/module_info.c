/* module_info.c -- the info API: RegisterInfoFunc, InfoAddSection,
 * InfoBeginDictField, InfoEndDictField, InfoAddFieldString,
 * InfoAddFieldCString, InfoAddFieldDouble, InfoAddFieldLongLong,
 * InfoAddFieldULongLong; and GetServerInfo, FreeServerInfo and the
 * ServerInfoGetField* readers (INFO's "name:value" lines of the sections
 * asked for, the default ones without a section).
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
#include "ds/util.h"
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

/* ---- GetServerInfo: INFO's fields for a module ---- */

struct RedisModuleServerInfoData {
    sds *keys, *vals;
    int n;
};

void moduleFreeServerInfo(void *p) {
    RedisModuleServerInfoData *d = p;
    for (int i = 0; i < d->n; i++) {
        sdsFree(d->keys[i]);
        sdsFree(d->vals[i]);
    }
    xfree(d->keys);
    xfree(d->vals);
    xfree(d);
}

/* The fields of INFO [section] ("name:value" lines; headers and blank
 * lines skipped), tracked by ctx's auto memory when it has it. */
static RedisModuleServerInfoData *RM_GetServerInfo(RedisModuleCtx *ctx, const char *section) {
    char *arg = (char *)section;
    sds text = infoText(section ? 1 : 0, section ? &arg : NULL);
    RedisModuleServerInfoData *d = xcalloc(sizeof(*d));
    int cap = 0;
    const char *p = text, *end = text + sdsLen(text);
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *le = nl ? nl : end;
        size_t len = (size_t)(le - p);
        if (len && p[len - 1] == '\r') len--;
        const char *colon = len && p[0] != '#' ? memchr(p, ':', len) : NULL;
        if (colon) {
            if (d->n == cap) {
                cap = cap ? cap * 2 : 64;
                d->keys = xrealloc(d->keys, sizeof(sds) * (size_t)cap);
                d->vals = xrealloc(d->vals, sizeof(sds) * (size_t)cap);
            }
            d->keys[d->n] = sdsNewLen(p, (size_t)(colon - p));
            d->vals[d->n] = sdsNewLen(colon + 1, len - (size_t)(colon - p) - 1);
            d->n++;
        }
        p = nl ? nl + 1 : end;
    }
    sdsFree(text);
    if (ctx) moduleAutoAdd(ctx, AM_INFO, d);
    return d;
}

static void RM_FreeServerInfo(RedisModuleCtx *ctx, RedisModuleServerInfoData *data) {
    if (!data) return;
    if (ctx) moduleAutoForget(ctx, data);
    moduleFreeServerInfo(data);
}

static sds infoValue(RedisModuleServerInfoData *d, const char *field) {
    for (int i = 0; i < d->n; i++)
        if (!strcmp(d->keys[i], field)) return d->vals[i];
    return NULL;
}

static RedisModuleString *RM_ServerInfoGetField(RedisModuleCtx *ctx, RedisModuleServerInfoData *data,
                                                const char *field) {
    sds v = infoValue(data, field);
    return v ? modStringNew(ctx, v, sdsLen(v)) : NULL;
}

static const char *RM_ServerInfoGetFieldC(RedisModuleServerInfoData *data, const char *field) {
    return infoValue(data, field);
}

static long long RM_ServerInfoGetFieldSigned(RedisModuleServerInfoData *data, const char *field, int *out_err) {
    sds v = infoValue(data, field);
    long long ll = 0;
    int ok = v && stringToLongLong(v, sdsLen(v), &ll);
    if (out_err) *out_err = !ok;
    return ok ? ll : 0;
}

static unsigned long long RM_ServerInfoGetFieldUnsigned(RedisModuleServerInfoData *data, const char *field,
                                                        int *out_err) {
    sds v = infoValue(data, field);
    unsigned long long ull = 0;
    int ok = v && sdsLen(v) > 0 && sdsLen(v) <= 20;
    for (size_t i = 0; ok && i < sdsLen(v); i++) {
        unsigned d = (unsigned)(v[i] - '0');
        if (d > 9 || ull > (~0ULL - d) / 10) ok = 0;
        else ull = ull * 10 + d;
    }
    if (out_err) *out_err = !ok;
    return ok ? ull : 0;
}

static double RM_ServerInfoGetFieldDouble(RedisModuleServerInfoData *data, const char *field, int *out_err) {
    sds v = infoValue(data, field);
    double dv = 0;
    int ok = v && stringToDouble(v, sdsLen(v), &dv);
    if (out_err) *out_err = !ok;
    return ok ? dv : 0;
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
                                  API(GetServerInfo),        API(FreeServerInfo),     API(ServerInfoGetField),
                                  API(ServerInfoGetFieldC),  API(ServerInfoGetFieldSigned),
                                  API(ServerInfoGetFieldUnsigned), API(ServerInfoGetFieldDouble), {NULL, NULL}};
