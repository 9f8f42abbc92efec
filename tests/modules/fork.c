/* fork.c -- test module: RedisModule_Fork, SendChildHeartbeat,
 * ExitFromChild and KillForkChild.
 *
 *   fork.start path code ms  forks a child that writes "child <code>" to
 *                            path, sends a heartbeat, sleeps ms and exits
 *                            with code; replies OK, or the error
 *                            "ERR fork: <errno name>" (EEXIST while another
 *                            child runs)
 *   fork.done                the done handler's calls so far, and the last
 *                            exit code and signal it got (3 integers)
 *   fork.kill [pid]          KillForkChild of the last child (or pid): OK
 *                            or ERR; the done handler is not called
 *   fork.running             1 while a child started here was not yet seen
 *                            done nor killed */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "redismodule.h"

static int calls, lastCode = -100, lastSignal = -100, running, childPid;

static void done(int exitcode, int bysignal, void *data) {
    if (data != &calls) return; /* the user data comes back */
    calls++;
    lastCode = exitcode;
    lastSignal = bysignal;
    running = 0;
}

static int cmdStart(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    if (argc != 4) return RedisModule_WrongArity(ctx);
    long long code, ms;
    if (RedisModule_StringToLongLong(argv[2], &code) != REDISMODULE_OK ||
        RedisModule_StringToLongLong(argv[3], &ms) != REDISMODULE_OK)
        return RedisModule_ReplyWithError(ctx, "ERR bad number");
    const char *path = RedisModule_StringPtrLen(argv[1], NULL);
    int pid = RedisModule_Fork(done, &calls);
    if (pid < 0)
        return RedisModule_ReplyWithError(ctx, errno == EEXIST ? "ERR fork: EEXIST" : "ERR fork: other");
    if (pid == 0) {
        FILE *f = fopen(path, "w");
        if (f) {
            fprintf(f, "child %lld", code);
            fclose(f);
        }
        RedisModule_SendChildHeartbeat(0.5);
        struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};
        while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
        }
        RedisModule_ExitFromChild((int)code);
        return REDISMODULE_OK; /* not reached */
    }
    childPid = pid;
    running = 1;
    return RedisModule_ReplyWithSimpleString(ctx, "OK");
}

static int cmdDone(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    (void)argv, (void)argc;
    RedisModule_ReplyWithArray(ctx, 3);
    RedisModule_ReplyWithLongLong(ctx, calls);
    RedisModule_ReplyWithLongLong(ctx, lastCode);
    return RedisModule_ReplyWithLongLong(ctx, lastSignal);
}

static int cmdKill(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    long long pid = childPid;
    if (argc == 2 && RedisModule_StringToLongLong(argv[1], &pid) != REDISMODULE_OK)
        return RedisModule_ReplyWithError(ctx, "ERR bad pid");
    int rc = RedisModule_KillForkChild((int)pid);
    if (rc == REDISMODULE_OK && pid == childPid) running = 0;
    return RedisModule_ReplyWithSimpleString(ctx, rc == REDISMODULE_OK ? "OK" : "ERR");
}

static int cmdRunning(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    (void)argv, (void)argc;
    return RedisModule_ReplyWithLongLong(ctx, running);
}

int RedisModule_OnLoad(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    (void)argv, (void)argc;
    if (RedisModule_Init(ctx, "fork", 1, REDISMODULE_APIVER_1) == REDISMODULE_ERR) return REDISMODULE_ERR;
    if (RedisModule_CreateCommand(ctx, "fork.start", cmdStart, "", 0, 0, 0) == REDISMODULE_ERR ||
        RedisModule_CreateCommand(ctx, "fork.done", cmdDone, "", 0, 0, 0) == REDISMODULE_ERR ||
        RedisModule_CreateCommand(ctx, "fork.kill", cmdKill, "", 0, 0, 0) == REDISMODULE_ERR ||
        RedisModule_CreateCommand(ctx, "fork.running", cmdRunning, "", 0, 0, 0) == REDISMODULE_ERR)
        return REDISMODULE_ERR;
    return REDISMODULE_OK;
}
