/* jinja_builtins.c - jinja2's filters and tests, the methods of str, dict
 * and list a template calls, and the global functions (range, namespace,
 * dict, raise_exception, strftime_now...): one table each, a row per name
 * with its parameters, as jinja2 and Python define them. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "jinja_impl.h"

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

static int type_error(JCtx *c, const char *what, JValue v)
{
    return jv_fail(c, PITH_BAD_INPUT, "%s: unexpected %s", what, jv_type_name(v));
}

static int want_int(JCtx *c, const JValue *v, int64_t dflt, const char *what, int64_t *out)
{
    if (!v) {
        *out = dflt;
        return 0;
    }
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

/* ---- filters ------------------------------------------------------------- */

static int f_tojson(JCtx *c, JValue v, const JValue *const *p, const JArgs *a, JValue *out)
{
    (void)a;
    char spaces[64];
    const char *indent = NULL, *sep[2] = {NULL, NULL};
    size_t indent_len = 0;
    if (p[1] && p[1]->type != JV_NONE) {
        if (p[1]->type == JV_STRING) {
            indent = p[1]->u.s;
            indent_len = p[1]->len;
        } else if (p[1]->type == JV_INT) {
            indent_len = p[1]->u.i < 0 ? 0 : p[1]->u.i > 63 ? 63 : (size_t)p[1]->u.i;
            memset(spaces, ' ', indent_len);
            indent = spaces;
        } else {
            return type_error(c, "tojson indent", *p[1]);
        }
    }
    char sepz[2][16];
    if (p[2] && p[2]->type != JV_NONE) {
        if (p[2]->type != JV_LIST || p[2]->u.list->n != 2) return type_error(c, "tojson separators", *p[2]);
        for (int i = 0; i < 2; i++) {
            JValue s = p[2]->u.list->items[i];
            if (s.type != JV_STRING || s.len >= sizeof sepz[i]) return type_error(c, "tojson separators", s);
            memcpy(sepz[i], s.u.s, s.len);
            sepz[i][s.len] = 0;
            sep[i] = sepz[i];
        }
    }
    JBuf b;
    jbuf_init(&b, c);
    if (jv_write_json(&b, v, indent, indent_len, sep[0], sep[1], arg_truthy(p[3], 0)) < 0) return -1;
    *out = jbuf_value(&b);
    return 0;
}

static int f_string(JCtx *c, JValue v, const JValue *const *p, const JArgs *a, JValue *out)
{
    (void)p, (void)a;
    return str_of(c, v, out);
}

static int f_length(JCtx *c, JValue v, const JValue *const *p, const JArgs *a, JValue *out)
{
    (void)p, (void)a;
    switch (v.type) {
    case JV_STRING: *out = jv_int((int64_t)jv_str_chars(v.u.s, v.len)); return 0;
    case JV_LIST: *out = jv_int(v.u.list->n); return 0;
    case JV_DICT:
        if (v.flags & JF_NAMESPACE) break;
        *out = jv_int(v.u.dict->n);
        return 0;
    case JV_UNDEFINED: *out = jv_int(0); return 0;
    default: break;
    }
    return jv_fail(c, PITH_BAD_INPUT, "object of type '%s' has no len()", jv_type_name(v));
}

static int f_default(JCtx *c, JValue v, const JValue *const *p, const JArgs *a, JValue *out)
{
    (void)c, (void)a;
    int use = v.type == JV_UNDEFINED || (arg_truthy(p[1], 0) && !jv_truthy(v));
    *out = use ? (p[0] ? *p[0] : jv_str("", 0)) : v;
    return 0;
}

static int f_list(JCtx *c, JValue v, const JValue *const *p, const JArgs *a, JValue *out)
{
    (void)p, (void)a;
    JList *l;
    if (jv_iterate(c, v, &l) < 0 || jv_list_new(c, l->n, out) < 0) return -1;
    memcpy(out->u.list->items, l->items, (size_t)l->n * sizeof(JValue));
    out->u.list->n = l->n;
    return 0;
}

static int f_first_last(JCtx *c, JValue v, int last, JValue *out)
{
    JList *l;
    if (jv_iterate(c, v, &l) < 0) return -1;
    *out = l->n ? l->items[last ? l->n - 1 : 0] : jv_undefined(NULL, 0);
    return 0;
}

static int f_first(JCtx *c, JValue v, const JValue *const *p, const JArgs *a, JValue *out)
{
    (void)p, (void)a;
    return f_first_last(c, v, 0, out);
}

static int f_last(JCtx *c, JValue v, const JValue *const *p, const JArgs *a, JValue *out)
{
    (void)p, (void)a;
    return f_first_last(c, v, 1, out);
}

static int f_safe(JCtx *c, JValue v, const JValue *const *p, const JArgs *a, JValue *out)
{
    (void)c, (void)p, (void)a;
    *out = v;
    return 0;
}

static const Builtin filters[] = {
    {"tojson", "ensure_ascii indent separators sort_keys", f_tojson, 0},
    {"string", "", f_string, 0},
    {"length", "", f_length, 0},
    {"count", "", f_length, 0},
    {"default", "default_value boolean", f_default, 0},
    {"d", "default_value boolean", f_default, 0},
    {"list", "", f_list, 0},
    {"first", "", f_first, 0},
    {"last", "", f_last, 0},
    {"safe", "", f_safe, 0},
};

/* ---- tests ----------------------------------------------------------------- */

static int t_defined(JCtx *c, JValue v, const JValue *const *p, const JArgs *a, JValue *out)
{
    (void)c, (void)p, (void)a;
    *out = jv_bool(v.type != JV_UNDEFINED);
    return 0;
}

static const Builtin tests[] = {
    {"defined", "", t_defined, 0},
};

/* ---- methods ------------------------------------------------------------------ */

static const Builtin methods[] = {
    {"append", "*", NULL, JV_LIST},
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

/* ---- globals ------------------------------------------------------------------------ */

static int g_raise_exception(JCtx *c, JValue self, const JValue *const *p, const JArgs *a, JValue *out)
{
    (void)self, (void)a, (void)out;
    JValue msg = jv_str("", 0);
    if (p[0] && str_of(c, *p[0], &msg) < 0) return -1;
    return jv_fail(c, PITH_BAD_INPUT, "raise_exception: %.*s", (int)(msg.len > 250 ? 250 : msg.len), msg.u.s);
}

/* range(stop) / range(start, stop[, step]); jinja2's sandbox refuses more than 100000 items. */
static int g_range(JCtx *c, JValue self, const JValue *const *p, const JArgs *a, JValue *out)
{
    (void)self, (void)a;
    int64_t x[3] = {0, 0, 1};
    if (want_int(c, p[0], 0, "range", &x[0]) < 0 || want_int(c, p[1], 0, "range", &x[1]) < 0 ||
        want_int(c, p[2], 1, "range", &x[2]) < 0)
        return -1;
    if (!p[0]) return jv_fail(c, PITH_BAD_INPUT, "range expected at least 1 argument, got 0");
    if (!p[1]) x[1] = x[0], x[0] = 0;
    if (!x[2]) return jv_fail(c, PITH_BAD_INPUT, "range() arg 3 must not be zero");
    double n = x[2] > 0 ? ceil(((double)x[1] - (double)x[0]) / (double)x[2])
                        : ceil(((double)x[0] - (double)x[1]) / (double)-x[2]);
    if (n < 0) n = 0;
    if (n > 100000)
        return jv_fail(c, PITH_BAD_INPUT, "Range too big. The sandbox blocks ranges larger than MAX_RANGE (100000).");
    if (jv_list_new(c, (uint32_t)n, out) < 0) return -1;
    for (uint32_t i = 0; i < (uint32_t)n; i++) out->u.list->items[i] = jv_int(x[0] + (int64_t)i * x[2]);
    out->u.list->n = (uint32_t)n;
    return 0;
}

/* dict(**kw), namespace(dict, **kw): the keyword arguments (after the dict's items). */
static int kwargs_dict(JCtx *c, const JArgs *a, int flags, JValue *out)
{
    if (a->n_pos > 1 || (a->n_pos == 1 && a->pos[0].type != JV_DICT))
        return jv_fail(c, PITH_BAD_INPUT, "%s takes one dict and keyword arguments",
                       flags ? "namespace()" : "dict()");
    if (jv_dict_new(c, 4, out) < 0) return -1;
    out->flags = (uint8_t)flags;
    if (a->n_pos)
        for (uint32_t i = 0; i < a->pos[0].u.dict->n; i++)
            if (jv_dict_set(c, out->u.dict, a->pos[0].u.dict->keys[i], a->pos[0].u.dict->values[i]) < 0) return -1;
    for (int k = 0; k < a->n_kw; k++)
        if (jv_dict_set(c, out->u.dict, jv_str(a->kw_names[k], strlen(a->kw_names[k])), a->kw[k]) < 0) return -1;
    return 0;
}

static int g_dict(JCtx *c, JValue self, const JValue *const *p, const JArgs *a, JValue *out)
{
    (void)self, (void)p;
    return kwargs_dict(c, a, 0, out);
}

static int g_namespace(JCtx *c, JValue self, const JValue *const *p, const JArgs *a, JValue *out)
{
    (void)self, (void)p;
    return kwargs_dict(c, a, JF_NAMESPACE, out);
}

static const Builtin globals[] = {
    {"raise_exception", "message", g_raise_exception, 0},
    {"range", "start stop step", g_range, 0},
    {"dict", "*", g_dict, 0},
    {"namespace", "*", g_namespace, 0},
};

/* ---- lookups ---------------------------------------------------------------------------- */

#define COUNT(t) (sizeof t / sizeof t[0])

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
