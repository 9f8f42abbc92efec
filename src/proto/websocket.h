/* websocket.h -- RFC 6455 for the HTTP gateway: the opening handshake's
 * accept key, frames in (client frames, masked) and out (server frames,
 * unmasked), and the two message forms a WebSocket on the gateway carries
 * (Webdis's): on "/.json" a JSON array of strings and numbers
 * (["SET","k","v"]), on "/.raw" one RESP multibulk command.
 *
 * Pure functions over buffers: no I/O, every length checked against what
 * the buffer holds before it is read. */
#ifndef CAIRN_WEBSOCKET_H
#define CAIRN_WEBSOCKET_H

#include <stddef.h>
#include <stdint.h>

#include "ds/sds.h"

enum { WS_CONT = 0, WS_TEXT = 1, WS_BINARY = 2, WS_CLOSE = 8, WS_PING = 9, WS_PONG = 10 };

/* Close codes this side sends. */
enum { WS_CLOSE_NORMAL = 1000, WS_CLOSE_PROTOCOL = 1002, WS_CLOSE_BAD_DATA = 1007, WS_CLOSE_TOO_BIG = 1009 };

/* Sec-WebSocket-Accept for key (the client's Sec-WebSocket-Key): 28
 * base64 characters and a NUL into out. */
void wsAcceptKey(const char *key, size_t len, char out[29]);

/* 1 when key is the base64 of 16 bytes (a valid Sec-WebSocket-Key). */
int wsKeyValid(const char *key, size_t len);

typedef struct WsFrame {
    int fin;
    int opcode;
    size_t headerLen;  /* bytes before the payload (mask included) */
    uint64_t len;      /* payload bytes */
    unsigned char mask[4];
} WsFrame;

/* Reads a client frame's header from buf[0..avail): 1 with *f filled, 0
 * when more bytes are needed, or -1 with *code the close code (a protocol
 * error: reserved bits, an unmasked frame, an unknown opcode, a control
 * frame fragmented or over 125 bytes, a 64-bit length with its top bit). */
int wsFrameHeader(const unsigned char *buf, size_t avail, WsFrame *f, int *code);

/* Appends the payload p[0..len) unmasked with f's key to out. */
sds wsUnmask(sds out, const WsFrame *f, const unsigned char *p, size_t len);

/* Appends a server frame (FIN, unmasked) of opcode with p[0..len). */
sds wsFrameAppend(sds out, int opcode, const char *p, size_t len);

/* 1 when p[0..len) is UTF-8 (RFC 3629: no overlong forms, surrogates or
 * code points above U+10FFFF). */
int wsUtf8Valid(const char *p, size_t len);

/* A message's command: from a JSON array of strings and numbers (other
 * values skipped, as Webdis) or a RESP multibulk.  The argv (xmalloc'd,
 * sds elements) and *argc > 0, or NULL when the message is not one. */
sds *wsJsonCommand(const char *p, size_t len, int *argc);
sds *wsRespCommand(const char *p, size_t len, int *argc);

#endif
