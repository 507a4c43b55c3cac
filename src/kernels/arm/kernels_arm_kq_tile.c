/* kernels_arm_kq_tile.c - prompt tiles for Q4_K, Q5_K and Q6_K on aarch64
 * with dotprod (Pi 5): four weight rows x four tokens per pass, called by
 * kernels_arm_kq.c's dotprod kernels for calls of three tokens or more.
 *
 * Why: kernels_arm_kq.c's passes (four rows, one or two tokens) decode
 * every weight vector again for each pair of tokens and reduce four row
 * sums with ADDP for every sub-block and token. Here, as the Q8_0/Q4_0
 * prompt tile (kernels_arm_rows.c), K-chunk by K-chunk (KC blocks):
 *  - the chunk's activations are laid out once for all the row tiles
 *    (per block and four tokens: each sub-block's codes of the four
 *    tokens together, the bsums split into bytes for the mins, the scales);
 *  - each tile of four rows is decoded once for all the tokens (LD4 lane
 *    loads transpose the codes; then bytewise bit operations) into a
 *    scratch in the SDOT-by-element layout: one vector = four rows x four
 *    consecutive elements, codes as bytes (Q4_K 0..15, Q5_K 0..31, Q6_K
 *    -32..31), with the rows' scales unpacked (one int32 vector per
 *    sub-block, row i in lane i) as differences of neighbours:
 *    sum_j s_j X_j = sum_j (s_j - s_j+1) T_j, T_j the running sum after
 *    sub-block j, so the sums need no zeroing per sub-block (int32 wrapping
 *    arithmetic is exact because the result fits);
 *  - every four tokens pass over it: per sub-block, SDOT by element
 *    multiplies four rows by four elements of one token (each weight vector
 *    serves four tokens, each activation vector four rows), one MLA applies
 *    the scale difference; per block Q4_K's mins come from the bsums by
 *    SDOT (kernels_arm_kq.c's way) and the float steps follow.
 * The passes are assembly: 29 live vectors, every register placed by hand
 * (GCC spilled kernels_arm_rows.c's tile); so are the LD4 transposes (GCC
 * moved LD4 tuples through extra registers: tried, more instructions).
 *
 * Determinism (kernels.h, kernels_arm_kq.c): row r and token t get, block
 * by block, the exact integer sums S (and M) and
 *   Q4_K, Q5_K: acc = fma(float(S), dw * da, acc); acc = fma(-float(M), dmin * da, acc)
 *   Q6_K: acc = fma(float(S), dw * da, acc)
 * as kernels_arm_kq.c's passes: the same bits, whatever the number of
 * tokens in the call or the thread split. Rows past the end of the last
 * tile repeat the last row, tokens past the end of the last four repeat the
 * last token; their lanes are computed and dropped. */
#include "kernels_arm.h"

#include <string.h>

#if defined(__aarch64__) && defined(__GNUC__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#include <arm_neon.h>

#include "kernels_neon.h"

#define DP NEON_DOTPROD
#define INLINE static inline __attribute__((always_inline))
/* once per tile (or quad of tokens) and K-chunk: apart, they count apart in profiles */
#define NOINLINE __attribute__((noinline))
#define UNROLL _Pragma("GCC unroll 8")

enum {
    KC = 4,   /* blocks of QK_K per K-chunk */
    KTOK = 64 /* tokens per pass over a chunk (activations on the stack: 69 KiB) */
};


/* ---- Q4_K and Q5_K ------------------------------------------------------------ */

/* Block b of a tile: per sub-block j, w[k] = elements 4k..4k+3 of the four
 * rows (lane i = row i), ds its scales' differences (s_j - s_j+1; s_7);
 * then the rows' d and dmin as floats and their mins as bytes (mn[0] mins
 * 0..3 of row i in lane i, mn[1] mins 4..7). In the order the pass reads. */
typedef struct {
    struct {
        uint8x16_t w[8];
        int32x4_t ds;
    } sb[8];
    float32x4_t dw, dm;
    uint32x4_t mn[2];
} T45;
_Static_assert(sizeof(T45) == 8 * 144 + 64, "q4k_codes and quad write and read 144 bytes per sub-block");

/* Block b of four tokens: x[j][2t], x[j][2t + 1] = codes 0-15 and 16-31 of
 * sub-block j of token t; lh[t] its bsum pairs split into bytes (low 7
 * bits of pairs 0..7, then the rest, as kernels_arm_kq.c); d the scales. */
typedef struct {
    int8x16_t x[8][8];
    int8x16_t lh[4];
    float32x4_t d;
} A45;

INLINE void transpose_at(const uint8_t *const *r, uint64_t off, uint32x4_t *out)
{
    neon_transpose4(vld1q_u8(r[0] + off), vld1q_u8(r[1] + off), vld1q_u8(r[2] + off), vld1q_u8(r[3] + off), out);
}

/* 16 bytes of four rows (r0..r3, moved on by 16) -> v0..v3: vector k = bytes
 * 4k..4k+3 of each row */
#define T_LD4(a, b, c, d)                                                                                        \
    "ld4 {" a ".s, " b ".s, " c ".s, " d ".s}[0], [%[r0]], #16\n\t"                                                \
    "ld4 {" a ".s, " b ".s, " c ".s, " d ".s}[1], [%[r1]], #16\n\t"                                                \
    "ld4 {" a ".s, " b ".s, " c ".s, " d ".s}[2], [%[r2]], #16\n\t"                                                \
    "ld4 {" a ".s, " b ".s, " c ".s, " d ".s}[3], [%[r3]], #16\n\t"
#define T_LO(v, lo) "and " lo ".16b, " v ".16b, v30.16b\n\t"
#define T_HI(v) "ushr " v ".16b, " v ".16b, #4\n\t"

/* Q4_K's 128 bytes of codes of the four rows' blocks p[i] into t's
 * sub-blocks: per pair q, bytes 32q.. transposed, their low nibbles
 * sub-block 2q, the high ones 2q + 1 (each followed by its ds, skipped). */
INLINE void q4k_codes(const uint8_t *const *p, T45 *t)
{
    const uint64_t qs = offsetof(BlockQ4_K, qs);
    const uint8_t *r0 = p[0] + qs, *r1 = p[1] + qs, *r2 = p[2] + qs, *r3 = p[3] + qs;
    uint8_t *d = (uint8_t *)t->sb;
    uint64_t n = 4, skip = 64 + 16;
    __asm__ volatile("movi v30.16b, #15\n\t"
                     "1:\n\t" T_LD4("v0", "v1", "v2", "v3") T_LD4("v4", "v5", "v6", "v7") T_LO("v0", "v16") T_LO("v1", "v17")
                         T_LO("v2", "v18") T_LO("v3", "v19") T_LO("v4", "v20") T_LO("v5", "v21") T_LO("v6", "v22")
                             T_LO("v7", "v23") T_HI("v0") T_HI("v1") T_HI("v2") T_HI("v3") T_HI("v4") T_HI("v5")
                                 T_HI("v6") T_HI("v7")
                     "st1 {v16.16b-v19.16b}, [%[d]], #64\n\t"
                     "st1 {v20.16b-v23.16b}, [%[d]], %[skip]\n\t"
                     "st1 {v0.16b-v3.16b}, [%[d]], #64\n\t"
                     "st1 {v4.16b-v7.16b}, [%[d]], %[skip]\n\t"
                     "subs %[n], %[n], #1\n\t"
                     "b.ne 1b\n\t"
                     : [r0] "+r"(r0), [r1] "+r"(r1), [r2] "+r"(r2), [r3] "+r"(r3), [d] "+r"(d), [n] "+r"(n)
                     : [skip] "r"(skip)
                     : "v0", "v1", "v2", "v3", "v4", "v5", "v6", "v7", "v16", "v17", "v18", "v19", "v20", "v21", "v22",
                       "v23", "v30", "cc", "memory");
}

/* Blocks [b0, b0 + cb) of the four rows r (at block 0) into c. */
NOINLINE DP static void tile45(int five, const uint8_t *const *r, uint64_t b0, uint64_t cb, T45 *c)
{
    const uint64_t bytes = five ? sizeof(BlockQ5_K) : sizeof(BlockQ4_K);
    const uint64_t qs = five ? offsetof(BlockQ5_K, qs) : offsetof(BlockQ4_K, qs);
    const uint8x16_t m4 = vdupq_n_u8(15), b4 = vdupq_n_u8(0x10);
    for (uint64_t b = 0; b < cb; b++) {
        const uint8_t *p[4];
        UNROLL for (int i = 0; i < 4; i++) p[i] = r[i] + bytes * (b0 + b);
        T45 *t = &c[b];
        uint32x4_t h[4], sv[2], nv[2];
        transpose_at(p, 0, h);
        uint16x8_t dd = vreinterpretq_u16_u32(h[0]);
        t->dw = vcvt_f32_f16(vreinterpret_f16_u16(vget_low_u16(vuzp1q_u16(dd, dd))));
        t->dm = vcvt_f32_f16(vreinterpret_f16_u16(vget_low_u16(vuzp2q_u16(dd, dd))));
        neon_q4k_scales_mins(h, sv, nv);
        t->mn[0] = nv[0];
        t->mn[1] = nv[1];
        int32x4_t sc[8];
        neon_ubytes4(sv[0], sc);
        neon_ubytes4(sv[1], sc + 4);
        UNROLL for (int j = 0; j < 7; j++) t->sb[j].ds = vsubq_s32(sc[j], sc[j + 1]);
        t->sb[7].ds = sc[7];
        if (!five) { /* Q4_K: LD4 lane loads transpose, in assembly (GCC moves LD4 tuples around) */
            q4k_codes(p, t);
            continue;
        }
        uint32x4_t qh[8];
        transpose_at(p, offsetof(BlockQ5_K, qh), qh);
        transpose_at(p, offsetof(BlockQ5_K, qh) + 16, qh + 4);
        _Pragma("GCC unroll 1") for (int q = 0; q < 4; q++) { /* rolled: size */
            /* bytes 32q.. of the codes: low nibbles sub-block 2q, high ones 2q + 1 */
            uint32x4_t v[8];
            transpose_at(p, qs + 32 * q, v);
            transpose_at(p, qs + 32 * q + 16, v + 4);
            UNROLL for (int k = 0; k < 8; k++) {
                uint8x16_t x = vreinterpretq_u8_u32(v[k]);
                /* bit 2q (2q + 1) of qh is the fifth bit: moved to bit 4 (USHL: negative counts shift right) */
                uint8x16_t hb = vreinterpretq_u8_u32(qh[k]);
                t->sb[2 * q].w[k] = vorrq_u8(vandq_u8(x, m4), vandq_u8(vshlq_u8(hb, vdupq_n_s8((int8_t)(4 - 2 * q))), b4));
                t->sb[2 * q + 1].w[k] =
                    vorrq_u8(vshrq_n_u8(x, 4), vandq_u8(vshlq_u8(hb, vdupq_n_s8((int8_t)(3 - 2 * q))), b4));
            }
        }
    }
}

/* Blocks [b0, b0 + cb) of tokens a[0..3] into q. */
NOINLINE DP static void acts45(const KernQ8_K *const *a, uint64_t b0, uint64_t cb, A45 *q)
{
    const int16x8_t m127 = vdupq_n_s16(127);
    for (uint64_t b = 0; b < cb; b++) {
        float d[4];
        _Pragma("GCC unroll 1") for (int t = 0; t < 4; t++) {
            const KernQ8_K *k = a[t] + b0 + b;
            UNROLL for (int j = 0; j < 8; j++) {
                q[b].x[j][2 * t] = vld1q_s8(k->q + 32 * j);
                q[b].x[j][2 * t + 1] = vld1q_s8(k->q + 32 * j + 16);
            }
            /* bsum pair = 128 h + l, l in 0..127, h in -32..31 */
            int16x8_t bs = vpaddq_s16(vld1q_s16(k->bsum), vld1q_s16(k->bsum + 8));
            q[b].lh[t] = vcombine_s8(vmovn_s16(vandq_s16(bs, m127)), vmovn_s16(vshrq_n_s16(bs, 7)));
            d[t] = k->d;
        }
        q[b].d = vld1q_f32(d);
    }
}

/* One sub-block: 8 weight vectors (v0-v7) and its scale differences (v8),
 * the four tokens' 32 codes (v16-v23); running sums v24-v27 (token t),
 * block sums v28-v31 += running sum x difference. */
/* weight vector v<k> by byte group l of the four tokens' activation vectors
 * v<a>..v<d>, into the running sums v24-v27 */
#define SDOT_X4(k, l, a, b, c, d)                                                                                \
    "sdot v24.4s, v" #k ".16b, v" #a ".4b[" #l "]\n\t"                                                          \
    "sdot v25.4s, v" #k ".16b, v" #b ".4b[" #l "]\n\t"                                                          \
    "sdot v26.4s, v" #k ".16b, v" #c ".4b[" #l "]\n\t"                                                          \
    "sdot v27.4s, v" #k ".16b, v" #d ".4b[" #l "]\n\t"
#define SDOT4(k, l) SDOT_X4(k, l, 16, 18, 20, 22)  /* codes 0-15 */
#define SDOT4H(k, l) SDOT_X4(k, l, 17, 19, 21, 23) /* codes 16-31 */
#define SB45                                                                                                     \
    "ld1 {v16.16b-v19.16b}, [%[ap]], #64\n\t"                                                                   \
    "ld1 {v20.16b-v23.16b}, [%[ap]], #64\n\t"                                                                   \
    "ld1 {v0.16b-v3.16b}, [%[wp]], #64\n\t"                                                                     \
    "ld1 {v4.16b-v7.16b}, [%[wp]], #64\n\t"                                                                     \
    "ldr q8, [%[wp]], #16\n\t" SDOT4(0, 0) SDOT4(1, 1) SDOT4(2, 2) SDOT4(3, 3) SDOT4H(4, 0) SDOT4H(5, 1)         \
        SDOT4H(6, 2) SDOT4H(7, 3)                                                                                \
    "mla v28.4s, v24.4s, v8.4s\n\t"                                                                             \
    "mla v29.4s, v25.4s, v8.4s\n\t"                                                                             \
    "mla v30.4s, v26.4s, v8.4s\n\t"                                                                             \
    "mla v31.4s, v27.4s, v8.4s\n\t"
/* token t's mins sum M into v(4 + t): mins (v2, v3) . bsum pairs (v(16 + t)) */
#define MINS(t, lh)                                                                                              \
    "movi v" t ".4s, #0\n\t"                                                                                    \
    "sdot v" t ".4s, v2.16b, " lh ".4b[2]\n\t"                                                                  \
    "sdot v" t ".4s, v3.16b, " lh ".4b[3]\n\t"                                                                  \
    "shl v" t ".4s, v" t ".4s, #7\n\t"                                                                          \
    "sdot v" t ".4s, v2.16b, " lh ".4b[0]\n\t"                                                                  \
    "sdot v" t ".4s, v3.16b, " lh ".4b[1]\n\t"                                                                  \
    "scvtf v" t ".4s, v" t ".4s\n\t"
/* acc = fma(float(S), dw * da, acc); acc = fma(-float(M), dmin * da, acc) */
#define FSTEP45(t, s, m, f)                                                                                      \
    "scvtf " s ".4s, " s ".4s\n\t"                                                                              \
    "fmul v21.4s, v0.4s, v20.s[" t "]\n\t"                                                                      \
    "fmul v22.4s, v1.4s, v20.s[" t "]\n\t"                                                                      \
    "fmla %[" f "].4s, " s ".4s, v21.4s\n\t"                                                                    \
    "fmls %[" f "].4s, " m ".4s, v22.4s\n\t"
#define ZERO8                                                                                                    \
    "movi v24.4s, #0\n\t"                                                                                       \
    "movi v25.4s, #0\n\t"                                                                                       \
    "movi v26.4s, #0\n\t"                                                                                       \
    "movi v27.4s, #0\n\t"                                                                                       \
    "movi v28.4s, #0\n\t"                                                                                       \
    "movi v29.4s, #0\n\t"                                                                                       \
    "movi v30.4s, #0\n\t"                                                                                       \
    "movi v31.4s, #0\n\t"
#define BLOCK45                                                                                                  \
    ZERO8 SB45 SB45 SB45 SB45 SB45 SB45 SB45 SB45                                               \
    "ld1 {v0.4s-v3.4s}, [%[wp]], #64\n\t"                                                                       \
    "ld1 {v16.16b-v19.16b}, [%[ap]], #64\n\t"                                                                   \
    "ldr q20, [%[ap]], #16\n\t" MINS("4", "v16") MINS("5", "v17") MINS("6", "v18") MINS("7", "v19")             \
        FSTEP45("0", "v28", "v4", "f0") FSTEP45("1", "v29", "v5", "f1") FSTEP45("2", "v30", "v6", "f2")          \
            FSTEP45("3", "v31", "v7", "f3")

/* ---- Q6_K ---------------------------------------------------------------------- */

/* Block b of a tile: per sub-block j (16 elements), w[k] = elements
 * 4k..4k+3 of the four rows minus 32, ds its scales' differences
 * (s_j - s_j+1; s_15); then the rows' d as floats. */
typedef struct {
    struct {
        int8x16_t w[4];
        int32x4_t ds;
    } sb[16];
    float32x4_t dw;
} T6;
_Static_assert(sizeof(T6) == 16 * 80 + 16, "q6k_codes and quad write and read 80 bytes per sub-block");

/* Block b of four tokens: x[j][t] = codes of sub-block j of token t; d the
 * scales. */
typedef struct {
    int8x16_t x[16][4];
    float32x4_t d;
} A6;

/* 16 bytes at a0..a3 (the four rows) -> words transposed into v, v+1, v+2, v+3 */
#define T6_LD4(a, v0, v1, v2, v3)                                                                                 \
    "ld4 {" v0 ".s, " v1 ".s, " v2 ".s, " v3 ".s}[0], [%[" a "0]]\n\t"                                              \
    "ld4 {" v0 ".s, " v1 ".s, " v2 ".s, " v3 ".s}[1], [%[" a "1]]\n\t"                                              \
    "ld4 {" v0 ".s, " v1 ".s, " v2 ".s, " v3 ".s}[2], [%[" a "2]]\n\t"                                              \
    "ld4 {" v0 ".s, " v1 ".s, " v2 ".s, " v3 ".s}[3], [%[" a "3]]\n\t"
/* word e: l0 in v(e), l1 in v(4 + e), hb in h -> quarters 0 and 1 in place
 * of l0 and l1 (SLI), 2 and 3 in q2 and q3 (SRI); v28 a temporary; v30 = 3,
 * v31 = 0x30 */
#define T6_WORD(l0, l1, h, q2, q3)                                                                                \
    "ushr v28.16b, " h ".16b, #2\n\t"                                                                           \
    "and " q2 ".16b, " h ".16b, v31.16b\n\t"                                                                    \
    "sri " q2 ".16b, " l0 ".16b, #4\n\t"                                                                        \
    "and " q3 ".16b, v28.16b, v31.16b\n\t"                                                                      \
    "sri " q3 ".16b, " l1 ".16b, #4\n\t"                                                                        \
    "and " h ".16b, " h ".16b, v30.16b\n\t"                                                                     \
    "sli " l0 ".16b, " h ".16b, #4\n\t"                                                                         \
    "and v28.16b, v28.16b, v30.16b\n\t"                                                                         \
    "sli " l1 ".16b, v28.16b, #4\n\t"
#define T6_SUB4(a, b, c, d)                                                                                       \
    "sub " a ".16b, " a ".16b, v29.16b\n\t"                                                                     \
    "sub " b ".16b, " b ".16b, v29.16b\n\t"                                                                     \
    "sub " c ".16b, " c ".16b, v29.16b\n\t"                                                                     \
    "sub " d ".16b, " d ".16b, v29.16b\n\t"

/* Half h, s of Q6_K's codes of the four rows' blocks p[i] (below) into t:
 * the bytes transposed first (the bit operations are bytewise), decoded as
 * words of the four rows, minus 32; quarter k is sub-block 8h + 2k + s
 * (160 bytes apart in t). */
INLINE void q6k_codes(const uint8_t *const *p, int h, int s, T6 *t)
{
    uint64_t ol = offsetof(BlockQ6_K, ql) + 64 * (uint64_t)h + 16 * (uint64_t)s;
    uint64_t oh = offsetof(BlockQ6_K, qh) + 32 * (uint64_t)h + 16 * (uint64_t)s, step = 160;
    const uint8_t *a0 = p[0] + ol, *a1 = p[1] + ol, *a2 = p[2] + ol, *a3 = p[3] + ol;
    const uint8_t *b0 = a0 + 32, *b1 = a1 + 32, *b2 = a2 + 32, *b3 = a3 + 32;
    const uint8_t *c0 = p[0] + oh, *c1 = p[1] + oh, *c2 = p[2] + oh, *c3 = p[3] + oh;
    int8x16_t *d = t->sb[8 * h + s].w;
    __asm__ volatile("movi v29.16b, #32\n\t"
                     "movi v30.16b, #3\n\t"
                     "movi v31.16b, #0x30\n\t" T6_LD4("a", "v0", "v1", "v2", "v3") T6_LD4("b", "v4", "v5", "v6", "v7")
                         T6_LD4("c", "v24", "v25", "v26", "v27") T6_WORD("v0", "v4", "v24", "v16", "v20")
                             T6_WORD("v1", "v5", "v25", "v17", "v21") T6_WORD("v2", "v6", "v26", "v18", "v22")
                                 T6_WORD("v3", "v7", "v27", "v19", "v23") T6_SUB4("v0", "v1", "v2", "v3")
                                     T6_SUB4("v4", "v5", "v6", "v7") T6_SUB4("v16", "v17", "v18", "v19")
                                         T6_SUB4("v20", "v21", "v22", "v23")
                     "st1 {v0.16b-v3.16b}, [%[d]], %[step]\n\t"
                     "st1 {v4.16b-v7.16b}, [%[d]], %[step]\n\t"
                     "st1 {v16.16b-v19.16b}, [%[d]], %[step]\n\t"
                     "st1 {v20.16b-v23.16b}, [%[d]]\n\t"
                     : [d] "+r"(d)
                     : [a0] "r"(a0), [a1] "r"(a1), [a2] "r"(a2), [a3] "r"(a3), [b0] "r"(b0), [b1] "r"(b1), [b2] "r"(b2),
                       [b3] "r"(b3), [c0] "r"(c0), [c1] "r"(c1), [c2] "r"(c2), [c3] "r"(c3), [step] "r"(step)
                     : "v0", "v1", "v2", "v3", "v4", "v5", "v6", "v7", "v16", "v17", "v18", "v19", "v20", "v21", "v22",
                       "v23", "v24", "v25", "v26", "v27", "v28", "v29", "v30", "v31", "memory");
}

/* Blocks [b0, b0 + cb) of the four rows r (at block 0) into c. Codes: for
 * half h and s, ql bytes 64h + 16s (l0) and 64h + 32 + 16s (l1) and qh
 * bytes 32h + 16s (hb) give the 16 elements 128h + 32k + 16s (sub-block
 * 8h + 2k + s) of quarter k: l0 & 15, l1 & 15, l0 >> 4, l1 >> 4, with two
 * bits of hb (bits 0-1, 2-3, 4-5, 6-7) above them (SLI, SRI). */
NOINLINE DP static void tile6(const uint8_t *const *r, uint64_t b0, uint64_t cb, T6 *c)
{
    for (uint64_t b = 0; b < cb; b++) {
        const uint8_t *p[4];
        UNROLL for (int i = 0; i < 4; i++) p[i] = r[i] + sizeof(BlockQ6_K) * (b0 + b);
        T6 *t = &c[b];
        uint32x4_t g[4];
        int32x4_t sc[16];
        transpose_at(p, offsetof(BlockQ6_K, scales), g);
        UNROLL for (int k = 0; k < 4; k++) neon_sbytes4(g[k], sc + 4 * k);
        _Pragma("GCC unroll 16") for (int j = 0; j < 15; j++) t->sb[j].ds = vsubq_s32(sc[j], sc[j + 1]);
        t->sb[15].ds = sc[15];
        t->dw = neon_rows4_f16(p, offsetof(BlockQ6_K, d));
        UNROLL for (int hs = 0; hs < 4; hs++) q6k_codes(p, hs >> 1, hs & 1, t);
    }
}

/* Blocks [b0, b0 + cb) of tokens a[0..3] into q. */
NOINLINE DP static void acts6(const KernQ8_K *const *a, uint64_t b0, uint64_t cb, A6 *q)
{
    for (uint64_t b = 0; b < cb; b++) {
        float d[4];
        _Pragma("GCC unroll 1") for (int t = 0; t < 4; t++) {
            const KernQ8_K *k = a[t] + b0 + b;
            UNROLL for (int j = 0; j < 16; j++) q[b].x[j][t] = vld1q_s8(k->q + 16 * j);
            d[t] = k->d;
        }
        q[b].d = vld1q_f32(d);
    }
}

/* One sub-block: 4 weight vectors (v0-v3), its scale differences (v8),
 * the four tokens' 16 codes (v16-v19); running sums v24-v27, block sums
 * v28-v31 as SB45. */
#define SDOT6(k) SDOT_X4(k, k, 16, 17, 18, 19)
#define SB6                                                                                                      \
    "ld1 {v16.16b-v19.16b}, [%[ap]], #64\n\t"                                                                   \
    "ld1 {v0.16b-v3.16b}, [%[wp]], #64\n\t"                                                                     \
    "ldr q8, [%[wp]], #16\n\t" SDOT6(0) SDOT6(1) SDOT6(2) SDOT6(3)                                              \
    "mla v28.4s, v24.4s, v8.4s\n\t"                                                                             \
    "mla v29.4s, v25.4s, v8.4s\n\t"                                                                             \
    "mla v30.4s, v26.4s, v8.4s\n\t"                                                                             \
    "mla v31.4s, v27.4s, v8.4s\n\t"
/* acc = fma(float(S), dw * da, acc) */
#define FSTEP6(t, s, f)                                                                                          \
    "scvtf " s ".4s, " s ".4s\n\t"                                                                              \
    "fmul v21.4s, v0.4s, v20.s[" t "]\n\t"                                                                      \
    "fmla %[" f "].4s, " s ".4s, v21.4s\n\t"
#define SB6X4 SB6 SB6 SB6 SB6
#define BLOCK6                                                                                                   \
    ZERO8 SB6X4 SB6X4 SB6X4 SB6X4                                                                                \
    "ldr q0, [%[wp]], #16\n\t"                                                                                  \
    "ldr q20, [%[ap]], #16\n\t" FSTEP6("0", "v28", "f0") FSTEP6("1", "v29", "f1") FSTEP6("2", "v30", "f2")       \
        FSTEP6("3", "v31", "f3")

/* Four tokens (a: their blocks of the chunk) over the cb blocks of a tile
 * (c); acc[t] lane i = row i . token t. */
#define QUAD_OPERANDS                                                                                            \
    [wp] "+r"(wp), [ap] "+r"(ap), [nb] "+r"(cb), [f0] "+w"(f0), [f1] "+w"(f1), [f2] "+w"(f2), [f3] "+w"(f3)
#define QUAD_CLOBBERS                                                                                            \
    "v0", "v1", "v2", "v3", "v4", "v5", "v6", "v7", "v8", "v16", "v17", "v18", "v19", "v20", "v21", "v22", "v23",   \
        "v24", "v25", "v26", "v27", "v28", "v29", "v30", "v31", "cc", "memory"
DP static void quad(int six, const void *c, const void *a, uint64_t cb, float32x4_t *acc)
{
    float32x4_t f0 = acc[0], f1 = acc[1], f2 = acc[2], f3 = acc[3];
    const uint8_t *wp = c, *ap = a;
    if (six)
        __asm__ volatile("1:\n\t" BLOCK6 "subs %[nb], %[nb], #1\n\t"
                         "b.ne 1b\n\t"
                         : QUAD_OPERANDS
                         :
                         : QUAD_CLOBBERS);
    else
        __asm__ volatile("1:\n\t" BLOCK45 "subs %[nb], %[nb], #1\n\t"
                         "b.ne 1b\n\t"
                         : QUAD_OPERANDS
                         :
                         : QUAD_CLOBBERS);
    acc[0] = f0, acc[1] = f1, acc[2] = f2, acc[3] = f3;
}

/* ---- the same tiles with i8mm (SMMLA) ------------------------------------------------- */

/* For CPUs with i8mm (kernels_arm_mm.c: the "aarch64 NEON+dotprod+i8mm" set),
 * calls of three tokens or more. The tiles are decoded as above (tile45,
 * tile6), then regrouped once per tile for SMMLA: pairs of rows x eight
 * consecutive elements per vector (a ZIP of two vectors of four rows x four
 * elements gives two of them), the scale differences, d, dmin and mins of a
 * pair of rows as [row a, row a, row b, row b] (mins: the eight bytes of
 * each row). The activations likewise by pairs of tokens (the bsum pairs as
 * bytes: 128 h + l, as above). Per sub-block, pair of rows and pair of
 * tokens, SMMLA (Q4_K/Q5_K four, Q6_K two) into the running sums T, one MLA
 * by the scale difference into the block's sums S; per block Q4_K's mins
 * M by two SMMLA (l and h) and the float steps of the dotprod tiles:
 * the lanes [row a token u, a v, b u, b v] get the same integer sums and
 * the same float steps, so the same bits. */
#ifdef __clang__
#define MM __attribute__((target("dotprod,i8mm")))
#else
#define MM __attribute__((target("arch=armv8.2-a+dotprod+i8mm")))
#endif

/* A block of a tile, in the order the passes read it: per sub-block j,
 * w[p][m] = elements 8m..8m+7 of rows 2p and 2p+1, ds[p] their scale
 * differences [a a b b]; then d, dmin and the mins (the eight bytes of
 * each row). Q6_K: its 16 sub-blocks of 16, then d. */
typedef struct {
    struct {
        int8x16_t w[2][4];
        int32x4_t ds[2];
    } sb[8];
    float32x4_t dw[2], dm[2];
    int8x16_t mn[2];
} M45;
typedef struct {
    struct {
        int8x16_t w[2][2];
        int32x4_t ds[2];
    } sb[16];
    float32x4_t dw[2];
} M6;
/* A block of four tokens: x[j][tp][m] = elements 8m..8m+7 of sub-block j
 * of tokens 2tp and 2tp+1; the bsum pairs' l and h bytes of both; d =
 * [da(u) da(v) da(u) da(v)]. */
typedef struct {
    int8x16_t x[8][2][4];
    int8x16_t l[2], h[2];
    float32x4_t d[2];
} N45;
typedef struct {
    int8x16_t x[16][2][2];
    float32x4_t d[2];
} N6;
_Static_assert(sizeof(M45) == 8 * 160 + 96 && sizeof(N45) == 8 * 128 + 96 && sizeof(M6) == 16 * 96 + 32 &&
                   sizeof(N6) == 16 * 64 + 32,
               "mm_quad45 and mm_quad6 read these in order");

#define MM_INLINE static inline __attribute__((always_inline)) MM
MM_INLINE int8x16_t zip_rows_lo(uint8x16_t a, uint8x16_t b)
{
    return vreinterpretq_s8_u32(vzip1q_u32(vreinterpretq_u32_u8(a), vreinterpretq_u32_u8(b)));
}
MM_INLINE int8x16_t zip_rows_hi(uint8x16_t a, uint8x16_t b)
{
    return vreinterpretq_s8_u32(vzip2q_u32(vreinterpretq_u32_u8(a), vreinterpretq_u32_u8(b)));
}
/* two tokens' 16 codes -> the pair vectors of their elements 0-7 and 8-15 */
MM_INLINE void zip_tokens(int8x16_t *x, int8x16_t u, int8x16_t v)
{
    x[0] = vreinterpretq_s8_s64(vzip1q_s64(vreinterpretq_s64_s8(u), vreinterpretq_s64_s8(v)));
    x[1] = vreinterpretq_s8_s64(vzip2q_s64(vreinterpretq_s64_s8(u), vreinterpretq_s64_s8(v)));
}

NOINLINE MM static void mm_tile45(const T45 *t, uint64_t cb, M45 *m)
{
    for (uint64_t b = 0; b < cb; b++, t++, m++) {
        UNROLL for (int j = 0; j < 8; j++) {
            UNROLL for (int k = 0; k < 4; k++) {
                m->sb[j].w[0][k] = zip_rows_lo(t->sb[j].w[2 * k], t->sb[j].w[2 * k + 1]);
                m->sb[j].w[1][k] = zip_rows_hi(t->sb[j].w[2 * k], t->sb[j].w[2 * k + 1]);
            }
            m->sb[j].ds[0] = vzip1q_s32(t->sb[j].ds, t->sb[j].ds), m->sb[j].ds[1] = vzip2q_s32(t->sb[j].ds, t->sb[j].ds);
        }
        m->dw[0] = vzip1q_f32(t->dw, t->dw), m->dw[1] = vzip2q_f32(t->dw, t->dw);
        m->dm[0] = vzip1q_f32(t->dm, t->dm), m->dm[1] = vzip2q_f32(t->dm, t->dm);
        m->mn[0] = zip_rows_lo(vreinterpretq_u8_u32(t->mn[0]), vreinterpretq_u8_u32(t->mn[1]));
        m->mn[1] = zip_rows_hi(vreinterpretq_u8_u32(t->mn[0]), vreinterpretq_u8_u32(t->mn[1]));
    }
}

NOINLINE MM static void mm_tile6(const T6 *t, uint64_t cb, M6 *m)
{
    for (uint64_t b = 0; b < cb; b++, t++, m++) {
        _Pragma("GCC unroll 16") for (int j = 0; j < 16; j++) {
            UNROLL for (int k = 0; k < 2; k++) {
                uint8x16_t a = vreinterpretq_u8_s8(t->sb[j].w[2 * k]), c = vreinterpretq_u8_s8(t->sb[j].w[2 * k + 1]);
                m->sb[j].w[0][k] = zip_rows_lo(a, c);
                m->sb[j].w[1][k] = zip_rows_hi(a, c);
            }
            m->sb[j].ds[0] = vzip1q_s32(t->sb[j].ds, t->sb[j].ds), m->sb[j].ds[1] = vzip2q_s32(t->sb[j].ds, t->sb[j].ds);
        }
        m->dw[0] = vzip1q_f32(t->dw, t->dw), m->dw[1] = vzip2q_f32(t->dw, t->dw);
    }
}

/* Blocks [b0, b0 + cb) of tokens a[0..3] into q (Q4_K, Q5_K). */
NOINLINE MM static void mm_acts45(const KernQ8_K *const *a, uint64_t b0, uint64_t cb, N45 *q)
{
    const int16x8_t m127 = vdupq_n_s16(127);
    for (uint64_t b = 0; b < cb; b++)
        for (int tp = 0; tp < 2; tp++) {
            const KernQ8_K *u = a[2 * tp] + b0 + b, *v = a[2 * tp + 1] + b0 + b;
            UNROLL for (int j = 0; j < 8; j++) {
                zip_tokens(q[b].x[j][tp], vld1q_s8(u->q + 32 * j), vld1q_s8(v->q + 32 * j));
                zip_tokens(q[b].x[j][tp] + 2, vld1q_s8(u->q + 32 * j + 16), vld1q_s8(v->q + 32 * j + 16));
            }
            int16x8_t bu = vpaddq_s16(vld1q_s16(u->bsum), vld1q_s16(u->bsum + 8));
            int16x8_t bv = vpaddq_s16(vld1q_s16(v->bsum), vld1q_s16(v->bsum + 8));
            q[b].l[tp] = vcombine_s8(vmovn_s16(vandq_s16(bu, m127)), vmovn_s16(vandq_s16(bv, m127)));
            q[b].h[tp] = vcombine_s8(vmovn_s16(vshrq_n_s16(bu, 7)), vmovn_s16(vshrq_n_s16(bv, 7)));
            float d[4] = {u->d, v->d, u->d, v->d};
            q[b].d[tp] = vld1q_f32(d);
        }
}

/* Blocks [b0, b0 + cb) of tokens a[0..3] into q (Q6_K). */
NOINLINE MM static void mm_acts6(const KernQ8_K *const *a, uint64_t b0, uint64_t cb, N6 *q)
{
    for (uint64_t b = 0; b < cb; b++)
        for (int tp = 0; tp < 2; tp++) {
            const KernQ8_K *u = a[2 * tp] + b0 + b, *v = a[2 * tp + 1] + b0 + b;
            _Pragma("GCC unroll 16") for (int j = 0; j < 16; j++)
                zip_tokens(q[b].x[j][tp], vld1q_s8(u->q + 16 * j), vld1q_s8(v->q + 16 * j));
            float d[4] = {u->d, v->d, u->d, v->d};
            q[b].d[tp] = vld1q_f32(d);
        }
}

/* The passes, in assembly (GCC kept every sub-block's running sums alive
 * for later and loaded two vectors at a time). Running sums T: v0 (rows
 * 0-1 by tokens 0-1), v1 (rows 0-1, tokens 2-3), v2 (rows 2-3, tokens 0-1),
 * v3 (rows 2-3, tokens 2-3); block sums S: v4-v7 likewise; the float sums
 * f00, f01, f10, f11 likewise. */
#define MM_ZERO8                                                                                                 \
    "movi v0.4s, #0\n\tmovi v1.4s, #0\n\tmovi v2.4s, #0\n\tmovi v3.4s, #0\n\t"                                     \
    "movi v4.4s, #0\n\tmovi v5.4s, #0\n\tmovi v6.4s, #0\n\tmovi v7.4s, #0\n\t"
/* weights wa (rows 0-1), wb (rows 2-3) by tokens xa (0-1), xb (2-3) */
#define MM_SMMLA4(wa, wb, xa, xb)                                                                                \
    "smmla v0.4s, " wa ".16b, " xa ".16b\n\t"                                                                    \
    "smmla v1.4s, " wa ".16b, " xb ".16b\n\t"                                                                    \
    "smmla v2.4s, " wb ".16b, " xa ".16b\n\t"                                                                    \
    "smmla v3.4s, " wb ".16b, " xb ".16b\n\t"
/* S += T x the scale difference (v8: rows 0-1, v9: rows 2-3) */
#define MM_SCALE                                                                                                 \
    "mla v4.4s, v0.4s, v8.4s\n\t"                                                                                \
    "mla v5.4s, v1.4s, v8.4s\n\t"                                                                                \
    "mla v6.4s, v2.4s, v9.4s\n\t"                                                                                \
    "mla v7.4s, v3.4s, v9.4s\n\t"
/* a sub-block of Q4_K/Q5_K: 32 elements */
#define MM_SB45                                                                                                  \
    "ld1 {v16.16b-v19.16b}, [%[c]], #64\n\t"                                                                     \
    "ld1 {v20.16b-v23.16b}, [%[c]], #64\n\t"                                                                     \
    "ld1 {v8.4s, v9.4s}, [%[c]], #32\n\t"                                                                        \
    "ld1 {v24.16b-v27.16b}, [%[x]], #64\n\t"                                                                     \
    "ld1 {v28.16b-v31.16b}, [%[x]], #64\n\t" MM_SMMLA4("v16", "v20", "v24", "v28")                                \
        MM_SMMLA4("v17", "v21", "v25", "v29") MM_SMMLA4("v18", "v22", "v26", "v30")                              \
            MM_SMMLA4("v19", "v23", "v27", "v31") MM_SCALE
/* a sub-block of Q6_K: 16 elements */
#define MM_SB6                                                                                                   \
    "ld1 {v16.16b-v19.16b}, [%[c]], #64\n\t"                                                                     \
    "ld1 {v8.4s, v9.4s}, [%[c]], #32\n\t"                                                                        \
    "ld1 {v24.16b-v27.16b}, [%[x]], #64\n\t" MM_SMMLA4("v16", "v18", "v24", "v26")                                \
        MM_SMMLA4("v17", "v19", "v25", "v27") MM_SCALE
/* acc = fma(float(S), dw * da, acc) (v16, v17: dw of rows 0-1, 2-3; v28,
 * v29: da of tokens 0-1, 2-3) */
#define MM_FSTEP(s, dw, da, f)                                                                                   \
    "scvtf " s ".4s, " s ".4s\n\t"                                                                               \
    "fmul v12.4s, " dw ".4s, " da ".4s\n\t"                                                                      \
    "fmla %[" f "].4s, " s ".4s, v12.4s\n\t"
/* then acc = fma(-float(M), dmin * da, acc) (v18, v19: dmin) */
#define MM_MSTEP(m, dm, da, f)                                                                                   \
    "scvtf " m ".4s, " m ".4s\n\t"                                                                               \
    "fmul v12.4s, " dm ".4s, " da ".4s\n\t"                                                                      \
    "fmls %[" f "].4s, " m ".4s, v12.4s\n\t"
#define MM_OPERANDS [c] "+r"(c), [x] "+r"(x), [n] "+r"(cb), [f00] "+w"(f00), [f01] "+w"(f01), [f10] "+w"(f10), [f11] "+w"(f11)
#define MM_CLOBBERS                                                                                              \
    "v0", "v1", "v2", "v3", "v4", "v5", "v6", "v7", "v8", "v9", "v12", "v16", "v17", "v18", "v19", "v20", "v21",     \
        "v22", "v23", "v24", "v25", "v26", "v27", "v28", "v29", "v30", "v31", "cc", "memory"

/* acc[t]: token t's four rows (as quad()); in the pass the lanes are
 * [row a token u, a v, b u, b v] (f<pr><tp>: rows 2pr, 2pr+1 by tokens
 * 2tp, 2tp+1). c and x: M6 and N6 (six), else M45 and N45. */
NOINLINE MM static void mm_quad(int six, const void *c, const void *x, uint64_t cb, float32x4_t *acc)
{
    float32x4_t f00 = vzip1q_f32(acc[0], acc[1]), f10 = vzip2q_f32(acc[0], acc[1]);
    float32x4_t f01 = vzip1q_f32(acc[2], acc[3]), f11 = vzip2q_f32(acc[2], acc[3]);
#define MM_SB6X4 MM_SB6 MM_SB6 MM_SB6 MM_SB6
    if (six)
        __asm__ volatile("1:\n\t" MM_ZERO8 MM_SB6X4 MM_SB6X4 MM_SB6X4 MM_SB6X4
                         "ld1 {v16.4s, v17.4s}, [%[c]], #32\n\t" /* dw[2] */
                         "ld1 {v28.4s, v29.4s}, [%[x]], #32\n\t" /* da */
                         MM_FSTEP("v4", "v16", "v28", "f00") MM_FSTEP("v5", "v16", "v29", "f01")
                         MM_FSTEP("v6", "v17", "v28", "f10") MM_FSTEP("v7", "v17", "v29", "f11")
                         "subs %[n], %[n], #1\n\t"
                         "b.ne 1b\n\t"
                         : MM_OPERANDS
                         :
                         : MM_CLOBBERS);
    else
        __asm__ volatile("1:\n\t" MM_ZERO8 MM_SB45 MM_SB45 MM_SB45 MM_SB45 MM_SB45 MM_SB45 MM_SB45 MM_SB45
                         "ld1 {v16.4s-v19.4s}, [%[c]], #64\n\t" /* dw[2], dm[2] */
                         "ld1 {v20.16b, v21.16b}, [%[c]], #32\n\t" /* mins of rows 0-1, 2-3 */
                         "ld1 {v24.16b-v27.16b}, [%[x]], #64\n\t" /* l of tokens 0-1, 2-3, h likewise */
                         "ld1 {v28.4s, v29.4s}, [%[x]], #32\n\t" /* da */
                         /* M = l + 128 h: v0-v3 from l, v8, v9, v22, v23 from h */
                         "movi v0.4s, #0\n\tmovi v1.4s, #0\n\tmovi v2.4s, #0\n\tmovi v3.4s, #0\n\t"
                         "movi v8.4s, #0\n\tmovi v9.4s, #0\n\tmovi v22.4s, #0\n\tmovi v23.4s, #0\n\t"
                         MM_SMMLA4("v20", "v21", "v24", "v25")
                         "smmla v8.4s, v20.16b, v26.16b\n\t"
                         "smmla v9.4s, v20.16b, v27.16b\n\t"
                         "smmla v22.4s, v21.16b, v26.16b\n\t"
                         "smmla v23.4s, v21.16b, v27.16b\n\t"
                         "shl v8.4s, v8.4s, #7\n\tshl v9.4s, v9.4s, #7\n\tshl v22.4s, v22.4s, #7\n\tshl v23.4s, v23.4s, #7\n\t"
                         "add v0.4s, v0.4s, v8.4s\n\tadd v1.4s, v1.4s, v9.4s\n\t"
                         "add v2.4s, v2.4s, v22.4s\n\tadd v3.4s, v3.4s, v23.4s\n\t"
                         MM_FSTEP("v4", "v16", "v28", "f00") MM_MSTEP("v0", "v18", "v28", "f00")
                         MM_FSTEP("v5", "v16", "v29", "f01") MM_MSTEP("v1", "v18", "v29", "f01")
                         MM_FSTEP("v6", "v17", "v28", "f10") MM_MSTEP("v2", "v19", "v28", "f10")
                         MM_FSTEP("v7", "v17", "v29", "f11") MM_MSTEP("v3", "v19", "v29", "f11")
                         "subs %[n], %[n], #1\n\t"
                         "b.ne 1b\n\t"
                         : MM_OPERANDS
                         :
                         : MM_CLOBBERS);
#undef MM_SB6X4
    acc[0] = vuzp1q_f32(f00, f10), acc[1] = vuzp2q_f32(f00, f10);
    acc[2] = vuzp1q_f32(f01, f11), acc[3] = vuzp2q_f32(f01, f11);
}

/* ---- the frame ------------------------------------------------------------------ */

/* quad q's pass over the tile: the SDOT pass over c, or the SMMLA one over mc */
#define QUAD_PASS(six, mm, q, cb, acc)                                                                           \
    do {                                                                                                         \
        if (mm)                                                                                                  \
            mm_quad(six, six ? (const void *)mc.k6 : (const void *)mc.k45,                                       \
                    six ? (const void *)qa.m6[q] : (const void *)qa.m45[q], cb, acc);                            \
        else                                                                                                     \
            quad(six, &c, six ? (const void *)qa.k6[q] : (const void *)qa.k45[q], cb, acc);                      \
    } while (0)

/* Tokens [0, nt) (nt <= KTOK) against rows [0, nrows), K-chunk by K-chunk:
 * the chunk's activations laid out once for all the row tiles, each tile of
 * four rows decoded once for all the tokens; the float sums wait in out
 * between chunks. kind: GGML_TYPE_Q4_K, Q5_K or Q6_K; mm: the SMMLA
 * passes (a CPU with i8mm), a constant in each caller (inlined: the
 * dotprod frame has no branch of the other). */
INLINE DP void pass(int kind, int mm, uint64_t n, const uint8_t *w, uint64_t row_bytes, uint64_t nrows, const uint8_t *act,
                    uint64_t act_stride, int nt, float *out, uint64_t out_stride)
{
    union {
        T45 k45[KC];
        T6 k6[KC];
    } c;
    union { /* the tile regrouped for SMMLA */
        M45 k45[KC];
        M6 k6[KC];
    } mc;
    union {
        A45 k45[KTOK / 4][KC];
        A6 k6[KTOK / 4][KC];
        N45 m45[KTOK / 4][KC];
        N6 m6[KTOK / 4][KC];
    } qa;
    uint64_t nb = n / QK_K;
    int quads = (nt + 3) / 4, six = kind == GGML_TYPE_Q6_K;
    for (uint64_t b0 = 0; b0 < nb; b0 += KC) {
        uint64_t cb = nb - b0 < KC ? nb - b0 : KC;
        for (int q = 0; q < quads; q++) {
            const KernQ8_K *a[4];
            UNROLL for (int t = 0; t < 4; t++) a[t] = (const KernQ8_K *)neon_quad_token(act, act_stride, q, t, nt);
            if (mm) {
                if (six) mm_acts6(a, b0, cb, qa.m6[q]);
                else mm_acts45(a, b0, cb, qa.m45[q]);
            } else {
                if (six) acts6(a, b0, cb, qa.k6[q]);
                else acts45(a, b0, cb, qa.k45[q]);
            }
        }
        for (uint64_t r = 0; r < nrows; r += 4) {
            uint64_t valid = nrows - r < 4 ? nrows - r : 4;
            const uint8_t *row[4];
            UNROLL for (int i = 0; i < 4; i++) row[i] = w + (r + ((uint64_t)i < valid ? (uint64_t)i : valid - 1)) * row_bytes;
            if (six) tile6(row, b0, cb, c.k6);
            else tile45(kind == GGML_TYPE_Q5_K, row, b0, cb, c.k45);
            if (mm && six) mm_tile6(c.k6, cb, mc.k6);
            if (mm && !six) mm_tile45(c.k45, cb, mc.k45);
            for (int q = 0; q < quads; q++) {
                int tn = nt - 4 * q < 4 ? nt - 4 * q : 4;
                float *o = out + (uint64_t)(4 * q) * out_stride + r;
                float32x4_t acc[4];
                if (valid == 4 && tn == 4) { /* a whole tile in out */
                    UNROLL for (int t = 0; t < 4; t++) acc[t] = b0 ? vld1q_f32(o + t * out_stride) : vdupq_n_f32(0.0f);
                    QUAD_PASS(six, mm, q, cb, acc);
                    UNROLL for (int t = 0; t < 4; t++) vst1q_f32(o + t * out_stride, acc[t]);
                    continue;
                }
                float lanes[4][4] = {{0}};
                if (b0)
                    for (int t = 0; t < tn; t++) memcpy(lanes[t], o + t * out_stride, valid * sizeof(float));
                UNROLL for (int t = 0; t < 4; t++) acc[t] = vld1q_f32(lanes[t]);
                QUAD_PASS(six, mm, q, cb, acc);
                for (int t = 0; t < tn; t++) neon_store_rows4(o + t * out_stride, acc[t], valid);
            }
        }
    }
}

/* rows [0, nrows) of a Q4_K, Q5_K or Q6_K matrix (type) for nt tokens */
DP void kern_arm_dp_tile_kq(GgmlType kind, uint64_t n, const uint8_t *w, uint64_t row_bytes, uint64_t nrows, const void *act,
                            uint64_t act_stride, int nt, float *out, uint64_t out_stride)
{
    for (int t0 = 0; t0 < nt; t0 += KTOK) {
        int k = nt - t0 < KTOK ? nt - t0 : KTOK;
        pass(kind, 0, n, w, row_bytes, nrows, (const uint8_t *)act + (uint64_t)t0 * act_stride, act_stride, k,
             out + (uint64_t)t0 * out_stride, out_stride);
    }
}

/* the same with the SMMLA passes (a CPU with i8mm) */
MM void kern_arm_mm_tile_kq(GgmlType kind, uint64_t n, const uint8_t *w, uint64_t row_bytes, uint64_t nrows, const void *act,
                            uint64_t act_stride, int nt, float *out, uint64_t out_stride)
{
    for (int t0 = 0; t0 < nt; t0 += KTOK) {
        int k = nt - t0 < KTOK ? nt - t0 : KTOK;
        pass(kind, 1, n, w, row_bytes, nrows, (const uint8_t *)act + (uint64_t)t0 * act_stride, act_stride, k,
             out + (uint64_t)t0 * out_stride, out_stride);
    }
}

#else
/* nothing here on other targets (ISO C wants a declaration) */
typedef int kernels_arm_kq_tile_empty;
#endif
