/* forward.c - the transformer forward pass (Qwen3, Qwen2, llama, SmolLM3, Phi-3, Gemma 3; Qwen3.5, whose
 * DeltaNet layers and attention gate are deltanet.c's) over a sequence's KV cache.
 *
 * Per layer, for the tokens of one step:
 *   h = RMSNorm(x) * attn_norm
 *   q, k, v = Wq h + bq, Wk h + bk, Wv h + bv   (biases if the model has them)
 *   per-head RMSNorm of q and k if the arch has it
 *   RoPE on q and k at each token's position (not in SmolLM3's every fourth
 *   layer; Phi-4-mini: on the first n_rot elements of a head); k, v go into the cache
 *   attention of each q head over its kv head's cache rows 0..pos (causal)
 *   x += Wo attn
 *   h = RMSNorm(x) * ffn_norm
 *   x += Wdown (silu(Wgate h) * (Wup h))
 * then logits = Wout (RMSNorm(x) * output_norm).
 * Everything is float32 (sums of squares and softmax denominators in double),
 * except the input of each matmul with quantized weights, which is quantized
 * to 8 bits per element first, as llama.cpp does (kernels.h). */
#include "forward.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../../port/port.h"
#include "../kernels/kernels.h"
#include "../kernels/quant.h"
#include "shortconv.h"
#include "deltanet.h"
#include "rope_math.h"
#include "weight_stream.h"

static uint64_t kv_width(const ModelConfig *c)
{
    return (uint64_t)c->n_head_kv * c->head_dim;
}

static uint64_t kv_width_v(const ModelConfig *c)
{
    return (uint64_t)c->n_head_kv * c->head_dim_v;
}

/* ---- memory ---------------------------------------------------------- */

/* The buffers, in tables so the plan and the carving cannot disagree. */
typedef struct {
    const char *what;
    uint64_t count;  /* elements (the KV caches: rows) */
    uint64_t elem;   /* bytes per element (per row) */
} Buffer;

enum { S_KCACHE, S_VCACHE, S_KRING, S_VRING, S_RECUR, S_COUNT };
enum { W_X, W_XB, W_Q, W_K, W_V, W_ATT, W_HB, W_HB2, W_SCORES, W_LOGITS, W_ACT0, W_ACTK, W_ACTM, W_TSEQ, W_TPOS,
       W_TID, W_RECUR, W_GELU, W_ROPE, W_COUNT };

/* Widest input of any matmul: the quantized activation buffers hold a step
 * of it in each format. */
static uint64_t widest_input(const ModelConfig *c)
{
    uint64_t w = c->n_embd;
    if (c->n_ff > w) w = c->n_ff;
    if ((uint64_t)c->n_head * c->head_dim_v > w) w = (uint64_t)c->n_head * c->head_dim_v;
    if (model_arch_deltanet(c->arch) && (uint64_t)c->ssm_n_v * c->ssm_d_state > w) w = (uint64_t)c->ssm_n_v * c->ssm_d_state;
    return w;
}

/* Rows of a windowed layer's ring for these options (0: no such layer). */
static uint32_t ring_rows(const ModelConfig *c, const ModelOptions *o)
{
    if (model_swa_before(c, c->n_layer) == 0) return 0;
    uint64_t r = (uint64_t)c->n_swa + o->batch - 1;
    return r < o->n_ctx ? (uint32_t)r : o->n_ctx;
}

/* One sequence's buffers; what names them in the plan (ring_what: the
 * windowed layers' rings, conv_what: the short-convolution state). */
static void seq_buffers(const ModelConfig *c, const ModelOptions *o, Plan *p, const char *what, const char *ring_what,
                        const char *recur_what, Buffer *b)
{
    uint32_t n_swa_layers = model_swa_before(c, c->n_layer), n_recur = model_recurrent_before(c, c->n_layer);
    uint64_t cache_rows = plan_mul(p, plan_mul(p, c->n_layer - n_swa_layers - n_recur, c->n_head_kv), o->n_ctx);
    uint64_t ring = plan_mul(p, plan_mul(p, n_swa_layers, c->n_head_kv), ring_rows(c, o));
    b[S_KCACHE] = (Buffer){what, cache_rows, kv_type_bytes(o->kv_type, c->head_dim)};
    b[S_VCACHE] = (Buffer){what, cache_rows, kv_type_bytes(o->kv_type, c->head_dim_v)};
    b[S_KRING] = (Buffer){ring_what, ring, kv_type_bytes(o->kv_type, c->head_dim)};
    b[S_VRING] = (Buffer){ring_what, ring, kv_type_bytes(o->kv_type, c->head_dim_v)};
    /* recurrent layers: a state of fixed size, F32 (LFM2's short
     * convolutions or Qwen3.5's DeltaNet layers) */
    uint64_t recur_bytes = model_conv_before(c, c->n_layer) ? shortconv_state_bytes(c)
                         : n_recur                          ? plan_mul(p, deltanet_state_floats(c), sizeof(float))
                                                            : 0;
    b[S_RECUR] = (Buffer){recur_what, n_recur, recur_bytes};
}

void seq_kv_head(const ModelConfig *c, const SeqState *s, uint32_t layer, uint32_t head, uint8_t **k, uint8_t **v,
                 uint32_t *rows)
{
    uint64_t krow = kv_type_bytes(s->kv_type, c->head_dim), vrow = kv_type_bytes(s->kv_type, c->head_dim_v);
    uint32_t swa_before = model_swa_before(c, layer);
    if (model_layer_swa(c, layer)) {
        uint64_t row = ((uint64_t)swa_before * c->n_head_kv + head) * s->ring;
        *k = (uint8_t *)s->k_ring + row * krow;
        *v = (uint8_t *)s->v_ring + row * vrow;
        *rows = s->ring;
    } else {
        uint64_t row = kv_row_index(c, s->n_ctx, layer - swa_before - model_recurrent_before(c, layer), head, 0);
        *k = (uint8_t *)s->k_cache + row * krow;
        *v = (uint8_t *)s->v_cache + row * vrow;
        *rows = s->n_ctx;
    }
}

int seq_can_resume(const ModelConfig *c, const SeqState *s, uint32_t pos0)
{
    if (s->recurrent && pos0 != 0 && pos0 < s->n_past) return 0; /* a state cannot be rewound */
    if (!s->ring || pos0 >= s->n_past || s->n_past <= s->ring) return 1;
    /* the rings hold positions n_past - ring .. n_past - 1 */
    uint32_t need = pos0 + 1 > c->n_swa ? pos0 + 1 - c->n_swa : 0;
    return need >= s->n_past - s->ring;
}

/* RoPE tables per token: one, or two when windowed layers have a base of
 * their own (table model_layer_swa(c, layer)). */
static uint32_t rope_tables(const ModelConfig *c)
{
    return c->n_swa ? 2 : 1;
}

static uint32_t n_seq(const ModelOptions *o)
{
    return o->n_seq ? o->n_seq : 1;
}

/* Rows of logits a step fills: every token's, or one per sequence (a
 * batched decoding step gives each sequence its next token's). */
static uint64_t logit_rows(const ModelOptions *o)
{
    uint64_t r = o->all_logits ? o->batch : 1;
    return r > n_seq(o) ? r : n_seq(o);
}

static void workspace_buffers(const ModelConfig *c, const ModelOptions *o, Plan *p, Buffer *b)
{
    uint64_t B = o->batch;
    b[W_X] = (Buffer){"workspace: activations", B * c->n_embd, 4};
    b[W_XB] = (Buffer){"workspace: activations", B * c->n_embd, 4};
    b[W_Q] = (Buffer){"workspace: activations", B * c->n_head * c->head_dim, 4};
    b[W_K] = (Buffer){"workspace: activations", B * kv_width(c), 4};
    b[W_V] = (Buffer){"workspace: activations", B * kv_width_v(c), 4};
    b[W_ATT] = (Buffer){"workspace: activations", B * c->n_head * c->head_dim_v, 4};
    b[W_HB] = (Buffer){"workspace: activations", B * c->n_ff, 4};
    b[W_HB2] = (Buffer){"workspace: activations", B * c->n_ff, 4};
    b[W_SCORES] = (Buffer){"workspace: attention scores", plan_mul(p, c->n_head, o->n_ctx), 4};
    b[W_LOGITS] = (Buffer){"workspace: logits", plan_mul(p, logit_rows(o), c->n_vocab), 4};
    b[W_ACT0] = (Buffer){"workspace: quantized activations", B, kern_act_bytes(KERN_ACT_Q8_0, widest_input(c))};
    b[W_ACTK] = (Buffer){"workspace: quantized activations", B, kern_act_bytes(KERN_ACT_Q8_K, widest_input(c))};
    /* the inputs of wo and w_down, quantized while the others' are read
     * (step_worker; the architectures without recurrent layers) */
    uint64_t mid = (uint64_t)c->n_head * c->head_dim_v > c->n_ff ? (uint64_t)c->n_head * c->head_dim_v : c->n_ff;
    uint64_t mid_bytes = kern_act_bytes(KERN_ACT_Q8_0, mid) > kern_act_bytes(KERN_ACT_Q8_K, mid)
                       ? kern_act_bytes(KERN_ACT_Q8_0, mid) : kern_act_bytes(KERN_ACT_Q8_K, mid);
    int recurrent = model_arch_deltanet(c->arch) || model_recurrent_before(c, c->n_layer) > 0;
    b[W_ACTM] = (Buffer){"workspace: quantized activations", recurrent ? 0 : B, mid_bytes};
    /* each token's sequence, position and id in a step */
    b[W_TSEQ] = (Buffer){"workspace: activations", B, sizeof(SeqState *)};
    b[W_TPOS] = (Buffer){"workspace: activations", B, sizeof(uint32_t)};
    b[W_TID] = (Buffer){"workspace: activations", B, sizeof(int32_t)};
    /* the recurrent layers' scratch: in_proj's output of a short-convolution
     * layer (LFM2), or the DeltaNet layers' (Qwen3.5, whose attention layers
     * keep q and its gate there): one architecture has one of them */
    uint64_t conv = model_conv_before(c, c->n_layer) ? B * 3 * c->n_embd : 0, dn = deltanet_scratch_floats(c, o->batch);
    b[W_RECUR] = (Buffer){"workspace: recurrent scratch", conv > dn ? conv : dn, 4};
    /* GELU's F16 table (kernels.h: gelu_mul), for the architectures with GELU */
    b[W_GELU] = (Buffer){"workspace: gelu table", c->arch->act == ACT_GELU ? KERN_GELU_TABLE : 0, 2};
    /* each token's RoPE cos/sin at its position, once per step (not per layer and thread) */
    b[W_ROPE] = (Buffer){"workspace: activations", B * rope_tables(c) * c->n_rot, 4};
}

void forward_plan(const ModelConfig *cfg, const ModelOptions *opt, Plan *plan)
{
    model_plan(cfg, opt, plan);
    /* plan items keep their names' pointers: static strings */
    static const char *const ring_names[] = {"kv cache, windowed layers (ring)", "kv ring, sequence 0",
                                             "kv ring, sequence 1", "kv ring, sequence 2", "kv ring, sequence 3",
                                             "kv ring, sequence 4", "kv ring, sequence 5", "kv ring, sequence 6",
                                             "kv ring, sequence 7", "kv ring, sequences 8 and more"};
    static const char *const names[] = {"kv cache, sequence 0", "kv cache, sequence 1", "kv cache, sequence 2",
                                        "kv cache, sequence 3", "kv cache, sequence 4", "kv cache, sequence 5",
                                        "kv cache, sequence 6", "kv cache, sequence 7"};
    static const char *const conv_names[] = {"conv state", "conv state, sequence 0", "conv state, sequence 1",
                                             "conv state, sequence 2", "conv state, sequence 3",
                                             "conv state, sequence 4", "conv state, sequence 5",
                                             "conv state, sequence 6", "conv state, sequence 7",
                                             "conv state, sequences 8 and more"};
    static const char *const recur_names[] = {"recurrent state (deltanet layers)", "recurrent state, sequence 0",
                                              "recurrent state, sequence 1", "recurrent state, sequence 2",
                                              "recurrent state, sequence 3", "recurrent state, sequence 4",
                                              "recurrent state, sequence 5", "recurrent state, sequence 6",
                                              "recurrent state, sequence 7", "recurrent state, sequences 8 and more"};
    enum { N_NAMES = sizeof names / sizeof names[0] };
    for (uint32_t i = 0; i < n_seq(opt); i++) {
        const char *what = n_seq(opt) == 1 ? "kv cache" /* as before sequences were apart */
                         : i < N_NAMES ? names[i] : "kv cache, sequences 8 and more";
        int k_name = n_seq(opt) == 1 ? 0 : i < N_NAMES ? (int)i + 1 : N_NAMES + 1;
        Buffer b[S_COUNT];
        seq_buffers(cfg, opt, plan, what, ring_names[k_name],
                    model_conv_before(cfg, cfg->n_layer) ? conv_names[k_name] : recur_names[k_name], b);
        for (int k = 0; k < S_COUNT; k++)
            if (b[k].count) plan_add(plan, b[k].what, plan_mul(plan, b[k].count, b[k].elem));
    }
    Buffer b[W_COUNT];
    workspace_buffers(cfg, opt, plan, b);
    for (int i = 0; i < W_COUNT; i++)
        if (b[i].count) plan_add(plan, b[i].what, plan_mul(plan, b[i].count, b[i].elem));
}

/* Carves n buffers into p; -1 if the arena is short. */
static int carve(Arena *arena, const Buffer *b, int n, void **p)
{
    Plan scratch; /* only for its overflow checks, already passed when planning */
    plan_init(&scratch);
    for (int i = 0; i < n; i++) {
        p[i] = NULL;
        if (b[i].count == 0) continue; /* a buffer this model does not have (no ring) */
        p[i] = arena_take(arena, plan_mul(&scratch, b[i].count, b[i].elem));
        if (!p[i] || scratch.overflow) return -1;
    }
    return 0;
}

int seq_init(SeqState *s, const ModelConfig *cfg, const ModelOptions *opt, Arena *arena)
{
    Plan scratch;
    plan_init(&scratch);
    Buffer b[S_COUNT];
    void *p[S_COUNT];
    memset(s, 0, sizeof *s);
    seq_buffers(cfg, opt, &scratch, "kv cache", "kv ring", "recurrent state", b);
    if (carve(arena, b, S_COUNT, p) != 0) return -1;
    s->n_ctx = opt->n_ctx;
    s->kv_type = opt->kv_type;
    s->k_cache = p[S_KCACHE];
    s->v_cache = p[S_VCACHE];
    s->ring = ring_rows(cfg, opt);
    s->k_ring = p[S_KRING];
    s->v_ring = p[S_VRING];
    s->recurrent = p[S_RECUR];
    s->recurrent_layer_bytes = b[S_RECUR].elem;
    return 0;
}

void seq_reset(SeqState *s)
{
    s->n_past = 0;
}

int workspace_init(Workspace *ws, const Model *m, const ModelOptions *opt, Arena *arena, GgufError *err)
{
    Plan scratch;
    plan_init(&scratch);
    Buffer b[W_COUNT];
    void *p[W_COUNT];
    memset(ws, 0, sizeof *ws);
    workspace_buffers(&m->cfg, opt, &scratch, b);
    if (carve(arena, b, W_COUNT, p) != 0) {
        snprintf(err->msg, sizeof err->msg, "internal error: memory plan too small for the KV cache and activations");
        return -1;
    }
    ws->batch = opt->batch;
    ws->n_ctx = opt->n_ctx;
    ws->all_logits = opt->all_logits;
    ws->x = p[W_X];
    ws->xb = p[W_XB];
    ws->q = p[W_Q];
    ws->k = p[W_K];
    ws->v = p[W_V];
    ws->att = p[W_ATT];
    ws->hb = p[W_HB];
    ws->hb2 = p[W_HB2];
    ws->scores = p[W_SCORES];
    ws->logits = p[W_LOGITS];
    ws->act_q8_0 = p[W_ACT0];
    ws->act_q8_k = p[W_ACTK];
    ws->tok_seq = p[W_TSEQ];
    ws->tok_pos = p[W_TPOS];
    ws->tok_id = p[W_TID];
    ws->act_mid = p[W_ACTM];
    /* one buffer: an architecture has short convolutions or DeltaNet layers */
    ws->conv = model_conv_before(&m->cfg, m->cfg.n_layer) ? p[W_RECUR] : NULL;
    ws->dn = model_arch_deltanet(m->cfg.arch) ? p[W_RECUR] : NULL;
    ws->gelu = p[W_GELU];
    ws->rope = p[W_ROPE];
    if (ws->gelu) kern_gelu_table(ws->gelu);
    ws->logit_rows = (uint32_t)logit_rows(opt);
    kern_active(); /* chooses the kernels now, before any thread runs */
    if (m->load == LOAD_STREAM && wstream_init(&ws->stream, m, opt, arena, err) != 0) return -1;
    return 0;
}

void workspace_close(Workspace *ws)
{
    wstream_stop(&ws->stream);
}

/* ---- small pieces ------------------------------------------------------- */

/* the kernel set's (kernels.h: the same bits in every set) */
static void rmsnorm(float *out, const float *x, const float *w, uint64_t n, float eps)
{
    kern_active()->rmsnorm(out, x, w, n, eps);
}

/* v += a, element by element: the set's axpy with the factor 1, exact
 * (1 * a[i] is a[i]; fused or not, the one rounding is the sum's), so
 * vectorised at the bits of the scalar add (armv7's NEON flushes
 * subnormal sums to zero, as its other float kernels). */
static void add_to(float *v, const float *a, uint64_t n)
{
    for (uint64_t i = 0; i < n; i += 1u << 30) /* axpy counts in 32 bits */
        kern_active()->axpy_f32(v + i, 1.0f, a + i, (uint32_t)(n - i < 1u << 30 ? n - i : 1u << 30));
}

/* the kernel set's (kernels.h: the same bits in every set) */
void forward_rope(float *v, uint32_t n_rot, const float *cs, RopeStyle style)
{
    kern_active()->rope(v, n_rot, cs, style == ROPE_NEOX);
}

/* base^(-2i/n_rot) for the n_rot/2 pairs, as exp(-2i/n_rot ln base):
 * rope_math.c (libm's pow, sin and cos were 13 KB of the static binary) */
static void rope_freqs(double *freq, uint32_t n_rot, float base)
{
    double log_base = rope_log((double)base);
    for (uint32_t i = 0; i < n_rot / 2; i++) freq[i] = exp(-2.0 * (double)i / (double)n_rot * log_base);
}

static void rope_angles(float *cs, uint32_t n_rot, double pos, const double *freq, const float *freq_factors)
{
    for (uint32_t i = 0; i < n_rot / 2; i++) {
        double theta = pos * freq[i];
        if (freq_factors) theta /= (double)freq_factors[i];
        double s, c;
        rope_sincos(theta, &s, &c);
        cs[2 * i] = (float)c;
        cs[2 * i + 1] = (float)s;
    }
}

void forward_rope_table(float *cs, uint32_t n_rot, double pos, float base, const float *freq_factors)
{
    double freq[FORWARD_MAX_HEAD_DIM / 2];
    rope_freqs(freq, n_rot, base);
    rope_angles(cs, n_rot, pos, freq, freq_factors);
}

int forward_argmax(const float *v, int n)
{
    int best = 0;
    for (int i = 1; i < n; i++)
        if (v[i] > v[best]) best = i;
    return best;
}

/* ---- per-token work split across threads --------------------------------
 * The steps between the matmuls (norms, activation quantization, RoPE and
 * the cache stores, SiLU) work on each token alone, so a prompt chunk's
 * tokens are split between the threads (a thread idle there costs both
 * cores' time: measured 17% of a 64-token step spent waiting before).
 * One token runs on the calling thread: a parallel region costs more. */
/* Thread ith of nth takes items [lo, hi) of n (tokens, rows, heads). */
static void split(uint64_t n, int ith, int nth, uint64_t *lo, uint64_t *hi)
{
    *lo = n * (uint64_t)ith / (uint64_t)nth;
    *hi = n * (uint64_t)(ith + 1) / (uint64_t)nth;
}

static void run_tokens(void (*fn)(void *ctx, int ith, int nth), void *ctx, int n)
{
    if (n > 1) port_parallel(fn, ctx);
    else fn(ctx, 0, 1);
}

typedef struct {
    float *out;
    const float *in, *w;
    uint64_t dim;
    float eps;
    int n;
} NormJob;

static void norm_worker(void *ctx, int ith, int nth)
{
    const NormJob *j = ctx;
    uint64_t t0, t1;
    split((uint64_t)j->n, ith, nth, &t0, &t1);
    for (uint64_t t = t0; t < t1; t++) rmsnorm(j->out + t * j->dim, j->in + t * j->dim, j->w, j->dim, j->eps);
}

static void rmsnorm_tokens(float *out, const float *in, const float *w, uint64_t dim, float eps, int n)
{
    NormJob j = {out, in, w, dim, eps, n};
    run_tokens(norm_worker, &j, n);
}

typedef struct {
    uint32_t type;
    const float *x;
    uint8_t *out;
    uint64_t cols, stride;
    int n;
} QuantJob;

static void quant_worker(void *ctx, int ith, int nth)
{
    const QuantJob *j = ctx;
    uint64_t t0, t1;
    split((uint64_t)j->n, ith, nth, &t0, &t1);
    for (uint64_t t = t0; t < t1; t++) kern_quantize_act(j->type, j->x + t * j->cols, j->out + t * j->stride, j->cols);
}

/* ---- matmul: out[t][r] = W[r] . x[t], output rows split across threads --
 *
 * Matrices reading the same input (q, k, v; gate, up) run as one group:
 * the input is quantized once per activation format, then one parallel
 * region splits the rows of all of them between the threads. */

#define GROUP_MAX 4

typedef struct {
    const Weight *w[GROUP_MAX];
    float *out[GROUP_MAX];
    uint64_t out_stride[GROUP_MAX];
    const void *act[GROUP_MAX];
    uint64_t act_stride[GROUP_MAX];
    int nw, n;
    uint64_t total_rows;
} MatmulJob;

/* Rows [lo, hi) of w times n tokens' activations: the repacked layout's
 * kernel where the loader packed w (model.c), the file's with the scales'
 * copy where it made one, else the file's. */
static void weight_matmul(const Weight *w, uint64_t lo, uint64_t hi, const void *act, uint64_t act_stride, int n,
                          float *out, uint64_t out_stride)
{
    if (w->side)
        kern_matmul_sided(w->type, w->data, w->row_bytes, w->cols, lo, hi, w->side, act, act_stride, n, out, out_stride);
    else
        (w->packed ? kern_matmul_packed : kern_matmul)(w->type, w->data, w->row_bytes, w->cols, lo, hi, act, act_stride,
                                                       n, out, out_stride);
}

static void matmul_worker(void *ctx, int ith, int nth)
{
    const MatmulJob *j = ctx;
    uint64_t a, b;
    split(j->total_rows, ith, nth, &a, &b);
    uint64_t base = 0;
    for (int i = 0; i < j->nw; i++) {
        const Weight *w = j->w[i];
        uint64_t lo = a > base ? a - base : 0, hi = b - base < w->rows ? b - base : w->rows;
        if (b > base && lo < hi)
            weight_matmul(w, lo, hi, j->act[i], j->act_stride[i], j->n, j->out[i], j->out_stride[i]);
        base += w->rows;
    }
}

/* out_stride: floats between two tokens' outputs; 0 = each matrix's rows. */
static void matmul_group_stride(Workspace *wk, const Weight *const *ws, float *const *outs, uint64_t out_stride,
                                int nw, const float *x, int n)
{
    MatmulJob j;
    memset(&j, 0, sizeof j);
    uint64_t cols = ws[0]->cols;
    int done[3] = {0, 0, 0};
    void *buf[3] = {NULL, wk->act_q8_0, wk->act_q8_k};
    for (int i = 0; i < nw; i++) {
        KernActFormat f = kern_act_format(ws[i]->type);
        uint64_t stride = kern_act_bytes(f, cols);
        if (f == KERN_ACT_F32) {
            j.act[i] = x;
        } else {
            if (!done[f]) {
                QuantJob q = {ws[i]->type, x, buf[f], cols, stride, n};
                run_tokens(quant_worker, &q, n);
            }
            done[f] = 1;
            j.act[i] = buf[f];
        }
        j.act_stride[i] = stride;
        j.w[i] = ws[i];
        j.out[i] = outs[i];
        j.out_stride[i] = out_stride ? out_stride : ws[i]->rows;
        j.total_rows += ws[i]->rows;
    }
    j.nw = nw;
    j.n = n;
    port_parallel(matmul_worker, &j);
}

static void matmul_group(Workspace *wk, const Weight *const *ws, float *const *outs, int nw, const float *x, int n)
{
    matmul_group_stride(wk, ws, outs, 0, nw, x, n);
}

static void matmul(Workspace *wk, const Weight *w, const float *x, int n, float *out)
{
    matmul_group(wk, &w, &out, 1, x, n);
}

/* ---- attention ---------------------------------------------------------- */

/* A step's work on one layer of one sequence (attention, q/k steps). */
typedef struct {
    const Model *m;
    Workspace *ws;
    const LayerWeights *lw;
    uint32_t layer;
    int n;                    /* tokens of the step: ws->tok_seq, tok_pos say whose and where */
} LayerJob;

/* A Q8_0 key row is multiplied by q kept in float (more accurate than
 * quantizing q as well); see kernels.h. */
static float cache_dot(const KernelSet *ks, const void *row, KvType t, const float *q, uint32_t n)
{
    if (t == KV_Q8_0) return ks->dot_q8_0_f32(row, q, n);
    return t == KV_F32 ? ks->dot_f32(row, q, n) : ks->dot_f16(row, q, n);
}

static void cache_axpy(const KernelSet *ks, float *out, float a, const void *row, KvType t, uint32_t n)
{
    if (t == KV_Q8_0) ks->axpy_q8_0(out, a, row, n);
    else if (t == KV_F32) ks->axpy_f32(out, a, row, n);
    else ks->axpy_f16(out, a, row, n);
}

/* Scores of the nq query heads of nt tokens (token t's at q + t * q_tstride)
 * against rows 0 .. rows[t] - 1 of a kv head's cache from kh on: row
 * t * nq + i of s (s_stride floats apart); then the weighted sums of the same
 * value rows into out (added; token t's at out + t * out_tstride). */
static void head_scores(const KernelSet *ks, const ModelConfig *c, KvType kt, const uint8_t *kh, uint64_t krow,
                        const float *q, uint64_t q_tstride, uint32_t nq, uint32_t nt, const uint32_t *rows, float *s,
                        uint64_t s_stride)
{
    if (kt == KV_F16 && ks->dots_f16)
        ks->dots_f16((const uint16_t *)kh, krow / 2, c->head_dim, q, c->head_dim, nq, q_tstride, nt, rows, s, s_stride);
    else
        for (uint32_t u = 0; u < nq * nt; u++)
            for (uint32_t p = 0; p < rows[u / nq]; p++)
                s[u * s_stride + p] = cache_dot(ks, kh + (uint64_t)p * krow, kt,
                                                q + u / nq * q_tstride + u % nq * c->head_dim, c->head_dim);
}

static void head_wsum(const KernelSet *ks, const ModelConfig *c, KvType kt, const uint8_t *vh, uint64_t vrow,
                      const float *s, uint64_t s_stride, uint32_t nq, uint32_t nt, const uint32_t *rows, float *out,
                      uint64_t out_tstride)
{
    if (kt == KV_F16 && ks->wsum_f16)
        ks->wsum_f16(out, c->head_dim_v, out_tstride, s, s_stride, nq, nt, rows, (const uint16_t *)vh, vrow / 2,
                     c->head_dim_v);
    else
        for (uint32_t u = 0; u < nq * nt; u++)
            for (uint32_t p = 0; p < rows[u / nq]; p++)
                cache_axpy(ks, out + u / nq * out_tstride + u % nq * c->head_dim_v, s[u * s_stride + p],
                           vh + (uint64_t)p * vrow, kt, c->head_dim_v);
}

/* tokens per attention call: a prompt's tokens read their shared cache rows
 * once (KernelSet.dots_f16) */
#define ATT_TOKENS 8

/* Attention of q heads h0..h1-1 for every token of the step. The scores of
 * the thread's heads' rows of ws->scores ((h1 - h0) * n_ctx floats) hold
 * those of several tokens when their rows fit. */
static void attention_heads(const LayerJob *j, uint32_t h0, uint32_t h1)
{
    const KernelSet *ks = kern_active();
    const ModelConfig *c = &j->m->cfg;
    const Workspace *ws = j->ws;
    uint32_t group = c->n_head / c->n_head_kv;
    float scale = c->attn_scale;
    int windowed = model_layer_swa(c, j->layer);
    float *s = ws->scores + (uint64_t)h0 * ws->n_ctx;
    uint64_t room = (uint64_t)(h1 - h0) * ws->n_ctx, q_tstride = (uint64_t)c->n_head * c->head_dim,
             out_tstride = (uint64_t)c->n_head * c->head_dim_v;

    /* the q heads of one kv head together: its rows are read once for all */
    for (uint32_t h = h0; h < h1;) {
        uint32_t kvh = h / group, hn = (kvh + 1) * group < h1 ? (kvh + 1) * group : h1, nq = hn - h;
        for (int t = 0; t < j->n;) {
            /* each token over its own sequence's cache (or window ring) */
            const SeqState *seq = ws->tok_seq[t];
            KvType kt = seq->kv_type;
            uint64_t krow = kv_type_bytes(kt, c->head_dim), vrow = kv_type_bytes(kt, c->head_dim_v);
            uint8_t *kh, *vh;
            uint32_t rows;
            seq_kv_head(c, seq, j->layer, kvh, &kh, &vh, &rows);
            uint32_t pos = ws->tok_pos[t];
            /* positions lo..pos: all of them, or the window's; in a ring
             * they lie in up to two runs of rows */
            uint32_t lo = windowed && pos + 1 > c->n_swa ? pos + 1 - c->n_swa : 0, np = pos - lo + 1;
            uint32_t r0 = lo % rows, np1 = np < rows - r0 ? np : rows - r0, np2 = np - np1;
            /* the next tokens of the sequence that also see rows 0..pos'
             * join while their scores fit (s_stride: the longest) */
            uint32_t nt = 1, tr[ATT_TOKENS] = {np1};
            uint64_t s_stride = np;
            while (lo == 0 && np2 == 0 && nt < ATT_TOKENS && t + (int)nt < j->n && ws->tok_seq[t + nt] == seq) {
                uint32_t p1 = ws->tok_pos[t + nt] + 1, L = p1 > s_stride ? p1 : (uint32_t)s_stride;
                if ((windowed && p1 > c->n_swa) || p1 > rows || (uint64_t)(nt + 1) * nq * L > room) break;
                tr[nt++] = p1;
                s_stride = L;
            }
            const float *q = ws->q + (uint64_t)t * q_tstride + (uint64_t)h * c->head_dim;
            float *out = ws->att + (uint64_t)t * out_tstride + (uint64_t)h * c->head_dim_v;
            head_scores(ks, c, kt, kh + (uint64_t)r0 * krow, krow, q, q_tstride, nq, nt, tr, s, s_stride);
            if (np2) head_scores(ks, c, kt, kh, krow, q, q_tstride, nq, 1, &np2, s + np1, s_stride);
            for (uint32_t u = 0; u < nq * nt; u++) {
                float *si = s + u * s_stride, mx = -INFINITY;
                uint32_t n = nt > 1 ? tr[u / nq] : np;
                if (ks->softmax) {
                    ks->softmax(si, n, scale);
                } else {
                    for (uint32_t p = 0; p < n; p++) {
                        si[p] *= scale;
                        if (si[p] > mx) mx = si[p];
                    }
                    float inv = (float)(1.0 / ks->exp_sum(si, n, mx));
                    for (uint32_t p = 0; p < n; p++) si[p] *= inv;
                }
                memset(out + u / nq * out_tstride + u % nq * c->head_dim_v, 0, c->head_dim_v * sizeof *out);
            }
            head_wsum(ks, c, kt, vh + (uint64_t)r0 * vrow, vrow, s, s_stride, nq, nt, tr, out, out_tstride);
            if (np2) head_wsum(ks, c, kt, vh, vrow, s + np1, s_stride, nq, 1, &np2, out, out_tstride);
            t += (int)nt;
        }
        h = hn;
    }
}

static void attention_worker(void *ctx, int ith, int nth)
{
    const LayerJob *j = ctx;
    uint64_t h0, h1;
    split(j->m->cfg.n_head, ith, nth, &h0, &h1);
    attention_heads(j, (uint32_t)h0, (uint32_t)h1);
}

/* Stores one position's keys or values, kv heads h0..h1-1 of the n_head_kv
 * heads of dim floats at src, for `layer` at position pos: one cache row per head (model.h:
 * kv_row_index; a windowed layer's ring row pos % ring). Q8_0 rows are
 * quantized in blocks of 32 as ggml does (d = max|x| / 127, codes
 * round(x / d)). */
static void cache_store(const ModelConfig *c, const SeqState *seq, int values, uint32_t layer, uint32_t pos,
                        const float *src, uint32_t dim, uint32_t h0, uint32_t h1)
{
    KvType t = seq->kv_type;
    uint64_t row_bytes = kv_type_bytes(t, dim);
    src += (uint64_t)h0 * dim;
    for (uint32_t h = h0; h < h1; h++, src += dim) {
        uint8_t *kh, *vh;
        uint32_t rows;
        seq_kv_head(c, seq, layer, h, &kh, &vh, &rows);
        uint8_t *dst = (values ? vh : kh) + (uint64_t)(pos % rows) * row_bytes;
        if (t == KV_F32) {
            memcpy(dst, src, dim * sizeof *src);
        } else if (t == KV_F16) {
            kern_active()->to_f16((uint16_t *)dst, src, dim);
        } else {
            quant_quantize_row(GGML_TYPE_Q8_0, src, dst, dim);
        }
    }
}

/* The RoPE tables of tokens [t0, t1) of the step at their positions. */
static void rope_fill(const Model *m, Workspace *ws, uint64_t t0, uint64_t t1)
{
    const ModelConfig *c = &m->cfg;
    double freq[FORWARD_MAX_HEAD_DIM / 2]; /* a table's frequencies, once for the tokens */
    for (uint32_t k = 0; k < rope_tables(c); k++) {
        rope_freqs(freq, c->n_rot, k ? c->rope_base_swa : c->rope_base);
        for (uint64_t t = t0; t < t1; t++) {
            float *cs = ws->rope + (t * rope_tables(c) + k) * c->n_rot;
            rope_angles(cs, c->n_rot, (double)ws->tok_pos[t], freq, m->rope_freqs);
            if (c->rope_attn_factor != 1.0f) /* LongRoPE's attention factor scales what rotates, as ggml does */
                for (uint32_t i = 0; i < c->n_rot; i++) cs[i] *= c->rope_attn_factor;
        }
    }
}

/* Token t's RoPE table for this layer (rope_fill). */
static const float *rope_row(const Model *m, const Workspace *ws, uint32_t layer, uint64_t t)
{
    const ModelConfig *c = &m->cfg;
    return ws->rope + (t * rope_tables(c) + (uint32_t)model_layer_swa(c, layer)) * c->n_rot;
}

/* Biases, q/k norms and RoPE of token t at its position (table cs), then
 * its keys and values into the cache; kv heads g0..g1-1 and their q heads
 * (each element's arithmetic is the same whatever the range). */
static void qk_token(const LayerJob *j, uint64_t t, const float *cs, uint32_t g0, uint32_t g1)
{
    const ModelConfig *c = &j->m->cfg;
    Workspace *ws = j->ws;
    const LayerWeights *lw = j->lw;
    uint32_t group = c->n_head / c->n_head_kv;
    uint64_t hd = c->head_dim, hdv = c->head_dim_v, qdim = (uint64_t)c->n_head * hd, kw = kv_width(c),
             vw = kv_width_v(c);
    const SeqState *seq = ws->tok_seq[t];
    float *q = ws->q + t * qdim, *k = ws->k + t * kw, *v = ws->v + t * vw;
    int ropes = model_layer_ropes(c, j->layer);
    if (lw->bq) {
        add_to(q + g0 * group * hd, lw->bq + g0 * group * hd, (g1 - g0) * group * hd);
        add_to(k + g0 * hd, lw->bk + g0 * hd, (g1 - g0) * hd);
        add_to(v + g0 * hdv, lw->bv + g0 * hdv, (g1 - g0) * hdv);
    }
    for (uint32_t h = g0 * group; h < g1 * group; h++) {
        if (lw->q_norm) rmsnorm(q + h * hd, q + h * hd, lw->q_norm, hd, c->norm_eps);
        if (ropes) forward_rope(q + h * hd, c->n_rot, cs, c->arch->rope);
    }
    for (uint32_t h = g0; h < g1; h++) {
        if (lw->k_norm) rmsnorm(k + h * hd, k + h * hd, lw->k_norm, hd, c->norm_eps);
        if (ropes) forward_rope(k + h * hd, c->n_rot, cs, c->arch->rope);
    }
    cache_store(c, seq, 0, j->layer, ws->tok_pos[t], k, c->head_dim, g0, g1);
    cache_store(c, seq, 1, j->layer, ws->tok_pos[t], v, c->head_dim_v, g0, g1);
}

static void qk_worker(void *ctx, int ith, int nth)
{
    const LayerJob *j = ctx;
    uint64_t t0, t1;
    split((uint64_t)j->n, ith, nth, &t0, &t1);
    for (uint64_t t = t0; t < t1; t++) qk_token(j, t, rope_row(j->m, j->ws, j->layer, t), 0, j->m->cfg.n_head_kv);
}

/* hb = silu(hb) * hb2 (or gelu), element by element. */
typedef struct {
    float *hb;
    const float *hb2;
    uint64_t count;
    const uint16_t *gelu; /* GELU's table */
} SiluJob;

static void silu_worker(void *ctx, int ith, int nth)
{
    const SiluJob *j = ctx;
    uint64_t i0, i1;
    split(j->count, ith, nth, &i0, &i1);
    kern_active()->silu_mul(j->hb + i0, j->hb2 + i0, i1 - i0);
}

/* hb = gelu(hb) * hb2 as ggml computes it (kernels.h: gelu_mul, through
 * the F16 table of the workspace). */
static void gelu_worker(void *ctx, int ith, int nth)
{
    const SiluJob *j = ctx;
    uint64_t i0, i1;
    split(j->count, ith, nth, &i0, &i1);
    kern_active()->gelu_mul(j->hb + i0, j->hb2 + i0, i1 - i0, j->gelu);
}

/* x += RMSNorm(add) * w, for the post-norms of NORM_PRE_POST (the norm in
 * place in add first). */
static void add_normed(float *x, float *add, const float *w, uint64_t dim, float eps, int n)
{
    rmsnorm_tokens(add, add, w, dim, eps, n);
    add_to(x, add, (uint64_t)n * dim);
}

/* ---- the layers of a step in one parallel region --------------------------
 *
 * For the architectures whose layers are all attention layers (and weights
 * not streamed), a step's layers run in one parallel region with a barrier
 * only where the data need one, six per layer (a batched decoding step of
 * four tokens had 13 parallel regions per layer, each ending in a barrier):
 *   1. per token: the residual of the previous layer, the norm, its quantization
 *   2. by kv head (n_head_kv a multiple of the threads): the rows of q, k, v
 *      of the thread's heads, their norms, RoPE and cache stores, their
 *      attention and its output quantized (else: q, k, v by rows | per
 *      token | attention by head | per token)
 *   3. wo by rows
 *   4. per token: the residual, the norm, its quantization
 *   5. gate and up, the same rows of both, then silu(gate) * up on them and
 *      its quantization (rows in whole blocks of w_down's activation format)
 *   6. w_down by rows
 * Each element gets the same arithmetic as the step by separate regions
 * (the same functions on the same rows; quantization is by blocks), so the
 * results are bitwise those (tests/test_forward.c compares the two). The
 * second-stage inputs (attention's output, the gate's) are quantized into
 * act_mid, as the first stage's input may still be read. */
typedef struct {
    const Model *m;
    Workspace *ws;
    int n;
} StepJob;

/* The quantized input of weights w in the workspace: act_mid for the
 * inputs of wo and w_down, else the buffer of its format (NULL: F32). */
static uint8_t *act_buffer(Workspace *ws, const Weight *w, int mid)
{
    KernActFormat f = kern_act_format(w->type);
    if (f == KERN_ACT_F32) return NULL;
    return mid ? ws->act_mid : f == KERN_ACT_Q8_0 ? ws->act_q8_0 : ws->act_q8_k;
}

/* Columns [c0, c1) of token t's row x (cols wide) quantized for w into its
 * buffer (c0, c1 on block boundaries). */
static void quantize_cols(Workspace *ws, const Weight *w, int mid, uint64_t t, const float *x, uint64_t c0, uint64_t c1)
{
    uint8_t *buf = act_buffer(ws, w, mid);
    if (!buf || c0 >= c1) return;
    KernActFormat f = kern_act_format(w->type);
    kern_quantize_act(w->type, x + c0, buf + t * kern_act_bytes(f, w->cols) + kern_act_bytes(f, c0), c1 - c0);
}

/* Rows [lo, hi) of w for the step's n tokens: input x (floats) or its
 * quantized copy. */
static void rows_of(Workspace *ws, const Weight *w, int mid, const float *x, uint64_t lo, uint64_t hi, int n, float *out,
                    uint64_t out_stride)
{
    if (lo >= hi) return;
    const uint8_t *buf = act_buffer(ws, w, mid);
    KernActFormat f = kern_act_format(w->type);
    weight_matmul(w, lo, hi, buf ? (const void *)buf : (const void *)x, kern_act_bytes(f, w->cols), n, out, out_stride);
}

/* Token t: x += xb, the previous sublayer's output (RMSNorm(xb) * post
 * with a post-norm) if add; then xb = RMSNorm(x) * norm (none after the
 * last layer), quantized for the nw weights reading it. */
static void residual_norm(const ModelConfig *c, Workspace *ws, uint64_t t, int add, const float *post,
                          const float *norm, const Weight *const *next, int nw)
{
    uint64_t dim = c->n_embd;
    float *x = ws->x + t * dim, *xb = ws->xb + t * dim;
    if (add && post) rmsnorm(xb, xb, post, dim, c->norm_eps);
    if (add) add_to(x, xb, dim);
    if (!norm) return;
    rmsnorm(xb, x, norm, dim, c->norm_eps);
    for (int i = 0; i < nw; i++) {
        int again = 0; /* one quantization per buffer */
        for (int k = 0; k < i; k++) again |= act_buffer(ws, next[k], 0) == act_buffer(ws, next[i], 0);
        if (!again) quantize_cols(ws, next[i], 0, t, xb, 0, dim);
    }
}

/* Rows [lo, hi) of the concatenation of nw matrices (q, k, v): each its part. */
static void rows_of_group(Workspace *ws, const Weight *const *w, float *const *out, int nw, const float *x, uint64_t lo,
                          uint64_t hi, int n)
{
    uint64_t base = 0;
    for (int i = 0; i < nw; i++) {
        uint64_t a = lo > base ? lo - base : 0, b = hi > base ? hi - base : 0;
        if (b > w[i]->rows) b = w[i]->rows;
        rows_of(ws, w[i], 0, x, a, b, n, out[i], w[i]->rows);
        base += w[i]->rows;
    }
}

/* Rows of a matrix split between the threads in whole units (blocks). */
static void split_units(uint64_t rows, uint64_t unit, int ith, int nth, uint64_t *lo, uint64_t *hi)
{
    split(rows / unit, ith, nth, lo, hi);
    *lo *= unit;
    *hi = ith == nth - 1 ? rows : *hi * unit;
}

static uint64_t act_block(const Weight *w)
{
    KernActFormat f = kern_act_format(w->type);
    return f == KERN_ACT_Q8_0 ? 32 : f == KERN_ACT_Q8_K ? 256 : 1;
}

static void rope_worker(void *ctx, int ith, int nth)
{
    const StepJob *sj = ctx;
    uint64_t t0, t1;
    split((uint64_t)sj->n, ith, nth, &t0, &t1);
    rope_fill(sj->m, sj->ws, t0, t1);
}

static void step_worker(void *ctx, int ith, int nth)
{
    const StepJob *sj = ctx;
    const Model *m = sj->m;
    const ModelConfig *c = &m->cfg;
    Workspace *ws = sj->ws;
    int n = sj->n;
    uint64_t dim = c->n_embd, hd = c->head_dim, hdv = c->head_dim_v, n_ff = c->n_ff;
    uint64_t qdim = (uint64_t)c->n_head * hd, adim = (uint64_t)c->n_head * hdv;
    uint32_t group = c->n_head / c->n_head_kv;
    uint64_t t0, t1, lo, hi;
    split((uint64_t)n, ith, nth, &t0, &t1);
    rope_worker(ctx, ith, nth); /* read from layer 0's second stage on, after a barrier */
    int by_head = c->n_head_kv % (uint32_t)nth == 0;
    uint32_t g0 = (uint32_t)((uint64_t)c->n_head_kv * ith / nth), g1 = (uint32_t)((uint64_t)c->n_head_kv * (ith + 1) / nth);

    for (uint32_t l = 0; l < c->n_layer; l++) {
        const LayerWeights *lw = &m->layers[l], *prev = l ? &m->layers[l - 1] : NULL;
        const Weight *qkv[3] = {&lw->wq, &lw->wk, &lw->wv};
        float *qkv_out[3] = {ws->q, ws->k, ws->v};
        LayerJob lj = {m, ws, lw, l, n};
        /* 1 */
        for (uint64_t t = t0; t < t1; t++)
            residual_norm(c, ws, t, prev != NULL, prev ? prev->ffn_post_norm : NULL, lw->attn_norm, qkv, 3);
        port_barrier();
        /* 2: att quantized in whole blocks of the thread's heads, or after a barrier */
        int att_here = by_head && (group * hdv * g0) % act_block(&lw->wo) == 0 &&
                       (group * hdv * g1) % act_block(&lw->wo) == 0;
        if (by_head) {
            rows_of(ws, &lw->wq, 0, ws->xb, g0 * group * hd, g1 * group * hd, n, ws->q, qdim);
            rows_of(ws, &lw->wk, 0, ws->xb, g0 * hd, g1 * hd, n, ws->k, lw->wk.rows);
            rows_of(ws, &lw->wv, 0, ws->xb, g0 * hdv, g1 * hdv, n, ws->v, lw->wv.rows);
            for (uint64_t t = 0; t < (uint64_t)n; t++) qk_token(&lj, t, rope_row(m, ws, l, t), g0, g1);
            attention_heads(&lj, g0 * group, g1 * group);
        } else {
            split(lw->wq.rows + lw->wk.rows + lw->wv.rows, ith, nth, &lo, &hi);
            rows_of_group(ws, qkv, qkv_out, 3, ws->xb, lo, hi, n);
            port_barrier();
            qk_worker(&lj, ith, nth);
            port_barrier();
            attention_worker(&lj, ith, nth);
        }
        if (att_here)
            for (uint64_t t = 0; t < (uint64_t)n; t++)
                quantize_cols(ws, &lw->wo, 1, t, ws->att + t * adim, group * hdv * g0, group * hdv * g1);
        port_barrier();
        if (!att_here) {
            for (uint64_t t = t0; t < t1; t++) quantize_cols(ws, &lw->wo, 1, t, ws->att + t * adim, 0, adim);
            port_barrier();
        }
        /* 3 */
        split(dim, ith, nth, &lo, &hi);
        rows_of(ws, &lw->wo, 1, ws->att, lo, hi, n, ws->xb, dim);
        port_barrier();
        /* 4 */
        const Weight *gate_up[2] = {&lw->w_gate, &lw->w_up};
        for (uint64_t t = t0; t < t1; t++)
            residual_norm(c, ws, t, 1, lw->attn_post_norm, lw->ffn_norm, gate_up, 2);
        port_barrier();
        /* 5 */
        split_units(n_ff, act_block(&lw->w_down), ith, nth, &lo, &hi);
        rows_of(ws, &lw->w_gate, 0, ws->xb, lo, hi, n, ws->hb, n_ff);
        rows_of(ws, &lw->w_up, 0, ws->xb, lo, hi, n, ws->hb2, n_ff);
        for (uint64_t t = 0; t < (uint64_t)n && lo < hi; t++) {
            if (c->arch->act == ACT_GELU) kern_active()->gelu_mul(ws->hb + t * n_ff + lo, ws->hb2 + t * n_ff + lo, hi - lo, ws->gelu);
            else kern_active()->silu_mul(ws->hb + t * n_ff + lo, ws->hb2 + t * n_ff + lo, hi - lo);
            quantize_cols(ws, &lw->w_down, 1, t, ws->hb + t * n_ff, lo, hi);
        }
        port_barrier();
        /* 6 */
        split(dim, ith, nth, &lo, &hi);
        rows_of(ws, &lw->w_down, 1, ws->hb, lo, hi, n, ws->xb, dim);
        port_barrier();
    }
    const LayerWeights *last = &m->layers[c->n_layer - 1];
    for (uint64_t t = t0; t < t1; t++) residual_norm(c, ws, t, 1, last->ffn_post_norm, NULL, NULL, 0);
}

/* The step can run as step_worker: every layer an attention layer, the
 * weights in memory. */
static int step_fused(const Model *m)
{
    const ModelConfig *c = &m->cfg;
    return m->load != LOAD_STREAM && !model_arch_deltanet(c->arch) && model_conv_before(c, c->n_layer) == 0 &&
           model_recurrent_before(c, c->n_layer) == 0;
}

/* ---- one step ----------------------------------------------------------- */

/* The checks of one part of a step; -1 with ws->err. */
static int part_check(const ModelConfig *c, Workspace *ws, const ForwardPart *pt)
{
    const SeqState *seq = pt->seq;
    if (pt->pos0 > seq->n_past) {
        snprintf(ws->err, sizeof ws->err, "position %u is past the %u filled positions of the cache", pt->pos0,
                 seq->n_past);
        return -1;
    }
    if (seq->recurrent && pt->pos0 != 0 && pt->pos0 < seq->n_past) {
        snprintf(ws->err, sizeof ws->err,
                 "position %u: the convolution state holds position %u only (feed from there, or from 0)", pt->pos0,
                 seq->n_past);
        return -1;
    }
    if (!seq_can_resume(c, seq, pt->pos0)) {
        snprintf(ws->err, sizeof ws->err, "position %u: the sliding-window rings no longer hold the positions before it",
                 pt->pos0);
        return -1;
    }
    if (seq->ring && (uint64_t)pt->n + c->n_swa - 1 > seq->ring && seq->ring < seq->n_ctx) {
        snprintf(ws->err, sizeof ws->err, "a step of %d tokens does not fit the sliding-window ring of %u", pt->n,
                 seq->ring);
        return -1;
    }
    if ((uint64_t)pt->pos0 + (uint64_t)pt->n > seq->n_ctx) {
        snprintf(ws->err, sizeof ws->err, "the context is full (%u positions; use -c to allow more)", seq->n_ctx);
        return -1;
    }
    if (seq->n_ctx > ws->n_ctx) {
        snprintf(ws->err, sizeof ws->err, "a context of %u is longer than the %u the workspace was planned for",
                 seq->n_ctx, ws->n_ctx);
        return -1;
    }
    for (int t = 0; t < pt->n; t++) {
        if (pt->tokens[t] < 0 || (uint32_t)pt->tokens[t] >= c->n_vocab) {
            snprintf(ws->err, sizeof ws->err, "token id %d is out of range [0, %u)", pt->tokens[t], c->n_vocab);
            return -1;
        }
    }
    return 0;
}

int forward_parts(const Model *m, Workspace *ws, ForwardPart *parts, int n_parts)
{
    const ModelConfig *c = &m->cfg;
    int n = 0, rows = 0;
    for (int p = 0; p < n_parts; p++) {
        ForwardPart *pt = &parts[p];
        if (pt->n < 1 || (uint64_t)n + (uint64_t)pt->n > ws->batch) {
            snprintf(ws->err, sizeof ws->err, "a step of %lld tokens is out of range [1, %u]",
                     (long long)n + (pt->n > 0 ? pt->n : 0), ws->batch);
            return -1;
        }
        for (int q = 0; q < p; q++)
            if (parts[q].seq == pt->seq) {
                snprintf(ws->err, sizeof ws->err, "a sequence appears twice in one step");
                return -1;
            }
        if (part_check(c, ws, pt) != 0) return -1;
        for (int t = 0; t < pt->n; t++) {
            ws->tok_seq[n + t] = pt->seq;
            ws->tok_pos[n + t] = pt->pos0 + (uint32_t)t;
            ws->tok_id[n + t] = pt->tokens[t];
        }
        n += pt->n;
        int want = pt->logits == FORWARD_LOGITS_ALL ? pt->n : pt->logits ? 1 : 0;
        pt->logits_row = want ? rows : -1;
        rows += want;
    }
    if (n_parts < 1 || (uint32_t)rows > ws->logit_rows) {
        snprintf(ws->err, sizeof ws->err, n_parts < 1 ? "a step without tokens" : "logits of every token were not planned for");
        return -1;
    }

    uint64_t dim = c->n_embd;
    int streamed = m->load == LOAD_STREAM;

    for (int t = 0; t < n; t++) {
        const Weight *e = &m->tok_embd;
        if (e->packed) { /* repacked with the tied output (model.c) */
            kern_dequant_packed_row(e->type, e->data, e->row_bytes, (uint64_t)ws->tok_id[t], ws->x + (uint64_t)t * dim);
        } else {
            const uint8_t *row = wstream_embd_row(&ws->stream, m, ws->tok_id[t], t, ws->err, sizeof ws->err);
            if (!row) return -1;
            quant_dequant_row(e->type, row, ws->x + (uint64_t)t * dim, dim);
        }
        if (c->arch->embd_scale) {
            float sc = sqrtf((float)dim);
            for (uint64_t i = 0; i < dim; i++) ws->x[(uint64_t)t * dim + i] *= sc;
        }
    }

    int fused = step_fused(m) && ws->act_mid && !ws->regions_per_op;
    if (!fused) {
        StepJob rj = {m, ws, n};
        run_tokens(rope_worker, &rj, n);
    }
    if (fused) {
        StepJob sj = {m, ws, n};
        port_parallel(step_worker, &sj);
    }
    for (uint32_t l = 0; !fused && l < c->n_layer; l++) {
        /* streamed: in a slot, the next one on its way */
        const LayerWeights *lw = streamed ? wstream_layer(&ws->stream, m, l) : &m->layers[l];
        rmsnorm_tokens(ws->xb, ws->x, lw->attn_norm, dim, c->norm_eps, n);
        float *mixed = ws->xb; /* the attention's output, or the convolution's */
        if (model_layer_conv(c, l)) {
            matmul(ws, &lw->conv_in, ws->xb, n, ws->conv);
            shortconv_apply(c, ws, lw, l, n, ws->xb);
            matmul(ws, &lw->conv_out, ws->xb, n, ws->conv);
            mixed = ws->conv;
        } else if (model_layer_recurrent(c, l)) {
            /* Qwen3.5's gated DeltaNet: its own state instead of a cache */
            DeltaNetScratch d;
            deltanet_scratch(c, ws->batch, ws->dn, &d);
            const Weight *in[4] = {&lw->ssm_qkv, &lw->ssm_z, &lw->ssm_beta, &lw->ssm_alpha};
            float *in_out[4] = {d.qkv, d.z, d.beta, d.alpha};
            matmul_group(ws, in, in_out, 4, ws->xb, n);
            deltanet_mix(c, lw, l, n, ws->tok_seq, ws->tok_pos, &d);
            matmul(ws, &lw->ssm_out, d.o, n, ws->xb);
        } else {
            const Weight *qkv[3] = {&lw->wq, &lw->wk, &lw->wv};
            float *qkv_out[3] = {model_arch_deltanet(c->arch) ? ws->dn : ws->q, ws->k, ws->v};
            matmul_group(ws, qkv, qkv_out, 3, ws->xb, n);
            if (model_arch_deltanet(c->arch)) deltanet_split_q(c, n, ws->dn, ws->q); /* q, and the gates in ws->dn */

            LayerJob lj = {m, ws, lw, l, n};
            run_tokens(qk_worker, &lj, n);
            port_parallel(attention_worker, &lj);
            if (model_arch_deltanet(c->arch)) deltanet_gate(c, n, ws->att, ws->dn);

            matmul(ws, &lw->wo, ws->att, n, ws->xb);
        }
        if (lw->attn_post_norm) add_normed(ws->x, mixed, lw->attn_post_norm, dim, c->norm_eps, n);
        else add_to(ws->x, mixed, (uint64_t)n * dim);

        rmsnorm_tokens(ws->xb, ws->x, lw->ffn_norm, dim, c->norm_eps, n);
        const Weight *gate_up[2] = {&lw->w_gate, &lw->w_up};
        float *gate_up_out[2] = {ws->hb, ws->hb2};
        matmul_group(ws, gate_up, gate_up_out, 2, ws->xb, n);
        SiluJob sj = {ws->hb, ws->hb2, (uint64_t)n * c->n_ff, ws->gelu};
        run_tokens(c->arch->act == ACT_GELU ? gelu_worker : silu_worker, &sj, n);
        matmul(ws, &lw->w_down, ws->hb, n, ws->xb);
        if (lw->ffn_post_norm) add_normed(ws->x, ws->xb, lw->ffn_post_norm, dim, c->norm_eps, n);
        else add_to(ws->x, ws->xb, (uint64_t)n * dim);
    }

    /* Only the rows whose logits are wanted go through the output matrix:
     * moved together first (a row only ever moves down). */
    int r = 0, t0 = 0;
    for (int p = 0; p < n_parts; p++) {
        const ForwardPart *pt = &parts[p];
        int first = pt->logits == FORWARD_LOGITS_ALL ? 0 : pt->logits ? pt->n - 1 : pt->n;
        for (int t = first; t < pt->n; t++, r++)
            if (r != t0 + t) memmove(ws->x + (uint64_t)r * dim, ws->x + (uint64_t)(t0 + t) * dim, dim * sizeof *ws->x);
        t0 += pt->n;
    }
    if (rows > 0) {
        rmsnorm_tokens(ws->xb, ws->x, m->output_norm, dim, c->norm_eps, rows);
        if (streamed) {
            /* by chunks of rows through the slots: the same rows, the same sums */
            for (uint32_t ch = 0; ch < ws->stream.n_out_chunks; ch++) {
                Weight part;
                uint64_t r0 = wstream_output_chunk(&ws->stream, m, ch, &part);
                const Weight *wp = &part;
                float *out = ws->logits + r0;
                matmul_group_stride(ws, &wp, &out, c->n_vocab, 1, ws->xb, rows);
            }
        } else {
            matmul(ws, &m->output, ws->xb, rows, ws->logits);
        }
    }
    if (c->logit_softcap > 0.0f) {
        float cap = c->logit_softcap;
        for (uint64_t i = 0; i < (uint64_t)rows * c->n_vocab; i++) ws->logits[i] = cap * tanhf(ws->logits[i] * (1.0f / cap));
    }
    ws->n_logits = (uint32_t)rows;
    for (int p = 0; p < n_parts; p++) parts[p].seq->n_past = parts[p].pos0 + (uint32_t)parts[p].n;
    return 0;
}

int forward_batch(const Model *m, Workspace *ws, SeqState *seq, const int32_t *tokens, int n, uint32_t pos0,
                  int all_logits)
{
    ForwardPart pt = {seq, tokens, n, pos0, all_logits ? FORWARD_LOGITS_ALL : FORWARD_LOGITS_LAST, -1};
    if (all_logits && n > 1 && !ws->all_logits) {
        snprintf(ws->err, sizeof ws->err, "logits of every token were not planned for");
        return -1;
    }
    return forward_parts(m, ws, &pt, 1);
}

int forward_prompt(const Model *m, Workspace *ws, SeqState *seq, const int32_t *tokens, int n)
{
    if (n < 1) {
        snprintf(ws->err, sizeof ws->err, "no tokens to feed");
        return -1;
    }
    for (int i = 0; i < n;) {
        int step = n - i < (int)ws->batch ? n - i : (int)ws->batch;
        if (forward_batch(m, ws, seq, tokens + i, step, seq->n_past, 0) != 0) return -1;
        i += step;
    }
    return 0;
}
