/* websocket.c -- RFC 6455 frames and the gateway's message forms (see
 * websocket.h).  Every read is bounded by the length the caller gives. */
#include "proto/websocket.h"

#include <string.h>

#include "ds/alloc.h"
#include "ds/sha1.h"

#define WS_GUID "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

static const char b64chars[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

void wsAcceptKey(const char *key, size_t len, char out[29]) {
    Sha1 s;
    unsigned char d[21];
    sha1Init(&s);
    sha1Update(&s, key, len);
    sha1Update(&s, WS_GUID, sizeof(WS_GUID) - 1);
    sha1Final(&s, d);
    d[20] = 0;
    size_t o = 0;
    for (int i = 0; i < 21; i += 3) {
        unsigned v = (unsigned)d[i] << 16 | (i + 1 < 21 ? (unsigned)d[i + 1] << 8 : 0) | (i + 2 < 21 ? d[i + 2] : 0);
        out[o++] = b64chars[(v >> 18) & 63];
        out[o++] = b64chars[(v >> 12) & 63];
        out[o++] = b64chars[(v >> 6) & 63];
        out[o++] = b64chars[v & 63];
    }
    out[27] = '='; /* 20 bytes: 27 characters and one '=' */
    out[28] = '\0';
}

int wsKeyValid(const char *key, size_t len) {
    if (len != 24 || key[22] != '=' || key[23] != '=') return 0;
    for (size_t i = 0; i < 22; i++)
        if (!strchr(b64chars, key[i]) || key[i] == '\0') return 0;
    return 1;
}

int wsFrameHeader(const unsigned char *buf, size_t avail, WsFrame *f, int *code) {
    *code = WS_CLOSE_PROTOCOL;
    if (avail < 2) return 0;
    f->fin = (buf[0] & 0x80) != 0;
    f->opcode = buf[0] & 0x0f;
    if (buf[0] & 0x70) return -1; /* no extension was negotiated */
    if (!(buf[1] & 0x80)) return -1; /* a client frame is masked */
    int op = f->opcode;
    if (op != WS_CONT && op != WS_TEXT && op != WS_BINARY && op != WS_CLOSE && op != WS_PING && op != WS_PONG)
        return -1;
    uint64_t len = buf[1] & 0x7f;
    size_t h = 2;
    if (len == 126) {
        if (avail < 4) return 0;
        len = (uint64_t)buf[2] << 8 | buf[3];
        h = 4;
    } else if (len == 127) {
        if (avail < 10) return 0;
        if (buf[2] & 0x80) return -1;
        len = 0;
        for (int i = 0; i < 8; i++) len = len << 8 | buf[2 + i];
        h = 10;
    }
    if ((op & 8) && (!f->fin || len > 125)) return -1;
    if (avail < h + 4) return 0;
    memcpy(f->mask, buf + h, 4);
    f->headerLen = h + 4;
    f->len = len;
    return 1;
}

sds wsUnmask(sds out, const WsFrame *f, const unsigned char *p, size_t len) {
    size_t at = sdsLen(out);
    out = sdsCatLen(out, (const char *)p, len);
    for (size_t i = 0; i < len; i++) out[at + i] = (char)((unsigned char)out[at + i] ^ f->mask[i & 3]);
    return out;
}

sds wsFrameAppend(sds out, int opcode, const char *p, size_t len) {
    unsigned char h[10];
    size_t hl;
    h[0] = (unsigned char)(0x80 | opcode);
    if (len < 126) {
        h[1] = (unsigned char)len;
        hl = 2;
    } else if (len <= 0xffff) {
        h[1] = 126;
        h[2] = (unsigned char)(len >> 8);
        h[3] = (unsigned char)len;
        hl = 4;
    } else {
        h[1] = 127;
        for (int i = 0; i < 8; i++) h[2 + i] = (unsigned char)((uint64_t)len >> (56 - 8 * i));
        hl = 10;
    }
    out = sdsCatLen(out, (const char *)h, hl);
    return sdsCatLen(out, p, len);
}

int wsUtf8Valid(const char *s, size_t len) {
    const unsigned char *p = (const unsigned char *)s;
    for (size_t i = 0; i < len;) {
        unsigned c = p[i], cp;
        size_t n;
        if (c < 0x80) {
            i++;
            continue;
        }
        if (c < 0xC2) return 0;
        if (c < 0xE0) n = 2, cp = c & 0x1F;
        else if (c < 0xF0) n = 3, cp = c & 0x0F;
        else if (c <= 0xF4) n = 4, cp = c & 0x07;
        else return 0;
        if (len - i < n) return 0;
        for (size_t k = 1; k < n; k++) {
            if ((p[i + k] & 0xC0) != 0x80) return 0;
            cp = cp << 6 | (p[i + k] & 0x3F);
        }
        if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
            return 0;
        i += n;
    }
    return 1;
}

static void freeArgs(sds *argv, int argc) {
    for (int i = 0; i < argc; i++) sdsFree(argv[i]);
    xfree(argv);
}

static void pushArg(sds **argv, int *argc, int *cap, sds a) {
    if (*argc == *cap) {
        *cap = *cap ? *cap * 2 : 8;
        *argv = xrealloc(*argv, sizeof(sds) * (size_t)*cap);
    }
    (*argv)[(*argc)++] = a;
}

static size_t skipWs(const char *p, size_t i, size_t len) {
    while (i < len && (p[i] == ' ' || p[i] == '\t' || p[i] == '\n' || p[i] == '\r')) i++;
    return i;
}

static int hex4(const char *p, unsigned *v) {
    *v = 0;
    for (int i = 0; i < 4; i++) {
        char c = p[i];
        int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
        if (d < 0) return 0;
        *v = *v << 4 | (unsigned)d;
    }
    return 1;
}

static sds catUtf8(sds s, unsigned cp) {
    char b[4];
    size_t n;
    if (cp < 0x80) b[0] = (char)cp, n = 1;
    else if (cp < 0x800) b[0] = (char)(0xC0 | cp >> 6), b[1] = (char)(0x80 | (cp & 63)), n = 2;
    else if (cp < 0x10000)
        b[0] = (char)(0xE0 | cp >> 12), b[1] = (char)(0x80 | ((cp >> 6) & 63)), b[2] = (char)(0x80 | (cp & 63)), n = 3;
    else
        b[0] = (char)(0xF0 | cp >> 18), b[1] = (char)(0x80 | ((cp >> 12) & 63)), b[2] = (char)(0x80 | ((cp >> 6) & 63)),
        b[3] = (char)(0x80 | (cp & 63)), n = 4;
    return sdsCatLen(s, b, n);
}

/* A JSON string at p[i] == '"': the decoded bytes, *end after it; NULL
 * when malformed. */
static sds jsonStr(const char *p, size_t i, size_t len, size_t *end) {
    sds s = sdsEmpty();
    i++;
    while (i < len && p[i] != '"') {
        unsigned char c = (unsigned char)p[i];
        if (c < 0x20) break;
        if (c != '\\') {
            s = sdsCatLen(s, p + i, 1);
            i++;
            continue;
        }
        if (i + 1 >= len) break;
        char e = p[i + 1];
        i += 2;
        const char *simple = strchr("\"\\/bfnrt", e);
        if (simple && e) {
            static const char map[] = "\"\\/\b\f\n\r\t";
            s = sdsCatLen(s, &map[simple - "\"\\/bfnrt"], 1);
            continue;
        }
        unsigned cp, lo;
        if (e != 'u' || i + 4 > len || !hex4(p + i, &cp)) break;
        i += 4;
        if (cp >= 0xD800 && cp <= 0xDBFF) { /* a surrogate pair */
            if (i + 6 > len || p[i] != '\\' || p[i + 1] != 'u' || !hex4(p + i + 2, &lo) || lo < 0xDC00 || lo > 0xDFFF)
                break;
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
            i += 6;
        } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
            break;
        }
        s = catUtf8(s, cp);
    }
    if (i >= len || p[i] != '"') {
        sdsFree(s);
        return NULL;
    }
    *end = i + 1;
    return s;
}

sds *wsJsonCommand(const char *p, size_t len, int *argc) {
    sds *argv = NULL;
    int n = 0, cap = 0;
    size_t i = skipWs(p, 0, len);
    if (i >= len || p[i] != '[') return NULL;
    i = skipWs(p, i + 1, len);
    if (i < len && p[i] == ']') goto done;
    for (;;) {
        if (i >= len) goto bad;
        if (p[i] == '"') {
            size_t e;
            sds s = jsonStr(p, i, len, &e);
            if (!s) goto bad;
            pushArg(&argv, &n, &cap, s);
            i = e;
        } else if (p[i] == '-' || (p[i] >= '0' && p[i] <= '9')) {
            size_t st = i++;
            while (i < len && strchr("0123456789.eE+-", p[i]) && p[i]) i++;
            pushArg(&argv, &n, &cap, sdsNewLen(p + st, i - st));
        } else if (len - i >= 4 && (memcmp(p + i, "true", 4) == 0 || memcmp(p + i, "null", 4) == 0)) {
            i += 4; /* skipped, as Webdis */
        } else if (len - i >= 5 && memcmp(p + i, "false", 5) == 0) {
            i += 5;
        } else {
            goto bad; /* nested arrays and objects are not arguments */
        }
        i = skipWs(p, i, len);
        if (i < len && p[i] == ',') {
            i = skipWs(p, i + 1, len);
            continue;
        }
        if (i < len && p[i] == ']') break;
        goto bad;
    }
done:
    if (skipWs(p, i + 1, len) != len || n == 0) goto bad;
    *argc = n;
    return argv;
bad:
    freeArgs(argv, n);
    return NULL;
}

/* A decimal after p[i] up to "\r\n": its value, *end after the line; -1
 * when malformed. */
static long long respNum(const char *p, size_t i, size_t len, size_t *end) {
    long long v = 0;
    size_t st = i;
    while (i < len && p[i] >= '0' && p[i] <= '9' && i - st < 12) v = v * 10 + (p[i++] - '0');
    if (i == st || i + 1 >= len || p[i] != '\r' || p[i + 1] != '\n') return -1;
    *end = i + 2;
    return v;
}

sds *wsRespCommand(const char *p, size_t len, int *argc) {
    size_t i;
    if (len < 1 || p[0] != '*') return NULL;
    long long n = respNum(p, 1, len, &i);
    if (n <= 0 || n > 1024 * 1024) return NULL;
    sds *argv = NULL;
    int have = 0, cap = 0;
    for (long long k = 0; k < n; k++) {
        if (i >= len || p[i] != '$') goto bad;
        long long l = respNum(p, i + 1, len, &i);
        if (l < 0 || (unsigned long long)l + 2 > len - i) goto bad;
        if (p[i + (size_t)l] != '\r' || p[i + (size_t)l + 1] != '\n') goto bad;
        pushArg(&argv, &have, &cap, sdsNewLen(p + i, (size_t)l));
        i += (size_t)l + 2;
    }
    if (i != len) goto bad;
    *argc = have;
    return argv;
bad:
    freeArgs(argv, have);
    return NULL;
}
