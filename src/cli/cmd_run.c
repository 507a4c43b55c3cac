/* cmd_run.c - `pith run MODEL` (its options: run_options below).
 *
 * Wraps the prompt in the model's chat template as one user turn (or feeds
 * it as is with --raw; a raw prompt is echoed first on a terminal, or with
 * --echo), prefills it in batches and streams the generated
 * text to stdout. Timings and the memory plan go to stderr. */
#include <stdio.h>
#include <string.h>

#include "../../port/port.h"
#include "cli.h"

#define DEFAULT_PREDICT 256

static void print_stats(const Engine *e, const Slot *s, double t_gen)
{
    EngineInfo in;
    engine_info(e, &in);
    int n_prompt = (int)s->n_prompt, n_gen = s->n_gen;
    double t_prefill = s->t_begin - s->t_start, t_first = s->t_first > 0 ? s->t_first - s->t_start : t_prefill;
    port_err("load: %.3f s, arena %.1f MiB, weights %.1f MiB (--load %s), context %u, %d thread%s; "
             "planned %.1f MiB resident, budget %.1f MiB (%s)\n",
             e->load_seconds, (double)in.arena_bytes / 1048576.0, (double)in.weight_bytes / 1048576.0, in.load, in.n_ctx,
             in.threads, in.threads == 1 ? "" : "s", (double)in.planned_bytes / 1048576.0,
             (double)in.budget_bytes / 1048576.0, in.budget_source);
    port_err("prompt: %d tokens (%u cached) in %.3f s (%.1f tokens/s); first token after %.3f s\n", n_prompt,
             s->n_cached, t_prefill, t_prefill > 0 ? (n_prompt - (int)s->n_cached) / t_prefill : 0.0, t_first);
    /* The peak resident set so far, as the kernel measured it (VmHWM). */
    uint64_t peak = port_peak_rss();
    char peak_text[64] = "unknown";
    if (peak)
        snprintf(peak_text, sizeof peak_text, "%.1f MiB (VmHWM %llu bytes)", (double)peak / 1048576.0,
                 (unsigned long long)peak);
    char spec[96];
    port_err("generation: %d tokens in %.3f s (%.1f tokens/s)%s; peak RSS %s\n", n_gen, t_gen,
             t_gen > 0 ? n_gen / t_gen : 0.0, cli_spec_stats(e, s, spec, sizeof spec), peak_text);
}

typedef struct {
    int print_ids;
    int closed;       /* stdout was closed: nobody is reading */
} RunOutput;

/* The reply's text to stdout (not with --print-ids). */
static void on_text(void *ctx, int kind, const char *p, size_t n)
{
    (void)kind;
    RunOutput *o = ctx;
    if (!o->print_ids && !o->closed && port_out_bytes(p, n) < 0) o->closed = 1;
}

/* A closed stdout stops generation quietly. */
static int on_token(void *ctx, int32_t id)
{
    (void)id;
    return ((RunOutput *)ctx)->closed;
}

typedef struct {
    const char *prompt, *prompt_ids, *system, *prompt_file, *system_file, *prompt_cache;
    int64_t n_predict;
    int raw, print_ids, echo; /* echo -1: on a terminal */
} RunArgs;

const CliOpt run_options[] = {
    OPT_STRING("-p, --prompt TEXT\tthe prompt", RunArgs, prompt),
    OPT_STRING("-f, --file FILE\tthe prompt from a file", RunArgs, prompt_file),
    OPT_STRING("--prompt-ids 1,2,3\ttoken ids, fed exactly", RunArgs, prompt_ids),
    OPT_FLAG("--print-ids\tgenerated ids only, on stdout", RunArgs, print_ids, 1),
    OPT_FLAG("--raw\tno chat template", RunArgs, raw, 1),
    OPT_FLAG("--echo, --no-echo\tprint a raw prompt first (on a terminal)", RunArgs, echo, 1),
    OPT_STRING("--system TEXT\ta system turn first", RunArgs, system),
    OPT_STRING("--system-file FILE\tthe system turn from a file", RunArgs, system_file),
    OPT_INT64("-n, --n-predict N\ttokens to generate (256)", RunArgs, n_predict, 0, 1 << 24),
    OPT_STRING("--prompt-cache FILE\treuse and save the computed prompt", RunArgs, prompt_cache),
    OPT_INCLUDE(cli_context_options),
    OPT_INCLUDE(cli_model_options),
    OPT_INCLUDE(cli_sampling_options),
    OPT_INCLUDE(cli_grammar_options),
    OPT_INCLUDE(cli_generation_options),
    OPT_END,
};

int cmd_run(const CliCommand *cmd, int argc, char **argv)
{
    EngineOptions o;
    RunArgs a = {.n_predict = DEFAULT_PREDICT, .echo = -1};
    cli_parse(cmd, argc, argv, &o, &a);
    const char *prompt = a.prompt, *prompt_ids = a.prompt_ids, *system = a.system;
    int64_t n_predict = a.n_predict;
    int raw = a.raw, print_ids = a.print_ids, echo = a.echo;
    if ((prompt != NULL) + (prompt_ids != NULL) + (a.prompt_file != NULL) != 1)
        port_die("run: give one of -p TEXT, -f FILE or --prompt-ids IDS");
    if (prompt && !*prompt) port_die("-p: the prompt is empty");
    if (system && a.system_file) port_die("run: give --system or --system-file, not both");
    /* prompt files: their sizes now, their text in the arena once it is mapped */
    uint64_t prompt_size = a.prompt_file ? cli_text_size("-f", a.prompt_file) : 0;
    uint64_t system_size = a.system_file ? cli_text_size("--system-file", a.system_file) : 0;
    CliPlanItem files = {"prompt files", (prompt_size ? arena_round(prompt_size + 1) : 0) +
                                             (system_size ? arena_round(system_size + 1) : 0)};
    if (files.bytes) o.plan_extra = cli_plan_item, o.plan_extra_ctx = &files;

    /* Scratch for text and ids must hold the rendered prompt and the
     * prompt ids; generated ids are kept only for --print-ids. */
    uint64_t prompt_len = prompt ? strlen(prompt) : prompt_size, system_len = system ? strlen(system) : system_size;
    uint64_t text = prompt_ids ? 0 : chat_render_bound(2, 0, 0, prompt_len + system_len);
    uint64_t ids = prompt_ids ? (uint64_t)cli_count_ids(prompt_ids) : 0;
    o.max_text = text;
    if (o.max_text < ids) o.max_text = ids;
    if (o.max_text < 256) o.max_text = 256;

    o.max_out_ids = print_ids ? (uint64_t)n_predict : 0;
    /* The planner never shrinks the context below what the prompt ids
     * need, with room for one generated token. */
    if (prompt_ids) o.min_ctx = (uint32_t)cli_count_ids(prompt_ids) + 1;

    static Engine e;
    cli_open_engine(&e, &o);
    Slot *s = engine_slot(&e, 0);
    cli_grammar_load(&e, s);
    size_t len;
    if (a.prompt_file) prompt = cli_text_read(&e.arena, "-f", a.prompt_file, prompt_size, &len);
    if (a.system_file) system = cli_text_read(&e.arena, "--system-file", a.system_file, system_size, &len);

    int n_prompt;
    if (prompt_ids) {
        n_prompt = cli_ids("--prompt-ids", prompt_ids, e.ids, e.max_ids, e.n_vocab);
    } else {
        const char *src = prompt;
        if (raw || e.no_template || engine_template_is_raw(&e)) {
            if (!raw) cli_template_note(&e, "feeding the prompt as is");
            len = strlen(prompt);
            /* A raw prompt is the start of the text (a base model goes on
             * mid-sentence): shown first on a terminal, as llama.cpp does. */
            if (echo < 0) echo = port_is_tty(1);
            if (echo && !print_ids) port_out_bytes(prompt, len);
        } else {
            int64_t n = engine_render_user(&e, system, prompt, strlen(prompt), 1, 0, e.opt.thinking);
            if (n < 0) cli_engine_die(&e);
            len = (size_t)n;
            src = e.text;
        }
        /* BOS first when the model asks for it, unless the template wrote it. */
        n_prompt = engine_tokenize(&e, src, len, 1);
        if (n_prompt < 0) port_die("-p: the prompt does not fit the planned token buffer");
    }
    if (n_prompt == 0) port_die("-p: the prompt has no tokens");
    if ((uint64_t)n_prompt >= e.n_ctx)
        port_die("prompt: %d tokens do not fit a context of %u with room to generate (raise -c)", n_prompt, e.n_ctx);

    /* A full cache shifts (drops the oldest half after --keep) unless
     * --no-shift; the last token is not fed (nothing follows it). */
    /* --prompt-cache: what a file holds of this prompt is not computed
     * again (slot_start reuses the prefix the cache shares with it) */
    uint32_t shifts = a.prompt_cache ? cli_cache_load(&e, s, a.prompt_cache) : 0;

    RunOutput out = {print_ids, 0};
    SlotRequest rq;
    slot_request_defaults(&e, &rq);
    rq.n_predict = n_predict;
    rq.sink.text = on_text;
    rq.sink.token = on_token;
    rq.sink.ctx = &out;
    if (slot_start(&e, s, e.ids, n_prompt, &rq) != 0) cli_slot_die(s);
    engine_run_slot(&e, s, NULL, NULL);
    if (s->stop == SLOT_STOP_ERROR) cli_slot_die(s);
    if (s->stop == SLOT_STOP_CONTEXT) port_err("\ncontext full (%u tokens): stopping (raise -c)\n", e.n_ctx);
    double t_gen = s->t_end - s->t_begin;
    if (print_ids) {
        for (int i = 0; i < s->n_gen; i++) port_out("%s%d", i ? "," : "", s->out_ids[i]);
        port_out("\n");
    } else if (!out.closed) {
        port_out_bytes("\n", 1);
    }
    port_out_flush();
    print_stats(&e, s, t_gen);
    if (a.prompt_cache) cli_cache_save(&e, s, a.prompt_cache, shifts, s->n_cached);
    if (s->grammar_on && s->n_gen > 0)
        port_err("grammar: %.3f ms per token choosing tokens under it (sampling included; %u vocabulary walks, %u "
                 "allowed sets from the cache)\n",
                 1e3 * e.grammar_seconds / s->n_gen, e.grammar_masks, e.grammar_cached);
    engine_close(&e);
    return 0;
}
