/* A model ready to run, shared by every command that runs one (session.h). */
#include "session.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "../../port/port.h"
#include "../kernels/kernels.h"
#include "../model/context_shift.h"

#define DEFAULT_CTX 4096
#define PIECE_CAP (64 * 1024)        /* longest token text streamed at once */
#define TRACE_LINE_CAP (512 * 1024)  /* one --trace JSON line */
#define TEMPLATE_CAP (64 * 1024)     /* enough of tokenizer.chat_template to recognise it */

/* Fails with a one-line reason in s->err. */
static int fail(Session *s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s->err, sizeof s->err, fmt, ap);
    va_end(ap);
    return -1;
}

void session_defaults(SessionOptions *o)
{
    memset(o, 0, sizeof *o);
    o->use_mmap = 1;
    o->kv_type = KV_F16;
    o->batch = SESSION_DEFAULT_BATCH;
    o->thinking = -1; /* the template's default, once it is known */
    o->seed = -1;
    o->load_asked = -1;
    sampler_defaults(1, &o->sampling);
}

/* Qwen3's recommended settings depend on the thinking mode; what the user
 * set stays. */
static void apply_sampling_defaults(SessionOptions *o)
{
    SamplerParams d;
    sampler_defaults(o->thinking, &d);
    SamplerParams *sp = &o->sampling;
    if (!o->sampling_set[SESSION_SET_TEMP]) sp->temperature = d.temperature;
    if (!o->sampling_set[SESSION_SET_TOP_K]) sp->top_k = d.top_k;
    if (!o->sampling_set[SESSION_SET_TOP_P]) sp->top_p = d.top_p;
    if (!o->sampling_set[SESSION_SET_MIN_P]) sp->min_p = d.min_p;
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

static int plan_base(Session *s, uint64_t max_text, Plan *base)
{
    const SessionOptions *o = &s->opt;
    GgufError err;
    plan_init(base);
    gguf_plan(&s->gguf, base);
    if (!o->model_only) {
        if (tokenizer_plan(&s->gguf, max_text, base, &err) != 0) return fail(s, "%s", err.msg);
        sampler_plan((int)s->cfg.n_vocab, base);
        plan_add(base, "text and token scratch", max_text + 1);
        plan_add(base, "text and token scratch", (uint64_t)s->max_ids * sizeof(int32_t));
        plan_add(base, "text and token scratch", PIECE_CAP);
        if (o->trace_path) plan_add(base, "trace line", TRACE_LINE_CAP);
        if (o->max_out_ids) plan_add(base, "generated ids", plan_mul(base, o->max_out_ids, sizeof(int32_t)));
        for (uint32_t i = 1; i < s->n_slots; i++)
            plan_add(base, "sampler history, slots", SAMPLER_MAX_HISTORY * sizeof(int32_t));
        plan_add(base, "chat template text", TEMPLATE_CAP);
        if (o->grammar) {
            grammar_vocab_plan((int32_t)s->cfg.n_vocab, base);
            plan_add(base, "grammar state", grammar_bytes(SESSION_GRAMMAR_PIECE, (int32_t)s->cfg.n_vocab));
            for (uint32_t i = 1; i < s->n_slots; i++)
                plan_add(base, "grammar state, slots", grammar_bytes(SESSION_GRAMMAR_PIECE, (int32_t)s->cfg.n_vocab));
            plan_add(base, "grammar text", 2 * arena_round(SESSION_GRAMMAR_TEXT + 1));
        }
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

/* The planner's view of a session: everything but the model's share is
 * the same for every context, and for every load mode but for what the
 * tokenizer copies when the file is not mapped. */
typedef struct {
    Session *s;
    const Plan *base;        /* planned with the file not mapped */
    const Plan *base_mapped; /* with the file mapped */
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
    forward_plan(&cfg, &mo, p);
    if (!s->opt.model_only) /* one piece per slot, as carved (each rounded) */
        for (uint32_t i = 0; i < s->n_slots; i++) plan_add(p, "token history", plan_mul(p, n_ctx, sizeof(int32_t)));
}

/* The planner's answer (mem_decide) made final: a refusal is one line in
 * s->err; otherwise the note for stderr, if any. */
static int decided(Session *s, int rc)
{
    if (rc != 0) {
        s->refused = 1;
        mem_refusal(&s->budget, &s->req, &s->mem, s->err, sizeof s->err);
        size_t len = strlen(s->err);
        uint64_t kv = 0;
        for (int i = 0; i < s->mem.plan.n_items; i++)
            if (!strncmp(s->mem.plan.items[i].what, "kv cache", 8)) kv += s->mem.plan.items[i].bytes;
        if (s->n_slots > 1 && len < sizeof s->err)
            snprintf(s->err + len, sizeof s->err - len,
                     "; --slots %u: %u KV caches of %.2f MiB at a context of %u (fewer slots, a smaller -c or a larger "
                     "--mem)", s->n_slots, s->n_slots, (double)kv / s->n_slots / 1048576.0, s->mem.n_ctx);
        return -1;
    }
    if (!s->opt.show_plan) mem_notice(&s->budget, &s->req, &s->mem, s->notice, sizeof s->notice);
    return 0;
}

/* Carves what the plan holds besides the model: the tokenizer, sampler,
 * scratch and the chat template. */
static int load_text_side(Session *s, uint64_t max_text)
{
    const SessionOptions *o = &s->opt;
    GgufError err;
    if (tokenizer_load(&s->tok, &s->gguf, max_text, &s->arena, &err) != 0) return fail(s, "%s", err.msg);
    if (tokenizer_n_vocab(&s->tok) != (int32_t)s->cfg.n_vocab)
        return fail(s, "%s: the vocabulary has %d tokens but token_embd.weight has %u rows", o->model_path,
                    tokenizer_n_vocab(&s->tok), s->cfg.n_vocab);
    if (sampler_init(&s->sampler, &s->arena, (int)s->cfg.n_vocab, &s->opt.sampling) != 0)
        return fail(s, "internal error: the sampler does not fit its plan");
    s->text = arena_take(&s->arena, max_text + 1);
    s->ids = arena_take(&s->arena, (uint64_t)s->max_ids * sizeof(int32_t));
    s->piece = arena_take(&s->arena, PIECE_CAP);
    if (o->trace_path) s->trace_line = arena_take(&s->arena, TRACE_LINE_CAP);
    s->history = arena_take(&s->arena, (uint64_t)s->mopt.n_ctx * sizeof(int32_t));
    s->slot_history[0] = s->history;
    s->slot_sampler_history[0] = s->sampler.history;
    for (uint32_t i = 1; i < s->n_slots; i++) {
        s->slot_history[i] = arena_take(&s->arena, (uint64_t)s->mopt.n_ctx * sizeof(int32_t));
        s->slot_sampler_history[i] = arena_take(&s->arena, SAMPLER_MAX_HISTORY * sizeof(int32_t));
        if (!s->slot_history[i] || !s->slot_sampler_history[i]) return fail(s, "internal error: the memory plan is too small");
    }
    if (o->max_out_ids) s->out_ids = arena_take(&s->arena, o->max_out_ids * sizeof(int32_t));
    char *tmpl_text = arena_take(&s->arena, TEMPLATE_CAP);
    if (o->grammar) {
        s->grammar_src = arena_take(&s->arena, SESSION_GRAMMAR_TEXT + 1);
        s->grammar_text = arena_take(&s->arena, SESSION_GRAMMAR_TEXT + 1);
        if (!s->grammar_src || !s->grammar_text || grammar_vocab_build(&s->gvocab, &s->arena, &s->tok) != 0 ||
            grammar_init(&s->grammar, &s->arena, SESSION_GRAMMAR_PIECE, (int32_t)s->cfg.n_vocab) != 0)
            return fail(s, "internal error: the grammar does not fit its plan");
        s->slot_grammar[0] = &s->grammar;
        for (uint32_t i = 1; i < s->n_slots; i++) {
            s->slot_grammar[i] = &s->more_grammar[i - 1];
            if (grammar_init(s->slot_grammar[i], &s->arena, SESSION_GRAMMAR_PIECE, (int32_t)s->cfg.n_vocab) != 0)
                return fail(s, "internal error: the slots' grammars do not fit their plan");
        }
    }
    if (!s->text || !s->ids || !s->piece || !s->history || !tmpl_text || (o->trace_path && !s->trace_line) ||
        (o->max_out_ids && !s->out_ids))
        return fail(s, "internal error: the memory plan is too small");
    if (token_stream_out_max(&s->tok) > PIECE_CAP)
        return fail(s, "%s: a token of the vocabulary is longer than %d bytes", o->model_path, PIECE_CAP);
    s->tmpl = CHAT_TEMPLATE_RAW;
    s->tmpl_name[0] = '\0'; /* the model has no template */
    if (gguf_get_string(&s->gguf, "tokenizer.chat_template", tmpl_text, TEMPLATE_CAP) >= 0) {
        s->tmpl = chat_template_detect(tmpl_text);
        snprintf(s->tmpl_name, sizeof s->tmpl_name, "%.40s%s", tmpl_text, strlen(tmpl_text) > 40 ? "..." : "");
        for (char *c = s->tmpl_name; *c; c++)
            if ((unsigned char)*c < 32) *c = ' ';
    }
    if (o->template_name) {
        int t = chat_template_by_name(o->template_name);
        if (t < 0) return fail(s, "--template: '%s' is not a template pith knows (%s)", o->template_name, chat_template_names());
        s->tmpl = (ChatTemplate)t;
        snprintf(s->tmpl_name, sizeof s->tmpl_name, "%s", o->template_name);
    }
    if (s->opt.thinking < 0) {
        /* Qwen3.5's small files think only when asked: their sampling defaults follow */
        s->opt.thinking = chat_template_thinks(s->tmpl);
        apply_sampling_defaults(&s->opt);
        session_set_sampling(s, &s->opt.sampling);
    }
    if (o->trace_path) {
        char werr[512];
        if (port_write_file(o->trace_path, "", 0, 0, werr, sizeof werr) != 0) return fail(s, "--trace: %s", werr);
    }
    return 0;
}

int session_open(Session *s, const SessionOptions *o)
{
    GgufError err;
    double t0 = port_seconds();
    memset(s, 0, sizeof *s);
    s->opt = *o;
    s->n_slots = o->slots ? o->slots : 1;
    if (s->n_slots > SESSION_MAX_SLOTS) return fail(s, "--slots: at most %d", SESSION_MAX_SLOTS);
    apply_sampling_defaults(&s->opt);
    char why[256];
    if (!o->model_only && sampler_params_check(&s->opt.sampling, why, sizeof why) != 0) return fail(s, "%s", why);
    if (o->load_asked == LOAD_MMAP && !o->use_mmap) return fail(s, "--load mmap: contradicts --no-mmap");
    if (s->opt.threads == 0) s->opt.threads = port_cpu_count();
    port_set_threads((int)s->opt.threads);

    /* The file is opened once, without mapping: the header is read with
     * pread, its configuration in one walk, and the file is mapped
     * afterwards only if the planner chooses mmap. */
    if (gguf_open(&s->gguf, o->model_path, 0, NULL, &err) != 0) return fail(s, "%s", err.msg);
    if (model_read_config(&s->gguf, &s->cfg, &err) != 0) return fail(s, "%s", err.msg);
    if (o->min_ctx_what && o->min_ctx > s->cfg.n_ctx_train)
        return fail(s, "%s are more than the model's context of %u", o->min_ctx_what, s->cfg.n_ctx_train);
    if (o->min_ctx_what && o->n_ctx && o->min_ctx > o->n_ctx)
        return fail(s, "%s do not fit a context of %u (-c)", o->min_ctx_what, (uint32_t)o->n_ctx);

    ModelOptions *mo = &s->mopt;
    uint32_t default_ctx = o->default_ctx ? o->default_ctx : DEFAULT_CTX;
    mo->n_ctx = (uint32_t)(o->n_ctx ? o->n_ctx : (s->cfg.n_ctx_train < default_ctx ? s->cfg.n_ctx_train : default_ctx));
    mo->kv_type = o->kv_type;
    mo->batch = (uint32_t)(o->batch < mo->n_ctx ? o->batch : mo->n_ctx);
    mo->all_logits = o->all_logits;
    mo->stream_window = o->stream_window;
    mo->stream_keep_cache = o->stream_keep_cache;
    mo->n_seq = s->n_slots;
    if (model_check_options(&s->cfg, mo, &err) != 0) return fail(s, "%s", err.msg);

    uint64_t max_text = o->max_text ? o->max_text : 4096;
    s->max_ids = (int)(3 * max_text + 16);
    s->piece_cap = PIECE_CAP;

    /* The plan, made once: the mapped variant is estimated before mapping. */
    Plan base, base_mapped;
    if (plan_base(s, max_text, &base) != 0) return -1;
    plan_base_mapped_estimate(&base, &base_mapped);
    mem_budget_init(&s->budget, o->mem);
    PlanCtx pc = {s, &base, &base_mapped};
    MemRequest *req = &s->req;
    req->plan = session_plan;
    req->ctx = &pc;
    req->model_path = o->model_path;
    for (uint32_t f = 0; f < s->gguf.n_files; f++) req->file_bytes += s->gguf.files[f].size;
    req->load = o->load_asked;
    req->mmap_ok = o->use_mmap;
    req->read_first = weights_want_read(&s->cfg);
    req->n_ctx = mo->n_ctx;
    req->min_ctx = o->min_ctx;
    req->stream_window = o->stream_window;
    int rc = mem_decide(&s->budget, req, &s->mem); /* a refusal waits for the checks below */
    if (rc == 0 && s->mem.load == LOAD_MMAP && !o->show_plan) {
        /* Map the open file; if the system refuses (a 32-bit address
         * space), the planner decides again without mmap. */
        if (gguf_map(&s->gguf) == 0) {
            s->cfg.mapped = 1;
        } else {
            if (o->load_asked == LOAD_MMAP) return fail(s, "%s: --load mmap: the file cannot be memory-mapped", o->model_path);
            req->mmap_ok = 0;
            rc = mem_decide(&s->budget, req, &s->mem);
        }
    }
    /* A context asked with -c is shrunk to fit the budget, but one the
     * machine could never hold is refused (a mistake, not a wish): with
     * overcommit, the mapping could succeed and fail much later. */
    uint64_t ram = port_physical_memory();
    if (s->mem.arena_asked == UINT64_MAX) return fail(s, "%s: the memory plan overflows", o->model_path);
    if (!o->show_plan && o->n_ctx && ram > 0 && s->mem.arena_asked > ram)
        return fail(s, "%s: the memory plan needs %.1f MiB with a context of %u but the machine has %.1f MiB (lower -c, or see --plan)",
                    o->model_path, (double)s->mem.arena_asked / 1048576.0, mo->n_ctx, (double)ram / 1048576.0);
    if (decided(s, rc) != 0) return -1;
    mo->n_ctx = s->mem.n_ctx;
    mo->load = s->mem.load;
    mo->stream_window = s->mem.stream_window;
    if (o->threads == 0 && mo->load == LOAD_STREAM) { /* a core for the reader thread */
        s->opt.threads = model_default_threads(mo->load, port_cpu_count());
        port_set_threads((int)s->opt.threads);
    }
    mo->batch = (uint32_t)(o->batch < mo->n_ctx ? o->batch : mo->n_ctx);
    if (o->keep >= (int64_t)mo->n_ctx)
        return fail(s, "--keep: %lld positions leave nothing to drop from a context of %u", (long long)o->keep, mo->n_ctx);

    Plan *p = &s->plan;
    *p = s->mem.plan;
    if (p->overflow || p->total > (uint64_t)SIZE_MAX) return fail(s, "%s: the memory plan overflows", o->model_path);
    if (!o->show_plan && ram > 0 && p->total > ram)
        return fail(s, "%s: the memory plan needs %.1f MiB but the machine has %.1f MiB (lower -c, or see --plan)",
                    o->model_path, (double)p->total / 1048576.0, (double)ram / 1048576.0);
    if (o->show_plan) return 1;
    s->arena_base = port_arena_map((size_t)p->total);
    if (!s->arena_base)
        return fail(s, "%s: cannot allocate the %llu-byte arena (lower -c, or see --plan)", o->model_path,
                    (unsigned long long)p->total);
    if (s->gguf.files[0].map) port_guard_mapped_file(o->model_path);
    arena_init(&s->arena, s->arena_base, p->total);
    if (gguf_index(&s->gguf, &s->arena, &err) != 0) return fail(s, "%s", err.msg);
    if (model_load(&s->model, &s->gguf, &s->arena, &s->cfg, mo, &err) != 0) return fail(s, "%s", err.msg);
    s->slot_seq[0] = &s->seq;
    for (uint32_t i = 1; i < s->n_slots; i++) s->slot_seq[i] = &s->more_seq[i - 1];
    for (uint32_t i = 0; i < s->n_slots; i++)
        if (seq_init(s->slot_seq[i], &s->cfg, mo, &s->arena) != 0)
            return fail(s, "internal error: memory plan too small for the KV cache");
    if (workspace_init(&s->ws, &s->model, mo, &s->arena, &err) != 0) return fail(s, "%s", err.msg);
    if (!o->model_only && load_text_side(s, max_text) != 0) return -1;
    s->load_seconds = port_seconds() - t0;
    return 0;
}

void session_close(Session *s)
{
    workspace_close(&s->ws);
    gguf_close(&s->gguf);
    if (s->arena_base) port_arena_unmap(s->arena_base, (size_t)s->plan.total);
    s->arena_base = NULL;
}

int64_t session_render_user(Session *s, const char *system, const char *user, size_t user_len,
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
    if (len < 0 || (uint64_t)len >= cap)
        return fail(s, "prompt: the rendered chat text is longer than the %llu bytes planned", (unsigned long long)cap - 1);
    return len;
}

void session_set_sampling(Session *s, const SamplerParams *sp)
{
    s->sampler.params = *sp;
    sampler_reset(&s->sampler);
}

/* After a failed step the cache may hold a half-written position: the
 * sequence starts again from nothing, so no later request reuses it. */
static int forward_failed(Session *s)
{
    seq_reset(&s->seq);
    return fail(s, "%s: %s", s->opt.model_path, s->ws.err);
}

int session_prefill(Session *s, const int32_t *ids, int n)
{
    if (n <= 0) return 0;
    if ((uint64_t)s->seq.n_past + (uint64_t)n > s->mopt.n_ctx)
        return fail(s, "prompt: %d tokens do not fit in the context (%u of %u used; raise -c)", n, s->seq.n_past,
                    s->mopt.n_ctx);
    memcpy(s->history + s->seq.n_past, ids, (size_t)n * sizeof(int32_t));
    /* Step by step (the steps forward_prompt would take), for the
     * progress line a long prompt shows on a terminal. */
    port_progress("prompt", 0, 0, 0);
    for (int i = 0; i < n;) {
        int step = n - i < (int)s->ws.batch ? n - i : (int)s->ws.batch;
        if (forward_prompt(&s->model, &s->ws, &s->seq, ids + i, step) != 0) {
            port_progress_end();
            return forward_failed(s);
        }
        i += step;
        port_progress("prompt", (uint64_t)i, (uint64_t)n, 0);
    }
    port_progress_end();
    for (int i = 0; i < n; i++) sampler_accept(&s->sampler, ids[i]);
    return 0;
}

int session_prefill_reuse(Session *s, const int32_t *ids, int n, uint32_t *n_cached)
{
    uint32_t k = 0, past = s->seq.n_past;
    while (k < past && k < (uint32_t)n && s->history[k] == ids[k]) k++;
    if (k == (uint32_t)n) k--;
    if (!seq_can_resume(&s->cfg, &s->seq, k)) k = 0; /* the rings lost the window before k: from the start */
    s->seq.n_past = k;
    sampler_reset(&s->sampler);
    for (uint32_t i = 0; i < k; i++) sampler_accept(&s->sampler, ids[i]);
    *n_cached = k;
    return session_prefill(s, ids + k, n - (int)k);
}

int session_make_room(Session *s, uint32_t n)
{
    SeqState *q = &s->seq;
    uint32_t keep = (uint32_t)s->opt.keep;
    while ((uint64_t)q->n_past + n > s->mopt.n_ctx) {
        uint32_t drop = s->opt.no_shift ? 0 : context_shift_amount(q->n_past, keep);
        if (drop == 0) return 1;
        char why[256];
        if (q->ring || q->recurrent) {
            /* sliding-window rings and recurrent states (LFM2, Qwen3.5) cannot be
             * shifted exactly: the kept tokens are fed again at their new
             * positions */
            uint32_t n_left = q->n_past - drop;
            memmove(s->history + keep, s->history + keep + drop, (size_t)(q->n_past - keep - drop) * sizeof(int32_t));
            seq_reset(q);
            if (n_left > 0 && forward_prompt(&s->model, &s->ws, q, s->history, (int)n_left) != 0)
                return forward_failed(s);
            s->n_shifts++;
            port_err("[context full: dropped %u tokens after the first %u, fed the %u left again]\n", drop, keep, q->n_past);
            continue;
        }
        if (context_shift(&s->model, q, keep, drop, why, sizeof why) != 0) return fail(s, "%s: %s", s->opt.model_path, why);
        memmove(s->history + keep, s->history + keep + drop, (size_t)(q->n_past - keep) * sizeof(int32_t));
        s->n_shifts++;
        port_err("[context full: dropped %u tokens after the first %u, %u left]\n", drop, keep, q->n_past);
    }
    return 0;
}

/* Feeds one generated token at the end of the cache, shifting the context
 * first when it is full: 0, 1 when the cache is full and cannot shift, -1
 * on an error. */
static int feed(Session *s, int32_t id)
{
    int r = session_make_room(s, 1);
    if (r != 0) return r;
    s->history[s->seq.n_past] = id;
    if (forward_batch(&s->model, &s->ws, &s->seq, &id, 1, s->seq.n_past, 0) != 0) return forward_failed(s);
    return 0;
}

/* NaN or +Inf logits come from non-finite weights (only the norms are
 * checked when loading): say so instead of sampling noise. With every
 * logit at -Inf nothing can be sampled either. */
int session_check_logits(Session *s)
{
    return session_check_row(s, s->ws.logits, &s->seq);
}

static int check_flags(Session *s, int bad, int any, SeqState *q);

int session_check_row(Session *s, const float *l, SeqState *q)
{
    /* one pass without branches: it runs for every slot's token of a step
     * while the other threads wait (a branch per logit cost 0.4 ms) */
    int bad = 0, any = 0;
    for (uint32_t i = 0; i < s->cfg.n_vocab; i++) {
        bad |= !(l[i] < INFINITY); /* NaN or +Inf */
        any |= l[i] > -INFINITY;
    }
    return check_flags(s, bad, any, q);
}

/* session_check_row's verdict from its two findings. */
static int check_flags(Session *s, int bad, int any, SeqState *q)
{
    if (bad) {
        uint32_t pos = q->n_past;
        seq_reset(q);
        return fail(s, "%s: the model computed a non-finite logit at position %u (NaN or Inf weights?)",
                    s->opt.model_path, pos);
    }
    if (!any) {
        uint32_t pos = q->n_past;
        seq_reset(q);
        return fail(s, "%s: every logit is -Inf at position %u (broken weights?)", s->opt.model_path, pos);
    }
    return 0;
}

int session_check_scan(Session *s, const SessionScan *sc, SeqState *q)
{
    return check_flags(s, sc->bad, sc->any, q);
}

/* More threads than this scan on one (their shares would not fit ScanJob). */
enum { SCAN_THREADS = 32 };

typedef struct {
    Session *s;
    float *logits;
    int n, nth;               /* rows; the threads that took a share */
    SessionScan part[SCAN_THREADS][SESSION_MAX_SLOTS]; /* [thread][row]: its columns' findings */
    float max[SCAN_THREADS][SESSION_MAX_SLOTS];         /* and their largest logit */
} ScanJob;

/* Columns [lo, hi) of every row, split as forward.c splits the output
 * matrix's rows, in one pass: the check on the raw logits, the
 * --ignore-eos mask, the best (sampler.c's greedy rule within the share). */
static void scan_worker(void *ctx, int ith, int nth)
{
    ScanJob *j = ctx;
    Session *s = j->s;
    uint32_t nv = s->cfg.n_vocab, ne = nv < (uint32_t)s->tok.n_vocab ? nv : (uint32_t)s->tok.n_vocab;
    uint32_t lo = (uint32_t)((uint64_t)nv * (uint64_t)ith / (uint64_t)nth);
    uint32_t hi = (uint32_t)((uint64_t)nv * (uint64_t)(ith + 1) / (uint64_t)nth);
    if (ith == 0) j->nth = nth;
    const uint8_t *attr = s->tok.attr; /* in locals: the stores below could alias s */
    int eog = s->opt.ignore_eos;
    for (int r = 0; r < j->n; r++) {
        float *l = j->logits + (uint64_t)r * nv, max = -INFINITY;
        int bad = 0, any = 0;
        int32_t best = (int32_t)lo;
        for (uint32_t i = lo; i < hi; i++) {
            float v = l[i];
            bad |= !(v < INFINITY);
            any |= v > -INFINITY;
            if (eog && i < ne && (attr[i] & TOKEN_EOG)) l[i] = v = -INFINITY;
            if (v > max) max = v, best = (int32_t)i;
        }
        j->part[ith][r] = (SessionScan){best, (uint8_t)bad, (uint8_t)any};
        j->max[ith][r] = max;
    }
}

void session_scan_rows(Session *s, float *logits, int n, SessionScan *out)
{
    ScanJob j; /* 6 KiB */
    if (n < 1) return;
    j.s = s;
    j.logits = logits;
    j.n = n;
    if (port_threads() > 1 && port_threads() <= SCAN_THREADS) port_parallel(scan_worker, &j);
    else scan_worker(&j, 0, 1);
    int nth = j.nth;
    for (int r = 0; r < n; r++) {
        /* shares in column order: a later one wins only with a larger logit */
        SessionScan o = j.part[0][r];
        float max = j.max[0][r];
        for (int t = 1; t < nth; t++) {
            o.bad |= j.part[t][r].bad;
            o.any |= j.part[t][r].any;
            if (j.max[t][r] > max) max = j.max[t][r], o.best = j.part[t][r].best;
        }
        out[r] = o;
    }
}

static int sample_held(Session *s, Sampler *sm, Grammar *g, float *logits, SamplerTrace *tp, int32_t *out);

int session_sample_scan(Session *s, Sampler *sm, Grammar *g, float *logits, const SessionScan *sc, int32_t *out)
{
    /* the scan masked the end tokens already (--ignore-eos) */
    if (g || !sampler_plain_greedy(sm)) return sample_held(s, sm, g, logits, NULL, out);
    sampler_accept(sm, sc->best);
    *out = sc->best;
    return 0;
}

int session_set_grammar(Session *s, const char *text, size_t len, const char *name)
{
    s->grammar_on = 0;
    if (!s->opt.grammar) return fail(s, "%s: internal error: no grammar was planned", name);
    if (grammar_compile(&s->grammar, text, len, name, s->err, sizeof s->err) != 0) return -1;
    s->grammar_on = 1;
    return 0;
}

void session_clear_grammar(Session *s)
{
    s->grammar_on = 0;
}

int session_slot_grammar(Session *s, uint32_t slot, const char *text, size_t len, const char *name)
{
    if (!s->opt.grammar || slot >= s->n_slots || !s->slot_grammar[slot])
        return fail(s, "%s: internal error: no grammar was planned for slot %u", name, slot);
    return grammar_compile(s->slot_grammar[slot], text, len, name, s->err, sizeof s->err);
}

typedef struct {
    Session *s;
    Grammar *g;
} GrammarCtx;

static int grammar_allows_cb(void *ctx, int32_t id)
{
    GrammarCtx *gc = ctx;
    return grammar_allows(gc->g, &gc->s->tok, id);
}

static int grammar_allowed_cb(void *ctx, int cached_only, const uint64_t **bits)
{
    GrammarCtx *gc = ctx;
    Session *s = gc->s;
    uint32_t walks = gc->g->cache_misses;
    int n = grammar_allowed(gc->g, &s->gvocab, &s->tok, cached_only, bits, s->err, sizeof s->err);
    if (gc->g->cache_misses != walks) s->grammar_masks++;
    else if (n > 0) s->grammar_cached++;
    return n;
}

/* The next id from logits by sampler sm, held to g unless NULL. */
static int sample_held(Session *s, Sampler *sm, Grammar *g, float *logits, SamplerTrace *tp, int32_t *out)
{
    int32_t id;
    if (g) {
        /* only tokens that continue the grammar; each one taken into its state */
        GrammarCtx gc = {s, g};
        SamplerFilter f = {grammar_allows_cb, grammar_allowed_cb, &gc};
        s->err[0] = '\0';
        double t0 = port_seconds();
        id = sampler_sample_filtered(sm, logits, tp, &f);
        if (id < 0) return s->err[0] ? -1 : fail(s, "grammar: no token of the vocabulary can continue the text");
        if (!tokenizer_is_eog(&s->tok, id)) {
            size_t len;
            const char *piece = tokenizer_piece(&s->tok, id, &len);
            if (grammar_accept(g, piece, len) != 0)
                return fail(s, "internal error: the grammar refused token %d it allowed", (int)id);
        }
        s->grammar_seconds += port_seconds() - t0;
    } else {
        id = sampler_sample(sm, logits, tp);
    }
    sampler_accept(sm, id);
    *out = id;
    return 0;
}

/* --ignore-eos: the end-of-generation tokens never chosen (their attribute
 * bits read directly: a call per id cost 0.15 ms a token). */
static void mask_eog(Session *s, float *logits)
{
    uint32_t n = s->cfg.n_vocab < (uint32_t)s->tok.n_vocab ? s->cfg.n_vocab : (uint32_t)s->tok.n_vocab;
    if (!s->opt.ignore_eos) return;
    for (uint32_t i = 0; i < n; i++)
        if (s->tok.attr[i] & TOKEN_EOG) logits[i] = -INFINITY;
}

int session_sample_with(Session *s, Sampler *sm, Grammar *g, float *logits, int32_t *out)
{
    mask_eog(s, logits);
    return sample_held(s, sm, g, logits, NULL, out);
}

int session_sample(Session *s, int32_t *out)
{
    if (session_check_logits(s) != 0) return -1;
    float *logits = s->ws.logits;
    mask_eog(s, logits);
    SamplerTrace trace, *tp = s->opt.trace_path ? &trace : NULL;
    int32_t id;
    if (sample_held(s, &s->sampler, s->grammar_on ? &s->grammar : NULL, logits, tp, &id) != 0) return -1;
    if (tp) {
        size_t len = 0;
        const char *piece = tokenizer_piece(&s->tok, id, &len);
        trace.pos = s->seq.n_past;
        size_t n = sampler_trace_json(&trace, piece, len, s->trace_line, TRACE_LINE_CAP);
        if (n >= TRACE_LINE_CAP) return fail(s, "--trace: a trace line is longer than %d bytes", TRACE_LINE_CAP);
        char werr[512];
        if (port_write_file(s->opt.trace_path, s->trace_line, n, 1, werr, sizeof werr) != 0)
            return fail(s, "--trace: %s", werr);
    }
    *out = id;
    return 0;
}

int session_generate(Session *s, const GenOptions *g, GenResult *r)
{
    memset(r, 0, sizeof *r);
    r->stop = GEN_LENGTH;
    double t0 = port_seconds();
    while (r->n_gen < g->max_tokens) {
        int code;
        if (g->stop_requested && (code = g->stop_requested(g->ctx)) != 0) {
            r->stop = GEN_CALLER;
            r->caller_code = code;
            break;
        }
        int32_t id;
        int rc = session_sample(s, &id);
        if (r->n_gen == 0) r->t_first = port_seconds() - t0;
        if (rc != 0) {
            r->stop = GEN_ERROR;
            return -1;
        }
        if (tokenizer_is_eog(&s->tok, id)) {
            r->stop = GEN_EOG;
            break;
        }
        if (s->out_ids && (uint64_t)r->n_gen < s->opt.max_out_ids) s->out_ids[r->n_gen] = id;
        r->n_gen++;
        if (g->on_token && (code = g->on_token(g->ctx, id)) != 0) {
            r->stop = GEN_CALLER;
            r->caller_code = code;
            break;
        }
        if (r->n_gen == g->max_tokens && !g->feed_last) break;
        rc = feed(s, id);
        if (rc < 0) {
            r->stop = GEN_ERROR;
            return -1;
        }
        if (rc > 0) {
            r->stop = GEN_CONTEXT_FULL;
            break;
        }
        r->n_fed++;
    }
    return 0;
}

int session_emit(Session *s, TokenStream *ts, int32_t id)
{
    int n = token_stream_push(ts, &s->tok, id, s->piece, s->piece_cap);
    if (n < 0) return 0;
    return port_out_bytes(s->piece, (size_t)n);
}
