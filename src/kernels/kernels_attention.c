/* kernels_attention.c - attention of a tile of queries over the KV cache in
 * blocks of keys with an online softmax (kernels.h: kern_attention), built on
 * a set's cache kernels (dots_f16 / wsum_f16, or dot and axpy row by row). */
#include <math.h>
#include <string.h>

#include "kernels.h"

static float row_dot(const KernelSet *ks, const KernAttTile *a, const uint8_t *k, const float *q)
{
    if (a->type == GGML_TYPE_Q8_0) return ks->dot_q8_0_f32(k, q, a->dk);
    return a->type == GGML_TYPE_F32 ? ks->dot_f32((const float *)k, q, a->dk)
                                    : ks->dot_f16((const uint16_t *)k, q, a->dk);
}

static void row_axpy(const KernelSet *ks, const KernAttTile *a, float *o, float w, const uint8_t *v)
{
    if (a->type == GGML_TYPE_Q8_0) ks->axpy_q8_0(o, w, v, a->dv);
    else if (a->type == GGML_TYPE_F32) ks->axpy_f32(o, w, (const float *)v, a->dv);
    else ks->axpy_f16(o, w, (const uint16_t *)v, a->dv);
}

/* One block of keys (rows[t] of them for token t, from k and v on) into the
 * running state of each query: its largest scaled score m, its sum of
 * exponentials l, its output o (unnormalized). */
static void block(const KernelSet *ks, const KernAttTile *a, uint32_t nt, const uint32_t *rows, const uint8_t *k,
                  const uint8_t *v, float *s, float *m, double *l)
{
    uint32_t nq = a->nq;
    if (a->type == GGML_TYPE_F16 && ks->dots_f16)
        ks->dots_f16((const uint16_t *)k, a->krow / 2, a->dk, a->q, a->q_stride, nq, a->q_tstride, nt, rows, s,
                     KERN_ATT_KEYS);
    else
        for (uint32_t u = 0; u < nq * nt; u++)
            for (uint32_t p = 0; p < rows[u / nq]; p++)
                s[u * KERN_ATT_KEYS + p] = row_dot(ks, a, k + p * a->krow, a->q + u / nq * a->q_tstride + u % nq * a->q_stride);
    for (uint32_t u = 0; u < nq * nt; u++) {
        float *su = s + u * KERN_ATT_KEYS;
        uint32_t n = rows[u / nq];
        if (n == 0) continue;
        /* (a NaN score is skipped here, and stays NaN through exp_sum) */
        float mx = ks->scale_max(su, n, a->scale, m[u]);
        if (mx == -INFINITY) { /* no finite score yet: a NaN (kept in l, to the output) or -inf only */
            for (uint32_t p = 0; p < n; p++)
                if (isnan(su[p])) l[u] = NAN;
            continue;
        }
        double sum = ks->exp_sum(su, n, mx);
        if (mx != m[u]) { /* the earlier blocks' terms, rescaled to the new largest score */
            float c = expf(m[u] - mx), *o = a->out + u / nq * a->out_tstride + u % nq * a->out_stride;
            l[u] *= c;
            for (uint32_t j = 0; j < a->dv; j++) o[j] *= c;
            m[u] = mx;
        }
        l[u] += sum;
    }
    if (a->type == GGML_TYPE_F16 && ks->wsum_f16)
        ks->wsum_f16(a->out, a->out_stride, a->out_tstride, s, KERN_ATT_KEYS, nq, nt, rows, (const uint16_t *)v,
                     a->vrow / 2, a->dv);
    else
        for (uint32_t u = 0; u < nq * nt; u++)
            for (uint32_t p = 0; p < rows[u / nq]; p++)
                row_axpy(ks, a, a->out + u / nq * a->out_tstride + u % nq * a->out_stride, s[u * KERN_ATT_KEYS + p],
                         v + p * a->vrow);
}

void kern_attention(const KernelSet *ks, const KernAttTile *a, uint32_t nt, const uint32_t *ends,
                    const KernAttRun *runs, int n_runs, float *scratch)
{
    float m[KERN_ATT_ROWS];
    double l[KERN_ATT_ROWS];
    uint32_t nq = a->nq;
    for (uint32_t u = 0; u < nq * nt; u++) {
        m[u] = -INFINITY;
        l[u] = 0.0;
        memset(a->out + u / nq * a->out_tstride + u % nq * a->out_stride, 0, a->dv * sizeof(float));
    }
    for (int r = 0; r < n_runs; r++) {
        uint32_t end = runs[r].pos0 + runs[r].n;
        /* blocks end at the multiples of KERN_ATT_KEYS: where they lie
         * depends on the positions only, not on the other queries */
        for (uint32_t b = runs[r].pos0; b < end;) {
            uint32_t e = (b / KERN_ATT_KEYS + 1) * KERN_ATT_KEYS, rows[KERN_ATT_ROWS], any = 0;
            if (e > end) e = end;
            for (uint32_t t = 0; t < nt; t++) {
                uint32_t lim = ends[t] < e ? ends[t] : e;
                rows[t] = lim > b ? lim - b : 0;
                any |= rows[t];
            }
            if (!any) break;
            uint64_t off = b - runs[r].pos0;
            block(ks, a, nt, rows, runs[r].k + off * a->krow, runs[r].v + off * a->vrow, scratch, m, l);
            b = e;
        }
    }
    for (uint32_t u = 0; u < nq * nt; u++) {
        float inv = (float)(1.0 / l[u]), *o = a->out + u / nq * a->out_tstride + u % nq * a->out_stride;
        for (uint32_t j = 0; j < a->dv; j++) o[j] *= inv;
    }
}
