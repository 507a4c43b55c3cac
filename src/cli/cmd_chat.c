/* cmd_chat.c - `pith chat MODEL` (its options: chat_options below).
 *
 * Interactive multi-turn chat; with stdin from a pipe, one message per line
 * (so agents can drive it). The KV cache keeps every earlier turn: each turn
 * prefills only its new tokens - the end of the last reply and the new user
 * turn - and streams the reply until the end-of-generation token.
 * Commands: /think, /no_think (thinking mode for the next turns), /reset
 * (forget the conversation), /exit.
 * When the KV cache is full, the context shifts (the first --keep positions
 * stay, the oldest half of the rest is dropped) so a chat can go on for
 * ever; --no-shift stops the reply instead.
 * Ctrl-C while a reply is generated stops it and returns to the prompt; a
 * Ctrl-C at the prompt, or a second one before the reply stopped, exits. */
#include <stdio.h>
#include <string.h>

#include "../../port/port.h"
#include "cli.h"

#define DEFAULT_REPLY 2048
#define MAX_MESSAGE (64 * 1024)

/* Appends "LABEL:id,id,...\n" to FILE (--ids-out), for tests and tools. */
static void write_ids(const char *path, const char *label, const int32_t *ids, int n)
{
    char line[64], err[512];
    int len = snprintf(line, sizeof line, "%s:", label);
    if (port_write_file(path, line, (size_t)len, 1, err, sizeof err) != 0) port_die("--ids-out: %s", err);
    for (int i = 0; i < n; i++) {
        len = snprintf(line, sizeof line, "%s%d", i ? "," : "", ids[i]);
        if (port_write_file(path, line, (size_t)len, 1, err, sizeof err) != 0) port_die("--ids-out: %s", err);
    }
    if (port_write_file(path, "\n", 1, 1, err, sizeof err) != 0) port_die("--ids-out: %s", err);
}

typedef struct {
    int closed;       /* stdout was closed */
} ChatOutput;

static void on_text(void *ctx, int kind, const char *p, size_t n)
{
    (void)kind;
    ChatOutput *o = ctx;
    if (!o->closed && port_out_bytes(p, n) < 0) o->closed = 1;
}

static int on_token(void *ctx, int32_t id)
{
    (void)id;
    return ((ChatOutput *)ctx)->closed;
}

/* Ctrl-C stops the reply (and returns to the prompt). */
static int interrupted(void *ctx)
{
    int *seen = ctx;
    if (port_interrupted()) *seen = 1;
    return *seen;
}

typedef struct {
    const char *system, *system_file, *ids_out, *prompt_cache;
    int64_t n_reply;
} ChatArgs;

const CliOpt chat_options[] = {
    OPT_STRING("--system TEXT\ta system turn first", ChatArgs, system),
    OPT_STRING("--system-file FILE\tthe system turn from a file", ChatArgs, system_file),
    OPT_INT64("-n, --n-predict N\tlongest reply (2048)", ChatArgs, n_reply, 1, 1 << 24),
    OPT_STRING("--ids-out FILE\tids of every turn", ChatArgs, ids_out),
    OPT_STRING("--prompt-cache FILE\treuse and save the conversation's state", ChatArgs, prompt_cache),
    OPT_INCLUDE(cli_context_options),
    OPT_INCLUDE(cli_model_options),
    OPT_INCLUDE(cli_sampling_options),
    OPT_INCLUDE(cli_grammar_options),
    OPT_INCLUDE(cli_generation_options),
    OPT_END,
};

int cmd_chat(const CliCommand *cmd, int argc, char **argv)
{
    EngineOptions o;
    ChatArgs a = {.n_reply = DEFAULT_REPLY};
    cli_parse(cmd, argc, argv, &o, &a);
    const char *system = a.system, *ids_out = a.ids_out;
    int64_t n_reply = a.n_reply;
    if (system && a.system_file) port_die("chat: give --system or --system-file, not both");
    uint64_t sys_len = system ? strlen(system) : a.system_file ? cli_text_size("--system-file", a.system_file) : 0;
    CliPlanItem file = {"prompt files", a.system_file ? arena_round(sys_len + 1) : 0};
    if (a.system_file) o.plan_extra = cli_plan_item, o.plan_extra_ctx = &file;
    o.max_text = chat_render_bound(2, 0, 0, MAX_MESSAGE + sys_len) + 16;
    o.max_out_ids = ids_out ? (uint64_t)n_reply : 0; /* a reply's ids, for --ids-out */

    static Engine e;
    cli_open_engine(&e, &o);
    Slot *s = engine_slot(&e, 0);
    cli_grammar_load(&e, s);
    size_t file_len;
    if (a.system_file) system = cli_text_read(&e.arena, "--system-file", a.system_file, sys_len, &file_len);
    if (ids_out) {
        char err[512];
        if (port_write_file(ids_out, "", 0, 0, err, sizeof err) != 0) port_die("--ids-out: %s", err);
    }
    cli_template_note(&e, "ChatML renders the conversation (--template NAME chooses another)");
    uint32_t shifts = a.prompt_cache ? cli_cache_load(&e, s, a.prompt_cache) : 0, first_cached = 0;
    port_interrupt_catch();

    int tty = port_stdin_is_tty(), turn = 0, thinking = e.opt.thinking;
    static char line[MAX_MESSAGE + 1];
    /* The end of the previous reply (e.g. <|im_end|> and a newline) still
     * has to be fed before the next user turn. */
    const char *reply_end = engine_turn_end(&e);
    for (;;) {
        if (tty) port_err("> ");
        size_t len;
        int r = port_read_line(line, sizeof line, &len);
        if (r == 0) break;
        if (r < 0) {
            port_err("message longer than %d bytes: ignored\n", MAX_MESSAGE);
            continue;
        }
        if (len && line[len - 1] == '\r') line[--len] = '\0';
        if (len == 0) continue;
        /* A NUL byte in a line is kept (the message is len bytes); commands
         * are compared as whole lines. */
        if (!strcmp(line, "/exit") || !strcmp(line, "/quit")) break;
        if (!strcmp(line, "/think") || !strcmp(line, "/no_think")) {
            thinking = line[1] == 't';
            port_err("thinking %s\n", thinking ? "on" : "off");
            continue;
        }
        if (!strcmp(line, "/reset")) {
            slot_reset(s);
            turn = 0;
            port_err("conversation reset\n");
            continue;
        }

        /* The new text of this turn. */
        size_t text_len = 0;
        if (engine_template_is_raw(&e)) {
            memcpy(e.text, line, len);
            text_len = len;
        } else {
            size_t prefix = turn ? strlen(reply_end) : 0;
            int64_t rendered = engine_render_user(&e, turn ? NULL : system, line, len, 1, turn > 0, thinking);
            if (rendered < 0) cli_engine_die(&e);
            size_t n = (size_t)rendered;
            if (prefix + n > e.tok.max_text) /* max_text leaves room for it: cannot happen */
                port_die("internal error: the chat text does not fit its plan");
            memmove(e.text + prefix, e.text, n);
            memcpy(e.text, reply_end, prefix);
            text_len = prefix + n;
        }
        /* The first turn starts the context: BOS when the model asks for it. */
        int n_new = engine_tokenize(&e, e.text, text_len, turn == 0);
        if (n_new < 0) port_die("chat: the message does not fit the planned token buffer");
        /* Room for the new tokens and one of the reply. */
        if ((uint64_t)n_new + 1 > e.n_ctx - (uint64_t)e.opt.keep) {
            port_err("message of %d tokens is too long for the context (%u, --keep %lld): ignored\n", n_new,
                     e.n_ctx, (long long)e.opt.keep);
            continue;
        }
        /* Every emitted token is fed, so the next turn continues it; the
         * reply's ids (s->out_ids, for --ids-out) are kept apart from the
         * history: the cache may shift under them. */
        ChatOutput out = {0};
        SlotRequest rq;
        slot_request_defaults(&e, &rq);
        rq.n_predict = n_reply;
        rq.feed_last = 1;
        rq.sink.text = on_text;
        rq.sink.token = on_token;
        rq.sink.ctx = &out;
        int room = turn == 0 ? slot_start(&e, s, e.ids, n_new, &rq) : slot_append(&e, s, e.ids, n_new, &rq);
        if (room < 0) cli_slot_die(s);
        if (room > 0) {
            port_err("context full (%u of %u tokens used): /reset to start again, or raise -c\n", s->seq.n_past,
                     e.n_ctx);
            continue;
        }
        if (ids_out) write_ids(ids_out, "prefill", e.ids, n_new);
        if (turn == 0) first_cached = s->n_cached;
        turn++;
        port_clear_interrupt();
        port_interrupt_busy(1);
        int stopped = 0;
        engine_run_slot(&e, s, interrupted, &stopped);
        port_interrupt_busy(0);
        if (s->stop == SLOT_STOP_ERROR) cli_slot_die(s);
        if (s->stop == SLOT_STOP_CONTEXT) port_err("\ncontext full (%u tokens): reply cut short\n", e.n_ctx);
        if (out.closed) break;
        /* the reply as the cache holds it: a token that did not fit is not */
        int n_gen = s->n_gen - (s->stop == SLOT_STOP_CONTEXT);
        double t_prefill = s->t_begin - s->t_start, t_gen = s->t_end - s->t_begin;
        port_out_bytes("\n", 1);
        if (stopped) {
            port_clear_interrupt();
            port_err("[interrupted]\n");
        }
        if (ids_out) write_ids(ids_out, "reply", s->out_ids, n_gen);
        char spec[96];
        port_err("[turn %d: prefilled %d new tokens in %.2f s, %d generated at %.1f tokens/s%s, %u in context]\n", turn,
                 (int)(s->n_prompt - s->n_cached), t_prefill, n_gen, t_gen > 0 ? n_gen / t_gen : 0.0,
                 cli_spec_stats(&e, s, spec, sizeof spec), s->seq.n_past);
    }
    if (a.prompt_cache) cli_cache_save(&e, s, a.prompt_cache, shifts, first_cached);
    engine_close(&e);
    return 0;
}
