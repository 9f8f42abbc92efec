/* conn_tls.c -- TLS connections (OpenSSL) and the tls-* directives.
 *
 * connTlsType is one more ConnectionType (core/conn.h).  A TLS connection
 * is a TCP socket (accepted or connected by connTcpType's operations) with
 * an SSL object; it is not plain (CONN_PLAIN), so conn.h's inline calls
 * reach tlsRead/tlsWrite/tlsWritev through the type and io_uring never
 * batches it.
 *
 * Events: the type registers its own handlers on the fd (onReadable,
 * onWritable) and keeps the owner's (rproc/wproc, userMask) apart, because
 * what the socket must wait for is not always what the owner asked:
 *   - during the handshake, whatever SSL_do_handshake wants, and the owner's
 *     handlers see nothing until it is over (then the owner's read handler
 *     runs for an accepted connection, its write handler for a connected
 *     one; a failed or timed-out handshake calls them too, and their read
 *     or connCheckConnected reports the error);
 *   - an SSL_read that wants the socket writable (or an SSL_write that
 *     wants it readable) adds that event until it fires, then calls the
 *     owner's read (write) handler again;
 *   - after the owner's read handler, records OpenSSL has already read
 *     and decrypted (SSL_pending) would get no new epoll event: the handler
 *     is called again while that data shrinks.
 *
 * Invariants:
 *   - Every accepted or connected TLS connection in the handshake is on
 *     the handshake list with a deadline (tls-handshake-timeout, hidden,
 *     ms); a timer checks the list while it is not empty.  A client that
 *     never finishes (or speaks plain RESP to the TLS port) is failed and
 *     closed by its owner, nobody else waits for it.
 *   - A connection closed from inside one of its owner's handlers is
 *     freed only when the type's handler returns (inHandler, closed).
 *   - The contexts are rebuilt by CONFIG SET of a tls-* directive; an SSL
 *     keeps a reference to the context it was made from, so existing
 *     connections go on with the old certificates.
 *
 * Without CAIRN_TLS (make TLS=no) only the stubs at the end are built and
 * config.c keeps the rows that refuse TLS. */
#include "core/conn.h"

#ifdef CAIRN_TLS

#include <limits.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/config.h"
#include "core/log.h"
#include "core/net.h"
#include "ds/alloc.h"
#include "ds/util.h"

/* --- the directives --- */

#define TLS_AUTH_NO 0
#define TLS_AUTH_YES 1
#define TLS_AUTH_OPTIONAL 2

static struct {
    int port;
    char *certFile, *keyFile, *keyFilePass;
    char *clientCertFile, *clientKeyFile, *clientKeyFilePass;
    char *dhParamsFile, *caCertFile, *caCertDir;
    char *protocols, *ciphers, *ciphersuites;
    int authClients, replication, cluster;
    int preferServerCiphers, sessionCaching, sessionCacheSize, sessionCacheTimeout;
    int handshakeTimeoutMs;
} tlsCfg;

static SSL_CTX *serverCtx, *clientCtx;

#define PROTO_TLSV1 1
#define PROTO_TLSV1_1 2
#define PROTO_TLSV1_2 4
#define PROTO_TLSV1_3 8

/* tls-protocols as a PROTO_* mask (empty: TLSv1.2 and TLSv1.3), or -1. */
static int parseProtocols(const char *s) {
    if (!s || !*s) return PROTO_TLSV1_2 | PROTO_TLSV1_3;
    int mask = 0;
    char buf[256];
    snprintf(buf, sizeof(buf), "%s", s);
    for (char *save = NULL, *tok = strtok_r(buf, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
        if (!strcasecmp(tok, "tlsv1")) mask |= PROTO_TLSV1;
        else if (!strcasecmp(tok, "tlsv1.1")) mask |= PROTO_TLSV1_1;
        else if (!strcasecmp(tok, "tlsv1.2")) mask |= PROTO_TLSV1_2;
        else if (!strcasecmp(tok, "tlsv1.3")) mask |= PROTO_TLSV1_3;
        else return -1;
    }
    return mask ? mask : -1;
}

static const char *sslErrorText(void) {
    static char buf[256];
    unsigned long e = ERR_peek_last_error();
    if (!e) return "Unknown error";
    ERR_error_string_n(e, buf, sizeof(buf));
    return buf;
}

static int passwordCb(char *buf, int size, int rwflag, void *u) {
    (void)rwflag;
    const char *pass = u;
    if (!pass) return 0;
    int n = (int)strlen(pass);
    if (n > size) n = size;
    memcpy(buf, pass, (size_t)n);
    return n;
}

/* A context with cert/key (server: also the session cache), or NULL after
 * logging why. */
static SSL_CTX *makeCtx(int server, int protocols, const char *cert, const char *key, const char *pass) {
    SSL_CTX *ctx = SSL_CTX_new(server ? TLS_server_method() : TLS_client_method());
    if (!ctx) {
        serverLog(LL_WARNING, "Failed to create TLS context: %s", sslErrorText());
        return NULL;
    }
    long opts = SSL_OP_NO_SSLv2 | SSL_OP_NO_SSLv3 | SSL_OP_NO_COMPRESSION | SSL_OP_IGNORE_UNEXPECTED_EOF |
                SSL_OP_NO_RENEGOTIATION;
    if (!(protocols & PROTO_TLSV1)) opts |= SSL_OP_NO_TLSv1;
    if (!(protocols & PROTO_TLSV1_1)) opts |= SSL_OP_NO_TLSv1_1;
    if (!(protocols & PROTO_TLSV1_2)) opts |= SSL_OP_NO_TLSv1_2;
    if (!(protocols & PROTO_TLSV1_3)) opts |= SSL_OP_NO_TLSv1_3;
    if (tlsCfg.preferServerCiphers) opts |= SSL_OP_CIPHER_SERVER_PREFERENCE;
    SSL_CTX_set_options(ctx, (uint64_t)opts);
    SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, NULL);
    if (server) {
        if (tlsCfg.sessionCaching) {
            SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_SERVER);
            SSL_CTX_sess_set_cache_size(ctx, tlsCfg.sessionCacheSize);
            SSL_CTX_set_timeout(ctx, tlsCfg.sessionCacheTimeout);
            SSL_CTX_set_session_id_context(ctx, (const unsigned char *)"cairn", 5);
        } else {
            SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
        }
    }
    SSL_CTX_set_default_passwd_cb(ctx, passwordCb);
    SSL_CTX_set_default_passwd_cb_userdata(ctx, (void *)pass);
    ERR_clear_error();
    if (SSL_CTX_use_certificate_chain_file(ctx, cert) <= 0) {
        serverLog(LL_WARNING, "Failed to load certificate: %s: %s", cert, sslErrorText());
        goto fail;
    }
    if (SSL_CTX_use_PrivateKey_file(ctx, key, SSL_FILETYPE_PEM) <= 0) {
        serverLog(LL_WARNING, "Failed to load private key: %s: %s", key, sslErrorText());
        goto fail;
    }
    if ((tlsCfg.caCertFile || tlsCfg.caCertDir) &&
        SSL_CTX_load_verify_locations(ctx, tlsCfg.caCertFile, tlsCfg.caCertDir) <= 0) {
        serverLog(LL_WARNING, "Failed to configure CA certificate(s) file/directory: %s", sslErrorText());
        goto fail;
    }
    if (server && tlsCfg.dhParamsFile) {
        BIO *bio = BIO_new_file(tlsCfg.dhParamsFile, "r");
        EVP_PKEY *dh = bio ? PEM_read_bio_Parameters(bio, NULL) : NULL;
        if (bio) BIO_free(bio);
        if (!dh) {
            serverLog(LL_WARNING, "Failed to load %s: %s", tlsCfg.dhParamsFile, sslErrorText());
            goto fail;
        }
        if (SSL_CTX_set0_tmp_dh_pkey(ctx, dh) <= 0) {
            EVP_PKEY_free(dh);
            serverLog(LL_WARNING, "Failed to load DH params file: %s", tlsCfg.dhParamsFile);
            goto fail;
        }
    } else if (server) {
        SSL_CTX_set_dh_auto(ctx, 1);
    }
    if (tlsCfg.ciphers && SSL_CTX_set_cipher_list(ctx, tlsCfg.ciphers) <= 0) {
        serverLog(LL_WARNING, "Failed to configure ciphers: %s", tlsCfg.ciphers);
        goto fail;
    }
    if (tlsCfg.ciphersuites && SSL_CTX_set_ciphersuites(ctx, tlsCfg.ciphersuites) <= 0) {
        serverLog(LL_WARNING, "Failed to configure ciphersuites: %s", tlsCfg.ciphersuites);
        goto fail;
    }
    return ctx;
fail:
    SSL_CTX_free(ctx);
    return NULL;
}

/* Builds both contexts from the directives and swaps them in: 0, or -1
 * after logging why (the old ones stay). */
static int tlsConfigureCtx(void);

static int tlsConfigure(void) {
    int rc = tlsConfigureCtx();
    ERR_clear_error();
    return rc;
}

static int tlsConfigureCtx(void) {
    if (!tlsCfg.certFile) {
        serverLog(LL_WARNING, "No tls-cert-file configured!");
        return -1;
    }
    if (!tlsCfg.keyFile) {
        serverLog(LL_WARNING, "No tls-key-file configured!");
        return -1;
    }
    if ((tlsCfg.authClients != TLS_AUTH_NO || tlsCfg.cluster || tlsCfg.replication) && !tlsCfg.caCertFile &&
        !tlsCfg.caCertDir) {
        serverLog(LL_WARNING, "Either tls-ca-cert-file or tls-ca-cert-dir must be specified when tls-cluster, "
                              "tls-replication or tls-auth-clients are enabled!");
        return -1;
    }
    int protocols = parseProtocols(tlsCfg.protocols);
    if (protocols == -1) {
        serverLog(LL_WARNING, "Invalid tls-protocols specified. Use a combination of 'TLSv1', 'TLSv1.1', "
                              "'TLSv1.2' and 'TLSv1.3'.");
        return -1;
    }
    SSL_CTX *srv = makeCtx(1, protocols, tlsCfg.certFile, tlsCfg.keyFile, tlsCfg.keyFilePass);
    if (!srv) return -1;
    /* The client side (replica link, MIGRATE) presents tls-client-cert-file
     * when set, else the server's certificate. */
    SSL_CTX *cli = tlsCfg.clientCertFile
                       ? makeCtx(0, protocols, tlsCfg.clientCertFile, tlsCfg.clientKeyFile, tlsCfg.clientKeyFilePass)
                       : makeCtx(0, protocols, tlsCfg.certFile, tlsCfg.keyFile, tlsCfg.keyFilePass);
    if (!cli) {
        SSL_CTX_free(srv);
        return -1;
    }
    if (serverCtx) SSL_CTX_free(serverCtx);
    if (clientCtx) SSL_CTX_free(clientCtx);
    serverCtx = srv;
    clientCtx = cli;
    return 0;
}

/* Set once a listener of another part (the HTTP gateway's http-tls-port)
 * has asked for the server context (tlsRequireServer). */
static int tlsOtherUsers;

static int tlsWantedByConfig(void) { return tlsCfg.port || tlsCfg.replication || tlsCfg.cluster || tlsOtherUsers; }

static int applyTlsConf(const char **err) {
    if (tlsWantedByConfig() && tlsConfigure() == -1) {
        *err = "Unable to update TLS configuration. Check server logs.";
        return -1;
    }
    return 0;
}

static int applyTlsPort(const char **err) {
    if (tlsCfg.port && !serverCtx && tlsConfigure() == -1) {
        *err = "Unable to update TLS configuration. Check server logs.";
        return -1;
    }
    if (netRebindTls(err) == 0) return 0;
    *err = "Unable to listen on this port. Check server logs.";
    return -1;
}

static const ConfigEnum authClientsEnum[] = {
    {"no", TLS_AUTH_NO}, {"yes", TLS_AUTH_YES}, {"optional", TLS_AUTH_OPTIONAL}, {NULL, 0}};

static ConfigDef tlsConfig[] = {
    CONFIG_INT("tls-port", NULL, 0, tlsCfg.port, 0, 65535, "0", .apply = applyTlsPort),
    CONFIG_STRING("tls-cert-file", NULL, CF_EMPTY_NULL, tlsCfg.certFile, "", .apply = applyTlsConf),
    CONFIG_STRING("tls-key-file", NULL, CF_EMPTY_NULL, tlsCfg.keyFile, "", .apply = applyTlsConf),
    CONFIG_STRING("tls-key-file-pass", NULL, CF_SENSITIVE | CF_EMPTY_NULL, tlsCfg.keyFilePass, "",
                  .apply = applyTlsConf),
    CONFIG_STRING("tls-client-cert-file", NULL, CF_EMPTY_NULL, tlsCfg.clientCertFile, "", .apply = applyTlsConf),
    CONFIG_STRING("tls-client-key-file", NULL, CF_EMPTY_NULL, tlsCfg.clientKeyFile, "", .apply = applyTlsConf),
    CONFIG_STRING("tls-client-key-file-pass", NULL, CF_SENSITIVE | CF_EMPTY_NULL, tlsCfg.clientKeyFilePass, "",
                  .apply = applyTlsConf),
    CONFIG_STRING("tls-dh-params-file", NULL, CF_EMPTY_NULL, tlsCfg.dhParamsFile, "", .apply = applyTlsConf),
    CONFIG_STRING("tls-ca-cert-file", NULL, CF_EMPTY_NULL, tlsCfg.caCertFile, "", .apply = applyTlsConf),
    CONFIG_STRING("tls-ca-cert-dir", NULL, CF_EMPTY_NULL, tlsCfg.caCertDir, "", .apply = applyTlsConf),
    CONFIG_ENUM("tls-auth-clients", NULL, 0, tlsCfg.authClients, authClientsEnum, "yes", .apply = applyTlsConf),
    CONFIG_BOOL("tls-replication", NULL, 0, tlsCfg.replication, "no", .apply = applyTlsConf),
    CONFIG_BOOL("tls-cluster", NULL, 0, tlsCfg.cluster, "no", .apply = applyTlsConf),
    CONFIG_STRING("tls-protocols", NULL, CF_EMPTY_NULL, tlsCfg.protocols, "", .apply = applyTlsConf),
    CONFIG_STRING("tls-ciphers", NULL, CF_EMPTY_NULL, tlsCfg.ciphers, "", .apply = applyTlsConf),
    CONFIG_STRING("tls-ciphersuites", NULL, CF_EMPTY_NULL, tlsCfg.ciphersuites, "", .apply = applyTlsConf),
    CONFIG_BOOL("tls-prefer-server-ciphers", NULL, 0, tlsCfg.preferServerCiphers, "no", .apply = applyTlsConf),
    CONFIG_BOOL("tls-session-caching", NULL, 0, tlsCfg.sessionCaching, "yes", .apply = applyTlsConf),
    CONFIG_INT("tls-session-cache-size", NULL, 0, tlsCfg.sessionCacheSize, 0, INT_MAX, "20480",
               .apply = applyTlsConf),
    CONFIG_INT("tls-session-cache-timeout", NULL, 0, tlsCfg.sessionCacheTimeout, 0, INT_MAX, "300",
               .apply = applyTlsConf),
    /* Cairn's own: how long an accepted or connected TLS connection may
     * take to finish its handshake (ms). */
    CONFIG_INT("tls-handshake-timeout", NULL, CF_HIDDEN, tlsCfg.handshakeTimeoutMs, 1, INT_MAX, "10000",
               .rank = CONFIG_RANK_CAIRN + 20),
};

void tlsRegisterConfig(void) { configRegister(tlsConfig, CONFIG_COUNT_OF(tlsConfig)); }

int tlsStartup(void) {
    if (!tlsWantedByConfig()) return 0;
    if (tlsConfigure() == -1) {
        serverLog(LL_WARNING, "Failed to configure TLS. Check logs for more info.");
        return -1;
    }
    return 0;
}

int tlsPort(void) { return tlsCfg.port; }

int tlsRequireServer(void) {
    tlsOtherUsers = 1;
    if (serverCtx) return 0;
    if (tlsConfigure() == -1) {
        serverLog(LL_WARNING, "Failed to configure TLS. Check logs for more info.");
        return -1;
    }
    return 0;
}
int connTlsAvailable(void) { return 1; }
const ConnectionType *connTypeForReplication(void) { return tlsCfg.replication ? &connTlsType : &connTcpType; }
const ConnectionType *connTypeForCluster(void) { return tlsCfg.cluster ? &connTlsType : &connTcpType; }

/* --- connections --- */

enum { TLS_CONNECTING, TLS_HANDSHAKE, TLS_READY, TLS_FAILED };

typedef struct TlsConn {
    Connection c;               /* first: a TlsConn is its Connection */
    SSL *ssl;
    int state;
    int outgoing;               /* we connected (client side) */
    int err;                    /* TLS_FAILED: why, as an errno value */
    int fatal;                  /* an SSL error: no shutdown at close */
    int hsWant;                 /* the event the handshake waits for */
    int userMask, sysMask;      /* the owner's events, the loop's */
    FileProc *rproc, *wproc;
    void *rdata, *wdata;
    int readWantsWrite, writeWantsRead;
    int inHandler, closed;
    long long deadline;         /* of the handshake (mstime) */
    struct TlsConn *hsPrev, *hsNext;
} TlsConn;

static TlsConn *hsHead;   /* the handshake list */
static int hsTimerOn;

static void onReadable(EventLoop *loop, int fd, void *data, int mask);
static void onWritable(EventLoop *loop, int fd, void *data, int mask);

/* Registers on the loop what the connection needs now (see the header). */
static void updateMask(TlsConn *t) {
    int want = 0;
    if (t->closed || t->state == TLS_FAILED) want = 0;
    else if (t->state == TLS_CONNECTING) want = (t->userMask ? EV_WRITABLE : 0);
    else if (t->state == TLS_HANDSHAKE) want = t->userMask ? t->hsWant : 0;
    else
        want = t->userMask | (t->readWantsWrite && t->rproc ? EV_WRITABLE : 0) |
               (t->writeWantsRead && t->wproc ? EV_READABLE : 0);
    int del = t->sysMask & ~want, add = want & ~t->sysMask;
    if (del) eventDel(connLoop, t->c.fd, del);
    if (add & EV_READABLE) eventAdd(connLoop, t->c.fd, EV_READABLE, onReadable, t);
    if (add & EV_WRITABLE) eventAdd(connLoop, t->c.fd, EV_WRITABLE, onWritable, t);
    t->sysMask = want;
}

static void hsRemove(TlsConn *t) {
    if (!t->deadline) return;
    if (t->hsPrev) t->hsPrev->hsNext = t->hsNext;
    else hsHead = t->hsNext;
    if (t->hsNext) t->hsNext->hsPrev = t->hsPrev;
    t->hsPrev = t->hsNext = NULL;
    t->deadline = 0;
}

static void freeTls(TlsConn *t) { xfree(t); }

static void callRead(TlsConn *t) {
    if (!t->closed && t->rproc) t->rproc(connLoop, t->c.fd, t->rdata, EV_READABLE);
}
static void callWrite(TlsConn *t) {
    if (!t->closed && t->wproc) t->wproc(connLoop, t->c.fd, t->wdata, EV_WRITABLE);
}

/* The handshake is over (done or failed): the owner learns it from the
 * handler it registered (a connect waits for writable). */
static void notifyOwner(TlsConn *t) {
    if (t->outgoing) {
        if (t->wproc) callWrite(t);
        else callRead(t);
    } else {
        if (t->rproc) callRead(t);
        if (t->state == TLS_READY && (t->userMask & EV_WRITABLE)) callWrite(t);
    }
}

static void failConn(TlsConn *t, int err) {
    t->state = TLS_FAILED;
    t->err = err;
    hsRemove(t);
    updateMask(t);
}

static int socketError(int fd) {
    int err = 0;
    socklen_t len = sizeof(err);
    if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) == -1) err = errno;
    return err;
}

/* One step of the handshake. */
static void handshakeStep(TlsConn *t) {
    if (t->state == TLS_CONNECTING) {
        int err = socketError(t->c.fd);
        if (err) {
            failConn(t, err);
            return;
        }
        t->state = TLS_HANDSHAKE;
    }
    ERR_clear_error();
    int r = SSL_do_handshake(t->ssl);
    if (r == 1) {
        t->state = TLS_READY;
        hsRemove(t);
        updateMask(t);
        return;
    }
    int e = SSL_get_error(t->ssl, r);
    if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) {
        t->hsWant = e == SSL_ERROR_WANT_READ ? EV_READABLE : EV_WRITABLE;
        updateMask(t);
        return;
    }
    t->fatal = 1;
    const char *why = e == SSL_ERROR_SYSCALL && ERR_peek_last_error() == 0
                          ? (errno ? strerror(errno) : "Connection closed by peer")
                          : sslErrorText();
    if (t->outgoing) serverLog(LL_WARNING, "TLS handshake with the peer failed: %s", why);
    else serverLog(LL_VERBOSE, "Error accepting a client connection: %s", why);
    int err = e == SSL_ERROR_SYSCALL && errno ? errno : EPROTO;
    ERR_clear_error();
    failConn(t, err);
}

static void dispatch(TlsConn *t, int mask) {
    t->inHandler++;
    if (t->state == TLS_CONNECTING || t->state == TLS_HANDSHAKE) {
        handshakeStep(t);
        if (t->state == TLS_READY || t->state == TLS_FAILED) notifyOwner(t);
    } else if (t->state == TLS_READY) {
        if (mask & EV_READABLE) {
            if (t->writeWantsRead) {
                t->writeWantsRead = 0;
                updateMask(t);
                callWrite(t);
            }
            if (t->userMask & EV_READABLE) callRead(t);
        } else {
            if (t->readWantsWrite) {
                t->readWantsWrite = 0;
                updateMask(t);
                callRead(t);
            }
            if (t->userMask & EV_WRITABLE) callWrite(t);
        }
    }
    /* Records OpenSSL holds already decrypted: no epoll event will come
     * for them. */
    for (int guard = 0; guard < 1024 && !t->closed && t->state == TLS_READY && t->rproc; guard++) {
        int before = SSL_pending(t->ssl);
        if (before <= 0) break;
        callRead(t);
        if (!t->closed && t->ssl && SSL_pending(t->ssl) == before) break;
    }
    t->inHandler--;
    if (t->closed && t->inHandler == 0) freeTls(t);
}

static void onReadable(EventLoop *loop, int fd, void *data, int mask) {
    (void)loop, (void)fd, (void)mask;
    dispatch(data, EV_READABLE);
}
static void onWritable(EventLoop *loop, int fd, void *data, int mask) {
    (void)loop, (void)fd, (void)mask;
    dispatch(data, EV_WRITABLE);
}

/* Fails every handshake past its deadline; runs while the list is not
 * empty. */
static long long hsTimer(EventLoop *loop, long long id, void *data) {
    (void)loop, (void)id, (void)data;
    for (;;) {
        long long now = mstime();
        TlsConn *t = hsHead;
        while (t && t->deadline > now) t = t->hsNext;
        if (!t) break;
        serverLog(LL_VERBOSE, "TLS handshake timed out, closing the connection");
        t->inHandler++;
        failConn(t, ETIMEDOUT);
        notifyOwner(t);
        t->inHandler--;
        if (t->closed && t->inHandler == 0) freeTls(t);
    }
    if (!hsHead) {
        hsTimerOn = 0;
        return -1;
    }
    return 100;
}

static void hsAdd(TlsConn *t) {
    t->deadline = mstime() + tlsCfg.handshakeTimeoutMs;
    t->hsNext = hsHead;
    if (hsHead) hsHead->hsPrev = t;
    hsHead = t;
    if (!hsTimerOn && connLoop) {
        hsTimerOn = 1;
        eventAddTimer(connLoop, 100, hsTimer, NULL);
    }
}

/* A TLS connection on tc's socket (tc's struct is freed). */
static TlsConn *wrap(Connection *tc, SSL_CTX *ctx) {
    SSL *ssl = SSL_new(ctx);
    if (!ssl) {
        connClose(tc);
        errno = ENOMEM;
        return NULL;
    }
    TlsConn *t = xcalloc(sizeof(TlsConn));
    t->c = *tc;
    t->c.type = &connTlsType;
    t->c.flags &= ~CONN_PLAIN;
    tc->fd = -1;
    connClose(tc); /* frees the struct only */
    t->ssl = ssl;
    SSL_set_fd(ssl, t->c.fd);
    return t;
}

static int tlsListen(const ConnListenSpec *spec) { return connTcpType.listen(spec); }

static Connection *tlsAccept(Listener *l, int lfd, char *peer, size_t peerLen) {
    Connection *tc = connTcpType.accept(l, lfd, peer, peerLen);
    if (!tc) return NULL;
    if (!serverCtx) {
        connClose(tc);
        errno = ECONNABORTED;
        return NULL;
    }
    TlsConn *t = wrap(tc, serverCtx);
    if (!t) return NULL;
    SSL_set_accept_state(t->ssl);
    int mode = tlsCfg.authClients == TLS_AUTH_NO     ? SSL_VERIFY_NONE
               : tlsCfg.authClients == TLS_AUTH_YES ? SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT
                                                     : SSL_VERIFY_PEER;
    SSL_set_verify(t->ssl, mode, NULL);
    t->state = TLS_HANDSHAKE;
    t->hsWant = EV_READABLE;
    hsAdd(t);
    return &t->c;
}

static Connection *tlsConnect(const char *host, const char *port, const char *source, const char **err) {
    if (!clientCtx) {
        *err = "TLS is not configured";
        return NULL;
    }
    Connection *tc = connTcpType.connect(host, port, source, err);
    if (!tc) return NULL;
    TlsConn *t = wrap(tc, clientCtx);
    if (!t) {
        *err = "Out of memory";
        return NULL;
    }
    SSL_set_connect_state(t->ssl);
    t->outgoing = 1;
    t->state = TLS_CONNECTING;
    hsAdd(t);
    return &t->c;
}

static void tlsClose(Connection *c);

/* Blocking: TCP's connectTimeout, then the handshake before the same
 * deadline. */
static Connection *tlsConnectTimeout(const char *host, const char *port, long timeoutMs) {
    if (!clientCtx) return NULL;
    long long deadline = deadlineAfter(mstime(), timeoutMs);
    Connection *tc = connTcpType.connectTimeout(host, port, timeoutMs);
    if (!tc) return NULL;
    TlsConn *t = wrap(tc, clientCtx);
    if (!t) return NULL;
    SSL_set_connect_state(t->ssl);
    t->outgoing = 1;
    t->state = TLS_HANDSHAKE;
    for (;;) {
        ERR_clear_error();
        int r = SSL_do_handshake(t->ssl);
        if (r == 1) {
            t->state = TLS_READY;
            return &t->c;
        }
        int e = SSL_get_error(t->ssl, r);
        long long left = deadline - mstime();
        if ((e != SSL_ERROR_WANT_READ && e != SSL_ERROR_WANT_WRITE) || left <= 0) {
            if (e != SSL_ERROR_WANT_READ && e != SSL_ERROR_WANT_WRITE)
                serverLog(LL_WARNING, "TLS handshake with the peer failed: %s", sslErrorText());
            t->fatal = 1;
            ERR_clear_error();
            tlsClose(&t->c);
            return NULL;
        }
        connWait(&t->c, e == SSL_ERROR_WANT_READ ? EV_READABLE : EV_WRITABLE, left);
    }
}

/* A read or write that returned n <= 0: 0 (end of stream, reads only) or
 * -1 with errno (EAGAIN: try later; the event it waits for is added). */
static long ioResult(TlsConn *t, int n, int reading) {
    int e = SSL_get_error(t->ssl, n);
    if (e != SSL_ERROR_WANT_READ && e != SSL_ERROR_WANT_WRITE) {
        int saved = errno;
        ERR_clear_error(); /* the queue stays empty between calls (see tlsRead) */
        errno = saved;
    }
    switch (e) {
    case SSL_ERROR_WANT_READ:
        if (!reading && !t->writeWantsRead) {
            t->writeWantsRead = 1;
            updateMask(t);
        }
        errno = EAGAIN;
        return -1;
    case SSL_ERROR_WANT_WRITE:
        if (reading && !t->readWantsWrite) {
            t->readWantsWrite = 1;
            updateMask(t);
        }
        errno = EAGAIN;
        return -1;
    case SSL_ERROR_ZERO_RETURN:
        if (reading) return 0;
        errno = EPIPE;
        return -1;
    case SSL_ERROR_SYSCALL:
        t->fatal = 1;
        if (errno == 0 || errno == EAGAIN) {
            if (reading) return 0;
            errno = EPIPE;
        }
        return -1;
    default:
        t->fatal = 1;
        errno = ECONNRESET;
        return -1;
    }
}

static long notReady(TlsConn *t) {
    if (t->state == TLS_FAILED) {
        errno = t->err;
        return -1;
    }
    errno = EAGAIN;
    return -1;
}

/* SSL_read/SSL_write run without ERR_clear_error before them (~400
 * instructions each, 4% of a small request): every path that can leave an
 * error in OpenSSL's queue (ioResult, the handshake, tlsConfigure) empties
 * it, so SSL_get_error never sees an older one. */
static long tlsRead(Connection *c, void *buf, size_t len) {
    TlsConn *t = (TlsConn *)c;
    if (t->state != TLS_READY) return notReady(t);
    if (len > INT_MAX) len = INT_MAX;
    int n = SSL_read(t->ssl, buf, (int)len);
    if (n > 0) return n;
    return ioResult(t, n, 1);
}

static long tlsWrite(Connection *c, const void *buf, size_t len) {
    TlsConn *t = (TlsConn *)c;
    if (t->state != TLS_READY) return notReady(t);
    if (len == 0) return 0;
    if (len > INT_MAX) len = INT_MAX;
    int n = SSL_write(t->ssl, buf, (int)len);
    if (n > 0) return n;
    return ioResult(t, n, 0);
}

/* Several buffers become one record: small ones are copied together (up
 * to one record's 16 KB); a first buffer that big goes alone.  A retry
 * after EAGAIN gathers the same bytes again (the moving-buffer mode lets
 * OpenSSL accept them from another address). */
static long tlsWritev(Connection *c, const struct iovec *iov, int cnt) {
    static char gather[16384];
    if (cnt <= 0) return 0;
    if (iov[0].iov_len >= sizeof(gather)) return tlsWrite(c, iov[0].iov_base, iov[0].iov_len);
    size_t used = 0;
    for (int i = 0; i < cnt && used < sizeof(gather); i++) {
        size_t n = iov[i].iov_len;
        if (n > sizeof(gather) - used) n = sizeof(gather) - used;
        memcpy(gather + used, iov[i].iov_base, n);
        used += n;
    }
    return tlsWrite(c, gather, used);
}

static void tlsClose(Connection *c) {
    TlsConn *t = (TlsConn *)c;
    if (t->closed) return;
    hsRemove(t);
    if (t->sysMask) eventDel(connLoop, c->fd, t->sysMask);
    t->sysMask = 0;
    if (t->ssl) {
        if (t->state == TLS_READY && !t->fatal) {
            ERR_clear_error();
            SSL_shutdown(t->ssl); /* one try: close_notify, not waiting for the peer's */
            ERR_clear_error();
        }
        SSL_free(t->ssl);
        t->ssl = NULL;
    }
    if (c->fd != -1) close(c->fd);
    c->fd = -1;
    t->closed = 1;
    t->rproc = t->wproc = NULL;
    if (t->inHandler == 0) freeTls(t);
}

static int tlsPeerAddr(Connection *c, char *buf, size_t len) { return connTcpType.peerAddr(c, buf, len); }
static int tlsLocalAddr(Connection *c, char *buf, size_t len) { return connTcpType.localAddr(c, buf, len); }
static void tlsSetNoDelay(Connection *c, int on) { connTcpType.setNoDelay(c, on); }
static void tlsSetKeepalive(Connection *c, int secs) { connTcpType.setKeepalive(c, secs); }

static int tlsEventAdd(Connection *c, int mask, FileProc *proc, void *data) {
    TlsConn *t = (TlsConn *)c;
    if (c->fd >= eventLoopSetSize(connLoop)) {
        errno = ERANGE;
        return -1;
    }
    if (mask & EV_READABLE) t->rproc = proc, t->rdata = data;
    if (mask & EV_WRITABLE) t->wproc = proc, t->wdata = data;
    t->userMask |= mask;
    updateMask(t);
    return 0;
}

static void tlsEventDel(Connection *c, int mask) {
    TlsConn *t = (TlsConn *)c;
    if (mask & EV_READABLE) t->rproc = NULL;
    if (mask & EV_WRITABLE) t->wproc = NULL;
    t->userMask &= ~mask;
    updateMask(t);
}

static int tlsEventMask(const Connection *c) { return ((const TlsConn *)c)->userMask; }

static int tlsPending(const Connection *c) {
    const TlsConn *t = (const TlsConn *)c;
    return t->state == TLS_READY && t->ssl && SSL_pending(t->ssl) > 0;
}

static int tlsCheckConnected(Connection *c) {
    TlsConn *t = (TlsConn *)c;
    if (t->state == TLS_READY) return 0;
    if (t->state == TLS_FAILED) return t->err;
    return EINPROGRESS;
}

const ConnectionType connTlsType = {
    .name = "tls",
    .isUnix = 0,
    .flags = 0,
    .listen = tlsListen,
    .accept = tlsAccept,
    .connect = tlsConnect,
    .connectTimeout = tlsConnectTimeout,
    .read = tlsRead,
    .write = tlsWrite,
    .writev = tlsWritev,
    .close = tlsClose,
    .peerAddr = tlsPeerAddr,
    .localAddr = tlsLocalAddr,
    .setNoDelay = tlsSetNoDelay,
    .setKeepalive = tlsSetKeepalive,
    .eventAdd = tlsEventAdd,
    .eventDel = tlsEventDel,
    .eventMask = tlsEventMask,
    .pending = tlsPending,
    .checkConnected = tlsCheckConnected,
};

sds connTlsPeerCertPem(Connection *c) {
    if (!c || c->type != &connTlsType) return NULL;
    TlsConn *t = (TlsConn *)c;
    if (!t->ssl) return NULL;
    X509 *cert = SSL_get_peer_certificate(t->ssl);
    if (!cert) return NULL;
    sds out = NULL;
    BIO *bio = BIO_new(BIO_s_mem());
    if (bio && PEM_write_bio_X509(bio, cert)) {
        char *p;
        long n = BIO_get_mem_data(bio, &p);
        if (n > 0) out = sdsNewLen(p, (size_t)n);
    }
    if (bio) BIO_free(bio);
    X509_free(cert);
    return out;
}

#else /* !CAIRN_TLS: TLS is off; config.c refuses the directives. */

sds connTlsPeerCertPem(Connection *c) {
    (void)c;
    return NULL;
}

const ConnectionType connTlsType = {.name = "tls"};
int connTlsAvailable(void) { return 0; }
void tlsRegisterConfig(void) {}
int tlsStartup(void) { return 0; }
int tlsPort(void) { return 0; }
int tlsRequireServer(void) { return -1; }
const ConnectionType *connTypeForReplication(void) { return &connTcpType; }
const ConnectionType *connTypeForCluster(void) { return &connTcpType; }

#endif
