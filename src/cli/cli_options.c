/* The engine's options, in groups the commands' tables include (cli.h):
 * every option that stores into the engine's options is written here,
 * once, with its help line, range and default. Help lines are terse: they
 * are in every binary. */
#include <string.h>

#include "../../port/port.h"
#include "cli.h"

const CliOpt cli_file_options[] = {
    OPT_FLAG("--no-mmap\tread the file, do not map it", EngineOptions, use_mmap, 0),
    OPT_END,
};

/* --kv-type's and --load's lists are the enums' order (CLI_CHOICE stores
 * the index); the names of --load are the planner's (mem_load_name:
 * checked by tests/tools/main_optdoc.c --check). */
_Static_assert(KV_F32 == 0 && KV_F16 == 1 && KV_Q8_0 == 2 && sizeof(KvType) == sizeof(int),
               "--kv-type f32|f16|q8_0 is KvType's order, stored as an int");
_Static_assert(LOAD_MMAP == 0 && LOAD_READ == 1 && LOAD_STREAM == 2, "--load mmap|read|stream is LoadMode's order");

const CliOpt cli_context_options[] = {
    OPT_INT64("-c, --ctx N\tKV cache tokens (board's, model's if less)", EngineOptions, n_ctx, 1, 1 << 24),
    OPT_CHOICE("--kv-type f32|f16|q8_0\tKV cache type (f16)", EngineOptions, kv_type, KvType),
    OPT_END,
};

const CliOpt cli_model_options[] = {
    OPT_INT64("-t, --threads N\tthreads (board's, else cores)", EngineOptions, threads, 1, 1024),
    OPT_INT64("-b, --batch N\tprompt tokens a step (64)", EngineOptions, batch, 1, ENGINE_MAX_BATCH),
    OPT_INCLUDE(cli_file_options),
    OPT_SIZE("--mem SIZE\tmemory budget (board's, else 75% RAM)", EngineOptions, mem),
    OPT_CHOICE("--load mmap|read|stream\thow weights are reached (planned)", EngineOptions, load_asked, int),
    OPT_SIZE("--stream-window SIZE\tstream window (smallest)", EngineOptions, stream_window),
    OPT_FLAG("--plan\tprint the memory plan, exit", EngineOptions, show_plan, 1),
    OPT_END,
};

/* --temp, --top-k, --top-p, --min-p: the value, and that it was given
 * (sampling_set: the thinking mode's defaults are for the others). */
#define SAMPLING(spec, f, type, kind, range, k)                                                                      \
    {spec, {range}, CLI_AT(EngineOptions, sampling.f, type), 1 + offsetof(EngineOptions, sampling_set[k]),        \
     (kind) | CLI_ENGINE, 0}
#define INTS(lo, hi) .ints = (&(const CliInts){lo, hi})
#define REALS(lo, hi) .reals = (&(const CliReals){lo, hi})

const CliOpt cli_sampling_options[] = {
    SAMPLING("--temp T\t0 greedy (0.6; 0.7 no-think)", temperature, float, CLI_FLOAT, REALS(0, 100), ENGINE_SET_TEMP),
    SAMPLING("--top-k K\t0 off (20)", top_k, int, CLI_INT, INTS(0, 1 << 30), ENGINE_SET_TOP_K),
    SAMPLING("--top-p P\t1 off (0.95; 0.8 no-think)", top_p, float, CLI_FLOAT, REALS(1e-6, 1), ENGINE_SET_TOP_P),
    SAMPLING("--min-p P\t0 off (0)", min_p, float, CLI_FLOAT, REALS(0, 1), ENGINE_SET_MIN_P),
    OPT_FLOAT("--repeat-penalty F\t1 off (1)", EngineOptions, sampling.repeat_penalty, 1e-3, 100),
    OPT_INT("--repeat-last-n N\twindow of penalties (64)", EngineOptions, sampling.repeat_last_n, 0,
            SAMPLER_MAX_HISTORY),
    OPT_FLOAT("--presence-penalty F\t(0)", EngineOptions, sampling.presence_penalty, -100, 100),
    OPT_FLOAT("--frequency-penalty F\t(0)", EngineOptions, sampling.frequency_penalty, -100, 100),
    OPT_INT64("--seed S\tsampler seed (clock)", EngineOptions, seed, 0, INT64_MAX),
    OPT_END,
};

/* --grammar FILE / --json-schema FILE (read and compiled by cli_grammar.c). */
static void set_grammar(void *base, const char *flag, const char *file)
{
    EngineOptions *o = base;
    if (o->grammar_file) port_die("%s: give one --grammar or --json-schema", flag);
    o->grammar_file = file;
    o->grammar_is_schema = flag[2] == 'j';
    o->grammar = 1;
    /* the grammar holds the reply from its first token: no Qwen3 thinking block */
    o->thinking = 0;
}

const CliOpt cli_grammar_options[] = {
    OPT_CALL("--grammar FILE\tGBNF grammar the reply must match", EngineOptions, set_grammar, NULL),
    OPT_CALL("--json-schema FILE\tJSON Schema the reply must match", EngineOptions, set_grammar, NULL),
    OPT_END,
};

static void set_template(void *base, const char *flag, const char *name)
{
    if (chat_template_by_name(name) < 0)
        port_die("%s: '%s' is not a template pith knows (%s)", flag, name, chat_template_names());
    ((EngineOptions *)base)->template_name = name;
}

const CliOpt cli_template_options[] = {
    OPT_FLAG("--think\tthinking on (default: the template's)", EngineOptions, thinking, 1),
    OPT_FLAG("--no-think\tthinking off", EngineOptions, thinking, 0),
    OPT_CALL("--template NAME\tinstead of the model's:", EngineOptions, set_template, chat_template_names),
    OPT_STRING("--chat-template-file F\ta Jinja chat template instead of the model's", EngineOptions, template_file),
    OPT_END,
};

/* --spec-type: the names in ENGINE_SPEC_*'s order, llama.cpp's */
static const char *const spec_types[] = {"none", "ngram-simple", "draft-simple"};
_Static_assert(ENGINE_SPEC_NONE == 0 && ENGINE_SPEC_NGRAM_SIMPLE == 1 && ENGINE_SPEC_DRAFT_SIMPLE == 2,
               "spec_types is the enum's order");

static const char *spec_type_names(void)
{
    return "none, ngram-simple, draft-simple (with -md)";
}

static void set_spec_type(void *base, const char *flag, const char *name)
{
    for (int i = 0; i < (int)(sizeof spec_types / sizeof spec_types[0]); i++)
        if (!strcmp(name, spec_types[i])) {
            ((EngineOptions *)base)->spec_type = i;
            return;
        }
    port_die("%s: '%s' is not one of %s", flag, name, spec_type_names());
}

const CliOpt cli_generation_options[] = {
    OPT_STRING("--trace FILE\ta JSON line per token", EngineOptions, trace_path),
    OPT_STRING("-md, --model-draft FILE\ta draft model of the same vocabulary", EngineOptions, draft_path),
    OPT_CALL("--spec-type TYPE\tspeculative decoding (draft-simple with -md, else none):", EngineOptions, set_spec_type,
             spec_type_names),
    OPT_INT64("--draft-max N\tmost drafted tokens verified a step (16)", EngineOptions, draft_max, 1, ENGINE_MAX_BATCH - 1),
    OPT_INCLUDE(cli_template_options),
    OPT_INT64("--keep N\ttokens kept when the context shifts (0)", EngineOptions, keep, 0, 1 << 24),
    OPT_FLAG("--no-shift\tstop when the context is full", EngineOptions, no_shift, 1),
    OPT_FLAG("--ignore-eos\tgo on past end of generation", EngineOptions, ignore_eos, 1),
    OPT_END,
};
