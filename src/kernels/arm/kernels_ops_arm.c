/* kernels_ops_arm.c - NEON kernels for the operations of the newer
 * architectures (kernels.h: gelu_mul, delta_step, causal_conv, and
 * dots_f32 and mix_f32 for kern_delta_chunk) and RoPE, entries of every set of
 * kernels_arm.c (aarch64 with and without dotprod, armv7): nothing here
 * needs dotprod.
 *
 * armv7's NEON flushes subnormals to zero and uses the default NaN, where
 * the reference (VFP or software) keeps them; so the GELU gate, which must
 * give the reference's bits, converts and multiplies in VFP there (the
 * hardware's half conversions instead of the software ones), and only
 * aarch64 converts four at a time in NEON (FCVTN keeps subnormals and NaN
 * bits under Linux's FPCR, as kernels_arm.c's F16 stores rely on). The
 * convolution, which must give the reference's bits too, checks its NEON
 * results on armv7 and redoes in VFP the channels where they could differ
 * (kern_arm_causal_conv). The dots and mixes need not be exact (1e-5).
 * RoPE (kern_arm_rope, aarch64) gives the reference's bits too. */
#include <stddef.h>
#include <string.h>

#include "kernels_arm.h"

/* the conditions of kernels_arm.c's sets */
#if defined(__GNUC__) && defined(__ARM_NEON) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ &&                   \
    (defined(__aarch64__) || (defined(__ARM_FEATURE_FMA) && defined(__ARM_FP16_FORMAT_IEEE)))
#include <arm_neon.h>

#include "kernels_neon.h"

#define INLINE static inline __attribute__((always_inline))

INLINE uint16_t to_half(float x)
{
    __fp16 h = (__fp16)x;
    uint16_t v;
    memcpy(&v, &h, 2);
    return v;
}

INLINE float gelu1(float x, const uint16_t *table)
{
    return x <= -10.0f ? 0.0f : x >= 10.0f ? x : neon_f16_to_f32(table[to_half(x)]);
}

void kern_arm_gelu_mul(float *g, const float *u, uint64_t n, const uint16_t *table)
{
    uint64_t i = 0;
#ifdef __aarch64__
    for (; i + 4 <= n; i += 4) {
        float32x4_t x = vld1q_f32(g + i);
        uint16_t h[4];
        vst1_u16(h, vreinterpret_u16_f16(vcvt_f16_f32(x)));
        for (int j = 0; j < 4; j++) h[j] = table[h[j]];
        float32x4_t y = vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(h)));
        y = vbslq_f32(vcleq_f32(x, vdupq_n_f32(-10.0f)), vdupq_n_f32(0.0f), y);
        y = vbslq_f32(vcgeq_f32(x, vdupq_n_f32(10.0f)), x, y);
        vst1q_f32(g + i, vmulq_f32(y, vld1q_f32(u + i)));
    }
#endif
    for (; i < n; i++) g[i] = gelu1(g[i], table) * u[i];
}

INLINE float hsum_f32(float32x4_t v)
{
#ifdef __aarch64__
    return vaddvq_f32(v);
#else
    float32x2_t s = vadd_f32(vget_low_f32(v), vget_high_f32(v));
    return vget_lane_f32(vpadd_f32(s, s), 0);
#endif
}

/* A row read once for both dots (two accumulators each: the FMA latency),
 * then updated in place; tails in scalar. */
void kern_arm_delta_step(float *S, uint32_t dk, const float *q, const float *k, const float *v, float beta, float fd,
                         float scale, float *o)
{
    uint32_t n4 = dk & ~3u;
    float32x4_t acc = vdupq_n_f32(0.0f);
    for (uint32_t i = 0; i < n4; i += 4) acc = vfmaq_f32(acc, vld1q_f32(k + i), vld1q_f32(q + i));
    float kq = hsum_f32(acc), inv_fd = 1.0f / fd;
    for (uint32_t i = n4; i < dk; i++) kq += k[i] * q[i];
    for (uint32_t r = 0; r < dk; r++) {
        float *row = S + (uint64_t)r * dk;
        float32x4_t aq0 = vdupq_n_f32(0.0f), aq1 = aq0, ak0 = aq0, ak1 = aq0;
        uint32_t i = 0;
        for (; i + 8 <= n4; i += 8) {
            float32x4_t r0 = vld1q_f32(row + i), r1 = vld1q_f32(row + i + 4);
            aq0 = vfmaq_f32(aq0, r0, vld1q_f32(q + i));
            ak0 = vfmaq_f32(ak0, r0, vld1q_f32(k + i));
            aq1 = vfmaq_f32(aq1, r1, vld1q_f32(q + i + 4));
            ak1 = vfmaq_f32(ak1, r1, vld1q_f32(k + i + 4));
        }
        if (i < n4) {
            float32x4_t r0 = vld1q_f32(row + i);
            aq0 = vfmaq_f32(aq0, r0, vld1q_f32(q + i));
            ak0 = vfmaq_f32(ak0, r0, vld1q_f32(k + i));
        }
        float sq = hsum_f32(vaddq_f32(aq0, aq1)), sk = hsum_f32(vaddq_f32(ak0, ak1));
        for (i = n4; i < dk; i++) sq += row[i] * q[i], sk += row[i] * k[i];
        float delta = (v[r] - fd * sk) * beta, a = delta * inv_fd;
        float32x4_t va = vdupq_n_f32(a);
        for (i = 0; i < n4; i += 4) vst1q_f32(row + i, vfmaq_f32(vld1q_f32(row + i), va, vld1q_f32(k + i)));
        for (; i < dk; i++) row[i] += a * k[i];
        o[r] = (fd * sq + delta * kq) * scale;
    }
}

/* x against four vectors at a time (four FMA chains, x loaded once for
 * them), then one at a time; tails in scalar. */
INLINE void dots_block(const float *x, const float *v, uint64_t stride, uint32_t B, uint32_t n, float *out)
{
    float32x4_t acc[4];
    uint32_t e = 0;
#pragma GCC unroll 8
    for (uint32_t b = 0; b < B; b++) acc[b] = vdupq_n_f32(0.0f);
    for (; e + 4 <= n; e += 4) {
        float32x4_t xe = vld1q_f32(x + e);
#pragma GCC unroll 8
        for (uint32_t b = 0; b < B; b++) acc[b] = vfmaq_f32(acc[b], xe, vld1q_f32(v + b * stride + e));
    }
#pragma GCC unroll 8
    for (uint32_t b = 0; b < B; b++) out[b] = hsum_f32(acc[b]);
    for (uint32_t b = 0; e < n && b < B; b++)
        for (uint32_t t = e; t < n; t++) out[b] += x[t] * v[b * stride + t];
}

void kern_arm_dots_f32(const float *x, const float *v, uint64_t stride, uint32_t m, uint32_t n, float *out)
{
    uint32_t i = 0;
    for (; i + 4 <= m; i += 4) dots_block(x, v + i * stride, stride, 4, n, out + i);
    for (; i < m; i++) dots_block(x, v + i * stride, stride, 1, n, out + i);
}

/* out held in registers 16 (then 4) floats at a time while every vector
 * adds into it; the tail in scalar. */
INLINE void mix_block(float *out, const float *c, const float *v, uint64_t stride, uint32_t m, uint32_t B)
{
    float32x4_t acc[4];
#pragma GCC unroll 8
    for (uint32_t b = 0; b < B; b++) acc[b] = vld1q_f32(out + 4 * b);
    for (uint32_t i = 0; i < m; i++) {
        float32x4_t ci = vdupq_n_f32(c[i]);
#pragma GCC unroll 8
        for (uint32_t b = 0; b < B; b++) acc[b] = vfmaq_f32(acc[b], ci, vld1q_f32(v + i * stride + 4 * b));
    }
#pragma GCC unroll 8
    for (uint32_t b = 0; b < B; b++) vst1q_f32(out + 4 * b, acc[b]);
}

void kern_arm_mix_f32(float *out, const float *c, const float *v, uint64_t stride, uint32_t m, uint32_t n)
{
    uint32_t e = 0;
    for (; e + 16 <= n; e += 16) mix_block(out + e, c, v + e, stride, m, 4);
    for (; e + 4 <= n; e += 4) mix_block(out + e, c, v + e, stride, m, 1);
    for (; e < n; e++)
        for (uint32_t i = 0; i < m; i++) out[e] += c[i] * v[i * stride + e];
}

/* RoPE (kernels.h: rope), four pairs at a time: the deinterleaving loads
 * (LD2) give four cosines and four sines, and for adjacent pairs four
 * first and four second elements; FMUL, then FSUB or FADD round as the
 * scalar code does (the build has no FP contraction). aarch64 only:
 * armv7's NEON flushes subnormals to zero, it keeps the reference. */
#ifdef __aarch64__
INLINE void rope4(float32x4_t x0, float32x4_t x1, float32x4x2_t cs, float32x4_t *y0, float32x4_t *y1)
{
    *y0 = vsubq_f32(vmulq_f32(x0, cs.val[0]), vmulq_f32(x1, cs.val[1]));
    *y1 = vaddq_f32(vmulq_f32(x0, cs.val[1]), vmulq_f32(x1, cs.val[0]));
}

void kern_arm_rope(float *v, uint32_t n_rot, const float *cs, int neox)
{
    uint32_t half = n_rot / 2, i = 0, step = neox ? 1 : 2;
    float *v1 = neox ? v + half : v + 1;
    if (neox)
        for (; i + 4 <= half; i += 4) {
            float32x4_t y0, y1;
            rope4(vld1q_f32(v + i), vld1q_f32(v1 + i), vld2q_f32(cs + 2 * i), &y0, &y1);
            vst1q_f32(v + i, y0);
            vst1q_f32(v1 + i, y1);
        }
    else
        for (; i + 4 <= half; i += 4) {
            float32x4x2_t x = vld2q_f32(v + 2 * i);
            rope4(x.val[0], x.val[1], vld2q_f32(cs + 2 * i), &x.val[0], &x.val[1]);
            vst2q_f32(v + 2 * i, x);
        }
    for (; i < half; i++) {
        float c = cs[2 * i], s = cs[2 * i + 1], x0 = v[i * step], x1 = v1[i * step];
        v[i * step] = x0 * c - x1 * s;
        v1[i * step] = x0 * s + x1 * c;
    }
}
#endif

/* channels [c0, c1) as the reference computes them: a channel's
 * history, input, weights and output are at its index in each */
static void conv_scalar(float *out, float *hist, uint64_t hist_stride, const float *x, const float *w, uint32_t K,
                        uint64_t c0, uint64_t c1)
{
    kern_ref_causal_conv(out + c0, hist + c0, hist_stride, x + c0, w + c0 * K, K, c1 - c0);
}

/* Four channels at a time, the products and sums in the reference's
 * order (multiply, then add: FMUL and FADD round as the scalar code does).
 * aarch64 under Linux's FPCR keeps subnormals and NaN bits. armv7's NEON
 * flushes subnormal inputs and results to zero and gives the default NaN:
 * there, four channels any of whose products or partial sums is not a
 * normal number (zero, subnormal, NaN: the only cases where NEON and VFP
 * can differ) are done again in scalar (VFP) code, before the history
 * moves. */
void kern_arm_causal_conv(float *out, float *hist, uint64_t hist_stride, const float *x, const float *w, uint32_t K,
                          uint64_t n)
{
    uint64_t c = 0;
    for (; c + 4 <= n; c += 4) {
        const float *wc = w + c * K;
        float32x4_t sum = vdupq_n_f32(0.0f);
#ifndef __aarch64__
        const float32x4_t tiny = vdupq_n_f32(0x1p-126f);
        uint32x4_t normal = vdupq_n_u32(~0u);
#endif
        for (uint32_t j = 0; j < K; j++) {
            float32x4_t wj = vdupq_n_f32(0.0f);
            wj = vld1q_lane_f32(wc + j, wj, 0);
            wj = vld1q_lane_f32(wc + K + j, wj, 1);
            wj = vld1q_lane_f32(wc + 2 * K + j, wj, 2);
            wj = vld1q_lane_f32(wc + 3 * K + j, wj, 3);
            float32x4_t h = j + 1 < K ? vld1q_f32(hist + j * hist_stride + c) : vld1q_f32(x + c);
            float32x4_t p = vmulq_f32(h, wj);
            sum = vaddq_f32(sum, p);
#ifndef __aarch64__
            normal = vandq_u32(normal, vandq_u32(vcgeq_f32(vabsq_f32(p), tiny), vcgeq_f32(vabsq_f32(sum), tiny)));
#endif
        }
#ifndef __aarch64__
        uint32x2_t m = vand_u32(vget_low_u32(normal), vget_high_u32(normal));
        if ((vget_lane_u32(m, 0) & vget_lane_u32(m, 1)) != ~0u) {
            conv_scalar(out, hist, hist_stride, x, w, K, c, c + 4);
            continue;
        }
#endif
        for (uint32_t j = 1; j + 1 < K; j++) vst1q_f32(hist + (j - 1) * hist_stride + c, vld1q_f32(hist + j * hist_stride + c));
        if (K > 1) vst1q_f32(hist + (uint64_t)(K - 2) * hist_stride + c, vld1q_f32(x + c));
        vst1q_f32(out + c, sum);
    }
    conv_scalar(out, hist, hist_stride, x, w, K, c, n);
}

#endif
