/* module_filter.c -- command filters (RedisModule_RegisterCommandFilter,
 * UnregisterCommandFilter and the CommandFilterArg* functions).
 *
 * A filter is a module callback run on every command before it is looked
 * up: a client's command once when it is parsed (also a command queued
 * inside MULTI, when it is queued, and the commands of the master's
 * stream), a script's redis.call/pcall and a module's RedisModule_Call, as
 * Redis 7.0 runs them.  Filters run in registration order, each seeing the
 * argv the ones before left.  A filter registered with
 * REDISMODULE_CMDFILTER_NOSELF is skipped while its own module is inside a
 * RedisModule_Call (at any depth: a script it runs through Call included),
 * as Redis's in_call counter does.
 *
 * The hook core calls (core/dispatch.h's dispatchCommandFilter) is set
 * only while a filter exists, so a server without filters pays one branch.
 *
 * Invariants: the filter context's argv holds module strings; those made
 * here borrow the command's sds (borrowed=1) and are turned back into sds
 * when the filters are done: a string still referenced by the module
 * (RetainString on an argument) gets its own copy first.  Strings given
 * to ArgInsert/ArgReplace belong to the server from then on.  A module's
 * filters go with it (unload).  A filter unregistered while filters run is
 * only marked and unlinked after the walk. */
#include <string.h>

#include "core/dispatch.h"
#include "ds/alloc.h"
#include "module/module_int.h"

struct RedisModuleCommandFilter {
    Module *module;
    RedisModuleCommandFilterFunc cb;
    int flags;
    int dead;
    struct RedisModuleCommandFilter *next;
};

struct RedisModuleCommandFilterCtx {
    RedisModuleString **argv;
    int argc, cap;
};

static RedisModuleCommandFilter *filters;
static int walking;

/* The modules inside a RedisModule_Call now, innermost last (NOSELF). */
#define CALL_DEPTH_MAX 64
static Module *inCall[CALL_DEPTH_MAX];
static int inCallDepth, inCallOverflow;

void moduleFilterEnterCall(Module *m) {
    if (inCallDepth < CALL_DEPTH_MAX) inCall[inCallDepth++] = m;
    else inCallOverflow++;
}

void moduleFilterLeaveCall(void) {
    if (inCallOverflow) inCallOverflow--;
    else if (inCallDepth) inCallDepth--;
}

static int moduleInCall(const Module *m) {
    for (int i = 0; i < inCallDepth; i++)
        if (inCall[i] == m) return 1;
    return 0;
}

static sds *runFilters(sds *argv, int *argc, void *caller);

static void sweep(void) {
    if (walking) return;
    for (RedisModuleCommandFilter **pp = &filters; *pp;) {
        if ((*pp)->dead) {
            RedisModuleCommandFilter *f = *pp;
            *pp = f->next;
            xfree(f);
        } else {
            pp = &(*pp)->next;
        }
    }
    dispatchSetCommandFilter(filters ? runFilters : NULL);
}

/* The string a filter context holds at the end, as an sds the new argv
 * owns.  A wrapper of an original argument (borrowed) still held by the
 * module gets its own copy; one of ours is freed. */
static sds takeSds(RedisModuleString *s) {
    sds out = s->s;
    if (s->refcount > 1) {
        if (s->borrowed) {
            s->s = sdsDup(out);
            s->borrowed = 0;
        } else {
            out = sdsDup(out);
        }
        s->refcount--;
        return out;
    }
    s->borrowed = 1; /* the sds moves: the release frees only the handle */
    modStringRelease(s);
    return out;
}

static sds *runFilters(sds *argv, int *argc, void *caller) {
    int n = *argc;
    RedisModuleCommandFilterCtx fctx;
    fctx.cap = n + 4;
    fctx.argc = n;
    fctx.argv = xmalloc(sizeof(*fctx.argv) * (size_t)fctx.cap);
    for (int i = 0; i < n; i++) {
        RedisModuleString *s = modStringTake(NULL, argv[i]);
        s->borrowed = 1;
        fctx.argv[i] = s;
    }
    RedisModuleString **orig = xmalloc(sizeof(*orig) * (size_t)(n ? n : 1));
    memcpy(orig, fctx.argv, sizeof(*orig) * (size_t)n);
    walking++;
    for (RedisModuleCommandFilter *f = filters; f; f = f->next) {
        if (f->dead) continue;
        if ((f->flags & REDISMODULE_CMDFILTER_NOSELF) && moduleInCall(f->module)) continue;
        f->cb(&fctx);
    }
    walking--;
    sweep();
    /* Unchanged: the same strings in the same places. */
    int same = fctx.argc == n;
    for (int i = 0; same && i < n; i++) same = fctx.argv[i] == orig[i] && orig[i]->s == argv[i];
    (void)caller;
    sds *out = NULL;
    if (same) {
        for (int i = 0; i < n; i++) {
            RedisModuleString *s = fctx.argv[i];
            if (s->refcount > 1) { /* retained by the module: its own copy */
                s->s = sdsDup(s->s);
                s->borrowed = 0;
                s->refcount--;
            } else {
                modStringRelease(s); /* borrowed: the sds stays in argv */
            }
        }
    } else {
        /* Originals the filters dropped: their sds go (a handle the
         * module kept gets a copy first). */
        out = xmalloc(sizeof(sds) * (size_t)(fctx.argc ? fctx.argc : 1));
        for (int i = 0; i < fctx.argc; i++) out[i] = takeSds(fctx.argv[i]);
        for (int i = 0; i < n; i++) {
            int kept = 0;
            for (int j = 0; j < fctx.argc && !kept; j++) kept = out[j] == argv[i];
            if (!kept) sdsFree(argv[i]);
        }
        *argc = fctx.argc;
    }
    xfree(orig);
    xfree(fctx.argv);
    return out;
}

/* The dropped originals were released by ArgReplace/ArgDelete while still
 * borrowed, so their sds is freed above; a handle the module retained keeps
 * pointing at it, hence the copy made here before that. */
static void dropArg(RedisModuleString *s) {
    if (s->borrowed && s->refcount > 1) {
        s->s = sdsDup(s->s);
        s->borrowed = 0;
    }
    modStringRelease(s);
}

sds *moduleFilterArgv(Module *caller, sds *argv, int *argc) {
    if (!dispatchCommandFilter) return NULL;
    return runFilters(argv, argc, caller);
}

static RedisModuleCommandFilter *RM_RegisterCommandFilter(RedisModuleCtx *ctx, RedisModuleCommandFilterFunc cb,
                                                          int flags) {
    if (!ctx || !ctx->module || !cb) return NULL;
    RedisModuleCommandFilter *f = xcalloc(sizeof(*f));
    f->module = ctx->module;
    f->cb = cb;
    f->flags = flags;
    RedisModuleCommandFilter **tail = &filters;
    while (*tail) tail = &(*tail)->next;
    *tail = f;
    dispatchSetCommandFilter(runFilters);
    return f;
}

/* ERR for a filter that is not this module's (or already gone). */
static int RM_UnregisterCommandFilter(RedisModuleCtx *ctx, RedisModuleCommandFilter *filter) {
    if (!ctx || !filter) return REDISMODULE_ERR;
    for (RedisModuleCommandFilter *f = filters; f; f = f->next) {
        if (f == filter && !f->dead) {
            if (f->module != ctx->module) return REDISMODULE_ERR;
            f->dead = 1;
            sweep();
            return REDISMODULE_OK;
        }
    }
    return REDISMODULE_ERR;
}

void moduleDropFilters(Module *m) {
    for (RedisModuleCommandFilter *f = filters; f; f = f->next)
        if (f->module == m) f->dead = 1;
    sweep();
}

int moduleHasFilters(const Module *m) {
    for (RedisModuleCommandFilter *f = filters; f; f = f->next)
        if (f->module == m && !f->dead) return 1;
    return 0;
}

static int RM_CommandFilterArgsCount(RedisModuleCommandFilterCtx *fctx) { return fctx ? fctx->argc : 0; }

static RedisModuleString *RM_CommandFilterArgGet(RedisModuleCommandFilterCtx *fctx, int pos) {
    if (!fctx || pos < 0 || pos >= fctx->argc) return NULL;
    return fctx->argv[pos];
}

static int RM_CommandFilterArgInsert(RedisModuleCommandFilterCtx *fctx, int pos, RedisModuleString *arg) {
    if (!fctx || !arg || pos < 0 || pos > fctx->argc) return REDISMODULE_ERR;
    if (fctx->argc == fctx->cap) {
        fctx->cap *= 2;
        fctx->argv = xrealloc(fctx->argv, sizeof(*fctx->argv) * (size_t)fctx->cap);
    }
    memmove(fctx->argv + pos + 1, fctx->argv + pos, sizeof(*fctx->argv) * (size_t)(fctx->argc - pos));
    fctx->argv[pos] = arg;
    fctx->argc++;
    return REDISMODULE_OK;
}

static int RM_CommandFilterArgReplace(RedisModuleCommandFilterCtx *fctx, int pos, RedisModuleString *arg) {
    if (!fctx || !arg || pos < 0 || pos >= fctx->argc) return REDISMODULE_ERR;
    dropArg(fctx->argv[pos]);
    fctx->argv[pos] = arg;
    return REDISMODULE_OK;
}

static int RM_CommandFilterArgDelete(RedisModuleCommandFilterCtx *fctx, int pos) {
    if (!fctx || pos < 0 || pos >= fctx->argc) return REDISMODULE_ERR;
    dropArg(fctx->argv[pos]);
    memmove(fctx->argv + pos, fctx->argv + pos + 1, sizeof(*fctx->argv) * (size_t)(fctx->argc - pos - 1));
    fctx->argc--;
    return REDISMODULE_OK;
}

#define API(fn) {"RedisModule_" #fn, (void *)(uintptr_t)RM_##fn}
const ApiEntry moduleFilterApi[] = {API(RegisterCommandFilter), API(UnregisterCommandFilter),
                                    API(CommandFilterArgsCount), API(CommandFilterArgGet),
                                    API(CommandFilterArgInsert), API(CommandFilterArgReplace),
                                    API(CommandFilterArgDelete), {NULL, NULL}};
