/* fixtures.c - see fixtures.h. */
#include "fixtures.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *fix_dir(void)
{
    const char *d = getenv("PITH_FIXTURES");
    return d && *d ? d : "../shared/fixtures";
}

const char *fix_model_path(const char *model_file)
{
    static char path[1024];
    snprintf(path, sizeof path, "%s/models/%s", fix_dir(), model_file);
    return path;
}

static int parse_ids(const char *s, int32_t **out)
{
    int cap = 1;
    for (const char *p = s; *p; p++) cap += *p == ',';
    *out = calloc((size_t)cap, sizeof **out);
    if (!*s) return 0;
    int n = 0;
    while (*s) {
        char *end;
        long v = strtol(s, &end, 10);
        if (end == s) return -1;
        (*out)[n++] = (int32_t)v;
        s = *end == ',' ? end + 1 : end;
        if (*end && *end != ',') return -1;
    }
    return n;
}

static int parse_doubles(const char *s, double **out)
{
    int cap = 1;
    for (const char *p = s; *p; p++) cap += *p == ',';
    *out = calloc((size_t)cap, sizeof **out);
    int n = 0;
    while (*s) {
        char *end;
        double v = strtod(s, &end);
        if (end == s) return -1;
        (*out)[n++] = v;
        s = *end == ',' ? end + 1 : end;
        if (*end && *end != ',') return -1;
    }
    return n;
}

/* Value of key in "k=v;k=v" notes (values never contain ';'), copied into buf. */
static int note(const char *notes, const char *key, char *buf, size_t cap)
{
    size_t klen = strlen(key);
    const char *p = notes;
    while (*p) {
        if (strncmp(p, key, klen) == 0 && p[klen] == '=') {
            const char *v = p + klen + 1;
            size_t n = strcspn(v, ";");
            if (n >= cap) n = cap - 1;
            memcpy(buf, v, n);
            buf[n] = '\0';
            return 0;
        }
        const char *semi = strchr(p, ';');
        if (!semi) break;
        p = semi + 1;
    }
    buf[0] = '\0';
    return -1;
}

int fix_load_cases(FixCase **out)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/cases.tsv", fix_dir());
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "cannot open %s\n", path);
        return -1;
    }
    size_t cap = 1 << 16, len = 0;
    char *line = malloc(cap);
    int n = 0, ncap = 16;
    FixCase *cases = calloc((size_t)ncap, sizeof *cases);
    int lineno = 0;
    for (;;) {
        /* read one whole line, however long */
        len = 0;
        int ch;
        while ((ch = fgetc(f)) != EOF && ch != '\n') {
            if (len + 2 > cap) line = realloc(line, cap *= 2);
            line[len++] = (char)ch;
        }
        if (ch == EOF && len == 0) break;
        line[len] = '\0';
        if (lineno++ == 0 || len == 0) continue; /* header */
        char *col[6];
        int nc = 0;
        char *p = line;
        col[nc++] = p;
        while (*p && nc < 6) {
            if (*p == '\t') {
                *p = '\0';
                col[nc++] = p + 1;
            }
            p++;
        }
        if (nc != 6) {
            fprintf(stderr, "%s: line %d: %d columns\n", path, lineno, nc);
            goto fail;
        }
        if (n == ncap) cases = realloc(cases, (size_t)(ncap *= 2) * sizeof *cases);
        FixCase *c = &cases[n++];
        memset(c, 0, sizeof *c);
        snprintf(c->id, sizeof c->id, "%s", col[0]);
        snprintf(c->model, sizeof c->model, "%s", col[1]);
        snprintf(c->kind, sizeof c->kind, "%s", col[2]);
        c->n_prompt = parse_ids(col[3], &c->prompt);
        c->n_expected = parse_ids(col[4], &c->expected);
        if (c->n_prompt < 1 || c->n_expected < 0) {
            fprintf(stderr, "%s: line %d: bad ids\n", path, lineno);
            goto fail;
        }
        char buf[4096];
        note(col[5], "tol", c->tol, sizeof c->tol);
        note(col[5], "wtype", c->wtype, sizeof c->wtype);
        if (note(col[5], "n_vocab", buf, sizeof buf) == 0) c->n_vocab = atoi(buf);
        if (note(col[5], "n_pos", buf, sizeof buf) == 0) c->n_pos = atoi(buf);
        if (note(col[5], "greedy_gap_threshold", buf, sizeof buf) == 0) c->gap_threshold = atof(buf);
        if (note(col[5], "exact_prefix", buf, sizeof buf) == 0) c->exact_prefix = atoi(buf);
        if (note(col[5], "gaps", buf, sizeof buf) == 0) c->n_gaps = parse_doubles(buf, &c->gaps);
        if (strcmp(c->kind, "greedy") == 0 && (c->n_gaps != c->n_expected || c->exact_prefix > c->n_expected)) {
            fprintf(stderr, "%s: line %d: gaps/expected ids disagree\n", path, lineno);
            goto fail;
        }
    }
    free(line);
    fclose(f);
    *out = cases;
    return n;
fail:
    free(line);
    fclose(f);
    fix_free_cases(cases, n);
    return -1;
}

void fix_free_cases(FixCase *cases, int n)
{
    for (int i = 0; i < n; i++) {
        free(cases[i].prompt);
        free(cases[i].expected);
        free(cases[i].gaps);
    }
    free(cases);
}

float *fix_read_logits(const FixCase *c)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/logits/%s.f32", fix_dir(), c->id);
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t n = (size_t)c->n_pos * (size_t)c->n_vocab;
    float *v = malloc(n * sizeof *v + 1);
    unsigned char *b = (unsigned char *)v;
    size_t got = fread(v, 1, n * sizeof *v + 1, f); /* one byte more: the size must be exact */
    fclose(f);
    if (got != n * sizeof *v) {
        free(v);
        return NULL;
    }
    for (size_t i = 0; i < n; i++) { /* little-endian on any host */
        uint32_t u = (uint32_t)b[4 * i] | (uint32_t)b[4 * i + 1] << 8 | (uint32_t)b[4 * i + 2] << 16 |
                     (uint32_t)b[4 * i + 3] << 24;
        memcpy(&v[i], &u, 4);
    }
    return v;
}

static int argmax_f(const float *v, int n)
{
    int best = 0;
    for (int i = 1; i < n; i++)
        if (v[i] > v[best]) best = i;
    return best;
}

/* log-sum-exp of a row in double */
static double lse(const float *v, int n)
{
    double mx = v[0];
    for (int i = 1; i < n; i++)
        if (v[i] > mx) mx = v[i];
    double s = 0;
    for (int i = 0; i < n; i++) s += exp((double)v[i] - mx);
    return mx + log(s);
}

void fix_compare(const float *ref, const float *ours, int n_pos, int n_vocab, FixCompare *out)
{
    memset(out, 0, sizeof *out);
    double kl_sum = 0;
    for (int p = 0; p < n_pos; p++) {
        const float *r = ref + (size_t)p * n_vocab, *o = ours + (size_t)p * n_vocab;
        double d = 0, m = 0;
        for (int v = 0; v < n_vocab; v++) {
            double diff = fabs((double)o[v] - (double)r[v]);
            if (!(diff <= d)) d = diff; /* NaN propagates */
            if (fabs((double)r[v]) > m) m = fabs((double)r[v]);
        }
        double rel = m > 0 ? d / m : d;
        if (!(rel <= out->max_rel)) out->max_rel = rel;
        if (!(d <= out->max_abs)) out->max_abs = d;
        double lr = lse(r, n_vocab), lo = lse(o, n_vocab), kl = 0;
        for (int v = 0; v < n_vocab; v++) {
            double lp = (double)r[v] - lr, lq = (double)o[v] - lo;
            kl += exp(lp) * (lp - lq);
        }
        if (!(kl <= out->max_kl)) out->max_kl = kl;
        kl_sum += kl;
        if (argmax_f(r, n_vocab) != argmax_f(o, n_vocab)) out->argmax_flips++;
    }
    out->mean_kl = n_pos > 0 ? kl_sum / n_pos : 0;
}

double fix_rel_limit(const char *tol)
{
    if (strcmp(tol, "F32") == 0) return 1e-4;
    if (strcmp(tol, "F16") == 0) return 5e-3;
    if (strcmp(tol, "BF16") == 0) return 3e-2;
    return 0;
}

int fix_within(const char *tol, const FixCompare *c)
{
    if (strcmp(tol, "F32") == 0) return c->max_rel <= 1e-4;
    if (strcmp(tol, "F16") == 0) return c->max_rel <= 5e-3 && c->mean_kl <= 1e-5;
    if (strcmp(tol, "BF16") == 0) return c->max_rel <= 3e-2 && c->mean_kl <= 1e-4;
    if (strcmp(tol, "QUANT") == 0) return c->mean_kl <= 5e-3 && c->max_kl <= 1e-2;
    return 0; /* unknown class: never passes */
}
