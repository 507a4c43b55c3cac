/* Built fully static against musl with port/musl_gomp.c (tests/t_static.sh):
 * with OMP_PROC_BIND=true and OMP_PLACES=cores every OpenMP thread must be
 * bound to exactly one CPU, which needs the recorded-mask glue to work. */
#define _GNU_SOURCE
#include <omp.h>
#include <sched.h>
#include <stdio.h>

int main(void)
{
    int bad = 0, nth = 0;
#pragma omp parallel reduction(+ : bad, nth)
    {
        cpu_set_t set;
        CPU_ZERO(&set);
        if (sched_getaffinity(0, sizeof set, &set) != 0 || CPU_COUNT(&set) != 1) bad++;
        nth++;
    }
    printf("threads %d, not bound to one cpu: %d\n", nth, bad);
    return bad != 0 || nth < 2;
}
