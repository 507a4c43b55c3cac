/* This folder: src/text/ - text in and out: the tokenizers and their
 * Unicode tables, chat templates, JSON, the sampler. May call src/arena/,
 * src/gguf/ (the vocabulary's metadata) and port/. */
/* tokenizer.h - the tokenizer models of llama.cpp that the llama, Qwen and
 * Gemma 4 families and the BERT embedding models use, read from GGUF
 * metadata, with llama.cpp's behaviour as the reference:
 *
 * "gpt2" (byte-level BPE: Qwen2/2.5/3, Llama 3, SmolLM):
 *   1. special/added tokens (control, user-defined, unknown) are found in
 *      the text first, longest token first, as llama.cpp does;
 *   2. the text between them is split by the pre-tokenizer of the model
 *      (tokenizer.ggml.pre): one of llama.cpp's names, a row of the table in
 *      pretokenizer.c (llama.cpp's "default" without the key); any other
 *      name is refused by name;
 *   3. each piece is turned into bytes, one byte token per byte, and merged
 *      by BPE in rank order (lowest rank first, leftmost on a tie). With the
 *      llama3 pre-tokenizers a piece that is itself a token is not merged
 *      (llama.cpp's ignore_merges).
 *   Invalid UTF-8 in the text never fails: each byte that does not start a
 *   well-formed sequence is read as U+FFFD (so it becomes the three bytes
 *   EF BF BD), exactly as llama.cpp does. (llama.cpp would throw on a 4-byte
 *   form above U+10FFFF; here each of its bytes is invalid.)
 *
 * "llama" (SentencePiece-style BPE by scores: Llama 1/2, TinyLlama,
 * stories260K; llama.cpp's llm_tokenizer_spm):
 *   1. special tokens are found as above;
 *   2. each text fragment gets a space in front when add_space_prefix is on
 *      (tokenizer.ggml.add_space_prefix, default on): before the first
 *      fragment and, as llama.cpp does, before every fragment that follows
 *      a special token ("<s>Hi" -> <s> "_Hi");
 *   3. spaces become U+2581, the fragment is cut into UTF-8 characters (by
 *      the lead byte only: bytes are never altered), and the adjacent pair
 *      whose concatenation is a token with the highest score (leftmost on a
 *      tie) is merged until no pair is a token;
 *   4. a final piece that is not a token becomes its byte tokens <0xNN>
 *      (a byte without one becomes the unknown token).
 *   Decoding: U+2581 is a space, <0xNN> is that byte. The space put in
 *   front of the text stays in the pieces: llama.cpp's detokenize() drops
 *   one leading space of the first piece when add_space_prefix is on, but
 *   its per-token pieces (what generation streams) keep it, and so do
 *   tokenizer_piece and TokenStream here. A caller printing a whole prompt
 *   back can drop it (see add_space_prefix).
 *
 * "gemma4" (Gemma 4 E2B/E4B: llama.cpp's BPE with pre-type GEMMA4): BPE
 * merges (tokenizer.ggml.merges, by rank as for "gpt2") over token texts
 * stored as SentencePiece writes them (raw UTF-8, U+2581 for a space,
 * <0xNN> byte tokens; Tokenizer.spm_texts), not the byte-level alphabet;
 * tokenizer.ggml.pre is not read:
 *   1. special tokens are found as above;
 *   2. each space becomes U+2581 (no space is put in front: llama.cpp's
 *      add_space_prefix is not used by BPE), each invalid byte U+FFFD;
 *   3. the fragment is split only into runs of newlines and runs of
 *      anything else; a run of newlines that is a token is that token;
 *   4. each run is cut into characters and merged in rank order (as
 *      "gpt2"); a final piece that is not a token becomes its bytes'
 *      <0xNN> tokens, and a byte without one is dropped, as llama.cpp does.
 *   add_bos is always on (llama.cpp forces it for Gemma 4, whatever the
 *   file says), so a prompt starts with <bos>. Decoding as for "llama":
 *   U+2581 is a space, <0xNN> is that byte. llama.cpp's clean_spaces (on
 *   for gemma4) only applies in its whole-text detokenize, not to the
 *   pieces generation streams, so it is not applied here.
 * "bert" (WordPiece: bge, nomic-embed-text, all-MiniLM; llama.cpp's
 * llm_tokenizer_wpm_session, in wordpiece.c):
 *   1. special tokens are found as above;
 *   2. BERT's normalizer, per code point (invalid UTF-8 is U+FFFD): with
 *      strip_accents, the first code point of its NFD decomposition (one
 *      code point for one, as llama.cpp: e-acute -> e, a Hangul syllable ->
 *      its leading consonant); white space ends a word; NUL, U+FFFD and
 *      control characters (Cc Cf Co Cs) are dropped, and with strip_accents
 *      the marks (M*) too; with lowercase, the simple lowercase mapping;
 *      punctuation (P*), ASCII symbols and CJK ideographs are words of their
 *      own. tokenizer.ggml.normalizer.lowercase defaults to on, and
 *      .strip_accents to lowercase's value (llama.cpp's defaults);
 *   3. each word gets U+2581 in front (BERT's "##" continuations are stored
 *      without it, word starts with it) and is cut greedily, longest token
 *      first; a word with a position no token starts is [UNK] alone.
 *   [CLS] is bos (default id 101), [SEP] sep (102), [UNK] 100; with
 *   special tokens added (tokenizer_encode_prompt) the ids are [CLS] ...
 *   [SEP], whatever add_bos_token says, as llama.cpp's add_special.
 *   Decoding: U+2581 is a space (" hello", "ing"); llama.cpp's
 *   detokenize() also drops spaces before ?!., (clean_spaces): not done here.
 *
 * llama.cpp's lstrip/rstrip token attributes are only set by model name for
 * a few models (jina, phi-3, modern-bert), so they are not applied: text
 * next to a special token is tokenized as its own fragment.
 *
 * Memory: tokenizer_plan() sizes every table from the GGUF header before
 * the arena exists; tokenizer_load() carves exactly those sizes. Decoded
 * token bytes are written once into the arena and a hash table maps them to
 * ids; BPE merges become a hash table (id, id) -> (rank, merged id); SPM
 * and gemma4 and WPM keep the token texts as stored (with U+2581) in a
 * second hash table, and SPM each token's score as a sortable key. */
#ifndef PITH_TOKENIZER_H
#define PITH_TOKENIZER_H

#include <stddef.h>
#include <stdint.h>

#include "../arena/arena.h"
#include "../gguf/gguf.h"
#include "pretokenizer.h"

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

/* Tokenizer models (Tokenizer.kind). */
enum { TOKENIZER_BPE = 1, TOKENIZER_SPM = 2, TOKENIZER_WPM = 3 };

typedef struct {
    int32_t n_vocab;
    int kind;                 /* TOKENIZER_BPE ("gpt2", "gemma4"), TOKENIZER_SPM ("llama") or
                                 TOKENIZER_WPM ("bert") */
    int spm_texts;            /* token texts are SentencePiece-style (raw UTF-8, U+2581 for a space,
                                 <0xNN> byte tokens): SPM, gemma4's BPE and WPM; 0 for byte-level BPE */
    int32_t bos, eos;         /* -1 when the model has none (WPM: bos is [CLS], default 101) */
    int32_t unk;              /* unknown token (SPM: default 0, WPM: 100), -1 if none */
    int32_t sep;              /* WPM: [SEP], put last by tokenizer_encode_prompt (default 102); else -1 */
    int lowercase, strip_accents; /* WPM normalizer: tokenizer.ggml.normalizer.lowercase (default 1),
                                     .strip_accents (default: lowercase's value) */
    int add_bos;              /* callers put bos first: tokenizer.ggml.add_bos_token, else
                                 llama.cpp's default (1 for SPM and the llama3 pre-tokenizers);
                                 always 1 for gemma4 */
    int add_space_prefix;     /* SPM: a space is put before the text (tokenizer.ggml.add_space_prefix,
                                 default 1); always 0 for BPE */
    int pretok;               /* BPE: row of the pre-tokenizer table; -1 for SPM and gemma4 */
    Pretokenizer *pre;        /* that row compiled (in the arena); NULL for SPM and gemma4 */
    uint32_t max_piece;       /* longest decoded piece, bytes */
    uint32_t max_token_len;   /* longest stored token text, bytes */
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
    int32_t byte_token[256];  /* id of the token for each raw byte (SPM: <0xNN>, else unk;
                                 gemma4: <0xNN>, else -1: the byte is dropped, as in llama.cpp) */
    uint32_t *score_key;      /* SPM only: per token, a higher score gives a smaller key */
    /* with spm_texts only (NULL for byte-level BPE): */
    uint32_t *raw_off;        /* n_vocab + 1 offsets into raw_bytes */
    uint8_t *raw_bytes;       /* token texts as stored (U+2581 for spaces) */
    uint32_t *raw_hash;       /* id + 1 by stored text; text_hash_mask + 1 slots */
    int16_t cp_to_byte[324];  /* byte-level alphabet: code point -> byte, -1 */

    /* scratch for one encode, sized from max_text */
    int32_t *special_at;      /* per text byte: special id starting here, -1 free, -2 covered */
    uint8_t *word;            /* BPE: bytes of one pre-token (invalid bytes -> EF BF BD;
                                 gemma4: the whole fragment, spaces as U+2581);
                                 SPM: one fragment with U+2581 for its spaces */
    int32_t *sym_id, *sym_prev, *sym_next, *pair_merged, *heap, *heap_pos; /* by word byte (not WPM) */
    uint32_t *pair_rank;      /* BPE: merge rank; SPM: score key of the pair's token */
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

/* Encodes text[0..len) into ids (no BOS is added: see t->add_bos and
 * tokenizer_encode_prompt). With parse_special, control tokens written in
 * the text (e.g. "<|im_start|>", "<s>") become single ids; user-defined
 * tokens (e.g. "<think>") always do, as in llama.cpp. Returns the number of
 * ids, or -1 if len is more than planned or cap is too small. At most
 * 3 * len + 1 ids are produced, except by an SPM vocabulary without a U+2581
 * token: each space, and each one it puts in front of a fragment, is then
 * 3 byte tokens (real SPM vocabularies have the token), and by a WPM one
 * whose tokens cut U+2581 itself apart (none does). */
int tokenizer_encode(Tokenizer *t, const char *text, size_t len, int parse_special, int32_t *ids, int cap);
/* As tokenizer_encode with parse_special, for a prompt fed from the start
 * of the context: puts t->bos first when the model asks for it (add_bos)
 * and the text does not already start with it (a chat template that
 * writes "<|begin_of_text|>" itself), as llama.cpp's prompt handling ends
 * up with exactly one BOS. WPM: [CLS] first and [SEP] last, always (one
 * more id). Returns the number of ids or -1 as above. */
int tokenizer_encode_prompt(Tokenizer *t, const char *text, size_t len, int32_t *ids, int cap);

/* Pre-token boundaries of text[0..len) under the named BPE pre-tokenizer
 * ("qwen2", "llama-bpe", "smollm", "gpt-2", ...), without a vocabulary:
 * writes the end offset of each piece to ends and returns their number, or
 * -1 if the name is unknown or cap is too small. For tests and tools. */
int tokenizer_pretokenize(const char *pre_name, const char *text, size_t len, uint32_t *ends, int cap);
/* The tokenizer model's name: "gpt2", "llama", "gemma4" or "bert". */
const char *tokenizer_model_name(const Tokenizer *t);

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
