/* chat.h - the built-in chat templates, and the reader for a conversation
 * written as JSON. A model's own template (tokenizer.chat_template) is run
 * by the Jinja interpreter (jinja.h, chat_request.h); these render only
 * when --template NAME asks for one, and ChatML for a file without one.
 *
 * Each is a C function that produces exactly what the model's Jinja
 * chat_template produces (rendered as transformers does: trim_blocks,
 * lstrip_blocks); chat_template_by_name() finds one by the name the user
 * gives. Adding one = one enum value, one entry in the table in chat.c
 * (name, end of an assistant turn, render function).
 *
 * Texts a template takes from the tokenizer are fixed: bos_token is
 * "<|begin_of_text|>" for Llama 3, eos_token "</s>" for Zephyr. Llama 3.1
 * and 3.2 print "Today Date: 26 Jul 2024", their templates' default (3.2's
 * template prints today's date when the renderer offers strftime_now, as
 * transformers does: pith keeps prompts reproducible). */
#ifndef PITH_CHAT_H
#define PITH_CHAT_H

#include <stddef.h>
#include <stdint.h>

#include "../arena/arena.h"

typedef enum {
    CHAT_TEMPLATE_RAW = 0, /* unknown template: message contents concatenated, nothing added */
    CHAT_TEMPLATE_QWEN3,   /* Qwen3 (ChatML + <think> reasoning + tool calls) */
    CHAT_TEMPLATE_QWEN35,  /* Qwen3.5 as in its 0.8B-9B files: thinks only when enable_thinking is 1 */
    CHAT_TEMPLATE_QWEN35_THINK, /* Qwen3.5 as in its larger files: thinks unless enable_thinking is 0 */
    CHAT_TEMPLATE_CHATML,  /* plain ChatML, as llama.cpp writes it into converted models */
    CHAT_TEMPLATE_QWEN2,   /* ChatML with Qwen2's default system prompt (the short Qwen2 template) */
    CHAT_TEMPLATE_QWEN25,  /* Qwen2.5 (and Qwen2.5-Coder): default system "You are Qwen...", tool calls */
    CHAT_TEMPLATE_SMOLLM2, /* ChatML with SmolLM2's default system prompt */
    CHAT_TEMPLATE_LLAMA3,  /* Llama 3: <|start_header_id|>role<|end_header_id|>, contents trimmed */
    CHAT_TEMPLATE_LLAMA31, /* Llama 3.1 / 3.2 / 3.3: Llama 3 plus a system turn with the knowledge date */
    CHAT_TEMPLATE_ZEPHYR,  /* Zephyr / TinyLlama chat: <|user|>\n...</s>\n */
    CHAT_TEMPLATE_SMOLLM3, /* SmolLM3: ChatML, a "## Metadata" system turn, /think and /no_think */
    CHAT_TEMPLATE_PHI3,    /* Phi-3 / Phi-3.5-mini: <|user|>\n...<|end|>\n */
    CHAT_TEMPLATE_PHI4,    /* Phi-4-mini: <|user|>...<|end|>, no newlines */
    CHAT_TEMPLATE_GEMMA,   /* Gemma 2/3: <bos><start_of_turn>user\n...<end_of_turn>\n, system in the first turn */
    CHAT_TEMPLATE_LFM2,    /* LFM2: <|startoftext|> then ChatML, tools listed in the system turn */
    CHAT_TEMPLATE_COUNT
} ChatTemplate;

typedef enum { CHAT_ROLE_SYSTEM = 0, CHAT_ROLE_USER, CHAT_ROLE_ASSISTANT, CHAT_ROLE_TOOL, CHAT_ROLE_COUNT } ChatRole;

typedef struct {
    const char *name;
    size_t name_len;
    /* Exactly what the template prints for the arguments: a JSON string's
     * text when arguments was a string, else the value as tojson renders it. */
    const char *arguments;
    size_t arguments_len;
} ChatToolCall;

typedef struct {
    ChatRole role;
    const char *content;     /* may be NULL when content_len == 0 */
    size_t content_len;
    const char *reasoning;   /* reasoning_content; used only when has_reasoning */
    size_t reasoning_len;
    int has_reasoning;       /* reasoning_content given (even empty) */
    const ChatToolCall *tool_calls;
    int n_tool_calls;
} ChatMessage;

typedef struct {
    int add_generation_prompt;
    int enable_thinking;     /* 1, 0, or -1: the template's default (chat_template_thinks) */
    /* Optional tool definitions, each a JSON text as tojson renders it
     * (Qwen3 lists them in its system turn). NULL/0 = no tools. */
    const char *const *tools;
    const size_t *tools_len;
    int n_tools;
    /* 1: the messages continue a conversation already in the context (a
     * chat's next user turn): leave out what a template writes only once at
     * the start - the BOS text and default system turns (Llama 3.x, Qwen2,
     * Qwen2.5, SmolLM2). The previous assistant turn's end is
     * chat_template_turn_end(). */
    int continuation;
} ChatOptions;

const char *chat_template_name(ChatTemplate t);   /* "qwen3", "raw" */
const char *chat_role_name(ChatRole r);           /* "user", ... */
/* The template called name (as chat_template_name gives it: "raw",
 * "qwen3", "qwen3.5", "qwen3.5-think", "chatml", "qwen2", "qwen2.5", "smollm2", "smollm3", "llama3",
 * "llama3.1", "zephyr", "phi3", "phi4", "gemma", "lfm2"; "llama3.2" and "llama3.3" are
 * "llama3.1"), or -1. */
int chat_template_by_name(const char *name);
/* The names chat_template_by_name knows, comma separated, for messages. */
const char *chat_template_names(void);
/* 1 if the template thinks when enable_thinking is not given (every
 * template but Qwen3.5's small files' one: qwen3.5). */
int chat_template_thinks(ChatTemplate t);
/* 1 if the template's generation prompt, when thinking, ends inside an
 * open "<think>" (Qwen3.5's): the reply is reasoning from its start. */
int chat_template_opens_think(ChatTemplate t);
/* What closes an assistant turn after its content, as the template writes
 * it: the end-of-generation token's text and what follows it before the
 * next turn ("<|im_end|>\n", "<|eot_id|>", "</s>\n"; "" for raw). A chat
 * that stopped at that token feeds this before the next user turn. */
const char *chat_template_turn_end(ChatTemplate t);

/* Renders the conversation. Writes at most cap bytes into buf (buf may be
 * NULL when cap is 0) and a NUL if there is room; returns the full length
 * of the text (without NUL), like snprintf, or -1 if a message is invalid
 * (role out of range, n < 0) or the template refuses the conversation (as
 * its raise_exception: Qwen3.5's). The text is complete only if result < cap. */
int64_t chat_render(ChatTemplate t, const ChatMessage *msgs, int n, const ChatOptions *opt, char *buf, size_t cap);
/* An upper bound of chat_render's length for any template, from the
 * counts and the total bytes of every string (content, reasoning, names,
 * arguments, tools) in the conversation; except Llama 3.1's tools, which
 * it re-indents by their nesting depth (tojson(indent=4)): a caller that
 * renders tools for it measures first (chat_render with cap 0). */
uint64_t chat_render_bound(uint64_t n_messages, uint64_t n_tool_calls, uint64_t n_tools, uint64_t text_bytes);

/* ---- Reading a conversation from JSON ---------------------------------
 * The text is either an array of messages, or an object
 * {"messages": [...], "tools": [...]} (other keys ignored). A message is
 * {"role": "system"|"user"|"assistant"|"tool", "content": string,
 *  "reasoning_content": string (optional), "tool_calls": [
 *      {"function": {"name": string, "arguments": object or string}}, ...]}
 * ("tool_calls" entries may also hold name/arguments directly; absent
 * arguments print as {}; numbers inside arguments are kept as written,
 * where Python's tojson would reformat e.g. 1E5 as 100000.0). Other keys
 * are ignored; a repeated key, a wrong type or an unknown role is an error.
 * content may be null or absent only for assistant messages.
 *
 * Two passes over the same text: first with msgs == NULL to measure
 * (ChatJsonSizes), then with buffers of those sizes to fill. Decoded
 * strings go into `text` (the messages point into it). */
typedef struct {
    uint64_t n_messages;
    uint64_t n_tool_calls;
    uint64_t n_tools;
    uint64_t text_bytes;
} ChatJsonSizes;

typedef struct {
    ChatMessage *msgs;        /* n_messages */
    ChatToolCall *calls;      /* n_tool_calls */
    const char **tools;       /* n_tools */
    size_t *tools_len;        /* n_tools */
    char *text;               /* text_bytes */
    ChatJsonSizes cap;        /* capacities of the above */
} ChatJsonOut;

/* Returns 0 and the sizes, or -1 with "NAME: byte N: what" in err. With
 * out == NULL only measures. Text larger than CHAT_JSON_MAX_BYTES is refused. */
#define CHAT_JSON_MAX_BYTES ((size_t)16 << 20)
int chat_json_read(const char *src, size_t len, const char *name, ChatJsonOut *out, ChatJsonSizes *sizes,
                   char *err, size_t err_cap);
/* Carves the second pass's buffers, with the capacities the first pass
 * measured, from arena. Returns 0, or -1 if the arena is too small. */
int chat_json_out_take(ChatJsonOut *out, Arena *arena, const ChatJsonSizes *sizes);
/* Arena bytes that everything read from a JSON text of len bytes can
 * take, the rendered text included, when the buffers are carved with
 * chat_json_out_take (see cmd_template.c): at most 10 bytes
 * per byte of JSON plus a constant. Lets a caller plan the arena before
 * the text has been read. */
uint64_t chat_arena_bound(uint64_t len);

#endif
