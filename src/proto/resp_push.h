/* resp_push.h -- the RESP2 and RESP3 encoders of push items (the wire
 * forms are tabled in resp_push.c).  core/push.h picks one per client by
 * its HELLO version. */
#ifndef CAIRN_RESP_PUSH_H
#define CAIRN_RESP_PUSH_H

#include "proto/push.h"

extern const PushEncoder respPushEncoder2;
extern const PushEncoder respPushEncoder3;

#endif
