/* malloc.c - a small thread-safe allocator for the static musl builds
 * (PITH_SMALL_LIBC, toolchains/TARGET.mk), in place of musl's mallocng
 * (about 8.6 KB on aarch64). pith itself never allocates (one arena,
 * planned at startup); what does is libgomp (its teams and thread data,
 * once per parallel region at most) and musl's fopen, opendir and getdelim
 * (a few files read at startup): few, small and short-lived blocks, so
 * speed and memory economy matter little. The host builds keep the C
 * library's malloc.
 *
 * Blocks of 32 bytes to 64 KiB come in power-of-two classes, cut from
 * 64 KiB mappings and kept on a free list per class once freed (never
 * returned to the system); larger ones are mapped alone and unmapped when
 * freed. A header just before each pointer holds the block's size and the
 * distance back to its start, so aligned blocks free the same way. One
 * spin lock guards the lists. */
#ifdef PITH_SMALL_LIBC
#include <errno.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <malloc.h>

typedef struct {
    size_t block_size; /* the whole block's bytes: a class size or a mapping's length */
    size_t back;       /* bytes from the block's start to the pointer */
} Header;

enum { MIN_SHIFT = 5, MAX_SHIFT = 16, CLASSES = MAX_SHIFT - MIN_SHIFT + 1, CHUNK = 1 << MAX_SHIFT };

static void *free_list[CLASSES]; /* each free block's first word links to the next */
static atomic_flag busy = ATOMIC_FLAG_INIT;

static void lock(void)
{
    while (atomic_flag_test_and_set_explicit(&busy, memory_order_acquire)) sched_yield();
}

static void unlock(void)
{
    atomic_flag_clear_explicit(&busy, memory_order_release);
}

static void *map(size_t n)
{
    void *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

/* A block of at least `need` bytes and its size, or NULL (errno ENOMEM). */
static char *take(size_t need, size_t *block_size)
{
    if (need > CHUNK) {
        if (need > SIZE_MAX - 4095) goto fail;
        *block_size = (need + 4095) & ~(size_t)4095;
        char *p = map(*block_size);
        if (!p) goto fail;
        return p;
    }
    int c = 0;
    while (((size_t)1 << (c + MIN_SHIFT)) < need) c++;
    size_t size = (size_t)1 << (c + MIN_SHIFT);
    lock();
    if (!free_list[c]) {
        char *chunk = map(CHUNK);
        if (!chunk) {
            unlock();
            goto fail;
        }
        for (size_t off = 0; off < CHUNK; off += size) {
            *(void **)(chunk + off) = free_list[c];
            free_list[c] = chunk + off;
        }
    }
    char *p = free_list[c];
    free_list[c] = *(void **)p;
    unlock();
    *block_size = size;
    return p;
fail:
    errno = ENOMEM;
    return NULL;
}

static Header *header(void *p)
{
    return (Header *)p - 1;
}

/* n bytes aligned to `align` (a power of two, at least 16). */
static void *allocate(size_t align, size_t n)
{
    size_t block_size;
    if (align > CHUNK || n > SIZE_MAX / 2) {
        errno = ENOMEM;
        return NULL;
    }
    size_t slack = align > sizeof(Header) ? align : 0;
    char *block = take(n + sizeof(Header) + slack, &block_size);
    if (!block) return NULL;
    uintptr_t at = ((uintptr_t)block + sizeof(Header) + align - 1) & ~(uintptr_t)(align - 1);
    void *p = (void *)at;
    header(p)->block_size = block_size;
    header(p)->back = at - (uintptr_t)block;
    return p;
}

void *malloc(size_t n)
{
    return allocate(sizeof(Header), n);
}

void free(void *p)
{
    if (!p) return;
    size_t size = header(p)->block_size;
    char *block = (char *)p - header(p)->back;
    if (size > CHUNK) {
        munmap(block, size);
        return;
    }
    int c = 0;
    while (((size_t)1 << (c + MIN_SHIFT)) < size) c++;
    lock();
    *(void **)block = free_list[c];
    free_list[c] = block;
    unlock();
}

void *calloc(size_t count, size_t n)
{
    if (n && count > SIZE_MAX / n) {
        errno = ENOMEM;
        return NULL;
    }
    void *p = malloc(count * n);
    if (p) memset(p, 0, count * n);
    return p;
}

size_t malloc_usable_size(void *p)
{
    return p ? header(p)->block_size - header(p)->back : 0;
}

void *realloc(void *p, size_t n)
{
    size_t have = malloc_usable_size(p);
    if (p && n <= have) return p;
    void *q = malloc(n);
    if (q && p) {
        memcpy(q, p, have);
        free(p);
    }
    return q;
}

void *aligned_alloc(size_t align, size_t n)
{
    if (!align || (align & (align - 1))) {
        errno = EINVAL;
        return NULL;
    }
    return allocate(align < sizeof(Header) ? sizeof(Header) : align, n);
}

void *memalign(size_t align, size_t n)
{
    return aligned_alloc(align, n);
}

int posix_memalign(void **out, size_t align, size_t n)
{
    if (align < sizeof(void *)) return EINVAL;
    void *p = aligned_alloc(align, n);
    if (!p) return errno;
    *out = p;
    return 0;
}
#endif
