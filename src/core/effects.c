/* effects.c -- the effects stream: frames around commands, the pending unit,
 * and the sinks (see effects.h for the model).
 *
 * Invariants: `pending` holds the effects of the unit being built, from
 * slot 1 on (slot 0 is kept free for the MULTI that wraps a unit of several
 * effects, and one slot after the last for its EXEC).  `cur` is the state
 * of the innermost running command; callCommand's frames save and restore
 * it around nested calls.  An effect borrows its argv only when it is the
 * outermost command's own, which the unit outlives; everything else is
 * copied.  All of it is touched only while a sink is registered, except
 * that a frame opened before the first sink was added still closes here. */
#include "core/effects.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/command.h"
#include "core/log.h"
#include "ds/alloc.h"
#include "ds/util.h"
#include "proto/resp_write.h"

int effectsOn;

#define CUR_PREVENT (1 << 0)  /* the command's own effect is dropped */
#define CUR_FORCE (1 << 1)    /* propagated even if nothing changed */
#define CUR_REWRITTEN (1 << 2) /* cur.argv replaces the command as sent */

static struct {
    int flags;
    int target;  /* mask of the command's own effect (EFFECT_*) */
    int forceTarget;
    int argc;    /* the rewrite (CUR_REWRITTEN) */
    sds *argv;
} cur;

static Effect *pending;
static int pendingCount, pendingCap;
static int held;        /* effectsHold depth */
static int inCommand;   /* callCommand frames open */
static int suppressed;  /* effectsSuppress depth */

typedef struct Sink {
    EffectsSinkFn *fn;
    void *ctx;
    int targets;
} Sink;
static Sink *sinks;
static int sinkCount;
static int activeTargets; /* union of the sinks' targets */
int effectsCallMask = EFFECT_ALL; /* for the next call's own effect */

static void updateTargets(void) {
    activeTargets = 0;
    for (int i = 0; i < sinkCount; i++) activeTargets |= sinks[i].targets;
    effectsOn = activeTargets != 0;
}

static sds multiArgv[1], execArgv[1];

void effectsAddSink(EffectsSinkFn *fn, void *ctx, int targets) {
    sinks = xrealloc(sinks, sizeof(*sinks) * (size_t)(sinkCount + 1));
    sinks[sinkCount].fn = fn;
    sinks[sinkCount].ctx = ctx;
    sinks[sinkCount].targets = targets & EFFECT_ALL;
    sinkCount++;
    if (!multiArgv[0]) {
        multiArgv[0] = sdsNew("MULTI");
        execArgv[0] = sdsNew("EXEC");
    }
    updateTargets();
}

void effectsRemoveSink(EffectsSinkFn *fn, void *ctx) {
    for (int i = 0; i < sinkCount; i++) {
        if (sinks[i].fn != fn || sinks[i].ctx != ctx) continue;
        memmove(&sinks[i], &sinks[i + 1], sizeof(*sinks) * (size_t)(sinkCount - i - 1));
        sinkCount--;
        break;
    }
    updateTargets();
}

/* --- building arguments --- */

static sds argToSds(const EffectArg *a) {
    if (!a->isNum) return sdsNewLen(a->p, a->len);
    char buf[32];
    int l = longLongToString(buf, sizeof(buf), a->num);
    return sdsNewLen(buf, (size_t)l);
}

static sds *argvFromArgs(int argc, const EffectArg *args) {
    sds *argv = xmalloc(sizeof(sds) * (size_t)argc);
    for (int i = 0; i < argc; i++) argv[i] = argToSds(&args[i]);
    return argv;
}

static sds *argvCopy(int argc, sds *src) {
    sds *argv = xmalloc(sizeof(sds) * (size_t)argc);
    for (int i = 0; i < argc; i++) argv[i] = sdsDup(src[i]);
    return argv;
}

static void argvFree(int argc, sds *argv) {
    if (!argv) return;
    for (int i = 0; i < argc; i++) sdsFree(argv[i]);
    xfree(argv);
}

/* --- the pending unit --- */

/* Record an effect (taking argv when owned), unless no sink wants it or
 * effects are suppressed (an AOF load: also when it runs inside a command,
 * DEBUG LOADAOF, whose unit is handed over after the load). */
static void pendingPush(int dbid, int target, int argc, sds *argv, int owned) {
    if (suppressed || !(target & activeTargets)) {
        if (owned) argvFree(argc, argv);
        return;
    }
    if (pendingCount + 3 > pendingCap) {
        pendingCap = pendingCap ? pendingCap * 2 : 16;
        pending = xrealloc(pending, sizeof(*pending) * (size_t)pendingCap);
    }
    Effect *e = &pending[1 + pendingCount++];
    e->dbid = dbid;
    e->target = target;
    e->argc = argc;
    e->argv = argv;
    e->owned = owned;
}

/* Empty the unit, freeing what it owns. */
static void dropUnit(void) {
    for (int i = 1; i <= pendingCount; i++)
        if (pending[i].owned) argvFree(pending[i].argc, pending[i].argv);
    pendingCount = 0;
}

/* Hands ops[0..count) to the sinks, wrapped in MULTI/EXEC when several. */
static void handOver(Effect *ops, int count) {
    Effect *tmp = NULL;
    if (count > 1) {
        tmp = xmalloc(sizeof(*tmp) * (size_t)(count + 2));
        tmp[0] = (Effect){ops[0].dbid, EFFECT_ALL, 1, multiArgv, 0};
        memcpy(tmp + 1, ops, sizeof(*tmp) * (size_t)count);
        tmp[count + 1] = (Effect){ops[count - 1].dbid, EFFECT_ALL, 1, execArgv, 0};
        ops = tmp;
        count += 2;
    }
    for (int i = 0; i < sinkCount; i++) sinks[i].fn(ops, count, sinks[i].ctx);
    xfree(tmp);
}

/* A unit holding EFFECT_UNWRAPPED effects: in order, each alone, the runs
 * of other effects between them as units of their own. */
static void flushUnwrapped(void) {
    Effect *ops = pending + 1;
    int i = 0;
    while (i < pendingCount) {
        int j = i + 1;
        if (!(ops[i].target & EFFECT_UNWRAPPED))
            while (j < pendingCount && !(ops[j].target & EFFECT_UNWRAPPED)) j++;
        handOver(ops + i, j - i);
        i = j;
    }
    dropUnit();
}

/* Hand the unit to the sinks (if any is left) and empty it. */
static void flushUnit(void) {
    if (pendingCount == 0) return;
    if (suppressed) {
        dropUnit();
        return;
    }
    Effect *ops = pending + 1;
    int count = pendingCount;
    if (count > 1)
        for (int i = 1; i <= count; i++)
            if (pending[i].target & EFFECT_UNWRAPPED) {
                flushUnwrapped();
                return;
            }
    if (count > 1) {
        /* MULTI in the first effect's database, so that a SELECT comes
         * before it; EXEC in the last one's, so that none comes between. */
        pending[0] = (Effect){pending[1].dbid, EFFECT_ALL, 1, multiArgv, 0};
        pending[count + 1] = (Effect){pending[count].dbid, EFFECT_ALL, 1, execArgv, 0};
        ops = pending;
        count += 2;
    }
    for (int i = 0; i < sinkCount; i++) sinks[i].fn(ops, count, sinks[i].ctx);
    dropUnit();
}

/* --- frames --- */

void effectsEnterSlow(EffectsFrame *f) {
    f->flags = cur.flags;
    f->target = cur.target;
    f->argc = cur.argc;
    f->argv = cur.argv;
    f->forceTarget = cur.forceTarget;
    cur.flags = 0;
    cur.target = effectsCallMask;
    effectsCallMask = EFFECT_ALL;
    cur.forceTarget = 0;
    cur.argc = 0;
    cur.argv = NULL;
    inCommand++;
}

/* The command's own effect, by Redis's rule: its rewrite or its argv as
 * sent, if it dirtied the dataset (and is a write) or forced it, unless it
 * prevented it. */
static void recordOwnEffect(Client *c, Command *cmd, long long dirty, int outermost) {
    int dbid = c->db ? c->db->id : 0;
    if (cur.flags & CUR_REWRITTEN) {
        if (dirty > 0 || (cur.flags & CUR_FORCE)) {
            pendingPush(dbid, cur.target, cur.argc, cur.argv, 1);
            cur.argv = NULL;
        }
        return;
    }
    if (cur.flags & CUR_PREVENT) return;
    int target = 0;
    if (dirty > 0 && (cmd->flags & CMD_WRITE)) target = EFFECT_ALL;
    if (cur.flags & CUR_FORCE) target |= cur.forceTarget;
    target &= cur.target;
    if (!target) return;
    if (outermost && !held) pendingPush(dbid, target, c->argc, c->argv, 0);
    else pendingPush(dbid, target, c->argc, argvCopy(c->argc, c->argv), 1);
}

void effectsLeaveSlow(EffectsFrame *f, Client *c, Command *cmd, long long dirty, int outermost) {
    if (f->on) {
        if (effectsOn) recordOwnEffect(c, cmd, dirty, outermost);
        argvFree(cur.argc, cur.argv);
        cur.flags = f->flags;
        cur.target = f->target;
        cur.forceTarget = f->forceTarget;
        cur.argc = f->argc;
        cur.argv = f->argv;
        inCommand--;
    } else if (outermost) {
        /* The first sink arrived during this command: what the command
         * stated after that has no frame to go to. */
        argvFree(cur.argc, cur.argv);
        cur.argv = NULL;
        cur.argc = cur.flags = 0;
    }
    if (outermost && !held) {
        flushUnit();
    }
}

/* --- what commands call --- */

void effectsRewriteSlow(int argc, const EffectArg *args) {
    if (!inCommand) return;
    argvFree(cur.argc, cur.argv);
    cur.argv = argvFromArgs(argc, args);
    cur.argc = argc;
    cur.flags |= CUR_REWRITTEN;
}

void effectsRewriteSentSlow(const Client *c, int argc, int n, const int *pos, const EffectArg *args) {
    if (!inCommand) return;
    sds *argv = xmalloc(sizeof(sds) * (size_t)argc);
    for (int i = 0; i < argc; i++) argv[i] = NULL;
    for (int k = 0; k < n; k++)
        if (pos[k] < argc) argv[pos[k]] = argToSds(&args[k]);
    for (int i = 0; i < argc; i++)
        if (!argv[i]) argv[i] = sdsDup(c->argv[i]);
    argvFree(cur.argc, cur.argv);
    cur.argv = argv;
    cur.argc = argc;
    cur.flags |= CUR_REWRITTEN;
}

void effectsAlsoSlow(int dbid, int argc, const EffectArg *args) {
    pendingPush(dbid, EFFECT_ALL, argc, argvFromArgs(argc, args), 1);
    if (!inCommand && !held) flushUnit();
}

void effectsAlsoTo(int dbid, int target, int argc, const EffectArg *args) {
    if (!effectsOn) return;
    pendingPush(dbid, target & (EFFECT_ALL | EFFECT_UNWRAPPED), argc, argvFromArgs(argc, args), 1);
    if (!inCommand && !held) flushUnit();
}

void effectsPrevent(void) {
    if (effectsOn) cur.flags |= CUR_PREVENT;
}

void effectsForce(int target) {
    if (!effectsOn) return;
    cur.flags |= CUR_FORCE;
    cur.forceTarget |= target;
}

void effectsDeleteKey(int dbid, const char *key, size_t len, int lazy) {
    if (!effectsOn) return;
    EffectArg args[2] = {lazy ? EA_STR("UNLINK") : EA_STR("DEL"), EA_BUF(key, len)};
    effectsAlso(dbid, 2, args);
}

void effectsEndUnitAtTop(void) {
    if (effectsOn && inCommand == 1 && !held) flushUnit();
}

void effectsHold(void) { held++; }

void effectsSuppress(int on) { suppressed += on ? 1 : (suppressed > 0 ? -1 : 0); }

void effectsRelease(void) {
    if (held > 0) held--;
    if (held || inCommand) return;
    flushUnit();
}

/* --- RESP encoding (AOF and replication write the same bytes, through
 * proto's one encoder of a command) --- */

sds effectsAppendResp(sds buf, int *selectedDb, const Effect *ops, int count, int target) {
    for (int i = 0; i < count; i++) {
        const Effect *e = &ops[i];
        if (!(e->target & target)) continue;
        if (e->dbid >= 0 && e->dbid != *selectedDb) {
            char db[UTIL_LONG_STR_SIZE];
            const char *sel[2] = {"SELECT", db};
            size_t lens[2] = {6, (size_t)longLongToString(db, sizeof(db), e->dbid)};
            buf = respCatCommandLen(buf, 2, sel, lens);
            *selectedDb = e->dbid;
        }
        buf = respCatCommand(buf, e->argc, e->argv);
    }
    return buf;
}

/* --- the test-only sink --- */

typedef struct TestSink {
    int fd;
    int selectedDb;
} TestSink;

static void testSinkWrite(const Effect *ops, int count, void *ctx) {
    TestSink *ts = ctx;
    sds buf = effectsAppendResp(sdsEmpty(), &ts->selectedDb, ops, count, EFFECT_AOF);
    size_t off = 0, len = sdsLen(buf);
    while (off < len) {
        ssize_t w = write(ts->fd, buf + off, len - off);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) {
            serverLog(LL_WARNING, "Writing the test effects file failed: %s", strerror(errno));
            break;
        }
        off += (size_t)w;
    }
    sdsFree(buf);
}

void effectsInitTestSink(void) {
    const char *path = getenv("CAIRN_TEST_EFFECTS_FILE");
    if (!path || !path[0]) return;
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd == -1) {
        serverLog(LL_WARNING, "Can't open the test effects file %s: %s", path, strerror(errno));
        return;
    }
    TestSink *ts = xmalloc(sizeof(*ts));
    ts->fd = fd;
    ts->selectedDb = -1;
    effectsAddSink(testSinkWrite, ts, EFFECT_AOF);
    serverLog(LL_WARNING, "Test only: writing every write's effects to %s (CAIRN_TEST_EFFECTS_FILE)", path);
}
