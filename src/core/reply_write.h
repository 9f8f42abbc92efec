/* reply_write.h -- the byte-writer under the reply API: how an encoder
 * other than the built-in RESP path puts its bytes into a client's output.
 *
 * The reply API (core/client.h, reply.c) turns each reply item into RESP
 * bytes itself, or hands it to the client's sink (proto/reply_sink.h); a
 * push item (core/push.h) is rendered by the client's push encoder.  A
 * sink or encoder that speaks a wire format of its own (JSON, a framed
 * WebSocket message) renders its bytes and appends them here: the same
 * output buffers, the same accounting and limits as RESP replies.
 *
 * Contract of replyWriteBytes(c, p, len):
 *   - appends p[0..len) as is to c's output: c->buf while no block is
 *     queued, then the tail block of the chain (new 16 KB blocks, or one of
 *     the payload's size), never into a deferred length's placeholder; the
 *     bytes are copied, p is borrowed for the call;
 *   - counts them as RESP bytes are counted (replyBytes, replyBlocks,
 *     replyAllocBytes: CLIENT LIST omem/oll, INFO, maxmemory), marks c as
 *     having pending writes (net.c writes them before the loop sleeps) and
 *     applies client-output-buffer-limit, which may flag c
 *     CLIENT_CLOSE_ASAP;
 *   - tests no flag: the caller has decided that c takes output now (the
 *     reply API tests CLIENT REPLY OFF|SKIP and a closing client before a
 *     sink sees an item; push delivery tests them per item), and re-counts
 *     c for client eviction itself when it should (netClientMemoryHook);
 *   - len 0 writes nothing. */
#ifndef CAIRN_REPLY_WRITE_H
#define CAIRN_REPLY_WRITE_H

#include <stddef.h>

#include "core/client.h"

void replyWriteBytes(Client *c, const void *p, size_t len);

#endif
