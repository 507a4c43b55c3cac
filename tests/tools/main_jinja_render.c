/* jinja_render - renders chat templates with pith's Jinja interpreter
 * (src/text/jinja.h) for many conversations in one process, the pith side
 * of tests/t_template_corpus.sh (tests/tools/jinja_ref.py is jinja2's).
 *
 *   jinja_render [--repeat N] OUT_DIR CASE.json... -- TEMPLATE.jinja...
 *
 * Each case is a JSON object whose keys are the variables of the render
 * (messages, tools, add_generation_prompt, bos_token, ...): each becomes a
 * global with jinja_set_json. strftime_now formats the time
 * SOURCE_DATE_EPOCH gives, else now. For each template T and case C it
 * writes OUT_DIR/T@C.txt (the text) or OUT_DIR/T@C.err (the interpreter's
 * "LINE:COL: what" when parsing or rendering fails), T and C being the file
 * names without .jinja and .json. Exit status 2 with one line on a usage,
 * read, write or memory error; rendering failures are results, not errors.
 * --repeat N parses each template and renders each pair N times and
 * prints the mean times (tests/bench_template.sh). A test tool: its
 * regions come from malloc, once. */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "../../src/text/jinja.h"
#include "../../src/text/json.h"

/* The render's work region: what one chat request might be given. */
#define WORK_BYTES (64u << 20)
#define MAX_VARS 64

typedef struct {
    char name[128];
    const char *json; /* the value's text inside the case file */
    size_t len;
} Var;

typedef struct {
    char stem[256];
    char *text;
    Var vars[MAX_VARS];
    int n_vars;
} Case;

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "jinja_render: ");
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(2);
}

static char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) die("%s: %s", path, strerror(errno));
    char *buf = NULL;
    size_t n = 0, cap = 0, got;
    do {
        if (n + 4096 > cap) {
            cap = 2 * cap + 4096;
            buf = realloc(buf, cap + 1);
            if (!buf) die("%s: %s", path, "out of memory");
        }
        got = fread(buf + n, 1, cap - n, f);
        n += got;
    } while (got > 0);
    if (ferror(f)) die("%s: %s", path, "read error");
    fclose(f);
    buf[n] = '\0';
    *len = n;
    return buf;
}

static void write_file(const char *path, const char *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(data, 1, len, f) != len || fclose(f) != 0) die("%s: %s", path, "cannot write");
}

/* The file name of path without its directory and without ext. */
static void stem_of(const char *path, const char *ext, char *out, size_t cap)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    size_t n = strlen(base), e = strlen(ext);
    if (n >= e && strcmp(base + n - e, ext) == 0) n -= e;
    if (n >= cap) die("%s: %s", path, "name too long");
    memcpy(out, base, n);
    out[n] = '\0';
}

/* Reads a case: its top-level keys and the text of each value. */
static void load_case(const char *path, Case *c)
{
    size_t len;
    c->text = read_file(path, &len);
    stem_of(path, ".json", c->stem, sizeof c->stem);
    Json j;
    json_init(&j, c->text, len, path);
    int r = json_enter(&j, '{');
    while (r >= 0 && (r = json_next(&j, '}')) > 0) {
        if (c->n_vars == MAX_VARS) die("%s: %s", path, "too many variables");
        Var *v = &c->vars[c->n_vars++];
        size_t n;
        if (json_key(&j, v->name, sizeof v->name - 1, &n) < 0) break;
        v->name[n] = '\0';
        json_peek(&j); /* skips the white space before the value */
        size_t start = j.pos;
        if (json_skip(&j) < 0) break;
        v->json = c->text + start;
        v->len = j.pos - start;
    }
    if (r < 0 || json_end(&j) < 0) die("%s", j.err);
}

static void *alloc16(size_t n)
{
    void *p = aligned_alloc(16, (n + 15) / 16 * 16);
    if (!p) die("out of memory");
    return p;
}

/* What each render shares: the regions and the limits, made once. */
typedef struct {
    JinjaLimits lim;
    void *work;
    char *out;
    size_t out_cap;
    int64_t now;
} Renderer;

/* One render of t with c's variables, as a request does it: the work region
 * reset, every variable set from its JSON, then the render. */
static PithStatus render(Renderer *rd, const JinjaTemplate *t, const Case *c, size_t *len, char *err, size_t err_cap)
{
    JinjaRender *r = jinja_render_begin(t, rd->work, WORK_BYTES, &rd->lim);
    if (!r) die("jinja_render_begin: the work region (%u bytes) is too small", WORK_BYTES);
    for (int v = 0; v < c->n_vars; v++) {
        PithStatus st = jinja_set_json(r, c->vars[v].name, c->vars[v].json, c->vars[v].len, 0, err, err_cap);
        if (st != PITH_OK) return st;
    }
    jinja_set_time(r, rd->now);
    return jinja_render(r, rd->out, rd->out_cap, len, err, err_cap);
}

static double seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int main(int argc, char **argv)
{
    int repeat = 0, first = 1;
    if (argc > 2 && strcmp(argv[1], "--repeat") == 0) {
        repeat = atoi(argv[2]);
        first = 3;
    }
    int sep = 0;
    for (int i = first + 1; i < argc && !sep; i++)
        if (strcmp(argv[i], "--") == 0) sep = i;
    if (!sep || repeat < 0) {
        fprintf(stderr, "usage: jinja_render [--repeat N] OUT_DIR CASE.json... -- TEMPLATE.jinja...\n");
        return 2;
    }
    const char *out_dir = argv[first];
    if (mkdir(out_dir, 0777) != 0 && errno != EEXIST) die("%s: %s", out_dir, strerror(errno));
    int n_cases = sep - first - 1;
    Case *cases = calloc((size_t)(n_cases > 0 ? n_cases : 1), sizeof *cases);
    if (!cases) die("out of memory");
    for (int i = 0; i < n_cases; i++) load_case(argv[first + 1 + i], &cases[i]);

    Renderer rd;
    const char *epoch = getenv("SOURCE_DATE_EPOCH");
    rd.now = epoch ? (int64_t)strtoll(epoch, NULL, 10) : (int64_t)time(NULL);
    jinja_limits_default(&rd.lim);
    rd.work = alloc16(WORK_BYTES);
    rd.out_cap = (size_t)rd.lim.max_output + 1;
    rd.out = malloc(rd.out_cap);
    if (!rd.out) die("out of memory");
    char err[512], line[520], path[4096], tstem[256], parse_err[512];

    for (int t = sep + 1; t < argc; t++) {
        size_t len;
        char *src = read_file(argv[t], &len);
        stem_of(argv[t], ".jinja", tstem, sizeof tstem);
        size_t tcap = (size_t)jinja_parse_bound(len);
        void *tmem = alloc16(tcap);
        JinjaTemplate *tmpl = NULL;
        double t0 = seconds();
        PithStatus ps = jinja_parse(src, len, tmem, tcap, &tmpl, parse_err, sizeof parse_err);
        for (int k = 1; k < repeat && ps == PITH_OK; k++) ps = jinja_parse(src, len, tmem, tcap, &tmpl, parse_err, sizeof parse_err);
        double parse_s = (seconds() - t0) / (repeat > 0 ? repeat : 1);
        for (int i = 0; i < n_cases; i++) {
            const Case *c = &cases[i];
            const char *text = rd.out, *ext = ".txt";
            size_t text_len = 0;
            PithStatus st = ps;
            if (st != PITH_OK) {
                snprintf(err, sizeof err, "%s", parse_err);
            } else {
                t0 = seconds();
                st = render(&rd, tmpl, c, &text_len, err, sizeof err);
                for (int k = 1; k < repeat && st == PITH_OK; k++) st = render(&rd, tmpl, c, &text_len, err, sizeof err);
                if (repeat > 0 && st == PITH_OK)
                    printf("%s@%s: %zu bytes of template parsed in %.1f us; %zu bytes rendered in %.1f us (mean of %d)\n",
                           tstem, c->stem, len, 1e6 * parse_s, text_len, 1e6 * (seconds() - t0) / repeat, repeat);
            }
            if (st != PITH_OK) {
                snprintf(line, sizeof line, "%s\n", err);
                text = line, text_len = strlen(line), ext = ".err";
            }
            if (snprintf(path, sizeof path, "%s/%s@%s%s", out_dir, tstem, c->stem, ext) >= (int)sizeof path)
                die("%s: path too long", out_dir);
            write_file(path, text, text_len);
        }
        free(tmem);
        free(src);
    }
    free(rd.out);
    free(rd.work);
    for (int i = 0; i < n_cases; i++) free(cases[i].text);
    free(cases);
    return 0;
}
