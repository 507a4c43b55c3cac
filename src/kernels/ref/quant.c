/* quant.c - reference decoding of the weight types pith computes with.
 *
 * Block layouts (ggml's, all little-endian; the structs, offsets and sizes
 * are src/base/ggml_type.h's Block*, this says what the fields mean):
 *   Q8_0  32 elements, 34 bytes:  f16 d, int8 q[32];               x = d*q
 *   Q4_0  32 elements, 18 bytes:  f16 d, u8 nibbles[16];           x = d*(nib-8)
 *         element j (j<16) is the low nibble of byte j, element j+16 the high one.
 *   Q4_K  256 elements, 144 bytes: f16 d, f16 dmin, u8 scales[12], u8 qs[128]
 *         8 sub-blocks of 32 with a 6-bit scale sc and 6-bit min m each;
 *         x = d*sc*nib - dmin*m. Each 32 bytes of qs hold two sub-blocks:
 *         low nibbles the first, high nibbles the second.
 *   Q6_K  256 elements, 210 bytes: u8 ql[128], u8 qh[64], int8 sc[16], f16 d
 *         6-bit values (4 low bits in ql, 2 high bits in qh) minus 32,
 *         16 sub-blocks of 16 with an 8-bit signed scale; x = d*sc*q.
 *   Q4_1  32 elements, 20 bytes:  f16 d, f16 m, u8 nibbles[16];    x = d*nib + m
 *   Q5_0  32 elements, 22 bytes:  f16 d, u32 qh, u8 nibbles[16];   x = d*(q-16),
 *         q = nibble | (bit j of qh) << 4 (element j, j = 0..31; nibbles as Q4_0)
 *   Q5_1  32 elements, 24 bytes:  f16 d, f16 m, u32 qh, u8 nibbles[16]; x = d*q + m
 *   IQ4_NL 32 elements, 18 bytes: f16 d, u8 nibbles[16];           x = d*KV[nib]
 *         (KV: the 16 non-uniform levels below; nibbles as Q4_0)
 *   Q2_K  256 elements, 84 bytes: u8 scales[16], u8 qs[64], f16 d, f16 dmin
 *         16 sub-blocks of 16, scale byte = sc | m << 4; x = d*sc*q2 - dmin*m.
 *         Each 32 bytes of qs hold 128 elements: 2-bit field k (shift 2k) of
 *         byte l is element 32k + l.
 *   Q3_K  256 elements, 110 bytes: u8 hmask[32], u8 qs[64], u8 scales[12], f16 d
 *         q3 = q2 (as Q2_K) - (high bit clear ? 4 : 0); the high bit of element
 *         e is bit e/32 of hmask[e%32]; 16 six-bit scales (minus 32): low 4 bits
 *         in scales[0..7] (low nibbles, then high nibbles), top 2 bits in
 *         scales[8..11]; x = d*(sc-32)*q3.
 *   Q5_K  256 elements, 176 bytes: f16 d, f16 dmin, u8 scales[12], u8 qh[32], u8 qs[128]
 *         as Q4_K plus a fifth bit: element 32j+l takes bit j of qh[l].
 *   IQ4_XS 256 elements, 136 bytes: f16 d, u16 scales_h, u8 scales_l[4], u8 qs[128]
 *         8 sub-blocks of 32, 6-bit scale ls (4 bits in scales_l, 2 in scales_h),
 *         x = d*(ls-32)*KV[nib]; 16 bytes of qs per sub-block, nibbles as Q4_0.
 */
#include "../quant.h"

#include <math.h>
#include <string.h>

#include "../../base/ggml_type.h"
#include "kernels_ref.h"

/* ---- scalar conversions ----------------------------------------------- */

static float bits_to_f32(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static uint32_t f32_to_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

float quant_f16_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000) << 16;
    uint32_t exp = (h >> 10) & 0x1f;
    uint32_t man = h & 0x3ff;
    if (exp == 0) {
        /* zero or subnormal: man * 2^-24, exact in float */
        float v = (float)man * (1.0f / 16777216.0f);
        return sign ? -v : v;
    }
    if (exp == 31) return bits_to_f32(sign | 0x7f800000u | (man << 13));
    return bits_to_f32(sign | ((exp + 112) << 23) | (man << 13));
}

uint16_t quant_f32_to_f16(float f)
{
    uint32_t x = f32_to_bits(f);
    uint32_t sign = (x >> 16) & 0x8000;
    uint32_t exp = (x >> 23) & 0xff;
    uint32_t man = x & 0x7fffff;
    if (exp == 0xff) return (uint16_t)(sign | 0x7c00 | (man ? 0x200 | (man >> 13) : 0));
    int e = (int)exp - 127 + 15; /* biased half exponent */
    if (e >= 31) return (uint16_t)(sign | 0x7c00);
    if (e <= 0) {
        /* subnormal half (or zero): count units of 2^-24, rounding to even */
        if (e < -10) return (uint16_t)sign;
        man |= 0x800000;
        uint32_t shift = (uint32_t)(14 - e);
        uint32_t h = man >> shift;
        uint32_t rem = man & ((1u << shift) - 1);
        uint32_t halfway = 1u << (shift - 1);
        if (rem > halfway || (rem == halfway && (h & 1))) h++;
        return (uint16_t)(sign | h);
    }
    uint32_t h = ((uint32_t)e << 10) | (man >> 13);
    uint32_t rem = man & 0x1fff;
    if (rem > 0x1000 || (rem == 0x1000 && (h & 1))) h++; /* a carry may reach inf: correct */
    return (uint16_t)(sign | h);
}

float quant_bf16_to_f32(uint16_t h)
{
    return bits_to_f32((uint32_t)h << 16);
}

static uint16_t le16(const uint8_t *p)
{
    return (uint16_t)(p[0] | (p[1] << 8));
}

static uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}

/* ---- reference decoders (the type table's `decode`) ---------------------
 * A quantized type's decoder decodes one block (n is its block size); the
 * plain float types' decode n elements (blocks of one), so a row of them
 * costs one call per QUANT_MAX_BLOCK elements, not one per element. */

void quant_dequant_f32(const uint8_t *src, float *y, uint64_t n)
{
    for (uint64_t j = 0; j < n; j++) y[j] = bits_to_f32(le32(src + 4 * j));
}

void quant_dequant_f16(const uint8_t *src, float *y, uint64_t n)
{
    for (uint64_t j = 0; j < n; j++) y[j] = quant_f16_to_f32(le16(src + 2 * j));
}

void quant_dequant_bf16(const uint8_t *src, float *y, uint64_t n)
{
    for (uint64_t j = 0; j < n; j++) y[j] = quant_bf16_to_f32(le16(src + 2 * j));
}

void quant_dequant_q8_0(const uint8_t *b, float *y, uint64_t n)
{
    (void)n; /* one block */
    float d = quant_f16_to_f32(le16(b));
    for (int j = 0; j < QK8_0; j++) y[j] = d * (float)(int8_t)b[Q8_CODES + j];
}

void quant_dequant_q4_0(const uint8_t *b, float *y, uint64_t n)
{
    (void)n; /* one block */
    float d = quant_f16_to_f32(le16(b));
    const uint8_t *q = b + offsetof(BlockQ4_0, qs);
    for (int j = 0; j < QK4_0 / 2; j++) {
        y[j] = d * (float)((q[j] & 0x0f) - 8);
        y[j + QK4_0 / 2] = d * (float)((q[j] >> 4) - 8);
    }
}

/* 6-bit scale and min of sub-block j (0..7) from the 12 packed bytes:
 * sub-blocks 0-3 use the low 6 bits of bytes j and j+4; sub-blocks 4-7 take
 * 4 bits from byte j+4 and their top 2 bits from the spare high bits of
 * bytes j-4 (scale) and j (min). */
void quant_q4k_scale_min(int j, const uint8_t *s, int *sc, int *m)
{
    if (j < 4) {
        *sc = s[j] & 63;
        *m = s[j + 4] & 63;
    } else {
        *sc = (s[j + 4] & 0x0f) | ((s[j - 4] >> 6) << 4);
        *m = (s[j + 4] >> 4) | ((s[j] >> 6) << 4);
    }
}

void quant_dequant_q4_k(const uint8_t *b, float *y, uint64_t n)
{
    (void)n; /* one block */
    float d = quant_f16_to_f32(le16(b));
    float dmin = quant_f16_to_f32(le16(b + offsetof(BlockQ4_K, dmin)));
    const uint8_t *scales = b + offsetof(BlockQ4_K, scales);
    const uint8_t *q = b + offsetof(BlockQ4_K, qs);
    for (int pair = 0; pair < 4; pair++) { /* 64 elements: two sub-blocks */
        int sc, m;
        quant_q4k_scale_min(2 * pair, scales, &sc, &m);
        float d1 = d * (float)sc, m1 = dmin * (float)m;
        quant_q4k_scale_min(2 * pair + 1, scales, &sc, &m);
        float d2 = d * (float)sc, m2 = dmin * (float)m;
        for (int l = 0; l < 32; l++) y[l] = d1 * (float)(q[l] & 0x0f) - m1;
        for (int l = 0; l < 32; l++) y[32 + l] = d2 * (float)(q[l] >> 4) - m2;
        q += 32;
        y += 64;
    }
}

void quant_dequant_q6_k(const uint8_t *b, float *y, uint64_t n)
{
    (void)n; /* one block */
    const uint8_t *ql = b + offsetof(BlockQ6_K, ql);
    const uint8_t *qh = b + offsetof(BlockQ6_K, qh);
    const int8_t *sc = (const int8_t *)(b + offsetof(BlockQ6_K, scales));
    float d = quant_f16_to_f32(le16(b + offsetof(BlockQ6_K, d)));
    for (int half = 0; half < 2; half++) { /* 128 elements each */
        for (int l = 0; l < 32; l++) {
            int is = l / 16;
            int q1 = ((ql[l] & 0x0f) | (((qh[l] >> 0) & 3) << 4)) - 32;
            int q2 = ((ql[l + 32] & 0x0f) | (((qh[l] >> 2) & 3) << 4)) - 32;
            int q3 = ((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32;
            int q4 = ((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32;
            y[l] = d * (float)sc[is] * (float)q1;
            y[l + 32] = d * (float)sc[is + 2] * (float)q2;
            y[l + 64] = d * (float)sc[is + 4] * (float)q3;
            y[l + 96] = d * (float)sc[is + 6] * (float)q4;
        }
        y += 128;
        ql += 64;
        qh += 32;
        sc += 8;
    }
}

/* The 16 levels of IQ4_NL and IQ4_XS. */
const int8_t quant_iq4nl_values[16] = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};

void quant_dequant_q4_1(const uint8_t *b, float *y, uint64_t n)
{
    (void)n; /* one block */
    float d = quant_f16_to_f32(le16(b)), m = quant_f16_to_f32(le16(b + offsetof(BlockQ4_1, m)));
    const uint8_t *q = b + offsetof(BlockQ4_1, qs);
    for (int j = 0; j < QK4_1 / 2; j++) {
        y[j] = d * (float)(q[j] & 0x0f) + m;
        y[j + QK4_1 / 2] = d * (float)(q[j] >> 4) + m;
    }
}

/* Q5_0 (with_min 0: codes minus 16) and Q5_1 (with_min 1: plus m). */
static void dequant_q5(const uint8_t *b, float *y, int with_min)
{
    float d = quant_f16_to_f32(le16(b));
    float m = with_min ? quant_f16_to_f32(le16(b + offsetof(BlockQ5_1, m))) : 0.0f;
    const uint8_t *p = b + (with_min ? offsetof(BlockQ5_1, qh) : offsetof(BlockQ5_0, qh));
    uint32_t qh = le32(p);
    const uint8_t *q = p + 4;
    for (int j = 0; j < QK5_0 / 2; j++) {
        int lo = (q[j] & 0x0f) | (int)(((qh >> j) & 1) << 4);
        int hi = (q[j] >> 4) | (int)(((qh >> (j + QK5_0 / 2)) & 1) << 4);
        if (with_min) {
            y[j] = d * (float)lo + m;
            y[j + QK5_0 / 2] = d * (float)hi + m;
        } else {
            y[j] = d * (float)(lo - 16);
            y[j + QK5_0 / 2] = d * (float)(hi - 16);
        }
    }
}

void quant_dequant_q5_0(const uint8_t *b, float *y, uint64_t n)
{
    (void)n; /* one block */
    dequant_q5(b, y, 0);
}

void quant_dequant_q5_1(const uint8_t *b, float *y, uint64_t n)
{
    (void)n; /* one block */
    dequant_q5(b, y, 1);
}

void quant_dequant_iq4_nl(const uint8_t *b, float *y, uint64_t n)
{
    (void)n; /* one block */
    float d = quant_f16_to_f32(le16(b));
    const uint8_t *q = b + offsetof(BlockIQ4_NL, qs);
    for (int j = 0; j < QK4_NL / 2; j++) {
        y[j] = d * (float)quant_iq4nl_values[q[j] & 0x0f];
        y[j + QK4_NL / 2] = d * (float)quant_iq4nl_values[q[j] >> 4];
    }
}

void quant_dequant_q2_k(const uint8_t *b, float *y, uint64_t n)
{
    (void)n; /* one block */
    const uint8_t *sc = b + offsetof(BlockQ2_K, scales), *q = b + offsetof(BlockQ2_K, qs);
    float d = quant_f16_to_f32(le16(b + offsetof(BlockQ2_K, d))), dmin = quant_f16_to_f32(le16(b + offsetof(BlockQ2_K, dmin)));
    for (int e = 0; e < QK_K; e++) {
        int half = e / 128, k = (e % 128) / 32, l = e % 32;
        int q2 = (q[32 * half + l] >> (2 * k)) & 3;
        int s = sc[e / 16];
        y[e] = d * (float)(s & 15) * (float)q2 - dmin * (float)(s >> 4);
    }
}

int quant_q3k_scale(const uint8_t *s, int i)
{
    int lo = i < 8 ? (s[i] & 15) : (s[i - 8] >> 4);
    int hi = (s[8 + i % 4] >> (2 * (i / 4))) & 3;
    return (lo | (hi << 4)) - 32;
}

void quant_dequant_q3_k(const uint8_t *b, float *y, uint64_t n)
{
    (void)n; /* one block */
    const uint8_t *hm = b + offsetof(BlockQ3_K, hmask), *q = b + offsetof(BlockQ3_K, qs);
    const uint8_t *scales = b + offsetof(BlockQ3_K, scales);
    float d = quant_f16_to_f32(le16(b + offsetof(BlockQ3_K, d)));
    for (int e = 0; e < QK_K; e++) {
        int half = e / 128, k = (e % 128) / 32, l = e % 32;
        int q3 = ((q[32 * half + l] >> (2 * k)) & 3) - ((hm[l] >> (e / 32)) & 1 ? 0 : 4);
        y[e] = d * (float)quant_q3k_scale(scales, e / 16) * (float)q3;
    }
}

void quant_dequant_q5_k(const uint8_t *b, float *y, uint64_t n)
{
    (void)n; /* one block */
    float d = quant_f16_to_f32(le16(b));
    float dmin = quant_f16_to_f32(le16(b + offsetof(BlockQ5_K, dmin)));
    const uint8_t *scales = b + offsetof(BlockQ5_K, scales), *qh = b + offsetof(BlockQ5_K, qh);
    const uint8_t *q = b + offsetof(BlockQ5_K, qs);
    for (int e = 0; e < QK_K; e++) {
        int j = e / 32, l = e % 32;
        int sc, m;
        quant_q4k_scale_min(j, scales, &sc, &m);
        int nib = j % 2 == 0 ? (q[32 * (j / 2) + l] & 15) : (q[32 * (j / 2) + l] >> 4);
        int q5 = nib | (((qh[l] >> j) & 1) << 4);
        y[e] = d * (float)sc * (float)q5 - dmin * (float)m;
    }
}

void quant_dequant_iq4_xs(const uint8_t *b, float *y, uint64_t n)
{
    (void)n; /* one block */
    float d = quant_f16_to_f32(le16(b));
    uint16_t sh = le16(b + offsetof(BlockIQ4_XS, scales_h));
    const uint8_t *sl = b + offsetof(BlockIQ4_XS, scales_l), *q = b + offsetof(BlockIQ4_XS, qs);
    for (int j = 0; j < 8; j++) {
        int ls = ((sl[j / 2] >> (4 * (j % 2))) & 15) | (((sh >> (2 * j)) & 3) << 4);
        float dl = d * (float)(ls - 32);
        for (int l = 0; l < 16; l++) {
            y[32 * j + l] = dl * (float)quant_iq4nl_values[q[16 * j + l] & 15];
            y[32 * j + l + 16] = dl * (float)quant_iq4nl_values[q[16 * j + l] >> 4];
        }
    }
}

float quant_dot_f32(const float *a, const float *b, uint64_t n)
{
    float s = 0.0f;
    for (uint64_t i = 0; i < n; i++) s += a[i] * b[i];
    return s;
}

/* ---- reference quantizers (to write models; simple, not optimal) ---- */
/* One block each; the writers below run them over a row. */

static int clampi(int v, int lo, int hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

static void put_le16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}

/* Q4_0: d = (the value of largest magnitude) / -8, so that value maps to 0
 * and the rest round into 0..15. */
static void quantize_q4_0(const float *x, uint8_t *b)
{
    float amax = 0.0f, mx = 0.0f;
    for (int j = 0; j < QK4_0; j++)
        if (fabsf(x[j]) > amax) amax = fabsf(x[j]), mx = x[j];
    float d = mx / -8.0f, id = d != 0.0f ? 1.0f / d : 0.0f;
    put_le16(b, quant_f32_to_f16(d));
    for (int j = 0; j < QK4_0 / 2; j++) {
        int lo = clampi((int)lrintf(x[j] * id) + 8, 0, 15);
        int hi = clampi((int)lrintf(x[j + QK4_0 / 2] * id) + 8, 0, 15);
        b[Q4_CODES + j] = (uint8_t)(lo | (hi << 4));
    }
}

static void quantize_q8_0(const float *x, uint8_t *b)
{
    float amax = 0.0f;
    for (int j = 0; j < QK8_0; j++) amax = fmaxf(amax, fabsf(x[j]));
    float d = amax / 127.0f, id = d != 0.0f ? 1.0f / d : 0.0f;
    put_le16(b, quant_f32_to_f16(d));
    for (int j = 0; j < QK8_0; j++)
        b[Q8_CODES + j] = (uint8_t)(int8_t)clampi((int)lrintf(x[j] * id), -127, 127);
}

/* Q4_K: per sub-block of 32, scale = (max - min)/15 and min = -min(0, ..),
 * both then quantized to 6 bits against the block's largest. */
static void quantize_q4_k(const float *x, uint8_t *b)
{
    float scale[8], mins[8], smax = 0.0f, mmax = 0.0f;
    for (int j = 0; j < 8; j++) {
        float lo = 0.0f, hi = 0.0f;
        for (int l = 0; l < 32; l++) lo = fminf(lo, x[32 * j + l]), hi = fmaxf(hi, x[32 * j + l]);
        scale[j] = (hi - lo) / 15.0f;
        mins[j] = -lo;
        smax = fmaxf(smax, scale[j]);
        mmax = fmaxf(mmax, mins[j]);
    }
    float d = smax / 63.0f, dmin = mmax / 63.0f;
    uint16_t dh = quant_f32_to_f16(d), mh = quant_f32_to_f16(dmin);
    d = quant_f16_to_f32(dh), dmin = quant_f16_to_f32(mh);
    int sc[8], m[8];
    for (int j = 0; j < 8; j++) {
        sc[j] = d > 0.0f ? clampi((int)lrintf(scale[j] / d), 0, 63) : 0;
        m[j] = dmin > 0.0f ? clampi((int)lrintf(mins[j] / dmin), 0, 63) : 0;
    }
    put_le16(b, dh);
    put_le16(b + offsetof(BlockQ4_K, dmin), mh);
    uint8_t *s = b + offsetof(BlockQ4_K, scales);
    memset(s, 0, K_SCALE_SIZE);
    for (int j = 0; j < 4; j++) {
        s[j] = (uint8_t)sc[j];
        s[j + 4] = (uint8_t)m[j];
    }
    for (int j = 4; j < 8; j++) {
        s[j + 4] = (uint8_t)((sc[j] & 15) | ((m[j] & 15) << 4));
        s[j - 4] |= (uint8_t)((sc[j] >> 4) << 6);
        s[j] |= (uint8_t)((m[j] >> 4) << 6);
    }
    uint8_t *q = b + offsetof(BlockQ4_K, qs);
    memset(q, 0, QK_K / 2);
    for (int j = 0; j < 8; j++) {
        float step = d * (float)sc[j], off = dmin * (float)m[j];
        for (int l = 0; l < 32; l++) {
            int v = step > 0.0f ? clampi((int)lrintf((x[32 * j + l] + off) / step), 0, 15) : 0;
            q[32 * (j / 2) + l] |= (uint8_t)(j % 2 == 0 ? v : v << 4);
        }
    }
}

/* Q6_K: per sub-block of 16, scale = amax/31, quantized to int8 against
 * the block's largest. */
static void quantize_q6_k(const float *x, uint8_t *b)
{
    float scale[16], smax = 0.0f;
    for (int i = 0; i < 16; i++) {
        float amax = 0.0f;
        for (int l = 0; l < 16; l++) amax = fmaxf(amax, fabsf(x[16 * i + l]));
        scale[i] = amax / 31.0f;
        smax = fmaxf(smax, scale[i]);
    }
    float d = smax / 127.0f;
    uint16_t dh = quant_f32_to_f16(d);
    d = quant_f16_to_f32(dh);
    memset(b, 0, sizeof(BlockQ6_K));
    for (int i = 0; i < 16; i++) {
        int sc = d > 0.0f ? clampi((int)lrintf(scale[i] / d), -128, 127) : 0;
        b[Q6_SCALES + i] = (uint8_t)(int8_t)sc;
        float step = d * (float)sc;
        for (int l = 0; l < 16; l++) {
            int e = 16 * i + l;
            int q = (step != 0.0f ? clampi((int)lrintf(x[e] / step), -32, 31) : 0) + 32;
            int half = e / 128, r = e % 128, quarter = r / 32, c = r % 32;
            b[Q6_QL + half * 64 + c + (quarter & 1) * 32] |= (uint8_t)(quarter < 2 ? (q & 15) : (q & 15) << 4);
            b[Q6_QH + half * 32 + c] |= (uint8_t)((q >> 4) << (2 * quarter));
        }
    }
    put_le16(b + offsetof(BlockQ6_K, d), dh);
}

/* The writers, whole rows (the type table's `quantize`). */

void quant_quantize_f32(const float *x, uint8_t *out, uint64_t n)
{
    memcpy(out, x, n * sizeof *x);
}

void quant_quantize_f16(const float *x, uint8_t *out, uint64_t n)
{
    for (uint64_t i = 0; i < n; i++) put_le16(out + 2 * i, quant_f32_to_f16(x[i]));
}

void quant_quantize_bf16(const float *x, uint8_t *out, uint64_t n)
{
    for (uint64_t i = 0; i < n; i++) {
        uint32_t u = f32_to_bits(x[i]);
        u += 0x7fffu + ((u >> 16) & 1); /* round to nearest even (finite inputs) */
        put_le16(out + 2 * i, (uint16_t)(u >> 16));
    }
}

void quant_quantize_q8_0(const float *x, uint8_t *out, uint64_t n)
{
    for (uint64_t i = 0; i < n / QK8_0; i++) quantize_q8_0(x + QK8_0 * i, out + sizeof(BlockQ8_0) * i);
}

void quant_quantize_q4_0(const float *x, uint8_t *out, uint64_t n)
{
    for (uint64_t i = 0; i < n / QK4_0; i++) quantize_q4_0(x + QK4_0 * i, out + sizeof(BlockQ4_0) * i);
}

void quant_quantize_q4_k(const float *x, uint8_t *out, uint64_t n)
{
    for (uint64_t i = 0; i < n / QK_K; i++) quantize_q4_k(x + QK_K * i, out + sizeof(BlockQ4_K) * i);
}

void quant_quantize_q6_k(const float *x, uint8_t *out, uint64_t n)
{
    for (uint64_t i = 0; i < n / QK_K; i++) quantize_q6_k(x + QK_K * i, out + sizeof(BlockQ6_K) * i);
}
