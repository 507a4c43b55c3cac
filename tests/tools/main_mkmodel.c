/* mkmodel - writes a random Qwen3-, Qwen2-, llama-, SmolLM3-, Phi-3-, Gemma 3-, LFM2-, Qwen3.5- or
 * mixture-of-experts (Qwen3-MoE, LFM2-MoE) architecture GGUF model.
 *
 *   mkmodel OUT [--arch qwen3|qwen2|llama|mistral3|smollm3|phi3|gemma3|lfm2|qwen35|qwen3moe|lfm2moe|qwen35moe]
 *               [--layers N] [--embd N] [--ff N]
 *               [--heads N] [--kv-heads N] [--head-dim N] [--vocab N] [--ctx N]
 *               [--type f32|f16|bf16|q8_0|q4_0|q4_k|q6_k|q4_k_m]
 *               [--seed S] [--tied|--untied] [--version 2|3] [--split N]
 *               [--rope-dim N] [--rope-freqs] [--rope-factors ORIG_CTX] [--bias]
 *               [--window N] [--swa-pattern P] [--softcap C] [--attn-layers L,L,...] [--conv-l N]
 *               [--rope-linear F]
 *               [--ssm-kheads N] [--ssm-vheads N] [--ssm-state N] [--ssm-conv N] [--full-attn N]
 *               [--recurrent-layers] [--mtp N] [--pre NAME]
 *               [--experts N] [--experts-used K] [--ff-exp N] [--dense-lead N] [--gating 1|2]
 *               [--template-from FILE] [--template-file JINJA] [--tokenizer-from FILE]
 *
 * Metadata and tensor names/shapes are those of llama.cpp's GGUFs: qwen3 has
 * per-head q/k norms, qwen2 q/k/v biases (llama too with --bias), llama
 * rotates adjacent pairs. --rope-dim writes rope.dimension_count (pith, like
 * llama.cpp, refuses one other than the head dimension); --rope-freqs adds a random rope_freqs.weight
 * (Llama 3.x frequency factors, in [1, 5]). phi3 fuses q/k/v (attn_qkv) and
 * gate/up (ffn_up, gate first); --rope-factors ORIG writes Phi-3's LongRoPE:
 * rope_factors_short/long.weight, rope.scaling.original_context_length ORIG
 * and the attention factor the converter derives from --ctx / ORIG.
 * smollm3 is written like llama (its RoPE-less layers are a rule of the
 * architecture, not a key). gemma3 has qwen3's q/k norms and norms after
 * attention and the FFN; --window N writes attention.sliding_window (and
 * rope.freq_base_swa 10000), --swa-pattern P the pattern key (else
 * llama.cpp's default 6), --softcap C final_logit_softcapping;
 * --rope-linear F writes rope.scaling.type linear and rope.scaling.factor F
 * (any architecture; Gemma 3 4B-27B have factor 8). lfm2 has
 * short-convolution layers (shortconv.conv/in_proj/out_proj, kernel of
 * --conv-l taps, default 3) except the attention layers of --attn-layers
 * (default LFM2-350M's 2,5,8,10,12,14 below --layers), which have qwen3's
 * q/k norms; head_count_kv is then a per-layer array (0: convolution), and
 * the final norm is token_embd_norm.
 * qwen35 (Qwen3.5) makes every --full-attn-th layer (4) attention with q
 * and an output gate per head, q/k norms and partial RoPE (give --rope-dim;
 * rope.dimension_sections as Qwen3.5's [11, 11, 10, 0], scaled), the others
 * gated DeltaNet layers of --ssm-kheads key and --ssm-vheads value heads
 * of --ssm-state (4, 4, 128) and a convolution of --ssm-conv (4);
 * --recurrent-layers writes the attention.recurrent_layers array too.
 * --yarn F writes YaRN scaling by F over --yarn-orig N positions (default
 * the context / F); with mistral3 also its beta_fast 32, beta_slow 1 and
 * --yarn-log-mul M (0); --attn-temp S writes attention.temperature_scale.
 * --mtp N adds N multi-token prediction blocks after the trunk, as current
 * llama.cpp's converter keeps them (block_count counts them,
 * nextn_predict_layers says how many).
 * qwen3moe is qwen3 with every FFN a mixture of --experts (8) experts of
 * --ff-exp (--ff) of which --experts-used (2) are used: a router
 * ffn_gate_inp (F32, as llama.cpp's quantizer leaves it) and the experts'
 * 3-D ffn_gate_exps/ffn_up_exps/ffn_down_exps; lfm2moe is lfm2 with the
 * first --dense-lead (2) layers dense and then experts with a selection
 * bias exp_probs_b, gated by --gating (2: sigmoid; 1: softmax); qwen35moe
 * is qwen35 with qwen3moe's experts plus a shared expert of --ff
 * (ffn_*_shexp) weighed by the sigmoid of ffn_gate_inp_shexp.
 * --pre NAME writes tokenizer.ggml.pre NAME (default qwen2); with qwen35
 * the self-made vocabulary also spells a few words with combining marks.
 * Weights are uniform in +-1/sqrt(fan_in) (norm weights near 1), so
 * activations stay sane. The vocabulary is a self-made byte-level BPE:
 * GPT-2's 256 byte tokens, merges spelling a list of common English words
 * (with and without a leading space), then the specials <|endoftext|>,
 * <|im_start|>, <|im_end|>, <think>, </think>, then "<pad_N>" tokens up to
 * --vocab. --tokenizer-from copies every tokenizer.* key of another GGUF
 * instead (e.g. the real Qwen3 vocabulary); --template-from (alias
 * --vocab-from) copies only its tokenizer.chat_template; --template-file
 * writes a text file's contents as the template; --pre NAME writes NAME as
 * tokenizer.ggml.pre instead (of "qwen2" or the copied one). --split N writes
 * OUT (which must end in .gguf) as N files PREFIX-0000k-of-0000N.gguf.
 *
 * --type q4_k_m approximates llama.cpp's Q4_K_M mix: Q4_K everywhere except
 * token_embd (Q6_K) and attn_v/ffn_down of about half the layers (Q6_K):
 * the first and last eighth of the layers and every third one between. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/base/ggml_type.h"
#include "../../src/gguf/gguf.h"
#include "gguf_writer.h"

static const char *const WORDS[] = {
    "the", "of", "and", "to", "in", "is", "it", "you", "that", "he", "was", "for", "on", "are", "with", "as", "his",
    "they", "be", "at", "one", "have", "this", "from", "or", "had", "by", "word", "but", "what", "some", "we", "can",
    "out", "other", "were", "all", "there", "when", "up", "use", "your", "how", "said", "an", "each", "she", "which",
    "do", "their", "time", "if", "will", "way", "about", "many", "then", "them", "write", "would", "like", "so",
    "these", "her", "long", "make", "thing", "see", "him", "two", "has", "look", "more", "day", "could", "go", "come",
    "did", "number", "sound", "no", "most", "people", "my", "over", "know", "water", "than", "call", "first", "who",
    "may", "down", "side", "been", "now", "find", "any", "new", "work", "part", "take", "get", "place", "made", "live",
    "where", "after", "back", "little", "only", "round", "man", "year", "came", "show", "every", "good", "me", "give",
    "our", "under", "name", "very", "through", "just", "form", "sentence", "great", "think", "say", "help", "low",
    "line", "differ", "turn", "cause", "much", "mean", "before", "move", "right", "boy", "old", "too", "same", "tell",
    "does", "set", "three", "want", "air", "well", "also", "play", "small", "end", "put", "home", "read", "hand",
    "port", "large", "spell", "add", "even", "land", "here", "must", "big", "high", "such", "follow", "act", "why",
    "ask", "men", "change", "went", "light", "kind", "off", "need", "house", "picture", "try", "us", "again",
    "animal", "point", "mother", "world", "near", "build", "self", "earth", "father", "Hello", "The", "It", "In",
    "model", "token", "assistant", "user", "system", "question", "answer", "ing", "ed", "er", "ly", "tion", "ment",
};

/* With --pre qwen35: words with combining marks (decomposed café, naïve,
 * Hindi's namaste with its virama and vowel sign), whose merges cross the
 * places where the qwen2 pre-tokenizer, which has no \p{M} in its letter
 * runs, would cut. */
static const char *const MARK_WORDS[] = {
    "cafe\xcc\x81", "nai\xcc\x88ve", "e\xcc\x81", "\xe0\xa4\xa8\xe0\xa4\xae\xe0\xa4\xb8\xe0\xa5\x8d\xe0\xa4\xa4\xe0\xa5\x87",
    "\xcc\x81" "a", "!\xcc\x81",
};

/* The ChatML template llama.cpp writes into converted models: pith
 * recognises it exactly (src/text/chat.c). */
static const char *const DEFAULT_TEMPLATE =
    "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + "
    "'\\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}";

static void die(const char *fmt, const char *arg)
{
    fprintf(stderr, "mkmodel: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\n");
    exit(2);
}

static char *xstrdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (!d) abort();
    memcpy(d, s, n);
    return d;
}

/* ---- a byte-level BPE vocabulary ------------------------------------------- */

typedef struct {
    char **tokens;
    int32_t *types;
    int n_tokens, cap_tokens;
    char **merges;
    int n_merges, cap_merges;
} Vocab;

static void push(char ***arr, int *n, int *cap, char *s)
{
    if (*n == *cap) {
        *cap = *cap ? *cap * 2 : 1024;
        *arr = realloc(*arr, (size_t)*cap * sizeof **arr);
        if (!*arr) abort();
    }
    (*arr)[(*n)++] = s;
}

static void add_token(Vocab *v, const char *s, int32_t type)
{
    int cap = v->cap_tokens;
    push(&v->tokens, &v->n_tokens, &v->cap_tokens, xstrdup(s));
    if (cap != v->cap_tokens) {
        v->types = realloc(v->types, (size_t)v->cap_tokens * sizeof *v->types);
        if (!v->types) abort();
    }
    v->types[v->n_tokens - 1] = type;
}

static int find(char **arr, int n, const char *s)
{
    for (int i = 0; i < n; i++)
        if (strcmp(arr[i], s) == 0) return i;
    return -1;
}

static void utf8_put(char *out, uint32_t cp)
{
    if (cp < 0x80) {
        out[0] = (char)cp, out[1] = 0;
    } else if (cp < 0x800) {
        out[0] = (char)(0xC0 | (cp >> 6)), out[1] = (char)(0x80 | (cp & 0x3F)), out[2] = 0;
    } else {
        out[0] = (char)(0xE0 | (cp >> 12)), out[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        out[2] = (char)(0x80 | (cp & 0x3F)), out[3] = 0;
    }
}

/* GPT-2's byte-to-unicode map: printable bytes stand for themselves, the
 * others become U+0100 + n in byte order. */
static void byte_units(char units[256][4], int order[256])
{
    int n = 0, k = 0;
    for (int b = 0; b < 256; b++)
        if ((b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE)) utf8_put(units[b], (uint32_t)b), order[k++] = b;
    for (int b = 0; b < 256; b++)
        if (!((b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE)))
            utf8_put(units[b], 256u + (uint32_t)n++), order[k++] = b;
}

static void build_vocab(Vocab *v, uint64_t want, int mark_words)
{
    char units[256][4];
    int order[256];
    byte_units(units, order);
    for (int i = 0; i < 256; i++) add_token(v, units[order[i]], 1);
    /* merges spelling each word left to right: "Ġ t" -> "Ġt", "Ġt h" -> "Ġth", ... */
    size_t n_words = sizeof WORDS / sizeof WORDS[0], n_marks = mark_words ? sizeof MARK_WORDS / sizeof MARK_WORDS[0] : 0;
    for (size_t w = 0; w < n_words + n_marks; w++) {
        for (int space = 1; space >= 0; space--) {
            char word[64];
            snprintf(word, sizeof word, "%s%s", space ? " " : "", w < n_words ? WORDS[w] : MARK_WORDS[w - n_words]);
            /* words are short: a unit is at most 2 bytes of UTF-8, so 64 letters fit */
            char cur[160], pair[320], next[160];
            size_t cur_len = strlen(units[(uint8_t)word[0]]);
            memcpy(cur, units[(uint8_t)word[0]], cur_len + 1);
            for (size_t k = 1; word[k]; k++) {
                const char *u = units[(uint8_t)word[k]];
                size_t ul = strlen(u);
                memcpy(pair, cur, cur_len);
                pair[cur_len] = ' ';
                memcpy(pair + cur_len + 1, u, ul + 1);
                memcpy(next, cur, cur_len);
                memcpy(next + cur_len, u, ul + 1);
                if (find(v->merges, v->n_merges, pair) < 0) {
                    push(&v->merges, &v->n_merges, &v->cap_merges, xstrdup(pair));
                    if (find(v->tokens, v->n_tokens, next) < 0) add_token(v, next, 1);
                }
                cur_len += ul;
                memcpy(cur, next, cur_len + 1);
            }
        }
    }
    add_token(v, "<|endoftext|>", 3);
    add_token(v, "<|im_start|>", 3);
    add_token(v, "<|im_end|>", 3);
    add_token(v, "<think>", 4);
    add_token(v, "</think>", 4);
    if (want && want < (uint64_t)v->n_tokens) {
        char msg[64];
        snprintf(msg, sizeof msg, "%d", v->n_tokens);
        die("--vocab must be at least %s (the self-made vocabulary)", msg);
    }
    for (uint64_t i = (uint64_t)v->n_tokens; i < want; i++) {
        char pad[32];
        snprintf(pad, sizeof pad, "<pad_%llu>", (unsigned long long)i);
        add_token(v, pad, 1);
    }
}

/* ---- copying keys from another GGUF ------------------------------------------ */

static const char *pre_name; /* --pre */

typedef struct {
    GgufWriter *w;
    int template_only;
    uint64_t n_vocab;
    int found;
} CopyCtx;

static int copy_kv(void *ctx, Gguf *g, const GgufKV *kv, GgufError *err)
{
    (void)err;
    CopyCtx *c = ctx;
    if (strncmp(kv->key, "tokenizer.", 10) != 0) return 0;
    if (c->template_only && strcmp(kv->key, "tokenizer.chat_template") != 0) return 0;
    if (pre_name && strcmp(kv->key, "tokenizer.ggml.pre") == 0) return 0;
    if (strcmp(kv->key, "tokenizer.ggml.tokens") == 0) c->n_vocab = kv->arr_len;
    if (gw_kv_copy(c->w, g, kv) != 0) die("%s: cannot read a value", g->files[0].path);
    c->found++;
    return 0;
}

static uint64_t copy_tokenizer(GgufWriter *w, const char *path, int template_only)
{
    static Gguf g; /* large: not on the stack */
    GgufError err;
    CopyCtx c = {w, template_only, 0, 0};
    GgufScanCallbacks cb = {copy_kv, NULL, &c};
    if (gguf_open(&g, path, 1, &cb, &err) != 0) die("%s", err.msg);
    gguf_close(&g);
    if (template_only && !c.found) die("%s: no tokenizer.chat_template", path);
    if (!template_only && !c.n_vocab) die("%s: no tokenizer.ggml.tokens", path);
    return c.n_vocab;
}

/* ---- weights -------------------------------------------------------------------- */

typedef struct {
    uint64_t seed;
    float scale, bias; /* value = bias + scale * uniform(-1, 1) */
} Fill;

static void fill_row(void *ctx, uint64_t row, float *out, uint64_t n)
{
    Fill *f = ctx;
    GwRng r = {f->seed ^ (row * 0xD1B54A32D192ED03ull)};
    for (uint64_t i = 0; i < n; i++) out[i] = f->bias + f->scale * gw_rng_uniform(&r);
}

static Fill fills[4096];
static int n_fills;
static char names[4096][64];

static void tensor(GgufWriter *w, uint64_t seed, const char *name, uint64_t ne0, uint64_t ne1, uint32_t type, float scale,
                   float bias)
{
    if (n_fills == 4096) die("%s: too many tensors", name);
    Fill *f = &fills[n_fills];
    GwRng r = {seed + (uint64_t)n_fills * 0x9E3779B97F4A7C15ull};
    f->seed = gw_rng_next(&r);
    f->scale = scale;
    f->bias = bias;
    snprintf(names[n_fills], sizeof names[0], "%s", name);
    uint64_t ne[2] = {ne0, ne1};
    const GgmlTypeInfo *ti = ggml_type_info(type);
    if (ne0 % ti->block_elems != 0) type = GGML_TYPE_F16; /* rows the block type cannot hold */
    gw_tensor_gen(w, names[n_fills], ne1 ? 2 : 1, ne, type, fill_row, f);
    n_fills++;
}

/* A 3-D tensor [ne0, ne1, ne2] (a mixture's experts), filled as ne1 * ne2 rows. */
static void tensor3(GgufWriter *w, uint64_t seed, const char *name, uint64_t ne0, uint64_t ne1, uint64_t ne2,
                    uint32_t type, float scale)
{
    if (n_fills == 4096) die("%s: too many tensors", name);
    Fill *f = &fills[n_fills];
    GwRng r = {seed + (uint64_t)n_fills * 0x9E3779B97F4A7C15ull};
    f->seed = gw_rng_next(&r);
    f->scale = scale;
    f->bias = 0;
    snprintf(names[n_fills], sizeof names[0], "%s", name);
    uint64_t ne[3] = {ne0, ne1, ne2};
    if (ne0 % ggml_type_info(type)->block_elems != 0) type = GGML_TYPE_F16;
    gw_tensor_gen(w, names[n_fills], 3, ne, type, fill_row, f);
    n_fills++;
}

/* Layer l's Qwen3.5 attention (q and its gate per head, k, v, q/k norms,
 * output): the trunk's every full_attn-th layer and an MTP block. */
static void qwen35_attention(GgufWriter *w, uint64_t seed, uint64_t l, uint64_t embd, uint64_t q_dim, uint64_t kv_dim,
                             uint64_t head_dim, uint32_t type, uint32_t type_v)
{
    char t[64];
#define QT(suffix, ne0, ne1, ty, scale, bias)                                  \
    snprintf(t, sizeof t, "blk.%llu.%s.weight", (unsigned long long)l, suffix); \
    tensor(w, seed, t, ne0, ne1, ty, scale, bias);
    QT("attn_q", embd, 2 * q_dim, type, (float)(1.0 / sqrt((double)embd)), 0)
    QT("attn_k", embd, kv_dim, type, (float)(1.0 / sqrt((double)embd)), 0)
    QT("attn_v", embd, kv_dim, type_v, (float)(1.0 / sqrt((double)embd)), 0)
    QT("attn_q_norm", head_dim, 0, GGML_TYPE_F32, 0.1f, 1.0f)
    QT("attn_k_norm", head_dim, 0, GGML_TYPE_F32, 0.1f, 1.0f)
    QT("attn_output", q_dim, embd, type, (float)(1.0 / sqrt((double)q_dim)), 0)
#undef QT
}

/* Gemma 4's rope_freqs (its converter's "proportional" RoPE): the first
 * pairs turn at their frequency (factor 1), the others not at all (1e30). */
static uint64_t g4_rotating_pairs;
static void fill_proportional(void *ctx, uint64_t row, float *out, uint64_t n)
{
    (void)ctx;
    (void)row;
    for (uint64_t i = 0; i < n; i++) out[i] = i < g4_rotating_pairs ? 1.0f : 1e30f;
}

/* Layer l of a gemma4 file: attention of the layer's kind (head size hd,
 * kv_heads), Gemma 3's norms, the FFN of width ff, the per-layer
 * embedding's gate, projection and norm (pe > 0), the output scale. */
static void gemma4_layer(GgufWriter *w, uint64_t seed, uint64_t l, uint64_t embd, uint64_t heads, uint64_t kv_heads,
                         uint64_t hd, uint64_t ff, uint64_t pe, uint32_t type, uint32_t type_vd)
{
    char t[64];
    float fe = (float)(1.0 / sqrt((double)embd));
#define GT(suffix, ne0, ne1, ty, scale, bias)                                  \
    snprintf(t, sizeof t, "blk.%llu.%s.weight", (unsigned long long)l, suffix); \
    tensor(w, seed, t, ne0, ne1, ty, scale, bias);
    GT("attn_norm", embd, 0, GGML_TYPE_F32, 0.1f, 1.0f)
    GT("attn_q", embd, heads * hd, type, fe, 0)
    GT("attn_k", embd, kv_heads * hd, type, fe, 0)
    GT("attn_v", embd, kv_heads * hd, type_vd, fe, 0)
    /* Conditioned as a trained model, not a chaotic one: q.k is not scaled
     * (Gemma 4 relies on its norms' weights), so weights near
     * 0.7 (2 / sqrt(hd))^(1/2) give scores of a spread near 1, where weights
     * near 1 (a spread of sqrt(hd)) make attention a hard choice; the
     * sublayers' post-norms near 0.5 and output scales near 0.95 keep each
     * layer a correction of the residual. Without these, llama.cpp's own
     * logits of a 10-layer F16 file moved by 7e-3 of the largest between
     * batch shapes (rounding flips amplified), outside the F16 class. */
    float qk = 0.7f * (float)sqrt(2.0 / sqrt((double)hd)), post = 0.5f;
    GT("attn_q_norm", hd, 0, GGML_TYPE_F32, 0.1f * qk, qk)
    GT("attn_k_norm", hd, 0, GGML_TYPE_F32, 0.1f * qk, qk)
    GT("attn_output", heads * hd, embd, type, (float)(1.0 / sqrt((double)(heads * hd))), 0)
    GT("post_attention_norm", embd, 0, GGML_TYPE_F32, 0.1f * post, post)
    GT("ffn_norm", embd, 0, GGML_TYPE_F32, 0.1f, 1.0f)
    GT("ffn_gate", embd, ff, type, fe, 0)
    GT("ffn_up", embd, ff, type, fe, 0)
    GT("ffn_down", ff, embd, type_vd, (float)(1.0 / sqrt((double)ff)), 0)
    GT("post_ffw_norm", embd, 0, GGML_TYPE_F32, 0.1f * post, post)
    if (pe) {
        GT("inp_gate", embd, pe, type, 2.0f * fe, 0)
        GT("proj", pe, embd, type, (float)(1.0 / sqrt((double)pe)), 0)
        GT("post_norm", embd, 0, GGML_TYPE_F32, 0.1f * post, post)
    }
    GT("layer_output_scale", 1, 0, GGML_TYPE_F32, 0.03f, 0.95f)
#undef GT
}

/* "<arch>.<suffix>", in a rotating set of buffers (the writer copies keys). */
static const char *key(const char *arch, const char *suffix)
{
    static char bufs[4][96];
    static int next;
    char *b = bufs[next++ % 4];
    snprintf(b, sizeof bufs[0], "%s.%s", arch, suffix);
    return b;
}

static uint64_t arg_u(const char *flag, const char *v)
{
    char *end;
    unsigned long long x = strtoull(v, &end, 10);
    if (!*v || *end || x == 0 || x > (1ull << 32)) die("bad value for %s", flag);
    return x;
}

int main(int argc, char **argv)
{
    const char *out = NULL, *template_from = NULL, *tokenizer_from = NULL, *template_file = NULL;
    uint64_t layers = 2, embd = 64, ff = 192, heads = 4, kv_heads = 2, head_dim = 16, vocab = 0, ctx = 256, seed = 1;
    uint32_t type = GGML_TYPE_F32, version = 3;
    int q4_k_m = 0;
    uint64_t split = 1;
    int tied = 1, rope_freqs = 0, bias = 0;
    uint64_t rope_dim = 0, rope_factors_orig = 0, window = 0, swa_pattern = 0, softcap = 0, rope_linear = 0;
    /* YaRN (Ministral 3: factor 16 over 16384 positions, log multiplier 1, temperature 0.1) */
    uint64_t yarn = 0, yarn_orig = 0, yarn_log_mul = 0;
    double attn_temp = 0;
    const char *attn_layers = "2,5,8,10,12,14";
    uint64_t conv_l = 3;
    /* qwen35: the DeltaNet layers (Qwen3.5-0.8B: 16 key and 16 value heads of 128, kernel 4, attention every 4) */
    uint64_t ssm_kheads = 4, ssm_vheads = 4, ssm_state = 128, ssm_conv = 4, full_attn = 4, recur_array = 0, mtp = 0;
    /* qwen3moe, lfm2moe: experts (Qwen3-30B-A3B: 128 of 768, 8 used; LFM2-8B-A1B: 32 of 1792, 4 used,
     * the first 2 layers dense, sigmoid gating) */
    uint64_t experts = 8, experts_used = 2, ff_exp = 0, dense_lead = 2, gating = 2;
    /* gemma4 (Gemma 4 E2B: 35 layers, 4 windowed of 256 then a global of 512, the last 20 sharing
     * KV with FFNs twice as wide, per-layer embeddings of 256, a quarter of the global pairs rotating) */
    uint64_t head_dim_swa = 0, kv_heads_swa = 0, shared_kv = 0, pe = 0, double_wide = 0, rope_quarter = 1;
    const char *arch = "qwen3";
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
#define NUM(flag, var)                                   \
    if (strcmp(a, flag) == 0) {                          \
        if (!v) die("%s needs a value", a);              \
        var = arg_u(a, v);                               \
        i++;                                             \
        continue;                                        \
    }
        NUM("--layers", layers) NUM("--embd", embd) NUM("--ff", ff) NUM("--heads", heads) NUM("--kv-heads", kv_heads)
        NUM("--head-dim", head_dim) NUM("--vocab", vocab) NUM("--ctx", ctx) NUM("--seed", seed) NUM("--split", split)
        NUM("--rope-dim", rope_dim) NUM("--window", window) NUM("--swa-pattern", swa_pattern) NUM("--softcap", softcap)
        NUM("--rope-linear", rope_linear) NUM("--yarn", yarn) NUM("--yarn-orig", yarn_orig) NUM("--yarn-log-mul", yarn_log_mul)
        if (strcmp(a, "--attn-temp") == 0 && v) {
            char *end;
            attn_temp = strtod(v, &end);
            if (*end || !(attn_temp > 0)) die("--attn-temp: '%s' is not a positive number", v);
            i++;
            continue;
        }
        NUM("--conv-l", conv_l)
        NUM("--ssm-kheads", ssm_kheads) NUM("--ssm-vheads", ssm_vheads) NUM("--ssm-state", ssm_state)
        NUM("--ssm-conv", ssm_conv) NUM("--full-attn", full_attn) NUM("--mtp", mtp)
        NUM("--experts", experts) NUM("--experts-used", experts_used) NUM("--ff-exp", ff_exp)
        NUM("--dense-lead", dense_lead) NUM("--gating", gating)
        NUM("--head-dim-swa", head_dim_swa) NUM("--kv-heads-swa", kv_heads_swa) NUM("--shared-kv", shared_kv)
        NUM("--pe", pe) NUM("--rope-partial", rope_quarter)
        if (strcmp(a, "--double-wide") == 0) {
            double_wide = 1;
            continue;
        }
#undef NUM
        if (strcmp(a, "--version") == 0 && v) {
            version = (uint32_t)arg_u(a, v);
            if (version != 2 && version != 3) die("--version must be 2 or 3%s", "");
            i++;
        } else if (strcmp(a, "--type") == 0 && v) {
            if (strcmp(v, "f32") == 0) type = GGML_TYPE_F32;
            else if (strcmp(v, "f16") == 0) type = GGML_TYPE_F16;
            else if (strcmp(v, "bf16") == 0) type = GGML_TYPE_BF16;
            else if (strcmp(v, "q8_0") == 0) type = GGML_TYPE_Q8_0;
            else if (strcmp(v, "q4_0") == 0) type = GGML_TYPE_Q4_0;
            else if (strcmp(v, "q4_k") == 0) type = GGML_TYPE_Q4_K;
            else if (strcmp(v, "q6_k") == 0) type = GGML_TYPE_Q6_K;
            else if (strcmp(v, "q4_k_m") == 0) type = GGML_TYPE_Q4_K, q4_k_m = 1;
            else die("--type: '%s' is not f32, f16, bf16, q8_0, q4_0, q4_k, q6_k or q4_k_m", v);
            i++;
        } else if ((strcmp(a, "--template-from") == 0 || strcmp(a, "--vocab-from") == 0) && v) {
            template_from = v, i++;
        } else if (strcmp(a, "--template-file") == 0 && v) {
            template_file = v, i++;
        } else if (strcmp(a, "--pre") == 0 && v) {
            pre_name = v, i++;
        } else if (strcmp(a, "--tokenizer-from") == 0 && v) {
            tokenizer_from = v, i++;
        } else if (strcmp(a, "--arch") == 0 && v) {
            if (strcmp(v, "qwen3") != 0 && strcmp(v, "qwen2") != 0 && strcmp(v, "llama") != 0 &&
                strcmp(v, "smollm3") != 0 && strcmp(v, "phi3") != 0 && strcmp(v, "gemma3") != 0 && strcmp(v, "lfm2") != 0 &&
                strcmp(v, "qwen35") != 0 && strcmp(v, "mistral3") != 0 && strcmp(v, "qwen3moe") != 0 &&
                strcmp(v, "lfm2moe") != 0 && strcmp(v, "qwen35moe") != 0 && strcmp(v, "gemma4") != 0)
                die("--arch: '%s' is not qwen3, qwen2, llama, mistral3, smollm3, phi3, gemma3, lfm2, qwen35, qwen3moe, lfm2moe, qwen35moe or gemma4", v);
            arch = v, i++;
        } else if (strcmp(a, "--attn-layers") == 0 && v) {
            attn_layers = v, i++;
        } else if (strcmp(a, "--rope-freqs") == 0) {
            rope_freqs = 1;
        } else if (strcmp(a, "--rope-factors") == 0 && v) {
            rope_factors_orig = arg_u(a, v), i++;
        } else if (strcmp(a, "--recurrent-layers") == 0) {
            recur_array = 1;
        } else if (strcmp(a, "--bias") == 0) {
            bias = 1;
        } else if (strcmp(a, "--tied") == 0) {
            tied = 1;
        } else if (strcmp(a, "--untied") == 0) {
            tied = 0;
        } else if (a[0] == '-') {
            die("unknown option %s", a);
        } else if (!out) {
            out = a;
        } else {
            die("unexpected argument %s", a);
        }
    }
    if (!out)
        die("usage: mkmodel OUT [--layers N --embd N --ff N --heads N --kv-heads N --head-dim N --vocab N --ctx N "
            "--type f32|f16|bf16|q8_0|q4_0|q4_k|q6_k|q4_k_m --seed S --tied|--untied --version 2|3 --split N --template-from F --tokenizer-from F --arch A --rope-dim N --rope-freqs --bias]%s",
            "");
    if (heads % kv_heads != 0) die("--heads must be a multiple of --kv-heads%s", "");

    GgufWriter *w = gw_new(version, 0);
    char name[128];
    gw_kv_str(w, "general.architecture", arch);
    gw_kv_str(w, "general.type", "model");
    /* not the architecture's name: llama.cpp changes Phi-3's special tokens
     * when general.name contains "phi3" (and the real vocabulary has them) */
    snprintf(name, sizeof name, "mkmodel-%s e%llu L%llu h%llu/%llu d%llu ff%llu seed%llu", arch, (unsigned long long)embd,
             (unsigned long long)layers, (unsigned long long)heads, (unsigned long long)kv_heads,
             (unsigned long long)head_dim, (unsigned long long)ff, (unsigned long long)seed);
    if (strcmp(arch, "phi3") == 0) memcpy(name + 8, "phiX", 4); /* "mkmodel-phiX e..." */
    gw_kv_str(w, "general.name", name);
    /* llama.cpp's general.file_type numbers */
    uint32_t ftype = type == GGML_TYPE_F32    ? 0
                     : type == GGML_TYPE_F16  ? 1
                     : type == GGML_TYPE_Q8_0 ? 7
                     : type == GGML_TYPE_Q4_0 ? 2
                     : q4_k_m                 ? 15
                     : type == GGML_TYPE_Q4_K ? 14
                     : type == GGML_TYPE_Q6_K ? 18
                                              : 32;
    gw_kv_u32(w, "general.file_type", ftype);
    gw_kv_u32(w, "general.quantization_version", 2);
    if (mtp && strcmp(arch, "qwen35") != 0) die("--mtp: only with --arch qwen35%s", "");
    gw_kv_u32(w, key(arch, "block_count"), (uint32_t)(layers + mtp));
    if (mtp) gw_kv_u32(w, key(arch, "nextn_predict_layers"), (uint32_t)mtp);
    gw_kv_u32(w, key(arch, "context_length"), (uint32_t)ctx);
    gw_kv_u32(w, key(arch, "embedding_length"), (uint32_t)embd);
    int g4 = strcmp(arch, "gemma4") == 0;
    static int32_t g4_ff[4096], g4_kv[4096];
    static uint8_t g4_swa[4096];
    if (g4) { /* its converter's arrays: which layers are windowed (of every --swa-pattern P the
               * first P - 1), the FFN's width and kv heads per layer where they vary */
        if (layers > 4096 || shared_kv >= layers) die("--layers / --shared-kv: at most 4096 layers, fewer shared%s", "");
        if (!swa_pattern) swa_pattern = 5;
        if (!head_dim_swa) head_dim_swa = head_dim;
        if (!kv_heads_swa) kv_heads_swa = kv_heads;
        for (uint64_t l = 0; l < layers; l++) {
            g4_swa[l] = l % swa_pattern < swa_pattern - 1;
            g4_ff[l] = (int32_t)(double_wide && l >= layers - shared_kv ? 2 * ff : ff);
            g4_kv[l] = (int32_t)(g4_swa[l] ? kv_heads_swa : kv_heads);
        }
        if (double_wide) gw_kv_array(w, key(arch, "feed_forward_length"), GGUF_TYPE_INT32, g4_ff, layers);
        else gw_kv_u32(w, key(arch, "feed_forward_length"), (uint32_t)ff);
    } else {
        gw_kv_u32(w, key(arch, "feed_forward_length"), (uint32_t)ff);
    }
    gw_kv_u32(w, key(arch, "attention.head_count"), (uint32_t)heads);
    /* lfm2 (and lfm2moe): which layers attend (the others are short convolutions) */
    int lfm2moe = strcmp(arch, "lfm2moe") == 0, lfm2 = strcmp(arch, "lfm2") == 0 || lfm2moe;
    int qwen35moe = strcmp(arch, "qwen35moe") == 0, moe = lfm2moe || qwen35moe || strcmp(arch, "qwen3moe") == 0;
    if (!ff_exp) ff_exp = ff;
    if (!lfm2moe) dense_lead = 0;
    if (moe) { /* as llama.cpp's converter writes them */
        gw_kv_u32(w, key(arch, "expert_count"), (uint32_t)experts);
        gw_kv_u32(w, key(arch, "expert_used_count"), (uint32_t)experts_used);
        gw_kv_u32(w, key(arch, "expert_feed_forward_length"), (uint32_t)ff_exp);
        if (qwen35moe) gw_kv_u32(w, key(arch, "expert_shared_feed_forward_length"), (uint32_t)ff);
        if (lfm2moe) {
            gw_kv_u32(w, key(arch, "leading_dense_block_count"), (uint32_t)dense_lead);
            gw_kv_u32(w, key(arch, "expert_gating_func"), (uint32_t)gating);
        }
    }
    static uint8_t is_attn[4096];
    for (const char *p = attn_layers; lfm2 && *p;) {
        char *end;
        unsigned long l = strtoul(p, &end, 10);
        if (end == p || (*end && *end != ',')) die("--attn-layers: '%s' is not a list of layer numbers", attn_layers);
        if (l < layers && l < 4096) is_attn[l] = 1;
        p = *end ? end + 1 : end;
    }
    if (lfm2) { /* as LFM2's converter: an INT32 array, 0 for the convolution layers */
        static int32_t per_layer[4096];
        if (layers > 4096) die("--layers: at most 4096 for %s", arch);
        for (uint64_t l = 0; l < layers; l++) per_layer[l] = is_attn[l] ? (int32_t)kv_heads : 0;
        gw_kv_array(w, key(arch, "attention.head_count_kv"), GGUF_TYPE_INT32, per_layer, layers);
        gw_kv_u32(w, key(arch, "shortconv.l_cache"), (uint32_t)conv_l);
    } else if (g4 && kv_heads_swa != kv_heads) {
        gw_kv_array(w, key(arch, "attention.head_count_kv"), GGUF_TYPE_INT32, g4_kv, layers);
    } else {
        gw_kv_u32(w, key(arch, "attention.head_count_kv"), (uint32_t)kv_heads);
    }
    if (g4) {
        gw_kv_u32(w, key(arch, "attention.key_length_swa"), (uint32_t)head_dim_swa);
        gw_kv_u32(w, key(arch, "attention.value_length_swa"), (uint32_t)head_dim_swa);
        gw_kv_u32(w, key(arch, "rope.dimension_count"), (uint32_t)head_dim);
        gw_kv_u32(w, key(arch, "rope.dimension_count_swa"), (uint32_t)head_dim_swa);
        gw_kv_u32(w, key(arch, "attention.shared_kv_layers"), (uint32_t)shared_kv);
        gw_kv_u32(w, key(arch, "embedding_length_per_layer_input"), (uint32_t)pe);
    }
    gw_kv_u32(w, key(arch, "attention.key_length"), (uint32_t)head_dim);
    gw_kv_u32(w, key(arch, "attention.value_length"), (uint32_t)head_dim);
    gw_kv_f32(w, key(arch, "rope.freq_base"), 1000000.0f);
    gw_kv_f32(w, key(arch, "attention.layer_norm_rms_epsilon"), 1e-6f);
    if (rope_dim) gw_kv_u32(w, key(arch, "rope.dimension_count"), (uint32_t)rope_dim);
    if (rope_factors_orig) { /* Phi-3 LongRoPE: the attention factor of a 128k model made from a 4k one */
        double scale = (double)ctx / (double)rope_factors_orig;
        gw_kv_u32(w, key(arch, "rope.scaling.original_context_length"), (uint32_t)rope_factors_orig);
        gw_kv_f32(w, key(arch, "rope.scaling.attn_factor"),
                  scale > 1.0 ? (float)sqrt(1.0 + log(scale) / log((double)rope_factors_orig)) : 1.0f);
    }
    if (rope_linear) { /* as Gemma 3 4B-27B's files: linear scaling, factor 8 */
        gw_kv_str(w, key(arch, "rope.scaling.type"), "linear");
        gw_kv_f32(w, key(arch, "rope.scaling.factor"), (float)rope_linear);
    }
    if (yarn) { /* as Ministral 3's and Qwen3's long-context files */
        gw_kv_str(w, key(arch, "rope.scaling.type"), "yarn");
        gw_kv_f32(w, key(arch, "rope.scaling.factor"), (float)yarn);
        gw_kv_u32(w, key(arch, "rope.scaling.original_context_length"), (uint32_t)(yarn_orig ? yarn_orig : ctx / yarn));
        if (strcmp(arch, "mistral3") == 0) {
            gw_kv_f32(w, key(arch, "rope.scaling.yarn_beta_fast"), 32.0f);
            gw_kv_f32(w, key(arch, "rope.scaling.yarn_beta_slow"), 1.0f);
            gw_kv_f32(w, key(arch, "rope.scaling.yarn_log_multiplier"), (float)yarn_log_mul);
        }
    }
    if (attn_temp) gw_kv_f32(w, key(arch, "attention.temperature_scale"), (float)attn_temp);
    if (strcmp(arch, "phi3") == 0) gw_kv_u32(w, key(arch, "attention.sliding_window"), 0); /* as Phi-4's converter */
    if (window) { /* Gemma 3: local layers on base 10000, the global ones on rope.freq_base */
        gw_kv_u32(w, key(arch, "attention.sliding_window"), (uint32_t)window);
        gw_kv_f32(w, key(arch, "rope.freq_base_swa"), 10000.0f);
        if (g4) gw_kv_array(w, key(arch, "attention.sliding_window_pattern"), GGUF_TYPE_BOOL, g4_swa, layers);
        else if (swa_pattern) gw_kv_u32(w, key(arch, "attention.sliding_window_pattern"), (uint32_t)swa_pattern);
    }
    if (softcap) gw_kv_f32(w, key(arch, "final_logit_softcapping"), (float)softcap);
    int qwen35 = strcmp(arch, "qwen35") == 0 || qwen35moe;
    if (qwen35) { /* as convert_hf_to_gguf.py writes Qwen3.5 */
        gw_kv_u32(w, key(arch, "ssm.conv_kernel"), (uint32_t)ssm_conv);
        gw_kv_u32(w, key(arch, "ssm.state_size"), (uint32_t)ssm_state);
        gw_kv_u32(w, key(arch, "ssm.group_count"), (uint32_t)ssm_kheads);
        gw_kv_u32(w, key(arch, "ssm.time_step_rank"), (uint32_t)ssm_vheads);
        gw_kv_u32(w, key(arch, "ssm.inner_size"), (uint32_t)(ssm_vheads * ssm_state));
        gw_kv_u32(w, key(arch, "full_attention_interval"), (uint32_t)full_attn);
        if (recur_array) {
            static uint8_t recur[4096];
            if (layers + mtp > 4096) die("--layers: at most 4096 for %s", arch);
            for (uint64_t l = 0; l < layers; l++) recur[l] = (l + 1) % full_attn != 0;
            gw_kv_array(w, key(arch, "attention.recurrent_layers"), GGUF_TYPE_BOOL, recur, layers + mtp);
        }
        /* [11, 11, 10, 0] of Qwen3.5's 32 rotated pairs, scaled to this model's */
        uint64_t pairs = (rope_dim ? rope_dim : head_dim) / 2;
        int32_t sections[4] = {(int32_t)((pairs * 11 + 16) / 32), (int32_t)((pairs * 11 + 16) / 32), 0, 0};
        sections[2] = (int32_t)pairs - sections[0] - sections[1];
        gw_kv_array(w, key(arch, "rope.dimension_sections"), GGUF_TYPE_INT32, sections, 4);
    }

    uint64_t n_vocab;
    Vocab v = {0};
    if (tokenizer_from) {
        n_vocab = copy_tokenizer(w, tokenizer_from, 0);
        if (pre_name) gw_kv_str(w, "tokenizer.ggml.pre", pre_name);
    } else {
        build_vocab(&v, vocab, pre_name && strcmp(pre_name, "qwen35") == 0);
        n_vocab = (uint64_t)v.n_tokens;
        gw_kv_str(w, "tokenizer.ggml.model", "gpt2");
        gw_kv_str(w, "tokenizer.ggml.pre", pre_name ? pre_name : "qwen2");
        gw_kv_str_array(w, "tokenizer.ggml.tokens", (const char *const *)v.tokens, (uint64_t)v.n_tokens);
        gw_kv_array(w, "tokenizer.ggml.token_type", GGUF_TYPE_INT32, v.types, (uint64_t)v.n_tokens);
        gw_kv_str_array(w, "tokenizer.ggml.merges", (const char *const *)v.merges, (uint64_t)v.n_merges);
        int eot = find(v.tokens, v.n_tokens, "<|endoftext|>"), im_end = find(v.tokens, v.n_tokens, "<|im_end|>");
        gw_kv_u32(w, "tokenizer.ggml.eos_token_id", (uint32_t)im_end);
        gw_kv_u32(w, "tokenizer.ggml.padding_token_id", (uint32_t)eot);
        gw_kv_u32(w, "tokenizer.ggml.bos_token_id", (uint32_t)eot);
        gw_kv_bool(w, "tokenizer.ggml.add_bos_token", 0);
        if (template_from) {
            copy_tokenizer(w, template_from, 1);
        } else if (template_file) {
            static char text[1 << 16];
            FILE *f = fopen(template_file, "rb");
            size_t n = f ? fread(text, 1, sizeof text - 1, f) : 0;
            if (!f) die("%s: cannot read", template_file);
            fclose(f);
            text[n] = '\0';
            gw_kv_str(w, "tokenizer.chat_template", text);
        } else {
            gw_kv_str(w, "tokenizer.chat_template", DEFAULT_TEMPLATE);
        }
    }

    /* Shapes in GGUF order (ne[0] = row length = input features). */
    uint64_t q_dim = heads * head_dim, kv_dim = kv_heads * head_dim;
#define FAN(n) (float)(1.0 / sqrt((double)(n)))
    int with_bias = bias || strcmp(arch, "qwen2") == 0;
    if (rope_freqs) tensor(w, seed, "rope_freqs.weight", (rope_dim ? rope_dim : head_dim) / 2, 0, GGML_TYPE_F32, 2.0f, 3.0f);
    if (rope_factors_orig) { /* short factors near 1, long ones up to ~40 as in Phi-4-mini */
        tensor(w, seed, "rope_factors_long.weight", (rope_dim ? rope_dim : head_dim) / 2, 0, GGML_TYPE_F32, 19.0f, 20.0f);
        tensor(w, seed, "rope_factors_short.weight", (rope_dim ? rope_dim : head_dim) / 2, 0, GGML_TYPE_F32, 0.5f, 1.5f);
    }
    int fused = strcmp(arch, "phi3") == 0;
    tensor(w, seed, "token_embd.weight", embd, n_vocab, q4_k_m ? GGML_TYPE_Q6_K : type, 2.0f * FAN(embd), 0);
    if (g4) {
        {
            uint64_t ne[1] = {head_dim / 2};
            g4_rotating_pairs = head_dim / 2 / rope_quarter;
            gw_tensor_gen(w, "rope_freqs.weight", 1, ne, GGML_TYPE_F32, fill_proportional, NULL);
        }
        if (pe) { /* the table (as token_embd's type) and its projection */
            tensor(w, seed, "per_layer_token_embd.weight", layers * pe, n_vocab, q4_k_m ? GGML_TYPE_Q6_K : type, 1.0f, 0);
            tensor(w, seed, "per_layer_model_proj.weight", embd, layers * pe, type, FAN(embd), 0);
            tensor(w, seed, "per_layer_proj_norm.weight", pe, 0, GGML_TYPE_F32, 0.1f, 1.0f);
        }
    }
    for (uint64_t l = 0; l < layers; l++) {
        char t[64];
        uint64_t e = layers / 8;
        int more_bits = l < e || l >= layers - e || (l >= e && (l - e) % 3 == 2);
        uint32_t type_vd = q4_k_m && more_bits ? GGML_TYPE_Q6_K : type;
        if (g4) { /* the layers sharing KV carry their own k, v too (unused) */
            gemma4_layer(w, seed, l, embd, heads, g4_swa[l] ? kv_heads_swa : kv_heads, g4_swa[l] ? head_dim_swa : head_dim,
                         (uint64_t)g4_ff[l], pe, type, type_vd);
            continue;
        }
#define T(suffix, ne0, ne1, ty, scale, bias)                                  \
    snprintf(t, sizeof t, "blk.%llu.%s.weight", (unsigned long long)l, suffix); \
    tensor(w, seed, t, ne0, ne1, ty, scale, bias);
#define T3(suffix, ne0, ne1, ty, scale)                                        \
    snprintf(t, sizeof t, "blk.%llu.%s.weight", (unsigned long long)l, suffix); \
    tensor3(w, seed, t, ne0, ne1, experts, ty, scale);
        T("attn_norm", embd, 0, GGML_TYPE_F32, 0.1f, 1.0f)
        if (qwen35) {
            /* every full_attn-th layer attention (q and its gate per head, q/k
             * norms), the others gated DeltaNet; the FFN's norm is named
             * post_attention_norm */
            T("post_attention_norm", embd, 0, GGML_TYPE_F32, 0.1f, 1.0f)
            if ((l + 1) % full_attn == 0) {
                qwen35_attention(w, seed, l, embd, q_dim, kv_dim, head_dim, type, type_vd);
            } else {
                uint64_t key_dim = ssm_kheads * ssm_state, inner = ssm_vheads * ssm_state;
                T("attn_qkv", embd, 2 * key_dim + inner, type, FAN(embd), 0)
                T("attn_gate", embd, inner, type, FAN(embd), 0)
                T("ssm_beta", embd, ssm_vheads, type, FAN(embd), 0)
                T("ssm_alpha", embd, ssm_vheads, type, FAN(embd), 0)
                /* the kernel stays F32 (llama.cpp's quantizer leaves it so); decays
                 * A = -exp(A_log) in [-1, -0.1] keep a memory of tens of tokens */
                T("ssm_conv1d", ssm_conv, 2 * key_dim + inner, GGML_TYPE_F32, 0.5f, 0)
                snprintf(t, sizeof t, "blk.%llu.ssm_dt.bias", (unsigned long long)l);
                tensor(w, seed, t, ssm_vheads, 0, GGML_TYPE_F32, 1.0f, 0);
                snprintf(t, sizeof t, "blk.%llu.ssm_a", (unsigned long long)l);
                tensor(w, seed, t, ssm_vheads, 0, GGML_TYPE_F32, 0.45f, -0.55f);
                T("ssm_norm", ssm_state, 0, GGML_TYPE_F32, 0.1f, 1.0f)
                T("ssm_out", inner, embd, type_vd, FAN(inner), 0)
            }
            if (moe) goto experts;
            T("ffn_gate", embd, ff, type, FAN(embd), 0)
            T("ffn_up", embd, ff, type, FAN(embd), 0)
            T("ffn_down", ff, embd, type_vd, FAN(ff), 0)
            continue;
        }
        if (lfm2 && !is_attn[l]) {
            T("shortconv.conv", conv_l, embd, GGML_TYPE_F32, 0.5f, 0)
            T("shortconv.in_proj", embd, 3 * embd, type, FAN(embd), 0)
            T("shortconv.out_proj", embd, embd, type_vd, FAN(embd), 0)
        } else if (fused) {
            T("attn_qkv", embd, q_dim + 2 * kv_dim, type, FAN(embd), 0)
        } else {
            T("attn_q", embd, q_dim, type, FAN(embd), 0)
            T("attn_k", embd, kv_dim, type, FAN(embd), 0)
            T("attn_v", embd, kv_dim, type_vd, FAN(embd), 0)
        }
        if (lfm2 && !is_attn[l]) {
            /* no attention tensors */
        } else if (strcmp(arch, "qwen3") == 0 || strcmp(arch, "qwen3moe") == 0 || strcmp(arch, "gemma3") == 0 || lfm2) {
            T("attn_q_norm", head_dim, 0, GGML_TYPE_F32, 0.1f, 1.0f)
            T("attn_k_norm", head_dim, 0, GGML_TYPE_F32, 0.1f, 1.0f)
        }
        if (with_bias) {
            snprintf(t, sizeof t, "blk.%llu.attn_q.bias", (unsigned long long)l);
            tensor(w, seed, t, q_dim, 0, GGML_TYPE_F32, 0.5f, 0);
            snprintf(t, sizeof t, "blk.%llu.attn_k.bias", (unsigned long long)l);
            tensor(w, seed, t, kv_dim, 0, GGML_TYPE_F32, 0.5f, 0);
            snprintf(t, sizeof t, "blk.%llu.attn_v.bias", (unsigned long long)l);
            tensor(w, seed, t, kv_dim, 0, GGML_TYPE_F32, 0.5f, 0);
        }
        if (!lfm2 || is_attn[l]) { T("attn_output", q_dim, embd, type, FAN(q_dim), 0) }
        if (strcmp(arch, "gemma3") == 0) { T("post_attention_norm", embd, 0, GGML_TYPE_F32, 0.1f, 1.0f) }
        T("ffn_norm", embd, 0, GGML_TYPE_F32, 0.1f, 1.0f)
    experts:
        if (moe && l >= dense_lead) {
            /* the router stays F32 (llama.cpp's quantizer leaves it so), wide
             * enough apart that the experts chosen are clear; the experts
             * [ne0, ne1, experts] */
            T("ffn_gate_inp", embd, experts, GGML_TYPE_F32, 4.0f * FAN(embd), 0)
            T3("ffn_gate_exps", embd, ff_exp, type, FAN(embd))
            T3("ffn_up_exps", embd, ff_exp, type, FAN(embd))
            T3("ffn_down_exps", ff_exp, embd, type_vd, FAN(ff_exp))
            if (lfm2moe) {
                snprintf(t, sizeof t, "blk.%llu.exp_probs_b.bias", (unsigned long long)l);
                tensor(w, seed, t, experts, 0, GGML_TYPE_F32, 0.1f, 0);
            }
            if (qwen35moe) { /* the shared expert (--ff wide) and its gate, a vector */
                T("ffn_gate_inp_shexp", embd, 0, GGML_TYPE_F32, 2.0f * FAN(embd), 0)
                T("ffn_gate_shexp", embd, ff, type, FAN(embd), 0)
                T("ffn_up_shexp", embd, ff, type, FAN(embd), 0)
                T("ffn_down_shexp", ff, embd, type_vd, FAN(ff), 0)
            }
            continue;
        }
        if (fused) {
            T("ffn_up", embd, 2 * ff, type, FAN(embd), 0)
        } else {
            T("ffn_gate", embd, ff, type, FAN(embd), 0)
            T("ffn_up", embd, ff, type, FAN(embd), 0)
        }
        T("ffn_down", ff, embd, type_vd, FAN(ff), 0)
        if (strcmp(arch, "gemma3") == 0) { T("post_ffw_norm", embd, 0, GGML_TYPE_F32, 0.1f, 1.0f) }
#undef T
#undef T3
    }
    tensor(w, seed, lfm2 ? "token_embd_norm.weight" : "output_norm.weight", embd, 0, GGML_TYPE_F32, 0.1f, 1.0f);
    if (!tied) tensor(w, seed, "output.weight", embd, n_vocab, type, 2.0f * FAN(embd), 0);
    /* Qwen3.5's multi-token prediction blocks, after every other tensor (the
     * trunk's values are those of the same file without them): a full
     * attention block, and the projection of [embedding, hidden] to one */
    for (uint64_t l = layers; l < layers + mtp; l++) {
        char t[64];
#define T(suffix, ne0, ne1, ty, scale, bias)                                  \
    snprintf(t, sizeof t, "blk.%llu.%s.weight", (unsigned long long)l, suffix); \
    tensor(w, seed, t, ne0, ne1, ty, scale, bias);
        T("attn_norm", embd, 0, GGML_TYPE_F32, 0.1f, 1.0f)
        T("post_attention_norm", embd, 0, GGML_TYPE_F32, 0.1f, 1.0f)
        qwen35_attention(w, seed, l, embd, q_dim, kv_dim, head_dim, type, type);
        T("ffn_gate", embd, ff, type, FAN(embd), 0)
        T("ffn_up", embd, ff, type, FAN(embd), 0)
        T("ffn_down", ff, embd, type, FAN(ff), 0)
        T("nextn.eh_proj", 2 * embd, embd, type, FAN(2 * embd), 0)
        T("nextn.enorm", embd, 0, GGML_TYPE_F32, 0.1f, 1.0f)
        T("nextn.hnorm", embd, 0, GGML_TYPE_F32, 0.1f, 1.0f)
        T("nextn.shared_head_norm", embd, 0, GGML_TYPE_F32, 0.1f, 1.0f)
#undef T
    }
#undef FAN
    if (split > 1) {
        size_t len = strlen(out);
        if (len < 6 || strcmp(out + len - 5, ".gguf") != 0 || split > 99) die("--split: OUT must end in .gguf, N <= 99%s", "");
        char *prefix = xstrdup(out);
        prefix[len - 5] = '\0';
        if (gw_write_split(w, prefix, (int)split) != 0) die("%s: cannot write", out);
        free(prefix);
    } else if (gw_write(w, out) != 0) {
        die("%s: cannot write", out);
    }
    gw_free(w);
    for (int i = 0; i < v.n_tokens; i++) free(v.tokens[i]);
    for (int i = 0; i < v.n_merges; i++) free(v.merges[i]);
    free(v.tokens);
    free(v.types);
    free(v.merges);
    return 0;
}
