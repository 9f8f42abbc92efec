/* module_cmdinfo.c -- RedisModule_SetCommandInfo: a module command's
 * COMMAND DOCS fields, arity, tips, key specs and arguments, from the
 * module's RedisModuleCommandInfo.
 *
 * The module's arrays are read with the element sizes its header was
 * compiled with (info->version), so a module built against a later
 * redismodule.h (larger structs) is read correctly.  What is read is
 * copied into allocations owned by the command (freed at unload), and
 * turned into Cairn's CommandSpec: key specs as KeySpec (the flag bits
 * are the same), arguments as CommandArg, and the legacy first/last/step
 * range recomputed from the key specs as Redis 7.0 computes it (with the
 * movablekeys flag when the specs are not one plain range). */
#include <errno.h>
#include <limits.h>
#include <string.h>

#include "core/log.h"
#include "ds/alloc.h"
#include "module/module_int.h"

/* The allocations of one command's info, freed together. */
typedef struct InfoAllocs {
    void **p;
    int n, cap;
} InfoAllocs;

static void *keep(InfoAllocs *a, void *p) {
    if (a->n == a->cap) {
        a->cap = a->cap ? a->cap * 2 : 16;
        a->p = xrealloc(a->p, sizeof(void *) * (size_t)a->cap);
    }
    a->p[a->n++] = p;
    return p;
}

static const char *dupStr(InfoAllocs *a, const char *s) { return s ? keep(a, xstrdup(s)) : NULL; }

void moduleFreeCommandInfo(ModuleCommand *mc) {
    InfoAllocs *a = mc->info;
    if (!a) return;
    for (int i = 0; i < a->n; i++) xfree(a->p[i]);
    xfree(a->p);
    xfree(a);
    mc->info = NULL;
}

#define AT(base, size, i) ((const void *)((const char *)(base) + (size_t)(i) * (size)))

static int invalid(const ModuleCommand *mc, const char *what) {
    serverLog(LL_WARNING, "Invalid command info for module command '%s': %s", mc->spec.fullname, what);
    errno = EINVAL;
    return REDISMODULE_ERR;
}

/* Counts the elements of a zero-terminated array (its first field NULL or
 * zero, as the header's literals end). */
static int countArgs(const RedisModuleCommandArg *args, size_t size) {
    int n = 0;
    while (((const RedisModuleCommandArg *)AT(args, size, n))->name) n++;
    return n;
}

static int validArgs(const ModuleCommand *mc, const RedisModuleCommandArg *args, size_t size, int nspecs,
                     int depth) {
    if (depth > 8) return invalid(mc, "arguments nested too deep");
    for (int i = 0; ((const RedisModuleCommandArg *)AT(args, size, i))->name; i++) {
        const RedisModuleCommandArg *a = AT(args, size, i);
        if (a->type < REDISMODULE_ARG_TYPE_STRING || a->type > REDISMODULE_ARG_TYPE_BLOCK)
            return invalid(mc, "invalid argument type");
        if (a->type == REDISMODULE_ARG_TYPE_KEY && (a->key_spec_index < 0 || a->key_spec_index >= nspecs))
            return invalid(mc, "invalid key_spec_index of a key argument");
        if (a->type == REDISMODULE_ARG_TYPE_PURE_TOKEN && !a->token) return invalid(mc, "pure-token without token");
        int container = a->type == REDISMODULE_ARG_TYPE_ONEOF || a->type == REDISMODULE_ARG_TYPE_BLOCK;
        if (container != (a->subargs != NULL)) return invalid(mc, "subargs only for oneof and block arguments");
        if (a->flags & ~(REDISMODULE_CMD_ARG_OPTIONAL | REDISMODULE_CMD_ARG_MULTIPLE |
                         REDISMODULE_CMD_ARG_MULTIPLE_TOKEN))
            return invalid(mc, "invalid argument flags");
        if (a->subargs && validArgs(mc, a->subargs, size, nspecs, depth + 1) != REDISMODULE_OK)
            return REDISMODULE_ERR;
    }
    return REDISMODULE_OK;
}

static CommandArg *convertArgs(InfoAllocs *al, const RedisModuleCommandArg *args, size_t size, int *count) {
    int n = countArgs(args, size);
    CommandArg *out = keep(al, xcalloc(sizeof(CommandArg) * (size_t)(n ? n : 1)));
    for (int i = 0; i < n; i++) {
        const RedisModuleCommandArg *a = AT(args, size, i);
        out[i].name = dupStr(al, a->name);
        out[i].type = (int)a->type; /* same order as ARG_* */
        out[i].keySpecIndex = a->type == REDISMODULE_ARG_TYPE_KEY ? a->key_spec_index : -1;
        out[i].token = dupStr(al, a->token);
        out[i].summary = dupStr(al, a->summary);
        out[i].since = dupStr(al, a->since);
        out[i].deprecatedSince = dupStr(al, a->deprecated_since);
        out[i].flags = (unsigned)a->flags; /* same bits as ARGF_* */
        if (a->subargs) out[i].subargs = convertArgs(al, a->subargs, size, &out[i].subargCount);
    }
    *count = n;
    return out;
}

/* Redis 7.0's legacy (first, last, step) from the key specs; sets
 * CMD_MOVABLE_KEYS when they are not one plain range. */
static void legacyRange(CommandSpec *spec) {
    spec->firstKey = spec->lastKey = spec->keyStep = 0;
    if (spec->keySpecCount == 0) return;
    const KeySpec *ks = spec->keySpecs;
    if (spec->keySpecCount == 1 && ks[0].bsType == KSB_INDEX && ks[0].fkType == KSF_RANGE) {
        if (ks[0].flags & KS_INCOMPLETE) spec->flags |= CMD_MOVABLE_KEYS;
        spec->firstKey = ks[0].bsIndex;
        spec->lastKey = ks[0].fk[0] >= 0 ? ks[0].bsIndex + ks[0].fk[0] : ks[0].fk[0];
        spec->keyStep = ks[0].fk[1];
        return;
    }
    int first = INT_MAX, last = 0, prevLast = 0;
    for (int i = 0; i < spec->keySpecCount; i++) {
        if (ks[i].bsType != KSB_INDEX || ks[i].fkType != KSF_RANGE) {
            spec->flags |= CMD_MOVABLE_KEYS;
            continue;
        }
        if (ks[i].fk[1] != 1 || (prevLast && prevLast != ks[i].bsIndex - 1)) {
            spec->flags |= CMD_MOVABLE_KEYS;
            continue;
        }
        if (ks[i].flags & KS_INCOMPLETE) spec->flags |= CMD_MOVABLE_KEYS;
        if (ks[i].bsIndex < first) first = ks[i].bsIndex;
        int lastAbs = ks[i].fk[0] >= 0 ? ks[i].fk[0] + ks[i].bsIndex : ks[i].fk[0];
        /* unsigned: a negative (from the end) wins */
        if ((unsigned)lastAbs > (unsigned)last) last = lastAbs;
        prevLast = last;
    }
    if (first == INT_MAX) return;
    spec->firstKey = first;
    spec->lastKey = last;
    spec->keyStep = 1;
}

static int RM_SetCommandInfo(RedisModuleCommand *command, const RedisModuleCommandInfo *info) {
    ModuleCommand *mc = (ModuleCommand *)command;
    if (!mc || !info || !mc->module->onload) {
        errno = EINVAL;
        return REDISMODULE_ERR;
    }
    const RedisModuleCommandInfoVersion *v = info->version;
    if (!v || v->version < 1) return invalid(mc, "version missing");
    size_t hsize = v->sizeof_historyentry, kssize = v->sizeof_keyspec, asize = v->sizeof_arg;
    if (hsize < sizeof(RedisModuleCommandHistoryEntry) || kssize < sizeof(RedisModuleCommandKeySpec) ||
        asize < sizeof(RedisModuleCommandArg))
        return invalid(mc, "struct sizes smaller than version 1's");
    /* validate everything before changing anything */
    int nspecs = 0;
    if (info->key_specs) {
        for (;; nspecs++) {
            const RedisModuleCommandKeySpec *k = AT(info->key_specs, kssize, nspecs);
            if (k->begin_search_type == REDISMODULE_KSPEC_BS_INVALID) break;
            if (k->begin_search_type > REDISMODULE_KSPEC_BS_KEYWORD) return invalid(mc, "invalid begin_search_type");
            if (k->begin_search_type == REDISMODULE_KSPEC_BS_KEYWORD && !k->bs.keyword.keyword)
                return invalid(mc, "keyword begin search without keyword");
            if (k->find_keys_type > REDISMODULE_KSPEC_FK_KEYNUM) return invalid(mc, "invalid find_keys_type");
            uint64_t access = k->flags & (REDISMODULE_CMD_KEY_RO | REDISMODULE_CMD_KEY_RW | REDISMODULE_CMD_KEY_OW |
                                          REDISMODULE_CMD_KEY_RM);
            if (__builtin_popcountll(access) != 1) return invalid(mc, "key spec flags need one of RO, RW, OW, RM");
            if (k->flags >> 11) return invalid(mc, "invalid key spec flags");
            if (nspecs == 64) return invalid(mc, "too many key specs");
        }
    }
    if (info->args && validArgs(mc, info->args, asize, nspecs, 0) != REDISMODULE_OK) return REDISMODULE_ERR;

    moduleFreeCommandInfo(mc);
    InfoAllocs *al = xcalloc(sizeof(*al));
    mc->info = al;
    CommandSpec *spec = &mc->spec;
    if (info->summary) spec->summary = dupStr(al, info->summary);
    if (info->complexity) spec->complexity = dupStr(al, info->complexity);
    if (info->since) spec->since = dupStr(al, info->since);
    if (info->arity) {
        spec->arity = info->arity;
        mc->self->arity = info->arity;
    }
    if (info->history) {
        int n = 0;
        while (((const RedisModuleCommandHistoryEntry *)AT(info->history, hsize, n))->since) n++;
        CommandHistory *h = keep(al, xcalloc(sizeof(CommandHistory) * (size_t)(n ? n : 1)));
        for (int i = 0; i < n; i++) {
            const RedisModuleCommandHistoryEntry *e = AT(info->history, hsize, i);
            h[i].since = dupStr(al, e->since);
            h[i].changes = dupStr(al, e->changes);
        }
        spec->history = h;
        spec->historyCount = n;
    }
    if (info->tips) {
        int n = 0;
        sds *tok = sdsSplitLen(info->tips, (ssize_t)strlen(info->tips), " ", 1, &n);
        const char **tips = keep(al, xcalloc(sizeof(char *) * (size_t)(n + 1)));
        int k = 0;
        for (int i = 0; i < n; i++) {
            if (!sdsLen(tok[i])) continue;
            sdsToLower(tok[i]);
            tips[k++] = dupStr(al, tok[i]);
        }
        sdsFreeSplitRes(tok, n);
        spec->tips = tips;
    }
    if (info->key_specs) {
        KeySpec *ks = keep(al, xcalloc(sizeof(KeySpec) * (size_t)(nspecs ? nspecs : 1)));
        for (int i = 0; i < nspecs; i++) {
            const RedisModuleCommandKeySpec *k = AT(info->key_specs, kssize, i);
            ks[i].notes = dupStr(al, k->notes);
            ks[i].flags = (uint32_t)k->flags; /* same bits as KS_* */
            switch (k->begin_search_type) {
            case REDISMODULE_KSPEC_BS_INDEX:
                ks[i].bsType = KSB_INDEX;
                ks[i].bsIndex = k->bs.index.pos;
                break;
            case REDISMODULE_KSPEC_BS_KEYWORD:
                ks[i].bsType = KSB_KEYWORD;
                ks[i].bsKeyword = dupStr(al, k->bs.keyword.keyword);
                ks[i].bsIndex = k->bs.keyword.startfrom;
                break;
            default: ks[i].bsType = KSB_UNKNOWN; break;
            }
            switch (k->find_keys_type) {
            case REDISMODULE_KSPEC_FK_OMITTED: /* a single key */
                ks[i].fkType = KSF_RANGE;
                ks[i].fk[0] = 0, ks[i].fk[1] = 1, ks[i].fk[2] = 0;
                break;
            case REDISMODULE_KSPEC_FK_RANGE:
                ks[i].fkType = KSF_RANGE;
                ks[i].fk[0] = k->fk.range.lastkey, ks[i].fk[1] = k->fk.range.keystep, ks[i].fk[2] = k->fk.range.limit;
                break;
            case REDISMODULE_KSPEC_FK_KEYNUM:
                ks[i].fkType = KSF_KEYNUM;
                ks[i].fk[0] = k->fk.keynum.keynumidx, ks[i].fk[1] = k->fk.keynum.firstkey;
                ks[i].fk[2] = k->fk.keynum.keystep;
                break;
            default: ks[i].fkType = KSF_UNKNOWN; break;
            }
        }
        spec->keySpecs = ks;
        spec->keySpecCount = nspecs;
        legacyRange(spec);
        mc->self->flags |= spec->flags & CMD_MOVABLE_KEYS;
    }
    if (info->args) spec->args = convertArgs(al, info->args, asize, &spec->argCount);
    return REDISMODULE_OK;
}

#define API(fn) {"RedisModule_" #fn, (void *)(uintptr_t)RM_##fn}
const ApiEntry moduleCmdInfoApi[] = {API(SetCommandInfo), {NULL, NULL}};
