/* Threads: OpenMP behind one call, so the core never sees a thread API. */
#include <unistd.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "port.h"

static int n_threads = 1;

int port_cpu_count(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n >= 1 ? (int)n : 1;
}

void port_set_threads(int n)
{
    n_threads = n < 1 ? 1 : n;
#ifdef _OPENMP
    omp_set_num_threads(n_threads);
#endif
}

int port_threads(void)
{
    return n_threads;
}

void port_parallel(void (*fn)(void *ctx, int ith, int nth), void *ctx)
{
#ifdef _OPENMP
    if (n_threads > 1) {
        int nth = n_threads;
#pragma omp parallel num_threads(nth)
        fn(ctx, omp_get_thread_num(), nth);
        return;
    }
#endif
    fn(ctx, 0, 1);
}

void port_barrier(void)
{
#ifdef _OPENMP
    if (n_threads > 1) {
#pragma omp barrier
    }
#endif
}
