/* test_quant.c - weight types: conversions, hand-built blocks, dot == dequant. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../src/base/ggml_type.h"
#include "../src/kernels/quant.h"
#include "check.h"
#include "tools/test_rng.h"

static TestRng rng = {0x9e3779b97f4a7c15ull};
static uint32_t rnd(void)
{
    return test_rng_u32(&rng);
}
static float rndf(void) /* [-1, 1) */
{
    return test_rng_f(&rng);
}

static void put16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}

static float f32_of_bits(uint32_t u)
{
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static void test_f16(void)
{
    CHECK(quant_f16_to_f32(0x3c00) == 1.0f, "f16 1.0");
    CHECK(quant_f16_to_f32(0xc000) == -2.0f, "f16 -2.0");
    CHECK(quant_f16_to_f32(0x7bff) == 65504.0f, "f16 max 65504");
    CHECK(quant_f16_to_f32(0x0001) == ldexpf(1.0f, -24), "f16 smallest subnormal 2^-24");
    CHECK(quant_f16_to_f32(0x0400) == ldexpf(1.0f, -14), "f16 smallest normal 2^-14");
    CHECK(isinf(quant_f16_to_f32(0x7c00)) && quant_f16_to_f32(0x7c00) > 0, "f16 +inf");
    CHECK(isnan(quant_f16_to_f32(0x7e00)), "f16 nan");
    CHECK(signbit(quant_f16_to_f32(0x8000)) && quant_f16_to_f32(0x8000) == 0.0f, "f16 -0");
    CHECK(quant_f16_to_f32(0x3555) == 0.333251953125f, "f16 0x3555 = 0.333251953125");

    int bad = 0;
    for (uint32_t h = 0; h < 65536; h++) {
        if ((h & 0x7c00) == 0x7c00 && (h & 0x3ff)) continue; /* NaNs */
        if (quant_f32_to_f16(quant_f16_to_f32((uint16_t)h)) != h) bad++;
    }
    CHECK(bad == 0, "f16 -> f32 -> f16 round trip for every non-NaN half (%d bad)", bad);

    CHECK(quant_f32_to_f16(1.0f + ldexpf(1.0f, -11)) == 0x3c00, "f16 tie rounds to even (down)");
    CHECK(quant_f32_to_f16(1.0f + 3 * ldexpf(1.0f, -11)) == 0x3c02, "f16 tie rounds to even (up)");
    CHECK(quant_f32_to_f16(1.0f + ldexpf(1.0f, -11) + ldexpf(1.0f, -13)) == 0x3c01, "f16 above half rounds up");
    CHECK(quant_f32_to_f16(65520.0f) == 0x7c00, "f16 65520 rounds to inf");
    CHECK(quant_f32_to_f16(65519.0f) == 0x7bff, "f16 65519 rounds to max");
    CHECK(quant_f32_to_f16(1e-8f) == 0x0000, "f16 tiny -> 0");
    CHECK(quant_f32_to_f16(-1e-8f) == 0x8000, "f16 tiny negative -> -0");
    CHECK(quant_f32_to_f16(ldexpf(1.0f, -25)) == 0x0000, "f16 2^-25 (tie) -> 0");
    CHECK(quant_f32_to_f16(3 * ldexpf(1.0f, -25)) == 0x0002, "f16 3*2^-25 (tie) -> 2 units");
    CHECK(quant_f32_to_f16(ldexpf(1.0f, -25) * 1.5f) == 0x0001, "f16 1.5*2^-25 -> 1 unit");
    CHECK(quant_f32_to_f16(ldexpf(1023.5f, -24)) == 0x0400, "f16 subnormal rounds up into normal");
    CHECK(quant_f32_to_f16(f32_of_bits(0x7f800000)) == 0x7c00, "f16 inf");
    CHECK((quant_f32_to_f16(f32_of_bits(0x7fc00000)) & 0x7fff) > 0x7c00, "f16 nan stays nan");
    CHECK(quant_f32_to_f16(1e6f) == 0x7c00, "f16 overflow -> inf");

    CHECK(quant_bf16_to_f32(0x3f80) == 1.0f, "bf16 1.0");
    CHECK(quant_bf16_to_f32(0xc0a0) == -5.0f, "bf16 -5.0");
}

/* ---- hand-built blocks ------------------------------------------------ */

static void test_q8_0(void)
{
    uint8_t b[2 * 34];
    float want[64];
    put16(b, 0x3800); /* d = 0.5 */
    put16(b + 34, 0xc000); /* d = -2 */
    for (int j = 0; j < 32; j++) {
        int8_t q = (int8_t)(j * 8 - 128);
        b[2 + j] = (uint8_t)q;
        want[j] = 0.5f * q;
        int8_t q2 = (int8_t)(127 - j);
        b[34 + 2 + j] = (uint8_t)q2;
        want[32 + j] = -2.0f * q2;
    }
    float got[64];
    quant_dequant_row(GGML_TYPE_Q8_0, b, got, 64);
    CHECK(memcmp(got, want, sizeof got) == 0, "Q8_0 hand-built blocks decode");
}

static void test_q4_0(void)
{
    uint8_t b[18];
    float want[32];
    put16(b, 0x4000); /* d = 2 */
    for (int j = 0; j < 16; j++) {
        int lo = j, hi = 15 - j;
        b[2 + j] = (uint8_t)(lo | (hi << 4));
        want[j] = 2.0f * (lo - 8);
        want[j + 16] = 2.0f * (hi - 8);
    }
    float got[32];
    quant_dequant_row(GGML_TYPE_Q4_0, b, got, 32);
    CHECK(memcmp(got, want, sizeof got) == 0, "Q4_0 hand-built block decodes (low nibbles first, minus 8)");
}

/* Packs 8 six-bit scales and mins the way the Q4_K layout documents. */
static void pack_q4k_scales(uint8_t *s, const int *sc, const int *m)
{
    memset(s, 0, 12);
    for (int j = 0; j < 4; j++) {
        s[j] = (uint8_t)(sc[j] & 63);
        s[j + 4] = (uint8_t)(m[j] & 63);
    }
    for (int j = 4; j < 8; j++) {
        s[j + 4] = (uint8_t)((sc[j] & 15) | ((m[j] & 15) << 4));
        s[j - 4] |= (uint8_t)((sc[j] >> 4) << 6);
        s[j] |= (uint8_t)((m[j] >> 4) << 6);
    }
}

static void test_q4_k(void)
{
    uint8_t b[144];
    int sc[8] = {1, 63, 17, 32, 48, 5, 60, 33}, m[8] = {0, 2, 63, 40, 16, 59, 1, 31};
    int q[256];
    float want[256];
    put16(b, 0x3c00);     /* d = 1 */
    put16(b + 2, 0x3800); /* dmin = 0.5 */
    pack_q4k_scales(b + 4, sc, m);
    memset(b + 16, 0, 128);
    for (int e = 0; e < 256; e++) {
        q[e] = (int)(rnd() & 15);
        int sub = e / 32, l = e % 32;
        uint8_t *byte = b + 16 + 32 * (sub / 2) + l;
        *byte |= (uint8_t)(sub % 2 == 0 ? q[e] : q[e] << 4);
        want[e] = 1.0f * sc[sub] * q[e] - 0.5f * m[sub];
    }
    float got[256];
    quant_dequant_row(GGML_TYPE_Q4_K, b, got, 256);
    int bad = 0;
    for (int e = 0; e < 256; e++) bad += got[e] != want[e];
    CHECK(bad == 0, "Q4_K hand-built block decodes (6-bit scales/mins, %d bad)", bad);
}

static void test_q6_k(void)
{
    uint8_t b[210];
    int q[256];
    int8_t sc[16];
    float want[256];
    memset(b, 0, sizeof b);
    for (int i = 0; i < 16; i++) sc[i] = (int8_t)((int)(rnd() % 256) - 128);
    memcpy(b + 192, sc, 16);
    put16(b + 208, 0x3400); /* d = 0.25 */
    for (int e = 0; e < 256; e++) {
        q[e] = (int)(rnd() & 63);
        int half = e / 128, r = e % 128, quarter = r / 32, l = r % 32;
        uint8_t *ql = b + half * 64 + l + (quarter & 1) * 32;
        *ql |= (uint8_t)(quarter < 2 ? (q[e] & 15) : (q[e] & 15) << 4);
        b[128 + half * 32 + l] |= (uint8_t)((q[e] >> 4) << (2 * quarter));
        int scale = sc[half * 8 + l / 16 + 2 * quarter];
        want[e] = 0.25f * (float)scale * (float)(q[e] - 32);
    }
    float got[256];
    quant_dequant_row(GGML_TYPE_Q6_K, b, got, 256);
    int bad = 0;
    for (int e = 0; e < 256; e++) bad += got[e] != want[e];
    CHECK(bad == 0, "Q6_K hand-built block decodes (%d bad)", bad);
}

/* ---- the other types, built from their documented layouts ------------- */

static int check_block(uint32_t type, const uint8_t *b, const float *want, int n)
{
    float got[256];
    quant_dequant_row(type, b, got, (uint64_t)n);
    int bad = 0;
    for (int e = 0; e < n; e++) bad += got[e] != want[e];
    return bad;
}

/* element e (< 32) of a block of 32 stored as nibbles: byte e % 16, low
 * nibble for e < 16, high for e >= 16 */
static void put_nibble(uint8_t *q, int e, int v)
{
    q[e % 16] |= (uint8_t)(e < 16 ? v : v << 4);
}

static void test_small_blocks(void)
{
    static const int levels[16] = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};
    uint8_t b[32];
    float want[32];
    int code[32];
    for (int e = 0; e < 32; e++) code[e] = (int)(rnd() & 31);

    memset(b, 0, sizeof b); /* Q4_1: d = 2, m = -1 */
    put16(b, 0x4000), put16(b + 2, 0xbc00);
    for (int e = 0; e < 32; e++) put_nibble(b + 4, e, code[e] & 15), want[e] = 2.0f * (code[e] & 15) - 1.0f;
    CHECK(check_block(GGML_TYPE_Q4_1, b, want, 32) == 0, "Q4_1 hand-built block decodes (d*q + m)");

    memset(b, 0, sizeof b); /* Q5_0: d = 0.5, fifth bit e of qh */
    put16(b, 0x3800);
    for (int e = 0; e < 32; e++) {
        put_nibble(b + 6, e, code[e] & 15);
        b[2 + e / 8] |= (uint8_t)((code[e] >> 4) << (e % 8));
        want[e] = 0.5f * (float)(code[e] - 16);
    }
    CHECK(check_block(GGML_TYPE_Q5_0, b, want, 32) == 0, "Q5_0 hand-built block decodes (d*(q-16), qh bit e)");

    memset(b, 0, sizeof b); /* Q5_1: d = 0.25, m = 1 */
    put16(b, 0x3400), put16(b + 2, 0x3c00);
    for (int e = 0; e < 32; e++) {
        put_nibble(b + 8, e, code[e] & 15);
        b[4 + e / 8] |= (uint8_t)((code[e] >> 4) << (e % 8));
        want[e] = 0.25f * (float)code[e] + 1.0f;
    }
    CHECK(check_block(GGML_TYPE_Q5_1, b, want, 32) == 0, "Q5_1 hand-built block decodes (d*q + m)");

    memset(b, 0, sizeof b); /* IQ4_NL: d = -2 */
    put16(b, 0xc000);
    for (int e = 0; e < 32; e++) put_nibble(b + 2, e, code[e] & 15), want[e] = -2.0f * (float)levels[code[e] & 15];
    CHECK(check_block(GGML_TYPE_IQ4_NL, b, want, 32) == 0, "IQ4_NL hand-built block decodes (non-uniform levels)");
}

/* byte and shift of 2-bit element e in Q2_K/Q3_K qs */
static void put_2bit(uint8_t *qs, int e, int v)
{
    qs[32 * (e / 128) + e % 32] |= (uint8_t)(v << (2 * ((e % 128) / 32)));
}

static void test_k_blocks(void)
{
    static const int levels[16] = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};
    uint8_t b[256];
    float want[256];
    int code[256];
    for (int e = 0; e < 256; e++) code[e] = (int)(rnd() & 63);

    /* Q2_K: scales[16] (sc | m << 4), qs[64], d = 1, dmin = 0.5 */
    memset(b, 0, sizeof b);
    for (int i = 0; i < 16; i++) b[i] = (uint8_t)rnd();
    put16(b + 80, 0x3c00), put16(b + 82, 0x3800);
    for (int e = 0; e < 256; e++) {
        put_2bit(b + 16, e, code[e] & 3);
        int sc = b[e / 16] & 15, m = b[e / 16] >> 4;
        want[e] = 1.0f * (float)sc * (float)(code[e] & 3) - 0.5f * (float)m;
    }
    CHECK(check_block(GGML_TYPE_Q2_K, b, want, 256) == 0, "Q2_K hand-built block decodes");

    /* Q3_K: hmask[32], qs[64], scales[12] (16 six-bit, minus 32), d = 0.5 */
    memset(b, 0, sizeof b);
    int s6[16];
    for (int i = 0; i < 16; i++) {
        s6[i] = (int)(rnd() & 63);
        b[96 + (i < 8 ? i : i - 8)] |= (uint8_t)(i < 8 ? (s6[i] & 15) : (s6[i] & 15) << 4);
        b[96 + 8 + i % 4] |= (uint8_t)((s6[i] >> 4) << (2 * (i / 4)));
    }
    put16(b + 108, 0x3800);
    for (int e = 0; e < 256; e++) {
        int low = code[e] & 3, high = (code[e] >> 2) & 1;
        put_2bit(b + 32, e, low);
        if (high) b[e % 32] |= (uint8_t)(1 << (e / 32));
        want[e] = 0.5f * (float)(s6[e / 16] - 32) * (float)(low - (high ? 0 : 4));
    }
    CHECK(check_block(GGML_TYPE_Q3_K, b, want, 256) == 0, "Q3_K hand-built block decodes (hmask, 6-bit scales - 32)");

    /* Q5_K: Q4_K plus qh[32]: element 32j + l takes bit j of qh[l] */
    memset(b, 0, sizeof b);
    int sc[8], m[8];
    for (int j = 0; j < 8; j++) sc[j] = (int)(rnd() & 63), m[j] = (int)(rnd() & 63);
    put16(b, 0x3400), put16(b + 2, 0x3c00); /* d = 0.25, dmin = 1 */
    pack_q4k_scales(b + 4, sc, m);
    for (int e = 0; e < 256; e++) {
        int v = code[e] & 31, j = e / 32, l = e % 32;
        b[48 + 32 * (j / 2) + l] |= (uint8_t)(j % 2 == 0 ? (v & 15) : (v & 15) << 4);
        b[16 + l] |= (uint8_t)((v >> 4) << j);
        want[e] = 0.25f * (float)sc[j] * (float)v - 1.0f * (float)m[j];
    }
    CHECK(check_block(GGML_TYPE_Q5_K, b, want, 256) == 0, "Q5_K hand-built block decodes (fifth bit in qh)");

    /* IQ4_XS: d, scales_h (2 bits each), scales_l (nibbles), qs[128] */
    memset(b, 0, sizeof b);
    put16(b, 0x3800); /* d = 0.5 */
    int ls[8];
    uint16_t sh = 0;
    for (int j = 0; j < 8; j++) {
        ls[j] = (int)(rnd() & 63);
        b[4 + j / 2] |= (uint8_t)((ls[j] & 15) << (4 * (j % 2)));
        sh |= (uint16_t)((ls[j] >> 4) << (2 * j));
    }
    put16(b + 2, sh);
    for (int e = 0; e < 256; e++) {
        int j = e / 32;
        put_nibble(b + 8 + 16 * j, e % 32, code[e] & 15);
        want[e] = 0.5f * (float)(ls[j] - 32) * (float)levels[code[e] & 15];
    }
    CHECK(check_block(GGML_TYPE_IQ4_XS, b, want, 256) == 0, "IQ4_XS hand-built block decodes");
}

/* The reference quantizers (used to write benchmark models): quantize,
 * decode, and the error relative to the row's largest value is bounded. */
static void test_quantizers(void)
{
    static const uint32_t types[] = {GGML_TYPE_Q8_0, GGML_TYPE_Q4_0, GGML_TYPE_Q4_K, GGML_TYPE_Q6_K, GGML_TYPE_F16,
                                     GGML_TYPE_BF16, GGML_TYPE_F32};
    /* half a step plus the rounding of the f16 scale (Q8_0); Q4_0's largest
     * value maps to -8, so the other end clamps at +7: an eighth; Q4_K and
     * Q6_K also round their sub-block scales to 6 and 8 bits: a full step */
    static const double bound[] = {0.5 / 127 + 1.0 / 1024, 1.0 / 8 + 1.0 / 1024, 2.0 / 15, 1.0 / 31, 1.0 / 2048, 1.0 / 256, 0};
    enum { N = 1024 };
    static float x[N], y[N];
    static uint8_t q[N * 4];
    for (size_t k = 0; k < sizeof types / sizeof types[0]; k++) {
        double worst = 0;
        int rc = 0;
        for (int trial = 0; trial < 10; trial++) {
            for (int i = 0; i < N; i++) x[i] = rndf() * (float)(1 + trial);
            rc |= quant_quantize_row(types[k], x, q, N);
            quant_dequant_row(types[k], q, y, N);
            double amax = 0, err = 0;
            for (int i = 0; i < N; i++) amax = fmax(amax, fabs(x[i])), err = fmax(err, fabs((double)x[i] - y[i]));
            worst = fmax(worst, err / amax);
        }
        CHECK(rc == 0 && worst <= bound[k],
              "%s quantizer round trip: max error %.3g of the row's largest value", ggml_type_info(types[k])->name, worst);
    }
    CHECK(quant_quantize_row(GGML_TYPE_Q2_K, x, q, N) == -1, "quantizer refuses a type it does not write");
}

static void test_plain(void)
{
    uint8_t f32[4 * 300], f16[2 * 300], bf16[2 * 300];
    float want[300], got[300];
    for (int i = 0; i < 300; i++) {
        want[i] = (float)(i - 150) * 0.25f;
        uint32_t u;
        memcpy(&u, &want[i], 4);
        for (int k = 0; k < 4; k++) f32[4 * i + k] = (uint8_t)(u >> (8 * k));
        put16(f16 + 2 * i, quant_f32_to_f16(want[i]));
        put16(bf16 + 2 * i, (uint16_t)(u >> 16)); /* exact: these values fit in 8 bits of mantissa */
    }
    quant_dequant_row(GGML_TYPE_F32, f32 + 0, got, 300);
    CHECK(memcmp(got, want, sizeof got) == 0, "F32 row of 300 decodes");
    quant_dequant_row(GGML_TYPE_F16, f16, got, 300);
    CHECK(memcmp(got, want, sizeof got) == 0, "F16 row of 300 decodes");
    quant_dequant_row(GGML_TYPE_BF16, bf16, got, 300);
    CHECK(memcmp(got, want, sizeof got) == 0, "BF16 row of 300 decodes");
    /* unaligned start: a row may begin anywhere in a mapped file */
    static uint8_t shifted[4 * 300 + 1];
    memcpy(shifted + 1, f32, sizeof f32);
    quant_dequant_row(GGML_TYPE_F32, shifted + 1, got, 300);
    CHECK(memcmp(got, want, sizeof got) == 0, "F32 row at an odd address decodes");
}

/* ---- dot == dequantize then dot, on random blocks ----------------------- */

static void random_row(uint32_t type, uint8_t *row, uint64_t bytes)
{
    for (uint64_t i = 0; i < bytes; i++) row[i] = (uint8_t)rnd();
    /* keep scales finite and modest: overwrite the f16 scale fields */
    const GgmlTypeInfo *ti = ggml_type_info(type);
    uint64_t nblocks = bytes / ti->block_bytes;
    for (uint64_t k = 0; k < nblocks; k++) {
        uint8_t *b = row + k * ti->block_bytes;
        switch (type) {
        case GGML_TYPE_Q8_0:
        case GGML_TYPE_Q4_0:
            put16(b, quant_f32_to_f16(rndf() * 0.01f));
            break;
        case GGML_TYPE_Q4_K:
            put16(b, quant_f32_to_f16(rndf() * 0.01f));
            put16(b + 2, quant_f32_to_f16(rndf() * 0.01f));
            break;
        case GGML_TYPE_Q6_K:
            put16(b + 208, quant_f32_to_f16(rndf() * 0.001f));
            break;
        case GGML_TYPE_F16:
            put16(b, quant_f32_to_f16(rndf()));
            break;
        case GGML_TYPE_BF16: {
            float f = rndf();
            uint32_t u;
            memcpy(&u, &f, 4);
            put16(b, (uint16_t)(u >> 16));
            break;
        }
        case GGML_TYPE_F32: {
            float f = rndf();
            memcpy(b, &f, 4);
            break;
        }
        }
    }
}

static void test_dot_consistency(void)
{
    static const uint32_t types[] = {GGML_TYPE_F32,  GGML_TYPE_F16,  GGML_TYPE_BF16, GGML_TYPE_Q8_0,
                                     GGML_TYPE_Q4_0, GGML_TYPE_Q4_K, GGML_TYPE_Q6_K};
    enum { N = 768, NB = 5 };
    static uint8_t row[N * 4];
    static float x[NB][N], deq[N], out[NB * 3];
    for (size_t ti = 0; ti < sizeof types / sizeof types[0]; ti++) {
        uint32_t t = types[ti];
        const GgmlTypeInfo *info = ggml_type_info(t);
        CHECK(quant_supported(t), "%s is supported", info->name);
        int same = 1, close = 1, batch_same = 1;
        for (int trial = 0; trial < 20; trial++) {
            random_row(t, row, ggml_row_bytes(t, N));
            for (int b = 0; b < NB; b++)
                for (int i = 0; i < N; i++) x[b][i] = rndf();
            quant_dequant_row(t, row, deq, N);
            quant_dot_batch(t, row, N, &x[0][0], N, NB, out, 3);
            for (int b = 0; b < NB; b++) {
                float d = quant_dot(t, row, x[b], N);
                float e = quant_dot_f32(deq, x[b], N);
                double ref = 0, mag = 0;
                for (int i = 0; i < N; i++) ref += (double)deq[i] * x[b][i], mag += fabs((double)deq[i] * x[b][i]);
                if (d != e) same = 0;
                if (out[3 * b] != d) batch_same = 0;
                if (fabs(d - ref) > 1e-5 * mag + 1e-30) close = 0;
            }
        }
        CHECK(same, "%s: quant_dot equals dequantize + quant_dot_f32 bit for bit", info->name);
        CHECK(batch_same, "%s: quant_dot_batch equals quant_dot for every vector", info->name);
        CHECK(close, "%s: quant_dot within 1e-5 (relative to sum |terms|) of a double sum", info->name);
    }
    CHECK(!quant_supported(GGML_TYPE_Q8_1) && !quant_supported(GGML_TYPE_IQ2_XXS) && !quant_supported(99),
          "unsupported types are reported as such");
}

int main(void)
{
    test_f16();
    test_q8_0();
    test_q4_0();
    test_q4_k();
    test_q6_k();
    test_small_blocks();
    test_k_blocks();
    test_quantizers();
    test_plain();
    test_dot_consistency();
    CHECK_DONE();
}
