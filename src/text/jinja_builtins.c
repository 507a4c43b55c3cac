/* jinja_builtins.c - jinja2's filters and tests, the methods of str, dict
 * and list a template calls, and the global functions (range, namespace,
 * dict, raise_exception, strftime_now...): one table each, a row per name
 * with its parameters, as jinja2 and Python define them. Not here: the
 * filters groupby, slice, striptags, urlencode, wordwrap, xmlattr, random,
 * pprint, filesizeformat and the globals cycler and lipsum; upper and lower
 * know the Latin, Greek, Cyrillic and Armenian alphabets only. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "jinja_impl.h"
#include "json.h"
#include "unicode.h"

enum { MAX_PARAMS = 6 };

/* p[i]: the argument bound to the row's i-th parameter, NULL if absent. */
typedef int (*BuiltinFn)(JCtx *c, JValue self, const JValue *const *p, const JArgs *a, JValue *out);

typedef struct {
    const char *name;
    const char *params; /* space-separated names; "*": the function reads JArgs itself */
    BuiltinFn fn;       /* NULL: a method the immutable sandbox refuses */
    uint8_t type;       /* methods: the receiver's JType */
} Builtin;

/* ---- arguments ---------------------------------------------------------- */

static int param_index(const char *params, const char *name, size_t len)
{
    for (int i = 0; *params; i++) {
        size_t n = strcspn(params, " ");
        if (n == len && !memcmp(params, name, len)) return i;
        params += n + (params[n] == ' ');
    }
    return -1;
}

static int bind(JCtx *c, const Builtin *r, const char *kind, const JArgs *a, const JValue **p)
{
    for (int i = 0; i < MAX_PARAMS; i++) p[i] = NULL;
    if (r->params[0] == '*') return 0;
    int n = 0;
    for (const char *s = r->params; *s; s++) n += (s == r->params || s[-1] == ' ') && *s != ' ';
    if (a->n_pos > n)
        return jv_fail(c, PITH_BAD_INPUT, "%s '%s' takes at most %d arguments (%d given)", kind, r->name, n, a->n_pos);
    for (int i = 0; i < a->n_pos; i++) p[i] = &a->pos[i];
    for (int k = 0; k < a->n_kw; k++) {
        int i = param_index(r->params, a->kw_names[k], strlen(a->kw_names[k]));
        if (i < 0)
            return jv_fail(c, PITH_BAD_INPUT, "%s '%s' got an unexpected keyword argument '%s'", kind, r->name,
                           a->kw_names[k]);
        p[i] = &a->kw[k];
    }
    return 0;
}

static const Builtin *find(const Builtin *t, size_t n, const char *name, size_t len, int type)
{
    for (size_t i = 0; i < n; i++)
        if (strlen(t[i].name) == len && !memcmp(t[i].name, name, len) && (type < 0 || t[i].type == type)) return &t[i];
    return NULL;
}

/* jinja2's UndefinedError, where a filter uses an Undefined as a number or adds to it. */
static int undefined(JCtx *c, JValue u)
{
    return jv_fail(c, PITH_BAD_INPUT, "'%.*s' is undefined", (int)(u.len > 80 ? 80 : u.len), u.u.s);
}

static int type_error(JCtx *c, const char *what, JValue v)
{
    return jv_fail(c, PITH_BAD_INPUT, "%s: unexpected %s", what, jv_type_name(v));
}

static int want_int(JCtx *c, const JValue *v, int64_t dflt, const char *what, int64_t *out)
{
    *out = dflt;
    if (!v || v->type == JV_NONE) return 0;
    if (v->type != JV_INT && v->type != JV_BOOL) return type_error(c, what, *v);
    *out = v->u.i;
    return 0;
}

static int arg_truthy(const JValue *v, int dflt)
{
    return v ? jv_truthy(*v) : dflt;
}

static int str_of(JCtx *c, JValue v, JValue *out)
{
    if (v.type == JV_STRING) {
        *out = v;
        return 0;
    }
    JBuf b;
    jbuf_init(&b, c);
    if (jv_write_str(&b, v) < 0) return -1;
    *out = jbuf_value(&b);
    return 0;
}

#define UNUSED __attribute__((unused))
/* Every builtin: v the filtered/tested value or the method's object, p its bound arguments. */
#define BUILTIN(fn) static int fn(JCtx *c UNUSED, JValue v UNUSED, const JValue *const *p UNUSED, \
                                  const JArgs *a UNUSED, JValue *out UNUSED)

/* ---- text by code point ------------------------------------------------------ */

static int next_cp(const char *s, size_t n, size_t i, uint32_t *cp)
{
    int k = utf8_next((const uint8_t *)s + i, n - i, cp);
    return k < 0 ? 1 : k;
}

static size_t prev_start(const char *s, size_t i) /* start of the code point before byte i */
{
    do i--;
    while (i > 0 && (s[i] & 0xC0) == 0x80);
    return i;
}

static int put_cp(JBuf *b, uint32_t cp)
{
    char t[4];
    int n = cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
    if (n == 1) t[0] = (char)cp;
    else {
        for (int i = n - 1; i > 0; i--, cp >>= 6) t[i] = (char)(0x80 | (cp & 0x3F));
        t[0] = (char)((0xF00 >> n) | cp);
    }
    return jbuf_put(b, t, (size_t)n);
}

/* str.isspace(). */
static int py_space(uint32_t cp)
{
    return (cp >= 9 && cp <= 13) || (cp >= 0x1C && cp <= 0x20) || (cp >= 0x80 && unicode_class(cp) == UCLASS_SPACE);
}

/* Upper-case letters lo..hi (every step-th) and the distance to their lower case: the Latin,
 * Greek, Cyrillic and Armenian alphabets (Python knows all of Unicode's casing; rarer
 * letters keep their case here). */
static const struct {
    uint32_t lo, hi;
    uint8_t delta, step;
} cases[] = {{0x41, 0x5A, 32, 1},   {0xC0, 0xD6, 32, 1},   {0xD8, 0xDE, 32, 1},   {0x100, 0x12E, 1, 2},
             {0x132, 0x136, 1, 2},  {0x139, 0x147, 1, 2},  {0x14A, 0x176, 1, 2},  {0x179, 0x17D, 1, 2},
             {0x391, 0x3A1, 32, 1}, {0x3A3, 0x3AB, 32, 1}, {0x400, 0x40F, 80, 1}, {0x410, 0x42F, 32, 1},
             {0x460, 0x480, 1, 2},  {0x48A, 0x4BE, 1, 2},  {0x531, 0x556, 48, 1}};

static uint32_t case_map(uint32_t cp, int upper)
{
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        uint32_t lo = cases[i].lo + (upper ? cases[i].delta : 0), hi = cases[i].hi + (upper ? cases[i].delta : 0);
        if (cp >= lo && cp <= hi && (cp - lo) % cases[i].step == 0) return upper ? cp - cases[i].delta : cp + cases[i].delta;
    }
    return cp;
}

static int cased(uint32_t cp)
{
    return case_map(cp, 0) != cp || case_map(cp, 1) != cp;
}

enum { CASE_UPPER, CASE_LOWER, CASE_CAPITALIZE, CASE_TITLE, CASE_TITLE_FILTER };

/* str.upper(), lower(), capitalize(), title(), and jinja2's title filter (a
 * word starts after '-', white space, '(', '{', '[' or '<'). */
static int recase(JCtx *c, JValue v, int mode, JValue *out)
{
    JBuf b;
    jbuf_init(&b, c);
    if (str_of(c, v, &v) < 0 || jbuf_put(&b, "", 0) < 0) return -1;
    int start = 1;
    for (size_t i = 0; i < v.len;) {
        uint32_t cp;
        int k = utf8_next((const uint8_t *)v.u.s + i, v.len - i, &cp);
        if (k < 0) {
            if (jbuf_put(&b, v.u.s + i++, 1) < 0) return -1;
            continue;
        }
        int up = mode == CASE_UPPER || (mode != CASE_LOWER && start);
        if (put_cp(&b, case_map(cp, up)) < 0) return -1;
        if (mode == CASE_TITLE) start = !cased(cp);
        else start = mode == CASE_TITLE_FILTER && (py_space(cp) || (cp && cp < 128 && strchr("-({[<", (int)cp)));
        i += (size_t)k;
    }
    *out = jbuf_value(&b);
    return 0;
}

static int has_cp(JValue set, uint32_t cp)
{
    for (size_t i = 0; i < set.len;) {
        uint32_t x;
        i += (size_t)next_cp(set.u.s, set.len, i, &x);
        if (x == cp) return 1;
    }
    return 0;
}

static int want_str(JCtx *c, const JValue *v, const char *what)
{
    return v && v->type != JV_STRING ? type_error(c, what, *v) : 0;
}

/* str.strip(chars) (None: white space) from the left, the right or both. */
static int strip(JCtx *c, JValue s, const JValue *chars, int left, int right, JValue *out)
{
    if (chars && chars->type == JV_NONE) chars = NULL;
    if (want_str(c, chars, "strip arg") < 0) return -1;
    size_t i = 0, e = s.len;
    uint32_t cp;
    while (left && i < e) {
        int k = next_cp(s.u.s, e, i, &cp);
        if (chars ? !has_cp(*chars, cp) : !py_space(cp)) break;
        i += (size_t)k;
    }
    while (right && e > i) {
        size_t j = prev_start(s.u.s, e);
        next_cp(s.u.s, e, j, &cp);
        if (chars ? !has_cp(*chars, cp) : !py_space(cp)) break;
        e = j;
    }
    *out = jv_str(s.u.s + i, e - i);
    return 0;
}

/* Byte offset of needle in s[from..to), searching from the left or the right; -1 if absent. */
static int64_t find_in(const char *s, size_t from, size_t to, JValue needle, int right)
{
    if (needle.len > to - from) return -1;
    for (size_t k = 0; k <= to - from - needle.len; k++) {
        size_t i = right ? to - needle.len - k : from + k;
        if (!memcmp(s + i, needle.u.s, needle.len)) return (int64_t)i;
    }
    return -1;
}

static int push(JCtx *c, JValue *list, JValue v)
{
    return jv_list_push(c, list->u.list, v);
}

static void reverse_items(JValue *v, uint32_t n)
{
    for (uint32_t i = 0; i < n / 2; i++) {
        JValue t = v[i];
        v[i] = v[n - 1 - i];
        v[n - 1 - i] = t;
    }
}

/* str.split / str.rsplit (sep None: runs of white space). */
static int split(JCtx *c, JValue s, const JValue *sep, const JValue *maxsplit, int right, JValue *out)
{
    int64_t max;
    if (sep && sep->type == JV_NONE) sep = NULL;
    if (want_str(c, sep, "split separator") < 0 || want_int(c, maxsplit, -1, "maxsplit", &max) < 0 ||
        jv_list_new(c, 4, out) < 0)
        return -1;
    if (sep && !sep->len) return jv_fail(c, PITH_BAD_INPUT, "empty separator");
    const char *t = s.u.s;
    size_t i = 0, e = s.len;
    uint32_t cp;
    if (sep) {
        int64_t at;
        while (max-- != 0 && (at = find_in(t, i, e, *sep, right)) >= 0) {
            size_t x = (size_t)at;
            if (push(c, out, right ? jv_str(t + x + sep->len, e - x - sep->len) : jv_str(t + i, x - i)) < 0) return -1;
            if (right) e = x;
            else i = x + sep->len;
        }
        if (push(c, out, jv_str(t + i, e - i)) < 0) return -1;
    } else {
        for (;;) { /* skip white space, then take a word */
            if (!right)
                while (i < e && (next_cp(t, e, i, &cp), py_space(cp))) i += (size_t)next_cp(t, e, i, &cp);
            else
                while (e > i && (next_cp(t, e, prev_start(t, e), &cp), py_space(cp))) e = prev_start(t, e);
            if (i == e) break;
            if (max-- == 0) {
                if (push(c, out, jv_str(t + i, e - i)) < 0) return -1;
                break;
            }
            size_t j = right ? e : i;
            if (!right)
                while (j < e && (next_cp(t, e, j, &cp), !py_space(cp))) j += (size_t)next_cp(t, e, j, &cp);
            else
                while (j > i && (next_cp(t, e, prev_start(t, j), &cp), !py_space(cp))) j = prev_start(t, j);
            if (push(c, out, right ? jv_str(t + j, e - j) : jv_str(t + i, j - i)) < 0) return -1;
            if (right) e = j;
            else i = j;
        }
    }
    if (right) reverse_items(out->u.list->items, out->u.list->n);
    return 0;
}

/* str.replace(old, new, count). */
static int replace(JCtx *c, JValue s, const JValue *old, const JValue *rep, const JValue *count, JValue *out)
{
    int64_t max;
    if (!old || !rep) return jv_fail(c, PITH_BAD_INPUT, "replace() takes at least 2 arguments");
    if (want_str(c, old, "replace") < 0 || want_str(c, rep, "replace") < 0 ||
        want_int(c, count, -1, "replace count", &max) < 0)
        return -1;
    JBuf b;
    jbuf_init(&b, c);
    if (jbuf_put(&b, "", 0) < 0) return -1;
    size_t i = 0;
    while (i <= s.len) {
        int64_t at = old->len ? find_in(s.u.s, i, s.len, *old, 0) : (int64_t)i;
        if (at < 0 || max-- == 0) break;
        size_t x = (size_t)at, skip = old->len;
        if (!old->len && x < s.len) skip = (size_t)next_cp(s.u.s, s.len, x, &(uint32_t){0});
        if (jbuf_put(&b, s.u.s + i, x - i) < 0 || jbuf_put(&b, rep->u.s, rep->len) < 0 ||
            (!old->len && jbuf_put(&b, s.u.s + x, skip) < 0))
            return -1;
        i = x + skip + (!old->len && x == s.len);
    }
    if (i < s.len && jbuf_put(&b, s.u.s + i, s.len - i) < 0) return -1;
    *out = jbuf_value(&b);
    return 0;
}

/* str.splitlines(): at \n, \r, \r\n, \v, \f, \x1c-\x1e, \x85, U+2028, U+2029. */
static int splitlines(JCtx *c, JValue s, JValue *out)
{
    if (jv_list_new(c, 4, out) < 0) return -1;
    size_t i = 0, start = 0;
    while (i < s.len) {
        uint32_t cp;
        int k = next_cp(s.u.s, s.len, i, &cp);
        if ((cp >= 0x0A && cp <= 0x0D) || (cp >= 0x1C && cp <= 0x1E) || cp == 0x85 || cp == 0x2028 || cp == 0x2029) {
            if (push(c, out, jv_str(s.u.s + start, i - start)) < 0) return -1;
            i += (size_t)k + (cp == '\r' && i + 1 < s.len && s.u.s[i + 1] == '\n');
            start = i;
        } else {
            i += (size_t)k;
        }
    }
    return start < s.len ? push(c, out, jv_str(s.u.s + start, s.len - start)) : 0;
}

static int new_tuple2(JCtx *c, JValue x, JValue y, JValue *out)
{
    if (jv_list_new(c, 2, out) < 0) return -1;
    out->flags = JF_TUPLE;
    out->u.list->items[0] = x;
    out->u.list->items[1] = y;
    out->u.list->n = 2;
    return 0;
}

/* ---- lookups by attribute, sorting ---------------------------------------------- */

static int lower_if_str(JCtx *c, JValue v, JValue *out)
{
    if (v.type != JV_STRING) {
        *out = v;
        return 0;
    }
    return recase(c, v, CASE_LOWER, out);
}

/* jinja2's make_attrgetter: "a.b.0" looked up part by part with getitem
 * (all-digit parts as ints); dflt replaces an Undefined. */
static int attr_get(JCtx *c, JValue item, JValue attr, const JValue *dflt, JValue *out)
{
    *out = item;
    if (attr.type != JV_STRING) return jv_getitem(c, item, attr, out);
    for (size_t i = 0;;) {
        size_t j = i;
        int64_t n = 0;
        while (j < attr.len && attr.u.s[j] != '.') {
            n = attr.u.s[j] >= '0' && attr.u.s[j] <= '9' && n >= 0 && n < INT64_MAX / 10 ? n * 10 + (attr.u.s[j] - '0') : -1;
            j++;
        }
        JValue key = j > i && n >= 0 ? jv_int(n) : jv_str(attr.u.s + i, j - i);
        if (jv_getitem(c, *out, key, out) < 0) return -1;
        if (dflt && dflt->type != JV_NONE && out->type == JV_UNDEFINED) *out = *dflt;
        if (j >= attr.len) return 0;
        i = j + 1;
    }
}

typedef struct {
    const JValue *keys;
    int reverse;
} SortKeys;

static int keys_less(JCtx *c, JValue a, JValue b, const void *arg)
{
    const SortKeys *k = arg;
    JValue x = k->keys[a.u.i], y = k->keys[b.u.i];
    return k->reverse ? jv_less(c, y, x, NULL) : jv_less(c, x, y, NULL);
}

/* items sorted by keys as Python's sorted(key=, reverse=) (stable both ways), into a new list. */
static int sort_by(JCtx *c, const JValue *items, const JValue *keys, uint32_t n, int reverse, JValue *out)
{
    SortKeys k = {keys, reverse};
    if (jv_list_new(c, n, out) < 0) return -1;
    JValue *ix = out->u.list->items;
    for (uint32_t i = 0; i < n; i++) ix[i] = jv_int(i);
    if (jv_sort(c, ix, n, keys_less, &k) < 0) return -1;
    for (uint32_t i = 0; i < n; i++) ix[i] = items[ix[i].u.i];
    out->u.list->n = n;
    return 0;
}

/* A new empty list flagged as jinja2's generators are. */
static int generator(JCtx *c, uint32_t cap, JValue *out)
{
    if (jv_list_new(c, cap, out) < 0) return -1;
    out->flags = JF_GENERATOR;
    return 0;
}

static JValue *new_values(JCtx *c, uint32_t n)
{
    return jv_alloc(c, (n ? n : 1) * sizeof(JValue));
}

/* ---- filters ------------------------------------------------------------------- */

/* json.dumps' ensure_ascii: what is not ASCII (only inside strings) as \\u escapes, UTF-16 pairs above U+FFFF. */
static int ascii_escape(JCtx *c, JValue s, JValue *out)
{
    JBuf b;
    jbuf_init(&b, c);
    if (jbuf_put(&b, "", 0) < 0) return -1;
    for (size_t i = 0; i < s.len;) {
        uint32_t cp;
        int k = next_cp(s.u.s, s.len, i, &cp);
        char t[16];
        int n = cp < 0x80 ? 0 : cp < 0x10000 ? snprintf(t, sizeof t, "\\u%04x", (unsigned)cp)
                                             : snprintf(t, sizeof t, "\\u%04x\\u%04x", 0xD800 + ((cp - 0x10000) >> 10),
                                                        0xDC00 + ((cp - 0x10000) & 0x3FF));
        if (n ? jbuf_put(&b, t, (size_t)n) < 0 : jbuf_put(&b, s.u.s + i, (size_t)k) < 0) return -1;
        i += (size_t)k;
    }
    *out = jbuf_value(&b);
    return 0;
}

/* transformers' tojson: json.dumps(x, ensure_ascii=False, indent=, separators=, sort_keys=). */
BUILTIN(f_tojson)
{
    char spaces[64], seps[2][16];
    const char *indent = NULL, *sep[2] = {NULL, NULL};
    size_t indent_len = 0;
    if (p[1] && p[1]->type == JV_STRING) {
        indent = p[1]->u.s;
        indent_len = p[1]->len;
    } else if (p[1] && (p[1]->type == JV_INT || p[1]->type == JV_BOOL)) {
        indent_len = p[1]->u.i < 0 ? 0 : p[1]->u.i > 63 ? 63 : (size_t)p[1]->u.i;
        memset(spaces, ' ', indent_len);
        indent = spaces;
    } else if (p[1] && p[1]->type != JV_NONE) {
        return type_error(c, "tojson indent", *p[1]);
    }
    if (p[2] && p[2]->type != JV_NONE) {
        if (p[2]->type != JV_LIST || p[2]->u.list->n != 2) return type_error(c, "tojson separators", *p[2]);
        for (int i = 0; i < 2; i++) {
            JValue s = p[2]->u.list->items[i];
            if (s.type != JV_STRING || s.len >= sizeof seps[i]) return type_error(c, "tojson separators", s);
            memcpy(seps[i], s.u.s, s.len);
            seps[i][s.len] = 0;
            sep[i] = seps[i];
        }
    }
    JBuf b;
    jbuf_init(&b, c);
    if (jbuf_put(&b, "", 0) < 0 || jv_write_json(&b, v, indent, indent_len, sep[0], sep[1], arg_truthy(p[3], 0)) < 0)
        return -1;
    *out = jbuf_value(&b);
    return arg_truthy(p[0], 0) ? ascii_escape(c, *out, out) : 0;
}

BUILTIN(f_string) { return str_of(c, v, out); }
BUILTIN(f_upper) { return recase(c, v, CASE_UPPER, out); }
BUILTIN(f_lower) { return recase(c, v, CASE_LOWER, out); }
BUILTIN(f_capitalize) { return recase(c, v, CASE_CAPITALIZE, out); }
BUILTIN(f_title) { return recase(c, v, CASE_TITLE_FILTER, out); }
BUILTIN(f_trim) { return str_of(c, v, &v) < 0 ? -1 : strip(c, v, p[0], 1, 1, out); }
/* replace(old, new, count): jinja2 takes str() of all three strings. */
BUILTIN(f_replace)
{
    JValue from, to;
    if (!p[0] || !p[1]) return jv_fail(c, PITH_BAD_INPUT, "replace() takes at least 2 arguments");
    return str_of(c, v, &v) < 0 || str_of(c, *p[0], &from) < 0 || str_of(c, *p[1], &to) < 0
               ? -1
               : replace(c, v, &from, &to, p[2], out);
}

BUILTIN(f_safe)
{
    if (str_of(c, v, out) < 0) return -1;
    out->flags = JF_MARKUP;
    return 0;
}

BUILTIN(f_length)
{
    switch (v.type) {
    case JV_STRING: *out = jv_int((int64_t)jv_str_chars(v.u.s, v.len)); return 0;
    case JV_LIST:
        if (v.flags & JF_GENERATOR) break;
        *out = jv_int(v.u.list->n);
        return 0;
    case JV_UNDEFINED: *out = jv_int(0); return 0;
    case JV_DICT:
        if (v.flags & JF_NAMESPACE) break;
        *out = jv_int(v.u.dict->n);
        return 0;
    default: break;
    }
    return jv_fail(c, PITH_BAD_INPUT, "object of type '%s' has no len()", jv_type_name(v));
}

BUILTIN(f_default)
{
    int use = v.type == JV_UNDEFINED || (arg_truthy(p[1], 0) && !jv_truthy(v));
    *out = !use ? v : p[0] ? *p[0] : jv_str("", 0);
    return 0;
}

BUILTIN(f_list)
{
    JList *l;
    if (jv_iterate(c, v, &l) < 0 || jv_list_new(c, l->n, out) < 0) return -1;
    if (l->n) memcpy(out->u.list->items, l->items, (size_t)l->n * sizeof(JValue));
    out->u.list->n = l->n;
    return 0;
}

static int first_last(JCtx *c, JValue v, int last, JValue *out)
{
    JList *l;
    if (last && (v.flags & JF_GENERATOR)) return jv_fail(c, PITH_BAD_INPUT, "'generator' object is not reversible");
    if (jv_iterate(c, v, &l) < 0) return -1;
    *out = l->n ? l->items[last ? l->n - 1 : 0] : jv_undefined(NULL, 0);
    return 0;
}

BUILTIN(f_first) { return first_last(c, v, 0, out); }
BUILTIN(f_last) { return first_last(c, v, 1, out); }

BUILTIN(f_join)
{
    JList *l;
    JValue sep = jv_str("", 0);
    if ((p[0] && str_of(c, *p[0], &sep) < 0) || jv_iterate(c, v, &l) < 0) return -1;
    JBuf b;
    jbuf_init(&b, c);
    if (jbuf_put(&b, "", 0) < 0) return -1;
    for (uint32_t i = 0; i < l->n; i++) {
        JValue x = l->items[i];
        if (p[1] && attr_get(c, x, *p[1], NULL, &x) < 0) return -1;
        if ((i && jbuf_put(&b, sep.u.s, sep.len) < 0) || jv_write_str(&b, x) < 0) return -1;
    }
    *out = jbuf_value(&b);
    return 0;
}

/* map(filter, *args, **kw) or map(attribute=, default=). */
BUILTIN(f_map)
{
    JList *l;
    const JValue *attr = NULL, *dflt = NULL;
    if (!jv_truthy(v)) return generator(c, 0, out); /* jinja2: "if value:" before reading the arguments */
    for (int k = 0; k < a->n_kw && !a->n_pos; k++) {
        if (!strcmp(a->kw_names[k], "attribute")) attr = &a->kw[k];
        else if (!strcmp(a->kw_names[k], "default")) dflt = &a->kw[k];
        else return jv_fail(c, PITH_BAD_INPUT, "map: unexpected keyword argument '%s'", a->kw_names[k]);
    }
    if (!attr && (!a->n_pos || a->pos[0].type != JV_STRING)) return jv_fail(c, PITH_BAD_INPUT, "map requires a filter argument");
    JArgs rest = {a->pos + 1, a->n_pos - 1, a->kw_names, a->kw, a->n_kw};
    if (jv_iterate(c, v, &l) < 0 || generator(c, l->n, out) < 0) return -1;
    for (uint32_t i = 0; i < l->n; i++) {
        JValue *x = &out->u.list->items[i];
        int r = attr ? attr_get(c, l->items[i], *attr, dflt, x)
                     : jb_filter(c, a->pos[0].u.s, a->pos[0].len, l->items[i], &rest, x);
        if (r > 0) return jv_fail(c, PITH_BAD_INPUT, "No filter named '%.*s'", (int)a->pos[0].len, a->pos[0].u.s);
        if (r < 0) return -1;
    }
    out->u.list->n = l->n;
    return 0;
}

/* select/reject(test, *args) and selectattr/rejectattr(attr, test, *args); no test: truth. */
static int select_items(JCtx *c, JValue v, const JArgs *a, int by_attr, int keep, JValue *out)
{
    JList *l;
    int off = by_attr;
    if (!jv_truthy(v)) return generator(c, 0, out); /* jinja2: "if value:" before reading the arguments */
    if (by_attr && !a->n_pos) return jv_fail(c, PITH_BAD_INPUT, "Missing parameter for attribute name");
    if (a->n_pos > off && a->pos[off].type != JV_STRING) return type_error(c, "test name", a->pos[off]);
    JArgs rest = {a->pos + off + 1, a->n_pos > off ? a->n_pos - off - 1 : 0, a->kw_names, a->kw, a->n_kw};
    if (jv_iterate(c, v, &l) < 0 || generator(c, 4, out) < 0) return -1;
    for (uint32_t i = 0; i < l->n; i++) {
        JValue x = l->items[i];
        int t;
        if (by_attr && attr_get(c, x, a->pos[0], NULL, &x) < 0) return -1;
        if (a->n_pos > off) {
            int r = jb_test(c, a->pos[off].u.s, a->pos[off].len, x, &rest, &t);
            if (r > 0) return jv_fail(c, PITH_BAD_INPUT, "No test named '%.*s'", (int)a->pos[off].len, a->pos[off].u.s);
            if (r < 0) return -1;
        } else {
            t = jv_truthy(x);
        }
        if (!t == !keep && push(c, out, l->items[i]) < 0) return -1;
    }
    return 0;
}

BUILTIN(f_select) { return select_items(c, v, a, 0, 1, out); }
BUILTIN(f_reject) { return select_items(c, v, a, 0, 0, out); }
BUILTIN(f_selectattr) { return select_items(c, v, a, 1, 1, out); }
BUILTIN(f_rejectattr) { return select_items(c, v, a, 1, 0, out); }

/* A dict's (key, value) pairs; Undefined: none. */
static int pairs(JCtx *c, JValue v, JValue *out)
{
    if (v.type == JV_UNDEFINED) return jv_list_new(c, 0, out);
    if (v.type != JV_DICT || (v.flags & JF_NAMESPACE))
        return jv_fail(c, PITH_BAD_INPUT, "Can only get item pairs from a mapping.");
    const JDict *d = v.u.dict;
    if (jv_list_new(c, d->n, out) < 0) return -1;
    for (uint32_t i = 0; i < d->n; i++)
        if (new_tuple2(c, d->keys[i], d->values[i], &out->u.list->items[i]) < 0) return -1;
    out->u.list->n = d->n;
    return 0;
}

BUILTIN(f_items)
{
    if (pairs(c, v, out) < 0) return -1;
    out->flags = JF_GENERATOR;
    return 0;
}

/* dictsort(case_sensitive=False, by='key', reverse=False). */
BUILTIN(f_dictsort)
{
    JValue items;
    int by = 0;
    if (p[1] && !(p[1]->type == JV_STRING && ((p[1]->len == 3 && !memcmp(p[1]->u.s, "key", 3)) ||
                                              (by = p[1]->len == 5 && !memcmp(p[1]->u.s, "value", 5)))))
        return jv_fail(c, PITH_BAD_INPUT, "You can only sort by either \"key\" or \"value\"");
    if (v.type != JV_DICT || (v.flags & JF_NAMESPACE)) return type_error(c, "dictsort", v);
    if (pairs(c, v, &items) < 0) return -1;
    uint32_t n = items.u.list->n;
    JValue *keys = new_values(c, n);
    if (!keys) return -1;
    for (uint32_t i = 0; i < n; i++) {
        keys[i] = items.u.list->items[i].u.list->items[by];
        if (!arg_truthy(p[0], 0) && lower_if_str(c, keys[i], &keys[i]) < 0) return -1;
    }
    return sort_by(c, items.u.list->items, keys, n, arg_truthy(p[2], 0), out);
}

/* The keys of sort, unique, min and max: the attribute(s) (sort: "a,b" gives
 * a list of several, as make_multi_attrgetter), lower-cased unless case_sensitive. */
static int item_keys(JCtx *c, const JList *l, const JValue *attr, int case_sensitive, int multi, JValue **keys)
{
    if (!(*keys = new_values(c, l->n))) return -1;
    for (uint32_t i = 0; i < l->n; i++) {
        JValue k = l->items[i], parts;
        if (multi) {
            if (jv_list_new(c, 1, &parts) < 0) return -1;
            if (attr && attr->type == JV_STRING) {
                for (size_t s = 0, e; s <= attr->len; s = e + 1) {
                    for (e = s; e < attr->len && attr->u.s[e] != ','; e++) {}
                    JValue x;
                    if (attr_get(c, k, jv_str(attr->u.s + s, e - s), NULL, &x) < 0 ||
                        (!case_sensitive && lower_if_str(c, x, &x) < 0) || push(c, &parts, x) < 0)
                        return -1;
                }
            } else {
                if ((attr && attr->type != JV_NONE && attr_get(c, k, *attr, NULL, &k) < 0) ||
                    (!case_sensitive && lower_if_str(c, k, &k) < 0) || push(c, &parts, k) < 0)
                    return -1;
            }
            (*keys)[i] = parts;
            continue;
        }
        if ((attr && attr->type != JV_NONE && attr_get(c, k, *attr, NULL, &k) < 0) ||
            (!case_sensitive && lower_if_str(c, k, &k) < 0))
            return -1;
        (*keys)[i] = k;
    }
    return 0;
}

/* sort(reverse=False, case_sensitive=False, attribute=None). */
BUILTIN(f_sort)
{
    JList *l;
    JValue *keys;
    if (jv_iterate(c, v, &l) < 0 || item_keys(c, l, p[2], arg_truthy(p[1], 0), 1, &keys) < 0) return -1;
    return sort_by(c, l->items, keys, l->n, arg_truthy(p[0], 0), out);
}

/* unique(case_sensitive=False, attribute=None): the first of each key. */
BUILTIN(f_unique)
{
    JList *l;
    JValue *keys;
    if (jv_iterate(c, v, &l) < 0 || item_keys(c, l, p[1], arg_truthy(p[0], 0), 0, &keys) < 0 ||
        generator(c, 4, out) < 0)
        return -1;
    for (uint32_t i = 0; i < l->n; i++) {
        uint32_t k = 0;
        while (k < i && !jv_equal(keys[k], keys[i])) k++;
        if (k == i && push(c, out, l->items[i]) < 0) return -1;
    }
    return 0;
}

/* min/max(case_sensitive=False, attribute=None): the first smallest/largest. */
static int min_max(JCtx *c, JValue v, const JValue *const *p, int max, JValue *out)
{
    JList *l;
    JValue *keys;
    if (jv_iterate(c, v, &l) < 0 || item_keys(c, l, p[1], arg_truthy(p[0], 0), 0, &keys) < 0) return -1;
    if (!l->n) {
        *out = jv_undefined(NULL, 0);
        return 0;
    }
    uint32_t best = 0;
    for (uint32_t i = 1; i < l->n; i++) {
        int r = max ? jv_less(c, keys[best], keys[i], NULL) : jv_less(c, keys[i], keys[best], NULL);
        if (r < 0) return -1;
        if (r) best = i;
    }
    *out = l->items[best];
    return 0;
}

BUILTIN(f_min) { return min_max(c, v, p, 0, out); }
BUILTIN(f_max) { return min_max(c, v, p, 1, out); }

/* sum(attribute=None, start=0). */
BUILTIN(f_sum)
{
    JList *l;
    *out = p[1] ? *p[1] : jv_int(0);
    if (jv_iterate(c, v, &l) < 0) return -1;
    for (uint32_t i = 0; i < l->n; i++) {
        JValue x = l->items[i];
        if ((p[0] && attr_get(c, x, *p[0], NULL, &x) < 0) || jv_binary(c, "+", *out, x, out) < 0) return -1;
    }
    return 0;
}

BUILTIN(f_reverse)
{
    if (v.type == JV_STRING) {
        JValue step = jv_int(-1);
        return jv_slice(c, v, NULL, NULL, &step, out);
    }
    if (f_list(c, v, p, a, out) < 0) return -1;
    reverse_items(out->u.list->items, out->u.list->n);
    out->flags = JF_GENERATOR; /* reversed(): an iterator */
    return 0;
}

/* indent(width=4, first=False, blank=False), jinja2 3.1. */
BUILTIN(f_indent)
{
    JValue ind = jv_str("    ", 4), lines;
    if (v.type == JV_UNDEFINED) return undefined(c, v); /* jinja2 adds "\n" to it */
    if (p[0] && p[0]->type == JV_STRING) {
        ind = *p[0];
    } else if (p[0]) {
        JValue sp = jv_str(" ", 1);
        if (p[0]->type != JV_INT && p[0]->type != JV_BOOL) return type_error(c, "indent width", *p[0]);
        if (jv_binary(c, "*", sp, *p[0], &ind) < 0) return -1;
    }
    JBuf b, s;
    jbuf_init(&b, c);
    jbuf_init(&s, c);
    if (str_of(c, v, &v) < 0 || jbuf_put(&s, v.u.s, v.len) < 0 || jbuf_put(&s, "\n", 1) < 0 ||
        splitlines(c, jbuf_value(&s), &lines) < 0 || jbuf_put(&b, "", 0) < 0)
        return -1;
    if (arg_truthy(p[1], 0) && jbuf_put(&b, ind.u.s, ind.len) < 0) return -1;
    for (uint32_t i = 0; i < lines.u.list->n; i++) {
        JValue x = lines.u.list->items[i];
        if ((i && jbuf_put(&b, "\n", 1) < 0) || (i && (x.len || arg_truthy(p[2], 0)) && jbuf_put(&b, ind.u.s, ind.len) < 0) ||
            jbuf_put(&b, x.u.s, x.len) < 0)
            return -1;
    }
    *out = jbuf_value(&b);
    return 0;
}

/* Python's int(str): white space, a sign, digits with single underscores between. */
static int parse_int(JValue s, int64_t *out)
{
    JValue t;
    strip(NULL, s, NULL, 1, 1, &t);
    size_t i = t.len && (t.u.s[0] == '-' || t.u.s[0] == '+');
    uint64_t m = 0;
    if (i >= t.len) return -1;
    for (size_t k = i; k < t.len; k++) {
        char ch = t.u.s[k];
        if (ch == '_' && k > i && k + 1 < t.len && t.u.s[k - 1] != '_') continue;
        if (ch < '0' || ch > '9' || m > (UINT64_MAX - 9) / 10) return -1;
        m = m * 10 + (uint64_t)(ch - '0');
    }
    if (m > (uint64_t)INT64_MAX) return -1;
    *out = t.u.s[0] == '-' ? -(int64_t)m : (int64_t)m;
    return 0;
}

static int same_word(const char *s, const char *lower, size_t n) /* ASCII, any case */
{
    for (size_t i = 0; i < n; i++)
        if ((s[i] | 0x20) != lower[i]) return 0;
    return 1;
}

/* Python's float(str): a decimal number, inf, infinity or nan (any case, signed). */
static int parse_float(JValue s, double *out)
{
    JValue t;
    strip(NULL, s, NULL, 1, 1, &t);
    size_t i = t.len && (t.u.s[0] == '-' || t.u.s[0] == '+');
    double sign = t.len && t.u.s[0] == '-' ? -1 : 1;
    static const char *const words[] = {"inf", "infinity", "nan"};
    for (int w = 0; w < 3; w++)
        if (t.len - i == strlen(words[w]) && same_word(t.u.s + i, words[w], t.len - i)) {
            *out = sign * (w == 2 ? NAN : INFINITY);
            return 0;
        }
    char digits[64]; /* without the underscores allowed between digits */
    size_t n = 0;
    for (size_t k = 0; k < t.len; k++) {
        char ch = t.u.s[k];
        int between = k > 0 && k + 1 < t.len && t.u.s[k - 1] >= '0' && t.u.s[k - 1] <= '9' && t.u.s[k + 1] >= '0' &&
                      t.u.s[k + 1] <= '9';
        if (ch == '_' && between) continue;
        if (!strchr("0123456789+-.eE", ch) || !ch || n == sizeof digits) return -1;
        digits[n++] = ch;
    }
    return n && text_to_double(digits, n, out) == n ? 0 : -1;
}

/* int(default=0, base=10): a number's integer part, a string's number, else the default. */
BUILTIN(f_int)
{
    int64_t i;
    double f;
    if (v.type == JV_UNDEFINED) return undefined(c, v);
    *out = p[0] ? *p[0] : jv_int(0);
    if (v.type == JV_INT || v.type == JV_BOOL) *out = jv_int(v.u.i);
    else if (v.type == JV_STRING && parse_int(v, &i) == 0) *out = jv_int(i);
    else if ((v.type == JV_FLOAT && (f = v.u.f, 1)) || (v.type == JV_STRING && parse_float(v, &f) == 0)) {
        if (f != f || fabs(f) >= 9.2e18) return jv_fail(c, PITH_BAD_INPUT, "cannot convert float %g to integer", f);
        *out = jv_int((int64_t)f);
    }
    return 0;
}

BUILTIN(f_float)
{
    double f;
    if (v.type == JV_UNDEFINED) return undefined(c, v);
    *out = p[0] ? *p[0] : jv_float(0);
    if (v.type == JV_INT || v.type == JV_BOOL || v.type == JV_FLOAT) *out = jv_float(v.type == JV_FLOAT ? v.u.f : (double)v.u.i);
    else if (v.type == JV_STRING && parse_float(v, &f) == 0) *out = jv_float(f);
    return 0;
}

BUILTIN(f_abs)
{
    if (v.type == JV_FLOAT) *out = jv_float(fabs(v.u.f));
    else if (v.type == JV_INT || v.type == JV_BOOL) {
        if (v.u.i == INT64_MIN) return jv_fail(c, PITH_UNSUPPORTED, "integer overflow in abs");
        *out = jv_int(v.u.i < 0 ? -v.u.i : v.u.i);
    } else {
        return jv_fail(c, PITH_BAD_INPUT, "bad operand type for abs(): '%s'", jv_type_name(v));
    }
    return 0;
}

/* round(precision=0, method='common'): Python's round (half to even on the
 * exact value: printf's rounding); ceil and floor as value * 10**p / 10**p. */
BUILTIN(f_round)
{
    int64_t prec;
    int method = 0;
    static const char *const methods[] = {"common", "ceil", "floor"};
    if (want_int(c, p[0], 0, "round precision", &prec) < 0) return -1;
    if (p[1]) {
        while (method < 3 && !(p[1]->type == JV_STRING && p[1]->len == strlen(methods[method]) &&
                               !memcmp(p[1]->u.s, methods[method], p[1]->len)))
            method++;
        if (method == 3) return jv_fail(c, PITH_BAD_INPUT, "method must be common, ceil or floor");
    }
    if (!(v.type == JV_INT || v.type == JV_BOOL || v.type == JV_FLOAT)) return type_error(c, "round", v);
    if (prec < -300 || prec > 300) return jv_fail(c, PITH_UNSUPPORTED, "round: precision %lld", (long long)prec);
    double x = v.type == JV_FLOAT ? v.u.f : (double)v.u.i, scale = jv_pow10((int)prec);
    if (method) {
        *out = jv_float((method == 1 ? ceil(x * scale) : floor(x * scale)) / scale);
        return 0;
    }
    if (v.type != JV_FLOAT && prec >= 0) {
        *out = jv_int(v.u.i);
        return 0;
    }
    if (prec >= 0) {
        char t[400];
        int n = snprintf(t, sizeof t, "%.*f", (int)prec, x);
        if (isfinite(x) && n > 0 && n < (int)sizeof t) text_to_double(t, (size_t)n, &x);
    } else {
        double y = x / jv_pow10((int)-prec), r = nearbyint(y);
        x = r * jv_pow10((int)-prec);
    }
    *out = v.type == JV_FLOAT ? jv_float(x) : jv_int((int64_t)x);
    return 0;
}

BUILTIN(f_wordcount)
{
    int64_t n = 0, in_word = 0;
    if (str_of(c, v, &v) < 0) return -1;
    for (size_t i = 0; i < v.len;) {
        uint32_t cp;
        i += (size_t)next_cp(v.u.s, v.len, i, &cp);
        int w = cp == '_' || unicode_class(cp) == UCLASS_LETTER || unicode_class(cp) == UCLASS_NUMBER;
        n += w && !in_word;
        in_word = w;
    }
    *out = jv_int(n);
    return 0;
}

/* batch(linecount, fill_with=None): lists of linecount items, the last filled up. */
BUILTIN(f_batch)
{
    JList *l;
    int64_t size;
    JValue row = jv_none();
    if (want_int(c, p[0], 0, "batch", &size) < 0 || jv_iterate(c, v, &l) < 0 || generator(c, 4, out) < 0) return -1;
    if (size <= 0) return jv_fail(c, PITH_BAD_INPUT, "batch size must be positive");
    for (uint32_t i = 0; i < l->n; i++) {
        if (i % size == 0 && (jv_list_new(c, (uint32_t)(size < 64 ? size : 64), &row) < 0 || push(c, out, row) < 0)) return -1;
        if (push(c, &row, l->items[i]) < 0) return -1;
    }
    if (p[1] && row.type == JV_LIST)
        while (row.u.list->n < size)
            if (push(c, &row, *p[1]) < 0) return -1;
    return 0;
}

/* str.center(width): Python puts the odd space on the left when width is odd. */
static int center(JCtx *c, JValue s, int64_t width, JValue *out)
{
    int64_t n = (int64_t)jv_str_chars(s.u.s, s.len), marg = width - n;
    if (marg <= 0) {
        *out = s;
        return 0;
    }
    int64_t left = marg / 2 + (marg & width & 1);
    JBuf b;
    jbuf_init(&b, c);
    for (int64_t i = 0; i < marg; i++)
        if ((i == left && jbuf_put(&b, s.u.s, s.len) < 0) || jbuf_put(&b, " ", 1) < 0) return -1;
    if (left == marg && jbuf_put(&b, s.u.s, s.len) < 0) return -1;
    *out = jbuf_value(&b);
    return 0;
}

BUILTIN(f_center)
{
    int64_t w;
    return str_of(c, v, &v) < 0 || want_int(c, p[0], 80, "center", &w) < 0 ? -1 : center(c, v, w, out);
}

/* truncate(length=255, killwords=False, end='...', leeway=5). */
BUILTIN(f_truncate)
{
    int64_t len, leeway;
    JValue end = jv_str("...", 3), cut, step = jv_int(1);
    if (str_of(c, v, &v) < 0 || want_int(c, p[0], 255, "truncate", &len) < 0 ||
        want_int(c, p[3], 5, "truncate", &leeway) < 0 || (p[2] && str_of(c, *p[2], &end) < 0))
        return -1;
    int64_t n = (int64_t)jv_str_chars(v.u.s, v.len), endn = (int64_t)jv_str_chars(end.u.s, end.len);
    if (len < endn || leeway < 0) return jv_fail(c, PITH_BAD_INPUT, "truncate: expected length >= %lld", (long long)endn);
    if (n <= len + leeway) {
        *out = v;
        return 0;
    }
    JValue stop = jv_int(len - endn);
    if (jv_slice(c, v, NULL, &stop, &step, &cut) < 0) return -1;
    if (!arg_truthy(p[1], 0)) {
        int64_t at = find_in(cut.u.s, 0, cut.len, jv_str(" ", 1), 1);
        if (at >= 0) cut.len = (uint32_t)at;
    }
    return jv_binary(c, "+", cut, end, out);
}

/* format(*args, **kw): value % args (or % kw). */
BUILTIN(f_format)
{
    JValue args;
    if (a->n_pos && a->n_kw) return jv_fail(c, PITH_BAD_INPUT, "can't handle positional and keyword arguments at the same time");
    if (a->n_kw) {
        if (jv_dict_new(c, (uint32_t)a->n_kw, &args) < 0) return -1;
        for (int k = 0; k < a->n_kw; k++)
            if (jv_dict_set(c, args.u.dict, jv_str(a->kw_names[k], strlen(a->kw_names[k])), a->kw[k]) < 0) return -1;
    } else {
        if (jv_list_new(c, (uint32_t)a->n_pos, &args) < 0) return -1;
        if (a->n_pos) memcpy(args.u.list->items, a->pos, (size_t)a->n_pos * sizeof(JValue));
        args.u.list->n = (uint32_t)a->n_pos;
        args.flags = JF_TUPLE;
    }
    return str_of(c, v, &v) < 0 ? -1 : jv_binary(c, "%", v, args, out);
}

/* escape: markupsafe's escape, a Markup; Markup('') + str escapes the str (a Markup stays as it is). */
BUILTIN(f_escape)
{
    JValue empty = jv_str("", 0);
    empty.flags = JF_MARKUP;
    return str_of(c, v, &v) < 0 ? -1 : jv_binary(c, "+", empty, v, out);
}

/* attr(name): the attribute only (a dict's key is not one), as jinja2's environment.getattr. */
BUILTIN(f_attr)
{
    if (!p[0] || p[0]->type != JV_STRING) return jv_fail(c, PITH_BAD_INPUT, "attr takes an attribute name");
    if (v.type == JV_DICT && !(v.flags & JF_NAMESPACE)) {
        int r = jb_method(c, v, p[0]->u.s, p[0]->len, out);
        if (r <= 0) return r;
        *out = jv_undefined(p[0]->u.s, p[0]->len);
        return 0;
    }
    return jv_getattr(c, v, p[0]->u.s, p[0]->len, out);
}

static const Builtin filters[] = {
    {"tojson", "ensure_ascii indent separators sort_keys", f_tojson, 0},
    {"string", "", f_string, 0},
    {"upper", "", f_upper, 0},
    {"lower", "", f_lower, 0},
    {"capitalize", "", f_capitalize, 0},
    {"title", "", f_title, 0},
    {"trim", "chars", f_trim, 0},
    {"replace", "old new count", f_replace, 0},
    {"safe", "", f_safe, 0},
    {"length", "", f_length, 0},
    {"count", "", f_length, 0},
    {"default", "default_value boolean", f_default, 0},
    {"d", "default_value boolean", f_default, 0},
    {"list", "", f_list, 0},
    {"first", "", f_first, 0},
    {"last", "", f_last, 0},
    {"join", "d attribute", f_join, 0},
    {"map", "*", f_map, 0},
    {"select", "*", f_select, 0},
    {"reject", "*", f_reject, 0},
    {"selectattr", "*", f_selectattr, 0},
    {"rejectattr", "*", f_rejectattr, 0},
    {"items", "", f_items, 0},
    {"dictsort", "case_sensitive by reverse", f_dictsort, 0},
    {"sort", "reverse case_sensitive attribute", f_sort, 0},
    {"unique", "case_sensitive attribute", f_unique, 0},
    {"min", "case_sensitive attribute", f_min, 0},
    {"max", "case_sensitive attribute", f_max, 0},
    {"sum", "attribute start", f_sum, 0},
    {"reverse", "", f_reverse, 0},
    {"indent", "width first blank", f_indent, 0},
    {"int", "default base", f_int, 0},
    {"float", "default", f_float, 0},
    {"abs", "", f_abs, 0},
    {"round", "precision method", f_round, 0},
    {"wordcount", "", f_wordcount, 0},
    {"batch", "linecount fill_with", f_batch, 0},
    {"center", "width", f_center, 0},
    {"truncate", "length killwords end leeway", f_truncate, 0},
    {"format", "*", f_format, 0},
    {"escape", "", f_escape, 0},
    {"attr", "name", f_attr, 0},
    {"e", "", f_escape, 0},
};

/* ---- tests ------------------------------------------------------------------------ */

static int is(JValue *out, int b)
{
    *out = jv_bool(b);
    return 0;
}

static int compare_test(JCtx *c, const char *op, JValue v, const JValue *other, JValue *out)
{
    if (!other) return jv_fail(c, PITH_BAD_INPUT, "test '%s' needs a value to compare with", op);
    return jv_binary(c, op, v, *other, out);
}

BUILTIN(t_defined) { return is(out, v.type != JV_UNDEFINED); }
BUILTIN(t_undefined) { return is(out, v.type == JV_UNDEFINED); }
BUILTIN(t_none) { return is(out, v.type == JV_NONE); }
BUILTIN(t_boolean) { return is(out, v.type == JV_BOOL); }
BUILTIN(t_true) { return is(out, v.type == JV_BOOL && v.u.i); }
BUILTIN(t_false) { return is(out, v.type == JV_BOOL && !v.u.i); }
BUILTIN(t_integer) { return is(out, v.type == JV_INT); }
BUILTIN(t_float) { return is(out, v.type == JV_FLOAT); }
BUILTIN(t_number) { return is(out, v.type == JV_INT || v.type == JV_BOOL || v.type == JV_FLOAT); }
BUILTIN(t_string) { return is(out, v.type == JV_STRING); }
BUILTIN(t_mapping) { return is(out, v.type == JV_DICT && !(v.flags & JF_NAMESPACE)); }
/* iterable and sequence (has len() and []): str, list, tuple, dict, and Undefined (it defines both) */
BUILTIN(t_iterable)
{
    return is(out, v.type == JV_STRING || v.type == JV_LIST || v.type == JV_UNDEFINED ||
                       (v.type == JV_DICT && !(v.flags & JF_NAMESPACE)));
}
BUILTIN(t_sequence)
{
    return v.flags & JF_GENERATOR ? is(out, 0) : t_iterable(c, v, p, a, out);
}
BUILTIN(t_callable) { return is(out, v.type == JV_FUNC); }
BUILTIN(t_eq) { return compare_test(c, "==", v, p[0], out); }
BUILTIN(t_ne) { return compare_test(c, "!=", v, p[0], out); }
BUILTIN(t_lt) { return compare_test(c, "<", v, p[0], out); }
BUILTIN(t_le) { return compare_test(c, "<=", v, p[0], out); }
BUILTIN(t_gt) { return compare_test(c, ">", v, p[0], out); }
BUILTIN(t_ge) { return compare_test(c, ">=", v, p[0], out); }
BUILTIN(t_in) { return compare_test(c, "in", v, p[0], out); }

BUILTIN(t_divisibleby)
{
    JValue r;
    if (!p[0]) return jv_fail(c, PITH_BAD_INPUT, "test 'divisibleby' needs a number");
    return jv_binary(c, "%", v, *p[0], &r) < 0 ? -1 : is(out, !jv_truthy(r));
}

static int parity(JCtx *c, JValue v, int odd, JValue *out)
{
    JValue two = jv_int(2), r;
    return jv_binary(c, "%", v, two, &r) < 0 ? -1 : is(out, jv_truthy(r) == odd);
}

BUILTIN(t_even) { return parity(c, v, 0, out); }
BUILTIN(t_odd) { return parity(c, v, 1, out); }

/* Python's "is": the same list or dict; scalars by type and value. */
BUILTIN(t_sameas)
{
    if (!p[0]) return jv_fail(c, PITH_BAD_INPUT, "test 'sameas' needs a value");
    JValue o = *p[0];
    if (v.type != o.type) return is(out, 0);
    if (v.type == JV_LIST || v.type == JV_DICT || v.type == JV_FUNC) return is(out, v.u.list == o.u.list);
    return is(out, jv_equal(v, o));
}

/* str.islower() / isupper(): some cased character, none of the other case. */
static int case_test(JCtx *c, JValue v, int upper, JValue *out)
{
    int any = 0, other = 0;
    if (str_of(c, v, &v) < 0) return -1;
    for (size_t i = 0; i < v.len;) {
        uint32_t cp;
        i += (size_t)next_cp(v.u.s, v.len, i, &cp);
        any |= cased(cp);
        other |= case_map(cp, upper) != cp; /* upper-case test: a letter upper() changes */
    }
    return is(out, any && !other);
}

BUILTIN(t_escaped) { return is(out, v.type == JV_STRING && (v.flags & JF_MARKUP)); }
/* "filter" / "test": the name of one (the tables are below). */
static int known(JValue v, int tests_table);
BUILTIN(t_filter) { return is(out, known(v, 0)); }
BUILTIN(t_test) { return is(out, known(v, 1)); }
BUILTIN(t_lower) { return case_test(c, v, 0, out); }
BUILTIN(t_upper) { return case_test(c, v, 1, out); }

static const Builtin tests[] = {
    {"defined", "", t_defined, 0},        {"undefined", "", t_undefined, 0},  {"none", "", t_none, 0},
    {"boolean", "", t_boolean, 0},        {"true", "", t_true, 0},            {"false", "", t_false, 0},
    {"integer", "", t_integer, 0},        {"float", "", t_float, 0},          {"number", "", t_number, 0},
    {"string", "", t_string, 0},          {"mapping", "", t_mapping, 0},      {"iterable", "", t_iterable, 0},
    {"sequence", "", t_sequence, 0},      {"callable", "", t_callable, 0},    {"eq", "b", t_eq, 0},
    {"equalto", "b", t_eq, 0},            {"==", "b", t_eq, 0},               {"ne", "b", t_ne, 0},
    {"!=", "b", t_ne, 0},                 {"lt", "b", t_lt, 0},               {"lessthan", "b", t_lt, 0},
    {"<", "b", t_lt, 0},                  {"le", "b", t_le, 0},               {"<=", "b", t_le, 0},
    {"gt", "b", t_gt, 0},                 {"greaterthan", "b", t_gt, 0},      {">", "b", t_gt, 0},
    {"ge", "b", t_ge, 0},                 {">=", "b", t_ge, 0},               {"in", "seq", t_in, 0},
    {"divisibleby", "num", t_divisibleby, 0}, {"even", "", t_even, 0},        {"odd", "", t_odd, 0},
    {"sameas", "other", t_sameas, 0},     {"lower", "", t_lower, 0},          {"upper", "", t_upper, 0},
    {"escaped", "", t_escaped, 0},        {"filter", "", t_filter, 0},        {"test", "", t_test, 0},
};

/* ---- methods ------------------------------------------------------------------------ */

/* startswith/endswith(prefix or tuple of them, start, end). */
static int affix(JCtx *c, JValue s, const JValue *const *p, int end, JValue *out)
{
    JValue one = p[0] ? *p[0] : jv_none(), step = jv_int(1);
    const JValue *list = &one;
    uint32_t n = 1;
    if (one.type == JV_LIST && (one.flags & JF_TUPLE)) {
        list = one.u.list->items;
        n = one.u.list->n;
    } else if (one.type != JV_STRING) {
        return jv_fail(c, PITH_BAD_INPUT, "%s first arg must be str or a tuple of str, not %s",
                       end ? "endswith" : "startswith", jv_type_name(one));
    }
    if ((p[1] || p[2]) && jv_slice(c, s, p[1], p[2], &step, &s) < 0) return -1;
    for (uint32_t i = 0; i < n; i++) {
        if (list[i].type != JV_STRING) return type_error(c, end ? "endswith" : "startswith", list[i]);
        if (list[i].len <= s.len && !memcmp(s.u.s + (end ? s.len - list[i].len : 0), list[i].u.s, list[i].len))
            return is(out, 1);
    }
    return is(out, 0);
}

BUILTIN(m_startswith) { return affix(c, v, p, 0, out); }
BUILTIN(m_endswith) { return affix(c, v, p, 1, out); }
BUILTIN(m_strip) { return strip(c, v, p[0], 1, 1, out); }
BUILTIN(m_lstrip) { return strip(c, v, p[0], 1, 0, out); }
BUILTIN(m_rstrip) { return strip(c, v, p[0], 0, 1, out); }
BUILTIN(m_split) { return split(c, v, p[0], p[1], 0, out); }
BUILTIN(m_rsplit) { return split(c, v, p[0], p[1], 1, out); }
BUILTIN(m_splitlines) { return splitlines(c, v, out); }
BUILTIN(m_replace) { return replace(c, v, p[0], p[1], p[2], out); }
BUILTIN(m_upper) { return recase(c, v, CASE_UPPER, out); }
BUILTIN(m_lower) { return recase(c, v, CASE_LOWER, out); }
BUILTIN(m_title) { return recase(c, v, CASE_TITLE, out); }
BUILTIN(m_capitalize) { return recase(c, v, CASE_CAPITALIZE, out); }

/* find/rfind/index/rindex(sub): the code point index, or -1 (index: ValueError). */
static int find_sub(JCtx *c, JValue s, const JValue *sub, int right, int raise, JValue *out)
{
    if (!sub || sub->type != JV_STRING) return jv_fail(c, PITH_BAD_INPUT, "must be str, not %s", sub ? jv_type_name(*sub) : "nothing");
    int64_t at = find_in(s.u.s, 0, s.len, *sub, right);
    if (at < 0 && raise) return jv_fail(c, PITH_BAD_INPUT, "substring not found");
    *out = jv_int(at < 0 ? -1 : (int64_t)jv_str_chars(s.u.s, (size_t)at));
    return 0;
}

BUILTIN(m_find) { return find_sub(c, v, p[0], 0, 0, out); }
BUILTIN(m_rfind) { return find_sub(c, v, p[0], 1, 0, out); }
BUILTIN(m_index) { return find_sub(c, v, p[0], 0, 1, out); }
BUILTIN(m_rindex) { return find_sub(c, v, p[0], 1, 1, out); }

BUILTIN(m_count)
{
    if (want_str(c, p[0], "count") < 0) return -1;
    if (!p[0]) return jv_fail(c, PITH_BAD_INPUT, "count() takes one argument");
    if (!p[0]->len) return is(out, 0) < 0 ? -1 : (*out = jv_int((int64_t)jv_str_chars(v.u.s, v.len) + 1), 0);
    int64_t n = 0, at;
    for (size_t i = 0; (at = find_in(v.u.s, i, v.len, *p[0], 0)) >= 0; i = (size_t)at + p[0]->len) n++;
    *out = jv_int(n);
    return 0;
}

/* str.isdigit() and the others: non-empty, every character of the class. */
static int str_class(JValue s, int (*in)(uint32_t), JValue *out)
{
    int all = s.len > 0;
    for (size_t i = 0; i < s.len && all;) {
        uint32_t cp;
        i += (size_t)next_cp(s.u.s, s.len, i, &cp);
        all = in(cp);
    }
    return is(out, all);
}

static int is_digit_cp(uint32_t cp) { return unicode_class(cp) == UCLASS_NUMBER; }
static int is_alpha_cp(uint32_t cp) { return unicode_class(cp) == UCLASS_LETTER; }
static int is_alnum_cp(uint32_t cp) { return is_digit_cp(cp) || is_alpha_cp(cp); }

BUILTIN(m_isdigit) { return str_class(v, is_digit_cp, out); }
BUILTIN(m_isalpha) { return str_class(v, is_alpha_cp, out); }
BUILTIN(m_isalnum) { return str_class(v, is_alnum_cp, out); }
BUILTIN(m_isspace) { return str_class(v, py_space, out); }
BUILTIN(m_islower) { return case_test(c, v, 0, out); }
BUILTIN(m_isupper) { return case_test(c, v, 1, out); }

BUILTIN(m_center)
{
    int64_t w;
    if (!p[0]) return jv_fail(c, PITH_BAD_INPUT, "center() takes a width");
    return want_int(c, p[0], 0, "center", &w) < 0 ? -1 : center(c, v, w, out);
}

BUILTIN(m_zfill)
{
    int64_t w, n = (int64_t)jv_str_chars(v.u.s, v.len);
    if (want_int(c, p[0], 0, "zfill", &w) < 0) return -1;
    JBuf b;
    jbuf_init(&b, c);
    size_t sign = v.len && (v.u.s[0] == '-' || v.u.s[0] == '+');
    if (jbuf_put(&b, v.u.s, sign) < 0) return -1;
    for (int64_t i = n; i < w; i++)
        if (jbuf_put(&b, "0", 1) < 0) return -1;
    if (jbuf_put(&b, v.u.s + sign, v.len - sign) < 0) return -1;
    *out = jbuf_value(&b);
    return 0;
}

/* sep.join(iterable of str). */
BUILTIN(m_join)
{
    JList *l;
    if (!p[0]) return jv_fail(c, PITH_BAD_INPUT, "join() takes one argument");
    if (jv_iterate(c, *p[0], &l) < 0) return -1;
    JBuf b;
    jbuf_init(&b, c);
    if (jbuf_put(&b, "", 0) < 0) return -1;
    for (uint32_t i = 0; i < l->n; i++) {
        JValue x = l->items[i];
        if (x.type != JV_STRING)
            return jv_fail(c, PITH_BAD_INPUT, "sequence item %u: expected str instance, %s found", i, jv_type_name(x));
        if ((i && jbuf_put(&b, v.u.s, v.len) < 0) || jbuf_put(&b, x.u.s, x.len) < 0) return -1;
    }
    *out = jbuf_value(&b);
    return 0;
}

/* Python's format(value, spec) for the common specs: [[fill]align][sign][0][width][.precision][type]. */
static int format_spec(JCtx *c, JBuf *b, JValue v, const char *spec, size_t n)
{
    char fill = ' ', align = 0, sign = '-', type = 0, t[400];
    size_t i = 0;
    int64_t width = 0, prec = -1;
    if (n >= 2 && strchr("<>=^", spec[1])) fill = spec[0], align = spec[1], i = 2;
    else if (n >= 1 && strchr("<>=^", spec[0])) align = spec[0], i = 1;
    if (i < n && strchr("+- ", spec[i])) sign = spec[i++];
    if (i < n && spec[i] == '0') {
        if (!align) fill = '0', align = '=';
        i++;
    }
    for (; i < n && spec[i] >= '0' && spec[i] <= '9' && width < 1000; i++) width = width * 10 + spec[i] - '0';
    if (i < n && spec[i] == '.')
        for (prec = 0, i++; i < n && spec[i] >= '0' && spec[i] <= '9' && prec < 100; i++) prec = prec * 10 + spec[i] - '0';
    if (i < n) type = spec[i++];
    if (i < n || width >= 1000 || prec >= 100) return jv_fail(c, PITH_UNSUPPORTED, "format spec '%.*s'", (int)n, spec);
    JValue body;
    int num = v.type == JV_INT || v.type == JV_FLOAT || (v.type == JV_BOOL && n); /* format(True, '') is 'True' */
    if (!num || type == 's') {
        if (type && type != 's') return jv_fail(c, PITH_BAD_INPUT, "Unknown format code '%c' for object of type '%s'", type, jv_type_name(v));
        JValue stop = jv_int(prec), step = jv_int(1);
        if (str_of(c, v, &body) < 0 || (prec >= 0 && jv_slice(c, body, NULL, &stop, &step, &body) < 0)) return -1;
        if (!align) align = '<';
    } else {
        double x = v.type == JV_FLOAT ? v.u.f : (double)v.u.i;
        int len;
        char f[16] = "%";
        if (sign != '-') f[1] = sign;
        if (!type && v.type == JV_FLOAT && prec < 0) len = (int)jv_float_repr(x, t + (sign != '-' && x >= 0)), t[0] = sign != '-' && x >= 0 ? sign : t[0], len += sign != '-' && x >= 0;
        else if (strchr("dxXob", type ? type : 'd') && v.type != JV_FLOAT && type != 'b')
            len = snprintf(t, sizeof t, type == 'x' ? "%s%llx" : type == 'X' ? "%s%llX" : type == 'o' ? "%s%llo" : "%s%llu",
                           v.u.i < 0 ? "-" : sign == '-' ? "" : (char[]){sign, 0}, (unsigned long long)(v.u.i < 0 ? -(uint64_t)v.u.i : (uint64_t)v.u.i));
        else if (strchr("eEfFgG%", type ? type : 'g')) {
            strcat(f, ".*");
            strncat(f, type == '%' ? "f" : type ? (char[]){type, 0} : "g", 2);
            len = snprintf(t, sizeof t, f, (int)(prec < 0 ? 6 : prec), type == '%' ? x * 100 : x);
            if (type == '%' && len < (int)sizeof t - 1) t[len++] = '%';
        } else {
            return jv_fail(c, PITH_BAD_INPUT, "Unknown format code '%c' for object of type '%s'", type, jv_type_name(v));
        }
        if (len < 0 || len >= (int)sizeof t) return jv_fail(c, PITH_UNSUPPORTED, "a formatted number too long");
        body = jv_str(t, (size_t)len);
        if (!align) align = '>';
    }
    int64_t pad = width - (int64_t)jv_str_chars(body.u.s, body.len);
    int64_t left = pad <= 0 ? 0 : align == '<' ? 0 : align == '^' ? pad / 2 : pad;
    size_t signlen = align == '=' && body.len && strchr("+- ", body.u.s[0]) ? 1 : 0;
    if (jbuf_put(b, body.u.s, signlen) < 0) return -1;
    for (int64_t k = 0; k < left; k++)
        if (jbuf_put(b, &fill, 1) < 0) return -1;
    if (jbuf_put(b, body.u.s + signlen, body.len - signlen) < 0) return -1;
    for (int64_t k = left; k < pad; k++)
        if (jbuf_put(b, &fill, 1) < 0) return -1;
    return 0;
}

/* str.format: {} {0} {name}, then .attr and [key] parts, !r/!s, :spec; {{ and }}. */
BUILTIN(m_format)
{
    JBuf b;
    jbuf_init(&b, c);
    const char *s = v.u.s;
    size_t n = v.len, i = 0;
    int next = 0, mode = 0; /* 1: automatic numbering, 2: manual */
    if (jbuf_put(&b, "", 0) < 0) return -1;
    while (i < n) {
        if ((s[i] == '{' || s[i] == '}') && i + 1 < n && s[i + 1] == s[i]) {
            if (jbuf_put(&b, s + i, 1) < 0) return -1;
            i += 2;
            continue;
        }
        if (s[i] == '}') return jv_fail(c, PITH_BAD_INPUT, "Single '}' encountered in format string");
        if (s[i] != '{') {
            if (jbuf_put(&b, s + i++, 1) < 0) return -1;
            continue;
        }
        size_t f = ++i, e = i;
        while (e < n && s[e] != '}') e++;
        if (e >= n) return jv_fail(c, PITH_BAD_INPUT, "Single '{' encountered in format string");
        size_t k = f;
        while (k < e && !strchr(".[!:", s[k])) k++;
        JValue x;
        size_t digits = 0;
        while (f + digits < k && s[f + digits] >= '0' && s[f + digits] <= '9') digits++;
        if (k == f || digits == k - f) {
            int64_t ix = 0;
            for (size_t d = f; d < k && ix < 1000000; d++) ix = ix * 10 + (s[d] - '0');
            if (k == f) ix = next++;
            if (mode && mode != (k == f ? 1 : 2))
                return jv_fail(c, PITH_BAD_INPUT, "cannot switch between automatic and manual field numbering");
            mode = k == f ? 1 : 2;
            if (ix >= a->n_pos) return jv_fail(c, PITH_BAD_INPUT, "Replacement index %lld out of range for positional args tuple", (long long)ix);
            x = a->pos[ix];
        } else {
            int kw = 0;
            while (kw < a->n_kw && !(strlen(a->kw_names[kw]) == k - f && !memcmp(a->kw_names[kw], s + f, k - f))) kw++;
            if (kw == a->n_kw) return jv_fail(c, PITH_BAD_INPUT, "KeyError: '%.*s'", (int)(k - f), s + f);
            x = a->kw[kw];
        }
        while (k < e && (s[k] == '.' || s[k] == '[')) {
            size_t q = ++k;
            while (k < e && !strchr(".[]!:", s[k])) k++;
            JValue key = jv_str(s + q, k - q);
            int64_t ix;
            if (s[q - 1] == '[' && parse_int(key, &ix) == 0) key = jv_int(ix);
            if ((s[q - 1] == '.' ? jv_getattr(c, x, s + q, k - q, &x) : jv_getitem(c, x, key, &x)) < 0) return -1;
            k += k < e && s[k] == ']';
        }
        JValue shown = x;
        if (k + 1 < e && s[k] == '!') {
            JBuf r;
            jbuf_init(&r, c);
            if ((s[k + 1] == 's' ? jv_write_str(&r, x) : jv_write_repr(&r, x)) < 0) return -1;
            shown = jbuf_value(&r);
            k += 2;
        }
        if (k < e && s[k] != ':') return jv_fail(c, PITH_BAD_INPUT, "bad format field '%.*s'", (int)(e - f), s + f);
        if (format_spec(c, &b, shown, s + k + (k < e), e - k - (k < e)) < 0) return -1;
        i = e + 1;
    }
    *out = jbuf_value(&b);
    return 0;
}

BUILTIN(m_items) { return pairs(c, v, out); }

static int dict_part(JCtx *c, const JDict *d, int values, JValue *out)
{
    if (jv_list_new(c, d->n, out) < 0) return -1;
    if (d->n) memcpy(out->u.list->items, values ? d->values : d->keys, (size_t)d->n * sizeof(JValue));
    out->u.list->n = d->n;
    return 0;
}

BUILTIN(m_keys) { return dict_part(c, v.u.dict, 0, out); }
BUILTIN(m_values) { return dict_part(c, v.u.dict, 1, out); }

BUILTIN(m_get)
{
    if (!p[0]) return jv_fail(c, PITH_BAD_INPUT, "get expected at least 1 argument, got 0");
    for (uint32_t i = 0; i < v.u.dict->n; i++)
        if (jv_equal(v.u.dict->keys[i], *p[0])) {
            *out = v.u.dict->values[i];
            return 0;
        }
    *out = p[1] ? *p[1] : jv_none();
    return 0;
}

BUILTIN(m_dict_copy)
{
    if (jv_dict_new(c, v.u.dict->n, out) < 0) return -1;
    for (uint32_t i = 0; i < v.u.dict->n; i++)
        if (jv_dict_set(c, out->u.dict, v.u.dict->keys[i], v.u.dict->values[i]) < 0) return -1;
    return 0;
}

BUILTIN(m_list_copy)
{
    return jv_binary(c, "*", v, jv_int(1), out);
}

/* list.count(x) / list.index(x). */
static int list_find(JCtx *c, JValue v, const JValue *x, int count, JValue *out)
{
    int64_t n = 0;
    if (!x) return jv_fail(c, PITH_BAD_INPUT, "%s() takes exactly one argument", count ? "count" : "index");
    for (uint32_t i = 0; i < v.u.list->n; i++)
        if (jv_equal(v.u.list->items[i], *x)) {
            if (!count) return (*out = jv_int(i)), 0;
            n++;
        }
    if (!count) return jv_fail(c, PITH_BAD_INPUT, "list.index(x): x not in list");
    *out = jv_int(n);
    return 0;
}

BUILTIN(m_list_count) { return list_find(c, v, p[0], 1, out); }
BUILTIN(m_list_index) { return list_find(c, v, p[0], 0, out); }

/* fn NULL: a method ImmutableSandboxedEnvironment refuses (it changes the object). */
static const Builtin methods[] = {
    {"startswith", "prefix start end", m_startswith, JV_STRING},
    {"endswith", "suffix start end", m_endswith, JV_STRING},
    {"strip", "chars", m_strip, JV_STRING},
    {"lstrip", "chars", m_lstrip, JV_STRING},
    {"rstrip", "chars", m_rstrip, JV_STRING},
    {"split", "sep maxsplit", m_split, JV_STRING},
    {"rsplit", "sep maxsplit", m_rsplit, JV_STRING},
    {"splitlines", "", m_splitlines, JV_STRING},
    {"replace", "old new count", m_replace, JV_STRING},
    {"upper", "", m_upper, JV_STRING},
    {"lower", "", m_lower, JV_STRING},
    {"title", "", m_title, JV_STRING},
    {"capitalize", "", m_capitalize, JV_STRING},
    {"find", "sub", m_find, JV_STRING},
    {"rfind", "sub", m_rfind, JV_STRING},
    {"index", "sub", m_index, JV_STRING},
    {"rindex", "sub", m_rindex, JV_STRING},
    {"count", "sub", m_count, JV_STRING},
    {"isdigit", "", m_isdigit, JV_STRING},
    {"isalpha", "", m_isalpha, JV_STRING},
    {"isalnum", "", m_isalnum, JV_STRING},
    {"isspace", "", m_isspace, JV_STRING},
    {"islower", "", m_islower, JV_STRING},
    {"isupper", "", m_isupper, JV_STRING},
    {"center", "width", m_center, JV_STRING},
    {"zfill", "width", m_zfill, JV_STRING},
    {"join", "iterable", m_join, JV_STRING},
    {"format", "*", m_format, JV_STRING},
    {"items", "", m_items, JV_DICT},
    {"keys", "", m_keys, JV_DICT},
    {"values", "", m_values, JV_DICT},
    {"get", "key default", m_get, JV_DICT},
    {"copy", "", m_dict_copy, JV_DICT},
    {"clear", "*", NULL, JV_DICT},
    {"pop", "*", NULL, JV_DICT},
    {"popitem", "*", NULL, JV_DICT},
    {"setdefault", "*", NULL, JV_DICT},
    {"update", "*", NULL, JV_DICT},
    {"count", "x", m_list_count, JV_LIST},
    {"index", "x", m_list_index, JV_LIST},
    {"copy", "", m_list_copy, JV_LIST},
    {"append", "*", NULL, JV_LIST},
    {"clear", "*", NULL, JV_LIST},
    {"extend", "*", NULL, JV_LIST},
    {"insert", "*", NULL, JV_LIST},
    {"pop", "*", NULL, JV_LIST},
    {"remove", "*", NULL, JV_LIST},
    {"reverse", "*", NULL, JV_LIST},
    {"sort", "*", NULL, JV_LIST},
};

static int call_method(JCtx *c, const JFunc *f, const JArgs *a, JValue *out)
{
    const Builtin *r = f->data;
    const JValue *p[MAX_PARAMS];
    if (!r->fn)
        return jv_fail(c, PITH_BAD_INPUT, "access to attribute '%s' of '%s' object is unsafe.", r->name,
                       jv_type_name(f->self));
    if (bind(c, r, "method", a, p) < 0) return -1;
    return r->fn(c, f->self, p, a, out);
}

/* ---- globals --------------------------------------------------------------------------- */

BUILTIN(g_raise_exception)
{
    JValue msg = jv_str("", 0);
    if (p[0] && str_of(c, *p[0], &msg) < 0) return -1;
    return jv_fail(c, PITH_BAD_INPUT, "raise_exception: %.*s", (int)(msg.len > 250 ? 250 : msg.len), msg.u.s);
}

/* range(stop) / range(start, stop[, step]); jinja2's sandbox refuses more than 100000 items. */
BUILTIN(g_range)
{
    int64_t x[3] = {0, 0, 1};
    if (!p[0]) return jv_fail(c, PITH_BAD_INPUT, "range expected at least 1 argument, got 0");
    if (want_int(c, p[0], 0, "range", &x[0]) < 0 || want_int(c, p[1], 0, "range", &x[1]) < 0 ||
        want_int(c, p[2], 1, "range", &x[2]) < 0)
        return -1;
    if (!p[1]) x[1] = x[0], x[0] = 0;
    if (!x[2]) return jv_fail(c, PITH_BAD_INPUT, "range() arg 3 must not be zero");
    uint64_t n = 0, span = x[2] > 0 ? (uint64_t)x[1] - (uint64_t)x[0] : (uint64_t)x[0] - (uint64_t)x[1];
    if (x[2] > 0 ? x[0] < x[1] : x[0] > x[1]) n = (span - 1) / (x[2] > 0 ? (uint64_t)x[2] : 0 - (uint64_t)x[2]) + 1;
    if (n > 100000)
        return jv_fail(c, PITH_BAD_INPUT, "Range too big. The sandbox blocks ranges larger than MAX_RANGE (100000).");
    if (jv_list_new(c, (uint32_t)n, out) < 0) return -1;
    for (uint32_t i = 0; i < (uint32_t)n; i++) out->u.list->items[i] = jv_int((int64_t)((uint64_t)x[0] + i * (uint64_t)x[2]));
    out->u.list->n = (uint32_t)n;
    return 0;
}

/* dict(**kw), namespace(dict, **kw): the dict's items, then the keyword arguments. */
static int kwargs_dict(JCtx *c, const JArgs *a, int flags, JValue *out)
{
    if (a->n_pos > 1 || (a->n_pos == 1 && (a->pos[0].type != JV_DICT || (a->pos[0].flags & JF_NAMESPACE))))
        return jv_fail(c, PITH_BAD_INPUT, "%s takes one dict and keyword arguments", flags ? "namespace()" : "dict()");
    if (jv_dict_new(c, 4, out) < 0) return -1;
    out->flags = (uint8_t)flags;
    if (a->n_pos)
        for (uint32_t i = 0; i < a->pos[0].u.dict->n; i++)
            if (jv_dict_set(c, out->u.dict, a->pos[0].u.dict->keys[i], a->pos[0].u.dict->values[i]) < 0) return -1;
    for (int k = 0; k < a->n_kw; k++)
        if (jv_dict_set(c, out->u.dict, jv_str(a->kw_names[k], strlen(a->kw_names[k])), a->kw[k]) < 0) return -1;
    return 0;
}

BUILTIN(g_dict) { return kwargs_dict(c, a, 0, out); }
BUILTIN(g_namespace) { return kwargs_dict(c, a, JF_NAMESPACE, out); }

/* strftime_now(format): JCtx.now (UTC) with the C locale's names. */
static const char *const day_names[] = {"Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"};
static const char *const month_names[] = {"January", "February", "March",     "April",   "May",      "June",
                                          "July",    "August",   "September", "October", "November", "December"};
/* Composite codes, as glibc's C locale spells them. */
static const char *const composites[][2] = {{"F", "%Y-%m-%d"}, {"T", "%H:%M:%S"}, {"D", "%m/%d/%y"}, {"x", "%m/%d/%y"},
                                            {"R", "%H:%M"},    {"X", "%H:%M:%S"}, {"c", "%a %b %e %H:%M:%S %Y"}};

static int strftime_put(JBuf *b, const char *fmt, size_t n, int64_t t, int depth)
{
    int64_t days = t >= 0 ? t / 86400 : -((-t + 86399) / 86400), secs = t - days * 86400;
    /* civil from days (Howard Hinnant's algorithm) */
    int64_t z = days + 719468, era = (z >= 0 ? z : z - 146096) / 146097, doe = z - era * 146097;
    int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365, doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    int64_t mp = (5 * doy + 2) / 153, d = doy - (153 * mp + 2) / 5 + 1, m = mp < 10 ? mp + 3 : mp - 9;
    int64_t y = yoe + era * 400 + (m <= 2), wday = ((days % 7) + 10) % 7; /* 0 = Monday; 1970-01-01 was a Thursday */
    int leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    static const int before[] = {0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334};
    int64_t yday = before[m - 1] + d + (leap && m > 2), hour = secs / 3600;
    for (size_t i = 0; i < n; i++) {
        char t2[32];
        int len = -1, nopad = 0;
        if (fmt[i] != '%' || i + 1 >= n) {
            if (jbuf_put(b, fmt + i, 1) < 0) return -1;
            continue;
        }
        char k = fmt[++i];
        if (k == '-' && i + 1 < n) nopad = 1, k = fmt[++i];
        int64_t num = -1, width = 2;
        const char *word = NULL;
        switch (k) {
        case 'd': num = d; break;
        case 'e': num = d, width = nopad ? 1 : -2; break;
        case 'm': num = m; break;
        case 'Y': num = y, width = 1; break;
        case 'y': num = y % 100; break;
        case 'H': num = hour; break;
        case 'I': num = hour % 12 ? hour % 12 : 12; break;
        case 'M': num = secs / 60 % 60; break;
        case 'S': num = secs % 60; break;
        case 'j': num = yday, width = 3; break;
        case 'a': len = snprintf(t2, sizeof t2, "%.3s", day_names[wday]); break;
        case 'A': word = day_names[wday]; break;
        case 'b':
        case 'h': len = snprintf(t2, sizeof t2, "%.3s", month_names[m - 1]); break;
        case 'B': word = month_names[m - 1]; break;
        case 'p': word = hour < 12 ? "AM" : "PM"; break;
        case 'Z': word = "UTC"; break;
        case 'z': word = "+0000"; break;
        case '%': word = "%"; break;
        default:
            for (size_t q = 0; q < sizeof composites / sizeof composites[0]; q++)
                if (composites[q][0][0] == k && depth == 0) {
                    if (strftime_put(b, composites[q][1], strlen(composites[q][1]), t, 1) < 0) return -1;
                    len = 0;
                }
            if (len < 0) len = snprintf(t2, sizeof t2, "%%%s%c", nopad ? "-" : "", k);
        }
        if (num >= 0) len = snprintf(t2, sizeof t2, width < 0 ? "%*lld" : "%0*lld", nopad ? 1 : (int)(width < 0 ? -width : width), (long long)num);
        if (word ? jbuf_put(b, word, strlen(word)) < 0 : jbuf_put(b, t2, (size_t)len) < 0) return -1;
    }
    return 0;
}

BUILTIN(g_strftime_now)
{
    JBuf b;
    jbuf_init(&b, c);
    if (!p[0] || p[0]->type != JV_STRING) return jv_fail(c, PITH_BAD_INPUT, "strftime_now takes a format string");
    if (jbuf_put(&b, "", 0) < 0 || strftime_put(&b, p[0]->u.s, p[0]->len, c->now, 0) < 0) return -1;
    *out = jbuf_value(&b);
    return 0;
}

static int call_joiner(JCtx *c, const JFunc *f, const JArgs *a, JValue *out)
{
    (void)c, (void)a;
    int *used = (int *)f->data;
    *out = *used ? f->self : jv_str("", 0);
    *used = 1;
    return 0;
}

BUILTIN(g_joiner)
{
    JFunc *f = jv_alloc(c, sizeof *f);
    int *used = jv_alloc(c, sizeof *used);
    if (!f || !used) return -1;
    *used = 0;
    *f = (JFunc){call_joiner, p[0] ? *p[0] : jv_str(", ", 2), used, "joiner", 6};
    *out = (JValue){.type = JV_FUNC};
    out->u.func = f;
    return 0;
}

static const Builtin globals[] = {
    {"raise_exception", "message", g_raise_exception, 0},
    {"range", "start stop step", g_range, 0},
    {"dict", "*", g_dict, 0},
    {"namespace", "*", g_namespace, 0},
    {"strftime_now", "format", g_strftime_now, 0},
    {"joiner", "sep", g_joiner, 0},
};

/* ---- lookups ---------------------------------------------------------------------------- */

#define COUNT(t) (sizeof t / sizeof t[0])

static int known(JValue v, int tests_table)
{
    return v.type == JV_STRING &&
           (tests_table ? find(tests, COUNT(tests), v.u.s, v.len, -1) : find(filters, COUNT(filters), v.u.s, v.len, -1));
}

static int apply(JCtx *c, const Builtin *t, size_t n, const char *kind, const char *name, size_t len, JValue in,
                 const JArgs *args, JValue *out)
{
    const Builtin *r = find(t, n, name, len, -1);
    const JValue *p[MAX_PARAMS];
    if (!r) return 1;
    if (jv_step(c) < 0 || bind(c, r, kind, args, p) < 0) return -1;
    return r->fn(c, in, p, args, out) < 0 ? -1 : 0;
}

int jb_filter(JCtx *c, const char *name, size_t len, JValue in, const JArgs *args, JValue *out)
{
    return apply(c, filters, COUNT(filters), "filter", name, len, in, args, out);
}

int jb_test(JCtx *c, const char *name, size_t len, JValue in, const JArgs *args, int *result)
{
    JValue v;
    int r = apply(c, tests, COUNT(tests), "test", name, len, in, args, &v);
    if (r == 0) *result = jv_truthy(v);
    return r;
}

static int make_func(JCtx *c, const Builtin *r, JValue self, int (*call)(JCtx *, const JFunc *, const JArgs *, JValue *),
                     JValue *out)
{
    JFunc *f = jv_alloc(c, sizeof *f);
    if (!f) return -1;
    f->call = call;
    f->self = self;
    f->data = r;
    f->name = r->name;
    f->name_len = (uint32_t)strlen(r->name);
    *out = (JValue){.type = JV_FUNC};
    out->u.func = f;
    return 0;
}

static int call_global(JCtx *c, const JFunc *f, const JArgs *a, JValue *out)
{
    const Builtin *r = f->data;
    const JValue *p[MAX_PARAMS];
    if (jv_step(c) < 0 || bind(c, r, "function", a, p) < 0) return -1;
    return r->fn(c, jv_none(), p, a, out);
}

int jb_global(JCtx *c, const char *name, size_t len, JValue *out)
{
    const Builtin *r = find(globals, COUNT(globals), name, len, -1);
    return r ? make_func(c, r, jv_none(), call_global, out) : 1;
}

int jb_method(JCtx *c, JValue obj, const char *name, size_t len, JValue *out)
{
    int type = obj.type == JV_DICT && (obj.flags & JF_NAMESPACE) ? -2 : obj.type;
    const Builtin *r = type == -2 ? NULL : find(methods, COUNT(methods), name, len, type);
    return r ? make_func(c, r, obj, call_method, out) : 1;
}
