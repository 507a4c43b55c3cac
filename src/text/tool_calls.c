/* tool_calls.c - response_format and tool_choice to a grammar; the
 * tool-call splitter; the messages that show the tools where a template
 * cannot (see tool_calls.h). Each format is one row of formats[]: the
 * markers of its blocks, the shape inside (one parser per shape), and how
 * a call is written (the grammar of forced calls, and past calls in
 * rewritten messages); detect_rows[] maps a template's text to its format.
 * In <tool_call> blocks, Qwen3.5's form is parsed too:
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
#define PYTHON_TAG "<|python_tag|>"
#define DS_CALLS_BEGIN "<\xef\xbd\x9ctool\xe2\x96\x81" "calls\xe2\x96\x81" "begin\xef\xbd\x9c>" /* <｜tool▁calls▁begin｜> */
#define DS_CALLS_END "<\xef\xbd\x9ctool\xe2\x96\x81" "calls\xe2\x96\x81" "end\xef\xbd\x9c>"
#define DS_CALL_BEGIN "<\xef\xbd\x9ctool\xe2\x96\x81" "call\xe2\x96\x81" "begin\xef\xbd\x9c>"
#define DS_CALL_END "<\xef\xbd\x9ctool\xe2\x96\x81" "call\xe2\x96\x81" "end\xef\xbd\x9c>"
#define DS_SEP "<\xef\xbd\x9ctool\xe2\x96\x81sep\xef\xbd\x9c>"
#define GEMMA_QUOTE "<|\"|>"
#define MAX_TOOLS 64
#define JSON_CALL "{\"name\": ", ", \"arguments\": ", "}"

/* What is inside a format's block. */
typedef enum {
    SHAPE_OBJECT,   /* one JSON call object (or Qwen3.5's <function=...> form) */
    SHAPE_LIST,     /* a list of JSON call objects or Python calls (or JSON call objects one after another) */
    SHAPE_NAMED,    /* NAME[ARGS]{...}, [CALL_ID]ID before [ARGS] too */
    SHAPE_GEMMA,    /* call:NAME{key:value,...} in Gemma 4's literals (or JSON) */
    SHAPE_DEEPSEEK, /* <｜tool▁call▁begin｜>[TYPE<｜tool▁sep｜>]NAME...{...}...<｜tool▁call▁end｜> sections */
    SHAPE_GENERIC,  /* {"tool_call": CALL}, {"tool_calls": [CALL, ...]} or {"response": "text"} */
} Shape;

/* Where a format's model learns of the tools. */
typedef enum {
    PROMPT_TEMPLATE,   /* the chat template renders them */
    PROMPT_SYSTEM_TEXT,/* described in the system message's content (tool_prompt_messages) */
    PROMPT_SYSTEM_KEY, /* the system message's "tools" string (Phi-4-mini) */
} Prompt;

/* Each format once: how the splitter finds its blocks and reads them, and
 * how a call is written (the grammar of forced calls, and calls in
 * rewritten messages): list_open CALL (sep CALL)* list_close, a CALL being
 * head NAME mid ARGUMENTS tail. */
typedef struct {
    const char *name;
    const char *open, *close; /* a block's markers; close NULL: it ends where its value does */
    char bare;                /* a block may start with this byte too, without its marker */
    const char *value_after;  /* close NULL: its value comes after this text (a name before it) */
    Shape shape;
    const char *list_open, *head, *mid, *tail, *sep, *list_close;
    int raw_name;             /* NAME as it is, else a JSON string */
    int multi;                /* several calls in a reply */
    const char *name_pre;     /* in the block, what comes before a call's name (streamed calls) */
    Prompt prompt;
} Format;

static const Format formats[TOOL_FORMAT_COUNT] = {
    [TOOL_FORMAT_TAGGED] = {"hermes", OPEN_TAG, CLOSE_TAG, 0, NULL, SHAPE_OBJECT, "", OPEN_TAG "\n{\"name\": ",
                            ", \"arguments\": ", "}\n" CLOSE_TAG, "\n", "", 0, 1, "{\"name\": ", PROMPT_TEMPLATE},
    [TOOL_FORMAT_JSON] = {"llama3", PYTHON_TAG, NULL, '{', NULL, SHAPE_OBJECT, "", "{\"name\": ", ", \"parameters\": ", "}",
                          "", "", 0, 0, "{\"name\": ", PROMPT_TEMPLATE},
    [TOOL_FORMAT_LFM2] = {"lfm2", "<|tool_call_start|>", "<|tool_call_end|>", 0, NULL, SHAPE_LIST, "<|tool_call_start|>[",
                          JSON_CALL, ", ", "]<|tool_call_end|>", 0, 1, "{\"name\": ", PROMPT_TEMPLATE},
    [TOOL_FORMAT_XML] = {"qwen3-coder", OPEN_TAG, CLOSE_TAG, 0, NULL, SHAPE_OBJECT, "", OPEN_TAG "\n<function=", ">\n",
                         "</function>\n" CLOSE_TAG, "\n", "", 1, 1, "<function=", PROMPT_TEMPLATE},
    [TOOL_FORMAT_MISTRAL] = {"mistral", "[TOOL_CALLS]", NULL, 0, NULL, SHAPE_LIST, "[TOOL_CALLS][", JSON_CALL, ", ", "]", 0, 1,
                             "{\"name\": ", PROMPT_TEMPLATE},
    [TOOL_FORMAT_MISTRAL_ARGS] = {"mistral-args", "[TOOL_CALLS]", NULL, 0, "[ARGS]", SHAPE_NAMED, "", "[TOOL_CALLS]", "[ARGS]",
                                  "", "", "", 1, 1, "", PROMPT_TEMPLATE},
    [TOOL_FORMAT_GRANITE] = {"granite", "<|tool_call|>", NULL, 0, NULL, SHAPE_LIST, "<|tool_call|>[", JSON_CALL, ", ", "]", 0,
                             1, "{\"name\": ", PROMPT_TEMPLATE},
    [TOOL_FORMAT_PHI4] = {"phi4-mini", "<|tool_call|>", "<|/tool_call|>", 0, NULL, SHAPE_LIST, "<|tool_call|>[", JSON_CALL,
                          ", ", "]<|/tool_call|>", 0, 1, "{\"name\": ", PROMPT_SYSTEM_KEY},
    [TOOL_FORMAT_PYTHONIC] = {"pythonic", "", NULL, '[', NULL, SHAPE_LIST, "[", JSON_CALL, ", ", "]", 0, 1, "{\"name\": ",
                              PROMPT_TEMPLATE},
    [TOOL_FORMAT_GEMMA4] = {"gemma4", "<|tool_call>", "<tool_call|>", 0, NULL, SHAPE_GEMMA, "", "<|tool_call>call:", "",
                            "<tool_call|>", "", "", 1, 1, "call:", PROMPT_TEMPLATE},
    [TOOL_FORMAT_DEEPSEEK_R1] = {"deepseek-r1", DS_CALLS_BEGIN, DS_CALLS_END, 0, NULL, SHAPE_DEEPSEEK, DS_CALLS_BEGIN,
                                 DS_CALL_BEGIN "function" DS_SEP, "\n```json\n", "\n```" DS_CALL_END, "\n", DS_CALLS_END, 1, 1,
                                 DS_SEP, PROMPT_TEMPLATE},
    [TOOL_FORMAT_DEEPSEEK_V3] = {"deepseek-v3.1", DS_CALLS_BEGIN, DS_CALLS_END, 0, NULL, SHAPE_DEEPSEEK, DS_CALLS_BEGIN,
                                 DS_CALL_BEGIN, DS_SEP, DS_CALL_END, "", DS_CALLS_END, 1, 1, DS_CALL_BEGIN, PROMPT_TEMPLATE},
    [TOOL_FORMAT_NEMOTRON] = {"nemotron", "<TOOLCALL>", "</TOOLCALL>", 0, NULL, SHAPE_LIST, "<TOOLCALL>[", JSON_CALL, ", ",
                              "]</TOOLCALL>", 0, 1, "{\"name\": ", PROMPT_TEMPLATE},
    [TOOL_FORMAT_TOOL_CALLS] = {"tool-calls", "<tool_calls>", "</tool_calls>", 0, NULL, SHAPE_LIST, "<tool_calls>[", JSON_CALL,
                                ", ", "]</tool_calls>", 0, 1, "{\"name\": ", PROMPT_TEMPLATE},
    [TOOL_FORMAT_FUNCTOOLS] = {"functools", "functools", NULL, 0, NULL, SHAPE_LIST, "functools[", JSON_CALL, ", ", "]", 0, 1,
                               "{\"name\": ", PROMPT_TEMPLATE},
    [TOOL_FORMAT_GENERIC] = {"generic", "", NULL, '{', NULL, SHAPE_GENERIC, "", "{\"tool_call\": {\"name\": ",
                             ", \"arguments\": ", "}}", "\n", "", 0, 0, "{\"name\": ", PROMPT_SYSTEM_TEXT},
};

/* Markers of a template's text -> the format it teaches; the first row
 * whose markers (both, when there are two) the text holds. */
static const struct {
    const char *marker, *also;
    ToolFormat format;
} detect_rows[] = {
    {"<seed:tool_call>", NULL, TOOL_FORMAT_GENERIC}, /* Seed-OSS: Qwen3.5's form in tags of its own */
    {"<arg_key>", NULL, TOOL_FORMAT_GENERIC},        /* GLM 4.x, Laguna, Ling: <tool_call>NAME<arg_key>... */
    {"<invoke name=", NULL, TOOL_FORMAT_GENERIC},    /* MiniMax, DeepSeek V3.2/V4 */
    {"<parameter=", "<tool_call>", TOOL_FORMAT_XML}, /* Qwen3.5, Qwen3-Coder, Nemotron 3 Nano, Step 3.5 */
    {"<function=", NULL, TOOL_FORMAT_GENERIC},       /* Functionary v3.1's <function=NAME>{...}</function> */
    {"<|tool_call_start|>", NULL, TOOL_FORMAT_LFM2},
    {"<|tool_list_start|>", NULL, TOOL_FORMAT_LFM2},
    {"List of tools: [", NULL, TOOL_FORMAT_LFM2},    /* LFM2.5-Instruct */
    {"[TOOL_CALLS]", "[ARGS]", TOOL_FORMAT_MISTRAL_ARGS},
    {"[TOOL_CALLS]", NULL, TOOL_FORMAT_MISTRAL},
    {DS_SEP, "```json", TOOL_FORMAT_DEEPSEEK_R1},
    {DS_SEP, NULL, TOOL_FORMAT_DEEPSEEK_V3},
    {"<|tool_call>", NULL, TOOL_FORMAT_GEMMA4},
    {"<|/tool|>", NULL, TOOL_FORMAT_PHI4},           /* Phi-4-mini: message['tools'] in <|tool|>...<|/tool|> */
    {"<|tool_call|>", NULL, TOOL_FORMAT_GRANITE},     /* Granite 3.3 */
    {"<TOOLCALL>", NULL, TOOL_FORMAT_NEMOTRON},       /* Nemotron Nano v2 */
    {"<tool_calls>", NULL, TOOL_FORMAT_TOOL_CALLS},   /* Apriel 1.6, MiniMax-M1 */
    {"functools[", NULL, TOOL_FORMAT_FUNCTOOLS},      /* Firefunction v2 */
    {OPEN_TAG, NULL, TOOL_FORMAT_TAGGED},
    {"\"parameters\": dictionary of argument name", NULL, TOOL_FORMAT_JSON}, /* Llama 3.1/3.2/3.3 */
    {"[func_name1(", NULL, TOOL_FORMAT_PYTHONIC},    /* Llama 3.2/4 pythonic, Gemma 3 tool templates */
};

/* The built-in templates (--template NAME) that render tools; the others
 * take the generic format. */
static const struct {
    ChatTemplate tmpl;
    ToolFormat format;
} builtin_rows[] = {
    {CHAT_TEMPLATE_QWEN3, TOOL_FORMAT_TAGGED},  {CHAT_TEMPLATE_QWEN25, TOOL_FORMAT_TAGGED},
    {CHAT_TEMPLATE_SMOLLM3, TOOL_FORMAT_TAGGED}, {CHAT_TEMPLATE_QWEN35, TOOL_FORMAT_XML},
    {CHAT_TEMPLATE_QWEN35_THINK, TOOL_FORMAT_XML}, {CHAT_TEMPLATE_LLAMA31, TOOL_FORMAT_JSON},
    {CHAT_TEMPLATE_LFM2, TOOL_FORMAT_LFM2},
};

ToolFormat tool_format_detect(const char *template_text)
{
    for (size_t i = 0; template_text && i < sizeof detect_rows / sizeof detect_rows[0]; i++)
        if (strstr(template_text, detect_rows[i].marker) && (!detect_rows[i].also || strstr(template_text, detect_rows[i].also)))
            return detect_rows[i].format;
    return TOOL_FORMAT_GENERIC;
}

ToolFormat tool_format_of_builtin(ChatTemplate t)
{
    for (size_t i = 0; i < sizeof builtin_rows / sizeof builtin_rows[0]; i++)
        if (builtin_rows[i].tmpl == t) return builtin_rows[i].format;
    return TOOL_FORMAT_GENERIC;
}

const char *tool_format_name(ToolFormat f)
{
    return (unsigned)f < TOOL_FORMAT_COUNT ? formats[f].name : "?";
}

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

static int py_ident(char c);
static int tag_at(const char *p, size_t n, size_t i, const char *tag, int whole);

/* A GBNF literal of s into out at *o ("" writes nothing). */
static int put_literal(const char *s, char *out, size_t cap, size_t *o)
{
    if (!*s) return 0;
    size_t k = gbnf_literal(s, strlen(s), out + *o, cap - *o);
    if (k >= cap - *o) return -1;
    *o += k;
    out[(*o)++] = ' ';
    out[*o] = '\0';
    return 0;
}

/* One function's call as its format writes it (head NAME mid ARGUMENTS
 * tail), the arguments held to its parameters: "callINDEX ::= ...". */
static int tool_call_rule(ToolFormat format, const char *body, size_t len, size_t fn, int index, int *next_rule,
                          char *out, size_t cap, size_t *n, char *why, size_t why_cap)
{
    const Format *f = &formats[format];
    char name[256], esc[600], head[1400], line[3000];
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
    for (const char *c = name; f->raw_name && !xml && *c; c++)
        if (!py_ident(*c))
            return why_f(why, why_cap, "tools[%d].function.name: only letters, digits, '_', '.' and '-' fit %s's calls", index,
                         f->name);
    snprintf(head, sizeof head, "%s%s%s", f->head, f->raw_name ? name : esc, f->mid);
    size_t o = (size_t)snprintf(line, sizeof line, "call%d ::= ", index);
    if (put_literal(head, line, sizeof line, &o) < 0) return why_f(why, why_cap, "tools[%d]: name too long", index);
    if (top >= 0) o += (size_t)snprintf(line + o, sizeof line - o, "s%d ", top);
    else if (!xml) o += (size_t)snprintf(line + o, sizeof line - o, "object ");
    if (put_literal(f->tail, line, sizeof line, &o) < 0 || o + 1 >= sizeof line) return why_f(why, why_cap, "tools[%d]: too long", index);
    line[o - 1] = '\n';
    if (append(out, cap, n, line, o) < 0) return why_f(why, why_cap, "tools: the grammar is longer than %zu bytes", cap);
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

/* tools: each entry's function object into fns; how many, or -1 with why. */
static int tool_functions(const char *body, size_t len, size_t tools, size_t *fns, char *why, size_t why_cap)
{
    int n_tools = 0;
    if (tools == TOOL_ABSENT) return 0;
    Json j;
    at(&j, body, len, tools);
    if (json_peek(&j) != JSON_ARRAY) return why_f(why, why_cap, "tools: expected an array");
    json_enter(&j, '[');
    while (json_next(&j, ']') > 0) {
        skip_ws(&j);
        if (n_tools >= MAX_TOOLS) return why_f(why, why_cap, "tools: more than %d", MAX_TOOLS);
        size_t fn = member(body, len, j.pos, "function");
        if (fn == TOOL_ABSENT || json_peek(&(Json){.src = body, .len = len, .pos = fn}) != JSON_OBJECT)
            return why_f(why, why_cap, "tools[%d]: expected {\"type\": \"function\", \"function\": {...}}", n_tools);
        fns[n_tools++] = fn;
        if (json_skip(&j) < 0) return why_f(why, why_cap, "tools: malformed");
    }
    return n_tools;
}

int tool_constraint(const char *body, size_t len, size_t response_format, size_t tool_choice, size_t tools,
                    ToolFormat format, char *gbnf, size_t cap, ToolConstraint *out, char *why, size_t why_cap)
{
    memset(out, 0, sizeof *out);
    if ((unsigned)format >= TOOL_FORMAT_COUNT) format = TOOL_FORMAT_GENERIC;
    const Format *f = &formats[format];
    size_t n = 0;
    gbnf[0] = '\0';
    size_t fns[MAX_TOOLS];
    int n_tools = tool_functions(body, len, tools, fns, why, why_cap);
    if (n_tools < 0) return -1;
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
    out->format = format;
    /* a forced call's values are read back by the table of string parameters: it must fit */
    if (choice >= 2 && format == TOOL_FORMAT_XML && tool_kinds(body, len, tools, NULL, 0) > TOOL_KINDS_CAP)
        return why_f(why, why_cap, "tools: over %d bytes of function and parameter names (Qwen3.5's bound)", TOOL_KINDS_CAP);
    out->render = choice > 0 && f->prompt == PROMPT_TEMPLATE;
    out->rewrite = (choice > 0 || n_tools > 0) && f->prompt != PROMPT_TEMPLATE;
    out->parse = choice > 0;
    out->forced = choice >= 2;
    /* the generic format: the reply is one JSON object, a call or a response */
    int generic = choice > 0 && format == TOOL_FORMAT_GENERIC;
    out->held = out->forced || generic;

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
        if (n && generic)
            return why_f(why, why_cap, "response_format: cannot be combined with tools for a template without a tool-call "
                                       "format (the generic format's grammar holds the reply)");
        if (n) out->what = "response_format";
    }

    /* forced tool calls (and the generic format's): their arguments follow each function's parameters */
    if (out->held) {
        int next = 0;
        for (int i = 0; i < n_tools; i++) {
            if (named >= 0 && i != named) continue;
            if (tool_call_rule(format, body, len, fns[i], i, &next, gbnf, cap, &n, why, why_cap) < 0) return -1;
        }
        char root[2048 + 16 * MAX_TOOLS];
        size_t r = 0;
        if (named >= 0) r = (size_t)snprintf(root, sizeof root, "call ::= call%d\n", named);
        else {
            r = (size_t)snprintf(root, sizeof root, "call ::=");
            for (int i = 0; i < n_tools; i++) r += (size_t)snprintf(root + r, sizeof root - r, "%s call%d", i ? " |" : "", i);
            r += (size_t)snprintf(root + r, sizeof root - r, "\n");
        }
        /* list_open call (sep call)* list_close: one named call, or as many as the format takes */
        r += (size_t)snprintf(root + r, sizeof root - r, "calls ::= ");
        if (put_literal(f->list_open, root, sizeof root, &r) < 0) return why_f(why, why_cap, "internal error: grammar root");
        r += (size_t)snprintf(root + r, sizeof root - r, "call ");
        if (named < 0 && f->multi) {
            r += (size_t)snprintf(root + r, sizeof root - r, "( ");
            if (put_literal(f->sep, root, sizeof root, &r) < 0) return why_f(why, why_cap, "internal error: grammar root");
            r += (size_t)snprintf(root + r, sizeof root - r, "call )* ");
        }
        if (put_literal(f->list_close, root, sizeof root, &r) < 0) return why_f(why, why_cap, "internal error: grammar root");
        /* tool_choice auto in the generic format: a response instead */
        r += (size_t)snprintf(root + r, sizeof root - r, "\nroot ::= calls%s\n", out->forced ? "" : " | response");
        if (!out->forced) r += (size_t)snprintf(root + r, sizeof root - r, "response ::= \"{\\\"response\\\": \" string \"}\"\n");
        const char *prim = json_schema_primitives;
        if (format == TOOL_FORMAT_XML) {
            /* raw text, and JSON strings without '<' (either could end the call early) */
            r += text_rules(root + r, sizeof root - r);
            r += (size_t)snprintf(root + r, sizeof root - r, "char ::= [^\"\\\\\\x00-\\x1f<] | \"\\\\\" ( [\"\\\\/bfnrt] | \"u\" [0-9a-fA-F]{4} )\n");
            prim = strchr(prim, '\n') + 1;
        }
        if (r >= sizeof root || append(gbnf, cap, &n, root, r) < 0 || append(gbnf, cap, &n, prim, strlen(prim)) < 0)
            return why_f(why, why_cap, "tools: the grammar is longer than %zu bytes", cap);
        out->what = "tools";
    }
    out->grammar_len = n;
    return 0;
}

/* ---- The tools in the messages (TOOL_FORMAT_GENERIC, TOOL_FORMAT_PHI4) ---- */

typedef struct {
    char *p;
    size_t cap, n; /* n counts what did not fit too */
} Out;

static void out_put(Out *o, const char *s, size_t k)
{
    if (o->n < o->cap) memcpy(o->p + o->n, s, o->cap - o->n < k ? o->cap - o->n : k);
    o->n += k;
}

static void out_str(Out *o, const char *s)
{
    out_put(o, s, strlen(s));
}

/* s[0..k) as the inside of a JSON string */
static void out_esc(Out *o, const char *s, size_t k)
{
    char tmp[64 * 6 + 3];
    for (size_t i = 0; i < k; i += 64) {
        size_t m = k - i < 64 ? k - i : 64, e = json_escape(s + i, m, tmp, sizeof tmp);
        out_put(o, tmp + 1, e - 2);
    }
}

static void out_esc_str(Out *o, const char *s)
{
    out_esc(o, s, strlen(s));
}

/* The value at pos as it is in the body, escaped as the inside of a string */
static void out_esc_value(Out *o, const char *body, size_t len, size_t pos, const char *absent)
{
    if (pos == TOOL_ABSENT) out_esc_str(o, absent);
    else out_esc(o, body + pos, value_len(body, len, pos));
}

/* The generic format's description of the tools (inside a string). */
static void generic_description(Out *o, const char *body, size_t len, const size_t *fns, int n_fns, int forced)
{
    out_esc_str(o, "You can call these tools (each a function's name, description and the JSON Schema of its parameters):\n");
    for (int i = 0; i < n_fns; i++) {
        out_esc_value(o, body, len, fns[i], "{}");
        out_esc_str(o, "\n");
    }
    out_esc_str(o, forced ? "\nAnswer with one JSON object and nothing else, a call of one of the tools: "
                            "{\"tool_call\": {\"name\": \"<the tool's name>\", \"arguments\": {<its arguments>}}}"
                          : "\nAnswer with one JSON object and nothing else: {\"tool_call\": {\"name\": \"<the tool's name>\", "
                            "\"arguments\": {<its arguments>}}} to call a tool, or {\"response\": \"<your reply>\"} to "
                            "reply to the user.");
}

/* Phi-4-mini's "tools": the function objects as a JSON list (inside a string) */
static void phi4_tools(Out *o, const char *body, size_t len, const size_t *fns, int n_fns)
{
    out_esc_str(o, "[");
    for (int i = 0; i < n_fns; i++) {
        if (i) out_esc_str(o, ", ");
        out_esc_value(o, body, len, fns[i], "{}");
    }
    out_esc_str(o, "]");
}

/* An assistant's tool_calls (the array at calls) as the format writes
 * them (inside a string). */
static void calls_text(Out *o, const Format *f, const char *body, size_t len, size_t calls)
{
    Json j;
    at(&j, body, len, calls);
    json_enter(&j, '[');
    out_esc_str(o, f->list_open);
    for (int k = 0; json_next(&j, ']') > 0; k++) {
        skip_ws(&j);
        size_t fn = member(body, len, j.pos, "function"), args = member(body, len, fn, "arguments");
        if (json_skip(&j) < 0) break;
        if (k) out_esc_str(o, f->sep);
        out_esc_str(o, f->head);
        out_esc_value(o, body, len, member(body, len, fn, "name"), "\"\"");
        out_esc_str(o, f->mid);
        if (args != TOOL_ABSENT && body[args] == '"') {
            /* a string of JSON text: its literal's inside is that text escaped */
            size_t al = value_len(body, len, args);
            out_put(o, body + args + 1, al >= 2 ? al - 2 : 0);
        } else {
            out_esc_value(o, body, len, args, "{}");
        }
        out_esc_str(o, f->tail);
    }
    out_esc_str(o, f->list_close);
}

/* A message's members copied from the object at msg, but "content"
 * (unless content_too) and "tools" (keys as written: the request's own
 * text); *first is 0 once one is written. */
static void copy_members(Out *o, const char *body, size_t len, size_t msg, int content_too, int *first)
{
    Json j;
    at(&j, body, len, msg);
    json_enter(&j, '{');
    while (json_next(&j, '}') > 0) {
        skip_ws(&j);
        size_t k = j.pos;
        if (json_skip(&j) < 0) return; /* the key */
        size_t kl = j.pos - k;
        skip_ws(&j);
        if (j.pos >= len || body[j.pos] != ':') return;
        j.pos++;
        skip_ws(&j);
        if (json_skip(&j) < 0) return;
        if ((!content_too && kl == 9 && !memcmp(body + k, "\"content\"", 9)) || (kl == 7 && !memcmp(body + k, "\"tools\"", 7)))
            continue;
        if (!*first) out_str(o, ", ");
        *first = 0;
        out_put(o, body + k, j.pos - k);
    }
}

int64_t tool_prompt_messages(const char *body, size_t len, size_t messages, size_t tools, const ToolConstraint *c,
                             int no_system, char *out, size_t cap, char *why, size_t why_cap)
{
    const Format *f = &formats[(unsigned)c->format < TOOL_FORMAT_COUNT ? c->format : TOOL_FORMAT_GENERIC];
    /* describe: tools in play (else only past calls and results become text) */
    int generic = f->prompt == PROMPT_SYSTEM_TEXT, in_user = generic && no_system, describe = c->parse;
    const char *target = in_user ? "user" : "system";
    Out o = {out, cap, 0};
    size_t fns[MAX_TOOLS];
    int n_fns = tool_functions(body, len, tools, fns, why, why_cap);
    if (n_fns < 0) return -1;
    Json j;
    at(&j, body, len, messages);
    if (messages == TOOL_ABSENT || json_peek(&j) != JSON_ARRAY) return why_f(why, why_cap, "messages: expected an array");
    /* the first system message (or user message: in_user) */
    size_t sys = TOOL_ABSENT;
    json_enter(&j, '[');
    while (describe && sys == TOOL_ABSENT && json_next(&j, ']') > 0) {
        char role[16];
        skip_ws(&j);
        if (string_at(body, len, member(body, len, j.pos, "role"), role, sizeof role) == 0 && !strcmp(role, target))
            sys = j.pos;
        if (json_skip(&j) < 0) return why_f(why, why_cap, "messages: malformed");
    }
    out_str(&o, "[");
    int inserted = describe && sys == TOOL_ABSENT;
    if (inserted) {
        out_str(&o, "{\"role\": \"");
        out_str(&o, target);
        out_str(&o, generic ? "\", \"content\": \"" : "\", \"content\": \"\", \"tools\": \"");
        if (generic) generic_description(&o, body, len, fns, n_fns, c->forced);
        else phi4_tools(&o, body, len, fns, n_fns);
        out_str(&o, "\"}");
    }
    at(&j, body, len, messages);
    json_enter(&j, '[');
    for (int k = 0; json_next(&j, ']') > 0; k++) {
        skip_ws(&j);
        size_t msg = j.pos, content = member(body, len, msg, "content"), calls = member(body, len, msg, "tool_calls");
        char role[16] = "";
        string_at(body, len, member(body, len, msg, "role"), role, sizeof role);
        if (json_skip(&j) < 0) return why_f(why, why_cap, "messages[%d]: malformed", k);
        if (k || inserted) out_str(&o, ", ");
        int is_str = content != TOOL_ABSENT && body[content] == '"';
        size_t cl = content == TOOL_ABSENT ? 0 : value_len(body, len, content);
        int first = 1;
        if (msg == sys && generic) {
            /* its content and the tools' description: after a system
             * message's text, before a user message's */
            out_str(&o, "{");
            copy_members(&o, body, len, msg, 0, &first);
            out_str(&o, first ? "\"content\": " : ", \"content\": ");
            if (content != TOOL_ABSENT && body[content] == '[') {
                /* parts: one more, of text */
                Json p;
                at(&p, body, len, content);
                json_enter(&p, '[');
                int empty = json_next(&p, ']') == 0;
                size_t e = content + cl;
                while (e > content && body[e - 1] != ']') e--;
                if (in_user) {
                    out_str(&o, "[{\"type\": \"text\", \"text\": \"");
                    generic_description(&o, body, len, fns, n_fns, c->forced);
                    out_str(&o, empty ? "\"}]}" : "\"}, ");
                    skip_ws(&p);
                    if (!empty) out_put(&o, body + p.pos, e - p.pos), out_str(&o, "}");
                    continue;
                }
                out_put(&o, body + content, e - 1 - content);
                out_str(&o, empty ? "{\"type\": \"text\", \"text\": \"" : ", {\"type\": \"text\", \"text\": \"");
                generic_description(&o, body, len, fns, n_fns, c->forced);
                out_str(&o, "\"}]}");
                continue;
            }
            out_str(&o, "\"");
            if (in_user) generic_description(&o, body, len, fns, n_fns, c->forced);
            if (is_str && cl > 2) {
                if (in_user) out_esc_str(&o, "\n\n");
                out_put(&o, body + content + 1, cl - 2);
                if (!in_user) out_esc_str(&o, "\n\n");
            }
            if (!in_user) generic_description(&o, body, len, fns, n_fns, c->forced);
            out_str(&o, "\"}");
        } else if (msg == sys) {
            /* Phi-4-mini: a "tools" string */
            out_str(&o, "{");
            copy_members(&o, body, len, msg, 1, &first);
            out_str(&o, first ? "\"tools\": \"" : ", \"tools\": \"");
            phi4_tools(&o, body, len, fns, n_fns);
            out_str(&o, "\"}");
        } else if (!strcmp(role, "assistant") && calls != TOOL_ABSENT && body[calls] == '[' && value_len(body, len, calls) > 2) {
            /* the calls as the model writes them, in its content */
            out_str(&o, "{\"role\": \"assistant\", \"content\": \"");
            if (!generic && is_str) out_put(&o, body + content + 1, cl - 2);
            calls_text(&o, f, body, len, calls);
            out_str(&o, "\"}");
        } else if (!strcmp(role, "assistant") && generic && describe && is_str) {
            /* a reply as the format writes one */
            out_str(&o, "{\"role\": \"assistant\", \"content\": \"");
            out_esc_str(&o, "{\"response\": ");
            out_esc(&o, body + content, cl);
            out_esc_str(&o, "}");
            out_str(&o, "\"}");
        } else if (!strcmp(role, "tool") && generic) {
            /* a result, to a template that may know no tool role */
            size_t id = member(body, len, msg, "tool_call_id");
            out_str(&o, "{\"role\": \"user\", \"content\": \"");
            out_esc_str(&o, "{\"tool_response\": {");
            if (id != TOOL_ABSENT) {
                out_esc_str(&o, "\"tool_call_id\": ");
                out_esc_value(&o, body, len, id, "null");
                out_esc_str(&o, ", ");
            }
            out_esc_str(&o, "\"content\": ");
            out_esc_value(&o, body, len, content, "null");
            out_esc_str(&o, "}}");
            out_str(&o, "\"}");
        } else {
            out_put(&o, body + msg, j.pos - msg);
        }
    }
    out_put(&o, "]", 2);
    return (int64_t)o.n - 1;
}

/* ---- The splitter ---------------------------------------------------------------- */

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
    return formats[t->format].open;
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

static int put_json(Scratch *sc, const char *p, size_t n, int quotes);

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

/* ---- Python calls: name(key=value, ...) with Python literals (LFM2,
 * pythonic); Gemma 4's literals: <|"|>text<|"|> strings, bare keys ---- */

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
    if (tag_at(s, n, *i, GEMMA_QUOTE, 1) > 0) {
        /* Gemma 4's string: the text as it is up to the next quote */
        size_t from = *i + 5, e = from;
        while (e < n && tag_at(s, n, e, GEMMA_QUOTE, 1) <= 0) e++;
        if (e >= n) return -1;
        *i = e + 5;
        return put_json(sc, s + from, e - from, 1);
    }
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
                size_t key = *i;
                while (*i < n && py_ident(s[*i])) (*i)++;
                if (*i > key) { /* a bare key (Gemma 4's) */
                    if (put_json(sc, s + key, *i - key, 1) < 0) return -1;
                } else if (*i >= n || (s[*i] != '"' && s[*i] != '\'' && s[*i] != '<') || py_value(s, n, i, sc, depth + 1) < 0) {
                    return -1; /* JSON keys are strings */
                }
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

/* One call's arguments at s[*i]: a JSON object as it is, else (py) a
 * Python or Gemma 4 dict as a JSON object into sc. */
static int args_at(const char *s, size_t n, size_t *i, Scratch *sc, int py, const char **args, size_t *args_len)
{
    Json j;
    json_init(&j, s, n, "tool call");
    j.pos = *i = skip_space(s, n, *i);
    if (json_peek(&j) == JSON_OBJECT && json_skip(&j) == 0) {
        *args = s + *i;
        *args_len = j.pos - *i;
        *i = j.pos;
        return 0;
    }
    size_t start = sc->n;
    if (!py || *i >= n || s[*i] != '{' || py_value(s, n, i, sc, 0) < 0) return -1;
    *args = sc->p + start;
    *args_len = sc->n - start;
    return 0;
}

/* name bytes at s[*i] up to one of stop (at most 255, none of "\n<[{"
 * unless they stop it), trimmed; -1 if there are none. */
static int name_until(const char *s, size_t n, size_t *i, const char *stop, char *name, size_t *name_len)
{
    size_t k = 0;
    while (*i < n && !strchr(stop, s[*i])) {
        if (k == 255 || strchr("\n<[{", s[*i])) return -1;
        name[k++] = s[(*i)++];
    }
    while (k && strchr(" \t\r", name[k - 1])) k--;
    *name_len = k;
    return k ? 0 : -1;
}

/* The calls of the block in buf[0..n) (without the tags; buf holds used
 * bytes with them), read as its format's shape: each to call() when all
 * parse (emit; those given already as they streamed are not given again),
 * else -1. */
static int parse_block(ToolSplit *t, size_t n, size_t used, int emit)
{
    Scratch sc = {t->buf + used, t->cap - used, 0};
    char name[256];
    size_t name_len = 0, args_len = 0, i = 0;
    const char *args = NULL, *s = t->buf;
    int given = t->streamed, shape = formats[t->format].shape;
#define GIVE()                                                                               \
    do {                                                                                     \
        if (emit && given-- <= 0) t->call(t->ctx, t->n_calls++, name, name_len, args, args_len); \
    } while (0)
    if (shape == SHAPE_OBJECT) {
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
        GIVE();
        return 0;
    }
    if (shape == SHAPE_NAMED) {
        /* NAME[CALL_ID]ID[ARGS]{...} */
        if (name_until(s, n, &i, "[", name, &name_len) < 0) return -1;
        if (tag_at(s, n, i, "[CALL_ID]", 1) > 0)
            for (i += 9; i < n && s[i] != '['; i++)
                if (!py_ident(s[i])) return -1;
        if (tag_at(s, n, i, "[ARGS]", 1) <= 0) return -1;
        i += 6;
        if (args_at(s, n, &i, &sc, 0, &args, &args_len) < 0 || skip_space(s, n, i) != n) return -1;
        GIVE();
        return 0;
    }
    if (shape == SHAPE_GEMMA) {
        /* call:NAME{key:value,...} */
        i = skip_space(s, n, 0);
        if (tag_at(s, n, i, "call:", 1) <= 0) return -1;
        i += 5;
        if (name_until(s, n, &i, "{", name, &name_len) < 0) return -1;
        if (args_at(s, n, &i, &sc, 1, &args, &args_len) < 0 || skip_space(s, n, i) != n) return -1;
        GIVE();
        return 0;
    }
    if (shape == SHAPE_DEEPSEEK) {
        /* sections: <｜tool▁call▁begin｜>[TYPE<｜tool▁sep｜>]NAME[\n```json\n]{...}[\n```]<｜tool▁call▁end｜>, or
         * NAME<｜tool▁sep｜>{...} (V3.1) */
        int k = 0;
        for (;; k++) {
            i = skip_space(s, n, i);
            if (i == n && k) return 0;
            if (tag_at(s, n, i, DS_CALL_BEGIN, 1) <= 0) return -1;
            i += strlen(DS_CALL_BEGIN);
            if (name_until(s, n, &i, "<\n", name, &name_len) < 0) return -1;
            if (tag_at(s, n, i, DS_SEP, 1) <= 0) return -1;
            i += strlen(DS_SEP);
            if (skip_space(s, n, i) >= n || s[skip_space(s, n, i)] != '{') {
                /* TYPE<｜tool▁sep｜>NAME then a fenced object */
                if (name_until(s, n, &i, "\n<", name, &name_len) < 0) return -1;
                i = skip_space(s, n, i);
                if (tag_at(s, n, i, "```json", 1) > 0) i += 7;
            }
            if (args_at(s, n, &i, &sc, 0, &args, &args_len) < 0) return -1;
            i = skip_space(s, n, i);
            if (tag_at(s, n, i, "```", 1) > 0) i = skip_space(s, n, i + 3);
            if (tag_at(s, n, i, DS_CALL_END, 1) <= 0) return -1;
            i += strlen(DS_CALL_END);
            GIVE();
        }
    }
    if (shape == SHAPE_GENERIC) {
        /* {"tool_call": CALL}, {"tool_calls": [CALL, ...]} or {"response": "text"} */
        Json j;
        char key[16];
        size_t kl;
        json_init(&j, s, n, "reply");
        skip_ws(&j);
        if (json_enter(&j, '{') != 0 || json_next(&j, '}') <= 0 || json_key(&j, key, sizeof key - 1, &kl) != 0) return -1;
        key[kl] = '\0';
        skip_ws(&j);
        int one = !strcmp(key, "tool_call"), list = !strcmp(key, "tool_calls");
        if (!strcmp(key, "response")) {
            size_t dl;
            if (json_peek(&j) != JSON_STRING || json_string(&j, sc.p, sc.cap, &dl) != 0 || json_next(&j, '}') != 0 ||
                json_end(&j) != 0)
                return -1;
            if (emit) emit_content(t, sc.p, dl);
            return 0;
        }
        if (!one && !list) return -1;
        if (list && json_enter(&j, '[') != 0) return -1;
        int k = 0, r = 0;
        while (!list || (r = json_next(&j, ']')) > 0) {
            skip_ws(&j);
            if (parse_json_call(&j, &sc, name, &name_len, &args, &args_len) < 0) return -1;
            GIVE();
            k++;
            if (!list) break;
        }
        if ((list && (r < 0 || !k)) || json_next(&j, '}') != 0 || json_end(&j) != 0) return -1;
        return 0;
    }
    /* SHAPE_LIST: a list of Python calls or JSON objects (or JSON objects
     * one after another, a line each) */
    py_ws(s, n, &i);
    if (i < n && s[i] == '{') {
        while (i < n) {
            Json j;
            json_init(&j, s, n, "tool call");
            j.pos = i;
            if (parse_json_call(&j, &sc, name, &name_len, &args, &args_len) < 0) return -1;
            GIVE();
            i = j.pos;
            py_ws(s, n, &i);
        }
        return 0;
    }
    if (i >= n || s[i++] != '[') return -1;
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
        GIVE();
    }
#undef GIVE
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

/* Progressive: the byte just added to the block. A call's head as the
 * grammar writes it starts it (its name after the format's name_pre, up
 * to its mid, or to the arguments' "{" when mid is empty); its arguments'
 * bytes are given until their value closes. */
static void progress(ToolSplit *t)
{
    const Format *f = &formats[t->format];
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
    size_t ml = strlen(f->mid), end;
    if (ml ? t->n < ml || memcmp(t->buf + t->n - ml, f->mid, ml) != 0 : c != '{') return;
    end = ml ? t->n - ml : t->n - 1;
    /* the name: from the last name_pre before it */
    size_t pl = strlen(f->name_pre), start = pl ? (size_t)-1 : 0;
    for (size_t p = end; pl && p-- > 0 && start == (size_t)-1;)
        if (p + pl <= end && memcmp(t->buf + p, f->name_pre, pl) == 0) start = p + pl;
    if (start == (size_t)-1 || start >= end) return;
    char name[256];
    size_t name_len;
    if (f->raw_name) {
        if (end - start > 255) return;
        memcpy(name, t->buf + start, name_len = end - start);
    } else {
        Json j;
        json_init(&j, t->buf, end, "tool call");
        j.pos = start;
        if (json_peek(&j) != JSON_STRING || json_string(&j, name, sizeof name, &name_len) < 0 || j.pos != end) return;
    }
    t->call(t->ctx, t->n_calls++, name, name_len, NULL, 0);
    t->in_args = 1;
    t->args_depth = t->args_in_string = t->args_escaped = 0;
    t->piece_at = t->n;
    if (!ml) t->piece_at--, t->args_depth = 1; /* the "{" just read */
}

static void push_byte(ToolSplit *t, char c);

static int is_space(char c)
{
    return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

/* A block without a closing marker: one byte; the value followed to its
 * end (strings in double quotes, and single ones in Python's lists). */
static void push_value(ToolSplit *t, char c)
{
    const Format *f = &formats[t->format];
    if (t->pre == 1) {
        /* the text before the value: a name up to value_after */
        size_t k = strlen(f->value_after);
        t->buf[t->n++] = c;
        if (t->args_piece) progress(t);
        if (t->n >= k && memcmp(t->buf + t->n - k, f->value_after, k) == 0) t->pre = 2;
        else if (c == '\n' || t->n > 300) block_to_content(t);
        return;
    }
    if (t->pre == 2 && !is_space(c)) {
        if (c != '{' && c != '[') {
            /* no value: content, and c starts over */
            block_to_content(t);
            push_byte(t, c);
            return;
        }
        t->pre = 0;
    }
    t->buf[t->n++] = c;
    if (t->args_piece) progress(t);
    if (t->pre) return;
    static const char response[] = "{\"response\": \"";
    if (f->shape == SHAPE_GENERIC && t->n == sizeof response - 1 && memcmp(t->buf, response, t->n) == 0) {
        t->response = 1; /* its text streams */
        t->n_ws = 0;
        return;
    }
    if (t->in_string) {
        if (t->escaped) t->escaped = 0;
        else if (c == '\\') t->escaped = 1;
        else if (c == t->quote) t->in_string = 0;
    } else if (c == '"' || (c == '\'' && f->shape == SHAPE_LIST)) {
        t->in_string = 1;
        t->quote = c;
    } else if (c == '{' || c == '[') {
        t->depth++;
    } else if ((c == '}' || c == ']') && --t->depth == 0) {
        close_block(t, t->n);
    }
}

/* The escape held (t->esc) decoded into content, or as it is if it is not one. */
static void flush_escape(ToolSplit *t)
{
    char q[20], d[8];
    size_t dl = 0;
    q[0] = '"';
    memcpy(q + 1, t->esc, t->n_esc);
    q[t->n_esc + 1] = '"';
    Json j;
    json_init(&j, q, t->n_esc + 2, "response");
    if (json_string(&j, d, sizeof d, &dl) == 0) emit_content(t, d, dl);
    else emit_content(t, t->esc, t->n_esc);
    t->n_esc = 0;
}

/* The generic format's response, {"response": "TEXT"}: TEXT decoded
 * into content as it comes (an escape once whole), the block's end after it. */
static void push_response(ToolSplit *t, char c)
{
    if (t->response == 2) {
        if (c == '}') t->response = 0, t->inside = 0, t->n = 0;
        else if (!is_space(c)) emit_content(t, &c, 1); /* not the generic format's: as it is */
        return;
    }
    if (t->n_esc || c == '\\') {
        t->esc[t->n_esc++] = c;
        /* \X, \uXXXX, or a surrogate pair \uD8XX\uDCXX: whole? */
        size_t want = t->n_esc < 2 || t->esc[1] != 'u' ? 2 : 6;
        if (want == 6 && t->n_esc >= 6 && (t->esc[2] == 'd' || t->esc[2] == 'D') && strchr("89abAB", t->esc[3])) want = 12;
        if (want == 12 && ((t->n_esc == 7 && c != '\\') || (t->n_esc == 8 && c != 'u'))) {
            /* a lone high surrogate: it, then what follows it anew */
            char rest[2];
            size_t nr = t->n_esc - 6;
            memcpy(rest, t->esc + 6, nr);
            t->n_esc = 6;
            flush_escape(t);
            for (size_t i = 0; i < nr; i++) push_response(t, rest[i]);
            return;
        }
        if (t->n_esc == want) flush_escape(t);
        return;
    }
    if (c == '"') t->response = 2;
    else emit_content(t, &c, 1);
}

static void start_block(ToolSplit *t, int tagged)
{
    t->inside = 1;
    t->tagged = tagged;
    t->n = 0;
    t->depth = t->in_string = t->escaped = 0;
    t->pre = formats[t->format].close ? 0 : formats[t->format].value_after ? 1 : 2;
    memset(&t->x, 0, sizeof t->x);
}

static void push_byte(ToolSplit *t, char c)
{
    const Format *f = &formats[t->format];
    if (t->response) {
        push_response(t, c);
        return;
    }
    if (t->inside) {
        if (t->n >= t->cap) {
            /* longer than planned: it stays content */
            block_to_content(t);
        } else if (!f->close) {
            push_value(t, c);
            return;
        } else {
            t->buf[t->n++] = c;
            if (t->args_piece && t->format != TOOL_FORMAT_XML) progress(t);
            size_t cl = strlen(f->close);
            if (t->n >= cl && memcmp(t->buf + t->n - cl, f->close, cl) == 0) close_block(t, t->n - cl);
            return;
        }
    }
    const char *tag = f->open;
    size_t tag_len = strlen(tag);
    if (tag_len && tag_len <= sizeof t->hold && (t->n_hold || c == tag[0])) {
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
    if (f->bare && c == f->bare) {
        start_block(t, 0);
        push_value(t, c);
        return;
    }
    if (is_space(c)) {
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
    /* a response cut short: its text came as content already */
    if (t->response) t->response = 0, t->inside = 0, t->n = 0, t->n_esc = 0;
    /* a block cut short whose call was given already: its arguments were
     * given as far as they came (finish_reason says it was cut) */
    if (t->inside && t->held && (t->in_args || t->streamed)) t->inside = 0, t->in_args = 0, t->streamed = 0, t->n = 0;
    if (t->inside) block_to_content(t);
    if (t->n_hold) emit_content(t, t->hold, t->n_hold);
    t->n_hold = 0;
    if (t->n_calls == 0) flush_ws(t);
    t->n_ws = 0;
}
