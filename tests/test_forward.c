/* test_forward.c - the forward pass against the reference fixtures.
 *
 * For every logits and greedy case of a qwen3 model in cases.tsv (F32 KV
 * cache, as the reference): logits within the fixtures' README's tolerance class;
 * greedy free-running ids and teacher forcing. Then, per model: the read
 * backend gives the same logits as mmap, 2 threads the same as 1, token by
 * token within tolerance of the reference and of the batch, an F16 cache
 * within the fixtures' README's F16-cache allowance, and the cache refuses to overflow.
 * The llama-architecture fixtures (stories260K) run the same checks.
 * Models of every architecture made by mkmodel: a step's stages fused and
 * a region per stage give the same bits (stage_layouts).
 * Last, small models written here with one thing wrong each must be
 * refused with a one-line message naming the problem. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../port/port.h"
#include "../src/model/forward.h"
#include "../src/base/ggml_type.h"
#include "../src/gguf/gguf.h"
#include "../src/model/model.h"
#include "../src/model/shortconv.h"
#include "check.h"
#include "tools/fixtures.h"
#include "tools/gguf_writer.h"
#include "tools/test_model.h"

typedef TestModel Loaded;

/* Feeds n tokens of the loaded model's one sequence at pos (forward_batch). */
static int step(Loaded *L, const int32_t *tokens, int n, uint32_t pos)
{
    return forward_batch(&L->m, &L->ws, &L->seq, tokens, n, pos, 0);
}

/* The same steps as `pith logits`, and the plan must be used exactly.
 * Returns NULL (and prints why) on failure. */
static Loaded *load(const char *path, int use_mmap, KvType kv, uint32_t n_ctx, uint32_t batch)
{
    ModelOptions opt = {.n_ctx = n_ctx, .kv_type = kv, .batch = batch, .all_logits = 1};
    Loaded *L = test_model_load(path, use_mmap, &opt);
    if (L)
        CHECK(L->used == L->size, "%s (%s): the plan of %llu bytes is used exactly (%llu)", path,
              L->cfg.mapped ? "mmap" : "read", (unsigned long long)L->size, (unsigned long long)L->used);
    return L;
}

static void unload(Loaded *L)
{
    test_model_free(L);
}

static float *run_all(Loaded *L, const int32_t *tokens, int n, int step)
{
    return test_model_logits(L, tokens, n, step);
}

static const char *fmt_cmp(const FixCompare *c)
{
    static char buf[200];
    snprintf(buf, sizeof buf, "max rel %.3g, max abs %.3g, mean KL %.3g, max KL %.3g, flips %d", c->max_rel,
             c->max_abs, c->mean_kl, c->max_kl, c->argmax_flips);
    return buf;
}

/* worst figures per model, for the summary */
typedef struct {
    char model[128];
    double max_rel, mean_kl, max_kl;
} Worst;

/* One logits case in steps of the loaded batch size against the reference;
 * returns its logits (the caller frees them), NULL if the run failed. */
static float *logits_case(Loaded *L, const FixCase *c, Worst *w)
{
    float *ref = fix_read_logits(c);
    CHECK(ref != NULL, "%s: reference logits readable", c->id);
    if (!ref) return NULL;
    float *ours = run_all(L, c->prompt, c->n_prompt, (int)L->opt.batch);
    CHECK(ours != NULL, "%s: forward runs", c->id);
    if (ours) {
        FixCompare cmp;
        fix_compare(ref, ours, c->n_pos, c->n_vocab, &cmp);
        CHECK(fix_within(c->tol, &cmp), "%s: logits within class %s (%s)", c->id, c->tol, fmt_cmp(&cmp));
        if (cmp.max_rel > w->max_rel) w->max_rel = cmp.max_rel;
        if (cmp.mean_kl > w->mean_kl) w->mean_kl = cmp.mean_kl;
        if (cmp.max_kl > w->max_kl) w->max_kl = cmp.max_kl;
    }
    free(ref);
    return ours;
}

static void greedy_case(Loaded *L, const FixCase *c)
{
    uint32_t V = L->m.cfg.n_vocab;
    /* (a) free-running: prompt as one batch, then one token per step */
    int32_t ids[64];
    int n_ids = c->n_expected, ok = 1;
    seq_reset(&L->seq);
    if (step(L, c->prompt, c->n_prompt, 0) != 0) ok = 0;
    for (int k = 0; ok && k < n_ids; k++) {
        ids[k] = forward_argmax(L->ws.logits, (int)V);
        if (k + 1 < n_ids && step(L, &ids[k], 1, L->seq.n_past) != 0) ok = 0;
    }
    int same = 0;
    while (ok && same < n_ids && ids[same] == c->expected[same]) same++;
    CHECK(ok && same >= c->exact_prefix, "%s: free-running greedy matches %d ids (%d required, exact_prefix)", c->id,
          same, c->exact_prefix);

    /* (b) teacher forcing: prompt + expected[0..n-2] in one pass */
    int n = c->n_prompt + n_ids - 1;
    int32_t *seq = malloc((size_t)n * sizeof *seq);
    memcpy(seq, c->prompt, (size_t)c->n_prompt * sizeof *seq);
    memcpy(seq + c->n_prompt, c->expected, (size_t)(n_ids - 1) * sizeof *seq);
    float *all = run_all(L, seq, n, (int)L->opt.batch);
    int checked = 0, wrong = 0;
    for (int k = 0; all && k < n_ids; k++) {
        if (c->gaps[k] < c->gap_threshold) continue;
        checked++;
        if (forward_argmax(all + (size_t)(c->n_prompt - 1 + k) * V, (int)V) != c->expected[k]) wrong++;
    }
    CHECK(all && wrong == 0, "%s: teacher forcing: %d of %d steps with gap >= %g wrong", c->id, wrong, checked,
          c->gap_threshold);
    free(all);
    free(seq);
}

static int bits_equal(const float *a, const float *b, size_t n)
{
    return a && b && memcmp(a, b, n * sizeof *a) == 0;
}

/* Backend, threads, token-by-token, F16 cache and a full cache, on one case,
 * given its logits in one batch (logits_case's, run just before: L's cache
 * still holds them; freed here). */
static void variants(Loaded *L, const FixCase *c, const char *path, float *batch)
{
    uint32_t V = L->m.cfg.n_vocab;
    size_t n = (size_t)c->n_pos * V;
    float *ref = fix_read_logits(c);
    FixCompare cmp;

    /* rewinding: from the cache the batch run filled, go back to the middle
     * and feed the rest again (a retried chat turn); the cache must behave
     * as if fresh */
    if (batch && c->n_prompt >= 4) {
        int half = c->n_prompt / 2, rest = c->n_prompt - half;
        int ok = L->seq.n_past == (uint32_t)c->n_prompt;
        int32_t junk[3] = {3, 4, 5};
        ok = ok && step(L, junk, 3, (uint32_t)half) == 0; /* overwrite with other tokens */
        ok = ok && step(L, c->prompt + half, rest < (int)L->opt.batch ? rest : (int)L->opt.batch, (uint32_t)half) == 0;
        int fed = rest < (int)L->opt.batch ? rest : (int)L->opt.batch;
        CHECK(ok && L->seq.n_past == (uint32_t)(half + fed) &&
                  memcmp(L->ws.logits, batch + (size_t)(half + fed - 1) * V, V * sizeof(float)) == 0,
              "%s: rewinding to position %d and feeding again gives the fresh logits", c->id, half);
        CHECK(step(L, junk, 1, L->seq.n_past + 1) != 0 && strstr(L->ws.err, "past the"),
              "%s: feeding beyond the filled positions is refused (%s)", c->id, L->ws.err);
    }

    port_set_threads(2);
    float *two = run_all(L, c->prompt, c->n_prompt, (int)L->opt.batch);
    port_set_threads(1);
    CHECK(bits_equal(batch, two, n), "%s: 2 threads give the same logits as 1", c->id);
    /* the step as one parallel region (forward.c: step_worker) against a
     * region per stage (as streamed weights run; layer.h); 3 threads: q, k
     * and v by rows where the kv heads do not divide among them */
    CHECK(L->ws.act_mid != NULL, "%s: the workspace has the second-stage activation buffer", c->id);
    port_set_threads(3);
    float *three = run_all(L, c->prompt, c->n_prompt, (int)L->opt.batch);
    float *three1 = run_all(L, c->prompt, c->n_prompt, 1);
    L->ws.regions_per_op = 1;
    float *per_op3 = run_all(L, c->prompt, c->n_prompt, 1);
    port_set_threads(2);
    float *per_op2 = run_all(L, c->prompt, c->n_prompt, (int)L->opt.batch);
    port_set_threads(1);
    float *per_op1 = run_all(L, c->prompt, c->n_prompt, (int)L->opt.batch);
    L->ws.regions_per_op = 0;
    CHECK(bits_equal(batch, per_op1, n) && bits_equal(batch, per_op2, n),
          "%s: a step in one parallel region gives the logits of a region per stage (1 and 2 threads)", c->id);
    CHECK(bits_equal(batch, three, n) && bits_equal(three1, per_op3, n),
          "%s: 3 threads: the same logits as 1, and token by token as a region per stage", c->id);
    free(three);
    free(three1);
    free(per_op3);
    free(per_op2);
    free(per_op1);

    float *single = run_all(L, c->prompt, c->n_prompt, 1);
    if (single && batch) {
        fix_compare(batch, single, c->n_pos, c->n_vocab, &cmp);
        CHECK(fix_within(c->tol, &cmp), "%s: token by token agrees with the batch (%s)", c->id, fmt_cmp(&cmp));
        fix_compare(ref, single, c->n_pos, c->n_vocab, &cmp);
        CHECK(fix_within(c->tol, &cmp), "%s: token by token within class %s of the reference", c->id, c->tol);
    } else {
        CHECK(0, "%s: token by token runs", c->id);
    }

    Loaded *R = load(path, 0, KV_F32, 64, 7); /* read backend, another batch size */
    CHECK(R && !R->cfg.mapped, "%s: loads with the read backend (--no-mmap)", c->id);
    if (R) {
        float *rd = run_all(R, c->prompt, c->n_prompt, 7);
        fix_compare(ref, rd ? rd : batch, c->n_pos, c->n_vocab, &cmp);
        CHECK(rd && fix_within(c->tol, &cmp), "%s: read backend, steps of 7: within class %s (%s)", c->id, c->tol,
              fmt_cmp(&cmp));
        free(rd);
        unload(R);
    }
    Loaded *R1 = load(path, 0, KV_F32, 64, L->opt.batch);
    if (R1) {
        float *rd = run_all(R1, c->prompt, c->n_prompt, (int)L->opt.batch);
        CHECK(bits_equal(batch, rd, n), "%s: read backend gives the same logits as mmap", c->id);
        free(rd);
        unload(R1);
    }

    /* F16 cache: README section 6 allows 1e-3 * m_p for F32 models */
    Loaded *H = load(path, 1, KV_F16, 64, L->opt.batch);
    if (H) {
        float *h16 = run_all(H, c->prompt, c->n_prompt, (int)L->opt.batch);
        fix_compare(ref, h16 ? h16 : batch, c->n_pos, c->n_vocab, &cmp);
        double lim = fix_rel_limit(c->tol) > 1e-3 ? fix_rel_limit(c->tol) : 1e-3;
        int ok = strcmp(c->tol, "QUANT") == 0 ? fix_within(c->tol, &cmp) : cmp.max_rel <= lim;
        CHECK(h16 && ok, "%s: F16 KV cache within %s allowance (%s)", c->id, c->tol, fmt_cmp(&cmp));
        free(h16);

        /* a full cache is refused, not overrun: from the positions the
         * prompt filled, one token at a time */
        int32_t tok[1] = {c->prompt[0]};
        int filled = (int)H->seq.n_past, fails_at = -1;
        for (int i = 0; i < 70 && fails_at < 0; i++)
            if (step(H, tok, 1, H->seq.n_past) != 0) fails_at = (int)H->seq.n_past;
        CHECK(filled == c->n_prompt && fails_at == 64 && strstr(H->ws.err, "context is full"),
              "%s: cache of 64 (%d filled by the prompt, then a token at a time) refuses token 65 (%s)", c->id, filled,
              H->ws.err);
        int32_t bad[1] = {(int32_t)V};
        seq_reset(&H->seq);
        CHECK(step(H, bad, 1, 0) != 0 && strstr(H->ws.err, "out of range"), "token id %u is refused (%s)", V,
              H->ws.err);
        unload(H);
    }
    free(single);
    free(two);
    free(batch);
    free(ref);
}

/* ---- small models with one thing wrong --------------------------------- */

typedef struct {
    const char *what;        /* check name */
    const char *expect;      /* substring of the error, NULL = must load and run */
    const char *arch;
    const char *skip_key;    /* suffix of a key left out */
    uint32_t kv_heads, key_len;
    const char *drop;        /* tensor left out */
    const char *reshape;     /* tensor written with one row less */
    const char *retype;      /* tensor written as Q8_1 (an activation-only type) */
    const char *extra;       /* tensor added */
    int nan_norm;            /* a NaN in output_norm */
    int string_rope_base;
    uint32_t type;           /* of the matrices */
    int untied;
} Mutation;

enum { S_EMBD = 64, S_FF = 128, S_HEADS = 2, S_VOCAB = 96, S_LAYERS = 2 };

static void add_tensor(GgufWriter *w, const Mutation *mu, GwRng *rng, const char *name, uint64_t ne0, uint64_t ne1,
                       int is_norm)
{
    if (mu->drop && strcmp(name, mu->drop) == 0) return;
    if (mu->reshape && strcmp(name, mu->reshape) == 0) {
        if (is_norm) ne0--;
        else ne1--;
    }
    uint64_t ne[2] = {ne0, ne1}, n = ne0 * ne1;
    if (mu->retype && strcmp(name, mu->retype) == 0) {
        size_t bytes = (size_t)(n / 32 * 36);
        uint8_t *raw = calloc(bytes, 1);
        gw_tensor_raw(w, name, 2, ne, GGML_TYPE_Q8_1, raw, bytes);
        free(raw);
        return;
    }
    float *v = malloc(n * sizeof *v);
    for (uint64_t i = 0; i < n; i++)
        v[i] = is_norm ? 1.0f + 0.1f * gw_rng_uniform(rng) : gw_rng_uniform(rng) / sqrtf((float)ne0);
    if (mu->nan_norm && strcmp(name, "output_norm.weight") == 0) v[3] = NAN;
    gw_tensor(w, name, is_norm ? 1 : 2, ne, is_norm ? GGML_TYPE_F32 : mu->type, v);
    free(v);
}

static void write_model(const char *path, const Mutation *mu)
{
    GgufWriter *w = gw_new(3, 0);
    GwRng rng = {42};
    const char *arch = mu->arch ? mu->arch : "qwen3";
    char key[128];
    gw_kv_str(w, "general.architecture", arch);
#define KEY(suffix) (snprintf(key, sizeof key, "%s.%s", arch, suffix), key)
#define SKIP(suffix) (mu->skip_key && strcmp(mu->skip_key, suffix) == 0)
    if (!SKIP("block_count")) gw_kv_u32(w, KEY("block_count"), S_LAYERS);
    if (!SKIP("embedding_length")) gw_kv_u32(w, KEY("embedding_length"), S_EMBD);
    if (!SKIP("feed_forward_length")) gw_kv_u32(w, KEY("feed_forward_length"), S_FF);
    if (!SKIP("attention.head_count")) gw_kv_u32(w, KEY("attention.head_count"), S_HEADS);
    gw_kv_u32(w, KEY("attention.head_count_kv"), mu->kv_heads ? mu->kv_heads : 1);
    uint32_t hd = mu->key_len ? mu->key_len : 32;
    gw_kv_u32(w, KEY("attention.key_length"), hd);
    gw_kv_u32(w, KEY("attention.value_length"), 32);
    if (!SKIP("context_length")) gw_kv_u32(w, KEY("context_length"), 256);
    if (mu->string_rope_base) gw_kv_str(w, KEY("rope.freq_base"), "1e6");
    else gw_kv_f32(w, KEY("rope.freq_base"), 1e6f);
    if (!SKIP("attention.layer_norm_rms_epsilon")) gw_kv_f32(w, KEY("attention.layer_norm_rms_epsilon"), 1e-6f);
#undef KEY
#undef SKIP
    add_tensor(w, mu, &rng, "token_embd.weight", S_EMBD, S_VOCAB, 0);
    add_tensor(w, mu, &rng, "output_norm.weight", S_EMBD, 1, 1);
    if (mu->untied) add_tensor(w, mu, &rng, "output.weight", S_EMBD, S_VOCAB, 0);
    for (int l = 0; l < S_LAYERS; l++) {
        char name[64];
#define T(suffix, a, b, norm) \
    (snprintf(name, sizeof name, "blk.%d.%s.weight", l, suffix), add_tensor(w, mu, &rng, name, a, b, norm))
        T("attn_norm", S_EMBD, 1, 1);
        T("attn_q", S_EMBD, S_HEADS * 32, 0);
        T("attn_k", S_EMBD, 32, 0);
        T("attn_v", S_EMBD, 32, 0);
        T("attn_output", S_HEADS * 32, S_EMBD, 0);
        T("attn_q_norm", 32, 1, 1);
        T("attn_k_norm", 32, 1, 1);
        T("ffn_norm", S_EMBD, 1, 1);
        T("ffn_gate", S_EMBD, S_FF, 0);
        T("ffn_up", S_EMBD, S_FF, 0);
        T("ffn_down", S_FF, S_EMBD, 0);
#undef T
    }
    if (mu->extra) add_tensor(w, mu, &rng, mu->extra, S_EMBD, 1, 1);
    if (gw_write(w, path) != 0) printf("# cannot write %s\n", path);
    gw_free(w);
}

/* Open, read the config and load; returns 0 or -1 with the message in err. */
static int try_load(const char *path, int use_mmap, GgufError *err, float *logits_sum)
{
    static Gguf g;
    ModelConfig cfg;
    ModelOptions opt = {.n_ctx = 16, .kv_type = KV_F16, .batch = 4};
    if (gguf_open(&g, path, use_mmap, NULL, err) != 0) return -1;
    int rc = -1;
    if (model_read_config(&g, &cfg, err) == 0 && model_check_options(&cfg, &opt, err) == 0) {
        Plan plan;
        plan_init(&plan);
        gguf_plan(&g, &plan);
        forward_plan(&cfg, &opt, &plan);
        void *base = port_arena_map((size_t)plan.total);
        Arena arena;
        arena_init(&arena, base, plan.total);
        static Model m;
        static SeqState seq;
        static Workspace ws;
        if (gguf_index(&g, &arena, err) == 0 && model_load(&m, &g, &arena, &cfg, &opt, err) == 0 &&
            seq_init(&seq, &cfg, &opt, &arena) == 0 && workspace_init(&ws, &m, &opt, &arena, err) == 0) {
            int32_t toks[6] = {1, 5, 9, 95, 0, 7};
            rc = forward_prompt(&m, &ws, &seq, toks, 6);
            if (rc != 0) snprintf(err->msg, sizeof err->msg, "forward: %s", ws.err);
            *logits_sum = 0;
            for (uint32_t i = 0; i < cfg.n_vocab; i++) *logits_sum += ws.logits[i];
        }
        port_arena_unmap(base, (size_t)plan.total);
    }
    gguf_close(&g);
    return rc;
}

static void synthetic_models(void)
{
    static const Mutation muts[] = {
        {"valid F32 model loads and runs", NULL, .type = GGML_TYPE_F32},
        {"valid F16 untied model loads and runs", NULL, .type = GGML_TYPE_F16, .untied = 1},
        {"valid BF16 model loads and runs", NULL, .type = GGML_TYPE_BF16},
        {"valid Q8_0 model loads and runs", NULL, .type = GGML_TYPE_Q8_0},
        {"unsupported architecture", "architecture 'gpt2' is not supported", .arch = "gpt2"},
        {"missing block_count", "missing key qwen3.block_count", .skip_key = "block_count"},
        {"missing rms epsilon", "missing key qwen3.attention.layer_norm_rms_epsilon",
         .skip_key = "attention.layer_norm_rms_epsilon"},
        {"kv heads do not divide heads", "head_count_kv = 3", .kv_heads = 3},
        {"odd head dimension", "head dimension 33 must be even", .key_len = 33},
        {"rope base of the wrong type", "rope.freq_base has type string", .string_rope_base = 1},
        {"missing tensor", "tensor 'blk.1.ffn_up.weight' is missing", .drop = "blk.1.ffn_up.weight"},
        {"missing token_embd", "tensor 'token_embd.weight' is missing", .drop = "token_embd.weight"},
        {"missing norm", "tensor 'blk.0.attn_k_norm.weight' is missing", .drop = "blk.0.attn_k_norm.weight"},
        {"misshapen tensor", "tensor 'blk.0.attn_q.weight' has shape [64, 63, 1, 1], expected [64, 64]",
         .reshape = "blk.0.attn_q.weight"},
        {"misshapen norm", "tensor 'blk.1.ffn_norm.weight' has shape [63, 1, 1, 1], expected [64, 1]",
         .reshape = "blk.1.ffn_norm.weight"},
        {"unsupported weight type", "tensor 'blk.0.ffn_down.weight' has type Q8_1, which pith cannot compute",
         .retype = "blk.0.ffn_down.weight"},
        {"unknown tensor", "tensor 'blk.0.attn_q.bias' has no use", .extra = "blk.0.attn_q.bias"},
        {"non-finite norm weight", "tensor 'output_norm.weight' holds a non-finite value", .nan_norm = 1},
    };
    char path[256];
    const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    for (size_t i = 0; i < sizeof muts / sizeof muts[0]; i++) {
        const Mutation *mu = &muts[i];
        Mutation m = *mu;
        if (!m.type) m.type = GGML_TYPE_F32;
        snprintf(path, sizeof path, "%s/pith-test-forward-%d-%zu.gguf", tmp, (int)getpid(), i);
        write_model(path, &m);
        for (int use_mmap = 1; use_mmap >= 0; use_mmap--) {
            GgufError err;
            memset(&err, 0, sizeof err);
            float sum = NAN;
            int rc = try_load(path, use_mmap, &err, &sum);
            const char *backend = use_mmap ? "mmap" : "read";
            if (!mu->expect) {
                CHECK(rc == 0 && isfinite(sum), "synthetic (%s): %s (%s)", backend, mu->what, rc ? err.msg : "ok");
            } else {
                int one_line = strchr(err.msg, '\n') == NULL;
                int names_file = strncmp(err.msg, path, strlen(path)) == 0;
                CHECK(rc != 0 && strstr(err.msg, mu->expect) && one_line && names_file,
                      "synthetic (%s): %s is refused: %s", backend, mu->what, err.msg);
            }
        }
        remove(path);
    }
}

/* Two sequences over one set of weights and one workspace, carved from one
 * arena planned for both: fed in turns, token by token, each gets exactly
 * the logits it gets alone (and in one batch), and the plan names each
 * sequence's cache. */
static void two_sequences(const char *path, const FixCase *a, const FixCase *b, KvType kv)
{
    const char *name = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    static Gguf g;
    GgufError err;
    ModelConfig cfg;
    ModelOptions opt = {.n_ctx = 64, .kv_type = kv, .batch = 16, .all_logits = 1, .n_seq = 2};
    const char *kvn = kv == KV_F32 ? "F32" : "F16";
    if (gguf_open(&g, path, 1, NULL, &err) != 0 || model_read_config(&g, &cfg, &err) != 0) {
        CHECK(0, "two sequences: %s opens (%s)", path, err.msg);
        return;
    }
    Plan plan;
    plan_init(&plan);
    gguf_plan(&g, &plan);
    forward_plan(&cfg, &opt, &plan);
    int named = 0;
    for (int i = 0; i < plan.n_items; i++)
        named += !strcmp(plan.items[i].what, "kv cache, sequence 0") || !strcmp(plan.items[i].what, "kv cache, sequence 1");
    CHECK(named == 2, "%s: two sequences: the plan has a kv cache row for each sequence", name);
    if (model_conv_before(&cfg, cfg.n_layer)) {
        named = 0;
        for (int i = 0; i < plan.n_items; i++)
            named += (!strcmp(plan.items[i].what, "conv state, sequence 0") || !strcmp(plan.items[i].what, "conv state, sequence 1")) &&
                     plan.items[i].bytes == arena_round(shortconv_state_bytes(&cfg) * model_conv_before(&cfg, cfg.n_layer));
        CHECK(named == 2, "%s: two sequences: the plan has a conv state row of its exact size for each sequence", name);
    }
    void *base = port_arena_map((size_t)plan.total);
    Arena arena;
    arena_init(&arena, base, plan.total);
    static Model m;
    static SeqState seq[2];
    static Workspace ws;
    int ok = base && gguf_index(&g, &arena, &err) == 0 && model_load(&m, &g, &arena, &cfg, &opt, &err) == 0 &&
             seq_init(&seq[0], &cfg, &opt, &arena) == 0 && seq_init(&seq[1], &cfg, &opt, &arena) == 0 &&
             workspace_init(&ws, &m, &opt, &arena, &err) == 0;
    CHECK(ok && arena.used == plan.total, "%s: two sequences: weights, two caches and a workspace fill the plan exactly",
          name);
    if (!ok) {
        gguf_close(&g);
        return;
    }
    const FixCase *cs[2] = {a, b};
    uint32_t V = cfg.n_vocab;
    /* each alone, in one batch of up to 16 */
    float *alone[2];
    for (int k = 0; k < 2; k++) {
        int n = cs[k]->n_prompt;
        alone[k] = malloc((size_t)n * V * sizeof(float));
        seq_reset(&seq[k]);
        for (int i = 0; i < n; i += 16) {
            int step = n - i < 16 ? n - i : 16;
            ok = ok && forward_batch(&m, &ws, &seq[k], cs[k]->prompt + i, step, (uint32_t)i, 1) == 0;
            if (ok) memcpy(alone[k] + (size_t)i * V, ws.logits, (size_t)step * V * sizeof(float));
        }
    }
    /* in turns, one token each */
    int same = ok;
    seq_reset(&seq[0]);
    seq_reset(&seq[1]);
    int longest = a->n_prompt > b->n_prompt ? a->n_prompt : b->n_prompt;
    for (int i = 0; i < longest && ok; i++)
        for (int k = 0; k < 2 && ok; k++) {
            if (i >= cs[k]->n_prompt) continue;
            ok = forward_batch(&m, &ws, &seq[k], cs[k]->prompt + i, 1, (uint32_t)i, 0) == 0;
            same = same && ok && memcmp(ws.logits, alone[k] + (size_t)i * V, V * sizeof(float)) == 0;
        }
    CHECK(ok && same && seq[0].n_past == (uint32_t)a->n_prompt && seq[1].n_past == (uint32_t)b->n_prompt,
          "%s: two sequences (%s, %s, %s KV) fed in turns over one set of weights: each one's logits are bit for bit its own "
          "alone", name, a->id, b->id, kvn);

    /* together in one step (forward_parts, batched decoding): one token
     * each, each sequence's logits row bit for bit its own alone */
    seq_reset(&seq[0]);
    seq_reset(&seq[1]);
    same = ok;
    for (int i = 0; i < longest && ok; i++) {
        ForwardPart pt[2];
        int np = 0;
        for (int k = 0; k < 2; k++)
            if (i < cs[k]->n_prompt) pt[np++] = (ForwardPart){&seq[k], cs[k]->prompt + i, 1, (uint32_t)i, FORWARD_LOGITS_LAST, -1};
        ok = forward_parts(&m, &ws, pt, np) == 0;
        for (int p = 0; p < np && ok; p++) {
            int k = pt[p].seq == &seq[0] ? 0 : 1;
            same = same && memcmp(ws.logits + (size_t)pt[p].logits_row * V, alone[k] + (size_t)i * V, V * sizeof(float)) == 0;
        }
    }
    CHECK(ok && same && seq[0].n_past == (uint32_t)a->n_prompt && seq[1].n_past == (uint32_t)b->n_prompt,
          "%s: two sequences (%s, %s, %s KV) decoded together, one token each per step: bit for bit their logits alone",
          name, a->id, b->id, kvn);

    /* a prompt chunk of one sequence beside the other's single token (a
     * prompt interleaved with a running reply), every row's logits */
    seq_reset(&seq[0]);
    seq_reset(&seq[1]);
    same = ok;
    int pos[2] = {0, 0};
    while (ok && (pos[0] < a->n_prompt || pos[1] < b->n_prompt)) {
        ForwardPart pt[2];
        int np = 0;
        for (int k = 0; k < 2; k++) {
            int left = cs[k]->n_prompt - pos[k], want = k == 0 ? 5 : 1;
            if (left > 0)
                pt[np++] = (ForwardPart){&seq[k], cs[k]->prompt + pos[k], left < want ? left : want, (uint32_t)pos[k],
                                         FORWARD_LOGITS_ALL, -1};
        }
        ok = forward_parts(&m, &ws, pt, np) == 0;
        for (int p = 0; p < np && ok; p++) {
            int k = pt[p].seq == &seq[0] ? 0 : 1;
            same = same && memcmp(ws.logits + (size_t)pt[p].logits_row * V, alone[k] + (size_t)pos[k] * V,
                                  (size_t)pt[p].n * V * sizeof(float)) == 0;
            pos[k] += pt[p].n;
        }
    }
    CHECK(ok && same, "%s: two sequences (%s, %s, %s KV): chunks of 5 prompt tokens beside single tokens in one step: "
          "bit for bit", name, a->id, b->id, kvn);

    /* refused steps: a sequence twice, more tokens than the batch */
    ForwardPart twice[2] = {{&seq[0], a->prompt, 1, 0, FORWARD_LOGITS_LAST, -1},
                            {&seq[0], a->prompt, 1, 0, FORWARD_LOGITS_LAST, -1}};
    static const int32_t zeros[16];
    ForwardPart big[2] = {{&seq[0], zeros, 10, 0, FORWARD_LOGITS_LAST, -1},
                          {&seq[1], zeros, 7, 0, FORWARD_LOGITS_LAST, -1}};
    CHECK(forward_parts(&m, &ws, twice, 2) != 0 && forward_parts(&m, &ws, big, 2) != 0 &&
              seq[0].n_past == (uint32_t)a->n_prompt,
          "%s: a step with one sequence twice or over the batch is refused and changes nothing (%s)", name, ws.err);
    if (seq[0].recurrent) { /* a convolution state holds n_past only: no going back but to 0 */
        CHECK(forward_batch(&m, &ws, &seq[0], a->prompt, 1, 3, 0) != 0 && seq[0].n_past == (uint32_t)a->n_prompt &&
                  !seq_can_resume(&cfg, &seq[0], 3) && seq_can_resume(&cfg, &seq[0], 0) &&
                  seq_can_resume(&cfg, &seq[0], seq[0].n_past),
              "%s: feeding at position 3 of %u is refused (%s): only n_past or 0", name, seq[0].n_past, ws.err);
        /* from 0 again: the state starts from zero, the logits are the first run's */
        ok = forward_batch(&m, &ws, &seq[0], a->prompt, 1, 0, 0) == 0;
        CHECK(ok && memcmp(ws.logits, alone[0], V * sizeof(float)) == 0,
              "%s: feeding from position 0 again clears the convolution state: bit for bit the first logits", name);
    }
    free(alone[0]);
    free(alone[1]);
    port_arena_unmap(base, (size_t)plan.total);
    gguf_close(&g);
}

/* The stages of a step run fused (one parallel region, a barrier after
 * each) and with a region per stage (Workspace.regions_per_op, as streamed
 * weights run) give the same bits, for every mixer (attention, short
 * convolution, DeltaNet) and the architectures' own steps, with 1, 2 and 3
 * threads (2: q, k, v by kv head, 3: by rows; Q4_K_M: attention's output
 * quantized in a stage of its own, its columns not whole blocks of 256):
 * a model made by mkmodel with SHAPE, fed 40 ids in steps of 16 and of 1. */
static void stage_layouts(const char *name, const char *shape)
{
    char path[256], cmd[1024];
    const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    const char *mk = getenv("PITH_MKMODEL") ? getenv("PITH_MKMODEL") : "build/asan/tools/mkmodel";
    snprintf(path, sizeof path, "%s/pith-test-forward-%s-%d.gguf", tmp, name, (int)getpid());
    snprintf(cmd, sizeof cmd, "%s %s %s --tokenizer-from %s >/dev/null 2>&1", mk, path, shape,
             fix_model_path("tiny-qwen3-f32.gguf"));
    int made = system(cmd) == 0;
    CHECK(made, "%s: a model made by %s", name, mk);
    Loaded *L = made ? load(path, 1, KV_F16, 128, 16) : NULL;
    remove(path);
    CHECK(!made || L != NULL, "%s: loads", name);
    if (!L) return;
    uint32_t V = L->m.cfg.n_vocab;
    int32_t ids[40];
    for (int i = 0; i < 40; i++) ids[i] = (int32_t)((i * 7919u + 13u) % V);
    static const int steps[2] = {16, 1};
    for (int k = 0; k < 2; k++) {
        float *ref = run_all(L, ids, 40, steps[k]); /* fused, one thread */
        int same = ref != NULL, runs = 0;
        for (int threads = 1; threads <= 3; threads++)
            for (int per_op = 0; per_op <= 1; per_op++) {
                if (threads == 1 && !per_op) continue;
                port_set_threads(threads);
                L->ws.regions_per_op = per_op;
                float *got = run_all(L, ids, 40, steps[k]);
                same = same && bits_equal(ref, got, (size_t)40 * V);
                runs++;
                free(got);
            }
        port_set_threads(1);
        L->ws.regions_per_op = 0;
        CHECK(same && runs == 5, "%s: steps of %d: fused and a region per stage give the same logits (1, 2, 3 threads)",
              name, steps[k]);
        free(ref);
    }
    unload(L);
}

int main(void)
{
    FixCase *cases;
    int n = fix_load_cases(&cases);
    CHECK(n > 0, "cases.tsv read (%d cases)", n);
    if (n <= 0) CHECK_DONE();
    port_set_threads(1);
    /* PITH_TEST_SHARD=K/N (to split the run across jobs under qemu): only the
     * items i (the models below, then the two-sequence tests, the
     * synthetic models, the stage layouts) with i % N == K; the N shards
     * together run all. */
    int shard = 0, n_shards = 1;
    const char *shard_env = getenv("PITH_TEST_SHARD");
    if (shard_env && *shard_env && (sscanf(shard_env, "%d/%d", &shard, &n_shards) != 2 || n_shards < 1 || shard < 0 ||
                      shard >= n_shards)) {
        CHECK(0, "PITH_TEST_SHARD='%s' is not K/N with 0 <= K < N", shard_env);
        CHECK_DONE();
    }
#define MINE(item) ((item) % n_shards == shard)

    static const char *models[] = {"tiny-qwen3-f32.gguf",  "tiny-qwen3-untied-f16.gguf", "tiny-qwen3-Q8_0.gguf",
                                   "tiny-qwen3-Q4_0.gguf", "tiny-qwen3-Q4_K_M.gguf",     "tiny-qwen3-Q6_K.gguf",
                                   "stories260K.gguf",     "stories260K-f16.gguf"};
    enum { N_MODELS = sizeof models / sizeof models[0] };
    int covered = 0, expected = 0;
    for (int i = 0; i < n; i++)
        for (int mi = 0; mi < N_MODELS; mi++)
            if (!strcmp(cases[i].model, models[mi])) expected += MINE(mi) ? 1 : 0;
    Worst worst[N_MODELS];
    memset(worst, 0, sizeof worst);
    for (size_t mi = 0; mi < sizeof models / sizeof models[0]; mi++) {
        if (!MINE((int)mi)) continue;
        const char *path = fix_model_path(models[mi]);
        snprintf(worst[mi].model, sizeof worst[mi].model, "%s", models[mi]);
        Loaded *L = load(path, 1, KV_F32, 128, 32);
        CHECK(L != NULL, "%s loads (mmap)", models[mi]);
        if (!L) continue;
        /* the variants run on the longest logits case, from its logits */
        const FixCase *variant_case = NULL;
        for (int i = 0; i < n; i++)
            if (!strcmp(cases[i].model, models[mi]) && !strcmp(cases[i].kind, "logits") &&
                (!variant_case || cases[i].n_pos > variant_case->n_pos))
                variant_case = &cases[i];
        for (int i = 0; i < n; i++) {
            const FixCase *c = &cases[i];
            if (strcmp(c->model, models[mi]) != 0) continue;
            covered++;
            if (strcmp(c->kind, "logits") == 0) {
                float *logits = logits_case(L, c, &worst[mi]);
                if (c == variant_case) variants(L, c, path, logits);
                else free(logits);
            } else if (strcmp(c->kind, "greedy") == 0) {
                greedy_case(L, c);
            } else {
                CHECK(0, "%s: unknown kind '%s'", c->id, c->kind);
            }
        }
        unload(L);
    }
    if (n_shards == 1) CHECK(covered == n, "every case of cases.tsv was run (%d of %d)", covered, n);
    else {
        /* every case is of a listed model, and this shard ran all of its models' cases */
        int listed = 0;
        for (int i = 0; i < n; i++)
            for (int mi = 0; mi < N_MODELS; mi++) listed += !strcmp(cases[i].model, models[mi]);
        CHECK(listed == n && covered == expected, "shard %d/%d: every case of its models was run (%d of %d; %d of %d cases listed)",
              shard, n_shards, covered, expected, listed, n);
    }
    const FixCase *pair[2] = {NULL, NULL};
    for (int i = 0; i < n; i++)
        if (!strcmp(cases[i].model, "tiny-qwen3-f32.gguf") && !strcmp(cases[i].kind, "logits") && cases[i].n_prompt <= 64) {
            if (!pair[0]) pair[0] = &cases[i];
            else if (!pair[1]) pair[1] = &cases[i];
        }
    CHECK(pair[0] && pair[1], "two logits cases of tiny-qwen3-f32 for the two-sequence test");
    if (pair[0] && pair[1] && MINE(N_MODELS)) {
        two_sequences(fix_model_path("tiny-qwen3-f32.gguf"), pair[0], pair[1], KV_F16);
        two_sequences(fix_model_path("tiny-qwen3-f32.gguf"), pair[0], pair[1], KV_F32);
        /* the same on a gemma3-shaped model whose windowed layers keep rings
         * (windows of 4: rings of 4 + 16 - 1 rows, shorter than the prompts):
         * each token reads its own sequence's rings */
        char g3[256], cmd[1024];
        const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
        const char *mk = getenv("PITH_MKMODEL") ? getenv("PITH_MKMODEL") : "build/asan/tools/mkmodel";
        snprintf(g3, sizeof g3, "%s/pith-test-forward-gemma3-%d.gguf", tmp, (int)getpid());
        snprintf(cmd, sizeof cmd,
                 "%s %s --arch gemma3 --layers 3 --swa-pattern 3 --embd 64 --ff 128 --heads 4 --kv-heads 2 --head-dim 16 "
                 "--window 4 --type f32 --seed 5 --tokenizer-from %s >/dev/null 2>&1",
                 mk, g3, fix_model_path("tiny-qwen3-f32.gguf"));
        int made = system(cmd) == 0;
        CHECK(made, "a gemma3-shaped model with windows of 4 made by %s", mk);
        /* prompts of 45 and 60 ids (the fixtures' are shorter than the rings) */
        static int32_t ids[2][60];
        static FixCase longer[2];
        for (int k = 0; k < 2; k++) {
            for (int i = 0; i < 60; i++) ids[k][i] = pair[k]->prompt[(i * (k + 3)) % pair[k]->n_prompt];
            longer[k] = *pair[k];
            snprintf(longer[k].id, sizeof longer[k].id, "%d ids", k ? 60 : 45);
            longer[k].prompt = ids[k];
            longer[k].n_prompt = k ? 60 : 45;
        }
        if (made) {
            two_sequences(g3, &longer[0], &longer[1], KV_F16);
            two_sequences(g3, &longer[0], &longer[1], KV_F32);
        }
        remove(g3);
        /* and on an lfm2-shaped model: short convolutions around an
         * attention layer, a convolution state per sequence */
        snprintf(g3, sizeof g3, "%s/pith-test-forward-lfm2-%d.gguf", tmp, (int)getpid());
        snprintf(cmd, sizeof cmd,
                 "%s %s --arch lfm2 --layers 3 --attn-layers 1 --embd 64 --ff 128 --heads 4 --kv-heads 2 --head-dim 16 "
                 "--type f32 --seed 6 --tokenizer-from %s >/dev/null 2>&1",
                 mk, g3, fix_model_path("tiny-qwen3-f32.gguf"));
        made = system(cmd) == 0;
        CHECK(made, "an lfm2-shaped model made by %s", mk);
        if (made) {
            two_sequences(g3, &longer[0], &longer[1], KV_F16);
            two_sequences(g3, &longer[0], &longer[1], KV_F32);
        }
        remove(g3);
    }
    for (int i = 0; i < N_MODELS; i++)
        if (MINE(i)) printf("# %-28s worst: max rel %.3g, mean KL %.3g, max KL %.3g\n", worst[i].model, worst[i].max_rel,
               worst[i].mean_kl, worst[i].max_kl);
    fix_free_cases(cases, n);
    if (MINE(N_MODELS + 1)) synthetic_models();
    if (MINE(N_MODELS + 2)) {
        stage_layouts("qwen3-q4_k_m", "--arch qwen3 --layers 2 --embd 256 --ff 512 --heads 4 --kv-heads 2 --head-dim 64 "
                                      "--type q4_k_m --seed 31");
        stage_layouts("qwen2-q8_0", "--arch qwen2 --layers 2 --embd 128 --ff 256 --heads 4 --kv-heads 2 --head-dim 32 "
                                    "--type q8_0 --seed 32");
        stage_layouts("smollm3-q8_0", "--arch smollm3 --layers 4 --embd 128 --ff 256 --heads 4 --kv-heads 2 "
                                      "--head-dim 32 --type q8_0 --seed 33");
        stage_layouts("phi3-f16", "--arch phi3 --layers 2 --embd 384 --ff 512 --heads 3 --kv-heads 1 --head-dim 128 "
                                  "--rope-dim 96 --ctx 131072 --rope-factors 4096 --type f16 --seed 34");
        stage_layouts("gemma3-q8_0", "--arch gemma3 --layers 3 --swa-pattern 3 --embd 128 --ff 256 --heads 4 "
                                     "--kv-heads 2 --head-dim 32 --window 8 --softcap 30 --type q8_0 --seed 35");
        stage_layouts("lfm2-q8_0", "--arch lfm2 --layers 3 --attn-layers 1 --embd 128 --ff 256 --heads 4 --kv-heads 2 "
                                   "--head-dim 32 --type q8_0 --seed 36");
        stage_layouts("qwen35-q8_0", "--arch qwen35 --layers 4 --embd 256 --ff 512 --heads 2 --kv-heads 1 "
                                     "--head-dim 256 --rope-dim 64 --type q8_0 --seed 37");
        stage_layouts("qwen35-q4_k_m", "--arch qwen35 --layers 4 --embd 256 --ff 512 --heads 4 --kv-heads 2 "
                                       "--head-dim 128 --rope-dim 64 --ssm-kheads 2 --recurrent-layers --type q4_k_m "
                                       "--seed 38");
        /* experts: routing, the grouping by expert, experts' rows split
         * between threads (quantized and float inputs) */
        stage_layouts("qwen3moe-q8_0", "--arch qwen3moe --layers 2 --embd 128 --ff 256 --ff-exp 64 --experts 8 "
                                       "--experts-used 3 --heads 2 --kv-heads 1 --head-dim 64 --type q8_0 --seed 39");
        stage_layouts("qwen3moe-f16", "--arch qwen3moe --layers 2 --embd 64 --ff 128 --ff-exp 32 --experts 4 "
                                      "--experts-used 2 --heads 2 --kv-heads 1 --head-dim 32 --type f16 --seed 40");
        /* and sigmoid gating with a selection bias after a dense layer */
        stage_layouts("lfm2moe-q8_0", "--arch lfm2moe --layers 3 --attn-layers 1 --dense-lead 1 --embd 128 --ff 256 "
                                      "--ff-exp 64 --experts 8 --experts-used 3 --heads 4 --kv-heads 2 --head-dim 32 "
                                      "--type q8_0 --seed 41");
        /* and a shared expert with its gate, among DeltaNet layers */
        stage_layouts("qwen35moe-q8_0", "--arch qwen35moe --layers 4 --embd 128 --ff 64 --ff-exp 64 --experts 8 "
                                        "--experts-used 2 --heads 2 --kv-heads 1 --head-dim 128 --rope-dim 64 "
                                        "--ssm-state 32 --type q8_0 --seed 42");
        /* Gemma 4: heads of two sizes and kv heads per kind, the last layers
         * reading earlier layers' KV, the per-layer embedding stages */
        stage_layouts("gemma4-q8_0", "--arch gemma4 --layers 5 --swa-pattern 2 --embd 128 --ff 128 --heads 4 --kv-heads 1 "
                                     "--kv-heads-swa 2 --head-dim 64 --head-dim-swa 32 --window 8 --shared-kv 3 --pe 64 "
                                     "--double-wide --rope-partial 4 --type q8_0 --seed 43");
        stage_layouts("gemma4-q4_k_m", "--arch gemma4 --layers 5 --swa-pattern 2 --embd 256 --ff 256 --heads 4 --kv-heads 2 "
                                       "--head-dim 64 --head-dim-swa 32 --window 8 --shared-kv 3 --pe 256 --type q4_k_m "
                                       "--seed 44");
    }
    CHECK_DONE();
}
