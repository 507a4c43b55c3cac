/* json_schema.c - JSON Schema to GBNF (see json_schema.h). Each schema node
 * becomes a rule sN; its children's rules are written before it, so the
 * output is a list of whole rules followed by the shared primitives. */
#include "json_schema.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "json.h"

/* the char rule first: a tool grammar may give its own (server_tools.c) */
#define PRIMITIVES                                                                                            \
    "char ::= [^\"\\\\\\x00-\\x1f] | \"\\\\\" ( [\"\\\\/bfnrt] | \"u\" [0-9a-fA-F]{4} )\n"                    \
    "ws ::= ( \" \" | \"\\n\" [ \\t]{0,16} )?\n"                                                              \
    "string ::= \"\\\"\" char* \"\\\"\"\n"                                                                    \
    "uint ::= \"0\" | [1-9] [0-9]{0,15}\n"                                                                    \
    "integer ::= \"-\"? uint\n"                                                                               \
    "number ::= integer ( \".\" [0-9]{1,15} )? ( [eE] [-+]? [0-9]{1,3} )?\n"                                  \
    "boolean ::= \"true\" | \"false\"\n"                                                                      \
    "null ::= \"null\"\n"                                                                                     \
    "value ::= object | array | string | number | boolean | null\n"                                           \
    "object ::= \"{\" ws ( string ws \":\" ws value ( ws \",\" ws string ws \":\" ws value )* )? ws \"}\"\n" \
    "array ::= \"[\" ws ( value ( ws \",\" ws value )* )? ws \"]\"\n"

const char json_schema_object_grammar[] = "root ::= object\n" PRIMITIVES;
const char json_schema_primitives[] = PRIMITIVES;

#define MAX_PROPS 128
#define XML_TOP "Qwen3.5's <function=...> calls need one object schema at the top (not $ref, anyOf or several types)"
#define MAX_ALTS 64
#define MAX_REFS 128

typedef struct {
    const char *src;
    size_t len;
    size_t root;
    const char *name;
    char *out;
    size_t cap, n;
    char *err;
    size_t err_cap;
    int failed;
    int n_rules;
    size_t ref_pos[MAX_REFS];
    int ref_rule[MAX_REFS];
    int n_refs;
    size_t xml_root; /* the schema written as Qwen3.5's <parameter=...> blocks, once (ABSENT: none) */
} Gen;

static int fail(Gen *g, size_t at, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int fail(Gen *g, size_t at, const char *fmt, ...)
{
    if (g->failed) return -1;
    g->failed = 1;
    char what[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    for (char *c = what; *c; c++)
        if ((unsigned char)*c < 0x20) *c = '?'; /* names from the schema: one line */
    if (g->err && g->err_cap) snprintf(g->err, g->err_cap, "%s: byte %zu: %s", g->name, at, what);
    return -1;
}

static void put(Gen *g, const char *s, size_t n)
{
    if (g->n + n < g->cap) memcpy(g->out + g->n, s, n);
    g->n += n;
}

static void puts_(Gen *g, const char *s)
{
    put(g, s, strlen(s));
}

static void putf(Gen *g, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void putf(Gen *g, const char *fmt, ...)
{
    char tmp[128];
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (k > 0) put(g, tmp, (size_t)k < sizeof tmp ? (size_t)k : sizeof tmp - 1);
}

/* bytes as a GBNF literal "..." */
static void put_literal(Gen *g, const char *s, size_t n)
{
    put(g, "\"", 1);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\') {
            put(g, "\\", 1);
            put(g, (const char *)&s[i], 1);
        } else if (c == '\n') put(g, "\\n", 2);
        else if (c == '\r') put(g, "\\r", 2);
        else if (c == '\t') put(g, "\\t", 2);
        else if (c < 0x20) putf(g, "\\x%02x", c);
        else put(g, (const char *)&s[i], 1);
    }
    put(g, "\"", 1);
}

static void at(Json *j, const Gen *g, size_t pos)
{
    json_init(j, g->src, g->len, g->name);
    j->pos = pos;
}

static int json_fail_g(Gen *g, Json *j)
{
    if (g->failed) return -1;
    g->failed = 1;
    if (g->err && g->err_cap) snprintf(g->err, g->err_cap, "%s", j->err[0] ? j->err : "malformed JSON");
    return -1;
}

/* A JSON value at pos as a GBNF literal of its text (enum, const). */
static int put_value_literal(Gen *g, size_t pos)
{
    Json j;
    at(&j, g, pos);
    char tmp[4096];
    size_t n;
    if (json_dump(&j, tmp, sizeof tmp, &n) < 0) {
        if (j.status == PITH_NO_MEMORY || !j.err[0]) return fail(g, pos, "an enum or const value longer than 4096 bytes");
        return json_fail_g(g, &j);
    }
    put_literal(g, tmp, n);
    return 0;
}

typedef struct {
    size_t type, props, required, addl, enum_, const_, items, any_of, one_of, all_of, ref;
    double min_items, max_items, min_len, max_len;
    int has_minimum;
    double minimum;
} Node;

#define ABSENT ((size_t)-1)

static int gen(Gen *g, size_t pos, int rule);

static int read_count(Gen *g, Json *j, const char *key, double *v)
{
    size_t p = j->pos;
    const char *t;
    size_t tl;
    if (json_peek(j) != JSON_NUMBER) return fail(g, p, "%s: expected a number", key);
    if (json_number(j, &t, &tl, v) < 0) return json_fail_g(g, j);
    if (*v != floor(*v) || *v < 0) return fail(g, p, "%s: expected a whole number >= 0", key);
    if (*v > 1000) return fail(g, p, "%s: %g is more than pith's bound of 1000", key, *v);
    return 0;
}

static int scan(Gen *g, size_t pos, Node *nd)
{
    memset(nd, 0xff, sizeof(size_t) * 11);
    nd->min_items = nd->min_len = 0;
    nd->max_items = nd->max_len = -1;
    nd->has_minimum = 0;
    Json j;
    at(&j, g, pos);
    if (json_enter(&j, '{') < 0) return json_fail_g(g, &j);
    int r;
    while ((r = json_next(&j, '}')) > 0) {
        char key[64];
        size_t kl, kpos = j.pos;
        if (json_key(&j, key, sizeof key - 1, &kl) < 0) {
            if (j.status != PITH_NO_MEMORY) return json_fail_g(g, &j);
            return fail(g, kpos, "unsupported keyword (a long name)");
        }
        key[kl] = '\0';
        while (j.pos < j.len && (j.src[j.pos] == ' ' || j.src[j.pos] == '\n' || j.src[j.pos] == '\t' || j.src[j.pos] == '\r'))
            j.pos++;
        size_t vpos = j.pos;
        size_t *slot = NULL;
        if (!strcmp(key, "type")) slot = &nd->type;
        else if (!strcmp(key, "properties")) slot = &nd->props;
        else if (!strcmp(key, "required")) slot = &nd->required;
        else if (!strcmp(key, "additionalProperties")) slot = &nd->addl;
        else if (!strcmp(key, "enum")) slot = &nd->enum_;
        else if (!strcmp(key, "const")) slot = &nd->const_;
        else if (!strcmp(key, "items")) slot = &nd->items;
        else if (!strcmp(key, "anyOf")) slot = &nd->any_of;
        else if (!strcmp(key, "oneOf")) slot = &nd->one_of;
        else if (!strcmp(key, "allOf")) slot = &nd->all_of;
        else if (!strcmp(key, "$ref")) slot = &nd->ref;
        if (slot) {
            *slot = vpos;
            if (json_skip(&j) < 0) return json_fail_g(g, &j);
            continue;
        }
        int e = 0;
        if (!strcmp(key, "minItems")) e = read_count(g, &j, key, &nd->min_items);
        else if (!strcmp(key, "maxItems")) e = read_count(g, &j, key, &nd->max_items);
        else if (!strcmp(key, "minLength")) e = read_count(g, &j, key, &nd->min_len);
        else if (!strcmp(key, "maxLength")) e = read_count(g, &j, key, &nd->max_len);
        else if (!strcmp(key, "minimum")) {
            const char *t;
            size_t tl;
            if (json_peek(&j) != JSON_NUMBER) return fail(g, vpos, "minimum: expected a number");
            if (json_number(&j, &t, &tl, &nd->minimum) < 0) return json_fail_g(g, &j);
            nd->has_minimum = 1;
        } else if (!strcmp(key, "title") || !strcmp(key, "description") || !strcmp(key, "$schema") ||
                   !strcmp(key, "$id") || !strcmp(key, "$comment") || !strcmp(key, "default") ||
                   !strcmp(key, "examples") || !strcmp(key, "deprecated") || !strcmp(key, "readOnly") ||
                   !strcmp(key, "writeOnly") || !strcmp(key, "$defs") || !strcmp(key, "definitions")) {
            e = json_skip(&j) < 0 ? json_fail_g(g, &j) : 0;
        } else {
            return fail(g, kpos, "unsupported keyword '%s' (pith cannot guarantee it)", key);
        }
        if (e < 0) return -1;
    }
    if (r < 0) return json_fail_g(g, &j);
    if (nd->max_items >= 0 && nd->max_items < nd->min_items) return fail(g, pos, "maxItems is less than minItems");
    if (nd->max_len >= 0 && nd->max_len < nd->min_len) return fail(g, pos, "maxLength is less than minLength");
    return 0;
}

/* "#", "#/$defs/NAME", "#/definitions/NAME" -> the position of that schema */
static int resolve(Gen *g, size_t ref_pos, size_t *out)
{
    Json j;
    at(&j, g, ref_pos);
    char ref[256];
    size_t n;
    if (json_peek(&j) != JSON_STRING) return fail(g, ref_pos, "$ref: expected a string");
    if (json_string(&j, ref, sizeof ref - 1, &n) < 0) return fail(g, ref_pos, "$ref: unsupported reference");
    ref[n] = '\0';
    if (!strcmp(ref, "#")) {
        *out = g->root;
        return 0;
    }
    const char *name = NULL, *container = NULL;
    if (!strncmp(ref, "#/$defs/", 8)) container = "$defs", name = ref + 8;
    else if (!strncmp(ref, "#/definitions/", 14)) container = "definitions", name = ref + 14;
    if (!name || !*name || strchr(name, '/') || strchr(name, '~'))
        return fail(g, ref_pos, "$ref: only \"#\", \"#/$defs/NAME\" and \"#/definitions/NAME\" are supported");
    at(&j, g, g->root);
    if (json_peek(&j) == JSON_OBJECT && json_enter(&j, '{') == 0) {
        int r;
        while ((r = json_next(&j, '}')) > 0) {
            char key[64];
            size_t kl;
            if (json_key(&j, key, sizeof key - 1, &kl) < 0) break;
            key[kl] = '\0';
            if (strcmp(key, container) != 0 || json_peek(&j) != JSON_OBJECT) {
                if (json_skip(&j) < 0) break;
                continue;
            }
            json_enter(&j, '{');
            while ((r = json_next(&j, '}')) > 0) {
                char k2[256];
                if (json_key(&j, k2, sizeof k2 - 1, &kl) < 0) break;
                k2[kl] = '\0';
                if (!strcmp(k2, name)) {
                    while (j.pos < j.len && strchr(" \t\r\n", j.src[j.pos])) j.pos++;
                    *out = j.pos;
                    return 0;
                }
                if (json_skip(&j) < 0) break;
            }
            break;
        }
    }
    return fail(g, ref_pos, "$ref: '%s' is not defined", ref);
}

static int ref_rule(Gen *g, size_t ref_pos)
{
    size_t target = 0;
    if (resolve(g, ref_pos, &target) < 0) return -1;
    for (int i = 0; i < g->n_refs; i++)
        if (g->ref_pos[i] == target) return g->ref_rule[i];
    if (g->n_refs >= MAX_REFS) return fail(g, ref_pos, "more than %d distinct $ref targets", MAX_REFS);
    int rule = g->n_rules++;
    g->ref_pos[g->n_refs] = target;
    g->ref_rule[g->n_refs++] = rule;
    if (gen(g, target, rule) < 0) return -1;
    return rule;
}

/* Positions of the elements of an array of schemas (anyOf, oneOf, allOf, type). */
static int list(Gen *g, size_t pos, const char *key, size_t *items, int cap)
{
    Json j;
    at(&j, g, pos);
    if (json_peek(&j) != JSON_ARRAY) return fail(g, pos, "%s: expected an array", key);
    json_enter(&j, '[');
    int n = 0, r;
    while ((r = json_next(&j, ']')) > 0) {
        if (n >= cap) return fail(g, pos, "%s: more than %d entries", key, cap);
        while (j.pos < j.len && strchr(" \t\r\n", j.src[j.pos])) j.pos++;
        items[n++] = j.pos;
        if (json_skip(&j) < 0) return json_fail_g(g, &j);
    }
    if (r < 0) return json_fail_g(g, &j);
    if (n == 0) return fail(g, pos, "%s: the array is empty", key);
    return n;
}

static int type_is(Gen *g, size_t pos, char *name, size_t cap)
{
    Json j;
    at(&j, g, pos);
    size_t n;
    if (json_peek(&j) != JSON_STRING || json_string(&j, name, cap - 1, &n) < 0)
        return fail(g, pos, "type: expected a type name");
    name[n] = '\0';
    return 0;
}

/* Whether the schema at pos is a string one that Qwen3.5's <function=...>
 * form writes as raw text (type "string", or an enum or const of strings
 * without '<'): 1 and its rule written (the values, any text without the
 * closing tags: "xt", server_tools.c, or as many characters but '<' as its
 * minLength and maxLength allow), else 0 (nothing written), or -1. */
static int text_kind(Gen *g, size_t pos, int rule)
{
    Json j;
    Node nd;
    char t[1024];
    size_t n, items[MAX_ALTS * 4], at0 = g->n;
    at(&j, g, pos);
    if (json_peek(&j) != JSON_OBJECT) return 0;
    if (scan(g, pos, &nd) < 0) return -1;
    if (nd.ref != ABSENT || nd.props != ABSENT || nd.required != ABSENT || nd.addl != ABSENT || nd.items != ABSENT ||
        nd.any_of != ABSENT || nd.one_of != ABSENT || nd.all_of != ABSENT || nd.has_minimum)
        return 0;
    if (nd.type != ABSENT) {
        at(&j, g, nd.type);
        if (json_peek(&j) != JSON_STRING || json_string(&j, t, sizeof t, &n) < 0 || n != 6 || memcmp(t, "string", 6))
            return 0;
    }
    int k = 0;
    if (nd.const_ != ABSENT) items[k++] = nd.const_;
    else if (nd.enum_ != ABSENT) k = list(g, nd.enum_, "enum", items, MAX_ALTS * 4);
    else if (nd.type == ABSENT) return 0;
    if (k < 0) return -1;
    putf(g, "s%d ::= ", rule);
    for (int i = 0; i < k; i++) {
        at(&j, g, items[i]);
        if (json_peek(&j) != JSON_STRING || json_string(&j, t, sizeof t, &n) < 0 || memchr(t, '<', n)) {
            g->n = at0; /* not text after all: the rule is written as JSON */
            return 0;
        }
        if (i) puts_(g, " | ");
        put_literal(g, t, n);
    }
    if (k) {
        puts_(g, "\n");
        return 1;
    }
    int lo = (int)nd.min_len, hi = (int)nd.max_len;
    if (lo == 0 && hi < 0) puts_(g, "xt\n");
    else if (hi < 0) putf(g, "[^<]{%d,}\n", lo);
    else putf(g, "[^<]{%d,%d}\n", lo, hi);
    return 1;
}

static int gen_object(Gen *g, const Node *nd, size_t pos, int rule)
{
    int xml = pos == g->xml_root; /* Qwen3.5's form: the top object only */
    if (xml) g->xml_root = ABSENT;
    int child[MAX_PROPS], member[MAX_PROPS], req[MAX_PROPS];
    size_t name_pos[MAX_PROPS];
    int n = 0;
    if (nd->props != ABSENT) {
        Json j;
        at(&j, g, nd->props);
        if (json_peek(&j) != JSON_OBJECT) return fail(g, nd->props, "properties: expected an object");
        json_enter(&j, '{');
        int r;
        while ((r = json_next(&j, '}')) > 0) {
            if (n >= MAX_PROPS) return fail(g, nd->props, "more than %d properties", MAX_PROPS);
            while (j.pos < j.len && strchr(" \t\r\n", j.src[j.pos])) j.pos++;
            name_pos[n] = j.pos;
            if (json_key(&j, NULL, (size_t)-1, NULL) < 0) return json_fail_g(g, &j);
            while (j.pos < j.len && strchr(" \t\r\n", j.src[j.pos])) j.pos++;
            size_t vpos = j.pos;
            if (json_skip(&j) < 0) return json_fail_g(g, &j);
            req[n] = 0;
            child[n] = g->n_rules++;
            int text = xml ? text_kind(g, vpos, child[n]) : 0;
            if (text < 0 || (!text && gen(g, vpos, child[n]) < 0)) return -1;
            n++;
        }
        if (r < 0) return json_fail_g(g, &j);
    }
    if (nd->required != ABSENT) {
        Json j;
        at(&j, g, nd->required);
        if (json_peek(&j) != JSON_ARRAY) return fail(g, nd->required, "required: expected an array of names");
        json_enter(&j, '[');
        int r;
        while ((r = json_next(&j, ']')) > 0) {
            char want[256];
            size_t wl, wpos = j.pos;
            if (json_peek(&j) != JSON_STRING || json_string(&j, want, sizeof want, &wl) < 0)
                return fail(g, wpos, "required: expected an array of names");
            int found = 0;
            for (int i = 0; i < n && !found; i++) {
                Json k;
                at(&k, g, name_pos[i]);
                char have[256];
                size_t hl;
                if (json_string(&k, have, sizeof have, &hl) == 0 && hl == wl && !memcmp(have, want, wl)) req[i] = found = 1;
            }
            if (!found) return fail(g, wpos, "required: '%.*s' is not in properties", (int)wl, want);
        }
        if (r < 0) return json_fail_g(g, &j);
    }
    if (xml) {
        /* <parameter=NAME>\nVALUE\n</parameter>\n per member, in their order */
        putf(g, "s%d ::= \"\"", rule);
        for (int i = 0; i < n; i++) {
            Json k;
            at(&k, g, name_pos[i]);
            char name[1024];
            size_t nl;
            if (json_string(&k, name, sizeof name, &nl) < 0 || memchr(name, '>', nl) || memchr(name, '\n', nl))
                return fail(g, name_pos[i], "a property name with '>' or a newline (Qwen3.5's <parameter=NAME>)");
            puts_(g, " ( \"<parameter=\" ");
            put_literal(g, name, nl);
            putf(g, " \">\\n\" s%d \"\\n</parameter>\\n\" )%s", child[i], req[i] ? "" : "?");
        }
        puts_(g, "\n");
        return 0;
    }
    /* additionalProperties without properties: a map of such values */
    if (n == 0) {
        int v = -1;
        if (nd->addl != ABSENT) {
            Json j;
            at(&j, g, nd->addl);
            JsonType t = json_peek(&j);
            if (t == JSON_FALSE) {
                putf(g, "s%d ::= \"{\" ws \"}\"\n", rule);
                return 0;
            }
            if (t == JSON_OBJECT) {
                v = g->n_rules++;
                if (gen(g, nd->addl, v) < 0) return -1;
            } else if (t != JSON_TRUE) return fail(g, nd->addl, "additionalProperties: expected a boolean or a schema");
        }
        if (v < 0) putf(g, "s%d ::= object\n", rule);
        else putf(g, "s%d ::= \"{\" ws ( string ws \":\" ws s%d ( ws \",\" ws string ws \":\" ws s%d )* )? ws \"}\"\n", rule, v, v);
        return 0;
    }
    /* one rule per member: "name" ws ":" ws value */
    for (int i = 0; i < n; i++) {
        Json k;
        at(&k, g, name_pos[i]);
        char name[1024], esc[2100];
        size_t nl;
        if (json_string(&k, name, sizeof name, &nl) < 0) return fail(g, name_pos[i], "a property name longer than 1024 bytes");
        size_t el = json_escape(name, nl, esc, sizeof esc);
        member[i] = g->n_rules++;
        putf(g, "s%d ::= ", member[i]);
        put_literal(g, esc, el);
        putf(g, " ws \":\" ws s%d\n", child[i]);
    }
    int n_req = 0;
    for (int i = 0; i < n; i++) n_req += req[i];
    putf(g, "s%d ::= \"{\" ws ", rule);
    if (n_req > 0) {
        int first = 1;
        for (int i = 0; i < n; i++)
            if (req[i]) {
                putf(g, first ? "s%d" : " ws \",\" ws s%d", member[i]);
                first = 0;
            }
        for (int i = 0; i < n; i++)
            if (!req[i]) putf(g, " ( ws \",\" ws s%d )?", member[i]);
    } else {
        /* all optional: the first present one, then any of those after it */
        puts_(g, "(");
        for (int i = 0; i < n; i++) {
            putf(g, "%s s%d", i ? " |" : "", member[i]);
            for (int k = i + 1; k < n; k++) putf(g, " ( ws \",\" ws s%d )?", member[k]);
        }
        puts_(g, " )?");
    }
    puts_(g, " ws \"}\"\n");
    (void)pos;
    return 0;
}

static int gen_typed(Gen *g, const Node *nd, size_t pos, const char *type, size_t type_pos, int rule)
{
    if (!strcmp(type, "object")) return gen_object(g, nd, pos, rule);
    if (!strcmp(type, "array")) {
        int item = -1;
        if (nd->items != ABSENT) {
            Json j;
            at(&j, g, nd->items);
            if (json_peek(&j) == JSON_ARRAY) return fail(g, nd->items, "items: an array of schemas (tuples) is not supported");
            item = g->n_rules++;
            if (gen(g, nd->items, item) < 0) return -1;
        }
        char it[32];
        if (item < 0) snprintf(it, sizeof it, "value");
        else snprintf(it, sizeof it, "s%d", item);
        int lo = (int)nd->min_items, hi = (int)nd->max_items; /* hi < 0: no bound */
        putf(g, "s%d ::= \"[\" ws ", rule);
        if (hi == 0) {
            /* nothing */
        } else if (lo == 0) {
            if (hi < 0) putf(g, "( %s ( ws \",\" ws %s )* )?", it, it);
            else if (hi == 1) putf(g, "%s?", it);
            else putf(g, "( %s ( ws \",\" ws %s ){0,%d} )?", it, it, hi - 1);
        } else {
            if (hi < 0) putf(g, "%s ( ws \",\" ws %s ){%d,}", it, it, lo - 1);
            else putf(g, "%s ( ws \",\" ws %s ){%d,%d}", it, it, lo - 1, hi - 1);
        }
        puts_(g, " ws \"]\"\n");
        return 0;
    }
    if (!strcmp(type, "string")) {
        int lo = (int)nd->min_len, hi = (int)nd->max_len;
        if (lo == 0 && hi < 0) putf(g, "s%d ::= string\n", rule);
        else if (hi < 0) putf(g, "s%d ::= \"\\\"\" char{%d,} \"\\\"\"\n", rule, lo);
        else putf(g, "s%d ::= \"\\\"\" char{%d,%d} \"\\\"\"\n", rule, lo, hi);
        return 0;
    }
    if (!strcmp(type, "integer")) {
        if (nd->has_minimum && nd->minimum != 0)
            return fail(g, pos, "minimum: only 0 is supported (pith cannot guarantee other bounds)");
        putf(g, "s%d ::= %s\n", rule, nd->has_minimum ? "uint" : "integer");
        return 0;
    }
    /* minimum constrains numbers only (other types ignore it, as JSON Schema says) */
    if (nd->has_minimum && !strcmp(type, "number")) return fail(g, pos, "minimum: only supported on integers (as 0)");
    if (!strcmp(type, "number") || !strcmp(type, "boolean") || !strcmp(type, "null")) {
        putf(g, "s%d ::= %s\n", rule, type);
        return 0;
    }
    return fail(g, type_pos, "type: unknown type '%s'", type);
}

static int gen(Gen *g, size_t pos, int rule)
{
    Json j;
    at(&j, g, pos);
    JsonType t = json_peek(&j);
    if (t == JSON_TRUE) {
        putf(g, "s%d ::= value\n", rule);
        return 0;
    }
    if (t == JSON_FALSE) return fail(g, pos, "the schema false matches nothing");
    if (t != JSON_OBJECT) {
        if (j.failed) return json_fail_g(g, &j);
        return fail(g, pos, "a schema must be an object or a boolean, not %s", json_type_name(t));
    }
    Node nd;
    if (scan(g, pos, &nd) < 0) return -1;
    if (nd.ref != ABSENT) {
        int r = ref_rule(g, nd.ref);
        if (r < 0) return -1;
        putf(g, "s%d ::= s%d\n", rule, r);
        return 0;
    }
    if (nd.const_ != ABSENT) {
        putf(g, "s%d ::= ", rule);
        if (put_value_literal(g, nd.const_) < 0) return -1;
        puts_(g, "\n");
        return 0;
    }
    if (nd.enum_ != ABSENT) {
        size_t items[MAX_ALTS * 4];
        int k = list(g, nd.enum_, "enum", items, MAX_ALTS * 4);
        if (k < 0) return -1;
        putf(g, "s%d ::= ", rule);
        for (int i = 0; i < k; i++) {
            if (i) puts_(g, " | ");
            if (put_value_literal(g, items[i]) < 0) return -1;
        }
        puts_(g, "\n");
        return 0;
    }
    size_t alts[MAX_ALTS];
    size_t which = nd.any_of != ABSENT ? nd.any_of : nd.one_of != ABSENT ? nd.one_of : nd.all_of;
    if (which != ABSENT) {
        const char *key = which == nd.any_of ? "anyOf" : which == nd.one_of ? "oneOf" : "allOf";
        int k = list(g, which, key, alts, MAX_ALTS);
        if (k < 0) return -1;
        if (which == nd.all_of && k != 1) return fail(g, which, "allOf: only one schema is supported");
        if (nd.type != ABSENT || nd.props != ABSENT || nd.items != ABSENT)
            return fail(g, which, "%s next to type, properties or items is not supported", key);
        int ids[MAX_ALTS];
        for (int i = 0; i < k; i++) {
            ids[i] = g->n_rules++;
            if (gen(g, alts[i], ids[i]) < 0) return -1;
        }
        putf(g, "s%d ::=", rule);
        for (int i = 0; i < k; i++) putf(g, "%s s%d", i ? " |" : "", ids[i]);
        puts_(g, "\n");
        return 0;
    }
    if (nd.type == ABSENT) {
        if (nd.props != ABSENT || nd.required != ABSENT || nd.addl != ABSENT || pos == g->xml_root)
            return gen_typed(g, &nd, pos, "object", pos, rule);
        if (nd.items != ABSENT) return gen_typed(g, &nd, pos, "array", pos, rule);
        if (nd.has_minimum) return fail(g, pos, "minimum without a type");
        putf(g, "s%d ::= value\n", rule);
        return 0;
    }
    at(&j, g, nd.type);
    char type[32];
    if (json_peek(&j) == JSON_ARRAY) {
        if (pos == g->xml_root) return fail(g, pos, XML_TOP);
        int k = list(g, nd.type, "type", alts, 8);
        if (k < 0) return -1;
        int ids[8];
        for (int i = 0; i < k; i++) {
            if (type_is(g, alts[i], type, sizeof type) < 0) return -1;
            ids[i] = g->n_rules++;
            if (gen_typed(g, &nd, pos, type, alts[i], ids[i]) < 0) return -1;
        }
        putf(g, "s%d ::=", rule);
        for (int i = 0; i < k; i++) putf(g, "%s s%d", i ? " |" : "", ids[i]);
        puts_(g, "\n");
        return 0;
    }
    if (type_is(g, nd.type, type, sizeof type) < 0) return -1;
    return gen_typed(g, &nd, pos, type, nd.type, rule);
}

int json_schema_rules(const char *schema, size_t len, const char *name, int xml, int *next_rule, int *top, char *out,
                      size_t cap, size_t *n, char *err, size_t err_cap)
{
    static Gen g; /* big (ref tables): off the stack */
    memset(&g, 0, sizeof g);
    g.src = schema;
    g.len = len;
    g.name = name;
    g.out = out;
    g.cap = cap;
    g.n = *n;
    g.err = err;
    g.err_cap = err_cap;
    g.n_rules = *next_rule;
    /* the whole text must be one valid JSON value */
    Json j;
    json_init(&j, schema, len, name);
    if (json_skip(&j) < 0 || json_end(&j) < 0) return json_fail_g(&g, &j);
    g.root = 0;
    while (g.root < len && strchr(" \t\r\n", schema[g.root])) g.root++;
    *top = g.n_rules++;
    g.xml_root = xml ? g.root : ABSENT;
    if (gen(&g, g.root, *top) < 0) return -1;
    if (g.xml_root != ABSENT)
        return fail(&g, g.root, XML_TOP);
    if (g.n >= cap) return fail(&g, 0, "the grammar for this schema is longer than %zu bytes", cap ? cap - 1 : 0);
    *next_rule = g.n_rules;
    *n = g.n;
    return 0;
}

int64_t json_schema_grammar(const char *schema, size_t len, const char *name, char *out, size_t cap, char *err,
                            size_t err_cap)
{
    int next = 0, top;
    size_t n = 0;
    if (json_schema_rules(schema, len, name, 0, &next, &top, out, cap, &n, err, err_cap) < 0) return -1;
    int k = snprintf(out + n, cap - n, "root ::= s%d\n%s", top, json_schema_primitives);
    if (k < 0 || (size_t)k >= cap - n) {
        if (err && err_cap) snprintf(err, err_cap, "%s: the grammar for this schema is longer than %zu bytes", name, cap - 1);
        return -1;
    }
    return (int64_t)(n + (size_t)k);
}

int json_schema_is_text(const char *schema, size_t len)
{
    static Gen g; /* off the stack, as in json_schema_rules */
    memset(&g, 0, sizeof g);
    g.src = schema;
    g.len = len;
    g.name = "schema";
    return text_kind(&g, 0, 0) == 1; /* out NULL: nothing written */
}
