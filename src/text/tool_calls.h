/* tool_calls.h - what a reply does with tools, tool_choice and
 * response_format: the grammar a request asks for (a JSON object, a JSON
 * schema, or tool calls whose arguments follow each function's
 * parameters), and the splitter that turns the tool calls in a reply into
 * OpenAI tool_calls as the text is generated, in the format of the model's
 * chat template (ToolFormat, recognised from the template's text). The
 * engine's slots run the splitter; the server reads requests with
 * tool_constraint and, for a template that cannot show the tools, renders
 * the messages tool_prompt_messages writes. */
#ifndef PITH_TOOL_CALLS_H
#define PITH_TOOL_CALLS_H

#include <stddef.h>

#include "chat.h"

#define TOOL_ABSENT ((size_t)-1)

/* How a template's model writes a tool call (the table in tool_calls.c,
 * formats[], holds each one's markers and its grammar's text). */
typedef enum {
    /* Qwen2.5, Qwen3, Hermes 2 Pro / 3, Granite 4.x, SmolLM3:
     * <tool_call>\n{"name": "NAME", "arguments": {...}}\n</tool_call> */
    TOOL_FORMAT_TAGGED = 0,
    /* Llama 3.1/3.2/3.3: the JSON object alone, {"name": "NAME",
     * "parameters": {...}}, possibly after <|python_tag|> */
    TOOL_FORMAT_JSON,
    /* LFM2: <|tool_call_start|>[name(key="value", ...), ...]<|tool_call_end|>,
     * Python calls (its model card's format) or {"name", "arguments"} objects */
    TOOL_FORMAT_LFM2,
    /* Qwen3.5, Qwen3-Coder: <tool_call>\n<function=NAME>\n<parameter=KEY>\nVALUE\n</parameter>\n
     * ...</function>\n</tool_call>, VALUE raw text for a string parameter,
     * else JSON (the JSON form of TOOL_FORMAT_TAGGED is parsed too) */
    TOOL_FORMAT_XML,
    /* Mistral Nemo: [TOOL_CALLS][{"name": "NAME", "arguments": {...}, "id": ...}, ...] */
    TOOL_FORMAT_MISTRAL,
    /* Mistral Small 3.2, Ministral 3, Devstral: [TOOL_CALLS]NAME[ARGS]{...}
     * per call ([CALL_ID]ID before [ARGS] read too) */
    TOOL_FORMAT_MISTRAL_ARGS,
    /* Granite 3.3: <|tool_call|>[{"name": "NAME", "arguments": {...}}, ...] */
    TOOL_FORMAT_GRANITE,
    /* Phi-4-mini: <|tool_call|>[{"name": "NAME", "arguments": {...}}]<|/tool_call|>
     * (a lone object too); its template takes the tools as a string in the
     * system message ("tools"): tool_prompt_messages writes it */
    TOOL_FORMAT_PHI4,
    /* Llama 3.2/4 pythonic, Gemma 3 fine-tunes: [name(a=1, b="x"), ...] as
     * the reply, JSON call objects in the list read too */
    TOOL_FORMAT_PYTHONIC,
    /* Gemma 4: <|tool_call>call:NAME{key:<|"|>text<|"|>,n:1}<tool_call|> */
    TOOL_FORMAT_GEMMA4,
    /* DeepSeek R1 (distills): <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>NAME\n
     * ```json\n{...}\n```<｜tool▁call▁end｜>...<｜tool▁calls▁end｜> */
    TOOL_FORMAT_DEEPSEEK_R1,
    /* DeepSeek V3.1: <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>NAME<｜tool▁sep｜>{...}<｜tool▁call▁end｜>...<｜tool▁calls▁end｜> */
    TOOL_FORMAT_DEEPSEEK_V3,
    /* Nemotron Nano v2: <TOOLCALL>[{"name": "NAME", "arguments": {...}}, ...]</TOOLCALL> */
    TOOL_FORMAT_NEMOTRON,
    /* Apriel 1.6: <tool_calls>[{"name": ..., "arguments": ...}, ...]</tool_calls>;
     * MiniMax-M1: <tool_calls>\n{...}\n{...}\n</tool_calls> (objects a line each) */
    TOOL_FORMAT_TOOL_CALLS,
    /* Firefunction v2: functools[{"name": ..., "arguments": ...}, ...] */
    TOOL_FORMAT_FUNCTOOLS,
    /* A template that knows no tools (or a form pith does not read): the
     * tools described in the system message (tool_prompt_messages), the
     * reply held by a grammar to one JSON object, {"tool_call": {"name":
     * "NAME", "arguments": {...}}} or (tool_choice auto) {"response": "text"} */
    TOOL_FORMAT_GENERIC,
    TOOL_FORMAT_COUNT
} ToolFormat;

/* The format a chat template's text teaches its model (the first row of
 * a table of markers that the text holds); TOOL_FORMAT_GENERIC when none. */
ToolFormat tool_format_detect(const char *template_text);
/* The format of a built-in template (--template NAME). */
ToolFormat tool_format_of_builtin(ChatTemplate t);
/* "hermes", "mistral", ...: a format's name, for logs and messages. */
const char *tool_format_name(ToolFormat f);

/* How far a Qwen3.5 block has been read (tool_calls.c, xml_read): the
 * parser keeps its place, so a call's arguments can be given as they come. */
typedef struct {
    size_t i;             /* read up to here */
    size_t name, name_len;/* the function's name in the block */
    size_t v, scan;       /* a value's first byte; where "</parameter>" may start */
    size_t given;         /* a string value's bytes given */
    int stage;            /* 0 before <function=NAME>, 1 between parameters, 2 in a value, 3 after </function>; -1 not a call */
    int k, kind;          /* parameters begun; the value's kind ('s', 'j' or 0) */
} XmlRead;

/* Bytes of the table of which parameters are strings (tool_split_schemas). */
#define TOOL_KINDS_CAP (8 * 1024)
/* Bytes of one tool-call block of a reply the splitter holds (its buffer). */
#define TOOL_BLOCK_CAP (64 * 1024)

typedef struct {
    int render;          /* give the tools to the chat template */
    int rewrite;         /* render tool_prompt_messages' messages instead of the request's (render is 0):
                          * the request has tools and the template cannot show them */
    int parse;           /* split tool calls out of the content */
    int forced;          /* tool_choice required or a named function */
    int held;            /* a grammar holds the calls (forced, or TOOL_FORMAT_GENERIC): tool_split_progressive's held */
    ToolFormat format;   /* of the template's tool calls */
    size_t grammar_len;  /* > 0: a grammar was written (response_format, forced tool calls, the generic format) */
    const char *what;    /* names the grammar's source in errors */
} ToolConstraint;

/* From the request body and the offsets of its response_format,
 * tool_choice and tools values (TOOL_ABSENT when missing), for a template
 * whose calls are in format: the grammar into gbnf (cap bytes) and what to
 * do with tools. 0, or -1 with the reason for a 400 in why. */
int tool_constraint(const char *body, size_t len, size_t response_format, size_t tool_choice, size_t tools,
                    ToolFormat format, char *gbnf, size_t cap, ToolConstraint *out, char *why, size_t why_cap);

/* For c->rewrite: the request's messages (messages: the offset of its
 * array) as a new JSON array into out (cap bytes, NUL-terminated where it
 * fits) that shows the model the tools (tools: the offset of the
 * request's) where its template cannot: TOOL_FORMAT_GENERIC appends their
 * description and the reply's JSON form to the first system message's
 * content (a system message is inserted first when there is none; with
 * no_system, for a template that refuses a system role, they go before
 * the first user message's content instead), turns
 * an assistant's tool_calls (or reply) into its content as the format
 * writes them and tool results into user messages; TOOL_FORMAT_PHI4 gives the system
 * message a "tools" string (what Phi-4-mini's template reads) and the
 * assistant's calls as content. Without tools in play (c->parse 0:
 * tool_choice none, or a conversation with past calls but no tools) only
 * the past calls and results change. Returns the array's full length (like
 * snprintf: more than cap - 1 means it did not fit), or -1 with the reason
 * in why. */
int64_t tool_prompt_messages(const char *body, size_t len, size_t messages, size_t tools, const ToolConstraint *c,
                             int no_system, char *out, size_t cap, char *why, size_t why_cap);

/* Tool calls out of a stream of content bytes, in one ToolFormat: a block
 * from the format's opening marker (or, for some, a bare "{" or "[") to
 * its closing marker, or where its value closes when it has none; inside,
 * calls as the format writes them (JSON call objects: "name" and
 * "arguments" or "parameters", an object or a string holding the JSON
 * text; lists of them or of Python calls, whose keyword arguments become a
 * JSON object; NAME[ARGS]{...}; Gemma 4's call:NAME{...}; DeepSeek's
 * sections; the generic format's object, whose "response" string becomes
 * content). Content goes to content(); each block that parses goes to
 * call() with the name (decoded) and the arguments as JSON text; a block
 * that does not parse (or is longer than the buffer, or never closed)
 * goes to content() as it was. Whitespace around calls is dropped once
 * there is a call. */
typedef struct {
    void (*content)(void *ctx, const char *p, size_t n);
    void (*call)(void *ctx, int index, const char *name, size_t name_len, const char *args, size_t args_len);
    void *ctx;
    ToolFormat format;
    char *buf;           /* the block after its opening tag */
    size_t cap, n;
    int inside;
    int tagged;          /* the block opened with its tag (not in buf) */
    int depth, in_string, escaped; /* a block without a closing marker: where its value is */
    int pre;             /* such a block before its value (a name, [ARGS]) */
    char quote;          /* the quote of the string the value is in */
    int response;        /* TOOL_FORMAT_GENERIC: 1 in a response's string (its text streams as content), 2 after it */
    char esc[16];        /* an escape of that string not yet whole */
    size_t n_esc;
    char hold[32];       /* a possible start of the opening tag */
    size_t n_hold;
    char ws[64];         /* whitespace held until it is known to be content */
    size_t n_ws;
    int n_calls;
    /* Progressive: the arguments of a call go to args_piece() as they come
     * (a call() with args NULL first gives the index and name): for calls a
     * grammar holds to their format (held: forced ones), which cannot fall
     * back to content, and for Qwen3.5's calls, whose arguments are given
     * as they become certain (a block that then does not parse still goes
     * to content, whole; its call counts in n_bad). */
    void (*args_piece)(void *ctx, int index, const char *p, size_t n);
    int held;
    int in_args, args_depth, args_in_string, args_escaped;
    size_t piece_at;     /* buf offset of the arguments not yet given */
    int streamed;        /* calls of the block given progressively */
    int n_bad;           /* calls given whose block went to content */
    XmlRead x;
    /* TOOL_FORMAT_XML: per function, its parameters that are strings
     * ('s': the raw text) or not ('j': JSON); others are read as JSON when
     * the whole value is a number, object, array, true, false or null */
    const char *kinds;
    size_t n_kinds;
} ToolSplit;

void tool_split_init(ToolSplit *t, ToolFormat format, char *buf, size_t cap, void (*content)(void *, const char *, size_t),
                     void (*call)(void *, int, const char *, size_t, const char *, size_t), void *ctx);
/* Arguments progressively from now on (before the first push): calls held
 * by a grammar (held), and Qwen3.5's calls (TOOL_FORMAT_XML) in any case. */
void tool_split_progressive(ToolSplit *t, void (*args_piece)(void *, int, const char *, size_t), int held);
/* TOOL_FORMAT_XML: the table of the tools' string parameters from the
 * request (tools: the offset of its value) into mem (cap bytes, at most
 * TOOL_KINDS_CAP; none if it does not fit). */
void tool_split_schemas(ToolSplit *t, const char *body, size_t len, size_t tools, char *mem, size_t cap);
void tool_split_push(ToolSplit *t, const char *p, size_t n);
void tool_split_finish(ToolSplit *t);

#endif
