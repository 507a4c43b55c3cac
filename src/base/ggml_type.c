/* ggml_type.c - the type table: one row per GGUF tensor type, its name and
 * size. The types with a block struct take their block's bytes from it
 * (ggml_type.h: GGML_BLOCK_BYTES); the others keep ggml's sizes written
 * out (QK_K = 256 for the K-quants and the i-quants). */
#include "ggml_type.h"

/* name, elements and bytes per block */
static const GgmlTypeInfo type_table[GGML_TYPE_COUNT] = {
    [GGML_TYPE_F32] = {"F32", 1, 4},
    [GGML_TYPE_F16] = {"F16", 1, 2},
    [GGML_TYPE_Q4_0] = {"Q4_0", QK4_0, GGML_BLOCK_BYTES(GGML_TYPE_Q4_0)},
    [GGML_TYPE_Q4_1] = {"Q4_1", QK4_1, GGML_BLOCK_BYTES(GGML_TYPE_Q4_1)},
    [GGML_TYPE_Q5_0] = {"Q5_0", QK5_0, GGML_BLOCK_BYTES(GGML_TYPE_Q5_0)},
    [GGML_TYPE_Q5_1] = {"Q5_1", QK5_1, GGML_BLOCK_BYTES(GGML_TYPE_Q5_1)},
    [GGML_TYPE_Q8_0] = {"Q8_0", QK8_0, GGML_BLOCK_BYTES(GGML_TYPE_Q8_0)},
    [GGML_TYPE_Q8_1] = {"Q8_1", 32, 2 + 2 + 32},
    [GGML_TYPE_Q2_K] = {"Q2_K", QK_K, GGML_BLOCK_BYTES(GGML_TYPE_Q2_K)},
    [GGML_TYPE_Q3_K] = {"Q3_K", QK_K, GGML_BLOCK_BYTES(GGML_TYPE_Q3_K)},
    [GGML_TYPE_Q4_K] = {"Q4_K", QK_K, GGML_BLOCK_BYTES(GGML_TYPE_Q4_K)},
    [GGML_TYPE_Q5_K] = {"Q5_K", QK_K, GGML_BLOCK_BYTES(GGML_TYPE_Q5_K)},
    [GGML_TYPE_Q6_K] = {"Q6_K", QK_K, GGML_BLOCK_BYTES(GGML_TYPE_Q6_K)},
    [GGML_TYPE_Q8_K] = {"Q8_K", QK_K, 4 + QK_K + QK_K / 16 * 2},
    [GGML_TYPE_IQ2_XXS] = {"IQ2_XXS", QK_K, 2 + QK_K / 8 * 2},
    [GGML_TYPE_IQ2_XS] = {"IQ2_XS", QK_K, 2 + QK_K / 8 * 2 + QK_K / 32},
    [GGML_TYPE_IQ3_XXS] = {"IQ3_XXS", QK_K, 2 + 3 * QK_K / 8},
    [GGML_TYPE_IQ1_S] = {"IQ1_S", QK_K, 2 + QK_K / 8 + QK_K / 32 * 2},
    [GGML_TYPE_IQ4_NL] = {"IQ4_NL", QK4_NL, GGML_BLOCK_BYTES(GGML_TYPE_IQ4_NL)},
    [GGML_TYPE_IQ3_S] = {"IQ3_S", QK_K, 2 + QK_K / 4 + QK_K / 32 + QK_K / 8 + QK_K / 64},
    [GGML_TYPE_IQ2_S] = {"IQ2_S", QK_K, 2 + QK_K / 4 + QK_K / 32 + QK_K / 32},
    [GGML_TYPE_IQ4_XS] = {"IQ4_XS", QK_K, GGML_BLOCK_BYTES(GGML_TYPE_IQ4_XS)},
    [GGML_TYPE_I8] = {"I8", 1, 1},
    [GGML_TYPE_I16] = {"I16", 1, 2},
    [GGML_TYPE_I32] = {"I32", 1, 4},
    [GGML_TYPE_I64] = {"I64", 1, 8},
    [GGML_TYPE_F64] = {"F64", 1, 8},
    [GGML_TYPE_IQ1_M] = {"IQ1_M", QK_K, QK_K / 8 + QK_K / 16 + QK_K / 32},
    [GGML_TYPE_BF16] = {"BF16", 1, 2},
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
