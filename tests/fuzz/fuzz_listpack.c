/* fuzz_listpack.c -- libFuzzer target for lpValidateIntegrity and
 * intsetValidateIntegrity on untrusted bytes (what the RDB loader and
 * RESTORE hand them).
 *
 * Input layout: byte 0 holds flags, the rest is the candidate blob, copied
 * to an exact-size heap buffer so ASan sees any read past it.  Flags:
 *   1  make the listpack header agree with the size and end with 0xFF, so
 *      mutations reach the entry checks instead of dying at the header
 *   2  set the element count to 65535 ("count it")
 * Checked: validation never reads out of bounds; a listpack it accepts can
 * be walked both ways with the same count, every element read, searched and
 * seeked; and mutating an accepted listpack (delete, insert, replace)
 * leaves one that still validates.  The same bytes are tried as an intset:
 * if accepted, every member is found and add/remove keep it valid.  Build
 * (as the Makefile's fuzz rule does for fuzz_resp):
 *   clang -std=c11 -D_GNU_SOURCE -g -O1 -Isrc -fsanitize=fuzzer,address,undefined \
 *     -o build/fuzz/fuzz_listpack tests/fuzz/fuzz_listpack.c src/ds/listpack.c \
 *     src/ds/intset.c src/ds/alloc.c src/ds/rand.c src/ds/util.c -lm
 *   ./build/fuzz/fuzz_listpack -max_total_time=60 tests/fuzz/corpus_listpack */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ds/alloc.h"
#include "ds/intset.h"
#include "ds/listpack.h"

#define FUZZ_ASSERT(c)                                                                                       \
    do {                                                                                                     \
        if (!(c)) abort();                                                                                   \
    } while (0)

static void walkListpack(unsigned char *lp) {
    unsigned long fwd = 0, back = 0;
    unsigned char buf[LP_INTBUF_SIZE];
    unsigned int len;
    for (unsigned char *p = lpFirst(lp); p; p = lpNext(lp, p)) {
        unsigned char *v = lpGetValue(p, &len, buf, NULL, NULL);
        FUZZ_ASSERT(lpCompare(p, v, len) == 1);
        fwd++;
    }
    for (unsigned char *p = lpLast(lp); p; p = lpPrev(lp, p)) back++;
    FUZZ_ASSERT(fwd == back);
    FUZZ_ASSERT(lpLength(lp) == fwd);
    if (fwd) {
        FUZZ_ASSERT(lpSeek(lp, -1) == lpLast(lp));
        FUZZ_ASSERT(lpSeek(lp, 0) == lpFirst(lp));
        unsigned char *mid = lpSeek(lp, (long)(fwd / 2));
        unsigned char *v = lpGetValue(mid, &len, buf, NULL, NULL);
        unsigned char *f = lpFind(lp, lpFirst(lp), v, len, 0);
        FUZZ_ASSERT(f != NULL && f <= mid);
    }
    FUZZ_ASSERT(lpSeek(lp, (long)fwd) == NULL);
}

static void fuzzListpack(unsigned char *lp, size_t n) {
    if (!lpValidateIntegrity(lp, n, 1)) return;
    FUZZ_ASSERT(lpValidateIntegrity(lp, n, 0));
    walkListpack(lp);
    /* Mutations of an accepted listpack keep it valid. */
    unsigned char *p = lpFirst(lp), *np;
    if (p) {
        unsigned int len;
        unsigned char buf[LP_INTBUF_SIZE];
        unsigned char *v = lpGetValue(p, &len, buf, NULL, NULL);
        unsigned char copy[64];
        size_t clen = len < sizeof(copy) ? len : sizeof(copy);
        memcpy(copy, v, clen);
        lp = lpDelete(lp, p, &np);
        lp = lpAppend(lp, copy, clen);
        p = lpLast(lp);
        lp = lpReplace(lp, &p, (const unsigned char *)"-4097", 5);
        lp = lpInsert(lp, (const unsigned char *)"x", 1, lpFirst(lp), LP_AFTER, NULL);
        FUZZ_ASSERT(lpValidateIntegrity(lp, lpBytes(lp), 1));
        walkListpack(lp);
        lp = lpDeleteRange(lp, 0, 2);
        FUZZ_ASSERT(lpValidateIntegrity(lp, lpBytes(lp), 1));
    }
    lpFree(lp);
}

static void fuzzIntset(const unsigned char *data, size_t n) {
    unsigned char *b = xmalloc(n ? n : 1);
    memcpy(b, data, n);
    int deep = intsetValidateIntegrity(b, n, 1);
    if (deep) FUZZ_ASSERT(intsetValidateIntegrity(b, n, 0));
    if (!deep) {
        xfree(b);
        return;
    }
    intset *is = (intset *)b;
    long long v = 0, prev = 0;
    for (uint32_t i = 0; i < intsetLen(is); i++) {
        FUZZ_ASSERT(intsetGet(is, i, &v));
        FUZZ_ASSERT(i == 0 || v > prev);
        FUZZ_ASSERT(intsetFind(is, v));
        prev = v;
    }
    is = intsetAdd(is, v + 1 > v ? v + 1 : v, NULL);
    is = intsetAdd(is, -70000, NULL);
    is = intsetRemove(is, v, NULL);
    if (intsetLen(is)) FUZZ_ASSERT(intsetValidateIntegrity((unsigned char *)is, intsetBlobLen(is), 1));
    intsetFree(is);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    unsigned flags = data[0];
    data++;
    size--;
    fuzzIntset(data, size);
    unsigned char *lp = xmalloc(size ? size : 1);
    memcpy(lp, data, size);
    if ((flags & 1) && size >= 7) {
        lp[0] = (unsigned char)size;
        lp[1] = (unsigned char)(size >> 8);
        lp[2] = (unsigned char)(size >> 16);
        lp[3] = (unsigned char)(size >> 24);
        lp[size - 1] = 0xFF;
    }
    if ((flags & 2) && size >= 6) lp[4] = lp[5] = 0xFF;
    if (lpValidateIntegrity(lp, size, 1))
        fuzzListpack(lp, size); /* takes ownership */
    else
        xfree(lp);
    return 0;
}
