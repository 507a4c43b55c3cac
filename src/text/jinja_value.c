/* jinja_value.c - the values of a Jinja render and Python's semantics of
 * them (jinja_impl.h): the bump allocator of the work region, truth,
 * equality, order, arithmetic, subscripts and slices, str() and repr(),
 * json.dumps, and JSON text to values. Python's ints are unbounded; here
 * they are int64: arithmetic past it is an error (templates count
 * messages), and a JSON integer past it becomes a float. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/fmath.h"
#include "jinja_impl.h"
#include "json.h"
#include "unicode.h"

/* ---- the work region ---------------------------------------------------- */

static size_t free_bytes(const JCtx *c)
{
    size_t at = (c->used + 7) & ~(size_t)7;
    return at < c->cap ? c->cap - at : 0;
}

void *jv_alloc(JCtx *c, size_t n)
{
    if (c->failed) return NULL;
    if (n > free_bytes(c)) {
        jv_fail(c, PITH_NO_MEMORY, "the render needs more than its %zu bytes of work memory", c->cap);
        return NULL;
    }
    size_t at = (c->used + 7) & ~(size_t)7;
    c->used = at + n;
    return c->mem + at;
}

/* Grows the block p (old bytes) to n bytes: in place when it is the last
 * one allocated, else a copy (the old block is left behind). */
static void *grow(JCtx *c, void *p, size_t old, size_t n)
{
    if (p && (uint8_t *)p + old == c->mem + c->used && n - old <= c->cap - c->used) {
        c->used += n - old;
        return p;
    }
    void *q = jv_alloc(c, n);
    if (q && old) memcpy(q, p, old);
    return q;
}

int jv_fail(JCtx *c, PithStatus status, const char *fmt, ...)
{
    if (c->failed) return -1;
    c->failed = 1;
    c->status = status;
    int n = snprintf(c->err, sizeof c->err, "%u:%u: ", (unsigned)c->line, (unsigned)c->col);
    va_list ap;
    va_start(ap, fmt);
    if (n > 0 && (size_t)n < sizeof c->err) vsnprintf(c->err + n, sizeof c->err - (size_t)n, fmt, ap);
    va_end(ap);
    return -1;
}

int jv_step(JCtx *c)
{
    if (++c->steps <= c->lim.max_steps) return 0;
    return jv_fail(c, PITH_NO_MEMORY, "more than %llu steps (loop iterations, calls and filters)",
                   (unsigned long long)c->lim.max_steps);
}

/* jinja2's UndefinedError for an Undefined used where it raises. */
static int undefined_error(JCtx *c, JValue u)
{
    if (!u.len) return jv_fail(c, PITH_BAD_INPUT, "an undefined value is used");
    return jv_fail(c, PITH_BAD_INPUT, "'%.*s' is undefined", (int)(u.len > 80 ? 80 : u.len), u.u.s);
}

/* ---- constructors, lists and dicts ---------------------------------------- */

JValue jv_undefined(const char *name, size_t len)
{
    JValue v = {.type = JV_UNDEFINED, .len = (uint32_t)len};
    v.u.s = name ? name : "";
    return v;
}

JValue jv_none(void)
{
    return (JValue){.type = JV_NONE};
}

JValue jv_bool(int b)
{
    JValue v = {.type = JV_BOOL};
    v.u.i = b != 0;
    return v;
}

JValue jv_int(int64_t i)
{
    JValue v = {.type = JV_INT};
    v.u.i = i;
    return v;
}

JValue jv_float(double f)
{
    JValue v = {.type = JV_FLOAT};
    v.u.f = f;
    return v;
}

JValue jv_str(const char *s, size_t len)
{
    JValue v = {.type = JV_STRING, .len = (uint32_t)len};
    v.u.s = s ? s : "";
    return v;
}

int jv_str_copy(JCtx *c, const char *s, size_t len, JValue *out)
{
    if (len > UINT32_MAX) return jv_fail(c, PITH_NO_MEMORY, "a string of %zu bytes", len);
    char *p = jv_alloc(c, len);
    if (!p) return -1;
    if (len) memcpy(p, s, len);
    *out = jv_str(p, len);
    return 0;
}

int jv_list_new(JCtx *c, uint32_t cap, JValue *out)
{
    JList *l = jv_alloc(c, sizeof *l);
    if (!l) return -1;
    l->n = 0;
    l->cap = cap;
    l->items = NULL;
    if (cap && !(l->items = jv_alloc(c, (size_t)cap * sizeof(JValue)))) return -1;
    *out = (JValue){.type = JV_LIST};
    out->u.list = l;
    return 0;
}

int jv_list_push(JCtx *c, JList *l, JValue v)
{
    if (l->n == l->cap) {
        if (l->cap >= UINT32_MAX / 2) return jv_fail(c, PITH_NO_MEMORY, "a list of %u items", l->n);
        uint32_t cap = l->cap ? l->cap * 2 : 4;
        JValue *items = grow(c, l->items, (size_t)l->cap * sizeof *items, (size_t)cap * sizeof *items);
        if (!items) return -1;
        l->items = items;
        l->cap = cap;
    }
    l->items[l->n++] = v;
    return 0;
}

int jv_dict_new(JCtx *c, uint32_t cap, JValue *out)
{
    JDict *d = jv_alloc(c, sizeof *d);
    if (!d) return -1;
    d->n = 0;
    d->cap = cap;
    d->keys = d->values = NULL;
    if (cap && (!(d->keys = jv_alloc(c, (size_t)cap * sizeof(JValue))) ||
                !(d->values = jv_alloc(c, (size_t)cap * sizeof(JValue)))))
        return -1;
    *out = (JValue){.type = JV_DICT};
    out->u.dict = d;
    return 0;
}

int jv_dict_set(JCtx *c, JDict *d, JValue key, JValue v)
{
    for (uint32_t i = 0; i < d->n; i++)
        if (jv_equal(d->keys[i], key)) {
            d->values[i] = v;
            return 0;
        }
    if (d->n == d->cap) {
        if (d->cap >= UINT32_MAX / 2) return jv_fail(c, PITH_NO_MEMORY, "a dict of %u items", d->n);
        uint32_t cap = d->cap ? d->cap * 2 : 4;
        size_t old = (size_t)d->cap * sizeof(JValue), n = (size_t)cap * sizeof(JValue);
        JValue *keys = grow(c, d->keys, old, n);
        if (!keys) return -1;
        d->keys = keys;
        JValue *values = grow(c, d->values, old, n);
        if (!values) return -1;
        d->values = values;
        d->cap = cap;
    }
    d->keys[d->n] = key;
    d->values[d->n++] = v;
    return 0;
}

JValue *jv_dict_get(const JDict *d, const char *key, size_t len)
{
    for (uint32_t i = 0; i < d->n; i++)
        if (d->keys[i].type == JV_STRING && d->keys[i].len == len && !memcmp(d->keys[i].u.s, key, len))
            return &d->values[i];
    return NULL;
}

/* ---- truth, equality, order ------------------------------------------------ */

static int is_num(JValue v)
{
    return v.type == JV_BOOL || v.type == JV_INT || v.type == JV_FLOAT;
}

static double num(JValue v)
{
    return v.type == JV_FLOAT ? v.u.f : (double)v.u.i;
}

int jv_truthy(JValue v)
{
    switch (v.type) {
    case JV_UNDEFINED:
    case JV_NONE: return 0;
    case JV_BOOL:
    case JV_INT: return v.u.i != 0;
    case JV_FLOAT: return v.u.f != 0;
    case JV_STRING: return v.len != 0;
    case JV_LIST: return (v.flags & JF_GENERATOR) || v.u.list->n != 0;
    case JV_DICT: return (v.flags & JF_NAMESPACE) || v.u.dict->n != 0;
    default: return 1;
    }
}

/* An int and a float compare exactly, as Python does. */
static int int_float_cmp(int64_t i, double f)
{
    if (f != f) return 2; /* unordered */
    if (f >= 9223372036854775808.0) return -1;
    if (f < -9223372036854775808.0) return 1;
    double t = trunc(f);
    int64_t k = (int64_t)t;
    if (i != k) return i < k ? -1 : 1;
    return t == f ? 0 : (f > t ? -1 : 1);
}

/* -1, 0, 1, or 2 when unordered (nan). */
static int num_cmp(JValue a, JValue b)
{
    if (a.type != JV_FLOAT && b.type != JV_FLOAT) return a.u.i < b.u.i ? -1 : a.u.i > b.u.i;
    if (a.type != JV_FLOAT) return int_float_cmp(a.u.i, b.u.f);
    if (b.type != JV_FLOAT) {
        int r = int_float_cmp(b.u.i, a.u.f);
        return r == 2 ? 2 : -r;
    }
    if (a.u.f != a.u.f || b.u.f != b.u.f) return 2;
    return a.u.f < b.u.f ? -1 : a.u.f > b.u.f;
}

/* Python raises RecursionError comparing values nested 1000 deep; here they are unequal. */
static int equal_at(JValue a, JValue b, int depth);

int jv_equal(JValue a, JValue b)
{
    return equal_at(a, b, 0);
}

static int equal_at(JValue a, JValue b, int depth)
{
    if (depth > 1000) return 0;
    if (is_num(a) && is_num(b)) return num_cmp(a, b) == 0;
    if (a.type != b.type) return 0;
    switch (a.type) {
    case JV_UNDEFINED:
    case JV_NONE: return 1;
    case JV_STRING: return a.len == b.len && !memcmp(a.u.s, b.u.s, a.len);
    case JV_LIST:
        if ((a.flags | b.flags) & JF_GENERATOR) return a.u.list == b.u.list;
        if ((a.flags ^ b.flags) & JF_TUPLE || a.u.list->n != b.u.list->n) return 0;
        for (uint32_t i = 0; i < a.u.list->n; i++)
            if (!equal_at(a.u.list->items[i], b.u.list->items[i], depth + 1)) return 0;
        return 1;
    case JV_DICT:
        if ((a.flags | b.flags) & JF_NAMESPACE) return a.u.dict == b.u.dict;
        if (a.u.dict->n != b.u.dict->n) return 0;
        for (uint32_t i = 0; i < a.u.dict->n; i++) {
            uint32_t k = 0;
            while (k < b.u.dict->n && !jv_equal(a.u.dict->keys[i], b.u.dict->keys[k])) k++;
            if (k == b.u.dict->n || !equal_at(a.u.dict->values[i], b.u.dict->values[k], depth + 1)) return 0;
        }
        return 1;
    case JV_FUNC: return a.u.func == b.u.func;
    default: return a.u.loop == b.u.loop;
    }
}

const char *jv_type_name(JValue v)
{
    switch (v.type) {
    case JV_UNDEFINED: return "Undefined";
    case JV_NONE: return "NoneType";
    case JV_BOOL: return "bool";
    case JV_INT: return "int";
    case JV_FLOAT: return "float";
    case JV_STRING: return "str";
    case JV_LIST: return v.flags & JF_GENERATOR ? "generator" : v.flags & JF_TUPLE ? "tuple" : "list";
    case JV_DICT: return v.flags & JF_NAMESPACE ? "Namespace" : "dict";
    case JV_FUNC: return "function";
    default: return "LoopContext";
    }
}

/* Python's a OP b for OP one of < <= > >= (op: 0..3): 0/1, or -1 after a
 * TypeError (or jinja2's UndefinedError). */
static const char *const order_ops[] = {"<", "<=", ">", ">="};
static int order(JCtx *c, int op, JValue a, JValue b, int depth)
{
    int cmp;
    if (a.type == JV_UNDEFINED) return undefined_error(c, a);
    if (b.type == JV_UNDEFINED) return undefined_error(c, b);
    if (is_num(a) && is_num(b)) {
        cmp = num_cmp(a, b);
        if (cmp == 2) return 0;
    } else if (a.type == JV_STRING && b.type == JV_STRING) {
        size_t n = a.len < b.len ? a.len : b.len;
        cmp = memcmp(a.u.s, b.u.s, n); /* UTF-8 byte order is code point order */
        if (!cmp) cmp = a.len < b.len ? -1 : a.len > b.len;
    } else if (a.type == JV_LIST && b.type == JV_LIST && !((a.flags ^ b.flags) & JF_TUPLE) &&
               !((a.flags | b.flags) & JF_GENERATOR)) {
        if (depth > (int)c->lim.max_depth) return jv_fail(c, PITH_NO_MEMORY, "values nested too deep");
        const JList *x = a.u.list, *y = b.u.list;
        uint32_t i = 0;
        while (i < x->n && i < y->n && jv_equal(x->items[i], y->items[i])) i++;
        if (i < x->n && i < y->n) return order(c, op, x->items[i], y->items[i], depth + 1);
        cmp = x->n < y->n ? -1 : x->n > y->n;
    } else {
        return jv_fail(c, PITH_BAD_INPUT, "'%s' not supported between instances of '%s' and '%s'", order_ops[op],
                       jv_type_name(a), jv_type_name(b));
    }
    switch (op) {
    case 0: return cmp < 0;
    case 1: return cmp <= 0;
    case 2: return cmp > 0;
    default: return cmp >= 0;
    }
}

int jv_sort(JCtx *c, JValue *v, uint32_t n, JLessFn less, const void *arg)
{
    if (n < 2) return 0;
    JValue *tmp = jv_alloc(c, (size_t)n * sizeof *tmp);
    if (!tmp) return -1;
    /* bottom-up merge sort: stable, as Python's sort */
    for (uint32_t w = 1; w < n; w *= 2) {
        for (uint32_t lo = 0; lo < n; lo += 2 * w) {
            uint32_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
            uint32_t i = lo, j = mid, k = lo;
            while (i < mid && j < hi) {
                int lt = less(c, v[j], v[i], arg); /* take the right one only if strictly less */
                if (lt < 0) return -1;
                tmp[k++] = lt ? v[j++] : v[i++];
            }
            while (i < mid) tmp[k++] = v[i++];
            while (j < hi) tmp[k++] = v[j++];
        }
        memcpy(v, tmp, (size_t)n * sizeof *v);
        if (w > UINT32_MAX / 2) break;
    }
    return 0;
}

int jv_less(JCtx *c, JValue a, JValue b, const void *arg)
{
    (void)arg;
    return order(c, 0, a, b, 0);
}

/* ---- strings by code point --------------------------------------------------- */

static int is_cont(unsigned char b)
{
    return (b & 0xC0) == 0x80;
}

/* Whether a code point starts at byte i (a stray continuation byte at the
 * start counts as one, with those after it, as jv_iterate takes them). */
static int starts_char(const char *s, size_t i)
{
    return i == 0 || !is_cont((unsigned char)s[i]);
}

/* Code points of s (continuation bytes do not count). */
size_t jv_str_chars(const char *s, size_t n)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++) k += starts_char(s, i);
    return k;
}

/* Byte offsets of each code point of s and of its end (n + 1 entries). */
static uint32_t *char_offsets(JCtx *c, const char *s, size_t len, size_t *count)
{
    size_t n = jv_str_chars(s, len);
    uint32_t *off = jv_alloc(c, (n + 1) * sizeof *off);
    if (!off) return NULL;
    size_t k = 0;
    for (size_t i = 0; i < len; i++)
        if (starts_char(s, i)) off[k++] = (uint32_t)i;
    off[n] = (uint32_t)len;
    *count = n;
    return off;
}

/* ---- text buffers --------------------------------------------------------------- */

void jbuf_init(JBuf *b, JCtx *c)
{
    b->c = c;
    b->p = NULL;
    b->n = b->cap = 0;
}

/* n more bytes at the end of b (to be written by the caller), or NULL. */
static char *jbuf_room(JBuf *b, size_t n)
{
    JCtx *c = b->c;
    if (c->failed) return NULL;
    if (n > c->lim.max_output || b->n > c->lim.max_output - n) {
        jv_fail(c, PITH_NO_MEMORY, "a text longer than %llu bytes", (unsigned long long)c->lim.max_output);
        return NULL;
    }
    if (b->n + n > b->cap || !b->p) {
        size_t need = b->n + n, want = b->cap * 2 > need ? b->cap * 2 : need;
        if (want < 64) want = 64;
        int at_end = b->p && (uint8_t *)b->p + b->cap == c->mem + c->used;
        if (want - (at_end ? b->cap : 0) > free_bytes(c)) want = need;
        char *p = grow(c, b->p, b->cap, want);
        if (!p) return NULL;
        b->p = p;
        b->cap = want;
    }
    b->n += n;
    return b->p + b->n - n;
}

int jbuf_put(JBuf *b, const char *s, size_t n)
{
    if (n == 0) return b->c->failed ? -1 : 0; /* nothing to place: an empty buffer may have no room yet */
    char *p = jbuf_room(b, n);
    if (!p) return -1;
    if (n) memcpy(p, s, n);
    return 0;
}

static int put_s(JBuf *b, const char *s)
{
    return jbuf_put(b, s, strlen(s));
}

JValue jbuf_value(const JBuf *b)
{
    return jv_str(b->p, b->n);
}

/* ---- str(), repr() -------------------------------------------------------------- */

/* Python's repr of a float: the shortest digits that read back as x,
 * positional for exponents -4 <= e < 16, else d.ddde+XX. */
size_t jv_float_repr(double x, char *out)
{
    if (x != x) return (size_t)sprintf(out, "nan");
    if (isinf(x)) return (size_t)sprintf(out, x < 0 ? "-inf" : "inf");
    char e[40];
    for (int p = 0; p < 17; p++) {
        snprintf(e, sizeof e, "%.*e", p, x);
        double y = 0;
        text_to_double(e, strlen(e), &y);
        if (y == x) break;
    }
    char digits[24];
    int nd = 0, neg = e[0] == '-';
    const char *q = e + neg;
    for (; *q && *q != 'e'; q++)
        if (*q != '.') digits[nd++] = *q;
    while (nd > 1 && digits[nd - 1] == '0') nd--;
    int exp = 0, esign = q[1] == '-' ? -1 : 1;
    for (q += 2; *q; q++) exp = exp * 10 + (*q - '0');
    int decpt = esign * exp + 1;
    char *o = out;
    if (neg) *o++ = '-';
    if (decpt > -4 && decpt <= 16) {
        if (decpt <= 0) {
            o += sprintf(o, "0.");
            for (int i = 0; i < -decpt; i++) *o++ = '0';
            memcpy(o, digits, (size_t)nd);
            o += nd;
        } else if (decpt >= nd) {
            memcpy(o, digits, (size_t)nd);
            o += nd;
            for (int i = nd; i < decpt; i++) *o++ = '0';
            o += sprintf(o, ".0");
        } else {
            memcpy(o, digits, (size_t)decpt);
            o += decpt;
            *o++ = '.';
            memcpy(o, digits + decpt, (size_t)(nd - decpt));
            o += nd - decpt;
        }
        *o = 0;
    } else {
        *o++ = digits[0];
        if (nd > 1) {
            *o++ = '.';
            memcpy(o, digits + 1, (size_t)(nd - 1));
            o += nd - 1;
        }
        o += sprintf(o, "e%c%02d", decpt - 1 < 0 ? '-' : '+', abs(decpt - 1));
    }
    return (size_t)(o - out);
}

/* Non-ASCII code points Python's repr escapes (not isprintable()): the
 * controls, format characters, separators and private use; white space
 * comes from unicode.h. Unassigned code points are not known here. */
static const uint32_t unprintable[][2] = {
    {0x80, 0xA0},     {0xAD, 0xAD},     {0x600, 0x605},   {0x61C, 0x61C},   {0x6DD, 0x6DD},
    {0x70F, 0x70F},   {0x180E, 0x180E}, {0x200B, 0x200F}, {0x2028, 0x202E}, {0x2060, 0x206F},
    {0xD800, 0xF8FF}, {0xFEFF, 0xFEFF}, {0xFFF9, 0xFFFB}, {0xFFFE, 0xFFFF}, {0xE0001, 0xE0001},
    {0xE0020, 0xE007F}, {0xF0000, 0x10FFFF}};

static int write_str_repr(JBuf *b, const char *s, size_t n)
{
    char quote = memchr(s, '\'', n) && !memchr(s, '"', n) ? '"' : '\'';
    if (jbuf_put(b, &quote, 1) < 0) return -1;
    size_t i = 0;
    while (i < n) {
        uint32_t cp;
        int k = utf8_next((const uint8_t *)s + i, n - i, &cp);
        char e[12];
        const char *t = e;
        size_t tn = 0;
        if (k < 0) { /* a stray byte: Python's strings hold no such thing; show it as \xNN */
            tn = (size_t)sprintf(e, "\\x%02x", (unsigned char)s[i]);
            k = 1;
        } else if (cp == (uint32_t)quote || cp == '\\') {
            tn = (size_t)sprintf(e, "\\%c", (char)cp);
        } else if (cp == '\n' || cp == '\r' || cp == '\t') {
            tn = (size_t)sprintf(e, "\\%c", cp == '\n' ? 'n' : cp == '\r' ? 'r' : 't');
        } else if (cp < 0x20 || cp == 0x7F ||
                   (cp >= 0x80 && (unicode_class(cp) == UCLASS_SPACE ||
                                   unicode_in_ranges(unprintable, sizeof unprintable / sizeof unprintable[0], cp)))) {
            tn = (size_t)sprintf(e, cp < 0x100 ? "\\x%02x" : cp < 0x10000 ? "\\u%04x" : "\\U%08x", (unsigned)cp);
        } else {
            t = s + i;
            tn = (size_t)k;
        }
        if (jbuf_put(b, t, tn) < 0) return -1;
        i += (size_t)k;
    }
    return jbuf_put(b, &quote, 1);
}

static int write_value(JBuf *b, JValue v, int repr, uint32_t depth)
{
    char t[48];
    if (depth > b->c->lim.max_depth) return jv_fail(b->c, PITH_NO_MEMORY, "values nested too deep to print");
    switch (v.type) {
    case JV_UNDEFINED: return repr ? put_s(b, "Undefined") : 0;
    case JV_NONE: return put_s(b, "None");
    case JV_BOOL: return put_s(b, v.u.i ? "True" : "False");
    case JV_INT: return jbuf_put(b, t, (size_t)snprintf(t, sizeof t, "%lld", (long long)v.u.i));
    case JV_FLOAT: return jbuf_put(b, t, jv_float_repr(v.u.f, t));
    case JV_STRING: return repr ? write_str_repr(b, v.u.s, v.len) : jbuf_put(b, v.u.s, v.len);
    case JV_LIST: {
        int tuple = v.flags & JF_TUPLE;
        if (v.flags & JF_GENERATOR) return put_s(b, "<generator object>");
        const JList *l = v.u.list;
        if (put_s(b, tuple ? "(" : "[") < 0) return -1;
        for (uint32_t i = 0; i < l->n; i++)
            if ((i && put_s(b, ", ") < 0) || write_value(b, l->items[i], 1, depth + 1) < 0) return -1;
        return put_s(b, !tuple ? "]" : l->n == 1 ? ",)" : ")");
    }
    case JV_DICT: {
        const JDict *d = v.u.dict;
        if (put_s(b, v.flags & JF_NAMESPACE ? "<Namespace {" : "{") < 0) return -1;
        for (uint32_t i = 0; i < d->n; i++)
            if ((i && put_s(b, ", ") < 0) || write_value(b, d->keys[i], 1, depth + 1) < 0 || put_s(b, ": ") < 0 ||
                write_value(b, d->values[i], 1, depth + 1) < 0)
                return -1;
        return put_s(b, v.flags & JF_NAMESPACE ? "}>" : "}");
    }
    case JV_FUNC:
        return put_s(b, "<function ") < 0 || jbuf_put(b, v.u.func->name, v.u.func->name_len) < 0 ? -1 : put_s(b, ">");
    default: return put_s(b, "<LoopContext>");
    }
}

int jv_write_str(JBuf *b, JValue v)
{
    return write_value(b, v, 0, 0);
}

int jv_write_repr(JBuf *b, JValue v)
{
    return write_value(b, v, 1, 0);
}

/* ---- json.dumps ------------------------------------------------------------------ */

typedef struct {
    const char *indent, *item_sep, *key_sep;
    size_t indent_len;
    int sort_keys;
} JsonStyle;

static int json_str(JBuf *b, const char *s, size_t n)
{
    size_t need = json_escape(s, n, NULL, 0);
    char *p = jbuf_room(b, need + 1); /* json_escape adds a NUL */
    if (!p) return -1;
    json_escape(s, n, p, need + 1);
    b->n--;
    return 0;
}

static int json_newline(JBuf *b, const JsonStyle *st, uint32_t level)
{
    if (put_s(b, "\n") < 0) return -1;
    for (uint32_t i = 0; i < level; i++)
        if (jbuf_put(b, st->indent, st->indent_len) < 0) return -1;
    return 0;
}

static int key_less(JCtx *c, JValue a, JValue b, const void *dict)
{
    const JDict *d = dict;
    return order(c, 0, d->keys[a.u.i], d->keys[b.u.i], 0);
}

static int write_json_key(JBuf *b, JValue k)
{
    char t[48];
    switch (k.type) {
    case JV_STRING: return json_str(b, k.u.s, k.len);
    case JV_NONE: return put_s(b, "\"null\"");
    case JV_BOOL: return put_s(b, k.u.i ? "\"true\"" : "\"false\"");
    case JV_INT: return jbuf_put(b, t, (size_t)snprintf(t, sizeof t, "\"%lld\"", (long long)k.u.i));
    case JV_FLOAT: {
        double f = k.u.f;
        size_t n = f != f ? (size_t)sprintf(t, "NaN") : isinf(f) ? (size_t)sprintf(t, f < 0 ? "-Infinity" : "Infinity")
                                                                   : jv_float_repr(f, t);
        return put_s(b, "\"") < 0 || jbuf_put(b, t, n) < 0 ? -1 : put_s(b, "\"");
    }
    default:
        return jv_fail(b->c, PITH_BAD_INPUT, "keys must be str, int, float, bool or None, not %s", jv_type_name(k));
    }
}

static int json_value(JBuf *b, JValue v, const JsonStyle *st, uint32_t level)
{
    JCtx *c = b->c;
    char t[48];
    if (level > c->lim.max_depth) return jv_fail(c, PITH_NO_MEMORY, "values nested too deep for tojson");
    switch (v.type) {
    case JV_NONE: return put_s(b, "null");
    case JV_BOOL: return put_s(b, v.u.i ? "true" : "false");
    case JV_INT: return write_value(b, v, 0, 0);
    case JV_FLOAT:
        if (v.u.f != v.u.f) return put_s(b, "NaN");
        if (isinf(v.u.f)) return put_s(b, v.u.f < 0 ? "-Infinity" : "Infinity");
        return jbuf_put(b, t, jv_float_repr(v.u.f, t));
    case JV_STRING: return json_str(b, v.u.s, v.len);
    case JV_LIST: {
        const JList *l = v.u.list;
        if (v.flags & JF_GENERATOR) break;
        if (!l->n) return put_s(b, "[]");
        if (put_s(b, "[") < 0) return -1;
        for (uint32_t i = 0; i < l->n; i++) {
            if (i && put_s(b, st->item_sep) < 0) return -1;
            if ((st->indent && json_newline(b, st, level + 1) < 0) || json_value(b, l->items[i], st, level + 1) < 0)
                return -1;
        }
        if (st->indent && json_newline(b, st, level) < 0) return -1;
        return put_s(b, "]");
    }
    case JV_DICT: {
        const JDict *d = v.u.dict;
        if (v.flags & JF_NAMESPACE) break;
        if (!d->n) return put_s(b, "{}");
        JValue *ix = NULL; /* sort_keys: the items' indexes, by key (Python sorts the items; keys are unique) */
        if (st->sort_keys) {
            if (!(ix = jv_alloc(c, (size_t)d->n * sizeof *ix))) return -1;
            for (uint32_t i = 0; i < d->n; i++) ix[i] = jv_int(i);
            if (jv_sort(c, ix, d->n, key_less, d) < 0) return -1;
        }
        if (put_s(b, "{") < 0) return -1;
        for (uint32_t i = 0; i < d->n; i++) {
            uint32_t k = ix ? (uint32_t)ix[i].u.i : i;
            if (i && put_s(b, st->item_sep) < 0) return -1;
            if ((st->indent && json_newline(b, st, level + 1) < 0) || write_json_key(b, d->keys[k]) < 0 ||
                put_s(b, st->key_sep) < 0 || json_value(b, d->values[k], st, level + 1) < 0)
                return -1;
        }
        if (st->indent && json_newline(b, st, level) < 0) return -1;
        return put_s(b, "}");
    }
    default: break;
    }
    return jv_fail(c, PITH_BAD_INPUT, "Object of type %s is not JSON serializable", jv_type_name(v));
}

int jv_write_json(JBuf *b, JValue v, const char *indent, size_t indent_len, const char *item_sep, const char *key_sep,
                  int sort_keys)
{
    JsonStyle st = {indent, item_sep, key_sep, indent_len, sort_keys};
    if (!st.item_sep) st.item_sep = indent ? "," : ", ";
    if (!st.key_sep) st.key_sep = ": ";
    return json_value(b, v, &st, 0);
}

/* ---- operators ------------------------------------------------------------------- */

enum { OP_ADD, OP_SUB, OP_MUL, OP_DIV, OP_FLOORDIV, OP_MOD, OP_POW, OP_CONCAT, OP_EQ, OP_NE, OP_LT, OP_LE, OP_GT,
       OP_GE, OP_IN, OP_NOT_IN, OP_COUNT };
static const char *const op_names[OP_COUNT] = {"+",  "-",  "*", "/",  "//", "%",  "**", "~",
                                               "==", "!=", "<", "<=", ">",  ">=", "in", "not in"};

static int overflow(JCtx *c, const char *op)
{
    return jv_fail(c, PITH_UNSUPPORTED, "integer overflow in '%s' (integers here are 64-bit)", op);
}

/* Python's float // and % (the quotient floored, the remainder with the divisor's sign). */
static double float_divmod(double x, double y, double *mod)
{
    double m = fmod(x, y), div = (x - m) / y;
    if (m != 0) {
        if ((y < 0) != (m < 0)) {
            m += y;
            div -= 1.0;
        }
    } else {
        m = copysign(0.0, y);
    }
    *mod = m;
    if (div == 0) return copysign(0.0, x / y);
    double f = floor(div);
    return div - f > 0.5 ? f + 1.0 : f;
}

static int arith(JCtx *c, int k, JValue a, JValue b, JValue *out)
{
    if (a.type != JV_FLOAT && b.type != JV_FLOAT && k != OP_DIV && !(k == OP_POW && b.u.i < 0)) {
        int64_t x = a.u.i, y = b.u.i, r = 0;
        switch (k) {
        case OP_ADD:
            if (__builtin_add_overflow(x, y, &r)) return overflow(c, "+");
            break;
        case OP_SUB:
            if (__builtin_sub_overflow(x, y, &r)) return overflow(c, "-");
            break;
        case OP_MUL:
            if (__builtin_mul_overflow(x, y, &r)) return overflow(c, "*");
            break;
        case OP_FLOORDIV:
        case OP_MOD:
            if (!y)
                return jv_fail(c, PITH_BAD_INPUT, k == OP_MOD ? "integer modulo by zero"
                                                              : "integer division or modulo by zero");
            if (y == -1) {
                if (k == OP_FLOORDIV && x == INT64_MIN) return overflow(c, "//");
                r = k == OP_MOD ? 0 : -x;
            } else if (k == OP_FLOORDIV) {
                r = x / y - ((x % y) != 0 && ((x < 0) != (y < 0)));
            } else {
                r = x % y;
                if (r && (r < 0) != (y < 0)) r += y;
            }
            break;
        default: /* ** with a non-negative exponent */
            for (r = 1; y; y >>= 1) {
                if ((y & 1) && __builtin_mul_overflow(r, x, &r)) return overflow(c, "**");
                if (y > 1 && __builtin_mul_overflow(x, x, &x)) return overflow(c, "**");
            }
        }
        *out = jv_int(r);
        return 0;
    }
    double x = num(a), y = num(b), r, m;
    switch (k) {
    case OP_ADD: r = x + y; break;
    case OP_SUB: r = x - y; break;
    case OP_MUL: r = x * y; break;
    case OP_DIV:
        if (y == 0)
            return jv_fail(c, PITH_BAD_INPUT, a.type == JV_FLOAT || b.type == JV_FLOAT ? "float division by zero"
                                                                                         : "division by zero");
        r = x / y;
        break;
    case OP_FLOORDIV:
    case OP_MOD:
        if (y == 0) return jv_fail(c, PITH_BAD_INPUT, k == OP_MOD ? "float modulo" : "float floor division by zero");
        r = float_divmod(x, y, &m);
        if (k == OP_MOD) r = m;
        break;
    default:
        if (x == 0 && y < 0) return jv_fail(c, PITH_BAD_INPUT, "0.0 cannot be raised to a negative power");
        r = jv_pow(x, y);
    }
    *out = jv_float(r);
    return 0;
}

/* x ** y of floats without libm's pow (5 KB of tables in every binary): an
 * integral exponent by squaring, any other as exp(y ln x); a negative x to
 * a fractional power has no real value (nan). */
double jv_pow(double x, double y)
{
    if (isnan(x) || isnan(y)) return NAN;
    if (y == floor(y) && fabs(y) <= 1024) {
        double r = 1, b = x;
        for (uint32_t n = (uint32_t)fabs(y); n; n >>= 1, b *= b)
            if (n & 1) r *= b;
        return y < 0 ? 1 / r : r;
    }
    if (x < 0) return NAN;
    if (x == 0 || x == 1) return x == 1 ? 1 : y > 0 ? 0 : INFINITY;
    if (isinf(x) || isinf(y)) return (x > 1) == (y > 0) ? INFINITY : 0;
    return exp(y * fmath_log(x));
}

/* 10^n as Python's float(10 ** n): the correctly rounded value, parsed. */
double jv_pow10(int n)
{
    char t[16];
    double v = 0;
    snprintf(t, sizeof t, "1e%d", n);
    text_to_double(t, strlen(t), &v);
    return v;
}

/* item in container: 0/1, or -1 after a TypeError. */
static int contains(JCtx *c, JValue container, JValue item)
{
    switch (container.type) {
    case JV_UNDEFINED: return 0; /* iterates empty */
    case JV_STRING:
        if (item.type != JV_STRING)
            return jv_fail(c, PITH_BAD_INPUT, "'in <string>' requires string as left operand, not %s",
                           jv_type_name(item));
        for (size_t i = 0; i + item.len <= container.len; i++)
            if (!memcmp(container.u.s + i, item.u.s, item.len)) return 1;
        return 0;
    case JV_LIST:
        for (uint32_t i = 0; i < container.u.list->n; i++)
            if (jv_equal(container.u.list->items[i], item)) return 1;
        return 0;
    case JV_DICT:
        if (container.flags & JF_NAMESPACE) break;
        for (uint32_t i = 0; i < container.u.dict->n; i++)
            if (jv_equal(container.u.dict->keys[i], item)) return 1;
        return 0;
    default: break;
    }
    return jv_fail(c, PITH_BAD_INPUT, "argument of type '%s' is not iterable", jv_type_name(container));
}

static int percent_format(JCtx *c, JValue fmt, JValue args, JValue *out);

/* s, HTML-escaped as markupsafe does when escape is set. */
static int put_escaped(JBuf *b, const char *s, size_t n, int escape)
{
    static const char specials[] = "&<>\"'", *const names[] = {"&amp;", "&lt;", "&gt;", "&#34;", "&#39;"};
    size_t run = 0;
    for (size_t i = 0; escape && i < n; i++) {
        const char *e = s[i] ? strchr(specials, s[i]) : NULL;
        if (!e) continue;
        if (jbuf_put(b, s + run, i - run) < 0 || put_s(b, names[e - specials]) < 0) return -1;
        run = i + 1;
    }
    return jbuf_put(b, s + run, n - run);
}

/* seq * n (str or list). */
static int repeat(JCtx *c, JValue seq, int64_t times, JValue *out)
{
    if (times < 0) times = 0;
    /* an empty sequence repeated is empty, at once (not after 10^12 empty copies) */
    if (seq.type == JV_STRING ? seq.len == 0 : seq.u.list->n == 0) times = 0;
    if (seq.type == JV_STRING) {
        if (seq.len && (uint64_t)times > c->lim.max_output / seq.len)
            return jv_fail(c, PITH_NO_MEMORY, "a string repeated %lld times", (long long)times);
        JBuf b;
        jbuf_init(&b, c);
        for (int64_t i = 0; i < times; i++)
            if (jbuf_put(&b, seq.u.s, seq.len) < 0) return -1;
        *out = jbuf_value(&b);
        return 0;
    }
    const JList *l = seq.u.list;
    if (l->n && (uint64_t)times > (c->cap / sizeof(JValue)) / l->n)
        return jv_fail(c, PITH_NO_MEMORY, "a list repeated %lld times", (long long)times);
    if (jv_list_new(c, (uint32_t)(l->n * times), out) < 0) return -1;
    for (int64_t i = 0; i < times; i++)
        for (uint32_t k = 0; k < l->n; k++) jv_list_push(c, out->u.list, l->items[k]);
    out->flags = seq.flags & JF_TUPLE;
    return 0;
}

int jv_binary(JCtx *c, const char *op, JValue a, JValue b, JValue *out)
{
    int k = 0, r;
    while (k < OP_COUNT && strcmp(op, op_names[k])) k++;
    switch (k) {
    case OP_COUNT: return jv_fail(c, PITH_INTERNAL, "unknown operator '%s'", op);
    case OP_EQ:
    case OP_NE: *out = jv_bool(jv_equal(a, b) ^ (k == OP_NE)); return 0;
    case OP_LT:
    case OP_LE:
    case OP_GT:
    case OP_GE:
        if ((r = order(c, k - OP_LT, a, b, 0)) < 0) return -1;
        *out = jv_bool(r);
        return 0;
    case OP_IN:
    case OP_NOT_IN:
        if ((r = contains(c, b, a)) < 0) return -1;
        *out = jv_bool(r ^ (k == OP_NOT_IN));
        return 0;
    case OP_CONCAT: {
        JBuf buf;
        jbuf_init(&buf, c);
        if (jv_write_str(&buf, a) < 0 || jv_write_str(&buf, b) < 0) return -1;
        *out = jbuf_value(&buf);
        return 0;
    }
    default: break;
    }
    if (a.type == JV_UNDEFINED) return undefined_error(c, a);
    if (b.type == JV_UNDEFINED) return undefined_error(c, b);
    if (is_num(a) && is_num(b)) return arith(c, k, a, b, out);
    if (k == OP_ADD && a.type == b.type && a.type == JV_STRING) { /* Markup + str escapes the str */
        int ma = a.flags & JF_MARKUP, mb = b.flags & JF_MARKUP;
        JBuf buf;
        jbuf_init(&buf, c);
        if (put_escaped(&buf, a.u.s, a.len, mb && !ma) < 0 || put_escaped(&buf, b.u.s, b.len, ma && !mb) < 0) return -1;
        *out = jbuf_value(&buf);
        out->flags = (uint8_t)(ma | mb);
        return 0;
    }
    int gen = (a.flags | b.flags) & JF_GENERATOR;
    if (k == OP_ADD && a.type == JV_LIST && b.type == JV_LIST && !((a.flags ^ b.flags) & JF_TUPLE) && !gen) {
        if (jv_list_new(c, a.u.list->n + b.u.list->n, out) < 0) return -1;
        for (uint32_t i = 0; i < a.u.list->n; i++) out->u.list->items[out->u.list->n++] = a.u.list->items[i];
        for (uint32_t i = 0; i < b.u.list->n; i++) out->u.list->items[out->u.list->n++] = b.u.list->items[i];
        out->flags = a.flags & JF_TUPLE;
        return 0;
    }
    if (k == OP_MUL && !gen && (a.type == JV_STRING || a.type == JV_LIST) && (b.type == JV_INT || b.type == JV_BOOL))
        return repeat(c, a, b.u.i, out);
    if (k == OP_MUL && !gen && (b.type == JV_STRING || b.type == JV_LIST) && (a.type == JV_INT || a.type == JV_BOOL))
        return repeat(c, b, a.u.i, out);
    if (k == OP_MOD && a.type == JV_STRING) return percent_format(c, a, b, out);
    return jv_fail(c, PITH_BAD_INPUT, "unsupported operand type(s) for %s: '%s' and '%s'", op, jv_type_name(a),
                   jv_type_name(b));
}

int jv_unary(JCtx *c, char op, JValue v, JValue *out)
{
    if (op == '!') {
        *out = jv_bool(!jv_truthy(v));
        return 0;
    }
    if (v.type == JV_UNDEFINED) return undefined_error(c, v);
    if (v.type == JV_FLOAT) {
        *out = jv_float(op == '-' ? -v.u.f : v.u.f);
        return 0;
    }
    if (v.type == JV_INT || v.type == JV_BOOL) {
        if (op == '-' && v.u.i == INT64_MIN) return overflow(c, "-");
        *out = jv_int(op == '-' ? -v.u.i : v.u.i);
        return 0;
    }
    return jv_fail(c, PITH_BAD_INPUT, "bad operand type for unary %c: '%s'", op, jv_type_name(v));
}

/* ---- printf-style formatting: str % args ------------------------------------------- */

static int pad(JBuf *b, char ch, int64_t n)
{
    for (; n > 0; n--)
        if (jbuf_put(b, &ch, 1) < 0) return -1;
    return 0;
}

/* One conversion of Python's % formatting. flags: '-', '+', ' ', '0', '#'. */
static int format_one(JCtx *c, JBuf *b, const char *flags, int width, int prec, char conv, JValue v, int markup)
{
    char t[1200];
    int left = strchr(flags, '-') != NULL, zero = strchr(flags, '0') != NULL && !left;
    if (conv == 's' || conv == 'r' || conv == 'a' || conv == 'c') {
        JBuf s;
        jbuf_init(&s, c);
        if (conv == 'c') {
            if (v.type == JV_STRING && jv_str_chars(v.u.s, v.len) == 1) {
                s.p = (char *)v.u.s;
                s.n = v.len;
            } else {
                return jv_fail(c, PITH_BAD_INPUT, "%%c requires an int or a unicode character, not %s",
                               jv_type_name(v));
            }
        } else if ((conv == 's' ? jv_write_str(&s, v) : jv_write_repr(&s, v)) < 0) {
            return -1;
        }
        if (markup && !(v.type == JV_STRING && (v.flags & JF_MARKUP)) && conv != 'c') { /* Markup % args escapes them */
            JBuf e;
            jbuf_init(&e, c);
            if (put_escaped(&e, s.p, s.n, 1) < 0) return -1;
            s = e;
        }
        size_t n = s.n, chars = jv_str_chars(s.p, s.n);
        if (prec >= 0 && chars > (size_t)prec) { /* cut at a code point */
            size_t k = 0;
            for (n = 0; n < s.n; n++)
                if (starts_char(s.p, n) && k++ == (size_t)prec) break;
            chars = (size_t)prec;
        }
        int64_t fill = width > (int)chars ? width - (int64_t)chars : 0;
        return (!left && pad(b, ' ', fill) < 0) || jbuf_put(b, s.p, n) < 0 || (left && pad(b, ' ', fill) < 0) ? -1 : 0;
    }
    if (strchr("diuxXo", conv)) {
        int64_t i;
        if (v.type == JV_INT || v.type == JV_BOOL) {
            i = v.u.i;
        } else if (v.type == JV_FLOAT && strchr("diu", conv) && isfinite(v.u.f) && fabs(v.u.f) < 9.2e18) {
            i = (int64_t)v.u.f;
        } else {
            return jv_fail(c, PITH_BAD_INPUT, "%%%c format: a real number is required, not %s", conv, jv_type_name(v));
        }
        uint64_t m = i < 0 ? -(uint64_t)i : (uint64_t)i;
        int nd = snprintf(t, sizeof t, conv == 'x' ? "%llx" : conv == 'X' ? "%llX" : conv == 'o' ? "%llo" : "%llu",
                          (unsigned long long)m);
        char pre[4] = "";
        size_t np = 0;
        if (i < 0 || strchr(flags, '+') || strchr(flags, ' ')) pre[np++] = i < 0 ? '-' : strchr(flags, '+') ? '+' : ' ';
        if (strchr(flags, '#') && strchr("xXo", conv)) {
            pre[np++] = '0';
            pre[np++] = conv == 'o' ? 'o' : conv;
        }
        int64_t zeros = prec > nd ? prec - nd : 0, total = (int64_t)np + zeros + nd;
        int64_t fill = width > total ? width - total : 0;
        if (zero) zeros += fill, fill = 0;
        return (!left && pad(b, ' ', fill) < 0) || jbuf_put(b, pre, np) < 0 || pad(b, '0', zeros) < 0 ||
                       jbuf_put(b, t, (size_t)nd) < 0 || (left && pad(b, ' ', fill) < 0)
                   ? -1
                   : 0;
    }
    if (strchr("eEfFgG", conv)) {
        if (!is_num(v)) return jv_fail(c, PITH_BAD_INPUT, "must be real number, not %s", jv_type_name(v));
        char spec[24];
        snprintf(spec, sizeof spec, "%%%s*.*%c", flags, conv);
        int n = snprintf(t, sizeof t, spec, width, prec < 0 ? 6 : prec, num(v));
        return jbuf_put(b, t, (size_t)(n < (int)sizeof t ? n : (int)sizeof t - 1));
    }
    return jv_fail(c, PITH_BAD_INPUT, "unsupported format character '%c' (0x%x)", conv, (unsigned char)conv);
}

static int percent_format(JCtx *c, JValue fmt, JValue args, JValue *out)
{
    const JValue *av = &args;
    uint32_t an = 1, next = 0;
    const JDict *map = NULL;
    if (args.type == JV_LIST && (args.flags & JF_TUPLE)) {
        av = args.u.list->items;
        an = args.u.list->n;
    } else if (args.type == JV_DICT && !(args.flags & JF_NAMESPACE)) {
        map = args.u.dict;
    }
    const char *s = fmt.u.s;
    size_t n = fmt.len, i = 0;
    JBuf b;
    jbuf_init(&b, c);
    while (i < n) {
        size_t run = i;
        while (i < n && s[i] != '%') i++;
        if (jbuf_put(&b, s + run, i - run) < 0) return -1;
        if (i++ >= n) break;
        JValue arg = jv_none();
        int have = 0;
        if (i < n && s[i] == '(') {
            size_t k = ++i;
            while (i < n && s[i] != ')') i++;
            if (i >= n) return jv_fail(c, PITH_BAD_INPUT, "incomplete format key");
            if (!map) return jv_fail(c, PITH_BAD_INPUT, "format requires a mapping");
            JValue *p = jv_dict_get(map, s + k, i - k);
            if (!p) return jv_fail(c, PITH_BAD_INPUT, "KeyError: '%.*s'", (int)(i - k), s + k);
            arg = *p;
            have = 1;
            i++;
        }
        char flags[8];
        int nf = 0, width = 0, prec = -1;
        while (i < n && strchr("-+ 0#", s[i]) && s[i])
            if (nf < 7) flags[nf++] = s[i++];
            else i++;
        flags[nf] = 0;
        for (; i < n && s[i] >= '0' && s[i] <= '9'; i++) width = width > 500 ? width : width * 10 + (s[i] - '0');
        if (i < n && s[i] == '.')
            for (prec = 0, i++; i < n && s[i] >= '0' && s[i] <= '9'; i++) prec = prec > 500 ? prec : prec * 10 + (s[i] - '0');
        if (width > 500 || prec > 500) return jv_fail(c, PITH_UNSUPPORTED, "a format width or precision over 500");
        while (i < n && strchr("hlL", s[i]) && s[i]) i++;
        if (i >= n) return jv_fail(c, PITH_BAD_INPUT, "incomplete format");
        char conv = s[i++];
        if (conv == '%') {
            if (jbuf_put(&b, "%", 1) < 0) return -1;
            continue;
        }
        if (!have) {
            if (map) {
                arg = args;
            } else {
                if (next >= an) return jv_fail(c, PITH_BAD_INPUT, "not enough arguments for format string");
                arg = av[next++];
            }
        }
        if (format_one(c, &b, flags, width, prec, conv, arg, fmt.flags & JF_MARKUP) < 0) return -1;
    }
    if (!map && next < an && !(args.type == JV_LIST && !(args.flags & JF_TUPLE)))
        return jv_fail(c, PITH_BAD_INPUT, "not all arguments converted during string formatting");
    *out = jbuf_value(&b);
    out->flags = fmt.flags & JF_MARKUP;
    return 0;
}

/* ---- attributes, subscripts, slices, iteration ---------------------------------------- */

int jv_getattr(JCtx *c, JValue obj, const char *name, size_t len, JValue *out)
{
    if (obj.type == JV_UNDEFINED) return undefined_error(c, obj);
    if (!(obj.type == JV_DICT && (obj.flags & JF_NAMESPACE))) { /* a namespace has attributes only */
        int r = c->method ? c->method(c, obj, name, len, out) : 1; /* Python's attribute first, as jinja2 */
        if (r <= 0) return r;
    }
    JValue *v = obj.type == JV_DICT ? jv_dict_get(obj.u.dict, name, len) : NULL;
    *out = v ? *v : jv_undefined(name, len);
    return 0;
}

/* Byte offset of code point k of s (len if k is the count). */
static size_t char_at(const char *s, size_t len, size_t k)
{
    size_t i = 0;
    for (; i < len; i++)
        if (starts_char(s, i) && k-- == 0) break;
    return i;
}

int jv_getitem(JCtx *c, JValue obj, JValue key, JValue *out)
{
    if (obj.type == JV_UNDEFINED) return undefined_error(c, obj);
    if ((obj.type == JV_LIST || obj.type == JV_STRING) && (key.type == JV_INT || key.type == JV_BOOL) &&
        !(obj.flags & JF_GENERATOR)) {
        int64_t n = obj.type == JV_LIST ? obj.u.list->n : (int64_t)jv_str_chars(obj.u.s, obj.len);
        int64_t i = key.u.i < 0 ? key.u.i + n : key.u.i;
        if (i < 0 || i >= n) {
            *out = jv_undefined(NULL, 0);
        } else if (obj.type == JV_LIST) {
            *out = obj.u.list->items[i];
        } else {
            size_t at = char_at(obj.u.s, obj.len, (size_t)i), end = at + 1;
            while (end < obj.len && is_cont((unsigned char)obj.u.s[end])) end++;
            *out = jv_str(obj.u.s + at, end - at);
        }
        return 0;
    }
    if (obj.type == JV_DICT && !(obj.flags & JF_NAMESPACE))
        for (uint32_t i = 0; i < obj.u.dict->n; i++)
            if (jv_equal(obj.u.dict->keys[i], key)) {
                *out = obj.u.dict->values[i];
                return 0;
            }
    if (key.type == JV_STRING) return jv_getattr(c, obj, key.u.s, key.len, out);
    *out = jv_undefined(NULL, 0);
    return 0;
}

/* Python's slice.indices(): *start, and the count of items taken. */
static int slice_bounds(JCtx *c, int64_t len, const JValue *start, const JValue *stop, const JValue *step,
                        int64_t *from, int64_t *count, int64_t *by, int *ok)
{
    const JValue *v[3] = {start, stop, step};
    int64_t x[3] = {0, 0, 1};
    *ok = 0;
    for (int i = 0; i < 3; i++) {
        if (!v[i] || v[i]->type == JV_NONE) {
            v[i] = NULL;
            continue;
        }
        if (v[i]->type != JV_INT && v[i]->type != JV_BOOL) return 0; /* a TypeError jinja2 turns into Undefined */
        x[i] = v[i]->u.i;
    }
    if (x[2] == 0) return jv_fail(c, PITH_BAD_INPUT, "slice step cannot be zero");
    int64_t lower = x[2] < 0 ? -1 : 0, upper = x[2] < 0 ? len - 1 : len;
    for (int i = 0; i < 2; i++) {
        if (!v[i]) {
            x[i] = (i == 0) == (x[2] < 0) ? upper : lower;
        } else if (x[i] < 0) {
            x[i] = x[i] < -len ? lower : x[i] + len; /* -len..-1 */
            if (x[i] < lower) x[i] = lower;
        } else if (x[i] > upper) {
            x[i] = upper;
        }
    }
    int64_t span = x[2] > 0 ? x[1] - x[0] : x[0] - x[1], step_abs = x[2] > 0 ? x[2] : -x[2];
    *count = span > 0 ? (span - 1) / step_abs + 1 : 0;
    *from = x[0];
    *by = x[2];
    *ok = 1;
    return 0;
}

int jv_slice(JCtx *c, JValue obj, const JValue *start, const JValue *stop, const JValue *step, JValue *out)
{
    if (obj.type == JV_UNDEFINED) return undefined_error(c, obj);
    *out = jv_undefined(NULL, 0);
    if ((obj.type != JV_LIST && obj.type != JV_STRING) || (obj.flags & JF_GENERATOR)) return 0;
    int ascii = 1;
    size_t chars = obj.type == JV_LIST ? obj.u.list->n : jv_str_chars(obj.u.s, obj.len);
    if (obj.type == JV_STRING) ascii = chars == obj.len;
    int64_t from, count, by;
    int ok;
    if (slice_bounds(c, (int64_t)chars, start, stop, step, &from, &count, &by, &ok) < 0) return -1;
    if (!ok) return 0;
    if (obj.type == JV_LIST) {
        if (jv_list_new(c, (uint32_t)count, out) < 0) return -1;
        for (int64_t i = 0; i < count; i++) out->u.list->items[i] = obj.u.list->items[from + i * by];
        out->u.list->n = (uint32_t)count;
        out->flags = obj.flags & JF_TUPLE;
        return 0;
    }
    size_t nc = chars;
    uint32_t *off = NULL;
    if (!ascii && !(off = char_offsets(c, obj.u.s, obj.len, &nc))) return -1;
#define OFF(k) (off ? off[k] : (size_t)(k))
    if (by == 1 || count == 0) {
        size_t a = count ? OFF(from) : 0, e = count ? OFF(from + count) : 0;
        *out = jv_str(obj.u.s + a, e - a);
        return 0;
    }
    JBuf b;
    jbuf_init(&b, c);
    for (int64_t i = 0; i < count; i++) {
        int64_t k = from + i * by;
        if (jbuf_put(&b, obj.u.s + OFF(k), OFF(k + 1) - OFF(k)) < 0) return -1;
    }
#undef OFF
    *out = jbuf_value(&b);
    return 0;
}

int jv_iterate(JCtx *c, JValue v, JList **out)
{
    JValue l;
    switch (v.type) {
    case JV_LIST: *out = v.u.list; return 0;
    case JV_UNDEFINED:
        if (jv_list_new(c, 0, &l) < 0) return -1;
        *out = l.u.list;
        return 0;
    case JV_DICT:
        if (v.flags & JF_NAMESPACE) break;
        if (!(*out = jv_alloc(c, sizeof **out))) return -1;
        (*out)->n = (*out)->cap = v.u.dict->n;
        (*out)->items = v.u.dict->keys;
        return 0;
    case JV_STRING: {
        size_t n = jv_str_chars(v.u.s, v.len);
        if (jv_list_new(c, (uint32_t)n, &l) < 0) return -1;
        for (size_t i = 0; i < v.len;) {
            size_t e = i + 1;
            while (e < v.len && is_cont((unsigned char)v.u.s[e])) e++;
            l.u.list->items[l.u.list->n++] = jv_str(v.u.s + i, e - i);
            i = e;
        }
        *out = l.u.list;
        return 0;
    }
    default: break;
    }
    return jv_fail(c, PITH_BAD_INPUT, "'%s' object is not iterable", jv_type_name(v));
}

/* ---- JSON text to values -------------------------------------------------------------- */

/* A JSON string (or, key: an object's key and its ':') copied into the region. */
static int json_read_string(JCtx *c, Json *j, int key, JValue *out)
{
    size_t at = j->pos, n = 0;
    if (json_string(j, NULL, SIZE_MAX, &n) < 0) return -1;
    j->pos = at;
    char *p = jv_alloc(c, n ? n : 1);
    if (!p) return -1;
    if ((key ? json_key(j, p, n, &n) : json_string(j, p, n, &n)) < 0) return -1;
    *out = jv_str(p, n);
    return 0;
}

static int json_read(JCtx *c, Json *j, JValue *out)
{
    int r;
    switch (json_peek(j)) {
    case JSON_OBJECT:
        if (json_enter(j, '{') < 0 || jv_dict_new(c, 4, out) < 0) return -1;
        while ((r = json_next(j, '}')) > 0) {
            JValue k, v;
            if (json_read_string(c, j, 1, &k) < 0 || json_read(c, j, &v) < 0 || jv_dict_set(c, out->u.dict, k, v) < 0)
                return -1;
        }
        return r;
    case JSON_ARRAY:
        if (json_enter(j, '[') < 0 || jv_list_new(c, 4, out) < 0) return -1;
        while ((r = json_next(j, ']')) > 0) {
            JValue v;
            if (json_read(c, j, &v) < 0 || jv_list_push(c, out->u.list, v) < 0) return -1;
        }
        return r;
    case JSON_STRING: return json_read_string(c, j, 0, out);
    case JSON_NUMBER: {
        const char *t;
        size_t n;
        double f;
        if (json_number(j, &t, &n, &f) < 0) return -1;
        *out = jv_float(f);
        if (n <= 20 && !memchr(t, '.', n) && !memchr(t, 'e', n) && !memchr(t, 'E', n)) {
            /* an integer: int when it fits in 64 bits (Python's are unbounded; beyond, a float) */
            uint64_t m = 0;
            size_t i = t[0] == '-';
            for (; i < n && m <= (UINT64_MAX - 9) / 10; i++) m = m * 10 + (uint64_t)(t[i] - '0');
            if (i == n && m <= (uint64_t)INT64_MAX + (t[0] == '-'))
                *out = jv_int(t[0] == '-' ? (int64_t)(0 - m) : (int64_t)m);
        }
        return 0;
    }
    default: {
        JsonType t;
        if (json_literal(j, &t) < 0) return -1;
        *out = t == JSON_NULL ? jv_none() : jv_bool(t == JSON_TRUE);
        return 0;
    }
    }
}

/* messages[i].tool_calls[k].function.arguments: a string holding a JSON
 * object becomes the object (other strings stay as they are). */
static int parse_tool_arguments(JCtx *c, JValue messages)
{
    if (messages.type != JV_LIST) return 0;
    for (uint32_t i = 0; i < messages.u.list->n; i++) {
        JValue m = messages.u.list->items[i];
        JValue *calls = m.type == JV_DICT ? jv_dict_get(m.u.dict, "tool_calls", 10) : NULL;
        if (!calls || calls->type != JV_LIST) continue;
        for (uint32_t k = 0; k < calls->u.list->n; k++) {
            JValue call = calls->u.list->items[k];
            JValue *fn = call.type == JV_DICT ? jv_dict_get(call.u.dict, "function", 8) : NULL;
            JValue *args = fn && fn->type == JV_DICT ? jv_dict_get(fn->u.dict, "arguments", 9) : NULL;
            if (!args || args->type != JV_STRING) continue;
            Json j;
            JValue v;
            json_init(&j, args->u.s, args->len, "arguments");
            if (json_peek(&j) != JSON_OBJECT) continue;
            if (json_read(c, &j, &v) < 0 || json_end(&j) < 0) {
                if (c->failed) return -1; /* out of memory; a malformed text stays a string */
                continue;
            }
            *args = v;
        }
    }
    return 0;
}

int jv_from_json(JCtx *c, const char *json, size_t len, const char *name, int flags, JValue *out)
{
    Json j;
    if (c->failed) return -1;
    json_init(&j, json, len, name);
    if (json_read(c, &j, out) < 0 || json_end(&j) < 0) {
        if (j.failed) snprintf(c->err, sizeof c->err, "%s", j.err);
        else snprintf(c->err, sizeof c->err, "%s: byte %zu: the values need more than the %zu bytes of work memory",
                      name, j.pos, c->cap);
        c->failed = 1;
        c->status = j.failed ? j.status : PITH_NO_MEMORY;
        return -1;
    }
    return (flags & JINJA_JSON_TOOL_ARGUMENTS) ? parse_tool_arguments(c, *out) : 0;
}
