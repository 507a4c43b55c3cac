/* model.c - configuration from metadata, memory plan, weights bound by name.
 *
 * The configuration is read before any memory exists, in one walk of the
 * header: the keys come first in a GGUF file (the architecture name and
 * "<arch>.*" numbers are collected), then the tensor records, whose shapes
 * give the vocabulary size, a tied output and the bytes of the weights. */
#include "model.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "../base/ggml_type.h"
#include "../kernels/kernels.h"
#include "../kernels/quant.h"
#include "../base/fmath.h"
#include "moe.h"

#define R TENSOR_REQUIRED
#define O TENSOR_OPTIONAL
#define X TENSOR_REFUSED
#define A TENSOR_ATTN_ONLY
#define D TENSOR_RECUR_ONLY
/* What llama.cpp accepts for each: Qwen3 has per-head q/k norms; Qwen2
 * always has q/k/v biases; llama files may have them, and Llama 3.x files
 * carry rope_freqs.weight. SmolLM3 is llama without RoPE in every fourth
 * layer (llama.cpp fixes the step at 4: no key says it) and without
 * rope_freqs (llama.cpp would ignore one). Phi-3 (and Phi-4-mini) fuse
 * q/k/v into attn_qkv and gate/up into ffn_up, rotate NeoX pairs over
 * rope.dimension_count elements of a head (Phi-4-mini: 96 of 128) and may
 * carry LongRoPE factors. Every rule is named by its tensor ([LT_...]), so
 * that a tensor added to LayerTensorId cannot shift another architecture's
 * rules; a tensor a row does not name is refused (TENSOR_REFUSED is 0). */
_Static_assert(TENSOR_REFUSED == 0, "arch_table's unnamed layer tensors must mean refused");
#define R TENSOR_REQUIRED
#define O TENSOR_OPTIONAL
#define A TENSOR_ATTN_ONLY
#define D TENSOR_RECUR_ONLY
/* The norms, attention and gated FFN of a llama-shaped layer. */
#define LLAMA_LAYER                                                                                              \
    [LT_ATTN_NORM] = R, [LT_FFN_NORM] = R, [LT_Q] = R, [LT_K] = R, [LT_V] = R, [LT_OUT] = R, [LT_GATE] = R,      \
    [LT_UP] = R, [LT_DOWN] = R
/* A mixture of experts' FFN (the dense FFN's rules above stay for an
 * architecture's leading dense layers: FFN_DENSE, FFN_MOE) */
#define MOE_LAYER [LT_GATE_INP] = R, [LT_GATE_EXPS] = R, [LT_UP_EXPS] = R, [LT_DOWN_EXPS] = R
static const ArchInfo arch_table[] = {
    {.name = "qwen3", .rope = ROPE_NEOX, .act = ACT_SILU, .norm = NORM_PRE, .attn = ATTN_FULL,
     .layer = {LLAMA_LAYER, [LT_Q_NORM] = R, [LT_K_NORM] = R}},
    {.name = "qwen2", .rope = ROPE_NEOX, .act = ACT_SILU, .norm = NORM_PRE, .attn = ATTN_FULL,
     .layer = {LLAMA_LAYER, [LT_Q_BIAS] = R, [LT_K_BIAS] = R, [LT_V_BIAS] = R}},
    {.name = "llama", .rope = ROPE_NORM, .act = ACT_SILU, .norm = NORM_PRE, .attn = ATTN_FULL,
     .layer = {LLAMA_LAYER, [LT_Q_BIAS] = O, [LT_K_BIAS] = O, [LT_V_BIAS] = O}, .rope_freqs = O},
    /* Ministral 3 (mistral3): llama with YaRN's own options and attention
     * temperature (its MoE variant is refused by its tensors) */
    {.name = "mistral3", .rope = ROPE_NORM, .act = ACT_SILU, .norm = NORM_PRE, .attn = ATTN_FULL,
     .layer = {LLAMA_LAYER}, .rope_freqs = O, .yarn_options = 1},
    {.name = "smollm3", .rope = ROPE_NORM, .act = ACT_SILU, .norm = NORM_PRE, .attn = ATTN_FULL,
     .layer = {LLAMA_LAYER, [LT_Q_BIAS] = O, [LT_K_BIAS] = O, [LT_V_BIAS] = O}, .no_rope_every = 4},
    {.name = "phi3", .rope = ROPE_NEOX, .act = ACT_SILU, .norm = NORM_PRE, .attn = ATTN_FULL,
     .layer = {[LT_ATTN_NORM] = R, [LT_FFN_NORM] = R, [LT_QKV] = R, [LT_OUT] = R, [LT_GATE_UP] = R, [LT_DOWN] = R},
     .rope_factors = O, .partial_rope = 1},
    /* Gemma 3: q/k norms, norms after attention and FFN too, GELU gate,
     * embeddings scaled by sqrt(n_embd), sliding-window layers. */
    {.name = "gemma3", .rope = ROPE_NEOX, .act = ACT_GELU, .norm = NORM_PRE_POST, .attn = ATTN_SWA,
     .layer = {LLAMA_LAYER, [LT_Q_NORM] = R, [LT_K_NORM] = R, [LT_ATTN_POST_NORM] = R, [LT_FFN_POST_NORM] = R},
     .embd_scale = 1},
    /* LFM2: short-convolution layers (head_count_kv[l] = 0) among
     * attention layers with q/k norms, all windowed when the file has a
     * sliding_window (LFM2.5); the final norm is token_embd_norm */
    {.name = "lfm2", .rope = ROPE_NEOX, .act = ACT_SILU, .norm = NORM_PRE, .attn = ATTN_SWA_ALL,
     .layer = {LLAMA_LAYER, [LT_Q_NORM] = R, [LT_K_NORM] = R, [LT_CONV] = R, [LT_CONV_IN] = R, [LT_CONV_OUT] = R},
     .shortconv = 1, .output_norm = "token_embd_norm.weight"},
    /* Qwen3.5: the attention layers (A) have qwen3's q/k norms, q and its
     * output gate in one "attn_q", k, v, output; the DeltaNet layers (D)
     * their own (deltanet.h); all have the norm before the FFN named
     * post_attention_norm. Partial NeoX RoPE (64 of 256). */
    {.name = "qwen35", .rope = ROPE_NEOX, .act = ACT_SILU, .norm = NORM_PRE, .attn = ATTN_FULL,
     .layer = {[LT_ATTN_NORM] = R, [LT_FFN_NORM_PA] = R, [LT_Q_GATE] = A, [LT_Q_NORM] = A, [LT_K_NORM] = A,
               [LT_K] = A, [LT_V] = A, [LT_OUT] = A, [LT_GATE] = R, [LT_UP] = R, [LT_DOWN] = R,
               [LT_SSM_QKV] = D, [LT_SSM_Z] = D, [LT_SSM_BETA] = D, [LT_SSM_ALPHA] = D, [LT_SSM_OUT] = D,
               [LT_SSM_CONV] = D, [LT_SSM_DT] = D, [LT_SSM_A] = D, [LT_SSM_NORM] = D},
     .partial_rope = 1, .mtp_layers = 1},
    /* Qwen3-MoE (30B-A3B): qwen3's attention; every FFN a mixture of
     * experts, softmax over the router's logits, the chosen weights
     * normalised (llama.cpp fixes both for this architecture) */
    {.name = "qwen3moe", .rope = ROPE_NEOX, .act = ACT_SILU, .norm = NORM_PRE, .attn = ATTN_FULL,
     .layer = {LLAMA_LAYER, [LT_Q_NORM] = R, [LT_K_NORM] = R, MOE_LAYER},
     .moe_gating = MOE_SOFTMAX, .moe_norm_w = 1},
    /* Qwen3.5-MoE (35B-A3B): qwen35's layers; every FFN experts as
     * qwen3moe's plus a shared expert gated by a sigmoid */
    {.name = "qwen35moe", .rope = ROPE_NEOX, .act = ACT_SILU, .norm = NORM_PRE, .attn = ATTN_FULL,
     .layer = {[LT_ATTN_NORM] = R, [LT_FFN_NORM_PA] = R, [LT_Q_GATE] = A, [LT_Q_NORM] = A, [LT_K_NORM] = A,
               [LT_K] = A, [LT_V] = A, [LT_OUT] = A,
               [LT_SSM_QKV] = D, [LT_SSM_Z] = D, [LT_SSM_BETA] = D, [LT_SSM_ALPHA] = D, [LT_SSM_OUT] = D,
               [LT_SSM_CONV] = D, [LT_SSM_DT] = D, [LT_SSM_A] = D, [LT_SSM_NORM] = D, MOE_LAYER,
               [LT_GATE_INP_SHEXP] = R, [LT_GATE_SHEXP] = R, [LT_UP_SHEXP] = R, [LT_DOWN_SHEXP] = R},
     .partial_rope = 1, .moe_gating = MOE_SOFTMAX, .moe_norm_w = 1, .mtp_layers = 1},
    /* LFM2-MoE (8B-A1B): lfm2's layers, the first leading_dense_block_count
     * with lfm2's FFN, the others experts chosen by expert_gating_func
     * (sigmoid in the 8B) plus a selection bias, weights normalised */
    {.name = "lfm2moe", .rope = ROPE_NEOX, .act = ACT_SILU, .norm = NORM_PRE, .attn = ATTN_FULL,
     .layer = {LLAMA_LAYER, [LT_Q_NORM] = R, [LT_K_NORM] = R, [LT_CONV] = R, [LT_CONV_IN] = R, [LT_CONV_OUT] = R,
               MOE_LAYER, [LT_EXP_PROBS_B] = R},
     .shortconv = 1, .output_norm = "token_embd_norm.weight", .moe_gating = MOE_GATING_KEY, .moe_norm_w = 1,
     .moe_dense_lead = 1},
    /* Gemma 4 (E2B, E4B): Gemma 3's layers with windowed layers named one
     * by one and heads of their own size, per-layer embeddings (when
     * embedding_length_per_layer_input > 0), an output scale, the last
     * layers reading earlier layers' KV; rope_freqs on the global layers */
    {.name = "gemma4", .rope = ROPE_NEOX, .act = ACT_GELU, .norm = NORM_PRE_POST, .attn = ATTN_SWA_LAYERS,
     .layer = {LLAMA_LAYER, [LT_Q_NORM] = R, [LT_K_NORM] = R, [LT_ATTN_POST_NORM] = R, [LT_FFN_POST_NORM] = R,
               [LT_PE_GATE] = O, [LT_PE_PROJ] = O, [LT_PE_POST_NORM] = O, [LT_OUT_SCALE] = O},
     .rope_freqs = O, .embd_scale = 1, .gemma4 = 1},
};
#undef MOE_LAYER
#undef LLAMA_LAYER
#undef R
#undef O
#undef A
#undef D

#define LW(field) offsetof(LayerWeights, field)
const LayerTensor layer_tensors[LT_COUNT] = {
    [LT_ATTN_NORM] = {"attn_norm", "weight", 0, DIM_EMBD, DIM_ONE, LW(attn_norm)},
    [LT_FFN_NORM] = {"ffn_norm", "weight", 0, DIM_EMBD, DIM_ONE, LW(ffn_norm)},
    [LT_Q_NORM] = {"attn_q_norm", "weight", 0, DIM_HEAD, DIM_ONE, LW(q_norm), PART_ATTN},
    [LT_K_NORM] = {"attn_k_norm", "weight", 0, DIM_HEAD, DIM_ONE, LW(k_norm), PART_ATTN, FFN_ANY, 0, 1},
    [LT_Q_BIAS] = {"attn_q", "bias", 0, DIM_Q, DIM_ONE, LW(bq), PART_ATTN},
    [LT_K_BIAS] = {"attn_k", "bias", 0, DIM_KV, DIM_ONE, LW(bk), PART_ATTN, FFN_ANY, 0, 1},
    [LT_V_BIAS] = {"attn_v", "bias", 0, DIM_V, DIM_ONE, LW(bv), PART_ATTN, FFN_ANY, 0, 1},
    [LT_Q] = {"attn_q", "weight", 1, DIM_EMBD, DIM_Q, LW(wq), PART_ATTN},
    [LT_K] = {"attn_k", "weight", 1, DIM_EMBD, DIM_KV, LW(wk), PART_ATTN, FFN_ANY, 0, 1},
    [LT_V] = {"attn_v", "weight", 1, DIM_EMBD, DIM_V, LW(wv), PART_ATTN, FFN_ANY, 0, 1},
    [LT_OUT] = {"attn_output", "weight", 1, DIM_ATT, DIM_EMBD, LW(wo), PART_ATTN},
    [LT_GATE] = {"ffn_gate", "weight", 1, DIM_EMBD, DIM_FF, LW(w_gate), PART_ANY, FFN_DENSE},
    [LT_UP] = {"ffn_up", "weight", 1, DIM_EMBD, DIM_FF, LW(w_up), PART_ANY, FFN_DENSE},
    [LT_DOWN] = {"ffn_down", "weight", 1, DIM_FF, DIM_EMBD, LW(w_down), PART_ANY, FFN_DENSE},
    [LT_QKV] = {"attn_qkv", "weight", 1, DIM_EMBD, DIM_QKV, LW(wqkv), PART_ATTN},
    [LT_GATE_UP] = {"ffn_up", "weight", 1, DIM_EMBD, DIM_FF2, LW(w_gate_up), PART_ANY, FFN_DENSE},
    [LT_ATTN_POST_NORM] = {"post_attention_norm", "weight", 0, DIM_EMBD, DIM_ONE, LW(attn_post_norm)},
    [LT_FFN_POST_NORM] = {"post_ffw_norm", "weight", 0, DIM_EMBD, DIM_ONE, LW(ffn_post_norm)},
    [LT_CONV] = {"shortconv.conv", "weight", 0, DIM_CONV, DIM_EMBD, LW(conv), PART_RECUR},
    [LT_CONV_IN] = {"shortconv.in_proj", "weight", 1, DIM_EMBD, DIM_EMBD3, LW(conv_in), PART_RECUR},
    [LT_CONV_OUT] = {"shortconv.out_proj", "weight", 1, DIM_EMBD, DIM_EMBD, LW(conv_out), PART_RECUR},
    [LT_Q_GATE] = {"attn_q", "weight", 1, DIM_EMBD, DIM_Q2, LW(wq)},
    [LT_FFN_NORM_PA] = {"post_attention_norm", "weight", 0, DIM_EMBD, DIM_ONE, LW(ffn_norm)},
    [LT_SSM_QKV] = {"attn_qkv", "weight", 1, DIM_EMBD, DIM_SSM_CONV, LW(ssm_qkv)},
    [LT_SSM_Z] = {"attn_gate", "weight", 1, DIM_EMBD, DIM_SSM_V, LW(ssm_z)},
    [LT_SSM_BETA] = {"ssm_beta", "weight", 1, DIM_EMBD, DIM_SSM_H, LW(ssm_beta)},
    [LT_SSM_ALPHA] = {"ssm_alpha", "weight", 1, DIM_EMBD, DIM_SSM_H, LW(ssm_alpha)},
    [LT_SSM_OUT] = {"ssm_out", "weight", 1, DIM_SSM_V, DIM_EMBD, LW(ssm_out)},
    [LT_SSM_CONV] = {"ssm_conv1d", "weight", 0, DIM_SSM_K, DIM_SSM_CONV, LW(ssm_conv)},
    [LT_SSM_DT] = {"ssm_dt", "bias", 0, DIM_SSM_H, DIM_ONE, LW(ssm_dt)},
    [LT_SSM_A] = {"ssm_a", "", 0, DIM_SSM_H, DIM_ONE, LW(ssm_a)},
    [LT_SSM_NORM] = {"ssm_norm", "weight", 0, DIM_SSM_HEAD, DIM_ONE, LW(ssm_norm)},
    [LT_GATE_INP] = {"ffn_gate_inp", "weight", 1, DIM_EMBD, DIM_EXPERTS, LW(gate_inp), PART_ANY, FFN_MOE},
    [LT_GATE_EXPS] = {"ffn_gate_exps", "weight", 1, DIM_EMBD, DIM_FF_EXP, LW(gate_exps), PART_ANY, FFN_MOE, 1},
    [LT_UP_EXPS] = {"ffn_up_exps", "weight", 1, DIM_EMBD, DIM_FF_EXP, LW(up_exps), PART_ANY, FFN_MOE, 1},
    [LT_DOWN_EXPS] = {"ffn_down_exps", "weight", 1, DIM_FF_EXP, DIM_EMBD, LW(down_exps), PART_ANY, FFN_MOE, 1},
    [LT_EXP_PROBS_B] = {"exp_probs_b", "bias", 0, DIM_EXPERTS, DIM_ONE, LW(exp_probs_b), PART_ANY, FFN_MOE},
    [LT_GATE_INP_SHEXP] = {"ffn_gate_inp_shexp", "weight", 1, DIM_EMBD, DIM_ONE, LW(gate_inp_shexp), PART_ANY, FFN_MOE},
    [LT_GATE_SHEXP] = {"ffn_gate_shexp", "weight", 1, DIM_EMBD, DIM_FF_SHEXP, LW(gate_shexp), PART_ANY, FFN_MOE},
    [LT_UP_SHEXP] = {"ffn_up_shexp", "weight", 1, DIM_EMBD, DIM_FF_SHEXP, LW(up_shexp), PART_ANY, FFN_MOE},
    [LT_DOWN_SHEXP] = {"ffn_down_shexp", "weight", 1, DIM_FF_SHEXP, DIM_EMBD, LW(down_shexp), PART_ANY, FFN_MOE},
    [LT_PE_GATE] = {"inp_gate", "weight", 1, DIM_EMBD, DIM_PE, LW(pe_gate)},
    [LT_PE_PROJ] = {"proj", "weight", 1, DIM_PE, DIM_EMBD, LW(pe_proj)},
    [LT_PE_POST_NORM] = {"post_norm", "weight", 0, DIM_EMBD, DIM_ONE, LW(pe_post_norm)},
    [LT_OUT_SCALE] = {"layer_output_scale", "weight", 0, DIM_ONE, DIM_ONE, LW(out_scale)},
};
#undef LW

const ArchInfo *model_arch(const char *name)
{
    for (size_t i = 0; i < sizeof arch_table / sizeof arch_table[0]; i++)
        if (strcmp(arch_table[i].name, name) == 0) return &arch_table[i];
    return NULL;
}

uint64_t model_dim(const ModelConfig *c, ModelDim d)
{
    switch (d) {
    case DIM_EMBD: return c->n_embd;
    case DIM_FF: return c->n_ff;
    case DIM_Q: return (uint64_t)c->n_head * c->head_dim;
    case DIM_KV: return (uint64_t)c->n_head_kv * c->head_dim;
    case DIM_V: return (uint64_t)c->n_head_kv * c->head_dim_v;
    case DIM_ATT: return (uint64_t)c->n_head * c->head_dim_v;
    case DIM_HEAD: return c->head_dim;
    case DIM_ONE: return 1;
    case DIM_QKV: return (uint64_t)c->n_head * c->head_dim + (uint64_t)c->n_head_kv * (c->head_dim + c->head_dim_v);
    case DIM_FF2: return 2 * (uint64_t)c->n_ff;
    case DIM_CONV: return c->conv_l;
    case DIM_EMBD3: return 3 * (uint64_t)c->n_embd;
    case DIM_Q2: return 2 * (uint64_t)c->n_head * c->head_dim;
    case DIM_SSM_CONV: return (2 * (uint64_t)c->ssm_n_k + c->ssm_n_v) * c->ssm_d_state;
    case DIM_SSM_V: return (uint64_t)c->ssm_n_v * c->ssm_d_state;
    case DIM_SSM_H: return c->ssm_n_v;
    case DIM_SSM_HEAD: return c->ssm_d_state;
    case DIM_SSM_K: return c->ssm_d_conv;
    case DIM_EXPERTS: return c->n_expert;
    case DIM_FF_EXP: return c->n_ff_exp;
    case DIM_FF_SHEXP: return c->n_ff_shexp;
    case DIM_PE: return c->n_embd_pe;
    }
    return 0;
}

int model_layer_swa(const ModelConfig *c, uint32_t l)
{
    if (c->n_swa == 0) return 0;
    if (c->arch->attn == ATTN_SWA_LAYERS) return l < MODEL_MAX_LAYERS_MIXED && (c->swa_layers[l / 64] >> (l % 64) & 1);
    if (c->swa_pattern == 0) return !model_layer_recurrent(c, l);
    return l % c->swa_pattern < c->swa_pattern - 1;
}

uint32_t model_swa_before(const ModelConfig *c, uint32_t l)
{
    if (c->n_swa == 0) return 0;
    if (c->arch->attn == ATTN_SWA_LAYERS) return model_bits_before(c->swa_layers, l);
    if (c->swa_pattern == 0) return l - model_recurrent_before(c, l);
    uint32_t p = c->swa_pattern, r = l % p;
    return l / p * (p - 1) + (r < p - 1 ? r : p - 1);
}

uint32_t model_kv_layer(const ModelConfig *c, uint32_t l)
{
    return l < c->n_layer_kv ? l : c->n_layer_kv - (model_layer_swa(c, l) ? 2 : 1);
}

void model_layer_cfg(const ModelConfig *c, uint32_t l, ModelConfig *out)
{
    *out = *c;
    if (model_layer_swa(c, l)) {
        out->head_dim = c->head_dim_swa;
        out->head_dim_v = c->head_dim_v_swa;
        out->n_head_kv = c->n_head_kv_swa;
        out->n_rot = c->n_rot_swa;
    }
    if (l >= c->n_layer_kv) out->n_ff = c->n_ff_shared;
}

#define MAX_OF(a, b) ((a) > (b) ? (a) : (b))
void model_widest_cfg(const ModelConfig *c, ModelConfig *out)
{
    *out = *c;
    out->head_dim = MAX_OF(c->head_dim, c->head_dim_swa);
    out->head_dim_v = MAX_OF(c->head_dim_v, c->head_dim_v_swa);
    out->n_head_kv = MAX_OF(c->n_head_kv, c->n_head_kv_swa);
    out->n_rot = MAX_OF(c->n_rot, c->n_rot_swa);
    out->n_ff = MAX_OF(MAX_OF(c->n_ff, c->n_ff_shared), c->n_embd_pe);
}
#undef MAX_OF

/* rows [r0, r0 + n) of a matrix, as a matrix of its own */
static Weight row_view(const Weight *w, uint64_t r0, uint64_t n)
{
    Weight v = *w;
    v.rows = n;
    v.file_offset += r0 * w->row_bytes;
    if (w->data) v.data = w->data + r0 * w->row_bytes;
    if (w->side) v.side = w->side + r0 * (w->cols / 32); /* r0 on a group of rows (views_on_groups) */
    return v;
}

Weight model_expert(const Weight *w, uint32_t e, uint32_t n_expert)
{
    uint64_t rows = w->rows / n_expert;
    return row_view(w, (uint64_t)e * rows, rows);
}

void model_layer_views(const ModelConfig *c, LayerWeights *lw)
{
    if (c->has[LT_QKV]) {
        uint64_t q = model_dim(c, DIM_Q), k = model_dim(c, DIM_KV);
        lw->wq = row_view(&lw->wqkv, 0, q);
        lw->wk = row_view(&lw->wqkv, q, k);
        lw->wv = row_view(&lw->wqkv, q + k, model_dim(c, DIM_V));
    }
    if (c->has[LT_GATE_UP]) { /* silu of the first half times the second, as ggml_swiglu */
        lw->w_gate = row_view(&lw->w_gate_up, 0, c->n_ff);
        lw->w_up = row_view(&lw->w_gate_up, c->n_ff, c->n_ff);
    }
}

/* ---- configuration ------------------------------------------------------ */

enum {
    K_BLOCKS, K_EMBD, K_FF, K_HEADS, K_HEADS_KV, K_KEY_LEN, K_VAL_LEN, K_CTX, K_ROPE_BASE, K_EPS, K_ROPE_DIM,
    K_ROPE_ATTN_FACTOR, K_ROPE_ORIG_CTX, K_ROPE_SCALE, K_SWA, K_SWA_PATTERN, K_ROPE_BASE_SWA, K_SOFTCAP,
    K_CONV_L, K_SSM_CONV, K_SSM_INNER, K_SSM_STATE, K_SSM_RANK, K_SSM_GROUPS, K_FULL_ATTN, K_NEXTN,
    K_YARN_BETA_FAST, K_YARN_BETA_SLOW, K_YARN_LOG_MUL, K_ATTN_TEMP,
    K_EXPERTS, K_EXPERTS_USED, K_FF_EXP, K_DENSE_LEAD, K_GATING, K_FF_SHEXP,
    K_KEY_LEN_SWA, K_VAL_LEN_SWA, K_ROPE_DIM_SWA, K_SHARED_KV, K_EMBD_PE,
    K_COUNT
};

static const struct {
    const char *suffix;   /* after "<arch>." */
    int is_float;
    int required;
    double min, max;      /* sanity bounds */
} config_keys[K_COUNT] = {
    [K_BLOCKS] = {"block_count", 0, 1, 1, 4096},
    [K_EMBD] = {"embedding_length", 0, 1, 1, 1 << 17},
    [K_FF] = {"feed_forward_length", 0, 1, 1, 1 << 20},
    [K_HEADS] = {"attention.head_count", 0, 1, 1, 4096},
    [K_HEADS_KV] = {"attention.head_count_kv", 0, 0, 1, 4096},
    [K_KEY_LEN] = {"attention.key_length", 0, 0, 2, MODEL_MAX_HEAD_DIM},
    [K_VAL_LEN] = {"attention.value_length", 0, 0, 1, MODEL_MAX_HEAD_DIM},
    [K_CTX] = {"context_length", 0, 1, 1, 1 << 24},
    [K_ROPE_BASE] = {"rope.freq_base", 1, 0, 1e-3, 1e12},
    [K_EPS] = {"attention.layer_norm_rms_epsilon", 1, 1, 1e-12, 0.1},
    [K_ROPE_DIM] = {"rope.dimension_count", 0, 0, 2, MODEL_MAX_HEAD_DIM},
    [K_ROPE_ATTN_FACTOR] = {"rope.scaling.attn_factor", 1, 0, 1e-3, 1e3},
    [K_ROPE_ORIG_CTX] = {"rope.scaling.original_context_length", 0, 0, 1, 1 << 24},
    [K_ROPE_SCALE] = {"rope.scaling.factor", 1, 0, 0, 1e6},
    [K_SWA] = {"attention.sliding_window", 0, 0, 0, 1 << 24},
    [K_SWA_PATTERN] = {"attention.sliding_window_pattern", 0, 0, 0, 4096},
    [K_ROPE_BASE_SWA] = {"rope.freq_base_swa", 1, 0, 1e-3, 1e12},
    [K_SOFTCAP] = {"final_logit_softcapping", 1, 0, 0, 1e6},
    [K_CONV_L] = {"shortconv.l_cache", 0, 0, 2, 64},
    [K_SSM_CONV] = {"ssm.conv_kernel", 0, 0, 2, 16},
    [K_SSM_INNER] = {"ssm.inner_size", 0, 0, 1, 1 << 20},
    [K_SSM_STATE] = {"ssm.state_size", 0, 0, 1, MODEL_MAX_HEAD_DIM},
    [K_SSM_RANK] = {"ssm.time_step_rank", 0, 0, 1, 4096},
    [K_SSM_GROUPS] = {"ssm.group_count", 0, 0, 1, 4096},
    [K_FULL_ATTN] = {"full_attention_interval", 0, 0, 1, 4096},
    [K_NEXTN] = {"nextn_predict_layers", 0, 0, 0, 4096},
    [K_YARN_BETA_FAST] = {"rope.scaling.yarn_beta_fast", 1, 0, 1e-3, 1e4},
    [K_YARN_BETA_SLOW] = {"rope.scaling.yarn_beta_slow", 1, 0, 1e-3, 1e4},
    [K_YARN_LOG_MUL] = {"rope.scaling.yarn_log_multiplier", 1, 0, 0, 1e3},
    [K_ATTN_TEMP] = {"attention.temperature_scale", 1, 0, 0, 1e3},
    [K_EXPERTS] = {"expert_count", 0, 0, 0, MOE_MAX_EXPERTS},
    [K_EXPERTS_USED] = {"expert_used_count", 0, 0, 0, MOE_MAX_USED},
    [K_FF_EXP] = {"expert_feed_forward_length", 0, 0, 1, 1 << 20},
    [K_DENSE_LEAD] = {"leading_dense_block_count", 0, 0, 0, 4096},
    [K_GATING] = {"expert_gating_func", 0, 0, 0, 16},
    [K_FF_SHEXP] = {"expert_shared_feed_forward_length", 0, 0, 1, 1 << 20},
    [K_KEY_LEN_SWA] = {"attention.key_length_swa", 0, 0, 2, MODEL_MAX_HEAD_DIM},
    [K_VAL_LEN_SWA] = {"attention.value_length_swa", 0, 0, 1, MODEL_MAX_HEAD_DIM},
    [K_ROPE_DIM_SWA] = {"rope.dimension_count_swa", 0, 0, 2, MODEL_MAX_HEAD_DIM},
    [K_SHARED_KV] = {"attention.shared_kv_layers", 0, 0, 0, 4096},
    [K_EMBD_PE] = {"embedding_length_per_layer_input", 0, 0, 0, 1 << 16},
};

/* Gemma 4's per-layer arrays (arch->gemma4), read whole and resolved by
 * finish_gemma4: which layers are windowed, feed_forward_length and
 * head_count_kv when they vary. */
enum { ARR_SWA, ARR_FF, ARR_KV, ARR_COUNT };
static const char *const layer_array_keys[ARR_COUNT] = {"attention.sliding_window_pattern", "feed_forward_length",
                                                        "attention.head_count_kv"};

typedef struct {
    ModelConfig *cfg;
    const char *path;
    char arch[64];
    int have_arch;
    int keys_before_arch;   /* "<x>.*" keys came before general.architecture: walk again */
    int rope_scaling_none;  /* rope.scaling.type is "none": a factor does not apply */
    int rope_scaling_yarn;  /* rope.scaling.type is "yarn" */
    int rescan;             /* this is that second walk */
    int keys_done;          /* the configuration is complete (at the first tensor) */
    int have[K_COUNT];
    double val[K_COUNT];
    int have_embd_tensor;
    uint64_t n_present[LT_COUNT]; /* layers that have each tensor */
    uint64_t output_row_bytes;
    int n_rope_factors;     /* rope_factors_short and _long seen */
    uint64_t n_kv_per_layer;/* length of a per-layer head_count_kv array (LFM2), or 0 */
    uint64_t kind_max[2][LT_COUNT]; /* largest of each matrix, arena-rounded, over the attention (0) and the recurrent (1) layers */
    int32_t sections[4];    /* rope.dimension_sections (arch->deltanet) */
    int have_sections;
    int recur_layers_bad;   /* attention.recurrent_layers differs from the interval's pattern */
    uint64_t recur_layers_offset;
    int have_recur_layers;
    uint8_t recur_layers[4096];
    uint32_t arr_len[ARR_COUNT];   /* arch->gemma4's arrays (0: not given as an array) */
    uint64_t arr_offset[ARR_COUNT];
    uint32_t arr[ARR_COUNT][MODEL_MAX_LAYERS_MIXED];
} ConfigWalk;

/* One of Gemma 4's per-layer arrays (bools or integers, at most 256). */
static int layer_array(ConfigWalk *w, Gguf *g, const GgufKV *kv, int which, GgufError *err)
{
    static const uint8_t size[GGUF_TYPE_COUNT] = {1, 1, 2, 2, 4, 4, 0, 1, 0, 0, 8, 8, 0};
    uint8_t buf[MODEL_MAX_LAYERS_MIXED * 8];
    uint32_t es = kv->arr_type < GGUF_TYPE_COUNT ? size[kv->arr_type] : 0;
    const uint8_t *p = NULL;
    if (es == 0 || kv->arr_len < 1 || kv->arr_len > MODEL_MAX_LAYERS_MIXED || !(p = gguf_value_bytes(g, kv, buf))) {
        snprintf(err->msg, sizeof err->msg, "%s: byte %llu: %s: a per-layer array of %s is not supported (integers or bools, "
                 "at most %d layers)", w->path, (unsigned long long)kv->value_offset, kv->key,
                 gguf_value_type_name(kv->arr_type), MODEL_MAX_LAYERS_MIXED);
        err->status = PITH_UNSUPPORTED;
        return -1;
    }
    for (uint64_t l = 0; l < kv->arr_len; l++) {
        uint64_t v = 0;
        for (uint32_t b = 0; b < es; b++) v |= (uint64_t)p[l * es + b] << (8 * b);
        w->arr[which][l] = v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
    }
    w->arr_len[which] = (uint32_t)kv->arr_len;
    w->arr_offset[which] = kv->value_offset;
    /* the scalar's place, for the checks every architecture has (finish_gemma4 refines them) */
    int k = which == ARR_FF ? K_FF : which == ARR_KV ? K_HEADS_KV : -1;
    if (k >= 0 && w->arr[which][0] >= 1 && w->arr[which][0] <= config_keys[k].max) {
        w->have[k] = 1;
        w->val[k] = w->arr[which][0];
    }
    return 0;
}

/* attention.head_count_kv as an array, one count per layer (LFM2): 0 marks
 * a short-convolution layer, the others must agree. */
static int kv_heads_per_layer(ConfigWalk *w, Gguf *g, const GgufKV *kv, GgufError *err)
{
    if (layer_array(w, g, kv, ARR_KV, err) != 0) return -1;
    if (!w->cfg->arch->shortconv) {
        snprintf(err->msg, sizeof err->msg, "%s: byte %llu: %s: a per-layer array is not supported for %s", w->path,
                 (unsigned long long)kv->value_offset, kv->key, w->arch);
        err->status = PITH_UNSUPPORTED;
        return -1;
    }
    uint32_t heads = 0;
    memset(w->cfg->conv_layers, 0, sizeof w->cfg->conv_layers);
    for (uint32_t l = 0; l < w->arr_len[ARR_KV]; l++) {
        uint32_t v = w->arr[ARR_KV][l];
        if (v == 0) {
            w->cfg->conv_layers[l / 64] |= (uint64_t)1 << (l % 64);
        } else if ((heads && v != heads) || v > 4096) {
            snprintf(err->msg, sizeof err->msg, "%s: byte %llu: %s[%u] = %u: the attention layers must agree (%u)", w->path,
                     (unsigned long long)kv->value_offset, kv->key, l, v, heads ? heads : v);
            return -1;
        } else {
            heads = v;
        }
    }
    w->n_kv_per_layer = w->arr_len[ARR_KV];
    if (heads) {
        w->have[K_HEADS_KV] = 1;
        w->val[K_HEADS_KV] = (double)heads;
    }
    return 0;
}

static int kv_number(const GgufKV *kv, int want_float, double *out)
{
    switch (kv->type) {
    case GGUF_TYPE_UINT8:
    case GGUF_TYPE_UINT16:
    case GGUF_TYPE_UINT32:
    case GGUF_TYPE_UINT64:
        *out = (double)kv->v.u;
        return 0;
    case GGUF_TYPE_INT8:
    case GGUF_TYPE_INT16:
    case GGUF_TYPE_INT32:
    case GGUF_TYPE_INT64:
        *out = (double)kv->v.i;
        return 0;
    case GGUF_TYPE_FLOAT32:
    case GGUF_TYPE_FLOAT64:
        if (!want_float) return -1;
        *out = kv->v.f;
        return 0;
    default:
        return -1;
    }
}

/* Qwen3.5's two array keys: the RoPE sections (4 int32) and which layers
 * are recurrent (bools, one per layer), read whole. */
static int walk_array(ConfigWalk *w, Gguf *g, const GgufKV *kv, const char *suffix, GgufError *err)
{
    int sections = suffix[0] == 'r';
    uint32_t want_type = sections ? GGUF_TYPE_INT32 : GGUF_TYPE_BOOL;
    uint64_t max = sections ? 4 : sizeof w->recur_layers;
    uint8_t buf[4096];
    if (kv->type != GGUF_TYPE_ARRAY || kv->arr_type != want_type || kv->arr_len < 1 || kv->arr_len > max ||
        kv->value_end - kv->value_offset != (sections ? 4 : 1) * kv->arr_len) {
        snprintf(err->msg, sizeof err->msg, "%s: byte %llu: %s is not an array of at most %llu %s", w->path,
                 (unsigned long long)kv->value_offset, kv->key, (unsigned long long)max, sections ? "int32" : "bools");
        return -1;
    }
    const uint8_t *b = gguf_value_bytes(g, kv, buf);
    if (!b) {
        snprintf(err->msg, sizeof err->msg, "%s: byte %llu: cannot read %s", w->path,
                 (unsigned long long)kv->value_offset, kv->key);
        return -1;
    }
    if (sections) {
        memset(w->sections, 0, sizeof w->sections);
        memcpy(w->sections, b, 4 * kv->arr_len);
        w->have_sections = 1;
    } else {
        memcpy(w->recur_layers, b, kv->arr_len);
        w->have_recur_layers = (int)kv->arr_len;
        w->recur_layers_offset = kv->value_offset;
    }
    return 0;
}

static int walk_kv(void *ctx, Gguf *g, const GgufKV *kv, GgufError *err)
{
    ConfigWalk *w = ctx;
    if (strcmp(kv->key, "tokenizer.chat_template") == 0) {
        /* its length plans the template's memory (engine.c) */
        w->cfg->chat_template_bytes = kv->type == GGUF_TYPE_STRING ? kv->arr_len : 0;
        return 0;
    }
    if (strcmp(kv->key, "general.architecture") == 0) {
        if (w->rescan) return 0;
        int64_t len = gguf_kv_string(g, kv, w->arch, sizeof w->arch);
        if (len < 0 || (uint64_t)len >= sizeof w->arch) {
            snprintf(err->msg, sizeof err->msg, "%s: byte %llu: general.architecture is not a short string",
                     w->path, (unsigned long long)kv->value_offset);
            return -1;
        }
        w->cfg->arch = model_arch(w->arch);
        if (!w->cfg->arch) {
            snprintf(err->msg, sizeof err->msg, "%s: architecture '%s' is not supported (pith runs: qwen3, qwen2, llama, mistral3, smollm3, phi3, gemma3, lfm2, qwen35, qwen3moe, lfm2moe, qwen35moe, gemma4)",
                     w->path, w->arch);
            err->status = PITH_UNSUPPORTED;
            return -1;
        }
        w->have_arch = 1;
        return 0;
    }
    if (!w->have_arch) {
        if (strncmp(kv->key, "general.", 8) != 0) w->keys_before_arch = 1;
        return 0;
    }
    size_t alen = strlen(w->arch);
    if (strncmp(kv->key, w->arch, alen) != 0 || kv->key[alen] != '.') return 0;
    const char *suffix = kv->key + alen + 1;
    if (strcmp(suffix, "rope.scaling.type") == 0) {
        /* linear and yarn scaling are done; others (longrope by name, ...)
         * would silently change every position */
        char type[32];
        int64_t len = gguf_kv_string(g, kv, type, sizeof type);
        w->rope_scaling_none = len >= 0 && strcmp(type, "none") == 0;
        w->rope_scaling_yarn = len >= 0 && strcmp(type, "yarn") == 0;
        if (len < 0 || (strcmp(type, "none") != 0 && strcmp(type, "linear") != 0 && strcmp(type, "yarn") != 0)) {
            snprintf(err->msg, sizeof err->msg, "%s: byte %llu: %s '%s' is not supported yet", w->path,
                     (unsigned long long)kv->value_offset, kv->key, len < 0 ? "?" : type);
            err->status = PITH_UNSUPPORTED;
            return -1;
        }
        return 0;
    }
    for (int a = 0; w->cfg->arch->gemma4 && kv->type == GGUF_TYPE_ARRAY && a < ARR_COUNT; a++)
        if (strcmp(suffix, layer_array_keys[a]) == 0) return layer_array(w, g, kv, a, err);
    if (strcmp(suffix, "attention.head_count_kv") == 0 && kv->type == GGUF_TYPE_ARRAY)
        return kv_heads_per_layer(w, g, kv, err);
    if (model_arch_deltanet(w->cfg->arch) && (strcmp(suffix, "rope.dimension_sections") == 0 ||
                                   strcmp(suffix, "attention.recurrent_layers") == 0))
        return walk_array(w, g, kv, suffix, err);
    for (int k = 0; k < K_COUNT; k++) {
        if (strcmp(suffix, config_keys[k].suffix) != 0) continue;
        double v;
        if (kv_number(kv, config_keys[k].is_float, &v) != 0) {
            snprintf(err->msg, sizeof err->msg, "%s: byte %llu: %s has type %s, expected %s", w->path,
                     (unsigned long long)kv->value_offset, kv->key, gguf_value_type_name(kv->type),
                     config_keys[k].is_float ? "a number" : "an integer");
            return -1;
        }
        if (!(v >= config_keys[k].min && v <= config_keys[k].max)) { /* also catches NaN */
            snprintf(err->msg, sizeof err->msg, "%s: byte %llu: %s = %g is out of range [%g, %g]", w->path,
                     (unsigned long long)kv->value_offset, kv->key, v, config_keys[k].min,
                     config_keys[k].max);
            return -1;
        }
        w->have[k] = 1;
        w->val[k] = v;
    }
    return 0;
}

/* Qwen3.5's keys: the DeltaNet layers' widths, the layer pattern, the
 * RoPE sections (text has one position for all of them: pith requires
 * every rotated pair to fall in the first three, which makes it NeoX RoPE). */
static int finish_deltanet(ConfigWalk *w, GgufError *err)
{
    ModelConfig *cfg = w->cfg;
    static const int need[] = {K_SSM_CONV, K_SSM_INNER, K_SSM_STATE, K_SSM_RANK, K_SSM_GROUPS};
    for (size_t i = 0; i < sizeof need / sizeof need[0]; i++)
        if (!w->have[need[i]]) {
            snprintf(err->msg, sizeof err->msg, "%s: missing key %s.%s", w->path, w->arch, config_keys[need[i]].suffix);
            return -1;
        }
    cfg->ssm_d_conv = (uint32_t)w->val[K_SSM_CONV];
    cfg->ssm_d_state = (uint32_t)w->val[K_SSM_STATE];
    cfg->ssm_n_k = (uint32_t)w->val[K_SSM_GROUPS];
    cfg->ssm_n_v = (uint32_t)w->val[K_SSM_RANK];
    cfg->full_attn_interval = w->have[K_FULL_ATTN] ? (uint32_t)w->val[K_FULL_ATTN] : 4;
    if ((uint64_t)w->val[K_SSM_INNER] != (uint64_t)cfg->ssm_n_v * cfg->ssm_d_state || cfg->ssm_n_v % cfg->ssm_n_k != 0) {
        snprintf(err->msg, sizeof err->msg,
                 "%s: %s.ssm.inner_size = %g with %u value heads, %u key heads of %u: value heads must be as wide as "
                 "key heads, and a multiple of them",
                 w->path, w->arch, w->val[K_SSM_INNER], cfg->ssm_n_v, cfg->ssm_n_k, cfg->ssm_d_state);
        return -1;
    }
    if (cfg->head_dim_v != cfg->head_dim) {
        snprintf(err->msg, sizeof err->msg, "%s: %s.attention.value_length = %u differs from key_length = %u", w->path,
                 w->arch, cfg->head_dim_v, cfg->head_dim);
        return -1;
    }
    if (w->have_recur_layers) {
        /* an entry per block, the multi-token prediction layers' 0 */
        int bad = (uint32_t)w->have_recur_layers != cfg->n_layer + cfg->n_layer_mtp;
        for (uint32_t l = 0; !bad && l < (uint32_t)w->have_recur_layers; l++)
            bad = !w->recur_layers[l] != !(l < cfg->n_layer && model_layer_recurrent(cfg, l));
        if (bad) {
            snprintf(err->msg, sizeof err->msg,
                     "%s: byte %llu: %s.attention.recurrent_layers: a pattern other than attention every %u layers is not "
                     "supported yet", w->path, (unsigned long long)w->recur_layers_offset, w->arch, cfg->full_attn_interval);
            err->status = PITH_UNSUPPORTED;
            return -1;
        }
    }
    if (!w->have_sections) {
        snprintf(err->msg, sizeof err->msg, "%s: missing key %s.rope.dimension_sections", w->path, w->arch);
        return -1;
    }
    int64_t total = 0;
    for (int i = 0; i < 4; i++) total += w->sections[i] > 0 ? w->sections[i] : 0;
    for (uint32_t i = 0; i < cfg->n_rot / 2; i++) {
        /* the interleaved sections (ggml's IMROPE): pair i belongs to section i % 3 while it lasts */
        int64_t sector = total ? (int64_t)i % total : 0;
        int r = (int)(sector % 3);
        if (total == 0 || w->sections[r] <= 0 || sector >= 3 * (int64_t)w->sections[r]) {
            snprintf(err->msg, sizeof err->msg,
                     "%s: %s.rope.dimension_sections = [%d, %d, %d, %d]: rotated pairs outside the text sections are "
                     "not supported", w->path, w->arch, w->sections[0], w->sections[1], w->sections[2], w->sections[3]);
            err->status = PITH_UNSUPPORTED;
            return -1;
        }
    }
    return 0;
}

/* YaRN as llama.cpp sets it up (llama-context.cpp) and ggml applies it
 * (ggml_rope_yarn_corr_dims, rope_yarn with ext_factor 1): the pairs below
 * the correction range turn unscaled, those above it scaled by
 * rope_freq_scale, a ramp between; the rotated values are multiplied by
 * YaRN's magnitude, which with yarn_log_multiplier m != 0 is
 * mscale(f, 1) / mscale(f, m), else mscale(f, 1), where
 * mscale(f, k) = 1 + 0.1 k ln f (f > 1), and by rope.scaling.attn_factor. */
static float yarn_corr_dim(const ModelConfig *cfg, double beta)
{
    const double two_pi = 6.283185307179586;
    return (float)((double)cfg->n_rot * fmath_log((double)cfg->n_ctx_orig / (beta * two_pi)) /
                   (2.0 * fmath_log((double)cfg->rope_base)));
}

static double yarn_mscale(double factor, double k)
{
    return factor <= 1.0 ? 1.0 : 0.1 * k * fmath_log(factor) + 1.0;
}

static int finish_yarn(ConfigWalk *w, GgufError *err)
{
    ModelConfig *cfg = w->cfg;
    if (cfg->rope_freq_scale == 1.0f) return 0; /* no factor: nothing scales */
    if (cfg->n_swa) { /* llama.cpp's windowed layers would take YaRN's ramp unscaled: no reference */
        snprintf(err->msg, sizeof err->msg, "%s: %s.rope.scaling.type 'yarn' with windowed layers is not supported",
                 w->path, w->arch);
        err->status = PITH_UNSUPPORTED;
        return -1;
    }
    int own = cfg->arch->yarn_options;
    double beta_fast = own && w->have[K_YARN_BETA_FAST] ? w->val[K_YARN_BETA_FAST] : 32.0;
    double beta_slow = own && w->have[K_YARN_BETA_SLOW] ? w->val[K_YARN_BETA_SLOW] : 1.0;
    double log_mul = own && w->have[K_YARN_LOG_MUL] ? w->val[K_YARN_LOG_MUL] : 0.0;
    float low = floorf(yarn_corr_dim(cfg, beta_fast)), high = ceilf(yarn_corr_dim(cfg, beta_slow));
    cfg->yarn_low = low > 0.0f ? low : 0.0f;
    cfg->yarn_high = high < (float)(cfg->n_rot - 1) ? high : (float)(cfg->n_rot - 1);
    double factor = 1.0 / (double)cfg->rope_freq_scale;
    double mscale = log_mul != 0.0 ? yarn_mscale(factor, 1.0) / yarn_mscale(factor, log_mul) : yarn_mscale(factor, 1.0);
    cfg->rope_attn_factor = (float)(mscale * (double)cfg->rope_attn_factor);
    cfg->rope_yarn = 1;
    return 0;
}

/* A mixture of experts' keys: how many experts, how many a token uses,
 * their width, the leading dense layers and the gating, where the
 * architecture reads them (llama.cpp reads expert_gating_func and
 * leading_dense_block_count for LFM2-MoE only; its qwen3moe fixes softmax). */
static int finish_moe(ConfigWalk *w, GgufError *err)
{
    ModelConfig *cfg = w->cfg;
    const ArchInfo *a = cfg->arch;
    cfg->n_expert = w->have[K_EXPERTS] ? (uint32_t)w->val[K_EXPERTS] : 0;
    cfg->n_expert_used = w->have[K_EXPERTS_USED] ? (uint32_t)w->val[K_EXPERTS_USED] : 0;
    if (cfg->n_expert == 0 || cfg->n_expert_used == 0 || cfg->n_expert_used > cfg->n_expert) {
        snprintf(err->msg, sizeof err->msg, "%s: %s.expert_count = %u, expert_used_count = %u: need 1 <= used <= count",
                 w->path, w->arch, cfg->n_expert, cfg->n_expert_used);
        return -1;
    }
    cfg->n_ff_exp = w->have[K_FF_EXP] ? (uint32_t)w->val[K_FF_EXP] : cfg->n_ff / cfg->n_expert_used;
    if (cfg->n_ff_exp == 0) {
        snprintf(err->msg, sizeof err->msg, "%s: missing key %s.expert_feed_forward_length", w->path, w->arch);
        return -1;
    }
    if (a->layer[LT_UP_SHEXP] != TENSOR_REFUSED) cfg->n_ff_shexp = w->have[K_FF_SHEXP] ? (uint32_t)w->val[K_FF_SHEXP] : cfg->n_ff;
    cfg->n_dense_lead = a->moe_dense_lead && w->have[K_DENSE_LEAD] ? (uint32_t)w->val[K_DENSE_LEAD] : 0;
    if (cfg->n_dense_lead > cfg->n_layer) {
        snprintf(err->msg, sizeof err->msg, "%s: %s.leading_dense_block_count = %u is more than the %u layers", w->path,
                 w->arch, cfg->n_dense_lead, cfg->n_layer);
        return -1;
    }
    cfg->moe_gating = a->moe_gating;
    if (a->moe_gating == MOE_GATING_KEY) {
        uint32_t g = w->have[K_GATING] ? (uint32_t)w->val[K_GATING] : 0;
        if (g != MOE_SOFTMAX && g != MOE_SIGMOID) {
            snprintf(err->msg, sizeof err->msg, "%s: %s.expert_gating_func = %u: pith knows 1 (softmax) and 2 (sigmoid)",
                     w->path, w->arch, g);
            err->status = w->have[K_GATING] ? PITH_UNSUPPORTED : err->status;
            return -1;
        }
        cfg->moe_gating = (uint8_t)g;
    }
    return 0;
}

/* Every key has been seen: the numbers of the configuration, checked. */
/* Gemma 4's shapes (arch->gemma4): the windowed layers one by one, their
 * heads and RoPE of their own size, the layers sharing KV, per-kind kv
 * heads and the shared layers' FFN width (as llama.cpp's converter writes
 * them: one value per kind), the per-layer embeddings' width. */
static int finish_gemma4(ConfigWalk *w, GgufError *err)
{
    ModelConfig *cfg = w->cfg;
    uint32_t n = cfg->n_layer;
    const char *bad = NULL;
    if (cfg->n_swa == 0 || w->arr_len[ARR_SWA] != n) { /* also: at most 256 layers (layer_array) */
        snprintf(err->msg, sizeof err->msg, "%s: %s needs attention.sliding_window and a sliding_window_pattern bool per "
                 "layer (%u given for %u layers)", w->path, w->arch, w->arr_len[ARR_SWA], n);
        return -1;
    }
    for (uint32_t l = 0; l < n; l++)
        if (w->arr[ARR_SWA][l]) cfg->swa_layers[l / 64] |= (uint64_t)1 << (l % 64);
    cfg->head_dim_swa = w->have[K_KEY_LEN_SWA] ? (uint32_t)w->val[K_KEY_LEN_SWA] : cfg->head_dim;
    cfg->head_dim_v_swa = w->have[K_VAL_LEN_SWA] ? (uint32_t)w->val[K_VAL_LEN_SWA] : cfg->head_dim_v;
    cfg->n_rot_swa = w->have[K_ROPE_DIM_SWA] ? (uint32_t)w->val[K_ROPE_DIM_SWA] : cfg->n_rot;
    if (cfg->head_dim_v != cfg->head_dim || cfg->head_dim_v_swa != cfg->head_dim_swa)
        bad = "value heads as wide as key heads";
    else if (cfg->head_dim_swa % 2 != 0 || cfg->n_rot_swa != cfg->head_dim_swa)
        bad = "windowed layers rotating whole even heads";
    uint32_t shared = w->have[K_SHARED_KV] ? (uint32_t)w->val[K_SHARED_KV] : 0;
    cfg->n_layer_kv = n - (shared < n ? shared : n);
    /* llama.cpp's reuse: windowed layers read layer n_layer_kv - 2, global ones n_layer_kv - 1 */
    if (!bad && shared && (cfg->n_layer_kv < 2 || !model_layer_swa(cfg, cfg->n_layer_kv - 2) ||
                           model_layer_swa(cfg, cfg->n_layer_kv - 1)))
        bad = "shared_kv_layers after a windowed then a global layer";
    /* the arrays: one FFN width in the layers keeping KV, one in the others;
     * one count of kv heads per kind of layer */
    if ((w->arr_len[ARR_FF] && w->arr_len[ARR_FF] != n) || (w->arr_len[ARR_KV] && w->arr_len[ARR_KV] != n))
        bad = "an entry per layer in feed_forward_length and head_count_kv";
    cfg->n_ff_shared = w->arr_len[ARR_FF] ? w->arr[ARR_FF][n - 1] : cfg->n_ff;
    cfg->n_head_kv_swa = cfg->n_head_kv;
    uint32_t kv_of[2] = {0, 0}; /* a global and a windowed layer's, the first seen */
    for (uint32_t l = 0; !bad && l < n; l++) {
        uint32_t ff = w->arr_len[ARR_FF] ? w->arr[ARR_FF][l] : cfg->n_ff;
        uint32_t v = w->arr_len[ARR_KV] ? w->arr[ARR_KV][l] : cfg->n_head_kv;
        uint32_t *kind = &kv_of[model_layer_swa(cfg, l) != 0];
        if (!*kind) *kind = v;
        if (ff != (l < cfg->n_layer_kv ? cfg->n_ff : cfg->n_ff_shared) || ff == 0 || ff > config_keys[K_FF].max ||
            v == 0 || v > cfg->n_head || cfg->n_head % v != 0 || v != *kind)
            bad = "one FFN width before the shared KV and one after, kv heads dividing head_count, one per kind";
    }
    if (kv_of[0]) cfg->n_head_kv = kv_of[0];
    if (kv_of[1]) cfg->n_head_kv_swa = kv_of[1];
    if (bad) {
        snprintf(err->msg, sizeof err->msg, "%s: %s: pith needs %s", w->path, w->arch, bad);
        err->status = PITH_UNSUPPORTED;
        return -1;
    }
    cfg->n_embd_pe = w->have[K_EMBD_PE] ? (uint32_t)w->val[K_EMBD_PE] : 0;
    cfg->attn_scale = 1.0f; /* q and k are RMS-normed: llama.cpp's kq_scale 1 */
    if (!w->have[K_SOFTCAP]) cfg->logit_softcap = 30.0f; /* llama.cpp's default for gemma4 */
    return 0;
}

static int finish_keys(ConfigWalk *w, GgufError *err)
{
    ModelConfig *cfg = w->cfg;
    if (!w->have_arch) {
        snprintf(err->msg, sizeof err->msg, "%s: no general.architecture key: not a model file?", w->path);
        return -1;
    }
    for (int k = 0; k < K_COUNT; k++) {
        if (config_keys[k].required && !w->have[k]) {
            snprintf(err->msg, sizeof err->msg, "%s: missing key %s.%s", w->path, w->arch, config_keys[k].suffix);
            return -1;
        }
    }
    cfg->n_layer = (uint32_t)w->val[K_BLOCKS];
    if (w->have[K_NEXTN] && w->val[K_NEXTN] > 0) {
        if (!cfg->arch->mtp_layers || w->val[K_NEXTN] >= cfg->n_layer) {
            snprintf(err->msg, sizeof err->msg, "%s: %s.nextn_predict_layers = %g: multi-token prediction layers %s", w->path,
                     w->arch, w->val[K_NEXTN], cfg->arch->mtp_layers ? "must be fewer than the blocks" : "are not supported");
            if (!cfg->arch->mtp_layers) err->status = PITH_UNSUPPORTED;
            return -1;
        }
        cfg->n_layer_mtp = (uint32_t)w->val[K_NEXTN];
        cfg->n_layer -= cfg->n_layer_mtp;
    }
    cfg->n_embd = (uint32_t)w->val[K_EMBD];
    cfg->n_ff = (uint32_t)w->val[K_FF];
    cfg->n_head = (uint32_t)w->val[K_HEADS];
    cfg->n_head_kv = w->have[K_HEADS_KV] ? (uint32_t)w->val[K_HEADS_KV] : cfg->n_head;
    cfg->n_ctx_train = (uint32_t)w->val[K_CTX];
    cfg->rope_base = w->have[K_ROPE_BASE] ? (float)w->val[K_ROPE_BASE] : 10000.0f;
    cfg->norm_eps = (float)w->val[K_EPS];
    cfg->rope_attn_factor = w->have[K_ROPE_ATTN_FACTOR] ? (float)w->val[K_ROPE_ATTN_FACTOR] : 1.0f;
    /* a window only where the architecture has one (Phi-3 files carry a
     * sliding_window that llama.cpp ignores, and so does pith); LFM2.5's
     * applies to every attention layer */
    if (cfg->arch->attn != ATTN_FULL && w->have[K_SWA] && w->val[K_SWA] > 0) {
        cfg->n_swa = (uint32_t)w->val[K_SWA];
        if (cfg->arch->attn == ATTN_SWA) cfg->swa_pattern = w->have[K_SWA_PATTERN] ? (uint32_t)w->val[K_SWA_PATTERN] : 6;
    }
    cfg->rope_base_swa = w->have[K_ROPE_BASE_SWA] ? (float)w->val[K_ROPE_BASE_SWA] : 10000.0f;
    cfg->logit_softcap = w->have[K_SOFTCAP] ? (float)w->val[K_SOFTCAP] : 0.0f;
    cfg->n_ctx_orig = w->have[K_ROPE_ORIG_CTX] ? (uint32_t)w->val[K_ROPE_ORIG_CTX] : cfg->n_ctx_train;
    /* linear scaling, as llama.cpp: a factor (with type linear, or no type)
     * divides the positions; type none turns it off. Windowed layers keep
     * theirs unscaled (llama.cpp's rope_freq_scale_train_swa, 1). */
    cfg->rope_freq_scale = 1.0f;
    if (w->have[K_ROPE_SCALE] && w->val[K_ROPE_SCALE] != 0.0 && !w->rope_scaling_none)
        cfg->rope_freq_scale = (float)(1.0 / w->val[K_ROPE_SCALE]);
    if (cfg->arch->yarn_options && w->have[K_ATTN_TEMP]) cfg->attn_temp_scale = (float)w->val[K_ATTN_TEMP];
    if (w->n_kv_per_layer && w->n_kv_per_layer != cfg->n_layer + cfg->n_layer_mtp) {
        snprintf(err->msg, sizeof err->msg, "%s: %s.attention.head_count_kv has %llu entries for %u layers", w->path,
                 w->arch, (unsigned long long)w->n_kv_per_layer, cfg->n_layer + cfg->n_layer_mtp);
        return -1;
    }
    if (model_conv_before(cfg, cfg->n_layer)) {
        if (!w->have[K_CONV_L]) {
            snprintf(err->msg, sizeof err->msg, "%s: missing key %s.shortconv.l_cache", w->path, w->arch);
            return -1;
        }
        cfg->conv_l = (uint32_t)w->val[K_CONV_L];
    }
    if (cfg->n_head_kv > cfg->n_head || cfg->n_head % cfg->n_head_kv != 0) {
        snprintf(err->msg, sizeof err->msg, "%s: %s.attention.head_count_kv = %u does not divide head_count = %u",
                 w->path, w->arch, cfg->n_head_kv, cfg->n_head);
        return -1;
    }
    if (w->have[K_KEY_LEN]) {
        cfg->head_dim = (uint32_t)w->val[K_KEY_LEN];
    } else {
        if (cfg->n_embd % cfg->n_head != 0) {
            snprintf(err->msg, sizeof err->msg, "%s: %s.attention.head_count = %u does not divide embedding_length = %u",
                     w->path, w->arch, cfg->n_head, cfg->n_embd);
            return -1;
        }
        cfg->head_dim = cfg->n_embd / cfg->n_head;
    }
    if (cfg->head_dim % 2 != 0 || cfg->head_dim < 2 || cfg->head_dim > MODEL_MAX_HEAD_DIM) {
        snprintf(err->msg, sizeof err->msg, "%s: head dimension %u must be even and in [2, %d]", w->path,
                 cfg->head_dim, MODEL_MAX_HEAD_DIM);
        return -1;
    }
    cfg->head_dim_v = w->have[K_VAL_LEN] ? (uint32_t)w->val[K_VAL_LEN] : cfg->head_dim;
    /* Gemma 3 27B (62 layers) scales by the model width per head, as llama.cpp does */
    cfg->attn_scale = (float)(1.0 / sqrt((double)cfg->head_dim));
    if (strcmp(cfg->arch->name, "gemma3") == 0 && cfg->n_layer == 62)
        cfg->attn_scale = 1.0f / sqrtf((float)(cfg->n_embd / cfg->n_head));
    /* Rotating only part of each head is refused where llama.cpp refuses
     * it or no model does it (no reference to test it against); Phi-4-mini
     * rotates the first 96 of 128. */
    cfg->n_rot = w->have[K_ROPE_DIM] ? (uint32_t)w->val[K_ROPE_DIM] : cfg->head_dim;
    if (cfg->arch->partial_rope && cfg->n_rot <= cfg->head_dim && cfg->n_rot % 2 == 0) {
        /* the first n_rot elements of a head rotate */
    } else if (cfg->n_rot != cfg->head_dim) {
        snprintf(err->msg, sizeof err->msg, "%s: %s.rope.dimension_count = %u: must equal the head dimension %u",
                 w->path, w->arch, cfg->n_rot, cfg->head_dim);
        return -1;
    }
    if (w->rope_scaling_yarn && finish_yarn(w, err) != 0) return -1;
    if (model_arch_deltanet(cfg->arch) && finish_deltanet(w, err) != 0) return -1;
    if (cfg->arch->layer[LT_GATE_INP] != TENSOR_REFUSED && finish_moe(w, err) != 0) return -1;
    /* one kind of attention layer unless Gemma 4's keys say otherwise */
    cfg->head_dim_swa = cfg->head_dim;
    cfg->head_dim_v_swa = cfg->head_dim_v;
    cfg->n_head_kv_swa = cfg->n_head_kv;
    cfg->n_rot_swa = cfg->n_rot;
    cfg->n_layer_kv = cfg->n_layer;
    cfg->n_ff_shared = cfg->n_ff;
    if (cfg->arch->gemma4 && finish_gemma4(w, err) != 0) return -1;
    /* every derived width stays far below 2^32: heads <= 4096, dims <= 1024 */
    cfg->tied_output = 1;
    w->keys_done = 1;
    return 0;
}

/* What model_load does with a tensor of this name: a layer tensor
 * (layer_tensors[], in *lt) the architecture allows, token_embd or output
 * (a matrix), output_norm, rope_freqs where allowed; anything else has no
 * use (refused: an unused tensor means a variant of the architecture that
 * pith would silently get wrong). */
enum { ROLE_NONE, ROLE_LAYER, ROLE_MATRIX, ROLE_NORM, ROLE_ROPE_FREQS, ROLE_ROPE_FACTORS, ROLE_UNUSED, ROLE_PE_EMBD };

/* Layers that must have tensor i (if the rule requires it): those of the
 * kind (attention or recurrent) its part and rule name, or all. */
static uint64_t layers_with(const ModelConfig *cfg, int i)
{
    uint64_t n = 0;
    for (uint32_t l = 0; l < cfg->n_layer; l++) n += model_layer_allows(cfg, l, i) != 0;
    return n;
}

static int tensor_role(const ModelConfig *cfg, const char *name, int *lt)
{
    if (strcmp(name, "token_embd.weight") == 0 || strcmp(name, "output.weight") == 0) return ROLE_MATRIX;
    if (strcmp(name, cfg->arch->output_norm ? cfg->arch->output_norm : "output_norm.weight") == 0) return ROLE_NORM;
    if (strcmp(name, "rope_freqs.weight") == 0) return cfg->arch->rope_freqs != TENSOR_REFUSED ? ROLE_ROPE_FREQS : ROLE_NONE;
    if (strcmp(name, "rope_factors_long.weight") == 0 || strcmp(name, "rope_factors_short.weight") == 0)
        return cfg->arch->rope_factors != TENSOR_REFUSED ? ROLE_ROPE_FACTORS : ROLE_NONE;
    if (cfg->n_embd_pe) { /* Gemma 4's per-layer embeddings: the table, its projection, the norm */
        if (strcmp(name, "per_layer_token_embd.weight") == 0) return ROLE_PE_EMBD;
        if (strcmp(name, "per_layer_model_proj.weight") == 0) return ROLE_MATRIX;
        if (strcmp(name, "per_layer_proj_norm.weight") == 0) return ROLE_NORM;
    }
    if (strncmp(name, "blk.", 4) != 0) return ROLE_NONE;
    const char *p = name + 4;
    uint64_t layer = 0;
    int digits = 0;
    while (*p >= '0' && *p <= '9' && digits < 10) layer = layer * 10 + (uint64_t)(*p++ - '0'), digits++;
    if (digits == 0 || *p != '.') return ROLE_NONE;
    /* a multi-token prediction layer: stays in the file, never read */
    if (layer >= cfg->n_layer) return layer < (uint64_t)cfg->n_layer + cfg->n_layer_mtp ? ROLE_UNUSED : ROLE_NONE;
    p++;
    /* a name may have two meanings (ffn_up: up, or gate and up fused):
     * the one the architecture allows */
    for (int i = 0; i < LT_COUNT; i++) {
        const LayerTensor *t = &layer_tensors[i];
        size_t len = strlen(t->name);
        int suffix_ok = t->suffix[0] ? p[len] == '.' && strcmp(p + len + 1, t->suffix) == 0 : p[len] == '\0';
        if (strncmp(p, t->name, len) != 0 || !suffix_ok) continue;
        if (model_layer_allows(cfg, (uint32_t)layer, i)) {
            *lt = i;
            return ROLE_LAYER;
        }
        /* a layer reading another's KV may carry its own k, v: unused (llama.cpp too) */
        if (t->writes_kv && layer >= cfg->n_layer_kv && cfg->arch->layer[i] != TENSOR_REFUSED) return ROLE_UNUSED;
    }
    return ROLE_NONE;
}

/* A fused matrix is packed, or its scales copied, only if its views start
 * on groups of rows (KERN_PACK_ROWS, KERN_SIDE_ROWS). */
static int views_on_groups(const ModelConfig *c, int id, uint64_t group)
{
    if (layer_tensors[id].per_expert) return model_dim(c, layer_tensors[id].rows) % group == 0;
    if (id == LT_QKV) return model_dim(c, DIM_Q) % group == 0 && model_dim(c, DIM_KV) % group == 0;
    if (id == LT_GATE_UP) return c->n_ff % group == 0;
    return 1;
}

static int walk_tensor(void *ctx, Gguf *g, const GgufTensor *t, GgufError *err)
{
    (void)g;
    ConfigWalk *w = ctx;
    ModelConfig *cfg = w->cfg;
    if (w->keys_before_arch && !w->rescan) return 0; /* the second walk reads them */
    if (!w->keys_done && finish_keys(w, err) != 0) return -1;
    if (strcmp(t->name, "token_embd.weight") == 0) {
        if (t->ne[1] < 1 || t->ne[1] > (1u << 22)) {
            snprintf(err->msg, sizeof err->msg, "%s: byte %llu: token_embd.weight has %llu rows (the vocabulary), expected 1 to %u",
                     w->path, (unsigned long long)t->offset, (unsigned long long)t->ne[1], 1u << 22);
            return -1;
        }
        cfg->n_vocab = (uint32_t)t->ne[1];
        w->have_embd_tensor = 1;
    }
    if (strcmp(t->name, "output.weight") == 0) cfg->tied_output = 0;
    int lt = -1;
    int role = tensor_role(cfg, t->name, &lt);
    if (role == ROLE_ROPE_FREQS) cfg->rope_freqs = 1;
    if (role == ROLE_ROPE_FACTORS) w->n_rope_factors++;
    if (role == ROLE_NONE) {
        snprintf(err->msg, sizeof err->msg, "%s: byte %llu: tensor '%s' has no use in pith's %s model (a variant not supported yet)",
                 w->path, (unsigned long long)t->offset, t->name, cfg->arch->name);
        err->status = PITH_UNSUPPORTED;
        return -1;
    }
    if (role == ROLE_UNUSED) return 0;
    if (role == ROLE_PE_EMBD) { /* never copied: mapped, or its rows read per step */
        cfg->pe_bytes = t->n_bytes;
        return 0;
    }
    if (strcmp(t->name, "per_layer_model_proj.weight") == 0) cfg->pe_proj_bytes = arena_round(t->n_bytes);
    if (role == ROLE_LAYER) w->n_present[lt]++;
    if (role == ROLE_LAYER && layer_tensors[lt].per_expert) cfg->expert_bytes += t->n_bytes; /* <= the file: no overflow */
    if (role == ROLE_MATRIX || (role == ROLE_LAYER && layer_tensors[lt].matrix)) {
        uint64_t r = arena_round(t->n_bytes);
        if (r == UINT64_MAX || cfg->weight_bytes > UINT64_MAX - r) {
            snprintf(err->msg, sizeof err->msg, "%s: the weights' sizes overflow", w->path);
            return -1;
        }
        cfg->weight_bytes += r;
        if (t->type < 64) cfg->matrix_types |= (uint64_t)1 << t->type;
        /* the scales' copy of a mapped matrix: under 1/9 of its bytes */
        uint64_t side = arena_round(kern_side_bytes(t->type, t->n_elements / t->ne[0], t->ne[0]));
        if (strcmp(t->name, "token_embd.weight") == 0) cfg->embd_side_bytes = side;
        else if (role != ROLE_LAYER || views_on_groups(cfg, lt, KERN_SIDE_ROWS)) cfg->side_bytes += side;
        /* sizes --load stream needs: a slot holds any layer's matrices, the
         * output streams by rows */
        uint64_t row = t->n_bytes / (t->n_elements / t->ne[0]); /* dims >= 1: n_elements >= ne[0] */
        if (strcmp(t->name, "token_embd.weight") == 0) cfg->embd_row_bytes = row;
        if (strcmp(t->name, "output.weight") == 0) w->output_row_bytes = row;
        if (role == ROLE_LAYER) {
            uint32_t layer = 0; /* "blk.N.": tensor_role checked N */
            for (const char *q = t->name + 4; *q >= '0' && *q <= '9'; q++) layer = layer * 10 + (uint32_t)(*q - '0');
            int kind = model_layer_recurrent(cfg, layer) != 0;
            if (r > w->kind_max[kind][lt]) w->kind_max[kind][lt] = r;
        }
    }
    return 0;
}

int model_read_config(Gguf *g, ModelConfig *cfg, GgufError *err)
{
    ConfigWalk w;
    memset(&w, 0, sizeof w);
    memset(cfg, 0, sizeof *cfg);
    w.cfg = cfg;
    w.path = g->files[0].path;
    GgufScanCallbacks cb = {walk_kv, walk_tensor, &w};

    if (gguf_walk(g, &cb, err) != 0) return -1;
    if (w.keys_before_arch && w.have_arch) { /* a file that names its architecture late: rare */
        w.rescan = 1;
        if (gguf_walk(g, &cb, err) != 0) return -1;
    }
    if (!w.keys_done && finish_keys(&w, err) != 0) return -1; /* a file without tensors */
    if (!w.have_embd_tensor) {
        snprintf(err->msg, sizeof err->msg, "%s: tensor 'token_embd.weight' is missing", w.path);
        return -1;
    }
    /* biases come in all layers or none: a partial set is a broken file */
    uint64_t n_biases = w.n_present[LT_Q_BIAS] + w.n_present[LT_K_BIAS] + w.n_present[LT_V_BIAS];
    if (n_biases != 0 && n_biases != 3u * cfg->n_layer) {
        snprintf(err->msg, sizeof err->msg, "%s: %llu q/k/v bias tensors, expected 0 or %llu (3 per layer)", w.path,
                 (unsigned long long)n_biases, 3ull * cfg->n_layer);
        return -1;
    }
    if (n_biases == 0 && cfg->arch->layer[LT_Q_BIAS] == TENSOR_REQUIRED) {
        snprintf(err->msg, sizeof err->msg, "%s: tensor 'blk.0.attn_q.bias' is missing (%s has q/k/v biases)", w.path,
                 w.arch);
        return -1;
    }
    for (int i = 0; i < LT_COUNT; i++) {
        TensorRule rule = cfg->arch->layer[i];
        if (rule == TENSOR_OPTIONAL && w.n_present[i] != 0 && w.n_present[i] != cfg->n_layer) {
            snprintf(err->msg, sizeof err->msg, "%s: %llu layers of %u have tensor '%s.%s' (all or none)", w.path,
                     (unsigned long long)w.n_present[i], cfg->n_layer, layer_tensors[i].name, layer_tensors[i].suffix);
            return -1;
        }
        cfg->has[i] = rule == TENSOR_REQUIRED || rule == TENSOR_ATTN_ONLY || rule == TENSOR_RECUR_ONLY ||
                      (rule == TENSOR_OPTIONAL && w.n_present[i] != 0);
        if (cfg->has[i] && layers_with(cfg, i) == 0) cfg->has[i] = 0; /* e.g. no recurrent layer at all */
    }
    if (w.n_rope_factors != 0 && w.n_rope_factors != 2) {
        snprintf(err->msg, sizeof err->msg, "%s: rope_factors_short.weight and rope_factors_long.weight come together",
                 w.path);
        return -1;
    }
    cfg->rope_factors = w.n_rope_factors == 2;
    /* vectors are copied into the arena as floats (of the rope factors, the
     * ones the context chooses) */
    cfg->norm_floats = cfg->n_embd + (cfg->rope_freqs || cfg->rope_factors ? cfg->n_rot / 2 : 0);
    for (uint32_t l = 0; l < cfg->n_layer; l++) {
        ModelConfig lc; /* the layer's widths (Gemma 4's kinds differ) */
        model_layer_cfg(cfg, l, &lc);
        for (int i = 0; i < LT_COUNT; i++)
            if (model_layer_has(cfg, l, i) && !layer_tensors[i].matrix)
                cfg->norm_floats += model_dim(&lc, layer_tensors[i].cols) * model_dim(&lc, layer_tensors[i].rows);
    }
    if (cfg->arch->gemma4) { /* the per-layer projection's norm; ones for the V norm */
        ModelConfig wc;
        model_widest_cfg(cfg, &wc);
        cfg->norm_floats += cfg->n_embd_pe + wc.head_dim_v;
        int pe_layers = cfg->has[LT_PE_GATE] && cfg->has[LT_PE_PROJ] && cfg->has[LT_PE_POST_NORM];
        if (cfg->n_embd_pe && (!pe_layers || !cfg->pe_bytes || !cfg->pe_proj_bytes)) {
            snprintf(err->msg, sizeof err->msg, "%s: per-layer embeddings of %u: tensors per_layer_token_embd, "
                     "per_layer_model_proj and every layer's inp_gate, proj and post_norm are needed", w.path, cfg->n_embd_pe);
            return -1;
        }
        if (!cfg->n_embd_pe && (cfg->has[LT_PE_GATE] || cfg->has[LT_PE_PROJ] || cfg->has[LT_PE_POST_NORM])) {
            snprintf(err->msg, sizeof err->msg, "%s: per-layer embedding tensors without %s.embedding_length_per_layer_input",
                     w.path, w.arch);
            return -1;
        }
    }
    cfg->out_row_bytes = cfg->tied_output ? cfg->embd_row_bytes : w.output_row_bytes;
    for (int kind = 0; kind < 2; kind++) { /* a slot holds either kind of layer */
        uint64_t sum = 0;
        for (int i = 0; i < LT_COUNT; i++) sum += w.kind_max[kind][i]; /* each <= weight_bytes: no overflow */
        if (sum > cfg->stream_layer_bytes) cfg->stream_layer_bytes = sum;
    }
    cfg->mapped = 1;
    for (uint32_t i = 0; i < g->n_files; i++)
        if (!g->files[i].map) cfg->mapped = 0;
    return 0;
}

int model_check_options(const ModelConfig *cfg, const ModelOptions *opt, GgufError *err)
{
    if (opt->n_ctx < 1 || opt->n_ctx > cfg->n_ctx_train) {
        snprintf(err->msg, sizeof err->msg, "-c: context of %u positions is out of range [1, %u] (the model's context_length)",
                 opt->n_ctx, cfg->n_ctx_train);
        return -1;
    }
    if (opt->load != LOAD_MMAP && opt->load != LOAD_READ && opt->load != LOAD_STREAM) {
        snprintf(err->msg, sizeof err->msg, "--load: unknown mode");
        return -1;
    }
    if (opt->batch < 1 || opt->batch > MODEL_MAX_BATCH) {
        snprintf(err->msg, sizeof err->msg, "batch of %u tokens is out of range [1, %d]", opt->batch,
                 MODEL_MAX_BATCH);
        return -1;
    }
    if (opt->kv_type != KV_F32 && opt->kv_type != KV_F16 && opt->kv_type != KV_Q8_0) {
        snprintf(err->msg, sizeof err->msg, "--kv-type: unknown type");
        return -1;
    }
    if (opt->kv_type == KV_Q8_0 && (cfg->head_dim % 32 != 0 || cfg->head_dim_v % 32 != 0 || cfg->head_dim_swa % 32 != 0 ||
                                    cfg->head_dim_v_swa % 32 != 0)) {
        snprintf(err->msg, sizeof err->msg,
                 "--kv-type q8_0: head dimension %u is not a multiple of 32 (Q8_0 blocks of 32 would straddle "
                 "two heads); use --kv-type f16",
                 cfg->head_dim % 32 != 0 ? cfg->head_dim : cfg->head_dim_v % 32 != 0 ? cfg->head_dim_v : cfg->head_dim_swa);
        return -1;
    }
    return 0;
}

void model_plan(const ModelConfig *cfg, const ModelOptions *opt, Plan *plan)
{
    plan_add(plan, "layer table", plan_mul(plan, cfg->n_layer, sizeof(LayerWeights)));
    plan_add(plan, "norm weights", plan_mul(plan, cfg->norm_floats, sizeof(float)));
    if (opt->load == LOAD_STREAM) {
        ModelStreamParts sp;
        model_stream_bytes(cfg, opt, &sp);
        plan_add(plan, "weights: stream slots", plan_mul(plan, 2, sp.slot_bytes));
        plan_add(plan, "weights: token_embd rows", sp.embd_bytes);
        if (sp.resident_bytes) plan_add(plan, "weights: resident layers", sp.resident_bytes);
        if (cfg->pe_proj_bytes) plan_add(plan, "weights: per-layer projection", cfg->pe_proj_bytes);
    } else if (opt->load == LOAD_READ || !cfg->mapped) {
        plan_add(plan, "weights (read, no mmap)", cfg->weight_bytes);
    } else {
        uint64_t side = cfg->side_bytes + (cfg->tied_output ? cfg->embd_side_bytes : 0);
        if (side) plan_add(plan, "weight scales (copied from the mapped file)", side);
    }
}

/* ---- binding weights by name ------------------------------------------ */

typedef struct {
    Model *m;
    Gguf *g;
    Arena *arena;
    GgufError *err;
    int stream;             /* the matrices being bound are streamed: nothing read now */
    uint64_t read;          /* bytes read into the arena so far (progress on a terminal) */
} Loader;

static const char *tensor_path(const Gguf *g, const GgufTensor *t)
{
    return g->files[t->file_index < g->n_files ? t->file_index : 0].path;
}

static const GgufTensor *find_checked(Loader *L, const char *name, uint64_t ne0, uint64_t ne1, uint64_t ne2)
{
    const GgufTensor *t = gguf_find_tensor(L->g, name);
    if (!t) {
        snprintf(L->err->msg, sizeof L->err->msg, "%s: tensor '%s' is missing", L->g->files[0].path, name);
        return NULL;
    }
    if (t->ne[0] != ne0 || t->ne[1] != ne1 || t->ne[2] != ne2 || t->ne[3] != 1) {
        char third[32] = ""; /* experts: [ne0, ne1, experts] */
        if (ne2 != 1) snprintf(third, sizeof third, ", %llu", (unsigned long long)ne2);
        snprintf(L->err->msg, sizeof L->err->msg,
                 "%s: byte %llu: tensor '%s' has shape [%llu, %llu, %llu, %llu], expected [%llu, %llu%s]",
                 tensor_path(L->g, t), (unsigned long long)t->offset, name, (unsigned long long)t->ne[0],
                 (unsigned long long)t->ne[1], (unsigned long long)t->ne[2], (unsigned long long)t->ne[3],
                 (unsigned long long)ne0, (unsigned long long)ne1, third);
        return NULL;
    }
    return t;
}

/* A matrix of rows x cols, or `planes` of them one after another (a 3-D
 * tensor of experts: one Weight of planes * rows rows). */
static int bind_matrix(Loader *L, Weight *w, const char *name, uint64_t cols, uint64_t rows, uint64_t planes)
{
    const GgufTensor *t = find_checked(L, name, cols, rows, planes);
    if (!t) return -1;
    rows *= planes; /* each <= 2^32: no overflow */
    const GgmlTypeInfo *ti = ggml_type_info(t->type);
    if (!quant_supported(t->type)) {
        snprintf(L->err->msg, sizeof L->err->msg, "%s: byte %llu: tensor '%s' has type %s, which pith cannot compute with yet",
                 tensor_path(L->g, t), (unsigned long long)t->offset, name, ti ? ti->name : "(invalid)");
        L->err->status = PITH_UNSUPPORTED;
        return -1;
    }
    uint64_t row_bytes = ggml_row_bytes(t->type, cols);
    if (row_bytes == 0 || row_bytes > UINT64_MAX / rows || row_bytes * rows != t->n_bytes) {
        snprintf(L->err->msg, sizeof L->err->msg, "%s: byte %llu: tensor '%s': rows of %llu elements do not fit type %s",
                 tensor_path(L->g, t), (unsigned long long)t->offset, name, (unsigned long long)cols, ti->name);
        return -1;
    }
    w->type = t->type;
    w->rows = rows;
    w->cols = cols;
    w->row_bytes = row_bytes;
    w->file_index = t->file_index < L->g->n_files ? t->file_index : 0;
    w->file_offset = t->offset;
    if (L->stream) return 0; /* data stays NULL: weight_stream.c reads it per step */
    void *buf = NULL;
    if (!L->m->cfg.mapped || L->m->load != LOAD_MMAP) {
        buf = arena_take(L->arena, t->n_bytes);
        if (!buf) {
            snprintf(L->err->msg, sizeof L->err->msg, "internal error: memory plan too small for '%s'", name);
            return -1;
        }
    }
    const uint8_t *data = gguf_tensor_bytes(L->g, t, buf);
    if (!data) {
        snprintf(L->err->msg, sizeof L->err->msg, "%s: byte %llu: cannot read tensor '%s'", tensor_path(L->g, t),
                 (unsigned long long)t->offset, name);
        return -1;
    }
    if (buf && data != buf) { /* mapped files, but the weights are wanted in the arena */
        memcpy(buf, data, t->n_bytes);
        data = buf;
    }
    if (buf) port_progress("loading", L->read += t->n_bytes, L->m->cfg.weight_bytes, 1);
    w->data = data;
    return 0;
}

/* --load read: a matrix the kernel set reads repacked (kernels.h:
 * KERN_PACK_ROWS: Q8_0 and Q4_0 on the A76 and on x86 with AVX-512 VNNI)
 * is repacked in place, the arena's free space lent as scratch (left
 * zeroed); without room it stays as it is.
 * Mapped files keep their layout (no second copy of the weights), streamed
 * weights too (read again every step). */
static void pack_matrix(Loader *L, Weight *w)
{
    if (!w->data || L->stream || (L->m->cfg.mapped && L->m->load == LOAD_MMAP) || !kern_pack_wanted(w->type, w->rows))
        return;
    uint8_t *scratch = arena_lend(L->arena, KERN_PACK_ROWS * w->row_bytes);
    if (!scratch) return;
    kern_pack(w->type, (uint8_t *)w->data, w->row_bytes, w->rows, scratch);
    w->packed = 1;
}

/* --load mmap: a matrix the kernel set reads with a copy of its scales
 * (kernels.h: KERN_SIDE_ROWS, the A76's Q8_0 and Q4_0) gets one in the
 * arena (model_plan counted it); without room it goes without. */
static void side_matrix(Loader *L, Weight *w)
{
    if (!w->data || L->stream || !L->m->cfg.mapped || L->m->load != LOAD_MMAP) return;
    uint64_t bytes = kern_side_bytes(w->type, w->rows, w->cols);
    uint16_t *side = bytes ? arena_take(L->arena, bytes) : NULL;
    if (!side) return;
    kern_side_fill(w->type, w->data, w->row_bytes, w->rows, side);
    w->side = side;
}

/* Vectors (norms, biases, rope factors) and LFM2's convolution kernels
 * ([ne0, ne1]) are F32 and always copied, so the
 * forward pass gets aligned floats. */
static int bind_values(Loader *L, float *dst, const char *name, uint64_t ne0, uint64_t ne1)
{
    uint64_t n = ne0 * ne1;
    const GgufTensor *t = find_checked(L, name, ne0, ne1, 1);
    if (!t) return -1;
    if (t->type != GGML_TYPE_F32) {
        const GgmlTypeInfo *ti = ggml_type_info(t->type);
        snprintf(L->err->msg, sizeof L->err->msg, "%s: byte %llu: tensor '%s' has type %s, expected F32",
                 tensor_path(L->g, t), (unsigned long long)t->offset, name, ti ? ti->name : "(invalid)");
        return -1;
    }
    const uint8_t *p = gguf_tensor_bytes(L->g, t, dst);
    if (!p) {
        snprintf(L->err->msg, sizeof L->err->msg, "%s: byte %llu: cannot read tensor '%s'", tensor_path(L->g, t),
                 (unsigned long long)t->offset, name);
        return -1;
    }
    quant_dequant_row(GGML_TYPE_F32, p, dst, n); /* in place when read into dst: element-wise, safe */
    for (uint64_t i = 0; i < n; i++) {
        if (!isfinite(dst[i])) {
            snprintf(L->err->msg, sizeof L->err->msg, "%s: byte %llu: tensor '%s' holds a non-finite value",
                     tensor_path(L->g, t), (unsigned long long)(t->offset + 4 * i), name);
            return -1;
        }
    }
    return 0;
}

int model_load(Model *m, Gguf *g, Arena *arena, const ModelConfig *cfg, const ModelOptions *opt,
               GgufError *err)
{
    memset(m, 0, sizeof *m);
    m->cfg = *cfg;
    m->load = opt->load;
    m->gguf = g;
    Loader L = {m, g, arena, err, 0, 0};
    port_progress("loading", 0, 0, 1);
    const ModelConfig *c = &m->cfg;

    m->layers = arena_take(arena, (uint64_t)c->n_layer * sizeof(LayerWeights));
    float *norms = arena_take(arena, c->norm_floats * sizeof(float));
    if (!m->layers || !norms) {
        snprintf(err->msg, sizeof err->msg, "internal error: memory plan too small for the layer table");
        return -1;
    }
    memset(m->layers, 0, (size_t)c->n_layer * sizeof(LayerWeights));
    if (m->load != LOAD_STREAM && (m->load == LOAD_READ || !c->mapped)) {
        /* the matrices come next, weight_bytes of them (model_plan): read
         * for every token, they are worth huge pages, asked before the
         * reads touch them */
        uint64_t left = arena->size - arena->used;
        port_arena_huge(arena->base + arena->used, (size_t)(c->weight_bytes < left ? c->weight_bytes : left));
    }

    if (m->load == LOAD_STREAM) {
        ModelStreamParts sp;
        model_stream_bytes(c, opt, &sp);
        m->resident_layers = sp.resident_layers;
        L.stream = 1; /* token_embd by rows, the output matrix by chunks */
    }
    if (bind_matrix(&L, &m->tok_embd, "token_embd.weight", c->n_embd, c->n_vocab, 1) != 0) return -1;
    pack_matrix(&L, &m->tok_embd);
    if (c->tied_output) {
        side_matrix(&L, &m->tok_embd); /* its rows are read as embeddings in place, the copy serves the logits */
        m->output = m->tok_embd;
    } else if (bind_matrix(&L, &m->output, "output.weight", c->n_embd, c->n_vocab, 1) != 0) {
        return -1;
    } else {
        pack_matrix(&L, &m->output);
        side_matrix(&L, &m->output);
    }
    m->output_norm = norms;
    norms += c->n_embd;
    if (bind_values(&L, m->output_norm, c->arch->output_norm ? c->arch->output_norm : "output_norm.weight", c->n_embd, 1) != 0)
        return -1;
    if (c->rope_freqs || c->rope_factors) {
        /* LongRoPE: the long factors when the context is longer than the
         * original one, as llama.cpp chooses them for its context */
        const char *fname = c->rope_freqs ? "rope_freqs.weight"
                          : opt->n_ctx > c->n_ctx_orig ? "rope_factors_long.weight" : "rope_factors_short.weight";
        m->rope_freqs = norms;
        norms += c->n_rot / 2;
        if (bind_values(&L, m->rope_freqs, fname, c->n_rot / 2, 1) != 0) return -1;
        for (uint32_t i = 0; i < c->n_rot / 2; i++) {
            if (!(m->rope_freqs[i] > 0.0f)) { /* a divisor of every angle */
                snprintf(err->msg, sizeof err->msg, "%s: %s[%u] = %g is not positive", g->files[0].path, fname, i,
                         (double)m->rope_freqs[i]);
                return -1;
            }
        }
    }

    if (c->arch->gemma4) { /* the weightless V norm's ones */
        ModelConfig wc;
        model_widest_cfg(c, &wc);
        m->ones = norms;
        norms += wc.head_dim_v;
        for (uint32_t i = 0; i < wc.head_dim_v; i++) m->ones[i] = 1.0f;
    }
    if (c->n_embd_pe) {
        /* the table stays in the file (rows read per step when not mapped);
         * its projection is loaded as any matrix, resident when streaming */
        L.stream = !(c->mapped && m->load == LOAD_MMAP);
        uint64_t pe_width = (uint64_t)c->n_layer * c->n_embd_pe;
        if (bind_matrix(&L, &m->pe_embd, "per_layer_token_embd.weight", pe_width, c->n_vocab, 1) != 0) return -1;
        L.stream = 0;
        if (bind_matrix(&L, &m->pe_model_proj, "per_layer_model_proj.weight", c->n_embd, pe_width, 1) != 0) return -1;
        pack_matrix(&L, &m->pe_model_proj);
        side_matrix(&L, &m->pe_model_proj);
        const GgmlTypeInfo *ti = ggml_type_info(m->pe_embd.type);
        if (c->n_embd_pe % ti->block_elems != 0) { /* a layer's part of a row starts on a block */
            snprintf(err->msg, sizeof err->msg, "%s: per_layer_token_embd.weight of type %s: rows of %u per layer are not "
                     "whole blocks", g->files[0].path, ti->name, c->n_embd_pe);
            err->status = PITH_UNSUPPORTED;
            return -1;
        }
        m->pe_proj_norm = norms;
        norms += c->n_embd_pe;
        if (bind_values(&L, m->pe_proj_norm, "per_layer_proj_norm.weight", c->n_embd_pe, 1) != 0) return -1;
    }

    char name[96];
    for (uint32_t l = 0; l < c->n_layer; l++) {
        LayerWeights *lw = &m->layers[l];
        ModelConfig lc; /* the layer's widths */
        model_layer_cfg(c, l, &lc);
        L.stream = m->load == LOAD_STREAM && l >= m->resident_layers;
        for (int i = 0; i < LT_COUNT; i++) {
            const LayerTensor *t = &layer_tensors[i];
            if (!model_layer_has(c, l, i)) continue;
            snprintf(name, sizeof name, "blk.%u.%s%s%s", l, t->name, t->suffix[0] ? "." : "", t->suffix);
            void *field = (char *)lw + t->offset;
            uint64_t cols = model_dim(&lc, t->cols), rows = model_dim(&lc, t->rows);
            if (t->matrix) {
                if (bind_matrix(&L, field, name, cols, rows, t->per_expert ? c->n_expert : 1) != 0) return -1;
                if (views_on_groups(c, i, KERN_PACK_ROWS)) pack_matrix(&L, field);
                if (views_on_groups(c, i, KERN_SIDE_ROWS)) side_matrix(&L, field);
            } else {
                float *v = norms;
                norms += cols * rows;
                memcpy(field, &v, sizeof v);
                if (bind_values(&L, v, name, cols, rows) != 0) return -1;
            }
        }
        model_layer_views(c, lw);
        /* the experts' gate and up read one gathered copy of their input (moe.h) */
        if (model_layer_moe(c, l) && kern_act_format(lw->gate_exps.type) != kern_act_format(lw->up_exps.type)) {
            snprintf(err->msg, sizeof err->msg, "%s: blk.%u: ffn_gate_exps and ffn_up_exps of types that quantize "
                     "their input differently are not supported", g->files[0].path, l);
            err->status = PITH_UNSUPPORTED;
            return -1;
        }
    }
    port_progress_end();
    return 0;
}

/* ---- --load stream's sizes ---------------------------------------------- */

uint64_t model_stream_bytes(const ModelConfig *cfg, const ModelOptions *opt, ModelStreamParts *parts)
{
    ModelStreamParts p;
    memset(&p, 0, sizeof p);
    /* Every size here is bounded by the weights' bytes, whose sum
     * model_read_config checked against overflow; batch <= MODEL_MAX_BATCH. */
    uint64_t row = arena_round(cfg->out_row_bytes);
    p.slot_bytes = cfg->stream_layer_bytes > row ? cfg->stream_layer_bytes : row;
    uint64_t rows = cfg->out_row_bytes ? p.slot_bytes / cfg->out_row_bytes : 1;
    if (rows > cfg->n_vocab) rows = cfg->n_vocab;
    if (rows < 1) rows = 1;
    p.out_chunk_rows = (uint32_t)rows;
    p.n_out_chunks = (uint32_t)((cfg->n_vocab + rows - 1) / rows);
    p.embd_bytes = arena_round((uint64_t)opt->batch * cfg->embd_row_bytes);
    p.min_bytes = 2 * p.slot_bytes + p.embd_bytes;
    if (opt->stream_window > p.min_bytes && cfg->stream_layer_bytes > 0) {
        uint64_t fit = (opt->stream_window - p.min_bytes) / cfg->stream_layer_bytes;
        p.resident_layers = (uint32_t)(fit < cfg->n_layer ? fit : cfg->n_layer);
    }
    p.resident_bytes = (uint64_t)p.resident_layers * cfg->stream_layer_bytes;
    p.total = p.min_bytes + p.resident_bytes;
    p.read_per_step = (uint64_t)opt->batch * cfg->embd_row_bytes;
    if ((cfg->n_layer - p.resident_layers) + p.n_out_chunks > 2) /* else the two slots keep them (unit()) */
        p.read_per_step += (uint64_t)(cfg->n_layer - p.resident_layers) * cfg->stream_layer_bytes +
                           (uint64_t)cfg->n_vocab * cfg->out_row_bytes;
    if (parts) *parts = p;
    return p.total;
}

int model_default_threads(LoadMode load, int cores)
{
    if (cores < 1) cores = 1;
    return load == LOAD_STREAM && cores > 1 ? cores - 1 : cores;
}
