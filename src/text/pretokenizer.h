/* pretokenizer.h - the split of text into the pieces BPE merges within, as
 * llama.cpp does it for each value of tokenizer.ggml.pre.
 *
 * A pre-tokenizer is data: a row of one table (pretokenizer.c) naming the
 * regexes llama.cpp applies one after the other (each splits every piece the
 * previous one left; the text between two matches is a piece too) and the
 * flags that go with the name. The regexes are run by one small matcher
 * (a Pike VM: time linear in the text, no backtracking blow-up) with
 * std::regex's ECMAScript semantics as llama.cpp uses them: on a copy of
 * the text where each non-ASCII character stands for its class when the
 * regex names a class (\p{L} ...), on the code points otherwise. The regexes
 * of the common families (GPT-2, Llama 3, Qwen2, Qwen3.5, GPT-4o) also have
 * hand-written splitters - llama.cpp's own fast paths for the first four -
 * which run instead; tests check each against the matcher on random text. */
#ifndef PITH_PRETOKENIZER_H
#define PITH_PRETOKENIZER_H

#include <stddef.h>
#include <stdint.h>

#define PRETOK_MAX_STAGES 6    /* regexes of one pre-tokenizer */
#define PRETOK_MAX_INSTRS 1024 /* matcher instructions of all its regexes */
#define PRETOK_MAX_SETS 128    /* character sets */
#define PRETOK_MAX_RANGES 512  /* code point ranges of those sets */
#define PRETOK_PROG_MAX 256    /* instructions of one regex */

typedef struct {
    uint8_t op;
    uint8_t flag;     /* OP_LOOK: 1 = negative */
    uint16_t set;     /* OP_SET, OP_LOOK: index in sets */
    uint16_t x, y;    /* OP_SPLIT: x first, then y; OP_JMP: x */
} PretokInstr;

typedef struct {
    uint8_t negate;
    uint8_t classes;  /* bit per UCLASS_* named by \p{..}; bit 7: \s; bit 0: \d */
    uint16_t first, count; /* code point ranges in ranges */
} PretokSet;

typedef struct {
    int builtin;      /* index of a hand-written splitter, or -1: the regex at pc */
    uint16_t pc, n_instr;
    uint8_t by_class; /* non-ASCII characters are matched by class (the regex names one) */
} PretokStage;

/* A compiled pre-tokenizer (about 12 KiB: kept in the arena by the tokenizer). */
typedef struct {
    int row;          /* in the table */
    int n_stages;
    PretokStage stage[PRETOK_MAX_STAGES];
    PretokInstr instr[PRETOK_MAX_INSTRS];
    PretokSet set[PRETOK_MAX_SETS];
    uint32_t range[PRETOK_MAX_RANGES][2];
    int n_instr, n_set, n_range;
} Pretokenizer;

/* The row of a tokenizer.ggml.pre name, or -1. NULL names llama.cpp's
 * "default" (a BPE file without the key). */
int pretok_find(const char *name);
/* Compiles row's regexes into p, with the hand-written splitters where they
 * exist (use_builtins) or all by the matcher. Returns 0, or -1 if one does
 * not compile (a defect of the table: tests compile every row). */
int pretok_compile(Pretokenizer *p, int row, int use_builtins);
int pretok_rows_count(void);
/* Compiles one regex alone (for tests): builtins off when use_builtin is 0. */
int pretok_compile_regex(Pretokenizer *p, const char *regex, int use_builtin);

/* Flags of the row (llama.cpp's per-name settings). */
int pretok_ignore_merges(const Pretokenizer *p); /* a piece that is a token is kept whole */
int pretok_add_bos(const Pretokenizer *p);       /* BOS when tokenizer.ggml.add_bos_token is absent */
const char *pretok_name(const Pretokenizer *p);

/* Calls piece(ctx, a, b) for each piece of text[from..to), in order; a
 * non-zero return from piece stops the walk and is returned. */
typedef int (*PretokPiece)(void *ctx, size_t a, size_t b);
int pretok_split(const Pretokenizer *p, const uint8_t *text, size_t from, size_t to, PretokPiece piece, void *ctx);

#endif
