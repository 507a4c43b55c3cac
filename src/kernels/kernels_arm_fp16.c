/* kernels_arm_fp16.c - F16 weights multiplied in F16, for aarch64 CPUs with
 * the ARMv8.2 half-precision arithmetic (FEAT_FP16: Cortex-A55, A76 - Pi 5;
 * port_cpu()->fp16). Elsewhere F16 weights are widened to F32 (kernels_arm.c).
 *
 * Why: widening costs two FCVTL per 8 weights and each FMLA does 4 products;
 * in F16 one FMLA does 8 products straight from the loaded weights, which
 * more than halves the instructions per weight.
 *
 * How results stay within the F16 class (fixtures README section 6):
 *  - activations are rounded to F16 as llama.cpp rounds them for F16
 *    weights; a block of them whose largest |x| is above 256 is first
 *    divided by a power of two (exact), so that a run's 8 products per lane
 *    cannot overflow F16 for weights below 32 in magnitude; the block's sum
 *    is multiplied back in F32;
 *  - each (row, token) sums a run of 64 elements in one F16 vector (8
 *    lanes, 8 multiply-adds each), then widens it into its F32 sum (4
 *    lanes, added pairwise at the end); elements past the last multiple of
 *    8 are added in F32 at the end. (Runs of 256 were measured: the F16
 *    fixture then lands at 5.6e-3 of the largest logit, outside the class.)
 * Every (row, token) goes through these very steps in this order, whatever
 * tile, token group or thread it lands in: the determinism contract of
 * kernels.h holds (a prompt fed in chunks equals token by token, bit for
 * bit). A token group's activations are converted once per call and block
 * of 2048, on the stack, not once per row. */
#include <stdint.h>
#include <string.h>

#include "kernels.h"
#include "quant.h"

#if defined(__aarch64__) && defined(__GNUC__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#include <arm_neon.h>

#ifdef __clang__
#define FP16 __attribute__((target("fp16")))
#else
#define FP16 __attribute__((target("arch=armv8.2-a+fp16")))
#endif
#define INLINE static inline __attribute__((always_inline))
/* the row and token loops must unroll so the sums stay in registers */
#define UNROLL _Pragma("GCC unroll 8")

/* Activations are converted KBLOCK elements at a time (a token group's
 * block on the stack: 16 KiB); within a block each (row, token) sums RUN
 * elements in F16 (8 multiply-adds per lane) before widening them into
 * its F32 sum. */
enum { KBLOCK = 2048, RUN = 64, GROUP = 4 };

/* Largest |x| at which a block is used unscaled (see above). */
#define HALF_SAFE 256.0f

/* len elements of one token (len a multiple of 8) to F16 in h, divided by
 * the returned power of two when they are large. */
FP16 static float block_to_half(const float *x, uint32_t len, float16_t *h)
{
    float32x4_t m = vdupq_n_f32(0.0f);
    for (uint32_t i = 0; i < len; i += 4) m = vmaxnmq_f32(m, vabsq_f32(vld1q_f32(x + i)));
    float mx = vmaxnmvq_f32(m), scale = 1.0f;
    while (mx > HALF_SAFE * scale && scale < 0x1p100f) scale *= 2.0f;
    float32x4_t inv = vdupq_n_f32(1.0f / scale);
    for (uint32_t i = 0; i < len; i += 8) {
        float16x4_t lo = vcvt_f16_f32(vmulq_f32(vld1q_f32(x + i), inv));
        vst1q_f16(h + i, vcvt_high_f16_f32(lo, vmulq_f32(vld1q_f32(x + i + 4), inv)));
    }
    return scale;
}

/* A run's F16 sum into the F32 lanes: low half, then high half. */
INLINE float32x4_t widen_add(float32x4_t s, float16x8_t a)
{
    s = vaddq_f32(s, vcvt_f32_f16(vget_low_f16(a)));
    return vaddq_f32(s, vcvt_high_f32_f16(a));
}

/* The block's result into out (first block: =, then +=): lanes added
 * pairwise (FADDP order), times the block's scale. */
INLINE void store_sum(float *out, float32x4_t s, float scale, int first)
{
    float v = vaddvq_f32(s) * scale;
    *out = first ? v : *out + v;
}

INLINE float16x8_t ldw(const uint8_t *p)
{
    return vreinterpretq_f16_u8(vld1q_u8(p));
}

/* Rows w[0..3] (their block's first weight) against tokens h[0], h[1]. */
FP16 static void tile4x2(const uint8_t *const *w, const float16_t *const *h, uint32_t len, const float *scale,
                         float *out, uint64_t out_stride, int first)
{
    float32x4_t s[4][2];
    UNROLL for (int r = 0; r < 4; r++) s[r][0] = s[r][1] = vdupq_n_f32(0.0f);
    for (uint32_t i0 = 0; i0 < len; i0 += RUN) {
        uint32_t i1 = len - i0 < RUN ? len : i0 + RUN;
        float16x8_t a[4][2];
        UNROLL for (int r = 0; r < 4; r++) a[r][0] = a[r][1] = vdupq_n_f16(0);
        for (uint32_t i = i0; i < i1; i += 8) {
            float16x8_t x0 = vld1q_f16(h[0] + i), x1 = vld1q_f16(h[1] + i);
            UNROLL for (int r = 0; r < 4; r++) {
                float16x8_t wr = ldw(w[r] + 2 * i);
                a[r][0] = vfmaq_f16(a[r][0], wr, x0);
                a[r][1] = vfmaq_f16(a[r][1], wr, x1);
            }
        }
        UNROLL for (int r = 0; r < 4; r++) s[r][0] = widen_add(s[r][0], a[r][0]), s[r][1] = widen_add(s[r][1], a[r][1]);
    }
    UNROLL for (int t = 0; t < 2; t++) UNROLL for (int r = 0; r < 4; r++)
        store_sum(out + (uint64_t)t * out_stride + r, s[r][t], scale[t], first);
}

/* Rows w[0..7] against one token. */
FP16 static void tile8x1(const uint8_t *const *w, const float16_t *h, uint32_t len, float scale, float *out,
                         int first)
{
    float32x4_t s[8];
    UNROLL for (int r = 0; r < 8; r++) s[r] = vdupq_n_f32(0.0f);
    for (uint32_t i0 = 0; i0 < len; i0 += RUN) {
        uint32_t i1 = len - i0 < RUN ? len : i0 + RUN;
        float16x8_t a[8];
        UNROLL for (int r = 0; r < 8; r++) a[r] = vdupq_n_f16(0);
        for (uint32_t i = i0; i < i1; i += 8) {
            float16x8_t x = vld1q_f16(h + i);
            UNROLL for (int r = 0; r < 8; r++) a[r] = vfmaq_f16(a[r], ldw(w[r] + 2 * i), x);
        }
        UNROLL for (int r = 0; r < 8; r++) s[r] = widen_add(s[r], a[r]);
    }
    UNROLL for (int r = 0; r < 8; r++) store_sum(out + r, s[r], scale, first);
}

/* One row against one token (the rows and tokens the tiles leave over). */
FP16 static void tile1x1(const uint8_t *w, const float16_t *h, uint32_t len, float scale, float *out, int first)
{
    float32x4_t s = vdupq_n_f32(0.0f);
    for (uint32_t i0 = 0; i0 < len; i0 += RUN) {
        uint32_t i1 = len - i0 < RUN ? len : i0 + RUN;
        float16x8_t a = vdupq_n_f16(0);
        for (uint32_t i = i0; i < i1; i += 8) a = vfmaq_f16(a, ldw(w + 2 * i), vld1q_f16(h + i));
        s = widen_add(s, a);
    }
    store_sum(out, s, scale, first);
}

/* KernelSet.rows[GGML_TYPE_F16] for CPUs with FEAT_FP16 (kernels.h's
 * KernRowsFn; activations are F32, converted here a block at a time). */
FP16 void kern_arm_fp16_rows_f16(uint64_t n, const uint8_t *w, uint64_t row_bytes, uint64_t nrows, const void *act,
                                 uint64_t act_stride, int nt, float *out, uint64_t out_stride)
{
    float16_t half[GROUP][KBLOCK] __attribute__((aligned(16)));
    uint64_t n8 = n / 8 * 8;
    for (int t0 = 0; t0 < nt; t0 += GROUP) {
        int g = nt - t0 < GROUP ? nt - t0 : GROUP;
        const float *x[GROUP];
        for (int t = 0; t < g; t++) x[t] = (const float *)((const uint8_t *)act + (uint64_t)(t0 + t) * act_stride);
        float *o = out + (uint64_t)t0 * out_stride;
        for (uint64_t k0 = 0; k0 < n8; k0 += KBLOCK) {
            uint32_t len = (uint32_t)(n8 - k0 < KBLOCK ? n8 - k0 : KBLOCK);
            int first = k0 == 0;
            float scale[GROUP];
            const float16_t *h[GROUP];
            for (int t = 0; t < g; t++) scale[t] = block_to_half(x[t] + k0, len, half[t]), h[t] = half[t];
            uint64_t r = 0;
            if (g == 1) {
                for (; r + 8 <= nrows; r += 8) {
                    const uint8_t *wr[8];
                    for (int i = 0; i < 8; i++) wr[i] = w + (r + i) * row_bytes + 2 * k0;
                    tile8x1(wr, h[0], len, scale[0], o + r, first);
                }
            } else {
                for (; r + 4 <= nrows; r += 4) {
                    const uint8_t *wr[4];
                    for (int i = 0; i < 4; i++) wr[i] = w + (r + i) * row_bytes + 2 * k0;
                    int t = 0;
                    for (; t + 2 <= g; t += 2) tile4x2(wr, h + t, len, scale + t, o + (uint64_t)t * out_stride + r, out_stride, first);
                    for (; t < g; t++)
                        for (int i = 0; i < 4; i++) tile1x1(wr[i], h[t], len, scale[t], o + (uint64_t)t * out_stride + r + i, first);
                }
            }
            for (; r < nrows; r++)
                for (int t = 0; t < g; t++)
                    tile1x1(w + r * row_bytes + 2 * k0, h[t], len, scale[t], o + (uint64_t)t * out_stride + r, first);
        }
        /* elements past the last multiple of 8, in F32, in order */
        if (n8 < n)
            for (uint64_t r = 0; r < nrows; r++)
                for (int t = 0; t < g; t++) {
                    float *res = o + (uint64_t)t * out_stride + r, s = 0.0f;
                    const uint8_t *wr = w + r * row_bytes;
                    for (uint64_t k = n8; k < n; k++)
                        s += quant_f16_to_f32((uint16_t)(wr[2 * k] | wr[2 * k + 1] << 8)) * x[t][k];
                    *res = n8 ? *res + s : s;
                }
    }
}

#endif
