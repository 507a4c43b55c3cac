/* This folder: src/kernels/ - what pith computes with each weight type, one
 * row each (type_table.c: activation format, reference decode, dot and
 * writer; the block codecs in ref/quant.c) and the matmul and attention
 * kernels per instruction set, chosen at run time (kernels.c): ref/ plain
 * C, x86/ AVX2 and AVX-512, arm/ NEON, dotprod, i8mm, FP16 and armv7; each
 * subfolder's private header (x86/kernels_x86.h, arm/kernels_arm.h)
 * declares what its files share. May call src/arena/, src/base/ and port/
 * (CPU features). */
/* kernels.h - the inner loops of a matmul, per weight type, with the code
 * path chosen at run time from the CPU's features.
 *
 * A matmul out[t][r] = W[r] . x[t] runs in three steps (forward.c):
 *
 *   1. kern_act_format(type) says (from the type's row, type_table.c) what
 *      the activations must look like for weights of `type` (as llama.cpp
 *      does, so integer dot products do the work and the results stay
 *      within the fixtures' QUANT class):
 *        KERN_ACT_Q8_0  blocks of QK8_0 (32, KernQ8_0) for Q4_0 Q4_1 Q5_0 Q5_1 Q8_0 IQ4_NL
 *        KERN_ACT_Q8_K  blocks of QK_K (256, KernQ8_K)  for Q2_K Q3_K Q4_K Q5_K Q6_K IQ4_XS
 *        KERN_ACT_F32   plain floats             for F32 F16 BF16
 *      Float weights keep float activations: the F32 class (1e-4 of the
 *      largest logit) leaves no room for rounding activations to 16 bits, and
 *      for F16/BF16 weights float activations are exact up to summation order
 *      (F16 class 5e-3, mean KL 1e-5: well inside). The conversion of the
 *      16-bit weights is the only rounding-free extra work. (On CPUs with
 *      F16 arithmetic the F16 kernel rounds them to F16 itself, as
 *      llama.cpp does: KernelSet.f16_in_half.)
 *   2. kern_quantize_act(type, x, out, n) converts one token's n floats into
 *      that format (n a multiple of the block). Do it once per matrix input
 *      and share it among the matrices reading the same input (q, k, v).
 *      Every code path gives the same bytes (same rounding: x * (1/d) to the
 *      nearest, ties to even), so paths differ only in float summation order.
 *   3. kern_matmul(...) computes rows r0..r1 of W for n_tok tokens. If the
 *      set has a multi-row kernel for the type (KernelSet.rows: eight rows
 *      per vector, x86/kernels_x86_rows.c), that does the whole job. Otherwise
 *      it tiles rows so a tile of weights stays in cache while every token
 *      of the chunk passes over it, and calls the type's multi-token dot (up
 *      to KERN_MAX_NT tokens per call, each weight block decoded once for all).
 *
 * Determinism contract, which every code path must keep: a token's result
 * depends only on its own activation and the weight row, never on how many
 * other tokens share the call or the chunk, nor on the thread split. So a
 * prompt fed in chunks and the same tokens fed one at a time give bitwise
 * the same logits (tests/test_forward.c checks this).
 *
 * Adding a code path (e.g. NEON in arm/kernels_arm.c): its files go in the
 * folder of its instruction set (ref/, x86/, arm/; what they share is
 * declared in that folder's private header, kernels_x86.h or
 * kernels_arm.h, not in the .c files), fill a KernelSet with the functions
 * you have (NULL entries fall back to the reference), return it from
 * kern_arm() when port_cpu() says the CPU can run it, and add a test row in
 * tests/test_kernels.c (it compares every non-NULL entry of every available
 * set with the reference: integer block sums exactly, floats within the
 * bound stated there). Weight types are the GgmlType values
 * (src/base/ggml_type.h) and block facts its QK8_0, QK_K and block structs,
 * never a file's own numbering or literals. */
#ifndef PITH_KERNELS_H
#define PITH_KERNELS_H

#include <stdint.h>

#include "../base/ggml_type.h"
#include "quant.h"

typedef enum { KERN_ACT_F32 = 0, KERN_ACT_Q8_0 = 1, KERN_ACT_Q8_K = 2 } KernActFormat;

/* Activation block of QK8_0 (32): x[i] ~ d * q[i]; sum = q[0] + ... +
 * q[31] (for the types with an offset: Q4_0's -8, Q4_1's min, ...). q in
 * [-127, 127]. */
typedef struct {
    float d;
    int32_t sum;
    int8_t q[QK8_0];
} KernQ8_0;

/* Activation block of QK_K (256): x[i] ~ d * q[i]; bsum[j] = sum of
 * q[16j .. 16j+15]. */
typedef struct {
    float d;
    int16_t bsum[QK_K / 16];
    int8_t q[QK_K];
} KernQ8_K;

#define KERN_MAX_NT 8 /* tokens per multi-token dot call */

/* Worst relative error of F16 arithmetic (KernelSet.f16_in_half): 2^-11 for
 * rounding an activation plus 2^-11 for each of the 8 F16 multiply-adds of a
 * lane's run, relative to the sum of |terms| (rounding to nearest). */
#define KERN_HALF_BOUND (9.0 / 2048.0)

/* One weight row of n elements against nt (1..KERN_MAX_NT) activations:
 * token t's activation starts at (const uint8_t *)act + t * act_stride,
 * its result goes to out[t * out_stride]. */
typedef void KernDotFunc(uint64_t n, const uint8_t *row, const void *act, uint64_t act_stride, int nt, float *out,
                         uint64_t out_stride);
typedef KernDotFunc *KernDotFn;

/* What pith computes with a weight type, one row per type (type_table.c):
 * the activation format its kernels take, its reference decoder and
 * reference dot (faster ones sit in a KernelSet), its writer (NULL where
 * pith does not write the type). Its block layout and size are the file's
 * facts (src/base/ggml_type.h). */
typedef struct {
    KernActFormat act_format;
    QuantDecodeFn *decode;     /* ref/quant.c */
    KernDotFunc *ref_dot;      /* ref/kernels_ref.c */
    QuantQuantizeFn *quantize; /* ref/quant.c */
} KernTypeOps;
/* The row of type t; NULL where pith does not compute with t (model_load
 * refuses its tensors). */
const KernTypeOps *kern_type_ops(uint32_t t);

/* Rows [0, nrows) of a matrix (row r at w + r * row_bytes, n elements)
 * against nt >= 1 activations laid out as for KernDotFn:
 * out[t * out_stride + r] = W[r] . act_t. A path that computes several rows
 * together (one per vector lane) offers this for a type; it must keep the
 * determinism contract above for every row, whatever rows and tokens share
 * the call, and its one-token results must be those of its prompt chunks. */
typedef void KernRowsFunc(uint64_t n, const uint8_t *w, uint64_t row_bytes, uint64_t nrows, const void *act,
                          uint64_t act_stride, int nt, float *out, uint64_t out_stride);
typedef KernRowsFunc *KernRowsFn; /* the function type declares a set's entries, the pointer fills the set */

/* Weights repacked in place (kern_pack; only where the active set has a
 * kernel for them: KernelSet.packed, the A76's dotprod set and x86's
 * AVX-512 VNNI set, for Q8_0 and Q4_0): each group of KERN_PACK_ROWS rows
 * keeps its bytes (4 x row_bytes) but holds its rows' blocks interleaved, block by block: the four rows' F16
 * scales (8 bytes), then Q8_0: 8 vectors of 16 bytes, vector j = bytes
 * 4j..4j+3 of the codes of rows 0..3; Q4_0: 4 vectors, vector j = bytes
 * 4j..4j+3 of the nibbles of rows 0..3 (low nibble element 4j+k, high
 * 16+4j+k). One SDOT by element then gives four rows' sums in four lanes and
 * one load the four scales. A matrix is packed only if its rows are a
 * multiple of KERN_PACK_ROWS. Rows [r0, r1) of a packed matrix (any r0, r1;
 * w is the matrix's first row), the rest as KernRowsFn, each row's result
 * the same bits as the set's rows[] kernel gives on the file's layout. */
#define KERN_PACK_ROWS 4
typedef void KernPackedFunc(uint64_t n, const uint8_t *w, uint64_t row_bytes, uint64_t r0, uint64_t r1,
                            const void *act, uint64_t act_stride, int nt, float *out, uint64_t out_stride);
typedef KernPackedFunc *KernPackedFn;

/* Mapped weights with their scales copied beside them (kern_side_fill; only
 * where the active set has a kernel for it: KernelSet.sided, the A76's Q8_0
 * and Q4_0 under --load mmap, where the file cannot be repacked): the file
 * keeps its layout, and the copy holds, for each group of KERN_SIDE_ROWS
 * rows and each block, the group's F16 scales in a row (16 bytes), so that
 * a block of eight rows takes its scales in one load instead of eight.
 * side[(g * nb + b) * KERN_SIDE_ROWS + i]: row g * KERN_SIDE_ROWS + i, block
 * b of nb. Only for rows a multiple of KERN_SIDE_ROWS. Rows [r0, r1) (any;
 * w is the matrix's first row, side its copy), the rest as KernRowsFn, each
 * row's result the same bits as the set's rows[] kernel gives. */
#define KERN_SIDE_ROWS 8
typedef void KernSidedFunc(uint64_t n, const uint8_t *w, uint64_t row_bytes, uint64_t r0, uint64_t r1,
                           const uint16_t *side, const void *act, uint64_t act_stride, int nt, float *out,
                           uint64_t out_stride);
typedef KernSidedFunc *KernSidedFn;

typedef struct {
    const char *name;
    KernDotFn dot[GGML_TYPE_COUNT];                      /* NULL: the reference */
    KernRowsFn rows[GGML_TYPE_COUNT];                    /* NULL: row by row with dot */
    KernPackedFn packed[GGML_TYPE_COUNT];                /* NULL: weights of this type stay in the file's layout */
    KernSidedFn sided[GGML_TYPE_COUNT];                  /* NULL: mapped weights of this type need no copy of their scales */
    /* 1: the planner still maps before it reads where this set packs (x86,
     * whose read mode stays opt-in: docs/performance-x86.md, "Why mmap stays the default on x86");
     * 0: it reads first (the boards, the A76) */
    int map_first;
    /* rows[GGML_TYPE_F16] multiplies in F16 (arm/kernels_arm_fp16.c, CPUs with
     * FEAT_FP16): activations rounded to F16 as llama.cpp does, sums of 8
     * products per lane in F16 (the bound allows 32), so a result is within
     * KERN_HALF_BOUND x sum |terms| of the reference instead of 1e-5. */
    int f16_in_half;
    void (*quantize_q8_0)(const float *x, KernQ8_0 *out, uint64_t n);
    void (*quantize_q8_k)(const float *x, KernQ8_K *out, uint64_t n);
    /* attention over the KV cache: q . k and out += a * v, k and v F16 or F32 */
    float (*dot_f16)(const uint16_t *k, const float *q, uint32_t n);
    void (*axpy_f16)(float *out, float a, const uint16_t *v, uint32_t n);
    float (*dot_f32)(const float *k, const float *q, uint32_t n);
    void (*axpy_f32)(float *out, float a, const float *v, uint32_t n);
    /* ... and k, v in Q8_0 blocks (BlockQ8_0: f16 d, int8 c[QK8_0]; n a
     * multiple of QK8_0): q . k = sum over blocks of d * (sum c[j] * q[j]),
     * q kept in float; out[j] += (a * d) * c[j]. */
    float (*dot_q8_0_f32)(const uint8_t *k, const float *q, uint32_t n);
    void (*axpy_q8_0)(float *out, float a, const uint8_t *v, uint32_t n);
    /* n floats to F16 (the KV cache), bit for bit as quant_f32_to_f16:
     * round to nearest even, NaN quiet with its top mantissa bits */
    void (*to_f16)(uint16_t *out, const float *x, uint32_t n);
    /* the feed-forward gate: g[i] = silu(g[i]) * u[i], silu(x) = x / (1 + e^-x)
     * (the reference with libm's expf, a fast path within 1e-6 relative) */
    void (*silu_mul)(float *g, const float *u, uint64_t n);
    /* RMSNorm: out[i] = (x[i] * s) * w[i], s = (float)(1 / sqrt(ss / n + eps)),
     * ss the sum of squares in double: element i in running sum i % 4 (the
     * last n % 4 in sum 0), ss = (sum 0 + sum 1) + (sum 2 + sum 3). Every set
     * gives the reference's bits (a float's square is exact in double). out
     * may be x. */
    void (*rmsnorm)(float *out, const float *x, const float *w, uint64_t n, float eps);
    /* RoPE of one head's n_rot first elements: pair i < n_rot / 2 is (v[2i],
     * v[2i+1]), or (v[i], v[i + n_rot/2]) when neox, turned by c = cs[2i],
     * s = cs[2i+1]: (x0, x1) -> (x0 c - x1 s, x0 s + x1 c), each product
     * rounded, then the sum (no fused multiply-add): every set gives the
     * reference's bits. */
    void (*rope)(float *v, uint32_t n_rot, const float *cs, int neox);
    /* attention's softmax: s[i] = e^(s[i] - mx), returns the sum in double
     * (the reference with libm's expf, a fast path within 1e-6 relative) */
    double (*exp_sum)(float *s, uint32_t n, float mx);
    /* a block's scores scaled and their largest (kern_attention): s[i] *=
     * scale, returns the largest of mx and the s[i], a NaN s[i] not counted
     * (as `if (s[i] > mx) mx = s[i]`; a zero's sign may differ, which
     * e^(s - mx) does not see) */
    float (*scale_max)(float *s, uint32_t n, float scale, float mx);
    /* F16 KV cache, many positions, and the queries of nt tokens times the
     * nq query heads sharing a KV head per call (optional: NULL = row by
     * row). Query (t, i), t < nt, i < nq, is q + t * q_tstride + i * q_stride
     * and sees positions p < rows[t] (rows 0, 1, ... of k or v: a prompt's
     * tokens share the first ones). Its scores are row u = t * nq + i:
     *   out[u * out_stride + p] = dot_f16(k + p * stride, q_(t,i), n)
     * bit for bit; and with o_(t,i) = out + t * out_tstride + i * out_stride,
     * o_(t,i)[j] += w[u * w_stride + p] * v_p[j] for p = 0, 1, ... in order,
     * as axpy_f16 row after row (v_p = v + p * stride), bit for bit: the rows
     * are read once for all the queries that see them. */
    void (*dots_f16)(const uint16_t *k, uint64_t stride, uint32_t n, const float *q, uint64_t q_stride, uint32_t nq,
                     uint64_t q_tstride, uint32_t nt, const uint32_t *rows, float *out, uint64_t out_stride);
    void (*wsum_f16)(float *out, uint64_t out_stride, uint64_t out_tstride, const float *w, uint64_t w_stride,
                     uint32_t nq, uint32_t nt, const uint32_t *rows, const uint16_t *v, uint64_t stride, uint32_t n);
    /* The operations of the newer architectures (issue 16; the fast ones in
     * x86/kernels_ops_x86.c and arm/kernels_ops_arm.c):
     * Gemma's GELU gate as ggml computes it: g[i] = gelu(g[i]) * u[i] with
     * gelu(x) = 0 for x <= -10, x for x >= 10, else table[f16 bits of x]
     * (kern_gelu_table: the tanh form of each F16 input rounded to F16).
     * Every set gives the bits of kern_gelu_f16's formula, whatever the split. */
    void (*gelu_mul)(float *g, const float *u, uint64_t n, const uint16_t *table);
    /* One token's step of a gated DeltaNet head (src/model/deltanet.c), its
     * state kept as fd * T (T: dk rows of dk at S, already decayed into fd):
     *   kq = k.q; for each row r: delta = (v[r] - fd (T_r.k)) beta,
     *   o[r] = (fd (T_r.q) + delta kq) scale (T_r before the update),
     *   T_r += (delta / fd) k.
     * Sums in any order (within 1e-5 of sum |terms| of the reference). */
    void (*delta_step)(float *S, uint32_t dk, const float *q, const float *k, const float *v, float beta, float fd,
                       float scale, float *o);
    /* A causal convolution of K taps over channels [0, n) (Qwen3.5's
     * DeltaNet layers): hist holds the last K - 1 inputs, row j (oldest
     * first) at hist + j * hist_stride; w is [n][K];
     *   out[c] = 0 + hist_0[c] w[c][0] + ... + hist_{K-2}[c] w[c][K-2] + x[c] w[c][K-1]
     * added in that order, each product rounded (no fused multiply-add, as
     * ggml_ssm_conv), so every set gives the reference's bits; then the rows
     * move up one and x becomes the last. */
    void (*causal_conv)(float *out, float *hist, uint64_t hist_stride, const float *x, const float *w, uint32_t K,
                        uint64_t n);
    /* The chunked DeltaNet recurrence's two building blocks (kern_delta_chunk),
     * over vectors of n floats, m of them at v, v + stride, ...:
     *   dots_f32: out[i] = x . v_i          mix_f32: out += sum_i c[i] v_i
     * sums in any order (within 1e-5 of sum |terms| of the reference). */
    void (*dots_f32)(const float *x, const float *v, uint64_t stride, uint32_t m, uint32_t n, float *out);
    void (*mix_f32)(float *out, const float *c, const float *v, uint64_t stride, uint32_t m, uint32_t n);
    /* 1: kern_delta_chunk with this set's dots_f32 and mix_f32 takes fewer
     * instructions than its delta_step token after token (src/model/
     * deltanet.c chooses by it; docs/kernels.md). The reference: 0. */
    int delta_chunk;
} KernelSet;

/* A DeltaNet head's state S = f T (T: dk rows of dk) whose factor f has
 * fallen below this is multiplied into T's rows (src/model/deltanet.c). */
#define KERN_DELTA_FLOOR 0x1p-24f
/* The most tokens kern_delta_chunk takes at once. */
#define KERN_DELTA_CHUNK 64

/* n tokens (1 <= n <= KERN_DELTA_CHUNK) of one gated DeltaNet head at once,
 * the chunked (WY) form of n delta_steps, with the set's dots_f32 and
 * mix_f32 (ref/kernels_ref.c): token i has q_i, k_i, v_i at q, k, v + i *
 * stride, its decay d[i] and beta[i]; S, *f the state (as delta_step's T,
 * f), updated; o_i at o + i * o_stride = (S_i q_i) scale, S_i the state
 * after token i. v is overwritten (with each token's correction delta).
 * Equal to the n steps but for rounding. */
void kern_delta_chunk(const KernelSet *ks, float *S, float *f, uint32_t dk, uint32_t n, const float *q,
                      const float *k, float *v, uint64_t stride, const float *d, const float *beta, float scale,
                      float *o, uint64_t o_stride);

/* Attention over the KV cache in tiles (kernels_attention.c): the queries of
 * nt tokens times the nq query heads sharing a KV head (nq * nt <=
 * KERN_ATT_ROWS) against blocks of keys, with an online softmax: per block,
 * the scores (the set's dots_f16 for F16 rows, else dot row by row), scaled;
 * the running largest score m and sum of exponentials l (exp_sum, in double),
 * the output so far multiplied by e^(m_old - m_new) when m grows; the block's
 * weighted values added (wsum_f16, else axpy). So no row of scores longer
 * than a block is needed, and a block's rows are read once for the whole
 * tile. Blocks end at positions that are multiples of KERN_ATT_KEYS and where
 * a run ends, so a query's result does not depend on which other queries
 * share its tile (the determinism contract above). Query (t, i) is at q + t *
 * q_tstride + i * q_stride, its output (overwritten) at out + t * out_tstride
 * + i * out_stride; it sees the positions of the runs below ends[t]. */
#define KERN_ATT_KEYS 64
#define KERN_ATT_ROWS 64
typedef struct {
    GgmlType type;                 /* of the cache rows: F32, F16 or Q8_0 */
    uint64_t krow, vrow;           /* bytes of a key row, of a value row */
    uint32_t dk, dv, nq;           /* head sizes; query heads per KV head */
    float scale;                   /* of the scores */
    const float *q;
    uint64_t q_stride, q_tstride;  /* floats */
    float *out;
    uint64_t out_stride, out_tstride;
} KernAttTile;
/* Rows of consecutive positions pos0 .. pos0 + n - 1 (a window's ring holds
 * up to two such runs). */
typedef struct {
    const uint8_t *k, *v;
    uint32_t pos0, n;
} KernAttRun;
/* scratch: nq * nt * KERN_ATT_KEYS floats */
void kern_attention(const KernelSet *ks, const KernAttTile *a, uint32_t nt, const uint32_t *ends,
                    const KernAttRun *runs, int n_runs, float *scratch);

/* GELU's table for gelu_mul (ref/kernels_ref.c): entry h = kern_gelu_f16(h)
 * for all 65536 F16 values h, KERN_GELU_TABLE entries (one of padding so a
 * 32-bit gather may read past the last). kern_gelu_f16 is the definition,
 * as ggml's table: the input F16 h, 0.5 h (1 + tanh(sqrt(2/pi) h (1 +
 * 0.044715 h^2))) with libm's tanhf, rounded to F16. */
#define KERN_GELU_TABLE 65537
void kern_gelu_table(uint16_t *table);
uint16_t kern_gelu_f16(uint16_t h);

/* The sets. kern_ref() always exists; the others return NULL when this
 * build or this CPU cannot run them. */
const KernelSet *kern_ref(void);  /* plain C, every type: ref/kernels_ref.c's functions, dot[] each type
                                     row's ref_dot (assembled in kernels.c) */
/* ref/kernels_ref.c: every entry of the reference set but dot[] (kern_ref), and
 * its activation quantizers on their own (for the other sets' tails). */
void kern_ref_fill(KernelSet *set);
void kern_ref_quantize_q8_0(const float *x, KernQ8_0 *out, uint64_t n);
void kern_ref_quantize_q8_k(const float *x, KernQ8_K *out, uint64_t n);
void kern_ref_causal_conv(float *out, float *hist, uint64_t hist_stride, const float *x, const float *w, uint32_t K,
                          uint64_t n); /* the fast sets' fallback for their tails */
const KernelSet *kern_x86(void);  /* x86/kernels_x86.c: AVX2 + FMA + F16C */
const KernelSet *kern_arm(void);  /* arm/kernels_arm.c: NEON (dotprod) */
/* x86/kernels_x86_rows.c: fills the rows[] entries of the AVX2 set; with
 * wide = 1 and a CPU with AVX-512 VNNI, the 32-row kernels where it
 * has them (then returns 1). Tests call it with 0 and 1 to compare both. */
int kern_x86_rows(KernRowsFn *rows, KernPackedFn *packed, int wide);
/* x86/kernels_x86_att.c: on a CPU with AVX-512, its dots_f16 and wsum_f16
 * into set (the same bits as the AVX2 set's, twice as wide) */
void kern_x86_att_wide(KernelSet *set);

/* Chooses the fastest set this CPU runs (the first call does it, with
 * KERN_BEST), or forces the reference (tests, `pith bench --ref`), or the
 * best without the AVX-512 kernels (`pith bench --no-avx512`: the AVX2
 * path measured on a CPU that has both). */
enum { KERN_BEST = 0, KERN_REFERENCE = 1, KERN_NO_AVX512 = 2 };
void kern_select(int mode);
/* The set in use: every entry filled (missing ones from the reference). */
const KernelSet *kern_active(void);

/* The type's row's act_format (KERN_ACT_F32 for a type pith does not compute with). */
KernActFormat kern_act_format(uint32_t type);
/* Block of the activation format (elements) and bytes of n elements in it. */
uint32_t kern_act_block(KernActFormat f);
uint64_t kern_act_bytes(KernActFormat f, uint64_t n);

/* Step 2: out receives kern_act_bytes(kern_act_format(type), n) bytes
 * (for KERN_ACT_F32, a copy of x). */
void kern_quantize_act(uint32_t type, const float *x, void *out, uint64_t n);

/* One weight row against one activation. */
float kern_vec_dot(uint32_t type, uint64_t n, const uint8_t *row, const void *act);

/* Step 3: for r in [r0, r1) and t in [0, n_tok):
 *   out[t * out_stride + r] = W[r] . act_t,
 * W[r] at w + r * row_bytes with n elements; act_t at act + t * act_stride. */
void kern_matmul(uint32_t type, const uint8_t *w, uint64_t row_bytes, uint64_t n, uint64_t r0, uint64_t r1,
                 const void *act, uint64_t act_stride, int n_tok, float *out, uint64_t out_stride);

/* Packing (the layout above). kern_pack_wanted: the active set reads
 * packed weights of this type and a matrix of `rows` can be packed.
 * kern_pack: rows (a multiple of KERN_PACK_ROWS) at w repacked in place,
 * scratch: KERN_PACK_ROWS x row_bytes of memory to use (left as found if it
 * was zero: cleared after use). kern_unpack_row: row r of a packed matrix
 * in the file's layout into out (row_bytes); kern_dequant_packed_row: as floats.
 * kern_matmul_packed: as
 * kern_matmul, on a packed matrix (with the set's kernel; sets without one,
 * e.g. a set chosen after loading, compute the reference's formula, the
 * same bits as the reference dot). */
int kern_pack_wanted(uint32_t type, uint64_t rows);
void kern_pack(uint32_t type, uint8_t *w, uint64_t row_bytes, uint64_t rows, uint8_t *scratch);
void kern_unpack_row(uint32_t type, const uint8_t *w, uint64_t row_bytes, uint64_t r, uint8_t *out);
/* row r of a packed matrix as floats (the embeddings of a packed token_embd) */
void kern_dequant_packed_row(uint32_t type, const uint8_t *w, uint64_t row_bytes, uint64_t r, float *out);
void kern_matmul_packed(uint32_t type, const uint8_t *w, uint64_t row_bytes, uint64_t n, uint64_t r0, uint64_t r1,
                        const void *act, uint64_t act_stride, int n_tok, float *out, uint64_t out_stride);

/* The scales' copy (the layout above). kern_side_bytes: its size for a
 * matrix of this type and shape, 0 where the active set reads the type
 * without one or the rows are not a multiple of KERN_SIDE_ROWS.
 * kern_side_fill: the copy of the rows at w into side. kern_matmul_sided:
 * as kern_matmul, with the copy (the set's kernel; a set without one reads
 * the file's layout alone: kern_matmul). */
uint64_t kern_side_bytes(uint32_t type, uint64_t rows, uint64_t n);
void kern_side_fill(uint32_t type, const uint8_t *w, uint64_t row_bytes, uint64_t rows, uint16_t *side);
void kern_matmul_sided(uint32_t type, const uint8_t *w, uint64_t row_bytes, uint64_t n, uint64_t r0, uint64_t r1,
                       const uint16_t *side, const void *act, uint64_t act_stride, int n_tok, float *out,
                       uint64_t out_stride);

/* The reference dots the type table (type_table.c) names, from
 * ref/kernels_ref.c (f32w and so on: float weights, unlike the KV cache's
 * dot_f32). */
KernDotFunc kern_ref_dot_f32w, kern_ref_dot_f16w, kern_ref_dot_bf16w, kern_ref_dot_q8_0, kern_ref_dot_q4_0,
    kern_ref_dot_q4_1, kern_ref_dot_q5_0, kern_ref_dot_q5_1, kern_ref_dot_iq4_nl, kern_ref_dot_q2_k, kern_ref_dot_q3_k,
    kern_ref_dot_q4_k, kern_ref_dot_q5_k, kern_ref_dot_q6_k, kern_ref_dot_iq4_xs;

#endif
