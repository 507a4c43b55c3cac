/* test_weight_stream.c - --load stream's sizes (model_stream_bytes, the
 * contract the memory planner builds on) and its results.
 *
 * For every fixture model: a slot holds every layer's matrices and a chunk
 * of output rows; the chunks cover the vocabulary; the smallest window is
 * two slots and the embedding rows; each window above it keeps as many
 * whole layers resident as it pays for; model_plan adds exactly the parts.
 * Then the model runs streamed with several windows (no resident layer,
 * some, all of them) and its logits are bitwise those of the mapped model,
 * in steps of 3 tokens and token by token, twice in a row (the second pass
 * starts from the prefetch the first one left behind). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../port/port.h"
#include "../src/model/forward.h"
#include "../src/gguf/gguf.h"
#include "../src/model/model.h"
#include "check.h"
#include "tools/fixtures.h"
#include "tools/test_model.h"

typedef TestModel Loaded;

static Loaded *load(const char *path, LoadMode load, uint64_t window, uint32_t n_ctx, uint32_t batch)
{
    ModelOptions opt = {.n_ctx = n_ctx, .kv_type = KV_F32, .batch = batch, .all_logits = 1, .load = load,
                        .stream_window = window};
    return test_model_load(path, load == LOAD_MMAP, &opt);
}

static void unload(Loaded *L)
{
    test_model_free(L);
}

static float *run_all(Loaded *L, const int32_t *tokens, int n, int step)
{
    return test_model_logits(L, tokens, n, step);
}

/* The bytes model_plan adds for the weights in stream mode. */
static uint64_t weights_in_plan(const ModelConfig *cfg, const ModelOptions *opt)
{
    Plan with, without;
    plan_init(&with);
    plan_init(&without);
    ModelOptions o = *opt;
    ModelConfig mapped = *cfg;
    mapped.mapped = 1;
    model_plan(&mapped, &o, &with);
    o.load = LOAD_MMAP;
    model_plan(&mapped, &o, &without);
    return with.total - without.total;
}

static void sizes(const char *name, const char *path)
{
    Loaded *L = load(path, LOAD_MMAP, 0, 8, 4);
    CHECK(L != NULL, "%s: loads mapped", name);
    if (!L) return;
    const ModelConfig *c = &L->cfg;
    ModelOptions opt = {.n_ctx = 8, .kv_type = KV_F32, .batch = 4, .load = LOAD_STREAM};
    ModelStreamParts p;
    uint64_t total = model_stream_bytes(c, &opt, &p);

    uint64_t largest = 0;
    for (uint32_t l = 0; l < c->n_layer; l++) {
        const LayerWeights *lw = &L->m.layers[l];
        const Weight *ws[7] = {&lw->wq, &lw->wk, &lw->wv, &lw->wo, &lw->w_gate, &lw->w_up, &lw->w_down};
        uint64_t bytes = 0;
        for (int i = 0; i < 7; i++) bytes += arena_round(ws[i]->rows * ws[i]->row_bytes);
        if (bytes > largest) largest = bytes;
    }
    const Weight *out = &L->m.output;
    CHECK(p.slot_bytes >= largest && p.slot_bytes == c->stream_layer_bytes,
          "%s: a slot (%llu bytes) holds the largest layer's matrices (%llu)", name, (unsigned long long)p.slot_bytes,
          (unsigned long long)largest);
    CHECK(p.out_chunk_rows >= 1 && p.out_chunk_rows * out->row_bytes <= p.slot_bytes &&
              (uint64_t)p.n_out_chunks * p.out_chunk_rows >= out->rows &&
              (uint64_t)(p.n_out_chunks - 1) * p.out_chunk_rows < out->rows,
          "%s: %u chunks of %u output rows fill a slot and cover the %llu rows", name, p.n_out_chunks, p.out_chunk_rows,
          (unsigned long long)out->rows);
    CHECK(p.embd_bytes == arena_round(4 * L->m.tok_embd.row_bytes) && p.min_bytes == 2 * p.slot_bytes + p.embd_bytes &&
              total == p.min_bytes && p.resident_layers == 0 && p.total == total,
          "%s: smallest window = 2 slots + 4 embedding rows = %llu bytes", name, (unsigned long long)total);
    CHECK(weights_in_plan(c, &opt) == total, "%s: model_plan adds the window and nothing else", name);

    int ok = 1;
    for (uint32_t k = 0; k <= c->n_layer + 1; k++) {
        opt.stream_window = p.min_bytes + (uint64_t)k * c->stream_layer_bytes + (k ? c->stream_layer_bytes - 1 : 0);
        ModelStreamParts q;
        uint64_t t = model_stream_bytes(c, &opt, &q);
        uint32_t want = k < c->n_layer ? k : c->n_layer;
        if (q.resident_layers != want || t != p.min_bytes + (uint64_t)want * c->stream_layer_bytes ||
            t > opt.stream_window || weights_in_plan(c, &opt) != t)
            ok = 0;
    }
    CHECK(ok, "%s: a window of the smallest + k layers keeps k layers resident, never more than asked", name);
    unload(L);
}

static void same_logits(const char *name, const char *path)
{
    enum { N = 11 };
    int32_t tokens[N];
    Loaded *ref = load(path, LOAD_MMAP, 0, N, 3);
    if (!ref) {
        CHECK(0, "%s: loads mapped", name);
        return;
    }
    uint32_t V = ref->cfg.n_vocab;
    for (int i = 0; i < N; i++) tokens[i] = (int32_t)((i * 7919u + 13u) % V);
    float *want = run_all(ref, tokens, N, 3);
    ModelStreamParts p;
    ModelOptions opt = {.batch = 3};
    model_stream_bytes(&ref->cfg, &opt, &p);
    uint64_t layer = ref->cfg.stream_layer_bytes;
    unload(ref);
    uint64_t windows[3] = {0, p.min_bytes + 2 * layer, p.min_bytes + 1000 * layer};
    for (int w = 0; w < 3; w++) {
        for (int step = 3; step >= 1; step -= 2) {
            Loaded *L = load(path, LOAD_STREAM, windows[w], N, 3);
            float *got1 = L ? run_all(L, tokens, N, step) : NULL;
            float *got2 = L ? run_all(L, tokens, N, step) : NULL;
            size_t bytes = (size_t)N * V * sizeof(float);
            CHECK(want && got1 && got2 && memcmp(want, got1, bytes) == 0 && memcmp(want, got2, bytes) == 0,
                  "%s: streamed with %u resident layers, steps of %d: logits bitwise mmap's, twice", name,
                  L ? L->ws.stream.resident_layers : 0, step);
            CHECK(L && L->used <= L->size, "%s: the arena holds what stream mode took", name);
            free(got1);
            free(got2);
            unload(L);
        }
    }
    free(want);
}

int main(void)
{
    static const char *const models[] = {"tiny-qwen3-f32.gguf", "tiny-qwen3-Q8_0.gguf", "tiny-qwen3-Q4_0.gguf",
                                         "tiny-qwen3-Q4_K_M.gguf", "tiny-qwen3-Q6_K.gguf", "tiny-qwen3-untied-f16.gguf",
                                         "stories260K.gguf"};
    port_set_threads(2);
    for (size_t i = 0; i < sizeof models / sizeof models[0]; i++) {
        const char *path = fix_model_path(models[i]);
        sizes(models[i], path);
        same_logits(models[i], path);
    }
    CHECK_DONE();
}
