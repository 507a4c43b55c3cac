/* The arena's memory and facts about the machine's memory. */
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
