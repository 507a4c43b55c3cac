/* kernels_pack.c - weights laid out for the kernels that read them so:
 * repacked in place (kernels.h: KERN_PACK_ROWS, KernelSet.packed): packing
 * at load, a row back in the file's layout or as floats, and the matmul over
 * packed weights (the set's kernel, or the reference's formula for a set
 * without one); mapped ones with a copy of their scales (KERN_SIDE_ROWS,
 * KernelSet.sided). Run once per load or never on the hot path: built for
 * size. */
#include "kernels.h"

#include <stddef.h>
#include <string.h>

#include "quant.h"

/* bytes of a block of the packable types (0: not packable) */
static uint64_t pack_block_bytes(uint32_t type)
{
    return type == GGML_TYPE_Q8_0 ? sizeof(BlockQ8_0) : type == GGML_TYPE_Q4_0 ? sizeof(BlockQ4_0) : 0;
}

/* Both types' blocks are an F16 scale, then the codes. */
#define CODES offsetof(BlockQ8_0, qs)
_Static_assert(offsetof(BlockQ4_0, qs) == CODES && QK4_0 == QK8_0, "Q4_0 and Q8_0 blocks pack alike");

int kern_pack_wanted(uint32_t type, uint64_t rows)
{
    return type < GGML_TYPE_COUNT && pack_block_bytes(type) && kern_active()->packed[type] && rows > 0 &&
           rows % KERN_PACK_ROWS == 0;
}

/* Block b of row i (0..3) of a packed group p: its scale and code bytes
 * to and from a block of the file's layout. */
static void pack_block(uint8_t *p, uint64_t bb, int i, const uint8_t *blk)
{
    memcpy(p + 2 * i, blk, 2);
    for (uint64_t j = 0; j < (bb - CODES) / 4; j++) memcpy(p + 8 + 16 * j + 4 * (uint64_t)i, blk + CODES + 4 * j, 4);
}

static void unpack_block(const uint8_t *p, uint64_t bb, int i, uint8_t *blk)
{
    memcpy(blk, p + 2 * i, 2);
    for (uint64_t j = 0; j < (bb - CODES) / 4; j++) memcpy(blk + CODES + 4 * j, p + 8 + 16 * j + 4 * (uint64_t)i, 4);
}

void kern_pack(uint32_t type, uint8_t *w, uint64_t row_bytes, uint64_t rows, uint8_t *scratch)
{
    uint64_t bb = pack_block_bytes(type), nb = row_bytes / bb, group = KERN_PACK_ROWS * row_bytes;
    for (uint64_t g = 0; g < rows / KERN_PACK_ROWS; g++) {
        uint8_t *p = w + g * group;
        memcpy(scratch, p, group);
        for (uint64_t b = 0; b < nb; b++)
            for (int i = 0; i < KERN_PACK_ROWS; i++)
                pack_block(p + b * KERN_PACK_ROWS * bb, bb, i, scratch + (uint64_t)i * row_bytes + b * bb);
    }
    memset(scratch, 0, group);
}

void kern_unpack_row(uint32_t type, const uint8_t *w, uint64_t row_bytes, uint64_t r, uint8_t *out)
{
    uint64_t bb = pack_block_bytes(type), nb = row_bytes / bb;
    const uint8_t *p = w + r / KERN_PACK_ROWS * KERN_PACK_ROWS * row_bytes;
    for (uint64_t b = 0; b < nb; b++) unpack_block(p + b * KERN_PACK_ROWS * bb, bb, (int)(r % KERN_PACK_ROWS), out + b * bb);
}

/* Read in place (a prompt's embedding lookups: one row per token), with
 * quant.c's formulas: d * code (Q8_0), d * (nibble - 8) (Q4_0), the low
 * nibbles elements 0-15 and the high ones 16-31. */
void kern_dequant_packed_row(uint32_t type, const uint8_t *w, uint64_t row_bytes, uint64_t r, float *out)
{
    uint64_t bb = pack_block_bytes(type), nb = row_bytes / bb, i = r % KERN_PACK_ROWS;
    const uint8_t *g = w + r / KERN_PACK_ROWS * KERN_PACK_ROWS * row_bytes;
    for (const uint8_t *end = g + nb * KERN_PACK_ROWS * bb; g < end; g += KERN_PACK_ROWS * bb) {
        float d = quant_f16_to_f32((uint16_t)(g[2 * i] | g[2 * i + 1] << 8));
        const uint8_t *code = g + 8 + 4 * i; /* four codes of the row in each 16 bytes */
        if (type == GGML_TYPE_Q8_0) {
            for (int j = 0; j < QK8_0 / 4; j++, code += 16, out += 4) /* unrolled by hand: this file is -Os */
                out[0] = d * (float)(int8_t)code[0], out[1] = d * (float)(int8_t)code[1],
                out[2] = d * (float)(int8_t)code[2], out[3] = d * (float)(int8_t)code[3];
        } else {
            for (int j = 0; j < QK4_0 / 8; j++, code += 16, out += 4)
                for (int k = 0; k < 4; k++) {
                    out[k] = d * (float)((code[k] & 0x0f) - 8);
                    out[k + QK4_0 / 2] = d * (float)((code[k] >> 4) - 8);
                }
            out += QK4_0 / 2;
        }
    }
}

void kern_matmul_packed(uint32_t type, const uint8_t *w, uint64_t row_bytes, uint64_t n, uint64_t r0, uint64_t r1,
                        const void *act, uint64_t act_stride, int n_tok, float *out, uint64_t out_stride)
{
    KernPackedFn fn = kern_active()->packed[type];
    if (fn) {
        fn(n, w, row_bytes, r0, r1, act, act_stride, n_tok, out, out_stride);
        return;
    }
    /* no kernel for the layout: the reference's sum, block by block (its
     * s += d_w d_a S_b: one block's dot added to the sum, the same bits) */
    KernDotFn dot = kern_ref()->dot[type];
    uint64_t bb = pack_block_bytes(type), nb = n / QK8_0;
    for (uint64_t r = r0; r < r1; r++) {
        const uint8_t *p = w + r / KERN_PACK_ROWS * KERN_PACK_ROWS * row_bytes;
        for (int t = 0; t < n_tok; t++) {
            const KernQ8_0 *a = (const KernQ8_0 *)((const uint8_t *)act + (uint64_t)t * act_stride);
            float s = 0.0f;
            for (uint64_t b = 0; b < nb; b++) {
                uint8_t blk[sizeof(BlockQ8_0)];
                float part;
                unpack_block(p + b * KERN_PACK_ROWS * bb, bb, (int)(r % KERN_PACK_ROWS), blk);
                dot(QK8_0, blk, a + b, 0, 1, &part, 1);
                s += part;
            }
            out[(uint64_t)t * out_stride + r] = s;
        }
    }
}

uint64_t kern_side_bytes(uint32_t type, uint64_t rows, uint64_t n)
{
    if (type >= GGML_TYPE_COUNT || !pack_block_bytes(type) || !kern_active()->sided[type] || rows % KERN_SIDE_ROWS ||
        n % QK8_0)
        return 0;
    return rows * (n / QK8_0) * sizeof(uint16_t); /* rows * blocks <= the matrix's bytes / 18: no overflow */
}

void kern_side_fill(uint32_t type, const uint8_t *w, uint64_t row_bytes, uint64_t rows, uint16_t *side)
{
    uint64_t bb = pack_block_bytes(type), nb = row_bytes / bb;
    for (uint64_t r = 0; r < rows; r++)
        for (uint64_t b = 0; b < nb; b++) {
            const uint8_t *d = w + r * row_bytes + b * bb; /* the block's scale, little-endian F16 */
            side[(r / KERN_SIDE_ROWS * nb + b) * KERN_SIDE_ROWS + r % KERN_SIDE_ROWS] = (uint16_t)(d[0] | d[1] << 8);
        }
}

void kern_matmul_sided(uint32_t type, const uint8_t *w, uint64_t row_bytes, uint64_t n, uint64_t r0, uint64_t r1,
                       const uint16_t *side, const void *act, uint64_t act_stride, int n_tok, float *out,
                       uint64_t out_stride)
{
    KernSidedFn fn = kern_active()->sided[type];
    if (fn) fn(n, w, row_bytes, r0, r1, side, act, act_stride, n_tok, out, out_stride);
    else kern_matmul(type, w, row_bytes, n, r0, r1, act, act_stride, n_tok, out, out_stride);
}
