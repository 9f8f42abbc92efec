/* http.h -- the HTTP/JSON gateway (Webdis-compatible): a listener on
 * http-port whose clients speak HTTP (proto/http_parse.h) and get their
 * replies as Webdis renders them (JSON, raw RESP, a value with its own
 * MIME type).  Commands run through the same dispatch, ACL and stats as
 * RESP clients'. */
#ifndef CAIRN_HTTP_H
#define CAIRN_HTTP_H

/* The http-* directives (main.c's registerConfig). */
void httpRegisterConfig(void);
/* Wires the gateway's cron (slow request heads), from initFeatures. */
void httpInit(void);
/* Opens the listener when http-port is set: 0, or -1 after logging why. */
int httpListen(void);

#endif
