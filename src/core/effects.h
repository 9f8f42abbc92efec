/* effects.h -- what a write does to the dataset, stated as the commands that
 * reproduce it (Redis 7.0.15's propagation), and the sinks that consume
 * them: the AOF and the replication stream.
 *
 * Every command runs through callCommand, which opens a frame here.  By
 * default a command that flagged CMD_WRITE and dirtied the dataset
 * propagates as sent.  A command may instead state its effect
 * (effectsRewrite: e.g. SETEX -> SET key value PXAT <ms>), add effects of
 * its own (effectsAlso: SPOP's SREMs) and suppress the default
 * (effectsPrevent), or force the default without a change
 * (effectsForce: FLUSHALL on an empty server, PUBLISH to replicas only).
 * Key deletions by expiry (lazy or active) and eviction go through
 * effectsDeleteKey, as DEL or UNLINK.
 *
 * Effects accumulate over nested calls (EXEC's queue, a script's
 * redis.call) in the order they happen; the DEL of a key a command found
 * expired comes before the command's own effect.  At the end of the
 * outermost call -- or of a unit outside any call: one active-expiry
 * deletion, one client served by a blocking pop -- the unit goes to every
 * sink once: one effect as is, several wrapped in MULTI ... EXEC.  A sink
 * keeps its own selected database (effectsAppendResp emits SELECT when an
 * effect's database differs).
 *
 * With no sink registered every entry point returns at once: the hot path
 * pays one load and one branch per call. */
#ifndef CAIRN_EFFECTS_H
#define CAIRN_EFFECTS_H

#include <stddef.h>

#include "core/client.h"
#include "ds/sds.h"

/* Where an effect goes. */
#define EFFECT_AOF (1 << 0)
#define EFFECT_REPL (1 << 1)
#define EFFECT_ALL (EFFECT_AOF | EFFECT_REPL)
/* With EFFECT_AOF/REPL: a command of Cairn's own that a Redis 7.0 replica
 * or AOF reader does not know (PEXPIREMEMBERAT).  It never goes inside a
 * unit's MULTI/EXEC (Redis would discard the whole transaction over the
 * unknown command): the unit is handed over in order as runs of the other
 * effects (each wrapped when it holds several) and such effects alone. */
#define EFFECT_UNWRAPPED (1 << 2)

typedef struct Effect {
    int dbid;
    int target;   /* EFFECT_* */
    int argc;
    sds *argv;
    int owned;    /* argv and its strings belong to the effects module */
} Effect;

/* A sink receives one unit: ops[0..count), MULTI/EXEC included when the
 * unit holds several effects.  Only valid during the call.  A sink states
 * the targets it consumes (the AOF: EFFECT_AOF; replication, once it has a
 * backlog: EFFECT_REPL).  As in Redis, an effect no registered sink wants
 * is not recorded at all, so it does not count towards MULTI wrapping
 * either (a PUBLISH, replicas only, next to a SET in one script reaches an
 * AOF-only server as the bare SET). */
typedef void EffectsSinkFn(const Effect *ops, int count, void *ctx);
void effectsAddSink(EffectsSinkFn *fn, void *ctx, int targets);
void effectsRemoveSink(EffectsSinkFn *fn, void *ctx);

/* Nonzero while at least one sink is registered. */
extern int effectsOn;

/* The frame callCommand keeps on its stack around one command. */
typedef struct EffectsFrame {
    int on;            /* effectsOn when the frame opened */
    int flags;         /* the enclosing command's state, restored on leave */
    int target, forceTarget;
    int argc;
    sds *argv;
} EffectsFrame;

void effectsEnterSlow(EffectsFrame *f);
void effectsLeaveSlow(EffectsFrame *f, Client *c, Command *cmd, long long dirty, int outermost);

/* Open a frame for c's command (before cmd->proc). */
static inline void effectsEnter(EffectsFrame *f) {
    f->on = effectsOn;
    if (f->on) effectsEnterSlow(f);
}

/* Close it: record the command's own effect (if any) and, at the
 * outermost call, hand the unit to the sinks.  dirty is the change of
 * server.dirty over the call. */
static inline void effectsLeave(EffectsFrame *f, Client *c, Command *cmd, long long dirty, int outermost) {
    if (f->on | effectsOn) effectsLeaveSlow(f, c, cmd, dirty, outermost);
}

/* --- what a command calls --- */

/* An argument for the builders below: bytes, or a number in decimal. */
typedef struct EffectArg {
    const char *p;
    size_t len;
    long long num;
    int isNum;
} EffectArg;
#define EA_STR(s) ((EffectArg){(s), sizeof(s) - 1, 0, 0})
#define EA_BUF(s, l) ((EffectArg){(s), (l), 0, 0})
#define EA_SDS(s) ((EffectArg){(s), sdsLen(s), 0, 0})
#define EA_NUM(n) ((EffectArg){NULL, 0, (n), 1})

void effectsRewriteSlow(int argc, const EffectArg *args);
void effectsRewriteSentSlow(const Client *c, int argc, int n, const int *pos, const EffectArg *args);
void effectsAlsoSlow(int dbid, int argc, const EffectArg *args);

/* The builders below are inline so that, with no sink, a caller's argument
 * array is never even filled in. */

/* The running command propagates as args instead of as sent (still only
 * when it dirtied the dataset, in the database it ends in). */
static inline void effectsRewrite(int argc, const EffectArg *args) {
    if (effectsOn) effectsRewriteSlow(argc, args);
}
/* The command as sent, cut to its first argc arguments, with argument
 * pos[k] replaced by args[k] for k < n (EXPIRE -> PEXPIREAT keeping its
 * options, BLMOVE -> LMOVE without the timeout). */
static inline void effectsRewriteSent(const Client *c, int argc, int n, const int *pos, const EffectArg *args) {
    if (effectsOn) effectsRewriteSentSlow(c, argc, n, pos, args);
}
/* Add an effect now, before the running command's own. */
static inline void effectsAlso(int dbid, int argc, const EffectArg *args) {
    if (effectsOn) effectsAlsoSlow(dbid, argc, args);
}
/* Like effectsAlso, for the given targets only (EFFECT_*, EFFECT_UNWRAPPED
 * kept); a dbid of -1
 * goes without SELECT, in whatever database the sink has selected (DEBUG
 * REPLICATE). */
void effectsAlsoTo(int dbid, int target, int argc, const EffectArg *args);
/* The running command's own effect is dropped (it stated its effects with
 * effectsAlso). */
void effectsPrevent(void);
/* The running command propagates as sent to target even if it changed
 * nothing. */
void effectsForce(int target);
/* Where the own effects of the commands called next go (a script's
 * redis.set_repl: REPL_NONE/AOF/REPLICA/ALL are 0..3, as EFFECT_*); the
 * effects they add (SPOP's SREMs) and expiry deletions are not limited.
 * The next frame opened takes it (and resets it to EFFECT_ALL). */
extern int effectsCallMask;
static inline int effectsSetCallMask(int mask) {
    int old = effectsCallMask;
    effectsCallMask = mask & EFFECT_ALL;
    return old;
}

/* A key deleted by expiry or eviction: DEL (UNLINK when lazy).  Outside a
 * command or a held unit it is a unit of its own. */
void effectsDeleteKey(int dbid, const char *key, size_t len, int lazy);

/* Hand what is pending to the sinks now, as a unit of its own, when the
 * running command is the outermost call (not inside EXEC or a script) and
 * nothing is held.  SCAN and RANDOMKEY call it after each key they delete
 * by expiry: Redis propagates those DELs one by one, never wrapped in
 * MULTI/EXEC, for commands that touch arbitrary keys. */
void effectsEndUnitAtTop(void);

/* Group what follows (outside any command) into one unit, ended by
 * effectsRelease, which hands it to the sinks: a blocked client served. */
void effectsHold(void);
void effectsRelease(void);

/* While suppressed (a nesting count), units are dropped instead of reaching
 * the sinks: the commands of an AOF being loaded are not effects. */
void effectsSuppress(int on);

/* Append ops as RESP commands to buf, preceded by SELECT whenever an op's
 * database differs from *selectedDb (updated); only ops for target. */
sds effectsAppendResp(sds buf, int *selectedDb, const Effect *ops, int count, int target);

/* The test-only sink: if CAIRN_TEST_EFFECTS_FILE names a file, every unit
 * is appended to it in RESP, as an AOF would hold it. */
void effectsInitTestSink(void);

#endif
