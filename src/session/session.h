/* This folder: src/session/ - a model ready to run for any command: the one
 * open path, the plan, the one generation loop; every failure returned as
 * a status and one line. May call every folder above but src/server/ and
 * src/cli/, and port/. */
/* session.h - a loaded model ready to run: GGUF index, weights, one
 * sequence (KV cache and token history), a workspace, and for generating
 * commands the tokenizer and sampler, all in one arena planned before it is
 * mapped. Every command that runs a model opens it here (one open path):
 * run, chat and serve generate with session_generate; logits and bench ask
 * for the model alone (model_only).
 *
 * Errors are returned, never ended: a function that fails returns -1 and
 * leaves one line in s->err ("FILE: what", no "pith: " and no newline);
 * the command layer prints it and exits 2, the server answers it. */
#ifndef PITH_SESSION_H
#define PITH_SESSION_H

#include <stdint.h>

#include "../arena/arena.h"
#include "../text/chat.h"
#include "../text/grammar.h"
#include "../model/forward.h"
#include "../gguf/gguf.h"
#include "../model/memplan.h"
#include "../model/model.h"
#include "../text/sampler.h"
#include "../text/tokenizer.h"

#define SESSION_MAX_SLOTS 16   /* sequences one session can hold (pith serve --slots) */
#define SESSION_DEFAULT_BATCH 64 /* prompt tokens per step: 32 measured 20% slower (Q8_0, AVX-512) */

enum { SESSION_SET_TEMP, SESSION_SET_TOP_K, SESSION_SET_TOP_P, SESSION_SET_MIN_P };

typedef struct {
    const char *model_path;
    int use_mmap;            /* --no-mmap sets 0 */
    int64_t n_ctx;           /* -c; 0 = default_ctx, else min(4096, the model's context) */
    uint32_t default_ctx;    /* the command's own default context (logits, bench), or 0 */
    KvType kv_type;          /* --kv-type, default f16 */
    int64_t batch;           /* -b, prompt tokens per forward step */
    int64_t threads;         /* -t; 0 = online cores (one fewer when streaming) */
    int thinking;            /* enable_thinking: 1, 0, -1 the template's default (resolved by session_open) */
    SamplerParams sampling;  /* defaults from `thinking` unless set */
    int sampling_set[8];     /* which of temp/top-k/top-p/min-p (SESSION_SET_*) were given */
    int64_t seed;            /* -1: from the clock */
    const char *trace_path;  /* --trace FILE */
    const char *template_name; /* --template NAME: overrides the template found in the model */
    /* A command's own buffers (e.g. the server's) join the one arena: it
     * adds them to the plan here and carves them after session_open. */
    void (*plan_extra)(void *ctx, Plan *p);
    void *plan_extra_ctx;
    int show_plan;           /* --plan: decide, then stop before mapping (session_open returns 1) */
    uint64_t max_text;       /* longest text encoded at once (set by the command) */
    int64_t keep;            /* --keep N: first positions a context shift keeps */
    int no_shift;            /* --no-shift: a full cache stops generation instead */
    int ignore_eos;          /* --ignore-eos: end-of-generation tokens are never sampled */
    uint64_t max_out_ids;    /* generated ids kept (s->out_ids: --print-ids, --ids-out); 0 = none */
    uint64_t mem;            /* --mem SIZE: the memory budget in bytes; 0 = the default (memplan.h) */
    int load_asked;          /* --load: a LoadMode, or -1: the planner chooses (memplan.h) */
    uint32_t min_ctx;        /* positions the command needs at least (the context is never shrunk below) */
    const char *min_ctx_what;/* what needs them ("--prompt-ids: 12 ids"): then more than the
                                model's context, or than -c, is refused with that name */
    /* the model alone (logits, bench): no tokenizer, sampler or text scratch */
    int model_only;
    int all_logits;          /* logits of every token of a step */
    uint64_t stream_window;  /* --stream-window */
    int stream_keep_cache;   /* --keep-cache */
    uint32_t slots;          /* sequences (serve --slots), each with its KV cache, token history and
                                sampler history; 0 counts as 1 */
    int grammar;             /* plan a grammar (--grammar, --json-schema; serve): session_set_grammar */
    const char *grammar_file;/* --grammar FILE or --json-schema FILE (read by the command) */
    int grammar_is_schema;
} SessionOptions;

typedef struct {
    SessionOptions opt;
    Gguf gguf;
    ModelConfig cfg;
    ModelOptions mopt;
    Model model;             /* the weights: read-only once loaded */
    SeqState seq;            /* the one sequence: KV cache and position */
    Workspace ws;
    Tokenizer tok;
    Sampler sampler;
    Plan plan;               /* the arena's: mem.plan */
    MemBudget budget;        /* --mem, or the default */
    MemRequest req;          /* what was asked of the planner (mem_print) */
    MemDecision mem;         /* the planner's choice: load mode, context, resident total */
    int refused;             /* nothing fits: mem holds the least plan (for --plan) */
    Arena arena;
    void *arena_base;
    int32_t *ids;            /* scratch for encoded text: max_ids */
    int max_ids;
    char *text;              /* scratch for rendered text: opt.max_text + 1 */
    char *piece;             /* scratch for one streamed piece */
    size_t piece_cap;
    char *trace_line;        /* scratch for one --trace line */
    ChatTemplate tmpl;       /* recognised from tokenizer.chat_template */
    char tmpl_name[64];      /* the start of the model's template ("": it has none), for the raw-mode warning */
    int32_t *history;        /* every id in the KV cache, in order: n_ctx */
    int32_t *out_ids;        /* opt.max_out_ids generated ids, or NULL */
    uint32_t n_shifts;       /* context shifts so far */
    /* Slots (opt.slots): slot 0 is seq/history/sampler above; every slot
     * has a KV cache of mopt.n_ctx, a token history and a sampler history. */
    uint32_t n_slots;
    SeqState *slot_seq[SESSION_MAX_SLOTS];
    int32_t *slot_history[SESSION_MAX_SLOTS];
    int32_t *slot_sampler_history[SESSION_MAX_SLOTS];
    SeqState more_seq[SESSION_MAX_SLOTS - 1];
    /* with opt.grammar, each slot's own grammar state (slot 0's is grammar
     * below): several constrained replies decode side by side */
    Grammar *slot_grammar[SESSION_MAX_SLOTS];
    Grammar more_grammar[SESSION_MAX_SLOTS - 1];
    Grammar grammar;         /* with opt.grammar: generation held to it while grammar_on */
    GrammarVocab gvocab;
    int grammar_on;
    double grammar_seconds;  /* spent choosing tokens under the grammar (sampling included) */
    uint32_t grammar_masks;  /* of which walks over the vocabulary for the whole allowed set */
    uint32_t grammar_cached; /* and whole allowed sets taken from the grammar's cache */
    char *grammar_src;       /* SESSION_GRAMMAR_TEXT + 1 bytes each: a file or schema read in, */
    char *grammar_text;      /* and the GBNF made from it */
    double load_seconds;
    char notice[1024];       /* the planner's note for stderr (context shrunk, streaming), or empty */
    char err[768];           /* why the last call failed */
} Session;

void session_defaults(SessionOptions *o);
/* Opens the file once, reads its configuration in one walk, plans once
 * (the planner, memplan.h, chooses the load mode and the context within
 * the memory budget), maps the arena and loads everything. Returns 0; 1
 * with opt.show_plan once the plan is decided (nothing mapped: the caller
 * prints it with mem_print); -1 with s->err (s->refused: the planner
 * refused, and mem holds the least plan to show). */
int session_open(Session *s, const SessionOptions *o);
void session_close(Session *s);

/* Renders [system], user (user_len bytes: may hold NUL bytes) with the
 * model's template into s->text; returns its length, or -1 (s->err) when
 * it is longer than planned. continuation: the turn follows earlier turns
 * already in the cache (ChatOptions). */
int64_t session_render_user(Session *s, const char *system, const char *user, size_t user_len,
                            int add_generation_prompt, int continuation);

/* Grammars (opt.grammar): tokens longer than SESSION_GRAMMAR_PIECE bytes
 * are never offered under one. */
#define SESSION_GRAMMAR_PIECE 512
#define SESSION_GRAMMAR_TEXT GRAMMAR_MAX_TEXT
/* Holds what session_generate samples to the GBNF text[0..len) from the
 * next token on, until session_clear_grammar (the state starts over here).
 * -1 with "name: LINE:COL: what" in s->err if it does not compile. */
int session_set_grammar(Session *s, const char *text, size_t len, const char *name);
void session_clear_grammar(Session *s);
/* Compiles a grammar into slot `slot`'s state (opt.grammar). 0, or -1
 * with s->err. */
int session_slot_grammar(Session *s, uint32_t slot, const char *text, size_t len, const char *name);
/* Samples the next id from logits with sampler sm, held to grammar g
 * unless g is NULL (the id is then taken into g's state), and accepts it
 * into sm. 0, or -1 with s->err. */
int session_sample_with(Session *s, Sampler *sm, Grammar *g, float *logits, int32_t *out);

/* Sampling parameters for what follows (a server request's), and a fresh
 * sampler state. */
void session_set_sampling(Session *s, const SamplerParams *sp);
/* Feeds ids from the current cache position. -1 (s->err) when they do not
 * fit or the forward pass fails. */
int session_prefill(Session *s, const int32_t *ids, int n);
/* Feeds a whole context ids[0..n-1] (1 <= n < n_ctx), reusing the longest
 * prefix the cache already holds (the last id is always fed, for its
 * logits); *n_cached receives the ids reused. */
int session_prefill_reuse(Session *s, const int32_t *ids, int n, uint32_t *n_cached);

/* Makes room for n more positions in the KV cache, shifting the context
 * (context_shift.h: the first --keep positions stay, half of the rest is
 * dropped) as often as needed. Returns 0, 1 if they cannot fit
 * (--no-shift, or --keep leaves too little), -1 on an error (s->err). */
int session_make_room(Session *s, uint32_t n);

/* -1 (s->err, and the sequence is emptied) if the last logits hold NaN or
 * +Inf, or are all -Inf: broken weights; 0 if they can be sampled. */
int session_check_logits(Session *s);
/* The same for one row of logits of sequence q (a batched step's). */
int session_check_row(Session *s, const float *logits, SeqState *q);

/* A row of logits of a batched step, scanned by session_scan_rows: what
 * session_check_row tests, and the best id once --ignore-eos has masked
 * the end tokens (the lowest id on ties, never a NaN's). */
typedef struct {
    int32_t best;
    uint8_t bad;              /* a NaN or +Inf */
    uint8_t any;              /* a logit above -Inf */
} SessionScan;
/* Scans rows [0, n) of logits (n_vocab apart; n <= SESSION_MAX_SLOTS)
 * with the threads: each takes the columns it computed in the output
 * matmul, of every row, while they are in its cache (pith serve's step
 * would otherwise read every row on one thread while the others wait). */
void session_scan_rows(Session *s, float *logits, int n, SessionScan *out);
/* session_check_row from a scan. */
int session_check_scan(Session *s, const SessionScan *sc, SeqState *q);
/* session_sample_with, taking the scan's best id when that is the choice
 * (no grammar, sampler_plain_greedy). */
int session_sample_scan(Session *s, Sampler *sm, Grammar *g, float *logits, const SessionScan *sc, int32_t *out);
/* Samples the next token from the last logits into *id, writing a --trace
 * line when asked. -1 (s->err) if the logits are not finite (NaN/Inf
 * weights). */
int session_sample(Session *s, int32_t *id);

/* Why session_generate stopped. */
typedef enum {
    GEN_EOG,          /* an end-of-generation token was sampled (not counted, not fed) */
    GEN_LENGTH,       /* max_tokens generated */
    GEN_CONTEXT_FULL, /* the cache is full and cannot shift (--no-shift) */
    GEN_CALLER,       /* on_token or stop_requested said stop (their value in caller_code) */
    GEN_ERROR         /* s->err says why; the sequence is emptied */
} GenStop;

typedef struct {
    int64_t max_tokens;
    int feed_last;    /* feed the last token too, so a next turn continues it (chat) */
    /* Each generated token, after it is counted (and kept in s->out_ids):
     * nonzero stops. */
    int (*on_token)(void *ctx, int32_t id);
    /* Before each token is sampled: nonzero stops (Ctrl-C). */
    int (*stop_requested)(void *ctx);
    void *ctx;
} GenOptions;

typedef struct {
    GenStop stop;
    int n_gen;        /* tokens generated (each given to on_token) */
    int n_fed;        /* of them, fed into the cache */
    int caller_code;  /* on_token's or stop_requested's nonzero value */
    double t_first;   /* seconds from the call to the first sampled token */
} GenResult;

/* The one generation loop of run, chat and serve: from the logits of the
 * last fed token, sample, hand the token to the caller, feed it (shifting
 * a full context unless --no-shift), until a stop. Returns 0, or -1 on an
 * error (r->stop == GEN_ERROR, s->err). */
int session_generate(Session *s, const GenOptions *g, GenResult *r);

/* Writes the text of token id to stdout through the UTF-8 stream; returns
 * -1 when stdout is closed. */
int session_emit(Session *s, TokenStream *ts, int32_t id);

#endif
