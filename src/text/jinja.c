/* jinja.c - the Jinja2 interpreter: lexer, parser, evaluator and the
 * public API of jinja.h (values, operators and builtins are in
 * jinja_value.c and jinja_builtins.c, see jinja_impl.h).
 *
 * The lexer follows jinja2's: the text is first normalized (\r\n and \r
 * become \n, one trailing newline dropped), then split at {{ }}, {% %} and
 * {# #} with trim_blocks (one newline after a block or comment tag
 * removed), lstrip_blocks (spaces from a line's start to a block or
 * comment tag removed) and the '-' / '+' signs. The parser is jinja2's
 * recursive descent (the same precedence, the same quirks); the tree lives
 * in the parse region. The evaluator keeps jinja2's scopes: a for loop's
 * body (each iteration afresh), a macro, a call block, a set block, a
 * filter block and a generation block each get a frame of their own;
 * names are looked up outward to the render's variables, then the
 * globals of jinja_builtins.c. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "jinja_impl.h"
#include "json.h"

/* Parser recursion (nesting of brackets, unary operators, statements):
 * jinja2 itself stops near Python's recursion limit. */
#define PARSE_MAX_NEST 200
/* The evaluator's recursion per allowed depth of macro calls. */
#define NEST_PER_DEPTH 8
/* Arguments of a call held on the stack; more go to the work region. */
#define ARGS_ON_STACK 4

/* ---- the tree ----------------------------------------------------------- */

enum {
    /* expressions */
    N_CONST, N_NAME, N_GETATTR, N_GETITEM, N_SLICE, N_CALL, N_KWARG, N_FILTER, N_TEST, N_BIN, N_AND, N_OR,
    N_NOT, N_NEG, N_POS, N_COMPARE, N_CMPOP, N_COND, N_LIST, N_TUPLE, N_DICT, N_PAIR, N_NSREF,
    /* statements */
    N_DATA, N_OUTPUT, N_IF, N_FOR, N_FORX, N_SET, N_SETBLOCK, N_MACRO, N_PARAM, N_CALLBLOCK, N_FILTERBLOCK,
    N_SCOPE, N_BREAK, N_CONTINUE
};

/* Operators of N_BIN and N_CMPOP, by index (the text jv_binary takes). */
static const char *const op_text[] = {"+",  "-", "*", "/",  "//", "%",  "**", "~",
                                      "==", "!=", "<", "<=", ">",  ">=", "in", "not in"};
enum { OP_ADD, OP_SUB, OP_MUL, OP_DIV, OP_FLOORDIV, OP_MOD, OP_POW, OP_CONCAT, OP_EQ, OP_NE, OP_LT, OP_LE,
       OP_GT, OP_GE, OP_IN, OP_NOTIN };

/* Macro flags: names its body uses (jinja2 accepts extra arguments only then). */
enum { MF_VARARGS = 1, MF_KWARGS = 2, MF_CALLER = 4 };

typedef struct Node Node;
struct Node {
    uint8_t kind;
    uint8_t op;    /* N_BIN/N_CMPOP: OP_*; N_TEST: negated; N_FOR: recursive; N_MACRO: MF_* */
    uint16_t col;
    uint32_t line;
    union {
        JValue v;                                /* N_CONST */
        struct { const char *s; uint32_t len; }; /* names, data text, attribute and filter names */
        Node *d;                                 /* N_FOR: its N_FORX; N_SLICE: the step */
    };
    Node *a, *b, *c; /* children (see the parser for each kind) */
    Node *next;      /* the next statement, argument, item... */
};

struct JinjaTemplate {
    const char *src; /* the normalized text */
    size_t len;
    Node *body;
};

/* ---- parse region and errors -------------------------------------------- */

enum { T_EOF, T_DATA, T_VBEGIN, T_VEND, T_BBEGIN, T_BEND, T_NAME, T_STR, T_INT, T_FLOAT, T_OP };

typedef struct {
    uint8_t t;
    uint32_t line, col;
    const char *s; /* text of the token (T_STR: with its quotes) */
    uint32_t len;
} Tok;

typedef struct {
    const char *src;
    size_t len, pos;
    int mode;          /* 0 data, T_VBEGIN or T_BBEGIN: inside that tag */
    int line_starting; /* the last match ended with a newline (lstrip_blocks) */
    char brackets[64]; /* closers expected inside a tag */
    int n_brackets;
    Tok tok, ahead, pending;
    int have_ahead, have_pending;
    size_t lc_pos, lc_line_start; /* line/col of a position, counted forward */
    uint32_t lc_line;
    uint8_t *mem;
    size_t cap, used;
    int nest, loops;
    uint8_t *macro_flags; /* of the macro being parsed */
    PithStatus status;
    int failed;
    char *err;
    size_t err_cap;
} P;

static void position(P *p, size_t pos, uint32_t *line, uint32_t *col)
{
    if (pos < p->lc_pos) p->lc_pos = p->lc_line_start = 0, p->lc_line = 1;
    for (; p->lc_pos < pos; p->lc_pos++)
        if (p->src[p->lc_pos] == '\n') p->lc_line++, p->lc_line_start = p->lc_pos + 1;
    *line = p->lc_line;
    *col = (uint32_t)(pos - p->lc_line_start + 1);
}

static int perr_at(P *p, uint32_t line, uint32_t col, PithStatus st, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static int perr_at(P *p, uint32_t line, uint32_t col, PithStatus st, const char *fmt, ...)
{
    if (p->failed) return -1;
    p->failed = 1;
    p->status = st;
    if (p->err && p->err_cap) {
        int n = snprintf(p->err, p->err_cap, "%u:%u: ", line, col);
        if (n >= 0 && (size_t)n < p->err_cap) {
            va_list ap;
            va_start(ap, fmt);
            vsnprintf(p->err + n, p->err_cap - (size_t)n, fmt, ap);
            va_end(ap);
        }
    }
    return -1;
}
#define perr(p, ...) perr_at((p), (p)->tok.line, (p)->tok.col, PITH_BAD_INPUT, __VA_ARGS__)

/* Copies a message keeping it on one line (names and the template's own
 * raise_exception text may hold newlines). */
static void copy_message(char *err, size_t cap, const char *msg)
{
    if (!err || !cap) return;
    size_t k = 0;
    for (; msg[k] && k + 1 < cap; k++) err[k] = (unsigned char)msg[k] < 32 ? ' ' : msg[k];
    err[k] = 0;
}

static void *palloc(P *p, size_t n)
{
    size_t at = (p->used + 15) & ~(size_t)15;
    if (at > p->cap || p->cap - at < n) {
        perr_at(p, p->tok.line, p->tok.col, PITH_NO_MEMORY, "the template needs more than %zu bytes of parse memory",
                p->cap);
        return NULL;
    }
    p->used = at + n;
    return p->mem + at;
}

static Node *mk(P *p, int kind, const Tok *at)
{
    Node *n = palloc(p, sizeof(Node));
    if (!n) return NULL;
    memset(n, 0, sizeof *n);
    n->kind = (uint8_t)kind;
    n->line = at->line;
    n->col = at->col > 65535 ? 65535 : (uint16_t)at->col;
    return n;
}

/* ---- lexer -------------------------------------------------------------- */

/* Bytes of the character at s that Python's str.isspace() accepts, or 0. */
static size_t py_space(const char *s, size_t n)
{
    const unsigned char *u = (const unsigned char *)s;
    if (n < 1) return 0;
    if (u[0] == ' ' || (u[0] >= 9 && u[0] <= 13) || (u[0] >= 0x1c && u[0] <= 0x1f)) return 1;
    if (n >= 2 && u[0] == 0xc2 && (u[1] == 0x85 || u[1] == 0xa0)) return 2;
    if (n < 3) return 0;
    if ((u[0] == 0xe1 && u[1] == 0x9a && u[2] == 0x80) || (u[0] == 0xe3 && u[1] == 0x80 && u[2] == 0x80)) return 3;
    if (u[0] == 0xe2 && u[1] == 0x80 && (u[2] <= 0x8a || u[2] == 0xa8 || u[2] == 0xa9 || u[2] == 0xaf)) return 3;
    if (u[0] == 0xe2 && u[1] == 0x81 && u[2] == 0x9f) return 3;
    return 0;
}

static size_t skip_space(const char *s, size_t pos, size_t end)
{
    size_t k;
    while (pos < end && (k = py_space(s + pos, end - pos)) > 0) pos += k;
    return pos;
}

/* The start of the trailing whitespace of s[start, end). */
static size_t rstrip(const char *s, size_t start, size_t end)
{
    while (end > start) {
        size_t k = 0;
        for (size_t w = 1; w <= 3 && w <= end - start && !k; w++)
            if (py_space(s + end - w, w) == w) k = w;
        if (!k) break;
        end -= k;
    }
    return end;
}

static int has_at(const P *p, size_t pos, const char *lit)
{
    size_t n = strlen(lit);
    return pos <= p->len && p->len - pos >= n && memcmp(p->src + pos, lit, n) == 0;
}

/* The end of a block's closing "%}" at pos ("+%}", "-%}" and spaces,
 * "%}" and one newline: trim_blocks), or 0. */
static size_t block_end_at(const P *p, size_t pos)
{
    if (has_at(p, pos, "+%}")) return pos + 3;
    if (has_at(p, pos, "-%}")) return skip_space(p->src, pos + 3, p->len);
    if (has_at(p, pos, "%}")) return pos + 2 + (pos + 2 < p->len && p->src[pos + 2] == '\n');
    return 0;
}

/* "\s*WORD\s*" then a block end, from pos: the end, or 0. */
static size_t word_tag_at(const P *p, size_t pos, const char *word, int trim)
{
    pos = skip_space(p->src, pos, p->len);
    if (!has_at(p, pos, word)) return 0;
    pos = skip_space(p->src, pos + strlen(word), p->len);
    if (!trim) { /* {% raw %}: no trim_blocks newline */
        if (has_at(p, pos, "-%}")) return skip_space(p->src, pos + 3, p->len);
        return has_at(p, pos, "%}") ? pos + 2 : 0;
    }
    return block_end_at(p, pos);
}

static void set_tok(P *p, Tok *t, int type, size_t pos, size_t end)
{
    t->t = (uint8_t)type;
    t->s = p->src + pos;
    t->len = (uint32_t)(end - pos);
    position(p, pos, &t->line, &t->col);
}

/* Data text [start, end) before a tag of kind '{', '%' or '#' with sign:
 * where it ends after '-' and lstrip_blocks. */
static size_t strip_before_tag(P *p, size_t start, size_t end, int kind, int sign)
{
    if (sign == '-') return rstrip(p->src, start, end);
    if (sign == '+' || kind == '{') return end;
    size_t l = end; /* the start of the text's last line */
    while (l > start && p->src[l - 1] != '\n') l--;
    if (l == start && !p->line_starting) return end;
    return l < end && skip_space(p->src, l, end) == end ? l : end;
}

/* Outside tags: text up to the next tag; the tag's opening is queued. */
static int lex_data(P *p, Tok *t)
{
    const char *s = p->src;
    for (;;) {
        size_t i = p->pos, j = i;
        if (i >= p->len) {
            set_tok(p, t, T_EOF, p->len, p->len);
            return 0;
        }
        while (j + 1 < p->len && !(s[j] == '{' && (s[j + 1] == '{' || s[j + 1] == '%' || s[j + 1] == '#'))) j++;
        if (j + 1 >= p->len) { /* no more tags */
            set_tok(p, t, T_DATA, i, p->len);
            p->pos = p->len;
            return 0;
        }
        int kind = s[j + 1];
        size_t k = j + 2;
        int sign = k < p->len && (s[k] == '-' || s[k] == '+') ? s[k] : 0;
        if (sign) k++;
        size_t raw = kind == '%' ? word_tag_at(p, k, "raw", 0) : 0;
        size_t end = strip_before_tag(p, i, j, kind, sign);
        p->line_starting = 0;
        int have_text = end > i;
        if (have_text) set_tok(p, t, T_DATA, i, end);
        if (raw) { /* the text up to {% endraw %} is data */
            p->line_starting = s[raw - 1] == '\n';
            size_t q = raw, close = 0;
            int rsign = 0;
            for (; q + 1 < p->len; q++) {
                if (s[q] != '{' || s[q + 1] != '%') continue;
                size_t r = q + 2;
                rsign = r < p->len && (s[r] == '-' || s[r] == '+') ? s[r] : 0;
                if ((close = word_tag_at(p, r + (rsign != 0), "endraw", 1)) != 0) break;
            }
            if (!close) {
                Tok at;
                set_tok(p, &at, T_DATA, j, j);
                return perr_at(p, at.line, at.col, PITH_BAD_INPUT, "missing end of raw directive");
            }
            size_t rend = strip_before_tag(p, raw, q, '%', rsign);
            p->pos = close;
            p->line_starting = s[close - 1] == '\n';
            Tok *rt = have_text ? &p->pending : t;
            if (rend > raw) {
                set_tok(p, rt, T_DATA, raw, rend);
                if (have_text) p->have_pending = 1;
                return 0;
            }
            if (have_text) return 0;
            continue;
        }
        if (kind == '#') { /* a comment: skipped */
            size_t q = k, close = 0;
            for (; q < p->len && !close; q++) {
                if (has_at(p, q, "+#}")) close = q + 3;
                else if (has_at(p, q, "-#}")) close = skip_space(s, q + 3, p->len);
                else if (has_at(p, q, "#}")) close = q + 2 + (q + 2 < p->len && s[q + 2] == '\n');
            }
            if (!close) {
                Tok at;
                set_tok(p, &at, T_DATA, j, j);
                return perr_at(p, at.line, at.col, PITH_BAD_INPUT, "missing end of comment tag");
            }
            p->pos = close;
            p->line_starting = s[close - 1] == '\n';
            if (have_text) return 0;
            continue;
        }
        Tok *bt = have_text ? &p->pending : t;
        set_tok(p, bt, kind == '{' ? T_VBEGIN : T_BBEGIN, j, k);
        p->have_pending = have_text;
        p->mode = bt->t;
        p->n_brackets = 0;
        p->pos = k;
        return 0;
    }
}

static int is_name_start(unsigned char c)
{
    return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c >= 0x80;
}

static int is_digit(char c) { return c >= '0' && c <= '9'; }

/* c is one of set's characters (a NUL byte of the text never is). */
static int in_set(const char *set, char c) { return c && strchr(set, c); }

/* Digits with single '_' between them, from pos: the end (pos if none). */
static size_t digits(const char *s, size_t pos, size_t end)
{
    size_t q = pos;
    while (q < end && is_digit(s[q])) {
        q++;
        if (q + 1 < end && s[q] == '_' && is_digit(s[q + 1])) q++;
    }
    return q;
}

/* Inside a tag: one token (the tag's end, a name, a literal, an operator). */
static int lex_tag(P *p, Tok *t)
{
    const char *s = p->src;
    size_t i = skip_space(s, p->pos, p->len), e = 0;
    if (i >= p->len) {
        set_tok(p, t, T_EOF, p->len, p->len);
        return 0;
    }
    if (p->n_brackets == 0) {
        if (p->mode == T_BBEGIN) e = block_end_at(p, i);
        else if (has_at(p, i, "-}}")) e = skip_space(s, i + 3, p->len);
        else if (has_at(p, i, "}}")) e = i + 2;
        if (e) {
            set_tok(p, t, p->mode == T_BBEGIN ? T_BEND : T_VEND, i, e);
            p->mode = 0;
            p->pos = e;
            p->line_starting = s[e - 1] == '\n';
            return 0;
        }
    }
    unsigned char c = (unsigned char)s[i];
    int type = T_OP;
    if (is_digit((char)c)) {
        size_t q = digits(s, i, p->len), f = q;
        int is_float = 0;
        if (!(i > 0 && s[i - 1] == '.')) {
            if (f + 1 < p->len && s[f] == '.' && is_digit(s[f + 1])) f = digits(s, f + 1, p->len), is_float = 1;
            if (f < p->len && (s[f] == 'e' || s[f] == 'E')) {
                size_t x = f + 1 + (f + 1 < p->len && (s[f + 1] == '+' || s[f + 1] == '-'));
                if (x < p->len && is_digit(s[x])) f = digits(s, x, p->len), is_float = 1;
            }
        }
        if (is_float) type = T_FLOAT, e = f;
        else if (c == '0' && q < p->len && in_set("bBoOxX", s[q]) && q == i + 1) {
            e = q + 1;
            while (e < p->len && (is_digit(s[e]) || in_set("abcdefABCDEF_", s[e]))) e++;
            type = T_INT;
        } else if (c == '0') { /* "0(_?0)*": 012 is two tokens, as in jinja2 */
            for (e = i + 1; e < p->len && (s[e] == '0' || (s[e] == '_' && e + 1 < p->len && s[e + 1] == '0'));) e++;
            type = T_INT;
        } else type = T_INT, e = q;
    } else if (is_name_start(c)) {
        for (e = i + 1; e < p->len && (is_name_start((unsigned char)s[e]) || is_digit(s[e]));) e++;
        type = T_NAME;
    } else if (c == '\'' || c == '"') {
        for (e = i + 1; e < p->len && s[e] != (char)c; e++)
            if (s[e] == '\\') e++;
        if (e >= p->len) {
            set_tok(p, t, T_STR, i, i);
            return perr_at(p, t->line, t->col, PITH_BAD_INPUT, "unterminated string");
        }
        e++;
        type = T_STR;
    } else {
        static const char *const two[] = {"//", "**", "==", "!=", ">=", "<="};
        e = i + 1;
        for (size_t k = 0; k < sizeof two / sizeof two[0]; k++)
            if (has_at(p, i, two[k])) e = i + 2;
        if (e == i + 1 && !in_set("+-/*%~[](){}><=.:|,;", (char)c)) {
            set_tok(p, t, T_OP, i, i + 1);
            return perr_at(p, t->line, t->col, PITH_BAD_INPUT, "unexpected character '%c'", c);
        }
        if (c == '(' || c == '[' || c == '{') {
            if (p->n_brackets == (int)sizeof p->brackets) {
                set_tok(p, t, T_OP, i, e);
                return perr_at(p, t->line, t->col, PITH_BAD_INPUT, "brackets nested too deeply");
            }
            p->brackets[p->n_brackets++] = c == '(' ? ')' : c == '[' ? ']' : '}';
        } else if (c == ')' || c == ']' || c == '}') {
            set_tok(p, t, T_OP, i, e);
            if (!p->n_brackets) return perr_at(p, t->line, t->col, PITH_BAD_INPUT, "unexpected '%c'", c);
            char want = p->brackets[--p->n_brackets];
            if (want != (char)c)
                return perr_at(p, t->line, t->col, PITH_BAD_INPUT, "unexpected '%c', expected '%c'", c, want);
        }
    }
    set_tok(p, t, type, i, e);
    p->pos = e;
    p->line_starting = 0;
    return 0;
}

static int lex(P *p, Tok *t)
{
    if (p->have_pending) {
        *t = p->pending;
        p->have_pending = 0;
        return 0;
    }
    return p->mode ? lex_tag(p, t) : lex_data(p, t);
}

/* ---- token stream ------------------------------------------------------- */

static int next(P *p)
{
    if (p->failed) return -1;
    if (p->have_ahead) {
        p->tok = p->ahead;
        p->have_ahead = 0;
        return 0;
    }
    return lex(p, &p->tok);
}

static const Tok *peek(P *p)
{
    if (!p->have_ahead && !p->failed) {
        if (lex(p, &p->ahead) < 0) p->ahead.t = T_EOF;
        p->have_ahead = 1;
    }
    return &p->ahead;
}

static int tok_text(const Tok *t, int type, const char *text)
{
    return t->t == type && t->len == strlen(text) && memcmp(t->s, text, t->len) == 0;
}
static int is_op(P *p, const char *op) { return tok_text(&p->tok, T_OP, op); }
static int is_name(P *p, const char *name) { return tok_text(&p->tok, T_NAME, name); }

/* What the current token is, for messages. */
static const char *describe(const Tok *t, char *buf, size_t cap)
{
    switch (t->t) {
    case T_EOF: return "end of template";
    case T_DATA: return "template data";
    case T_VEND: return "end of print statement";
    case T_BEND: return "end of statement block";
    case T_VBEGIN: return "begin of print statement";
    case T_BBEGIN: return "begin of statement block";
    default: break;
    }
    size_t k = 0; /* the token's first bytes, quoted, on one line */
    buf[k++] = '\'';
    for (uint32_t i = 0; i < t->len && k + 6 < cap && i < 40; i++) {
        unsigned char c = (unsigned char)t->s[i];
        if (c < 32) k += (size_t)snprintf(buf + k, cap - k, "\\x%02x", c);
        else buf[k++] = (char)c;
    }
    buf[k++] = '\'';
    buf[k] = 0;
    return buf;
}

static int expect_op(P *p, const char *op)
{
    char b[64];
    if (!is_op(p, op)) return perr(p, "expected '%s', got %s", op, describe(&p->tok, b, sizeof b));
    return next(p);
}

static int expect_name(P *p, Tok *out)
{
    char b[64];
    if (p->tok.t != T_NAME) return perr(p, "expected a name, got %s", describe(&p->tok, b, sizeof b));
    *out = p->tok;
    return next(p);
}

/* A NUL-terminated copy of a name in the parse region. */
static const char *cname(P *p, const Tok *t)
{
    char *s = palloc(p, t->len + 1);
    if (s) memcpy(s, t->s, t->len), s[t->len] = 0;
    return s;
}

static int nest_in(P *p)
{
    if (++p->nest > PARSE_MAX_NEST) return perr(p, "nested too deeply (more than %d levels)", PARSE_MAX_NEST);
    return 0;
}

/* ---- literals ----------------------------------------------------------- */

static size_t put_utf8(char *o, uint32_t cp)
{
    if (cp < 0x80) return o[0] = (char)cp, 1;
    if (cp < 0x800) return o[0] = (char)(0xc0 | cp >> 6), o[1] = (char)(0x80 | (cp & 63)), 2;
    if (cp < 0x10000) {
        o[0] = (char)(0xe0 | cp >> 12), o[1] = (char)(0x80 | (cp >> 6 & 63)), o[2] = (char)(0x80 | (cp & 63));
        return 3;
    }
    o[0] = (char)(0xf0 | cp >> 18), o[1] = (char)(0x80 | (cp >> 12 & 63));
    o[2] = (char)(0x80 | (cp >> 6 & 63)), o[3] = (char)(0x80 | (cp & 63));
    return 4;
}

static int hexval(char c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* Decodes a string literal's body (Python's escapes) into o; its length or -1. */
static long unescape(P *p, const char *s, size_t n, char *o)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] != '\\' || i + 1 >= n) {
            o[k++] = s[i];
            continue;
        }
        char c = s[++i];
        const char *simple = strchr("\\'\"abfnrtv\n", c);
        if (simple && c) {
            static const char val[] = "\\'\"\a\b\f\n\r\t\v";
            if (c != '\n') o[k++] = val[simple - "\\'\"abfnrtv\n"];
        } else if (c >= '0' && c <= '7') {
            uint32_t v = 0;
            int d = 0;
            for (; d < 3 && i < n && s[i] >= '0' && s[i] <= '7'; d++, i++) v = v * 8 + (uint32_t)(s[i] - '0');
            i--;
            k += put_utf8(o + k, v);
        } else if (c == 'x' || c == 'u' || c == 'U') {
            int w = c == 'x' ? 2 : c == 'u' ? 4 : 8;
            uint32_t v = 0;
            for (int d = 0; d < w; d++) {
                int h = i + 1 + (size_t)d < n ? hexval(s[i + 1 + (size_t)d]) : -1;
                if (h < 0) return perr(p, "truncated \\%c escape in a string", c);
                v = v * 16 + (uint32_t)h;
            }
            i += (size_t)w;
            if (v > 0x10ffff || (v >= 0xd800 && v < 0xe000)) return perr(p, "unsupported \\%c escape in a string", c);
            k += put_utf8(o + k, v);
        } else { /* unknown escapes keep their backslash */
            o[k++] = '\\';
            o[k++] = c;
        }
    }
    return (long)k;
}

/* Adjacent string literals, concatenated (as jinja2 does). */
static Node *parse_strings(P *p)
{
    Node *n = mk(p, N_CONST, &p->tok);
    if (!n) return NULL;
    size_t total = 0, count = 0;
    int plain = 1;
    const Tok *t = &p->tok;
    /* Measure: the source length bounds the decoded one. */
    Tok first = p->tok;
    char *buf = palloc(p, 0); /* the region's end: strings are appended there */
    if (!buf) return NULL;
    while (p->tok.t == T_STR) {
        t = &p->tok;
        if (memchr(t->s, '\\', t->len)) plain = 0;
        if (p->cap - p->used < total + t->len) {
            perr_at(p, t->line, t->col, PITH_NO_MEMORY, "the template needs more than %zu bytes of parse memory",
                    p->cap);
            return NULL;
        }
        long k = unescape(p, t->s + 1, t->len - 2, buf + total);
        if (k < 0) return NULL;
        total += (size_t)k;
        count++;
        if (next(p) < 0) return NULL;
    }
    if (count == 1 && plain) n->v = jv_str(first.s + 1, first.len - 2);
    else {
        p->used += total;
        n->v = jv_str(buf, total);
    }
    return n;
}

static Node *parse_number(P *p)
{
    Node *n = mk(p, N_CONST, &p->tok);
    if (!n) return NULL;
    char b[72];
    size_t k = 0;
    for (uint32_t i = 0; i < p->tok.len && k + 1 < sizeof b; i++)
        if (p->tok.s[i] != '_') b[k++] = p->tok.s[i];
    b[k] = 0;
    if (p->tok.len >= sizeof b) return perr(p, "number literal too long"), NULL;
    if (p->tok.t == T_FLOAT) {
        double d = 0;
        text_to_double(b, k, &d);
        n->v = jv_float(d);
    } else {
        int base = 10;
        const char *d = b;
        if (k > 1 && b[0] == '0' && b[1] != '0') base = strchr("bB", b[1]) ? 2 : strchr("oO", b[1]) ? 8 : 16, d += 2;
        uint64_t v = 0;
        if (!*d) return perr(p, "invalid integer literal"), NULL;
        for (; *d; d++) {
            int h = hexval(*d);
            if (h < 0 || h >= base) return perr(p, "invalid digit in an integer literal"), NULL;
            if (v > (UINT64_MAX >> 1) / (uint64_t)base) return perr(p, "integer literal too large"), NULL;
            v = v * (uint64_t)base + (uint64_t)h;
        }
        if (v > INT64_MAX) return perr(p, "integer literal too large"), NULL;
        n->v = jv_int((int64_t)v);
    }
    return next(p) < 0 ? NULL : n;
}

/* ---- expressions -------------------------------------------------------- */

static Node *parse_expr(P *p);
static Node *parse_or(P *p);
static Node *parse_unary(P *p, int with_filter);
static Node *parse_primary(P *p);
static Node *parse_postfix(P *p, Node *n);
static Node *parse_filter(P *p, Node *n, int start_inline);
static Node *parse_tuple(P *p, int simplified, int with_cond, const char *extra_end, int explicit_parens);

/* Appends n to the chain (*head, *tail). */
static void chain(Node **head, Node **tail, Node *n)
{
    if (*tail) (*tail)->next = n;
    else *head = n;
    *tail = n;
}

static Node *mk2(P *p, int kind, const Tok *at, Node *a, Node *b)
{
    Node *n = p->failed ? NULL : mk(p, kind, at); /* a NULL child is a failure reported */
    if (n) n->a = a, n->b = b;
    return n;
}

static Node *parse_cond(P *p)
{
    if (nest_in(p) < 0) return NULL;
    Node *e = parse_or(p);
    while (e && is_name(p, "if")) {
        Tok at = p->tok;
        Node *n = next(p) < 0 ? NULL : mk(p, N_COND, &at);
        if (!n || !(n->a = parse_or(p))) return NULL;
        n->b = e;
        if (is_name(p, "else")) {
            if (next(p) < 0 || !(n->c = parse_cond(p))) return NULL;
        }
        e = n;
    }
    p->nest--;
    return e;
}

static Node *parse_expr(P *p) { return parse_cond(p); }

static Node *parse_not(P *p);
/* operand (word operand)*, grouped from the left: "and", "or" */
static Node *parse_chain(P *p, const char *word, int kind, Node *(*operand)(P *))
{
    Node *a = operand(p);
    while (a && is_name(p, word)) {
        Tok at = p->tok;
        if (next(p) < 0) return NULL;
        a = mk2(p, kind, &at, a, operand(p));
    }
    return a;
}

static Node *parse_and(P *p) { return parse_chain(p, "and", N_AND, parse_not); }
static Node *parse_or(P *p) { return parse_chain(p, "or", N_OR, parse_and); }

static Node *parse_compare(P *p);
static Node *parse_not(P *p)
{
    if (!is_name(p, "not")) return parse_compare(p);
    Tok at = p->tok;
    if (next(p) < 0 || nest_in(p) < 0) return NULL;
    Node *n = mk2(p, N_NOT, &at, parse_not(p), NULL);
    p->nest--;
    return n && n->a ? n : NULL;
}

static Node *parse_math1(P *p);
static Node *parse_compare(P *p)
{
    static const char *const ops[] = {"==", "!=", "<", "<=", ">", ">="};
    Node *e = parse_math1(p), *head = NULL, *tail = NULL;
    while (e) {
        int op = -1;
        Tok at = p->tok;
        for (int k = 0; k < 6; k++)
            if (is_op(p, ops[k])) op = OP_EQ + k;
        if (op < 0 && is_name(p, "in")) op = OP_IN;
        if (op < 0 && is_name(p, "not") && tok_text(peek(p), T_NAME, "in")) {
            if (next(p) < 0) return NULL;
            op = OP_NOTIN;
        }
        if (op < 0) break;
        if (next(p) < 0) return NULL;
        Node *c = mk2(p, N_CMPOP, &at, parse_math1(p), NULL);
        if (!c || !c->a) return NULL;
        c->op = (uint8_t)op;
        chain(&head, &tail, c);
    }
    if (!e || !head) return e;
    Node *n = mk2(p, N_COMPARE, &p->tok, e, head);
    if (n) n->line = e->line, n->col = e->col;
    return n;
}

/* Left-associative binary levels: each takes the operators listed. */
static Node *parse_binary(P *p, int level);
static const struct {
    const char *ops[4];
    int codes[4];
} levels[] = {
    {{"+", "-"}, {OP_ADD, OP_SUB}},
    {{"~"}, {OP_CONCAT}},
    {{"*", "/", "//", "%"}, {OP_MUL, OP_DIV, OP_FLOORDIV, OP_MOD}},
    {{"**"}, {OP_POW}},
};

static Node *parse_binary(P *p, int level)
{
    Node *a = level < 4 ? parse_binary(p, level + 1) : parse_unary(p, 1);
    while (a && level < 4) {
        int code = -1;
        for (int k = 0; k < 4 && levels[level].ops[k]; k++)
            if (is_op(p, levels[level].ops[k])) code = levels[level].codes[k];
        if (code < 0) break;
        Tok at = p->tok;
        if (next(p) < 0) return NULL;
        a = mk2(p, N_BIN, &at, a, level < 3 ? parse_binary(p, level + 1) : parse_unary(p, 1));
        if (a) a->op = (uint8_t)code;
    }
    return a;
}

static Node *parse_math1(P *p) { return parse_binary(p, 0); }

static Node *parse_filter_expr(P *p, Node *n);
static Node *parse_unary(P *p, int with_filter)
{
    Node *n;
    if (nest_in(p) < 0) return NULL;
    if (is_op(p, "-") || is_op(p, "+")) {
        Tok at = p->tok;
        if (next(p) < 0) return NULL;
        n = mk2(p, at.s[0] == '-' ? N_NEG : N_POS, &at, parse_unary(p, 0), NULL);
        if (n && !n->a) n = NULL;
    } else n = parse_primary(p);
    if (n) n = parse_postfix(p, n);
    if (n && with_filter) n = parse_filter_expr(p, n);
    p->nest--;
    return n;
}

static Node *parse_seq(P *p, int kind, const char *close);

static Node *parse_primary(P *p)
{
    char b[64];
    Tok t = p->tok;
    Node *n;
    switch (t.t) {
    case T_NAME:
        n = mk(p, N_CONST, &t);
        if (!n) return NULL;
        if (tok_text(&t, T_NAME, "true") || tok_text(&t, T_NAME, "True")) n->v = jv_bool(1);
        else if (tok_text(&t, T_NAME, "false") || tok_text(&t, T_NAME, "False")) n->v = jv_bool(0);
        else if (tok_text(&t, T_NAME, "none") || tok_text(&t, T_NAME, "None")) n->v = jv_none();
        else {
            n->kind = N_NAME;
            n->s = t.s;
            n->len = t.len;
            if (p->macro_flags) {
                if (tok_text(&t, T_NAME, "varargs")) *p->macro_flags |= MF_VARARGS;
                if (tok_text(&t, T_NAME, "kwargs")) *p->macro_flags |= MF_KWARGS;
                if (tok_text(&t, T_NAME, "caller")) *p->macro_flags |= MF_CALLER;
            }
        }
        return next(p) < 0 ? NULL : n;
    case T_STR: return parse_strings(p);
    case T_INT:
    case T_FLOAT: return parse_number(p);
    case T_OP:
        if (is_op(p, "(")) {
            if (next(p) < 0 || nest_in(p) < 0) return NULL;
            n = parse_tuple(p, 0, 1, NULL, 1);
            p->nest--;
            return n && expect_op(p, ")") == 0 ? n : NULL;
        }
        if (is_op(p, "[")) return parse_seq(p, N_LIST, "]");
        if (is_op(p, "{")) return parse_seq(p, N_DICT, "}");
        break;
    default: break;
    }
    perr(p, "unexpected %s", describe(&t, b, sizeof b));
    return NULL;
}

/* [a, b] or {k: v, ...}: a trailing comma is allowed. */
static Node *parse_seq(P *p, int kind, const char *close)
{
    Node *n = mk(p, kind, &p->tok), *tail = NULL;
    if (!n || next(p) < 0 || nest_in(p) < 0) return NULL;
    while (!is_op(p, close)) {
        if (tail && expect_op(p, ",") < 0) return NULL;
        if (is_op(p, close)) break;
        Node *item = parse_expr(p);
        if (item && kind == N_DICT) {
            Tok at = p->tok;
            item = expect_op(p, ":") < 0 ? NULL : mk2(p, N_PAIR, &at, item, parse_expr(p));
            if (item && !item->b) item = NULL;
        }
        if (!item) return NULL;
        chain(&n->a, &tail, item);
    }
    p->nest--;
    return expect_op(p, close) < 0 ? NULL : n;
}

static int is_tuple_end(P *p, const char *extra_end)
{
    return p->tok.t == T_VEND || p->tok.t == T_BEND || is_op(p, ")") || (extra_end && is_name(p, extra_end));
}

static Node *parse_tuple(P *p, int simplified, int with_cond, const char *extra_end, int explicit_parens)
{
    char b[64];
    Tok at = p->tok;
    Node *head = NULL, *tail = NULL;
    int is_tuple = 0;
    for (;;) {
        if (tail && expect_op(p, ",") < 0) return NULL;
        if (is_tuple_end(p, extra_end)) break;
        Node *item = simplified ? parse_primary(p) : with_cond ? parse_expr(p) : parse_or(p);
        if (!item) return NULL;
        chain(&head, &tail, item);
        if (!is_op(p, ",")) break;
        is_tuple = 1;
    }
    if (!is_tuple && head) return head;
    if (!is_tuple && !explicit_parens) return perr(p, "expected an expression, got %s", describe(&p->tok, b, sizeof b)), NULL;
    Node *n = mk(p, N_TUPLE, &at);
    if (n) n->a = head;
    return n;
}

/* x[a], x[a:b:c], x[a, b] */
static Node *parse_subscribed(P *p)
{
    Tok at = p->tok;
    Node *start = NULL, *n;
    if (!is_op(p, ":")) {
        start = parse_expr(p);
        if (!start || !is_op(p, ":")) return start;
    }
    if (next(p) < 0 || !(n = mk(p, N_SLICE, &at))) return NULL;
    n->a = start;
    if (!is_op(p, ":") && !is_op(p, "]") && !is_op(p, ",") && !(n->b = parse_expr(p))) return NULL;
    if (is_op(p, ":")) {
        if (next(p) < 0) return NULL;
        if (!is_op(p, "]") && !is_op(p, ",") && !(n->d = parse_expr(p))) return NULL;
    }
    return n;
}

static Node *parse_call_args(P *p, Node *n);

static Node *parse_postfix(P *p, Node *n)
{
    while (n) {
        Tok at = p->tok;
        if (is_op(p, ".")) {
            if (next(p) < 0) return NULL;
            if (p->tok.t == T_NAME) {
                Node *g = mk2(p, N_GETATTR, &at, n, NULL);
                if (!g) return NULL;
                g->s = p->tok.s, g->len = p->tok.len;
                if (next(p) < 0) return NULL;
                n = g;
            } else if (p->tok.t == T_INT) {
                n = mk2(p, N_GETITEM, &at, n, parse_number(p));
                if (n && !n->b) return NULL;
            } else return perr(p, "expected a name or number after '.'"), NULL;
        } else if (is_op(p, "[")) {
            Node *head = NULL, *tail = NULL;
            if (next(p) < 0) return NULL;
            while (!is_op(p, "]")) {
                if (tail && expect_op(p, ",") < 0) return NULL;
                Node *k = parse_subscribed(p);
                if (!k) return NULL;
                chain(&head, &tail, k);
            }
            if (!head) return perr(p, "expected a subscript"), NULL;
            if (next(p) < 0) return NULL;
            if (head != tail) {
                Node *t = mk(p, N_TUPLE, &at);
                if (!t) return NULL;
                t->a = head;
                head = t;
            }
            n = mk2(p, N_GETITEM, &at, n, head);
        } else if (is_op(p, "(")) {
            n = parse_call_args(p, mk2(p, N_CALL, &at, n, NULL));
        } else break;
    }
    return n;
}

/* (a, b, k=v) into n->b: positional arguments, then N_KWARG. */
static Node *parse_call_args(P *p, Node *n)
{
    Node *tail = NULL;
    int kw = 0;
    if (!n || expect_op(p, "(") < 0 || nest_in(p) < 0) return NULL;
    while (!is_op(p, ")")) {
        if (tail && expect_op(p, ",") < 0) return NULL;
        if (is_op(p, ")")) break;
        Node *arg;
        if (is_op(p, "*") || is_op(p, "**")) return perr(p, "*args and **kwargs in calls are not supported"), NULL;
        if (p->tok.t == T_NAME && tok_text(peek(p), T_OP, "=")) {
            Tok name = p->tok;
            if (!(arg = mk(p, N_KWARG, &name)) || !(arg->s = cname(p, &name))) return NULL;
            arg->len = name.len;
            if (next(p) < 0 || next(p) < 0 || !(arg->a = parse_expr(p))) return NULL;
            kw = 1;
        } else {
            if (kw) return perr(p, "a positional argument follows a keyword argument"), NULL;
            if (!(arg = parse_expr(p))) return NULL;
        }
        chain(&n->b, &tail, arg);
    }
    p->nest--;
    return next(p) < 0 ? NULL : n;
}

static Node *parse_filter(P *p, Node *n, int start_inline)
{
    while (is_op(p, "|") || start_inline) {
        if (!start_inline && next(p) < 0) return NULL;
        start_inline = 0;
        Tok name;
        if (expect_name(p, &name) < 0) return NULL;
        Node *f = mk(p, N_FILTER, &name);
        if (!f) return NULL;
        f->a = n, f->s = name.s, f->len = name.len;
        if (is_op(p, "(") && !parse_call_args(p, f)) return NULL;
        n = f;
    }
    return n;
}

static Node *parse_test(P *p, Node *n)
{
    Tok name;
    int neg = 0;
    if (next(p) < 0) return NULL;
    if (is_name(p, "not")) {
        if (next(p) < 0) return NULL;
        neg = 1;
    }
    if (expect_name(p, &name) < 0) return NULL;
    Node *t = mk(p, N_TEST, &name);
    if (!t) return NULL;
    t->a = n, t->s = name.s, t->len = name.len, t->op = (uint8_t)neg;
    int type = p->tok.t;
    if (is_op(p, "(")) return parse_call_args(p, t);
    if ((type == T_NAME || type == T_STR || type == T_INT || type == T_FLOAT || is_op(p, "[") || is_op(p, "{")) &&
        !is_name(p, "else") && !is_name(p, "or") && !is_name(p, "and")) {
        if (is_name(p, "is")) return perr(p, "you cannot chain multiple tests with is"), NULL;
        if (!(t->b = parse_postfix(p, parse_primary(p)))) return NULL;
    }
    return t;
}

static Node *parse_filter_expr(P *p, Node *n)
{
    while (n) {
        if (is_op(p, "|")) n = parse_filter(p, n, 0);
        else if (is_name(p, "is")) n = parse_test(p, n);
        else if (is_op(p, "(")) {
            Tok at = p->tok;
            n = parse_call_args(p, mk2(p, N_CALL, &at, n, NULL));
        } else break;
    }
    return n;
}

/* ---- statements --------------------------------------------------------- */

static int subparse(P *p, const char *const *ends, Node **body);

/* ":"? "%}" body, up to {% END %} with END in ends (then p->tok is END,
 * consumed with drop); ends[0] closes the block. */
static Node *parse_body(P *p, const char *const *ends, int drop, int *ok)
{
    Node *body = NULL;
    *ok = 0;
    if (is_op(p, ":") && next(p) < 0) return NULL;
    if (p->tok.t != T_BEND) {
        char b[64];
        perr(p, "expected end of statement block, got %s", describe(&p->tok, b, sizeof b));
        return NULL;
    }
    if (next(p) < 0 || nest_in(p) < 0 || subparse(p, ends, &body) < 0) return NULL;
    p->nest--;
    if (drop && next(p) < 0) return NULL;
    *ok = 1;
    return body;
}

static int can_assign(const Node *t)
{
    if (t->kind == N_NAME) return 1;
    if (t->kind != N_TUPLE) return 0;
    for (const Node *i = t->a; i; i = i->next)
        if (!can_assign(i)) return 0;
    return 1;
}

/* A name, a tuple of names (nested), or (with_ns) NAME.ATTR. */
static Node *parse_target(P *p, const char *extra_end, int with_ns)
{
    char b[64];
    Tok at = p->tok;
    if (with_ns && p->tok.t == T_NAME && tok_text(peek(p), T_OP, ".")) {
        Node *n = mk(p, N_NSREF, &at), *name = mk(p, N_NAME, &at);
        if (!n || !name || next(p) < 0 || next(p) < 0) return NULL;
        name->s = at.s, name->len = at.len;
        Tok attr;
        if (expect_name(p, &attr) < 0) return NULL;
        n->a = name, n->s = attr.s, n->len = attr.len;
        return n;
    }
    Node *t = parse_tuple(p, 1, 0, extra_end, 0);
    if (!t) return NULL;
    if (!can_assign(t)) return perr_at(p, at.line, at.col, PITH_BAD_INPUT, "cannot assign to %s", describe(&at, b, sizeof b)), NULL;
    return t;
}

/* (a, b=default) of a macro or a call block. */
static Node *parse_signature(P *p)
{
    Node *head = NULL, *tail = NULL;
    int defaults = 0;
    if (expect_op(p, "(") < 0) return NULL;
    while (!is_op(p, ")")) {
        if (tail && expect_op(p, ",") < 0) return NULL;
        Tok name;
        if (expect_name(p, &name) < 0) return NULL;
        Node *n = mk(p, N_PARAM, &name);
        if (!n || !(n->s = cname(p, &name))) return NULL;
        n->len = name.len;
        if (is_op(p, "=")) {
            if (next(p) < 0 || !(n->a = parse_expr(p))) return NULL;
            defaults = 1;
        } else if (defaults) return perr(p, "non-default argument follows default argument"), NULL;
        chain(&head, &tail, n);
    }
    if (next(p) < 0) return NULL;
    if (!head) head = mk(p, N_PARAM, &p->tok); /* no parameters: an empty mark, kept apart from a parse failure */
    return head;
}

static Node *parse_if(P *p, const Tok *at)
{
    static const char *const ends[] = {"endif", "elif", "else", NULL}, *const endif[] = {"endif", NULL};
    Node *n = mk(p, N_IF, at), *cur = n;
    int ok;
    if (!n || next(p) < 0 || !(n->a = parse_tuple(p, 0, 0, NULL, 0))) return NULL;
    n->b = parse_body(p, ends, 0, &ok);
    while (ok) {
        if (is_name(p, "elif")) {
            Node *e = mk(p, N_IF, &p->tok);
            if (!e || next(p) < 0 || !(e->a = parse_tuple(p, 0, 0, NULL, 0))) return NULL;
            cur->c = e;
            cur = e;
            e->b = parse_body(p, ends, 0, &ok);
        } else if (is_name(p, "else")) {
            if (next(p) < 0) return NULL;
            cur->c = parse_body(p, endif, 1, &ok);
            return ok ? n : NULL;
        } else return next(p) < 0 ? NULL : n;
    }
    return NULL;
}

static Node *parse_for(P *p, const Tok *at)
{
    static const char *const ends[] = {"endfor", "else", NULL}, *const endfor[] = {"endfor", NULL};
    Node *n = mk(p, N_FOR, at), *x = mk(p, N_FORX, at);
    int ok;
    if (!n || !x || next(p) < 0 || !(n->a = parse_target(p, "in", 0))) return NULL;
    n->d = x;
    if (!is_name(p, "in")) return perr(p, "expected 'in' in a for loop"), NULL;
    if (next(p) < 0 || !(n->b = parse_tuple(p, 0, 0, "recursive", 0))) return NULL;
    if (is_name(p, "if") && (next(p) < 0 || !(x->a = parse_expr(p)))) return NULL;
    if (is_name(p, "recursive")) {
        if (next(p) < 0) return NULL;
        n->op = 1;
    }
    p->loops++;
    n->c = parse_body(p, ends, 0, &ok);
    p->loops--;
    if (!ok) return NULL;
    if (is_name(p, "endfor")) return next(p) < 0 ? NULL : n;
    if (next(p) < 0) return NULL;
    x->b = parse_body(p, endfor, 1, &ok);
    return ok ? n : NULL;
}

static Node *parse_set(P *p, const Tok *at)
{
    static const char *const ends[] = {"endset", NULL};
    Node *n = mk(p, N_SET, at);
    int ok;
    if (!n || next(p) < 0 || !(n->a = parse_target(p, NULL, 1))) return NULL;
    if (is_op(p, "=")) {
        if (next(p) < 0 || !(n->b = parse_tuple(p, 0, 1, NULL, 0))) return NULL;
        return n;
    }
    n->kind = N_SETBLOCK;
    if (is_op(p, "|") && !(n->c = parse_filter(p, NULL, 0))) return NULL;
    n->b = parse_body(p, ends, 1, &ok);
    return ok ? n : NULL;
}

/* {% macro NAME(params) %} and {% call(params) EXPR %}: a = params, b = body. */
static Node *parse_macro(P *p, const Tok *at, int is_call)
{
    static const char *const endmacro[] = {"endmacro", NULL}, *const endcall[] = {"endcall", NULL};
    Node *n = mk(p, is_call ? N_CALLBLOCK : N_MACRO, at);
    Tok name;
    int ok, loops = p->loops;
    uint8_t *outer = p->macro_flags;
    if (!n || next(p) < 0) return NULL;
    if (!is_call) {
        if (expect_name(p, &name) < 0) return NULL;
        n->s = name.s, n->len = name.len;
    }
    if ((!is_call || is_op(p, "(")) && !(n->a = parse_signature(p))) return NULL;
    if (is_call) {
        Tok cat = p->tok;
        if (!(n->c = parse_expr(p))) return NULL;
        if (n->c->kind != N_CALL) return perr_at(p, cat.line, cat.col, PITH_BAD_INPUT, "expected a call"), NULL;
    }
    p->loops = 0;
    p->macro_flags = &n->op;
    n->b = parse_body(p, is_call ? endcall : endmacro, 1, &ok);
    p->macro_flags = outer;
    p->loops = loops;
    return ok ? n : NULL;
}

static Node *parse_statement(P *p)
{
    static const char *const endfilter[] = {"endfilter", NULL}, *const endgen[] = {"endgeneration", NULL};
    char b[64];
    Tok at = p->tok;
    Node *n;
    int ok;
    if (p->tok.t != T_NAME) return perr(p, "expected a tag name, got %s", describe(&p->tok, b, sizeof b)), NULL;
    if (is_name(p, "if")) return parse_if(p, &at);
    if (is_name(p, "for")) return parse_for(p, &at);
    if (is_name(p, "set")) return parse_set(p, &at);
    if (is_name(p, "macro")) return parse_macro(p, &at, 0);
    if (is_name(p, "call")) return parse_macro(p, &at, 1);
    if (is_name(p, "break") || is_name(p, "continue")) {
        if (!p->loops) return perr(p, "'%.*s' outside a loop", (int)at.len, at.s), NULL;
        n = mk(p, is_name(p, "break") ? N_BREAK : N_CONTINUE, &at);
        return n && next(p) == 0 ? n : NULL;
    }
    if (is_name(p, "filter")) {
        if (!(n = mk(p, N_FILTERBLOCK, &at)) || next(p) < 0 || !(n->a = parse_filter(p, NULL, 1))) return NULL;
        n->b = parse_body(p, endfilter, 1, &ok);
        return ok ? n : NULL;
    }
    if (is_name(p, "generation")) { /* transformers' AssistantTracker: renders its body */
        if (!(n = mk(p, N_SCOPE, &at)) || next(p) < 0) return NULL;
        n->b = parse_body(p, endgen, 1, &ok);
        return ok ? n : NULL;
    }
    perr(p, "unknown tag '%.*s'", (int)at.len, at.s);
    return NULL;
}

static int subparse(P *p, const char *const *ends, Node **body)
{
    char b[64];
    Node *tail = NULL, *n;
    for (;;) {
        Tok at = p->tok;
        switch (p->tok.t) {
        case T_DATA:
            if (!(n = mk(p, N_DATA, &at))) return -1;
            n->s = at.s, n->len = at.len;
            if (next(p) < 0) return -1;
            break;
        case T_VBEGIN:
            if (!(n = mk(p, N_OUTPUT, &at)) || next(p) < 0 || !(n->a = parse_tuple(p, 0, 1, NULL, 0))) return -1;
            if (p->tok.t != T_VEND)
                return perr(p, "expected end of print statement, got %s", describe(&p->tok, b, sizeof b));
            if (next(p) < 0) return -1;
            break;
        case T_BBEGIN:
            if (next(p) < 0) return -1;
            for (int k = 0; ends && ends[k]; k++)
                if (is_name(p, ends[k])) return 0;
            if (!(n = parse_statement(p))) return -1;
            if (p->tok.t != T_BEND)
                return perr(p, "expected end of statement block, got %s", describe(&p->tok, b, sizeof b));
            if (next(p) < 0) return -1;
            break;
        case T_EOF:
            if (ends) return perr(p, "unexpected end of template: a block is not closed by '{%% %s %%}'", ends[0]);
            return 0;
        default: return perr(p, "unexpected %s", describe(&p->tok, b, sizeof b));
        }
        chain(body, &tail, n);
    }
}

uint64_t jinja_parse_bound(size_t len)
{
    /* The normalized text and decoded strings (each at most the text), and
     * at most one node (and a few bytes of a name's copy) per byte of text:
     * a node takes a token, a token at least a byte ("{{a<b}}": 5 nodes). */
    uint64_t node = (sizeof(Node) + 15) & ~(uint64_t)15;
    return 2 * ((uint64_t)len + 32) + ((uint64_t)len + 16) * node + 256;
}

PithStatus jinja_parse(const char *src, size_t len, void *mem, size_t cap, JinjaTemplate **out, char *err,
                       size_t err_cap)
{
    P p;
    memset(&p, 0, sizeof p);
    p.mem = mem, p.cap = cap, p.err = err, p.err_cap = err_cap, p.lc_line = 1;
    if (err && err_cap) err[0] = 0;
    *out = NULL;
    if (len > UINT32_MAX / 2) /* spans and positions are 32-bit */
        return perr_at(&p, 1, 1, PITH_UNSUPPORTED, "a template of %zu bytes is too large", len), p.status;
    JinjaTemplate *t = palloc(&p, sizeof *t);
    char *text = t ? palloc(&p, len + 1) : NULL;
    if (!text) return p.status;
    /* jinja2's newline rule: \r\n and \r become \n, one final newline goes. */
    size_t n = 0;
    for (size_t i = 0; i < len; i++) {
        if (src[i] == '\r' && i + 1 < len && src[i + 1] == '\n') continue;
        text[n++] = src[i] == '\r' ? '\n' : src[i];
    }
    if (n && text[n - 1] == '\n') n--;
    t->src = p.src = text;
    t->len = p.len = n;
    t->body = NULL;
    p.line_starting = 1;
    if (next(&p) < 0 || subparse(&p, NULL, &t->body) < 0) {
        copy_message(err, err_cap, err ? err : "");
        return p.status;
    }
    *out = t;
    return PITH_OK;
}

/* ---- evaluation --------------------------------------------------------- */

typedef struct Var Var;
struct Var {
    const char *name;
    uint32_t len;
    int set; /* 0: cleared for a new loop iteration */
    JValue v;
    Var *next;
};

typedef struct Frame Frame;
struct Frame {
    Var *vars;
    Frame *parent;
};

/* The state of a for loop while it runs (a JV_LOOP value points here). */
typedef struct {
    JList *items;
    uint32_t i, depth;
    const Node *node;
    Frame *outer;
    JValue changed; /* loop.changed's last arguments (a tuple), Undefined at first */
} Loop;

/* A macro or a call block's caller: its node (a = params, b = body) and
 * the frame it was defined in. */
typedef struct {
    const Node *def;
    Frame *env;
} Closure;

struct JinjaRender {
    JCtx c;
    const JinjaTemplate *t;
    Frame root;
    uint32_t nest, max_nest;
    JValue block_input; /* what a filter block's first filter reads */
};
typedef struct JinjaRender R;

enum { EX_OK = 0, EX_BREAK = 1, EX_CONTINUE = 2 };

static void at_node(R *r, const Node *n)
{
    r->c.line = n->line;
    r->c.col = n->col;
}

static Var *frame_find(Frame *f, const char *s, uint32_t n)
{
    for (Var *v = f->vars; v; v = v->next)
        if (v->len == n && memcmp(v->name, s, n) == 0) return v;
    return NULL;
}

static int frame_set(R *r, Frame *f, const char *s, uint32_t n, JValue val)
{
    Var *v = frame_find(f, s, n);
    if (!v) {
        if (!(v = jv_alloc(&r->c, sizeof *v))) return -1;
        v->name = s, v->len = n, v->next = f->vars;
        f->vars = v;
    }
    v->set = 1;
    v->v = val;
    return 0;
}

static const JValue *lookup(Frame *f, const char *s, uint32_t n)
{
    for (; f; f = f->parent) {
        Var *v = frame_find(f, s, n);
        if (v && v->set) return &v->v;
    }
    return NULL;
}

static Frame *frame_new(R *r, Frame *parent)
{
    Frame *f = jv_alloc(&r->c, sizeof *f);
    if (f) f->vars = NULL, f->parent = parent;
    return f;
}

static int eval(R *r, Frame *f, const Node *n, JValue *out);
static int exec(R *r, Frame *f, const Node *body, JBuf *out);

static int enter(R *r)
{
    if (++r->nest > r->max_nest)
        return jv_fail(&r->c, PITH_NO_MEMORY, "nested deeper than %u levels of evaluation", r->max_nest);
    return 0;
}

static int undefined_error(R *r, JValue v)
{
    if (v.len) return jv_fail(&r->c, PITH_BAD_INPUT, "'%.*s' is undefined", (int)v.len, v.u.s);
    return jv_fail(&r->c, PITH_BAD_INPUT, "a value is undefined");
}

/* Evaluated arguments of a call, a filter or a test. */
typedef struct {
    JValue pos[ARGS_ON_STACK], kw[ARGS_ON_STACK];
    const char *names[ARGS_ON_STACK];
    JArgs a;
} Args;

static int eval_args(R *r, Frame *f, const Node *list, const JValue *extra_kw_value, const char *extra_kw, Args *st)
{
    int np = 0, nk = extra_kw != NULL;
    for (const Node *n = list; n; n = n->next) n->kind == N_KWARG ? nk++ : np++;
    JValue *pos = st->pos, *kw = st->kw;
    const char **names = st->names;
    if (np > ARGS_ON_STACK && !(pos = jv_alloc(&r->c, sizeof(JValue) * (size_t)np))) return -1;
    if (nk > ARGS_ON_STACK &&
        (!(kw = jv_alloc(&r->c, sizeof(JValue) * (size_t)nk)) || !(names = jv_alloc(&r->c, sizeof(char *) * (size_t)nk))))
        return -1;
    int ip = 0, ik = 0;
    for (const Node *n = list; n; n = n->next) {
        if (n->kind == N_KWARG) {
            names[ik] = n->s;
            if (eval(r, f, n->a, &kw[ik++]) < 0) return -1;
        } else if (eval(r, f, n, &pos[ip++]) < 0) return -1;
    }
    if (extra_kw) names[ik] = extra_kw, kw[ik++] = *extra_kw_value;
    st->a.pos = pos, st->a.n_pos = np, st->a.kw = kw, st->a.kw_names = names, st->a.n_kw = nk;
    return 0;
}

/* ---- loops -------------------------------------------------------------- */

/* loop.cycle(a, b, ...) and loop.changed(...): loop methods bound to self. */
static int loop_method(JCtx *c, const JFunc *fn, const JArgs *a, JValue *out)
{
    Loop *L = fn->self.u.loop;
    if (fn->name[1] == 'y') { /* cycle */
        if (a->n_pos == 0) return jv_fail(c, PITH_BAD_INPUT, "no items for cycling given");
        *out = a->pos[L->i % (uint32_t)a->n_pos];
        return 0;
    }
    JValue now;
    if (jv_list_new(c, (uint32_t)a->n_pos, &now) < 0) return -1;
    now.flags = JF_TUPLE;
    for (int k = 0; k < a->n_pos; k++)
        if (jv_list_push(c, now.u.list, a->pos[k]) < 0) return -1;
    *out = jv_bool(L->changed.type == JV_UNDEFINED || !jv_equal(L->changed, now));
    L->changed = now;
    return 0;
}

static int loop_attr(R *r, JValue lv, const char *s, uint32_t len, JValue *out)
{
    static const char *const names[] = {"index", "index0", "revindex", "revindex0", "first", "last", "length",
                                        "previtem", "nextitem", "depth", "depth0", "cycle", "changed"};
    const Loop *L = lv.u.loop;
    int64_t i = L->i, n = L->items->n;
    int k = 0;
    while (k < 13 && !(strlen(names[k]) == len && memcmp(names[k], s, len) == 0)) k++;
    switch (k) {
    case 0: *out = jv_int(i + 1); break;
    case 1: *out = jv_int(i); break;
    case 2: *out = jv_int(n - i); break;
    case 3: *out = jv_int(n - i - 1); break;
    case 4: *out = jv_bool(i == 0); break;
    case 5: *out = jv_bool(i == n - 1); break;
    case 6: *out = jv_int(n); break;
    case 7: *out = i > 0 ? L->items->items[i - 1] : jv_undefined("previtem", 8); break;
    case 8: *out = i + 1 < n ? L->items->items[i + 1] : jv_undefined("nextitem", 8); break;
    case 9: *out = jv_int(L->depth); break;
    case 10: *out = jv_int(L->depth - 1); break;
    case 11:
    case 12: {
        JFunc *fn = jv_alloc(&r->c, sizeof *fn);
        if (!fn) return -1;
        memset(fn, 0, sizeof *fn);
        fn->call = loop_method, fn->self = lv, fn->name = names[k], fn->name_len = (uint32_t)strlen(names[k]);
        out->type = JV_FUNC, out->flags = 0, out->len = 0, out->u.func = fn;
        break;
    }
    default: *out = jv_undefined(s, len);
    }
    return 0;
}

static int assign(R *r, Frame *f, const Node *target, JValue v);

/* Runs a for loop (n) over iter, in a frame under outer. */
static int exec_for(R *r, Frame *outer, const Node *n, JValue iter, uint32_t depth, JBuf *out)
{
    JCtx *c = &r->c;
    JList *items;
    const Node *x = n->d;
    at_node(r, n->b);
    if (jv_iterate(c, iter, &items) < 0) return -1;
    Frame *lf = frame_new(r, outer);
    Loop *L = jv_alloc(c, sizeof *L);
    if (!lf || !L) return -1;
    if (x->a) { /* for x in xs if cond: the loop sees only the items that pass */
        JValue kept, t;
        if (jv_list_new(c, items->n, &kept) < 0) return -1;
        for (uint32_t i = 0; i < items->n; i++) {
            if (jv_step(c) < 0 || assign(r, lf, n->a, items->items[i]) < 0 || eval(r, lf, x->a, &t) < 0) return -1;
            if (jv_truthy(t) && jv_list_push(c, kept.u.list, items->items[i]) < 0) return -1;
        }
        items = kept.u.list;
    }
    L->items = items, L->depth = depth, L->node = n, L->outer = outer, L->changed = jv_undefined("", 0);
    JValue lv = {.type = JV_LOOP};
    lv.u.loop = L;
    for (uint32_t i = 0; i < items->n; i++) {
        for (Var *v = lf->vars; v; v = v->next) v->set = 0;
        L->i = i;
        if (jv_step(c) < 0 || assign(r, lf, n->a, items->items[i]) < 0 || frame_set(r, lf, "loop", 4, lv) < 0)
            return -1;
        int rc = exec(r, lf, n->c, out);
        if (rc < 0) return -1;
        if (rc == EX_BREAK) break;
    }
    if (items->n == 0 && x->b) {
        Frame *ef = frame_new(r, outer);
        if (!ef || exec(r, ef, x->b, out) < 0) return -1;
    }
    return 0;
}

/* ---- macros ------------------------------------------------------------- */

static int closure_call(JCtx *c, const JFunc *fn, const JArgs *a, JValue *out)
{
    R *r = c->render;
    const Closure *cl = fn->data;
    const Node *def = cl->def;
    int flags = def->op;
    if (c->depth >= c->lim.max_depth)
        return jv_fail(c, PITH_NO_MEMORY, "macro calls nested deeper than %u", c->lim.max_depth);
    if (jv_step(c) < 0) return -1;
    Frame *mf = frame_new(r, cl->env);
    if (!mf) return -1;
    int n_params = 0, used_kw = 0;
    for (const Node *p = def->a; p; p = p->next) {
        if (!p->len) continue; /* the mark of an empty signature */
        JValue v;
        int have = 0;
        if (n_params < a->n_pos) v = a->pos[n_params], have = 1;
        for (int k = 0; k < a->n_kw; k++) {
            if (strlen(a->kw_names[k]) != p->len || memcmp(a->kw_names[k], p->s, p->len) != 0) continue;
            if (have)
                return jv_fail(c, PITH_BAD_INPUT, "macro '%.*s' got multiple values for argument '%s'",
                               (int)fn->name_len, fn->name, p->s);
            v = a->kw[k], have = 1, used_kw++;
        }
        if (!have) {
            if (p->a) {
                if (eval(r, mf, p->a, &v) < 0) return -1;
            } else v = jv_undefined(p->s, p->len);
        }
        if (frame_set(r, mf, p->s, p->len, v) < 0) return -1;
        n_params++;
    }
    JValue varargs, kwargs;
    if (a->n_pos > n_params && !(flags & MF_VARARGS))
        return jv_fail(c, PITH_BAD_INPUT, "macro '%.*s' takes not more than %d argument(s)", (int)fn->name_len,
                       fn->name, n_params);
    if (flags & MF_VARARGS) {
        if (jv_list_new(c, 0, &varargs) < 0) return -1;
        varargs.flags = JF_TUPLE;
        for (int k = n_params; k < a->n_pos; k++)
            if (jv_list_push(c, varargs.u.list, a->pos[k]) < 0) return -1;
        if (frame_set(r, mf, "varargs", 7, varargs) < 0) return -1;
    }
    if ((flags & MF_KWARGS) && (jv_dict_new(c, 0, &kwargs) < 0 || frame_set(r, mf, "kwargs", 6, kwargs) < 0)) return -1;
    if ((flags & MF_CALLER) && frame_set(r, mf, "caller", 6, jv_undefined("caller", 6)) < 0) return -1;
    for (int k = 0; k < a->n_kw && used_kw < a->n_kw; k++) {
        const char *name = a->kw_names[k];
        uint32_t len = (uint32_t)strlen(name);
        int is_param = 0;
        for (const Node *p = def->a; p; p = p->next)
            if (p->len == len && memcmp(p->s, name, len) == 0) is_param = 1;
        if (is_param) continue;
        if (len == 6 && memcmp(name, "caller", 6) == 0 && (flags & MF_CALLER)) {
            if (frame_set(r, mf, "caller", 6, a->kw[k]) < 0) return -1;
        } else if (!(flags & MF_KWARGS)) {
            return jv_fail(c, PITH_BAD_INPUT, "macro '%.*s' takes no keyword argument '%s'", (int)fn->name_len,
                           fn->name, name);
        } else if (jv_dict_set(c, kwargs.u.dict, jv_str(name, len), a->kw[k]) < 0) return -1;
    }
    JBuf b;
    jbuf_init(&b, c);
    c->depth++;
    int rc = exec(r, mf, def->b, &b);
    c->depth--;
    if (rc < 0) return -1;
    *out = jbuf_value(&b);
    return 0;
}

static int make_closure(R *r, Frame *f, const Node *def, const char *name, uint32_t len, JValue *out)
{
    Closure *cl = jv_alloc(&r->c, sizeof *cl);
    JFunc *fn = jv_alloc(&r->c, sizeof *fn);
    if (!cl || !fn) return -1;
    cl->def = def, cl->env = f;
    memset(fn, 0, sizeof *fn);
    fn->call = closure_call, fn->data = cl, fn->name = name, fn->name_len = len;
    memset(out, 0, sizeof *out);
    out->type = JV_FUNC;
    out->u.func = fn;
    return 0;
}

/* ---- expressions -------------------------------------------------------- */

__attribute__((noinline)) static int eval_call(R *r, Frame *f, const Node *n, const JValue *caller, JValue *out)
{
    JValue fv;
    Args args;
    if (eval(r, f, n->a, &fv) < 0 || eval_args(r, f, n->b, caller, caller ? "caller" : NULL, &args) < 0) return -1;
    at_node(r, n);
    if (fv.type == JV_FUNC) return fv.u.func->call(&r->c, fv.u.func, &args.a, out);
    if (fv.type == JV_UNDEFINED) return undefined_error(r, fv);
    if (fv.type == JV_LOOP) { /* loop(items) of a recursive loop */
        const Loop *L = fv.u.loop;
        if (!L->node->op) return jv_fail(&r->c, PITH_BAD_INPUT, "the loop is not recursive: it cannot be called");
        if (args.a.n_pos != 1 || args.a.n_kw) return jv_fail(&r->c, PITH_BAD_INPUT, "loop() takes one argument");
        if (r->c.depth >= r->c.lim.max_depth)
            return jv_fail(&r->c, PITH_NO_MEMORY, "recursive loops nested deeper than %u", r->c.lim.max_depth);
        JBuf b;
        jbuf_init(&b, &r->c);
        r->c.depth++;
        int rc = exec_for(r, L->outer, L->node, args.a.pos[0], L->depth + 1, &b);
        r->c.depth--;
        if (rc < 0) return -1;
        *out = jbuf_value(&b);
        return 0;
    }
    return jv_fail(&r->c, PITH_BAD_INPUT, "'%s' object is not callable", jv_type_name(fv));
}

/* x|name(args) and x is name(args): jinja_builtins.c's tables. Kept out
 * of eval (noinline, as eval_call): their arguments' room on the stack is
 * then taken only by calls, not by every level of an expression. */
__attribute__((noinline)) static int eval_filter_test(R *r, Frame *f, const Node *n, JValue *out)
{
    JCtx *c = &r->c;
    JValue in;
    Args args;
    int rc, res = 0;
    if (n->kind == N_FILTER && !n->a) in = r->block_input;
    else if (eval(r, f, n->a, &in) < 0) return -1;
    if (eval_args(r, f, n->b, NULL, NULL, &args) < 0) return -1;
    at_node(r, n);
    if (n->kind == N_FILTER) {
        if (jv_step(c) < 0) return -1;
        if ((rc = jb_filter(c, n->s, n->len, in, &args.a, out)) == 1)
            return jv_fail(c, PITH_BAD_INPUT, "unknown filter '%.*s'", (int)n->len, n->s);
        return rc;
    }
    if ((rc = jb_test(c, n->s, n->len, in, &args.a, &res)) == 1)
        return jv_fail(c, PITH_BAD_INPUT, "unknown test '%.*s'", (int)n->len, n->s);
    *out = jv_bool(n->op ? !res : res);
    return rc;
}

static int eval_inner(R *r, Frame *f, const Node *n, JValue *out)
{
    JCtx *c = &r->c;
    JValue a, b;
    at_node(r, n);
    switch (n->kind) {
    case N_CONST: *out = n->v; return 0;
    case N_NAME: {
        const JValue *v = lookup(f, n->s, n->len);
        if (v) {
            *out = *v;
            return 0;
        }
        int rc = jb_global(c, n->s, n->len, out);
        if (rc == 1) *out = jv_undefined(n->s, n->len);
        return rc < 0 ? -1 : 0;
    }
    case N_GETATTR:
        if (eval(r, f, n->a, &a) < 0) return -1;
        at_node(r, n);
        if (a.type == JV_UNDEFINED) return undefined_error(r, a);
        if (a.type == JV_LOOP) return loop_attr(r, a, n->s, n->len, out);
        return jv_getattr(c, a, n->s, n->len, out);
    case N_GETITEM:
        if (eval(r, f, n->a, &a) < 0) return -1;
        if (n->b->kind == N_SLICE) {
            JValue s[3];
            const Node *part[3] = {n->b->a, n->b->b, n->b->d};
            for (int k = 0; k < 3; k++)
                if (part[k] && eval(r, f, part[k], &s[k]) < 0) return -1;
            at_node(r, n);
            if (a.type == JV_UNDEFINED) return undefined_error(r, a);
            return jv_slice(c, a, part[0] ? &s[0] : NULL, part[1] ? &s[1] : NULL, part[2] ? &s[2] : NULL, out);
        }
        if (eval(r, f, n->b, &b) < 0) return -1;
        at_node(r, n);
        if (a.type == JV_UNDEFINED) return undefined_error(r, a);
        if (a.type == JV_LOOP && b.type == JV_STRING) return loop_attr(r, a, b.u.s, b.len, out);
        return jv_getitem(c, a, b, out);
    case N_SLICE: return jv_fail(c, PITH_BAD_INPUT, "a slice outside a subscript");
    case N_CALL: return eval_call(r, f, n, NULL, out);
    case N_FILTER:
    case N_TEST: return eval_filter_test(r, f, n, out);
    case N_BIN:
        if (eval(r, f, n->a, &a) < 0 || eval(r, f, n->b, &b) < 0) return -1;
        at_node(r, n);
        return jv_binary(c, op_text[n->op], a, b, out);
    case N_AND:
    case N_OR:
        if (eval(r, f, n->a, out) < 0) return -1;
        if (jv_truthy(*out) == (n->kind == N_OR)) return 0;
        return eval(r, f, n->b, out);
    case N_NOT:
        if (eval(r, f, n->a, &a) < 0) return -1;
        *out = jv_bool(!jv_truthy(a));
        return 0;
    case N_NEG:
    case N_POS:
        if (eval(r, f, n->a, &a) < 0) return -1;
        at_node(r, n);
        return jv_unary(c, n->kind == N_NEG ? '-' : '+', a, out);
    case N_COMPARE:
        if (eval(r, f, n->a, &a) < 0) return -1;
        for (const Node *k = n->b; k; k = k->next) {
            if (eval(r, f, k->a, &b) < 0) return -1;
            at_node(r, k);
            if (jv_binary(c, op_text[k->op], a, b, out) < 0) return -1;
            if (!jv_truthy(*out)) return 0;
            a = b;
        }
        return 0;
    case N_COND:
        if (eval(r, f, n->a, &a) < 0) return -1;
        if (jv_truthy(a)) return eval(r, f, n->b, out);
        if (n->c) return eval(r, f, n->c, out);
        *out = jv_undefined("", 0);
        return 0;
    case N_LIST:
    case N_TUPLE: {
        uint32_t count = 0;
        for (const Node *k = n->a; k; k = k->next) count++;
        if (jv_list_new(c, count, out) < 0) return -1;
        if (n->kind == N_TUPLE) out->flags = JF_TUPLE;
        for (const Node *k = n->a; k; k = k->next)
            if (eval(r, f, k, &a) < 0 || jv_list_push(c, out->u.list, a) < 0) return -1;
        return 0;
    }
    case N_DICT: {
        uint32_t count = 0;
        for (const Node *k = n->a; k; k = k->next) count++;
        if (jv_dict_new(c, count, out) < 0) return -1;
        for (const Node *k = n->a; k; k = k->next)
            if (eval(r, f, k->a, &a) < 0 || eval(r, f, k->b, &b) < 0 || jv_dict_set(c, out->u.dict, a, b) < 0)
                return -1;
        return 0;
    }
    default: return jv_fail(c, PITH_INTERNAL, "node %d is not an expression", n->kind);
    }
}

static int eval(R *r, Frame *f, const Node *n, JValue *out)
{
    if (enter(r) < 0) return -1;
    int rc = eval_inner(r, f, n, out);
    r->nest--;
    return rc < 0 ? -1 : 0;
}

/* ---- statements --------------------------------------------------------- */

static int assign(R *r, Frame *f, const Node *target, JValue v)
{
    JCtx *c = &r->c;
    if (target->kind == N_NAME) return frame_set(r, f, target->s, target->len, v);
    if (target->kind == N_NSREF) {
        const JValue *ns = lookup(f, target->a->s, target->a->len);
        at_node(r, target);
        if (!ns || ns->type != JV_DICT || !(ns->flags & JF_NAMESPACE))
            return jv_fail(c, PITH_BAD_INPUT, "cannot assign attribute on non-namespace object");
        return jv_dict_set(c, ns->u.dict, jv_str(target->s, target->len), v);
    }
    JList *items;
    uint32_t want = 0, i = 0;
    for (const Node *k = target->a; k; k = k->next) want++;
    at_node(r, target);
    if (jv_iterate(c, v, &items) < 0) return -1;
    if (items->n != want)
        return jv_fail(c, PITH_BAD_INPUT, "%s values to unpack (expected %u, got %u)",
                       items->n > want ? "too many" : "not enough", want, items->n);
    for (const Node *k = target->a; k; k = k->next)
        if (assign(r, f, k, items->items[i++]) < 0) return -1;
    return 0;
}

/* A block's body rendered in a frame of its own, as a string. */
static int capture(R *r, Frame *f, const Node *body, JValue *out)
{
    Frame *inner = frame_new(r, f);
    JBuf b;
    jbuf_init(&b, &r->c);
    if (!inner || exec(r, inner, body, &b) < 0) return -1;
    *out = jbuf_value(&b);
    return 0;
}

static int exec_one(R *r, Frame *f, const Node *n, JBuf *out)
{
    JValue v;
    at_node(r, n);
    switch (n->kind) {
    case N_DATA: return jbuf_put(out, n->s, n->len);
    case N_OUTPUT:
        if (eval(r, f, n->a, &v) < 0) return -1;
        return jv_write_str(out, v);
    case N_IF:
        for (;;) {
            if (eval(r, f, n->a, &v) < 0) return -1;
            if (jv_truthy(v)) return exec(r, f, n->b, out);
            if (!n->c || n->c->kind != N_IF || n->c->next) return exec(r, f, n->c, out);
            n = n->c; /* elif */
        }
    case N_FOR:
        if (eval(r, f, n->b, &v) < 0) return -1;
        return exec_for(r, f, n, v, 1, out);
    case N_SET:
        if (eval(r, f, n->b, &v) < 0) return -1;
        return assign(r, f, n->a, v);
    case N_SETBLOCK:
    case N_FILTERBLOCK: {
        const Node *filters = n->kind == N_SETBLOCK ? n->c : n->a;
        if (capture(r, f, n->b, &v) < 0) return -1;
        if (filters) {
            JValue saved = r->block_input;
            r->block_input = v;
            int rc = eval(r, f, filters, &v);
            r->block_input = saved;
            if (rc < 0) return -1;
        }
        return n->kind == N_SETBLOCK ? assign(r, f, n->a, v) : jv_write_str(out, v);
    }
    case N_MACRO:
        if (make_closure(r, f, n, n->s, n->len, &v) < 0) return -1;
        return frame_set(r, f, n->s, n->len, v);
    case N_CALLBLOCK:
        if (make_closure(r, f, n, "caller", 6, &v) < 0 || eval_call(r, f, n->c, &v, &v) < 0) return -1;
        return jv_write_str(out, v);
    case N_SCOPE:
        if (capture(r, f, n->b, &v) < 0) return -1;
        return jv_write_str(out, v);
    case N_BREAK: return EX_BREAK;
    case N_CONTINUE: return EX_CONTINUE;
    default: return jv_fail(&r->c, PITH_INTERNAL, "node %d is not a statement", n->kind);
    }
}

static int exec(R *r, Frame *f, const Node *body, JBuf *out)
{
    if (enter(r) < 0) return -1;
    int rc = 0;
    for (const Node *n = body; n && rc == 0; n = n->next) rc = exec_one(r, f, n, out);
    r->nest--;
    return rc < 0 ? -1 : rc;
}

/* ---- the render API ----------------------------------------------------- */

void jinja_limits_default(JinjaLimits *lim)
{
    lim->max_output = 16u << 20;
    lim->max_steps = 10000000;
    lim->max_depth = 64;
}

JinjaRender *jinja_render_begin(const JinjaTemplate *t, void *mem, size_t cap, const JinjaLimits *lim)
{
    if (!t || !mem || cap < 65536 || ((uintptr_t)mem & 15)) return NULL;
    R *r = mem;
    memset(r, 0, sizeof *r);
    r->c.mem = mem;
    r->c.cap = cap;
    r->c.used = (sizeof *r + 15) & ~(size_t)15;
    if (lim) r->c.lim = *lim;
    else jinja_limits_default(&r->c.lim);
    r->c.render = r;
    r->c.method = jb_method;
    r->t = t;
    r->max_nest = r->c.lim.max_depth * NEST_PER_DEPTH + 32;
    return r;
}

/* A variable's name, copied into the work region. */
static int set_var(R *r, const char *name, JValue v)
{
    JValue s;
    if (jv_str_copy(&r->c, name, strlen(name), &s) < 0) return -1;
    return frame_set(r, &r->root, s.u.s, s.len, v);
}

PithStatus jinja_set_json(JinjaRender *r, const char *name, const char *json, size_t len, int flags, char *err,
                          size_t err_cap)
{
    JValue v;
    if (err && err_cap) err[0] = 0;
    if (!r->c.failed && jv_from_json(&r->c, json, len, name, flags, &v) == 0 && set_var(r, name, v) == 0)
        return PITH_OK;
    copy_message(err, err_cap, r->c.err);
    PithStatus st = r->c.status;
    if (st != PITH_NO_MEMORY) r->c.failed = 0; /* a bad value is the caller's to handle; the render may go on */
    return st;
}

void jinja_set_string(JinjaRender *r, const char *name, const char *s, size_t len)
{
    JValue v;
    if (jv_str_copy(&r->c, s, len, &v) == 0) set_var(r, name, v);
}

void jinja_set_bool(JinjaRender *r, const char *name, int value) { set_var(r, name, jv_bool(value != 0)); }

void jinja_set_none(JinjaRender *r, const char *name) { set_var(r, name, jv_none()); }

void jinja_set_time(JinjaRender *r, int64_t unix_seconds) { r->c.now = unix_seconds; }

PithStatus jinja_render(JinjaRender *r, char *out, size_t cap, size_t *out_len, char *err, size_t err_cap)
{
    JBuf b;
    *out_len = 0;
    if (err && err_cap) err[0] = 0;
    if (!r->c.failed) {
        jbuf_init(&b, &r->c);
        if (exec(r, &r->root, r->t->body, &b) == 0) {
            if (b.n > cap) {
                r->c.line = r->c.col = 1;
                jv_fail(&r->c, PITH_NO_MEMORY, "the output (%zu bytes) is larger than its buffer (%zu)", b.n, cap);
            } else {
                if (b.n) memcpy(out, b.p, b.n);
                if (b.n < cap) out[b.n] = 0;
                *out_len = b.n;
                return PITH_OK;
            }
        }
    }
    copy_message(err, err_cap, r->c.err);
    return r->c.status ? r->c.status : PITH_INTERNAL;
}
