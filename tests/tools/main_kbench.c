/* kbench - one matmul of random weights, repeated, for counting a kernel's
 * instructions (armcount's count.sh under qemu: the difference between
 * REPS = 2 and REPS = 1 is one matmul, setup excluded).
 *
 *   kbench TYPE ROWS COLS NTOK REPS      TYPE: f16 q8_0 q4_0 q4_k q5_k q6_k
 *
 * e.g. the instructions of a 2- and a 4-token matmul against a 1-token one
 * (serve --slots decodes 2-4 tokens per step). Prints the kernel set and a
 * checksum of the results, and the best repetition's time (one thread,
 * wall clock: weights larger than the caches give the kernel's streaming
 * speed). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../../src/base/ggml_type.h"
#include "../../src/kernels/kernels.h"
#include "../../src/kernels/quant.h"
#include "test_rng.h"

static double seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int main(int argc, char **argv)
{
    static const struct {
        const char *name;
        uint32_t type;
    } types[] = {{"f16", GGML_TYPE_F16},   {"q8_0", GGML_TYPE_Q8_0}, {"q4_0", GGML_TYPE_Q4_0},
                 {"q4_k", GGML_TYPE_Q4_K}, {"q5_k", GGML_TYPE_Q5_K}, {"q6_k", GGML_TYPE_Q6_K}};
    if (argc != 6) {
        fprintf(stderr, "usage: kbench f16|q8_0|q4_0|q4_k|q5_k|q6_k ROWS COLS NTOK REPS\n");
        return 2;
    }
    uint32_t type = GGML_TYPE_COUNT;
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
        if (strcmp(argv[1], types[i].name) == 0) type = types[i].type;
    long rows = atol(argv[2]), cols = atol(argv[3]), ntok = atol(argv[4]), reps = atol(argv[5]);
    if (type == GGML_TYPE_COUNT || rows < 1 || cols < 256 || cols % 256 || ntok < 1 || ntok > 512 || reps < 0) {
        fprintf(stderr, "kbench: bad arguments (a known type, ROWS >= 1, COLS a multiple of 256, NTOK 1..512)\n");
        return 2;
    }
    TestRng rng = {0x243f6a8885a308d3ull};
    uint64_t row_bytes = ggml_row_bytes(type, (uint64_t)cols);
    uint64_t act_stride = kern_act_bytes(kern_act_format(type), (uint64_t)cols);
    uint8_t *w = malloc((size_t)(rows * row_bytes)), *act = malloc((size_t)(ntok * act_stride));
    float *x = malloc(sizeof(float) * (size_t)cols), *out = malloc(sizeof(float) * (size_t)(rows * ntok));
    if (!w || !act || !x || !out) {
        fprintf(stderr, "kbench: out of memory\n");
        return 2;
    }
    for (long r = 0; r < rows; r++) {
        for (long i = 0; i < cols; i++) x[i] = test_rng_f(&rng);
        quant_quantize_row(type, x, w + r * row_bytes, (uint64_t)cols);
    }
    for (long t = 0; t < ntok; t++) {
        for (long i = 0; i < cols; i++) x[i] = test_rng_f(&rng);
        kern_quantize_act(type, x, act + t * act_stride, (uint64_t)cols);
    }
    double sum = 0, best = 1e30;
    for (long k = 0; k < reps; k++) {
        double t0 = seconds();
        kern_matmul(type, w, row_bytes, (uint64_t)cols, 0, (uint64_t)rows, act, act_stride, (int)ntok, out,
                    (uint64_t)rows);
        double t = seconds() - t0;
        if (t < best) best = t;
        for (long i = 0; i < rows * ntok; i++) sum += out[i];
    }
    printf("%s: %s %ld x %ld, %ld tokens, %ld reps, checksum %.6g\n", kern_active()->name, argv[1], rows, cols, ntok,
           reps, sum);
    /* wall clock, one thread: on a shared machine the best repetition */
    if (reps > 0)
        printf("best %.3f ms per matmul, weights %.2f GB/s\n", best * 1e3, (double)(rows * row_bytes) / best * 1e-9);
    free(w);
    free(act);
    free(x);
    free(out);
    return 0;
}
