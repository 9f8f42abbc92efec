/* t_bitmap.c -- the bitmap commands: SETBIT, GETBIT, BITCOUNT, BITPOS,
 * BITOP, BITFIELD and BITFIELD_RO.
 *
 * A bitmap is an ordinary string value.  Bit 0 is the most significant bit
 * of byte 0; bits past the end of the string read as 0.  Commands that write
 * bits make the value raw (dbUnshareString) and grow it with zero bytes to
 * cover the highest bit they touch, even when no bit changes -- OBJECT
 * ENCODING shows "raw" afterwards, as in Redis.  Reads never convert.
 *
 * Offsets a client sends are limited like Redis's: a bit offset whose byte
 * (offset >> 3) is at or beyond proto-max-bulk-len is refused before any
 * memory is reserved.
 *
 * Writes notify "setbit" (BITOP: "set" / "del") and count as dirty only when
 * the string was created or grown or a bit really changed, as Redis 7.0
 * does.  The effects of SETBIT, BITOP and BITFIELD are the commands as
 * sent. */
#include <limits.h>
#include <stdint.h>
#include <string.h>

#include "core/client.h"
#include "core/command.h"
#include "core/errors.h"
#include "core/server.h"
#include "db/db.h"
#include "db/object.h"
#include "ds/alloc.h"
#include "ds/sds.h"
#include "ds/util.h"

#define ERR_BITFIELD_TYPE \
    "ERR Invalid bitfield type. Use something like i16 u8. Note that u64 is not supported but i64 is."

/* --- helpers --- */

/* Parse a bit offset.  With bits > 0 (BITFIELD) the form "#N" means N*bits.
 * Replies ERR_BIT_OFFSET and returns -1 when it is not an integer, negative,
 * or addresses a byte at or past proto-max-bulk-len. */
static int getBitOffsetOrReply(Client *c, const sds arg, int bits, uint64_t *out) {
    const char *p = arg;
    size_t len = sdsLen(arg);
    int scaled = bits > 0 && len > 0 && p[0] == '#';
    long long v;
    if (scaled) {
        p++;
        len--;
    }
    if (!stringToLongLong(p, len, &v) || v < 0) goto err;
    if (scaled) {
        if (v > LLONG_MAX / bits) goto err;
        v *= bits;
    }
    if ((v >> 3) >= server.cfg.protoMaxBulkLen) goto err;
    *out = (uint64_t)v;
    return 0;
err:
    replyError(c, ERR_BIT_OFFSET);
    return -1;
}

/* Look up key for a bit write reaching bit `maxbit`: create it (zeroed) when
 * missing, else make it raw and zero-extend it to cover maxbit.  Sets *grown
 * when the string was created or extended.  Returns the sds to edit and
 * stores the entry in *po; NULL after replying WRONGTYPE. */
static sds bitWriteTarget(Client *c, const sds key, uint64_t maxbit, kvobj **po, int *grown) {
    size_t need = (size_t)(maxbit >> 3) + 1;
    int wrong = 0;
    kvobj *o = lookupWriteOrReply(c, key, OBJ_STRING, &wrong);
    if (wrong) return NULL;
    sds s;
    *grown = 0;
    if (!o) {
        s = sdsNewLen(NULL, need);
        o = kvCreateRawString(key, sdsLen(key), s);
        dbAdd(c->db, o);
        *grown = 1;
    } else {
        s = dbUnshareString(c->db, &o);
        if (sdsLen(s) < need) {
            s = sdsGrowZero(s, need);
            kvSetPtr(o, s);
            *grown = 1;
        }
    }
    *po = o;
    return s;
}

static void notifyBitsChanged(Client *c, const sds key, long long changes) {
    signalModifiedKey(c, c->db, key, sdsLen(key));
    notifyKeyspaceEvent(NOTIFY_STRING, "setbit", key, sdsLen(key), c->db->id);
    serverIncrDirty(changes);
}

/* Bits set in p[0..n). */
static long long popcount(const unsigned char *p, size_t n) {
    long long count = 0;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, p + i, 8);
        count += __builtin_popcountll(w);
    }
    for (; i < n; i++) count += __builtin_popcount(p[i]);
    return count;
}

static int getBit(const unsigned char *p, uint64_t bit) { return (p[bit >> 3] >> (7 - (bit & 7))) & 1; }

/* Resolve a [start, end] range given by a client against a string of `total`
 * units (bytes or bits): negative indexes count from the end and are then
 * clamped.  Returns 0 when the range is empty. */
static int resolveRange(long long *start, long long *end, long long total) {
    if (*start < 0) *start += total;
    if (*end < 0) *end += total;
    if (*start < 0) *start = 0;
    if (*end < 0) *end = 0;
    if (*end >= total) *end = total - 1;
    return *start <= *end;
}

/* Parse an optional BYTE|BIT unit.  Returns -1 after a syntax error. */
static int parseUnitOrReply(Client *c, const sds arg, int *isBit) {
    if (argIs(arg, "bit")) *isBit = 1;
    else if (argIs(arg, "byte")) *isBit = 0;
    else {
        replyError(c, ERR_SYNTAX);
        return -1;
    }
    return 0;
}

/* --- SETBIT / GETBIT --- */

/* SETBIT key offset 0|1: reply the previous bit. */
static void setbitCommand(Client *c) {
    sds key = c->argv[1];
    uint64_t bit;
    long long on;
    if (getBitOffsetOrReply(c, c->argv[2], 0, &bit) == -1) return;
    if (getLongLongOrReply(c, c->argv[3], &on, ERR_BIT_VALUE) == -1) return;
    if (on != 0 && on != 1) {
        replyError(c, ERR_BIT_VALUE);
        return;
    }
    kvobj *o;
    int grown;
    sds s = bitWriteTarget(c, key, bit, &o, &grown);
    if (!s) return;
    unsigned char *byte = (unsigned char *)s + (bit >> 3);
    int shift = 7 - (int)(bit & 7);
    int old = (*byte >> shift) & 1;
    if (grown || old != on) {
        *byte = (unsigned char)((*byte & ~(1u << shift)) | ((unsigned)on << shift));
        notifyBitsChanged(c, key, 1);
    }
    replyLongLong(c, old);
}

/* GETBIT key offset */
static void getbitCommand(Client *c) {
    uint64_t bit;
    if (getBitOffsetOrReply(c, c->argv[2], 0, &bit) == -1) return;
    int wrong = 0;
    kvobj *o = lookupReadOrReply(c, c->argv[1], OBJ_STRING, &wrong);
    if (wrong) return;
    int v = 0;
    if (o) {
        char buf[UTIL_LONG_STR_SIZE];
        size_t len;
        const unsigned char *p = (const unsigned char *)kvStringBytes(o, buf, &len);
        if ((bit >> 3) < len) v = getBit(p, bit);
    }
    replyLongLong(c, v);
}

/* --- BITCOUNT / BITPOS --- */

/* BITCOUNT key [start end [BYTE|BIT]] */
static void bitcountCommand(Client *c) {
    /* Redis looks the key up first: a missing key answers 0 whatever the
     * other arguments are. */
    int wrong = 0;
    kvobj *o = lookupReadOrReply(c, c->argv[1], OBJ_STRING, &wrong);
    if (wrong) return;
    if (!o) {
        replyLongLong(c, 0);
        return;
    }
    long long start = 0, end = -1;
    int isBit = 0, ranged = c->argc >= 4;
    if (c->argc == 3 || c->argc > 5) {
        replyError(c, ERR_SYNTAX);
        return;
    }
    if (ranged) {
        if (getLongLongOrReply(c, c->argv[2], &start, NULL) == -1) return;
        if (getLongLongOrReply(c, c->argv[3], &end, NULL) == -1) return;
        /* Both negative and reversed: empty, before clamping could make it
         * not -- and, as in Redis, before the unit argument is checked. */
        if (start < 0 && end < 0 && start > end) {
            replyLongLong(c, 0);
            return;
        }
        if (c->argc == 5 && parseUnitOrReply(c, c->argv[4], &isBit) == -1) return;
    }
    char buf[UTIL_LONG_STR_SIZE];
    size_t len;
    const unsigned char *p = (const unsigned char *)kvStringBytes(o, buf, &len);
    long long total = isBit ? (long long)len * 8 : (long long)len;
    if (!ranged) {
        start = 0;
        end = total - 1;
    }
    if (!resolveRange(&start, &end, total)) {
        replyLongLong(c, 0);
        return;
    }
    if (!isBit) {
        replyLongLong(c, popcount(p + start, (size_t)(end - start + 1)));
        return;
    }
    /* Bit range: count whole bytes, then remove the bits outside the range
     * in the first and last byte. */
    long long sb = start >> 3, eb = end >> 3;
    long long count = popcount(p + sb, (size_t)(eb - sb + 1));
    unsigned headMask = (0xFFu << (8 - (start & 7))) & 0xFFu; /* bits before start */
    unsigned tailMask = (1u << (7 - (end & 7))) - 1;           /* bits after end */
    count -= __builtin_popcount(p[sb] & headMask);
    count -= __builtin_popcount(p[eb] & tailMask);
    replyLongLong(c, count);
}

/* First bit equal to `want` in bits [from, to] of p, or -1.  Whole bytes
 * and 8-byte words that cannot hold a match are skipped. */
static long long findBit(const unsigned char *p, long long from, long long to, int want) {
    const unsigned char skipByte = want ? 0x00 : 0xFF;
    const uint64_t skipWord = want ? 0 : UINT64_MAX;
    long long i = from;
    while (i <= to) {
        if ((i & 7) == 0) {
            while (i + 63 <= to) {
                uint64_t w;
                memcpy(&w, p + (i >> 3), 8);
                if (w != skipWord) break;
                i += 64;
            }
            while (i + 7 <= to && p[i >> 3] == skipByte) i += 8;
            if (i > to) break;
        }
        if (getBit(p, (uint64_t)i) == want) return i;
        i++;
    }
    return -1;
}

/* BITPOS key bit [start [end [BYTE|BIT]]]
 * When looking for a 0 and no end was given, the string counts as padded
 * with zeros on the right, so an all-ones range answers the first bit past
 * it; with an explicit end it answers -1. */
static void bitposCommand(Client *c) {
    long long want;
    if (getLongLongOrReply(c, c->argv[2], &want, NULL) == -1) return;
    if (want != 0 && want != 1) {
        replyError(c, "ERR The bit argument must be 1 or 0.");
        return;
    }
    /* Redis looks the key up before it parses the range: a missing key
     * answers whatever the range arguments are. */
    int wrong = 0;
    kvobj *o = lookupReadOrReply(c, c->argv[1], OBJ_STRING, &wrong);
    if (wrong) return;
    if (!o) {
        replyLongLong(c, want ? -1 : 0);
        return;
    }
    char buf[UTIL_LONG_STR_SIZE];
    size_t len;
    const unsigned char *p = (const unsigned char *)kvStringBytes(o, buf, &len);

    long long start = 0, end = 0;
    int isBit = 0, endGiven = 0;
    if (c->argc > 6) {
        replyError(c, ERR_SYNTAX);
        return;
    }
    if (c->argc >= 4) {
        if (getLongLongOrReply(c, c->argv[3], &start, NULL) == -1) return;
        if (c->argc == 6 && parseUnitOrReply(c, c->argv[5], &isBit) == -1) return;
        if (c->argc >= 5) {
            if (getLongLongOrReply(c, c->argv[4], &end, NULL) == -1) return;
            endGiven = 1;
        }
    }
    long long total = isBit ? (long long)len * 8 : (long long)len;
    if (!endGiven) end = total - 1;
    if (c->argc == 3) start = 0;
    if (!resolveRange(&start, &end, total)) {
        replyLongLong(c, -1);
        return;
    }
    long long fromBit = isBit ? start : start * 8;
    long long toBit = isBit ? end : end * 8 + 7;
    long long pos = findBit(p, fromBit, toBit, (int)want);
    if (pos == -1 && want == 0 && !endGiven) pos = toBit + 1;
    replyLongLong(c, pos);
}

/* --- BITOP --- */

enum { BITOP_AND, BITOP_OR, BITOP_XOR, BITOP_NOT };

/* BITOP AND|OR|XOR|NOT destkey key [key ...]: missing keys and the short end
 * of shorter strings read as zero bytes.  An empty result deletes destkey.
 * Replies the result length. */
static void bitopCommand(Client *c) {
    sds opname = c->argv[1], dest = c->argv[2];
    int op;
    if (argIs(opname, "and")) op = BITOP_AND;
    else if (argIs(opname, "or")) op = BITOP_OR;
    else if (argIs(opname, "xor")) op = BITOP_XOR;
    else if (argIs(opname, "not")) op = BITOP_NOT;
    else {
        replyError(c, ERR_SYNTAX);
        return;
    }
    if (op == BITOP_NOT && c->argc != 4) {
        replyError(c, "ERR BITOP NOT must be called with a single source key.");
        return;
    }

    /* Copy the sources first: the destination may be one of them. */
    int n = c->argc - 3;
    sds *src = xcalloc((size_t)n * sizeof(sds));
    size_t maxlen = 0;
    for (int j = 0; j < n; j++) {
        int wrong = 0;
        kvobj *o = lookupReadOrReply(c, c->argv[j + 3], OBJ_STRING, &wrong);
        if (wrong) goto cleanup;
        src[j] = o ? kvStringDup(o) : sdsEmpty();
        if (sdsLen(src[j]) > maxlen) maxlen = sdsLen(src[j]);
    }

    if (maxlen == 0) {
        if (dbDelete(c->db, dest, sdsLen(dest))) {
            signalModifiedKey(c, c->db, dest, sdsLen(dest));
            notifyKeyspaceEvent(NOTIFY_GENERIC, "del", dest, sdsLen(dest), c->db->id);
            serverIncrDirty(1);
        }
        replyLongLong(c, 0);
        goto cleanup;
    }

    sds res = sdsNewLen(NULL, maxlen);
    unsigned char *r = (unsigned char *)res;
    for (size_t i = 0; i < maxlen; i++) {
        unsigned char acc = i < sdsLen(src[0]) ? (unsigned char)src[0][i] : 0;
        if (op == BITOP_NOT) acc = (unsigned char)~acc;
        for (int j = 1; j < n; j++) {
            unsigned char b = i < sdsLen(src[j]) ? (unsigned char)src[j][i] : 0;
            if (op == BITOP_AND) acc &= b;
            else if (op == BITOP_OR) acc |= b;
            else acc ^= b;
        }
        r[i] = acc;
    }
    dbSetKey(c->db, kvCreateRawString(dest, sdsLen(dest), res), 0);
    signalModifiedKey(c, c->db, dest, sdsLen(dest));
    notifyKeyspaceEvent(NOTIFY_STRING, "set", dest, sdsLen(dest), c->db->id);
    serverIncrDirty(1);
    replyLongLong(c, (long long)maxlen);

cleanup:
    for (int j = 0; j < n; j++) sdsFree(src[j]);
    xfree(src);
}

/* --- BITFIELD --- */

enum { BF_GET, BF_SET, BF_INCRBY };
enum { BF_WRAP, BF_SAT, BF_FAIL };

typedef struct BitfieldOp {
    uint64_t offset;  /* first bit */
    long long value;  /* SET value or INCRBY increment */
    int opcode;       /* BF_* */
    int overflow;     /* BF_WRAP/SAT/FAIL in force for this op */
    int bits;         /* width: 1..64 signed, 1..63 unsigned */
    int isSigned;
} BitfieldOp;

/* Parse "i<bits>" / "u<bits>".  Returns -1 after replying the type error. */
static int getBitfieldTypeOrReply(Client *c, const sds arg, int *isSigned, int *bits) {
    long long b;
    size_t len = sdsLen(arg);
    if (len >= 2 && arg[0] == 'i') *isSigned = 1; /* lowercase only, as in Redis */
    else if (len >= 2 && arg[0] == 'u') *isSigned = 0;
    else goto err;
    if (!stringToLongLong(arg + 1, len - 1, &b) || b < 1 || b > (*isSigned ? 64 : 63)) goto err;
    *bits = (int)b;
    return 0;
err:
    replyError(c, ERR_BITFIELD_TYPE);
    return -1;
}

static uint64_t readBits(const unsigned char *p, uint64_t offset, int bits) {
    uint64_t v = 0;
    for (int i = 0; i < bits; i++) v = (v << 1) | (uint64_t)getBit(p, offset + (uint64_t)i);
    return v;
}

static void writeBits(unsigned char *p, uint64_t offset, int bits, uint64_t v) {
    for (int i = 0; i < bits; i++) {
        uint64_t bit = offset + (uint64_t)i;
        unsigned shift = 7 - (unsigned)(bit & 7);
        unsigned on = (unsigned)(v >> (bits - 1 - i)) & 1;
        p[bit >> 3] = (unsigned char)((p[bit >> 3] & ~(1u << shift)) | (on << shift));
    }
}

/* Sign-extend the low `bits` bits of v. */
static int64_t signExtend(uint64_t v, int bits) {
    if (bits < 64 && (v >> (bits - 1)) & 1) v |= UINT64_MAX << bits;
    return (int64_t)v;
}

/* Two's-complement subtraction without overflow trouble. */
static int64_t wrapSub(int64_t a, int64_t b) { return (int64_t)((uint64_t)a - (uint64_t)b); }

/* Does value + incr leave the field's range?  Returns 1 above, -1 below, 0
 * inside.  Unsigned fields take value as a uint64 (SET of -1 is above).
 *
 * For signed fields this reproduces Redis's test exactly, including one
 * quirk clients can see: the room left above (max - value) is computed with
 * wrap-around, so SET of a value below about -2^63 + 2^(bits-1) counts as
 * overflowing upwards (SAT stores the maximum, not the minimum). */
static int bitfieldRangeCheck(const BitfieldOp *op, int64_t value, int64_t incr) {
    int bits = op->bits;
    if (!op->isSigned) {
        uint64_t max = (UINT64_C(1) << bits) - 1; /* bits <= 63 */
        uint64_t v = (uint64_t)value;
        if (v > max || (incr > 0 && (uint64_t)incr > max - v)) return 1;
        if (incr < 0 && (uint64_t)-(incr + 1) + 1 > v) return -1;
        return 0;
    }
    int64_t max = bits == 64 ? INT64_MAX : (int64_t)((UINT64_C(1) << (bits - 1)) - 1);
    int64_t min = -max - 1;
    int64_t roomUp = wrapSub(max, value), roomDown = wrapSub(min, value);
    if (value > max || (bits != 64 && incr > roomUp) || (value >= 0 && incr > 0 && incr > roomUp)) return 1;
    if (value < min || (bits != 64 && incr < roomDown) || (value < 0 && incr < 0 && incr < roomDown)) return -1;
    return 0;
}

/* The field value after adding `incr` to `value` under the op's overflow
 * policy.  Returns 1 on overflow (then *out is the wrapped or saturated
 * value; unused for FAIL), 0 otherwise. */
static int bitfieldAdd(const BitfieldOp *op, int64_t value, int64_t incr, int64_t *out) {
    int dir = bitfieldRangeCheck(op, value, incr);
    uint64_t sum = (uint64_t)value + (uint64_t)incr; /* modular */
    if (dir == 0) {
        *out = (int64_t)sum;
        return 0;
    }
    if (op->overflow == BF_SAT) {
        if (op->isSigned) {
            int64_t max = op->bits == 64 ? INT64_MAX : (int64_t)((UINT64_C(1) << (op->bits - 1)) - 1);
            *out = dir > 0 ? max : -max - 1;
        } else {
            *out = dir > 0 ? (int64_t)((UINT64_C(1) << op->bits) - 1) : 0;
        }
    } else { /* WRAP: keep the low bits, as the field stores them */
        if (op->bits < 64) sum &= (UINT64_C(1) << op->bits) - 1;
        *out = op->isSigned ? signExtend(sum, op->bits) : (int64_t)sum;
    }
    return 1;
}

/* Read a field from a value that may be shorter than the field. */
static int64_t readField(const unsigned char *p, size_t len, const BitfieldOp *op) {
    unsigned char buf[9] = {0};
    uint64_t byte = op->offset >> 3;
    for (uint64_t i = 0; i < 9 && byte + i < len; i++) buf[i] = p[byte + i];
    uint64_t v = readBits(buf, op->offset & 7, op->bits);
    return op->isSigned ? signExtend(v, op->bits) : (int64_t)v;
}

/* Parse the subcommands of BITFIELD into ops.  Returns the op count, or -1
 * after replying an error; *writes is set when any op writes and *maxbit to
 * the highest bit a write reaches. */
static int parseBitfieldOps(Client *c, BitfieldOp **opsOut, int *writes, uint64_t *maxbit) {
    BitfieldOp *ops = NULL;
    int n = 0, overflow = BF_WRAP;
    *writes = 0;
    *maxbit = 0;
    for (int j = 2; j < c->argc; j++) {
        int rem = c->argc - j - 1;
        sds sub = c->argv[j];
        BitfieldOp op = {0};
        if (argIs(sub, "get") && rem >= 2) {
            op.opcode = BF_GET;
        } else if (argIs(sub, "set") && rem >= 3) {
            op.opcode = BF_SET;
        } else if (argIs(sub, "incrby") && rem >= 3) {
            op.opcode = BF_INCRBY;
        } else if (argIs(sub, "overflow") && rem >= 1) {
            sds how = c->argv[++j];
            if (argIs(how, "wrap")) overflow = BF_WRAP;
            else if (argIs(how, "sat")) overflow = BF_SAT;
            else if (argIs(how, "fail")) overflow = BF_FAIL;
            else {
                replyError(c, "ERR Invalid OVERFLOW type specified");
                goto err;
            }
            continue;
        } else {
            replyError(c, ERR_SYNTAX);
            goto err;
        }
        if (getBitfieldTypeOrReply(c, c->argv[j + 1], &op.isSigned, &op.bits) == -1) goto err;
        if (getBitOffsetOrReply(c, c->argv[j + 2], op.bits, &op.offset) == -1) goto err;
        if (op.opcode != BF_GET) {
            *writes = 1;
            uint64_t last = op.offset + (uint64_t)op.bits - 1;
            if (last > *maxbit) *maxbit = last;
            if (getLongLongOrReply(c, c->argv[j + 3], &op.value, NULL) == -1) goto err;
        }
        op.overflow = overflow;
        ops = xrealloc(ops, (size_t)(n + 1) * sizeof(*ops));
        ops[n++] = op;
        j += op.opcode == BF_GET ? 2 : 3;
    }
    *opsOut = ops;
    return n;
err:
    xfree(ops);
    return -1;
}

/* BITFIELD key [GET type offset] [SET type offset value]
 *              [INCRBY type offset increment] [OVERFLOW WRAP|SAT|FAIL] ...
 * readOnly: BITFIELD_RO, which accepts GET only. */
static void bitfieldGeneric(Client *c, int readOnly) {
    sds key = c->argv[1];
    BitfieldOp *ops = NULL;
    int writes;
    uint64_t maxbit;
    int n = parseBitfieldOps(c, &ops, &writes, &maxbit);
    if (n == -1) return;

    kvobj *o = NULL;
    sds s = NULL;
    int grown = 0;
    if (!writes) {
        int wrong = 0;
        o = lookupReadOrReply(c, key, OBJ_STRING, &wrong);
        if (wrong) goto cleanup;
    } else if (readOnly) {
        replyError(c, "ERR BITFIELD_RO only supports the GET subcommand");
        goto cleanup;
    } else {
        s = bitWriteTarget(c, key, maxbit, &o, &grown);
        if (!s) goto cleanup;
    }

    char buf[UTIL_LONG_STR_SIZE];
    size_t len = 0;
    const unsigned char *p = NULL;
    if (o) p = (const unsigned char *)kvStringBytes(o, buf, &len);

    long long changes = 0;
    replyArrayLen(c, n);
    for (int i = 0; i < n; i++) {
        const BitfieldOp *op = &ops[i];
        int64_t old = readField(p, len, op);
        if (op->opcode == BF_GET) {
            replyLongLong(c, old);
            continue;
        }
        int64_t val;
        int over;
        if (op->opcode == BF_INCRBY) over = bitfieldAdd(op, old, op->value, &val);
        else over = bitfieldAdd(op, op->value, 0, &val);
        if (over && op->overflow == BF_FAIL) {
            replyNull(c);
            continue;
        }
        writeBits((unsigned char *)s, op->offset, op->bits, (uint64_t)val);
        if (grown || val != old) changes++;
        replyLongLong(c, op->opcode == BF_INCRBY ? val : old);
    }
    if (changes) notifyBitsChanged(c, key, changes);

cleanup:
    xfree(ops);
}

static void bitfieldCommand(Client *c) { bitfieldGeneric(c, 0); }
static void bitfieldroCommand(Client *c) { bitfieldGeneric(c, 1); }

/* --- command handlers (metadata: src/core/command_data.c) --- */

Command bitmapCommands[] = {
    {.name = "setbit", .proc = setbitCommand},
    {.name = "getbit", .proc = getbitCommand},
    {.name = "bitcount", .proc = bitcountCommand},
    {.name = "bitpos", .proc = bitposCommand},
    {.name = "bitop", .proc = bitopCommand},
    {.name = "bitfield", .proc = bitfieldCommand},
    {.name = "bitfield_ro", .proc = bitfieldroCommand},
    {0},
};
