/* pith chat MODEL [--system TEXT] [-n N] [--ids-out FILE] [session options]
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
#include "../session/session.h"

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
    Session *s;
    int closed;       /* stdout was closed */
    TokenStream ts;
} ChatOutput;

static int emit_token(void *ctx, int32_t id)
{
    ChatOutput *o = ctx;
    if (session_emit(o->s, &o->ts, id) < 0) o->closed = 1;
    return o->closed;
}

/* Ctrl-C stops the reply (and returns to the prompt). */
static int interrupted(void *ctx)
{
    (void)ctx;
    return port_interrupted();
}

typedef struct {
    const char *system, *ids_out;
    int64_t n_reply;
} ChatArgs;

const CliOpt chat_options[] = {
    OPT_STRING("--system TEXT\ta system turn first", ChatArgs, system),
    OPT_INT64("-n, --n-predict N\tlongest reply (2048)", ChatArgs, n_reply, 1, 1 << 24),
    OPT_STRING("--ids-out FILE\tids of every turn", ChatArgs, ids_out),
    OPT_INCLUDE(cli_context_options),
    OPT_INCLUDE(cli_model_options),
    OPT_INCLUDE(cli_sampling_options),
    OPT_INCLUDE(cli_grammar_options),
    OPT_INCLUDE(cli_generation_options),
    OPT_END,
};

int cmd_chat(const CliCommand *cmd, int argc, char **argv)
{
    SessionOptions o;
    ChatArgs a = {.n_reply = DEFAULT_REPLY};
    cli_parse(cmd, argc, argv, &o, &a);
    const char *system = a.system, *ids_out = a.ids_out;
    int64_t n_reply = a.n_reply;
    uint64_t sys_len = system ? strlen(system) : 0;
    o.max_text = chat_render_bound(2, 0, 0, MAX_MESSAGE + sys_len) + 16;
    o.max_out_ids = ids_out ? (uint64_t)n_reply : 0; /* a reply's ids, for --ids-out */

    static Session s;
    cli_open_session(&s, &o);
    cli_grammar_load(&s);
    if (ids_out) {
        char err[512];
        if (port_write_file(ids_out, "", 0, 0, err, sizeof err) != 0) port_die("--ids-out: %s", err);
    }
    if (s.tmpl == CHAT_TEMPLATE_RAW)
        cli_template_note(&s, "messages are fed as they are");
    port_interrupt_catch();

    int tty = port_stdin_is_tty(), turn = 0;
    static char line[MAX_MESSAGE + 1];
    /* The end of the previous reply (e.g. <|im_end|> and a newline) still
     * has to be fed before the next user turn. */
    const char *reply_end = chat_template_turn_end(s.tmpl);
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
            s.opt.thinking = line[1] == 't';
            port_err("thinking %s\n", s.opt.thinking ? "on" : "off");
            continue;
        }
        if (!strcmp(line, "/reset")) {
            seq_reset(&s.seq);
            sampler_reset(&s.sampler);
            turn = 0;
            port_err("conversation reset\n");
            continue;
        }

        /* The new text of this turn. */
        size_t text_len = 0;
        if (s.tmpl == CHAT_TEMPLATE_RAW) {
            memcpy(s.text, line, len);
            text_len = len;
        } else {
            size_t prefix = turn ? strlen(reply_end) : 0;
            int64_t rendered = session_render_user(&s, turn ? NULL : system, line, len, 1, turn > 0);
            if (rendered < 0) cli_session_die(&s);
            size_t n = (size_t)rendered;
            if (prefix + n > s.tok.max_text) /* max_text leaves 16 bytes for it: cannot happen */
                port_die("internal error: the chat text does not fit its plan");
            memmove(s.text + prefix, s.text, n);
            memcpy(s.text, reply_end, prefix);
            text_len = prefix + n;
        }
        /* The first turn starts the context: BOS when the model asks for it. */
        int n_new = turn == 0 ? tokenizer_encode_prompt(&s.tok, s.text, text_len, s.ids, s.max_ids)
                              : tokenizer_encode(&s.tok, s.text, text_len, 1, s.ids, s.max_ids);
        if (n_new < 0) port_die("chat: the message does not fit the planned token buffer");
        /* Room for the new tokens and one of the reply. */
        if ((uint64_t)n_new + 1 > s.mopt.n_ctx - (uint64_t)s.opt.keep) {
            port_err("message of %d tokens is too long for the context (%u, --keep %lld): ignored\n", n_new,
                     s.mopt.n_ctx, (long long)s.opt.keep);
            continue;
        }
        int room = session_make_room(&s, (uint32_t)n_new + 1);
        if (room < 0) cli_session_die(&s);
        if (room > 0) {
            port_err("context full (%u of %u tokens used): /reset to start again, or raise -c\n", s.seq.n_past,
                     s.mopt.n_ctx);
            continue;
        }
        port_clear_interrupt();
        port_interrupt_busy(1);
        double t0 = port_seconds();
        if (session_prefill(&s, s.ids, n_new) != 0) cli_session_die(&s);
        double t_prefill = port_seconds() - t0;
        if (ids_out) write_ids(ids_out, "prefill", s.ids, n_new);
        turn++;

        /* Every emitted token is fed, so the next turn continues it; the
         * reply's ids (s.out_ids, for --ids-out) are kept apart from the
         * history: the cache may shift under them. */
        ChatOutput out;
        memset(&out, 0, sizeof out);
        out.s = &s;
        token_stream_init(&out.ts);
        GenOptions g = {n_reply, 1, emit_token, interrupted, &out};
        GenResult gr;
        if (s.grammar_on) grammar_reset(&s.grammar); /* each reply is one sentence of the grammar */
        double tg0 = port_seconds();
        if (session_generate(&s, &g, &gr) != 0) cli_session_die(&s);
        if (gr.stop == GEN_CONTEXT_FULL) port_err("\ncontext full (%u tokens): reply cut short\n", s.mopt.n_ctx);
        int closed = out.closed, stopped = gr.stop == GEN_CALLER && !closed;
        int n_gen = gr.n_fed; /* the reply as the cache holds it */
        int32_t *reply = s.out_ids;
        TokenStream ts = out.ts;
        port_interrupt_busy(0);
        double t_gen = port_seconds() - tg0;
        if (closed) break;
        int n = token_stream_flush(&ts, s.piece, s.piece_cap);
        if (n > 0) port_out_bytes(s.piece, (size_t)n);
        port_out_bytes("\n", 1);
        if (stopped) {
            port_clear_interrupt();
            port_err("[interrupted]\n");
        }
        if (ids_out) write_ids(ids_out, "reply", reply, n_gen);
        port_err("[turn %d: prefilled %d new tokens in %.2f s, %d generated at %.1f tokens/s, %u in context]\n", turn,
                 n_new, t_prefill, n_gen, t_gen > 0 ? n_gen / t_gen : 0.0, s.seq.n_past);
    }
    session_close(&s);
    return 0;
}
