/* http_parse.h -- the HTTP gateway's request side: HTTP/1.1 requests in,
 * commands (argv) out, with Webdis's URL grammar (httpProtocol, a
 * proto/protocol.h Protocol).
 *
 * A request is parsed only once it is whole in the pending buffer (request
 * line, headers, a Content-Length body), then consumed at once; pipelined
 * requests are taken one per call.  Grammar (Webdis 0.1.9):
 *
 *   GET  /[<db>/]COMMAND/arg/arg...[.ext][?type=..&jsonp=..&sep=..]
 *   POST /                 body: [<db>/]COMMAND/arg/...[.ext]
 *   PUT  /[<db>/]COMMAND/arg...      the body is one more, last, argument
 *   OPTIONS any            CORS preflight, no command
 *   GET  /                 with http-console on: the web console's page
 *                          (after the credentials, as for a command)
 *
 * The command name is taken as sent; arguments are percent-decoded ("%41"
 * is "A", "+" is a space, a '%' not followed by two hex digits stays).
 * A known extension on the last segment (json, js, raw, txt, bin, html,
 * xhtml, xml, png, jpg, jpeg, css, msg, msgpack) picks the reply format and is removed;
 * an unknown one stays part of the argument.  A first segment of digits
 * only (empty too) selects the database for this request; without one the
 * request runs in http-default-db.
 *
 * Bounds: the request line and headers at most HTTP_MAX_HEAD bytes (a
 * longer request line is 414, longer headers 431), at most
 * HTTP_MAX_HEADERS headers (431), a body at most the gateway's
 * http-max-request-size (413).  Malformed input (a bad request line, a
 * header without a colon or with control bytes, a folded header line, an
 * unknown version, a bad or repeated Content-Length) is 400, and
 * Transfer-Encoding (a chunked body) 501; each of these closes the
 * connection after the answer and the state drops every later byte.  An
 * unknown method is 405 and an empty command 403, on a connection kept
 * open.
 *
 * Credentials: "Authorization: Basic base64(user:pass)" makes the request
 * run AUTH user pass first (a gateway command, like its SELECT).  A
 * connection that authenticated so must send credentials with every
 * request: one without is answered 401 and the connection closed (a
 * proxy sharing it cannot borrow another user's rights).
 *
 * WebSocket (RFC 6455): a GET of "/.json" or "/.raw" with Upgrade:
 * websocket, Connection: Upgrade, Sec-WebSocket-Version: 13 and a valid
 * Sec-WebSocket-Key is answered 101 (any other upgrade request is 400 and
 * closes).  From then on each message (text or binary, possibly
 * fragmented) is one command: a JSON array on /.json, a RESP multibulk on
 * /.raw (proto/websocket.h); a message that is neither is ignored, as
 * Webdis does.  Pings are answered with pongs; a close is answered and
 * the connection closed; a protocol error (unmasked frame, reserved bits,
 * unknown opcode, fragmented or long control frame, a continuation with
 * nothing to continue, a new message inside a fragmented one) closes with
 * 1002, a text message that is not UTF-8 with 1007, a message over
 * http-max-request-size with 1009.
 *
 * What the gateway (server/http.c) plugs in: the reply sink (embedded
 * here, so the sink finds the request it answers), the hooks below, and
 * its own per-connection reply state (gw, released by hooks.release).
 * The protocol never writes: an answer without a command (an error, the
 * OPTIONS reply) goes through hooks.answer. */
#ifndef CAIRN_HTTP_PARSE_H
#define CAIRN_HTTP_PARSE_H

#include <stddef.h>

#include "ds/sds.h"
#include "proto/protocol.h"
#include "proto/reply_sink.h"

#define HTTP_MAX_HEAD 8192   /* request line + headers */
#define HTTP_MAX_HEADERS 64
#define HTTP_MAX_QUEUE 3     /* commands one request may make (AUTH, SELECT, the command) */

/* How the reply is rendered (Webdis's formats). */
typedef enum {
    HTTP_FMT_JSON,   /* {"VERB": value}; also .js with its own type */
    HTTP_FMT_RAW,    /* the RESP2 bytes */
    HTTP_FMT_CUSTOM, /* a string as is with a MIME type (.txt, .html, ?type=) */
    HTTP_FMT_MSGPACK, /* .msg, .msgpack: {"VERB": value} in MessagePack */
} HttpFormat;

/* The request whose command is running: what its answer needs. */
typedef struct HttpRequest {
    int http10;          /* HTTP/1.0 request line: the answer says so */
    int keepAlive;       /* 0: close after the answer */
    HttpFormat format;
    const char *mime;    /* Content-Type (static text, or typeArg) */
    sds verb;            /* the command name as sent (JSON's key) */
    sds jsonp;           /* ?jsonp= or ?callback=, NULL */
    sds sep;             /* ?sep= (custom arrays), NULL */
    sds typeArg;         /* ?type=, NULL */
    sds ifNoneMatch;     /* the If-None-Match header, NULL */
    sds auth;            /* the Authorization header when Basic, NULL */
    int sse;             /* Accept: text/event-stream */
    int xhr;             /* X-Requested-With: a script's request (a 401 names no scheme: no browser prompt) */
} HttpRequest;

enum { HTTP_WS_JSON = 1, HTTP_WS_RAW = 2 };

/* HttpConn.internal: whose reply the gateway is collecting. */
enum { HTTP_CMD_REQUEST = 0, HTTP_CMD_SELECT = 1, HTTP_CMD_AUTH = 2, HTTP_CMD_CONSOLE = 3 };

/* Answers the protocol makes itself (HttpHooks.answer). */
#define HTTP_ANSWER_OPTIONS 200 /* the CORS preflight's empty 200 */

typedef struct HttpHooks {
    void *owner; /* the gateway's client */
    /* Writes an answer with no command behind it: status 400, 403, 405,
     * 413, 414, 431, 501 (empty body) or HTTP_ANSWER_OPTIONS; closeAfter:
     * close the connection once it is written. */
    void (*answer)(void *owner, int status, int closeAfter);
    /* Writes bytes as they are (the WebSocket handshake's 101, control
     * frames); closeAfter as for answer. */
    void (*write)(void *owner, const char *p, size_t len, int closeAfter);
    /* Before a request without credentials on a connection that never
     * sent any: the gateway puts the client in http-user's rights.  -1:
     * it cannot (no such user, or off): the request is answered 403. */
    int (*anonymous)(void *owner);
    /* The database the connection is in now. */
    int (*currentDb)(void *owner);
    /* Releases gw. */
    void (*release)(void *gw);
    const int *defaultDb;             /* http-default-db */
    const long long *maxRequestSize;  /* http-max-request-size */
    const int *console;               /* http-console: GET / is the web console (HTTP_CMD_CONSOLE), NULL: off */
} HttpHooks;

/* Per-connection state (Client.protoState of an HTTP client). */
typedef struct HttpConn {
    ReplySink sink;    /* the gateway's reply sink (type set at attach) */
    HttpHooks hooks;   /* set at attach; without them every request is 503-less dropped */
    void *gw;          /* the gateway's reply state */
    HttpRequest req;   /* the request being answered */
    /* The commands of the request not handed out yet (a gateway SELECT
     * first, then the request's own). */
    sds *queue[HTTP_MAX_QUEUE];
    int queueArgc[HTTP_MAX_QUEUE];
    unsigned char queueInternal[HTTP_MAX_QUEUE];
    int qhead, qlen;
    int internal;      /* the command handed out last: HTTP_CMD_* */
    sds basicAuth;     /* the Authorization value this connection authenticated with, NULL */
    const sds *handed; /* argv handed out last, until recycled */
    size_t scanned;    /* bytes of the pending buffer searched for the end of the headers */
    int inHead;        /* waiting for the rest of a request's head (http-request-timeout) */
    int dead;          /* after a fatal error, or once streaming: every byte is dropped */
    int streaming;     /* a pub/sub stream's headers went: pushes are chunks */
    int ws;            /* a WebSocket since its handshake: HTTP_WS_JSON or HTTP_WS_RAW, 0: not */
    int wsOpcode;      /* the opcode of a fragmented message being assembled, 0: none */
    sds wsMsg;         /* its payload so far */
} HttpConn;

extern const Protocol httpProtocol;

/* Drops the commands of the current request not handed out yet (the
 * gateway's SELECT failed: the request is answered with its error). */
void httpDropQueue(HttpConn *st);

/* Percent-decodes p[0..len) as Webdis does ("+" is a space): a new sds. */
sds httpDecode(const char *p, size_t len);

#endif
