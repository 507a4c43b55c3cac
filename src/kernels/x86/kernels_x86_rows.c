/* kernels_x86_rows.c - matmul for Q4_0, Q4_K and Q6_K weights (the types
 * of Q4_0 and Q4_K_M files) that computes eight weight rows at once, one
 * row per vector lane (KernelSet.rows), with AVX2; and, where the CPU has
 * AVX-512 VNNI, thirty-two rows for prompts (Q8_0 too) — see the second
 * half of the file.
 *
 * Why: a one-row kernel must sum the products of a row and a token across
 * the vector lanes for every block, then convert and scale that sum — for
 * every token again. Here the eight rows' blocks are transposed first, so
 * that one vector holds elements 4g..4g+3 of all eight rows (group g). The
 * token's four activation bytes of group g, broadcast to every lane, then
 * multiply all eight rows at once, and the block's eight sums come out in
 * the lanes with no horizontal work. The transposition is done once per
 * tile and K-chunk (into a scratch of 9-12 KiB on the stack) and serves
 * every token of a prompt chunk. Measured, one thread, Qwen3-0.6B shapes,
 * 64-token prompt: Q4_0 71 -> 140 tok/s, Q4_K_M 78 -> 125; generation
 * within 3%. Q8_0 is not in the AVX2 half: the same scheme made its
 * prompts 40% faster but its generation 10% slower (the signed x signed
 * bytes need two sign operations per group and token).
 *
 * Determinism (the contract of kernels.h): lane r's result is
 *   acc = 0; for each block b in order: acc = fma(float(S_b), d_b * a_b, acc)
 * where S_b is the exact integer block sum (K-quants: per super-block, with
 * their second term for the mins). That depends on nothing but row
 * r and the token: not on the other lanes (other rows, or copies of the
 * last row when fewer than eight are left), not on how many tokens share
 * the call, not on the thread split. */
#include "kernels_x86.h"

#include <string.h>

#include "../../../port/port.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

/* once per chunk or tile, shared by the AVX2 and AVX-512 kernels: one copy */
#define AVX2_CALL static __attribute__((noinline, target("avx2,fma,f16c")))
#define UNROLL _Pragma("GCC unroll 8")

enum {
    ROWS = 8,     /* rows per tile: one per 32-bit lane */
    CHUNK = 32,   /* Q4_0 blocks per K-chunk transposed at once (1024 elements) */
    CHUNK_K = 4,  /* Q4_K super-blocks per K-chunk (1024 elements) */
    TOKENS = 64   /* tokens per pass over a transposed chunk (accumulators on the stack) */
};

/* kind: the weights' GgmlType (GGML_TYPE_Q4_0, Q4_K, Q6_K or Q8_0); packed:
 * 1 for Q8_0 and Q4_0 repacked in groups of four rows (kernels.h:
 * KERN_PACK_ROWS), whose tiles take group pointers where the others take
 * row pointers */

/* Where a Q8_0 or Q4_0 block's codes start (after its F16 scale). */
#define CODES offsetof(BlockQ8_0, qs)
_Static_assert(offsetof(BlockQ4_0, qs) == CODES, "Q4_0 and Q8_0 blocks: the scale, then the codes");

enum { PREFETCH_TILE_MAX = 12288, PREFETCH_IN_ROW = 1024 };

/* Decoding steps of a few tokens at once (pith serve --slots decodes one
 * token per active slot in one pass): up to FEW_TOKENS tokens take tiles
 * that stream as the one-token ones do (few8_tile, few_tile) rather than
 * the transposed chunks of prompts. */
enum { FEW_TOKENS = 8 };

/* One K-chunk of a Q4_0 or Q8_0 tile, transposed: w[AT(b, g, h, halves)]
 * holds elements 4g..4g+3 of block b of rows 8h..8h+7 (lane r = row 8h + r),
 * as unsigned bytes (Q4_0: the nibbles; Q8_0: code + 128); d[b * halves + h]
 * their scales as floats. An eight-row tile has one half; an AVX-512 tile
 * four, side by side, so one 64-byte load takes sixteen rows. */
enum { HALVES_MAX = 4 };
#define AT(b, g, h, halves) ((((b) * 8 + (g)) * (halves)) + (h))
typedef struct {
    __m256i w[CHUNK * 8 * HALVES_MAX];
    __m256 d[CHUNK * HALVES_MAX];
} Chunk;

/* K-quant chunks, with halves as Chunk: vectors per super-block s at
 * KW(s, j, g) (64 of them), KS(s, j) (8) and KS16(s, j) (16), floats at
 * s * halves + h.
 * Q4_K: the nibbles of sub-block j, group g in w[KW(s, j, g)]; sc[KS(s, j)]
 * sub-block j's 6-bit scale and mn[KS(s, j)] its 6-bit min, one as int32 and
 * the other in both int16 halves of each lane (so one multiply-add applies
 * it to a pair of sums): the AVX2 kernel pairs the scales (`pair_scales`),
 * the AVX-512 one the mins; d and dmin as floats. */
#define KW(s, j, g, h, halves) (((((s) * 8 + (j)) * 8 + (g)) * (halves)) + (h))
#define KS(s, j, h, halves) ((((s) * 8 + (j)) * (halves)) + (h))
#define KS16(s, j, h, halves) ((((s) * 16 + (j)) * (halves)) + (h))
typedef struct {
    __m256i w[CHUNK_K * 64 * HALVES_MAX];
    __m256i sc[CHUNK_K * 8 * HALVES_MAX], mn[CHUNK_K * 8 * HALVES_MAX];
    __m256 d[CHUNK_K * HALVES_MAX], dmin[CHUNK_K * HALVES_MAX];
} ChunkK;

/* Q6_K: the codes 0..63 (code - 32 is the value) of elements 32k + 4g.. in
 * w[KW(s, k, g)]; sc[KS16(s, j)] sub-block j's int8 scale, in both int16
 * halves of each lane (pair_scales) or as int32; scp[KS(s, i)] the pair
 * (sc[2i], sc[2i+1]). */
typedef struct {
    __m256i w[CHUNK_K * 64 * HALVES_MAX];
    __m256i sc[CHUNK_K * 16 * HALVES_MAX], scp[CHUNK_K * 8 * HALVES_MAX];
    __m256 d[CHUNK_K * HALVES_MAX];
} ChunkK6;

/* Both int16 halves of each lane = the low half of v. */
AVX2_INLINE __m256i pair16(__m256i v)
{
    return _mm256_or_si256(_mm256_and_si256(v, _mm256_set1_epi32(0xffff)), _mm256_slli_epi32(v, 16));
}

static uint16_t le16(const uint8_t *p)
{
    return (uint16_t)(p[0] | (p[1] << 8));
}

AVX2_INLINE __m256 scales8(const uint8_t *const *row, uint64_t off)
{
    __m128i h = _mm_setr_epi16((short)le16(row[0] + off), (short)le16(row[1] + off), (short)le16(row[2] + off),
                               (short)le16(row[3] + off), (short)le16(row[4] + off), (short)le16(row[5] + off),
                               (short)le16(row[6] + off), (short)le16(row[7] + off));
    return _mm256_cvtph_ps(h);
}

/* Four vectors [row r dwords 0..3 | row r+4 dwords 0..3] (r = 0..3) ->
 * out[j] = dword j of rows 0..7. */
AVX2_INLINE void transpose8x4(const __m256i *x, __m256i *out)
{
    __m256i t0 = _mm256_unpacklo_epi32(x[0], x[1]), t1 = _mm256_unpackhi_epi32(x[0], x[1]);
    __m256i t2 = _mm256_unpacklo_epi32(x[2], x[3]), t3 = _mm256_unpackhi_epi32(x[2], x[3]);
    out[0] = _mm256_unpacklo_epi64(t0, t2);
    out[1] = _mm256_unpackhi_epi64(t0, t2);
    out[2] = _mm256_unpacklo_epi64(t1, t3);
    out[3] = _mm256_unpackhi_epi64(t1, t3);
}

/* 16 bytes at p (row r) and q (row r + 4) as one vector. */
AVX2_INLINE __m256i pair128(const uint8_t *p, const uint8_t *q)
{
    return _mm256_inserti128_si256(_mm256_castsi128_si256(_mm_loadu_si128((const __m128i *)p)),
                                   _mm_loadu_si128((const __m128i *)q), 1);
}

/* Decoding one token streams the weights from memory: ask for the same
 * block of the next tile's rows (the next bytes each row pointer will
 * read), as the one-row kernels ask for the bytes ahead of theirs. */
AVX2_INLINE void prefetch_rows(const uint8_t *const *row, uint64_t off)
{
    UNROLL for (int r = 0; r < ROWS; r++) _mm_prefetch((const char *)row[r] + off, _MM_HINT_T0);
}

/* While one chunk is multiplied, the next one's bytes (the same rows' next
 * K-chunk, else the next tile's first) are fetched into L2, a share of the
 * rows before each pass of tokens: memory works while the multipliers do.
 * (Rows are row_bytes apart; past the matrix end a prefetch is harmless.) */
AVX2_INLINE void prefetch_next_chunk(const uint8_t *const *row, int tile, uint64_t row_bytes, uint64_t unit,
                                     uint64_t units, uint64_t u0, uint64_t chunk_units, int pass, int passes)
{
    uint64_t next = u0 + chunk_units;
    uint64_t off = next < units ? next * unit : (uint64_t)tile * row_bytes;
    uint64_t left = next < units ? units - next : units;
    uint64_t len = (left < chunk_units ? left : chunk_units) * unit;
    for (int r = tile * pass / passes; r < tile * (pass + 1) / passes; r++)
        for (uint64_t o = 0; o < len; o += 64) _mm_prefetch((const char *)row[r] + off + o, _MM_HINT_T1);
}

/* The same for a tile of repacked groups (group pointers; a block of a
 * group is KERN_PACK_ROWS rows' blocks): its lines shared evenly between
 * the passes, not whole groups (18 prefetches at once in every other pass
 * stalled the 32-row Q4_0 tile: 5% of its time). */
AVX2_INLINE void prefetch_next_chunk_groups(const uint8_t *const *grp, int groups, uint64_t group_bytes,
                                            uint64_t block_bytes, uint64_t nb, uint64_t b0, uint64_t chunk_blocks,
                                            int pass, int passes)
{
    uint64_t next = b0 + chunk_blocks;
    uint64_t off = next < nb ? next * block_bytes : (uint64_t)groups * group_bytes;
    uint64_t left = next < nb ? nb - next : nb;
    uint64_t lines = ((left < chunk_blocks ? left : chunk_blocks) * block_bytes + 63) / 64, all = (uint64_t)groups * lines;
    for (uint64_t i = all * (uint64_t)pass / (uint64_t)passes; i < all * (uint64_t)(pass + 1) / (uint64_t)passes; i++)
        _mm_prefetch((const char *)grp[i / lines] + off + 64 * (i % lines), _MM_HINT_T1);
}

/* Q4_0: 16 bytes of nibbles per block, byte j = element j (low nibble) and
 * element j + 16 (high). Transposing the raw bytes gives groups 0..3 from
 * the low nibbles and 4..7 from the high ones. */
AVX2_CALL void load_q4_0(Chunk *c, int halves, int h, const uint8_t *const *row, uint64_t b0, uint64_t nb,
                           uint64_t ahead)
{
    const __m256i low = _mm256_set1_epi8(15);
    for (uint64_t b = 0; b < nb; b++) {
        uint64_t off = (b0 + b) * sizeof(BlockQ4_0), qs = off + offsetof(BlockQ4_0, qs);
        prefetch_rows(row, off + ahead);
        __m256i x[4], t[4];
        UNROLL for (int r = 0; r < 4; r++) x[r] = pair128(row[r] + qs, row[r + 4] + qs);
        transpose8x4(x, t);
        UNROLL for (int j = 0; j < 4; j++) {
            c->w[AT(b, j, h, halves)] = _mm256_and_si256(t[j], low);
            c->w[AT(b, j + 4, h, halves)] = _mm256_and_si256(_mm256_srli_epi16(t[j], 4), low);
        }
        c->d[b * halves + h] = scales8(row, off);
    }
}

/* Q8_0: 32 signed codes per block, stored plus 128 as unsigned bytes (the
 * VNNI multiply takes one unsigned operand; the sums subtract 128 times
 * the activation's code sum). */
AVX2_CALL void load_q8_0(Chunk *c, int halves, int h, const uint8_t *const *row, uint64_t b0, uint64_t nb,
                           uint64_t ahead)
{
    const __m256i bias = _mm256_set1_epi8((char)0x80);
    for (uint64_t b = 0; b < nb; b++) {
        uint64_t off = (b0 + b) * sizeof(BlockQ8_0);
        prefetch_rows(row, off + ahead);
        UNROLL for (int k = 0; k < 2; k++) {
            __m256i x[4], t[4];
            uint64_t qs = off + offsetof(BlockQ8_0, qs) + 16 * k;
            UNROLL for (int r = 0; r < 4; r++) x[r] = pair128(row[r] + qs, row[r + 4] + qs);
            transpose8x4(x, t);
            UNROLL for (int j = 0; j < 4; j++) c->w[AT(b, 4 * k + j, h, halves)] = _mm256_xor_si256(t[j], bias);
        }
        c->d[b * halves + h] = scales8(row, off);
    }
}

/* Q8_0 or Q4_0 repacked (kernels.h: KERN_PACK_ROWS): the eight rows are the
 * groups at ga and gb, whose vector g (16 bytes) holds dword g of their four
 * rows' codes (Q4_0: nibbles, elements 4g.. low and 16 + 4g.. high), so two
 * loads give the transposed vector that load_q8_0 / load_q4_0 shuffle out of
 * eight rows, and two the eight scales. */
AVX2_INLINE void load_packed(int q4, Chunk *c, int halves, int h, const uint8_t *ga, const uint8_t *gb, uint64_t b0,
                             uint64_t nb, uint64_t ahead)
{
    const __m256i bias = _mm256_set1_epi8((char)0x80), low = _mm256_set1_epi8(15);
    const uint64_t bb = KERN_PACK_ROWS * (q4 ? sizeof(BlockQ4_0) : sizeof(BlockQ8_0));
    for (uint64_t b = 0; b < nb; b++) {
        uint64_t off = (b0 + b) * bb;
        UNROLL for (int l = 0; l < 3; l++) {
            _mm_prefetch((const char *)ga + off + ahead + 64 * l, _MM_HINT_T0);
            _mm_prefetch((const char *)gb + off + ahead + 64 * l, _MM_HINT_T0);
        }
        if (q4)
            UNROLL for (int g = 0; g < 4; g++) {
                __m256i x = pair128(ga + off + 8 + 16 * g, gb + off + 8 + 16 * g);
                c->w[AT(b, g, h, halves)] = _mm256_and_si256(x, low);
                c->w[AT(b, g + 4, h, halves)] = _mm256_and_si256(_mm256_srli_epi16(x, 4), low);
            }
        else
            UNROLL for (int g = 0; g < 8; g++)
                c->w[AT(b, g, h, halves)] = _mm256_xor_si256(pair128(ga + off + 8 + 16 * g, gb + off + 8 + 16 * g), bias);
        c->d[b * halves + h] = _mm256_cvtph_ps(
            _mm_unpacklo_epi64(_mm_loadl_epi64((const __m128i *)(ga + off)), _mm_loadl_epi64((const __m128i *)(gb + off))));
    }
}

AVX2_CALL void load_q8_0_packed(Chunk *c, int halves, int h, const uint8_t *ga, const uint8_t *gb, uint64_t b0,
                                uint64_t nb, uint64_t ahead)
{
    load_packed(0, c, halves, h, ga, gb, b0, nb, ahead);
}

AVX2_CALL void load_q4_0_packed(Chunk *c, int halves, int h, const uint8_t *ga, const uint8_t *gb, uint64_t b0,
                                uint64_t nb, uint64_t ahead)
{
    load_packed(1, c, halves, h, ga, gb, b0, nb, ahead);
}

/* Q4_K super-block (144 bytes: d, dmin, 12 scale bytes, 128 bytes of
 * nibbles where bytes 32p..32p+31 hold sub-block 2p in their low nibbles
 * and 2p+1 in their high ones). */
AVX2_CALL void load_q4_k(ChunkK *c, int halves, int h_, int pair_scales, const uint8_t *const *row, uint64_t s0,
                           uint64_t ns, uint64_t ahead)
{
    const __m256i low = _mm256_set1_epi8(15), byte = _mm256_set1_epi32(0xff);
    for (uint64_t s = 0; s < ns; s++) {
        uint64_t off = (s0 + s) * sizeof(BlockQ4_K);
        UNROLL for (int k = 0; k < 3; k++) prefetch_rows(row, off + ahead + 64 * k);
        for (int p = 0; p < 4; p++) { /* not unrolled: size */
            UNROLL for (int h = 0; h < 2; h++) {
                __m256i x[4], t[4];
                UNROLL for (int r = 0; r < 4; r++)
                    x[r] = pair128(row[r] + off + offsetof(BlockQ4_K, qs) + 32 * p + 16 * h,
                                   row[r + 4] + off + offsetof(BlockQ4_K, qs) + 32 * p + 16 * h);
                transpose8x4(x, t);
                UNROLL for (int j = 0; j < 4; j++) {
                    c->w[KW(s, 2 * p, 4 * h + j, h_, halves)] = _mm256_and_si256(t[j], low);
                    c->w[KW(s, 2 * p + 1, 4 * h + j, h_, halves)] = _mm256_and_si256(_mm256_srli_epi16(t[j], 4), low);
                }
            }
        }
        /* the 12 scale bytes of each row as [sc0-3][sc4-7][m0-3][m4-7] (quant.c's layout) */
        __m256i x[4], t[4];
        uint32_t v[ROWS][4];
        for (int r = 0; r < ROWS; r++) {
            uint32_t u[3];
            memcpy(u, row[r] + off + offsetof(BlockQ4_K, scales), K_SCALE_SIZE);
            v[r][0] = u[0] & 0x3f3f3f3fu;
            v[r][1] = (u[2] & 0x0f0f0f0fu) | (((u[0] >> 6) & 0x03030303u) << 4);
            v[r][2] = u[1] & 0x3f3f3f3fu;
            v[r][3] = ((u[2] >> 4) & 0x0f0f0f0fu) | (((u[1] >> 6) & 0x03030303u) << 4);
        }
        UNROLL for (int r = 0; r < 4; r++) x[r] = pair128((const uint8_t *)v[r], (const uint8_t *)v[r + 4]);
        transpose8x4(x, t);
        UNROLL for (int j = 0; j < 8; j++) {
            __m256i sc = _mm256_and_si256(_mm256_srli_epi32(t[j / 4], 8 * (j % 4)), byte);
            __m256i mn = _mm256_and_si256(_mm256_srli_epi32(t[2 + j / 4], 8 * (j % 4)), byte);
            c->sc[KS(s, j, h_, halves)] = pair_scales ? pair16(sc) : sc;
            c->mn[KS(s, j, h_, halves)] = pair_scales ? mn : pair16(mn);
        }
        c->d[s * halves + h_] = scales8(row, off);
        c->dmin[s * halves + h_] = scales8(row, off + offsetof(BlockQ4_K, dmin));
    }
}

/* Q6_K super-block (210 bytes: ql[128] low nibbles, qh[64] high two
 * bits, int8 scales[16], f16 d), decoded per row into eight vectors of 32
 * codes in element order (quant.c's layout), then transposed. */
AVX2_CALL void load_q6_k(ChunkK6 *c, int halves, int h_, int pair_scales, const uint8_t *const *row, uint64_t s0,
                           uint64_t ns, uint64_t ahead)
{
    const __m256i m4 = _mm256_set1_epi8(15), m30 = _mm256_set1_epi8(0x30);
    for (uint64_t s = 0; s < ns; s++) {
        uint64_t off = (s0 + s) * sizeof(BlockQ6_K);
        UNROLL for (int k = 0; k < 4; k++) prefetch_rows(row, off + ahead + 64 * k);
        __m256i codes[ROWS][8];
        for (int r = 0; r < ROWS; r++) {
            const uint8_t *q = row[r] + off;
            UNROLL for (int h = 0; h < 2; h++) {
                const uint8_t *ql = q + offsetof(BlockQ6_K, ql) + 64 * h;
                __m256i ql0 = _mm256_loadu_si256((const __m256i *)ql);
                __m256i ql1 = _mm256_loadu_si256((const __m256i *)(ql + 32));
                __m256i qh = _mm256_loadu_si256((const __m256i *)(q + offsetof(BlockQ6_K, qh) + 32 * h));
                codes[r][4 * h + 0] = _mm256_or_si256(_mm256_and_si256(ql0, m4), _mm256_and_si256(_mm256_slli_epi16(qh, 4), m30));
                codes[r][4 * h + 1] = _mm256_or_si256(_mm256_and_si256(ql1, m4), _mm256_and_si256(_mm256_slli_epi16(qh, 2), m30));
                codes[r][4 * h + 2] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(ql0, 4), m4), _mm256_and_si256(qh, m30));
                codes[r][4 * h + 3] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(ql1, 4), m4),
                                                      _mm256_and_si256(_mm256_srli_epi16(qh, 2), m30));
            }
        }
        for (int k = 0; k < 8; k++) { /* not unrolled: size */
            /* rows r and r + 4 share a vector: low halves hold dwords 0..3 */
            UNROLL for (int h = 0; h < 2; h++) {
                __m256i x[4], t[4];
                UNROLL for (int r = 0; r < 4; r++)
                    x[r] = h == 0 ? _mm256_permute2x128_si256(codes[r][k], codes[r + 4][k], 0x20)
                                  : _mm256_permute2x128_si256(codes[r][k], codes[r + 4][k], 0x31);
                transpose8x4(x, t);
                UNROLL for (int j = 0; j < 4; j++) c->w[KW(s, k, 4 * h + j, h_, halves)] = t[j];
            }
        }
        __m256i x[4], t[4];
        uint64_t sco = off + offsetof(BlockQ6_K, scales);
        UNROLL for (int r = 0; r < 4; r++) x[r] = pair128(row[r] + sco, row[r + 4] + sco);
        transpose8x4(x, t); /* t[i]: scale bytes 4i..4i+3 of each row */
        UNROLL for (int j = 0; j < 16; j++) {
            __m256i v = _mm256_srai_epi32(_mm256_slli_epi32(t[j / 4], 24 - 8 * (j % 4)), 24); /* sign-extended */
            c->sc[KS16(s, j, h_, halves)] = pair_scales ? pair16(v) : v;
        }
        UNROLL for (int i = 0; i < 8; i++) {
            __m256i lo = _mm256_srai_epi32(_mm256_slli_epi32(t[i / 2], 24 - 16 * (i % 2)), 24);
            __m256i hi = _mm256_srai_epi32(_mm256_slli_epi32(t[i / 2], 16 - 16 * (i % 2)), 24);
            c->scp[KS(s, i, h_, halves)] = _mm256_or_si256(_mm256_and_si256(lo, _mm256_set1_epi32(0xffff)), _mm256_slli_epi32(hi, 16));
        }
        c->d[s * halves + h_] = scales8(row, off + offsetof(BlockQ6_K, d));
    }
}

AVX2_INLINE __m256i bcast4(const int8_t *p)
{
    int32_t v;
    memcpy(&v, p, 4);
    return _mm256_set1_epi32(v);
}

/* Block b of the eight rows against block b of nt tokens' activations
 * (nt a constant after inlining; act[t] = token t's blocks): exact integer
 * sums, then acc[t] = fma(float(sum), d_row * d_token, acc[t]). Tokens go
 * together so each weight vector is loaded once for all of them and their
 * dependency chains overlap. */
AVX2_INLINE void block_tokens(const Chunk *c, uint64_t b, const KernQ8_0 *const *act, int nt, __m256 *acc)
{
    const __m256i ones = _mm256_set1_epi16(1);
    __m256i s[2];
    UNROLL for (int t = 0; t < nt; t++) s[t] = _mm256_setzero_si256();
    _Pragma("GCC unroll 2") for (int g = 0; g < 8; g++) {
        __m256i w = c->w[AT(b, g, 0, 1)];
        /* nibbles in [0, 15] times codes in [-127, 127]: a pair is at most
         * 3810 in magnitude, eight groups' pairs 30480: int16 holds them */
        UNROLL for (int t = 0; t < nt; t++)
            s[t] = _mm256_add_epi16(s[t], _mm256_maddubs_epi16(w, bcast4(act[t][b].q + 4 * g)));
    }
    UNROLL for (int t = 0; t < nt; t++) {
        const KernQ8_0 *a = &act[t][b];
        /* code = n - 8: subtract 8 * (sum of the activation codes), wrapping like the quantizer's sum */
        __m256i sum = _mm256_sub_epi32(_mm256_madd_epi16(s[t], ones), _mm256_set1_epi32((int32_t)((uint32_t)a->sum * 8u)));
        acc[t] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(sum), _mm256_mul_ps(c->d[b], _mm256_set1_ps(a->d)), acc[t]);
    }
}

/* Super-block s of the eight rows against nt tokens' Q8_K blocks:
 *   S = sum_j sc_j * (sum of nibble x code over sub-block j)   (exact int32)
 *   M = sum_j m_j * (sum of the codes of sub-block j)           (exact int32)
 *   acc = fma(float(S), d * a_d, acc); acc = fnmadd(float(M), dmin * a_d, acc) */
AVX2_INLINE void superblock_tokens(const ChunkK *c, uint64_t s, const KernQ8_K *const *act, int nt, __m256 *acc)
{
    __m256i sum[2], msum[2];
    UNROLL for (int t = 0; t < nt; t++) sum[t] = msum[t] = _mm256_setzero_si256();
    for (int j = 0; j < 8; j++) { /* not unrolled: the binary stays small, the groups inside are */
        __m256i s16[2];
        UNROLL for (int t = 0; t < nt; t++) s16[t] = _mm256_setzero_si256();
        UNROLL for (int g = 0; g < 8; g++) {
            __m256i w = c->w[KW(s, j, g, 0, 1)];
            /* nibbles times codes: eight groups' pairs stay within 30480 */
            UNROLL for (int t = 0; t < nt; t++)
                s16[t] = _mm256_add_epi16(s16[t], _mm256_maddubs_epi16(w, bcast4(act[t][s].q + 32 * j + 4 * g)));
        }
        /* scale <= 63 times two sums <= 30480 each, eight sub-blocks: < 2^31 */
        UNROLL for (int t = 0; t < nt; t++) {
            sum[t] = _mm256_add_epi32(sum[t], _mm256_madd_epi16(s16[t], c->sc[KS(s, j, 0, 1)]));
            int codes = act[t][s].bsum[2 * j] + act[t][s].bsum[2 * j + 1];
            msum[t] = _mm256_add_epi32(msum[t], _mm256_mullo_epi32(c->mn[KS(s, j, 0, 1)], _mm256_set1_epi32(codes)));
        }
    }
    UNROLL for (int t = 0; t < nt; t++) {
        __m256 ad = _mm256_set1_ps(act[t][s].d);
        acc[t] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(sum[t]), _mm256_mul_ps(c->d[s], ad), acc[t]);
        acc[t] = _mm256_fnmadd_ps(_mm256_cvtepi32_ps(msum[t]), _mm256_mul_ps(c->dmin[s], ad), acc[t]);
    }
}

/* Q6_K super-block s against nt tokens:
 *   S = sum_j sc_j * (sum of code x a over sub-block j of 16)  (exact int32)
 *   M = sum_j sc_j * (sum of the a of sub-block j)               (exact int32)
 *   acc = fma(float(S - 32 M), d * a_d, acc) */
AVX2_INLINE void superblock_tokens6(const ChunkK6 *c, uint64_t s, const KernQ8_K *const *act, int nt, __m256 *acc)
{
    __m256i sum[2];
    UNROLL for (int t = 0; t < nt; t++) sum[t] = _mm256_setzero_si256();
    for (int k = 0; k < 8; k++) { /* not unrolled: the binary stays small, the groups inside are */
        UNROLL for (int q = 0; q < 4; q++) { /* two groups: 8 elements, half a sub-block */
            __m256i w0 = c->w[KW(s, k, 2 * q, 0, 1)], w1 = c->w[KW(s, k, 2 * q + 1, 0, 1)];
            __m256i scale = c->sc[KS16(s, 2 * k + q / 2, 0, 1)];
            UNROLL for (int t = 0; t < nt; t++) {
                const int8_t *a = act[t][s].q + 32 * k + 8 * q;
                /* codes <= 63 times |a| <= 127: two groups' pairs stay within 32004 */
                __m256i p = _mm256_add_epi16(_mm256_maddubs_epi16(w0, bcast4(a)), _mm256_maddubs_epi16(w1, bcast4(a + 4)));
                sum[t] = _mm256_add_epi32(sum[t], _mm256_madd_epi16(p, scale));
            }
        }
    }
    UNROLL for (int t = 0; t < nt; t++) {
        const KernQ8_K *a = &act[t][s];
        __m256i m = _mm256_setzero_si256();
        UNROLL for (int i = 0; i < 8; i++) {
            int32_t pair = (int32_t)(((uint32_t)(uint16_t)a->bsum[2 * i + 1] << 16) | (uint16_t)a->bsum[2 * i]);
            m = _mm256_add_epi32(m, _mm256_madd_epi16(c->scp[KS(s, i, 0, 1)], _mm256_set1_epi32(pair)));
        }
        __m256i total = _mm256_sub_epi32(sum[t], _mm256_slli_epi32(m, 5));
        acc[t] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(total), _mm256_mul_ps(c->d[s], _mm256_set1_ps(a->d)), acc[t]);
    }
}



/* Two tokens (ta and tb, which may be the same one: the odd token out of
 * a chunk goes twice rather than through a second copy of the code) over
 * the nb blocks (K-quants: super-blocks) of one transposed chunk starting
 * at block b0, accumulators kept in acc[t][]. */
AVX2_INLINE void chunk_tokens(int kind, const void *chunk, uint64_t b0, uint64_t nb, const void *act,
                              uint64_t act_stride, int ta, int tb, float (*acc)[ROWS])
{
    const int tok[2] = {ta, tb};
    const KernQ8_0 *a0[2];
    const KernQ8_K *ak[2];
    __m256 v[2];
    UNROLL for (int t = 0; t < 2; t++) {
        const uint8_t *a = (const uint8_t *)act + (uint64_t)tok[t] * act_stride;
        a0[t] = (const KernQ8_0 *)a + b0;
        ak[t] = (const KernQ8_K *)a + b0;
        v[t] = b0 == 0 ? _mm256_setzero_ps() : _mm256_loadu_ps(acc[tok[t]]);
    }
    for (uint64_t b = 0; b < nb; b++) {
        if (kind == GGML_TYPE_Q4_0) block_tokens(chunk, b, a0, 2, v);
        else if (kind == GGML_TYPE_Q4_K) superblock_tokens(chunk, b, ak, 2, v);
        else superblock_tokens6(chunk, b, ak, 2, v);
    }
    UNROLL for (int t = 0; t < 2; t++) _mm256_storeu_ps(acc[tok[t]], v[t]);
}

AVX2_CALL void tile_rows_k(int six, uint64_t n, const uint8_t *const *row, uint64_t row_bytes, uint64_t ahead,
                           uint64_t valid, const void *act, uint64_t act_stride, int nt, float *out, uint64_t out_stride)
{
    int passes = (nt + 1) / 2;
    union {
        ChunkK k4;
        ChunkK6 k6;
    } c;
    float acc[TOKENS][ROWS];
    uint64_t ns = n / QK_K;
    for (uint64_t s0 = 0; s0 < ns; s0 += CHUNK_K) {
        uint64_t cs = ns - s0 < CHUNK_K ? ns - s0 : CHUNK_K;
        if (six) load_q6_k(&c.k6, 1, 0, 1, row, s0, cs, ahead);
        else load_q4_k(&c.k4, 1, 0, 1, row, s0, cs, ahead);
        for (int t = 0; t < nt; t += 2) {
            int tb = t + 1 < nt ? t + 1 : t;
            prefetch_next_chunk(row, ROWS, row_bytes, six ? sizeof(BlockQ6_K) : sizeof(BlockQ4_K), ns, s0, CHUNK_K, t / 2, passes);
            if (six) chunk_tokens(GGML_TYPE_Q6_K, &c.k6, s0, cs, act, act_stride, t, tb, acc);
            else chunk_tokens(GGML_TYPE_Q4_K, &c.k4, s0, cs, act, act_stride, t, tb, acc);
        }
    }
    for (int t = 0; t < nt; t++) memcpy(out + (uint64_t)t * out_stride, acc[t], valid * sizeof(float));
}

/* Eight vectors of eight int32 partial sums -> one vector of their totals
 * (lane r = total of p[r]). */
AVX2_INLINE __m256i reduce8(const __m256i *p)
{
    __m256i h0123 = _mm256_hadd_epi32(_mm256_hadd_epi32(p[0], p[1]), _mm256_hadd_epi32(p[2], p[3]));
    __m256i h4567 = _mm256_hadd_epi32(_mm256_hadd_epi32(p[4], p[5]), _mm256_hadd_epi32(p[6], p[7]));
    /* h0123 lanes: p0..p3 summed over their lanes 0-3, then over lanes 4-7 */
    return _mm256_add_epi32(_mm256_permute2x128_si256(h0123, h4567, 0x20),
                            _mm256_permute2x128_si256(h0123, h4567, 0x31));
}

/* 16 bytes of Q4_0 nibbles -> 32 unsigned codes in element order. */
AVX2_INLINE __m256i nibbles_row(const uint8_t *q)
{
    __m256i b = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)q));
    b = _mm256_srlv_epi64(b, _mm256_setr_epi64x(0, 0, 4, 4));
    return _mm256_and_si256(b, _mm256_set1_epi8(15));
}

/* Decoding one token: nothing to amortize a transposition, so each row's
 * products are summed within the row's own vector and the eight rows'
 * block sums reduced into the lanes afterwards: the same exact integers,
 * then the same float steps as block_tokens. Decoding is bound by memory.
 * The tile's rows lie next to each other (tile_bytes in all): the next
 * tile into L1 and the fourth after into L2, in address order, 144 bytes a
 * block. Measured, Q4_0, 2 threads: no prefetch 34 tok/s; each row's bytes
 * a tile ahead 58 (54-56 on a busier day); this 58-60 the same day. One
 * copy per type and instruction set: row_codes gives a row's block as 32
 * unsigned bytes (stored with an offset of 2^shift), row_dot sums their
 * products with the codes in fours. */
#define TILE_ONE_TOKEN(attr, name, row_codes, row_dot, block_bytes, shift)                                      \
    attr void name(uint64_t n, const uint8_t *const *row, uint64_t tile_bytes, uint64_t valid, const KernQ8_0 *a, \
                   float *out)                                                                                    \
    {                                                                                                             \
        __m256 acc = _mm256_setzero_ps();                                                                         \
        const uint64_t step = ROWS * (block_bytes); /* a block of the eight rows */                            \
        for (uint64_t b = 0, off = 0; b < n / QK8_0; b++, off += (block_bytes)) {                                 \
            UNROLL for (uint64_t l = 0; l < (step + 63) / 64; l++) {                                              \
                _mm_prefetch((const char *)row[0] + tile_bytes + step * b + 64 * l, _MM_HINT_T0);                 \
                _mm_prefetch((const char *)row[0] + 4 * tile_bytes + step * b + 64 * l, _MM_HINT_T1);             \
            }                                                                                                     \
            __m256i av = _mm256_loadu_si256((const __m256i *)a[b].q), p[ROWS];                                    \
            UNROLL for (int r = 0; r < ROWS; r++) p[r] = row_dot(row_codes(row[r] + off + CODES), av);          \
            __m256i s = _mm256_sub_epi32(reduce8(p), _mm256_set1_epi32((int32_t)((uint32_t)a[b].sum << (shift)))); \
            acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(s), _mm256_mul_ps(scales8(row, off), _mm256_set1_ps(a[b].d)), \
                                  acc);                                                                           \
        }                                                                                                         \
        float lanes[ROWS];                                                                                        \
        _mm256_storeu_ps(lanes, acc);                                                                             \
        memcpy(out, lanes, valid * sizeof(float));                                                                \
    }

AVX2_INLINE __m256i nibbles_dot(__m256i w, __m256i a)
{
    return _mm256_madd_epi16(_mm256_maddubs_epi16(w, a), _mm256_set1_epi16(1));
}
TILE_ONE_TOKEN(AVX2_CALL, tile_one_token, nibbles_row, nibbles_dot, sizeof(BlockQ4_0), 3)

/* A few tokens (2..FEW_TOKENS, pith serve --slots): the tile's blocks
 * transposed in registers as they stream in (the one-token kernel's order
 * and prefetch), then block_tokens' integer sums and float steps for each
 * token (the same bits), in passes of up to four tokens (tok[] may repeat
 * one: its results are stored twice, equal). */
AVX2_INLINE void few8_pass(uint64_t n, const uint8_t *const *row, uint64_t tile_bytes, uint64_t valid,
                           const uint8_t *act, uint64_t act_stride, const int *tok, int nt, float *out,
                           uint64_t out_stride)
{
    const __m256i low = _mm256_set1_epi8(15), ones = _mm256_set1_epi16(1);
    const uint64_t step = ROWS * sizeof(BlockQ4_0);
    const KernQ8_0 *at[4];
    __m256 acc[4];
    UNROLL for (int t = 0; t < nt; t++) {
        acc[t] = _mm256_setzero_ps();
        at[t] = (const KernQ8_0 *)(const void *)(act + (uint64_t)tok[t] * act_stride);
    }
    for (uint64_t b = 0, off = 0; b < n / QK4_0; b++, off += sizeof(BlockQ4_0)) {
        UNROLL for (uint64_t l = 0; l < (step + 63) / 64; l++) {
            _mm_prefetch((const char *)row[0] + tile_bytes + step * b + 64 * l, _MM_HINT_T0);
            _mm_prefetch((const char *)row[0] + 4 * tile_bytes + step * b + 64 * l, _MM_HINT_T1);
        }
        __m256i x[4], v[8];
        UNROLL for (int r = 0; r < 4; r++) x[r] = pair128(row[r] + off + CODES, row[r + 4] + off + CODES);
        transpose8x4(x, v);
        UNROLL for (int j = 0; j < 4; j++) {
            v[j + 4] = _mm256_and_si256(_mm256_srli_epi16(v[j], 4), low);
            v[j] = _mm256_and_si256(v[j], low);
        }
        __m256 d = scales8(row, off);
        UNROLL for (int t = 0; t < nt; t++) {
            const KernQ8_0 *a = at[t] + b;
            __m256i s = _mm256_setzero_si256();
            UNROLL for (int g = 0; g < 8; g++) s = _mm256_add_epi16(s, _mm256_maddubs_epi16(v[g], bcast4(a->q + 4 * g)));
            __m256i sum = _mm256_sub_epi32(_mm256_madd_epi16(s, ones), _mm256_set1_epi32((int32_t)((uint32_t)a->sum * 8u)));
            acc[t] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(sum), _mm256_mul_ps(d, _mm256_set1_ps(a->d)), acc[t]);
        }
    }
    UNROLL for (int t = 0; t < nt; t++) {
        float lanes[ROWS];
        _mm256_storeu_ps(lanes, acc[t]);
        memcpy(out + (uint64_t)tok[t] * out_stride, lanes, valid * sizeof(float));
    }
}

AVX2_CALL void few8_tile(uint64_t n, const uint8_t *const *row, uint64_t tile_bytes, uint64_t valid, const void *act,
                         uint64_t act_stride, int nt, float *out, uint64_t out_stride)
{
    for (int t0 = 0; t0 < nt; t0 += 4) {
        int k = nt - t0 < 4 ? nt - t0 : 4, tok[4];
        for (int t = 0; t < 4; t++) tok[t] = t0 + (t < k ? t : k - 1);
        if (k == 4) few8_pass(n, row, tile_bytes, valid, act, act_stride, tok, 4, out, out_stride);
        else if (k == 3) few8_pass(n, row, tile_bytes, valid, act, act_stride, tok, 3, out, out_stride);
        else few8_pass(n, row, tile_bytes, valid, act, act_stride, tok, 2, out, out_stride);
    }
}

AVX2_INLINE void tile_rows(uint64_t n, const uint8_t *const *row, uint64_t row_bytes, uint64_t ahead, uint64_t valid,
                           const void *act, uint64_t act_stride, int nt, float *out, uint64_t out_stride)
{
    int passes = (nt + 1) / 2;
    if (nt == 1) {
        tile_one_token(n, row, ROWS * row_bytes, valid, act, out);
        return;
    }
    if (nt <= FEW_TOKENS) {
        few8_tile(n, row, ROWS * row_bytes, valid, act, act_stride, nt, out, out_stride);
        return;
    }
    Chunk c;
    float acc[TOKENS][ROWS];
    uint64_t nb = n / QK4_0;
    for (uint64_t b0 = 0; b0 < nb; b0 += CHUNK) {
        uint64_t cb = nb - b0 < CHUNK ? nb - b0 : CHUNK;
        load_q4_0(&c, 1, 0, row, b0, cb, ahead);
        for (int t = 0; t < nt; t += 2) {
            prefetch_next_chunk(row, ROWS, row_bytes, sizeof(BlockQ4_0), nb, b0, CHUNK, t / 2, passes);
            chunk_tokens(GGML_TYPE_Q4_0, &c, b0, cb, act, act_stride, t, t + 1 < nt ? t + 1 : t, acc);
        }
    }
    for (int t = 0; t < nt; t++) memcpy(out + (uint64_t)t * out_stride, acc[t], valid * sizeof(float));
}

/* The frame: tiles of eight rows (the last padded with copies of the last
 * row, whose lanes are not stored), tokens in passes of at most TOKENS. */
AVX2_CALL void rows_frame(int kind, uint64_t n, const uint8_t *w, uint64_t row_bytes, uint64_t nrows,
                            const void *act, uint64_t act_stride, int nt, float *out, uint64_t out_stride)
{
    for (uint64_t r0 = 0; r0 < nrows; r0 += ROWS) {
        const uint8_t *row[ROWS];
        for (uint64_t r = 0; r < ROWS; r++) row[r] = w + (r0 + r < nrows ? r0 + r : nrows - 1) * row_bytes;
        uint64_t valid = nrows - r0 < ROWS ? nrows - r0 : ROWS;
        /* prefetch: the next tile's rows when they are near, else ahead in each row */
        uint64_t ahead = ROWS * row_bytes <= PREFETCH_TILE_MAX ? ROWS * row_bytes : PREFETCH_IN_ROW;
        for (int t0 = 0; t0 < nt; t0 += TOKENS) {
            const uint8_t *a = (const uint8_t *)act + (uint64_t)t0 * act_stride;
            int k = nt - t0 < TOKENS ? nt - t0 : TOKENS;
            if (kind == GGML_TYPE_Q4_K || kind == GGML_TYPE_Q6_K)
                tile_rows_k(kind == GGML_TYPE_Q6_K, n, row, row_bytes, ahead, valid, a, act_stride, k,
                            out + (uint64_t)t0 * out_stride + r0, out_stride);
            else
                tile_rows(n, row, row_bytes, ahead, valid, a, act_stride, k,
                          out + (uint64_t)t0 * out_stride + r0, out_stride);
        }
    }
}

/* K-quants: with a super-block of 256, the one-row kernels of
 * kernels_x86.c reduce each exact super-block sum with one horizontal add
 * and then take the same float steps as the lanes here: for one or two
 * tokens they are faster (no transposition to amortize) and give the same
 * bits. */
enum { K_ROWS_MIN_TOKENS = 3 };

static void rows_by_dot(uint32_t type, uint64_t n, const uint8_t *w, uint64_t row_bytes, uint64_t nrows,
                        const void *act, uint64_t act_stride, int nt, float *out, uint64_t out_stride)
{
    KernDotFn dot = kern_x86()->dot[type];
    for (uint64_t r = 0; r < nrows; r++) dot(n, w + r * row_bytes, act, act_stride, nt, out + r, out_stride);
}

/* The entries, one per type (KernRowsFn has no type argument); K-quants
 * of fewer than kmin tokens go row by row, except one token where the
 * frame has its own kernel (one: AVX-512). */
#define ROWS_ENTRY(attr, name, frame, type, kmin, one)                                                              \
    attr static void name(uint64_t n, const uint8_t *w, uint64_t row_bytes, uint64_t nrows, const void *act,      \
                          uint64_t act_stride, int nt, float *out, uint64_t out_stride)                           \
    {                                                                                                             \
        if ((type == GGML_TYPE_Q4_K || type == GGML_TYPE_Q6_K) && nt < (kmin) && !((one) && nt == 1))             \
            rows_by_dot(type, n, w, row_bytes, nrows, act, act_stride, nt, out, out_stride);                      \
        else frame(type, n, w, row_bytes, nrows, act, act_stride, nt, out, out_stride);                          \
    }
ROWS_ENTRY(AVX2, x86_rows_q4_0, rows_frame, GGML_TYPE_Q4_0, 0, 0)
ROWS_ENTRY(AVX2, x86_rows_q4_k, rows_frame, GGML_TYPE_Q4_K, K_ROWS_MIN_TOKENS, 0)
ROWS_ENTRY(AVX2, x86_rows_q6_k, rows_frame, GGML_TYPE_Q6_K, K_ROWS_MIN_TOKENS, 0)

/* ---- AVX-512 VNNI: sixteen rows per vector, two vectors per tile ----------
 * Prompt chunks take 32-row tiles: the same transposed groups, eight-row
 * halves side by side, and one VNNI instruction (unsigned weight bytes
 * times signed activation bytes, four products summed into each 32-bit
 * lane) where AVX2 needs a multiply-add of bytes and a sum of int16s. Two
 * row vectors share each broadcast activation (a tile of 16 rows and eight
 * tokens per pass measured 5-15% slower: one load per multiply). The
 * integers are the same exact block sums and the float steps the same per
 * lane, so the results equal the eight-row kernels' bit for bit
 * (tests/test_kernels_rows.c checks it); decoding one token keeps eight-row
 * tiles, bound by memory anyway. Measured on the 2-core Sapphire Rapids VM
 * (make bench, 2 threads, 64-token prompts): Q4_0 263 -> 380 tok/s and
 * Q8_0 134 -> 347 when this came, more after the changes around it. */
#define AVX512 __attribute__((target("avx2,fma,f16c,avx512f,avx512bw,avx512vl,avx512vnni")))
#define AVX512_INLINE static inline __attribute__((always_inline, target("avx2,fma,f16c,avx512f,avx512bw,avx512vl,avx512vnni")))
/* the tile and frame code, one copy for all types (the type is a run-time
 * argument outside the inner loops) */
#define AVX512_CALL static __attribute__((noinline, target("avx2,fma,f16c,avx512f,avx512bw,avx512vl,avx512vnni")))

enum {
    VECS = 2,               /* 512-bit vectors of rows per tile (16 rows each) */
    WIDE = 16 * VECS,       /* rows per tile */
    HALVES = 2 * VECS,      /* eight-row halves per tile */
    WIDE_TOKENS = 4,        /* tokens per pass over a chunk */
    WIDE_CHUNK = 16,        /* blocks per K-chunk (16 KiB of Q4_0/Q8_0 groups: L1) */
    WIDE_CHUNK_K = 2        /* K-quant super-blocks per K-chunk */
};

/* s[v][t] += the VNNI products of groups g0 .. g1-1 (four bytes each) of
 * row vector v (group g's vectors at w + g * HALVES: two halves each) with
 * token t's codes at q[t] + 4g: exact int32 sums in the lanes. */
AVX512_INLINE void dot_groups(const __m256i *w, const int8_t *const *q, int g0, int g1, __m512i (*s)[WIDE_TOKENS])
{
    UNROLL for (int g = g0; g < g1; g++) {
        __m512i wv[VECS];
        UNROLL for (int v = 0; v < VECS; v++) wv[v] = _mm512_loadu_si512((const void *)(w + g * HALVES + 2 * v));
        UNROLL for (int t = 0; t < WIDE_TOKENS; t++) {
            int32_t a4;
            memcpy(&a4, q[t] + 4 * g, 4);
            __m512i a = _mm512_set1_epi32(a4);
            UNROLL for (int v = 0; v < VECS; v++) s[v][t] = _mm512_dpbusd_epi32(s[v][t], wv[v], a);
        }
    }
}

/* Block b of a tile against WIDE_TOKENS tokens: exact integer sums
 * (weight bytes stored with an offset of 8 for Q4_0 or 128 for Q8_0:
 * subtract offset x the activation's code sum, `shift` = log2 of the
 * offset), then acc[t] = fma(float(sum), d_row * d_token, acc[t]). */
AVX512_INLINE void block_tokens_wide(const Chunk *c, uint64_t b, const KernQ8_0 *const *act, int shift,
                                     __m512 (*acc)[WIDE_TOKENS])
{
    __m512i s[VECS][WIDE_TOKENS];
    const int8_t *q[WIDE_TOKENS];
    UNROLL for (int v = 0; v < VECS; v++) UNROLL for (int t = 0; t < WIDE_TOKENS; t++) s[v][t] = _mm512_setzero_si512();
    UNROLL for (int t = 0; t < WIDE_TOKENS; t++) q[t] = act[t][b].q;
    dot_groups(&c->w[AT(b, 0, 0, HALVES)], q, 0, 8, s);
    UNROLL for (int t = 0; t < WIDE_TOKENS; t++) {
        const KernQ8_0 *a = &act[t][b];
        __m512i corr = _mm512_set1_epi32((int32_t)((uint32_t)a->sum << shift));
        __m512 ad = _mm512_set1_ps(a->d);
        UNROLL for (int v = 0; v < VECS; v++) {
            __m512 d = _mm512_loadu_ps((const float *)&c->d[b * HALVES + 2 * v]);
            __m512i sum = _mm512_sub_epi32(s[v][t], corr);
            acc[v][t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(sum), _mm512_mul_ps(d, ad), acc[v][t]);
        }
    }
}

/* Tokens tok[0 .. WIDE_TOKENS-1] (repeats allowed: a short pass repeats its last token)
 * over the nb blocks of one transposed chunk starting at block b0. */
AVX512_INLINE void chunk_tokens_wide(int shift, const Chunk *c, uint64_t b0, uint64_t nb, const void *act,
                                     uint64_t act_stride, const int *tok, float (*acc)[WIDE])
{
    const KernQ8_0 *a[WIDE_TOKENS];
    __m512 v[VECS][WIDE_TOKENS];
    UNROLL for (int t = 0; t < WIDE_TOKENS; t++) {
        a[t] = (const KernQ8_0 *)((const uint8_t *)act + (uint64_t)tok[t] * act_stride) + b0;
        UNROLL for (int r = 0; r < VECS; r++) v[r][t] = b0 == 0 ? _mm512_setzero_ps() : _mm512_loadu_ps(acc[tok[t]] + 16 * r);
    }
    for (uint64_t b = 0; b < nb; b++) block_tokens_wide(c, b, a, shift, v);
    UNROLL for (int t = 0; t < WIDE_TOKENS; t++) UNROLL for (int r = 0; r < VECS; r++) _mm512_storeu_ps(acc[tok[t]] + 16 * r, v[r][t]);
}

AVX512_CALL void tile_wide(int kind, int packed, uint64_t n, const uint8_t *const *row, uint64_t row_bytes, uint64_t ahead,
                        uint64_t valid, const void *act, uint64_t act_stride, int nt, float *out, uint64_t out_stride)
{
    Chunk c;
    float acc[TOKENS][WIDE];
    int shift = kind == GGML_TYPE_Q4_0 ? 3 : 7;
    uint64_t nb = n / QK8_0, block_bytes = kind == GGML_TYPE_Q4_0 ? sizeof(BlockQ4_0) : sizeof(BlockQ8_0);
    int passes = (nt + WIDE_TOKENS - 1) / WIDE_TOKENS;
    for (uint64_t b0 = 0; b0 < nb; b0 += WIDE_CHUNK) {
        uint64_t cb = nb - b0 < WIDE_CHUNK ? nb - b0 : WIDE_CHUNK;
        for (int h = 0; h < HALVES; h++) {
            if (packed && kind == GGML_TYPE_Q4_0) load_q4_0_packed(&c, HALVES, h, row[2 * h], row[2 * h + 1], b0, cb, ahead);
            else if (packed) load_q8_0_packed(&c, HALVES, h, row[2 * h], row[2 * h + 1], b0, cb, ahead);
            else if (kind == GGML_TYPE_Q8_0) load_q8_0(&c, HALVES, h, row + 8 * h, b0, cb, ahead);
            else load_q4_0(&c, HALVES, h, row + 8 * h, b0, cb, ahead);
        }
        for (int t = 0; t < nt; t += WIDE_TOKENS) {
            int tok[WIDE_TOKENS];
            for (int i = 0; i < WIDE_TOKENS; i++) tok[i] = t + i < nt ? t + i : nt - 1;
            if (packed)
                prefetch_next_chunk_groups(row, WIDE / KERN_PACK_ROWS, KERN_PACK_ROWS * row_bytes,
                                           KERN_PACK_ROWS * block_bytes, nb, b0, WIDE_CHUNK, t / WIDE_TOKENS, passes);
            else prefetch_next_chunk(row, WIDE, row_bytes, block_bytes, nb, b0, WIDE_CHUNK, t / WIDE_TOKENS, passes);
            chunk_tokens_wide(shift, &c, b0, cb, act, act_stride, tok, acc);
        }
    }
    for (int t = 0; t < nt; t++) memcpy(out + (uint64_t)t * out_stride, acc[t], valid * sizeof(float));
}

/* Q4_K super-block s of a tile against WIDE_TOKENS tokens: the integers S
 * and M of superblock_tokens, here
 *   S = sum_j sc_j * (VNNI sum of sub-block j), M by int16 pair products
 *   of the mins with the activation's 16-element code sums,
 * then the same two float steps. */
AVX512_INLINE void superblock_tokens_wide(const ChunkK *c, uint64_t s, const KernQ8_K *const *act,
                                          __m512 (*acc)[WIDE_TOKENS])
{
    __m512i sum[VECS][WIDE_TOKENS], msum[VECS][WIDE_TOKENS];
    UNROLL for (int v = 0; v < VECS; v++) UNROLL for (int t = 0; t < WIDE_TOKENS; t++) sum[v][t] = msum[v][t] = _mm512_setzero_si512();
    for (int j = 0; j < 8; j++) { /* not unrolled: size */
        __m512i s32[VECS][WIDE_TOKENS];
        const int8_t *q[WIDE_TOKENS];
        UNROLL for (int v = 0; v < VECS; v++) UNROLL for (int t = 0; t < WIDE_TOKENS; t++) s32[v][t] = _mm512_setzero_si512();
        UNROLL for (int t = 0; t < WIDE_TOKENS; t++) q[t] = act[t][s].q + 32 * j;
        dot_groups(&c->w[KW(s, j, 0, 0, HALVES)], q, 0, 8, s32);
        UNROLL for (int v = 0; v < VECS; v++) {
            __m512i sc = _mm512_loadu_si512((const void *)&c->sc[KS(s, j, 2 * v, HALVES)]);
            __m512i mn = _mm512_loadu_si512((const void *)&c->mn[KS(s, j, 2 * v, HALVES)]);
            UNROLL for (int t = 0; t < WIDE_TOKENS; t++) {
                int32_t codes; /* (bsum[2j], bsum[2j+1]): the sub-block's two halves */
                memcpy(&codes, &act[t][s].bsum[2 * j], 4);
                sum[v][t] = _mm512_add_epi32(sum[v][t], _mm512_mullo_epi32(s32[v][t], sc));
                msum[v][t] = _mm512_dpwssd_epi32(msum[v][t], mn, _mm512_set1_epi32(codes));
            }
        }
    }
    UNROLL for (int v = 0; v < VECS; v++) {
        __m512 d = _mm512_loadu_ps((const float *)&c->d[s * HALVES + 2 * v]);
        __m512 dmin = _mm512_loadu_ps((const float *)&c->dmin[s * HALVES + 2 * v]);
        UNROLL for (int t = 0; t < WIDE_TOKENS; t++) {
            __m512 ad = _mm512_set1_ps(act[t][s].d);
            acc[v][t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(sum[v][t]), _mm512_mul_ps(d, ad), acc[v][t]);
            acc[v][t] = _mm512_fnmadd_ps(_mm512_cvtepi32_ps(msum[v][t]), _mm512_mul_ps(dmin, ad), acc[v][t]);
        }
    }
}

/* Q6_K super-block s of a tile against WIDE_TOKENS tokens: S and M of
 * superblock_tokens6 (S by sub-blocks of 16), the same float step. */
AVX512_INLINE void superblock_tokens_wide6(const ChunkK6 *c, uint64_t s, const KernQ8_K *const *act,
                                           __m512 (*acc)[WIDE_TOKENS])
{
    __m512i sum[VECS][WIDE_TOKENS], m[VECS][WIDE_TOKENS];
    UNROLL for (int v = 0; v < VECS; v++) UNROLL for (int t = 0; t < WIDE_TOKENS; t++) sum[v][t] = m[v][t] = _mm512_setzero_si512();
    for (int k = 0; k < 8; k++) { /* not unrolled: size */
        UNROLL for (int half = 0; half < 2; half++) { /* sub-block 2k + half: groups 4 half .. 4 half + 3 */
            __m512i s32[VECS][WIDE_TOKENS];
            const int8_t *q[WIDE_TOKENS];
            UNROLL for (int v = 0; v < VECS; v++) UNROLL for (int t = 0; t < WIDE_TOKENS; t++) s32[v][t] = _mm512_setzero_si512();
            UNROLL for (int t = 0; t < WIDE_TOKENS; t++) q[t] = act[t][s].q + 32 * k;
            dot_groups(&c->w[KW(s, k, 0, 0, HALVES)], q, 4 * half, 4 * half + 4, s32);
            UNROLL for (int v = 0; v < VECS; v++) {
                __m512i sc = _mm512_loadu_si512((const void *)&c->sc[KS16(s, 2 * k + half, 2 * v, HALVES)]);
                UNROLL for (int t = 0; t < WIDE_TOKENS; t++) sum[v][t] = _mm512_add_epi32(sum[v][t], _mm512_mullo_epi32(s32[v][t], sc));
            }
        }
        UNROLL for (int v = 0; v < VECS; v++) {
            __m512i scp = _mm512_loadu_si512((const void *)&c->scp[KS(s, k, 2 * v, HALVES)]);
            UNROLL for (int t = 0; t < WIDE_TOKENS; t++) {
                int32_t pair;
                memcpy(&pair, &act[t][s].bsum[2 * k], 4);
                m[v][t] = _mm512_dpwssd_epi32(m[v][t], scp, _mm512_set1_epi32(pair));
            }
        }
    }
    UNROLL for (int v = 0; v < VECS; v++) {
        __m512 d = _mm512_loadu_ps((const float *)&c->d[s * HALVES + 2 * v]);
        UNROLL for (int t = 0; t < WIDE_TOKENS; t++) {
            __m512i total = _mm512_sub_epi32(sum[v][t], _mm512_slli_epi32(m[v][t], 5));
            acc[v][t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(total), _mm512_mul_ps(d, _mm512_set1_ps(act[t][s].d)), acc[v][t]);
        }
    }
}

/* K-quant tokens tok[0 .. WIDE_TOKENS-1] over the ns super-blocks of one chunk from s0. */
AVX512_INLINE void chunk_tokens_wide_k(int six, const void *c, uint64_t s0, uint64_t ns, const void *act,
                                       uint64_t act_stride, const int *tok, float (*acc)[WIDE])
{
    const KernQ8_K *a[WIDE_TOKENS];
    __m512 v[VECS][WIDE_TOKENS];
    UNROLL for (int t = 0; t < WIDE_TOKENS; t++) {
        a[t] = (const KernQ8_K *)((const uint8_t *)act + (uint64_t)tok[t] * act_stride) + s0;
        UNROLL for (int r = 0; r < VECS; r++) v[r][t] = s0 == 0 ? _mm512_setzero_ps() : _mm512_loadu_ps(acc[tok[t]] + 16 * r);
    }
    for (uint64_t s = 0; s < ns; s++) {
        if (six) superblock_tokens_wide6(c, s, a, v);
        else superblock_tokens_wide(c, s, a, v);
    }
    UNROLL for (int t = 0; t < WIDE_TOKENS; t++) UNROLL for (int r = 0; r < VECS; r++) _mm512_storeu_ps(acc[tok[t]] + 16 * r, v[r][t]);
}

AVX512_CALL void tile_wide_k(int six, uint64_t n, const uint8_t *const *row, uint64_t row_bytes, uint64_t ahead,
                             uint64_t valid, const void *act, uint64_t act_stride, int nt, float *out, uint64_t out_stride)
{
    int passes = (nt + WIDE_TOKENS - 1) / WIDE_TOKENS;
    union {
        ChunkK k4;
        ChunkK6 k6;
    } c;
    float acc[TOKENS][WIDE];
    uint64_t ns = n / QK_K;
    for (uint64_t s0 = 0; s0 < ns; s0 += WIDE_CHUNK_K) {
        uint64_t cs = ns - s0 < WIDE_CHUNK_K ? ns - s0 : WIDE_CHUNK_K;
        for (int h = 0; h < HALVES; h++) {
            if (six) load_q6_k(&c.k6, HALVES, h, 0, row + 8 * h, s0, cs, ahead);
            else load_q4_k(&c.k4, HALVES, h, 0, row + 8 * h, s0, cs, ahead);
        }
        for (int t = 0; t < nt; t += WIDE_TOKENS) {
            int tok[WIDE_TOKENS];
            for (int i = 0; i < WIDE_TOKENS; i++) tok[i] = t + i < nt ? t + i : nt - 1;
            prefetch_next_chunk(row, WIDE, row_bytes, six ? sizeof(BlockQ6_K) : sizeof(BlockQ4_K), ns, s0, WIDE_CHUNK_K, t / WIDE_TOKENS,
                                passes);
            chunk_tokens_wide_k(six, &c, s0, cs, act, act_stride, tok, acc);
        }
    }
    for (int t = 0; t < nt; t++) memcpy(out + (uint64_t)t * out_stride, acc[t], valid * sizeof(float));
}

/* The same with one VNNI instruction a row (the same integers); and for
 * Q8_0, whose codes + 128 are the unsigned bytes (measured, one thread:
 * 20.3 tok/s with each row's bytes a tile ahead, 22.4 with the in-order
 * prefetch, as the one-row AVX2 kernel that served Q8_0 before; the L2
 * distance 2 -> 4 tiles gave 2 threads +1.5%). */
AVX512_INLINE __m256i bytes_dot_vnni(__m256i w, __m256i a)
{
    return _mm256_dpbusd_epi32(_mm256_setzero_si256(), w, a);
}
AVX2_INLINE __m256i q8_0_codes(const uint8_t *p)
{
    return _mm256_xor_si256(_mm256_loadu_si256((const __m256i *)p), _mm256_set1_epi8((char)0x80));
}
TILE_ONE_TOKEN(AVX512_CALL, tile_one_token_vnni, nibbles_row, bytes_dot_vnni, sizeof(BlockQ4_0), 3)
TILE_ONE_TOKEN(AVX512_INLINE, tile_one_token_q8_0, q8_0_codes, bytes_dot_vnni, sizeof(BlockQ8_0), 7)

/* ---- one token of Q4_K or Q6_K: a super-block in four 512-bit vectors ----
 * The one-row AVX2 kernels (kernels_x86.c) spend two instructions per 32
 * codes on the products and as many again on unpacking. Here each vector
 * holds 64 codes in element order (so the activations load as they lie):
 * codes times activation bytes into int16 pairs, then times the sub-block
 * scales (vpermw places them) and summed into int32 by one VNNI
 * instruction (vpdpwssd). Eight rows per tile; their exact sums S (and
 * Q4_K's M) are reduced into the lanes, then each lane takes the one-row
 * kernels' float steps: the same bits. Measured (tests/tools/matbench, one
 * thread, the Qwen3-0.6B-shaped Q4_K_M file of llama-quantize, Sapphire
 * Rapids under load): the matmuls of a token 38.6-39.9 -> 33.4-33.7 ms,
 * Q4_K 22.3 -> 19.6, Q6_K 16.4 -> 13.8. */

/* Index vectors for vpermw: lane m (of 32 int16) takes element base + m / 2^sh. */
AVX512_INLINE __m512i scale_index(int base, int sh)
{
    const __m512i iota = _mm512_set_epi32(0x1f001e, 0x1d001c, 0x1b001a, 0x190018, 0x170016, 0x150014, 0x130012, 0x110010,
                                          0xf000e, 0xd000c, 0xb000a, 0x90008, 0x70006, 0x50004, 0x30002, 0x10000);
    return _mm512_add_epi16(_mm512_srli_epi16(iota, (unsigned)sh), _mm512_set1_epi16((short)base));
}

/* Q4_K, one row's super-block at p: S in eight int32 lanes (*s), and M (*m). */
AVX512_INLINE void q4_k_sums(const uint8_t *p, const KernQ8_K *a, __m256i *s, __m256i *m)
{
    uint32_t u[3];
    memcpy(u, p + offsetof(BlockQ4_K, scales), K_SCALE_SIZE); /* quant.c's Q4_K scale layout: bytes sc0..7 then m0..7 */
    uint32_t sl = u[0] & 0x3f3f3f3fu, ml = u[1] & 0x3f3f3f3fu;
    uint32_t sh = (u[2] & 0x0f0f0f0fu) | (((u[0] >> 6) & 0x03030303u) << 4);
    uint32_t mh = ((u[2] >> 4) & 0x0f0f0f0fu) | (((u[1] >> 6) & 0x03030303u) << 4);
    __m128i sm8 = _mm_setr_epi32((int)sl, (int)sh, (int)ml, (int)mh);
    __m512i sm16 = _mm512_castsi256_si512(_mm256_cvtepu8_epi16(sm8));
    __m512i acc = _mm512_setzero_si512();
    _Pragma("GCC unroll 4") for (int q = 0; q < 4; q++) {
        /* 32 bytes in both halves, the upper shifted: sub-blocks 2q and 2q+1 */
        __m512i v = _mm512_broadcast_i64x4(_mm256_loadu_si256((const __m256i *)(p + offsetof(BlockQ4_K, qs) + 32 * q)));
        v = _mm512_and_si512(_mm512_srlv_epi64(v, _mm512_set_epi64(4, 4, 4, 4, 0, 0, 0, 0)), _mm512_set1_epi8(15));
        /* nibbles times codes: pairs within 3810; times a 6-bit scale */
        __m512i p16 = _mm512_maddubs_epi16(v, _mm512_loadu_si512(a->q + 64 * q));
        acc = _mm512_dpwssd_epi32(acc, p16, _mm512_permutexvar_epi16(scale_index(2 * q, 4), sm16));
    }
    *s = _mm256_add_epi32(_mm512_castsi512_si256(acc), _mm512_extracti64x4_epi64(acc, 1));
    __m256i mins = _mm256_cvtepu8_epi16(
        _mm_shuffle_epi8(sm8, _mm_setr_epi8(8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13, 14, 14, 15, 15)));
    *m = _mm256_madd_epi16(_mm256_loadu_si256((const __m256i *)a->bsum), mins);
}

/* Q6_K, one row's super-block at p: S - 32 M (codes 0..63 stand for -32..31)
 * in eight int32 lanes. */
AVX512_INLINE __m256i q6_k_sums(const uint8_t *p, const KernQ8_K *a)
{
    const __m512i m4 = _mm512_set1_epi8(15), m30 = _mm512_set1_epi8(0x30);
    __m256i sc16 = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(p + offsetof(BlockQ6_K, scales))));
    __m512i sc = _mm512_castsi256_si512(sc16), acc = _mm512_setzero_si512();
    _Pragma("GCC unroll 2") for (int h = 0; h < 2; h++) {
        /* elements 128h + 0..63: the low nibbles of ql, high bits 0-1 (low
         * half) and 2-3 (upper half) of qh; + 64..127: the high nibbles, bits 4-5 and 6-7 */
        __m512i l = _mm512_loadu_si512(p + offsetof(BlockQ6_K, ql) + 64 * h);
        __m512i qh = _mm512_broadcast_i64x4(_mm256_loadu_si256((const __m256i *)(p + offsetof(BlockQ6_K, qh) + 32 * h)));
        __m512i w0 = _mm512_or_si512(_mm512_and_si512(l, m4),
                                     _mm512_and_si512(_mm512_sllv_epi64(qh, _mm512_set_epi64(2, 2, 2, 2, 4, 4, 4, 4)), m30));
        __m512i w1 = _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi16(l, 4), m4),
                                     _mm512_and_si512(_mm512_srlv_epi64(qh, _mm512_set_epi64(2, 2, 2, 2, 0, 0, 0, 0)), m30));
        /* codes <= 63 times |a| <= 127: pairs within 16002; times an int8 scale */
        acc = _mm512_dpwssd_epi32(acc, _mm512_maddubs_epi16(w0, _mm512_loadu_si512(a->q + 128 * h)),
                                  _mm512_permutexvar_epi16(scale_index(8 * h, 3), sc));
        acc = _mm512_dpwssd_epi32(acc, _mm512_maddubs_epi16(w1, _mm512_loadu_si512(a->q + 128 * h + 64)),
                                  _mm512_permutexvar_epi16(scale_index(8 * h + 4, 3), sc));
    }
    __m256i s = _mm256_add_epi32(_mm512_castsi512_si256(acc), _mm512_extracti64x4_epi64(acc, 1));
    return _mm256_sub_epi32(s, _mm256_slli_epi32(_mm256_madd_epi16(_mm256_loadu_si256((const __m256i *)a->bsum), sc16), 5));
}

/* The tile, read in address order (row after row: tests/tools/kbench, one
 * thread, a 151936 x 1024 Q6_K matrix under load streamed at 12.1-12.4
 * GB/s so, 10.6 with the rows interleaved block by block as
 * TILE_ONE_TOKEN, 10.5-11.8 with the one-row AVX2 kernel), the bytes 2 KiB
 * ahead asked into L1 and 8 KiB ahead into L2, as the one-row kernels do. Each row's sums for up to ONE_K_CHUNK super-blocks are kept,
 * then per super-block reduced to one lane per row and the float steps of
 * x86_q4_k / x86_q6_k taken in the lanes: acc = fma(S, d * a_d, acc), for
 * Q4_K then acc = fnmadd(M, dmin * a_d, acc). */
enum { ONE_K_CHUNK = 16, ONE_K_AHEAD = 2048 };
AVX512_INLINE void one_token_k(int six, uint64_t n, const uint8_t *const *row, uint64_t valid, const KernQ8_K *a,
                               float *out)
{
    const uint64_t bb = six ? sizeof(BlockQ6_K) : sizeof(BlockQ4_K), ns = n / QK_K;
    __m256i sv[ONE_K_CHUNK][ROWS], mv[ONE_K_CHUNK][ROWS];
    __m256 acc = _mm256_setzero_ps();
    for (uint64_t s0 = 0; s0 < ns; s0 += ONE_K_CHUNK) {
        uint64_t cs = ns - s0 < ONE_K_CHUNK ? ns - s0 : ONE_K_CHUNK;
        _Pragma("GCC unroll 1") for (int r = 0; r < ROWS; r++) {
            const uint8_t *p = row[r] + s0 * bb;
            for (uint64_t s = 0; s < cs; s++, p += bb) {
                for (int l = 0; l < (six ? 4 : 3); l++) {
                    _mm_prefetch((const char *)p + ONE_K_AHEAD + 64 * l, _MM_HINT_T0);
                    _mm_prefetch((const char *)p + 4 * ONE_K_AHEAD + 64 * l, _MM_HINT_T1);
                }
                if (six) sv[s][r] = q6_k_sums(p, a + s0 + s);
                else q4_k_sums(p, a + s0 + s, &sv[s][r], &mv[s][r]);
            }
        }
        for (uint64_t s = 0; s < cs; s++) {
            uint64_t off = (s0 + s) * bb;
            __m256 ad = _mm256_set1_ps(a[s0 + s].d);
            if (six) {
                acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(reduce8(sv[s])), _mm256_mul_ps(scales8(row, off + offsetof(BlockQ6_K, d)), ad),
                                      acc);
            } else {
                acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(reduce8(sv[s])), _mm256_mul_ps(scales8(row, off), ad), acc);
                acc = _mm256_fnmadd_ps(_mm256_cvtepi32_ps(reduce8(mv[s])), _mm256_mul_ps(scales8(row, off + offsetof(BlockQ4_K, dmin)), ad),
                                       acc);
            }
        }
    }
    float lanes[ROWS];
    _mm256_storeu_ps(lanes, acc);
    memcpy(out, lanes, valid * sizeof(float));
}

AVX512_CALL void tile_one_token_q4_k(uint64_t n, const uint8_t *const *row, uint64_t valid, const KernQ8_K *a, float *out)
{
    one_token_k(0, n, row, valid, a, out);
}

AVX512_CALL void tile_one_token_q6_k(uint64_t n, const uint8_t *const *row, uint64_t valid, const KernQ8_K *a, float *out)
{
    one_token_k(1, n, row, valid, a, out);
}

/* ---- a few tokens: sixteen rows per vector, transposed in registers ----
 * pith serve --slots decodes one token per active slot in one step, so a
 * matmul sees 2..8 tokens. The weights must then stream from memory as for
 * one token (the eight-row tiles' order and prefetch), and each token must
 * cost little arithmetic: per block, the sixteen rows' groups are
 * transposed in registers (no scratch: four 16-byte loads per vector and
 * eight shuffles for a 16 x 4 transposition), then every token takes one
 * VNNI instruction per group for all sixteen rows. The integers are the
 * exact block sums and the float step per lane is the one of the other
 * kernels, so the bits are theirs. Measured (tests/tools/main_matbench.c,
 * one thread, Qwen3-0.6B shapes, Zen 5 VM): a step of 4 tokens cost 2.08x
 * one token's with the transposed prompt chunks, 1.18x with these (Q4_0;
 * Q8_0 1.89x -> 1.17x). */
enum { FEW_ROWS = 16, FEWK_TOKENS = 4 };

/* The 16 bytes at off of rows k, k + 4, k + 8, k + 12 in the four 128-bit lanes. */
AVX512_INLINE __m512i quad128(const uint8_t *const *row, int k, uint64_t off)
{
    __m512i v = _mm512_castsi128_si512(_mm_loadu_si128((const __m128i *)(row[k] + off)));
    v = _mm512_inserti32x4(v, _mm_loadu_si128((const __m128i *)(row[k + 4] + off)), 1);
    v = _mm512_inserti32x4(v, _mm_loadu_si128((const __m128i *)(row[k + 8] + off)), 2);
    return _mm512_inserti32x4(v, _mm_loadu_si128((const __m128i *)(row[k + 12] + off)), 3);
}

/* The 16 bytes at off of groups 0..3 (repacked: dword j of their rows 4q..4q+3) in the four 128-bit lanes. */
AVX512_INLINE __m512i groups128(const uint8_t *const *grp, uint64_t off)
{
    __m512i v = _mm512_castsi128_si512(_mm_loadu_si128((const __m128i *)(grp[0] + off)));
    v = _mm512_inserti32x4(v, _mm_loadu_si128((const __m128i *)(grp[1] + off)), 1);
    v = _mm512_inserti32x4(v, _mm_loadu_si128((const __m128i *)(grp[2] + off)), 2);
    return _mm512_inserti32x4(v, _mm_loadu_si128((const __m128i *)(grp[3] + off)), 3);
}

/* out[j] lane r = dword j of the 16 bytes at row[r] + off (r = 0..15). */
AVX512_INLINE void transpose16x4(const uint8_t *const *row, uint64_t off, __m512i *out)
{
    __m512i x0 = quad128(row, 0, off), x1 = quad128(row, 1, off), x2 = quad128(row, 2, off), x3 = quad128(row, 3, off);
    __m512i t0 = _mm512_unpacklo_epi32(x0, x1), t1 = _mm512_unpackhi_epi32(x0, x1);
    __m512i t2 = _mm512_unpacklo_epi32(x2, x3), t3 = _mm512_unpackhi_epi32(x2, x3);
    out[0] = _mm512_unpacklo_epi64(t0, t2);
    out[1] = _mm512_unpackhi_epi64(t0, t2);
    out[2] = _mm512_unpacklo_epi64(t1, t3);
    out[3] = _mm512_unpackhi_epi64(t1, t3);
}

/* Sixteen rows (row[], tile_bytes in all, the next tiles prefetched as the
 * one-token kernels do) against the nt tokens tok[] (nt a constant after
 * inlining; a token may repeat: its results are stored twice, equal). */
AVX512_INLINE void few_pass(int kind, int packed, uint64_t n, const uint8_t *const *row, uint64_t tile_bytes, uint64_t valid,
                            const uint8_t *act, uint64_t act_stride, const int *tok, int nt, float *out,
                            uint64_t out_stride)
{
    /* bb: a block's bytes in a row, or (repacked) in a group */
    const int q4 = kind == GGML_TYPE_Q4_0;
    const uint64_t bb = (packed ? KERN_PACK_ROWS : 1) * (q4 ? sizeof(BlockQ4_0) : sizeof(BlockQ8_0));
    const uint64_t step = (packed ? FEW_ROWS / KERN_PACK_ROWS : FEW_ROWS) * bb;
    const int shift = q4 ? 3 : 7;
    const KernQ8_0 *at[FEW_TOKENS];
    __m512 acc[FEW_TOKENS];
    /* the rows' scales by one gather a block (the rows' distances from row[0]
     * as its indices): sixteen two-byte loads into a vector cost more (the
     * matrices of a Qwen3-0.6B Q4_0 file, 4 tokens, one thread, Sapphire
     * Rapids: 4% less time, 17% in the cache; on Zen 5 it had measured no
     * faster) */
    int32_t gi[FEW_ROWS] = {0};
    for (int r = 0; r < FEW_ROWS && !packed; r++) gi[r] = (int32_t)(row[r] - row[0]);
    const __m512i gidx = _mm512_loadu_si512((const void *)gi);
    UNROLL for (int t = 0; t < nt; t++) {
        acc[t] = _mm512_setzero_ps();
        at[t] = (const KernQ8_0 *)(const void *)(act + (uint64_t)tok[t] * act_stride);
    }
    for (uint64_t b = 0, off = 0; b < n / QK8_0; b++, off += bb) {
        UNROLL for (uint64_t l = 0; l < (step + 63) / 64; l++) {
            _mm_prefetch((const char *)row[0] + tile_bytes + step * b + 64 * l, _MM_HINT_T0);
            _mm_prefetch((const char *)row[0] + 4 * tile_bytes + step * b + 64 * l, _MM_HINT_T1);
        }
        __m512i v[8];
        __m512 d = _mm512_setzero_ps();
        if (packed) { /* the four groups' vector g side by side: rows 0..15 in the lanes */
            if (q4)
                UNROLL for (int g = 0; g < 4; g++) {
                    __m512i x = groups128(row, off + 8 + 16 * (uint64_t)g);
                    v[g + 4] = _mm512_and_si512(_mm512_srli_epi16(x, 4), _mm512_set1_epi8(15));
                    v[g] = _mm512_and_si512(x, _mm512_set1_epi8(15));
                }
            else
                UNROLL for (int g = 0; g < 8; g++)
                    v[g] = _mm512_xor_si512(groups128(row, off + 8 + 16 * (uint64_t)g), _mm512_set1_epi8((char)0x80));
            int64_t s4[4];
            UNROLL for (int q = 0; q < 4; q++) memcpy(&s4[q], row[q] + off, 8);
            d = _mm512_cvtph_ps(_mm256_setr_epi64x(s4[0], s4[1], s4[2], s4[3]));
        } else if (kind == GGML_TYPE_Q8_0) {
            transpose16x4(row, off + CODES, v);
            transpose16x4(row, off + CODES + 16, v + 4);
            UNROLL for (int g = 0; g < 8; g++) v[g] = _mm512_xor_si512(v[g], _mm512_set1_epi8((char)0x80));
        } else {
            transpose16x4(row, off + CODES, v);
            UNROLL for (int g = 0; g < 4; g++) {
                v[g + 4] = _mm512_and_si512(_mm512_srli_epi16(v[g], 4), _mm512_set1_epi8(15));
                v[g] = _mm512_and_si512(v[g], _mm512_set1_epi8(15));
            }
        }
        if (!packed)
            d = _mm512_cvtph_ps(_mm512_cvtepi32_epi16(_mm512_i32gather_epi32(gidx, (const void *)(row[0] + off), 1)));
        UNROLL for (int t = 0; t < nt; t++) {
            const KernQ8_0 *a = at[t] + b;
            __m512i s0 = _mm512_setzero_si512(), s1 = _mm512_setzero_si512();
            UNROLL for (int g = 0; g < 8; g += 2) {
                int32_t a0, a1;
                memcpy(&a0, a->q + 4 * g, 4);
                memcpy(&a1, a->q + 4 * g + 4, 4);
                s0 = _mm512_dpbusd_epi32(s0, v[g], _mm512_set1_epi32(a0));
                s1 = _mm512_dpbusd_epi32(s1, v[g + 1], _mm512_set1_epi32(a1));
            }
            __m512i sum = _mm512_sub_epi32(_mm512_add_epi32(s0, s1), _mm512_set1_epi32((int32_t)((uint32_t)a->sum << shift)));
            acc[t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(sum), _mm512_mul_ps(d, _mm512_set1_ps(a->d)), acc[t]);
        }
    }
    UNROLL for (int t = 0; t < nt; t++) {
        float lanes[FEW_ROWS];
        _mm512_storeu_ps(lanes, acc[t]);
        memcpy(out + (uint64_t)tok[t] * out_stride, lanes, valid * sizeof(float));
    }
}

/* Q4_K, sixteen rows against nt tokens (a constant after inlining; tok[]
 * may repeat one), streaming as few_pass: per super-block one
 * transposition gives d|dmin and the twelve scale bytes of every row (the
 * scales then unpacked in the lanes), and each pair of sub-blocks two
 * more; the integers S and M and the two float steps are those of
 * superblock_tokens_wide. */
AVX512_INLINE void fewk4_pass(uint64_t n, const uint8_t *const *row, uint64_t tile_bytes, uint64_t valid,
                              const uint8_t *act, uint64_t act_stride, const int *tok, int nt, float *out,
                              uint64_t out_stride)
{
    const uint64_t step = FEW_ROWS * sizeof(BlockQ4_K);
    const __m512i low = _mm512_set1_epi8(15), b6 = _mm512_set1_epi32(0x3f3f3f3f), b4 = _mm512_set1_epi32(0x0f0f0f0f),
                  b2 = _mm512_set1_epi32(0x03030303), byte = _mm512_set1_epi32(0xff);
    const KernQ8_K *at[FEWK_TOKENS];
    __m512 acc[FEWK_TOKENS];
    UNROLL for (int t = 0; t < nt; t++) {
        acc[t] = _mm512_setzero_ps();
        at[t] = (const KernQ8_K *)(const void *)(act + (uint64_t)tok[t] * act_stride);
    }
    for (uint64_t sb = 0, off = 0; sb < n / QK_K; sb++, off += sizeof(BlockQ4_K)) {
        for (uint64_t l = 0; l < (step + 63) / 64; l++) {
            _mm_prefetch((const char *)row[0] + tile_bytes + step * sb + 64 * l, _MM_HINT_T0);
            _mm_prefetch((const char *)row[0] + 4 * tile_bytes + step * sb + 64 * l, _MM_HINT_T1);
        }
        __m512i h[4], sc[2], mn[2];
        transpose16x4(row, off, h); /* d|dmin, then the scale bytes as three dwords (quant.c's layout) */
        __m512 d = _mm512_cvtph_ps(_mm512_cvtepi32_epi16(h[0]));
        __m512 dmin = _mm512_cvtph_ps(_mm512_cvtepi32_epi16(_mm512_srli_epi32(h[0], 16)));
        sc[0] = _mm512_and_si512(h[1], b6);
        sc[1] = _mm512_or_si512(_mm512_and_si512(h[3], b4), _mm512_slli_epi32(_mm512_and_si512(_mm512_srli_epi32(h[1], 6), b2), 4));
        mn[0] = _mm512_and_si512(h[2], b6);
        mn[1] = _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi32(h[3], 4), b4),
                                _mm512_slli_epi32(_mm512_and_si512(_mm512_srli_epi32(h[2], 6), b2), 4));
        __m512i sum[FEWK_TOKENS], msum[FEWK_TOKENS];
        UNROLL for (int t = 0; t < nt; t++) sum[t] = msum[t] = _mm512_setzero_si512();
        for (int p = 0; p < 4; p++) { /* not unrolled: size */
            __m512i q[8];
            transpose16x4(row, off + offsetof(BlockQ4_K, qs) + 32 * p, q);
            transpose16x4(row, off + offsetof(BlockQ4_K, qs) + 16 + 32 * p, q + 4);
            UNROLL for (int half = 0; half < 2; half++) {
                int j = 2 * p + half;
                __m512i s_j = _mm512_and_si512(_mm512_srlv_epi32(sc[j / 4], _mm512_set1_epi32(8 * (j % 4))), byte);
                __m512i w[8];
                UNROLL for (int g = 0; g < 8; g++)
                    w[g] = half ? _mm512_and_si512(_mm512_srli_epi16(q[g], 4), low) : _mm512_and_si512(q[g], low);
                UNROLL for (int t = 0; t < nt; t++) {
                    const int8_t *a = at[t][sb].q + 32 * j;
                    __m512i s0 = _mm512_setzero_si512(), s1 = _mm512_setzero_si512();
                    UNROLL for (int g = 0; g < 8; g += 2) {
                        int32_t a0, a1;
                        memcpy(&a0, a + 4 * g, 4);
                        memcpy(&a1, a + 4 * g + 4, 4);
                        s0 = _mm512_dpbusd_epi32(s0, w[g], _mm512_set1_epi32(a0));
                        s1 = _mm512_dpbusd_epi32(s1, w[g + 1], _mm512_set1_epi32(a1));
                    }
                    sum[t] = _mm512_add_epi32(sum[t], _mm512_mullo_epi32(_mm512_add_epi32(s0, s1), s_j));
                }
            }
        }
        UNROLL for (int j = 0; j < 8; j++) {
            __m512i m = _mm512_and_si512(_mm512_srlv_epi32(mn[j / 4], _mm512_set1_epi32(8 * (j % 4))), byte);
            m = _mm512_or_si512(m, _mm512_slli_epi32(m, 16)); /* both int16 halves */
            UNROLL for (int t = 0; t < nt; t++) {
                int32_t codes;
                memcpy(&codes, &at[t][sb].bsum[2 * j], 4);
                msum[t] = _mm512_dpwssd_epi32(msum[t], m, _mm512_set1_epi32(codes));
            }
        }
        UNROLL for (int t = 0; t < nt; t++) {
            __m512 ad = _mm512_set1_ps(at[t][sb].d);
            acc[t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(sum[t]), _mm512_mul_ps(d, ad), acc[t]);
            acc[t] = _mm512_fnmadd_ps(_mm512_cvtepi32_ps(msum[t]), _mm512_mul_ps(dmin, ad), acc[t]);
        }
    }
    UNROLL for (int t = 0; t < nt; t++) {
        float lanes[FEW_ROWS];
        _mm512_storeu_ps(lanes, acc[t]);
        memcpy(out + (uint64_t)tok[t] * out_stride, lanes, valid * sizeof(float));
    }
}

/* nt = 2..FEW_TOKENS: passes of up to FEWK_TOKENS (the tile is in the
 * cache for the second), copies for 2 and 4 tokens (3 and 1 repeat one).
 * One token takes tile_one_token_q4_k. */
AVX512_CALL void fewk_tile(uint64_t n, const uint8_t *const *row, uint64_t tile_bytes, uint64_t valid, const void *act,
                           uint64_t act_stride, int nt, float *out, uint64_t out_stride)
{
    for (int t0 = 0; t0 < nt; t0 += FEWK_TOKENS) {
        int k = nt - t0 < FEWK_TOKENS ? nt - t0 : FEWK_TOKENS, tok[FEWK_TOKENS];
        for (int t = 0; t < FEWK_TOKENS; t++) tok[t] = t0 + (t < k ? t : k - 1);
        if (k > 2) fewk4_pass(n, row, tile_bytes, valid, act, act_stride, tok, 4, out, out_stride);
        else fewk4_pass(n, row, tile_bytes, valid, act, act_stride, tok, 2, out, out_stride);
    }
}

/* nt = 2..FEW_TOKENS tokens: copies for 2, 3, 4 and FEW_TOKENS (5..7
 * repeat their last token). One token takes tile_one_token_*: measured as
 * fast as this. */
AVX512_CALL void few_tile(int kind, int packed, uint64_t n, const uint8_t *const *row, uint64_t tile_bytes, uint64_t valid,
                          const void *act, uint64_t act_stride, int nt, float *out, uint64_t out_stride)
{
    int tok[FEW_TOKENS];
    for (int t = 0; t < FEW_TOKENS; t++) tok[t] = t < nt ? t : nt - 1;
    if (nt > 4) few_pass(kind, packed, n, row, tile_bytes, valid, act, act_stride, tok, FEW_TOKENS, out, out_stride);
    else if (nt == 4) few_pass(kind, packed, n, row, tile_bytes, valid, act, act_stride, tok, 4, out, out_stride);
    else if (nt == 3) few_pass(kind, packed, n, row, tile_bytes, valid, act, act_stride, tok, 3, out, out_stride);
    else few_pass(kind, packed, n, row, tile_bytes, valid, act, act_stride, tok, 2, out, out_stride);
}

/* Tiles of `tile` rows (the last padded with copies of the last row),
 * tokens in passes of at most TOKENS: 32-row tiles for prompts, sixteen
 * for 2..FEW_TOKENS tokens (Q4_0, Q8_0, Q4_K), eight for one token (every
 * type: Q6_K of two tokens goes row by row, see ROWS_ENTRY). */
AVX512_CALL void wide_frame(int kind, uint64_t n, const uint8_t *w, uint64_t row_bytes, uint64_t nrows,
                              const void *act, uint64_t act_stride, int nt, float *out, uint64_t out_stride)
{
    int few = nt <= FEW_TOKENS && (kind == GGML_TYPE_Q4_0 || kind == GGML_TYPE_Q8_0);
    int fewk = nt >= 2 && nt <= FEW_TOKENS && kind == GGML_TYPE_Q4_K;
    uint64_t tile = fewk ? FEW_ROWS : nt == 1 ? ROWS : few ? FEW_ROWS : WIDE;
    for (uint64_t r0 = 0; r0 < nrows; r0 += tile) {
        const uint8_t *row[WIDE];
        for (uint64_t r = 0; r < tile; r++) row[r] = w + (r0 + r < nrows ? r0 + r : nrows - 1) * row_bytes;
        uint64_t valid = nrows - r0 < tile ? nrows - r0 : tile;
        uint64_t ahead = tile * row_bytes <= PREFETCH_TILE_MAX ? tile * row_bytes : PREFETCH_IN_ROW;
        if (fewk) fewk_tile(n, row, tile * row_bytes, valid, act, act_stride, nt, out + r0, out_stride);
        else if (nt == 1 && kind == GGML_TYPE_Q8_0) tile_one_token_q8_0(n, row, tile * row_bytes, valid, act, out + r0);
        else if (nt == 1 && kind == GGML_TYPE_Q4_K) tile_one_token_q4_k(n, row, valid, act, out + r0);
        else if (nt == 1 && kind == GGML_TYPE_Q6_K) tile_one_token_q6_k(n, row, valid, act, out + r0);
        else if (nt == 1) tile_one_token_vnni(n, row, tile * row_bytes, valid, act, out + r0);
        else if (few) few_tile(kind, 0, n, row, tile * row_bytes, valid, act, act_stride, nt, out + r0, out_stride);
        else
            for (int t0 = 0; t0 < nt; t0 += TOKENS) {
                int k = nt - t0 < TOKENS ? nt - t0 : TOKENS;
                const uint8_t *a = (const uint8_t *)act + (uint64_t)t0 * act_stride;
                float *o = out + (uint64_t)t0 * out_stride + r0;
                if (kind == GGML_TYPE_Q4_K || kind == GGML_TYPE_Q6_K)
                    tile_wide_k(kind == GGML_TYPE_Q6_K, n, row, row_bytes, ahead, valid, a, act_stride, k, o, out_stride);
                else tile_wide(kind, 0, n, row, row_bytes, ahead, valid, a, act_stride, k, o, out_stride);
            }
    }
}

/* ---- Q8_0 and Q4_0 repacked (--load read) --------------------------------
 * kernels.h's layout (KERN_PACK_ROWS, the A76's): each group of four rows
 * holds, block by block, the four scales (8 bytes), then 8 (Q8_0) or 4
 * (Q4_0) vectors of 16 bytes, vector j = dword j of the four rows' codes
 * (nibbles). A tile's bytes are then read in address order, two groups at
 * a time for one token, and the loads need no transposition. Measured (a
 * 642 MB Q8_0 matrix of 1024 columns, a stand-alone copy of both kernels,
 * Sapphire Rapids, huge pages): one token streamed 15.0 GB/s with
 * TILE_ONE_TOKEN on the file's layout and 16.4 with this (29.8 -> 32.5 at
 * 2 threads); in L2, 26 -> 61 GB/s. */

/* Four int32 lanes per row of group A's and group B's sums (a: lanes
 * 4j + i = row i's products of dword j) -> eight lanes, rows A0..3, B0..3. */
AVX512_INLINE __m256i group_sums(__m512i a, __m512i b)
{
    __m512i s = _mm512_add_epi32(_mm512_shuffle_i64x2(a, b, 0x44), _mm512_shuffle_i64x2(a, b, 0xee));
    s = _mm512_add_epi32(s, _mm512_shuffle_i64x2(s, s, 0xb1));
    return _mm512_castsi512_si256(_mm512_shuffle_i64x2(s, s, 0x08));
}

/* One token, the eight rows of groups ga and gb: the block's activation
 * dwords spread to match (lanes 4j..4j+3 = dword j), exact block sums, then
 * TILE_ONE_TOKEN's float steps: the same bits. Q8_0: dwords 0-3 of the
 * codes in one load, 4-7 in the next; Q4_0: one load, elements 4j.. in the
 * low nibbles and 16 + 4j.. in the high ones. The bytes 1 KiB ahead are
 * asked into L1 and 8 KiB ahead into L2 (the stand-alone copy, Q8_0: 16.4
 * GB/s at one thread, 15.6-16.1 with L1 only at 1 or 2 KiB). */
enum { PACKED_L1_AHEAD = 1024, PACKED_L2_AHEAD = 8192 };
AVX512_INLINE void one_token_packed(int q4, uint64_t n, const uint8_t *ga, const uint8_t *gb, uint64_t valid,
                                    const KernQ8_0 *a, float *out)
{
    const uint64_t bb = KERN_PACK_ROWS * (q4 ? sizeof(BlockQ4_0) : sizeof(BlockQ8_0));
    const __m512i bias = _mm512_set1_epi8((char)0x80), low = _mm512_set1_epi8(15);
    const __m512i lo = _mm512_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3);
    const __m512i hi = _mm512_add_epi32(lo, _mm512_set1_epi32(4));
    __m256 acc = _mm256_setzero_ps();
    for (uint64_t b = 0; b < n / QK8_0; b++, ga += bb, gb += bb) {
        for (int l = 0; l < (q4 ? 2 : 3); l++) { /* the lines of a block, 72 or 136 bytes */
            _mm_prefetch((const char *)ga + PACKED_L1_AHEAD + 64 * l, _MM_HINT_T0);
            _mm_prefetch((const char *)gb + PACKED_L1_AHEAD + 64 * l, _MM_HINT_T0);
            _mm_prefetch((const char *)ga + PACKED_L2_AHEAD + 64 * l, _MM_HINT_T1);
            _mm_prefetch((const char *)gb + PACKED_L2_AHEAD + 64 * l, _MM_HINT_T1);
        }
        __m512i av = _mm512_castsi256_si512(_mm256_loadu_si256((const __m256i *)a[b].q));
        __m512i a0 = _mm512_permutexvar_epi32(lo, av), a1 = _mm512_permutexvar_epi32(hi, av);
        __m512i xa = _mm512_loadu_si512(ga + 8), xb = _mm512_loadu_si512(gb + 8), ya, yb;
        if (q4) {
            ya = _mm512_and_si512(_mm512_srli_epi16(xa, 4), low), xa = _mm512_and_si512(xa, low);
            yb = _mm512_and_si512(_mm512_srli_epi16(xb, 4), low), xb = _mm512_and_si512(xb, low);
        } else {
            ya = _mm512_xor_si512(_mm512_loadu_si512(ga + 72), bias), xa = _mm512_xor_si512(xa, bias);
            yb = _mm512_xor_si512(_mm512_loadu_si512(gb + 72), bias), xb = _mm512_xor_si512(xb, bias);
        }
        __m512i sa = _mm512_dpbusd_epi32(_mm512_dpbusd_epi32(_mm512_setzero_si512(), xa, a0), ya, a1);
        __m512i sb = _mm512_dpbusd_epi32(_mm512_dpbusd_epi32(_mm512_setzero_si512(), xb, a0), yb, a1);
        __m256i s = _mm256_sub_epi32(group_sums(sa, sb), _mm256_set1_epi32((int32_t)((uint32_t)a[b].sum << (q4 ? 3 : 7))));
        __m256 d = _mm256_cvtph_ps(_mm_unpacklo_epi64(_mm_loadl_epi64((const __m128i *)ga), _mm_loadl_epi64((const __m128i *)gb)));
        acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(s), _mm256_mul_ps(d, _mm256_set1_ps(a[b].d)), acc);
    }
    float lanes[ROWS];
    _mm256_storeu_ps(lanes, acc);
    memcpy(out, lanes, valid * sizeof(float));
}

/* Rows [r0, r1) of a repacked Q8_0 or Q4_0 matrix (w: its first row) as
 * KernPackedFunc: wide_frame's tiles, of whole groups from the one holding
 * r0, with group pointers (past r1's group the last one repeats). A first
 * tile that starts before r0 goes through `part`, so that only rows
 * [r0, r1) are written (another thread may own the others). */
AVX512_CALL void packed_frame(int kind, uint64_t n, const uint8_t *w, uint64_t row_bytes, uint64_t r0, uint64_t r1,
                              const void *act, uint64_t act_stride, int nt, float *out, uint64_t out_stride)
{
    const uint64_t group = KERN_PACK_ROWS * row_bytes, g_end = (r1 + KERN_PACK_ROWS - 1) / KERN_PACK_ROWS;
    int few = nt <= FEW_TOKENS;
    uint64_t tile = nt == 1 ? ROWS : few ? FEW_ROWS : WIDE;
    /* the next tile's group, or as far ahead in the group as wide_frame looks in a row */
    uint64_t ahead = tile * row_bytes <= PREFETCH_TILE_MAX ? tile * row_bytes : KERN_PACK_ROWS * PREFETCH_IN_ROW;
    float part[TOKENS * WIDE];
    for (uint64_t t0 = r0 / KERN_PACK_ROWS * KERN_PACK_ROWS; t0 < r1; t0 += tile) {
        const uint8_t *grp[WIDE / KERN_PACK_ROWS];
        for (uint64_t q = 0; q < tile / KERN_PACK_ROWS; q++) {
            uint64_t g = t0 / KERN_PACK_ROWS + q;
            grp[q] = w + (g < g_end ? g : g_end - 1) * group;
        }
        uint64_t skip = t0 < r0 ? r0 - t0 : 0, valid = r1 - t0 < tile ? r1 - t0 : tile;
        for (int k0 = 0; k0 < nt; k0 += TOKENS) {
            int k = nt - k0 < TOKENS ? nt - k0 : TOKENS;
            const uint8_t *a = (const uint8_t *)act + (uint64_t)k0 * act_stride;
            float *o = skip ? part : out + (uint64_t)k0 * out_stride + t0;
            uint64_t os = skip ? WIDE : out_stride;
            const KernQ8_0 *a1 = (const KernQ8_0 *)(const void *)a;
            if (nt == 1 && kind == GGML_TYPE_Q4_0) one_token_packed(1, n, grp[0], grp[1], valid, a1, o);
            else if (nt == 1) one_token_packed(0, n, grp[0], grp[1], valid, a1, o);
            else if (few) few_tile(kind, 1, n, grp, tile * row_bytes, valid, a, act_stride, k, o, os);
            else tile_wide(kind, 1, n, grp, row_bytes, ahead, valid, a, act_stride, k, o, os);
            for (int t = 0; skip && t < k; t++)
                memcpy(out + (uint64_t)(k0 + t) * out_stride + r0, part + (uint64_t)t * WIDE + skip,
                       (valid - skip) * sizeof(float));
        }
    }
}

#define PACKED_ENTRY(name, kind)                                                                               \
    AVX512 static void name(uint64_t n, const uint8_t *w, uint64_t row_bytes, uint64_t r0, uint64_t r1,         \
                            const void *act, uint64_t act_stride, int nt, float *out, uint64_t out_stride)      \
    {                                                                                                           \
        packed_frame(kind, n, w, row_bytes, r0, r1, act, act_stride, nt, out, out_stride);                      \
    }
PACKED_ENTRY(x86_packed_q8_0, GGML_TYPE_Q8_0)
PACKED_ENTRY(x86_packed_q4_0, GGML_TYPE_Q4_0)

ROWS_ENTRY(AVX512, x86_wide_q4_0, wide_frame, GGML_TYPE_Q4_0, 0, 0)
ROWS_ENTRY(AVX512, x86_wide_q8_0, wide_frame, GGML_TYPE_Q8_0, 0, 0)
ROWS_ENTRY(AVX512, x86_wide_q4_k, wide_frame, GGML_TYPE_Q4_K, 2, 1)
ROWS_ENTRY(AVX512, x86_wide_q6_k, wide_frame, GGML_TYPE_Q6_K, K_ROWS_MIN_TOKENS, 1)

int kern_x86_rows(KernRowsFn *rows, KernPackedFn *packed, int wide)
{
    const PortCpu *c = port_cpu();
    if (!(c->avx2 && c->fma && c->f16c)) return 0;
    rows[GGML_TYPE_Q4_0] = x86_rows_q4_0;
    rows[GGML_TYPE_Q4_K] = x86_rows_q4_k;
    rows[GGML_TYPE_Q6_K] = x86_rows_q6_k;
    if (!wide || !c->avx512vnni) return 0;
    rows[GGML_TYPE_Q4_0] = x86_wide_q4_0;
    rows[GGML_TYPE_Q8_0] = x86_wide_q8_0;
    rows[GGML_TYPE_Q4_K] = x86_wide_q4_k;
    rows[GGML_TYPE_Q6_K] = x86_wide_q6_k;
    packed[GGML_TYPE_Q8_0] = x86_packed_q8_0;
    packed[GGML_TYPE_Q4_0] = x86_packed_q4_0;
    return 1;
}

#else

int kern_x86_rows(KernRowsFn *rows, KernPackedFn *packed, int wide)
{
    (void)rows;
    (void)packed;
    (void)wide;
    return 0;
}

#endif
