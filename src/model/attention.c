/* attention.c - the attention mixer (layer.h), for the tokens of a step:
 *   q, k, v = Wq h + bq, Wk h + bk, Wv h + bv   (biases if the model has them)
 *   per-head RMSNorm of q and k if the arch has it
 *   RoPE on q and k at each token's position (not in SmolLM3's every fourth
 *   layer; Phi-4-mini: on the first n_rot elements of a head); k, v go into the cache
 *   attention of each q head over its kv head's cache rows 0..pos (causal;
 *   a windowed layer's last n_swa positions, in its ring)
 *   out = Wo attn
 * Qwen3.5's Wq gives each head's q and its gate, and the attention's output
 * is gated (deltanet.h).
 *
 * Its stages, for nth threads (the fused step's barrier layout, layer.h):
 *   by kv head (n_head_kv a multiple of the threads): the rows of q, k, v
 *     of the thread's heads, their norms, RoPE and cache stores, their
 *     attention and, when the thread's columns are whole blocks of wo's
 *     activation format, its output quantized; else:
 *   q, k, v by rows | per token: norms, RoPE, stores | attention by head;
 *   then per token the output quantized, when not done above;
 *   wo by rows.
 * So with the kv heads divided among the threads, attention is two stages
 * (the six barriers of a layer, layer.h): a thread's q heads read only its
 * own kv heads' rows of k and v, so nothing waits between the matrices and
 * the attention. */
#include <math.h>
#include <string.h>

#include "../kernels/kernels.h"
#include "../kernels/quant.h"
#include "deltanet.h"
#include "layer.h"
#include "../base/fmath.h"

static uint64_t kv_width(const ModelConfig *c)
{
    return (uint64_t)c->n_head_kv * c->head_dim;
}

static uint64_t kv_width_v(const ModelConfig *c)
{
    return (uint64_t)c->n_head_kv * c->head_dim_v;
}

/* The cache rows of a layer's kv head (forward.h). */
void seq_kv_head(const ModelConfig *c, const SeqState *s, uint32_t layer, uint32_t head, uint8_t **k, uint8_t **v,
                 uint32_t *rows)
{
    uint64_t krow = kv_type_bytes(s->kv_type, c->head_dim), vrow = kv_type_bytes(s->kv_type, c->head_dim_v);
    layer = model_kv_layer(c, layer); /* Gemma 4's last layers read an earlier one's (of their kind and shape) */
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

/* The attention of q heads h0..h1-1 for every token of the step, in tiles
 * (kernels.h: kern_attention): the q heads of a kv head together, and the
 * next tokens of a sequence that see its rows from position 0 on (a
 * prompt's) up to ATT_TOKENS of them, so each block of keys is read once for
 * all of them. A token in a window's ring, once the window has moved, sees
 * positions pos - n_swa + 1 .. pos: up to two runs of rows. The tiles'
 * scores go into the thread's heads' rows of ws->scores. */
static void attention_heads(const Step *j, uint32_t h0, uint32_t h1)
{
    const KernelSet *ks = kern_active();
    const ModelConfig *c = &j->lc;
    const Workspace *ws = j->ws;
    uint32_t group = c->n_head / c->n_head_kv;
    int windowed = model_layer_swa(c, j->layer);
    float *scratch = ws->scores + (uint64_t)h0 * ATT_TOKENS * KERN_ATT_KEYS;
    static const GgmlType kv_ggml[] = {[KV_F32] = GGML_TYPE_F32, [KV_F16] = GGML_TYPE_F16, [KV_Q8_0] = GGML_TYPE_Q8_0};

    for (uint32_t h = h0; h < h1;) {
        uint32_t kvh = h / group, hn = (kvh + 1) * group < h1 ? (kvh + 1) * group : h1;
        if (hn - h > KERN_ATT_ROWS) hn = h + KERN_ATT_ROWS;
        uint32_t nq = hn - h, most = KERN_ATT_ROWS / nq < ATT_TOKENS ? KERN_ATT_ROWS / nq : ATT_TOKENS;
        for (int t = 0; t < j->n;) {
            const SeqState *seq = ws->tok_seq[t];
            KvType kt = seq->kv_type;
            KernAttTile a = {kv_ggml[kt], kv_type_bytes(kt, c->head_dim), kv_type_bytes(kt, c->head_dim_v),
                             c->head_dim, c->head_dim_v, nq, c->attn_scale,
                             ws->q + (uint64_t)t * c->n_head * c->head_dim + (uint64_t)h * c->head_dim, c->head_dim,
                             (uint64_t)c->n_head * c->head_dim,
                             ws->att + (uint64_t)t * c->n_head * c->head_dim_v + (uint64_t)h * c->head_dim_v,
                             c->head_dim_v, (uint64_t)c->n_head * c->head_dim_v};
            uint8_t *kh, *vh;
            uint32_t rows, pos = ws->tok_pos[t];
            seq_kv_head(c, seq, j->layer, kvh, &kh, &vh, &rows);
            /* positions lo..pos, in the ring's rows lo % rows on (wrapping once) */
            uint32_t lo = windowed && pos + 1 > c->n_swa ? pos + 1 - c->n_swa : 0, np = pos - lo + 1;
            uint32_t r0 = lo % rows, np1 = np < rows - r0 ? np : rows - r0;
            KernAttRun run[2] = {{kh + (uint64_t)r0 * a.krow, vh + (uint64_t)r0 * a.vrow, lo, np1},
                                 {kh, vh, lo + np1, np - np1}};
            uint32_t nt = 1, ends[ATT_TOKENS] = {pos + 1};
            while (lo == 0 && np1 == np && nt < most && t + (int)nt < j->n && ws->tok_seq[t + nt] == seq) {
                uint32_t p1 = ws->tok_pos[t + nt] + 1;
                if ((windowed && p1 > c->n_swa) || p1 > rows) break;
                ends[nt++] = p1;
                if (p1 > run[0].n) run[0].n = p1;
            }
            kern_attention(ks, &a, nt, ends, run, np1 == np ? 1 : 2, scratch);
            t += (int)nt;
        }
        h = hn;
    }
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

/* Biases, q/k norms and RoPE of token t at its position (table cs), then
 * its keys and values into the cache; kv heads g0..g1-1 and their q heads
 * (each element's arithmetic is the same whatever the range). */
static void qk_token(const Step *j, uint64_t t, const float *cs, uint32_t g0, uint32_t g1)
{
    const ModelConfig *c = &j->lc;
    Workspace *ws = j->ws;
    const LayerWeights *lw = j->lw;
    uint32_t group = c->n_head / c->n_head_kv;
    uint64_t hd = c->head_dim, hdv = c->head_dim_v, qdim = (uint64_t)c->n_head * hd, kw = kv_width(c),
             vw = kv_width_v(c);
    const SeqState *seq = ws->tok_seq[t];
    float *q = ws->q + t * qdim, *k = ws->k + t * kw, *v = ws->v + t * vw;
    int ropes = model_layer_ropes(c, j->layer), neox = c->arch->rope == ROPE_NEOX;
    const KernelSet *ks = kern_active(); /* its rope: forward_rope's, without a call */
    if (lw->bq) {
        layer_add(q + g0 * group * hd, lw->bq + g0 * group * hd, (g1 - g0) * group * hd);
        layer_add(k + g0 * hd, lw->bk + g0 * hd, (g1 - g0) * hd);
        layer_add(v + g0 * hdv, lw->bv + g0 * hdv, (g1 - g0) * hdv);
    }
    /* attention temperature (Ministral 3): q grows with the position, in
     * steps of the original context */
    float temp = c->attn_temp_scale == 0.0f ? 1.0f
               : (float)(fmath_log((double)(ws->tok_pos[t] / c->n_ctx_orig) + 1.0) * (double)c->attn_temp_scale + 1.0);
    for (uint32_t h = g0 * group; h < g1 * group; h++) {
        if (lw->q_norm) layer_rmsnorm(q + h * hd, q + h * hd, lw->q_norm, hd, c->norm_eps);
        if (ropes) ks->rope(q + h * hd, c->n_rot, cs, neox);
        if (temp != 1.0f)
            for (uint64_t i = 0; i < hd; i++) q[h * hd + i] *= temp;
    }
    if (j->layer >= c->n_layer_kv) return; /* it reads an earlier layer's keys and values (Gemma 4) */
    for (uint32_t h = g0; h < g1; h++) {
        if (lw->k_norm) layer_rmsnorm(k + h * hd, k + h * hd, lw->k_norm, hd, c->norm_eps);
        if (ropes) ks->rope(k + h * hd, c->n_rot, cs, neox);
        if (c->arch->gemma4) layer_rmsnorm(v + h * hdv, v + h * hdv, j->m->ones, hdv, c->norm_eps); /* no weight */
    }
    cache_store(c, seq, 0, j->layer, ws->tok_pos[t], k, c->head_dim, g0, g1);
    cache_store(c, seq, 1, j->layer, ws->tok_pos[t], v, c->head_dim_v, g0, g1);
}

/* Qwen3.5: q of token t's heads h0..h1-1 out of the q-and-gate rows (in
 * ws->dn); elsewhere q is where its matrix put it. */
static int gated(const ModelConfig *c)
{
    return model_arch_deltanet(c->arch);
}

static void q_of(const Step *s, uint64_t t, uint32_t h0, uint32_t h1)
{
    const ModelConfig *c = &s->lc;
    if (gated(c)) deltanet_q_heads(c, s->ws->dn + t * s->lw->wq.rows, s->ws->q + t * c->n_head * c->head_dim, h0, h1);
}

/* Attention of q heads h0..h1-1 for every token, gated where the
 * architecture gates it. */
static void attend(const Step *s, uint32_t h0, uint32_t h1)
{
    const ModelConfig *c = &s->lc;
    attention_heads(s, h0, h1);
    if (gated(c))
        for (uint64_t t = 0; t < (uint64_t)s->n; t++)
            deltanet_gate_heads(c, s->ws->att + t * c->n_head * c->head_dim_v, s->ws->dn + t * s->lw->wq.rows, h0, h1);
}

/* By kv head: the thread's heads g0..g1-1 from q, k and v to the attention
 * output (quantized for wo with att_here). */
static void heads_stage(const Step *s, int ith, int nth)
{
    const ModelConfig *c = &s->lc;
    Workspace *ws = s->ws;
    const LayerWeights *lw = s->lw;
    uint32_t group = c->n_head / c->n_head_kv;
    uint64_t hd = c->head_dim, hdv = c->head_dim_v, adim = (uint64_t)c->n_head * hdv, q_rows = lw->wq.rows / c->n_head;
    uint32_t g0 = (uint32_t)((uint64_t)c->n_head_kv * ith / nth), g1 = (uint32_t)((uint64_t)c->n_head_kv * (ith + 1) / nth);
    layer_rows(ws, &lw->wq, 0, ws->xb, g0 * group * q_rows, g1 * group * q_rows, s->n, gated(c) ? ws->dn : ws->q,
               lw->wq.rows);
    if (s->layer < c->n_layer_kv) { /* else no k, v: an earlier layer's are read */
        layer_rows(ws, &lw->wk, 0, ws->xb, g0 * hd, g1 * hd, s->n, ws->k, lw->wk.rows);
        layer_rows(ws, &lw->wv, 0, ws->xb, g0 * hdv, g1 * hdv, s->n, ws->v, lw->wv.rows);
    }
    for (uint64_t t = 0; t < (uint64_t)s->n; t++) {
        q_of(s, t, g0 * group, g1 * group);
        qk_token(s, t, layer_rope(s->m, ws, s->layer, t), g0, g1);
    }
    attend(s, g0 * group, g1 * group);
    if (s->att_here)
        for (uint64_t t = 0; t < (uint64_t)s->n; t++)
            layer_quantize(ws, &lw->wo, 1, t, ws->att + t * adim, group * hdv * g0, group * hdv * g1);
}

/* Else: q, k and v by rows (of the three together) ... */
static void qkv_stage(const Step *s, int ith, int nth)
{
    const Weight *w[3] = {&s->lw->wq, &s->lw->wk, &s->lw->wv};
    float *out[3] = {gated(&s->lc) ? s->ws->dn : s->ws->q, s->ws->k, s->ws->v};
    layer_rows_group(s, w, out, s->n_in, ith, nth); /* q alone in a layer reading another's KV */
}

/* ... the norms, RoPE and cache stores by token ... */
static void qk_stage(const Step *s, int ith, int nth)
{
    uint64_t t0, t1;
    layer_split((uint64_t)s->n, ith, nth, &t0, &t1);
    for (uint64_t t = t0; t < t1; t++) {
        q_of(s, t, 0, s->lc.n_head);
        qk_token(s, t, layer_rope(s->m, s->ws, s->layer, t), 0, s->lc.n_head_kv);
    }
}

/* ... and the attention by q head. */
static void attention_stage(const Step *s, int ith, int nth)
{
    uint64_t h0, h1;
    layer_split(s->lc.n_head, ith, nth, &h0, &h1);
    attend(s, (uint32_t)h0, (uint32_t)h1);
}

/* The output quantized for wo, by token (not done by heads_stage). */
static void att_quant_stage(const Step *s, int ith, int nth)
{
    uint64_t adim = (uint64_t)s->lc.n_head * s->lc.head_dim_v, t0, t1;
    layer_split((uint64_t)s->n, ith, nth, &t0, &t1);
    for (uint64_t t = t0; t < t1; t++) layer_quantize(s->ws, &s->lw->wo, 1, t, s->ws->att + t * adim, 0, adim);
}

static void wo_stage(const Step *s, int ith, int nth)
{
    uint64_t dim = s->lc.n_embd, lo, hi;
    layer_split(dim, ith, nth, &lo, &hi);
    layer_rows(s->ws, &s->lw->wo, 1, s->ws->att, lo, hi, s->n, s->ws->xb, dim);
}

int attention_plan(Step *s, int nth, Stage *st)
{
    const ModelConfig *c = &s->lc;
    const LayerWeights *lw = s->lw;
    int k = 0;
    s->in[0] = &lw->wq;
    s->in[1] = &lw->wk;
    s->in[2] = &lw->wv;
    s->n_in = s->layer < c->n_layer_kv ? 3 : 1;
    s->mixed = s->ws->xb;
    /* each thread's columns of the output are group * head_dim_v * (n_head_kv / nth) wide:
     * whole blocks for all, or for none */
    s->by_head = c->n_head_kv % (uint32_t)nth == 0;
    s->att_here = s->by_head &&
                  (uint64_t)(c->n_head / c->n_head_kv) * c->head_dim_v * (c->n_head_kv / (uint32_t)nth) %
                          layer_act_block(&lw->wo) == 0;
    if (s->by_head) {
        st[k++] = (Stage){heads_stage, 0};
    } else {
        st[k++] = (Stage){qkv_stage, 0};
        st[k++] = (Stage){qk_stage, 1};
        st[k++] = (Stage){attention_stage, 0};
    }
    if (!s->att_here) st[k++] = (Stage){att_quant_stage, 1};
    st[k++] = (Stage){wo_stage, 0};
    return k;
}
