/* kernels_arm_rows.c - Q8_0 and Q4_0 matmuls on aarch64 with dotprod (Pi 5)
 * that compute eight weight rows per pass (KernelSet.rows of the
 * "aarch64 NEON+dotprod" set in kernels_arm.c).
 *
 * Why: the one-row kernels of kernels_arm.c load the activation again for
 * every row, convert one scale and sum four lanes for every block. Here the
 * rows go in eights and every load and float step serves several of them:
 *
 * Decoding (one token; tokens of calls with fewer than four (Q4_0: three) go one by
 * one): the token's block is laid out once per call as four vectors
 * [a0..7 a0..7] [a8..15 a8..15] ...; one LD4 lane load takes 32 bytes of a
 * Q8_0 row into lane 0 of four vectors and another row's into lane 1, so
 * each SDOT works on two rows; ADDP then gives the block sums of four rows
 * in one vector (no further horizontal work). The eight scales of a block
 * are loaded into one vector and converted two vectors at a time. The
 * sums start from memory (one LD4R sets four registers where four MOVIs
 * cleared them): zero for Q8_0; Q4_0 the same with LD2 (16 bytes of
 * nibbles) and the offset of 8 folded into the starting values (-8 x the
 * activation's code sum). Mapped weights with a copy of their scales
 * (kernels.h: KERN_SIDE_ROWS) take a block's eight scales in one load from
 * it where the file's layout takes eight lane loads.
 *
 * Prompts (four tokens or more; Q4_0 three), K-chunk by K-chunk (PKC blocks): the
 * chunk's activations are laid out once for all the row tiles (per block,
 * four tokens' codes: two loads; the sums' starting values: two LD4R; the
 * scales: one load per two blocks); each tile of eight rows is transposed
 * once (LD4 lane loads: one vector = four rows x four consecutive
 * elements; Q4_0's nibbles split there, their offset of 8 in the starting
 * values) into a scratch on the stack, then every four tokens pass over
 * it: SDOT by element multiplies four rows by a token's four bytes, so
 * each weight vector serves four tokens and each activation vector eight
 * rows. The float sums wait in out between K-chunks. The inner loops are
 * assembly:
 * GCC moved LD4 tuples through extra registers and spilled the 16 sums.
 *
 * Packed weights (--load read; kernels.h: KERN_PACK_ROWS): four rows'
 * blocks interleaved with their four scales together. Decoding takes two
 * groups (eight rows) per pass: one SDOT by element gives four rows' sums in
 * four lanes (no pair loads, no ADDP), one load and one FCVTL four scales;
 * the token's codes are read in place. Prompts copy a tile from the packed
 * groups instead of transposing it. Tiles and passes start on a group;
 * rows outside [r0, r1) are computed and dropped.
 *
 * Determinism (kernels.h): row r and token t always get
 *   acc = 0; for each block b in order: acc = fma(float(S_b), dw_b * da_b, acc)
 * with S_b the exact integer block sum (as the reference's), in one float
 * lane: the same bits on both paths, whatever the tile, the lane, the
 * number of tokens in the call or the thread split. Rows past the end of
 * a tile repeat the last row, tokens past the end of the last four repeat
 * the last token; their lanes are computed and dropped. */
#include "kernels_arm.h"

#include <string.h>

#if defined(__aarch64__) && defined(__GNUC__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#include <arm_neon.h>

#include "kernels_neon.h"

#define DP NEON_DOTPROD
#define DP_INLINE static inline __attribute__((always_inline)) DP
#define UNROLL _Pragma("GCC unroll 8")

/* q4: 1 for Q4_0 weights, 0 for Q8_0 (a constant in each entry; the
 * frames and passes take it as their argument, tested as q4 == 0 or
 * q4 == 1 as the code was built and measured) */
enum {
    TILE = 8,       /* rows per pass */
    DKC = 128,      /* decoding: blocks of the activation laid out at once (8 KiB) */
    PKC = 64,       /* prompts: blocks per K-chunk (144 KiB of activations for PTOK tokens) */
    PTOK = 64,      /* prompts: tokens per pass over a chunk (accumulators on the stack) */
    MIN_TILE_TOKENS = 4 /* Q4_0: 3 (a quad with one token repeated costs less than three decodes; Q8_0's more) */
};

static inline uint64_t block_bytes(int q4)
{
    return q4 == 0 ? sizeof(BlockQ8_0) : sizeof(BlockQ4_0);
}
/* The assembly's post-increments are the blocks' layout: a scale (#2),
 * then the codes (Q8_0 #32, Q4_0's nibbles #16), and a packed group of
 * Q8_0 blocks (#136). */
_Static_assert(offsetof(BlockQ8_0, qs) == 2 && sizeof(BlockQ8_0) == 2 + 32 && offsetof(BlockQ4_0, qs) == 2 &&
                   sizeof(BlockQ4_0) == 2 + 16 && KERN_PACK_ROWS * sizeof(BlockQ8_0) == 136,
               "the assembly's steps follow the block layouts");

/* ---- decoding one token ------------------------------------------------------ */

/* A block of the token as the decoding tile reads it (one pointer: the
 * asm statements are at GCC's limit of 30 operands): dup, its codes as
 * [a0..7 a0..7] [a8..15 a8..15] ...; c, where the four pair sums start
 * (LD4R), four times. */
typedef struct {
    int8x16_t dup[4];
    int32_t c[4];
} DecBlock;

/* The pair loads, sums and float step of one block of eight rows, as
 * assembly so every instruction is the one intended (GCC moves LD4 lane
 * tuples through extra registers). Rows r0..r7 point at the block (its
 * scale), blk at the token's DecBlock; v20 holds the activation
 * scales (lane k for the k-th block of a turn of the loop). The pointers
 * move on by one block. */
#define DEC_SCALES                                                                                               \
    "ld1 {v21.h}[0], [%[r0]], #2\n\t"                                                                           \
    "ld1 {v21.h}[1], [%[r1]], #2\n\t"                                                                           \
    "ld1 {v21.h}[2], [%[r2]], #2\n\t"                                                                           \
    "ld1 {v21.h}[3], [%[r3]], #2\n\t"                                                                           \
    "ld1 {v21.h}[4], [%[r4]], #2\n\t"                                                                           \
    "ld1 {v21.h}[5], [%[r5]], #2\n\t"                                                                           \
    "ld1 {v21.h}[6], [%[r6]], #2\n\t"                                                                           \
    "ld1 {v21.h}[7], [%[r7]], #2\n\t"

/* acc = fma(float(S), dw * da, acc): S in sa (rows 0-3) and sb (4-7) */
#define DEC_FLOAT(sa, sb, k)                                                                                     \
    "fcvtl v30.4s, v21.4h\n\t"                                                                                  \
    "fcvtl2 v31.4s, v21.8h\n\t"                                                                                 \
    "scvtf " sa ".4s, " sa ".4s\n\t"                                                                            \
    "scvtf " sb ".4s, " sb ".4s\n\t"                                                                            \
    "fmul v30.4s, v30.4s, v20.s[" k "]\n\t"                                                                     \
    "fmul v31.4s, v31.4s, v20.s[" k "]\n\t"                                                                     \
    "fmla %[f0].4s, " sa ".4s, v30.4s\n\t"                                                                      \
    "fmla %[f1].4s, " sb ".4s, v31.4s\n\t"

/* With the scales' copy (kernels.h: KERN_SIDE_ROWS): the eight in one
 * load; the rows point past their scale and move on by a whole block (inc:
 * "%[bs]", the block's bytes, where the file's scales moved them by 2). */
#define DEC_SIDE_SCALES "ld1 {v21.8h}, [%[scl]], #16\n\t"

/* Q8_0: a pair of rows into the sums acc (v24..v27 for the four pairs;
 * they start at zero, the DecBlock's c). */
#define Q8_PAIR(ra, rb, acc, v0, v1, v2, v3, inc)                                                               \
    "ld4 {" v0 ".d, " v1 ".d, " v2 ".d, " v3 ".d}[0], [%[" ra "]], " inc "\n\t"                                 \
    "ld4 {" v0 ".d, " v1 ".d, " v2 ".d, " v3 ".d}[1], [%[" rb "]], " inc "\n\t"                                 \
    "sdot " acc ".4s, " v0 ".16b, v16.16b\n\t"                                                                  \
    "sdot " acc ".4s, " v1 ".16b, v17.16b\n\t"                                                                  \
    "sdot " acc ".4s, " v2 ".16b, v18.16b\n\t"                                                                  \
    "sdot " acc ".4s, " v3 ".16b, v19.16b\n\t"

/* Q4_0: 16 bytes of nibbles per row; low nibbles are elements 0-15, high
 * ones 16-31: [A 0-7 | B 0-7] & 15 goes with dup[0], ... >> 4 with dup[2].
 * The sums start at -4 x the activation's code sum in each lane (the
 * DecBlock's c), so the two lanes of a row add up to sum (n - 8) a. */
#define Q4_PAIR(ra, rb, acc, v0, v1, v2, v3, inc)                                                               \
    "ld2 {" v0 ".d, " v1 ".d}[0], [%[" ra "]], " inc "\n\t"                                                      \
    "ld2 {" v0 ".d, " v1 ".d}[1], [%[" rb "]], " inc "\n\t"                                                      \
    "and " v2 ".16b, " v0 ".16b, v29.16b\n\t"                                                                   \
    "and " v3 ".16b, " v1 ".16b, v29.16b\n\t"                                                                   \
    "ushr " v0 ".16b, " v0 ".16b, #4\n\t"                                                                       \
    "ushr " v1 ".16b, " v1 ".16b, #4\n\t"                                                                       \
    "sdot " acc ".4s, " v2 ".16b, v16.16b\n\t"                                                                  \
    "sdot " acc ".4s, " v3 ".16b, v17.16b\n\t"                                                                  \
    "sdot " acc ".4s, " v0 ".16b, v18.16b\n\t"                                                                  \
    "sdot " acc ".4s, " v1 ".16b, v19.16b\n\t"
/* One block of the eight rows (pair: Q8_PAIR or Q4_PAIR): the token's
 * DecBlock (its codes, then the starting sums: one LD4R sets the four),
 * the rows' scales, the four pairs; ADDP gives the block sums of rows 0-3
 * in v22 and 4-7 in v23. */
#define DEC_BLOCK(pair, k, scales, inc)                                                                          \
    "ld1 {v16.16b-v19.16b}, [%[blk]], #64\n\t"                                                                   \
    "ld4r {v24.4s-v27.4s}, [%[blk]], #16\n\t" scales pair("r0", "r1", "v24", "v0", "v1", "v2", "v3", inc)        \
        pair("r2", "r3", "v25", "v4", "v5", "v6", "v7", inc) pair("r4", "r5", "v26", "v0", "v1", "v2", "v3", inc) \
            pair("r6", "r7", "v27", "v4", "v5", "v6", "v7", inc)                                                 \
    "addp v22.4s, v24.4s, v25.4s\n\t"                                                                           \
    "addp v23.4s, v26.4s, v27.4s\n\t" DEC_FLOAT("v22", "v23", k)
#define Q8_FILE(k) DEC_BLOCK(Q8_PAIR, k, DEC_SCALES, "#32")
#define Q8_SIDE(k) DEC_BLOCK(Q8_PAIR, k, DEC_SIDE_SCALES, "%[bs]")
#define Q4_FILE(k) DEC_BLOCK(Q4_PAIR, k, DEC_SCALES, "#16")
#define Q4_SIDE(k) DEC_BLOCK(Q4_PAIR, k, DEC_SIDE_SCALES, "%[bs]")

/* Two blocks per turn of the loop, then an odd one. */
#define DEC_LOOP(block)                                                                                          \
    "cbz %[nb], 2f\n\t"                                                                                           \
    "1:\n\t"                                                                                                      \
    "ldr d20, [%[da]], #8\n\t" block("0") block("1") "subs %[nb], %[nb], #1\n\t"                                 \
    "b.ne 1b\n\t"                                                                                                 \
    "2:\n\t"                                                                                                      \
    "tbz %[odd], #0, 3f\n\t"                                                                                      \
    "ldr s20, [%[da]], #4\n\t" block("0") "3:\n\t"

#define DEC_OPERANDS                                                                                             \
    [r0] "+r"(r0), [r1] "+r"(r1), [r2] "+r"(r2), [r3] "+r"(r3), [r4] "+r"(r4), [r5] "+r"(r5), [r6] "+r"(r6),       \
        [r7] "+r"(r7), [blk] "+r"(blk), [da] "+r"(da), [nb] "+r"(pairs), [f0] "+w"(f0), [f1] "+w"(f1)
#define DEC_CLOBBERS                                                                                             \
    "v0", "v1", "v2", "v3", "v4", "v5", "v6", "v7", "v16", "v17", "v18", "v19", "v20", "v21", "v22", "v23", "v24", \
        "v25", "v26", "v27", "v28", "v29", "v30", "v31", "cc", "memory"

/* Eight rows (r0 and the next at stride rs; the last tile repeats its last
 * row: rows past `valid` start at the last valid one) over nb blocks:
 * f[0] rows 0-3, f[1] rows 4-7. With scl (the scales' copy at the tile's
 * first block), the scales come from there. */
DP_INLINE void dec_tile(int q4, const uint8_t *p, uint64_t rs, uint64_t valid, uint64_t nb, const DecBlock *blk,
                        const float *da, const uint16_t *scl, float32x4_t *f)
{
    const uint8_t *r[TILE];
    UNROLL for (int i = 0; i < TILE; i++) r[i] = p + ((uint64_t)i < valid ? (uint64_t)i : valid - 1) * rs + (scl ? offsetof(BlockQ8_0, qs) : 0);
    const uint8_t *r0 = r[0], *r1 = r[1], *r2 = r[2], *r3 = r[3], *r4 = r[4], *r5 = r[5], *r6 = r[6], *r7 = r[7];
    float32x4_t f0 = f[0], f1 = f[1];
    uint64_t pairs = nb / 2, bs = block_bytes(q4);
    if (q4 == 0 && !scl)
        __asm__ volatile(DEC_LOOP(Q8_FILE) : DEC_OPERANDS : [odd] "r"(nb) : DEC_CLOBBERS);
    else if (q4 == 0)
        __asm__ volatile(DEC_LOOP(Q8_SIDE) : DEC_OPERANDS, [scl] "+r"(scl) : [odd] "r"(nb), [bs] "r"(bs) : DEC_CLOBBERS);
    else if (!scl)
        __asm__ volatile("movi v29.16b, #15\n\t" DEC_LOOP(Q4_FILE) : DEC_OPERANDS : [odd] "r"(nb) : DEC_CLOBBERS);
    else
        __asm__ volatile("movi v29.16b, #15\n\t" DEC_LOOP(Q4_SIDE)
                         : DEC_OPERANDS, [scl] "+r"(scl)
                         : [odd] "r"(nb), [bs] "r"(bs)
                         : DEC_CLOBBERS);
    f[0] = f0;
    f[1] = f1;
}

/* One token (a) against rows [r0, r1): out[r]. Without a copy of the scales
 * (side NULL) the tiles start at r0 (w + r0 * row_bytes); with one, on its
 * groups of eight rows (a tile's rows outside [r0, r1) are computed and
 * dropped). */
DP static void decode_token(int q4, uint64_t n, const uint8_t *w, uint64_t row_bytes, uint64_t r0, uint64_t r1,
                            const uint16_t *side, const KernQ8_0 *a, float *out)
{
    DecBlock blk[DKC];
    float da[DKC];
    uint64_t nb = n / QK8_0, bytes = block_bytes(q4);
    for (uint64_t b0 = 0; b0 < nb; b0 += DKC) {
        uint64_t cb = nb - b0 < DKC ? nb - b0 : DKC;
        for (uint64_t b = 0; b < cb; b++) {
            int64x2_t lo = vreinterpretq_s64_s8(vld1q_s8(a[b0 + b].q));
            int64x2_t hi = vreinterpretq_s64_s8(vld1q_s8(a[b0 + b].q + 16));
            blk[b].dup[0] = vreinterpretq_s8_s64(vdupq_laneq_s64(lo, 0));
            blk[b].dup[1] = vreinterpretq_s8_s64(vdupq_laneq_s64(lo, 1));
            blk[b].dup[2] = vreinterpretq_s8_s64(vdupq_laneq_s64(hi, 0));
            blk[b].dup[3] = vreinterpretq_s8_s64(vdupq_laneq_s64(hi, 1));
            da[b] = a[b0 + b].d;
            int32_t c4 = q4 == 1 ? neon_q4_start(a[b0 + b].sum, 4) : 0; /* two lanes a row */
            blk[b].c[0] = blk[b].c[1] = blk[b].c[2] = blk[b].c[3] = c4;
        }
        for (uint64_t r = side ? r0 / TILE * TILE : r0; r < r1; r += TILE) {
            uint64_t lo = r0 > r ? r0 - r : 0, hi = r1 - r < TILE ? r1 - r : TILE;
            const uint8_t *p = w + r * row_bytes + b0 * bytes;
            const uint16_t *scl = side ? side + (r / TILE * nb + b0) * TILE : NULL;
            /* a whole tile in out, a part through tmp (as decode_packed's
             * passes: one helper for both cost 0.02-0.07 M instructions a
             * token, GCC 12) */
            int whole = lo == 0 && hi == TILE;
            float tmp[TILE], *dst = whole ? out + r : tmp;
            if (!whole) {
                memset(tmp, 0, sizeof tmp);
                if (b0) memcpy(tmp + lo, out + r + lo, (hi - lo) * sizeof(float));
            }
            float32x4_t f[2] = {vdupq_n_f32(0.0f), vdupq_n_f32(0.0f)};
            if (b0 || !whole) f[0] = vld1q_f32(dst), f[1] = vld1q_f32(dst + 4);
            /* whole tiles apart: their row pointers are plain steps */
            if (side) dec_tile(q4, p, row_bytes, TILE, cb, blk, da, scl, f);
            else if (hi == TILE) dec_tile(q4, p, row_bytes, TILE, cb, blk, da, NULL, f);
            else dec_tile(q4, p, row_bytes, hi, cb, blk, da, NULL, f);
            vst1q_f32(dst, f[0]);
            vst1q_f32(dst + 4, f[1]);
            if (!whole) memcpy(out + r + lo, tmp + lo, (hi - lo) * sizeof(float));
        }
    }
}

/* ---- prompts: transposed tiles ------------------------------------------------ */

/* Block b of a tile, transposed: w[h][g] = elements 4g..4g+3 of rows
 * 4h..4h+3 (lane i = row 4h + i) as bytes (Q8_0's codes; Q4_0's nibbles
 * 0..15, their offset of 8 is in the sums' starting values, QChunk.ds).
 * The rows' scales go to an array of their own (float32x4_t[2] per block,
 * rows 0-3 and 4-7), so that one load takes two blocks' eight. */
typedef struct {
    int8x16_t w[2][8];
} TBlock;

/* A chunk's blocks of four tokens: x[b][t] = codes 0-15 of token t,
 * x[b][4 + t] codes 16-31; in ds, in the order the tile takes them, the
 * four scales (d) and the four starting values of the sums (s0, lane t:
 * where token t's block sums start; Q8_0 0, Q4_0 -8 x its code sum, so that
 * nibble x code sums add up to the exact sum of (n - 8) x code) of each
 * block: for an odd number of blocks, block 0's d and s0, then per pair of
 * blocks both d (one load), then both s0. The sums start by two LD4R (each
 * lane to every lane of a register) where eight MOVIs cleared them. */
typedef struct {
    int8x16_t x[PKC][8];
    float32x4_t ds[2 * PKC]; /* s0 as int32 bits */
} QChunk;

/* Scales of the eight rows into v18 (r0..r7 at the block, moved past the
 * scale). */
#define T_SCALES                                                                                                 \
    "ld1 {v18.h}[0], [%[r0]], #2\n\t"                                                                            \
    "ld1 {v18.h}[1], [%[r1]], #2\n\t"                                                                            \
    "ld1 {v18.h}[2], [%[r2]], #2\n\t"                                                                            \
    "ld1 {v18.h}[3], [%[r3]], #2\n\t"                                                                            \
    "ld1 {v18.h}[4], [%[r4]], #2\n\t"                                                                            \
    "ld1 {v18.h}[5], [%[r5]], #2\n\t"                                                                            \
    "ld1 {v18.h}[6], [%[r6]], #2\n\t"                                                                            \
    "ld1 {v18.h}[7], [%[r7]], #2\n\t"
/* 16 bytes of four rows -> v0..v3, vector k = bytes 4k..4k+3 of each */
#define T_LD4(ra, rb, rc, rd)                                                                                    \
    "ld4 {v0.s, v1.s, v2.s, v3.s}[0], [%[" ra "]], #16\n\t"                                                     \
    "ld4 {v0.s, v1.s, v2.s, v3.s}[1], [%[" rb "]], #16\n\t"                                                     \
    "ld4 {v0.s, v1.s, v2.s, v3.s}[2], [%[" rc "]], #16\n\t"                                                     \
    "ld4 {v0.s, v1.s, v2.s, v3.s}[3], [%[" rd "]], #16\n\t"
#define T_STORE_SCALES                                                                                           \
    "fcvtl v5.4s, v18.4h\n\t"                                                                                    \
    "fcvtl2 v6.4s, v18.8h\n\t"                                                                                   \
    "stp q5, q6, [%[sdst]], #32\n\t"
/* Q4_0: the nibbles, low ones (elements 0-15) then high ones (16-31) */
#define T_Q4_STORE                                                                                               \
    "and v4.16b, v0.16b, v16.16b\n\t"                                                                           \
    "and v5.16b, v1.16b, v16.16b\n\t"                                                                           \
    "and v6.16b, v2.16b, v16.16b\n\t"                                                                           \
    "and v7.16b, v3.16b, v16.16b\n\t"                                                                           \
    "ushr v0.16b, v0.16b, #4\n\t"                                                                               \
    "ushr v1.16b, v1.16b, #4\n\t"                                                                               \
    "ushr v2.16b, v2.16b, #4\n\t"                                                                               \
    "ushr v3.16b, v3.16b, #4\n\t"                                                                               \
    "st1 {v4.16b-v7.16b}, [%[dst]], #64\n\t"                                                                    \
    "st1 {v0.16b-v3.16b}, [%[dst]], #64\n\t"

#define T_OPERANDS                                                                                               \
    [r0] "+r"(r0), [r1] "+r"(r1), [r2] "+r"(r2), [r3] "+r"(r3), [r4] "+r"(r4), [r5] "+r"(r5), [r6] "+r"(r6),       \
        [r7] "+r"(r7), [dst] "+r"(dst), [sdst] "+r"(sdst), [nb] "+r"(cb)

/* The cb blocks from block b0 of the tile's rows, transposed into c, their
 * scales as floats into sd. */
DP static void load_chunk(int q4, TBlock *c, float32x4_t (*sd)[2], const uint8_t *const *row, uint64_t b0,
                          uint64_t cb)
{
    uint64_t off = b0 * block_bytes(q4);
    const uint8_t *r0 = row[0] + off, *r1 = row[1] + off, *r2 = row[2] + off, *r3 = row[3] + off;
    const uint8_t *r4 = row[4] + off, *r5 = row[5] + off, *r6 = row[6] + off, *r7 = row[7] + off;
    TBlock *dst = c;
    float32x4_t *sdst = sd[0];
    if (q4 == 0)
        __asm__ volatile("1:\n\t" T_SCALES T_LD4("r0", "r1", "r2", "r3") "st1 {v0.16b-v3.16b}, [%[dst]], #64\n\t"
                         T_LD4("r0", "r1", "r2", "r3") "st1 {v0.16b-v3.16b}, [%[dst]], #64\n\t"
                         T_LD4("r4", "r5", "r6", "r7") "st1 {v0.16b-v3.16b}, [%[dst]], #64\n\t"
                         T_LD4("r4", "r5", "r6", "r7") "st1 {v0.16b-v3.16b}, [%[dst]], #64\n\t"
                         T_STORE_SCALES "subs %[nb], %[nb], #1\n\t"
                         "b.ne 1b\n\t"
                         : T_OPERANDS
                         :
                         : "v0", "v1", "v2", "v3", "v5", "v6", "v18", "cc", "memory");
    else
        __asm__ volatile("movi v16.16b, #15\n\t"
                         "1:\n\t" T_SCALES T_LD4("r0", "r1", "r2", "r3") T_Q4_STORE T_LD4("r4", "r5", "r6", "r7")
                             T_Q4_STORE T_STORE_SCALES "subs %[nb], %[nb], #1\n\t"
                         "b.ne 1b\n\t"
                         : T_OPERANDS
                         :
                         : "v0", "v1", "v2", "v3", "v4", "v5", "v6", "v7", "v16", "v18", "cc", "memory");
}

/* Four weight vectors (one load from p, which moves on by inc) by the
 * four groups of one activation vector, for the four tokens:
 * s[t] += w[g] . act_t[g]. */
#define QUAD_SDOT(p, inc, s0, s1, s2, s3, x0, x1, x2, x3)                                                        \
    "ld1 {v16.16b-v19.16b}, [%[" p "]], " inc "\n\t"                                                            \
    "sdot " s0 ".4s, v16.16b, " x0 ".4b[0]\n\t"                                                                 \
    "sdot " s1 ".4s, v16.16b, " x1 ".4b[0]\n\t"                                                                 \
    "sdot " s2 ".4s, v16.16b, " x2 ".4b[0]\n\t"                                                                 \
    "sdot " s3 ".4s, v16.16b, " x3 ".4b[0]\n\t"                                                                 \
    "sdot " s0 ".4s, v17.16b, " x0 ".4b[1]\n\t"                                                                 \
    "sdot " s1 ".4s, v17.16b, " x1 ".4b[1]\n\t"                                                                 \
    "sdot " s2 ".4s, v17.16b, " x2 ".4b[1]\n\t"                                                                 \
    "sdot " s3 ".4s, v17.16b, " x3 ".4b[1]\n\t"                                                                 \
    "sdot " s0 ".4s, v18.16b, " x0 ".4b[2]\n\t"                                                                 \
    "sdot " s1 ".4s, v18.16b, " x1 ".4b[2]\n\t"                                                                 \
    "sdot " s2 ".4s, v18.16b, " x2 ".4b[2]\n\t"                                                                 \
    "sdot " s3 ".4s, v18.16b, " x3 ".4b[2]\n\t"                                                                 \
    "sdot " s0 ".4s, v19.16b, " x0 ".4b[3]\n\t"                                                                 \
    "sdot " s1 ".4s, v19.16b, " x1 ".4b[3]\n\t"                                                                 \
    "sdot " s2 ".4s, v19.16b, " x2 ".4b[3]\n\t"                                                                 \
    "sdot " s3 ".4s, v19.16b, " x3 ".4b[3]\n\t"

/* token t's float step: its scale (lane t of dt) times the rows' scales
 * (wlo: rows 0-3, whi: 4-7), fma with the converted sums */
#define QUAD_FLOAT(wlo, whi, dt, t, sa, sb, fa, fb)                                                              \
    "scvtf " sa ".4s, " sa ".4s\n\t"                                                                            \
    "scvtf " sb ".4s, " sb ".4s\n\t"                                                                            \
    "fmul v30.4s, " wlo ".4s, " dt ".s[" t "]\n\t"                                                              \
    "fmul v31.4s, " whi ".4s, " dt ".s[" t "]\n\t"                                                              \
    "fmla %[" fa "].4s, " sa ".4s, v30.4s\n\t"                                                                  \
    "fmla %[" fb "].4s, " sb ".4s, v31.4s\n\t"

/* One block of eight rows x four tokens: the sums start from the tokens'
 * starting values (two LD4R), take the tokens' codes 0-15 (v20-v23) with
 * rows 0-3 and 4-7, then codes 16-31 (into the same four registers), then
 * the float steps. */
#define QUAD_BLOCK(wlo, whi, dt)                                                                                 \
    "ld4r {v8.4s-v11.4s}, [%[dsp]]\n\t"                                                                         \
    "ld4r {v12.4s-v15.4s}, [%[dsp]], #16\n\t"                                                                   \
    "ld1 {v20.16b-v23.16b}, [%[xp]], #64\n\t" QUAD_SDOT("wa", "#64", "v8", "v9", "v10", "v11", "v20", "v21", "v22", "v23") \
        QUAD_SDOT("wb", "#64", "v12", "v13", "v14", "v15", "v20", "v21", "v22", "v23")                          \
    "ld1 {v20.16b-v23.16b}, [%[xp]], #64\n\t" QUAD_SDOT("wa", "%[skip]", "v8", "v9", "v10", "v11", "v20", "v21", "v22", "v23") \
        QUAD_SDOT("wb", "%[skip]", "v12", "v13", "v14", "v15", "v20", "v21", "v22", "v23")                      \
            QUAD_FLOAT(wlo, whi, dt, "0", "v8", "v12", "f0", "f4") QUAD_FLOAT(wlo, whi, dt, "1", "v9", "v13", "f1", "f5") \
                QUAD_FLOAT(wlo, whi, dt, "2", "v10", "v14", "f2", "f6")                                           \
                    QUAD_FLOAT(wlo, whi, dt, "3", "v11", "v15", "f3", "f7")
/* one block, its scales loaded; two blocks, both blocks' scales by one
 * load of the rows' (four vectors) and one of the tokens' (two) */
#define QUAD_ONE                                                                                                 \
    "ld1 {v24.4s, v25.4s}, [%[ws]], #32\n\t"                                                                    \
    "ldr q28, [%[dsp]], #16\n\t" QUAD_BLOCK("v24", "v25", "v28")
#define QUAD_TWO                                                                                                 \
    "ld1 {v24.4s-v27.4s}, [%[ws]], #64\n\t"                                                                     \
    "ldp q28, q29, [%[dsp]], #32\n\t" QUAD_BLOCK("v24", "v25", "v28") QUAD_BLOCK("v26", "v27", "v29")

/* The weights of a chunk for chunk_quad: per block, rows 0-3's eight
 * vectors (as TBlock.w[0]) at wa, rows 4-7's at wb, each moving on by skip
 * after its second 64 bytes (a chunk of TBlocks, or packed Q8_0 groups read
 * in place); the eight rows' float scales at ws, block after block. */
typedef struct {
    const int8_t *wa, *wb;
    const float *ws;
    uint64_t skip;
} QuadW;

/* Four tokens (qc: their blocks of the chunk) over the cb blocks of a
 * chunk of weights; acc[4h + t] holds rows 4h..4h+3 of token t. Four
 * blocks per turn of the loop. */
#define QUAD_OPERANDS                                                                                            \
    [xp] "+r"(xp), [dsp] "+r"(dsp), [wa] "+r"(wa), [wb] "+r"(wb), [ws] "+r"(ws), [f0] "+w"(f0), [f1] "+w"(f1),   \
        [f2] "+w"(f2), [f3] "+w"(f3), [f4] "+w"(f4), [f5] "+w"(f5), [f6] "+w"(f6), [f7] "+w"(f7)
#define QUAD_CLOBBERS                                                                                            \
    "v8", "v9", "v10", "v11", "v12", "v13", "v14", "v15", "v16", "v17", "v18", "v19", "v20", "v21", "v22", "v23",  \
        "v24", "v25", "v26", "v27", "v28", "v29", "v30", "v31", "cc", "memory"
/* The chunk's blocks over the float sums f0..f7 (locals of the caller, so
 * that they stay in v0-v7: the only vector registers the tile leaves). */
#define CHUNK_QUAD(w, cb, qc)                                                                                    \
    do {                                                                                                         \
        const int8_t *wa = (w)->wa, *wb = (w)->wb, *xp = (const int8_t *)(qc)->x;                                \
        const float *ws = (w)->ws, *dsp = (const float *)(qc)->ds;                                               \
        uint64_t quads = (cb) / 4, skip = (w)->skip;                                                             \
        if ((cb)&1) __asm__ volatile(QUAD_ONE : QUAD_OPERANDS : [skip] "r"(skip) : QUAD_CLOBBERS);              \
        if ((cb)&2) __asm__ volatile(QUAD_TWO : QUAD_OPERANDS : [skip] "r"(skip) : QUAD_CLOBBERS);              \
        if (quads)                                                                                               \
            __asm__ volatile("1:\n\t" QUAD_TWO QUAD_TWO "subs %[nb], %[nb], #1\n\t"                                 \
                             "b.ne 1b\n\t"                                                                         \
                             : QUAD_OPERANDS, [nb] "+r"(quads)                                                   \
                             : [skip] "r"(skip)                                                                  \
                             : QUAD_CLOBBERS);                                                                   \
    } while (0)

DP static void chunk_quad(const QuadW *w, uint64_t cb, const QChunk *qc, float32x4_t *acc)
{
    float32x4_t f0 = acc[0], f1 = acc[1], f2 = acc[2], f3 = acc[3], f4 = acc[4], f5 = acc[5], f6 = acc[6],
                f7 = acc[7];
    CHUNK_QUAD(w, cb, qc);
    acc[0] = f0, acc[1] = f1, acc[2] = f2, acc[3] = f3, acc[4] = f4, acc[5] = f5, acc[6] = f6, acc[7] = f7;
}

/* A whole tile (eight rows at o, token t's at o + t * os) for tn (1..4)
 * tokens: the float sums loaded from o (first: zero), the chunk, stored
 * back; a token past tn repeats token 0 and is not stored. Apart from the
 * partial tiles, and with the sums in named locals, so that they stay in
 * registers from the loads to the stores. */
DP_INLINE void quad_whole(const QuadW *w, uint64_t cb, const QChunk *qc, float *o, uint64_t os, int first, int tn)
{
    float32x4_t f0, f1, f2, f3, f4, f5, f6, f7;
    if (first) {
        f0 = f1 = f2 = f3 = f4 = f5 = f6 = f7 = vdupq_n_f32(0.0f);
    } else {
        const float *p1 = o + (tn > 1 ? os : 0), *p2 = o + (tn > 2 ? 2 * os : 0), *p3 = o + (tn > 3 ? 3 * os : 0);
        f0 = vld1q_f32(o), f4 = vld1q_f32(o + 4);
        f1 = vld1q_f32(p1), f5 = vld1q_f32(p1 + 4);
        f2 = vld1q_f32(p2), f6 = vld1q_f32(p2 + 4);
        f3 = vld1q_f32(p3), f7 = vld1q_f32(p3 + 4);
    }
    CHUNK_QUAD(w, cb, qc);
    vst1q_f32(o, f0), vst1q_f32(o + 4, f4);
    if (tn > 1) vst1q_f32(o + os, f1), vst1q_f32(o + os + 4, f5);
    if (tn > 2) vst1q_f32(o + 2 * os, f2), vst1q_f32(o + 2 * os + 4, f6);
    if (tn > 3) vst1q_f32(o + 3 * os, f3), vst1q_f32(o + 3 * os + 4, f7);
}

/* One packed Q4_0 group's block at p (moving on): scales into sc, the
 * nibbles stored at dst (moving on), low ones first, by T_Q4_STORE (v16 =
 * 15). */
#define PQ4_GROUP(p, sc)                                                                                         \
    "ldr " sc ", [%[" p "]], #8\n\t"                                                                            \
    "ld1 {v0.16b-v3.16b}, [%[" p "]], #64\n\t" T_Q4_STORE

/* The cb blocks from block b0 of two packed groups (kernels.h: four rows
 * interleaved, their scales together) for chunk_quad: Q8_0's codes are read
 * in place (only the scales converted into sd); Q4_0's decoded to signed
 * bytes into c. */
DP static void load_chunk_packed(int q4, TBlock *c, float32x4_t (*sd)[2], const uint8_t *ga, const uint8_t *gb,
                                 uint64_t b0, uint64_t cb, QuadW *qw)
{
    uint64_t gbb = KERN_PACK_ROWS * block_bytes(q4);
    const uint8_t *g[2] = {ga + b0 * gbb, gb + b0 * gbb};
    if (q4 == 0) {
        /* the two groups' four F16 scales per block, as floats */
        const uint8_t *pa = g[0], *pb = g[1];
        float32x4_t *dst = sd[0];
        uint64_t fours = cb / 4, left = cb % 4;
        /* gbb: four blocks of sizeof(BlockQ8_0) = 34 bytes; four blocks per turn, one store of two */
#define PQ8_SCALES(a, b) "ldr d" a ", [%[pa]], #136\n\tldr d" b ", [%[pb]], #136\n\t"
#define PQ8_CONVERT(a, b) "fcvtl v" a ".4s, v" a ".4h\n\tfcvtl v" b ".4s, v" b ".4h\n\t"
        if (fours)
            __asm__ volatile("1:\n\t" PQ8_SCALES("0", "1") PQ8_SCALES("2", "3") PQ8_SCALES("4", "5")
                                 PQ8_SCALES("6", "7") PQ8_CONVERT("0", "1") PQ8_CONVERT("2", "3")
                                     PQ8_CONVERT("4", "5") PQ8_CONVERT("6", "7")
                             "st1 {v0.4s-v3.4s}, [%[dst]], #64\n\t"
                             "st1 {v4.4s-v7.4s}, [%[dst]], #64\n\t"
                             "subs %[n], %[n], #1\n\t"
                             "b.ne 1b\n\t"
                             : [pa] "+r"(pa), [pb] "+r"(pb), [dst] "+r"(dst), [n] "+r"(fours)
                             :
                             : "v0", "v1", "v2", "v3", "v4", "v5", "v6", "v7", "cc", "memory");
        if (left)
            __asm__ volatile("1:\n\t" PQ8_SCALES("0", "1") PQ8_CONVERT("0", "1")
                             "stp q0, q1, [%[dst]], #32\n\t"
                             "subs %[n], %[n], #1\n\t"
                             "b.ne 1b\n\t"
                             : [pa] "+r"(pa), [pb] "+r"(pb), [dst] "+r"(dst), [n] "+r"(left)
                             :
                             : "v0", "v1", "cc", "memory");
#undef PQ8_SCALES
#undef PQ8_CONVERT
        *qw = (QuadW){(const int8_t *)g[0] + 8, (const int8_t *)g[1] + 8, (const float *)sd, gbb - 64};
        return;
    }
    /* per block, each group: its scales, its nibbles (lows: elements
     * 4j..4j+3 of the four rows, highs: 16 + 4j..) as TBlock.w[h] */
    const uint8_t *pa = g[0], *pb = g[1];
    int8x16_t *dst = c[0].w[0];
    float32x4_t *sdst = sd[0];
    uint64_t left = cb;
    __asm__ volatile("movi v16.16b, #15\n\t"
                     "1:\n\t" PQ4_GROUP("pa", "d18") PQ4_GROUP("pb", "d19")
                     "fcvtl v18.4s, v18.4h\n\t"
                     "fcvtl v19.4s, v19.4h\n\t"
                     "stp q18, q19, [%[sdst]], #32\n\t"
                     "subs %[left], %[left], #1\n\t"
                     "b.ne 1b\n\t"
                     : [pa] "+r"(pa), [pb] "+r"(pb), [dst] "+r"(dst), [sdst] "+r"(sdst), [left] "+r"(left)
                     :
                     : "v0", "v1", "v2", "v3", "v4", "v5", "v6", "v7", "v16", "v18", "v19", "cc", "memory");
    *qw = (QuadW){(const int8_t *)c[0].w[0], (const int8_t *)c[0].w[1], (const float *)sd, sizeof c[0] - 64};
}

/* Tokens [0, nt) (nt <= PTOK) against rows [r0, r1) (out[t * out_stride + r],
 * w the matrix's row 0), K-chunk by K-chunk: the chunk's activations laid out
 * once in QChunks for all the row tiles, each tile of eight rows loaded once
 * for all the tokens (transposed from the file's layout, or copied from the
 * packed one: then tiles start at a group of four); the float sums wait in
 * out between chunks. A tile's lanes [lo, hi) are the rows wanted. */
DP static void prompt_pass(int q4, int packed, uint64_t n, const uint8_t *w, uint64_t row_bytes, uint64_t r0,
                           uint64_t r1, const void *act, uint64_t act_stride, int nt, float *out, uint64_t out_stride)
{
    TBlock c[PKC];
    float32x4_t sd[PKC][2];
    QChunk qc[PTOK / 4];
    QuadW qw;
    uint64_t nb = n / QK8_0;
    int quads = (nt + 3) / 4;
    uint64_t start = packed ? r0 / 4 * 4 : r0;
    for (uint64_t b0 = 0; b0 < nb; b0 += PKC) {
        uint64_t cb = nb - b0 < PKC ? nb - b0 : PKC;
        for (int q = 0; q < quads; q++) {
            const KernQ8_0 *a[4];
            UNROLL for (int t = 0; t < 4; t++) a[t] = (const KernQ8_0 *)neon_quad_token(act, act_stride, q, t, nt) + b0;
            uint64_t odd = cb & 1;
            for (uint64_t b = 0; b < cb; b++) {
                float d[4];
                int32_t s0[4];
                UNROLL for (int t = 0; t < 4; t++) {
                    qc[q].x[b][t] = vld1q_s8(a[t][b].q);
                    qc[q].x[b][4 + t] = vld1q_s8(a[t][b].q + 16);
                    s0[t] = q4 == 1 ? neon_q4_start(a[t][b].sum, 8) : 0;
                    d[t] = a[t][b].d;
                }
                /* the lone block of an odd chunk: d, s0; a pair's: d d s0 s0 */
                uint64_t k = b - odd, at = b < odd ? 0 : 2 * odd + 4 * (k / 2) + k % 2, step = b < odd ? 1 : 2;
                qc[q].ds[at] = vld1q_f32(d);
                qc[q].ds[at + step] = vreinterpretq_f32_s32(vld1q_s32(s0));
            }
        }
        for (uint64_t r = start; r < r1; r += TILE) {
            uint64_t lo = r0 > r ? r0 - r : 0, hi = r1 - r < TILE ? r1 - r : TILE;
            if (packed) {
                const uint8_t *ga = w + r * row_bytes; /* group r / 4 (4 rows of row_bytes each) */
                load_chunk_packed(q4, c, sd, ga, r + 4 < r1 ? ga + 4 * row_bytes : ga, b0, cb, &qw);
            } else {
                const uint8_t *row[TILE];
                UNROLL for (int i = 0; i < TILE; i++) row[i] = w + (r + i < r1 ? r + i : r1 - 1) * row_bytes;
                load_chunk(q4, c, sd, row, b0, cb);
                qw = (QuadW){(const int8_t *)c[0].w[0], (const int8_t *)c[0].w[1], (const float *)sd, sizeof c[0] - 64};
            }
            int whole = lo == 0 && hi == TILE;
            for (int q = 0; q < quads; q++) {
                int tn = nt - 4 * q < 4 ? nt - 4 * q : 4;
                if (whole) {
                    quad_whole(&qw, cb, &qc[q], out + (uint64_t)(4 * q) * out_stride + r, out_stride, b0 == 0, tn);
                    continue;
                }
                float32x4_t acc[8];
                float lanes[4][TILE];
                memset(lanes, 0, sizeof lanes);
                if (b0)
                    for (int t = 0; t < tn; t++)
                        memcpy(lanes[t] + lo, out + (uint64_t)(4 * q + t) * out_stride + r + lo, (hi - lo) * sizeof(float));
                UNROLL for (int t = 0; t < 4; t++) {
                    acc[t] = vld1q_f32(lanes[t]);
                    acc[4 + t] = vld1q_f32(lanes[t] + 4);
                }
                chunk_quad(&qw, cb, &qc[q], acc);
                for (int t = 0; t < tn; t++) {
                    vst1q_f32(lanes[t], acc[t]);
                    vst1q_f32(lanes[t] + 4, acc[4 + t]);
                    memcpy(out + (uint64_t)(4 * q + t) * out_stride + r + lo, lanes[t] + lo, (hi - lo) * sizeof(float));
                }
            }
        }
    }
}

/* ---- packed weights, one token --------------------------------------------- */

/* Eight rows (groups g0 and g1, the same group twice for a lone one), one
 * block: the token's codes (a, read in place from its KernQ8_0s, stride
 * %[as]), where the two groups' sums start (one LD2R from c: Q8_0 0, Q4_0
 * -8 x the code sum), two groups' scales (one load each) and codes; one
 * SDOT by element gives a group's four row sums in four lanes. v22: the
 * activation scales of the turn (lane k: its k-th block). Then
 * acc = fma(float(S), dw * da, acc) as everywhere. */
#define PK_FLOAT(k)                                                                                              \
    "fcvtl v16.4s, v16.4h\n\t"                                                                                  \
    "fcvtl v17.4s, v17.4h\n\t"                                                                                  \
    "scvtf v24.4s, v24.4s\n\t"                                                                                  \
    "scvtf v25.4s, v25.4s\n\t"                                                                                  \
    "fmul v16.4s, v16.4s, v22.s[" k "]\n\t"                                                                     \
    "fmul v17.4s, v17.4s, v22.s[" k "]\n\t"                                                                     \
    "fmla %[f0].4s, v24.4s, v16.4s\n\t"                                                                         \
    "fmla %[f1].4s, v25.4s, v17.4s\n\t"
/* one group's eight code vectors (v0-v7) against the token: its four row
 * sums in acc (v0-v7 only, no callee-saved v8-v15: dec_packed is a call) */
#define PK_SDOT8(acc)                                                                                            \
    "sdot " acc ".4s, v0.16b, v20.4b[0]\n\t"                                                                    \
    "sdot " acc ".4s, v1.16b, v20.4b[1]\n\t"                                                                    \
    "sdot " acc ".4s, v2.16b, v20.4b[2]\n\t"                                                                    \
    "sdot " acc ".4s, v3.16b, v20.4b[3]\n\t"                                                                    \
    "sdot " acc ".4s, v4.16b, v21.4b[0]\n\t"                                                                    \
    "sdot " acc ".4s, v5.16b, v21.4b[1]\n\t"                                                                    \
    "sdot " acc ".4s, v6.16b, v21.4b[2]\n\t"                                                                    \
    "sdot " acc ".4s, v7.16b, v21.4b[3]\n\t"
#define PK_Q8_GROUP(g, sc, acc)                                                                                  \
    "ldr " sc ", [%[" g "]], #8\n\t"                                                                            \
    "ld1 {v0.16b-v3.16b}, [%[" g "]], #64\n\t"                                                                  \
    "ld1 {v4.16b-v7.16b}, [%[" g "]], #64\n\t" PK_SDOT8(acc)
#define PK_START "ld2r {v24.4s, v25.4s}, [%[c]], #8\n\t"
#define PK_Q8_BLOCK(k)                                                                                           \
    "ld1 {v20.16b, v21.16b}, [%[a]], %[as]\n\t" PK_START PK_Q8_GROUP("g0", "d16", "v24")                         \
        PK_Q8_GROUP("g1", "d17", "v25") PK_FLOAT(k)
/* Q4_0: vector j's low nibbles are elements 4j..4j+3 (against v20's group
 * j), its high ones 16 + 4j.. (v21's): lows into v0-v3, highs v4-v7 */
#define PK_Q4_SPLIT(v, hi)                                                                                       \
    "ushr " hi ".16b, " v ".16b, #4\n\t"                                                                        \
    "and " v ".16b, " v ".16b, v31.16b\n\t"
#define PK_Q4_GROUP(g, sc, acc)                                                                                  \
    "ldr " sc ", [%[" g "]], #8\n\t"                                                                            \
    "ld1 {v0.16b-v3.16b}, [%[" g "]], #64\n\t" PK_Q4_SPLIT("v0", "v4") PK_Q4_SPLIT("v1", "v5")                   \
        PK_Q4_SPLIT("v2", "v6") PK_Q4_SPLIT("v3", "v7") PK_SDOT8(acc)
#define PK_Q4_BLOCK(k)                                                                                           \
    "ld1 {v20.16b, v21.16b}, [%[a]], %[as]\n\t" PK_START PK_Q4_GROUP("g0", "d16", "v24")                         \
        PK_Q4_GROUP("g1", "d17", "v25") PK_FLOAT(k)
#define PK_OPERANDS                                                                                              \
    [g0] "+r"(g0), [g1] "+r"(g1), [a] "+r"(ap), [da] "+r"(da), [c] "+r"(c), [n4] "+r"(n4), [n1] "+r"(n1),        \
        [f0] "+w"(f0), [f1] "+w"(f1)
#define PK_CLOBBERS                                                                                              \
    "v0", "v1", "v2", "v3", "v4", "v5", "v6", "v7", "v16", "v17", "v20", "v21", "v22", "v24", "v25", "v31",  \
        "cc", "memory"

/* Groups g0, g1 (at their block) over nb blocks of the token a: f[0] rows
 * of g0, f[1] of g1. Four blocks per turn of the loop, then one by one. */
DP_INLINE void dec_packed(int q4, const uint8_t *g0, const uint8_t *g1, uint64_t nb, const KernQ8_0 *a,
                          const float *da, const int32_t *c, float32x4_t *f)
{
    float32x4_t f0 = f[0], f1 = f[1];
    const int8_t *ap = a->q;
    uint64_t n4 = nb / 4, n1 = nb % 4, as = sizeof(KernQ8_0);
    if (q4 == 0)
        __asm__ volatile("cbz %[n4], 2f\n\t"
                         "1:\n\t"
                         "ldr q22, [%[da]], #16\n\t" PK_Q8_BLOCK("0") PK_Q8_BLOCK("1") PK_Q8_BLOCK("2") PK_Q8_BLOCK("3")
                         "subs %[n4], %[n4], #1\n\t"
                         "b.ne 1b\n\t"
                         "2:\n\t"
                         "cbz %[n1], 4f\n\t"
                         "3:\n\t"
                         "ldr s22, [%[da]], #4\n\t" PK_Q8_BLOCK("0") "subs %[n1], %[n1], #1\n\t"
                         "b.ne 3b\n\t"
                         "4:\n\t"
                         : PK_OPERANDS
                         : [as] "r"(as)
                         : PK_CLOBBERS);
    else
        __asm__ volatile("movi v31.16b, #15\n\t"
                         "cbz %[n4], 2f\n\t"
                         "1:\n\t"
                         "ldr q22, [%[da]], #16\n\t" PK_Q4_BLOCK("0") PK_Q4_BLOCK("1") PK_Q4_BLOCK("2") PK_Q4_BLOCK("3")
                         "subs %[n4], %[n4], #1\n\t"
                         "b.ne 1b\n\t"
                         "2:\n\t"
                         "cbz %[n1], 4f\n\t"
                         "3:\n\t"
                         "ldr s22, [%[da]], #4\n\t" PK_Q4_BLOCK("0") "subs %[n1], %[n1], #1\n\t"
                         "b.ne 3b\n\t"
                         "4:\n\t"
                         : PK_OPERANDS
                         : [as] "r"(as)
                         : PK_CLOBBERS);
    f[0] = f0;
    f[1] = f1;
}

/* One token (a) against rows [r0, r1) of a packed matrix: out[r]. Passes
 * of two groups (eight rows); a pass's lanes [lo, hi) are the rows wanted. */
DP static void decode_packed(int q4, uint64_t n, const uint8_t *w, uint64_t row_bytes, uint64_t r0, uint64_t r1,
                             const KernQ8_0 *a, float *out)
{
    float da[DKC];
    int32_t c[2 * DKC]; /* per block twice (LD2R): where the sums of both groups start */
    uint64_t nb = n / QK8_0, gbb = KERN_PACK_ROWS * block_bytes(q4);
    for (uint64_t b0 = 0; b0 < nb; b0 += DKC) {
        uint64_t cb = nb - b0 < DKC ? nb - b0 : DKC;
        for (uint64_t b = 0; b < cb; b++) {
            da[b] = a[b0 + b].d;
            c[2 * b] = c[2 * b + 1] = q4 == 1 ? neon_q4_start(a[b0 + b].sum, 8) : 0;
        }
        for (uint64_t r = r0 / 4 * 4; r < r1; r += TILE) {
            uint64_t lo = r0 > r ? r0 - r : 0, hi = r1 - r < TILE ? r1 - r : TILE;
            const uint8_t *g0 = w + r * row_bytes + b0 * gbb, *g1 = r + 4 < r1 ? g0 + 4 * row_bytes : g0;
            /* a whole pass in out, a part through tmp (one inlined kernel: size) */
            int whole = lo == 0 && hi == TILE;
            float tmp[TILE], *dst = whole ? out + r : tmp;
            if (!whole) {
                memset(tmp, 0, sizeof tmp);
                if (b0) memcpy(tmp + lo, out + r + lo, (hi - lo) * sizeof(float));
            }
            float32x4_t f[2] = {vdupq_n_f32(0.0f), vdupq_n_f32(0.0f)};
            if (b0 || !whole) f[0] = vld1q_f32(dst), f[1] = vld1q_f32(dst + 4);
            dec_packed(q4, g0, g1, cb, a + b0, da, c, f);
            vst1q_f32(dst, f[0]);
            vst1q_f32(dst + 4, f[1]);
            if (!whole) memcpy(out + r + lo, tmp + lo, (hi - lo) * sizeof(float));
        }
    }
}

/* fewer tokens than a quad of the prompt tile go one by one */
static inline int one_by_one(int q4, int nt)
{
    return nt < MIN_TILE_TOKENS - (q4 == 1);
}

/* mm: the tiles of kern_arm_mm_pass (a CPU with i8mm) instead of prompt_pass */
DP static void rows_frame(int q4, int mm, uint64_t n, const uint8_t *w, uint64_t row_bytes, uint64_t nrows,
                          const void *act, uint64_t act_stride, int nt, float *out, uint64_t out_stride)
{
    if (one_by_one(q4, nt)) {
        for (int t = 0; t < nt; t++)
            decode_token(q4, n, w, row_bytes, 0, nrows, NULL,
                         (const KernQ8_0 *)((const uint8_t *)act + (uint64_t)t * act_stride), out + (uint64_t)t * out_stride);
        return;
    }
    for (int t0 = 0; t0 < nt; t0 += PTOK) {
        int k = nt - t0 < PTOK ? nt - t0 : PTOK;
        const uint8_t *at = (const uint8_t *)act + (uint64_t)t0 * act_stride;
        if (mm)
            kern_arm_mm_pass(q4 == 1, 0, n, w, row_bytes, 0, nrows, at, act_stride, k, out + (uint64_t)t0 * out_stride,
                             out_stride);
        else
            prompt_pass(q4, 0, n, w, row_bytes, 0, nrows, at, act_stride, k, out + (uint64_t)t0 * out_stride, out_stride);
    }
}

DP static void packed_frame(int q4, int mm, uint64_t n, const uint8_t *w, uint64_t row_bytes, uint64_t r0, uint64_t r1,
                            const void *act, uint64_t act_stride, int nt, float *out, uint64_t out_stride)
{
    if (r0 >= r1) return;
    if (one_by_one(q4, nt)) {
        for (int t = 0; t < nt; t++)
            decode_packed(q4, n, w, row_bytes, r0, r1,
                          (const KernQ8_0 *)((const uint8_t *)act + (uint64_t)t * act_stride), out + (uint64_t)t * out_stride);
        return;
    }
    for (int t0 = 0; t0 < nt; t0 += PTOK) {
        int k = nt - t0 < PTOK ? nt - t0 : PTOK;
        const uint8_t *at = (const uint8_t *)act + (uint64_t)t0 * act_stride;
        if (mm)
            kern_arm_mm_pass(q4 == 1, 1, n, w, row_bytes, r0, r1, at, act_stride, k, out + (uint64_t)t0 * out_stride,
                             out_stride);
        else
            prompt_pass(q4, 1, n, w, row_bytes, r0, r1, at, act_stride, k, out + (uint64_t)t0 * out_stride, out_stride);
    }
}

/* Mapped weights with the scales' copy: decoding reads the copy; prompts
 * read the file's scales as rows_frame does (once per tile and K-chunk). */
DP static void sided_frame(int q4, int mm, uint64_t n, const uint8_t *w, uint64_t row_bytes, uint64_t r0, uint64_t r1,
                           const uint16_t *side, const void *act, uint64_t act_stride, int nt, float *out,
                           uint64_t out_stride)
{
    if (r0 >= r1) return;
    if (!one_by_one(q4, nt)) {
        rows_frame(q4, mm, n, w + r0 * row_bytes, row_bytes, r1 - r0, act, act_stride, nt, out + r0, out_stride);
        return;
    }
    for (int t = 0; t < nt; t++)
        decode_token(q4, n, w, row_bytes, r0, r1, side, (const KernQ8_0 *)((const uint8_t *)act + (uint64_t)t * act_stride),
                     out + (uint64_t)t * out_stride);
}

/* the dotprod set's entries (mm 0) and the i8mm set's (mm 1); q4 0 for Q8_0, 1 for Q4_0 */
#define RK_ENTRIES(set, mm)                                                                                      \
    DP void kern_arm_##set##_packed_q8_0(uint64_t n, const uint8_t *w, uint64_t row_bytes, uint64_t r0, uint64_t r1, \
                                         const void *act, uint64_t act_stride, int nt, float *out, uint64_t out_stride) \
    {                                                                                                            \
        packed_frame(0, mm, n, w, row_bytes, r0, r1, act, act_stride, nt, out, out_stride);                \
    }                                                                                                            \
    DP void kern_arm_##set##_packed_q4_0(uint64_t n, const uint8_t *w, uint64_t row_bytes, uint64_t r0, uint64_t r1, \
                                         const void *act, uint64_t act_stride, int nt, float *out, uint64_t out_stride) \
    {                                                                                                            \
        packed_frame(1, mm, n, w, row_bytes, r0, r1, act, act_stride, nt, out, out_stride);                \
    }                                                                                                            \
    DP void kern_arm_##set##_sided_q8_0(uint64_t n, const uint8_t *w, uint64_t row_bytes, uint64_t r0, uint64_t r1,  \
                                        const uint16_t *side, const void *act, uint64_t act_stride, int nt,      \
                                        float *out, uint64_t out_stride)                                         \
    {                                                                                                            \
        sided_frame(0, mm, n, w, row_bytes, r0, r1, side, act, act_stride, nt, out, out_stride);           \
    }                                                                                                            \
    DP void kern_arm_##set##_sided_q4_0(uint64_t n, const uint8_t *w, uint64_t row_bytes, uint64_t r0, uint64_t r1,  \
                                        const uint16_t *side, const void *act, uint64_t act_stride, int nt,      \
                                        float *out, uint64_t out_stride)                                         \
    {                                                                                                            \
        sided_frame(1, mm, n, w, row_bytes, r0, r1, side, act, act_stride, nt, out, out_stride);           \
    }                                                                                                            \
    DP void kern_arm_##set##_rows_q8_0(uint64_t n, const uint8_t *w, uint64_t row_bytes, uint64_t nrows, const void *act, \
                                       uint64_t act_stride, int nt, float *out, uint64_t out_stride)             \
    {                                                                                                            \
        rows_frame(0, mm, n, w, row_bytes, nrows, act, act_stride, nt, out, out_stride);                   \
    }                                                                                                            \
    DP void kern_arm_##set##_rows_q4_0(uint64_t n, const uint8_t *w, uint64_t row_bytes, uint64_t nrows, const void *act, \
                                       uint64_t act_stride, int nt, float *out, uint64_t out_stride)             \
    {                                                                                                            \
        rows_frame(1, mm, n, w, row_bytes, nrows, act, act_stride, nt, out, out_stride);                   \
    }
RK_ENTRIES(dp, 0)
RK_ENTRIES(mm, 1)

#else
/* nothing here on other targets (ISO C wants a declaration) */
typedef int kernels_arm_rows_empty;
#endif
