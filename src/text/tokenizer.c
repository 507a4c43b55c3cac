/* tokenizer.c - byte-level BPE and SentencePiece-style BPE from GGUF
 * metadata (see tokenizer.h); WordPiece's words are in wordpiece.c. */
#include "tokenizer.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "pretokenizer.h"
#include "unicode.h"
#include "wordpiece.h"

/* Token texts that llama.cpp always treats as control tokens (by name), and
 * the subset that ends generation. Mirrors llama-vocab.cpp. */
static const char *const eog_names[] = {
    "<|eot_id|>", "<|im_end|>", "<|end|>", "<|return|>", "<|call|>", "<|flush|>", "<|calls|>",
    "<end_of_turn>", "<|endoftext|>", "</s>", "<|eom_id|>", "<EOT>", "_<EOT>", "[EOT]", "[EOS]",
    "<|end_of_text|>", "<end_of_utterance>", "<eos>", "<turn|>", "<|tool_response>",
    /* FIM pad, repo and file separator tokens also end generation */
    "<|fim_pad|>", "<fim-pad>", "<fim_pad>", "<PAD>", "[PAD]",
    "<|fim_repo|>", "<|repo_name|>", "<fim-repo>", "<REPO>", "<reponame>",
    "<|file_sep|>",
    "<\xEF\xBD\x9C" "end\xE2\x96\x81of\xE2\x96\x81sentence\xEF\xBD\x9C>", /* <｜end▁of▁sentence｜>: DeepSeek's */
    "[e~[", /* MiniMax's */
};
static const char *const control_names[] = {
    "<|fim_prefix|>", "<fim-prefix>", "<fim_prefix>", "<PRE>", "<|code_prefix|>", "<|prefix|>",
    "<|fim_suffix|>", "<fim-suffix>", "<fim_suffix>", "<SUF>", "<|code_suffix|>", "<|suffix|>",
    "<|fim_middle|>", "<fim-middle>", "<fim_middle>", "<MID>", "<|code_middle|>", "<|middle|>",
    /* DeepSeek's <｜fim▁begin｜>, <｜fim▁hole｜>, <｜fim▁end｜> */
    "<\xEF\xBD\x9C" "fim\xE2\x96\x81" "begin\xEF\xBD\x9C>", "<\xEF\xBD\x9C" "fim\xE2\x96\x81" "hole\xEF\xBD\x9C>",
    "<\xEF\xBD\x9C" "fim\xE2\x96\x81" "end\xEF\xBD\x9C>",
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
    err->status = PITH_BAD_INPUT;
    return -1;
}

/* ---- metadata the tokenizer needs ----------------------------------------- */

typedef struct {
    GgufKV tokens, token_type, merges, scores;
    int has_tokens, has_token_type, has_merges, has_scores, has_model, has_pre;
    char model[32], pre[64];
    GgufKV model_kv, pre_kv;
} TokMeta;

static void meta_take(TokMeta *m, Gguf *g, const GgufKV *kv)
{
    if (strcmp(kv->key, "tokenizer.ggml.tokens") == 0) m->tokens = *kv, m->has_tokens = 1;
    else if (strcmp(kv->key, "tokenizer.ggml.token_type") == 0) m->token_type = *kv, m->has_token_type = 1;
    else if (strcmp(kv->key, "tokenizer.ggml.merges") == 0) m->merges = *kv, m->has_merges = 1;
    else if (strcmp(kv->key, "tokenizer.ggml.scores") == 0) m->scores = *kv, m->has_scores = 1;
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

/* Checks the header-level facts; sets *kind, *spm_texts (Tokenizer.spm_texts)
 * and *pretok (-1 for SPM, gemma4 and WPM). */
static int meta_check(const TokMeta *m, const Gguf *g, int *kind, int *spm_texts, int *pretok, GgufError *err)
{
    if (!m->has_model) return fail(err, g, 0, 0, "tokenizer.ggml.model is missing (no tokenizer in this file)");
    int is_string = m->model_kv.type == GGUF_TYPE_STRING;
    *spm_texts = 1;
    if (is_string && strcmp(m->model, "gpt2") == 0) *kind = TOKENIZER_BPE, *spm_texts = 0;
    else if (is_string && strcmp(m->model, "llama") == 0) *kind = TOKENIZER_SPM;
    else if (is_string && strcmp(m->model, "gemma4") == 0) *kind = TOKENIZER_BPE;
    else if (is_string && strcmp(m->model, "bert") == 0) *kind = TOKENIZER_WPM;
    else {
        fail(err, g, m->model_kv.file_index, m->model_kv.value_offset,
             "tokenizer.ggml.model '%s' is not supported (supported: 'gpt2' byte-level BPE, "
             "'llama' SentencePiece BPE, 'gemma4' BPE on SentencePiece-style texts, 'bert' WordPiece)", m->model);
        err->status = PITH_UNSUPPORTED;
        return -1;
    }
    *pretok = -1;
    if (!*spm_texts) {
        /* SPM and WPM have no pre-tokenizer: llama.cpp ignores
         * tokenizer.ggml.pre there, and for gemma4 it sets "gemma4"
         * whatever the file says (gemma4_fragment). Without the key
         * llama.cpp splits with its "default". */
        if (m->has_pre && m->pre_kv.type != GGUF_TYPE_STRING)
            return fail(err, g, m->pre_kv.file_index, m->pre_kv.value_offset, "tokenizer.ggml.pre is not a string");
        *pretok = pretok_find(m->has_pre ? m->pre : NULL);
        if (*pretok < 0) {
            fail(err, g, m->pre_kv.file_index, m->pre_kv.value_offset,
                 "pre-tokenizer '%s' (tokenizer.ggml.pre) is not supported (the names pith knows: its README, "
                 "Tokenizers)", m->pre);
            err->status = PITH_UNSUPPORTED;
            return -1;
        }
    }
    if (!m->has_tokens) return fail(err, g, 0, 0, "tokenizer.ggml.tokens is missing");
    const GgufKV *k = &m->tokens;
    uint64_t min_tokens = *spm_texts ? 1 : 256; /* byte-level BPE needs its 256 byte tokens */
    if (k->type != GGUF_TYPE_ARRAY || k->arr_type != GGUF_TYPE_STRING)
        return fail(err, g, k->file_index, k->value_offset, "tokenizer.ggml.tokens is not an array of strings");
    if (k->arr_len < min_tokens || k->arr_len > (uint64_t)INT32_MAX / 4)
        return fail(err, g, k->file_index, k->value_offset, "tokenizer.ggml.tokens has %llu tokens (need %llu..%d)",
                    (unsigned long long)k->arr_len, (unsigned long long)min_tokens, INT32_MAX / 4);
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
    if (*kind == TOKENIZER_SPM) {
        if (!m->has_scores) return fail(err, g, 0, 0, "tokenizer.ggml.scores is missing (needed by the llama tokenizer)");
        k = &m->scores;
        if (k->type != GGUF_TYPE_ARRAY || k->arr_type != GGUF_TYPE_FLOAT32)
            return fail(err, g, k->file_index, k->value_offset, "tokenizer.ggml.scores is not an array of f32");
        if (k->arr_len != m->tokens.arr_len || value_bytes(k) != 4 * k->arr_len)
            return fail(err, g, k->file_index, k->value_offset,
                        "tokenizer.ggml.scores has %llu entries but there are %llu tokens",
                        (unsigned long long)k->arr_len, (unsigned long long)m->tokens.arr_len);
        return 0;
    }
    if (*kind == TOKENIZER_WPM) return 0; /* no merges, no scores */
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
static uint64_t read_buffer_bytes(const Gguf *g, const TokMeta *m, int kind)
{
    const GgufKV *kvs[3] = {&m->tokens, m->has_token_type ? &m->token_type : NULL,
                            kind == TOKENIZER_SPM ? &m->scores : kind == TOKENIZER_BPE ? &m->merges : NULL};
    uint64_t most = 0;
    for (int i = 0; i < 3; i++) {
        if (!kvs[i] || g->files[kvs[i]->file_index].map) continue;
        if (value_bytes(kvs[i]) > most) most = value_bytes(kvs[i]);
    }
    return most;
}

/* Merges in the BPE hash (none for SPM). */
static uint64_t merge_count(const TokMeta *m, int kind) { return kind == TOKENIZER_BPE ? m->merges.arr_len : 0; }

/* Scratch per encode: special_at (4/byte), word (3/byte: a space can grow
 * to U+2581, invalid UTF-8 to U+FFFD), 7 symbol arrays of 4 bytes indexed
 * by word bytes (BPE and SPM; WordPiece has no symbols). */
static void plan_scratch(Plan *p, uint64_t max_text, int kind)
{
    uint64_t n = max_text + 1;
    plan_add(p, "tokenizer special marks", plan_mul(p, n, 4));
    plan_add(p, "tokenizer word", plan_mul(p, n, 3));
    if (kind != TOKENIZER_WPM) plan_add(p, "tokenizer bpe symbols", plan_mul(p, plan_mul(p, n, 3), 7 * 4));
}

int tokenizer_plan(Gguf *g, uint64_t max_text_bytes, Plan *p, GgufError *err)
{
    TokMeta m;
    memset(&m, 0, sizeof m);
    GgufScanCallbacks cb = {on_kv, NULL, &m};
    if (gguf_walk(g, &cb, err) != 0) return -1;
    int kind, spm_texts, pretok;
    if (meta_check(&m, g, &kind, &spm_texts, &pretok, err) != 0) return -1;
    if (max_text_bytes > MAX_TEXT_LIMIT)
        return fail(err, g, 0, 0, "text of %llu bytes is longer than the tokenizer accepts (%llu)",
                    (unsigned long long)max_text_bytes, MAX_TEXT_LIMIT);
    uint64_t n = m.tokens.arr_len, nm = merge_count(&m, kind);
    plan_add(p, "tokenizer attributes", n);
    plan_add(p, "tokenizer piece offsets", plan_mul(p, n + 1, 4));
    plan_add(p, "tokenizer pieces", value_bytes(&m.tokens));
    plan_add(p, "tokenizer text hash", plan_mul(p, hash_slots(n), 4));
    plan_add(p, "tokenizer merge hash", plan_mul(p, hash_slots(nm), sizeof(TokMerge)));
    plan_add(p, "tokenizer specials", plan_mul(p, n, 4));
    if (!spm_texts) plan_add(p, "tokenizer pre-tokenizer", sizeof(Pretokenizer));
    if (kind == TOKENIZER_SPM) plan_add(p, "tokenizer scores", plan_mul(p, n, 4));
    if (spm_texts) {
        plan_add(p, "tokenizer raw offsets", plan_mul(p, n + 1, 4));
        plan_add(p, "tokenizer raw texts", value_bytes(&m.tokens));
        plan_add(p, "tokenizer raw hash", plan_mul(p, hash_slots(n), 4));
    }
    uint64_t rb = read_buffer_bytes(g, &m, kind);
    if (rb) plan_add(p, "tokenizer file read", rb);
    plan_scratch(p, max_text_bytes, kind);
    return 0;
}

/* ---- hashing --------------------------------------------------------------- */

/* FNV-1a, a byte at a time (so WordPiece hashes every prefix in one pass) */
#define FNV_START 1469598103934665603ull
static uint64_t fnv_step(uint64_t h, uint8_t c) { return (h ^ c) * 1099511628211ull; }
static uint64_t fnv_end(uint64_t h) { return h ^ (h >> 29); }

static uint64_t hash_bytes(const uint8_t *s, size_t n)
{
    uint64_t h = FNV_START;
    for (size_t i = 0; i < n; i++) h = fnv_step(h, s[i]);
    return fnv_end(h);
}

/* A table of token texts: offsets into bytes, and an open-addressing hash
 * of id + 1. Both the decoded pieces and (spm_texts) the stored texts use one. */
typedef struct {
    const uint32_t *off;
    const uint8_t *bytes;
    uint32_t *hash;
    uint64_t mask;
} TextTable;

static TextTable pieces_table(const Tokenizer *t)
{
    TextTable x = {t->piece_off, t->piece_bytes, t->text_hash, t->text_hash_mask};
    return x;
}

static TextTable raw_table(const Tokenizer *t)
{
    TextTable x = {t->raw_off, t->raw_bytes, t->raw_hash, t->text_hash_mask};
    return x;
}

/* Slot of the text s[0..n) with hash h: where it is, or the empty slot it would take. */
static uint64_t table_slot_hashed(const TextTable *x, uint64_t h, const uint8_t *s, size_t n)
{
    uint64_t i = h & x->mask;
    for (;;) {
        uint32_t v = x->hash[i];
        if (v == 0) return i;
        uint32_t id = v - 1;
        if (x->off[id + 1] - x->off[id] == n && memcmp(x->bytes + x->off[id], s, n) == 0) return i;
        i = (i + 1) & x->mask;
    }
}

static uint64_t table_slot(const TextTable *x, const uint8_t *s, size_t n)
{
    return table_slot_hashed(x, hash_bytes(s, n), s, n);
}

static int32_t table_find(const TextTable *x, const uint8_t *s, size_t n)
{
    return (int32_t)x->hash[table_slot(x, s, n)] - 1;
}

/* Later ids win over earlier ones with the same text, as in llama.cpp. */
static void table_insert(TextTable *x, uint32_t id)
{
    x->hash[table_slot(x, x->bytes + x->off[id], x->off[id + 1] - x->off[id])] = id + 1;
}

/* Id of the token whose decoded bytes are s[0..n), or -1. */
static int32_t find_bytes(const Tokenizer *t, const uint8_t *s, size_t n)
{
    TextTable x = pieces_table(t);
    return table_find(&x, s, n);
}

/* spm_texts: id of the token whose stored text is s[0..n), or -1. */
static int32_t find_raw(const Tokenizer *t, const uint8_t *s, size_t n)
{
    TextTable x = raw_table(t);
    return table_find(&x, s, n);
}

/* BPE: id of the token whose text, as the merges name it, is s[0..n):
 * stored (gemma4) or decoded from the byte-level alphabet. */
static int32_t find_merge_text(const Tokenizer *t, const uint8_t *s, size_t n)
{
    return t->spm_texts ? find_raw(t, s, n) : find_bytes(t, s, n);
}

/* WPM: every prefix up to the longest token, hashed as it grows. */
static int32_t longest_stored_prefix(const Tokenizer *t, const uint8_t *s, size_t n, size_t *len)
{
    TextTable x = raw_table(t);
    int32_t best = -1;
    uint64_t h = FNV_START;
    if (n > t->max_token_len) n = t->max_token_len;
    for (size_t k = 0; k < n; k++) {
        h = fnv_step(h, s[k]);
        int32_t id = (int32_t)x.hash[table_slot_hashed(&x, fnv_end(h), s, k + 1)] - 1;
        if (id >= 0) best = id, *len = k + 1;
    }
    return best;
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

/* U+2581 (LOWER ONE EIGHTH BLOCK), SentencePiece's visible space. */
#define SPM_SPACE "\xE2\x96\x81"

/* SPM normal token text -> bytes: U+2581 becomes a space. out needs n bytes. */
static size_t spm_unescape(const uint8_t *s, size_t n, uint8_t *out)
{
    size_t o = 0;
    for (size_t i = 0; i < n;) {
        if (n - i >= 3 && memcmp(s + i, SPM_SPACE, 3) == 0) {
            out[o++] = ' ';
            i += 3;
        } else {
            out[o++] = s[i++];
        }
    }
    return o;
}

static int load_tokens(Tokenizer *t, Gguf *g, const TokMeta *m, uint8_t *rbuf, GgufError *err)
{
    const GgufKV *k = &m->tokens;
    const uint8_t *b = gguf_value_bytes(g, k, rbuf);
    if (!b) return fail(err, g, k->file_index, k->value_offset, "cannot read tokenizer.ggml.tokens");
    uint64_t total = value_bytes(k), pos = 0, out = 0, raw_out = 0;
    uint32_t ls = gguf_len_size(g);
    TextTable pieces = pieces_table(t), raw = raw_table(t);
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
        } else if (t->spm_texts) {
            dn = spm_unescape(s, (size_t)len, dst); /* WPM: "\u2581the" is " the", "##ing" was stored "ing" */
        } else {
            dn = bytelevel_decode(t, s, (size_t)len, dst);
        }
        out += dn;
        t->piece_off[id + 1] = (uint32_t)out;
        if (dn > t->max_piece) t->max_piece = (uint32_t)dn;
        if (len > t->max_token_len) t->max_token_len = (uint32_t)len;
        if (t->kind == TOKENIZER_WPM && len > WORDPIECE_TOKEN_MAX)
            return fail(err, g, k->file_index, k->value_offset + pos,
                        "token %d is %llu bytes (WordPiece tokens: at most %d)", id, (unsigned long long)len,
                        WORDPIECE_TOKEN_MAX);
        table_insert(&pieces, (uint32_t)id);
        if (t->spm_texts) {
            memcpy(t->raw_bytes + raw_out, s, (size_t)len);
            raw_out += len;
            t->raw_off[id + 1] = (uint32_t)raw_out;
            table_insert(&raw, (uint32_t)id);
        }
        pos += len;
    }
    return 0;
truncated:
    return fail(err, g, k->file_index, k->value_offset + pos, "tokenizer.ggml.tokens is truncated");
}

/* SPM scores as keys that sort the other way: the highest score gets the
 * smallest key, so the merge heap (smallest first) takes it. -0 counts as
 * +0; NaN is refused (it has no place in the order). */
static int load_scores(Tokenizer *t, Gguf *g, const TokMeta *m, uint8_t *rbuf, GgufError *err)
{
    const GgufKV *k = &m->scores;
    const uint8_t *b = gguf_value_bytes(g, k, rbuf);
    if (!b) return fail(err, g, k->file_index, k->value_offset, "cannot read tokenizer.ggml.scores");
    for (int32_t id = 0; id < t->n_vocab; id++) {
        uint32_t bits = (uint32_t)read_len(b + 4ull * (uint32_t)id, 4);
        if ((bits & 0x7F800000u) == 0x7F800000u && (bits & 0x007FFFFFu))
            return fail(err, g, k->file_index, k->value_offset + 4ull * (uint32_t)id, "token %d has a NaN score", id);
        if (bits == 0x80000000u) bits = 0;
        uint32_t ordered = (bits & 0x80000000u) ? ~bits : bits | 0x80000000u; /* grows with the float */
        t->score_key[id] = ~ordered;
    }
    return 0;
}

/* SPM byte fallback: the token "<0xNN>", else the token that is the byte
 * itself (as llama.cpp looks them up), else the unknown token. gemma4's
 * BPE only looks for "<0xNN>" (-1 if none: llama.cpp drops the byte). */
static int spm_byte_tokens(Tokenizer *t, Gguf *g, const TokMeta *m, GgufError *err)
{
    static const char hex[] = "0123456789ABCDEF";
    for (int b = 0; b < 256; b++) {
        uint8_t name[6] = {'<', '0', 'x', (uint8_t)hex[b >> 4], (uint8_t)hex[b & 15], '>'}, c = (uint8_t)b;
        int32_t id = find_raw(t, name, 6);
        if (t->kind == TOKENIZER_BPE) {
            t->byte_token[b] = id;
            continue;
        }
        if (id < 0) id = find_raw(t, &c, 1);
        if (id < 0) id = t->unk;
        if (id < 0)
            return fail(err, g, m->tokens.file_index, m->tokens.value_offset,
                        "tokenizer.ggml.tokens has no token for byte 0x%02X and no unknown token", b);
        t->byte_token[b] = id;
    }
    return 0;
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
        size_t na = (size_t)sp, nb = (size_t)(len - sp - 1);
        if (t->spm_texts) {
            memcpy(both, s, na);
            memcpy(both + na, s + sp + 1, nb);
        } else {
            na = bytelevel_decode(t, s, na, both);
            nb = bytelevel_decode(t, s + sp + 1, nb, both + na);
        }
        int32_t a = find_merge_text(t, both, na), c = find_merge_text(t, both + na, nb);
        int32_t ab = find_merge_text(t, both, na + nb);
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

/* The encode scratch, as plan_scratch sized it. */
static int carve_scratch(Tokenizer *t, uint64_t max_text, Arena *a)
{
    uint64_t n = max_text + 1, w = 3 * n;
    t->special_at = arena_take(a, n * 4);
    t->word = arena_take(a, n * 3);
    t->max_text = max_text;
    if (t->kind == TOKENIZER_WPM) return t->special_at && t->word ? 0 : -1;
    int32_t *s = arena_take(a, w * 7 * 4);
    if (!t->special_at || !t->word || !s) return -1;
    t->sym_id = s;
    t->sym_prev = s + w;
    t->sym_next = s + 2 * w;
    t->pair_merged = s + 3 * w;
    t->heap = s + 4 * w;
    t->heap_pos = s + 5 * w;
    t->pair_rank = (uint32_t *)(s + 6 * w);
    return 0;
}

int tokenizer_load(Tokenizer *t, Gguf *g, uint64_t max_text_bytes, Arena *a, GgufError *err)
{
    memset(t, 0, sizeof *t);
    TokMeta m;
    memset(&m, 0, sizeof m);
    const char *keys[] = {"tokenizer.ggml.tokens", "tokenizer.ggml.token_type", "tokenizer.ggml.merges",
                          "tokenizer.ggml.scores", "tokenizer.ggml.model", "tokenizer.ggml.pre"};
    for (size_t i = 0; i < ARRAY_LEN(keys); i++) {
        const GgufKV *kv = gguf_find_key(g, keys[i]);
        if (kv) meta_take(&m, g, kv);
    }
    if (meta_check(&m, g, &t->kind, &t->spm_texts, &t->pretok, err) != 0) return -1;
    int spm = t->kind == TOKENIZER_SPM, wpm = t->kind == TOKENIZER_WPM;
    int gemma4 = t->kind == TOKENIZER_BPE && t->spm_texts;

    /* sizes exactly as tokenizer_plan added them */
    uint64_t n = m.tokens.arr_len, nm = merge_count(&m, t->kind);
    t->n_vocab = (int32_t)n;
    t->attr = arena_take(a, n);
    t->piece_off = arena_take(a, (n + 1) * 4);
    t->piece_bytes = arena_take(a, value_bytes(&m.tokens));
    t->text_hash_mask = hash_slots(n) - 1;
    t->text_hash = arena_take(a, (t->text_hash_mask + 1) * 4);
    t->merge_hash_mask = hash_slots(nm) - 1;
    t->merge_hash = arena_take(a, (t->merge_hash_mask + 1) * sizeof(TokMerge));
    t->specials = arena_take(a, n * 4);
    int spm_ok = 1;
    if (t->pretok >= 0) {
        t->pre = arena_take(a, sizeof(Pretokenizer));
        if (t->pre && pretok_compile(t->pre, t->pretok, 1) != 0)
            return fail(err, g, 0, 0, "tokenizer: pre-tokenizer '%s' does not compile (a defect of pith's table)",
                        m.pre);
        spm_ok = t->pre != NULL;
    }
    if (spm) spm_ok = spm_ok && (t->score_key = arena_take(a, n * 4)) != NULL;
    if (t->spm_texts) {
        t->raw_off = arena_take(a, (n + 1) * 4);
        t->raw_bytes = arena_take(a, value_bytes(&m.tokens));
        t->raw_hash = arena_take(a, (t->text_hash_mask + 1) * 4);
        spm_ok = spm_ok && t->raw_off && t->raw_bytes && t->raw_hash;
    }
    uint64_t rb = read_buffer_bytes(g, &m, t->kind);
    uint8_t *rbuf = rb ? arena_take(a, rb) : NULL;
    if (!t->attr || !t->piece_off || !t->piece_bytes || !t->text_hash || !t->merge_hash || !t->specials || !spm_ok ||
        (rb && !rbuf))
        return fail(err, g, 0, 0, "tokenizer: arena too small (planner bug)");

    /* llama.cpp's defaults for the llama and bert models (an id past the
     * vocabulary is none), then the file's ids */
    t->bos = spm && n > 1 ? 1 : wpm && n > 101 ? 101 : -1;
    t->eos = spm && n > 2 ? 2 : -1;
    t->unk = spm ? 0 : wpm && n > 100 ? 100 : -1;
    t->sep = wpm && n > 102 ? 102 : -1;
    uint64_t v;
    if (gguf_get_uint(g, "tokenizer.ggml.bos_token_id", &v) == 0) t->bos = v < n ? (int32_t)v : -1;
    if (gguf_get_uint(g, "tokenizer.ggml.eos_token_id", &v) == 0) t->eos = v < n ? (int32_t)v : -1;
    if (gguf_get_uint(g, "tokenizer.ggml.unknown_token_id", &v) == 0) t->unk = v < n ? (int32_t)v : -1;
    if (wpm && gguf_get_uint(g, "tokenizer.ggml.seperator_token_id", &v) == 0) t->sep = v < n ? (int32_t)v : -1;
    if (gguf_get_bool(g, "tokenizer.ggml.add_bos_token", &t->add_bos) != 0)
        t->add_bos = spm || wpm ? 1 : t->pre ? pretok_add_bos(t->pre) : 0;
    if (gemma4) t->add_bos = 1; /* llama.cpp forces it for Gemma 4, whatever the file says */
    /* BERT's normalizer (llama.cpp reads it for every model; only WPM uses it) */
    if (gguf_get_bool(g, "tokenizer.ggml.normalizer.lowercase", &t->lowercase) != 0) t->lowercase = 1;
    if (gguf_get_bool(g, "tokenizer.ggml.normalizer.strip_accents", &t->strip_accents) != 0)
        t->strip_accents = t->lowercase;
    t->add_space_prefix = 0;
    if (spm && gguf_get_bool(g, "tokenizer.ggml.add_space_prefix", &t->add_space_prefix) != 0) t->add_space_prefix = 1;

    build_byte_alphabet(t);
    if (load_types(t, g, &m, rbuf, err) != 0) return -1;
    if (load_tokens(t, g, &m, rbuf, err) != 0) return -1;
    if (t->spm_texts && !wpm) {
        if (spm_byte_tokens(t, g, &m, err) != 0) return -1;
    } else if (!wpm) {
        /* a byte without a token (-1) stays a symbol no merge takes and
         * gives no id, as in llama.cpp (falcon's vocabulary has no 0x03) */
        for (int b = 0; b < 256; b++) {
            uint8_t c = (uint8_t)b;
            t->byte_token[b] = find_bytes(t, &c, 1);
        }
    }
    if (spm ? load_scores(t, g, &m, rbuf, err) != 0 : !wpm && load_merges(t, g, &m, rbuf, err) != 0) return -1;

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

/* ---- merging symbols: an indexed heap of adjacent pairs -------------------- */
/* Both models merge the best adjacent pair until none is left: BPE the pair
 * with the lowest merge rank, SPM the pair whose text is the token with the
 * highest score; leftmost on a tie. Symbols are numbered by their first
 * position, so "leftmost" is the smaller number; each symbol keeps at most
 * one pair (with its right neighbour) in a min-heap keyed by
 * (pair_rank, symbol). A merge changes only the pairs on both sides of the
 * merged symbol, which are updated in place. */

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

/* Sets the pair of sym (rank, merged token) or removes it (merged < 0). */
static void heap_put(Tokenizer *t, int32_t sym, int32_t merged, uint32_t rank, int32_t *n)
{
    if (merged < 0) {
        heap_remove(t, sym, n);
        return;
    }
    t->pair_rank[sym] = rank;
    t->pair_merged[sym] = merged;
    int32_t k = t->heap_pos[sym];
    if (k < 0) {
        k = (*n)++;
        heap_set(t, k, sym);
    }
    heap_up(t, k);
    heap_down(t, t->heap_pos[sym], *n);
}

/* Merges the best pair into its left symbol; returns that symbol. */
static int32_t merge_best(Tokenizer *t, int32_t *n)
{
    int32_t i = t->heap[0], j = t->sym_next[i];
    heap_remove(t, j, n);
    t->sym_next[i] = t->sym_next[j];
    if (t->sym_next[j] >= 0) t->sym_prev[t->sym_next[j]] = i;
    return i;
}

/* ---- BPE over one pre-token ------------------------------------------------ */

/* Recomputes the pair (sym, next) from the merge table (a symbol that is no
 * token, id -1, merges with nothing). */
static void bpe_pair_update(Tokenizer *t, int32_t sym, int32_t *n)
{
    int32_t nx = t->sym_next[sym];
    const TokMerge *m =
        nx >= 0 && t->sym_id[sym] >= 0 && t->sym_id[nx] >= 0 ? find_merge(t, t->sym_id[sym], t->sym_id[nx]) : NULL;
    heap_put(t, sym, m ? (int32_t)m->merged - 1 : -1, m ? m->rank : 0, n);
}

/* Characters by their lead byte only, as llama.cpp cuts them: 0xC0-0xDF
 * starts 2 bytes, 0xE0-0xEF 3, 0xF0-0xFF 4, anything else 1 (cut short at
 * the end of the text). No byte is ever changed. */
static int32_t spm_char_len(uint8_t b) { return b < 0xC0 ? 1 : b < 0xE0 ? 2 : b < 0xF0 ? 3 : 4; }

/* BPE over w[0..len): byte-level, a symbol per byte; with spm_texts
 * (gemma4), a symbol per character, and a final symbol that is no token
 * becomes its bytes' <0xNN> tokens (llama.cpp's fallback). With whole_first
 * a word that is a token as a whole is that token (ignore_merges). */
static int bpe_word(Tokenizer *t, const uint8_t *w, int32_t len, int whole_first, int32_t *ids, int cap, int *n_out)
{
    if (len == 0) return 0;
    if (whole_first) {
        int32_t whole = find_merge_text(t, w, (size_t)len);
        if (whole >= 0) {
            if (*n_out >= cap) return -1;
            ids[(*n_out)++] = whole;
            return 0;
        }
    }
    int32_t prev = -1;
    for (int32_t i = 0; i < len;) {
        int32_t l = t->spm_texts ? spm_char_len(w[i]) : 1;
        if (l > len - i) l = len - i;
        t->sym_id[i] = t->spm_texts ? find_raw(t, w + i, (size_t)l) : t->byte_token[w[i]];
        t->sym_prev[i] = prev;
        t->sym_next[i] = i + l < len ? i + l : -1;
        t->heap_pos[i] = -1;
        prev = i;
        i += l;
    }
    int32_t n = 0;
    for (int32_t i = 0; i >= 0; i = t->sym_next[i]) bpe_pair_update(t, i, &n);
    while (n > 0) {
        int32_t merged = t->pair_merged[t->heap[0]];
        int32_t i = merge_best(t, &n);
        t->sym_id[i] = merged;
        bpe_pair_update(t, i, &n);
        if (t->sym_prev[i] >= 0) bpe_pair_update(t, t->sym_prev[i], &n);
    }
    for (int32_t i = 0; i >= 0; i = t->sym_next[i]) {
        int32_t id = t->sym_id[i], end = t->sym_next[i] >= 0 ? t->sym_next[i] : len;
        if (id >= 0) {
            if (*n_out >= cap) return -1;
            ids[(*n_out)++] = id;
            continue;
        }
        for (int32_t k = i; k < end; k++) {
            if (t->byte_token[w[k]] < 0) continue;
            if (*n_out >= cap) return -1;
            ids[(*n_out)++] = t->byte_token[w[k]];
        }
    }
    return 0;
}

typedef struct {
    Tokenizer *t;
    const uint8_t *s;
    int32_t *ids;
    int cap;
    int *n_out;
} BpeWalk;

/* BPEs the piece s[a..e) of the pre-tokenizer; an invalid byte becomes U+FFFD's bytes. */
static int bpe_piece(void *ctx, size_t a, size_t e)
{
    BpeWalk *w = ctx;
    Tokenizer *t = w->t;
    int32_t wn = 0;
    for (size_t q = a; q < e;) {
        uint32_t cp;
        int l = utf8_next(w->s + q, e - q, &cp);
        if (l < 0) {
            t->word[wn++] = 0xEF, t->word[wn++] = 0xBF, t->word[wn++] = 0xBD;
            q++;
        } else {
            memcpy(t->word + wn, w->s + q, (size_t)l);
            wn += l;
            q += (size_t)l;
        }
    }
    return bpe_word(t, t->word, wn, pretok_ignore_merges(t->pre), w->ids, w->cap, w->n_out);
}

/* Pre-tokenizes text[a..b) (a fragment between special tokens) and BPEs each piece. */
static int bpe_fragment(Tokenizer *t, const uint8_t *s, size_t a, size_t b, int32_t *ids, int cap, int *n_out)
{
    BpeWalk w = {t, s, ids, cap, n_out};
    return pretok_split(t->pre, s, a, b, bpe_piece, &w);
}

/* ---- gemma4 over one fragment ----------------------------------------------- */
/* llama.cpp's BPE with pre-type GEMMA4: every space becomes U+2581 and each
 * invalid byte U+FFFD; the fragment is split only into runs of newlines and
 * runs of anything else ("[^\n]+|[\n]+", which llama.cpp also splits by
 * hand; not a row of the pre-tokenizer table, as llama.cpp sets it for the
 * gemma4 model whatever tokenizer.ggml.pre says); each run is BPE'd over
 * characters. A
 * run of newlines that is a token is taken whole (llama.cpp's fix for
 * Gemma 4, whose merges would cut it otherwise). */
static int gemma4_fragment(Tokenizer *t, const uint8_t *s, size_t a, size_t b, int32_t *ids, int cap, int *n_out)
{
    int32_t wn = 0;
    for (size_t q = a; q < b;) {
        uint32_t cp;
        int l = utf8_next(s + q, b - q, &cp);
        if (l < 0 || s[q] == ' ') {
            memcpy(t->word + wn, s[q] == ' ' ? SPM_SPACE : "\xEF\xBF\xBD", 3);
            wn += 3, q++;
        } else {
            memcpy(t->word + wn, s + q, (size_t)l);
            wn += l, q += (size_t)l;
        }
    }
    for (int32_t p = 0; p < wn;) {
        int newlines = t->word[p] == '\n';
        int32_t e = p;
        while (e < wn && (t->word[e] == '\n') == newlines) e++;
        if (bpe_word(t, t->word + p, e - p, newlines, ids, cap, n_out) != 0) return -1;
        p = e;
    }
    return 0;
}

typedef struct {
    uint32_t *ends;
    int cap, n;
} EndsWalk;

static int note_end(void *ctx, size_t a, size_t e)
{
    (void)a;
    EndsWalk *w = ctx;
    if (w->n >= w->cap) return -1;
    w->ends[w->n++] = (uint32_t)e;
    return 0;
}

int tokenizer_pretokenize(const char *pre_name, const char *text, size_t len, uint32_t *ends, int cap)
{
    Pretokenizer pre; /* compiled on the stack: for tests and tools */
    int row = pre_name ? pretok_find(pre_name) : -1;
    if (row < 0 || cap < 0 || len > UINT32_MAX || pretok_compile(&pre, row, 1) != 0) return -1;
    EndsWalk w = {ends, cap, 0};
    if (pretok_split(&pre, (const uint8_t *)text, 0, len, note_end, &w) != 0) return -1;
    return w.n;
}

/* ---- SPM over one fragment -------------------------------------------------- */
/* Symbols are numbered by their first byte in the escaped word; a symbol
 * ends where the next one starts, so the text of a pair is the contiguous
 * word[sym .. end of next). */

static size_t spm_sym_end(const Tokenizer *t, int32_t sym, int32_t wlen)
{
    return (size_t)(t->sym_next[sym] >= 0 ? t->sym_next[sym] : wlen);
}

/* The pair (sym, next) is a candidate when its text is a token. */
static void spm_pair_update(Tokenizer *t, int32_t sym, int32_t wlen, int32_t *n)
{
    int32_t nx = t->sym_next[sym], id = -1;
    if (nx >= 0) id = find_raw(t, t->word + sym, spm_sym_end(t, nx, wlen) - (size_t)sym);
    heap_put(t, sym, id, id >= 0 ? t->score_key[id] : 0, n);
}

static int spm_fragment(Tokenizer *t, const uint8_t *s, size_t a, size_t b, int prefix, int32_t *ids, int cap,
                        int *n_out)
{
    /* the word: a space in front if asked, every space as U+2581 */
    int32_t wn = 0;
    if (prefix) memcpy(t->word, SPM_SPACE, 3), wn = 3;
    for (size_t q = a; q < b; q++) {
        if (s[q] == ' ') memcpy(t->word + wn, SPM_SPACE, 3), wn += 3;
        else t->word[wn++] = s[q];
    }
    if (wn == 0) return 0;
    int32_t prev = -1;
    for (int32_t i = 0; i < wn;) {
        int32_t l = spm_char_len(t->word[i]);
        if (l > wn - i) l = wn - i;
        t->sym_prev[i] = prev;
        t->sym_next[i] = i + l < wn ? i + l : -1;
        t->heap_pos[i] = -1;
        prev = i;
        i += l;
    }
    int32_t n = 0;
    for (int32_t i = 0; i >= 0; i = t->sym_next[i]) spm_pair_update(t, i, wn, &n);
    while (n > 0) {
        int32_t i = merge_best(t, &n);
        spm_pair_update(t, i, wn, &n);
        if (t->sym_prev[i] >= 0) spm_pair_update(t, t->sym_prev[i], wn, &n);
    }
    /* each symbol is a token (merges only make tokens) unless it is a
     * single character outside the vocabulary: then its bytes */
    for (int32_t i = 0; i >= 0; i = t->sym_next[i]) {
        size_t end = spm_sym_end(t, i, wn);
        int32_t id = find_raw(t, t->word + i, end - (size_t)i);
        for (size_t k = (size_t)i; k < end && id < 0; k++) {
            if (*n_out >= cap) return -1;
            ids[(*n_out)++] = t->byte_token[t->word[k]];
        }
        if (id >= 0) {
            if (*n_out >= cap) return -1;
            ids[(*n_out)++] = id;
        }
    }
    return 0;
}

/* ---- encoding --------------------------------------------------------------- */

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
    int after_special = 1; /* SPM: the text start counts as "after a special token" */
    find_specials(t, s, len, parse_special);
    for (size_t i = 0; i < len;) {
        int32_t id = t->special_at[i];
        if (id >= 0) {
            if (n_out >= cap) return -1;
            ids[n_out++] = id;
            i += t->piece_off[id + 1] - t->piece_off[id];
            after_special = 1;
            continue;
        }
        size_t j = i;
        while (j < len && t->special_at[j] == -1) j++;
        int r = t->kind == TOKENIZER_SPM
                    ? spm_fragment(t, s, i, j, t->add_space_prefix && after_special, ids, cap, &n_out)
                : t->kind == TOKENIZER_WPM ? wordpiece_fragment(t, s, i, j, longest_stored_prefix, ids, cap, &n_out)
                : t->spm_texts             ? gemma4_fragment(t, s, i, j, ids, cap, &n_out)
                                           : bpe_fragment(t, s, i, j, ids, cap, &n_out);
        if (r != 0) return -1;
        after_special = 0;
        i = j;
    }
    return n_out;
}

int tokenizer_encode_prompt(Tokenizer *t, const char *text, size_t len, int32_t *ids, int cap)
{
    /* WPM: [CLS] first and [SEP] last, always, as llama.cpp's add_special does there */
    int wpm = t->kind == TOKENIZER_WPM, sep = wpm && t->sep >= 0;
    if (cap < 1) return -1;
    int n = tokenizer_encode(t, text, len, 1, ids + 1, cap - 1 - sep);
    if (n < 0) return -1;
    if (t->bos >= 0 && (wpm || (t->add_bos && !(n > 0 && ids[1] == t->bos)))) ids[0] = t->bos, n++;
    else memmove(ids, ids + 1, (size_t)n * sizeof *ids);
    if (sep) ids[n++] = t->sep;
    return n;
}

const char *tokenizer_model_name(const Tokenizer *t)
{
    return t->kind == TOKENIZER_SPM ? "llama" : t->kind == TOKENIZER_WPM ? "bert" : t->spm_texts ? "gemma4" : "gpt2";
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
