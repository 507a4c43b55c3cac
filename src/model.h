/* model.h - a transformer's configuration and its weights, bound by name.
 *
 * Steps, each a separate call so commands can compose them with other
 * users of the one arena (tokenizer, ...):
 *   gguf_open -> model_read_config (walks the header; allocates nothing)
 *   -> plan_init, gguf_plan, model_plan (+ whatever else the command needs)
 *   -> port_arena_map, arena_init -> gguf_index -> model_load.
 * Then forward.h runs the model. */
#ifndef PITH_MODEL_H
#define PITH_MODEL_H

#include <stdint.h>

#include "arena.h"
#include "gguf.h"

/* The per-architecture choices, as data: a new architecture of the same
 * shape is a row in model.c's table. */
typedef enum {
    ROPE_NORM = 0, /* rotate adjacent pairs (2i, 2i+1) */
    ROPE_NEOX = 2  /* rotate (i, i + head_dim/2) */
} RopeStyle;

typedef enum {
    TENSOR_REFUSED = 0,   /* present means a variant pith would get wrong: refused */
    TENSOR_OPTIONAL = 1,  /* used when present */
    TENSOR_REQUIRED = 2
} TensorRule;

typedef struct {
    const char *name;     /* general.architecture */
    RopeStyle rope;
    int qk_norm;          /* per-head RMSNorm of q and k (attn_q_norm, attn_k_norm) */
    TensorRule qkv_bias;  /* blk.N.attn_{q,k,v}.bias, added after the projections */
    TensorRule rope_freqs;/* rope_freqs.weight: per-pair frequency divisors (Llama 3.x) */
} ArchInfo;

typedef struct {
    const ArchInfo *arch;
    uint32_t n_layer;     /* block_count */
    uint32_t n_embd;      /* embedding_length */
    uint32_t n_ff;        /* feed_forward_length */
    uint32_t n_head;      /* attention.head_count */
    uint32_t n_head_kv;   /* attention.head_count_kv (default n_head) */
    uint32_t head_dim;    /* attention.key_length (default n_embd / n_head) */
    uint32_t head_dim_v;  /* attention.value_length (default head_dim) */
    uint32_t n_vocab;     /* rows of token_embd.weight */
    uint32_t n_ctx_train; /* context_length */
    float rope_base;      /* rope.freq_base (default 10000) */
    uint32_t n_rot;       /* rope.dimension_count: elements of a head that rotate (= head_dim, as llama.cpp requires) */
    int qkv_bias;         /* the file has q/k/v biases in every layer */
    int rope_freqs;       /* the file has rope_freqs.weight (n_rot/2 floats) */
    float norm_eps;       /* attention.layer_norm_rms_epsilon */
    int tied_output;      /* no output.weight: logits use token_embd.weight */
    int mapped;           /* every file is memory-mapped: weights are used in place */
    uint64_t weight_bytes;/* arena bytes to hold the weight matrices when not mapped */
    uint64_t norm_floats; /* floats of all norm vectors (always copied into the arena) */
} ModelConfig;

typedef enum { KV_F32 = 0, KV_F16 = 1 } KvType;

typedef struct {
    uint32_t n_ctx;       /* positions the KV cache holds (1..n_ctx_train) */
    KvType kv_type;
    uint32_t batch;       /* most tokens per forward step (1..FORWARD_MAX_BATCH) */
    int all_logits;       /* keep logits of every token of a step (else only the last) */
} ModelOptions;

/* A weight matrix: `rows` rows of `cols` elements of `type`. */
typedef struct {
    const uint8_t *data;
    uint32_t type;
    uint64_t rows, cols;
    uint64_t row_bytes;
} Weight;

typedef struct {
    float *attn_norm, *q_norm, *k_norm, *ffn_norm; /* q_norm/k_norm NULL if the arch has none */
    float *bq, *bk, *bv;  /* q/k/v biases, NULL if the model has none */
    Weight wq, wk, wv, wo;
    Weight w_gate, w_up, w_down;
} LayerWeights;

typedef struct Model {
    ModelConfig cfg;
    ModelOptions opt;
    Gguf *gguf;
    Weight tok_embd, output;  /* output is tok_embd when tied */
    float *output_norm;
    float *rope_freqs;        /* rope_freqs.weight [n_rot/2], or NULL */
    LayerWeights *layers;
    /* KV cache: [layer][n_ctx][n_head_kv * head_dim] of opt.kv_type */
    void *k_cache, *v_cache;
    uint32_t n_past;          /* positions of the cache that are filled */
    /* activations, [batch][...] */
    float *x, *xb, *q, *k, *v, *att, *hb, *hb2;
    float *scores;            /* [n_head][n_ctx] */
    void *act_q8_0, *act_q8_k;/* the step's matmul input quantized for the kernels (kernels.h) */
    float *logits;            /* [batch or 1][n_vocab] */
    uint32_t n_logits;        /* rows of logits filled by the last step */
    char err[256];            /* why the last forward call failed */
} Model;

/* The architectures pith knows; NULL if unsupported. */
const ArchInfo *model_arch(const char *name);

/* Reads the configuration from the metadata and tensor shapes with
 * gguf_walk (before the arena exists). Checks every number. */
int model_read_config(Gguf *g, ModelConfig *cfg, GgufError *err);

/* Checks options against the configuration ("-c: ..." style message in err). */
int model_check_options(const ModelConfig *cfg, const ModelOptions *opt, GgufError *err);

/* Adds the weights' table (and the weights when not mapped), norms, KV
 * cache and activations to the plan. */
void model_plan(const ModelConfig *cfg, const ModelOptions *opt, Plan *plan);

/* Binds every weight by name (after gguf_index), checking type and shape,
 * and carves what model_plan planned. */
int model_load(Model *m, Gguf *g, Arena *arena, const ModelConfig *cfg, const ModelOptions *opt,
               GgufError *err);

#endif
