/* The engine: the one open path of every command, the plan, and what the
 * commands ask of a loaded model (engine.h). The slots and the step are in
 * slot.c. */
#include "engine.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "../../port/port.h"
#include "../kernels/kernels.h"
#include "../text/json.h"
#include "../text/json_schema.h"

#define DEFAULT_CTX 4096
#define PIECE_CAP (64 * 1024)        /* longest token text streamed at once */
#define TEMPLATE_KEY "tokenizer.chat_template"
#define TEMPLATE_MAX ((uint64_t)1 << 20) /* longest chat template read */
/* a slot's tool-call splitter: the block being read, and the table of
 * which parameters are strings */
#define TOOL_SPLIT_BYTES (TOOL_BLOCK_CAP + TOOL_KINDS_CAP)

/* Fails with a status and a one-line reason in e->err. */
static int fail(Engine *e, PithStatus status, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(Engine *e, PithStatus status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->err, sizeof e->err, fmt, ap);
    va_end(ap);
    e->status = status;
    return -1;
}

/* A failure a lower layer described (the GGUF reader, the model, the
 * tokenizer): its kind, a malformed file unless it said otherwise. */
static int fail_from(Engine *e, const GgufError *err)
{
    return fail(e, err->status != PITH_OK ? err->status : PITH_BAD_INPUT, "%s", err->msg);
}

void engine_defaults(EngineOptions *o)
{
    memset(o, 0, sizeof *o);
    o->use_mmap = 1;
    o->kv_type = KV_F16;
    o->batch = ENGINE_DEFAULT_BATCH;
    o->thinking = -1; /* the template's default, once it is known */
    o->seed = -1;
    o->load_asked = -1;
    o->draft_max = ENGINE_DEFAULT_DRAFT_MAX;
    o->spec_type = ENGINE_SPEC_DEFAULT;
    sampler_defaults(1, &o->sampling);
}

/* Qwen3's recommended settings depend on the thinking mode; what the user
 * set stays. */
static void apply_sampling_defaults(EngineOptions *o)
{
    SamplerParams d;
    sampler_defaults(o->thinking, &d);
    SamplerParams *sp = &o->sampling;
    if (!o->sampling_set[ENGINE_SET_TEMP]) sp->temperature = d.temperature;
    if (!o->sampling_set[ENGINE_SET_TOP_K]) sp->top_k = d.top_k;
    if (!o->sampling_set[ENGINE_SET_TOP_P]) sp->top_p = d.top_p;
    if (!o->sampling_set[ENGINE_SET_MIN_P]) sp->min_p = d.min_p;
    if (o->seed >= 0) {
        sp->seed = (uint64_t)o->seed;
    } else {
        double t = port_seconds();
        uint64_t bits;
        memcpy(&bits, &t, sizeof bits);
        sp->seed = bits ^ (bits >> 29);
    }
}

/* Whether the active kernels read some matrix type of this model faster
 * repacked (kernels.h: kern_pack_wanted; on the Pi 5, Q8_0 and Q4_0), which
 * the loader does in read mode only: the planner then reads before it maps
 * (not on x86: KernelSet.map_first). */
static int weights_want_read(const ModelConfig *c)
{
    if (kern_active()->map_first) return 0;
    for (uint32_t t = 0; t < 64; t++)
        if ((c->matrix_types >> t & 1) && kern_pack_wanted(t, KERN_PACK_ROWS)) return 1;
    return 0;
}

/* engine_render_user's JSON of a system and a user message (escaped: a
 * prompt whose escapes take more is refused) and the renderer's scratch. */
static uint64_t chat_json_cap(uint64_t max_text)
{
    return 2 * max_text + 256;
}

static uint64_t chat_scratch_bytes(uint64_t max_text)
{
    /* the JSON, the text before a continuation, one render at a time */
    return chat_json_cap(max_text) + max_text + 1 + chat_jinja_scratch_bound(chat_json_cap(max_text), max_text + 1) +
           4 * ARENA_ALIGN;
}

/* The length of the Jinja template that will render (e->template_bytes;
 * 0 when a built-in one does), before anything is planned. */
static int template_length(Engine *e)
{
    const EngineOptions *o = &e->opt;
    e->template_bytes = 0;
    if (o->template_name) return 0;
    const char *what = TEMPLATE_KEY;
    if (o->template_file) {
        PortFile f;
        char why[512];
        if (port_file_open(&f, o->template_file, 0, why, sizeof why) != 0) return fail(e, PITH_IO, "%s", why);
        e->template_bytes = f.size;
        port_file_close(&f);
        what = o->template_file;
        if (!e->template_bytes) return fail(e, PITH_BAD_INPUT, "%s: byte 0: the template is empty", what);
    } else {
        e->template_bytes = e->cfg.chat_template_bytes;
    }
    if (e->template_bytes > TEMPLATE_MAX)
        return fail(e, PITH_UNSUPPORTED, "%s: %s: %llu bytes; pith reads chat templates of at most %llu bytes",
                    o->model_path, what, (unsigned long long)e->template_bytes, (unsigned long long)TEMPLATE_MAX);
    return 0;
}

/* What does not depend on the load mode or the context. */
static int plan_base(Engine *e, uint64_t max_text, Plan *base)
{
    const EngineOptions *o = &e->opt;
    GgufError err = {0};
    plan_init(base);
    gguf_plan(&e->gguf, base);
    if (!o->model_only) {
        if (tokenizer_plan(&e->gguf, max_text, base, &err) != 0) return fail_from(e, &err);
        sampler_plan((int)e->cfg.n_vocab, base);
        plan_add(base, "text and token scratch", max_text + 1);
        plan_add(base, "text and token scratch", (uint64_t)e->max_ids * sizeof(int32_t));
        plan_add(base, "text and token scratch", PIECE_CAP);
        if (o->trace_path) plan_add(base, "trace line", ENGINE_TRACE_LINE_CAP);
        for (uint32_t i = 0; o->max_out_ids && i < e->n_slots; i++)
            plan_add(base, "generated ids", plan_mul(base, o->max_out_ids, sizeof(int32_t)));
        for (uint32_t i = 1; i < e->n_slots; i++)
            plan_add(base, "sampler history, slots", SAMPLER_MAX_HISTORY * sizeof(int32_t));
        if (e->template_bytes) {
            plan_add(base, "chat template", e->template_bytes + 1);
            plan_add(base, "chat template", jinja_parse_bound((size_t)e->template_bytes));
            plan_add(base, "chat template work", chat_scratch_bytes(max_text));
        }
        if (o->grammar) {
            grammar_vocab_plan((int32_t)e->cfg.n_vocab, base);
            plan_add(base, "grammar state", grammar_bytes(ENGINE_GRAMMAR_PIECE, (int32_t)e->cfg.n_vocab));
            for (uint32_t i = 1; i < e->n_slots; i++)
                plan_add(base, "grammar state, slots", grammar_bytes(ENGINE_GRAMMAR_PIECE, (int32_t)e->cfg.n_vocab));
            plan_add(base, "grammar text", 2 * arena_round(ENGINE_GRAMMAR_TEXT + 1));
        }
        for (uint32_t i = 0; o->tool_calls && i < e->n_slots; i++)
            plan_add(base, e->n_slots > 1 ? "tool-call splitters, one per slot" : "tool-call splitter", TOOL_SPLIT_BYTES);
    }
    if (o->plan_extra) o->plan_extra(o->plan_extra_ctx, base);
    return 0;
}

/* The same with the file mapped, before mapping it: without the buffer the
 * tokenizer reads its tables into (tokenizer_plan), as it then reads them
 * in place. */
static void plan_base_mapped_estimate(const Plan *base, Plan *out)
{
    plan_init(out);
    out->overflow = base->overflow;
    for (int i = 0; i < base->n_items; i++)
        if (strcmp(base->items[i].what, "tokenizer file read") != 0) plan_add(out, base->items[i].what, base->items[i].bytes);
}

/* The planner's view of an engine: everything but the model's share is
 * the same for every context, and for every load mode but for what the
 * tokenizer copies when the file is not mapped. */
typedef struct {
    Engine *e;
    const Plan *base;        /* planned with the file not mapped */
    const Plan *base_mapped; /* with the file mapped */
} PlanCtx;

/* What a slot's verification step may have to undo (seq_undo_bytes): at
 * most --draft-max drafts and the waiting token. */
static uint64_t spec_undo_bytes(const Engine *e, const ModelOptions *mo)
{
    if (e->opt.spec_type == ENGINE_SPEC_NONE || e->opt.model_only) return 0;
    uint32_t n = (uint32_t)e->opt.draft_max + 1;
    return seq_undo_bytes(&e->cfg, mo, n < mo->batch ? n : mo->batch);
}

static void engine_plan(void *ctx, LoadMode load, uint32_t n_ctx, uint64_t stream_window, Plan *p)
{
    const PlanCtx *pc = ctx;
    const Engine *e = pc->e;
    *p = load == LOAD_MMAP ? *pc->base_mapped : *pc->base;
    ModelOptions mo = e->mopt;
    mo.n_ctx = n_ctx;
    mo.stream_window = stream_window;
    mo.batch = (uint32_t)(e->opt.batch < n_ctx ? e->opt.batch : n_ctx);
    mo.load = load;
    ModelConfig cfg = e->cfg;
    cfg.mapped = load == LOAD_MMAP; /* planned before the file is mapped */
    forward_plan(&cfg, &mo, p);
    draft_plan(e, &mo, p);
    if (!e->opt.model_only) /* one piece per slot, as carved (each rounded) */
        for (uint32_t i = 0; i < e->n_slots; i++) plan_add(p, "token history", plan_mul(p, n_ctx, sizeof(int32_t)));
    /* a reply of a slot is shorter than its context (serve never shifts) */
    for (uint32_t i = 0; e->opt.token_probs && i < e->n_slots; i++)
        plan_add(p, "token probabilities (logprobs)", plan_mul(p, n_ctx, sizeof(SamplerLogprobs)));
    for (uint32_t i = 0; spec_undo_bytes(e, &mo) && i < e->n_slots; i++)
        plan_add(p, "speculative undo (rings, recurrent state)", spec_undo_bytes(e, &mo));
}

/* The planner's answer (mem_decide) made final: a refusal is one line in
 * e->err; otherwise the note for stderr, if any. */
static int decided(Engine *e, int rc)
{
    if (rc != 0) {
        e->refused = 1;
        e->status = PITH_NO_MEMORY;
        mem_refusal(&e->budget, &e->req, &e->mem, e->err, sizeof e->err);
        size_t len = strlen(e->err);
        uint64_t kv = 0;
        for (int i = 0; i < e->mem.plan.n_items; i++)
            if (!strncmp(e->mem.plan.items[i].what, "kv cache", 8)) kv += e->mem.plan.items[i].bytes;
        if (e->n_slots > 1 && len < sizeof e->err)
            snprintf(e->err + len, sizeof e->err - len,
                     "; --slots %u: %u KV caches of %.2f MiB at a context of %u (fewer slots, a smaller -c or a larger "
                     "--mem)", e->n_slots, e->n_slots, (double)kv / e->n_slots / 1048576.0, e->mem.n_ctx);
        return -1;
    }
    if (!e->opt.show_plan) mem_notice(&e->budget, &e->req, &e->mem, e->notice, sizeof e->notice);
    return 0;
}

/* Carves what each slot holds besides its KV cache: the ids in its cache,
 * its sampler's history, its grammar state, its generated ids, its
 * tool-call splitter. */
static int load_slots_text(Engine *e)
{
    const EngineOptions *o = &e->opt;
    for (uint32_t i = 0; i < e->n_slots; i++) {
        Slot *s = &e->slots[i];
        s->sampler = e->sampler;
        if (i > 0) s->sampler.history = arena_take(&e->arena, SAMPLER_MAX_HISTORY * sizeof(int32_t));
        s->history = arena_take(&e->arena, (uint64_t)e->n_ctx * sizeof(int32_t));
        if (!s->history || !s->sampler.history) return fail(e, PITH_INTERNAL, "internal error: the memory plan is too small");
        if (o->token_probs && !(s->probs = arena_take(&e->arena, (uint64_t)e->n_ctx * sizeof(SamplerLogprobs))))
            return fail(e, PITH_INTERNAL, "internal error: the memory plan is too small");
        if (o->max_out_ids && !(s->out_ids = arena_take(&e->arena, o->max_out_ids * sizeof(int32_t))))
            return fail(e, PITH_INTERNAL, "internal error: the memory plan is too small");
        if (o->grammar && grammar_init(&s->grammar, &e->arena, ENGINE_GRAMMAR_PIECE, (int32_t)e->cfg.n_vocab) != 0)
            return fail(e, PITH_INTERNAL, "internal error: the slots' grammars do not fit their plan");
        if (o->tool_calls && !(s->split_buf = arena_take(&e->arena, TOOL_SPLIT_BYTES)))
            return fail(e, PITH_INTERNAL, "internal error: the tool-call splitters do not fit their plan");
        /* the undo a speculative step needs (none without rings or a recurrent state) */
        uint64_t undo = spec_undo_bytes(e, &e->mopt);
        if (undo && !(s->spec_undo = arena_take(&e->arena, undo)))
            return fail(e, PITH_INTERNAL, "internal error: the speculative undo does not fit its plan");
    }
    return 0;
}

/* A token's text, NUL-terminated, for bos_token and eos_token. */
static int token_text(Engine *e, int32_t id, char *out, size_t cap)
{
    size_t n = 0;
    const char *p = id >= 0 ? tokenizer_piece(&e->tok, id, &n) : NULL;
    if (!p) n = 0;
    if (n >= cap)
        return fail(e, PITH_UNSUPPORTED, "%s: token %d's text is longer than %zu bytes (bos_token, eos_token)",
                    e->opt.model_path, id, cap - 1);
    memcpy(out, p ? p : "", n);
    out[n] = '\0';
    return 0;
}

/* Renders [user, assistant] with the placeholders below, [user] with a
 * generation prompt and [system, user], to learn what the chat command and
 * the server need from a Jinja template: what closes an assistant turn,
 * whether the template thinks unless told not to (its generation prompt
 * does not end with a closed, empty think block), and whether it takes a
 * system message. A template that refuses the first two keeps "" and 1. */
#define PROBE_USER "pith-probe-user"
#define PROBE_REPLY "pith-probe-reply"
static void probe_template(Engine *e)
{
    static const char pair[] = "[{\"role\":\"user\",\"content\":\"" PROBE_USER "\"},"
                               "{\"role\":\"assistant\",\"content\":\"" PROBE_REPLY "\"}]";
    static const char one[] = "[{\"role\":\"user\",\"content\":\"" PROBE_USER "\"}]";
    static const char with_system[] = "[{\"role\":\"system\",\"content\":\"S\"},{\"role\":\"user\",\"content\":\"" PROBE_USER "\"}]";
    char err[256];
    size_t len;
    Arena sa;
    e->jinja_thinks = 1;
    ChatInput in = {pair, sizeof pair - 1, NULL, 0, NULL, 0, 0, -1, 0, 0};
    arena_init(&sa, e->chat_scratch, e->chat_scratch_cap);
    if (chat_render_input(&e->chat, &in, &sa, e->text, e->tok.max_text + 1, &len, err, sizeof err) == PITH_OK) {
        const char *r = strstr(e->text, PROBE_REPLY);
        if (r) snprintf(e->turn_end, sizeof e->turn_end, "%s", r + strlen(PROBE_REPLY));
    }
    ChatInput gen = {one, sizeof one - 1, NULL, 0, NULL, 0, 1, -1, 0, 0};
    arena_init(&sa, e->chat_scratch, e->chat_scratch_cap);
    if (chat_render_input(&e->chat, &gen, &sa, e->text, e->tok.max_text + 1, &len, err, sizeof err) == PITH_OK) {
        while (len && strchr(" \n", e->text[len - 1])) len--;
        e->jinja_thinks = !(len >= 8 && !memcmp(e->text + len - 8, "</think>", 8));
    }
    /* a template that refuses a system message (Gemma 2's) */
    ChatInput sys = {with_system, sizeof with_system - 1, NULL, 0, NULL, 0, 1, -1, 0, 0};
    arena_init(&sa, e->chat_scratch, e->chat_scratch_cap);
    e->no_system = chat_render_input(&e->chat, &sys, &sa, e->text, e->tok.max_text + 1, &len, err, sizeof err) != PITH_OK;
}

/* The template that renders conversations: --template NAME's built-in
 * one, else the Jinja text of --chat-template-file or of the model
 * (parsed here once), else ChatML. */
static int load_template(Engine *e, uint64_t max_text)
{
    const EngineOptions *o = &e->opt;
    if (token_text(e, tokenizer_bos(&e->tok), e->bos_text, sizeof e->bos_text) != 0 ||
        token_text(e, tokenizer_eos(&e->tok), e->eos_text, sizeof e->eos_text) != 0)
        return -1;
    ChatRenderer *r = &e->chat;
    r->bos = e->bos_text;
    r->eos = e->eos_text;
    r->builtin = e->tmpl = CHAT_TEMPLATE_CHATML;
    r->name = o->template_file ? o->template_file : TEMPLATE_KEY;
    if (o->template_name) {
        int t = chat_template_by_name(o->template_name);
        if (t < 0)
            return fail(e, PITH_BAD_INPUT, "--template: '%s' is not a template pith knows (%s)", o->template_name,
                        chat_template_names());
        r->builtin = e->tmpl = (ChatTemplate)t;
        e->tool_format = tool_format_of_builtin(e->tmpl);
        return 0;
    }
    e->tool_format = tool_format_of_builtin(e->tmpl);
    if (!e->template_bytes) {
        e->no_template = 1;
        return 0;
    }
    size_t n = (size_t)e->template_bytes;
    char *text = arena_take(&e->arena, n + 1);
    uint64_t parse_cap = jinja_parse_bound(n);
    void *parsed = arena_take(&e->arena, parse_cap);
    e->chat_scratch_cap = chat_scratch_bytes(max_text);
    e->chat_scratch = arena_take(&e->arena, e->chat_scratch_cap);
    if (!text || !parsed || !e->chat_scratch) return fail(e, PITH_INTERNAL, "internal error: the chat template does not fit its plan");
    if (o->template_file) {
        PortFile f;
        char why[512];
        if (port_file_open(&f, o->template_file, 0, why, sizeof why) != 0) return fail(e, PITH_IO, "%s", why);
        int rc = f.size == n ? port_file_read(&f, 0, text, n) : -1;
        port_file_close(&f);
        if (rc != 0) return fail(e, PITH_IO, "%s: read error (or the file changed)", o->template_file);
    } else if (gguf_get_string(&e->gguf, TEMPLATE_KEY, text, n + 1) != (int64_t)n) {
        return fail(e, PITH_BAD_INPUT, "%s: %s cannot be read", o->model_path, TEMPLATE_KEY);
    }
    text[n] = '\0';
    char why[400];
    PithStatus st = jinja_parse(text, n, parsed, (size_t)parse_cap, &e->jinja, why, sizeof why);
    if (st != PITH_OK)
        return fail(e, st, "%s%s%s:%s (--template NAME renders with a built-in template instead)",
                    o->template_file ? "" : o->model_path, o->template_file ? "" : ": ", r->name, why);
    r->jinja = e->jinja;
    r->now = port_template_seconds();
    e->tool_format = tool_format_detect(text);
    probe_template(e);
    return 0;
}

/* Carves what the plan holds besides the model: the tokenizer, sampler,
 * scratch, the chat template and the slots' own parts. */
static int load_text_side(Engine *e, uint64_t max_text)
{
    const EngineOptions *o = &e->opt;
    GgufError err = {0};
    if (tokenizer_load(&e->tok, &e->gguf, max_text, &e->arena, &err) != 0) return fail_from(e, &err);
    if (tokenizer_n_vocab(&e->tok) != (int32_t)e->cfg.n_vocab)
        return fail(e, PITH_BAD_INPUT, "%s: the vocabulary has %d tokens but token_embd.weight has %u rows", o->model_path,
                    tokenizer_n_vocab(&e->tok), e->cfg.n_vocab);
    if (sampler_init(&e->sampler, &e->arena, (int)e->cfg.n_vocab, &e->opt.sampling) != 0)
        return fail(e, PITH_INTERNAL, "internal error: the sampler does not fit its plan");
    e->text = arena_take(&e->arena, max_text + 1);
    e->ids = arena_take(&e->arena, (uint64_t)e->max_ids * sizeof(int32_t));
    e->piece = arena_take(&e->arena, PIECE_CAP);
    if (o->trace_path) e->trace_line = arena_take(&e->arena, ENGINE_TRACE_LINE_CAP);
    if (o->grammar) {
        e->grammar_src = arena_take(&e->arena, ENGINE_GRAMMAR_TEXT + 1);
        e->grammar_text = arena_take(&e->arena, ENGINE_GRAMMAR_TEXT + 1);
        if (!e->grammar_src || !e->grammar_text || grammar_vocab_build(&e->gvocab, &e->arena, &e->tok) != 0)
            return fail(e, PITH_INTERNAL, "internal error: the grammar does not fit its plan");
    }
    if (!e->text || !e->ids || !e->piece || (o->trace_path && !e->trace_line))
        return fail(e, PITH_INTERNAL, "internal error: the memory plan is too small");
    if (token_stream_out_max(&e->tok) > PIECE_CAP)
        return fail(e, PITH_UNSUPPORTED, "%s: a token of the vocabulary is longer than %d bytes", o->model_path, PIECE_CAP);
    if (load_template(e, max_text) != 0) return -1;
    if (e->opt.thinking < 0) {
        /* a template that thinks only when asked: its sampling defaults follow */
        e->opt.thinking = e->jinja ? e->jinja_thinks : chat_template_thinks(e->tmpl);
        apply_sampling_defaults(&e->opt);
        e->sampler.params = e->opt.sampling;
        sampler_reset(&e->sampler);
    }
    if (load_slots_text(e) != 0) return -1;
    if (o->trace_path) {
        char werr[512];
        if (port_write_file(o->trace_path, "", 0, 0, werr, sizeof werr) != 0) return fail(e, PITH_IO, "--trace: %s", werr);
    }
    return 0;
}

int engine_open(Engine *e, const EngineOptions *o)
{
    GgufError err = {0};
    double t0 = port_seconds();
    memset(e, 0, sizeof *e);
    e->opt = *o;
    e->n_slots = o->slots ? o->slots : 1;
    e->thinking_given = o->thinking >= 0;
    if (e->n_slots > ENGINE_MAX_SLOTS) return fail(e, PITH_BAD_INPUT, "--slots: at most %d", ENGINE_MAX_SLOTS);
    for (uint32_t i = 0; i < e->n_slots; i++) e->slots[i].index = i;
    if (o->kernels != ENGINE_KERNELS_BEST) kern_select(o->kernels);
    apply_sampling_defaults(&e->opt);
    char why[256];
    if (!o->model_only && sampler_params_check(&e->opt.sampling, why, sizeof why) != 0)
        return fail(e, PITH_BAD_INPUT, "%s", why);
    if (o->load_asked == LOAD_MMAP && !o->use_mmap) return fail(e, PITH_BAD_INPUT, "--load mmap: contradicts --no-mmap");
    if (e->opt.threads == 0) e->opt.threads = port_cpu_count();
    port_set_threads((int)e->opt.threads);

    /* The file is opened once, without mapping: the header is read with
     * pread, its configuration in one walk, and the file is mapped
     * afterwards only if the planner chooses mmap. */
    if (gguf_open(&e->gguf, o->model_path, 0, NULL, &err) != 0) return fail_from(e, &err);
    if (model_read_config(&e->gguf, &e->cfg, &err) != 0) return fail_from(e, &err);
    /* speculative decoding: draft-simple when a draft model is given */
    if (e->opt.spec_type == ENGINE_SPEC_DEFAULT || o->model_only)
        e->opt.spec_type = o->draft_path && !o->model_only ? ENGINE_SPEC_DRAFT_SIMPLE : ENGINE_SPEC_NONE;
    if ((e->opt.spec_type == ENGINE_SPEC_DRAFT_SIMPLE) != (o->draft_path && !o->model_only))
        return fail(e, PITH_BAD_INPUT, "%s", o->draft_path ? "-md: only --spec-type draft-simple uses a draft model"
                                                           : "--spec-type draft-simple: give the draft model (-md FILE)");
    if (e->opt.spec_type == ENGINE_SPEC_DRAFT_SIMPLE && draft_open(e) != 0) return -1;
    if (o->min_ctx_what && o->min_ctx > e->cfg.n_ctx_train)
        return fail(e, PITH_BAD_INPUT, "%s are more than the model's context of %u", o->min_ctx_what, e->cfg.n_ctx_train);
    if (o->min_ctx_what && o->n_ctx && o->min_ctx > o->n_ctx)
        return fail(e, PITH_BAD_INPUT, "%s do not fit a context of %u (-c)", o->min_ctx_what, (uint32_t)o->n_ctx);

    ModelOptions *mo = &e->mopt;
    uint32_t default_ctx = o->default_ctx ? o->default_ctx : DEFAULT_CTX;
    mo->n_ctx = (uint32_t)(o->n_ctx ? o->n_ctx : (e->cfg.n_ctx_train < default_ctx ? e->cfg.n_ctx_train : default_ctx));
    mo->kv_type = o->kv_type;
    mo->batch = (uint32_t)(o->batch < mo->n_ctx ? o->batch : mo->n_ctx);
    mo->all_logits = o->all_logits;
    mo->stream_window = o->stream_window;
    mo->stream_keep_cache = o->stream_keep_cache;
    mo->n_seq = e->n_slots;
    if (o->spec_type != ENGINE_SPEC_NONE && !o->model_only) /* rows for a step's drafts, every slot's */
        mo->spec_rows = e->n_slots * (uint32_t)(o->draft_max + 1);
    if (model_check_options(&e->cfg, mo, &err) != 0) return fail_from(e, &err);

    uint64_t max_text = o->max_text ? o->max_text : 4096;
    if (!o->model_only && template_length(e) != 0) return -1;
    /* what a model's own template writes besides the messages (its own
     * text, for each turn of a short conversation, and a turn end) */
    if (e->template_bytes) max_text += 2 * e->template_bytes + 1024 + sizeof e->turn_end;
    e->max_ids = (int)(3 * max_text + 16);
    e->piece_cap = PIECE_CAP;

    /* The plan, made once: the mapped variant is estimated before mapping. */
    Plan base, base_mapped;
    if (plan_base(e, max_text, &base) != 0) return -1;
    plan_base_mapped_estimate(&base, &base_mapped);
    mem_budget_init(&e->budget, o->mem);
    PlanCtx pc = {e, &base, &base_mapped};
    MemRequest *req = &e->req;
    req->plan = engine_plan;
    req->ctx = &pc;
    req->model_path = o->model_path;
    for (uint32_t f = 0; f < e->gguf.n_files; f++) req->file_bytes += e->gguf.files[f].size;
    if (e->cfg.n_expert) { /* mapped, a token reads n_expert_used of the experts (moe.h) */
        req->cold_bytes = e->cfg.expert_bytes - e->cfg.expert_bytes / e->cfg.n_expert * e->cfg.n_expert_used;
        req->n_expert = e->cfg.n_expert;
        req->n_expert_used = e->cfg.n_expert_used;
    }
    req->pe_bytes = e->cfg.pe_bytes; /* mapped or read by rows: never resident whole (pe.c) */
    req->cold_bytes += e->cfg.pe_bytes;
    req->load = o->load_asked;
    req->mmap_ok = o->use_mmap;
    req->read_first = weights_want_read(&e->cfg);
    req->n_ctx = mo->n_ctx;
    req->min_ctx = o->min_ctx;
    req->stream_window = o->stream_window;
    int rc = mem_decide(&e->budget, req, &e->mem); /* a refusal waits for the checks below */
    if (rc == 0 && e->mem.load == LOAD_MMAP && !o->show_plan) {
        /* Map the open file; if the system refuses (a 32-bit address
         * space), the planner decides again without mmap. */
        if (gguf_map(&e->gguf) == 0) {
            e->cfg.mapped = 1;
        } else {
            if (o->load_asked == LOAD_MMAP)
                return fail(e, PITH_IO, "%s: --load mmap: the file cannot be memory-mapped", o->model_path);
            req->mmap_ok = 0;
            rc = mem_decide(&e->budget, req, &e->mem);
        }
    }
    /* A context asked with -c is shrunk to fit the budget, but one the
     * machine could never hold is refused (a mistake, not a wish): with
     * overcommit, the mapping could succeed and fail much later. */
    uint64_t ram = port_physical_memory();
    if (e->mem.arena_asked == UINT64_MAX) return fail(e, PITH_NO_MEMORY, "%s: the memory plan overflows", o->model_path);
    if (!o->show_plan && o->n_ctx && ram > 0 && e->mem.arena_asked > ram)
        return fail(e, PITH_NO_MEMORY,
                    "%s: the memory plan needs %.1f MiB with a context of %u but the machine has %.1f MiB (lower -c, or see --plan)",
                    o->model_path, (double)e->mem.arena_asked / 1048576.0, mo->n_ctx, (double)ram / 1048576.0);
    if (decided(e, rc) != 0) return -1;
    mo->n_ctx = e->mem.n_ctx;
    mo->load = e->mem.load;
    mo->stream_window = e->mem.stream_window;
    if (o->threads == 0 && mo->load == LOAD_STREAM) { /* a core for the reader thread */
        e->opt.threads = model_default_threads(mo->load, port_cpu_count());
        port_set_threads((int)e->opt.threads);
    }
    mo->batch = (uint32_t)(o->batch < mo->n_ctx ? o->batch : mo->n_ctx);
    if (o->keep >= (int64_t)mo->n_ctx)
        return fail(e, PITH_BAD_INPUT, "--keep: %lld positions leave nothing to drop from a context of %u",
                    (long long)o->keep, mo->n_ctx);
    e->n_ctx = mo->n_ctx;
    e->n_vocab = e->cfg.n_vocab;
    e->batch = mo->batch;

    Plan *p = &e->plan;
    *p = e->mem.plan;
    if (p->overflow || p->total > (uint64_t)SIZE_MAX) return fail(e, PITH_NO_MEMORY, "%s: the memory plan overflows", o->model_path);
    if (!o->show_plan && ram > 0 && p->total > ram)
        return fail(e, PITH_NO_MEMORY, "%s: the memory plan needs %.1f MiB but the machine has %.1f MiB (lower -c, or see --plan)",
                    o->model_path, (double)p->total / 1048576.0, (double)ram / 1048576.0);
    if (o->show_plan) return 1;
    e->arena_base = port_arena_map((size_t)p->total);
    if (!e->arena_base)
        return fail(e, PITH_NO_MEMORY, "%s: cannot allocate the %llu-byte arena (lower -c, or see --plan)", o->model_path,
                    (unsigned long long)p->total);
    if (e->gguf.files[0].map) port_guard_mapped_file(o->model_path);
    arena_init(&e->arena, e->arena_base, p->total);
    if (gguf_index(&e->gguf, &e->arena, &err) != 0) return fail_from(e, &err);
    if (model_load(&e->model, &e->gguf, &e->arena, &e->cfg, mo, &err) != 0) return fail_from(e, &err);
    for (uint32_t i = 0; i < e->n_slots; i++)
        if (seq_init(&e->slots[i].seq, &e->cfg, mo, &e->arena) != 0)
            return fail(e, PITH_INTERNAL, "internal error: memory plan too small for the KV cache");
    if (workspace_init(&e->ws, &e->model, mo, &e->arena, &err) != 0) return fail_from(e, &err);
    if (draft_load(e) != 0) return -1;
    if (!o->model_only && load_text_side(e, max_text) != 0) return -1;
    e->load_seconds = port_seconds() - t0;
    return 0;
}

void engine_close(Engine *e)
{
    draft_close(e);
    workspace_close(&e->ws);
    gguf_close(&e->gguf);
    if (e->arena_base) port_arena_unmap(e->arena_base, (size_t)e->plan.total);
    e->arena_base = NULL;
}

void engine_print_plan(const Engine *e)
{
    mem_print(&e->budget, &e->req, &e->mem);
}

void engine_print_system(int board)
{
    MemBudget b;
    mem_budget_init(&b, 0);
    if (board) port_out("board profile: %s\n", PITH_BOARD_NAME);
    if (b.bytes == UINT64_MAX) port_out("memory budget: none (%s)\n", b.source);
    else port_out("memory budget: %.0f MiB (%s)\n", (double)b.bytes / 1048576.0, b.source);
    port_out("page size: %zu bytes\nkernels: %s (chosen at run time)\n", port_page_size(), kern_active()->name);
}

/* Bytes of weights a generated token reads, and a short description of the
 * matrix types (e.g. "Q4_K x168, Q6_K x29"): every layer matrix of the
 * architecture's table, and the output. */
static uint64_t bytes_per_token(const Model *m, char *types, size_t cap)
{
    uint64_t count[GGML_TYPE_COUNT] = {0}, total = 0;
    for (uint32_t l = 0; l < m->cfg.n_layer; l++) {
        for (int i = 0; i < LT_COUNT; i++) {
            if (!layer_tensors[i].matrix || !model_layer_has(&m->cfg, l, i)) continue;
            const Weight *w = layer_matrix(&m->layers[l], i);
            if (w->rows == 0) continue; /* not in a layer of this kind (Qwen3.5) */
            total += w->rows * w->row_bytes;
            count[w->type]++;
        }
    }
    total += m->output.rows * m->output.row_bytes;
    count[m->output.type]++;
    size_t len = 0;
    types[0] = '\0';
    for (int t = 0; t < GGML_TYPE_COUNT; t++)
        if (count[t] && len < cap) {
            int k = snprintf(types + len, cap - len, "%s%s x%llu", len ? ", " : "", ggml_type_info((uint32_t)t)->name,
                             (unsigned long long)count[t]);
            if (k > 0) len += (size_t)k;
        }
    return total;
}

void engine_info(const Engine *e, EngineInfo *out)
{
    memset(out, 0, sizeof *out);
    out->load = mem_load_name(e->mem.load);
    out->kernels = kern_active()->name;
    out->arena_bytes = e->plan.total;
    out->planned_bytes = e->mem.total;
    out->budget_bytes = e->budget.bytes;
    out->budget_source = e->budget.source;
    out->weight_bytes = e->cfg.weight_bytes;
    out->n_layer = e->cfg.n_layer;
    out->n_embd = e->cfg.n_embd;
    out->n_vocab = e->cfg.n_vocab;
    out->n_ctx = e->mopt.n_ctx;
    out->batch = e->mopt.batch;
    out->threads = (int)e->opt.threads;
    out->bytes_per_token = bytes_per_token(&e->model, out->matrix_types, sizeof out->matrix_types);
    if (e->mopt.load == LOAD_STREAM) {
        ModelOptions one = e->mopt;
        one.batch = 1;
        ModelStreamParts sp;
        model_stream_bytes(&e->cfg, &one, &sp);
        const WeightStream *st = &e->ws.stream;
        out->streamed = 1;
        out->stream_slot_bytes = st->slot_bytes;
        out->stream_read_per_token = sp.read_per_step;
        out->stream_resident_layers = st->resident_layers;
        out->stream_out_chunks = st->n_out_chunks;
        out->stream_out_chunk_rows = st->out_chunk_rows;
    }
}

/* Appends {"role":"ROLE","content":"TEXT"} to a JSON array being
 * written: the new length, or cap + 1 when it does not fit. */
static size_t put_message(char *out, size_t n, size_t cap, const char *role, const char *text, size_t len)
{
    if (n > cap) return n;
    int k = snprintf(out + n, cap - n, "%s{\"role\":\"%s\",\"content\":", n > 1 ? "," : "", role);
    if (k < 0 || (size_t)k >= cap - n) return cap + 1;
    n += (size_t)k;
    /* as a JSON string; bytes that are not UTF-8 become U+FFFD, as the
     * tokenizer reads them anyway (JSON cannot hold them) */
    if (cap - n < 2) return cap + 1;
    out[n++] = '"';
    for (size_t i = 0; i < len;) {
        unsigned cp;
        int u = (unsigned char)text[i] < 0x80 ? 0 : json_utf8_decode((const unsigned char *)text + i, len - i, &cp);
        if ((unsigned char)text[i] < 0x80) {
            char e[8];
            size_t q = json_escape(text + i, 1, e, sizeof e);
            if (q < 2 || cap - n < q) return cap + 1;
            memcpy(out + n, e + 1, q - 2); /* without its quotes */
            n += q - 2;
            i++;
        } else {
            const char *p = u ? text + i : "\xef\xbf\xbd";
            size_t m = u ? (size_t)u : 3;
            if (cap - n < m) return cap + 1;
            memcpy(out + n, p, m);
            n += m;
            i += u ? (size_t)u : 1;
        }
    }
    if (cap - n < 3) return cap + 1;
    out[n++] = '"';
    out[n++] = '}';
    return n;
}

/* Renders a conversation of [system], user with the Jinja template: the
 * whole conversation, or (continuation) only what the template writes
 * after an earlier turn: the text past what it renders for a placeholder
 * turn alone, as llama.cpp's chat does. */
static int64_t render_user_jinja(Engine *e, const char *system, const char *user, size_t user_len,
                                 int add_generation_prompt, int continuation, int thinking)
{
    Arena sa;
    arena_init(&sa, e->chat_scratch, e->chat_scratch_cap);
    uint64_t json_cap = chat_json_cap(e->tok.max_text);
    char *json = arena_take(&sa, json_cap);
    char *before = arena_take(&sa, e->tok.max_text + 1);
    if (!json || !before) return fail(e, PITH_INTERNAL, "internal error: the chat scratch does not fit its plan");
    size_t cap = (size_t)json_cap - 1, n = 1;
    json[0] = '[';
    if (continuation) {
        n = put_message(json, n, cap, "user", PROBE_USER, strlen(PROBE_USER));
        n = put_message(json, n, cap, "assistant", PROBE_REPLY, strlen(PROBE_REPLY));
    }
    size_t past = n; /* the placeholder turn alone: json[0..past) + "]" */
    if (system) n = put_message(json, n, cap, "system", system, strlen(system));
    n = put_message(json, n, cap, "user", user, user_len);
    if (n >= cap) return fail(e, PITH_NO_MEMORY, "prompt: the message's JSON is longer than the %llu bytes planned",
                              (unsigned long long)cap);
    json[n++] = ']';
    int think = e->thinking_given || thinking != e->opt.thinking ? thinking : -1;
    ChatInput in = {json, n, NULL, 0, NULL, 0, add_generation_prompt, think, 0, 0};
    char err[512];
    size_t len, before_len = 0;
    Arena mark = sa; /* each render takes its work region from here */
    /* room for the turn end a chat puts before this text */
    size_t out_cap = (size_t)e->tok.max_text + 1 - sizeof e->turn_end;
    PithStatus st = chat_render_input(&e->chat, &in, &sa, e->text, out_cap, &len, err, sizeof err);
    sa = mark;
    if (st != PITH_OK) return fail(e, st, "%s", err);
    if (continuation) {
        char save = json[past];
        json[past] = ']';
        ChatInput p = {json, past + 1, NULL, 0, NULL, 0, 0, think, 0, 0};
        st = chat_render_input(&e->chat, &p, &sa, before, out_cap, &before_len, err, sizeof err);
        json[past] = save;
        if (st != PITH_OK) return fail(e, st, "%s", err);
        size_t same = 0;
        while (same < before_len && same < len && before[same] == e->text[same]) same++;
        memmove(e->text, e->text + same, len - same);
        len -= same;
        e->text[len] = '\0';
    }
    return (int64_t)len;
}

int64_t engine_render_user(Engine *e, const char *system, const char *user, size_t user_len, int add_generation_prompt,
                           int continuation, int thinking)
{
    if (e->jinja) return render_user_jinja(e, system, user, user_len, add_generation_prompt, continuation, thinking);
    uint64_t cap = e->tok.max_text + 1;
    ChatMessage msgs[2];
    int n = 0;
    memset(msgs, 0, sizeof msgs);
    if (system) {
        msgs[n].role = CHAT_ROLE_SYSTEM;
        msgs[n].content = system;
        msgs[n++].content_len = strlen(system);
    }
    msgs[n].role = CHAT_ROLE_USER;
    msgs[n].content = user;
    msgs[n++].content_len = user_len;
    ChatOptions co;
    memset(&co, 0, sizeof co);
    co.add_generation_prompt = add_generation_prompt;
    co.enable_thinking = thinking;
    co.continuation = continuation;
    int64_t len = chat_render(e->tmpl, msgs, n, &co, e->text, (size_t)cap);
    if (len < 0 || (uint64_t)len >= cap)
        return fail(e, PITH_NO_MEMORY, "prompt: the rendered chat text is longer than the %llu bytes planned",
                    (unsigned long long)cap - 1);
    return len;
}

const char *engine_turn_end(const Engine *e)
{
    return e->jinja ? e->turn_end : chat_template_turn_end(e->tmpl);
}

int engine_opens_think(const Engine *e, int thinking, const char *prompt, size_t len)
{
    if (!e->jinja) return thinking && chat_template_opens_think(e->tmpl);
    while (len && prompt[len - 1] == '\n') len--;
    return len >= 7 && !memcmp(prompt + len - 7, "<think>", 7);
}

int engine_template_is_raw(const Engine *e)
{
    return !e->jinja && e->tmpl == CHAT_TEMPLATE_RAW;
}

int engine_tokenize(Engine *e, const char *text, size_t len, int start)
{
    return start ? tokenizer_encode_prompt(&e->tok, text, len, e->ids, e->max_ids)
                 : tokenizer_encode(&e->tok, text, len, 1, e->ids, e->max_ids);
}

int engine_read_grammar(Engine *e, const char **text, size_t *len)
{
    const EngineOptions *o = &e->opt;
    *text = NULL;
    *len = 0;
    if (!o->grammar_file) return 0;
    PortFile f;
    char why[512];
    if (port_file_open(&f, o->grammar_file, 0, why, sizeof why) != 0) return fail(e, PITH_IO, "%s", why);
    if (f.size > ENGINE_GRAMMAR_TEXT) {
        port_file_close(&f);
        return fail(e, PITH_NO_MEMORY, "%s: %llu bytes; a %s is at most %d bytes", o->grammar_file,
                    (unsigned long long)f.size, o->grammar_is_schema ? "schema" : "grammar", ENGINE_GRAMMAR_TEXT);
    }
    size_t n = (size_t)f.size;
    int rc = n ? port_file_read(&f, 0, e->grammar_src, n) : 0;
    port_file_close(&f);
    if (rc != 0) return fail(e, PITH_IO, "%s: read error", o->grammar_file);
    e->grammar_src[n] = '\0';
    *text = e->grammar_src;
    *len = n;
    if (o->grammar_is_schema) {
        int64_t g = json_schema_grammar(e->grammar_src, n, o->grammar_file, e->grammar_text, ENGINE_GRAMMAR_TEXT + 1, why,
                                        sizeof why);
        if (g < 0) return fail(e, PITH_BAD_INPUT, "%s", why);
        *text = e->grammar_text;
        *len = (size_t)g;
    }
    return 0;
}
