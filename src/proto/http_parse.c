/* http_parse.c -- HTTP/1.1 requests to commands with Webdis's URL grammar
 * (see http_parse.h for the grammar, bounds and answers).
 *
 * Invariants:
 *   - nothing is consumed before a request is whole: a call either
 *     consumes one whole request or nothing (a fatal error consumes all);
 *   - every scan of the buffer is bounded by HTTP_MAX_HEAD for the head
 *     and by the declared Content-Length for the body, itself bounded by
 *     http-max-request-size before anything waits for it;
 *   - the commands of one request are queued here and handed out one per
 *     call without consuming bytes; the caller runs each before asking for
 *     the next, so the gateway's SELECT has run when the command is handed
 *     out. */
#include "proto/http_parse.h"

#include <ctype.h>
#include <string.h>
#include <strings.h>

#include "ds/alloc.h"
#include "proto/websocket.h"

static void reqClear(HttpRequest *r) {
    sdsFree(r->verb);
    sdsFree(r->jsonp);
    sdsFree(r->sep);
    sdsFree(r->typeArg);
    sdsFree(r->ifNoneMatch);
    sdsFree(r->auth);
    memset(r, 0, sizeof(*r));
}

static void freeArgv(sds *argv, int argc) {
    if (!argv) return;
    for (int i = 0; i < argc; i++) sdsFree(argv[i]);
    xfree(argv);
}

void httpDropQueue(HttpConn *st) {
    while (st->qlen) {
        freeArgv(st->queue[st->qhead], st->queueArgc[st->qhead]);
        st->qhead = (st->qhead + 1) % HTTP_MAX_QUEUE;
        st->qlen--;
    }
    st->qhead = 0;
}

static void *httpCreate(void) { return xcalloc(sizeof(HttpConn)); }

static void httpFree(void *state) {
    HttpConn *st = state;
    httpDropQueue(st);
    reqClear(&st->req);
    sdsFree(st->basicAuth);
    sdsFree(st->wsMsg);
    if (st->gw && st->hooks.release) st->hooks.release(st->gw);
    xfree(st);
}

static int hexval(int c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

sds httpDecode(const char *p, size_t len) {
    sds s = sdsNewLen(NULL, len);
    size_t j = 0;
    for (size_t i = 0; i < len; i++) {
        char c = p[i];
        if (c == '+') {
            c = ' ';
        } else if (c == '%' && i + 2 < len && hexval((unsigned char)p[i + 1]) >= 0 &&
                   hexval((unsigned char)p[i + 2]) >= 0) {
            c = (char)(hexval((unsigned char)p[i + 1]) * 16 + hexval((unsigned char)p[i + 2]));
            i += 2;
        }
        s[j++] = c;
    }
    sdsSetLen(s, j);
    return s;
}

/* Decodes standard base64 (padding optional); NULL when invalid. */
static sds base64Decode(const char *p, size_t len) {
    sds out = sdsNewLen(NULL, len / 4 * 3 + 3);
    size_t o = 0;
    unsigned acc = 0;
    int bits = 0;
    size_t i = 0;
    for (; i < len && p[i] != '='; i++) {
        int c = (unsigned char)p[i], v;
        if (c >= 'A' && c <= 'Z') v = c - 'A';
        else if (c >= 'a' && c <= 'z') v = c - 'a' + 26;
        else if (c >= '0' && c <= '9') v = c - '0' + 52;
        else if (c == '+') v = 62;
        else if (c == '/') v = 63;
        else {
            sdsFree(out);
            return NULL;
        }
        acc = (acc << 6) | (unsigned)v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out[o++] = (char)(acc >> bits);
        }
    }
    for (; i < len; i++)
        if (p[i] != '=') {
            sdsFree(out);
            return NULL;
        }
    sdsSetLen(out, o);
    return out;
}

/* The reply formats by extension: Webdis's table. */
static const struct {
    const char *ext;
    HttpFormat format;
    const char *mime;
} formats[] = {
    {"json", HTTP_FMT_JSON, "application/json"},   {"raw", HTTP_FMT_RAW, "binary/octet-stream"},
    {"bin", HTTP_FMT_CUSTOM, "binary/octet-stream"}, {"txt", HTTP_FMT_CUSTOM, "text/plain"},
    {"html", HTTP_FMT_CUSTOM, "text/html"},        {"xhtml", HTTP_FMT_CUSTOM, "application/xhtml+xml"},
    {"xml", HTTP_FMT_CUSTOM, "text/xml"},          {"png", HTTP_FMT_CUSTOM, "image/png"},
    {"jpg", HTTP_FMT_CUSTOM, "image/jpeg"},        {"jpeg", HTTP_FMT_CUSTOM, "image/jpeg"},
    {"js", HTTP_FMT_JSON, "application/javascript"}, {"css", HTTP_FMT_CUSTOM, "text/css"},
    {"msg", HTTP_FMT_MSGPACK, "application/x-msgpack"}, {"msgpack", HTTP_FMT_MSGPACK, "application/x-msgpack"},
};

/* Picks the format from the extension of uri's last segment; returns the
 * length of uri without a recognised extension. */
static size_t selectFormat(HttpRequest *r, const char *uri, size_t len) {
    r->format = HTTP_FMT_JSON;
    r->mime = "application/json";
    size_t out = len;
    for (size_t i = len; i > 1; i--) {
        char c = uri[i - 1];
        if (c == '/') break;
        if (c != '.') continue;
        const char *ext = uri + i;
        size_t elen = len - i;
        for (size_t f = 0; f < sizeof(formats) / sizeof(formats[0]); f++) {
            if (strlen(formats[f].ext) == elen && memcmp(formats[f].ext, ext, elen) == 0) {
                r->format = formats[f].format;
                r->mime = formats[f].mime;
                out = i - 1;
            }
        }
        break;
    }
    if (r->typeArg) {
        r->format = HTTP_FMT_CUSTOM;
        r->mime = r->typeArg;
    }
    return out;
}

/* Query parameters Webdis reads: type, jsonp, callback, sep. */
static void parseQuery(HttpRequest *r, const char *q, size_t len) {
    while (len) {
        const char *amp = memchr(q, '&', len);
        size_t plen = amp ? (size_t)(amp - q) : len;
        const char *eq = memchr(q, '=', plen);
        if (eq) {
            size_t nlen = (size_t)(eq - q);
            sds v = httpDecode(eq + 1, plen - nlen - 1);
            sds *slot = NULL;
            if (nlen == 4 && memcmp(q, "type", 4) == 0) slot = &r->typeArg;
            else if ((nlen == 5 && memcmp(q, "jsonp", 5) == 0) || (nlen == 8 && memcmp(q, "callback", 8) == 0))
                slot = &r->jsonp;
            else if (nlen == 3 && memcmp(q, "sep", 3) == 0) slot = &r->sep;
            if (slot) {
                sdsFree(*slot);
                *slot = v;
            } else {
                sdsFree(v);
            }
        }
        if (!amp) break;
        len -= plen + 1;
        q = amp + 1;
    }
}

static void enqueue(HttpConn *st, sds *argv, int argc, int internal) {
    int slot = (st->qhead + st->qlen) % HTTP_MAX_QUEUE;
    st->queue[slot] = argv;
    st->queueArgc[slot] = argc;
    st->queueInternal[slot] = (unsigned char)internal;
    st->qlen++;
}

/* The request's credentials: with "Authorization: Basic", queues AUTH
 * user pass (the connection must send them from then on); without, on a
 * connection that sent some, 401; else the anonymous user's rights (403
 * when there are none).  Returns 0, or the status to answer with. */
static int requestAuth(HttpConn *st) {
    HttpRequest *r = &st->req;
    sds *auth = &r->auth;
    if (*auth) {
        sds cred = base64Decode(*auth + 6, sdsLen(*auth) - 6);
        const char *colon = cred ? memchr(cred, ':', sdsLen(cred)) : NULL;
        if (!colon) {
            sdsFree(cred);
            return 400;
        }
        sds *a = xmalloc(sizeof(sds) * 3);
        a[0] = sdsNew("AUTH");
        a[1] = sdsNewLen(cred, (size_t)(colon - cred));
        a[2] = sdsNewLen(colon + 1, sdsLen(cred) - (size_t)(colon + 1 - cred));
        sdsFree(cred);
        enqueue(st, a, 3, HTTP_CMD_AUTH);
        sdsFree(st->basicAuth);
        st->basicAuth = *auth;
        *auth = NULL;
    } else if (st->basicAuth) {
        return 401;
    } else if (st->hooks.anonymous && st->hooks.anonymous(st->hooks.owner) == -1) {
        return 403;
    }
    return 0;
}

/* Builds the request's commands from uri[0..len) (the path after its
 * first '/', or a POST body) and a PUT body.  Returns 0, or 403 when there
 * is no command. */
static int buildCommands(HttpConn *st, const char *uri, size_t len, const char *body, size_t blen) {
    HttpRequest *r = &st->req;
    const char *q = memchr(uri, '?', len);
    if (q) len = (size_t)(q - uri);
    len = selectFormat(r, uri, len);
    if (len == 0 && blen == 0) return 403;
    int rc = requestAuth(st);
    if (rc) return rc;
    /* Segments: split on '/'. */
    int nseg = 1;
    for (size_t i = 0; i < len; i++)
        if (uri[i] == '/') nseg++;
    const char *p = uri;
    const char *end = uri + len;
    int hasDb = 0;
    sds dbText = NULL;
    const char *slash = memchr(uri, '/', len);
    if (slash) {
        hasDb = 1;
        for (const char *d = uri; d < slash; d++)
            if (*d < '0' || *d > '9') hasDb = 0;
        if (hasDb) {
            dbText = slash == uri ? sdsNew("0") : sdsNewLen(uri, (size_t)(slash - uri));
            p = slash + 1;
            nseg--;
        }
    }
    int argc = nseg + (blen ? 1 : 0);
    sds *argv = xmalloc(sizeof(sds) * (size_t)argc);
    int n = 0;
    /* The command name, as sent. */
    const char *next = memchr(p, '/', (size_t)(end - p));
    size_t nlen = next ? (size_t)(next - p) : (size_t)(end - p);
    argv[n++] = sdsNewLen(p, nlen);
    p = next ? next + 1 : end;
    while (n < nseg) {
        next = memchr(p, '/', (size_t)(end - p));
        size_t alen = next ? (size_t)(next - p) : (size_t)(end - p);
        argv[n++] = httpDecode(p, alen);
        p = next ? next + 1 : end;
    }
    if (blen) argv[n++] = sdsNewLen(body, blen);
    r->verb = sdsDup(argv[0]);
    /* The database: the prefix's, else the default; a SELECT only when the
     * connection is elsewhere. */
    int want = *st->hooks.defaultDb;
    int known = 1;
    if (dbText) {
        long long v = 0;
        size_t dl = sdsLen(dbText);
        if (dl > 9) known = 0;
        for (size_t i = 0; i < dl && known; i++) v = v * 10 + (dbText[i] - '0');
        want = (int)v;
    }
    if (!known || want != st->hooks.currentDb(st->hooks.owner)) {
        sds *sel = xmalloc(sizeof(sds) * 2);
        sel[0] = sdsNew("SELECT");
        sel[1] = dbText ? dbText : sdsFromLongLong(want);
        dbText = NULL;
        enqueue(st, sel, 2, HTTP_CMD_SELECT);
    }
    sdsFree(dbText);
    enqueue(st, argv, argc, 0);
    return 0;
}

/* GET / with http-console on: the credentials as for a command, then a
 * PING whose reply the gateway answers with the console's page (NOAUTH:
 * 401, so a browser asks for credentials).  Returns 0, or a status. */
static int buildConsole(HttpConn *st) {
    HttpRequest *r = &st->req;
    int rc = requestAuth(st);
    if (rc) return rc;
    r->format = HTTP_FMT_CUSTOM;
    r->mime = "text/html; charset=utf-8";
    r->verb = sdsNew("PING");
    sds *a = xmalloc(sizeof(sds));
    a[0] = sdsNew("PING");
    enqueue(st, a, 1, HTTP_CMD_CONSOLE);
    return 0;
}

static int isTchar(int c) {
    return isalnum(c) || (c && strchr("!#$%&'*+-.^_`|~", c));
}

/* Where the head ends (the byte after its blank line) in buf[0..len), or
 * 0 when it is not there yet; from is where the search may start. */
static size_t headEnd(const char *buf, size_t len, size_t from) {
    for (size_t i = from; i < len; i++) {
        if (buf[i] != '\n') continue;
        if (i + 1 < len && buf[i + 1] == '\n') return i + 2;
        if (i + 2 < len && buf[i + 1] == '\r' && buf[i + 2] == '\n') return i + 3;
    }
    return 0;
}

/* One line of buf[pos..end): its bytes without the line end in *line and
 * *llen; returns where the next line starts. */
static size_t nextLine(const char *buf, size_t pos, size_t end, const char **line, size_t *llen) {
    const char *nl = memchr(buf + pos, '\n', end - pos);
    size_t e = nl ? (size_t)(nl - buf) : end;
    *line = buf + pos;
    *llen = e - pos;
    if (*llen && (*line)[*llen - 1] == '\r') (*llen)--;
    return nl ? e + 1 : end;
}

/* A fatal answer: written, and the connection dropped after it. */
static ProtoStatus fatal(HttpConn *st, int status, size_t len, ProtoCommand *out) {
    st->dead = 1;
    out->consumed = len;
    if (st->hooks.answer) st->hooks.answer(st->hooks.owner, status, 1);
    return PROTO_COMPLETE;
}

static int hand(HttpConn *st, ProtoCommand *out) {
    int i = st->qhead;
    out->argv = st->queue[i];
    out->argc = st->queueArgc[i];
    out->argvBytes = 0;
    for (int a = 0; a < out->argc; a++) out->argvBytes += sdsLen(out->argv[a]);
    st->internal = st->queueInternal[i];
    st->handed = out->argv;
    st->queue[i] = NULL;
    st->qhead = (i + 1) % HTTP_MAX_QUEUE;
    st->qlen--;
    return 1;
}

/* --- WebSocket --- */

/* Closes with code: a close frame, then the connection. */
static ProtoStatus wsFail(HttpConn *st, int code, size_t len, ProtoCommand *out) {
    char payload[2] = {(char)(code >> 8), (char)(code & 0xff)};
    sds f = wsFrameAppend(sdsEmpty(), WS_CLOSE, payload, 2);
    st->hooks.write(st->hooks.owner, f, sdsLen(f), 1);
    sdsFree(f);
    st->dead = 1;
    out->consumed = len;
    return PROTO_COMPLETE;
}

/* The upgrade request (its head parsed; len: all the pending bytes). */
static ProtoStatus wsHandshake(HttpConn *st, const char *method, size_t mlen, const char *target, size_t tlen,
                               int headersOk, const char *key, size_t klen, size_t len, ProtoCommand *out) {
    const char *q = memchr(target, '?', tlen);
    size_t plen = q ? (size_t)(q - target) : tlen;
    int mode = 0;
    if (plen == 6 && memcmp(target, "/.json", 6) == 0) mode = HTTP_WS_JSON;
    else if (plen == 5 && memcmp(target, "/.raw", 5) == 0) mode = HTTP_WS_RAW;
    if (!mode || !headersOk || !key || !wsKeyValid(key, klen) || mlen != 3 || memcmp(method, "GET", 3) != 0)
        return fatal(st, 400, len, out);
    /* The socket's commands run with http-user's rights (credentials go as
     * an AUTH message). */
    if (st->hooks.anonymous && st->hooks.anonymous(st->hooks.owner) == -1) return fatal(st, 403, len, out);
    char accept[29];
    wsAcceptKey(key, klen, accept);
    sds h = sdsCatPrintf(sdsEmpty(),
                         "HTTP/1.1 101 Switching Protocols\r\n"
                         "Upgrade: websocket\r\n"
                         "Connection: Upgrade\r\n"
                         "Sec-WebSocket-Accept: %s\r\n\r\n",
                         accept);
    st->hooks.write(st->hooks.owner, h, sdsLen(h), 0);
    sdsFree(h);
    st->ws = mode;
    reqClear(&st->req);
    st->req.keepAlive = 1;
    /* Its commands run in http-default-db. */
    int want = *st->hooks.defaultDb;
    if (want != st->hooks.currentDb(st->hooks.owner)) {
        sds *sel = xmalloc(sizeof(sds) * 2);
        sel[0] = sdsNew("SELECT");
        sel[1] = sdsFromLongLong(want);
        enqueue(st, sel, 2, HTTP_CMD_SELECT);
        st->req.verb = sdsNew("SELECT");
        hand(st, out);
    }
    return PROTO_COMPLETE;
}

/* One frame of a WebSocket: a control frame answered, a data frame added
 * to the message, a whole message handed out as its command. */
static ProtoStatus wsNext(HttpConn *st, const unsigned char *buf, size_t len, ProtoCommand *out) {
    WsFrame f;
    int code;
    int r = wsFrameHeader(buf, len, &f, &code);
    if (r < 0) return wsFail(st, code, len, out);
    if (r == 0) return PROTO_INCOMPLETE;
    size_t have = st->wsMsg ? sdsLen(st->wsMsg) : 0;
    if (f.len > (uint64_t)*st->hooks.maxRequestSize || have + f.len > (uint64_t)*st->hooks.maxRequestSize)
        return wsFail(st, WS_CLOSE_TOO_BIG, len, out);
    if (len - f.headerLen < f.len) return PROTO_INCOMPLETE;
    out->consumed = f.headerLen + (size_t)f.len;
    const unsigned char *payload = buf + f.headerLen;
    if (f.opcode == WS_PING || f.opcode == WS_PONG || f.opcode == WS_CLOSE) {
        sds p = wsUnmask(sdsEmpty(), &f, payload, (size_t)f.len);
        if (f.opcode == WS_PING) {
            sds fr = wsFrameAppend(sdsEmpty(), WS_PONG, p, sdsLen(p));
            st->hooks.write(st->hooks.owner, fr, sdsLen(fr), 0);
            sdsFree(fr);
        } else if (f.opcode == WS_CLOSE) {
            int bad = sdsLen(p) == 1;
            if (sdsLen(p) >= 2) {
                int c = (unsigned char)p[0] << 8 | (unsigned char)p[1];
                bad = !((c >= 1000 && c <= 1003) || (c >= 1007 && c <= 1011) || (c >= 3000 && c <= 4999)) ||
                      !wsUtf8Valid(p + 2, sdsLen(p) - 2);
            }
            sdsFree(p);
            if (bad) return wsFail(st, WS_CLOSE_PROTOCOL, len, out);
            return wsFail(st, WS_CLOSE_NORMAL, len, out);
        }
        sdsFree(p);
        return PROTO_COMPLETE;
    }
    /* Data: a new message, or the next part of one. */
    if (f.opcode == WS_CONT) {
        if (!st->wsOpcode) return wsFail(st, WS_CLOSE_PROTOCOL, len, out);
    } else {
        if (st->wsOpcode) return wsFail(st, WS_CLOSE_PROTOCOL, len, out);
        st->wsOpcode = f.opcode;
        if (!st->wsMsg) st->wsMsg = sdsEmpty();
    }
    st->wsMsg = wsUnmask(st->wsMsg, &f, payload, (size_t)f.len);
    if (!f.fin) return PROTO_COMPLETE;
    int opcode = st->wsOpcode;
    st->wsOpcode = 0;
    sds msg = st->wsMsg;
    st->wsMsg = NULL;
    if (opcode == WS_TEXT && !wsUtf8Valid(msg, sdsLen(msg))) {
        sdsFree(msg);
        return wsFail(st, WS_CLOSE_BAD_DATA, len, out);
    }
    int argc = 0;
    sds *argv = st->ws == HTTP_WS_JSON ? wsJsonCommand(msg, sdsLen(msg), &argc) : wsRespCommand(msg, sdsLen(msg), &argc);
    sdsFree(msg);
    if (!argv) return PROTO_COMPLETE; /* not a command: ignored, as Webdis */
    reqClear(&st->req);
    HttpRequest *rq = &st->req;
    rq->keepAlive = 1;
    rq->format = st->ws == HTTP_WS_JSON ? HTTP_FMT_JSON : HTTP_FMT_RAW;
    rq->mime = st->ws == HTTP_WS_JSON ? "application/json" : "binary/octet-stream";
    rq->verb = sdsDup(argv[0]);
    enqueue(st, argv, argc, HTTP_CMD_REQUEST);
    hand(st, out);
    return PROTO_COMPLETE;
}

static ProtoStatus httpNext(void *state, const char *buf, size_t len, const ProtoLimits *lim, ProtoCommand *out) {
    HttpConn *st = state;
    (void)lim;
    out->consumed = 0;
    out->argv = NULL;
    out->argc = 0;
    out->argvBytes = 0;
    out->err = NULL;
    if (st->dead) {
        out->consumed = len;
        return PROTO_INCOMPLETE;
    }
    if (st->qlen) {
        hand(st, out);
        return PROTO_COMPLETE;
    }
    if (st->ws) return wsNext(st, (const unsigned char *)buf, len, out);
    if (!st->hooks.answer) { /* no gateway: nothing to answer with */
        st->dead = 1;
        out->consumed = len;
        return PROTO_INCOMPLETE;
    }
    /* Blank lines between requests are allowed (RFC 9112 2.2). */
    size_t start = 0;
    while (start < len && (buf[start] == '\r' || buf[start] == '\n')) start++;
    if (start == len) {
        out->consumed = len;
        st->scanned = 0;
        return start ? PROTO_COMPLETE : PROTO_INCOMPLETE;
    }
    st->inHead = 0;
    size_t from = st->scanned > start ? st->scanned : start;
    size_t hend = headEnd(buf, len, from ? from - 1 : 0);
    if (!hend) {
        if (len - start > HTTP_MAX_HEAD) {
            int lineDone = memchr(buf + start, '\n', HTTP_MAX_HEAD) != NULL;
            return fatal(st, lineDone ? 431 : 414, len, out);
        }
        st->scanned = len > 2 ? len - 2 : 0;
        st->inHead = 1;
        return PROTO_INCOMPLETE;
    }
    if (hend - start > HTTP_MAX_HEAD) {
        int lineDone = memchr(buf + start, '\n', HTTP_MAX_HEAD) != NULL;
        return fatal(st, lineDone ? 431 : 414, len, out);
    }
    /* The request line: METHOD SP target SP HTTP/1.x */
    const char *line;
    size_t llen;
    size_t pos = nextLine(buf, start, hend, &line, &llen);
    const char *sp1 = memchr(line, ' ', llen);
    const char *sp2 = sp1 ? memchr(sp1 + 1, ' ', llen - (size_t)(sp1 + 1 - line)) : NULL;
    if (!sp1 || !sp2 || sp1 == line || sp2 == sp1 + 1 || sp1 - line > 16) return fatal(st, 400, len, out);
    const char *method = line;
    size_t mlen = (size_t)(sp1 - line);
    for (size_t i = 0; i < mlen; i++)
        if (method[i] < 'A' || method[i] > 'Z') return fatal(st, 400, len, out);
    const char *target = sp1 + 1;
    size_t tlen = (size_t)(sp2 - target);
    const char *ver = sp2 + 1;
    size_t vlen = llen - (size_t)(ver - line);
    int http10;
    if (vlen == 8 && memcmp(ver, "HTTP/1.1", 8) == 0) http10 = 0;
    else if (vlen == 8 && memcmp(ver, "HTTP/1.0", 8) == 0) http10 = 1;
    else return fatal(st, 400, len, out);
    for (size_t i = 0; i < tlen; i++)
        if ((unsigned char)target[i] <= ' ' || target[i] == 0x7f) return fatal(st, 400, len, out);
    if (target[0] != '/' && !(mlen == 7 && memcmp(method, "OPTIONS", 7) == 0 && tlen == 1 && target[0] == '*'))
        return fatal(st, 400, len, out);
    /* Headers. */
    reqClear(&st->req);
    HttpRequest *r = &st->req;
    r->http10 = http10;
    int connClose = 0, connKeep = 0, nheaders = 0;
    int wsUpgrade = 0, connUpgrade = 0, wsVersion13 = 0;
    const char *wsKey = NULL;
    size_t wsKeyLen = 0;
    long long clen = -1;
    while (pos < hend) {
        pos = nextLine(buf, pos, hend, &line, &llen);
        if (llen == 0) break;
        if (++nheaders > HTTP_MAX_HEADERS) return fatal(st, 431, len, out);
        if (line[0] == ' ' || line[0] == '\t') return fatal(st, 400, len, out); /* obs-fold */
        const char *colon = memchr(line, ':', llen);
        if (!colon || colon == line) return fatal(st, 400, len, out);
        size_t nlen = (size_t)(colon - line);
        for (size_t i = 0; i < nlen; i++)
            if (!isTchar((unsigned char)line[i])) return fatal(st, 400, len, out);
        const char *v = colon + 1;
        size_t vl = llen - nlen - 1;
        for (size_t i = 0; i < vl; i++) {
            unsigned char c = (unsigned char)v[i];
            if ((c < ' ' && c != '\t') || c == 0x7f) return fatal(st, 400, len, out);
        }
        while (vl && (*v == ' ' || *v == '\t')) v++, vl--;
        while (vl && (v[vl - 1] == ' ' || v[vl - 1] == '\t')) vl--;
        if (nlen == 14 && strncasecmp(line, "Content-Length", 14) == 0) {
            if (vl == 0 || vl > 18) return fatal(st, 400, len, out);
            long long n = 0;
            for (size_t i = 0; i < vl; i++) {
                if (v[i] < '0' || v[i] > '9') return fatal(st, 400, len, out);
                n = n * 10 + (v[i] - '0');
            }
            if (clen >= 0 && clen != n) return fatal(st, 400, len, out);
            clen = n;
        } else if (nlen == 17 && strncasecmp(line, "Transfer-Encoding", 17) == 0) {
            return fatal(st, 501, len, out);
        } else if (nlen == 10 && strncasecmp(line, "Connection", 10) == 0) {
            for (size_t i = 0; i + 5 <= vl; i++) {
                if (strncasecmp(v + i, "close", 5) == 0) connClose = 1;
                if (i + 7 <= vl && strncasecmp(v + i, "upgrade", 7) == 0) connUpgrade = 1;
                if (i + 10 <= vl && strncasecmp(v + i, "keep-alive", 10) == 0) connKeep = 1;
            }
        } else if (nlen == 13 && strncasecmp(line, "Authorization", 13) == 0) {
            if (vl > 6 && strncasecmp(v, "Basic ", 6) == 0) {
                sdsFree(r->auth);
                r->auth = sdsNewLen(v, vl);
            }
        } else if (nlen == 7 && strncasecmp(line, "Upgrade", 7) == 0) {
            wsUpgrade = vl == 9 && strncasecmp(v, "websocket", 9) == 0;
        } else if (nlen == 17 && strncasecmp(line, "Sec-WebSocket-Key", 17) == 0) {
            wsKey = v;
            wsKeyLen = vl;
        } else if (nlen == 21 && strncasecmp(line, "Sec-WebSocket-Version", 21) == 0) {
            wsVersion13 = vl == 2 && memcmp(v, "13", 2) == 0;
        } else if (nlen == 6 && strncasecmp(line, "Accept", 6) == 0) {
            for (size_t i = 0; i + 17 <= vl; i++)
                if (strncasecmp(v + i, "text/event-stream", 17) == 0) r->sse = 1;
        } else if (nlen == 16 && strncasecmp(line, "X-Requested-With", 16) == 0) {
            r->xhr = 1;
        } else if (nlen == 13 && strncasecmp(line, "If-None-Match", 13) == 0) {
            sdsFree(r->ifNoneMatch);
            r->ifNoneMatch = sdsNewLen(v, vl);
        }
    }
    r->keepAlive = http10 ? (connKeep && !connClose) : !connClose;
    if (clen < 0) clen = 0;
    if (clen > *st->hooks.maxRequestSize || (long long)(hend - start) + clen > *st->hooks.maxRequestSize)
        return fatal(st, 413, len, out);
    if ((long long)(len - hend) < clen) return PROTO_INCOMPLETE; /* the body is still coming */
    st->scanned = 0;
    out->consumed = hend + (size_t)clen;
    const char *body = buf + hend;
    size_t blen = (size_t)clen;
    /* The query: the target's, for every method. */
    const char *q = memchr(target, '?', tlen);
    if (q) parseQuery(r, q + 1, tlen - (size_t)(q + 1 - target));
    int status;
    if (wsUpgrade) return wsHandshake(st, method, mlen, target, tlen, connUpgrade && wsVersion13 && !http10,
                                      wsKey, wsKeyLen, len, out);
    if (mlen == 3 && memcmp(method, "GET", 3) == 0 && st->hooks.console && *st->hooks.console &&
        (tlen == 1 || target[1] == '?')) {
        status = buildConsole(st);
    } else if (mlen == 3 && memcmp(method, "GET", 3) == 0) {
        status = buildCommands(st, target + 1, tlen - 1, NULL, 0);
    } else if (mlen == 4 && memcmp(method, "POST", 4) == 0) {
        status = buildCommands(st, body, blen, NULL, 0);
    } else if (mlen == 3 && memcmp(method, "PUT", 3) == 0) {
        status = buildCommands(st, target + 1, tlen - 1, body, blen);
    } else if (mlen == 7 && memcmp(method, "OPTIONS", 7) == 0) {
        status = HTTP_ANSWER_OPTIONS;
    } else {
        status = 405;
    }
    if (status) {
        st->hooks.answer(st->hooks.owner, status, status == 401 || !r->keepAlive);
        return PROTO_COMPLETE;
    }
    hand(st, out);
    return PROTO_COMPLETE;
}

static void httpRecycle(void *state, sds *argv, int argc) {
    HttpConn *st = state;
    if (argv == st->handed) st->handed = NULL;
    freeArgv(argv, argc);
}

static int httpHandedOut(const void *state, const sds *argv) {
    const HttpConn *st = state;
    return argv && argv == st->handed;
}

static void httpTrim(void *state) { (void)state; }
static size_t httpSpareBytes(const void *state) {
    (void)state;
    return 0;
}
static size_t httpPendingBytes(const void *state) {
    (void)state;
    return 0;
}
static int httpDirectRoom(void *state, char **dst, size_t *room) {
    (void)state;
    (void)dst;
    (void)room;
    return 0;
}
static void httpDirectWrote(void *state, size_t n) {
    (void)state;
    (void)n;
}
static void httpPartial(const void *state, ProtoPartial *out) {
    (void)state;
    memset(out, 0, sizeof(*out));
}

const Protocol httpProtocol = {
    .name = "http",
    .create = httpCreate,
    .free = httpFree,
    .next = httpNext,
    .recycle = httpRecycle,
    .handedOut = httpHandedOut,
    .trim = httpTrim,
    .spareBytes = httpSpareBytes,
    .pendingBytes = httpPendingBytes,
    .directRoom = httpDirectRoom,
    .directWrote = httpDirectWrote,
    .partial = httpPartial,
};
