/* chat.c - chat templates as C functions, and the JSON conversation reader. */
#include "chat.h"

#include <stdio.h>
#include <string.h>

#include "../arena/arena.h"
#include "json.h"

/* ---- Small string tools (Python's str methods the templates use) ------ */

typedef struct {
    const char *p;
    size_t n;
} Str;

static Str str_make(const char *p, size_t n)
{
    Str s = {p ? p : "", p ? n : 0};
    return s;
}

/* Index of the first (last = 0) or last (last = 1) occurrence of needle, or -1. */
static int64_t str_find(Str s, const char *needle, int last)
{
    size_t k = strlen(needle);
    if (k > s.n) return -1;
    int64_t found = -1;
    for (size_t i = 0; i + k <= s.n; i++) {
        if (memcmp(s.p + i, needle, k) == 0) {
            found = (int64_t)i;
            if (!last) break;
        }
    }
    return found;
}

static int str_starts(Str s, const char *prefix)
{
    size_t k = strlen(prefix);
    return s.n >= k && memcmp(s.p, prefix, k) == 0;
}

static int str_ends(Str s, const char *suffix)
{
    size_t k = strlen(suffix);
    return s.n >= k && memcmp(s.p + s.n - k, suffix, k) == 0;
}

static Str lstrip_nl(Str s)
{
    while (s.n > 0 && s.p[0] == '\n') s.p++, s.n--;
    return s;
}

static Str rstrip_nl(Str s)
{
    while (s.n > 0 && s.p[s.n - 1] == '\n') s.n--;
    return s;
}

/* ---- Output into the caller's buffer, counting what does not fit ------ */

typedef struct {
    char *buf;
    size_t cap;
    uint64_t len;
    int bad; /* the template refuses the conversation (its raise_exception) */
} Out;

static void put(Out *o, const char *s, size_t n)
{
    if (o->len < o->cap) {
        size_t room = o->cap - (size_t)o->len;
        memcpy(o->buf + o->len, s, n < room ? n : room);
    }
    o->len += n;
}

static void puts_(Out *o, const char *s)
{
    put(o, s, strlen(s));
}

static void put_str(Out *o, Str s)
{
    put(o, s.p, s.n);
}

/* ---- Qwen3 ---------------------------------------------------------------
 * Follows Qwen3's tokenizer_config.json chat_template line by line. */

static Str content_of(const ChatMessage *m)
{
    return str_make(m->content, m->content_len);
}

/* One tool call as Qwen's templates write it (after the separator). */
static void put_tool_call(Out *o, const ChatToolCall *tc)
{
    puts_(o, "<tool_call>\n{\"name\": \"");
    put(o, tc->name, tc->name_len);
    puts_(o, "\", \"arguments\": ");
    put(o, tc->arguments, tc->arguments_len);
    puts_(o, "}\n</tool_call>");
}

/* A tool message: consecutive tool results share one user turn. */
static void put_tool_response(Out *o, const ChatMessage *msgs, int n, int i)
{
    if (i == 0 || msgs[i - 1].role != CHAT_ROLE_TOOL) puts_(o, "<|im_start|>user");
    puts_(o, "\n<tool_response>\n");
    put_str(o, content_of(&msgs[i]));
    puts_(o, "\n</tool_response>");
    if (i == n - 1 || msgs[i + 1].role != CHAT_ROLE_TOOL) puts_(o, "<|im_end|>\n");
}

/* The template's "multi-step tool" rule: the last user message that is not
 * just a wrapped tool response (index n-1 if there is none). Assistant
 * turns after it keep their reasoning; earlier ones lose it. */
static int qwen3_last_query_index(const ChatMessage *msgs, int n)
{
    for (int i = n - 1; i >= 0; i--) {
        Str c = content_of(&msgs[i]);
        if (msgs[i].role == CHAT_ROLE_USER && !(str_starts(c, "<tool_response>") && str_ends(c, "</tool_response>")))
            return i;
    }
    return n - 1;
}

/* The tools block of Qwen2.5's and Qwen3's system turn (the same text),
 * ending the turn. */
static void qwen_tools_block(const ChatOptions *opt, Out *o)
{
    puts_(o, "# Tools\n\nYou may call one or more functions to assist with the user query.\n\n"
             "You are provided with function signatures within <tools></tools> XML tags:\n<tools>");
    for (int t = 0; t < opt->n_tools; t++) {
        puts_(o, "\n");
        put(o, opt->tools[t], opt->tools_len[t]);
    }
    puts_(o, "\n</tools>\n\nFor each function call, return a json object with function name and arguments "
             "within <tool_call></tool_call> XML tags:\n<tool_call>\n{\"name\": <function-name>, "
             "\"arguments\": <args-json-object>}\n</tool_call><|im_end|>\n");
}

static void render_qwen3(const ChatMessage *msgs, int n, const ChatOptions *opt, Out *o)
{
    int first_is_system = n > 0 && msgs[0].role == CHAT_ROLE_SYSTEM;
    if (opt->n_tools > 0) {
        puts_(o, "<|im_start|>system\n");
        if (first_is_system) {
            put_str(o, content_of(&msgs[0]));
            puts_(o, "\n\n");
        }
        qwen_tools_block(opt, o);
    } else if (first_is_system) {
        puts_(o, "<|im_start|>system\n");
        put_str(o, content_of(&msgs[0]));
        puts_(o, "<|im_end|>\n");
    }

    int last_query = qwen3_last_query_index(msgs, n);
    for (int i = 0; i < n; i++) {
        const ChatMessage *m = &msgs[i];
        if (m->role == CHAT_ROLE_USER || (m->role == CHAT_ROLE_SYSTEM && i > 0)) {
            puts_(o, "<|im_start|>");
            puts_(o, chat_role_name(m->role));
            puts_(o, "\n");
            put_str(o, content_of(m));
            puts_(o, "<|im_end|>\n");
        } else if (m->role == CHAT_ROLE_ASSISTANT) {
            Str content = content_of(m), reasoning = str_make("", 0);
            if (m->has_reasoning) {
                reasoning = str_make(m->reasoning, m->reasoning_len);
            } else {
                int64_t first_end = str_find(content, "</think>", 0);
                if (first_end >= 0) {
                    /* content.split('</think>')[-1].lstrip('\n') */
                    int64_t last_end = str_find(content, "</think>", 1);
                    Str after = str_make(content.p + last_end + 8, content.n - (size_t)last_end - 8);
                    /* content.split('</think>')[0].rstrip('\n').split('<think>')[-1].lstrip('\n') */
                    Str before = rstrip_nl(str_make(content.p, (size_t)first_end));
                    int64_t open = str_find(before, "<think>", 1);
                    if (open >= 0) before = str_make(before.p + open + 7, before.n - (size_t)open - 7);
                    reasoning = lstrip_nl(before);
                    content = lstrip_nl(after);
                }
            }
            puts_(o, "<|im_start|>assistant\n");
            if (i > last_query && (i == n - 1 || reasoning.n > 0)) {
                puts_(o, "<think>\n");
                put_str(o, rstrip_nl(lstrip_nl(reasoning)));
                puts_(o, "\n</think>\n\n");
                put_str(o, lstrip_nl(content));
            } else {
                put_str(o, content);
            }
            for (int k = 0; k < m->n_tool_calls; k++) {
                const ChatToolCall *tc = &m->tool_calls[k];
                if (k > 0 || content.n > 0) puts_(o, "\n");
                put_tool_call(o, tc);
            }
            puts_(o, "<|im_end|>\n");
        } else if (m->role == CHAT_ROLE_TOOL) {
            put_tool_response(o, msgs, n, i);
        }
        /* a system message at index 0 was printed above */
    }
    if (opt->add_generation_prompt) {
        puts_(o, "<|im_start|>assistant\n");
        if (!opt->enable_thinking) puts_(o, "<think>\n\n</think>\n\n");
    }
}

/* ---- ChatML: role and content of every message, nothing else ----------
 * Qwen2's and SmolLM2's short templates add a default system turn when the
 * conversation does not start with one. Reasoning and tool calls are not
 * printed (the templates only print message['content']). */

#define QWEN2_SYSTEM "You are a helpful assistant"
#define SMOLLM2_SYSTEM "You are a helpful AI assistant named SmolLM, trained by Hugging Face"

static void render_chatml_common(const ChatMessage *msgs, int n, const ChatOptions *opt, Out *o,
                                 const char *default_system)
{
    for (int i = 0; i < n; i++) {
        if (i == 0 && default_system && !opt->continuation && msgs[0].role != CHAT_ROLE_SYSTEM) {
            puts_(o, "<|im_start|>system\n");
            puts_(o, default_system);
            puts_(o, "<|im_end|>\n");
        }
        puts_(o, "<|im_start|>");
        puts_(o, chat_role_name(msgs[i].role));
        puts_(o, "\n");
        put_str(o, content_of(&msgs[i]));
        puts_(o, "<|im_end|>\n");
    }
    if (opt->add_generation_prompt) puts_(o, "<|im_start|>assistant\n");
}

static void render_chatml(const ChatMessage *msgs, int n, const ChatOptions *opt, Out *o)
{
    render_chatml_common(msgs, n, opt, o, NULL);
}

static void render_qwen2(const ChatMessage *msgs, int n, const ChatOptions *opt, Out *o)
{
    render_chatml_common(msgs, n, opt, o, QWEN2_SYSTEM);
}

static void render_smollm2(const ChatMessage *msgs, int n, const ChatOptions *opt, Out *o)
{
    render_chatml_common(msgs, n, opt, o, SMOLLM2_SYSTEM);
}

/* ---- Qwen2.5 -------------------------------------------------------------
 * Follows Qwen2.5-Instruct's chat_template: a system turn always (the
 * default one when the conversation has none), the tools block when tools
 * are given, tool calls after the content, consecutive tool results in one
 * user turn. Tool-call arguments are printed as the reader holds them
 * (tojson of an object; a string argument would be quoted by the template). */

#define QWEN25_SYSTEM "You are Qwen, created by Alibaba Cloud. You are a helpful assistant."

static void render_qwen25(const ChatMessage *msgs, int n, const ChatOptions *opt, Out *o)
{
    int first_is_system = n > 0 && msgs[0].role == CHAT_ROLE_SYSTEM;
    if (opt->n_tools > 0) {
        puts_(o, "<|im_start|>system\n");
        if (first_is_system) put_str(o, content_of(&msgs[0]));
        else puts_(o, QWEN25_SYSTEM);
        puts_(o, "\n\n");
        qwen_tools_block(opt, o);
    } else if (first_is_system) {
        puts_(o, "<|im_start|>system\n");
        put_str(o, content_of(&msgs[0]));
        puts_(o, "<|im_end|>\n");
    } else if (!opt->continuation) {
        puts_(o, "<|im_start|>system\n" QWEN25_SYSTEM "<|im_end|>\n");
    }
    for (int i = 0; i < n; i++) {
        const ChatMessage *m = &msgs[i];
        if (m->role == CHAT_ROLE_USER || (m->role == CHAT_ROLE_SYSTEM && i > 0) ||
            (m->role == CHAT_ROLE_ASSISTANT && m->n_tool_calls == 0)) {
            puts_(o, "<|im_start|>");
            puts_(o, chat_role_name(m->role));
            puts_(o, "\n");
            put_str(o, content_of(m));
            puts_(o, "<|im_end|>\n");
        } else if (m->role == CHAT_ROLE_ASSISTANT) {
            puts_(o, "<|im_start|>assistant");
            if (m->content_len > 0) {
                puts_(o, "\n");
                put_str(o, content_of(m));
            }
            for (int k = 0; k < m->n_tool_calls; k++) {
                puts_(o, "\n");
                put_tool_call(o, &m->tool_calls[k]);
            }
            puts_(o, "<|im_end|>\n");
        } else if (m->role == CHAT_ROLE_TOOL) {
            put_tool_response(o, msgs, n, i);
        }
        /* a system message at index 0 was printed above */
    }
    if (opt->add_generation_prompt) puts_(o, "<|im_start|>assistant\n");
}

/* ---- Llama 3 ---------------------------------------------------------------
 * Llama 3: every message as a header turn with its content trimmed (Jinja's
 * trim is Python's str.strip()), BOS text before the first one.
 * Llama 3.1/3.2/3.3: the BOS text, then always a system turn with the
 * knowledge date and the (trimmed) system message, then the other
 * messages as in Llama 3; a tool result is an "ipython" turn with its
 * content as a JSON string (the template's tojson), an assistant tool call
 * is {"name": ..., "parameters": ...} (the first call: the template accepts
 * one). With tools, the system turn says "Environment: ipython" and the
 * tools go into the first message after the system one (the template's
 * default tools_in_user_message), each as tojson(indent=4) writes it. */

#define LLAMA3_BOS "<|begin_of_text|>"

/* Python's str.isspace() for one code point. */
static int py_space(uint32_t c)
{
    return (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x20) || c == 0x85 || c == 0xA0 || c == 0x1680 ||
           (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000;
}

/* Length and code point of the UTF-8 character at s[0..n), 0 if malformed. */
static int utf8_at(const char *s, size_t n, uint32_t *cp)
{
    unsigned c;
    int l = json_utf8_decode((const unsigned char *)s, n, &c);
    *cp = c;
    return l;
}

/* Python's str.strip(): whitespace off both ends. */
static Str py_strip(Str s)
{
    uint32_t cp;
    for (;;) {
        int l = s.n ? utf8_at(s.p, s.n, &cp) : 0;
        if (l <= 0 || !py_space(cp)) break;
        s.p += l, s.n -= (size_t)l;
    }
    while (s.n > 0) {
        size_t k = s.n - 1; /* the start of the last character */
        while (k > 0 && ((unsigned char)s.p[k] & 0xC0) == 0x80 && s.n - k < 4) k--;
        int l = utf8_at(s.p + k, s.n - k, &cp);
        if (l <= 0 || (size_t)l != s.n - k || !py_space(cp)) break;
        s.n = k;
    }
    return s;
}

static void llama3_header(Out *o, const char *role)
{
    puts_(o, "<|start_header_id|>");
    puts_(o, role);
    puts_(o, "<|end_header_id|>\n\n");
}

static void render_llama3(const ChatMessage *msgs, int n, const ChatOptions *opt, Out *o)
{
    for (int i = 0; i < n; i++) {
        if (i == 0 && !opt->continuation) puts_(o, LLAMA3_BOS);
        llama3_header(o, chat_role_name(msgs[i].role));
        put_str(o, py_strip(content_of(&msgs[i])));
        puts_(o, "<|eot_id|>");
    }
    if (opt->add_generation_prompt) llama3_header(o, "assistant");
}

/* A JSON text (compact, as tojson writes it: ", " and ": ") as
 * json.dumps(indent=4) writes it: each member and element on its own line,
 * empty containers as {} and []. */
static void put_json_indented(Out *o, const char *s, size_t n)
{
    int depth = 0, in_string = 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (in_string) {
            put(o, &c, 1);
            if (c == '\\' && i + 1 < n) put(o, &s[++i], 1);
            else if (c == '"') in_string = 0;
            continue;
        }
        if (c == ' ' || c == '\n' || c == '\t' || c == '\r') continue;
        size_t next = i + 1;
        while (next < n && strchr(" \n\t\r", s[next])) next++;
        if (c == '{' || c == '[') {
            put(o, &c, 1);
            if (next < n && (s[next] == '}' || s[next] == ']')) {
                put(o, &s[next], 1);
                i = next;
                continue;
            }
            depth++;
        } else if (c == '}' || c == ']') {
            depth--;
        } else if (c == ':') {
            puts_(o, ": ");
            continue;
        } else if (c != ',') {
            if (c == '"') in_string = 1;
            put(o, &c, 1);
            continue;
        }
        if (c == '}' || c == ']') {
            puts_(o, "\n");
            for (int k = 0; k < depth; k++) puts_(o, "    ");
            put(o, &c, 1);
        } else {
            if (c == ',') puts_(o, ",");
            puts_(o, "\n");
            for (int k = 0; k < depth; k++) puts_(o, "    ");
        }
    }
}

/* A string as tojson writes it (json.dumps, ensure_ascii off). */
static void put_json_string(Out *o, Str s)
{
    char esc[8];
    puts_(o, "\"");
    for (size_t i = 0; i < s.n; i++) {
        size_t k = json_escape(s.p + i, 1, esc, sizeof esc);
        put(o, esc + 1, k - 2);
    }
    puts_(o, "\"");
}

static void render_llama31(const ChatMessage *msgs, int n, const ChatOptions *opt, Out *o)
{
    int start = 0;
    int tools = opt->n_tools > 0 && !opt->continuation;
    if (!opt->continuation) {
        puts_(o, LLAMA3_BOS);
        llama3_header(o, "system");
        if (tools) puts_(o, "Environment: ipython\n");
        puts_(o, "Cutting Knowledge Date: December 2023\nToday Date: 26 Jul 2024\n\n");
        if (n > 0 && msgs[0].role == CHAT_ROLE_SYSTEM) {
            put_str(o, py_strip(content_of(&msgs[0])));
            start = 1;
        }
        puts_(o, "<|eot_id|>");
    }
    if (tools) {
        /* the template refuses tools without a message to put them in: pith
         * writes them with an empty one */
        llama3_header(o, "user");
        puts_(o, "Given the following functions, please respond with a JSON for a function call with its proper "
                 "arguments that best answers the given prompt.\n\nRespond in the format {\"name\": function name, "
                 "\"parameters\": dictionary of argument name and its value}.Do not use variables.\n\n");
        for (int t = 0; t < opt->n_tools; t++) {
            put_json_indented(o, opt->tools[t], opt->tools_len[t]);
            puts_(o, "\n\n");
        }
        if (start < n) put_str(o, py_strip(content_of(&msgs[start++])));
        puts_(o, "<|eot_id|>");
    }
    for (int i = start; i < n; i++) {
        const ChatMessage *m = &msgs[i];
        if (m->role == CHAT_ROLE_TOOL) {
            llama3_header(o, "ipython");
            put_json_string(o, content_of(m));
        } else if (m->n_tool_calls > 0) {
            llama3_header(o, "assistant");
            puts_(o, "{\"name\": \"");
            put(o, m->tool_calls[0].name, m->tool_calls[0].name_len);
            puts_(o, "\", \"parameters\": ");
            put(o, m->tool_calls[0].arguments, m->tool_calls[0].arguments_len);
            puts_(o, "}");
        } else {
            llama3_header(o, chat_role_name(m->role));
            put_str(o, py_strip(content_of(m)));
        }
        puts_(o, "<|eot_id|>");
    }
    if (opt->add_generation_prompt) llama3_header(o, "assistant");
}

/* ---- Zephyr (TinyLlama chat) ----------------------------------------------
 * "<|role|>\n" + content + eos_token + "\n" for system, user and assistant
 * (tool messages print nothing); "<|assistant|>\n" after the last message
 * when asked - inside the template's loop, so never without messages. */

static void render_zephyr(const ChatMessage *msgs, int n, const ChatOptions *opt, Out *o)
{
    for (int i = 0; i < n; i++) {
        ChatRole r = msgs[i].role;
        if (r != CHAT_ROLE_TOOL) {
            puts_(o, r == CHAT_ROLE_USER ? "<|user|>\n" : r == CHAT_ROLE_SYSTEM ? "<|system|>\n" : "<|assistant|>\n");
            put_str(o, content_of(&msgs[i]));
            puts_(o, "</s>\n");
        }
        if (i == n - 1 && opt->add_generation_prompt) puts_(o, "<|assistant|>\n");
    }
}

/* ---- SmolLM3 ------------------------------------------------------------
 * Follows SmolLM3-3B's chat_template: a system turn always ("## Metadata"
 * with the reasoning mode, then the custom instructions: the system message
 * without "/think" and "/no_think", or a default text), /think or /no_think
 * from enable_thinking unless the system message says one; in /no_think an
 * empty <think></think> opens every assistant turn; tool results are user
 * turns. Tools are the template's xml_tools (its model card passes them so):
 * a "### Tools" part of the system turn, each tool as Python's str() writes
 * it; the template prints an assistant message's content only, never its
 * tool_calls. The official template also prints "Today Date: " from the clock
 * (strftime_now): pith leaves that line out, as the variant llama.cpp ships
 * does (prompts stay reproducible; the core has no clock); and it closes
 * the system turn with <|im_end|> when there are no tools, as that variant
 * does (the official template closes it only in its tools part). */

#define SMOLLM3_THINK_SYSTEM \
    "You are a helpful AI assistant named SmolLM, trained by Hugging Face. Your role as an assistant involves " \
    "thoroughly exploring questions through a systematic thinking process before providing the final precise and " \
    "accurate solutions. This requires engaging in a comprehensive cycle of analysis, summarizing, exploration, " \
    "reassessment, reflection, backtracking, and iteration to develop well-considered thinking process. Please " \
    "structure your response into two main sections: Thought and Solution using the specified format: <think> " \
    "Thought section </think> Solution section. In the Thought section, detail your reasoning process in steps. " \
    "Each step should include detailed considerations such as analysing questions, summarizing relevant findings, " \
    "brainstorming new ideas, verifying the accuracy of the current steps, refining any errors, and revisiting " \
    "previous steps. In the Solution section, based on various attempts, explorations, and reflections from the " \
    "Thought section, systematically present the final solution that you deem correct. The Solution section should " \
    "be logical, accurate, and concise and detail necessary steps needed to reach the conclusion."

/* The system message as the template makes it custom instructions:
 * .replace("/no_think", "") then .replace("/think", "") then .rstrip(),
 * written without a buffer. The first replace's result is walked with raw
 * indices (skip_no_think), the second looks for "/think" in that result,
 * which may span a removed "/no_think". */
static size_t skip_no_think(Str s, size_t i)
{
    while (i + 9 <= s.n && memcmp(s.p + i, "/no_think", 9) == 0) i += 9;
    return i;
}

/* "/think" in the first result from raw index i: the raw index after it, or 0 */
static size_t think_at(Str s, size_t i)
{
    for (int k = 0; k < 6; k++) {
        i = skip_no_think(s, i);
        if (i >= s.n || s.p[i] != "/think"[k]) return 0;
        i++;
    }
    return i;
}

static void smollm3_instructions(Out *o, Str s)
{
    size_t keep_end = 0; /* raw index after the last character that is not Python whitespace */
    for (int pass = 0; pass < 2; pass++) {
        size_t i = skip_no_think(s, 0);
        while (i < s.n) {
            size_t after = think_at(s, i);
            if (after) {
                i = skip_no_think(s, after);
                continue;
            }
            uint32_t cp = 0;
            int l = utf8_at(s.p + i, s.n - i, &cp); /* the markers are ASCII: never inside a character */
            if (l <= 0) l = 1;
            if (pass == 0 && !py_space(cp)) keep_end = i + (size_t)l;
            if (pass == 1 && i < keep_end) put(o, s.p + i, (size_t)l);
            i = skip_no_think(s, i + (size_t)l);
        }
    }
}

/* Whether Python's repr() escapes a non-ASCII code point (str.isprintable()
 * false): the controls, spaces and format characters of Latin-1 and the
 * General Punctuation block, a few other format characters, surrogates,
 * private use and noncharacters. (Python also escapes unassigned code
 * points, which pith writes as they are.) */
static int py_unprintable(uint32_t c)
{
    static const uint32_t ranges[][2] = {
        {0x80, 0xA0},     {0xAD, 0xAD},     {0x600, 0x605},   {0x61C, 0x61C},   {0x6DD, 0x6DD},
        {0x70F, 0x70F},   {0x1680, 0x1680}, {0x180E, 0x180E}, {0x2000, 0x200F}, {0x2028, 0x202F},
        {0x205F, 0x206F}, {0x3000, 0x3000}, {0xD800, 0xF8FF}, {0xFEFF, 0xFEFF}, {0xFFF9, 0xFFFB},
        {0xFFFE, 0xFFFF}, {0xE0001, 0xE0001}, {0xE0020, 0xE007F}, {0xF0000, 0x10FFFF},
    };
    for (size_t i = 0; i < sizeof ranges / sizeof ranges[0]; i++)
        if (c >= ranges[i][0] && c <= ranges[i][1]) return 1;
    return 0;
}

/* One code point of a JSON string's text at s[*i] (before end), escapes
 * decoded; advances *i. */
static uint32_t json_cp(const char *s, size_t *i, size_t end)
{
    if (s[*i] != '\\') {
        uint32_t cp;
        int l = utf8_at(s + *i, end - *i, &cp);
        if (l <= 0) l = 1, cp = (unsigned char)s[*i];
        *i += (size_t)l;
        return cp;
    }
    char e = s[*i + 1];
    *i += 2;
    switch (e) {
    case 'b': return '\b';
    case 'f': return '\f';
    case 'n': return '\n';
    case 'r': return '\r';
    case 't': return '\t';
    case 'u': {
        uint32_t v = 0;
        for (int k = 0; k < 4 && *i < end; k++, (*i)++) {
            char h = s[*i];
            v = v * 16 + (uint32_t)(h <= '9' ? h - '0' : (h | 0x20) - 'a' + 10);
        }
        if (v >= 0xD800 && v < 0xDC00 && *i + 6 <= end && s[*i] == '\\' && s[*i + 1] == 'u') {
            size_t j = *i;
            uint32_t lo = json_cp(s, &j, end);
            if (lo >= 0xDC00 && lo < 0xE000) {
                *i = j;
                return 0x10000 + ((v - 0xD800) << 10) + (lo - 0xDC00);
            }
        }
        return v;
    }
    default: return (uint32_t)(unsigned char)e; /* \" \\ \/ */
    }
}

/* A JSON value's text (as tojson writes it) as Python's str() writes the
 * value: strings in repr()'s quotes and escapes, True, False, None;
 * numbers as written. */
static void put_python(Out *o, const char *s, size_t n)
{
    for (size_t i = 0; i < n;) {
        char c = s[i];
        if (c == 't' || c == 'f' || c == 'n') {
            const char *word = c == 't' ? "True" : c == 'f' ? "False" : "None";
            puts_(o, word);
            i += c == 'f' ? 5 : 4;
            continue;
        }
        if (c != '"') {
            put(o, &c, 1);
            i++;
            continue;
        }
        size_t end = ++i;
        while (end < n && s[end] != '"') end += s[end] == '\\' ? 2 : 1;
        int single = 0, dbl = 0;
        for (size_t k = i; k < end;) {
            uint32_t cp = json_cp(s, &k, end);
            single |= cp == '\'';
            dbl |= cp == '"';
        }
        char quote = single && !dbl ? '"' : '\'';
        put(o, &quote, 1);
        while (i < end) {
            size_t at = i;
            uint32_t cp = json_cp(s, &i, end);
            char esc[16];
            if (cp == (uint32_t)quote || cp == '\\') {
                esc[0] = '\\', esc[1] = (char)cp, esc[2] = '\0';
            } else if (cp == '\t' || cp == '\n' || cp == '\r') {
                esc[0] = '\\', esc[1] = cp == '\t' ? 't' : cp == '\n' ? 'n' : 'r', esc[2] = '\0';
            } else if (cp < 0x20 || cp == 0x7F || (cp > 0x7F && py_unprintable(cp))) {
                snprintf(esc, sizeof esc, cp <= 0xFF ? "\\x%02x" : cp <= 0xFFFF ? "\\u%04x" : "\\U%08x", (unsigned)cp);
            } else if (s[at] != '\\') {
                put(o, s + at, i - at); /* the character's own UTF-8 */
                continue;
            } else {
                unsigned char u[4];
                int l = cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
                if (l == 1) u[0] = (unsigned char)cp;
                else {
                    for (int k = l - 1; k > 0; k--, cp >>= 6) u[k] = (unsigned char)(0x80 | (cp & 0x3F));
                    u[0] = (unsigned char)((0xF0 << (4 - l)) | cp);
                }
                put(o, (const char *)u, (size_t)l);
                continue;
            }
            puts_(o, esc);
        }
        put(o, &quote, 1);
        i = end + 1;
    }
}

static void render_smollm3(const ChatMessage *msgs, int n, const ChatOptions *opt, Out *o)
{
    int think = opt->enable_thinking;
    int has_system = n > 0 && msgs[0].role == CHAT_ROLE_SYSTEM;
    Str sys = has_system ? content_of(&msgs[0]) : str_make(NULL, 0);
    if (has_system && str_find(sys, "/no_think", 0) >= 0) think = 0;
    else if (has_system && str_find(sys, "/think", 0) >= 0) think = 1;
    if (!opt->continuation) {
        puts_(o, "<|im_start|>system\n## Metadata\n\nKnowledge Cutoff Date: June 2025\nReasoning Mode: ");
        puts_(o, think ? "/think" : "/no_think");
        puts_(o, "\n\n## Custom Instructions\n\n");
        uint64_t before = o->len;
        if (has_system) smollm3_instructions(o, sys);
        if (o->len == before) puts_(o, think ? SMOLLM3_THINK_SYSTEM : "You are a helpful AI assistant named SmolLM, trained by Hugging Face.");
        puts_(o, "\n\n");
        if (opt->n_tools > 0) {
            /* the template's xml_tools, each as str() writes it */
            puts_(o, "### Tools\n\nYou may call one or more functions to assist with the user query.\nYou are provided "
                     "with function signatures within <tools></tools> XML tags:\n\n<tools>\n");
            for (int t = 0; t < opt->n_tools; t++) {
                put_python(o, opt->tools[t], opt->tools_len[t]);
                puts_(o, "\n");
            }
            puts_(o, "</tools>\n\nFor each function call, return a json object with function name and arguments within "
                     "<tool_call></tool_call> XML tags:\n<tool_call>\n{\"name\": <function-name>, \"arguments\": "
                     "<args-json-object>}\n</tool_call>\n\n");
        }
        puts_(o, "<|im_end|>\n");
    }
    for (int i = 0; i < n; i++) {
        const ChatMessage *m = &msgs[i];
        if (m->role == CHAT_ROLE_USER || m->role == CHAT_ROLE_TOOL) {
            puts_(o, "<|im_start|>user\n");
            put_str(o, content_of(m));
            puts_(o, "<|im_end|>\n");
        } else if (m->role == CHAT_ROLE_ASSISTANT) {
            puts_(o, think ? "<|im_start|>assistant\n" : "<|im_start|>assistant\n<think>\n\n</think>\n");
            put_str(o, lstrip_nl(content_of(m)));
            puts_(o, "<|im_end|>\n");
        }
    }
    if (opt->add_generation_prompt)
        puts_(o, think ? "<|im_start|>assistant\n" : "<|im_start|>assistant\n<think>\n\n</think>\n");
}

/* ---- Qwen3.5 ------------------------------------------------------------
 * Follows Qwen3.5's chat_template (the same text in every size but for the
 * default of enable_thinking): ChatML with every content stripped (Jinja's
 * trim), tools listed before the system text, tool calls written as
 * <function=NAME> with one <parameter=KEY> block per argument, reasoning
 * kept (even empty) for every assistant turn after the last user query,
 * and "<think>\n" opening the generation prompt when thinking. The
 * template refuses a system message after the first and a conversation
 * without a user query: chat_render returns -1 for them, and for arguments
 * that are not a JSON object (the template iterates them as a mapping). */

#define QWEN35_TOOLS_HEAD "# Tools\n\nYou have access to the following functions:\n\n<tools>"
#define QWEN35_TOOLS_TAIL                                                                                              \
    "\n</tools>\n\nIf you choose to call a function ONLY reply in the following format with NO suffix:\n\n"           \
    "<tool_call>\n<function=example_function_name>\n<parameter=example_parameter_1>\nvalue_1\n</parameter>\n"        \
    "<parameter=example_parameter_2>\nThis is the value for the second parameter\nthat can span\nmultiple lines\n"    \
    "</parameter>\n</function>\n</tool_call>\n\n<IMPORTANT>\nReminder:\n- Function calls MUST follow the specified "  \
    "format: an inner <function=...></function> block must be nested within <tool_call></tool_call> XML tags\n- "     \
    "Required parameters MUST be specified\n- You may provide optional reasoning for your function call in natural " \
    "language BEFORE the function call, but NOT after\n- If there is no function call available, answer the "        \
    "question like normal with your current knowledge and do not tell the user about function calls\n</IMPORTANT>"

/* The next JSON value of j, decoded (a string, or a key with its ':';
 * kind 0 and 1) or as tojson writes it (kind 2), into o. */
static int put_json(Out *o, Json *j, int kind)
{
    Json probe = *j;
    size_t n = 0;
    int r = kind == 0   ? json_string(&probe, NULL, (size_t)-1, &n)
            : kind == 1 ? json_key(&probe, NULL, (size_t)-1, &n)
                        : json_dump(&probe, NULL, (size_t)-1, &n);
    if (r < 0) return -1;
    if (o->len < o->cap && n <= o->cap - (size_t)o->len) {
        char *at = o->buf + o->len;
        r = kind == 0 ? json_string(j, at, n, &n) : kind == 1 ? json_key(j, at, n, &n) : json_dump(j, at, n, &n);
        if (r < 0) return -1;
    } else {
        *j = probe;
    }
    o->len += n;
    return 0;
}

/* The arguments' members as <parameter=KEY> blocks: strings as they are,
 * objects and arrays as tojson writes them, numbers as written, true,
 * false and null as Python's str() prints them. */
static int qwen35_parameters(Out *o, const ChatToolCall *tc)
{
    Json j;
    json_init(&j, tc->arguments, tc->arguments_len, "arguments");
    if (json_peek(&j) != JSON_OBJECT || json_enter(&j, '{') < 0) return -1;
    int r;
    while ((r = json_next(&j, '}')) > 0) {
        puts_(o, "<parameter=");
        if (put_json(o, &j, 1) < 0) return -1;
        puts_(o, ">\n");
        JsonType t = json_peek(&j);
        if (t == JSON_STRING) {
            if (put_json(o, &j, 0) < 0) return -1;
        } else if (t == JSON_OBJECT || t == JSON_ARRAY) {
            if (put_json(o, &j, 2) < 0) return -1;
        } else if (t == JSON_NUMBER) {
            const char *num;
            size_t len;
            double v;
            if (json_number(&j, &num, &len, &v) < 0) return -1;
            put(o, num, len);
        } else {
            if (json_literal(&j, &t) < 0) return -1;
            puts_(o, t == JSON_TRUE ? "True" : t == JSON_FALSE ? "False" : "None");
        }
        puts_(o, "\n</parameter>\n");
    }
    return r < 0 || json_end(&j) < 0 ? -1 : 0;
}

static void render_qwen35(const ChatMessage *msgs, int n, const ChatOptions *opt, Out *o)
{
    if (n == 0) {
        o->bad = 1; /* "No messages provided." */
        return;
    }
    Str sys = msgs[0].role == CHAT_ROLE_SYSTEM ? py_strip(content_of(&msgs[0])) : str_make(NULL, 0);
    if (opt->n_tools > 0) {
        puts_(o, "<|im_start|>system\n" QWEN35_TOOLS_HEAD);
        for (int t = 0; t < opt->n_tools; t++) {
            puts_(o, "\n");
            put(o, opt->tools[t], opt->tools_len[t]);
        }
        puts_(o, QWEN35_TOOLS_TAIL);
        if (sys.n) {
            puts_(o, "\n\n");
            put_str(o, sys);
        }
        puts_(o, "<|im_end|>\n");
    } else if (msgs[0].role == CHAT_ROLE_SYSTEM) {
        puts_(o, "<|im_start|>system\n");
        put_str(o, sys);
        puts_(o, "<|im_end|>\n");
    }

    int last_query = -1;
    for (int i = n - 1; i >= 0 && last_query < 0; i--) {
        Str c = py_strip(content_of(&msgs[i]));
        if (msgs[i].role == CHAT_ROLE_USER && !(str_starts(c, "<tool_response>") && str_ends(c, "</tool_response>")))
            last_query = i;
    }
    if (last_query < 0) {
        o->bad = 1; /* "No user query found in messages." */
        return;
    }
    for (int i = 0; i < n; i++) {
        const ChatMessage *m = &msgs[i];
        Str content = py_strip(content_of(m));
        if (m->role == CHAT_ROLE_SYSTEM) {
            if (i > 0) o->bad = 1; /* "System message must be at the beginning." */
        } else if (m->role == CHAT_ROLE_USER) {
            puts_(o, "<|im_start|>user\n");
            put_str(o, content);
            puts_(o, "<|im_end|>\n");
        } else if (m->role == CHAT_ROLE_ASSISTANT) {
            Str reasoning = str_make(NULL, 0);
            if (m->has_reasoning) {
                reasoning = str_make(m->reasoning, m->reasoning_len);
            } else {
                int64_t first_end = str_find(content, "</think>", 0);
                if (first_end >= 0) {
                    int64_t last_end = str_find(content, "</think>", 1);
                    Str before = rstrip_nl(str_make(content.p, (size_t)first_end));
                    int64_t open = str_find(before, "<think>", 1);
                    if (open >= 0) before = str_make(before.p + open + 7, before.n - (size_t)open - 7);
                    reasoning = lstrip_nl(before);
                    content = lstrip_nl(str_make(content.p + last_end + 8, content.n - (size_t)last_end - 8));
                }
            }
            puts_(o, "<|im_start|>assistant\n");
            if (i > last_query) {
                puts_(o, "<think>\n");
                put_str(o, py_strip(reasoning));
                puts_(o, "\n</think>\n\n");
            }
            put_str(o, content);
            for (int k = 0; k < m->n_tool_calls; k++) {
                const ChatToolCall *tc = &m->tool_calls[k];
                if (k > 0) puts_(o, "\n");
                else if (py_strip(content).n > 0) puts_(o, "\n\n");
                puts_(o, "<tool_call>\n<function=");
                put(o, tc->name, tc->name_len);
                puts_(o, ">\n");
                if (qwen35_parameters(o, tc) < 0) o->bad = 1;
                puts_(o, "</function>\n</tool_call>");
            }
            puts_(o, "<|im_end|>\n");
        } else if (m->role == CHAT_ROLE_TOOL) {
            if (i > 0 && msgs[i - 1].role != CHAT_ROLE_TOOL) puts_(o, "<|im_start|>user");
            puts_(o, "\n<tool_response>\n");
            put_str(o, content);
            puts_(o, "\n</tool_response>");
            if (i == n - 1 || msgs[i + 1].role != CHAT_ROLE_TOOL) puts_(o, "<|im_end|>\n");
        }
    }
    if (opt->add_generation_prompt)
        puts_(o, opt->enable_thinking ? "<|im_start|>assistant\n<think>\n" : "<|im_start|>assistant\n<think>\n\n</think>\n\n");
}

/* ---- Phi-3 / Phi-3.5 and Phi-4-mini ------------------------------------------
 * Phi-3.5-mini: "<|role|>\n" + content + "<|end|>\n" for system (when not
 * empty), user and assistant; "<|assistant|>\n" to generate, else the
 * eos_token "<|endoftext|>". Phi-4-mini: "<|role|>" + content + "<|end|>"
 * for every message, no newlines; "<|assistant|>" or "<|endoftext|>". */

static void render_phi(const ChatMessage *msgs, int n, const ChatOptions *opt, Out *o, int phi4)
{
    for (int i = 0; i < n; i++) {
        const ChatMessage *m = &msgs[i];
        if (!phi4 && (m->role == CHAT_ROLE_TOOL || (m->role == CHAT_ROLE_SYSTEM && m->content_len == 0))) continue;
        puts_(o, "<|");
        puts_(o, chat_role_name(m->role));
        puts_(o, phi4 ? "|>" : "|>\n");
        put_str(o, content_of(m));
        puts_(o, phi4 ? "<|end|>" : "<|end|>\n");
    }
    if (opt->add_generation_prompt) puts_(o, phi4 ? "<|assistant|>" : "<|assistant|>\n");
    else puts_(o, "<|endoftext|>");
}

static void render_phi3(const ChatMessage *msgs, int n, const ChatOptions *opt, Out *o)
{
    render_phi(msgs, n, opt, o, 0);
}

static void render_phi4(const ChatMessage *msgs, int n, const ChatOptions *opt, Out *o)
{
    render_phi(msgs, n, opt, o, 1);
}

/* ---- Gemma (2 and 3) ----------------------------------------------------
 * Follows Gemma 3's chat_template: "<bos>", then each message as
 * "<start_of_turn>" + role ("model" for the assistant) + "\n" + content
 * trimmed + "<end_of_turn>\n"; a system message is not a turn: its content
 * and "\n\n" open the first turn after it. "<start_of_turn>model\n" to
 * generate. (The template refuses roles that do not alternate; pith renders
 * them as given.) */

static void render_gemma(const ChatMessage *msgs, int n, const ChatOptions *opt, Out *o)
{
    int start = 0;
    if (!opt->continuation) puts_(o, "<bos>");
    if (n > 0 && msgs[0].role == CHAT_ROLE_SYSTEM) start = 1;
    for (int i = start; i < n; i++) {
        const ChatMessage *m = &msgs[i];
        puts_(o, "<start_of_turn>");
        puts_(o, m->role == CHAT_ROLE_ASSISTANT ? "model" : chat_role_name(m->role));
        puts_(o, "\n");
        if (i == start && start == 1) {
            put_str(o, content_of(&msgs[0]));
            puts_(o, "\n\n");
        }
        put_str(o, py_strip(content_of(m)));
        puts_(o, "<end_of_turn>\n");
    }
    if (opt->add_generation_prompt) puts_(o, "<start_of_turn>model\n");
}

/* ---- LFM2 ----------------------------------------------------------------
 * Follows LFM2's chat_template (its model card's format): "<|startoftext|>",
 * then ChatML turns; a first system message and the tools (as "List of
 * tools: <|tool_list_start|>[t1, t2]<|tool_list_end|>", after the system
 * text and a newline) make the system turn, printed only when not empty; a
 * tool result is wrapped in <|tool_response_start|>...<|tool_response_end|>;
 * "<|im_start|>assistant\n" to generate. The template prints an assistant
 * message's content only (its model writes its calls there): pith writes
 * the message's tool_calls before the content as the model writes them. */

/* A JSON value's text with Python's True, False and None for its literals. */
static void put_json_as_python(Out *o, const char *s, size_t n)
{
    int in_string = 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (in_string) {
            put(o, &c, 1);
            if (c == '\\' && i + 1 < n) put(o, &s[++i], 1);
            else if (c == '"') in_string = 0;
        } else if (c == 't' || c == 'f' || c == 'n') {
            puts_(o, c == 't' ? "True" : c == 'f' ? "False" : "None");
            i += c == 'f' ? 4 : 3;
        } else {
            in_string = c == '"';
            put(o, &c, 1);
        }
    }
}

/* LFM2's calls as its model writes them, a Python list of calls:
 * <|tool_call_start|>[name(key="value", n=1, ok=True)]<|tool_call_end|>;
 * a call whose arguments are not a JSON object as {"name": ..., "arguments": ...}. */
static void put_lfm2_calls(Out *o, const ChatMessage *m)
{
    puts_(o, "<|tool_call_start|>[");
    for (int k = 0; k < m->n_tool_calls; k++) {
        const ChatToolCall *tc = &m->tool_calls[k];
        if (k) puts_(o, ", ");
        Json j;
        json_init(&j, tc->arguments, tc->arguments_len, "arguments");
        int ok = json_peek(&j) == JSON_OBJECT && json_enter(&j, '{') == 0;
        Json check = j;
        char key[256];
        size_t kl;
        while (ok && json_next(&check, '}') > 0)
            ok = json_key(&check, key, sizeof key, &kl) == 0 && json_skip(&check) == 0;
        ok = ok && !check.failed && json_end(&check) == 0;
        if (!ok) {
            puts_(o, "{\"name\": \"");
            put(o, tc->name, tc->name_len);
            puts_(o, "\", \"arguments\": ");
            put(o, tc->arguments, tc->arguments_len);
            puts_(o, "}");
            continue;
        }
        put(o, tc->name, tc->name_len);
        puts_(o, "(");
        for (int first = 1; json_next(&j, '}') > 0; first = 0) {
            json_key(&j, key, sizeof key, &kl);
            if (!first) puts_(o, ", ");
            put(o, key, kl);
            puts_(o, "=");
            while (j.pos < j.len && strchr(" \t\r\n", j.src[j.pos])) j.pos++;
            size_t v = j.pos;
            json_skip(&j);
            put_json_as_python(o, j.src + v, j.pos - v);
        }
        puts_(o, ")");
    }
    puts_(o, "]<|tool_call_end|>");
}

static void render_lfm2(const ChatMessage *msgs, int n, const ChatOptions *opt, Out *o)
{
    int start = n > 0 && msgs[0].role == CHAT_ROLE_SYSTEM;
    Str sys = start ? content_of(&msgs[0]) : str_make("", 0);
    if (!opt->continuation) puts_(o, "<|startoftext|>");
    if (sys.n || opt->n_tools) {
        puts_(o, "<|im_start|>system\n");
        put_str(o, sys);
        if (opt->n_tools) {
            if (sys.n) puts_(o, "\n");
            puts_(o, "List of tools: <|tool_list_start|>[");
            for (int t = 0; t < opt->n_tools; t++) {
                if (t) puts_(o, ", ");
                put(o, opt->tools[t], opt->tools_len[t]);
            }
            puts_(o, "]<|tool_list_end|>");
        }
        puts_(o, "<|im_end|>\n");
    }
    for (int i = start; i < n; i++) {
        const ChatMessage *m = &msgs[i];
        puts_(o, "<|im_start|>");
        puts_(o, chat_role_name(m->role));
        puts_(o, "\n");
        if (m->role == CHAT_ROLE_TOOL) puts_(o, "<|tool_response_start|>");
        if (m->role == CHAT_ROLE_ASSISTANT && m->n_tool_calls > 0) put_lfm2_calls(o, m);
        put_str(o, content_of(m));
        if (m->role == CHAT_ROLE_TOOL) puts_(o, "<|tool_response_end|>");
        puts_(o, "<|im_end|>\n");
    }
    if (opt->add_generation_prompt) puts_(o, "<|im_start|>assistant\n");
}

/* ---- Raw: no template known, the contents one after the other --------- */

static void render_raw(const ChatMessage *msgs, int n, const ChatOptions *opt, Out *o)
{
    (void)opt;
    for (int i = 0; i < n; i++) put_str(o, content_of(&msgs[i]));
}

/* ---- The table of templates -------------------------------------------- */

typedef struct {
    ChatTemplate id;
    const char *name;
    const char *turn_end;   /* what closes an assistant turn */
    void (*render)(const ChatMessage *, int, const ChatOptions *, Out *);
} TemplateInfo;

/* The built-in templates (--template NAME; ChatML for a file without one):
 * a model's own template is run by the Jinja interpreter instead. */
static const TemplateInfo templates[] = {
    {CHAT_TEMPLATE_QWEN35, "qwen3.5", "<|im_end|>\n", render_qwen35},
    {CHAT_TEMPLATE_QWEN35_THINK, "qwen3.5-think", "<|im_end|>\n", render_qwen35},
    {CHAT_TEMPLATE_QWEN3, "qwen3", "<|im_end|>\n", render_qwen3},
    {CHAT_TEMPLATE_LFM2, "lfm2", "<|im_end|>\n", render_lfm2},
    {CHAT_TEMPLATE_CHATML, "chatml", "<|im_end|>\n", render_chatml},
    {CHAT_TEMPLATE_QWEN2, "qwen2", "<|im_end|>\n", render_qwen2},
    {CHAT_TEMPLATE_QWEN25, "qwen2.5", "<|im_end|>\n", render_qwen25},
    {CHAT_TEMPLATE_SMOLLM3, "smollm3", "<|im_end|>\n", render_smollm3},
    {CHAT_TEMPLATE_SMOLLM2, "smollm2", "<|im_end|>\n", render_smollm2},
    {CHAT_TEMPLATE_LLAMA31, "llama3.1", "<|eot_id|>", render_llama31},
    {CHAT_TEMPLATE_LLAMA3, "llama3", "<|eot_id|>", render_llama3},
    {CHAT_TEMPLATE_GEMMA, "gemma", "<end_of_turn>\n", render_gemma},
    {CHAT_TEMPLATE_PHI4, "phi4", "<|end|>", render_phi4},
    {CHAT_TEMPLATE_PHI3, "phi3", "<|end|>\n", render_phi3},
    {CHAT_TEMPLATE_ZEPHYR, "zephyr", "</s>\n", render_zephyr},
    {CHAT_TEMPLATE_RAW, "raw", "", render_raw},
};
#define N_TEMPLATES (sizeof templates / sizeof templates[0])

static const TemplateInfo *template_info(ChatTemplate t)
{
    for (size_t i = 0; i < N_TEMPLATES; i++)
        if (templates[i].id == t) return &templates[i];
    return NULL;
}

const char *chat_template_name(ChatTemplate t)
{
    const TemplateInfo *info = template_info(t);
    return info ? info->name : "?";
}

const char *chat_role_name(ChatRole r)
{
    static const char *names[] = {"system", "user", "assistant", "tool"};
    return (unsigned)r < CHAT_ROLE_COUNT ? names[r] : "?";
}

int chat_template_by_name(const char *name)
{
    if (!name) return -1;
    if (!strcmp(name, "llama3.2") || !strcmp(name, "llama3.3")) return CHAT_TEMPLATE_LLAMA31;
    for (size_t i = 0; i < N_TEMPLATES; i++)
        if (!strcmp(name, templates[i].name)) return (int)templates[i].id;
    return -1;
}

const char *chat_template_names(void)
{
    return "raw, qwen3, chatml, qwen2, qwen2.5, smollm2, smollm3, llama3, llama3.1 (= llama3.2, llama3.3), zephyr, "
           "phi3, phi4, gemma, lfm2, qwen3.5, qwen3.5-think";
}

int chat_template_thinks(ChatTemplate t)
{
    return t != CHAT_TEMPLATE_QWEN35;
}

int chat_template_opens_think(ChatTemplate t)
{
    return t == CHAT_TEMPLATE_QWEN35 || t == CHAT_TEMPLATE_QWEN35_THINK;
}

const char *chat_template_turn_end(ChatTemplate t)
{
    const TemplateInfo *info = template_info(t);
    return info ? info->turn_end : "";
}

int64_t chat_render(ChatTemplate t, const ChatMessage *msgs, int n, const ChatOptions *opt, char *buf, size_t cap)
{
    const TemplateInfo *info = template_info(t);
    if (!info || n < 0 || (n > 0 && !msgs) || (!buf && cap > 0)) return -1;
    for (int i = 0; i < n; i++) {
        if ((unsigned)msgs[i].role >= CHAT_ROLE_COUNT || msgs[i].n_tool_calls < 0) return -1;
        if (msgs[i].n_tool_calls > 0 && !msgs[i].tool_calls) return -1;
    }
    ChatOptions given = {1, -1, NULL, NULL, 0, 0};
    if (opt) given = *opt;
    if (given.n_tools < 0 || (given.n_tools > 0 && (!given.tools || !given.tools_len))) return -1;
    if (given.enable_thinking < 0) given.enable_thinking = chat_template_thinks(t);
    Out o = {buf, cap, 0, 0};
    info->render(msgs, n, &given, &o);
    if (o.len < cap) buf[o.len] = '\0';
    return o.bad ? -1 : (int64_t)o.len;
}

/* Longest fixed text a template adds per message (LFM2's tool turn: 72;
 * Qwen3's and Qwen2.5's: 61; a Llama 3 turn: 57), per tool call (Qwen2.5: 53; Llama
 * 3.1's call with its header: 85, less than a message and a call), per tool
 * (1) and once (SmolLM3's system turn with its thinking text 1273 +
 * generation prompt 41, with its tools part about 1690 in all; Qwen2.5's tools header with its default system text
 * 471 + 22; Qwen3.5's tools turn 917 + 41; Qwen3's 403 + 41; Llama 3.1's system turn 134 + 47). */
#define CHAT_PER_MESSAGE 80
#define CHAT_PER_TOOL_CALL 64
#define CHAT_PER_TOOL 8
#define CHAT_FIXED 2048
/* Qwen3.5 writes each member of a call's arguments as a parameter block
 * (27 bytes around its key and value); a member takes at least 5 bytes
 * of the arguments' text ("":0 and a separator) and of the JSON. */
#define CHAT_PER_PARAMETER 27

uint64_t chat_render_bound(uint64_t n_messages, uint64_t n_tool_calls, uint64_t n_tools, uint64_t text_bytes)
{
    /* every string is printed at most once (reasoning and content split
     * one string into disjoint parts); inputs are bounded by the caller */
    uint64_t parameters = n_tool_calls ? (text_bytes / 5 + n_tool_calls) * CHAT_PER_PARAMETER : 0;
    return text_bytes + n_messages * CHAT_PER_MESSAGE + n_tool_calls * CHAT_PER_TOOL_CALL + n_tools * CHAT_PER_TOOL +
           parameters + CHAT_FIXED;
}

/* ---- The JSON conversation reader --------------------------------------- */

typedef struct {
    Json j;
    ChatJsonOut *out;    /* NULL when measuring */
    ChatJsonSizes n;     /* counted so far */
} Reader;

/* Where the next decoded string goes in the text pool (NULL when measuring). */
static char *pool_at(Reader *r)
{
    return r->out ? r->out->text + r->n.text_bytes : NULL;
}

static uint64_t pool_room(Reader *r)
{
    return r->out ? r->out->cap.text_bytes - r->n.text_bytes : (uint64_t)-1;
}

/* A decoded string into the pool. */
static int read_string(Reader *r, const char **s, size_t *len)
{
    char *at = pool_at(r);
    size_t n;
    if (json_string(&r->j, at, (size_t)pool_room(r), &n) < 0) return -1;
    *s = at;
    *len = n;
    r->n.text_bytes += n;
    return 0;
}

/* Any value as tojson prints it, into the pool. */
static int read_dump(Reader *r, const char **s, size_t *len)
{
    char *at = pool_at(r);
    size_t n;
    if (json_dump(&r->j, at, (size_t)pool_room(r), &n) < 0) return -1;
    *s = at;
    *len = n;
    r->n.text_bytes += n;
    return 0;
}

/* Reads one key of an object and refuses repeats among the known keys
 * (bit k of *seen for names[k]). Returns the index in names, or -2 for an
 * unknown key (its value still unread), or -1 on error. */
static int read_key(Reader *r, const char *const *names, unsigned *seen)
{
    char key[64];
    size_t klen;
    size_t at = r->j.pos;
    /* Keys longer than the buffer cannot be known ones: measure, then skip. */
    Json probe = r->j;
    if (json_key(&probe, NULL, (size_t)-1, &klen) < 0) {
        r->j = probe;
        return -1;
    }
    if (klen >= sizeof key) {
        r->j = probe;
        return -2;
    }
    if (json_key(&r->j, key, sizeof key, &klen) < 0) return -1;
    for (int k = 0; names[k]; k++) {
        if (strlen(names[k]) == klen && memcmp(names[k], key, klen) == 0) {
            while (at < r->j.len && r->j.src[at] != '"') at++;
            if (*seen & (1u << k)) return json_fail(&r->j, at, "repeated key \"%s\"", names[k]);
            *seen |= 1u << k;
            return k;
        }
    }
    return -2;
}

static int read_tool_call(Reader *r)
{
    static const char *const keys[] = {"function", "name", "arguments", NULL};
    ChatToolCall tc = {"", 0, "{}", 2};
    unsigned seen = 0;
    int nested = 0, res;
    size_t start = r->j.pos;
    if (json_enter(&r->j, '{') < 0) return -1;
    while ((res = json_next(&r->j, '}')) > 0) {
        int k = read_key(r, keys, &seen);
        if (k == -1) return -1;
        if (k == 0) {
            /* {"function": {"name": ..., "arguments": ...}} */
            unsigned seen2 = 0;
            int res2;
            nested = 1;
            if (json_enter(&r->j, '{') < 0) return -1;
            while ((res2 = json_next(&r->j, '}')) > 0) {
                int k2 = read_key(r, keys, &seen2);
                if (k2 == -1) return -1;
                if (k2 == 1) {
                    if (read_string(r, &tc.name, &tc.name_len) < 0) return -1;
                } else if (k2 == 2) {
                    if (json_peek(&r->j) == JSON_STRING) {
                        if (read_string(r, &tc.arguments, &tc.arguments_len) < 0) return -1;
                    } else if (read_dump(r, &tc.arguments, &tc.arguments_len) < 0) {
                        return -1;
                    }
                } else if (json_skip(&r->j) < 0) {
                    return -1;
                }
            }
            if (res2 < 0) return -1;
            if (!(seen2 & 2)) return json_fail(&r->j, start, "tool call function without \"name\"");
        } else if (k == 1 || k == 2) {
            if (k == 1) {
                if (read_string(r, &tc.name, &tc.name_len) < 0) return -1;
            } else if (json_peek(&r->j) == JSON_STRING) {
                if (read_string(r, &tc.arguments, &tc.arguments_len) < 0) return -1;
            } else if (read_dump(r, &tc.arguments, &tc.arguments_len) < 0) {
                return -1;
            }
        } else if (json_skip(&r->j) < 0) {
            return -1;
        }
    }
    if (res < 0) return -1;
    if (nested && (seen & 6)) return json_fail(&r->j, start, "tool call with both \"function\" and name/arguments");
    if (!nested && !(seen & 2)) return json_fail(&r->j, start, "tool call without \"function\" or \"name\"");
    if (r->out) {
        if (r->n.n_tool_calls >= r->out->cap.n_tool_calls) return json_fail(&r->j, start, "more tool calls than measured");
        r->out->calls[r->n.n_tool_calls] = tc;
    }
    r->n.n_tool_calls++;
    return 0;
}

static int read_message(Reader *r)
{
    static const char *const keys[] = {"role", "content", "reasoning_content", "tool_calls", NULL};
    ChatMessage m;
    memset(&m, 0, sizeof m);
    m.role = CHAT_ROLE_COUNT;
    unsigned seen = 0;
    int res, content_null = 0;
    uint64_t first_call = r->n.n_tool_calls;
    size_t start = r->j.pos;
    if (json_peek(&r->j) != JSON_OBJECT && !r->j.failed)
        return json_fail(&r->j, r->j.pos, "a message must be an object");
    if (json_enter(&r->j, '{') < 0) return -1;
    while ((res = json_next(&r->j, '}')) > 0) {
        int k = read_key(r, keys, &seen);
        if (k == -1) return -1;
        if (k == 0) {
            /* roles are short: measure (validating) first, decode only if it can be one */
            char role[16];
            size_t rl, at = r->j.pos;
            Json probe = r->j;
            if (json_string(&probe, NULL, (size_t)-1, &rl) < 0) {
                r->j = probe;
                return -1;
            }
            m.role = CHAT_ROLE_COUNT;
            if (rl < sizeof role && json_string(&r->j, role, sizeof role, &rl) == 0) {
                for (int i = 0; i < CHAT_ROLE_COUNT; i++) {
                    const char *name = chat_role_name((ChatRole)i);
                    if (strlen(name) == rl && memcmp(role, name, rl) == 0) m.role = (ChatRole)i;
                }
            }
            r->j = probe; /* both stopped after the string */
            while (at < r->j.len && r->j.src[at] != '"') at++;
            if (m.role == CHAT_ROLE_COUNT)
                return json_fail(&r->j, at, "unknown role (expected system, user, assistant or tool)");
        } else if (k == 1) {
            if (json_peek(&r->j) == JSON_NULL) {
                content_null = 1;
                if (json_literal(&r->j, NULL) < 0) return -1;
            } else if (read_string(r, &m.content, &m.content_len) < 0) {
                return -1;
            }
        } else if (k == 2) {
            if (json_peek(&r->j) == JSON_NULL) {
                if (json_literal(&r->j, NULL) < 0) return -1;
            } else {
                if (read_string(r, &m.reasoning, &m.reasoning_len) < 0) return -1;
                m.has_reasoning = 1;
            }
        } else if (k == 3) {
            if (json_peek(&r->j) == JSON_NULL) {
                if (json_literal(&r->j, NULL) < 0) return -1;
                continue;
            }
            int res2;
            if (json_peek(&r->j) != JSON_ARRAY && !r->j.failed)
                return json_fail(&r->j, r->j.pos, "\"tool_calls\" must be an array");
            if (json_enter(&r->j, '[') < 0) return -1;
            while ((res2 = json_next(&r->j, ']')) > 0) {
                if (json_peek(&r->j) != JSON_OBJECT && !r->j.failed)
                    return json_fail(&r->j, r->j.pos, "a tool call must be an object");
                if (read_tool_call(r) < 0) return -1;
            }
            if (res2 < 0) return -1;
        } else if (json_skip(&r->j) < 0) {
            return -1;
        }
    }
    if (res < 0) return -1;
    if (!(seen & 1)) return json_fail(&r->j, start, "message without \"role\"");
    if (m.role != CHAT_ROLE_ASSISTANT && (!(seen & 2) || content_null))
        return json_fail(&r->j, start, "%s message without \"content\" string", chat_role_name(m.role));
    if (m.role != CHAT_ROLE_ASSISTANT && (m.has_reasoning || r->n.n_tool_calls > first_call))
        return json_fail(&r->j, start, "only assistant messages may have reasoning_content or tool_calls");
    uint64_t n_calls = r->n.n_tool_calls - first_call;
    if (r->out) {
        if (r->n.n_messages >= r->out->cap.n_messages) return json_fail(&r->j, start, "more messages than measured");
        m.tool_calls = n_calls ? r->out->calls + first_call : NULL;
        m.n_tool_calls = (int)n_calls;
        r->out->msgs[r->n.n_messages] = m;
    }
    r->n.n_messages++;
    return 0;
}

static int read_messages(Reader *r)
{
    int res;
    if (json_peek(&r->j) != JSON_ARRAY && !r->j.failed)
        return json_fail(&r->j, r->j.pos, "\"messages\" must be an array");
    if (json_enter(&r->j, '[') < 0) return -1;
    while ((res = json_next(&r->j, ']')) > 0)
        if (read_message(r) < 0) return -1;
    return res;
}

static int read_tools(Reader *r)
{
    int res;
    if (json_peek(&r->j) != JSON_ARRAY && !r->j.failed) return json_fail(&r->j, r->j.pos, "\"tools\" must be an array");
    if (json_enter(&r->j, '[') < 0) return -1;
    while ((res = json_next(&r->j, ']')) > 0) {
        size_t at = r->j.pos;
        if (json_peek(&r->j) != JSON_OBJECT && !r->j.failed) return json_fail(&r->j, at, "a tool must be an object");
        const char *s;
        size_t n;
        if (read_dump(r, &s, &n) < 0) return -1;
        if (r->out) {
            if (r->n.n_tools >= r->out->cap.n_tools) return json_fail(&r->j, at, "more tools than measured");
            r->out->tools[r->n.n_tools] = s;
            r->out->tools_len[r->n.n_tools] = n;
        }
        r->n.n_tools++;
    }
    return res;
}

int chat_json_read(const char *src, size_t len, const char *name, ChatJsonOut *out, ChatJsonSizes *sizes, char *err,
                   size_t err_cap)
{
    Reader r;
    memset(&r, 0, sizeof r);
    json_init(&r.j, src, len, name);
    r.out = out;
    int res = 0;
    if (len > CHAT_JSON_MAX_BYTES) {
        res = json_fail(&r.j, 0, "larger than %zu bytes", CHAT_JSON_MAX_BYTES);
    } else if (json_peek(&r.j) == JSON_OBJECT) {
        static const char *const keys[] = {"messages", "tools", NULL};
        unsigned seen = 0;
        json_enter(&r.j, '{');
        while (res >= 0 && (res = json_next(&r.j, '}')) > 0) {
            int k = read_key(&r, keys, &seen);
            if (k == -1) res = -1;
            else if (k == 0) res = read_messages(&r);
            else if (k == 1) res = read_tools(&r);
            else res = json_skip(&r.j);
        }
        if (res >= 0 && !(seen & 1)) res = json_fail(&r.j, 0, "object without \"messages\"");
    } else if (json_peek(&r.j) == JSON_ARRAY) {
        res = read_messages(&r);
    } else {
        res = json_fail(&r.j, r.j.pos, "expected an array of messages (or an object with \"messages\")");
    }
    if (res >= 0) res = json_end(&r.j);
    if (res < 0 || r.j.failed) {
        if (err && err_cap) snprintf(err, err_cap, "%s", r.j.err);
        return -1;
    }
    if (r.n.n_messages > 0x7fffffff || r.n.n_tools > 0x7fffffff) {
        if (err && err_cap) snprintf(err, err_cap, "%s: too many messages", name);
        return -1;
    }
    if (sizes) *sizes = r.n;
    return 0;
}

int chat_json_out_take(ChatJsonOut *out, Arena *arena, const ChatJsonSizes *sizes)
{
    /* at least one element each, so an empty table still gets a valid pointer */
    out->msgs = arena_take(arena, (sizes->n_messages ? sizes->n_messages : 1) * sizeof(ChatMessage));
    out->calls = arena_take(arena, (sizes->n_tool_calls ? sizes->n_tool_calls : 1) * sizeof(ChatToolCall));
    out->tools = arena_take(arena, (sizes->n_tools ? sizes->n_tools : 1) * sizeof(const char *));
    out->tools_len = arena_take(arena, (sizes->n_tools ? sizes->n_tools : 1) * sizeof(size_t));
    out->text = arena_take(arena, sizes->text_bytes ? sizes->text_bytes : 1);
    out->cap = *sizes;
    return out->msgs && out->calls && out->tools && out->tools_len && out->text ? 0 : -1;
}

uint64_t chat_arena_bound(uint64_t len)
{
    /* Each message takes >= 20 bytes of JSON ({"role":"assistant"}), each
     * tool call >= 11 ({"name":""}, outside its message's own bytes), each
     * tool >= 3 ({} and a comma); a byte of string or value text decodes to
     * at most 2 bytes (tojson adds a space after ',' and ':'), printed at
     * most once. The costliest of these per byte of JSON bounds the sum. */
    uint64_t per_msg = (sizeof(ChatMessage) + CHAT_PER_MESSAGE + 19) / 20;
    uint64_t per_call = (sizeof(ChatToolCall) + CHAT_PER_TOOL_CALL + 10) / 11;
    uint64_t per_tool = (sizeof(const char *) + sizeof(size_t) + CHAT_PER_TOOL + 2) / 3;
    uint64_t per_param = 4 + (CHAT_PER_PARAMETER + 4) / 5; /* a member of a call's arguments: >= 5 bytes */
    uint64_t per_byte = 4;
    if (per_param > per_byte) per_byte = per_param;
    if (per_msg > per_byte) per_byte = per_msg;
    if (per_call > per_byte) per_byte = per_call;
    if (per_tool > per_byte) per_byte = per_tool;
    /* plus: the first tool has no comma, the fixed text of the templates,
     * and the rounding of six buffers */
    return len * per_byte + per_tool * 3 + CHAT_FIXED + 7 * ARENA_ALIGN;
}
