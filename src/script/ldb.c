/* ldb.c -- SCRIPT DEBUG: the Lua debugger `redis-cli --ldb` drives.
 *
 * SCRIPT DEBUG YES or SYNC flags the client; its next EVAL (or EVAL_RO)
 * runs as a debugging session.  YES forks: the child runs the session and
 * exits, so its writes are lost, while the parent drops the client and
 * keeps serving.  SYNC runs the session in the server, which blocks.
 *
 * The session talks to the client's socket directly and in blocking mode:
 * the script runs under a line hook that stops at the first line, at
 * breakpoints and after redis.breakpoint(); at each stop the queued log
 * lines go out as one array of status replies and the debugger reads one
 * command (a RESP multibulk) at a time until one resumes the script.  At
 * the end `<endsession>` goes out, then the script's reply, then the
 * connection is closed, which is how the client learns the session ended.
 * The LuaJIT build refuses SCRIPT DEBUG YES|SYNC. */
#include <errno.h>
#include <fcntl.h>
#include <lauxlib.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/client.h"
#include "core/log.h"
#include "core/net.h"
#include "core/server.h"
#include "ds/alloc.h"
#include "ds/util.h"
#include "script/engine.h"
#include "script/ldb.h"

#define LDB_MAXLEN_DEFAULT 256
#define LDB_MAX_BREAKPOINTS 64
#define LDB_MAX_ARGS 1024
#define LDB_MAX_ARG_LEN 1024
#define LDB_MAX_CBUF (1 << 20)
#define LDB_MAX_DEPTH 10 /* nesting shown in value dumps */
#define LDB_HOOK_COUNT 100000

static struct {
    int active;
    int forked;
    Connection *conn; /* the debugged client's, in blocking mode */
    int step;    /* stop at the next line */
    int luabp;   /* redis.breakpoint() asked to stop at the next line */
    int bp[LDB_MAX_BREAKPOINTS];
    int bpcount;
    int currentline;
    size_t maxlen;
    int maxlenHintSent;
    sds *src;
    int lines;
    sds cbuf;
    sds *logs;
    int nlogs, logsCap;
} ldb;

int ldbLogCalls;

static pid_t *children;
static int nchildren, childrenCap;

int ldbActive(void) { return ldb.active; }

/* ------------------------------------------------------------------ */
/* Logs. */

static void ldbLog(sds entry) {
    if (ldb.nlogs == ldb.logsCap) {
        ldb.logsCap = ldb.logsCap ? ldb.logsCap * 2 : 16;
        ldb.logs = xrealloc(ldb.logs, sizeof(sds) * (size_t)ldb.logsCap);
    }
    ldb.logs[ldb.nlogs++] = entry;
}

static void ldbLogText(const char *s) { ldbLog(sdsNew(s)); }

/* Value dumps and replies are cut at maxlen; the first cut adds a hint. */
static void ldbLogTrimmed(sds entry) {
    int trimmed = 0;
    if (ldb.maxlen && sdsLen(entry) > ldb.maxlen) {
        sdsRange(entry, 0, (ssize_t)ldb.maxlen - 1);
        entry = sdsCatLen(entry, " ...", 4);
        trimmed = 1;
    }
    ldbLog(entry);
    if (trimmed && !ldb.maxlenHintSent) {
        ldb.maxlenHintSent = 1;
        ldbLogText("<hint> The above reply was trimmed. Use 'maxlen 0' to disable trimming.");
    }
}

/* The queued lines as one array of status replies (CR and LF as spaces). */
static void ldbSendLogs(void) {
    sds out = sdsCatPrintf(sdsEmpty(), "*%d\r\n", ldb.nlogs);
    for (int i = 0; i < ldb.nlogs; i++) {
        sds l = ldb.logs[i];
        for (size_t j = 0; j < sdsLen(l); j++)
            if (l[j] == '\r' || l[j] == '\n') l[j] = ' ';
        out = sdsCatLen(out, "+", 1);
        out = sdsCatLen(out, l, sdsLen(l));
        out = sdsCatLen(out, "\r\n", 2);
        sdsFree(l);
    }
    ldb.nlogs = 0;
    /* A failed write shows as a failed read at the next command. */
    if (ldb.conn) (void)connWriteAll(ldb.conn, out, sdsLen(out));
    sdsFree(out);
}

/* ------------------------------------------------------------------ */
/* Source lines and breakpoints. */

static const char *sourceLine(int line) {
    if (line < 1 || line > ldb.lines) return "<out of range source code line>";
    return ldb.src[line - 1];
}

static int isBreakpoint(int line) {
    for (int i = 0; i < ldb.bpcount; i++)
        if (ldb.bp[i] == line) return 1;
    return 0;
}

static int addBreakpoint(long line) {
    if (line <= 0 || line > ldb.lines) return 0;
    if (isBreakpoint((int)line) || ldb.bpcount == LDB_MAX_BREAKPOINTS) return 0;
    ldb.bp[ldb.bpcount++] = (int)line;
    return 1;
}

static int delBreakpoint(long line) {
    for (int i = 0; i < ldb.bpcount; i++) {
        if (ldb.bp[i] == line) {
            ldb.bpcount--;
            memmove(ldb.bp + i, ldb.bp + i + 1, sizeof(int) * (size_t)(ldb.bpcount - i));
            return 1;
        }
    }
    return 0;
}

static void logSourceLine(int line) {
    int bp = isBreakpoint(line), cur = line == ldb.currentline;
    const char *prefix = cur && bp ? "->#" : cur ? "-> " : bp ? "  #" : "   ";
    ldbLog(sdsCatPrintf(sdsEmpty(), "%s%-3d %s", prefix, line, sourceLine(line)));
}

static void listSource(int around, int ctx) {
    for (int j = 1; j <= ldb.lines; j++) {
        if (around != 0 && abs(around - j) > ctx) continue;
        logSourceLine(j);
    }
}

/* ------------------------------------------------------------------ */
/* Lua values as text: strings quoted, arrays {1; 2}, tables {[k]=v}. */

static sds catValue(sds s, lua_State *L, int idx, int level) {
    if (level++ == LDB_MAX_DEPTH) return sdsCat(s, "<max recursion level reached! Nested table?>");
    if (idx < 0) idx = lua_gettop(L) + idx + 1;
    int t = lua_type(L, idx);
    switch (t) {
    case LUA_TSTRING: {
        size_t len;
        const char *p = lua_tolstring(L, idx, &len);
        return sdsCatRepr(s, p, len);
    }
    case LUA_TBOOLEAN: return sdsCat(s, lua_toboolean(L, idx) ? "true" : "false");
    case LUA_TNUMBER: return sdsCatPrintf(s, "%g", (double)lua_tonumber(L, idx));
    case LUA_TNIL: return sdsCat(s, "nil");
    case LUA_TTABLE: {
        if (!lua_checkstack(L, 4)) return sdsCat(s, "<max recursion level reached! Nested table?>");
        long expect = 1;
        int isArray = 1;
        sds arr = sdsEmpty(), map = sdsEmpty();
        lua_pushnil(L);
        while (lua_next(L, idx)) {
            if (isArray && (lua_type(L, -2) != LUA_TNUMBER || lua_tonumber(L, -2) != (lua_Number)expect))
                isArray = 0;
            arr = catValue(arr, L, -1, level);
            arr = sdsCatLen(arr, "; ", 2);
            map = sdsCatLen(map, "[", 1);
            map = catValue(map, L, -2, level);
            map = sdsCatLen(map, "]=", 2);
            map = catValue(map, L, -1, level);
            map = sdsCatLen(map, "; ", 2);
            lua_pop(L, 1);
            expect++;
        }
        if (sdsLen(arr)) sdsRange(arr, 0, -3);
        if (sdsLen(map)) sdsRange(map, 0, -3);
        s = sdsCatLen(s, "{", 1);
        s = isArray ? sdsCatLen(s, arr, sdsLen(arr)) : sdsCatLen(s, map, sdsLen(map));
        s = sdsCatLen(s, "}", 1);
        sdsFree(arr);
        sdsFree(map);
        return s;
    }
    case LUA_TFUNCTION:
    case LUA_TUSERDATA:
    case LUA_TTHREAD:
    case LUA_TLIGHTUSERDATA: {
        const char *name = t == LUA_TFUNCTION   ? "function"
                           : t == LUA_TUSERDATA ? "userdata"
                           : t == LUA_TTHREAD   ? "thread"
                                                : "light-userdata";
        return sdsCatPrintf(s, "\"%s@%p\"", name, lua_topointer(L, idx));
    }
    default: return sdsCat(s, "\"<unknown-lua-type>\"");
    }
}

static void logValue(lua_State *L, sds prefix) { ldbLogTrimmed(catValue(prefix, L, -1, 0)); }

int ldbRedisDebug(lua_State *L) {
    if (!ldb.active) return 0;
    int argc = lua_gettop(L);
    sds s = sdsCatPrintf(sdsEmpty(), "<debug> line %d: ", ldb.currentline);
    for (int i = 1; i <= argc; i++) {
        s = catValue(s, L, i, 0);
        if (i != argc) s = sdsCatLen(s, ", ", 2);
    }
    ldbLog(s);
    return 0;
}

int ldbRedisBreakpoint(lua_State *L) {
    if (ldb.active) ldb.luabp = 1;
    lua_pushboolean(L, ldb.active);
    return 1;
}

/* ------------------------------------------------------------------ */
/* redis.call logging: the command, its errors and its reply. */

void ldbLogCommand(int argc, sds *argv) {
    sds s = sdsNew("<redis>");
    for (int j = 0; j < argc; j++) {
        if (j == 10) {
            s = sdsCatPrintf(s, " ... (%d more)", argc - j - 1);
            break;
        }
        s = sdsCatLen(s, " ", 1);
        s = sdsCatLen(s, argv[j], sdsLen(argv[j]));
    }
    ldbLog(s);
}

void ldbLogError(const char *msg) { ldbLog(sdsCatPrintf(sdsEmpty(), "<error> %s", msg)); }

/* The tee: every event goes to the inner sink and into a flat list of
 * nodes, rendered as Redis's debugger shows a reply once it is complete. */
enum { N_STATUS, N_ERROR, N_INT, N_DOUBLE, N_BULK, N_NULL, N_BOOL, N_OTHER, N_AGG };

typedef struct {
    int kind;
    int agg;    /* ReplyAggregate for N_AGG */
    long n;     /* N_AGG: items (pairs for maps); N_NULL: ReplyNullKind */
    long long i;
    double d;
    sds text;
} TeeNode;

typedef struct {
    void *inner;
    size_t node;
} TeeDeferred;

static struct {
    ReplySink base;
    ReplySink *inner;
    TeeNode *nodes;
    size_t n, cap;
    TeeDeferred **defs;
    size_t ndefs;
    int resp;
} teeState;

static TeeNode *teeAdd(int kind) {
    if (teeState.n == teeState.cap) {
        teeState.cap = teeState.cap ? teeState.cap * 2 : 16;
        teeState.nodes = xrealloc(teeState.nodes, sizeof(TeeNode) * teeState.cap);
    }
    TeeNode *x = &teeState.nodes[teeState.n++];
    memset(x, 0, sizeof(*x));
    x->kind = kind;
    return x;
}

static void teeStatus(ReplySink *s, const char *p, size_t len) {
    (void)s;
    teeAdd(N_STATUS)->text = sdsNewLen(p, len);
    teeState.inner->type->status(teeState.inner, p, len);
}
static void teeError(ReplySink *s, const char *p, size_t len) {
    (void)s;
    teeAdd(N_ERROR)->text = sdsNewLen(p, len);
    teeState.inner->type->error(teeState.inner, p, len);
}
static void teeInteger(ReplySink *s, long long v) {
    (void)s;
    teeAdd(N_INT)->i = v;
    teeState.inner->type->integer(teeState.inner, v);
}
static void teeDouble(ReplySink *s, double d) {
    (void)s;
    teeAdd(N_DOUBLE)->d = d;
    teeState.inner->type->dbl(teeState.inner, d);
}
static void teeBulk(ReplySink *s, const char *p, size_t len) {
    (void)s;
    teeAdd(N_BULK)->text = sdsNewLen(p, len);
    teeState.inner->type->bulk(teeState.inner, p, len);
}
static void teeNull(ReplySink *s, ReplyNullKind kind) {
    (void)s;
    teeAdd(N_NULL)->n = kind;
    teeState.inner->type->null(teeState.inner, kind);
}
static void teeBoolean(ReplySink *s, int b) {
    (void)s;
    teeAdd(N_BOOL)->i = b;
    teeState.inner->type->boolean(teeState.inner, b);
}
static void teeBigNumber(ReplySink *s, const char *p, size_t len) {
    (void)s;
    teeAdd(N_OTHER)->text = sdsNewLen(p, len);
    teeState.inner->type->bigNumber(teeState.inner, p, len);
}
static void teeVerbatim(ReplySink *s, const char *p, size_t len, const char *ext) {
    (void)s;
    teeAdd(N_OTHER)->text = sdsNewLen(p, len);
    teeState.inner->type->verbatim(teeState.inner, p, len, ext);
}
static void teeAggregate(ReplySink *s, ReplyAggregate kind, long n) {
    (void)s;
    TeeNode *x = teeAdd(N_AGG);
    x->agg = kind;
    x->n = n;
    teeState.inner->type->aggregate(teeState.inner, kind, n);
}
static void *teeDeferred(ReplySink *s) {
    (void)s;
    TeeDeferred *d = xmalloc(sizeof(*d));
    TeeNode *x = teeAdd(N_AGG);
    x->agg = REPLY_ARRAY;
    x->n = 0;
    d->node = teeState.n - 1;
    d->inner = teeState.inner->type->deferred(teeState.inner);
    teeState.defs = xrealloc(teeState.defs, sizeof(TeeDeferred *) * (teeState.ndefs + 1));
    teeState.defs[teeState.ndefs++] = d;
    return d;
}
static void teeSetDeferred(ReplySink *s, void *node, ReplyAggregate kind, long n) {
    (void)s;
    TeeDeferred *d = node;
    teeState.nodes[d->node].agg = kind;
    teeState.nodes[d->node].n = n;
    teeState.inner->type->setDeferred(teeState.inner, d->inner, kind, n);
}
static void teeRaw(ReplySink *s, const char *p, size_t len) {
    (void)s;
    if (teeState.inner->type->raw) teeState.inner->type->raw(teeState.inner, p, len);
}

static const ReplySinkType teeType = {
    .name = "ldb",
    .status = teeStatus,
    .error = teeError,
    .integer = teeInteger,
    .dbl = teeDouble,
    .bulk = teeBulk,
    .null = teeNull,
    .boolean = teeBoolean,
    .bigNumber = teeBigNumber,
    .verbatim = teeVerbatim,
    .aggregate = teeAggregate,
    .deferred = teeDeferred,
    .setDeferred = teeSetDeferred,
    .raw = teeRaw,
};

ReplySink *ldbTeeBegin(ReplySink *inner, int resp) {
    teeState.base.type = &teeType;
    teeState.inner = inner;
    teeState.n = 0;
    teeState.resp = resp;
    return &teeState.base;
}

/* Render the node at *i (advancing it past the node and its items). */
static sds teeRender(sds o, size_t *i) {
    if (*i >= teeState.n) return o;
    TeeNode *x = &teeState.nodes[(*i)++];
    switch (x->kind) {
    case N_STATUS: {
        sds t = sdsCatLen(sdsNew("+"), x->text, sdsLen(x->text));
        o = sdsCatRepr(o, t, sdsLen(t));
        sdsFree(t);
        return o;
    }
    case N_ERROR: {
        sds t = sdsCatLen(sdsNew("-"), x->text, sdsLen(x->text));
        o = sdsCatRepr(o, t, sdsLen(t));
        sdsFree(t);
        return o;
    }
    case N_INT: return sdsCatPrintf(o, "%lld", x->i);
    case N_DOUBLE: {
        char buf[UTIL_MAX_DOUBLE_CHARS];
        int len = doubleToString(buf, sizeof(buf), x->d);
        if (teeState.resp == 2) return sdsCatRepr(o, buf, (size_t)len);
        o = sdsCat(o, "(double) ");
        return sdsCatLen(o, buf, (size_t)len);
    }
    case N_BULK: return sdsCatRepr(o, x->text, sdsLen(x->text));
    case N_NULL: return sdsCat(o, teeState.resp == 2 ? "NULL" : "(null)");
    case N_BOOL:
        if (teeState.resp == 2) return sdsCat(o, x->i ? "1" : "0");
        return sdsCat(o, x->i ? "#true" : "#false");
    case N_OTHER:
        /* Big numbers and verbatim text: bulk strings in RESP2; Redis
         * 7.0's debugger shows nothing for their RESP3 forms. */
        if (teeState.resp == 2) return sdsCatRepr(o, x->text, sdsLen(x->text));
        return o;
    case N_AGG: {
        if (x->n < 0) return sdsCat(o, teeState.resp == 2 ? "NULL" : "(null)");
        int isMap = x->agg == REPLY_MAP || x->agg == REPLY_ATTRIBUTE;
        int isSet = x->agg == REPLY_SET;
        long items = x->n;
        if (teeState.resp == 2 && (isMap || isSet)) {
            if (isMap) items *= 2;
            isMap = isSet = 0;
        }
        o = sdsCat(o, isMap ? "{" : isSet ? "~(" : "[");
        for (long j = 0; j < items; j++) {
            if (j) o = sdsCatLen(o, ",", 1);
            o = teeRender(o, i);
            if (isMap) {
                o = sdsCat(o, " => ");
                o = teeRender(o, i);
            }
        }
        return sdsCat(o, isMap ? "}" : isSet ? ")" : "]");
    }
    }
    return o;
}

void ldbTeeEnd(void) {
    if (teeState.n && teeState.nodes[0].kind == N_ERROR)
        ldbLog(sdsCatPrintf(sdsEmpty(), "<error> -%s", teeState.nodes[0].text));
    size_t i = 0;
    sds line = teeRender(sdsNew("<reply> "), &i);
    ldbLogTrimmed(line);
    for (size_t j = 0; j < teeState.n; j++) sdsFree(teeState.nodes[j].text);
    for (size_t j = 0; j < teeState.ndefs; j++) xfree(teeState.defs[j]);
    xfree(teeState.defs);
    teeState.defs = NULL;
    teeState.ndefs = 0;
    teeState.n = 0;
}

/* ------------------------------------------------------------------ */
/* Debugger commands. */

static void cmdPrintAll(lua_State *L) {
    lua_Debug ar;
    int vars = 0;
    if (lua_getstack(L, 0, &ar)) {
        const char *name;
        for (int i = 1; (name = lua_getlocal(L, &ar, i)) != NULL; i++) {
            if (!strstr(name, "(*temporary)")) {
                logValue(L, sdsCatPrintf(sdsEmpty(), "<value> %s = ", name));
                vars++;
            }
            lua_pop(L, 1);
        }
    }
    if (vars == 0) ldbLogText("No local variables in the current context.");
}

static void cmdPrint(lua_State *L, const char *var) {
    lua_Debug ar;
    for (int level = 0; lua_getstack(L, level, &ar); level++) {
        const char *name;
        for (int i = 1; (name = lua_getlocal(L, &ar, i)) != NULL; i++) {
            if (strcmp(var, name) == 0) {
                logValue(L, sdsNew("<value> "));
                lua_pop(L, 1);
                return;
            }
            lua_pop(L, 1);
        }
    }
    if (!strcmp(var, "ARGV") || !strcmp(var, "KEYS")) {
        lua_getglobal(L, var);
        logValue(L, sdsNew("<value> "));
        lua_pop(L, 1);
    } else {
        ldbLogText("No such variable.");
    }
}

static void cmdBreak(sds *argv, int argc) {
    if (argc == 1) {
        if (ldb.bpcount == 0) {
            ldbLogText("No breakpoints set. Use 'b <line>' to add one.");
            return;
        }
        ldbLog(sdsCatPrintf(sdsEmpty(), "%d breakpoints set:", ldb.bpcount));
        for (int j = 0; j < ldb.bpcount; j++) logSourceLine(ldb.bp[j]);
        return;
    }
    for (int j = 1; j < argc; j++) {
        long long line;
        if (!stringToLongLong(argv[j], sdsLen(argv[j]), &line) || line < -2147483647LL || line > 2147483647LL) {
            ldbLog(sdsCatPrintf(sdsEmpty(), "Invalid argument:'%s'", argv[j]));
        } else if (line == 0) {
            ldb.bpcount = 0;
            ldbLogText("All breakpoints removed.");
        } else if (line > 0) {
            if (ldb.bpcount == LDB_MAX_BREAKPOINTS) ldbLogText("Too many breakpoints set.");
            else if (addBreakpoint((long)line)) listSource((int)line, 1);
            else ldbLogText("Wrong line number.");
        } else {
            if (delBreakpoint((long)-line)) ldbLogText("Breakpoint removed.");
            else ldbLogText("No breakpoint in the specified line.");
        }
    }
}

static void cmdTrace(lua_State *L) {
    lua_Debug ar;
    int level = 0;
    while (lua_getstack(L, level, &ar)) {
        lua_getinfo(L, "Snl", &ar);
        if (strstr(ar.short_src, "user_script") != NULL) {
            ldbLog(sdsCatPrintf(sdsEmpty(), "%s %s:", level == 0 ? "In" : "From", ar.name ? ar.name : "top level"));
            logSourceLine(ar.currentline);
        }
        level++;
    }
    if (level == 0) ldbLogText("<error> Can't retrieve Lua stack.");
}

static void logLuaError(lua_State *L) {
    const char *msg = NULL;
    if (lua_type(L, -1) == LUA_TTABLE) {
        lua_getfield(L, -1, "err");
        msg = lua_tostring(L, -1);
        ldbLog(sdsCatPrintf(sdsEmpty(), "<error> %s", msg ? msg : "(null)"));
        lua_pop(L, 1);
    } else {
        msg = lua_tostring(L, -1);
        ldbLog(sdsCatPrintf(sdsEmpty(), "<error> %s", msg ? msg : "(null)"));
    }
    lua_pop(L, 1);
}

static void cmdEval(lua_State *L, sds *argv, int argc) {
    sds code = sdsEmpty();
    for (int j = 1; j < argc; j++) {
        if (j > 1) code = sdsCatLen(code, " ", 1);
        code = sdsCatLen(code, argv[j], sdsLen(argv[j]));
    }
    sds expr = sdsCatLen(sdsNew("return "), code, sdsLen(code));
    int bad = luaL_loadbuffer(L, expr, sdsLen(expr), "@ldb_eval");
    if (bad) {
        lua_pop(L, 1);
        bad = luaL_loadbuffer(L, code, sdsLen(code), "@ldb_eval");
    }
    sdsFree(code);
    sdsFree(expr);
    if (bad || lua_pcall(L, 0, 1, 0)) {
        logLuaError(L);
        return;
    }
    logValue(L, sdsNew("<retval> "));
    lua_pop(L, 1);
}

static void cmdRedis(lua_State *L, sds *argv, int argc) {
    if (!lua_checkstack(L, argc + 2)) {
        ldbLogText("<error> max lua stack reached");
        return;
    }
    lua_getglobal(L, "redis");
    lua_getfield(L, -1, "call");
    for (int j = 1; j < argc; j++) lua_pushlstring(L, argv[j], sdsLen(argv[j]));
    ldb.step = 1;
    ldbLogCalls = 1;
    lua_pcall(L, argc - 1, 1, 0);
    ldb.step = 0;
    ldbLogCalls = 0;
    lua_pop(L, 2);
}

static void cmdMaxlen(sds *argv, int argc) {
    if (argc == 2) {
        int v = atoi(argv[1]);
        ldb.maxlenHintSent = 1;
        if (v != 0 && v <= 60) v = 60;
        ldb.maxlen = (size_t)v;
    }
    if (ldb.maxlen) ldbLog(sdsCatPrintf(sdsEmpty(), "<value> replies are truncated at %d bytes.", (int)ldb.maxlen));
    else ldbLogText("<value> replies are unlimited.");
}

static void cmdHelp(void) {
    static const char *help[] = {
        "Redis Lua debugger help:",
        "[h]elp               Show this help.",
        "[s]tep               Run current line and stop again.",
        "[n]ext               Alias for step.",
        "[c]ontinue           Run till next breakpoint.",
        "[l]ist               List source code around current line.",
        "[l]ist [line]        List source code around [line].",
        "                     line = 0 means: current position.",
        "[l]ist [line] [ctx]  In this form [ctx] specifies how many lines",
        "                     to show before/after [line].",
        "[w]hole              List all source code. Alias for 'list 1 1000000'.",
        "[p]rint              Show all the local variables.",
        "[p]rint <var>        Show the value of the specified variable.",
        "                     Can also show global vars KEYS and ARGV.",
        "[b]reak              Show all breakpoints.",
        "[b]reak <line>       Add a breakpoint to the specified line.",
        "[b]reak -<line>      Remove breakpoint from the specified line.",
        "[b]reak 0            Remove all breakpoints.",
        "[t]race              Show a backtrace.",
        "[e]val <code>        Execute some Lua code (in a different callframe).",
        "[r]edis <cmd>        Execute a Redis command.",
        "[m]axlen [len]       Trim logged Redis replies and Lua var dumps to len.",
        "                     Specifying zero as <len> means unlimited.",
        "[a]bort              Stop the execution of the script. In sync",
        "                     mode dataset changes will be retained.",
        "",
        "Debugger functions you can call from Lua scripts:",
        "redis.debug()        Produce logs in the debugger console.",
        "redis.breakpoint()   Stop execution like if there was a breakpoint in the",
        "                     next line of code.",
        NULL};
    for (int i = 0; help[i]; i++) ldbLogText(help[i]);
}

/* ------------------------------------------------------------------ */
/* Reading commands: a forgiving RESP multibulk parser over ldb.cbuf.
 * Returns the arguments (1 to 1024 of 1 to 1024 bytes), NULL to read more,
 * or NULL with *err set on a protocol error. */

static sds *parseCommand(int *argcp, int *err) {
    *err = 0;
    size_t len = sdsLen(ldb.cbuf);
    if (len == 0) return NULL;
    const char *buf = ldb.cbuf, *end = buf + len;
    const char *p = memchr(buf, '*', len);
    if (!p) goto protoerr;
    const char *nl = memmem(p, (size_t)(end - p), "\r\n", 2);
    if (!nl) return NULL;
    int argc = atoi(p + 1);
    if (argc <= 0 || argc > LDB_MAX_ARGS) goto protoerr;
    p = nl + 2;
    sds *argv = xmalloc(sizeof(sds) * (size_t)argc);
    int n = 0;
    while (n < argc) {
        if (p >= end) goto more;
        if (*p != '$') goto protoerr_free;
        nl = memmem(p, (size_t)(end - p), "\r\n", 2);
        if (!nl) goto more;
        int alen = atoi(p + 1);
        if (alen <= 0 || alen > LDB_MAX_ARG_LEN) goto protoerr_free;
        p = nl + 2;
        if ((size_t)(end - p) < (size_t)alen + 2) goto more;
        argv[n++] = sdsNewLen(p, (size_t)alen);
        p += alen;
        if (p[0] != '\r' || p[1] != '\n') goto protoerr_free;
        p += 2;
    }
    *argcp = argc;
    return argv;
more:
    for (int j = 0; j < n; j++) sdsFree(argv[j]);
    xfree(argv);
    return NULL;
protoerr_free:
    for (int j = 0; j < n; j++) sdsFree(argv[j]);
    xfree(argv);
protoerr:
    *err = 1;
    return NULL;
}

static void freeArgv(sds *argv, int argc) {
    for (int j = 0; j < argc; j++) sdsFree(argv[j]);
    xfree(argv);
}

/* Raise a script error (does not return). */
static int raiseText(lua_State *L, const char *msg) {
    lua_newtable(L);
    lua_pushstring(L, msg);
    lua_setfield(L, -2, "err");
    return lua_error(L);
}

static int argIsOneOf(sds a, const char *s1, const char *s2) { return !strcasecmp(a, s1) || !strcasecmp(a, s2); }

/* Read and run debugger commands until one resumes the script.  Returns -1
 * if the client went away (the script then runs to its end). */
static int ldbRepl(lua_State *L) {
    for (;;) {
        sds *argv;
        int argc, err;
        while ((argv = parseCommand(&argc, &err)) == NULL) {
            if (err) raiseText(L, "ERR protocol error");
            char buf[1024];
            long n = ldb.conn ? connRead(ldb.conn, buf, sizeof(buf)) : 0; /* a fake client: gone */
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) {
                ldb.step = 0;
                ldb.bpcount = 0;
                return -1;
            }
            ldb.cbuf = sdsCatLen(ldb.cbuf, buf, (size_t)n);
            if (sdsLen(ldb.cbuf) > LDB_MAX_CBUF) {
                sdsFree(ldb.cbuf);
                ldb.cbuf = sdsEmpty();
                raiseText(L, "ERR max client buffer reached");
            }
        }
        sdsFree(ldb.cbuf);
        ldb.cbuf = sdsEmpty();
        sds c = argv[0];
        if (argIsOneOf(c, "s", "step") || argIsOneOf(c, "n", "next")) {
            ldb.step = 1;
            freeArgv(argv, argc);
            return 0;
        } else if (argIsOneOf(c, "c", "continue")) {
            freeArgv(argv, argc);
            return 0;
        } else if (argIsOneOf(c, "t", "trace")) {
            cmdTrace(L);
        } else if (argIsOneOf(c, "m", "maxlen")) {
            cmdMaxlen(argv, argc);
        } else if (argIsOneOf(c, "b", "break")) {
            cmdBreak(argv, argc);
        } else if (argIsOneOf(c, "e", "eval")) {
            cmdEval(L, argv, argc);
        } else if (argIsOneOf(c, "a", "abort")) {
            freeArgv(argv, argc);
            raiseText(L, "ERR script aborted for user request");
        } else if (argc > 1 && argIsOneOf(c, "r", "redis")) {
            cmdRedis(L, argv, argc);
        } else if (argIsOneOf(c, "p", "print")) {
            if (argc == 2) cmdPrint(L, argv[1]);
            else cmdPrintAll(L);
        } else if (argIsOneOf(c, "l", "list")) {
            int around = ldb.currentline, ctx = 5;
            if (argc > 1) {
                int num = atoi(argv[1]);
                if (num > 0) around = num;
            }
            if (argc > 2) ctx = atoi(argv[2]);
            listSource(around, ctx);
        } else if (argIsOneOf(c, "w", "whole")) {
            listSource(1, 1000000);
        } else if (argIsOneOf(c, "h", "help")) {
            cmdHelp();
        } else {
            ldbLogText("<error> Unknown Redis Lua debugger command or wrong number of arguments.");
        }
        freeArgv(argv, argc);
        ldbSendLogs();
    }
}

void ldbHook(lua_State *L, lua_Debug *ar) {
    ScriptRun *run = scriptCurrentRun();
    lua_getstack(L, 0, ar);
    lua_getinfo(L, "Sl", ar);
    ldb.currentline = ar->currentline;
    int bp = isBreakpoint(ldb.currentline) || ldb.luabp;
    int timeout = 0;
    if (strstr(ar->short_src, "user_script") == NULL) return;
    if (ar->event == LUA_HOOKCOUNT && ldb.step == 0 && bp == 0) {
        long long limit = server.cfg.busyReplyThreshold ? server.cfg.busyReplyThreshold : 5000;
        if (!run || mstime() - run->startMs < limit) return;
        timeout = 1;
        ldb.step = 1;
    }
    if (ldb.step || bp) {
        const char *reason = "step over";
        if (bp) reason = ldb.luabp ? "redis.breakpoint() called" : "break point";
        else if (timeout) reason = "timeout reached, infinite loop?";
        ldb.step = 0;
        ldb.luabp = 0;
        ldbLogCalls = 0;
        ldbLog(sdsCatPrintf(sdsEmpty(), "* Stopped at %d, stop reason = %s", ldb.currentline, reason));
        logSourceLine(ldb.currentline);
        ldbSendLogs();
        if (ldbRepl(L) == -1 && timeout)
            raiseText(L, "ERR timeout during Lua debugging with client closing connection");
        ldbLogCalls = ldb.step;
        if (run) run->startMs = mstime();
    }
}

/* ------------------------------------------------------------------ */
/* Sessions. */

/* Write c's pending replies now (blocking), then drop them. */
static void flushClient(Client *c) {
    if (clientIsFake(c)) return;
    if (c->bufpos > c->sentlen) (void)connWriteAll(c->conn, c->buf + c->sentlen, c->bufpos - c->sentlen);
    size_t skip = c->bufpos ? 0 : c->sentlen;
    for (ReplyBlock *b = c->replyHead; b; b = b->next) {
        if (b->refLen > skip) (void)connWriteAll(c->conn, b->ref + skip, b->refLen - skip);
        skip = skip > b->refLen ? skip - b->refLen : 0;
        if (b->used > skip) (void)connWriteAll(c->conn, b->buf + skip, b->used - skip);
        skip = 0;
    }
    clientDiscardReplies(c);
}

int ldbStartSession(Client *c) {
    ldb.forked = !(c->flags & CLIENT_LUA_DEBUG_SYNC);
    if (ldb.forked) {
        pid_t pid = fork();
        if (pid == -1) {
            sds e = sdsCatPrintf(sdsEmpty(), "ERR Fork() failed: can't run EVAL in debugging mode: %s",
                                 strerror(errno));
            replyError(c, e);
            sdsFree(e);
            return 0;
        }
        if (pid == 0) configApplyOomScoreAdj(CONFIG_OOM_BGCHILD);
        if (pid > 0) {
            /* The child owns the session: forget the client here. */
            serverLog(LL_WARNING, "Redis forked for debugging eval");
            if (nchildren == childrenCap) {
                childrenCap = childrenCap ? childrenCap * 2 : 8;
                children = xrealloc(children, sizeof(pid_t) * (size_t)childrenCap);
            }
            children[nchildren++] = pid;
            c->flags &= ~(CLIENT_LUA_DEBUG | CLIENT_LUA_DEBUG_SYNC);
            clientDiscardReplies(c);
            clientFreeAsync(c);
            return 0;
        }
        netCloseListenersInChild();
        nchildren = 0;
    } else {
        serverLog(LL_WARNING, "Redis synchronous debugging eval session started");
    }
    ldb.conn = c->conn;
    /* Replies already queued for c (EXEC's, in a transaction) stay queued:
     * the session's lines go out ahead of them, as on Redis. */
    if (ldb.conn) connSetBlocking(ldb.conn, 1, 5); /* writes give up after 5 s */
    ldb.active = 1;
    ldb.step = 1;
    ldb.luabp = 0;
    ldb.bpcount = 0;
    ldb.currentline = -1;
    ldb.maxlen = LDB_MAXLEN_DEFAULT;
    ldb.maxlenHintSent = 0;
    ldbLogCalls = 0;
    /* The source lines, without the script's trailing line ends. */
    sds body = c->argv[1];
    size_t blen = sdsLen(body);
    while (blen && (body[blen - 1] == '\n' || body[blen - 1] == '\r')) blen--;
    ldb.src = sdsSplitLen(body, (ssize_t)blen, "\n", 1, &ldb.lines);
    ldb.cbuf = sdsEmpty();
    return 1;
}

void ldbEndSession(Client *c) {
    ldbLogText("<endsession>");
    ldbSendLogs();
    if (ldb.forked) {
        flushClient(c);
        serverLog(LL_WARNING, "Lua debugging session child exiting");
        _exit(0);
    }
    serverLog(LL_WARNING, "Redis synchronous debugging eval session ended");
    if (ldb.conn) connSetBlocking(ldb.conn, 0, 0);
    c->flags |= CLIENT_CLOSE_AFTER_REPLY;
    c->flags &= ~(CLIENT_LUA_DEBUG | CLIENT_LUA_DEBUG_SYNC);
    sdsFreeSplitRes(ldb.src, ldb.lines);
    ldb.src = NULL;
    ldb.lines = 0;
    sdsFree(ldb.cbuf);
    ldb.cbuf = NULL;
    ldb.active = 0;
    ldb.step = 0;
    ldbLogCalls = 0;
}

/* ------------------------------------------------------------------ */

void scriptDebugCommand(Client *c) {
    if (clientHasPendingReplies(c)) {
        replyError(c, "ERR SCRIPT DEBUG must be called outside a pipeline");
        return;
    }
    if (argIs(c->argv[2], "no")) {
        c->flags &= ~(CLIENT_LUA_DEBUG | CLIENT_LUA_DEBUG_SYNC);
        replyOk(c);
        return;
    }
    int sync = argIs(c->argv[2], "sync");
    if (!sync && !argIs(c->argv[2], "yes")) {
        replyError(c, "ERR Use SCRIPT DEBUG YES/SYNC/NO");
        return;
    }
#ifdef CAIRN_LUAJIT
    replyError(c, "ERR SCRIPT DEBUG is not supported by the LuaJIT build of Cairn");
    return;
#endif
    c->flags &= ~CLIENT_LUA_DEBUG_SYNC;
    c->flags |= CLIENT_LUA_DEBUG | (sync ? CLIENT_LUA_DEBUG_SYNC : 0);
    replyOk(c);
}

static void reapChildren(void) {
    for (int i = 0; i < nchildren;) {
        int st;
        pid_t p = waitpid(children[i], &st, WNOHANG);
        if (p == children[i] || (p == -1 && errno == ECHILD)) children[i] = children[--nchildren];
        else i++;
    }
}

void ldbKillForkedSessions(void) {
    for (int i = 0; i < nchildren; i++) {
        kill(children[i], SIGKILL);
        serverLog(LL_WARNING, "Killing debugging session %ld", (long)children[i]);
    }
    for (int i = 0; i < nchildren; i++) waitpid(children[i], NULL, 0);
    nchildren = 0;
}

void ldbInit(void) { serverAddCronHook(reapChildren); }
