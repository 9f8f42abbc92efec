/* function.h -- Redis 7.0 functions: libraries of named Lua functions,
 * loaded with FUNCTION LOAD and run with FCALL / FCALL_RO.
 *
 * Two files share this header.  function.c owns the registry (libraries
 * and the global index of function names), the FUNCTION commands and FCALL,
 * and the DUMP / RESTORE payload.  function_lua.c owns the Lua side: the
 * functions VM (separate from EVAL's), the environment library code sees
 * while it loads, redis.register_function, and calling a function.
 *
 * Names: a library name and a function name are non-empty runs of
 * [A-Za-z0-9_].  Library names are matched exactly; function names are one
 * namespace across all libraries, matched without regard to case (FCALL
 * f finds F), though inside one library F and f may both be registered.
 *
 * INFO reads the counters through script.h (functionsMemoryInfo). */
#ifndef CAIRN_FUNCTION_H
#define CAIRN_FUNCTION_H

#include <stddef.h>

#include "core/client.h"
#include "ds/sds.h"

typedef struct FunctionLib FunctionLib;

typedef struct FunctionInfo {
    void *next;       /* chain link of a FunctionSet's name index */
    sds name;         /* as registered */
    sds key;          /* name in lower case: the index key */
    sds desc;         /* description, NULL if none */
    unsigned flags;   /* SCRIPT_FLAG_* */
    int callback;     /* registry reference of the callback in the functions VM */
    FunctionLib *lib; /* the library that registered it */
} FunctionInfo;

struct FunctionLib {
    void *next; /* chain link of a FunctionSet's libraries */
    sds name;
    sds code;             /* the whole library text, shebang line included */
    FunctionInfo **funcs; /* in registration order, owned */
    size_t nfuncs, cap;
};

/* --- function.c, for function_lua.c --- */

/* Adds a function to the library being loaded; takes ownership of nothing
 * (name and desc are copied).  Returns 0, or -1 with *err pointing at a
 * static message (invalid name, or the library already has that name) and
 * nothing added. */
int functionLibAdd(FunctionLib *lib, const char *name, size_t len, const char *desc, size_t descLen,
                   unsigned flags, int callback, const char **err);

/* --- function_lua.c --- */

/* Runs a library's code in the functions VM under the load-time
 * environment; each redis.register_function call adds to lib.  body is the
 * code from the newline that ends the shebang line (so Lua's line numbers
 * count the shebang as line 1).  Returns 0, or -1 with *err a new sds (the
 * caller owns it) holding the full error reply text.  On failure lib may
 * hold functions registered before the error: the caller frees lib. */
int functionLuaLoad(FunctionLib *lib, const char *body, size_t len, sds *err);
/* Drops f's callback from the functions VM. */
void functionLuaRelease(FunctionInfo *f);
/* Runs f for FCALL / FCALL_RO: keys are c->argv[3..3+numkeys), the rest
 * are arguments.  The reply (or error) goes to c. */
void functionLuaCall(Client *c, FunctionInfo *f, int numkeys, int readOnly);
/* Replaces the functions VM by a fresh one (FUNCTION FLUSH): only valid
 * once no function refers to the old one. */
void functionLuaReset(void);
/* Creates the functions VM if there is none (scriptCreateVms). */
void functionLuaCreate(void);
/* Bytes the functions VM holds (INFO used_memory_vm_functions). */
size_t functionLuaMemory(void);

/* --- for the persistence layer --- */

/* Appends every loaded library to out as RDB FUNCTION2 records (opcode,
 * then the code as an RDB string, LZF when compress). */
sds functionsRdbAppend(sds out, int compress);
/* FCALL / FCALL_RO of c names a function without the no-writes flag. */
int functionDeclaresWrites(Client *c);
/* Loads one library's code (from an RDB FUNCTION2 record) into the live
 * functions; a library of that name must not exist unless replace.
 * Returns 0, or -1 with *err set (caller frees). */
int functionsRdbLoadCode(const sds code, int replace, sds *err);
/* Removes every library (DEBUG RELOAD empties functions with the data). */
void functionsRdbFlush(void);

#endif
