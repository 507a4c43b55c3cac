/* kernels_arm.c - NEON kernels: aarch64 with and without dotprod, armv7.
 *
 * Three sets, chosen at run time from port_cpu():
 *   aarch64 NEON+dotprod  SDOT does 16 int8 products into 4 int32 lanes in
 *                         one instruction (Cortex-A55/A76: Pi 5);
 *   aarch64 NEON          the same with SMULL/SMLAL2/SADALP (Cortex-A53/A72:
 *                         Pi 3, 4, Zero 2 W);
 *   armv7 NEON            the 32-bit build (-mfpu=neon-vfpv4) on any of them.
 * armv6 has no NEON and keeps the reference kernels.
 *
 * Every kernel body is written once as an always-inline function taking
 * `dp` (use SDOT) as a constant; the dotprod copies are compiled with
 * __attribute__((target("arch=armv8.2-a+dotprod"))), so the baseline
 * binary (-march=armv8-a) contains SDOT only inside them and kern_arm()
 * hands them out only when the CPU reports dotprod.
 *
 * Integer work follows the reference exactly (the same integer sum per
 * block or sub-block, exact in int16/int32 lanes: the bounds are stated
 * where products are summed); only the float accumulation order differs:
 * each token keeps 4 float lanes, summed at the end. A multi-token call
 * decodes each weight block once and applies it to every token of a group
 * of 4 (DEFINE_DOT), and each token's own sequence of
 * operations is the same whatever nt is (the determinism contract of
 * kernels.h).
 *
 * Per 32 weights and token the integer work is 2 SDOT (dotprod), or 4
 * widening multiply-adds into int16 + 1 pairwise widen for weights of at
 * most 64 in magnitude (all but Q8_0 and IQ4), else 2 x (SMULL, SMLAL2,
 * SADALP); then 1 convert and 1 FMA per block for the float step.
 *
 * Matmuls of several rows at once (KernelSet.rows, taken by kern_matmul
 * instead of the one-row kernels): F16 on both aarch64 sets (four rows and
 * four tokens per pass, here), Q8_0 and Q4_0 on the dotprod set (eight rows,
 * kernels_arm_rows.c) and on the set without (four rows and up to four
 * tokens, kernels_arm_rows4.c), Q4_K, Q5_K and Q6_K on both (four rows and up to two
 * tokens, kernels_arm_kq.c). Attention over many positions (dots_f16, wsum_f16)
 * converts each K/V row once for two query heads. */
#include <math.h>
#include <stddef.h>
#include <string.h>

#include "../../../port/port.h"
#include "kernels_arm.h"
#include "../quant.h"

/* The armv7 set needs what the armv7 toolchain gives: NEON, VFPv4 (fused
 * multiply-add) and the IEEE half-precision format (F16 conversions).
 * Little-endian only (blocks are read as 32-bit words in places). */
#if defined(__GNUC__) && defined(__ARM_NEON) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ &&                   \
    (defined(__aarch64__) || (defined(__ARM_FEATURE_FMA) && defined(__ARM_FP16_FORMAT_IEEE)))
#define ARM_KERNELS 1
#endif

#ifdef ARM_KERNELS
#include <arm_neon.h>

#include "kernels_neon.h"

#define INLINE static inline __attribute__((always_inline))
/* the token loops must unroll so the accumulators stay in registers */
#define UNROLL _Pragma("GCC unroll 8")

#define DOTPROD NEON_DOTPROD /* kernels_neon.h */

/* ---- small pieces shared by aarch64 and armv7 ---------------------------- */

static uint16_t le16(const uint8_t *p)
{
    return (uint16_t)(p[0] | (p[1] << 8));
}

INLINE float f16s(const uint8_t *p)
{
    return neon_f16_to_f32(le16(p));
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

INLINE int32_t hsum_s32(int32x4_t v)
{
#ifdef __aarch64__
    return vaddvq_s32(v);
#else
    int32x2_t s = vadd_s32(vget_low_s32(v), vget_high_s32(v));
    return vget_lane_s32(vpadd_s32(s, s), 0);
#endif
}

/* acc += a * b (fused on both targets: ARMv8 and VFPv4 have VFMA) */
INLINE float32x4_t fma4(float32x4_t acc, float32x4_t a, float32x4_t b)
{
    return vfmaq_f32(acc, a, b);
}

/* p + w[8..15] * a[8..15] as int16 lanes (SMLAL2 on aarch64). */
INLINE int16x8_t mlal_hi(int16x8_t p, int8x16_t w, int8x16_t a)
{
#ifdef __aarch64__
    return vmlal_high_s8(p, w, a);
#else
    return vmlal_s8(p, vget_high_s8(w), vget_high_s8(a));
#endif
}

/* The 16 products w[i] * a[i] summed in pairs: 8 int16 lanes. Any int8
 * weight fits: 2 * 128 * 127 < 2^15. */
INLINE int16x8_t mul16(int8x16_t w, int8x16_t a)
{
    return mlal_hi(vmull_s8(vget_low_s8(w), vget_low_s8(a)), w, a);
}

/* The 32 products of w0 (elements 0..15) and w1 (16..31) with a, summed in
 * fours: 8 int16 lanes. Only for weights with |w| <= 64 ("small": every
 * type but Q8_0 and the IQ4 levels): 4 * 64 * 127 < 2^15. */
INLINE int16x8_t mul32_small(int8x16_t w0, int8x16_t w1, const int8_t *a)
{
    int8x16_t a0 = vld1q_s8(a), a1 = vld1q_s8(a + 16);
    int16x8_t p = mlal_hi(vmull_s8(vget_low_s8(w0), vget_low_s8(a0)), w0, a0);
    p = vmlal_s8(p, vget_low_s8(w1), vget_low_s8(a1));
    return mlal_hi(p, w1, a1);
}

/* isum + s * (the 8 int16 lanes of p), exactly (int32 lanes). */
INLINE int32x4_t mlal_scaled(int32x4_t isum, int16x8_t p, int32_t s)
{
    isum = vmlal_n_s16(isum, vget_low_s16(p), (int16_t)s);
#ifdef __aarch64__
    return vmlal_high_n_s16(isum, p, (int16_t)s);
#else
    return vmlal_n_s16(isum, vget_high_s16(p), (int16_t)s);
#endif
}

/* acc + the 16 products w[i] * a[i] in 4 int32 lanes. Which lane gets
 * which product differs between SDOT and the widening multiplies; callers
 * only ever sum all 4 lanes of a group sharing one scale. */
INLINE int32x4_t dot16(int32x4_t acc, int8x16_t w, int8x16_t a, int dp)
{
#ifdef __aarch64__
    if (dp) {
        /* SDOT through asm: the intrinsic cannot appear in a function that
         * is also inlined into the baseline copies. The .arch line only
         * matters for unoptimised builds, where the dead branch stays. */
        __asm__(".arch armv8.2-a+dotprod\n\tsdot %0.4s, %1.16b, %2.16b" : "+w"(acc) : "w"(w), "w"(a));
        return acc;
    }
#else
    (void)dp;
#endif
    return vpadalq_s16(acc, mul16(w, a));
}

/* w . a over 32 elements in 4 int32 lanes. */
INLINE int32x4_t dot32(int8x16_t w0, int8x16_t w1, const int8_t *a, int small, int dp)
{
    if (small && !dp) return vpaddlq_s16(mul32_small(w0, w1, a));
    return dot16(dot16(vdupq_n_s32(0), w0, vld1q_s8(a), dp), w1, vld1q_s8(a + 16), dp);
}

/* isum + s * (32 weights . 32 activations at a), one scale s (|s| < 2^15) */
INLINE int32x4_t mac32(int32x4_t isum, int8x16_t w0, int8x16_t w1, const int8_t *a, int32_t s, int small, int dp)
{
    if (small && !dp) return mlal_scaled(isum, mul32_small(w0, w1, a), s);
    return vmlaq_n_s32(isum, dot32(w0, w1, a, 0, dp), s);
}

/* the same with one scale per 16 elements */
INLINE int32x4_t mac16x2(int32x4_t isum, int8x16_t w0, int8x16_t w1, const int8_t *a, int32_t s0, int32_t s1, int dp)
{
    if (!dp) {
        isum = mlal_scaled(isum, mul16(w0, vld1q_s8(a)), s0);
        return mlal_scaled(isum, mul16(w1, vld1q_s8(a + 16)), s1);
    }
    isum = vmlaq_n_s32(isum, dot16(vdupq_n_s32(0), w0, vld1q_s8(a), dp), s0);
    return vmlaq_n_s32(isum, dot16(vdupq_n_s32(0), w1, vld1q_s8(a + 16), dp), s1);
}

/* 16 signed bytes widened into out[0..15] (scales, for vmlaq_n_s32). */
INLINE void widen16(int8x16_t v, int32_t *out)
{
    int16x8_t lo = vmovl_s8(vget_low_s8(v)), hi = vmovl_s8(vget_high_s8(v));
    vst1q_s32(out, vmovl_s16(vget_low_s16(lo)));
    vst1q_s32(out + 4, vmovl_s16(vget_high_s16(lo)));
    vst1q_s32(out + 8, vmovl_s16(vget_low_s16(hi)));
    vst1q_s32(out + 12, vmovl_s16(vget_high_s16(hi)));
}

#ifndef __aarch64__ /* Q4_K/Q5_K's one-row kernel (below) is armv7's only */
/* Sum of the 8 bsums of 32 (pairs of the bsums of 16) times 8 coefficients
 * (Q4_K/Q5_K mins). The pair sums fit in int16: |bsum| <= 16 * 127. */
INLINE int32_t bsum32_dot(const KernQ8_K *a, int16x8_t c)
{
    int16x8_t b0 = vld1q_s16(a->bsum), b1 = vld1q_s16(a->bsum + 8);
    int16x8_t pairs = vcombine_s16(vpadd_s16(vget_low_s16(b0), vget_high_s16(b0)),
                                   vpadd_s16(vget_low_s16(b1), vget_high_s16(b1)));
    int32x4_t s = vmull_s16(vget_low_s16(pairs), vget_low_s16(c));
    s = vmlal_s16(s, vget_high_s16(pairs), vget_high_s16(c));
    return hsum_s32(s);
}
#endif

/* Sum of the 16 bsums times 16 int16 coefficients (Q2_K's mins). */
INLINE int32_t bsum_dot(const KernQ8_K *a, int16x8_t c0, int16x8_t c1)
{
    int16x8_t b0 = vld1q_s16(a->bsum), b1 = vld1q_s16(a->bsum + 8);
    int32x4_t s = vmull_s16(vget_low_s16(b0), vget_low_s16(c0));
    s = vmlal_s16(s, vget_high_s16(b0), vget_high_s16(c0));
    s = vmlal_s16(s, vget_low_s16(b1), vget_low_s16(c1));
    s = vmlal_s16(s, vget_high_s16(b1), vget_high_s16(c1));
    return hsum_s32(s);
}

/* The 16 IQ4_NL levels indexed by 16 nibbles. */
INLINE int8x16_t iq4_levels(uint8x16_t nib)
{
    int8x16_t table = vld1q_s8(quant_iq4nl_values);
#ifdef __aarch64__
    return vqtbl1q_s8(table, nib);
#else
    int8x8x2_t t = {{vget_low_s8(table), vget_high_s8(table)}};
    return vcombine_s8(vtbl2_s8(t, vreinterpret_s8_u8(vget_low_u8(nib))),
                       vtbl2_s8(t, vreinterpret_s8_u8(vget_high_u8(nib))));
#endif
}

/* Byte j of the result is 0x10 if bit j of the 16 bits is set (Q5_0/Q5_1). */
INLINE uint8x16_t bit4_from_bits(uint32_t bits)
{
    static const uint8_t mask[16] = {1, 2, 4, 8, 16, 32, 64, 128, 1, 2, 4, 8, 16, 32, 64, 128};
    uint8x16_t v = vcombine_u8(vdup_n_u8((uint8_t)bits), vdup_n_u8((uint8_t)(bits >> 8)));
    return vandq_u8(vtstq_u8(v, vld1q_u8(mask)), vdupq_n_u8(0x10));
}

#define ACT(T, t) ((const T *)((const uint8_t *)act + (uint64_t)(t) * act_stride))
/* Most tokens one body call handles (its accumulator arrays); see DEFINE_DOT. */
#define MAX_GROUP 4

/* ---- activation quantization: the same bytes as the reference ------------ */

/* Nearest integer, ties to even, like the reference's lrintf. */
INLINE int32x4_t round4(float32x4_t v)
{
#ifdef __aarch64__
    return vcvtnq_s32_f32(v);
#else
    /* armv7 NEON converts by truncation: adding 1.5 * 2^23 leaves v rounded
     * to an integer (nearest, ties to even) for |v| < 2^22 (ours are <= 127). */
    const float32x4_t magic = vdupq_n_f32(12582912.0f);
    return vcvtq_s32_f32(vsubq_f32(vaddq_f32(v, magic), magic));
#endif
}

/* Largest |x| of the vectors, ignoring NaN like fmaxf on aarch64 (FMAXNM).
 * armv7 NEON propagates NaN and flushes denormals to zero; the callers send
 * those cases to the reference. */
INLINE float amax_vecs(const float32x4_t *v, int nv)
{
    float32x4_t m0 = vabsq_f32(v[0]), m1 = vabsq_f32(v[1]);
    UNROLL
    for (int i = 2; i < nv; i += 2) {
#ifdef __aarch64__
        m0 = vmaxnmq_f32(m0, vabsq_f32(v[i]));
        m1 = vmaxnmq_f32(m1, vabsq_f32(v[i + 1]));
    }
    return vmaxnmvq_f32(vmaxnmq_f32(m0, m1));
#else
        m0 = vmaxq_f32(m0, vabsq_f32(v[i]));
        m1 = vmaxq_f32(m1, vabsq_f32(v[i + 1]));
    }
    m0 = vmaxq_f32(m0, m1);
    float32x2_t h = vpmax_f32(vget_low_f32(m0), vget_high_f32(m0));
    return vget_lane_f32(vpmax_f32(h, h), 0);
#endif
}

/* Four vectors (16 floats) times id, rounded, as 16 codes; *sum gets the
 * codes' sums in int16 lanes. |x| <= amax makes |x * id| round to at most
 * 127, so an integer's low byte is its code: UZP1 (aarch64) or VMOVN keeps
 * it, one instruction per eight codes. */
INLINE int8x16_t quant4(const float32x4_t *v, float id, int16x8_t *sum)
{
    int32x4_t i0 = round4(vmulq_n_f32(v[0], id)), i1 = round4(vmulq_n_f32(v[1], id));
    int32x4_t i2 = round4(vmulq_n_f32(v[2], id)), i3 = round4(vmulq_n_f32(v[3], id));
#ifdef __aarch64__
    int16x8_t lo = vuzp1q_s16(vreinterpretq_s16_s32(i0), vreinterpretq_s16_s32(i1));
    int16x8_t hi = vuzp1q_s16(vreinterpretq_s16_s32(i2), vreinterpretq_s16_s32(i3));
    *sum = vaddq_s16(lo, hi);
    return vuzp1q_s8(vreinterpretq_s8_s16(lo), vreinterpretq_s8_s16(hi));
#else
    int16x8_t lo = vcombine_s16(vmovn_s32(i0), vmovn_s32(i1)), hi = vcombine_s16(vmovn_s32(i2), vmovn_s32(i3));
    *sum = vaddq_s16(lo, hi);
    return vcombine_s8(vmovn_s16(lo), vmovn_s16(hi));
#endif
}

INLINE int32_t hsum_s16(int16x8_t v)
{
#ifdef __aarch64__
    return vaddlvq_s16(v);
#else
    return hsum_s32(vpaddlq_s16(v));
#endif
}

/* A block goes to the reference when its largest magnitude is NaN, zero or
 * below 1e-30: there flushing denormals (armv7) could change a byte, and
 * below 127 / FLT_MAX 127 / amax overflows, where the conversions saturate
 * and lrintf may not. */
INLINE int amax_ok(float amax)
{
    return amax >= 1e-30f;
}

/* Q8_0: the block's eight vectors loaded once for its largest magnitude
 * and its codes. */
static void neon_quantize_q8_0(const float *x, KernQ8_0 *out, uint64_t n)
{
    for (uint64_t b = 0; b < n / QK8_0; b++, x += QK8_0) {
        float32x4_t v[8];
        UNROLL
        for (int i = 0; i < 8; i++) v[i] = vld1q_f32(x + 4 * i);
        float amax = amax_vecs(v, 8);
        if (!amax_ok(amax)) {
            kern_ref_quantize_q8_0(x, &out[b], QK8_0);
            continue;
        }
        float id = 127.0f / amax;
        int16x8_t s0, s1;
        vst1q_s8(out[b].q, quant4(v, id, &s0));
        vst1q_s8(out[b].q + 16, quant4(v + 4, id, &s1));
        out[b].d = amax / 127.0f;
        out[b].sum = hsum_s16(vaddq_s16(s0, s1));
    }
}

/* Q8_K: 256 floats do not fit in the registers; one pass for the largest
 * magnitude, one for the codes, 16 (one bsum) at a time. */
static void neon_quantize_q8_k(const float *x, KernQ8_K *out, uint64_t n)
{
    for (uint64_t b = 0; b < n / QK_K; b++, x += QK_K) {
        float32x4_t m[4];
        UNROLL
        for (int i = 0; i < 4; i++) m[i] = vabsq_f32(vld1q_f32(x + 4 * i));
        for (int j = 16; j < QK_K; j += 16)
            UNROLL
            for (int i = 0; i < 4; i++)
#ifdef __aarch64__
                m[i] = vmaxnmq_f32(m[i], vabsq_f32(vld1q_f32(x + j + 4 * i)));
#else
                m[i] = vmaxq_f32(m[i], vabsq_f32(vld1q_f32(x + j + 4 * i)));
#endif
        float amax = amax_vecs(m, 4);
        if (!amax_ok(amax)) {
            kern_ref_quantize_q8_k(x, &out[b], QK_K);
            continue;
        }
        float id = 127.0f / amax;
        for (int g = 0; g < 16; g++) {
            float32x4_t v[4];
            int16x8_t s;
            UNROLL
            for (int i = 0; i < 4; i++) v[i] = vld1q_f32(x + 16 * g + 4 * i);
            vst1q_s8(out[b].q + 16 * g, quant4(v, id, &s));
            out[b].bsum[g] = (int16_t)hsum_s16(s);
        }
        out[b].d = amax / 127.0f;
    }
}

/* ---- types with blocks of QK8_0 (32) against KernQ8_0 ---------------------- */

/* kind: GGML_TYPE_Q8_0, Q4_0, Q4_1, Q5_0, Q5_1 or IQ4_NL (a compile-time
 * constant: each kernel its own inlined copy) */

/* The 32 weight codes of a block as signed bytes (elements 0..15 in w0,
 * 16..31 in w1), its scale and (Q4_1, Q5_1) its min. */
INLINE void b32_decode(int kind, const uint8_t *row, int8x16_t *w0, int8x16_t *w1, float *dw, float *mw)
{
    *dw = f16s(row);
    *mw = 0.0f;
    if (kind == GGML_TYPE_Q8_0) {
        *w0 = vld1q_s8((const int8_t *)row + offsetof(BlockQ8_0, qs));
        *w1 = vld1q_s8((const int8_t *)row + offsetof(BlockQ8_0, qs) + 16);
        return;
    }
    int with_min = kind == GGML_TYPE_Q4_1 || kind == GGML_TYPE_Q5_1;
    if (with_min) *mw = f16s(row + offsetof(BlockQ4_1, m));
    /* the codes (Q5_*: their fifth bits first) follow the scale(s) */
    const uint8_t *p = row + (with_min ? offsetof(BlockQ4_1, qs) : offsetof(BlockQ4_0, qs));
    uint32_t qh = 0;
    if (kind == GGML_TYPE_Q5_0 || kind == GGML_TYPE_Q5_1) {
        qh = (uint32_t)le16(p) | ((uint32_t)le16(p + 2) << 16);
        p += 4;
    }
    uint8x16_t b = vld1q_u8(p);
    uint8x16_t lo = vandq_u8(b, vdupq_n_u8(15)), hi = vshrq_n_u8(b, 4);
    if (kind == GGML_TYPE_IQ4_NL) {
        *w0 = iq4_levels(lo);
        *w1 = iq4_levels(hi);
        return;
    }
    if (kind == GGML_TYPE_Q5_0 || kind == GGML_TYPE_Q5_1) {
        lo = vorrq_u8(lo, bit4_from_bits(qh));
        hi = vorrq_u8(hi, bit4_from_bits(qh >> 16));
    }
    int8x16_t s0 = vreinterpretq_s8_u8(lo), s1 = vreinterpretq_s8_u8(hi);
    if (kind == GGML_TYPE_Q4_0 || kind == GGML_TYPE_Q5_0) {
        int8x16_t off = vdupq_n_s8(kind == GGML_TYPE_Q4_0 ? 8 : 16);
        s0 = vsubq_s8(s0, off);
        s1 = vsubq_s8(s1, off);
    }
    *w0 = s0;
    *w1 = s1;
}

INLINE void b32_body(uint64_t n, const uint8_t *row, const void *act, uint64_t act_stride, int nt, float *out,
                     uint64_t out_stride, int kind, int dp)
{
    float32x4_t acc[MAX_GROUP];
    float accm[MAX_GROUP];
    int with_min = kind == GGML_TYPE_Q4_1 || kind == GGML_TYPE_Q5_1;
    int small = kind != GGML_TYPE_Q8_0 && kind != GGML_TYPE_IQ4_NL;
    uint64_t bytes = GGML_BLOCK_BYTES(kind);
    UNROLL for (int t = 0; t < nt; t++) acc[t] = vdupq_n_f32(0.0f), accm[t] = 0.0f;
    for (uint64_t b = 0; b < n / QK8_0; b++, row += bytes) {
        int8x16_t w0, w1;
        float dw, mw;
        b32_decode(kind, row, &w0, &w1, &dw, &mw);
        UNROLL for (int t = 0; t < nt; t++) {
            const KernQ8_0 *a = ACT(KernQ8_0, t) + b;
            int32x4_t s = dot32(w0, w1, a->q, small, dp);
            acc[t] = fma4(acc[t], vcvtq_f32_s32(s), vdupq_n_f32(dw * a->d));
            if (with_min) accm[t] += mw * a->d * (float)a->sum;
        }
    }
    UNROLL for (int t = 0; t < nt; t++) {
        float r = hsum_f32(acc[t]);
        if (with_min) r += accm[t];
        out[(uint64_t)t * out_stride] = r;
    }
}

/* ---- K-quants against KernQ8_K ------------------------------------------- */

#ifndef __aarch64__ /* aarch64 runs the four-row kernels (kernels_arm_kq.c) one row at a time */
/* Q4_K / Q5_K (five): 8 sub-blocks of 32 with 6-bit scales and mins. */
INLINE void q45_k_body(uint64_t n, const uint8_t *row, const void *act, uint64_t act_stride, int nt, float *out,
                       uint64_t out_stride, int five, int dp)
{
    float32x4_t acc[MAX_GROUP];
    float accm[MAX_GROUP];
    uint64_t bytes = five ? sizeof(BlockQ5_K) : sizeof(BlockQ4_K);
    const uint8x16_t m4 = vdupq_n_u8(15), b4 = vdupq_n_u8(0x10);
    UNROLL for (int t = 0; t < nt; t++) acc[t] = vdupq_n_f32(0.0f), accm[t] = 0.0f;
    for (uint64_t b = 0; b < n / QK_K; b++, row += bytes) {
        float dw = f16s(row), dmin = f16s(row + offsetof(BlockQ4_K, dmin));
        /* the 12 packed bytes of 6-bit scales and mins (quant_q4k_scale_min),
         * four at a time as 32-bit words: (byte >> 6) << 4 = (byte >> 2) & 0x30 */
        uint32_t u[3], w[4];
        memcpy(u, row + offsetof(BlockQ4_K, scales), K_SCALE_SIZE);
        w[0] = u[0] & 0x3f3f3f3f;                                       /* scales 0..3 */
        w[1] = (u[2] & 0x0f0f0f0f) | ((u[0] >> 2) & 0x30303030);        /* scales 4..7 */
        w[2] = u[1] & 0x3f3f3f3f;                                       /* mins 0..3 */
        w[3] = ((u[2] >> 4) & 0x0f0f0f0f) | ((u[1] >> 2) & 0x30303030); /* mins 4..7 */
        uint8x16_t scm = vld1q_u8((const uint8_t *)w);
        int32_t sc[16];
        widen16(vreinterpretq_s8_u8(scm), sc); /* sc[0..7]; the mins follow */
        int16x8_t mins = vreinterpretq_s16_u16(vmovl_u8(vget_high_u8(scm)));
        const uint8_t *q = row + (five ? offsetof(BlockQ5_K, qs) : offsetof(BlockQ4_K, qs));
        /* Q5_K: bit j of qh[l] is the fifth bit of element l of sub-block j;
         * shifted down by 2 per pair of sub-blocks */
        uint8x16_t h0 = vdupq_n_u8(0), h1 = vdupq_n_u8(0);
        if (five) h0 = vld1q_u8(row + offsetof(BlockQ5_K, qh)), h1 = vld1q_u8(row + offsetof(BlockQ5_K, qh) + 16);
        int32x4_t isum[MAX_GROUP];
        UNROLL for (int t = 0; t < nt; t++) isum[t] = vdupq_n_s32(0);
        for (int p = 0; p < 4; p++) { /* 32 bytes: sub-blocks 2p (low nibbles) and 2p+1 (high) */
            uint8x16_t v0 = vld1q_u8(q + 32 * p), v1 = vld1q_u8(q + 32 * p + 16);
            uint8x16_t lo0 = vandq_u8(v0, m4), lo1 = vandq_u8(v1, m4);
            uint8x16_t hi0 = vshrq_n_u8(v0, 4), hi1 = vshrq_n_u8(v1, 4);
            if (five) {
                lo0 = vorrq_u8(lo0, vandq_u8(vshlq_n_u8(h0, 4), b4));
                lo1 = vorrq_u8(lo1, vandq_u8(vshlq_n_u8(h1, 4), b4));
                hi0 = vorrq_u8(hi0, vandq_u8(vshlq_n_u8(h0, 3), b4));
                hi1 = vorrq_u8(hi1, vandq_u8(vshlq_n_u8(h1, 3), b4));
                h0 = vshrq_n_u8(h0, 2);
                h1 = vshrq_n_u8(h1, 2);
            }
            UNROLL for (int t = 0; t < nt; t++) {
                const int8_t *aq = ACT(KernQ8_K, t)[b].q + 64 * p;
                isum[t] = mac32(isum[t], vreinterpretq_s8_u8(lo0), vreinterpretq_s8_u8(lo1), aq, sc[2 * p], 1, dp);
                isum[t] = mac32(isum[t], vreinterpretq_s8_u8(hi0), vreinterpretq_s8_u8(hi1), aq + 32, sc[2 * p + 1], 1, dp);
            }
        }
        UNROLL for (int t = 0; t < nt; t++) {
            const KernQ8_K *a = ACT(KernQ8_K, t) + b;
            acc[t] = fma4(acc[t], vcvtq_f32_s32(isum[t]), vdupq_n_f32(dw * a->d));
            accm[t] += dmin * a->d * (float)bsum32_dot(a, mins);
        }
    }
    UNROLL for (int t = 0; t < nt; t++) out[(uint64_t)t * out_stride] = hsum_f32(acc[t]) - accm[t];
}
#endif

/* Q2_K: 2-bit codes, 16 sub-blocks of 16 with a 4-bit scale and min each. */
INLINE void q2_k_body(uint64_t n, const uint8_t *row, const void *act, uint64_t act_stride, int nt, float *out,
                      uint64_t out_stride, int kind, int dp)
{
    (void)kind;
    float32x4_t acc[MAX_GROUP];
    float accm[MAX_GROUP];
    const uint8x16_t m3 = vdupq_n_u8(3);
    UNROLL for (int t = 0; t < nt; t++) acc[t] = vdupq_n_f32(0.0f), accm[t] = 0.0f;
    for (uint64_t b = 0; b < n / QK_K; b++, row += sizeof(BlockQ2_K)) {
        float dw = f16s(row + offsetof(BlockQ2_K, d)), dmin = f16s(row + offsetof(BlockQ2_K, dmin));
        uint8x16_t mins = vshrq_n_u8(vld1q_u8(row), 4);
        int16x8_t mins0 = vreinterpretq_s16_u16(vmovl_u8(vget_low_u8(mins)));
        int16x8_t mins1 = vreinterpretq_s16_u16(vmovl_u8(vget_high_u8(mins)));
        int32_t sc[16];
        widen16(vreinterpretq_s8_u8(vandq_u8(vld1q_u8(row), vdupq_n_u8(15))), sc);
        int32x4_t isum[MAX_GROUP];
        UNROLL for (int t = 0; t < nt; t++) isum[t] = vdupq_n_s32(0);
        for (int h = 0; h < 2; h++) { /* 128 elements from 32 bytes, 2 bits at a time */
            uint8x16_t q0 = vld1q_u8(row + offsetof(BlockQ2_K, qs) + 32 * h);
            uint8x16_t q1 = vld1q_u8(row + offsetof(BlockQ2_K, qs) + 16 + 32 * h);
            for (int k = 0; k < 4; k++) {
                int8x16_t w0 = vreinterpretq_s8_u8(vandq_u8(q0, m3)), w1 = vreinterpretq_s8_u8(vandq_u8(q1, m3));
                q0 = vshrq_n_u8(q0, 2);
                q1 = vshrq_n_u8(q1, 2);
                UNROLL for (int t = 0; t < nt; t++) {
                    const int8_t *aq = ACT(KernQ8_K, t)[b].q + 128 * h + 32 * k;
                    isum[t] = mac16x2(isum[t], w0, w1, aq, sc[8 * h + 2 * k], sc[8 * h + 2 * k + 1], dp);
                }
            }
        }
        UNROLL for (int t = 0; t < nt; t++) {
            const KernQ8_K *a = ACT(KernQ8_K, t) + b;
            acc[t] = fma4(acc[t], vcvtq_f32_s32(isum[t]), vdupq_n_f32(dw * a->d));
            accm[t] += dmin * a->d * (float)bsum_dot(a, mins0, mins1);
        }
    }
    UNROLL for (int t = 0; t < nt; t++) out[(uint64_t)t * out_stride] = hsum_f32(acc[t]) - accm[t];
}

/* Q3_K: 2-bit codes minus 4 where the hmask bit is clear, 6-bit scales - 32. */
INLINE void q3_k_body(uint64_t n, const uint8_t *row, const void *act, uint64_t act_stride, int nt, float *out,
                      uint64_t out_stride, int kind, int dp)
{
    (void)kind;
    float32x4_t acc[MAX_GROUP];
    const uint8x16_t m3 = vdupq_n_u8(3), four = vdupq_n_u8(4);
    UNROLL for (int t = 0; t < nt; t++) acc[t] = vdupq_n_f32(0.0f);
    for (uint64_t b = 0; b < n / QK_K; b++, row += sizeof(BlockQ3_K)) {
        float dw = f16s(row + offsetof(BlockQ3_K, d));
        /* the 16 6-bit scales (quant_q3k_scale), four at a time as 32-bit
         * words: low 4 bits from bytes 0..7, high 2 bits from bytes 8..11 */
        uint32_t u[3], w[4];
        memcpy(u, row + offsetof(BlockQ3_K, scales), sizeof u);
        for (int k = 0; k < 4; k++)
            w[k] = ((u[k % 2] >> (4 * (k / 2))) & 0x0f0f0f0f) | (((u[2] >> (2 * k)) & 0x03030303) << 4);
        int32_t sc[16];
        widen16(vsubq_s8(vld1q_s8((const int8_t *)w), vdupq_n_s8(32)), sc);
        uint8x16_t hm0 = vld1q_u8(row + offsetof(BlockQ3_K, hmask)), hm1 = vld1q_u8(row + offsetof(BlockQ3_K, hmask) + 16);
        int32x4_t isum[MAX_GROUP];
        UNROLL for (int t = 0; t < nt; t++) isum[t] = vdupq_n_s32(0);
        for (int h = 0; h < 2; h++) {
            uint8x16_t q0 = vld1q_u8(row + offsetof(BlockQ3_K, qs) + 32 * h);
            uint8x16_t q1 = vld1q_u8(row + offsetof(BlockQ3_K, qs) + 16 + 32 * h);
            for (int k = 0; k < 4; k++) {
                /* hmask bit 4h + k of byte l belongs to element l of this quarter */
                uint8x16_t bit = vdupq_n_u8((uint8_t)(1u << (4 * h + k)));
                uint8x16_t minus0 = vbicq_u8(four, vtstq_u8(hm0, bit)), minus1 = vbicq_u8(four, vtstq_u8(hm1, bit));
                int8x16_t w0 = vsubq_s8(vreinterpretq_s8_u8(vandq_u8(q0, m3)), vreinterpretq_s8_u8(minus0));
                int8x16_t w1 = vsubq_s8(vreinterpretq_s8_u8(vandq_u8(q1, m3)), vreinterpretq_s8_u8(minus1));
                q0 = vshrq_n_u8(q0, 2);
                q1 = vshrq_n_u8(q1, 2);
                UNROLL for (int t = 0; t < nt; t++) {
                    const int8_t *aq = ACT(KernQ8_K, t)[b].q + 128 * h + 32 * k;
                    isum[t] = mac16x2(isum[t], w0, w1, aq, sc[8 * h + 2 * k], sc[8 * h + 2 * k + 1], dp);
                }
            }
        }
        UNROLL for (int t = 0; t < nt; t++) {
            const KernQ8_K *a = ACT(KernQ8_K, t) + b;
            acc[t] = fma4(acc[t], vcvtq_f32_s32(isum[t]), vdupq_n_f32(dw * a->d));
        }
    }
    UNROLL for (int t = 0; t < nt; t++) out[(uint64_t)t * out_stride] = hsum_f32(acc[t]);
}

/* IQ4_XS: IQ4_NL levels in 8 sub-blocks of 32 with 6-bit scales - 32. */
INLINE void iq4_xs_body(uint64_t n, const uint8_t *row, const void *act, uint64_t act_stride, int nt, float *out,
                        uint64_t out_stride, int kind, int dp)
{
    (void)kind;
    float32x4_t acc[MAX_GROUP];
    UNROLL for (int t = 0; t < nt; t++) acc[t] = vdupq_n_f32(0.0f);
    for (uint64_t b = 0; b < n / QK_K; b++, row += sizeof(BlockIQ4_XS)) {
        float dw = f16s(row);
        uint16_t sh = le16(row + offsetof(BlockIQ4_XS, scales_h));
        int32x4_t isum[MAX_GROUP];
        UNROLL for (int t = 0; t < nt; t++) isum[t] = vdupq_n_s32(0);
        for (int j = 0; j < 8; j++) {
            int32_t s = (((row[offsetof(BlockIQ4_XS, scales_l) + j / 2] >> (4 * (j % 2))) & 15) | (((sh >> (2 * j)) & 3) << 4)) - 32;
            uint8x16_t v = vld1q_u8(row + offsetof(BlockIQ4_XS, qs) + 16 * j);
            int8x16_t w0 = iq4_levels(vandq_u8(v, vdupq_n_u8(15))), w1 = iq4_levels(vshrq_n_u8(v, 4));
            UNROLL for (int t = 0; t < nt; t++) isum[t] = mac32(isum[t], w0, w1, ACT(KernQ8_K, t)[b].q + 32 * j, s, 0, dp);
        }
        UNROLL for (int t = 0; t < nt; t++) {
            const KernQ8_K *a = ACT(KernQ8_K, t) + b;
            acc[t] = fma4(acc[t], vcvtq_f32_s32(isum[t]), vdupq_n_f32(dw * a->d));
        }
    }
    UNROLL for (int t = 0; t < nt; t++) out[(uint64_t)t * out_stride] = hsum_f32(acc[t]);
}

/* ---- float weights against float activations ------------------------------- */

/* kind: GGML_TYPE_F32, F16 or BF16 (a compile-time constant) */

/* 4 weights of the row as floats (rows may be unaligned: byte loads). */
INLINE float32x4_t load4w(int kind, const uint8_t *p)
{
    if (kind == GGML_TYPE_F32) return vreinterpretq_f32_u8(vld1q_u8(p));
    uint16x4_t h = vreinterpret_u16_u8(vld1_u8(p));
    if (kind == GGML_TYPE_F16) return vcvt_f32_f16(vreinterpret_f16_u16(h));
    return vreinterpretq_f32_u32(vshll_n_u16(h, 16));
}

INLINE float scalar_weight(int kind, const uint8_t *p)
{
    if (kind == GGML_TYPE_F32) {
        float f;
        memcpy(&f, p, 4);
        return f;
    }
    return kind == GGML_TYPE_F16 ? f16s(p) : quant_bf16_to_f32(le16(p));
}

/* 16 elements per step into two accumulators per token, tail in scalar. */
INLINE void float_body(uint64_t n, const uint8_t *row, const void *act, uint64_t act_stride, int nt, float *out,
                       uint64_t out_stride, int kind, int dp)
{
    (void)dp;
    float32x4_t a0[MAX_GROUP], a1[MAX_GROUP];
    uint64_t esz = kind == GGML_TYPE_F32 ? 4 : 2, i = 0;
    UNROLL for (int t = 0; t < nt; t++) a0[t] = a1[t] = vdupq_n_f32(0.0f);
    for (; i + 16 <= n; i += 16) {
        const uint8_t *p = row + i * esz;
        float32x4_t w0 = load4w(kind, p), w1 = load4w(kind, p + 4 * esz);
        float32x4_t w2 = load4w(kind, p + 8 * esz), w3 = load4w(kind, p + 12 * esz);
        UNROLL for (int t = 0; t < nt; t++) {
            const float *x = ACT(float, t) + i;
            a0[t] = fma4(a0[t], w0, vld1q_f32(x));
            a1[t] = fma4(a1[t], w1, vld1q_f32(x + 4));
            a0[t] = fma4(a0[t], w2, vld1q_f32(x + 8));
            a1[t] = fma4(a1[t], w3, vld1q_f32(x + 12));
        }
    }
    UNROLL for (int t = 0; t < nt; t++) {
        const float *x = ACT(float, t);
        float s = hsum_f32(vaddq_f32(a0[t], a1[t]));
        for (uint64_t k = i; k < n; k++) s += scalar_weight(kind, row + k * esz) * x[k];
        out[(uint64_t)t * out_stride] = s;
    }
}

/* ---- F16 weights, several rows per pass (KernelSet.rows) -------------------- */
/* Tokens per pass: 4 on aarch64 (32 vector registers), 2 on armv7 (16). */
#ifdef __aarch64__
#define F16_GROUP 4
#else
#define F16_GROUP 2
#endif
/* Rows w[0..3] against tokens x[0..nt-1] (nt 1 or F16_GROUP, a constant after
 * inlining): each row's 8 weights converted once for all the tokens, each
 * token's 8 activations loaded once for the 4 rows. Row r and token t get
 * one 4-lane sum (lane i: elements = i mod 4, in order), then its lanes
 * added (FADDP order), then the tail in order: the same whatever the tile
 * or the number of tokens. */
INLINE void f16_tile(const uint8_t *const *w, const float *const *x, int nt, uint64_t n, float (*res)[4])
{
    float32x4_t acc[4][4];
    UNROLL for (int r = 0; r < 4; r++) UNROLL for (int t = 0; t < nt; t++) acc[r][t] = vdupq_n_f32(0.0f);
    uint64_t j = n / 8 * 8;
#ifdef __aarch64__
    if (nt == 4 && j) {
        /* as below, in assembly (GCC moves the 16 sums around the
         * registers): sum of row r and token t in v(4r + t), token t's
         * first four activations in v(24 + 2t), the next four v(25 + 2t) */
        const uint8_t *w0 = w[0], *w1 = w[1], *w2 = w[2], *w3 = w[3];
        const float *x0 = x[0], *x1 = x[1], *x2 = x[2], *x3 = x[3];
        uint64_t cnt = j / 8;
        float32x4_t *ap = &acc[0][0];
        __asm__ volatile("ldp q0, q1, [%[ap]]\n\t"
                         "ldp q2, q3, [%[ap], #32]\n\t"
                         "ldp q4, q5, [%[ap], #64]\n\t"
                         "ldp q6, q7, [%[ap], #96]\n\t"
                         "ldp q8, q9, [%[ap], #128]\n\t"
                         "ldp q10, q11, [%[ap], #160]\n\t"
                         "ldp q12, q13, [%[ap], #192]\n\t"
                         "ldp q14, q15, [%[ap], #224]\n\t"
                         "1:\n\t"
                         "ldr q16, [%[w0]], #16\n\t"
                         "ldr q17, [%[w1]], #16\n\t"
                         "ldr q18, [%[w2]], #16\n\t"
                         "ldr q19, [%[w3]], #16\n\t"
                         "fcvtl2 v20.4s, v16.8h\n\t"
                         "fcvtl2 v21.4s, v17.8h\n\t"
                         "fcvtl2 v22.4s, v18.8h\n\t"
                         "fcvtl2 v23.4s, v19.8h\n\t"
                         "fcvtl v16.4s, v16.4h\n\t"
                         "fcvtl v17.4s, v17.4h\n\t"
                         "fcvtl v18.4s, v18.4h\n\t"
                         "fcvtl v19.4s, v19.4h\n\t"
                         "ld1 {v24.4s, v25.4s}, [%[x0]], #32\n\t"
                         "ld1 {v26.4s, v27.4s}, [%[x1]], #32\n\t"
                         "ld1 {v28.4s, v29.4s}, [%[x2]], #32\n\t"
                         "ld1 {v30.4s, v31.4s}, [%[x3]], #32\n\t"
                         "fmla v0.4s, v16.4s, v24.4s\n\t" "fmla v1.4s, v16.4s, v26.4s\n\t" "fmla v2.4s, v16.4s, v28.4s\n\t" "fmla v3.4s, v16.4s, v30.4s\n\t"
                         "fmla v4.4s, v17.4s, v24.4s\n\t" "fmla v5.4s, v17.4s, v26.4s\n\t" "fmla v6.4s, v17.4s, v28.4s\n\t" "fmla v7.4s, v17.4s, v30.4s\n\t"
                         "fmla v8.4s, v18.4s, v24.4s\n\t" "fmla v9.4s, v18.4s, v26.4s\n\t" "fmla v10.4s, v18.4s, v28.4s\n\t" "fmla v11.4s, v18.4s, v30.4s\n\t"
                         "fmla v12.4s, v19.4s, v24.4s\n\t" "fmla v13.4s, v19.4s, v26.4s\n\t" "fmla v14.4s, v19.4s, v28.4s\n\t" "fmla v15.4s, v19.4s, v30.4s\n\t"
                         "fmla v0.4s, v20.4s, v25.4s\n\t" "fmla v1.4s, v20.4s, v27.4s\n\t" "fmla v2.4s, v20.4s, v29.4s\n\t" "fmla v3.4s, v20.4s, v31.4s\n\t"
                         "fmla v4.4s, v21.4s, v25.4s\n\t" "fmla v5.4s, v21.4s, v27.4s\n\t" "fmla v6.4s, v21.4s, v29.4s\n\t" "fmla v7.4s, v21.4s, v31.4s\n\t"
                         "fmla v8.4s, v22.4s, v25.4s\n\t" "fmla v9.4s, v22.4s, v27.4s\n\t" "fmla v10.4s, v22.4s, v29.4s\n\t" "fmla v11.4s, v22.4s, v31.4s\n\t"
                         "fmla v12.4s, v23.4s, v25.4s\n\t" "fmla v13.4s, v23.4s, v27.4s\n\t" "fmla v14.4s, v23.4s, v29.4s\n\t" "fmla v15.4s, v23.4s, v31.4s\n\t"
                         "subs %[cnt], %[cnt], #1\n\t"
                         "b.ne 1b\n\t"
                         "stp q0, q1, [%[ap]]\n\t"
                         "stp q2, q3, [%[ap], #32]\n\t"
                         "stp q4, q5, [%[ap], #64]\n\t"
                         "stp q6, q7, [%[ap], #96]\n\t"
                         "stp q8, q9, [%[ap], #128]\n\t"
                         "stp q10, q11, [%[ap], #160]\n\t"
                         "stp q12, q13, [%[ap], #192]\n\t"
                         "stp q14, q15, [%[ap], #224]\n\t"
                         : [w0] "+r"(w0), [w1] "+r"(w1), [w2] "+r"(w2), [w3] "+r"(w3), [x0] "+r"(x0), [x1] "+r"(x1),
                           [x2] "+r"(x2), [x3] "+r"(x3), [cnt] "+r"(cnt)
                         : [ap] "r"(ap)
                         : "v0", "v1", "v2", "v3", "v4", "v5", "v6", "v7", "v8", "v9", "v10", "v11", "v12", "v13",
                           "v14", "v15", "v16", "v17", "v18", "v19", "v20", "v21", "v22", "v23", "v24", "v25", "v26",
                           "v27", "v28", "v29", "v30", "v31", "cc", "memory");
    } else
#endif
    {
        for (size_t i = 0; i < (size_t)j; i += 8) { /* size_t: one add per step on armv7 */
            float32x4_t c[4][2];
            UNROLL for (int r = 0; r < 4; r++) {
#ifdef __aarch64__
                float16x8_t h = vreinterpretq_f16_u8(vld1q_u8(w[r] + 2 * i));
                c[r][0] = vcvt_f32_f16(vget_low_f16(h));
                c[r][1] = vcvt_high_f32_f16(h);
#else
                uint16x8_t h = vreinterpretq_u16_u8(vld1q_u8(w[r] + 2 * i));
                c[r][0] = vcvt_f32_f16(vreinterpret_f16_u16(vget_low_u16(h)));
                c[r][1] = vcvt_f32_f16(vreinterpret_f16_u16(vget_high_u16(h)));
#endif
            }
            UNROLL for (int t = 0; t < nt; t++) {
                float32x4_t a0 = vld1q_f32(x[t] + i), a1 = vld1q_f32(x[t] + i + 4);
                UNROLL for (int r = 0; r < 4; r++) acc[r][t] = fma4(fma4(acc[r][t], c[r][0], a0), c[r][1], a1);
            }
        }
    }
    UNROLL for (int r = 0; r < 4; r++) UNROLL for (int t = 0; t < nt; t++) {
        float s = hsum_f32(acc[r][t]);
        for (uint64_t k = j; k < n; k++) s += f16s(w[r] + 2 * k) * x[t][k];
        res[t][r] = s;
    }
}

static void neon_rows_f16(uint64_t n, const uint8_t *w, uint64_t row_bytes, uint64_t nrows, const void *act,
                          uint64_t act_stride, int nt, float *out, uint64_t out_stride)
{
    for (uint64_t r0 = 0; r0 < nrows; r0 += 4) {
        const uint8_t *row[4];
        for (uint64_t r = 0; r < 4; r++) row[r] = w + (r0 + r < nrows ? r0 + r : nrows - 1) * row_bytes;
        uint64_t valid = nrows - r0 < 4 ? nrows - r0 : 4;
        for (int t0 = 0; t0 < nt; t0 += F16_GROUP) {
            int k = nt - t0 < F16_GROUP ? nt - t0 : F16_GROUP;
            const float *x[F16_GROUP];
            float res[F16_GROUP][4];
            for (int t = 0; t < F16_GROUP; t++) x[t] = ACT(float, t0 + (t < k ? t : k - 1));
            if (k == 1) f16_tile(row, x, 1, n, res);
            else f16_tile(row, x, F16_GROUP, n, res);
            for (int t = 0; t < k; t++) memcpy(out + (uint64_t)(t0 + t) * out_stride + r0, res[t], valid * sizeof(float));
        }
    }
}
#define NEON_ROWS_F16 [GGML_TYPE_F16] = neon_rows_f16,

/* ---- the multi-token frame ------------------------------------------------- */

/* A body specialised for 4 tokens (prefill: every weight block decoded
 * once for 4 tokens, the accumulators in registers) and for 1 (decoding
 * one token, and the few left over): two copies per kernel keep the
 * binary small. Each token's arithmetic is the same in both, so results
 * do not depend on how tokens are grouped. attr is empty or DOTPROD. */
#define DEFINE_DOT(attr, fname, body, kind, dp)                                                                  \
    attr static void fname(uint64_t n, const uint8_t *row, const void *act, uint64_t act_stride, int nt,        \
                           float *out, uint64_t out_stride)                                                     \
    {                                                                                                           \
        int t = 0;                                                                                              \
        for (; t + 4 <= nt; t += 4)                                                                             \
            body(n, row, (const uint8_t *)act + (uint64_t)t * act_stride, act_stride, 4,                        \
                 out + (uint64_t)t * out_stride, out_stride, kind, dp);                                         \
        for (; t < nt; t++)                                                                                     \
            body(n, row, (const uint8_t *)act + (uint64_t)t * act_stride, act_stride, 1,                        \
                 out + (uint64_t)t * out_stride, out_stride, kind, dp);                                         \
    }

/* The integer kernels in a baseline copy (neon_NAME) and, on aarch64, a
 * dotprod copy (dp_NAME). */
#ifdef __aarch64__
#define INT_KERNEL(name, body, kind) \
    DEFINE_DOT(, neon_##name, body, kind, 0) DEFINE_DOT(DOTPROD, dp_##name, body, kind, 1)
#else
#define INT_KERNEL(name, body, kind) DEFINE_DOT(, neon_##name, body, kind, 0)
#endif

INT_KERNEL(q8_0, b32_body, GGML_TYPE_Q8_0)
INT_KERNEL(q4_0, b32_body, GGML_TYPE_Q4_0)
INT_KERNEL(q4_1, b32_body, GGML_TYPE_Q4_1)
INT_KERNEL(q5_0, b32_body, GGML_TYPE_Q5_0)
INT_KERNEL(q5_1, b32_body, GGML_TYPE_Q5_1)
INT_KERNEL(iq4_nl, b32_body, GGML_TYPE_IQ4_NL)
INT_KERNEL(q2_k, q2_k_body, 0)
INT_KERNEL(q3_k, q3_k_body, 0)
#ifndef __aarch64__ /* aarch64: the four-row kernels one row at a time (below); armv7: Q6_K's */
INT_KERNEL(q4_k, q45_k_body, 0)
INT_KERNEL(q5_k, q45_k_body, 1)
#endif
INT_KERNEL(iq4_xs, iq4_xs_body, 0)
DEFINE_DOT(, neon_f32, float_body, GGML_TYPE_F32, 0)
DEFINE_DOT(, neon_f16, float_body, GGML_TYPE_F16, 0)
DEFINE_DOT(, neon_bf16, float_body, GGML_TYPE_BF16, 0)

/* ---- the KV cache ---------------------------------------------------------- */

static float neon_dot_f16(const uint16_t *k, const float *q, uint32_t n)
{
    float32x4_t a0 = vdupq_n_f32(0.0f), a1 = vdupq_n_f32(0.0f);
    uint32_t i = 0;
    for (; i + 8 <= n; i += 8) {
        a0 = fma4(a0, vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(k + i))), vld1q_f32(q + i));
        a1 = fma4(a1, vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(k + i + 4))), vld1q_f32(q + i + 4));
    }
    float s = hsum_f32(vaddq_f32(a0, a1));
    for (; i < n; i++) s += q[i] * neon_f16_to_f32(k[i]);
    return s;
}

static void neon_axpy_f16(float *out, float a, const uint16_t *v, uint32_t n)
{
    float32x4_t va = vdupq_n_f32(a);
    uint32_t i = 0;
    for (; i + 4 <= n; i += 4)
        vst1q_f32(out + i, fma4(vld1q_f32(out + i), va, vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(v + i)))));
    for (; i < n; i++) out[i] += a * neon_f16_to_f32(v[i]);
}

/* Attention over many positions (KernelSet.dots_f16 / wsum_f16): each K or
 * V row is loaded and converted once for a tile of queries (the query heads
 * sharing a KV head, of one token or of several tokens of a prompt, which
 * see the same first rows), with the very float steps of neon_dot_f16 and
 * neon_axpy_f16 per query and position, so the bits are theirs. A tile's
 * queries take the rows all of them see together, then each its own rest.
 * The tile shapes are constants at each call, so the sums stay in
 * registers: aarch64 has 32 vector registers, armv7 16. */
#ifdef __aarch64__ /* dots: queries x positions (x 2 sums), wsum: queries x vectors of 4 elements */
#define DOT_Q 6
#define DOT_P 2  /* positions of DOT_Q queries, 24 sums */
#define DOT_P2 4 /* of 2 queries */
#define WSUM_Q 4
#define WSUM_V 4  /* 16 sums */
#define WSUM_V2 8 /* of 2 queries, and of one */
#else
#define DOT_Q 2
#define DOT_P 2
#define DOT_P2 2
#define WSUM_Q 2
#define WSUM_V 4
#define WSUM_V2 4
#endif
/* GCC's induction variable choice turns the stepped pointers into indexes
 * with an add per load; without it the loads post-index */
#if defined(__GNUC__) && !defined(__clang__) && defined(__aarch64__)
#define STEPPED __attribute__((optimize("no-ivopts")))
#else
#define STEPPED
#endif
#define ATT_MAXQ 6 /* array sizes: the largest tile */
#define ATT_MAXP 4
#define ATT_MAXV 8

/* 8 halves at p as two vectors of floats */
INLINE void f16x8(const uint16_t *p, float32x4_t *lo, float32x4_t *hi)
{
#ifdef __aarch64__
    float16x8_t h = vreinterpretq_f16_u16(vld1q_u16(p));
    *lo = vcvt_f32_f16(vget_low_f16(h));
    *hi = vcvt_high_f32_f16(h);
#else
    *lo = vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(p)));
    *hi = vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(p + 4)));
#endif
}

/* 8 floats at p (one LD1 of two registers on aarch64) */
INLINE float32x4x2_t f32x8(const float *p)
{
#ifdef __aarch64__
    return vld1q_f32_x2(p);
#else
    float32x4x2_t x = {{vld1q_f32(p), vld1q_f32(p + 4)}};
    return x;
#endif
}

/* The last n % 8 products of a tile's sums (in out), one at a time as
 * neon_dot_f16 (out of line: the tiles' unrolled copies would be many) */
__attribute__((noinline)) static void dots_tails(int Q, uint32_t cnt, const float *const *q, const uint16_t *const *k,
                                                 uint32_t j, uint32_t n, float *const *out, uint32_t p)
{
    for (int i = 0; i < Q; i++)
        for (uint32_t pp = 0; pp < cnt; pp++) {
            float s = out[i][p + pp];
            for (uint32_t t = j; t < n; t++) s += q[i][t] * neon_f16_to_f32(k[pp][t]);
            out[i][p + pp] = s;
        }
}

/* Scores of Q queries at positions p .. p + P - 1 (rows k + pp * stride):
 * out[i][p + pp] = q_i . k_p with neon_dot_f16's two sums (elements 0-3
 * and 4-7 of every 8) per pair; positions from cnt on repeat the last row
 * and are not stored. */
INLINE void dots_tile(const uint16_t *k, uint64_t stride, const float *const *q, int Q, int P, uint32_t cnt,
                      uint32_t n, float *const *out, uint32_t p)
{
    const uint16_t *kp[ATT_MAXP], *k0[ATT_MAXP];
    const float *qp[ATT_MAXQ];
    float32x4_t a[ATT_MAXQ][ATT_MAXP][2];
    UNROLL for (int pp = 0; pp < P; pp++) k0[pp] = kp[pp] = k + (pp < (int)cnt ? pp : (int)cnt - 1) * stride;
    UNROLL for (int i = 0; i < Q; i++) {
        qp[i] = q[i];
        UNROLL for (int pp = 0; pp < P; pp++) a[i][pp][0] = a[i][pp][1] = vdupq_n_f32(0.0f);
    }
    uint32_t j = n & ~7u;
    for (uint32_t b = n / 8; b; b--) { /* pointers stepped: post-indexed loads */
        float32x4_t c[ATT_MAXP][2];
        UNROLL for (int pp = 0; pp < P; pp++) {
            f16x8(kp[pp], &c[pp][0], &c[pp][1]);
            kp[pp] += 8;
        }
        UNROLL for (int i = 0; i < Q; i++) {
            float32x4x2_t x = f32x8(qp[i]);
            qp[i] += 8;
            UNROLL for (int pp = 0; pp < P; pp++) {
                a[i][pp][0] = fma4(a[i][pp][0], c[pp][0], x.val[0]);
                a[i][pp][1] = fma4(a[i][pp][1], c[pp][1], x.val[1]);
            }
        }
    }
#ifdef __aarch64__
    if (j == n && (Q * P) % 4 == 0 && (int)cnt == P) {
        /* four sums at once: two rounds of FADDP give each lane the steps
         * of hsum_f32, ((x0 + x1) + (x2 + x3)); four neighbours are one or
         * two queries' positions */
        UNROLL for (int g = 0; g < Q * P; g += 4) {
            float32x4_t v[4];
            UNROLL for (int l = 0; l < 4; l++) v[l] = vaddq_f32(a[(g + l) / P][(g + l) % P][0], a[(g + l) / P][(g + l) % P][1]);
            float32x4_t h = vpaddq_f32(vpaddq_f32(v[0], v[1]), vpaddq_f32(v[2], v[3]));
            if (P == 4) {
                vst1q_f32(out[g / P] + p, h);
            } else {
                vst1_f32(out[g / P] + p, vget_low_f32(h));
                vst1_f32(out[g / P + 1] + p, vget_high_f32(h));
            }
        }
        return;
    }
#endif
    UNROLL for (int i = 0; i < Q; i++) UNROLL for (int pp = 0; pp < P; pp++)
        if (pp < (int)cnt) out[i][p + pp] = hsum_f32(vaddq_f32(a[i][pp][0], a[i][pp][1]));
    if (j < n) dots_tails(Q, cnt, q, k0, j, n, out, p);
}

/* positions p0 .. p1 - 1 in tiles of P */
INLINE void dots_span(const uint16_t *k, uint64_t stride, uint32_t n, const float *const *q, int Q, int P,
                      float *const *out, uint32_t p0, uint32_t p1)
{
    for (uint32_t p = p0; p < p1; p += (uint32_t)P)
        dots_tile(k + p * stride, stride, q, Q, P, p1 - p < (uint32_t)P ? p1 - p : (uint32_t)P, n, out, p);
}

/* The queries (t, i) one after another, in tiles of DOT_Q (or 2, or 1). */
STEPPED static void neon_dots_f16(const uint16_t *k, uint64_t stride, uint32_t n, const float *q, uint64_t q_stride,
                          uint32_t nq, uint64_t q_tstride, uint32_t nt, const uint32_t *rows, float *out,
                          uint64_t out_stride)
{
    for (uint32_t u = 0, all = nq * nt; u < all;) {
        uint32_t m = all - u >= DOT_Q ? DOT_Q : all - u >= 4 ? 4 : all - u >= 2 ? 2 : 1, r[ATT_MAXQ], lo = UINT32_MAX;
        const float *qs[ATT_MAXQ];
        float *os[ATT_MAXQ];
        for (uint32_t i = 0; i < m; i++) {
            uint32_t t = (u + i) / nq;
            qs[i] = q + t * q_tstride + (u + i) % nq * q_stride;
            os[i] = out + (u + i) * out_stride;
            r[i] = rows[t];
            lo = r[i] < lo ? r[i] : lo;
        }
        if (m == DOT_Q) dots_span(k, stride, n, qs, DOT_Q, DOT_P, os, 0, lo);
#if DOT_Q > 2
        else if (m == 4) dots_span(k, stride, n, qs, 4, 2, os, 0, lo);
        else if (m == 2) dots_span(k, stride, n, qs, 2, DOT_P2, os, 0, lo);
#endif
        else dots_span(k, stride, n, qs, 1, DOT_P2, os, 0, lo);
        for (uint32_t i = 0; i < m; i++) /* a later token's last rows */
            if (r[i] > lo) dots_span(k, stride, n, qs + i, 1, 1, os + i, lo, r[i]);
        u += m;
    }
}

/* V vectors of 4 elements from p as floats (on aarch64 V = 4 by one LD1
 * of two registers; for 8 GCC then ran out of registers) */
INLINE void f16xv(const uint16_t *p, int V, float32x4_t *c)
{
    if (V == 1) {
        c[0] = vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(p)));
        return;
    }
    int m = 0;
#ifdef __aarch64__
    if (V == 4) {
        uint16x8x2_t h = vld1q_u16_x2(p);
        UNROLL for (int r = 0; r < 2; r++) {
            float16x8_t x = vreinterpretq_f16_u16(h.val[r]);
            c[2 * r] = vcvt_f32_f16(vget_low_f16(x));
            c[2 * r + 1] = vcvt_high_f32_f16(x);
        }
        m = 4;
    }
#endif
    UNROLL for (; m < V; m += 2) f16x8(p + 4 * m, &c[m], &c[m + 1]);
}

/* o_i[j .. j + 4V - 1] += w_i[p] * v_p[..] for p = p0 .. p1 - 1 in order,
 * Q queries, the sums in registers across the positions. On aarch64 the
 * weights of four positions come in one load per query (FMLA by lane). */
INLINE void wsum_tile(float *const *o, const float *const *w, int Q, int V, const uint16_t *v, uint64_t stride,
                      uint32_t j, uint32_t p0, uint32_t p1)
{
    float32x4_t a[ATT_MAXQ][ATT_MAXV];
    const float *wp[ATT_MAXQ];
    UNROLL for (int i = 0; i < Q; i++) {
        wp[i] = w[i] + p0;
        UNROLL for (int m = 0; m < V; m++) a[i][m] = vld1q_f32(o[i] + j + 4 * m);
    }
    const uint16_t *vp = v + p0 * stride + j;
    uint32_t p = p0;
#ifdef __aarch64__
#define WSUM_LANE(l)                                                                                             \
    do {                                                                                                         \
        f16xv(vp, V, c);                                                                                         \
        vp += stride;                                                                                            \
        UNROLL for (int i = 0; i < Q; i++) UNROLL for (int m = 0; m < V; m++)                                    \
            a[i][m] = vfmaq_laneq_f32(a[i][m], c[m], x[i], l);                                                   \
    } while (0)
    for (; p + 4 <= p1; p += 4) {
        float32x4_t x[ATT_MAXQ], c[ATT_MAXV];
        UNROLL for (int i = 0; i < Q; i++) {
            x[i] = vld1q_f32(wp[i]);
            wp[i] += 4;
        }
        WSUM_LANE(0);
        WSUM_LANE(1);
        WSUM_LANE(2);
        WSUM_LANE(3);
    }
#undef WSUM_LANE
#endif
    for (; p < p1; p++, vp += stride) {
        float32x4_t c[ATT_MAXV];
        f16xv(vp, V, c);
        UNROLL for (int i = 0; i < Q; i++) {
            float32x4_t x = vld1q_dup_f32(wp[i]++);
            UNROLL for (int m = 0; m < V; m++) a[i][m] = fma4(a[i][m], x, c[m]);
        }
    }
    UNROLL for (int i = 0; i < Q; i++) UNROLL for (int m = 0; m < V; m++) vst1q_f32(o[i] + j + 4 * m, a[i][m]);
}

/* the last n % 4 elements one at a time, as neon_axpy_f16 (out of line) */
__attribute__((noinline)) static void wsum_tails(float *const *o, const float *const *w, int Q, const uint16_t *v,
                                                 uint64_t stride, uint32_t j, uint32_t n, uint32_t p0, uint32_t p1)
{
    for (; j < n; j++)
        for (uint32_t p = p0; p < p1; p++)
            for (int i = 0; i < Q; i++) o[i][j] += w[i][p] * neon_f16_to_f32(v[p * stride + j]);
}

/* positions p0 .. p1 - 1 into all n elements: 4V at a time, then 4, then one */
INLINE void wsum_span(float *const *o, const float *const *w, int Q, int V, const uint16_t *v, uint64_t stride,
                      uint32_t n, uint32_t p0, uint32_t p1)
{
    uint32_t j = 0;
    for (; j + 4 * (uint32_t)V <= n; j += 4 * (uint32_t)V) wsum_tile(o, w, Q, V, v, stride, j, p0, p1);
    for (; j + 4 <= n; j += 4) /* one query at a time: one copy of the tile */
        for (int i = 0; i < Q; i++) wsum_tile(o + i, w + i, 1, 1, v, stride, j, p0, p1);
    if (j < n) wsum_tails(o, w, Q, v, stride, j, n, p0, p1);
}

STEPPED static void neon_wsum_f16(float *out, uint64_t out_stride, uint64_t out_tstride, const float *w, uint64_t w_stride,
                          uint32_t nq, uint32_t nt, const uint32_t *rows, const uint16_t *v, uint64_t stride,
                          uint32_t n)
{
    for (uint32_t u = 0, all = nq * nt; u < all;) {
        uint32_t m = all - u >= WSUM_Q ? WSUM_Q : all - u >= 2 ? 2 : 1, r[ATT_MAXQ], lo = UINT32_MAX;
        const float *ws[ATT_MAXQ];
        float *os[ATT_MAXQ];
        for (uint32_t i = 0; i < m; i++) {
            uint32_t t = (u + i) / nq;
            os[i] = out + t * out_tstride + (u + i) % nq * out_stride;
            ws[i] = w + (u + i) * w_stride;
            r[i] = rows[t];
            lo = r[i] < lo ? r[i] : lo;
        }
        if (m == WSUM_Q) wsum_span(os, ws, WSUM_Q, WSUM_V, v, stride, n, 0, lo);
#if WSUM_Q > 2
        else if (m == 2) wsum_span(os, ws, 2, WSUM_V2, v, stride, n, 0, lo);
#endif
        else wsum_span(os, ws, 1, WSUM_V2, v, stride, n, 0, lo);
        for (uint32_t i = 0; i < m; i++) /* a later token's last rows, after the others (order) */
            if (r[i] > lo) wsum_span(os + i, ws + i, 1, WSUM_V2, v, stride, n, lo, r[i]);
        u += m;
    }
}

static float neon_dot_f32(const float *k, const float *q, uint32_t n)
{
    float32x4_t a0 = vdupq_n_f32(0.0f), a1 = vdupq_n_f32(0.0f);
    uint32_t i = 0;
    for (; i + 8 <= n; i += 8) {
        a0 = fma4(a0, vld1q_f32(k + i), vld1q_f32(q + i));
        a1 = fma4(a1, vld1q_f32(k + i + 4), vld1q_f32(q + i + 4));
    }
    float s = hsum_f32(vaddq_f32(a0, a1));
    for (; i < n; i++) s += q[i] * k[i];
    return s;
}

static void neon_axpy_f32(float *out, float a, const float *v, uint32_t n)
{
    float32x4_t va = vdupq_n_f32(a);
    uint32_t i = 0;
    /* sixteen per pass (the residual adds of a layer): a quarter of the loop's own instructions */
    for (; i + 16 <= n; i += 16)
        UNROLL for (int m = 0; m < 16; m += 4) vst1q_f32(out + i + m, fma4(vld1q_f32(out + i + m), va, vld1q_f32(v + i + m)));
    for (; i + 4 <= n; i += 4) vst1q_f32(out + i, fma4(vld1q_f32(out + i), va, vld1q_f32(v + i)));
    for (; i < n; i++) out[i] += a * v[i];
}

/* Q8_0 rows: the 16 int8 codes at p as 4 x 4 floats (exact: |c| <= 128). */
INLINE void codes16(const uint8_t *p, float32x4_t *f)
{
    int8x16_t c = vld1q_s8((const int8_t *)p);
    int16x8_t lo = vmovl_s8(vget_low_s8(c)), hi = vmovl_s8(vget_high_s8(c));
    f[0] = vcvtq_f32_s32(vmovl_s16(vget_low_s16(lo)));
    f[1] = vcvtq_f32_s32(vmovl_s16(vget_high_s16(lo)));
    f[2] = vcvtq_f32_s32(vmovl_s16(vget_low_s16(hi)));
    f[3] = vcvtq_f32_s32(vmovl_s16(vget_high_s16(hi)));
}

static float neon_dot_q8_0_f32(const uint8_t *k, const float *q, uint32_t n)
{
    float32x4_t acc = vdupq_n_f32(0.0f);
    for (uint32_t b = 0; b < n / QK8_0; b++, k += sizeof(BlockQ8_0), q += QK8_0) {
        float32x4_t c[8];
        codes16(k + offsetof(BlockQ8_0, qs), c);
        codes16(k + offsetof(BlockQ8_0, qs) + 16, c + 4);
        float32x4_t s0 = vmulq_f32(c[0], vld1q_f32(q)), s1 = vmulq_f32(c[1], vld1q_f32(q + 4));
        for (int i = 2; i < 8; i += 2) {
            s0 = fma4(s0, c[i], vld1q_f32(q + 4 * i));
            s1 = fma4(s1, c[i + 1], vld1q_f32(q + 4 * i + 4));
        }
        acc = fma4(acc, vaddq_f32(s0, s1), vdupq_n_f32(f16s(k)));
    }
    return hsum_f32(acc);
}

static void neon_axpy_q8_0(float *out, float a, const uint8_t *v, uint32_t n)
{
    for (uint32_t b = 0; b < n / QK8_0; b++, v += sizeof(BlockQ8_0), out += QK8_0) {
        float32x4_t ad = vdupq_n_f32(a * f16s(v)), c[8];
        codes16(v + offsetof(BlockQ8_0, qs), c);
        codes16(v + offsetof(BlockQ8_0, qs) + 16, c + 4);
        for (int i = 0; i < 8; i++) vst1q_f32(out + 4 * i, fma4(vld1q_f32(out + 4 * i), ad, c[i]));
    }
}

/* ---- softmax exponentials, the SiLU gate, F16 stores ------------------------- */

/* e^x for x in [-87, 88] (the callers clamp), as kernels_x86.c's exp8:
 * x = k ln2 + r with k rounded to nearest (by adding and taking away
 * 1.5 * 2^23: vrndnq is ARMv8 only), e^r by its Taylor series to r^7, 2^k
 * into the exponent bits. Within 2 ulp of expf (armv7's NEON flushes
 * results under 2^-126 to zero). A NaN stays NaN: FMAX/FMIN return it. */
INLINE float32x4_t exp4(float32x4_t x)
{
    const float32x4_t magic = vdupq_n_f32(12582912.0f);
    float32x4_t k = vsubq_f32(vaddq_f32(vmulq_f32(x, vdupq_n_f32(1.44269504f)), magic), magic);
    float32x4_t r = vfmsq_f32(x, k, vdupq_n_f32(0.693145752f));
    r = vfmsq_f32(r, k, vdupq_n_f32(1.42860677e-6f));
    float32x4_t p = vdupq_n_f32(1.0f / 5040.0f);
    p = vfmaq_f32(vdupq_n_f32(1.0f / 720.0f), p, r);
    p = vfmaq_f32(vdupq_n_f32(1.0f / 120.0f), p, r);
    p = vfmaq_f32(vdupq_n_f32(1.0f / 24.0f), p, r);
    p = vfmaq_f32(vdupq_n_f32(1.0f / 6.0f), p, r);
    p = vfmaq_f32(vdupq_n_f32(0.5f), p, r);
    p = vfmaq_f32(vdupq_n_f32(1.0f), p, r);
    p = vfmaq_f32(vdupq_n_f32(1.0f), p, r);
    int32x4_t two_k = vshlq_n_s32(vaddq_s32(vcvtq_s32_f32(k), vdupq_n_s32(127)), 23);
    return vmulq_f32(p, vreinterpretq_f32_s32(two_k));
}

INLINE float32x4_t clamp_exp_arg(float32x4_t x)
{
    return vminq_f32(vmaxq_f32(x, vdupq_n_f32(-87.0f)), vdupq_n_f32(88.0f));
}

/* a / b: one divide on aarch64; armv7 has none, so a reciprocal estimate
 * and two Newton steps (about 1 ulp) */
INLINE float32x4_t div4(float32x4_t a, float32x4_t b)
{
#ifdef __aarch64__
    return vdivq_f32(a, b);
#else
    float32x4_t r = vrecpeq_f32(b);
    r = vmulq_f32(vrecpsq_f32(b, r), r);
    r = vmulq_f32(vrecpsq_f32(b, r), r);
    return vmulq_f32(a, r);
#endif
}

/* silu(x) u = x u / (1 + e^-x), e^-x cheaper than exp4 of -x: with
 * k = round(x log2 e) and r = x - k ln2 (as exp4), e^-x = 2^-k e^-r; e^-r
 * by a polynomial of degree 5 in r (a minimax fit of e^t for |t| <= ln2/2,
 * 7.5e-8 relative, its odd coefficients negated: no negation of x), and
 * 2^-k by subtracting k from the exponent field (x clamped to [-88, 87]
 * keeps the result a normal number). silu within 3.5e-7 relative of the
 * reference on aarch64, 3.8e-7 on armv7 (every 193rd float of magnitude up
 * to 120, under qemu; test_kernels' bound is 1e-6). aarch64: 26.5
 * instructions per four elements, loads, stores and loop included, where
 * exp4 of -x took 35. */
INLINE float32x4_t silu_mul4(float32x4_t x, float32x4_t u)
{
    float32x4_t xc = vminq_f32(vmaxq_f32(x, vdupq_n_f32(-88.0f)), vdupq_n_f32(87.0f));
#ifdef __aarch64__
    int32x4_t k = vcvtnq_s32_f32(vmulq_f32(xc, vdupq_n_f32(1.44269504f)));
    float32x4_t kf = vcvtq_f32_s32(k);
#else
    const float32x4_t magic = vdupq_n_f32(12582912.0f);
    float32x4_t kf = vsubq_f32(vaddq_f32(vmulq_f32(xc, vdupq_n_f32(1.44269504f)), magic), magic);
    int32x4_t k = vcvtq_s32_f32(kf);
#endif
    float32x4_t r = vfmsq_f32(xc, kf, vdupq_n_f32(0.693145752f));
    r = vfmsq_f32(r, kf, vdupq_n_f32(1.42860677e-6f));
    float32x4_t p = vdupq_n_f32(-0.0082976548f);
    p = vfmaq_f32(vdupq_n_f32(0.0419153832f), p, r);
    p = vfmaq_f32(vdupq_n_f32(-0.166675746f), p, r);
    p = vfmaq_f32(vdupq_n_f32(0.499988943f), p, r);
    p = vfmaq_f32(vdupq_n_f32(-0.999999702f), p, r);
    p = vfmaq_f32(vdupq_n_f32(1.00000012f), p, r);
    float32x4_t e = vreinterpretq_f32_s32(vsubq_s32(vreinterpretq_s32_f32(p), vshlq_n_s32(k, 23)));
    return vmulq_f32(div4(x, vaddq_f32(vdupq_n_f32(1.0f), e)), u);
}

/* Every element takes the same steps, the tail too (threads split the
 * elements anywhere: a result must not depend on where). */
static void neon_silu_mul(float *g, const float *u, uint64_t n)
{
    uint64_t i = 0;
#ifdef __aarch64__ /* two vectors per pass: half the loop's own instructions (armv7 would reload constants) */
    for (; i + 8 <= n; i += 8) {
        vst1q_f32(g + i, silu_mul4(vld1q_f32(g + i), vld1q_f32(u + i)));
        vst1q_f32(g + i + 4, silu_mul4(vld1q_f32(g + i + 4), vld1q_f32(u + i + 4)));
    }
#endif
    for (; i + 4 <= n; i += 4) vst1q_f32(g + i, silu_mul4(vld1q_f32(g + i), vld1q_f32(u + i)));
    if (i < n) {
        float tg[4] = {0}, tu[4] = {0};
        memcpy(tg, g + i, (n - i) * sizeof(float));
        memcpy(tu, u + i, (n - i) * sizeof(float));
        vst1q_f32(tg, silu_mul4(vld1q_f32(tg), vld1q_f32(tu)));
        memcpy(g + i, tg, (n - i) * sizeof(float));
    }
}

/* s[i] = e^(s[i] - mx) four at a time, the sum in double in order. The
 * last n % 4 are lanes of the last four, taken before the others are
 * overwritten (each lane's steps are the same wherever it is). */
INLINE float32x4_t exp_shifted4(const float *s, float32x4_t m)
{
    return exp4(clamp_exp_arg(vsubq_f32(vld1q_f32(s), m)));
}

static double neon_exp_sum(float *s, uint32_t n, float mx)
{
    float32x4_t m = vdupq_n_f32(mx);
    double sum = 0.0;
    if (n < 4) {
        float t[4] = {0};
        memcpy(t, s, n * sizeof(float));
        vst1q_f32(t, exp_shifted4(t, m));
        memcpy(s, t, n * sizeof(float));
        for (uint32_t i = 0; i < n; i++) sum += s[i];
        return sum;
    }
    float32x4_t last = n % 4 ? exp_shifted4(s + n - 4, m) : m;
    uint32_t i = 0;
    for (; i + 4 <= n; i += 4) {
        float32x4_t e = exp_shifted4(s + i, m);
        vst1q_f32(s + i, e);
#ifdef __aarch64__
        float64x2_t lo = vcvt_f64_f32(vget_low_f32(e)), hi = vcvt_high_f64_f32(e);
        sum += vgetq_lane_f64(lo, 0);
        sum += vgetq_lane_f64(lo, 1);
        sum += vgetq_lane_f64(hi, 0);
        sum += vgetq_lane_f64(hi, 1);
#else
        sum += vgetq_lane_f32(e, 0);
        sum += vgetq_lane_f32(e, 1);
        sum += vgetq_lane_f32(e, 2);
        sum += vgetq_lane_f32(e, 3);
#endif
    }
    if (i < n) {
        vst1q_f32(s + n - 4, last);
        for (; i < n; i++) sum += s[i];
    }
    return sum;
}

#ifdef __aarch64__
/* KernelSet.scale_max four at a time (FMAXNM skips NaNs as the compare
 * does; the sign of a zero maximum cannot change e^(s - mx)). */
static float neon_scale_max(float *s, uint32_t n, float scale, float mx)
{
    float32x4_t sc = vdupq_n_f32(scale), mv = vdupq_n_f32(mx);
    uint32_t i = 0;
    for (; i + 4 <= n; i += 4) {
        float32x4_t x = vmulq_f32(vld1q_f32(s + i), sc);
        vst1q_f32(s + i, x);
        mv = vmaxnmq_f32(mv, x);
    }
    mx = vmaxnmvq_f32(mv);
    for (; i < n; i++) {
        s[i] *= scale;
        if (s[i] > mx) mx = s[i];
    }
    return mx;
}
#define NEON_SOFTMAX .scale_max = neon_scale_max,

/* F16 stores: FCVTN rounds to nearest even and, with Linux's FPCR (no
 * flush to zero, no default NaN), keeps subnormals and a NaN's sign and top
 * bits: quant_f32_to_f16's results (test_kernels checks it). Eight per pass
 * (FCVTN, FCVTN2, one store). armv7's NEON flushes subnormals and uses the
 * default NaN: it converts in VFP (below). */
static void neon_to_f16(uint16_t *out, const float *x, uint32_t n)
{
    uint32_t i = 0;
    for (; i + 8 <= n; i += 8) {
        float16x8_t h = vcvt_high_f16_f32(vcvt_f16_f32(vld1q_f32(x + i)), vld1q_f32(x + i + 4));
        vst1q_u16(out + i, vreinterpretq_u16_f16(h));
    }
    for (; i + 4 <= n; i += 4) vst1_u16(out + i, vreinterpret_u16_f16(vcvt_f16_f32(vld1q_f32(x + i))));
    for (; i < n; i++) out[i] = quant_f32_to_f16(x[i]);
}
#define NEON_TO_F16 .to_f16 = neon_to_f16,

/* RMSNorm with the reference's steps (kernels.h): the four running sums
 * are two vectors of doubles; FMLA's one rounding equals the reference's
 * rounded sum, the square of a float being exact in double. Eight elements
 * per pass (loads and stores in pairs, half the loop's own instructions).
 * (armv7's NEON has no doubles: it keeps the reference.) */
INLINE void sq_acc(float32x4_t v, float64x2_t *s01, float64x2_t *s23)
{
    float64x2_t lo = vcvt_f64_f32(vget_low_f32(v)), hi = vcvt_high_f64_f32(v);
    *s01 = vfmaq_f64(*s01, lo, lo);
    *s23 = vfmaq_f64(*s23, hi, hi);
}

static void neon_rmsnorm(float *out, const float *x, const float *w, uint64_t n, float eps)
{
    float64x2_t s01 = vdupq_n_f64(0.0), s23 = vdupq_n_f64(0.0);
    uint64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        sq_acc(vld1q_f32(x + i), &s01, &s23);
        sq_acc(vld1q_f32(x + i + 4), &s01, &s23);
    }
    if (i + 4 <= n) sq_acc(vld1q_f32(x + i), &s01, &s23), i += 4;
    double s0 = vgetq_lane_f64(s01, 0);
    for (; i < n; i++) s0 += (double)x[i] * x[i];
    double sum = (s0 + vgetq_lane_f64(s01, 1)) + (vgetq_lane_f64(s23, 0) + vgetq_lane_f64(s23, 1));
    float scale = (float)(1.0 / sqrt(sum / (double)n + eps));
    float32x4_t sc = vdupq_n_f32(scale);
    for (i = 0; i + 8 <= n; i += 8) {
        float32x4_t a = vmulq_f32(vmulq_f32(vld1q_f32(x + i), sc), vld1q_f32(w + i));
        float32x4_t b = vmulq_f32(vmulq_f32(vld1q_f32(x + i + 4), sc), vld1q_f32(w + i + 4));
        vst1q_f32(out + i, a);
        vst1q_f32(out + i + 4, b);
    }
    if (i + 4 <= n) vst1q_f32(out + i, vmulq_f32(vmulq_f32(vld1q_f32(x + i), sc), vld1q_f32(w + i))), i += 4;
    for (; i < n; i++) out[i] = (x[i] * scale) * w[i];
}
#define NEON_RMSNORM .rmsnorm = neon_rmsnorm,
#define NEON_ROPE .rope = kern_arm_rope, /* kernels_ops_arm.c */
#else
/* armv7's F16 stores: VFP's VCVTB, one at a time, which under Linux's FPSCR
 * (no flush to zero, no default NaN, IEEE half) gives quant_f32_to_f16's
 * bits (test_kernels checks it): 6 instructions per element, the loop
 * included, where the software conversion took 31. */
static void v7_to_f16(uint16_t *out, const float *x, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        __fp16 h = (__fp16)x[i];
        memcpy(out + i, &h, 2);
    }
}
#define NEON_TO_F16 .to_f16 = v7_to_f16,
#define NEON_RMSNORM
#define NEON_ROPE
#define NEON_SOFTMAX
#endif

/* ---- the sets ---------------------------------------------------------------- */

#ifdef __aarch64__
/* The multi-row kernels of the other files (kernels_arm.h) */
#define DP_PACKED [GGML_TYPE_Q8_0] = kern_arm_dp_packed_q8_0, [GGML_TYPE_Q4_0] = kern_arm_dp_packed_q4_0
#define DP_SIDED [GGML_TYPE_Q8_0] = kern_arm_dp_sided_q8_0, [GGML_TYPE_Q4_0] = kern_arm_dp_sided_q4_0

/* Q4_K, Q5_K and Q6_K rows alone: the four-row kernels with every lane on
 * the row, so a row's result is the same bits in a matmul and alone
 * (kern_vec_dot, tests/test_kernels.c) */
#define KQ_DOT(p, name, rows)                                                                                    \
    static void p##_##name(uint64_t n, const uint8_t *row, const void *act, uint64_t act_stride, int nt,          \
                           float *out, uint64_t out_stride)                                                       \
    {                                                                                                             \
        rows(n, row, 0, 1, act, act_stride, nt, out, out_stride);                                                 \
    }
KQ_DOT(neon, q4_k, kern_arm_rows_q4_k)
KQ_DOT(neon, q5_k, kern_arm_rows_q5_k)
KQ_DOT(neon, q6_k, kern_arm_rows_q6_k)
KQ_DOT(dp, q4_k, kern_arm_dp_rows_q4_k)
KQ_DOT(dp, q5_k, kern_arm_dp_rows_q5_k)
KQ_DOT(dp, q6_k, kern_arm_dp_rows_q6_k)
#else

/* Q6_K rows alone: the four-row kernel with every lane on the row, so a
 * row's result is the same bits in a matmul and alone (kern_vec_dot) */
static void neon_q6_k(uint64_t n, const uint8_t *row, const void *act, uint64_t act_stride, int nt, float *out,
                      uint64_t out_stride)
{
    kern_armv7_rows_q6_k(n, row, 0, 1, act, act_stride, nt, out, out_stride);
}
#endif

#define INT_ENTRIES(p)                                                                                           \
    [GGML_TYPE_Q8_0] = p##_q8_0, [GGML_TYPE_Q4_0] = p##_q4_0, [GGML_TYPE_Q4_1] = p##_q4_1,                      \
    [GGML_TYPE_Q5_0] = p##_q5_0, [GGML_TYPE_Q5_1] = p##_q5_1, [GGML_TYPE_IQ4_NL] = p##_iq4_nl,                  \
    [GGML_TYPE_Q2_K] = p##_q2_k, [GGML_TYPE_Q3_K] = p##_q3_k, [GGML_TYPE_Q4_K] = p##_q4_k,                      \
    [GGML_TYPE_Q5_K] = p##_q5_k, [GGML_TYPE_Q6_K] = p##_q6_k, [GGML_TYPE_IQ4_XS] = p##_iq4_xs

#define NO_ENTRIES [GGML_TYPE_Q8_0] = NULL /* no packed or sided kernels */
#define SET(label, p, pk, sd, ...)                                                                               \
    {                                                                                                            \
        .name = label, .packed = {pk}, .sided = {sd},                                                            \
        .dot = {INT_ENTRIES(p), [GGML_TYPE_F32] = neon_f32, [GGML_TYPE_F16] = neon_f16,                         \
                [GGML_TYPE_BF16] = neon_bf16},                                                                  \
        .rows = {__VA_ARGS__},                                                                                   \
        .quantize_q8_0 = neon_quantize_q8_0, .quantize_q8_k = neon_quantize_q8_k, .dot_f16 = neon_dot_f16,      \
        .axpy_f16 = neon_axpy_f16, .dot_f32 = neon_dot_f32, .axpy_f32 = neon_axpy_f32,                          \
        .dot_q8_0_f32 = neon_dot_q8_0_f32, .axpy_q8_0 = neon_axpy_q8_0, .silu_mul = neon_silu_mul,              \
        .exp_sum = neon_exp_sum, .dots_f16 = neon_dots_f16, .wsum_f16 = neon_wsum_f16, NEON_TO_F16               \
        NEON_RMSNORM NEON_ROPE NEON_SOFTMAX                                                                    \
        .gelu_mul = kern_arm_gelu_mul, .delta_step = kern_arm_delta_step, .causal_conv = kern_arm_causal_conv, /* kernels_ops_arm.c */ \
        .dots_f32 = kern_arm_dots_f32, .mix_f32 = kern_arm_mix_f32, .delta_chunk = 1,                           \
    }

const KernelSet *kern_arm(void)
{
    const PortCpu *c = port_cpu();
#ifdef __aarch64__
    static const KernelSet neon = SET("aarch64 NEON", neon, NO_ENTRIES, NO_ENTRIES, NEON_ROWS_F16[GGML_TYPE_Q8_0] = kern_arm_rows_q8_0,
                                      [GGML_TYPE_Q4_0] = kern_arm_rows_q4_0, [GGML_TYPE_Q4_K] = kern_arm_rows_q4_k,
                                      [GGML_TYPE_Q5_K] = kern_arm_rows_q5_k, [GGML_TYPE_Q6_K] = kern_arm_rows_q6_k),
                           dotprod = SET("aarch64 NEON+dotprod", dp, DP_PACKED, DP_SIDED, NEON_ROWS_F16[GGML_TYPE_Q8_0] = kern_arm_dp_rows_q8_0,
                                         [GGML_TYPE_Q4_0] = kern_arm_dp_rows_q4_0, [GGML_TYPE_Q4_K] = kern_arm_dp_rows_q4_k,
                                         [GGML_TYPE_Q5_K] = kern_arm_dp_rows_q5_k, [GGML_TYPE_Q6_K] = kern_arm_dp_rows_q6_k);
    static KernelSet i8mm, with_fp16; /* the dotprod set with SMMLA prompt tiles; either set, F16 weights
                                        * multiplied in F16 (kernels_arm_fp16.c) */
    if (!c->neon) return NULL;
    const KernelSet *s = c->dotprod ? &dotprod : &neon;
    if (c->dotprod && c->i8mm) {
        i8mm = dotprod;
        i8mm.name = "aarch64 NEON+dotprod+i8mm";
        i8mm.rows[GGML_TYPE_Q8_0] = kern_arm_mm_rows_q8_0, i8mm.rows[GGML_TYPE_Q4_0] = kern_arm_mm_rows_q4_0;
        i8mm.packed[GGML_TYPE_Q8_0] = kern_arm_mm_packed_q8_0, i8mm.packed[GGML_TYPE_Q4_0] = kern_arm_mm_packed_q4_0;
        i8mm.sided[GGML_TYPE_Q8_0] = kern_arm_mm_sided_q8_0, i8mm.sided[GGML_TYPE_Q4_0] = kern_arm_mm_sided_q4_0;
        i8mm.rows[GGML_TYPE_Q4_K] = kern_arm_mm_rows_q4_k, i8mm.rows[GGML_TYPE_Q5_K] = kern_arm_mm_rows_q5_k;
        i8mm.rows[GGML_TYPE_Q6_K] = kern_arm_mm_rows_q6_k;
        s = &i8mm;
    }
    if (!c->fp16) return s;
    with_fp16 = *s;
    with_fp16.name = s == &i8mm ? "aarch64 NEON+dotprod+i8mm+fp16" : c->dotprod ? "aarch64 NEON+dotprod+fp16" : "aarch64 NEON+fp16";
    with_fp16.rows[GGML_TYPE_F16] = kern_arm_fp16_rows_f16;
    with_fp16.f16_in_half = 1;
    return &with_fp16;
#else
    static const KernelSet neon = SET("armv7 NEON", neon, NO_ENTRIES, NO_ENTRIES, NEON_ROWS_F16[GGML_TYPE_Q8_0] = kern_armv7_rows_q8_0,
                                      [GGML_TYPE_Q4_0] = kern_armv7_rows_q4_0, [GGML_TYPE_Q4_K] = kern_armv7_rows_q4_k,
                                      [GGML_TYPE_Q6_K] = kern_armv7_rows_q6_k);
    return c->neon && c->vfpv4 ? &neon : NULL;
#endif
}

#else

const KernelSet *kern_arm(void)
{
    return NULL;
}

#endif
