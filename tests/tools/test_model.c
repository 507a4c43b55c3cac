/* test_model.c - see test_model.h. */
#include "test_model.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../port/port.h"
#include "../../src/model/forward.h"

TestModel *test_model_load(const char *path, int use_mmap, const ModelOptions *opt)
{
    TestModel *L = calloc(1, sizeof *L);
    GgufError err;
    if (gguf_open(&L->g, path, use_mmap, NULL, &err) != 0 || model_read_config(&L->g, &L->cfg, &err) != 0 ||
        model_check_options(&L->cfg, opt, &err) != 0) {
        printf("# load %s: %s\n", path, err.msg);
        free(L);
        return NULL;
    }
    Plan plan;
    plan_init(&plan);
    gguf_plan(&L->g, &plan);
    forward_plan(&L->cfg, opt, &plan);
    L->size = plan.total;
    L->base = plan.overflow ? NULL : port_arena_map((size_t)plan.total);
    Arena arena;
    arena_init(&arena, L->base, plan.total);
    L->opt = *opt;
    if (!L->base || gguf_index(&L->g, &arena, &err) != 0 || model_load(&L->m, &L->g, &arena, &L->cfg, opt, &err) != 0 ||
        seq_init(&L->seq, &L->cfg, opt, &arena) != 0 || workspace_init(&L->ws, &L->m, opt, &arena, &err) != 0) {
        printf("# load %s: %s\n", path, L->base ? err.msg : "the plan overflows or cannot be mapped");
        test_model_free(L);
        return NULL;
    }
    L->used = arena.used;
    return L;
}

void test_model_free(TestModel *L)
{
    if (!L) return;
    workspace_close(&L->ws); /* stops a stream reader; nothing otherwise */
    gguf_close(&L->g);
    if (L->base) port_arena_unmap(L->base, (size_t)L->size);
    free(L);
}

float *test_model_logits(TestModel *L, const int32_t *tokens, int n, int step)
{
    uint32_t V = L->m.cfg.n_vocab;
    float *out = malloc((size_t)n * V * sizeof *out);
    seq_reset(&L->seq);
    for (int i = 0; i < n; i += step) {
        int k = n - i < step ? n - i : step;
        if (forward_batch(&L->m, &L->ws, &L->seq, tokens + i, k, (uint32_t)i, 1) != 0) {
            printf("# forward: %s\n", L->ws.err);
            free(out);
            return NULL;
        }
        memcpy(out + (size_t)i * V, L->ws.logits, (size_t)k * V * sizeof *out);
    }
    return out;
}
