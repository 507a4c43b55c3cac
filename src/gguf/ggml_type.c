/* ggml_type.c - the type table: one row per GGUF tensor type.
 *
 * Sizes follow ggml's block structs (QK_K = 256 for the K-quants and the
 * i-quants): e.g. Q4_0 = f16 scale + 16 bytes of nibbles per 32 elements.
 * The functions a row names live with their kind: decoders and writers in
 * quant.c, reference dots in kernels_ref.c. */
#include "ggml_type.h"

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
