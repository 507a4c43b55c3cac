/* tokenizer.c - byte-level BPE from GGUF metadata (see tokenizer.h). */
#include "tokenizer.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "unicode.h"

/* ---- pre-tokenizers: described as data ------------------------------------
 * The llama3 family of regexes (used by qwen2, llama-bpe, ...):
 *   (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,D}
 *   | ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
 * differs between models only in D, the most digits per piece. Another
 * family (gpt2's " ?\p{L}+| ?\p{N}+|...") would get its own matcher. */
enum { PRETOK_LLAMA3_FAMILY = 1 };

typedef struct {
    const char *name;   /* value of tokenizer.ggml.pre */
    int family;
    int max_digits;
} PretokSpec;

static const PretokSpec pretok_specs[] = {
    {"qwen2", PRETOK_LLAMA3_FAMILY, 1},
    /* {"llama-bpe", PRETOK_LLAMA3_FAMILY, 3} once it is tested on fixtures */
};
#define N_PRETOK ((int)(sizeof pretok_specs / sizeof pretok_specs[0]))

/* Token texts that llama.cpp always treats as control tokens (by name), and
 * the subset that ends generation. Mirrors llama-vocab.cpp. */
static const char *const eog_names[] = {
    "<|eot_id|>", "<|im_end|>", "<|end|>", "<|return|>", "<|call|>", "<|flush|>", "<|calls|>",
    "<end_of_turn>", "<|endoftext|>", "</s>", "<|eom_id|>", "<EOT>", "_<EOT>", "[EOT]", "[EOS]",
    "<|end_of_text|>", "<end_of_utterance>",
    /* FIM pad, repo and file separator tokens also end generation */
    "<|fim_pad|>", "<fim-pad>", "<fim_pad>", "<PAD>",
    "<|fim_repo|>", "<|repo_name|>", "<fim-repo>", "<REPO>",
    "<|file_sep|>",
};
static const char *const control_names[] = {
    "<|fim_prefix|>", "<fim-prefix>", "<fim_prefix>", "<PRE>",
    "<|fim_suffix|>", "<fim-suffix>", "<fim_suffix>", "<SUF>",
    "<|fim_middle|>", "<fim-middle>", "<fim_middle>", "<MID>",
};

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))
#define MAX_TEXT_LIMIT TOKENIZER_MAX_TEXT
#define MERGE_PART_MAX 1024           /* longest merge half we accept, bytes */

/* ---- errors ---------------------------------------------------------------- */

static int fail(GgufError *err, const Gguf *g, uint32_t file_index, uint64_t off, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static int fail(GgufError *err, const Gguf *g, uint32_t file_index, uint64_t off, const char *fmt, ...)
{
    char what[384];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    const char *path = g->n_files > 0 && file_index < g->n_files ? g->files[file_index].path : "model";
    snprintf(err->msg, sizeof err->msg, "%.100s: byte %llu: %s", path, (unsigned long long)off, what);
    return -1;
}

/* ---- metadata the tokenizer needs ----------------------------------------- */

typedef struct {
    GgufKV tokens, token_type, merges;
    int has_tokens, has_token_type, has_merges, has_model, has_pre;
    char model[32], pre[64];
    GgufKV model_kv, pre_kv;
} TokMeta;

static void meta_take(TokMeta *m, Gguf *g, const GgufKV *kv)
{
    if (strcmp(kv->key, "tokenizer.ggml.tokens") == 0) m->tokens = *kv, m->has_tokens = 1;
    else if (strcmp(kv->key, "tokenizer.ggml.token_type") == 0) m->token_type = *kv, m->has_token_type = 1;
    else if (strcmp(kv->key, "tokenizer.ggml.merges") == 0) m->merges = *kv, m->has_merges = 1;
    else if (strcmp(kv->key, "tokenizer.ggml.model") == 0) {
        m->model_kv = *kv, m->has_model = 1;
        if (gguf_kv_string(g, kv, m->model, sizeof m->model) < 0) m->model[0] = '\0';
    } else if (strcmp(kv->key, "tokenizer.ggml.pre") == 0) {
        m->pre_kv = *kv, m->has_pre = 1;
        if (gguf_kv_string(g, kv, m->pre, sizeof m->pre) < 0) m->pre[0] = '\0';
    }
}

static int on_kv(void *ctx, Gguf *g, const GgufKV *kv, GgufError *err)
{
    (void)err;
    meta_take(ctx, g, kv);
    return 0;
}

static uint64_t value_bytes(const GgufKV *kv) { return kv->value_end - kv->value_offset; }

/* Checks the header-level facts; sets *pretok. */
static int meta_check(const TokMeta *m, const Gguf *g, int *pretok, GgufError *err)
{
    if (!m->has_model) return fail(err, g, 0, 0, "tokenizer.ggml.model is missing (no tokenizer in this file)");
    if (m->model_kv.type != GGUF_TYPE_STRING || strcmp(m->model, "gpt2") != 0)
        return fail(err, g, m->model_kv.file_index, m->model_kv.value_offset,
                    "tokenizer.ggml.model '%s' is not supported (only 'gpt2' byte-level BPE)", m->model);
    if (!m->has_pre) return fail(err, g, 0, 0, "tokenizer.ggml.pre is missing (pre-tokenizer unknown)");
    *pretok = -1;
    for (int i = 0; i < N_PRETOK; i++)
        if (m->pre_kv.type == GGUF_TYPE_STRING && strcmp(m->pre, pretok_specs[i].name) == 0) *pretok = i;
    if (*pretok < 0)
        return fail(err, g, m->pre_kv.file_index, m->pre_kv.value_offset,
                    "pre-tokenizer '%s' (tokenizer.ggml.pre) is not supported (supported: qwen2)", m->pre);
    if (!m->has_tokens) return fail(err, g, 0, 0, "tokenizer.ggml.tokens is missing");
    const GgufKV *k = &m->tokens;
    if (k->type != GGUF_TYPE_ARRAY || k->arr_type != GGUF_TYPE_STRING)
        return fail(err, g, k->file_index, k->value_offset, "tokenizer.ggml.tokens is not an array of strings");
    if (k->arr_len < 256 || k->arr_len > (uint64_t)INT32_MAX / 4)
        return fail(err, g, k->file_index, k->value_offset, "tokenizer.ggml.tokens has %llu tokens (need 256..%d)",
                    (unsigned long long)k->arr_len, INT32_MAX / 4);
    if (value_bytes(k) > UINT32_MAX)
        return fail(err, g, k->file_index, k->value_offset, "tokenizer.ggml.tokens is larger than 4 GiB");
    if (m->has_token_type) {
        k = &m->token_type;
        if (k->type != GGUF_TYPE_ARRAY || k->arr_type != GGUF_TYPE_INT32)
            return fail(err, g, k->file_index, k->value_offset, "tokenizer.ggml.token_type is not an array of i32");
        if (k->arr_len != m->tokens.arr_len)
            return fail(err, g, k->file_index, k->value_offset,
                        "tokenizer.ggml.token_type has %llu entries but there are %llu tokens",
                        (unsigned long long)k->arr_len, (unsigned long long)m->tokens.arr_len);
    }
    if (!m->has_merges) return fail(err, g, 0, 0, "tokenizer.ggml.merges is missing (needed by BPE)");
    k = &m->merges;
    if (k->type != GGUF_TYPE_ARRAY || k->arr_type != GGUF_TYPE_STRING)
        return fail(err, g, k->file_index, k->value_offset, "tokenizer.ggml.merges is not an array of strings");
    if (k->arr_len > (uint64_t)INT32_MAX / 4)
        return fail(err, g, k->file_index, k->value_offset, "tokenizer.ggml.merges has too many entries");
    return 0;
}

/* Slots of an open-addressing table for n entries: a power of two, at
 * most about two thirds full. */
static uint64_t hash_slots(uint64_t n)
{
    uint64_t p = 16;
    while (p < n + n / 2) p <<= 1;
    return p;
}

/* A buffer for values the read backend must copy (NULL size when mapped). */
static uint64_t read_buffer_bytes(const Gguf *g, const TokMeta *m)
{
    const GgufKV *kvs[3] = {&m->tokens, m->has_token_type ? &m->token_type : NULL, &m->merges};
    uint64_t most = 0;
    for (int i = 0; i < 3; i++) {
        if (!kvs[i] || g->files[kvs[i]->file_index].map) continue;
        if (value_bytes(kvs[i]) > most) most = value_bytes(kvs[i]);
    }
    return most;
}

/* Scratch per encode: special_at (4/byte), word (3/byte), 7 symbol arrays
 * of 4 bytes for up to 3 symbols per byte. */
static void plan_scratch(Plan *p, uint64_t max_text)
{
    uint64_t n = max_text + 1;
    plan_add(p, "tokenizer special marks", plan_mul(p, n, 4));
    plan_add(p, "tokenizer word", plan_mul(p, n, 3));
    plan_add(p, "tokenizer bpe symbols", plan_mul(p, plan_mul(p, n, 3), 7 * 4));
}

int tokenizer_plan(Gguf *g, uint64_t max_text_bytes, Plan *p, GgufError *err)
{
    TokMeta m;
    memset(&m, 0, sizeof m);
    GgufScanCallbacks cb = {on_kv, NULL, &m};
    if (gguf_walk(g, &cb, err) != 0) return -1;
    int pretok;
    if (meta_check(&m, g, &pretok, err) != 0) return -1;
    if (max_text_bytes > MAX_TEXT_LIMIT)
        return fail(err, g, 0, 0, "text of %llu bytes is longer than the tokenizer accepts (%llu)",
                    (unsigned long long)max_text_bytes, MAX_TEXT_LIMIT);
    uint64_t n = m.tokens.arr_len, nm = m.merges.arr_len;
    plan_add(p, "tokenizer attributes", n);
    plan_add(p, "tokenizer piece offsets", plan_mul(p, n + 1, 4));
    plan_add(p, "tokenizer pieces", value_bytes(&m.tokens));
    plan_add(p, "tokenizer text hash", plan_mul(p, hash_slots(n), 4));
    plan_add(p, "tokenizer merge hash", plan_mul(p, hash_slots(nm), sizeof(TokMerge)));
    plan_add(p, "tokenizer specials", plan_mul(p, n, 4));
    uint64_t rb = read_buffer_bytes(g, &m);
    if (rb) plan_add(p, "tokenizer file read", rb);
    plan_scratch(p, max_text_bytes);
    return 0;
}

/* ---- hashing --------------------------------------------------------------- */

static uint64_t hash_bytes(const uint8_t *s, size_t n)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (size_t i = 0; i < n; i++) h = (h ^ s[i]) * 1099511628211ull;
    return h ^ (h >> 29);
}

static int32_t find_bytes(const Tokenizer *t, const uint8_t *s, size_t n)
{
    uint64_t i = hash_bytes(s, n) & t->text_hash_mask;
    for (;;) {
        uint32_t v = t->text_hash[i];
        if (v == 0) return -1;
        uint32_t id = v - 1;
        if (t->piece_off[id + 1] - t->piece_off[id] == n && memcmp(t->piece_bytes + t->piece_off[id], s, n) == 0)
            return (int32_t)id;
        i = (i + 1) & t->text_hash_mask;
    }
}

/* Later ids win over earlier ones with the same text, as in llama.cpp. */
static void insert_text(Tokenizer *t, uint32_t id)
{
    const uint8_t *s = t->piece_bytes + t->piece_off[id];
    size_t n = t->piece_off[id + 1] - t->piece_off[id];
    uint64_t i = hash_bytes(s, n) & t->text_hash_mask;
    for (;;) {
        uint32_t v = t->text_hash[i];
        if (v == 0) break;
        uint32_t o = v - 1;
        if (t->piece_off[o + 1] - t->piece_off[o] == n && memcmp(t->piece_bytes + t->piece_off[o], s, n) == 0) break;
        i = (i + 1) & t->text_hash_mask;
    }
    t->text_hash[i] = id + 1;
}

static uint64_t merge_slot(uint64_t key, uint64_t mask) { return (key * 0x9E3779B97F4A7C15ull >> 20) & mask; }

static const TokMerge *find_merge(const Tokenizer *t, int32_t a, int32_t b)
{
    uint64_t key = (uint64_t)(uint32_t)a << 32 | (uint32_t)b;
    uint64_t i = merge_slot(key, t->merge_hash_mask);
    for (;;) {
        const TokMerge *e = &t->merge_hash[i];
        if (e->merged == 0) return NULL;
        if (e->key == key) return e;
        i = (i + 1) & t->merge_hash_mask;
    }
}

/* ---- byte-level alphabet --------------------------------------------------- */
/* GPT-2 maps each byte to a printable code point: bytes 0x21-0x7E, 0xA1-0xAC,
 * 0xAE-0xFF map to themselves, the 68 others to U+0100.. in byte order. */
static void build_byte_alphabet(Tokenizer *t)
{
    int n = 0;
    for (int i = 0; i < 324; i++) t->cp_to_byte[i] = -1;
    for (int b = 0; b < 256; b++) {
        int printable = (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE);
        t->cp_to_byte[printable ? b : 256 + n++] = (int16_t)b;
    }
}

/* Byte-level text -> raw bytes; characters outside the alphabet (and invalid
 * bytes) are kept as they are. out needs n bytes. */
static size_t bytelevel_decode(const Tokenizer *t, const uint8_t *s, size_t n, uint8_t *out)
{
    size_t o = 0;
    for (size_t i = 0; i < n;) {
        uint32_t cp;
        int l = utf8_next(s + i, n - i, &cp);
        if (l > 0 && cp < 324 && t->cp_to_byte[cp] >= 0) {
            out[o++] = (uint8_t)t->cp_to_byte[cp];
            i += (size_t)l;
        } else {
            size_t k = l > 0 ? (size_t)l : 1;
            memcpy(out + o, s + i, k);
            o += k;
            i += k;
        }
    }
    return o;
}

static int hexval(uint8_t c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
}

/* ---- loading --------------------------------------------------------------- */

static uint64_t read_len(const uint8_t *p, uint32_t size)
{
    uint64_t v = 0;
    for (uint32_t i = 0; i < size; i++) v |= (uint64_t)p[i] << (8 * i);
    return v;
}

static int load_types(Tokenizer *t, Gguf *g, const TokMeta *m, uint8_t *rbuf, GgufError *err)
{
    uint32_t n = (uint32_t)t->n_vocab;
    if (!m->has_token_type) {
        for (uint32_t i = 0; i < n; i++) t->attr[i] = TOKEN_NORMAL;
        return 0;
    }
    const GgufKV *k = &m->token_type;
    if (value_bytes(k) != 4ull * n)
        return fail(err, g, k->file_index, k->value_offset, "tokenizer.ggml.token_type has a bad size");
    const uint8_t *b = gguf_value_bytes(g, k, rbuf);
    if (!b) return fail(err, g, k->file_index, k->value_offset, "cannot read tokenizer.ggml.token_type");
    for (uint32_t i = 0; i < n; i++) {
        int32_t ty = (int32_t)(uint32_t)read_len(b + 4ull * i, 4);
        if (ty < 1 || ty > 6)
            return fail(err, g, k->file_index, k->value_offset + 4ull * i,
                        "token %u has type %d (expected 1..6)", i, ty);
        t->attr[i] = (uint8_t)(1u << (ty - 1));
    }
    return 0;
}

static int load_tokens(Tokenizer *t, Gguf *g, const TokMeta *m, uint8_t *rbuf, GgufError *err)
{
    const GgufKV *k = &m->tokens;
    const uint8_t *b = gguf_value_bytes(g, k, rbuf);
    if (!b) return fail(err, g, k->file_index, k->value_offset, "cannot read tokenizer.ggml.tokens");
    uint64_t total = value_bytes(k), pos = 0, out = 0;
    uint32_t ls = gguf_len_size(g);
    for (int32_t id = 0; id < t->n_vocab; id++) {
        if (total - pos < ls) goto truncated;
        uint64_t len = read_len(b + pos, ls);
        pos += ls;
        if (len > total - pos) goto truncated;
        const uint8_t *s = b + pos;
        uint8_t *dst = t->piece_bytes + out;
        size_t dn;
        uint8_t a = t->attr[id];
        if (a & (TOKEN_CONTROL | TOKEN_USER_DEFINED | TOKEN_UNKNOWN | TOKEN_UNUSED)) {
            memcpy(dst, s, (size_t)len);
            dn = (size_t)len;
        } else if ((a & TOKEN_BYTE) && len == 6 && s[0] == '<' && s[1] == '0' && s[2] == 'x' && s[5] == '>' &&
                   hexval(s[3]) >= 0 && hexval(s[4]) >= 0) {
            dst[0] = (uint8_t)(hexval(s[3]) * 16 + hexval(s[4])); /* "<0xAB>" */
            dn = 1;
        } else {
            dn = bytelevel_decode(t, s, (size_t)len, dst);
        }
        pos += len;
        out += dn;
        t->piece_off[id + 1] = (uint32_t)out;
        if (dn > t->max_piece) t->max_piece = (uint32_t)dn;
        insert_text(t, (uint32_t)id);
    }
    return 0;
truncated:
    return fail(err, g, k->file_index, k->value_offset + pos, "tokenizer.ggml.tokens is truncated");
}

/* llama.cpp's name-based fixes: control-looking names become control, and
 * the end-of-generation set is eos plus a list of names. */
static void mark_named_tokens(Tokenizer *t)
{
    for (size_t i = 0; i < ARRAY_LEN(control_names); i++) {
        int32_t id = tokenizer_find(t, control_names[i]);
        if (id >= 0) t->attr[id] |= TOKEN_CONTROL;
    }
    int has_tool_response = tokenizer_find(t, "<|tool_response>") >= 0;
    for (size_t i = 0; i < ARRAY_LEN(eog_names); i++) {
        int32_t id = tokenizer_find(t, eog_names[i]);
        /* llama.cpp drops "</s>" when "<|tool_response>" exists (gemma4) */
        if (id < 0 || (has_tool_response && strcmp(eog_names[i], "</s>") == 0)) continue;
        t->attr[id] |= TOKEN_CONTROL | TOKEN_EOG;
    }
    if (t->eos >= 0) t->attr[t->eos] |= TOKEN_EOG;
}

static int special_before(const Tokenizer *t, int32_t a, int32_t b)
{
    uint32_t la = t->piece_off[a + 1] - t->piece_off[a], lb = t->piece_off[b + 1] - t->piece_off[b];
    return la != lb ? la > lb : a < b;
}

/* Longest first (ids ascending on a tie); heapsort, so no quadratic case. */
static void sort_specials(Tokenizer *t)
{
    int32_t *v = t->specials, n = t->n_specials;
    for (int32_t start = n / 2 - 1, end = n; end > 1;) {
        int32_t root;
        if (start >= 0) root = start--;
        else {
            end--;
            int32_t tmp = v[0];
            v[0] = v[end], v[end] = tmp;
            root = 0;
        }
        for (;;) { /* sift down: a max-heap by "sorts after" */
            int32_t c = 2 * root + 1;
            if (c >= end) break;
            if (c + 1 < end && special_before(t, v[c], v[c + 1])) c++;
            if (!special_before(t, v[root], v[c])) break;
            int32_t tmp = v[root];
            v[root] = v[c], v[c] = tmp;
            root = c;
        }
    }
}

static int load_merges(Tokenizer *t, Gguf *g, const TokMeta *m, uint8_t *rbuf, GgufError *err)
{
    const GgufKV *k = &m->merges;
    const uint8_t *b = gguf_value_bytes(g, k, rbuf);
    if (!b) return fail(err, g, k->file_index, k->value_offset, "cannot read tokenizer.ggml.merges");
    uint64_t total = value_bytes(k), pos = 0;
    uint32_t ls = gguf_len_size(g);
    uint8_t both[2 * MERGE_PART_MAX];
    for (uint64_t r = 0; r < k->arr_len; r++) {
        if (total - pos < ls) goto truncated;
        uint64_t len = read_len(b + pos, ls);
        uint64_t at = k->value_offset + pos;
        pos += ls;
        if (len > total - pos) goto truncated;
        const uint8_t *s = b + pos;
        pos += len;
        /* "left right": split at the first space after the first byte */
        uint64_t sp = 1;
        while (sp < len && s[sp] != ' ') sp++;
        if (len < 3 || sp >= len - 1)
            return fail(err, g, k->file_index, at, "merge %llu is not two tokens separated by a space",
                        (unsigned long long)r);
        if (sp > MERGE_PART_MAX || len - sp - 1 > MERGE_PART_MAX)
            return fail(err, g, k->file_index, at, "merge %llu is longer than %d bytes", (unsigned long long)r,
                        MERGE_PART_MAX);
        size_t na = bytelevel_decode(t, s, (size_t)sp, both);
        size_t nb = bytelevel_decode(t, s + sp + 1, (size_t)(len - sp - 1), both + na);
        int32_t a = find_bytes(t, both, na), c = find_bytes(t, both + na, nb), ab = find_bytes(t, both, na + nb);
        if (a < 0 || c < 0 || ab < 0)
            return fail(err, g, k->file_index, at, "merge %llu ('%.*s') uses or makes a token not in the vocabulary",
                        (unsigned long long)r, (int)(len > 80 ? 80 : len), (const char *)s);
        uint64_t key = (uint64_t)(uint32_t)a << 32 | (uint32_t)c;
        uint64_t i = merge_slot(key, t->merge_hash_mask);
        while (t->merge_hash[i].merged != 0 && t->merge_hash[i].key != key) i = (i + 1) & t->merge_hash_mask;
        if (t->merge_hash[i].merged != 0) continue; /* a repeated pair keeps its first rank */
        t->merge_hash[i].key = key;
        t->merge_hash[i].rank = (uint32_t)r;
        t->merge_hash[i].merged = (uint32_t)ab + 1;
    }
    return 0;
truncated:
    return fail(err, g, k->file_index, k->value_offset + pos, "tokenizer.ggml.merges is truncated");
}

static int32_t get_id(const Gguf *g, const char *key, int32_t n)
{
    uint64_t v;
    if (gguf_get_uint(g, key, &v) != 0 || v >= (uint64_t)n) return -1;
    return (int32_t)v;
}

/* The encode scratch, as plan_scratch sized it. */
static int carve_scratch(Tokenizer *t, uint64_t max_text, Arena *a)
{
    uint64_t n = max_text + 1, w = 3 * n;
    t->special_at = arena_take(a, n * 4);
    t->word = arena_take(a, n * 3);
    int32_t *s = arena_take(a, w * 7 * 4);
    if (!t->special_at || !t->word || !s) return -1;
    t->sym_id = s;
    t->sym_prev = s + w;
    t->sym_next = s + 2 * w;
    t->pair_merged = s + 3 * w;
    t->heap = s + 4 * w;
    t->heap_pos = s + 5 * w;
    t->pair_rank = (uint32_t *)(s + 6 * w);
    t->max_text = max_text;
    return 0;
}

int tokenizer_load(Tokenizer *t, Gguf *g, uint64_t max_text_bytes, Arena *a, GgufError *err)
{
    memset(t, 0, sizeof *t);
    TokMeta m;
    memset(&m, 0, sizeof m);
    const char *keys[] = {"tokenizer.ggml.tokens", "tokenizer.ggml.token_type", "tokenizer.ggml.merges",
                          "tokenizer.ggml.model", "tokenizer.ggml.pre"};
    for (size_t i = 0; i < ARRAY_LEN(keys); i++) {
        const GgufKV *kv = gguf_find_key(g, keys[i]);
        if (kv) meta_take(&m, g, kv);
    }
    if (meta_check(&m, g, &t->pretok, err) != 0) return -1;

    /* sizes exactly as tokenizer_plan added them */
    uint64_t n = m.tokens.arr_len, nm = m.merges.arr_len;
    t->n_vocab = (int32_t)n;
    t->attr = arena_take(a, n);
    t->piece_off = arena_take(a, (n + 1) * 4);
    t->piece_bytes = arena_take(a, value_bytes(&m.tokens));
    t->text_hash_mask = hash_slots(n) - 1;
    t->text_hash = arena_take(a, (t->text_hash_mask + 1) * 4);
    t->merge_hash_mask = hash_slots(nm) - 1;
    t->merge_hash = arena_take(a, (t->merge_hash_mask + 1) * sizeof(TokMerge));
    t->specials = arena_take(a, n * 4);
    uint64_t rb = read_buffer_bytes(g, &m);
    uint8_t *rbuf = rb ? arena_take(a, rb) : NULL;
    if (!t->attr || !t->piece_off || !t->piece_bytes || !t->text_hash || !t->merge_hash || !t->specials ||
        (rb && !rbuf))
        return fail(err, g, 0, 0, "tokenizer: arena too small (planner bug)");

    build_byte_alphabet(t);
    if (load_types(t, g, &m, rbuf, err) != 0) return -1;
    if (load_tokens(t, g, &m, rbuf, err) != 0) return -1;
    for (int b = 0; b < 256; b++) {
        uint8_t c = (uint8_t)b;
        t->byte_token[b] = find_bytes(t, &c, 1);
        if (t->byte_token[b] < 0)
            return fail(err, g, m.tokens.file_index, m.tokens.value_offset,
                        "tokenizer.ggml.tokens has no token for byte 0x%02X (byte-level BPE needs all 256)", b);
    }
    if (load_merges(t, g, &m, rbuf, err) != 0) return -1;

    t->bos = get_id(g, "tokenizer.ggml.bos_token_id", t->n_vocab);
    t->eos = get_id(g, "tokenizer.ggml.eos_token_id", t->n_vocab);
    if (gguf_get_bool(g, "tokenizer.ggml.add_bos_token", &t->add_bos) != 0) t->add_bos = 0;
    mark_named_tokens(t);
    for (int32_t id = 0; id < t->n_vocab; id++)
        if ((t->attr[id] & (TOKEN_CONTROL | TOKEN_USER_DEFINED | TOKEN_UNKNOWN)) &&
            t->piece_off[id + 1] > t->piece_off[id])
            t->specials[t->n_specials++] = id;
    sort_specials(t);

    if (max_text_bytes > MAX_TEXT_LIMIT || carve_scratch(t, max_text_bytes, a) != 0)
        return fail(err, g, 0, 0, "tokenizer: arena too small for the encode scratch (planner bug)");
    return 0;
}

/* ---- accessors ------------------------------------------------------------- */

int32_t tokenizer_find(const Tokenizer *t, const char *text)
{
    return find_bytes(t, (const uint8_t *)text, strlen(text));
}

const char *tokenizer_piece(const Tokenizer *t, int32_t id, size_t *len)
{
    if (id < 0 || id >= t->n_vocab) return NULL;
    *len = t->piece_off[id + 1] - t->piece_off[id];
    return (const char *)t->piece_bytes + t->piece_off[id];
}

int32_t tokenizer_n_vocab(const Tokenizer *t) { return t->n_vocab; }
int32_t tokenizer_bos(const Tokenizer *t) { return t->bos; }
int32_t tokenizer_eos(const Tokenizer *t) { return t->eos; }
int tokenizer_is_eog(const Tokenizer *t, int32_t id) { return id >= 0 && id < t->n_vocab && (t->attr[id] & TOKEN_EOG); }
int tokenizer_is_control(const Tokenizer *t, int32_t id)
{
    return id >= 0 && id < t->n_vocab && (t->attr[id] & TOKEN_CONTROL);
}

/* ---- pre-tokenizer: the llama3-family regex by hand ------------------------ */

typedef struct {
    const uint8_t *s;
    size_t end;       /* the fragment ends here: the regex's end of text */
} Text;

/* Class and length (1..4) of the character at p. */
static int char_at(const Text *x, size_t p, int *cls)
{
    uint32_t cp;
    int l = utf8_next(x->s + p, x->end - p, &cp);
    *cls = unicode_class(cp);
    return l > 0 ? l : 1;
}

static int is_crlf(const Text *x, size_t p) { return x->s[p] == '\r' || x->s[p] == '\n'; }

static int lower(uint8_t c) { return c >= 'A' && c <= 'Z' ? c + 32 : c; }

/* End of the whitespace run starting at p; *last = start of its last char. */
static size_t space_run(const Text *x, size_t p, size_t *last)
{
    int cls;
    *last = p;
    while (p < x->end) {
        int l = char_at(x, p, &cls);
        if (cls != UCLASS_SPACE) break;
        *last = p;
        p += (size_t)l;
    }
    return p;
}

/* End of the pre-token that starts at p (the first alternative that matches,
 * as a backtracking regex engine picks it). */
static size_t pretok_next(const Text *x, size_t p, int max_digits)
{
    int cls, cls2;
    size_t n = x->end - p;
    /* (?i:'s|'t|'re|'ve|'m|'ll|'d) */
    if (x->s[p] == '\'' && n >= 2) {
        int a = lower(x->s[p + 1]), b = n >= 3 ? lower(x->s[p + 2]) : 0;
        if (a == 's' || a == 't' || a == 'm' || a == 'd') return p + 2;
        if ((a == 'r' && b == 'e') || (a == 'v' && b == 'e') || (a == 'l' && b == 'l')) return p + 3;
    }
    int l = char_at(x, p, &cls);
    /* [^\r\n\p{L}\p{N}]?\p{L}+ */
    size_t q = p;
    if (cls != UCLASS_LETTER && cls != UCLASS_NUMBER && !is_crlf(x, p) && p + (size_t)l < x->end) q = p + (size_t)l;
    if (q < x->end) {
        int lq = char_at(x, q, &cls2);
        if (cls2 == UCLASS_LETTER) {
            q += (size_t)lq;
            while (q < x->end) {
                lq = char_at(x, q, &cls2);
                if (cls2 != UCLASS_LETTER) break;
                q += (size_t)lq;
            }
            return q;
        }
    }
    /* \p{N}{1,max_digits} */
    if (cls == UCLASS_NUMBER) {
        q = p + (size_t)l;
        for (int d = 1; d < max_digits && q < x->end; d++) {
            int lq = char_at(x, q, &cls2);
            if (cls2 != UCLASS_NUMBER) break;
            q += (size_t)lq;
        }
        return q;
    }
    /* ?[^\s\p{L}\p{N}]+[\r\n]* */
    q = x->s[p] == ' ' ? p + 1 : p;
    if (q < x->end && char_at(x, q, &cls2) > 0 && cls2 == UCLASS_OTHER) {
        while (q < x->end) {
            int lq = char_at(x, q, &cls2);
            if (cls2 != UCLASS_OTHER) break;
            q += (size_t)lq;
        }
        while (q < x->end && is_crlf(x, q)) q++;
        return q;
    }
    if (cls == UCLASS_SPACE) {
        size_t last, j = space_run(x, p, &last);
        /* \s*[\r\n]+ : up to the last CR/LF of the run */
        for (size_t k = j; k > p; k--)
            if (is_crlf(x, k - 1)) return k;
        /* \s+(?!\S) : all of it at the end of text, else all but its last char */
        if (j == x->end) return j;
        if (last > p) return last;
        /* \s+ */
        return j;
    }
    return p + (size_t)l; /* not reached: every character is L, N, space or other */
}

/* ---- BPE over one pre-token ------------------------------------------------ */
/* Symbols start as byte tokens; the adjacent pair with the lowest merge rank
 * (leftmost on a tie) is merged until no pair has a rank. The pairs live in
 * an indexed min-heap keyed by (rank, left symbol index). */

static int heap_less(const Tokenizer *t, int32_t a, int32_t b)
{
    return t->pair_rank[a] < t->pair_rank[b] || (t->pair_rank[a] == t->pair_rank[b] && a < b);
}

static void heap_set(Tokenizer *t, int32_t k, int32_t sym)
{
    t->heap[k] = sym;
    t->heap_pos[sym] = k;
}

static void heap_up(Tokenizer *t, int32_t k)
{
    int32_t sym = t->heap[k];
    while (k > 0) {
        int32_t parent = (k - 1) / 2;
        if (!heap_less(t, sym, t->heap[parent])) break;
        heap_set(t, k, t->heap[parent]);
        k = parent;
    }
    heap_set(t, k, sym);
}

static void heap_down(Tokenizer *t, int32_t k, int32_t n)
{
    int32_t sym = t->heap[k];
    for (;;) {
        int32_t c = 2 * k + 1;
        if (c >= n) break;
        if (c + 1 < n && heap_less(t, t->heap[c + 1], t->heap[c])) c++;
        if (!heap_less(t, t->heap[c], sym)) break;
        heap_set(t, k, t->heap[c]);
        k = c;
    }
    heap_set(t, k, sym);
}

static void heap_remove(Tokenizer *t, int32_t sym, int32_t *n)
{
    int32_t k = t->heap_pos[sym];
    if (k < 0) return;
    t->heap_pos[sym] = -1;
    (*n)--;
    if (k == *n) return;
    int32_t moved = t->heap[*n];
    heap_set(t, k, moved);
    heap_up(t, k);
    heap_down(t, t->heap_pos[moved], *n);
}

/* Recomputes the pair (sym, next) and its place in the heap. */
static void pair_update(Tokenizer *t, int32_t sym, int32_t *n)
{
    int32_t nx = t->sym_next[sym];
    const TokMerge *m = nx >= 0 ? find_merge(t, t->sym_id[sym], t->sym_id[nx]) : NULL;
    if (!m) {
        heap_remove(t, sym, n);
        return;
    }
    t->pair_rank[sym] = m->rank;
    t->pair_merged[sym] = (int32_t)m->merged - 1;
    int32_t k = t->heap_pos[sym];
    if (k < 0) {
        k = (*n)++;
        heap_set(t, k, sym);
    }
    heap_up(t, k);
    heap_down(t, t->heap_pos[sym], *n);
}

static int bpe_word(Tokenizer *t, const uint8_t *w, int32_t len, int32_t *ids, int cap, int *n_out)
{
    for (int32_t i = 0; i < len; i++) {
        t->sym_id[i] = t->byte_token[w[i]];
        t->sym_prev[i] = i - 1;
        t->sym_next[i] = i + 1 < len ? i + 1 : -1;
        t->heap_pos[i] = -1;
    }
    int32_t n = 0;
    for (int32_t i = 0; i + 1 < len; i++) pair_update(t, i, &n);
    while (n > 0) {
        int32_t i = t->heap[0], j = t->sym_next[i];
        t->sym_id[i] = t->pair_merged[i];
        heap_remove(t, j, &n);
        t->sym_next[i] = t->sym_next[j];
        if (t->sym_next[j] >= 0) t->sym_prev[t->sym_next[j]] = i;
        pair_update(t, i, &n);
        if (t->sym_prev[i] >= 0) pair_update(t, t->sym_prev[i], &n);
    }
    for (int32_t i = 0; i >= 0 && len > 0; i = t->sym_next[i]) {
        if (*n_out >= cap) return -1;
        ids[(*n_out)++] = t->sym_id[i];
    }
    return 0;
}

/* Pre-tokenizes text[a..b) (a fragment between special tokens) and BPEs each piece. */
static int encode_fragment(Tokenizer *t, const uint8_t *s, size_t a, size_t b, int32_t *ids, int cap, int *n_out)
{
    Text x = {s, b};
    int max_digits = pretok_specs[t->pretok].max_digits;
    for (size_t p = a; p < b;) {
        size_t e = pretok_next(&x, p, max_digits);
        /* the piece's bytes; an invalid byte becomes U+FFFD's bytes */
        int32_t wn = 0;
        for (size_t q = p; q < e;) {
            uint32_t cp;
            int l = utf8_next(s + q, e - q, &cp);
            if (l < 0) {
                t->word[wn++] = 0xEF, t->word[wn++] = 0xBF, t->word[wn++] = 0xBD;
                q++;
            } else {
                memcpy(t->word + wn, s + q, (size_t)l);
                wn += l;
                q += (size_t)l;
            }
        }
        if (bpe_word(t, t->word, wn, ids, cap, n_out) != 0) return -1;
        p = e;
    }
    return 0;
}

/* Marks where special tokens sit: longest token first, each one's
 * occurrences left to right in text not yet claimed (llama.cpp's order). */
static void find_specials(Tokenizer *t, const uint8_t *s, size_t len, int parse_special)
{
    int32_t *at = t->special_at;
    for (size_t i = 0; i < len; i++) at[i] = -1;
    for (int32_t k = 0; k < t->n_specials; k++) {
        int32_t id = t->specials[k];
        if (!parse_special && (t->attr[id] & (TOKEN_CONTROL | TOKEN_UNKNOWN))) continue;
        const uint8_t *tx = t->piece_bytes + t->piece_off[id];
        size_t tl = t->piece_off[id + 1] - t->piece_off[id];
        if (tl > len) continue;
        size_t p = 0;
        while (p + tl <= len) {
            const uint8_t *hit = memchr(s + p, tx[0], len - tl + 1 - p);
            if (!hit) break;
            size_t c = (size_t)(hit - s);
            int ok = memcmp(s + c, tx, tl) == 0;
            for (size_t i = 0; ok && i < tl; i++) ok = at[c + i] == -1;
            if (!ok) {
                p = c + 1;
                continue;
            }
            at[c] = id;
            for (size_t i = 1; i < tl; i++) at[c + i] = -2;
            p = c + tl;
        }
    }
}

int tokenizer_encode(Tokenizer *t, const char *text, size_t len, int parse_special, int32_t *ids, int cap)
{
    if (len > t->max_text || cap < 0) return -1;
    const uint8_t *s = (const uint8_t *)text;
    int n_out = 0;
    find_specials(t, s, len, parse_special);
    for (size_t i = 0; i < len;) {
        int32_t id = t->special_at[i];
        if (id >= 0) {
            if (n_out >= cap) return -1;
            ids[n_out++] = id;
            i += t->piece_off[id + 1] - t->piece_off[id];
            continue;
        }
        size_t j = i;
        while (j < len && t->special_at[j] == -1) j++;
        if (encode_fragment(t, s, i, j, ids, cap, &n_out) != 0) return -1;
        i = j;
    }
    return n_out;
}

/* ---- streaming decoder ----------------------------------------------------- */

void token_stream_init(TokenStream *s) { s->n_pending = 0; }

size_t token_stream_out_max(const Tokenizer *t) { return 3 * ((size_t)t->max_piece + 4); }

static size_t stream_emit_ready(TokenStream *s, char *out, int final)
{
    size_t o = 0;
    while (s->n_pending > 0) {
        int r = utf8_strict_len(s->pending, (size_t)s->n_pending);
        if (r == 0 && !final) break;
        int drop;
        if (r > 0) {
            memcpy(out + o, s->pending, (size_t)r);
            o += (size_t)r;
            drop = r;
        } else {
            memcpy(out + o, "\xEF\xBF\xBD", 3);
            o += 3;
            drop = 1;
        }
        s->n_pending -= drop;
        memmove(s->pending, s->pending + drop, (size_t)s->n_pending);
    }
    return o;
}

int token_stream_push(TokenStream *s, const Tokenizer *t, int32_t id, char *out, size_t cap)
{
    size_t len;
    const char *p = tokenizer_piece(t, id, &len);
    if (!p || cap < token_stream_out_max(t)) return -1;
    size_t o = 0;
    for (size_t i = 0; i < len; i++) {
        s->pending[s->n_pending++] = (uint8_t)p[i];
        o += stream_emit_ready(s, out + o, 0);
    }
    return (int)o;
}

int token_stream_flush(TokenStream *s, char *out, size_t cap)
{
    if (cap < 12) return -1;
    return (int)stream_emit_ready(s, out, 1);
}
