/* sampler.c - penalties, greedy, top-k, top-p, min-p, temperature, draw. */
#include "sampler.h"

#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "json.h"

/* ---- PRNG: xoshiro256**, seeded with splitmix64 -------------------------- */

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

void sampler_rng_seed(uint64_t s[4], uint64_t seed)
{
    uint64_t x = seed;
    for (int i = 0; i < 4; i++) s[i] = splitmix64(&x);
}

static uint64_t rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

uint64_t sampler_rng_next(uint64_t s[4])
{
    uint64_t result = rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

double sampler_rng_uniform(uint64_t s[4])
{
    return (double)(sampler_rng_next(s) >> 11) * (1.0 / 9007199254740992.0); /* 2^-53 */
}

/* ---- Parameters ---------------------------------------------------------- */

void sampler_defaults(int thinking, SamplerParams *p)
{
    memset(p, 0, sizeof *p);
    p->temperature = thinking ? 0.6f : 0.7f;
    p->top_p = thinking ? 0.95f : 0.8f;
    p->top_k = 20;
    p->min_p = 0.0f;
    p->repeat_penalty = 1.0f;
    p->repeat_last_n = 64;
    p->presence_penalty = 0.0f;
    p->frequency_penalty = 0.0f;
    p->seed = 0;
}

int sampler_params_check(const SamplerParams *p, char *err, size_t cap)
{
    const char *what = NULL;
    if (!isfinite(p->temperature) || p->temperature < 0) what = "temperature: must be a number >= 0";
    else if (p->top_k < 0) what = "top_k: must be >= 0";
    else if (!(p->top_p > 0 && p->top_p <= 1)) what = "top_p: must be in (0, 1]";
    else if (!(p->min_p >= 0 && p->min_p <= 1)) what = "min_p: must be in [0, 1]";
    else if (!(p->repeat_penalty > 0) || !isfinite(p->repeat_penalty)) what = "repeat_penalty: must be > 0";
    else if (p->repeat_last_n < 0 || p->repeat_last_n > SAMPLER_MAX_HISTORY) what = "repeat_last_n: must be in [0, 8192]";
    else if (!isfinite(p->presence_penalty)) what = "presence_penalty: must be a number";
    else if (!isfinite(p->frequency_penalty)) what = "frequency_penalty: must be a number";
    if (!what) return 0;
    if (err && cap) snprintf(err, cap, "%s", what);
    return -1;
}

/* ---- Setup ------------------------------------------------------------------ */

/* counts (uint16 per token, padded to 4 bytes) then the history ring */
static uint64_t counts_bytes(uint64_t n_vocab)
{
    return (n_vocab * sizeof(uint16_t) + 3) & ~(uint64_t)3;
}

void sampler_plan(int n_vocab, Plan *plan)
{
    uint64_t n = n_vocab > 0 ? (uint64_t)n_vocab : 1;
    plan_add(plan, "sampler candidates", plan_mul(plan, n, sizeof(SamplerCand)));
    plan_add(plan, "sampler penalty tables", counts_bytes(n) + SAMPLER_MAX_HISTORY * sizeof(int32_t));
}

int sampler_init(Sampler *s, Arena *arena, int n_vocab, const SamplerParams *p)
{
    memset(s, 0, sizeof *s);
    if (n_vocab <= 0 || sampler_params_check(p, NULL, 0) < 0) return -1;
    s->n_vocab = n_vocab;
    s->params = *p;
    s->cand = arena_take(arena, (uint64_t)n_vocab * sizeof(SamplerCand));
    /* one plan item holds both tables: carve it once and split it */
    uint8_t *tables = arena_take(arena, counts_bytes((uint64_t)n_vocab) + SAMPLER_MAX_HISTORY * sizeof(int32_t));
    if (!s->cand || !tables) return -1;
    s->counts = (uint16_t *)tables;
    s->history = (int32_t *)(tables + counts_bytes((uint64_t)n_vocab));
    sampler_reset(s);
    return 0;
}

void sampler_reset(Sampler *s)
{
    s->n_history = 0;
    s->history_next = 0;
    sampler_rng_seed(s->rng, s->params.seed);
}

void sampler_accept(Sampler *s, int32_t id)
{
    int cap = s->params.repeat_last_n;
    if (cap <= 0 || id < 0 || id >= s->n_vocab) return;
    s->history[s->history_next] = id;
    s->history_next = (s->history_next + 1) % cap;
    if (s->n_history < cap) s->n_history++;
}

/* ---- Ordering and selection -----------------------------------------------
 * Candidates are ordered by logit, descending, then id ascending: a total
 * order (ids are unique), so every selection is deterministic. */

static int better(SamplerCand a, SamplerCand b)
{
    return a.logit > b.logit || (a.logit == b.logit && a.id < b.id);
}

static void swap(SamplerCand *c, size_t i, size_t j)
{
    SamplerCand t = c[i];
    c[i] = c[j];
    c[j] = t;
}

/* Lomuto partition of c[lo..hi] (inclusive) around a median-of-three
 * pivot; returns the pivot's final index. */
static size_t partition(SamplerCand *c, size_t lo, size_t hi)
{
    size_t mid = lo + (hi - lo) / 2;
    if (better(c[mid], c[lo])) swap(c, mid, lo);
    if (better(c[hi], c[lo])) swap(c, hi, lo);
    if (better(c[hi], c[mid])) swap(c, hi, mid);
    swap(c, mid, hi); /* the median goes last */
    SamplerCand pivot = c[hi];
    size_t store = lo;
    for (size_t i = lo; i < hi; i++)
        if (better(c[i], pivot)) swap(c, i, store++);
    swap(c, store, hi);
    return store;
}

static void insertion_sort(SamplerCand *c, size_t lo, size_t hi_excl)
{
    for (size_t i = lo + 1; i < hi_excl; i++) {
        SamplerCand x = c[i];
        size_t j = i;
        while (j > lo && better(x, c[j - 1])) {
            c[j] = c[j - 1];
            j--;
        }
        c[j] = x;
    }
}

/* Sorts c[lo, hi) best first. */
static void sort_range(SamplerCand *c, size_t lo, size_t hi)
{
    while (hi - lo > 16) {
        size_t p = partition(c, lo, hi - 1);
        /* recurse into the smaller side, loop on the larger: O(log n) stack */
        if (p - lo < hi - p - 1) {
            sort_range(c, lo, p);
            lo = p + 1;
        } else {
            sort_range(c, p + 1, hi);
            hi = p;
        }
    }
    insertion_sort(c, lo, hi);
}

/* Rearranges c[lo, n) so that c[lo, lo+k) are its k best, sorted. */
static void select_top(SamplerCand *c, size_t lo, size_t n, size_t k)
{
    if (k == 0 || lo >= n) return;
    if (k > n - lo) k = n - lo;
    size_t target = lo + k - 1, a = lo, b = n - 1;
    while (b > a && b - a > 16) {
        size_t p = partition(c, a, b);
        if (p == target) break;
        if (target < p) b = p - 1;
        else a = p + 1;
    }
    if (b > a && b - a <= 16) insertion_sort(c, a, b + 1);
    sort_range(c, lo, lo + k);
}

/* Moves the k best of c[0, n) to c[0, k), sorted, in one pass with a heap
 * whose root is the worst kept candidate; most candidates cost one
 * comparison. Destroys the order (and copies) of c[k, n): only for when
 * the rest is not needed any more. */
static void sift_down(SamplerCand *c, size_t k, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, w = i;
        if (l < k && better(c[w], c[l])) w = l;
        if (r < k && better(c[w], c[r])) w = r;
        if (w == i) return;
        swap(c, i, w);
        i = w;
    }
}

static void take_top(SamplerCand *c, size_t n, size_t k)
{
    if (k >= n) {
        sort_range(c, 0, n);
        return;
    }
    for (size_t i = k / 2; i-- > 0;) sift_down(c, k, i);
    for (size_t i = k; i < n; i++) {
        if (better(c[i], c[0])) {
            c[0] = c[i];
            sift_down(c, k, 0);
        }
    }
    sort_range(c, 0, k);
}

/* ---- One step ------------------------------------------------------------------ */

static int penalties_on(const Sampler *s)
{
    const SamplerParams *p = &s->params;
    return s->n_history > 0 && (p->repeat_penalty != 1.0f || p->presence_penalty != 0.0f || p->frequency_penalty != 0.0f);
}

/* Whether the penalties change anything; if so, counts[id] holds each
 * id's occurrences in the history (the caller zeroes them again). */
static int count_history(Sampler *s)
{
    if (!penalties_on(s)) return 0;
    for (int i = 0; i < s->n_history; i++) s->counts[s->history[i]]++;
    return 1;
}

/* A logit after the penalties of a token seen count times. */
static float penalized(const SamplerParams *p, float l, int count)
{
    if (l <= 0) l *= p->repeat_penalty;
    else l /= p->repeat_penalty;
    return l - ((float)count * p->frequency_penalty + p->presence_penalty);
}

static void apply_penalties(Sampler *s)
{
    if (!count_history(s)) return;
    for (int i = 0; i < s->n_history; i++) {
        int32_t id = s->history[i];
        int c = s->counts[id];
        if (c == 0) continue; /* already done */
        s->cand[id].logit = penalized(&s->params, s->cand[id].logit, c);
        s->counts[id] = 0; /* leaves the table zeroed for the next step */
    }
}

/* The trace's top list from c[0, n) (the first k already sorted best
 * first), with probabilities exp((logit - max) / temp) / z. */
static void fill_top(SamplerTrace *t, const SamplerCand *c, int n, float max, float inv_temp, double z)
{
    t->n_top = 0;
    for (int i = 0; i < n && t->n_top < SAMPLER_TRACE_TOP; i++) {
        double p = exp((double)(c[i].logit - max) * inv_temp) / z;
        if (!(p > 0)) break;
        SamplerTraceCand *o = &t->top[t->n_top++];
        o->id = c[i].id;
        o->p = (float)p;
        o->logit = c[i].logit;
    }
}

static void load_candidates(Sampler *s, const float *logits)
{
    SamplerCand *c = s->cand;
    for (size_t i = 0; i < (size_t)s->n_vocab; i++) {
        c[i].logit = isnan(logits[i]) ? -INFINITY : logits[i];
        c[i].id = (int32_t)i;
    }
    apply_penalties(s);
}

static int32_t draw_from(Sampler *s, size_t n, size_t sorted, float max, SamplerTrace *trace, double z_full,
                         size_t n_all);

/* The trace of the whole of c[0, n) at temperature 1 (greedy's, and the
 * raw logits'): its SAMPLER_TRACE_TOP best, p = exp(logit - max) / z. */
static void whole_trace(SamplerCand *c, size_t n, float max, double z, SamplerTrace *trace)
{
    memset(trace, 0, sizeof *trace);
    take_top(c, n, SAMPLER_TRACE_TOP);
    fill_top(trace, c, (int)(n < SAMPLER_TRACE_TOP ? n : SAMPLER_TRACE_TOP), max, 1.0f, z);
    trace->greedy = 1;
    trace->n_kept = 1;
}

/* Greedy, or top-k then draw_from, over the loaded candidates c[0, n)
 * (the whole vocabulary, or the tokens a filter allows, in id order). */
static int32_t choose(Sampler *s, size_t n, SamplerTrace *trace)
{
    const SamplerParams *p = &s->params;
    SamplerCand *c = s->cand;

    /* the maximum and (for the trace) the full temperature-1 sum */
    size_t best = 0;
    for (size_t i = 1; i < n; i++)
        if (better(c[i], c[best])) best = i;
    float max = c[best].logit;
    if (max == -INFINITY) max = 0; /* every logit -inf: all equal, avoid inf - inf */
    double z_full = 0;
    if (trace) {
        for (size_t i = 0; i < n; i++) z_full += exp((double)(c[i].logit - max));
    }

    if (p->temperature <= 0) {
        int32_t id = c[best].id;
        if (trace) {
            whole_trace(c, n, max, z_full, trace);
            trace->id = id;
            trace->p = trace->n_top > 0 ? trace->top[0].p : 0;
            trace->kept_mass = trace->p;
        }
        return id;
    }

    size_t sorted = 0, n_all = n; /* c[0, sorted) are the best, in order */
    if (p->top_k > 0 && (size_t)p->top_k < (size_t)s->n_vocab) {
        /* top-k of the whole vocabulary; over fewer candidates (the allowed
         * ones) the same sort, so the sums below run in the same order */
        size_t k = (size_t)p->top_k < n ? (size_t)p->top_k : n;
        take_top(c, n, k);
        n = sorted = k;
    }
    return draw_from(s, n, sorted, max, trace, z_full, n_all);
}

static size_t top_of(Sampler *s, const float *logits, const uint64_t *bits, int sparse, size_t k);

int sampler_plain_greedy(const Sampler *s)
{
    return s->params.temperature <= 0 && !penalties_on(s);
}

int32_t sampler_sample(Sampler *s, const float *logits, SamplerTrace *trace)
{
    const SamplerParams *p = &s->params;
    if (!trace && (p->temperature <= 0 || (p->top_k > 0 && (size_t)p->top_k < (size_t)s->n_vocab))) {
        /* greedy or top-k: the k best straight from the logits (choose's
         * take_top without loading them all: one pass, as a step of pith
         * serve --slots samples every slot while the other threads wait) */
        size_t k = top_of(s, logits, NULL, 0, p->temperature <= 0 ? 1 : (size_t)p->top_k);
        if (p->temperature <= 0) return s->cand[0].id;
        return draw_from(s, k, k, s->cand[0].logit == -INFINITY ? 0 : s->cand[0].logit, NULL, 0, k);
    }
    load_candidates(s, logits);
    return choose(s, (size_t)s->n_vocab, trace);
}

/* top-p, min-p, temperature and the draw over c[0, n) (c[0, sorted) the
 * best in order; max the largest logit; n_all candidates before top-k). */
static int32_t draw_from(Sampler *s, size_t n, size_t sorted, float max, SamplerTrace *trace, double z_full,
                         size_t n_all)
{
    const SamplerParams *p = &s->params;
    SamplerCand *c = s->cand;
    size_t n_k = n, n_p;

    if (p->top_p < 1.0f) {
        double z = 0;
        for (size_t i = 0; i < n; i++) z += exp((double)(c[i].logit - max));
        double target = (double)p->top_p * z, cum = 0;
        size_t i = 0, want = n < 64 ? n : 64;
        for (;;) {
            if (want > sorted) {
                select_top(c, sorted, n, want - sorted);
                sorted = want;
            }
            for (; i < sorted; i++) {
                cum += exp((double)(c[i].logit - max));
                if (cum >= target) break;
            }
            if (i < sorted) {
                n = sorted = i + 1;
                break;
            }
            if (sorted == n) break; /* rounding kept everything */
            want = n / 4 < sorted ? n : sorted * 4;
        }
    }

    n_p = n;
    if (p->min_p > 0.0f) {
        float threshold = max + logf(p->min_p);
        size_t k = 0;
        for (size_t i = 0; i < n; i++)
            if (c[i].logit >= threshold) c[k++] = c[i]; /* keeps order, so a sorted prefix stays sorted */
        if (k == 0) k = 1;                             /* cannot happen (max passes), kept for safety */
        if (sorted > k) sorted = k;
        n = k;
    }

    /* temperature and the draw */
    float inv_temp = 1.0f / p->temperature;
    double z = 0;
    for (size_t i = 0; i < n; i++) z += exp((double)(c[i].logit - max) * inv_temp);
    size_t chosen = 0;
    if (z > 0 && isfinite(z)) {
        double u = sampler_rng_uniform(s->rng) * z, cum = 0;
        chosen = n - 1;
        for (size_t i = 0; i < n; i++) {
            cum += exp((double)(c[i].logit - max) * inv_temp);
            if (u < cum) {
                chosen = i;
                break;
            }
        }
    } else {
        /* every survivor underflowed (huge inv_temp): the best one */
        for (size_t i = 1; i < n; i++)
            if (better(c[i], c[chosen])) chosen = i;
    }
    int32_t id = c[chosen].id;
    float chosen_logit = c[chosen].logit;

    if (trace) {
        memset(trace, 0, sizeof *trace);
        trace->id = id;
        trace->n_kept = (int)n;
        trace->cut_top_k = (int)(n_all - n_k);
        trace->cut_top_p = (int)(n_k - n_p);
        trace->cut_min_p = (int)(n_p - n);
        double kept = 0;
        for (size_t i = 0; i < n; i++) kept += exp((double)(c[i].logit - max));
        trace->kept_mass = z_full > 0 ? (float)(kept / z_full) : 0;
        trace->p = z > 0 ? (float)(exp((double)(chosen_logit - max) * inv_temp) / z) : 1.0f;
        if (sorted < SAMPLER_TRACE_TOP && sorted < n) select_top(c, sorted, n, SAMPLER_TRACE_TOP - sorted);
        if (z > 0 && isfinite(z)) fill_top(trace, c, (int)n, max, inv_temp, z);
    }
    return id;
}

/* ---- Constrained: only tokens a filter allows ------------------------------------
 * Exactly the distribution of masking the refused tokens to -infinity and
 * running the chain on the whole vocabulary, without doing that:
 *  - a masked token never survives top-k, top-p or min-p ahead of an
 *    allowed one (it is worse than all of them) and weighs exp(-inf) = 0 in
 *    every sum, so the chain over only the allowed tokens, loaded in id
 *    order, keeps the same tokens in the same order, adds the same terms in
 *    the same order and draws the same token from the same PRNG draw;
 *  - greedy wants only the best allowed token: if the argmax is allowed it
 *    is the masked argmax, nothing else needs testing;
 *  - top-k (without a trace) draws from the k best allowed tokens and
 *    nothing else: penalties, top-p, min-p and temperature then see only
 *    those k, so testing the candidates best first until k pass gives the
 *    same k in the same order, whatever the rest of the vocabulary allows.
 *    With top-k off (or top-p alone) the draw needs the mass of every
 *    allowed token, so there is no such shortcut: the whole set is needed.
 * The set comes from the filter's cache when its state was seen before
 * (no testing at all), else best-first testing is tried once on the 2k
 * best (at least 32) and only then is the whole set asked for (the walk).
 * Few, as one pass for the m best costs about m ln(n / m) heap updates: on
 * the full vocabulary 256 of them cost more than a walk where few tokens
 * can follow and the k best of the set it gives; where nearly all can
 * follow (the walks that cost most), the 2k best hold k allowed ones. */

/* Applies the penalties to c[0, n), sorted by id (the allowed tokens only). */
static void apply_penalties_sparse(Sampler *s, size_t n)
{
    SamplerCand *c = s->cand;
    if (!count_history(s)) return;
    for (int i = 0; i < s->n_history; i++) {
        int32_t id = s->history[i];
        int count = s->counts[id];
        if (count == 0) continue;
        s->counts[id] = 0;
        size_t lo = 0, hi = n;
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (c[mid].id < id) lo = mid + 1;
            else hi = mid;
        }
        if (lo == n || c[lo].id != id) continue; /* refused: stays out */
        c[lo].logit = penalized(&s->params, c[lo].logit, count);
    }
}

/* Whether any of x[0, n) is above t (NaN is not): one vector compare per
 * few logits where the compiler has them, so a pass over the vocabulary
 * skips a block with no candidate at once. */
static inline int any_above(const float *x, float t, int n)
{
    int a = 0;
    for (int j = 0; j < n; j++) a |= x[j] > t;
    return a;
}

static int has(const uint64_t *bits, size_t id)
{
    return !bits || (bits[id >> 6] >> (id & 63) & 1);
}

/* The next id >= id set in bits[] over n ids, or n. */
static size_t next_set(const uint64_t *bits, size_t n, size_t id)
{
    if (id >= n) return n;
    size_t w = id >> 6;
    uint64_t x = bits[w] & (~0ull << (id & 63));
    while (!x) {
        if (++w >= (n + 63) / 64) return n;
        x = bits[w];
    }
    id = w * 64 + (size_t)__builtin_ctzll(x);
    return id < n ? id : n;
}

/* The k best candidates (penalized; of the ids set in bits, unless NULL;
 * sparse: few are, visit only them) into c[0, got), sorted best first;
 * returns got (< k when fewer are allowed). take_top's result without
 * loading the vocabulary into c: one pass over the logits in id order with
 * a heap whose root is the worst kept; a later id displaces it only with a
 * strictly larger logit (on a tie the lower id, kept already, is better),
 * so most ids cost one comparison. The ids the penalties change are left
 * out of the pass and offered after it, penalized. */
static size_t top_of(Sampler *s, const float *logits, const uint64_t *bits, int sparse, size_t k)
{
    SamplerCand *c = s->cand;
    size_t n = (size_t)s->n_vocab, got = 0, id = sparse ? next_set(bits, n, 0) : 0;
    int pen = count_history(s);
    for (; id < n && got < k; id = sparse ? next_set(bits, n, id + 1) : id + 1)
        if (has(bits, id) && !(pen && s->counts[id])) {
            c[got].logit = isnan(logits[id]) ? -INFINITY : logits[id];
            c[got++].id = (int32_t)id;
        }
    for (size_t i = got / 2; i-- > 0;) sift_down(c, got, i);
    float worst = got ? c[0].logit : 0;
    for (; id < n; id = sparse ? next_set(bits, n, id + 1) : id + 1) {
        /* blocks of 32, then of 8 in a block that has a candidate */
        if (!sparse && !(id & 7) && n - id >= 32) {
            int b = !(id & 31) && !any_above(logits + id, worst, 32) ? 32 : !any_above(logits + id, worst, 8) ? 8 : 0;
            if (b) {
                id += (size_t)b - 1;
                continue;
            }
        }
        float x = logits[id];
        if (x > worst && has(bits, id) && !(pen && s->counts[id])) {
            c[0].logit = x;
            c[0].id = (int32_t)id;
            sift_down(c, k, 0);
            worst = c[0].logit;
        }
    }
    for (int i = 0; pen && i < s->n_history; i++) {
        int32_t h = s->history[i];
        int count = s->counts[h];
        if (!count) continue;
        s->counts[h] = 0;
        if (!has(bits, (size_t)h)) continue;
        SamplerCand x = {penalized(&s->params, isnan(logits[h]) ? -INFINITY : logits[h], count), h};
        if (got < k) {
            c[got++] = x;
            for (size_t j = got / 2; got == k && j-- > 0;) sift_down(c, k, j);
        } else if (better(x, c[0])) {
            c[0] = x;
            sift_down(c, k, 0);
        }
    }
    sort_range(c, 0, got);
    return got;
}

int32_t sampler_sample_filtered(Sampler *s, float *logits, SamplerTrace *trace, const SamplerFilter *f)
{
    const SamplerParams *p = &s->params;
    size_t n = (size_t)s->n_vocab;
    SamplerCand *c = s->cand;
    const uint64_t *bits = NULL;
    int allowed = f->allowed(f->ctx, 1, &bits); /* 0: not at hand without a walk */
    if (allowed < 0) return -1;
    if (!trace && (p->temperature <= 0 || (p->top_k > 0 && (size_t)p->top_k < n))) {
        /* greedy or top-k: the k best allowed tokens, best first */
        size_t k = p->temperature <= 0 ? 1 : (size_t)p->top_k, kept = 0;
        if (!allowed) {
            size_t m = 2 * k < 32 ? 32 : 2 * k;
            m = top_of(s, logits, NULL, 0, m > n ? n : m);
            for (size_t i = 0; i < m && kept < k; i++)
                if (c[i].logit > -INFINITY && f->allows(f->ctx, c[i].id)) c[kept++] = c[i];
            if (kept < k) allowed = f->allowed(f->ctx, 0, &bits);
        }
        if (allowed < 0 || (kept < k && !allowed)) return -1;
        if (kept < k) kept = top_of(s, logits, bits, (size_t)allowed < n / 4, k);
        if (p->temperature <= 0) return c[0].id;
        return draw_from(s, kept, kept, c[0].logit == -INFINITY ? 0 : c[0].logit, NULL, 0, kept);
    }
    if (!allowed) allowed = f->allowed(f->ctx, 0, &bits);
    if (allowed <= 0) return -1;
    if (trace) {
        /* the trace reports the whole masked vocabulary */
        int masked = 0;
        for (size_t id = 0; id < n; id++)
            if (!(bits[id >> 6] >> (id & 63) & 1)) logits[id] = -INFINITY, masked++;
        int32_t id = sampler_sample(s, logits, trace);
        trace->n_masked = masked;
        return id;
    }
    size_t a = 0;
    for (size_t w = 0; w < (n + 63) / 64; w++)
        for (uint64_t x = bits[w]; x; x &= x - 1) {
            size_t id = w * 64 + (size_t)__builtin_ctzll(x);
            if (id >= n) break;
            c[a].logit = isnan(logits[id]) ? -INFINITY : logits[id];
            c[a++].id = (int32_t)id;
        }
    apply_penalties_sparse(s, a);
    return choose(s, a, NULL);
}

/* ---- For an API: the raw distribution, log probabilities ----------------------- */

void sampler_raw_trace(Sampler *s, const float *logits, SamplerTrace *t)
{
    SamplerCand *c = s->cand;
    size_t n = (size_t)s->n_vocab;
    float max = -INFINITY;
    for (size_t i = 0; i < n; i++) {
        c[i].logit = isnan(logits[i]) ? -INFINITY : logits[i];
        c[i].id = (int32_t)i;
        if (c[i].logit > max) max = c[i].logit;
    }
    if (max == -INFINITY) max = 0;
    double z = 0;
    for (size_t i = 0; i < n; i++) z += exp((double)(c[i].logit - max));
    whole_trace(c, n, max, z, t);
}

void sampler_trace_chosen(SamplerTrace *t, int32_t id, float logit)
{
    t->id = id;
    t->p = 0;
    if (t->n_top == 0 || isnan(logit)) return;
    /* p / p_best = exp(logit - logit_best): no second sum */
    t->p = (float)((double)t->top[0].p * exp((double)(logit - t->top[0].logit)));
    for (int i = 0; i < t->n_top; i++)
        if (t->top[i].id == id) t->p = t->top[i].p;
}

static float log_p(float p)
{
    return p > 0 ? logf(p) : -FLT_MAX; /* logf: log() would link musl's double log and its table (2.7 KB) */
}

void sampler_logprobs(const SamplerTrace *drawn, const SamplerTrace *raw, SamplerLogprobs *out)
{
    memset(out, 0, sizeof *out);
    const SamplerTrace *t = raw ? raw : drawn;
    out->chosen = (SamplerLogprob){drawn->id, log_p(t->p)};
    if (!raw && drawn->greedy) { /* nothing drawn: the chosen token had p = 1 */
        out->chosen.logprob = 0;
        out->n_top = 1;
        out->top[0] = out->chosen;
    } else {
        out->n_top = t->n_top;
        for (int i = 0; i < t->n_top; i++) out->top[i] = (SamplerLogprob){t->top[i].id, log_p(t->top[i].p)};
    }
    out->greedy = drawn->greedy;
    out->n_kept = drawn->n_kept;
    out->kept_mass = drawn->kept_mass;
    out->cut_top_k = drawn->cut_top_k;
    out->cut_top_p = drawn->cut_top_p;
    out->cut_min_p = drawn->cut_min_p;
    out->n_masked = drawn->n_masked;
}

/* ---- Trace as JSON --------------------------------------------------------------- */

typedef struct {
    char *buf;
    size_t cap, len;
} Line;

static void line_put(Line *l, const char *s, size_t n)
{
    if (l->len < l->cap) {
        size_t room = l->cap - l->len;
        memcpy(l->buf + l->len, s, n < room ? n : room);
    }
    l->len += n;
}

static void line_printf(Line *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void line_printf(Line *l, const char *fmt, ...)
{
    char tmp[128];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n > 0) line_put(l, tmp, (size_t)n < sizeof tmp ? (size_t)n : sizeof tmp - 1);
}

static void line_float(Line *l, double v)
{
    if (isfinite(v)) line_printf(l, "%.6g", v);
    else line_put(l, "null", 4);
}

size_t sampler_trace_json(const SamplerTrace *t, const char *piece, size_t piece_len, char *buf, size_t cap)
{
    Line l = {buf, cap, 0};
    line_printf(&l, "{\"pos\":%lld,\"id\":%d,\"piece\":", (long long)t->pos, (int)t->id);
    size_t e = json_escape_valid(piece, piece_len, l.len < cap ? buf + l.len : NULL, l.len < cap ? cap - l.len : 0);
    l.len += e;
    /* each malformed byte became the 3 bytes of U+FFFD: a longer text */
    int valid = e == json_escape(piece, piece_len, NULL, 0);
    if (!valid) {
        line_put(&l, ",\"piece_hex\":\"", 14);
        for (size_t i = 0; i < piece_len; i++) line_printf(&l, "%02x", (unsigned char)piece[i]);
        line_put(&l, "\"", 1);
    }
    line_put(&l, ",\"p\":", 5);
    line_float(&l, t->p);
    line_printf(&l, ",\"greedy\":%s,\"n_kept\":%d,\"kept_mass\":", t->greedy ? "true" : "false", t->n_kept);
    line_float(&l, t->kept_mass);
    line_put(&l, ",\"top\":[", 8);
    for (int i = 0; i < t->n_top && i < SAMPLER_TRACE_TOP; i++) {
        line_printf(&l, "%s{\"id\":%d,\"p\":", i ? "," : "", (int)t->top[i].id);
        line_float(&l, t->top[i].p);
        line_put(&l, ",\"logit\":", 9);
        line_float(&l, t->top[i].logit);
        line_put(&l, "}", 1);
    }
    line_put(&l, "]}\n", 3);
    if (l.len < cap) buf[l.len] = '\0';
    return l.len;
}
