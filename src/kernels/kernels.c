/* kernels.c - choosing the kernel set, activation formats, the tiled matmul. */
#include "kernels.h"

/* Filled on the first call (kern_select's, before any thread runs): the
 * reference kernels (ref/kernels_ref.c) and dot[] from the type table, where
 * each type's row names its reference; kept in zeroed memory, so the set
 * costs the binary no initialized data. */
const KernelSet *kern_ref(void)
{
    static KernelSet set;
    if (set.name) return &set;
    for (uint32_t t = 0; t < GGML_TYPE_COUNT; t++) {
        const KernTypeOps *ops = kern_type_ops(t);
        if (ops) set.dot[t] = ops->ref_dot;
    }
    kern_ref_fill(&set);
    return &set;
}

#include <string.h>

static KernelSet active;
static int chosen;

void kern_select(int mode)
{
    int force_ref = mode == KERN_REFERENCE;
    const KernelSet *ref = kern_ref(), *best = NULL;
    if (!force_ref) best = kern_x86();
    if (!force_ref && !best) best = kern_arm();
    active = *ref;
    if (best) {
        active.name = best->name;
        for (int t = 0; t < GGML_TYPE_COUNT; t++)
            if (best->dot[t]) active.dot[t] = best->dot[t];
        for (int t = 0; t < GGML_TYPE_COUNT; t++) /* multi-row kernels a set has (ARM); x86's come below */
            if (best->rows[t]) active.rows[t] = best->rows[t];
        for (int t = 0; t < GGML_TYPE_COUNT; t++) active.packed[t] = best->packed[t], active.sided[t] = best->sided[t];
        active.f16_in_half = best->f16_in_half;
        active.delta_chunk = best->delta_chunk;
        if (best == kern_x86() && kern_x86_rows(active.rows, active.packed, mode != KERN_NO_AVX512)) {
            active.name = "x86-64 AVX2+FMA+F16C, AVX-512 VNNI";
            active.map_first = 1;
        }
#define TAKE(f) \
    if (best->f) active.f = best->f;
        TAKE(quantize_q8_0)
        TAKE(quantize_q8_k)
        TAKE(dot_f16)
        TAKE(axpy_f16)
        TAKE(dot_f32)
        TAKE(axpy_f32)
        TAKE(dot_q8_0_f32)
        TAKE(axpy_q8_0)
        TAKE(to_f16)
        TAKE(silu_mul)
        TAKE(rmsnorm)
        TAKE(rope)
        TAKE(exp_sum)
        TAKE(scale_max)
        TAKE(dots_f16)
        TAKE(wsum_f16)
        TAKE(gelu_mul)
        TAKE(delta_step)
        TAKE(causal_conv)
        TAKE(dots_f32)
        TAKE(mix_f32)
#undef TAKE
        if (best == kern_x86() && mode != KERN_NO_AVX512) kern_x86_att_wide(&active);
    }
    chosen = 1;
}

const KernelSet *kern_active(void)
{
    if (!chosen) kern_select(0);
    return &active;
}

KernActFormat kern_act_format(uint32_t type)
{
    const KernTypeOps *ops = kern_type_ops(type);
    return ops ? ops->act_format : KERN_ACT_F32;
}

uint32_t kern_act_block(KernActFormat f)
{
    return f == KERN_ACT_Q8_0 ? QK8_0 : f == KERN_ACT_Q8_K ? QK_K : 1;
}

uint64_t kern_act_bytes(KernActFormat f, uint64_t n)
{
    if (f == KERN_ACT_Q8_0) return n / QK8_0 * sizeof(KernQ8_0);
    if (f == KERN_ACT_Q8_K) return n / QK_K * sizeof(KernQ8_K);
    return n * sizeof(float);
}

void kern_quantize_act(uint32_t type, const float *x, void *out, uint64_t n)
{
    const KernelSet *k = kern_active();
    switch (kern_act_format(type)) {
    case KERN_ACT_Q8_0:
        k->quantize_q8_0(x, out, n);
        return;
    case KERN_ACT_Q8_K:
        k->quantize_q8_k(x, out, n);
        return;
    default:
        memcpy(out, x, n * sizeof *x);
        return;
    }
}

float kern_vec_dot(uint32_t type, uint64_t n, const uint8_t *row, const void *act)
{
    float out = 0.0f;
    kern_active()->dot[type](n, row, act, 0, 1, &out, 1);
    return out;
}

/* Rows per tile: about 16 KiB of weights, which stay in the L1/L2 cache
 * while every token of the chunk passes over them. */
#define TILE_BYTES (16 * 1024)

void kern_matmul(uint32_t type, const uint8_t *w, uint64_t row_bytes, uint64_t n, uint64_t r0, uint64_t r1,
                 const void *act, uint64_t act_stride, int n_tok, float *out, uint64_t out_stride)
{
    KernDotFn dot = kern_active()->dot[type];
    const uint8_t *a = act;
    if (kern_active()->rows[type]) { /* tiles rows and tokens itself */
        kern_active()->rows[type](n, w + r0 * row_bytes, row_bytes, r1 - r0, act, act_stride, n_tok, out + r0,
                                  out_stride);
        return;
    }
    if (n_tok <= KERN_MAX_NT) {
        for (uint64_t r = r0; r < r1; r++) dot(n, w + r * row_bytes, a, act_stride, n_tok, out + r, out_stride);
        return;
    }
    uint64_t tile = row_bytes < TILE_BYTES ? TILE_BYTES / row_bytes : 1;
    for (uint64_t t0 = r0; t0 < r1; t0 += tile) {
        uint64_t t1 = t0 + tile < r1 ? t0 + tile : r1;
        for (int k = 0; k < n_tok; k += KERN_MAX_NT) {
            int nt = n_tok - k < KERN_MAX_NT ? n_tok - k : KERN_MAX_NT;
            for (uint64_t r = t0; r < t1; r++)
                dot(n, w + r * row_bytes, a + (uint64_t)k * act_stride, act_stride, nt,
                    out + (uint64_t)k * out_stride + r, out_stride);
        }
    }
}
