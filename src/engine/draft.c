/* draft.c - the draft model of speculative decoding (-md, engine.h): a
 * smaller model of the same vocabulary, read into its own share of the one
 * arena, whose greedy choices the engine's model verifies in one step
 * (slot.c). Its caches follow the slots' ids: before drafting, a slot's
 * draft cache keeps what it shares with the slot's history and is fed the
 * rest, so rejected drafts, new prompts and context shifts need nothing
 * else. Models that keep a recurrent state do not draft (a state cannot go
 * back without a snapshot per token). */
#include <stdio.h>
#include <string.h>

#include "../../port/port.h"
#include "engine.h"

#define TOKENS_KEY "tokenizer.ggml.tokens"

static int draft_fail(Engine *e, PithStatus st, const char *what)
{
    e->status = st;
    snprintf(e->err, sizeof e->err, "%s: %s", e->opt.draft_path, what);
    return -1;
}

typedef struct {
    uint64_t off, end;
    uint32_t file;
    int found;
} TokensKv;

static int find_tokens(void *ctx, Gguf *g, const GgufKV *kv, GgufError *err)
{
    (void)g, (void)err;
    TokensKv *t = ctx;
    if (kv->key_len == sizeof TOKENS_KEY - 1 && !memcmp(kv->key, TOKENS_KEY, kv->key_len))
        *t = (TokensKv){kv->value_offset, kv->value_end, kv->file_index, 1};
    return 0;
}

/* The vocabulary's token texts as the file holds them: their byte count
 * and an FNV-1a hash of the bytes (read in pieces: nothing is planned yet). */
static int vocab_hash(Gguf *g, uint64_t *bytes, uint64_t *hash)
{
    TokensKv t = {0};
    GgufScanCallbacks cb = {find_tokens, NULL, &t};
    GgufError err = {0};
    if (gguf_walk(g, &cb, &err) != 0 || !t.found) return -1;
    uint8_t buf[4096];
    uint64_t h = 1469598103934665603ull;
    for (uint64_t at = t.off; at < t.end;) {
        size_t n = t.end - at < sizeof buf ? (size_t)(t.end - at) : sizeof buf;
        if (port_file_read(&g->files[t.file], at, buf, n) != 0) return -1;
        for (size_t i = 0; i < n; i++) h = (h ^ buf[i]) * 1099511628211ull;
        at += n;
    }
    *bytes = t.end - t.off;
    *hash = h;
    return 0;
}

int draft_open(Engine *e)
{
    EngineDraft *d = &e->draft;
    GgufError err = {0};
    if (gguf_open(&d->gguf, e->opt.draft_path, 0, NULL, &err) != 0 || model_read_config(&d->gguf, &d->cfg, &err) != 0) {
        e->status = err.status != PITH_OK ? err.status : PITH_BAD_INPUT;
        snprintf(e->err, sizeof e->err, "-md: %s", err.msg);
        return -1;
    }
    d->open = 1;
    if (model_recurrent_before(&d->cfg, d->cfg.n_layer))
        return draft_fail(e, PITH_UNSUPPORTED, "the draft model keeps a recurrent state; pith drafts with attention models only");
    uint64_t tb, th, db, dh;
    if (vocab_hash(&e->gguf, &tb, &th) != 0 || vocab_hash(&d->gguf, &db, &dh) != 0)
        return draft_fail(e, PITH_BAD_INPUT, "no " TOKENS_KEY " to compare the vocabularies by");
    if (d->cfg.n_vocab != e->cfg.n_vocab || tb != db || th != dh) {
        char why[256];
        snprintf(why, sizeof why, "its vocabulary (%u tokens) is not %s's (%u tokens): a draft needs the same tokens",
                 d->cfg.n_vocab, e->opt.model_path, e->cfg.n_vocab);
        return draft_fail(e, PITH_BAD_INPUT, why);
    }
    return 0;
}

/* The draft's options for the engine's: read into the arena, never
 * mapped or streamed (it is small, and its share of the plan is then all
 * it takes). */
static ModelOptions draft_options(const ModelOptions *mo)
{
    ModelOptions o = *mo;
    o.load = LOAD_READ;
    o.all_logits = 0;
    o.spec_rows = 0;
    o.stream_window = 0;
    return o;
}

static uint64_t draft_share(const Engine *e, const ModelOptions *mo)
{
    const EngineDraft *d = &e->draft;
    ModelOptions o = draft_options(mo);
    ModelConfig cfg = d->cfg;
    cfg.mapped = 0;
    Plan p;
    plan_init(&p);
    gguf_plan(&d->gguf, &p);
    forward_plan(&cfg, &o, &p);
    for (uint32_t i = 0; i < e->n_slots; i++) plan_add(&p, "draft ids", plan_mul(&p, o.n_ctx, sizeof(int32_t)));
    return p.overflow ? UINT64_MAX : p.total;
}

void draft_plan(const Engine *e, const ModelOptions *mo, Plan *p)
{
    if (e->draft.open) plan_add(p, "draft model (-md): weights, kv caches, workspace", draft_share(e, mo));
}

int draft_load(Engine *e)
{
    EngineDraft *d = &e->draft;
    if (!d->open) return 0;
    uint64_t share = draft_share(e, &e->mopt);
    void *base = arena_take(&e->arena, share);
    if (!base) return draft_fail(e, PITH_INTERNAL, "internal error: the draft model does not fit its plan");
    Arena a;
    arena_init(&a, base, share);
    GgufError err = {0};
    d->mopt = draft_options(&e->mopt);
    d->cfg.mapped = 0;
    if (gguf_index(&d->gguf, &a, &err) != 0 || model_load(&d->model, &d->gguf, &a, &d->cfg, &d->mopt, &err) != 0)
        return draft_fail(e, err.status != PITH_OK ? err.status : PITH_BAD_INPUT, err.msg);
    for (uint32_t i = 0; i < e->n_slots; i++)
        if (seq_init(&d->seq[i], &d->cfg, &d->mopt, &a) != 0)
            return draft_fail(e, PITH_INTERNAL, "internal error: the draft's caches do not fit its plan");
    if (workspace_init(&d->ws, &d->model, &d->mopt, &a, &err) != 0) return draft_fail(e, PITH_INTERNAL, err.msg);
    for (uint32_t i = 0; i < e->n_slots; i++)
        if (!(d->ids[i] = arena_take(&a, (uint64_t)d->mopt.n_ctx * sizeof(int32_t))))
            return draft_fail(e, PITH_INTERNAL, "internal error: the draft's ids do not fit its plan");
    return 0;
}

void draft_close(Engine *e)
{
    if (!e->draft.open) return;
    workspace_close(&e->draft.ws);
    gguf_close(&e->draft.gguf);
    e->draft.open = 0;
}

uint32_t draft_model_tokens(Engine *e, Slot *s, uint32_t n, int32_t *out, uint32_t max)
{
    EngineDraft *d = &e->draft;
    SeqState *q = &d->seq[s->index];
    int32_t *ids = d->ids[s->index];
    if (!d->open || max == 0 || n > d->mopt.n_ctx) return 0;
    /* what the draft cache shares with the slot's ids (the last one is fed
     * again, for its logits); its rings hold the window before that only
     * if no later position overwrote it */
    uint32_t k = 0;
    while (k < q->n_past && k < n && ids[k] == s->history[k]) k++;
    if (k == n) k--;
    q->n_past = d->high[s->index];
    if (!seq_can_resume(&d->cfg, q, k)) k = 0;
    if (k == 0) d->high[s->index] = 0;
    q->n_past = k;
    memcpy(ids + k, s->history + k, (size_t)(n - k) * sizeof(int32_t));
    uint32_t i = 0;
    while (q->n_past < n) {
        uint32_t step = n - q->n_past < d->ws.batch ? n - q->n_past : d->ws.batch;
        if (forward_batch(&d->model, &d->ws, q, ids + q->n_past, (int)step, q->n_past, 0) != 0) goto failed;
    }
    for (;;) {
        out[i] = (int32_t)forward_argmax(d->ws.logits, (int)d->cfg.n_vocab);
        if (++i == max || tokenizer_is_eog(&e->tok, out[i - 1]) || q->n_past >= d->mopt.n_ctx) break;
        ids[q->n_past] = out[i - 1];
        if (forward_batch(&d->model, &d->ws, q, ids + q->n_past, 1, q->n_past, 0) != 0) goto failed;
    }
    if (q->n_past > d->high[s->index]) d->high[s->index] = q->n_past;
    return i;
failed:
    seq_reset(q);
    d->high[s->index] = 0;
    return 0;
}
