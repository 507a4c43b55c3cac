/* pith bench MODEL [-p 128] [-n 32] [-t N] [-r 3] [-b N] [--ref] [--no-avx512] [--no-mmap] [--load mmap|read|stream] [--mem SIZE] [--plan]
 *
 * Measures, like llama-bench: prompt processing (p tokens from an empty
 * cache, in steps of -b tokens) and generation (n tokens one at a time from
 * an empty cache), each repeated r times after one warm-up run of both;
 * prints mean ± standard deviation of tokens/s, the bytes of weights each
 * generated token reads (every matrix once: the layers and the output) and
 * the bandwidth that implies, and the arena size. Token ids are fixed
 * pseudo-random ids (the speed does not depend on them). --ref forces the
 * reference C kernels, --no-avx512 the AVX2 ones on a CPU with AVX-512. With --load stream: --stream-window SIZE keeps
 * layers resident (model_stream_bytes), --keep-cache leaves the file in the
 * page cache instead of dropping what was read. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../../port/port.h"
#include "cli.h"
#include "../base/ggml_type.h"
#include "../kernels/kernels.h"
#include "../session/session.h"

#define BENCH_MAX_REPS 100

static uint64_t weight_bytes(const Weight *w)
{
    return w->rows * w->row_bytes;
}

/* Bytes of weights a generated token reads, and a short description of the
 * matrix types (e.g. "Q4_K 168, Q6_K 29"): every layer matrix of the
 * architecture's table, and the output. */
static uint64_t bytes_per_token(const Model *m, char *types, size_t cap)
{
    uint64_t count[GGML_TYPE_COUNT] = {0}, total = 0;
    for (uint32_t l = 0; l < m->cfg.n_layer; l++) {
        for (int i = 0; i < LT_COUNT; i++) {
            if (!layer_tensors[i].matrix || !model_layer_has(&m->cfg, l, i)) continue;
            const Weight *w = layer_matrix(&m->layers[l], i);
            if (w->rows == 0) continue; /* not in a layer of this kind (Qwen3.5) */
            total += weight_bytes(w);
            count[w->type]++;
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

/* Seconds to feed the n prompt tokens from an empty cache. */
static double run_prompt(Session *s, const int32_t *ids, int n)
{
    seq_reset(&s->seq);
    double t0 = port_seconds();
    if (forward_prompt(&s->model, &s->ws, &s->seq, ids, n) != 0) port_die("%s: %s", s->opt.model_path, s->ws.err);
    return port_seconds() - t0;
}

/* Seconds to generate n tokens one by one from an empty cache. */
static double run_generation(Session *s, const int32_t *ids, int n)
{
    seq_reset(&s->seq);
    double t0 = port_seconds();
    for (int i = 0; i < n; i++)
        if (forward_batch(&s->model, &s->ws, &s->seq, &ids[i], 1, (uint32_t)i, 0) != 0)
            port_die("%s: %s", s->opt.model_path, s->ws.err);
    return port_seconds() - t0;
}

int cmd_bench(int argc, char **argv)
{
    int64_t n_prompt = 128, n_gen = 32, reps = 3;
    int kernels = KERN_BEST;
    SessionOptions o;
    session_defaults(&o);
    o.model_only = 1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-p")) n_prompt = cli_int(a, cli_value(argc, argv, &i), 0, 1 << 16);
        else if (!strcmp(a, "-n")) n_gen = cli_int(a, cli_value(argc, argv, &i), 0, 1 << 16);
        else if (!strcmp(a, "-r")) reps = cli_int(a, cli_value(argc, argv, &i), 1, BENCH_MAX_REPS);
        else if (!strcmp(a, "-t") || !strcmp(a, "--threads")) o.threads = cli_int(a, cli_value(argc, argv, &i), 1, 1024);
        else if (!strcmp(a, "-b") || !strcmp(a, "--batch")) o.batch = cli_int(a, cli_value(argc, argv, &i), 1, MODEL_MAX_BATCH);
        else if (!strcmp(a, "--ref")) kernels = KERN_REFERENCE;
        else if (!strcmp(a, "--no-avx512")) kernels = KERN_NO_AVX512;
        else if (!strcmp(a, "--no-mmap")) o.use_mmap = 0;
        else if (!strcmp(a, "--mem")) o.mem = cli_size(a, cli_value(argc, argv, &i));
        else if (!strcmp(a, "--load")) {
            const char *v = cli_value(argc, argv, &i);
            if ((o.load_asked = mem_load_parse(v)) < 0) port_die("--load: '%s' is not mmap, read or stream", v);
        } else if (!strcmp(a, "--stream-window")) o.stream_window = cli_size(a, cli_value(argc, argv, &i));
        else if (!strcmp(a, "--keep-cache")) o.stream_keep_cache = 1;
        else if (!strcmp(a, "--plan")) o.show_plan = 1;
        else if (a[0] == '-' && a[1] != '\0') cli_unknown("bench", a);
        else if (!o.model_path) o.model_path = a;
        else port_die("%s: unexpected argument (one model only)", a);
    }
    const char *path = o.model_path;
    if (!path) port_die("bench: missing MODEL (see pith help bench)");
    if (n_prompt == 0 && n_gen == 0) port_die("bench: -p and -n are both 0: nothing to measure");
    kern_select(kernels);

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
    static Session s;
    double t_load = port_seconds();
    cli_open_session(&s, &o);
    t_load = port_seconds() - t_load;
    int32_t *ids = arena_take(&s.arena, (uint64_t)longest * sizeof(int32_t));
    if (!ids) port_die("internal error: memory plan too small for the token ids");
    const ModelConfig *cfg = &s.cfg;
    int threads = (int)s.opt.threads;

    uint64_t x = 0x9E3779B97F4A7C15ull; /* fixed pseudo-random ids */
    for (int64_t i = 0; i < longest; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        ids[i] = (int32_t)(x % cfg->n_vocab);
    }

    char types[256];
    uint64_t per_token = bytes_per_token(&s.model, types, sizeof types);
    port_out("model: %s\n", path);
    port_out("  %u layers, %u wide, vocabulary %u; matrices: %s\n", cfg->n_layer, cfg->n_embd, cfg->n_vocab, types);
    port_out("  weights read per generated token: %.1f MiB; arena %.1f MiB; --load %s (loaded in %.2f s); "
             "planned %.1f MiB resident, budget %.1f MiB (%s)\n",
             (double)per_token / 1048576.0, (double)s.plan.total / 1048576.0, mem_load_name(s.mem.load), t_load,
             (double)s.mem.total / 1048576.0, (double)s.budget.bytes / 1048576.0, s.budget.source);
    port_out("kernels: %s; threads: %d; prompt steps of %u tokens; KV cache F16\n", kern_active()->name, threads,
             s.mopt.batch);
    if (s.mopt.load == LOAD_STREAM) {
        ModelOptions one = s.mopt;
        one.batch = 1;
        ModelStreamParts sp;
        model_stream_bytes(cfg, &one, &sp);
        const WeightStream *st = &s.ws.stream;
        port_out("stream: 2 slots of %.1f MiB, %u of %u layers resident, output matrix in %u chunks of %u rows; "
                 "at most %.1f MiB read from the file per generated token\n",
                 (double)st->slot_bytes / 1048576.0, st->resident_layers, cfg->n_layer, st->n_out_chunks,
                 st->out_chunk_rows, (double)sp.read_per_step / 1048576.0);
    }

    /* warm-up: page the weights in, start the thread pool */
    if (n_prompt > 0) run_prompt(&s, ids, (int)n_prompt);
    if (n_gen > 0) run_generation(&s, ids, (int)(n_gen < 4 ? n_gen : 4));

    double pp[BENCH_MAX_REPS], tg[BENCH_MAX_REPS];
    for (int r = 0; r < reps; r++) {
        if (n_prompt > 0) pp[r] = (double)n_prompt / run_prompt(&s, ids, (int)n_prompt);
        if (n_gen > 0) tg[r] = (double)n_gen / run_generation(&s, ids, (int)n_gen);
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
        if (k) snprintf(cell[rows][2], 48, "%.2f", mean * (double)per_token / 1e9);
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
    session_close(&s);
    return 0;
}
