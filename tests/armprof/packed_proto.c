/* packed_proto.c - a count-only prototype (not part of pith): Q8_0 and Q4_0
 * rows repacked four rows interleaved, and the one-token matmul over them,
 * to measure under armcount what repacking would save on the A76 before
 * building it into the loader (docs/performance-arm.md).
 *
 * Layout of a group of four rows, block by block: the four F16 scales (8
 * bytes), then Q8_0: 8 vectors, vector j = bytes 4j..4j+3 of rows 0..3;
 * Q4_0: 4 vectors, byte 4r+k of vector j = element 4j+k of row r in the
 * low nibble, element 16+4j+k in the high one. One SDOT by element then
 * gives four rows' sums in the four lanes (no pairwise adds), the four
 * scales are one load and one FCVTL, Q4_0's -8 is the sums' initial value
 * (-8 x the activation's code sum). Eight rows (two groups) per pass share
 * the activation loads. Results are checked bit for bit against pith's
 * float step (acc = fma(float(S_b), dw_b * da_b, acc)).
 *
 *   aarch64-linux-musl-gcc -O2 -static -march=armv8.2-a+dotprod+fp16 -o packed tests/armprof/packed_proto.c
 *   sh ../shared/tools/armcount/count.sh cortex-a76 ./packed 8|4 ROWS COLS REPS   (REPS 2 minus 1: one matmul)
 */
#include <arm_neon.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint32_t rs = 1;
static uint32_t rnd(void) { rs = rs * 1664525u + 1013904223u; return rs >> 8; }

/* packed Q8_0 group-block: 4 f16 scales, then 8 vectors: vector j = rows 0..3 bytes 4j..4j+3 */
/* packed Q4_0 group-block: 4 f16 scales, then 4 vectors: byte 4r+k of vector j = lo: elem 4j+k, hi: elem 16+4j+k of row r */

/* 8 rows (2 groups) per pass, nb blocks, act: codes (32 per block), da (per block), c (-8*sum, Q4 only) */
static void q8_gen(const uint8_t *g0, const uint8_t *g1, const int8_t *a, const float *da, uint64_t nb, float *out)
{
    float32x4_t f0 = vdupq_n_f32(0), f1 = vdupq_n_f32(0);
    uint64_t n = nb / 4;
    __asm__ volatile(
        "1:\n\t"
        "ldr q22, [%[da]], #16\n\t"
#define BLK(k) \
        "ld1 {v20.16b, v21.16b}, [%[a]], #32\n\t" \
        "ldr d16, [%[g0]], #8\n\t" \
        "ld1 {v0.16b-v3.16b}, [%[g0]], #64\n\t" \
        "ld1 {v4.16b-v7.16b}, [%[g0]], #64\n\t" \
        "ldr d17, [%[g1]], #8\n\t" \
        "ld1 {v8.16b-v11.16b}, [%[g1]], #64\n\t" \
        "ld1 {v12.16b-v15.16b}, [%[g1]], #64\n\t" \
        "movi v24.4s, #0\n\t" "movi v25.4s, #0\n\t" \
        "sdot v24.4s, v0.16b, v20.4b[0]\n\t" "sdot v25.4s, v8.16b, v20.4b[0]\n\t" \
        "sdot v24.4s, v1.16b, v20.4b[1]\n\t" "sdot v25.4s, v9.16b, v20.4b[1]\n\t" \
        "sdot v24.4s, v2.16b, v20.4b[2]\n\t" "sdot v25.4s, v10.16b, v20.4b[2]\n\t" \
        "sdot v24.4s, v3.16b, v20.4b[3]\n\t" "sdot v25.4s, v11.16b, v20.4b[3]\n\t" \
        "sdot v24.4s, v4.16b, v21.4b[0]\n\t" "sdot v25.4s, v12.16b, v21.4b[0]\n\t" \
        "sdot v24.4s, v5.16b, v21.4b[1]\n\t" "sdot v25.4s, v13.16b, v21.4b[1]\n\t" \
        "sdot v24.4s, v6.16b, v21.4b[2]\n\t" "sdot v25.4s, v14.16b, v21.4b[2]\n\t" \
        "sdot v24.4s, v7.16b, v21.4b[3]\n\t" "sdot v25.4s, v15.16b, v21.4b[3]\n\t" \
        "fcvtl v16.4s, v16.4h\n\t" "fcvtl v17.4s, v17.4h\n\t" \
        "scvtf v24.4s, v24.4s\n\t" "scvtf v25.4s, v25.4s\n\t" \
        "fmul v16.4s, v16.4s, v22.s[" k "]\n\t" "fmul v17.4s, v17.4s, v22.s[" k "]\n\t" \
        "fmla %[f0].4s, v24.4s, v16.4s\n\t" "fmla %[f1].4s, v25.4s, v17.4s\n\t"
        BLK("0") BLK("1") BLK("2") BLK("3")
        "subs %[n], %[n], #1\n\t"
        "b.ne 1b\n\t"
        : [g0] "+r"(g0), [g1] "+r"(g1), [a] "+r"(a), [da] "+r"(da), [n] "+r"(n), [f0] "+w"(f0), [f1] "+w"(f1)
        :
        : "v0", "v1", "v2", "v3", "v4", "v5", "v6", "v7", "v8", "v9", "v10", "v11", "v12", "v13", "v14", "v15",
          "v16", "v17", "v20", "v21", "v22", "v24", "v25", "cc", "memory");
#undef BLK
    vst1q_f32(out, f0);
    vst1q_f32(out + 4, f1);
}

static void q4_gen(const uint8_t *g0, const uint8_t *g1, const int8_t *a, const float *da, const int32_t *c, uint64_t nb,
                   float *out)
{
    float32x4_t f0 = vdupq_n_f32(0), f1 = vdupq_n_f32(0);
    uint64_t n = nb / 4;
    __asm__ volatile(
        "movi v31.16b, #15\n\t"
        "1:\n\t"
        "ldr q22, [%[da]], #16\n\t"
        "ldr q23, [%[c]], #16\n\t"
#define BLK(k) \
        "ld1 {v20.16b, v21.16b}, [%[a]], #32\n\t" \
        "ldr d16, [%[g0]], #8\n\t" \
        "ld1 {v0.16b-v3.16b}, [%[g0]], #64\n\t" \
        "ldr d17, [%[g1]], #8\n\t" \
        "ld1 {v8.16b-v11.16b}, [%[g1]], #64\n\t" \
        "dup v24.4s, v23.s[" k "]\n\t" "dup v25.4s, v23.s[" k "]\n\t" \
        "and v4.16b, v0.16b, v31.16b\n\t" "and v5.16b, v1.16b, v31.16b\n\t" \
        "and v6.16b, v2.16b, v31.16b\n\t" "and v7.16b, v3.16b, v31.16b\n\t" \
        "ushr v0.16b, v0.16b, #4\n\t" "ushr v1.16b, v1.16b, #4\n\t" \
        "ushr v2.16b, v2.16b, #4\n\t" "ushr v3.16b, v3.16b, #4\n\t" \
        "and v12.16b, v8.16b, v31.16b\n\t" "and v13.16b, v9.16b, v31.16b\n\t" \
        "and v14.16b, v10.16b, v31.16b\n\t" "and v15.16b, v11.16b, v31.16b\n\t" \
        "ushr v8.16b, v8.16b, #4\n\t" "ushr v9.16b, v9.16b, #4\n\t" \
        "ushr v10.16b, v10.16b, #4\n\t" "ushr v11.16b, v11.16b, #4\n\t" \
        "sdot v24.4s, v4.16b, v20.4b[0]\n\t" "sdot v25.4s, v12.16b, v20.4b[0]\n\t" \
        "sdot v24.4s, v5.16b, v20.4b[1]\n\t" "sdot v25.4s, v13.16b, v20.4b[1]\n\t" \
        "sdot v24.4s, v6.16b, v20.4b[2]\n\t" "sdot v25.4s, v14.16b, v20.4b[2]\n\t" \
        "sdot v24.4s, v7.16b, v20.4b[3]\n\t" "sdot v25.4s, v15.16b, v20.4b[3]\n\t" \
        "sdot v24.4s, v0.16b, v21.4b[0]\n\t" "sdot v25.4s, v8.16b, v21.4b[0]\n\t" \
        "sdot v24.4s, v1.16b, v21.4b[1]\n\t" "sdot v25.4s, v9.16b, v21.4b[1]\n\t" \
        "sdot v24.4s, v2.16b, v21.4b[2]\n\t" "sdot v25.4s, v10.16b, v21.4b[2]\n\t" \
        "sdot v24.4s, v3.16b, v21.4b[3]\n\t" "sdot v25.4s, v11.16b, v21.4b[3]\n\t" \
        "fcvtl v16.4s, v16.4h\n\t" "fcvtl v17.4s, v17.4h\n\t" \
        "scvtf v24.4s, v24.4s\n\t" "scvtf v25.4s, v25.4s\n\t" \
        "fmul v16.4s, v16.4s, v22.s[" k "]\n\t" "fmul v17.4s, v17.4s, v22.s[" k "]\n\t" \
        "fmla %[f0].4s, v24.4s, v16.4s\n\t" "fmla %[f1].4s, v25.4s, v17.4s\n\t"
        BLK("0") BLK("1") BLK("2") BLK("3")
        "subs %[n], %[n], #1\n\t"
        "b.ne 1b\n\t"
        : [g0] "+r"(g0), [g1] "+r"(g1), [a] "+r"(a), [da] "+r"(da), [c] "+r"(c), [n] "+r"(n), [f0] "+w"(f0), [f1] "+w"(f1)
        :
        : "v0", "v1", "v2", "v3", "v4", "v5", "v6", "v7", "v8", "v9", "v10", "v11", "v12", "v13", "v14", "v15",
          "v16", "v17", "v20", "v21", "v22", "v23", "v24", "v25", "v31", "cc", "memory");
#undef BLK
    vst1q_f32(out, f0);
    vst1q_f32(out + 4, f1);
}

int main(int argc, char **argv)
{
    int q4 = argc > 1 && argv[1][0] == '4';
    uint64_t rows = argc > 2 ? strtoull(argv[2], 0, 10) : 256, cols = argc > 3 ? strtoull(argv[3], 0, 10) : 1024;
    int reps = argc > 4 ? atoi(argv[4]) : 1;
    uint64_t nb = cols / 32;
    /* plain data: codes (int8, Q4: 0..15), scales per row-block (float, f16-exact) */
    int8_t *q = malloc(rows * cols);
    float *d = malloc(rows * nb * sizeof(float));
    int8_t *a = malloc(cols);
    float *da = malloc(nb * sizeof(float));
    int32_t *c = malloc(nb * sizeof(int32_t));
    for (uint64_t i = 0; i < rows * cols; i++) q[i] = q4 ? (int8_t)(rnd() % 16) : (int8_t)(rnd() % 255 - 127);
    for (uint64_t i = 0; i < rows * nb; i++) d[i] = (float)(rnd() % 1024 + 1) / 65536.0f;
    for (uint64_t i = 0; i < cols; i++) a[i] = (int8_t)(rnd() % 255 - 127);
    for (uint64_t b = 0; b < nb; b++) {
        da[b] = (float)(rnd() % 1024 + 1) / 4096.0f;
        int s = 0;
        for (int j = 0; j < 32; j++) s += a[32 * b + j];
        c[b] = -8 * s;
    }
    /* packed */
    uint64_t gbytes = q4 ? 72 : 136;
    uint8_t *p = malloc(rows / 4 * nb * gbytes);
    for (uint64_t g = 0; g < rows / 4; g++)
        for (uint64_t b = 0; b < nb; b++) {
            uint8_t *o = p + (g * nb + b) * gbytes;
            for (int r = 0; r < 4; r++) {
                __fp16 h = (__fp16)d[(4 * g + r) * nb + b];
                memcpy(o + 2 * r, &h, 2);
            }
            const int8_t *qq = q + 4 * g * cols + 32 * b;
            if (!q4) {
                for (int j = 0; j < 8; j++)
                    for (int r = 0; r < 4; r++)
                        for (int k = 0; k < 4; k++) o[8 + 16 * j + 4 * r + k] = (uint8_t)qq[r * cols + 4 * j + k];
            } else {
                for (int j = 0; j < 4; j++)
                    for (int r = 0; r < 4; r++)
                        for (int k = 0; k < 4; k++)
                            o[8 + 16 * j + 4 * r + k] =
                                (uint8_t)(qq[r * cols + 4 * j + k] | qq[r * cols + 16 + 4 * j + k] << 4);
            }
        }
    float *out = malloc(rows * sizeof(float));
    for (int rep = 0; rep < reps; rep++)
        for (uint64_t g = 0; g < rows / 4; g += 2) {
            if (q4) q4_gen(p + g * nb * gbytes, p + (g + 1) * nb * gbytes, a, da, c, nb, out + 4 * g);
            else q8_gen(p + g * nb * gbytes, p + (g + 1) * nb * gbytes, a, da, nb, out + 4 * g);
        }
    double worst = 0;
    for (uint64_t r = 0; r < rows; r++) {
        float acc = 0;
        for (uint64_t b = 0; b < nb; b++) {
            int s = 0;
            for (int j = 0; j < 32; j++) s += (q[r * cols + 32 * b + j] - (q4 ? 8 : 0)) * a[32 * b + j];
            acc = __builtin_fmaf((float)s, d[r * nb + b] * da[b], acc);
        }
        double e = acc == out[r] ? 0 : 1;
        if (e > worst) worst = e;
    }
    printf("%s %llu x %llu: %s\n", q4 ? "q4_0" : "q8_0", (unsigned long long)rows, (unsigned long long)cols,
           worst == 0 ? "bit-identical to the reference formula" : "MISMATCH");
    return worst != 0;
}
