/* sampler.h - choosing the next token from the logits.
 *
 * Order of operations (llama.cpp's default chain, without the samplers
 * pith does not have):
 *   1. penalties over the last repeat_last_n accepted tokens: for each
 *      distinct token t seen c times, logit /= repeat_penalty if it is > 0,
 *      else logit *= repeat_penalty; then logit -= c * frequency_penalty
 *      + presence_penalty.
 *   2. temperature <= 0: greedy, the argmax (lowest id on an exact tie);
 *      steps 3-7 are skipped.
 *   3. top-k: keep the k largest logits (k = 0: off).
 *   4. top-p: softmax of what is left (temperature 1), keep the smallest
 *      prefix in descending order whose mass reaches top_p (1: off).
 *   5. min-p: keep tokens with p >= min_p * p_max (0: off).
 *   6. temperature: logits / temperature, softmax over the kept tokens.
 *   7. draw one token with the sampler's PRNG.
 * At least one token always survives. NaN logits count as -infinity.
 *
 * PRNG: xoshiro256** (Blackman & Vigna), state seeded from the 64-bit seed
 * with splitmix64; a draw is the top 53 bits of one output as a double in
 * [0, 1). Integer-only, so a seed gives the same draws on every platform
 * (the chosen tokens can still differ where libm's expf rounds differently).
 *
 * Memory: sampler_plan adds the candidate array and penalty tables
 * (about 10 bytes per vocabulary entry); sampler_init carves them. */
#ifndef PITH_SAMPLER_H
#define PITH_SAMPLER_H

#include <stddef.h>
#include <stdint.h>

#include "../arena/arena.h"

#define SAMPLER_MAX_HISTORY 8192 /* largest repeat_last_n */
#define SAMPLER_TRACE_TOP 20

typedef struct {
    float temperature;       /* <= 0: greedy */
    int top_k;               /* 0: off */
    float top_p;             /* in (0, 1]; 1: off */
    float min_p;             /* in [0, 1]; 0: off */
    float repeat_penalty;    /* > 0; 1: off */
    int repeat_last_n;       /* 0..SAMPLER_MAX_HISTORY tokens the penalties look at */
    float presence_penalty;  /* 0: off */
    float frequency_penalty; /* 0: off */
    uint64_t seed;
} SamplerParams;

/* Qwen3's recommended settings. thinking: temp 0.6, top_p 0.95, top_k 20,
 * min_p 0; otherwise temp 0.7, top_p 0.8, top_k 20, min_p 0. Penalties
 * off (repeat_last_n 64 ready for them), seed 0. */
void sampler_defaults(int thinking, SamplerParams *p);
/* 0 if the parameters are usable, else -1 and a reason ("top_p: ...") in err. */
int sampler_params_check(const SamplerParams *p, char *err, size_t cap);

typedef struct {
    float logit;
    int32_t id;
} SamplerCand;

typedef struct {
    int n_vocab;
    SamplerParams params;
    uint64_t rng[4];
    SamplerCand *cand;   /* n_vocab: the working set of one step */
    uint16_t *counts;    /* n_vocab: occurrences in the history (scratch, all 0 between steps) */
    int32_t *history;    /* ring of the last repeat_last_n accepted ids */
    int n_history;
    int history_next;
} Sampler;

void sampler_plan(int n_vocab, Plan *plan);
/* Returns 0, or -1 if the arena is short (a planning bug) or the
 * parameters are invalid (see sampler_params_check). */
int sampler_init(Sampler *s, Arena *arena, int n_vocab, const SamplerParams *p);
/* Forgets the history and reseeds the PRNG from params.seed. */
void sampler_reset(Sampler *s);
/* Adds a token (prompt or generated) to the history the penalties see. */
void sampler_accept(Sampler *s, int32_t id);

/* One step's record for --trace. Probabilities `p` of the candidates are
 * those of the distribution the token was drawn from: after penalties,
 * truncation (top-k, top-p, min-p) and temperature, renormalized over the
 * kept tokens. For greedy (temperature <= 0) nothing is drawn: `p` is then
 * softmax of the penalized logits at temperature 1 over the whole
 * vocabulary. `kept_mass` is the mass of the kept tokens under that same
 * untruncated, temperature-1 softmax (the nucleus mass). */
typedef struct {
    int32_t id;
    float p;
    float logit;         /* after penalties, before temperature */
} SamplerTraceCand;

typedef struct {
    int64_t pos;         /* set by the caller (position of the token in the context) */
    int32_t id;          /* the chosen token */
    int greedy;
    float p;             /* probability of the chosen token (as for candidates) */
    int n_kept;          /* tokens left after truncation (1 for greedy) */
    float kept_mass;
    int n_top;           /* min(SAMPLER_TRACE_TOP, tokens with p > 0 in the reported distribution) */
    SamplerTraceCand top[SAMPLER_TRACE_TOP]; /* descending p, lowest id first on ties */
    /* candidates each cut removed (0 for greedy), and those a grammar
     * masked (they count as candidates of the cuts: logit -infinity) */
    int cut_top_k, cut_top_p, cut_min_p, n_masked;
} SamplerTrace;

/* Whether the next token is simply the best logit (temperature <= 0, no
 * penalty active): sampler_sample then returns the largest logit's id, the
 * lowest on ties, never a NaN's. */
int sampler_plain_greedy(const Sampler *s);

/* Chooses the next token from logits[n_vocab] (not modified). Fills
 * trace when it is not NULL (costs one more pass over the vocabulary). */
int32_t sampler_sample(Sampler *s, const float *logits, SamplerTrace *trace);

/* Which tokens may come next (a grammar): allows(ctx, id) for one token;
 * allowed(ctx, cached_only, &bits) the whole set as a bitmap over the
 * vocabulary (bit id % 64 of word id / 64), returning how many (-1: none,
 * or an error); with cached_only it returns 0 when the set is not at hand
 * without the full work. */
typedef struct {
    int (*allows)(void *ctx, int32_t id);
    int (*allowed)(void *ctx, int cached_only, const uint64_t **bits);
    void *ctx;
} SamplerFilter;

/* As sampler_sample, drawing from exactly the distribution the chain gives
 * the logits with every token the filter refuses masked out, testing only
 * the best tokens when that decides it (greedy; top-k) and otherwise
 * running the chain over the allowed tokens alone (see sampler.c for why
 * each is exact). With a trace, masks logits in place. Returns the id, or
 * -1 if the filter leaves nothing. */
int32_t sampler_sample_filtered(Sampler *s, float *logits, SamplerTrace *trace, const SamplerFilter *f);

/* The model's own distribution, for an API's logprobs (llama-server's
 * default, post_sampling_probs false): the softmax of logits[n_vocab] as
 * they are (no penalty, temperature, cut or grammar) in the trace's form
 * (greedy set, as nothing is drawn from it). Before sampling the same
 * logits (a grammar's sampling masks them); then sampler_trace_chosen. */
void sampler_raw_trace(Sampler *s, const float *logits, SamplerTrace *t);
/* Sets the chosen token of a trace made by sampler_raw_trace: its id and
 * p (its logit as given, unmasked: the chosen token is allowed). */
void sampler_trace_chosen(SamplerTrace *t, int32_t id, float logit);

/* One step's log probabilities as an API reports them: the chosen token
 * and the best SAMPLER_TRACE_TOP, ln p (p = 0: -FLT_MAX, as llama-server
 * writes it), from the distribution the token was drawn from (drawn:
 * sampler_sample's trace, where greedy means p = 1 for the chosen token
 * and 0 for every other) or, when raw is not NULL, from raw
 * (sampler_raw_trace's); and the drawn distribution's shape. */
typedef struct {
    int32_t id;
    float logprob;
} SamplerLogprob;

typedef struct {
    SamplerLogprob chosen;
    int n_top;
    SamplerLogprob top[SAMPLER_TRACE_TOP];
    int greedy, n_kept, cut_top_k, cut_top_p, cut_min_p, n_masked; /* as in the trace */
    float kept_mass;
} SamplerLogprobs;

void sampler_logprobs(const SamplerTrace *drawn, const SamplerTrace *raw, SamplerLogprobs *out);

/* Writes the trace as one JSON line (with '\n'):
 * {"pos":P,"id":I,"piece":"...","p":..,"greedy":false,"n_kept":K,
 *  "kept_mass":M,"top":[{"id":..,"p":..,"logit":..},...]}
 * piece bytes that are not valid UTF-8 become U+FFFD and the exact bytes
 * are added as "piece_hex". Returns the full length; writes at most cap
 * bytes and a NUL if there is room (like snprintf). */
size_t sampler_trace_json(const SamplerTrace *t, const char *piece, size_t piece_len, char *buf, size_t cap);

/* The PRNG alone (for tests and for anything else that needs draws). */
void sampler_rng_seed(uint64_t state[4], uint64_t seed);
uint64_t sampler_rng_next(uint64_t state[4]);
double sampler_rng_uniform(uint64_t state[4]); /* [0, 1) */

#endif
