/* cmd_logits.c - `pith logits MODEL` (its options: logits_options below).
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

typedef struct {
    const char *ids_text, *out_path;
    int64_t batch;
    int show_plan; /* --plan: print the plan, then compute as asked */
} LogitsArgs;

/* -b and --plan are logits' own (another default; the plan, then the
 * logits), before the shared rows they hide. */
const CliOpt logits_options[] = {
    OPT_STRING("--out FILE\tfloat32 [positions][vocab]", LogitsArgs, out_path),
    OPT_STRING("--prompt-ids 1,2,3\ttoken ids, fed exactly", LogitsArgs, ids_text),
    OPT_INCLUDE(cli_context_options),
    OPT_INT64("-b, --batch N\tprompt tokens a step (32)", LogitsArgs, batch, 1, ENGINE_MAX_BATCH),
    OPT_FLAG("--plan\tprint the memory plan too", LogitsArgs, show_plan, 1),
    OPT_INCLUDE(cli_model_options),
    OPT_END,
};

int cmd_logits(const CliCommand *cmd, int argc, char **argv)
{
    EngineOptions o;
    LogitsArgs a = {.batch = LOGITS_DEFAULT_BATCH};
    cli_parse(cmd, argc, argv, &o, &a);
    const char *ids_text = a.ids_text, *out_path = a.out_path;
    int show_plan = a.show_plan;
    o.batch = a.batch;
    o.model_only = 1;
    o.all_logits = 1;
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
