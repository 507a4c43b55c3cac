/* forward.h - the forward pass: weights (model.h, read-only and shared),
 * the state of one sequence, and the workspace a step computes in.
 *
 * One code path: a step feeds up to the workspace's batch of tokens of one
 * sequence at consecutive positions (a prompt in batches, or one token
 * when decoding). Every matmul loops over the weight rows and dots each row
 * with every token of the step, so a batch and the same tokens fed one by
 * one give the same logits; and a sequence's results never depend on what
 * other sequences did with the same weights and workspace in between.
 *
 * Memory: forward_plan adds the weights (model_plan), opt->n_seq sequences
 * and one workspace to a plan; model_load, seq_init (once per sequence) and
 * workspace_init carve them from the arena in that order. */
#ifndef PITH_FORWARD_H
#define PITH_FORWARD_H

#include <stdint.h>

#include "../arena/arena.h"
#include "model.h"
#include "moe.h"
#include "weight_stream.h"

#define FORWARD_MAX_BATCH MODEL_MAX_BATCH
#define FORWARD_MAX_HEAD_DIM MODEL_MAX_HEAD_DIM

/* What changes while one sequence runs: its KV cache and its position.
 * Architectures whose layers keep a recurrent state instead of (or beside)
 * a cache get it here too, recurrent_layer_bytes per recurrent layer
 * (LFM2's short convolutions: shortconv.h; Qwen3.5's DeltaNet layers:
 * deltanet.h). */
typedef struct {
    uint32_t n_ctx;           /* positions the cache holds */
    KvType kv_type;
    void *k_cache, *v_cache;  /* rows of kv_type, [layer][n_head_kv][n_ctx] (kv_row_index) of the
                                 layers that see every position */
    uint32_t ring;            /* rows of a sliding-window layer's ring: min(n_ctx, window + batch - 1),
                                 the window of a step's first token plus the step (0: no such layer) */
    void *k_ring, *v_ring;    /* [windowed layer][n_head_kv][ring], position p in row p % ring */
    uint32_t n_past;          /* positions of the cache that are filled */
    uint8_t *recurrent;       /* [recurrent layer][recurrent_layer_bytes], or NULL; such a sequence
                                 goes on only from n_past, or again from position 0 */
    uint64_t recurrent_layer_bytes;
} SeqState;

/* Tokens per attention tile (kernels.h: kern_attention): a block of keys is
 * read once for this many tokens of a prompt. */
#define ATT_TOKENS 32

/* The scratch of a forward step, shared by the sequences that take turns
 * in it: activations, the quantized matmul inputs, logits, and (--load
 * stream) the window the weights pass through. */
typedef struct {
    uint32_t batch;           /* most tokens per step */
    uint32_t n_ctx;           /* longest sequence it serves (the scores' rows) */
    int all_logits;           /* logits rows for every token of a step (else only the last) */
    /* activations, [batch][...] */
    float *x, *xb, *q, *k, *v, *att, *hb, *hb2;
    float *scores;            /* [n_head][ATT_TOKENS * KERN_ATT_KEYS]: attention tiles' scores (attention.c) */
    float *dn;                /* Qwen3.5: the DeltaNet layers' scratch, the attention gates (deltanet.h) */
    uint16_t *gelu;           /* GELU's F16 table (kernels.h: gelu_mul), or NULL */
    float *rope;              /* [batch][1 or 2][n_rot]: each token's RoPE cos/sin (two bases with windowed layers) */
    void *act_q8_0, *act_q8_k;/* the step's matmul input quantized for the kernels (kernels.h) */
    void *act_mid;            /* the input of the second matrix of a mixer or the FFN (wo, w_down...) quantized (layer.h) */
    int regions_per_op;       /* tests: a parallel region per stage of a layer, as streamed weights run (layer.h) */
    float *logits;            /* [batch or 1][n_vocab] */
    uint32_t n_logits;        /* rows of logits filled by the last step */
    uint32_t logit_rows;      /* rows of logits planned: batch with all_logits, else one per sequence */
    SeqState **tok_seq;       /* [batch] each token's sequence in a step */
    uint32_t *tok_pos;        /* [batch] its position */
    int32_t *tok_id;          /* [batch] its id */
    float *conv;              /* [batch][3 n_embd]: a short-convolution layer's in_proj output (or NULL) */
    MoeScratch moe;           /* a mixture of experts' routing and slots (moe.h) */
    float *pe;                /* Gemma 4: [batch][n_layer][n_embd_pe] each token's per-layer inputs (pe.c) */
    uint8_t *pe_rows;         /* their table's rows read for the step (the table not mapped), or NULL */
    WeightStream stream;      /* the model is streamed (LOAD_STREAM) */
    char err[256];            /* why the last step failed */
} Workspace;

/* Adds the weights, opt->n_seq sequences' KV caches (n_ctx each) and the
 * workspace to the plan. */
void forward_plan(const ModelConfig *cfg, const ModelOptions *opt, Plan *plan);
/* Carves one sequence with opt's context and cache type (after
 * model_load). Returns 0, or -1 if the arena is short. */
int seq_init(SeqState *s, const ModelConfig *cfg, const ModelOptions *opt, Arena *arena);
/* Layer `layer`, kv head `head` of a sequence (attention.c): its cache rows (position p
 * in row p % *rows: a ring for windowed layers) in *k and *v. */
void seq_kv_head(const ModelConfig *c, const SeqState *s, uint32_t layer, uint32_t head, uint8_t **k, uint8_t **v,
                 uint32_t *rows);
/* Whether feeding may go on from position pos0 (<= n_past): the rings
 * still hold the window before it. Feeding from n_past always can. */
int seq_can_resume(const ModelConfig *c, const SeqState *s, uint32_t pos0);
/* Empties the sequence (the next token goes to position 0). */
void seq_reset(SeqState *s);
/* The bytes that hold the state of a sequence's first n positions, span by
 * span in a fixed order (the attention layers' kv heads: keys then values
 * of positions 0..n-1, or a windowed layer's whole ring; then every
 * recurrent layer's state): visit gets each span, and may read or fill it.
 * Stops at the first visit that returns nonzero, and returns that; else 0.
 * A prompt cache is these spans in a file (engine/prompt_cache.c). */
int seq_state_spans(const ModelConfig *c, const SeqState *s, uint32_t n, int (*visit)(void *ctx, void *p, uint64_t bytes),
                    void *ctx);
/* Speculative decoding's undo (engine/slot.c): before a step feeds n
 * tokens from s->n_past (pos0), seq_undo_save copies into buf what they
 * overwrite that plain decoding would keep: the windowed layers' ring rows
 * of those positions (they held older positions a later window may still
 * see) and the recurrent state. seq_undo_restore then takes back all but
 * the first keep - pos0 of them: the rings' rows of positions keep.. and
 * the recurrent state go back, n_past becomes keep, or pos0 with a
 * recurrent state (the caller feeds pos0..keep-1 again). seq_undo_bytes:
 * buf's size for steps of n tokens. Attention caches need nothing: rows
 * past n_past are never read. */
uint64_t seq_undo_bytes(const ModelConfig *cfg, const ModelOptions *opt, uint32_t n);
void seq_undo_save(const ModelConfig *c, SeqState *s, uint32_t n, void *buf);
void seq_undo_restore(const ModelConfig *c, SeqState *s, uint32_t pos0, uint32_t n, uint32_t keep, void *buf);
/* Carves the workspace (after the sequences) and starts the stream reader
 * of a streamed model. Returns 0, or -1 with a reason in err. */
int workspace_init(Workspace *ws, const Model *m, const ModelOptions *opt, Arena *arena, GgufError *err);
/* Stops what workspace_init started (the stream reader); call it before
 * unmapping the arena. Harmless otherwise. */
void workspace_close(Workspace *ws);

/* Feeds tokens[0..n-1] of sequence s at positions pos0..pos0+n-1
 * (1 <= n <= ws->batch). pos0 may be at most s->n_past: feeding at an
 * earlier position overwrites the cache from there (e.g. to retry a chat
 * turn). Afterwards s->n_past = pos0 + n. Logits: with all_logits (needs
 * ws->all_logits) row i of ws->logits belongs to tokens[i]; otherwise row 0
 * holds the last token's. Returns 0, or -1 with a one-line reason in
 * ws->err (cache full, bad token, too many tokens, a failed read). */
int forward_batch(const Model *m, Workspace *ws, SeqState *s, const int32_t *tokens, int n, uint32_t pos0,
                  int all_logits);

/* One sequence's share of a step (forward_parts). */
enum { FORWARD_LOGITS_NONE = 0, FORWARD_LOGITS_LAST = 1, FORWARD_LOGITS_ALL = 2 };
typedef struct {
    SeqState *seq;
    const int32_t *tokens;
    int n;                    /* >= 1 */
    uint32_t pos0;            /* <= seq->n_past, as for forward_batch */
    int logits;               /* FORWARD_LOGITS_*: none, its last token's row, or a row per token */
    int logits_row;           /* out: its first row in ws->logits, or -1 */
} ForwardPart;

/* One step over several sequences at once (continuous batching): the
 * parts' tokens (at most ws->batch in all, each sequence once) go through
 * every matmul together, one call per weight for all of them; attention
 * takes each token over its own sequence's cache. A token's arithmetic is
 * the same whatever else shares the step, so each sequence's logits are
 * bit for bit what forward_batch gives it alone. Logits rows follow the
 * parts' order (logits_row); at most ws->logit_rows of them. Returns 0, or
 * -1 with ws->err (nothing is changed by a refused step). */
int forward_parts(const Model *m, Workspace *ws, ForwardPart *parts, int n_parts);

/* Feeds any number of tokens from s->n_past on, in steps of ws->batch;
 * leaves the last token's logits in row 0 of ws->logits. */
int forward_prompt(const Model *m, Workspace *ws, SeqState *s, const int32_t *tokens, int n);

/* RoPE, shared with the context shift, over n_rot elements of a head
 * (rope.dimension_count: the whole head, for every architecture pith runs).
 * forward_rope_table writes cos, sin of pos * base^(-2i/n_rot) / factor[i]
 * for the n_rot/2 pairs (angles in double; pos may be negative, to rotate
 * back; freq_factors is rope_freqs.weight, or NULL for all 1);
 * forward_rope rotates one head's vector with them, pairing (2i, 2i+1) for
 * ROPE_NORM or (i, i + n_rot/2) for ROPE_NEOX. */
void forward_rope_table(float *cs, uint32_t n_rot, double pos, float base, const float *freq_factors);
/* The model's frequencies of RoPE table `table` (0: global layers, 1:
 * windowed ones), with its linear or YaRN scaling (model.h), and the
 * cos, sin table of a position with them. */
void forward_rope_freqs(const ModelConfig *c, uint32_t table, double *freq);
void forward_rope_angles(float *cs, uint32_t n_rot, double pos, const double *freq, const float *freq_factors);
void forward_rope(float *v, uint32_t n_rot, const float *cs, RopeStyle style);

/* Index of the largest of n values (lowest index on a tie). */
int forward_argmax(const float *v, int n);

#endif
