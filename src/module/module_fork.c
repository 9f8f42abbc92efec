/* module_fork.c -- RedisModule_Fork, SendChildHeartbeat, ExitFromChild and
 * KillForkChild.
 *
 * A module's fork child is one of the server's background children
 * (persist.h's PERSIST_CHILD_MODULE): only one child runs at a time, so
 * Fork fails with EEXIST while a BGSAVE, a rewrite or a sync's save runs,
 * and BGSAVE answers "Another child process is active" while the module's
 * child runs, as on Redis.  The persistence layer forks, reports the
 * child's copy-on-write (INFO module_fork_*), reaps it in its timer and
 * calls back here: the module's done handler then gets the exit code and
 * the signal.
 *
 * Invariants: at most one done handler is pending (the one child); it is
 * forgotten when the child is killed with KillForkChild (not called, as on
 * Redis).  A module unloaded while its child runs leaves the handler
 * pointing into unloaded code, as on Redis: a module must not do that. */
#include <errno.h>

#include "ds/alloc.h"
#include "module/module_int.h"
#include "persist/persist.h"

static RedisModuleForkDoneHandler doneHandler;
static void *doneData;

static void childDone(int exitcode, int bysignal) {
    RedisModuleForkDoneHandler cb = doneHandler;
    void *data = doneData;
    doneHandler = NULL;
    doneData = NULL;
    if (cb) cb(exitcode, bysignal, data);
}

/* The child's pid in the parent, 0 in the child, -1 with errno. */
static int RM_Fork(RedisModuleForkDoneHandler cb, void *user_data) {
    pid_t pid = persistModuleFork(childDone);
    if (pid > 0) {
        doneHandler = cb;
        doneData = user_data;
    }
    return (int)pid;
}

/* progress (0..1, -1 unknown) is not shown: Cairn's child reports give
 * keys, which a module's child has none of; its copy-on-write is sent. */
static void RM_SendChildHeartbeat(double progress) {
    (void)progress;
    persistModuleChildHeartbeat();
}

static int RM_ExitFromChild(int retcode) {
    persistModuleChildExit(retcode);
    return REDISMODULE_OK; /* not reached */
}

static int RM_KillForkChild(int child_pid) {
    if (child_pid <= 0 || persistModuleKillChild((pid_t)child_pid) != 0) return REDISMODULE_ERR;
    doneHandler = NULL;
    doneData = NULL;
    return REDISMODULE_OK;
}

#define API(fn) {"RedisModule_" #fn, (void *)(uintptr_t)RM_##fn}
const ApiEntry moduleForkApi[] = {API(Fork), API(SendChildHeartbeat), API(ExitFromChild), API(KillForkChild),
                                  {NULL, NULL}};
