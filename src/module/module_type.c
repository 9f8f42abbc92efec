/* module_type.c -- module data types (RedisModule_CreateDataType): values
 * of type OBJ_MODULE in the keyspace, their RDB form, digest, memory and
 * copy, and the RDB I/O and digest APIs modules call from the callbacks.
 *
 * A value is a ModuleValue: its type and the module's pointer.  In an RDB
 * file it is Redis 7.0's RDB_TYPE_MODULE_2: the type's 64-bit id (the
 * 9-character name, 6 bits a character from Redis's 64-character set,
 * then the 10-bit encoding version) as a length, then what the module's
 * rdb_save wrote, each item preceded by its opcode (unsigned/signed
 * integers, floats, doubles, strings), then the EOF opcode.  The same
 * bytes as Redis's, so that a file saved by either server loads into the
 * other with the same module loaded.
 *
 * Invariants: a type belongs to the module that created it during its
 * OnLoad, its name is unique among loaded types, and a module that has
 * created a type cannot be unloaded (Redis's rule); saves run on the main
 * thread once a type exists (rdbSaveSingleThreaded). */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "db/db.h"
#include "db/object.h"
#include "ds/alloc.h"
#include "module/module_int.h"
#include "persist/aof.h"
#include "persist/digest.h"
#include "persist/rdb.h"
#include "proto/resp_write.h"

#define OPCODE_EOF 0
#define OPCODE_SINT 1 /* defined by the format, written by no 7.0 API */
#define OPCODE_UINT 2
#define OPCODE_FLOAT 3
#define OPCODE_DOUBLE 4
#define OPCODE_STRING 5

static const char idCharset[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

struct RedisModuleType {
    uint64_t id;
    int encver;
    char name[10];
    Module *module;
    RedisModuleTypeMethods m; /* the fields of the module's version, the rest NULL */
    RedisModuleType *next;
};

typedef struct ModuleValue {
    RedisModuleType *type;
    void *value;
} ModuleValue;

struct RedisModuleIO {
    sds *aof; /* an AOF rewrite: EmitAOF appends here */
    struct RdbWriter *w;
    struct RdbReader *r;
    RedisModuleType *type;
    int error;
    RedisModuleCtx *ctx; /* GetContextFromIO, made when asked */
    RedisModuleString *key;
};

struct RedisModuleDigest {
    unsigned char o[20]; /* the sequence being mixed */
    unsigned char x[20]; /* xor of the ended sequences */
};

static RedisModuleType *types;

/* ---- types ---- */

/* Among the types of loaded modules (as Redis, not those of the module
 * being loaded). */
static RedisModuleType *typeByName(const char *name) {
    for (RedisModuleType *t = types; t; t = t->next)
        if (!t->module->onload && !memcmp(t->name, name, 9)) return t;
    return NULL;
}

/* Looks a type up by the name part of an id (any encoding version). */
static RedisModuleType *typeById(uint64_t id) {
    for (RedisModuleType *t = types; t; t = t->next)
        if ((t->id >> 10) == (id >> 10)) return t;
    return NULL;
}

static void nameOfId(uint64_t id, char name[10]) {
    id >>= 10;
    for (int i = 8; i >= 0; i--) {
        name[i] = idCharset[id & 63];
        id >>= 6;
    }
    name[9] = '\0';
}

int moduleHasTypes(const Module *m) {
    for (RedisModuleType *t = types; t; t = t->next)
        if (t->module == m) return 1;
    return 0;
}

static RedisModuleType *RM_CreateDataType(RedisModuleCtx *ctx, const char *name, int encver,
                                          void *typemethods_ptr) {
    if (!ctx->module || !ctx->module->onload) return NULL;
    if (strlen(name) != 9 || encver < 0 || encver > 1023) return NULL;
    uint64_t id = 0;
    for (int i = 0; i < 9; i++) {
        const char *p = strchr(idCharset, name[i]);
        if (!p || !name[i]) return NULL;
        id = (id << 6) | (uint64_t)(p - idCharset);
    }
    id = (id << 10) | (uint64_t)encver;
    if (typeByName(name)) return NULL;
    RedisModuleTypeMethods *tm = typemethods_ptr;
    RedisModuleType *t = xcalloc(sizeof(*t));
    t->id = id;
    t->encver = encver;
    memcpy(t->name, name, 10);
    t->module = ctx->module;
    /* Copy only the fields of the module's version of the struct. */
    t->m.version = tm->version;
    t->m.rdb_load = tm->rdb_load;
    t->m.rdb_save = tm->rdb_save;
    t->m.aof_rewrite = tm->aof_rewrite;
    t->m.mem_usage = tm->mem_usage;
    t->m.digest = tm->digest;
    t->m.free = tm->free;
    if (tm->version >= 2) {
        t->m.aux_load = tm->aux_load;
        t->m.aux_save = tm->aux_save;
        t->m.aux_save_triggers = tm->aux_save_triggers;
    }
    if (tm->version >= 3) {
        t->m.free_effort = tm->free_effort;
        t->m.unlink = tm->unlink;
        t->m.copy = tm->copy;
        t->m.defrag = tm->defrag;
    }
    if (tm->version >= 4) {
        t->m.mem_usage2 = tm->mem_usage2;
        t->m.free_effort2 = tm->free_effort2;
        t->m.unlink2 = tm->unlink2;
        t->m.copy2 = tm->copy2;
    }
    t->next = types;
    types = t;
    rdbSaveSingleThreaded = 1;
    return t;
}

/* A module being undone (its OnLoad failed): its types go. */
void moduleDropTypes(Module *m) {
    for (RedisModuleType **pp = &types; *pp;) {
        if ((*pp)->module == m) {
            RedisModuleType *t = *pp;
            *pp = t->next;
            xfree(t);
        } else {
            pp = &(*pp)->next;
        }
    }
}

/* ---- values in the keyspace ---- */

static void valueFree(void *ptr, int encoding) {
    (void)encoding;
    ModuleValue *mv = ptr;
    if (mv->type->m.free) mv->type->m.free(mv->value);
    xfree(mv);
}

static void *valueDup(const void *ptr, int encoding) {
    (void)encoding;
    const ModuleValue *mv = ptr;
    if (!mv->type->m.copy) return NULL;
    RedisModuleString from = {sdsEmpty(), 1, 0}, to = {sdsEmpty(), 1, 0};
    void *copy = mv->type->m.copy(&from, &to, mv->value);
    sdsFree(from.s);
    sdsFree(to.s);
    if (!copy) return NULL;
    ModuleValue *nv = xmalloc(sizeof(*nv));
    nv->type = mv->type;
    nv->value = copy;
    return nv;
}

static size_t valueSize(const void *ptr, int encoding) {
    (void)encoding;
    const ModuleValue *mv = ptr;
    return mv->type->m.mem_usage ? mv->type->m.mem_usage(mv->value) : 0;
}

static const char *valueTypeName(const kvobj *o) { return ((ModuleValue *)kvPtr(o))->type->name; }

/* ---- digest ---- */

/* As Redis: the module's sequences, xor-ed into the key's digest. */
static void valueDigest(const kvobj *o, unsigned char d[20]) {
    ModuleValue *mv = kvPtr(o);
    RedisModuleDigest md;
    memset(&md, 0, sizeof(md));
    if (mv->type->m.digest) mv->type->m.digest(&md, mv->value);
    xorDigest(d, md.x, 20);
}

static void RM_DigestAddStringBuffer(RedisModuleDigest *md, const char *ele, size_t len) { mixDigest(md->o, ele, len); }

static void RM_DigestAddLongLong(RedisModuleDigest *md, long long ll) {
    char buf[32];
    int n = snprintf(buf, sizeof(buf), "%lld", ll);
    mixDigest(md->o, buf, (size_t)n);
}

static void RM_DigestEndSequence(RedisModuleDigest *md) {
    xorDigest(md->x, md->o, 20);
    memset(md->o, 0, 20);
}

/* ---- RDB ---- */

static int valueRdbType(const kvobj *o) {
    (void)o;
    return RDB_TYPE_MODULE_2;
}

static void valueRdbSave(struct RdbWriter *w, const kvobj *o) {
    ModuleValue *mv = kvPtr(o);
    RedisModuleIO io;
    memset(&io, 0, sizeof(io));
    io.w = w;
    io.type = mv->type;
    rdbPutLen(w, mv->type->id);
    mv->type->m.rdb_save(&io, mv->value);
    rdbPutLen(w, OPCODE_EOF);
    if (io.ctx) {
        moduleCtxDone(io.ctx);
        xfree(io.ctx);
    }
}

static kvobj *valueRdbLoad(struct RdbReader *r, int rdbType, const char *key, size_t keylen, int *empty) {
    (void)rdbType;
    *empty = 0;
    uint64_t id;
    if (rdbGetLen(r, &id) < 0) return NULL;
    RedisModuleType *t = typeById(id);
    if (!t) {
        static char why[160];
        char name[10];
        nameOfId(id, name);
        snprintf(why, sizeof(why), "The RDB file contains module data I can't load: no matching module type '%s'",
                 name);
        serverLog(LL_WARNING, "%s", why);
        rdbGetFail(r, why);
        return NULL;
    }
    RedisModuleIO io;
    memset(&io, 0, sizeof(io));
    io.r = r;
    io.type = t;
    io.key = modStringNew(NULL, key, keylen);
    void *value = t->m.rdb_load ? t->m.rdb_load(&io, (int)(id & 1023)) : NULL;
    uint64_t eof = 1;
    if (!io.error && rdbGetLen(r, &eof) < 0) io.error = 1;
    if (io.ctx) {
        moduleCtxDone(io.ctx);
        xfree(io.ctx);
    }
    modStringRelease(io.key);
    if (!value || io.error || eof != OPCODE_EOF) {
        if (value && t->m.free) t->m.free(value);
        static char why[200];
        snprintf(why, sizeof(why),
                 "The RDB file contains module data for the module type '%s', that the responsible module is not "
                 "able to load. Check for modules log above for additional clues.",
                 t->name);
        serverLog(LL_WARNING, "%s", why);
        rdbGetFail(r, why);
        return NULL;
    }
    ModuleValue *mv = xmalloc(sizeof(*mv));
    mv->type = t;
    mv->value = value;
    return rdbNewEntryPtr(r, key, keylen, OBJ_MODULE, OBJ_ENC_RAW, mv);
}

/* The I/O functions: a failed read marks the IO (the load then fails as
 * Redis's does) and returns zero/NULL. */
static int ioLoadOpcode(RedisModuleIO *io, uint64_t want) {
    uint64_t op;
    if (io->error || !io->r) return -1;
    if (rdbGetLen(io->r, &op) < 0 || op != want) {
        io->error = 1;
        return -1;
    }
    return 0;
}

static void RM_SaveUnsigned(RedisModuleIO *io, uint64_t value) {
    if (!io->w) return;
    rdbPutLen(io->w, OPCODE_UINT);
    rdbPutLen(io->w, value);
}

static uint64_t RM_LoadUnsigned(RedisModuleIO *io) {
    uint64_t v;
    if (ioLoadOpcode(io, OPCODE_UINT) < 0) return 0;
    if (rdbGetLen(io->r, &v) < 0) {
        io->error = 1;
        return 0;
    }
    return v;
}

/* A signed integer is saved as the unsigned of the same bits (Redis 7.0
 * writes the UINT opcode for both). */
static void RM_SaveSigned(RedisModuleIO *io, int64_t value) { RM_SaveUnsigned(io, (uint64_t)value); }

static int64_t RM_LoadSigned(RedisModuleIO *io) { return (int64_t)RM_LoadUnsigned(io); }

static void RM_SaveStringBuffer(RedisModuleIO *io, const char *str, size_t len) {
    if (!io->w) return;
    rdbPutLen(io->w, OPCODE_STRING);
    rdbPutString(io->w, str, len);
}

static void RM_SaveString(RedisModuleIO *io, RedisModuleString *s) { RM_SaveStringBuffer(io, s->s, sdsLen(s->s)); }

static sds ioLoadSds(RedisModuleIO *io) {
    sds s;
    if (ioLoadOpcode(io, OPCODE_STRING) < 0) return NULL;
    if (rdbGetString(io->r, &s) < 0) {
        io->error = 1;
        return NULL;
    }
    return s;
}

static RedisModuleString *RM_LoadString(RedisModuleIO *io) {
    sds s = ioLoadSds(io);
    return s ? modStringTake(NULL, s) : NULL;
}

/* A copy the module frees with RedisModule_Free. */
static char *RM_LoadStringBuffer(RedisModuleIO *io, size_t *lenptr) {
    sds s = ioLoadSds(io);
    if (!s) {
        if (lenptr) *lenptr = 0;
        return NULL;
    }
    size_t len = sdsLen(s);
    char *buf = xmalloc(len + 1);
    memcpy(buf, s, len);
    buf[len] = '\0';
    sdsFree(s);
    if (lenptr) *lenptr = len;
    return buf;
}

/* Doubles and floats: their bytes, little-endian (as on this machine). */
static void RM_SaveDouble(RedisModuleIO *io, double value) {
    if (!io->w) return;
    rdbPutLen(io->w, OPCODE_DOUBLE);
    rdbPutBytes(io->w, &value, sizeof(value));
}

static double RM_LoadDouble(RedisModuleIO *io) {
    double v = 0;
    if (ioLoadOpcode(io, OPCODE_DOUBLE) < 0) return 0;
    if (rdbGetBytes(io->r, &v, sizeof(v)) < 0) io->error = 1;
    return v;
}

static void RM_SaveFloat(RedisModuleIO *io, float value) {
    if (!io->w) return;
    rdbPutLen(io->w, OPCODE_FLOAT);
    rdbPutBytes(io->w, &value, sizeof(value));
}

static float RM_LoadFloat(RedisModuleIO *io) {
    float v = 0;
    if (ioLoadOpcode(io, OPCODE_FLOAT) < 0) return 0;
    if (rdbGetBytes(io->r, &v, sizeof(v)) < 0) io->error = 1;
    return v;
}

/* A long double is saved as its hexadecimal text (%La), a string. */
static void RM_SaveLongDouble(RedisModuleIO *io, long double value) {
    char buf[128];
    int n = snprintf(buf, sizeof(buf), "%La", value);
    RM_SaveStringBuffer(io, buf, (size_t)n);
}

static long double RM_LoadLongDouble(RedisModuleIO *io) {
    sds s = ioLoadSds(io);
    if (!s) return 0;
    char *end;
    long double v = strtold(s, &end);
    if (end != s + sdsLen(s) || sdsLen(s) == 0) io->error = 1;
    sdsFree(s);
    return v;
}

static int RM_IsIOError(RedisModuleIO *io) { return io->error; }

static RedisModuleCtx *RM_GetContextFromIO(RedisModuleIO *io) {
    if (!io->ctx) {
        io->ctx = xmalloc(sizeof(RedisModuleCtx));
        moduleCtxInit(io->ctx, io->type->module, NULL);
    }
    return io->ctx;
}

static const RedisModuleString *RM_GetKeyNameFromIO(RedisModuleIO *io) { return io->key; }

/* ---- AOF rewrite ---- */

static void RM_EmitAOF(RedisModuleIO *io, const char *cmdname, const char *fmt, ...) {
    if (!io->aof) return;
    int argc = 0, flags = 0;
    va_list ap;
    va_start(ap, fmt);
    sds *argv = moduleBuildArgv(cmdname, fmt, ap, &argc, &flags);
    va_end(ap);
    if (!argv) {
        serverLog(LL_WARNING, "Fatal: AOF method for module data type '%s' tried to emit command '%s' with wrong "
                  "format", io->type->name, cmdname);
        io->error = 1;
        return;
    }
    *io->aof = respCatCommand(*io->aof, argc, argv);
    for (int i = 0; i < argc; i++) sdsFree(argv[i]);
    xfree(argv);
}

static int valueAofRewrite(sds *buf, const kvobj *o) {
    ModuleValue *mv = kvPtr(o);
    if (!mv->type->m.aof_rewrite) {
        serverLog(LL_WARNING, "The module type %s does not support the AOF rewrite of its values", mv->type->name);
        return -1;
    }
    RedisModuleIO io;
    memset(&io, 0, sizeof(io));
    io.aof = buf;
    io.type = mv->type;
    io.key = modStringNew(NULL, kvKey(o), kvKeyLen(o));
    mv->type->m.aof_rewrite(&io, io.key, mv->value);
    if (io.ctx) {
        moduleCtxDone(io.ctx);
        xfree(io.ctx);
    }
    modStringRelease(io.key);
    return io.error ? -1 : 0;
}

/* ---- the key API for module values ---- */

/* What module_key.c needs: the value of an OBJ_MODULE entry. */
RedisModuleType *moduleValueType(const kvobj *o) { return ((ModuleValue *)kvPtr(o))->type; }
void *moduleValuePtr(const kvobj *o) { return ((ModuleValue *)kvPtr(o))->value; }

/* A module value of type t for key in db (replacing the key's value and
 * TTL, as Redis's setKey). */
void moduleSetValue(Db *db, const char *key, size_t keylen, RedisModuleType *t, void *value) {
    ModuleValue *mv = xmalloc(sizeof(*mv));
    mv->type = t;
    mv->value = value;
    dbSetKey(db, kvCreatePtr(key, keylen, OBJ_MODULE, OBJ_ENC_RAW, mv), 0);
}

/* Swaps the pointer in place; the old one is returned, not freed. */
void *moduleReplaceValue(kvobj *o, void *value) {
    ModuleValue *mv = kvPtr(o);
    void *old = mv->value;
    mv->value = value;
    return old;
}

/* ---- start-up ---- */

void moduleTypesInit(void) {
    static const ObjectType ops = {
        .free = valueFree,
        .dup = valueDup,
        .size = valueSize,
        .memUsage = NULL,
        .digest = valueDigest,
        .rdbType = valueRdbType,
        .rdbSave = valueRdbSave,
        .rdbLoad = valueRdbLoad,
    };
    objectRegisterType(OBJ_MODULE, &ops);
    objectRegisterPersistence(OBJ_MODULE, valueDigest, valueRdbType, valueRdbSave, valueRdbLoad);
    kvModuleTypeName = valueTypeName;
    aofRewriteModuleValue = valueAofRewrite;
}

#define API(fn) {"RedisModule_" #fn, (void *)(uintptr_t)RM_##fn}
const ApiEntry moduleTypeApi[] = {
    API(CreateDataType),  API(SaveUnsigned),       API(LoadUnsigned),        API(SaveSigned),
    API(LoadSigned),      API(SaveString),         API(SaveStringBuffer),    API(LoadString),
    API(LoadStringBuffer), API(SaveDouble),        API(LoadDouble),          API(SaveFloat),
    API(LoadFloat),       API(SaveLongDouble),     API(LoadLongDouble),      API(IsIOError),
    API(GetContextFromIO), API(GetKeyNameFromIO),  API(DigestAddStringBuffer), API(DigestAddLongLong),
    API(DigestEndSequence), API(EmitAOF), {NULL, NULL}};
