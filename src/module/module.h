/* module.h -- loadable modules (the Redis 7.0 module API): what main.c
 * wires.  The API itself is src/module/redismodule.h. */
#ifndef CAIRN_MODULE_H
#define CAIRN_MODULE_H

#include "ds/sds.h"

/* The `loadmodule` directive (before the config file is read). */
void moduleRegisterConfig(void);
/* Hooks into INFO and HELLO. */
void moduleInit(void);
/* Loads the `loadmodule` modules in order; exits (Redis's message) if
 * one fails.  After the command table and ACL exist, before the data is
 * loaded. */
void moduleLoadQueued(void);
/* Loads one module: 0, or -1 (the reason logged, nothing changed). */
int moduleLoad(const char *path, sds *args, int nargs);

#endif
