/* cmplogits - compares a logits file with a reference, by the fixtures'
 * measures (README section 6).
 *
 *   cmplogits CASE_ID FILE.f32
 *       the reference and tolerance class of a fixture case (cases.tsv)
 *   cmplogits --ref REF.f32 --class F32|F16|BF16|QUANT --vocab N FILE.f32
 *       any reference, e.g. logits llama.cpp computed just now
 *       (tests/t_llamacpp.sh)
 *
 * Prints the measures and exits 0 if FILE is within the class, 1 if not,
 * 2 on a usage or read error. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixtures.h"

/* Reads a little-endian float32 file of exactly count values; NULL if not. */
static float *read_f32(const char *path, size_t count)
{
    unsigned char *b = malloc(count * 4 + 1);
    FILE *f = fopen(path, "rb");
    size_t got = f && b ? fread(b, 1, count * 4 + 1, f) : 0;
    if (f) fclose(f);
    if (!b || got != count * 4) {
        fprintf(stderr, "cmplogits: %s: %zu bytes, expected %zu\n", path, got, count * 4);
        free(b);
        return NULL;
    }
    float *v = malloc(count * sizeof *v + 1);
    for (size_t i = 0; v && i < count; i++) {
        unsigned u = (unsigned)b[4 * i] | (unsigned)b[4 * i + 1] << 8 | (unsigned)b[4 * i + 2] << 16 |
                     (unsigned)b[4 * i + 3] << 24;
        memcpy(&v[i], &u, 4);
    }
    free(b);
    return v;
}

static int compare(const char *name, const char *tol, const float *ref, const float *ours, int n_pos, int n_vocab)
{
    FixCompare cmp;
    fix_compare(ref, ours, n_pos, n_vocab, &cmp);
    int ok = fix_within(tol, &cmp);
    printf("%s %s: max rel %.3g, max abs %.3g, mean KL %.3g, max KL %.3g, argmax flips %d: %s\n", name, tol,
           cmp.max_rel, cmp.max_abs, cmp.mean_kl, cmp.max_kl, cmp.argmax_flips, ok ? "within" : "OUTSIDE");
    return ok ? 0 : 1;
}

static int compare_files(int argc, char **argv)
{
    const char *ref_path = NULL, *tol = NULL, *path = NULL;
    long vocab = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--ref") == 0 && i + 1 < argc) ref_path = argv[++i];
        else if (strcmp(argv[i], "--class") == 0 && i + 1 < argc) tol = argv[++i];
        else if (strcmp(argv[i], "--vocab") == 0 && i + 1 < argc) vocab = strtol(argv[++i], NULL, 10);
        else path = argv[i];
    }
    int known = tol && (!strcmp(tol, "F32") || !strcmp(tol, "F16") || !strcmp(tol, "BF16") || !strcmp(tol, "QUANT"));
    if (!ref_path || !known || !path || vocab < 1) {
        fprintf(stderr, "usage: cmplogits --ref REF.f32 --class F32|F16|BF16|QUANT --vocab N FILE.f32\n");
        return 2;
    }
    FILE *f = fopen(ref_path, "rb");
    long bytes = -1;
    if (f && fseek(f, 0, SEEK_END) == 0) bytes = ftell(f);
    if (f) fclose(f);
    if (bytes <= 0 || bytes % (4 * vocab) != 0) {
        fprintf(stderr, "cmplogits: %s: %ld bytes is not a whole number of rows of %ld floats\n", ref_path, bytes, vocab);
        return 2;
    }
    int n_pos = (int)(bytes / (4 * vocab));
    float *ref = read_f32(ref_path, (size_t)bytes / 4), *ours = read_f32(path, (size_t)bytes / 4);
    int status = ref && ours ? compare(path, tol, ref, ours, n_pos, (int)vocab) : 2;
    free(ref);
    free(ours);
    return status;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "--ref") == 0) return compare_files(argc, argv);
    if (argc != 3) {
        fprintf(stderr, "usage: cmplogits CASE_ID FILE.f32 | cmplogits --ref REF.f32 --class C --vocab N FILE.f32\n");
        return 2;
    }
    FixCase *cases;
    int n = fix_load_cases(&cases);
    if (n < 0) return 2;
    const FixCase *c = NULL;
    for (int i = 0; i < n; i++)
        if (strcmp(cases[i].id, argv[1]) == 0) c = &cases[i];
    if (!c || strcmp(c->kind, "logits") != 0) {
        fprintf(stderr, "cmplogits: no logits case '%s'\n", argv[1]);
        fix_free_cases(cases, n);
        return 2;
    }
    float *ref = fix_read_logits(c);
    float *ours = ref ? read_f32(argv[2], (size_t)c->n_pos * (size_t)c->n_vocab) : NULL;
    int status = 2;
    if (!ref) fprintf(stderr, "cmplogits: cannot read the reference of %s\n", c->id);
    else if (ours) status = compare(c->id, c->tol, ref, ours, c->n_pos, c->n_vocab);
    free(ref);
    free(ours);
    fix_free_cases(cases, n);
    return status;
}
