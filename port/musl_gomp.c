/* Glue between Debian's libgomp.a (built against glibc) and musl, for the
 * fully static build. Compiled only when PITH_MUSL_GOMP is defined (see
 * toolchains/TARGET.mk); the linker wraps pthread_create with
 * -Wl,--wrap=pthread_create.
 *
 * libgomp needs two glibc symbols musl lacks:
 *  - __sysconf: glibc's internal name for sysconf (same argument numbers).
 *  - pthread_attr_setaffinity_np: musl has no CPU mask in thread attributes.
 *    We record the mask set on an attribute object, and pin the thread
 *    right after pthread_create with pthread_setaffinity_np, so
 *    OMP_PROC_BIND / OMP_PLACES still bind threads.
 *
 * It also keeps libgomp's device-offloading and OpenACC runtime (about
 * 80 KB) out of the binary: see the end of this file; and its explicit
 * tasks (task.o, 35 KB): see port/musl_gomp_task.c. */
#ifdef PITH_MUSL_GOMP
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

long __sysconf(int name);
long __sysconf(int name)
{
    return sysconf(name);
}

/* A few attribute objects at most are live at once (libgomp reuses one
 * while it starts a team), so a small table is enough. */
#define MAX_ATTRS 16

static struct {
    const pthread_attr_t *attr;
    size_t size;
    cpu_set_t mask;
} recorded[MAX_ATTRS];
static pthread_mutex_t recorded_lock = PTHREAD_MUTEX_INITIALIZER;

int pthread_attr_setaffinity_np(pthread_attr_t *attr, size_t size, const cpu_set_t *mask);
int pthread_attr_setaffinity_np(pthread_attr_t *attr, size_t size, const cpu_set_t *mask)
{
    if (size > sizeof(cpu_set_t)) size = sizeof(cpu_set_t);
    int free_slot = -1, rc = 0;
    pthread_mutex_lock(&recorded_lock);
    for (int i = 0; i < MAX_ATTRS; i++) {
        if (recorded[i].attr == attr) { free_slot = i; break; }
        if (!recorded[i].attr && free_slot < 0) free_slot = i;
    }
    if (free_slot < 0) {
        rc = 12; /* ENOMEM: libgomp then runs the thread unbound */
    } else {
        recorded[free_slot].attr = attr;
        recorded[free_slot].size = size;
        memset(&recorded[free_slot].mask, 0, sizeof(cpu_set_t));
        memcpy(&recorded[free_slot].mask, mask, size);
    }
    pthread_mutex_unlock(&recorded_lock);
    return rc;
}

int __real_pthread_create(pthread_t *t, const pthread_attr_t *attr, void *(*fn)(void *), void *arg);
int __wrap_pthread_create(pthread_t *t, const pthread_attr_t *attr, void *(*fn)(void *), void *arg);
int __wrap_pthread_create(pthread_t *t, const pthread_attr_t *attr, void *(*fn)(void *), void *arg)
{
    int found = 0;
    size_t size = 0;
    cpu_set_t mask;
    if (attr) {
        pthread_mutex_lock(&recorded_lock);
        for (int i = 0; i < MAX_ATTRS; i++) {
            if (recorded[i].attr == attr) {
                found = 1;
                size = recorded[i].size;
                mask = recorded[i].mask;
            }
        }
        pthread_mutex_unlock(&recorded_lock);
    }
    int rc = __real_pthread_create(t, attr, fn, arg);
    if (rc == 0 && found) pthread_setaffinity_np(*t, size, &mask);
    return rc;
}

/* An attribute object may be destroyed and its address reused: forget it. */
int __real_pthread_attr_destroy(pthread_attr_t *attr);
int __wrap_pthread_attr_destroy(pthread_attr_t *attr);
int __wrap_pthread_attr_destroy(pthread_attr_t *attr)
{
    pthread_mutex_lock(&recorded_lock);
    for (int i = 0; i < MAX_ATTRS; i++)
        if (recorded[i].attr == attr) recorded[i].attr = NULL;
    pthread_mutex_unlock(&recorded_lock);
    return __real_pthread_attr_destroy(attr);
}

/* Two references pull libgomp's OpenACC runtime (oacc-*.o, with dlopen)
 * into a static link although pith only uses `omp parallel`: env.o's
 * start-up calls the OpenACC initializers. Defining them here satisfies
 * those references, so the archive members are never pulled in.
 * Signatures: oacc-int.h of GCC 12. */
void goacc_runtime_initialize(void);
void goacc_runtime_initialize(void)
{
}
void goacc_profiling_initialize(void);
void goacc_profiling_initialize(void)
{
}
#else
/* Nothing to glue outside the static musl build. */
typedef int pith_musl_gomp_unused;
#endif
