/* acl_log.c -- ACL LOG (Redis 7.0.15's): the denials and failed logins
 * that acl.c reports, newest first, at most acllog-max-len of them; an
 * entry like one of the last ten (same reason, context, object and user,
 * within 60 s) is counted in it and moved to the head instead.
 *
 * Invariants:
 *   - logHead..logTail is doubly linked, logLen entries long, and trimmed
 *     to acllog-max-len after each addition.
 *   - An entry's client-info is taken when it is added or updated. */
#include <string.h>

#include "core/server.h"
#include "ds/alloc.h"
#include "server/acl.h"
#include "server/acl_int.h"
#include "server/client_cmd.h"

typedef struct LogEntry {
    long long count;
    int reason, context;
    sds object, username, cinfo;
    long long ctime;       /* last update, ms (7.0 shows no entry id or creation time) */
    struct LogEntry *next, *prev;
} LogEntry;

static LogEntry *logHead, *logTail;
static long logLen;

static void logEntryFree(LogEntry *e) {
    sdsFree(e->object);
    sdsFree(e->username);
    sdsFree(e->cinfo);
    xfree(e);
}

static void logUnlink(LogEntry *e) {
    if (e->prev) e->prev->next = e->next;
    else logHead = e->next;
    if (e->next) e->next->prev = e->prev;
    else logTail = e->prev;
    e->next = e->prev = NULL;
    logLen--;
}

static void logPushHead(LogEntry *e) {
    e->prev = NULL;
    e->next = logHead;
    if (logHead) logHead->prev = e;
    else logTail = e;
    logHead = e;
    logLen++;
}

static void logReset(void) {
    while (logHead) {
        LogEntry *e = logHead;
        logUnlink(e);
        logEntryFree(e);
    }
}

static void logTrim(void) {
    while (logLen > 0 && logLen > acllogMaxLen) {
        LogEntry *e = logTail;
        logUnlink(e);
        logEntryFree(e);
    }
}

void aclLogAdd(Client *c, Client *real, int reason, int context, int argc, sds *argv, Command *cmd, int argpos,
               const char *username, size_t ulen) {
    LogEntry *e = xcalloc(sizeof(*e));
    e->count = 1;
    e->reason = reason;
    e->context = context;
    e->username = sdsNewLen(username, ulen);
    e->ctime = serverNowMs();
    if (reason == DENIED_CMD) e->object = sdsNew(cmd->fullname);
    else if ((reason == DENIED_KEY || reason == DENIED_CHANNEL) && argpos < argc) e->object = sdsDup(argv[argpos]);
    else if (reason == DENIED_AUTH && argc > 0) e->object = sdsDup(argv[0]);
    else e->object = sdsEmpty();
    (void)c;
    e->cinfo = aclClientHooks && aclClientHooks->info ? aclClientHooks->info(sdsEmpty(), real)
                                                : clientInfoString(sdsEmpty(), real);
    int scanned = 0;
    for (LogEntry *o = logHead; o && scanned < 10; o = o->next, scanned++) {
        long long delta = e->ctime - o->ctime;
        if (o->reason == e->reason && o->context == e->context && (delta < 0 ? -delta : delta) <= 60000 &&
            aclSameSds(o->object, e->object) && aclSameSds(o->username, e->username)) {
            logUnlink(o);
            logPushHead(o);
            sdsFree(o->cinfo);
            o->cinfo = e->cinfo;
            e->cinfo = NULL;
            o->ctime = e->ctime;
            o->count++;
            sdsFree(e->object);
            sdsFree(e->username);
            xfree(e);
            return;
        }
    }
    logPushHead(e);
    logTrim();
}

/* ------------------------------------------------------------------------ */
/* ACL LOG [count | RESET]                                                   */
/* ------------------------------------------------------------------------ */

static const char *reasonName(int r) {
    switch (r) {
    case DENIED_CMD: return "command";
    case DENIED_KEY: return "key";
    case DENIED_CHANNEL: return "channel";
    case DENIED_AUTH: return "auth";
    default: return "unknown";
    }
}

void aclLogCommand(Client *c) {
    if (c->argc > 3) {
        replyErrorFormat(c, "ERR unknown subcommand or wrong number of arguments for '%.128s'. Try ACL HELP.",
                         c->argv[1]);
        return;
    }
    long count = 10;
    if (c->argc == 3) {
        if (argIs(c->argv[2], "reset")) {
            logReset();
            replyOk(c);
            return;
        }
        if (getLongOrReply(c, c->argv[2], &count, NULL) == -1) return;
        if (count < 0) count = 0;
    }
    if (count > logLen) count = logLen;
    replyArrayLen(c, count);
    long long now = serverNowMs();
    static const char *ctxNames[] = {"toplevel", "multi", "lua", "module"};
    LogEntry *e = logHead;
    for (long i = 0; i < count && e; i++, e = e->next) {
        replyMapLen(c, 7);
        replyBulkCString(c, "count");
        replyLongLong(c, e->count);
        replyBulkCString(c, "reason");
        replyBulkCString(c, reasonName(e->reason));
        replyBulkCString(c, "context");
        replyBulkCString(c, ctxNames[e->context]);
        replyBulkCString(c, "object");
        replyBulkSds(c, e->object);
        replyBulkCString(c, "username");
        replyBulkSds(c, e->username);
        replyBulkCString(c, "age-seconds");
        replyDouble(c, (double)(now - e->ctime) / 1000);
        replyBulkCString(c, "client-info");
        replyBulkSds(c, e->cinfo);
    }
}
