/* grammar.h - GBNF grammars (the format llama.cpp users write) and the
 * matcher that holds generation to one.
 *
 * Syntax: `name ::= alternatives`; alternatives separated by `|`; a
 * sequence of literals "..." (escapes \n \r \t \\ \" \' \[ \] \xHH \uHHHH
 * \UHHHHHHHH), character classes [a-z_] and negated [^"\\], `.` (any
 * character), rule names, groups ( ... ), each followed by at most one
 * repetition * + ? {m} {m,} {m,n}; `#` starts a comment to the end of the
 * line. A rule may span lines; a new rule starts at `name ::=`. The start
 * rule is `root`. Refused with "LINE:COL: what": syntax errors, undefined or
 * redefined rules, left recursion (a rule that can reach itself without
 * consuming a character: its matcher would never stop), and anything
 * beyond the limits below.
 *
 * Matching works on bytes, so a token whose bytes end inside a character or
 * cross from one grammar element into the next is judged exactly: the
 * state is a set of stacks (positions still to match, innermost first) plus
 * a partly decoded UTF-8 character. The stacks are nodes in a pool with
 * parent links (a stack is its top node), so a walk over the vocabulary
 * sorted by bytes shares every common prefix: the mask of one step visits
 * each distinct prefix once and drops whole subtrees at the first byte the
 * grammar cannot take.
 *
 * The allowed set of a state is a bitmap over the vocabulary; the last
 * GRAMMAR_CACHE_SETS of them are kept with their state (the stacks and the
 * partial character, compared exactly), so a state seen again (the inside
 * of a string, a number's digits; JSON grammars revisit few states) costs
 * no walk.
 *
 * Memory: everything lives in one block of grammar_bytes(max_piece,
 * n_vocab) carved from the arena (no growth): the compiled code, rule
 * table, node pool, the walk's levels and the cache of allowed sets. Bounds (refused up front when a grammar needs more):
 * GRAMMAR_MAX_RULES rules, GRAMMAR_MAX_ELEMS compiled elements (repetition
 * {m,n} copies its item), GRAMMAR_MAX_STACKS alternative stacks from any one
 * position; nesting (rule inside rule, e.g. arrays in arrays) deeper than
 * GRAMMAR_MAX_DEPTH is not offered to the model. */
#ifndef PITH_GRAMMAR_H
#define PITH_GRAMMAR_H

#include <stddef.h>
#include <stdint.h>

#include "../arena/arena.h"
#include "tokenizer.h"

#define GRAMMAR_MAX_RULES 2048
#define GRAMMAR_MAX_ELEMS 32768
#define GRAMMAR_MAX_STACKS 128
#define GRAMMAR_MAX_DEPTH 96
#define GRAMMAR_POOL_NODES 65536
#define GRAMMAR_MAX_TEXT (256 * 1024) /* bytes of grammar text */
#define GRAMMAR_MAX_REPEAT 1000       /* m and n of {m,n} */
#define GRAMMAR_CACHE_SETS 8          /* allowed sets kept, one bitmap of the vocabulary each */
#define GRAMMAR_CACHE_KEY 512         /* u32 words of a state's key; a larger state is not cached */

typedef struct {
    uint8_t type;   /* GE_* */
    uint8_t neg;    /* a negated class */
    uint16_t n;     /* ranges that follow a class element */
    uint32_t a, b;  /* a range [a, b]; the rule of a reference in a */
} GElem;

typedef struct {
    uint32_t pos;    /* element index: the next thing to match */
    uint32_t parent; /* node index + 1; 0 = bottom */
    uint32_t hash;   /* of the whole stack, to compare stacks fast */
    uint32_t depth;
} GNode;

typedef struct {
    uint32_t first;  /* offset of this level's stacks in Grammar.stack_ids */
    uint32_t n;      /* stacks (node index + 1; 0 = the empty, finished stack) */
    uint32_t pool;   /* pool top when the level was made */
    uint32_t cp;     /* partly decoded character */
    uint8_t need;    /* its continuation bytes still to come */
    uint8_t lead;    /* its lead byte until the first continuation byte (overlong and surrogate checks) */
    uint8_t n_memo, n_memo_next;
    uint32_t start;  /* the level where the character being decoded began */
    uint32_t canon;  /* the level whose stack ids this one shares (itself, or one before it) */
    uint64_t memo[4];/* masks of canon's stacks that lead back to canon (see step) */
} GLevel;

typedef struct {
    GElem *code;
    uint32_t n_code;
    uint32_t *rule_start;   /* element index of each rule's first alternative */
    uint32_t n_rules;
    uint32_t root;
    GNode *pool;
    uint32_t pool_top;
    uint32_t pool_base;     /* nodes below belong to the committed state */
    uint32_t *stack_ids;    /* the levels' stacks, back to back */
    uint32_t stack_ids_cap;
    GLevel *levels;         /* level 0 = the committed state; then one per byte of a walk */
    uint32_t max_levels;
    uint32_t *work;         /* expansion worklist */
    uint32_t work_cap;
    int overflow;           /* a bound was hit while matching: the token was refused */
    int ready;              /* compiled */
    /* the cache of allowed sets: entry i's bitmap at bits + i * n_words, its key at keys + i * GRAMMAR_CACHE_KEY */
    uint64_t *bits;
    uint32_t n_words;       /* (n_vocab + 63) / 64 */
    uint32_t *keys;         /* GRAMMAR_CACHE_SETS keys, then the current state's */
    struct {
        uint32_t len;       /* key words; 0 = empty entry */
        uint32_t hash;
        uint32_t used;      /* clock of the last use (the least recent is replaced) */
        int32_t count;      /* tokens allowed */
    } cache[GRAMMAR_CACHE_SETS];
    uint32_t clock;
    const void *cache_vocab; /* the vocabulary the entries were made with */
    uint32_t cache_hits, cache_misses;
} Grammar;

/* Arena bytes of a grammar whose tokens are at most max_piece bytes, for
 * a vocabulary of n_vocab tokens (its allowed sets). */
uint64_t grammar_bytes(uint32_t max_piece, int32_t n_vocab);
/* Carves the buffers (once). Returns 0, or -1 if the arena is short. */
int grammar_init(Grammar *g, Arena *a, uint32_t max_piece, int32_t n_vocab);
/* Compiles text[0..len) (replacing any earlier grammar) and resets the
 * state to the start. Returns 0, or -1 with "grammar: LINE:COL: what"
 * (name in place of "grammar") in err. */
int grammar_compile(Grammar *g, const char *text, size_t len, const char *name, char *err, size_t cap);
/* Back to the start of the grammar (same rules). */
void grammar_reset(Grammar *g);
/* Whether bytes p[0..n) can follow the committed state (1) or not (0). */
int grammar_try(Grammar *g, const char *p, size_t n);
/* Commits p[0..n): returns 0, or -1 if they cannot follow (the state is
 * then unchanged if n fits one walk, max_piece bytes; else reset it). */
int grammar_accept(Grammar *g, const char *p, size_t n);
/* The text so far is a whole sentence of the grammar. */
int grammar_can_end(const Grammar *g);
/* Nothing more can follow (only the end). */
int grammar_finished(const Grammar *g);

/* The vocabulary sorted by bytes, for the mask walk: token ids in byte
 * order (control tokens and empty pieces left out), each one's common
 * prefix length with the one before, and where the walk goes when a
 * token dies: skip[i] is the first j > i with lcp[j] < lcp[i], so the
 * tokens that share the bytes a token died on are passed in a few jumps
 * (a trie's subtree, without the trie). */
typedef struct {
    int32_t *order;
    int32_t *skip;
    uint16_t *lcp;
    int32_t n_vocab;
    int32_t n;
    int32_t *other;          /* the ids left out of order (control, end of generation, empty) */
    int32_t n_other;
    uint32_t max_piece;
} GrammarVocab;

void grammar_vocab_plan(int32_t n_vocab, Plan *p);
/* Sorts the vocabulary (once, after the tokenizer is loaded). */
int grammar_vocab_build(GrammarVocab *v, Arena *a, const Tokenizer *t);

/* The tokens that can continue the grammar (end-of-generation ones only
 * where it can end) as a bitmap over the vocabulary (bit id % 64 of word
 * id / 64) in *bits, valid until the next call on g. From the cache when
 * the state was seen, else by the walk (and cached). Returns how many, or
 * -1 if none is (err says why). With cached_only, returns 0 instead of
 * walking when the state is not in the cache. */
int grammar_allowed(Grammar *g, const GrammarVocab *v, const Tokenizer *t, int cached_only, const uint64_t **bits,
                    char *err, size_t cap);
/* Sets logits[id] = -INFINITY for every token grammar_allowed leaves out.
 * Returns the number of tokens left, or -1 if none is (err says why). */
int grammar_mask(Grammar *g, const GrammarVocab *v, const Tokenizer *t, float *logits, char *err, size_t cap);
/* Whether token id may come next (end-of-generation: where it can end). */
int grammar_allows(Grammar *g, const Tokenizer *t, int32_t id);

#endif
