/* omap.c -- ordered byte-string map as a skiplist; see omap.h.
 *
 * Levels are drawn with p = 1/4 up to OMAP_MAX_LEVEL.  Level 0 is doubly
 * linked (prev) for backward iteration.  A node is laid out as the struct,
 * its `level` forward pointers, then the key bytes. */
#include "ds/omap.h"

#include <string.h>

#include "ds/alloc.h"
#include "ds/rand.h"

#define OMAP_MAX_LEVEL 24

struct OmapNode {
    void *val;
    OmapNode *prev;   /* level-0 predecessor, NULL for the first node */
    uint32_t keylen;
    uint8_t level;
    OmapNode *next[]; /* `level` forward links, then the key bytes */
};

struct Omap {
    OmapNode *head;   /* sentinel with OMAP_MAX_LEVEL links, no key */
    OmapNode *tail;
    size_t size;
    size_t bytes;
    int level;        /* highest level in use */
};

static unsigned char *nodeKey(const OmapNode *n) { return (unsigned char *)&n->next[n->level]; }

static int cmpKey(const OmapNode *n, const void *key, size_t len) {
    size_t l = n->keylen < len ? n->keylen : len;
    int c = l ? memcmp(nodeKey(n), key, l) : 0;
    if (c) return c;
    return n->keylen < len ? -1 : n->keylen > len ? 1 : 0;
}

static OmapNode *nodeCreate(int level, const void *key, size_t len, void *val) {
    OmapNode *n = xmalloc(sizeof(OmapNode) + (size_t)level * sizeof(OmapNode *) + len);
    n->val = val;
    n->prev = NULL;
    n->keylen = (uint32_t)len;
    n->level = (uint8_t)level;
    if (len) memcpy(nodeKey(n), key, len);
    return n;
}

Omap *omapCreate(void) {
    Omap *m = xcalloc(sizeof(*m));
    m->head = nodeCreate(OMAP_MAX_LEVEL, NULL, 0, NULL);
    for (int i = 0; i < OMAP_MAX_LEVEL; i++) m->head->next[i] = NULL;
    m->level = 1;
    return m;
}

void omapFree(Omap *m, void (*freeVal)(void *)) {
    if (!m) return;
    OmapNode *n = m->head->next[0];
    while (n) {
        OmapNode *next = n->next[0];
        if (freeVal) freeVal(n->val);
        xfree(n);
        n = next;
    }
    xfree(m->head);
    xfree(m);
}

size_t omapSize(const Omap *m) { return m->size; }
size_t omapBytes(const Omap *m) { return sizeof(*m) + m->bytes; }

static int randomLevel(void) {
    int level = 1;
    uint64_t r = randNext();
    while ((r & 3) == 0 && level < OMAP_MAX_LEVEL) {
        level++;
        r >>= 2;
    }
    return level;
}

/* Fills update[] with the last node before key at each level; returns the
 * level-0 successor candidate. */
static OmapNode *findPath(const Omap *m, const void *key, size_t len, OmapNode **update) {
    OmapNode *x = m->head;
    for (int i = m->level - 1; i >= 0; i--) {
        while (x->next[i] && cmpKey(x->next[i], key, len) < 0) x = x->next[i];
        if (update) update[i] = x;
    }
    return x->next[0];
}

void *omapFind(const Omap *m, const void *key, size_t len) {
    OmapNode *n = findPath(m, key, len, NULL);
    return n && cmpKey(n, key, len) == 0 ? n->val : NULL;
}

int omapInsert(Omap *m, const void *key, size_t len, void *val) {
    OmapNode *update[OMAP_MAX_LEVEL];
    /* Appending past the tail is the common case (stream IDs grow). */
    OmapNode *n;
    if (m->tail && cmpKey(m->tail, key, len) < 0) {
        OmapNode *x = m->head;
        for (int i = m->level - 1; i >= 0; i--) {
            while (x->next[i]) x = x->next[i];
            update[i] = x;
        }
        n = NULL;
    } else {
        n = findPath(m, key, len, update);
        if (n && cmpKey(n, key, len) == 0) return 0;
    }
    int level = randomLevel();
    if (level > m->level) {
        for (int i = m->level; i < level; i++) update[i] = m->head;
        m->level = level;
    }
    OmapNode *x = nodeCreate(level, key, len, val);
    for (int i = 0; i < level; i++) {
        x->next[i] = update[i]->next[i];
        update[i]->next[i] = x;
    }
    x->prev = update[0] == m->head ? NULL : update[0];
    if (x->next[0]) x->next[0]->prev = x;
    else m->tail = x;
    m->size++;
    m->bytes += sizeof(OmapNode) + (size_t)level * sizeof(OmapNode *) + len;
    return 1;
}

int omapReplace(Omap *m, const void *key, size_t len, void *val) {
    OmapNode *n = findPath(m, key, len, NULL);
    if (!n || cmpKey(n, key, len) != 0) return 0;
    n->val = val;
    return 1;
}

void *omapDelete(Omap *m, const void *key, size_t len) {
    OmapNode *update[OMAP_MAX_LEVEL];
    OmapNode *n = findPath(m, key, len, update);
    if (!n || cmpKey(n, key, len) != 0) return NULL;
    for (int i = 0; i < m->level; i++)
        if (update[i]->next[i] == n) update[i]->next[i] = n->next[i];
    if (n->next[0]) n->next[0]->prev = n->prev;
    else m->tail = n->prev;
    while (m->level > 1 && m->head->next[m->level - 1] == NULL) m->level--;
    m->size--;
    m->bytes -= sizeof(OmapNode) + (size_t)n->level * sizeof(OmapNode *) + n->keylen;
    void *val = n->val;
    xfree(n);
    return val;
}

OmapNode *omapFirst(const Omap *m) { return m->head->next[0]; }
OmapNode *omapLast(const Omap *m) { return m->tail; }
OmapNode *omapNext(const OmapNode *n) { return n->next[0]; }
OmapNode *omapPrev(const OmapNode *n) { return n->prev; }

OmapNode *omapSeekGE(const Omap *m, const void *key, size_t len, int strict) {
    OmapNode *n = findPath(m, key, len, NULL);
    if (strict && n && cmpKey(n, key, len) == 0) n = n->next[0];
    return n;
}

OmapNode *omapSeekLE(const Omap *m, const void *key, size_t len, int strict) {
    OmapNode *n = findPath(m, key, len, NULL);
    if (n && !strict && cmpKey(n, key, len) == 0) return n;
    /* n is the first node >= key (or NULL): the answer is its predecessor. */
    return n ? n->prev : m->tail;
}

const unsigned char *omapKey(const OmapNode *n, size_t *len) {
    *len = n->keylen;
    return nodeKey(n);
}
void *omapValue(const OmapNode *n) { return n->val; }
void omapSetValue(OmapNode *n, void *val) { n->val = val; }
