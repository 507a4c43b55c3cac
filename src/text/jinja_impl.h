/* jinja_impl.h - what the parts of the Jinja interpreter share (private to
 * src/text/jinja*.c):
 *   jinja.c           lexer, parser, evaluator, statements, scopes, macros,
 *                     loops, output and whitespace control, the public API;
 *   jinja_value.c     the work region's allocator, values and Python's
 *                     semantics of them: truth, equality, order, arithmetic,
 *                     subscripts and slices, str() and repr(), json.dumps,
 *                     JSON text to values;
 *   jinja_builtins.c  filters, tests, methods of str/dict/list, and the
 *                     global functions (range, namespace, dict,
 *                     raise_exception, strftime_now), each one row of a table.
 *
 * Strings are UTF-8 byte spans (not NUL terminated) that are never changed
 * once made; Python counts and slices them by code point. Lists and dicts
 * are shared by reference (as Python's), so list.append and a namespace's
 * attributes change what every holder sees. */
#ifndef PITH_JINJA_IMPL_H
#define PITH_JINJA_IMPL_H

#include <stddef.h>
#include <stdint.h>

#include "jinja.h"

typedef enum {
    JV_UNDEFINED = 0, /* jinja2's Undefined: prints "", false, iterates empty; u.s/len its name (may be empty) */
    JV_NONE,
    JV_BOOL,          /* u.i 0 or 1 */
    JV_INT,           /* u.i */
    JV_FLOAT,         /* u.f */
    JV_STRING,        /* u.s, len bytes */
    JV_LIST,          /* u.list (JF_TUPLE: a tuple; same behaviour, repr with parentheses) */
    JV_DICT,          /* u.dict (JF_NAMESPACE: a namespace(): attributes can be set) */
    JV_FUNC,          /* u.func: a macro, a bound method, a global function, loop.cycle... */
    JV_LOOP           /* u.loop: the loop variable of a for (jinja.c reads its attributes) */
} JType;

/* JF_GENERATOR: a list that stands for the generator jinja2's map, select,
 * reject, selectattr, rejectattr, items, unique, batch and reverse filters
 * return: iterates as the list, but is always true, has no len(), no [],
 * and tojson refuses it (as Python does). */
/* JF_MARKUP: a string the safe or escape filter made (markupsafe's Markup):
 * + and % with it HTML-escape the other, plain, strings (functionary's
 * template adds "..."|safe and a tool's description). */
enum { JF_TUPLE = 1, JF_NAMESPACE = 2, JF_GENERATOR = 4, JF_MARKUP = 8 };

typedef struct JList JList;
typedef struct JDict JDict;
typedef struct JFunc JFunc;

typedef struct {
    uint8_t type;  /* JType */
    uint8_t flags; /* JF_* */
    uint32_t len;  /* JV_STRING: bytes; JV_UNDEFINED: bytes of its name */
    union {
        int64_t i;
        double f;
        const char *s;
        JList *list;
        JDict *dict;
        JFunc *func;
        void *loop;
    } u;
} JValue;

struct JList {
    uint32_t n, cap;
    JValue *items;
};

/* Insertion-ordered; keys are compared with jv_equal (in practice strings). */
struct JDict {
    uint32_t n, cap;
    JValue *keys;
    JValue *values;
};

/* Arguments of a call, a filter or a test: positional, then keyword. */
typedef struct {
    const JValue *pos;
    int n_pos;
    const char *const *kw_names; /* NUL-terminated names */
    const JValue *kw;
    int n_kw;
} JArgs;

typedef struct JCtx JCtx;

/* A callable value. Calls go through call(c, f, args, out): jinja.c makes
 * macros (data: its node) and loop.cycle; jinja_builtins.c makes bound
 * methods (self: the object, data: the method's row) and globals. */
struct JFunc {
    int (*call)(JCtx *c, const JFunc *f, const JArgs *args, JValue *out);
    JValue self;
    const void *data;
    const char *name;
    uint32_t name_len;
};

/* One render's state. */
struct JCtx {
    uint8_t *mem;          /* the work region */
    size_t cap, used;
    JinjaLimits lim;
    uint64_t steps;
    uint32_t depth;
    int64_t now;           /* strftime_now's time, seconds since 1970 UTC */
    uint32_t line, col;    /* of the construct being evaluated, for errors */
    int failed;
    PithStatus status;
    char err[320];
    void *render;          /* jinja.c's own state (scopes, the template) */
    /* jb_method, set by jinja.c: jv_getattr reaches the methods' table
     * through it, so jinja_value.o depends on no other part */
    int (*method)(JCtx *c, JValue obj, const char *name, size_t len, JValue *out);
};

/* ---- jinja_value.c ---------------------------------------------------- */

/* n bytes (8-aligned) of the work region, or NULL after jv_fail(NO_MEMORY). */
void *jv_alloc(JCtx *c, size_t n);
/* Records the first error at the current line/col: "LINE:COL: what". Returns -1. */
int jv_fail(JCtx *c, PithStatus status, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Counts one step (a loop iteration, a call): -1 (jv_fail) past lim.max_steps. */
int jv_step(JCtx *c);

JValue jv_undefined(const char *name, size_t len);
JValue jv_none(void);
JValue jv_bool(int b);
JValue jv_int(int64_t i);
JValue jv_float(double f);
/* x ** y of floats, and 10^n as Python's float(10 ** n) (jinja_value.c). */
double jv_pow(double x, double y);
double jv_pow10(int n);
JValue jv_str(const char *s, size_t len);        /* points at s: the bytes must outlive the render */
int jv_str_copy(JCtx *c, const char *s, size_t len, JValue *out); /* copied into the region */
int jv_list_new(JCtx *c, uint32_t cap, JValue *out);
int jv_list_push(JCtx *c, JList *l, JValue v);
int jv_dict_new(JCtx *c, uint32_t cap, JValue *out);
int jv_dict_set(JCtx *c, JDict *d, JValue key, JValue v); /* replaces an equal key's value */
/* The value of key, or NULL. */
JValue *jv_dict_get(const JDict *d, const char *key, size_t len);

int jv_truthy(JValue v);
int jv_equal(JValue a, JValue b);           /* Python ==: 1 == 1.0 == True */
const char *jv_type_name(JValue v);          /* Python's: "str", "int", "dict", "NoneType", "undefined" ... */
/* Python's a < b (1 or 0; -1 after a TypeError), and a stable sort of
 * v[0..n) by a less-than such as it (Python's sort uses only <). */
typedef int (*JLessFn)(JCtx *c, JValue a, JValue b, const void *arg);
int jv_less(JCtx *c, JValue a, JValue b, const void *arg);
int jv_sort(JCtx *c, JValue *v, uint32_t n, JLessFn less, const void *arg);
/* Code points of a UTF-8 string (Python's len). */
size_t jv_str_chars(const char *s, size_t len);
/* repr(x) of a float into out (32 bytes): "1.0", "1e-05", "inf"; its length. */
size_t jv_float_repr(double x, char *out);

/* Operators, as Python and jinja2 apply them; op is the operator's text:
 * "+", "-", "*", "/", "//", "%", "**", "~", "==", "!=", "<", "<=", ">", ">=",
 * "in", "not in". A type error -> -1 with a message naming the operator.
 * Time bounded by the operands' and the result's sizes: () * 2222222222222
 * and '' * 2222222222222 are empty at once (today they loop: fuzz_jinja's
 * timeout). */
int jv_binary(JCtx *c, const char *op, JValue a, JValue b, JValue *out);
int jv_unary(JCtx *c, char op, JValue v, JValue *out); /* '-', '+', '!' (not) */
/* obj.name: a dict's key (a namespace's attribute) or a method bound to
 * obj (jinja_builtins.c's table); else Undefined named name (jinja2's
 * getattr falls back to getitem and back). */
int jv_getattr(JCtx *c, JValue obj, const char *name, size_t len, JValue *out);
/* obj[key]: list/tuple/str index (negative from the end), dict key; a
 * missing one is Undefined (jinja2 does not raise). */
int jv_getitem(JCtx *c, JValue obj, JValue key, JValue *out);
/* obj[start:stop:step] on a list or a str (code points); NULL = absent. */
int jv_slice(JCtx *c, JValue obj, const JValue *start, const JValue *stop, const JValue *step, JValue *out);
/* The items a for loop (or a filter) walks: a list's items, a dict's keys,
 * a string's characters; Undefined and None iterate empty (None raises in
 * jinja2: -1). The result may share the list's items (do not change it). */
int jv_iterate(JCtx *c, JValue v, JList **out);

/* Text output that grows in the region (the rendered text, a captured
 * block, a string built by a filter). */
typedef struct {
    JCtx *c;
    char *p;
    size_t n, cap;
} JBuf;
void jbuf_init(JBuf *b, JCtx *c);
/* -1 past lim.max_output or the region; n == 0 is 0 even on an empty buffer
 * (b->p still NULL): jinja.c and jv_binary put empty strings ("" + "a"). */
int jbuf_put(JBuf *b, const char *s, size_t n);
JValue jbuf_value(const JBuf *b);                /* the text so far as a string value */

/* str(v) as jinja2 prints {{ v }}: None -> "None", True -> "True", floats
 * as Python's repr (1.0, 1e-05), lists and dicts as their repr, Undefined
 * -> "". */
int jv_write_str(JBuf *b, JValue v);
/* repr(v): strings quoted as Python quotes them. */
int jv_write_repr(JBuf *b, JValue v);
/* json.dumps(v, ensure_ascii=False, indent=indent (NULL: none; an int's
 * spaces or a string), separators (NULL: ", " and ": ", or ",\n"-style
 * with indent), sort_keys): as transformers' tojson filter. Undefined or
 * a function -> -1 (jinja2 raises TypeError). */
int jv_write_json(JBuf *b, JValue v, const char *indent, size_t indent_len, const char *item_sep,
                  const char *key_sep, int sort_keys);
/* A value from JSON text (see jinja_set_json). */
int jv_from_json(JCtx *c, const char *json, size_t len, const char *name, int flags, JValue *out);

/* ---- jinja_builtins.c ------------------------------------------------- */

/* Each returns 0 with *out, -1 after jv_fail, or 1 if name is not known
 * (jinja.c then fails with "unknown filter 'NAME'" and the position). */
int jb_filter(JCtx *c, const char *name, size_t len, JValue in, const JArgs *args, JValue *out);
int jb_test(JCtx *c, const char *name, size_t len, JValue in, const JArgs *args, int *result);
/* A global function by name (range, namespace, dict, raise_exception,
 * strftime_now, ...) as a JV_FUNC value; 1 if none. */
int jb_global(JCtx *c, const char *name, size_t len, JValue *out);
/* obj.name as a bound method (str, dict and list methods); 1 if none. */
int jb_method(JCtx *c, JValue obj, const char *name, size_t len, JValue *out);

#endif
