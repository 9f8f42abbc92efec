/* fault_shim.c -- the one LD_PRELOAD library the integration tests use to
 * make the server's file writes and fsyncs fail (faulthelp.py builds it;
 * test_aof_durability.py, test_rdb_faults.py and test_rdb_threads.py load
 * it).  Two independent triggers, each off unless its variable is set:
 *
 * - FAULT_CTL (the AOF tests) names a control file, read at every write /
 *   fsync / fdatasync on a descriptor whose path (/proc/self/fd) contains
 *   FAULT_MATCH (default ".incr.aof").  Its text is "<op> <what>": op is
 *   write or fsync; what is ENOSPC, EIO or (write only) SHORT, which
 *   writes half of one call's bytes and fails the next call with ENOSPC,
 *   alternating.  An empty or missing file: no fault.
 *
 * - CAIRN_FAULT_FLAG (the RDB tests): a descriptor opened with a name
 *   that starts with "temp-" and ends in ".rdb" is watched.  While the file
 *   named by CAIRN_FAULT_FLAG exists, a write to a watched descriptor fails
 *   with CAIRN_FAULT_WRITE (ENOSPC, EIO or EDQUOT) and an fsync / fdatasync
 *   with CAIRN_FAULT_FSYNC; either may be unset.
 *
 * Both are re-read at each call, so a test turns faults on and off while
 * the server runs.  Other files and sockets are never touched.
 * Invariant: watched[fd] is set only between open*() of a watched name and
 * close() of that descriptor. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#define MAX_FD 65536
static unsigned char watched[MAX_FD];

/* ---- FAULT_CTL: a control file, descriptors matched by path ---- */

/* 0: no fault for op ("write" or "fsync") on fd; else the errno to fail
 * with (-1: SHORT). */
static int ctlFault(const char *op, int fd) {
    const char *ctl = getenv("FAULT_CTL");
    if (!ctl) return 0;
    const char *match = getenv("FAULT_MATCH");
    if (!match) match = ".incr.aof";
    char link[64], path[512];
    snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
    ssize_t l = readlink(link, path, sizeof(path) - 1);
    if (l <= 0) return 0;
    path[l] = '\0';
    if (!strstr(path, match)) return 0;
    int cfd = open(ctl, O_RDONLY);
    if (cfd < 0) return 0;
    char buf[64] = {0};
    ssize_t n = read(cfd, buf, sizeof(buf) - 1);
    close(cfd);
    if (n <= 0) return 0;
    char o[16], what[16];
    if (sscanf(buf, "%15s %15s", o, what) != 2 || strcmp(o, op) != 0) return 0;
    if (!strcmp(what, "ENOSPC")) return ENOSPC;
    if (!strcmp(what, "EIO")) return EIO;
    if (!strcmp(what, "SHORT")) return -1;
    return 0;
}

/* ---- CAIRN_FAULT_FLAG: a flag file, temp-*.rdb descriptors ---- */

/* The errno called name (ENOSPC, EIO, EDQUOT), 0 for NULL or another. */
static int errnoNamed(const char *name) {
    if (!name) return 0;
    if (!strcmp(name, "ENOSPC")) return ENOSPC;
    if (!strcmp(name, "EIO")) return EIO;
    if (!strcmp(name, "EDQUOT")) return EDQUOT;
    return 0;
}

/* The errno named by the variable var when fd is watched and the flag
 * file exists, else 0. */
static int flagFault(int fd, const char *var) {
    if (fd < 0 || fd >= MAX_FD || !watched[fd]) return 0;
    const char *flag = getenv("CAIRN_FAULT_FLAG");
    struct stat st;
    if (!flag || stat(flag, &st) != 0) return 0;
    return errnoNamed(getenv(var));
}

/* Marks fd watched iff path's base name is temp-*.rdb. */
static void watch(int fd, const char *path) {
    if (fd < 0 || fd >= MAX_FD || !path) return;
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    size_t n = strlen(base);
    watched[fd] = strncmp(base, "temp-", 5) == 0 && n > 4 && strcmp(base + n - 4, ".rdb") == 0;
}

/* ---- the interposed calls ---- */

/* Calls the real sym (open-like when dirfd == -1, else openat-like), then
 * records whether the new descriptor is watched. */
static int openWith(const char *sym, int dirfd, const char *path, int flags, va_list ap) {
    mode_t mode = (flags & O_CREAT) ? (mode_t)va_arg(ap, int) : 0;
    int fd;
    if (dirfd == -1) {
        int (*real)(const char *, int, ...) = (int (*)(const char *, int, ...))dlsym(RTLD_NEXT, sym);
        fd = real(path, flags, mode);
    } else {
        int (*real)(int, const char *, int, ...) = (int (*)(int, const char *, int, ...))dlsym(RTLD_NEXT, sym);
        fd = real(dirfd, path, flags, mode);
    }
    watch(fd, path);
    return fd;
}

int open(const char *path, int flags, ...) {
    va_list ap;
    va_start(ap, flags);
    int fd = openWith("open", -1, path, flags, ap);
    va_end(ap);
    return fd;
}

int open64(const char *path, int flags, ...) {
    va_list ap;
    va_start(ap, flags);
    int fd = openWith("open64", -1, path, flags, ap);
    va_end(ap);
    return fd;
}

int openat(int dirfd, const char *path, int flags, ...) {
    va_list ap;
    va_start(ap, flags);
    int fd = openWith("openat", dirfd, path, flags, ap);
    va_end(ap);
    return fd;
}

int close(int fd) {
    static int (*real)(int);
    if (!real) real = (int (*)(int))dlsym(RTLD_NEXT, "close");
    if (fd >= 0 && fd < MAX_FD) watched[fd] = 0;
    return real(fd);
}

ssize_t write(int fd, const void *buf, size_t len) {
    static ssize_t (*real)(int, const void *, size_t);
    static int shortTurn;
    if (!real) real = (ssize_t(*)(int, const void *, size_t))dlsym(RTLD_NEXT, "write");
    int e = ctlFault("write", fd);
    if (e == -1) {
        shortTurn = !shortTurn;
        if (shortTurn && len > 1) return real(fd, buf, len / 2);
        e = ENOSPC;
    }
    if (!e) e = flagFault(fd, "CAIRN_FAULT_WRITE");
    if (e) {
        errno = e;
        return -1;
    }
    return real(fd, buf, len);
}

/* The errno an fsync or fdatasync of fd fails with, 0 for none. */
static int syncFault(int fd) {
    int e = ctlFault("fsync", fd);
    if (e > 0) return e;
    return flagFault(fd, "CAIRN_FAULT_FSYNC");
}

int fsync(int fd) {
    static int (*real)(int);
    if (!real) real = (int (*)(int))dlsym(RTLD_NEXT, "fsync");
    int e = syncFault(fd);
    if (e) {
        errno = e;
        return -1;
    }
    return real(fd);
}

int fdatasync(int fd) {
    static int (*real)(int);
    if (!real) real = (int (*)(int))dlsym(RTLD_NEXT, "fdatasync");
    int e = syncFault(fd);
    if (e) {
        errno = e;
        return -1;
    }
    return real(fd);
}
