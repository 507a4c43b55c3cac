/* matbench MODEL [-t THREADS] [-r REPS] [--nt 1,2,4,8] [--no-avx512] [--ref] [--read]
 *
 * A developer tool (not a test): the cost of one decoding step's matmuls
 * against the number of tokens that share it (pith serve --slots N decodes
 * one token per active slot in one pass). For each nt it runs every matrix
 * of every layer of MODEL, then the output matrix, as forward.c does (rows
 * split across the threads, activations quantized once per input), and
 * prints the milliseconds per step (the best of REPS after a warm-up pass
 * over the weights), that over nt = 1's, and the time per weight type:
 * the process's CPU time (on a machine shared with other work the wall
 * clock also counts the time other programs had the cores; with threads
 * the CPU time is that of all of them). With
 * -r 1 under callgrind (--toggle-collect=kern_matmul) it counts the
 * instructions of the kernels instead. --read: the weights read into
 * memory (repacked where the kernels want it, as pith's --load read)
 * instead of mapped. Activations are random (the time
 * does not depend on them). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../../port/port.h"
#include "../../src/kernels/kernels.h"
#include "test_model.h"
#include "test_rng.h"

enum { MAX_NT = 16, MAX_MATS = 1024 };

typedef struct {
    const Weight *w;
    const void *act;
    uint64_t act_stride;
    float *out;
    int nt;
} Job;

static void worker(void *ctx, int ith, int nth)
{
    const Job *j = ctx;
    uint64_t rows = j->w->rows, a = rows * (uint64_t)ith / (uint64_t)nth, b = rows * (uint64_t)(ith + 1) / (uint64_t)nth;
    if (a < b)
        (j->w->packed ? kern_matmul_packed : kern_matmul)(j->w->type, j->w->data, j->w->row_bytes, j->w->cols, a, b,
                                                          j->act, j->act_stride, j->nt, j->out, j->w->rows);
}

static double cpu_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void usage(void)
{
    fprintf(stderr, "usage: matbench MODEL [-t THREADS] [-r REPS] [--nt 1,2,4,8] [--no-avx512] [--ref] [--read]\n");
    exit(2);
}

int main(int argc, char **argv)
{
    const char *path = NULL, *list = "1,2,3,4,6,8";
    int threads = 1, reps = 5, mode = KERN_BEST, mapped = 1;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-t") && i + 1 < argc) threads = atoi(argv[++i]);
        else if (!strcmp(argv[i], "-r") && i + 1 < argc) reps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--nt") && i + 1 < argc) list = argv[++i];
        else if (!strcmp(argv[i], "--no-avx512")) mode = KERN_NO_AVX512;
        else if (!strcmp(argv[i], "--ref")) mode = KERN_REFERENCE;
        else if (!strcmp(argv[i], "--read")) mapped = 0;
        else if (argv[i][0] == '-' || path) usage();
        else path = argv[i];
    }
    if (!path || threads < 1 || reps < 1) usage();
    int nts[MAX_NT], n_nt = 0;
    for (const char *p = list; *p && n_nt < MAX_NT; p = strchr(p, ',') ? strchr(p, ',') + 1 : p + strlen(p)) {
        nts[n_nt] = atoi(p);
        if (nts[n_nt] < 1 || nts[n_nt] > 64) usage();
        n_nt++;
    }
    kern_select(mode);
    port_set_threads(threads);
    ModelOptions opt = {.n_ctx = 16, .kv_type = KV_F16, .batch = 1, .load = mapped ? LOAD_MMAP : LOAD_READ};
    TestModel *L = test_model_load(path, mapped, &opt);
    if (!L) return 1;
    const Model *m = &L->m;

    const Weight *mats[MAX_MATS];
    int n_mats = 0;
    uint64_t max_cols = 0, max_rows = 0;
    for (uint32_t l = 0; l < m->cfg.n_layer; l++)
        for (int i = 0; i < LT_COUNT; i++)
            if (layer_tensors[i].matrix && m->cfg.has[i] && n_mats < MAX_MATS - 1)
                mats[n_mats++] = layer_matrix(&m->layers[l], i);
    mats[n_mats++] = &m->output;
    for (int i = 0; i < n_mats; i++) {
        if (mats[i]->cols > max_cols) max_cols = mats[i]->cols;
        if (mats[i]->rows > max_rows) max_rows = mats[i]->rows;
    }

    int nt_max = 1;
    for (int k = 0; k < n_nt; k++) nt_max = nts[k] > nt_max ? nts[k] : nt_max;
    float *x = malloc(max_cols * (size_t)nt_max * sizeof *x);
    void *act[3];
    for (int f = 0; f < 3; f++) act[f] = malloc(kern_act_bytes((KernActFormat)f, max_cols) * (size_t)nt_max + 64);
    float *out = malloc(max_rows * (size_t)nt_max * sizeof *out);
    TestRng rng = {0x5eed};
    for (uint64_t i = 0; i < max_cols * (uint64_t)nt_max; i++) x[i] = test_rng_f(&rng);

    printf("model: %s\nkernels: %s; threads: %d; best of %d\n", path, kern_active()->name, threads, reps);
    printf("| nt | CPU ms/step | x nt=1 | ms/token |");
    int types[GGML_TYPE_COUNT], n_types = 0;
    for (int i = 0; i < n_mats; i++) {
        int seen = 0;
        for (int k = 0; k < n_types; k++) seen |= types[k] == (int)mats[i]->type;
        if (!seen) types[n_types++] = (int)mats[i]->type;
    }
    for (int k = 0; k < n_types; k++) printf(" %s ms |", ggml_type_info((uint32_t)types[k])->name);
    printf("\n|---|---|---|---|");
    for (int k = 0; k < n_types; k++) printf("---|");
    printf("\n");

    double base = 0;
    for (int k = 0; k < n_nt; k++) {
        int nt = nts[k];
        double best = 1e30, best_type[GGML_TYPE_COUNT] = {0};
        for (int r = 0; r <= reps; r++) { /* r = 0: the warm-up */
            double total = 0, per_type[GGML_TYPE_COUNT] = {0};
            for (int i = 0; i < n_mats; i++) {
                const Weight *w = mats[i];
                KernActFormat f = kern_act_format(w->type);
                uint64_t stride = kern_act_bytes(f, w->cols);
                double t0 = cpu_seconds();
                for (int t = 0; t < nt; t++)
                    kern_quantize_act(w->type, x + (uint64_t)t * w->cols, (uint8_t *)act[f] + t * stride, w->cols);
                Job j = {w, act[f], stride, out, nt};
                port_parallel(worker, &j);
                double dt = cpu_seconds() - t0;
                total += dt;
                per_type[w->type] += dt;
            }
            if (r > 0 && total < best) {
                best = total;
                memcpy(best_type, per_type, sizeof per_type);
            }
        }
        if (k == 0) base = best / nts[0];
        printf("| %d | %.2f | %.2f | %.3f |", nt, best * 1e3, best / base, best * 1e3 / nt);
        for (int q = 0; q < n_types; q++) printf(" %.2f |", best_type[types[q]] * 1e3);
        printf("\n");
        fflush(stdout);
    }
    free(x);
    free(out);
    for (int f = 0; f < 3; f++) free(act[f]);
    test_model_free(L);
    return 0;
}
