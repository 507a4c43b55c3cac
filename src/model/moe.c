/* moe.c - a mixture of experts' FFN (moe.h): routing, the grouping of a
 * step's tokens by expert, the experts through the dense kernels. */
#include "moe.h"

#include <math.h>
#include <string.h>

#include "../kernels/kernels.h"
#include "layer.h"

/* ---- memory ------------------------------------------------------------ */

static uint64_t round64(uint64_t b)
{
    return (b + 63) & ~(uint64_t)63;
}

/* The parts of the scratch, in order; carves them when s is not NULL.
 * A slot's input is at most 4 bytes an element (F32). */
static uint64_t layout(const ModelConfig *c, uint32_t batch, uint8_t *base, MoeScratch *s)
{
    uint64_t pairs = (uint64_t)batch * c->n_expert_used, off = 0;
#define PART(field, bytes)                                     \
    do {                                                       \
        if (s) s->field = (void *)(base + off);                \
        off += round64(bytes);                                 \
    } while (0)
    PART(probs, (uint64_t)batch * c->n_expert * sizeof(float));
    PART(sel, pairs * sizeof(int32_t));
    PART(weight, pairs * sizeof(float));
    PART(slot, pairs * sizeof(uint32_t));
    PART(off, ((uint64_t)c->n_expert + 1) * sizeof(uint32_t));
    PART(act, pairs * c->n_embd * sizeof(float));
    PART(out, (pairs + (c->n_ff_shexp ? batch : 0)) * c->n_embd * sizeof(float));
    PART(shared_gate, (uint64_t)batch * sizeof(float));
#undef PART
    return off;
}

uint64_t moe_scratch_bytes(const ModelConfig *c, uint32_t batch)
{
    return c->n_expert ? layout(c, batch, NULL, NULL) : 0;
}

void moe_scratch(const ModelConfig *c, uint32_t batch, uint8_t *base, MoeScratch *s)
{
    memset(s, 0, sizeof *s);
    if (c->n_expert && base) layout(c, batch, base, s);
}

/* The larger of a row of n elements' quantized bytes (Q8_0, Q8_K). */
static uint64_t act_max(uint64_t n)
{
    uint64_t a = kern_act_bytes(KERN_ACT_Q8_0, n), b = kern_act_bytes(KERN_ACT_Q8_K, n);
    return a > b ? a : b;
}

uint64_t moe_mid_bytes(const ModelConfig *c)
{
    return c->n_expert_used * act_max(c->n_ff_exp) + (c->n_ff_shexp ? act_max(c->n_ff_shexp) : 0);
}

int moe_inputs(const LayerWeights *lw, const Weight **w)
{
    w[0] = &lw->gate_inp;
    w[1] = &lw->gate_exps;
    w[2] = &lw->up_exps;
    if (!lw->up_shexp.rows) return 3;
    w[3] = &lw->gate_inp_shexp;
    w[4] = &lw->gate_shexp;
    w[5] = &lw->up_shexp;
    return 6;
}

/* ---- the stages ----------------------------------------------------------- */

/* The step's normed input in w's activation format (quantized by the
 * FFN's norm stage), and its bytes per token. */
static const uint8_t *input_of(const Workspace *ws, const Weight *w, uint64_t cols, uint64_t *stride)
{
    KernActFormat f = kern_act_format(w->type);
    *stride = kern_act_bytes(f, cols);
    return f == KERN_ACT_F32 ? (const uint8_t *)ws->xb : f == KERN_ACT_Q8_0 ? ws->act_q8_0 : ws->act_q8_k;
}

/* One token's probabilities from its router logits p (in place), its
 * experts (largest p + bias first; the lower index on a tie) and their
 * weights, as ggml: softmax with a double sum, sigmoid, the weights'
 * sum in double, clamped at F16's smallest normal before dividing. */
static void route_token(const ModelConfig *c, const float *bias, float *p, int32_t *sel, float *w)
{
    uint32_t N = c->n_expert, K = c->n_expert_used, n = 0;
    if (c->moe_gating == MOE_SOFTMAX) {
        float max = p[0];
        for (uint32_t i = 1; i < N; i++) max = p[i] > max ? p[i] : max;
        double sum = 0.0;
        for (uint32_t i = 0; i < N; i++) sum += (double)(p[i] = expf(p[i] - max));
        float inv = (float)(1.0 / sum);
        for (uint32_t i = 0; i < N; i++) p[i] *= inv;
    } else {
        for (uint32_t i = 0; i < N; i++) p[i] = 1.0f / (1.0f + expf(-p[i]));
    }
    float key[MOE_MAX_USED];
    for (uint32_t i = 0; i < N; i++) {
        float v = bias ? p[i] + bias[i] : p[i];
        if (n == K && !(v > key[K - 1])) continue;
        uint32_t j = n < K ? n++ : K - 1; /* the K first fill every slot, NaNs last */
        for (; j > 0 && v > key[j - 1]; j--) key[j] = key[j - 1], sel[j] = sel[j - 1];
        key[j] = v;
        sel[j] = (int32_t)i;
    }
    double sum = 0.0;
    for (uint32_t k = 0; k < K; k++) sum += (double)(w[k] = p[sel[k]]);
    if (c->arch->moe_norm_w) {
        float s = (float)sum;
        if (!(s >= 6.103515625e-5f)) s = 6.103515625e-5f;
        for (uint32_t k = 0; k < K; k++) w[k] /= s;
    }
}

/* route (per token): the router's rows for the thread's tokens, then each
 * token's experts and weights. */
static void route_stage(const Step *s, int ith, int nth)
{
    const ModelConfig *c = &s->m->cfg;
    const MoeScratch *ms = &s->ws->moe;
    uint64_t t0, t1, stride, N = c->n_expert, K = c->n_expert_used;
    layer_split((uint64_t)s->n, ith, nth, &t0, &t1);
    if (t0 >= t1) return;
    const uint8_t *in = input_of(s->ws, &s->lw->gate_inp, c->n_embd, &stride);
    layer_matmul(&s->lw->gate_inp, 0, N, in + t0 * stride, stride, (int)(t1 - t0), ms->probs + t0 * N, N);
    for (uint64_t t = t0; t < t1; t++)
        route_token(c, s->lw->exp_probs_b, ms->probs + t * N, ms->sel + t * K, ms->weight + t * K);
    if (!c->n_ff_shexp) return;
    in = input_of(s->ws, &s->lw->gate_inp_shexp, c->n_embd, &stride);
    layer_matmul(&s->lw->gate_inp_shexp, 0, 1, in + t0 * stride, stride, (int)(t1 - t0), ms->shared_gate + t0, 1);
    for (uint64_t t = t0; t < t1; t++) ms->shared_gate[t] = 1.0f / (1.0f + expf(-ms->shared_gate[t]));
}

/* The shared expert's hidden rows (after every slot's, moe_hidden) and
 * their quantized copy in act_mid (after the slots', moe_mid_bytes). */
static float *shared_hidden(const Workspace *ws, const ModelConfig *c, float *hb)
{
    return hb + (uint64_t)ws->batch * c->n_expert_used * c->n_ff_exp;
}

static uint8_t *shared_mid(const Workspace *ws, const ModelConfig *c)
{
    return (uint8_t *)ws->act_mid + (uint64_t)ws->batch * c->n_expert_used * act_max(c->n_ff_exp);
}

/* up of the shared expert: the thread's rows of its gate and up for every
 * token, silu(gate) * up quantized for its down. */
static void shared_up(const Step *s, int ith, int nth)
{
    const ModelConfig *c = &s->m->cfg;
    const LayerWeights *lw = s->lw;
    Workspace *ws = s->ws;
    uint64_t F = c->n_ff_shexp, lo, hi, stride;
    layer_split_units(F, layer_act_block(&lw->down_shexp), ith, nth, &lo, &hi);
    if (lo >= hi) return;
    float *g = shared_hidden(ws, c, ws->hb), *u = shared_hidden(ws, c, ws->hb2);
    const uint8_t *in = input_of(ws, &lw->gate_shexp, c->n_embd, &stride);
    layer_matmul(&lw->gate_shexp, lo, hi, in, stride, s->n, g, F);
    in = input_of(ws, &lw->up_shexp, c->n_embd, &stride);
    layer_matmul(&lw->up_shexp, lo, hi, in, stride, s->n, u, F);
    KernActFormat f = kern_act_format(lw->down_shexp.type);
    for (uint64_t t = 0; t < (uint64_t)s->n; t++) {
        kern_active()->silu_mul(g + t * F + lo, u + t * F + lo, hi - lo);
        if (f != KERN_ACT_F32)
            kern_quantize_act(lw->down_shexp.type, g + t * F + lo,
                              shared_mid(ws, c) + t * kern_act_bytes(f, F) + kern_act_bytes(f, lo), hi - lo);
    }
}

/* gather: the pairs (token, k) in token order get slots grouped by
 * expert; every thread counts the same, copies the inputs of its share of
 * the slots and records their slots (thread 0 the experts' offsets). */
static void gather_stage(const Step *s, int ith, int nth)
{
    const ModelConfig *c = &s->m->cfg;
    const MoeScratch *ms = &s->ws->moe;
    uint32_t N = c->n_expert, K = c->n_expert_used, pairs = (uint32_t)s->n * K, next[MOE_MAX_EXPERTS];
    uint64_t lo, hi, stride;
    memset(next, 0, N * sizeof *next);
    for (uint32_t p = 0; p < pairs; p++) next[ms->sel[p]]++;
    for (uint32_t e = 0, sum = 0; e <= N; e++) {
        uint32_t count = e < N ? next[e] : 0;
        if (ith == 0) ms->off[e] = sum;
        if (e < N) next[e] = sum;
        sum += count;
    }
    layer_split(pairs, ith, nth, &lo, &hi);
    const uint8_t *in = input_of(s->ws, &s->lw->gate_exps, c->n_embd, &stride);
    for (uint32_t p = 0; p < pairs; p++) {
        uint32_t slot = next[ms->sel[p]]++;
        if (slot < lo || slot >= hi) continue;
        ms->slot[p] = slot;
        memcpy(ms->act + slot * stride, in + p / K * stride, stride);
    }
}

/* up: the thread's rows of each chosen expert's gate and up (whole blocks
 * of down's activation format) for its slots; silu(gate) * up quantized
 * for down into act_mid (slot by slot). */
static void up_stage(const Step *s, int ith, int nth)
{
    const ModelConfig *c = &s->m->cfg;
    const LayerWeights *lw = s->lw;
    Workspace *ws = s->ws;
    const MoeScratch *ms = &ws->moe;
    uint64_t F = c->n_ff_exp, lo, hi, stride;
    uint32_t N = c->n_expert;
    if (c->n_ff_shexp) shared_up(s, ith, nth);
    layer_split_units(F, layer_act_block(&lw->down_exps), ith, nth, &lo, &hi);
    if (lo >= hi) return;
    input_of(ws, &lw->gate_exps, c->n_embd, &stride);
    for (uint32_t e = 0; e < N; e++) {
        uint32_t s0 = ms->off[e], n = ms->off[e + 1] - s0;
        if (n == 0) continue;
        Weight gate = model_expert(&lw->gate_exps, e, N), up = model_expert(&lw->up_exps, e, N),
               down = model_expert(&lw->down_exps, e, N);
        layer_matmul(&gate, lo, hi, ms->act + s0 * stride, stride, (int)n, ws->hb + s0 * F, F);
        layer_matmul(&up, lo, hi, ms->act + s0 * stride, stride, (int)n, ws->hb2 + s0 * F, F);
        for (uint64_t slot = s0; slot < s0 + n; slot++) {
            kern_active()->silu_mul(ws->hb + slot * F + lo, ws->hb2 + slot * F + lo, hi - lo);
            layer_quantize(ws, &down, 1, slot, ws->hb + slot * F, lo, hi);
        }
    }
}

/* down: the thread's rows of each chosen expert's down for its slots,
 * then of every token the weighted sum of its slots, in the router's
 * order (ggml multiplies, then adds them one by one), into xb. */
static void down_stage(const Step *s, int ith, int nth)
{
    const ModelConfig *c = &s->m->cfg;
    const LayerWeights *lw = s->lw;
    Workspace *ws = s->ws;
    const MoeScratch *ms = &ws->moe;
    uint64_t E = c->n_embd, F = c->n_ff_exp, K = c->n_expert_used, lo, hi;
    uint32_t N = c->n_expert;
    layer_split(E, ith, nth, &lo, &hi);
    if (lo >= hi) return;
    KernActFormat f = kern_act_format(lw->down_exps.type);
    uint64_t stride = kern_act_bytes(f, F);
    const uint8_t *in = f == KERN_ACT_F32 ? (const uint8_t *)ws->hb : (const uint8_t *)ws->act_mid;
    for (uint32_t e = 0; e < N; e++) {
        uint32_t s0 = ms->off[e], n = ms->off[e + 1] - s0;
        if (n == 0) continue;
        Weight down = model_expert(&lw->down_exps, e, N);
        layer_matmul(&down, lo, hi, in + s0 * stride, stride, (int)n, ms->out + s0 * E, E);
    }
    float *shared = ms->out + (uint64_t)ws->batch * K * E;
    if (c->n_ff_shexp) {
        f = kern_act_format(lw->down_shexp.type);
        const uint8_t *sin = f == KERN_ACT_F32 ? (const uint8_t *)shared_hidden(ws, c, ws->hb) : shared_mid(ws, c);
        layer_matmul(&lw->down_shexp, lo, hi, sin, kern_act_bytes(f, c->n_ff_shexp), s->n, shared, E);
    }
    for (uint64_t t = 0; t < (uint64_t)s->n; t++) {
        float *y = ws->xb + t * E;
        const uint32_t *slot = ms->slot + t * K;
        const float *w = ms->weight + t * K;
        const float *o = ms->out + slot[0] * E;
        for (uint64_t i = lo; i < hi; i++) y[i] = w[0] * o[i];
        for (uint64_t k = 1; k < K; k++) {
            o = ms->out + slot[k] * E;
            for (uint64_t i = lo; i < hi; i++) {
                float v = w[k] * o[i];
                y[i] += v;
            }
        }
        if (!c->n_ff_shexp) continue;
        const float *sh = shared + t * E, g = ms->shared_gate[t]; /* ggml: moe + shexp * gate */
        for (uint64_t i = lo; i < hi; i++) {
            float v = sh[i] * g;
            y[i] += v;
        }
    }
}

int moe_plan(Step *s, int nth, Stage *st)
{
    (void)s;
    (void)nth;
    st[0] = (Stage){route_stage, 1};
    st[1] = (Stage){gather_stage, 0};
    st[2] = (Stage){up_stage, 0};
    st[3] = (Stage){down_stage, 0};
    return 4;
}
