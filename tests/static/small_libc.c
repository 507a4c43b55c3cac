/* port/malloc.c and port/libc_small.c (the static builds' allocator,
 * strstr and strerror), linked statically in place of musl's: several
 * threads allocate, fill, check, grow and free blocks of every class and
 * alignment at once, and libgomp's glibc character tables match glibc's
 * (tests/ci/t_static.sh, natively and under qemu for aarch64). Prints "ok"
 * and exits 0, or says what failed. */
#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define THREADS 4
#define SLOTS 64
#define ROUNDS 5000

static int failures;

static void fail(const char *what, size_t n)
{
    fprintf(stderr, "small_libc: %s (%zu)\n", what, n);
    __atomic_add_fetch(&failures, 1, __ATOMIC_RELAXED);
}

static uint32_t next(uint32_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 17;
    *s ^= *s << 5;
    return *s;
}

/* Sizes from 0 to ~300 KB, most small (as libgomp's and stdio's). */
static size_t any_size(uint32_t *s)
{
    uint32_t r = next(s);
    return r % 64 == 0 ? r % 300000 : r % 16 < 4 ? r % 70000 : r % 600;
}

static void fill(unsigned char *p, size_t n, unsigned char tag)
{
    memset(p, tag, n);
}

static int intact(const unsigned char *p, size_t n, unsigned char tag)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != tag) return 0;
    return 1;
}

static void *worker(void *arg)
{
    uint32_t seed = 2463534242u + (uint32_t)(uintptr_t)arg * 7919u;
    unsigned char *slot[SLOTS] = {0};
    size_t len[SLOTS] = {0};
    unsigned char tag[SLOTS] = {0};
    for (int round = 0; round < ROUNDS; round++) {
        int i = (int)(next(&seed) % SLOTS);
        if (slot[i] && !intact(slot[i], len[i], tag[i])) fail("a block changed under its owner", len[i]);
        size_t n = any_size(&seed);
        unsigned char t = (unsigned char)next(&seed);
        switch (next(&seed) % 5) {
        case 0: /* free, then malloc */
            free(slot[i]);
            slot[i] = malloc(n);
            break;
        case 1: { /* realloc keeps the old contents */
            size_t keep = len[i] < n ? len[i] : n;
            unsigned char *q = realloc(slot[i], n ? n : 1);
            if (!q) { fail("realloc", n); continue; }
            if (!intact(q, keep, tag[i])) fail("realloc lost the contents", keep);
            slot[i] = q;
            break;
        }
        case 2: { /* calloc gives zeros, even in a reused block */
            free(slot[i]);
            slot[i] = calloc(n, 1);
            if (slot[i] && !intact(slot[i], n, 0)) fail("calloc not zero", n);
            break;
        }
        default: { /* aligned blocks, 16 to 4096 */
            size_t align = (size_t)16 << (next(&seed) % 9);
            free(slot[i]);
            slot[i] = next(&seed) % 2 ? aligned_alloc(align, n) : memalign(align, n);
            if (slot[i] && (uintptr_t)slot[i] % align) fail("misaligned", align);
            break;
        }
        }
        if (!slot[i]) { fail("out of memory", n); len[i] = 0; continue; }
        if ((uintptr_t)slot[i] % 16) fail("malloc's pointer not 16-aligned", n);
        if (malloc_usable_size(slot[i]) < n) fail("usable size below the request", n);
        fill(slot[i], n, t);
        len[i] = n;
        tag[i] = t;
    }
    for (int i = 0; i < SLOTS; i++) {
        if (slot[i] && !intact(slot[i], len[i], tag[i])) fail("a block changed under its owner", len[i]);
        free(slot[i]);
    }
    return NULL;
}

const unsigned short **__ctype_b_loc(void);
const int32_t **__ctype_tolower_loc(void);

/* glibc 2.36's own tables (C locale) at a few characters: its class bits
 * and lower case. */
static const struct {
    int c;
    unsigned short bits;
    int32_t lower;
} glibc_ctype[] = {
    {'A', 0xd508, 'a'}, {'a', 0xd608, 'a'}, {' ', 0x6001, ' '}, {'\t', 0x2003, '\t'}, {'5', 0xd808, '5'},
    {'_', 0xc004, '_'}, {'f', 0xd608, 'f'}, {'\n', 0x2002, '\n'}, {0, 0x0002, 0}, {127, 0x0002, 127},
    {200, 0, 200}, {-1, 0, -1},
};

int main(void)
{
    pthread_t th[THREADS];
    for (int i = 0; i < THREADS; i++)
        if (pthread_create(&th[i], NULL, worker, (void *)(uintptr_t)i)) fail("pthread_create", 0);
    for (int i = 0; i < THREADS; i++) pthread_join(th[i], NULL);
    volatile size_t huge = SIZE_MAX - 8; /* volatile: gcc would warn at a constant */
    errno = 0;
    if (malloc(huge) || errno != ENOMEM) fail("a huge malloc is refused with ENOMEM", 0);
    if (calloc(huge / 2, 4)) fail("calloc's overflow is refused", 0);
    if (aligned_alloc(24, 8)) fail("aligned_alloc refuses an alignment not a power of two", 24);
    void *p = NULL;
    if (posix_memalign(&p, 64, 100) || (uintptr_t)p % 64) fail("posix_memalign", 100);
    free(p);
    free(NULL);

    const char *hay = "abcabcabd";
    if (strstr(hay, "abd") != hay + 6 || strstr(hay, "") != hay || strstr(hay, "abe") || strstr("", "a") ||
        strstr("", "") == NULL || strstr(hay, "d") != hay + 8 || strstr("ab", "abc"))
        fail("strstr", 0);
    if (strcmp(strerror(ENOENT), "No such file or directory") || strcmp(strerror(EADDRINUSE), "Address already in use") ||
        strcmp(strerror(4095), "Error 4095") || strcmp(strerror(-3), "Error -3") || strcmp(strerror(0), "Error 0"))
        fail("strerror", 0);
    for (size_t i = 0; i < sizeof glibc_ctype / sizeof glibc_ctype[0]; i++)
        if ((*__ctype_b_loc())[glibc_ctype[i].c] != glibc_ctype[i].bits ||
            (*__ctype_tolower_loc())[glibc_ctype[i].c] != glibc_ctype[i].lower)
            fail("glibc's character tables", (size_t)glibc_ctype[i].c);
    if (failures) return 1;
    puts("ok");
    return 0;
}
