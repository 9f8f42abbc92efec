/* module_dict.c -- the dictionary API of modules (RedisModule_CreateDict
 * and friends): an ordered map from byte strings to the module's pointers,
 * with iterators that seek by the operators of Redis's radix tree.
 *
 * A dictionary is an Omap (ds/omap.h), ordered as memcmp orders keys, a
 * shorter key first when it is a prefix of the other: the order of Redis's
 * radix tree, so that iterations list keys in the order Redis lists them.
 *
 * Iterators (Redis's raxIterator semantics):
 *  - a seek ("^" first, "$" last, ">", ">=", "<", "<=", "==" or "=")
 *    positions the iterator on an element, or at the end (EOF) when there
 *    is none; the first Next or Prev after a seek returns that element,
 *    whatever the direction; later ones step forward or backward;
 *  - EOF is sticky until the next seek; an unknown operator leaves the
 *    iterator at EOF (Redis 7.0's is left half set up: its next step may
 *    crash); Reseek answers 1 after a seek and 0 for an unknown operator,
 *    the raw values Redis 7.0 returns (the reverse of OK/ERR);
 *  - the iterator keeps a copy of the current key, so the key bytes
 *    NextC/PrevC return stay valid until the next call on the iterator;
 *    when the dictionary changed since the last step (the dictionary's
 *    change counter), the next step seeks again from that copy instead of
 *    following the node, so changing the dictionary while iterating is
 *    safe (Redis asks for a reseek; here one is not needed).
 *
 * A dictionary created with a context that has auto memory is freed when
 * the context ends, unless the module freed it (FreeDict with that ctx). */
#include <errno.h>
#include <string.h>

#include "ds/alloc.h"
#include "ds/omap.h"
#include "module/module_int.h"

struct RedisModuleDict {
    Omap *map;
    uint64_t changes; /* bumped by every insertion and deletion */
};

struct RedisModuleDictIter {
    RedisModuleDict *d;
    OmapNode *node;    /* the current element (valid while changes == seen) */
    uint64_t seen;     /* d->changes when node was taken */
    unsigned char *key; /* copy of the current key */
    size_t keylen, keycap;
    void *data;        /* the current element's value */
    int eof;
    int justSeeked;
};

/* ---- dictionaries ---- */

static RedisModuleDict *RM_CreateDict(RedisModuleCtx *ctx) {
    RedisModuleDict *d = xmalloc(sizeof(*d));
    d->map = omapCreate();
    d->changes = 0;
    if (ctx) moduleAutoAdd(ctx, AM_DICT, d);
    return d;
}

/* The auto-memory release (module.c) and FreeDict. */
void moduleDictFree(RedisModuleDict *d) {
    if (!d) return;
    omapFree(d->map, NULL);
    xfree(d);
}

static void RM_FreeDict(RedisModuleCtx *ctx, RedisModuleDict *d) {
    if (ctx) moduleAutoForget(ctx, d);
    moduleDictFree(d);
}

static uint64_t RM_DictSize(RedisModuleDict *d) { return omapSize(d->map); }

/* Omap refuses NULL values (its "absent"): a NULL pointer is stored as a
 * pointer to this byte and given back as NULL. */
static char nullValue;
#define TO_MAP(p) ((p) ? (p) : (void *)&nullValue)
#define FROM_MAP(p) ((p) == (void *)&nullValue ? NULL : (p))

/* OK when the key was added, ERR (nothing changed) when it is present. */
static int RM_DictSetC(RedisModuleDict *d, void *key, size_t keylen, void *ptr) {
    if (!omapInsert(d->map, key, keylen, TO_MAP(ptr))) return REDISMODULE_ERR;
    d->changes++;
    return REDISMODULE_OK;
}

/* Sets the value whether or not the key is present: OK when it was added,
 * ERR when an existing value was replaced (Redis's raxInsert answer). */
static int RM_DictReplaceC(RedisModuleDict *d, void *key, size_t keylen, void *ptr) {
    if (omapReplace(d->map, key, keylen, TO_MAP(ptr))) return REDISMODULE_ERR;
    omapInsert(d->map, key, keylen, TO_MAP(ptr));
    d->changes++;
    return REDISMODULE_OK;
}

static int RM_DictSet(RedisModuleDict *d, RedisModuleString *key, void *ptr) {
    return RM_DictSetC(d, key->s, sdsLen(key->s), ptr);
}

static int RM_DictReplace(RedisModuleDict *d, RedisModuleString *key, void *ptr) {
    return RM_DictReplaceC(d, key->s, sdsLen(key->s), ptr);
}

/* The value of key, NULL when absent (*nokey, when given, says which). */
static void *RM_DictGetC(RedisModuleDict *d, void *key, size_t keylen, int *nokey) {
    void *v = omapFind(d->map, key, keylen);
    if (nokey) *nokey = v == NULL;
    return v ? FROM_MAP(v) : NULL;
}

static void *RM_DictGet(RedisModuleDict *d, RedisModuleString *key, int *nokey) {
    return RM_DictGetC(d, key->s, sdsLen(key->s), nokey);
}

/* Removes key: OK (its value stored at *oldval when oldval is not NULL),
 * ERR when absent. */
static int RM_DictDelC(RedisModuleDict *d, void *key, size_t keylen, void *oldval) {
    void *v = omapDelete(d->map, key, keylen);
    if (!v) return REDISMODULE_ERR;
    d->changes++;
    if (oldval) *(void **)oldval = FROM_MAP(v);
    return REDISMODULE_OK;
}

static int RM_DictDel(RedisModuleDict *d, RedisModuleString *key, void *oldval) {
    return RM_DictDelC(d, key->s, sdsLen(key->s), oldval);
}

/* ---- iterators ---- */

static void iterTake(RedisModuleDictIter *di, OmapNode *n) {
    if (!n) {
        di->eof = 1;
        di->node = NULL;
        return;
    }
    size_t len;
    const unsigned char *k = omapKey(n, &len);
    if (len > di->keycap) {
        di->keycap = len < 16 ? 16 : len;
        di->key = xrealloc(di->key, di->keycap);
    }
    if (len) memcpy(di->key, k, len);
    di->keylen = len;
    di->data = FROM_MAP(omapValue(n));
    di->node = n;
    di->seen = di->d->changes;
}

/* Positions di by op and key; 0 for an unknown operator (then at EOF). */
static int iterSeek(RedisModuleDictIter *di, const char *op, const void *key, size_t keylen) {
    Omap *m = di->d->map;
    di->eof = 0;
    di->justSeeked = 1;
    OmapNode *n;
    if (op[0] == '^') {
        n = omapFirst(m);
    } else if (op[0] == '$') {
        n = omapLast(m);
    } else if (op[0] == '>') {
        n = omapSeekGE(m, key, keylen, op[1] != '=');
    } else if (op[0] == '<') {
        n = omapSeekLE(m, key, keylen, op[1] != '=');
    } else if (op[0] == '=') {
        n = omapSeekGE(m, key, keylen, 0);
        if (n) {
            size_t len;
            const unsigned char *k = omapKey(n, &len);
            if (len != keylen || (len && memcmp(k, key, len))) n = NULL;
        }
    } else {
        di->eof = 1;
        di->node = NULL;
        return 0;
    }
    iterTake(di, n);
    return 1;
}

static RedisModuleDictIter *RM_DictIteratorStartC(RedisModuleDict *d, const char *op, void *key, size_t keylen) {
    RedisModuleDictIter *di = xcalloc(sizeof(*di));
    di->d = d;
    iterSeek(di, op, key, keylen);
    return di;
}

static RedisModuleDictIter *RM_DictIteratorStart(RedisModuleDict *d, const char *op, RedisModuleString *key) {
    return RM_DictIteratorStartC(d, op, key->s, sdsLen(key->s));
}

static void RM_DictIteratorStop(RedisModuleDictIter *di) {
    if (!di) return;
    xfree(di->key);
    xfree(di);
}

/* Redis 7.0 answers its radix tree's seek result as it is: 1 (the value of
 * REDISMODULE_ERR) after a seek, 0 (REDISMODULE_OK) for an unknown
 * operator; modules built against it see these values, so Cairn gives the
 * same. */
static int RM_DictIteratorReseekC(RedisModuleDictIter *di, const char *op, void *key, size_t keylen) {
    return iterSeek(di, op, key, keylen) ? 1 : 0;
}

static int RM_DictIteratorReseek(RedisModuleDictIter *di, const char *op, RedisModuleString *key) {
    return RM_DictIteratorReseekC(di, op, key->s, sdsLen(key->s));
}

/* One step (prev: backward); 0 at the end. */
static int iterStep(RedisModuleDictIter *di, int prev) {
    if (di->eof) return 0;
    if (di->justSeeked) {
        di->justSeeked = 0;
        return 1;
    }
    OmapNode *n;
    if (di->node && di->seen == di->d->changes)
        n = prev ? omapPrev(di->node) : omapNext(di->node);
    else if (prev)
        n = omapSeekLE(di->d->map, di->key, di->keylen, 1);
    else
        n = omapSeekGE(di->d->map, di->key, di->keylen, 1);
    iterTake(di, n);
    return !di->eof;
}

/* The next key's bytes (valid until the next call on di) and its length
 * and value; NULL at the end. */
static void *RM_DictNextC(RedisModuleDictIter *di, size_t *keylen, void **dataptr) {
    if (!iterStep(di, 0)) return NULL;
    if (keylen) *keylen = di->keylen;
    if (dataptr) *dataptr = di->data;
    return di->key ? (void *)di->key : (void *)"";
}

static void *RM_DictPrevC(RedisModuleDictIter *di, size_t *keylen, void **dataptr) {
    if (!iterStep(di, 1)) return NULL;
    if (keylen) *keylen = di->keylen;
    if (dataptr) *dataptr = di->data;
    return di->key ? (void *)di->key : (void *)"";
}

/* As NextC/PrevC, the key as a new string (auto memory of ctx, when ctx
 * is given and has it). */
static RedisModuleString *RM_DictNext(RedisModuleCtx *ctx, RedisModuleDictIter *di, void **dataptr) {
    size_t len;
    void *k = RM_DictNextC(di, &len, dataptr);
    return k ? modStringNew(ctx, k, len) : NULL;
}

static RedisModuleString *RM_DictPrev(RedisModuleCtx *ctx, RedisModuleDictIter *di, void **dataptr) {
    size_t len;
    void *k = RM_DictPrevC(di, &len, dataptr);
    return k ? modStringNew(ctx, k, len) : NULL;
}

/* Compares the current element's key with key by op (">", ">=", "<",
 * "<=", "=="): OK when it holds, ERR when not, at EOF, or for another
 * operator. */
static int RM_DictCompareC(RedisModuleDictIter *di, const char *op, void *key, size_t keylen) {
    if (di->eof) return REDISMODULE_ERR;
    int eq = op[0] == '=' || op[1] == '=';
    int gt = op[0] == '>', lt = op[0] == '<';
    if (!gt && !lt && op[1] != '=') return REDISMODULE_ERR;
    size_t min = keylen < di->keylen ? keylen : di->keylen;
    int cmp = min ? memcmp(di->key, key, min) : 0;
    int ok;
    if (!gt && !lt) ok = cmp == 0 && keylen == di->keylen;
    else if (cmp == 0) {
        if (eq && keylen == di->keylen) ok = 1;
        else if (lt) ok = di->keylen < keylen;
        else ok = di->keylen > keylen;
    } else if (cmp > 0) {
        ok = gt;
    } else {
        ok = lt;
    }
    return ok ? REDISMODULE_OK : REDISMODULE_ERR;
}

static int RM_DictCompare(RedisModuleDictIter *di, const char *op, RedisModuleString *key) {
    return RM_DictCompareC(di, op, key->s, sdsLen(key->s));
}

#define API(fn) {"RedisModule_" #fn, (void *)(uintptr_t)RM_##fn}
const ApiEntry moduleDictApi[] = {
    API(CreateDict),        API(FreeDict),           API(DictSize),         API(DictSetC),
    API(DictReplaceC),      API(DictSet),            API(DictReplace),      API(DictGetC),
    API(DictGet),           API(DictDelC),           API(DictDel),          API(DictIteratorStartC),
    API(DictIteratorStart), API(DictIteratorStop),   API(DictIteratorReseekC), API(DictIteratorReseek),
    API(DictNextC),         API(DictPrevC),          API(DictNext),         API(DictPrev),
    API(DictCompareC),      API(DictCompare),        {NULL, NULL}};

size_t moduleDictMemory(const RedisModuleDict *d) { return d ? sizeof(*d) + omapBytes(d->map) : 0; }
