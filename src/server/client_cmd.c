/* client_cmd.c -- the CLIENT container: ID, SETNAME, GETNAME, SETINFO, LIST,
 * INFO, KILL, REPLY, NO-EVICT, NO-TOUCH, UNBLOCK, HELP; TRACKING, CACHING, GETREDIR and
 * TRACKINGINFO are handled by tracking.c, PAUSE and UNPAUSE by pause.c.
 *
 * CLIENT LIST / CLIENT INFO lines carry Redis 7.0.15's fields in its order.
 * Killing another client frees it at the next loop turn (clientFreeAsync);
 * a client that kills itself is closed once this command's reply is out
 * (CLIENT_CLOSE_AFTER_REPLY), as Redis does.  CLIENT KILL's MAXAGE filter
 * (Redis 7.4) and CLIENT SETINFO (Redis 7.2) are supported too. */
#include <string.h>

#include "core/client.h"
#include "core/command.h"
#include "core/net.h"
#include "core/server.h"
#include "ds/util.h"
#include "repl/repl.h"
#include "server/acl.h"
#include "server/client_cmd.h"
#include "server/maxmemory.h"
#include "server/multi.h"
#include "server/pause.h"
#include "server/pubsub.h"
#include "server/tracking.h"
#include "types/blocking.h"

/* Client names and SETINFO values: printable ASCII other than space. */
static int validClientAttr(const char *s, size_t len) {
    for (size_t i = 0; i < len; i++)
        if (s[i] < '!' || s[i] > '~') return 0;
    return 1;
}

static sds catClientFlags(sds s, const Client *c) {
    char flags[16], *p = flags;
    if (c->flags & CLIENT_SLAVE) *p++ = (c->flags & CLIENT_MONITOR) ? 'O' : 'S';
    if (c->flags & CLIENT_MASTER) *p++ = 'M';
    if ((c->flags & (CLIENT_MONITOR | CLIENT_SLAVE)) == CLIENT_MONITOR) *p++ = 'O';
    if (c->flags & CLIENT_PUBSUB) *p++ = 'P';
    if (c->flags & CLIENT_MULTI) *p++ = 'x';
    if (c->flags & CLIENT_BLOCKED) *p++ = 'b';
    if (c->flags & CLIENT_TRACKING) *p++ = 't';
    if (trackingClientBrokenRedirect(c)) *p++ = 'R';
    if (trackingClientBcast(c)) *p++ = 'B';
    if (c->flags & CLIENT_DIRTY_CAS) *p++ = 'd';
    if (c->flags & CLIENT_CLOSE_AFTER_REPLY) *p++ = 'c';
    if (c->flags & CLIENT_CLOSE_ASAP) *p++ = 'A';
    if (c->flags & CLIENT_UNIX_SOCKET) *p++ = 'U';
    if (c->flags & CLIENT_NO_EVICT) *p++ = 'e';
    if (c->flags & CLIENT_NO_TOUCH) *p++ = 'T';
    if (p == flags) *p++ = 'N';
    return sdsCatLen(s, flags, (size_t)(p - flags));
}

static sds catClientInfo(sds s, const Client *c);

sds clientInfoString(sds s, const Client *c) {
    s = catClientInfo(s, c);
    sdsSetLen(s, sdsLen(s) - 1);
    return s;
}

/* Appends c's CLIENT LIST line (with its trailing newline). */
static sds catClientInfo(sds s, const Client *c) {
    long long now = serverNowMs();
    long sub = 0, psub = 0, ssub = 0;
    pubsubClientCounts(c, &sub, &psub, &ssub);
    int multi = (c->flags & CLIENT_MULTI) ? multiQueuedCount(c) : -1;
    size_t multiMem = multiQueuedBytes(c);
    /* A big argument being read is Redis's query buffer, sized for it. */
    ProtoPartial part;
    c->proto->partial(c->protoState, &part);
    size_t qbuf = (c->querybuf ? sdsLen(c->querybuf) : 0) + part.bulkReceived;
    size_t qbufFree = c->querybuf ? sdsAvail(c->querybuf) : 0;
    if (part.bulkDeclared) /* what is still to come of its payload */
        qbufFree = part.bulkDeclared - 2 > part.bulkReceived ? part.bulkDeclared - 2 - part.bulkReceived : 0;
    size_t argvMem = c->argvBytes + part.argvBytes;
    size_t totMem = clientMemoryUsage(c);
    /* Redis shows the running command for the client running it. */
    const Command *last = (c->flags & CLIENT_EXECUTING) && c->cmd ? c->cmd : c->lastcmd;
    const char *events = clientEvents(c);

    s = sdsCatPrintf(s, "id=%llu addr=%s laddr=%s fd=%d name=%s age=%lld idle=%lld flags=",
                     (unsigned long long)c->id, c->addr, c->laddr, clientFd(c), c->name ? c->name : "",
                     (now - c->ctime) / 1000, (now - c->lastInteraction) / 1000);
    s = catClientFlags(s, c);
    s = sdsCatPrintf(s,
                     " db=%d sub=%ld psub=%ld ssub=%ld multi=%d qbuf=%zu qbuf-free=%zu argv-mem=%zu"
                     " multi-mem=%zu rbs=%d rbp=%d obl=%zu oll=%lu omem=%zu tot-mem=%zu events=%s"
                     " cmd=%s user=%s redir=%lld resp=%d\n",
                     c->db ? c->db->id : 0, sub, psub, ssub, multi, qbuf, qbufFree, argvMem,
                     multiMem, (int)c->bufSize, (int)(c->bufpos > c->bufPeak ? c->bufpos : c->bufPeak), c->bufpos,
                     c->replyBlocks,
                     c->replyBytes + replClientPendingMemory(c), totMem, events,
                     last ? (last->fullname ? last->fullname : last->name) : "NULL", aclClientUserName(c),
                     trackingClientRedirect(c),
                     c->resp);
    return s;
}

/* The client type for LIST/KILL TYPE, or -1 with the error replied. */
static int parseClientTypeOrReply(Client *c, const sds name) {
    if (argIs(name, "normal")) return CLIENT_TYPE_NORMAL;
    if (argIs(name, "slave") || argIs(name, "replica")) return CLIENT_TYPE_REPLICA;
    if (argIs(name, "pubsub")) return CLIENT_TYPE_PUBSUB;
    if (argIs(name, "master")) return CLIENT_TYPE_MASTER;
    replyErrorFormat(c, "ERR Unknown client type '%s'", name);
    return -1;
}

static Client *findClientById(unsigned long long id) {
    for (Client *o = server.net.clients; o; o = o->nextClient)
        if (o->id == id) return o;
    return NULL;
}

static void clientIdCommand(Client *c) { replyLongLong(c, (long long)c->id); }

static void clientGetnameCommand(Client *c) {
    if (c->name)
        replyBulkSds(c, c->name);
    else
        replyNull(c);
}

static void clientSetnameCommand(Client *c) {
    sds name = c->argv[2];
    if (!validClientAttr(name, sdsLen(name))) {
        replyError(c, "ERR Client names cannot contain spaces, newlines or special characters.");
        return;
    }
    if (c->name) sdsFree(c->name);
    c->name = sdsLen(name) ? sdsDup(name) : NULL;
    replyOk(c);
}

static void clientSetinfoCommand(Client *c) {
    sds attr = c->argv[2], val = c->argv[3];
    sds *dest;
    if (argIs(attr, "lib-name"))
        dest = &c->libName;
    else if (argIs(attr, "lib-ver"))
        dest = &c->libVer;
    else {
        replyErrorFormat(c, "ERR Unrecognized option '%s'", attr);
        return;
    }
    if (!validClientAttr(val, sdsLen(val))) {
        replyErrorFormat(c, "ERR %s cannot contain spaces, newlines or special characters.", attr);
        return;
    }
    if (*dest) sdsFree(*dest);
    *dest = sdsLen(val) ? sdsDup(val) : NULL;
    replyOk(c);
}

static void clientInfoCommand(Client *c) {
    sds s = catClientInfo(sdsEmpty(), c);
    replyVerbatim(c, s, sdsLen(s), "txt");
    sdsFree(s);
}

/* CLIENT LIST [TYPE type] | [ID id ...] */
static void clientListCommand(Client *c) {
    sds s = sdsEmpty();
    if (c->argc == 4 && argIs(c->argv[2], "type")) {
        int type = parseClientTypeOrReply(c, c->argv[3]);
        if (type < 0) goto cleanup;
        for (Client *o = server.net.clients; o; o = o->nextClient)
            if (clientType(o) == type) s = catClientInfo(s, o);
    } else if (c->argc > 3 && argIs(c->argv[2], "id")) {
        for (int j = 3; j < c->argc; j++) {
            long long id;
            if (!stringToLongLong(c->argv[j], sdsLen(c->argv[j]), &id)) {
                replyError(c, "ERR Invalid client ID");
                goto cleanup;
            }
        }
        for (int j = 3; j < c->argc; j++) {
            long long id;
            stringToLongLong(c->argv[j], sdsLen(c->argv[j]), &id);
            Client *o = findClientById((unsigned long long)id);
            if (o) s = catClientInfo(s, o);
        }
    } else if (c->argc != 2) {
        replyErrorSyntax(c);
        goto cleanup;
    } else {
        for (Client *o = server.net.clients; o; o = o->nextClient) s = catClientInfo(s, o);
    }
    replyVerbatim(c, s, sdsLen(s), "txt");
cleanup:
    sdsFree(s);
}

/* Close a client: at once after this reply for the caller itself, at the
 * next loop turn for any other. */
static void killClient(Client *c, Client *victim) {
    if (victim == c)
        c->flags |= CLIENT_CLOSE_AFTER_REPLY;
    else
        clientFreeAsync(victim);
}

typedef struct KillFilter {
    int hasId;
    unsigned long long id;
    int type;          /* -1 = any */
    const char *addr;  /* NULL = any */
    const char *laddr;
    long long maxAge;  /* seconds, 0 = any */
    int skipMe;
    struct AclUser *user; /* USER: clients of this user only */
} KillFilter;

/* Parses CLIENT KILL's <option> <value> pairs; 0 ok, -1 after replying. */
static int parseKillFilterOrReply(Client *c, KillFilter *f) {
    memset(f, 0, sizeof(*f));
    f->type = -1;
    f->skipMe = 1;
    for (int i = 2; i < c->argc; i += 2) {
        if (i + 1 >= c->argc) {
            replyErrorSyntax(c);
            return -1;
        }
        sds opt = c->argv[i], val = c->argv[i + 1];
        if (argIs(opt, "id")) {
            long long id;
            if (!stringToLongLong(val, sdsLen(val), &id) || id <= 0) {
                replyError(c, "ERR client-id should be greater than 0");
                return -1;
            }
            f->hasId = 1;
            f->id = (unsigned long long)id;
        } else if (argIs(opt, "type")) {
            if ((f->type = parseClientTypeOrReply(c, val)) < 0) return -1;
        } else if (argIs(opt, "addr")) {
            f->addr = val;
        } else if (argIs(opt, "laddr")) {
            f->laddr = val;
        } else if (argIs(opt, "user")) {
            f->user = aclUserByName(val, sdsLen(val));
            if (!f->user) {
                replyErrorFormat(c, "ERR No such user '%s'", val);
                return -1;
            }
        } else if (argIs(opt, "skipme")) {
            if (argIs(val, "yes"))
                f->skipMe = 1;
            else if (argIs(val, "no"))
                f->skipMe = 0;
            else {
                replyErrorSyntax(c);
                return -1;
            }
        } else if (argIs(opt, "maxage")) {
            long long age;
            if (!stringToLongLong(val, sdsLen(val), &age)) {
                replyError(c, "ERR maxage is not an integer or out of range");
                return -1;
            }
            if (age <= 0) {
                replyError(c, "ERR maxage should be greater than 0");
                return -1;
            }
            f->maxAge = age;
        } else {
            replyErrorSyntax(c);
            return -1;
        }
    }
    return 0;
}

static int killFilterMatches(const KillFilter *f, Client *c, Client *o) {
    if (f->hasId && o->id != f->id) return 0;
    if (f->type >= 0 && clientType(o) != f->type) return 0;
    if (f->addr && strcmp(o->addr, f->addr) != 0) return 0;
    if (f->laddr && strcmp(o->laddr, f->laddr) != 0) return 0;
    if (f->maxAge && (serverNowMs() - o->ctime) / 1000 < f->maxAge) return 0;
    if (f->skipMe && o == c) return 0;
    if (f->user && aclClientUser(o) != f->user) return 0;
    if (o->flags & CLIENT_FAKE) return 0;
    return 1;
}

/* CLIENT KILL addr:port | CLIENT KILL <option> <value> [...] */
static void clientKillCommand(Client *c) {
    if (c->argc == 3) {
        for (Client *o = server.net.clients; o; o = o->nextClient) {
            if (strcmp(o->addr, c->argv[2]) == 0) {
                killClient(c, o);
                replyOk(c);
                return;
            }
        }
        replyError(c, "ERR No such client");
        return;
    }
    KillFilter f;
    if (parseKillFilterOrReply(c, &f) < 0) return;
    long long killed = 0;
    Client *self = NULL;
    for (Client *o = server.net.clients; o; o = o->nextClient) {
        if (!killFilterMatches(&f, c, o)) continue;
        if (o == c)
            self = c; /* after the loop, so the reply below still goes out */
        else
            killClient(c, o);
        killed++;
    }
    if (self) killClient(c, self);
    replyLongLong(c, killed);
}

static void clientReplyCommand(Client *c) {
    sds mode = c->argv[2];
    if (argIs(mode, "on")) {
        c->flags &= ~(CLIENT_REPLY_OFF | CLIENT_REPLY_SKIP | CLIENT_REPLY_SKIP_NEXT);
        replyOk(c);
    } else if (argIs(mode, "off")) {
        c->flags |= CLIENT_REPLY_OFF;
    } else if (argIs(mode, "skip")) {
        if (!(c->flags & CLIENT_REPLY_OFF)) c->flags |= CLIENT_REPLY_SKIP_NEXT;
    } else {
        replyErrorSyntax(c);
    }
}

static void clientNoEvictCommand(Client *c) {
    if (argIs(c->argv[2], "on")) {
        c->flags |= CLIENT_NO_EVICT;
    } else if (argIs(c->argv[2], "off")) {
        c->flags &= ~CLIENT_NO_EVICT;
    } else {
        replyErrorSyntax(c);
        return;
    }
    replyOk(c);
}

/* CLIENT NO-TOUCH ON|OFF (Redis 7.2): while on, the client's commands
 * leave the keys' LRU/LFU alone, except TOUCH (see dbNoTouch). */
static void clientNoTouchCommand(Client *c) {
    if (argIs(c->argv[2], "on")) {
        c->flags |= CLIENT_NO_TOUCH;
    } else if (argIs(c->argv[2], "off")) {
        c->flags &= ~CLIENT_NO_TOUCH;
    } else {
        replyErrorSyntax(c);
        return;
    }
    replyOk(c);
}

/* CLIENT UNBLOCK <id> [TIMEOUT|ERROR]: 1 if that client was blocked on keys
 * or in WAIT and is now unblocked (as on a timeout, or with an UNBLOCKED
 * error). */
static void clientUnblockCommand(Client *c) {
    if (c->argc > 4) {
        replyError(c, "ERR unknown subcommand or wrong number of arguments for 'unblock'. Try CLIENT HELP.");
        return;
    }
    int error = 0;
    if (c->argc == 4) {
        if (argIs(c->argv[3], "error")) error = 1;
        else if (!argIs(c->argv[3], "timeout")) {
            replyError(c, "ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR");
            return;
        }
    }
    long long id;
    if (getLongLongOrReply(c, c->argv[2], &id, NULL) == -1) return;
    for (Client *o = server.net.clients; o; o = o->nextClient) {
        if ((long long)o->id == id) {
            replyLongLong(c, blockingUnblockClient(o, error) || primaryUnblockWaiter(o, error));
            return;
        }
    }
    replyLongLong(c, 0);
}

static void clientHelpCommand(Client *c) {
    static const char *help[] = {
        "GETNAME",
        "    The name of this connection (nil when none was set).",
        "CACHING YES|NO",
        "    Track, or not, the keys read by the next command (OPTIN/OPTOUT modes).",
        "GETREDIR",
        "    The id of the client receiving this connection's invalidations (0: none, -1: not tracking).",
        "ID",
        "    The id of this connection.",
        "INFO",
        "    One CLIENT LIST line about this connection.",
        "KILL <ip:port>",
        "    Close the connection from <ip:port>.",
        "KILL <filter> <value> [<filter> <value> ...]",
        "    Close every connection matching all the filters:",
        "    * ID <client-id>",
        "    * ADDR <ip:port> | <unixsocket>:0 (remote end)",
        "    * LADDR <ip:port> | <unixsocket>:0 (local end)",
        "    * TYPE NORMAL|MASTER|REPLICA|PUBSUB",
        "    * USER <username>",
        "    * MAXAGE <seconds> (connections at least this old)",
        "    * SKIPME YES|NO (whether to spare this connection; default YES)",
        "LIST [TYPE NORMAL|MASTER|REPLICA|PUBSUB | ID <client-id> [<client-id> ...]]",
        "    One line per connection, optionally filtered.",
        "PAUSE <timeout> [WRITE|ALL]",
        "    Hold all commands (ALL) or just writes (WRITE) of every client for <timeout> ms.",
        "NO-EVICT ON|OFF",
        "    Exempt this connection from client eviction, or not.",
        "REPLY ON|OFF|SKIP",
        "    Send replies, stop sending them, or skip the reply to the next command.",
        "SETINFO LIB-NAME|LIB-VER <value>",
        "    Record the client library name or version of this connection.",
        "SETNAME <name>",
        "    Name this connection (an empty name clears it).",
        "TRACKING ON|OFF [REDIRECT <id>] [BCAST] [PREFIX <prefix> [...]] [OPTIN] [OPTOUT] [NOLOOP]",
        "    Turn server-assisted client-side caching on or off.",
        "TRACKINGINFO",
        "    This connection's tracking mode, redirection and prefixes.",
        "UNBLOCK <clientid> [TIMEOUT|ERROR]",
        "    Unblock the specified blocked client.",
        "UNPAUSE",
        "    End the current CLIENT PAUSE and run the held commands.",
        NULL,
    };
    replyHelp(c, help);
}

static Command clientSubcommands[] = {
    {.name = "id", .proc = clientIdCommand},
    {.name = "getname", .proc = clientGetnameCommand},
    {.name = "setname", .proc = clientSetnameCommand},
    {.name = "setinfo", .proc = clientSetinfoCommand},
    {.name = "info", .proc = clientInfoCommand},
    {.name = "list", .proc = clientListCommand},
    {.name = "kill", .proc = clientKillCommand},
    {.name = "reply", .proc = clientReplyCommand},
    {.name = "no-touch", .proc = clientNoTouchCommand},
    {.name = "no-evict", .proc = clientNoEvictCommand},
    {.name = "getredir", .proc = clientGetredirCommand},
    {.name = "tracking", .proc = clientTrackingCommand},
    {.name = "caching", .proc = clientCachingCommand},
    {.name = "trackinginfo", .proc = clientTrackinginfoCommand},
    {.name = "pause", .proc = clientPauseCommand},
    {.name = "unpause", .proc = clientUnpauseCommand},
    {.name = "unblock", .proc = clientUnblockCommand},
    {.name = "help", .proc = clientHelpCommand},
    {0},
};

Command clientCommands[] = {
    {.name = "client", .subcommands = clientSubcommands},
    {0},
};
