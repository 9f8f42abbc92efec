/* config.c -- the directive registry and engine: the config file /
 * command line loader, the CONFIG command, and the core's own directives.
 *
 * Every directive Redis 7.0 knows has one row (ConfigDef, config.h): its
 * name, optional alias, type, flags, where its value lives (`var`) and its
 * default as text.  Each feature declares its rows in its own file and
 * registers them from main.c (configRegister); this file holds the rows
 * of the core (network, logging, process, the keyspace settings of the db
 * layer, which cannot include core) and of the features Cairn lacks.
 * Defaults are applied by parsing that text through the same setter a
 * config file line uses, so the file loader, `--name value` arguments,
 * CONFIG SET, CONFIG GET and CONFIG REWRITE all agree on one definition
 * of each directive.  CONFIG GET * and REWRITE list the rows by rank, then
 * name (config.h), whatever the order of registration.
 *
 * Directives Redis knows but Cairn does not implement (TLS,
 * active defragmentation, I/O threads) have type CT_RAW and live here:
 * their text is stored as given and shown by CONFIG GET, so tools that
 * read them keep working; a config file that sets one gets a single log
 * line at start ("not supported by Cairn").
 * Those that turn a missing feature on (activedefrag)
 * accept only the value that leaves it off (CF_ONLY_DEFAULT); tls-port,
 * tls-replication and tls-cluster are refused as a Redis whose TLS cannot
 * be configured refuses them (start-up fails, CONFIG SET's apply fails);
 * rename-command, loadmodule and sentinel lines are refused: ignoring them
 * would break what the user relies on.  The deprecated names Redis 7.0
 * accepts and ignores in a config file (list-max-ziplist-entries,
 * list-max-ziplist-value, lua-replicate-commands) are accepted likewise.
 * String directives end at a NUL byte as Redis's C-string ones do, except
 * requirepass and masterauth (CF_BINARY), kept whole as Redis's sds ones.
 *
 * Invariants: string values are owned by the engine (xstrdup/xfree);
 * a setter either validates and stores the new value or returns -1 with a
 * static error text and leaves the old value untouched; the registry is
 * complete (every feature registered) before configInitDefaults. */
#include "core/config.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <sched.h>
#include <sys/prctl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <syslog.h>
#include <unistd.h>

#include "core/client.h"
#include "core/errors.h"
#include "core/log.h"
#include "core/server.h"
#include "db/lazyfree.h"
#include "ds/alloc.h"
#include "ds/glob.h"
#include "ds/sds.h"
#include "ds/util.h"

/* ------------------------------------------------------------------------ */
/* The core's directives                                                     */
/* ------------------------------------------------------------------------ */

static const ConfigEnum loglevelEnum[] = {
    {"debug", LL_DEBUG}, {"verbose", LL_VERBOSE}, {"notice", LL_NOTICE}, {"warning", LL_WARNING}, {NULL, 0}};
static const ConfigEnum supervisedEnum[] = {{"upstart", SUPERVISED_UPSTART},
                                            {"systemd", SUPERVISED_SYSTEMD},
                                            {"auto", SUPERVISED_AUTODETECT},
                                            {"no", SUPERVISED_NONE},
                                            {NULL, 0}};
static const ConfigEnum protectedEnum[] = {
    {"no", DEBUGCMD_NO}, {"yes", DEBUGCMD_YES}, {"local", DEBUGCMD_LOCAL}, {NULL, 0}};
static const ConfigEnum syslogFacilityEnum[] = {
    {"user", LOG_USER},     {"local0", LOG_LOCAL0}, {"local1", LOG_LOCAL1}, {"local2", LOG_LOCAL2},
    {"local3", LOG_LOCAL3}, {"local4", LOG_LOCAL4}, {"local5", LOG_LOCAL5}, {"local6", LOG_LOCAL6},
    {"local7", LOG_LOCAL7}, {NULL, 0}};

/* The registered kinds of lines that are not directives (`user`). */
static const ConfigLineKind **lineKinds;
static int lineKindCount;

void configRegisterLineKind(const ConfigLineKind *kind) {
    lineKinds = xrealloc(lineKinds, sizeof(*lineKinds) * (size_t)(lineKindCount + 1));
    lineKinds[lineKindCount++] = kind;
}

static ConfigSetFn setBind, setObufLimits, setUnixsocketperm, setDir, setOomValues;
static ConfigGetFn getBind, getObufLimits, getUnixsocketperm, getDir, getOomValues;
static ConfigRewriteFn rewriteObufLimits;

#define SC(field) server.cfg.field
/* Rows of the core; see config.h for the macros. */
#define B(n, a, fl, field, def, ...) CONFIG_BOOL(n, a, fl, SC(field), def, __VA_ARGS__)
#define I(n, a, fl, field, lo, hi, def, ...) CONFIG_INT(n, a, fl, SC(field), lo, hi, def, __VA_ARGS__)
#define LLV(n, a, fl, field, lo, hi, def, ...) CONFIG_LL(n, a, fl, SC(field), lo, hi, def, __VA_ARGS__)
#define E(n, a, fl, field, en, def, ...) CONFIG_ENUM(n, a, fl, SC(field), en, def, __VA_ARGS__)
#define S(n, a, fl, field, def, ...) CONFIG_STRING(n, a, fl, SC(field), def, __VA_ARGS__)
#define RAW(n, a, fl, def) {.name = n, .alias = a, .type = CT_RAW, .flags = fl, .deflt = def}
/* Raw directives validated as Redis validates them (and shown as Redis
 * shows them): yes/no, an integer or memory value within bounds (a memory
 * value with both bounds 0 is any unsigned 64-bit one), one of the enum's
 * words (for a multi-argument one, each word). */
#define RAWB(n, a, fl, def, ...) \
    {.name = n, .alias = a, .type = CT_RAW, .flags = (fl) | CF_RAW_BOOL, .max = 1, .deflt = def, __VA_ARGS__}
#define RAWI(n, a, fl, lo, hi, def, ...) \
    {.name = n, .alias = a, .type = CT_RAW, .flags = (fl) | CF_RAW_INT, .min = lo, .max = hi, .deflt = def, __VA_ARGS__}
#define RAWE(n, a, fl, en, def) {.name = n, .alias = a, .type = CT_RAW, .flags = fl, .enums = en, .deflt = def}
#define NET(k) .rank = CONFIG_RANK_NETWORK + (k)
#define GEN(k) .rank = CONFIG_RANK_GENERAL + (k)
#define MEM(k) .rank = CONFIG_RANK_MEMORY + (k)

/* "yes" and "relative" are one mode; CONFIG GET names it "yes", as Redis. */
static const ConfigEnum oomScoreAdjEnum[] = {{"no", OOM_SCORE_ADJ_NO},
                                             {"yes", OOM_SCORE_ADJ_RELATIVE},
                                             {"relative", OOM_SCORE_ADJ_RELATIVE},
                                             {"absolute", OOM_SCORE_ADJ_ABSOLUTE},
                                             {NULL, 0}};
static int applyOomScoreAdj(const char **err) {
    if (configApplyOomScoreAdj(CONFIG_OOM_BY_ROLE) == 0) return 0;
    *err = "Failed to set current oom_score_adj. Check server logs.";
    return -1;
}
#ifndef CAIRN_TLS /* built with TLS: the tls-* rows are core/conn_tls.c's */
static const ConfigEnum tlsAuthClientsEnum[] = {{"no", 0}, {"yes", 1}, {"optional", 2}, {NULL, 0}};

static int applyTls(const char **err);
#endif
/* jemalloc-bg-thread: jemalloc's background purging threads on or off (a
 * refusal is not an error, as in Redis). */
static int applyJemallocBgThread(const char **err) {
    (void)err;
    xmallocSetBackgroundThread(server.cfg.jemallocBgThread);
    return 0;
}

/* The core's directives, and those of the db layer (which cannot include
 * core) and of the features Cairn lacks. */
static ConfigDef coreConfig[] = {
    /* Network. */
    I("port", NULL, 0, port, 0, 65535, "6379", .apply = configApplyPort, NET(0)),
    CONFIG_SPECIAL("bind", NULL, CF_MULTI_ARG, "* -::*", setBind, getBind, .apply = configApplyBind, NET(1)),
    I("tcp-backlog", NULL, CF_IMMUTABLE, tcpBacklog, 0, INT_MAX, "511", NET(2)),
    I("tcp-keepalive", NULL, 0, tcpKeepalive, 0, INT_MAX, "300", NET(3)),
    S("unixsocket", NULL, CF_IMMUTABLE | CF_EMPTY_NULL, unixsocket, "", NET(4)),
    CONFIG_SPECIAL("unixsocketperm", NULL, CF_IMMUTABLE, "0", setUnixsocketperm, getUnixsocketperm, NET(5)),
    B("protected-mode", NULL, 0, protectedMode, "yes", NET(6)),
    {.name = "maxclients", .type = CT_UINT, .var = &SC(maxclients), .min = 1, .max = 4294967295LL, .deflt = "10000",
     NET(7)},
    I("timeout", NULL, 0, timeout, 0, INT_MAX, "0", NET(8)),
    LLV("proto-max-bulk-len", NULL, CF_MEMORY, protoMaxBulkLen, 1024 * 1024, LONG_MAX, "512mb", NET(9)),
    LLV("client-query-buffer-limit", NULL, CF_MEMORY, clientQueryBufferLimit, 1024 * 1024, LONG_MAX, "1gb", NET(10)),
    CONFIG_SPECIAL("client-output-buffer-limit", NULL, CF_MULTI_ARG, "normal 0 0 0 slave 256mb 64mb 60 pubsub 32mb 8mb 60",
                   setObufLimits, getObufLimits, .rewrite = rewriteObufLimits, NET(11)),
    /* General. */
    I("hz", NULL, 0, hz, 0, INT_MAX, "10", GEN(0)),
    B("dynamic-hz", NULL, 0, dynamicHz, "yes", GEN(1)),
    I("databases", NULL, CF_IMMUTABLE, databases, 1, INT_MAX, "16", GEN(2)),
    E("loglevel", NULL, 0, loglevel, loglevelEnum, "notice", GEN(3)),
    S("logfile", NULL, CF_IMMUTABLE, logfile, "", GEN(4)),
    B("syslog-enabled", NULL, CF_IMMUTABLE, syslogEnabled, "no", GEN(5)),
    S("syslog-ident", NULL, CF_IMMUTABLE, syslogIdent, "redis", GEN(6)),
    E("syslog-facility", NULL, CF_IMMUTABLE, syslogFacility, syslogFacilityEnum, "local0", GEN(7)),
    B("always-show-logo", NULL, CF_IMMUTABLE, alwaysShowLogo, "no", GEN(8)),
    B("daemonize", NULL, CF_IMMUTABLE, daemonize, "no", GEN(9)),
    S("pidfile", NULL, CF_IMMUTABLE | CF_EMPTY_NULL, pidfile, "", GEN(10)),
    E("supervised", NULL, CF_IMMUTABLE, supervised, supervisedEnum, "no", GEN(11)),
    CONFIG_SPECIAL("dir", NULL, CF_PROTECTED | CF_QUOTED | CF_ALWAYS_REWRITE, "./", setDir, getDir, .var = &SC(dir),
                   GEN(12)),
    E("enable-debug-command", NULL, CF_IMMUTABLE, enableDebugCommand, protectedEnum, "no", GEN(13)),
    E("enable-protected-configs", NULL, CF_IMMUTABLE, enableProtectedConfigs, protectedEnum, "no", GEN(14)),
    E("enable-module-command", NULL, CF_IMMUTABLE, enableModuleCommand, protectedEnum, "no", GEN(15)),
    S("proc-title-template", NULL, 0, procTitleTemplate, "{title} {listen-addr} {server-mode}", GEN(17)),
    B("set-proc-title", NULL, CF_IMMUTABLE, setProcTitle, "yes", GEN(18)),
    /* Memory: the keyspace's expiry and lazy freeing (src/db). */
    I("active-expire-effort", NULL, 0, activeExpireEffort, 1, 10, "1", MEM(6)),
    B("lazyfree-lazy-eviction", NULL, 0, lazyfreeLazyEviction, "no", MEM(7)),
    B("lazyfree-lazy-expire", NULL, 0, lazyfreeLazyExpire, "no", MEM(8)),
    B("lazyfree-lazy-server-del", NULL, 0, lazyfreeLazyServerDel, "no", MEM(9)),
    B("lazyfree-lazy-user-del", NULL, 0, lazyfreeLazyUserDel, "no", MEM(10)),
    B("lazyfree-lazy-user-flush", NULL, 0, lazyfreeLazyUserFlush, "no", MEM(11)),
    B("activerehashing", NULL, 0, activeRehashing, "yes", MEM(12)),

    /* By name: the process, and the features Redis 7.0 has and Cairn
     * does not implement. */
    RAWI("active-defrag-cycle-max", NULL, 0, 1, 99, "25"),
    RAWI("active-defrag-cycle-min", NULL, 0, 1, 99, "1"),
    RAWI("active-defrag-ignore-bytes", NULL, CF_MEMORY, 1, LLONG_MAX, "104857600"),
    RAWI("active-defrag-max-scan-fields", NULL, 0, 1, LLONG_MAX, "1000"),
    RAWI("active-defrag-threshold-lower", NULL, 0, 0, 1000, "10"),
    RAWI("active-defrag-threshold-upper", NULL, 0, 0, 1000, "100"),
    RAWB("activedefrag", NULL, CF_ONLY_DEFAULT, "no"),
    S("bio_cpulist", NULL, CF_IMMUTABLE | CF_EMPTY_NULL, bioCpulist, ""),
    B("disable-thp", NULL, CF_IMMUTABLE, disableThp, "yes"),
    RAW("ignore-warnings", NULL, 0, ""),
    RAWI("io-threads", NULL, CF_IMMUTABLE, 1, 128, "1"),
    RAWB("io-threads-do-reads", NULL, CF_IMMUTABLE, "no"),
    B("jemalloc-bg-thread", NULL, 0, jemallocBgThread, "yes", .apply = applyJemallocBgThread),
    E("oom-score-adj", NULL, 0, oomScoreAdj, oomScoreAdjEnum, "no", .apply = applyOomScoreAdj),
    CONFIG_SPECIAL("oom-score-adj-values", NULL, CF_MULTI_ARG, "0 200 800", setOomValues, getOomValues,
                   .apply = applyOomScoreAdj),
    S("server_cpulist", NULL, CF_IMMUTABLE | CF_EMPTY_NULL, serverCpulist, ""),
    LLV("socket-mark-id", NULL, CF_IMMUTABLE, socketMarkId, 0, UINT_MAX, "0"),
#ifndef CAIRN_TLS
    RAWE("tls-auth-clients", NULL, 0, tlsAuthClientsEnum, "yes"),
    RAW("tls-ca-cert-dir", NULL, 0, ""),
    RAW("tls-ca-cert-file", NULL, 0, ""),
    RAW("tls-cert-file", NULL, 0, ""),
    RAW("tls-ciphers", NULL, 0, ""),
    RAW("tls-ciphersuites", NULL, 0, ""),
    RAW("tls-client-cert-file", NULL, 0, ""),
    RAW("tls-client-key-file", NULL, 0, ""),
    RAW("tls-client-key-file-pass", NULL, CF_SENSITIVE, ""),
    RAWB("tls-cluster", NULL, 0, "no", .apply = applyTls),
    RAW("tls-dh-params-file", NULL, 0, ""),
    RAW("tls-key-file", NULL, 0, ""),
    RAW("tls-key-file-pass", NULL, CF_SENSITIVE, ""),
    RAWI("tls-port", NULL, 0, 0, 65535, "0", .apply = applyTls),
    RAWB("tls-prefer-server-ciphers", NULL, 0, "no"),
    RAW("tls-protocols", NULL, 0, ""),
    RAWB("tls-replication", NULL, 0, "no", .apply = applyTls),
    RAWI("tls-session-cache-size", NULL, 0, 0, INT_MAX, "20480"),
    RAWI("tls-session-cache-timeout", NULL, 0, 0, INT_MAX, "300"),
    RAWB("tls-session-caching", NULL, 0, "yes"),
#endif
};

/* The registry: every registered row, sorted by rank then name once the
 * defaults are applied. */
static ConfigDef **registry;
static size_t registryCount, registryCap;
static int coreRegistered, registrySorted, defaultsApplied;

/* Directives Redis 7.0 handles outside its table (include is handled by
 * the loader).  Cairn refuses each, as ignoring it would leave a command
 * reachable, a user's password unset, a module's commands missing; a
 * sentinel line is refused with Redis's own text. */
static const struct {
    const char *name;
    int minArgs, maxArgs; /* counting the directive name */
    const char *refusal;  /* the config error */
} specialDirectives[] = {
    {"rename-command", 3, 3, "rename-command is not supported by Cairn: the command would stay reachable"},
    {"sentinel", 2, INT_MAX, "sentinel directive while not in sentinel mode"},
};
static char *configFile;          /* absolute path of the loaded file, or NULL */
static int loadingConfig;         /* 1 while reading the file and --args */
static char errbuf[512];          /* setters format their errors here */
static int curLineNum;            /* the line being applied, for line kinds */
static const char *curLine;

/* ------------------------------------------------------------------------ */
/* Lookup and field access                                                   */
/* ------------------------------------------------------------------------ */

/* Entry for a name or alias (case-insensitive); *isAlias tells which. */
static ConfigDef *lookupConfig(const char *name, int *isAlias) {
    for (size_t i = 0; i < registryCount; i++) {
        ConfigDef *d = registry[i];
        if (!strcasecmp(d->name, name)) {
            if (isAlias) *isAlias = 0;
            return d;
        }
        if (d->alias && !strcasecmp(d->alias, name)) {
            if (isAlias) *isAlias = 1;
            return d;
        }
    }
    return NULL;
}

/* Append the rows to the registry (sorted later, by sortRegistry). */
static void registerRows(ConfigDef *defs, size_t n) {
    for (size_t i = 0; i < n; i++) {
        ConfigDef *d = &defs[i];
        if (registryCount == registryCap) {
            registryCap = registryCap ? registryCap * 2 : 256;
            registry = xrealloc(registry, sizeof(ConfigDef *) * registryCap);
        }
        registry[registryCount++] = d;
    }
    registrySorted = 0;
}

/* The core's rows come first in the registry whoever registers first. */
static void registerCore(void) {
    if (coreRegistered) return;
    coreRegistered = 1;
    registerRows(coreConfig, CONFIG_COUNT_OF(coreConfig));
}

void configRegister(ConfigDef *defs, size_t n) {
    if (defaultsApplied) {
        fprintf(stderr, "cairn: config directive '%s' registered after the defaults\n", n ? defs[0].name : "?");
        abort();
    }
    registerCore();
    registerRows(defs, n);
}

/* Rank 0 (by name) sorts after the historical sections, before the
 * hidden ones. */
static int effectiveRank(const ConfigDef *d) { return d->rank ? d->rank : 1000; }

static int compareRows(const void *a, const void *b) {
    const ConfigDef *x = *(ConfigDef *const *)a, *y = *(ConfigDef *const *)b;
    int rx = effectiveRank(x), ry = effectiveRank(y);
    if (rx != ry) return rx < ry ? -1 : 1;
    return strcmp(x->name, y->name);
}

static int compareNames(const void *a, const void *b) {
    return strcasecmp(*(const char *const *)a, *(const char *const *)b);
}

/* Sort the registry; a name or alias registered twice aborts start-up
 * (two features claiming one directive is a wiring bug). */
static void sortRegistry(void) {
    if (registrySorted) return;
    qsort(registry, registryCount, sizeof(ConfigDef *), compareRows);
    registrySorted = 1;
    const char **names = xmalloc(sizeof(char *) * (registryCount * 2 + 1));
    size_t n = 0;
    for (size_t i = 0; i < registryCount; i++) {
        names[n++] = registry[i]->name;
        if (registry[i]->alias) names[n++] = registry[i]->alias;
    }
    qsort(names, n, sizeof(char *), compareNames);
    for (size_t i = 1; i < n; i++) {
        if (!strcasecmp(names[i - 1], names[i])) {
            fprintf(stderr, "cairn: config directive '%s' registered twice\n", names[i]);
            abort();
        }
    }
    xfree(names);
}

int configRegisterDynamic(ConfigDef *d) {
    if (lookupConfig(d->name, NULL)) return -1;
    registerRows(d, 1);
    qsort(registry, registryCount, sizeof(ConfigDef *), compareRows);
    registrySorted = 1;
    return 0;
}

void configUnregister(ConfigDef *d) {
    for (size_t i = 0; i < registryCount; i++) {
        if (registry[i] != d) continue;
        memmove(registry + i, registry + i + 1, sizeof(ConfigDef *) * (registryCount - i - 1));
        registryCount--;
        return;
    }
}

static const char *(*dottedLineHandler)(sds *argv, int argc);
void configSetDottedLineHandler(const char *(*fn)(sds *argv, int argc)) { dottedLineHandler = fn; }

int configIsLoading(void) { return loadingConfig; }

char *configErrorBuffer(size_t *size) {
    *size = sizeof(errbuf);
    return errbuf;
}

#define FIELD(d, T) ((T *)(d)->var)
#define CFIELD(d, T) ((const T *)(d)->var)

static void setString(char **slot, const char *v) {
    xfree(*slot);
    *slot = v ? xstrdup(v) : NULL;
}

/* A CF_BINARY field: an sds with v's len bytes (NUL included), or NULL. */
static void setBinary(sds *slot, const char *v, size_t len) {
    sdsFree(*slot);
    *slot = v ? sdsNewLen(v, len) : NULL;
}

/* ------------------------------------------------------------------------ */
/* Value parsing                                                             */
/* ------------------------------------------------------------------------ */

/* Redis's memory values: digits followed by an optional unit (b, k, kb, m,
 * mb, g, gb; case-insensitive; k/m/g are powers of 1000, kb/mb/gb of 1024).
 * No sign, no spaces; "" is 0; too large saturates.  Returns -1 on error. */
static int memToULL(const char *s, unsigned long long *out) {
    const char *u = s;
    while (*u >= '0' && *u <= '9') u++;
    unsigned long long mul;
    if (*u == '\0' || !strcasecmp(u, "b")) mul = 1;
    else if (!strcasecmp(u, "k")) mul = 1000;
    else if (!strcasecmp(u, "kb")) mul = 1024;
    else if (!strcasecmp(u, "m")) mul = 1000ULL * 1000;
    else if (!strcasecmp(u, "mb")) mul = 1024ULL * 1024;
    else if (!strcasecmp(u, "g")) mul = 1000ULL * 1000 * 1000;
    else if (!strcasecmp(u, "gb")) mul = 1024ULL * 1024 * 1024;
    else return -1;
    size_t n = (size_t)(u - s);
    if (n >= 128) return -1;
    unsigned long long v = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned d = (unsigned)(s[i] - '0');
        if (v > (ULLONG_MAX - d) / 10) v = ULLONG_MAX;
        else v = v * 10 + d;
    }
    if (mul != 1 && v > ULLONG_MAX / mul) v = ULLONG_MAX;
    else v *= mul;
    *out = v;
    return 0;
}

static int yesNo(const char *s) {
    if (!strcasecmp(s, "yes")) return 1;
    if (!strcasecmp(s, "no")) return 0;
    return -1;
}

int configYesNo(const char *s) { return yesNo(s); }
int configParseMemory(const char *s, unsigned long long *out) { return memToULL(s, out); }
void configSetString(char **slot, const char *v) { setString(slot, v); }

static const char *boundsError(const ConfigDef *d) {
    snprintf(errbuf, sizeof(errbuf), "argument must be between %lld and %lld inclusive", d->min, d->max);
    return errbuf;
}

/* Parses the value of numeric directive d: a memory value (with a unit)
 * when d is CF_MEMORY, else an integer.  A memory value is taken whole
 * into *ull when unbounded is set (returns 1); otherwise the value must
 * fit d's bounds and lands in *ll (returns 0).  Returns -1 with Redis's
 * text in *err. */
static int parseNumeric(const ConfigDef *d, const char *arg, int unbounded, long long *ll, unsigned long long *ull,
                        const char **err) {
    if (d->flags & CF_MEMORY) {
        if (memToULL(arg, ull) == -1) {
            *err = "argument must be a memory value";
            return -1;
        }
        if (unbounded) return 1;
        if (*ull > (unsigned long long)LLONG_MAX) {
            *err = boundsError(d);
            return -1;
        }
        *ll = (long long)*ull;
    } else if (!stringToLongLong(arg, strlen(arg), ll)) {
        *err = "argument couldn't be parsed into an integer";
        return -1;
    }
    if (*ll < d->min || *ll > d->max) {
        *err = boundsError(d);
        return -1;
    }
    return 0;
}

/* Numeric directives: parse, check bounds, store. */
static int setNumeric(const ConfigDef *d, const char *arg, const char **err) {
    long long ll = 0;
    unsigned long long ull = 0;
    int rc = parseNumeric(d, arg, d->type == CT_ULL, &ll, &ull, err);
    if (rc == -1) return -1;
    if (rc == 1) {
        *FIELD(d, unsigned long long) = ull;
        return 0;
    }
    /* Redis keeps hz within 1..500 whatever was asked. */
    if (d->var == &server.cfg.hz) ll = ll < 1 ? 1 : ll > 500 ? 500 : ll;
    switch (d->type) {
    case CT_INT: *FIELD(d, int) = (int)ll; break;
    case CT_UINT: *FIELD(d, int) = ll > INT_MAX ? INT_MAX : (int)ll; break;
    case CT_LL: *FIELD(d, long long) = ll; break;
    case CT_ULONG: *FIELD(d, unsigned long) = (unsigned long)ll; break;
    case CT_ULL: *FIELD(d, unsigned long long) = (unsigned long long)ll; break;
    default: break;
    }
    return 0;
}

/* The entry of d's enum named arg (case-insensitive), or NULL after
 * setting *err to Redis's list of the allowed words. */
static const ConfigEnum *enumFindOrError(const ConfigDef *d, const char *arg, const char **err) {
    for (const ConfigEnum *e = d->enums; e->name; e++)
        if (!strcasecmp(e->name, arg)) return e;
    size_t off = (size_t)snprintf(errbuf, sizeof(errbuf), "argument(s) must be one of the following: ");
    for (const ConfigEnum *e = d->enums; e->name && off < sizeof(errbuf); e++)
        off += (size_t)snprintf(errbuf + off, sizeof(errbuf) - off, "%s%s", e->name, e[1].name ? ", " : "");
    *err = errbuf;
    return NULL;
}

static int setEnum(const ConfigDef *d, const char *arg, const char **err) {
    const ConfigEnum *e = enumFindOrError(d, arg, err);
    if (!e) return -1;
    *FIELD(d, int) = e->value;
    return 0;
}

const ConfigEnum *configEnumFind(const ConfigDef *d, const char *arg, const char **err) {
    return enumFindOrError(d, arg, err);
}

/* Redis's check of proc-title-template: expanded (with an empty title,
 * as Redis checks it) and trimmed of spaces, it is not empty; every {var}
 * is a known one; "{{" and "}}" stand for braces, a lone '}' for itself. */
static int procTitleTemplateValid(const char *t) {
    static const char *vars[] = {"title", "listen-addr", "server-mode", "port", "tls-port", "unixsocket",
                                 "config-file"};
    int visible = 0;
    for (const char *p = t; *p; p++) {
        if ((p[0] == '{' && p[1] == '{') || (p[0] == '}' && p[1] == '}')) {
            visible = 1;
            p++;
            continue;
        }
        if (*p != '{') {
            if (*p != ' ') visible = 1;
            continue;
        }
        const char *end = strchr(p, '}');
        if (!end) return 0;
        size_t len = (size_t)(end - p - 1), i;
        for (i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
            if (strlen(vars[i]) == len && !memcmp(vars[i], p + 1, len)) break;
        if (i == sizeof(vars) / sizeof(vars[0])) return 0;
        /* title and, standalone, server-mode expand to nothing */
        if (i == 5) visible |= server.cfg.unixsocket && server.cfg.unixsocket[0];
        else if (i == 6) visible |= configFile != NULL;
        else if (i != 0 && i != 2) visible = 1;
        p = end;
    }
    return visible;
}

/* The value of raw directive d as Redis would store and show it, validated
 * by its shape (CF_RAW_BOOL, CF_RAW_INT, enums); into *out (caller owns). */
static int rawNormalize(const ConfigDef *d, const char *arg, sds *out, const char **err) {
    if (d->flags & CF_RAW_BOOL) {
        int b = yesNo(arg);
        if (b == -1) {
            *err = "argument must be 'yes' or 'no'";
            return -1;
        }
        *out = sdsNew(b ? "yes" : "no");
        return 0;
    }
    if (d->flags & CF_RAW_INT) {
        long long ll = 0;
        unsigned long long ull = 0;
        int rc = parseNumeric(d, arg, d->min == 0 && d->max == 0, &ll, &ull, err);
        if (rc == -1) return -1;
        *out = rc == 1 ? sdsCatPrintf(sdsEmpty(), "%llu", ull) : sdsFromLongLong(ll);
        return 0;
    }
    if (d->enums) {
        /* Each word must be one of the enum's (several only for a
         * multi-argument directive such as shutdown-on-sigterm). */
        int n = 0;
        sds *words = (d->flags & CF_MULTI_ARG) ? sdsSplitLen(arg, (ssize_t)strlen(arg), " ", 1, &n) : NULL;
        if (!words) {
            words = xmalloc(sizeof(sds));
            words[0] = sdsNew(arg);
            n = 1;
        }
        sds norm = sdsEmpty();
        int rc = 0;
        for (int i = 0; i < n && rc == 0; i++) {
            const ConfigEnum *e = enumFindOrError(d, words[i], err);
            if (e) norm = sdsCatPrintf(norm, "%s%s", i ? " " : "", e->name);
            else rc = -1;
        }
        if (n == 0) rc = enumFindOrError(d, "", err) ? 0 : -1;
        sdsFreeSplitRes(words, n);
        if (rc == -1) {
            sdsFree(norm);
            return -1;
        }
        *out = norm;
        return 0;
    }
    *out = sdsNew(arg);
    return 0;
}

#ifndef CAIRN_TLS
/* Whether a directive that turns TLS on (tls-port, tls-replication,
 * tls-cluster) is set: Cairn has no TLS, so like a Redis whose TLS cannot
 * be configured it refuses them (CONFIG SET: applyTls; start-up:
 * configLoadFromArgs). */
static int tlsWanted(void) {
    static const char *names[] = {"tls-port", "tls-replication", "tls-cluster"};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        const ConfigDef *d = lookupConfig(names[i], NULL);
        if (d && d->raw && strcmp(d->raw, d->deflt)) return 1;
    }
    return 0;
}

static int applyTls(const char **err) {
    if (!tlsWanted()) return 0;
    serverLog(LL_WARNING, "TLS is not supported by Cairn");
    *err = "Unable to update TLS configuration. Check server logs.";
    return -1;
}

#endif

/* A directive for a feature Cairn lacks (replication, cluster, TLS, ACL
 * files, client eviction...) accepts only the value that leaves the
 * feature off: any other would be silently ignored while the user relies
 * on it.  0 when value is that one, else -1 with *err set. */
static int onlyDefaultOrRefuse(const ConfigDef *d, const char *value, const char **err) {
    if (!(d->flags & CF_ONLY_DEFAULT) || !strcmp(value, d->deflt)) return 0;
    if (!strcmp(d->name, "replicaof") && !strcasecmp(value, "no one")) return 0;
    if (!strcmp(d->name, "activedefrag")) { /* Debian's Redis refuses it the same way */
        *err = "Active defragmentation cannot be enabled: it requires a Redis server compiled with a modified "
               "Jemalloc like the one shipped by default with the Redis source distribution";
        return -1;
    }
    snprintf(errbuf, sizeof(errbuf), "%s is not supported by Cairn: only '%s' is accepted", d->name, d->deflt);
    *err = errbuf;
    return -1;
}

/* Apply argv (the directive's arguments, name excluded) to d's value.  The single
 * entry point for defaults, file lines, --args and CONFIG SET. */
static int configSetArgs(ConfigDef *d, sds *argv, int argc, const char **err) {
    if (d->type == CT_SPECIAL) return d->set(d, argv, argc, err);
    if (d->type == CT_RAW && (d->flags & CF_MULTI_ARG)) {
        int want = !strcmp(d->name, "replicaof") ? 2 : -1;
        if (want != -1 && argc != want && argc != 0) {
            *err = "wrong number of arguments";
            return -1;
        }
        sds joined = sdsJoin((char **)argv, argc, " ");
        if (d->enums) {
            sds norm;
            int rc = rawNormalize(d, joined, &norm, err);
            sdsFree(joined);
            if (rc == -1) return -1;
            joined = norm;
        }
        if (onlyDefaultOrRefuse(d, joined, err) == -1) {
            sdsFree(joined);
            return -1;
        }
        sdsFree(d->raw);
        d->raw = joined;
        return 0;
    }
    if (argc != 1) {
        *err = "wrong number of arguments";
        return -1;
    }
    const char *arg = argv[0];
    switch (d->type) {
    case CT_BOOL: {
        int b = yesNo(arg);
        if (b == -1) {
            *err = "argument must be 'yes' or 'no'";
            return -1;
        }
        *FIELD(d, int) = b;
        return 0;
    }
    case CT_INT:
    case CT_UINT:
    case CT_LL:
    case CT_ULONG:
    case CT_ULL: return setNumeric(d, arg, err);
    case CT_ENUM: {
        /* A valid word first (Redis's error for a bad one), then the
         * feature's off value only, for a setting Cairn does not act on. */
        int old = *FIELD(d, int);
        if (setEnum(d, arg, err) == -1) return -1;
        const char *word = arg;
        for (const ConfigEnum *e = d->enums; e->name; e++)
            if (e->value == *FIELD(d, int)) word = e->name;
        if (onlyDefaultOrRefuse(d, word, err) == -1) {
            *FIELD(d, int) = old;
            return -1;
        }
        return 0;
    }
    case CT_STRING:
        if ((d->flags & CF_BASENAME) && strpbrk(arg, "/\\")) {
            snprintf(errbuf, sizeof(errbuf), "%s can't be a path, just a %s", d->name,
                     strcmp(d->name, "appenddirname") ? "filename" : "dirname");
            *err = errbuf;
            return -1;
        }
        if (d->var == &server.cfg.procTitleTemplate && !procTitleTemplateValid(arg)) {
            *err = "template format is invalid or contains unknown variables";
            return -1;
        }
        if (d->flags & CF_BINARY) {
            /* Every byte kept: a password cut at a NUL would let the
             * prefix authenticate. */
            size_t len = sdsLen(argv[0]);
            setBinary(FIELD(d, sds), (d->flags & CF_EMPTY_NULL) && len == 0 ? NULL : arg, len);
            return 0;
        }
        /* Other strings end at a NUL byte, as Redis's C-string configs do. */
        setString(FIELD(d, char *), (d->flags & CF_EMPTY_NULL) && arg[0] == '\0' ? NULL : arg);
        return 0;
    case CT_RAW: {
        sds v;
        if (rawNormalize(d, arg, &v, err) == -1) return -1;
        if (onlyDefaultOrRefuse(d, v, err) == -1) {
            sdsFree(v);
            return -1;
        }
        sdsFree(d->raw);
        d->raw = v;
        return 0;
    }
    default: return -1;
    }
}

/* The value as CONFIG GET replies it.  Caller owns the result. */
static sds configGetValue(const ConfigDef *d) {
    switch (d->type) {
    case CT_BOOL: return sdsNew(*CFIELD(d, int) ? "yes" : "no");
    case CT_INT:
    case CT_UINT: return sdsFromLongLong(*CFIELD(d, int));
    case CT_LL: return sdsFromLongLong(*CFIELD(d, long long));
    case CT_ULONG: return sdsCatPrintf(sdsEmpty(), "%lu", *CFIELD(d, unsigned long));
    case CT_ULL: return sdsCatPrintf(sdsEmpty(), "%llu", *CFIELD(d, unsigned long long));
    case CT_ENUM:
        for (const ConfigEnum *e = d->enums; e->name; e++)
            if (e->value == *CFIELD(d, int)) return sdsNew(e->name);
        return sdsEmpty();
    case CT_STRING: {
        if (d->flags & CF_BINARY) {
            const sds b = *CFIELD(d, sds);
            return b ? sdsDup(b) : sdsEmpty();
        }
        const char *s = *CFIELD(d, char *);
        return sdsNew(s ? s : "");
    }
    case CT_SPECIAL: return d->get(d);
    case CT_RAW: return d->raw ? sdsDup(d->raw) : sdsEmpty();
    }
    return sdsEmpty();
}

/* ------------------------------------------------------------------------ */
/* Special directives                                                        */
/* ------------------------------------------------------------------------ */

static int setBind(ConfigDef *d, sds *argv, int argc, const char **err) {
    ServerConfig *cfg = &server.cfg;
    /* CONFIG SET bind "" and `--bind` alone mean "no addresses". */
    if (argc == 1 && argv[0][0] == '\0') argc = 0;
    if (argc > CONFIG_MAX_BIND) {
        *err = "Too many bind addresses specified.";
        return -1;
    }
    for (int i = 0; i < cfg->bindCount; i++) xfree(cfg->bind[i]);
    for (int i = 0; i < argc; i++) cfg->bind[i] = xstrdup(argv[i]);
    cfg->bindCount = argc;
    return 0;
}

static sds getBind(const ConfigDef *d) {
    return sdsJoin((char **)server.cfg.bind, server.cfg.bindCount, " ");
}

static int obufClass(const char *name) {
    if (!strcasecmp(name, "normal")) return CLIENT_TYPE_NORMAL;
    if (!strcasecmp(name, "slave") || !strcasecmp(name, "replica")) return CLIENT_TYPE_REPLICA;
    if (!strcasecmp(name, "pubsub")) return CLIENT_TYPE_PUBSUB;
    return -1;
}

static int setObufLimits(ConfigDef *d, sds *argv, int argc, const char **err) {
    ServerConfig *cfg = &server.cfg;
    if (argc == 0 && !loadingConfig) return 0; /* CONFIG SET to "": no change, as on Redis */
    if (argc == 0 || argc % 4 != 0) {
        *err = "Wrong number of arguments in buffer limit configuration.";
        return -1;
    }
    ObufLimit next[CLIENT_TYPE_COUNT];
    memcpy(next, cfg->obufLimits, sizeof(next));
    for (int i = 0; i < argc; i += 4) {
        int cls = obufClass(argv[i]);
        if (cls == -1) {
            *err = "Invalid client class specified in buffer limit configuration.";
            return -1;
        }
        unsigned long long hard, soft;
        long long secs;
        if (memToULL(argv[i + 1], &hard) == -1 || memToULL(argv[i + 2], &soft) == -1 ||
            !stringToLongLong(argv[i + 3], sdsLen(argv[i + 3]), &secs) || secs < 0) {
            *err = "Error in hard, soft or soft_seconds setting in buffer limit configuration.";
            return -1;
        }
        next[cls].hard = hard;
        next[cls].soft = soft;
        next[cls].softSeconds = secs;
    }
    memcpy(cfg->obufLimits, next, sizeof(next));
    return 0;
}

static const char *obufClassNames[CLIENT_TYPE_COUNT] = {"normal", "slave", "pubsub"};

static sds obufClassText(sds s, const ServerConfig *cfg, int cls) {
    const ObufLimit *l = &cfg->obufLimits[cls];
    return sdsCatPrintf(s, "%s %llu %llu %lld", obufClassNames[cls], l->hard, l->soft, l->softSeconds);
}

static sds memoryText(unsigned long long v);

static sds getObufLimits(const ConfigDef *d) {
    const ServerConfig *cfg = &server.cfg;
    sds s = sdsEmpty();
    static const int order[] = {CLIENT_TYPE_NORMAL, CLIENT_TYPE_REPLICA, CLIENT_TYPE_PUBSUB};
    for (int i = 0; i < 3; i++) {
        if (i) s = sdsCat(s, " ");
        s = obufClassText(s, cfg, order[i]);
    }
    return s;
}

/* One line per class that differs from its default, sizes with units, as
 * Redis writes them. */
static sds *rewriteObufLimits(const ConfigDef *d, int *count) {
    const ServerConfig *cfg = &server.cfg;
    static const ObufLimit defaults[CLIENT_TYPE_COUNT] = {
        [CLIENT_TYPE_NORMAL] = {0, 0, 0},
        [CLIENT_TYPE_REPLICA] = {256ULL * 1024 * 1024, 64ULL * 1024 * 1024, 60},
        [CLIENT_TYPE_PUBSUB] = {32ULL * 1024 * 1024, 8ULL * 1024 * 1024, 60},
    };
    static const int order[] = {CLIENT_TYPE_NORMAL, CLIENT_TYPE_REPLICA, CLIENT_TYPE_PUBSUB};
    sds *out = xmalloc(sizeof(sds) * 3);
    int n = 0;
    for (int i = 0; i < 3; i++) {
        const ObufLimit *l = &cfg->obufLimits[order[i]], *def = &defaults[order[i]];
        if (l->hard == def->hard && l->soft == def->soft && l->softSeconds == def->softSeconds) continue;
        sds hard = memoryText(l->hard), soft = memoryText(l->soft);
        out[n++] = sdsCatPrintf(sdsEmpty(), "client-output-buffer-limit %s %s %s %lld", obufClassNames[order[i]],
                                hard, soft, l->softSeconds);
        sdsFree(hard);
        sdsFree(soft);
    }
    *count = n;
    return out;
}

void configFormatDouble(char *buf, double d) {
    int len = snprintf(buf, 128, "%f", d);
    if (len <= 0 || len >= 128 || !strchr(buf, '.')) return;
    while (buf[len - 1] == '0') buf[--len] = '\0';
    if (buf[len - 1] == '.') buf[--len] = '\0';
}

static int setUnixsocketperm(ConfigDef *d, sds *argv, int argc, const char **err) {
    if (argc != 1) {
        *err = "wrong number of arguments";
        return -1;
    }
    char *end;
    errno = 0;
    long v = strtol(argv[0], &end, 8);
    if (argv[0][0] == '\0' || *end != '\0' || errno || v < 0 || v > 0777) {
        *err = "argument couldn't be parsed as an octal number";
        return -1;
    }
    server.cfg.unixsocketperm = (mode_t)v;
    return 0;
}

/* A CPU list into *set; -1 when it does not parse. */
static int parseCpulist(const char *s, cpu_set_t *set) {
    CPU_ZERO(set);
    while (1) {
        char *end;
        if (!isdigit((unsigned char)*s)) return -1;
        long a = strtol(s, &end, 10), b = a, step = 1;
        s = end;
        if (*s == '-') {
            if (!isdigit((unsigned char)*++s)) return -1;
            b = strtol(s, &end, 10);
            s = end;
            if (*s == ':') {
                if (!isdigit((unsigned char)*++s)) return -1;
                step = strtol(s, &end, 10);
                s = end;
            }
        }
        if (a > b || step < 1 || b >= CPU_SETSIZE) return -1;
        for (long cpu = a; cpu <= b; cpu += step) CPU_SET((int)cpu, set);
        if (*s == '\0') return 0;
        if (*s++ != ',') return -1;
    }
}

void configSetCpuAffinity(const char *cpulist) {
    cpu_set_t set;
    if (!cpulist || !*cpulist || parseCpulist(cpulist, &set) == -1) return;
    sched_setaffinity(0, sizeof(set), &set); /* refused (no such CPU): unchanged, as Redis */
}

void configApplyMemorySettings(void) {
    xmallocSetBackgroundThread(server.cfg.jemallocBgThread);
    if (!server.cfg.disableThp) return;
    FILE *fp = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
    if (!fp) return;
    char buf[256] = {0};
    int always = fgets(buf, sizeof(buf), fp) && strstr(buf, "[always]");
    fclose(fp);
    if (always) prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0);
}

void configApplyCpuLists(void) {
    static cpu_set_t bioSet;
    configSetCpuAffinity(server.cfg.serverCpulist);
    if (server.cfg.bioCpulist && parseCpulist(server.cfg.bioCpulist, &bioSet) == 0) {
        /* Only if the kernel takes it: a thread would not start on a set
         * it refuses. */
        cpu_set_t mine;
        if (sched_getaffinity(0, sizeof(mine), &mine) == 0 && sched_setaffinity(0, sizeof(bioSet), &bioSet) == 0) {
            sched_setaffinity(0, sizeof(mine), &mine);
            detachedThreadCpuset = &bioSet;
        }
    }
}

/* oom-score-adj-values: three integers (master, replica, background
 * child), each in [-2000, 2000]; strtol's forms ("+1", "01") accepted. */
static int setOomValues(ConfigDef *d, sds *argv, int argc, const char **err) {
    (void)d;
    if (argc != 3) {
        *err = "wrong number of arguments";
        return -1;
    }
    int v[3];
    for (int i = 0; i < 3; i++) {
        char *end;
        errno = 0;
        long x = strtol(argv[i], &end, 10);
        if (errno || end == argv[i] || *end || x < -2000 || x > 2000) {
            *err = "Invalid oom-score-adj-values, elements must be between -2000 and 2000.";
            return -1;
        }
        v[i] = (int)x;
    }
    /* An unprivileged process may lower its score only back to where it
     * was: the classes are expected in ascending order.  Kept anyway. */
    if (v[CONFIG_OOM_REPLICA] < v[CONFIG_OOM_MASTER] || v[CONFIG_OOM_BGCHILD] < v[CONFIG_OOM_REPLICA])
        serverLog(LL_WARNING, "The oom-score-adj-values configuration may not work for non-privileged processes! "
                              "Please consult the documentation.");
    memcpy(server.cfg.oomScoreAdjValues, v, sizeof(v));
    return 0;
}

static sds getOomValues(const ConfigDef *d) {
    (void)d;
    const int *v = server.cfg.oomScoreAdjValues;
    return sdsCatPrintf(sdsEmpty(), "%d %d %d", v[0], v[1], v[2]);
}

/* The score before Cairn first changed it, and whether it did. */
static int oomAdjusted, oomBaseScore;

int configApplyOomScoreAdj(int processClass) {
    if (processClass == CONFIG_OOM_BY_ROLE)
        processClass = server.isReplica || server.cfg.replicaof ? CONFIG_OOM_REPLICA : CONFIG_OOM_MASTER;
    if (processClass < 0 || processClass > CONFIG_OOM_BGCHILD) return -1;
    int mode = server.cfg.oomScoreAdj, val;
    char buf[64];
    if (mode != OOM_SCORE_ADJ_NO) {
        if (!oomAdjusted) {
            int fd = open("/proc/self/oom_score_adj", O_RDONLY | O_CLOEXEC);
            ssize_t n = fd == -1 ? -1 : read(fd, buf, sizeof(buf) - 1);
            if (n < 0) {
                serverLog(LL_WARNING, "Unable to read oom_score_adj: %s", strerror(errno));
                if (fd != -1) close(fd);
                return -1;
            }
            close(fd);
            buf[n] = '\0';
            oomBaseScore = atoi(buf);
            oomAdjusted = 1;
        }
        long v = server.cfg.oomScoreAdjValues[processClass];
        if (mode == OOM_SCORE_ADJ_RELATIVE) v += oomBaseScore;
        val = (int)(v < -1000 ? -1000 : v > 1000 ? 1000 : v);
    } else if (oomAdjusted) {
        oomAdjusted = 0;
        val = oomBaseScore;
    } else {
        return 0;
    }
    int len = snprintf(buf, sizeof(buf), "%d\n", val);
    int fd = open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);
    if (fd == -1 || write(fd, buf, (size_t)len) != len) {
        serverLog(LL_WARNING, "Unable to write oom_score_adj: %s", strerror(errno));
        if (fd != -1) close(fd);
        return -1;
    }
    close(fd);
    return 0;
}

static sds getUnixsocketperm(const ConfigDef *d) {
    return sdsCatPrintf(sdsEmpty(), "%o", (unsigned)server.cfg.unixsocketperm);
}

/* `dir` changes the working directory at once, as Redis does, so later
 * relative paths in the same file resolve against it.  The default is not
 * applied with chdir (it is "./"). */
static int setDir(ConfigDef *d, sds *argv, int argc, const char **err) {
    if (argc != 1) {
        *err = "wrong number of arguments";
        return -1;
    }
    if (chdir(argv[0]) == -1) {
        snprintf(errbuf, sizeof(errbuf), "%s", strerror(errno));
        *err = errbuf;
        return -1;
    }
    setString(&server.cfg.dir, argv[0]);
    return 0;
}

static sds getDir(const ConfigDef *d) {
    char buf[4096];
    if (getcwd(buf, sizeof(buf)) == NULL) return sdsNew(server.cfg.dir ? server.cfg.dir : "");
    return sdsNew(buf);
}

/* ------------------------------------------------------------------------ */
/* Defaults                                                                  */
/* ------------------------------------------------------------------------ */

/* Apply a directive's default text; the table's defaults are known good. */
static void applyDefault(ConfigDef *d) {
    int argc = 0;
    sds *argv;
    if (d->flags & CF_MULTI_ARG) {
        argv = sdsSplitArgs(d->deflt, &argc);
    } else {
        argv = xmalloc(sizeof(sds));
        argv[0] = sdsNew(d->deflt);
        argc = 1;
    }
    const char *err = NULL;
    if (d->flags & CF_EMPTY_ARG) {
        int n = argc ? argc : 1;
        if (argc == 0) argv[0] = sdsEmpty();
        configSetArgs(d, argv, n, &err);
        sdsFreeSplitRes(argv, n);
        return;
    }
    if (d->set == setDir) {
        setString(&server.cfg.dir, d->deflt); /* no chdir for the default */
    } else if (configSetArgs(d, argv, argc, &err) == -1) {
        fprintf(stderr, "cairn: bad built-in default for '%s': %s\n", d->name, err);
        abort();
    }
    sdsFreeSplitRes(argv, argc);
}

void configInitDefaults(void) {
    registerCore();
    sortRegistry();
    defaultsApplied = 1;
    for (size_t i = 0; i < registryCount; i++) {
        ConfigDef *d = registry[i];
        applyDefault(d);
        /* What CONFIG REWRITE compares with to leave a default out. */
        if (d->type != CT_RAW && !(d->flags & CF_ALWAYS_REWRITE)) d->defaultValue = configGetValue(d);
    }
}

int configSetDirective(const char *name, sds *argv, int argc, const char **err) {
    ConfigDef *d = lookupConfig(name, NULL);
    if (!d) {
        *err = "Bad directive or wrong number of arguments";
        return -1;
    }
    if (argc != 1 && !(d->flags & CF_MULTI_ARG)) {
        *err = "wrong number of arguments";
        return -1;
    }
    return configSetArgs(d, argv, argc, err);
}

const char *configFilePath(void) {
    return configFile;
}

/* ------------------------------------------------------------------------ */
/* Loading: file, stdin, --args                                              */
/* ------------------------------------------------------------------------ */

static _Noreturn void fatalConfigError(int linenum, const char *line, const char *err) {
    fprintf(stderr, "\n*** FATAL CONFIG FILE ERROR (Redis %s) ***\n", REDIS_COMPAT_VERSION);
    if (line) {
        fprintf(stderr, "Reading the configuration file, at line %d\n", linenum);
        fprintf(stderr, ">>> '%s'\n", line);
    }
    fprintf(stderr, "%s\n", err);
    exit(1);
}

void configFatalLineError(int linenum, const char *line, const char *err) { fatalConfigError(linenum, line, err); }

/* Read a whole file into a new sds; NULL (errno set) if it cannot be opened. */
static sds readWholeFile(FILE *fp) {
    sds s = sdsEmpty();
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof(buf), fp)) > 0) s = sdsCatLen(s, buf, n);
    return s;
}

static sds readConfigFile(const char *path) {
    FILE *fp = fopen(path, "r");
    if (!fp) {
        serverLog(LL_WARNING, "Fatal error, can't open config file '%s': %s", path, strerror(errno));
        exit(1);
    }
    sds s = readWholeFile(fp);
    fclose(fp);
    return s;
}

static void loadConfigFromString(const char *text);

/* The text an `include` brings in, its path relative to the working
 * directory of the moment (a `dir` line before it counts), as in Redis.
 * A pattern with * ? or [ includes every match, sorted, as one text, and
 * nothing when none matches (an empty conf.d); a plain path must open. */
static sds readIncluded(const char *path) {
    if (!strpbrk(path, "*?[")) return readConfigFile(path);
    sds all = sdsEmpty();
    glob_t g;
    if (glob(path, 0, NULL, &g) != 0) return all;
    for (size_t i = 0; i < g.gl_pathc; i++) {
        sds one = readConfigFile(g.gl_pathv[i]);
        all = sdsCatLen(all, one, sdsLen(one));
        sdsFree(one);
    }
    globfree(&g);
    return all;
}

/* Split a CONFIG SET value into the arguments of a directive: multi-arg
 * directives split on single spaces (as Redis does, so "a  b" has an empty
 * middle argument), others take the value whole. */
static sds *splitSetValue(const ConfigDef *d, const sds value, int *argc) {
    if (d->flags & CF_MULTI_ARG) {
        if (sdsLen(value) == 0 && !(d->flags & CF_EMPTY_ARG)) {
            *argc = 0;
            return xmalloc(sizeof(sds));
        }
        if (sdsLen(value) == 0) {
            sds *v = xmalloc(sizeof(sds));
            v[0] = sdsEmpty();
            *argc = 1;
            return v;
        }
        return sdsSplitLen(value, (ssize_t)sdsLen(value), " ", 1, argc);
    }
    sds *v = xmalloc(sizeof(sds));
    v[0] = sdsDup(value);
    *argc = 1;
    return v;
}

/* Set d from text, as CONFIG SET or a rollback does. */
static int setFromText(ConfigDef *d, const sds value, const char **err) {
    int argc = 0;
    sds *argv = splitSetValue(d, value, &argc);
    int rc = configSetArgs(d, argv, argc, err);
    sdsFreeSplitRes(argv, argc);
    return rc;
}


/* Apply one parsed line.  Returns NULL or the error text. */
static const char *applyLine(sds *argv, int argc) {
    const char *err = NULL;
    if (!strcasecmp(argv[0], "include")) {
        if (argc != 2) return "Bad directive or wrong number of arguments";
        sds text = readIncluded(argv[1]);
        loadConfigFromString(text);
        sdsFree(text);
        return NULL;
    }
    for (int k = 0; k < lineKindCount; k++)
        if (!strcasecmp(argv[0], lineKinds[k]->name)) return lineKinds[k]->parse(argv, argc, curLineNum, curLine);
    for (size_t i = 0; i < sizeof(specialDirectives) / sizeof(specialDirectives[0]); i++) {
        if (strcasecmp(argv[0], specialDirectives[i].name)) continue;
        if (argc < specialDirectives[i].minArgs || argc > specialDirectives[i].maxArgs)
            return "Bad directive or wrong number of arguments";
        return specialDirectives[i].refusal;
    }
    ConfigDef *d = lookupConfig(argv[0], NULL);
    if (!d && dottedLineHandler && strchr(argv[0], '.')) return dottedLineHandler(argv, argc);
    if (!d) {
        /* Names Redis 7.0 still accepts in a file, with one argument, and
         * ignores (its encodings and script replication changed). */
        static const char *deprecated[] = {"list-max-ziplist-entries", "list-max-ziplist-value",
                                           "lua-replicate-commands"};
        for (size_t i = 0; i < sizeof(deprecated) / sizeof(deprecated[0]); i++)
            if (argc == 2 && !strcmp(argv[0], deprecated[i])) return NULL;
        return "Bad directive or wrong number of arguments";
    }
    /* Only multi-argument directives may take other than one argument;
     * `bind` and `save` may also take none (`--save` alone, `--bind`). */
    if (!(d->flags & CF_MULTI_ARG) && argc != 2) return "wrong number of arguments";
    if ((d->flags & CF_EMPTY_ARG) && argc == 1) {
        sds empty = sdsEmpty();
        int rc = configSetArgs(d, &empty, 1, &err);
        sdsFree(empty);
        return rc == -1 ? err : NULL;
    }
    int rc;
    if ((d->flags & CF_MULTI_ARG) && argc == 2 && sdsLen(argv[1])) {
        /* `save "900 1 300 10"`: one argument holding the whole list. */
        rc = setFromText(d, argv[1], &err);
    } else {
        rc = configSetArgs(d, argv + 1, argc - 1, &err);
    }
    if (rc == -1) return err;
    if (d->type == CT_RAW) d->seenInFile = 1;
    return NULL;
}

/* Parse config text line by line; exits with Redis's report on an error. */
static void loadConfigFromString(const char *text) {
    int nlines = 0;
    sds *lines = sdsSplitLen(text, (ssize_t)strlen(text), "\n", 1, &nlines);
    for (int i = 0; i < nlines; i++) {
        lines[i] = sdsTrim(lines[i], " \t\r\n");
        if (lines[i][0] == '#' || lines[i][0] == '\0') continue;
        int argc = 0;
        sds *argv = sdsSplitArgs(lines[i], &argc);
        if (argv == NULL) fatalConfigError(i + 1, lines[i], "Unbalanced quotes in configuration line");
        if (argc == 0) {
            sdsFreeSplitRes(argv, argc);
            continue;
        }
        sdsToLower(argv[0]);
        curLineNum = i + 1;
        curLine = lines[i];
        const char *err = applyLine(argv, argc);
        sdsFreeSplitRes(argv, argc);
        if (err) fatalConfigError(i + 1, lines[i], err);
    }
    sdsFreeSplitRes(lines, nlines);
}

/* Turn `--name v1 v2 --other v` into config lines, as redis-server does:
 * each --name starts a line; other arguments are appended quoted.  An
 * argument starting with "--" right after a bare --name is taken as its
 * value; `--save` with no value means `save ""`. */
static sds argsToConfig(int argc, char **argv, int start) {
    sds options = sdsEmpty();
    int lastHadValue = 1; /* whether the last --name already got a value */
    for (int j = start; j < argc; j++) {
        const char *a = argv[j];
        if (a[0] == '-' && a[1] == '\0' && (j == 1 || j == argc - 1)) continue; /* stdin marker */
        if (lastHadValue && a[0] == '-' && a[1] == '-') {
            if (sdsLen(options)) options = sdsCat(options, "\n");
            options = sdsCat(options, a + 2);
            options = sdsCat(options, " ");
            int n = 0;
            sds *parts = sdsSplitArgs(a, &n);
            if (parts && n == 1) {
                lastHadValue = 0;
                int nextIsName = j != argc - 1 && argv[j + 1][0] == '-' && argv[j + 1][1] == '-';
                if (!strcasecmp(a, "--save") && (nextIsName || j == argc - 1)) {
                    options = sdsCat(options, "\"\"");
                    lastHadValue = 1;
                }
            } else {
                lastHadValue = 1;
            }
            if (parts) sdsFreeSplitRes(parts, n);
        } else {
            options = sdsCatRepr(options, a, strlen(a));
            options = sdsCat(options, " ");
            lastHadValue = 1;
        }
    }
    return options;
}

static int argsWantStdin(int argc, char **argv) {
    for (int j = 1; j < argc; j++)
        if (argv[j][0] == '-' && argv[j][1] == '\0' && (j == 1 || j == argc - 1)) return 1;
    return 0;
}

/* One log line per directive the configuration used that Cairn ignores. */
static void logUnsupported(void) {
    for (size_t i = 0; i < registryCount; i++) {
        ConfigDef *d = registry[i];
        if (d->type == CT_RAW && d->seenInFile)
            serverLog(LL_WARNING, "Config directive '%s' is not supported by Cairn, ignored", d->name);
        d->seenInFile = 0;
    }
}

void configLoadFromArgs(int argc, char **argv) {
    int j = 1;
    const char *file = NULL;
    if (argc >= 2 && argv[1][0] != '-') {
        file = argv[1];
        j = 2;
    }
    int fromStdin = argsWantStdin(argc, argv);
    sds options = argsToConfig(argc, argv, j);
    if (!file && !fromStdin && sdsLen(options) == 0) {
        sdsFree(options);
        return;
    }
    sds text = sdsEmpty();
    if (file) {
        char *abs = realpath(file, NULL);
        xfree(configFile);
        configFile = xstrdup(abs ? abs : file);
        free(abs);
        sds body = readConfigFile(file);
        text = sdsCatSds(text, body);
        sdsFree(body);
    }
    if (fromStdin) {
        serverLog(LL_WARNING, "Reading config from stdin");
        sds body = readWholeFile(stdin);
        text = sdsCatSds(text, body);
        sdsFree(body);
    }
    if (sdsLen(options)) {
        text = sdsCat(text, "\n");
        text = sdsCatSds(text, options);
    }
    loadingConfig = 1;
    loadConfigFromString(text);
    loadingConfig = 0;
#ifndef CAIRN_TLS
    if (tlsWanted()) {
        serverLog(LL_WARNING, "TLS is not supported by Cairn");
        serverLog(LL_WARNING, "Failed to configure TLS. Check logs for more info.");
        exit(1);
    }
#endif
    logUnsupported();
    sdsFree(text);
    sdsFree(options);
}


/* ------------------------------------------------------------------------ */
/* CONFIG GET                                                                */
/* ------------------------------------------------------------------------ */

static int hasGlobChars(const char *p) {
    return strpbrk(p, "*?[") != NULL;
}

/* Collect (name, value) pairs matching the patterns, each name once.  An
 * exact (glob-free) pattern reports the name as the client spelled it,
 * and also finds hidden directives; globs match names and aliases. */
void configGetCommand(Client *c) {
    int cap = 64, n = 0;
    sds *names = xmalloc(sizeof(sds) * (size_t)cap);
    sds *values = xmalloc(sizeof(sds) * (size_t)cap);
    for (int i = 2; i < c->argc; i++) {
        const char *pat = c->argv[i];
        for (size_t k = 0; k < registryCount; k++) {
            ConfigDef *d = registry[k];
            const char *cands[2] = {d->name, d->alias};
            for (int a = 0; a < 2; a++) {
                const char *name = cands[a];
                if (!name) continue;
                const char *shown;
                if (hasGlobChars(pat)) {
                    if (d->flags & CF_HIDDEN) continue;
                    if (!globMatch(pat, strlen(pat), name, strlen(name), 1)) continue;
                    shown = name;
                } else {
                    if (strcasecmp(pat, name)) continue;
                    shown = pat;
                }
                int dup = 0;
                for (int j = 0; j < n && !dup; j++) dup = !strcmp(names[j], shown);
                if (dup) continue;
                if (n == cap) {
                    cap *= 2;
                    names = xrealloc(names, sizeof(sds) * (size_t)cap);
                    values = xrealloc(values, sizeof(sds) * (size_t)cap);
                }
                names[n] = sdsNew(shown);
                values[n] = configGetValue(d);
                n++;
            }
        }
    }
    replyMapLen(c, n);
    for (int j = 0; j < n; j++) {
        replyBulkSds(c, names[j]);
        replyBulkSds(c, values[j]);
        sdsFree(names[j]);
        sdsFree(values[j]);
    }
    xfree(names);
    xfree(values);
}

/* ------------------------------------------------------------------------ */
/* CONFIG SET                                                                */
/* ------------------------------------------------------------------------ */

static int protectedConfigAllowed(const Client *c) {
    int mode = server.cfg.enableProtectedConfigs;
    if (mode == DEBUGCMD_YES) return 1;
    if (mode == DEBUGCMD_LOCAL) return (c->flags & CLIENT_UNIX_SOCKET) || !strncmp(c->addr, "127.0.0.1:", 10) ||
                                        !strncmp(c->addr, "::1:", 4) || !strncmp(c->addr, "[::1]:", 6);
    return 0;
}

void configSetCommand(Client *c) {
    if (c->argc % 2 != 0) {
        replyError(c, ERR_SYNTAX);
        return;
    }
    int n = (c->argc - 2) / 2;
    ConfigDef **defs = xcalloc(sizeof(ConfigDef *) * (size_t)n);
    sds *old = xcalloc(sizeof(sds) * (size_t)n);
    char *changed = xcalloc((size_t)n);
    const char *err = NULL;
    int failed = -1, set = 0;
    const char *applyFailName = NULL;

    /* Check every name before changing anything. */
    for (int i = 0; i < n && failed == -1; i++) {
        sds name = c->argv[2 + 2 * i];
        defs[i] = lookupConfig(name, NULL);
        if (!defs[i]) {
            replyErrorFormat(c, "ERR Unknown option or number of arguments for CONFIG SET - '%s'", name);
            goto cleanup;
        }
        if (defs[i]->flags & CF_IMMUTABLE) err = "can't set immutable config";
        else if ((defs[i]->flags & CF_PROTECTED) && !protectedConfigAllowed(c)) err = "can't set protected config";
        for (int j = 0; j < i && !err; j++)
            if (!strcasecmp(c->argv[2 + 2 * j], name)) err = "duplicate parameter";
        if (err) failed = i;
    }
    int namesOk = failed == -1;
    /* Set them all, remembering the old values for a rollback.  A value
     * already in force changes nothing: its apply hook does not run (a
     * port set to itself is not bound again). */
    for (int i = 0; i < n && failed == -1; i++) {
        old[i] = configGetValue(defs[i]);
        if (setFromText(defs[i], c->argv[3 + 2 * i], &err) == -1) {
            failed = i;
        } else {
            set = i + 1;
            sds now = configGetValue(defs[i]);
            changed[i] = sdsLen(now) != sdsLen(old[i]) || memcmp(now, old[i], sdsLen(now)) != 0;
            sdsFree(now);
        }
    }
    /* Run each distinct apply hook of a changed value once. */
    for (int i = 0; i < n && failed == -1; i++) {
        if (defs[i]->applyDef && changed[i]) {
            int seen = 0;
            for (int j = 0; j < i && !seen; j++)
                seen = changed[j] && defs[j]->applyDef == defs[i]->applyDef && defs[j]->applyKey == defs[i]->applyKey;
            if (!seen && defs[i]->applyDef(defs[i], &err) == -1) {
                failed = i;
                applyFailName = defs[i]->applyName;
            }
            continue;
        }
        if (!defs[i]->apply || !changed[i]) continue;
        int seen = 0;
        for (int j = 0; j < i && !seen; j++) seen = changed[j] && defs[j]->apply == defs[i]->apply;
        if (!seen && defs[i]->apply(&err) == -1) {
            failed = i;
            serverLog(LL_WARNING, "Failed applying new configuration. Possibly related to new %s setting. Restoring "
                                  "previous settings.", defs[i]->name);
        }
    }
    if (failed == -1) {
        if (serverEventHook) { /* a module subscribed: the names set, as Redis gives them */
            const char **names = xmalloc(sizeof(char *) * (size_t)(n ? n : 1));
            for (int i = 0; i < n; i++) /* the alias when the alias was given */
                names[i] = defs[i]->alias && !strcasecmp(c->argv[2 + 2 * i], defs[i]->alias) ? defs[i]->alias
                                                                                              : defs[i]->name;
            serverFireEvent(SERVER_EVENT_CONFIG, 0, (void *)names, n, 0);
            xfree(names);
        }
        replyOk(c);
        goto cleanup;
    }
    /* Roll back what was set, and let the hooks see the old values. */
    int hooked = 0;
    for (int i = 0; i < set; i++) {
        const char *ignored;
        setFromText(defs[i], old[i], &ignored);
        hooked |= (defs[i]->apply != NULL || defs[i]->applyDef != NULL) && changed[i];
    }
    if (hooked) {
        for (int i = 0; i < set; i++) {
            const char *ignored;
            if (defs[i]->apply && changed[i]) defs[i]->apply(&ignored);
            if (!defs[i]->applyDef || !changed[i]) continue;
            int seen = 0;
            for (int j = 0; j < i && !seen; j++)
                seen = changed[j] && defs[j]->applyDef == defs[i]->applyDef && defs[j]->applyKey == defs[i]->applyKey;
            if (!seen) defs[i]->applyDef(defs[i], &ignored);
        }
    }
    /* Redis names a value it could not set or apply by the directive's
     * name (the alias when one was given) in lower case; a refused name
     * as it was given. */
    sds named = sdsNew(applyFailName ? applyFailName : c->argv[2 + 2 * failed]);
    if (namesOk) sdsToLower(named);
    replyErrorFormat(c, "ERR CONFIG SET failed (possibly related to argument '%s') - %s", named, err);
    sdsFree(named);
cleanup:
    for (int i = 0; i < n; i++) sdsFree(old[i]);
    xfree(changed);
    xfree(old);
    xfree(defs);
}

/* ------------------------------------------------------------------------ */
/* CONFIG RESETSTAT / HELP                                                   */
/* ------------------------------------------------------------------------ */

void configResetStatCommand(Client *c) {
    serverResetStats();
    lazyfreeResetStats(); /* lazyfreed_objects, as Redis 7.0 resets it */
    replyOk(c);
}

void configHelpCommand(Client *c) {
    static const char *help[] = {
        "GET <pattern>",
        "    Return parameters matching the glob-like <pattern> and their values.",
        "SET <directive> <value>",
        "    Set the configuration <directive> to <value>.",
        "RESETSTAT",
        "    Reset statistics reported by the INFO command.",
        "REWRITE",
        "    Rewrite the configuration file.",
        NULL,
    };
    replyHelp(c, help);
}

/* ------------------------------------------------------------------------ */
/* CONFIG REWRITE                                                            */
/* ------------------------------------------------------------------------ */

#define REWRITE_SIGNATURE "# Generated by CONFIG REWRITE"

/* Does the text need quoting in a config file? */
static int needsQuotes(const char *s) {
    if (*s == '\0') return 1;
    for (const char *p = s; *p; p++)
        if (*p <= ' ' || *p == '"' || *p == '\'' || *p == '\\' || (unsigned char)*p >= 0x7f) return 1;
    return 0;
}

/* A byte count the way Redis writes it back: the largest of gb/mb/kb that
 * divides it, or plain bytes. */
sds configMemoryText(unsigned long long v) { return memoryText(v); }

static sds memoryText(unsigned long long v) {
    const unsigned long long gb = 1024ULL * 1024 * 1024, mb = 1024ULL * 1024, kb = 1024;
    if (v && v % gb == 0) return sdsCatPrintf(sdsEmpty(), "%llugb", v / gb);
    if (v && v % mb == 0) return sdsCatPrintf(sdsEmpty(), "%llumb", v / mb);
    if (v && v % kb == 0) return sdsCatPrintf(sdsEmpty(), "%llukb", v / kb);
    return sdsCatPrintf(sdsEmpty(), "%llu", v);
}

/* The lines that state d's value.  Caller frees with sdsFreeSplitRes. */
static sds *configLines(const ConfigDef *d, int *count) {
    if (d->rewrite) return d->rewrite(d, count);
    sds line = sdsCatPrintf(sdsEmpty(), "%s ", d->name);
    if (d->type == CT_STRING || (d->flags & CF_QUOTED)) {
        sds v = configGetValue(d);
        line = sdsCatRepr(line, v, sdsLen(v));
        sdsFree(v);
    } else if (d->flags & CF_MEMORY) {
        unsigned long long v = 0;
        if (d->type == CT_RAW) {
            /* Normalized digits (rawNormalize). */
            if (d->raw) memToULL(d->raw, &v);
        } else {
            v = d->type == CT_ULL ? *CFIELD(d, unsigned long long) : (unsigned long long)*CFIELD(d, long long);
        }
        sds m = memoryText(v);
        line = sdsCatSds(line, m);
        sdsFree(m);
    } else {
        sds v = configGetValue(d);
        if ((d->flags & CF_MULTI_ARG) && sdsLen(v)) line = sdsCatSds(line, v);
        else if (needsQuotes(v)) line = sdsCatRepr(line, v, sdsLen(v));
        else line = sdsCatSds(line, v);
        sdsFree(v);
    }
    sds *out = xmalloc(sizeof(sds));
    out[0] = line;
    *count = 1;
    return out;
}

/* Is d at its default value (as configInitDefaults recorded it)? */
static int isDefault(const ConfigDef *d) {
    if (d->type == CT_RAW) return !strcmp(d->raw ? d->raw : "", d->deflt);
    if (d->flags & CF_ALWAYS_REWRITE) return 0; /* Redis always writes dir */
    sds a = configGetValue(d);
    const sds b = d->defaultValue;
    int same = b && sdsLen(a) == sdsLen(b) && !memcmp(a, b, sdsLen(a));
    sdsFree(a);
    return same;
}

/* Canonical table entry of a config file line, or NULL. */
static ConfigDef *lineDirective(const char *line) {
    int argc = 0;
    sds *argv = sdsSplitArgs(line, &argc);
    if (!argv) return NULL;
    ConfigDef *d = argc ? lookupConfig(argv[0], NULL) : NULL;
    sdsFreeSplitRes(argv, argc);
    return d;
}

/* The registered kind of a (trimmed) config line with arguments (`user
 * ...`), or NULL. */
static const ConfigLineKind *lineKindOf(const char *t) {
    for (int k = 0; k < lineKindCount; k++) {
        size_t n = strlen(lineKinds[k]->name);
        if (!strncasecmp(t, lineKinds[k]->name, n) && (t[n] == ' ' || t[n] == '\t')) return lineKinds[k];
    }
    return NULL;
}

/* Whether name is a registered line kind's. */
static int isLineKindName(const char *name) {
    for (int k = 0; k < lineKindCount; k++)
        if (!strcasecmp(name, lineKinds[k]->name)) return 1;
    return 0;
}

/* Build the new file text from the old one: directive lines Cairn knows
 * are updated in place (extra old lines of a directive become blank),
 * comments and other lines stay, and directives not in the file that
 * differ from their defaults are appended after the signature line. */
static sds rewriteConfigText(const char *oldText, int forceAll) {
    int nold = 0;
    sds *oldLines = sdsSplitLen(oldText, (ssize_t)strlen(oldText), "\n", 1, &nold);
    /* A trailing newline gives an empty last element; drop it. */
    if (nold && sdsLen(oldLines[nold - 1]) == 0) {
        sdsFree(oldLines[nold - 1]);
        nold--;
    }
    ConfigDef **owner = xcalloc(sizeof(ConfigDef *) * (size_t)(nold ? nold : 1));
    int *keep = xcalloc(sizeof(int) * (size_t)(nold ? nold : 1)); /* 1 = copy as is */
    for (int i = 0; i < nold; i++) {
        sds t = sdsTrim(sdsDup(oldLines[i]), " \t\r\n");
        if (!strcmp(t, REWRITE_SIGNATURE)) keep[i] = 0;
        else if (lineKindOf(t)) keep[i] = 0;
        else if (t[0] == '#' || t[0] == '\0' || !(owner[i] = lineDirective(t))) keep[i] = 1;
        sdsFree(t);
    }

    sds *newLines = xmalloc(sizeof(sds) * (size_t)(nold ? nold : 1));
    for (int i = 0; i < nold; i++) newLines[i] = keep[i] ? sdsDup(oldLines[i]) : NULL;
    /* A line naming no directive (a deprecated one Redis ignores, or one
     * that does not parse) becomes a "# ??? " comment, as Redis writes it;
     * include, rename-command, loadmodule and sentinel lines stay. */
    for (int i = 0; i < nold; i++) {
        if (!keep[i]) continue;
        sds t = sdsTrim(sdsDup(oldLines[i]), " \t\r\n");
        if (t[0] != '#' && t[0] != '\0') {
            int argc = 0;
            sds *argv = sdsSplitArgs(t, &argc);
            static const char *kept[] = {"include", "rename-command", "loadmodule", "sentinel"};
            int special = argv && argc && isLineKindName(argv[0]);
            for (size_t k = 0; argv && argc && k < sizeof(kept) / sizeof(kept[0]); k++)
                special |= !strcasecmp(argv[0], kept[k]);
            if (argv) sdsFreeSplitRes(argv, argc);
            if (!special) {
                sdsFree(newLines[i]);
                newLines[i] = sdsCatSds(sdsNew("# ??? "), t);
            }
        }
        sdsFree(t);
    }
    sds appended = sdsEmpty();
    /* Each kind's lines (the users) take the old lines' places of that kind
     * (the extra ones become blank), the rest are appended; with an
     * aclfile there are no `user` lines. */
    for (int k = 0; k < lineKindCount; k++) {
        int nnew = 0, used = 0;
        sds *kindLines = lineKinds[k]->rewrite ? lineKinds[k]->rewrite(&nnew) : NULL;
        for (int i = 0; i < nold; i++) {
            sds t = sdsTrim(sdsDup(oldLines[i]), " \t\r\n");
            if (lineKindOf(t) == lineKinds[k]) newLines[i] = used < nnew ? sdsDup(kindLines[used++]) : sdsEmpty();
            sdsFree(t);
        }
        for (; used < nnew; used++) {
            appended = sdsCatSds(appended, kindLines[used]);
            appended = sdsCat(appended, "\n");
        }
        sdsFreeSplitRes(kindLines, nnew);
    }
    for (size_t k = 0; k < registryCount; k++) {
        ConfigDef *d = registry[k];
        int inFile = 0;
        for (int i = 0; i < nold && !inFile; i++) inFile = owner[i] == d;
        if (!inFile && !forceAll && isDefault(d)) continue;
        int cnt = 0;
        sds *lines = configLines(d, &cnt);
        int used = 0;
        for (int i = 0; i < nold; i++) {
            if (owner[i] != d) continue;
            newLines[i] = used < cnt ? sdsDup(lines[used]) : sdsEmpty();
            used++;
        }
        for (; used < cnt; used++) {
            appended = sdsCatSds(appended, lines[used]);
            appended = sdsCat(appended, "\n");
        }
        sdsFreeSplitRes(lines, cnt);
    }

    sds out = sdsEmpty();
    for (int i = 0; i < nold; i++) {
        if (!newLines[i]) continue; /* the old signature line */
        out = sdsCatSds(out, newLines[i]);
        out = sdsCat(out, "\n");
        sdsFree(newLines[i]);
    }
    if (sdsLen(appended)) {
        /* Keep the old trailing blank lines out of the way of the signature. */
        while (sdsLen(out) >= 2 && out[sdsLen(out) - 1] == '\n' && out[sdsLen(out) - 2] == '\n')
            sdsSetLen(out, sdsLen(out) - 1);
        if (sdsLen(out)) out = sdsCat(out, "\n");
        out = sdsCat(out, REWRITE_SIGNATURE "\n");
        out = sdsCatSds(out, appended);
    }
    sdsFree(appended);
    xfree(newLines);
    xfree(owner);
    xfree(keep);
    sdsFreeSplitRes(oldLines, nold);
    return out;
}

/* Write text to path through a temporary file in the same directory, so
 * a crash leaves either the old or the new file.  Returns 0 or -1 (errno). */
static int writeFileAtomically(const char *path, const sds text) {
    sds tmp = sdsCatPrintf(sdsEmpty(), "%s.tmp-%d", path, (int)getpid());
    FILE *fp = fopen(tmp, "w");
    if (!fp) {
        sdsFree(tmp);
        return -1;
    }
    int ok = fwrite(text, 1, sdsLen(text), fp) == sdsLen(text) && fflush(fp) == 0 && fsync(fileno(fp)) == 0;
    int saved = errno;
    if (fclose(fp) != 0 && ok) {
        ok = 0;
        saved = errno;
    }
    if (ok && rename(tmp, path) == -1) {
        ok = 0;
        saved = errno;
    }
    if (!ok) unlink(tmp);
    sdsFree(tmp);
    errno = saved;
    return ok ? 0 : -1;
}

void configRewriteCommand(Client *c) {
    if (!configFile) {
        replyError(c, "ERR The server is running without a config file");
        return;
    }
    if (configRewriteFile(0) == -1) {
        /* A file that cannot be read or written: logged and answered alike,
         * as Redis does. */
        int err = errno;
        serverLog(LL_WARNING, "CONFIG REWRITE failed: %s", strerror(err));
        replyErrorFormat(c, "ERR Rewriting config file: %s", strerror(err));
    } else {
        serverLog(LL_NOTICE, "CONFIG REWRITE executed with success.");
        replyOk(c);
    }
}

/* CONFIG REWRITE as a function (DEBUG RESTART; with forceAll, DEBUG
 * CONFIG-REWRITE-FORCE-ALL: every directive, defaults and hidden ones
 * included).  0, or -1 with errno (EFAULT without a config file, as
 * Redis's open of no path). */
int configRewriteFile(int forceAll) {
    if (!configFile) {
        errno = EFAULT;
        return -1;
    }
    sds oldText = sdsEmpty();
    FILE *fp = fopen(configFile, "r");
    if (fp) {
        sds body = readWholeFile(fp);
        oldText = sdsCatSds(oldText, body);
        sdsFree(body);
        fclose(fp);
    } else if (errno != ENOENT) {
        sdsFree(oldText);
        return -1;
    }
    sds text = rewriteConfigText(oldText, forceAll);
    int rc = writeFileAtomically(configFile, text);
    int saved = errno;
    sdsFree(text);
    sdsFree(oldText);
    errno = saved;
    return rc;
}

/* ------------------------------------------------------------------------ */
/* Command table                                                             */
/* ------------------------------------------------------------------------ */

static Command configSubcommands[] = {
    {.name = "get", .proc = configGetCommand},
    {.name = "set", .proc = configSetCommand},
    {.name = "resetstat", .proc = configResetStatCommand},
    {.name = "rewrite", .proc = configRewriteCommand},
    {.name = "help", .proc = configHelpCommand},
    {0},
};

Command configCommands[] = {
    {.name = "config", .subcommands = configSubcommands},
    {0},
};
