/* test_model.h - for the C tests: a model loaded into its own arena with the
 * same steps as `pith logits`, and its logits for every prompt position. */
#ifndef PITH_TEST_MODEL_H
#define PITH_TEST_MODEL_H

#include <stdint.h>

#include "../../src/gguf/gguf.h"
#include "../../src/model/forward.h"
#include "../../src/model/model.h"

typedef struct {
    Gguf g;
    ModelConfig cfg;
    Model m;          /* the weights */
    SeqState seq;     /* one sequence */
    Workspace ws;
    ModelOptions opt; /* as loaded */
    void *base;
    uint64_t size;  /* the arena as planned */
    uint64_t used;  /* what loading carved from it */
} TestModel;

/* Opens path (mapped if use_mmap), plans, maps and loads with opt. Returns
 * NULL, after printing "# load PATH: why", on any failure. */
TestModel *test_model_load(const char *path, int use_mmap, const ModelOptions *opt);
void test_model_free(TestModel *L);

/* Logits of every position of tokens, fed from position 0 in steps of step
 * tokens (malloc'd [n][vocab]); NULL, after printing why, on a forward error.
 * The model must have been loaded with all_logits. */
float *test_model_logits(TestModel *L, const int32_t *tokens, int n, int step);

#endif
