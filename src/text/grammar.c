/* grammar.c - GBNF: the parser (text -> rules of elements), the checks
 * (undefined rules, left recursion, bounds) and the byte matcher with its
 * vocabulary walk. See grammar.h for the format and the bounds. */
#include "grammar.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "json.h"

enum { GE_END = 0, GE_ALT, GE_REF, GE_CLASS, GE_RANGE };

#define NONE 0xffffffffu

/* ---- Memory -------------------------------------------------------------------- */

static uint64_t levels_of(uint32_t max_piece)
{
    return (uint64_t)max_piece + 2;
}

static uint64_t words_of(int32_t n_vocab)
{
    return n_vocab > 0 ? ((uint64_t)n_vocab + 63) / 64 : 1;
}

uint64_t grammar_bytes(uint32_t max_piece, int32_t n_vocab)
{
    uint64_t n = 0, lv = levels_of(max_piece);
    n += arena_round((uint64_t)GRAMMAR_MAX_ELEMS * sizeof(GElem));        /* code */
    n += arena_round((uint64_t)GRAMMAR_MAX_RULES * sizeof(uint32_t) * 4); /* rule table and names */
    n += arena_round((uint64_t)GRAMMAR_POOL_NODES * sizeof(GNode));
    n += arena_round(lv * GRAMMAR_MAX_STACKS * sizeof(uint32_t));
    n += arena_round(lv * sizeof(GLevel));
    n += arena_round((uint64_t)GRAMMAR_MAX_ELEMS * sizeof(uint32_t));     /* worklist */
    n += arena_round((uint64_t)GRAMMAR_CACHE_SETS * words_of(n_vocab) * sizeof(uint64_t));
    n += arena_round((uint64_t)(GRAMMAR_CACHE_SETS + 1) * GRAMMAR_CACHE_KEY * sizeof(uint32_t));
    return n;
}

/* Parser-only tables live behind rule_start (names) and in the pool (the
 * scratch of rules being parsed), both free once compiled. */
typedef struct {
    uint32_t *name_off, *name_len, *where;
} RuleNames;

int grammar_init(Grammar *g, Arena *a, uint32_t max_piece, int32_t n_vocab)
{
    memset(g, 0, sizeof *g);
    uint64_t lv = levels_of(max_piece);
    g->code = arena_take(a, (uint64_t)GRAMMAR_MAX_ELEMS * sizeof(GElem));
    g->rule_start = arena_take(a, (uint64_t)GRAMMAR_MAX_RULES * sizeof(uint32_t) * 4);
    g->pool = arena_take(a, (uint64_t)GRAMMAR_POOL_NODES * sizeof(GNode));
    g->stack_ids = arena_take(a, lv * GRAMMAR_MAX_STACKS * sizeof(uint32_t));
    g->levels = arena_take(a, lv * sizeof(GLevel));
    g->work = arena_take(a, (uint64_t)GRAMMAR_MAX_ELEMS * sizeof(uint32_t));
    g->n_words = (uint32_t)words_of(n_vocab);
    g->bits = arena_take(a, (uint64_t)GRAMMAR_CACHE_SETS * g->n_words * sizeof(uint64_t));
    g->keys = arena_take(a, (uint64_t)(GRAMMAR_CACHE_SETS + 1) * GRAMMAR_CACHE_KEY * sizeof(uint32_t));
    if (!g->code || !g->rule_start || !g->pool || !g->stack_ids || !g->levels || !g->work || !g->bits || !g->keys)
        return -1;
    g->stack_ids_cap = (uint32_t)(lv * GRAMMAR_MAX_STACKS);
    g->max_levels = (uint32_t)lv;
    g->work_cap = GRAMMAR_MAX_ELEMS;
    return 0;
}

/* ---- Parser ---------------------------------------------------------------------- */

typedef struct {
    Grammar *g;
    const char *src;
    size_t len, pos;
    GElem *scratch;       /* rules being built, nested groups on top */
    uint32_t n_scratch, scratch_cap;
    RuleNames names;
    const char *name;
    char *err;
    size_t err_cap;
    int failed;
} Parser;

static void where(const Parser *p, size_t at, int *line, int *col)
{
    *line = 1;
    *col = 1;
    for (size_t i = 0; i < at && i < p->len; i++) {
        if (p->src[i] == '\n') {
            (*line)++;
            *col = 1;
        } else if (((unsigned char)p->src[i] & 0xc0) != 0x80) {
            (*col)++;
        }
    }
}

static int fail_at(Parser *p, size_t at, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int fail_at(Parser *p, size_t at, const char *fmt, ...)
{
    if (p->failed) return -1;
    p->failed = 1;
    int line, col;
    where(p, at, &line, &col);
    char what[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    if (p->err && p->err_cap) snprintf(p->err, p->err_cap, "%s: %d:%d: %s", p->name, line, col, what);
    return -1;
}

static int peek(const Parser *p, size_t off)
{
    return p->pos + off < p->len ? (unsigned char)p->src[p->pos + off] : -1;
}

static void skip_space(Parser *p)
{
    while (p->pos < p->len) {
        char c = p->src[p->pos];
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r') p->pos++;
        else if (c == '#') {
            while (p->pos < p->len && p->src[p->pos] != '\n') p->pos++;
        } else break;
    }
}

static int is_name_char(int c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
}

static size_t name_end(const Parser *p, size_t at)
{
    while (at < p->len && is_name_char((unsigned char)p->src[at])) at++;
    return at;
}

/* After a name at [at, end): is it followed by "::=" (a new rule)? */
static int defines(const Parser *p, size_t end)
{
    while (end < p->len && (p->src[end] == ' ' || p->src[end] == '\t')) end++;
    return end + 3 <= p->len && memcmp(p->src + end, "::=", 3) == 0;
}

static int new_rule(Parser *p, size_t at)
{
    Grammar *g = p->g;
    if (g->n_rules >= GRAMMAR_MAX_RULES)
        return fail_at(p, at, "more than %d rules (groups and repetitions count as rules)", GRAMMAR_MAX_RULES);
    uint32_t id = g->n_rules++;
    g->rule_start[id] = NONE;
    p->names.name_off[id] = 0;
    p->names.name_len[id] = 0;
    p->names.where[id] = (uint32_t)at;
    return (int)id;
}

static int rule_by_name(Parser *p, size_t at, size_t end)
{
    Grammar *g = p->g;
    size_t n = end - at;
    for (uint32_t i = 0; i < g->n_rules; i++)
        if (p->names.name_len[i] == n && memcmp(p->src + p->names.name_off[i], p->src + at, n) == 0) return (int)i;
    int id = new_rule(p, at);
    if (id < 0) return -1;
    p->names.name_off[id] = (uint32_t)at;
    p->names.name_len[id] = (uint32_t)n;
    return id;
}

static int emit(Parser *p, uint8_t type, uint32_t a, uint32_t b)
{
    if (p->n_scratch >= p->scratch_cap)
        return fail_at(p, p->pos, "the grammar is too large (more than %d elements)", GRAMMAR_MAX_ELEMS);
    GElem *e = &p->scratch[p->n_scratch++];
    memset(e, 0, sizeof *e);
    e->type = type;
    e->a = a;
    e->b = b;
    return 0;
}

/* Appends elems as a finished rule's body to the compiled code. */
static int commit_rule(Parser *p, int id, const GElem *elems, uint32_t n)
{
    Grammar *g = p->g;
    if (g->n_code + n > GRAMMAR_MAX_ELEMS - 2)
        return fail_at(p, p->pos, "the grammar is too large (more than %d elements)", GRAMMAR_MAX_ELEMS);
    memcpy(g->code + g->n_code, elems, n * sizeof *elems);
    g->rule_start[id] = g->n_code;
    g->n_code += n;
    return 0;
}

/* S ::= item tail | (empty), where tail is another rule, S itself
 * (SELF), or nothing (NONE). */
#define SELF (NONE - 1)
static int synth_rule(Parser *p, size_t at, uint32_t item, uint32_t tail)
{
    GElem body[4];
    uint32_t n = 0;
    int id = new_rule(p, at);
    if (id < 0) return -1;
    memset(body, 0, sizeof body);
    body[n].type = GE_REF;
    body[n++].a = item;
    if (tail != NONE) {
        body[n].type = GE_REF;
        body[n++].a = tail == SELF ? (uint32_t)id : tail;
    }
    body[n++].type = GE_ALT;
    body[n++].type = GE_END;
    if (commit_rule(p, id, body, n) < 0) return -1;
    return id;
}

static int read_hex(Parser *p, int digits, uint32_t *cp)
{
    *cp = 0;
    for (int i = 0; i < digits; i++) {
        int c = peek(p, 0);
        int v = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
        if (v < 0) return fail_at(p, p->pos, "expected %d hex digits", digits);
        *cp = *cp * 16 + (uint32_t)v;
        p->pos++;
    }
    if (*cp > 0x10ffff) return fail_at(p, p->pos, "code point above U+10FFFF");
    return 0;
}

/* One character of a literal or class (escapes decoded, UTF-8 read). */
static int read_char(Parser *p, uint32_t *cp)
{
    size_t at = p->pos;
    int c = peek(p, 0);
    if (c < 0) return fail_at(p, at, "unexpected end of the grammar");
    if (c == '\\') {
        p->pos++;
        int e = peek(p, 0);
        p->pos++;
        switch (e) {
        case 'n': *cp = '\n'; return 0;
        case 'r': *cp = '\r'; return 0;
        case 't': *cp = '\t'; return 0;
        case '\\': case '"': case '\'': case '[': case ']': case '-': case '^': case '/': *cp = (uint32_t)e; return 0;
        case 'x': return read_hex(p, 2, cp);
        case 'u': return read_hex(p, 4, cp);
        case 'U': return read_hex(p, 8, cp);
        default: return fail_at(p, at, "unknown escape '\\%c'", e > 32 && e < 127 ? e : '?');
        }
    }
    unsigned u;
    int k = json_utf8_decode((const unsigned char *)p->src + p->pos, p->len - p->pos, &u);
    if (k == 0) return fail_at(p, at, "invalid UTF-8");
    p->pos += (size_t)k;
    *cp = u;
    return 0;
}

static int parse_literal(Parser *p)
{
    size_t at = p->pos;
    p->pos++; /* '"' */
    for (;;) {
        int c = peek(p, 0);
        if (c < 0 || c == '\n') return fail_at(p, at, "unterminated string literal");
        if (c == '"') {
            p->pos++;
            return 0;
        }
        uint32_t cp;
        if (read_char(p, &cp) < 0 || emit(p, GE_CLASS, cp, cp) < 0) return -1;
        p->scratch[p->n_scratch - 1].n = 1;
    }
}

static int parse_class(Parser *p)
{
    size_t at = p->pos;
    p->pos++; /* '[' */
    int neg = 0;
    if (peek(p, 0) == '^') {
        neg = 1;
        p->pos++;
    }
    uint32_t first = p->n_scratch;
    for (;;) {
        int c = peek(p, 0);
        if (c < 0 || c == '\n') return fail_at(p, at, "unterminated character class");
        if (c == ']') {
            p->pos++;
            break;
        }
        uint32_t lo, hi;
        if (read_char(p, &lo) < 0) return -1;
        hi = lo;
        if (peek(p, 0) == '-' && peek(p, 1) != ']' && peek(p, 1) >= 0) {
            p->pos++;
            if (read_char(p, &hi) < 0) return -1;
            if (hi < lo) return fail_at(p, p->pos, "range end before its start");
        }
        if (emit(p, GE_RANGE, lo, hi) < 0) return -1;
    }
    /* sort and merge the ranges (a negated class is then exact on partial characters) */
    GElem *r = p->scratch + first;
    uint32_t n = p->n_scratch - first;
    for (uint32_t i = 1; i < n; i++) {
        GElem x = r[i];
        uint32_t j = i;
        while (j > 0 && r[j - 1].a > x.a) {
            r[j] = r[j - 1];
            j--;
        }
        r[j] = x;
    }
    uint32_t m = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (m > 0 && r[i].a <= r[m - 1].b + 1) {
            if (r[i].b > r[m - 1].b) r[m - 1].b = r[i].b;
        } else r[m++] = r[i];
    }
    if (m == 0 && !neg) return fail_at(p, at, "empty character class");
    p->n_scratch = first + m;
    if (m == 0) {
        if (emit(p, GE_CLASS, 0, 0) < 0) return -1;
    } else {
        r[0].type = GE_CLASS;
    }
    r[0].neg = (uint8_t)neg;
    r[0].n = (uint16_t)m;
    if (m > 0xffff) return fail_at(p, at, "too many ranges in one class");
    return 0;
}

static int parse_alternatives(Parser *p, int id, int nested);

/* Applies * + ? {m,n} to the item at scratch[start..). */
static int repeat(Parser *p, uint32_t start, size_t at)
{
    int op = peek(p, 0);
    uint32_t lo = 0, hi = NONE; /* NONE: no upper bound */
    p->pos++;
    if (op == '*') lo = 0;
    else if (op == '+') lo = 1;
    else if (op == '?') hi = 1;
    else {
        /* {m}, {m,}, {m,n} */
        skip_space(p);
        uint32_t v = 0;
        int digits = 0;
        while (peek(p, 0) >= '0' && peek(p, 0) <= '9') {
            v = v * 10 + (uint32_t)(peek(p, 0) - '0');
            if (v > GRAMMAR_MAX_REPEAT) return fail_at(p, p->pos, "repetition count above %d", GRAMMAR_MAX_REPEAT);
            p->pos++;
            digits++;
        }
        if (!digits) return fail_at(p, p->pos, "expected a number in {m,n}");
        lo = hi = v;
        skip_space(p);
        if (peek(p, 0) == ',') {
            p->pos++;
            skip_space(p);
            hi = NONE;
            if (peek(p, 0) >= '0' && peek(p, 0) <= '9') {
                v = 0;
                while (peek(p, 0) >= '0' && peek(p, 0) <= '9') {
                    v = v * 10 + (uint32_t)(peek(p, 0) - '0');
                    if (v > GRAMMAR_MAX_REPEAT) return fail_at(p, p->pos, "repetition count above %d", GRAMMAR_MAX_REPEAT);
                    p->pos++;
                }
                hi = v;
                if (hi < lo) return fail_at(p, p->pos, "{m,n} with n < m");
                skip_space(p);
            }
        }
        if (peek(p, 0) != '}') return fail_at(p, p->pos, "expected '}'");
        p->pos++;
    }
    /* the item as one rule reference */
    uint32_t item;
    uint32_t n = p->n_scratch - start;
    if (n == 1 && p->scratch[start].type == GE_REF) item = p->scratch[start].a;
    else {
        int id = new_rule(p, at);
        if (id < 0 || emit(p, GE_END, 0, 0) < 0) return -1;
        if (commit_rule(p, id, p->scratch + start, n + 1) < 0) return -1;
        item = (uint32_t)id;
    }
    p->n_scratch = start;
    for (uint32_t i = 0; i < lo; i++)
        if (emit(p, GE_REF, item, 0) < 0) return -1;
    if (hi == NONE) {
        int r = synth_rule(p, at, item, SELF);
        if (r < 0 || emit(p, GE_REF, (uint32_t)r, 0) < 0) return -1;
    } else if (hi > lo) {
        /* O1 ::= item O2 | (empty) ... Ok ::= item | (empty), built from the last */
        uint32_t next = NONE;
        for (uint32_t k = hi - lo; k > 0; k--) {
            int r = synth_rule(p, at, item, next);
            if (r < 0) return -1;
            next = (uint32_t)r;
        }
        if (emit(p, GE_REF, next, 0) < 0) return -1;
    }
    return 0;
}

static int parse_sequence(Parser *p, int nested)
{
    uint32_t last = NONE;
    for (;;) {
        skip_space(p);
        int c = peek(p, 0);
        size_t at = p->pos;
        if (c < 0 || c == '|' || c == ')') return 0;
        if (c == '"') {
            last = p->n_scratch;
            if (parse_literal(p) < 0) return -1;
        } else if (c == '[') {
            last = p->n_scratch;
            if (parse_class(p) < 0) return -1;
        } else if (c == '.') {
            last = p->n_scratch;
            p->pos++;
            if (emit(p, GE_CLASS, 0, 0) < 0) return -1;
            p->scratch[p->n_scratch - 1].neg = 1;
        } else if (c == '(') {
            p->pos++;
            int id = new_rule(p, at);
            if (id < 0 || parse_alternatives(p, id, 1) < 0) return -1;
            skip_space(p);
            if (peek(p, 0) != ')') return fail_at(p, at, "unclosed '('");
            p->pos++;
            last = p->n_scratch;
            if (emit(p, GE_REF, (uint32_t)id, 0) < 0) return -1;
        } else if (is_name_char(c)) {
            size_t end = name_end(p, at);
            if (defines(p, end)) {
                if (nested) return fail_at(p, at, "unclosed '(' before the rule '%.*s'", (int)(end - at), p->src + at);
                return 0; /* the next rule */
            }
            int id = rule_by_name(p, at, end);
            if (id < 0) return -1;
            p->pos = end;
            last = p->n_scratch;
            if (emit(p, GE_REF, (uint32_t)id, 0) < 0) return -1;
        } else if (c == '*' || c == '+' || c == '?' || c == '{') {
            if (last == NONE) return fail_at(p, at, "'%c' follows nothing it could repeat", c);
            if (repeat(p, last, at) < 0) return -1;
            last = NONE; /* x** is refused */
        } else if (c == ':' && peek(p, 1) == ':' && peek(p, 2) == '=') {
            return fail_at(p, at, "'::=' without a rule name before it");
        } else {
            return fail_at(p, at, "unexpected character '%c'", c > 32 && c < 127 ? c : '?');
        }
    }
}

/* seq ('|' seq)* into a rule's body; the body is committed at the end. */
static int parse_alternatives(Parser *p, int id, int nested)
{
    uint32_t start = p->n_scratch;
    for (;;) {
        if (parse_sequence(p, nested) < 0) return -1;
        skip_space(p);
        if (peek(p, 0) == '|') {
            p->pos++;
            if (emit(p, GE_ALT, 0, 0) < 0) return -1;
            continue;
        }
        break;
    }
    if (emit(p, GE_END, 0, 0) < 0) return -1;
    if (commit_rule(p, id, p->scratch + start, p->n_scratch - start) < 0) return -1;
    p->n_scratch = start;
    return 0;
}

/* ---- Checks -------------------------------------------------------------------- */

static uint32_t class_len(const GElem *e)
{
    return e->n > 1 ? e->n : 1;
}

/* nullable[r] by fixpoint; then left recursion by a walk over "can start with". */
static int check_left_recursion(Parser *p, uint8_t *nullable, uint8_t *color, uint32_t *stack)
{
    Grammar *g = p->g;
    memset(nullable, 0, g->n_rules);
    for (int changed = 1; changed;) {
        changed = 0;
        for (uint32_t r = 0; r < g->n_rules; r++) {
            if (nullable[r]) continue;
            uint32_t i = g->rule_start[r];
            int all = 1;
            for (;; i++) {
                const GElem *e = &g->code[i];
                if (e->type == GE_END || e->type == GE_ALT) {
                    if (all) {
                        nullable[r] = 1;
                        changed = 1;
                        break;
                    }
                    if (e->type == GE_END) break;
                    all = 1;
                    continue;
                }
                if (e->type == GE_CLASS) {
                    all = 0;
                    i += class_len(e) - 1;
                } else if (e->type == GE_REF && !nullable[e->a]) all = 0;
            }
        }
    }
    /* Iterative DFS; stack holds (rule, element cursor) pairs. color: 0 new, 1 open, 2 done. */
    memset(color, 0, g->n_rules);
    for (uint32_t root = 0; root < g->n_rules; root++) {
        if (color[root]) continue;
        uint32_t sp = 0;
        stack[sp++] = root;
        stack[sp++] = g->rule_start[root];
        color[root] = 1;
        while (sp) {
            uint32_t r = stack[sp - 2], i = stack[sp - 1];
            /* find the next rule r can start with, from cursor i */
            uint32_t next = NONE;
            int blocked = 0;
            for (;; i++) {
                const GElem *e = &g->code[i];
                if (e->type == GE_END) break;
                if (e->type == GE_ALT) {
                    blocked = 0;
                    continue;
                }
                if (blocked) {
                    if (e->type == GE_CLASS) i += class_len(e) - 1;
                    continue;
                }
                if (e->type == GE_CLASS) {
                    blocked = 1;
                    i += class_len(e) - 1;
                    continue;
                }
                /* a reference in first position (after nullable ones) */
                if (!nullable[e->a]) blocked = 1;
                next = e->a;
                i++;
                /* resume after this element: keep "blocked" by re-deriving it */
                break;
            }
            if (next == NONE) {
                color[r] = 2;
                sp -= 2;
                continue;
            }
            /* a blocked resume point must skip to the next alternative */
            if (!nullable[next]) {
                while (g->code[i].type != GE_END && g->code[i].type != GE_ALT) i++;
            }
            stack[sp - 1] = i;
            if (color[next] == 1) {
                uint32_t w = p->names.where[next];
                if (p->names.name_len[next])
                    return fail_at(p, w, "left recursion: rule '%.*s' can reach itself without consuming a character",
                                   (int)p->names.name_len[next], p->src + p->names.name_off[next]);
                return fail_at(p, w, "left recursion: this group or repetition can repeat without consuming a character");
            }
            if (color[next] == 0) {
                if (sp + 2 > 2 * GRAMMAR_MAX_RULES) return fail_at(p, 0, "internal error: rule walk too deep");
                color[next] = 1;
                stack[sp++] = next;
                stack[sp++] = g->rule_start[next];
            }
        }
    }
    return 0;
}

/* ---- Matcher ---------------------------------------------------------------------- */

static uint32_t mix(uint32_t h, uint32_t v)
{
    h ^= v + 0x9e3779b9u + (h << 6) + (h >> 2);
    return h * 0x85ebca6bu;
}

/* A node on top of parent (id + 1; 0 = bottom). 0 when too deep (the path
 * is dropped) or the pool is full (overflow). */
static uint32_t node_new(Grammar *g, uint32_t pos, uint32_t parent)
{
    uint32_t depth = parent ? g->pool[parent - 1].depth + 1 : 1;
    if (depth > GRAMMAR_MAX_DEPTH) return 0;
    if (g->pool_top >= GRAMMAR_POOL_NODES) {
        g->overflow = 1;
        return 0;
    }
    GNode *n = &g->pool[g->pool_top++];
    n->pos = pos;
    n->parent = parent;
    n->depth = depth;
    n->hash = mix(parent ? g->pool[parent - 1].hash : 0x811c9dc5u, pos);
    return g->pool_top;
}

static int same_stack(const Grammar *g, uint32_t a, uint32_t b)
{
    if (a == b) return 1;
    if (!a || !b) return 0;
    if (g->pool[a - 1].hash != g->pool[b - 1].hash || g->pool[a - 1].depth != g->pool[b - 1].depth) return 0;
    while (a && b) {
        if (a == b) return 1;
        if (g->pool[a - 1].pos != g->pool[b - 1].pos) return 0;
        a = g->pool[a - 1].parent;
        b = g->pool[b - 1].parent;
    }
    return a == b;
}

static int is_end(const GElem *e)
{
    return e->type == GE_END || e->type == GE_ALT;
}

/* Adds stack s (id + 1, or 0 for the finished stack) to level L unless it
 * is there already. -1 on overflow. */
static int add_stack(Grammar *g, GLevel *L, uint32_t s)
{
    uint32_t *ids = g->stack_ids + L->first;
    for (uint32_t i = 0; i < L->n; i++)
        if (same_stack(g, ids[i], s)) return 0;
    if (L->n >= GRAMMAR_MAX_STACKS || L->first + L->n >= g->stack_ids_cap) {
        g->overflow = 1;
        return -1;
    }
    ids[L->n++] = s;
    return 0;
}

/* Expands stack s until every resulting stack has a character class on
 * top (or is finished), adding them to L. Needs no left recursion. */
static int expand(Grammar *g, GLevel *L, uint32_t s)
{
    uint32_t nw = 0;
    g->work[nw++] = s;
    while (nw) {
        uint32_t x = g->work[--nw];
        if (x == 0) {
            if (add_stack(g, L, 0) < 0) return -1;
            continue;
        }
        const GNode *n = &g->pool[x - 1];
        const GElem *e = &g->code[n->pos];
        if (e->type == GE_CLASS) {
            if (add_stack(g, L, x) < 0) return -1;
        } else if (is_end(e)) {
            g->work[nw++] = n->parent;
        } else { /* GE_REF */
            uint32_t parent = n->parent, cont;
            if (is_end(&g->code[n->pos + 1])) cont = parent; /* a tail call adds no depth */
            else {
                cont = node_new(g, n->pos + 1, parent);
                if (!cont) {
                    if (g->overflow) return -1;
                    continue; /* too deep: not offered */
                }
            }
            uint32_t i = g->rule_start[e->a];
            for (;;) {
                uint32_t y;
                if (is_end(&g->code[i])) y = cont;
                else {
                    y = node_new(g, i, cont);
                    if (!y && g->overflow) return -1;
                }
                if (y || is_end(&g->code[i])) {
                    if (nw >= g->work_cap) {
                        g->overflow = 1;
                        return -1;
                    }
                    g->work[nw++] = y;
                }
                /* to the next alternative */
                while (!is_end(&g->code[i])) i += g->code[i].type == GE_CLASS ? class_len(&g->code[i]) : 1;
                if (g->code[i].type == GE_END) break;
                i++;
            }
        }
    }
    return 0;
}

static int class_has(const GElem *e, uint32_t cp)
{
    int in = 0;
    if (e->n >= 1 && cp >= e->a && cp <= e->b) in = 1;
    for (uint32_t i = 1; i < e->n && !in; i++)
        if (cp >= e[i].a && cp <= e[i].b) in = 1;
    return in != e->neg;
}

/* Could the class take some character in [lo, hi]? */
static int class_may(const GElem *e, uint32_t lo, uint32_t hi)
{
    for (uint32_t i = 0; i < e->n; i++) {
        uint32_t a = i ? e[i].a : e->a, b = i ? e[i].b : e->b;
        if (!e->neg && a <= hi && b >= lo) return 1;
        if (e->neg && a <= lo && b >= hi) return 0; /* merged ranges: one covers all or none does */
    }
    return e->neg;
}

/* levels[k+1] from levels[k] and one byte. Returns its stack count. */
static uint32_t step(Grammar *g, uint32_t k, uint8_t b)
{
    GLevel *L = &g->levels[k], *N = &g->levels[k + 1];
    g->pool_top = L->pool;
    N->first = L->first + L->n;
    N->n = 0;
    N->cp = 0;
    N->need = 0;
    N->lead = 0;
    N->start = L->need == 0 ? k : L->start; /* where a partial character began */
    N->canon = k + 1;
    N->n_memo = 0;
    N->n_memo_next = 0;
    uint32_t cp;
    int need;
    if (L->need == 0) {
        if (b < 0x80) {
            cp = b;
            need = 0;
        } else if (b >= 0xc2 && b <= 0xdf) {
            cp = b & 0x1fu;
            need = 1;
        } else if ((b & 0xf0) == 0xe0) {
            cp = b & 0x0fu;
            need = 2;
        } else if (b >= 0xf0 && b <= 0xf4) {
            cp = b & 0x07u;
            need = 3;
        } else {
            N->pool = g->pool_top;
            return 0;
        }
    } else {
        /* well-formed UTF-8 only: no overlong forms, surrogates or code points above U+10FFFF */
        int bad = (b & 0xc0) != 0x80;
        if (L->lead == 0xe0) bad |= b < 0xa0;
        else if (L->lead == 0xed) bad |= b > 0x9f;
        else if (L->lead == 0xf0) bad |= b < 0x90;
        else if (L->lead == 0xf4) bad |= b > 0x8f;
        if (bad) {
            N->pool = g->pool_top;
            return 0;
        }
        cp = (L->cp << 6) | (b & 0x3fu);
        need = L->need - 1;
    }
    N->lead = L->need == 0 ? b : 0;
    const uint32_t *ids = g->stack_ids + L->first;
    if (need > 0) {
        uint32_t shift = 6u * (uint32_t)need;
        uint32_t lo = cp << shift, hi = lo | ((1u << shift) - 1);
        if (L->need == 0) {
            /* after a lead byte: only what a well-formed sequence of that length can encode */
            static const uint32_t least[4] = {0, 0x80, 0x800, 0x10000};
            if (lo < least[need]) lo = least[need];
            if (b == 0xed) hi = 0xd7ff;
            if (hi > 0x10ffff) hi = 0x10ffff;
        }
        for (uint32_t i = 0; i < L->n; i++) {
            if (!ids[i]) continue;
            const GElem *e = &g->code[g->pool[ids[i] - 1].pos];
            if (class_may(e, lo, hi)) g->stack_ids[N->first + N->n++] = ids[i];
        }
        N->cp = cp;
        N->need = (uint8_t)need;
    } else {
        /* A whole character: the stacks of the level where it began (C, the
         * one whose ids that level shares) whose class takes it advance.
         * The result depends only on which of them do (the mask M), so a
         * mask seen to lead back to C itself (a string's ordinary
         * character, a digit of a number) is remembered there and the next
         * such character costs no expansion at all. */
        N->lead = 0;
        uint32_t start = L->need == 0 ? k : L->start;
        GLevel *C = &g->levels[g->levels[start].canon];
        const uint32_t *cids = g->stack_ids + C->first;
        uint64_t m = 0;
        int memo = C->n <= 64;
        for (uint32_t i = 0; i < C->n; i++) {
            if (!cids[i]) continue;
            if (class_has(&g->code[g->pool[cids[i] - 1].pos], cp)) m |= i < 64 ? 1ull << i : 0;
            else if (i >= 64) memo = 0;
        }
        if (memo && m == 0) {
            N->pool = g->pool_top;
            return 0;
        }
        for (uint32_t i = 0; memo && i < C->n_memo; i++)
            if (C->memo[i] == m) {
                memcpy(g->stack_ids + N->first, cids, C->n * sizeof *cids);
                N->n = C->n;
                N->canon = (uint32_t)(C - g->levels);
                N->pool = g->pool_top;
                return N->n;
            }
        uint32_t pool0 = g->pool_top;
        for (uint32_t i = 0; i < C->n; i++) {
            if (!cids[i]) continue;
            const GNode *n = &g->pool[cids[i] - 1];
            const GElem *e = &g->code[n->pos];
            if (!class_has(e, cp)) continue;
            uint32_t next = n->pos + class_len(e), s;
            if (is_end(&g->code[next])) s = n->parent;
            else {
                s = node_new(g, next, n->parent);
                if (!s) continue; /* overflow is seen by the caller */
            }
            if (expand(g, N, s) < 0) break;
        }
        /* back where the character began? then N is C (same stacks) */
        if (memo && !g->overflow && N->n == C->n) {
            const uint32_t *nids = g->stack_ids + N->first;
            int same = 1;
            for (uint32_t i = 0; i < N->n && same; i++) {
                int found = 0;
                for (uint32_t j = 0; j < C->n && !found; j++) found = same_stack(g, nids[i], cids[j]);
                same = found;
            }
            if (same) {
                C->memo[C->n_memo < 4 ? C->n_memo++ : (C->n_memo_next++ & 3)] = m;
                memcpy(g->stack_ids + N->first, cids, C->n * sizeof *cids);
                N->canon = (uint32_t)(C - g->levels);
                g->pool_top = pool0;
            }
        }
    }
    N->pool = g->pool_top;
    return N->n;
}

/* Runs p[0..n) from level 0; returns 1 if every byte was taken. */
static int run_bytes(Grammar *g, const char *p, size_t n)
{
    if (n + 1 > g->max_levels) return 0;
    for (size_t i = 0; i < n; i++)
        if (step(g, (uint32_t)i, (uint8_t)p[i]) == 0 || g->overflow) return 0;
    return 1;
}

void grammar_reset(Grammar *g)
{
    g->overflow = 0;
    g->pool_top = 0;
    GLevel *L = &g->levels[0];
    memset(L, 0, sizeof *L);
    /* the start: a reference to the root rule, kept after the code */
    memset(&g->code[GRAMMAR_MAX_ELEMS - 2], 0, 2 * sizeof(GElem));
    g->code[GRAMMAR_MAX_ELEMS - 2].type = GE_REF;
    g->code[GRAMMAR_MAX_ELEMS - 2].a = g->root;
    g->code[GRAMMAR_MAX_ELEMS - 1].type = GE_END;
    uint32_t s = node_new(g, GRAMMAR_MAX_ELEMS - 2, 0);
    expand(g, L, s);
    L->pool = g->pool_top;
    L->canon = 0;
    L->n_memo = 0;
    g->pool_base = g->pool_top;
}

/* Makes levels[k] the committed state, copied to the bottom of the pool. */
static void commit(Grammar *g, uint32_t k)
{
    GLevel top = g->levels[k];
    uint32_t *tmp = g->work, nt = 0;
    /* flatten: for each stack its depth, then its positions top first */
    for (uint32_t i = 0; i < top.n; i++) {
        uint32_t s = g->stack_ids[top.first + i];
        uint32_t d = s ? g->pool[s - 1].depth : 0;
        tmp[nt++] = d;
        for (; s; s = g->pool[s - 1].parent) tmp[nt++] = g->pool[s - 1].pos;
    }
    g->pool_top = 0;
    GLevel *L = &g->levels[0];
    L->first = 0;
    L->n = 0;
    L->cp = top.cp;
    L->need = top.need;
    L->lead = top.lead;
    L->start = 0; /* a partial character's start level is gone: its stacks are these */
    L->canon = 0;
    L->n_memo = 0;
    for (uint32_t i = 0, at = 0; i < top.n; i++) {
        uint32_t d = tmp[at++], s = 0;
        for (uint32_t j = d; j-- > 0;) s = node_new(g, tmp[at + j], s);
        at += d;
        g->stack_ids[L->n++] = s;
    }
    L->pool = g->pool_top;
    g->pool_base = g->pool_top;
}

int grammar_try(Grammar *g, const char *p, size_t n)
{
    int ok = run_bytes(g, p, n);
    g->pool_top = g->pool_base;
    return ok;
}

int grammar_accept(Grammar *g, const char *p, size_t n)
{
    /* longer than one walk's levels: in pieces */
    size_t piece = g->max_levels - 1;
    while (n > piece) {
        if (grammar_accept(g, p, piece) != 0) return -1;
        p += piece;
        n -= piece;
    }
    if (!run_bytes(g, p, n)) {
        g->pool_top = g->pool_base;
        return -1;
    }
    commit(g, (uint32_t)n);
    return 0;
}

int grammar_can_end(const Grammar *g)
{
    const GLevel *L = &g->levels[0];
    if (L->need) return 0;
    for (uint32_t i = 0; i < L->n; i++)
        if (g->stack_ids[L->first + i] == 0) return 1;
    return 0;
}

int grammar_finished(const Grammar *g)
{
    const GLevel *L = &g->levels[0];
    return L->need == 0 && L->n == 1 && g->stack_ids[L->first] == 0;
}

/* ---- Compile ---------------------------------------------------------------------- */

int grammar_compile(Grammar *g, const char *text, size_t len, const char *name, char *err, size_t cap)
{
    Parser p;
    memset(&p, 0, sizeof p);
    p.g = g;
    p.src = text;
    p.len = len;
    p.name = name ? name : "grammar";
    p.err = err;
    p.err_cap = cap;
    g->ready = 0;
    g->n_rules = 0;
    g->n_code = 0;
    memset(g->cache, 0, sizeof g->cache); /* the allowed sets were the old grammar's */
    if (len > GRAMMAR_MAX_TEXT) return fail_at(&p, 0, "the grammar is longer than %d bytes", GRAMMAR_MAX_TEXT);
    /* the scratch of rules being parsed borrows the pool; names borrow the rule table's tail */
    p.scratch = (GElem *)g->pool;
    p.scratch_cap = (uint32_t)(((uint64_t)GRAMMAR_POOL_NODES * sizeof(GNode)) / sizeof(GElem));
    if (p.scratch_cap > GRAMMAR_MAX_ELEMS) p.scratch_cap = GRAMMAR_MAX_ELEMS;
    p.names.name_off = g->rule_start + GRAMMAR_MAX_RULES;
    p.names.name_len = g->rule_start + 2 * GRAMMAR_MAX_RULES;
    p.names.where = g->rule_start + 3 * GRAMMAR_MAX_RULES;
    /* room at the end of the code for the start reference (grammar_reset) */
    uint32_t code_cap = GRAMMAR_MAX_ELEMS - 2;

    skip_space(&p);
    if (p.pos >= p.len) return fail_at(&p, 0, "the grammar is empty (it needs a rule 'root ::= ...')");
    while (p.pos < p.len) {
        size_t at = p.pos;
        if (!is_name_char(peek(&p, 0))) return fail_at(&p, at, "expected a rule name");
        size_t end = name_end(&p, at);
        if (!defines(&p, end)) return fail_at(&p, end, "expected '::=' after the rule name");
        int id = rule_by_name(&p, at, end);
        if (id < 0) return -1;
        if (g->rule_start[id] != NONE)
            return fail_at(&p, at, "rule '%.*s' is defined twice", (int)(end - at), text + at);
        p.names.where[id] = (uint32_t)at;
        p.pos = end;
        while (p.src[p.pos] != ':') p.pos++;
        p.pos += 3;
        if (parse_alternatives(&p, id, 0) < 0) return -1;
        if (g->n_code > code_cap) return fail_at(&p, at, "the grammar is too large (more than %d elements)", code_cap);
        skip_space(&p);
        if (p.pos < p.len && peek(&p, 0) == ')') return fail_at(&p, p.pos, "unmatched ')'");
    }
    int root = -1;
    for (uint32_t i = 0; i < g->n_rules; i++) {
        if (g->rule_start[i] == NONE)
            return fail_at(&p, p.names.where[i], "undefined rule '%.*s'", (int)p.names.name_len[i],
                           text + p.names.name_off[i]);
        if (p.names.name_len[i] == 4 && memcmp(text + p.names.name_off[i], "root", 4) == 0) root = (int)i;
    }
    if (root < 0) return fail_at(&p, 0, "no rule 'root' (where generation starts)");
    g->root = (uint32_t)root;
    /* scratch for the checks: the worklist (nullable, colors) and the stack ids (DFS) */
    uint8_t *nullable = (uint8_t *)g->work, *color = nullable + GRAMMAR_MAX_RULES;
    if (check_left_recursion(&p, nullable, color, (uint32_t *)g->pool) < 0) return -1;
    /* every rule's alternatives must fit the stack bound at one point */
    for (uint32_t r = 0; r < g->n_rules; r++) {
        uint32_t keep = g->root;
        g->root = r;
        grammar_reset(g);
        g->root = keep;
        if (g->overflow)
            return fail_at(&p, p.names.where[r], "more than %d alternatives are open at one point (the planned bound)",
                           GRAMMAR_MAX_STACKS);
    }
    g->ready = 1;
    grammar_reset(g);
    if (g->levels[0].n == 0) return fail_at(&p, 0, "the root rule matches nothing");
    return 0;
}

/* ---- Vocabulary ---------------------------------------------------------------------- */

void grammar_vocab_plan(int32_t n_vocab, Plan *p)
{
    uint64_t n = n_vocab > 0 ? (uint64_t)n_vocab : 1;
    plan_add(p, "grammar vocabulary order", plan_mul(p, n, sizeof(int32_t) * 3 + sizeof(uint16_t)));
}

static int piece_less(const Tokenizer *t, int32_t a, int32_t b)
{
    size_t la, lb;
    const char *pa = tokenizer_piece(t, a, &la), *pb = tokenizer_piece(t, b, &lb);
    size_t n = la < lb ? la : lb;
    int c = memcmp(pa, pb, n);
    if (c) return c < 0;
    if (la != lb) return la < lb;
    return a < b;
}

int grammar_vocab_build(GrammarVocab *v, Arena *a, const Tokenizer *t)
{
    memset(v, 0, sizeof *v);
    int32_t nv = tokenizer_n_vocab(t);
    uint8_t *mem = arena_take(a, (uint64_t)nv * (sizeof(int32_t) * 3 + sizeof(uint16_t)));
    if (!mem) return -1;
    v->n_vocab = nv;
    v->order = (int32_t *)mem;
    int32_t *tmp = v->order + nv;
    v->skip = tmp + nv;
    v->lcp = (uint16_t *)(v->skip + nv);
    int32_t n = 0;
    for (int32_t id = 0; id < nv; id++) {
        size_t len;
        tokenizer_piece(t, id, &len);
        if (len == 0 || tokenizer_is_control(t, id) || tokenizer_is_eog(t, id)) continue;
        v->order[n++] = id;
        if (len > v->max_piece) v->max_piece = (uint32_t)len;
    }
    /* bottom-up merge sort into tmp and back */
    int32_t *src = v->order, *dst = tmp;
    for (int32_t w = 1; w < n; w *= 2) {
        for (int32_t lo = 0; lo < n; lo += 2 * w) {
            int32_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
            int32_t i = lo, j = mid, k = lo;
            while (i < mid && j < hi) dst[k++] = piece_less(t, src[j], src[i]) ? src[j++] : src[i++];
            while (i < mid) dst[k++] = src[i++];
            while (j < hi) dst[k++] = src[j++];
        }
        int32_t *x = src;
        src = dst;
        dst = x;
    }
    if (src != v->order) memcpy(v->order, src, (size_t)n * sizeof(int32_t));
    for (int32_t i = 0; i < n; i++) {
        size_t la = 0, lb;
        const char *pa = i ? tokenizer_piece(t, v->order[i - 1], &la) : "";
        const char *pb = tokenizer_piece(t, v->order[i], &lb);
        size_t k = 0;
        while (k < la && k < lb && pa[k] == pb[k]) k++;
        v->lcp[i] = (uint16_t)(k > 65535 ? 65535 : k);
    }
    v->n = n;
    /* skip[i]: the first j > i with lcp[j] < lcp[i] (what lies between shares lcp[i] bytes or more) */
    for (int32_t i = n; i-- > 0;) {
        int32_t j = i + 1;
        while (j < n && v->lcp[j] >= v->lcp[i]) j = v->skip[j];
        v->skip[i] = j;
    }
    /* the ids left out, in the sort's scratch (free now) */
    v->other = tmp;
    v->n_other = 0;
    for (int32_t id = 0; id < nv; id++) {
        size_t len;
        tokenizer_piece(t, id, &len);
        if (len == 0 || tokenizer_is_control(t, id) || tokenizer_is_eog(t, id)) v->other[v->n_other++] = id;
    }
    return 0;
}

int grammar_allows(Grammar *g, const Tokenizer *t, int32_t id)
{
    if (tokenizer_is_eog(t, id)) return grammar_can_end(g);
    size_t len;
    const char *p = tokenizer_piece(t, id, &len);
    if (!p || len == 0 || tokenizer_is_control(t, id)) return 0;
    return grammar_try(g, p, len);
}

/* The walk over the vocabulary in byte order: levels[0..valid] hold the
 * states after each byte of the previous token's prefix, so a token only
 * steps the bytes past what it shares with the one before; a token that
 * dies on byte k takes with it every following token sharing its first
 * k + 1 bytes (passed by the skip jumps). Sets the allowed ids in bits
 * (zeroed first). Returns the count, or -1 on overflow. */
static int32_t walk(Grammar *g, const GrammarVocab *v, const Tokenizer *t, uint64_t *bits)
{
    memset(bits, 0, (size_t)g->n_words * sizeof *bits);
    int32_t allowed = 0;
    g->overflow = 0;
    uint32_t valid = 0;
    for (int32_t i = 0; i < v->n;) {
        int32_t id = v->order[i];
        size_t len;
        const char *p = tokenizer_piece(t, id, &len);
        uint32_t l = v->lcp[i];
        uint32_t k = l < valid ? l : valid;
        if (len + 1 > g->max_levels) { /* never used under a grammar */
            valid = k;
            i++;
            continue;
        }
        for (; k < len; k++)
            if (step(g, k, (uint8_t)p[k]) == 0) break;
        if (g->overflow) {
            g->pool_top = g->pool_base;
            return -1;
        }
        if (k < len) {
            valid = k;
            int32_t j = i + 1;
            while (j < v->n && v->lcp[j] > k) j = v->skip[j];
            i = j;
        } else {
            valid = (uint32_t)len;
            bits[id >> 6] |= 1ull << (id & 63);
            allowed++;
            i++;
        }
    }
    g->pool_top = g->pool_base;
    if (grammar_can_end(g))
        for (int32_t i = 0; i < v->n_other; i++) {
            int32_t id = v->other[i];
            if (tokenizer_is_eog(t, id)) {
                bits[id >> 6] |= 1ull << (id & 63);
                allowed++;
            }
        }
    return allowed;
}

/* The committed state as words (partial character, then each stack's
 * depth and positions, top first) in g->keys' last row; its length, or 0
 * when it does not fit GRAMMAR_CACHE_KEY (then it is not cached). */
static uint32_t state_key(Grammar *g, uint32_t *hash)
{
    const GLevel *L = &g->levels[0];
    uint32_t *key = g->keys + (uint64_t)GRAMMAR_CACHE_SETS * GRAMMAR_CACHE_KEY, n = 0;
    key[n++] = L->cp;
    key[n++] = (uint32_t)L->need | (uint32_t)L->lead << 8;
    key[n++] = L->n;
    uint32_t h = 0x811c9dc5u;
    for (uint32_t i = 0; i < L->n; i++) {
        uint32_t s = g->stack_ids[L->first + i];
        uint32_t d = s ? g->pool[s - 1].depth : 0;
        if (n + 1 + d > GRAMMAR_CACHE_KEY) return 0;
        key[n++] = d;
        for (; s; s = g->pool[s - 1].parent) key[n++] = g->pool[s - 1].pos;
    }
    for (uint32_t i = 0; i < n; i++) h = mix(h, key[i]);
    *hash = h;
    return n;
}

int grammar_allowed(Grammar *g, const GrammarVocab *v, const Tokenizer *t, int cached_only, const uint64_t **bits,
                    char *err, size_t cap)
{
    if ((uint64_t)v->n_vocab > (uint64_t)g->n_words * 64) {
        if (err && cap) snprintf(err, cap, "grammar: internal error: planned for a smaller vocabulary");
        return -1;
    }
    if (g->cache_vocab != v) {
        memset(g->cache, 0, sizeof g->cache);
        g->cache_vocab = v;
    }
    uint32_t hash = 0, len = state_key(g, &hash);
    const uint32_t *key = g->keys + (uint64_t)GRAMMAR_CACHE_SETS * GRAMMAR_CACHE_KEY;
    g->clock++;
    int victim = 0;
    for (int e = 0; e < GRAMMAR_CACHE_SETS; e++) {
        if (len && g->cache[e].len == len && g->cache[e].hash == hash &&
            memcmp(g->keys + (uint64_t)e * GRAMMAR_CACHE_KEY, key, len * sizeof *key) == 0) {
            g->cache[e].used = g->clock;
            g->cache_hits++;
            *bits = g->bits + (uint64_t)e * g->n_words;
            return g->cache[e].count;
        }
        if (g->cache[e].used < g->cache[victim].used) victim = e;
    }
    if (cached_only) return 0;
    g->cache_misses++;
    uint64_t *out = g->bits + (uint64_t)victim * g->n_words;
    g->cache[victim].len = 0;
    int32_t allowed = walk(g, v, t, out);
    if (allowed < 0) {
        if (err && cap)
            snprintf(err, cap, "grammar: the state outgrew its planned bound (%d stacks, %d nodes)", GRAMMAR_MAX_STACKS,
                     GRAMMAR_POOL_NODES);
        return -1;
    }
    if (allowed == 0) {
        if (err && cap) snprintf(err, cap, "grammar: no token of the vocabulary can continue the text");
        return -1;
    }
    if (len) {
        memcpy(g->keys + (uint64_t)victim * GRAMMAR_CACHE_KEY, key, len * sizeof *key);
        g->cache[victim].len = len;
        g->cache[victim].hash = hash;
        g->cache[victim].count = allowed;
    }
    g->cache[victim].used = g->clock;
    *bits = out;
    return allowed;
}

int grammar_mask(Grammar *g, const GrammarVocab *v, const Tokenizer *t, float *logits, char *err, size_t cap)
{
    const uint64_t *bits;
    int allowed = grammar_allowed(g, v, t, 0, &bits, err, cap);
    if (allowed < 0) return -1;
    for (int32_t id = 0; id < v->n_vocab; id++)
        if (!(bits[id >> 6] >> (id & 63) & 1)) logits[id] = -INFINITY;
    return allowed;
}
