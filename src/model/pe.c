/* pe.c - Gemma 4's per-layer embeddings (llama.cpp's gemma4 graph:
 * build_inp_per_layer, project_per_layer_inputs, the end of each layer).
 *
 * Before the layers, each token of a step (x its scaled embedding) gets an
 * input of n_embd_pe floats for every layer l:
 *   in[l] = (RMSNorm(P x / sqrt(n_embd))[l] * proj_norm + E[token][l] sqrt(n_embd_pe)) / sqrt(2)
 * (P: per_layer_model_proj, n_layer n_embd_pe rows; E: per_layer_token_embd,
 * a row of n_layer parts per token). At the end of layer l, after the
 * FFN's residual:
 *   x += RMSNorm(proj (gelu(inp_gate x) * in[l])) * post_norm
 * (the next layer's stage 1 adds it, then multiplies by out_scale).
 *
 * E is the largest tensor of E2B and E4B and a step needs one row per
 * token: it is never copied. Mapped, a token's row is read in place (only
 * its pages become resident); else the row is read from the file into the
 * step's buffer (pe_rows), in every load mode. */
#include <math.h>
#include <stdio.h>

#include "../../port/port.h"
#include "../base/ggml_type.h"
#include "../kernels/kernels.h"
#include "../kernels/quant.h"
#include "layer.h"

typedef struct {
    const Model *m;
    Workspace *ws;
    int n;
} PeJob;

/* P's rows for every token: the inputs before their norms. */
static void proj_worker(void *ctx, int ith, int nth)
{
    const PeJob *j = ctx;
    const Weight *p = &j->m->pe_model_proj;
    uint64_t lo, hi;
    layer_split(p->rows, ith, nth, &lo, &hi);
    layer_rows(j->ws, p, 0, j->ws->x, lo, hi, j->n, j->ws->pe, p->rows);
}

/* Token t's inputs from P x (in place) and its row of E, in ggml's order
 * of operations (a layer's part of the row dequantized into hb, free
 * before the layers). */
static void finish_token(const Model *m, Workspace *ws, uint64_t t, const uint8_t *row)
{
    const ModelConfig *c = &m->cfg;
    uint64_t npe = c->n_embd_pe, part_bytes = ggml_row_bytes(m->pe_embd.type, npe);
    float proj_scale = 1.0f / sqrtf((float)c->n_embd), embd_scale = sqrtf((float)npe), half = 1.0f / sqrtf(2.0f);
    float *e = ws->hb + t * npe;
    for (uint32_t l = 0; l < c->n_layer; l++) {
        float *v = ws->pe + (t * c->n_layer + l) * npe;
        for (uint64_t i = 0; i < npe; i++) v[i] *= proj_scale;
        layer_rmsnorm(v, v, m->pe_proj_norm, npe, c->norm_eps);
        quant_dequant_row(m->pe_embd.type, row + l * part_bytes, e, npe); /* whole blocks (model.c) */
        for (uint64_t i = 0; i < npe; i++) v[i] = (v[i] + e[i] * embd_scale) * half;
    }
}

static void finish_worker(void *ctx, int ith, int nth)
{
    const PeJob *j = ctx;
    const Weight *e = &j->m->pe_embd;
    uint64_t t0, t1;
    layer_split((uint64_t)j->n, ith, nth, &t0, &t1);
    for (uint64_t t = t0; t < t1; t++) {
        const uint8_t *row = e->data ? e->data + (uint64_t)j->ws->tok_id[t] * e->row_bytes
                                     : j->ws->pe_rows + t * e->row_bytes;
        finish_token(j->m, j->ws, t, row);
    }
}

int pe_inputs(const Model *m, Workspace *ws, int n)
{
    const Weight *e = &m->pe_embd, *p = &m->pe_model_proj;
    for (int t = 0; t < n && !e->data; t++) { /* not mapped: the step's rows from the file */
        PortFile *f = &m->gguf->files[e->file_index];
        uint64_t off = e->file_offset + (uint64_t)ws->tok_id[t] * e->row_bytes;
        if (!ws->pe_rows || port_file_read(f, off, ws->pe_rows + (uint64_t)t * e->row_bytes, (size_t)e->row_bytes) != 0) {
            snprintf(ws->err, sizeof ws->err, "%s: byte %llu: cannot read row %d of per_layer_token_embd.weight", f->path,
                     (unsigned long long)off, ws->tok_id[t]);
            return -1;
        }
    }
    uint64_t dim = m->cfg.n_embd;
    for (int t = 0; t < n; t++) layer_quantize(ws, p, 0, (uint64_t)t, ws->x + (uint64_t)t * dim, 0, dim);
    PeJob j = {m, ws, n};
    port_parallel(proj_worker, &j);
    if (n > 1) port_parallel(finish_worker, &j);
    else finish_worker(&j, 0, 1);
    return 0;
}

/* After the FFN (per token): its output post-normed into the residual,
 * which is quantized for inp_gate. */
static void pe_residual_stage(const Step *s, int ith, int nth)
{
    uint64_t t0, t1;
    layer_split((uint64_t)s->n, ith, nth, &t0, &t1);
    for (uint64_t t = t0; t < t1; t++) {
        layer_residual_norm(&s->m->cfg, s->ws, t, s->ws->xb, s->lw->ffn_post_norm, NULL, NULL, NULL, 0);
        layer_quantize(s->ws, &s->lw->pe_gate, 0, t, s->ws->x + t * s->m->cfg.n_embd, 0, s->m->cfg.n_embd);
    }
}

/* inp_gate's rows, gelu of them times the layer's input, quantized for
 * proj (rows in whole blocks of its activation format). */
static void pe_gate_stage(const Step *s, int ith, int nth)
{
    const ModelConfig *c = &s->m->cfg;
    const LayerWeights *lw = s->lw;
    Workspace *ws = s->ws;
    uint64_t npe = c->n_embd_pe, lo, hi;
    layer_split_units(npe, layer_act_block(&lw->pe_proj), ith, nth, &lo, &hi);
    layer_rows(ws, &lw->pe_gate, 0, ws->x, lo, hi, s->n, ws->hb, npe);
    for (uint64_t t = 0; t < (uint64_t)s->n && lo < hi; t++) {
        const float *in = ws->pe + (t * c->n_layer + s->layer) * npe;
        kern_active()->gelu_mul(ws->hb + t * npe + lo, in + lo, hi - lo, ws->gelu);
        layer_quantize(ws, &lw->pe_proj, 1, t, ws->hb + t * npe, lo, hi);
    }
}

/* proj by rows, into xb (the next layer's stage 1 adds it). */
static void pe_proj_stage(const Step *s, int ith, int nth)
{
    uint64_t dim = s->m->cfg.n_embd, lo, hi;
    layer_split(dim, ith, nth, &lo, &hi);
    layer_rows(s->ws, &s->lw->pe_proj, 1, s->ws->hb, lo, hi, s->n, s->ws->xb, dim);
}

int pe_plan(Step *s, int nth, Stage *st)
{
    (void)s;
    (void)nth;
    st[0] = (Stage){pe_residual_stage, 1};
    st[1] = (Stage){pe_gate_stage, 0};
    st[2] = (Stage){pe_proj_stage, 0};
    return 3;
}
