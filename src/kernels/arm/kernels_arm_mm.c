/* kernels_arm_mm.c - Q8_0 and Q4_0 prompt tiles for aarch64 CPUs with i8mm
 * (SMMLA: Cortex-A510/A710/A715/X2 and later, Neoverse V1/N2; not the Pi 5's
 * A76 nor the Pi 4's A72), for the "aarch64 NEON+dotprod+i8mm" set
 * (kernels_arm.c). Calls of one to three tokens go to the dotprod set's
 * kernels (kernels_arm_rows.c), which call kern_arm_mm_pass for more.
 *
 * Why: SMMLA multiplies a 2 x 8 matrix of int8 (two weight rows, eight
 * consecutive elements each) by the transpose of another (two tokens' same
 * eight elements) into a 2 x 2 matrix of int32: 32 products per instruction
 * against SDOT's 16, and its four result lanes [r0 t0, r0 t1, r1 t0, r1 t1]
 * are four different results, so each float step serves four of them.
 *
 * A tile is eight rows (four pairs) by four tokens (two pairs). Per K-chunk
 * the tokens' blocks are laid out once for all the tiles (MmAct: for each
 * pair of tokens, four vectors of eight elements of both), and each tile's
 * blocks once for all the tokens (MmTile: for each pair of rows, four
 * vectors; Q4_0's nibbles split there, their offset of 8 in the sums'
 * starting values), from the file's layout or
 * from the packed groups (kernels.h: four rows interleaved by four bytes,
 * which one ZIP per vector turns into pairs interleaved by eight). Per
 * block, pair of rows and pair of tokens: four SMMLA from the starting
 * values (one load; Q8_0 0, Q4_0 -8 x the token's code sum) give the exact
 * block sums S_b, then one convert, one product of the scales ([dw0 dw0 dw1 dw1]
 * x [da0 da1 da0 da1]) and one FMA:
 *   acc = fma(float(S_b), dw_b * da_b, acc)
 * block after block from acc = 0, the float step of every path
 * (kernels.h: determinism), so the bits are the dotprod tiles' and the
 * reference's. Rows past the end of a tile repeat the last row and tokens
 * past the end the last token; their lanes are computed and dropped. */
#include "kernels_arm.h"

#include <string.h>

#if defined(__aarch64__) && defined(__GNUC__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#include <arm_neon.h>

#include "kernels_neon.h"

#ifdef __clang__
#define MM __attribute__((target("dotprod,i8mm")))
#else
#define MM __attribute__((target("arch=armv8.2-a+dotprod+i8mm")))
#endif
#define MM_INLINE static inline __attribute__((always_inline)) MM

enum {
    MM_ROWS = 8,  /* rows per tile */
    MM_KC = 64,   /* blocks per K-chunk: tiles 20 KiB, activations 192 KiB for MM_TOK tokens */
    MM_TOK = 64   /* tokens per pass over a chunk */
};

/* Block b of four tokens: x[j][k] = elements 8k..8k+7 of tokens 2j and
 * 2j+1; d[j] = [da(2j), da(2j+1), da(2j), da(2j+1)]; s0[j] where the sums
 * of tokens 2j, 2j+1 start, in the same lanes (Q8_0 0; Q4_0 -8 x the
 * token's code sum, so that the nibbles' sums come out as those of the
 * codes - 8). */
typedef struct {
    float32x4_t d[2];
    int8x16_t x[2][4];
    int32x4_t s0[2];
} MmAct;

/* Block b of a tile: w[i][k] = elements 8k..8k+7 of rows 2i and 2i+1;
 * d[i] = [dw(2i), dw(2i), dw(2i+1), dw(2i+1)]. */
typedef struct {
    float32x4_t d[4];
    int8x16_t w[4][4];
} MmTile;

/* two 16-byte halves (elements 0-15, 16-31) of rows a and b as four pair vectors */
MM_INLINE void pair_rows(int8x16_t *w, int8x16_t a0, int8x16_t a1, int8x16_t b0, int8x16_t b1)
{
    int64x2_t x0 = vreinterpretq_s64_s8(a0), x1 = vreinterpretq_s64_s8(a1);
    int64x2_t y0 = vreinterpretq_s64_s8(b0), y1 = vreinterpretq_s64_s8(b1);
    w[0] = vreinterpretq_s8_s64(vzip1q_s64(x0, y0));
    w[1] = vreinterpretq_s8_s64(vzip2q_s64(x0, y0));
    w[2] = vreinterpretq_s8_s64(vzip1q_s64(x1, y1));
    w[3] = vreinterpretq_s8_s64(vzip2q_s64(x1, y1));
}

/* Q4_0's 16 bytes of nibbles: elements 0-15 (low) and 16-31 (high), as
 * they are (0..15; the offset of 8 is in MmAct.s0) */
MM_INLINE void q4_codes(const uint8_t *p, int8x16_t *lo, int8x16_t *hi)
{
    uint8x16_t q = vld1q_u8(p);
    *lo = vreinterpretq_s8_u8(vandq_u8(q, vdupq_n_u8(15)));
    *hi = vreinterpretq_s8_u8(vshrq_n_u8(q, 4));
}

/* four F16 scales as [d0 d0 d1 d1] and [d2 d2 d3 d3] */
MM_INLINE void pair_scales(float32x4_t *d, uint16x4_t h)
{
    float32x4_t f = vcvt_f32_f16(vreinterpret_f16_u16(h));
    d[0] = vzip1q_f32(f, f);
    d[1] = vzip2q_f32(f, f);
}

/* rows a and b (the file's layout) at their block: pair vectors w[0..3] */
MM_INLINE void tile_pair(int q4, int8x16_t *w, const uint8_t *a, const uint8_t *b)
{
    int8x16_t a0, a1, b0, b1;
    if (q4) {
        q4_codes(a + offsetof(BlockQ4_0, qs), &a0, &a1);
        q4_codes(b + offsetof(BlockQ4_0, qs), &b0, &b1);
    } else {
        const uint64_t qs = offsetof(BlockQ8_0, qs);
        a0 = vld1q_s8((const int8_t *)a + qs), a1 = vld1q_s8((const int8_t *)a + qs + 16);
        b0 = vld1q_s8((const int8_t *)b + qs), b1 = vld1q_s8((const int8_t *)b + qs + 16);
    }
    pair_rows(w, a0, a1, b0, b1);
}

/* The cb blocks from b0 of rows row[0..7] (the file's layout) into c; q4
 * a constant in each caller (one loop per type, the row pointers named so
 * that they stay in registers). */
MM_INLINE void tile_rows_of(int q4, MmTile *c, const uint8_t *const *row, uint64_t b0, uint64_t cb)
{
    uint64_t bb = q4 ? sizeof(BlockQ4_0) : sizeof(BlockQ8_0);
    const uint8_t *p0 = row[0] + b0 * bb, *p1 = row[1] + b0 * bb, *p2 = row[2] + b0 * bb, *p3 = row[3] + b0 * bb;
    const uint8_t *p4 = row[4] + b0 * bb, *p5 = row[5] + b0 * bb, *p6 = row[6] + b0 * bb, *p7 = row[7] + b0 * bb;
    for (MmTile *t = c, *end = c + cb; t < end; t++) {
        uint16x4_t h0 = vld1_dup_u16((const uint16_t *)p0), h1 = vld1_dup_u16((const uint16_t *)p4);
        h0 = vld1_lane_u16((const uint16_t *)p1, h0, 1), h1 = vld1_lane_u16((const uint16_t *)p5, h1, 1);
        h0 = vld1_lane_u16((const uint16_t *)p2, h0, 2), h1 = vld1_lane_u16((const uint16_t *)p6, h1, 2);
        h0 = vld1_lane_u16((const uint16_t *)p3, h0, 3), h1 = vld1_lane_u16((const uint16_t *)p7, h1, 3);
        pair_scales(t->d, h0);
        pair_scales(t->d + 2, h1);
        tile_pair(q4, t->w[0], p0, p1);
        tile_pair(q4, t->w[1], p2, p3);
        tile_pair(q4, t->w[2], p4, p5);
        tile_pair(q4, t->w[3], p6, p7);
        p0 += bb, p1 += bb, p2 += bb, p3 += bb, p4 += bb, p5 += bb, p6 += bb, p7 += bb;
    }
}

MM static void tile_rows(int q4, MmTile *c, const uint8_t *const *row, uint64_t b0, uint64_t cb)
{
    if (q4)
        tile_rows_of(1, c, row, b0, cb);
    else
        tile_rows_of(0, c, row, b0, cb);
}

/* four vectors of four rows x four bytes (elements 4k..4k+3 of rows 0-3,
 * k = 2m, 2m + 1 for m = 0, 1) zipped into the four pair vectors of
 * elements 8m..8m+7 of rows 0, 1 (wa) and of rows 2, 3 (wb) */
MM_INLINE void zip_quad(int8x16_t *wa, int8x16_t *wb, int8x16_t p0, int8x16_t p1, int8x16_t p2, int8x16_t p3)
{
    int32x4_t v0 = vreinterpretq_s32_s8(p0), v1 = vreinterpretq_s32_s8(p1);
    int32x4_t v2 = vreinterpretq_s32_s8(p2), v3 = vreinterpretq_s32_s8(p3);
    wa[0] = vreinterpretq_s8_s32(vzip1q_s32(v0, v1)), wb[0] = vreinterpretq_s8_s32(vzip2q_s32(v0, v1));
    wa[1] = vreinterpretq_s8_s32(vzip1q_s32(v2, v3)), wb[1] = vreinterpretq_s8_s32(vzip2q_s32(v2, v3));
}

/* The cb blocks from b0 of the packed groups ga (rows 0-3) and gb (4-7)
 * into c: the groups' vectors of four rows x four bytes, zipped by pairs
 * of vectors into pairs of rows x eight bytes. */
MM static void tile_packed(int q4, MmTile *c, const uint8_t *ga, const uint8_t *gb, uint64_t b0, uint64_t cb)
{
    uint64_t gbb = KERN_PACK_ROWS * (q4 ? sizeof(BlockQ4_0) : sizeof(BlockQ8_0));
    for (uint64_t b = 0; b < cb; b++)
        for (int g = 0; g < 2; g++) {
            const uint8_t *p = (g ? gb : ga) + (b0 + b) * gbb;
            int8x16_t *wa = c[b].w[2 * g], *wb = c[b].w[2 * g + 1];
            pair_scales(c[b].d + 2 * g, vld1_u16((const uint16_t *)p));
            if (q4) {
                /* codes 4j..4j+3 (low nibbles) and 16 + 4j.. (high) of the four rows */
                int8x16_t l0, h0, l1, h1, l2, h2, l3, h3;
                q4_codes(p + 8, &l0, &h0);
                q4_codes(p + 24, &l1, &h1);
                q4_codes(p + 40, &l2, &h2);
                q4_codes(p + 56, &l3, &h3);
                zip_quad(wa, wb, l0, l1, l2, l3);
                zip_quad(wa + 2, wb + 2, h0, h1, h2, h3);
            } else {
                int8x16x4_t lo = vld1q_s8_x4((const int8_t *)p + 8), hi = vld1q_s8_x4((const int8_t *)p + 72);
                zip_quad(wa, wb, lo.val[0], lo.val[1], lo.val[2], lo.val[3]);
                zip_quad(wa + 2, wb + 2, hi.val[0], hi.val[1], hi.val[2], hi.val[3]);
            }
        }
}

/* A pair of rows by both pairs of tokens, one block: its four weight
 * vectors (v26-v29), four SMMLA each with the tokens' (v16-v19: tokens 0,
 * 1; v20-v23: 2, 3) into v8 and v9 from the starting values (MmAct.s0, one
 * load; x moves on by inc after it), then the float step with the rows'
 * scales (dw) times the tokens' (v24, v25) into fa and fb. */
#define MM_PAIR(dw, fa, fb, inc)                                                                                 \
    "ld1 {v26.16b-v29.16b}, [%[w]], #64\n\t"                                                                    \
    "ld1 {v8.4s, v9.4s}, [%[x]]" inc "\n\t"                                                                     \
    "smmla v8.4s, v26.16b, v16.16b\n\t"                                                                         \
    "smmla v9.4s, v26.16b, v20.16b\n\t"                                                                         \
    "smmla v8.4s, v27.16b, v17.16b\n\t"                                                                         \
    "smmla v9.4s, v27.16b, v21.16b\n\t"                                                                         \
    "smmla v8.4s, v28.16b, v18.16b\n\t"                                                                         \
    "smmla v9.4s, v28.16b, v22.16b\n\t"                                                                         \
    "smmla v8.4s, v29.16b, v19.16b\n\t"                                                                         \
    "smmla v9.4s, v29.16b, v23.16b\n\t"                                                                         \
    "scvtf v8.4s, v8.4s\n\t"                                                                                    \
    "scvtf v9.4s, v9.4s\n\t"                                                                                    \
    "fmul v14.4s, " dw ".4s, v24.4s\n\t"                                                                        \
    "fmul v15.4s, " dw ".4s, v25.4s\n\t"                                                                        \
    "fmla %[" fa "].4s, v8.4s, v14.4s\n\t"                                                                      \
    "fmla %[" fb "].4s, v9.4s, v15.4s\n\t"

/* Four tokens (their blocks qa) over the cb (>= 1) blocks of a tile (c);
 * the float sums of token t at o + t * os (eight rows), in (zero if first)
 * and out. They stay in registers over the blocks (f<i><j>: rows 2i, 2i+1
 * by tokens 2j, 2j+1); the block loop is assembly so that each load takes
 * four vectors. */
MM_INLINE void tile_quad(const MmTile *c, uint64_t cb, const MmAct *qa, float *o, uint64_t os, int first)
{
    float32x4_t r0a, r0b, r1a, r1b, r2a, r2b, r3a, r3b; /* r<h><t>: rows 4h.. of token 0, 1 (a, b) or 2, 3 (2, 3) */
    if (first) {
        r0a = r0b = r1a = r1b = r2a = r2b = r3a = r3b = vdupq_n_f32(0.0f);
    } else {
        r0a = vld1q_f32(o), r1a = vld1q_f32(o + 4), r0b = vld1q_f32(o + os), r1b = vld1q_f32(o + os + 4);
        r2a = vld1q_f32(o + 2 * os), r3a = vld1q_f32(o + 2 * os + 4);
        r2b = vld1q_f32(o + 3 * os), r3b = vld1q_f32(o + 3 * os + 4);
    }
    float32x4_t f00 = vzip1q_f32(r0a, r0b), f10 = vzip2q_f32(r0a, r0b), f20 = vzip1q_f32(r1a, r1b),
                f30 = vzip2q_f32(r1a, r1b);
    float32x4_t f01 = vzip1q_f32(r2a, r2b), f11 = vzip2q_f32(r2a, r2b), f21 = vzip1q_f32(r3a, r3b),
                f31 = vzip2q_f32(r3a, r3b);
    const MmTile *w = c;
    const MmAct *x = qa;
    __asm__ volatile("1:\n\t"
                     "ld1 {v10.4s-v13.4s}, [%[w]], #64\n\t" /* MmTile.d */
                     "ld1 {v24.4s, v25.4s}, [%[x]], #32\n\t" /* MmAct.d */
                     "ld1 {v16.16b-v19.16b}, [%[x]], #64\n\t"
                     "ld1 {v20.16b-v23.16b}, [%[x]], #64\n\t" MM_PAIR("v10", "f00", "f01", "")
                         MM_PAIR("v11", "f10", "f11", "") MM_PAIR("v12", "f20", "f21", "")
                             MM_PAIR("v13", "f30", "f31", ", #32") "subs %[n], %[n], #1\n\t"
                     "b.ne 1b\n\t"
                     : [w] "+r"(w), [x] "+r"(x), [n] "+r"(cb), [f00] "+w"(f00), [f01] "+w"(f01), [f10] "+w"(f10),
                       [f11] "+w"(f11), [f20] "+w"(f20), [f21] "+w"(f21), [f30] "+w"(f30), [f31] "+w"(f31)
                     :
                     : "v8", "v9", "v10", "v11", "v12", "v13", "v14", "v15", "v16", "v17", "v18", "v19", "v20", "v21",
                       "v22", "v23", "v24", "v25", "v26", "v27", "v28", "v29", "cc", "memory");
    vst1q_f32(o, vuzp1q_f32(f00, f10)), vst1q_f32(o + os, vuzp2q_f32(f00, f10));
    vst1q_f32(o + 4, vuzp1q_f32(f20, f30)), vst1q_f32(o + os + 4, vuzp2q_f32(f20, f30));
    vst1q_f32(o + 2 * os, vuzp1q_f32(f01, f11)), vst1q_f32(o + 3 * os, vuzp2q_f32(f01, f11));
    vst1q_f32(o + 2 * os + 4, vuzp1q_f32(f21, f31)), vst1q_f32(o + 3 * os + 4, vuzp2q_f32(f21, f31));
}

MM void kern_arm_mm_pass(int q4, int packed, uint64_t n, const uint8_t *w, uint64_t row_bytes, uint64_t r0, uint64_t r1,
                         const void *act, uint64_t act_stride, int nt, float *out, uint64_t out_stride)
{
    MmTile c[MM_KC];
    MmAct qa[MM_TOK / 4][MM_KC];
    uint64_t nb = n / QK8_0;
    int quads = (nt + 3) / 4;
    uint64_t start = packed ? r0 / 4 * 4 : r0;
    for (uint64_t b0 = 0; b0 < nb; b0 += MM_KC) {
        uint64_t cb = nb - b0 < MM_KC ? nb - b0 : MM_KC;
        for (int q = 0; q < quads; q++) {
            const KernQ8_0 *a[4];
            for (int t = 0; t < 4; t++) a[t] = (const KernQ8_0 *)neon_quad_token(act, act_stride, q, t, nt) + b0;
            for (uint64_t b = 0; b < cb; b++)
                for (int j = 0; j < 2; j++) {
                    const KernQ8_0 *u = a[2 * j] + b, *v = a[2 * j + 1] + b;
                    pair_rows(qa[q][b].x[j], vld1q_s8(u->q), vld1q_s8(u->q + 16), vld1q_s8(v->q), vld1q_s8(v->q + 16));
                    float d[4] = {u->d, v->d, u->d, v->d};
                    qa[q][b].d[j] = vld1q_f32(d);
                    int32_t su = q4 ? neon_q4_start(u->sum, 8) : 0, sv = q4 ? neon_q4_start(v->sum, 8) : 0;
                    int32_t s0[4] = {su, sv, su, sv};
                    qa[q][b].s0[j] = vld1q_s32(s0);
                }
        }
        for (uint64_t r = start; r < r1; r += MM_ROWS) {
            uint64_t lo = r0 > r ? r0 - r : 0, hi = r1 - r < MM_ROWS ? r1 - r : MM_ROWS;
            if (packed) {
                const uint8_t *ga = w + r * row_bytes; /* group r / 4 (4 rows of row_bytes each) */
                tile_packed(q4, c, ga, r + 4 < r1 ? ga + 4 * row_bytes : ga, b0, cb);
            } else {
                const uint8_t *row[MM_ROWS];
                for (int i = 0; i < MM_ROWS; i++) row[i] = w + (r + i < r1 ? r + i : r1 - 1) * row_bytes;
                tile_rows(q4, c, row, b0, cb);
            }
            for (int q = 0; q < quads; q++) {
                int tn = nt - 4 * q < 4 ? nt - 4 * q : 4;
                float *o = out + (uint64_t)(4 * q) * out_stride + r;
                if (lo == 0 && hi == MM_ROWS && tn == 4) { /* a whole tile: in place */
                    tile_quad(c, cb, qa[q], o, out_stride, b0 == 0);
                    continue;
                }
                float lanes[4][MM_ROWS]; /* a part: through lanes (rows and tokens outside computed and dropped) */
                memset(lanes, 0, sizeof lanes);
                if (b0)
                    for (int t = 0; t < tn; t++) memcpy(lanes[t] + lo, o + t * out_stride + lo, (hi - lo) * sizeof(float));
                tile_quad(c, cb, qa[q], lanes[0], MM_ROWS, 0);
                for (int t = 0; t < tn; t++) memcpy(o + t * out_stride + lo, lanes[t] + lo, (hi - lo) * sizeof(float));
            }
        }
    }
}

#else
/* nothing here on other targets (ISO C wants a declaration) */
typedef int kernels_arm_mm_empty;
#endif
