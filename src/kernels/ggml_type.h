/* ggml_type.h - the tensor element types of GGUF, numbered as in the file,
 * and everything pith knows about each: one row of a table per type.
 *
 * Every type has a block size (elements per block) and bytes per block, so
 * any valid file can be inspected and sized even where pith cannot yet
 * compute with a type. The types pith computes with also name, in their
 * row, the activation format their kernels take, their reference decoder
 * and reference dot product, and (for some) a writer. Code asks the row
 * (ggml_type_info) instead of switching on the type.
 *
 * Adding a weight type pith computes with (its size row is already there):
 *   1. quant.c: the block layout in the file's header comment and the
 *      reference decoder quant_dequant_TYPE (one block, GgmlDecodeFn);
 *      declare it in quant.h.
 *   2. kernels_ref.c: the reference dot against the activation format
 *      (kernels.h: KERN_ACT_Q8_0 for blocks of 32, KERN_ACT_Q8_K for 256,
 *      KERN_ACT_F32 for plain floats), wrapped by MULTI() into
 *      kern_ref_dot_TYPE; declare it in kernels.h.
 *   3. The row in ggml_type.c: computes = 1, the activation format, the
 *      decoder, the reference dot (and quant_quantize_TYPE if pith should
 *      write it: mkmodel, benchmark models).
 *   4. Tests: a hand-built block in tests/test_quant.c (test_small_blocks
 *      or test_k_blocks), the type in tests/test_kernels.c's TYPES and its
 *      f16 scale offsets in scale_fields(); test_kernels checks that every
 *      type pith computes with is listed there and its row is complete.
 *   5. Optional: fast kernels in a KernelSet (kernels.h, "Adding a code
 *      path"): dot[TYPE], and rows[TYPE] for several rows at once. NULL
 *      entries use the reference, so step 5 can come later. */
#ifndef PITH_GGML_TYPE_H
#define PITH_GGML_TYPE_H

#include <stdint.h>

typedef enum {
    GGML_TYPE_F32 = 0,
    GGML_TYPE_F16 = 1,
    GGML_TYPE_Q4_0 = 2,
    GGML_TYPE_Q4_1 = 3,
    /* 4 and 5 were Q4_2 and Q4_3, removed from ggml: refused */
    GGML_TYPE_Q5_0 = 6,
    GGML_TYPE_Q5_1 = 7,
    GGML_TYPE_Q8_0 = 8,
    GGML_TYPE_Q8_1 = 9,
    GGML_TYPE_Q2_K = 10,
    GGML_TYPE_Q3_K = 11,
    GGML_TYPE_Q4_K = 12,
    GGML_TYPE_Q5_K = 13,
    GGML_TYPE_Q6_K = 14,
    GGML_TYPE_Q8_K = 15,
    GGML_TYPE_IQ2_XXS = 16,
    GGML_TYPE_IQ2_XS = 17,
    GGML_TYPE_IQ3_XXS = 18,
    GGML_TYPE_IQ1_S = 19,
    GGML_TYPE_IQ4_NL = 20,
    GGML_TYPE_IQ3_S = 21,
    GGML_TYPE_IQ2_S = 22,
    GGML_TYPE_IQ4_XS = 23,
    GGML_TYPE_I8 = 24,
    GGML_TYPE_I16 = 25,
    GGML_TYPE_I32 = 26,
    GGML_TYPE_I64 = 27,
    GGML_TYPE_F64 = 28,
    GGML_TYPE_IQ1_M = 29,
    GGML_TYPE_BF16 = 30,
    /* 31-33 were Q4_0_4_4, Q4_0_4_8, Q4_0_8_8 (removed): refused */
    GGML_TYPE_TQ1_0 = 34,
    GGML_TYPE_TQ2_0 = 35,
    /* 36-38 were IQ4_NL_4_4 ... (removed): refused */
    GGML_TYPE_MXFP4 = 39,
    GGML_TYPE_COUNT = 40
} GgmlType;

/* Decodes n elements from a block boundary into floats: one block of a
 * quantized type (n = block_elems), or n <= QUANT_MAX_BLOCK of a plain
 * float type (blocks of one element). */
typedef void GgmlDecodeFn(const uint8_t *src, float *out, uint64_t n);
/* Writes n floats (whole blocks) as the type: a whole row in one call. */
typedef void GgmlQuantizeFn(const float *x, uint8_t *out, uint64_t n);
/* One weight row against nt activations: a KernDotFn (kernels.h). */
typedef void GgmlDotFn(uint64_t n, const uint8_t *row, const void *act, uint64_t act_stride, int nt, float *out,
                       uint64_t out_stride);

typedef struct {
    const char *name;         /* NULL for numbers that are not a valid type */
    uint16_t block_elems;     /* elements per block (a divisor of QUANT_MAX_BLOCK where pith computes) */
    uint16_t block_bytes;     /* bytes per block */
    /* The rest is zero for the types pith does not compute with. */
    uint8_t computes;         /* 1: model_load accepts its tensors */
    uint8_t act_format;       /* KernActFormat (kernels.h) its kernels take */
    GgmlDecodeFn *decode;     /* quant.c: the reference decoder */
    GgmlDotFn *ref_dot;       /* kernels_ref.c: the reference kernel; faster ones sit in a KernelSet */
    GgmlQuantizeFn *quantize; /* quant.c: NULL where pith does not write the type */
} GgmlTypeInfo;

/* NULL if t is not a valid type. */
const GgmlTypeInfo *ggml_type_info(uint32_t t);
/* Bytes of a row of n elements; 0 if n is not a multiple of the block size
 * or the type is invalid. */
uint64_t ggml_row_bytes(uint32_t t, uint64_t n);

/* Row operations through the type's row (defined in ggml_type.c beside the
 * table; named quant_* as the plain-C reference they are, see quant.h): */
/* 1 if pith can compute with tensors of this GgmlType (its row says so). */
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

#endif
