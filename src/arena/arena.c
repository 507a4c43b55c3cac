#include "arena.h"

#include <string.h>

#include "../../port/port.h"

uint64_t arena_round(uint64_t bytes)
{
    if (bytes > UINT64_MAX - (ARENA_ALIGN - 1)) return UINT64_MAX;
    return (bytes + ARENA_ALIGN - 1) & ~(uint64_t)(ARENA_ALIGN - 1);
}

void plan_init(Plan *p)
{
    memset(p, 0, sizeof *p);
}

uint64_t plan_mul(Plan *p, uint64_t a, uint64_t b)
{
    if (a != 0 && b > UINT64_MAX / a) {
        p->overflow = 1;
        return UINT64_MAX;
    }
    return a * b;
}

void plan_add(Plan *p, const char *what, uint64_t bytes)
{
    uint64_t r = arena_round(bytes);
    if (r == UINT64_MAX || p->total > UINT64_MAX - r) {
        p->overflow = 1;
        p->total = UINT64_MAX;
        return;
    }
    p->total += r;
    for (int i = 0; i < p->n_items; i++) {
        if (strcmp(p->items[i].what, what) == 0) {
            p->items[i].bytes += r;
            return;
        }
    }
    if (p->n_items == PLAN_MAX_ITEMS) {
        p->overflow = 1;
        return;
    }
    p->items[p->n_items].what = what;
    p->items[p->n_items].bytes = r;
    p->n_items++;
}

static void print_size(const char *label, uint64_t bytes)
{
    port_out("  %-28s %14llu bytes  %10.2f MiB\n", label, (unsigned long long)bytes,
             (double)bytes / (1024.0 * 1024.0));
}

void plan_print(const Plan *p)
{
    port_out("memory plan (one arena):\n");
    for (int i = 0; i < p->n_items; i++) print_size(p->items[i].what, p->items[i].bytes);
    print_size("total", p->total);
}

void arena_init(Arena *a, void *base, uint64_t size)
{
    a->base = base;
    a->size = size;
    a->used = 0;
}

void *arena_take(Arena *a, uint64_t bytes)
{
    uint64_t r = arena_round(bytes);
    if (r == UINT64_MAX || r > a->size - a->used) return NULL;
    void *p = a->base + a->used;
    a->used += r;
    return p;
}

void *arena_lend(Arena *a, uint64_t bytes)
{
    return bytes <= a->size - a->used ? a->base + a->used : NULL;
}

void arena_unmap(Arena *a)
{
    port_arena_unmap(a->base, (size_t)a->size);
    a->base = NULL;
}
