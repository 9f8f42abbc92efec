/* module_config.c -- module configs: RegisterStringConfig, RegisterBoolConfig,
 * RegisterEnumConfig, RegisterNumericConfig and LoadConfigs, and the values
 * given before a module registers them (config file lines
 * `<module>.<name> value`, MODULE LOADEX's CONFIG pairs).
 *
 * A module config is a directive of the config engine named
 * "<module>.<name>" (a CT_SPECIAL row embedded first in ModConfig), so
 * CONFIG GET/SET/REWRITE treat it as any other: GET asks the module's get
 * callback, SET parses the text by the config's kind and hands the value to
 * the set callback (its error string becomes CONFIG SET's reason), then the
 * module's apply callbacks run once each per CONFIG SET (by function and
 * privdata).  REWRITE writes the value when it differs from the default.
 *
 * Invariants: LoadConfigs sets
 * each of the module's configs from the queued value of its name (taken
 * out of the queue), else from its default; a module that registered
 * configs and did not call LoadConfigs fails its load; a module's configs
 * leave the engine with it (failed load, unload).  Queued values nobody
 * took fail MODULE LOADEX, or the start-up after the loadmodule lines, as
 * Redis 7.0 does. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/config.h"
#include "core/log.h"
#include "core/server.h"
#include "ds/alloc.h"
#include "ds/util.h"
#include "module/module_int.h"

enum { MC_STRING, MC_BOOL, MC_ENUM, MC_NUMERIC };

typedef struct ModConfig {
    ConfigDef def; /* first: the engine hands &def back */
    Module *module;
    char *fullName;
    const char *shortName; /* inside fullName */
    int kind;
    unsigned flags; /* REDISMODULE_CONFIG_* */
    void *getfn, *setfn;
    RedisModuleConfigApplyFunc applyfn;
    void *privdata;
    long long min, max;
    ConfigEnum *enums; /* MC_ENUM: nenums + a NULL row */
    int nenums;
    struct ModConfig *next;
} ModConfig;

static ModConfig *configs;

/* Queued values: (name, value) pairs waiting for their module. */
typedef struct Queued {
    sds name, value;
} Queued;
static Queued *queue;
static int queueCount;

static void queueAdd(const char *name, const char *value) {
    for (int i = 0; i < queueCount; i++) {
        if (!strcasecmp(queue[i].name, name)) { /* a later line wins */
            sdsFree(queue[i].value);
            queue[i].value = sdsNew(value);
            return;
        }
    }
    queue = xrealloc(queue, sizeof(*queue) * (size_t)(queueCount + 1));
    queue[queueCount].name = sdsNew(name);
    queue[queueCount].value = sdsNew(value);
    queueCount++;
}

/* The queued value of name (taken out: the caller frees it), or NULL. */
static sds queueTake(const char *name) {
    for (int i = 0; i < queueCount; i++) {
        if (strcasecmp(queue[i].name, name)) continue;
        sds v = queue[i].value;
        sdsFree(queue[i].name);
        queue[i] = queue[--queueCount];
        return v;
    }
    return NULL;
}

static void queueClear(void) {
    for (int i = 0; i < queueCount; i++) {
        sdsFree(queue[i].name);
        sdsFree(queue[i].value);
    }
    queueCount = 0;
}

/* The text of the module's error string into the engine's buffer. */
static const char *takeError(RedisModuleString *err, const char *fallback) {
    if (!err) return fallback;
    size_t size;
    char *buf = configErrorBuffer(&size);
    snprintf(buf, size, "%s", err->s);
    modStringRelease(err);
    return buf;
}

static const char *enumName(const ModConfig *mc, int v) {
    for (int i = 0; i < mc->nenums; i++)
        if (mc->enums[i].value == v) return mc->enums[i].name;
    return NULL;
}

/* An enum value's text: its name, or with BITFLAGS the names of its bits
 * (space-separated). */
static sds enumText(const ModConfig *mc, int v) {
    const char *n = enumName(mc, v);
    if (n || !(mc->flags & REDISMODULE_CONFIG_BITFLAGS)) return sdsNew(n ? n : "");
    sds out = sdsEmpty();
    for (int i = 0; i < mc->nenums; i++) {
        int bits = mc->enums[i].value;
        if (!bits || (v & bits) != bits) continue;
        if (sdsLen(out)) out = sdsCat(out, " ");
        out = sdsCat(out, mc->enums[i].name);
        v &= ~bits;
    }
    return out;
}

/* The value's text: what CONFIG GET shows. */
static sds mcGet(const ConfigDef *d) {
    const ModConfig *mc = (const ModConfig *)d;
    const char *name = mc->shortName;
    switch (mc->kind) {
    case MC_BOOL: return sdsNew(((RedisModuleConfigGetBoolFunc)mc->getfn)(name, mc->privdata) ? "yes" : "no");
    case MC_NUMERIC:
        return sdsFromLongLong(((RedisModuleConfigGetNumericFunc)mc->getfn)(name, mc->privdata));
    case MC_ENUM: return enumText(mc, ((RedisModuleConfigGetEnumFunc)mc->getfn)(name, mc->privdata));
    default: {
        RedisModuleString *s = ((RedisModuleConfigGetStringFunc)mc->getfn)(name, mc->privdata);
        return s ? sdsDup(s->s) : sdsEmpty();
    }
    }
}

/* Parses text by the config's kind and calls the set callback: 0, or -1
 * with *err. */
static int mcSetText(ModConfig *mc, const char *text, int isDefault, const char **err) {
    RedisModuleString *merr = NULL;
    int rc;
    const char *name = mc->shortName;
    switch (mc->kind) {
    case MC_BOOL: {
        int v = configYesNo(text);
        if (v == -1) {
            *err = "argument must be 'yes' or 'no'";
            return -1;
        }
        rc = ((RedisModuleConfigSetBoolFunc)mc->setfn)(name, v, mc->privdata, &merr);
        break;
    }
    case MC_NUMERIC: {
        long long v;
        if (mc->flags & REDISMODULE_CONFIG_MEMORY) {
            unsigned long long u;
            if (configParseMemory(text, &u) == -1 || u > (unsigned long long)LLONG_MAX) {
                *err = "argument must be a memory value";
                return -1;
            }
            v = (long long)u;
        } else if (!stringToLongLong(text, strlen(text), &v)) {
            *err = "argument couldn't be parsed into an integer";
            return -1;
        }
        if (!isDefault && (v < mc->min || v > mc->max)) {
            size_t size;
            char *buf = configErrorBuffer(&size);
            snprintf(buf, size, "argument must be between %lld and %lld inclusive", mc->min, mc->max);
            *err = buf;
            return -1;
        }
        rc = ((RedisModuleConfigSetNumericFunc)mc->setfn)(name, v, mc->privdata, &merr);
        break;
    }
    case MC_ENUM: {
        int v = 0;
        if (mc->flags & REDISMODULE_CONFIG_BITFLAGS) {
            int argc = 0;
            sds *argv = sdsSplitArgs(text, &argc);
            if (!argv || argc == 0) {
                if (argv) sdsFreeSplitRes(argv, argc);
                configEnumFind(&mc->def, "", err);
                return -1;
            }
            for (int i = 0; i < argc; i++) {
                const ConfigEnum *e = configEnumFind(&mc->def, argv[i], err);
                if (!e) {
                    sdsFreeSplitRes(argv, argc);
                    return -1;
                }
                v |= e->value;
            }
            sdsFreeSplitRes(argv, argc);
        } else {
            const ConfigEnum *e = configEnumFind(&mc->def, text, err);
            if (!e) return -1;
            v = e->value;
        }
        rc = ((RedisModuleConfigSetEnumFunc)mc->setfn)(name, v, mc->privdata, &merr);
        break;
    }
    default: {
        RedisModuleString *v = modStringNew(NULL, text, strlen(text));
        rc = ((RedisModuleConfigSetStringFunc)mc->setfn)(name, v, mc->privdata, &merr);
        modStringRelease(v);
        break;
    }
    }
    if (rc == REDISMODULE_ERR) {
        *err = takeError(merr, "module config set failed");
        return -1;
    }
    if (merr) modStringRelease(merr);
    return 0;
}

static int mcSet(ConfigDef *d, sds *argv, int argc, const char **err) {
    if (argc != 1) {
        *err = "wrong number of arguments";
        return -1;
    }
    return mcSetText((ModConfig *)d, argv[0], 0, err);
}

static int mcApply(ConfigDef *d, const char **err) {
    ModConfig *mc = (ModConfig *)d;
    if (!mc->applyfn) return 0;
    RedisModuleCtx ctx;
    moduleCtxInit(&ctx, mc->module, NULL);
    RedisModuleString *merr = NULL;
    int rc = mc->applyfn(&ctx, mc->privdata, &merr);
    moduleCtxDone(&ctx);
    if (rc == REDISMODULE_ERR) {
        *err = takeError(merr, "module config apply failed");
        return -1;
    }
    if (merr) modStringRelease(merr);
    return 0;
}

static void mcFree(ModConfig *mc) {
    for (int i = 0; i < mc->nenums; i++) xfree((char *)mc->enums[i].name);
    xfree(mc->enums);
    sdsFree(mc->def.defaultValue);
    xfree(mc->fullName);
    xfree(mc);
}

/* Letters, digits, '-' and '_' (Redis's rule for a module config's name). */
static int validName(const char *name) {
    if (!*name) return 0;
    for (const char *p = name; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '-' ||
              *p == '_'))
            return 0;
    return 1;
}

#define CONFIG_FLAGS_KNOWN                                                                                      \
    (REDISMODULE_CONFIG_IMMUTABLE | REDISMODULE_CONFIG_SENSITIVE | REDISMODULE_CONFIG_HIDDEN |                  \
     REDISMODULE_CONFIG_PROTECTED | REDISMODULE_CONFIG_DENY_LOADING | REDISMODULE_CONFIG_MEMORY |              \
     REDISMODULE_CONFIG_BITFLAGS)

/* A new config of the module, or NULL with errno (EBUSY: no module name
 * yet; EINVAL: bad name or flags; EALREADY: the name is taken). */
static ModConfig *mcNew(RedisModuleCtx *ctx, const char *name, unsigned flags, int kind) {
    Module *m = ctx ? ctx->module : NULL;
    if (!m || !m->name) {
        errno = EBUSY;
        return NULL;
    }
    if (!name || !validName(name) || (flags & ~CONFIG_FLAGS_KNOWN) ||
        ((flags & REDISMODULE_CONFIG_MEMORY) && kind != MC_NUMERIC) ||
        ((flags & REDISMODULE_CONFIG_BITFLAGS) && kind != MC_ENUM)) {
        errno = EINVAL;
        return NULL;
    }
    size_t n = strlen(m->name) + 1 + strlen(name) + 1;
    char *full = xmalloc(n);
    snprintf(full, n, "%s.%s", m->name, name);
    for (ModConfig *c = configs; c; c = c->next) {
        if (!strcasecmp(c->fullName, full)) {
            xfree(full);
            errno = EALREADY;
            return NULL;
        }
    }
    ModConfig *mc = xcalloc(sizeof(*mc));
    mc->module = m;
    mc->fullName = full;
    mc->shortName = full + strlen(m->name) + 1;
    mc->kind = kind;
    mc->flags = flags;
    mc->def.name = full;
    mc->def.type = CT_SPECIAL;
    mc->def.set = mcSet;
    mc->def.get = mcGet;
    mc->def.applyDef = mcApply;
    if (flags & REDISMODULE_CONFIG_IMMUTABLE) mc->def.flags |= CF_IMMUTABLE;
    if (flags & REDISMODULE_CONFIG_SENSITIVE) mc->def.flags |= CF_SENSITIVE;
    if (flags & REDISMODULE_CONFIG_HIDDEN) mc->def.flags |= CF_HIDDEN;
    if (flags & REDISMODULE_CONFIG_PROTECTED) mc->def.flags |= CF_PROTECTED;
    return mc;
}

/* Enters mc in the engine and the module's list; the default text d. */
static int mcAdd(ModConfig *mc, void *getfn, void *setfn, RedisModuleConfigApplyFunc applyfn, void *privdata,
                 sds deflt) {
    mc->getfn = getfn;
    mc->setfn = setfn;
    mc->applyfn = applyfn;
    mc->privdata = privdata;
    /* CONFIG SET runs an apply callback once per (function, privdata). */
    mc->def.applyKey = mc;
    for (ModConfig *c = configs; c; c = c->next)
        if (c->applyfn == applyfn && c->privdata == privdata) mc->def.applyKey = c->def.applyKey;
    mc->def.applyName = mc->shortName;
    mc->def.deflt = NULL;
    mc->def.defaultValue = deflt;
    if (!getfn || !setfn || configRegisterDynamic(&mc->def) == -1) {
        errno = getfn && setfn ? EALREADY : EINVAL;
        mcFree(mc);
        return REDISMODULE_ERR;
    }
    ModConfig **tail = &configs; /* registration order: LoadConfigs sets them in it */
    while (*tail) tail = &(*tail)->next;
    *tail = mc;
    return REDISMODULE_OK;
}

static int RM_RegisterStringConfig(RedisModuleCtx *ctx, const char *name, const char *default_val, unsigned int flags,
                                   RedisModuleConfigGetStringFunc getfn, RedisModuleConfigSetStringFunc setfn,
                                   RedisModuleConfigApplyFunc applyfn, void *privdata) {
    ModConfig *mc = mcNew(ctx, name, flags, MC_STRING);
    if (!mc) return REDISMODULE_ERR;
    return mcAdd(mc, (void *)(uintptr_t)getfn, (void *)(uintptr_t)setfn, applyfn, privdata,
                 sdsNew(default_val ? default_val : ""));
}

static int RM_RegisterBoolConfig(RedisModuleCtx *ctx, const char *name, int default_val, unsigned int flags,
                                 RedisModuleConfigGetBoolFunc getfn, RedisModuleConfigSetBoolFunc setfn,
                                 RedisModuleConfigApplyFunc applyfn, void *privdata) {
    ModConfig *mc = mcNew(ctx, name, flags, MC_BOOL);
    if (!mc) return REDISMODULE_ERR;
    return mcAdd(mc, (void *)(uintptr_t)getfn, (void *)(uintptr_t)setfn, applyfn, privdata,
                 sdsNew(default_val ? "yes" : "no"));
}

static int RM_RegisterNumericConfig(RedisModuleCtx *ctx, const char *name, long long default_val, unsigned int flags,
                                    long long min, long long max, RedisModuleConfigGetNumericFunc getfn,
                                    RedisModuleConfigSetNumericFunc setfn, RedisModuleConfigApplyFunc applyfn,
                                    void *privdata) {
    ModConfig *mc = mcNew(ctx, name, flags, MC_NUMERIC);
    if (!mc) return REDISMODULE_ERR;
    if (min > max) {
        mcFree(mc);
        errno = EINVAL;
        return REDISMODULE_ERR;
    }
    mc->min = min;
    mc->max = max;
    return mcAdd(mc, (void *)(uintptr_t)getfn, (void *)(uintptr_t)setfn, applyfn, privdata,
                 sdsFromLongLong(default_val));
}

static int RM_RegisterEnumConfig(RedisModuleCtx *ctx, const char *name, int default_val, unsigned int flags,
                                 const char **enum_values, const int *int_values, int num_enum_vals,
                                 RedisModuleConfigGetEnumFunc getfn, RedisModuleConfigSetEnumFunc setfn,
                                 RedisModuleConfigApplyFunc applyfn, void *privdata) {
    ModConfig *mc = mcNew(ctx, name, flags, MC_ENUM);
    if (!mc) return REDISMODULE_ERR;
    if (!enum_values || !int_values || num_enum_vals <= 0 || num_enum_vals > 4096) {
        mcFree(mc);
        errno = EINVAL;
        return REDISMODULE_ERR;
    }
    mc->enums = xcalloc(sizeof(ConfigEnum) * (size_t)(num_enum_vals + 1));
    for (int i = 0; i < num_enum_vals; i++) {
        mc->enums[i].name = xstrdup(enum_values[i] ? enum_values[i] : "");
        mc->enums[i].value = int_values[i];
    }
    mc->nenums = num_enum_vals;
    mc->def.enums = mc->enums;
    return mcAdd(mc, (void *)(uintptr_t)getfn, (void *)(uintptr_t)setfn, applyfn, privdata, enumText(mc, default_val));
}

/* Sets each of the module's configs from its queued value, else its
 * default. */
static int RM_LoadConfigs(RedisModuleCtx *ctx) {
    Module *m = ctx ? ctx->module : NULL;
    if (!m || !m->onload) return REDISMODULE_ERR;
    m->configsLoaded = 1;
    for (ModConfig *mc = configs; mc; mc = mc->next) {
        if (mc->module != m) continue;
        sds v = queueTake(mc->fullName);
        const char *err = NULL;
        int rc = mcSetText(mc, v ? v : mc->def.defaultValue, v == NULL, &err);
        if (rc == -1) {
            serverLog(LL_WARNING, "Issue during loading of configuration %s : %s", mc->fullName, err);
            sdsFree(v);
            return REDISMODULE_ERR;
        }
        sdsFree(v);
    }
    return REDISMODULE_OK;
}

int moduleHasConfigs(const Module *m) {
    for (ModConfig *mc = configs; mc; mc = mc->next)
        if (mc->module == m) return 1;
    return 0;
}

void moduleDropConfigs(Module *m) {
    for (ModConfig **pp = &configs; *pp;) {
        ModConfig *mc = *pp;
        if (mc->module == m) {
            *pp = mc->next;
            configUnregister(&mc->def);
            mcFree(mc);
        } else {
            pp = &mc->next;
        }
    }
}

void moduleQueueConfig(const char *name, const char *value) { queueAdd(name, value); }
int moduleQueuedConfigCount(void) { return queueCount; }
void moduleClearQueuedConfigs(void) { queueClear(); }

/* A config file line `module.name value`: queued for the module. */
static const char *dottedLine(sds *argv, int argc) {
    if (argc != 2) return "wrong number of arguments";
    queueAdd(argv[0], argv[1]);
    return NULL;
}

void moduleConfigInit(void) { configSetDottedLineHandler(dottedLine); }

#define API(fn) {"RedisModule_" #fn, (void *)(uintptr_t)RM_##fn}
const ApiEntry moduleConfigApi[] = {API(RegisterStringConfig), API(RegisterBoolConfig), API(RegisterEnumConfig),
                                    API(RegisterNumericConfig), API(LoadConfigs), {NULL, NULL}};
