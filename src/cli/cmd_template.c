/* cmd_template.c - `pith template MODEL` (its options: template_options
 * below): renders a
 * conversation (JSON, see chat.h) with the model's chat template - or the
 * one named by --template - and prints the text exactly, nothing added. An
 * unrecognized template gives a warning and the message contents
 * concatenated.
 *
 * One arena holds the GGUF index, the template text, the messages file and
 * what is read from it. The arena is planned before the file is read, so
 * the tables read from it and the rendered text get one region bounded
 * from the file size (chat_arena_bound); they are carved from it in their
 * measured sizes. */
#include <string.h>

#include "../../port/port.h"
#include "../arena/arena.h"
#include "../text/chat.h"
#include "cli.h"
#include "../gguf/gguf.h"

#define USAGE "see pith help template"
#define TEMPLATE_KEY "tokenizer.chat_template"
#define TEMPLATE_MAX ((uint64_t)1 << 20) /* longer templates are read cut (detection needs little) */

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

/* The first line of the template, cut, for the warning. */
static void warn_unknown(const char *model, const char *text)
{
    size_t n = 0;
    while (text[n] && text[n] != '\n' && n < 60) n++;
    port_err("pith: %s: warning: chat template not recognized (starts \"%.*s\"); "
             "rendering the message contents without a template\n",
             model, (int)n, text);
}

typedef struct {
    const char *file;
    int gen_prompt;
} TemplateArgs;

const CliOpt template_options[] = {
    OPT_STRING("--messages FILE\tJSON array of {role, content}", TemplateArgs, file),
    OPT_FLAG("--no-generation-prompt\tno open assistant turn", TemplateArgs, gen_prompt, 0),
    OPT_INCLUDE(cli_file_options),
    OPT_INCLUDE(cli_template_options),
    OPT_END,
};

int cmd_template(const CliCommand *cmd, int argc, char **argv)
{
    EngineOptions o;
    TemplateArgs a = {.gen_prompt = 1};
    cli_parse(cmd, argc, argv, &o, &a);
    const char *model = o.model_path, *file = a.file, *forced = o.template_name;
    int think = o.thinking, gen_prompt = a.gen_prompt, use_mmap = o.use_mmap; /* think -1: the template's default */
    if (!file) port_die("template: missing --messages FILE (" USAGE ")");
    int forced_kind = forced ? chat_template_by_name(forced) : -1; /* a name --template checked */

    /* the messages file: size first, read into the arena below */
    PortFile mf;
    char why[512];
    if (port_file_open(&mf, file, 0, why, sizeof why) != 0) port_die("%s", why);
    if (mf.size > CHAT_JSON_MAX_BYTES)
        port_die("%s: byte 0: larger than %zu bytes, the limit for a conversation", file, CHAT_JSON_MAX_BYTES);
    size_t len = (size_t)mf.size;

    static Gguf g;
    GgufError err;
    TemplateProbe probe = {0, 0};
    GgufScanCallbacks cb = {on_kv, NULL, &probe};
    if (gguf_open(&g, model, use_mmap, &cb, &err) != 0) port_die("%s", err.msg);
    uint64_t template_cap = (probe.len < TEMPLATE_MAX ? probe.len : TEMPLATE_MAX) + 1;

    Plan plan;
    plan_init(&plan);
    gguf_plan(&g, &plan);
    plan_add(&plan, "chat template", template_cap);
    plan_add(&plan, "messages file", (uint64_t)len + 1);
    plan_add(&plan, "conversation tables and text", chat_arena_bound(len));
    Arena arena;
    cli_map_plan(&arena, &plan, model);
    if (gguf_index(&g, &arena, &err) != 0) port_die("%s", err.msg);

    char *template_text = arena_take(&arena, template_cap);
    char *src = arena_take(&arena, (uint64_t)len + 1);
    if (!template_text || !src) port_die("%s: internal error: arena too small", model);
    if (probe.found && gguf_get_string(&g, TEMPLATE_KEY, template_text, (size_t)template_cap) < 0)
        port_die("%s: cannot read %s", model, TEMPLATE_KEY);
    if (len && port_file_read(&mf, 0, src, len) != 0) port_die("%s: read error", file);
    port_file_close(&mf);

    /* pass 1 measures, pass 2 fills exactly that much */
    ChatJsonSizes sizes;
    if (chat_json_read(src, len, file, NULL, &sizes, why, sizeof why) != 0) port_die("%s", why);
    ChatJsonOut out;
    if (chat_json_out_take(&out, &arena, &sizes) != 0) port_die("%s: internal error: arena too small", model);
    if (chat_json_read(src, len, file, &out, &sizes, why, sizeof why) != 0) port_die("%s", why);

    ChatTemplate kind = CHAT_TEMPLATE_RAW;
    if (forced) {
        kind = (ChatTemplate)forced_kind;
    } else if (!probe.found) {
        port_err("pith: %s: warning: no %s in the model; rendering the message contents without a template\n", model,
                 TEMPLATE_KEY);
    } else {
        kind = chat_template_detect(template_text);
        if (kind == CHAT_TEMPLATE_RAW) warn_unknown(model, template_text);
    }

    ChatOptions opt = {gen_prompt, think, out.tools, out.tools_len, (int)sizes.n_tools, 0};
    int64_t n = chat_render(kind, out.msgs, (int)sizes.n_messages, &opt, NULL, 0);
    if (n < 0)
        port_die("%s: the %s template refuses this conversation (as its Jinja text raises an error)", file,
                 chat_template_name(kind));
    char *text = arena_take(&arena, (uint64_t)n + 1);
    /* the plan bounds every template but Llama 3.1's tools, which it
     * indents by their depth */
    if (!text)
        port_die("%s: the rendered text takes %lld bytes, more than pith plans for a file of %llu bytes (deeply "
                 "nested tools?)",
                 file, (long long)n, (unsigned long long)len);
    if (chat_render(kind, out.msgs, (int)sizes.n_messages, &opt, text, (size_t)n + 1) != n)
        port_die("%s: internal error: rendering changed length", file);
    if (n > 0) port_out_bytes(text, (size_t)n);
    port_out_flush();
    gguf_close(&g);
    arena_unmap(&arena);
    return 0;
}
