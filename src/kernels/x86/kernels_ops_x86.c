/* kernels_ops_x86.c - AVX2 + FMA + F16C kernels for the operations of the
 * newer architectures (kernels.h: gelu_mul, delta_step, causal_conv, and
 * dots_f32 and mix_f32 for kern_delta_chunk), entries of the
 * set of kernels_x86.c (which hands them out only to CPUs with all three). Compiled for the baseline x86-64 like every file;
 * each function carries its target attribute. */
#include <stddef.h>
#include <string.h>

#include "kernels_x86.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>


/* Eight elements: x to F16 (the same bits as quant_f32_to_f16: F16C rounds
 * to nearest even), the table's entry at those bits (a 32-bit gather at
 * 2 * index, the low half kept: the table has one entry of padding), the
 * bounds compared on x itself, as the reference does. */
AVX2_INLINE __m256 gelu_mul8(__m256 x, __m256 u, const uint16_t *table)
{
    __m256i idx = _mm256_cvtepu16_epi32(_mm256_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
    __m256i w = _mm256_and_si256(_mm256_i32gather_epi32((const int *)(const void *)table, idx, 2),
                                 _mm256_set1_epi32(0xffff));
    __m128i h = _mm_packus_epi32(_mm256_castsi256_si128(w), _mm256_extracti128_si256(w, 1));
    __m256 y = _mm256_cvtph_ps(h);
    __m256 lo = _mm256_cmp_ps(x, _mm256_set1_ps(-10.0f), _CMP_LE_OQ), hi = _mm256_cmp_ps(x, _mm256_set1_ps(10.0f), _CMP_GE_OQ);
    y = _mm256_blendv_ps(y, _mm256_setzero_ps(), lo);
    y = _mm256_blendv_ps(y, x, hi);
    return _mm256_mul_ps(y, u);
}

AVX2 void kern_x86_gelu_mul(float *g, const float *u, uint64_t n, const uint16_t *table)
{
    uint64_t i = 0;
    for (; i + 8 <= n; i += 8) _mm256_storeu_ps(g + i, gelu_mul8(_mm256_loadu_ps(g + i), _mm256_loadu_ps(u + i), table));
    if (i < n) {
        float tg[8] = {0}, tu[8] = {0};
        memcpy(tg, g + i, (n - i) * sizeof(float));
        memcpy(tu, u + i, (n - i) * sizeof(float));
        _mm256_storeu_ps(tg, gelu_mul8(_mm256_loadu_ps(tg), _mm256_loadu_ps(tu), table));
        memcpy(g + i, tg, (n - i) * sizeof(float));
    }
}

AVX2_INLINE float hsum8(__m256 v)
{
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

/* A row is read once for both dots (two accumulators of 8 lanes each, two
 * more to hide the FMA latency), then updated in place; tails in scalar. */
AVX2 void kern_x86_delta_step(float *S, uint32_t dk, const float *q, const float *k, const float *v, float beta,
                                   float fd, float scale, float *o)
{
    uint32_t n8 = dk & ~7u;
    __m256 acc = _mm256_setzero_ps();
    for (uint32_t i = 0; i < n8; i += 8) acc = _mm256_fmadd_ps(_mm256_loadu_ps(k + i), _mm256_loadu_ps(q + i), acc);
    float kq = hsum8(acc), inv_fd = 1.0f / fd;
    for (uint32_t i = n8; i < dk; i++) kq += k[i] * q[i];
    for (uint32_t r = 0; r < dk; r++) {
        float *row = S + (uint64_t)r * dk;
        __m256 aq0 = _mm256_setzero_ps(), aq1 = aq0, ak0 = aq0, ak1 = aq0;
        uint32_t i = 0;
        for (; i + 16 <= n8; i += 16) {
            __m256 r0 = _mm256_loadu_ps(row + i), r1 = _mm256_loadu_ps(row + i + 8);
            aq0 = _mm256_fmadd_ps(r0, _mm256_loadu_ps(q + i), aq0);
            ak0 = _mm256_fmadd_ps(r0, _mm256_loadu_ps(k + i), ak0);
            aq1 = _mm256_fmadd_ps(r1, _mm256_loadu_ps(q + i + 8), aq1);
            ak1 = _mm256_fmadd_ps(r1, _mm256_loadu_ps(k + i + 8), ak1);
        }
        if (i < n8) {
            __m256 r0 = _mm256_loadu_ps(row + i);
            aq0 = _mm256_fmadd_ps(r0, _mm256_loadu_ps(q + i), aq0);
            ak0 = _mm256_fmadd_ps(r0, _mm256_loadu_ps(k + i), ak0);
        }
        float sq = hsum8(_mm256_add_ps(aq0, aq1)), sk = hsum8(_mm256_add_ps(ak0, ak1));
        for (i = n8; i < dk; i++) sq += row[i] * q[i], sk += row[i] * k[i];
        float delta = (v[r] - fd * sk) * beta, a = delta * inv_fd;
        __m256 va = _mm256_set1_ps(a);
        for (i = 0; i < n8; i += 8)
            _mm256_storeu_ps(row + i, _mm256_fmadd_ps(va, _mm256_loadu_ps(k + i), _mm256_loadu_ps(row + i)));
        for (; i < dk; i++) row[i] += a * k[i];
        o[r] = (fd * sq + delta * kq) * scale;
    }
}

/* x against eight vectors at a time (eight FMA chains, x loaded once for
 * them), then one at a time; tails in scalar. */
AVX2_INLINE void dots_block(const float *x, const float *v, uint64_t stride, uint32_t B, uint32_t n, float *out)
{
    __m256 acc[8];
    uint32_t e = 0;
#pragma GCC unroll 8
    for (uint32_t b = 0; b < B; b++) acc[b] = _mm256_setzero_ps();
    for (; e + 8 <= n; e += 8) {
        __m256 xe = _mm256_loadu_ps(x + e);
#pragma GCC unroll 8
        for (uint32_t b = 0; b < B; b++) acc[b] = _mm256_fmadd_ps(xe, _mm256_loadu_ps(v + b * stride + e), acc[b]);
    }
#pragma GCC unroll 8
    for (uint32_t b = 0; b < B; b++) out[b] = hsum8(acc[b]);
    for (uint32_t b = 0; e < n && b < B; b++)
        for (uint32_t t = e; t < n; t++) out[b] += x[t] * v[b * stride + t];
}

AVX2 void kern_x86_dots_f32(const float *x, const float *v, uint64_t stride, uint32_t m, uint32_t n, float *out)
{
    uint32_t i = 0;
    for (; i + 8 <= m; i += 8) dots_block(x, v + i * stride, stride, 8, n, out + i);
    for (; i < m; i++) dots_block(x, v + i * stride, stride, 1, n, out + i);
}

/* out held in registers 64 (then 8) floats at a time while every vector
 * adds into it; the tail in scalar. */
AVX2_INLINE void mix_block(float *out, const float *c, const float *v, uint64_t stride, uint32_t m, uint32_t B)
{
    __m256 acc[8];
#pragma GCC unroll 8
    for (uint32_t b = 0; b < B; b++) acc[b] = _mm256_loadu_ps(out + 8 * b);
    for (uint32_t i = 0; i < m; i++) {
        __m256 ci = _mm256_set1_ps(c[i]);
#pragma GCC unroll 8
        for (uint32_t b = 0; b < B; b++) acc[b] = _mm256_fmadd_ps(ci, _mm256_loadu_ps(v + i * stride + 8 * b), acc[b]);
    }
#pragma GCC unroll 8
    for (uint32_t b = 0; b < B; b++) _mm256_storeu_ps(out + 8 * b, acc[b]);
}

AVX2 void kern_x86_mix_f32(float *out, const float *c, const float *v, uint64_t stride, uint32_t m, uint32_t n)
{
    uint32_t e = 0;
    for (; e + 64 <= n; e += 64) mix_block(out + e, c, v + e, stride, m, 8);
    for (; e + 8 <= n; e += 8) mix_block(out + e, c, v + e, stride, m, 1);
    for (; e < n; e++)
        for (uint32_t i = 0; i < m; i++) out[e] += c[i] * v[i * stride + e];
}

/* Eight channels at a time: each tap's weights gathered (stride K), the
 * products and sums in the reference's order, multiply then add. */
AVX2 void kern_x86_causal_conv(float *out, float *hist, uint64_t hist_stride, const float *x, const float *w, uint32_t K,
                               uint64_t n)
{
    __m256i idx = _mm256_mullo_epi32(_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7), _mm256_set1_epi32((int)K));
    uint64_t c = 0;
    for (; c + 8 <= n; c += 8) {
        const float *wc = w + c * K;
        __m256 sum = _mm256_setzero_ps();
        for (uint32_t j = 0; j + 1 < K; j++) {
            __m256 h = _mm256_loadu_ps(hist + j * hist_stride + c);
            sum = _mm256_add_ps(sum, _mm256_mul_ps(h, _mm256_i32gather_ps(wc + j, idx, 4)));
            if (j > 0) _mm256_storeu_ps(hist + (j - 1) * hist_stride + c, h);
        }
        __m256 xc = _mm256_loadu_ps(x + c);
        sum = _mm256_add_ps(sum, _mm256_mul_ps(xc, _mm256_i32gather_ps(wc + K - 1, idx, 4)));
        if (K > 1) _mm256_storeu_ps(hist + (uint64_t)(K - 2) * hist_stride + c, xc);
        _mm256_storeu_ps(out + c, sum);
    }
    for (; c < n; c++) {
        const float *wc = w + c * K;
        float sum = 0.0f;
        for (uint32_t j = 0; j + 1 < K; j++) sum += hist[j * hist_stride + c] * wc[j];
        sum += x[c] * wc[K - 1];
        for (uint32_t j = 0; j + 2 < K; j++) hist[j * hist_stride + c] = hist[(j + 1) * hist_stride + c];
        if (K > 1) hist[(uint64_t)(K - 2) * hist_stride + c] = x[c];
        out[c] = sum;
    }
}

#endif
