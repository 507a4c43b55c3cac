/* kernels_x86.c - AVX2 + FMA + F16C kernels for x86-64.
 *
 * The file is compiled for the baseline x86-64 (SSE2) like everything
 * else; each function here carries __attribute__((target(...))), so the
 * instructions exist only in them and kern_x86() hands them out only when
 * port_cpu() reports avx2, fma and f16c (and the OS saves the YMM state).
 *
 * Integer work follows the reference exactly (same per-block integer sums);
 * only the float accumulation order differs: each token keeps 8 float lanes
 * that are summed at the end. Multi-token calls decode a weight block once
 * and apply it to every token; each token's own sequence of operations is
 * the same whatever nt is (the determinism contract of kernels.h). */
#include <stddef.h>
#include <string.h>

#include "../../../port/port.h"
#include "kernels_x86.h"
#include "../quant.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

/* Weights stream from memory once per token: asking for the bytes 2 KiB
 * ahead into L1 and 8 KiB ahead into L2 keeps more cache misses in flight
 * than the hardware prefetcher alone (measured on the 2-core VM, one
 * thread, Q8_0 generation: 10.7 tok/s without, 15.0 with the first, 17.8
 * with both). */
#define PREFETCH_AHEAD 2048
AVX2_INLINE void prefetch_lines(const uint8_t *p, int lines)
{
    for (int i = 0; i < lines; i++) {
        _mm_prefetch((const char *)p + PREFETCH_AHEAD + 64 * i, _MM_HINT_T0);
        _mm_prefetch((const char *)p + 4 * PREFETCH_AHEAD + 64 * i, _MM_HINT_T1);
    }
}

/* the token loops must unroll so the accumulators stay in registers */
#define UNROLL _Pragma("GCC unroll 8")

static uint16_t le16(const uint8_t *p)
{
    return (uint16_t)(p[0] | (p[1] << 8));
}

AVX2_INLINE float f16_scalar(const uint8_t *p)
{
    return _cvtsh_ss(le16(p));
}

AVX2_INLINE float hsum8(__m256 v)
{
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

AVX2_INLINE int hsum8_i32(__m256i v)
{
    __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4e));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xb1));
    return _mm_cvtsi128_si32(s);
}

AVX2_INLINE __m256i load32(const void *p)
{
    return _mm256_loadu_si256((const __m256i *)p);
}

/* Signed bytes times signed bytes, summed in pairs then in fours: 8 int32
 * lanes. w may be -128 (its absolute value 128 is still a valid unsigned
 * byte); a must lie in [-127, 127], as the activation quantizers give. */
AVX2_INLINE __m256i dot_i8(__m256i w, __m256i a)
{
    __m256i p = _mm256_maddubs_epi16(_mm256_sign_epi8(w, w), _mm256_sign_epi8(a, w));
    return _mm256_madd_epi16(p, _mm256_set1_epi16(1));
}

/* Unsigned bytes (< 128) times signed bytes: 8 int32 lanes. */
AVX2_INLINE __m256i dot_u8(__m256i w, __m256i a)
{
    return _mm256_madd_epi16(_mm256_maddubs_epi16(w, a), _mm256_set1_epi16(1));
}

/* ---- activation quantization: the same bytes as the reference ------------- */

AVX2_INLINE __m256 abs_ps(__m256 v)
{
    return _mm256_andnot_ps(_mm256_set1_ps(-0.0f), v);
}

AVX2_INLINE float hmax8(__m256 v)
{
    __m128 m = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    m = _mm_max_ps(m, _mm_movehl_ps(m, m));
    m = _mm_max_ss(m, _mm_movehdup_ps(m));
    return _mm_cvtss_f32(m);
}

/* 32 floats to 32 int8 codes (x * id rounded to nearest even); returns the
 * four int32 vectors' sum lanes for bsums through *parts (2 x 16 elements). */
AVX2_INLINE __m256i quant32(const float *x, float id, int *sum16a, int *sum16b)
{
    __m256 m = _mm256_set1_ps(id);
    __m256i i0 = _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_loadu_ps(x), m));
    __m256i i1 = _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_loadu_ps(x + 8), m));
    __m256i i2 = _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_loadu_ps(x + 16), m));
    __m256i i3 = _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_loadu_ps(x + 24), m));
    *sum16a = hsum8_i32(_mm256_add_epi32(i0, i1));
    *sum16b = hsum8_i32(_mm256_add_epi32(i2, i3));
    __m256i p = _mm256_packs_epi16(_mm256_packs_epi32(i0, i1), _mm256_packs_epi32(i2, i3));
    return _mm256_permutevar8x32_epi32(p, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
}

AVX2_INLINE float amax_n(const float *x, int n)
{
    __m256 m = _mm256_setzero_ps();
    for (int i = 0; i < n; i += 8) m = _mm256_max_ps(m, abs_ps(_mm256_loadu_ps(x + i)));
    return hmax8(m);
}

AVX2 static void x86_quantize_q8_0(const float *x, KernQ8_0 *out, uint64_t n)
{
    for (uint64_t b = 0; b < n / QK8_0; b++, x += QK8_0) {
        float amax = amax_n(x, QK8_0);
        float id = amax > 0.0f ? 127.0f / amax : 0.0f;
        int s0, s1;
        _mm256_storeu_si256((__m256i *)out[b].q, quant32(x, id, &s0, &s1));
        out[b].d = amax / 127.0f;
        /* Wrapping sum: a NaN/Inf activation converts to INT_MIN (garbage
         * out, caught when the logits are sampled), never undefined behaviour. */
        out[b].sum = (int)((unsigned)s0 + (unsigned)s1);
    }
}

AVX2 static void x86_quantize_q8_k(const float *x, KernQ8_K *out, uint64_t n)
{
    for (uint64_t b = 0; b < n / QK_K; b++, x += QK_K) {
        float amax = amax_n(x, QK_K);
        float id = amax > 0.0f ? 127.0f / amax : 0.0f;
        for (int g = 0; g < 8; g++) {
            int s0, s1;
            _mm256_storeu_si256((__m256i *)(out[b].q + 32 * g), quant32(x + 32 * g, id, &s0, &s1));
            out[b].bsum[2 * g] = (int16_t)s0;
            out[b].bsum[2 * g + 1] = (int16_t)s1;
        }
        out[b].d = amax / 127.0f;
    }
}

/* ---- the multi-token frame ------------------------------------------------- */

/* Each kernel is an always-inline body taking nt as a constant, so the
 * accumulators live in registers. Two copies per type keep the binary
 * small (each copy of a K-quant body is several KiB): 4 tokens at a time
 * for prompt chunks, 1 for decoding and the rest of a chunk. A token's
 * arithmetic is the same in both, so results do not depend on nt. */
#define DISPATCH(name)                                                                                          \
    AVX2 static void name(uint64_t n, const uint8_t *row, const void *act, uint64_t act_stride, int nt,        \
                          float *out, uint64_t out_stride)                                                      \
    {                                                                                                           \
        int t0 = 0;                                                                                             \
        for (; t0 + 4 <= nt; t0 += 4)                                                                           \
            name##_body(n, row, (const uint8_t *)act + (uint64_t)t0 * act_stride, act_stride, 4,               \
                        out + (uint64_t)t0 * out_stride, out_stride);                                           \
        for (; t0 < nt; t0++)                                                                                   \
            name##_body(n, row, (const uint8_t *)act + (uint64_t)t0 * act_stride, act_stride, 1,               \
                        out + (uint64_t)t0 * out_stride, out_stride);                                           \
    }
#define DISPATCH4(name) DISPATCH(name)
/* Q4_K and Q6_K: prompts of three tokens or more go through the rows
 * kernels (kernels_x86_rows.c), so only the one-token copy is kept. */
#define DISPATCH1(name)                                                                                         \
    AVX2 static void name(uint64_t n, const uint8_t *row, const void *act, uint64_t act_stride, int nt,        \
                          float *out, uint64_t out_stride)                                                      \
    {                                                                                                           \
        for (int t = 0; t < nt; t++)                                                                            \
            name##_body(n, row, (const uint8_t *)act + (uint64_t)t * act_stride, act_stride, 1,                \
                        out + (uint64_t)t * out_stride, out_stride);                                            \
    }

#define ACT(T, t) ((const T *)((const uint8_t *)act + (uint64_t)(t) * act_stride))

/* ---- blocks of 32 against KernQ8_0 ------------------------------------------ */

/* 16 bytes of nibbles -> 32 bytes: low nibbles (elements 0..15), then high. */
AVX2_INLINE __m256i nibbles32(const uint8_t *q)
{
    /* the 16 bytes in both halves, the upper half shifted right by 4 */
    __m256i b = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)q));
    b = _mm256_srlv_epi64(b, _mm256_setr_epi64x(0, 0, 4, 4));
    return _mm256_and_si256(b, _mm256_set1_epi8(15));
}

/* The fifth bits of Q5_0/Q5_1: byte j of the result is 0x10 if bit j of qh is set. */
AVX2_INLINE __m256i bits32(uint32_t qh)
{
    __m256i v = _mm256_set1_epi32((int)qh);
    v = _mm256_shuffle_epi8(v, _mm256_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2,
                                                 3, 3, 3, 3, 3, 3, 3, 3));
    __m256i bit = _mm256_set1_epi64x((long long)0x8040201008040201ull);
    v = _mm256_cmpeq_epi8(_mm256_and_si256(v, bit), bit);
    return _mm256_and_si256(v, _mm256_set1_epi8(0x10));
}

/* IQ4_NL: the nibbles index the 16 levels with a byte shuffle. */
AVX2_INLINE __m256i iq4_levels(__m256i nib)
{
    __m128i t = _mm_loadu_si128((const __m128i *)quant_iq4nl_values);
    return _mm256_shuffle_epi8(_mm256_set_m128i(t, t), nib);
}

/* kind: GGML_TYPE_Q8_0, Q4_0, Q4_1, Q5_0, Q5_1 or IQ4_NL (a compile-time
 * constant: each kernel its own inlined copy) */

/* One weight block as 32 codes (signed, or unsigned 0..31 for the types
 * with a min), its scale d and its min m. */
AVX2_INLINE __m256i small_decode(int kind, const uint8_t *blk, float *d, float *m)
{
    *d = f16_scalar(blk);
    *m = kind == GGML_TYPE_Q4_1 || kind == GGML_TYPE_Q5_1 ? f16_scalar(blk + offsetof(BlockQ4_1, m)) : 0.0f;
    uint32_t qh;
    switch (kind) {
    case GGML_TYPE_Q8_0:
        return load32(blk + offsetof(BlockQ8_0, qs));
    case GGML_TYPE_Q4_0:
        return _mm256_sub_epi8(nibbles32(blk + offsetof(BlockQ4_0, qs)), _mm256_set1_epi8(8));
    case GGML_TYPE_Q4_1:
        return nibbles32(blk + offsetof(BlockQ4_1, qs));
    case GGML_TYPE_Q5_0:
        memcpy(&qh, blk + offsetof(BlockQ5_0, qh), 4); /* little-endian host */
        return _mm256_sub_epi8(_mm256_or_si256(nibbles32(blk + offsetof(BlockQ5_0, qs)), bits32(qh)),
                               _mm256_set1_epi8(16));
    case GGML_TYPE_Q5_1:
        memcpy(&qh, blk + offsetof(BlockQ5_1, qh), 4);
        return _mm256_or_si256(nibbles32(blk + offsetof(BlockQ5_1, qs)), bits32(qh));
    default:
        return iq4_levels(nibbles32(blk + offsetof(BlockIQ4_NL, qs)));
    }
}

/* Each token keeps two accumulators, even blocks in A and odd ones in B,
 * so one token alone still has two multiply-add chains in flight. */
AVX2_INLINE void small_body(uint64_t n, const uint8_t *row, const void *act, uint64_t act_stride, int nt, float *out,
                            uint64_t out_stride, int kind)
{
    __m256 acc_a[4], acc_b[4];
    float min_a[4], min_b[4];
    int has_min = kind == GGML_TYPE_Q4_1 || kind == GGML_TYPE_Q5_1;
    uint64_t bytes = GGML_BLOCK_BYTES(kind), nb = n / QK8_0, b = 0;
    UNROLL for (int t = 0; t < nt; t++) acc_a[t] = acc_b[t] = _mm256_setzero_ps(), min_a[t] = min_b[t] = 0.0f;
    for (; b + 2 <= nb; b += 2, row += 2 * bytes) {
        float d0, m0, d1, m1;
        prefetch_lines(row, 1);
        __m256i w0 = small_decode(kind, row, &d0, &m0), w1 = small_decode(kind, row + bytes, &d1, &m1);
        UNROLL for (int t = 0; t < nt; t++) {
            const KernQ8_0 *a = ACT(KernQ8_0, t) + b;
            __m256i s0 = has_min ? dot_u8(w0, load32(a[0].q)) : dot_i8(w0, load32(a[0].q));
            __m256i s1 = has_min ? dot_u8(w1, load32(a[1].q)) : dot_i8(w1, load32(a[1].q));
            acc_a[t] = _mm256_fmadd_ps(_mm256_set1_ps(d0 * a[0].d), _mm256_cvtepi32_ps(s0), acc_a[t]);
            acc_b[t] = _mm256_fmadd_ps(_mm256_set1_ps(d1 * a[1].d), _mm256_cvtepi32_ps(s1), acc_b[t]);
            if (has_min) {
                min_a[t] += m0 * a[0].d * (float)a[0].sum;
                min_b[t] += m1 * a[1].d * (float)a[1].sum;
            }
        }
    }
    if (b < nb) {
        float d0, m0;
        __m256i w0 = small_decode(kind, row, &d0, &m0);
        UNROLL for (int t = 0; t < nt; t++) {
            const KernQ8_0 *a = ACT(KernQ8_0, t) + b;
            __m256i s0 = has_min ? dot_u8(w0, load32(a->q)) : dot_i8(w0, load32(a->q));
            acc_a[t] = _mm256_fmadd_ps(_mm256_set1_ps(d0 * a->d), _mm256_cvtepi32_ps(s0), acc_a[t]);
            if (has_min) min_a[t] += m0 * a->d * (float)a->sum;
        }
    }
    UNROLL for (int t = 0; t < nt; t++)
        out[(uint64_t)t * out_stride] = hsum8(_mm256_add_ps(acc_a[t], acc_b[t])) + (min_a[t] + min_b[t]);
}

#define SMALL(name, kind)                                                                                      \
    AVX2_INLINE void name##_body(uint64_t n, const uint8_t *row, const void *act, uint64_t act_stride, int nt, \
                                 float *out, uint64_t out_stride)                                              \
    {                                                                                                          \
        small_body(n, row, act, act_stride, nt, out, out_stride, kind);                                        \
    }                                                                                                          \
    DISPATCH4(name)
SMALL(x86_q8_0, GGML_TYPE_Q8_0)
/* Q4_0 matmuls go through kernels_x86_rows.c (eight rows per vector), for
 * prompts and decoding alike: no one-row copy here. */
SMALL(x86_q4_1, GGML_TYPE_Q4_1)
SMALL(x86_q5_0, GGML_TYPE_Q5_0)
SMALL(x86_q5_1, GGML_TYPE_Q5_1)
SMALL(x86_iq4_nl, GGML_TYPE_IQ4_NL)
#undef SMALL

/* ---- K-quants against KernQ8_K ---------------------------------------------- */

/* Sum over the 16 groups of 16 of bsum[g] * c[g] (c as 16 int16). */
AVX2_INLINE __m256i bsum_dot(const KernQ8_K *a, __m256i c16)
{
    return _mm256_madd_epi16(load32(a->bsum), c16);
}

/* acc + s * scale with one rounding, as the multi-row kernels do it per lane. */
AVX2_INLINE float fma_ss(float s, float scale, float acc)
{
    return _mm_cvtss_f32(_mm_fmadd_ss(_mm_set_ss(s), _mm_set_ss(scale), _mm_set_ss(acc)));
}

/* Q4_K / Q5_K: 8 sub-blocks of 32 with 6-bit scales and mins. Each
 * super-block's two integer sums are exact; the float steps per super-block,
 *   acc = fma(S, d * a_d, acc); acc = fma(-M, dmin * a_d, acc),
 * are those of kernels_x86_rows.c, so decoding (here, one row at a time)
 * and prompt chunks (there, eight rows per vector) agree bit for bit. */
AVX2_INLINE void x86_q45_k_body(uint64_t n, const uint8_t *row, const void *act, uint64_t act_stride, int nt,
                                float *out, uint64_t out_stride, int five)
{
    float acc[KERN_MAX_NT];
    uint64_t bytes = five ? sizeof(BlockQ5_K) : sizeof(BlockQ4_K);
    UNROLL for (int t = 0; t < nt; t++) acc[t] = 0.0f;
    for (uint64_t b = 0; b < n / QK_K; b++, row += bytes) {
        prefetch_lines(row, 3);
        float dw = f16_scalar(row), dmin = f16_scalar(row + offsetof(BlockQ4_K, dmin));
        /* the 12 scale bytes unpacked four at a time (quant.c's Q4_K layout):
         * bytes sc0..7 then m0..7, widened to int16 */
        uint32_t u[3];
        memcpy(u, row + offsetof(BlockQ4_K, scales), K_SCALE_SIZE);
        uint32_t sl = u[0] & 0x3f3f3f3fu, ml = u[1] & 0x3f3f3f3fu;
        uint32_t sh = (u[2] & 0x0f0f0f0fu) | (((u[0] >> 6) & 0x03030303u) << 4);
        uint32_t mh = ((u[2] >> 4) & 0x0f0f0f0fu) | (((u[1] >> 6) & 0x03030303u) << 4);
        __m128i sm8 = _mm_setr_epi32((int)sl, (int)sh, (int)ml, (int)mh);
        __m256i mins = _mm256_cvtepu8_epi16(
            _mm_shuffle_epi8(sm8, _mm_setr_epi8(8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13, 14, 14, 15, 15)));
        __m256i scb = _mm256_broadcastsi128_si256(_mm_cvtepu8_epi16(sm8));
        __m256i s16[8];
        UNROLL for (int j = 0; j < 8; j++) s16[j] = _mm256_shuffle_epi8(scb, _mm256_set1_epi16((short)(0x0100 + 0x0202 * j)));
        const uint8_t *q = row + (five ? offsetof(BlockQ5_K, qs) : offsetof(BlockQ4_K, qs));
        __m256i hbits = five ? load32(row + offsetof(BlockQ5_K, qh)) : _mm256_setzero_si256();
        __m256i w[8];
        UNROLL for (int p = 0; p < 4; p++) {
            __m256i v = load32(q + 32 * p);
            w[2 * p] = _mm256_and_si256(v, _mm256_set1_epi8(15));
            w[2 * p + 1] = _mm256_and_si256(_mm256_srli_epi16(v, 4), _mm256_set1_epi8(15));
        }
        if (five)
            UNROLL for (int j = 0; j < 8; j++) {
                /* bit j of each qh byte, moved to bit 4 */
                __m256i h = _mm256_and_si256(hbits, _mm256_set1_epi8((char)(1 << j)));
                h = _mm256_cmpeq_epi8(h, _mm256_set1_epi8((char)(1 << j)));
                w[j] = _mm256_or_si256(w[j], _mm256_and_si256(h, _mm256_set1_epi8(16)));
            }
        UNROLL for (int t = 0; t < nt; t++) {
            const KernQ8_K *a = ACT(KernQ8_K, t) + b;
            __m256i sumi = _mm256_setzero_si256();
            UNROLL for (int j = 0; j < 8; j++) {
                __m256i p16 = _mm256_maddubs_epi16(w[j], load32(a->q + 32 * j));
                sumi = _mm256_add_epi32(sumi, _mm256_madd_epi16(p16, s16[j]));
            }
            acc[t] = fma_ss((float)hsum8_i32(sumi), dw * a->d, acc[t]);
            acc[t] = fma_ss(-(float)hsum8_i32(bsum_dot(a, mins)), dmin * a->d, acc[t]);
        }
    }
    UNROLL for (int t = 0; t < nt; t++) out[(uint64_t)t * out_stride] = acc[t];
}

AVX2_INLINE void x86_q4_k_body(uint64_t n, const uint8_t *row, const void *act, uint64_t act_stride, int nt,
                               float *out, uint64_t out_stride)
{
    x86_q45_k_body(n, row, act, act_stride, nt, out, out_stride, 0);
}
DISPATCH1(x86_q4_k)

AVX2_INLINE void x86_q5_k_body(uint64_t n, const uint8_t *row, const void *act, uint64_t act_stride, int nt,
                               float *out, uint64_t out_stride)
{
    x86_q45_k_body(n, row, act, act_stride, nt, out, out_stride, 1);
}
DISPATCH(x86_q5_k)

/* Q6_K: codes 0..63 (minus 32 through the bsums), 16 int8 scales. An
 * exact integer sum per super-block, then acc = fma(S, d * a_d, acc), as in
 * kernels_x86_rows.c (see Q4_K above). */
AVX2_INLINE void x86_q6_k_body(uint64_t n, const uint8_t *row, const void *act, uint64_t act_stride, int nt,
                               float *out, uint64_t out_stride)
{
    float acc[KERN_MAX_NT];
    UNROLL for (int t = 0; t < nt; t++) acc[t] = 0.0f;
    const __m256i m4 = _mm256_set1_epi8(15), m30 = _mm256_set1_epi8(0x30);
    for (uint64_t b = 0; b < n / QK_K; b++, row += sizeof(BlockQ6_K)) {
        prefetch_lines(row, 4);
        float dw = f16_scalar(row + offsetof(BlockQ6_K, d));
        const int8_t *sc = (const int8_t *)(row + offsetof(BlockQ6_K, scales));
        __m256i sc16 = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)sc));
        __m256i w[8], s16[8];
        UNROLL for (int h = 0; h < 2; h++) {
            const uint8_t *ql = row + offsetof(BlockQ6_K, ql) + 64 * h;
            __m256i ql0 = load32(ql), ql1 = load32(ql + 32), qh = load32(row + offsetof(BlockQ6_K, qh) + 32 * h);
            w[4 * h + 0] = _mm256_or_si256(_mm256_and_si256(ql0, m4), _mm256_and_si256(_mm256_slli_epi16(qh, 4), m30));
            w[4 * h + 1] = _mm256_or_si256(_mm256_and_si256(ql1, m4), _mm256_and_si256(_mm256_slli_epi16(qh, 2), m30));
            w[4 * h + 2] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(ql0, 4), m4), _mm256_and_si256(qh, m30));
            w[4 * h + 3] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(ql1, 4), m4),
                                           _mm256_and_si256(_mm256_srli_epi16(qh, 2), m30));
        }
        /* s16[k]: sc[2k] in the low 8 lanes, sc[2k+1] in the high 8, by byte shuffles */
        __m256i lo = _mm256_broadcastsi128_si256(_mm256_castsi256_si128(sc16));
        __m256i hi = _mm256_broadcastsi128_si256(_mm256_extracti128_si256(sc16, 1));
        UNROLL for (int k = 0; k < 8; k++) {
            int c = k % 4;
            __m256i idx = _mm256_set_m128i(_mm_set1_epi16((short)((4 * c + 2) | ((4 * c + 3) << 8))),
                                           _mm_set1_epi16((short)((4 * c) | ((4 * c + 1) << 8))));
            s16[k] = _mm256_shuffle_epi8(k < 4 ? lo : hi, idx);
        }
        UNROLL for (int t = 0; t < nt; t++) {
            const KernQ8_K *a = ACT(KernQ8_K, t) + b;
            __m256i sumi = _mm256_setzero_si256();
            UNROLL for (int k = 0; k < 8; k++) {
                __m256i p16 = _mm256_maddubs_epi16(w[k], load32(a->q + 32 * k));
                sumi = _mm256_add_epi32(sumi, _mm256_madd_epi16(p16, s16[k]));
            }
            sumi = _mm256_sub_epi32(sumi, _mm256_slli_epi32(bsum_dot(a, sc16), 5));
            acc[t] = fma_ss((float)hsum8_i32(sumi), dw * a->d, acc[t]);
        }
    }
    UNROLL for (int t = 0; t < nt; t++) out[(uint64_t)t * out_stride] = acc[t];
}
/* Q6_K: two tokens (two slots of pith serve decoding together: the rows
 * kernels send fewer than three here) share each super-block's decoding
 * (measured, one thread, Q4_K_M file's Q6_K matrices: 17-26 ms -> 14 ms
 * per step; from four tokens on the transposed tiles are faster). */
#define DISPATCH2(name)                                                                                         \
    AVX2 static void name(uint64_t n, const uint8_t *row, const void *act, uint64_t act_stride, int nt,        \
                          float *out, uint64_t out_stride)                                                      \
    {                                                                                                           \
        int t = 0;                                                                                              \
        for (; t + 2 <= nt; t += 2)                                                                             \
            name##_body(n, row, (const uint8_t *)act + (uint64_t)t * act_stride, act_stride, 2,                \
                        out + (uint64_t)t * out_stride, out_stride);                                            \
        if (t < nt)                                                                                             \
            name##_body(n, row, (const uint8_t *)act + (uint64_t)t * act_stride, act_stride, 1,                \
                        out + (uint64_t)t * out_stride, out_stride);                                            \
    }
DISPATCH2(x86_q6_k)

/* Signed weights times signed activations in pairs (int16), then times a
 * per-lane int16 scale and summed in fours: 8 int32 lanes. */
AVX2_INLINE __m256i dot_i8_scaled(__m256i w, __m256i a, __m256i scale16)
{
    __m256i p = _mm256_maddubs_epi16(_mm256_sign_epi8(w, w), _mm256_sign_epi8(a, w));
    return _mm256_madd_epi16(p, scale16);
}

/* Scale vector for 32 elements made of two sub-blocks of 16. */
AVX2_INLINE __m256i two_scales(int lo, int hi)
{
    return _mm256_set_m128i(_mm_set1_epi16((short)hi), _mm_set1_epi16((short)lo));
}

/* Q2_K: 2-bit codes, 16 sub-blocks with 4-bit scale and min. */
AVX2_INLINE void x86_q2_k_body(uint64_t n, const uint8_t *row, const void *act, uint64_t act_stride, int nt,
                               float *out, uint64_t out_stride)
{
    __m256 acc[KERN_MAX_NT];
    float accm[KERN_MAX_NT];
    UNROLL for (int t = 0; t < nt; t++) acc[t] = _mm256_setzero_ps(), accm[t] = 0.0f;
    for (uint64_t b = 0; b < n / QK_K; b++, row += sizeof(BlockQ2_K)) {
        prefetch_lines(row, 2);
        float dw = f16_scalar(row + offsetof(BlockQ2_K, d)), dmin = f16_scalar(row + offsetof(BlockQ2_K, dmin));
        int16_t mins[16];
        __m256i w[8], s16[8];
        UNROLL for (int i = 0; i < 16; i++) mins[i] = (int16_t)(row[i] >> 4);
        __m256i m16 = load32(mins);
        UNROLL for (int h = 0; h < 2; h++) {
            __m256i q = load32(row + offsetof(BlockQ2_K, qs) + 32 * h);
            UNROLL for (int k = 0; k < 4; k++) {
                w[4 * h + k] = _mm256_and_si256(_mm256_srli_epi16(q, 2 * k), _mm256_set1_epi8(3));
                s16[4 * h + k] = two_scales(row[8 * h + 2 * k] & 15, row[8 * h + 2 * k + 1] & 15);
            }
        }
        UNROLL for (int t = 0; t < nt; t++) {
            const KernQ8_K *a = ACT(KernQ8_K, t) + b;
            __m256i sumi = _mm256_setzero_si256();
            UNROLL for (int k = 0; k < 8; k++)
                sumi = _mm256_add_epi32(sumi, _mm256_madd_epi16(_mm256_maddubs_epi16(w[k], load32(a->q + 32 * k)), s16[k]));
            acc[t] = _mm256_fmadd_ps(_mm256_set1_ps(dw * a->d), _mm256_cvtepi32_ps(sumi), acc[t]);
            accm[t] += dmin * a->d * (float)hsum8_i32(bsum_dot(a, m16));
        }
    }
    UNROLL for (int t = 0; t < nt; t++) out[(uint64_t)t * out_stride] = hsum8(acc[t]) - accm[t];
}
DISPATCH(x86_q2_k)

/* Q3_K: 2-bit codes minus 4 where the hmask bit is clear, 6-bit scales - 32. */
AVX2_INLINE void x86_q3_k_body(uint64_t n, const uint8_t *row, const void *act, uint64_t act_stride, int nt,
                               float *out, uint64_t out_stride)
{
    __m256 acc[KERN_MAX_NT];
    UNROLL for (int t = 0; t < nt; t++) acc[t] = _mm256_setzero_ps();
    for (uint64_t b = 0; b < n / QK_K; b++, row += sizeof(BlockQ3_K)) {
        prefetch_lines(row, 2);
        float dw = f16_scalar(row + offsetof(BlockQ3_K, d));
        const uint8_t *hm = row + offsetof(BlockQ3_K, hmask), *qs = row + offsetof(BlockQ3_K, qs);
        const uint8_t *s6 = row + offsetof(BlockQ3_K, scales);
        int sc[16];
        UNROLL for (int i = 0; i < 16; i++) {
            int lo = i < 8 ? (s6[i] & 15) : (s6[i - 8] >> 4);
            sc[i] = (lo | (((s6[8 + i % 4] >> (2 * (i / 4))) & 3) << 4)) - 32;
        }
        __m256i hbits = load32(hm), w[8], s16[8];
        UNROLL for (int h = 0; h < 2; h++) {
            __m256i q = load32(qs + 32 * h);
            UNROLL for (int k = 0; k < 4; k++) {
                __m256i v = _mm256_and_si256(_mm256_srli_epi16(q, 2 * k), _mm256_set1_epi8(3));
                __m256i hb = _mm256_and_si256(_mm256_srli_epi16(hbits, 4 * h + k), _mm256_set1_epi8(1));
                __m256i minus = _mm256_slli_epi16(_mm256_xor_si256(hb, _mm256_set1_epi8(1)), 2); /* 4 or 0 */
                w[4 * h + k] = _mm256_sub_epi8(v, minus);
                s16[4 * h + k] = two_scales(sc[8 * h + 2 * k], sc[8 * h + 2 * k + 1]);
            }
        }
        UNROLL for (int t = 0; t < nt; t++) {
            const KernQ8_K *a = ACT(KernQ8_K, t) + b;
            __m256i sumi = _mm256_setzero_si256();
            UNROLL for (int k = 0; k < 8; k++)
                sumi = _mm256_add_epi32(sumi, dot_i8_scaled(w[k], load32(a->q + 32 * k), s16[k]));
            acc[t] = _mm256_fmadd_ps(_mm256_set1_ps(dw * a->d), _mm256_cvtepi32_ps(sumi), acc[t]);
        }
    }
    UNROLL for (int t = 0; t < nt; t++) out[(uint64_t)t * out_stride] = hsum8(acc[t]);
}
DISPATCH(x86_q3_k)

/* IQ4_XS: IQ4_NL levels in 8 sub-blocks of 32 with 6-bit scales - 32. */
AVX2_INLINE void x86_iq4_xs_body(uint64_t n, const uint8_t *row, const void *act, uint64_t act_stride, int nt,
                                 float *out, uint64_t out_stride)
{
    __m256 acc[KERN_MAX_NT];
    UNROLL for (int t = 0; t < nt; t++) acc[t] = _mm256_setzero_ps();
    for (uint64_t b = 0; b < n / QK_K; b++, row += sizeof(BlockIQ4_XS)) {
        prefetch_lines(row, 3);
        float dw = f16_scalar(row);
        uint16_t sh = le16(row + offsetof(BlockIQ4_XS, scales_h));
        __m256i w[8], s16[8];
        UNROLL for (int j = 0; j < 8; j++) {
            int ls = ((row[offsetof(BlockIQ4_XS, scales_l) + j / 2] >> (4 * (j % 2))) & 15) | (((sh >> (2 * j)) & 3) << 4);
            w[j] = iq4_levels(nibbles32(row + offsetof(BlockIQ4_XS, qs) + 16 * j));
            s16[j] = _mm256_set1_epi16((short)(ls - 32));
        }
        UNROLL for (int t = 0; t < nt; t++) {
            const KernQ8_K *a = ACT(KernQ8_K, t) + b;
            __m256i sumi = _mm256_setzero_si256();
            UNROLL for (int j = 0; j < 8; j++)
                sumi = _mm256_add_epi32(sumi, dot_i8_scaled(w[j], load32(a->q + 32 * j), s16[j]));
            acc[t] = _mm256_fmadd_ps(_mm256_set1_ps(dw * a->d), _mm256_cvtepi32_ps(sumi), acc[t]);
        }
    }
    UNROLL for (int t = 0; t < nt; t++) out[(uint64_t)t * out_stride] = hsum8(acc[t]);
}
DISPATCH(x86_iq4_xs)

/* ---- float weights against float activations ------------------------------- */

/* 16 weights from the row as floats (two vectors). */
AVX2_INLINE void load16_f16(const uint8_t *p, __m256 *lo, __m256 *hi)
{
    *lo = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)p));
    *hi = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(p + 16)));
}

AVX2_INLINE void load16_bf16(const uint8_t *p, __m256 *lo, __m256 *hi)
{
    *lo = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)p)), 16));
    *hi = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)(p + 16))), 16));
}

AVX2_INLINE void load16_f32(const uint8_t *p, __m256 *lo, __m256 *hi)
{
    *lo = _mm256_loadu_ps((const float *)(const void *)p);
    *hi = _mm256_loadu_ps((const float *)(const void *)(p + 32));
}

AVX2_INLINE float scalar_weight(int kind, const uint8_t *p)
{
    if (kind == GGML_TYPE_F32) {
        float f;
        memcpy(&f, p, 4);
        return f;
    }
    return kind == GGML_TYPE_F16 ? _cvtsh_ss(le16(p)) : quant_bf16_to_f32(le16(p));
}

/* kind: GGML_TYPE_F32, F16 or BF16 (a compile-time constant). Two
 * accumulators per token, tail in scalar. */
AVX2_INLINE void x86_float_body(uint64_t n, const uint8_t *row, const void *act, uint64_t act_stride, int nt,
                                float *out, uint64_t out_stride, int kind)
{
    __m256 a0[KERN_MAX_NT], a1[KERN_MAX_NT];
    uint64_t esz = kind == GGML_TYPE_F32 ? 4 : 2, i = 0;
    UNROLL for (int t = 0; t < nt; t++) a0[t] = a1[t] = _mm256_setzero_ps();
    for (; i + 16 <= n; i += 16) {
        __m256 lo, hi;
        if (((i * esz) & 63) == 0) prefetch_lines(row + i * esz, 1); /* once a cache line */
        if (kind == GGML_TYPE_F32) load16_f32(row + i * esz, &lo, &hi);
        else if (kind == GGML_TYPE_F16) load16_f16(row + i * esz, &lo, &hi);
        else load16_bf16(row + i * esz, &lo, &hi);
        UNROLL for (int t = 0; t < nt; t++) {
            const float *x = ACT(float, t) + i;
            a0[t] = _mm256_fmadd_ps(lo, _mm256_loadu_ps(x), a0[t]);
            a1[t] = _mm256_fmadd_ps(hi, _mm256_loadu_ps(x + 8), a1[t]);
        }
    }
    UNROLL for (int t = 0; t < nt; t++) {
        const float *x = ACT(float, t);
        float s = hsum8(_mm256_add_ps(a0[t], a1[t]));
        for (uint64_t k = i; k < n; k++) s += scalar_weight(kind, row + k * esz) * x[k];
        out[(uint64_t)t * out_stride] = s;
    }
}

AVX2_INLINE void x86_f32_body(uint64_t n, const uint8_t *row, const void *act, uint64_t act_stride, int nt,
                              float *out, uint64_t out_stride)
{
    x86_float_body(n, row, act, act_stride, nt, out, out_stride, GGML_TYPE_F32);
}
DISPATCH4(x86_f32)

AVX2_INLINE void x86_f16_body(uint64_t n, const uint8_t *row, const void *act, uint64_t act_stride, int nt,
                              float *out, uint64_t out_stride)
{
    x86_float_body(n, row, act, act_stride, nt, out, out_stride, GGML_TYPE_F16);
}
/* F16: also a two-token copy, for the steps of pith serve --slots (two
 * tokens through the one-token copy convert every weight twice; F16 steps
 * are bound by memory on the 2-core VM, so the gain was not measurable
 * under the load of the day). */
AVX2 static void x86_f16(uint64_t n, const uint8_t *row, const void *act, uint64_t act_stride, int nt, float *out,
                         uint64_t out_stride)
{
    int t0 = 0;
    for (; t0 + 4 <= nt; t0 += 4)
        x86_f16_body(n, row, (const uint8_t *)act + (uint64_t)t0 * act_stride, act_stride, 4,
                     out + (uint64_t)t0 * out_stride, out_stride);
    for (; t0 + 2 <= nt; t0 += 2)
        x86_f16_body(n, row, (const uint8_t *)act + (uint64_t)t0 * act_stride, act_stride, 2,
                     out + (uint64_t)t0 * out_stride, out_stride);
    if (t0 < nt)
        x86_f16_body(n, row, (const uint8_t *)act + (uint64_t)t0 * act_stride, act_stride, 1,
                     out + (uint64_t)t0 * out_stride, out_stride);
}

AVX2_INLINE void x86_bf16_body(uint64_t n, const uint8_t *row, const void *act, uint64_t act_stride, int nt,
                               float *out, uint64_t out_stride)
{
    x86_float_body(n, row, act, act_stride, nt, out, out_stride, GGML_TYPE_BF16);
}
DISPATCH4(x86_bf16)

/* ---- the KV cache ---------------------------------------------------------- */

/* q . k for an F16 row: one chain of eight lanes over the head (element i
 * in lane i % 8), its lanes summed ((l0 + l1) + (l2 + l3)) + ((l4 + l5) +
 * (l6 + l7)) (sum8_tree), then the last n % 8 products. dots_f16 takes the
 * same steps for eight scores at once (kern_x86_sum8x8). */
AVX2_INLINE float sum8_tree(__m256 a)
{
    __m256 h = _mm256_hadd_ps(a, a);
    h = _mm256_hadd_ps(h, h);
    return _mm_cvtss_f32(_mm_add_ss(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1)));
}

AVX2_INLINE __m256 f16x8(const uint16_t *p)
{
    return _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)p));
}

AVX2_INLINE float dot_f16_body(const uint16_t *k, const float *q, uint32_t n)
{
    __m256 acc = _mm256_setzero_ps();
    uint32_t i = 0;
    for (; i + 8 <= n; i += 8) acc = _mm256_fmadd_ps(f16x8(k + i), _mm256_loadu_ps(q + i), acc);
    float s = sum8_tree(acc);
    for (; i < n; i++) s += q[i] * _cvtsh_ss(k[i]);
    return s;
}

AVX2 static float x86_dot_f16(const uint16_t *k, const float *q, uint32_t n)
{
    return dot_f16_body(k, q, n);
}

/* Two queries against four rows: eight chains, the rows converted once
 * for both, summed together (kern_x86_sum8x8): lanes 0-3 q0's scores, 4-7 q1's. */
AVX2_INLINE __m256 dots2x4_f16(const uint16_t *k, uint64_t stride, const float *q0, const float *q1, uint32_t n)
{
    __m256 acc[8];
    UNROLL for (int c = 0; c < 8; c++) acc[c] = _mm256_setzero_ps();
    for (uint32_t i = 0; i < n; i += 8) {
        __m256 a = _mm256_loadu_ps(q0 + i), b = _mm256_loadu_ps(q1 + i);
        UNROLL for (int r = 0; r < 4; r++) {
            __m256 kv = f16x8(k + r * stride + i);
            acc[r] = _mm256_fmadd_ps(kv, a, acc[r]);
            acc[4 + r] = _mm256_fmadd_ps(kv, b, acc[4 + r]);
        }
    }
    return kern_x86_sum8x8(acc);
}

/* Queries in pairs, rows in fours (dots2x4_f16) where the head is whole
 * vectors; the rest one score at a time; each token over its own rows. */
AVX2 void kern_x86_dots_f16(const uint16_t *k, uint64_t stride, uint32_t n, const float *q, uint64_t q_stride,
                            uint32_t nq, uint64_t q_tstride, uint32_t nt, const uint32_t *rows, float *out,
                              uint64_t out_stride)
{
    for (uint32_t t = 0; t < nt; t++, q += q_tstride, out += nq * out_stride) {
        uint32_t i = 0;
        for (; n % 8 == 0 && i + 2 <= nq; i += 2) {
            const float *q0 = q + i * q_stride, *q1 = q0 + q_stride;
            float *o0 = out + i * out_stride, *o1 = o0 + out_stride;
            uint32_t p = 0;
            for (; p + 4 <= rows[t]; p += 4) {
                __m256 s = dots2x4_f16(k + p * stride, stride, q0, q1, n);
                _mm_storeu_ps(o0 + p, _mm256_castps256_ps128(s));
                _mm_storeu_ps(o1 + p, _mm256_extractf128_ps(s, 1));
            }
            for (; p < rows[t]; p++) {
                o0[p] = dot_f16_body(k + p * stride, q0, n);
                o1[p] = dot_f16_body(k + p * stride, q1, n);
            }
        }
        for (; i < nq; i++)
            for (uint32_t p = 0; p < rows[t]; p++)
                out[i * out_stride + p] = dot_f16_body(k + p * stride, q + i * q_stride, n);
    }
}

AVX2 static void x86_axpy_f16(float *out, float a, const uint16_t *v, uint32_t n)
{
    __m256 va = _mm256_set1_ps(a);
    uint32_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(out + i, _mm256_fmadd_ps(va, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(v + i))),
                                                  _mm256_loadu_ps(out + i)));
    for (; i < n; i++) out[i] += a * _cvtsh_ss(v[i]);
}

/* F16C rounds to nearest even and quiets a NaN keeping its top mantissa
 * bits: quant_f32_to_f16's results (test_kernels checks the specials). */
AVX2 static void x86_to_f16(uint16_t *out, const float *x, uint32_t n)
{
    uint32_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm_storeu_si128((__m128i *)(out + i), _mm256_cvtps_ph(_mm256_loadu_ps(x + i), _MM_FROUND_TO_NEAREST_INT));
    for (; i < n; i++) out[i] = quant_f32_to_f16(x[i]);
}

/* RoPE (kernels.h: rope), eight halves' pairs or four adjacent pairs at a
 * time, multiplied then added or subtracted as the reference rounds them
 * (no FMA). NEOX: two shuffles and a permute deinterleave eight cosines
 * and eight sines. Adjacent pairs: x * (c c) -+ (x swapped) * (s s), ADDSUB
 * subtracting in the even lanes (x1 c + x0 s: the reference's sum). */
AVX2 static void x86_rope(float *v, uint32_t n_rot, const float *cs, int neox)
{
    uint32_t half = n_rot / 2, i = 0, step = neox ? 1 : 2;
    float *v1 = neox ? v + half : v + 1;
    if (neox)
        for (; i + 8 <= half; i += 8) {
            __m256 a = _mm256_loadu_ps(cs + 2 * i), b = _mm256_loadu_ps(cs + 2 * i + 8);
            /* the shuffles give c0 c1 c4 c5 c2 c3 c6 c7 (and the sines): 64-bit pieces 0 2 1 3 */
            __m256 c = _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(_mm256_shuffle_ps(a, b, 0x88)), 0xD8));
            __m256 sn = _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(_mm256_shuffle_ps(a, b, 0xDD)), 0xD8));
            __m256 x0 = _mm256_loadu_ps(v + i), x1 = _mm256_loadu_ps(v1 + i);
            _mm256_storeu_ps(v + i, _mm256_sub_ps(_mm256_mul_ps(x0, c), _mm256_mul_ps(x1, sn)));
            _mm256_storeu_ps(v1 + i, _mm256_add_ps(_mm256_mul_ps(x0, sn), _mm256_mul_ps(x1, c)));
        }
    else
        for (; i + 4 <= half; i += 4) {
            __m256 x = _mm256_loadu_ps(v + 2 * i), t = _mm256_loadu_ps(cs + 2 * i);
            __m256 xc = _mm256_mul_ps(x, _mm256_moveldup_ps(t));
            __m256 xs = _mm256_mul_ps(_mm256_permute_ps(x, 0xB1), _mm256_movehdup_ps(t));
            _mm256_storeu_ps(v + 2 * i, _mm256_addsub_ps(xc, xs));
        }
    for (; i < half; i++) {
        float c = cs[2 * i], sn = cs[2 * i + 1], x0 = v[i * step], x1 = v1[i * step];
        v[i * step] = x0 * c - x1 * sn;
        v1[i * step] = x0 * sn + x1 * c;
    }
}

/* e^x for x in [-87, 88] (the caller clamps): x = k ln2 + r, |r| <= ln2/2,
 * e^r by its Taylor series to r^7 (remainder < 2e-9 relative), 2^k into
 * the exponent bits. Within 2 ulp of libm's expf. */
AVX2_INLINE __m256 exp8(__m256 x)
{
    __m256 k = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504f)), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m256 r = _mm256_fnmadd_ps(k, _mm256_set1_ps(0.693145752f), x); /* ln2 in two parts: r exact to ~1e-12 */
    r = _mm256_fnmadd_ps(k, _mm256_set1_ps(1.42860677e-6f), r);
    __m256 p = _mm256_set1_ps(1.0f / 5040.0f);
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 720.0f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 120.0f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 24.0f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 6.0f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(0.5f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
    __m256i two_k = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(k), _mm256_set1_epi32(127)), 23);
    return _mm256_mul_ps(p, _mm256_castsi256_ps(two_k));
}

AVX2_INLINE __m256 silu_mul8(__m256 x, __m256 u)
{
    /* e^-x: beyond the clamp silu is x (or 0) to float precision anyway */
    __m256 nx = _mm256_min_ps(_mm256_set1_ps(88.0f),
                              _mm256_max_ps(_mm256_set1_ps(-87.0f), _mm256_sub_ps(_mm256_setzero_ps(), x)));
    return _mm256_mul_ps(_mm256_div_ps(x, _mm256_add_ps(_mm256_set1_ps(1.0f), exp8(nx))), u);
}

/* Every element takes the same steps, the tail too (threads split the
 * elements anywhere: a result must not depend on where). */
AVX2 static void x86_silu_mul(float *g, const float *u, uint64_t n)
{
    uint64_t i = 0;
    for (; i + 8 <= n; i += 8) _mm256_storeu_ps(g + i, silu_mul8(_mm256_loadu_ps(g + i), _mm256_loadu_ps(u + i)));
    if (i < n) {
        float tg[8] = {0}, tu[8] = {0};
        memcpy(tg, g + i, (n - i) * sizeof(float));
        memcpy(tu, u + i, (n - i) * sizeof(float));
        _mm256_storeu_ps(tg, silu_mul8(_mm256_loadu_ps(tg), _mm256_loadu_ps(tu)));
        memcpy(g + i, tg, (n - i) * sizeof(float));
    }
}

/* The weighted sum of V rows with 64 outputs in registers across the rows
 * (axpy row after row would store and reload them for every position):
 * the same fused multiply-add per element in the same order as axpy_f16. */
/* Two queries: 32 outputs of each in registers, the V rows converted once. */
AVX2_INLINE void wsum2_f16(float *o0, float *o1, const float *w0, const float *w1, const uint16_t *v, uint64_t stride,
                           uint32_t n, uint32_t rows)
{
    uint32_t j = 0;
    for (; j + 32 <= n; j += 32) {
        __m256 a0[4], a1[4];
        UNROLL for (int c = 0; c < 4; c++) a0[c] = _mm256_loadu_ps(o0 + j + 8 * c), a1[c] = _mm256_loadu_ps(o1 + j + 8 * c);
        for (uint32_t p = 0; p < rows; p++) {
            __m256 wp0 = _mm256_set1_ps(w0[p]), wp1 = _mm256_set1_ps(w1[p]);
            const uint16_t *vp = v + p * stride + j;
            UNROLL for (int c = 0; c < 4; c++) {
                __m256 vv = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(vp + 8 * c)));
                a0[c] = _mm256_fmadd_ps(wp0, vv, a0[c]);
                a1[c] = _mm256_fmadd_ps(wp1, vv, a1[c]);
            }
        }
        UNROLL for (int c = 0; c < 4; c++) _mm256_storeu_ps(o0 + j + 8 * c, a0[c]), _mm256_storeu_ps(o1 + j + 8 * c, a1[c]);
    }
    if (j < n)
        for (uint32_t p = 0; p < rows; p++) {
            x86_axpy_f16(o0 + j, w0[p], v + p * stride + j, n - j);
            x86_axpy_f16(o1 + j, w1[p], v + p * stride + j, n - j);
        }
}

/* One query: 64 outputs in registers. */
AVX2_INLINE void wsum1_f16(float *out, const float *w, const uint16_t *v, uint64_t stride, uint32_t n, uint32_t rows)
{
    uint32_t j = 0;
    for (; j + 64 <= n; j += 64) {
        __m256 acc[8];
        UNROLL for (int c = 0; c < 8; c++) acc[c] = _mm256_loadu_ps(out + j + 8 * c);
        for (uint32_t p = 0; p < rows; p++) {
            __m256 wp = _mm256_set1_ps(w[p]);
            const uint16_t *vp = v + p * stride + j;
            UNROLL for (int c = 0; c < 8; c++)
                acc[c] = _mm256_fmadd_ps(wp, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(vp + 8 * c))), acc[c]);
        }
        UNROLL for (int c = 0; c < 8; c++) _mm256_storeu_ps(out + j + 8 * c, acc[c]);
    }
    if (j < n)
        for (uint32_t p = 0; p < rows; p++) x86_axpy_f16(out + j, w[p], v + p * stride + j, n - j);
}

AVX2 void kern_x86_wsum_f16(float *out, uint64_t out_stride, uint64_t out_tstride, const float *w, uint64_t w_stride,
                            uint32_t nq, uint32_t nt, const uint32_t *rows, const uint16_t *v, uint64_t stride,
                              uint32_t n)
{
    for (uint32_t t = 0; t < nt; t++, out += out_tstride, w += nq * w_stride) {
        uint32_t i = 0;
        for (; i + 2 <= nq; i += 2)
            wsum2_f16(out + i * out_stride, out + (i + 1) * out_stride, w + i * w_stride, w + (i + 1) * w_stride, v,
                      stride, n, rows[t]);
        if (i < nq) wsum1_f16(out + i * out_stride, w + i * w_stride, v, stride, n, rows[t]);
    }
}

/* e^(s - mx) by exp8, the sum in double; the tail through the same steps. */
AVX2_INLINE __m256 exp_shifted8(__m256 x, __m256 mx)
{
    /* max/min return their second operand when one is NaN: a NaN score
     * stays NaN (and reaches the logits, where it is reported) */
    __m256 d = _mm256_sub_ps(x, mx);
    return exp8(_mm256_min_ps(_mm256_set1_ps(88.0f), _mm256_max_ps(_mm256_set1_ps(-87.0f), d)));
}

AVX2 static double x86_exp_sum(float *s, uint32_t n, float mx)
{
    __m256 m = _mm256_set1_ps(mx);
    __m256d sum = _mm256_setzero_pd();
    uint32_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256 e = exp_shifted8(_mm256_loadu_ps(s + i), m);
        _mm256_storeu_ps(s + i, e);
        sum = _mm256_add_pd(sum, _mm256_add_pd(_mm256_cvtps_pd(_mm256_castps256_ps128(e)),
                                               _mm256_cvtps_pd(_mm256_extractf128_ps(e, 1))));
    }
    double lanes[4];
    _mm256_storeu_pd(lanes, sum);
    double total = (lanes[0] + lanes[1]) + (lanes[2] + lanes[3]);
    if (i < n) {
        float t[8];
        memset(t, 0, sizeof t);
        memcpy(t, s + i, (n - i) * sizeof(float));
        _mm256_storeu_ps(t, exp_shifted8(_mm256_loadu_ps(t), m));
        memcpy(s + i, t, (n - i) * sizeof(float));
        for (uint32_t k = 0; k < n - i; k++) total += t[k];
    }
    return total;
}

/* KernelSet.scale_max: MAXPS returns its second operand when one is NaN,
 * so a NaN score is skipped as the compare skips it. */
AVX2 static float x86_scale_max(float *s, uint32_t n, float scale, float mx)
{
    __m256 sc = _mm256_set1_ps(scale), mv = _mm256_set1_ps(mx);
    uint32_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256 x = _mm256_mul_ps(_mm256_loadu_ps(s + i), sc);
        _mm256_storeu_ps(s + i, x);
        mv = _mm256_max_ps(x, mv);
    }
    __m128 m4 = _mm_max_ps(_mm256_castps256_ps128(mv), _mm256_extractf128_ps(mv, 1));
    m4 = _mm_max_ps(m4, _mm_movehl_ps(m4, m4));
    mx = _mm_cvtss_f32(_mm_max_ss(m4, _mm_movehdup_ps(m4)));
    for (; i < n; i++) {
        s[i] *= scale;
        if (s[i] > mx) mx = s[i];
    }
    return mx;
}

AVX2 static float x86_dot_f32(const float *k, const float *q, uint32_t n)
{
    __m256 acc = _mm256_setzero_ps();
    uint32_t i = 0;
    for (; i + 8 <= n; i += 8) acc = _mm256_fmadd_ps(_mm256_loadu_ps(k + i), _mm256_loadu_ps(q + i), acc);
    float s = hsum8(acc);
    for (; i < n; i++) s += q[i] * k[i];
    return s;
}

AVX2 static void x86_axpy_f32(float *out, float a, const float *v, uint32_t n)
{
    __m256 va = _mm256_set1_ps(a);
    uint32_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(out + i, _mm256_fmadd_ps(va, _mm256_loadu_ps(v + i), _mm256_loadu_ps(out + i)));
    for (; i < n; i++) out[i] += a * v[i];
}

/* Q8_0 rows: 8 int8 codes at p as 8 floats. */
AVX2_INLINE __m256 codes8(const uint8_t *p)
{
    return _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_loadl_epi64((const __m128i *)p)));
}

AVX2 static float x86_dot_q8_0_f32(const uint8_t *k, const float *q, uint32_t n)
{
    __m256 acc = _mm256_setzero_ps();
    for (uint32_t b = 0; b < n / QK8_0; b++, k += sizeof(BlockQ8_0), q += QK8_0) {
        const uint8_t *c = k + offsetof(BlockQ8_0, qs);
        __m256 s0 = _mm256_mul_ps(codes8(c), _mm256_loadu_ps(q));
        __m256 s1 = _mm256_mul_ps(codes8(c + 8), _mm256_loadu_ps(q + 8));
        s0 = _mm256_fmadd_ps(codes8(c + 16), _mm256_loadu_ps(q + 16), s0);
        s1 = _mm256_fmadd_ps(codes8(c + 24), _mm256_loadu_ps(q + 24), s1);
        acc = _mm256_fmadd_ps(_mm256_set1_ps(f16_scalar(k)), _mm256_add_ps(s0, s1), acc);
    }
    return hsum8(acc);
}

AVX2 static void x86_axpy_q8_0(float *out, float a, const uint8_t *v, uint32_t n)
{
    for (uint32_t b = 0; b < n / QK8_0; b++, v += sizeof(BlockQ8_0), out += QK8_0) {
        __m256 ad = _mm256_set1_ps(a * f16_scalar(v));
        for (int j = 0; j < QK8_0; j += 8)
            _mm256_storeu_ps(out + j, _mm256_fmadd_ps(ad, codes8(v + offsetof(BlockQ8_0, qs) + j), _mm256_loadu_ps(out + j)));
    }
}

const KernelSet *kern_x86(void)
{
    static const KernelSet set = {
        .name = "x86-64 AVX2+FMA+F16C",
        .dot =
            {
                [GGML_TYPE_F32] = x86_f32,
                [GGML_TYPE_F16] = x86_f16,
                [GGML_TYPE_BF16] = x86_bf16,
                [GGML_TYPE_Q8_0] = x86_q8_0,
                [GGML_TYPE_Q4_1] = x86_q4_1,
                [GGML_TYPE_Q5_0] = x86_q5_0,
                [GGML_TYPE_Q5_1] = x86_q5_1,
                [GGML_TYPE_IQ4_NL] = x86_iq4_nl,
                [GGML_TYPE_Q2_K] = x86_q2_k,
                [GGML_TYPE_Q3_K] = x86_q3_k,
                [GGML_TYPE_IQ4_XS] = x86_iq4_xs,
                [GGML_TYPE_Q4_K] = x86_q4_k,
                [GGML_TYPE_Q5_K] = x86_q5_k,
                [GGML_TYPE_Q6_K] = x86_q6_k,
            },
        .quantize_q8_0 = x86_quantize_q8_0,
        .quantize_q8_k = x86_quantize_q8_k,
        .dot_f16 = x86_dot_f16,
        .axpy_f16 = x86_axpy_f16,
        .to_f16 = x86_to_f16,
        .silu_mul = x86_silu_mul,
        .rope = x86_rope,
        .exp_sum = x86_exp_sum,
        .scale_max = x86_scale_max,
        .dots_f16 = kern_x86_dots_f16,
        .wsum_f16 = kern_x86_wsum_f16,
        .dot_f32 = x86_dot_f32,
        .axpy_f32 = x86_axpy_f32,
        .dot_q8_0_f32 = x86_dot_q8_0_f32,
        .axpy_q8_0 = x86_axpy_q8_0,
        .gelu_mul = kern_x86_gelu_mul,
        .delta_step = kern_x86_delta_step,
        .causal_conv = kern_x86_causal_conv,
        .dots_f32 = kern_x86_dots_f32,
        .mix_f32 = kern_x86_mix_f32,
        .delta_chunk = 1,
    };
    const PortCpu *c = port_cpu();
    return c->avx2 && c->fma && c->f16c ? &set : NULL;
}

#else

const KernelSet *kern_x86(void)
{
    return NULL;
}

#endif
