/* memplan.h - the memory budget (--mem) and the planner's choice of how to
 * reach the weights and how long a context fits in it.
 *
 * Everything pith keeps resident counts: the one arena (its Plan), the model
 * file when it is memory-mapped (its pages become resident as they are
 * used), and a fixed overhead for the binary, libc and stacks
 * (port_memory_overhead). Before anything is mapped, a command describes
 * its plan as a function of the load mode and the context; mem_decide
 * picks, in this order:
 *   - the mode given with --load, if it fits;
 *   - else mmap if it fits (read instead when mmap is unavailable: --no-mmap,
 *     or the mapping failed), else stream;
 *   - if even that does not fit with the context asked, the largest context
 *     that fits, never below a floor (64 positions, or what the command
 *     needs, e.g. the prompt);
 *   - else nothing: the caller refuses with the numbers.
 * When the planner chose to stream, what the budget has left goes to the
 * stream window, which keeps the first layers resident: fewer bytes read
 * per token. (--load stream and --stream-window keep the window asked
 * for: the smallest by default.) */
#ifndef PITH_MEMPLAN_H
#define PITH_MEMPLAN_H

#include <stdint.h>

#include "../arena/arena.h"
#include "../gguf/gguf.h"
#include "model.h"

#define MEM_MIN_CTX 64          /* the context is never shrunk below this */
#define MEM_RAM_SHARE 75        /* default budget: percent of physical RAM */
#define MEM_N_LOADS 3


typedef struct {
    uint64_t bytes;             /* UINT64_MAX: no budget (RAM size unknown) */
    char source[96];            /* where it came from, for --plan and messages */
} MemBudget;

/* The budget: `asked` bytes (--mem) when nonzero, else the board profile's
 * PITH_DEFAULT_MEM when nonzero, else MEM_RAM_SHARE percent of RAM. */
void mem_budget_init(MemBudget *b, uint64_t asked);

typedef struct {
    /* Adds every buffer of the command's arena for weights reached with
     * `load`, a KV cache of n_ctx positions and, streaming, a window of
     * stream_window bytes (ModelOptions.stream_window; 0: the smallest). */
    void (*plan)(void *ctx, LoadMode load, uint32_t n_ctx, uint64_t stream_window, Plan *p);
    void *ctx;
    const char *model_path;
    uint64_t file_bytes;        /* the model's files: resident when mapped */
    uint64_t cold_bytes;        /* of them, the experts a token is not routed to (a mixture of
                                   experts: all but n_expert_used of n_expert): mapped, read only
                                   when routed to, so not counted resident */
    uint32_t n_expert, n_expert_used; /* for --plan's words on it */
    uint64_t pe_bytes;          /* of cold_bytes: Gemma 4's per-layer embedding table, mapped and read
                                   a row per token (never copied: pe.c) */
    int load;                   /* LoadMode given with --load, or -1: the planner chooses */
    int mmap_ok;                /* 0: --no-mmap, or mapping the file failed */
    int read_first;             /* the kernels read these weights faster repacked, which only
                                   read mode does (kernels.h: KernelSet.packed, the Pi 5's Q8_0
                                   and Q4_0): read before mapping when both fit */
    uint32_t n_ctx;             /* context asked for (or the default) */
    uint32_t min_ctx;           /* the command needs at least this many positions */
    uint64_t stream_window;     /* given by the user (--stream-window), or 0: the planner
                                   gives the stream window what the budget has left */
} MemRequest;

typedef struct {
    int fits;                   /* 0: nothing fits; the fields describe the least plan */
    LoadMode load;
    uint32_t n_ctx;
    uint64_t stream_window;     /* for ModelOptions.stream_window (stream mode) */
    uint32_t n_ctx_asked;
    uint32_t floor;             /* smallest context the planner would shrink to */
    Plan plan;                  /* the arena for load and n_ctx */
    uint64_t mapped;            /* bytes of the mapped file (mmap), else 0 */
    uint64_t overhead;          /* port_memory_overhead() */
    uint64_t total;             /* plan.total + mapped + overhead */
    uint64_t need[MEM_N_LOADS]; /* total of each mode at the asked context (0: unavailable) */
    uint64_t need_floor;        /* total of the fallback mode at the floor context */
    LoadMode floor_load;        /* that mode (stream, or the one given with --load) */
    uint64_t arena_asked;       /* the arena of that mode at the asked context */
} MemDecision;

const char *mem_load_name(LoadMode load);
/* Parses "mmap", "read", "stream"; -1 if it is none of them. */
int mem_load_parse(const char *text);

/* Decides as described above; returns 0, or -1 when nothing fits (d then
 * describes the least plan: the fallback mode at the floor context). */
int mem_decide(const MemBudget *b, const MemRequest *r, MemDecision *d);
/* One line (no "pith:" prefix, no newline) saying why nothing fits: the
 * budget, the least the model needs and its parts. */
void mem_refusal(const MemBudget *b, const MemRequest *r, const MemDecision *d, char *out, size_t cap);
/* One line (no newline) for stderr when the planner shrank the context
 * or chose to stream the weights; empty when there is nothing to say. */
void mem_notice(const MemBudget *b, const MemRequest *r, const MemDecision *d, char *out, size_t cap);
/* Prints the whole plan as one table (--plan): every arena buffer, the
 * mapped file, the overhead, the total, the budget and its source, the
 * choice, and what each load mode would need. */
void mem_print(const MemBudget *b, const MemRequest *r, const MemDecision *d);

#endif
