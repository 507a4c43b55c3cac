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
 *    lanes, 8 multiply-adds each), then widens it into its F32 sum; elements
 *    past the last multiple of 8 are added in F32 at the end. (Runs of 256
 *    were measured: the F16 fixture then lands at 5.6e-3 of the largest
 *    logit, outside the class.)
 *
 * The widening is the cost of the short runs (4 instructions per run and
 * (row, token), against 8 FMLA), so it is made as small as it can be: the
 * run's 8 lanes become 4 (FCVTL, FCVTL2, FADD) and two (row, token)s share
 * one FADDP and one FADD into a vector holding both their F32 sums (two
 * lanes each). That halves the F32 sums' registers, and the tiles fit in
 * the 32 vector registers with every load serving several FMLA:
 *  - prompts, two rows x four tokens: the four tokens' activations are laid
 *    out interleaved (8 elements of token 0, of 1, 2, 3, then the next 8),
 *    so one LD1 of four registers gives a chunk of all four; each row's
 *    LD1 gives four chunks; 64 FMLA per 12 loads;
 *  - generation (and the tokens of a call past its last four), four rows x
 *    one token: one LD1 of four registers per row and one for the token,
 *    16 FMLA per 5 loads.
 * The runs are unrolled (assembly: GCC spilled the sums), the first product
 * of a run is an FMUL (no zeroing).
 *
 * Every (row, token) goes through these very steps in this order, whatever
 * tile, token group or thread it lands in (run1 below is the same
 * arithmetic for one row and token: leftover rows and the last short run):
 * the determinism contract of kernels.h holds (a prompt fed in chunks
 * equals token by token, bit for bit). A token group's activations are
 * converted once per call and block of 2048, on the stack, not once per
 * row. */
#include <stdint.h>
#include <string.h>

#include "kernels_arm.h"
#include "../quant.h"

#if defined(__aarch64__) && defined(__GNUC__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#include <arm_neon.h>

#ifdef __clang__
#define FP16 __attribute__((target("fp16")))
#else
#define FP16 __attribute__((target("arch=armv8.2-a+fp16")))
#endif
#define INLINE static inline __attribute__((always_inline))

/* Activations are converted KBLOCK elements at a time (a token group's
 * block on the stack: 16 KiB); within a block each (row, token) sums RUN
 * elements in F16 (8 multiply-adds per lane) before widening them into
 * its F32 sums. */
enum { KBLOCK = 2048, RUN = 64, GROUP = 4 };

/* Largest |x| at which a block is used unscaled (see above). */
#define HALF_SAFE 256.0f

/* len elements of one token (len a multiple of 8) to F16, chunks of 8 at
 * h, h + xs, h + 2 xs...; divided by the returned power of two when they
 * are large. */
FP16 static float block_to_half(const float *x, uint32_t len, float16_t *h, uint32_t xs)
{
    float32x4_t m = vdupq_n_f32(0.0f);
    for (uint32_t i = 0; i < len; i += 4) m = vmaxnmq_f32(m, vabsq_f32(vld1q_f32(x + i)));
    float mx = vmaxnmvq_f32(m), scale = 1.0f;
    while (mx > HALF_SAFE * scale && scale < 0x1p100f) scale *= 2.0f;
    float32x4_t inv = vdupq_n_f32(1.0f / scale);
    for (uint32_t i = 0; i < len; i += 8) {
        float16x4_t lo = vcvt_f16_f32(vmulq_f32(vld1q_f32(x + i), inv));
        vst1q_f16(h + i / 8 * xs, vcvt_high_f16_f32(lo, vmulq_f32(vld1q_f32(x + i + 4), inv)));
    }
    return scale;
}

INLINE float16x8_t ldw(const uint8_t *p)
{
    return vreinterpretq_f16_u8(vld1q_u8(p));
}

/* One run of m elements (m a multiple of 8, at most RUN) of one row w and
 * one token (chunks of 8 at x, x + xs, ...) into its two F32 sums s: the
 * same steps as the tiles' assembly. */
FP16 INLINE float32x2_t run1(float32x2_t s, const uint8_t *w, const float16_t *x, uint32_t xs, uint32_t m)
{
    float16x8_t a = vmulq_f16(ldw(w), vld1q_f16(x));
    for (uint32_t i = 8; i < m; i += 8) a = vfmaq_f16(a, ldw(w + 2 * i), vld1q_f16(x + i / 8 * xs));
    float32x4_t v = vaddq_f32(vcvt_f32_f16(vget_low_f16(a)), vcvt_high_f32_f16(a));
    return vadd_f32(s, vpadd_f32(vget_low_f32(v), vget_high_f32(v)));
}

/* The block's result of one (row, token) into out (first block: =, then
 * +=): its sums s (after nfull runs) with the block's last short run, the
 * two lanes added, times the block's scale. */
FP16 INLINE void finish(float *out, float32x2_t s, const uint8_t *w, const float16_t *x, uint32_t xs, uint32_t len,
                        float scale, int first)
{
    uint32_t full = len / RUN * RUN;
    if (full < len) s = run1(s, w + 2 * full, x + full / 8 * xs, xs, len - full);
    float v = (vget_lane_f32(s, 0) + vget_lane_f32(s, 1)) * scale;
    *out = first ? v : *out + v;
}

/* One row against one token: rows and tokens the tiles leave over. */
FP16 static void tile1x1(const uint8_t *w, const float16_t *x, uint32_t xs, uint32_t len, float scale, float *out,
                         int first)
{
    float32x2_t s = vdup_n_f32(0.0f);
    uint32_t full = len / RUN * RUN;
    for (uint32_t i = 0; i < full; i += RUN) s = run1(s, w + 2 * i, x + i / 8 * xs, xs, RUN);
    finish(out, s, w, x, xs, len, scale, first);
}

/* Widening at the end of a run: F16 sums a and b (two (row, token)s) into
 * their F32 sums, lanes 0-1 (a's) and 2-3 (b's) of acc; t0..t3 scratch. */
#define WIDEN(a, b, acc, t0, t1, t2, t3)                                                                         \
    "fcvtl " t0 ".4s, " a ".4h\n\t"                                                                             \
    "fcvtl2 " t1 ".4s, " a ".8h\n\t"                                                                            \
    "fcvtl " t2 ".4s, " b ".4h\n\t"                                                                             \
    "fcvtl2 " t3 ".4s, " b ".8h\n\t"                                                                            \
    "fadd " t0 ".4s, " t0 ".4s, " t1 ".4s\n\t"                                                                  \
    "fadd " t2 ".4s, " t2 ".4s, " t3 ".4s\n\t"                                                                  \
    "faddp " t0 ".4s, " t0 ".4s, " t2 ".4s\n\t"                                                                 \
    "fadd " acc ".4s, " acc ".4s, " t0 ".4s\n\t"

/* Prompts: rows 0 (chunk in wa) and 1 (in wb) times one chunk of the four
 * tokens (v28..v31, loaded here) into v0..v3 (row 0) and v4..v7 (row 1). */
#define P_CHUNK(op, wa, wb)                                                                                      \
    "ld1 {v28.8h-v31.8h}, [%[x]], #64\n\t"                                                                      \
    op " v0.8h, " wa ".8h, v28.8h\n\t" op " v1.8h, " wa ".8h, v29.8h\n\t"                                       \
    op " v2.8h, " wa ".8h, v30.8h\n\t" op " v3.8h, " wa ".8h, v31.8h\n\t"                                       \
    op " v4.8h, " wb ".8h, v28.8h\n\t" op " v5.8h, " wb ".8h, v29.8h\n\t"                                       \
    op " v6.8h, " wb ".8h, v30.8h\n\t" op " v7.8h, " wb ".8h, v31.8h\n\t"
/* 32 elements: four chunks of each row, then the four chunks of the tokens */
#define P_HALF(op0)                                                                                              \
    "ld1 {v20.8h-v23.8h}, [%[w0]], #64\n\t"                                                                     \
    "ld1 {v24.8h-v27.8h}, [%[w1]], #64\n\t" P_CHUNK(op0, "v20", "v24") P_CHUNK("fmla", "v21", "v25")              \
        P_CHUNK("fmla", "v22", "v26") P_CHUNK("fmla", "v23", "v27")

/* Rows w0, w1 against the four tokens interleaved at x (chunk stride 32):
 * nruns (>= 1) full runs into acc (16 floats: row r, token t at
 * acc[8 r + 2 t], two lanes). */
FP16 static void tile2x4(const uint8_t *w0, const uint8_t *w1, const float16_t *x, uint32_t nruns, float *acc)
{
    __asm__ volatile("movi v16.2d, #0\n\t"
                     "movi v17.2d, #0\n\t"
                     "movi v18.2d, #0\n\t"
                     "movi v19.2d, #0\n\t"
                     "1:\n\t" P_HALF("fmul") P_HALF("fmla")
                     WIDEN("v0", "v1", "v16", "v20", "v21", "v22", "v23")
                     WIDEN("v2", "v3", "v17", "v24", "v25", "v26", "v27")
                     WIDEN("v4", "v5", "v18", "v28", "v29", "v30", "v31")
                     WIDEN("v6", "v7", "v19", "v20", "v21", "v22", "v23")
                     "subs %w[n], %w[n], #1\n\t"
                     "b.ne 1b\n\t"
                     "st1 {v16.4s-v19.4s}, [%[acc]]\n\t"
                     : [w0] "+r"(w0), [w1] "+r"(w1), [x] "+r"(x), [n] "+r"(nruns)
                     : [acc] "r"(acc)
                     : "memory", "cc", "v0", "v1", "v2", "v3", "v4", "v5", "v6", "v7", "v16", "v17", "v18", "v19",
                       "v20", "v21", "v22", "v23", "v24", "v25", "v26", "v27", "v28", "v29", "v30", "v31");
}

/* Generation, 32 elements: four chunks of the token (v4..v7) and of each
 * row (v16.., v20.., v24.., v28..) into v0..v3. */
#define G_HALF(op0)                                                                                              \
    "ld1 {v4.8h-v7.8h}, [%[x]], #64\n\t"                                                                        \
    "ld1 {v16.8h-v19.8h}, [%[w0]], #64\n\t"                                                                     \
    "ld1 {v20.8h-v23.8h}, [%[w1]], #64\n\t"                                                                     \
    "ld1 {v24.8h-v27.8h}, [%[w2]], #64\n\t"                                                                     \
    "ld1 {v28.8h-v31.8h}, [%[w3]], #64\n\t"                                                                     \
    op0 " v0.8h, v16.8h, v4.8h\n\t" op0 " v1.8h, v20.8h, v4.8h\n\t"                                             \
    op0 " v2.8h, v24.8h, v4.8h\n\t" op0 " v3.8h, v28.8h, v4.8h\n\t"                                             \
    "fmla v0.8h, v17.8h, v5.8h\n\t" "fmla v1.8h, v21.8h, v5.8h\n\t"                                             \
    "fmla v2.8h, v25.8h, v5.8h\n\t" "fmla v3.8h, v29.8h, v5.8h\n\t"                                             \
    "fmla v0.8h, v18.8h, v6.8h\n\t" "fmla v1.8h, v22.8h, v6.8h\n\t"                                             \
    "fmla v2.8h, v26.8h, v6.8h\n\t" "fmla v3.8h, v30.8h, v6.8h\n\t"                                             \
    "fmla v0.8h, v19.8h, v7.8h\n\t" "fmla v1.8h, v23.8h, v7.8h\n\t"                                             \
    "fmla v2.8h, v27.8h, v7.8h\n\t" "fmla v3.8h, v31.8h, v7.8h\n\t"

/* Rows w, w + rs, w + 2 rs, w + 3 rs against one token at x (contiguous):
 * nruns (>= 1) full runs into acc (8 floats: row r at acc[2 r], two
 * lanes). */
FP16 static void tile4x1(const uint8_t *w, uint64_t rs, const float16_t *x, uint32_t nruns, float *acc)
{
    const uint8_t *w0 = w, *w1 = w + rs, *w2 = w + 2 * rs, *w3 = w + 3 * rs;
    __asm__ volatile("movi v8.2d, #0\n\t"
                     "movi v9.2d, #0\n\t"
                     "1:\n\t" G_HALF("fmul") G_HALF("fmla")
                     WIDEN("v0", "v1", "v8", "v16", "v17", "v18", "v19")
                     WIDEN("v2", "v3", "v9", "v20", "v21", "v22", "v23")
                     "subs %w[n], %w[n], #1\n\t"
                     "b.ne 1b\n\t"
                     "st1 {v8.4s, v9.4s}, [%[acc]]\n\t"
                     : [w0] "+r"(w0), [w1] "+r"(w1), [w2] "+r"(w2), [w3] "+r"(w3), [x] "+r"(x), [n] "+r"(nruns)
                     : [acc] "r"(acc)
                     : "memory", "cc", "v0", "v1", "v2", "v3", "v4", "v5", "v6", "v7", "v8", "v9", "v16", "v17",
                       "v18", "v19", "v20", "v21", "v22", "v23", "v24", "v25", "v26", "v27", "v28", "v29", "v30",
                       "v31");
}

/* The results of four (row, token)s whose block had no short run, from
 * their sums a (lanes 0-1 the first's, 2-3 the second's) and b (the third
 * and fourth): finish's steps on four lanes at once (FADDP adds each
 * pair of lanes). */
FP16 INLINE float32x4_t finish4(float32x4_t a, float32x4_t b, float32x4_t scale)
{
    return vmulq_f32(vpaddq_f32(a, b), scale);
}

/* One token (contiguous at h) against rows [0, nrows) of the block at
 * column k0: four rows per pass, then one by one. */
FP16 static void one_token(const uint8_t *w, uint64_t row_bytes, uint64_t nrows, uint64_t k0, const float16_t *h,
                           uint32_t len, float scale, float *o, int first)
{
    uint32_t nruns = len / RUN;
    uint64_t r = 0;
    if (nruns)
        for (; r + 4 <= nrows; r += 4) {
            const uint8_t *wr = w + r * row_bytes + 2 * k0;
            float acc[8];
            tile4x1(wr, row_bytes, h, nruns, acc);
            if (len % RUN == 0) {
                float32x4_t v = finish4(vld1q_f32(acc), vld1q_f32(acc + 4), vdupq_n_f32(scale));
                vst1q_f32(o + r, first ? v : vaddq_f32(vld1q_f32(o + r), v));
                continue;
            }
            for (int i = 0; i < 4; i++)
                finish(o + r + i, vld1_f32(acc + 2 * i), wr + i * row_bytes, h, 8, len, scale, first);
        }
    for (; r < nrows; r++) tile1x1(w + r * row_bytes + 2 * k0, h, 8, len, scale, o + r, first);
}

/* Four tokens (interleaved at h) against rows [0, nrows) of the block at
 * column k0: two rows per pass, then one by one. */
FP16 static void four_tokens(const uint8_t *w, uint64_t row_bytes, uint64_t nrows, uint64_t k0, const float16_t *h,
                             uint32_t len, const float *scale, float *o, uint64_t out_stride, int first)
{
    uint32_t nruns = len / RUN;
    float32x4_t sc = vld1q_f32(scale);
    uint64_t r = 0;
    if (nruns)
        for (; r + 2 <= nrows; r += 2) {
            const uint8_t *w0 = w + r * row_bytes + 2 * k0, *w1 = w0 + row_bytes;
            float acc[16];
            tile2x4(w0, w1, h, nruns, acc);
            if (len % RUN == 0) {
                /* rows 0 and 1 of tokens 0-3, then token by token: (row 0, row 1) */
                float32x4_t r0 = finish4(vld1q_f32(acc), vld1q_f32(acc + 4), sc);
                float32x4_t r1 = finish4(vld1q_f32(acc + 8), vld1q_f32(acc + 12), sc);
                float32x4_t lo = vzip1q_f32(r0, r1), hi = vzip2q_f32(r0, r1);
                float32x2_t v[4] = {vget_low_f32(lo), vget_high_f32(lo), vget_low_f32(hi), vget_high_f32(hi)};
                for (int t = 0; t < GROUP; t++) {
                    float *ot = o + (uint64_t)t * out_stride + r;
                    vst1_f32(ot, first ? v[t] : vadd_f32(vld1_f32(ot), v[t]));
                }
                continue;
            }
            for (int t = 0; t < GROUP; t++) {
                float *ot = o + (uint64_t)t * out_stride + r;
                finish(ot, vld1_f32(acc + 2 * t), w0, h + 8 * t, 8 * GROUP, len, scale[t], first);
                finish(ot + 1, vld1_f32(acc + 8 + 2 * t), w1, h + 8 * t, 8 * GROUP, len, scale[t], first);
            }
        }
    for (; r < nrows; r++)
        for (int t = 0; t < GROUP; t++)
            tile1x1(w + r * row_bytes + 2 * k0, h + 8 * t, 8 * GROUP, len, scale[t], o + (uint64_t)t * out_stride + r,
                    first);
}

/* KernelSet.rows[GGML_TYPE_F16] for CPUs with FEAT_FP16 (kernels.h's
 * KernRowsFn; activations are F32, converted here a block at a time). */
FP16 void kern_arm_fp16_rows_f16(uint64_t n, const uint8_t *w, uint64_t row_bytes, uint64_t nrows, const void *act,
                                 uint64_t act_stride, int nt, float *out, uint64_t out_stride)
{
    float16_t half[GROUP * KBLOCK] __attribute__((aligned(16)));
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
            if (g < GROUP) { /* one token at a time, each contiguous */
                for (int t = 0; t < g; t++) {
                    scale[t] = block_to_half(x[t] + k0, len, half + t * KBLOCK, 8);
                    one_token(w, row_bytes, nrows, k0, half + t * KBLOCK, len, scale[t], o + (uint64_t)t * out_stride,
                              first);
                }
                continue;
            }
            /* four tokens, interleaved chunk by chunk (token t's chunks at half + 8 t, stride 32) */
            for (int t = 0; t < GROUP; t++) scale[t] = block_to_half(x[t] + k0, len, half + 8 * t, 8 * GROUP);
            four_tokens(w, row_bytes, nrows, k0, half, len, scale, o, out_stride, first);
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
