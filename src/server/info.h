/* info.h -- what upper layers plug into INFO (server/info.c) and HELLO
 * (server/conn_cmd.c). */
#ifndef CAIRN_INFO_H
#define CAIRN_INFO_H

#include "core/client.h"
#include "ds/sds.h"

/* The body of INFO's "Modules" section (appends to s, returns it): the
 * module layer installs it at start-up; without it the section is empty. */
void infoSetModulesSection(sds (*fn)(sds s));
/* The sections modules add (RedisModule_RegisterInfoFunc): fn appends
 * those requested -- every one when nnames is -1 (INFO everything or
 * modules), else those named in names (a module's name or a section's) --
 * each preceded by a blank line unless *first, which it clears. */
/* INFO's text for the sections named (none: the default ones), as the
 * INFO command gives it; the caller owns it (RedisModule_GetServerInfo). */
sds infoText(int argc, char **argv);
void infoSetModuleSectionsHook(sds (*fn)(sds s, char **names, int nnames, int *first));

/* HELLO's "modules" field (server/conn_cmd.c): the module layer's list,
 * as MODULE LIST replies it; without it an empty array. */
void infoSetHelloModules(void (*fn)(Client *c));

#endif
