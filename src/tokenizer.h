/* tokenizer.h - byte-level BPE (GPT-2 style, llama.cpp's "gpt2" tokenizer
 * model) read from GGUF metadata, with llama.cpp's behaviour as reference.
 *
 * Encoding text:
 *   1. special/added tokens (control, user-defined, unknown) are found in
 *      the text first, longest token first, as llama.cpp does;
 *   2. the text between them is split by the pre-tokenizer regex of the
 *      model (tokenizer.ggml.pre; only "qwen2" for now), written by hand;
 *   3. each piece is turned into bytes, one byte token per byte, and merged
 *      by BPE in rank order (lowest rank first, leftmost on a tie).
 * Invalid UTF-8 in the text never fails: each byte that does not start a
 * well-formed sequence is read as U+FFFD (so it becomes the three bytes
 * EF BF BD), exactly as llama.cpp does. (llama.cpp would throw on a 4-byte
 * form above U+10FFFF; here each of its bytes is invalid.)
 * llama.cpp's lstrip/rstrip token attributes are only set by model name for
 * a few non-Qwen models (jina, phi-3, modern-bert), so they are not applied:
 * text next to a special token is tokenized as its own fragment.
 *
 * Memory: tokenizer_plan() sizes every table from the GGUF header before
 * the arena exists; tokenizer_load() carves exactly those sizes. Vocabulary
 * strings are not copied: their decoded bytes (byte-level characters mapped
 * back to raw bytes) are written once into the arena, and a hash table maps
 * them to ids. Merges become a hash table (id, id) -> (rank, merged id). */
#ifndef PITH_TOKENIZER_H
#define PITH_TOKENIZER_H

#include <stddef.h>
#include <stdint.h>

#include "arena.h"
#include "gguf.h"

/* Token attributes (bits), from tokenizer.ggml.token_type plus llama.cpp's
 * name-based fixes (e.g. "<|im_end|>" is always control). */
enum {
    TOKEN_NORMAL = 1 << 0,       /* type 1 */
    TOKEN_UNKNOWN = 1 << 1,      /* type 2 */
    TOKEN_CONTROL = 1 << 2,      /* type 3 */
    TOKEN_USER_DEFINED = 1 << 3, /* type 4 */
    TOKEN_UNUSED = 1 << 4,       /* type 5 */
    TOKEN_BYTE = 1 << 5,         /* type 6 */
    TOKEN_EOG = 1 << 6,          /* ends generation (not a GGUF type) */
};

typedef struct {
    uint64_t key;     /* (left id << 32) | right id */
    uint32_t rank;    /* index in tokenizer.ggml.merges */
    uint32_t merged;  /* merged id + 1; 0 = empty slot */
} TokMerge;

typedef struct {
    int32_t n_vocab;
    int32_t bos, eos;         /* -1 when the model has none */
    int add_bos;              /* tokenizer.ggml.add_bos_token (default 0) */
    int pretok;               /* index in the pre-tokenizer table */
    uint32_t max_piece;       /* longest decoded piece, bytes */
    uint64_t max_text;        /* planned longest text, bytes */

    uint8_t *attr;            /* n_vocab TOKEN_* bits */
    uint32_t *piece_off;      /* n_vocab + 1 offsets into piece_bytes */
    uint8_t *piece_bytes;     /* decoded pieces, back to back */
    uint32_t *text_hash;      /* id + 1 by decoded bytes; 0 = empty */
    uint64_t text_hash_mask;
    TokMerge *merge_hash;
    uint64_t merge_hash_mask;
    int32_t *specials;        /* matched in text before BPE, longest first */
    int32_t n_specials;
    int32_t byte_token[256];  /* id of the token for each raw byte */
    int16_t cp_to_byte[324];  /* byte-level alphabet: code point -> byte, -1 */

    /* scratch for one encode, sized from max_text */
    int32_t *special_at;      /* per text byte: special id starting here, -1 free, -2 covered */
    uint8_t *word;            /* bytes of one pre-token (invalid bytes -> EF BF BD) */
    int32_t *sym_id, *sym_prev, *sym_next, *pair_merged, *heap, *heap_pos;
    uint32_t *pair_rank;
} Tokenizer;

/* Longest text tokenizer_plan accepts (symbol indices stay in int32). */
#define TOKENIZER_MAX_TEXT (1ull << 28)

/* Adds the tokenizer's tables and an encode scratch for texts of up to
 * max_text_bytes to the plan (after gguf_open, before the arena). Checks
 * what can be checked from the header alone (tokenizer model, pre-tokenizer,
 * key types) so a bad model fails before anything is mapped. Returns 0, or
 * -1 with err->msg. */
int tokenizer_plan(Gguf *g, uint64_t max_text_bytes, Plan *p, GgufError *err);
/* Builds the tables (after gguf_index), with the same max_text_bytes as the
 * plan. Returns 0 or -1 with err->msg. */
int tokenizer_load(Tokenizer *t, Gguf *g, uint64_t max_text_bytes, Arena *a, GgufError *err);

/* Encodes text[0..len) into ids (no BOS is added: see t->add_bos). With
 * parse_special, control tokens written in the text (e.g. "<|im_start|>")
 * become single ids; user-defined tokens (e.g. "<think>") always do, as in
 * llama.cpp. Returns the number of ids, or -1 if len is more than planned
 * or cap is too small (at most 3 * len + 1 ids are ever produced). */
int tokenizer_encode(Tokenizer *t, const char *text, size_t len, int parse_special, int32_t *ids, int cap);

/* The decoded bytes of a token (not NUL-terminated), or NULL if id is out of
 * range. Control and user-defined tokens decode to their text. */
const char *tokenizer_piece(const Tokenizer *t, int32_t id, size_t *len);
/* Id of the token whose decoded bytes are exactly text (NUL-terminated), or -1. */
int32_t tokenizer_find(const Tokenizer *t, const char *text);
int32_t tokenizer_n_vocab(const Tokenizer *t);
int32_t tokenizer_bos(const Tokenizer *t);
int32_t tokenizer_eos(const Tokenizer *t);
int tokenizer_is_eog(const Tokenizer *t, int32_t id);
int tokenizer_is_control(const Tokenizer *t, int32_t id);

/* Streaming decoder: feed ids, get only complete, valid UTF-8. A character
 * split across tokens is held back until its last byte arrives; bytes that
 * cannot be part of valid UTF-8 come out as U+FFFD (EF BF BD). */
typedef struct {
    uint8_t pending[4];
    int n_pending;
} TokenStream;

void token_stream_init(TokenStream *s);
/* Bytes out must hold for one push or flush: always enough. */
size_t token_stream_out_max(const Tokenizer *t);
/* Appends the text that token id completes to out; returns its length, or
 * -1 if id is out of range or cap < token_stream_out_max(t). */
int token_stream_push(TokenStream *s, const Tokenizer *t, int32_t id, char *out, size_t cap);
/* Emits what is still held back (an incomplete character: U+FFFD per byte). */
int token_stream_flush(TokenStream *s, char *out, size_t cap);

#endif
