/* tool_calls.h - what a reply does with tools, tool_choice and
 * response_format: the grammar a request asks for (a JSON object, a JSON
 * schema, or tool calls whose arguments follow each function's
 * parameters), and the splitter that turns the tool calls in a reply into
 * OpenAI tool_calls as the text is generated, in the format of the model's
 * chat template (ToolFormat). The engine's slots run the splitter; the
 * server reads requests with tool_constraint. */
#ifndef PITH_TOOL_CALLS_H
#define PITH_TOOL_CALLS_H

#include <stddef.h>

#include "chat.h"

#define TOOL_ABSENT ((size_t)-1)

/* How a template's model writes a tool call. */
typedef enum {
    /* Qwen2.5, Qwen3, SmolLM3 (whose template asks for it in its tools part):
     * <tool_call>\n{"name": "NAME", "arguments": {...}}\n</tool_call> */
    TOOL_FORMAT_TAGGED = 0,
    /* Llama 3.1/3.2/3.3: the JSON object alone, {"name": "NAME",
     * "parameters": {...}}, possibly after <|python_tag|> */
    TOOL_FORMAT_JSON,
    /* LFM2: <|tool_call_start|>[name(key="value", ...), ...]<|tool_call_end|>,
     * Python calls (its model card's format) or {"name", "arguments"} objects */
    TOOL_FORMAT_LFM2,
    /* Qwen3.5: <tool_call>\n<function=NAME>\n<parameter=KEY>\nVALUE\n</parameter>\n
     * ...</function>\n</tool_call>, VALUE raw text for a string parameter,
     * else JSON (the JSON form of TOOL_FORMAT_TAGGED is parsed too) */
    TOOL_FORMAT_XML,
} ToolFormat;

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
    int parse;           /* split <tool_call> blocks out of the content */
    int forced;          /* tool_choice required or a named function */
    ToolFormat format;   /* of the template's tool calls */
    size_t grammar_len;  /* > 0: a grammar was written (response_format or forced tool calls) */
    const char *what;    /* names the grammar's source in errors */
} ToolConstraint;

/* From the request body and the offsets of its response_format,
 * tool_choice and tools values (TOOL_ABSENT when missing): the grammar into
 * gbnf (cap bytes) and what to do with tools. 0, or -1 with the reason for
 * a 400 in why. */
int tool_constraint(const char *body, size_t len, size_t response_format, size_t tool_choice, size_t tools,
                   ChatTemplate tmpl, char *gbnf, size_t cap, ToolConstraint *out, char *why, size_t why_cap);

/* Tool calls out of a stream of content bytes, in one ToolFormat: a
 * <tool_call>...</tool_call> block, a <|tool_call_start|> block of a list
 * of calls (TOOL_FORMAT_LFM2: Python keyword arguments become a JSON
 * object), or (TOOL_FORMAT_JSON) a JSON object
 * from its "{" (or a "<|python_tag|>" before it) to its closing brace; its
 * JSON holds "name" and "arguments" or "parameters" (an object, or a string
 * holding the JSON text). Content goes to content(); each block that parses
 * goes to call() with the name (decoded) and the arguments as JSON text; a
 * block that does not parse (or is longer than the buffer, or never
 * closed) goes to content() as it was. Whitespace around calls is dropped
 * once there is a call. */
typedef struct {
    void (*content)(void *ctx, const char *p, size_t n);
    void (*call)(void *ctx, int index, const char *name, size_t name_len, const char *args, size_t args_len);
    void *ctx;
    ToolFormat format;
    char *buf;           /* the block after its opening tag */
    size_t cap, n;
    int inside;
    int tagged;          /* the block opened with its tag (not in buf) */
    int depth, in_string, escaped; /* TOOL_FORMAT_JSON: where the object is */
    char hold[24];       /* a possible start of the opening tag */
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
