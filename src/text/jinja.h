/* jinja.h - a Jinja2 interpreter for chat templates: renders the template a
 * GGUF file carries (tokenizer.chat_template) byte for byte as Hugging Face
 * transformers does with jinja2: ImmutableSandboxedEnvironment with
 * trim_blocks, lstrip_blocks, the loopcontrols extension, the
 * {% generation %} block of its AssistantTracker, its own tojson
 * (json.dumps with ensure_ascii=False), raise_exception and strftime_now.
 *
 * Nothing is allocated: a template is parsed into memory the caller gives
 * (kept as long as the template is used), and each render works in a second
 * region the caller gives, reset by jinja_render_begin. Both are bounded;
 * so are loop iterations, recursion depth and the output: a template or a
 * conversation beyond a bound gets PITH_NO_MEMORY and a message, never a
 * crash, a hang or a write outside the regions.
 *
 * Errors: a PithStatus and one line in err, "LINE:COL: what" (1-based, of
 * the template text), naming the construct (an unknown filter, a syntax
 * error, an undefined value used where jinja2 raises, the template's own
 * raise_exception message). The caller prefixes the file's name. */
#ifndef PITH_JINJA_H
#define PITH_JINJA_H

#include <stddef.h>
#include <stdint.h>

#include "../base/status.h"

typedef struct JinjaTemplate JinjaTemplate; /* parsed; read-only while rendering */
typedef struct JinjaRender JinjaRender;     /* one render's state, in its work region */

typedef struct {
    uint64_t max_output;  /* bytes of rendered text (also bounds each captured block) */
    uint64_t max_steps;   /* loop iterations, macro calls and filter applications together */
    uint32_t max_depth;   /* nesting of macro calls, includes of blocks and expression recursion */
} JinjaLimits;
/* The evaluator recurses at most 8 * max_depth + 32 levels (expressions,
 * blocks and macro calls together): with depth 64, under 512 KiB of stack. */

/* Defaults for a chat request: 16 MiB of output, 10 million steps, depth 64. */
void jinja_limits_default(JinjaLimits *lim);

/* Bytes jinja_parse may take for a template of len bytes (to plan memory). */
uint64_t jinja_parse_bound(size_t len);
/* Parses src[0..len) into mem (cap bytes, 16-byte aligned). The text
 * must stay alive and unchanged while the template is used (strings of the
 * tree point into it). PITH_OK and *out, or a status and "LINE:COL: what". */
PithStatus jinja_parse(const char *src, size_t len, void *mem, size_t cap, JinjaTemplate **out, char *err,
                       size_t err_cap);

/* Starts a render of t in the work region [mem, mem + cap) (16-byte
 * aligned; its content is overwritten). NULL if cap is too small to hold
 * the render's own state (under 64 KiB). Variables are then set, and
 * jinja_render called once. */
JinjaRender *jinja_render_begin(const JinjaTemplate *t, void *mem, size_t cap, const JinjaLimits *lim);
/* A global variable from a JSON text (any JSON value: an object is a dict
 * with keys in their order, an array a list, integers without fraction or
 * exponent int, other numbers float, null None). Flag
 * JINJA_JSON_TOOL_ARGUMENTS: in a messages array, each
 * tool_calls[i].function.arguments that is a string holding a JSON object
 * becomes that object (as llama.cpp and transformers' users pass it).
 * PITH_OK, or a status and "NAME: byte N: what" (name used for messages). */
#define JINJA_JSON_TOOL_ARGUMENTS 1
PithStatus jinja_set_json(JinjaRender *r, const char *name, const char *json, size_t len, int flags, char *err,
                          size_t err_cap);
void jinja_set_string(JinjaRender *r, const char *name, const char *s, size_t len);
void jinja_set_bool(JinjaRender *r, const char *name, int value);
void jinja_set_none(JinjaRender *r, const char *name);
/* What strftime_now formats: seconds since 1970-01-01 UTC (the caller's
 * clock, or SOURCE_DATE_EPOCH). 0 until set. */
void jinja_set_time(JinjaRender *r, int64_t unix_seconds);
/* Renders into out (cap bytes; a NUL added when there is room). PITH_OK and
 * *out_len, or a status and "LINE:COL: what". */
PithStatus jinja_render(JinjaRender *r, char *out, size_t cap, size_t *out_len, char *err, size_t err_cap);

#endif
