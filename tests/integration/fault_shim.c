/* fault_shim.c -- an LD_PRELOAD library that makes writes or fsyncs of
 * the server's temporary RDB files fail, for test_rdb_faults.py.
 *
 * A file opened with a name containing "temp-" and ending in ".rdb" is
 * watched.  While the file named by CAIRN_FAULT_FLAG exists, a write to a
 * watched descriptor fails with CAIRN_FAULT_WRITE (ENOSPC or EIO) and an
 * fsync / fdatasync with CAIRN_FAULT_FSYNC; either may be unset.  The flag
 * is read at each watched call, so a test turns faults on and off while
 * the server runs.  Built by the test: gcc -shared -fPIC -o shim.so
 * fault_shim.c -ldl */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_FD 65536
static unsigned char watched[MAX_FD];

static int errnoNamed(const char *name) {
    if (!name) return 0;
    if (!strcmp(name, "ENOSPC")) return ENOSPC;
    if (!strcmp(name, "EIO")) return EIO;
    if (!strcmp(name, "EDQUOT")) return EDQUOT;
    return 0;
}

static int faultFor(int fd, const char *var) {
    if (fd < 0 || fd >= MAX_FD || !watched[fd]) return 0;
    const char *flag = getenv("CAIRN_FAULT_FLAG");
    struct stat st;
    if (!flag || stat(flag, &st) != 0) return 0;
    return errnoNamed(getenv(var));
}

static void watch(int fd, const char *path) {
    if (fd < 0 || fd >= MAX_FD || !path) return;
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    size_t n = strlen(base);
    watched[fd] = strncmp(base, "temp-", 5) == 0 && n > 4 && strcmp(base + n - 4, ".rdb") == 0;
}

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
    if (!real) real = (ssize_t(*)(int, const void *, size_t))dlsym(RTLD_NEXT, "write");
    int e = faultFor(fd, "CAIRN_FAULT_WRITE");
    if (e) {
        errno = e;
        return -1;
    }
    return real(fd, buf, len);
}

int fsync(int fd) {
    static int (*real)(int);
    if (!real) real = (int (*)(int))dlsym(RTLD_NEXT, "fsync");
    int e = faultFor(fd, "CAIRN_FAULT_FSYNC");
    if (e) {
        errno = e;
        return -1;
    }
    return real(fd);
}

int fdatasync(int fd) {
    static int (*real)(int);
    if (!real) real = (int (*)(int))dlsym(RTLD_NEXT, "fdatasync");
    int e = faultFor(fd, "CAIRN_FAULT_FSYNC");
    if (e) {
        errno = e;
        return -1;
    }
    return real(fd);
}
