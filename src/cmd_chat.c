/* pith chat MODEL [--system TEXT] [-n N] [--ids-out FILE] [session options]
 *
 * Interactive multi-turn chat; with stdin from a pipe, one message per line
 * (so agents can drive it). The KV cache keeps every earlier turn: each turn
 * prefills only its new tokens - the end of the last reply and the new user
 * turn - and streams the reply until <|im_end|>/EOS.
 * Commands: /think, /no_think (thinking mode for the next turns), /reset
 * (forget the conversation), /exit. */
#include <stdio.h>
#include <string.h>

#include "../port/port.h"
#include "cli.h"
#include "forward.h"
#include "session.h"

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

int cmd_chat(int argc, char **argv)
{
    SessionOptions o;
    session_defaults(&o);
    const char *system = NULL, *ids_out = NULL;
    int64_t n_reply = DEFAULT_REPLY;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (session_parse_option(&o, argc, argv, &i)) continue;
        if (!strcmp(a, "--system")) system = cli_value(argc, argv, &i);
        else if (!strcmp(a, "-n") || !strcmp(a, "--n-predict")) n_reply = cli_int(a, cli_value(argc, argv, &i), 1, 1 << 24);
        else if (!strcmp(a, "--ids-out")) ids_out = cli_value(argc, argv, &i);
        else if (a[0] == '-' && a[1] != '\0') port_die("%s: unknown option for chat (see pith --help)", a);
        else if (!o.model_path) o.model_path = a;
        else port_die("%s: unexpected argument (one model only)", a);
    }
    if (!o.model_path) port_die("chat: missing MODEL (usage: pith chat MODEL)");
    uint64_t sys_len = system ? strlen(system) : 0;
    o.max_text = chat_render_bound(2, 0, 0, MAX_MESSAGE + sys_len) + 16;
    if (o.max_text < (uint64_t)n_reply) o.max_text = (uint64_t)n_reply;

    static Session s;
    session_open(&s, &o);
    if (ids_out) {
        char err[512];
        if (port_write_file(ids_out, "", 0, 0, err, sizeof err) != 0) port_die("--ids-out: %s", err);
    }
    if (s.tmpl == CHAT_TEMPLATE_RAW)
        port_err("warning: chat template '%s' is not recognised: messages are fed as they are\n", s.tmpl_name);

    int tty = port_stdin_is_tty(), turn = 0;
    static char line[MAX_MESSAGE + 1];
    /* The end of the previous reply (<|im_end|> and a newline) still has
     * to be fed before the next user turn. */
    const char *reply_end = "<|im_end|>\n";
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
        if (!strcmp(line, "/exit") || !strcmp(line, "/quit")) break;
        if (!strcmp(line, "/think") || !strcmp(line, "/no_think")) {
            s.opt.thinking = line[1] == 't';
            port_err("thinking %s\n", s.opt.thinking ? "on" : "off");
            continue;
        }
        if (!strcmp(line, "/reset")) {
            model_reset_cache(&s.model);
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
            size_t n = session_render_user(&s, turn ? NULL : system, line, 1);
            memmove(s.text + prefix, s.text, n);
            memcpy(s.text, reply_end, prefix);
            text_len = prefix + n;
        }
        int off = (turn == 0 && s.tmpl == CHAT_TEMPLATE_RAW && s.tok.add_bos && s.tok.bos >= 0) ? 1 : 0;
        int n_new = tokenizer_encode(&s.tok, s.text, text_len, 1, s.ids + off, s.max_ids - off);
        if (n_new < 0) port_die("chat: the message does not fit the planned token buffer");
        if (off) s.ids[0] = s.tok.bos;
        n_new += off;
        if ((uint64_t)s.model.n_past + (uint64_t)n_new >= s.mopt.n_ctx) {
            port_err("context full (%u of %u tokens used): /reset to start again, or raise -c\n", s.model.n_past,
                     s.mopt.n_ctx);
            continue;
        }
        double t0 = port_seconds();
        session_prefill(&s, s.ids, n_new);
        double t_prefill = port_seconds() - t0;
        if (ids_out) write_ids(ids_out, "prefill", s.ids, n_new);
        turn++;

        TokenStream ts;
        token_stream_init(&ts);
        int n_gen = 0, closed = 0;
        uint32_t reply_start = s.model.n_past;
        double tg0 = port_seconds();
        while (n_gen < n_reply) {
            int32_t id = session_sample(&s);
            if (tokenizer_is_eog(&s.tok, id)) break;
            n_gen++;
            if (session_emit(&s, &ts, id) < 0) closed = 1;
            if (closed) break;
            if (s.model.n_past + 1 >= s.mopt.n_ctx) {
                port_err("\ncontext full (%u tokens): reply cut short\n", s.mopt.n_ctx);
                break;
            }
            s.history[s.model.n_past] = id;
            if (forward_batch(&s.model, &id, 1, s.model.n_past, 0) != 0) port_die("%s: %s", o.model_path, s.model.err);
        }
        double t_gen = port_seconds() - tg0;
        if (closed) break;
        int n = token_stream_flush(&ts, s.piece, s.piece_cap);
        if (n > 0) port_out_bytes(s.piece, (size_t)n);
        port_out_bytes("\n", 1);
        if (ids_out) write_ids(ids_out, "reply", s.history + reply_start, (int)(s.model.n_past - reply_start));
        port_err("[turn %d: prefilled %d new tokens in %.2f s, %d generated at %.1f tokens/s, %u in context]\n", turn,
                 n_new, t_prefill, n_gen, t_gen > 0 ? n_gen / t_gen : 0.0, s.model.n_past);
    }
    session_close(&s);
    return 0;
}
