/* test_kernels_attention.c - attention in tiles (kernels.h: kern_attention)
 * against the plain computation, for every kernel set this CPU runs (the
 * reference, AVX2, AVX2 with the AVX-512 attention kernels, NEON).
 *
 * On random queries, keys and values, with KV rows in F32, F16 and Q8_0,
 * heads of 64 and 80 (a tail of 16 past the vectors of 64) and 1 to 4 query
 * heads per KV head, prompts of up to 150 positions (three blocks of 64 and
 * a part), a tile holding 1 to 31 tokens (at most KERN_ATT_ROWS queries), and a window's ring seen
 * as two runs:
 *  - each output is within 2e-5 of sum |weight x value| (in double) of the
 *    plain two-pass softmax computed in double over the rows decoded by the
 *    reference: only rounding differs (float scores, exponentials within
 *    1e-6, the online rescaling);
 *  - determinism: a query computed alone (one token, one run) equals the
 *    same query in a tile of many tokens, bit for bit;
 *  - the x86 AVX-512 dots_f16 / wsum_f16 give the AVX2 ones' bits (they stand
 *    in for them in the same set), as test_kernels.c checks the AVX2 ones
 *    against dot_f16 / axpy_f16. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../src/base/ggml_type.h"
#include "../src/kernels/kernels.h"
#include "../src/kernels/quant.h"
#include "check.h"
#include "tools/test_rng.h"

static TestRng rng = {0x243f6a8885a308d3ull};
static float rndf(void) /* [-1, 1) */
{
    return test_rng_f(&rng);
}

enum { P = 150, DMAX = 80, NQ = 4, NT = 31 };

static uint8_t kc[P * DMAX * 4], vc[P * DMAX * 4];
static float kd[P * DMAX], vd[P * DMAX]; /* the rows as the reference decodes them */
static float q[NT * NQ * DMAX], out[NT * NQ * DMAX], alone[NQ * DMAX];
static float scratch[NQ * NT * KERN_ATT_KEYS];

static uint64_t row_bytes(GgmlType t, uint32_t d)
{
    return t == GGML_TYPE_Q8_0 ? d / QK8_0 * sizeof(BlockQ8_0) : t == GGML_TYPE_F16 ? d * 2 : d * 4;
}

static void fill_rows(GgmlType t, uint32_t d, uint8_t *c, float *dec)
{
    float x[DMAX];
    for (int p = 0; p < P; p++) {
        for (uint32_t i = 0; i < d; i++) x[i] = rndf() * 2.0f;
        uint8_t *r = c + p * row_bytes(t, d);
        if (t == GGML_TYPE_F32) memcpy(r, x, d * sizeof(float));
        else if (t == GGML_TYPE_F16)
            for (uint32_t i = 0; i < d; i++) ((uint16_t *)r)[i] = quant_f32_to_f16(x[i]);
        else quant_quantize_row(GGML_TYPE_Q8_0, x, r, d);
        quant_dequant_row(t, r, dec + p * d, d);
    }
}

/* The plain attention of query qv over positions lo..hi-1 (row r of
 * position p: (p - shift) mod P), in double; worst |difference| of o over
 * the bound's scale put into *err. */
static void plain(const float *qv, uint32_t d, float scale, uint32_t lo, uint32_t hi, uint32_t shift, const float *o,
                  double *err)
{
    double s[P], mx = -INFINITY, sum = 0.0;
    for (uint32_t p = lo; p < hi; p++) {
        uint32_t r = (p + P - shift) % P;
        double a = 0.0;
        for (uint32_t i = 0; i < d; i++) a += (double)qv[i] * kd[r * d + i];
        s[p - lo] = a * scale;
        if (s[p - lo] > mx) mx = s[p - lo];
    }
    for (uint32_t p = lo; p < hi; p++) sum += s[p - lo] = exp(s[p - lo] - mx);
    for (uint32_t j = 0; j < d; j++) {
        double want = 0.0, mag = 0.0;
        for (uint32_t p = lo; p < hi; p++) {
            double w = s[p - lo] / sum * vd[((p + P - shift) % P) * d + j];
            want += w;
            mag += fabs(w);
        }
        double e = fabs(o[j] - want) / (mag + 1e-30);
        if (e > *err) *err = e;
    }
}

static void test_set(const KernelSet *ks)
{
    static const GgmlType types[] = {GGML_TYPE_F32, GGML_TYPE_F16, GGML_TYPE_Q8_0};
    for (int ti = 0; ti < 3; ti++)
        for (uint32_t d = 64; d <= 80; d += 16) {
            GgmlType t = types[ti];
            if (t == GGML_TYPE_Q8_0 && d % QK8_0) continue;
            fill_rows(t, d, kc, kd);
            fill_rows(t, d, vc, vd);
            for (int i = 0; i < NT * NQ * DMAX; i++) q[i] = rndf();
            double err = 0.0;
            int same = 1;
            float scale = 1.0f / sqrtf((float)d) * 4.0f; /* peaked weights: the rescaling matters */
            for (uint32_t nq = 1; nq <= NQ; nq++)
                for (uint32_t nt = 1; nt <= NT && nq * nt <= KERN_ATT_ROWS; nt += 6) {
                    /* a prompt: tokens at positions first .. first + nt - 1 of rows 0 .. */
                    uint32_t first = (uint32_t)(P - nt) - (uint32_t)(test_rng_u32(&rng) % (P - nt)), ends[NT];
                    for (uint32_t k = 0; k < nt; k++) ends[k] = first + k + 1;
                    KernAttTile a = {t, row_bytes(t, d), row_bytes(t, d), d, d, nq, scale, q, d, (uint64_t)NQ * d,
                                     out, d, (uint64_t)NQ * d};
                    KernAttRun run = {kc, vc, 0, first + nt};
                    kern_attention(ks, &a, nt, ends, &run, 1, scratch);
                    for (uint32_t k = 0; k < nt; k++)
                        for (uint32_t i = 0; i < nq; i++)
                            plain(q + k * NQ * d + i * d, d, scale, 0, ends[k], 0, out + k * NQ * d + i * d, &err);
                    /* the last token alone, as a step of one token computes it */
                    KernAttTile b = a;
                    b.q = q + (nt - 1) * NQ * d;
                    b.out = alone;
                    run.n = ends[nt - 1];
                    kern_attention(ks, &b, 1, ends + nt - 1, &run, 1, scratch);
                    if (memcmp(alone, out + (nt - 1) * NQ * d, nq * d * sizeof(float))) same = 0;
                }
            /* a window's ring: positions lo .. hi - 1 at rows p mod P after the
             * ring was filled from position shift: two runs */
            for (uint32_t nq = 1; nq <= NQ; nq++) {
                uint32_t shift = 37, lo = 200, hi = 200 + 145, r0 = (lo - shift) % P, n1 = P - r0;
                KernAttRun runs[2] = {{kc + r0 * row_bytes(t, d), vc + r0 * row_bytes(t, d), lo, n1},
                                      {kc, vc, lo + n1, hi - lo - n1}};
                KernAttTile a = {t, row_bytes(t, d), row_bytes(t, d), d, d, nq, scale, q, d, (uint64_t)NQ * d,
                                 out, d, (uint64_t)NQ * d};
                kern_attention(ks, &a, 1, &hi, runs, 2, scratch);
                for (uint32_t i = 0; i < nq; i++) plain(q + i * d, d, scale, lo, hi, shift, out + i * d, &err);
            }
            CHECK(err < 2e-5, "%s: %s KV, heads of %u: tiles within 2e-5 of the plain attention (worst %.2e)",
                  ks->name, ggml_type_info(t)->name, d, err);
            CHECK(same, "%s: %s KV, heads of %u: a query alone equals itself in a tile, bit for bit", ks->name,
                  ggml_type_info(t)->name, d);
        }
}

/* The set's dots_f16 / wsum_f16 against other's, bit for bit, on shapes
 * that leave rests (rows past the last eight, odd queries, heads of 80). */
static void same_kernels(const KernelSet *ks, const KernelSet *other)
{
    enum { R = 29, D = 144 };
    static uint16_t k[R * D];
    static float qq[3 * 4 * D], s1[3 * 4 * R], s2[3 * 4 * R], o1[3 * 4 * D], o2[3 * 4 * D];
    int same_d = 1, same_w = 1;
    for (int i = 0; i < R * D; i++) k[i] = quant_f32_to_f16(rndf());
    for (int i = 0; i < 3 * 4 * D; i++) qq[i] = rndf();
    for (uint32_t d = 8; d <= D; d += 8)
        for (uint32_t nq = 1; nq <= 4; nq++) {
            uint32_t rows[3] = {R, 1 + test_rng_u32(&rng) % R, 8};
            memset(s1, 0, sizeof s1);
            memset(s2, 0, sizeof s2);
            ks->dots_f16(k, D, d, qq, D, nq, 4 * D, 3, rows, s1, R);
            other->dots_f16(k, D, d, qq, D, nq, 4 * D, 3, rows, s2, R);
            if (memcmp(s1, s2, sizeof s1)) same_d = 0;
            for (int i = 0; i < 3 * 4 * D; i++) o1[i] = o2[i] = rndf();
            ks->wsum_f16(o1, D, 4 * D, s1, R, nq, 3, rows, k, D, d);
            other->wsum_f16(o2, D, 4 * D, s1, R, nq, 3, rows, k, D, d);
            if (memcmp(o1, o2, sizeof o1)) same_w = 0;
        }
    CHECK(same_d, "%s: dots_f16 gives the bits of %s's", ks->name, other->name);
    CHECK(same_w, "%s: wsum_f16 gives the bits of %s's", ks->name, other->name);
}

/* The sets as kern_select fills them (missing entries from the reference):
 * the reference, the best without AVX-512, the best. */
int main(void)
{
    static KernelSet ref, narrow, best;
    kern_select(KERN_REFERENCE);
    ref = *kern_active();
    kern_select(KERN_NO_AVX512);
    narrow = *kern_active();
    kern_select(KERN_BEST);
    best = *kern_active();
    test_set(&ref);
    if (narrow.dots_f16 != ref.dots_f16) test_set(&narrow);
    if (best.dots_f16 != narrow.dots_f16) {
        best.name = "AVX-512 attention kernels";
        test_set(&best);
        same_kernels(&best, &narrow);
    }
    CHECK_DONE();
}
