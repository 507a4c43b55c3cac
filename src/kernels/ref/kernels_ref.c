/* kernels_ref.c - the reference kernels: plain C, every weight type.
 *
 * Each dot product works block by block: an exact integer sum of weight
 * code times activation code per (sub-)block, then one float step per
 * block, sumf += (d_w * d_a) * isum [- (dmin_w * d_a) * isum_min]. The fast
 * paths compute the same integer sums (tests compare them exactly) and may
 * add the float steps in another order. Block layouts: see quant.c. */
#include <math.h>
#include <string.h>

#include "../kernels.h"
#include "../quant.h"
#include "kernels_ref.h"

static uint16_t le16(const uint8_t *p)
{
    return (uint16_t)(p[0] | (p[1] << 8));
}

static uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}

static float f16(const uint8_t *p)
{
    return quant_f16_to_f32(le16(p));
}

/* ---- activation quantization --------------------------------------------- */

/* Nearest integer, ties to even (what the SIMD conversions do by default). */
static int nearest(float v)
{
    return (int)lrintf(v);
}

void kern_ref_quantize_q8_0(const float *x, KernQ8_0 *out, uint64_t n)
{
    for (uint64_t b = 0; b < n / QK8_0; b++, x += QK8_0) {
        float amax = 0.0f;
        for (int j = 0; j < QK8_0; j++) amax = fmaxf(amax, fabsf(x[j]));
        float d = amax / 127.0f, id = amax > 0.0f ? 127.0f / amax : 0.0f;
        int sum = 0;
        for (int j = 0; j < QK8_0; j++) {
            int q = nearest(x[j] * id);
            out[b].q[j] = (int8_t)q;
            sum += q;
        }
        out[b].d = d;
        out[b].sum = sum;
    }
}

void kern_ref_quantize_q8_k(const float *x, KernQ8_K *out, uint64_t n)
{
    for (uint64_t b = 0; b < n / QK_K; b++, x += QK_K) {
        float amax = 0.0f;
        for (int j = 0; j < QK_K; j++) amax = fmaxf(amax, fabsf(x[j]));
        float d = amax / 127.0f, id = amax > 0.0f ? 127.0f / amax : 0.0f;
        for (int g = 0; g < QK_K / 16; g++) {
            int sum = 0;
            for (int j = 16 * g; j < 16 * g + 16; j++) {
                int q = nearest(x[j] * id);
                out[b].q[j] = (int8_t)q;
                sum += q;
            }
            out[b].bsum[g] = (int16_t)sum;
        }
        out[b].d = d;
    }
}

/* ---- types with blocks of 32 against KernQ8_0 ------------------------------ */

static float dot_q8_0(uint64_t n, const uint8_t *row, const void *act)
{
    const KernQ8_0 *a = act;
    float s = 0.0f;
    for (uint64_t b = 0; b < n / QK8_0; b++, row += sizeof(BlockQ8_0)) {
        int isum = 0;
        for (int j = 0; j < QK8_0; j++) isum += (int8_t)row[Q8_CODES + j] * a[b].q[j];
        s += f16(row) * a[b].d * (float)isum;
    }
    return s;
}

static float dot_q4_0(uint64_t n, const uint8_t *row, const void *act)
{
    const KernQ8_0 *a = act;
    float s = 0.0f;
    for (uint64_t b = 0; b < n / QK4_0; b++, row += sizeof(BlockQ4_0)) {
        const uint8_t *q = row + offsetof(BlockQ4_0, qs);
        int isum = 0;
        for (int j = 0; j < QK4_0 / 2; j++)
            isum += ((q[j] & 15) - 8) * a[b].q[j] + ((q[j] >> 4) - 8) * a[b].q[j + QK4_0 / 2];
        s += f16(row) * a[b].d * (float)isum;
    }
    return s;
}

static float dot_q4_1(uint64_t n, const uint8_t *row, const void *act)
{
    const KernQ8_0 *a = act;
    float s = 0.0f;
    for (uint64_t b = 0; b < n / QK4_1; b++, row += sizeof(BlockQ4_1)) {
        const uint8_t *q = row + offsetof(BlockQ4_1, qs);
        int isum = 0;
        for (int j = 0; j < QK4_1 / 2; j++) isum += (q[j] & 15) * a[b].q[j] + (q[j] >> 4) * a[b].q[j + QK4_1 / 2];
        s += f16(row) * a[b].d * (float)isum + f16(row + offsetof(BlockQ4_1, m)) * a[b].d * (float)a[b].sum;
    }
    return s;
}

/* Q5_0 (with_min 0: codes minus 16) and Q5_1 (with_min 1: plus m). */
static float dot_q5(uint64_t n, const uint8_t *row, const void *act, int with_min)
{
    const KernQ8_0 *a = act;
    uint64_t bytes = with_min ? sizeof(BlockQ5_1) : sizeof(BlockQ5_0);
    float s = 0.0f;
    for (uint64_t b = 0; b < n / QK5_0; b++, row += bytes) {
        const uint8_t *p = row + (with_min ? offsetof(BlockQ5_1, qh) : offsetof(BlockQ5_0, qh));
        uint32_t qh = le32(p);
        const uint8_t *q = p + 4;
        int off = with_min ? 0 : 16, isum = 0;
        for (int j = 0; j < QK5_0 / 2; j++) {
            int lo = (q[j] & 15) | (int)(((qh >> j) & 1) << 4);
            int hi = (q[j] >> 4) | (int)(((qh >> (j + QK5_0 / 2)) & 1) << 4);
            isum += (lo - off) * a[b].q[j] + (hi - off) * a[b].q[j + QK5_0 / 2];
        }
        s += f16(row) * a[b].d * (float)isum;
        if (with_min) s += f16(row + offsetof(BlockQ5_1, m)) * a[b].d * (float)a[b].sum;
    }
    return s;
}

static float dot_q5_0(uint64_t n, const uint8_t *row, const void *act)
{
    return dot_q5(n, row, act, 0);
}

static float dot_q5_1(uint64_t n, const uint8_t *row, const void *act)
{
    return dot_q5(n, row, act, 1);
}

static float dot_iq4_nl(uint64_t n, const uint8_t *row, const void *act)
{
    const KernQ8_0 *a = act;
    float s = 0.0f;
    for (uint64_t b = 0; b < n / QK4_NL; b++, row += sizeof(BlockIQ4_NL)) {
        const uint8_t *q = row + offsetof(BlockIQ4_NL, qs);
        int isum = 0;
        for (int j = 0; j < QK4_NL / 2; j++)
            isum += quant_iq4nl_values[q[j] & 15] * a[b].q[j] + quant_iq4nl_values[q[j] >> 4] * a[b].q[j + QK4_NL / 2];
        s += f16(row) * a[b].d * (float)isum;
    }
    return s;
}

/* ---- K-quants against KernQ8_K ------------------------------------------- */

static float dot_q2_k(uint64_t n, const uint8_t *row, const void *act)
{
    const KernQ8_K *a = act;
    float s = 0.0f;
    for (uint64_t b = 0; b < n / QK_K; b++, row += sizeof(BlockQ2_K)) {
        const uint8_t *sc = row + offsetof(BlockQ2_K, scales), *q = row + offsetof(BlockQ2_K, qs);
        int isum = 0, imin = 0;
        for (int i = 0; i < 16; i++) {
            int sub = 0;
            for (int e = 16 * i; e < 16 * i + 16; e++)
                sub += ((q[32 * (e / 128) + e % 32] >> (2 * ((e % 128) / 32))) & 3) * a[b].q[e];
            isum += (sc[i] & 15) * sub;
            imin += (sc[i] >> 4) * a[b].bsum[i];
        }
        s += f16(row + offsetof(BlockQ2_K, d)) * a[b].d * (float)isum -
             f16(row + offsetof(BlockQ2_K, dmin)) * a[b].d * (float)imin;
    }
    return s;
}

static float dot_q3_k(uint64_t n, const uint8_t *row, const void *act)
{
    const KernQ8_K *a = act;
    float s = 0.0f;
    for (uint64_t b = 0; b < n / QK_K; b++, row += sizeof(BlockQ3_K)) {
        const uint8_t *hm = row + offsetof(BlockQ3_K, hmask), *q = row + offsetof(BlockQ3_K, qs);
        int isum = 0;
        for (int i = 0; i < 16; i++) {
            int sub = 0;
            for (int e = 16 * i; e < 16 * i + 16; e++) {
                int q3 = ((q[32 * (e / 128) + e % 32] >> (2 * ((e % 128) / 32))) & 3) - ((hm[e % 32] >> (e / 32)) & 1 ? 0 : 4);
                sub += q3 * a[b].q[e];
            }
            isum += quant_q3k_scale(row + offsetof(BlockQ3_K, scales), i) * sub;
        }
        s += f16(row + offsetof(BlockQ3_K, d)) * a[b].d * (float)isum;
    }
    return s;
}

/* Q4_K and Q5_K (qh != NULL adds the fifth bit). */
static float dot_q45_k(uint64_t n, const uint8_t *row, const void *act, int five)
{
    const KernQ8_K *a = act;
    uint64_t bytes = five ? sizeof(BlockQ5_K) : sizeof(BlockQ4_K);
    float s = 0.0f;
    for (uint64_t b = 0; b < n / QK_K; b++, row += bytes) {
        const uint8_t *qh = row + offsetof(BlockQ5_K, qh), *q = row + (five ? offsetof(BlockQ5_K, qs) : offsetof(BlockQ4_K, qs));
        int isum = 0, imin = 0;
        for (int j = 0; j < 8; j++) {
            int sc, m, sub = 0;
            quant_q4k_scale_min(j, row + offsetof(BlockQ4_K, scales), &sc, &m);
            for (int l = 0; l < 32; l++) {
                uint8_t byte = q[32 * (j / 2) + l];
                int v = j % 2 == 0 ? (byte & 15) : (byte >> 4);
                if (five) v |= ((qh[l] >> j) & 1) << 4;
                sub += v * a[b].q[32 * j + l];
            }
            isum += sc * sub;
            imin += m * (a[b].bsum[2 * j] + a[b].bsum[2 * j + 1]);
        }
        s += f16(row) * a[b].d * (float)isum - f16(row + offsetof(BlockQ4_K, dmin)) * a[b].d * (float)imin;
    }
    return s;
}

static float dot_q4_k(uint64_t n, const uint8_t *row, const void *act)
{
    return dot_q45_k(n, row, act, 0);
}

static float dot_q5_k(uint64_t n, const uint8_t *row, const void *act)
{
    return dot_q45_k(n, row, act, 1);
}

static float dot_q6_k(uint64_t n, const uint8_t *row, const void *act)
{
    const KernQ8_K *a = act;
    float s = 0.0f;
    for (uint64_t b = 0; b < n / QK_K; b++, row += sizeof(BlockQ6_K)) {
        const int8_t *sc = (const int8_t *)(row + offsetof(BlockQ6_K, scales));
        int isum = 0;
        for (int i = 0; i < 16; i++) {
            int sub = 0;
            for (int e = 16 * i; e < 16 * i + 16; e++) {
                int half = e / 128, r = e % 128, quarter = r / 32, l = r % 32;
                uint8_t ql = row[Q6_QL + 64 * half + l + 32 * (quarter & 1)];
                int lo = quarter < 2 ? (ql & 15) : (ql >> 4);
                int hi = (row[Q6_QH + 32 * half + l] >> (2 * quarter)) & 3;
                sub += ((lo | (hi << 4)) - 32) * a[b].q[e];
            }
            isum += sc[i] * sub;
        }
        s += f16(row + offsetof(BlockQ6_K, d)) * a[b].d * (float)isum;
    }
    return s;
}

static float dot_iq4_xs(uint64_t n, const uint8_t *row, const void *act)
{
    const KernQ8_K *a = act;
    float s = 0.0f;
    for (uint64_t b = 0; b < n / QK_K; b++, row += sizeof(BlockIQ4_XS)) {
        uint16_t sh = le16(row + offsetof(BlockIQ4_XS, scales_h));
        const uint8_t *sl = row + offsetof(BlockIQ4_XS, scales_l), *q = row + offsetof(BlockIQ4_XS, qs);
        int isum = 0;
        for (int j = 0; j < 8; j++) {
            int ls = ((sl[j / 2] >> (4 * (j % 2))) & 15) | (((sh >> (2 * j)) & 3) << 4);
            int sub = 0;
            for (int l = 0; l < 16; l++)
                sub += quant_iq4nl_values[q[16 * j + l] & 15] * a[b].q[32 * j + l] +
                       quant_iq4nl_values[q[16 * j + l] >> 4] * a[b].q[32 * j + l + 16];
            isum += (ls - 32) * sub;
        }
        s += f16(row) * a[b].d * (float)isum;
    }
    return s;
}

/* ---- float weights against float activations ------------------------------- */

static float dot_f32w(uint64_t n, const uint8_t *row, const void *act)
{
    const float *x = act;
    float s = 0.0f;
    for (uint64_t i = 0; i < n; i++) {
        float w;
        memcpy(&w, row + 4 * i, 4); /* rows may be unaligned in a mapped file */
        s += w * x[i];
    }
    return s;
}

static float dot_f16w(uint64_t n, const uint8_t *row, const void *act)
{
    const float *x = act;
    float s = 0.0f;
    for (uint64_t i = 0; i < n; i++) s += quant_f16_to_f32(le16(row + 2 * i)) * x[i];
    return s;
}

static float dot_bf16w(uint64_t n, const uint8_t *row, const void *act)
{
    const float *x = act;
    float s = 0.0f;
    for (uint64_t i = 0; i < n; i++) s += quant_bf16_to_f32(le16(row + 2 * i)) * x[i];
    return s;
}

/* ---- multi-token wrappers: token by token, so trivially independent -------- */

#define MULTI(name)                                                                                              \
    void kern_ref_dot_##name(uint64_t n, const uint8_t *row, const void *act, uint64_t act_stride, int nt,      \
                             float *out, uint64_t out_stride)                                                   \
    {                                                                                                            \
        for (int t = 0; t < nt; t++)                                                                             \
            out[(uint64_t)t * out_stride] = dot_##name(n, row, (const uint8_t *)act + (uint64_t)t * act_stride); \
    }
MULTI(q8_0)
MULTI(q4_0)
MULTI(q4_1)
MULTI(q5_0)
MULTI(q5_1)
MULTI(iq4_nl)
MULTI(q2_k)
MULTI(q3_k)
MULTI(q4_k)
MULTI(q5_k)
MULTI(q6_k)
MULTI(iq4_xs)
MULTI(f32w)
MULTI(f16w)
MULTI(bf16w)
#undef MULTI

/* ---- the KV cache ---------------------------------------------------------- */

static float ref_dot_f16(const uint16_t *k, const float *q, uint32_t n)
{
    float s = 0.0f;
    for (uint32_t i = 0; i < n; i++) s += q[i] * quant_f16_to_f32(k[i]);
    return s;
}

static void ref_axpy_f16(float *out, float a, const uint16_t *v, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) out[i] += a * quant_f16_to_f32(v[i]);
}

static void ref_to_f16(uint16_t *out, const float *x, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) out[i] = quant_f32_to_f16(x[i]);
}

static void ref_silu_mul(float *g, const float *u, uint64_t n)
{
    for (uint64_t i = 0; i < n; i++) g[i] = g[i] / (1.0f + expf(-g[i])) * u[i];
}

static void ref_rmsnorm(float *out, const float *x, const float *w, uint64_t n, float eps)
{
    /* four running sums: one would wait on each addition (4 cycles); named,
     * not an array, so they stay in registers (armv7 kept the array in
     * memory: 16 instructions per element, 10 now with the unrolled scaling) */
    double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
    uint64_t i = 0;
    for (; i + 4 <= n; i += 4) {
        s0 += (double)x[i] * x[i];
        s1 += (double)x[i + 1] * x[i + 1];
        s2 += (double)x[i + 2] * x[i + 2];
        s3 += (double)x[i + 3] * x[i + 3];
    }
    for (; i < n; i++) s0 += (double)x[i] * x[i];
    double sum = (s0 + s1) + (s2 + s3);
    float scale = (float)(1.0 / sqrt(sum / (double)n + eps));
    for (i = 0; i + 4 <= n; i += 4) {
        out[i] = (x[i] * scale) * w[i];
        out[i + 1] = (x[i + 1] * scale) * w[i + 1];
        out[i + 2] = (x[i + 2] * scale) * w[i + 2];
        out[i + 3] = (x[i + 3] * scale) * w[i + 3];
    }
    for (; i < n; i++) out[i] = (x[i] * scale) * w[i];
}

/* The pair's second element is half further (NEOX) or the next. */
static void ref_rope(float *v, uint32_t n_rot, const float *cs, int neox)
{
    uint32_t half = n_rot / 2, step = neox ? 1 : 2;
    float *v1 = neox ? v + half : v + 1;
    for (uint32_t i = 0; i < half; i++) {
        float c = cs[2 * i], s = cs[2 * i + 1];
        float x0 = v[i * step], x1 = v1[i * step];
        v[i * step] = x0 * c - x1 * s;
        v1[i * step] = x0 * s + x1 * c;
    }
}

static double ref_exp_sum(float *s, uint32_t n, float mx)
{
    double sum = 0.0;
    for (uint32_t i = 0; i < n; i++) {
        s[i] = expf(s[i] - mx);
        sum += s[i];
    }
    return sum;
}

static float ref_scale_max(float *s, uint32_t n, float scale, float mx)
{
    for (uint32_t i = 0; i < n; i++) {
        s[i] *= scale;
        if (s[i] > mx) mx = s[i];
    }
    return mx;
}

static float ref_dot_f32(const float *k, const float *q, uint32_t n)
{
    float s = 0.0f;
    for (uint32_t i = 0; i < n; i++) s += q[i] * k[i];
    return s;
}

static void ref_axpy_f32(float *out, float a, const float *v, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) out[i] += a * v[i];
}

/* Q8_0 rows: per block, the codes times q summed in float (ascending),
 * then one multiply by the block's scale. */
static float ref_dot_q8_0_f32(const uint8_t *k, const float *q, uint32_t n)
{
    float s = 0.0f;
    for (uint32_t b = 0; b < n / QK8_0; b++, k += sizeof(BlockQ8_0), q += QK8_0) {
        float bs = 0.0f;
        for (int j = 0; j < QK8_0; j++) bs += (float)(int8_t)k[Q8_CODES + j] * q[j];
        s += f16(k) * bs;
    }
    return s;
}

static void ref_axpy_q8_0(float *out, float a, const uint8_t *v, uint32_t n)
{
    for (uint32_t b = 0; b < n / QK8_0; b++, v += sizeof(BlockQ8_0), out += QK8_0) {
        float ad = a * f16(v);
        for (int j = 0; j < QK8_0; j++) out[j] += ad * (float)(int8_t)v[Q8_CODES + j];
    }
}

/* GELU as ggml's table holds it (kernels.h): the F16 input, the tanh form
 * in float with libm's tanhf, the result rounded to F16. */
uint16_t kern_gelu_f16(uint16_t h)
{
    float x = quant_f16_to_f32(h);
    return quant_f32_to_f16(0.5f * x * (1.0f + tanhf(0.79788456080286535588f * x * (1.0f + 0.044715f * x * x))));
}

void kern_gelu_table(uint16_t *table)
{
    for (uint32_t h = 0; h < 65536; h++) table[h] = kern_gelu_f16((uint16_t)h);
    table[65536] = 0; /* padding, never used */
}

static void ref_gelu_mul(float *g, const float *u, uint64_t n, const uint16_t *table)
{
    for (uint64_t i = 0; i < n; i++) {
        float x = g[i];
        float y = x <= -10.0f ? 0.0f : x >= 10.0f ? x : quant_f16_to_f32(table[quant_f32_to_f16(x)]);
        g[i] = y * u[i];
    }
}

/* Each sum in ascending order, a row read for its two dots, then updated. */
static void ref_delta_step(float *S, uint32_t dk, const float *q, const float *k, const float *v, float beta, float fd,
                           float scale, float *o)
{
    float kq = ref_dot_f32(k, q, dk), inv_fd = 1.0f / fd;
    for (uint32_t r = 0; r < dk; r++) {
        float *row = S + (uint64_t)r * dk;
        float sq = ref_dot_f32(row, q, dk);
        float delta = (v[r] - fd * ref_dot_f32(row, k, dk)) * beta;
        ref_axpy_f32(row, delta * inv_fd, k, dk);
        o[r] = (fd * sq + delta * kq) * scale;
    }
}

void kern_ref_causal_conv(float *out, float *hist, uint64_t hist_stride, const float *x, const float *w, uint32_t K,
                          uint64_t n)
{
    for (uint64_t c = 0; c < n; c++) {
        const float *wc = w + c * K;
        float sum = 0.0f;
        for (uint32_t j = 0; j + 1 < K; j++) sum += hist[j * hist_stride + c] * wc[j];
        sum += x[c] * wc[K - 1];
        for (uint32_t j = 0; j + 2 < K; j++) hist[j * hist_stride + c] = hist[(j + 1) * hist_stride + c];
        if (K > 1) hist[(uint64_t)(K - 2) * hist_stride + c] = x[c];
        out[c] = sum;
    }
}

static void ref_dots_f32(const float *x, const float *v, uint64_t stride, uint32_t m, uint32_t n, float *out)
{
    for (uint32_t i = 0; i < m; i++) out[i] = ref_dot_f32(x, v + i * stride, n);
}

static void ref_mix_f32(float *out, const float *c, const float *v, uint64_t stride, uint32_t m, uint32_t n)
{
    for (uint32_t i = 0; i < m; i++) ref_axpy_f32(out, c[i], v + i * stride, n);
}

/* The chunked form (kernels.h). With S_0 = f T before the chunk, fg[i] = f
 * d[0] ... d[i] (S_0's factor at token i) and r_ij = d[j+1] ... d[i] (the
 * decay from token j to token i), the steps' corrections delta_i =
 * beta_i (v_i - (decayed S_{i-1}) k_i) unroll into
 *   delta_i = beta_i (v_i - fg[i] T k_i) - beta_i sum_{j<i} r_ij (k_i.k_j) delta_j
 *   S_i q_i = fg[i] T q_i + sum_{j<=i} r_ij (q_i.k_j) delta_j
 *   S_n-1   = fg[n-1] T + sum_j r_n-1,j delta_j k_j
 * a unit lower triangular system solved token after token. One pass over
 * T's rows for all of T k_i and T q_i, one more to update it: two passes
 * per chunk where the steps take one per token; the rest is O(n^2 dk). */
void kern_delta_chunk(const KernelSet *ks, float *S, float *f, uint32_t dk, uint32_t n, const float *q,
                      const float *k, float *v, uint64_t stride, const float *d, const float *beta, float scale,
                      float *o, uint64_t o_stride)
{
    float fg[KERN_DELTA_CHUNK], pk[KERN_DELTA_CHUNK], pq[KERN_DELTA_CHUNK], c[KERN_DELTA_CHUNK];
    float acc = *f;
    for (uint32_t i = 0; i < n; i++) fg[i] = acc *= d[i];
    /* the right-hand sides into v, the outputs' part from T into o */
    for (uint32_t r = 0; r < dk; r++) {
        const float *row = S + (uint64_t)r * dk;
        ks->dots_f32(row, k, stride, n, dk, pk);
        ks->dots_f32(row, q, stride, n, dk, pq);
        for (uint32_t i = 0; i < n; i++) {
            float *vi = v + i * stride;
            vi[r] = (vi[r] - fg[i] * pk[i]) * beta[i];
            o[i * o_stride + r] = fg[i] * pq[i] * scale;
        }
    }
    /* token by token: delta_i in v_i, then o_i's part from the deltas */
    for (uint32_t i = 0; i < n; i++) {
        const float *ki = k + i * stride, *qi = q + i * stride;
        ks->dots_f32(ki, k, stride, i, dk, pk);
        ks->dots_f32(qi, k, stride, i + 1, dk, pq);
        float r = 1.0f; /* r_ij, from j = i down */
        c[i] = scale * pq[i];
        for (uint32_t j = i; j-- > 0;) {
            r *= d[j + 1];
            pk[j] *= -beta[i] * r;
            c[j] = scale * r * pq[j];
        }
        ks->mix_f32(v + i * stride, pk, v, stride, i, dk);
        ks->mix_f32(o + i * o_stride, c, v, stride, i + 1, dk);
    }
    /* the state: T + sum_j delta_j k_j / fg[j] with f = fg[n-1] (as
     * delta_step keeps it), or below the floor the factor into the rows */
    float fn = fg[n - 1], r = 1.0f;
    int fold = !(fn >= KERN_DELTA_FLOOR);
    for (uint32_t j = n; j-- > 0;) {
        pq[j] = fold ? r : 1.0f / fg[j];
        r *= d[j];
    }
    for (uint32_t rr = 0; rr < dk; rr++) {
        float *row = S + (uint64_t)rr * dk;
        if (fold)
            for (uint32_t e = 0; e < dk; e++) row[e] *= fn;
        for (uint32_t j = 0; j < n; j++) c[j] = pq[j] * v[j * stride + rr];
        ks->mix_f32(row, c, k, stride, n, dk);
    }
    *f = fold ? 1.0f : fn;
}

/* The reference set but its dot[] (kernels.c: kern_ref fills that from the
 * type table, which names this file's dots: this file never reads the
 * table, so no circle). */
void kern_ref_fill(KernelSet *set)
{
    set->quantize_q8_0 = kern_ref_quantize_q8_0;
    set->quantize_q8_k = kern_ref_quantize_q8_k;
    set->dot_f16 = ref_dot_f16;
    set->axpy_f16 = ref_axpy_f16;
    set->dot_f32 = ref_dot_f32;
    set->axpy_f32 = ref_axpy_f32;
    set->dot_q8_0_f32 = ref_dot_q8_0_f32;
    set->axpy_q8_0 = ref_axpy_q8_0;
    set->to_f16 = ref_to_f16;
    set->silu_mul = ref_silu_mul;
    set->rmsnorm = ref_rmsnorm;
    set->rope = ref_rope;
    set->exp_sum = ref_exp_sum;
    set->scale_max = ref_scale_max;
    set->gelu_mul = ref_gelu_mul;
    set->delta_step = ref_delta_step;
    set->causal_conv = kern_ref_causal_conv;
    set->dots_f32 = ref_dots_f32;
    set->mix_f32 = ref_mix_f32;
    set->name = "reference C";
}
