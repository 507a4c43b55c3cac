/* cmd_bench.c - `pith bench MODEL` (its options: bench_options below).
 *
 * Measures, like llama-bench: prompt processing (p tokens from an empty
 * cache, in steps of -b tokens) and generation (n tokens one at a time from
 * an empty cache), each repeated r times after one warm-up run of both;
 * prints mean ± standard deviation of tokens/s, the bytes of weights each
 * generated token reads (every matrix once: the layers and the output) and
 * the bandwidth that implies, and the arena size. Token ids are fixed
 * pseudo-random ids (the speed does not depend on them). --ref forces the
 * reference C kernels, --no-avx512 the AVX2 ones on a CPU with AVX-512.
 * With --load stream: --stream-window SIZE keeps
 * layers resident (model_stream_bytes), --keep-cache leaves the file in the
 * page cache instead of dropping what was read. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../../port/port.h"
#include "cli.h"

#define BENCH_MAX_REPS 100

static void mean_sd(const double *v, int n, double *mean, double *sd)
{
    double s = 0, ss = 0;
    for (int i = 0; i < n; i++) s += v[i];
    *mean = s / n;
    for (int i = 0; i < n; i++) ss += (v[i] - *mean) * (v[i] - *mean);
    *sd = n > 1 ? sqrt(ss / (n - 1)) : 0.0;
}

/* Seconds to feed the n prompt tokens from an empty cache. */
static double run_prompt(Engine *e, Slot *s, const int32_t *ids, int n)
{
    slot_reset(s);
    double t0 = port_seconds();
    if (engine_prefill(e, s, ids, n) != 0) cli_engine_die(e);
    return port_seconds() - t0;
}

/* Seconds to generate n tokens one by one from an empty cache. */
static double run_generation(Engine *e, Slot *s, const int32_t *ids, int n)
{
    slot_reset(s);
    double t0 = port_seconds();
    for (int i = 0; i < n; i++)
        if (engine_feed(e, s, &ids[i], 1, 0) != 0) cli_engine_die(e);
    return port_seconds() - t0;
}

typedef struct {
    int64_t n_prompt, n_gen, reps;
    int keep_cache;
} BenchArgs;

const CliOpt bench_options[] = {
    OPT_INT64("-p N\tprompt tokens (128)", BenchArgs, n_prompt, 0, 1 << 16),
    OPT_INT64("-n N\tgenerated tokens (32)", BenchArgs, n_gen, 0, 1 << 16),
    OPT_INT64("-r N\trepetitions (3)", BenchArgs, reps, 1, BENCH_MAX_REPS),
    OPT_FLAG("--ref\treference C kernels", EngineOptions, kernels, ENGINE_KERNELS_REFERENCE),
    OPT_FLAG("--no-avx512\tAVX2 kernels on an AVX-512 CPU", EngineOptions, kernels, ENGINE_KERNELS_NO_AVX512),
    OPT_INCLUDE(cli_model_options),
    OPT_FLAG("--keep-cache\tstream: keep the page cache", BenchArgs, keep_cache, 1),
    OPT_END,
};

int cmd_bench(const CliCommand *cmd, int argc, char **argv)
{
    EngineOptions o;
    BenchArgs a = {.n_prompt = 128, .n_gen = 32, .reps = 3};
    cli_parse(cmd, argc, argv, &o, &a);
    int64_t n_prompt = a.n_prompt, n_gen = a.n_gen, reps = a.reps;
    o.model_only = 1;
    o.stream_keep_cache = a.keep_cache;
    const char *path = o.model_path;
    if (n_prompt == 0 && n_gen == 0) port_die("bench: -p and -n are both 0: nothing to measure");

    /* The planner chooses the load mode within the budget (the context,
     * the longest test, is never shrunk). */
    int64_t longest = n_prompt > n_gen ? n_prompt : n_gen;
    char what[64];
    snprintf(what, sizeof what, "bench: %lld tokens", (long long)longest);
    o.default_ctx = (uint32_t)longest;
    o.min_ctx = (uint32_t)longest;
    o.min_ctx_what = what;
    if (o.batch > longest) o.batch = longest;
    CliPlanItem pi = {"token ids", (uint64_t)longest * sizeof(int32_t)};
    o.plan_extra = cli_plan_item;
    o.plan_extra_ctx = &pi;
    static Engine e;
    double t_load = port_seconds();
    cli_open_engine(&e, &o);
    t_load = port_seconds() - t_load;
    int32_t *ids = arena_take(&e.arena, (uint64_t)longest * sizeof(int32_t));
    if (!ids) port_die("internal error: memory plan too small for the token ids");
    Slot *s = engine_slot(&e, 0);

    uint64_t x = 0x9E3779B97F4A7C15ull; /* fixed pseudo-random ids */
    for (int64_t i = 0; i < longest; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        ids[i] = (int32_t)(x % e.n_vocab);
    }

    EngineInfo in;
    engine_info(&e, &in);
    port_out("model: %s\n", path);
    port_out("  %u layers, %u wide, vocabulary %u; matrices: %s\n", in.n_layer, in.n_embd, in.n_vocab, in.matrix_types);
    port_out("  weights read per generated token: %.1f MiB; arena %.1f MiB; --load %s (loaded in %.2f s); "
             "planned %.1f MiB resident, budget %.1f MiB (%s)\n",
             (double)in.bytes_per_token / 1048576.0, (double)in.arena_bytes / 1048576.0, in.load, t_load,
             (double)in.planned_bytes / 1048576.0, (double)in.budget_bytes / 1048576.0, in.budget_source);
    port_out("kernels: %s; threads: %d; prompt steps of %u tokens; KV cache F16\n", in.kernels, in.threads, in.batch);
    if (in.streamed)
        port_out("stream: 2 slots of %.1f MiB, %u of %u layers resident, output matrix in %u chunks of %u rows; "
                 "at most %.1f MiB read from the file per generated token\n",
                 (double)in.stream_slot_bytes / 1048576.0, in.stream_resident_layers, in.n_layer, in.stream_out_chunks,
                 in.stream_out_chunk_rows, (double)in.stream_read_per_token / 1048576.0);

    /* warm-up: page the weights in, start the thread pool */
    if (n_prompt > 0) run_prompt(&e, s, ids, (int)n_prompt);
    if (n_gen > 0) run_generation(&e, s, ids, (int)(n_gen < 4 ? n_gen : 4));

    double pp[BENCH_MAX_REPS], tg[BENCH_MAX_REPS];
    for (int r = 0; r < reps; r++) {
        if (n_prompt > 0) pp[r] = (double)n_prompt / run_prompt(&e, s, ids, (int)n_prompt);
        if (n_gen > 0) tg[r] = (double)n_gen / run_generation(&e, s, ids, (int)n_gen);
    }
    /* The table, columns as wide as their widest cell (a fast machine's
     * pp rate has 6 digits); "±" is two bytes and one column. */
    char cell[3][4][48];
    snprintf(cell[0][0], 48, "test"), snprintf(cell[0][1], 48, "tokens/s"), snprintf(cell[0][2], 48, "weights GB/s");
    snprintf(cell[0][3], 48, "runs");
    int rows = 1;
    for (int k = 0; k < 2; k++) {
        int64_t n = k ? n_gen : n_prompt;
        if (n == 0) continue;
        double mean, sd;
        mean_sd(k ? tg : pp, (int)reps, &mean, &sd);
        snprintf(cell[rows][0], 48, "%s%lld", k ? "tg" : "pp", (long long)n);
        snprintf(cell[rows][1], 48, "%.2f \xc2\xb1 %.2f", mean, sd);
        if (k) snprintf(cell[rows][2], 48, "%.2f", mean * (double)in.bytes_per_token / 1e9);
        else snprintf(cell[rows][2], 48, "-");
        snprintf(cell[rows][3], 48, "%d", (int)reps);
        rows++;
    }
    int width[4] = {0};
    for (int r = 0; r < rows; r++)
        for (int c = 0; c < 4; c++) {
            int w = (int)strlen(cell[r][c]) - (strstr(cell[r][c], "\xc2\xb1") ? 1 : 0);
            if (w > width[c]) width[c] = w;
        }
    port_out("\n");
    for (int r = 0; r < rows; r++) {
        for (int c = 0; c < 4; c++) {
            int pad = width[c] - (int)strlen(cell[r][c]) + (strstr(cell[r][c], "\xc2\xb1") ? 1 : 0);
            /* text left, numbers right */
            if (c == 0) port_out("| %s%*s ", cell[r][c], pad, "");
            else port_out("| %*s%s ", pad, "", cell[r][c]);
        }
        port_out("|\n");
        if (r == 0) {
            for (int c = 0; c < 4; c++) {
                port_out("|");
                for (int i = 0; i < width[c] + 2; i++) port_out("-");
            }
            port_out("|\n");
        }
    }
    uint64_t peak = port_peak_rss();
    if (peak) port_out("peak RSS: %.1f MiB (VmHWM)\n", (double)peak / 1048576.0);
    else port_out("peak RSS: unknown\n");
    port_out_flush();
    engine_close(&e);
    return 0;
}
