/* The memory budget and the planner's decision (see memplan.h). */
#include "memplan.h"

#include <stdio.h>
#include <string.h>

#include "../../port/port.h"

static double mib(uint64_t bytes)
{
    return (double)bytes / (1024.0 * 1024.0);
}

const char *mem_load_name(LoadMode load)
{
    switch (load) {
    case LOAD_MMAP: return "mmap";
    case LOAD_READ: return "read";
    case LOAD_STREAM: return "stream";
    }
    return "?";
}

int mem_load_parse(const char *text)
{
    if (strcmp(text, "mmap") == 0) return LOAD_MMAP;
    if (strcmp(text, "read") == 0) return LOAD_READ;
    if (strcmp(text, "stream") == 0) return LOAD_STREAM;
    return -1;
}

void mem_budget_init(MemBudget *b, uint64_t asked)
{
    memset(b, 0, sizeof *b);
    uint64_t board = (uint64_t)PITH_DEFAULT_MEM;
    uint64_t ram = port_physical_memory();
    if (asked > 0) {
        b->bytes = asked;
        snprintf(b->source, sizeof b->source, "--mem");
    } else if (board > 0) {
        b->bytes = board;
        snprintf(b->source, sizeof b->source, "board profile %s", PITH_BOARD_NAME);
    } else if (ram > 0) {
        b->bytes = ram / 100 * MEM_RAM_SHARE;
        snprintf(b->source, sizeof b->source, "%d%% of the %.0f MiB of RAM", MEM_RAM_SHARE, mib(ram));
    } else {
        b->bytes = UINT64_MAX;
        snprintf(b->source, sizeof b->source, "none: the size of the RAM is unknown");
    }
}

static uint64_t add_sat(uint64_t a, uint64_t b)
{
    return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/* Everything resident with the weights reached by `load` and a context of
 * n_ctx: fills p with the arena's plan. */
static uint64_t resident_w(const MemRequest *r, LoadMode load, uint32_t n_ctx, uint64_t window, Plan *p)
{
    plan_init(p);
    r->plan(r->ctx, load, n_ctx, window, p);
    if (p->overflow) return UINT64_MAX;
    uint64_t mapped = load == LOAD_MMAP ? r->file_bytes - r->cold_bytes : 0;
    return add_sat(add_sat(p->total, mapped), port_memory_overhead());
}

/* The same with the user's stream window (or the smallest). */
static uint64_t resident(const MemRequest *r, LoadMode load, uint32_t n_ctx, Plan *p)
{
    return resident_w(r, load, n_ctx, r->stream_window, p);
}

static void choose(const MemRequest *r, LoadMode load, uint32_t n_ctx, MemDecision *d)
{
    d->load = load;
    d->n_ctx = n_ctx;
    d->stream_window = r->stream_window;
    d->mapped = load == LOAD_MMAP ? r->file_bytes - r->cold_bytes : 0;
    d->total = resident(r, load, n_ctx, &d->plan);
}

/* When the planner chose to stream (not --load stream, not
 * --stream-window): the largest window that still fits. The plan grows a
 * whole layer at a time, so a binary search over the bytes, and a second
 * one for the smallest window of that plan (the bytes it really holds). */
static void grow_window(const MemBudget *b, const MemRequest *r, MemDecision *d)
{
    Plan scratch;
    if (d->load != LOAD_STREAM || r->load >= 0 || r->stream_window > 0 || b->bytes == UINT64_MAX) return;
    uint64_t lo = 0, hi = b->bytes; /* lo fits (the smallest window does), hi is more than any fits */
    if (resident_w(r, LOAD_STREAM, d->n_ctx, hi, &scratch) <= b->bytes) lo = hi;
    while (hi - lo > 1) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (resident_w(r, LOAD_STREAM, d->n_ctx, mid, &scratch) <= b->bytes) lo = mid;
        else hi = mid;
    }
    uint64_t total = resident_w(r, LOAD_STREAM, d->n_ctx, lo, &scratch);
    if (total > b->bytes || total <= d->total) return;
    uint64_t small = 0; /* does not reach that total */
    while (lo - small > 1) {
        uint64_t mid = small + (lo - small) / 2;
        if (resident_w(r, LOAD_STREAM, d->n_ctx, mid, &scratch) == total) lo = mid;
        else small = mid;
    }
    total = resident_w(r, LOAD_STREAM, d->n_ctx, lo, &scratch);
    if (total <= b->bytes) {
        d->stream_window = lo;
        d->plan = scratch;
        d->total = total;
    }
}

static int slot(LoadMode load)
{
    return load == LOAD_MMAP ? 0 : load == LOAD_READ ? 1 : 2;
}

/* The first mode that holds the whole model: mapped unless it cannot be,
 * or the kernels want the weights read (repacked). */
static LoadMode whole_load(const MemRequest *r)
{
    return r->mmap_ok && !r->read_first ? LOAD_MMAP : LOAD_READ;
}

int mem_decide(const MemBudget *b, const MemRequest *r, MemDecision *d)
{
    static const LoadMode all[MEM_N_LOADS] = {LOAD_MMAP, LOAD_READ, LOAD_STREAM};
    Plan scratch;
    memset(d, 0, sizeof *d);
    d->n_ctx_asked = r->n_ctx;
    d->overhead = port_memory_overhead();
    d->floor = r->min_ctx > MEM_MIN_CTX ? r->min_ctx : MEM_MIN_CTX;
    if (d->floor > r->n_ctx) d->floor = r->n_ctx;
    for (int i = 0; i < MEM_N_LOADS; i++)
        d->need[i] = all[i] == LOAD_MMAP && !r->mmap_ok ? 0 : resident(r, all[i], r->n_ctx, &scratch);

    /* The mode asked for; else mapped (or read) and then streamed; read
     * first, then mapped, where the kernels want the weights repacked. */
    LoadMode order[3];
    int n = 0;
    if (r->load >= 0) order[n++] = (LoadMode)r->load;
    else {
        order[n++] = whole_load(r);
        if (r->read_first && r->mmap_ok) order[n++] = LOAD_MMAP;
        order[n++] = LOAD_STREAM;
    }
    /* The least plan: the last mode tried at the context floor. */
    LoadMode last = order[n - 1];
    d->floor_load = last;
    d->need_floor = resident(r, last, d->floor, &scratch);
    resident(r, last, r->n_ctx, &scratch);
    d->arena_asked = scratch.overflow ? UINT64_MAX : scratch.total;
    for (int i = 0; i < n; i++) {
        uint64_t need = d->need[slot(order[i])];
        if (need > 0 && need <= b->bytes) {
            choose(r, order[i], r->n_ctx, d);
            grow_window(b, r, d);
            d->fits = 1;
            return 0;
        }
    }

    /* Not even that: the largest context that fits, down to the floor. The
     * total grows with the context, so a binary search finds it. */
    if (d->need_floor > b->bytes) {
        choose(r, last, d->floor, d);
        return -1;
    }
    uint32_t lo = d->floor, hi = r->n_ctx; /* lo fits, hi does not */
    while (hi - lo > 1) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (resident(r, last, mid, &scratch) <= b->bytes) lo = mid;
        else hi = mid;
    }
    choose(r, last, lo, d);
    grow_window(b, r, d);
    d->fits = 1;
    return 0;
}

/* The arena's largest buffers, e.g. "kv cache 72.0 MiB, stream window
 * 30.1 MiB", into out. */
static void largest_items(const Plan *p, int k, char *out, size_t cap)
{
    int used[PLAN_MAX_ITEMS] = {0};
    size_t len = 0;
    out[0] = '\0';
    for (int j = 0; j < k; j++) {
        int best = -1;
        for (int i = 0; i < p->n_items; i++)
            if (!used[i] && (best < 0 || p->items[i].bytes > p->items[best].bytes)) best = i;
        if (best < 0 || len >= cap) break;
        used[best] = 1;
        int w = snprintf(out + len, cap - len, "%s%s %.1f MiB", j ? ", " : "", p->items[best].what,
                         mib(p->items[best].bytes));
        if (w > 0) len += (size_t)w;
    }
}

void mem_refusal(const MemBudget *b, const MemRequest *r, const MemDecision *d, char *out, size_t cap)
{
    char parts[256], mapped[64] = "";
    largest_items(&d->plan, 3, parts, sizeof parts);
    if (d->mapped) snprintf(mapped, sizeof mapped, "model file %.1f MiB, ", mib(d->mapped));
    snprintf(out, cap,
             "%s: does not fit the memory budget of %.1f MiB (%s): the least it needs is %.1f MiB, with --load %s "
             "and a context of %u (%sarena %.1f MiB: %s; binary, libc and stacks %.1f MiB)",
             r->model_path, mib(b->bytes), b->source, mib(d->total), mem_load_name(d->load), d->n_ctx, mapped,
             mib(d->plan.total), parts, mib(d->overhead));
}

void mem_notice(const MemBudget *b, const MemRequest *r, const MemDecision *d, char *out, size_t cap)
{
    out[0] = '\0';
    size_t len = 0;
    int streamed = r->load < 0 && d->load == LOAD_STREAM;
    if (!d->fits || (!streamed && d->n_ctx == d->n_ctx_asked)) return;
    int w = snprintf(out, cap, "note: %s: budget %.1f MiB (%s)", r->model_path, mib(b->bytes), b->source);
    if (w > 0) len = (size_t)w;
    if (streamed && len < cap) {
        uint64_t whole = d->need[slot(whole_load(r))];
        w = snprintf(out + len, cap - len, "; %s would need %.1f MiB: streaming the weights",
                     whole_load(r) == LOAD_MMAP ? "mapped" : "read", mib(whole));
        if (w > 0) len += (size_t)w;
    }
    if (d->n_ctx != d->n_ctx_asked && len < cap)
        snprintf(out + len, cap - len, "; context shrunk from %u to %u positions (%u would need %.1f MiB)",
                 d->n_ctx_asked, d->n_ctx, d->n_ctx_asked, mib(d->need[slot(d->load)]));
}

static void row(const char *label, uint64_t bytes, const char *remark)
{
    port_out("  %-36s %15llu bytes %10.2f MiB%s%s\n", label, (unsigned long long)bytes, mib(bytes),
             remark[0] ? "  " : "", remark);
}

void mem_print(const MemBudget *b, const MemRequest *r, const MemDecision *d)
{
    static const LoadMode all[MEM_N_LOADS] = {LOAD_MMAP, LOAD_READ, LOAD_STREAM};
    char label[96], remark[96];
    port_out("memory plan for %s: --load %s, context %u\n", r->model_path, mem_load_name(d->load), d->n_ctx);
    for (int i = 0; i < d->plan.n_items; i++) row(d->plan.items[i].what, d->plan.items[i].bytes, "");
    row("arena (one mapping, the sum above)", d->plan.total, "");
    if (d->mapped && r->pe_bytes) {
        snprintf(remark, sizeof remark, "without the per-layer embeddings (%.1f MiB, a row read per token)",
                 mib(r->pe_bytes));
        row("model file, memory-mapped", d->mapped, remark);
    } else if (d->mapped && r->cold_bytes) {
        snprintf(remark, sizeof remark, "the active experts (%u of %u): %.1f MiB of experts stay cold", r->n_expert_used,
                 r->n_expert, mib(r->cold_bytes));
        row("model file, memory-mapped", d->mapped, remark);
    } else if (d->mapped) {
        row("model file, memory-mapped", d->mapped, "");
    }
    row("binary, libc, stacks", d->overhead, "");
    row("total resident", d->total, d->fits ? "" : "does not fit");
    if (b->bytes == UINT64_MAX) port_out("  %-36s %15s       %10s     %s\n", "budget", "-", "-", b->source);
    else row("budget", b->bytes, b->source);
    for (int i = 0; i < MEM_N_LOADS; i++) {
        snprintf(label, sizeof label, "needs --load %s, context %u", mem_load_name(all[i]), d->n_ctx_asked);
        const char *window = all[i] == LOAD_STREAM && !r->stream_window ? " (the smallest window)" : "";
        snprintf(remark, sizeof remark, "%s%s", d->need[i] <= b->bytes ? "fits" : "too big", window);
        if (d->need[i]) row(label, d->need[i], remark);
        else port_out("  %-36s %15s       %10s     unavailable (no mmap)\n", label, "-", "-");
    }
    snprintf(label, sizeof label, "needs --load %s, context %u", mem_load_name(d->floor_load), d->floor);
    if (d->need_floor && d->floor != d->n_ctx_asked) row(label, d->need_floor, "the least (the context floor)");
    if (d->fits && d->load == LOAD_STREAM && d->stream_window)
        port_out("decision: --load %s, context %u%s, stream window %llu bytes (%s)\n", mem_load_name(d->load),
                 d->n_ctx, d->n_ctx != d->n_ctx_asked ? " (shrunk to fit)" : "", (unsigned long long)d->stream_window,
                 r->stream_window ? "--stream-window" : "what the budget leaves");
    else if (d->fits)
        port_out("decision: --load %s, context %u%s\n", mem_load_name(d->load), d->n_ctx,
                 d->n_ctx != d->n_ctx_asked ? " (shrunk to fit)" : "");
    else port_out("decision: nothing fits the budget\n");
}
