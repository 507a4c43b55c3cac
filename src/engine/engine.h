/* This folder: src/engine/ - a model ready to run (the engine) and the
 * sequences it runs (slots): the one open path, the one memory plan, the
 * one step function; every failure returned as a status and one line. May
 * call every folder below it (base, arena, kernels, gguf, model, text) and
 * port/. Every command and the server reach the model only through here. */
/* engine.h - the engine and its slots, split as llama.cpp splits
 * llama_model from llama_context and whisper.cpp whisper_context from
 * whisper_state:
 *
 *  - Engine: what is loaded once and shared: the GGUF index, the weights,
 *    the tokenizer, the chat template, the kernel set, the workspace a
 *    step computes in, and the scratch every slot borrows in turn. Nothing
 *    of it carries from one step to the next.
 *  - Slot: one sequence: its KV cache (and recurrent state), the ids in
 *    it, its sampler (seed and penalty history), its grammar state, its
 *    stop state and the text pipeline of its reply (UTF-8, stop strings,
 *    the think split, tool calls).
 *
 * engine_step advances any set of slots by one forward pass: the next
 * token of every generating slot and prompt chunks of the slots still
 * prefilling, then each slot with logits samples, stops or hands its text
 * to its sink. `pith run` and `chat` drive one slot (engine_run_slot);
 * `pith serve` drives N and decides which request goes to which slot;
 * `logits` and `bench` feed ids with engine_feed. Sampling, stopping,
 * grammar masking, tool-call parsing, context shift and prefix reuse are
 * written here once.
 *
 * Memory: engine_open plans everything in one arena before it maps it
 * (the planner in model/memplan.h chooses the load mode and the context).
 * A command's own buffers join the same plan (EngineOptions.plan_extra).
 *
 * Errors are returned, never ended: a failed call returns -1 and leaves a
 * PithStatus and one line ("FILE: what", no "pith: ", no newline) in the
 * engine (e->status, e->err) or, for what a slot does, in the slot
 * (s->status, s->err). The command layer prints and exits 2; the server
 * answers with the HTTP status the code maps to. */
#ifndef PITH_ENGINE_H
#define PITH_ENGINE_H

#include <stdint.h>

#include "../arena/arena.h"
#include "../base/status.h"
#include "../gguf/gguf.h"
#include "../model/forward.h"
#include "../model/memplan.h"
#include "../model/model.h"
#include "../text/chat.h"
#include "../text/chat_request.h"
#include "../text/grammar.h"
#include "../text/reply_text.h"
#include "../text/sampler.h"
#include "../text/tokenizer.h"
#include "../text/tool_calls.h"

#define ENGINE_MAX_SLOTS 16     /* sequences one engine can hold (pith serve --slots) */
#define ENGINE_DEFAULT_BATCH 64 /* prompt tokens per step: 32 measured 20% slower (Q8_0, AVX-512) */
#define ENGINE_MAX_BATCH MODEL_MAX_BATCH

/* Grammars: tokens longer than ENGINE_GRAMMAR_PIECE bytes are never
 * offered under one; a grammar's or schema's text is at most
 * ENGINE_GRAMMAR_TEXT bytes. */
#define ENGINE_GRAMMAR_PIECE 512
#define ENGINE_GRAMMAR_TEXT GRAMMAR_MAX_TEXT
#define ENGINE_TRACE_LINE_CAP (512 * 1024) /* one --trace JSON line */
#define ENGINE_DEFAULT_DRAFT_MAX 16 /* --draft-max: llama.cpp's default */


/* The kernel set (kernels.h): the best for this CPU, the reference C
 * kernels, or on an AVX-512 CPU the AVX2 ones (bench --ref, --no-avx512). */
enum { ENGINE_KERNELS_BEST = 0, ENGINE_KERNELS_REFERENCE = 1, ENGINE_KERNELS_NO_AVX512 = 2 };

/* Speculative decoding (--spec-type: the list's order): drafts come from
 * n-grams of the slot's own ids (prompt lookup), or from a draft model's
 * greedy choices (-md). ENGINE_SPEC_DEFAULT: draft-simple with a draft
 * model, else none (resolved by engine_open). */
enum { ENGINE_SPEC_DEFAULT = -1, ENGINE_SPEC_NONE = 0, ENGINE_SPEC_NGRAM_SIMPLE = 1, ENGINE_SPEC_DRAFT_SIMPLE = 2 };

/* Which sampling settings the user gave (EngineOptions.sampling_set): the
 * others follow the thinking mode's defaults. */
enum { ENGINE_SET_TEMP, ENGINE_SET_TOP_K, ENGINE_SET_TOP_P, ENGINE_SET_MIN_P };

typedef struct {
    const char *model_path;
    int use_mmap;            /* --no-mmap sets 0 */
    int64_t n_ctx;           /* -c; 0 = default_ctx, else min(4096, the model's context) */
    uint32_t default_ctx;    /* the command's own default context (logits, bench), or 0 */
    KvType kv_type;          /* --kv-type, default f16 */
    int64_t batch;           /* -b, prompt tokens per forward step */
    int64_t threads;         /* -t; 0 = online cores (one fewer when streaming) */
    int kernels;             /* ENGINE_KERNELS_* */
    int thinking;            /* enable_thinking: 1, 0, -1 the template's default (resolved by engine_open) */
    SamplerParams sampling;  /* defaults from `thinking` unless set */
    int sampling_set[8];     /* which of temp/top-k/top-p/min-p (ENGINE_SET_*) were given */
    int64_t seed;            /* -1: from the clock */
    const char *trace_path;  /* --trace FILE */
    const char *template_name; /* --template NAME: a built-in template instead of the model's */
    const char *template_file; /* --chat-template-file FILE: a Jinja template instead of the model's */
    /* A command's own buffers (e.g. the server's) join the one arena: it
     * adds them to the plan here and carves them after engine_open. */
    void (*plan_extra)(void *ctx, Plan *p);
    void *plan_extra_ctx;
    int show_plan;           /* --plan: decide, then stop before mapping (engine_open returns 1) */
    uint64_t max_text;       /* longest text encoded at once (set by the command) */
    int64_t keep;            /* --keep N: first positions a context shift keeps */
    int no_shift;            /* --no-shift: a full cache stops generation instead */
    int ignore_eos;          /* --ignore-eos: end-of-generation tokens are never sampled */
    uint64_t max_out_ids;    /* generated ids each slot keeps (Slot.out_ids: --print-ids, --ids-out); 0 = none */
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
    int grammar;             /* plan a grammar state per slot (--grammar, --json-schema; serve) */
    const char *grammar_file;/* --grammar FILE or --json-schema FILE (read by the command) */
    int grammar_is_schema;
    int tool_calls;          /* plan a tool-call splitter per slot (serve) */
    int token_probs;         /* plan Slot.probs: a SamplerLogprobs per position per slot (serve's logprobs) */
    int spec_type;           /* --spec-type: ENGINE_SPEC_* */
    const char *draft_path;  /* -md FILE: the draft model */
    int64_t draft_max;       /* --draft-max: most drafted tokens a step verifies (adaptive below it) */
    int spec_test_broken;    /* tests only: a wrong acceptance rule, to show the distribution test fails */
} EngineOptions;

/* ---- Slots ---------------------------------------------------------------- */

typedef enum {
    SLOT_IDLE = 0,   /* nothing to do; its cache still holds its last ids (prefix reuse) */
    SLOT_PROMPT,     /* prompt ids wait to be fed */
    SLOT_GENERATING, /* a sampled token waits to be fed */
    SLOT_DONE        /* stopped: Slot.stop says why, until slot_release */
} SlotState;

typedef enum {
    SLOT_STOP_NONE = 0,
    SLOT_STOP_EOG,     /* an end-of-generation token was sampled (not counted, not fed) */
    SLOT_STOP_WORD,    /* a stop string was generated (not shown) */
    SLOT_STOP_LENGTH,  /* n_predict tokens generated */
    SLOT_STOP_CONTEXT, /* the cache is full and cannot shift (--no-shift): the last token is not fed */
    SLOT_STOP_CALLER,  /* the sink's token() asked, or slot_cancel */
    SLOT_STOP_ERROR    /* Slot.status and Slot.err say why; the sequence is emptied */
} SlotStop;

/* Where a slot's reply goes, as it is generated. Any callback may be NULL. */
typedef struct {
    void (*begin)(void *ctx);  /* the prompt is in: the reply begins (before any text) */
    /* text of the reply, REPLY_CONTENT or REPLY_REASONING (reply_text.h) */
    void (*text)(void *ctx, int kind, const char *p, size_t n);
    /* a tool call split out of the content (tool_calls.h: ToolSplit's call
     * and args_piece) */
    void (*tool_call)(void *ctx, int index, const char *name, size_t name_len, const char *args, size_t args_len);
    void (*tool_args)(void *ctx, int index, const char *p, size_t n);
    /* after each generated token and its text: nonzero stops (SLOT_STOP_CALLER) */
    int (*token)(void *ctx, int32_t id);
    void *ctx;
} SlotSink;

/* What a prompt asks of its reply (slot_start, slot_append). */
typedef struct {
    SamplerParams sampling;  /* slot_start: its sampler starts from these (slot_append keeps the sampler) */
    int64_t n_predict;       /* most tokens to generate; -1: no limit */
    int feed_last;           /* the last token is fed too, so that a next turn continues it (chat) */
    SlotSink sink;
    ReplyText text;          /* stop strings and the think split, set up by the caller
                                (reply_text_init: its emit is replaced by the slot's) */
    const char *grammar;     /* GBNF the reply is held to, or NULL (slot_start compiles it) */
    size_t grammar_len;
    const char *grammar_name;/* names it in errors */
    int tools;               /* split tool calls out of the content (needs EngineOptions.tool_calls) */
    ToolFormat tool_format;
    int tool_progressive;    /* tool_split_progressive: streamed arguments... */
    int tool_held;           /* ...of calls a grammar holds */
    const char *tool_body;   /* TOOL_FORMAT_XML: the request and the offset of its tools, for */
    size_t tool_body_len;    /* tool_split_schemas (TOOL_ABSENT: none) */
    size_t tool_offset;
    int probs;               /* SLOT_PROBS_*: each generated token's log probabilities into Slot.probs */
    int no_reuse;            /* slot_start computes the whole prompt, whatever the cache shares with it */
} SlotRequest;

/* Which distribution SlotRequest.probs reports (sampler_logprobs): the
 * one each token was drawn from, or the model's own (the raw logits). */
enum { SLOT_PROBS_NONE = 0, SLOT_PROBS_DRAWN, SLOT_PROBS_RAW };

/* Fills a request with no limit, no stop string, no grammar, no tools
 * and the engine's sampling settings. */
struct Engine;
void slot_request_defaults(const struct Engine *e, SlotRequest *rq);

typedef struct Slot {
    uint32_t index;
    SeqState seq;            /* its KV cache (and recurrent state) and position */
    int32_t *history;        /* every id in the cache, in order: n_ctx */
    Sampler sampler;         /* shares the engine's scratch tables, owns its history and PRNG */
    Grammar grammar;         /* with EngineOptions.grammar */
    int grammar_on;
    int32_t *out_ids;        /* EngineOptions.max_out_ids generated ids, or NULL */
    SamplerLogprobs *probs;  /* EngineOptions.token_probs: generated token i's (n_ctx of them), or NULL */
    ToolSplit split;         /* with EngineOptions.tool_calls */
    char *split_buf;         /* its block buffer and the table of string parameters */
    /* the prompt and reply under way */
    SlotState state;
    SlotStop stop;
    SlotRequest rq;
    TokenStream ts;
    uint32_t n_prompt;       /* ids of the prompt, in history (fed up to seq.n_past) */
    uint32_t n_cached;       /* of them, reused from the cache */
    int n_gen;               /* tokens generated (each handed to the sink) */
    int32_t pending;         /* SLOT_GENERATING: the token to feed next */
    uint32_t fed;            /* prompt ids the last step fed */
    int began;               /* the prompt's logits came: the reply has begun */
    int stopped_word;        /* the text met a stop string */
    double t_start, t_begin, t_first, t_end; /* port_seconds(): start, prompt done, first token, stop */
    /* speculative decoding (EngineOptions.spec_type) */
    void *spec_undo;         /* what a verification step overwrites (seq_undo_save), planned per slot */
    uint32_t spec_k;         /* most drafts the next step verifies: adapts to the acceptance */
    uint32_t spec_wait;      /* steps left without drafting after the drafts kept failing */
    uint32_t spec_drafted;   /* the step's drafts, after the pending token in history */
    uint32_t n_drafted, n_accepted; /* this reply's drafted tokens, and of them those accepted */
    PithStatus status;       /* SLOT_STOP_ERROR: why */
    char err[768];
} Slot;

/* ---- The draft model (draft.c) ----------------------------------------------- */

/* A smaller model of the same vocabulary that drafts for the engine's
 * (-md): read into its own share of the one arena (one row of the plan),
 * with a KV cache per slot and the ids that cache holds. */
typedef struct {
    Gguf gguf;
    ModelConfig cfg;
    ModelOptions mopt;       /* the engine's context and batch, LOAD_READ */
    Model model;
    Workspace ws;
    SeqState seq[ENGINE_MAX_SLOTS];
    int32_t *ids[ENGINE_MAX_SLOTS]; /* the ids in each slot's draft cache: n_ctx */
    uint32_t high[ENGINE_MAX_SLOTS];/* positions ever written since the cache was emptied (its rings' rows) */
    int open;
} EngineDraft;

/* ---- The engine ------------------------------------------------------------ */

typedef struct Engine {
    EngineOptions opt;
    Gguf gguf;
    ModelConfig cfg;
    ModelOptions mopt;
    Model model;             /* the weights: read-only once loaded */
    Workspace ws;
    Tokenizer tok;
    Sampler sampler;         /* the scratch tables the slots' samplers share */
    Plan plan;               /* the arena's: mem.plan */
    MemBudget budget;        /* --mem, or the default */
    MemRequest req;          /* what was asked of the planner */
    MemDecision mem;         /* the planner's choice: load mode, context, resident total */
    int refused;             /* nothing fits: mem holds the least plan (for --plan) */
    Arena arena;
    void *arena_base;
    uint32_t n_ctx;          /* positions each slot's cache holds */
    uint32_t n_vocab;
    uint32_t batch;          /* most tokens a step feeds */
    int32_t *ids;            /* scratch for encoded text: max_ids */
    int max_ids;
    char *text;              /* scratch for rendered text: opt.max_text + 1 */
    char *piece;             /* scratch for one streamed piece */
    size_t piece_cap;
    char *trace_line;        /* scratch for one --trace line */
    ChatTemplate tmpl;       /* the built-in template when no Jinja one renders (--template, or ChatML) */
    JinjaTemplate *jinja;    /* the model's own template (or --chat-template-file), parsed; NULL: tmpl renders */
    ChatRenderer chat;       /* what renders conversations (chat_request.h) */
    int no_template;         /* the model carries no template and none was named: ChatML renders */
    int thinking_given;      /* enable_thinking was set (--think, --no-think): the template gets it */
    int jinja_thinks;        /* the Jinja template thinks unless told not to */
    ToolFormat tool_format;  /* how the template's model writes a tool call (tool_calls.h) */
    int no_system;           /* the template refuses a system message (tools then go in the first user turn) */
    char bos_text[256], eos_text[256]; /* the template's bos_token and eos_token */
    char turn_end[32];       /* what closes an assistant turn after its content ("<|im_end|>\n") */
    uint64_t template_bytes; /* of the Jinja template's text (0: a built-in one renders) */
    char *chat_scratch;      /* engine_render_user's working memory */
    uint64_t chat_scratch_cap;
    GrammarVocab gvocab;
    char *grammar_src;       /* ENGINE_GRAMMAR_TEXT + 1 bytes each: a file or schema read in, */
    char *grammar_text;      /* and the GBNF made from it */
    double grammar_seconds;  /* spent choosing tokens under a grammar (sampling included) */
    uint32_t grammar_masks;  /* of which walks over the vocabulary for the whole allowed set */
    uint32_t grammar_cached; /* and whole allowed sets taken from the grammar's cache */
    uint32_t n_shifts;       /* context shifts so far */
    uint64_t model_hash;     /* prompt_cache.c: the model files' headers hashed, once (0: not yet) */
    uint32_t n_slots;
    Slot slots[ENGINE_MAX_SLOTS];
    EngineDraft draft;       /* -md */
    double load_seconds;
    char notice[1024];       /* the planner's note for stderr (context shrunk, streaming), or empty */
    PithStatus status;       /* why the last engine call failed */
    char err[768];
} Engine;

void engine_defaults(EngineOptions *o);
/* Opens the file once, reads its configuration in one walk, plans once
 * (the planner chooses the load mode and the context within the memory
 * budget), maps the arena and loads everything, slots included. Returns 0;
 * 1 with opt.show_plan once the plan is decided (nothing mapped:
 * engine_print_plan shows it); -1 with e->status and e->err (e->refused:
 * the planner refused, and engine_print_plan shows the least plan). */
int engine_open(Engine *e, const EngineOptions *o);
void engine_close(Engine *e);
/* The planner's table and decision (--plan), on stdout. */
void engine_print_plan(const Engine *e);
/* The lines bug reports need (pith --version, --plan): the board profile
 * (board != 0), the memory budget, the page size, the kernel set. */
void engine_print_system(int board);

/* What `run` and `bench` print about a loaded engine. */
typedef struct {
    const char *load;        /* "mmap", "read", "stream" */
    const char *kernels;     /* the kernel set's name */
    uint64_t arena_bytes, planned_bytes, budget_bytes, weight_bytes;
    const char *budget_source;
    uint32_t n_layer, n_embd, n_vocab, n_ctx, batch;
    int threads;
    uint64_t bytes_per_token;/* weights a generated token reads: every layer matrix and the output */
    char matrix_types[256];  /* "Q4_K x168, Q6_K x29" */
    int streamed;            /* --load stream: the rest is set */
    uint64_t stream_slot_bytes, stream_read_per_token;
    uint32_t stream_resident_layers, stream_out_chunks, stream_out_chunk_rows;
} EngineInfo;
void engine_info(const Engine *e, EngineInfo *out);

/* Renders [system], user (user_len bytes: may hold NUL bytes) with the
 * model's template into e->text, thinking or not; returns its length, or
 * -1 (e->err) when it is longer than planned. continuation: the turn
 * follows earlier turns already in the cache (ChatOptions). */
int64_t engine_render_user(Engine *e, const char *system, const char *user, size_t user_len, int add_generation_prompt,
                           int continuation, int thinking);
/* What closes an assistant turn after its content, as the template writes
 * it ("<|im_end|>\n"): a chat feeds it before its next user turn. */
const char *engine_turn_end(const Engine *e);
/* 1 if a reply to this prompt starts inside a think block: the prompt, as
 * the model's template rendered it, ends with an open "<think>" (a
 * built-in template: it thinks and its generation prompt opens one). */
int engine_opens_think(const Engine *e, int thinking, const char *prompt, size_t len);
/* 1 if no template renders (--template raw): message texts are fed as they are. */
int engine_template_is_raw(const Engine *e);
/* Token ids of text into e->ids: a whole prompt (BOS first when the model
 * asks for it, unless the text wrote it: start = 1), or text that follows
 * others (start = 0; special tokens parsed in both). The count, or -1 when
 * it does not fit e->ids. */
int engine_tokenize(Engine *e, const char *text, size_t len, int start);

/* Reads --grammar FILE / --json-schema FILE (opt.grammar_file) into the
 * engine's grammar buffers, a schema translated to GBNF: 0 with *text and
 * *len set (NULL without a file), or -1 (e->status, e->err). */
int engine_read_grammar(Engine *e, const char **text, size_t *len);

/* Holds what slot s samples to the GBNF text[0..len) (NULL: no grammar)
 * from its next reply on; each reply starts the grammar over. 0, or -1
 * with "name: LINE:COL: what" in s->err (PITH_BAD_INPUT). */
int slot_set_grammar(Engine *e, Slot *s, const char *text, size_t len, const char *name);
/* The slot i (i < e->n_slots). */
Slot *engine_slot(Engine *e, uint32_t i);
/* Ids the slot's cache holds that begin ids[0..n). */
uint32_t slot_common_prefix(const Slot *s, const int32_t *ids, int n);
/* Copies the first n positions slot src holds (their ids and state) into
 * slot dst, which then holds just those: a prompt that shares a prefix
 * with what another slot computed starts from there. Returns n, or 0 when
 * src cannot give them (it holds fewer, or its sliding-window rings or
 * recurrent state have gone past them: seq_can_resume). */
uint32_t slot_copy_prefix(Engine *e, Slot *dst, const Slot *src, uint32_t n);
/* Whether slot s can still give its first n positions (to slot_copy_prefix
 * or slot_cache_save): it holds them, and its rings or recurrent state
 * have not gone past them. */
int slot_holds_prefix(const Engine *e, const Slot *s, uint32_t n);
/* Prompt cache files (prompt_cache.c): slot_cache_save writes the slot's
 * first n positions (n <= seq.n_past: their ids and state) to path, whole
 * or not at all; slot_cache_load puts a file's state into slot s (emptied
 * first), where slot_start then reuses what a prompt shares with it. The
 * file names its model (a hash of the files' headers), KV type and layout
 * and holds checksums: a file of another model, type or layout, truncated,
 * damaged, unreadable or unwritable is not used (the slot stays empty).
 * Both return 0 (the file's size in *bytes, if not NULL), or 1 with one
 * line for the user in warn; never fail. */
int slot_cache_save(Engine *e, Slot *s, uint32_t n, const char *path, uint64_t *bytes, char *warn, size_t cap);
int slot_cache_load(Engine *e, Slot *s, const char *path, uint64_t *bytes, char *warn, size_t cap);
/* How many of ids[0..n) a cache file for slot s begins with (its ids read
 * in pieces, its state not read): 0 also when the file is not one slot s
 * could load (another model, type or layout, damaged header). */
uint32_t slot_cache_common(Engine *e, const Slot *s, const char *path, const int32_t *ids, uint32_t n);
/* A cache file's name for the ids[0..n) of this model:
 * "pith-<16 hex digits>.kv" (out: at least 32 bytes). */
void slot_cache_file_name(Engine *e, const int32_t *ids, uint32_t n, char *out, size_t cap);
/* A new prompt ids[0..n) (1 <= n < n_ctx) in slot s: the longest prefix its
 * cache already holds is reused (the last id is always fed, for its
 * logits), its sampler starts from rq->sampling with the prompt as its
 * history, rq->grammar is compiled. The slot goes to SLOT_PROMPT. 0, or -1
 * (s->status, s->err: a grammar that does not compile, a prompt that does
 * not fit). */
int slot_start(Engine *e, Slot *s, const int32_t *ids, int n, const SlotRequest *rq);
/* ids[0..n) after what the slot holds (a chat's next turn): room is made
 * for them and one more token (shifting the context), the sampler goes on,
 * the grammar starts over. 0; 1 when they cannot fit (--no-shift, or
 * --keep leaves too little); -1 on an error (s->status, s->err). */
int slot_append(Engine *e, Slot *s, const int32_t *ids, int n, const SlotRequest *rq);
/* Ends the reply after the token now waiting (it is still fed): chat's
 * Ctrl-C. */
void slot_stop_soon(Slot *s);
/* Stops the slot now: nothing more is fed or written (a client gone). */
void slot_cancel(Slot *s);
/* Done with the reply: the slot is idle again (its cache kept for reuse). */
void slot_release(Slot *s);
/* Empties the slot's cache (the next prompt starts at position 0). */
void slot_reset(Slot *s);

/* One forward step over slots[0..n) (at most ENGINE_MAX_SLOTS, in the
 * caller's order of priority): the waiting token of every generating slot,
 * then prompt chunks of the prefilling ones, in order, in what is left of
 * the batch. Each slot whose logits come out samples its next token
 * (handing its text to the sink) or stops. Returns how many slots took
 * part (0: none had work). A failure stops the slots it touches
 * (SLOT_DONE with SLOT_STOP_ERROR); the others go on. */
int engine_step(Engine *e, Slot *const *slots, int n);
/* Steps one slot until it is done: a prompt's progress on a terminal, and
 * stop_requested (if not NULL) asked before each generated token (nonzero:
 * slot_stop_soon). */
void engine_run_slot(Engine *e, Slot *s, int (*stop_requested)(void *ctx), void *ctx);

/* The model alone (logits, bench): feeds ids[0..n) (n <= the batch) to
 * slot s from its position; logits of every id with all_logits (planned
 * by EngineOptions.all_logits), else the last one's. 0, or -1 (e->err). */
int engine_feed(Engine *e, Slot *s, const int32_t *ids, int n, int all_logits);
/* Feeds any number of ids in steps of the batch (a prompt). */
int engine_prefill(Engine *e, Slot *s, const int32_t *ids, int n);
/* Prompt lookup (speculative.c): drafts up to max ids that should follow
 * ids[0..n) into out: what followed the latest earlier occurrence of
 * ids' last SPEC_NGRAM ids (continued with the drafts themselves when it
 * reaches the end). Returns how many (0: no occurrence). */
#define SPEC_NGRAM 3
uint32_t spec_ngram_draft(const int32_t *ids, uint32_t n, int32_t *out, uint32_t max);

/* The draft model (draft.c): draft_open reads its configuration and
 * checks it can draft for the engine's model (after the engine's
 * configuration is read); draft_plan adds its share for the engine's
 * options mo; draft_load carves and loads it (after the engine's model);
 * draft_close. 0, or -1 with e->status and e->err. */
int draft_open(struct Engine *e);
void draft_plan(const struct Engine *e, const ModelOptions *mo, Plan *p);
int draft_load(struct Engine *e);
void draft_close(struct Engine *e);
/* Up to max greedy choices of the draft model after ids[0..n) of slot s
 * (its cache catches up first) into out; how many (0 on a failed step:
 * the slot then decodes plainly). */
uint32_t draft_model_tokens(struct Engine *e, Slot *s, uint32_t n, int32_t *out, uint32_t max);

/* The logits rows of the last step: rows of e->n_vocab floats. */
float *engine_logits(Engine *e, uint32_t *rows);

#endif
