/* test_sampler.c - greedy and tie rule, PRNG, seed reproducibility, top-k=1
 * equals greedy, sampling frequencies, penalties, top-k/top-p/min-p sets,
 * the trace line, the logprobs an API reports, top-k in one pass against loading the whole
 * vocabulary, the filtered (grammar) sampler against masking then
 * sampling. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "../port/port.h"
#include "../src/text/sampler.h"

typedef struct {
    Sampler s;
    void *mem;
    uint64_t size;
} Box;

static int box_init(Box *b, int n_vocab, const SamplerParams *p)
{
    Plan plan;
    plan_init(&plan);
    sampler_plan(n_vocab, &plan);
    b->size = plan.total;
    b->mem = port_arena_map((size_t)plan.total);
    if (!b->mem) return -1;
    Arena a;
    arena_init(&a, b->mem, plan.total);
    int r = sampler_init(&b->s, &a, n_vocab, p);
    /* the plan is exact: everything was used */
    if (r == 0 && a.used != plan.total) r = -2;
    return r;
}

static void box_free(Box *b)
{
    port_arena_unmap(b->mem, (size_t)b->size);
}

static SamplerParams params(float temp, int top_k, float top_p, float min_p)
{
    SamplerParams p;
    sampler_defaults(1, &p);
    p.temperature = temp;
    p.top_k = top_k;
    p.top_p = top_p;
    p.min_p = min_p;
    return p;
}

/* A reproducible pseudo-random logit vector (its own LCG, not the sampler's PRNG). */
static void fill_logits(float *l, int n, uint32_t seed)
{
    uint32_t x = seed * 2654435761u + 1;
    for (int i = 0; i < n; i++) {
        x = x * 1664525u + 1013904223u;
        l[i] = (float)((x >> 8) % 20000) / 1000.0f - 10.0f;
    }
}

static int argmax(const float *l, int n)
{
    int b = 0;
    for (int i = 1; i < n; i++)
        if (l[i] > l[b]) b = i;
    return b;
}

static void test_prng(void)
{
    uint64_t s[4];
    sampler_rng_seed(s, 0);
    uint64_t a = sampler_rng_next(s), b = sampler_rng_next(s), c = sampler_rng_next(s);
    /* expected values from an independent Python implementation of splitmix64 + xoshiro256** */
    CHECK(a == 0x99ec5f36cb75f2b4ull && b == 0xbf6e1f784956452aull && c == 0x1a5f849d4933e6e0ull,
          "xoshiro256** seed 0: first outputs");
    sampler_rng_seed(s, 42);
    a = sampler_rng_next(s);
    CHECK(a == 0x15780b2e0c2ec716ull, "xoshiro256** seed 42: first output");
    int in_range = 1;
    for (int i = 0; i < 10000; i++) {
        double u = sampler_rng_uniform(s);
        if (!(u >= 0 && u < 1)) in_range = 0;
    }
    CHECK(in_range, "uniform draws in [0, 1)");
}

static void test_greedy(void)
{
    Box b;
    SamplerParams p = params(0, 0, 1, 0);
    CHECK(box_init(&b, 1000, &p) == 0, "greedy: init, plan exact");
    float l[1000];
    int all = 1;
    for (uint32_t k = 0; k < 20; k++) {
        fill_logits(l, 1000, k);
        if (sampler_sample(&b.s, l, NULL) != argmax(l, 1000)) all = 0;
    }
    CHECK(all, "greedy: argmax on 20 random vectors");
    for (int i = 0; i < 1000; i++) l[i] = -1;
    l[700] = 5, l[300] = 5, l[999] = 5;
    CHECK(sampler_sample(&b.s, l, NULL) == 300, "greedy: lowest id on an exact tie");
    for (int i = 0; i < 1000; i++) l[i] = -INFINITY;
    CHECK(sampler_sample(&b.s, l, NULL) == 0, "greedy: all -inf gives id 0");
    for (int i = 0; i < 1000; i++) l[i] = 0;
    l[5] = NAN, l[6] = 1;
    CHECK(sampler_sample(&b.s, l, NULL) == 6, "greedy: NaN is never chosen");
    l[0] = NAN, l[5] = -2, l[6] = -1;
    CHECK(sampler_sample(&b.s, l, NULL) == 1, "greedy: NaN first, the best after it");
    l[0] = 0, l[5] = NAN, l[6] = 1;
    SamplerTrace t;
    l[5] = 0;
    int id = sampler_sample(&b.s, l, &t);
    /* softmax of [0 x 999, 1]: p(6) = e / (999 + e) */
    double want = exp(1.0) / (999.0 + exp(1.0));
    CHECK(id == 6 && t.greedy && t.n_kept == 1 && fabs(t.p - want) < 1e-6 && t.n_top == 20 && t.top[0].id == 6 &&
              t.top[1].id == 0 && t.top[2].id == 1,
          "greedy trace: softmax at temperature 1, top list by p then id");
    box_free(&b);
}

static void test_seed(void)
{
    SamplerParams p = params(1.0f, 0, 1, 0);
    p.seed = 1234;
    Box a, b, c;
    box_init(&a, 500, &p);
    box_init(&b, 500, &p);
    p.seed = 1235;
    box_init(&c, 500, &p);
    float l[500];
    int same = 1, differ = 0;
    for (uint32_t k = 0; k < 200; k++) {
        fill_logits(l, 500, k % 7);
        for (int i = 0; i < 500; i++) l[i] *= 0.3f; /* flat enough to make draws matter */
        int x = sampler_sample(&a.s, l, NULL), y = sampler_sample(&b.s, l, NULL), z = sampler_sample(&c.s, l, NULL);
        same &= x == y;
        differ += x != z;
    }
    CHECK(same, "seed: same seed, same 200 tokens");
    CHECK(differ > 50, "seed: another seed gives other tokens (%d/200 differ)", differ);
    sampler_reset(&a.s);
    sampler_reset(&b.s);
    fill_logits(l, 500, 3);
    for (int i = 0; i < 500; i++) l[i] *= 0.3f;
    int first = sampler_sample(&a.s, l, NULL);
    for (int i = 0; i < 5; i++) sampler_sample(&a.s, l, NULL);
    sampler_reset(&a.s);
    CHECK(sampler_sample(&a.s, l, NULL) == first, "seed: reset replays the draws");
    box_free(&a);
    box_free(&b);
    box_free(&c);
}

static void test_topk1(void)
{
    SamplerParams p = params(1.5f, 1, 0.5f, 0.0f);
    Box b;
    box_init(&b, 3000, &p);
    float l[3000];
    int all = 1;
    for (uint32_t k = 0; k < 30; k++) {
        fill_logits(l, 3000, k + 100);
        if (sampler_sample(&b.s, l, NULL) != argmax(l, 3000)) all = 0;
    }
    CHECK(all, "top-k 1 equals greedy (30 vectors, temperature 1.5)");
    box_free(&b);
}

static void test_frequencies(void)
{
    float l[3] = {logf(0.5f), logf(0.3f), logf(0.2f)};
    for (int pass = 0; pass < 2; pass++) {
        float temp = pass == 0 ? 1.0f : 0.5f;
        SamplerParams p = params(temp, 0, 1, 0);
        p.seed = 7;
        Box b;
        box_init(&b, 3, &p);
        int count[3] = {0, 0, 0};
        const int N = 20000;
        for (int i = 0; i < N; i++) count[sampler_sample(&b.s, l, NULL)]++;
        /* temperature 0.5 squares the probabilities: .25 .09 .04 over .38 */
        double want[3] = {0.5, 0.3, 0.2};
        if (pass == 1) want[0] = .25 / .38, want[1] = .09 / .38, want[2] = .04 / .38;
        int ok = 1;
        for (int k = 0; k < 3; k++) ok &= fabs((double)count[k] / N - want[k]) < 0.015;
        CHECK(ok, "frequencies at temperature %.1f: %d %d %d of %d (want %.3f %.3f %.3f)", temp, count[0], count[1],
              count[2], N, want[0], want[1], want[2]);
        box_free(&b);
    }
}

static void test_penalties(void)
{
    SamplerParams p = params(0, 0, 1, 0);
    p.repeat_penalty = 2.0f;
    p.presence_penalty = 0.5f;
    p.frequency_penalty = 0.1f;
    p.repeat_last_n = 3;
    Box b;
    box_init(&b, 4, &p);
    float l[4] = {2.0f, -2.0f, 1.0f, 0.5f};
    sampler_accept(&b.s, 3); /* pushed out of the window of 3 by the next three */
    sampler_accept(&b.s, 0);
    sampler_accept(&b.s, 1);
    sampler_accept(&b.s, 0);
    SamplerTrace t;
    int id = sampler_sample(&b.s, l, &t);
    /* id0: 2/2 - (2*0.1 + 0.5) = 0.3; id1: -2*2 - (0.1 + 0.5) = -4.6; id2 1; id3 0.5 (out of the window) */
    float want_logit[4] = {0.3f, -4.6f, 1.0f, 0.5f};
    int order[4] = {2, 3, 0, 1}, ok = t.n_top == 4;
    for (int i = 0; i < 4 && ok; i++)
        ok = t.top[i].id == order[i] && fabs(t.top[i].logit - want_logit[order[i]]) < 1e-6;
    CHECK(id == 2 && ok, "penalties: repeat (divide/multiply), frequency, presence, window of 3");
    CHECK(l[0] == 2.0f && l[1] == -2.0f, "penalties: caller's logits untouched");
    /* a second step gives the same (the count table was left clean) */
    SamplerTrace t2;
    sampler_sample(&b.s, l, &t2);
    CHECK(fabs(t2.top[2].logit - 0.3f) < 1e-6 && fabs(t2.top[3].logit + 4.6f) < 1e-6, "penalties: repeatable step");
    box_free(&b);
}

/* Draws many times and returns the set of ids seen as a bit mask. */
static unsigned seen_mask(Sampler *s, const float *l, int draws)
{
    unsigned m = 0;
    for (int i = 0; i < draws; i++) m |= 1u << sampler_sample(s, l, NULL);
    return m;
}

static void test_truncation(void)
{
    float l[5] = {logf(0.4f), logf(0.3f), logf(0.2f), logf(0.1f), -INFINITY};
    struct {
        int top_k;
        float top_p, min_p;
        int kept;
        unsigned mask;
        const char *what;
    } cases[] = {
        {0, 1.0f, 0.0f, 5, 0xf, "no truncation (the -inf token stays but is never drawn)"},
        {2, 1.0f, 0.0f, 2, 0x3, "top-k 2"},
        {0, 0.65f, 0.0f, 2, 0x3, "top-p 0.65 keeps 0.4+0.3"},
        {0, 0.75f, 0.0f, 3, 0x7, "top-p 0.75 keeps three"},
        {0, 0.3f, 0.0f, 1, 0x1, "top-p 0.3 keeps the first"},
        {0, 1.0f, 0.3f, 3, 0x7, "min-p 0.3: p >= 0.12"},
        {0, 1.0f, 0.8f, 1, 0x1, "min-p 0.8: p >= 0.32"},
        {3, 0.65f, 0.0f, 2, 0x3, "top-k 3 then top-p 0.65 (over the renormalized three)"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        SamplerParams p = params(1.0f, cases[c].top_k, cases[c].top_p, cases[c].min_p);
        p.seed = 99;
        Box b;
        box_init(&b, 5, &p);
        SamplerTrace t;
        sampler_sample(&b.s, l, &t);
        unsigned m = seen_mask(&b.s, l, 3000);
        CHECK(t.n_kept == cases[c].kept && m == cases[c].mask, "%s: kept %d, drew mask 0x%x", cases[c].what, t.n_kept, m);
        box_free(&b);
    }
    /* trace probabilities are renormalized over the kept set, and kept_mass is its untruncated mass */
    SamplerParams p = params(1.0f, 0, 0.65f, 0);
    Box b;
    box_init(&b, 5, &p);
    SamplerTrace t;
    sampler_sample(&b.s, l, &t);
    CHECK(t.n_top == 2 && t.top[0].id == 0 && fabs(t.top[0].p - 0.4 / 0.7) < 1e-5 && fabs(t.top[1].p - 0.3 / 0.7) < 1e-5 &&
              fabs(t.kept_mass - 0.7) < 1e-5,
          "top-p trace: p renormalized (%.4f %.4f), kept mass %.4f", t.top[0].p, t.top[1].p, t.kept_mass);
    box_free(&b);
}

static int cmp_desc(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return x < y ? 1 : x > y ? -1 : 0;
}

/* Top-p on the full Qwen3 vocabulary without top-k (the growing partial
 * selection) must keep exactly the brute-force nucleus. */
static void test_big_vocab(void)
{
    enum { N = 151936 };
    float *l = malloc(N * sizeof *l), *sorted = malloc(N * sizeof *sorted);
    int all = 1;
    for (int pass = 0; pass < 3; pass++) {
        float top_p = pass == 0 ? 0.9f : pass == 1 ? 0.5f : 0.999f;
        fill_logits(l, N, 500 + (uint32_t)pass);
        for (int i = 0; i < N; i++) l[i] *= 0.5f + (float)pass; /* different peakedness */
        memcpy(sorted, l, N * sizeof *l);
        qsort(sorted, N, sizeof *sorted, cmp_desc);
        double z = 0, cum = 0;
        for (int i = 0; i < N; i++) z += exp((double)(sorted[i] - sorted[0]));
        int want = N;
        for (int i = 0; i < N; i++) {
            cum += exp((double)(sorted[i] - sorted[0]));
            if (cum >= top_p * z) {
                want = i + 1;
                break;
            }
        }
        SamplerParams p = params(0.8f, 0, top_p, 0);
        Box b;
        box_init(&b, N, &p);
        SamplerTrace t;
        int id = sampler_sample(&b.s, l, &t);
        int ok = t.n_kept == want && l[id] >= sorted[want - 1] && t.n_top == (want < 20 ? want : 20);
        for (int i = 0; i < t.n_top && ok; i++) ok = t.top[i].logit == sorted[i];
        CHECK(ok, "full vocabulary, top-p %.3f: nucleus %d (brute force %d), top list sorted", top_p, t.n_kept, want);
        all &= ok;
        box_free(&b);
    }
    /* top-k 1000 (the heap selection) on the full vocabulary */
    fill_logits(l, N, 777);
    memcpy(sorted, l, N * sizeof *l);
    qsort(sorted, N, sizeof *sorted, cmp_desc);
    SamplerParams p = params(1.0f, 1000, 1.0f, 0);
    Box b;
    box_init(&b, N, &p);
    int ok = 1;
    for (int k = 0; k < 50 && ok; k++) {
        SamplerTrace t;
        int id = sampler_sample(&b.s, l, &t);
        ok = t.n_kept == 1000 && l[id] >= sorted[999] && t.n_top == 20;
        for (int i = 0; i < t.n_top && ok; i++) ok = t.top[i].logit == sorted[i];
    }
    CHECK(ok, "full vocabulary, top-k 1000: 50 draws inside the top 1000, top list sorted");
    box_free(&b);
    free(l);
    free(sorted);
    (void)all;
}

/* Top-k without a trace takes the k best straight from the logits (one
 * pass with a heap); with a trace the whole vocabulary is loaded and
 * selected as before: the same draws, step for step, on the full
 * vocabulary with ties, NaN, -inf and penalties. */
static void test_topk_fast(void)
{
    enum { N = 151936, STEPS = 60 };
    float *l = malloc(N * sizeof *l);
    static const struct {
        float temp, top_p, min_p;
        int top_k, penalties;
    } cases[] = {
        {0.7f, 0.8f, 0, 20, 0}, {1.0f, 1, 0.05f, 40, 0}, {1.0f, 1, 0, 1000, 0}, {0.8f, 0.9f, 0, 20, 1}, {1.0f, 1, 0, 1, 1},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        SamplerParams p = params(cases[c].temp, cases[c].top_k, cases[c].top_p, cases[c].min_p);
        if (cases[c].penalties) p.repeat_penalty = 1.5f, p.frequency_penalty = 0.3f, p.presence_penalty = -0.2f;
        p.seed = 77 + c;
        Box a, b;
        box_init(&a, N, &p);
        box_init(&b, N, &p);
        int same = 1;
        for (int step = 0; step < STEPS && same; step++) {
            fill_logits(l, N, (uint32_t)(step * 13 + c));
            if (step % 2) /* coarse logits: many ties */
                for (int i = 0; i < N; i++) l[i] = floorf(l[i] * 0.5f);
            for (int i = step; i < N; i += 9973) l[i] = (i / 9973) % 2 ? NAN : -INFINITY;
            SamplerTrace t;
            int32_t fast = sampler_sample(&a.s, l, NULL), full = sampler_sample(&b.s, l, &t);
            same = fast == full;
            if (!same) printf("# case %zu step %d: %d without the trace, %d with it\n", c, step, (int)fast, (int)full);
            /* the history the penalties see: the drawn ids and some the best tokens */
            sampler_accept(&a.s, fast), sampler_accept(&b.s, full);
            sampler_accept(&a.s, argmax(l, N)), sampler_accept(&b.s, argmax(l, N));
        }
        CHECK(same, "top-k %d%s, full vocabulary: the draws without a trace (one pass) = with it (all loaded), %d steps",
              cases[c].top_k, cases[c].penalties ? " with penalties" : "", STEPS);
        box_free(&a);
        box_free(&b);
    }
    free(l);
}

/* Equal logits: top-k keeps the lowest ids. */
static void test_topk_ties(void)
{
    float l[10];
    for (int i = 0; i < 10; i++) l[i] = 1.0f;
    SamplerParams p = params(1.0f, 3, 1.0f, 0);
    Box b;
    box_init(&b, 10, &p);
    unsigned m = seen_mask(&b.s, l, 2000);
    CHECK(m == 0x7, "top-k 3 on equal logits keeps ids 0, 1, 2 (mask 0x%x)", m);
    box_free(&b);
}

static void test_trace_json(void)
{
    SamplerTrace t;
    memset(&t, 0, sizeof t);
    t.pos = 12;
    t.id = 7;
    t.p = 0.5f;
    t.n_kept = 2;
    t.kept_mass = 0.75f;
    t.n_top = 2;
    t.top[0].id = 7, t.top[0].p = 0.5f, t.top[0].logit = 1.25f;
    t.top[1].id = 3, t.top[1].p = 0.5f, t.top[1].logit = -INFINITY;
    char buf[1024];
    size_t n = sampler_trace_json(&t, "a\"\n\xc3\xa9", 5, buf, sizeof buf);
    const char *want = "{\"pos\":12,\"id\":7,\"piece\":\"a\\\"\\n\xc3\xa9\",\"p\":0.5,\"greedy\":false,\"n_kept\":2,"
                       "\"kept_mass\":0.75,\"top\":[{\"id\":7,\"p\":0.5,\"logit\":1.25},{\"id\":3,\"p\":0.5,\"logit\":null}]}\n";
    CHECK(n == strlen(want) && strcmp(buf, want) == 0, "trace json line: %.*s", (int)(n ? n - 1 : 0), buf);
    n = sampler_trace_json(&t, "\xe4\xbd", 2, buf, sizeof buf);
    CHECK(strstr(buf, "\"piece\":\"\xef\xbf\xbd\xef\xbf\xbd\",\"piece_hex\":\"e4bd\"") != NULL,
          "trace json: partial UTF-8 piece -> U+FFFD and piece_hex");
    char small[10];
    size_t n2 = sampler_trace_json(&t, "\xe4\xbd", 2, small, sizeof small);
    CHECK(n2 == n && memcmp(small, buf, sizeof small) == 0, "trace json: short buffer, full length reported");
}

static void test_params(void)
{
    SamplerParams p;
    sampler_defaults(1, &p);
    CHECK(p.temperature == 0.6f && p.top_p == 0.95f && p.top_k == 20 && p.min_p == 0, "defaults: thinking");
    sampler_defaults(0, &p);
    CHECK(p.temperature == 0.7f && p.top_p == 0.8f && p.top_k == 20 && p.min_p == 0, "defaults: non-thinking");
    char err[128];
    CHECK(sampler_params_check(&p, err, sizeof err) == 0, "defaults are valid");
    p.top_p = 0;
    CHECK(sampler_params_check(&p, err, sizeof err) < 0 && strstr(err, "top_p"), "top_p 0 refused: %s", err);
    sampler_defaults(0, &p);
    p.repeat_last_n = SAMPLER_MAX_HISTORY + 1;
    CHECK(sampler_params_check(&p, err, sizeof err) < 0, "repeat_last_n too large refused");
    sampler_defaults(0, &p);
    p.temperature = NAN;
    CHECK(sampler_params_check(&p, err, sizeof err) < 0, "NaN temperature refused");
}

/* ---- Filtered: the same draws as masking the refused tokens first -------- */

typedef struct {
    uint64_t *bits;
    int count;
    int cached;    /* the set is "at hand" (as from a grammar's cache) */
    int asked;     /* whole sets given */
} FakeFilter;

static int fake_allows(void *ctx, int32_t id)
{
    FakeFilter *f = ctx;
    return (int)(f->bits[id >> 6] >> (id & 63) & 1);
}

static int fake_allowed(void *ctx, int cached_only, const uint64_t **bits)
{
    FakeFilter *f = ctx;
    if (cached_only && !f->cached) return 0;
    f->asked++;
    *bits = f->bits;
    return f->count > 0 ? f->count : -1;
}

static void test_filtered(void)
{
    enum { N = 5000, STEPS = 300 };
    static float logits[N], masked[N], work[N];
    static uint64_t bits[(N + 63) / 64];
    struct {
        const char *what;
        SamplerParams p;
    } cases[] = {
        {"greedy", params(0, 20, 1, 0)},
        {"top-k 20, top-p 0.8", params(0.7f, 20, 0.8f, 0)},
        {"top-k 40, min-p 0.05", params(1.0f, 40, 1, 0.05f)},
        {"top-k off, top-p 0.95", params(0.6f, 0, 0.95f, 0)},
        {"top-k off, temperature 1.5", params(1.5f, 0, 1, 0)},
        {"top-k 1000", params(1.0f, 1000, 1, 0)},
        {"penalties, top-k 20", params(0.8f, 20, 0.9f, 0)},
        {"penalties, greedy", params(0, 0, 1, 0)},
    };
    int n_cases = (int)(sizeof cases / sizeof cases[0]);
    /* densities: a handful of tokens (fewer than k), a few percent, nearly all */
    const int per_mille[] = {1, 40, 950};
    for (int c = 0; c < n_cases; c++) {
        SamplerParams p = cases[c].p;
        if (strncmp(cases[c].what, "penalties", 9) == 0) {
            p.repeat_penalty = 1.3f;
            p.frequency_penalty = 0.2f;
            p.presence_penalty = 0.1f;
        }
        p.seed = 1234 + (uint64_t)c;
        for (int d = 0; d < 3; d++)
            for (int cached = 0; cached < 2; cached++) {
                Box a, b;
                if (box_init(&a, N, &p) != 0 || box_init(&b, N, &p) != 0) {
                    CHECK(0, "filtered: box_init");
                    return;
                }
                FakeFilter f = {bits, 0, cached, 0};
                SamplerFilter filter = {fake_allows, fake_allowed, &f};
                int same = 1, trace_same = 1;
                uint32_t x = 99u + (uint32_t)d;
                for (int step = 0; step < STEPS && same; step++) {
                    fill_logits(logits, N, (uint32_t)(step * 7 + c * 131 + d));
                    if (step % 5 == 0) logits[(step * 37) % N] = -INFINITY;
                    memset(bits, 0, sizeof bits);
                    f.count = 0;
                    for (int id = 0; id < N; id++) {
                        x = x * 1664525u + 1013904223u;
                        if ((int)((x >> 8) % 1000) < per_mille[d]) {
                            bits[id >> 6] |= 1ull << (id & 63);
                            f.count++;
                        }
                    }
                    if (f.count == 0) {
                        bits[0] |= 1;
                        f.count = 1;
                    }
                    for (int id = 0; id < N; id++)
                        masked[id] = (bits[id >> 6] >> (id & 63) & 1) ? logits[id] : -INFINITY;
                    memcpy(work, logits, sizeof work);
                    int use_trace = step % 50 == 49;
                    SamplerTrace ta, tb;
                    int32_t got = sampler_sample_filtered(&a.s, work, use_trace ? &ta : NULL, &filter);
                    /* the reference with a trace: the whole vocabulary loaded, masked, selected */
                    int32_t want = sampler_sample(&b.s, masked, &tb);
                    if (got != want) {
                        printf("# %s, %d per mille, %s: step %d filtered %d, masked %d\n", cases[c].what, per_mille[d],
                               cached ? "cached" : "walked", step, (int)got, (int)want);
                        same = 0;
                    }
                    if (use_trace && (ta.n_top != tb.n_top || ta.p != tb.p || ta.n_kept != tb.n_kept)) trace_same = 0;
                    sampler_accept(&a.s, got);
                    sampler_accept(&b.s, want);
                }
                CHECK(same && trace_same, "filtered = masked then sampled: %s, %d per mille allowed, set %s (%d sets asked)",
                      cases[c].what, per_mille[d], cached ? "at hand" : "walked", f.asked);
                box_free(&a);
                box_free(&b);
            }
    }
}

/* What an API's logprobs report: the drawn distribution (greedy: the
 * chosen token alone, ln 1), or the raw logits' softmax, which is greedy's
 * trace when no penalty is on; each cut's count; the chosen token's p
 * outside the top list. */
static void test_logprobs(void)
{
    float l[5] = {logf(0.4f), logf(0.3f), logf(0.2f), logf(0.1f), -INFINITY};
    SamplerParams p = params(1.0f, 4, 0.65f, 0);
    Box b;
    box_init(&b, 5, &p);
    SamplerTrace t, raw;
    SamplerLogprobs lp;
    sampler_raw_trace(&b.s, l, &raw);
    int id = sampler_sample(&b.s, l, &t);
    sampler_trace_chosen(&raw, id, l[id]);
    sampler_logprobs(&t, NULL, &lp);
    CHECK(lp.chosen.id == id && fabsf(lp.chosen.logprob - logf(t.p)) < 1e-6f && lp.n_top == 2 &&
              fabsf(lp.top[0].logprob - logf(0.4f / 0.7f)) < 1e-5f && lp.cut_top_k == 1 && lp.cut_top_p == 2 &&
              lp.cut_min_p == 0 && lp.n_kept == 2 && fabsf(lp.kept_mass - 0.7f) < 1e-5f,
          "logprobs, drawn: top-k 4 cuts 1, top-p 0.65 cuts 2, p renormalized over the 2 kept");
    sampler_logprobs(&t, &raw, &lp);
    CHECK(lp.chosen.id == id && fabsf(lp.chosen.logprob - l[id]) < 1e-5f && lp.n_top == 4 &&
              fabsf(lp.top[3].logprob - logf(0.1f)) < 1e-5f && lp.cut_top_p == 2,
          "logprobs, raw: the logits' softmax, all 4 with p > 0; the cuts still the drawn ones");
    raw.n_top = 2; /* the chosen token outside the list: p from the best one's */
    sampler_trace_chosen(&raw, 3, l[3]);
    CHECK(fabsf(raw.p - 0.1f) < 1e-6f, "raw: a chosen token outside the top list, p %.6f", raw.p);
    box_free(&b);

    p = params(0, 0, 1, 0);
    box_init(&b, 5, &p);
    id = sampler_sample(&b.s, l, &t);
    sampler_raw_trace(&b.s, l, &raw);
    sampler_trace_chosen(&raw, id, l[id]);
    int same = raw.n_top == t.n_top && raw.p == t.p;
    for (int i = 0; same && i < t.n_top; i++) same = raw.top[i].id == t.top[i].id && raw.top[i].p == t.top[i].p;
    sampler_logprobs(&t, NULL, &lp);
    CHECK(same && id == 0 && lp.chosen.logprob == 0 && lp.n_top == 1 && lp.top[0].id == 0 && lp.top[0].logprob == 0,
          "logprobs, greedy: drawn is the chosen token alone at ln 1; raw equals the greedy trace");
    for (int i = 0; i < 5; i++) l[i] = -INFINITY;
    sampler_raw_trace(&b.s, l, &raw);
    sampler_trace_chosen(&raw, 0, l[0]);
    sampler_logprobs(&t, &raw, &lp);
    CHECK(raw.n_top == 0 && lp.chosen.logprob < -1e38f, "logprobs: every logit -inf: no candidate, p = 0 is -FLT_MAX");
    box_free(&b);
}

int main(void)
{
    test_prng();
    test_greedy();
    test_seed();
    test_topk1();
    test_frequencies();
    test_penalties();
    test_truncation();
    test_big_vocab();
    test_topk_ties();
    test_topk_fast();
    test_trace_json();
    test_logprobs();
    test_params();
    test_filtered();
    CHECK_DONE();
}
