/* The slots and the one step that advances them (engine.h): prompts with
 * prefix reuse, the context shift, sampling under a grammar, stopping,
 * and the text of a reply (UTF-8, stop strings, the think split, tool
 * calls) handed to the slot's sink. run, chat and serve all go through
 * here; so every reply gets the same treatment. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "../../port/port.h"
#include "../model/context_shift.h"
#include "engine.h"

/* The slot stops with an error: its sequence is emptied, so that no later
 * prompt reuses what a failed step may have half written. */
static int slot_fail(Slot *s, PithStatus status, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int slot_fail(Slot *s, PithStatus status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s->err, sizeof s->err, fmt, ap);
    va_end(ap);
    s->status = status;
    seq_reset(&s->seq);
    s->stop = SLOT_STOP_ERROR;
    s->state = SLOT_DONE;
    s->t_end = port_seconds();
    return -1;
}

/* A forward pass the slot took part in failed. */
static int forward_failed(Engine *e, Slot *s)
{
    return slot_fail(s, PITH_INTERNAL, "%s: %s", e->opt.model_path, e->ws.err);
}

void slot_request_defaults(const Engine *e, SlotRequest *rq)
{
    memset(rq, 0, sizeof *rq);
    rq->sampling = e->opt.sampling;
    rq->n_predict = -1;
    rq->tool_offset = TOOL_ABSENT;
    reply_text_init(&rq->text, 0, NULL, NULL);
}

Slot *engine_slot(Engine *e, uint32_t i)
{
    return i < e->n_slots ? &e->slots[i] : NULL;
}

uint32_t slot_common_prefix(const Slot *s, const int32_t *ids, int n)
{
    uint32_t k = 0;
    while (k < s->seq.n_past && k < (uint32_t)n && s->history[k] == ids[k]) k++;
    return k;
}

/* slot_copy_prefix's walk: each span of the destination (in
 * seq_state_spans' order) gets the source's span of the same index, found
 * by walking the source again (a few hundred spans: no table needed, and
 * the order is the one place that knows the layout). */
typedef struct {
    uint32_t want, at;
    const void *found;
} SpanFind;

static int find_span(void *ctx, void *p, uint64_t bytes)
{
    SpanFind *f = ctx;
    (void)bytes;
    if (f->at++ != f->want) return 0;
    f->found = p;
    return 1;
}

typedef struct {
    const ModelConfig *cfg;
    const SeqState *src;
    uint32_t n, index;
} SpanCopy;

static int copy_span(void *ctx, void *p, uint64_t bytes)
{
    SpanCopy *w = ctx;
    SpanFind f = {w->index++, 0, NULL};
    seq_state_spans(w->cfg, w->src, w->n, find_span, &f);
    if (f.found) memcpy(p, f.found, bytes);
    return 0;
}

int slot_holds_prefix(const Engine *e, const Slot *s, uint32_t n)
{
    return n > 0 && n <= s->seq.n_past && seq_can_resume(&e->cfg, &s->seq, n);
}

uint32_t slot_copy_prefix(Engine *e, Slot *dst, const Slot *src, uint32_t n)
{
    if (dst == src || !slot_holds_prefix(e, src, n)) return 0;
    SpanCopy w = {&e->cfg, &src->seq, n, 0};
    seq_state_spans(&e->cfg, &dst->seq, n, copy_span, &w);
    memcpy(dst->history, src->history, (size_t)n * sizeof(int32_t));
    dst->seq.n_past = n;
    return n;
}

/* ---- The text of a reply --------------------------------------------------- */

static void sink_text(Slot *s, int kind, const char *p, size_t n)
{
    if (s->rq.sink.text) s->rq.sink.text(s->rq.sink.ctx, kind, p, n);
}

/* What the stop strings and the think split let through: content goes on
 * through the tool-call splitter when the reply may hold calls. */
static void on_reply_text(void *ctx, int kind, const char *p, size_t n)
{
    Slot *s = ctx;
    if (kind == REPLY_CONTENT && s->rq.tools) tool_split_push(&s->split, p, n);
    else sink_text(s, kind, p, n);
}

static void on_split_content(void *ctx, const char *p, size_t n)
{
    sink_text(ctx, REPLY_CONTENT, p, n);
}

static void on_split_call(void *ctx, int index, const char *name, size_t name_len, const char *args, size_t args_len)
{
    Slot *s = ctx;
    if (s->rq.sink.tool_call) s->rq.sink.tool_call(s->rq.sink.ctx, index, name, name_len, args, args_len);
}

static void on_split_args(void *ctx, int index, const char *p, size_t n)
{
    Slot *s = ctx;
    if (s->rq.sink.tool_args) s->rq.sink.tool_args(s->rq.sink.ctx, index, p, n);
}

/* A generated token's text into the reply. */
static void emit(Engine *e, Slot *s, int32_t id)
{
    int len = token_stream_push(&s->ts, &e->tok, id, e->piece, e->piece_cap);
    if (len > 0 && reply_text_push(&s->rq.text, e->piece, (size_t)len)) s->stopped_word = 1;
}

/* The reply ends: what the pipeline held back goes out (not for a slot
 * stopped by its caller, or failed: nobody reads it). */
static void finish(Engine *e, Slot *s, SlotStop why)
{
    if (why != SLOT_STOP_CALLER && why != SLOT_STOP_ERROR) {
        int len = token_stream_flush(&s->ts, e->piece, e->piece_cap);
        if (len > 0) reply_text_push(&s->rq.text, e->piece, (size_t)len);
        reply_text_finish(&s->rq.text);
        if (s->rq.tools) tool_split_finish(&s->split);
    }
    s->stop = why;
    s->state = SLOT_DONE;
    s->t_end = port_seconds();
}

/* A new reply in slot s: its request, its text pipeline, its counters. */
static int begin_reply(Slot *s, const SlotRequest *rq)
{
    s->rq = *rq;
    s->rq.text.emit = on_reply_text;
    s->rq.text.ctx = s;
    token_stream_init(&s->ts);
    s->stop = SLOT_STOP_NONE;
    s->status = PITH_OK;
    s->err[0] = '\0';
    s->n_gen = 0;
    s->fed = 0;
    s->began = 0;
    s->stopped_word = 0;
    s->n_drafted = s->n_accepted = 0;
    s->spec_k = s->spec_wait = 0; /* the first step drafts --draft-max */
    s->t_start = port_seconds();
    s->t_begin = s->t_first = s->t_end = 0;
    if (s->grammar_on) grammar_reset(&s->grammar); /* each reply is one sentence of the grammar */
    if (rq->tools) {
        if (!s->split_buf) return slot_fail(s, PITH_INTERNAL, "internal error: no tool-call splitter was planned");
        tool_split_init(&s->split, rq->tool_format, s->split_buf, TOOL_BLOCK_CAP, on_split_content, on_split_call, s);
        if (rq->tool_format == TOOL_FORMAT_XML && rq->tool_body)
            tool_split_schemas(&s->split, rq->tool_body, rq->tool_body_len, rq->tool_offset, s->split_buf + TOOL_BLOCK_CAP,
                               TOOL_KINDS_CAP);
        if (rq->tool_progressive) tool_split_progressive(&s->split, on_split_args, rq->tool_held);
    }
    return 0;
}

int slot_set_grammar(Engine *e, Slot *s, const char *text, size_t len, const char *name)
{
    s->grammar_on = 0;
    if (!text) return 0;
    if (!e->opt.grammar) return slot_fail(s, PITH_INTERNAL, "%s: internal error: no grammar was planned", name);
    if (grammar_compile(&s->grammar, text, len, name, s->err, sizeof s->err) != 0) {
        s->status = PITH_BAD_INPUT;
        return -1;
    }
    s->grammar_on = 1;
    return 0;
}

int slot_start(Engine *e, Slot *s, const int32_t *ids, int n, const SlotRequest *rq)
{
    if (n < 1 || (uint32_t)n >= e->n_ctx)
        return slot_fail(s, PITH_NO_MEMORY, "prompt: %d tokens do not fit a context of %u with room to generate", n,
                         e->n_ctx);
    /* the last id is fed again, for its logits; the rings may have lost
     * the window before the prefix: then from the start */
    uint32_t k = slot_common_prefix(s, ids, n);
    if (k == (uint32_t)n) k--;
    if (rq->no_reuse || !seq_can_resume(&e->cfg, &s->seq, k)) k = 0;
    if (begin_reply(s, rq) != 0) return -1;
    s->sampler.params = rq->sampling;
    sampler_reset(&s->sampler);
    for (int t = 0; t < n; t++) sampler_accept(&s->sampler, ids[t]);
    memcpy(s->history + k, ids + k, (size_t)(n - (int)k) * sizeof(int32_t));
    s->seq.n_past = k;
    s->n_prompt = (uint32_t)n;
    s->n_cached = k;
    s->state = SLOT_PROMPT;
    return 0;
}

/* Makes room for n more positions in the slot's cache, shifting the
 * context (context_shift.h: the first --keep positions stay, half of the
 * rest is dropped) as often as needed. 0; 1 if they cannot fit
 * (--no-shift, or --keep leaves too little); -1 on an error. */
static int make_room(Engine *e, Slot *s, uint32_t n)
{
    SeqState *q = &s->seq;
    uint32_t keep = (uint32_t)e->opt.keep;
    while ((uint64_t)q->n_past + n > e->n_ctx) {
        uint32_t drop = e->opt.no_shift ? 0 : context_shift_amount(q->n_past, keep);
        if (drop == 0) return 1;
        char why[256];
        if (q->ring || q->recurrent) {
            /* sliding-window rings and recurrent states (LFM2, Qwen3.5) cannot be
             * shifted exactly: the kept tokens are fed again at their new
             * positions */
            uint32_t n_left = q->n_past - drop;
            memmove(s->history + keep, s->history + keep + drop, (size_t)(q->n_past - keep - drop) * sizeof(int32_t));
            seq_reset(q);
            if (n_left > 0 && forward_prompt(&e->model, &e->ws, q, s->history, (int)n_left) != 0)
                return forward_failed(e, s);
            e->n_shifts++;
            port_err("[context full: dropped %u tokens after the first %u, fed the %u left again]\n", drop, keep, q->n_past);
            continue;
        }
        if (context_shift(&e->model, q, keep, drop, why, sizeof why) != 0)
            return slot_fail(s, PITH_INTERNAL, "%s: %s", e->opt.model_path, why);
        memmove(s->history + keep, s->history + keep + drop, (size_t)(q->n_past - keep) * sizeof(int32_t));
        e->n_shifts++;
        port_err("[context full: dropped %u tokens after the first %u, %u left]\n", drop, keep, q->n_past);
    }
    return 0;
}

int slot_append(Engine *e, Slot *s, const int32_t *ids, int n, const SlotRequest *rq)
{
    int room = make_room(e, s, (uint32_t)n + 1);
    if (room != 0) return room;
    if (begin_reply(s, rq) != 0) return -1;
    for (int t = 0; t < n; t++) sampler_accept(&s->sampler, ids[t]);
    memcpy(s->history + s->seq.n_past, ids, (size_t)n * sizeof(int32_t));
    s->n_cached = s->seq.n_past;
    s->n_prompt = s->seq.n_past + (uint32_t)n;
    s->state = SLOT_PROMPT;
    return 0;
}

void slot_stop_soon(Slot *s)
{
    if (s->state == SLOT_PROMPT || s->state == SLOT_GENERATING) s->rq.n_predict = s->n_gen;
}

void slot_cancel(Slot *s)
{
    if (s->state != SLOT_IDLE && s->state != SLOT_DONE) {
        s->stop = SLOT_STOP_CALLER;
        s->state = SLOT_DONE;
        s->t_end = port_seconds();
    }
}

void slot_release(Slot *s)
{
    s->state = SLOT_IDLE;
}

void slot_reset(Slot *s)
{
    seq_reset(&s->seq);
    s->state = SLOT_IDLE;
}

/* ---- Checking and sampling the logits -------------------------------------- */

/* NaN or +Inf logits come from non-finite weights (only the norms are
 * checked when loading): say so instead of sampling noise. With every
 * logit at -Inf nothing can be sampled either. */
static int check_flags(Engine *e, Slot *s, int bad, int any)
{
    uint32_t pos = s->seq.n_past;
    if (bad)
        return slot_fail(s, PITH_BAD_INPUT,
                         "%s: the model computed a non-finite logit at position %u (NaN or Inf weights?)",
                         e->opt.model_path, pos);
    if (!any) return slot_fail(s, PITH_BAD_INPUT, "%s: every logit is -Inf at position %u (broken weights?)",
                               e->opt.model_path, pos);
    return 0;
}

/* A row of logits of a step, scanned once: whether it can be sampled, and
 * its best id once --ignore-eos has masked the end tokens (the lowest id
 * on ties, never a NaN's). */
typedef struct {
    int32_t best;
    uint8_t bad;              /* a NaN or +Inf */
    uint8_t any;              /* a logit above -Inf */
} Scan;

/* More threads than this scan on one (their shares would not fit ScanJob). */
enum { SCAN_THREADS = 32 };

typedef struct {
    Engine *e;
    float *logits;
    int n, nth;               /* rows; the threads that took a share */
    Scan part[SCAN_THREADS][ENGINE_MAX_SLOTS]; /* [thread][row]: its columns' findings */
    float max[SCAN_THREADS][ENGINE_MAX_SLOTS]; /* and their largest logit */
} ScanJob;

/* Columns [lo, hi) of every row, split as forward.c splits the output
 * matrix's rows, in one pass while they are in the thread's cache: the
 * check on the raw logits, the --ignore-eos mask, the best (sampler.c's
 * greedy rule within the share). */
static void scan_worker(void *ctx, int ith, int nth)
{
    ScanJob *j = ctx;
    Engine *e = j->e;
    uint32_t nv = e->cfg.n_vocab, ne = nv < (uint32_t)e->tok.n_vocab ? nv : (uint32_t)e->tok.n_vocab;
    uint32_t lo = (uint32_t)((uint64_t)nv * (uint64_t)ith / (uint64_t)nth);
    uint32_t hi = (uint32_t)((uint64_t)nv * (uint64_t)(ith + 1) / (uint64_t)nth);
    if (ith == 0) j->nth = nth;
    const uint8_t *attr = e->tok.attr; /* in locals: the stores below could alias e */
    int eog = e->opt.ignore_eos;
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
        j->part[ith][r] = (Scan){best, (uint8_t)bad, (uint8_t)any};
        j->max[ith][r] = max;
    }
}

/* Scans rows [0, n) of logits with the threads (a step's rows would
 * otherwise be read on one thread while the others wait). */
static void scan_rows(Engine *e, float *logits, int n, Scan *out)
{
    ScanJob j; /* 6 KiB */
    if (n < 1) return;
    j.e = e;
    j.logits = logits;
    j.n = n;
    if (port_threads() > 1 && port_threads() <= SCAN_THREADS) port_parallel(scan_worker, &j);
    else scan_worker(&j, 0, 1);
    int nth = j.nth;
    for (int r = 0; r < n; r++) {
        /* shares in column order: a later one wins only with a larger logit */
        Scan o = j.part[0][r];
        float max = j.max[0][r];
        for (int t = 1; t < nth; t++) {
            o.bad |= j.part[t][r].bad;
            o.any |= j.part[t][r].any;
            if (j.max[t][r] > max) max = j.max[t][r], o.best = j.part[t][r].best;
        }
        out[r] = o;
    }
}

typedef struct {
    Engine *e;
    Slot *s;
} GrammarCtx;

static int grammar_allows_cb(void *ctx, int32_t id)
{
    GrammarCtx *gc = ctx;
    return grammar_allows(&gc->s->grammar, &gc->e->tok, id);
}

static int grammar_allowed_cb(void *ctx, int cached_only, const uint64_t **bits)
{
    GrammarCtx *gc = ctx;
    Engine *e = gc->e;
    Grammar *g = &gc->s->grammar;
    uint32_t walks = g->cache_misses;
    int n = grammar_allowed(g, &e->gvocab, &e->tok, cached_only, bits, gc->s->err, sizeof gc->s->err);
    if (g->cache_misses != walks) e->grammar_masks++;
    else if (n > 0) e->grammar_cached++;
    return n;
}

/* The next id from logits by the slot's sampler, held to its grammar when
 * one is on (the id is then taken into the grammar's state). */
static int sample_held(Engine *e, Slot *s, float *logits, SamplerTrace *tp, int32_t *out)
{
    Sampler *sm = &s->sampler;
    int32_t id;
    if (s->grammar_on) {
        /* only tokens that continue the grammar; each one taken into its state */
        GrammarCtx gc = {e, s};
        SamplerFilter f = {grammar_allows_cb, grammar_allowed_cb, &gc};
        s->err[0] = '\0';
        double t0 = port_seconds();
        id = sampler_sample_filtered(sm, logits, tp, &f);
        if (id < 0) {
            if (s->err[0]) return slot_fail(s, PITH_INTERNAL, "%s", s->err);
            return slot_fail(s, PITH_BAD_INPUT, "grammar: no token of the vocabulary can continue the text");
        }
        if (!tokenizer_is_eog(&e->tok, id)) {
            size_t len;
            const char *piece = tokenizer_piece(&e->tok, id, &len);
            if (grammar_accept(&s->grammar, piece, len) != 0)
                return slot_fail(s, PITH_INTERNAL, "internal error: the grammar refused token %d it allowed", (int)id);
        }
        e->grammar_seconds += port_seconds() - t0;
    } else {
        id = sampler_sample(sm, logits, tp);
    }
    sampler_accept(sm, id);
    *out = id;
    return 0;
}

/* The slot's next token from its row of logits, with a --trace line and
 * its log probabilities (Slot.probs) when asked. The scan's best is the
 * choice when nothing else decides it. */
static int sample(Engine *e, Slot *s, float *logits, const Scan *sc, int32_t *out)
{
    int probs = s->probs && s->rq.probs && (uint32_t)s->n_gen < e->n_ctx ? s->rq.probs : SLOT_PROBS_NONE;
    SamplerTrace trace, raw, *tp = e->opt.trace_path || probs ? &trace : NULL;
    if (!s->grammar_on && !tp && sampler_plain_greedy(&s->sampler)) {
        sampler_accept(&s->sampler, sc->best);
        *out = sc->best;
        return 0;
    }
    /* the model's own distribution before a grammar masks the logits */
    if (probs == SLOT_PROBS_RAW) sampler_raw_trace(&s->sampler, logits, &raw);
    if (sample_held(e, s, logits, tp, out) != 0) return -1;
    if (probs == SLOT_PROBS_RAW) sampler_trace_chosen(&raw, *out, logits[*out]);
    if (probs) sampler_logprobs(&trace, probs == SLOT_PROBS_RAW ? &raw : NULL, &s->probs[s->n_gen]);
    if (e->opt.trace_path) {
        size_t len = 0;
        const char *piece = tokenizer_piece(&e->tok, *out, &len);
        trace.pos = s->seq.n_past;
        size_t n = sampler_trace_json(&trace, piece, len, e->trace_line, ENGINE_TRACE_LINE_CAP);
        if (n >= ENGINE_TRACE_LINE_CAP)
            return slot_fail(s, PITH_INTERNAL, "--trace: a trace line is longer than %d bytes", ENGINE_TRACE_LINE_CAP);
        char werr[512];
        if (port_write_file(e->opt.trace_path, e->trace_line, n, 1, werr, sizeof werr) != 0)
            return slot_fail(s, PITH_IO, "--trace: %s", werr);
    }
    return 0;
}

/* The logits of the slot's last fed token: begin the reply, then sample,
 * hand the token to the sink, and either stop or keep the token to feed.
 * draft: the token a verification step fed next (-1: none). */
static void on_logits(Engine *e, Slot *s, float *logits, const Scan *sc, int32_t draft)
{
    if (check_flags(e, s, sc->bad, sc->any) != 0) return;
    if (!s->began) {
        s->began = 1;
        s->t_begin = port_seconds();
        if (s->rq.sink.begin) s->rq.sink.begin(s->rq.sink.ctx);
    }
    if (s->rq.n_predict >= 0 && s->n_gen >= s->rq.n_predict) {
        finish(e, s, SLOT_STOP_LENGTH);
        return;
    }
    int32_t id = -1;
    int rc = sample(e, s, logits, sc, &id);
    /* tests only (t_spec.sh shows the distribution test fails with it): a
     * rejected draft's token drawn again from p, not from the residual */
    if (rc == 0 && draft >= 0 && id != draft && e->opt.spec_test_broken) rc = sample(e, s, logits, sc, &id);
    if (s->n_gen == 0) s->t_first = port_seconds();
    if (rc != 0) return;
    if (tokenizer_is_eog(&e->tok, id)) {
        finish(e, s, SLOT_STOP_EOG);
        return;
    }
    if (s->out_ids && (uint64_t)s->n_gen < e->opt.max_out_ids) s->out_ids[s->n_gen] = id;
    s->n_gen++;
    emit(e, s, id);
    int code = s->rq.sink.token ? s->rq.sink.token(s->rq.sink.ctx, id) : 0;
    if (s->stopped_word) finish(e, s, SLOT_STOP_WORD);
    else if (code) finish(e, s, SLOT_STOP_CALLER);
    else if (s->rq.n_predict >= 0 && s->n_gen >= s->rq.n_predict && !s->rq.feed_last) finish(e, s, SLOT_STOP_LENGTH);
    else {
        s->pending = id;
        s->state = SLOT_GENERATING;
    }
}

/* ---- Speculative decoding -------------------------------------------------------
 *
 * A generating slot's step feeds its waiting token and k drafted ones
 * after it, with logits at every position. Row i's logits are sampled as
 * plain decoding would sample them after the waiting token and drafts
 * 0..i-1 (the same sampler, grammar and PRNG draws, in the same order);
 * draft i stands while the token drawn equals it, and the first token
 * drawn that differs is the step's last. For a drafter that proposes one
 * token d with certainty (q = 1 at d), this is the standard rejection rule:
 * d is kept with probability p(d) = min(1, p(d)/q(d)), and a rejection's
 * token is drawn from p without d, renormalized: max(0, p - q)
 * renormalized. So the output is token for token plain decoding's, for a
 * seed as for greedy. What the rejected drafts wrote is then undone
 * (seq_undo_restore; a recurrent state is fed the kept tokens again). */

/* Drafts after the waiting token (in history at n_past) for a step with
 * room for `room` more tokens: how many went into history after it. */
static uint32_t slot_draft(Engine *e, Slot *s, int room)
{
    uint32_t max = (uint32_t)e->opt.draft_max, n = s->seq.n_past + 1;
    if (e->opt.spec_type == ENGINE_SPEC_NONE) return 0;
    if (s->spec_wait) {
        if (--s->spec_wait == 0) s->spec_k = 1;
        return 0;
    }
    if (s->spec_k == 0 || s->spec_k > max) s->spec_k = max;
    uint32_t k = s->spec_k;
    if ((int)k > room) k = room > 0 ? (uint32_t)room : 0;
    if (k > e->n_ctx - n) k = e->n_ctx - n; /* within the cache: a shift happens as in plain decoding */
    /* the reply's n_predict: drafts past its end would only be thrown away */
    if (s->rq.n_predict >= 0 && (int64_t)k > s->rq.n_predict - s->n_gen) k = (uint32_t)(s->rq.n_predict - s->n_gen);
    k = e->opt.spec_type == ENGINE_SPEC_DRAFT_SIMPLE ? draft_model_tokens(e, s, n, s->history + n, k)
                                                    : spec_ngram_draft(s->history, n, s->history + n, k);
    if (k) seq_undo_save(&e->cfg, &s->seq, k + 1, s->spec_undo);
    return k;
}

/* Rows 0..k of a verification step's logits (the waiting token fed at pos0
 * and k drafts): each sampled in turn while the drafts hold. Returns 1 if
 * the slot's state must be undone (slot_undo) after the step. */
static int slot_verify(Engine *e, Slot *s, float *logits, const Scan *sc, uint32_t k, uint32_t pos0)
{
    uint32_t i = 0;
    for (;; i++) {
        s->seq.n_past = pos0 + 1 + i; /* as plain decoding has it at this token */
        on_logits(e, s, logits + (uint64_t)i * e->cfg.n_vocab, &sc[i], i < k ? s->history[pos0 + 1 + i] : -1);
        if (i == k || s->state != SLOT_GENERATING || s->pending != s->history[pos0 + 1 + i]) break;
    }
    s->n_drafted += k;
    s->n_accepted += i;
    /* more drafts while they hold; while they fail, about as many as were
     * kept, and after a single one failed, none for a while */
    if (i == k) s->spec_k = 2 * s->spec_k;
    else if (i == 0 && s->spec_k == 1) s->spec_k = 0, s->spec_wait = 16;
    else s->spec_k = i + 1 > s->spec_k / 2 ? i + 1 : s->spec_k / 2;
    return i < k && !(s->state == SLOT_DONE && s->stop == SLOT_STOP_ERROR);
}

/* Takes back what the rejected drafts of the step from pos0 wrote: the
 * cache keeps positions up to n_past (set by slot_verify). */
static void slot_undo(Engine *e, Slot *s, uint32_t pos0, uint32_t k)
{
    uint32_t keep = s->seq.n_past;
    seq_undo_restore(&e->cfg, &s->seq, pos0, k + 1, keep, s->spec_undo);
    if (s->seq.n_past < keep) {
        ForwardPart pt = {&s->seq, &s->history[pos0], (int)(keep - pos0), pos0, FORWARD_LOGITS_NONE, -1};
        if (forward_parts(&e->model, &e->ws, &pt, 1) != 0) forward_failed(e, s);
    }
}

/* ---- The step ------------------------------------------------------------------ */

int engine_step(Engine *e, Slot *const *slots, int n)
{
    ForwardPart parts[ENGINE_MAX_SLOTS];
    Slot *who[ENGINE_MAX_SLOTS];
    int np = 0, used = 0, budget = (int)e->ws.batch;
    if (n > ENGINE_MAX_SLOTS) n = ENGINE_MAX_SLOTS;
    /* every generating slot's waiting token, once its cache has room */
    for (int i = 0; i < n; i++) {
        Slot *s = slots[i];
        s->fed = 0;
        if (s->state != SLOT_GENERATING || used >= budget) continue;
        int room = make_room(e, s, 1);
        if (room < 0) continue;
        if (room > 0) {
            finish(e, s, SLOT_STOP_CONTEXT);
            continue;
        }
        s->history[s->seq.n_past] = s->pending;
        uint32_t k = s->spec_drafted = slot_draft(e, s, budget - used - 1);
        parts[np] = (ForwardPart){&s->seq, &s->history[s->seq.n_past], 1 + (int)k, s->seq.n_past,
                                  k ? FORWARD_LOGITS_ALL : FORWARD_LOGITS_LAST, -1};
        who[np++] = s;
        used += 1 + (int)k;
    }
    /* then prompt chunks, in the caller's order, in what is left: a long
     * prompt holds the running replies for one step at most */
    for (int i = 0; i < n && used < budget; i++) {
        Slot *s = slots[i];
        if (s->state != SLOT_PROMPT) continue;
        int left = (int)(s->n_prompt - s->seq.n_past), k = left < budget - used ? left : budget - used;
        parts[np] = (ForwardPart){&s->seq, &s->history[s->seq.n_past], k, s->seq.n_past,
                                  k == left ? FORWARD_LOGITS_LAST : FORWARD_LOGITS_NONE, -1};
        s->fed = (uint32_t)k;
        who[np++] = s;
        used += k;
    }
    if (np == 0) return 0;
    if (forward_parts(&e->model, &e->ws, parts, np) != 0) {
        for (int p = 0; p < np; p++) forward_failed(e, who[p]);
        return np;
    }
    Scan scan[ENGINE_MAX_BATCH];
    for (uint32_t r = 0; r < e->ws.n_logits; r += ENGINE_MAX_SLOTS) /* ScanJob's rows at a time */
        scan_rows(e, e->ws.logits + (uint64_t)r * e->cfg.n_vocab,
                  (int)(e->ws.n_logits - r < ENGINE_MAX_SLOTS ? e->ws.n_logits - r : ENGINE_MAX_SLOTS), scan + r);
    int undo[ENGINE_MAX_SLOTS] = {0};
    for (int p = 0; p < np; p++) {
        int r = parts[p].logits_row;
        float *logits = e->ws.logits + (uint64_t)r * e->cfg.n_vocab;
        if (parts[p].logits == FORWARD_LOGITS_ALL)
            undo[p] = slot_verify(e, who[p], logits, &scan[r], who[p]->spec_drafted, parts[p].pos0);
        else if (r >= 0) on_logits(e, who[p], logits, &scan[r], -1);
    }
    /* after every slot's rows are read: an undo may feed again */
    for (int p = 0; p < np; p++)
        if (undo[p]) slot_undo(e, who[p], parts[p].pos0, who[p]->spec_drafted);
    return np;
}

void engine_run_slot(Engine *e, Slot *s, int (*stop_requested)(void *ctx), void *ctx)
{
    Slot *one[1] = {s};
    uint32_t from = s->seq.n_past, total = s->n_prompt - from;
    /* the prompt step by step, for the progress line a long prompt shows
     * on a terminal */
    int progress = s->state == SLOT_PROMPT;
    if (progress) port_progress("prompt", 0, 0, 0);
    while (s->state == SLOT_PROMPT || s->state == SLOT_GENERATING) {
        if (stop_requested && stop_requested(ctx)) slot_stop_soon(s);
        int prompt = s->state == SLOT_PROMPT;
        engine_step(e, one, 1);
        if (prompt && s->state == SLOT_PROMPT) port_progress("prompt", s->seq.n_past - from, total, 0);
        else if (progress) {
            port_progress_end();
            progress = 0;
        }
    }
    if (progress) port_progress_end();
}

/* engine_feed's and engine_prefill's failure: the sequence is reset, the
 * reason is the engine's. */
static int feed_failed(Engine *e, Slot *s)
{
    seq_reset(&s->seq);
    e->status = PITH_INTERNAL;
    snprintf(e->err, sizeof e->err, "%s: %s", e->opt.model_path, e->ws.err);
    return -1;
}

int engine_feed(Engine *e, Slot *s, const int32_t *ids, int n, int all_logits)
{
    if (forward_batch(&e->model, &e->ws, &s->seq, ids, n, s->seq.n_past, all_logits) != 0) return feed_failed(e, s);
    return 0;
}

int engine_prefill(Engine *e, Slot *s, const int32_t *ids, int n)
{
    if (forward_prompt(&e->model, &e->ws, &s->seq, ids, n) != 0) return feed_failed(e, s);
    return 0;
}

float *engine_logits(Engine *e, uint32_t *rows)
{
    *rows = e->ws.n_logits;
    return e->ws.logits;
}
