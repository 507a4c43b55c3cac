/* wordpiece.h - WordPiece (llama.cpp's WPM, tokenizer.ggml.model "bert"),
 * for tokenizer.c only; its behaviour is described in tokenizer.h. */
#ifndef PITH_WORDPIECE_H
#define PITH_WORDPIECE_H

#include "tokenizer.h"

/* Longest token text a WordPiece vocabulary may have (the greedy match
 * tries every length up to the longest at each position). */
#define WORDPIECE_TOKEN_MAX 1024

/* The longest token whose stored text is a prefix of s[0..n), and its
 * length in *len; -1 if there is none. tokenizer.c's hash table answers it
 * (passed in, so this module does not call back into tokenizer.c). */
typedef int32_t (*WordpiecePrefix)(const Tokenizer *t, const uint8_t *s, size_t n, size_t *len);

/* Tokenizes s[a..b) (text between special tokens) into ids[*n_out..cap).
 * Returns 0, or -1 if cap is too small. */
int wordpiece_fragment(Tokenizer *t, const uint8_t *s, size_t a, size_t b, WordpiecePrefix longest, int32_t *ids,
                       int cap, int *n_out);

#endif
