/* pith run MODEL -p TEXT [-n N] [--raw] [--system TEXT] [--prompt-ids 1,2,3 --print-ids] [session options]
 *
 * Wraps the prompt in the model's chat template as one user turn (or feeds
 * it as is with --raw; a raw prompt is echoed first on a terminal, or with
 * --echo), prefills it in batches and streams the generated
 * text to stdout. Timings and the memory plan go to stderr. */
#include <stdio.h>
#include <string.h>

#include "../../port/port.h"
#include "cli.h"
#include "../session/session.h"

#define DEFAULT_PREDICT 256

static void print_stats(const Session *s, int n_prompt, double t_prefill, double t_first, int n_gen, double t_gen)
{
    port_err("load: %.3f s, arena %.1f MiB, weights %.1f MiB (--load %s), context %u, %d thread%s; "
             "planned %.1f MiB resident, budget %.1f MiB (%s)\n",
             s->load_seconds, (double)s->plan.total / 1048576.0, (double)s->cfg.weight_bytes / 1048576.0,
             mem_load_name(s->mem.load), s->mopt.n_ctx, (int)s->opt.threads, s->opt.threads == 1 ? "" : "s",
             (double)s->mem.total / 1048576.0, (double)s->budget.bytes / 1048576.0, s->budget.source);
    port_err("prompt: %d tokens in %.3f s (%.1f tokens/s); first token after %.3f s\n", n_prompt, t_prefill,
             t_prefill > 0 ? n_prompt / t_prefill : 0.0, t_first);
    /* The peak resident set so far, as the kernel measured it (VmHWM). */
    uint64_t peak = port_peak_rss();
    char peak_text[64] = "unknown";
    if (peak)
        snprintf(peak_text, sizeof peak_text, "%.1f MiB (VmHWM %llu bytes)", (double)peak / 1048576.0,
                 (unsigned long long)peak);
    port_err("generation: %d tokens in %.3f s (%.1f tokens/s); peak RSS %s\n", n_gen, t_gen,
             t_gen > 0 ? n_gen / t_gen : 0.0, peak_text);
}

typedef struct {
    Session *s;
    int print_ids;
    int closed;       /* stdout was closed: nobody is reading */
    TokenStream ts;
} RunOutput;

/* Streams each token's text (not with --print-ids); a closed stdout stops
 * generation quietly. */
static int emit_token(void *ctx, int32_t id)
{
    RunOutput *o = ctx;
    if (!o->print_ids && session_emit(o->s, &o->ts, id) < 0) o->closed = 1;
    return o->closed;
}

typedef struct {
    const char *prompt, *prompt_ids, *system;
    int64_t n_predict;
    int raw, print_ids, echo; /* echo -1: on a terminal */
} RunArgs;

const CliOpt run_options[] = {
    OPT_STRING("-p, --prompt TEXT\tthe prompt", RunArgs, prompt),
    OPT_STRING("--prompt-ids 1,2,3\ttoken ids, fed exactly", RunArgs, prompt_ids),
    OPT_FLAG("--print-ids\tgenerated ids only, on stdout", RunArgs, print_ids, 1),
    OPT_FLAG("--raw\tno chat template", RunArgs, raw, 1),
    OPT_FLAG("--echo, --no-echo\tprint a raw prompt first (on a terminal)", RunArgs, echo, 1),
    OPT_STRING("--system TEXT\ta system turn first", RunArgs, system),
    OPT_INT64("-n, --n-predict N\ttokens to generate (256)", RunArgs, n_predict, 0, 1 << 24),
    OPT_INCLUDE(cli_context_options),
    OPT_INCLUDE(cli_model_options),
    OPT_INCLUDE(cli_sampling_options),
    OPT_INCLUDE(cli_grammar_options),
    OPT_INCLUDE(cli_generation_options),
    OPT_END,
};

int cmd_run(const CliCommand *cmd, int argc, char **argv)
{
    SessionOptions o;
    RunArgs a = {.n_predict = DEFAULT_PREDICT, .echo = -1};
    cli_parse(cmd, argc, argv, &o, &a);
    const char *prompt = a.prompt, *prompt_ids = a.prompt_ids, *system = a.system;
    int64_t n_predict = a.n_predict;
    int raw = a.raw, print_ids = a.print_ids, echo = a.echo;
    if (!prompt && !prompt_ids) port_die("run: missing -p TEXT or --prompt-ids IDS");
    if (prompt && prompt_ids) port_die("run: give -p or --prompt-ids, not both");
    if (prompt && !*prompt) port_die("-p: the prompt is empty");

    /* Scratch for text and ids must hold the rendered prompt and the
     * prompt ids; generated ids are kept only for --print-ids. */
    uint64_t text = prompt ? chat_render_bound(2, 0, 0, strlen(prompt) + (system ? strlen(system) : 0)) : 0;
    uint64_t ids = prompt_ids ? (uint64_t)cli_count_ids(prompt_ids) : 0;
    o.max_text = text;
    if (o.max_text < ids) o.max_text = ids;
    if (o.max_text < 256) o.max_text = 256;

    o.max_out_ids = print_ids ? (uint64_t)n_predict : 0;
    /* The planner never shrinks the context below what the prompt ids
     * need, with room for one generated token. */
    if (prompt_ids) o.min_ctx = (uint32_t)cli_count_ids(prompt_ids) + 1;

    static Session s;
    cli_open_session(&s, &o);
    cli_grammar_load(&s);

    int n_prompt;
    if (prompt_ids) {
        n_prompt = cli_ids("--prompt-ids", prompt_ids, s.ids, s.max_ids, s.cfg.n_vocab);
    } else {
        size_t len;
        const char *src = prompt;
        if (raw || s.tmpl == CHAT_TEMPLATE_RAW) {
            if (!raw) cli_template_note(&s, "feeding the prompt as is");
            len = strlen(prompt);
            /* A raw prompt is the start of the text (a base model goes on
             * mid-sentence): shown first on a terminal, as llama.cpp does. */
            if (echo < 0) echo = port_is_tty(1);
            if (echo && !print_ids) port_out_bytes(prompt, len);
        } else {
            int64_t n = session_render_user(&s, system, prompt, strlen(prompt), 1, 0);
            if (n < 0) cli_session_die(&s);
            len = (size_t)n;
            src = s.text;
        }
        /* BOS first when the model asks for it, unless the template wrote it. */
        n_prompt = tokenizer_encode_prompt(&s.tok, src, len, s.ids, s.max_ids);
        if (n_prompt < 0) port_die("-p: the prompt does not fit the planned token buffer");
    }
    if (n_prompt == 0) port_die("-p: the prompt has no tokens");
    if ((uint64_t)n_prompt >= s.mopt.n_ctx)
        port_die("prompt: %d tokens do not fit a context of %u with room to generate (raise -c)", n_prompt, s.mopt.n_ctx);

    double t0 = port_seconds();
    if (session_prefill(&s, s.ids, n_prompt) != 0) cli_session_die(&s);
    double t_prefill = port_seconds() - t0;

    /* A full cache shifts (drops the oldest half after --keep) unless
     * --no-shift; the last token is not fed (nothing follows it). */
    RunOutput out;
    memset(&out, 0, sizeof out);
    out.s = &s;
    out.print_ids = print_ids;
    token_stream_init(&out.ts);
    GenOptions g = {n_predict, 0, emit_token, NULL, &out};
    GenResult r;
    double tg0 = port_seconds();
    if (session_generate(&s, &g, &r) != 0) cli_session_die(&s);
    if (r.stop == GEN_CONTEXT_FULL) port_err("\ncontext full (%u tokens): stopping (raise -c)\n", s.mopt.n_ctx);
    int n_gen = r.n_gen, closed = out.closed;
    int32_t *out_ids = s.out_ids; /* NULL without --print-ids */
    double t_first = t_prefill + r.t_first;
    double t_gen = port_seconds() - tg0;
    if (print_ids) {
        for (int i = 0; i < n_gen; i++) port_out("%s%d", i ? "," : "", out_ids[i]);
        port_out("\n");
    } else if (!closed) {
        int n = token_stream_flush(&out.ts, s.piece, s.piece_cap);
        if (n > 0) port_out_bytes(s.piece, (size_t)n);
        port_out_bytes("\n", 1);
    }
    port_out_flush();
    print_stats(&s, n_prompt, t_prefill, t_first, n_gen, t_gen);
    if (s.grammar_on && n_gen > 0)
        port_err("grammar: %.3f ms per token choosing tokens under it (sampling included; %u vocabulary walks, %u "
                 "allowed sets from the cache)\n",
                 1e3 * s.grammar_seconds / n_gen, s.grammar_masks, s.grammar_cached);
    session_close(&s);
    return 0;
}
