/* layer.h - inside the forward pass: one layer as a list of stages.
 *
 * A layer of a step is, for every architecture (forward.c: layer_plan):
 *   1. per token: the residual of the previous layer, the norm, its
 *      quantization for the mixer's first matrices
 *   the mixer's stages: attention (attention.c), LFM2's short convolution
 *      (shortconv.c) or Qwen3.5's gated DeltaNet (deltanet.c), its output
 *      in Step.mixed
 *   4. per token: the residual, the norm, its quantization
 *   5. gate and up, the same rows of both, then silu(gate) * up on them and
 *      its quantization (rows in whole blocks of w_down's activation format)
 *   6. w_down by rows
 *   (Gemma 4: then its per-layer embedding's three stages, pe.c)
 * A stage is written once and runs either way: all the layers of a step in
 * one parallel region with a barrier after each stage (forward.c:
 * step_worker), or a parallel region per stage (streamed weights, which
 * land between layers; tests' Workspace.regions_per_op). Each element gets
 * the same arithmetic either way and whatever the threads (the same
 * functions on the same rows; quantization by blocks): tests/test_forward.c
 * compares the two.
 *
 * Why stages: a barrier costs less than a parallel region, and a stage
 * does all that needs no other thread's results. With attention by kv head
 * (attention.c: its two stages 2 and 3) a layer has six barriers where a
 * region per operation took 13 regions (a batched step of four tokens,
 * each region ending in a barrier, the small per-token steps between them
 * on one thread).
 *
 * What a stage may rely on: the stages before it are done, on every
 * thread; the one after it starts only when it is done everywhere. So a
 * stage never writes what another thread may still read in it: a mixer's
 * first matrices read the step's input quantized into act_q8_0/act_q8_k,
 * the matrix after them (wo, conv_out, ssm_out; the FFN's w_down) reads
 * act_mid, which its stage before fills while the input may still be
 * read. */
#ifndef PITH_LAYER_H
#define PITH_LAYER_H

#include <stdint.h>

#include "../kernels/kernels.h"
#include "deltanet.h"
#include "forward.h"
#include "model.h"

#define LAYER_MAX_STAGES 14
#define MIXER_MAX_INPUTS 4

/* One layer of a step, as its stages see it. */
typedef struct {
    const Model *m;
    Workspace *ws;
    int n;                    /* tokens of the step: ws->tok_seq, tok_pos say whose and where */
    uint32_t layer;
    const LayerWeights *lw;   /* in a stream slot when streamed */
    ModelConfig lc;           /* the layer's shapes (model_layer_cfg: Gemma 4's kinds differ) */
    const float *post;        /* stage 1: the previous layer's ffn_post_norm, or pe_post_norm after
                                 per-layer embeddings (a norm is never streamed) */
    const float *scale;       /* stage 1: the previous layer's out_scale, or NULL */
    int add;                  /* stage 1: add the previous layer's output (not in layer 0) */
    /* the mixer's, set by its plan */
    const Weight *in[MIXER_MAX_INPUTS]; /* the matrices reading the normed input */
    int n_in;
    float *mixed;             /* its output, [n][n_embd], added to the residual */
    int by_head, att_here;    /* attention: q, k, v by kv head; its output quantized there */
    DeltaNetScratch dn;       /* DeltaNet: the scratch */
} Step;

/* A stage: fn(step, ith, nth) for thread ith of nth. per_token: split by
 * tokens (one token runs on the calling thread, without a region). */
typedef struct {
    void (*fn)(const Step *s, int ith, int nth);
    int per_token;
} Stage;

/* A mixer's plan of layer s->layer for nth threads: sets s's mixer fields,
 * writes its stages to st, returns their count. */
typedef int (*MixerPlan)(Step *s, int nth, Stage *st);
int attention_plan(Step *s, int nth, Stage *st);
int shortconv_plan(Step *s, int nth, Stage *st);
int deltanet_plan(Step *s, int nth, Stage *st);
/* The FFN stages of a layer whose FFN is a mixture of experts (moe.c). */
int moe_plan(Step *s, int nth, Stage *st);
/* Gemma 4's per-layer embedding stages after the FFN (pe.c), and each
 * token's per-layer inputs, before the layers of a step (-1: a row could
 * not be read, the reason in ws->err). */
int pe_plan(Step *s, int nth, Stage *st);
int pe_inputs(const Model *m, Workspace *ws, int n);

/* ---- the stages' tools (layer.c) ---------------------------------------- */

/* the kernel set's (kernels.h: the same bits in every set) */
static inline void layer_rmsnorm(float *out, const float *x, const float *w, uint64_t n, float eps)
{
    kern_active()->rmsnorm(out, x, w, n, eps);
}

/* v += a, element by element: the set's axpy with the factor 1, exact
 * (1 * a[i] is a[i]; fused or not, the one rounding is the sum's), so
 * vectorised at the bits of the scalar add (armv7's NEON flushes
 * subnormal sums to zero, as its other float kernels). */
static inline void layer_add(float *v, const float *a, uint64_t n)
{
    for (uint64_t i = 0; i < n; i += 1u << 30) /* axpy counts in 32 bits */
        kern_active()->axpy_f32(v + i, 1.0f, a + i, (uint32_t)(n - i < 1u << 30 ? n - i : 1u << 30));
}

/* Thread ith of nth takes items [lo, hi) of n (tokens, rows, heads). */
static inline void layer_split(uint64_t n, int ith, int nth, uint64_t *lo, uint64_t *hi)
{
    *lo = n * (uint64_t)ith / (uint64_t)nth;
    *hi = n * (uint64_t)(ith + 1) / (uint64_t)nth;
}

/* Rows of a matrix split between the threads in whole units (blocks). */
static inline void layer_split_units(uint64_t rows, uint64_t unit, int ith, int nth, uint64_t *lo, uint64_t *hi)
{
    layer_split(rows / unit, ith, nth, lo, hi);
    *lo *= unit;
    *hi = ith == nth - 1 ? rows : *hi * unit;
}

/* Token t: x += add, the previous sublayer's output (RMSNorm(add) * post,
 * in place, with a post-norm) if any, times *scale if any; then xb =
 * RMSNorm(x) * norm (none without norm), quantized for the nw weights
 * reading it (forward.c). */
void layer_residual_norm(const ModelConfig *c, Workspace *ws, uint64_t t, float *add, const float *post,
                         const float *scale, const float *norm, const Weight *const *next, int nw);

/* Rows [lo, hi) of w times n activations at act, act_stride bytes apart
 * (w's format: kern_act_format); token t's out at out + t * out_stride. */
void layer_matmul(const Weight *w, uint64_t lo, uint64_t hi, const void *act, uint64_t act_stride, int n, float *out,
                  uint64_t out_stride);
/* Elements per block of w's activation format (1: F32). */
uint64_t layer_act_block(const Weight *w);
/* Columns [c0, c1) of token t's row x (w->cols wide) quantized for w into
 * its buffer: act_mid if mid, else the step input's (c0, c1 on block
 * boundaries; nothing for F32 weights). */
void layer_quantize(Workspace *ws, const Weight *w, int mid, uint64_t t, const float *x, uint64_t c0, uint64_t c1);
/* Rows [lo, hi) of w for the step's n tokens: input x (floats) or its
 * quantized copy (act_mid if mid); token t's out at out + t * out_stride. */
void layer_rows(Workspace *ws, const Weight *w, int mid, const float *x, uint64_t lo, uint64_t hi, int n, float *out,
                uint64_t out_stride);
/* Thread ith's share of the rows of nw matrices reading the step's input
 * (q, k, v): rows split over their concatenation, each into out[i]
 * (w[i]->rows apart). */
void layer_rows_group(const Step *s, const Weight *const *w, float *const *out, int nw, int ith, int nth);
/* RoPE tables per token, filled once per step (forward.c: rope_fill): one,
 * or two when windowed layers have a base of their own (ATTN_SWA: table
 * model_layer_swa(c, layer)). */
static inline uint32_t layer_rope_tables(const ModelConfig *c)
{
    return c->n_swa && (c->arch->attn == ATTN_SWA || c->arch->attn == ATTN_SWA_LAYERS) ? 2 : 1;
}

/* Floats of a table: the wider kind's 2 * pairs (Gemma 4's windowed layers rotate fewer). */
static inline uint32_t layer_rope_stride(const ModelConfig *c)
{
    return c->n_rot > c->n_rot_swa ? c->n_rot : c->n_rot_swa;
}

/* Token t's RoPE table for layer `layer`. */
static inline const float *layer_rope(const Model *m, const Workspace *ws, uint32_t layer, uint64_t t)
{
    const ModelConfig *c = &m->cfg;
    uint32_t n = layer_rope_tables(c);
    return ws->rope + (t * n + (n == 2 ? (uint32_t)model_layer_swa(c, layer) : 0)) * layer_rope_stride(c);
}

#endif
