/* The implicit tasks of libgomp's threads, for the fully static musl build
 * (compiled only when PITH_MUSL_GOMP is defined, as port/musl_gomp.c): in
 * place of libgomp's task.o, which is then not linked. Its own file because
 * it runs in every parallel region: built with the per-token files' flags,
 * not -Os (Makefile, COLD_SRC).
 *
 * libgomp's task.o (35 KB on x86-64: explicit tasks, taskloops, task
 * dependencies and reductions, none of which pith uses; it also pulls the
 * target offloading code, target.o) is linked only for four functions that
 * the parts pith does use call:
 *  - team.o starts and ends every thread's implicit task with
 *    gomp_init_task and gomp_end_task (defined below);
 *  - bar.o's team barrier calls gomp_barrier_handle_tasks only when the
 *    team has explicit tasks (team->task_count, or BAR_TASK_PENDING in the
 *    barrier), which only task.o's own entry points (GOMP_task, ...) create;
 *  - parallel.o's GOMP_parallel_reductions, emitted only for
 *    `parallel reduction(task, ...)`, calls gomp_parallel_reduction_register.
 * The last two cannot be reached, so they abort. Should pith ever use a
 * task construct, the compiler's call to GOMP_task pulls task.o in again
 * and the link fails with duplicate definitions instead of mixing the two.
 *
 * gomp_init_task and gomp_end_task write libgomp's private structures. The
 * mirrors below declare their leading fields as GCC 12's libgomp lays them
 * out (Debian 12's gcc 12.2, the libgomp.a of every target). The offsets
 * are asserted from task.o's machine code on the four targets, and
 * tests/static/gomp_task.c (tests/t_static.sh) compares these functions
 * byte for byte with the real ones from libgomp.a. */
#ifdef PITH_MUSL_GOMP
#include <stddef.h>
#include <stdlib.h>

struct pith_gomp_icv { /* struct gomp_task_icv: the per-task ICVs */
    unsigned long nthreads;
    int run_sched, run_sched_chunk, default_device;
    unsigned thread_limit;
    _Bool dyn;
    unsigned char max_active_levels;
    char bind;
    void *target_data;
};

struct pith_gomp_task { /* struct gomp_task, up to its last written field */
    struct pith_gomp_task *parent;
    /* children_queue: a splay tree's root, then a list (priority, first
     * task, last task a parent depends on) */
    void *queue_root;
    int queue_priority;
    void *queue_tasks, *queue_last_parent_depends_on;
    void *taskgroup, *dependers, *depend_hash, *taskwait;
    size_t depend_count, num_dependees;
    void *completion_sem;
    _Bool deferred;
    int priority;
    void *pnode[3][2];
    struct pith_gomp_icv icv;
    void (*fn)(void *);
    void *fn_data;
    int kind; /* enum gomp_task_kind: 0 is GOMP_TASK_IMPLICIT */
    _Bool in_tied_task, final_task, copy_ctors_done, parent_depends_on;
};

struct pith_gomp_thread { /* struct gomp_thread, up to its task */
    void (*fn)(void *);
    void *data;
    /* ts, struct gomp_team_state */
    void *team, *work_share, *last_work_share;
    unsigned team_id, level, active_level, place_partition_off, place_partition_len;
    unsigned long def_allocator, single_count, static_trip;
    struct pith_gomp_task *task; /* the task this thread runs */
};

/* Each thread's libgomp state (team.o's TLS variable). */
extern __thread struct pith_gomp_thread gomp_tls_data;

#define PITH_LP64 (sizeof(void *) == 8)
_Static_assert(offsetof(struct pith_gomp_task, depend_hash) == (PITH_LP64 ? 0x38 : 28), "gomp_task layout");
_Static_assert(offsetof(struct pith_gomp_task, completion_sem) == (PITH_LP64 ? 0x58 : 44), "gomp_task layout");
_Static_assert(offsetof(struct pith_gomp_task, icv) == (PITH_LP64 ? 0x98 : 80), "gomp_task layout");
_Static_assert(sizeof(struct pith_gomp_icv) == (PITH_LP64 ? 40 : 28), "gomp_task_icv size");
_Static_assert(offsetof(struct pith_gomp_task, kind) == (PITH_LP64 ? 0xd0 : 116), "gomp_task layout");
_Static_assert(offsetof(struct pith_gomp_thread, task) == (PITH_LP64 ? 0x58 : 52), "gomp_thread layout");

/* An implicit task with the given parent and ICVs: the fields task.o's
 * gomp_init_task sets, no others (libgomp leaves the rest to be set when a
 * task needs them). */
void gomp_init_task(struct pith_gomp_task *task, struct pith_gomp_task *parent, const struct pith_gomp_icv *icv);
void gomp_init_task(struct pith_gomp_task *task, struct pith_gomp_task *parent, const struct pith_gomp_icv *icv)
{
    task->parent = parent;
    task->queue_root = NULL;
    task->queue_tasks = NULL;
    task->queue_last_parent_depends_on = NULL;
    task->taskgroup = NULL;
    task->dependers = NULL;
    task->depend_hash = NULL;
    task->taskwait = NULL;
    task->depend_count = 0;
    task->completion_sem = NULL;
    task->deferred = 0;
    task->icv = *icv;
    task->kind = 0;
    task->in_tied_task = 0;
    task->final_task = 0;
    task->copy_ctors_done = 0;
    task->parent_depends_on = 0;
}

/* The calling thread's task ends: its parent runs again. Only a task with
 * dependencies has a hash table to free (never in pith; kept as libgomp does). */
void gomp_end_task(void);
void gomp_end_task(void)
{
    struct pith_gomp_thread *thr = &gomp_tls_data;
    struct pith_gomp_task *task = thr->task;
    if (task->depend_hash) free(task->depend_hash);
    thr->task = task->parent;
}

void gomp_barrier_handle_tasks(unsigned state);
void gomp_barrier_handle_tasks(unsigned state)
{
    (void)state;
    abort();
}

void *gomp_parallel_reduction_register(void *data, unsigned nthreads);
void *gomp_parallel_reduction_register(void *data, unsigned nthreads)
{
    (void)data;
    (void)nthreads;
    abort();
}
#else
typedef int pith_musl_gomp_task_unused;
#endif
