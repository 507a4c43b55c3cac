/* shortconv.c - LFM2's short convolution (see shortconv.h), through the
 * kernels' causal_conv: float32, each sum over the taps in order from the
 * oldest, as ggml's ssm_conv adds them, so a token's result is the same in
 * any step shape and kernel set (every set gives the reference's bits). */
#include "shortconv.h"

#include <string.h>

#include "../kernels/kernels.h"
#include "layer.h"

uint64_t shortconv_state_bytes(const ModelConfig *c)
{
    if (c->conv_l < 2 || model_conv_before(c, c->n_layer) == 0) return 0;
    return (uint64_t)c->n_embd * (c->conv_l - 1) * sizeof(float);
}

/* ---- the mixer's stages (layer.h) ---------------------------------------- */

/* in_proj by rows: b, c, x of each token ([n][3 n_embd] in ws->conv). */
static void in_stage(const Step *s, int ith, int nth)
{
    const Weight *w = &s->lw->conv_in;
    uint64_t lo, hi;
    layer_split(w->rows, ith, nth, &lo, &hi);
    layer_rows(s->ws, w, 0, s->ws->xb, lo, hi, s->n, s->ws->conv, w->rows);
}

/* The convolution of the thread's channels (whole blocks of out_proj's
 * activation format), token after token: y into ws->xb, quantized for
 * out_proj; each token's sequence state (one starting at position 0 from
 * zeros). */
static void conv_stage(const Step *s, int ith, int nth)
{
    const ModelConfig *c = &s->m->cfg;
    const KernelSet *ks = kern_active();
    Workspace *ws = s->ws;
    uint64_t E = c->n_embd, c0, c1;
    uint32_t L = c->conv_l;
    layer_split_units(E, layer_act_block(&s->lw->conv_out), ith, nth, &c0, &c1);
    for (int t = 0; t < s->n && c0 < c1; t++) {
        SeqState *seq = ws->tok_seq[t];
        float *hist = (float *)(void *)(seq->recurrent + model_conv_before(c, s->layer) * seq->recurrent_layer_bytes);
        if (ws->tok_pos[t] == 0)
            for (uint32_t k = 0; k + 1 < L; k++) memset(hist + k * E + c0, 0, (c1 - c0) * sizeof *hist);
        float *row = ws->conv + (uint64_t)t * 3 * E, *y = ws->xb + (uint64_t)t * E;
        for (uint64_t ch = c0; ch < c1; ch++) row[2 * E + ch] *= row[ch]; /* b * x, in x's place */
        ks->causal_conv(y + c0, hist + c0, E, row + 2 * E + c0, s->lw->conv + c0 * L, L, c1 - c0);
        for (uint64_t ch = c0; ch < c1; ch++) y[ch] *= row[E + ch];
        layer_quantize(ws, &s->lw->conv_out, 1, (uint64_t)t, y, c0, c1);
    }
}

/* out_proj by rows, into ws->conv ([n][n_embd]: in_proj's output is read). */
static void out_stage(const Step *s, int ith, int nth)
{
    uint64_t dim = s->m->cfg.n_embd, lo, hi;
    layer_split(dim, ith, nth, &lo, &hi);
    layer_rows(s->ws, &s->lw->conv_out, 1, s->ws->xb, lo, hi, s->n, s->ws->conv, dim);
}

int shortconv_plan(Step *s, int nth, Stage *st)
{
    (void)nth;
    s->in[0] = &s->lw->conv_in;
    s->n_in = 1;
    s->mixed = s->ws->conv;
    st[0] = (Stage){in_stage, 0};
    st[1] = (Stage){conv_stage, 0};
    st[2] = (Stage){out_stage, 0};
    return 3;
}
