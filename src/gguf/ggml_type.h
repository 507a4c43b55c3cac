/* ggml_type.h - the tensor element types of GGUF, numbered as in the file.
 *
 * Every type has a block size (elements per block) and bytes per block, so
 * any valid file can be inspected and sized even where pith cannot yet
 * compute with a type. */
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

typedef struct {
    const char *name;        /* NULL for numbers that are not a valid type */
    uint32_t block_elems;    /* elements per block */
    uint32_t block_bytes;    /* bytes per block */
} GgmlTypeInfo;

/* NULL if t is not a valid type. */
const GgmlTypeInfo *ggml_type_info(uint32_t t);
/* Bytes of a row of n elements; 0 if n is not a multiple of the block size
 * or the type is invalid. */
uint64_t ggml_row_bytes(uint32_t t, uint64_t n);

#endif
