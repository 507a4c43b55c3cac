/* layer.c - the tools of a layer's stages (layer.h): a matrix's rows for
 * the step's tokens, and their inputs quantized into the workspace. */
#include "layer.h"

/* Rows [lo, hi) of w times n tokens' activations: the repacked layout's
 * kernel where the loader packed w (model.c), the file's with the scales'
 * copy where it made one, else the file's. */
void layer_matmul(const Weight *w, uint64_t lo, uint64_t hi, const void *act, uint64_t act_stride, int n, float *out,
                  uint64_t out_stride)
{
    if (w->side)
        kern_matmul_sided(w->type, w->data, w->row_bytes, w->cols, lo, hi, w->side, act, act_stride, n, out, out_stride);
    else
        (w->packed ? kern_matmul_packed : kern_matmul)(w->type, w->data, w->row_bytes, w->cols, lo, hi, act, act_stride,
                                                       n, out, out_stride);
}


/* The quantized input of weights w in the workspace: act_mid for the
 * input of a mixer's or the FFN's second matrix, else the buffer of its
 * format (NULL: F32). */
static uint8_t *act_buffer(Workspace *ws, const Weight *w, int mid)
{
    KernActFormat f = kern_act_format(w->type);
    if (f == KERN_ACT_F32) return NULL;
    return mid ? ws->act_mid : f == KERN_ACT_Q8_0 ? ws->act_q8_0 : ws->act_q8_k;
}

void layer_quantize(Workspace *ws, const Weight *w, int mid, uint64_t t, const float *x, uint64_t c0, uint64_t c1)
{
    uint8_t *buf = act_buffer(ws, w, mid);
    if (!buf || c0 >= c1) return;
    KernActFormat f = kern_act_format(w->type);
    kern_quantize_act(w->type, x + c0, buf + t * kern_act_bytes(f, w->cols) + kern_act_bytes(f, c0), c1 - c0);
}

void layer_rows(Workspace *ws, const Weight *w, int mid, const float *x, uint64_t lo, uint64_t hi, int n, float *out,
                uint64_t out_stride)
{
    if (lo >= hi) return;
    const uint8_t *buf = act_buffer(ws, w, mid);
    KernActFormat f = kern_act_format(w->type);
    layer_matmul(w, lo, hi, buf ? (const void *)buf : (const void *)x, kern_act_bytes(f, w->cols), n, out, out_stride);
}

void layer_rows_group(const Step *s, const Weight *const *w, float *const *out, int nw, int ith, int nth)
{
    uint64_t total = 0, base = 0, lo, hi;
    for (int i = 0; i < nw; i++) total += w[i]->rows;
    layer_split(total, ith, nth, &lo, &hi);
    for (int i = 0; i < nw; i++) {
        uint64_t a = lo > base ? lo - base : 0, b = hi > base ? hi - base : 0;
        if (b > w[i]->rows) b = w[i]->rows;
        layer_rows(s->ws, w[i], 0, s->ws->xb, a, b, s->n, out[i], w[i]->rows);
        base += w[i]->rows;
    }
}

uint64_t layer_act_block(const Weight *w)
{
    KernActFormat f = kern_act_format(w->type);
    return f == KERN_ACT_Q8_0 ? 32 : f == KERN_ACT_Q8_K ? 256 : 1;
}

/* (layer.h: the residual of a sublayer, the next norm) */
void layer_residual_norm(const ModelConfig *c, Workspace *ws, uint64_t t, float *add, const float *post,
                         const float *scale, const float *norm, const Weight *const *next, int nw)
{
    uint64_t dim = c->n_embd;
    float *x = ws->x + t * dim, *xb = ws->xb + t * dim;
    if (add && post) layer_rmsnorm(add + t * dim, add + t * dim, post, dim, c->norm_eps);
    if (add) layer_add(x, add + t * dim, dim);
    if (scale) /* Gemma 4's layer output scale */
        for (uint64_t i = 0; i < dim; i++) x[i] *= *scale;
    if (!norm) return;
    layer_rmsnorm(xb, x, norm, dim, c->norm_eps);
    for (int i = 0; i < nw; i++) {
        int again = 0; /* one quantization per format (buffer) */
        for (int k = 0; k < i; k++) again |= kern_act_format(next[k]->type) == kern_act_format(next[i]->type);
        if (!again) layer_quantize(ws, next[i], 0, t, xb, 0, dim);
    }
}
