/* port/musl_gomp_task.c's gomp_init_task and gomp_end_task against the real ones
 * of libgomp.a's task.o, linked in as real_gomp_init_task and
 * real_gomp_end_task (tests/t_static.sh renames them with objcopy and hides
 * the rest of task.o). Built fully static against musl with the glue; run
 * with OMP_NUM_THREADS=2. Checks:
 *  - init: both write the same bytes into the same garbage, for several
 *    fills, parents and ICVs (so the glue sets exactly task.o's fields);
 *  - end: both hand the thread back to the parent task, seen through
 *    omp_get_max_threads (libgomp's own reading of the current task's ICVs);
 *  - a parallel region (team.o starts and ends each thread's implicit task
 *    with the glue's functions): each thread sees its team's ICVs, a
 *    thread's omp_set_num_threads stays in its own task, and the encountering
 *    thread's ICVs are back after the region. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void gomp_init_task(void *task, void *parent, const void *icv);
void real_gomp_init_task(void *task, void *parent, const void *icv);
void gomp_end_task(void);
void real_gomp_end_task(void);

/* task.o runs target tasks through this: defined so that libgomp's
 * offloading code (target.o) is not linked into the test either. */
_Bool gomp_target_task_fn(void *data);
_Bool gomp_target_task_fn(void *data)
{
    (void)data;
    abort();
}

/* struct gomp_task is 224 bytes on LP64 targets (128 on 32-bit ones) */
#define TASK_BYTES 512

static int failures;
static void expect(int cond, const char *what)
{
    if (!cond) {
        printf("FAIL: %s\n", what);
        failures++;
    }
}

static int compare_init(unsigned char fill, void *parent, unsigned char icv_seed)
{
    static _Alignas(64) unsigned char real[TASK_BYTES], glue[TASK_BYTES];
    _Alignas(16) unsigned char icv[64];
    for (int i = 0; i < (int)sizeof icv; i++) icv[i] = (unsigned char)(icv_seed + 13 * i);
    memset(real, fill, sizeof real);
    memset(glue, fill, sizeof glue);
    real_gomp_init_task(real, parent, icv);
    gomp_init_task(glue, parent, icv);
    return memcmp(real, glue, sizeof real) == 0;
}

/* omp_set_num_threads gives the initial thread a task of its own (parent:
 * none); ending it leaves the thread with none, and the global ICVs
 * (OMP_NUM_THREADS=2) apply again. */
static void check_end(void (*end_task)(void), const char *name)
{
    char what[80];
    omp_set_num_threads(3);
    snprintf(what, sizeof what, "%s: the thread's own task has nthreads 3", name);
    expect(omp_get_max_threads() == 3, what);
    end_task();
    snprintf(what, sizeof what, "%s: after it ends, the global nthreads 2", name);
    expect(omp_get_max_threads() == 2, what);
}

int main(void)
{
    static const unsigned char fills[] = {0x00, 0xa5, 0xff};
    for (int f = 0; f < 3; f++)
        for (int p = 0; p < 2; p++) {
            void *parent = p ? (void *)fills : NULL;
            expect(compare_init(fills[f], parent, (unsigned char)(7 * f + p)), "gomp_init_task writes what task.o's does");
        }

    check_end(real_gomp_end_task, "task.o's gomp_end_task");
    check_end(gomp_end_task, "the glue's gomp_end_task");

    omp_set_num_threads(3);
    int wrong = 0, threads = 0;
#pragma omp parallel num_threads(2) reduction(+ : wrong, threads)
    {
        threads++;
        if (omp_get_num_threads() != 2 || omp_get_max_threads() != 3) wrong++;
        omp_set_num_threads(5 + omp_get_thread_num());
        if (omp_get_max_threads() != 5 + omp_get_thread_num()) wrong++;
    }
    expect(threads == 2 && wrong == 0, "a parallel region's threads see their own ICVs");
    expect(omp_get_max_threads() == 3, "the encountering thread's ICVs after the region");
    for (int r = 0; r < 100; r++) {
        int sum = 0;
#pragma omp parallel num_threads(2) reduction(+ : sum)
        {
            sum += omp_get_thread_num() + 1;
#pragma omp barrier
        }
        if (sum != 3) wrong++;
    }
    expect(wrong == 0, "100 regions with a barrier each");
    printf("gomp_task: %d failures\n", failures);
    return failures != 0;
}
