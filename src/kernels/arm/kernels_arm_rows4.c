/* kernels_arm_rows4.c - Q8_0 and Q4_0 matmuls on aarch64 without dotprod
 * (Cortex-A53/A72: Pi 3, Pi 4, Zero 2 W on a 64-bit OS) that compute four
 * weight rows per pass (KernelSet.rows of the "aarch64 NEON" set in
 * kernels_arm.c; the dotprod set has its eight-row kernels in
 * kernels_arm_rows.c).
 *
 * The design of the armv7 four-row kernels (kernels_arm_v7.c) with what
 * aarch64 adds (SMLAL2, full-width ADDP, 32 vector registers):
 *  - each activation vector is loaded once for the four rows, and each
 *    weight vector (and the four rows' scales) once for up to four tokens;
 *  - the products go into int16 lanes (SMULL/SMLAL2); the four rows' lanes
 *    become one int32 vector, row i in lane i, so one convert, one scale
 *    product and one FMA serve four rows:
 *      Q8_0: two products per int16 lane at most (2 x 128 x 127 < 2^15),
 *            each row widened by SADDLP/SADALP, then two rounds of ADDP;
 *      Q4_0: the unsigned codes (0..15) four products per lane, paired
 *            twice across rows (16 x 15 x 127 < 2^15), then one SADDLP;
 *  - the four rows' scales are lane loads into one vector, converted by one
 *    FCVTL;
 *  - Q4_0's offset of 8 is not subtracted from each weight but once per
 *    block from the sum (-8 x the activation's code sum, one MLS by element).
 *
 * Determinism (kernels.h): row r and token t always get, block by block,
 *   acc = fma(float(S), dw * da, acc)
 * with S the exact integer block sum (as the reference's), in one float
 * lane, whatever the lane, the tile, the tokens sharing the pass or the
 * thread split. Rows past the end of the last tile repeat the last row;
 * their lanes are dropped. */
#include "kernels_arm.h"

#include <stddef.h>
#include <string.h>

#if defined(__aarch64__) && defined(__GNUC__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#include <arm_neon.h>

#include "kernels_neon.h"

#define INLINE static inline __attribute__((always_inline))
#define UNROLL _Pragma("GCC unroll 8")

/* the loops step through a token's blocks by 8 + 32 bytes, and through a
 * weight block by its scale (#2), then its codes (Q8_0 #32, Q4_0 #16) */
_Static_assert(sizeof(KernQ8_0) == 40 && offsetof(KernQ8_0, q) == 8, "KernQ8_0: d, sum, then the 32 codes");
_Static_assert(offsetof(BlockQ8_0, qs) == 2 && sizeof(BlockQ8_0) == 2 + 32 && offsetof(BlockQ4_0, qs) == 2 &&
                   sizeof(BlockQ4_0) == 2 + 16,
               "the assembly's steps follow the block layouts");
enum { RT = 4 /* rows per pass */, GT = 4 /* most tokens per pass */ };

/* One block of the four rows (p0..p3 at its scale; each moves on by one
 * block): their scales into v16 as floats, then the codes: Q8_0's 32 bytes
 * of row i into v(2i), v(2i+1); Q4_0's nibbles of row i, low (elements
 * 0..15) into v(4+i), high (16..31) into v(i). The inner loops are assembly
 * so every instruction is the one intended (from intrinsics GCC spent a
 * register copy per multiply-accumulate and rebuilt the code sum's product
 * by eight in four instructions). */
#define R4_SCALES                                                                                                \
    "ld1 {v16.h}[0], [%[p0]], #2\n\t"                                                                           \
    "ld1 {v16.h}[1], [%[p1]], #2\n\t"                                                                           \
    "ld1 {v16.h}[2], [%[p2]], #2\n\t"                                                                           \
    "ld1 {v16.h}[3], [%[p3]], #2\n\t"                                                                           \
    "fcvtl v16.4s, v16.4h\n\t"
#define R4_Q8_WEIGHTS                                                                                            \
    "ld1 {v0.16b, v1.16b}, [%[p0]], #32\n\t"                                                                    \
    "ld1 {v2.16b, v3.16b}, [%[p1]], #32\n\t"                                                                    \
    "ld1 {v4.16b, v5.16b}, [%[p2]], #32\n\t"                                                                    \
    "ld1 {v6.16b, v7.16b}, [%[p3]], #32\n\t"
#define R4_Q4_WEIGHTS                                                                                            \
    "ldr q0, [%[p0]], #16\n\t"                                                                                  \
    "ldr q1, [%[p1]], #16\n\t"                                                                                  \
    "ldr q2, [%[p2]], #16\n\t"                                                                                  \
    "ldr q3, [%[p3]], #16\n\t"                                                                                  \
    "and v4.16b, v0.16b, v31.16b\n\t"                                                                           \
    "and v5.16b, v1.16b, v31.16b\n\t"                                                                           \
    "and v6.16b, v2.16b, v31.16b\n\t"                                                                           \
    "and v7.16b, v3.16b, v31.16b\n\t"                                                                           \
    "ushr v0.16b, v0.16b, #4\n\t"                                                                               \
    "ushr v1.16b, v1.16b, #4\n\t"                                                                               \
    "ushr v2.16b, v2.16b, #4\n\t"                                                                               \
    "ushr v3.16b, v3.16b, #4\n\t"

/* One token (its block at a: d and the code sum into v17, the codes into
 * v18, v19; a moves on by one block) against the four rows: S (row i in
 * lane i), then f += float(S) * (dw * da). */
#define R4_ACT(a)                                                                                                \
    "ldr d17, [%[" a "]], #8\n\t"                                                                               \
    "ld1 {v18.16b, v19.16b}, [%[" a "]], #32\n\t"
#define R4_FLOAT(s, tmp, f)                                                                                      \
    "scvtf " s ".4s, " s ".4s\n\t"                                                                              \
    "fmul " tmp ".4s, v16.4s, v17.s[0]\n\t"                                                                     \
    "fmla %[" f "].4s, " s ".4s, " tmp ".4s\n\t"
/* Q8_0 row: two products per int16 lane, widened into s */
#define R4_Q8_ROW(w0, w1, m0, m1, s)                                                                             \
    "smull " m0 ".8h, " w0 ".8b, v18.8b\n\t"                                                                    \
    "smull " m1 ".8h, " w1 ".8b, v19.8b\n\t"                                                                    \
    "smlal2 " m0 ".8h, " w0 ".16b, v18.16b\n\t"                                                                 \
    "smlal2 " m1 ".8h, " w1 ".16b, v19.16b\n\t"                                                                 \
    "saddlp " s ".4s, " m0 ".8h\n\t"                                                                            \
    "sadalp " s ".4s, " m1 ".8h\n\t"
#define R4_Q8_TOKEN(a, f)                                                                                        \
    R4_ACT(a) R4_Q8_ROW("v0", "v1", "v20", "v21", "v24") R4_Q8_ROW("v2", "v3", "v22", "v23", "v25")              \
        R4_Q8_ROW("v4", "v5", "v20", "v21", "v26") R4_Q8_ROW("v6", "v7", "v22", "v23", "v27")                    \
    "addp v24.4s, v24.4s, v25.4s\n\t"                                                                           \
    "addp v26.4s, v26.4s, v27.4s\n\t"                                                                           \
    "addp v24.4s, v24.4s, v26.4s\n\t" R4_FLOAT("v24", "v25", f)
/* Q4_0 row: four products of unsigned codes per int16 lane (4 x 15 x 127) */
#define R4_Q4_ROW(lo, hi, m)                                                                                     \
    "smull " m ".8h, " lo ".8b, v18.8b\n\t"                                                                     \
    "smlal2 " m ".8h, " lo ".16b, v18.16b\n\t"                                                                  \
    "smlal " m ".8h, " hi ".8b, v19.8b\n\t"                                                                     \
    "smlal2 " m ".8h, " hi ".16b, v19.16b\n\t"
/* the rows paired twice in int16 (16 x 15 x 127 < 2^15), widened once, and
 * -8 x the code sum (v30: 8 in each lane; wrapping, the exact sum fits) */
#define R4_Q4_TOKEN(a, f)                                                                                        \
    R4_ACT(a) R4_Q4_ROW("v4", "v0", "v20") R4_Q4_ROW("v5", "v1", "v21") R4_Q4_ROW("v6", "v2", "v22")             \
        R4_Q4_ROW("v7", "v3", "v23")                                                                             \
    "addp v20.8h, v20.8h, v21.8h\n\t"                                                                           \
    "addp v22.8h, v22.8h, v23.8h\n\t"                                                                           \
    "addp v20.8h, v20.8h, v22.8h\n\t"                                                                           \
    "saddlp v20.4s, v20.8h\n\t"                                                                                 \
    "mls v20.4s, v30.4s, v17.s[1]\n\t" R4_FLOAT("v20", "v21", f)

#define R4_LOOP(body)                                                                                            \
    __asm__ volatile("movi v31.16b, #15\n\t"                                                                    \
                     "movi v30.4s, #8\n\t"                                                                      \
                     "1:\n\t" body "subs %[nb], %[nb], #1\n\t"                                                  \
                     "b.ne 1b\n\t"                                                                              \
                     : [p0] "+r"(p0), [p1] "+r"(p1), [p2] "+r"(p2), [p3] "+r"(p3), [a0] "+r"(a0), [a1] "+r"(a1), \
                       [a2] "+r"(a2), [a3] "+r"(a3), [nb] "+r"(nb), [f0] "+w"(f0), [f1] "+w"(f1), [f2] "+w"(f2), \
                       [f3] "+w"(f3)                                                                            \
                     :                                                                                          \
                     : "v0", "v1", "v2", "v3", "v4", "v5", "v6", "v7", "v16", "v17", "v18", "v19", "v20", "v21", \
                       "v22", "v23", "v24", "v25", "v26", "v27", "v30", "v31", "cc", "memory")

/* Rows rp[0..3] (at their first block) against nt (1, 2 or 4) tokens over
 * nb (>= 1) blocks: res[t] lane i = row i . token t. kind: GGML_TYPE_Q8_0
 * or GGML_TYPE_Q4_0 (a constant in each entry). */
static void pass(int kind, const uint8_t *const *rp, const uint8_t *act, uint64_t act_stride, int nt, uint64_t nb,
                 float32x4_t *res)
{
    const uint8_t *p0 = rp[0], *p1 = rp[1], *p2 = rp[2], *p3 = rp[3];
    /* tokens past nt repeat token 0 (never read: the loop has no code for them) */
    const uint8_t *a0 = act, *a1 = nt > 1 ? act + act_stride : act, *a2 = nt > 2 ? act + 2 * act_stride : act,
                  *a3 = nt > 3 ? act + 3 * act_stride : act;
    float32x4_t f0 = vdupq_n_f32(0.0f), f1 = f0, f2 = f0, f3 = f0;
    if (kind == GGML_TYPE_Q8_0) {
        if (nt == 4) R4_LOOP(R4_SCALES R4_Q8_WEIGHTS R4_Q8_TOKEN("a0", "f0") R4_Q8_TOKEN("a1", "f1")
                                 R4_Q8_TOKEN("a2", "f2") R4_Q8_TOKEN("a3", "f3"));
        else if (nt == 2) R4_LOOP(R4_SCALES R4_Q8_WEIGHTS R4_Q8_TOKEN("a0", "f0") R4_Q8_TOKEN("a1", "f1"));
        else R4_LOOP(R4_SCALES R4_Q8_WEIGHTS R4_Q8_TOKEN("a0", "f0"));
    } else {
        if (nt == 4) R4_LOOP(R4_SCALES R4_Q4_WEIGHTS R4_Q4_TOKEN("a0", "f0") R4_Q4_TOKEN("a1", "f1")
                                 R4_Q4_TOKEN("a2", "f2") R4_Q4_TOKEN("a3", "f3"));
        else if (nt == 2) R4_LOOP(R4_SCALES R4_Q4_WEIGHTS R4_Q4_TOKEN("a0", "f0") R4_Q4_TOKEN("a1", "f1"));
        else R4_LOOP(R4_SCALES R4_Q4_WEIGHTS R4_Q4_TOKEN("a0", "f0"));
    }
    res[0] = f0, res[1] = f1, res[2] = f2, res[3] = f3;
}

INLINE void rows_frame(int kind, uint64_t n, const uint8_t *w, uint64_t row_bytes, uint64_t nrows, const void *act,
                       uint64_t act_stride, int nt, float *out, uint64_t out_stride)
{
    uint64_t nb = n / QK8_0;
    if (!nb) { /* an empty row: every product is 0 */
        for (int t = 0; t < nt; t++) memset(out + (uint64_t)t * out_stride, 0, nrows * sizeof(float));
        return;
    }
    for (uint64_t r0 = 0; r0 < nrows; r0 += RT) {
        uint64_t valid = nrows - r0 < RT ? nrows - r0 : RT;
        const uint8_t *rp[RT];
        UNROLL for (int i = 0; i < RT; i++) rp[i] = w + (r0 + ((uint64_t)i < valid ? (uint64_t)i : valid - 1)) * row_bytes;
        for (int t0 = 0; t0 < nt;) {
            const uint8_t *a = (const uint8_t *)act + (uint64_t)t0 * act_stride;
            float32x4_t acc[GT];
            int k = nt - t0 >= 4 ? 4 : nt - t0 >= 2 ? 2 : 1;
            pass(kind, rp, a, act_stride, k, nb, acc);
            for (int t = 0; t < k; t++) {
                float *o = out + (uint64_t)(t0 + t) * out_stride + r0;
                neon_store_rows4(o, acc[t], valid);
            }
            t0 += k;
        }
    }
}

void kern_arm_rows_q8_0(uint64_t n, const uint8_t *w, uint64_t row_bytes, uint64_t nrows, const void *act,
                        uint64_t act_stride, int nt, float *out, uint64_t out_stride)
{
    rows_frame(GGML_TYPE_Q8_0, n, w, row_bytes, nrows, act, act_stride, nt, out, out_stride);
}

void kern_arm_rows_q4_0(uint64_t n, const uint8_t *w, uint64_t row_bytes, uint64_t nrows, const void *act,
                        uint64_t act_stride, int nt, float *out, uint64_t out_stride)
{
    rows_frame(GGML_TYPE_Q4_0, n, w, row_bytes, nrows, act, act_stride, nt, out, out_stride);
}

#else
/* nothing here on other targets (ISO C wants a declaration) */
typedef int kernels_arm_rows4_empty;
#endif
