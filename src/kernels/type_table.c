/* type_table.c - what pith computes with each weight type: one row per
 * type (KernTypeOps, kernels.h), and the row operations that go through it
 * (quant.h). The type's name, block size and bytes are the file's facts
 * (src/base/ggml_type.h); the functions a row names live with their kind:
 * decoders and writers in ref/quant.c, reference dots in ref/kernels_ref.c. */
#include <string.h>

#include "kernels.h"
#include "quant.h"

/* activation format, reference decoder, reference dot, writer; a type
 * without a row is one pith does not compute with */
static const KernTypeOps type_ops[GGML_TYPE_COUNT] = {
    [GGML_TYPE_F32] = {KERN_ACT_F32, quant_dequant_f32, kern_ref_dot_f32w, quant_quantize_f32},
    [GGML_TYPE_F16] = {KERN_ACT_F32, quant_dequant_f16, kern_ref_dot_f16w, quant_quantize_f16},
    [GGML_TYPE_BF16] = {KERN_ACT_F32, quant_dequant_bf16, kern_ref_dot_bf16w, quant_quantize_bf16},
    [GGML_TYPE_Q4_0] = {KERN_ACT_Q8_0, quant_dequant_q4_0, kern_ref_dot_q4_0, quant_quantize_q4_0},
    [GGML_TYPE_Q4_1] = {KERN_ACT_Q8_0, quant_dequant_q4_1, kern_ref_dot_q4_1, 0},
    [GGML_TYPE_Q5_0] = {KERN_ACT_Q8_0, quant_dequant_q5_0, kern_ref_dot_q5_0, 0},
    [GGML_TYPE_Q5_1] = {KERN_ACT_Q8_0, quant_dequant_q5_1, kern_ref_dot_q5_1, 0},
    [GGML_TYPE_Q8_0] = {KERN_ACT_Q8_0, quant_dequant_q8_0, kern_ref_dot_q8_0, quant_quantize_q8_0},
    [GGML_TYPE_IQ4_NL] = {KERN_ACT_Q8_0, quant_dequant_iq4_nl, kern_ref_dot_iq4_nl, 0},
    [GGML_TYPE_Q2_K] = {KERN_ACT_Q8_K, quant_dequant_q2_k, kern_ref_dot_q2_k, 0},
    [GGML_TYPE_Q3_K] = {KERN_ACT_Q8_K, quant_dequant_q3_k, kern_ref_dot_q3_k, 0},
    [GGML_TYPE_Q4_K] = {KERN_ACT_Q8_K, quant_dequant_q4_k, kern_ref_dot_q4_k, quant_quantize_q4_k},
    [GGML_TYPE_Q5_K] = {KERN_ACT_Q8_K, quant_dequant_q5_k, kern_ref_dot_q5_k, 0},
    [GGML_TYPE_Q6_K] = {KERN_ACT_Q8_K, quant_dequant_q6_k, kern_ref_dot_q6_k, quant_quantize_q6_k},
    [GGML_TYPE_IQ4_XS] = {KERN_ACT_Q8_K, quant_dequant_iq4_xs, kern_ref_dot_iq4_xs, 0},
};

const KernTypeOps *kern_type_ops(uint32_t t)
{
    if (t >= GGML_TYPE_COUNT || !type_ops[t].decode) return 0;
    return &type_ops[t];
}

/* ---- through the type's row --------------------------------------------- */

int quant_supported(uint32_t type)
{
    return kern_type_ops(type) != 0;
}

/* The row's decoder and block size; a type pith does not compute with has
 * no decoder and decodes to zeros (unreachable: model_load refuses them). */
typedef struct {
    QuantDecodeFn *decode;
    uint64_t block_elems, block_bytes;
} Decoder;

static Decoder decoder(uint32_t type)
{
    const KernTypeOps *ops = kern_type_ops(type);
    const GgmlTypeInfo *ti = ggml_type_info(type);
    Decoder d = {0, 1, 1};
    if (ops && ti) d = (Decoder){ops->decode, ti->block_elems, ti->block_bytes};
    return d;
}

/* Decodes `count` elements (whole blocks) starting at element `first` of
 * the row. */
static void decode_at(const Decoder *dec, const uint8_t *row, uint64_t first, uint64_t count, float *y)
{
    if (!dec->decode) {
        memset(y, 0, count * sizeof *y);
        return;
    }
    uint64_t step = dec->block_elems > 1 ? dec->block_elems : QUANT_MAX_BLOCK;
    for (uint64_t i = 0; i < count; i += step)
        dec->decode(row + (first + i) / dec->block_elems * dec->block_bytes, y + i, count - i < step ? count - i : step);
}

static uint32_t chunk_len(uint64_t done, uint64_t n)
{
    return (uint32_t)(n - done < QUANT_MAX_BLOCK ? n - done : QUANT_MAX_BLOCK);
}

void quant_dequant_row(uint32_t type, const uint8_t *row, float *out, uint64_t n)
{
    Decoder dec = decoder(type);
    decode_at(&dec, row, 0, n, out);
}

float quant_dot(uint32_t type, const uint8_t *row, const float *x, uint64_t n)
{
    Decoder dec = decoder(type);
    float blk[QUANT_MAX_BLOCK];
    float s = 0.0f;
    for (uint64_t i = 0; i < n;) {
        uint32_t c = chunk_len(i, n);
        decode_at(&dec, row, i, c, blk);
        for (uint32_t j = 0; j < c; j++) s += blk[j] * x[i + j];
        i += c;
    }
    return s;
}

#define DOT_GROUP 64 /* accumulators kept at once */

void quant_dot_batch(uint32_t type, const uint8_t *row, uint64_t n, const float *x, uint64_t x_stride,
                     int nb, float *out, uint64_t out_stride)
{
    Decoder dec = decoder(type);
    float blk[QUANT_MAX_BLOCK];
    float acc[DOT_GROUP];
    for (int b0 = 0; b0 < nb; b0 += DOT_GROUP) {
        int g = nb - b0 < DOT_GROUP ? nb - b0 : DOT_GROUP;
        for (int b = 0; b < g; b++) acc[b] = 0.0f;
        for (uint64_t i = 0; i < n;) {
            uint32_t c = chunk_len(i, n);
            decode_at(&dec, row, i, c, blk);
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
    const KernTypeOps *ops = kern_type_ops(type);
    const GgmlTypeInfo *ti = ggml_type_info(type);
    if (!ops || !ops->quantize || n % ti->block_elems) return -1;
    ops->quantize(x, out, n);
    return 0;
}
