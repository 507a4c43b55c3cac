/* membw [-t THREADS] [-r REPS] [-m MIB] [--huge] - the machine's read bandwidth,
 * the bound of generation (every weight byte is read once per token).
 *
 * A developer tool (not a test). THREADS threads (OpenMP, as pith's
 * matmuls split rows) each read their contiguous share of a MIB buffer
 * (default 1024, far beyond the caches) with eight independent 64-bit sums,
 * REPS times; prints the best pass in GB/s (10^9 bytes), plainly and with a
 * software prefetch 2 KiB ahead (what pith's one-token kernels ask for).
 * --huge asks for transparent huge pages (madvise): mapped model files are
 * read through 4 KiB pages, which the plain figure measures. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "../../port/port.h"

typedef struct {
    const uint64_t *buf;
    uint64_t words;
    int prefetch;
    uint64_t sum[64];
} Job;

static void reader(void *ctx, int ith, int nth)
{
    Job *j = ctx;
    uint64_t a = j->words * (uint64_t)ith / (uint64_t)nth / 8 * 8, b = j->words * (uint64_t)(ith + 1) / (uint64_t)nth / 8 * 8;
    uint64_t s[8] = {0};
    for (uint64_t i = a; i < b; i += 8) {
        if (j->prefetch) __builtin_prefetch(j->buf + i + 256);
        for (int k = 0; k < 8; k++) s[k] += j->buf[i + k];
    }
    j->sum[ith & 63] = s[0] + s[1] + s[2] + s[3] + s[4] + s[5] + s[6] + s[7];
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int main(int argc, char **argv)
{
    int threads = 1, reps = 5, huge = 0;
    long mib = 1024;
    for (int i = 1; i < argc; i++) {
        if (i + 1 < argc && strcmp(argv[i], "-t") == 0) threads = atoi(argv[++i]);
        else if (i + 1 < argc && strcmp(argv[i], "-r") == 0) reps = atoi(argv[++i]);
        else if (i + 1 < argc && strcmp(argv[i], "-m") == 0) mib = atol(argv[++i]);
        else if (strcmp(argv[i], "--huge") == 0) huge = 1;
        else {
            fprintf(stderr, "usage: membw [-t THREADS] [-r REPS] [-m MIB] [--huge]\n");
            return 2;
        }
    }
    if (threads < 1 || reps < 1 || mib < 1) {
        fprintf(stderr, "membw: bad argument\n");
        return 2;
    }
    port_set_threads(threads);
    uint64_t bytes = (uint64_t)mib << 20;
    void *map = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    uint64_t *buf = map == MAP_FAILED ? NULL : map;
    if (buf && huge) madvise(buf, bytes, MADV_HUGEPAGE);
    if (!buf) {
        fprintf(stderr, "membw: out of memory\n");
        return 2;
    }
    for (uint64_t i = 0; i < bytes / 8; i++) buf[i] = i; /* pages present before timing */
    Job job = {.buf = buf, .words = bytes / 8};
    for (int pf = 0; pf < 2; pf++) {
        job.prefetch = pf;
        double best = 1e30;
        for (int r = 0; r <= reps; r++) { /* pass 0 warms up */
            double t0 = now();
            port_parallel(reader, &job);
            double t = now() - t0;
            if (r > 0 && t < best) best = t;
        }
        uint64_t check = 0;
        for (int k = 0; k < 64; k++) check += job.sum[k];
        printf("membw: %d thread(s), %ld MiB%s, %s: %.1f GB/s (best of %d; check %llu)\n", threads, mib,
               huge ? " (huge pages asked)" : "", pf ? "prefetch 2 KiB ahead" : "plain", (double)bytes / best * 1e-9, reps,
               (unsigned long long)check % 1000);
    }
    munmap(buf, bytes);
    return 0;
}
