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

#endif
