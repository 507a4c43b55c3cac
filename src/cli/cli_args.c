/* Argument helpers and the engine's command-line side, shared by every
 * command (cli.h). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../../port/port.h"
#include "../text/json.h"
#include "cli.h"

const char *cli_value(int argc, char **argv, int *i)
{
    if (*i + 1 >= argc) port_die("%s: missing value", argv[*i]);
    *i += 1;
    return argv[*i];
}

int64_t cli_int(const char *flag, const char *text, int64_t min, int64_t max)
{
    char *end;
    errno = 0;
    long long v = strtoll(text, &end, 10);
    if (errno || end == text || *end != '\0') port_die("%s: '%s' is not an integer", flag, text);
    if (v < min || v > max) port_die("%s: %lld is out of range [%lld, %lld]", flag, v, (long long)min, (long long)max);
    return v;
}

double cli_float(const char *flag, const char *text, double min, double max)
{
    double v = 0;
    size_t n = text_to_double(text, strlen(text), &v);
    if (n == 0 || text[n] != '\0' || !isfinite(v)) port_die("%s: '%s' is not a number", flag, text);
    if (v < min || v > max) port_die("%s: %g is out of range [%g, %g]", flag, v, min, max);
    return v;
}

uint64_t cli_size(const char *flag, const char *text)
{
    double v = 0;
    const char *end = text + text_to_double(text, strlen(text), &v);
    if (end == text || !(v > 0)) port_die("%s: '%s' is not a size (e.g. 300M, 2G)", flag, text);
    double mul = 1;
    if (*end == 'K' || *end == 'k') mul = 1024.0, end++;
    else if (*end == 'M' || *end == 'm') mul = 1024.0 * 1024.0, end++;
    else if (*end == 'G' || *end == 'g') mul = 1024.0 * 1024.0 * 1024.0, end++;
    if (*end == 'B' || *end == 'b') end++;
    if (*end != '\0' || v * mul > 1e18) port_die("%s: '%s' is not a size (e.g. 300M, 2G)", flag, text);
    return (uint64_t)(v * mul);
}

int cli_count_ids(const char *text)
{
    int n = 1;
    for (const char *p = text; *p; p++) n += *p == ',';
    return n;
}

int cli_ids(const char *flag, const char *text, int32_t *out, int cap, int64_t limit)
{
    int n = 0;
    const char *p = text;
    if (*p == '\0') port_die("%s: empty list of ids", flag);
    for (;;) {
        char *end;
        errno = 0;
        long long v = strtoll(p, &end, 10);
        if (errno || end == p) port_die("%s: item %d is not an integer", flag, n + 1);
        if (v < 0 || v >= limit) port_die("%s: id %lld is out of range [0, %lld)", flag, v, (long long)limit);
        if (n == cap) port_die("%s: more than %d ids", flag, cap);
        out[n++] = (int32_t)v;
        if (*end == '\0') break;
        if (*end != ',') port_die("%s: unexpected '%c' after item %d", flag, *end, n);
        p = end + 1;
    }
    return n;
}

/* --grammar FILE / --json-schema FILE of run and chat (read and compiled by
 * cli_grammar.c): flag is which, file its value. */
void cli_grammar_option(EngineOptions *o, const char *flag, const char *file)
{
    if (o->grammar_file) port_die("%s: give one --grammar or --json-schema", flag);
    o->grammar_file = file;
    o->grammar_is_schema = flag[2] == 'j';
    o->grammar = 1;
    /* the grammar holds the reply from its first token: no Qwen3 thinking block */
    o->thinking = 0;
}

int cli_session_option(EngineOptions *o, int argc, char **argv, int *i)
{
    const char *a = argv[*i];
    SamplerParams *sp = &o->sampling;
    if (!strcmp(a, "-c") || !strcmp(a, "--ctx")) o->n_ctx = cli_int(a, cli_value(argc, argv, i), 1, 1 << 24);
    else if (!strcmp(a, "-t") || !strcmp(a, "--threads")) o->threads = cli_int(a, cli_value(argc, argv, i), 1, 1024);
    else if (!strcmp(a, "-b") || !strcmp(a, "--batch")) o->batch = cli_int(a, cli_value(argc, argv, i), 1, ENGINE_MAX_BATCH);
    else if (!strcmp(a, "--kv-type")) {
        const char *v = cli_value(argc, argv, i);
        if (!strcmp(v, "f32")) o->kv_type = KV_F32;
        else if (!strcmp(v, "f16")) o->kv_type = KV_F16;
        else if (!strcmp(v, "q8_0")) o->kv_type = KV_Q8_0;
        else port_die("--kv-type: '%s' is not f32, f16 or q8_0", v);
    } else if (!strcmp(a, "--no-mmap")) o->use_mmap = 0;
    else if (!strcmp(a, "--temp")) {
        sp->temperature = (float)cli_float(a, cli_value(argc, argv, i), 0, 100);
        o->sampling_set[ENGINE_SET_TEMP] = 1;
    } else if (!strcmp(a, "--top-k")) {
        sp->top_k = (int)cli_int(a, cli_value(argc, argv, i), 0, 1 << 30);
        o->sampling_set[ENGINE_SET_TOP_K] = 1;
    } else if (!strcmp(a, "--top-p")) {
        sp->top_p = (float)cli_float(a, cli_value(argc, argv, i), 1e-6, 1);
        o->sampling_set[ENGINE_SET_TOP_P] = 1;
    } else if (!strcmp(a, "--min-p")) {
        sp->min_p = (float)cli_float(a, cli_value(argc, argv, i), 0, 1);
        o->sampling_set[ENGINE_SET_MIN_P] = 1;
    } else if (!strcmp(a, "--repeat-penalty")) sp->repeat_penalty = (float)cli_float(a, cli_value(argc, argv, i), 1e-3, 100);
    else if (!strcmp(a, "--repeat-last-n")) sp->repeat_last_n = (int)cli_int(a, cli_value(argc, argv, i), 0, SAMPLER_MAX_HISTORY);
    else if (!strcmp(a, "--presence-penalty")) sp->presence_penalty = (float)cli_float(a, cli_value(argc, argv, i), -100, 100);
    else if (!strcmp(a, "--frequency-penalty")) sp->frequency_penalty = (float)cli_float(a, cli_value(argc, argv, i), -100, 100);
    else if (!strcmp(a, "--seed")) o->seed = cli_int(a, cli_value(argc, argv, i), 0, INT64_MAX);
    else if (!strcmp(a, "--trace")) o->trace_path = cli_value(argc, argv, i);
    else if (!strcmp(a, "--no-think")) o->thinking = 0;
    else if (!strcmp(a, "--think")) o->thinking = 1;
    else if (!strcmp(a, "--plan")) o->show_plan = 1;
    else if (!strcmp(a, "--template")) {
        o->template_name = cli_value(argc, argv, i);
        if (chat_template_by_name(o->template_name) < 0)
            port_die("--template: '%s' is not a template pith knows (%s)", o->template_name, chat_template_names());
    }
    else if (!strcmp(a, "--keep")) o->keep = cli_int(a, cli_value(argc, argv, i), 0, 1 << 24);
    else if (!strcmp(a, "--no-shift")) o->no_shift = 1;
    else if (!strcmp(a, "--ignore-eos")) o->ignore_eos = 1;
    else if (!strcmp(a, "--mem")) o->mem = cli_size(a, cli_value(argc, argv, i));
    else if (!strcmp(a, "--stream-window")) o->stream_window = cli_size(a, cli_value(argc, argv, i));
    else if (!strcmp(a, "--load")) {
        const char *v = cli_value(argc, argv, i);
        o->load_asked = engine_load_mode(v);
        if (o->load_asked < 0) port_die("--load: '%s' is not mmap, read or stream", v);
    }
    else return 0;
    return 1;
}

void cli_template_note(const Engine *e, const char *fallback)
{
    if (e->tmpl != CHAT_TEMPLATE_RAW || e->opt.template_name) return;
    if (!e->tmpl_name[0]) port_err("note: the model has no chat template: %s\n", fallback);
    else port_err("warning: chat template '%s' is not recognised: %s\n", e->tmpl_name, fallback);
}

_Noreturn void cli_engine_die(const Engine *e)
{
    port_die("%s", e->err);
}

_Noreturn void cli_slot_die(const Slot *s)
{
    port_die("%s", s->err);
}

void cli_open_engine(Engine *e, const EngineOptions *o)
{
    int rc = engine_open(e, o);
    if (e->notice[0]) port_err("%s\n", e->notice);
    if (o->show_plan && (rc > 0 || (rc < 0 && e->refused))) {
        engine_print_plan(e);
        engine_print_system(1);
        port_out_flush();
    }
    if (rc < 0) cli_engine_die(e);
    if (rc > 0) {
        engine_close(e);
        port_exit(0);
    }
}

void cli_plan_item(void *ctx, Plan *p)
{
    const CliPlanItem *item = ctx;
    plan_add(p, item->what, item->bytes);
}

void cli_map_plan(Arena *a, const Plan *p, const char *owner)
{
    if (p->overflow || p->total > (uint64_t)SIZE_MAX) port_die("%s: the memory plan overflows", owner);
    void *base = port_arena_map((size_t)p->total);
    if (!base) port_die("%s: cannot allocate the arena of %llu bytes", owner, (unsigned long long)p->total);
    arena_init(a, base, p->total);
}
