/* faultshim.c -- an LD_PRELOAD library that injects I/O errors into the
 * AOF (tests/integration/test_aof_durability.py builds it with cc).
 *
 * FAULT_CTL names a control file, read at every write/fsync/fdatasync on
 * a file whose path contains FAULT_MATCH (default ".incr.aof").  Its text
 * is "<op> <what>": op is write or fsync; what is ENOSPC, EIO or (write
 * only) SHORT, which writes half of the first call's bytes and fails the
 * next call with ENOSPC, alternating.  An empty or missing file: no fault.
 * Other files and sockets are never touched. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

static ssize_t (*realWrite)(int, const void *, size_t);
static int (*realFsync)(int);
static int (*realFdatasync)(int);

/* 0: no fault for op on fd; else the errno to fail with (-1: SHORT). */
static int fault(const char *op, int fd) {
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

ssize_t write(int fd, const void *p, size_t len) {
    static int shortTurn;
    if (!realWrite) realWrite = (ssize_t (*)(int, const void *, size_t))dlsym(RTLD_NEXT, "write");
    int f = fault("write", fd);
    if (f == -1) {
        shortTurn = !shortTurn;
        if (shortTurn && len > 1) return realWrite(fd, p, len / 2);
        f = ENOSPC;
    }
    if (f) {
        errno = f;
        return -1;
    }
    return realWrite(fd, p, len);
}

int fsync(int fd) {
    if (!realFsync) realFsync = (int (*)(int))dlsym(RTLD_NEXT, "fsync");
    int f = fault("fsync", fd);
    if (f > 0) {
        errno = f;
        return -1;
    }
    return realFsync(fd);
}

int fdatasync(int fd) {
    if (!realFdatasync) realFdatasync = (int (*)(int))dlsym(RTLD_NEXT, "fdatasync");
    int f = fault("fsync", fd);
    if (f > 0) {
        errno = f;
        return -1;
    }
    return realFdatasync(fd);
}
