/* This folder: src/arena/ - the Plan (named sizes) and the one arena every
 * buffer of a run is carved from. It calls nothing but port/ (and libc's
 * string functions). */
/* arena.h - the one block of memory pith uses, and the plan that sizes it.
 *
 * A run first adds every buffer it will need to a Plan (named, so
 * `--plan` can print where each byte goes), then maps the arena once with
 * port_arena_map(plan.total), then carves each buffer with arena_take in
 * the same sizes. Nothing is ever freed or grown. */
#ifndef PITH_ARENA_H
#define PITH_ARENA_H

#include <stddef.h>
#include <stdint.h>

#define ARENA_ALIGN 64   /* cache line; also enough for any SIMD load */
#define PLAN_MAX_ITEMS 64  /* about 40 rows and one KV cache per slot (ENGINE_MAX_SLOTS 16) */

typedef struct {
    const char *what;   /* static string naming the buffer */
    uint64_t bytes;     /* rounded up to ARENA_ALIGN */
} PlanItem;

typedef struct {
    PlanItem items[PLAN_MAX_ITEMS];
    int n_items;
    uint64_t total;     /* sum of items, saturating at UINT64_MAX */
    int overflow;       /* set if a size overflowed or items ran out */
} Plan;

typedef struct {
    uint8_t *base;
    uint64_t size;
    uint64_t used;
} Arena;

void plan_init(Plan *p);
/* Adds `bytes` under `what` (merged with an earlier item of the same name). */
void plan_add(Plan *p, const char *what, uint64_t bytes);
/* Overflow-checked a*b; sets p->overflow and returns UINT64_MAX on overflow. */
uint64_t plan_mul(Plan *p, uint64_t a, uint64_t b);
/* Writes the plan as a table through port_out. */
void plan_print(const Plan *p);

void arena_init(Arena *a, void *base, uint64_t size);
/* Returns ARENA_ALIGN-aligned memory of `bytes` (zeroed: the arena comes
 * zero-filled and is never reused), or NULL if the plan was too small,
 * which is a bug in the planner, never a property of the input. */
void *arena_take(Arena *a, uint64_t bytes);
uint64_t arena_round(uint64_t bytes);
/* The free space after what was taken, lent for a moment and not taken (NULL
 * if fewer than `bytes` are left): the borrower must leave it zeroed, as
 * arena_take promises (the loader's scratch for repacking weights). */
void *arena_lend(Arena *a, uint64_t bytes);
/* Gives back an arena mapped with port_arena_map (cli_map_plan). */
void arena_unmap(Arena *a);

#endif
