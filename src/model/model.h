/* This folder: src/model/ - a model's configuration, architectures and
 * weights (model.h), the forward pass over one sequence's state and a
 * workspace (forward.h), --load stream's window, the context shift and
 * the memory planner. May call src/arena/, src/gguf/, src/kernels/ and
 * port/ (threads, the stream reader). */
/* model.h - a model's configuration and its weights, bound by name: what
 * is loaded once, read-only, and shared by every sequence that runs on it.
 * What changes while a sequence runs (its KV cache and position) and the
 * scratch of a forward step live in forward.h (SeqState, Workspace).
 *
 * Steps, each a separate call so commands can compose them with other
 * users of the one arena (tokenizer, ...):
 *   gguf_open -> model_read_config (one walk of the header; allocates nothing)
 *   -> plan_init, gguf_plan, forward_plan (weights, sequences, workspace)
 *   -> port_arena_map, arena_init -> gguf_index -> model_load
 *   -> seq_init (per sequence), workspace_init.
 *
 * Adding an architecture:
 *   1. a row of arch_table[] (model.c): its general.architecture name, RoPE
 *      pairing, traits (activation, norm placement, attention kind) and a
 *      rule for every layer tensor (required, optional, refused);
 *   2. a tensor it has that no architecture had: an LT_* id, a field in
 *      LayerWeights and a row of layer_tensors[] (name, shape from the
 *      configuration's widths, which kind of layer has it); loading,
 *      streaming and `pith bench` take it from the table;
 *   3. a trait value no architecture had (a new activation, a sliding
 *      window): the new enum value and the stage that is truly its own; a
 *      new kind of layer (a recurrent one) is a mixer (layer.h: its plan
 *      and stages, run fused or a region per stage like every layer's);
 *      per-sequence state it keeps goes in SeqState, sized by forward_plan;
 *      a mixture of experts is rules too (model.c: MOE_LAYER, the shared
 *      expert's tensors) and the router's fields (moe_gating, moe_norm_w,
 *      moe_dense_lead; moe.h);
 *   4. test it against llama.cpp on a random-weight file of that
 *      architecture (tests/t_llamacpp.sh, tests/tools/main_mkmodel.c). */
#ifndef PITH_MODEL_H
#define PITH_MODEL_H

#include <stdint.h>

#include "../arena/arena.h"
#include "../gguf/gguf.h"

/* The per-architecture choices, as data: a new architecture of the same
 * shape is a row in model.c's table; one that differs gets a new named
 * trait here and only the steps that are truly its own. */
typedef enum {
    ROPE_NORM = 0, /* rotate adjacent pairs (2i, 2i+1) */
    ROPE_NEOX = 2  /* rotate (i, i + head_dim/2) */
} RopeStyle;

typedef enum {
    ACT_SILU = 0,  /* of the FFN gate: silu(gate) * up */
    ACT_GELU = 1   /* gelu(gate) * up, GELU's tanh form on F16-rounded values as ggml computes it */
} Activation;
typedef enum {
    NORM_PRE = 0,     /* RMSNorm before attention and before the FFN */
    NORM_PRE_POST = 1 /* and on their outputs before the residual adds (Gemma 3) */
} NormPlacement;
typedef enum {
    ATTN_FULL = 0, /* causal attention over every cached position */
    ATTN_SWA = 1,  /* with attention.sliding_window: most layers see only the last `window`
                      positions (attention.sliding_window_pattern: of every P layers the
                      first P - 1, default 6), their cache a ring, their RoPE of
                      rope.freq_base_swa; the others see all */
    ATTN_SWA_ALL = 2, /* with attention.sliding_window: every attention layer sees only the
                        last `window` positions, with the model's one RoPE (LFM2.5) */
    ATTN_SWA_LAYERS = 3 /* attention.sliding_window_pattern is an array of bools, one per layer:
                           the windowed layers as ATTN_SWA's, with head sizes, kv heads and RoPE
                           widths of their own (the *_swa keys; Gemma 4) */
} AttentionKind;

typedef enum {
    TENSOR_REFUSED = 0,   /* present means a variant pith would get wrong: refused */
    TENSOR_OPTIONAL = 1,  /* used when present (in every layer, or in none) */
    TENSOR_REQUIRED = 2,
    TENSOR_ATTN_ONLY = 3, /* required in the attention layers of a hybrid model, refused in the others */
    TENSOR_RECUR_ONLY = 4 /* required in its recurrent (DeltaNet) layers, refused in the others */
} TensorRule;

/* The tensors of a layer, blk.N.<name>.<suffix>, in the order they are
 * bound (model.c: layer_tensors[] gives each one's name, shape and place
 * in LayerWeights). Vectors first, then the matrices. */
typedef enum {
    LT_ATTN_NORM, LT_FFN_NORM, LT_Q_NORM, LT_K_NORM, LT_Q_BIAS, LT_K_BIAS, LT_V_BIAS,
    LT_Q, LT_K, LT_V, LT_OUT, LT_GATE, LT_UP, LT_DOWN,
    LT_QKV,      /* q, k, v in one matrix (Phi-3): wq, wk, wv are views of its rows */
    LT_GATE_UP,  /* "ffn_up" holding gate then up (Phi-3): w_gate, w_up are views */
    LT_ATTN_POST_NORM, LT_FFN_POST_NORM, /* NORM_PRE_POST's norms of the outputs */
    LT_CONV, LT_CONV_IN, LT_CONV_OUT,    /* a short-convolution layer's kernel and projections (LFM2) */
    /* Qwen3.5 (qwen35): "attn_q" holding q and its output gate, head by head
     * (bound to wq); "post_attention_norm" as the norm before the FFN (bound
     * to ffn_norm); the gated DeltaNet layers' tensors (deltanet.h) */
    LT_Q_GATE, LT_FFN_NORM_PA,
    LT_SSM_QKV, LT_SSM_Z, LT_SSM_BETA, LT_SSM_ALPHA, LT_SSM_OUT,
    LT_SSM_CONV, LT_SSM_DT, LT_SSM_A, LT_SSM_NORM,
    /* mixture of experts (moe.h): the router, the experts' 3-D matrices,
     * the selection bias (LFM2-MoE) */
    LT_GATE_INP, LT_GATE_EXPS, LT_UP_EXPS, LT_DOWN_EXPS, LT_EXP_PROBS_B,
    /* a shared expert every token uses, weighed by sigmoid(gate_inp_shexp h) (Qwen3.5-MoE) */
    LT_GATE_INP_SHEXP, LT_GATE_SHEXP, LT_UP_SHEXP, LT_DOWN_SHEXP,
    /* Gemma 4: the per-layer embeddings' gate, projection and its norm; the
     * layer's output scale */
    LT_PE_GATE, LT_PE_PROJ, LT_PE_POST_NORM, LT_OUT_SCALE,
    LT_COUNT
} LayerTensorId;

/* Widths a tensor's shape is made of, from the configuration (model_dim). */
typedef enum {
    DIM_EMBD, DIM_FF, DIM_Q, DIM_KV, DIM_V, DIM_ATT, DIM_HEAD, DIM_ONE, DIM_QKV, DIM_FF2,
    DIM_CONV,              /* a short convolution's taps (LFM2) */
    DIM_EMBD3,             /* 3 n_embd: a short convolution's in_proj (LFM2) */
    DIM_Q2,                /* q and its gate (qwen35) */
    DIM_SSM_CONV,          /* DeltaNet: the convolved channels, q k v (2 * key heads * d_state + d_inner) */
    DIM_SSM_V,             /* d_inner: value heads * d_state */
    DIM_SSM_H,             /* value heads */
    DIM_SSM_HEAD,          /* d_state */
    DIM_SSM_K,             /* the convolution's kernel size */
    DIM_EXPERTS,           /* expert_count */
    DIM_FF_EXP,            /* an expert's hidden width: expert_feed_forward_length */
    DIM_FF_SHEXP,          /* the shared expert's: expert_shared_feed_forward_length */
    DIM_PE                 /* the per-layer embeddings' width (Gemma 4) */
} ModelDim;

/* Which layers have a tensor: every layer, or (an architecture mixing
 * kinds of layers) only the attention or only the recurrent ones (LFM2's
 * short convolutions; Qwen3.5 says the same with TENSOR_ATTN_ONLY and
 * TENSOR_RECUR_ONLY in its table). */
typedef enum { PART_ANY = 0, PART_ATTN = 1, PART_RECUR = 2 } LayerPart;

/* Which FFN a tensor belongs to: any layer's, the dense FFN's, or a
 * mixture of experts' (an MoE model's leading dense layers have the dense
 * one, the others the experts). */
typedef enum { FFN_ANY = 0, FFN_DENSE = 1, FFN_MOE = 2 } LayerFfn;

typedef struct {
    const char *name;     /* blk.N.<name>.<suffix> */
    const char *suffix;   /* "weight" or "bias", or "" (blk.N.<name>: ssm_a) */
    /* (enums in bytes: the tables are in every binary) */
    uint8_t matrix;       /* 1: a Weight (any computable type); 0: F32 values, copied */
    uint8_t cols, rows;   /* ModelDim of ne[0], ne[1] (a vector: rows DIM_ONE) */
    size_t offset;        /* of its Weight or float * in LayerWeights */
    uint8_t part;         /* LayerPart */
    uint8_t ffn;          /* LayerFfn */
    uint8_t per_expert;   /* [cols, rows, expert_count]: a Weight of rows * expert_count rows,
                             expert e's matrix its rows [e rows, (e + 1) rows) (model_expert) */
    uint8_t writes_kv;    /* makes the layer's keys or values: a layer reading another's KV
                             (Gemma 4's last layers) may carry it, unused */
} LayerTensor;

/* How a mixture of experts weighs its experts (llama.cpp's
 * expert_gating_func numbers): MOE_GATING_KEY reads the file's key. */
typedef enum { MOE_GATING_KEY = 0, MOE_SOFTMAX = 1, MOE_SIGMOID = 2 } MoeGating;

typedef struct {
    const char *name;     /* general.architecture */
    RopeStyle rope;
    Activation act;
    NormPlacement norm;
    AttentionKind attn;   /* of every layer */
    uint8_t layer[LT_COUNT]; /* TensorRule: what a layer must, may or must not have */
    TensorRule rope_freqs;/* rope_freqs.weight: per-pair frequency divisors (Llama 3.x) */
    TensorRule rope_factors; /* rope_factors_short/long.weight (Phi-3 LongRoPE): divisors
                                chosen by the context length, as llama.cpp does */
    uint8_t no_rope_every;/* k > 0: layers l with (l + 1) % k == 0 skip RoPE (SmolLM3: 4) */
    uint8_t partial_rope; /* rope.dimension_count may be below the head dimension (Phi-4-mini) */
    uint8_t embd_scale;   /* the token embeddings are multiplied by sqrt(n_embd) (Gemma) */
    uint8_t shortconv;    /* layers whose attention.head_count_kv[l] is 0 are short convolutions (LFM2) */
    uint8_t yarn_options; /* reads rope.scaling.yarn_beta_fast/_slow, yarn_log_multiplier and
                             attention.temperature_scale (Ministral 3); others take llama.cpp's
                             defaults (32, 1, 0, none) */
    uint8_t mtp_layers;   /* nextn_predict_layers extra layers may follow the trunk (Qwen3.5's
                             multi-token prediction): their tensors are left in the file, unused */
    const char *output_norm; /* the final norm's tensor when not output_norm.weight */
    /* a mixture of experts (the row requires LT_GATE_INP; moe.h): */
    uint8_t moe_gating;   /* MoeGating of the router's probabilities */
    uint8_t moe_norm_w;   /* the chosen experts' weights are divided by their sum */
    uint8_t moe_dense_lead; /* leading_dense_block_count: that many first layers have a dense FFN */
    uint8_t gemma4;       /* Gemma 4: q.k unscaled (q/k norms instead), v RMS-normed without a
                             weight; reads attention.shared_kv_layers (the last layers read an
                             earlier layer's KV), embedding_length_per_layer_input (per-layer
                             embeddings) and per-layer feed_forward_length / head_count_kv */
} ArchInfo;

/* An architecture mixing kinds of layers (per-layer head_count_kv) has at
 * most this many. */
#define MODEL_MAX_LAYERS_MIXED 256

typedef struct {
    const ArchInfo *arch;
    uint32_t n_layer;     /* block_count, less the multi-token prediction layers */
    uint32_t n_layer_mtp; /* nextn_predict_layers (arch->mtp_layers): blk.n_layer .. are not used */
    uint32_t n_embd;      /* embedding_length */
    uint32_t n_ff;        /* feed_forward_length */
    uint32_t n_head;      /* attention.head_count */
    uint32_t n_head_kv;   /* attention.head_count_kv (default n_head) */
    uint32_t head_dim;    /* attention.key_length (default n_embd / n_head) */
    uint32_t head_dim_v;  /* attention.value_length (default head_dim) */
    uint32_t n_vocab;     /* rows of token_embd.weight */
    uint32_t n_ctx_train; /* context_length */
    float rope_base;      /* rope.freq_base (default 10000) */
    uint32_t n_rot;       /* rope.dimension_count: elements of a head that rotate (= head_dim, but
                             for an arch with partial_rope: the first n_rot, the rest pass through) */
    float rope_attn_factor; /* rope.scaling.attn_factor (default 1): scales the rotated elements */
    float rope_freq_scale; /* 1 / rope.scaling.factor with linear scaling (default 1): positions are
                              multiplied by it in the global layers' RoPE (not the windowed ones) */
    uint32_t n_ctx_orig;  /* rope.scaling.original_context_length (default context_length): with
                             rope_factors, a context above it takes the long factors */
    int rope_yarn;        /* rope.scaling.type yarn: pair i turns at its frequency times
                             rope_freq_scale + (1 - rope_freq_scale) * ramp(i) (ggml's YaRN with
                             ext_factor 1), and rope_attn_factor holds YaRN's magnitude too */
    float yarn_low, yarn_high; /* YaRN's correction range of pairs: ramp(i) is 1 up to low, 0 from high */
    float attn_temp_scale; /* attention.temperature_scale (0: none): q of position p is multiplied by
                              1 + attn_temp_scale * ln(floor(p / n_ctx_orig) + 1) (Llama 4's tuning) */
    uint8_t has[LT_COUNT];/* the layers have this tensor (required ones, and optional ones present) */
    int rope_freqs;       /* the file has rope_freqs.weight (n_rot/2 floats) */
    int rope_factors;     /* the file has rope_factors_short.weight and rope_factors_long.weight */
    float norm_eps;       /* attention.layer_norm_rms_epsilon */
    uint32_t n_swa;       /* ATTN_SWA: attention.sliding_window (0: every layer is global) */
    uint32_t swa_pattern; /* attention.sliding_window_pattern (0: every attention layer windowed) */
    float rope_base_swa;  /* rope.freq_base_swa (default 10000): the windowed layers' base */
    float attn_scale;     /* of q.k: 1/sqrt(head_dim) (Gemma 3 27B: 1/sqrt(n_embd/n_head), as llama.cpp) */
    float logit_softcap;  /* final_logit_softcapping: logits = c * tanh(logits / c) (0: none) */
    uint32_t conv_l;      /* shortconv.l_cache: taps of a short convolution's kernel (LFM2: 3) */
    uint64_t conv_layers[MODEL_MAX_LAYERS_MIXED / 64]; /* bit l: layer l is a short convolution */
    /* ATTN_SWA_LAYERS (Gemma 4): which layers are windowed and their shapes;
     * other architectures have the *_swa values of the global layers */
    uint64_t swa_layers[MODEL_MAX_LAYERS_MIXED / 64]; /* bit l: layer l is windowed */
    uint32_t head_dim_swa, head_dim_v_swa; /* attention.key_length_swa, value_length_swa */
    uint32_t n_head_kv_swa; /* head_count_kv[l] of a windowed layer */
    uint32_t n_rot_swa;   /* rope.dimension_count_swa */
    /* arch->gemma4: */
    uint32_t n_layer_kv;  /* layers 0..n_layer_kv-1 keep a KV cache; the later ones (shared_kv_layers)
                             read the last such layer's of their kind (model_kv_layer) and keep none */
    uint32_t n_ff_shared; /* feed_forward_length[l] of those later layers (a double-wide MLP) */
    uint32_t n_embd_pe;   /* embedding_length_per_layer_input (0: no per-layer embeddings) */
    uint64_t pe_bytes;    /* per_layer_token_embd.weight: mapped or read by rows, never copied */
    uint64_t pe_proj_bytes; /* per_layer_model_proj.weight (arena-rounded): resident when streaming */
    /* arch->deltanet: ssm.* keys and the layer pattern */
    uint32_t full_attn_interval; /* full_attention_interval: layers l with (l + 1) % it == 0 attend */
    uint32_t ssm_d_conv;  /* ssm.conv_kernel */
    uint32_t ssm_d_state; /* ssm.state_size: a key head's and a value head's width */
    uint32_t ssm_n_k;     /* ssm.group_count: key heads */
    uint32_t ssm_n_v;     /* ssm.time_step_rank: value heads (a multiple of the key heads) */
    /* a mixture of experts (arch->layer[LT_GATE_INP]): */
    uint32_t n_expert;    /* expert_count (0: every FFN is dense) */
    uint32_t n_expert_used; /* expert_used_count: experts each token is routed to */
    uint32_t n_ff_exp;    /* expert_feed_forward_length (qwen3moe: else n_ff / n_expert_used) */
    uint32_t n_dense_lead;/* leading_dense_block_count (arch->moe_dense_lead) */
    uint32_t n_ff_shexp;  /* the shared expert's width (expert_shared_feed_forward_length, else
                             n_ff), 0: none (the arch has no LT_UP_SHEXP) */
    uint8_t moe_gating;   /* MOE_SOFTMAX or MOE_SIGMOID (the arch's, or its key's) */
    uint64_t expert_bytes;/* bytes of the experts' 3-D matrices in the files */
    int tied_output;      /* no output.weight: logits use token_embd.weight */
    int mapped;           /* every file is memory-mapped: weights are used in place */
    uint64_t chat_template_bytes; /* of tokenizer.chat_template (0: none), seen in the same walk */
    uint64_t weight_bytes;/* arena bytes to hold the weight matrices when not mapped */
    uint64_t matrix_types;/* bit t set: some weight matrix is of GgmlType t (t < 64) */
    uint64_t side_bytes;  /* arena bytes of the scales' copies of mapped matrices (kernels.h:
                             KERN_SIDE_ROWS; 0 where the kernels want none), token_embd's apart: */
    uint64_t embd_side_bytes; /* copied only when it is the output matrix too */
    uint64_t norm_floats; /* floats of all norm vectors (always copied into the arena) */
    /* for --load stream (model_stream_bytes): */
    uint64_t stream_layer_bytes; /* room for any one layer's matrices: the largest of each
                                    matrix over the layers, arena-rounded, summed */
    uint64_t embd_row_bytes;     /* one row of token_embd.weight */
    uint64_t out_row_bytes;      /* one row of the output matrix (token_embd's when tied) */
} ModelConfig;

/* KV cache element types. KV_Q8_0 stores each cached row as ggml's Q8_0
 * blocks: 32 elements in 34 bytes (f16 scale d, then 32 int8 codes c,
 * element = d * c); rows are one head long, so it needs head dimensions
 * that are multiples of 32 (model_check_options). */
typedef enum { KV_F32 = 0, KV_F16 = 1, KV_Q8_0 = 2 } KvType;

/* Bytes of n consecutive cached elements of type t (n a multiple of 32 for
 * KV_Q8_0). */
static inline uint64_t kv_type_bytes(KvType t, uint64_t n)
{
    return t == KV_Q8_0 ? n / 32 * 34 : t == KV_F16 ? n * 2 : n * 4;
}

/* How the forward pass reaches the weight matrices (--load):
 *   LOAD_MMAP    in place, in the memory-mapped files (zero-copy); files that
 *                could not be mapped make it LOAD_READ;
 *   LOAD_READ    copied into the arena once, with chunked reads;
 *   LOAD_STREAM  read again for every forward step, layer by layer, through
 *                a bounded window of the arena (weight_stream.h).
 * READ and STREAM want the files opened without mmap (gguf_open use_mmap 0):
 * then nothing of them is mapped and the arena is all that is resident. */
typedef enum { LOAD_MMAP = 0, LOAD_READ = 1, LOAD_STREAM = 2 } LoadMode;

typedef struct {
    uint32_t n_ctx;       /* positions the KV cache holds (1..n_ctx_train) */
    KvType kv_type;
    uint32_t batch;       /* most tokens per forward step (1..MODEL_MAX_BATCH) */
    int all_logits;       /* keep logits of every token of a step (else only the last) */
    LoadMode load;
    uint64_t stream_window; /* LOAD_STREAM: arena bytes for the weights; below the smallest
                               window (model_stream_bytes, e.g. 0) it is the smallest; what is
                               above it keeps the first layers resident */
    int stream_keep_cache;  /* LOAD_STREAM: leave what was read in the page cache (no DONTNEED) */
    uint32_t n_seq;       /* sequences planned, each with a KV cache of n_ctx (0 counts as 1) */
    uint32_t spec_rows;   /* rows of logits a step may fill at most (speculative verification), or 0 */
} ModelOptions;

/* The KV caches hold one row per (layer, kv head, position): head_dim
 * elements for K, head_dim_v for V, of kv_type_bytes(kv_type, dim) bytes,
 * in the order [layer][kv head][position], so that attention reads a head's
 * rows one after another (with [layer][position][head] the rows of one head
 * lie a whole position apart: attention over 4096 positions was 2.4 (F16)
 * to 3.2 (Q8_0) times slower, and a Q8_0 cache slower than F16). The index
 * of a row: */
static inline uint64_t kv_row_index(const ModelConfig *c, uint32_t n_ctx, uint32_t layer, uint32_t head,
                                    uint32_t pos)
{
    return ((uint64_t)layer * c->n_head_kv + head) * n_ctx + pos;
}

/* A weight matrix: `rows` rows of `cols` elements of `type`. */
typedef struct {
    const uint8_t *data;
    uint32_t type;
    uint64_t rows, cols;
    uint64_t row_bytes;
    uint32_t file_index;  /* where its bytes are: gguf files[file_index], from file_offset */
    uint64_t file_offset;
    int packed;           /* data repacked in place for the kernels (kernels.h: KERN_PACK_ROWS) */
    const uint16_t *side; /* mapped: its scales copied for the kernels (kernels.h: KERN_SIDE_ROWS), or NULL */
} Weight;

/* A layer's tensors; layer_tensors[] (model.c) maps each LayerTensorId to
 * its field. Vectors are NULL and matrices have rows == 0 when the layer
 * has no such tensor. */
typedef struct {
    float *attn_norm, *ffn_norm, *q_norm, *k_norm;
    float *bq, *bk, *bv;
    Weight wq, wk, wv, wo;
    Weight w_gate, w_up, w_down;
    Weight wqkv, w_gate_up;   /* fused (LT_QKV, LT_GATE_UP): the views above are set from them */
    float *attn_post_norm, *ffn_post_norm;
    float *conv;              /* [n_embd][conv_l]: each channel's taps, oldest first */
    Weight conv_in, conv_out; /* n_embd -> 3 n_embd (b, c, x), n_embd -> n_embd */
    /* gated DeltaNet (deltanet.h) */
    Weight ssm_qkv, ssm_z, ssm_beta, ssm_alpha, ssm_out;
    float *ssm_conv, *ssm_dt, *ssm_a, *ssm_norm;
    /* mixture of experts (moe.h) */
    Weight gate_inp;          /* the router: n_embd -> n_expert */
    Weight gate_exps, up_exps, down_exps; /* every expert's matrix, one after another */
    float *exp_probs_b;       /* [n_expert] added to the probabilities to choose (not to weigh) */
    Weight gate_inp_shexp;    /* n_embd -> 1: the shared expert's gate */
    Weight gate_shexp, up_shexp, down_shexp;
    /* Gemma 4 (pe.h) */
    Weight pe_gate, pe_proj;  /* n_embd -> n_embd_pe, n_embd_pe -> n_embd */
    float *pe_post_norm;      /* of pe_proj's output */
    float *out_scale;         /* [1]: the layer's output is multiplied by it */
} LayerWeights;

extern const LayerTensor layer_tensors[LT_COUNT];

/* Matrix i of a layer (layer_tensors[i].matrix must be 1). */
static inline const Weight *layer_matrix(const LayerWeights *lw, int i)
{
    return (const Weight *)(const void *)((const char *)lw + layer_tensors[i].offset);
}

/* Sets wq, wk, wv (w_gate, w_up) as views of the rows of the fused
 * matrices when the model has them (after binding, and after a streamed
 * layer lands in a slot). */
void model_layer_views(const ModelConfig *c, LayerWeights *lw);

/* Whether layer l is a short convolution (LFM2) instead of attention. */
static inline int model_layer_conv(const ModelConfig *c, uint32_t l)
{
    return l < MODEL_MAX_LAYERS_MIXED && (c->conv_layers[l / 64] >> (l % 64) & 1);
}

/* Set bits of words[] below bit l. */
static inline uint32_t model_bits_before(const uint64_t *words, uint32_t l)
{
    uint32_t n = 0;
    for (uint32_t w = 0; w < MODEL_MAX_LAYERS_MIXED / 64 && w * 64 < l; w++) {
        uint64_t bits = words[w];
        if (l < w * 64 + 64) bits &= ((uint64_t)1 << (l - w * 64)) - 1;
        n += (uint32_t)__builtin_popcountll(bits);
    }
    return n;
}

/* Short-convolution layers among layers 0..l-1. */
static inline uint32_t model_conv_before(const ModelConfig *c, uint32_t l)
{
    return model_bits_before(c->conv_layers, l);
}

/* Whether the architecture has gated DeltaNet layers (Qwen3.5: every
 * full_attention_interval-th layer attention with a gated output, the
 * others DeltaNet; src/model/deltanet.h). */
static inline int model_arch_deltanet(const ArchInfo *a)
{
    return a->layer[LT_SSM_QKV] != TENSOR_REFUSED;
}

/* Whether layer l keeps a recurrent state of fixed size instead of a KV
 * cache: a short convolution (LFM2) or a gated DeltaNet layer (Qwen3.5). */
static inline int model_layer_recurrent(const ModelConfig *c, uint32_t l)
{
    return model_layer_conv(c, l) || (c->full_attn_interval != 0 && (l + 1) % c->full_attn_interval != 0);
}

/* Recurrent layers among layers 0..l-1 (the index of layer l's state). */
static inline uint32_t model_recurrent_before(const ModelConfig *c, uint32_t l)
{
    return model_conv_before(c, l) + (c->full_attn_interval ? l - l / c->full_attn_interval : 0);
}

/* Whether layer l attends through a sliding window (its cache a ring):
 * with swa_pattern 0, every attention layer; ATTN_SWA_LAYERS: the file's
 * bools. */
int model_layer_swa(const ModelConfig *c, uint32_t l);
/* Windowed layers among layers 0..l-1. */
uint32_t model_swa_before(const ModelConfig *c, uint32_t l);

/* The layer whose KV cache layer l reads: its own, or for Gemma 4's last
 * layers the last layer of their kind that keeps one (llama.cpp's reuse:
 * n_layer_kv - 2 windowed, n_layer_kv - 1 global; model.c checks the kinds). */
uint32_t model_kv_layer(const ModelConfig *c, uint32_t l);

/* Layer l's shapes as a configuration of its own (head sizes, kv heads,
 * RoPE width and FFN width differ between Gemma 4's kinds of layers): the
 * model's with a windowed layer's *_swa values, a KV-sharing layer's
 * n_ff_shared. */
void model_layer_cfg(const ModelConfig *c, uint32_t l, ModelConfig *out);
/* The widest of every kind's shapes (the workspace holds any layer's). */
void model_widest_cfg(const ModelConfig *c, ModelConfig *out);

/* Whether layer l's FFN is a mixture of experts. */
static inline int model_layer_moe(const ModelConfig *c, uint32_t l)
{
    return c->n_expert != 0 && l >= c->n_dense_lead;
}

/* Expert e's matrix: rows of a per_expert Weight, no copy. */
Weight model_expert(const Weight *w, uint32_t e, uint32_t n_expert);

/* Whether a layer of l's kind (attention or recurrent; dense FFN or
 * experts) may have tensor i: the tensor's part and FFN, the
 * architecture's rule for it. */
static inline int model_layer_allows(const ModelConfig *c, uint32_t l, int i)
{
    int recur = model_layer_recurrent(c, l) != 0;
    TensorRule rule = (TensorRule)c->arch->layer[i];
    if (rule == TENSOR_REFUSED) return 0;
    if (layer_tensors[i].ffn != FFN_ANY && (layer_tensors[i].ffn == FFN_MOE) != model_layer_moe(c, l)) return 0;
    if (layer_tensors[i].part != PART_ANY && (layer_tensors[i].part == PART_RECUR) != recur) return 0;
    if (layer_tensors[i].writes_kv && l >= c->n_layer_kv) return 0;
    if (rule == TENSOR_ATTN_ONLY) return !recur;
    if (rule == TENSOR_RECUR_ONLY) return recur;
    return 1;
}

/* Whether layer l has tensor i (the architecture's, of the layer's kind). */
static inline int model_layer_has(const ModelConfig *c, uint32_t l, int i)
{
    return c->has[i] && model_layer_allows(c, l, i);
}

/* Whether layer l rotates q and k (SmolLM3 leaves every fourth out). */
static inline int model_layer_ropes(const ModelConfig *c, uint32_t l)
{
    return c->arch->no_rope_every == 0 || (l + 1) % c->arch->no_rope_every != 0;
}

/* The loaded weights. Read-only once model_load returns: any number of
 * sequences use them at once. */
typedef struct Model {
    ModelConfig cfg;
    /* Gemma 4's per-layer embeddings (pe.h): */
    Weight pe_embd;           /* per_layer_token_embd [n_layer n_embd_pe, n_vocab]: mapped, or its
                                 rows read per step (data NULL) */
    Weight pe_model_proj;     /* n_embd -> n_layer n_embd_pe */
    float *pe_proj_norm;      /* [n_embd_pe] */
    float *ones;              /* [the widest head]: the weightless V norm's weight (Gemma 4) */
    LoadMode load;
    uint32_t resident_layers; /* LOAD_STREAM: layers 0..resident_layers-1 are in the arena; the
                                 others (and token_embd, output) have data NULL: the forward
                                 step reads them through its Workspace's stream window */
    Gguf *gguf;
    Weight tok_embd, output;  /* output is tok_embd when tied */
    float *output_norm;
    float *rope_freqs;        /* rope_freqs.weight [n_rot/2], or the rope factors (short or long,
                                 by the context), or NULL */
    LayerWeights *layers;
} Model;

#define MODEL_MAX_BATCH 512
#define MODEL_MAX_HEAD_DIM 1024

/* The architectures pith knows; NULL if unsupported. */
const ArchInfo *model_arch(const char *name);

/* Reads the configuration from the metadata and tensor shapes in one
 * gguf_walk (before the arena exists): GGUF puts every key before the
 * tensor records. Checks every number. */
int model_read_config(Gguf *g, ModelConfig *cfg, GgufError *err);

/* Checks options against the configuration ("-c: ..." style message in err). */
int model_check_options(const ModelConfig *cfg, const ModelOptions *opt, GgufError *err);

/* The width d of a model (a tensor's rows or columns). */
uint64_t model_dim(const ModelConfig *c, ModelDim d);

/* Adds the weights' part of the arena: the layer table, norms, and the
 * matrices when they are not used in place (read, or stream's resident
 * layers). forward_plan adds the sequences and the workspace. */
void model_plan(const ModelConfig *cfg, const ModelOptions *opt, Plan *plan);

/* Binds every weight by name (after gguf_index), checking type and shape,
 * and carves what model_plan planned. */
int model_load(Model *m, Gguf *g, Arena *arena, const ModelConfig *cfg, const ModelOptions *opt,
               GgufError *err);

/* --load stream: what the weights take in the arena, in parts (the
 * window itself belongs to the Workspace, weight_stream.h). */
typedef struct {
    uint64_t slot_bytes;      /* one of the two slots: any layer's matrices, or one output row */
    uint64_t embd_bytes;      /* opt->batch rows of token_embd (read per step, a row per token) */
    uint64_t min_bytes;       /* the smallest window: 2 slots + embd rows */
    uint32_t resident_layers; /* layers opt->stream_window holds beyond the smallest window */
    uint64_t resident_bytes;
    uint64_t total;           /* min_bytes + resident_bytes: what model_plan adds for the weights */
    uint32_t out_chunk_rows;  /* the output matrix streams through the slots in chunks of these rows */
    uint32_t n_out_chunks;
    uint64_t read_per_step;   /* at most this many bytes read per forward step (per generated token):
                                 the streamed layers, the output matrix, the step's embedding rows
                                 (only the rows when the streamed units fit the two slots for good) */
} ModelStreamParts;

/* The arena bytes of the weights with opt->load == LOAD_STREAM and
 * opt->stream_window (0: the smallest window); fills parts if not NULL.
 * Uses cfg (model_read_config) and opt->batch, opt->stream_window only.
 * The memory planner calls it with stream_window 0 to learn the least a
 * streamed model needs, and may pass any larger window: the bytes above
 * the smallest keep whole layers resident (fewer bytes read per token). */
uint64_t model_stream_bytes(const ModelConfig *cfg, const ModelOptions *opt, ModelStreamParts *parts);

/* Compute threads when -t is not given, for `cores` online cores: all of
 * them, but one fewer with --load stream, whose reader thread needs a core
 * to itself (with OpenMP's default spinning, sharing it stalls both). */
int model_default_threads(LoadMode load, int cores);

#endif
