/* test_kernels.c - every kernel set against the reference kernels.
 *
 * For each set this CPU can run (the reference always; AVX2 on x86 with
 * it; NEON once kernels_arm.c has it) and each weight type:
 *  - activation quantization gives the same bytes as the reference;
 *  - "exact" blocks: random codes with every float scale a power of two
 *    shared by all blocks, so each integer block sum and every float step
 *    is exact: the dot products must EQUAL the reference bit for bit;
 *  - random blocks with random f16 scales: within 1e-5 of the sum of
 *    |terms| (float summation order differs; bound derived from ~40 float
 *    additions of relative error 6e-8 each, with a margin of 4);
 *  - multi-token calls (nt = 1..KERN_MAX_NT, in any position) give bitwise the same
 *    result per token as single calls (the determinism contract);
 *  - the reference dot itself matches dequantize(w) . dequantize(a) in
 *    double within 1e-5 of the sum of |terms|;
 *  - KV cache dot/axpy (F16, F32, Q8_0) within 1e-5 of sum |terms|.
 * Everything runs on both paths: kern_select(KERN_REFERENCE) forces the
 * reference; fixtures also run without the AVX-512 kernels where a CPU has them.
 * Last, the first logits case of every fixture model runs through the
 * whole forward pass on each path and must meet its class (the fixtures' README, section 6). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../port/port.h"
#include "../src/model/forward.h"
#include "../src/base/ggml_type.h"
#include "../src/gguf/gguf.h"
#include "../src/kernels/kernels.h"
#include "../src/model/model.h"
#include "../src/kernels/quant.h"
#include "check.h"
#include "tools/test_rng.h"
#include "tools/fixtures.h"
#include "tools/test_model.h"

static TestRng rng = {0x2545f4914f6cdd1dull};
static uint32_t rnd(void)
{
    return test_rng_u32(&rng);
}
static float rndf(void) /* [-1, 1) */
{
    return test_rng_f(&rng);
}

static void put16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}

static const uint32_t TYPES[] = {GGML_TYPE_Q8_0, GGML_TYPE_Q4_0, GGML_TYPE_Q4_1,   GGML_TYPE_Q5_0, GGML_TYPE_Q5_1,
                                 GGML_TYPE_IQ4_NL, GGML_TYPE_Q2_K, GGML_TYPE_Q3_K, GGML_TYPE_Q4_K, GGML_TYPE_Q5_K,
                                 GGML_TYPE_Q6_K, GGML_TYPE_IQ4_XS, GGML_TYPE_F32,  GGML_TYPE_F16,  GGML_TYPE_BF16};
enum { N_TYPES = sizeof TYPES / sizeof TYPES[0] };

/* Offsets of the f16 scale fields in a block. */
static int scale_fields(uint32_t t, int *off)
{
    switch (t) {
    case GGML_TYPE_Q8_0:
    case GGML_TYPE_Q4_0:
    case GGML_TYPE_Q5_0:
    case GGML_TYPE_IQ4_NL:
    case GGML_TYPE_IQ4_XS:
        off[0] = 0;
        return 1;
    case GGML_TYPE_Q4_1:
    case GGML_TYPE_Q5_1:
    case GGML_TYPE_Q4_K:
    case GGML_TYPE_Q5_K:
        off[0] = 0, off[1] = 2;
        return 2;
    case GGML_TYPE_Q2_K:
        off[0] = 80, off[1] = 82;
        return 2;
    case GGML_TYPE_Q3_K:
        off[0] = 108;
        return 1;
    case GGML_TYPE_Q6_K:
        off[0] = 208;
        return 1;
    default:
        return 0;
    }
}

static int is_float_type(uint32_t t)
{
    return t == GGML_TYPE_F32 || t == GGML_TYPE_F16 || t == GGML_TYPE_BF16;
}

/* A random row; exact != 0 sets every scale field to the same power of two. */
static void random_row(uint32_t t, uint8_t *row, uint64_t n, int exact, uint16_t pow2)
{
    const GgmlTypeInfo *ti = ggml_type_info(t);
    uint64_t bytes = ggml_row_bytes(t, n);
    for (uint64_t i = 0; i < bytes; i++) row[i] = (uint8_t)rnd();
    if (is_float_type(t)) {
        for (uint64_t i = 0; i < n; i++) {
            float f = rndf();
            if (t == GGML_TYPE_F32) memcpy(row + 4 * i, &f, 4);
            else if (t == GGML_TYPE_F16) put16(row + 2 * i, quant_f32_to_f16(f));
            else {
                uint32_t u;
                memcpy(&u, &f, 4);
                put16(row + 2 * i, (uint16_t)(u >> 16));
            }
        }
        return;
    }
    int off[2];
    int k = scale_fields(t, off);
    for (uint64_t b = 0; b < bytes / ti->block_bytes; b++)
        for (int i = 0; i < k; i++)
            put16(row + b * ti->block_bytes + off[i], exact ? pow2 : quant_f32_to_f16(rndf() * 0.02f));
}

/* Activation built directly as blocks: codes in [-127, 127], scale d. */
static void random_act(KernActFormat f, void *out, uint64_t n, float d)
{
    if (f == KERN_ACT_Q8_0) {
        KernQ8_0 *a = out;
        for (uint64_t b = 0; b < n / QK8_0; b++) {
            int s = 0;
            for (int j = 0; j < QK8_0; j++) s += a[b].q[j] = (int8_t)((int)(rnd() % 255) - 127);
            a[b].d = d;
            a[b].sum = s;
        }
    } else if (f == KERN_ACT_Q8_K) {
        KernQ8_K *a = out;
        for (uint64_t b = 0; b < n / QK_K; b++) {
            for (int g = 0; g < QK_K / 16; g++) {
                int s = 0;
                for (int j = 16 * g; j < 16 * g + 16; j++) s += a[b].q[j] = (int8_t)((int)(rnd() % 255) - 127);
                a[b].bsum[g] = (int16_t)s;
            }
            a[b].d = d;
        }
    } else {
        float *x = out;
        for (uint64_t i = 0; i < n; i++) x[i] = rndf();
    }
}

/* Dequantized activation (for the double-precision check). */
static void act_floats(KernActFormat f, const void *act, uint64_t n, double *x)
{
    for (uint64_t i = 0; i < n; i++) {
        if (f == KERN_ACT_Q8_0) {
            const KernQ8_0 *a = (const KernQ8_0 *)act + i / QK8_0;
            x[i] = (double)a->d * a->q[i % QK8_0];
        } else if (f == KERN_ACT_Q8_K) {
            const KernQ8_K *a = (const KernQ8_K *)act + i / QK_K;
            x[i] = (double)a->d * a->q[i % QK_K];
        } else {
            x[i] = ((const float *)act)[i];
        }
    }
}

enum { N = 512, NT = KERN_MAX_NT };
static uint8_t row[N * 4];
static uint8_t acts[NT][N * 2 * sizeof(float)];
static float wdeq[N];
static double xd[N];

static float ref_dot(uint32_t t, const void *act)
{
    float out;
    kern_ref()->dot[t](N, row, act, 0, 1, &out, 1);
    return out;
}

static double abs_terms(uint32_t t, const void *act, double *exact_sum)
{
    KernActFormat f = kern_act_format(t);
    quant_dequant_row(t, row, wdeq, N);
    act_floats(f, act, N, xd);
    double mag = 0, sum = 0;
    for (int i = 0; i < N; i++) mag += fabs(wdeq[i] * xd[i]), sum += (double)wdeq[i] * xd[i];
    if (exact_sum) *exact_sum = sum;
    return mag;
}

/* GELU gate (kernels.h: gelu_mul): every set, the reference too, gives
 * the bits of the definition (kern_gelu_f16 of the input rounded to F16,
 * 0 below -10, x above 10) on every F16 value, on random floats of every
 * size (ties between F16 values, the bounds, infinities, NaN), in calls of
 * any length (tails) and however the elements are split. The definition
 * itself is within F16 rounding of GELU's tanh form in double (and of
 * float's rounding of 1 + tanh, as ggml computes it). */
static float gelu_def(float x)
{
    if (x <= -10.0f) return 0.0f;
    if (x >= 10.0f) return x;
    return quant_f16_to_f32(kern_gelu_f16(quant_f32_to_f16(x)));
}

static int same_or_nan(float a, float b)
{
    return (isnan(a) && isnan(b)) || memcmp(&a, &b, sizeof a) == 0;
}

static void test_gelu(const KernelSet *ks)
{
    enum { GN = 65536 + 2000 };
    static uint16_t table[KERN_GELU_TABLE];
    static float x[GN], u[GN], all[GN], parts[GN];
    kern_gelu_table(table);
    for (int i = 0; i < 65536; i++) x[i] = quant_f16_to_f32((uint16_t)i);
    for (int i = 65536; i < GN; i++) {
        int kind = i % 5;
        float r = rndf();
        x[i] = kind == 0 ? r * 12.0f /* the bounds */
             : kind == 1 ? ldexpf(r, (int)(rnd() % 40) - 30) /* every size */
             : kind == 2 ? quant_f16_to_f32(quant_f32_to_f16(r * 4.0f)) * (1.0f + 0x1p-11f) /* near ties */
             : r * 3.0f;
    }
    const float special[] = {-10.0f, 10.0f, nextafterf(-10.0f, 0.0f), nextafterf(10.0f, 0.0f), 9.999f, -9.999f,
                             INFINITY, -INFINITY, NAN, 0.0f, -0.0f, 65520.0f, -1e30f, 1e-30f};
    memcpy(x + 65536, special, sizeof special);
    for (int i = 0; i < GN; i++) u[i] = i % 11 == 0 ? 1.0f : rndf() * 2.0f;
    int def_ok = 1;
    for (int h = 0; h < 65536; h++) {
        double v = quant_f16_to_f32((uint16_t)h);
        if (!(fabs(v) < 10.0)) continue;
        double want = 0.5 * v * (1.0 + tanh(0.7978845608028654 * v * (1.0 + 0.044715 * v * v)));
        /* F16 rounding, plus float's 1 + tanh: a few units of 2^-24 times |x| / 2 where tanh is near -1 */
        if (fabs(quant_f16_to_f32(kern_gelu_f16((uint16_t)h)) - want) > 1e-3 * fabs(want) + 3e-7 * fabs(v) + 1e-7)
            def_ok = 0;
    }
    if (ks == kern_ref()) CHECK(def_ok, "GELU's F16 definition within F16 rounding of the tanh form in double");
    memcpy(all, x, sizeof x);
    ks->gelu_mul(all, u, GN, table);
    memcpy(parts, x, sizeof x);
    for (int i0 = 0, step = 1; i0 < GN; i0 += step, step = step % 37 + 1)
        ks->gelu_mul(parts + i0, u + i0, (uint64_t)(i0 + step < GN ? step : GN - i0), table);
    int exact = 1, split_same = 1;
    for (int i = 0; i < GN; i++) {
        if (!same_or_nan(all[i], gelu_def(x[i]) * u[i])) exact = 0;
        if (!same_or_nan(all[i], parts[i])) split_same = 0;
    }
    CHECK(exact, "%s: GELU gate equals the F16 definition bit for bit (all F16 values, random floats, bounds, NaN)",
          ks->name);
    CHECK(split_same, "%s: GELU gate gives the same bits however the elements are split (tails of 1 to 37)", ks->name);
}

/* DeltaNet step (kernels.h: delta_step) against the reference (the
 * reference against the same algebra in double) on random heads of odd and
 * even sizes (tails): o and the updated rows within 1e-5 of the sum of
 * |terms| of each result, over eight steps in a row from the same state. */
static void test_delta_step(const KernelSet *ks)
{
    enum { DK = 130 };
    static float s1[DK * DK], s2[DK * DK], q[DK], k[DK], v[DK], o1[DK], o2[DK], mag_o[DK], mag_s[DK * DK];
    static const uint32_t sizes[] = {1, 3, 8, 17, 31, 64, 100, 128, 130};
    int ok_o = 1, ok_s = 1;
    double worst = 0;
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
        uint32_t dk = sizes[si];
        for (uint32_t i = 0; i < dk * dk; i++) s1[i] = s2[i] = rndf() * 0.5f;
        for (int step = 0; step < 8; step++) {
            double kn = 0, qn = 0;
            for (uint32_t i = 0; i < dk; i++) q[i] = rndf(), k[i] = rndf(), v[i] = rndf() * 2.0f;
            for (uint32_t i = 0; i < dk; i++) kn += (double)k[i] * k[i], qn += (double)q[i] * q[i];
            for (uint32_t i = 0; i < dk; i++) k[i] /= (float)sqrt(kn), q[i] /= (float)sqrt(qn); /* unit, as l2-normed */
            float beta = 0.5f + 0.5f * rndf(), fd = ldexpf(0.5f + 0.25f * rndf(), -(int)(rnd() % 20)),
                  scale = 1.0f / sqrtf((float)dk);
            /* magnitudes from the reference's state before the step */
            double kq = 0;
            for (uint32_t i = 0; i < dk; i++) kq += fabs((double)k[i] * q[i]);
            for (uint32_t r = 0; r < dk; r++) {
                double tq = 0, tk = 0;
                for (uint32_t i = 0; i < dk; i++) tq += fabs((double)s2[r * dk + i] * q[i]), tk += fabs((double)s2[r * dk + i] * k[i]);
                double dmax = beta * (fabs(v[r]) + fd * tk);
                mag_o[r] = (float)((fd * tq + dmax * kq) * scale);
                for (uint32_t i = 0; i < dk; i++) mag_s[r * dk + i] = (float)(fabs(s2[r * dk + i]) + dmax / fd * fabs(k[i]));
            }
            ks->delta_step(s1, dk, q, k, v, beta, fd, scale, o1);
            if (ks != kern_ref()) {
                kern_ref()->delta_step(s2, dk, q, k, v, beta, fd, scale, o2);
            } else { /* the reference itself against the same algebra in double */
                double dkq = 0;
                for (uint32_t i = 0; i < dk; i++) dkq += (double)k[i] * q[i];
                for (uint32_t r = 0; r < dk; r++) {
                    double tq = 0, tk = 0;
                    for (uint32_t i = 0; i < dk; i++) tq += (double)s2[r * dk + i] * q[i], tk += (double)s2[r * dk + i] * k[i];
                    double delta = (v[r] - fd * tk) * beta;
                    for (uint32_t i = 0; i < dk; i++) s2[r * dk + i] = (float)(s2[r * dk + i] + delta / fd * k[i]);
                    o2[r] = (float)((fd * tq + delta * dkq) * scale);
                }
            }
            for (uint32_t r = 0; r < dk; r++) {
                double e = fabs((double)o1[r] - o2[r]) / (mag_o[r] + 1e-30);
                if (e > worst) worst = e;
                if (e > 1e-5) ok_o = 0;
            }
            for (uint32_t i = 0; i < dk * dk; i++)
                if (fabs((double)s1[i] - s2[i]) > 1e-5 * mag_s[i]) ok_s = 0;
            memcpy(s1, s2, dk * dk * sizeof *s1); /* each step from the reference's state */
        }
    }
    const char *against = ks == kern_ref() ? "double" : "the reference";
    CHECK(ok_o, "%s: DeltaNet step output within 1e-5 of sum|terms| of %s (dk 1 to 130; worst %.3g)", ks->name, against,
          worst);
    CHECK(ok_s, "%s: DeltaNet step state within 1e-5 of sum|terms| of %s", ks->name, against);
}

/* The chunked DeltaNet recurrence (kernels.h: kern_delta_chunk with the
 * set's dots_f32 and mix_f32) against the steps it replaces: the reference
 * delta_step token after token, with the factor folded into the rows below
 * KERN_DELTA_FLOOR as src/model/deltanet.c does; both against the same
 * recurrence in double. Heads of 1 to 130 (tails), chunks of 1 to
 * KERN_DELTA_CHUNK, decays from 1 down to 2^-29 and 0 (the fold inside a
 * chunk and at its end), strided rows as in the layer's buffers. Bound:
 * each output and each element of the state S = f T within 1e-5 of its
 * magnitude, the same recurrence in double over |terms| (|S|, |k|, |q|,
 * |v| + |S k|): as for delta_step, float rounding over a few hundred
 * additions with a margin. */
static void test_delta_chunk(const KernelSet *ks)
{
    enum { DK = 130, CT = KERN_DELTA_CHUNK, ST = 3 * DK + 5, OS = DK + 3 };
    static float t1[DK * DK], t2[DK * DK], in[CT * ST], in2[CT * ST], o1[CT * OS], o2[CT * OS];
    static double sd[DK * DK], od[CT * DK], sm[DK * DK], om[CT * DK];
    static const uint32_t sizes[] = {1, 7, 16, 33, 128, 130};
    static const uint32_t lens[] = {1, 2, 5, 17, 64};
    double worst_o = 0, worst_s = 0, worst_steps = 0, worst_vs = 0;
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++)
        for (size_t li = 0; li < sizeof lens / sizeof lens[0]; li++)
            for (int kind = 0; kind < 3; kind++) {
                uint32_t dk = sizes[si], n = lens[li];
                float f1 = ldexpf(0.5f + 0.5f * (rndf() + 1.0f) / 2.0f, -(int)(rnd() % 16)), f2 = f1;
                float d[CT], beta[CT], scale = 1.0f / sqrtf((float)dk);
                for (uint32_t i = 0; i < dk * dk; i++) t1[i] = t2[i] = rndf() * 0.5f, sd[i] = (double)f1 * t1[i], sm[i] = fabs(sd[i]);
                for (uint32_t t = 0; t < n; t++) {
                    float *q = in + t * ST, *k = q + DK, *v = k + DK;
                    double kn = 0, qn = 0;
                    for (uint32_t i = 0; i < dk; i++) q[i] = rndf(), k[i] = rndf(), v[i] = rndf() * 2.0f;
                    for (uint32_t i = 0; i < dk; i++) kn += (double)k[i] * k[i], qn += (double)q[i] * q[i];
                    for (uint32_t i = 0; i < dk; i++) k[i] /= (float)sqrt(kn), q[i] /= (float)sqrt(qn);
                    beta[t] = 0.5f + 0.5f * rndf();
                    /* kind 0: mild decays; 1: strong ones (the fold); 2: one zero */
                    d[t] = kind == 0 ? 0.9f + 0.1f * rndf() : kind == 1 ? ldexpf(1.0f, -(int)(rnd() % 30)) : 0.95f;
                }
                if (kind == 2) d[rnd() % n] = 0.0f;
                memcpy(in2, in, sizeof in);
                /* the steps (reference) and double */
                for (uint32_t t = 0; t < n; t++) {
                    const float *q = in + t * ST, *k = q + DK, *v = k + DK;
                    float fd = f2 * d[t];
                    if (!(fd >= KERN_DELTA_FLOOR)) {
                        for (uint32_t i = 0; i < dk * dk; i++) t2[i] *= fd;
                        fd = 1.0f;
                    }
                    f2 = fd;
                    kern_ref()->delta_step(t2, dk, q, k, v, beta[t], fd, scale, o2 + t * OS);
                    for (uint32_t r = 0; r < dk; r++) {
                        double sk = 0, sq = 0, mk = 0, mq = 0;
                        for (uint32_t i = 0; i < dk; i++)
                            sk += sd[r * dk + i] * d[t] * k[i], mk += sm[r * dk + i] * d[t] * fabs(k[i]);
                        double delta = (v[r] - sk) * beta[t], mdelta = (fabs(v[r]) + mk) * beta[t];
                        for (uint32_t i = 0; i < dk; i++) {
                            sd[r * dk + i] = sd[r * dk + i] * d[t] + delta * k[i];
                            sm[r * dk + i] = sm[r * dk + i] * d[t] + mdelta * fabs(k[i]);
                            sq += sd[r * dk + i] * q[i], mq += sm[r * dk + i] * fabs(q[i]);
                        }
                        od[t * DK + r] = sq * scale, om[t * DK + r] = mq * scale + 1e-30;
                    }
                }
                kern_delta_chunk(ks, t1, &f1, dk, n, in2, in2 + DK, in2 + 2 * DK, ST, d, beta, scale, o1, OS);
                for (uint32_t t = 0; t < n; t++) {
                    double e1 = 0, e2 = 0;
                    for (uint32_t r = 0; r < dk; r++) {
                        e1 = fmax(e1, fabs(o1[t * OS + r] - od[t * DK + r]) / om[t * DK + r]);
                        e2 = fmax(e2, fabs(o2[t * OS + r] - od[t * DK + r]) / om[t * DK + r]);
                        worst_vs = fmax(worst_vs, fabs(o1[t * OS + r] - o2[t * OS + r]) / om[t * DK + r]);
                    }
                    worst_o = fmax(worst_o, e1), worst_steps = fmax(worst_steps, e2);
                }
                double e1 = 0, e2 = 0;
                for (uint32_t i = 0; i < dk * dk; i++) {
                    e1 = fmax(e1, fabs((double)f1 * t1[i] - sd[i]) / (sm[i] + 1e-30));
                    e2 = fmax(e2, fabs((double)f2 * t2[i] - sd[i]) / (sm[i] + 1e-30));
                    worst_vs = fmax(worst_vs, fabs((double)f1 * t1[i] - (double)f2 * t2[i]) / (sm[i] + 1e-30));
                }
                worst_s = fmax(worst_s, e1), worst_steps = fmax(worst_steps, e2);
            }
    CHECK(worst_steps <= 1e-5, "%s: DeltaNet steps (reference) within 1e-5 of the magnitude of the double recurrence "
          "(outputs and state; worst %.3g)", ks->name, worst_steps);
    CHECK(worst_o <= 1e-5, "%s: DeltaNet chunk outputs within 1e-5 of the magnitude of the double recurrence "
          "(dk 1 to 130, chunks of 1 to %d, decays to 0; worst %.3g)", ks->name, KERN_DELTA_CHUNK, worst_o);
    CHECK(worst_s <= 1e-5, "%s: DeltaNet chunk state f T within 1e-5 of the magnitude of the double recurrence "
          "(worst %.3g)", ks->name, worst_s);
    CHECK(worst_vs <= 2e-5, "%s: DeltaNet chunk outputs and state within 2e-5 of that magnitude of the reference's "
          "steps token by token (worst %.3g)", ks->name, worst_vs);
}

/* A value of the convolution's inputs: random, or (special) subnormal,
 * tiny (products below the normal range), zero, or rarely NaN with a
 * payload or infinity (at most one of those per channel: which of two NaNs
 * an addition keeps is not the same on every CPU). */
static float conv_value(int special, int *used)
{
    uint32_t u = rnd() % 16;
    if (!special || u >= 10) return rndf() * 3.0f;
    if (u < 3) return rndf() * 0x1p-130f; /* subnormal */
    if (u < 6) return rndf() * 0x1p-110f; /* its products with w below 2^-126 */
    if (u < 8) return 0.0f;
    if (*used) return rndf();
    *used = 1;
    if (u == 8) return INFINITY;
    uint32_t bits = 0x7fc00000u | (rnd() & 0x3fffffu); /* a quiet NaN with a payload */
    float f;
    memcpy(&f, &bits, 4);
    return f;
}

/* Causal convolution (kernels.h: causal_conv): the reference's bits,
 * output and shifted history, for 1 to 5 taps over channel counts with
 * every tail, whole or split in two ranges at any channel (threads split
 * the channels), over three tokens in a row; then again with subnormal,
 * tiny, zero, NaN and infinite inputs (armv7's NEON flushes subnormals and
 * gives the default NaN: it must fall back where they occur). */
static void test_causal_conv(const KernelSet *ks)
{
    enum { CN = 203, CK = 5 };
    static float w[CN * CK], h1[(CK - 1) * CN], h2[(CK - 1) * CN], x[CN], o1[CN], o2[CN];
    static int used[CN];
    static const uint32_t counts[] = {1, 3, 4, 7, 8, 9, 15, 16, 17, 33, 64, 203};
    int same = 1, same_special = 1;
    for (int special = 0; special < 2; special++)
        for (uint32_t K = 1; K <= CK; K++)
            for (size_t ci = 0; ci < sizeof counts / sizeof counts[0]; ci++) {
                uint32_t n = counts[ci];
                memset(used, 0, sizeof used);
                for (uint32_t i = 0; i < n * K; i++) w[i] = rndf();
                for (uint32_t i = 0; i < (CK - 1) * CN; i++) h1[i] = h2[i] = conv_value(special, &used[i % CN]);
                for (int tok = 0; tok < 3; tok++) {
                    for (uint32_t i = 0; i < n; i++) x[i] = conv_value(special, &used[i]);
                    uint32_t cut = tok == 0 ? n : rnd() % (n + 1); /* whole, then in two ranges */
                    ks->causal_conv(o1, h1, CN, x, w, K, cut);
                    if (cut < n) ks->causal_conv(o1 + cut, h1 + cut, CN, x + cut, w + (uint64_t)cut * K, K, n - cut);
                    kern_ref()->causal_conv(o2, h2, CN, x, w, K, n);
                    if (memcmp(o1, o2, n * sizeof *o1) != 0 || memcmp(h1, h2, sizeof h1) != 0) {
                        if (special) same_special = 0;
                        else same = 0;
                    }
                }
            }
    CHECK(same, "%s: causal convolution equals the reference bit for bit (1 to 5 taps, 1 to 203 channels, split anywhere)",
          ks->name);
    CHECK(same_special, "%s: causal convolution equals the reference bit for bit with subnormal, tiny, zero, NaN and "
          "infinite inputs", ks->name);
}

static void test_set(const KernelSet *ks)
{
    const GgmlTypeInfo *ti;
    /* activation quantization: same bytes */
    {
        static float x[4 * N];
        static KernQ8_0 r0[4 * N / QK8_0], s0[4 * N / QK8_0];
        static KernQ8_K rk[4 * N / QK_K], sk[4 * N / QK_K];
        int same0 = 1, samek = 1;
        for (int trial = 0; trial < 50; trial++) {
            float scale = trial % 5 == 0 ? 0.0f : ldexpf(1.0f, (int)(rnd() % 20) - 10);
            for (int i = 0; i < 4 * N; i++) x[i] = rndf() * scale;
            if (trial % 7 == 1) x[rnd() % (4 * N)] = 1e6f; /* one outlier */
            kern_ref()->quantize_q8_0(x, r0, 4 * N);
            ks->quantize_q8_0(x, s0, 4 * N);
            kern_ref()->quantize_q8_k(x, rk, 4 * N);
            ks->quantize_q8_k(x, sk, 4 * N);
            same0 &= memcmp(r0, s0, sizeof r0) == 0;
            samek &= memcmp(rk, sk, sizeof rk) == 0;
        }
        CHECK(same0, "%s: Q8_0 activation quantization gives the reference's bytes", ks->name);
        CHECK(samek, "%s: Q8_K activation quantization gives the reference's bytes", ks->name);
    }

    for (int k = 0; k < N_TYPES; k++) {
        uint32_t t = TYPES[k];
        ti = ggml_type_info(t);
        KernActFormat f = kern_act_format(t);
        uint64_t stride = kern_act_bytes(f, N);
        KernDotFn dot = ks->dot[t] ? ks->dot[t] : kern_ref()->dot[t];
        const char *own = ks->dot[t] ? "" : " (reference entry)";

        /* exact blocks */
        if (!is_float_type(t)) {
            int equal = 1;
            double worst = 0;
            for (int trial = 0; trial < 40; trial++) {
                uint16_t pw = quant_f32_to_f16(ldexpf(1.0f, (int)(rnd() % 4) - 2));
                float da = ldexpf(1.0f, (int)(rnd() % 3) - 1);
                random_row(t, row, N, 1, pw);
                random_act(f, acts[0], N, da);
                float want = ref_dot(t, acts[0]), got;
                dot(N, row, acts[0], stride, 1, &got, 1);
                if (got != want) equal = 0, worst = fmax(worst, fabs((double)got - want));
            }
            CHECK(equal, "%s: %s equals the reference exactly on power-of-two-scaled blocks%s (worst %.3g)", ks->name,
                  ti->name, own, worst);
        }

        /* random blocks, bound; multi-token determinism; reference vs double */
        int close = 1, multi = 1, ref_ok = 1;
        double worst = 0;
        for (int trial = 0; trial < 30; trial++) {
            random_row(t, row, N, 0, 0);
            for (int a = 0; a < NT; a++) {
                if (f == KERN_ACT_F32) {
                    random_act(f, acts[a], N, 0);
                } else {
                    float x[N];
                    for (int i = 0; i < N; i++) x[i] = rndf();
                    kern_ref()->quantize_q8_0(x, (KernQ8_0 *)acts[a], f == KERN_ACT_Q8_0 ? N : 0);
                    kern_ref()->quantize_q8_k(x, (KernQ8_K *)acts[a], f == KERN_ACT_Q8_K ? N : 0);
                }
            }
            float single[NT];
            for (int a = 0; a < NT; a++) {
                dot(N, row, acts[a], stride, 1, &single[a], 1);
                float want = ref_dot(t, acts[a]);
                double exact;
                double mag = abs_terms(t, acts[a], &exact);
                double err = fabs((double)single[a] - want) / (mag + 1e-30);
                if (err > 1e-5) close = 0;
                if (err > worst) worst = err;
                if (fabs((double)want - exact) > 1e-5 * mag + 1e-30) ref_ok = 0;
            }
            for (int nt = 1; nt <= NT; nt++)
                for (int first = 0; first + nt <= NT; first++) {
                    float out[2 * NT];
                    dot(N, row, acts[first], sizeof acts[0], nt, out, 2);
                    for (int a = 0; a < nt; a++)
                        if (memcmp(&out[2 * a], &single[first + a], sizeof(float)) != 0) multi = 0;
                }
        }
        CHECK(close, "%s: %s within 1e-5 of sum|terms| of the reference on random blocks%s (worst %.3g)", ks->name,
              ti->name, own, worst);
        CHECK(multi, "%s: %s multi-token calls give each token's single-call result bit for bit", ks->name, ti->name);
        if (ks == kern_ref())
            CHECK(ref_ok, "reference %s dot equals dequantize(w) . dequantize(act) in double within 1e-5 sum|terms|",
                  ti->name);
    }

    /* KV cache */
    {
        uint16_t k16[300];
        float kf[300], q[300], o1[300], o2[300];
        int ok_dot = 1, ok_axpy = 1;
        for (int trial = 0; trial < 50; trial++) {
            uint32_t n = 1 + rnd() % 300;
            for (uint32_t i = 0; i < n; i++) {
                kf[i] = rndf();
                k16[i] = quant_f32_to_f16(kf[i]);
                q[i] = rndf();
                o1[i] = o2[i] = rndf();
            }
            double mag16 = 0, mag32 = 0;
            for (uint32_t i = 0; i < n; i++)
                mag16 += fabs((double)q[i] * quant_f16_to_f32(k16[i])), mag32 += fabs((double)q[i] * kf[i]);
            if (fabs((double)ks->dot_f16(k16, q, n) - kern_ref()->dot_f16(k16, q, n)) > 1e-5 * mag16) ok_dot = 0;
            if (fabs((double)ks->dot_f32(kf, q, n) - kern_ref()->dot_f32(kf, q, n)) > 1e-5 * mag32) ok_dot = 0;
            float a = rndf();
            ks->axpy_f16(o1, a, k16, n);
            kern_ref()->axpy_f16(o2, a, k16, n);
            ks->axpy_f32(o1, a, kf, n);
            kern_ref()->axpy_f32(o2, a, kf, n);
            for (uint32_t i = 0; i < n; i++)
                if (fabsf(o1[i] - o2[i]) > 1e-6f * (fabsf(o2[i]) + 2.0f)) ok_axpy = 0;
        }
        CHECK(ok_dot, "%s: KV dot (F16, F32) within 1e-5 of sum|terms| of the reference", ks->name);
        CHECK(ok_axpy, "%s: KV axpy (F16, F32) within 1e-6 relative of the reference", ks->name);
        /* F16 stores: random floats of every magnitude (subnormal halves,
         * overflow), ties, infinities and NaNs, as quant_f32_to_f16 */
        static float xs[1000];
        static uint16_t h[1000];
        for (int i = 0; i < 1000; i++) xs[i] = ldexpf(rndf(), (int)(rnd() % 60) - 30);
        const float special[] = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, -NAN, 65504.0f, 65520.0f, 65519.0f,
                                 5.9604645e-8f, 2.9802322e-8f, 1.0009766f, 1.0004883f, 1.0014648f};
        memcpy(xs, special, sizeof special);
        if (ks->to_f16) { /* NULL: this set takes the reference's */
            ks->to_f16(h, xs, 1000);
            int ok_f16 = 1;
            for (int i = 0; i < 1000; i++)
                if (h[i] != quant_f32_to_f16(xs[i])) ok_f16 = 0;
            CHECK(ok_f16, "%s: F16 stores equal quant_f32_to_f16 bit for bit (specials, ties, all magnitudes)", ks->name);
        }
    }

    /* Attention over many positions: dots_f16 and wsum_f16 give the bits of
     * dot_f16 and axpy_f16 row after row, for 1 to 9 tokens of 1 to 4 query
     * heads, each token over its own number of rows (a prompt's: one more
     * each; random ones too); exp_sum within 1e-6 relative of the
     * reference, element by element and in its sum */
    {
        enum { AN = 136, AR = 37, AT = 9, AQ = 4, QS = 150, QTS = 4 * QS + 7, OTS = 4 * AN + 3 };
        static uint16_t kv[AR * AN];
        static float q[AT * QTS], w[AT * AQ * AR], got[AT * AQ * AR], o1[AT * OTS], o2[AT * OTS];
        int same_dot = 1, same_wsum = 1;
        for (int i = 0; i < AR * AN; i++) kv[i] = quant_f32_to_f16(rndf());
        for (int i = 0; i < AT * QTS; i++) q[i] = rndf();
        for (int r = 0; r < AT * AQ * AR; r++) w[r] = rndf();
        for (uint32_t n = 1; n <= AN; n += n < 12 ? 1 : 31) /* 1..12 (tails of 8 and of 4), 43, 74, 105, 136 */
            for (uint32_t nq = 1; nq <= AQ; nq++)
                for (uint32_t nt = 1; nt <= AT; nt++) {
                    uint32_t rows[AT];
                    for (uint32_t t = 0; t < nt; t++) /* nt % 3: prompt tokens; else random counts */
                        rows[t] = nt % 3 == 0 ? AR - nt + 1 + t : 1 + (uint32_t)(rnd() % AR);
                    if (ks->dots_f16) {
                        memset(got, 0, sizeof got);
                        ks->dots_f16(kv, AN, n, q, QS, nq, QTS, nt, rows, got, AR);
                        for (uint32_t u = 0; u < nq * nt; u++)
                            for (uint32_t r = 0; r < AR; r++) {
                                float want = r < rows[u / nq] ? ks->dot_f16(kv + r * AN, q + u / nq * QTS + u % nq * QS, n)
                                                              : 0.0f;
                                if (memcmp(&got[u * AR + r], &want, sizeof(float))) same_dot = 0;
                            }
                    }
                    if (ks->wsum_f16) {
                        for (uint32_t i = 0; i < AT * OTS; i++) o1[i] = o2[i] = rndf();
                        ks->wsum_f16(o1, AN, OTS, w, AR, nq, nt, rows, kv, AN, n);
                        for (uint32_t u = 0; u < nq * nt; u++)
                            for (uint32_t r = 0; r < rows[u / nq]; r++)
                                ks->axpy_f16(o2 + u / nq * OTS + u % nq * AN, w[u * AR + r], kv + r * AN, n);
                        if (memcmp(o1, o2, sizeof o1) != 0) same_wsum = 0;
                    }
                }
        if (ks->dots_f16) CHECK(same_dot, "%s: dots_f16 equals dot_f16 row by row, bit for bit", ks->name);
        if (ks->wsum_f16) CHECK(same_wsum, "%s: wsum_f16 equals axpy_f16 row after row, bit for bit", ks->name);

        if (ks->scale_max) { /* the loop's bits, its maximum's value: NaNs, zeros, -inf too */
            static float e1[1001], e2[1001];
            int same = 1;
            for (uint32_t n = 1; n <= 1001; n += n < 40 ? 1 : 320)
                for (int kind = 0; kind < 5; kind++) {
                    for (uint32_t i = 0; i < n; i++)
                        e1[i] = kind == 2 ? (rnd() % 2 ? 0.0f : -0.0f) : rndf() * 30.0f;
                    if (kind == 1) e1[rnd() % n] = NAN;
                    if (kind == 3) e1[rnd() % n] = -INFINITY;
                    float m0 = kind == 4 ? 2.0f : -INFINITY, mx = m0; /* kind 4: a running maximum above some */
                    memcpy(e2, e1, n * sizeof(float));
                    float top = ks->scale_max(e1, n, 0.125f, m0);
                    for (uint32_t i = 0; i < n; i++) {
                        e2[i] *= 0.125f;
                        if (e2[i] > mx) mx = e2[i];
                    }
                    if (memcmp(e1, e2, n * sizeof(float)) || top != mx) same = 0;
                }
            CHECK(same, "%s: scale_max equals the scaling and compare loop (NaNs, zeros, -inf)", ks->name);
        }
        if (ks->exp_sum) {
            static float e1[1001], e2[1001];
            for (int i = 0; i < 1001; i++) e1[i] = e2[i] = rndf() * 30.0f;
            e1[7] = e2[7] = -200.0f;
            double s1 = ks->exp_sum(e1, 1001, 30.0f), s2 = kern_ref()->exp_sum(e2, 1001, 30.0f);
            int close = fabs(s1 - s2) <= 1e-6 * s2;
            for (int i = 0; i < 1001; i++)
                if (fabsf(e1[i] - e2[i]) > 1e-6f * e2[i] + 1e-37f) close = 0;
            CHECK(close, "%s: softmax exponentials and their sum within 1e-6 relative of the reference (expf)", ks->name);
            /* a NaN score (NaN weights) must reach the sum, where the logits report it */
            for (int n = 3; n <= 17; n += 14) { /* in the tail, and in a full vector */
                for (int i = 0; i < n; i++) e1[i] = rndf();
                e1[1] = NAN;
                CHECK(isnan(ks->exp_sum(e1, (uint32_t)n, 1.0f)) && isnan(e1[1]), "%s: a NaN score stays NaN (%d scores)",
                      ks->name, n);
            }
        }
    }

    /* SiLU gate: within 1e-6 relative of the reference (libm expf) on
     * gates of every size, and the same bits however the elements are
     * split between calls (threads split them anywhere) */
    if (ks->silu_mul) {
        enum { SN = 1003 };
        static float g0[SN], u[SN], want[SN], all[SN], parts[SN];
        for (int i = 0; i < SN; i++) {
            g0[i] = rndf() * (i % 7 == 0 ? 100.0f : i % 3 == 0 ? 10.0f : 3.0f);
            u[i] = rndf() * 2.0f;
        }
        g0[0] = 0.0f, g0[1] = -0.0f, g0[2] = 88.5f, g0[3] = -88.5f, g0[4] = 200.0f, g0[5] = -200.0f;
        memcpy(want, g0, sizeof g0);
        kern_ref()->silu_mul(want, u, SN);
        memcpy(all, g0, sizeof g0);
        ks->silu_mul(all, u, SN);
        memcpy(parts, g0, sizeof g0);
        for (int i0 = 0, step = 1; i0 < SN; i0 += step, step = step % 13 + 2)
            ks->silu_mul(parts + i0, u + i0, (uint64_t)(i0 + step < SN ? step : SN - i0));
        int close = 1;
        for (int i = 0; i < SN; i++)
            if (fabsf(all[i] - want[i]) > 1e-6f * fabsf(want[i]) + 1e-30f) close = 0;
        CHECK(close, "%s: SiLU gate within 1e-6 relative of the reference (expf)", ks->name);
        CHECK(memcmp(all, parts, sizeof all) == 0, "%s: SiLU gate gives the same bits however the elements are split",
              ks->name);
    }

    /* RMSNorm: the reference's bits in every set (kernels.h), lengths with
     * every tail, in place too, values from tiny to large */
    if (ks->rmsnorm) {
        enum { RN = 1030 };
        static float x[RN], w[RN], want[RN], got[RN];
        int same = 1;
        for (int n = 1; n <= RN; n += n < 40 ? 1 : 97) {
            for (int i = 0; i < n; i++) {
                x[i] = rndf() * (i % 11 == 0 ? 1e4f : i % 5 == 0 ? 1e-3f : 2.0f);
                w[i] = rndf() * 3.0f;
            }
            kern_ref()->rmsnorm(want, x, w, (uint64_t)n, 1e-6f);
            ks->rmsnorm(got, x, w, (uint64_t)n, 1e-6f);
            same &= memcmp(want, got, sizeof(float) * (size_t)n) == 0;
            ks->rmsnorm(x, x, w, (uint64_t)n, 1e-6f);
            same &= memcmp(want, x, sizeof(float) * (size_t)n) == 0;
        }
        CHECK(same, "%s: RMSNorm gives the reference's bits (1 to %d elements, in place too)", ks->name, RN);
    }

    /* RoPE: the bits of the definition (kernels.h) in every set, both
     * pairings, halves of 1 to 40 (every tail), tiny values (subnormal
     * products), the elements past n_rot untouched */
    if (ks->rope) { /* NULL: this set takes the reference's */
        enum { RH = 40 };
        static float v[2 * RH + 4], want[2 * RH + 4], cs[2 * RH];
        int same = 1;
        for (uint32_t n_rot = 2; n_rot <= 2 * RH; n_rot += 2)
            for (int neox = 0; neox <= 1; neox++) {
                uint32_t half = n_rot / 2;
                for (uint32_t i = 0; i < n_rot + 4; i++) v[i] = want[i] = rndf() * (i % 13 == 5 ? 1e-37f : 3.0f);
                for (uint32_t i = 0; i < half; i++) {
                    float th = rndf() * 10.0f;
                    cs[2 * i] = cosf(th), cs[2 * i + 1] = i % 7 == 3 ? 0.0f : sinf(th);
                }
                for (uint32_t i = 0; i < half; i++) {
                    uint32_t a = neox ? i : 2 * i, b = neox ? i + half : 2 * i + 1;
                    float x0 = want[a], x1 = want[b], c = cs[2 * i], sn = cs[2 * i + 1];
                    want[a] = x0 * c - x1 * sn;
                    want[b] = x0 * sn + x1 * c;
                }
                ks->rope(v, n_rot, cs, neox);
                same &= memcmp(v, want, sizeof(float) * (n_rot + 4)) == 0;
            }
        CHECK(same, "%s: RoPE gives the bits of its definition (both pairings, 1 to %d pairs, tiny values)", ks->name,
              (int)RH);
    }

    test_gelu(ks);
    test_delta_step(ks);
    test_delta_chunk(ks);
    if (ks != kern_ref() && ks->causal_conv) test_causal_conv(ks);

    /* KV cache in Q8_0 blocks: rows of random floats quantized as
     * cache_store does, with scales from tiny to large. dot: within 1e-5
     * of sum|d * c[j] * q[j]| (a block's 32 float additions plus one per
     * block, 6e-8 each, in another order; margin >= 4). axpy: the fast paths
     * fuse (a*d)*c + out into one rounding where the reference rounds twice,
     * so 1e-6 relative as for F16/F32. The reference itself is checked
     * against the dequantized row in double. */
    {
        enum { KN = 512 };
        static float kf[KN], q[KN], kd[KN], o1[KN], o2[KN];
        static uint8_t k8[KN / QK8_0 * sizeof(BlockQ8_0)];
        int ok_dot = 1, ok_axpy = 1, ref_ok = 1;
        double worst = 0;
        for (int trial = 0; trial < 60; trial++) {
            uint32_t n = QK8_0 * (1 + rnd() % (KN / QK8_0));
            float scale = ldexpf(1.0f, (int)(rnd() % 24) - 12);
            for (uint32_t i = 0; i < n; i++) {
                kf[i] = rndf() * scale;
                q[i] = rndf();
                o1[i] = o2[i] = rndf();
            }
            if (trial % 5 == 1) kf[rnd() % n] = 0.0f, kf[0] = 8.0f * scale; /* a zero and an outlier */
            quant_quantize_row(GGML_TYPE_Q8_0, kf, k8, n);
            quant_dequant_row(GGML_TYPE_Q8_0, k8, kd, n);
            double mag = 0, exact = 0;
            for (uint32_t i = 0; i < n; i++) mag += fabs((double)q[i] * kd[i]), exact += (double)q[i] * kd[i];
            float want = kern_ref()->dot_q8_0_f32(k8, q, n), got = ks->dot_q8_0_f32(k8, q, n);
            double err = fabs((double)got - want) / (mag + 1e-30);
            if (err > 1e-5) ok_dot = 0;
            if (err > worst) worst = err;
            if (fabs((double)want - exact) > 1e-5 * mag) ref_ok = 0;
            float a = rndf() / scale;
            ks->axpy_q8_0(o1, a, k8, n);
            kern_ref()->axpy_q8_0(o2, a, k8, n);
            for (uint32_t i = 0; i < n; i++)
                if (fabsf(o1[i] - o2[i]) > 1e-6f * (fabsf(o2[i]) + 2.0f)) ok_axpy = 0;
        }
        CHECK(ok_dot, "%s: KV dot Q8_0 x F32 within 1e-5 of sum|terms| of the reference (worst %.3g)", ks->name,
              worst);
        CHECK(ok_axpy, "%s: KV axpy Q8_0 within 1e-6 relative of the reference", ks->name);
        if (ks == kern_ref())
            CHECK(ref_ok, "reference KV dot Q8_0 equals dequantize(k) . q in double within 1e-5 sum|terms|");
    }
}

/* The kernels' type table (kern_type_ops): every type pith computes with
 * is a valid type with a complete row, its block's bytes those of its
 * struct (GGML_BLOCK_BYTES; plain floats: one element), and is tested here
 * (in TYPES); the others have no row. */
static void test_type_rows(void)
{
    int complete = 1;
    for (uint32_t t = 0; t <= GGML_TYPE_COUNT; t++) {
        const GgmlTypeInfo *ti = ggml_type_info(t);
        const KernTypeOps *ops = kern_type_ops(t);
        int listed = 0;
        for (int k = 0; k < N_TYPES; k++) listed |= TYPES[k] == t;
        KernActFormat f = kern_act_format(t);
        if (ops)
            complete &= ti && listed && quant_supported(t) && ops->decode && ops->ref_dot &&
                        kern_ref()->dot[t] == ops->ref_dot && f == ops->act_format &&
                        QUANT_MAX_BLOCK % ti->block_elems == 0 && ti->block_elems % kern_act_block(f) == 0 &&
                        (ti->block_elems == 1 || ti->block_bytes == GGML_BLOCK_BYTES(t));
        else
            complete &= !listed && !quant_supported(t) && f == KERN_ACT_F32 &&
                        (t >= GGML_TYPE_COUNT || !kern_ref()->dot[t]);
    }
    CHECK(complete, "every type pith computes with has a complete row and is in TYPES; the others have none");
}

/* kern_matmul: every row/token combination, tiles and token groups. */
static void test_matmul(void)
{
    enum { R = 37, T = 11, C = 256 };
    static uint8_t w[R * sizeof(BlockQ6_K) * (C / QK_K)];
    static KernQ8_K act[T];
    static float out[T * R], want[T * R];
    uint32_t t = GGML_TYPE_Q6_K;
    uint64_t rb = ggml_row_bytes(t, C);
    for (int r = 0; r < R; r++) {
        random_row(t, w + r * rb, C, 0, 0);
    }
    for (int k = 0; k < T; k++) random_act(KERN_ACT_Q8_K, &act[k], C, 0.01f);
    for (int k = 0; k < T; k++)
        for (int r = 0; r < R; r++) want[k * R + r] = kern_vec_dot(t, C, w + r * rb, &act[k]);
    memset(out, 0, sizeof out);
    kern_matmul(t, w, rb, C, 0, 20, act, sizeof act[0], T, out, R);
    kern_matmul(t, w, rb, C, 20, R, act, sizeof act[0], T, out, R);
    CHECK(memcmp(out, want, sizeof out) == 0, "%s: kern_matmul in two row ranges, 11 tokens = vec_dot per row and token",
          kern_active()->name);
}

/* Logits of one case through the whole forward pass with the active
 * kernels (F32 KV cache, steps of 32, as the reference); NULL on failure. */
static float *case_logits(const FixCase *c)
{
    ModelOptions opt = {.n_ctx = (uint32_t)c->n_prompt, .kv_type = KV_F32, .batch = 32, .all_logits = 1};
    TestModel *L = test_model_load(fix_model_path(c->model), 1, &opt);
    float *out = L ? test_model_logits(L, c->prompt, c->n_prompt, 32) : NULL;
    test_model_free(L);
    return out;
}

static void test_fixtures(void)
{
    FixCase *cases;
    int n = fix_load_cases(&cases);
    CHECK(n > 0, "fixture cases read (%d)", n);
    if (n <= 0) return;
    port_set_threads(1);
    for (int i = 0; i < n; i++) {
        const FixCase *c = &cases[i];
        int first = strcmp(c->kind, "logits") == 0;
        for (int j = 0; j < i && first; j++)
            if (strcmp(cases[j].model, c->model) == 0 && strcmp(cases[j].kind, "logits") == 0) first = 0;
        if (!first) continue;
        float *ref = fix_read_logits(c);
        /* the reference, the best set, and the best without AVX-512 where that differs */
        for (int path = 0; path < 3; path++) {
            kern_select(path == 0 ? KERN_REFERENCE : path == 1 ? KERN_BEST : KERN_NO_AVX512);
            if (path == 2 && !kern_x86_rows((KernRowsFn[GGML_TYPE_COUNT]){0}, (KernPackedFn[GGML_TYPE_COUNT]){0}, 1)) continue; /* no AVX-512 here */
            float *ours = ref ? case_logits(c) : NULL;
            FixCompare cmp;
            memset(&cmp, 0, sizeof cmp);
            if (ours) fix_compare(ref, ours, c->n_pos, c->n_vocab, &cmp);
            CHECK(ours && fix_within(c->tol, &cmp), "%s with %s kernels: class %s (max rel %.3g, mean KL %.3g, max KL %.3g)",
                  c->id, kern_active()->name, c->tol, cmp.max_rel, cmp.mean_kl, cmp.max_kl);
            free(ours);
        }
        free(ref);
    }
    kern_select(KERN_BEST);
    fix_free_cases(cases, n);
}

int main(void)
{
    kern_select(KERN_REFERENCE);
    CHECK(strcmp(kern_active()->name, kern_ref()->name) == 0, "kern_select(KERN_REFERENCE) forces the reference");
    test_type_rows();
    test_set(kern_ref());
    test_matmul();
    const KernelSet *sets[] = {kern_x86(), kern_arm()};
    int n_fast = 0;
    for (int i = 0; i < 2; i++) {
        if (!sets[i]) continue;
        n_fast++;
        test_set(sets[i]);
    }
    kern_select(KERN_BEST);
    printf("# active kernels: %s (%d fast set%s available on this CPU)\n", kern_active()->name, n_fast,
           n_fast == 1 ? "" : "s");
    test_matmul();
    test_fixtures();
    CHECK_DONE();
}
