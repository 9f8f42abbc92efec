/* process.h -- the checks a command passes before it runs (process.c). */
#ifndef CAIRN_PROCESS_H
#define CAIRN_PROCESS_H

#include "core/client.h"

/* Look up the command in c->argv, refuse it, postpone it, queue it, or run
 * it (the caller frees argv afterwards).  main.c installs it as core's
 * command processor (dispatchSetProcessor). */
void processCommand(Client *c);

#endif
