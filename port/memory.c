/* The arena's memory and facts about the machine's memory. */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "port.h"

size_t port_page_size(void)
{
    long p = sysconf(_SC_PAGESIZE);
    return p > 0 ? (size_t)p : 4096; /* sysconf cannot fail for this on Linux */
}

uint64_t port_physical_memory(void)
{
    long pages = sysconf(_SC_PHYS_PAGES);
    if (pages <= 0) return 0;
    return (uint64_t)pages * port_page_size();
}

/* A small file of /proc or /sys whole, NUL-terminated (open and read, not
 * stdio: fgets is 492 bytes of a static binary); 0 when it cannot be read. */
static size_t read_small_file(const char *path, char *buf, size_t cap)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    size_t n = 0;
    if (fd < 0) return 0;
    for (ssize_t got; n < cap - 1 && (got = read(fd, buf + n, cap - 1 - n)) > 0;) n += (size_t)got;
    close(fd);
    buf[n] = 0;
    return n;
}

uint64_t port_peak_rss(void)
{
    char text[4096]; /* /proc/self/status is about 1.5 KB; VmHWM is in its first third */
    if (!read_small_file("/proc/self/status", text, sizeof text)) return 0;
    const char *line = strstr(text, "\nVmHWM:");
    if (!line) return 0;
    char *end; /* strtoull, not sscanf: the scanf family is 5 KB of a static binary */
    unsigned long long kib = strtoull(line + 7, &end, 10);
    return end != line + 7 ? (uint64_t)kib * 1024 : 0;
}

#if defined(__SANITIZE_ADDRESS__)
#define SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SANITIZED 1
#endif
#endif

/* Measured on x86-64 (glibc, OpenMP, 1-2 threads) as VmHWM of a run of the
 * 17 MiB tiny fixture model with -c 32 minus its arena and mapped file:
 * 2.0 MiB (mmap) to 2.3 MiB (--no-mmap); `pith --version` alone peaks at
 * 2.5 MiB. 4 MiB leaves room for more OpenMP threads' stacks (a Pi's 4
 * cores) and stdio. The ASan+UBSan build measured 9.7 MiB the same way
 * (its allocator, shadow of the stacks and globals, quarantine). */
uint64_t port_memory_overhead(void)
{
#ifdef SANITIZED
    return (uint64_t)16 << 20;
#else
    return (uint64_t)4 << 20;
#endif
}

void *port_arena_map(size_t bytes)
{
    if (bytes == 0) bytes = 1;
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

void port_arena_unmap(void *base, size_t bytes)
{
    if (base) munmap(base, bytes ? bytes : 1);
}

/* The kernel's huge page size (2 MiB on x86-64; on arm64 it follows the
 * base page: 2 MiB for 4 KiB, 32 MiB for 16 KiB), 0 without THP. */
static size_t huge_page_size(void)
{
    char line[32];
    return read_small_file("/sys/kernel/mm/transparent_hugepage/hpage_pmd_size", line, sizeof line)
               ? (size_t)strtoull(line, NULL, 10)
               : 0;
}

void port_arena_huge(void *p, size_t bytes)
{
#ifdef MADV_HUGEPAGE
    size_t huge = huge_page_size();
    if (huge == 0 || (huge & (huge - 1)) != 0) return;
    uintptr_t lo = ((uintptr_t)p + huge - 1) & ~(uintptr_t)(huge - 1);
    uintptr_t hi = ((uintptr_t)p + bytes) & ~(uintptr_t)(huge - 1);
    if (hi > lo) madvise((void *)lo, hi - lo, MADV_HUGEPAGE); /* refused: 4 KiB pages, as before */
#else
    (void)p, (void)bytes;
#endif
}
