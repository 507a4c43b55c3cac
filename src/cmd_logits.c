/* pith logits MODEL --prompt-ids 1,2,3 --out FILE.f32 [--kv-type f32|f16|q8_0] [-c N] [-t N]
 *                   [-b N] [--no-mmap] [--mem SIZE] [--load mmap|read|stream]
 *                   [--stream-window SIZE] [--plan]
 *
 * Feeds the ids (in steps of -b tokens) and writes the logits of every
 * position as little-endian float32, shape [positions][vocab]: the format
 * of the reference fixtures. */
#include <string.h>

#include "../port/port.h"
#include "cli.h"
#include "forward.h"
#include "gguf.h"
#include "memplan.h"
#include "model.h"

#define LOGITS_DEFAULT_BATCH 32

static int host_is_little_endian(void)
{
    const uint16_t one = 1;
    return *(const uint8_t *)&one == 1;
}

static void to_little_endian(float *v, uint64_t n)
{
    if (host_is_little_endian()) return;
    uint8_t *b = (uint8_t *)v;
    for (uint64_t i = 0; i < n; i++, b += 4) {
        uint8_t t0 = b[0], t1 = b[1];
        b[0] = b[3], b[1] = b[2], b[2] = t1, b[3] = t0;
    }
}

int cmd_logits(int argc, char **argv)
{
    const char *model_path = NULL, *ids_text = NULL, *out_path = NULL;
    int use_mmap = 1, show_plan = 0, load = -1; /* load -1: the planner chooses */
    uint64_t mem = 0, stream_window = 0;
    int64_t n_ctx = 0, n_threads = 0, batch = LOGITS_DEFAULT_BATCH; /* threads 0: model_default_threads */
    KvType kv_type = KV_F16;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--prompt-ids") == 0) ids_text = cli_value(argc, argv, &i);
        else if (strcmp(a, "--out") == 0) out_path = cli_value(argc, argv, &i);
        else if (strcmp(a, "-c") == 0 || strcmp(a, "--ctx") == 0) n_ctx = cli_int(a, cli_value(argc, argv, &i), 1, 1 << 24);
        else if (strcmp(a, "-t") == 0 || strcmp(a, "--threads") == 0) n_threads = cli_int(a, cli_value(argc, argv, &i), 1, 1024);
        else if (strcmp(a, "-b") == 0 || strcmp(a, "--batch") == 0)
            batch = cli_int(a, cli_value(argc, argv, &i), 1, FORWARD_MAX_BATCH);
        else if (strcmp(a, "--kv-type") == 0) {
            const char *v = cli_value(argc, argv, &i);
            if (strcmp(v, "f32") == 0) kv_type = KV_F32;
            else if (strcmp(v, "f16") == 0) kv_type = KV_F16;
            else if (strcmp(v, "q8_0") == 0) kv_type = KV_Q8_0;
            else port_die("--kv-type: '%s' is not f32, f16 or q8_0", v);
        } else if (strcmp(a, "--no-mmap") == 0) use_mmap = 0;
        else if (strcmp(a, "--plan") == 0) show_plan = 1;
        else if (strcmp(a, "--mem") == 0) mem = cli_size(a, cli_value(argc, argv, &i));
        else if (strcmp(a, "--load") == 0) {
            const char *v = cli_value(argc, argv, &i);
            if ((load = mem_load_parse(v)) < 0) port_die("--load: '%s' is not mmap, read or stream", v);
        } else if (strcmp(a, "--stream-window") == 0) stream_window = cli_size(a, cli_value(argc, argv, &i));
        else if (a[0] == '-' && a[1] != '\0') port_die("%s: unknown option for logits", a);
        else if (!model_path) model_path = a;
        else port_die("%s: unexpected argument (one model only)", a);
    }
    if (!model_path) port_die("logits: missing MODEL (usage: pith logits MODEL --prompt-ids 1,2,3 --out FILE.f32)");
    if (!ids_text) port_die("logits: missing --prompt-ids");
    if (!out_path) port_die("logits: missing --out");

    static Gguf g;
    GgufError err;
    if (gguf_open(&g, model_path, 0, NULL, &err) != 0) port_die("%s", err.msg); /* mapped after planning */
    ModelConfig cfg;
    if (model_read_config(&g, &cfg, &err) != 0) port_die("%s", err.msg);

    int n_ids = cli_count_ids(ids_text);
    if ((uint64_t)n_ids > cfg.n_ctx_train)
        port_die("--prompt-ids: %d ids are more than the model's context of %u", n_ids, cfg.n_ctx_train);
    ModelOptions opt;
    memset(&opt, 0, sizeof opt);
    opt.n_ctx = n_ctx ? (uint32_t)n_ctx : (uint32_t)n_ids;
    if ((uint32_t)n_ids > opt.n_ctx) port_die("--prompt-ids: %d ids do not fit a context of %u (-c)", n_ids, opt.n_ctx);
    opt.kv_type = kv_type;
    opt.batch = (uint32_t)(batch < n_ids ? batch : n_ids);
    opt.all_logits = 1;
    opt.stream_window = stream_window;
    if (model_check_options(&cfg, &opt, &err) != 0) port_die("%s", err.msg);

    /* The planner chooses the load mode within the budget; every id needs
     * its position, so the context is never shrunk below them. */
    MemBudget budget;
    mem_budget_init(&budget, mem);
    MemModelPlan mp = {&g, &cfg, opt, opt.batch, "prompt ids", (uint64_t)n_ids * sizeof(int32_t)};
    MemRequest req = {mem_model_plan, &mp, model_path, 0, load, use_mmap, opt.n_ctx, (uint32_t)n_ids, stream_window};
    for (uint32_t f = 0; f < g.n_files; f++) req.file_bytes += g.files[f].size;
    MemDecision dec;
    mem_open_model(&g, &cfg, &req, &budget, &dec, show_plan);
    opt.n_ctx = dec.n_ctx;
    opt.load = dec.load;
    opt.stream_window = dec.stream_window;
    if (!n_threads) n_threads = model_default_threads(opt.load, port_cpu_count());
    if (show_plan) mem_print(&budget, &req, &dec);
    Arena arena;
    arena_map_plan(&arena, &dec.plan, model_path);

    int32_t *ids = arena_take(&arena, (uint64_t)n_ids * sizeof(int32_t));
    if (!ids) port_die("internal error: memory plan too small for the prompt ids");
    if (gguf_index(&g, &arena, &err) != 0) port_die("%s", err.msg);
    cli_ids("--prompt-ids", ids_text, ids, n_ids, cfg.n_vocab);

    static Model m;
    if (model_load(&m, &g, &arena, &cfg, &opt, &err) != 0) port_die("%s", err.msg);
    port_set_threads((int)n_threads);

    char werr[512];
    for (int i = 0; i < n_ids;) {
        int step = n_ids - i < (int)opt.batch ? n_ids - i : (int)opt.batch;
        if (forward_batch(&m, ids + i, step, (uint32_t)i, 1) != 0) port_die("%s: %s", model_path, m.err);
        uint64_t n_floats = (uint64_t)step * cfg.n_vocab;
        to_little_endian(m.logits, n_floats);
        if (port_write_file(out_path, m.logits, (size_t)(n_floats * sizeof(float)), i > 0, werr, sizeof werr) != 0)
            port_die("%s", werr);
        i += step;
    }
    gguf_close(&g);
    model_close(&m);
    arena_unmap(&arena);
    return 0;
}
