/* kernels_x86_att.c - the AVX-512 attention kernels (KernelSet.dots_f16 and
 * wsum_f16 on CPUs with AVX-512, kern_x86_att_wide): the AVX2 set's
 * arithmetic, bit for bit, twice as wide. A score is still one chain of
 * eight lanes (kernels_x86.c: dot_f16_body): a 512-bit register holds the
 * chains of two rows, each half summed as the AVX2 kernel sums it; a
 * weighted sum is one multiply-add per output element and row, whatever the
 * width. */
#include "kernels_x86.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

#include "../../../port/port.h"

#define AVX512 __attribute__((target("avx2,fma,f16c,avx512f,avx512vl")))
#define AVX512_INLINE static inline __attribute__((always_inline, target("avx2,fma,f16c,avx512f,avx512vl")))
#define UNROLL _Pragma("GCC unroll 8")

/* elements i .. i + 7 of rows a and b as sixteen floats */
AVX512_INLINE __m512 f16_rows2(const uint16_t *a, const uint16_t *b)
{
    return _mm512_cvtph_ps(_mm256_loadu2_m128i((const __m128i *)b, (const __m128i *)a));
}

/* eight floats in both halves */
AVX512_INLINE __m512 halves(const float *q)
{
    return _mm512_castpd_ps(_mm512_broadcast_f64x4(_mm256_castps_pd(_mm256_loadu_ps(q))));
}

/* Rows converted once for all the queries that read them: eight rows of n
 * (n <= KV_CHUNK_N, whole vectors) in pairs, elements i .. i + 7 of rows 2r
 * and 2r + 1 side by side at buf + (r * n / 8 + i / 8) * 16 (the conversion
 * is exact: a score's chain is the same as on the F16 rows). */
enum { KV_CHUNK_N = 256 };
AVX512_INLINE void pairs8(float *buf, const uint16_t *k, uint64_t stride, uint32_t n)
{
    for (uint32_t r = 0; r < 4; r++)
        for (uint32_t i = 0; i < n; i += 8)
            _mm512_storeu_ps(buf + (r * n / 8 + i / 8) * 16, f16_rows2(k + 2 * r * stride + i, k + (2 * r + 1) * stride + i));
}

/* Two queries against eight converted rows (pairs 0..3 in acc[r], q1's in
 * acc[4 + r]); then each query's eight scores as x86_dots_f16 sums them. */
AVX512_INLINE void dots2x8(const float *buf, const float *q0, const float *q1, uint32_t n, float *o0, float *o1)
{
    __m512 acc[8];
    UNROLL for (int c = 0; c < 8; c++) acc[c] = _mm512_setzero_ps();
    for (uint32_t i = 0; i < n; i += 8) {
        __m512 a = halves(q0 + i), b = halves(q1 + i);
        UNROLL for (int r = 0; r < 4; r++) {
            __m512 kv = _mm512_loadu_ps(buf + (r * n / 8 + i / 8) * 16);
            acc[r] = _mm512_fmadd_ps(kv, a, acc[r]);
            acc[4 + r] = _mm512_fmadd_ps(kv, b, acc[4 + r]);
        }
    }
    for (int s = 0; s < 2; s++) {
        __m256 h[8];
        UNROLL for (int r = 0; r < 4; r++) {
            h[2 * r] = _mm512_castps512_ps256(acc[4 * s + r]);
            h[2 * r + 1] = _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(acc[4 * s + r]), 1));
        }
        _mm256_storeu_ps(s ? o1 : o0, kern_x86_sum8x8(h));
    }
}

/* Eight rows at a time, converted once, for every query pair of every token
 * that sees all eight; the rest (rows past a token's last eight, an odd
 * query, heads that are not whole vectors or longer than KV_CHUNK_N) by the
 * AVX2 kernel. */
AVX512 static void x86_dots_f16_512(const uint16_t *k, uint64_t stride, uint32_t n, const float *q, uint64_t q_stride,
                                    uint32_t nq, uint64_t q_tstride, uint32_t nt, const uint32_t *rows, float *out,
                                    uint64_t out_stride)
{
    float buf[8 * KV_CHUNK_N];
    uint32_t most = 0, nq2 = n % 8 == 0 && n <= KV_CHUNK_N ? nq / 2 * 2 : 0;
    for (uint32_t t = 0; t < nt; t++) most = rows[t] > most ? rows[t] : most;
    for (uint32_t p = 0; nq2 && p + 8 <= most; p += 8) {
        pairs8(buf, k + p * stride, stride, n);
        for (uint32_t t = 0; t < nt; t++)
            if (p + 8 <= rows[t])
                for (uint32_t i = 0; i < nq2; i += 2) {
                    const float *q0 = q + t * q_tstride + i * q_stride;
                    float *o0 = out + ((uint64_t)t * nq + i) * out_stride + p;
                    dots2x8(buf, q0, q0 + q_stride, n, o0, o0 + out_stride);
                }
    }
    for (uint32_t t = 0; t < nt; t++) {
        const float *qt = q + t * q_tstride;
        float *ot = out + (uint64_t)t * nq * out_stride;
        uint32_t r8 = nq2 ? rows[t] / 8 * 8 : 0, rest = rows[t] - r8;
        if (rest && nq2)
            kern_x86_dots_f16(k + r8 * stride, stride, n, qt, q_stride, nq2, 0, 1, &rest, ot + r8, out_stride);
        if (nq2 < nq)
            kern_x86_dots_f16(k, stride, n, qt + nq2 * q_stride, q_stride, nq - nq2, 0, 1, rows + t,
                              ot + nq2 * out_stride, out_stride);
    }
}

/* Two queries' 64 outputs in registers across the rows. */
AVX512_INLINE void wsum2x64(float *o0, float *o1, const float *w0, const float *w1, const uint16_t *v, uint64_t stride,
                            uint32_t rows)
{
    __m512 a0[4], a1[4];
    UNROLL for (int c = 0; c < 4; c++) a0[c] = _mm512_loadu_ps(o0 + 16 * c), a1[c] = _mm512_loadu_ps(o1 + 16 * c);
    for (uint32_t p = 0; p < rows; p++) {
        __m512 wp0 = _mm512_set1_ps(w0[p]), wp1 = _mm512_set1_ps(w1[p]);
        UNROLL for (int c = 0; c < 4; c++) {
            __m512 vv = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(v + p * stride + 16 * c)));
            a0[c] = _mm512_fmadd_ps(wp0, vv, a0[c]);
            a1[c] = _mm512_fmadd_ps(wp1, vv, a1[c]);
        }
    }
    UNROLL for (int c = 0; c < 4; c++) _mm512_storeu_ps(o0 + 16 * c, a0[c]), _mm512_storeu_ps(o1 + 16 * c, a1[c]);
}

AVX512 static void x86_wsum_f16_512(float *out, uint64_t out_stride, uint64_t out_tstride, const float *w,
                                    uint64_t w_stride, uint32_t nq, uint32_t nt, const uint32_t *rows,
                                    const uint16_t *v, uint64_t stride, uint32_t n)
{
    uint32_t n64 = n / 64 * 64, nq2 = nq / 2 * 2;
    for (uint32_t t = 0; t < nt; t++) {
        float *ot = out + t * out_tstride;
        const float *wt = w + (uint64_t)t * nq * w_stride;
        for (uint32_t i = 0; i < nq2; i += 2)
            for (uint32_t j = 0; j < n64; j += 64)
                wsum2x64(ot + i * out_stride + j, ot + (i + 1) * out_stride + j, wt + i * w_stride,
                         wt + (i + 1) * w_stride, v + j, stride, rows[t]);
        /* the rest (outputs past the last 64, an odd query) by the AVX2 kernel */
        if (n64 < n)
            kern_x86_wsum_f16(ot + n64, out_stride, 0, wt, w_stride, nq2, 1, rows + t, v + n64, stride, n - n64);
        if (nq2 < nq)
            kern_x86_wsum_f16(ot + nq2 * out_stride, out_stride, 0, wt + nq2 * w_stride, w_stride, nq - nq2, 1,
                              rows + t, v, stride, n);
    }
}

void kern_x86_att_wide(KernelSet *set)
{
    const PortCpu *c = port_cpu();
    if (!c->avx512vnni) return; /* (F, BW, VL and VNNI: F and VL are what these take) */
    set->dots_f16 = x86_dots_f16_512;
    set->wsum_f16 = x86_wsum_f16_512;
}

#else

void kern_x86_att_wide(KernelSet *set)
{
    (void)set;
}

#endif
