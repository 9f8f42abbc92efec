/* cli.c -- `cairn-server --version`, `--help` and `--check-system`.
 *
 * The help text below is the single source of the usage: the man page
 * cairn-server(1) is rendered from it by scripts/mkman.sh at build time.
 * mkman.sh relies on its layout: the "Usage:" lines first, then plain
 * paragraphs, then sections headed by an unindented "Title:" line whose
 * entries are a term indented by two spaces followed by its description
 * indented by six.  `backquoted` words are rendered in bold.
 *
 * --check-system reads the kernel settings Redis warns about at start-up
 * (memory overcommit, transparent huge pages, the listen backlog cap) and
 * prints one "[name]...OK", "...WARNING:" (with the fix) or "...skipped"
 * line per check, in the shape of `redis-server --check-system`. */
#include "core/cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buildinfo.h"
#include "core/config.h"
#include "core/server.h"
#include "ds/alloc.h"

static const char helpText[] =
    "Usage: cairn-server [/path/to/cairn.conf] [--name value ...] [-]\n"
    "       cairn-server -v | --version\n"
    "       cairn-server -h | --help\n"
    "       cairn-server --check-system\n"
    "\n"
    "Cairn is an in-memory data-structure server that speaks the Redis protocol\n"
    "and answers as Redis " REDIS_COMPAT_VERSION " does. It runs in the foreground unless the\n"
    "configuration says `daemonize yes`.\n"
    "\n"
    "Configuration:\n"
    "  /path/to/cairn.conf\n"
    "      A configuration file, one directive per line, as in the annotated\n"
    "      cairn.conf. When given, it must be the first argument.\n"
    "  --name value ...\n"
    "      Any directive of the configuration file, on the command line:\n"
    "      `--port 7777` means the line `port 7777`. These come after the file\n"
    "      and standard input, so they win.\n"
    "  -\n"
    "      Also read directives from standard input, after the file. It must be\n"
    "      the first or the last argument.\n"
    "  (none)\n"
    "      Without a file or directives the built-in defaults apply: port 6379,\n"
    "      data files in the current directory, the log on standard output.\n"
    "\n"
    "Options:\n"
    "  -v, --version\n"
    "      Print one line: Cairn's version, the Redis version it answers as,\n"
    "      the git commit it was built from, the memory allocator, the word\n"
    "      size and the build id. Exit 0.\n"
    "  -h, --help\n"
    "      Print this text on standard error and exit 1, as redis-server does.\n"
    "  --check-system\n"
    "      Check the kernel settings Cairn depends on (memory overcommit,\n"
    "      transparent huge pages, the listen backlog cap somaxconn) and print\n"
    "      OK, or a warning with the fix, for each. Exit 1 if any needs fixing.\n"
    "\n"
    "Examples:\n"
    "  cairn-server\n"
    "      Run with the built-in defaults.\n"
    "  cairn-server /etc/cairn/cairn.conf\n"
    "      Run with the installed configuration.\n"
    "  cairn-server --port 7777 --save ''\n"
    "      Listen on port 7777 with snapshots off.\n"
    "  echo 'maxmemory 128mb' | cairn-server -\n"
    "      Read the configuration from standard input.\n"
    "  cairn-server /etc/cairn/cairn.conf --loglevel verbose -\n"
    "      Read the file, then standard input; --loglevel verbose applies last.\n"
    "\n"
    "Files:\n"
    "  /etc/cairn/cairn.conf\n"
    "      The configuration `make install` puts in place and cairn.service\n"
    "      runs; cairn@NAME.service runs /etc/cairn/cairn-NAME.conf.\n"
    "  /var/lib/cairn\n"
    "      The data directory (`dir`) of the installed configuration.\n"
    "  /var/log/cairn/cairn-server.log\n"
    "      The log file of the installed configuration.\n"
    "\n"
    "Signals:\n"
    "  SIGTERM, SIGINT\n"
    "      Shut down, as the SHUTDOWN command does.\n"
    "  SIGHUP, SIGPIPE\n"
    "      Ignored.\n";

static void printVersion(void) {
    printf("Cairn server v=%s (Redis %s compatible) sha=%s:%d malloc=%s bits=%d build=%s\n", CAIRN_VERSION,
           REDIS_COMPAT_VERSION, buildInfoGitSha1(), buildInfoGitDirty(), xmallocLibrary(),
           (int)(sizeof(long) * 8), buildInfoId());
}

/* --- --check-system --- */

typedef enum { CHECK_SKIPPED, CHECK_OK, CHECK_WARNING } CheckResult;

/* Read the first line of a /proc or /sys file into buf (newline
 * stripped); -1 when it cannot be read. */
static int readFirstLine(const char *path, char *buf, size_t size) {
    FILE *fp = fopen(path, "r");
    if (!fp) return -1;
    char *got = fgets(buf, (int)size, fp);
    fclose(fp);
    if (!got) return -1;
    buf[strcspn(buf, "\n")] = '\0';
    return 0;
}

static CheckResult checkOvercommit(char *advice, size_t size) {
    char line[64];
    if (readFirstLine("/proc/sys/vm/overcommit_memory", line, sizeof(line)) == -1) return CHECK_SKIPPED;
    if (atoi(line) == 1) return CHECK_OK;
    snprintf(advice, size,
             "vm.overcommit_memory is %s, not 1. Without overcommit, allocations can fail when memory runs "
             "low, jemalloc can fail even when it does not (https://github.com/jemalloc/jemalloc/issues/1328), "
             "and a background save (a fork) may be refused. To fix it, add 'vm.overcommit_memory = 1' to "
             "/etc/sysctl.conf and reboot, or run 'sysctl vm.overcommit_memory=1' to apply it now.",
             line);
    return CHECK_WARNING;
}

static CheckResult checkTransparentHugePages(char *advice, size_t size) {
    char line[256];
    if (readFirstLine("/sys/kernel/mm/transparent_hugepage/enabled", line, sizeof(line)) == -1)
        return CHECK_SKIPPED;
    if (!strstr(line, "[always]")) return CHECK_OK;
    snprintf(advice, size,
             "Transparent Huge Pages are enabled for every process (%s). They add latency and memory use to "
             "Cairn, as to Redis. To fix it, run 'echo madvise > /sys/kernel/mm/transparent_hugepage/enabled' "
             "as root, and add that command to /etc/rc.local (or boot with transparent_hugepage=madvise) to keep "
             "it after a reboot; then restart Cairn.",
             line);
    return CHECK_WARNING;
}

static CheckResult checkSomaxconn(char *advice, size_t size) {
    char line[64];
    if (readFirstLine("/proc/sys/net/core/somaxconn", line, sizeof(line)) == -1) return CHECK_SKIPPED;
    /* The default tcp-backlog; server.cfg, global, keeps the defaults'
     * strings reachable until the exit that follows. */
    ServerConfig *defaults = &server.cfg;
    configInitDefaults();
    long somaxconn = atol(line);
    if (somaxconn >= defaults->tcpBacklog) return CHECK_OK;
    snprintf(advice, size,
             "net.core.somaxconn is %ld, lower than the default tcp-backlog of %d, so the kernel caps the queue "
             "of pending connections at %ld. To fix it, add 'net.core.somaxconn = %d' (or more) to "
             "/etc/sysctl.conf and run 'sysctl net.core.somaxconn=%d', or lower tcp-backlog.",
             somaxconn, defaults->tcpBacklog, somaxconn, defaults->tcpBacklog, defaults->tcpBacklog);
    return CHECK_WARNING;
}

/* Run every check; return 1 when all passed or were skipped, else 0. */
static int checkSystem(void) {
    static const struct {
        const char *name;
        CheckResult (*check)(char *advice, size_t size);
    } checks[] = {
        {"overcommit", checkOvercommit},
        {"THP", checkTransparentHugePages},
        {"somaxconn", checkSomaxconn},
    };
    int allOk = 1;
    for (size_t i = 0; i < sizeof(checks) / sizeof(checks[0]); i++) {
        char advice[1024] = "";
        printf("[%s]...", checks[i].name);
        fflush(stdout);
        switch (checks[i].check(advice, sizeof(advice))) {
        case CHECK_OK: printf("OK\n"); break;
        case CHECK_SKIPPED: printf("skipped\n"); break;
        case CHECK_WARNING:
            printf("WARNING:\n%s\n", advice);
            allOk = 0;
            break;
        }
    }
    return allOk;
}

void cliHandleInfoArgs(int argc, char **argv) {
    if (argc < 2) return;
    const char *arg = argv[1];
    if (!strcmp(arg, "-v") || !strcmp(arg, "--version")) {
        printVersion();
        exit(0);
    }
    if (!strcmp(arg, "-h") || !strcmp(arg, "--help")) {
        fputs(helpText, stderr);
        exit(1);
    }
    if (!strcmp(arg, "--check-system")) exit(checkSystem() ? 0 : 1);
}
