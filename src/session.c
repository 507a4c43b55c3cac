/* A model ready to generate, shared by `pith run` and `pith chat`. */
#include "session.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../port/port.h"
#include "cli.h"
#include "context_shift.h"
#include "forward.h"

#define DEFAULT_CTX 4096
#define DEFAULT_BATCH 64 /* prompt tokens per step: 32 measured 20% slower (Q8_0, AVX-512) */
#define PIECE_CAP (64 * 1024)        /* longest token text streamed at once */
#define TRACE_LINE_CAP (512 * 1024)  /* one --trace JSON line */
#define TEMPLATE_CAP (64 * 1024)     /* enough of tokenizer.chat_template to recognise it */

enum { SET_TEMP, SET_TOP_K, SET_TOP_P, SET_MIN_P };

void session_defaults(SessionOptions *o)
{
    memset(o, 0, sizeof *o);
    o->use_mmap = 1;
    o->kv_type = KV_F16;
    o->batch = DEFAULT_BATCH;
    o->thinking = 1;
    o->seed = -1;
    o->load_asked = -1;
    sampler_defaults(1, &o->sampling);
}

int session_parse_option(SessionOptions *o, int argc, char **argv, int *i)
{
    const char *a = argv[*i];
    SamplerParams *sp = &o->sampling;
    if (!strcmp(a, "-c") || !strcmp(a, "--ctx")) o->n_ctx = cli_int(a, cli_value(argc, argv, i), 1, 1 << 24);
    else if (!strcmp(a, "-t") || !strcmp(a, "--threads")) o->threads = cli_int(a, cli_value(argc, argv, i), 1, 1024);
    else if (!strcmp(a, "-b") || !strcmp(a, "--batch")) o->batch = cli_int(a, cli_value(argc, argv, i), 1, FORWARD_MAX_BATCH);
    else if (!strcmp(a, "--kv-type")) {
        const char *v = cli_value(argc, argv, i);
        if (!strcmp(v, "f32")) o->kv_type = KV_F32;
        else if (!strcmp(v, "f16")) o->kv_type = KV_F16;
        else if (!strcmp(v, "q8_0")) o->kv_type = KV_Q8_0;
        else port_die("--kv-type: '%s' is not f32, f16 or q8_0", v);
    } else if (!strcmp(a, "--no-mmap")) o->use_mmap = 0;
    else if (!strcmp(a, "--temp")) {
        sp->temperature = (float)cli_float(a, cli_value(argc, argv, i), 0, 100);
        o->sampling_set[SET_TEMP] = 1;
    } else if (!strcmp(a, "--top-k")) {
        sp->top_k = (int)cli_int(a, cli_value(argc, argv, i), 0, 1 << 30);
        o->sampling_set[SET_TOP_K] = 1;
    } else if (!strcmp(a, "--top-p")) {
        sp->top_p = (float)cli_float(a, cli_value(argc, argv, i), 1e-6, 1);
        o->sampling_set[SET_TOP_P] = 1;
    } else if (!strcmp(a, "--min-p")) {
        sp->min_p = (float)cli_float(a, cli_value(argc, argv, i), 0, 1);
        o->sampling_set[SET_MIN_P] = 1;
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
    else if (!strcmp(a, "--load")) {
        const char *v = cli_value(argc, argv, i);
        o->load_asked = mem_load_parse(v);
        if (o->load_asked < 0) port_die("--load: '%s' is not mmap, read or stream", v);
    }
    else return 0;
    return 1;
}

/* Qwen3's recommended settings depend on the thinking mode; what the user
 * set stays. */
static void apply_sampling_defaults(SessionOptions *o)
{
    SamplerParams d;
    sampler_defaults(o->thinking, &d);
    SamplerParams *sp = &o->sampling;
    if (!o->sampling_set[SET_TEMP]) sp->temperature = d.temperature;
    if (!o->sampling_set[SET_TOP_K]) sp->top_k = d.top_k;
    if (!o->sampling_set[SET_TOP_P]) sp->top_p = d.top_p;
    if (!o->sampling_set[SET_MIN_P]) sp->min_p = d.min_p;
    if (o->seed >= 0) {
        sp->seed = (uint64_t)o->seed;
    } else {
        double t = port_seconds();
        uint64_t bits;
        memcpy(&bits, &t, sizeof bits);
        sp->seed = bits ^ (bits >> 29);
    }
}

/* What does not depend on the load mode or the context. */
static void plan_base(Session *s, uint64_t max_text, Plan *base)
{
    const SessionOptions *o = &s->opt;
    GgufError err;
    plan_init(base);
    gguf_plan(&s->gguf, base);
    if (tokenizer_plan(&s->gguf, max_text, base, &err) != 0) port_die("%s", err.msg);
    sampler_plan((int)s->cfg.n_vocab, base);
    plan_add(base, "text and token scratch", max_text + 1);
    plan_add(base, "text and token scratch", (uint64_t)s->max_ids * sizeof(int32_t));
    plan_add(base, "text and token scratch", PIECE_CAP);
    if (o->trace_path) plan_add(base, "trace line", TRACE_LINE_CAP);
    if (o->max_out_ids) plan_add(base, "generated ids", plan_mul(base, o->max_out_ids, sizeof(int32_t)));
    plan_add(base, "chat template text", TEMPLATE_CAP);
    if (o->plan_extra) o->plan_extra(o->plan_extra_ctx, base);
}

/* The same with the file mapped, before mapping it: without the buffer the
 * tokenizer reads its tables into (tokenizer_plan), as it then reads them
 * in place. Planned exactly again once the file is mapped. */
static void plan_base_mapped_estimate(const Plan *base, Plan *out)
{
    plan_init(out);
    out->overflow = base->overflow;
    for (int i = 0; i < base->n_items; i++)
        if (strcmp(base->items[i].what, "tokenizer file read") != 0) plan_add(out, base->items[i].what, base->items[i].bytes);
}

/* The planner's view of a session: everything but the model's share is
 * the same for every context, and for every load mode but for what the
 * tokenizer copies when the file is not mapped. */
typedef struct {
    Session *s;
    const Plan *base;        /* planned with the file not mapped */
    const Plan *base_mapped; /* with the file mapped (= base until it is) */
} PlanCtx;

static void session_plan(void *ctx, LoadMode load, uint32_t n_ctx, uint64_t stream_window, Plan *p)
{
    const PlanCtx *pc = ctx;
    const Session *s = pc->s;
    *p = load == LOAD_MMAP ? *pc->base_mapped : *pc->base;
    ModelOptions mo = s->mopt;
    mo.n_ctx = n_ctx;
    mo.stream_window = stream_window;
    mo.batch = (uint32_t)(s->opt.batch < n_ctx ? s->opt.batch : n_ctx);
    mo.load = load;
    ModelConfig cfg = s->cfg;
    cfg.mapped = load == LOAD_MMAP; /* planned before the file is mapped */
    model_plan(&cfg, &mo, p);
    plan_add(p, "token history", plan_mul(p, n_ctx, sizeof(int32_t)));
}

void session_open(Session *s, const SessionOptions *o)
{
    GgufError err;
    double t0 = port_seconds();
    memset(s, 0, sizeof *s);
    s->opt = *o;
    apply_sampling_defaults(&s->opt);
    char why[256];
    if (sampler_params_check(&s->opt.sampling, why, sizeof why) != 0) port_die("%s", why);
    if (s->opt.threads == 0) s->opt.threads = port_cpu_count();
    port_set_threads((int)s->opt.threads);

    /* Nothing is mapped before the planner has decided: the header is read
     * with pread, and the file is mapped afterwards only in mmap mode. */
    if (gguf_open(&s->gguf, o->model_path, 0, NULL, &err) != 0) port_die("%s", err.msg);
    if (model_read_config(&s->gguf, &s->cfg, &err) != 0) port_die("%s", err.msg);

    ModelOptions *mo = &s->mopt;
    mo->n_ctx = (uint32_t)(o->n_ctx ? o->n_ctx : (s->cfg.n_ctx_train < DEFAULT_CTX ? s->cfg.n_ctx_train : DEFAULT_CTX));
    mo->kv_type = o->kv_type;
    mo->batch = (uint32_t)(o->batch < mo->n_ctx ? o->batch : mo->n_ctx);
    mo->all_logits = 0;
    if (model_check_options(&s->cfg, mo, &err) != 0) port_die("%s", err.msg);

    uint64_t max_text = o->max_text ? o->max_text : 4096;
    s->max_ids = (int)(3 * max_text + 16);
    s->piece_cap = PIECE_CAP;

    Plan base, base_mapped;
    plan_base(s, max_text, &base);
    plan_base_mapped_estimate(&base, &base_mapped);
    mem_budget_init(&s->budget, o->mem);
    PlanCtx pc = {s, &base, &base_mapped};
    MemRequest req;
    memset(&req, 0, sizeof req);
    req.plan = session_plan;
    req.ctx = &pc;
    req.model_path = o->model_path;
    for (uint32_t f = 0; f < s->gguf.n_files; f++) req.file_bytes += s->gguf.files[f].size;
    req.load = o->load_asked;
    req.mmap_ok = o->use_mmap;
    req.n_ctx = mo->n_ctx;
    req.min_ctx = o->min_ctx;
    if (o->load_asked == LOAD_MMAP && !o->use_mmap) port_die("--load mmap: contradicts --no-mmap");
    mem_decide(&s->budget, &req, &s->mem); /* a refusal waits: mapping may change the numbers */
    /* A context asked with -c is shrunk to fit the budget, but one the
     * machine could never hold is refused (a mistake, not a wish): with
     * overcommit, the mapping could succeed and fail much later. */
    uint64_t ram = port_physical_memory();
    if (s->mem.arena_asked == UINT64_MAX) port_die("%s: the memory plan overflows", o->model_path);
    if (!o->show_plan && o->n_ctx && ram > 0 && s->mem.arena_asked > ram)
        port_die("%s: the memory plan needs %.1f MiB with a context of %u but the machine has %.1f MiB (lower -c, or see --plan)",
                 o->model_path, (double)s->mem.arena_asked / 1048576.0, mo->n_ctx, (double)ram / 1048576.0);
    if (s->mem.fits && s->mem.load == LOAD_MMAP) {
        /* Map it now; if the system refuses (a 32-bit address space), the
         * planner decides again without mmap. */
        gguf_close(&s->gguf);
        if (gguf_open(&s->gguf, o->model_path, 1, NULL, &err) != 0) port_die("%s", err.msg);
        if (model_read_config(&s->gguf, &s->cfg, &err) != 0) port_die("%s", err.msg);
        if (!s->cfg.mapped) {
            if (o->load_asked == LOAD_MMAP) port_die("%s: --load mmap: the file cannot be memory-mapped", o->model_path);
            req.mmap_ok = 0;
        }
        /* The tokenizer reads a mapped header in place: plan again. */
        plan_base(s, max_text, &base_mapped);
        pc.base_mapped = &base_mapped;
    }
    mem_decide_or_die(&s->budget, &req, &s->mem, o->show_plan);
    mo->n_ctx = s->mem.n_ctx;
    mo->load = s->mem.load;
    mo->stream_window = s->mem.stream_window;
    if (o->threads == 0 && mo->load == LOAD_STREAM) { /* a core for the reader thread */
        s->opt.threads = model_default_threads(mo->load, port_cpu_count());
        port_set_threads((int)s->opt.threads);
    }
    mo->batch = (uint32_t)(o->batch < mo->n_ctx ? o->batch : mo->n_ctx);
    if (o->keep >= (int64_t)mo->n_ctx)
        port_die("--keep: %lld positions leave nothing to drop from a context of %u", (long long)o->keep, mo->n_ctx);

    Plan *p = &s->plan;
    *p = s->mem.plan;
    if (p->overflow || p->total > (uint64_t)SIZE_MAX) port_die("%s: the memory plan overflows", o->model_path);
    if (!o->show_plan && ram > 0 && p->total > ram)
        port_die("%s: the memory plan needs %.1f MiB but the machine has %.1f MiB (lower -c, or see --plan)",
                 o->model_path, (double)p->total / 1048576.0, (double)ram / 1048576.0);
    if (o->show_plan) {
        mem_print(&s->budget, &req, &s->mem);
        port_out_flush();
        gguf_close(&s->gguf);
        port_exit(0);
    }
    s->arena_base = port_arena_map((size_t)p->total);
    if (!s->arena_base)
        port_die("%s: cannot allocate the %llu-byte arena (lower -c, or see --plan)", o->model_path,
                 (unsigned long long)p->total);
    if (s->gguf.files[0].map) port_guard_mapped_file(o->model_path);
    arena_init(&s->arena, s->arena_base, p->total);
    if (gguf_index(&s->gguf, &s->arena, &err) != 0) port_die("%s", err.msg);
    if (model_load(&s->model, &s->gguf, &s->arena, &s->cfg, mo, &err) != 0) port_die("%s", err.msg);
    if (tokenizer_load(&s->tok, &s->gguf, max_text, &s->arena, &err) != 0) port_die("%s", err.msg);
    if (tokenizer_n_vocab(&s->tok) != (int32_t)s->cfg.n_vocab)
        port_die("%s: the vocabulary has %d tokens but token_embd.weight has %u rows", o->model_path,
                 tokenizer_n_vocab(&s->tok), s->cfg.n_vocab);
    if (sampler_init(&s->sampler, &s->arena, (int)s->cfg.n_vocab, &s->opt.sampling) != 0)
        port_die("internal error: the sampler does not fit its plan");
    s->text = arena_take(&s->arena, max_text + 1);
    s->ids = arena_take(&s->arena, (uint64_t)s->max_ids * sizeof(int32_t));
    s->piece = arena_take(&s->arena, PIECE_CAP);
    if (o->trace_path) s->trace_line = arena_take(&s->arena, TRACE_LINE_CAP);
    s->history = arena_take(&s->arena, (uint64_t)mo->n_ctx * sizeof(int32_t));
    if (o->max_out_ids) s->out_ids = arena_take(&s->arena, o->max_out_ids * sizeof(int32_t));
    char *tmpl_text = arena_take(&s->arena, TEMPLATE_CAP);
    if (!s->text || !s->ids || !s->piece || !s->history || !tmpl_text || (o->trace_path && !s->trace_line) ||
        (o->max_out_ids && !s->out_ids))
        port_die("internal error: the memory plan is too small");
    if (token_stream_out_max(&s->tok) > PIECE_CAP)
        port_die("%s: a token of the vocabulary is longer than %d bytes", o->model_path, PIECE_CAP);
    s->tmpl = CHAT_TEMPLATE_RAW;
    snprintf(s->tmpl_name, sizeof s->tmpl_name, "none");
    if (gguf_get_string(&s->gguf, "tokenizer.chat_template", tmpl_text, TEMPLATE_CAP) >= 0) {
        s->tmpl = chat_template_detect(tmpl_text);
        snprintf(s->tmpl_name, sizeof s->tmpl_name, "%.40s%s", tmpl_text, strlen(tmpl_text) > 40 ? "..." : "");
        for (char *c = s->tmpl_name; *c; c++)
            if ((unsigned char)*c < 32) *c = ' ';
    }
    if (o->template_name) {
        s->tmpl = (ChatTemplate)chat_template_by_name(o->template_name);
        snprintf(s->tmpl_name, sizeof s->tmpl_name, "%s", o->template_name);
    }
    if (o->trace_path) {
        char werr[512];
        if (port_write_file(o->trace_path, "", 0, 0, werr, sizeof werr) != 0) port_die("--trace: %s", werr);
    }
    s->load_seconds = port_seconds() - t0;
}

void session_close(Session *s)
{
    model_close(&s->model);
    gguf_close(&s->gguf);
    port_arena_unmap(s->arena_base, (size_t)s->plan.total);
    s->arena_base = NULL;
}

size_t session_render_user(Session *s, const char *system, const char *user, size_t user_len,
                           int add_generation_prompt, int continuation)
{
    uint64_t cap = s->tok.max_text + 1;
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
    co.enable_thinking = s->opt.thinking;
    co.continuation = continuation;
    int64_t len = chat_render(s->tmpl, msgs, n, &co, s->text, (size_t)cap);
    if (len < 0 || (uint64_t)len >= cap) port_die("prompt: the rendered chat text is longer than the %llu bytes planned",
                                                   (unsigned long long)cap - 1);
    return (size_t)len;
}

int session_encode(Session *s, const char *text, size_t len)
{
    int n = tokenizer_encode(&s->tok, text, len, 1, s->ids, s->max_ids);
    if (n < 0) port_die("prompt: %zu bytes of text are more than the %llu planned", len, (unsigned long long)s->tok.max_text);
    return n;
}

void session_prefill(Session *s, const int32_t *ids, int n)
{
    if (n <= 0) return;
    if ((uint64_t)s->model.n_past + (uint64_t)n > s->mopt.n_ctx)
        port_die("prompt: %d tokens do not fit in the context (%u of %u used; raise -c)", n, s->model.n_past,
                 s->mopt.n_ctx);
    memcpy(s->history + s->model.n_past, ids, (size_t)n * sizeof(int32_t));
    if (forward_prompt(&s->model, ids, n) != 0) port_die("%s: %s", s->opt.model_path, s->model.err);
    for (int i = 0; i < n; i++) sampler_accept(&s->sampler, ids[i]);
}

int session_make_room(Session *s, uint32_t n)
{
    Model *m = &s->model;
    uint32_t keep = (uint32_t)s->opt.keep;
    while ((uint64_t)m->n_past + n > s->mopt.n_ctx) {
        uint32_t drop = s->opt.no_shift ? 0 : context_shift_amount(m->n_past, keep);
        if (drop == 0) return -1;
        if (context_shift(m, keep, drop) != 0) port_die("%s: %s", s->opt.model_path, m->err);
        memmove(s->history + keep, s->history + keep + drop, (size_t)(m->n_past - keep) * sizeof(int32_t));
        s->n_shifts++;
        port_err("[context full: dropped %u tokens after the first %u, %u left]\n", drop, keep, m->n_past);
    }
    return 0;
}

int session_feed(Session *s, int32_t id)
{
    if (session_make_room(s, 1) != 0) return -1;
    s->history[s->model.n_past] = id;
    if (forward_batch(&s->model, &id, 1, s->model.n_past, 0) != 0) port_die("%s: %s", s->opt.model_path, s->model.err);
    return 0;
}

/* NaN or +Inf logits come from non-finite weights (only the norms are
 * checked when loading): say so instead of sampling noise. With every
 * logit at -Inf nothing can be sampled either. */
static void check_logits(Session *s)
{
    const float *l = s->model.logits;
    int any = 0;
    for (uint32_t i = 0; i < s->cfg.n_vocab; i++) {
        if (isnan(l[i]) || l[i] == INFINITY)
            port_die("%s: the model computed a non-finite logit at position %u (NaN or Inf weights?)",
                     s->opt.model_path, s->model.n_past);
        any |= l[i] > -INFINITY;
    }
    if (!any) port_die("%s: every logit is -Inf at position %u (broken weights?)", s->opt.model_path, s->model.n_past);
}

int32_t session_sample(Session *s)
{
    check_logits(s);
    if (s->opt.ignore_eos)
        for (uint32_t i = 0; i < s->cfg.n_vocab; i++)
            if (tokenizer_is_eog(&s->tok, (int32_t)i)) s->model.logits[i] = -INFINITY;
    SamplerTrace trace, *tp = s->opt.trace_path ? &trace : NULL;
    int32_t id = sampler_sample(&s->sampler, s->model.logits, tp);
    sampler_accept(&s->sampler, id);
    if (tp) {
        size_t len = 0;
        const char *piece = tokenizer_piece(&s->tok, id, &len);
        trace.pos = s->model.n_past;
        size_t n = sampler_trace_json(&trace, piece, len, s->trace_line, TRACE_LINE_CAP);
        if (n >= TRACE_LINE_CAP) port_die("--trace: a trace line is longer than %d bytes", TRACE_LINE_CAP);
        char werr[512];
        if (port_write_file(s->opt.trace_path, s->trace_line, n, 1, werr, sizeof werr) != 0)
            port_die("--trace: %s", werr);
    }
    return id;
}

int session_emit(Session *s, TokenStream *ts, int32_t id)
{
    int n = token_stream_push(ts, &s->tok, id, s->piece, s->piece_cap);
    if (n < 0) return 0;
    return port_out_bytes(s->piece, (size_t)n);
}
