/* test_kernels_rows.c - the multi-row matmul kernels (KernelSet.rows, e.g.
 * kernels_x86_rows.c) against the reference, and their determinism.
 *
 * For each type the active set has a rows kernel for, on random weights
 * and activations, with shapes chosen to hit every edge (rows not a
 * multiple of the 8- or 32-row tile, a row length not a multiple of the 32-block
 * K-chunk, more tokens than one pass of 64 holds):
 *  - every output is within 1e-5 of the sum of |terms| of the reference dot
 *    (the same bound as test_kernels.c: only float summation order differs;
 *    the integer block sums are exact);
 *  - determinism (kernels.h): each token computed alone equals the same
 *    token in a call with all of them, bit for bit; a row computed in a
 *    call that starts at another row (so it sits in another lane of another
 *    tile) equals itself bit for bit; kern_matmul over split row ranges
 *    (as threads split them) equals one call. */
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

static TestRng rng = {0x9e3779b97f4a7c15ull};
static float rndf(void) /* [-1, 1) */
{
    return test_rng_f(&rng);
}

enum { ROWS = 75, COLS = 256 * 5, TOKENS = 70 }; /* 40 blocks of 32, 5 of 256; two 32-row tiles and a part */

/* sum of |w_i a_i| over a row of n elements (the error bound's scale) */
static double abs_terms_n(uint32_t type, const uint8_t *row, const void *act, int n)
{
    float *w = malloc(sizeof(float) * (size_t)n);
    quant_dequant_row(type, row, w, (uint64_t)n);
    double mag = 0;
    for (int i = 0; i < n; i++) {
        double a;
        if (kern_act_format(type) == KERN_ACT_F32) a = ((const float *)act)[i];
        else if (kern_act_format(type) == KERN_ACT_Q8_0) a = (double)((const KernQ8_0 *)act)[i / 32].d * ((const KernQ8_0 *)act)[i / 32].q[i % 32];
        else a = (double)((const KernQ8_K *)act)[i / 256].d * ((const KernQ8_K *)act)[i / 256].q[i % 256];
        mag += fabs((double)w[i] * a);
    }
    free(w);
    return mag;
}

static double abs_terms(uint32_t type, const uint8_t *row, const void *act)
{
    return abs_terms_n(type, row, act, COLS);
}

/* rows: the kernel under test; active: it is the active set's (then
 * kern_matmul, which calls it, is checked too); narrow: another kernel for
 * the type that must give the same bits (the AVX2 eight-row kernel for an
 * AVX-512 one), or NULL. */
static void test_type(uint32_t type, KernRowsFn rows, const char *label, int active, KernRowsFn narrow)
{
    char name[64];
    snprintf(name, sizeof name, "%s [%s]", ggml_type_info(type)->name, label);
    uint64_t row_bytes = ggml_row_bytes(type, COLS);
    uint64_t act_stride = kern_act_bytes(kern_act_format(type), COLS);
    uint8_t *w = malloc(ROWS * row_bytes);
    uint8_t *act = malloc(TOKENS * act_stride);
    float *all = malloc(sizeof(float) * TOKENS * ROWS), *one = malloc(sizeof(float) * TOKENS * ROWS);
    float *x = malloc(sizeof(float) * COLS);
    for (int r = 0; r < ROWS; r++) {
        for (int i = 0; i < COLS; i++) x[i] = rndf() * (r % 3 == 0 ? 4.0f : 0.5f);
        if (quant_quantize_row(type, x, w + r * row_bytes, COLS) != 0) {
            /* no quantizer (Q5_K): random bytes, small random d and dmin (the block's first two halves) */
            for (uint64_t i = 0; i < row_bytes; i++) w[r * row_bytes + i] = (uint8_t)test_rng_u32(&rng);
            for (uint64_t b = 0; b < COLS / 256; b++)
                for (int k = 0; k < 2; k++) {
                    uint16_t h = quant_f32_to_f16(rndf() * 0.02f);
                    uint8_t *p = w + r * row_bytes + b * ggml_type_info(type)->block_bytes + 2 * k;
                    p[0] = (uint8_t)h, p[1] = (uint8_t)(h >> 8);
                }
        }
    }
    for (int t = 0; t < TOKENS; t++) {
        for (int i = 0; i < COLS; i++) x[i] = rndf() * (t % 5 == 0 ? 100.0f : 1.0f);
        kern_quantize_act(type, x, act + t * act_stride, COLS);
    }

    /* all tokens at once */
    rows(COLS, w, row_bytes, ROWS, act, act_stride, TOKENS, all, ROWS);

    double worst = 0;
    for (int t = 0; t < TOKENS; t++) {
        for (int r = 0; r < ROWS; r++) {
            float want;
            kern_ref()->dot[type](COLS, w + r * row_bytes, act + t * act_stride, act_stride, 1, &want, 1);
            double err = fabs((double)all[t * ROWS + r] - want) /
                         (abs_terms(type, w + r * row_bytes, act + t * act_stride) + 1e-30);
            if (err > worst) worst = err;
        }
    }
    /* F16 arithmetic (kernels.h, KernelSet.f16_in_half) has its own bound */
    double bound = type == GGML_TYPE_F16 && kern_active()->f16_in_half && rows == kern_active()->rows[type]
                       ? KERN_HALF_BOUND
                       : 1e-5;
    CHECK(worst <= bound, "%s rows: %d rows x %d tokens within %.3g of sum |terms| of the reference (worst %.3g)", name,
          ROWS, TOKENS, bound, worst);

    /* token by token */
    for (int t = 0; t < TOKENS; t++)
        rows(COLS, w, row_bytes, ROWS, act + t * act_stride, act_stride, 1, one + t * ROWS, ROWS);
    CHECK(memcmp(all, one, sizeof(float) * TOKENS * ROWS) == 0, "%s rows: one token at a time equals all at once, bit for bit",
          name);

    /* a few tokens per call (pith serve --slots decodes one token per
     * slot in one step: kernels may take another path for 2..8 tokens) */
    static const int few[] = {2, 3, 4, 5, 6, 7, 8, 9};
    for (size_t k = 0; k < sizeof few / sizeof few[0]; k++) {
        memset(one, 0, sizeof(float) * TOKENS * ROWS);
        for (int t = 0; t < TOKENS; t += few[k]) {
            int nt = TOKENS - t < few[k] ? TOKENS - t : few[k];
            rows(COLS, w, row_bytes, ROWS, act + t * act_stride, act_stride, nt, one + t * ROWS, ROWS);
        }
        CHECK(memcmp(all, one, sizeof(float) * TOKENS * ROWS) == 0,
              "%s rows: %d tokens per call equal all at once, bit for bit", name, few[k]);
    }
    for (int nt = 1; nt <= 4; nt += 3) {
        int same_few = 1;
        for (int start = 1; start < 40; start += 3) {
            rows(COLS, w + start * row_bytes, row_bytes, ROWS - start, act, act_stride, nt, one, ROWS);
            for (int t = 0; t < nt; t++)
                for (int r = start; r < ROWS; r++)
                    if (memcmp(&one[t * ROWS + (r - start)], &all[t * ROWS + r], sizeof(float)) != 0) same_few = 0;
        }
        CHECK(same_few, "%s rows: %d token(s): a row's result does not depend on where its tile starts", name, nt);
    }

    /* rows starting elsewhere: row r sits in another lane and tile */
    int same = 1;
    for (int start = 1; start < 40; start += 3) {
        rows(COLS, w + start * row_bytes, row_bytes, ROWS - start, act, act_stride, TOKENS, one, ROWS);
        for (int t = 0; t < TOKENS; t++)
            for (int r = start; r < ROWS; r++)
                if (memcmp(&one[t * ROWS + (r - start)], &all[t * ROWS + r], sizeof(float)) != 0) same = 0;
    }
    CHECK(same, "%s rows: a row's result does not depend on where its tile starts", name);

    if (narrow) {
        narrow(COLS, w, row_bytes, ROWS, act, act_stride, TOKENS, one, ROWS);
        CHECK(memcmp(all, one, sizeof(float) * TOKENS * ROWS) == 0, "%s rows: equal to the eight-row AVX2 kernel, bit for bit",
              name);
    }

    /* kern_matmul with the rows split as threads split them */
    if (active) {
    memset(one, 0, sizeof(float) * TOKENS * ROWS);
    kern_matmul(type, w, row_bytes, COLS, 0, 5, act, act_stride, TOKENS, one, ROWS);
    kern_matmul(type, w, row_bytes, COLS, 5, 13, act, act_stride, TOKENS, one, ROWS);
    kern_matmul(type, w, row_bytes, COLS, 13, 50, act, act_stride, TOKENS, one, ROWS);
    kern_matmul(type, w, row_bytes, COLS, 50, ROWS, act, act_stride, TOKENS, one, ROWS);
    CHECK(memcmp(all, one, sizeof(float) * TOKENS * ROWS) == 0, "%s rows: kern_matmul over split row ranges equals one call",
          name);
    }
    free(w);
    free(act);
    free(all);
    free(one);
    free(x);
}

/* Blocks at the extremes of their codes and scales (every code and scale
 * at its largest magnitude) against activations of +-127, where a sum that
 * overflowed its lanes (int16 products without dotprod) would be far off;
 * the bound as above. Q8_K types, and Q8_0 and Q4_0 (codes -128 or 127,
 * -8 or 7; d = 1). Five tokens: passes of four and of one; then each alone. */
static void test_extremes(uint32_t type, KernRowsFn rows, const char *label)
{
    enum { N = 256 * 3, R = 6, T = 5 };
    KernActFormat fmt = kern_act_format(type);
    uint64_t rb = ggml_row_bytes(type, N), as = kern_act_bytes(fmt, N), bb = ggml_type_info(type)->block_bytes;
    uint64_t be = ggml_type_info(type)->block_elems;
    uint8_t *w = malloc(R * rb), *act = malloc(T * as);
    float x[N], got[T * R];
    double worst = 0;
    int same = 1;
    for (int pattern = 0; pattern < 4; pattern++) {
        memset(w, pattern & 1 ? 0xff : 0x00, R * rb);
        for (int r = 0; r < R; r++)
            for (uint64_t b = 0; b < N / be; b++) {
                uint8_t *blk = w + r * rb + b * bb;
                if (type == GGML_TYPE_Q6_K) {
                    memset(blk + 192, r % 2 ? 0x80 : 0x7f, 16); /* scales -128 or 127 */
                    blk[208] = 0x00, blk[209] = 0x3c;           /* d = 1 */
                } else if (fmt == KERN_ACT_Q8_K) {
                    blk[0] = 0x00, blk[1] = 0x3c, blk[2] = 0x00, blk[3] = 0x38; /* d = 1, dmin = 0.5 */
                    memset(blk + 4, 0xff, 12);                                  /* scales and mins 63 */
                } else {
                    if (type == GGML_TYPE_Q8_0) memset(blk + 2, pattern & 1 ? 0x80 : 0x7f, 32); /* -128 or 127 */
                    blk[0] = 0x00, blk[1] = 0x3c;                                               /* d = 1 */
                }
            }
        for (int t = 0; t < T; t++) {
            for (int i = 0; i < N; i++) x[i] = (pattern & 2 ? -1.0f : 1.0f) * (t == 1 && i % 2 ? -1.0f : 1.0f);
            kern_quantize_act(type, x, act + t * as, N);
        }
        rows(N, w, rb, R, act, as, T, got, R);
        for (int t = 0; t < T; t++) { /* one token per call (decoding's kernels), the same bits */
            float alone[R];
            rows(N, w, rb, R, act + t * as, as, 1, alone, R);
            same &= memcmp(alone, got + t * R, sizeof alone) == 0;
        }
        for (int t = 0; t < T; t++)
            for (int r = 0; r < R; r++) {
                float want;
                kern_ref()->dot[type](N, w + r * rb, act + t * as, as, 1, &want, 1);
                double mag = 0;
                float wf[N];
                quant_dequant_row(type, w + r * rb, wf, N);
                for (int i = 0; i < N; i++) {
                    double a;
                    if (fmt == KERN_ACT_Q8_K) {
                        const KernQ8_K *k = (const KernQ8_K *)(act + t * as);
                        a = (double)k[i / 256].d * k[i / 256].q[i % 256];
                    } else {
                        const KernQ8_0 *k = (const KernQ8_0 *)(act + t * as);
                        a = (double)k[i / 32].d * k[i / 32].q[i % 32];
                    }
                    mag += fabs((double)wf[i] * a);
                }
                double err = fabs((double)got[t * R + r] - want) / (mag + 1e-30);
                if (err > worst) worst = err;
            }
    }
    CHECK(worst <= 1e-5, "%s [%s] rows: largest codes and scales against +-127 within 1e-05 of sum |terms| (worst %.3g)",
          ggml_type_info(type)->name, label, worst);
    CHECK(same, "%s [%s] rows: largest codes and scales, each token alone equals the five together, bit for bit",
          ggml_type_info(type)->name, label);
    free(w);
    free(act);
}

/* The K-quant types (Q8_K activations) at small row counts and several
 * K-chunks: rows 1 to 7 (a tile of four rows with 1-3 of them repeated,
 * and a whole tile and a part), 9 blocks of 256 (the A76 prompt tile's
 * K-chunks of 4 blocks: two and a part), 1 to 9 tokens per call and 13 at
 * once. Every call's results equal one token per call (the decoding
 * kernels), bit for bit, and the reference within the bound of test_type;
 * kern_matmul over row ranges cut inside a tile equals one call. */
static void test_kq_small(uint32_t type, KernRowsFn rows, const char *label, int active)
{
    enum { N = 256 * 9, R = 7, T = 13 };
    uint64_t rb = ggml_row_bytes(type, N), as = kern_act_bytes(KERN_ACT_Q8_K, N);
    uint8_t *w = malloc(R * rb), *act = malloc(T * as);
    float *x = malloc(sizeof(float) * N), *one = malloc(sizeof(float) * T * R), *got = malloc(sizeof(float) * T * R);
    for (int r = 0; r < R; r++) {
        for (int i = 0; i < N; i++) x[i] = rndf() * (r % 2 ? 3.0f : 0.25f);
        if (quant_quantize_row(type, x, w + r * rb, N) != 0) { /* Q5_K: random bytes, small d and dmin */
            for (uint64_t i = 0; i < rb; i++) w[r * rb + i] = (uint8_t)test_rng_u32(&rng);
            for (int b = 0; b < N / 256; b++)
                for (int k = 0; k < 2; k++) {
                    uint16_t h = quant_f32_to_f16(rndf() * 0.02f);
                    uint8_t *p = w + r * rb + b * ggml_type_info(type)->block_bytes + 2 * k;
                    p[0] = (uint8_t)h, p[1] = (uint8_t)(h >> 8);
                }
        }
    }
    for (int t = 0; t < T; t++) {
        for (int i = 0; i < N; i++) x[i] = rndf() * (t % 4 == 1 ? 50.0f : 1.0f);
        kern_quantize_act(type, x, act + t * as, N);
    }
    int same = 1, split = 1;
    double worst = 0;
    for (int nr = 1; nr <= R; nr++) {
        for (int t = 0; t < T; t++) rows(N, w, rb, (uint64_t)nr, act + t * as, as, 1, one + t * R, R);
        for (int t = 0; t < T; t++)
            for (int r = 0; r < nr; r++) {
                float want;
                kern_ref()->dot[type](N, w + r * rb, act + t * as, as, 1, &want, 1);
                double err = fabs((double)one[t * R + r] - want) / (abs_terms_n(type, w + r * rb, act + t * as, N) + 1e-30);
                if (err > worst) worst = err;
            }
        for (int per = 2; per <= T; per += per == 9 ? T - 9 : 1) {
            memset(got, 0, sizeof(float) * T * R);
            for (int t = 0; t < T; t += per) {
                int nt = T - t < per ? T - t : per;
                rows(N, w, rb, (uint64_t)nr, act + t * as, as, nt, got + t * R, R);
            }
            for (int t = 0; t < T; t++) same &= memcmp(got + t * R, one + t * R, sizeof(float) * (size_t)nr) == 0;
        }
        if (active && nr == R) {
            static const uint64_t cuts[] = {0, 1, 3, 6, R};
            memset(got, 0, sizeof(float) * T * R);
            for (int i = 0; i < 4; i++) kern_matmul(type, w, rb, N, cuts[i], cuts[i + 1], act, as, T, got, R);
            split = memcmp(got, one, sizeof(float) * T * R) == 0;
        }
    }
    CHECK(worst <= 1e-5, "%s [%s] rows: 1 to %d rows x %d blocks of 256, one token per call within 1e-05 of sum |terms| of "
                         "the reference (worst %.3g)", ggml_type_info(type)->name, label, R, N / 256, worst);
    CHECK(same, "%s [%s] rows: 1 to %d rows x %d blocks, 2 to 9 and %d tokens per call equal one per call, bit for bit",
          ggml_type_info(type)->name, label, R, N / 256, T);
    if (active)
        CHECK(split, "%s [%s] rows: kern_matmul over rows cut at 1, 3, 6 of %d (inside a tile), %d tokens: equal, bit for bit",
              ggml_type_info(type)->name, label, R, T);
    free(w);
    free(act);
    free(x);
    free(one);
    free(got);
}

/* F16 arithmetic (KernelSet.f16_in_half): on values whose products and
 * sums F16 holds exactly (weights +-2^-2..2^1, activations small integers,
 * one token scaled by 1024 so the kernel divides its chunks by a power of
 * two), the result must be the reference's exactly: a dropped, repeated or
 * misplaced element, chunk or tail cannot hide in the rounding bound. n:
 * with a short run of 64 and a tail past the last 8 (the kernel's general
 * finish), or whole runs (its four-lane finish). */
static void test_f16_half(KernRowsFn rows, int n)
{
    enum { R = 13, T = 9 };
    uint64_t rb = ggml_row_bytes(GGML_TYPE_F16, (uint64_t)n);
    uint8_t *w = malloc(R * rb);
    float *x = malloc(sizeof(float) * T * n), *got = malloc(sizeof(float) * T * R), *one = malloc(sizeof(float) * R);
    float *wf = malloc(sizeof(float) * n);
    static const float pw[] = {0.25f, 0.5f, 1.0f, 2.0f, -0.25f, -0.5f, -1.0f, -2.0f};
    for (int r = 0; r < R; r++) {
        for (int i = 0; i < n; i++) wf[i] = pw[test_rng_u32(&rng) % 8];
        quant_quantize_row(GGML_TYPE_F16, wf, w + r * rb, (uint64_t)n);
    }
    for (int t = 0; t < T; t++)
        for (int i = 0; i < n; i++) x[t * n + i] = (float)((int)(test_rng_u32(&rng) % 15) - 7) * (t == 3 ? 1024.0f : 1.0f);
    rows((uint64_t)n, w, rb, R, x, sizeof(float) * n, T, got, R);
    int exact = 1, alone = 1;
    for (int t = 0; t < T; t++) {
        rows((uint64_t)n, w, rb, R, x + t * n, sizeof(float) * n, 1, one, R);
        for (int r = 0; r < R; r++) {
            float want;
            kern_ref()->dot[GGML_TYPE_F16]((uint64_t)n, w + r * rb, x + t * n, 0, 1, &want, 1);
            exact &= got[t * R + r] == want;
            alone &= memcmp(&got[t * R + r], &one[r], sizeof(float)) == 0;
        }
    }
    CHECK(exact, "F16 in F16 arithmetic: exactly the reference where F16 holds every product and sum (%d rows, %d tokens, "
                 "%d columns, one token scaled down)", R, T, n);
    CHECK(alone, "F16 in F16 arithmetic: each token alone equals the group, bit for bit (%d columns)", n);
    free(w);
    free(x);
    free(got);
    free(one);
    free(wf);
}

/* A matrix laid out for its kernels: repacked in place (side NULL) or the
 * file's layout with a copy of its scales (side). */
typedef struct {
    uint32_t type;
    const uint8_t *w;
    uint64_t rb, cols, rows;
    const uint16_t *side;
    const char *what; /* "packed", "with its scales' copy" */
} Laid;

static void laid_matmul(const Laid *m, uint64_t r0, uint64_t r1, const uint8_t *act, uint64_t as, int nt, float *out)
{
    if (m->side) kern_matmul_sided(m->type, m->w, m->rb, m->cols, r0, r1, m->side, act, as, nt, out, m->rows);
    else kern_matmul_packed(m->type, m->w, m->rb, m->cols, r0, r1, act, as, nt, out, m->rows);
}

/* The laid-out matrix's matmul against want (T tokens of act): all tokens
 * at once, 1..9 per call, and row ranges split anywhere (threads; a range
 * may start or end inside a group of rows or a pass of eight). */
static void check_laid(const Laid *m, const uint8_t *act, uint64_t as, int T, const float *want, const char *against)
{
    const char *name = ggml_type_info(m->type)->name;
    uint64_t R = m->rows;
    int rows_n = (int)R, cols = (int)m->cols;
    float *got = malloc(sizeof(float) * (size_t)T * R);
    laid_matmul(m, 0, R, act, as, T, got);
    CHECK(memcmp(want, got, sizeof(float) * T * R) == 0, "%s %s (%d x %d, %d tokens): equal to %s, bit for bit",
          name, m->what, rows_n, cols, T, against);
    for (int per = 1; per <= 9; per++) {
        memset(got, 0, sizeof(float) * T * R);
        for (int t = 0; t < T; t += per) laid_matmul(m, 0, R, act + t * as, as, T - t < per ? T - t : per, got + t * R);
        CHECK(memcmp(want, got, sizeof(float) * T * R) == 0, "%s %s (%d x %d): %d token(s) per call, bit for bit",
              name, m->what, rows_n, cols, per);
    }
    static const uint64_t cuts[][5] = {{0, 5, 13, 50, 0}, {0, 3, 4, 9, 0}, {0, 1, 2, 10, 0}, {0, 8, 17, 23, 0}};
    for (size_t k = 0; k < sizeof cuts / sizeof cuts[0]; k++)
        for (int nt = 1; nt <= T; nt += T - 1) {
            memset(got, 0, sizeof(float) * T * R);
            uint64_t c[5];
            memcpy(c, cuts[k], sizeof c);
            c[4] = R;
            for (int i = 0; i < 4; i++) {
                uint64_t a = c[i] < R ? c[i] : R, b = c[i + 1] < R ? c[i + 1] : R;
                if (i == 3) b = R;
                laid_matmul(m, a, b, act, as, nt, got);
            }
            int same = 1;
            for (int t = 0; t < nt; t++) same &= memcmp(want + t * R, got + t * R, sizeof(float) * R) == 0;
            CHECK(same, "%s %s (%d x %d): rows split at %llu, %llu, %llu, %d token(s): equal, bit for bit", name,
                  m->what, rows_n, cols, (unsigned long long)c[1], (unsigned long long)c[2], (unsigned long long)c[3],
                  nt);
        }
    free(got);
}

/* Weights repacked in place (kernels.h: KERN_PACK_ROWS; KernelSet.packed,
 * Q8_0 and Q4_0 on the A76 and x86 AVX-512 VNNI). With the active set's packed kernel: every row
 * and token the same bits as the set's kernel on the file's layout (so
 * --load read, which packs, gives mmap's logits); on sets without one
 * kern_matmul_packed computes the reference's formula: the reference's
 * bits (check_laid's calls). Unpacking gives the rows back, the scratch is
 * left zeroed. The file's layout with a copy of the scales (kernels.h:
 * KERN_SIDE_ROWS; KernelSet.sided, the same types with --load mmap): the
 * copy holds each row's scales where the layout says, and the set's kernel
 * gives the bits of its rows[] kernel on the file alone; a set without one
 * wants no copy (kern_side_bytes 0). n of 40 blocks (prompt K-chunks of 64
 * are cut short) and of 133 (decoding's chunk of 128 and a part); T tokens
 * (70: more than a prompt pass of x86's tiles takes, TOKENS = 64). */
static void test_laid(uint32_t type, int rows_n, int cols, int T)
{
    const KernelSet *ks = kern_active();
    const char *name = ggml_type_info(type)->name;
    uint64_t rb = ggml_row_bytes(type, (uint64_t)cols), as = kern_act_bytes(kern_act_format(type), (uint64_t)cols);
    uint64_t R = (uint64_t)rows_n, nb = (uint64_t)cols / 32;
    uint8_t *w = malloc(R * rb), *p = malloc(R * rb), *act = malloc(T * as), *scratch = calloc(KERN_PACK_ROWS, rb);
    uint8_t *row = malloc(rb);
    float *x = malloc(sizeof(float) * cols), *f = malloc(sizeof(float) * cols), *want = malloc(sizeof(float) * T * R);
    uint16_t *side = malloc(R * nb * sizeof(uint16_t));
    for (uint64_t r = 0; r < R; r++) {
        for (int i = 0; i < cols; i++) x[i] = rndf() * (r % 3 == 0 ? 4.0f : 0.5f);
        quant_quantize_row(type, x, w + r * rb, (uint64_t)cols);
    }
    for (int t = 0; t < T; t++) {
        for (int i = 0; i < cols; i++) x[i] = rndf() * (t % 5 == 0 ? 100.0f : 1.0f);
        kern_quantize_act(type, x, act + t * as, (uint64_t)cols);
    }
    memcpy(p, w, R * rb);
    kern_pack(type, p, rb, R, scratch);
    int zero = 1, back = 1;
    for (uint64_t i = 0; i < KERN_PACK_ROWS * rb; i++) zero &= scratch[i] == 0;
    for (uint64_t r = 0; r < R; r++) {
        kern_unpack_row(type, p, rb, r, row);
        back &= memcmp(row, w + r * rb, rb) == 0;
        quant_dequant_row(type, w + r * rb, x, (uint64_t)cols);
        kern_dequant_packed_row(type, p, rb, r, f);
        back &= memcmp(x, f, sizeof(float) * cols) == 0;
    }
    CHECK(zero && back && memcmp(p, w, R * rb) != 0,
          "%s packed (%d x %d): every row unpacks to itself (bytes and floats), the scratch is left zeroed", name,
          rows_n, cols);

    /* the set's kernel on the file's layout, or the reference */
    if (ks->packed[type] || ks->sided[type]) {
        kern_matmul(type, w, rb, (uint64_t)cols, 0, R, act, as, T, want, R);
    } else {
        for (int t = 0; t < T; t++)
            for (uint64_t r = 0; r < R; r++)
                kern_ref()->dot[type]((uint64_t)cols, w + r * rb, act + t * as, as, 1, &want[t * R + r], 1);
    }
    Laid packed = {type, p, rb, (uint64_t)cols, R, NULL, "packed"};
    check_laid(&packed, act, as, T, want,
               ks->packed[type] ? "the set's kernel on the file's layout" : "the reference");

    uint64_t side_bytes = kern_side_bytes(type, R, (uint64_t)cols);
    if (!ks->sided[type] || R % KERN_SIDE_ROWS) {
        CHECK(side_bytes == 0, "%s (%d x %d): no copy of the scales wanted (%s)", name, rows_n, cols,
              ks->sided[type] ? "rows not a multiple of eight" : "no kernel for one");
    } else {
        kern_side_fill(type, w, rb, R, side);
        int where = side_bytes == R * nb * sizeof(uint16_t);
        for (uint64_t r = 0; r < R; r++)
            for (uint64_t b = 0; b < nb; b++) {
                const uint8_t *blk = w + r * rb + b * (rb / nb);
                uint16_t d = side[(r / KERN_SIDE_ROWS * nb + b) * KERN_SIDE_ROWS + r % KERN_SIDE_ROWS];
                where &= d == (uint16_t)(blk[0] | blk[1] << 8);
            }
        CHECK(where, "%s (%d x %d): the scales' copy holds %llu bytes, each row's scale where kernels.h says", name,
              rows_n, cols, (unsigned long long)side_bytes);
        Laid sided = {type, w, rb, (uint64_t)cols, R, side, "with its scales' copy"};
        check_laid(&sided, act, as, T, want, "the set's kernel on the file's layout");
    }
    free(w);
    free(p);
    free(act);
    free(scratch);
    free(row);
    free(x);
    free(f);
    free(want);
    free(side);
}

int main(void)
{
    const KernelSet *ks = kern_active();
    int any = 0;
    for (uint32_t t = 0; t < GGML_TYPE_COUNT; t++) {
        if (!ks->rows[t]) continue;
        any = 1;
        test_type(t, ks->rows[t], ks->name, 1, NULL);
        if (kern_act_format(t) == KERN_ACT_Q8_K || t == GGML_TYPE_Q8_0 || t == GGML_TYPE_Q4_0)
            test_extremes(t, ks->rows[t], ks->name);
        if (kern_act_format(t) == KERN_ACT_Q8_K) test_kq_small(t, ks->rows[t], ks->name, 1);
    }
    if (ks->f16_in_half) {
        test_f16_half(ks->rows[GGML_TYPE_F16], 256 * 5 + 8 * 3 + 3); /* a short run and a tail of 3 */
        test_f16_half(ks->rows[GGML_TYPE_F16], 2048 + 1024);         /* two blocks of whole runs */
    }
    /* packing itself and kern_matmul_packed on every path (its kernel, or
     * the reference's formula); the scales' copy where the set has a kernel
     * for it (rows a multiple of eight), none elsewhere */
    static const uint32_t packable[] = {GGML_TYPE_Q8_0, GGML_TYPE_Q4_0};
    for (int k = 0; k < 2; k++) {
        test_laid(packable[k], 76, 32 * 40, 11);
        test_laid(packable[k], 80, 32 * 40, 11);
        test_laid(packable[k], 12, 32 * 133, 11);
        test_laid(packable[k], 16, 32 * 133, 11);
        test_laid(packable[k], 4, 32 * 3, 11);
        test_laid(packable[k], 8, 32 * 3, 11);
        test_laid(packable[k], 76, 32 * 40, 70);
    }
    if (!any) CHECK(1, "%s: no multi-row kernels on this path (row-by-row kernels are tested by test_kernels)", ks->name);

    /* x86: when the active set uses the AVX-512 kernels, the AVX2 ones too,
     * and each AVX-512 kernel against the AVX2 one of its type */
    static KernRowsFn avx2[GGML_TYPE_COUNT], wide[GGML_TYPE_COUNT];
    static KernPackedFn packed[GGML_TYPE_COUNT];
    kern_x86_rows(avx2, packed, 0);
    if (kern_x86_rows(wide, packed, 1)) {
        for (uint32_t t = 0; t < GGML_TYPE_COUNT; t++) {
            if (wide[t] == avx2[t]) continue;
            if (avx2[t]) test_type(t, avx2[t], "AVX2, eight rows", 0, NULL);
            test_type(t, wide[t], "AVX-512 VNNI, 32-row tiles", 0, avx2[t]);
        }
    }
    CHECK_DONE();
}
