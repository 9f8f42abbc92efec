/* test_stream.c -- unit tests for src/ds/omap.c and src/ds/stream.c.
 *
 * omap: a random model against a sorted array (insert, delete, seeks in
 * both directions, the radix tree's order for keys that are prefixes).
 * stream: appends across node limits, iteration forward and backward over
 * ranges, deletions (a node goes with its last live entry), trims by
 * MAXLEN and MINID (exact and by whole nodes), node validation of what
 * streamAppend builds and of corrupted copies (run under ASan/UBSan). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "ds/alloc.h"
#include "ds/omap.h"
#include "ds/rand.h"
#include "ds/sds.h"
#include "ds/stream.h"

static int cmpKeys(const void *a, const void *b) {
    const sds x = *(const sds *)a, y = *(const sds *)b;
    size_t l = sdsLen(x) < sdsLen(y) ? sdsLen(x) : sdsLen(y);
    int c = memcmp(x, y, l);
    if (c) return c;
    return sdsLen(x) < sdsLen(y) ? -1 : sdsLen(x) > sdsLen(y);
}

static void test_omap_model(void **state) {
    (void)state;
    randSeed(7);
    Omap *m = omapCreate();
    sds model[600];
    size_t n = 0;
    for (int round = 0; round < 4000; round++) {
        char buf[8];
        size_t len = (size_t)randBounded(4);
        for (size_t i = 0; i < len; i++) buf[i] = (char)('a' + randBounded(3));
        sds k = sdsNewLen(buf, len);
        size_t at = n;
        for (size_t i = 0; i < n; i++)
            if (cmpKeys(&model[i], &k) == 0) at = i;
        if (randBounded(3) && n < 600) {
            int added = omapInsert(m, k, sdsLen(k), (void *)(uintptr_t)(round + 1));
            assert_int_equal(added, at == n);
            if (added) model[n++] = k;
            else sdsFree(k);
        } else {
            void *v = omapDelete(m, k, sdsLen(k));
            assert_int_equal(v != NULL, at != n);
            if (at != n) {
                sdsFree(model[at]);
                model[at] = model[--n];
            }
            sdsFree(k);
        }
        assert_int_equal(omapSize(m), n);
    }
    qsort(model, n, sizeof(sds), cmpKeys);
    size_t i = 0;
    for (OmapNode *x = omapFirst(m); x; x = omapNext(x), i++) {
        size_t len;
        const unsigned char *k = omapKey(x, &len);
        assert_int_equal(len, sdsLen(model[i]));
        assert_memory_equal(k, model[i], len);
    }
    assert_int_equal(i, n);
    i = n;
    for (OmapNode *x = omapLast(m); x; x = omapPrev(x)) i--;
    assert_int_equal(i, 0);
    /* seeks against the model */
    for (size_t j = 0; j < n; j++) {
        OmapNode *ge = omapSeekGE(m, model[j], sdsLen(model[j]), 1);
        OmapNode *le = omapSeekLE(m, model[j], sdsLen(model[j]), 1);
        size_t len;
        if (j + 1 < n) assert_memory_equal(omapKey(ge, &len), model[j + 1], sdsLen(model[j + 1]));
        else assert_null(ge);
        if (j > 0) assert_memory_equal(omapKey(le, &len), model[j - 1], sdsLen(model[j - 1]));
        else assert_null(le);
    }
    for (size_t j = 0; j < n; j++) sdsFree(model[j]);
    omapFree(m, NULL);
}

static Stream *build(int entries, long long maxEntries) {
    Stream *s = streamCreate();
    for (int i = 1; i <= entries; i++) {
        sds fv[4] = {sdsNew("f"), sdsCatPrintf(sdsEmpty(), "%d", i), sdsNew(i % 3 ? "g" : "h"), sdsNew("v")};
        StreamID id = {(uint64_t)i * 10, (uint64_t)(i % 2)};
        streamAppend(s, &id, fv, 2, 4096, maxEntries);
        for (int k = 0; k < 4; k++) sdsFree(fv[k]);
    }
    return s;
}

static int countRange(Stream *s, uint64_t from, uint64_t to, int rev) {
    StreamIter it;
    StreamID a = {from, 0}, b = {to, UINT64_MAX}, id, prev = {0, 0};
    streamIterStart(&it, s, &a, &b, rev);
    long long nf;
    int n = 0;
    while (streamIterNext(&it, &id, &nf)) {
        assert_int_equal(nf, 2);
        if (n) assert_true(rev ? streamCompareID(&id, &prev) < 0 : streamCompareID(&id, &prev) > 0);
        assert_true(id.ms >= from && id.ms <= to);
        const unsigned char *f, *v;
        size_t fl, vl;
        streamIterField(&it, &f, &fl, &v, &vl);
        assert_memory_equal(f, "f", 1);
        assert_int_equal(atoll((const char *)v), (long long)(id.ms / 10));
        prev = id;
        n++;
    }
    return n;
}

static void test_stream_append_iterate(void **state) {
    (void)state;
    Stream *s = build(100, 7);
    assert_int_equal(s->length, 100);
    assert_int_equal(omapSize(s->nodes), 15);
    assert_int_equal(countRange(s, 0, UINT64_MAX, 0), 100);
    assert_int_equal(countRange(s, 0, UINT64_MAX, 1), 100);
    assert_int_equal(countRange(s, 155, 505, 0), 35);
    assert_int_equal(countRange(s, 155, 505, 1), 35);
    /* every node validates as built */
    for (OmapNode *n = omapFirst(s->nodes); n; n = omapNext(n)) {
        size_t kl;
        StreamID master, last;
        uint64_t live;
        streamDecodeID(omapKey(n, &kl), &master);
        unsigned char *lp = xmalloc(STREAM_Z_MAX_RAW);
        size_t len;
        const unsigned char *bytes = streamNodeBytes(s, n, &len);
        memcpy(lp, bytes, len);
        assert_int_equal(lpBytes(lp), len);
        assert_int_equal(streamValidateNode(lp, lpBytes(lp), &master, NULL, &last, &live), 1);
        /* any single-byte change is caught or still valid, never read past the end */
        unsigned char *copy = xmalloc(lpBytes(lp));
        for (size_t i = 0; i < lpBytes(lp); i++) {
            memcpy(copy, lp, lpBytes(lp));
            copy[i] ^= (unsigned char)(1 + randBounded(255));
            streamValidateNode(copy, lpBytes(lp), &master, NULL, &last, &live);
        }
        xfree(copy);
        xfree(lp);
    }
    streamFree(s);
}

static void test_stream_delete_trim(void **state) {
    (void)state;
    Stream *s = build(50, 5);
    StreamID id = {20, 0};
    assert_int_equal(streamDeleteID(s, &id), 1);
    assert_int_equal(streamDeleteID(s, &id), 0);
    assert_int_equal(s->length, 49);
    /* emptying the second node (ids 60..100) removes it */
    size_t nodes = omapSize(s->nodes);
    for (int i = 6; i <= 10; i++) {
        StreamID d = {(uint64_t)i * 10, (uint64_t)(i % 2)};
        assert_int_equal(streamDeleteID(s, &d), 1);
    }
    assert_int_equal(omapSize(s->nodes), nodes - 1);
    assert_int_equal(countRange(s, 0, UINT64_MAX, 1), 44);
    /* approximate MAXLEN removes whole nodes only */
    long long removed = streamTrim(s, 40, NULL, 1, 0);
    assert_int_equal(removed, 4);
    assert_int_equal(s->length, 40);
    removed = streamTrim(s, 37, NULL, 1, 0);
    assert_int_equal(removed, 0);
    removed = streamTrim(s, 37, NULL, 0, 0);
    assert_int_equal(removed, 3);
    StreamID minid = {300, 0};
    removed = streamTrim(s, 0, &minid, 0, 0);
    assert_int_equal(s->length, 21);
    assert_int_equal(countRange(s, 0, UINT64_MAX, 0), 21);
    assert_true(s->firstId.ms == 300);
    assert_int_equal(streamTrim(s, 0, NULL, 0, 0), 21);
    assert_int_equal(s->length, 0);
    streamFree(s);
}

static void test_rax_nodes(void **state) {
    (void)state;
    Stream *s = streamCreate();
    assert_int_equal(streamRaxNodes(s), 1);
    sds fv[2] = {sdsNew("a"), sdsNew("b")};
    StreamID id = {5, 5};
    streamAppend(s, &id, fv, 1, 4096, 1);
    assert_int_equal(streamRaxNodes(s), 2);
    id.seq = 6;
    streamAppend(s, &id, fv, 1, 4096, 1);
    /* root, the branch after 15 shared bytes, its two children (the keys) */
    assert_int_equal(streamRaxNodes(s), 4);
    sdsFree(fv[0]);
    sdsFree(fv[1]);
    streamFree(s);
}

/* XREADGROUP ... STREAMS s > for consumer c: delivers up to count entries
 * after the group's last-delivered ID; returns how many. */
static int readGroup(Stream *s, StreamCG *cg, StreamConsumer *c, int count, int noack, long long now) {
    StreamID start = cg->lastId, id;
    if (streamIncrID(&start) == -1) return 0;
    StreamIter it;
    streamIterStart(&it, s, &start, NULL, 0);
    long long nf;
    int n = 0;
    while (n < count && streamIterNext(&it, &id, &nf)) {
        int advanced;
        StreamNACK *nack = streamGroupDeliver(s, cg, c, &id, noack, now, &advanced);
        assert_int_equal(advanced, 1);
        if (noack) assert_null(nack);
        else assert_ptr_equal(nack->consumer, c);
        n++;
    }
    return n;
}

static void test_group_read_and_ack(void **state) {
    (void)state;
    Stream *s = build(40, 7); /* ids 10-0, 20-1, 30-0, ... in nodes of 7 */
    StreamID zero = {0, 0};
    StreamCG *cg = streamCreateCG(s, "g", 1, &zero, 0);
    assert_non_null(cg);
    assert_null(streamCreateCG(s, "g", 1, &zero, 0));
    StreamConsumer *alice = streamCreateConsumer(cg, "alice", 5, 1000);
    StreamConsumer *bob = streamCreateConsumer(cg, "bob", 3, 1000);
    assert_ptr_equal(streamLookupConsumer(cg, "bob", 3), bob);

    /* alice reads 10 (across compressed nodes), bob the next 5 */
    assert_int_equal(readGroup(s, cg, alice, 10, 0, 2000), 10);
    assert_int_equal(cg->lastId.ms, 100);
    assert_int_equal(cg->lastId.seq, 0);
    assert_int_equal(cg->entriesRead, 10);
    assert_int_equal(readGroup(s, cg, bob, 5, 0, 3000), 5);
    assert_int_equal(cg->lastId.ms, 150);
    assert_int_equal(cg->entriesRead, 15);
    assert_int_equal(omapSize(cg->pel), 15);
    assert_int_equal(omapSize(alice->pel), 10);
    assert_int_equal(omapSize(bob->pel), 5);

    /* XACK: pending ones go from both PELs, others count 0 */
    StreamID a1 = {10, 1}, a2 = {20, 0}, b1 = {110, 1}, none = {15, 0};
    assert_int_equal(streamGroupAck(cg, &a1), 1);
    assert_int_equal(streamGroupAck(cg, &a1), 0);
    assert_int_equal(streamGroupAck(cg, &none), 0);
    assert_int_equal(streamGroupAck(cg, &b1), 1);
    assert_int_equal(omapSize(cg->pel), 13);
    assert_int_equal(omapSize(alice->pel), 9);
    assert_int_equal(omapSize(bob->pel), 4);

    /* a history read by bob of alice's pending entry moves it to bob,
     * delivered once more from now; the last-delivered ID stays */
    int advanced;
    StreamNACK *n = streamGroupDeliver(s, cg, bob, &a2, 0, 5000, &advanced);
    assert_int_equal(advanced, 0);
    assert_ptr_equal(n->consumer, bob);
    assert_int_equal(n->deliveryTime, 5000);
    assert_int_equal(n->deliveryCount, 1);
    assert_int_equal(omapSize(alice->pel), 8);
    assert_int_equal(omapSize(bob->pel), 5);
    assert_int_equal(cg->lastId.ms, 150);

    /* NOACK reads move the group on without pending entries */
    assert_int_equal(readGroup(s, cg, alice, 3, 1, 6000), 3);
    assert_int_equal(cg->lastId.ms, 180);
    assert_int_equal(cg->entriesRead, 18);
    assert_int_equal(omapSize(cg->pel), 13);

    /* a deleted entry ahead: the counter becomes an estimate, exact while
     * nothing before the first entry was deleted */
    StreamID del = {200, 0};
    assert_int_equal(streamDeleteID(s, &del), 1);
    s->maxDeletedId = del;
    assert_int_equal(readGroup(s, cg, bob, 100, 0, 7000), 21);
    assert_int_equal(cg->lastId.ms, 400);
    assert_int_equal(cg->entriesRead, 40);
    assert_int_equal(omapSize(cg->pel), 34);

    /* acking everything bob holds empties his PEL; deleting alice drops hers */
    StreamID ids[64];
    int k = 0;
    for (OmapNode *p = omapFirst(bob->pel); p; p = omapNext(p)) {
        size_t kl;
        streamDecodeID(omapKey(p, &kl), &ids[k++]);
    }
    for (int i = 0; i < k; i++) assert_int_equal(streamGroupAck(cg, &ids[i]), 1);
    assert_int_equal(omapSize(bob->pel), 0);
    assert_int_equal(streamDeleteConsumer(cg, alice), 8);
    assert_int_equal(omapSize(cg->pel), 0);
    assert_null(streamLookupConsumer(cg, "alice", 5));
    assert_int_equal(streamDestroyCG(s, "g", 1), 1);
    assert_int_equal(streamDestroyCG(s, "g", 1), 0);
    streamFree(s);
}

int main(void) {
    xmallocRegisterThread();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_omap_model),
        cmocka_unit_test(test_stream_append_iterate),
        cmocka_unit_test(test_stream_delete_trim),
        cmocka_unit_test(test_rax_nodes),
        cmocka_unit_test(test_group_read_and_ack),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
