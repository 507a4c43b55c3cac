/* deltanet.c - Qwen3.5's gated DeltaNet layers and attention gate (deltanet.h). */
#include "deltanet.h"

#include <math.h>
#include <string.h>

#include "../kernels/kernels.h"
#include "layer.h"

static uint64_t conv_channels(const ModelConfig *c)
{
    return (2 * (uint64_t)c->ssm_n_k + c->ssm_n_v) * c->ssm_d_state;
}

static uint64_t inner(const ModelConfig *c)
{
    return (uint64_t)c->ssm_n_v * c->ssm_d_state;
}

uint64_t deltanet_state_floats(const ModelConfig *c)
{
    return (uint64_t)(c->ssm_d_conv - 1) * conv_channels(c) + (uint64_t)c->ssm_n_v * c->ssm_d_state * c->ssm_d_state +
           c->ssm_n_v;
}

uint64_t deltanet_scratch_floats(const ModelConfig *c, uint32_t batch)
{
    if (!model_arch_deltanet(c->arch)) return 0;
    uint64_t per_token = 2 * conv_channels(c) + 2 * inner(c) + 2 * (uint64_t)c->ssm_n_v;
    uint64_t qg = 2 * (uint64_t)c->n_head * c->head_dim; /* the attention layers' q and gate */
    return (uint64_t)batch * (per_token > qg ? per_token : qg);
}

void deltanet_scratch(const ModelConfig *c, uint32_t batch, float *base, DeltaNetScratch *d)
{
    uint64_t B = batch, C = conv_channels(c), V = inner(c), H = c->ssm_n_v;
    d->qkv = base;
    d->conv = d->qkv + B * C;
    d->z = d->conv + B * C;
    d->o = d->z + B * V;
    d->beta = d->o + B * V;
    d->alpha = d->beta + B * H;
}

/* The layer's state in a sequence: the convolution's last d_conv - 1
 * inputs [d_conv - 1][channels], then the value heads' S [head][row][col]
 * kept as S / f, then f [head] (see recur_stage). */
static float *layer_state(const ModelConfig *c, const SeqState *s, uint32_t layer)
{
    return (float *)(void *)(s->recurrent + (uint64_t)model_recurrent_before(c, layer) * s->recurrent_layer_bytes);
}

/* silu(x) in place, through the kernels' SiLU gate with a gate of ones
 * (multiplying by 1 is exact). */
static void silu_inplace(const KernelSet *ks, float *x, uint64_t n)
{
    static const float ones[64] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
                                   1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
                                   1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1};
    for (uint64_t i = 0; i < n; i += 64) ks->silu_mul(x + i, ones, n - i < 64 ? n - i : 64);
}

/* The causal convolution and its SiLU, channels split between threads:
 * out = sum of the last d_conv inputs (oldest first) times the kernel's
 * row, as ggml_ssm_conv sums it (kernels.h: causal_conv). */
static void conv_stage(const Step *j, int ith, int nth)
{
    const ModelConfig *c = &j->m->cfg;
    const KernelSet *ks = kern_active();
    uint64_t C = conv_channels(c), K = c->ssm_d_conv, c0, c1;
    layer_split(C, ith, nth, &c0, &c1);
    for (int t = 0; t < j->n; t++) {
        float *hist = layer_state(c, j->ws->tok_seq[t], j->layer);
        if (j->ws->tok_pos[t] == 0)
            for (uint64_t k = 0; k + 1 < K; k++) memset(hist + k * C + c0, 0, (c1 - c0) * sizeof *hist);
        float *out = j->dn.conv + (uint64_t)t * C + c0;
        ks->causal_conv(out, hist + c0, C, j->dn.qkv + (uint64_t)t * C + c0, j->lw->ssm_conv + c0 * K, (uint32_t)K,
                        c1 - c0);
        silu_inplace(ks, out, c1 - c0);
    }
}

/* q and k of every key head of every token to unit length, as ggml_l2_norm:
 * x / max(|x|, eps). */
static void l2_stage(const Step *j, int ith, int nth)
{
    const ModelConfig *c = &j->m->cfg;
    uint64_t C = conv_channels(c), dk = c->ssm_d_state, per = 2 * (uint64_t)c->ssm_n_k, i0, i1;
    layer_split((uint64_t)j->n * per, ith, nth, &i0, &i1);
    for (uint64_t i = i0; i < i1; i++) {
        float *v = j->dn.conv + (i / per) * C + (i % per) * dk;
        double sum = 0.0;
        for (uint64_t e = 0; e < dk; e++) sum += (double)v[e] * v[e];
        float scale = 1.0f / fmaxf(sqrtf((float)sum), c->norm_eps);
        for (uint64_t e = 0; e < dk; e++) v[e] *= scale;
    }
}

/* The gated RMS norm of one head's output: o = RMSNorm(o) * ssm_norm *
 * silu(z), the gate through the kernels' (into z, read only here). */
static void gate_norm(const ModelConfig *c, const LayerWeights *lw, const KernelSet *ks, float *o, float *z)
{
    uint64_t dk = c->ssm_d_state;
    double ss = 0.0;
    for (uint64_t e = 0; e < dk; e++) ss += (double)o[e] * o[e];
    float inv = 1.0f / sqrtf((float)(ss / (double)dk) + c->norm_eps);
    for (uint64_t e = 0; e < dk; e++) o[e] = (o[e] * inv) * lw->ssm_norm[e];
    ks->silu_mul(z, o, dk);
    memcpy(o, z, dk * sizeof *o);
}

/* With a kernel set whose chunked form pays (KernelSet.delta_chunk), runs
 * of at least DELTA_CHUNK_MIN tokens of a sequence go through it
 * (kern_delta_chunk), in chunks that end where a position is a multiple of
 * DELTA_CHUNK (so steps of any multiple of it chunk alike). Measured on
 * the AVX2 set, 16 heads of 128 over 64 tokens (docs/kernels.md, "Kernels of the newer architectures"): chunks of
 * 16 take 0.67 of the steps' instructions, of 8 0.70, of 32 0.68, of 4
 * 1.37; aarch64 NEON, chunks of 16: 0.92. */
#define DELTA_CHUNK 16
#define DELTA_CHUNK_MIN 8

/* The recurrence, value heads split between threads, each stepping
 * through the tokens; then the gated RMS norm of its output. A head's S is
 * kept as f * T: the decay of every token multiplies f alone (a scalar)
 * instead of every row, until f would fall below KERN_DELTA_FLOOR, when it
 * goes into the rows (T = f T, f = 1): so a token reads each row once for
 * s.k and s.q and writes it once (the kernels' delta_step), where decaying
 * S itself would take a pass more. With the old T and f' = f decay:
 * delta = (v - f' T.k) beta,  T += (delta / f') k,  o = f' T_old.q +
 * delta k.q = S q. A run of DELTA_CHUNK_MIN tokens or more of a sequence
 * goes in chunks (kern_delta_chunk: two passes over T per chunk instead of
 * one per token), each chunk's v overwritten; the sums differ from the
 * steps' (and llama.cpp's) order by rounding only. */
#if defined(__GNUC__) && !defined(__clang__) && defined(__arm__) && !defined(__ARM_NEON)
/* The armv6 build (GCC 12.2, -march=armv6kz+fp -mfloat-abi=softfp): this
 * function as it was in 1af85ee gave wrong logits at -O2 (NaN later), right
 * ones at -O1 and with clang -O2; the trigger went with its row loop or its
 * inlined double sum of squares (now delta_step and gate_norm), and today's
 * function gives the -O1 bits at -O2, but the cause (GCC's code or qemu's
 * emulation) is not proven (docs/models.md, "The armv6 build and qwen35"): kept at -O1, a precaution that
 * costs little (the row work runs at -O2 in the kernels). */
__attribute__((optimize("O1")))
#endif
static void recur_stage(const Step *j, int ith, int nth)
{
    const ModelConfig *c = &j->m->cfg;
    const LayerWeights *lw = j->lw;
    const KernelSet *ks = kern_active();
    uint64_t C = conv_channels(c), V = inner(c), H = c->ssm_n_v, dk = c->ssm_d_state, key_dim = c->ssm_n_k * dk;
    uint64_t hist = (uint64_t)(c->ssm_d_conv - 1) * C, h0, h1;
    float scale = 1.0f / sqrtf((float)dk);
    layer_split(H, ith, nth, &h0, &h1);
    for (uint64_t h = h0; h < h1; h++) {
        uint64_t kh = h % c->ssm_n_k;
        for (int t0 = 0; t0 < j->n;) {
            /* a run of one sequence's tokens, cut where a chunk ends */
            int t1 = t0 + 1;
            while (t1 < j->n && j->ws->tok_seq[t1] == j->ws->tok_seq[t0] && j->ws->tok_pos[t1] % DELTA_CHUNK != 0) t1++;
            float *state = layer_state(c, j->ws->tok_seq[t0], j->layer) + hist;
            float *S = state + h * dk * dk, *f = state + H * dk * dk + h;
            if (j->ws->tok_pos[t0] == 0) {
                memset(S, 0, dk * dk * sizeof *S);
                *f = 1.0f;
            }
            float beta[DELTA_CHUNK], decay[DELTA_CHUNK];
            for (int t = t0; t < t1; t++) {
                beta[t - t0] = 1.0f / (1.0f + expf(-j->dn.beta[(uint64_t)t * H + h]));
                float a = j->dn.alpha[(uint64_t)t * H + h] + lw->ssm_dt[h];
                float sp = a > 20.0f ? a : logf(1.0f + expf(a)); /* softplus, as ggml */
                decay[t - t0] = expf(sp * lw->ssm_a[h]);
            }
            float *row0 = j->dn.conv + (uint64_t)t0 * C, *o0 = j->dn.o + (uint64_t)t0 * V + h * dk;
            if (ks->delta_chunk && t1 - t0 >= DELTA_CHUNK_MIN) {
                kern_delta_chunk(ks, S, f, (uint32_t)dk, (uint32_t)(t1 - t0), row0 + kh * dk, row0 + key_dim + kh * dk,
                                 row0 + 2 * key_dim + h * dk, C, decay, beta, scale, o0, V);
            } else {
                for (int t = t0; t < t1; t++) {
                    const float *row_in = j->dn.conv + (uint64_t)t * C;
                    float fd = *f * decay[t - t0];
                    if (!(fd >= KERN_DELTA_FLOOR)) { /* the factor into the rows (fd may be 0) */
                        for (uint64_t e = 0; e < dk * dk; e++) S[e] *= fd;
                        fd = 1.0f;
                    }
                    *f = fd;
                    /* row r of S: decayed, corrected toward v[r] along k, read
                     * along q (kernels.h: delta_step) */
                    ks->delta_step(S, (uint32_t)dk, row_in + kh * dk, row_in + key_dim + kh * dk,
                                   row_in + 2 * key_dim + h * dk, beta[t - t0], fd, scale, j->dn.o + (uint64_t)t * V + h * dk);
                }
            }
            for (int t = t0; t < t1; t++)
                gate_norm(c, lw, ks, j->dn.o + (uint64_t)t * V + h * dk, j->dn.z + (uint64_t)t * V + h * dk);
            t0 = t1;
        }
    }
}

/* Qwen3.5's attention layers: "attn_q" gives each head's q then its gate. */
void deltanet_q_heads(const ModelConfig *c, const float *qg, float *q, uint32_t h0, uint32_t h1)
{
    uint64_t hd = c->head_dim;
    for (uint64_t h = h0; h < h1; h++) memcpy(q + h * hd, qg + 2 * h * hd, hd * sizeof *q);
}

void deltanet_gate_heads(const ModelConfig *c, float *att, const float *qg, uint32_t h0, uint32_t h1)
{
    uint64_t hd = c->head_dim;
    for (uint64_t h = h0; h < h1; h++)
        for (uint64_t e = 0; e < hd; e++) att[h * hd + e] *= 1.0f / (1.0f + expf(-qg[2 * h * hd + hd + e]));
}

/* ---- the mixer's stages (layer.h) ---------------------------------------- */

/* The four input matrices by rows (of the four together). */
static void in_stage(const Step *s, int ith, int nth)
{
    const LayerWeights *lw = s->lw;
    const Weight *w[4] = {&lw->ssm_qkv, &lw->ssm_z, &lw->ssm_beta, &lw->ssm_alpha};
    float *out[4] = {s->dn.qkv, s->dn.z, s->dn.beta, s->dn.alpha};
    layer_rows_group(s, w, out, 4, ith, nth);
}

/* The gated output quantized for Wout, by token. */
static void out_quant_stage(const Step *s, int ith, int nth)
{
    uint64_t V = inner(&s->m->cfg), t0, t1;
    layer_split((uint64_t)s->n, ith, nth, &t0, &t1);
    for (uint64_t t = t0; t < t1; t++) layer_quantize(s->ws, &s->lw->ssm_out, 1, t, s->dn.o + t * V, 0, V);
}

static void out_stage(const Step *s, int ith, int nth)
{
    uint64_t dim = s->m->cfg.n_embd, lo, hi;
    layer_split(dim, ith, nth, &lo, &hi);
    layer_rows(s->ws, &s->lw->ssm_out, 1, s->dn.o, lo, hi, s->n, s->ws->xb, dim);
}

int deltanet_plan(Step *s, int nth, Stage *st)
{
    const LayerWeights *lw = s->lw;
    (void)nth;
    deltanet_scratch(&s->m->cfg, s->ws->batch, s->ws->dn, &s->dn);
    s->in[0] = &lw->ssm_qkv;
    s->in[1] = &lw->ssm_z;
    s->in[2] = &lw->ssm_beta;
    s->in[3] = &lw->ssm_alpha;
    s->n_in = 4;
    s->mixed = s->ws->xb;
    st[0] = (Stage){in_stage, 0};
    st[1] = (Stage){conv_stage, 0};
    st[2] = (Stage){l2_stage, 0};
    st[3] = (Stage){recur_stage, 0};
    st[4] = (Stage){out_quant_stage, 1};
    st[5] = (Stage){out_stage, 0};
    return 6;
}
