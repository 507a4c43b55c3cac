/* fixtures.h - reading ../shared/fixtures (cases.tsv, logits files) and the
 * tolerance checks of its README section 6, for tests and tools.
 * (Test code: may use malloc and stdio.) */
#ifndef PITH_TEST_FIXTURES_H
#define PITH_TEST_FIXTURES_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    char id[128];
    char model[128];       /* file name in models/ */
    char kind[16];         /* "logits" or "greedy" */
    int32_t *prompt;
    int n_prompt;
    int32_t *expected;     /* greedy: the 32 reference ids */
    int n_expected;
    char tol[16];          /* F32, F16, BF16, QUANT */
    char wtype[16];
    int n_vocab;
    int n_pos;             /* logits cases */
    double gap_threshold;  /* greedy_gap_threshold */
    int exact_prefix;
    double *gaps;          /* greedy: one per expected id */
    int n_gaps;
} FixCase;

/* Directory of the fixtures: $PITH_FIXTURES or ../shared/fixtures. */
const char *fix_dir(void);

/* Reads cases.tsv; returns the number of cases (>= 0) into *out (malloc'd),
 * or -1 with a message on stderr. */
int fix_load_cases(FixCase **out);
void fix_free_cases(FixCase *cases, int n);

/* Reads logits/CASE.f32 (n_pos * n_vocab floats); NULL on error. */
float *fix_read_logits(const FixCase *c);

/* Full path of a model file (static buffer). */
const char *fix_model_path(const char *model_file);

/* The README's measures between reference and ours, over n_pos rows. */
typedef struct {
    double max_rel;     /* max over positions of d_p / m_p */
    double max_abs;     /* max d_p */
    double mean_kl;
    double max_kl;
    int argmax_flips;
} FixCompare;

void fix_compare(const float *ref, const float *ours, int n_pos, int n_vocab, FixCompare *out);
/* 1 if the comparison meets the logits tolerance of class tol. */
int fix_within(const char *tol, const FixCompare *c);
/* The per-position relative limit of a class (0 for QUANT: KL only). */
double fix_rel_limit(const char *tol);

#endif
