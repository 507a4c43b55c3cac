/* test_chat.c - the chat templates rendered natively must equal the
 * reference renderings byte for byte: Qwen3's 5 fixtures (from their .msgs
 * files) and extra conversations (tools, tool calls, reasoning_content,
 * multi-step tool turns), ChatML/Qwen2, and Llama 3, Llama 3.1/3.2, Zephyr,
 * Qwen2.5 and SmolLM2, whose expected texts were rendered from the real
 * chat_templates with Python jinja2 3.1.6 (trim_blocks, lstrip_blocks,
 * tojson = json.dumps(ensure_ascii=False)), as transformers does; detection
 * from the real template texts, names, and turn-by-turn rendering. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "../src/arena/arena.h"
#include "../src/text/chat.h"
#include "../src/text/chat_request.h"

static char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = malloc((size_t)n + 1);
    if (b && fread(b, 1, (size_t)n, f) != (size_t)n) {
        free(b);
        b = NULL;
    }
    fclose(f);
    if (b) b[n] = '\0';
    if (len) *len = (size_t)n;
    return b;
}

/* Undoes the .msgs C escapes (\n \t \r \\) in place; returns the new length. */
static size_t unescape(char *s, size_t n)
{
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '\\' && i + 1 < n) {
            char e = s[++i];
            s[o++] = e == 'n' ? '\n' : e == 't' ? '\t' : e == 'r' ? '\r' : e;
        } else {
            s[o++] = s[i];
        }
    }
    return o;
}

#define MAX_MSGS 32

/* Parses a .msgs file (header + role, content, reasoning, tool name, tool args). */
static int load_msgs(char *text, ChatMessage *msgs, ChatToolCall *calls)
{
    int n = 0;
    char *line = strchr(text, '\n'); /* skip the header */
    if (!line) return -1;
    line++;
    while (*line && n < MAX_MSGS) {
        char *end = strchr(line, '\n');
        if (end) *end = '\0';
        char *field[5] = {0};
        size_t flen[5] = {0};
        char *p = line;
        for (int k = 0; k < 5; k++) {
            field[k] = p;
            char *tab = k < 4 ? strchr(p, '\t') : NULL;
            if (tab) *tab = '\0';
            flen[k] = unescape(p, strlen(p));
            p = tab ? tab + 1 : p + strlen(p);
        }
        ChatMessage *m = &msgs[n];
        memset(m, 0, sizeof *m);
        m->role = !strcmp(field[0], "system") ? CHAT_ROLE_SYSTEM
                : !strcmp(field[0], "user") ? CHAT_ROLE_USER
                : !strcmp(field[0], "assistant") ? CHAT_ROLE_ASSISTANT
                : !strcmp(field[0], "tool") ? CHAT_ROLE_TOOL : CHAT_ROLE_COUNT;
        if (m->role == CHAT_ROLE_COUNT) return -1;
        m->content = field[1];
        m->content_len = flen[1];
        if (flen[2]) m->reasoning = field[2], m->reasoning_len = flen[2], m->has_reasoning = 1;
        if (flen[3]) {
            calls[n].name = field[3];
            calls[n].name_len = flen[3];
            calls[n].arguments = field[4];
            calls[n].arguments_len = flen[4];
            m->tool_calls = &calls[n];
            m->n_tool_calls = 1;
        }
        n++;
        if (!end) break;
        line = end + 1;
    }
    return n;
}

static void fixture_cases(void)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/chat/cases.tsv", FIXTURES_DIR);
    char *tsv = read_file(path, NULL);
    CHECK(tsv != NULL, "chat fixtures: read %s", path);
    if (!tsv) return;
    char *line = strchr(tsv, '\n');
    int n_cases = 0;
    while (line && *++line) {
        char *end = strchr(line, '\n');
        if (end) *end = '\0';
        char id[256], vocab[256], think[16];
        int gen, n_msgs, n_ids;
        if (sscanf(line, "%255s %255s %d %15s %d %d", id, vocab, &gen, think, &n_msgs, &n_ids) != 6) {
            CHECK(0, "chat fixtures: parse cases.tsv line '%s'", line);
            break;
        }
        n_cases++;
        size_t tlen;
        snprintf(path, sizeof path, "%s/chat/%s.msgs", FIXTURES_DIR, id);
        char *msgs_text = read_file(path, NULL);
        snprintf(path, sizeof path, "%s/chat/%s.txt", FIXTURES_DIR, id);
        char *want = read_file(path, &tlen);
        CHECK(msgs_text && want, "%s: read .msgs and .txt", id);
        if (msgs_text && want) {
            ChatMessage msgs[MAX_MSGS];
            ChatToolCall calls[MAX_MSGS];
            int n = load_msgs(msgs_text, msgs, calls);
            CHECK(n == n_msgs, "%s: %d messages (cases.tsv says %d)", id, n, n_msgs);
            ChatOptions opt = {gen, strcmp(think, "0") != 0, NULL, NULL, 0, 0};
            int64_t need = chat_render(CHAT_TEMPLATE_QWEN3, msgs, n, &opt, NULL, 0);
            CHECK(need == (int64_t)tlen, "%s: measured length %lld == %zu", id, (long long)need, tlen);
            char buf[4096];
            int64_t got = chat_render(CHAT_TEMPLATE_QWEN3, msgs, n, &opt, buf, sizeof buf);
            CHECK(got == (int64_t)tlen && memcmp(buf, want, tlen) == 0 && buf[tlen] == '\0',
                  "%s: rendering equals .txt byte for byte", id);
            /* a buffer one byte short: truncated, never overflowed, same length reported */
            char *tight = malloc(tlen);
            got = chat_render(CHAT_TEMPLATE_QWEN3, msgs, n, &opt, tight, tlen > 0 ? tlen - 1 : 0);
            CHECK(got == (int64_t)tlen && memcmp(tight, want, tlen - 1) == 0, "%s: short buffer reports full length", id);
            free(tight);
        }
        free(msgs_text);
        free(want);
        line = end;
    }
    CHECK(n_cases == 5, "chat fixtures: 5 cases (found %d)", n_cases);
    free(tsv);
}

/* JSON conversations with renderings from jinja2 (see the top comment). */
static const struct {
    const char *name;
    int gen, think;
    const char *json;
    const char *want;
} json_cases[] = {
    {"tools_call", 1, 1,
        "{\"messages\": [{\"role\": \"system\", \"content\": \"Be brief.\"}, {\"role\": \"user\", \"content\": \"Weather in Paris?\"}, {\"role\": \"assistant\", \"content\": \"\", \"tool_calls\": [{\"function\": {\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\", \"unit\": \"c\", \"days\": [1, 2], \"x\": {\"q\": \"\\\"\303\251\\n\"}}}}]}, {\"role\": \"tool\", \"content\": \"{\\\"temp\\\": 12}\"}, {\"role\": \"tool\", \"content\": \"second\"}, {\"role\": \"assistant\", \"content\": \"It is 12 C.\", \"reasoning_content\": \"\\nThe tool said 12.\\n\\n\"}], \"tools\": [{\"type\": \"function\", \"function\": {\"name\": \"get_weather\", \"parameters\": {\"type\": \"object\"}}}]}",
        "<|im_start|>system\n"
        "Be brief.\n"
        "\n"
        "# Tools\n"
        "\n"
        "You may call one or more functions to assist with the user query.\n"
        "\n"
        "You are provided with function signatures within <tools></tools> XML tags:\n"
        "<tools>\n"
        "{\"type\": \"function\", \"function\": {\"name\": \"get_weather\", \"parameters\": {\"type\": \"object\"}}}\n"
        "</tools>\n"
        "\n"
        "For each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:\n"
        "<tool_call>\n"
        "{\"name\": <function-name>, \"arguments\": <args-json-object>}\n"
        "</tool_call><|im_end|>\n"
        "<|im_start|>user\n"
        "Weather in Paris?<|im_end|>\n"
        "<|im_start|>assistant\n"
        "<tool_call>\n"
        "{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\", \"unit\": \"c\", \"days\": [1, 2], \"x\": {\"q\": \"\\\"\303\251\\n\"}}}\n"
        "</tool_call><|im_end|>\n"
        "<|im_start|>user\n"
        "<tool_response>\n"
        "{\"temp\": 12}\n"
        "</tool_response>\n"
        "<tool_response>\n"
        "second\n"
        "</tool_response><|im_end|>\n"
        "<|im_start|>assistant\n"
        "<think>\n"
        "The tool said 12.\n"
        "</think>\n"
        "\n"
        "It is 12 C.<|im_end|>\n"
        "<|im_start|>assistant\n"
        ""},
    {"multistep", 0, 1,
        "[{\"role\": \"user\", \"content\": \"Q1\"}, {\"role\": \"assistant\", \"content\": \"<think>r1</think>A1\"}, {\"role\": \"user\", \"content\": \"Q2\"}, {\"role\": \"assistant\", \"content\": \"<think>\\nr2\\n</think>\\n\\nCalling\", \"tool_calls\": [{\"function\": {\"name\": \"f\", \"arguments\": \"{\\\"a\\\": 1}\"}}, {\"name\": \"g\", \"arguments\": {}}]}, {\"role\": \"user\", \"content\": \"<tool_response>\\nok\\n</tool_response>\"}, {\"role\": \"assistant\", \"content\": \"no reasoning here\"}, {\"role\": \"assistant\", \"content\": \"x<think>a</think>b</think>\\n\\nc\"}, {\"role\": \"system\", \"content\": \"late system\"}]",
        "<|im_start|>user\n"
        "Q1<|im_end|>\n"
        "<|im_start|>assistant\n"
        "A1<|im_end|>\n"
        "<|im_start|>user\n"
        "Q2<|im_end|>\n"
        "<|im_start|>assistant\n"
        "<think>\n"
        "r2\n"
        "</think>\n"
        "\n"
        "Calling\n"
        "<tool_call>\n"
        "{\"name\": \"f\", \"arguments\": {\"a\": 1}}\n"
        "</tool_call>\n"
        "<tool_call>\n"
        "{\"name\": \"g\", \"arguments\": {}}\n"
        "</tool_call><|im_end|>\n"
        "<|im_start|>user\n"
        "<tool_response>\n"
        "ok\n"
        "</tool_response><|im_end|>\n"
        "<|im_start|>assistant\n"
        "no reasoning here<|im_end|>\n"
        "<|im_start|>assistant\n"
        "<think>\n"
        "a\n"
        "</think>\n"
        "\n"
        "c<|im_end|>\n"
        "<|im_start|>system\n"
        "late system<|im_end|>\n"
        ""},
    {"empty_reasoning", 1, 0,
        "[{\"role\": \"user\", \"content\": \"hi\"}, {\"role\": \"assistant\", \"content\": \"<think>\\nhidden\\n</think>\\nshown\", \"reasoning_content\": \"\"}, {\"role\": \"assistant\", \"content\": \"middle\"}, {\"role\": \"assistant\", \"content\": \"last\"}]",
        "<|im_start|>user\n"
        "hi<|im_end|>\n"
        "<|im_start|>assistant\n"
        "<think>\n"
        "hidden\n"
        "</think>\n"
        "shown<|im_end|>\n"
        "<|im_start|>assistant\n"
        "middle<|im_end|>\n"
        "<|im_start|>assistant\n"
        "<think>\n"
        "\n"
        "</think>\n"
        "\n"
        "last<|im_end|>\n"
        "<|im_start|>assistant\n"
        "<think>\n"
        "\n"
        "</think>\n"
        "\n"
        ""},
    {"tool_first", 1, 1,
        "[{\"role\": \"tool\", \"content\": \"t0\"}, {\"role\": \"assistant\", \"content\": \"a\"}]",
        "<|im_start|>user\n"
        "<tool_response>\n"
        "t0\n"
        "</tool_response><|im_end|>\n"
        "<|im_start|>assistant\n"
        "a<|im_end|>\n"
        "<|im_start|>assistant\n"
        ""},
};

/* Arena bytes cmd_template takes for a conversation: each table, the
 * decoded text and the rendered text, rounded as arena_take rounds. */
static uint64_t arena_cost(const ChatJsonSizes *sz, int64_t rendered)
{
    uint64_t one = 1;
    return arena_round((sz->n_messages ? sz->n_messages : one) * sizeof(ChatMessage)) +
           arena_round((sz->n_tool_calls ? sz->n_tool_calls : one) * sizeof(ChatToolCall)) +
           arena_round((sz->n_tools ? sz->n_tools : one) * sizeof(const char *)) +
           arena_round((sz->n_tools ? sz->n_tools : one) * sizeof(size_t)) +
           arena_round(sz->text_bytes ? sz->text_bytes : one) + arena_round((uint64_t)rendered + 1);
}

static int render_json(ChatTemplate tpl, const char *json, int gen, int think, char *out, size_t cap, int64_t *len, char *err, size_t errcap)
{
    ChatJsonSizes sz;
    if (chat_json_read(json, strlen(json), "case", NULL, &sz, err, errcap) < 0) return -1;
    ChatJsonOut o;
    o.msgs = calloc(sz.n_messages + 1, sizeof *o.msgs);
    o.calls = calloc(sz.n_tool_calls + 1, sizeof *o.calls);
    o.tools = calloc(sz.n_tools + 1, sizeof *o.tools);
    o.tools_len = calloc(sz.n_tools + 1, sizeof *o.tools_len);
    o.text = malloc(sz.text_bytes + 1);
    o.cap = sz;
    ChatJsonSizes sz2;
    int r = chat_json_read(json, strlen(json), "case", &o, &sz2, err, errcap);
    if (r == 0 && memcmp(&sz, &sz2, sizeof sz) != 0) r = -1;
    if (r == 0) {
        ChatOptions opt = {gen, think, o.tools, o.tools_len, (int)sz.n_tools, 0};
        *len = chat_render(tpl, o.msgs, (int)sz.n_messages, &opt, out, cap);
        uint64_t bound = chat_render_bound(sz.n_messages, sz.n_tool_calls, sz.n_tools, sz.text_bytes);
        if (*len < 0) r = -2; /* refused (Qwen3.5's raise_exception) */
        else if ((uint64_t)*len > bound) r = -1;
        /* what cmd_template carves must fit chat_arena_bound */
        if (arena_cost(&sz, *len) > chat_arena_bound(strlen(json))) r = -1;
    }
    free(o.msgs);
    free(o.calls);
    free(o.tools);
    free(o.tools_len);
    free(o.text);
    return r;
}

static void json_conversations(void)
{
    for (size_t i = 0; i < sizeof json_cases / sizeof json_cases[0]; i++) {
        char out[8192], err[400] = "";
        int64_t len = -1;
        int r = render_json(CHAT_TEMPLATE_QWEN3, json_cases[i].json, json_cases[i].gen, json_cases[i].think, out, sizeof out, &len, err,
                            sizeof err);
        size_t wl = strlen(json_cases[i].want);
        CHECK(r == 0 && len == (int64_t)wl && memcmp(out, json_cases[i].want, wl) == 0,
              "json %s: rendering equals jinja2's (%s)", json_cases[i].name, err);
    }
}

/* The fixture conversations written as JSON arrays render the same. */
static void json_fixture_forms(void)
{
    const char *single = "[{\"role\": \"user\", \"content\": \"What is the capital of France?\"}]";
    const char *want = "<|im_start|>user\nWhat is the capital of France?<|im_end|>\n<|im_start|>assistant\n";
    char out[1024], err[400] = "";
    int64_t len;
    int r = render_json(CHAT_TEMPLATE_QWEN3, single, 1, 1, out, sizeof out, &len, err, sizeof err);
    CHECK(r == 0 && len == (int64_t)strlen(want) && !memcmp(out, want, (size_t)len), "json single user (%s)", err);
    const char *hist = "[{\"role\":\"user\",\"content\":\"What is 3*7?\"},{\"role\":\"assistant\",\"content\":\"<think>\\n3 "
                       "times 7 is 21.\\n</think>\\n\\n3*7 = 21.\"},\n {\"role\":\"user\",\"content\":\"And 21+1?\"}]";
    want = "<|im_start|>user\nWhat is 3*7?<|im_end|>\n<|im_start|>assistant\n3*7 = 21.<|im_end|>\n<|im_start|>user\n"
           "And 21+1?<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n";
    r = render_json(CHAT_TEMPLATE_QWEN3, hist, 1, 0, out, sizeof out, &len, err, sizeof err);
    CHECK(r == 0 && len == (int64_t)strlen(want) && !memcmp(out, want, (size_t)len), "json history, no think (%s)", err);
}

/* The short ChatML templates of the tiny models and the qwen2 vocab;
 * expected texts rendered with jinja2 from the templates in those files. */
static void chatml_templates(void)
{
    const char *conv1 = "[{\"role\": \"user\", \"content\": \"Hi\"}, {\"role\": \"assistant\", \"content\": "
                        "\"<think>x</think>Hello\"}, {\"role\": \"tool\", \"content\": \"r\"}, {\"role\": \"system\", "
                        "\"content\": \"S\"}]";
    const char *conv2 = "[{\"role\": \"system\", \"content\": \"Sys\"}, {\"role\": \"user\", \"content\": \"Q\"}]";
    const struct {
        ChatTemplate t;
        const char *conv;
        int gen;
        const char *want;
    } cases[] = {
        {CHAT_TEMPLATE_CHATML, conv1, 1,
         "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n<think>x</think>Hello<|im_end|>\n<|im_start|>tool\nr<|im_end|>"
         "\n<|im_start|>system\nS<|im_end|>\n<|im_start|>assistant\n"},
        {CHAT_TEMPLATE_CHATML, conv2, 0, "<|im_start|>system\nSys<|im_end|>\n<|im_start|>user\nQ<|im_end|>\n"},
        {CHAT_TEMPLATE_QWEN2, conv1, 1,
         "<|im_start|>system\nYou are a helpful assistant<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n"
         "<think>x</think>Hello<|im_end|>\n<|im_start|>tool\nr<|im_end|>\n<|im_start|>system\nS<|im_end|>\n<|im_start|>"
         "assistant\n"},
        {CHAT_TEMPLATE_QWEN2, conv2, 0, "<|im_start|>system\nSys<|im_end|>\n<|im_start|>user\nQ<|im_end|>\n"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char out[1024], err[400] = "";
        int64_t len = -1;
        int r = render_json(cases[i].t, cases[i].conv, cases[i].gen, 1, out, sizeof out, &len, err, sizeof err);
        CHECK(r == 0 && len == (int64_t)strlen(cases[i].want) && !memcmp(out, cases[i].want, (size_t)len),
              "%s template, case %zu, equals jinja2's (%s)", chat_template_name(cases[i].t), i, err);
    }
}

/* ---- Llama 3, Llama 3.1/3.2, Zephyr, Qwen2.5, SmolLM2 ----------------------
 * Expected texts rendered with Python jinja2 3.1.6 from the real templates
 * (below, as stored in the models' tokenizer_config.json), with
 * transformers' settings (trim_blocks, lstrip_blocks, tojson =
 * json.dumps(ensure_ascii=False)), bos_token "<|begin_of_text|>" for Llama 3
 * and eos_token "</s>" for Zephyr, no strftime_now (3.2 then prints its
 * default date). Contents with whitespace at both ends show Llama 3's trim
 * (U+3000 IDEOGRAPHIC SPACE is whitespace to Python). */
static const struct {
    ChatTemplate t;
    const char *name;
    int gen;
    const char *json;
    const char *want;
} more_cases[] = {
    {CHAT_TEMPLATE_LLAMA3, "llama3 convA", 1,
     "{\"messages\": [{\"role\": \"system\", \"content\": \"  Be brief.\\n\"}, {\"role\": \"user\", \"content\": \"Hi there \"}, {\"role\": \"assistant\", \"content\": \"\\tHello!\"}, {\"role\": \"user\", \"content\": \"What is 2+2?\343\200\200\"}]}",
     "<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n"
        "\n"
        "Be brief.<|eot_id|><|start_header_id|>user<|end_header_id|>\n"
        "\n"
        "Hi there<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n"
        "\n"
        "Hello!<|eot_id|><|start_header_id|>user<|end_header_id|>\n"
        "\n"
        "What is 2+2?<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n"
        "\n"},
    {CHAT_TEMPLATE_LLAMA3, "llama3 convB", 0,
     "{\"messages\": [{\"role\": \"user\", \"content\": \"Hello\"}]}",
     "<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n"
        "\n"
        "Hello<|eot_id|>"},
    {CHAT_TEMPLATE_LLAMA31, "llama3.1 convA", 1,
     "{\"messages\": [{\"role\": \"system\", \"content\": \"  Be brief.\\n\"}, {\"role\": \"user\", \"content\": \"Hi there \"}, {\"role\": \"assistant\", \"content\": \"\\tHello!\"}, {\"role\": \"user\", \"content\": \"What is 2+2?\343\200\200\"}]}",
     "<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n"
        "\n"
        "Cutting Knowledge Date: December 2023\n"
        "Today Date: 26 Jul 2024\n"
        "\n"
        "Be brief.<|eot_id|><|start_header_id|>user<|end_header_id|>\n"
        "\n"
        "Hi there<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n"
        "\n"
        "Hello!<|eot_id|><|start_header_id|>user<|end_header_id|>\n"
        "\n"
        "What is 2+2?<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n"
        "\n"},
    {CHAT_TEMPLATE_LLAMA31, "llama3.1 convB", 1,
     "{\"messages\": [{\"role\": \"user\", \"content\": \"Hello\"}]}",
     "<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n"
        "\n"
        "Cutting Knowledge Date: December 2023\n"
        "Today Date: 26 Jul 2024\n"
        "\n"
        "<|eot_id|><|start_header_id|>user<|end_header_id|>\n"
        "\n"
        "Hello<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n"
        "\n"},
    {CHAT_TEMPLATE_LLAMA31, "llama3.1 convTl", 1,
     "{\"messages\": [{\"role\": \"user\", \"content\": \"Weather?\"}, {\"role\": \"assistant\", \"tool_calls\": [{\"function\": {\"name\": \"get\", \"arguments\": {\"city\": \"Paris\"}}}]}]}",
     "<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n"
        "\n"
        "Cutting Knowledge Date: December 2023\n"
        "Today Date: 26 Jul 2024\n"
        "\n"
        "<|eot_id|><|start_header_id|>user<|end_header_id|>\n"
        "\n"
        "Weather?<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n"
        "\n"
        "{\"name\": \"get\", \"parameters\": {\"city\": \"Paris\"}}<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n"
        "\n"},
    {CHAT_TEMPLATE_LLAMA31, "llama3.2 convA", 1,
     "{\"messages\": [{\"role\": \"system\", \"content\": \"  Be brief.\\n\"}, {\"role\": \"user\", \"content\": \"Hi there \"}, {\"role\": \"assistant\", \"content\": \"\\tHello!\"}, {\"role\": \"user\", \"content\": \"What is 2+2?\343\200\200\"}]}",
     "<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n"
        "\n"
        "Cutting Knowledge Date: December 2023\n"
        "Today Date: 26 Jul 2024\n"
        "\n"
        "Be brief.<|eot_id|><|start_header_id|>user<|end_header_id|>\n"
        "\n"
        "Hi there<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n"
        "\n"
        "Hello!<|eot_id|><|start_header_id|>user<|end_header_id|>\n"
        "\n"
        "What is 2+2?<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n"
        "\n"},
    {CHAT_TEMPLATE_LLAMA31, "llama3.2 convB", 0,
     "{\"messages\": [{\"role\": \"user\", \"content\": \"Hello\"}]}",
     "<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n"
        "\n"
        "Cutting Knowledge Date: December 2023\n"
        "Today Date: 26 Jul 2024\n"
        "\n"
        "<|eot_id|><|start_header_id|>user<|end_header_id|>\n"
        "\n"
        "Hello<|eot_id|>"},
    {CHAT_TEMPLATE_ZEPHYR, "zephyr convA", 1,
     "{\"messages\": [{\"role\": \"system\", \"content\": \"  Be brief.\\n\"}, {\"role\": \"user\", \"content\": \"Hi there \"}, {\"role\": \"assistant\", \"content\": \"\\tHello!\"}, {\"role\": \"user\", \"content\": \"What is 2+2?\343\200\200\"}]}",
     "<|system|>\n"
        "  Be brief.\n"
        "</s>\n"
        "<|user|>\n"
        "Hi there </s>\n"
        "<|assistant|>\n"
        "\011Hello!</s>\n"
        "<|user|>\n"
        "What is 2+2?\343\200\200</s>\n"
        "<|assistant|>\n"},
    {CHAT_TEMPLATE_ZEPHYR, "zephyr convZ", 1,
     "{\"messages\": [{\"role\": \"user\", \"content\": \"Hi\"}, {\"role\": \"assistant\", \"content\": \"Hello\"}, {\"role\": \"tool\", \"content\": \"ignored\"}]}",
     "<|user|>\n"
        "Hi</s>\n"
        "<|assistant|>\n"
        "Hello</s>\n"
        "<|assistant|>\n"},
    {CHAT_TEMPLATE_ZEPHYR, "zephyr convB", 0,
     "{\"messages\": [{\"role\": \"user\", \"content\": \"Hello\"}]}",
     "<|user|>\n"
        "Hello</s>\n"},
    {CHAT_TEMPLATE_QWEN25, "qwen2.5 convA", 1,
     "{\"messages\": [{\"role\": \"system\", \"content\": \"  Be brief.\\n\"}, {\"role\": \"user\", \"content\": \"Hi there \"}, {\"role\": \"assistant\", \"content\": \"\\tHello!\"}, {\"role\": \"user\", \"content\": \"What is 2+2?\343\200\200\"}]}",
     "<|im_start|>system\n"
        "  Be brief.\n"
        "<|im_end|>\n"
        "<|im_start|>user\n"
        "Hi there <|im_end|>\n"
        "<|im_start|>assistant\n"
        "\011Hello!<|im_end|>\n"
        "<|im_start|>user\n"
        "What is 2+2?\343\200\200<|im_end|>\n"
        "<|im_start|>assistant\n"},
    {CHAT_TEMPLATE_QWEN25, "qwen2.5 convB", 1,
     "{\"messages\": [{\"role\": \"user\", \"content\": \"Hello\"}]}",
     "<|im_start|>system\n"
        "You are Qwen, created by Alibaba Cloud. You are a helpful assistant.<|im_end|>\n"
        "<|im_start|>user\n"
        "Hello<|im_end|>\n"
        "<|im_start|>assistant\n"},
    {CHAT_TEMPLATE_QWEN25, "qwen2.5 convT", 1,
     "{\"messages\": [{\"role\": \"user\", \"content\": \"Weather in Paris?\"}, {\"role\": \"assistant\", \"content\": \"\", \"tool_calls\": [{\"function\": {\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\", \"days\": [1, 2]}}}]}, {\"role\": \"tool\", \"content\": \"{\\\"temp\\\": 12}\"}, {\"role\": \"tool\", \"content\": \"sunny\"}, {\"role\": \"assistant\", \"content\": \"12 C, sunny.\"}]}",
     "<|im_start|>system\n"
        "You are Qwen, created by Alibaba Cloud. You are a helpful assistant.<|im_end|>\n"
        "<|im_start|>user\n"
        "Weather in Paris?<|im_end|>\n"
        "<|im_start|>assistant\n"
        "<tool_call>\n"
        "{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\", \"days\": [1, 2]}}\n"
        "</tool_call><|im_end|>\n"
        "<|im_start|>user\n"
        "<tool_response>\n"
        "{\"temp\": 12}\n"
        "</tool_response>\n"
        "<tool_response>\n"
        "sunny\n"
        "</tool_response><|im_end|>\n"
        "<|im_start|>assistant\n"
        "12 C, sunny.<|im_end|>\n"
        "<|im_start|>assistant\n"},
    {CHAT_TEMPLATE_QWEN25, "qwen2.5 convT+tools", 1,
     "{\"messages\": [{\"role\": \"user\", \"content\": \"Weather in Paris?\"}, {\"role\": \"assistant\", \"content\": \"\", \"tool_calls\": [{\"function\": {\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\", \"days\": [1, 2]}}}]}, {\"role\": \"tool\", \"content\": \"{\\\"temp\\\": 12}\"}, {\"role\": \"tool\", \"content\": \"sunny\"}, {\"role\": \"assistant\", \"content\": \"12 C, sunny.\"}], \"tools\": [{\"type\": \"function\", \"function\": {\"name\": \"get_weather\", \"parameters\": {\"type\": \"object\"}}}]}",
     "<|im_start|>system\n"
        "You are Qwen, created by Alibaba Cloud. You are a helpful assistant.\n"
        "\n"
        "# Tools\n"
        "\n"
        "You may call one or more functions to assist with the user query.\n"
        "\n"
        "You are provided with function signatures within <tools></tools> XML tags:\n"
        "<tools>\n"
        "{\"type\": \"function\", \"function\": {\"name\": \"get_weather\", \"parameters\": {\"type\": \"object\"}}}\n"
        "</tools>\n"
        "\n"
        "For each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:\n"
        "<tool_call>\n"
        "{\"name\": <function-name>, \"arguments\": <args-json-object>}\n"
        "</tool_call><|im_end|>\n"
        "<|im_start|>user\n"
        "Weather in Paris?<|im_end|>\n"
        "<|im_start|>assistant\n"
        "<tool_call>\n"
        "{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\", \"days\": [1, 2]}}\n"
        "</tool_call><|im_end|>\n"
        "<|im_start|>user\n"
        "<tool_response>\n"
        "{\"temp\": 12}\n"
        "</tool_response>\n"
        "<tool_response>\n"
        "sunny\n"
        "</tool_response><|im_end|>\n"
        "<|im_start|>assistant\n"
        "12 C, sunny.<|im_end|>\n"
        "<|im_start|>assistant\n"},
    {CHAT_TEMPLATE_QWEN25, "qwen2.5 convA+tools", 0,
     "{\"messages\": [{\"role\": \"system\", \"content\": \"  Be brief.\\n\"}, {\"role\": \"user\", \"content\": \"Hi there \"}, {\"role\": \"assistant\", \"content\": \"\\tHello!\"}, {\"role\": \"user\", \"content\": \"What is 2+2?\343\200\200\"}], \"tools\": [{\"type\": \"function\", \"function\": {\"name\": \"get_weather\", \"parameters\": {\"type\": \"object\"}}}]}",
     "<|im_start|>system\n"
        "  Be brief.\n"
        "\n"
        "\n"
        "# Tools\n"
        "\n"
        "You may call one or more functions to assist with the user query.\n"
        "\n"
        "You are provided with function signatures within <tools></tools> XML tags:\n"
        "<tools>\n"
        "{\"type\": \"function\", \"function\": {\"name\": \"get_weather\", \"parameters\": {\"type\": \"object\"}}}\n"
        "</tools>\n"
        "\n"
        "For each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:\n"
        "<tool_call>\n"
        "{\"name\": <function-name>, \"arguments\": <args-json-object>}\n"
        "</tool_call><|im_end|>\n"
        "<|im_start|>user\n"
        "Hi there <|im_end|>\n"
        "<|im_start|>assistant\n"
        "\011Hello!<|im_end|>\n"
        "<|im_start|>user\n"
        "What is 2+2?\343\200\200<|im_end|>\n"},
    {CHAT_TEMPLATE_SMOLLM2, "smollm2 convA", 1,
     "{\"messages\": [{\"role\": \"system\", \"content\": \"  Be brief.\\n\"}, {\"role\": \"user\", \"content\": \"Hi there \"}, {\"role\": \"assistant\", \"content\": \"\\tHello!\"}, {\"role\": \"user\", \"content\": \"What is 2+2?\343\200\200\"}]}",
     "<|im_start|>system\n"
        "  Be brief.\n"
        "<|im_end|>\n"
        "<|im_start|>user\n"
        "Hi there <|im_end|>\n"
        "<|im_start|>assistant\n"
        "\011Hello!<|im_end|>\n"
        "<|im_start|>user\n"
        "What is 2+2?\343\200\200<|im_end|>\n"
        "<|im_start|>assistant\n"},
    {CHAT_TEMPLATE_SMOLLM2, "smollm2 convB", 1,
     "{\"messages\": [{\"role\": \"user\", \"content\": \"Hello\"}]}",
     "<|im_start|>system\n"
        "You are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>\n"
        "<|im_start|>user\n"
        "Hello<|im_end|>\n"
        "<|im_start|>assistant\n"},
};

static void more_templates(void)
{
    for (size_t i = 0; i < sizeof more_cases / sizeof more_cases[0]; i++) {
        static char out[16384];
        char err[400] = "";
        int64_t len = -1;
        int r = render_json(more_cases[i].t, more_cases[i].json, more_cases[i].gen, 1, out, sizeof out, &len, err,
                            sizeof err);
        size_t wl = strlen(more_cases[i].want);
        CHECK(r == 0 && len == (int64_t)wl && memcmp(out, more_cases[i].want, wl) == 0,
              "%s template, %s: equals jinja2's rendering (%s)", chat_template_name(more_cases[i].t),
              more_cases[i].name, err);
    }
}

/* The real template texts (Llama 3: Meta-Llama-3-8B-Instruct; Llama 3.1:
 * 3.1/3.3 Instruct; Llama 3.2: llama.cpp's models/templates copy; Qwen2.5:
 * Qwen2.5-Instruct; Zephyr: TinyLlama-1.1B-Chat-v1.0 / zephyr-7b-beta;
 * SmolLM2-Instruct). */
static const struct {
    const char *name;
    ChatTemplate want;
    const char *text;
} real_templates[] = {
    {"llama3", CHAT_TEMPLATE_LLAMA3,
     "{% set loop_messages = messages %}{% for message in loop_messages %}{% set content = '<|start_header_id|>' + message['role'] + '<|end_header_id|>\\n\\n'+ message['content'] | trim + '<|eot_id|>' %}{% if loop.index0 == 0 %}{% set content = bos_token + content %}{% endif %}{{ content }}{% endfor %}{% if add_generation_prompt %}{{ '<|start_header_id|>assistant<|end_header_id|>\\n\\n' }}{% endif %}"},
    {"llama3.1", CHAT_TEMPLATE_LLAMA31,
     "{{- bos_token }}\n"
        "{%- if custom_tools is defined %}\n"
        "    {%- set tools = custom_tools %}\n"
        "{%- endif %}\n"
        "{%- if not tools_in_user_message is defined %}\n"
        "    {%- set tools_in_user_message = true %}\n"
        "{%- endif %}\n"
        "{%- if not date_string is defined %}\n"
        "    {%- set date_string = \"26 Jul 2024\" %}\n"
        "{%- endif %}\n"
        "{%- if not tools is defined %}\n"
        "    {%- set tools = none %}\n"
        "{%- endif %}\n"
        "\n"
        "{#- This block extracts the system message, so we can slot it into the right place. #}\n"
        "{%- if messages[0]['role'] == 'system' %}\n"
        "    {%- set system_message = messages[0]['content']|trim %}\n"
        "    {%- set messages = messages[1:] %}\n"
        "{%- else %}\n"
        "    {%- set system_message = \"\" %}\n"
        "{%- endif %}\n"
        "\n"
        "{#- System message + builtin tools #}\n"
        "{{- \"<|start_header_id|>system<|end_header_id|>\\n\\n\" }}\n"
        "{%- if builtin_tools is defined or tools is not none %}\n"
        "    {{- \"Environment: ipython\\n\" }}\n"
        "{%- endif %}\n"
        "{%- if builtin_tools is defined %}\n"
        "    {{- \"Tools: \" + builtin_tools | reject('equalto', 'code_interpreter') | join(\", \") + \"\\n\\n\"}}\n"
        "{%- endif %}\n"
        "{{- \"Cutting Knowledge Date: December 2023\\n\" }}\n"
        "{{- \"Today Date: \" + date_string + \"\\n\\n\" }}\n"
        "{%- if tools is not none and not tools_in_user_message %}\n"
        "    {{- \"You have access to the following functions. To call a function, please respond with JSON for a function call.\" }}\n"
        "    {{- 'Respond in the format {\"name\": function name, \"parameters\": dictionary of argument name and its value}.' }}\n"
        "    {{- \"Do not use variables.\\n\\n\" }}\n"
        "    {%- for t in tools %}\n"
        "        {{- t | tojson(indent=4) }}\n"
        "        {{- \"\\n\\n\" }}\n"
        "    {%- endfor %}\n"
        "{%- endif %}\n"
        "{{- system_message }}\n"
        "{{- \"<|eot_id|>\" }}\n"
        "\n"
        "{#- Custom tools are passed in a user message with some extra guidance #}\n"
        "{%- if tools_in_user_message and not tools is none %}\n"
        "    {#- Extract the first user message so we can plug it in here #}\n"
        "    {%- if messages | length != 0 %}\n"
        "        {%- set first_user_message = messages[0]['content']|trim %}\n"
        "        {%- set messages = messages[1:] %}\n"
        "    {%- else %}\n"
        "        {{- raise_exception(\"Cannot put tools in the first user message when there's no first user message!\") }}\n"
        "{%- endif %}\n"
        "    {{- '<|start_header_id|>user<|end_header_id|>\\n\\n' -}}\n"
        "    {{- \"Given the following functions, please respond with a JSON for a function call \" }}\n"
        "    {{- \"with its proper arguments that best answers the given prompt.\\n\\n\" }}\n"
        "    {{- 'Respond in the format {\"name\": function name, \"parameters\": dictionary of argument name and its value}.' }}\n"
        "    {{- \"Do not use variables.\\n\\n\" }}\n"
        "    {%- for t in tools %}\n"
        "        {{- t | tojson(indent=4) }}\n"
        "        {{- \"\\n\\n\" }}\n"
        "    {%- endfor %}\n"
        "    {{- first_user_message + \"<|eot_id|>\"}}\n"
        "{%- endif %}\n"
        "\n"
        "{%- for message in messages %}\n"
        "    {%- if not (message.role == 'ipython' or message.role == 'tool' or 'tool_calls' in message) %}\n"
        "        {{- '<|start_header_id|>' + message['role'] + '<|end_header_id|>\\n\\n'+ message['content'] | trim + '<|eot_id|>' }}\n"
        "    {%- elif 'tool_calls' in message %}\n"
        "        {%- if not message.tool_calls|length == 1 %}\n"
        "            {{- raise_exception(\"This model only supports single tool-calls at once!\") }}\n"
        "        {%- endif %}\n"
        "        {%- set tool_call = message.tool_calls[0].function %}\n"
        "        {%- if builtin_tools is defined and tool_call.name in builtin_tools %}\n"
        "            {{- '<|start_header_id|>assistant<|end_header_id|>\\n\\n' -}}\n"
        "            {{- \"<|python_tag|>\" + tool_call.name + \".call(\" }}\n"
        "            {%- for arg_name, arg_val in tool_call.arguments | items %}\n"
        "                {{- arg_name + '=\"' + arg_val + '\"' }}\n"
        "                {%- if not loop.last %}\n"
        "                    {{- \", \" }}\n"
        "                {%- endif %}\n"
        "                {%- endfor %}\n"
        "            {{- \")\" }}\n"
        "        {%- else  %}\n"
        "            {{- '<|start_header_id|>assistant<|end_header_id|>\\n\\n' -}}\n"
        "            {{- '{\"name\": \"' + tool_call.name + '\", ' }}\n"
        "            {{- '\"parameters\": ' }}\n"
        "            {{- tool_call.arguments | tojson }}\n"
        "            {{- \"}\" }}\n"
        "        {%- endif %}\n"
        "        {%- if builtin_tools is defined %}\n"
        "            {#- This means we're in ipython mode #}\n"
        "            {{- \"<|eom_id|>\" }}\n"
        "        {%- else %}\n"
        "            {{- \"<|eot_id|>\" }}\n"
        "        {%- endif %}\n"
        "    {%- elif message.role == \"tool\" or message.role == \"ipython\" %}\n"
        "        {{- \"<|start_header_id|>ipython<|end_header_id|>\\n\\n\" }}\n"
        "        {%- if message.content is mapping or message.content is iterable %}\n"
        "            {{- message.content | tojson }}\n"
        "        {%- else %}\n"
        "            {{- message.content }}\n"
        "        {%- endif %}\n"
        "        {{- \"<|eot_id|>\" }}\n"
        "    {%- endif %}\n"
        "{%- endfor %}\n"
        "{%- if add_generation_prompt %}\n"
        "    {{- '<|start_header_id|>assistant<|end_header_id|>\\n\\n' }}\n"
        "{%- endif %}\n"},
    {"llama3.2", CHAT_TEMPLATE_LLAMA31,
     "{{- bos_token }}\n"
        "{%- if custom_tools is defined %}\n"
        "    {%- set tools = custom_tools %}\n"
        "{%- endif %}\n"
        "{%- if not tools_in_user_message is defined %}\n"
        "    {%- set tools_in_user_message = true %}\n"
        "{%- endif %}\n"
        "{%- if not date_string is defined %}\n"
        "    {%- if strftime_now is defined %}\n"
        "        {%- set date_string = strftime_now(\"%d %b %Y\") %}\n"
        "    {%- else %}\n"
        "        {%- set date_string = \"26 Jul 2024\" %}\n"
        "    {%- endif %}\n"
        "{%- endif %}\n"
        "{%- if not tools is defined %}\n"
        "    {%- set tools = none %}\n"
        "{%- endif %}\n"
        "\n"
        "{#- This block extracts the system message, so we can slot it into the right place. #}\n"
        "{%- if messages[0]['role'] == 'system' %}\n"
        "    {%- set system_message = messages[0]['content']|trim %}\n"
        "    {%- set messages = messages[1:] %}\n"
        "{%- else %}\n"
        "    {%- set system_message = \"\" %}\n"
        "{%- endif %}\n"
        "\n"
        "{#- System message #}\n"
        "{{- \"<|start_header_id|>system<|end_header_id|>\\n\\n\" }}\n"
        "{%- if tools is not none %}\n"
        "    {{- \"Environment: ipython\\n\" }}\n"
        "{%- endif %}\n"
        "{{- \"Cutting Knowledge Date: December 2023\\n\" }}\n"
        "{{- \"Today Date: \" + date_string + \"\\n\\n\" }}\n"
        "{%- if tools is not none and not tools_in_user_message %}\n"
        "    {{- \"You have access to the following functions. To call a function, please respond with JSON for a function call.\" }}\n"
        "    {{- 'Respond in the format {\"name\": function name, \"parameters\": dictionary of argument name and its value}.' }}\n"
        "    {{- \"Do not use variables.\\n\\n\" }}\n"
        "    {%- for t in tools %}\n"
        "        {{- t | tojson(indent=4) }}\n"
        "        {{- \"\\n\\n\" }}\n"
        "    {%- endfor %}\n"
        "{%- endif %}\n"
        "{{- system_message }}\n"
        "{{- \"<|eot_id|>\" }}\n"
        "\n"
        "{#- Custom tools are passed in a user message with some extra guidance #}\n"
        "{%- if tools_in_user_message and not tools is none %}\n"
        "    {#- Extract the first user message so we can plug it in here #}\n"
        "    {%- if messages | length != 0 %}\n"
        "        {%- set first_user_message = messages[0]['content']|trim %}\n"
        "        {%- set messages = messages[1:] %}\n"
        "    {%- else %}\n"
        "        {{- raise_exception(\"Cannot put tools in the first user message when there's no first user message!\") }}\n"
        "{%- endif %}\n"
        "    {{- '<|start_header_id|>user<|end_header_id|>\\n\\n' -}}\n"
        "    {{- \"Given the following functions, please respond with a JSON for a function call \" }}\n"
        "    {{- \"with its proper arguments that best answers the given prompt.\\n\\n\" }}\n"
        "    {{- 'Respond in the format {\"name\": function name, \"parameters\": dictionary of argument name and its value}.' }}\n"
        "    {{- \"Do not use variables.\\n\\n\" }}\n"
        "    {%- for t in tools %}\n"
        "        {{- t | tojson(indent=4) }}\n"
        "        {{- \"\\n\\n\" }}\n"
        "    {%- endfor %}\n"
        "    {{- first_user_message + \"<|eot_id|>\"}}\n"
        "{%- endif %}\n"
        "\n"
        "{%- for message in messages %}\n"
        "    {%- if not (message.role == 'ipython' or message.role == 'tool' or 'tool_calls' in message) %}\n"
        "        {{- '<|start_header_id|>' + message['role'] + '<|end_header_id|>\\n\\n'+ message['content'] | trim + '<|eot_id|>' }}\n"
        "    {%- elif 'tool_calls' in message %}\n"
        "        {%- if not message.tool_calls|length == 1 %}\n"
        "            {{- raise_exception(\"This model only supports single tool-calls at once!\") }}\n"
        "        {%- endif %}\n"
        "        {%- set tool_call = message.tool_calls[0].function %}\n"
        "        {{- '<|start_header_id|>assistant<|end_header_id|>\\n\\n' -}}\n"
        "        {{- '{\"name\": \"' + tool_call.name + '\", ' }}\n"
        "        {{- '\"parameters\": ' }}\n"
        "        {{- tool_call.arguments | tojson }}\n"
        "        {{- \"}\" }}\n"
        "        {{- \"<|eot_id|>\" }}\n"
        "    {%- elif message.role == \"tool\" or message.role == \"ipython\" %}\n"
        "        {{- \"<|start_header_id|>ipython<|end_header_id|>\\n\\n\" }}\n"
        "        {%- if message.content is mapping or message.content is iterable %}\n"
        "            {{- message.content | tojson }}\n"
        "        {%- else %}\n"
        "            {{- message.content }}\n"
        "        {%- endif %}\n"
        "        {{- \"<|eot_id|>\" }}\n"
        "    {%- endif %}\n"
        "{%- endfor %}\n"
        "{%- if add_generation_prompt %}\n"
        "    {{- '<|start_header_id|>assistant<|end_header_id|>\\n\\n' }}\n"
        "{%- endif %}\n"},
    {"qwen2.5", CHAT_TEMPLATE_QWEN25,
     "{%- if tools %}\n"
        "    {{- '<|im_start|>system\\n' }}\n"
        "    {%- if messages[0]['role'] == 'system' %}\n"
        "        {{- messages[0]['content'] }}\n"
        "    {%- else %}\n"
        "        {{- 'You are Qwen, created by Alibaba Cloud. You are a helpful assistant.' }}\n"
        "    {%- endif %}\n"
        "    {{- \"\\n\\n# Tools\\n\\nYou may call one or more functions to assist with the user query.\\n\\nYou are provided with function signatures within <tools></tools> XML tags:\\n<tools>\" }}\n"
        "    {%- for tool in tools %}\n"
        "        {{- \"\\n\" }}\n"
        "        {{- tool | tojson }}\n"
        "    {%- endfor %}\n"
        "    {{- \"\\n</tools>\\n\\nFor each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:\\n<tool_call>\\n{\\\"name\\\": <function-name>, \\\"arguments\\\": <args-json-object>}\\n</tool_call><|im_end|>\\n\" }}\n"
        "{%- else %}\n"
        "    {%- if messages[0]['role'] == 'system' %}\n"
        "        {{- '<|im_start|>system\\n' + messages[0]['content'] + '<|im_end|>\\n' }}\n"
        "    {%- else %}\n"
        "        {{- '<|im_start|>system\\nYou are Qwen, created by Alibaba Cloud. You are a helpful assistant.<|im_end|>\\n' }}\n"
        "    {%- endif %}\n"
        "{%- endif %}\n"
        "{%- for message in messages %}\n"
        "    {%- if (message.role == \"user\") or (message.role == \"system\" and not loop.first) or (message.role == \"assistant\" and not message.tool_calls) %}\n"
        "        {{- '<|im_start|>' + message.role + '\\n' + message.content + '<|im_end|>' + '\\n' }}\n"
        "    {%- elif message.role == \"assistant\" %}\n"
        "        {{- '<|im_start|>' + message.role }}\n"
        "        {%- if message.content %}\n"
        "            {{- '\\n' + message.content }}\n"
        "        {%- endif %}\n"
        "        {%- for tool_call in message.tool_calls %}\n"
        "            {%- if tool_call.function is defined %}\n"
        "                {%- set tool_call = tool_call.function %}\n"
        "            {%- endif %}\n"
        "            {{- '\\n<tool_call>\\n{\"name\": \"' }}\n"
        "            {{- tool_call.name }}\n"
        "            {{- '\", \"arguments\": ' }}\n"
        "            {{- tool_call.arguments | tojson }}\n"
        "            {{- '}\\n</tool_call>' }}\n"
        "        {%- endfor %}\n"
        "        {{- '<|im_end|>\\n' }}\n"
        "    {%- elif message.role == \"tool\" %}\n"
        "        {%- if (loop.index0 == 0) or (messages[loop.index0 - 1].role != \"tool\") %}\n"
        "            {{- '<|im_start|>user' }}\n"
        "        {%- endif %}\n"
        "        {{- '\\n<tool_response>\\n' }}\n"
        "        {{- message.content }}\n"
        "        {{- '\\n</tool_response>' }}\n"
        "        {%- if loop.last or (messages[loop.index0 + 1].role != \"tool\") %}\n"
        "            {{- '<|im_end|>\\n' }}\n"
        "        {%- endif %}\n"
        "    {%- endif %}\n"
        "{%- endfor %}\n"
        "{%- if add_generation_prompt %}\n"
        "    {{- '<|im_start|>assistant\\n' }}\n"
        "{%- endif %}\n"},
    {"zephyr", CHAT_TEMPLATE_ZEPHYR,
     "{% for message in messages %}\n"
        "{% if message['role'] == 'user' %}\n"
        "{{ '<|user|>\n"
        "' + message['content'] + eos_token }}\n"
        "{% elif message['role'] == 'system' %}\n"
        "{{ '<|system|>\n"
        "' + message['content'] + eos_token }}\n"
        "{% elif message['role'] == 'assistant' %}\n"
        "{{ '<|assistant|>\n"
        "'  + message['content'] + eos_token }}\n"
        "{% endif %}\n"
        "{% if loop.last and add_generation_prompt %}\n"
        "{{ '<|assistant|>' }}\n"
        "{% endif %}\n"
        "{% endfor %}"},
    {"smollm2", CHAT_TEMPLATE_SMOLLM2,
     "{% for message in messages %}{% if loop.first and messages[0]['role'] != 'system' %}{{ '<|im_start|>system\n"
        "You are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>\n"
        "' }}{% endif %}{{'<|im_start|>' + message['role'] + '\n"
        "' + message['content'] + '<|im_end|>' + '\n"
        "'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n"
        "' }}{% endif %}"},
};

/* Each built-in template renders what the interpreter renders from the
 * real template it copies (jinja.h via chat_request.h), on conversations
 * with and without a system message, several turns, generation prompt on
 * and off: the two ways of rendering check each other. */
static void builtin_equals_jinja(void)
{
    static const char *const convs[] = {
        "[{\"role\":\"user\",\"content\":\"Hi\"}]",
        "[{\"role\":\"system\",\"content\":\"Be brief.\"},{\"role\":\"user\",\"content\":\" Hi \\n\"}]",
        "[{\"role\":\"system\",\"content\":\"S\"},{\"role\":\"user\",\"content\":\"Hi\"},"
        "{\"role\":\"assistant\",\"content\":\"Hello there\"},{\"role\":\"user\",\"content\":\"More?\"}]",
    };
    for (size_t i = 0; i < sizeof real_templates / sizeof real_templates[0]; i++) {
        const char *text = real_templates[i].text;
        uint64_t cap = jinja_parse_bound(strlen(text));
        void *mem = malloc(cap);
        JinjaTemplate *t = NULL;
        char err[512];
        PithStatus st = jinja_parse(text, strlen(text), mem, cap, &t, err, sizeof err);
        CHECK(st == PITH_OK, "jinja: %s's template parses: %s", real_templates[i].name, err);
        if (st != PITH_OK) {
            free(mem);
            continue;
        }
        /* the texts the built-ins fix: Llama's BOS, Zephyr's EOS, Llama 3.2's date */
        ChatRenderer jr = {t, CHAT_TEMPLATE_RAW, "template", "<|begin_of_text|>", "</s>", 1721952000};
        ChatRenderer br = {NULL, real_templates[i].want, "builtin", "", "", 0};
        for (size_t k = 0; k < sizeof convs / sizeof convs[0]; k++)
            for (int gen = 0; gen < 2; gen++) {
                ChatInput in = {convs[k], strlen(convs[k]), NULL, 0, NULL, 0, gen, -1, 0, 0};
                uint64_t scap = chat_input_scratch_bound(strlen(convs[k]), 4096);
                void *sm = malloc(scap);
                Arena a;
                char want[4096], got[4096];
                size_t wn = 0, gn = 0;
                arena_init(&a, sm, scap);
                PithStatus s1 = chat_render_input(&jr, &in, &a, want, sizeof want, &wn, err, sizeof err);
                arena_init(&a, sm, scap);
                PithStatus s2 = chat_render_input(&br, &in, &a, got, sizeof got, &gn, err, sizeof err);
                int same = s1 == PITH_OK && s2 == PITH_OK && wn == gn && !memcmp(want, got, wn);
                CHECK(same, "builtin %s = its Jinja template (conversation %zu, generation prompt %d)%s%.*s%s%.*s",
                      chat_template_name(real_templates[i].want), k, gen, same ? "" : ": ", same ? 0 : (int)gn, got,
                      same ? "" : " vs ", same ? 0 : (int)wn, want);
                free(sm);
            }
        free(mem);
    }
}

/* What a chat feeds turn by turn must be the rendering of the whole
 * conversation: first turn (with the start), then the reply, the turn end,
 * and the next user turn rendered as a continuation. */
static void continuation(void)
{
    for (int t = 1; t < CHAT_TEMPLATE_COUNT; t++) {
        for (int with_sys = 0; with_sys < 2; with_sys++) {
            ChatMessage m[4];
            memset(m, 0, sizeof m);
            int k = 0;
            if (with_sys) m[k].role = CHAT_ROLE_SYSTEM, m[k].content = "Sys", m[k++].content_len = 3;
            m[k].role = CHAT_ROLE_USER, m[k].content = "Q1", m[k++].content_len = 2;
            m[k].role = CHAT_ROLE_ASSISTANT, m[k].content = "A1", m[k++].content_len = 2;
            m[k].role = CHAT_ROLE_USER, m[k].content = "Q2", m[k++].content_len = 2;
            ChatOptions opt = {1, 1, NULL, NULL, 0, 0};
            char full[2048], first[2048], next[2048], joined[8192];
            int64_t nf = chat_render((ChatTemplate)t, m, k, &opt, full, sizeof full);
            int64_t n1 = chat_render((ChatTemplate)t, m, k - 2, &opt, first, sizeof first);
            opt.continuation = 1;
            int64_t n2 = chat_render((ChatTemplate)t, m + k - 1, 1, &opt, next, sizeof next);
            snprintf(joined, sizeof joined, "%s%s%s%s", first, "A1", chat_template_turn_end((ChatTemplate)t), next);
            if (t == CHAT_TEMPLATE_QWEN35 || t == CHAT_TEMPLATE_QWEN35_THINK) {
                /* Qwen3.5's generation prompt opens a think block that its
                 * history leaves out: the context holds the turn as generated */
                char *a1 = strstr(full, "<|im_start|>assistant\nA1");
                if (a1) {
                    size_t at = (size_t)(a1 - full) + 22;
                    char with[2048];
                    snprintf(with, sizeof with, "%.*s<think>\n%s", (int)at, full, full + at);
                    snprintf(full, sizeof full, "%s", with);
                }
            }
            CHECK(nf > 0 && n1 > 0 && n2 > 0 && !strcmp(full, joined),
                  "%s: first turn + reply + turn end + continuation = the whole conversation (%s system)",
                  chat_template_name((ChatTemplate)t), with_sys ? "with" : "without");
        }
    }
}

/* Worst cases for chat_arena_bound: documents made of the smallest items. */
static char *repeat_doc(const char *head, const char *item, int n, const char *tail)
{
    size_t len = strlen(head) + (strlen(item) + 1) * (size_t)n + strlen(tail) + 1;
    char *d = malloc(len), *p = d;
    p += sprintf(p, "%s", head);
    for (int i = 0; i < n; i++) p += sprintf(p, "%s%s", i ? "," : "", item);
    sprintf(p, "%s", tail);
    return d;
}

static void arena_bounds(void)
{
    static char out[1 << 20];
    struct {
        const char *head, *item, *tail, *what;
        int n;
        int qwen35; /* Qwen3.5's template renders it (else it refuses it: no user query, arguments not an object) */
    } docs[] = {
        {"[", "{\"role\":\"assistant\"}", "]", "minimal assistant messages", 2000, 0},
        {"[", "{\"role\":\"tool\",\"content\":\"\"}", "]", "minimal tool messages", 2000, 0},
        {"[{\"role\":\"user\",\"content\":\"q\"},{\"role\":\"assistant\",\"tool_calls\":[", "{\"name\":\"\"}", "]}]",
         "minimal tool calls", 2000, 1},
        {"{\"messages\":[{\"role\":\"user\",\"content\":\"\"}],\"tools\":[", "{}", "]}", "minimal tools", 2000, 1},
        {"[{\"role\":\"assistant\",\"tool_calls\":[{\"name\":\"f\",\"arguments\":[", "1", "]}]}]",
         "arguments that tojson widens", 5000, 0},
        {"[{\"role\":\"assistant\",\"content\":\"", "x", "\"}]", "long content", 5000, 0},
        {"[", "", "]", "no messages", 0, 0},
        /* Qwen3.5 writes a parameter block per member of the arguments */
        {"[{\"role\":\"user\",\"content\":\"q\"},{\"role\":\"assistant\",\"tool_calls\":[{\"name\":\"f\",\"arguments\":{",
         "\"\":0", "}}]}]", "minimal members of arguments", 5000, 1},
        {"[{\"role\":\"user\",\"content\":\"q\"},{\"role\":\"assistant\",\"tool_calls\":[{\"name\":\"f\",\"arguments\":\"{",
         "\\\"\\\":0", "}\"}]}]", "minimal members of arguments in a string", 5000, 1},
    };
    for (size_t i = 0; i < sizeof docs / sizeof docs[0]; i++) {
        char *d = repeat_doc(docs[i].head, docs[i].item, docs[i].n, docs[i].tail);
        char err[400] = "";
        int64_t len = -1;
        int bad = 0;
        for (int t = 0; t < CHAT_TEMPLATE_COUNT; t++) {
            int r = render_json((ChatTemplate)t, d, 1, 1, out, sizeof out, &len, err, sizeof err);
            int q35 = t == CHAT_TEMPLATE_QWEN35 || t == CHAT_TEMPLATE_QWEN35_THINK;
            if (r != 0 && !(r == -2 && q35 && !docs[i].qwen35)) bad = t + 1;
        }
        CHECK(bad == 0, "arena bound holds for %s (%zu bytes of JSON), every template %s %s", docs[i].what, strlen(d),
              bad ? chat_template_name((ChatTemplate)(bad - 1)) : "", err);
        free(d);
    }
}

static void expect_error(const char *json, const char *want_substr, const char *name)
{
    char err[400] = "";
    ChatJsonSizes sz;
    int r = chat_json_read(json, strlen(json), "msgs.json", NULL, &sz, err, sizeof err);
    CHECK(r < 0 && strncmp(err, "msgs.json: byte ", 16) == 0 && strstr(err, want_substr) != NULL,
          "json refuses %s: \"%s\"", name, err);
}

static void json_errors(void)
{
    expect_error("[{\"role\":\"robot\",\"content\":\"x\"}]", "unknown role", "unknown role");
    expect_error("[{\"role\":\"user\",\"role\":\"user\",\"content\":\"x\"}]", "repeated key", "repeated role key");
    expect_error("[{\"role\":\"user\",\"content\":\"x\",\"content\":\"y\"}]", "repeated key", "repeated content key");
    expect_error("[{\"content\":\"x\"}]", "without \"role\"", "missing role");
    expect_error("[{\"role\":\"user\"}]", "without \"content\"", "user without content");
    expect_error("[{\"role\":\"user\",\"content\":null}]", "without \"content\"", "user with null content");
    expect_error("[{\"role\":\"user\",\"content\":3}]", "expected string", "number content");
    expect_error("[{\"role\":\"user\",\"content\":\"x\",\"tool_calls\":[{\"name\":\"f\"}]}]", "only assistant",
                 "tool_calls on a user message");
    expect_error("[{\"role\":\"assistant\",\"tool_calls\":[{\"function\":{\"arguments\":{}}}]}]", "without \"name\"",
                 "tool call without name");
    expect_error("[{\"role\":\"assistant\",\"tool_calls\":{}}]", "must be an array", "tool_calls not an array");
    expect_error("[\"user\"]", "must be an object", "message not an object");
    expect_error("{\"tools\":[]}", "without \"messages\"", "object without messages");
    expect_error("42", "expected an array", "top-level number");
    expect_error("[] x", "trailing", "trailing garbage");
    expect_error("[{\"role\":\"user\",\"content\":\"\\ud800\"}]", "surrogate", "lone surrogate");
    expect_error("[{\"role\":\"user\",\"content\":\"\xc3\x28\"}]", "UTF-8", "invalid UTF-8");
    expect_error("[{\"role\":\"user\",\"content\":\"x\"},]", "trailing comma", "trailing comma");
}

static void template_names(void)
{
    CHECK(!strcmp(chat_template_name(CHAT_TEMPLATE_QWEN3), "qwen3") && !strcmp(chat_template_name(CHAT_TEMPLATE_RAW), "raw"),
          "template names");
}

static void raw_and_invalid(void)
{
    ChatMessage m[2];
    memset(m, 0, sizeof m);
    m[0].role = CHAT_ROLE_USER, m[0].content = "ab", m[0].content_len = 2;
    m[1].role = CHAT_ROLE_ASSISTANT, m[1].content = "cd", m[1].content_len = 2;
    char buf[64];
    CHECK(chat_render(CHAT_TEMPLATE_RAW, m, 2, NULL, buf, sizeof buf) == 4 && !strcmp(buf, "abcd"), "raw concatenation");
    m[1].role = (ChatRole)9;
    CHECK(chat_render(CHAT_TEMPLATE_QWEN3, m, 2, NULL, buf, sizeof buf) == -1, "invalid role refused");
    CHECK(chat_render(CHAT_TEMPLATE_QWEN3, m, -1, NULL, buf, sizeof buf) == -1, "negative count refused");
    CHECK(chat_render(CHAT_TEMPLATE_QWEN3, NULL, 0, NULL, buf, sizeof buf) == 22 &&
              !strcmp(buf, "<|im_start|>assistant\n"),
          "no messages: generation prompt only");
}

int main(void)
{
    fixture_cases();
    json_conversations();
    json_fixture_forms();
    chatml_templates();
    more_templates();
    builtin_equals_jinja();
    continuation();
    arena_bounds();
    json_errors();
    template_names();
    raw_and_invalid();
    CHECK_DONE();
}
