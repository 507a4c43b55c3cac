/* kernels_arm.h - what the ARM kernel files share (private to
 * src/kernels/arm/): the entries kernels_arm.c fills its sets with from the
 * other files, and the tiles one file hands to another. Plain prototypes,
 * valid on every target (the files compile to nothing off ARM); the NEON
 * helpers are in kernels_neon.h, included only where NEON exists. */
#ifndef PITH_KERNELS_ARM_H
#define PITH_KERNELS_ARM_H

#include <stdint.h>

#include "../kernels.h"

/* kernels_arm_rows.c: eight rows per pass, for the dotprod set ... */
KernRowsFunc kern_arm_dp_rows_q8_0, kern_arm_dp_rows_q4_0;
/* ... and the same over weights repacked in place (kernels.h: KERN_PACK_ROWS) */
KernPackedFunc kern_arm_dp_packed_q8_0, kern_arm_dp_packed_q4_0;
/* ... and over mapped weights with a copy of their scales (kernels.h: KERN_SIDE_ROWS) */
KernSidedFunc kern_arm_dp_sided_q8_0, kern_arm_dp_sided_q4_0;
/* the same with the prompt tiles of kernels_arm_mm.c (SMMLA), for the i8mm set */
KernRowsFunc kern_arm_mm_rows_q8_0, kern_arm_mm_rows_q4_0;
KernPackedFunc kern_arm_mm_packed_q8_0, kern_arm_mm_packed_q4_0;
KernSidedFunc kern_arm_mm_sided_q8_0, kern_arm_mm_sided_q4_0;
/* kernels_arm_mm.c: the i8mm set's prompt tiles (kernels_arm_rows.c's
 * prompt_pass's arguments: q4 1 for Q4_0 weights, 0 for Q8_0; packed 1 for
 * weights repacked in place) */
void kern_arm_mm_pass(int q4, int packed, uint64_t n, const uint8_t *w, uint64_t row_bytes, uint64_t r0, uint64_t r1,
                      const void *act, uint64_t act_stride, int nt, float *out, uint64_t out_stride);

/* kernels_arm_rows4.c: Q8_0 and Q4_0 four rows per pass, for the set without dotprod */
KernRowsFunc kern_arm_rows_q8_0, kern_arm_rows_q4_0;

/* kernels_arm_kq.c: Q4_K, Q5_K and Q6_K four rows per pass, both sets ... */
KernRowsFunc kern_arm_rows_q4_k, kern_arm_rows_q5_k, kern_arm_rows_q6_k;
KernRowsFunc kern_arm_dp_rows_q4_k, kern_arm_dp_rows_q5_k, kern_arm_dp_rows_q6_k;
/* ... and with SMMLA prompt tiles, for the i8mm set */
KernRowsFunc kern_arm_mm_rows_q4_k, kern_arm_mm_rows_q5_k, kern_arm_mm_rows_q6_k;
/* kernels_arm_kq_tile.c: rows [0, nrows) of a Q4_K, Q5_K or Q6_K matrix
 * (type) for nt tokens, four rows x four tokens per pass: with dotprod, and
 * with SMMLA */
void kern_arm_dp_tile_kq(GgmlType type, uint64_t n, const uint8_t *w, uint64_t row_bytes, uint64_t nrows,
                         const void *act, uint64_t act_stride, int nt, float *out, uint64_t out_stride);
void kern_arm_mm_tile_kq(GgmlType type, uint64_t n, const uint8_t *w, uint64_t row_bytes, uint64_t nrows,
                         const void *act, uint64_t act_stride, int nt, float *out, uint64_t out_stride);

/* kernels_arm_fp16.c: F16 weights multiplied in F16, for CPUs with FEAT_FP16 */
KernRowsFunc kern_arm_fp16_rows_f16;

/* kernels_arm_v7.c: Q8_0, Q4_0, Q4_K and Q6_K four rows per pass (armv7) */
KernRowsFunc kern_armv7_rows_q8_0, kern_armv7_rows_q4_0, kern_armv7_rows_q4_k, kern_armv7_rows_q6_k;

/* kernels_ops_arm.c: the sets' gelu_mul, delta_step, causal_conv, dots_f32
 * and mix_f32 for kern_delta_chunk, and (aarch64) rope */
void kern_arm_gelu_mul(float *g, const float *u, uint64_t n, const uint16_t *table);
void kern_arm_delta_step(float *S, uint32_t dk, const float *q, const float *k, const float *v, float beta, float fd,
                         float scale, float *o);
void kern_arm_causal_conv(float *out, float *hist, uint64_t hist_stride, const float *x, const float *w, uint32_t K,
                          uint64_t n);
void kern_arm_dots_f32(const float *x, const float *v, uint64_t stride, uint32_t m, uint32_t n, float *out);
void kern_arm_mix_f32(float *out, const float *c, const float *v, uint64_t stride, uint32_t m, uint32_t n);
void kern_arm_rope(float *v, uint32_t n_rot, const float *cs, int neox);

#endif
