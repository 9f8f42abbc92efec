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
#include <limits.h>
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
#include "core/server.h"
#include "db/lazyfree.h"
#include "types/keys.h"

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
    int dbid; /* the database it was last unlinked from (free effort), -1 */
} ModuleValue;

/* What mem_usage2, free_effort2, unlink2 and copy2 are given. */
struct RedisModuleKeyOptCtx {
    RedisModuleString *from, *to;
    int fromDb, toDb;
};

struct RedisModuleIO {
    sds *aof; /* an AOF rewrite: EmitAOF appends here */
    struct RdbWriter *w;
    struct RdbReader *r;
    RedisModuleType *type;
    int error;
    RedisModuleCtx *ctx; /* GetContextFromIO, made when asked */
    RedisModuleString *key;
    int dbid; /* GetDbIdFromIO: -1 outside a snapshot */
};

struct RedisModuleDigest {
    unsigned char o[20]; /* the sequence being mixed */
    unsigned char x[20]; /* xor of the ended sequences */
    RedisModuleString *key; /* the value's key name (GetKeyNameFromDigest) */
    int dbid;               /* its database (GetDbIdFromDigest) */
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

static void valueUnlinked(Db *db, const kvobj *o);

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
    dbModuleUnlinkHook = valueUnlinked;
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
    nv->dbid = -1;
    return nv;
}

static size_t valueSize(const void *ptr, int encoding) {
    (void)encoding;
    const ModuleValue *mv = ptr;
    return mv->type->m.mem_usage ? mv->type->m.mem_usage(mv->value) : 0;
}

static const char *valueTypeName(const kvobj *o) { return ((ModuleValue *)kvPtr(o))->type->name; }

/* ---- digest ---- */

/* As Redis: the module's sequences, xor-ed into the key's digest; a type
 * without a digest callback adds nothing (not even the hash of zeros). */
static void valueDigest(const kvobj *o, unsigned char d[20]) {
    ModuleValue *mv = kvPtr(o);
    if (!mv->type->m.digest) return;
    RedisModuleDigest md;
    memset(&md, 0, sizeof(md));
    md.key = modStringNew(NULL, kvKey(o), kvKeyLen(o));
    md.dbid = digestDbId;
    mv->type->m.digest(&md, mv->value);
    modStringRelease(md.key);
    xorDigest(d, md.x, 20);
}

/* The key and database of the value being digested (valid during the
 * digest callback only). */
static const RedisModuleString *RM_GetKeyNameFromDigest(RedisModuleDigest *md) { return md->key; }
static int RM_GetDbIdFromDigest(RedisModuleDigest *md) { return md->dbid; }

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
    io.dbid = rdbModuleDbId;
    io.key = modStringNew(NULL, kvKey(o), kvKeyLen(o));
    rdbPutLen(w, mv->type->id);
    mv->type->m.rdb_save(&io, mv->value);
    rdbPutLen(w, OPCODE_EOF);
    if (io.ctx) {
        moduleCtxDone(io.ctx);
        xfree(io.ctx);
    }
    modStringRelease(io.key);
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
    io.dbid = rdbModuleDbId;
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
    mv->dbid = -1;
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

static int RM_GetDbIdFromIO(RedisModuleIO *io) { return io->dbid; }

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
    io.dbid = rdbModuleDbId; /* the rewrite's database (aof_rewrite.c sets it) */
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
    mv->dbid = db->id;
    dbSetKey(db, kvCreatePtr(key, keylen, OBJ_MODULE, OBJ_ENC_RAW, mv), 0);
}

/* Swaps the pointer in place; the old one is returned, not freed. */
void *moduleReplaceValue(kvobj *o, void *value) {
    ModuleValue *mv = kvPtr(o);
    void *old = mv->value;
    mv->value = value;
    return old;
}

/* ---- the key-option callbacks: unlink, free effort, memory, copy ---- */

static const RedisModuleString *RM_GetKeyNameFromOptCtx(RedisModuleKeyOptCtx *ctx) { return ctx->from; }
static const RedisModuleString *RM_GetToKeyNameFromOptCtx(RedisModuleKeyOptCtx *ctx) { return ctx->to; }
static int RM_GetDbIdFromOptCtx(RedisModuleKeyOptCtx *ctx) { return ctx->fromDb; }
static int RM_GetToDbIdFromOptCtx(RedisModuleKeyOptCtx *ctx) { return ctx->toDb; }

/* dbUnlink / an overwrite: the value leaves its key (Redis calls unlink2,
 * else unlink, before the value is freed, now or on the lazy-free
 * thread).  The database is kept for the free effort asked next. */
static void valueUnlinked(Db *db, const kvobj *o) {
    ModuleValue *mv = kvPtr(o);
    RedisModuleType *t = mv->type;
    mv->dbid = db->id;
    if (!t->m.unlink2 && !t->m.unlink) return;
    RedisModuleString *key = modStringNew(NULL, kvKey(o), kvKeyLen(o));
    if (t->m.unlink2) {
        RedisModuleKeyOptCtx oc = {key, NULL, db->id, -1};
        t->m.unlink2(&oc, mv->value);
    } else {
        t->m.unlink(key, mv->value);
    }
    modStringRelease(key);
}

/* The lazy-free decision (UNLINK, lazyfree-lazy-*): free_effort2, else
 * free_effort, else 1 (freed at once); lazyfree.c takes 0 as "on the
 * thread", as Redis. */
static size_t valueFreeEffort(const kvobj *o) {
    ModuleValue *mv = kvPtr(o);
    RedisModuleType *t = mv->type;
    if (!t->m.free_effort2 && !t->m.free_effort) return 1;
    RedisModuleString *key = modStringNew(NULL, kvKey(o), kvKeyLen(o));
    size_t e;
    if (t->m.free_effort2) {
        RedisModuleKeyOptCtx oc = {key, NULL, mv->dbid, -1};
        e = t->m.free_effort2(&oc, mv->value);
    } else {
        e = t->m.free_effort(key, mv->value);
    }
    modStringRelease(key);
    return e;
}

/* MEMORY USAGE: mem_usage2 with the sample count (SAMPLES 0: all, given as
 * LLONG_MAX as Redis does), else mem_usage, else 0. */
static size_t valueMemUsage(const kvobj *o, size_t samples) {
    ModuleValue *mv = kvPtr(o);
    RedisModuleType *t = mv->type;
    if (t->m.mem_usage2) {
        RedisModuleString *key = modStringNew(NULL, kvKey(o), kvKeyLen(o));
        int db = server.net.current && server.net.current->db ? server.net.current->db->id : 0;
        RedisModuleKeyOptCtx oc = {key, NULL, db, -1};
        size_t n = t->m.mem_usage2(&oc, mv->value, samples ? samples : (size_t)LLONG_MAX);
        modStringRelease(key);
        return n;
    }
    return t->m.mem_usage ? t->m.mem_usage(mv->value) : 0;
}

/* COPY: copy2 (with both keys and databases), else copy; Redis's errors
 * when the type has neither or the copy fails. */
static kvobj *valueCopy(Client *c, const kvobj *o, Db *src, Db *dst, const char *newkey, size_t len) {
    ModuleValue *mv = kvPtr(o);
    RedisModuleType *t = mv->type;
    if (!t->m.copy && !t->m.copy2) {
        replyError(c, "ERR not supported for this module key");
        return NULL;
    }
    RedisModuleString *from = modStringNew(NULL, kvKey(o), kvKeyLen(o));
    RedisModuleString *to = modStringNew(NULL, newkey, len);
    void *nv;
    if (t->m.copy2) {
        RedisModuleKeyOptCtx oc = {from, to, src->id, dst->id};
        nv = t->m.copy2(&oc, mv->value);
    } else {
        nv = t->m.copy(from, to, mv->value);
    }
    modStringRelease(from);
    modStringRelease(to);
    if (!nv) {
        replyError(c, "ERR module key failed to copy");
        return NULL;
    }
    ModuleValue *n = xmalloc(sizeof(*n));
    n->type = t;
    n->value = nv;
    n->dbid = dst->id;
    return kvHasExpire(o) ? kvCreatePtrExpire(newkey, len, OBJ_MODULE, OBJ_ENC_RAW, n, kvExpire(o))
                          : kvCreatePtr(newkey, len, OBJ_MODULE, OBJ_ENC_RAW, n);
}

/* ---- aux data (RDB_OPCODE_MODULE_AUX), as Redis 7.0 writes it: the
 * opcode, the type's id, UINT opcode and `when`, what aux_save wrote, the
 * EOF opcode ---- */

#define RDB_OPCODE_MODULE_AUX_BYTE 247

static void auxSaveType(struct RdbWriter *w, RedisModuleType *t, int when) {
    unsigned char op = RDB_OPCODE_MODULE_AUX_BYTE;
    rdbPutBytes(w, &op, 1);
    rdbPutLen(w, t->id);
    rdbPutLen(w, OPCODE_UINT);
    rdbPutLen(w, (uint64_t)when);
    RedisModuleIO io;
    memset(&io, 0, sizeof(io));
    io.w = w;
    io.type = t;
    io.dbid = -1;
    t->m.aux_save(&io, when);
    rdbPutLen(w, OPCODE_EOF);
    if (io.ctx) {
        moduleCtxDone(io.ctx);
        xfree(io.ctx);
    }
}

/* The types in the order they were created. */
static void auxSaveFrom(struct RdbWriter *w, RedisModuleType *t, int when) {
    if (!t) return;
    auxSaveFrom(w, t->next, when);
    if (t->m.aux_save && (t->m.aux_save_triggers & when)) auxSaveType(w, t, when);
}

static void auxSave(struct RdbWriter *w, int when) { auxSaveFrom(w, types, when); }

static int auxFail(struct RdbReader *r, const char *fmt, const char *name) {
    static char why[256];
    snprintf(why, sizeof(why), fmt, name);
    serverLog(LL_WARNING, "%s", why);
    return rdbGetFail(r, why);
}

static int auxLoad(struct RdbReader *r) {
    uint64_t id, whenOp, when;
    if (rdbGetLen(r, &id) < 0 || rdbGetLen(r, &whenOp) < 0 || rdbGetLen(r, &when) < 0) return -1;
    if (whenOp != OPCODE_UINT) return rdbGetFail(r, "bad when_opcode");
    char name[10];
    nameOfId(id, name);
    RedisModuleType *t = typeById(id);
    if (!t) return auxFail(r, "The RDB file contains AUX module data I can't load: no matching module '%s'", name);
    if (!t->m.aux_load)
        return auxFail(r, "The RDB file contains module AUX data, but the module '%s' doesn't seem to support it.",
                       name);
    RedisModuleIO io;
    memset(&io, 0, sizeof(io));
    io.r = r;
    io.type = t;
    io.dbid = -1;
    int rc = t->m.aux_load(&io, (int)(id & 1023), (int)when);
    if (io.ctx) {
        moduleCtxDone(io.ctx);
        xfree(io.ctx);
    }
    if (rc != REDISMODULE_OK || io.error)
        return auxFail(r,
                       "The RDB file contains module AUX data for the module type '%s', that the responsible module "
                       "is not able to load. Check for modules log above for additional clues.",
                       name);
    uint64_t eof;
    if (rdbGetLen(r, &eof) < 0 || eof != OPCODE_EOF)
        return auxFail(r,
                       "The RDB file contains module AUX data for the module '%s' that is not terminated by the "
                       "proper module value EOF marker",
                       name);
    return 0;
}

/* ---- values as strings (the RDB form of rdb_save, no id, no EOF) ---- */

static RedisModuleString *RM_SaveDataTypeToString(RedisModuleCtx *ctx, void *data, const RedisModuleType *mt) {
    RedisModuleIO io;
    memset(&io, 0, sizeof(io));
    io.w = rdbBufferWriter();
    io.type = (RedisModuleType *)mt;
    io.dbid = -1;
    mt->m.rdb_save(&io, data);
    if (io.ctx) {
        moduleCtxDone(io.ctx);
        xfree(io.ctx);
    }
    sds b = rdbBufferWriterDone(io.w);
    if (io.error) {
        sdsFree(b);
        return NULL;
    }
    return modStringTake(ctx, b);
}

/* What rdb_load makes of the string (encver given to it); a read past the
 * end marks the IO in error, which a module with HANDLE_IO_ERRORS sees. */
static void *RM_LoadDataTypeFromStringEncver(const RedisModuleString *str, const RedisModuleType *mt, int encver) {
    RedisModuleIO io;
    memset(&io, 0, sizeof(io));
    io.r = rdbBufferReader(str->s, sdsLen(str->s));
    io.type = (RedisModuleType *)mt;
    io.dbid = -1;
    void *ret = mt->m.rdb_load(&io, encver);
    if (io.ctx) {
        moduleCtxDone(io.ctx);
        xfree(io.ctx);
    }
    rdbBufferReaderFree(io.r);
    return ret;
}

static void *RM_LoadDataTypeFromString(const RedisModuleString *str, const RedisModuleType *mt) {
    return RM_LoadDataTypeFromStringEncver(str, mt, 0);
}

/* ---- defrag: Cairn has no active defragmentation (activedefrag is
 * refused), so no defrag context is ever made and the type's defrag
 * callback and RegisterDefragFunc's function are never called, as in a
 * Redis whose defrag never runs.  The functions answer as Redis's do,
 * and for a NULL context as if nothing were to be moved. ---- */

struct RedisModuleDefragCtx {
    unsigned long *cursor;
    RedisModuleString *key;
    int dbid;
};

static int RM_RegisterDefragFunc(RedisModuleCtx *ctx, RedisModuleDefragFunc func) {
    (void)func;
    return ctx && ctx->module ? REDISMODULE_OK : REDISMODULE_ERR;
}

static int RM_DefragShouldStop(RedisModuleDefragCtx *ctx) {
    (void)ctx;
    return 0;
}

static int RM_DefragCursorSet(RedisModuleDefragCtx *ctx, unsigned long cursor) {
    if (!ctx || !ctx->cursor) return REDISMODULE_ERR;
    *ctx->cursor = cursor;
    return REDISMODULE_OK;
}

static int RM_DefragCursorGet(RedisModuleDefragCtx *ctx, unsigned long *cursor) {
    if (!ctx || !ctx->cursor) return REDISMODULE_ERR;
    *cursor = *ctx->cursor;
    return REDISMODULE_OK;
}

/* NULL: the allocation was not moved (the caller keeps using ptr). */
static void *RM_DefragAlloc(RedisModuleDefragCtx *ctx, void *ptr) {
    (void)ctx, (void)ptr;
    return NULL;
}

static RedisModuleString *RM_DefragRedisModuleString(RedisModuleDefragCtx *ctx, RedisModuleString *str) {
    (void)ctx, (void)str;
    return NULL;
}

static const RedisModuleString *RM_GetKeyNameFromDefragCtx(RedisModuleDefragCtx *ctx) {
    return ctx ? ctx->key : NULL;
}

static int RM_GetDbIdFromDefragCtx(RedisModuleDefragCtx *ctx) { return ctx ? ctx->dbid : -1; }

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
    lazyfreeModuleEffort = valueFreeEffort;
    objectModuleMemUsage = valueMemUsage;
    keysModuleCopy = valueCopy;
    rdbModuleAuxSave = auxSave;
    rdbModuleAuxLoad = auxLoad;
}

#define API(fn) {"RedisModule_" #fn, (void *)(uintptr_t)RM_##fn}
const ApiEntry moduleTypeApi[] = {
    API(CreateDataType),  API(SaveUnsigned),       API(LoadUnsigned),        API(SaveSigned),
    API(LoadSigned),      API(SaveString),         API(SaveStringBuffer),    API(LoadString),
    API(LoadStringBuffer), API(SaveDouble),        API(LoadDouble),          API(SaveFloat),
    API(LoadFloat),       API(SaveLongDouble),     API(LoadLongDouble),      API(IsIOError),
    API(GetContextFromIO), API(GetKeyNameFromIO),  API(DigestAddStringBuffer), API(DigestAddLongLong),
    API(DigestEndSequence), API(GetKeyNameFromDigest), API(GetDbIdFromDigest), API(EmitAOF),
    /* options, aux data, values as strings, defrag (module_type.c's second part) */
    API(GetDbIdFromIO), API(GetKeyNameFromOptCtx), API(GetToKeyNameFromOptCtx), API(GetDbIdFromOptCtx),
    API(GetToDbIdFromOptCtx), API(SaveDataTypeToString), API(LoadDataTypeFromString),
    API(LoadDataTypeFromStringEncver), API(RegisterDefragFunc), API(DefragShouldStop), API(DefragCursorSet),
    API(DefragCursorGet), API(DefragAlloc), API(DefragRedisModuleString), API(GetKeyNameFromDefragCtx),
    API(GetDbIdFromDefragCtx), {NULL, NULL}};
