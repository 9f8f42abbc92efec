/* client_cmd.h -- what the CLIENT command family shares with other
 * features: a client's CLIENT LIST line (ACL LOG's client-info). */
#ifndef CAIRN_CLIENT_CMD_H
#define CAIRN_CLIENT_CMD_H

#include "core/client.h"

/* Appends c's CLIENT LIST / CLIENT INFO fields, without the newline. */
sds clientInfoString(sds s, const Client *c);

#endif
