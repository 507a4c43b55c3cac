/* ggml_type.c - the type table: one row per GGUF tensor type.
 *
 * Sizes follow ggml's block structs (QK_K = 256 for the K-quants and the
 * i-quants): e.g. Q4_0 = f16 scale + 16 bytes of nibbles per 32 elements.
 * The functions a row names live with their kind: decoders and writers in
 * quant.c, reference dots in kernels_ref.c. */
#include "ggml_type.h"

#include <string.h>

#include "kernels.h"
#include "quant.h"

#define QK_K 256

/* name, elements and bytes per block; where pith computes with the type:
 * computes, activation format, reference decoder, reference dot, writer. */
static const GgmlTypeInfo type_table[GGML_TYPE_COUNT] = {
    [GGML_TYPE_F32] = {"F32", 1, 4,
        1, KERN_ACT_F32, quant_dequant_f32, kern_ref_dot_f32w, quant_quantize_f32},
    [GGML_TYPE_F16] = {"F16", 1, 2,
        1, KERN_ACT_F32, quant_dequant_f16, kern_ref_dot_f16w, quant_quantize_f16},
    [GGML_TYPE_Q4_0] = {"Q4_0", 32, 2 + 16,
        1, KERN_ACT_Q8_0, quant_dequant_q4_0, kern_ref_dot_q4_0, quant_quantize_q4_0},
    [GGML_TYPE_Q4_1] = {"Q4_1", 32, 2 + 2 + 16,
        1, KERN_ACT_Q8_0, quant_dequant_q4_1, kern_ref_dot_q4_1},
    [GGML_TYPE_Q5_0] = {"Q5_0", 32, 2 + 4 + 16,
        1, KERN_ACT_Q8_0, quant_dequant_q5_0, kern_ref_dot_q5_0},
    [GGML_TYPE_Q5_1] = {"Q5_1", 32, 2 + 2 + 4 + 16,
        1, KERN_ACT_Q8_0, quant_dequant_q5_1, kern_ref_dot_q5_1},
    [GGML_TYPE_Q8_0] = {"Q8_0", 32, 2 + 32,
        1, KERN_ACT_Q8_0, quant_dequant_q8_0, kern_ref_dot_q8_0, quant_quantize_q8_0},
    [GGML_TYPE_Q8_1] = {"Q8_1", 32, 2 + 2 + 32},
    [GGML_TYPE_Q2_K] = {"Q2_K", QK_K, QK_K / 16 + QK_K / 4 + 2 + 2,
        1, KERN_ACT_Q8_K, quant_dequant_q2_k, kern_ref_dot_q2_k},
    [GGML_TYPE_Q3_K] = {"Q3_K", QK_K, QK_K / 8 + QK_K / 4 + 12 + 2,
        1, KERN_ACT_Q8_K, quant_dequant_q3_k, kern_ref_dot_q3_k},
    [GGML_TYPE_Q4_K] = {"Q4_K", QK_K, 2 + 2 + 12 + QK_K / 2,
        1, KERN_ACT_Q8_K, quant_dequant_q4_k, kern_ref_dot_q4_k, quant_quantize_q4_k},
    [GGML_TYPE_Q5_K] = {"Q5_K", QK_K, 2 + 2 + 12 + QK_K / 8 + QK_K / 2,
        1, KERN_ACT_Q8_K, quant_dequant_q5_k, kern_ref_dot_q5_k},
    [GGML_TYPE_Q6_K] = {"Q6_K", QK_K, QK_K / 2 + QK_K / 4 + QK_K / 16 + 2,
        1, KERN_ACT_Q8_K, quant_dequant_q6_k, kern_ref_dot_q6_k, quant_quantize_q6_k},
    [GGML_TYPE_Q8_K] = {"Q8_K", QK_K, 4 + QK_K + QK_K / 16 * 2},
    [GGML_TYPE_IQ2_XXS] = {"IQ2_XXS", QK_K, 2 + QK_K / 8 * 2},
    [GGML_TYPE_IQ2_XS] = {"IQ2_XS", QK_K, 2 + QK_K / 8 * 2 + QK_K / 32},
    [GGML_TYPE_IQ3_XXS] = {"IQ3_XXS", QK_K, 2 + 3 * QK_K / 8},
    [GGML_TYPE_IQ1_S] = {"IQ1_S", QK_K, 2 + QK_K / 8 + QK_K / 32 * 2},
    [GGML_TYPE_IQ4_NL] = {"IQ4_NL", 32, 2 + 16,
        1, KERN_ACT_Q8_0, quant_dequant_iq4_nl, kern_ref_dot_iq4_nl},
    [GGML_TYPE_IQ3_S] = {"IQ3_S", QK_K, 2 + QK_K / 4 + QK_K / 32 + QK_K / 8 + QK_K / 64},
    [GGML_TYPE_IQ2_S] = {"IQ2_S", QK_K, 2 + QK_K / 4 + QK_K / 32 + QK_K / 32},
    [GGML_TYPE_IQ4_XS] = {"IQ4_XS", QK_K, 2 + 2 + QK_K / 64 + QK_K / 2,
        1, KERN_ACT_Q8_K, quant_dequant_iq4_xs, kern_ref_dot_iq4_xs},
    [GGML_TYPE_I8] = {"I8", 1, 1},
    [GGML_TYPE_I16] = {"I16", 1, 2},
    [GGML_TYPE_I32] = {"I32", 1, 4},
    [GGML_TYPE_I64] = {"I64", 1, 8},
    [GGML_TYPE_F64] = {"F64", 1, 8},
    [GGML_TYPE_IQ1_M] = {"IQ1_M", QK_K, QK_K / 8 + QK_K / 16 + QK_K / 32},
    [GGML_TYPE_BF16] = {"BF16", 1, 2,
        1, KERN_ACT_F32, quant_dequant_bf16, kern_ref_dot_bf16w, quant_quantize_bf16},
    [GGML_TYPE_TQ1_0] = {"TQ1_0", QK_K, (QK_K - 4 * QK_K / 64) / 5 + QK_K / 64 + 2},
    [GGML_TYPE_TQ2_0] = {"TQ2_0", QK_K, QK_K / 4 + 2},
    [GGML_TYPE_MXFP4] = {"MXFP4", 32, 1 + 16},
};

const GgmlTypeInfo *ggml_type_info(uint32_t t)
{
    if (t >= GGML_TYPE_COUNT || type_table[t].name == 0) return 0;
    return &type_table[t];
}

uint64_t ggml_row_bytes(uint32_t t, uint64_t n)
{
    const GgmlTypeInfo *ti = ggml_type_info(t);
    if (!ti || n % ti->block_elems != 0) return 0;
    uint64_t blocks = n / ti->block_elems;
    if (blocks > UINT64_MAX / ti->block_bytes) return 0;
    return blocks * ti->block_bytes;
}

/* ---- through the type's row --------------------------------------------- */

int quant_supported(uint32_t type)
{
    const GgmlTypeInfo *ti = ggml_type_info(type);
    return ti && ti->computes;
}

/* Decodes `count` elements (whole blocks) starting at element `first` of
 * the row; a type pith does not compute with decodes to zeros
 * (unreachable: model_load refuses them). */
static void decode_at(const GgmlTypeInfo *ti, const uint8_t *row, uint64_t first, uint64_t count, float *y)
{
    if (!ti || !ti->decode) {
        memset(y, 0, count * sizeof *y);
        return;
    }
    uint64_t step = ti->block_elems > 1 ? ti->block_elems : QUANT_MAX_BLOCK;
    for (uint64_t i = 0; i < count; i += step)
        ti->decode(row + (first + i) / ti->block_elems * ti->block_bytes, y + i, count - i < step ? count - i : step);
}

static uint32_t chunk_len(uint64_t done, uint64_t n)
{
    return (uint32_t)(n - done < QUANT_MAX_BLOCK ? n - done : QUANT_MAX_BLOCK);
}

void quant_dequant_row(uint32_t type, const uint8_t *row, float *out, uint64_t n)
{
    decode_at(ggml_type_info(type), row, 0, n, out);
}

float quant_dot(uint32_t type, const uint8_t *row, const float *x, uint64_t n)
{
    const GgmlTypeInfo *ti = ggml_type_info(type);
    float blk[QUANT_MAX_BLOCK];
    float s = 0.0f;
    for (uint64_t i = 0; i < n;) {
        uint32_t c = chunk_len(i, n);
        decode_at(ti, row, i, c, blk);
        for (uint32_t j = 0; j < c; j++) s += blk[j] * x[i + j];
        i += c;
    }
    return s;
}

#define DOT_GROUP 64 /* accumulators kept at once */

void quant_dot_batch(uint32_t type, const uint8_t *row, uint64_t n, const float *x, uint64_t x_stride,
                     int nb, float *out, uint64_t out_stride)
{
    const GgmlTypeInfo *ti = ggml_type_info(type);
    float blk[QUANT_MAX_BLOCK];
    float acc[DOT_GROUP];
    for (int b0 = 0; b0 < nb; b0 += DOT_GROUP) {
        int g = nb - b0 < DOT_GROUP ? nb - b0 : DOT_GROUP;
        for (int b = 0; b < g; b++) acc[b] = 0.0f;
        for (uint64_t i = 0; i < n;) {
            uint32_t c = chunk_len(i, n);
            decode_at(ti, row, i, c, blk);
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

int quant_quantize_row(uint32_t type, const float *x, uint8_t *out, uint64_t n)
{
    const GgmlTypeInfo *ti = ggml_type_info(type);
    if (!ti || !ti->quantize || n % ti->block_elems) return -1;
    ti->quantize(x, out, n);
    return 0;
}
