/* server_tools.c - response_format and tool_choice to a grammar; the
 * tool-call splitter (see server_tools.h). Tool calls use the format each
 * template shows its model (ToolFormat). */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "../text/json.h"
#include "../text/json_schema.h"
#include "server_tools.h"

#define OPEN_TAG "<tool_call>"
#define CLOSE_TAG "</tool_call>"
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

/* Finds key in the object at pos; its value's offset, or API_ABSENT. */
static size_t member(const char *body, size_t len, size_t pos, const char *key)
{
    Json j;
    at(&j, body, len, pos);
    if (json_peek(&j) != JSON_OBJECT || json_enter(&j, '{') < 0) return API_ABSENT;
    int r;
    while ((r = json_next(&j, '}')) > 0) {
        char k[64];
        size_t kl;
        if (json_key(&j, k, sizeof k - 1, &kl) < 0) {
            /* a long key: not ours */
            at(&j, body, len, j.pos);
            return API_ABSENT;
        }
        k[kl] = '\0';
        skip_ws(&j);
        if (!strcmp(k, key)) return j.pos;
        if (json_skip(&j) < 0) return API_ABSENT;
    }
    return API_ABSENT;
}

/* A string value at pos into out; -1 if it is not a string that fits. */
static int string_at(const char *body, size_t len, size_t pos, char *out, size_t cap)
{
    if (pos == API_ABSENT) return -1;
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
 * "{\"name\": NAME, \"parameters\": " ARGS "}" (TOOL_FORMAT_JSON) */
static int tool_call_rule(ToolFormat format, const char *body, size_t len, size_t fn, int index, int *next_rule,
                          char *out, size_t cap, size_t *n, char *why, size_t why_cap)
{
    char name[256], esc[600], lit[1400], line[1600];
    if (string_at(body, len, member(body, len, fn, "name"), name, sizeof name) < 0)
        return why_f(why, why_cap, "tools[%d].function.name: expected a string (at most 255 bytes)", index);
    size_t params = member(body, len, fn, "parameters");
    int top = -1;
    if (params != API_ABSENT) {
        char label[64];
        snprintf(label, sizeof label, "tools[%d].function.parameters", index);
        size_t pl = value_len(body, len, params);
        if (json_schema_rules(body + params, pl, label, next_rule, &top, out, cap, n, why, why_cap) < 0) return -1;
    }
    size_t el = json_escape(name, strlen(name), esc, sizeof esc);
    if (el >= sizeof esc) return why_f(why, why_cap, "tools[%d].function.name: too long", index);
    char head[700];
    if (format == TOOL_FORMAT_JSON) snprintf(head, sizeof head, "{\"name\": %s, \"parameters\": ", esc);
    else snprintf(head, sizeof head, OPEN_TAG "\n{\"name\": %s, \"arguments\": ", esc);
    if (gbnf_literal(head, strlen(head), lit, sizeof lit) >= sizeof lit) return why_f(why, why_cap, "tools[%d]: name too long", index);
    char args[32];
    if (top >= 0) snprintf(args, sizeof args, "s%d", top);
    else snprintf(args, sizeof args, "object");
    int k = snprintf(line, sizeof line, "call%d ::= %s %s \"}%s\"\n", index, lit, args,
                     format == TOOL_FORMAT_JSON ? "" : "\\n" CLOSE_TAG);
    if (k < 0 || (size_t)k >= sizeof line || append(out, cap, n, line, (size_t)k) < 0)
        return why_f(why, why_cap, "tools: the grammar is longer than %zu bytes", cap);
    return 0;
}

int api_constraint(const char *body, size_t len, size_t response_format, size_t tool_choice, size_t tools,
                   ChatTemplate tmpl, char *gbnf, size_t cap, ApiConstraint *out, char *why, size_t why_cap)
{
    memset(out, 0, sizeof *out);
    size_t n = 0;
    gbnf[0] = '\0';
    /* tools: each entry's function object */
    size_t fns[MAX_TOOLS];
    int n_tools = 0;
    if (tools != API_ABSENT) {
        Json j;
        at(&j, body, len, tools);
        if (json_peek(&j) != JSON_ARRAY) return why_f(why, why_cap, "tools: expected an array");
        json_enter(&j, '[');
        int r;
        while ((r = json_next(&j, ']')) > 0) {
            skip_ws(&j);
            if (n_tools >= MAX_TOOLS) return why_f(why, why_cap, "tools: more than %d", MAX_TOOLS);
            size_t fn = member(body, len, j.pos, "function");
            if (fn == API_ABSENT || json_peek(&(Json){.src = body, .len = len, .pos = fn}) != JSON_OBJECT)
                return why_f(why, why_cap, "tools[%d]: expected {\"type\": \"function\", \"function\": {...}}", n_tools);
            fns[n_tools++] = fn;
            if (json_skip(&j) < 0) return why_f(why, why_cap, "tools: malformed");
        }
    }
    /* tool_choice */
    int choice = n_tools ? 1 : 0; /* 0 none, 1 auto, 2 required, 3 named */
    int named = -1;
    if (tool_choice != API_ABSENT) {
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
            if (fn == API_ABSENT || string_at(body, len, member(body, len, fn, "name"), want, sizeof want) < 0)
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
    if (tmpl == CHAT_TEMPLATE_LLAMA31) out->format = TOOL_FORMAT_JSON;
    else if (choice > 0 && tmpl != CHAT_TEMPLATE_QWEN3 && tmpl != CHAT_TEMPLATE_QWEN25 && tmpl != CHAT_TEMPLATE_SMOLLM3)
        return why_f(why, why_cap,
                     "tools: the chat template '%s' has no tool-call format pith knows (qwen3, qwen2.5, llama3.1 and "
                     "smollm3 have; --template overrides)",
                     chat_template_name(tmpl));
    out->render = choice > 0;
    out->parse = choice > 0;
    out->forced = choice >= 2;

    /* response_format */
    if (response_format != API_ABSENT) {
        char type[64];
        if (string_at(body, len, member(body, len, response_format, "type"), type, sizeof type) < 0)
            return why_f(why, why_cap, "response_format: expected {\"type\": \"text\", \"json_object\" or \"json_schema\"}");
        size_t schema = API_ABSENT;
        const char *label = "response_format.schema";
        if (!strcmp(type, "text")) {
            /* nothing */
        } else if (!strcmp(type, "json_object")) {
            schema = member(body, len, response_format, "schema");
            if (schema == API_ABSENT) {
                size_t k = strlen(json_schema_object_grammar);
                if (append(gbnf, cap, &n, json_schema_object_grammar, k) < 0) return why_f(why, why_cap, "internal error: grammar buffer");
            }
        } else if (!strcmp(type, "json_schema")) {
            size_t js = member(body, len, response_format, "json_schema");
            if (js == API_ABSENT) return why_f(why, why_cap, "response_format.json_schema: missing");
            schema = member(body, len, js, "schema");
            label = "response_format.json_schema.schema";
            if (schema == API_ABSENT) return why_f(why, why_cap, "response_format.json_schema.schema: missing");
        } else {
            return why_f(why, why_cap, "response_format.type: '%s' is not text, json_object or json_schema", type);
        }
        if (schema != API_ABSENT) {
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
        char root[64 + 16 * MAX_TOOLS];
        size_t r = 0;
        if (named >= 0) r = (size_t)snprintf(root, sizeof root, "root ::= call%d\n", named);
        else {
            r = (size_t)snprintf(root, sizeof root, "call ::=");
            for (int i = 0; i < n_tools; i++) r += (size_t)snprintf(root + r, sizeof root - r, "%s call%d", i ? " |" : "", i);
            /* Llama 3.1's template takes one call per message */
            r += (size_t)snprintf(root + r, sizeof root - r, "\nroot ::= call%s\n",
                                  out->format == TOOL_FORMAT_JSON ? "" : " ( \"\\n\" call )*");
        }
        if (append(gbnf, cap, &n, root, r) < 0 || append(gbnf, cap, &n, json_schema_primitives, strlen(json_schema_primitives)) < 0)
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
    return t->format == TOOL_FORMAT_JSON ? PYTHON_TAG : OPEN_TAG;
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

/* The block so far back to content, as it was; the splitter outside. */
static void block_to_content(ToolSplit *t)
{
    if (t->tagged) emit_content(t, open_tag(t), strlen(open_tag(t)));
    emit_content(t, t->buf, t->n);
    t->inside = 0;
    t->n = 0;
}

/* The block in buf[0..n) (without the tags): a call, or content as it was. */
static void close_block(ToolSplit *t, size_t n)
{
    Json j;
    json_init(&j, t->buf, n, "tool call");
    skip_ws(&j);
    char name[256];
    size_t name_len = 0, args = API_ABSENT, args_len = 0;
    int ok = json_peek(&j) == JSON_OBJECT && json_enter(&j, '{') == 0;
    int r = 0, have_name = 0;
    char *decoded = NULL;
    while (ok && (r = json_next(&j, '}')) > 0) {
        char k[32];
        size_t kl;
        if (json_key(&j, k, sizeof k - 1, &kl) < 0) {
            ok = 0;
            break;
        }
        k[kl] = '\0';
        skip_ws(&j);
        int is_args = !strcmp(k, "arguments") || !strcmp(k, "parameters");
        if (!strcmp(k, "name") && json_peek(&j) == JSON_STRING && json_string(&j, name, sizeof name, &name_len) == 0) {
            have_name = 1;
        } else if (is_args && json_peek(&j) == JSON_OBJECT) {
            args = j.pos;
            if (json_skip(&j) < 0) ok = 0;
            args_len = j.pos - args;
        } else if (is_args && json_peek(&j) == JSON_STRING) {
            /* arguments already as a JSON text in a string: decoded after the block */
            Json save = j;
            size_t dl;
            if (json_string(&j, NULL, (size_t)-1, &dl) < 0 || n + dl > t->cap) ok = 0;
            else {
                decoded = t->buf + n;
                j = save;
                json_string(&j, decoded, t->cap - n, &dl);
                args_len = dl;
            }
        } else if (json_skip(&j) < 0) ok = 0;
    }
    ok = ok && r == 0 && json_end(&j) == 0 && have_name && name_len > 0 && (args != API_ABSENT || decoded);
    if (!ok) {
        block_to_content(t);
        return;
    }
    t->n_ws = 0; /* whitespace before a call is not content */
    t->inside = 0;
    t->n = 0;
    t->call(t->ctx, t->n_calls++, name, name_len, decoded ? decoded : t->buf + args, args_len);
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
            size_t cl = sizeof CLOSE_TAG - 1;
            if (t->n >= cl && memcmp(t->buf + t->n - cl, CLOSE_TAG, cl) == 0) close_block(t, t->n - cl);
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
}

void tool_split_finish(ToolSplit *t)
{
    if (t->inside) block_to_content(t);
    if (t->n_hold) emit_content(t, t->hold, t->n_hold);
    t->n_hold = 0;
    if (t->n_calls == 0) flush_ws(t);
    t->n_ws = 0;
}
