/* This folder: src/base/ - the facts every other folder shares: the GGUF
 * tensor types, their block layouts and sizes (ggml_type.h), the status
 * codes of a failed call (status.h), log, sin and cos without libm's
 * tables (fmath.h) and printf's formatting without long double
 * (format.h). The lowest folder: it includes
 * and calls nothing of src/ or port/. */
/* ggml_type.h - the tensor element types of GGUF, numbered as in the file,
 * the block layouts of those pith computes with (as ggml lays them out),
 * and each type's name and size: one row of a table per type.
 *
 * Every type has a block size (elements per block) and bytes per block, so
 * any valid file can be inspected and sized even where pith cannot yet
 * compute with a type. What pith computes with a type (the activation
 * format its kernels take, its reference decoder, reference dot product
 * and writer) is the kernels' fact: their table, src/kernels/type_table.c
 * (kern_type_ops). Code asks the rows instead of switching on the type.
 *
 * Blocks are read byte by byte (little-endian, no alignment assumed): the
 * structs below give the layout, offsets (offsetof) and sizes (sizeof), and
 * no code casts a pointer into a file to them.
 *
 * Adding a weight type pith computes with (its size row is already here):
 *   1. Here: its block struct (with a _Static_assert on its size, as ggml
 *      has it) and its case in GGML_BLOCK_BYTES; its row in ggml_type.c
 *      takes the size from there.
 *   2. src/kernels/ref/quant.c: what the fields mean in the file's header
 *      comment and the reference decoder quant_dequant_TYPE (one block, QuantDecodeFn);
 *      declare it in src/kernels/quant.h.
 *   3. src/kernels/ref/kernels_ref.c: the reference dot against the
 *      activation format (src/kernels/kernels.h: KERN_ACT_Q8_0 for blocks
 *      of QK8_0, KERN_ACT_Q8_K for QK_K, KERN_ACT_F32 for plain floats),
 *      wrapped by MULTI() into kern_ref_dot_TYPE; declare it in kernels.h.
 *   4. The type's row in src/kernels/type_table.c: the activation format,
 *      the decoder, the reference dot (and quant_quantize_TYPE if pith
 *      should write it: mkmodel, benchmark models).
 *   5. Tests: a hand-built block in tests/test_quant.c (test_small_blocks
 *      or test_k_blocks), the type in tests/test_kernels.c's TYPES and its
 *      f16 scale offsets in scale_fields(); test_kernels checks that every
 *      type pith computes with is listed there and its row is complete.
 *   6. Optional: fast kernels in a KernelSet (src/kernels/kernels.h,
 *      "Adding a code path"): dot[TYPE], and rows[TYPE] for several rows at
 *      once. NULL entries use the reference, so step 6 can come later. */
#ifndef PITH_GGML_TYPE_H
#define PITH_GGML_TYPE_H

#include <stddef.h>
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

/* ---- block layouts (ggml's; all little-endian, F16 scales as their bits) --
 * Elements per block: */
#define QK4_0 32
#define QK4_1 32
#define QK5_0 32
#define QK5_1 32
#define QK8_0 32
#define QK4_NL 32
#define QK_K 256         /* the K-quants' and i-quants' super-block */
#define K_SCALE_SIZE 12  /* Q4_K/Q5_K: 8 six-bit scales and 8 six-bit mins */

typedef struct {
    uint16_t d;              /* F16 scale */
    uint8_t qs[QK4_0 / 2];   /* nibbles: element j low nibble of byte j, j + 16 high */
} BlockQ4_0;
typedef struct {
    uint16_t d, m;           /* F16 scale and min */
    uint8_t qs[QK4_1 / 2];
} BlockQ4_1;
typedef struct {
    uint16_t d;
    uint8_t qh[4];           /* fifth bits: element j's is bit j */
    uint8_t qs[QK5_0 / 2];
} BlockQ5_0;
typedef struct {
    uint16_t d, m;
    uint8_t qh[4];
    uint8_t qs[QK5_1 / 2];
} BlockQ5_1;
typedef struct {
    uint16_t d;
    int8_t qs[QK8_0];
} BlockQ8_0;
typedef struct {
    uint16_t d;
    uint8_t qs[QK4_NL / 2];  /* nibbles index the 16 non-uniform levels */
} BlockIQ4_NL;
typedef struct {
    uint8_t scales[QK_K / 16]; /* scale | min << 4 of 16 sub-blocks of 16 */
    uint8_t qs[QK_K / 4];      /* 2-bit codes */
    uint16_t d, dmin;
} BlockQ2_K;
typedef struct {
    uint8_t hmask[QK_K / 8];   /* high bits */
    uint8_t qs[QK_K / 4];      /* low 2 bits */
    uint8_t scales[12];        /* 16 six-bit scales */
    uint16_t d;
} BlockQ3_K;
typedef struct {
    uint16_t d, dmin;
    uint8_t scales[K_SCALE_SIZE];
    uint8_t qs[QK_K / 2];
} BlockQ4_K;
typedef struct {
    uint16_t d, dmin;
    uint8_t scales[K_SCALE_SIZE];
    uint8_t qh[QK_K / 8];
    uint8_t qs[QK_K / 2];
} BlockQ5_K;
typedef struct {
    uint8_t ql[QK_K / 2];      /* low 4 bits */
    uint8_t qh[QK_K / 4];      /* high 2 bits */
    int8_t scales[QK_K / 16];  /* 16 sub-blocks of 16 */
    uint16_t d;
} BlockQ6_K;
typedef struct {
    uint16_t d;
    uint16_t scales_h;         /* high 2 bits of the 8 scales */
    uint8_t scales_l[QK_K / 64]; /* low 4 bits */
    uint8_t qs[QK_K / 2];
} BlockIQ4_XS;

_Static_assert(sizeof(BlockQ4_0) == 2 + QK4_0 / 2, "wrong Q4_0 block size");
_Static_assert(sizeof(BlockQ4_1) == 2 * 2 + QK4_1 / 2, "wrong Q4_1 block size");
_Static_assert(sizeof(BlockQ5_0) == 2 + 4 + QK5_0 / 2, "wrong Q5_0 block size");
_Static_assert(sizeof(BlockQ5_1) == 2 * 2 + 4 + QK5_1 / 2, "wrong Q5_1 block size");
_Static_assert(sizeof(BlockQ8_0) == 2 + QK8_0, "wrong Q8_0 block size");
_Static_assert(sizeof(BlockIQ4_NL) == 2 + QK4_NL / 2, "wrong IQ4_NL block size");
_Static_assert(sizeof(BlockQ2_K) == 2 * 2 + QK_K / 16 + QK_K / 4, "wrong Q2_K block size");
_Static_assert(sizeof(BlockQ3_K) == 2 + QK_K / 4 + QK_K / 8 + 12, "wrong Q3_K block size");
_Static_assert(sizeof(BlockQ4_K) == 2 * 2 + K_SCALE_SIZE + QK_K / 2, "wrong Q4_K block size");
_Static_assert(sizeof(BlockQ5_K) == 2 * 2 + K_SCALE_SIZE + QK_K / 2 + QK_K / 8, "wrong Q5_K block size");
_Static_assert(sizeof(BlockQ6_K) == 2 + QK_K / 16 + 3 * QK_K / 4, "wrong Q6_K block size");
_Static_assert(sizeof(BlockIQ4_XS) == 2 + 2 + QK_K / 64 + QK_K / 2, "wrong IQ4_XS block size");

/* Bytes of a block of type t for the types with a struct above, 0 for the
 * others: a constant expression, for kernels that take the type as a
 * compile-time parameter. The table (ggml_type.c) takes its sizes from it. */
#define GGML_BLOCK_BYTES(t)                                                                                          \
    ((t) == GGML_TYPE_Q4_0     ? sizeof(BlockQ4_0)                                                                  \
     : (t) == GGML_TYPE_Q4_1   ? sizeof(BlockQ4_1)                                                                  \
     : (t) == GGML_TYPE_Q5_0   ? sizeof(BlockQ5_0)                                                                  \
     : (t) == GGML_TYPE_Q5_1   ? sizeof(BlockQ5_1)                                                                  \
     : (t) == GGML_TYPE_Q8_0   ? sizeof(BlockQ8_0)                                                                  \
     : (t) == GGML_TYPE_IQ4_NL ? sizeof(BlockIQ4_NL)                                                                \
     : (t) == GGML_TYPE_Q2_K   ? sizeof(BlockQ2_K)                                                                  \
     : (t) == GGML_TYPE_Q3_K   ? sizeof(BlockQ3_K)                                                                  \
     : (t) == GGML_TYPE_Q4_K   ? sizeof(BlockQ4_K)                                                                  \
     : (t) == GGML_TYPE_Q5_K   ? sizeof(BlockQ5_K)                                                                  \
     : (t) == GGML_TYPE_Q6_K   ? sizeof(BlockQ6_K)                                                                  \
     : (t) == GGML_TYPE_IQ4_XS ? sizeof(BlockIQ4_XS)                                                                \
                               : 0)

typedef struct {
    const char *name;     /* NULL for numbers that are not a valid type */
    uint16_t block_elems; /* elements per block */
    uint16_t block_bytes; /* bytes per block */
} GgmlTypeInfo;

/* NULL if t is not a valid type. */
const GgmlTypeInfo *ggml_type_info(uint32_t t);
/* Bytes of a row of n elements; 0 if n is not a multiple of the block size
 * or the type is invalid. */
uint64_t ggml_row_bytes(uint32_t t, uint64_t n);

#endif
