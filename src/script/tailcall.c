/* tailcall.c -- keep the script's frame when it returns a library call, on
 * LuaJIT.
 *
 * Lua 5.1 (Redis's Lua) keeps the caller's frame when it tail-calls a C
 * function; LuaJIT drops it.  So under LuaJIT `return redis.call('nosuch')`
 * raises an error that no longer knows its script line, and an argument
 * error in `return string.rep('x', 'y')` can no longer name 'rep'.  Before
 * LuaJIT compiles a script, tailcallRewrite turns each such
 *     return <call>        into        return H(<call>)
 * where H is a C function that returns all of its arguments: the call is
 * then an ordinary one (the frame stays) and every result passes through.
 *
 * Which calls.  Only calls whose callee is a library function: a path
 * (`a.b:c(...)`, `f'...'`, `f{...}`) rooted at a global name, or at a local
 * initialised from such a path and never assigned again (the common
 * `local rcall = redis.call`).  Scripts cannot create globals, so a global
 * root is always a sandbox library, whose functions are all C.  Any other
 * callee (a local function, a closure in a table, `(expr)(...)`) may be a
 * Lua function, and its tail call stays one: proper tail calls keep running
 * in constant stack, as the Lua manual promises.
 *
 * How.  A Lua 5.1 lexer (long brackets, comments, escapes, numbers, names)
 * turns the text into tokens; one pass over them tracks blocks and the
 * locals each declares (`local`, `local function`, parameters, `for`
 * variables), notes each local that is assigned, and records each
 * `return` followed by a call ending its block.  The decision which of
 * those to rewrite waits for the end of the pass, when all assignments are
 * known.
 *
 * The text keeps its line numbers: what is inserted (`H(`, `)`, the wrapper
 * before the first line and a newline plus `end` after the last) adds no
 * line break before any of the chunk's text.  H reaches the chunk as an
 * upvalue of the wrapper, named so that it matches no name in the chunk,
 * so scripts can neither see nor shadow it.
 *
 * Globals as upvalues (scriptRewrite).  The sandbox's globals are an empty
 * proxy that reads through to the real table, so every global a script
 * reads costs LuaJIT a metamethod lookup in C.  The same pass notes how
 * each global name is used; a name the chunk never assigns, whose value
 * never changes (a library) and whose every use behaves the same on an
 * upvalue as on a global, becomes a local of the wrapper under its own
 * name, so the chunk reads it as an upvalue.  Lexical scope does the rest:
 * a local of the chunk with that name shadows it as it shadowed the global.
 * What differs between an upvalue and a global is only the variable's
 * kind in some error texts ("attempt to call global 'redis'"), so names
 * used in such a way (a table called, a function indexed or measured,
 * either in arithmetic or concatenation) are left global.  KEYS and ARGV
 * change with each run: the engine sets the wrapper's locals through the
 * script's upvalues, which is only equal to setting the globals when the
 * chunk has no other way to read those (`_G`, `loadstring`, `load`,
 * `getfenv`, `setfenv`: lua-enable-deprecated-api keeps the last two; the
 * sandbox has no debug) and no local of those names. */
#include "script/tailcall.h"

#include <stdlib.h>
#include <string.h>

#include "ds/alloc.h"

/* ------------------------------------------------------------------ */
/* Tokens. */

enum { TK_EOF, TK_NAME, TK_STRING, TK_NUMBER, TK_OP, TK_KEYWORD };

enum {
    KW_AND, KW_BREAK, KW_DO, KW_ELSE, KW_ELSEIF, KW_END, KW_FALSE, KW_FOR, KW_FUNCTION, KW_IF, KW_IN,
    KW_LOCAL, KW_NIL, KW_NOT, KW_OR, KW_REPEAT, KW_RETURN, KW_THEN, KW_TRUE, KW_UNTIL, KW_WHILE
};

static const char *const keywords[] = {"and", "break", "do", "else", "elseif", "end", "false",
                                       "for", "function", "if", "in", "local", "nil", "not",
                                       "or", "repeat", "return", "then", "true", "until", "while"};

/* Operators of more than one character get a code of their own, so that a
 * test for '=' or '.' never matches '==' or '..'. */
#define OP_EQ 256     /* == */
#define OP_CONCAT 257 /* .. */
#define OP_DOTS 258   /* ... */
#define OP_OTHER 259  /* ~= <= >= :: */

typedef struct Token {
    int type;
    int code;     /* keyword id (TK_KEYWORD) or operator (TK_OP) */
    size_t start; /* byte offsets into the source: [start, end) */
    size_t end;
} Token;

typedef struct TokenList {
    Token *t;
    size_t n, cap;
} TokenList;

static void addToken(TokenList *tl, int type, int code, size_t start, size_t end) {
    if (tl->n == tl->cap) {
        tl->cap = tl->cap ? tl->cap * 2 : 64;
        tl->t = xrealloc(tl->t, tl->cap * sizeof(Token));
    }
    tl->t[tl->n++] = (Token){type, code, start, end};
}

static int isNameStart(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
static int isDigit(char c) { return c >= '0' && c <= '9'; }
static int isNameChar(char c) { return isNameStart(c) || isDigit(c); }

/* At s[i] == '[': the level of the long bracket opening there plus one
 * ("[[" -> 1, "[==[" -> 3), or 0 if none opens there. */
static size_t longBracketOpen(const char *s, size_t len, size_t i) {
    size_t j = i + 1;
    while (j < len && s[j] == '=') j++;
    return j < len && s[j] == '[' ? j - i : 0;
}

/* The offset just past the long bracket opened at i with the given
 * level (as longBracketOpen returns it), or len if it never closes. */
static size_t longBracketEnd(const char *s, size_t len, size_t i, size_t level) {
    for (size_t j = i + level + 1; j < len; j++) {
        if (s[j] != ']') continue;
        size_t k = j + 1, eq = 0;
        while (k < len && s[k] == '=') k++, eq++;
        if (eq == level - 1 && k < len && s[k] == ']') return k + 1;
    }
    return len;
}

/* The offset just past the quoted string starting at i. */
static size_t quotedEnd(const char *s, size_t len, size_t i) {
    char q = s[i];
    size_t j = i + 1;
    while (j < len && s[j] != q && s[j] != '\n') j += s[j] == '\\' ? 2 : 1;
    return j < len ? j + 1 : len;
}

/* The offset just past the number starting at i (decimal or hex, with an
 * exponent; LuaJIT's suffixes like LL and i are name characters). */
static size_t numberEnd(const char *s, size_t len, size_t i) {
    int hex = s[i] == '0' && i + 1 < len && (s[i + 1] == 'x' || s[i + 1] == 'X');
    size_t j = i;
    while (j < len) {
        char c = s[j];
        if (isNameChar(c) || c == '.') {
            j++;
        } else if ((c == '+' || c == '-') && !hex && (s[j - 1] == 'e' || s[j - 1] == 'E')) {
            j++;
        } else if ((c == '+' || c == '-') && hex && (s[j - 1] == 'p' || s[j - 1] == 'P')) {
            j++;
        } else {
            break;
        }
    }
    return j;
}

static int keywordCode(const char *s, size_t len) {
    for (int k = 0; k < (int)(sizeof(keywords) / sizeof(keywords[0])); k++)
        if (strlen(keywords[k]) == len && memcmp(keywords[k], s, len) == 0) return k;
    return -1;
}

/* The operator at s[i]; sets *end past it. */
static int operatorAt(const char *s, size_t len, size_t i, size_t *end) {
    char c = s[i], d = i + 1 < len ? s[i + 1] : 0;
    *end = i + 1;
    if (c == '.' && d == '.') {
        int three = i + 2 < len && s[i + 2] == '.';
        *end = i + (three ? 3 : 2);
        return three ? OP_DOTS : OP_CONCAT;
    }
    if (c == '=' && d == '=') {
        *end = i + 2;
        return OP_EQ;
    }
    if ((d == '=' && (c == '~' || c == '<' || c == '>')) || (c == ':' && d == ':')) {
        *end = i + 2;
        return OP_OTHER;
    }
    return (unsigned char)c;
}

/* Split src into tokens, ending with one TK_EOF. */
static void tokenize(const char *s, size_t len, TokenList *tl) {
    size_t i = 0;
    while (i < len) {
        char c = s[i];
        size_t end, level;
        if (c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f') {
            i++;
        } else if (c == '-' && i + 1 < len && s[i + 1] == '-') {
            if (i + 2 < len && s[i + 2] == '[' && (level = longBracketOpen(s, len, i + 2)) != 0) {
                i = longBracketEnd(s, len, i + 2, level);
            } else {
                while (i < len && s[i] != '\n') i++;
            }
        } else if (c == '[' && (level = longBracketOpen(s, len, i)) != 0) {
            end = longBracketEnd(s, len, i, level);
            addToken(tl, TK_STRING, 0, i, end);
            i = end;
        } else if (c == '"' || c == '\'') {
            end = quotedEnd(s, len, i);
            addToken(tl, TK_STRING, 0, i, end);
            i = end;
        } else if (isDigit(c) || (c == '.' && i + 1 < len && isDigit(s[i + 1]))) {
            end = numberEnd(s, len, i);
            addToken(tl, TK_NUMBER, 0, i, end);
            i = end;
        } else if (isNameStart(c)) {
            end = i;
            while (end < len && isNameChar(s[end])) end++;
            int kw = keywordCode(s + i, end - i);
            addToken(tl, kw < 0 ? TK_NAME : TK_KEYWORD, kw, i, end);
            i = end;
        } else {
            int op = operatorAt(s, len, i, &end);
            addToken(tl, TK_OP, op, i, end);
            i = end;
        }
    }
    addToken(tl, TK_EOF, 0, len, len);
}

/* ------------------------------------------------------------------ */
/* Scopes. */

#define ALIAS_NONE (-2)   /* not an alias of a library path */
#define ALIAS_GLOBAL (-1) /* initialised from a path rooted at a global */

typedef struct Local {
    const char *name; /* its name (in the source, but for `self`) */
    size_t len;
    long aliasOf;      /* ALIAS_*, or the local whose path it copies */
    int assigned;      /* assigned after its declaration */
} Local;

typedef struct Block {
    size_t activeBase; /* height of the active-local stack when it opened */
    int isFunction;
    long savedBrackets; /* bracket depth outside, for function bodies */
} Block;

/* A `return <call>` found: where its call starts and ends, and its root. */
typedef struct Candidate {
    size_t open, close;
    long root; /* the local the callee path starts from, or ALIAS_GLOBAL */
} Candidate;

/* How a global name is used; aliasable() reads these. */
#define USE_INDEX 1u     /* x.f, x[k], x:m() */
#define USE_CALL 2u      /* x(...), x'...', x{...} */
#define USE_VALUE 4u     /* anything else that reads it */
#define USE_LEN 8u       /* #x */
#define USE_ARITH 16u    /* an operand of arithmetic or `..` */
#define USE_ASSIGN 32u   /* assigned, or perhaps (x, y = ...) */
#define USE_NOT_READ 64u /* more than reading elements, #x, unpack(x), ipairs(x) */

typedef struct Global {
    const char *name;
    size_t len;
    int kind;      /* GLOBAL_* */
    unsigned uses; /* USE_* */
} Global;

typedef struct Scan {
    const char *src;
    Token *t;
    size_t ntok;
    Local *locals; /* every local declared, in order */
    size_t nlocals, capLocals;
    size_t *active; /* indexes into locals of those in scope */
    size_t nactive, capActive;
    Block *blocks;
    size_t nblocks, capBlocks;
    Candidate *cands;
    size_t ncands, capCands;
    long brackets; /* ( [ { depth inside the current function */
    /* `for` names wait for the `do` that opens their body. */
    size_t forFirst, forCount; /* their first token and how many */
    size_t forDepth;           /* nblocks when `for` was seen */
    int forPending;
    /* Globals (scriptRewrite only: kind is NULL for tailcallRewrite). */
    GlobalKindFn kind;
    void *kindCtx;
    Global globals[REWRITE_MAX_ALIASES]; /* those kind knows, by first use */
    size_t nglobals;
    int tooManyGlobals;
    int dynamicGlobals; /* `_G`, `loadstring`, `load`, `getfenv` or `setfenv` is used */
    int perRunShadowed; /* a local is named KEYS or ARGV */
} Scan;

#define GROW(arr, n, cap)                                                                                    \
    do {                                                                                                     \
        if ((n) == (cap)) {                                                                                  \
            (cap) = (cap) ? (cap) * 2 : 16;                                                                  \
            (arr) = xrealloc((arr), (cap) * sizeof(*(arr)));                                                 \
        }                                                                                                    \
    } while (0)

static int tokIs(const Scan *sc, size_t i, int type, int code) {
    return i < sc->ntok && sc->t[i].type == type && sc->t[i].code == code;
}

static int tokIsName(const Scan *sc, size_t i) { return i < sc->ntok && sc->t[i].type == TK_NAME; }

/* The local the name token i refers to, or ALIAS_GLOBAL. */
static long resolve(const Scan *sc, size_t i) {
    const Token *tk = &sc->t[i];
    size_t len = tk->end - tk->start;
    for (size_t a = sc->nactive; a > 0; a--) {
        const Local *l = &sc->locals[sc->active[a - 1]];
        if (l->len == len && memcmp(l->name, sc->src + tk->start, len) == 0)
            return (long)sc->active[a - 1];
    }
    return ALIAS_GLOBAL;
}

static void declare(Scan *sc, size_t tokIndex, long aliasOf) {
    GROW(sc->locals, sc->nlocals, sc->capLocals);
    const Token *tk = &sc->t[tokIndex];
    sc->locals[sc->nlocals] = (Local){sc->src + tk->start, tk->end - tk->start, aliasOf, 0};
    GROW(sc->active, sc->nactive, sc->capActive);
    sc->active[sc->nactive++] = sc->nlocals++;
}

static void openBlock(Scan *sc, int isFunction) {
    GROW(sc->blocks, sc->nblocks, sc->capBlocks);
    sc->blocks[sc->nblocks++] = (Block){sc->nactive, isFunction, sc->brackets};
    if (isFunction) sc->brackets = 0;
}

static void closeBlock(Scan *sc) {
    if (sc->nblocks == 0) return; /* the chunk's own level never closes */
    Block *b = &sc->blocks[--sc->nblocks];
    sc->nactive = b->activeBase;
    if (b->isFunction) sc->brackets = b->savedBrackets;
}

/* Is the library-ness of local k certain: an alias, by a chain of
 * aliases, of a path rooted at a global, and none of them reassigned? */
static int isLibraryLocal(const Scan *sc, long k) {
    while (k >= 0) {
        const Local *l = &sc->locals[k];
        if (l->assigned || l->aliasOf == ALIAS_NONE) return 0;
        k = l->aliasOf;
    }
    return 1;
}

/* Does token i end the statement before it (so what precedes is a whole
 * expression)? */
static int endsStatement(const Scan *sc, size_t i) {
    const Token *tk = &sc->t[i];
    if (tk->type == TK_EOF || tk->type == TK_NAME) return 1;
    if (tk->type == TK_OP) return tk->code == ';';
    if (tk->type != TK_KEYWORD) return 0;
    switch (tk->code) {
    case KW_BREAK: case KW_DO: case KW_ELSE: case KW_ELSEIF: case KW_END: case KW_FOR: case KW_FUNCTION:
    case KW_IF: case KW_LOCAL: case KW_REPEAT: case KW_RETURN: case KW_UNTIL: case KW_WHILE:
        return 1;
    default:
        return 0;
    }
}

/* Does token i end a block (what may follow a `return` statement)? */
static int endsBlock(const Scan *sc, size_t i) {
    const Token *tk = &sc->t[i];
    if (tk->type == TK_EOF) return 1;
    if (tk->type == TK_OP) return tk->code == ';';
    return tk->type == TK_KEYWORD &&
           (tk->code == KW_END || tk->code == KW_ELSE || tk->code == KW_ELSEIF || tk->code == KW_UNTIL);
}

/* The token closing the bracket opened at token i (or the EOF token). */
static size_t matchingClose(const Scan *sc, size_t i) {
    long depth = 0;
    for (size_t j = i; j < sc->ntok; j++) {
        if (sc->t[j].type != TK_OP) continue;
        int c = sc->t[j].code;
        if (c == '(' || c == '[' || c == '{') depth++;
        else if ((c == ')' || c == ']' || c == '}') && --depth == 0) return j;
    }
    return sc->ntok - 1;
}

/* If call arguments (`(...)`, `{...}` or a string) start at token i, the
 * index of their last token; otherwise 0. */
static size_t argsEnd(const Scan *sc, size_t i) {
    if (i >= sc->ntok) return 0;
    if (sc->t[i].type == TK_STRING) return i;
    if (tokIs(sc, i, TK_OP, '(') || tokIs(sc, i, TK_OP, '{')) return matchingClose(sc, i);
    return 0;
}

/* At a `return` (token i): record it if a call to a named path follows
 * and ends the block. */
static void scanReturn(Scan *sc, size_t i) {
    size_t j = i + 1;
    if (!tokIsName(sc, j)) return;
    size_t rootTok = j++;
    int lastIsCall = 0;
    for (;;) {
        size_t e;
        if (tokIs(sc, j, TK_OP, '.') && tokIsName(sc, j + 1)) {
            j += 2;
            lastIsCall = 0;
        } else if (tokIs(sc, j, TK_OP, '[')) {
            j = matchingClose(sc, j) + 1;
            lastIsCall = 0;
        } else if (tokIs(sc, j, TK_OP, ':') && tokIsName(sc, j + 1) && (e = argsEnd(sc, j + 2)) != 0) {
            j = e + 1;
            lastIsCall = 1;
        } else if ((e = argsEnd(sc, j)) != 0) {
            j = e + 1;
            lastIsCall = 1;
        } else {
            break;
        }
        if (j >= sc->ntok) return;
    }
    if (!lastIsCall || !endsBlock(sc, j)) return;
    GROW(sc->cands, sc->ncands, sc->capCands);
    sc->cands[sc->ncands++] = (Candidate){sc->t[rootTok].start, sc->t[j - 1].end, resolve(sc, rootTok)};
}

/* At `local` (token i): declare its names; returns the token to go on
 * from. */
static size_t scanLocal(Scan *sc, size_t i) {
    if (tokIs(sc, i + 1, TK_KEYWORD, KW_FUNCTION)) {
        if (tokIsName(sc, i + 2)) declare(sc, i + 2, ALIAS_NONE);
        return i + 1; /* the function itself is scanned next */
    }
    size_t first = i + 1, j = i + 1, count = 0;
    while (tokIsName(sc, j)) {
        count++;
        if (!tokIs(sc, j + 1, TK_OP, ',')) {
            j++;
            break;
        }
        j += 2;
    }
    long alias = ALIAS_NONE;
    if (count == 1 && tokIs(sc, j, TK_OP, '=') && tokIsName(sc, j + 1)) {
        /* `local x = a.b.c` followed by the next statement */
        size_t k = j + 2;
        while (tokIs(sc, k, TK_OP, '.') && tokIsName(sc, k + 1)) k += 2;
        long root = resolve(sc, j + 1);
        if (endsStatement(sc, k) && (root == ALIAS_GLOBAL || isLibraryLocal(sc, root))) alias = root;
    }
    for (size_t n = 0; n < count; n++) declare(sc, first + 2 * n, alias);
    return j;
}

static void noteGlobal(Scan *sc, size_t i, int assign);

/* At `function` (token i): open its body and declare its parameters;
 * returns the token to go on from. */
static size_t scanFunction(Scan *sc, size_t i) {
    size_t j = i + 1;
    int method = 0;
    if (tokIsName(sc, j)) {
        /* `function name` assigns that variable; `function a.b` or `a:b`
         * only a field. */
        size_t nameTok = j++;
        int plain = 1;
        while ((tokIs(sc, j, TK_OP, '.') || tokIs(sc, j, TK_OP, ':')) && tokIsName(sc, j + 1)) {
            if (tokIs(sc, j, TK_OP, ':')) method = 1;
            plain = 0;
            j += 2;
        }
        long k = resolve(sc, nameTok);
        if (plain && k >= 0) sc->locals[k].assigned = 1;
        noteGlobal(sc, nameTok, plain);
    }
    openBlock(sc, 1);
    if (method) {
        GROW(sc->locals, sc->nlocals, sc->capLocals);
        sc->locals[sc->nlocals] = (Local){"self", 4, ALIAS_NONE, 0};
        GROW(sc->active, sc->nactive, sc->capActive);
        sc->active[sc->nactive++] = sc->nlocals++;
    }
    if (!tokIs(sc, j, TK_OP, '(')) return j;
    j++;
    while (tokIsName(sc, j)) {
        declare(sc, j, ALIAS_NONE);
        j++;
        if (!tokIs(sc, j, TK_OP, ',')) break;
        j++;
    }
    while (j < sc->ntok - 1 && !tokIs(sc, j, TK_OP, ')')) j++; /* `...` */
    return j + 1;
}

/* At `for` (token i): note its names for the `do` of its body. */
static size_t scanFor(Scan *sc, size_t i) {
    size_t j = i + 1;
    sc->forFirst = j;
    sc->forCount = 0;
    while (tokIsName(sc, j)) {
        sc->forCount++;
        if (!tokIs(sc, j + 1, TK_OP, ',')) {
            j++;
            break;
        }
        j += 2;
    }
    sc->forDepth = sc->nblocks;
    sc->forPending = 1;
    return j;
}

static void scanDo(Scan *sc) {
    int isFor = sc->forPending && sc->forDepth == sc->nblocks;
    openBlock(sc, 0);
    if (!isFor) return;
    for (size_t n = 0; n < sc->forCount; n++) declare(sc, sc->forFirst + 2 * n, ALIAS_NONE);
    sc->forPending = 0;
}

/* A name used as a variable: note when it is assigned (`x =`, or `x ,` at
 * statement level, which may be the start of `x, y = ...`). */
static void scanName(Scan *sc, size_t i) {
    if (i > 0 && (tokIs(sc, i - 1, TK_OP, '.') || tokIs(sc, i - 1, TK_OP, ':'))) return; /* a field */
    if (sc->brackets != 0) return; /* arguments, indexes, constructors */
    if (!tokIs(sc, i + 1, TK_OP, '=') && !tokIs(sc, i + 1, TK_OP, ',')) return;
    long k = resolve(sc, i);
    if (k >= 0) sc->locals[k].assigned = 1;
}

/* ------------------------------------------------------------------ */
/* Globals. */

static int tokenIsText(const Scan *sc, size_t i, const char *text) {
    if (i >= sc->ntok) return 0;
    const Token *tk = &sc->t[i];
    size_t len = strlen(text);
    return tk->end - tk->start == len && memcmp(sc->src + tk->start, text, len) == 0;
}

static int isArithmetic(const Scan *sc, size_t i) {
    if (i >= sc->ntok || sc->t[i].type != TK_OP) return 0;
    switch (sc->t[i].code) {
    case '+': case '-': case '*': case '/': case '%': case '^': case OP_CONCAT:
        return 1;
    default:
        return 0;
    }
}

/* Is the name at token i inside an expression for certain (so that a `,`
 * after it cannot be part of the variables of an assignment)? */
static int inExpression(const Scan *sc, size_t i) {
    if (i == 0) return 0;
    const Token *p = &sc->t[i - 1];
    if (p->type == TK_OP) {
        switch (p->code) {
        case ')': case ']': case '}': case ';': case OP_DOTS:
            return 0;
        case ',':
            return sc->brackets != 0; /* a list of arguments or fields */
        case OP_OTHER:
            return sc->src[p->start] != ':'; /* ~= <= >=, not a label's :: */
        default:
            return 1;
        }
    }
    if (p->type != TK_KEYWORD) return 0;
    switch (p->code) {
    case KW_RETURN: case KW_IF: case KW_ELSEIF: case KW_WHILE: case KW_UNTIL: case KW_AND: case KW_OR:
    case KW_NOT: case KW_IN:
        return 1;
    default:
        return 0;
    }
}

/* How the global name at token i is used. */
static unsigned classifyUse(const Scan *sc, size_t i) {
    size_t n = i + 1;
    if (tokIs(sc, n, TK_OP, '=')) return USE_ASSIGN;
    if (tokIs(sc, n, TK_OP, ',') && !inExpression(sc, i)) return USE_ASSIGN;
    if (tokIs(sc, n, TK_OP, '.') || tokIs(sc, n, TK_OP, ':')) return USE_INDEX | USE_NOT_READ;
    if (tokIs(sc, n, TK_OP, '[')) {
        size_t close = matchingClose(sc, n);
        int written = tokIs(sc, close + 1, TK_OP, '=') || (tokIs(sc, close + 1, TK_OP, ',') && !inExpression(sc, i));
        return USE_INDEX | (written ? USE_NOT_READ : 0);
    }
    if (tokIs(sc, n, TK_OP, '(') || tokIs(sc, n, TK_OP, '{') || (n < sc->ntok && sc->t[n].type == TK_STRING))
        return USE_CALL | USE_NOT_READ;
    if (i > 0 && tokIs(sc, i - 1, TK_OP, '#')) return USE_LEN;
    unsigned u = USE_VALUE;
    if ((i > 0 && isArithmetic(sc, i - 1)) || isArithmetic(sc, n)) u |= USE_ARITH;
    /* the first argument of unpack or ipairs: read, not kept */
    int readArg = i >= 2 && tokIs(sc, i - 1, TK_OP, '(') && (tokIs(sc, n, TK_OP, ')') || tokIs(sc, n, TK_OP, ',')) &&
                  (tokenIsText(sc, i - 2, "unpack") || tokenIsText(sc, i - 2, "ipairs")) &&
                  tokIsName(sc, i - 2) && resolve(sc, i - 2) == ALIAS_GLOBAL &&
                  !(i >= 3 && (tokIs(sc, i - 3, TK_OP, '.') || tokIs(sc, i - 3, TK_OP, ':')));
    return readArg ? u : u | USE_NOT_READ;
}

/* The entry for the global named by token i, added on first use; NULL when
 * kind does not know the name (or the table is full). */
static Global *globalAt(Scan *sc, size_t i) {
    const Token *tk = &sc->t[i];
    const char *name = sc->src + tk->start;
    size_t len = tk->end - tk->start;
    for (size_t g = 0; g < sc->nglobals; g++)
        if (sc->globals[g].len == len && memcmp(sc->globals[g].name, name, len) == 0) return &sc->globals[g];
    int kind = sc->kind(sc->kindCtx, name, len);
    if (kind == GLOBAL_ABSENT) return NULL;
    if (sc->nglobals == REWRITE_MAX_ALIASES) {
        sc->tooManyGlobals = 1;
        return NULL;
    }
    sc->globals[sc->nglobals] = (Global){name, len, kind, 0};
    return &sc->globals[sc->nglobals++];
}

/* A name token not declared here and not a field: if it is a global, note
 * how it is used (assign: a `function name` statement). */
static void noteGlobal(Scan *sc, size_t i, int assign) {
    if (!sc->kind) return;
    if (i > 0 && (tokIs(sc, i - 1, TK_OP, '.') || tokIs(sc, i - 1, TK_OP, ':'))) return; /* a field */
    if (i > 0 && tokIs(sc, i - 1, TK_OP, OP_OTHER) && sc->src[sc->t[i - 1].start] == ':') return; /* ::label:: */
    if (i > 0 && tokenIsText(sc, i - 1, "goto") && tokIsName(sc, i - 1)) return;
    if (!assign && sc->brackets != 0 && tokIs(sc, i + 1, TK_OP, '=')) return; /* {name = ...} */
    if (resolve(sc, i) != ALIAS_GLOBAL) {
        /* A local named KEYS or ARGV: the scan declares a local before its
         * initialiser (`local KEYS = KEYS` reads the global), so leave
         * those two to the globals. */
        if (tokenIsText(sc, i, "KEYS") || tokenIsText(sc, i, "ARGV")) sc->perRunShadowed = 1;
        return;
    }
    if (tokenIsText(sc, i, "_G") || tokenIsText(sc, i, "loadstring") || tokenIsText(sc, i, "load") ||
        tokenIsText(sc, i, "getfenv") || tokenIsText(sc, i, "setfenv"))
        sc->dynamicGlobals = 1;
    Global *g = globalAt(sc, i);
    if (g) g->uses |= assign ? USE_ASSIGN : classifyUse(sc, i);
}

/* Can the global be read as an upvalue without a visible difference? */
static int aliasable(const Global *g) {
    if (g->uses & (USE_ASSIGN | USE_ARITH)) return 0;
    switch (g->kind) {
    case GLOBAL_TABLE:
    case GLOBAL_PER_RUN:
        return !(g->uses & USE_CALL);
    case GLOBAL_FUNCTION:
        return !(g->uses & (USE_INDEX | USE_LEN));
    default:
        return 0;
    }
}

static size_t scanKeyword(Scan *sc, size_t i) {
    switch (sc->t[i].code) {
    case KW_DO:
        scanDo(sc);
        break;
    case KW_THEN:
    case KW_REPEAT:
        openBlock(sc, 0);
        break;
    case KW_ELSE:
        closeBlock(sc);
        openBlock(sc, 0);
        break;
    case KW_ELSEIF:
    case KW_END:
    case KW_UNTIL:
        closeBlock(sc);
        break;
    case KW_FUNCTION:
        return scanFunction(sc, i);
    case KW_LOCAL:
        return scanLocal(sc, i);
    case KW_FOR:
        return scanFor(sc, i);
    case KW_RETURN:
        scanReturn(sc, i);
        break;
    }
    return i + 1;
}

static void scanTokens(Scan *sc) {
    size_t i = 0;
    while (i < sc->ntok && sc->t[i].type != TK_EOF) {
        const Token *tk = &sc->t[i];
        if (tk->type == TK_KEYWORD) {
            i = scanKeyword(sc, i);
            continue;
        }
        if (tk->type == TK_NAME) {
            scanName(sc, i);
            noteGlobal(sc, i, 0);
        } else if (tk->type == TK_OP) {
            if (tk->code == '(' || tk->code == '[' || tk->code == '{') sc->brackets++;
            else if (tk->code == ')' || tk->code == ']' || tk->code == '}') sc->brackets--;
        }
        i++;
    }
}

/* ------------------------------------------------------------------ */
/* Output. */

/* An insertion: "H(" before a call (open) or ")" after it. */
typedef struct Insert {
    size_t at;
    int open;
} Insert;

static int insertCmp(const void *a, const void *b) {
    const Insert *x = a, *y = b;
    if (x->at != y->at) return x->at < y->at ? -1 : 1;
    return x->open - y->open; /* a close before an open at the same place */
}

/* A helper name no name token in the chunk spells. */
static sds helperName(const char *src, const TokenList *tl) {
    sds name = sdsNew("cairn_tail");
    for (unsigned n = 1;; n++) {
        int clash = 0;
        for (size_t i = 0; i < tl->n && !clash; i++) {
            const Token *tk = &tl->t[i];
            clash = tk->type == TK_NAME && tk->end - tk->start == sdsLen(name) &&
                    memcmp(src + tk->start, name, sdsLen(name)) == 0;
        }
        if (!clash) return name;
        sdsFree(name);
        name = sdsCatPrintf(sdsEmpty(), "cairn_tail%u", n);
    }
}

/* The wrapper's locals: the helper, then the aliased globals. */
static sds buildOutput(const char *src, size_t len, const TokenList *tl, const Insert *ins, size_t nins,
                       const ScriptRewrite *rw) {
    sds h = helperName(src, tl);
    sds out = sdsCatSds(sdsNew("local "), h);
    for (int a = 0; a < rw->naliases; a++) {
        out = sdsCatLen(out, ",", 1);
        out = sdsCatSds(out, rw->aliases[a]);
    }
    out = sdsCat(out, "=...;return function(...) ");
    size_t at = 0;
    for (size_t k = 0; k < nins; k++) {
        out = sdsCatLen(out, src + at, ins[k].at - at);
        at = ins[k].at;
        if (ins[k].open) {
            out = sdsCatSds(out, h);
            out = sdsCatLen(out, "(", 1);
        } else {
            out = sdsCatLen(out, ")", 1);
        }
    }
    out = sdsCatLen(out, src + at, len - at);
    out = sdsCat(out, "\nend");
    sdsFree(h);
    return out;
}

/* Which globals the wrapper passes in (into rw). */
static void chooseAliases(const Scan *sc, ScriptRewrite *rw) {
    if (sc->tooManyGlobals) return;
    int perRunOk = !sc->dynamicGlobals && !sc->perRunShadowed;
    for (size_t g = 0; g < sc->nglobals; g++)
        if (sc->globals[g].kind == GLOBAL_PER_RUN && !aliasable(&sc->globals[g])) perRunOk = 0;
    for (size_t g = 0; g < sc->nglobals; g++) {
        const Global *gl = &sc->globals[g];
        if (!aliasable(gl) || (gl->kind == GLOBAL_PER_RUN && !perRunOk)) continue;
        rw->readOnly[rw->naliases] = gl->kind == GLOBAL_PER_RUN && !(gl->uses & USE_NOT_READ);
        rw->aliases[rw->naliases++] = sdsNewLen(gl->name, gl->len);
    }
}

void scriptRewrite(const char *src, size_t len, GlobalKindFn kind, void *ctx, ScriptRewrite *rw) {
    memset(rw, 0, sizeof(*rw));
    TokenList tl = {0};
    tokenize(src, len, &tl);
    Scan *sc = xcalloc(sizeof(Scan));
    sc->src = src;
    sc->t = tl.t;
    sc->ntok = tl.n;
    sc->kind = kind;
    sc->kindCtx = ctx;
    scanTokens(sc);
    if (kind) chooseAliases(sc, rw);
    Insert *ins = xmalloc((2 * sc->ncands + 1) * sizeof(Insert));
    size_t nins = 0;
    for (size_t k = 0; k < sc->ncands; k++) {
        const Candidate *cd = &sc->cands[k];
        if (cd->root != ALIAS_GLOBAL && !isLibraryLocal(sc, cd->root)) continue;
        ins[nins++] = (Insert){cd->open, 1};
        ins[nins++] = (Insert){cd->close, 0};
    }
    if (nins || rw->naliases) {
        qsort(ins, nins, sizeof(Insert), insertCmp);
        rw->text = buildOutput(src, len, &tl, ins, nins, rw);
    }
    xfree(ins);
    xfree(sc->locals);
    xfree(sc->active);
    xfree(sc->blocks);
    xfree(sc->cands);
    xfree(sc);
    xfree(tl.t);
}

void scriptRewriteFree(ScriptRewrite *rw) {
    sdsFree(rw->text);
    for (int a = 0; a < rw->naliases; a++) sdsFree(rw->aliases[a]);
    memset(rw, 0, sizeof(*rw));
}

sds tailcallRewrite(const char *src, size_t len) {
    ScriptRewrite rw;
    scriptRewrite(src, len, NULL, NULL, &rw);
    return rw.text; /* no aliases to free */
}
