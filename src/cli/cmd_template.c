/* cmd_template.c - `pith template MODEL` (its options: template_options
 * below): renders a conversation with the template that renders it in
 * every other command - the model's own Jinja template, or the one
 * --chat-template-file or --template names, or ChatML for a file that
 * carries none - and prints the text exactly, nothing added. The weights
 * are not loaded: only the GGUF index, the vocabulary (for bos_token and
 * eos_token) and the template.
 *
 * --messages FILE holds an array of messages, or an object with
 * "messages" (and "tools"); --tools FILE an array of tools; each --var
 * KEY=JSON one more variable of the template (as a request's
 * chat_template_kwargs). One arena, planned from the files' sizes. */
#include <stdio.h>
#include <string.h>

#include "../../port/port.h"
#include "../arena/arena.h"
#include "../gguf/gguf.h"
#include "../text/chat_request.h"
#include "../text/json.h"
#include "../text/tokenizer.h"
#include "cli.h"

#define USAGE "see pith help template"
#define TEMPLATE_KEY "tokenizer.chat_template"
#define TEMPLATE_MAX ((uint64_t)1 << 20)
#define MAX_VARS 32
#define TOKEN_TEXT_MAX 1024 /* bytes of bos_token's and eos_token's texts, NUL included */

typedef struct {
    const char *file, *tools_file;
    int gen_prompt;
    const char *vars[MAX_VARS];
    int n_vars;
} TemplateArgs;

static void add_var(void *base, const char *flag, const char *value)
{
    TemplateArgs *a = base;
    const char *eq = strchr(value, '=');
    if (!eq || eq == value) port_die("%s: '%s' is not KEY=JSON", flag, value);
    if (a->n_vars == MAX_VARS) port_die("%s: more than %d variables", flag, MAX_VARS);
    a->vars[a->n_vars++] = value;
}

const CliOpt template_options[] = {
    OPT_STRING("--messages FILE\tJSON array of messages (or {messages, tools})", TemplateArgs, file),
    OPT_STRING("--tools FILE\tJSON array of tools", TemplateArgs, tools_file),
    OPT_CALL("--var KEY=JSON\ta variable of the template (repeatable)", TemplateArgs, add_var, NULL),
    OPT_FLAG("--no-generation-prompt\tno open assistant turn", TemplateArgs, gen_prompt, 0),
    OPT_INCLUDE(cli_file_options),
    OPT_INCLUDE(cli_template_options),
    OPT_END,
};

typedef struct {
    int found;
    uint64_t len;
} TemplateProbe;

static int on_kv(void *ctx, Gguf *g, const GgufKV *kv, GgufError *err)
{
    (void)g;
    (void)err;
    TemplateProbe *t = ctx;
    if (kv->type == GGUF_TYPE_STRING && strcmp(kv->key, TEMPLATE_KEY) == 0) {
        t->found = 1;
        t->len = kv->arr_len;
    }
    return 0;
}

/* A file's whole text, into the arena (its size was planned). */
static char *read_into(Arena *arena, PortFile *f, const char *name)
{
    char *p = arena_take(arena, f->size + 1);
    if (!p) port_die("%s: internal error: arena too small", name);
    if (f->size && port_file_read(f, 0, p, (size_t)f->size) != 0) port_die("%s: read error", name);
    p[f->size] = '\0';
    port_file_close(f);
    return p;
}

static void open_sized(PortFile *f, const char *name, uint64_t max)
{
    char why[512];
    if (port_file_open(f, name, 0, why, sizeof why) != 0) port_die("%s", why);
    if (f->size > max) port_die("%s: byte 0: larger than %llu bytes, the limit", name, (unsigned long long)max);
}

/* A valid JSON text, or one line naming the file and the byte. */
static void check_json(const char *src, size_t len, const char *name)
{
    Json j;
    json_init(&j, src, len, name);
    if (json_skip(&j) < 0 || json_end(&j) < 0) port_die("%s", j.err);
}

/* The token's text for bos_token and eos_token ("" without one). */
static const char *token_text(Arena *arena, const Tokenizer *t, int32_t id)
{
    size_t n = 0;
    const char *p = id >= 0 ? tokenizer_piece(t, id, &n) : NULL;
    if (n >= TOKEN_TEXT_MAX) port_die("token %d's text is longer than %d bytes (bos_token, eos_token)", id, TOKEN_TEXT_MAX - 1);
    char *s = arena_take(arena, n + 1);
    if (!s) port_die("internal error: arena too small");
    if (p) memcpy(s, p, n);
    s[n] = '\0';
    return s;
}

int cmd_template(const CliCommand *cmd, int argc, char **argv)
{
    EngineOptions o;
    TemplateArgs a = {.gen_prompt = 1};
    cli_parse(cmd, argc, argv, &o, &a);
    const char *model = o.model_path;
    if (!a.file) port_die("template: missing --messages FILE (" USAGE ")");
    if (o.template_name && o.template_file) port_die("--chat-template-file: give either it or --template NAME");

    PortFile mf, tf, cf;
    open_sized(&mf, a.file, CHAT_JSON_MAX_BYTES);
    if (a.tools_file) open_sized(&tf, a.tools_file, CHAT_JSON_MAX_BYTES);
    if (o.template_file) open_sized(&cf, o.template_file, TEMPLATE_MAX);
    uint64_t vars_len = 2;
    for (int i = 0; i < a.n_vars; i++) vars_len += strlen(a.vars[i]) + 4;

    static Gguf g;
    GgufError err;
    TemplateProbe probe = {0, 0};
    GgufScanCallbacks cb = {on_kv, NULL, &probe};
    if (gguf_open(&g, model, o.use_mmap, &cb, &err) != 0) port_die("%s", err.msg);
    uint64_t tmpl_len = o.template_name ? 0 : o.template_file ? cf.size : probe.found ? probe.len : 0;
    if (tmpl_len > TEMPLATE_MAX)
        port_die("%s: %s: %llu bytes; pith reads chat templates of at most %llu bytes", model, TEMPLATE_KEY,
                 (unsigned long long)tmpl_len, (unsigned long long)TEMPLATE_MAX);
    uint64_t json_len = mf.size + (a.tools_file ? tf.size : 0) + vars_len;
    /* what a template prints: its own text and the conversation's, a few times over */
    uint64_t out_cap = 8 * json_len + 16 * tmpl_len + ((uint64_t)1 << 20);

    Plan plan;
    plan_init(&plan);
    gguf_plan(&g, &plan);
    if (tokenizer_plan(&g, 4096, &plan, &err) != 0) port_die("%s", err.msg);
    plan_add(&plan, "token texts", 2 * TOKEN_TEXT_MAX);
    plan_add(&plan, "chat template", tmpl_len + 1);
    plan_add(&plan, "chat template", jinja_parse_bound((size_t)tmpl_len));
    plan_add(&plan, "conversation files", mf.size + 1 + (a.tools_file ? tf.size + 1 : 0) + vars_len);
    plan_add(&plan, "rendered text", out_cap + 1);
    plan_add(&plan, "chat template work", chat_input_scratch_bound(json_len, out_cap + 1));
    Arena arena;
    cli_map_plan(&arena, &plan, model);
    if (gguf_index(&g, &arena, &err) != 0) port_die("%s", err.msg);
    static Tokenizer tok;
    if (tokenizer_load(&tok, &g, 4096, &arena, &err) != 0) port_die("%s", err.msg);

    /* the conversation */
    char *src = read_into(&arena, &mf, a.file);
    size_t src_len = (size_t)mf.size;
    check_json(src, src_len, a.file);
    ChatInput in;
    memset(&in, 0, sizeof in);
    in.add_generation_prompt = a.gen_prompt;
    in.enable_thinking = o.thinking;
    size_t at, n;
    while (src_len && strchr(" \t\r\n", src[0])) src++, src_len--;
    if (src_len && src[0] == '{') {
        if (json_member(src, src_len, "messages", &at, &n) != 1) port_die("%s: byte 0: no \"messages\" array", a.file);
        in.messages = src + at;
        in.messages_len = n;
        if (json_member(src, src_len, "tools", &at, &n) == 1) {
            in.tools = src + at;
            in.tools_len = n;
        }
    } else {
        in.messages = src;
        in.messages_len = src_len;
    }
    if (in.messages_len == 0 || in.messages[0] != '[') port_die("%s: byte 0: the messages must be a JSON array", a.file);
    if (a.tools_file) {
        char *tools = read_into(&arena, &tf, a.tools_file);
        check_json(tools, (size_t)tf.size, a.tools_file);
        while (*tools && strchr(" \t\r\n", *tools)) tools++;
        if (*tools != '[') port_die("%s: byte 0: the tools must be a JSON array", a.tools_file);
        in.tools = tools;
        in.tools_len = strlen(tools);
    }
    if (a.n_vars) {
        char *kw = arena_take(&arena, vars_len + 1);
        if (!kw) port_die("internal error: arena too small");
        size_t k = 0;
        kw[k++] = '{';
        for (int i = 0; i < a.n_vars; i++) {
            const char *eq = strchr(a.vars[i], '=');
            check_json(eq + 1, strlen(eq + 1), "--var");
            for (const char *c = a.vars[i]; c < eq; c++)
                if (*c == '"' || *c == '\\' || (unsigned char)*c < 32) port_die("--var: '%s': a bad key", a.vars[i]);
            k += (size_t)snprintf(kw + k, vars_len + 1 - k, "%s\"%.*s\":%s", i ? "," : "", (int)(eq - a.vars[i]),
                                  a.vars[i], eq + 1);
        }
        kw[k++] = '}';
        in.kwargs = kw;
        in.kwargs_len = k;
    }

    /* the template */
    ChatRenderer r;
    memset(&r, 0, sizeof r);
    r.bos = token_text(&arena, &tok, tokenizer_bos(&tok));
    r.eos = token_text(&arena, &tok, tokenizer_eos(&tok));
    r.now = port_template_seconds();
    r.builtin = CHAT_TEMPLATE_CHATML;
    r.name = o.template_file ? o.template_file : TEMPLATE_KEY;
    if (o.template_name) {
        r.builtin = (ChatTemplate)chat_template_by_name(o.template_name);
    } else if (!tmpl_len) {
        port_err("pith: %s: note: no %s in the model: ChatML renders (--template NAME chooses another)\n", model,
                 TEMPLATE_KEY);
    } else {
        char *text;
        if (o.template_file) {
            text = read_into(&arena, &cf, o.template_file);
        } else {
            text = arena_take(&arena, tmpl_len + 1);
            if (!text || gguf_get_string(&g, TEMPLATE_KEY, text, (size_t)tmpl_len + 1) != (int64_t)tmpl_len)
                port_die("%s: cannot read %s", model, TEMPLATE_KEY);
        }
        uint64_t cap = jinja_parse_bound((size_t)tmpl_len);
        void *mem = arena_take(&arena, cap);
        if (!mem) port_die("internal error: arena too small");
        char why[400];
        JinjaTemplate *t;
        if (jinja_parse(text, (size_t)tmpl_len, mem, (size_t)cap, &t, why, sizeof why) != PITH_OK)
            port_die("%s%s%s:%s", o.template_file ? "" : model, o.template_file ? "" : ": ", r.name, why);
        r.jinja = t;
    }

    char *out = arena_take(&arena, out_cap + 1);
    if (!out) port_die("internal error: arena too small");
    size_t len;
    char why[512];
    PithStatus st = chat_render_input(&r, &in, &arena, out, (size_t)out_cap + 1, &len, why, sizeof why);
    if (st != PITH_OK) {
        /* the template's errors name it; the conversation's name the file */
        if (!strncmp(why, TEMPLATE_KEY, strlen(TEMPLATE_KEY))) port_die("%s: %s", model, why);
        if (r.jinja && o.template_file && !strncmp(why, o.template_file, strlen(o.template_file))) port_die("%s", why);
        port_die("%s: %s", a.file, why);
    }
    if (len > 0) port_out_bytes(out, len);
    port_out_flush();
    gguf_close(&g);
    arena_unmap(&arena);
    return 0;
}
