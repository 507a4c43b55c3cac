/* forward.c - the transformer forward pass (Qwen3, Qwen2, llama, SmolLM3, Phi-3, Gemma 3 and 4, LFM2, Qwen3.5)
 * over the sequences' KV caches and recurrent states.
 *
 * Per layer, for the tokens of one step:
 *   h = RMSNorm(x) * attn_norm
 *   x += mixer(h): attention (attention.c), or in LFM2 a short convolution
 *   (shortconv.c), in Qwen3.5 a gated DeltaNet layer (deltanet.c)
 *   h = RMSNorm(x) * ffn_norm
 *   x += Wdown (silu(Wgate h) * (Wup h))   (GELU in Gemma 3), or a mixture
 *   of experts' (moe.c: Qwen3-MoE, LFM2-MoE, Qwen3.5-MoE)
 * (post-norms on both sublayers' outputs in Gemma 3; Gemma 4's per-layer
 * embeddings after the FFN, pe.c, and its layers' shapes per kind, model.h:
 * model_layer_cfg), then logits = Wout
 * (RMSNorm(x) * output_norm). A layer is a list of stages (layer.h), run
 * fused in one parallel region or a region per stage.
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
#include "deltanet.h"
#include "layer.h"
#include "../base/fmath.h"
#include "shortconv.h"
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
       W_TID, W_RECUR, W_GELU, W_ROPE, W_MOE, W_PE, W_PE_ROWS, W_COUNT };

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
    /* the layers keeping a cache (not Gemma 4's last ones, which read an
     * earlier layer's); the windowed ones' rows of their own width */
    uint32_t n_swa_layers = model_swa_before(c, c->n_layer_kv), n_recur = model_recurrent_before(c, c->n_layer);
    uint64_t cache_rows = plan_mul(p, plan_mul(p, c->n_layer_kv - n_swa_layers - n_recur, c->n_head_kv), o->n_ctx);
    uint64_t ring = plan_mul(p, plan_mul(p, n_swa_layers, c->n_head_kv_swa), ring_rows(c, o));
    b[S_KCACHE] = (Buffer){what, cache_rows, kv_type_bytes(o->kv_type, c->head_dim)};
    b[S_VCACHE] = (Buffer){what, cache_rows, kv_type_bytes(o->kv_type, c->head_dim_v)};
    b[S_KRING] = (Buffer){ring_what, ring, kv_type_bytes(o->kv_type, c->head_dim_swa)};
    b[S_VRING] = (Buffer){ring_what, ring, kv_type_bytes(o->kv_type, c->head_dim_v_swa)};
    /* recurrent layers: a state of fixed size, F32 (LFM2's short
     * convolutions or Qwen3.5's DeltaNet layers) */
    uint64_t recur_bytes = model_conv_before(c, c->n_layer) ? shortconv_state_bytes(c)
                         : n_recur                          ? plan_mul(p, deltanet_state_floats(c), sizeof(float))
                                                            : 0;
    b[S_RECUR] = (Buffer){recur_what, n_recur, recur_bytes};
}

int seq_can_resume(const ModelConfig *c, const SeqState *s, uint32_t pos0)
{
    if (s->recurrent && pos0 != 0 && pos0 < s->n_past) return 0; /* a state cannot be rewound */
    if (!s->ring || pos0 >= s->n_past || s->n_past <= s->ring) return 1;
    /* the rings hold positions n_past - ring .. n_past - 1 */
    uint32_t need = pos0 + 1 > c->n_swa ? pos0 + 1 - c->n_swa : 0;
    return need >= s->n_past - s->ring;
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
    if (o->spec_rows > r) r = o->spec_rows < o->batch ? o->spec_rows : o->batch;
    return r > n_seq(o) ? r : n_seq(o);
}

static void workspace_buffers(const ModelConfig *model_cfg, const ModelOptions *o, Plan *p, Buffer *b)
{
    ModelConfig wide; /* room for any layer's shapes */
    model_widest_cfg(model_cfg, &wide);
    const ModelConfig *c = &wide;
    uint64_t B = o->batch;
    b[W_X] = (Buffer){"workspace: activations", B * c->n_embd, 4};
    b[W_XB] = (Buffer){"workspace: activations", B * c->n_embd, 4};
    b[W_Q] = (Buffer){"workspace: activations", B * c->n_head * c->head_dim, 4};
    b[W_K] = (Buffer){"workspace: activations", B * kv_width(c), 4};
    b[W_V] = (Buffer){"workspace: activations", B * kv_width_v(c), 4};
    b[W_ATT] = (Buffer){"workspace: activations", B * c->n_head * c->head_dim_v, 4};
    /* the FFN's hidden rows: a token's, or its experts' (moe.h) */
    uint64_t hidden = moe_hidden(c) > c->n_ff ? moe_hidden(c) : c->n_ff;
    b[W_HB] = (Buffer){"workspace: activations", B * hidden, 4};
    b[W_HB2] = (Buffer){"workspace: activations", B * hidden, 4};
    b[W_SCORES] = (Buffer){"workspace: attention scores", (uint64_t)c->n_head * ATT_TOKENS * KERN_ATT_KEYS, 4};
    b[W_LOGITS] = (Buffer){"workspace: logits", plan_mul(p, logit_rows(o), c->n_vocab), 4};
    b[W_ACT0] = (Buffer){"workspace: quantized activations", B, kern_act_bytes(KERN_ACT_Q8_0, widest_input(c))};
    b[W_ACTK] = (Buffer){"workspace: quantized activations", B, kern_act_bytes(KERN_ACT_Q8_K, widest_input(c))};
    /* the inputs of the second matrices of a mixer and of the FFN (wo,
     * conv_out, ssm_out, w_down), quantized while the first ones' input
     * may still be read (layer.h) */
    uint64_t mid = (uint64_t)c->n_head * c->head_dim_v > c->n_ff ? (uint64_t)c->n_head * c->head_dim_v : c->n_ff;
    if (model_conv_before(c, c->n_layer) && c->n_embd > mid) mid = c->n_embd;
    if (model_arch_deltanet(c->arch) && (uint64_t)c->ssm_n_v * c->ssm_d_state > mid) mid = (uint64_t)c->ssm_n_v * c->ssm_d_state;
    uint64_t mid_bytes = kern_act_bytes(KERN_ACT_Q8_0, mid) > kern_act_bytes(KERN_ACT_Q8_K, mid)
                       ? kern_act_bytes(KERN_ACT_Q8_0, mid) : kern_act_bytes(KERN_ACT_Q8_K, mid);
    /* experts: a row of down's input for each of a token's slots */
    if (c->n_expert && moe_mid_bytes(c) > mid_bytes) mid_bytes = moe_mid_bytes(c);
    b[W_ACTM] = (Buffer){"workspace: quantized activations", B, mid_bytes};
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
    b[W_ROPE] = (Buffer){"workspace: activations", B * layer_rope_tables(c) * layer_rope_stride(c), 4};
    b[W_MOE] = (Buffer){"workspace: experts' routing and slots", moe_scratch_bytes(c, o->batch), 1};
    /* Gemma 4: each token's per-layer inputs, and its row of their table
     * when the table is not mapped (never the table itself: pe.c) */
    b[W_PE] = (Buffer){"workspace: per-layer inputs", plan_mul(p, B * c->n_layer, c->n_embd_pe), 4};
    b[W_PE_ROWS] = (Buffer){"workspace: per-layer embedding rows",
                            c->n_embd_pe && o->load != LOAD_MMAP ? B : 0, c->n_vocab ? c->pe_bytes / c->n_vocab : 0};
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

int seq_state_spans(const ModelConfig *c, const SeqState *s, uint32_t n, int (*visit)(void *ctx, void *p, uint64_t bytes),
                    void *ctx)
{
    for (uint32_t l = 0; l < c->n_layer_kv; l++) { /* the later layers (Gemma 4) keep none */
        if (model_layer_recurrent(c, l)) continue;
        ModelConfig lc; /* the layer's widths */
        model_layer_cfg(c, l, &lc);
        uint64_t krow = kv_type_bytes(s->kv_type, lc.head_dim), vrow = kv_type_bytes(s->kv_type, lc.head_dim_v);
        for (uint32_t h = 0; h < lc.n_head_kv; h++) {
            uint8_t *k, *v;
            uint32_t rows;
            seq_kv_head(&lc, s, l, h, &k, &v, &rows);
            uint64_t r = model_layer_swa(c, l) ? rows : n; /* a ring holds its positions in any row */
            int rc = visit(ctx, k, r * krow);
            if (rc == 0) rc = visit(ctx, v, r * vrow);
            if (rc != 0) return rc;
        }
    }
    uint64_t n_recur = model_recurrent_before(c, c->n_layer);
    return n_recur ? visit(ctx, s->recurrent, n_recur * s->recurrent_layer_bytes) : 0;
}

/* The undo of a step of n tokens from pos0 (seq_undo_*): every windowed
 * layer's kv heads' ring rows of those positions (keys, then values),
 * then the recurrent state. save copies into buf; otherwise buf's rows of
 * positions from `keep` on and its recurrent state go back. */
static void undo_copy(const ModelConfig *c, SeqState *s, uint32_t pos0, uint32_t n, uint32_t keep, uint8_t *buf, int save)
{
    for (uint32_t l = 0; s->ring && l < c->n_layer_kv; l++) { /* the layers keeping a cache */
        if (!model_layer_swa(c, l)) continue;
        ModelConfig lc; /* the windowed layers' widths (Gemma 4's differ from the global ones') */
        model_layer_cfg(c, l, &lc);
        uint64_t krow = kv_type_bytes(s->kv_type, lc.head_dim), vrow = kv_type_bytes(s->kv_type, lc.head_dim_v);
        for (uint32_t h = 0; h < lc.n_head_kv; h++) {
            uint8_t *k, *v;
            uint32_t rows;
            seq_kv_head(&lc, s, l, h, &k, &v, &rows);
            for (uint32_t i = 0; i < n; i++, buf += krow + vrow) {
                uint64_t r = (pos0 + i) % rows;
                if (save) memcpy(buf, k + r * krow, krow), memcpy(buf + krow, v + r * vrow, vrow);
                else if (pos0 + i >= keep) memcpy(k + r * krow, buf, krow), memcpy(v + r * vrow, buf + krow, vrow);
            }
        }
    }
    uint64_t recur = model_recurrent_before(c, c->n_layer) * s->recurrent_layer_bytes;
    if (recur) memcpy(save ? buf : s->recurrent, save ? s->recurrent : buf, recur);
}

uint64_t seq_undo_bytes(const ModelConfig *cfg, const ModelOptions *opt, uint32_t n)
{
    Plan scratch;
    plan_init(&scratch);
    Buffer b[S_COUNT];
    seq_buffers(cfg, opt, &scratch, "", "", "", b);
    uint64_t rows = b[S_KRING].count ? (uint64_t)model_swa_before(cfg, cfg->n_layer_kv) * cfg->n_head_kv_swa * n : 0;
    return rows * (b[S_KRING].elem + b[S_VRING].elem) + b[S_RECUR].count * b[S_RECUR].elem;
}

void seq_undo_save(const ModelConfig *c, SeqState *s, uint32_t n, void *buf)
{
    undo_copy(c, s, s->n_past, n, s->n_past, buf, 1);
}

void seq_undo_restore(const ModelConfig *c, SeqState *s, uint32_t pos0, uint32_t n, uint32_t keep, void *buf)
{
    undo_copy(c, s, pos0, n, keep, buf, 0);
    s->n_past = s->recurrent ? pos0 : keep;
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
    moe_scratch(&m->cfg, opt->batch, p[W_MOE], &ws->moe);
    ws->pe = p[W_PE];
    ws->pe_rows = p[W_PE_ROWS];
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
void forward_rope(float *v, uint32_t n_rot, const float *cs, RopeStyle style)
{
    kern_active()->rope(v, n_rot, cs, style == ROPE_NEOX);
}

/* base^(-2i/n_rot) for the n_rot/2 pairs, as exp(-2i/n_rot ln base):
 * fmath.c (libm's pow, sin and cos were 13 KB of the static binary) */
static void rope_freqs(double *freq, uint32_t n_rot, float base)
{
    double log_base = fmath_log((double)base);
    for (uint32_t i = 0; i < n_rot / 2; i++) freq[i] = exp(-2.0 * (double)i / (double)n_rot * log_base);
}

void forward_rope_angles(float *cs, uint32_t n_rot, double pos, const double *freq, const float *freq_factors)
{
    for (uint32_t i = 0; i < n_rot / 2; i++) {
        double theta = pos * freq[i];
        if (freq_factors) theta /= (double)freq_factors[i];
        double s, c;
        fmath_sincos(theta, &s, &c);
        cs[2 * i] = (float)c;
        cs[2 * i + 1] = (float)s;
    }
}

void forward_rope_table(float *cs, uint32_t n_rot, double pos, float base, const float *freq_factors)
{
    double freq[FORWARD_MAX_HEAD_DIM / 2];
    rope_freqs(freq, n_rot, base);
    forward_rope_angles(cs, n_rot, pos, freq, freq_factors);
}

void forward_rope_freqs(const ModelConfig *c, uint32_t table, double *freq)
{
    rope_freqs(freq, table ? c->n_rot_swa : c->n_rot, table ? c->rope_base_swa : c->rope_base);
    if (table || c->rope_freq_scale == 1.0f) return; /* the windowed layers' positions are not scaled */
    double scale = (double)c->rope_freq_scale;
    for (uint32_t i = 0; i < c->n_rot / 2; i++) {
        double mix = 0.0; /* linear: every pair scaled */
        if (c->rope_yarn) { /* ggml's ramp, in float as ggml computes it */
            float y = ((float)i - c->yarn_low) / (c->yarn_high - c->yarn_low > 0.001f ? c->yarn_high - c->yarn_low : 0.001f);
            mix = 1.0 - (y < 0.0f ? 0.0 : y > 1.0f ? 1.0 : (double)y);
        }
        freq[i] *= scale * (1.0 - mix) + mix;
    }
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
    layer_split((uint64_t)j->n, ith, nth, &t0, &t1);
    for (uint64_t t = t0; t < t1; t++) layer_rmsnorm(j->out + t * j->dim, j->in + t * j->dim, j->w, j->dim, j->eps);
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
    layer_split((uint64_t)j->n, ith, nth, &t0, &t1);
    for (uint64_t t = t0; t < t1; t++) kern_quantize_act(j->type, j->x + t * j->cols, j->out + t * j->stride, j->cols);
}

/* ---- matmul: out[t][r] = W[r] . x[t], output rows split across threads -- */

typedef struct {
    Workspace *ws;
    const Weight *w;
    const float *x;
    int n;
    float *out;
    uint64_t out_stride;
} MatmulJob;

static void matmul_worker(void *ctx, int ith, int nth)
{
    const MatmulJob *j = ctx;
    uint64_t lo, hi;
    layer_split(j->w->rows, ith, nth, &lo, &hi);
    layer_rows(j->ws, j->w, 0, j->x, lo, hi, j->n, j->out, j->out_stride);
}

/* The output matrix (the layers' are the stages'): x quantized for w into
 * its format's buffer, then its rows; token t's out at out + t * out_stride. */
static void matmul(Workspace *wk, const Weight *w, const float *x, int n, float *out, uint64_t out_stride)
{
    KernActFormat f = kern_act_format(w->type);
    if (f != KERN_ACT_F32) {
        QuantJob q = {w->type, x, f == KERN_ACT_Q8_0 ? wk->act_q8_0 : wk->act_q8_k, w->cols, kern_act_bytes(f, w->cols), n};
        run_tokens(quant_worker, &q, n);
    }
    MatmulJob j = {wk, w, x, n, out, out_stride};
    port_parallel(matmul_worker, &j);
}

/* ---- RoPE tables, once per step ------------------------------------------ */

/* The RoPE tables of tokens [t0, t1) of the step at their positions. */
static void rope_fill(const Model *m, Workspace *ws, uint64_t t0, uint64_t t1)
{
    const ModelConfig *c = &m->cfg;
    double freq[FORWARD_MAX_HEAD_DIM / 2]; /* a table's frequencies, once for the tokens */
    for (uint32_t k = 0; k < layer_rope_tables(c); k++) {
        forward_rope_freqs(c, k, freq);
        /* the windowed layers' table: their width, no frequency factors
         * (Gemma 4's rope_freqs are the global layers') */
        uint32_t n_rot = k ? c->n_rot_swa : c->n_rot;
        for (uint64_t t = t0; t < t1; t++) {
            float *cs = ws->rope + (t * layer_rope_tables(c) + k) * layer_rope_stride(c);
            forward_rope_angles(cs, n_rot, (double)ws->tok_pos[t], freq, k ? NULL : m->rope_freqs);
            if (c->rope_attn_factor != 1.0f) /* LongRoPE's and YaRN's factors scale what rotates, as ggml does */
                for (uint32_t i = 0; i < n_rot; i++) cs[i] *= c->rope_attn_factor;
        }
    }
}

typedef struct {
    const Model *m;
    Workspace *ws;
    int n;
} StepJob;

static void rope_worker(void *ctx, int ith, int nth)
{
    const StepJob *sj = ctx;
    uint64_t t0, t1;
    layer_split((uint64_t)sj->n, ith, nth, &t0, &t1);
    rope_fill(sj->m, sj->ws, t0, t1);
}

/* ---- the stages around the mixer: the residuals, the norms, the FFN ------ */

/* 1: the previous layer's output into the residual, the layer's norm,
 * quantized for the mixer (after the last layer: the residual alone). */
static void norm_in_stage(const Step *s, int ith, int nth)
{
    uint64_t t0, t1;
    layer_split((uint64_t)s->n, ith, nth, &t0, &t1);
    for (uint64_t t = t0; t < t1; t++)
        layer_residual_norm(&s->m->cfg, s->ws, t, s->add ? s->ws->xb : NULL, s->post, s->scale,
                      s->lw ? s->lw->attn_norm : NULL, s->in, s->n_in);
}

/* 4: the mixer's output into the residual, the FFN's norm, quantized for
 * gate and up. */
static void norm_ffn_stage(const Step *s, int ith, int nth)
{
    const Weight *in[MOE_MAX_INPUTS] = {&s->lw->w_gate, &s->lw->w_up};
    int n_in = model_layer_moe(&s->m->cfg, s->layer) ? moe_inputs(s->lw, in) : 2; /* or router, gate, up */
    uint64_t t0, t1;
    layer_split((uint64_t)s->n, ith, nth, &t0, &t1);
    for (uint64_t t = t0; t < t1; t++)
        layer_residual_norm(&s->m->cfg, s->ws, t, s->mixed, s->lw->attn_post_norm, NULL, s->lw->ffn_norm, in, n_in);
}

/* 5: the same rows of gate and up, silu(gate) * up (or GELU) on them,
 * quantized for w_down: rows in whole blocks of its activation format. */
static void gate_up_stage(const Step *s, int ith, int nth)
{
    const ModelConfig *c = &s->lc;
    const LayerWeights *lw = s->lw;
    Workspace *ws = s->ws;
    uint64_t n_ff = c->n_ff, lo, hi;
    layer_split_units(n_ff, layer_act_block(&lw->w_down), ith, nth, &lo, &hi);
    layer_rows(ws, &lw->w_gate, 0, ws->xb, lo, hi, s->n, ws->hb, n_ff);
    layer_rows(ws, &lw->w_up, 0, ws->xb, lo, hi, s->n, ws->hb2, n_ff);
    for (uint64_t t = 0; t < (uint64_t)s->n && lo < hi; t++) {
        if (c->arch->act == ACT_GELU) kern_active()->gelu_mul(ws->hb + t * n_ff + lo, ws->hb2 + t * n_ff + lo, hi - lo, ws->gelu);
        else kern_active()->silu_mul(ws->hb + t * n_ff + lo, ws->hb2 + t * n_ff + lo, hi - lo);
        layer_quantize(ws, &lw->w_down, 1, t, ws->hb + t * n_ff, lo, hi);
    }
}

/* 6: w_down by rows (into xb: the next layer's stage 1 adds it). */
static void down_stage(const Step *s, int ith, int nth)
{
    uint64_t dim = s->m->cfg.n_embd, lo, hi;
    layer_split(dim, ith, nth, &lo, &hi);
    layer_rows(s->ws, &s->lw->w_down, 1, s->ws->hb, lo, hi, s->n, s->ws->xb, dim);
}

/* ---- the layer loop --------------------------------------------------------
 *
 * Layer l's stages (layer.h): 1, the mixer's, 4, 5, 6; l == n_layer: the
 * last layer's residual alone. The previous layer's residual goes into
 * stage 1 (a barrier less than a stage of its own). The mixer of a layer: */
enum { MIX_ATTENTION, MIX_CONV, MIX_DELTANET };

static int layer_plan(Step *s, const Model *m, Workspace *ws, int n, uint32_t l, const LayerWeights *lw, int nth,
                      Stage *st)
{
    static const MixerPlan mixers[] = {[MIX_ATTENTION] = attention_plan, [MIX_CONV] = shortconv_plan,
                                       [MIX_DELTANET] = deltanet_plan};
    const ModelConfig *c = &m->cfg;
    memset(s, 0, sizeof *s);
    s->m = m;
    s->ws = ws;
    s->n = n;
    s->layer = l;
    s->lw = lw;
    s->add = l > 0;
    /* the previous layer's output: its FFN's, or (Gemma 4) its per-layer
     * embedding's, post-normed, then its output scale */
    s->post = !l ? NULL : c->n_embd_pe ? m->layers[l - 1].pe_post_norm : m->layers[l - 1].ffn_post_norm;
    s->scale = l ? m->layers[l - 1].out_scale : NULL;
    st[0] = (Stage){norm_in_stage, 1};
    if (l == c->n_layer) return 1;
    model_layer_cfg(c, l, &s->lc);
    int mix = model_layer_conv(c, l) ? MIX_CONV : model_layer_recurrent(c, l) ? MIX_DELTANET : MIX_ATTENTION;
    int k = 1 + mixers[mix](s, nth, st + 1);
    st[k++] = (Stage){norm_ffn_stage, 1};
    if (model_layer_moe(c, l)) {
        k += moe_plan(s, nth, st + k);
    } else {
        st[k++] = (Stage){gate_up_stage, 0};
        st[k++] = (Stage){down_stage, 0};
    }
    if (c->n_embd_pe) k += pe_plan(s, nth, st + k);
    return k;
}

/* Fused: the step's layers in one parallel region, a barrier after each
 * stage (none after the last, the region's end). */
static void step_worker(void *ctx, int ith, int nth)
{
    const StepJob *sj = ctx;
    const ModelConfig *c = &sj->m->cfg;
    rope_worker(ctx, ith, nth); /* read from layer 0's second stage on, after a barrier */
    for (uint32_t l = 0; l <= c->n_layer; l++) {
        Step s;
        Stage st[LAYER_MAX_STAGES];
        int ns = layer_plan(&s, sj->m, sj->ws, sj->n, l, l < c->n_layer ? &sj->m->layers[l] : NULL, nth, st);
        for (int k = 0; k < ns; k++) {
            st[k].fn(&s, ith, nth);
            if (l < c->n_layer) port_barrier();
        }
    }
}

/* A region per stage: one stage of a Step. */
typedef struct {
    const Step *s;
    void (*fn)(const Step *s, int ith, int nth);
} StageJob;

static void stage_worker(void *ctx, int ith, int nth)
{
    const StageJob *j = ctx;
    j->fn(j->s, ith, nth);
}

/* The step runs fused when its weights stay in memory (streamed ones land
 * between layers, on the calling thread). */
static int step_fused(const Model *m, const Workspace *ws)
{
    return m->load != LOAD_STREAM && !ws->regions_per_op;
}

/* The layers of a step: fused, or a region per stage. */
static void step_layers(const Model *m, Workspace *ws, int n)
{
    const ModelConfig *c = &m->cfg;
    StepJob sj = {m, ws, n};
    if (step_fused(m, ws)) {
        port_parallel(step_worker, &sj);
        return;
    }
    run_tokens(rope_worker, &sj, n);
    for (uint32_t l = 0; l <= c->n_layer; l++) {
        /* streamed: in a slot, the next one on its way */
        const LayerWeights *lw = l == c->n_layer            ? NULL
                               : m->load == LOAD_STREAM ? wstream_layer(&ws->stream, m, l)
                                                        : &m->layers[l];
        Step s;
        Stage st[LAYER_MAX_STAGES];
        int ns = layer_plan(&s, m, ws, n, l, lw, port_threads(), st);
        for (int k = 0; k < ns; k++) {
            StageJob j = {&s, st[k].fn};
            if (st[k].per_token) run_tokens(stage_worker, &j, n);
            else port_parallel(stage_worker, &j);
        }
    }
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

    if (c->n_embd_pe && pe_inputs(m, ws, n) != 0) return -1;
    step_layers(m, ws, n);

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
                matmul(ws, &part, ws->xb, rows, ws->logits + r0, c->n_vocab);
            }
        } else {
            matmul(ws, &m->output, ws->xb, rows, ws->logits, c->n_vocab);
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
