/* test_tools.c - the <tool_call> splitter of `pith serve` (text before a
 * call stays content, several calls, a block that does not parse stays
 * content, bytes split anywhere give the same result) and the request
 * checks of tool_constraint (tool_choice, response_format, 400 reasons). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../src/text/tool_calls.h"
#include "../src/text/grammar.h"
#include "../src/text/json.h"
#include "../port/port.h"
#include "check.h"

/* DeepSeek's markers: <｜tool▁calls▁begin｜> ... */
#define DS_CALLS_BEGIN "<\xef\xbd\x9ctool\xe2\x96\x81" "calls\xe2\x96\x81" "begin\xef\xbd\x9c>"
#define DS_CALLS_END "<\xef\xbd\x9ctool\xe2\x96\x81" "calls\xe2\x96\x81" "end\xef\xbd\x9c>"
#define DS_CALL_BEGIN "<\xef\xbd\x9ctool\xe2\x96\x81" "call\xe2\x96\x81" "begin\xef\xbd\x9c>"
#define DS_CALL_END "<\xef\xbd\x9ctool\xe2\x96\x81" "call\xe2\x96\x81" "end\xef\xbd\x9c>"
#define DS_SEP "<\xef\xbd\x9ctool\xe2\x96\x81sep\xef\xbd\x9c>"

typedef struct {
    char content[4096];
    size_t n_content;
    char calls[4096];
    size_t n_calls_text;
    int n_calls;
} Got;

static void on_content(void *ctx, const char *p, size_t n)
{
    Got *g = ctx;
    memcpy(g->content + g->n_content, p, n);
    g->n_content += n;
    g->content[g->n_content] = '\0';
}

static void on_call(void *ctx, int index, const char *name, size_t name_len, const char *args, size_t args_len)
{
    Got *g = ctx;
    g->n_calls_text += (size_t)snprintf(g->calls + g->n_calls_text, sizeof g->calls - g->n_calls_text, "%d:%.*s(%.*s);",
                                        index, (int)name_len, name, (int)args_len, args ? args : "");
    g->n_calls++;
}

static void split(ToolFormat format, const char *text, size_t step, Got *g)
{
    static char buf[256];
    memset(g, 0, sizeof *g);
    ToolSplit t;
    tool_split_init(&t, format, buf, sizeof buf, on_content, on_call, g);
    size_t n = strlen(text);
    for (size_t i = 0; i < n; i += step) tool_split_push(&t, text + i, n - i < step ? n - i : step);
    tool_split_finish(&t);
}

static void splitter(void)
{
    static const struct {
        const char *text, *content, *calls;
        ToolFormat format;
    } cases[] = {
        {"Hello <b>world</b>\n", "Hello <b>world</b>\n", "", TOOL_FORMAT_TAGGED},
        {"Let me check.\n\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>",
         "Let me check.", "0:get_weather({\"city\": \"Paris\"});", TOOL_FORMAT_TAGGED},
        {"<tool_call>\n{\"name\": \"a\", \"arguments\": {}}\n</tool_call>\n<tool_call>\n{\"name\": \"b\", \"arguments\": {\"x\": [1, 2]}}\n</tool_call>\n",
         "", "0:a({});1:b({\"x\": [1, 2]});", TOOL_FORMAT_TAGGED},
        {"<tool_call>\n{\"name\": \"a\", \"arguments\": \"{\\\"q\\\": 1}\"}\n</tool_call>", "", "0:a({\"q\": 1});", TOOL_FORMAT_TAGGED},
        {"x <tool_call>\n{\"name\": \"a\", \"arguments\": {oops}\n</tool_call> y",
         "x <tool_call>\n{\"name\": \"a\", \"arguments\": {oops}\n</tool_call> y", "", TOOL_FORMAT_TAGGED},
        {"<tool_call>{\"arguments\": {}}</tool_call>", "<tool_call>{\"arguments\": {}}</tool_call>", "", TOOL_FORMAT_TAGGED},
        /* arguments decoded into the scratch, then no name: the block stays as it was */
        {"<tool_call>{\"arguments\": \"{\\\"a\\\": 1}\"}</tool_call>", "<tool_call>{\"arguments\": \"{\\\"a\\\": 1}\"}</tool_call>", "",
         TOOL_FORMAT_TAGGED},
        {"never closed <tool_call>\n{\"name\": \"a\"", "never closed <tool_call>\n{\"name\": \"a\"", "", TOOL_FORMAT_TAGGED},
        {"<tool_ca", "<tool_ca", "", TOOL_FORMAT_TAGGED},
        {"<<tool_call>{\"name\": \"a\", \"arguments\": {}}</tool_call>after", "<after", "0:a({});", TOOL_FORMAT_TAGGED},
        /* Llama 3.x: the JSON object alone, after <|python_tag|> or not */
        {"{\"name\": \"get_weather\", \"parameters\": {\"city\": \"Paris\", \"q\": \"}{\\\"\"}}", "",
         "0:get_weather({\"city\": \"Paris\", \"q\": \"}{\\\"\"});", TOOL_FORMAT_JSON},
        {"Let me look.\n<|python_tag|>{\"name\": \"a\", \"parameters\": {\"x\": [1, {}]}}\n", "Let me look.",
         "0:a({\"x\": [1, {}]});", TOOL_FORMAT_JSON},
        {"Use {braces} and {\"name\": \"a\"} <|python_x", "Use {braces} and {\"name\": \"a\"} <|python_x", "",
         TOOL_FORMAT_JSON},
        {"<|python_tag|>print(1)", "<|python_tag|>print(1)", "", TOOL_FORMAT_JSON},
        {"<|python_tag|> <|python_tag|>{\"name\": \"a\", \"arguments\": \"{}\"}", "<|python_tag|> ", "0:a({});",
         TOOL_FORMAT_JSON},
        {"never closed {\"name\": \"a\", \"parameters\": {", "never closed {\"name\": \"a\", \"parameters\": {", "",
         TOOL_FORMAT_JSON},
        {"<tool_call>{\"name\": \"a\", \"arguments\": {}}</tool_call>", "<tool_call></tool_call>", "0:a({});",
         TOOL_FORMAT_JSON},
        /* LFM2: a list of Python calls (or JSON objects) in its markers */
        {"Checking.<|tool_call_start|>[get_status(candidate_id=\"12345\")]<|tool_call_end|>", "Checking.",
         "0:get_status({\"candidate_id\": \"12345\"});", TOOL_FORMAT_LFM2},
        {"<|tool_call_start|>[f(a=1, b='x\\'y\"', c=[True, None, -2.5e3], d={'k': (1, 2)},), g()]<|tool_call_end|> done",
         " done", "0:f({\"a\": 1, \"b\": \"x'y\\\"\", \"c\": [true, null, -2.5e3], \"d\": {\"k\": [1, 2]}});1:g({});",
         TOOL_FORMAT_LFM2},
        {"<|tool_call_start|>[{\"name\": \"a\", \"arguments\": {\"x\": 1}}, b(y=\"\\n\")]<|tool_call_end|>", "",
         "0:a({\"x\": 1});1:b({\"y\": \"\\n\"});", TOOL_FORMAT_LFM2},
        {"<|tool_call_start|>[f(a=x)]<|tool_call_end|>", "<|tool_call_start|>[f(a=x)]<|tool_call_end|>", "",
         TOOL_FORMAT_LFM2},
        {"<|tool_call_start|>[f(1)]<|tool_call_end|>", "<|tool_call_start|>[f(1)]<|tool_call_end|>", "", TOOL_FORMAT_LFM2},
        {"<|tool_call_start|>[]<|tool_call_end|>", "<|tool_call_start|>[]<|tool_call_end|>", "", TOOL_FORMAT_LFM2},
        {"<|tool_call_start|>[f()", "<|tool_call_start|>[f()", "", TOOL_FORMAT_LFM2},
        /* Qwen3.5's format: values that are JSON stay JSON, the rest become strings */
        {"Checking.\n\n<tool_call>\n<function=get_weather>\n<parameter=city>\nParis, \"FR\"\n</parameter>\n"
         "<parameter=days>\n3\n</parameter>\n<parameter=opts>\n{\"unit\": \"C\"}\n</parameter>\n</function>\n</tool_call>",
         "Checking.", "0:get_weather({\"city\": \"Paris, \\\"FR\\\"\", \"days\": 3, \"opts\": {\"unit\": \"C\"}});", TOOL_FORMAT_TAGGED},
        {"<tool_call>\n<function=now>\n</function>\n</tool_call>\n<tool_call>\n<function=say>\n<parameter=text>\ntwo\nlines\n"
         "</parameter>\n<parameter=e>\n\n</parameter>\n</function>\n</tool_call>",
         "", "0:now({});1:say({\"text\": \"two\\nlines\", \"e\": \"\"});", TOOL_FORMAT_TAGGED},
        {"<tool_call>\n<function=f>\n<parameter=x>\n1\n</function>\n</tool_call>",
         "<tool_call>\n<function=f>\n<parameter=x>\n1\n</function>\n</tool_call>", "", TOOL_FORMAT_TAGGED},
        {"<tool_call>\n<function=f>\n</function>\ntrailing</tool_call>", "<tool_call>\n<function=f>\n</function>\ntrailing</tool_call>", "", TOOL_FORMAT_TAGGED},
        /* Mistral Nemo: a JSON list after [TOOL_CALLS], to its closing bracket */
        {"Sure.[TOOL_CALLS][{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris ]\"}, \"id\": \"a1b2c3d4e\"}, "
         "{\"name\": \"now\", \"arguments\": {}}]",
         "Sure.", "0:get_weather({\"city\": \"Paris ]\"});1:now({});", TOOL_FORMAT_MISTRAL},
        {"[TOOL_CALLS] oops [x]", "[TOOL_CALLS] oops [x]", "", TOOL_FORMAT_MISTRAL},
        {"[TOOL_CALLS][{\"name\": \"a\"}]", "[TOOL_CALLS][{\"name\": \"a\"}]", "", TOOL_FORMAT_MISTRAL},
        /* Mistral Small 3.2, Ministral 3, Devstral: [TOOL_CALLS]NAME[ARGS]{...} per call */
        {"[TOOL_CALLS]get_weather[ARGS]{\"city\": \"Paris\"}[TOOL_CALLS]now[ARGS]{}", "",
         "0:get_weather({\"city\": \"Paris\"});1:now({});", TOOL_FORMAT_MISTRAL_ARGS},
        {"Let me see. [TOOL_CALLS]get_weather[CALL_ID]a1b2c3d4e[ARGS]{\"city\": \"{[\"}", "Let me see.",
         "0:get_weather({\"city\": \"{[\"});", TOOL_FORMAT_MISTRAL_ARGS},
        {"[TOOL_CALLS]two words\n[ARGS]{}", "[TOOL_CALLS]two words\n[ARGS]{}", "", TOOL_FORMAT_MISTRAL_ARGS},
        {"[TOOL_CALLS]f[ARGS]x{}", "[TOOL_CALLS]f[ARGS]x{}", "", TOOL_FORMAT_MISTRAL_ARGS},
        {"[TOOL_CALLS]f[ARGS][1]", "[TOOL_CALLS]f[ARGS][1]", "", TOOL_FORMAT_MISTRAL_ARGS},
        /* Granite 3.3: <|tool_call|> and a JSON list */
        {"<|tool_call|>[{\"name\": \"a\", \"arguments\": {\"x\": 1}}, {\"name\": \"b\", \"arguments\": \"{}\"}] ", "",
         "0:a({\"x\": 1});1:b({});", TOOL_FORMAT_GRANITE},
        {"<|tool_call|>{\"name\": \"a\", \"arguments\": {}}", "", "0:a({});", TOOL_FORMAT_GRANITE},
        /* Phi-4-mini: a list (or one object) in <|tool_call|>...<|/tool_call|> */
        {"<|tool_call|>[{\"name\": \"a\", \"arguments\": {\"x\": \"<|/tool\"}}]<|/tool_call|>", "", "0:a({\"x\": \"<|/tool\"});",
         TOOL_FORMAT_PHI4},
        {"<|tool_call|>{\"name\": \"a\", \"arguments\": {}}<|/tool_call|>", "", "0:a({});", TOOL_FORMAT_PHI4},
        {"<|tool_call|>[a(]<|/tool_call|>", "<|tool_call|>[a(]<|/tool_call|>", "", TOOL_FORMAT_PHI4},
        /* Nemotron Nano v2, Apriel 1.6 / MiniMax-M1, Firefunction v2: lists (or lines of objects) in their markers */
        {"<TOOLCALL>[{\"name\": \"a\", \"arguments\": {\"x\": 1}}]</TOOLCALL>", "", "0:a({\"x\": 1});", TOOL_FORMAT_NEMOTRON},
        {"<tool_calls>\n{\"name\": \"a\", \"arguments\": {}}\n{\"name\": \"b\", \"arguments\": {\"y\": 2}}\n</tool_calls>", "",
         "0:a({});1:b({\"y\": 2});", TOOL_FORMAT_TOOL_CALLS},
        {"<tool_calls>{\"name\": \"a\", \"arguments\": {}} [b()]</tool_calls>", "<tool_calls>{\"name\": \"a\", \"arguments\": {}} [b()]</tool_calls>",
         "", TOOL_FORMAT_TOOL_CALLS},
        {"for the functools[{\"name\": \"a\", \"arguments\": {}}] x", "for the x", "0:a({});", TOOL_FORMAT_FUNCTOOLS},
        /* pythonic: the reply is a list of calls; other brackets stay content */
        {"[get_weather(city=\"Paris\", days=3), now()]", "", "0:get_weather({\"city\": \"Paris\", \"days\": 3});1:now({});",
         TOOL_FORMAT_PYTHONIC},
        {"[f(s='a]b', t=\"c'd\")]", "", "0:f({\"s\": \"a]b\", \"t\": \"c'd\"});", TOOL_FORMAT_PYTHONIC},
        {"See [1] and [the docs](x), [a, b].", "See [1] and [the docs](x), [a, b].", "", TOOL_FORMAT_PYTHONIC},
        {"[{\"name\": \"a\", \"arguments\": {\"k\": [1]}}]", "", "0:a({\"k\": [1]});", TOOL_FORMAT_PYTHONIC},
        {"[unclosed(", "[unclosed(", "", TOOL_FORMAT_PYTHONIC},
        /* Gemma 4: call:NAME{...} in its own literals, or JSON */
        {"<|tool_call>call:get_weather{city:<|\"|>Paris, \"FR\"<|\"|>,days:3,opts:{hourly:true,note:None},tags:[<|\"|>a<|\"|>,-1.5]}<tool_call|>"
         "<|tool_call>call:now{}<tool_call|>",
         "", "0:get_weather({\"city\": \"Paris, \\\"FR\\\"\", \"days\": 3, \"opts\": {\"hourly\": true, \"note\": null}, "
         "\"tags\": [\"a\", -1.5]});1:now({});",
         TOOL_FORMAT_GEMMA4},
        {"Hi <|tool_call>call:f{\"a\": \"x\"}<tool_call|>", "Hi", "0:f({\"a\": \"x\"});", TOOL_FORMAT_GEMMA4},
        {"<|tool_call>call:f{a:<|\"|>x}<tool_call|>", "<|tool_call>call:f{a:<|\"|>x}<tool_call|>", "", TOOL_FORMAT_GEMMA4},
        {"<|tool_call>f{}<tool_call|>", "<|tool_call>f{}<tool_call|>", "", TOOL_FORMAT_GEMMA4},
        /* DeepSeek R1: fenced JSON in sections; V3.1: the object after the separator */
        {"<think>x</think>\n\n" DS_CALLS_BEGIN DS_CALL_BEGIN "function" DS_SEP "get_weather\n```json\n{\"city\": \"Paris\"}\n```" DS_CALL_END
         "\n" DS_CALL_BEGIN "function" DS_SEP "now\n```json\n{}\n```" DS_CALL_END DS_CALLS_END,
         "<think>x</think>", "0:get_weather({\"city\": \"Paris\"});1:now({});", TOOL_FORMAT_DEEPSEEK_R1},
        {DS_CALLS_BEGIN DS_CALL_BEGIN "get_weather" DS_SEP "{\"city\": \"Paris\"}" DS_CALL_END DS_CALLS_END, "",
         "0:get_weather({\"city\": \"Paris\"});", TOOL_FORMAT_DEEPSEEK_V3},
        {DS_CALLS_BEGIN DS_CALL_BEGIN "function" DS_SEP "f\n```json\n{oops}\n```" DS_CALL_END DS_CALLS_END,
         DS_CALLS_BEGIN DS_CALL_BEGIN "function" DS_SEP "f\n```json\n{oops}\n```" DS_CALL_END DS_CALLS_END, "", TOOL_FORMAT_DEEPSEEK_R1},
        /* the generic format: a call, calls, or a response whose text is content */
        {"{\"tool_call\": {\"name\": \"a\", \"arguments\": {\"x\": \"}\"}}}", "", "0:a({\"x\": \"}\"});", TOOL_FORMAT_GENERIC},
        {"{\"tool_calls\": [{\"name\": \"a\", \"arguments\": {}}, {\"name\": \"b\", \"arguments\": {\"y\": 2}}]}", "",
         "0:a({});1:b({\"y\": 2});", TOOL_FORMAT_GENERIC},
        {"{\"response\": \"Hi \\\"there\\\"\\n\\u00e9\"}", "Hi \"there\"\n\xc3\xa9", "", TOOL_FORMAT_GENERIC},
        {"{\"other\": 1}", "{\"other\": 1}", "", TOOL_FORMAT_GENERIC},
        {"{\"response\": \"cut", "cut", "", TOOL_FORMAT_GENERIC}, /* its text streams: cut short, what came */
        {"\n{\"response\": \"\\ud83d\\ude00 \\/\\t\"} ", "\xf0\x9f\x98\x80 /\t ", "", TOOL_FORMAT_GENERIC},
        /* a lone high surrogate stays as it was written; the text goes on */
        {"{\"response\": \"a\\ud83d\"} b", "a\\ud83d b", "", TOOL_FORMAT_GENERIC},
        {"{\"response\": \"\\uD83Dx\\n\"}", "\\uD83Dx\n", "", TOOL_FORMAT_GENERIC},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        for (size_t step = 1; step <= 64; step *= 4) {
            Got g;
            split(cases[i].format, cases[i].text, step, &g);
            int ok = !strcmp(g.content, cases[i].content) && !strcmp(g.calls, cases[i].calls);
            CHECK(ok, "splitter case %zu in pieces of %zu: content '%s' calls '%s'", i, step, ok ? "as expected" : g.content,
                  g.calls);
        }
    }
    /* a block longer than the buffer stays content */
    static char big[2000];
    size_t n = (size_t)snprintf(big, sizeof big, "<tool_call>{\"name\": \"a\", \"arguments\": {\"s\": \"");
    while (n < 600) big[n++] = 'x';
    n += (size_t)snprintf(big + n, sizeof big - n, "\"}}</tool_call>");
    Got g;
    split(TOOL_FORMAT_TAGGED, big, 7, &g);
    CHECK(g.n_calls == 0 && g.n_content == n && !memcmp(g.content, big, n), "a block longer than its buffer stays content");
}

/* Progressive: a start (args NULL) per call, then its arguments in pieces */
typedef struct {
    char text[4096];
    size_t n;
    int starts, pieces;
} Prog;

static void prog_content(void *ctx, const char *p, size_t n)
{
    Prog *g = ctx;
    g->n += (size_t)snprintf(g->text + g->n, sizeof g->text - g->n, "[content %.*s]", (int)n, p);
}

static void prog_call(void *ctx, int index, const char *name, size_t name_len, const char *args, size_t args_len)
{
    Prog *g = ctx;
    if (!args) g->starts++;
    g->n += (size_t)snprintf(g->text + g->n, sizeof g->text - g->n, "%d:%.*s(%.*s)", index, (int)name_len, name,
                             (int)args_len, args ? args : "");
}

static void prog_piece(void *ctx, int index, const char *p, size_t n)
{
    Prog *g = ctx;
    g->pieces++;
    g->n += (size_t)snprintf(g->text + g->n, sizeof g->text - g->n, "<%d %.*s>", index, (int)n, p);
}

static void prog_piece_none(void *ctx, int index, const char *p, size_t n)
{
    (void)ctx, (void)index, (void)p, (void)n;
}

static void progressive(void)
{
    static const struct {
        ToolFormat format;
        const char *text, *want;
    } cases[] = {
        {TOOL_FORMAT_TAGGED,
         "<tool_call>\n{\"name\": \"a\", \"arguments\": {\"s\": \"}{\\\"\", \"n\": [1]}}\n</tool_call>\n<tool_call>\n{\"name\": \"b\", \"arguments\": {}}\n</tool_call>",
         "0:a()<0 {\"s\": \"}{\\\"\", \"n\": [1]}>1:b()<1 {}>"},
        {TOOL_FORMAT_JSON, "{\"name\": \"get\", \"parameters\": {\"city\": \"Oslo\"}}", "0:get()<0 {\"city\": \"Oslo\"}>"},
        {TOOL_FORMAT_LFM2,
         "<|tool_call_start|>[{\"name\": \"a\", \"arguments\": {\"x\": 1}}, {\"name\": \"b\", \"arguments\": {\"y\": \"z\"}}]<|tool_call_end|>",
         "0:a()<0 {\"x\": 1}>1:b()<1 {\"y\": \"z\"}>"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        for (size_t step = 1; step <= 64; step *= 4) {
            static char buf[512];
            Prog g;
            memset(&g, 0, sizeof g);
            ToolSplit t;
            tool_split_init(&t, cases[i].format, buf, sizeof buf, prog_content, prog_call, &g);
            tool_split_progressive(&t, prog_piece, 1);
            size_t n = strlen(cases[i].text);
            for (size_t k = 0; k < n; k += step) tool_split_push(&t, cases[i].text + k, n - k < step ? n - k : step);
            tool_split_finish(&t);
            /* each push gives its own piece: "><N " between pieces of one call joined */
            char merged[4096];
            size_t m = 0;
            for (size_t k = 0; k < g.n; k++) {
                if (g.text[k] == '>' && k + 3 < g.n && g.text[k + 1] == '<' && g.text[k + 3] == ' ') {
                    k += 3;
                    continue;
                }
                merged[m++] = g.text[k];
            }
            merged[m] = '\0';
            int many = step > 4 || g.pieces > 2; /* in small pushes, several pieces */
            CHECK(!strcmp(merged, cases[i].want) && many, "progressive case %zu in pieces of %zu: %s (%d pieces)", i, step,
                  merged, g.pieces);
        }
    }
    /* cut short after the arguments began: nothing goes back to content */
    static char buf[512];
    Prog g;
    memset(&g, 0, sizeof g);
    ToolSplit t;
    tool_split_init(&t, TOOL_FORMAT_TAGGED, buf, sizeof buf, prog_content, prog_call, &g);
    tool_split_progressive(&t, prog_piece, 1);
    const char *cut = "<tool_call>\n{\"name\": \"a\", \"arguments\": {\"s\": \"ab";
    tool_split_push(&t, cut, strlen(cut));
    tool_split_finish(&t);
    CHECK(!strcmp(g.text, "0:a()<0 {\"s\": \"ab>"), "a call cut short keeps its partial arguments, no content: %s", g.text);
}

/* Progressive, Qwen3.5: each call's name and its pieces joined, the
 * content, and how many pieces */
typedef struct {
    char name[8][64], args[8][1024], content[2048];
    size_t n_args[8], n_content;
    int n, pieces;
} XProg;

static void xp_content(void *ctx, const char *p, size_t n)
{
    XProg *g = ctx;
    memcpy(g->content + g->n_content, p, n);
    g->content[g->n_content += n] = '\0';
}

static void xp_piece(void *ctx, int index, const char *p, size_t n);

static void xp_call(void *ctx, int index, const char *name, size_t name_len, const char *args, size_t args_len)
{
    XProg *g = ctx;
    CHECK(index == g->n && index < 8, "progressive: call %d in order", index);
    snprintf(g->name[index], sizeof g->name[0], "%.*s", (int)name_len, name);
    g->n++;
    if (args) xp_piece(ctx, index, args, args_len); /* a block that came whole in one push */
}

static void xp_piece(void *ctx, int index, const char *p, size_t n)
{
    XProg *g = ctx;
    memcpy(g->args[index] + g->n_args[index], p, n);
    g->args[index][g->n_args[index] += n] = '\0';
    g->pieces++;
}

/* text through a progressive splitter in pieces of step (held: forced);
 * its calls written as on_call writes them into calls */
static void xml_prog(const char *text, size_t step, int held, const char *body, size_t len, size_t tools, XProg *g,
                     char *calls, size_t cap, ToolSplit *ts)
{
    static char buf[1024], kinds[TOOL_KINDS_CAP];
    memset(g, 0, sizeof *g);
    tool_split_init(ts, TOOL_FORMAT_XML, buf, sizeof buf, xp_content, xp_call, g);
    tool_split_schemas(ts, body, len, tools, kinds, sizeof kinds);
    tool_split_progressive(ts, xp_piece, held);
    for (size_t k = 0, n = strlen(text); k < n; k += step) tool_split_push(ts, text + k, n - k < step ? n - k : step);
    tool_split_finish(ts);
    size_t o = 0;
    calls[0] = '\0';
    for (int i = 0; i < g->n; i++) o += (size_t)snprintf(calls + o, cap - o, "%d:%s(%s);", i, g->name[i], g->args[i]);
}

enum { TEST_GRAMMAR_DEPTH = 64, TEST_GRAMMAR_ALTS = 256 };

/* G initialised in an arena of its own (returned, for port_arena_unmap with
 * grammar_bytes(TEST_GRAMMAR_DEPTH, TEST_GRAMMAR_ALTS)). */
static void *grammar_in_arena(Grammar *G)
{
    uint64_t bytes = grammar_bytes(TEST_GRAMMAR_DEPTH, TEST_GRAMMAR_ALTS);
    void *mem = port_arena_map((size_t)bytes);
    Arena a;
    arena_init(&a, mem, bytes);
    grammar_init(G, &a, TEST_GRAMMAR_DEPTH, TEST_GRAMMAR_ALTS);
    return mem;
}

static void constraint(void)
{
    static char gbnf[GRAMMAR_MAX_TEXT + 1];
    char why[400];
    ToolConstraint ac;
    const char *tools = "{\"tools\": [{\"type\": \"function\", \"function\": {\"name\": \"get_weather\", \"parameters\": "
                        "{\"type\": \"object\", \"properties\": {\"city\": {\"type\": \"string\"}}, \"required\": [\"city\"]}}},"
                        " {\"type\": \"function\", \"function\": {\"name\": \"now\"}}],"
                        " \"tc_required\": \"required\", \"tc_none\": \"none\", \"tc_named\": {\"type\": \"function\", \"function\": {\"name\": \"now\"}},"
                        " \"tc_missing\": {\"type\": \"function\", \"function\": {\"name\": \"nope\"}}, \"tc_bad\": \"sometimes\","
                        " \"rf_obj\": {\"type\": \"json_object\"}, \"rf_bad\": {\"type\": \"xml\"},"
                        " \"rf_schema\": {\"type\": \"json_schema\", \"json_schema\": {\"name\": \"n\", \"schema\": {\"type\": \"integer\"}}},"
                        " \"rf_unsupported\": {\"type\": \"json_schema\", \"json_schema\": {\"schema\": {\"type\": \"string\", \"format\": \"email\"}}}}";
    size_t len = strlen(tools);
#define POS(key) ((size_t)(strstr(tools, "\"" key "\":") - tools) + strlen(key) + 4)
    size_t t = POS("tools");
    static Grammar G;
    void *mem = grammar_in_arena(&G);

    int rc = tool_constraint(tools, len, TOOL_ABSENT, TOOL_ABSENT, t, TOOL_FORMAT_TAGGED, gbnf, sizeof gbnf, &ac, why, sizeof why);
    CHECK(rc == 0 && ac.render && ac.parse && !ac.forced && ac.grammar_len == 0, "tools alone: auto, rendered, parsed, no grammar");
    rc = tool_constraint(tools, len, TOOL_ABSENT, TOOL_ABSENT, t, TOOL_FORMAT_XML, gbnf, sizeof gbnf, &ac, why, sizeof why);
    CHECK(rc == 0 && ac.render && ac.parse && !ac.forced, "tools with Qwen3.5's template: rendered and parsed");
    rc = tool_constraint(tools, len, TOOL_ABSENT, POS("tc_none"), t, TOOL_FORMAT_TAGGED, gbnf, sizeof gbnf, &ac, why, sizeof why);
    CHECK(rc == 0 && !ac.render && !ac.parse && ac.grammar_len == 0, "tool_choice none: tools neither rendered nor parsed");
    rc = tool_constraint(tools, len, TOOL_ABSENT, POS("tc_required"), t, TOOL_FORMAT_TAGGED, gbnf, sizeof gbnf, &ac, why, sizeof why);
    CHECK(rc == 0 && ac.forced && ac.grammar_len > 0, "tool_choice required: a grammar (%s)", rc ? why : "");
    if (rc == 0) {
        rc = grammar_compile(&G, gbnf, ac.grammar_len, "tools", why, sizeof why);
        CHECK(rc == 0, "its grammar compiles (%s)", rc ? why : "");
        const char *call = "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Oslo\"}}\n</tool_call>\n"
                           "<tool_call>\n{\"name\": \"now\", \"arguments\": {}}\n</tool_call>";
        grammar_reset(&G);
        int ok2 = grammar_accept(&G, call, strlen(call)) == 0 && grammar_can_end(&G);
        if (!ok2) printf("# the grammar:\n%s", gbnf);
        CHECK(ok2, "two calls with valid arguments match");
        grammar_reset(&G);
        const char *bad = "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"town\": \"Oslo\"}}";
        CHECK(grammar_accept(&G, bad, strlen(bad)) != 0, "arguments outside the parameters schema do not");
        grammar_reset(&G);
        CHECK(grammar_accept(&G, "Sure", 4) != 0 && !grammar_can_end(&G), "text instead of a call does not, nor the end");
    }
    rc = tool_constraint(tools, len, TOOL_ABSENT, POS("tc_named"), t, TOOL_FORMAT_TAGGED, gbnf, sizeof gbnf, &ac, why, sizeof why);
    CHECK(rc == 0 && ac.forced && grammar_compile(&G, gbnf, ac.grammar_len, "tools", why, sizeof why) == 0, "named function: a grammar");
    if (rc == 0) {
        const char *c1 = "<tool_call>\n{\"name\": \"now\", \"arguments\": {}}\n</tool_call>";
        const char *c2 = "<tool_call>\n{\"name\": \"get_weather\"";
        grammar_reset(&G);
        int ok1 = grammar_accept(&G, c1, strlen(c1)) == 0 && grammar_finished(&G);
        grammar_reset(&G);
        CHECK(ok1 && grammar_accept(&G, c2, strlen(c2)) != 0, "only the named function, once");
    }
    /* Llama 3.1: one call, its JSON object alone */
    rc = tool_constraint(tools, len, TOOL_ABSENT, POS("tc_required"), t, TOOL_FORMAT_JSON, gbnf, sizeof gbnf, &ac, why,
                        sizeof why);
    CHECK(rc == 0 && ac.forced && ac.format == TOOL_FORMAT_JSON &&
              grammar_compile(&G, gbnf, ac.grammar_len, "tools", why, sizeof why) == 0,
          "llama3.1, tool_choice required: a grammar (%s)", rc ? why : "");
    if (rc == 0) {
        const char *c1 = "{\"name\": \"get_weather\", \"parameters\": {\"city\": \"Oslo\"}}";
        const char *c2 = "{\"name\": \"now\", \"parameters\": {}}\n{";
        const char *c3 = "<tool_call>";
        grammar_reset(&G);
        int ok1 = grammar_accept(&G, c1, strlen(c1)) == 0 && grammar_finished(&G);
        grammar_reset(&G);
        int ok2 = grammar_accept(&G, c2, strlen(c2)) != 0;
        grammar_reset(&G);
        CHECK(ok1 && ok2 && grammar_accept(&G, c3, strlen(c3)) != 0, "llama3.1: one call of either function, nothing else");
    }
    /* LFM2: the JSON form of its calls in its markers */
    rc = tool_constraint(tools, len, TOOL_ABSENT, POS("tc_required"), t, TOOL_FORMAT_LFM2, gbnf, sizeof gbnf, &ac, why,
                        sizeof why);
    CHECK(rc == 0 && ac.forced && ac.format == TOOL_FORMAT_LFM2 &&
              grammar_compile(&G, gbnf, ac.grammar_len, "tools", why, sizeof why) == 0,
          "lfm2, tool_choice required: a grammar (%s)", rc ? why : "");
    if (rc == 0) {
        const char *c1 = "<|tool_call_start|>[{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Oslo\"}}, "
                         "{\"name\": \"now\", \"arguments\": {}}]<|tool_call_end|>";
        grammar_reset(&G);
        int ok1 = grammar_accept(&G, c1, strlen(c1)) == 0 && grammar_finished(&G);
        grammar_reset(&G);
        CHECK(ok1 && grammar_accept(&G, "<|tool_call_start|>[now(", 24) != 0, "lfm2: a list of calls as JSON, not Python's form");
    }
    static const struct {
        const char *rf, *tc, *want;
        ToolFormat tmpl;
    } bad[] = {
        {NULL, "tc_missing", "tool_choice: no tool is called 'nope'", TOOL_FORMAT_TAGGED},
        {NULL, "tc_bad", "tool_choice: 'sometimes' is not none, auto, required or a function", TOOL_FORMAT_TAGGED},
        {"rf_bad", NULL, "response_format.type: 'xml'", TOOL_FORMAT_TAGGED},
        {"rf_unsupported", NULL, "unsupported keyword 'format'", TOOL_FORMAT_TAGGED},
        {"rf_obj", "tc_required", "cannot be combined", TOOL_FORMAT_TAGGED},
        {"rf_obj", NULL, "cannot be combined with tools for a template without a tool-call format", TOOL_FORMAT_GENERIC},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        size_t rf = bad[i].rf ? (size_t)(strstr(tools, bad[i].rf) - tools) + strlen(bad[i].rf) + 3 : TOOL_ABSENT;
        size_t tc = bad[i].tc ? (size_t)(strstr(tools, bad[i].tc) - tools) + strlen(bad[i].tc) + 3 : TOOL_ABSENT;
        why[0] = '\0';
        rc = tool_constraint(tools, len, rf, tc, t, bad[i].tmpl, gbnf, sizeof gbnf, &ac, why, sizeof why);
        CHECK(rc != 0 && strstr(why, bad[i].want), "refused: want '%s', got '%s'", bad[i].want, why);
    }
    size_t rf = (size_t)(strstr(tools, "rf_schema") - tools) + 12;
    rc = tool_constraint(tools, len, rf, TOOL_ABSENT, TOOL_ABSENT, TOOL_FORMAT_GENERIC, gbnf, sizeof gbnf, &ac, why, sizeof why);
    int ok = rc == 0 && grammar_compile(&G, gbnf, ac.grammar_len, "rf", why, sizeof why) == 0;
    grammar_reset(&G);
    CHECK(ok && grammar_accept(&G, "-42", 3) == 0 && grammar_can_end(&G), "response_format json_schema: an integer");
    port_arena_unmap(mem, (size_t)grammar_bytes(TEST_GRAMMAR_DEPTH, TEST_GRAMMAR_ALTS));
}

/* Qwen3.5's <function=...> form under tool_choice required and named: the
 * grammar holds names, required parameters and values, and every call it
 * takes comes back out of the splitter (with the table of string
 * parameters) as arguments under the schema. */
static void xml_constraint(void)
{
    static char gbnf[GRAMMAR_MAX_TEXT + 1];
    char why[400];
    ToolConstraint ac;
    const char *body =
        "{\"tools\": [{\"type\": \"function\", \"function\": {\"name\": \"get_weather\", \"parameters\": {\"type\": \"object\", "
        "\"properties\": {\"city\": {\"type\": \"string\", \"description\": \"a town\"}, \"unit\": {\"enum\": [\"c\", \"f\"]}, "
        "\"days\": {\"type\": \"integer\", \"minimum\": 0}, \"opts\": {\"type\": \"object\", \"properties\": {\"hourly\": "
        "{\"type\": \"boolean\"}}, \"required\": [\"hourly\"]}, \"note\": {\"type\": [\"string\", \"null\"]}, \"code\": "
        "{\"type\": \"string\", \"maxLength\": 3}}, \"required\": [\"city\", \"unit\"]}}},"
        " {\"type\": \"function\", \"function\": {\"name\": \"now\"}}],"
        " \"tc_required\": \"required\", \"tc_named\": {\"type\": \"function\", \"function\": {\"name\": \"now\"}},"
        " \"bad_top\": [{\"type\": \"function\", \"function\": {\"name\": \"f\", \"parameters\": {\"anyOf\": [{\"type\": \"object\"}]}}}],"
        " \"bad_name\": [{\"type\": \"function\", \"function\": {\"name\": \"a>b\"}}],"
        " \"bad_key\": [{\"type\": \"function\", \"function\": {\"name\": \"f\", \"parameters\": {\"properties\": {\"a\\nb\": {}}}}}],"
        " \"bad_kw\": [{\"type\": \"function\", \"function\": {\"name\": \"f\", \"parameters\": {\"properties\": {\"a\": {\"type\": \"string\", \"pattern\": \"x\"}}}}}]}";
    size_t len = strlen(body);
#define XPOS(key) ((size_t)(strstr(body, "\"" key "\":") - body) + strlen(key) + 4)
    size_t t = XPOS("tools");
    static Grammar G;
    void *mem = grammar_in_arena(&G);
    static char kinds[TOOL_KINDS_CAP];
    static const struct {
        const char *text, *args; /* args: the splitter's output; NULL: the grammar refuses the text */
    } cases[] = {
        {"<tool_call>\n<function=get_weather>\n<parameter=city>\n12345\n</parameter>\n<parameter=unit>\nc\n</parameter>\n"
         "</function>\n</tool_call>",
         "0:get_weather({\"city\": \"12345\", \"unit\": \"c\"});"},
        {"<tool_call>\n<function=get_weather>\n<parameter=city>\nSt. <b>Malo</b> </tool>\n\"a\" </parameter\n</parameter>\n"
         "<parameter=unit>\nf\n</parameter>\n<parameter=days>\n3\n</parameter>\n<parameter=opts>\n{\"hourly\": true}\n</parameter>\n"
         "<parameter=note>\n\"true\"\n</parameter>\n<parameter=code>\n\n\"x\n</parameter>\n</function>\n</tool_call>\n"
         "<tool_call>\n<function=now>\n</function>\n</tool_call>",
         "0:get_weather({\"city\": \"St. <b>Malo</b> </tool>\\n\\\"a\\\" </parameter\", \"unit\": \"f\", \"days\": 3, "
         "\"opts\": {\"hourly\": true}, \"note\": \"true\", \"code\": \"\\n\\\"x\"});1:now({});"},
        {"<tool_call>\n<function=get_weather>\n<parameter=city>\ntrue\n</parameter>\n<parameter=unit>\nc\n</parameter>\n"
         "<parameter=note>\nnull\n</parameter>\n<parameter=code>\n\n</parameter>\n</function>\n</tool_call>",
         "0:get_weather({\"city\": \"true\", \"unit\": \"c\", \"note\": null, \"code\": \"\"});"},
        {"<tool_call>\n<function=get_wether>", NULL},
        {"<tool_call>\n<function=get_weather>\n<parameter=unit>", NULL},                             /* city first */
        {"<tool_call>\n<function=get_weather>\n<parameter=city>\nx\n</parameter>\n</function>", NULL}, /* unit required */
        {"<tool_call>\n<function=get_weather>\n<parameter=city>\nx</parameter>", NULL},
        {"<tool_call>\n<function=get_weather>\n<parameter=city>\nx</tool_call>", NULL},
        {"<tool_call>\n<function=get_weather>\n<parameter=city>\nx\n</parameter>\n<parameter=unit>\nk", NULL},
        {"<tool_call>\n<function=get_weather>\n<parameter=city>\nx\n</parameter>\n<parameter=unit>\nc\n</parameter>\n"
         "<parameter=days>\n-1",
         NULL},
        {"<tool_call>\n<function=get_weather>\n<parameter=city>\nx\n</parameter>\n<parameter=unit>\nc\n</parameter>\n"
         "<parameter=note>\nplain",
         NULL}, /* a string that may be null: JSON */
        {"<tool_call>\n<function=get_weather>\n<parameter=city>\nx\n</parameter>\n<parameter=unit>\nc\n</parameter>\n"
         "<parameter=note>\n\"a<",
         NULL}, /* '<' in JSON: \u003c */
        {"<tool_call>\n<function=get_weather>\n<parameter=city>\nx\n</parameter>\n<parameter=unit>\nc\n</parameter>\n"
         "<parameter=code>\nabcd",
         NULL}, /* maxLength */
        {"<tool_call>\n<function=get_weather>\n<parameter=city>\nx\n</parameter>\n<parameter=unit>\nc\n</parameter>\n"
         "<parameter=opts>\n{}",
         NULL},
        {"<tool_call>\n{\"name\": \"now\", \"arguments\": {}}\n</tool_call>", NULL}, /* Qwen3's form */
    };
    int rc = tool_constraint(body, len, TOOL_ABSENT, XPOS("tc_required"), t, TOOL_FORMAT_XML, gbnf, sizeof gbnf, &ac, why,
                            sizeof why);
    CHECK(rc == 0 && ac.forced && ac.format == TOOL_FORMAT_XML && grammar_compile(&G, gbnf, ac.grammar_len, "tools", why, sizeof why) == 0,
          "qwen3.5, tool_choice required: a grammar of <function=...> calls (%s)", rc ? why : "");
    for (size_t i = 0; rc == 0 && i < sizeof cases / sizeof cases[0]; i++) {
        const char *x = cases[i].text;
        grammar_reset(&G);
        int took = grammar_accept(&G, x, strlen(x)) == 0 && grammar_can_end(&G);
        if (!cases[i].args) {
            CHECK(!took, "qwen3.5 grammar refuses case %zu", i);
            continue;
        }
        CHECK(took, "qwen3.5 grammar takes case %zu", i);
        if (!took) printf("# the grammar:\n%s", gbnf);
        for (size_t step = 1; step <= 64; step *= 8) {
            static char buf[1024];
            Got g;
            memset(&g, 0, sizeof g);
            ToolSplit ts;
            tool_split_init(&ts, TOOL_FORMAT_XML, buf, sizeof buf, on_content, on_call, &g);
            tool_split_schemas(&ts, body, len, t, kinds, sizeof kinds);
            for (size_t k = 0, n = strlen(x); k < n; k += step) tool_split_push(&ts, x + k, n - k < step ? n - k : step);
            tool_split_finish(&ts);
            int ok = g.n_content == 0 && !strcmp(g.calls, cases[i].args);
            CHECK(ok, "qwen3.5 case %zu in pieces of %zu: the arguments hold the schema's types: %s", i, step, g.calls);
            /* streamed, forced and not: the pieces join into the same arguments */
            for (int held = 0; held < 2; held++) {
                XProg xp;
                char calls[2048];
                ToolSplit ps;
                xml_prog(x, step, held, body, len, t, &xp, calls, sizeof calls, &ps);
                ok = xp.n_content == 0 && !strcmp(calls, cases[i].args) && ps.n_bad == 0 &&
                     xp.pieces >= (step == 1 ? 2 : 1) * xp.n;
                CHECK(ok, "qwen3.5 case %zu in pieces of %zu, %s, streamed: %d pieces join into %s", i, step,
                      held ? "forced" : "auto", xp.pieces, calls);
            }
        }
    }
    /* streamed, a block that turns out not to be a call: its call was
     * given, the block goes to content whole all the same (n_bad); cut short,
     * the same unless a grammar held it */
    static const struct {
        const char *text, *content, *calls; /* calls: in pieces of 1 and 8 */
        int held, bad, good;
    } stream[] = {
        {"Hi <tool_call>\n<function=get_weather>\n<parameter=city>\nOslo\n</parameter>\noops</function>\n</tool_call> end",
         "Hi <tool_call>\n<function=get_weather>\n<parameter=city>\nOslo\n</parameter>\noops</function>\n</tool_call> end",
         "0:get_weather({\"city\": \"Oslo\");", 0, 1, 0},
        {"<tool_call>\n<function=now>\n</function>\nx</tool_call><tool_call>\n<function=get_weather>\n<parameter=days>\n2\n</parameter>\n"
         "</function>\n</tool_call>",
         "<tool_call>\n<function=now>\n</function>\nx</tool_call>", "0:now({);1:get_weather({\"days\": 2});", 0, 1, 1},
        {"<tool_call>\n<function=get_weather>\n<parameter=city>\nOs", "<tool_call>\n<function=get_weather>\n<parameter=city>\nOs",
         "0:get_weather({\"city\": \"Os);", 0, 1, 0},
        {"<tool_call>\n<function=get_weather>\n<parameter=city>\nOs", "", "0:get_weather({\"city\": \"Os);", 1, 0, 1},
        {"<tool_call>\n<function=get", "<tool_call>\n<function=get", "", 0, 0, 0},
        {"<tool_call>\n{\"name\": \"now\", \"arguments\": {}}\n</tool_call>", "", "0:now({});", 0, 0, 1},
        {"a\n<tool_call>\n<function=say>\n<parameter=text>\n</para\n</parameter>\n</function>\n</tool_call>", "a",
         "0:say({\"text\": \"</para\"});", 0, 0, 1},
    };
    for (size_t i = 0; i < sizeof stream / sizeof stream[0]; i++)
        for (size_t step = 1; step <= 64; step *= 8) {
            XProg xp;
            char calls[2048];
            ToolSplit ps;
            xml_prog(stream[i].text, step, stream[i].held, body, len, t, &xp, calls, sizeof calls, &ps);
            /* in pieces of 64 a block may come whole: its call is then not begun before it parses */
            int ok = !strcmp(xp.content, stream[i].content) && xp.n - ps.n_bad == stream[i].good &&
                     (step == 64 || (!strcmp(calls, stream[i].calls) && ps.n_bad == stream[i].bad));
            CHECK(ok, "qwen3.5 streamed case %zu in pieces of %zu: content '%s', calls %s, %d not parsed", i, step, xp.content,
                  calls, ps.n_bad);
        }
    /* without the table (auto, as before): JSON-looking text is JSON */
    {
        static char buf[1024];
        Got g;
        memset(&g, 0, sizeof g);
        ToolSplit ts;
        tool_split_init(&ts, TOOL_FORMAT_XML, buf, sizeof buf, on_content, on_call, &g);
        tool_split_push(&ts, cases[0].text, strlen(cases[0].text));
        tool_split_finish(&ts);
        CHECK(!strcmp(g.calls, "0:get_weather({\"city\": 12345, \"unit\": \"c\"});"), "no table: a number stays a number: %s", g.calls);
        /* with it, True, False and None as the template prints them, where the parameter is not a string */
        const char *py = "<tool_call>\n<function=get_weather>\n<parameter=city>\nNone\n</parameter>\n<parameter=note>\nNone\n"
                         "</parameter>\n<parameter=opts>\n{\"hourly\": true}\n</parameter>\n<parameter=days>\nTrue\n</parameter>\n"
                         "</function>\n</tool_call>";
        memset(&g, 0, sizeof g);
        tool_split_init(&ts, TOOL_FORMAT_XML, buf, sizeof buf, on_content, on_call, &g);
        tool_split_schemas(&ts, body, len, t, kinds, sizeof kinds);
        tool_split_push(&ts, py, strlen(py));
        tool_split_finish(&ts);
        CHECK(!strcmp(g.calls, "0:get_weather({\"city\": \"None\", \"note\": null, \"opts\": {\"hourly\": true}, \"days\": true});"),
              "Python's literals of the template read back where the parameter is not a string: %s", g.calls);
    }
    rc = tool_constraint(body, len, TOOL_ABSENT, XPOS("tc_named"), t, TOOL_FORMAT_XML, gbnf, sizeof gbnf, &ac, why,
                        sizeof why);
    CHECK(rc == 0 && grammar_compile(&G, gbnf, ac.grammar_len, "tools", why, sizeof why) == 0, "qwen3.5, named: a grammar (%s)",
          rc ? why : "");
    if (rc == 0) {
        const char *c1 = "<tool_call>\n<function=now>\n</function>\n</tool_call>";
        grammar_reset(&G);
        int ok1 = grammar_accept(&G, c1, strlen(c1)) == 0 && grammar_finished(&G);
        grammar_reset(&G);
        CHECK(ok1 && grammar_accept(&G, "<tool_call>\n<function=g", 24) != 0, "qwen3.5: only the named function, once");
    }
    static const struct {
        const char *tools, *want;
    } bad[] = {
        {"bad_top", "need one object schema at the top"},
        {"bad_name", "tools[0].function.name: '>' or a newline (Qwen3.5's <function=NAME>)"},
        {"bad_key", "a property name with '>' or a newline (Qwen3.5's <parameter=NAME>)"},
        {"bad_kw", "unsupported keyword 'pattern'"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        why[0] = '\0';
        size_t bt = (size_t)(strstr(body, bad[i].tools) - body) + strlen(bad[i].tools) + 3;
        rc = tool_constraint(body, len, TOOL_ABSENT, XPOS("tc_required"), bt, TOOL_FORMAT_XML, gbnf, sizeof gbnf, &ac, why,
                            sizeof why);
        CHECK(rc != 0 && strstr(why, bad[i].want), "qwen3.5 refused: want '%s', got '%s'", bad[i].want, why);
    }
    /* names beyond the table's bound: refused up front */
    static char big[TOOL_KINDS_CAP + 4096];
    size_t n = (size_t)snprintf(big, sizeof big, "{\"tools\": [{\"type\": \"function\", \"function\": {\"name\": \"f\", "
                                                 "\"parameters\": {\"properties\": {");
    for (int i = 0; i < 20; i++) {
        n += (size_t)snprintf(big + n, sizeof big - n, "%s\"p%d", i ? ", " : "", i);
        for (int k = 0; k < 500; k++) big[n++] = 'x';
        n += (size_t)snprintf(big + n, sizeof big - n, "\": {}");
    }
    n += (size_t)snprintf(big + n, sizeof big - n, "}}}}], \"tc\": \"required\"}");
    why[0] = '\0';
    rc = tool_constraint(big, n, TOOL_ABSENT, (size_t)(strstr(big, "\"required\"") - big), 10, TOOL_FORMAT_XML, gbnf,
                        sizeof gbnf, &ac, why, sizeof why);
    CHECK(rc != 0 && strstr(why, "over 8192 bytes of function and parameter names"), "qwen3.5: names over the table's bound refused: %s",
          why);
    port_arena_unmap(mem, (size_t)grammar_bytes(TEST_GRAMMAR_DEPTH, TEST_GRAMMAR_ALTS));
}

/* Each format's forced calls: the grammar of tool_choice required takes
 * the calls as the format writes them (arguments under the parameters)
 * and refuses arguments outside them; the splitter reads the same text
 * back into the same calls, whole and streamed (forced: progressively). */
static void forced_formats(void)
{
    static char gbnf[GRAMMAR_MAX_TEXT + 1];
    char why[400];
    ToolConstraint ac;
    const char *body = "{\"tools\": [{\"type\": \"function\", \"function\": {\"name\": \"get_weather\", \"parameters\": "
                       "{\"type\": \"object\", \"properties\": {\"city\": {\"type\": \"string\"}}, \"required\": [\"city\"]}}},"
                       " {\"type\": \"function\", \"function\": {\"name\": \"now\"}}], \"tc\": \"required\","
                       " \"named\": {\"type\": \"function\", \"function\": {\"name\": \"now\"}}}";
    size_t len = strlen(body), t = (size_t)(strstr(body, "[") - body), tc = (size_t)(strstr(body, "\"required\"") - body);
    size_t named = (size_t)(strstr(body, "\"named\": ") - body) + 9;
    const char *two = "0:get_weather({\"city\": \"Oslo\"});1:now({});", *one = "0:get_weather({\"city\": \"Oslo\"});";
    static const struct {
        ToolFormat format;
        const char *text, *calls, *now; /* now: the call of "now" alone, named */
    } cases[] = {
        {TOOL_FORMAT_TAGGED, "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Oslo\"}}\n</tool_call>\n"
                             "<tool_call>\n{\"name\": \"now\", \"arguments\": {}}\n</tool_call>", NULL,
         "<tool_call>\n{\"name\": \"now\", \"arguments\": {}}\n</tool_call>"},
        {TOOL_FORMAT_JSON, "{\"name\": \"get_weather\", \"parameters\": {\"city\": \"Oslo\"}}", "", "{\"name\": \"now\", \"parameters\": {}}"},
        {TOOL_FORMAT_LFM2, "<|tool_call_start|>[{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Oslo\"}}, "
                           "{\"name\": \"now\", \"arguments\": {}}]<|tool_call_end|>", NULL,
         "<|tool_call_start|>[{\"name\": \"now\", \"arguments\": {}}]<|tool_call_end|>"},
        {TOOL_FORMAT_MISTRAL, "[TOOL_CALLS][{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Oslo\"}}, {\"name\": \"now\", "
                              "\"arguments\": {}}]", NULL, "[TOOL_CALLS][{\"name\": \"now\", \"arguments\": {}}]"},
        {TOOL_FORMAT_MISTRAL_ARGS, "[TOOL_CALLS]get_weather[ARGS]{\"city\": \"Oslo\"}[TOOL_CALLS]now[ARGS]{}", NULL,
         "[TOOL_CALLS]now[ARGS]{}"},
        {TOOL_FORMAT_GRANITE, "<|tool_call|>[{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Oslo\"}}, {\"name\": \"now\", "
                              "\"arguments\": {}}]", NULL, "<|tool_call|>[{\"name\": \"now\", \"arguments\": {}}]"},
        {TOOL_FORMAT_PHI4, "<|tool_call|>[{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Oslo\"}}, {\"name\": \"now\", "
                           "\"arguments\": {}}]<|/tool_call|>", NULL, "<|tool_call|>[{\"name\": \"now\", \"arguments\": {}}]<|/tool_call|>"},
        {TOOL_FORMAT_PYTHONIC, "[{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Oslo\"}}, {\"name\": \"now\", \"arguments\": {}}]",
         NULL, "[{\"name\": \"now\", \"arguments\": {}}]"},
        {TOOL_FORMAT_GEMMA4, "<|tool_call>call:get_weather{\"city\": \"Oslo\"}<tool_call|><|tool_call>call:now{}<tool_call|>", NULL,
         "<|tool_call>call:now{}<tool_call|>"},
        {TOOL_FORMAT_DEEPSEEK_R1,
         DS_CALLS_BEGIN DS_CALL_BEGIN "function" DS_SEP "get_weather\n```json\n{\"city\": \"Oslo\"}\n```" DS_CALL_END "\n" DS_CALL_BEGIN
         "function" DS_SEP "now\n```json\n{}\n```" DS_CALL_END DS_CALLS_END, NULL,
         DS_CALLS_BEGIN DS_CALL_BEGIN "function" DS_SEP "now\n```json\n{}\n```" DS_CALL_END DS_CALLS_END},
        {TOOL_FORMAT_DEEPSEEK_V3,
         DS_CALLS_BEGIN DS_CALL_BEGIN "get_weather" DS_SEP "{\"city\": \"Oslo\"}" DS_CALL_END DS_CALL_BEGIN "now" DS_SEP "{}" DS_CALL_END
         DS_CALLS_END, NULL, DS_CALLS_BEGIN DS_CALL_BEGIN "now" DS_SEP "{}" DS_CALL_END DS_CALLS_END},
        {TOOL_FORMAT_NEMOTRON, "<TOOLCALL>[{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Oslo\"}}, {\"name\": \"now\", "
                               "\"arguments\": {}}]</TOOLCALL>", NULL, "<TOOLCALL>[{\"name\": \"now\", \"arguments\": {}}]</TOOLCALL>"},
        {TOOL_FORMAT_TOOL_CALLS, "<tool_calls>[{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Oslo\"}}, {\"name\": \"now\", "
                                 "\"arguments\": {}}]</tool_calls>", NULL, "<tool_calls>[{\"name\": \"now\", \"arguments\": {}}]</tool_calls>"},
        {TOOL_FORMAT_FUNCTOOLS, "functools[{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Oslo\"}}, {\"name\": \"now\", "
                                "\"arguments\": {}}]", NULL, "functools[{\"name\": \"now\", \"arguments\": {}}]"},
        {TOOL_FORMAT_GENERIC, "{\"tool_call\": {\"name\": \"get_weather\", \"arguments\": {\"city\": \"Oslo\"}}}", "",
         "{\"tool_call\": {\"name\": \"now\", \"arguments\": {}}}"},
    };
    static Grammar G;
    void *mem = grammar_in_arena(&G);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *name = tool_format_name(cases[i].format), *x = cases[i].text, *want = cases[i].calls ? one : two;
        int rc = tool_constraint(body, len, TOOL_ABSENT, tc, t, cases[i].format, gbnf, sizeof gbnf, &ac, why, sizeof why);
        rc = rc ? rc : grammar_compile(&G, gbnf, ac.grammar_len, "tools", why, sizeof why);
        CHECK(rc == 0 && ac.forced && ac.held && ac.format == cases[i].format, "%s, required: a grammar (%s)", name, rc ? why : "");
        if (rc) continue;
        grammar_reset(&G);
        int took = grammar_accept(&G, x, strlen(x)) == 0 && grammar_can_end(&G);
        CHECK(took, "%s, required: the grammar takes the calls as the format writes them", name);
        if (!took) printf("# the grammar:\n%s", gbnf);
        /* the same calls with an argument outside the parameters */
        char bad[1024];
        snprintf(bad, sizeof bad, "%s", x);
        memcpy(strstr(bad, "city"), "town", 4);
        grammar_reset(&G);
        CHECK(grammar_accept(&G, bad, strlen(bad)) != 0, "%s, required: the grammar refuses arguments outside the parameters", name);
        grammar_reset(&G);
        CHECK(grammar_accept(&G, "Sure", 4) != 0, "%s, required: the grammar refuses text", name);
        for (size_t step = 1; step <= 64; step *= 4) {
            Got g;
            split(cases[i].format, x, step, &g);
            CHECK(!strcmp(g.calls, want) && g.n_content == 0, "%s: the splitter reads the calls back, in pieces of %zu: %s", name,
                  step, g.calls);
            /* forced, streamed: a start per call, its arguments in pieces */
            static char buf[1024];
            Prog pg;
            memset(&pg, 0, sizeof pg);
            ToolSplit ts;
            tool_split_init(&ts, cases[i].format, buf, sizeof buf, prog_content, prog_call, &pg);
            tool_split_progressive(&ts, prog_piece, 1);
            for (size_t k = 0, n = strlen(x); k < n; k += step) tool_split_push(&ts, x + k, n - k < step ? n - k : step);
            tool_split_finish(&ts);
            char merged[4096];
            size_t m = 0;
            for (size_t k = 0; k < pg.n; k++) {
                if (pg.text[k] == '>' && k + 3 < pg.n && pg.text[k + 1] == '<' && pg.text[k + 3] == ' ') {
                    k += 3;
                    continue;
                }
                merged[m++] = pg.text[k];
            }
            merged[m] = '\0';
            const char *pw = cases[i].calls ? "0:get_weather()<0 {\"city\": \"Oslo\"}>" : "0:get_weather()<0 {\"city\": \"Oslo\"}>1:now()<1 {}>";
            CHECK(!strcmp(merged, pw) && pg.starts == (cases[i].calls ? 1 : 2), "%s, forced, streamed in pieces of %zu: %s", name, step,
                  merged);
        }
        /* a named function: its one call */
        rc = tool_constraint(body, len, TOOL_ABSENT, named, t, cases[i].format, gbnf, sizeof gbnf, &ac, why, sizeof why);
        rc = rc ? rc : grammar_compile(&G, gbnf, ac.grammar_len, "tools", why, sizeof why);
        grammar_reset(&G);
        int ok = rc == 0 && grammar_accept(&G, cases[i].now, strlen(cases[i].now)) == 0 && grammar_finished(&G);
        grammar_reset(&G);
        CHECK(ok && grammar_accept(&G, x, strlen(x)) != 0, "%s, named: the one call of the function, not another (%s)", name,
              rc ? why : "");
    }
    /* the generic format under tool_choice auto: a call or a response */
    int rc = tool_constraint(body, len, TOOL_ABSENT, TOOL_ABSENT, t, TOOL_FORMAT_GENERIC, gbnf, sizeof gbnf, &ac, why, sizeof why);
    rc = rc ? rc : grammar_compile(&G, gbnf, ac.grammar_len, "tools", why, sizeof why);
    CHECK(rc == 0 && !ac.forced && ac.held && ac.rewrite && !ac.render && ac.parse, "generic, auto: held by a grammar, the messages rewritten (%s)",
          rc ? why : "");
    if (rc == 0) {
        const char *r1 = "{\"response\": \"Hello \\\"you\\\"\"}", *c1 = cases[sizeof cases / sizeof cases[0] - 1].text;
        grammar_reset(&G);
        int ok1 = grammar_accept(&G, r1, strlen(r1)) == 0 && grammar_finished(&G);
        grammar_reset(&G);
        int ok2 = grammar_accept(&G, c1, strlen(c1)) == 0 && grammar_finished(&G);
        grammar_reset(&G);
        CHECK(ok1 && ok2 && grammar_accept(&G, "Hello", 5) != 0, "generic, auto: a response or a call, not bare text");
    }
    rc = tool_constraint(body, len, TOOL_ABSENT, tc, t, TOOL_FORMAT_GENERIC, gbnf, sizeof gbnf, &ac, why, sizeof why);
    rc = rc ? rc : grammar_compile(&G, gbnf, ac.grammar_len, "tools", why, sizeof why);
    grammar_reset(&G);
    CHECK(rc == 0 && grammar_accept(&G, "{\"response\": \"x\"}", 17) != 0, "generic, required: no response");
    /* tool_choice none: nothing parsed, no grammar, the messages still rewritten (past calls as text) */
    const char *none = "{\"tools\": [{\"type\": \"function\", \"function\": {\"name\": \"f\"}}], \"tc\": \"none\"}";
    rc = tool_constraint(none, strlen(none), TOOL_ABSENT, (size_t)(strstr(none, "\"none\"") - none), 10, TOOL_FORMAT_GENERIC, gbnf,
                         sizeof gbnf, &ac, why, sizeof why);
    CHECK(rc == 0 && !ac.parse && !ac.held && ac.grammar_len == 0 && ac.rewrite && !ac.render,
          "generic, tool_choice none: no grammar, nothing parsed, the messages rewritten");
    /* a name a raw-name format cannot hold */
    const char *odd = "{\"tools\": [{\"type\": \"function\", \"function\": {\"name\": \"a[b\"}}], \"tc\": \"required\"}";
    rc = tool_constraint(odd, strlen(odd), TOOL_ABSENT, (size_t)(strstr(odd, "\"required\"") - odd), 10, TOOL_FORMAT_MISTRAL_ARGS, gbnf,
                         sizeof gbnf, &ac, why, sizeof why);
    CHECK(rc != 0 && strstr(why, "only letters, digits"), "mistral-args: a name with '[' refused: %s", why);
    port_arena_unmap(mem, (size_t)grammar_bytes(TEST_GRAMMAR_DEPTH, TEST_GRAMMAR_ALTS));
}

/* The format from a template's text: its distinctive lines (from the
 * templates of llama.cpp's corpus), and the corpus itself when
 * tests/llamacpp_src.sh has fetched it into build/llamacpp-src. */
static void detection(void)
{
    static const struct {
        const char *text;
        ToolFormat want;
    } cases[] = {
        {"{{- '<tool_call>\\n<function=' + tool_call.name + '>\\n' }}{{- '<parameter=' + args_name + '>\\n' }}", TOOL_FORMAT_XML},
        {"<seed:tool_call>\\n<function=example_function_name>\\n<parameter=example_parameter_1>", TOOL_FORMAT_GENERIC},
        {"{{- '<tool_call>' + tc.name -}}{{- '<arg_key>' + k + '</arg_key>' -}}", TOOL_FORMAT_GENERIC},
        {"{{ '<function=' + tool_call['function']['name'] + '>' }}{{ '<|python_tag|>' }}", TOOL_FORMAT_GENERIC},
        {"\"List of tools: <|tool_list_start|>[\"", TOOL_FORMAT_LFM2},
        {"\"List of tools: [\"", TOOL_FORMAT_LFM2},
        {"{{- '[TOOL_CALLS]' + tool_call.function.name }}{{- '[ARGS]' + tool_call['function']['arguments']|tojson }}",
         TOOL_FORMAT_MISTRAL_ARGS},
        {"{{- \"[AVAILABLE_TOOLS][\" }}{{- \"[TOOL_CALLS][\" }}", TOOL_FORMAT_MISTRAL},
        {"{{'<｜Assistant｜><｜tool▁calls▁begin｜><｜tool▁call▁begin｜>' + tool['type'] + '<｜tool▁sep｜>' + "
         "tool['function']['name'] + '\\n' + '```json' + '\\n'}}",
         TOOL_FORMAT_DEEPSEEK_R1},
        {"{{'<｜tool▁call▁begin｜>'+ tool['function']['name'] + '<｜tool▁sep｜>' + tool['function']['arguments'] | tojson}}",
         TOOL_FORMAT_DEEPSEEK_V3},
        {"{{- '<|tool_call>call:' + function['name'] + '{' -}}", TOOL_FORMAT_GEMMA4},
        {"{{ '<|' + message['role'] + '|>' + message['content'] + '<|tool|>' + message['tools'] + '<|/tool|>' + '<|end|>' }}",
         TOOL_FORMAT_PHI4},
        {"respond only with <|tool_call|> followed by a JSON list of tools used.", TOOL_FORMAT_GRANITE},
        {"<tool_call>\\n{\\\"name\\\": <function-name>, \\\"arguments\\\": <args-json-object>}\\n</tool_call>", TOOL_FORMAT_TAGGED},
        {"'Respond in the format {\"name\": function name, \"parameters\": dictionary of argument name and its value}.'",
         TOOL_FORMAT_JSON},
        {"[func_name1(params_name1=params_value1, params_name2=params_value2...), func_name2(params)]", TOOL_FORMAT_PYTHONIC},
        {"{{- '<TOOLCALL>[' -}}", TOOL_FORMAT_NEMOTRON},
        {"Return all function calls as a list of JSON objects within <tool_calls></tool_calls> XML tags.", TOOL_FORMAT_TOOL_CALLS},
        {"formatted as functools[{\"name\": [function name], \"arguments\": [function arguments as JSON]}, ...]", TOOL_FORMAT_FUNCTOOLS},
        {"{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n' }}", TOOL_FORMAT_GENERIC},
        {"", TOOL_FORMAT_GENERIC},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ToolFormat f = tool_format_detect(cases[i].text);
        CHECK(f == cases[i].want, "detected %s in '%.50s' (want %s)", tool_format_name(f), cases[i].text,
              tool_format_name(cases[i].want));
    }
    CHECK(tool_format_detect(NULL) == TOOL_FORMAT_GENERIC, "no template: the generic format");
    static const struct {
        ChatTemplate tmpl;
        ToolFormat want;
    } builtin[] = {
        {CHAT_TEMPLATE_QWEN3, TOOL_FORMAT_TAGGED}, {CHAT_TEMPLATE_QWEN35, TOOL_FORMAT_XML}, {CHAT_TEMPLATE_LLAMA31, TOOL_FORMAT_JSON},
        {CHAT_TEMPLATE_LFM2, TOOL_FORMAT_LFM2},    {CHAT_TEMPLATE_CHATML, TOOL_FORMAT_GENERIC}, {CHAT_TEMPLATE_PHI4, TOOL_FORMAT_GENERIC},
    };
    for (size_t i = 0; i < sizeof builtin / sizeof builtin[0]; i++)
        CHECK(tool_format_of_builtin(builtin[i].tmpl) == builtin[i].want, "built-in template '%s': %s",
              chat_template_name(builtin[i].tmpl), tool_format_name(builtin[i].want));
    /* the corpus, where it was fetched */
    static const struct {
        const char *file, *want;
    } corpus[] = {
        {"mistralai-Mistral-Nemo-Instruct-2407", "mistral"},
        {"Mistral-Small-3.2-24B-Instruct-2506", "mistral-args"},
        {"mistralai-Ministral-3-14B-Reasoning-2512", "mistral-args"},
        {"unsloth-mistral-Devstral-Small-2507", "mistral-args"},
        {"ibm-granite-granite-3.3-2B-Instruct", "granite"},
        {"ibm-granite-granite-4.0", "hermes"},
        {"ibm-granite-granite-4.1", "hermes"},
        {"google-gemma-4-31B-it", "gemma4"},
        {"google-gemma-2-2b-it", "generic"},
        {"deepseek-ai-DeepSeek-R1-Distill-Llama-8B", "deepseek-r1"},
        {"deepseek-ai-DeepSeek-R1-Distill-Qwen-32B", "deepseek-r1"},
        {"deepseek-ai-DeepSeek-V3.1", "deepseek-v3.1"},
        {"NousResearch-Hermes-2-Pro-Llama-3-8B-tool_use", "hermes"},
        {"NousResearch-Hermes-3-Llama-3.1-8B-tool_use", "hermes"},
        {"meta-llama-Llama-3.1-8B-Instruct", "llama3"},
        {"meta-llama-Llama-3.2-3B-Instruct", "llama3"},
        {"Qwen-Qwen3-0.6B", "hermes"},
        {"Qwen3.5-4B", "qwen3-coder"},
        {"Qwen3-Coder", "qwen3-coder"},
        {"LFM2.5-Instruct", "lfm2"},
        {"LFM2-8B-A1B", "lfm2"},
        {"NVIDIA-Nemotron-Nano-v2", "nemotron"},
        {"Apriel-1.6-15b-Thinker-fixed", "tool-calls"},
        {"MiniMax-M1", "tool-calls"},
        {"fireworks-ai-llama-3-firefunction-v2", "functools"},
        {"GLM-4.6", "generic"},
        {"ByteDance-Seed-OSS", "generic"},
        {"microsoft-Phi-3.5-mini-instruct", "generic"},
    };
    static char text[64 * 1024];
    int seen = 0;
    for (size_t i = 0; i < sizeof corpus / sizeof corpus[0]; i++) {
        char path[256];
        snprintf(path, sizeof path, "build/llamacpp-src/models/templates/%s.jinja", corpus[i].file);
        FILE *f = fopen(path, "rb");
        if (!f) continue;
        size_t n = fread(text, 1, sizeof text - 1, f);
        fclose(f);
        text[n] = '\0';
        seen++;
        const char *got = tool_format_name(tool_format_detect(text));
        CHECK(!strcmp(got, corpus[i].want), "corpus %s: %s (want %s)", corpus[i].file, got, corpus[i].want);
    }
    if (!seen) printf("# the llama.cpp corpus is not in build/llamacpp-src (tests/llamacpp_src.sh fetches it)\n");
}

/* The messages for a template that cannot show the tools itself. */
static void prompt_messages(void)
{
    static const struct {
        ToolFormat format;
        int forced;
        const char *body, *want;
        int no_system, history; /* history: no tools in play, only past calls and results change */
    } cases[] = {
        {TOOL_FORMAT_GENERIC, 0,
         "{\"messages\": [{\"role\": \"system\", \"name\": \"s\", \"content\": \"Be brief.\"}, {\"role\": \"user\", \"content\": \"Weather?\"}, "
         "{\"role\": \"assistant\", \"content\": null, \"tool_calls\": [{\"id\": \"c1\", \"type\": \"function\", \"function\": "
         "{\"name\": \"get\", \"arguments\": \"{\\\"city\\\": \\\"Oslo\\\"}\"}}]}, {\"role\": \"tool\", \"tool_call_id\": \"c1\", "
         "\"content\": \"21 C\"}, {\"role\": \"assistant\", \"content\": \"Mild.\"}], \"tools\": [{\"type\": \"function\", \"function\": "
         "{\"name\": \"get\", \"parameters\": {\"type\": \"object\"}}}]}",
         "[{\"role\": \"system\", \"name\": \"s\", \"content\": \"Be brief.\\n\\nYou can call these tools (each a function's name, "
         "description and the JSON Schema of its parameters):\\n{\\\"name\\\": \\\"get\\\", \\\"parameters\\\": {\\\"type\\\": "
         "\\\"object\\\"}}\\n\\nAnswer with one JSON object and nothing else: {\\\"tool_call\\\": {\\\"name\\\": \\\"<the tool's "
         "name>\\\", \\\"arguments\\\": {<its arguments>}}} to call a tool, or {\\\"response\\\": \\\"<your reply>\\\"} to reply to "
         "the user.\"}, {\"role\": \"user\", \"content\": \"Weather?\"}, {\"role\": \"assistant\", \"content\": \"{\\\"tool_call\\\": "
         "{\\\"name\\\": \\\"get\\\", \\\"arguments\\\": {\\\"city\\\": \\\"Oslo\\\"}}}\"}, {\"role\": \"user\", \"content\": "
         "\"{\\\"tool_response\\\": {\\\"tool_call_id\\\": \\\"c1\\\", \\\"content\\\": \\\"21 C\\\"}}\"}, {\"role\": \"assistant\", "
         "\"content\": \"{\\\"response\\\": \\\"Mild.\\\"}\"}]", 0, 0},
        {TOOL_FORMAT_GENERIC, 1,
         "{\"messages\": [{\"role\": \"user\", \"content\": \"Hi\"}], \"tools\": [{\"type\": \"function\", \"function\": {\"name\": \"f\"}}]}",
         "[{\"role\": \"system\", \"content\": \"You can call these tools (each a function's name, description and the JSON Schema "
         "of its parameters):\\n{\\\"name\\\": \\\"f\\\"}\\n\\nAnswer with one JSON object and nothing else, a call of one of the "
         "tools: {\\\"tool_call\\\": {\\\"name\\\": \\\"<the tool's name>\\\", \\\"arguments\\\": {<its arguments>}}}\"}, {\"role\": "
         "\"user\", \"content\": \"Hi\"}]", 0, 0},
        {TOOL_FORMAT_GENERIC, 1,
         "{\"messages\": [{\"role\": \"system\", \"a_member_name_longer_than_sixteen\": [1], \"content\": \"S\"}], "
         "\"tools\": [{\"type\": \"function\", \"function\": {\"name\": \"f\"}}]}",
         "[{\"role\": \"system\", \"a_member_name_longer_than_sixteen\": [1], \"content\": \"S\\n\\nYou can call these tools "
         "(each a function's name, description and the JSON Schema of its parameters):\\n{\\\"name\\\": \\\"f\\\"}\\n\\nAnswer "
         "with one JSON object and nothing else, a call of one of the tools: {\\\"tool_call\\\": {\\\"name\\\": \\\"<the "
         "tool's name>\\\", \\\"arguments\\\": {<its arguments>}}}\"}]", 0, 0},
        /* a template that refuses a system role: before the first user message's text */
        {TOOL_FORMAT_GENERIC, 1,
         "{\"messages\": [{\"role\": \"user\", \"content\": \"Hi\"}, {\"role\": \"user\", \"content\": [{\"type\": \"text\", \"text\": "
         "\"x\"}]}], \"tools\": [{\"type\": \"function\", \"function\": {\"name\": \"f\"}}]}",
         "[{\"role\": \"user\", \"content\": \"You can call these tools (each a function's name, description and the JSON Schema "
         "of its parameters):\\n{\\\"name\\\": \\\"f\\\"}\\n\\nAnswer with one JSON object and nothing else, a call of one of the "
         "tools: {\\\"tool_call\\\": {\\\"name\\\": \\\"<the tool's name>\\\", \\\"arguments\\\": {<its arguments>}}}\\n\\nHi\"}, "
         "{\"role\": \"user\", \"content\": [{\"type\": \"text\", \"text\": \"x\"}]}]", 1, 0},
        {TOOL_FORMAT_GENERIC, 1,
         "{\"messages\": [{\"role\": \"user\", \"content\": [ {\"type\": \"text\", \"text\": \"x\"}]}], \"tools\": [{\"type\": "
         "\"function\", \"function\": {\"name\": \"f\"}}]}",
         "[{\"role\": \"user\", \"content\": [{\"type\": \"text\", \"text\": \"You can call these tools (each a function's name, "
         "description and the JSON Schema of its parameters):\\n{\\\"name\\\": \\\"f\\\"}\\n\\nAnswer with one JSON object and "
         "nothing else, a call of one of the tools: {\\\"tool_call\\\": {\\\"name\\\": \\\"<the tool's name>\\\", "
         "\\\"arguments\\\": {<its arguments>}}}\"}, {\"type\": \"text\", \"text\": \"x\"}]}]", 1, 0},
        {TOOL_FORMAT_GENERIC, 0,
         "{\"messages\": [{\"role\": \"system\", \"content\": \"S\"}, {\"role\": \"assistant\", \"content\": null, \"tool_calls\": "
         "[{\"function\": {\"name\": \"f\", \"arguments\": {}}}]}, {\"role\": \"tool\", \"content\": \"1\"}, {\"role\": \"assistant\", "
         "\"content\": \"One.\"}], \"tools\": []}",
         "[{\"role\": \"system\", \"content\": \"S\"}, {\"role\": \"assistant\", \"content\": \"{\\\"tool_call\\\": {\\\"name\\\": "
         "\\\"f\\\", \\\"arguments\\\": {}}}\"}, {\"role\": \"user\", \"content\": \"{\\\"tool_response\\\": {\\\"content\\\": "
         "\\\"1\\\"}}\"}, {\"role\": \"assistant\", \"content\": \"One.\"}]", 0, 1},
        {TOOL_FORMAT_PHI4, 0,
         "{\"messages\": [{\"role\": \"system\", \"content\": \"Be brief.\", \"tools\": \"old\"}, {\"role\": \"user\", \"content\": \"Hi\"}, "
         "{\"role\": \"assistant\", \"content\": \"Sure.\", \"tool_calls\": [{\"function\": {\"name\": \"f\", \"arguments\": {\"a\": 1}}}, "
         "{\"function\": {\"name\": \"g\", \"arguments\": \"{}\"}}]}, {\"role\": \"tool\", \"content\": \"ok\"}], \"tools\": "
         "[{\"type\": \"function\", \"function\": {\"name\": \"f\"}}, {\"type\": \"function\", \"function\": {\"name\": \"g\"}}]}",
         "[{\"role\": \"system\", \"content\": \"Be brief.\", \"tools\": \"[{\\\"name\\\": \\\"f\\\"}, {\\\"name\\\": \\\"g\\\"}]\"}, "
         "{\"role\": \"user\", \"content\": \"Hi\"}, {\"role\": \"assistant\", \"content\": \"Sure.<|tool_call|>[{\\\"name\\\": "
         "\\\"f\\\", \\\"arguments\\\": {\\\"a\\\": 1}}, {\\\"name\\\": \\\"g\\\", \\\"arguments\\\": {}}]<|/tool_call|>\"}, "
         "{\"role\": \"tool\", \"content\": \"ok\"}]", 0, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        static char out[4096];
        char why[200];
        const char *b = cases[i].body;
        size_t len = strlen(b), m = (size_t)(strstr(b, "[") - b), t = (size_t)(strstr(b, "\"tools\": [") - b) + 9;
        ToolConstraint c = {.format = cases[i].format, .forced = cases[i].forced, .rewrite = 1, .parse = !cases[i].history};
        int64_t n = tool_prompt_messages(b, len, m, t, &c, cases[i].no_system, out, sizeof out, why, sizeof why);
        int ok = n == (int64_t)strlen(cases[i].want) && !strcmp(out, cases[i].want);
        CHECK(ok, "%s: the messages show the tools: %s", tool_format_name(cases[i].format), n < 0 ? why : out);
        /* too small a buffer: the length needed, nothing written past it */
        memset(out, 'x', sizeof out);
        int64_t k = tool_prompt_messages(b, len, m, t, &c, cases[i].no_system, out, 10, why, sizeof why);
        CHECK(k == n && out[10] == 'x', "%s: the length needed, measured in a buffer too small", tool_format_name(cases[i].format));
    }
}

/* Mutated calls of every format through the splitter (small buffers,
 * pieces of any size; ASan watches): nothing is lost, so a reply with no
 * call comes back as content byte for byte (the generic format decodes a
 * response: there, no crash is all). */
static void mutated(void)
{
    static const char *const seeds[] = {
        "<tool_call>\n{\"name\": \"a\", \"arguments\": {\"x\": [1, \"]\"]}}\n</tool_call>",
        "<tool_call>\n<function=f>\n<parameter=x>\n1\n</parameter>\n</function>\n</tool_call>",
        "<|python_tag|>{\"name\": \"a\", \"parameters\": {}}",
        "<|tool_call_start|>[f(a='x', b={'k': (1, None)})]<|tool_call_end|>",
        "[TOOL_CALLS][{\"name\": \"a\", \"arguments\": {}}]",
        "[TOOL_CALLS]f[CALL_ID]abc[ARGS]{\"a\": \"[ARGS]\"}",
        "functools[{\"name\": \"a\", \"arguments\": {}}]<tool_calls>\n{\"name\": \"b\", \"arguments\": {}}\n</tool_calls>",
        "<|tool_call|>[{\"name\": \"a\", \"arguments\": {}}]<|/tool_call|>",
        "[f(s='a]b'), g()]",
        "<|tool_call>call:f{a:<|\"|>x<|\"|>,b:[1,{c:true}]}<tool_call|>",
        DS_CALLS_BEGIN DS_CALL_BEGIN "function" DS_SEP "f\n```json\n{}\n```" DS_CALL_END DS_CALLS_END,
        "{\"tool_call\": {\"name\": \"a\", \"arguments\": {}}}{\"response\": \"\\ud83d\\ude00\\\"\"}",
    };
    uint64_t rng = 0x9e3779b97f4a7c15ull;
#define NEXT() (rng = rng * 6364136223846793005ull + 1442695040888963407ull, (unsigned)(rng >> 33))
    int lost = 0, runs = 0;
    for (int round = 0; round < 3000; round++) {
        char text[512];
        const char *seed = seeds[NEXT() % (sizeof seeds / sizeof seeds[0])];
        size_t n = strlen(seed);
        memcpy(text, seed, n);
        for (int m = (int)(NEXT() % 4); m >= 0; m--) {
            size_t at = NEXT() % (n + 1);
            unsigned op = NEXT() % 3;
            if (op == 0 && at < n) text[at] = "{}[]()<>|\"'\\:,= \nax\xef"[NEXT() % 21]; /* change a byte */
            else if (op == 1 && at < n) memmove(text + at, text + at + 1, n - at - 1), n--; /* drop one */
            else if (n + n - at < sizeof text) memcpy(text + n, text + at, n - at), n += n - at; /* repeat the tail */
        }
        text[n] = '\0';
        ToolFormat f = (ToolFormat)(NEXT() % TOOL_FORMAT_COUNT);
        static char buf[TOOL_BLOCK_CAP];
        size_t cap = 64 + NEXT() % 512, step = 1 + NEXT() % 9;
        Got g;
        memset(&g, 0, sizeof g);
        ToolSplit t;
        tool_split_init(&t, f, buf, cap, on_content, on_call, &g);
        if (NEXT() % 2) tool_split_progressive(&t, prog_piece_none, (int)(NEXT() % 2));
        for (size_t i = 0; i < n; i += step) tool_split_push(&t, text + i, n - i < step ? n - i : step);
        tool_split_finish(&t);
        runs++;
        if (f != TOOL_FORMAT_GENERIC && g.n_calls == 0 && !t.n_calls && (g.n_content != n || memcmp(g.content, text, n))) {
            if (!lost++) printf("# lost: format %s, text '%s', content '%s'\n", tool_format_name(f), text, g.content);
        }
    }
    /* mutated requests through tool_constraint and tool_prompt_messages:
     * a valid request's rewritten messages are valid JSON */
    static const char *const bodies[] = {
        "{\"messages\": [{\"role\": \"system\", \"content\": [{\"type\": \"text\", \"text\": \"S\"}]}, {\"role\": \"assistant\", "
        "\"content\": \"x\", \"tool_calls\": [{\"function\": {\"name\": \"f\", \"arguments\": \"{\\\"a\\\": 1}\"}}]}, {\"role\": "
        "\"tool\", \"tool_call_id\": \"1\", \"content\": [1]}], \"tools\": [{\"type\": \"function\", \"function\": {\"name\": "
        "\"f\", \"parameters\": {\"type\": \"object\", \"properties\": {\"a\": {\"type\": \"integer\"}}}}}], \"tool_choice\": \"required\"}",
        "{\"messages\": [{\"role\": \"user\", \"content\": null}], \"tools\": [{\"type\": \"function\", \"function\": {\"name\": \"g\"}}]}",
    };
    int invalid = 0, checked = 0;
    for (int round = 0; round < 3000; round++) {
        static char body[1024], out[8192], gbnf[GRAMMAR_MAX_TEXT + 1];
        const char *seed = bodies[NEXT() % 2];
        size_t n = strlen(seed);
        memcpy(body, seed, n);
        for (int m = (int)(NEXT() % 3); m >= 0; m--) {
            size_t at = NEXT() % n;
            if (NEXT() % 2) body[at] = "{}[]\":, \\a1"[NEXT() % 11];
            else memmove(body + at, body + at + 1, n - at - 1), n--;
        }
        body[n] = '\0';
        const char *ms = strstr(body, "\"messages\": "), *ts = strstr(body, "\"tools\": "), *cs = strstr(body, "\"tool_choice\": ");
        size_t mo = ms ? (size_t)(ms - body) + 12 : TOOL_ABSENT, to = ts ? (size_t)(ts - body) + 9 : TOOL_ABSENT;
        size_t co = cs ? (size_t)(cs - body) + 15 : TOOL_ABSENT;
        char why[200];
        ToolConstraint c;
        ToolFormat f = (ToolFormat)(NEXT() % TOOL_FORMAT_COUNT);
        if (tool_constraint(body, n, TOOL_ABSENT, co, to, f, gbnf, sizeof gbnf, &c, why, sizeof why) != 0) continue;
        c.format = NEXT() % 2 ? TOOL_FORMAT_GENERIC : TOOL_FORMAT_PHI4;
        int64_t k = tool_prompt_messages(body, n, mo, to, &c, (int)(NEXT() % 2), out, sizeof out, why, sizeof why);
        Json whole, rewritten;
        json_init(&whole, body, n, "body");
        if (k < 0 || (size_t)k >= sizeof out || json_skip(&whole) != 0 || json_end(&whole) != 0) continue;
        json_init(&rewritten, out, (size_t)k, "out");
        checked++;
        if (json_skip(&rewritten) != 0 || json_end(&rewritten) != 0) {
            if (!invalid++) printf("# invalid: %s\n# from %s\n", out, body);
        }
    }
#undef NEXT
    CHECK(invalid == 0, "mutated requests: the messages rewritten from %d valid ones are valid JSON (%d not)", checked, invalid);
    CHECK(lost == 0, "%d mutated replies through every format's splitter: without a call, content is the reply byte for byte (%d not)",
          runs, lost);
}

int main(void)
{
    splitter();
    progressive();
    constraint();
    xml_constraint();
    forced_formats();
    detection();
    prompt_messages();
    mutated();
    CHECK_DONE();
}
