/* session.h - a loaded model ready to generate: GGUF index, weights, KV
 * cache, tokenizer and sampler in one arena, planned before it is mapped.
 * `pith run` and `pith chat` share it, with the options they share. */
#ifndef PITH_SESSION_H
#define PITH_SESSION_H

#include <stdint.h>

#include "arena.h"
#include "chat.h"
#include "gguf.h"
#include "memplan.h"
#include "model.h"
#include "sampler.h"
#include "tokenizer.h"

typedef struct {
    const char *model_path;
    int use_mmap;            /* --no-mmap sets 0 */
    int64_t n_ctx;           /* -c; 0 = min(4096, the model's context) */
    KvType kv_type;          /* --kv-type, default f16 */
    int64_t batch;           /* -b, prompt tokens per forward step */
    int64_t threads;         /* -t; 0 = online cores */
    int thinking;            /* Qwen3 enable_thinking (--no-think sets 0) */
    SamplerParams sampling;  /* defaults from `thinking` unless set */
    int sampling_set[8];     /* which of temp/top-k/top-p/min-p/... were given */
    int64_t seed;            /* -1: from the clock */
    const char *trace_path;  /* --trace FILE */
    const char *template_name; /* --template NAME: overrides the template found in the model */
    /* A command's own buffers (e.g. the server's) join the one arena: it
     * adds them to the plan here and carves them after session_open. */
    void (*plan_extra)(void *ctx, Plan *p);
    void *plan_extra_ctx;
    int show_plan;           /* --plan: print the plan and exit */
    uint64_t max_text;       /* longest text encoded at once (set by the command) */
    int64_t keep;            /* --keep N: first positions a context shift keeps */
    int no_shift;            /* --no-shift: a full cache stops generation instead */
    int ignore_eos;          /* --ignore-eos: end-of-generation tokens are never sampled */
    uint64_t max_out_ids;    /* generated ids kept for output (--print-ids, --ids-out); 0 = none */
    uint64_t mem;            /* --mem SIZE: the memory budget in bytes; 0 = the default (memplan.h) */
    int load_asked;          /* --load: a LoadMode, or -1: the planner chooses (memplan.h) */
    uint32_t min_ctx;        /* positions the command needs at least (the context is never shrunk below) */
} SessionOptions;

typedef struct {
    SessionOptions opt;
    Gguf gguf;
    ModelConfig cfg;
    ModelOptions mopt;
    Model model;
    Tokenizer tok;
    Sampler sampler;
    Plan plan;               /* the arena's: mem.plan */
    MemBudget budget;        /* --mem, or the default */
    MemDecision mem;         /* the planner's choice: load mode, context, resident total */
    Arena arena;
    void *arena_base;
    int32_t *ids;            /* scratch for encoded text: max_ids */
    int max_ids;
    char *text;              /* scratch for rendered text: opt.max_text + 1 */
    char *piece;             /* scratch for one streamed piece */
    size_t piece_cap;
    char *trace_line;        /* scratch for one --trace line */
    ChatTemplate tmpl;       /* recognised from tokenizer.chat_template */
    char tmpl_name[64];      /* what the model calls it, for the raw-mode warning */
    int32_t *history;        /* every id in the KV cache, in order: n_ctx */
    int32_t *out_ids;        /* opt.max_out_ids generated ids, or NULL */
    uint32_t n_shifts;       /* context shifts so far */
    double load_seconds;
} Session;

void session_defaults(SessionOptions *o);
/* Handles argv[*i] if it is an option every generating command shares
 * (-c -t -b --kv-type --no-mmap --temp --top-k --top-p --min-p
 * --repeat-penalty --repeat-last-n --presence-penalty --seed --trace
 * --no-think --plan --keep --no-shift --ignore-eos --mem). Returns 1 if it did,
 * 0 if argv[*i] is not one. */
int session_parse_option(SessionOptions *o, int argc, char **argv, int *i);
/* Opens, plans, maps and loads everything; dies with one line on error.
 * The planner (memplan.h) chooses the load mode and the context within the
 * memory budget before anything is mapped; when nothing fits it refuses
 * (exit 2). With --plan, prints the whole plan and exits 0. */
void session_open(Session *s, const SessionOptions *o);
void session_close(Session *s);

/* Renders [system], user (user_len bytes: may hold NUL bytes) with the
 * model's template into s->text; returns its length. continuation: the
 * turn follows earlier turns already in the cache (ChatOptions). */
size_t session_render_user(Session *s, const char *system, const char *user, size_t user_len,
                           int add_generation_prompt, int continuation);
/* Encodes text (parse_special) into s->ids; dies if it does not fit. */
int session_encode(Session *s, const char *text, size_t len);
/* Feeds ids from the current cache position; dies on a cache overflow. */
void session_prefill(Session *s, const int32_t *ids, int n);

/* Makes room for n more positions in the KV cache, shifting the context
 * (context_shift.h: the first --keep positions stay, half of the rest is
 * dropped) as often as needed. Returns 0, or -1 if they cannot fit
 * (--no-shift, or --keep leaves too little). */
int session_make_room(Session *s, uint32_t n);
/* Feeds one generated token at the end of the cache, shifting the context
 * first when it is full. Returns 0, or -1 if the cache is full and cannot
 * shift (the caller stops generating); dies on a forward error. */
int session_feed(Session *s, int32_t id);

/* Samples the next token from the last logits, writing a --trace line
 * when asked. Dies if the logits are not finite (NaN/Inf weights). */
int32_t session_sample(Session *s);
/* Writes the text of token id to stdout through the UTF-8 stream; returns
 * -1 when stdout is closed. */
int session_emit(Session *s, TokenStream *ts, int32_t id);

#endif
