/* tool_calls.c - response_format and tool_choice to a grammar; the
 * tool-call splitter (see tool_calls.h). Tool calls use the format each
 * template shows its model (ToolFormat); in <tool_call> blocks, Qwen3.5's
 * form is parsed too:
 *   <tool_call>\n<function=NAME>\n<parameter=KEY>\nVALUE\n</parameter>\n</function>\n</tool_call>
 * A forced call in that form is held to the grammar json_schema_rules
 * writes with xml; its values are read back by the same table of which
 * parameters are strings (json_schema_is_text). */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "json.h"
#include "json_schema.h"
#include "tool_calls.h"

#define OPEN_TAG "<tool_call>"
#define CLOSE_TAG "</tool_call>"
#define LFM2_OPEN "<|tool_call_start|>"
#define LFM2_CLOSE "<|tool_call_end|>"
#define MAX_TOOLS 64

static int why_f(char *why, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int why_f(char *why, size_t cap, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, cap, fmt, ap);
    va_end(ap);
    for (char *c = why; *c; c++)
        if ((unsigned char)*c < 0x20) *c = '?'; /* names from the request: one line */
    return -1;
}

static void skip_ws(Json *j)
{
    while (j->pos < j->len && strchr(" \t\r\n", j->src[j->pos])) j->pos++;
}

static void at(Json *j, const char *body, size_t len, size_t pos)
{
    json_init(j, body, len, "request");
    j->pos = pos;
}

/* Finds key in the object at pos; its value's offset, or TOOL_ABSENT. */
static size_t member(const char *body, size_t len, size_t pos, const char *key)
{
    Json j;
    at(&j, body, len, pos);
    if (json_peek(&j) != JSON_OBJECT || json_enter(&j, '{') < 0) return TOOL_ABSENT;
    int r;
    while ((r = json_next(&j, '}')) > 0) {
        char k[64];
        size_t kl;
        if (json_key(&j, k, sizeof k - 1, &kl) < 0) {
            /* a long key: not ours */
            at(&j, body, len, j.pos);
            return TOOL_ABSENT;
        }
        k[kl] = '\0';
        skip_ws(&j);
        if (!strcmp(k, key)) return j.pos;
        if (json_skip(&j) < 0) return TOOL_ABSENT;
    }
    return TOOL_ABSENT;
}

/* A string value at pos into out; -1 if it is not a string that fits. */
static int string_at(const char *body, size_t len, size_t pos, char *out, size_t cap)
{
    if (pos == TOOL_ABSENT) return -1;
    Json j;
    at(&j, body, len, pos);
    size_t n;
    if (json_peek(&j) != JSON_STRING || json_string(&j, out, cap - 1, &n) < 0) return -1;
    out[n] = '\0';
    return 0;
}

/* The value at pos: its length in bytes (json_skip). */
static size_t value_len(const char *body, size_t len, size_t pos)
{
    Json j;
    at(&j, body, len, pos);
    if (json_skip(&j) < 0) return 0;
    return j.pos - pos;
}

/* bytes as a GBNF literal */
static size_t gbnf_literal(const char *s, size_t n, char *out, size_t cap)
{
    size_t o = 0;
#define PUT(c)                         \
    do {                               \
        if (o + 1 < cap) out[o] = (c); \
        o++;                           \
    } while (0)
    PUT('"');
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\') {
            PUT('\\');
            PUT((char)c);
        } else if (c == '\n') {
            PUT('\\');
            PUT('n');
        } else if (c < 0x20) {
            char hex[8];
            snprintf(hex, sizeof hex, "\\x%02x", c);
            for (int k = 0; hex[k]; k++) PUT(hex[k]);
        } else PUT((char)c);
    }
    PUT('"');
#undef PUT
    if (o < cap) out[o] = '\0';
    return o;
}

static int append(char *out, size_t cap, size_t *n, const char *s, size_t k)
{
    if (*n + k >= cap) return -1;
    memcpy(out + *n, s, k);
    *n += k;
    out[*n] = '\0';
    return 0;
}

/* One function's call: "<tool_call>\n{\"name\": NAME, \"arguments\": " ARGS "}\n</tool_call>", or
 * "{\"name\": NAME, \"parameters\": " ARGS "}" (TOOL_FORMAT_JSON), or "{\"name\": NAME,
 * \"arguments\": " ARGS "}" (TOOL_FORMAT_LFM2, inside the markers the root rule writes) */
static int tool_call_rule(ToolFormat format, const char *body, size_t len, size_t fn, int index, int *next_rule,
                          char *out, size_t cap, size_t *n, char *why, size_t why_cap)
{
    char name[256], esc[600], lit[1400], line[1600];
    if (string_at(body, len, member(body, len, fn, "name"), name, sizeof name) < 0)
        return why_f(why, why_cap, "tools[%d].function.name: expected a string (at most 255 bytes)", index);
    size_t params = member(body, len, fn, "parameters");
    int top = -1, xml = format == TOOL_FORMAT_XML;
    if (params != TOOL_ABSENT) {
        char label[64];
        snprintf(label, sizeof label, "tools[%d].function.parameters", index);
        size_t pl = value_len(body, len, params);
        if (json_schema_rules(body + params, pl, label, xml, next_rule, &top, out, cap, n, why, why_cap) < 0) return -1;
    }
    size_t el = json_escape(name, strlen(name), esc, sizeof esc);
    if (el >= sizeof esc) return why_f(why, why_cap, "tools[%d].function.name: too long", index);
    if (xml && strpbrk(name, ">\n"))
        return why_f(why, why_cap, "tools[%d].function.name: '>' or a newline (Qwen3.5's <function=NAME>)", index);
    char head[700];
    if (format == TOOL_FORMAT_JSON) snprintf(head, sizeof head, "{\"name\": %s, \"parameters\": ", esc);
    else if (format == TOOL_FORMAT_LFM2) snprintf(head, sizeof head, "{\"name\": %s, \"arguments\": ", esc);
    else if (xml) snprintf(head, sizeof head, OPEN_TAG "\n<function=%s>\n", name);
    else snprintf(head, sizeof head, OPEN_TAG "\n{\"name\": %s, \"arguments\": ", esc);
    if (gbnf_literal(head, strlen(head), lit, sizeof lit) >= sizeof lit) return why_f(why, why_cap, "tools[%d]: name too long", index);
    char args[32];
    if (top >= 0) snprintf(args, sizeof args, "s%d", top);
    else snprintf(args, sizeof args, xml ? "" : "object");
    int k = snprintf(line, sizeof line, "call%d ::= %s %s \"%s\"\n", index, lit, args,
                     xml ? "</function>\\n" CLOSE_TAG : format != TOOL_FORMAT_TAGGED ? "}" : "}\\n" CLOSE_TAG);
    if (k < 0 || (size_t)k >= sizeof line || append(out, cap, n, line, (size_t)k) < 0)
        return why_f(why, why_cap, "tools: the grammar is longer than %zu bytes", cap);
    return 0;
}

/* xt: any text without "</parameter>" (where the parser ends a value) or
 * "</tool_call>" (where the splitter ends a block), as a machine of rules
 * in tail position: xl after '<', xp and xq along the two tags. Appends to
 * out (cap bytes); its length. */
static size_t text_rules(char *out, size_t cap)
{
    size_t k = (size_t)snprintf(out, cap,
                                "xt ::= ( [^<] xt | \"<\" xl )?\nxl ::= ( \"<\" xl | [^/<] xt | \"/\" ( [^pt<] xt | \"<\" xl | "
                                "\"p\" xp | \"t\" xq )? )?\n");
    static const char *const tags[2] = {"xp arameter>", "xq ool_call>"};
    for (int w = 0; w < 2; w++) {
        const char *c = tags[w] + 3;
        size_t m = strlen(c);
        k += (size_t)snprintf(out + k, cap - k, "%.2s ::=", tags[w]);
        for (size_t i = 0; i < m; i++)
            k += (size_t)snprintf(out + k, cap - k, " ( [^%c<] xt | \"<\" xl%s%.*s%s", c[i], i + 1 < m ? " | \"" : "",
                                  i + 1 < m, c + i, i + 1 < m ? "\"" : "");
        for (size_t i = 0; i < m; i++) k += (size_t)snprintf(out + k, cap - k, " )?");
        k += (size_t)snprintf(out + k, cap - k, "\n");
    }
    return k;
}

/* kind (unless 0), s[0..k) and a NUL at out + n where they fit cap: the new n */
static size_t put_name(char *out, size_t cap, size_t n, char kind, const char *s, size_t k)
{
    if (kind && n < cap) out[n] = kind;
    n += kind != 0;
    for (size_t i = 0; i <= k; i++, n++)
        if (n < cap) out[n] = i < k ? s[i] : '\0';
    return n;
}

/* The table of string parameters (ToolSplit.kinds): per function its
 * name and a NUL, then per property a kind byte ('s' or 'j'), its name
 * and a NUL, then a NUL. Its length; written where it fits cap. */
static size_t tool_kinds(const char *body, size_t len, size_t tools, char *out, size_t cap)
{
    size_t n = 0, k;
    char s[1024];
    Json j, p;
    at(&j, body, len, tools);
    if (json_enter(&j, '[') < 0) return 0;
    while (json_next(&j, ']') > 0) {
        skip_ws(&j);
        size_t fn = member(body, len, j.pos, "function");
        if (json_skip(&j) < 0) break;
        if (string_at(body, len, member(body, len, fn, "name"), s, 256) < 0) continue;
        n = put_name(out, cap, n, 0, s, strlen(s));
        at(&p, body, len, member(body, len, member(body, len, fn, "parameters"), "properties"));
        if (json_enter(&p, '{') == 0)
            while (json_next(&p, '}') > 0 && json_key(&p, s, sizeof s, &k) == 0) {
                skip_ws(&p);
                size_t v = p.pos;
                if (json_skip(&p) < 0) break;
                n = put_name(out, cap, n, json_schema_is_text(body + v, p.pos - v) ? 's' : 'j', s, k);
            }
        n = put_name(out, cap, n, 0, s, 0);
    }
    return n;
}

int tool_constraint(const char *body, size_t len, size_t response_format, size_t tool_choice, size_t tools,
                   ChatTemplate tmpl, char *gbnf, size_t cap, ToolConstraint *out, char *why, size_t why_cap)
{
    memset(out, 0, sizeof *out);
    size_t n = 0;
    gbnf[0] = '\0';
    /* tools: each entry's function object */
    size_t fns[MAX_TOOLS];
    int n_tools = 0;
    if (tools != TOOL_ABSENT) {
        Json j;
        at(&j, body, len, tools);
        if (json_peek(&j) != JSON_ARRAY) return why_f(why, why_cap, "tools: expected an array");
        json_enter(&j, '[');
        int r;
        while ((r = json_next(&j, ']')) > 0) {
            skip_ws(&j);
            if (n_tools >= MAX_TOOLS) return why_f(why, why_cap, "tools: more than %d", MAX_TOOLS);
            size_t fn = member(body, len, j.pos, "function");
            if (fn == TOOL_ABSENT || json_peek(&(Json){.src = body, .len = len, .pos = fn}) != JSON_OBJECT)
                return why_f(why, why_cap, "tools[%d]: expected {\"type\": \"function\", \"function\": {...}}", n_tools);
            fns[n_tools++] = fn;
            if (json_skip(&j) < 0) return why_f(why, why_cap, "tools: malformed");
        }
    }
    /* tool_choice */
    int choice = n_tools ? 1 : 0; /* 0 none, 1 auto, 2 required, 3 named */
    int named = -1;
    if (tool_choice != TOOL_ABSENT) {
        char c[64];
        Json j;
        at(&j, body, len, tool_choice);
        if (json_peek(&j) == JSON_STRING) {
            if (string_at(body, len, tool_choice, c, sizeof c) < 0) return why_f(why, why_cap, "tool_choice: unknown value");
            if (!strcmp(c, "none")) choice = 0;
            else if (!strcmp(c, "auto")) choice = n_tools ? 1 : 0;
            else if (!strcmp(c, "required")) choice = 2;
            else return why_f(why, why_cap, "tool_choice: '%s' is not none, auto, required or a function", c);
        } else if (json_peek(&j) == JSON_OBJECT) {
            char want[256];
            size_t fn = member(body, len, tool_choice, "function");
            if (fn == TOOL_ABSENT || string_at(body, len, member(body, len, fn, "name"), want, sizeof want) < 0)
                return why_f(why, why_cap, "tool_choice: expected {\"type\": \"function\", \"function\": {\"name\": ...}}");
            for (int i = 0; i < n_tools && named < 0; i++) {
                char have[256];
                if (string_at(body, len, member(body, len, fns[i], "name"), have, sizeof have) == 0 && !strcmp(have, want))
                    named = i;
            }
            if (named < 0) return why_f(why, why_cap, "tool_choice: no tool is called '%s'", want);
            choice = 3;
        } else {
            return why_f(why, why_cap, "tool_choice: expected a string or an object");
        }
        if (choice >= 2 && n_tools == 0) return why_f(why, why_cap, "tool_choice: '%s' needs tools", choice == 2 ? "required" : "a function");
    }
    int qwen35 = tmpl == CHAT_TEMPLATE_QWEN35 || tmpl == CHAT_TEMPLATE_QWEN35_THINK;
    if (tmpl == CHAT_TEMPLATE_LLAMA31) out->format = TOOL_FORMAT_JSON;
    else if (tmpl == CHAT_TEMPLATE_LFM2) out->format = TOOL_FORMAT_LFM2;
    else if (qwen35) out->format = TOOL_FORMAT_XML;
    else if (choice > 0 && tmpl == CHAT_TEMPLATE_PHI4)
        return why_f(why, why_cap,
                     "tools: the chat template 'phi4' (Phi-4-mini) takes tools only as a string inside a system message "
                     "and defines no tool-call format: pith cannot render or parse tool calls for it");
    else if (choice > 0 && tmpl != CHAT_TEMPLATE_QWEN3 && tmpl != CHAT_TEMPLATE_QWEN25 && tmpl != CHAT_TEMPLATE_SMOLLM3)
        return why_f(why, why_cap,
                     "tools: the chat template '%s' has no tool-call format pith knows (qwen3, qwen3.5, qwen2.5, "
                     "llama3.1, smollm3 and lfm2 have; --template overrides)",
                     chat_template_name(tmpl));
    /* a forced call's values are read back by the table of string parameters: it must fit */
    if (choice >= 2 && qwen35 && tool_kinds(body, len, tools, NULL, 0) > TOOL_KINDS_CAP)
        return why_f(why, why_cap, "tools: over %d bytes of function and parameter names (Qwen3.5's bound)", TOOL_KINDS_CAP);
    out->render = choice > 0;
    out->parse = choice > 0;
    out->forced = choice >= 2;

    /* response_format */
    if (response_format != TOOL_ABSENT) {
        char type[64];
        if (string_at(body, len, member(body, len, response_format, "type"), type, sizeof type) < 0)
            return why_f(why, why_cap, "response_format: expected {\"type\": \"text\", \"json_object\" or \"json_schema\"}");
        size_t schema = TOOL_ABSENT;
        const char *label = "response_format.schema";
        if (!strcmp(type, "text")) {
            /* nothing */
        } else if (!strcmp(type, "json_object")) {
            schema = member(body, len, response_format, "schema");
            if (schema == TOOL_ABSENT) {
                size_t k = strlen(json_schema_object_grammar);
                if (append(gbnf, cap, &n, json_schema_object_grammar, k) < 0) return why_f(why, why_cap, "internal error: grammar buffer");
            }
        } else if (!strcmp(type, "json_schema")) {
            size_t js = member(body, len, response_format, "json_schema");
            if (js == TOOL_ABSENT) return why_f(why, why_cap, "response_format.json_schema: missing");
            schema = member(body, len, js, "schema");
            label = "response_format.json_schema.schema";
            if (schema == TOOL_ABSENT) return why_f(why, why_cap, "response_format.json_schema.schema: missing");
        } else {
            return why_f(why, why_cap, "response_format.type: '%s' is not text, json_object or json_schema", type);
        }
        if (schema != TOOL_ABSENT) {
            int64_t k = json_schema_grammar(body + schema, value_len(body, len, schema), label, gbnf, cap, why, why_cap);
            if (k < 0) return -1;
            n = (size_t)k;
        }
        if (n && out->forced)
            return why_f(why, why_cap, "response_format: cannot be combined with tool_choice required or a named function");
        if (n) out->what = "response_format";
    }

    /* forced tool calls: their arguments follow each function's parameters */
    if (out->forced) {
        int next = 0;
        for (int i = 0; i < n_tools; i++) {
            if (named >= 0 && i != named) continue;
            if (tool_call_rule(out->format, body, len, fns[i], i, &next, gbnf, cap, &n, why, why_cap) < 0) return -1;
        }
        char root[1536 + 16 * MAX_TOOLS];
        size_t r = 0;
        if (named >= 0 && out->format == TOOL_FORMAT_LFM2)
            r = (size_t)snprintf(root, sizeof root, "root ::= \"" LFM2_OPEN "[\" call%d \"]" LFM2_CLOSE "\"\n", named);
        else if (named >= 0) r = (size_t)snprintf(root, sizeof root, "root ::= call%d\n", named);
        else {
            r = (size_t)snprintf(root, sizeof root, "call ::=");
            for (int i = 0; i < n_tools; i++) r += (size_t)snprintf(root + r, sizeof root - r, "%s call%d", i ? " |" : "", i);
            /* LFM2: a list in its markers; Llama 3.1's template takes one call per message */
            if (out->format == TOOL_FORMAT_LFM2)
                r += (size_t)snprintf(root + r, sizeof root - r,
                                      "\nroot ::= \"" LFM2_OPEN "[\" call ( \", \" call )* \"]" LFM2_CLOSE "\"\n");
            else
                r += (size_t)snprintf(root + r, sizeof root - r, "\nroot ::= call%s\n",
                                      out->format == TOOL_FORMAT_JSON ? "" : " ( \"\\n\" call )*");
        }
        const char *prim = json_schema_primitives;
        if (out->format == TOOL_FORMAT_XML) {
            /* raw text, and JSON strings without '<' (either could end the call early) */
            r += text_rules(root + r, sizeof root - r);
            r += (size_t)snprintf(root + r, sizeof root - r, "char ::= [^\"\\\\\\x00-\\x1f<] | \"\\\\\" ( [\"\\\\/bfnrt] | \"u\" [0-9a-fA-F]{4} )\n");
            prim = strchr(prim, '\n') + 1;
        }
        if (append(gbnf, cap, &n, root, r) < 0 || append(gbnf, cap, &n, prim, strlen(prim)) < 0)
            return why_f(why, why_cap, "tools: the grammar is longer than %zu bytes", cap);
        out->what = "tools";
    }
    out->grammar_len = n;
    return 0;
}

/* ---- The splitter ---------------------------------------------------------------- */

#define PYTHON_TAG "<|python_tag|>"

void tool_split_init(ToolSplit *t, ToolFormat format, char *buf, size_t cap,
                     void (*content)(void *, const char *, size_t),
                     void (*call)(void *, int, const char *, size_t, const char *, size_t), void *ctx)
{
    memset(t, 0, sizeof *t);
    t->format = format;
    t->buf = buf;
    t->cap = cap;
    t->content = content;
    t->call = call;
    t->ctx = ctx;
}

static const char *open_tag(const ToolSplit *t)
{
    return t->format == TOOL_FORMAT_JSON ? PYTHON_TAG : t->format == TOOL_FORMAT_LFM2 ? LFM2_OPEN : OPEN_TAG;
}

static const char *close_tag(const ToolSplit *t)
{
    return t->format == TOOL_FORMAT_LFM2 ? LFM2_CLOSE : CLOSE_TAG;
}

static void flush_ws(ToolSplit *t)
{
    if (t->n_ws) t->content(t->ctx, t->ws, t->n_ws);
    t->n_ws = 0;
}

static void emit_content(ToolSplit *t, const char *p, size_t n)
{
    flush_ws(t);
    if (n) t->content(t->ctx, p, n);
}

/* The block so far back to content, as it was (calls of it given already
 * stay given: n_bad); the splitter outside. */
static void block_to_content(ToolSplit *t)
{
    if (t->tagged) emit_content(t, open_tag(t), strlen(open_tag(t)));
    emit_content(t, t->buf, t->n);
    t->n_bad += t->streamed + t->in_args;
    t->inside = t->in_args = t->streamed = 0;
    t->n = 0;
}

/* Scratch after the block for decoded arguments. */
typedef struct {
    char *p;
    size_t cap, n;
} Scratch;

static int scratch_put(Scratch *s, const char *p, size_t n)
{
    if (s->n + n > s->cap) return -1;
    memcpy(s->p + s->n, p, n);
    s->n += n;
    return 0;
}

/* One {"name": ..., "arguments" or "parameters": ...} object at j: the
 * name into name, the arguments' JSON text (in the block or decoded into
 * sc). 0, or -1 if it is not a call. */
static int parse_json_call(Json *j, Scratch *sc, char *name, size_t *name_len, const char **args, size_t *args_len)
{
    int have_name = 0, r = 0;
    *args = NULL;
    if (json_peek(j) != JSON_OBJECT || json_enter(j, '{') != 0) return -1;
    while ((r = json_next(j, '}')) > 0) {
        char k[32];
        size_t kl;
        if (json_key(j, k, sizeof k - 1, &kl) < 0) return -1;
        k[kl] = '\0';
        skip_ws(j);
        int is_args = !strcmp(k, "arguments") || !strcmp(k, "parameters");
        if (!strcmp(k, "name") && json_peek(j) == JSON_STRING && json_string(j, name, 255, name_len) == 0) {
            have_name = 1;
        } else if (is_args && json_peek(j) == JSON_OBJECT) {
            size_t at = j->pos;
            if (json_skip(j) < 0) return -1;
            *args = j->src + at;
            *args_len = j->pos - at;
        } else if (is_args && json_peek(j) == JSON_STRING) {
            /* arguments already as a JSON text in a string */
            size_t dl;
            if (json_string(j, sc->p + sc->n, sc->cap - sc->n, &dl) < 0) return -1;
            *args = sc->p + sc->n;
            *args_len = dl;
            sc->n += dl;
        } else if (json_skip(j) < 0) return -1;
    }
    return r == 0 && have_name && *name_len > 0 && *args ? 0 : -1;
}

/* ---- LFM2's Python calls: name(key=value, ...) with Python literals ---- */

static void py_ws(const char *s, size_t n, size_t *i)
{
    while (*i < n && strchr(" \t\r\n", s[*i])) (*i)++;
}

static int py_ident(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.' ||
           c == '-';
}

/* A Python literal at s[*i] as JSON text into sc: strings in either quote
 * (escapes decoded, written as json_escape does), numbers, True, False,
 * None, lists and tuples as arrays, dicts with string keys as objects. */
static int py_value(const char *s, size_t n, size_t *i, Scratch *sc, int depth)
{
    py_ws(s, n, i);
    if (*i >= n || depth > 32) return -1;
    char c = s[*i];
    if (c == '"' || c == '\'') {
        char dec[256];
        size_t k = 0;
        if (scratch_put(sc, "\"", 1) < 0) return -1;
        for ((*i)++; *i < n && s[*i] != c; (*i)++) {
            char b = s[*i];
            if (b == '\\') {
                if (++*i >= n) return -1;
                char e = s[*i];
                b = e == 'n' ? '\n' : e == 't' ? '\t' : e == 'r' ? '\r' : e;
                if (e == 'x' || e == 'u') return -1; /* not in a model's call: not a call */
            }
            dec[k++] = b;
            if (k == sizeof dec) {
                char esc[sizeof dec * 6 + 2];
                size_t el = json_escape(dec, k, esc, sizeof esc);
                if (scratch_put(sc, esc + 1, el - 2) < 0) return -1;
                k = 0;
            }
        }
        if (*i >= n) return -1;
        (*i)++;
        char esc[sizeof dec * 6 + 2];
        size_t el = json_escape(dec, k, esc, sizeof esc);
        return scratch_put(sc, esc + 1, el - 1); /* and the closing quote */
    }
    if (c == '[' || c == '(' || c == '{') {
        char close = c == '[' ? ']' : c == '(' ? ')' : '}';
        if (scratch_put(sc, c == '{' ? "{" : "[", 1) < 0) return -1;
        (*i)++;
        for (int first = 1;; first = 0) {
            py_ws(s, n, i);
            if (*i < n && s[*i] == close) break;
            if (!first) {
                if (*i >= n || s[*i] != ',') return -1;
                (*i)++;
                py_ws(s, n, i);
                if (*i < n && s[*i] == close) break; /* a trailing comma */
                if (scratch_put(sc, ", ", 2) < 0) return -1;
            }
            if (c == '{') {
                py_ws(s, n, i);
                if (*i >= n || (s[*i] != '"' && s[*i] != '\'')) return -1; /* JSON keys are strings */
                if (py_value(s, n, i, sc, depth + 1) < 0) return -1;
                py_ws(s, n, i);
                if (*i >= n || s[*i] != ':') return -1;
                (*i)++;
                if (scratch_put(sc, ": ", 2) < 0) return -1;
            }
            if (py_value(s, n, i, sc, depth + 1) < 0) return -1;
        }
        (*i)++;
        return scratch_put(sc, c == '{' ? "}" : "]", 1);
    }
    static const char *const words[][2] = {{"True", "true"}, {"False", "false"}, {"None", "null"},
                                           {"true", "true"}, {"false", "false"}, {"null", "null"}};
    for (size_t w = 0; w < sizeof words / sizeof words[0]; w++) {
        size_t l = strlen(words[w][0]);
        if (*i + l <= n && !memcmp(s + *i, words[w][0], l) && (*i + l == n || !py_ident(s[*i + l]))) {
            *i += l;
            return scratch_put(sc, words[w][1], strlen(words[w][1]));
        }
    }
    /* a number as JSON writes one */
    Json j;
    json_init(&j, s, n, "tool call");
    j.pos = *i;
    if (json_peek(&j) != JSON_NUMBER || json_skip(&j) < 0) return -1;
    size_t at = *i;
    *i = j.pos;
    return scratch_put(sc, s + at, *i - at);
}

/* name(key=value, ...) at s[*i]: the arguments as a JSON object into sc. */
static int py_call(const char *s, size_t n, size_t *i, Scratch *sc, char *name, size_t *name_len, const char **args,
                   size_t *args_len)
{
    py_ws(s, n, i);
    size_t k = 0;
    while (*i < n && py_ident(s[*i]) && k < 255) name[k++] = s[(*i)++];
    *name_len = k;
    py_ws(s, n, i);
    if (!k || *i >= n || s[*i] != '(') return -1;
    (*i)++;
    size_t start = sc->n;
    if (scratch_put(sc, "{", 1) < 0) return -1;
    for (int first = 1;; first = 0) {
        py_ws(s, n, i);
        if (*i < n && s[*i] == ')') break;
        if (!first) {
            if (*i >= n || s[*i] != ',') return -1;
            (*i)++;
            py_ws(s, n, i);
            if (*i < n && s[*i] == ')') break;
            if (scratch_put(sc, ", ", 2) < 0) return -1;
        }
        size_t key = *i;
        while (*i < n && py_ident(s[*i])) (*i)++;
        size_t key_len = *i - key;
        py_ws(s, n, i);
        if (!key_len || *i >= n || s[*i] != '=') return -1;
        (*i)++;
        char esc[600];
        size_t el = json_escape(s + key, key_len, esc, sizeof esc);
        if (el >= sizeof esc || scratch_put(sc, esc, el) < 0 || scratch_put(sc, ": ", 2) < 0) return -1;
        if (py_value(s, n, i, sc, 0) < 0) return -1;
    }
    (*i)++;
    if (scratch_put(sc, "}", 1) < 0) return -1;
    *args = sc->p + start;
    *args_len = sc->n - start;
    return 0;
}

static size_t skip_space(const char *p, size_t n, size_t i)
{
    while (i < n && (p[i] == ' ' || p[i] == '\n' || p[i] == '\r' || p[i] == '\t')) i++;
    return i;
}

/* The kind of parameter key of function name in t's table ('s', 'j'), or 0. */
static int kind_of(const ToolSplit *t, const char *name, size_t name_len, const char *key, size_t key_len)
{
    const char *p = t->kinds, *end = p ? p + t->n_kinds : p;
    while (p < end) {
        size_t l = strlen(p);
        int fn = l == name_len && !memcmp(p, name, l);
        for (p += l + 1; p < end && *p; p += l + 1) {
            l = strlen(p);
            if (fn && l == key_len + 1 && !memcmp(p + 1, key, key_len)) return *p;
        }
        p++;
    }
    return 0;
}

/* A value of Qwen3.5's call as JSON: of a string parameter (kind 's'), the
 * text as a string; else a number, object, array, true, false or null as
 * it is when the whole text is one (as llama.cpp reads them without a
 * schema; kind 'j': a JSON string too, and True, False and None as the
 * template prints them), anything else as a string. Appends to out at *o. */
static int xml_value(const char *v, size_t n, int kind, char *out, size_t cap, size_t *o)
{
    static const char *const py[3][2] = {{"True", "true"}, {"False", "false"}, {"None", "null"}};
    for (int k = 0; kind == 'j' && k < 3; k++)
        if (n == strlen(py[k][0]) && !memcmp(v, py[k][0], n)) v = py[k][1], n = strlen(v), k = 3;
    Json j;
    json_init(&j, v, n, "value");
    JsonType type = json_peek(&j);
    if (kind != 's' && type != JSON_NONE && (type != JSON_STRING || kind == 'j') && json_skip(&j) == 0 &&
        json_end(&j) == 0) {
        if (cap - *o < n) return -1;
        memcpy(out + *o, v, n);
        *o += n;
        return 0;
    }
    size_t e = json_escape(v, n, NULL, 0);
    if (cap - *o < e + 1) return -1;
    json_escape(v, n, out + *o, e + 1);
    *o += e;
    return 0;
}

/* p[i..n) begins with tag (1), is a beginning of it and more may come
 * (0), or neither (-1). */
static int tag_at(const char *p, size_t n, size_t i, const char *tag, int whole)
{
    size_t k = strlen(tag), m = n - i < k ? n - i : k;
    if (memcmp(p + i, tag, m)) return -1;
    return m == k ? 1 : whole ? -1 : 0;
}

/* NAME> at *i: its offset and length (at most max bytes), *i after '>'.
 * 0, 1 if more may come, -1 if it is not one. */
static int name_at(const char *p, size_t n, size_t *i, size_t *at, size_t *len, size_t max, int whole)
{
    size_t e = *i;
    while (e < n && p[e] != '>' && p[e] != '\n') e++;
    if (e - *i > max) return -1;
    if (e == n) return whole ? -1 : 1;
    if (p[e] != '>' || e == *i) return -1;
    *at = *i, *len = e - *i, *i = e + 1;
    return 0;
}

/* bytes as JSON text into sc, with the quotes or without */
static int put_json(Scratch *sc, const char *p, size_t n, int quotes)
{
    size_t e = json_escape(p, n, NULL, 0);
    if (sc->cap - sc->n < e + 1) return -1;
    json_escape(p, n, sc->p + sc->n, e + 1);
    if (!quotes) memmove(sc->p + sc->n, sc->p + sc->n + 1, e -= 2);
    sc->n += e;
    return 0;
}

/* Qwen3.5's block: <function=NAME> then <parameter=KEY>VALUE</parameter>
 * blocks (one newline after the opening tag and before the closing one
 * belong to the tags), </function>. Read on from x over p[0..n), the
 * block so far (whole: all of it, without its tags), appending to sc the
 * arguments' JSON as far as it is certain whatever follows: "{", each key,
 * a string parameter's text as it comes (less a tail that may be the
 * closing tag or its newline), another value when it closes, "}" at the
 * end. So the pieces of successive reads join into what one read of the
 * whole block writes. 0 when the whole block was read, 1 when more is
 * needed, -1 if it is not a call. */
static int xml_read(const ToolSplit *t, XmlRead *x, const char *p, size_t n, int whole, Scratch *sc)
{
    for (;;) {
        size_t i = x->i, at, len;
        if (x->stage == 2) {
            /* the value: up to the first "</parameter>" */
            size_t e = x->scan;
            while (e < n && memcmp(p + e, "</parameter>", n - e < 12 ? n - e : 12)) e++;
            x->scan = e;
            int closed = n - e >= 12;
            if (!closed && whole) return -1;
            if (e > x->v && p[e - 1] == '\n') e--;
            if (x->kind == 's') {
                if (put_json(sc, p + x->given, e - x->given, 0) < 0 || (closed && scratch_put(sc, "\"", 1) < 0)) return -1;
                x->given = e;
            } else if (closed && xml_value(p + x->v, e - x->v, x->kind, sc->p, sc->cap, &sc->n) < 0) {
                return -1;
            }
            if (!closed) return 1;
            x->i = x->scan + 12;
            x->stage = 1;
            continue;
        }
        i = skip_space(p, n, i);
        if (x->stage == 3) {
            if (!whole) return 1;
            return i == n && scratch_put(sc, "}", 1) == 0 ? 0 : -1;
        }
        if (i == n) return whole ? -1 : 1;
        if (x->stage == 0) {
            int r = tag_at(p, n, i, "<function=", whole);
            if (r <= 0) return r < 0 ? -1 : 1;
            i += 10;
            if ((r = name_at(p, n, &i, &x->name, &x->name_len, 256, whole)) != 0) return r;
            if (scratch_put(sc, "{", 1) < 0) return -1;
            x->stage = 1;
            x->i = i;
            continue;
        }
        int end = tag_at(p, n, i, "</function>", whole), par = tag_at(p, n, i, "<parameter=", whole);
        if (end > 0) {
            x->i = i + 11;
            x->stage = 3;
            continue;
        }
        if (par <= 0) return end < 0 && par < 0 ? -1 : 1;
        i += 11;
        int r = name_at(p, n, &i, &at, &len, (size_t)-1, whole);
        if (r != 0) return r;
        if (i == n && !whole) return 1; /* a newline may follow */
        x->v = x->scan = x->given = i + (i < n && p[i] == '\n');
        x->kind = kind_of(t, p + x->name, x->name_len, p + at, len);
        if ((x->k++ && scratch_put(sc, ", ", 2) < 0) || put_json(sc, p + at, len, 1) < 0 ||
            scratch_put(sc, x->kind == 's' ? ": \"" : ": ", 2 + (x->kind == 's')) < 0)
            return -1;
        x->stage = 2;
        x->i = i;
    }
}

/* The calls of the block in buf[0..n) (without the tags; buf holds used
 * bytes with them): each to call() when all parse (emit), else -1. */
static int parse_block(ToolSplit *t, size_t n, size_t used, int emit)
{
    Scratch sc = {t->buf + used, t->cap - used, 0};
    char name[256];
    size_t name_len = 0, args_len = 0;
    const char *args = NULL;
    if (t->format != TOOL_FORMAT_LFM2) {
        Json j;
        json_init(&j, t->buf, n, "tool call");
        skip_ws(&j);
        if (parse_json_call(&j, &sc, name, &name_len, &args, &args_len) < 0 || json_end(&j) != 0) {
            /* Qwen3.5's <function=NAME> form: the arguments as JSON into the scratch */
            XmlRead x = {0};
            sc.n = 0;
            if (xml_read(t, &x, t->buf, n, 1, &sc) != 0) return -1;
            memcpy(name, t->buf + x.name, name_len = x.name_len);
            args = sc.p;
            args_len = sc.n;
        }
        if (emit && !t->streamed) t->call(t->ctx, t->n_calls++, name, name_len, args, args_len);
        return 0;
    }
    /* LFM2: a list of Python calls or JSON objects */
    const char *s = t->buf;
    size_t i = 0;
    py_ws(s, n, &i);
    if (i >= n || s[i++] != '[') return -1;
    int given = t->streamed;
    for (int first = 1;; first = 0) {
        py_ws(s, n, &i);
        if (i < n && s[i] == ']' && !first) break;
        if (!first) {
            if (i >= n || s[i] != ',') return -1;
            i++;
            py_ws(s, n, &i);
        }
        if (i < n && s[i] == '{') {
            Json j;
            json_init(&j, s, n, "tool call");
            j.pos = i;
            if (parse_json_call(&j, &sc, name, &name_len, &args, &args_len) < 0) return -1;
            i = j.pos;
        } else if (py_call(s, n, &i, &sc, name, &name_len, &args, &args_len) < 0) {
            return -1;
        }
        if (emit && given-- <= 0) t->call(t->ctx, t->n_calls++, name, name_len, args, args_len);
    }
    i++;
    py_ws(s, n, &i);
    return i == n ? 0 : -1;
}

/* Progressive, Qwen3.5: the block buf[0..n) read on (xml_read); the
 * call's index and name once its name is known, then what is certain of
 * its arguments, one piece per read. A block that turns out not to be a
 * call is left to close_block. */
static void xml_progress(ToolSplit *t, size_t n, int whole)
{
    Scratch sc = {t->buf + t->n, t->cap - t->n, 0};
    int was = t->x.stage;
    if (was < 0) return;
    if (xml_read(t, &t->x, t->buf, n, whole, &sc) < 0) {
        t->x.stage = -1;
        return;
    }
    if (!was && t->x.stage) t->call(t->ctx, t->n_calls++, t->buf + t->x.name, t->x.name_len, NULL, 0), t->streamed = 1;
    if (sc.n) t->args_piece(t->ctx, t->n_calls - 1, sc.p, sc.n);
}

/* The block in buf[0..n) (without the tags): calls, or content as it was. */
static void close_block(ToolSplit *t, size_t n)
{
    size_t used = t->n;
    if (t->format == TOOL_FORMAT_XML && t->streamed) {
        /* its call is given: the rest of its arguments, or all to content */
        xml_progress(t, n, 1);
        if (t->x.stage < 0) block_to_content(t);
        t->n_ws = 0;
        t->inside = t->streamed = 0;
        t->n = 0;
        return;
    }
    if (parse_block(t, n, used, 0) < 0) {
        block_to_content(t);
        return;
    }
    t->n_ws = 0; /* whitespace before a call is not content */
    t->inside = 0;
    t->n = 0;
    parse_block(t, n, used, 1);
    t->streamed = 0;
}

void tool_split_progressive(ToolSplit *t, void (*args_piece)(void *, int, const char *, size_t), int held)
{
    /* other formats' calls the model chose: whole, once they parse */
    if (held || t->format == TOOL_FORMAT_XML) t->args_piece = args_piece;
    t->held = held;
}

void tool_split_schemas(ToolSplit *t, const char *body, size_t len, size_t tools, char *mem, size_t cap)
{
    size_t n = tool_kinds(body, len, tools, mem, cap);
    t->kinds = n <= cap ? mem : NULL;
    t->n_kinds = n <= cap ? n : 0;
}

static void give_piece(ToolSplit *t)
{
    if (t->in_args && t->n > t->piece_at) t->args_piece(t->ctx, t->n_calls - 1, t->buf + t->piece_at, t->n - t->piece_at);
    t->piece_at = t->n;
}

/* Progressive: the byte just added to the block. A call's head (the
 * grammar's: {"name": NAME, "arguments": or "parameters": ) starts it; its
 * arguments' bytes are given until their value closes. */
static void progress(ToolSplit *t)
{
    char c = t->buf[t->n - 1];
    if (t->in_args) {
        if (t->args_in_string) {
            if (t->args_escaped) t->args_escaped = 0;
            else if (c == '\\') t->args_escaped = 1;
            else if (c == '"') t->args_in_string = 0;
        } else if (c == '"') {
            t->args_in_string = 1;
        } else if (c == '{' || c == '[') {
            t->args_depth++;
        } else if ((c == '}' || c == ']') && --t->args_depth == 0) {
            give_piece(t);
            t->in_args = 0;
            t->streamed++;
        }
        return;
    }
    static const char *const keys[] = {", \"arguments\": ", ", \"parameters\": "};
    for (int k = 0; k < 2; k++) {
        size_t kl = strlen(keys[k]);
        if (t->n < kl || memcmp(t->buf + t->n - kl, keys[k], kl) != 0) continue;
        /* the name: the string from the last {"name": to here */
        size_t end = t->n - kl, start = 0;
        for (size_t p = end; p-- > 0 && !start;)
            if (p + 9 <= end && memcmp(t->buf + p, "{\"name\": ", 9) == 0) start = p + 9;
        if (!start) return;
        Json j;
        json_init(&j, t->buf, end, "tool call");
        j.pos = start;
        char name[256];
        size_t name_len;
        if (json_peek(&j) != JSON_STRING || json_string(&j, name, sizeof name, &name_len) < 0 || j.pos != end) return;
        t->call(t->ctx, t->n_calls++, name, name_len, NULL, 0);
        t->in_args = 1;
        t->args_depth = t->args_in_string = t->args_escaped = 0;
        t->piece_at = t->n;
        return;
    }
}

static void push_byte(ToolSplit *t, char c);

/* TOOL_FORMAT_JSON: one byte of a block, the object followed to its end. */
static void push_json(ToolSplit *t, char c)
{
    if (t->depth == 0 && c != '{' && !strchr(" \t\r\n", c)) {
        /* not an object after <|python_tag|>: content, and c starts over */
        block_to_content(t);
        push_byte(t, c);
        return;
    }
    t->buf[t->n++] = c;
    if (t->args_piece) progress(t);
    if (t->in_string) {
        if (t->escaped) t->escaped = 0;
        else if (c == '\\') t->escaped = 1;
        else if (c == '"') t->in_string = 0;
    } else if (c == '"') {
        t->in_string = 1;
    } else if (c == '{' || c == '[') {
        t->depth++;
    } else if ((c == '}' || c == ']') && --t->depth == 0) {
        close_block(t, t->n);
    }
}

static void start_block(ToolSplit *t, int tagged)
{
    t->inside = 1;
    t->tagged = tagged;
    t->n = 0;
    t->depth = t->in_string = t->escaped = 0;
    memset(&t->x, 0, sizeof t->x);
}

static void push_byte(ToolSplit *t, char c)
{
    if (t->inside) {
        if (t->n >= t->cap) {
            /* longer than planned: it stays content */
            block_to_content(t);
        } else if (t->format == TOOL_FORMAT_JSON) {
            push_json(t, c);
            return;
        } else {
            t->buf[t->n++] = c;
            if (t->args_piece && t->format != TOOL_FORMAT_XML) progress(t);
            const char *close = close_tag(t);
            size_t cl = strlen(close);
            if (t->n >= cl && memcmp(t->buf + t->n - cl, close, cl) == 0) close_block(t, t->n - cl);
            return;
        }
    }
    const char *tag = open_tag(t);
    size_t tag_len = strlen(tag);
    if (t->n_hold || c == tag[0]) {
        t->hold[t->n_hold++] = c;
        if (memcmp(t->hold, tag, t->n_hold) == 0) {
            if (t->n_hold == tag_len) {
                start_block(t, 1);
                t->n_hold = 0;
            }
            return;
        }
        /* not the tag: all but the last byte are content, the last starts over */
        size_t k = t->n_hold - 1;
        t->n_hold = 0;
        emit_content(t, t->hold, k);
        push_byte(t, c);
        return;
    }
    if (t->format == TOOL_FORMAT_JSON && c == '{') {
        start_block(t, 0);
        push_json(t, c);
        return;
    }
    if (c == ' ' || c == '\n' || c == '\r' || c == '\t') {
        if (t->n_ws == sizeof t->ws) flush_ws(t);
        t->ws[t->n_ws++] = c;
        return;
    }
    emit_content(t, &c, 1);
}

void tool_split_push(ToolSplit *t, const char *p, size_t n)
{
    for (size_t i = 0; i < n; i++) push_byte(t, p[i]);
    if (t->in_args) give_piece(t); /* one piece per push: a token's bytes */
    if (t->inside && t->args_piece && t->format == TOOL_FORMAT_XML) xml_progress(t, t->n, 0);
}

void tool_split_finish(ToolSplit *t)
{
    /* a block cut short whose call was given already: its arguments were
     * given as far as they came (finish_reason says it was cut) */
    if (t->inside && t->held && (t->in_args || t->streamed)) t->inside = 0, t->in_args = 0, t->streamed = 0, t->n = 0;
    if (t->inside) block_to_content(t);
    if (t->n_hold) emit_content(t, t->hold, t->n_hold);
    t->n_hold = 0;
    if (t->n_calls == 0) flush_ws(t);
    t->n_ws = 0;
}
