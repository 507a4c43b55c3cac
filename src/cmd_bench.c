/* pith bench MODEL [-p 128] [-n 32] [-t N] [-r 3] [-b N] [--ref] [--no-avx512] [--no-mmap] [--load mmap|read|stream] [--mem SIZE] [--plan]
 *
 * Measures, like llama-bench: prompt processing (p tokens from an empty
 * cache, in steps of -b tokens) and generation (n tokens one at a time from
 * an empty cache), each repeated r times after one warm-up run of both;
 * prints mean +- standard deviation of tokens/s, the bytes of weights each
 * generated token reads (every matrix once: the layers and the output) and
 * the bandwidth that implies, and the arena size. Token ids are fixed
 * pseudo-random ids (the speed does not depend on them). --ref forces the
 * reference C kernels, --no-avx512 the AVX2 ones on a CPU with AVX-512. With --load stream: --stream-window SIZE keeps
 * layers resident (model_stream_bytes), --keep-cache leaves the file in the
 * page cache instead of dropping what was read. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../port/port.h"
#include "cli.h"
#include "forward.h"
#include "ggml_type.h"
#include "gguf.h"
#include "kernels.h"
#include "memplan.h"
#include "model.h"

#define BENCH_MAX_REPS 100

static uint64_t weight_bytes(const Weight *w)
{
    return w->rows * w->row_bytes;
}

/* Bytes of weights a generated token reads, and a short description of the
 * matrix types (e.g. "Q4_K 168, Q6_K 29"). */
static uint64_t bytes_per_token(const Model *m, char *types, size_t cap)
{
    uint64_t count[GGML_TYPE_COUNT] = {0}, total = 0;
    for (uint32_t l = 0; l < m->cfg.n_layer; l++) {
        const LayerWeights *lw = &m->layers[l];
        const Weight *ws[7] = {&lw->wq, &lw->wk, &lw->wv, &lw->wo, &lw->w_gate, &lw->w_up, &lw->w_down};
        for (int i = 0; i < 7; i++) {
            total += weight_bytes(ws[i]);
            count[ws[i]->type]++;
        }
    }
    total += weight_bytes(&m->output);
    count[m->output.type]++;
    size_t len = 0;
    types[0] = '\0';
    for (int t = 0; t < GGML_TYPE_COUNT; t++)
        if (count[t] && len < cap) {
            int k = snprintf(types + len, cap - len, "%s%s x%llu", len ? ", " : "", ggml_type_info((uint32_t)t)->name,
                             (unsigned long long)count[t]);
            if (k > 0) len += (size_t)k;
        }
    return total;
}

static void mean_sd(const double *v, int n, double *mean, double *sd)
{
    double s = 0, ss = 0;
    for (int i = 0; i < n; i++) s += v[i];
    *mean = s / n;
    for (int i = 0; i < n; i++) ss += (v[i] - *mean) * (v[i] - *mean);
    *sd = n > 1 ? sqrt(ss / (n - 1)) : 0.0;
}

static void die_forward(const char *path, const Model *m)
{
    port_die("%s: %s", path, m->err);
}

/* Seconds to feed the n prompt tokens from an empty cache. */
static double run_prompt(Model *m, const char *path, const int32_t *ids, int n)
{
    model_reset_cache(m);
    double t0 = port_seconds();
    if (forward_prompt(m, ids, n) != 0) die_forward(path, m);
    return port_seconds() - t0;
}

/* Seconds to generate n tokens one by one from an empty cache. */
static double run_generation(Model *m, const char *path, const int32_t *ids, int n)
{
    model_reset_cache(m);
    double t0 = port_seconds();
    for (int i = 0; i < n; i++)
        if (forward_batch(m, &ids[i], 1, (uint32_t)i, 0) != 0) die_forward(path, m);
    return port_seconds() - t0;
}

int cmd_bench(int argc, char **argv)
{
    const char *path = NULL;
    int64_t n_prompt = 128, n_gen = 32, reps = 3, threads = 0, batch = 64; /* threads 0: model_default_threads */
    int use_mmap = 1, kernels = KERN_BEST, show_plan = 0, load = -1; /* load -1: the planner chooses */
    uint64_t mem = 0, stream_window = 0;
    int keep_cache = 0; /* --keep-cache: stream mode leaves the file in the page cache */
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-p")) n_prompt = cli_int(a, cli_value(argc, argv, &i), 0, 1 << 16);
        else if (!strcmp(a, "-n")) n_gen = cli_int(a, cli_value(argc, argv, &i), 0, 1 << 16);
        else if (!strcmp(a, "-r")) reps = cli_int(a, cli_value(argc, argv, &i), 1, BENCH_MAX_REPS);
        else if (!strcmp(a, "-t") || !strcmp(a, "--threads")) threads = cli_int(a, cli_value(argc, argv, &i), 1, 1024);
        else if (!strcmp(a, "-b") || !strcmp(a, "--batch")) batch = cli_int(a, cli_value(argc, argv, &i), 1, FORWARD_MAX_BATCH);
        else if (!strcmp(a, "--ref")) kernels = KERN_REFERENCE;
        else if (!strcmp(a, "--no-avx512")) kernels = KERN_NO_AVX512;
        else if (!strcmp(a, "--no-mmap")) use_mmap = 0;
        else if (!strcmp(a, "--mem")) mem = cli_size(a, cli_value(argc, argv, &i));
        else if (!strcmp(a, "--load")) {
            const char *v = cli_value(argc, argv, &i);
            if ((load = mem_load_parse(v)) < 0) port_die("--load: '%s' is not mmap, read or stream", v);
        } else if (!strcmp(a, "--stream-window")) stream_window = cli_size(a, cli_value(argc, argv, &i));
        else if (!strcmp(a, "--keep-cache")) keep_cache = 1;
        else if (!strcmp(a, "--plan")) show_plan = 1;
        else if (a[0] == '-' && a[1] != '\0') port_die("%s: unknown option for bench", a);
        else if (!path) path = a;
        else port_die("%s: unexpected argument (one model only)", a);
    }
    if (!path) port_die("bench: missing MODEL (usage: pith bench MODEL [-p 128] [-n 32] [-t N] [-r 3])");
    if (n_prompt == 0 && n_gen == 0) port_die("bench: -p and -n are both 0: nothing to measure");
    kern_select(kernels);

    static Gguf g;
    GgufError err;
    if (gguf_open(&g, path, 0, NULL, &err) != 0) port_die("%s", err.msg); /* mapped after planning */
    ModelConfig cfg;
    if (model_read_config(&g, &cfg, &err) != 0) port_die("%s", err.msg);
    int64_t longest = n_prompt > n_gen ? n_prompt : n_gen;
    if ((uint64_t)longest > cfg.n_ctx_train)
        port_die("bench: %lld tokens are more than the model's context of %u", (long long)longest, cfg.n_ctx_train);
    ModelOptions opt;
    memset(&opt, 0, sizeof opt);
    opt.n_ctx = (uint32_t)longest;
    opt.kv_type = KV_F16;
    opt.batch = (uint32_t)(batch < longest ? batch : longest);
    opt.all_logits = 0;
    opt.stream_window = stream_window;
    opt.stream_keep_cache = keep_cache;
    if (model_check_options(&cfg, &opt, &err) != 0) port_die("%s", err.msg);

    /* The planner chooses the load mode within the budget (the context,
     * the longest test, is never shrunk). */
    MemBudget budget;
    mem_budget_init(&budget, mem);
    MemModelPlan mp = {&g, &cfg, opt, opt.batch, "token ids", (uint64_t)longest * sizeof(int32_t)};
    MemRequest req = {mem_model_plan, &mp, path, 0, load, use_mmap, opt.n_ctx, opt.n_ctx, stream_window};
    for (uint32_t f = 0; f < g.n_files; f++) req.file_bytes += g.files[f].size;
    MemDecision dec;
    mem_open_model(&g, &cfg, &req, &budget, &dec, show_plan);
    opt.load = dec.load;
    opt.stream_window = dec.stream_window;
    if (!threads) threads = model_default_threads(opt.load, port_cpu_count());
    port_set_threads((int)threads);
    if (show_plan) {
        mem_print(&budget, &req, &dec);
        port_exit(0);
    }
    const Plan *plan_p = &dec.plan;
    Arena arena;
    arena_map_plan(&arena, plan_p, path);
    int32_t *ids = arena_take(&arena, (uint64_t)longest * sizeof(int32_t));
    if (!ids) port_die("internal error: memory plan too small for the token ids");
    if (gguf_index(&g, &arena, &err) != 0) port_die("%s", err.msg);
    static Model m;
    double t_load = port_seconds();
    if (model_load(&m, &g, &arena, &cfg, &opt, &err) != 0) port_die("%s", err.msg);
    t_load = port_seconds() - t_load;

    uint64_t x = 0x9E3779B97F4A7C15ull; /* fixed pseudo-random ids */
    for (int64_t i = 0; i < longest; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        ids[i] = (int32_t)(x % cfg.n_vocab);
    }

    char types[256];
    uint64_t per_token = bytes_per_token(&m, types, sizeof types);
    port_out("model: %s\n", path);
    port_out("  %u layers, %u wide, vocabulary %u; matrices: %s\n", cfg.n_layer, cfg.n_embd, cfg.n_vocab, types);
    port_out("  weights read per generated token: %.1f MiB; arena %.1f MiB; --load %s (loaded in %.2f s); "
             "planned %.1f MiB resident, budget %.1f MiB (%s)\n",
             (double)per_token / 1048576.0, (double)plan_p->total / 1048576.0, mem_load_name(dec.load), t_load,
             (double)dec.total / 1048576.0, (double)budget.bytes / 1048576.0, budget.source);
    port_out("kernels: %s; threads: %d; prompt steps of %u tokens; KV cache F16\n", kern_active()->name, (int)threads,
             opt.batch);
    if (opt.load == LOAD_STREAM) {
        ModelOptions one = opt;
        one.batch = 1;
        ModelStreamParts sp;
        model_stream_bytes(&cfg, &one, &sp);
        port_out("stream: 2 slots of %.1f MiB, %u of %u layers resident, output matrix in %u chunks of %u rows; "
                 "at most %.1f MiB read from the file per generated token\n",
                 (double)m.stream.slot_bytes / 1048576.0, m.stream.resident_layers, cfg.n_layer, m.stream.n_out_chunks,
                 m.stream.out_chunk_rows, (double)sp.read_per_step / 1048576.0);
    }

    /* warm-up: page the weights in, start the thread pool */
    if (n_prompt > 0) run_prompt(&m, path, ids, (int)n_prompt);
    if (n_gen > 0) run_generation(&m, path, ids, (int)(n_gen < 4 ? n_gen : 4));

    double pp[BENCH_MAX_REPS], tg[BENCH_MAX_REPS];
    for (int r = 0; r < reps; r++) {
        if (n_prompt > 0) pp[r] = (double)n_prompt / run_prompt(&m, path, ids, (int)n_prompt);
        if (n_gen > 0) tg[r] = (double)n_gen / run_generation(&m, path, ids, (int)n_gen);
    }
    port_out("\n| test   | tokens/s          | weights GB/s | runs |\n");
    port_out("|--------|-------------------|--------------|------|\n");
    double mean, sd;
    if (n_prompt > 0) {
        mean_sd(pp, (int)reps, &mean, &sd);
        char name[32];
        snprintf(name, sizeof name, "pp%lld", (long long)n_prompt);
        port_out("| %-6s | %8.2f +- %6.2f |          -   | %4d |\n", name, mean, sd, (int)reps);
    }
    if (n_gen > 0) {
        mean_sd(tg, (int)reps, &mean, &sd);
        char name[32];
        snprintf(name, sizeof name, "tg%lld", (long long)n_gen);
        port_out("| %-6s | %8.2f +- %6.2f | %12.2f | %4d |\n", name, mean, sd, mean * (double)per_token / 1e9,
                 (int)reps);
    }
    uint64_t peak = port_peak_rss();
    if (peak) port_out("peak RSS: %.1f MiB (VmHWM)\n", (double)peak / 1048576.0);
    else port_out("peak RSS: unknown\n");
    port_out_flush();
    gguf_close(&g);
    model_close(&m);
    arena_unmap(&arena);
    return 0;
}
