/* kernels_arm_kq.c - Q4_K, Q5_K and Q6_K matmuls on aarch64 that compute four
 * weight rows per pass (KernelSet.rows of both aarch64 sets in
 * kernels_arm.c), with dotprod (Pi 5) and without (Pi 3, 4).
 *
 * Why: the one-row K-quant kernels of kernels_arm.c load the activation
 * again for every row, unpack the 6-bit scales in scalar code, and sum
 * four lanes for every row. Here four rows go together, one per lane of
 * the sums, and one or two tokens share each decoded weight vector:
 *  - a block's scales (and Q4_K's mins) are unpacked for the four rows at
 *    once: the rows' headers are loaded whole and transposed (TRN), so one
 *    vector holds a scale of all four rows, one row per lane;
 *  - each activation vector is loaded once for the four rows;
 *  - a sub-block's four 4-lane row sums become one vector (rows in lanes)
 *    by three ADDP, which one MLA multiplies by the four rows' scales.
 *    With dotprod the sums run on through the block (no zeroing) and the
 *    scales are differences of neighbours (sum_j s_j X_j = sum_j (s_j -
 *    s_j+1) T_j, T_j the running sum after sub-block j: int32 wrapping
 *    arithmetic is exact because the result fits);
 *  - Q6_K's -32 offset is not subtracted from each weight but once per
 *    block from the sum (-32 x sum_j s_j x bsum_j, the activation's
 *    sub-block sums), and Q4_K's mins likewise from the bsums.
 * Without dotprod the products go into int16 lanes (SMULL/SMLAL2: at most
 * 4 x 15 x 127 per lane for Q4_K, 4 x 31 x 127 for Q5_K, 2 x 63 x 127 for
 * Q6_K) and the ADDP tree widens them (SADDLP) before they could overflow.
 * The one-row dot entries of kernels_arm.c are these kernels on one row.
 * With dotprod, calls of TILE_TOKENS or more take the prompt tiles of
 * kernels_arm_kq_tile.c (four rows x four tokens, the same bits).
 *
 * Determinism (kernels.h): row r and token t always get, block by block,
 *   Q4_K, Q5_K: acc = fma(float(S), dw * da, acc); acc = fma(-float(M), dmin * da, acc)
 *   Q6_K: acc = fma(float(S), dw * da, acc)
 * with S and M the exact integer sums (as the reference's), in one float
 * lane, whatever the lane, the tile, the tokens sharing the call or the
 * thread split. Rows past the end of the last tile repeat the last row. */
#include "kernels_arm.h"

#include <string.h>

#if defined(__aarch64__) && defined(__GNUC__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#include <arm_neon.h>

#include "kernels_neon.h"

#define DP_ATTR NEON_DOTPROD
#define INLINE static inline __attribute__((always_inline))
#define UNROLL _Pragma("GCC unroll 16")

enum { RT = 4, /* rows per pass */ GT = 2 /* tokens per pass */ };
enum { TILE_TOKENS = 3 /* with dotprod, calls of this many tokens or more take the prompt tile */ };


/* SDOT through asm, so the same bodies compile into the baseline copies
 * (where dp is 0 and these calls are gone); the .arch line only matters for
 * unoptimised builds. */
INLINE int32x4_t sdot(int32x4_t acc, uint8x16_t w, int8x16_t a)
{
    __asm__(".arch armv8.2-a+dotprod\n\tsdot %0.4s, %1.16b, %2.16b" : "+w"(acc) : "w"(w), "w"(a));
    return acc;
}
#define SDOT_LANE(acc, w, a, k)                                                                                  \
    __asm__(".arch armv8.2-a+dotprod\n\tsdot %0.4s, %1.16b, %2.4b[" #k "]" : "+w"(acc) : "w"(w), "w"(a))

/* the four rows' sums (4 lanes each) into one vector, row i in lane i */
INLINE int32x4_t tree32(const int32x4_t *p)
{
    return vpaddq_s32(vpaddq_s32(p[0], p[1]), vpaddq_s32(p[2], p[3]));
}

/* ---- Q4_K ---------------------------------------------------------------------- */

/* Pair q of a block (32 bytes of codes: sub-blocks 2q, low nibbles, and
 * 2q + 1, high) for the four rows r and nt tokens a. */
INLINE void q45k_pair(int q, const uint8_t *const *r, uint64_t qs, const KernQ8_K *const *a, int nt, const int32x4_t *sc,
                      int32x4_t *isum, int32x4_t (*p)[RT], int five, int dp)
{
    const uint8x16_t m4 = vdupq_n_u8(15), b4 = vdupq_n_u8(0x10);
    uint8x16_t lo[RT][2], hi[RT][2];
    UNROLL for (int i = 0; i < RT; i++) {
        /* two loads, not one LD1 pair: GCC copies the pair's registers */
        uint8x16_t v0 = vld1q_u8(r[i] + qs + 32 * q), v1 = vld1q_u8(r[i] + qs + 16 + 32 * q);
        if (five) { /* bit 2q (2q + 1) of qh moved to bit 4, the nibble inserted below it */
            uint8x16_t h0 = vld1q_u8(r[i] + offsetof(BlockQ5_K, qh)), h1 = vld1q_u8(r[i] + offsetof(BlockQ5_K, qh) + 16);
            /* USHL: a negative count shifts right */
            int8x16_t sl = vdupq_n_s8((int8_t)(4 - 2 * q)), sh = vdupq_n_s8((int8_t)(3 - 2 * q));
            uint8x16_t l0 = vshlq_u8(h0, sl), l1 = vshlq_u8(h1, sl), u0 = vshlq_u8(h0, sh), u1 = vshlq_u8(h1, sh);
            lo[i][0] = vbslq_u8(m4, v0, vandq_u8(l0, b4));
            lo[i][1] = vbslq_u8(m4, v1, vandq_u8(l1, b4));
            hi[i][0] = vsriq_n_u8(vandq_u8(u0, b4), v0, 4);
            hi[i][1] = vsriq_n_u8(vandq_u8(u1, b4), v1, 4);
        } else {
            lo[i][0] = vandq_u8(v0, m4);
            lo[i][1] = vandq_u8(v1, m4);
            hi[i][0] = vshrq_n_u8(v0, 4);
            hi[i][1] = vshrq_n_u8(v1, 4);
        }
    }
    UNROLL for (int t = 0; t < nt; t++) {
        int8x16x4_t x = vld1q_s8_x4(a[t]->q + 64 * q);
        if (dp) {
            UNROLL for (int i = 0; i < RT; i++) p[t][i] = sdot(sdot(p[t][i], lo[i][0], x.val[0]), lo[i][1], x.val[1]);
            isum[t] = vmlaq_s32(isum[t], tree32(p[t]), sc[2 * q]);
            UNROLL for (int i = 0; i < RT; i++) p[t][i] = sdot(sdot(p[t][i], hi[i][0], x.val[2]), hi[i][1], x.val[3]);
            isum[t] = vmlaq_s32(isum[t], tree32(p[t]), sc[2 * q + 1]);
        } else {
            for (int s = 0; s < 2; s++) {
                int16x8_t m[RT];
                UNROLL for (int i = 0; i < RT; i++) {
                    int8x16_t w0 = vreinterpretq_s8_u8(s ? hi[i][0] : lo[i][0]);
                    int8x16_t w1 = vreinterpretq_s8_u8(s ? hi[i][1] : lo[i][1]);
                    int16x8_t v = vmull_s8(vget_low_s8(w0), vget_low_s8(x.val[2 * s]));
                    v = vmlal_high_s8(v, w0, x.val[2 * s]);
                    v = vmlal_s8(v, vget_low_s8(w1), vget_low_s8(x.val[2 * s + 1]));
                    m[i] = vmlal_high_s8(v, w1, x.val[2 * s + 1]);
                }
                /* int16 lanes: 4 products of at most 15 (31) x 127, doubled twice (once) */
                int32x4_t sum = five ? vpaddq_s32(vpaddlq_s16(vpaddq_s16(m[0], m[1])), vpaddlq_s16(vpaddq_s16(m[2], m[3])))
                                     : vpaddlq_s16(vpaddq_s16(vpaddq_s16(m[0], m[1]), vpaddq_s16(m[2], m[3])));
                isum[t] = vmlaq_s32(isum[t], sum, sc[2 * q + s]);
            }
        }
    }
}

/* Rows rp[0..3] (at their first block) against nt (1 or 2) tokens over nb
 * blocks: acc[t] lane i = row i . token t. Q5_K (five): bit j of qh[l] is
 * the fifth bit of element l of sub-block j. */
INLINE void q45k_pass(const uint8_t *const *rp, const uint8_t *act, uint64_t act_stride, int nt, uint64_t nb,
                      float32x4_t *acc, int five, int dp)
{
    const uint64_t bytes = five ? sizeof(BlockQ5_K) : sizeof(BlockQ4_K);
    const uint64_t qs = five ? offsetof(BlockQ5_K, qs) : offsetof(BlockQ4_K, qs);
    const int16x8_t m127 = vdupq_n_s16(127);
    UNROLL for (int t = 0; t < nt; t++) acc[t] = vdupq_n_f32(0.0f);
    for (uint64_t b = 0; b < nb; b++) {
        const uint8_t *r[RT];
        UNROLL for (int i = 0; i < RT; i++) r[i] = rp[i] + bytes * b;
        /* header: d, dmin, the 12 bytes of 6-bit scales and mins (quant_q4k_scale_min) */
        uint32x4_t h[4];
        neon_transpose4(vld1q_u8(r[0]), vld1q_u8(r[1]), vld1q_u8(r[2]), vld1q_u8(r[3]), h);
        uint16x8_t dd = vreinterpretq_u16_u32(h[0]);
        float32x4_t dw = vcvt_f32_f16(vreinterpret_f16_u16(vget_low_u16(vuzp1q_u16(dd, dd))));
        float32x4_t dm = vcvt_f32_f16(vreinterpret_f16_u16(vget_low_u16(vuzp2q_u16(dd, dd))));
        uint32x4_t sv[2], nv[2];
        neon_q4k_scales_mins(h, sv, nv);
        uint32x4_t s03 = sv[0], s47 = sv[1], n03 = nv[0], n47 = nv[1];
        int32x4_t sc[8], mn[8];
        neon_ubytes4(s03, sc);
        neon_ubytes4(s47, sc + 4);
        if (dp) {
            UNROLL for (int j = 0; j < 7; j++) sc[j] = vsubq_s32(sc[j], sc[j + 1]);
        } else {
            neon_ubytes4(n03, mn);
            neon_ubytes4(n47, mn + 4);
        }
        const KernQ8_K *a[GT];
        int32x4_t isum[GT], msum[GT], p[GT][RT];
        UNROLL for (int t = 0; t < nt; t++) {
            a[t] = (const KernQ8_K *)(act + (uint64_t)t * act_stride) + b;
            /* mins . (bsum pairs): with dotprod as bytes, bsum = 128 h + l */
            int16x8_t bs = vpaddq_s16(vld1q_s16(a[t]->bsum), vld1q_s16(a[t]->bsum + 8));
            if (dp) {
                int8x16_t lh = vcombine_s8(vmovn_s16(vandq_s16(bs, m127)), vmovn_s16(vshrq_n_s16(bs, 7)));
                int32x4_t ml = vdupq_n_s32(0), mh = vdupq_n_s32(0);
                SDOT_LANE(ml, n03, lh, 0);
                SDOT_LANE(ml, n47, lh, 1);
                SDOT_LANE(mh, n03, lh, 2);
                SDOT_LANE(mh, n47, lh, 3);
                msum[t] = vaddq_s32(ml, vshlq_n_s32(mh, 7));
            } else {
                int32x4_t b0 = vmovl_s16(vget_low_s16(bs)), b1 = vmovl_high_s16(bs);
                int32x4_t m = vmulq_laneq_s32(mn[0], b0, 0);
                m = vmlaq_laneq_s32(m, mn[1], b0, 1);
                m = vmlaq_laneq_s32(m, mn[2], b0, 2);
                m = vmlaq_laneq_s32(m, mn[3], b0, 3);
                m = vmlaq_laneq_s32(m, mn[4], b1, 0);
                m = vmlaq_laneq_s32(m, mn[5], b1, 1);
                m = vmlaq_laneq_s32(m, mn[6], b1, 2);
                msum[t] = vmlaq_laneq_s32(m, mn[7], b1, 3);
            }
            isum[t] = vdupq_n_s32(0);
            UNROLL for (int i = 0; i < RT; i++) p[t][i] = vdupq_n_s32(0);
        }
        /* unrolled for one token; two tokens' sums leave no registers for it */
        if (nt == 1) {
            UNROLL for (int q = 0; q < 4; q++) q45k_pair(q, r, qs, a, nt, sc, isum, p, five, dp);
        } else {
            for (int q = 0; q < 4; q++) q45k_pair(q, r, qs, a, nt, sc, isum, p, five, dp);
        }
        UNROLL for (int t = 0; t < nt; t++) {
            acc[t] = vfmaq_f32(acc[t], vcvtq_f32_s32(isum[t]), vmulq_n_f32(dw, a[t]->d));
            acc[t] = vfmsq_f32(acc[t], vcvtq_f32_s32(msum[t]), vmulq_n_f32(dm, a[t]->d));
        }
    }
}

/* ---- Q6_K ---------------------------------------------------------------------- */

/* Sub-blocks in the order they are summed: per half h of 128 elements, the
 * first 16 bytes of each quarter (i = 0), then the second (i = 1). */
static const uint8_t q6_order[16] = {0, 2, 4, 6, 1, 3, 5, 7, 8, 10, 12, 14, 9, 11, 13, 15};

INLINE void q6k_pass(const uint8_t *const *rp, const uint8_t *act, uint64_t act_stride, int nt, uint64_t nb,
                     float32x4_t *acc, int dp)
{
    const uint8x16_t m3 = vdupq_n_u8(3), m30 = vdupq_n_u8(0x30);
    UNROLL for (int t = 0; t < nt; t++) acc[t] = vdupq_n_f32(0.0f);
    for (uint64_t b = 0; b < nb; b++) {
        const uint8_t *r[RT];
        UNROLL for (int i = 0; i < RT; i++) r[i] = rp[i] + sizeof(BlockQ6_K) * b;
        uint32x4_t g[4];
        const uint64_t sco = offsetof(BlockQ6_K, scales);
        neon_transpose4(vld1q_u8(r[0] + sco), vld1q_u8(r[1] + sco), vld1q_u8(r[2] + sco), vld1q_u8(r[3] + sco), g);
        int32x4_t sc[16], ds[16];
        UNROLL for (int k = 0; k < 4; k++) neon_sbytes4(g[k], sc + 4 * k);
        float32x4_t dw = neon_rows4_f16(r, offsetof(BlockQ6_K, d));
        if (dp) {
            UNROLL for (int k = 0; k < 15; k++) ds[k] = vsubq_s32(sc[q6_order[k]], sc[q6_order[k + 1]]);
            ds[15] = sc[15];
        }
        const KernQ8_K *a[GT];
        int32x4_t isum[GT], p[GT][RT];
        UNROLL for (int t = 0; t < nt; t++) {
            a[t] = (const KernQ8_K *)(act + (uint64_t)t * act_stride) + b;
            /* -32 x sum_j s_j bsum_j */
            int16x8_t b0 = vld1q_s16(a[t]->bsum), b1 = vld1q_s16(a[t]->bsum + 8);
            int32x4_t bs[4] = {vmovl_s16(vget_low_s16(b0)), vmovl_high_s16(b0), vmovl_s16(vget_low_s16(b1)),
                               vmovl_high_s16(b1)};
            int32x4_t c = vmulq_laneq_s32(sc[0], bs[0], 0);
            UNROLL for (int j = 1; j < 16; j++) {
                switch (j & 3) {
                case 0: c = vmlaq_laneq_s32(c, sc[j], bs[j >> 2], 0); break;
                case 1: c = vmlaq_laneq_s32(c, sc[j], bs[j >> 2], 1); break;
                case 2: c = vmlaq_laneq_s32(c, sc[j], bs[j >> 2], 2); break;
                default: c = vmlaq_laneq_s32(c, sc[j], bs[j >> 2], 3); break;
                }
            }
            isum[t] = vnegq_s32(vshlq_n_s32(c, 5));
            UNROLL for (int i = 0; i < RT; i++) p[t][i] = vdupq_n_s32(0);
        }
        for (int h = 0; h < 2; h++)
            for (int s = 0; s < 2; s++) {
                /* quarter k of the half, 16 bytes (elements 128h + 32k + 16s ..): sub-block 8h + 2k + s */
                uint8x16_t c[RT][4];
                UNROLL for (int i = 0; i < RT; i++) {
                    uint8x16_t l0 = vld1q_u8(r[i] + offsetof(BlockQ6_K, ql) + 64 * h + 16 * s);
                    uint8x16_t l1 = vld1q_u8(r[i] + offsetof(BlockQ6_K, ql) + 64 * h + 32 + 16 * s);
                    uint8x16_t hb = vld1q_u8(r[i] + offsetof(BlockQ6_K, qh) + 32 * h + 16 * s);
                    /* c2 = l0 >> 4 | (hb & 0x30), c3 = l1 >> 4 | (hb >> 6) << 4, then (SLI
                     * overwrites l0 and l1, in asm so GCC does not copy them first)
                     * c0 = l0 & 15 | (hb & 3) << 4, c1 = l1 & 15 | ((hb >> 2) & 3) << 4 */
                    uint8x16_t t1, t2;
                    __asm__("and %[c2].16b, %[hb].16b, %[m30].16b\n\t"
                            "ushr %[c3].16b, %[hb].16b, #2\n\t"
                            "and %[t2].16b, %[hb].16b, %[m3].16b\n\t"
                            "and %[t1].16b, %[c3].16b, %[m3].16b\n\t"
                            "sri %[c2].16b, %[l0].16b, #4\n\t"
                            "sri %[c3].16b, %[l1].16b, #4\n\t"
                            "sli %[l0].16b, %[t2].16b, #4\n\t"
                            "sli %[l1].16b, %[t1].16b, #4"
                            : [c2] "=&w"(c[i][2]), [c3] "=&w"(c[i][3]), [t1] "=&w"(t1), [t2] "=&w"(t2), [l0] "+w"(l0),
                              [l1] "+w"(l1)
                            : [hb] "w"(hb), [m30] "w"(m30), [m3] "w"(m3));
                    c[i][0] = l0;
                    c[i][1] = l1;
                }
                UNROLL for (int t = 0; t < nt; t++) {
                    UNROLL for (int k = 0; k < 4; k++) {
                        int j = 8 * h + 2 * k + s;
                        int8x16_t x = vld1q_s8(a[t]->q + 16 * j);
                        if (dp) {
                            UNROLL for (int i = 0; i < RT; i++) p[t][i] = sdot(p[t][i], c[i][k], x);
                            isum[t] = vmlaq_s32(isum[t], tree32(p[t]), ds[8 * h + 4 * s + k]);
                        } else {
                            int16x8_t m[RT];
                            UNROLL for (int i = 0; i < RT; i++) {
                                int8x16_t wv = vreinterpretq_s8_u8(c[i][k]);
                                m[i] = vmlal_high_s8(vmull_s8(vget_low_s8(wv), vget_low_s8(x)), wv, x);
                            }
                            int32x4_t s01 = vpaddlq_s16(vpaddq_s16(m[0], m[1]));
                            int32x4_t s23 = vpaddlq_s16(vpaddq_s16(m[2], m[3]));
                            isum[t] = vmlaq_s32(isum[t], vpaddq_s32(s01, s23), sc[j]);
                        }
                    }
                }
            }
        UNROLL for (int t = 0; t < nt; t++) acc[t] = vfmaq_f32(acc[t], vcvtq_f32_s32(isum[t]), vmulq_n_f32(dw, a[t]->d));
    }
}

/* ---- the frame ------------------------------------------------------------------ */

/* kind: GGML_TYPE_Q4_K, Q5_K or Q6_K (a compile-time constant) */
INLINE void kq_rows(int kind, int dp, uint64_t n, const uint8_t *w, uint64_t row_bytes, uint64_t nrows,
                    const void *act, uint64_t act_stride, int nt, float *out, uint64_t out_stride)
{
    uint64_t nb = n / QK_K;
    if (dp && nt >= TILE_TOKENS) { /* the same bits (kernels_arm_kq_tile.c) */
        kern_arm_dp_tile_kq(kind, n, w, row_bytes, nrows, act, act_stride, nt, out, out_stride);
        return;
    }
    for (uint64_t r0 = 0; r0 < nrows; r0 += RT) {
        uint64_t valid = nrows - r0 < RT ? nrows - r0 : RT;
        const uint8_t *rp[RT];
        UNROLL for (int i = 0; i < RT; i++) rp[i] = w + (r0 + ((uint64_t)i < valid ? (uint64_t)i : valid - 1)) * row_bytes;
        for (int t0 = 0; t0 < nt; t0 += GT) {
            const uint8_t *a = (const uint8_t *)act + (uint64_t)t0 * act_stride;
            float32x4_t acc[GT];
            int k = nt - t0 < GT ? nt - t0 : GT;
            if (kind != GGML_TYPE_Q6_K) {
                if (k == 2) q45k_pass(rp, a, act_stride, 2, nb, acc, kind == GGML_TYPE_Q5_K, dp);
                else q45k_pass(rp, a, act_stride, 1, nb, acc, kind == GGML_TYPE_Q5_K, dp);
            } else {
                if (k == 2) q6k_pass(rp, a, act_stride, 2, nb, acc, dp);
                else q6k_pass(rp, a, act_stride, 1, nb, acc, dp);
            }
            for (int t = 0; t < k; t++) {
                float *o = out + (uint64_t)(t0 + t) * out_stride + r0;
                neon_store_rows4(o, acc[t], valid);
            }
        }
    }
}

void kern_arm_rows_q4_k(uint64_t n, const uint8_t *w, uint64_t row_bytes, uint64_t nrows, const void *act,
                        uint64_t act_stride, int nt, float *out, uint64_t out_stride)
{
    kq_rows(GGML_TYPE_Q4_K, 0, n, w, row_bytes, nrows, act, act_stride, nt, out, out_stride);
}

void kern_arm_rows_q5_k(uint64_t n, const uint8_t *w, uint64_t row_bytes, uint64_t nrows, const void *act,
                        uint64_t act_stride, int nt, float *out, uint64_t out_stride)
{
    kq_rows(GGML_TYPE_Q5_K, 0, n, w, row_bytes, nrows, act, act_stride, nt, out, out_stride);
}

void kern_arm_rows_q6_k(uint64_t n, const uint8_t *w, uint64_t row_bytes, uint64_t nrows, const void *act,
                        uint64_t act_stride, int nt, float *out, uint64_t out_stride)
{
    kq_rows(GGML_TYPE_Q6_K, 0, n, w, row_bytes, nrows, act, act_stride, nt, out, out_stride);
}

DP_ATTR void kern_arm_dp_rows_q4_k(uint64_t n, const uint8_t *w, uint64_t row_bytes, uint64_t nrows, const void *act,
                                   uint64_t act_stride, int nt, float *out, uint64_t out_stride)
{
    kq_rows(GGML_TYPE_Q4_K, 1, n, w, row_bytes, nrows, act, act_stride, nt, out, out_stride);
}

DP_ATTR void kern_arm_dp_rows_q5_k(uint64_t n, const uint8_t *w, uint64_t row_bytes, uint64_t nrows, const void *act,
                                   uint64_t act_stride, int nt, float *out, uint64_t out_stride)
{
    kq_rows(GGML_TYPE_Q5_K, 1, n, w, row_bytes, nrows, act, act_stride, nt, out, out_stride);
}

DP_ATTR void kern_arm_dp_rows_q6_k(uint64_t n, const uint8_t *w, uint64_t row_bytes, uint64_t nrows, const void *act,
                                   uint64_t act_stride, int nt, float *out, uint64_t out_stride)
{
    kq_rows(GGML_TYPE_Q6_K, 1, n, w, row_bytes, nrows, act, act_stride, nt, out, out_stride);
}

/* The i8mm set's (kernels_arm.c): calls of TILE_TOKENS tokens or more go to
 * the SMMLA tiles (kernels_arm_kq_tile.c), the rest to the dotprod kernels. */
#define KQ_MM_ROWS(name, k)                                                                                      \
    DP_ATTR void kern_arm_mm_rows_##name(uint64_t n, const uint8_t *w, uint64_t row_bytes, uint64_t nrows,          \
                                         const void *act, uint64_t act_stride, int nt, float *out, uint64_t out_stride) \
    {                                                                                                            \
        if (nt >= TILE_TOKENS)                                                                                   \
            kern_arm_mm_tile_kq(k, n, w, row_bytes, nrows, act, act_stride, nt, out, out_stride);               \
        else                                                                                                     \
            kern_arm_dp_rows_##name(n, w, row_bytes, nrows, act, act_stride, nt, out, out_stride);               \
    }
KQ_MM_ROWS(q4_k, GGML_TYPE_Q4_K)
KQ_MM_ROWS(q5_k, GGML_TYPE_Q5_K)
KQ_MM_ROWS(q6_k, GGML_TYPE_Q6_K)

#else
/* nothing here on other targets (ISO C wants a declaration) */
typedef int kernels_arm_kq_empty;
#endif
