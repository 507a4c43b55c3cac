/* pith logits MODEL --prompt-ids 1,2,3 --out FILE.f32 [--kv-type f32|f16|q8_0] [-c N] [-t N]
 *                   [-b N] [--no-mmap] [--mem SIZE] [--load mmap|read|stream]
 *                   [--stream-window SIZE] [--plan]
 *
 * Feeds the ids (in steps of -b tokens) and writes the logits of every
 * position as little-endian float32, shape [positions][vocab]: the format
 * of the reference fixtures. */
#include <stdio.h>
#include <string.h>

#include "../../port/port.h"
#include "cli.h"

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
    const char *ids_text = NULL, *out_path = NULL;
    int show_plan = 0; /* --plan: print the plan, then compute as asked */
    EngineOptions o;
    engine_defaults(&o);
    o.batch = LOGITS_DEFAULT_BATCH;
    o.model_only = 1;
    o.all_logits = 1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--prompt-ids") == 0) ids_text = cli_value(argc, argv, &i);
        else if (strcmp(a, "--out") == 0) out_path = cli_value(argc, argv, &i);
        else if (strcmp(a, "-c") == 0 || strcmp(a, "--ctx") == 0) o.n_ctx = cli_int(a, cli_value(argc, argv, &i), 1, 1 << 24);
        else if (strcmp(a, "-t") == 0 || strcmp(a, "--threads") == 0) o.threads = cli_int(a, cli_value(argc, argv, &i), 1, 1024);
        else if (strcmp(a, "-b") == 0 || strcmp(a, "--batch") == 0)
            o.batch = cli_int(a, cli_value(argc, argv, &i), 1, ENGINE_MAX_BATCH);
        else if (strcmp(a, "--kv-type") == 0) {
            const char *v = cli_value(argc, argv, &i);
            if (strcmp(v, "f32") == 0) o.kv_type = KV_F32;
            else if (strcmp(v, "f16") == 0) o.kv_type = KV_F16;
            else if (strcmp(v, "q8_0") == 0) o.kv_type = KV_Q8_0;
            else port_die("--kv-type: '%s' is not f32, f16 or q8_0", v);
        } else if (strcmp(a, "--no-mmap") == 0) o.use_mmap = 0;
        else if (strcmp(a, "--plan") == 0) show_plan = 1;
        else if (strcmp(a, "--mem") == 0) o.mem = cli_size(a, cli_value(argc, argv, &i));
        else if (strcmp(a, "--load") == 0) {
            const char *v = cli_value(argc, argv, &i);
            if ((o.load_asked = engine_load_mode(v)) < 0) port_die("--load: '%s' is not mmap, read or stream", v);
        } else if (strcmp(a, "--stream-window") == 0) o.stream_window = cli_size(a, cli_value(argc, argv, &i));
        else if (a[0] == '-' && a[1] != '\0') cli_unknown("logits", a);
        else if (!o.model_path) o.model_path = a;
        else port_die("%s: unexpected argument (one model only)", a);
    }
    if (!o.model_path) port_die("logits: missing MODEL (see pith help logits)");
    if (!ids_text) port_die("logits: missing --prompt-ids");
    if (!out_path) port_die("logits: missing --out");

    /* Every id needs its position: the context (by default just the ids)
     * is never shrunk below them. The ids join the one arena. */
    int n_ids = cli_count_ids(ids_text);
    char what[64];
    snprintf(what, sizeof what, "--prompt-ids: %d ids", n_ids);
    o.default_ctx = (uint32_t)n_ids;
    o.min_ctx = (uint32_t)n_ids;
    o.min_ctx_what = what;
    if (o.batch > n_ids) o.batch = n_ids;
    CliPlanItem pi = {"prompt ids", (uint64_t)n_ids * sizeof(int32_t)};
    o.plan_extra = cli_plan_item;
    o.plan_extra_ctx = &pi;
    static Engine e;
    int rc = engine_open(&e, &o);
    if (show_plan && (rc == 0 || e.refused)) {
        engine_print_plan(&e);
        port_out_flush();
    } else if (e.notice[0]) {
        port_err("%s\n", e.notice);
    }
    if (rc != 0) cli_engine_die(&e);

    int32_t *ids = arena_take(&e.arena, (uint64_t)n_ids * sizeof(int32_t));
    if (!ids) port_die("internal error: memory plan too small for the prompt ids");
    cli_ids("--prompt-ids", ids_text, ids, n_ids, e.n_vocab);

    char werr[512];
    Slot *s = engine_slot(&e, 0);
    uint32_t batch = e.batch;
    for (int i = 0; i < n_ids;) {
        int step = n_ids - i < (int)batch ? n_ids - i : (int)batch;
        if (engine_feed(&e, s, ids + i, step, 1) != 0) cli_engine_die(&e);
        uint32_t rows;
        float *logits = engine_logits(&e, &rows);
        uint64_t n_floats = (uint64_t)step * e.n_vocab;
        to_little_endian(logits, n_floats);
        if (port_write_file(out_path, logits, (size_t)(n_floats * sizeof(float)), i > 0, werr, sizeof werr) != 0)
            port_die("%s", werr);
        i += step;
    }
    engine_close(&e);
    return 0;
}
