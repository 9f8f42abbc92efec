/* net.h -- the client path: the server's listeners (core/conn.h), accepting,
 * and the read/parse/dispatch/write path. */
#ifndef CAIRN_NET_H
#define CAIRN_NET_H

#include "core/client.h"

/* Open the TCP listeners (bind/port) and the unix socket.  Returns 0, or -1
 * after logging why. */
int netListen(void);
/* Close listeners (shutdown) and remove the unix socket file. */
void netCloseListeners(void);
/* In a forked child (a save): closes its copies of the listening sockets so
 * that a restarted server can bind while the child runs.  The parent's
 * listeners and the socket file are untouched. */
void netCloseListenersInChild(void);
/* Close the TCP listeners, then open those server.cfg's port and bind
 * name (the new set may take the same port on other addresses).  On
 * failure none is open and *err says why: the caller restores the old
 * settings and calls this again, as Redis does. */
int netRebindTcp(const char **err);
int netRebindUnix(const char **err);
/* The same for the TLS listener on tls-port (none when it is 0). */
int netRebindTls(const char **err);
/* A feature's listener (the HTTP gateway): its bound sockets get the
 * server's accept handler, and it is closed with the server's listeners
 * (in fork children too).  0, or -1 when NET_MAX_EXTRA_LISTENERS are
 * attached.  Detach closes it and forgets it. */
int netAttachListener(Listener *l);
void netDetachListener(Listener *l);
/* Queue the client for writing before the loop sleeps. */
void netMarkPendingWrite(Client *c);
/* Enforce client-output-buffer-limit for the client's class. */
void netCheckOutputLimits(Client *c);
/* Write replies of all pending clients (beforeSleep). */
void netHandlePendingWrites(void);
/* Free clients flagged CLOSE_ASAP (beforeSleep). */
void netFreeClosingClients(void);
/* Per-tick client housekeeping: idle timeouts, query buffer shrinking. */
void netClientsCron(void);
/* Parse and run what the client's query buffer holds.  */
void netProcessInput(Client *c);
/* Run the input of clients read by this turn's batch whose handlers have
 * not run yet (a busy script polls for its BUSY replies). */
void netProcessBatchedReads(void);
/* Set while client memory is tracked (maxmemory-clients, server layer):
 * called with a connection whose memory may have changed -- once it is
 * accepted, after its input was processed, after a write, and at each
 * cron tick.  NULL: nothing to do. */
extern void (*netClientMemoryHook)(Client *c);
/* The reply buffer's resizing (DEBUG REPLYBUFFER): the peak's reset period
 * in ms (negative: never reset) and whether buffers are resized at all. */
#define NET_REPLY_PEAK_RESET_DEFAULT_MS 5000
extern long long netReplyBufferPeakResetMs;
extern int netReplyBufferResizing;
/* The client class for output limits / CLIENT LIST TYPE. */
int clientType(const Client *c);
/* "r", "w", "rw" or "" for CLIENT LIST events. */
const char *clientEvents(const Client *c);

#endif
