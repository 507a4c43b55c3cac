/* test_spec.c - speculative decoding's acceptance rule keeps the target's
 * distribution: on a tiny random model (mkmodel) at temperature 1 with the
 * two best tokens (top-k 2: prompt lookup's drafts then come often), the
 * last token of N replies seeded 1..N without speculation and of N replies
 * seeded N+1..2N with prompt lookup is tallied, and a two-sample
 * chi-square test (significance level 0.001) must not tell them apart;
 * the same test must tell apart replies made with a wrong rule (a rejected
 * draft's token drawn again from p instead of from the residual:
 * EngineOptions.spec_test_broken), or it could not fail. The same seeds
 * give the same replies with and without speculation (t_spec.sh checks
 * that on every architecture). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../port/port.h"
#include "../src/engine/engine.h"
#include "check.h"
#include "tools/fixtures.h"

enum { N_RUNS = 300, N_GEN = 12, CELLS = 4 };

static const int32_t prompt[] = {5, 80, 300, 17, 250, 9, 120, 66, 200, 31, 5, 80, 300, 17, 250, 9, 120, 66, 200, 31, 4, 77};

/* The last token of each of N_RUNS replies seeded from seed0 on, into last. */
static int replies(const char *model, int spec, int broken, uint64_t seed0, int32_t *last)
{
    static Engine e;
    EngineOptions o;
    engine_defaults(&o);
    o.model_path = model;
    o.n_ctx = 128;
    o.threads = 1;
    o.seed = 1;
    o.max_out_ids = N_GEN;
    o.sampling.temperature = 1.0f;
    o.sampling.top_k = 2;
    o.sampling.top_p = 1.0f;
    o.sampling.min_p = 0.0f;
    o.sampling_set[ENGINE_SET_TEMP] = o.sampling_set[ENGINE_SET_TOP_K] = 1;
    o.sampling_set[ENGINE_SET_TOP_P] = o.sampling_set[ENGINE_SET_MIN_P] = 1;
    o.spec_type = spec ? ENGINE_SPEC_NGRAM_SIMPLE : ENGINE_SPEC_NONE;
    o.draft_max = 4;
    o.spec_test_broken = broken;
    if (engine_open(&e, &o) != 0) {
        printf("# %s: %s\n", model, e.err);
        return -1;
    }
    Slot *s = engine_slot(&e, 0);
    uint32_t drafted = 0;
    for (int r = 0; r < N_RUNS; r++) {
        SlotRequest rq;
        slot_request_defaults(&e, &rq);
        rq.n_predict = N_GEN;
        rq.sampling.seed = seed0 + (uint64_t)r;
        slot_reset(s);
        if (slot_start(&e, s, prompt, (int)(sizeof prompt / sizeof prompt[0]), &rq) != 0) break;
        engine_run_slot(&e, s, NULL, NULL);
        if (s->n_gen != N_GEN) break;
        last[r] = s->out_ids[N_GEN - 1];
        drafted += s->n_drafted;
    }
    engine_close(&e);
    if (spec) printf("# %s%s: %u drafts in %d replies\n", model, broken ? " (wrong rule)" : "", drafted, N_RUNS);
    return 0;
}

/* The two-sample chi-square statistic of a and b (N_RUNS ids each) over
 * the CELLS - 1 commonest ids of both and the rest; *df its degrees of
 * freedom. */
static double chi_square(const int32_t *a, const int32_t *b, int *df)
{
    int32_t id[CELLS - 1];
    int n_id = 0;
    /* the commonest ids, by counting each candidate */
    for (int c = 0; c < CELLS - 1; c++) {
        int best = 0;
        int32_t best_id = -1;
        for (int i = 0; i < 2 * N_RUNS; i++) {
            int32_t t = i < N_RUNS ? a[i] : b[i - N_RUNS], taken = 0, n = 0;
            for (int k = 0; k < n_id; k++) taken |= id[k] == t;
            if (taken) continue;
            for (int j = 0; j < 2 * N_RUNS; j++) n += (j < N_RUNS ? a[j] : b[j - N_RUNS]) == t;
            if (n > best) best = n, best_id = t;
        }
        if (best_id < 0) break;
        id[n_id++] = best_id;
    }
    double ca[CELLS] = {0}, cb[CELLS] = {0};
    for (int i = 0; i < N_RUNS; i++) {
        int k = 0, m = 0;
        while (k < n_id && id[k] != a[i]) k++;
        while (m < n_id && id[m] != b[i]) m++;
        ca[k]++;
        cb[m]++;
    }
    double x2 = 0;
    int cells = 0;
    for (int k = 0; k <= n_id; k++) {
        double tot = ca[k] + cb[k];
        if (tot == 0) continue;
        cells++;
        double ea = tot / 2, eb = tot / 2; /* equal sample sizes */
        x2 += (ca[k] - ea) * (ca[k] - ea) / ea + (cb[k] - eb) * (cb[k] - eb) / eb;
    }
    *df = cells - 1;
    return x2;
}

int main(void)
{
    /* the chi-square distribution's upper 0.001 quantiles, for 1..3 degrees of freedom */
    static const double crit[CELLS] = {0, 10.828, 13.816, 16.266};
    char path[256], cmd[1024];
    const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    const char *mk = getenv("PITH_MKMODEL") ? getenv("PITH_MKMODEL") : "build/asan/tools/mkmodel";
    snprintf(path, sizeof path, "%s/pith-test-spec-%d.gguf", tmp, (int)getpid());
    snprintf(cmd, sizeof cmd,
             "%s %s --arch qwen3 --layers 1 --embd 64 --ff 128 --heads 2 --kv-heads 1 --head-dim 32 --seed 3 >/dev/null 2>&1",
             mk, path);
    int made = system(cmd) == 0;
    CHECK(made, "a tiny model made by %s", mk);
    if (!made) CHECK_DONE();
    static int32_t plain[N_RUNS], spec[N_RUNS], wrong[N_RUNS], same_seeds[N_RUNS];
    int ok = replies(path, 0, 0, 1, plain) == 0 && replies(path, 1, 0, N_RUNS + 1, spec) == 0 &&
             replies(path, 1, 1, N_RUNS + 1, wrong) == 0 && replies(path, 1, 0, 1, same_seeds) == 0;
    remove(path);
    CHECK(ok, "the tiny model runs %d replies of %d tokens, plain, speculative and with the wrong rule", N_RUNS, N_GEN);
    if (!ok) CHECK_DONE();
    CHECK(!memcmp(plain, same_seeds, sizeof plain), "speculative replies seeded 1..%d end as plain ones do", N_RUNS);
    int df;
    double x2 = chi_square(plain, spec, &df);
    CHECK(df >= 1 && x2 < crit[df], "speculative sampling: chi-square %.2f with %d degrees of freedom, below %.3f (p > 0.001)",
          x2, df, df >= 1 ? crit[df] : 0);
    x2 = chi_square(plain, wrong, &df);
    CHECK(df >= 1 && x2 > crit[df], "the wrong rule: chi-square %.2f with %d degrees of freedom, above %.3f (p < 0.001)",
          x2, df, df >= 1 ? crit[df] : 0);
    CHECK_DONE();
}
