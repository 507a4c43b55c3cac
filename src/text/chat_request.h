/* chat_request.h - a conversation as an OpenAI request gives it (messages,
 * tools and chat_template_kwargs, as JSON text) rendered into a prompt by
 * the template that renders every conversation: the model's own Jinja
 * template (tokenizer.chat_template, or --chat-template-file), or a
 * built-in one (--template NAME, or ChatML for a file that carries none).
 * `pith template`, the server and the engine's chat turns all render here.
 *
 * The model's template gets the variables transformers gives it: messages,
 * tools (None when there are none), documents (None),
 * add_generation_prompt, bos_token, eos_token, enable_thinking when it was
 * given, then each key of the kwargs object (chat_template_kwargs, --var),
 * which may replace any of them. */
#ifndef PITH_CHAT_REQUEST_H
#define PITH_CHAT_REQUEST_H

#include <stddef.h>
#include <stdint.h>

#include "../arena/arena.h"
#include "../base/status.h"
#include "chat.h"
#include "jinja.h"

typedef struct {
    const char *messages;      /* a JSON array of messages */
    size_t messages_len;
    const char *tools;         /* a JSON array; NULL: no tools */
    size_t tools_len;
    const char *kwargs;        /* a JSON object whose keys become variables; NULL: none */
    size_t kwargs_len;
    int add_generation_prompt;
    int enable_thinking;       /* 1, 0, or -1: not given (the template's default) */
    int continuation;          /* built-in templates: the turn follows others in the context (ChatOptions) */
    int api_roles;             /* roles must be the API's: system, developer, user, assistant, tool */
} ChatInput;

typedef struct {
    const JinjaTemplate *jinja; /* the template of the file; NULL: the built-in one */
    ChatTemplate builtin;
    const char *name;           /* names the Jinja template in errors: "tokenizer.chat_template", a file */
    const char *bos, *eos;      /* the vocabulary's BOS and EOS texts ("" if none) */
    int64_t now;                /* what strftime_now formats (seconds since 1970, UTC) */
} ChatRenderer;

/* Scratch bytes chat_render_input takes at most for JSON texts of
 * json_bytes in all and a prompt of at most out_cap bytes; with a Jinja
 * template only (the built-in ones read the JSON into tables too). */
uint64_t chat_input_scratch_bound(uint64_t json_bytes, uint64_t out_cap);
uint64_t chat_jinja_scratch_bound(uint64_t json_bytes, uint64_t out_cap);

/* Renders into out (cap bytes, a NUL added when there is room), taking
 * its working memory from scratch. PITH_OK and *len; else a status and one
 * line in err: the conversation's error ("messages: ..."), the template's
 * ("NAME:LINE:COL: what"), or PITH_NO_MEMORY when the
 * prompt is longer than cap. */
PithStatus chat_render_input(const ChatRenderer *r, const ChatInput *in, Arena *scratch, char *out, size_t cap,
                             size_t *len, char *err, size_t err_cap);

/* The span of the value of key in the JSON object src[0..len) (whitespace
 * skipped): 1 and *at, *n; 0 if the object has no such key or it is null;
 * -1 if src is not a valid JSON object. */
int json_member(const char *src, size_t len, const char *key, size_t *at, size_t *n);

#endif
