/* quant.c - reference decoding of the weight types pith computes with.
 *
 * Block layouts (ggml's, all little-endian):
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
 */
#include "quant.h"

#include <string.h>

#include "ggml_type.h"

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

/* ---- block decoders: one block (or QUANT_MAX_BLOCK plain floats) ------ */

static void dequant_q8_0(const uint8_t *b, float *y)
{
    float d = quant_f16_to_f32(le16(b));
    for (int j = 0; j < 32; j++) y[j] = d * (float)(int8_t)b[2 + j];
}

static void dequant_q4_0(const uint8_t *b, float *y)
{
    float d = quant_f16_to_f32(le16(b));
    const uint8_t *q = b + 2;
    for (int j = 0; j < 16; j++) {
        y[j] = d * (float)((q[j] & 0x0f) - 8);
        y[j + 16] = d * (float)((q[j] >> 4) - 8);
    }
}

/* 6-bit scale and min of sub-block j (0..7) from the 12 packed bytes:
 * sub-blocks 0-3 use the low 6 bits of bytes j and j+4; sub-blocks 4-7 take
 * 4 bits from byte j+4 and their top 2 bits from the spare high bits of
 * bytes j-4 (scale) and j (min). */
static void q4k_scale_min(int j, const uint8_t *s, int *sc, int *m)
{
    if (j < 4) {
        *sc = s[j] & 63;
        *m = s[j + 4] & 63;
    } else {
        *sc = (s[j + 4] & 0x0f) | ((s[j - 4] >> 6) << 4);
        *m = (s[j + 4] >> 4) | ((s[j] >> 6) << 4);
    }
}

static void dequant_q4_k(const uint8_t *b, float *y)
{
    float d = quant_f16_to_f32(le16(b));
    float dmin = quant_f16_to_f32(le16(b + 2));
    const uint8_t *scales = b + 4;
    const uint8_t *q = b + 16;
    for (int pair = 0; pair < 4; pair++) { /* 64 elements: two sub-blocks */
        int sc, m;
        q4k_scale_min(2 * pair, scales, &sc, &m);
        float d1 = d * (float)sc, m1 = dmin * (float)m;
        q4k_scale_min(2 * pair + 1, scales, &sc, &m);
        float d2 = d * (float)sc, m2 = dmin * (float)m;
        for (int l = 0; l < 32; l++) y[l] = d1 * (float)(q[l] & 0x0f) - m1;
        for (int l = 0; l < 32; l++) y[32 + l] = d2 * (float)(q[l] >> 4) - m2;
        q += 32;
        y += 64;
    }
}

static void dequant_q6_k(const uint8_t *b, float *y)
{
    const uint8_t *ql = b;
    const uint8_t *qh = b + 128;
    const int8_t *sc = (const int8_t *)(b + 192);
    float d = quant_f16_to_f32(le16(b + 208));
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

int quant_supported(uint32_t type)
{
    switch (type) {
    case GGML_TYPE_F32:
    case GGML_TYPE_F16:
    case GGML_TYPE_BF16:
    case GGML_TYPE_Q8_0:
    case GGML_TYPE_Q4_0:
    case GGML_TYPE_Q4_K:
    case GGML_TYPE_Q6_K:
        return 1;
    default:
        return 0;
    }
}

uint32_t quant_chunk_elems(uint32_t type)
{
    switch (type) {
    case GGML_TYPE_Q8_0:
    case GGML_TYPE_Q4_0:
        return 32;
    default:
        return QUANT_MAX_BLOCK; /* K-quants, and runs of plain floats */
    }
}

/* Decodes `count` (<= QUANT_MAX_BLOCK; one block for quantized types)
 * elements starting at element `first` of the row. */
static void dequant_chunk(uint32_t type, const uint8_t *row, uint64_t first, uint32_t count, float *y)
{
    switch (type) {
    case GGML_TYPE_F32:
        for (uint32_t j = 0; j < count; j++) y[j] = bits_to_f32(le32(row + 4 * (first + j)));
        return;
    case GGML_TYPE_F16:
        for (uint32_t j = 0; j < count; j++) y[j] = quant_f16_to_f32(le16(row + 2 * (first + j)));
        return;
    case GGML_TYPE_BF16:
        for (uint32_t j = 0; j < count; j++) y[j] = quant_bf16_to_f32(le16(row + 2 * (first + j)));
        return;
    case GGML_TYPE_Q8_0:
        dequant_q8_0(row + (first / 32) * 34, y);
        return;
    case GGML_TYPE_Q4_0:
        dequant_q4_0(row + (first / 32) * 18, y);
        return;
    case GGML_TYPE_Q4_K:
        dequant_q4_k(row + (first / 256) * 144, y);
        return;
    case GGML_TYPE_Q6_K:
        dequant_q6_k(row + (first / 256) * 210, y);
        return;
    default:
        memset(y, 0, count * sizeof *y); /* unreachable: model_load refuses other types */
        return;
    }
}

static uint32_t chunk_len(uint32_t type, uint64_t done, uint64_t n)
{
    uint64_t c = quant_chunk_elems(type);
    return (uint32_t)(n - done < c ? n - done : c);
}

void quant_dequant_row(uint32_t type, const uint8_t *row, float *out, uint64_t n)
{
    for (uint64_t i = 0; i < n;) {
        uint32_t c = chunk_len(type, i, n);
        dequant_chunk(type, row, i, c, out + i);
        i += c;
    }
}

float quant_dot_f32(const float *a, const float *b, uint64_t n)
{
    float s = 0.0f;
    for (uint64_t i = 0; i < n; i++) s += a[i] * b[i];
    return s;
}

float quant_dot(uint32_t type, const uint8_t *row, const float *x, uint64_t n)
{
    float blk[QUANT_MAX_BLOCK];
    float s = 0.0f;
    for (uint64_t i = 0; i < n;) {
        uint32_t c = chunk_len(type, i, n);
        dequant_chunk(type, row, i, c, blk);
        for (uint32_t j = 0; j < c; j++) s += blk[j] * x[i + j];
        i += c;
    }
    return s;
}

#define DOT_GROUP 64 /* accumulators kept at once */

void quant_dot_batch(uint32_t type, const uint8_t *row, uint64_t n, const float *x, uint64_t x_stride,
                     int nb, float *out, uint64_t out_stride)
{
    float blk[QUANT_MAX_BLOCK];
    float acc[DOT_GROUP];
    for (int b0 = 0; b0 < nb; b0 += DOT_GROUP) {
        int g = nb - b0 < DOT_GROUP ? nb - b0 : DOT_GROUP;
        for (int b = 0; b < g; b++) acc[b] = 0.0f;
        for (uint64_t i = 0; i < n;) {
            uint32_t c = chunk_len(type, i, n);
            dequant_chunk(type, row, i, c, blk);
            for (int b = 0; b < g; b++) {
                const float *xb = x + (uint64_t)(b0 + b) * x_stride + i;
                float s = acc[b];
                for (uint32_t j = 0; j < c; j++) s += blk[j] * xb[j];
                acc[b] = s;
            }
            i += c;
        }
        for (int b = 0; b < g; b++) out[(uint64_t)(b0 + b) * out_stride] = acc[b];
    }
}
