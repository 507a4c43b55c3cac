/* kernels_x86.h - what the x86 kernel files share (private to
 * src/kernels/x86/): the target attributes of their AVX2 functions and
 * the entries one file fills a set with from another. Every file is
 * compiled for the baseline x86-64 (SSE2); each function carries its own
 * target attribute, so the instructions exist only inside them. */
#ifndef PITH_KERNELS_X86_H
#define PITH_KERNELS_X86_H

#include <stdint.h>

#include "../kernels.h"

#define AVX2 __attribute__((target("avx2,fma,f16c")))
#define AVX2_INLINE static inline __attribute__((always_inline, target("avx2,fma,f16c")))

/* kernels_ops_x86.c: the AVX2 set's gelu_mul, delta_step, causal_conv, and
 * dots_f32 and mix_f32 for kern_delta_chunk */
void kern_x86_gelu_mul(float *g, const float *u, uint64_t n, const uint16_t *table);
void kern_x86_delta_step(float *S, uint32_t dk, const float *q, const float *k, const float *v, float beta, float fd,
                         float scale, float *o);
void kern_x86_causal_conv(float *out, float *hist, uint64_t hist_stride, const float *x, const float *w, uint32_t K,
                          uint64_t n);
void kern_x86_dots_f32(const float *x, const float *v, uint64_t stride, uint32_t m, uint32_t n, float *out);
void kern_x86_mix_f32(float *out, const float *c, const float *v, uint64_t stride, uint32_t m, uint32_t n);

/* kernels_x86.c: the AVX2 set's attention kernels (KernelSet.dots_f16,
 * wsum_f16), which kernels_x86_att.c's AVX-512 ones call for their rests */
void kern_x86_dots_f16(const uint16_t *k, uint64_t stride, uint32_t n, const float *q, uint64_t q_stride, uint32_t nq,
                       uint64_t q_tstride, uint32_t nt, const uint32_t *rows, float *out, uint64_t out_stride);
void kern_x86_wsum_f16(float *out, uint64_t out_stride, uint64_t out_tstride, const float *w, uint64_t w_stride,
                       uint32_t nq, uint32_t nt, const uint32_t *rows, const uint16_t *v, uint64_t stride, uint32_t n);

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
/* Eight chains of eight lanes summed at once: lane i of the result is
 * ((a_i0 + a_i1) + (a_i2 + a_i3)) + ((a_i4 + a_i5) + (a_i6 + a_i7)), the
 * order of a score of the F16 cache (kernels_x86.c: dot_f16_body). */
AVX2_INLINE __m256 kern_x86_sum8x8(const __m256 *a)
{
    __m256 abcd = _mm256_hadd_ps(_mm256_hadd_ps(a[0], a[1]), _mm256_hadd_ps(a[2], a[3]));
    __m256 efgh = _mm256_hadd_ps(_mm256_hadd_ps(a[4], a[5]), _mm256_hadd_ps(a[6], a[7]));
    return _mm256_add_ps(_mm256_permute2f128_ps(abcd, efgh, 0x20), _mm256_permute2f128_ps(abcd, efgh, 0x31));
}
#endif

#endif
