/* cmplogits - compares a logits file with a fixture case's reference.
 *
 *   cmplogits CASE_ID FILE.f32
 *
 * Prints the README section 6 measures and exits 0 if FILE is within the
 * case's tolerance class, 1 if not, 2 on a usage or read error. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixtures.h"

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: cmplogits CASE_ID FILE.f32\n");
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
    size_t count = (size_t)c->n_pos * (size_t)c->n_vocab;
    float *ours = malloc(count * sizeof *ours + 1);
    FILE *f = fopen(argv[2], "rb");
    size_t got = f ? fread(ours, 1, count * sizeof *ours + 1, f) : 0;
    if (f) fclose(f);
    int status = 2;
    if (!ref) {
        fprintf(stderr, "cmplogits: cannot read the reference of %s\n", c->id);
    } else if (got != count * sizeof *ours) {
        fprintf(stderr, "cmplogits: %s: %zu bytes, expected %zu\n", argv[2], got, count * sizeof *ours);
    } else {
        /* the file is little-endian float32, like the reference: decode the same way */
        unsigned char *b = (unsigned char *)ours;
        for (size_t i = 0; i < count; i++) {
            unsigned u = (unsigned)b[4 * i] | (unsigned)b[4 * i + 1] << 8 | (unsigned)b[4 * i + 2] << 16 |
                         (unsigned)b[4 * i + 3] << 24;
            memcpy(&ours[i], &u, 4);
        }
        FixCompare cmp;
        fix_compare(ref, ours, c->n_pos, c->n_vocab, &cmp);
        int ok = fix_within(c->tol, &cmp);
        printf("%s %s: max rel %.3g, max abs %.3g, mean KL %.3g, max KL %.3g, argmax flips %d: %s\n", c->id, c->tol,
               cmp.max_rel, cmp.max_abs, cmp.mean_kl, cmp.max_kl, cmp.argmax_flips, ok ? "within" : "OUTSIDE");
        status = ok ? 0 : 1;
    }
    free(ref);
    free(ours);
    fix_free_cases(cases, n);
    return status;
}
