/* kernels_neon.h - small NEON helpers shared by the ARM kernel files
 * (kernels_arm.c, kernels_arm_kq.c, kernels_arm_kq_tile.c, kernels_arm_rows.c,
 * kernels_arm_rows4.c, kernels_arm_v7.c, kernels_ops_arm.c),
 * aarch64 and armv7. Include it only where <arm_neon.h> and __fp16 are
 * available (inside those files' target conditions). */
#ifndef PITH_KERNELS_NEON_H
#define PITH_KERNELS_NEON_H

#include <arm_neon.h>
#include <stdint.h>
#include <string.h>

/* The attribute of the aarch64 functions that use dotprod (SDOT). Any CPU
 * with dotprod implements ARMv8.2 (the feature exists from 8.2 on), so they
 * may use the whole of it; GCC 12's arm_neon.h and assembler want the arch
 * spelled out, clang takes the feature name. */
#ifdef __aarch64__
#ifdef __clang__
#define NEON_DOTPROD __attribute__((target("dotprod")))
#else
#define NEON_DOTPROD __attribute__((target("arch=armv8.2-a+dotprod")))
#endif
#endif

/* Half to float with the hardware conversion (FCVT / VCVTB). */
static inline __attribute__((always_inline)) float neon_f16_to_f32(uint16_t v)
{
    __fp16 h;
    memcpy(&h, &v, 2);
    return (float)h;
}

/* Four 16-byte rows as words: out[k] lane i = word k of row i. */
static inline __attribute__((always_inline)) void neon_transpose4(uint8x16_t a, uint8x16_t b, uint8x16_t c,
                                                                  uint8x16_t d, uint32x4_t *out)
{
#ifdef __aarch64__
    uint32x4_t ab0 = vtrn1q_u32(vreinterpretq_u32_u8(a), vreinterpretq_u32_u8(b));
    uint32x4_t ab1 = vtrn2q_u32(vreinterpretq_u32_u8(a), vreinterpretq_u32_u8(b));
    uint32x4_t cd0 = vtrn1q_u32(vreinterpretq_u32_u8(c), vreinterpretq_u32_u8(d));
    uint32x4_t cd1 = vtrn2q_u32(vreinterpretq_u32_u8(c), vreinterpretq_u32_u8(d));
    out[0] = vreinterpretq_u32_u64(vtrn1q_u64(vreinterpretq_u64_u32(ab0), vreinterpretq_u64_u32(cd0)));
    out[1] = vreinterpretq_u32_u64(vtrn1q_u64(vreinterpretq_u64_u32(ab1), vreinterpretq_u64_u32(cd1)));
    out[2] = vreinterpretq_u32_u64(vtrn2q_u64(vreinterpretq_u64_u32(ab0), vreinterpretq_u64_u32(cd0)));
    out[3] = vreinterpretq_u32_u64(vtrn2q_u64(vreinterpretq_u64_u32(ab1), vreinterpretq_u64_u32(cd1)));
#else
    uint32x4x2_t ab = vtrnq_u32(vreinterpretq_u32_u8(a), vreinterpretq_u32_u8(b));
    uint32x4x2_t cd = vtrnq_u32(vreinterpretq_u32_u8(c), vreinterpretq_u32_u8(d));
    out[0] = vcombine_u32(vget_low_u32(ab.val[0]), vget_low_u32(cd.val[0]));
    out[1] = vcombine_u32(vget_low_u32(ab.val[1]), vget_low_u32(cd.val[1]));
    out[2] = vcombine_u32(vget_high_u32(ab.val[0]), vget_high_u32(cd.val[0]));
    out[3] = vcombine_u32(vget_high_u32(ab.val[1]), vget_high_u32(cd.val[1]));
#endif
}

/* The 6-bit scales and mins of a Q4_K/Q5_K block (quant_q4k_scale_min) for
 * four rows at once: h[1..3] are words 1..3 of the rows' headers (the 12
 * packed bytes after d and dmin), row i in lane i (neon_transpose4). Out:
 * sc[0] bytes 0..3 = scales 0..3, sc[1] scales 4..7, mn[0] and mn[1] the
 * mins, one byte each. (byte >> 6) << 4 is computed as (byte >> 2) & 0x30. */
static inline __attribute__((always_inline)) void neon_q4k_scales_mins(const uint32x4_t *h, uint32x4_t *sc,
                                                                       uint32x4_t *mn)
{
    const uint32x4_t m3f = vdupq_n_u32(0x3f3f3f3fu), m0f = vdupq_n_u32(0x0f0f0f0fu), m30 = vdupq_n_u32(0x30303030u);
    sc[0] = vandq_u32(h[1], m3f);
    sc[1] = vorrq_u32(vandq_u32(h[3], m0f), vandq_u32(vshrq_n_u32(h[1], 2), m30));
    mn[0] = vandq_u32(h[2], m3f);
    mn[1] = vorrq_u32(vandq_u32(vshrq_n_u32(h[3], 4), m0f), vandq_u32(vshrq_n_u32(h[2], 2), m30));
}

/* byte k (0..3) of each lane of v, unsigned, into out[k] (the four rows'
 * 6-bit scales of a K-quant block, one row per lane) */
static inline __attribute__((always_inline)) void neon_ubytes4(uint32x4_t v, int32x4_t *out)
{
    const uint32x4_t ff = vdupq_n_u32(0xff);
    out[0] = vreinterpretq_s32_u32(vandq_u32(v, ff));
    out[1] = vreinterpretq_s32_u32(vandq_u32(vshrq_n_u32(v, 8), ff));
    out[2] = vreinterpretq_s32_u32(vandq_u32(vshrq_n_u32(v, 16), ff));
    out[3] = vreinterpretq_s32_u32(vshrq_n_u32(v, 24));
}

/* byte k (0..3) of each lane of v, signed, into out[k] (Q6_K's scales) */
static inline __attribute__((always_inline)) void neon_sbytes4(uint32x4_t v, int32x4_t *out)
{
    int32x4_t s = vreinterpretq_s32_u32(v);
    out[0] = vshrq_n_s32(vshlq_n_s32(s, 24), 24);
    out[1] = vshrq_n_s32(vshlq_n_s32(s, 16), 24);
    out[2] = vshrq_n_s32(vshlq_n_s32(s, 8), 24);
    out[3] = vshrq_n_s32(s, 24);
}

/* The F16 scale at byte `off` of each of four rows' blocks (r[i], row i in
 * lane i) as floats: four lane loads and one conversion. */
static inline __attribute__((always_inline)) float32x4_t neon_rows4_f16(const uint8_t *const *r, size_t off)
{
    uint16x4_t h = vdup_n_u16(0);
    h = vld1_lane_u16((const uint16_t *)(const void *)(r[0] + off), h, 0);
    h = vld1_lane_u16((const uint16_t *)(const void *)(r[1] + off), h, 1);
    h = vld1_lane_u16((const uint16_t *)(const void *)(r[2] + off), h, 2);
    h = vld1_lane_u16((const uint16_t *)(const void *)(r[3] + off), h, 3);
    return vcvt_f32_f16(vreinterpret_f16_u16(h));
}

/* Token t (0..3) of quad q of a prompt pass over nt tokens: tokens past
 * the end repeat the last one (the tiles compute and drop their lanes). */
static inline __attribute__((always_inline)) const uint8_t *neon_quad_token(const void *act, uint64_t act_stride, int q,
                                                                           int t, int nt)
{
    int tt = 4 * q + t < nt ? 4 * q + t : nt - 1;
    return (const uint8_t *)act + (uint64_t)tt * act_stride;
}

/* Where Q4_0's integer block sums start so that sums over the nibbles
 * (0..15) come out as sums over the codes - 8: -k x the activation's code
 * sum, k = 8 per lane that holds a whole block (4 when two lanes share it),
 * in wrapping int32 arithmetic (the block sum it leads to is exact). */
static inline int32_t neon_q4_start(int32_t code_sum, uint32_t k)
{
    return (int32_t)((uint32_t)code_sum * (0u - k));
}

/* A four-row pass's results for rows r0..r0+valid-1: all four lanes, or
 * the first `valid` of them at the matrix's last rows. */
static inline __attribute__((always_inline)) void neon_store_rows4(float *o, float32x4_t acc, uint64_t valid)
{
    if (valid == 4) {
        vst1q_f32(o, acc);
    } else {
        float tmp[4];
        vst1q_f32(tmp, acc);
        memcpy(o, tmp, valid * sizeof(float));
    }
}

#endif
