/* quant.h - weight types: reference row dequantization and dot products.
 *
 * Plain C, written to be obviously correct rather than fast: every type is
 * decoded one block at a time into floats, then multiplied. The faster
 * kernels that come later are checked against these.
 *
 * Blocks are read byte by byte (little-endian, no alignment assumed), so a
 * row may start anywhere in a mapped file. Row lengths must be multiples of
 * the type's block size (model_load checks this for every tensor).
 *
 * Summation order is fixed: elements in ascending order into one float
 * accumulator. quant_dot, quant_dot_batch and dequantize-then-quant_dot_f32
 * therefore give bit-identical results, so a batch and the same tokens fed
 * one at a time agree exactly. */
#ifndef PITH_QUANT_H
#define PITH_QUANT_H

#include <stddef.h>
#include <stdint.h>

#include "../base/ggml_type.h"

/* Largest block of any supported type (elements): the scratch size of the
 * decoders (a multiple of every supported type's block). */
#define QUANT_MAX_BLOCK QK_K

/* Decodes n elements from a block boundary into floats: one block of a
 * quantized type (n = block_elems), or n <= QUANT_MAX_BLOCK of a plain
 * float type (blocks of one element). */
typedef void QuantDecodeFn(const uint8_t *src, float *out, uint64_t n);
/* Writes n floats (whole blocks) as the type: a whole row in one call. */
typedef void QuantQuantizeFn(const float *x, uint8_t *out, uint64_t n);


/* Software half and bfloat16 conversions (no compiler support needed). */
float quant_f16_to_f32(uint16_t h);
uint16_t quant_f32_to_f16(float f); /* round to nearest even; overflow gives inf */
float quant_bf16_to_f32(uint16_t h);




/* Plain float dot product, in the same order as quant_dot. */
float quant_dot_f32(const float *a, const float *b, uint64_t n);

/* Pieces of the block layouts the kernels share (documented in quant.c):
 * the 16 levels of IQ4_NL/IQ4_XS, the 6-bit scale and min j (0..7) of a
 * Q4_K/Q5_K block's 12 scale bytes, the scale i (0..15, minus 32) of a
 * Q3_K block's 12 scale bytes. */
extern const int8_t quant_iq4nl_values[16];
void quant_q4k_scale_min(int j, const uint8_t *scales, int *sc, int *m);
int quant_q3k_scale(const uint8_t *scales, int i);


/* Row operations through the type's row of the kernels' table (defined in
 * type_table.c beside it; named quant_* as the plain-C reference they are): */
/* 1 if pith can compute with tensors of this GgmlType (it has a row). */
int quant_supported(uint32_t type);
/* Decodes n elements of a row of `type` starting at `row` (n a multiple of
 * the block size) into out. */
void quant_dequant_row(uint32_t type, const uint8_t *row, float *out, uint64_t n);
/* Dot product of the first n elements of a row with x. */
float quant_dot(uint32_t type, const uint8_t *row, const float *x, uint64_t n);
/* For one weight row and nb activation vectors x[b*x_stride ..]: writes
 * out[b*out_stride] = dot(row, x_b). Decodes the row once for all of them. */
void quant_dot_batch(uint32_t type, const uint8_t *row, uint64_t n, const float *x, uint64_t x_stride,
                     int nb, float *out, uint64_t out_stride);
/* Quantizes n floats into a row of `type` (F32, F16, BF16, Q8_0, Q4_0, Q4_K,
 * Q6_K; n a multiple of the block size). Simple round-to-nearest schemes,
 * to write test and benchmark models. Returns 0, or -1 for other types. */
int quant_quantize_row(uint32_t type, const float *x, uint8_t *out, uint64_t n);

/* The per-type functions (ref/quant.c) the kernels' type table
 * (type_table.c) names; callers use quant_dequant_row and
 * quant_quantize_row, which go through the row. These functions never read
 * the table, so the table can name them without a circle. */
QuantDecodeFn quant_dequant_f32, quant_dequant_f16, quant_dequant_bf16, quant_dequant_q8_0, quant_dequant_q4_0,
    quant_dequant_q4_1, quant_dequant_q5_0, quant_dequant_q5_1, quant_dequant_iq4_nl, quant_dequant_q2_k,
    quant_dequant_q3_k, quant_dequant_q4_k, quant_dequant_q5_k, quant_dequant_q6_k, quant_dequant_iq4_xs;
QuantQuantizeFn quant_quantize_f32, quant_quantize_f16, quant_quantize_bf16, quant_quantize_q8_0, quant_quantize_q4_0,
    quant_quantize_q4_k, quant_quantize_q6_k;

#endif
