/* http.c -- the HTTP/JSON gateway: its directives, its listener, and the
 * reply sink that renders a command's reply as Webdis 0.1.9 does.
 *
 * Requests come from proto/http_parse.c (httpProtocol); each becomes a
 * command that runs through dispatchCommand like a RESP one (ACL, stats,
 * MONITOR, slow log, limits: one command path).  Its reply items reach
 * the sink below (the client is CLIENT_REPLY_SINK, attached by
 * clientCreate through httpEncoder), which keeps them as a flat pre-order
 * list of nodes until the top item is complete, then renders the HTTP
 * response (status line, Webdis's CORS headers, Content-Type, ETag: the
 * MD5 of the body, Connection, Content-Length) and appends it with
 * replyWriteBytes.
 *
 * Rendering (Webdis 0.1.9 against redis-server 7.0, checked by
 * tests/integration/test_http.py):
 *   json    {"VERB": v}: a status [true,"OK"], an error [false,"ERR .."],
 *           an integer, a string, null; an array of strings, integers and
 *           null (an error or nil inside: null); HGETALL an object; INFO
 *           an object of its "key:value" lines.  Strings are cut at a NUL
 *           and must be UTF-8 (else the value is left out, as jansson
 *           does: {} at the top); control bytes are \uXXXX, '/' is not
 *           escaped.  ?jsonp=f / ?callback=f: f(<json>);\n
 *           Beyond 0.1.9: nested arrays are arrays (0.1.9 writes null);
 *           after HELLO 3 a RESP3 map is an object.
 *   raw     the RESP2 bytes of the reply.
 *   msgpack (.msg, .msgpack) the JSON form's structure in MessagePack
 *           (renderMsgpack's comment).
 *   custom  (.txt .html .xml .png ... or ?type=) a string as is, a status
 *           "+OK", an error "-ERR ..", an integer in decimal, an array the
 *           concatenation of its strings (?sep= between); nil is 404.
 * A NOPERM error (ACL) is 403 with an empty body, as Webdis answers a
 * command its ACL forbids.  If-None-Match equal to the ETag is 304.
 * Beyond Webdis: HTTP Basic credentials run AUTH user pass before the
 * request (proto/http_parse.h); wrong ones, a NOAUTH error and a request
 * without credentials on a connection that sent some are 401 with
 * WWW-Authenticate (a browser asks for them).  A request without
 * credentials runs as the user of the first http-acl rule matching the
 * client's address, else as http-user.
 *
 * Listeners: http-port on the TCP connection type and http-tls-port on
 * the TLS one (HTTPS: tls-port's certificates and tls-auth-clients, the
 * context built on demand by tlsRequireServer), both on every http-bind
 * address, one protocol and one sink.  With http-console yes, GET / is the
 * web console's page (server/console.h) after the request's credentials
 * (a PING checks them: NOAUTH is 401).
 *
 * Pub/sub items reach the sink's push: a chunked stream (or Server-Sent
 * Events) on HTTP, one message each on a WebSocket, whose replies are
 * messages too (proto/websocket.h).  A head still incomplete after
 * http-request-timeout closes the connection (httpCron).
 *
 * Invariants: the reply tree holds at most one reply (it is rendered and
 * emptied when its top item completes); a push arriving while a reply is
 * being collected is dropped (commands do not publish to their own
 * client mid-reply); every byte goes out through replyWriteBytes. */
#include "server/http.h"

#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "core/client.h"
#include "core/config.h"
#include "core/conn.h"
#include "core/log.h"
#include "core/net.h"
#include "core/reply_write.h"
#include "core/server.h"
#include "ds/alloc.h"
#include "ds/md5.h"
#include "ds/util.h"
#include "proto/http_parse.h"
#include "proto/websocket.h"
#include "server/acl.h"
#include "server/console.h"

/* --- directives --- */

static int httpPort;
static int httpTlsPort;        /* http-tls-port: HTTPS, 0: off */
static char *httpBind;
static long long httpMaxRequestSize;
static int httpDefaultDb;
static char *httpUser;          /* http-user: the ACL user of requests without credentials, NULL: default */
static int httpRequestTimeout; /* seconds a request's head may take to arrive, 0: no limit */
static int httpClients;        /* connected HTTP clients */
static int httpConsole;        /* http-console: GET / serves the web console */

/* --- the reply tree --- */

/* H_MAP: a RESP3 map (a client that sent HELLO 3), its v counting keys and
 * values; everywhere but JSON it is the flat array RESP2 sends. */
enum { H_STATUS, H_ERROR, H_INT, H_BULK, H_NIL, H_ARRAY, H_NILARRAY, H_ATTR, H_RAW, H_MAP };

typedef struct HNode {
    unsigned char kind;
    long long v;      /* H_INT: the value; aggregates: their items */
    size_t off, len;  /* strings: their bytes in the arena */
} HNode;

typedef struct HFrame {
    size_t node;  /* the open aggregate */
    long want;    /* its items, -1 while deferred */
    long have;
} HFrame;

typedef struct HttpReply {
    HNode *nodes;
    size_t n, cap;
    sds arena;
    HFrame *stack;
    int depth, stackCap;
    long long headSince; /* when the cron first saw a head incomplete, 0: not */
} HttpReply;

static HttpConn *connOf(ReplySink *s) { return (HttpConn *)s; }

static void replyReset(HttpReply *R) {
    R->n = 0;
    R->depth = 0;
    sdsClear(R->arena);
    /* A big reply's memory goes back. */
    if (R->cap > 1024) {
        xfree(R->nodes);
        R->nodes = NULL;
        R->cap = 0;
    }
    if (sdsAllocSize(R->arena) > 64 * 1024) {
        sdsFree(R->arena);
        R->arena = sdsEmpty();
    }
}

static size_t addNode(HttpReply *R, int kind, long long v, const char *p, size_t len) {
    if (R->n == R->cap) {
        R->cap = R->cap ? R->cap * 2 : 16;
        R->nodes = xrealloc(R->nodes, R->cap * sizeof(HNode));
    }
    HNode *nd = &R->nodes[R->n];
    nd->kind = (unsigned char)kind;
    nd->v = v;
    nd->off = sdsLen(R->arena);
    nd->len = len;
    if (len) R->arena = sdsCatLen(R->arena, p, len);
    return R->n++;
}

static void finishReply(HttpConn *st);

/* An item is complete at the top of the stack: count it in its aggregate
 * and close every aggregate that is now full. */
static void itemDone(HttpConn *st) {
    HttpReply *R = st->gw;
    for (;;) {
        if (R->depth == 0) {
            finishReply(st);
            return;
        }
        HFrame *f = &R->stack[R->depth - 1];
        f->have++;
        if (f->want < 0 || f->have < f->want) return;
        R->depth--;
        if (R->nodes[f->node].kind == H_ATTR) { /* annotations count for nothing: dropped */
            R->n = f->node;
            return;
        }
    }
}

/* Closes the top aggregates that are full (a deferred length set). */
static void settle(HttpConn *st) {
    HttpReply *R = st->gw;
    while (R->depth > 0) {
        HFrame *f = &R->stack[R->depth - 1];
        if (f->want < 0 || f->have < f->want) return;
        R->depth--;
        if (R->nodes[f->node].kind == H_ATTR) {
            R->n = f->node;
            continue;
        }
        itemDone(st);
        return;
    }
}

static void pushFrame(HttpReply *R, size_t node, long want) {
    if (R->depth == R->stackCap) {
        R->stackCap = R->stackCap ? R->stackCap * 2 : 8;
        R->stack = xrealloc(R->stack, (size_t)R->stackCap * sizeof(HFrame));
    }
    R->stack[R->depth++] = (HFrame){node, want, 0};
}

static void leaf(ReplySink *s, int kind, long long v, const char *p, size_t len) {
    HttpConn *st = connOf(s);
    addNode(st->gw, kind, v, p, len);
    itemDone(st);
}

static void sinkStatus(ReplySink *s, const char *p, size_t len) { leaf(s, H_STATUS, 0, p, len); }
static void sinkError(ReplySink *s, const char *p, size_t len) { leaf(s, H_ERROR, 0, p, len); }
static void sinkInteger(ReplySink *s, long long v) { leaf(s, H_INT, v, NULL, 0); }
static void sinkBulk(ReplySink *s, const char *p, size_t len) { leaf(s, H_BULK, 0, p, len); }
static void sinkNull(ReplySink *s, ReplyNullKind kind) {
    leaf(s, kind == REPLY_NULL_ARRAY ? H_NILARRAY : H_NIL, 0, NULL, 0);
}
static void sinkBoolean(ReplySink *s, int b) { leaf(s, H_INT, b ? 1 : 0, NULL, 0); } /* RESP2: 1 or 0 */
static void sinkDouble(ReplySink *s, double d) {                                     /* RESP2: a bulk */
    char text[UTIL_MAX_DOUBLE_CHARS];
    int len = doubleToString(text, sizeof(text), d);
    leaf(s, H_BULK, 0, text, (size_t)len);
}
static void sinkBigNumber(ReplySink *s, const char *p, size_t len) { leaf(s, H_BULK, 0, p, len); }
static void sinkVerbatim(ReplySink *s, const char *p, size_t len, const char *ext) {
    (void)ext;
    leaf(s, H_BULK, 0, p, len);
}
static void sinkRaw(ReplySink *s, const char *p, size_t len) { leaf(s, H_RAW, 0, p, len); }

static void sinkAggregate(ReplySink *s, ReplyAggregate kind, long n) {
    HttpConn *st = connOf(s);
    HttpReply *R = st->gw;
    if (n < 0) {
        leaf(s, H_NILARRAY, 0, NULL, 0);
        return;
    }
    long items = (kind == REPLY_MAP || kind == REPLY_ATTRIBUTE) ? 2 * n : n;
    size_t node = addNode(R, kind == REPLY_ATTRIBUTE ? H_ATTR : kind == REPLY_MAP ? H_MAP : H_ARRAY, items, NULL, 0);
    if (items == 0) {
        if (kind == REPLY_ATTRIBUTE) R->n = node;
        else itemDone(st);
        return;
    }
    pushFrame(R, node, items);
}

static void *sinkDeferred(ReplySink *s) {
    HttpConn *st = connOf(s);
    HttpReply *R = st->gw;
    size_t node = addNode(R, H_ARRAY, 0, NULL, 0);
    pushFrame(R, node, -1);
    return (void *)(node + 1);
}

static void sinkSetDeferred(ReplySink *s, void *handle, ReplyAggregate kind, long n) {
    HttpConn *st = connOf(s);
    HttpReply *R = st->gw;
    size_t node = (size_t)handle - 1;
    long items = (kind == REPLY_MAP || kind == REPLY_ATTRIBUTE) ? 2 * n : n;
    for (int i = R->depth - 1; i >= 0; i--) {
        if (R->stack[i].node != node) continue;
        R->stack[i].want = items;
        R->nodes[node].v = items;
        if (kind == REPLY_ATTRIBUTE) R->nodes[node].kind = H_ATTR;
        if (kind == REPLY_MAP) R->nodes[node].kind = H_MAP;
        if (i == R->depth - 1) settle(st);
        return;
    }
}

static sds renderJson(const HttpRequest *r, const HttpReply *R);
static sds renderMsgpack(const HttpRequest *r, const HttpReply *R);
static sds rawValue(sds out, const HttpReply *R, size_t i, size_t *next);
static sds renderCustom(const HttpRequest *r, const HttpReply *R, int *status);
static void writeResponse(Client *c, const HttpRequest *r, int status, const char *ctype, const char *etag,
                          const char *body, size_t len);
static void writeWsMessage(Client *c, const HttpConn *st, const sds body);

/* One item of a stream (pub/sub, MONITOR) on an HTTP connection: the
 * first starts the response (200, chunked: Webdis's stream, or
 * Server-Sent Events with Accept: text/event-stream), each is one chunk.
 * From then on the connection only streams: later input is dropped. */
static void streamChunk(Client *c, HttpConn *st, const sds body) {
    const HttpRequest *r = &st->req;
    if (!st->streaming) {
        const char *ctype = r->sse ? "text/event-stream" : r->mime;
        sds h = sdsCatPrintf(sdsEmpty(),
                             "HTTP/1.%d 200 OK\r\n"
                             "Server: Cairn\r\n"
                             "Allow: GET,POST,PUT,OPTIONS\r\n"
                             "Access-Control-Allow-Methods: GET,POST,PUT,OPTIONS\r\n"
                             "Access-Control-Allow-Origin: *\r\n"
                             "Access-Control-Allow-Headers: X-Requested-With, Content-Type, Authorization\r\n"
                             "Content-Type: %s\r\n%s"
                             "Connection: Keep-Alive\r\n"
                             "Transfer-Encoding: chunked\r\n\r\n",
                             r->http10 ? 0 : 1, ctype, r->sse ? "Cache-Control: no-cache\r\n" : "");
        replyWriteBytes(c, h, sdsLen(h));
        sdsFree(h);
        st->streaming = 1;
        st->dead = 1; /* the connection only streams now */
    }
    sds chunk = sdsEmpty();
    if (r->sse) {
        /* An event's data may not hold a line end: JSON has none unescaped. */
        chunk = sdsCatPrintf(chunk, "%zx\r\ndata: ", sdsLen(body) + 8);
        chunk = sdsCatLen(chunk, body, sdsLen(body));
        chunk = sdsCatLen(chunk, "\n\n\r\n", 4);
    } else {
        chunk = sdsCatPrintf(chunk, "%zx\r\n", sdsLen(body));
        chunk = sdsCatLen(chunk, body, sdsLen(body));
        chunk = sdsCatLen(chunk, "\r\n", 2);
    }
    replyWriteBytes(c, chunk, sdsLen(chunk));
    sdsFree(chunk);
}

static void addPushString(HttpReply *R, PushBytes b) {
    if (b.p) addNode(R, H_BULK, 0, b.p, b.len);
    else addNode(R, H_NIL, 0, NULL, 0);
}

/* A pub/sub item (a subscription's confirmation, a message) on an HTTP
 * connection: the first one starts the response (200, chunked: Webdis's
 * stream), each is one chunk rendered as the reply array Redis would send
 * ({"SUBSCRIBE":["message","chan","hello"]}); with Accept:
 * text/event-stream each chunk is a Server-Sent Event "data: <json>".
 * From then on the connection only streams: later input is dropped.  A
 * MONITOR line is one more item ({"MONITOR":"<line>"}, "+<line>" in RESP).
 * Invalidations have no form here and are dropped. */
static void sinkPush(ReplySink *s, const PushItem *item) {
    HttpConn *st = connOf(s);
    Client *c = st->hooks.owner;
    HttpReply *R = st->gw;
    const HttpRequest *r = &st->req;
    if (R->n || R->depth) return; /* a reply is being collected */
    int withPattern = item->kind == PUSH_PMESSAGE;
    int isMessage = item->kind == PUSH_MESSAGE || item->kind == PUSH_PMESSAGE || item->kind == PUSH_SMESSAGE;
    if (item->kind == PUSH_MONITOR) {
        /* A MONITOR line: a status in RESP (as a RESP monitor gets it), a
         * string elsewhere ({"MONITOR":"1700000000.000001 [0 ...] \"SET\" ..."}). */
        addNode(R, r->format == HTTP_FMT_RAW && !r->sse ? H_STATUS : H_BULK, 0, item->payload.p, item->payload.len);
    } else if (!isMessage && !pushIsConfirmation(item->kind)) {
        return;
    } else {
        const char *kind = pushKindName(item->kind);
        addNode(R, H_ARRAY, withPattern ? 4 : 3, NULL, 0);
        addNode(R, H_BULK, 0, kind, strlen(kind));
        if (withPattern) addPushString(R, item->pattern);
        addPushString(R, item->channel);
        if (isMessage) addPushString(R, item->payload);
        else addNode(R, H_INT, item->count, NULL, 0);
    }
    sds body;
    int status = 200;
    if (r->sse || r->format == HTTP_FMT_JSON) body = renderJson(r, R);
    else if (r->format == HTTP_FMT_RAW) body = rawValue(sdsEmpty(), R, 0, &(size_t){0});
    else if (r->format == HTTP_FMT_MSGPACK) body = renderMsgpack(r, R);
    else body = renderCustom(r, R, &status);
    replyReset(R);
    if (!body) return;
    if (st->ws) { /* a message per item */
        writeWsMessage(c, st, body);
        sdsFree(body);
        return;
    }
    streamChunk(c, st, body);
    sdsFree(body);
}

static const ReplySinkType httpSinkType = {
    .name = "http",
    .status = sinkStatus,
    .error = sinkError,
    .integer = sinkInteger,
    .dbl = sinkDouble,
    .bulk = sinkBulk,
    .null = sinkNull,
    .boolean = sinkBoolean,
    .bigNumber = sinkBigNumber,
    .verbatim = sinkVerbatim,
    .aggregate = sinkAggregate,
    .deferred = sinkDeferred,
    .setDeferred = sinkSetDeferred,
    .raw = sinkRaw,
    .push = sinkPush,
};

/* --- rendering --- */

/* The node after i's subtree. */
static size_t skipNode(const HttpReply *R, size_t i) {
    const HNode *nd = &R->nodes[i++];
    if (nd->kind == H_ARRAY || nd->kind == H_ATTR || nd->kind == H_MAP)
        for (long k = 0; k < nd->v; k++) i = skipNode(R, i);
    return i;
}

/* Length of the UTF-8 sequence at p (of at most left bytes), 0 when it is
 * not valid (jansson's rules: no overlong forms, no surrogates, nothing
 * above U+10FFFF). */
static size_t utf8Seq(const unsigned char *p, size_t left) {
    unsigned c = p[0];
    size_t n;
    unsigned cp;
    if (c < 0x80) return 1;
    if (c < 0xC2) return 0;
    if (c < 0xE0) n = 2, cp = c & 0x1F;
    else if (c < 0xF0) n = 3, cp = c & 0x0F;
    else if (c <= 0xF4) n = 4, cp = c & 0x07;
    else return 0;
    if (left < n) return 0;
    for (size_t i = 1; i < n; i++) {
        if ((p[i] & 0xC0) != 0x80) return 0;
        cp = (cp << 6) | (p[i] & 0x3F);
    }
    if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
        return 0;
    return n;
}

/* Appends p[0..len) as a JSON string (cut at a NUL, as Webdis's C strings
 * are).  Returns 0 and appends nothing when it is not UTF-8. */
static int jsonString(sds *out, const char *p, size_t len) {
    const char *nul = memchr(p, '\0', len);
    if (nul) len = (size_t)(nul - p);
    for (size_t i = 0; i < len;) {
        size_t n = utf8Seq((const unsigned char *)p + i, len - i);
        if (!n) return 0;
        i += n;
    }
    sds s = sdsCatLen(*out, "\"", 1);
    size_t run = 0;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)p[i];
        const char *esc = NULL;
        char ubuf[8];
        if (c == '"') esc = "\\\"";
        else if (c == '\\') esc = "\\\\";
        else if (c == '\b') esc = "\\b";
        else if (c == '\f') esc = "\\f";
        else if (c == '\n') esc = "\\n";
        else if (c == '\r') esc = "\\r";
        else if (c == '\t') esc = "\\t";
        else if (c < 0x20) {
            snprintf(ubuf, sizeof(ubuf), "\\u%04X", c);
            esc = ubuf;
        }
        if (!esc) continue;
        s = sdsCatLen(s, p + run, i - run);
        s = sdsCat(s, esc);
        run = i + 1;
    }
    s = sdsCatLen(s, p + run, len - run);
    *out = sdsCatLen(s, "\"", 1);
    return 1;
}

static const char *nodeBytes(const HttpReply *R, const HNode *nd) { return R->arena + nd->off; }

/* Appends node i as a JSON value; returns 0 (nothing appended) for a
 * string that is not UTF-8.  *next gets the node after its subtree. */
static int jsonValue(sds *out, const HttpReply *R, size_t i, size_t *next) {
    const HNode *nd = &R->nodes[i];
    *next = i + 1;
    switch (nd->kind) {
    case H_STATUS:
    case H_BULK:
    case H_RAW:
        return jsonString(out, nodeBytes(R, nd), nd->len);
    case H_INT:
        *out = sdsCatPrintf(*out, "%lld", nd->v);
        return 1;
    case H_ARRAY: {
        *out = sdsCatLen(*out, "[", 1);
        size_t j = i + 1;
        int first = 1;
        for (long k = 0; k < nd->v; k++) {
            size_t mark = sdsLen(*out);
            if (!first) *out = sdsCatLen(*out, ",", 1);
            size_t nj;
            if (jsonValue(out, R, j, &nj)) first = 0;
            else sdsSetLen(*out, mark);
            j = nj;
        }
        *out = sdsCatLen(*out, "]", 1);
        *next = j;
        return 1;
    }
    case H_MAP: { /* an object; a key that is not a string or number drops its pair */
        *out = sdsCatLen(*out, "{", 1);
        size_t j = i + 1;
        int first = 1;
        for (long k = 0; k < nd->v; k += 2) {
            size_t mark = sdsLen(*out), nj;
            if (!first) *out = sdsCatLen(*out, ",", 1);
            const HNode *key = &R->nodes[j];
            int ok = 0;
            if (key->kind == H_BULK || key->kind == H_STATUS) ok = jsonString(out, nodeBytes(R, key), key->len);
            else if (key->kind == H_INT) ok = (*out = sdsCatPrintf(*out, "\"%lld\"", key->v)) != NULL;
            j = skipNode(R, j);
            if (ok) {
                *out = sdsCatLen(*out, ":", 1);
                ok = jsonValue(out, R, j, &nj);
            }
            j = skipNode(R, j);
            if (ok) first = 0;
            else sdsSetLen(*out, mark);
        }
        *out = sdsCatLen(*out, "}", 1);
        *next = j;
        return 1;
    }
    case H_ATTR:
        *next = skipNode(R, i);
        *out = sdsCat(*out, "null");
        return 1;
    default: /* nil, an error inside an array */
        *out = sdsCat(*out, "null");
        return 1;
    }
}

/* HGETALL's object: string keys and values; NULL-equivalent (0) when the
 * array cannot be one. */
static int jsonObject(sds *out, const HttpReply *R, size_t i) {
    const HNode *nd = &R->nodes[i];
    if (nd->v % 2) return 0;
    size_t j = i + 1;
    for (long k = 0; k < nd->v; k += 2) { /* check first: Webdis drops the whole object */
        const HNode *key = &R->nodes[j];
        if (key->kind != H_BULK) return 0;
        j = j + 1;
        int vk = R->nodes[j].kind;
        if (vk != H_NIL && vk != H_NILARRAY && vk != H_BULK && vk != H_INT && vk != H_ARRAY) return 0;
        j = skipNode(R, j);
    }
    *out = sdsCatLen(*out, "{", 1);
    int first = 1;
    j = i + 1;
    for (long k = 0; k < nd->v; k += 2) {
        size_t mark = sdsLen(*out);
        if (!first) *out = sdsCatLen(*out, ",", 1);
        const HNode *key = &R->nodes[j];
        size_t nj;
        int ok = jsonString(out, nodeBytes(R, key), key->len);
        if (ok) {
            *out = sdsCatLen(*out, ":", 1);
            ok = jsonValue(out, R, j + 1, &nj);
        }
        j = skipNode(R, j + 1);
        if (ok) first = 0;
        else sdsSetLen(*out, mark);
    }
    *out = sdsCatLen(*out, "}", 1);
    return 1;
}

/* INFO's object: "key:value" per line (up to '\r'), as Webdis splits it. */
static void jsonInfo(sds *out, const char *s, size_t len) {
    const char *nul = memchr(s, '\0', len);
    if (nul) len = (size_t)(nul - s);
    const char *p = s, *end = s + len;
    *out = sdsCatLen(*out, "{", 1);
    int first = 1;
    while (p < end) {
        const char *colon = memchr(p, ':', (size_t)(end - p));
        if (!colon) break;
        const char *k = p;
        size_t klen = (size_t)(colon - p);
        p = colon + 1;
        const char *cr = memchr(p, '\r', (size_t)(end - p));
        if (!cr) break;
        const char *v = p;
        size_t vlen = (size_t)(cr - p);
        p = cr + 1;
        if (p < end && *p == '\n') p++;
        size_t mark = sdsLen(*out);
        if (!first) *out = sdsCatLen(*out, ",", 1);
        if (jsonString(out, k, klen) && (*out = sdsCatLen(*out, ":", 1), jsonString(out, v, vlen))) first = 0;
        else sdsSetLen(*out, mark);
    }
    *out = sdsCatLen(*out, "}", 1);
}

/* --- MessagePack (.msg, .msgpack) ---
 * As Webdis's msgpack build writes it (application/x-msgpack): a map of
 * one pair, the verb to the value; strings in the old "raw" family (fixraw,
 * raw16, raw32: bytes as they are, no UTF-8 check), integers in their
 * smallest form, a status [true, text], an error [false, text], nil for
 * nil; INFO a map of its "key:value" lines and HGETALL a map (nil when its
 * items are not all strings).  Where Webdis writes nil for an array inside
 * an array, or breaks the map on INFO's section headers, this writes the
 * array and skips the headers (the same choices as JSON above). */

static sds mpRaw(sds out, const char *p, size_t len) {
    unsigned char h[5];
    size_t n;
    if (len < 32) h[0] = (unsigned char)(0xa0 | len), n = 1;
    else if (len < 65536) h[0] = 0xda, h[1] = (unsigned char)(len >> 8), h[2] = (unsigned char)len, n = 3;
    else {
        h[0] = 0xdb;
        for (int i = 0; i < 4; i++) h[1 + i] = (unsigned char)((uint64_t)len >> (24 - 8 * i));
        n = 5;
    }
    out = sdsCatLen(out, (const char *)h, n);
    return sdsCatLen(out, p, len);
}

/* A container header: fix form under 16, else 16 or 32 bits (fix, 16, 32
 * are 0x90/0xdc/0xdd for arrays, 0x80/0xde/0xdf for maps). */
static sds mpHeader(sds out, int map, uint64_t n) {
    unsigned char h[5];
    size_t len;
    if (n < 16) h[0] = (unsigned char)((map ? 0x80 : 0x90) | n), len = 1;
    else if (n < 65536) h[0] = map ? 0xde : 0xdc, h[1] = (unsigned char)(n >> 8), h[2] = (unsigned char)n, len = 3;
    else {
        h[0] = map ? 0xdf : 0xdd;
        for (int i = 0; i < 4; i++) h[1 + i] = (unsigned char)(n >> (24 - 8 * i));
        len = 5;
    }
    return sdsCatLen(out, (const char *)h, len);
}

static sds mpInt(sds out, long long v) {
    unsigned char h[9];
    size_t n;
    uint64_t u = (uint64_t)v;
    int bytes;
    if (v >= 0 && v < 128) {
        h[0] = (unsigned char)v;
        return sdsCatLen(out, (const char *)h, 1);
    }
    if (v < 0 && v >= -32) {
        h[0] = (unsigned char)(0xe0 | (v & 0x1f));
        return sdsCatLen(out, (const char *)h, 1);
    }
    if (v >= 0) { /* uint 8/16/32/64 */
        if (v < 256) h[0] = 0xcc, bytes = 1;
        else if (v < 65536) h[0] = 0xcd, bytes = 2;
        else if (v <= 0xffffffffLL) h[0] = 0xce, bytes = 4;
        else h[0] = 0xcf, bytes = 8;
    } else { /* int 8/16/32/64 */
        if (v >= -128) h[0] = 0xd0, bytes = 1;
        else if (v >= -32768) h[0] = 0xd1, bytes = 2;
        else if (v >= -2147483648LL) h[0] = 0xd2, bytes = 4;
        else h[0] = 0xd3, bytes = 8;
    }
    for (int i = 0; i < bytes; i++) h[1 + i] = (unsigned char)(u >> (8 * (bytes - 1 - i)));
    n = (size_t)bytes + 1;
    return sdsCatLen(out, (const char *)h, n);
}

/* Node i as a MessagePack value; *next gets the node after its subtree. */
static sds mpValue(sds out, const HttpReply *R, size_t i, size_t *next) {
    const HNode *nd = &R->nodes[i];
    *next = i + 1;
    switch (nd->kind) {
    case H_STATUS:
    case H_BULK:
    case H_RAW:
        return mpRaw(out, nodeBytes(R, nd), nd->len);
    case H_INT:
        return mpInt(out, nd->v);
    case H_ARRAY:
    case H_MAP: {
        out = mpHeader(out, nd->kind == H_MAP, (uint64_t)(nd->kind == H_MAP ? nd->v / 2 : nd->v));
        size_t j = i + 1;
        for (long k = 0; k < nd->v; k++) out = mpValue(out, R, j, &j);
        *next = j;
        return out;
    }
    case H_ATTR:
        *next = skipNode(R, i);
        return sdsCatLen(out, "\xc0", 1);
    default: /* nil, an error inside an array */
        return sdsCatLen(out, "\xc0", 1);
    }
}

static sds mpInfo(sds out, const char *s, size_t len) {
    size_t pairs = 0;
    for (int pass = 0; pass < 2; pass++) {
        if (pass) out = mpHeader(out, 1, pairs);
        const char *p = s, *end = s + len;
        while (p < end) {
            const char *cr = memchr(p, '\r', (size_t)(end - p));
            const char *eol = cr ? cr : end;
            const char *colon = memchr(p, ':', (size_t)(eol - p));
            if (colon && p[0] != '#') {
                if (pass) {
                    out = mpRaw(out, p, (size_t)(colon - p));
                    out = mpRaw(out, colon + 1, (size_t)(eol - colon - 1));
                } else {
                    pairs++;
                }
            }
            p = eol + 1;
            if (p < end && *p == '\n') p++;
        }
    }
    return out;
}

static sds renderMsgpack(const HttpRequest *r, const HttpReply *R) {
    sds out = mpHeader(sdsEmpty(), 1, 1);
    out = mpRaw(out, r->verb, sdsLen(r->verb));
    const HNode *nd = &R->nodes[0];
    size_t next;
    if (nd->kind == H_STATUS || nd->kind == H_ERROR) {
        out = mpHeader(out, 0, 2);
        out = sdsCatLen(out, nd->kind == H_ERROR ? "\xc2" : "\xc3", 1);
        return mpRaw(out, nodeBytes(R, nd), nd->len);
    }
    if (nd->kind == H_BULK && strcasecmp(r->verb, "INFO") == 0) return mpInfo(out, nodeBytes(R, nd), nd->len);
    if (nd->kind == H_ARRAY && strcasecmp(r->verb, "HGETALL") == 0) {
        int strings = nd->v % 2 == 0;
        for (size_t j = 1; strings && j <= (size_t)nd->v; j++) strings = R->nodes[j].kind == H_BULK;
        if (!strings) return sdsCatLen(out, "\xc0", 1);
        out = mpHeader(out, 1, (uint64_t)nd->v / 2);
        for (size_t j = 1; j <= (size_t)nd->v; j++) out = mpRaw(out, nodeBytes(R, &R->nodes[j]), R->nodes[j].len);
        return out;
    }
    return mpValue(out, R, 0, &next);
}

static sds renderJson(const HttpRequest *r, const HttpReply *R) {
    /* jsonp wraps a one-off reply; an SSE event is the JSON alone. */
    sds out = sdsEmpty();
    if (r->jsonp) out = sdsCatPrintf(out, "%s(", r->jsonp);
    size_t start = sdsLen(out);
    out = sdsCatLen(out, "{", 1);
    const HNode *nd = &R->nodes[0];
    if (jsonString(&out, r->verb, sdsLen(r->verb))) {
        out = sdsCatLen(out, ":", 1);
        size_t next;
        int ok = 1;
        if (nd->kind == H_STATUS || nd->kind == H_ERROR) {
            out = sdsCat(out, nd->kind == H_ERROR ? "[false" : "[true");
            size_t m2 = sdsLen(out);
            out = sdsCatLen(out, ",", 1);
            if (!jsonString(&out, nodeBytes(R, nd), nd->len)) sdsSetLen(out, m2);
            out = sdsCatLen(out, "]", 1);
        } else if (nd->kind == H_BULK && strcasecmp(r->verb, "INFO") == 0) {
            jsonInfo(&out, nodeBytes(R, nd), nd->len);
        } else if (nd->kind == H_ARRAY && strcasecmp(r->verb, "HGETALL") == 0) {
            ok = jsonObject(&out, R, 0);
        } else {
            ok = jsonValue(&out, R, 0, &next);
        }
        if (!ok) sdsSetLen(out, start + 1); /* no value: no key either, {} */
    }
    out = sdsCatLen(out, "}", 1);
    if (r->jsonp) out = sdsCatLen(out, ");\n", 3);
    return out;
}

/* The RESP2 bytes of node i. */
static sds rawValue(sds out, const HttpReply *R, size_t i, size_t *next) {
    const HNode *nd = &R->nodes[i];
    *next = i + 1;
    switch (nd->kind) {
    case H_STATUS:
        out = sdsCatLen(out, "+", 1);
        out = sdsCatLen(out, nodeBytes(R, nd), nd->len);
        return sdsCatLen(out, "\r\n", 2);
    case H_ERROR:
        out = sdsCatLen(out, "-", 1);
        out = sdsCatLen(out, nodeBytes(R, nd), nd->len);
        return sdsCatLen(out, "\r\n", 2);
    case H_INT:
        return sdsCatPrintf(out, ":%lld\r\n", nd->v);
    case H_BULK:
        out = sdsCatPrintf(out, "$%zu\r\n", nd->len);
        out = sdsCatLen(out, nodeBytes(R, nd), nd->len);
        return sdsCatLen(out, "\r\n", 2);
    case H_RAW:
        return sdsCatLen(out, nodeBytes(R, nd), nd->len);
    case H_NIL:
        return sdsCatLen(out, "$-1\r\n", 5);
    case H_NILARRAY:
        return sdsCatLen(out, "*-1\r\n", 5);
    case H_ARRAY:
    case H_MAP: {
        out = sdsCatPrintf(out, "*%lld\r\n", nd->v);
        size_t j = i + 1;
        for (long k = 0; k < nd->v; k++) out = rawValue(out, R, j, &j);
        *next = j;
        return out;
    }
    default:
        *next = skipNode(R, i);
        return out;
    }
}

/* The custom format's body; NULL with *status 404 (nil) or 400. */
static sds renderCustom(const HttpRequest *r, const HttpReply *R, int *status) {
    const HNode *nd = &R->nodes[0];
    switch (nd->kind) {
    case H_NIL:
    case H_NILARRAY:
        *status = 404;
        return NULL;
    case H_BULK:
    case H_RAW:
        return sdsNewLen(nodeBytes(R, nd), nd->len);
    case H_STATUS:
    case H_ERROR: {
        sds s = sdsNewLen(nd->kind == H_STATUS ? "+" : "-", 1);
        return sdsCatLen(s, nodeBytes(R, nd), nd->len);
    }
    case H_INT:
        return sdsFromLongLong(nd->v);
    case H_ARRAY:
    case H_MAP: {
        sds s = sdsEmpty();
        size_t j = 1;
        for (long k = 0; k < nd->v; k++) {
            const HNode *e = &R->nodes[j];
            if (e->kind == H_BULK) {
                if (r->sep && k != 0) s = sdsCatLen(s, r->sep, sdsLen(r->sep));
                s = sdsCatLen(s, nodeBytes(R, e), e->len);
            }
            j = skipNode(R, j);
        }
        return s;
    }
    default:
        *status = 400;
        return NULL;
    }
}

static const char *reason(int status) {
    switch (status) {
    case 200: return "OK";
    case 304: return "Not Modified";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "Not found";
    case 405: return "Method Not Allowed";
    case 413: return "Request Entity Too Large";
    case 414: return "URI Too Long";
    case 431: return "Request Header Fields Too Large";
    case 501: return "Not Implemented";
    default: return "Service Unavailable";
    }
}

/* Writes one response: status, Webdis's headers, then (when ctype is not
 * NULL) Content-Type, ETag and the body; closes after it unless the
 * request keeps the connection. */
static void writeResponse(Client *c, const HttpRequest *r, int status, const char *ctype, const char *etag,
                          const char *body, size_t len) {
    sds h = sdsCatPrintf(sdsEmpty(),
                         "HTTP/1.%d %d %s\r\n"
                         "Server: Cairn\r\n"
                         "Allow: GET,POST,PUT,OPTIONS\r\n"
                         "Access-Control-Allow-Methods: GET,POST,PUT,OPTIONS\r\n"
                         "Access-Control-Allow-Origin: *\r\n"
                         "Access-Control-Allow-Headers: X-Requested-With, Content-Type, Authorization\r\n",
                         r->http10 ? 0 : 1, status, reason(status));
    if (status == 401 && !r->xhr) h = sdsCat(h, "WWW-Authenticate: Basic realm=\"cairn\"\r\n");
    if (ctype && etag) h = sdsCatPrintf(h, "Content-Type: %s\r\nETag: \"%s\"\r\n", ctype, etag);
    h = sdsCatPrintf(h, "Connection: %s\r\n", r->keepAlive ? "Keep-Alive" : "Close");
    if (ctype && !etag) h = sdsCatPrintf(h, "Content-Type: %s\r\n", ctype);
    h = sdsCatPrintf(h, "Content-Length: %zu\r\n\r\n", len);
    replyWriteBytes(c, h, sdsLen(h));
    replyWriteBytes(c, body, len);
    sdsFree(h);
    if (!r->keepAlive) c->flags |= CLIENT_CLOSE_AFTER_REPLY;
}

/* A WebSocket message to the client: JSON as text, RESP as binary. */
static void writeWsMessage(Client *c, const HttpConn *st, const sds body) {
    sds f = wsFrameAppend(sdsEmpty(), st->ws == HTTP_WS_JSON ? WS_TEXT : WS_BINARY, body, sdsLen(body));
    replyWriteBytes(c, f, sdsLen(f));
    sdsFree(f);
}

/* The console page's ETag (the MD5 of its bytes), computed on the first
 * request for the page. */
static char consoleEtag[33];

static int consoleEtagMatches(const sds inm) {
    return sdsLen(inm) == 34 && inm[0] == '"' && memcmp(inm + 1, consoleEtag, 32) == 0 && inm[33] == '"';
}

/* The reply tree is whole: answer the request (or, for the gateway's own
 * SELECT, answer only with its error). */
static void finishReply(HttpConn *st) {
    Client *c = st->hooks.owner;
    HttpReply *R = st->gw;
    const HttpRequest *r = &st->req;
    const HNode *top = &R->nodes[0];
    if (st->internal == HTTP_CMD_CONSOLE) { /* the page, unless the client must authenticate first */
        int noauth = top->kind == H_ERROR && top->len >= 6 && memcmp(nodeBytes(R, top), "NOAUTH", 6) == 0;
        replyReset(R);
        if (!consoleEtag[0]) md5Hex((const char *)consolePage, consolePageLen, consoleEtag);
        if (noauth) writeResponse(c, r, 401, NULL, NULL, "", 0);
        else if (r->ifNoneMatch && consoleEtagMatches(r->ifNoneMatch)) writeResponse(c, r, 304, NULL, NULL, "", 0);
        else writeResponse(c, r, 200, r->mime, consoleEtag, (const char *)consolePage, consolePageLen);
        return;
    }
    if (st->internal) {
        if (top->kind != H_ERROR) {
            replyReset(R);
            return;
        }
        httpDropQueue(st); /* the request's command does not run */
        if (st->ws) { /* a WebSocket's SELECT: its error as a message */
            sds body = renderJson(r, R);
            replyReset(R);
            writeWsMessage(c, st, body);
            sdsFree(body);
            return;
        }
        if (st->internal == HTTP_CMD_AUTH) { /* wrong credentials */
            sdsFree(st->basicAuth);
            st->basicAuth = NULL;
            writeResponse(c, r, 401, NULL, NULL, "", 0);
            replyReset(R);
            return;
        }
    }
    if (st->ws) { /* every reply is a message, errors included */
        size_t next;
        sds body = r->format == HTTP_FMT_JSON ? renderJson(r, R) : rawValue(sdsEmpty(), R, 0, &next);
        replyReset(R);
        writeWsMessage(c, st, body);
        sdsFree(body);
        return;
    }
    if (top->kind == H_ERROR && top->len >= 6 && memcmp(nodeBytes(R, top), "NOPERM", 6) == 0) {
        writeResponse(c, r, 403, NULL, NULL, "", 0);
        replyReset(R);
        return;
    }
    if (top->kind == H_ERROR && top->len >= 6 && memcmp(nodeBytes(R, top), "NOAUTH", 6) == 0) {
        writeResponse(c, r, 401, NULL, NULL, "", 0);
        replyReset(R);
        return;
    }
    int status = 200;
    sds body;
    if (top->kind == H_STATUS && strcasecmp(r->verb, "MONITOR") == 0) {
        /* MONITOR's +OK starts a stream its lines follow, as a RESP monitor's. */
        body = r->sse || r->format == HTTP_FMT_JSON ? renderJson(r, R)
               : r->format == HTTP_FMT_RAW           ? rawValue(sdsEmpty(), R, 0, &(size_t){0})
               : r->format == HTTP_FMT_MSGPACK       ? renderMsgpack(r, R)
                                                     : renderCustom(r, R, &status);
        replyReset(R);
        if (body) streamChunk(c, st, body);
        sdsFree(body);
        return;
    }
    if (r->format == HTTP_FMT_JSON) {
        body = renderJson(r, R);
    } else if (r->format == HTTP_FMT_RAW) {
        size_t next;
        body = rawValue(sdsEmpty(), R, 0, &next);
    } else if (r->format == HTTP_FMT_MSGPACK) {
        body = renderMsgpack(r, R);
    } else {
        body = renderCustom(r, R, &status);
    }
    replyReset(R);
    if (!body) {
        writeResponse(c, r, status, NULL, NULL, "", 0);
        return;
    }
    char etag[33];
    md5Hex(body, sdsLen(body), etag);
    if (r->ifNoneMatch && sdsLen(r->ifNoneMatch) == 34 && r->ifNoneMatch[0] == '"' &&
        memcmp(r->ifNoneMatch + 1, etag, 32) == 0 && r->ifNoneMatch[33] == '"') {
        writeResponse(c, r, 304, NULL, NULL, "", 0);
    } else {
        writeResponse(c, r, 200, r->mime, etag, body, sdsLen(body));
    }
    sdsFree(body);
}

/* --- the protocol's hooks --- */

static void hookAnswer(void *owner, int status, int closeAfter) {
    Client *c = owner;
    HttpConn *st = c->protoState;
    HttpRequest r = st->req;
    r.keepAlive = !closeAfter;
    if (status == HTTP_ANSWER_OPTIONS) writeResponse(c, &r, 200, "text/html", NULL, "", 0);
    else writeResponse(c, &r, status, NULL, NULL, "", 0);
    if (closeAfter) c->flags |= CLIENT_CLOSE_AFTER_REPLY;
}

static void hookWrite(void *owner, const char *p, size_t len, int closeAfter) {
    Client *c = owner;
    replyWriteBytes(c, p, len);
    if (closeAfter) c->flags |= CLIENT_CLOSE_AFTER_REPLY;
}

/* --- http-acl: client addresses to ACL users --- */

typedef struct HttpAclRule {
    sds text;                /* as configured: "10.0.0.0/8=intranet" */
    int family;              /* AF_INET, AF_INET6 */
    unsigned char addr[16];
    int bits;                /* prefix length */
    sds user;
} HttpAclRule;

static HttpAclRule *httpAcl;
static int httpAclCount;

/* "<address>[/<bits>]=<user>" into *r: 0, or -1. */
static int parseAclRule(const char *s, HttpAclRule *r) {
    const char *eq = strchr(s, '=');
    char net[64];
    if (!eq || !eq[1] || (size_t)(eq - s) >= sizeof(net)) return -1;
    memcpy(net, s, (size_t)(eq - s));
    net[eq - s] = '\0';
    int bits = -1;
    char *slash = strchr(net, '/');
    if (slash) {
        *slash = '\0';
        if (!slash[1] || strlen(slash + 1) > 3) return -1;
        bits = 0;
        for (const char *d = slash + 1; *d; d++) {
            if (*d < '0' || *d > '9') return -1;
            bits = bits * 10 + (*d - '0');
        }
    }
    int max;
    if (inet_pton(AF_INET, net, r->addr) == 1) r->family = AF_INET, max = 32;
    else if (inet_pton(AF_INET6, net, r->addr) == 1) r->family = AF_INET6, max = 128;
    else return -1;
    if (bits < 0) bits = max;
    if (bits > max) return -1;
    r->bits = bits;
    r->text = sdsNew(s);
    r->user = sdsNew(eq + 1);
    return 0;
}

static void freeAcl(HttpAclRule *rules, int n) {
    for (int i = 0; i < n; i++) {
        sdsFree(rules[i].text);
        sdsFree(rules[i].user);
    }
    xfree(rules);
}

static int setHttpAcl(ConfigDef *d, sds *argv, int argc, const char **err) {
    (void)d;
    if (argc == 1 && argv[0][0] == '\0') argc = 0;
    HttpAclRule *rules = argc ? xcalloc(sizeof(HttpAclRule) * (size_t)argc) : NULL;
    for (int i = 0; i < argc; i++) {
        if (parseAclRule(argv[i], &rules[i]) == -1) {
            freeAcl(rules, i);
            *err = "Invalid http-acl rule (expected <address>[/<bits>]=<user>)";
            return -1;
        }
    }
    freeAcl(httpAcl, httpAclCount);
    httpAcl = rules;
    httpAclCount = argc;
    return 0;
}

static sds getHttpAcl(const ConfigDef *d) {
    (void)d;
    sds s = sdsEmpty();
    for (int i = 0; i < httpAclCount; i++) {
        if (i) s = sdsCatLen(s, " ", 1);
        s = sdsCatLen(s, httpAcl[i].text, sdsLen(httpAcl[i].text));
    }
    return s;
}

/* The first rule whose network holds the client's address, or NULL. */
static const HttpAclRule *aclRuleFor(const Client *c) {
    if (!httpAclCount) return NULL;
    char ip[64];
    const char *colon = strrchr(c->addr, ':');
    size_t n = colon ? (size_t)(colon - c->addr) : strlen(c->addr);
    if (n >= sizeof(ip)) return NULL;
    memcpy(ip, c->addr, n);
    ip[n] = '\0';
    unsigned char a[16];
    int family;
    if (inet_pton(AF_INET, ip, a) == 1) {
        family = AF_INET;
    } else if (inet_pton(AF_INET6, ip, a) == 1) {
        static const unsigned char mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
        family = AF_INET6;
        if (memcmp(a, mapped, 12) == 0) { /* an IPv4 client on an IPv6 socket */
            memmove(a, a + 12, 4);
            family = AF_INET;
        }
    } else {
        return NULL;
    }
    for (int i = 0; i < httpAclCount; i++) {
        const HttpAclRule *r = &httpAcl[i];
        if (r->family != family) continue;
        int full = r->bits / 8, rest = r->bits % 8;
        if (memcmp(a, r->addr, (size_t)full) != 0) continue;
        if (rest && ((a[full] ^ r->addr[full]) & (0xff << (8 - rest)) & 0xff)) continue;
        return r;
    }
    return NULL;
}

/* A request without credentials: the user of the first http-acl rule
 * matching the client's address, else http-user, else nothing to do. */
static int hookAnonymous(void *owner) {
    Client *c = owner;
    const HttpAclRule *r = aclRuleFor(c);
    if (r) return aclAuthenticateAs(c, r->user, sdsLen(r->user));
    if (!httpUser || !httpUser[0]) return 0;
    return aclAuthenticateAs(c, httpUser, strlen(httpUser));
}

static int hookCurrentDb(void *owner) {
    Client *c = owner;
    return (int)(c->db - server.db);
}

static void hookRelease(void *gw) {
    HttpReply *R = gw;
    httpClients--;
    xfree(R->nodes);
    xfree(R->stack);
    sdsFree(R->arena);
    xfree(R);
}

/* clientCreate's attach: the sink lives in the protocol state. */
static ReplySink *httpAttach(Client *c) {
    HttpConn *st = c->protoState;
    HttpReply *R = xcalloc(sizeof(HttpReply));
    R->arena = sdsEmpty();
    httpClients++;
    st->gw = R;
    st->sink.type = &httpSinkType;
    st->hooks = (HttpHooks){.owner = c,
                            .answer = hookAnswer,
                            .write = hookWrite,
                            .anonymous = hookAnonymous,
                            .currentDb = hookCurrentDb,
                            .release = hookRelease,
                            .defaultDb = &httpDefaultDb,
                            .maxRequestSize = &httpMaxRequestSize,
                            .console = &httpConsole};
    return &st->sink;
}

static const ReplyEncoder httpEncoder = {.name = "http", .sink = &httpSinkType, .attach = httpAttach};

static Listener httpListener = {.name = "http", .type = &connTcpType, .proto = &httpProtocol, .encoder = &httpEncoder};
/* http-tls-port: the same gateway on the TLS connection type (tls-port's
 * certificates and tls-auth-clients). */
static Listener httpsListener = {.name = "https", .type = &connTlsType, .proto = &httpProtocol, .encoder = &httpEncoder};

/* --- slow heads --- */

/* Once a second: a client whose request head has been incomplete for more
 * than http-request-timeout seconds is closed (a slowloris client sends a
 * head a byte at a time and never finishes it; `timeout` cannot see it, as
 * each byte is activity).  Bodies are bounded by `timeout` between
 * reads.  Nothing runs while no HTTP client is connected. */
static void httpCron(void) {
    static long long last;
    long long now = server.time.nowMs;
    if (!httpClients || !httpRequestTimeout || now - last < 1000) return;
    last = now;
    for (Client *c = server.net.clients, *next; c; c = next) {
        next = c->nextClient;
        if (c->proto != &httpProtocol || !c->sink) continue;
        HttpConn *st = c->protoState;
        HttpReply *R = st->gw;
        if (!st->inHead || sdsLen(c->querybuf) == 0) {
            R->headSince = 0;
        } else if (!R->headSince) {
            R->headSince = now;
        } else if (now - R->headSince > (long long)httpRequestTimeout * 1000) {
            serverLog(LL_VERBOSE, "Closing HTTP client id=%llu addr=%s: request head not complete after %d s",
                      (unsigned long long)c->id, c->addr, httpRequestTimeout);
            clientFree(c);
        }
    }
}

/* --- listening --- */

/* Binds l to every http-bind address on port and attaches it.  0, or -1
 * after logging why (l closed). */
static int listenOn(Listener *l, int port, const char *what) {
    int count = 0;
    sds *addrs = sdsSplitLen(httpBind ? httpBind : "", httpBind ? (ssize_t)strlen(httpBind) : 0, " ", 1, &count);
    int rc = 0;
    for (int i = 0; i < count; i++) {
        if (sdsLen(addrs[i]) == 0) continue;
        ConnListenSpec spec = {.addr = addrs[i], .port = port, .backlog = server.cfg.tcpBacklog};
        if (listenerBind(l, &spec) == -1) {
            serverLog(LL_WARNING, "Could not create %s listening socket %s:%d: %s", what, addrs[i], port,
                      strerror(errno));
            listenerClose(l, 0);
            rc = -1;
            break;
        }
    }
    sdsFreeSplitRes(addrs, count);
    if (rc == 0 && l->count == 0) {
        serverLog(LL_WARNING, "%s port %d set but http-bind has no address", what, port);
        rc = -1;
    }
    if (rc == 0 && netAttachListener(l) == -1) {
        listenerClose(l, 0);
        rc = -1;
    }
    if (rc == 0) serverLog(LL_NOTICE, "%s gateway listening on port %d (%s)", what, port, httpBind);
    return rc;
}

int httpListen(void) {
    if (httpPort && listenOn(&httpListener, httpPort, "HTTP") == -1) return -1;
    if (httpTlsPort) {
        if (tlsRequireServer() == -1) {
            serverLog(LL_WARNING, "http-tls-port %d needs TLS (tls-cert-file, tls-key-file)", httpTlsPort);
            return -1;
        }
        if (listenOn(&httpsListener, httpTlsPort, "HTTPS") == -1) return -1;
    }
    return 0;
}

/* CONFIG SET http-port / http-tls-port / http-bind: listen again with the
 * new values. */
static int httpApplyListen(const char **err) {
    netDetachListener(&httpListener);
    netDetachListener(&httpsListener);
    if (httpListen() == -1) {
        netDetachListener(&httpListener);
        *err = "Unable to listen on this port";
        return -1;
    }
    return 0;
}

static ConfigDef httpConfig[] = {
    /* Cairn's own (hidden, so CONFIG GET * lists Redis's names only). */
    CONFIG_INT("http-port", NULL, CF_HIDDEN, httpPort, 0, 65535, "0", .apply = httpApplyListen,
               .rank = CONFIG_RANK_CAIRN + 20),
    CONFIG_INT("http-tls-port", NULL, CF_HIDDEN, httpTlsPort, 0, 65535, "0", .apply = httpApplyListen,
               .rank = CONFIG_RANK_CAIRN + 28),
    CONFIG_STRING("http-bind", NULL, CF_HIDDEN, httpBind, "127.0.0.1", .apply = httpApplyListen,
                  .rank = CONFIG_RANK_CAIRN + 21),
    CONFIG_LL("http-max-request-size", NULL, CF_HIDDEN | CF_MEMORY, httpMaxRequestSize, 1024, LLONG_MAX,
              "128mb", .rank = CONFIG_RANK_CAIRN + 22),
    CONFIG_INT("http-default-db", NULL, CF_HIDDEN, httpDefaultDb, 0, INT_MAX, "0", .rank = CONFIG_RANK_CAIRN + 23),
    CONFIG_STRING("http-user", NULL, CF_HIDDEN | CF_EMPTY_NULL, httpUser, "", .rank = CONFIG_RANK_CAIRN + 25),
    CONFIG_SPECIAL("http-acl", NULL, CF_HIDDEN | CF_MULTI_ARG, "", setHttpAcl, getHttpAcl,
                   .rank = CONFIG_RANK_CAIRN + 26),
    CONFIG_BOOL("http-console", NULL, CF_HIDDEN, httpConsole, "no", .rank = CONFIG_RANK_CAIRN + 27),
    CONFIG_INT("http-request-timeout", NULL, CF_HIDDEN, httpRequestTimeout, 0, INT_MAX, "10",
               .rank = CONFIG_RANK_CAIRN + 24),
};

void httpRegisterConfig(void) { configRegister(httpConfig, CONFIG_COUNT_OF(httpConfig)); }

void httpInit(void) { serverAddCronHook(httpCron); }
