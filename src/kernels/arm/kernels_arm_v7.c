/* kernels_arm_v7.c - Q8_0, Q4_0, Q4_K and Q6_K matmuls on 32-bit ARM (armv7 NEON:
 * the 32-bit Pi OS on a Pi 2, 3, 4 or Zero 2 W) that compute four weight
 * rows per pass (KernelSet.rows of the "armv7 NEON" set in kernels_arm.c).
 *
 * Why: the one-row kernels of kernels_arm.c load the activation again for
 * every row, convert one scale and reduce four lanes per row and block, and
 * count blocks in 64-bit arithmetic (two instructions per step on a 32-bit
 * CPU). armv7 has no SDOT: the products are VMULL/VMLAL into int16 lanes and
 * VPADAL/VPADDL into int32, as before; what is shared here is around them:
 *  - each activation vector is loaded once for the four rows (and, for two
 *    tokens, each weight vector once for both);
 *  - a row's block sum is reduced to two int32 lanes (one VPADD) and the
 *    four rows' pairs to one vector (two VPADD), row i in lane i, so one
 *    convert and one FMA serve the four rows;
 *  - the four rows' scales are loaded lane by lane into one vector and
 *    converted by one VCVT;
 *  - Q4_0's offset of 8 is not subtracted from each weight but once per
 *    block from the sum (-8 x the activation's code sum, same for every row).
 * Integer bounds (int16 lanes): Q8_0 two products of at most 128 x 127
 * (32512), Q4_0 four of at most 15 x 127, Q4_K sixteen of at most 15 x 127,
 * Q6_K four of at most 63 x 127 (32004: its codes are taken as 0..63, the
 * -32 once per block from the activation's sub-block sums).
 *
 * Determinism (kernels.h): row r and token t always get, block by block,
 *   acc = fma(float(S), dw * da, acc)
 * with S the exact integer block sum (as the reference's), in one float
 * lane, whatever the lane, the tile, the tokens sharing the pass (one or
 * two) or the thread split. Rows past the end of the last tile repeat the
 * last row; their lanes are dropped. */
#include "kernels_arm.h"

#include <stddef.h>
#include <string.h>

#if defined(__GNUC__) && defined(__ARM_NEON) && !defined(__aarch64__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ && \
    defined(__ARM_FEATURE_FMA) && defined(__ARM_FP16_FORMAT_IEEE)
#include <arm_neon.h>

#include "kernels_neon.h"

#define INLINE static inline __attribute__((always_inline))
#define UNROLL _Pragma("GCC unroll 8")
/* GCC's scheduling before register allocation hoists loads and then spills
 * (sixteen vector registers) in the K-quant kernels: off for them. */
#ifdef __clang__
#define NO_PRESCHED
#else
#define NO_PRESCHED __attribute__((optimize("no-schedule-insns")))
#endif

enum { RT = 4 /* rows per pass */, GT = 2 /* tokens per pass */ };


/* Q8_0: 32 codes (w0: elements 0..15, w1: 16..31) times the activation's
 * (a0, a1), summed into two int32 lanes. */
INLINE int32x2_t q8_sum(int8x16_t w0, int8x16_t w1, int8x16_t a0, int8x16_t a1)
{
    int16x8_t m0 = vmlal_s8(vmull_s8(vget_low_s8(w0), vget_low_s8(a0)), vget_high_s8(w0), vget_high_s8(a0));
    int16x8_t m1 = vmlal_s8(vmull_s8(vget_low_s8(w1), vget_low_s8(a1)), vget_high_s8(w1), vget_high_s8(a1));
    int32x4_t s = vpadalq_s16(vpaddlq_s16(m0), m1);
    return vpadd_s32(vget_low_s32(s), vget_high_s32(s));
}

/* Q4_0: the 32 unsigned codes (lo: elements 0..15, hi: 16..31), the same. */
INLINE int32x2_t q4_sum(int8x16_t lo, int8x16_t hi, int8x16_t a0, int8x16_t a1)
{
    int16x8_t m = vmull_s8(vget_low_s8(lo), vget_low_s8(a0));
    m = vmlal_s8(m, vget_high_s8(lo), vget_high_s8(a0));
    m = vmlal_s8(m, vget_low_s8(hi), vget_low_s8(a1));
    m = vmlal_s8(m, vget_high_s8(hi), vget_high_s8(a1));
    int32x4_t s = vpaddlq_s16(m);
    return vpadd_s32(vget_low_s32(s), vget_high_s32(s));
}

/* 16 bytes at *p, *p moved past them (one VLD1 with writeback: GCC
 * computes every address of a row's block with an ADD of its own). The
 * weights are read-only while a matmul runs. */
INLINE int8x16_t ld16(const uint8_t **p)
{
    int8x16_t v;
    __asm__("vld1.8 {%e0, %f0}, [%1]!" : "=w"(v), "+r"(*p) : "m"(*(const uint8_t(*)[16]) * p));
    return v;
}

/* The 16-bit scales at p0..p3 into lanes 0..3, each pointer moved past its own. */
INLINE uint16x4_t ld_scales(const uint8_t **p0, const uint8_t **p1, const uint8_t **p2, const uint8_t **p3)
{
    uint16x4_t v;
    __asm__("vld1.16 {%P0[0]}, [%1]!\n\t"
            "vld1.16 {%P0[1]}, [%2]!\n\t"
            "vld1.16 {%P0[2]}, [%3]!\n\t"
            "vld1.16 {%P0[3]}, [%4]!"
            : "=&w"(v), "+r"(*p0), "+r"(*p1), "+r"(*p2), "+r"(*p3)
            : "m"(*(const uint8_t(*)[2]) * p0), "m"(*(const uint8_t(*)[2]) * p1), "m"(*(const uint8_t(*)[2]) * p2),
              "m"(*(const uint8_t(*)[2]) * p3));
    return v;
}

/* Rows rp[0..3] (at their first block) against nt (1 or 2) tokens over nb
 * blocks: res[t] lane i = row i . token t. Each row pointer moves through
 * its block in order (scale, codes) by the loads' writeback. kind:
 * GGML_TYPE_Q8_0 or GGML_TYPE_Q4_0 (a constant in each entry). */
INLINE void pass(int kind, const uint8_t *const *rp, const uint8_t *act, size_t act_stride, int nt, size_t nb,
                 float32x4_t *res)
{
    const uint8_t *p0 = rp[0], *p1 = rp[1], *p2 = rp[2], *p3 = rp[3];
    const KernQ8_0 *a0 = (const KernQ8_0 *)(const void *)act, *a1 = (const KernQ8_0 *)(const void *)(act + act_stride);
    float32x4_t f0 = vdupq_n_f32(0.0f), f1 = vdupq_n_f32(0.0f);
    const uint8x16_t m4 = vdupq_n_u8(15);
    for (size_t b = 0; b < nb; b++) {
        /* the four rows' scales (blocks start with them; rows and blocks are 2-byte aligned) */
        float32x4_t dw = vcvt_f32_f16(vreinterpret_f16_u16(ld_scales(&p0, &p1, &p2, &p3)));
        int8x16_t x00 = vld1q_s8(a0->q), x01 = vld1q_s8(a0->q + 16), x10 = x00, x11 = x01;
        if (nt == 2) x10 = vld1q_s8(a1->q), x11 = vld1q_s8(a1->q + 16);
        int32x2_t s[GT][RT];
        const uint8_t **pp[RT] = {&p0, &p1, &p2, &p3};
        UNROLL for (int i = 0; i < RT; i++) {
            if (kind == GGML_TYPE_Q8_0) {
                int8x16_t w0 = ld16(pp[i]), w1 = ld16(pp[i]);
                s[0][i] = q8_sum(w0, w1, x00, x01);
                if (nt == 2) s[1][i] = q8_sum(w0, w1, x10, x11);
            } else {
                uint8x16_t v = vreinterpretq_u8_s8(ld16(pp[i]));
                int8x16_t lo = vreinterpretq_s8_u8(vandq_u8(v, m4)), hi = vreinterpretq_s8_u8(vshrq_n_u8(v, 4));
                s[0][i] = q4_sum(lo, hi, x00, x01);
                if (nt == 2) s[1][i] = q4_sum(lo, hi, x10, x11);
            }
        }
        /* wrapping (Q4_0's -8 x sum): the exact sum fits in int32 */
        int32x4_t S = vcombine_s32(vpadd_s32(s[0][0], s[0][1]), vpadd_s32(s[0][2], s[0][3]));
        if (kind == GGML_TYPE_Q4_0) S = vsubq_s32(S, vdupq_n_s32((int32_t)((uint32_t)a0->sum << 3)));
        f0 = vfmaq_f32(f0, vcvtq_f32_s32(S), vmulq_n_f32(dw, a0->d));
        a0++;
        if (nt == 2) {
            S = vcombine_s32(vpadd_s32(s[1][0], s[1][1]), vpadd_s32(s[1][2], s[1][3]));
            if (kind == GGML_TYPE_Q4_0) S = vsubq_s32(S, vdupq_n_s32((int32_t)((uint32_t)a1->sum << 3)));
            f1 = vfmaq_f32(f1, vcvtq_f32_s32(S), vmulq_n_f32(dw, a1->d));
            a1++;
        }
    }
    res[0] = f0;
    res[1] = f1;
}

INLINE void rows_frame(int kind, uint64_t n, const uint8_t *w, uint64_t row_bytes, uint64_t nrows, const void *act,
                       uint64_t act_stride, int nt, float *out, uint64_t out_stride)
{
    size_t nb = (size_t)(n / QK8_0);
    for (uint64_t r0 = 0; r0 < nrows; r0 += RT) {
        uint64_t valid = nrows - r0 < RT ? nrows - r0 : RT;
        const uint8_t *rp[RT];
        UNROLL for (int i = 0; i < RT; i++) rp[i] = w + (r0 + ((uint64_t)i < valid ? (uint64_t)i : valid - 1)) * row_bytes;
        for (int t0 = 0; t0 < nt; t0 += GT) {
            const uint8_t *a = (const uint8_t *)act + (uint64_t)t0 * act_stride;
            float32x4_t acc[GT];
            int k = nt - t0 < GT ? nt - t0 : GT;
            if (k == 2) pass(kind, rp, a, (size_t)act_stride, 2, nb, acc);
            else pass(kind, rp, a, (size_t)act_stride, 1, nb, acc);
            for (int t = 0; t < k; t++) {
                float *o = out + (uint64_t)(t0 + t) * out_stride + r0;
                neon_store_rows4(o, acc[t], valid);
            }
        }
    }
}

void kern_armv7_rows_q8_0(uint64_t n, const uint8_t *w, uint64_t row_bytes, uint64_t nrows, const void *act,
                          uint64_t act_stride, int nt, float *out, uint64_t out_stride)
{
    rows_frame(GGML_TYPE_Q8_0, n, w, row_bytes, nrows, act, act_stride, nt, out, out_stride);
}

void kern_armv7_rows_q4_0(uint64_t n, const uint8_t *w, uint64_t row_bytes, uint64_t nrows, const void *act,
                          uint64_t act_stride, int nt, float *out, uint64_t out_stride)
{
    rows_frame(GGML_TYPE_Q4_0, n, w, row_bytes, nrows, act, act_stride, nt, out, out_stride);
}

/* ---- Q4_K: four rows, one token per pass ----------------------------------------- */

/* 16 codes of 4 bits or less (c0: elements 0..15 of a sub-block, c1:
 * 16..31) times the activation (x0, x1), summed in fours: 4 int16 lanes
 * (at most 8 x 15 x 127). */
INLINE int16x4_t q4k_sum(uint8x16_t c0, uint8x16_t c1, int8x16_t x0, int8x16_t x1)
{
    int8x16_t w0 = vreinterpretq_s8_u8(c0), w1 = vreinterpretq_s8_u8(c1);
    int16x8_t m = vmull_s8(vget_low_s8(w0), vget_low_s8(x0));
    m = vmlal_s8(m, vget_high_s8(w0), vget_high_s8(x0));
    m = vmlal_s8(m, vget_low_s8(w1), vget_low_s8(x1));
    m = vmlal_s8(m, vget_high_s8(w1), vget_high_s8(x1));
    return vpadd_s16(vget_low_s16(m), vget_high_s16(m));
}

/* The four rows' sums (4 int16 lanes each, at most 8 x 15 x 127) into one
 * int32 vector, row i in lane i (one more pairing fits in int16: 16 x 15 x 127). */
INLINE int32x4_t q4k_tree(const int16x4_t *d)
{
    return vpaddlq_s16(vcombine_s16(vpadd_s16(d[0], d[1]), vpadd_s16(d[2], d[3])));
}

/* Rows rp[0..3] (at their first block) against one token over nb blocks:
 * lane i = row i . token. Per block: S = sum_j sc_j X_j and M = sum_j mn_j
 * (bsum pairs)_j exactly, then acc = fma(float(S), dw * da, acc), acc =
 * fma(-float(M), dmin * da, acc) (the aarch64 kernels' order). */
INLINE float32x4_t q4k_pass(const uint8_t *const *rp, const KernQ8_K *a, size_t nb)
{
    const uint32x4_t ff = vdupq_n_u32(0xff);
    const uint8x16_t m4 = vdupq_n_u8(15);
    float32x4_t acc = vdupq_n_f32(0.0f);
    for (size_t b = 0; b < nb; b++, a++) {
        const uint8_t *r[RT];
        UNROLL for (int i = 0; i < RT; i++) r[i] = rp[i] + sizeof(BlockQ4_K) * b;
        uint32x4_t h[4];
        neon_transpose4(vld1q_u8(r[0]), vld1q_u8(r[1]), vld1q_u8(r[2]), vld1q_u8(r[3]), h);
        float32x4_t dw = vcvt_f32_f16(vreinterpret_f16_u16(vmovn_u32(h[0])));
        float32x4_t dm = vcvt_f32_f16(vreinterpret_f16_u16(vshrn_n_u32(h[0], 16)));
        /* 6-bit scales and mins (quant_q4k_scale_min) */
        uint32x4_t sv[2], nv[2];
        neon_q4k_scales_mins(h, sv, nv);
        /* mins . (bsum pairs) */
        int16x4_t b0 = vld1_s16(a->bsum), b1 = vld1_s16(a->bsum + 4), b2 = vld1_s16(a->bsum + 8),
                  b3 = vld1_s16(a->bsum + 12);
        int32x4_t bp[2] = {vmovl_s16(vpadd_s16(b0, b1)), vmovl_s16(vpadd_s16(b2, b3))};
        int32x4_t msum = vdupq_n_s32(0), isum = vdupq_n_s32(0);
        UNROLL for (int j = 0; j < 8; j++) {
            int32x4_t mn;
            switch (j % 4) { /* the shift count must be a constant */
            case 0: mn = vreinterpretq_s32_u32(vandq_u32(nv[j / 4], ff)); break;
            case 1: mn = vreinterpretq_s32_u32(vandq_u32(vshrq_n_u32(nv[j / 4], 8), ff)); break;
            case 2: mn = vreinterpretq_s32_u32(vandq_u32(vshrq_n_u32(nv[j / 4], 16), ff)); break;
            default: mn = vreinterpretq_s32_u32(vshrq_n_u32(nv[j / 4], 24)); break;
            }
            int32x2_t half = j % 4 < 2 ? vget_low_s32(bp[j / 4]) : vget_high_s32(bp[j / 4]);
            msum = j % 2 ? vmlaq_lane_s32(msum, mn, half, 1) : vmlaq_lane_s32(msum, mn, half, 0);
        }
        for (int q = 0; q < 4; q++) { /* 32 bytes of codes: sub-blocks 2q (low nibbles) and 2q + 1 (high) */
            int8x16_t x0 = vld1q_s8(a->q + 64 * q), x1 = vld1q_s8(a->q + 64 * q + 16);
            int8x16_t x2 = vld1q_s8(a->q + 64 * q + 32), x3 = vld1q_s8(a->q + 64 * q + 48);
            int16x4_t dl[RT], dh[RT];
            UNROLL for (int i = 0; i < RT; i++) {
                const uint8_t *qs = r[i] + offsetof(BlockQ4_K, qs) + 32 * q;
                uint8x16_t v0 = vld1q_u8(qs), v1 = vld1q_u8(qs + 16);
                dl[i] = q4k_sum(vandq_u8(v0, m4), vandq_u8(v1, m4), x0, x1);
                dh[i] = q4k_sum(vshrq_n_u8(v0, 4), vshrq_n_u8(v1, 4), x2, x3);
            }
            /* this pair's scales: bytes 2q % 4 and 2q % 4 + 1 of sv[q / 2] */
            uint32x4_t s2 = q & 1 ? vshrq_n_u32(sv[q / 2], 16) : sv[q / 2];
            int32x4_t sl = vreinterpretq_s32_u32(vandq_u32(s2, ff));
            int32x4_t sh = vreinterpretq_s32_u32(vandq_u32(vshrq_n_u32(s2, 8), ff));
            isum = vmlaq_s32(isum, q4k_tree(dl), sl);
            isum = vmlaq_s32(isum, q4k_tree(dh), sh);
        }
        acc = vfmaq_f32(acc, vcvtq_f32_s32(isum), vmulq_n_f32(dw, a->d));
        acc = vfmsq_f32(acc, vcvtq_f32_s32(msum), vmulq_n_f32(dm, a->d));
    }
    return acc;
}

/* ---- Q6_K: four rows, one token per pass ----------------------------------------- */

/* The four rows' 16 int8 scales (bytes 192..207 of the block at r[i]) as
 * int16, sub-block j's in sc[j], row i in lane i: two byte zips and two
 * halfword zips put the four rows' scales of a sub-block side by side, and
 * one widening serves two sub-blocks. */
INLINE void q6k_scales(const uint8_t *const *r, int16x4_t *sc)
{
    const size_t sco = offsetof(BlockQ6_K, scales);
    uint8x16x2_t z01 = vzipq_u8(vld1q_u8(r[0] + sco), vld1q_u8(r[1] + sco));
    uint8x16x2_t z23 = vzipq_u8(vld1q_u8(r[2] + sco), vld1q_u8(r[3] + sco));
    UNROLL for (int m = 0; m < 2; m++) {
        uint16x8x2_t t = vzipq_u16(vreinterpretq_u16_u8(z01.val[m]), vreinterpretq_u16_u8(z23.val[m]));
        UNROLL for (int k = 0; k < 2; k++) { /* sub-blocks 8m + 4k .. 8m + 4k + 3 */
            int8x16_t v = vreinterpretq_s8_u16(t.val[k]);
            int16x8_t lo = vmovl_s8(vget_low_s8(v)), hi = vmovl_s8(vget_high_s8(v));
            sc[8 * m + 4 * k] = vget_low_s16(lo);
            sc[8 * m + 4 * k + 1] = vget_high_s16(lo);
            sc[8 * m + 4 * k + 2] = vget_low_s16(hi);
            sc[8 * m + 4 * k + 3] = vget_high_s16(hi);
        }
    }
}

/* Two rows' 16 codes (0..63) times the same 16 activations: VMULL/VMLAL
 * into int16 (two products per lane), one VPADD per row into the halves of
 * one vector (at most 4 x 63 x 127 = 32004), widened: row i in lanes 0-1,
 * row j in 2-3. In asm so each row's sum lands in its half directly
 * (GCC moved the halves together with VORRs). */
INLINE int32x4_t q6k_pair(uint8x16_t ci, uint8x16_t cj, int8x16_t x)
{
    int32x4_t p;
    int16x8_t t;
    __asm__("vmull.s8 %q[t], %e[ci], %e[x]\n\t"
            "vmlal.s8 %q[t], %f[ci], %f[x]\n\t"
            "vpadd.i16 %e[p], %e[t], %f[t]\n\t"
            "vmull.s8 %q[t], %e[cj], %e[x]\n\t"
            "vmlal.s8 %q[t], %f[cj], %f[x]\n\t"
            "vpadd.i16 %f[p], %e[t], %f[t]\n\t"
            "vpaddl.s16 %q[p], %q[p]"
            : [p] "=&w"(p), [t] "=&w"(t)
            : [ci] "w"(ci), [cj] "w"(cj), [x] "w"(x));
    return p;
}

/* Rows 0-1's and 2-3's pairs (q6k_pair) into one vector, row i in lane i. */
INLINE int32x4_t q6k_rows(int32x4_t p01, int32x4_t p23)
{
    int32x4_t v;
    __asm__("vpadd.i32 %e[v], %e[a], %f[a]\n\t"
            "vpadd.i32 %f[v], %e[b], %f[b]"
            : [v] "=&w"(v)
            : [a] "w"(p01), [b] "w"(p23));
    return v;
}

/* Rows rp[0..3] (at their first block) against one token over nb blocks:
 * lane i = row i . token. The codes are taken as 0..63 (their -32 comes
 * once per block: -32 x sum_j sc_j bsum_j, bsum_j the activation's
 * sub-block sums), then S = sum_j sc_j X_j exactly (int32: |S| < 2^28) and
 * acc = fma(float(S), dw * da, acc), as the aarch64 kernels. */
INLINE float32x4_t q6k_pass(const uint8_t *const *rp, const KernQ8_K *a, size_t nb)
{
    const uint8x16_t m3 = vdupq_n_u8(3), m30 = vdupq_n_u8(0x30);
    float32x4_t acc = vdupq_n_f32(0.0f);
    for (size_t b = 0; b < nb; b++, a++) {
        const uint8_t *r[RT];
        UNROLL for (int i = 0; i < RT; i++) r[i] = rp[i] + sizeof(BlockQ6_K) * b;
        int16x4_t sc[16];
        q6k_scales(r, sc);
        float32x4_t dw = neon_rows4_f16(r, offsetof(BlockQ6_K, d));
        /* sum_j sc_j bsum_j: at most 16 x 128 x 16 x 127 */
        int32x4_t sb = vdupq_n_s32(0);
        UNROLL for (int m = 0; m < 4; m++) {
            int16x4_t bs = vld1_s16(a->bsum + 4 * m);
            sb = vmlal_lane_s16(sb, sc[4 * m], bs, 0);
            sb = vmlal_lane_s16(sb, sc[4 * m + 1], bs, 1);
            sb = vmlal_lane_s16(sb, sc[4 * m + 2], bs, 2);
            sb = vmlal_lane_s16(sb, sc[4 * m + 3], bs, 3);
        }
        int32x4_t isum = vnegq_s32(vshlq_n_s32(sb, 5));
        /* 16 bytes at a time of each row's low bits (l0: quarters 0 and 2 of a
         * half, l1: 1 and 3) and high bits (hb: two bits per quarter): the
         * quarters of l0 first, then of l1, two rows at a time, so few
         * vectors are live at once (sixteen registers) */
        for (int h = 0; h < 2; h++)
            for (int s = 0; s < 2; s++) { /* elements 16s .. 16s + 15 of each quarter k: sub-block 8h + 2k + s */
                const int8_t *xq = a->q + 128 * h + 16 * s;
                UNROLL for (int k0 = 0; k0 < 2; k0++) { /* quarters k0 and k0 + 2 */
                    int8x16_t xa = vld1q_s8(xq + 32 * k0), xb = vld1q_s8(xq + 32 * k0 + 64);
                    int32x4_t pa[2], pb[2];
                    UNROLL for (int i2 = 0; i2 < RT; i2 += 2) { /* rows i2 and i2 + 1 */
                        uint8x16_t l[2], c[2];
                        UNROLL for (int u = 0; u < 2; u++) {
                            int i = i2 + u;
                            uint8x16_t hb = vld1q_u8(r[i] + offsetof(BlockQ6_K, qh) + 32 * h + 16 * s), t;
                            l[u] = vld1q_u8(r[i] + offsetof(BlockQ6_K, ql) + 64 * h + 32 * k0 + 16 * s);
                            /* quarter k0: l & 15 | ((hb >> 2k0) & 3) << 4 (into l), k0 + 2: l >> 4 | ((hb >> 2k0) & 0x30) */
                            if (k0 == 0)
                                __asm__("vand %q[c], %q[hb], %q[m30]\n\t"
                                        "vand %q[t], %q[hb], %q[m3]\n\t"
                                        "vsri.8 %q[c], %q[l], #4\n\t"
                                        "vsli.8 %q[l], %q[t], #4"
                                        : [c] "=&w"(c[u]), [t] "=&w"(t), [l] "+w"(l[u])
                                        : [hb] "w"(hb), [m3] "w"(m3), [m30] "w"(m30));
                            else
                                __asm__("vshr.u8 %q[c], %q[hb], #2\n\t"
                                        "vand %q[t], %q[c], %q[m3]\n\t"
                                        "vsri.8 %q[c], %q[l], #4\n\t"
                                        "vsli.8 %q[l], %q[t], #4"
                                        : [c] "=&w"(c[u]), [t] "=&w"(t), [l] "+w"(l[u])
                                        : [hb] "w"(hb), [m3] "w"(m3));
                        }
                        pa[i2 / 2] = q6k_pair(l[0], l[1], xa);
                        pb[i2 / 2] = q6k_pair(c[0], c[1], xb);
                    }
                    isum = vmlaq_s32(isum, q6k_rows(pa[0], pa[1]), vmovl_s16(sc[8 * h + 2 * k0 + s]));
                    isum = vmlaq_s32(isum, q6k_rows(pb[0], pb[1]), vmovl_s16(sc[8 * h + 2 * k0 + 4 + s]));
                }
            }
        acc = vfmaq_f32(acc, vcvtq_f32_s32(isum), vmulq_n_f32(dw, a->d));
    }
    return acc;
}

/* ---- the frame: four rows per pass, one token at a time ------------------------- */

INLINE void kq_rows(int q6, uint64_t n, const uint8_t *w, uint64_t row_bytes, uint64_t nrows, const void *act,
                    uint64_t act_stride, int nt, float *out, uint64_t out_stride)
{
    size_t nb = (size_t)(n / QK_K);
    for (uint64_t r0 = 0; r0 < nrows; r0 += RT) {
        uint64_t valid = nrows - r0 < RT ? nrows - r0 : RT;
        const uint8_t *rp[RT];
        UNROLL for (int i = 0; i < RT; i++) rp[i] = w + (r0 + ((uint64_t)i < valid ? (uint64_t)i : valid - 1)) * row_bytes;
        for (int t = 0; t < nt; t++) {
            const KernQ8_K *a = (const KernQ8_K *)(const void *)((const uint8_t *)act + (uint64_t)t * act_stride);
            float32x4_t acc = q6 ? q6k_pass(rp, a, nb) : q4k_pass(rp, a, nb);
            neon_store_rows4(out + (uint64_t)t * out_stride + r0, acc, valid);
        }
    }
}

/* Both without the scheduling pass before register allocation: it hoists
 * the loads of the next rows and spills (sixteen registers). Q4_K: 105
 * instructions per 32 bytes of codes of each of the four rows instead of
 * 121; Q6_K: 148 per 16 elements of 4 rows x 4 quarters instead of 222
 * (GCC 12). */
NO_PRESCHED void kern_armv7_rows_q4_k(uint64_t n, const uint8_t *w, uint64_t row_bytes, uint64_t nrows, const void *act,
                                      uint64_t act_stride, int nt, float *out, uint64_t out_stride)
{
    kq_rows(0, n, w, row_bytes, nrows, act, act_stride, nt, out, out_stride);
}

NO_PRESCHED void kern_armv7_rows_q6_k(uint64_t n, const uint8_t *w, uint64_t row_bytes, uint64_t nrows, const void *act,
                                      uint64_t act_stride, int nt, float *out, uint64_t out_stride)
{
    kq_rows(1, n, w, row_bytes, nrows, act, act_stride, nt, out, out_stride);
}

#else
/* nothing here on other targets (ISO C wants a declaration) */
typedef int kernels_arm_v7_empty;
#endif
