/* optdoc - README's option rows, made from the commands' option tables
 * (src/cli/cli.h) that the parser and `pith help` use, so none can drift.
 *
 *   optdoc CMD              every option of CMD as a markdown table (as pith help CMD lists them)
 *   optdoc CMD own          only CMD's own rows (not those of the shared groups it includes)
 *   optdoc group NAME       the rows of one shared group (not the groups it includes)
 *   optdoc --groups CMD     the shared groups CMD includes, all levels, one a line
 *   optdoc --readme FILE    FILE on stdout, each block between a line "<!-- options: ARGS -->"
 *                           (ARGS: CMD, CMD own or group NAME) and a line "<!-- end options -->"
 *                           replaced by `optdoc ARGS` (tests/tools/readme_options.sh)
 *   optdoc --coverage FILE  whether FILE's blocks hold every option of every command: a CMD
 *                           block, or CMD own and a group block for each group CMD includes
 *   optdoc --check          the tables' own rules (below)
 *
 * Exit status 0; 1 when --coverage or --check finds something (one line
 * each on stderr); 2 on a usage error, an unknown CMD or group, or a block
 * without its end. Not in the pith binary: a tool linked with the library. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/cli/cli.h"

/* The shared groups by name (cli_options.c); --check finds any included
 * table missing here. */
static const struct {
    const char *name;
    const CliOpt *rows;
} groups[] = {
    {"context", cli_context_options},   {"model", cli_model_options},     {"file", cli_file_options},
    {"sampling", cli_sampling_options}, {"grammar", cli_grammar_options}, {"generation", cli_generation_options},
    {"template", cli_template_options},
};
#define N_GROUPS (int)(sizeof groups / sizeof groups[0])

static int problems;

static void problem(const char *what, const char *where)
{
    fprintf(stderr, "optdoc: %s: %s\n", where, what);
    problems++;
}

static int group_index(const CliOpt *rows)
{
    for (int g = 0; g < N_GROUPS; g++)
        if (groups[g].rows == rows) return g;
    return -1;
}

/* Whether r is a row of the table itself (not of one it includes). */
static int own_row(const CliOpt *table, const CliOpt *r)
{
    for (; table->kind != CLI_END; table++)
        if (table == r) return 1;
    return 0;
}

/* ---- markdown ------------------------------------------------------------ */

/* Text with '|' escaped, as a table cell needs it (in code spans too). */
static void cell(FILE *out, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '|') fputc('\\', out);
        fputc(s[i], out);
    }
}

/* A meaning's text: '<' and '>' as entities too, so that a token like
 * <|im_start|> is shown, not taken for an HTML tag. */
static void text_cell(FILE *out, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '<') fputs("&lt;", out);
        else if (s[i] == '>') fputs("&gt;", out);
        else cell(out, s + i, 1);
    }
}

static void row(FILE *out, const CliOpt *r)
{
    const char *tab = strchr(r->spec, '\t');
    fputs("| `", out);
    cell(out, r->spec, (size_t)(tab - r->spec));
    fputs("` | ", out);
    text_cell(out, tab + 1, strlen(tab + 1));
    if ((r->kind & CLI_KIND) == CLI_CALL && r->how.call->values) {
        const char *v = r->how.call->values();
        fputc(' ', out);
        text_cell(out, v, strlen(v));
    }
    fputs(" |\n", out);
}

typedef struct {
    FILE *out;
    const CliOpt *only; /* rows of this table only (its own level), or NULL: all */
} Rows;

static void visit_row(void *ctx, const CliOpt *r)
{
    Rows *w = ctx;
    if (!w->only || own_row(w->only, r)) row(w->out, r);
}

/* The block for ARGS (words[0..n)); 0, or -1 if they name nothing. */
static int block(FILE *out, char **words, int n)
{
    const CliOpt *table = NULL, *only = NULL;
    const CliCommand *c = n >= 1 ? cli_command(words[0]) : NULL;
    if (c && n == 1) table = c->options;
    else if (c && n == 2 && strcmp(words[1], "own") == 0) table = only = c->options;
    else if (n == 2 && strcmp(words[0], "group") == 0)
        for (int g = 0; g < N_GROUPS; g++)
            if (strcmp(groups[g].name, words[1]) == 0) table = only = groups[g].rows;
    if (!table) return -1;
    fputs("| option | meaning |\n|---|---|\n", out);
    Rows w = {out, only};
    cli_each_option(table, visit_row, &w);
    return 0;
}

/* ---- README's blocks ----------------------------------------------------- */

#define MARK "<!-- options: "
#define MARK_END "<!-- end options -->"
#define MAX_WORDS 4

static char *read_all(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "optdoc: cannot open %s\n", path);
        exit(2);
    }
    size_t cap = 1 << 16, n = 0;
    char *b = malloc(cap + 1);
    for (size_t got; b && (got = fread(b + n, 1, cap - n, f)) > 0;) {
        n += got;
        if (n == cap) b = realloc(b, (cap *= 2) + 1);
    }
    fclose(f);
    if (!b) exit(2);
    b[n] = '\0';
    return b;
}

/* Splits a marker line's ARGS ("run own -->") into words; their count, or
 * -1 if the line is no marker. */
static int marker_words(char *line, char **words)
{
    if (strncmp(line, MARK, strlen(MARK)) != 0) return -1;
    char *end = strstr(line, " -->");
    if (!end || end[4] != '\0') return -1;
    *end = '\0';
    int n = 0;
    for (char *w = strtok(line + strlen(MARK), " "); w && n < MAX_WORDS; w = strtok(NULL, " ")) words[n++] = w;
    return n;
}

/* Calls found(ctx, words, n) for each block of the file; with out, writes
 * the file with the blocks regenerated. Exits 2 on a bad block. */
static void each_block(const char *path, FILE *out, void (*found)(void *, char **, int), void *ctx)
{
    char *text = read_all(path), *p = text;
    int inside = 0, line_no = 0;
    while (*p) {
        char *nl = strchr(p, '\n'), *next = nl ? nl + 1 : p + strlen(p);
        line_no++;
        size_t len = (size_t)(next - p);
        char line[256], *words[MAX_WORDS];
        int n = -1;
        if (len < sizeof line) {
            memcpy(line, p, len);
            line[nl ? len - 1 : len] = '\0';
            if (strcmp(line, MARK_END) == 0) {
                if (!inside) fprintf(stderr, "optdoc: %s:%d: %s without a block\n", path, line_no, MARK_END), exit(2);
                inside = 0;
            } else {
                n = marker_words(line, words);
            }
        }
        if (!inside && out) fwrite(p, 1, len, out);
        if (n >= 0) {
            if (inside) fprintf(stderr, "optdoc: %s:%d: a block in a block\n", path, line_no), exit(2);
            if (out && block(out, words, n) != 0) {
                fprintf(stderr, "optdoc: %s:%d: no command or group '%s'\n", path, line_no, n ? words[0] : "");
                exit(2);
            }
            if (found) found(ctx, words, n);
            inside = 1;
        }
        p = next;
    }
    if (inside) fprintf(stderr, "optdoc: %s: a block without %s\n", path, MARK_END), exit(2);
    free(text);
}

/* ---- --coverage ---------------------------------------------------------- */

#define MAX_BLOCKS 256

typedef struct {
    char names[MAX_BLOCKS][64]; /* each block's ARGS, one space between words */
    int n;
} Blocks;

static void found_block(void *ctx, char **words, int n)
{
    Blocks *b = ctx;
    if (b->n == MAX_BLOCKS) return;
    char *s = b->names[b->n++];
    s[0] = '\0';
    for (int i = 0; i < n; i++) snprintf(s + strlen(s), 64 - strlen(s), "%s%s", i ? " " : "", words[i]);
}

static int has_block(const Blocks *b, const char *a, const char *c)
{
    char name[64];
    snprintf(name, sizeof name, "%s%s%s", a, c ? " " : "", c ? c : "");
    for (int i = 0; i < b->n; i++)
        if (strcmp(b->names[i], name) == 0) return 1;
    return 0;
}

/* Marks in `in` the groups the table includes, at every level. */
static void included(const CliOpt *t, int *in)
{
    for (; t->kind != CLI_END; t++)
        if (t->kind == CLI_INCLUDE) {
            int g = group_index(t->how.rows);
            if (g >= 0) in[g] = 1;
            included(t->how.rows, in);
        }
}

static int coverage(const char *path)
{
    static Blocks b;
    each_block(path, NULL, found_block, &b);
    for (const CliCommand *c = cli_commands; c->name; c++) {
        if (has_block(&b, c->name, NULL)) continue;
        if (!has_block(&b, c->name, "own")) {
            problem("no block \"<!-- options: CMD -->\" or \"<!-- options: CMD own -->\"", c->name);
            continue;
        }
        int in[N_GROUPS] = {0};
        included(c->options, in);
        for (int g = 0; g < N_GROUPS; g++)
            if (in[g] && !has_block(&b, "group", groups[g].name)) {
                char what[96];
                snprintf(what, sizeof what, "no block \"<!-- options: group %s -->\" for its shared options",
                         groups[g].name);
                problem(what, c->name);
            }
    }
    return problems ? 1 : 0;
}

/* ---- --check ------------------------------------------------------------- */

/* The rules of a table's rows, for command c (top: its table). */
static void check_rows(const CliCommand *c, const CliOpt *top, const CliOpt *t, int depth)
{
    for (; t->kind != CLI_END; t++) {
        int kind = t->kind & CLI_KIND;
        if (kind == CLI_INCLUDE) {
            if (group_index(t->how.rows) < 0) problem("includes a table optdoc does not name (groups[])", c->name);
            check_rows(c, top, t->how.rows, depth + 1);
            continue;
        }
        if (kind == CLI_POSITIONAL) {
            if (depth > 0) problem("a positional row in a shared group", t->spec);
            continue;
        }
        const char *tab = strchr(t->spec, '\t');
        if (t->spec[0] != '-' || !tab || strchr(tab + 1, '\t') || tab[1] == '\0') {
            problem("not \"NAMES [ARG]<tab>meaning\"", t->spec);
            continue;
        }
        /* pith help's column, which man/mkman.sh cuts at 24 */
        if (tab - t->spec > 24) problem("the names and argument are longer than 24 characters", t->spec);
        /* each name of a row the parser uses (one no earlier row hides)
         * finds that row */
        int hidden = -1;
        for (const char *p = t->spec; *p == '-';) {
            char name[64];
            size_t n = strcspn(p, ", \t");
            snprintf(name, sizeof name, "%.*s", (int)n, p);
            const CliOpt *r = cli_find(top, name);
            if (hidden < 0) {
                hidden = r != t;
                /* only a command's own row may hide one, a shared group's */
                if (hidden && (depth == 0 || !own_row(top, r))) problem("hidden by an earlier row of that name", name);
            } else if (!hidden && r != t) {
                problem("a name an earlier row of the command has", name);
            }
            if (strcmp(name, "-h") == 0 || strcmp(name, "--help") == 0) problem("the help's own name", name);
            if (p[n] != ',') break;
            p += n + 2;
        }
        /* --load's values are the planner's names, in LoadMode's order */
        if (strncmp(t->spec, "--load ", 7) == 0) {
            const char *v = t->spec + 7;
            for (int i = 0; i <= LOAD_STREAM; i++) {
                size_t n = strlen(mem_load_name((LoadMode)i));
                if (strncmp(v, mem_load_name((LoadMode)i), n) != 0 || (v[n] != '|' && v[n] != '\t'))
                    problem("--load's values are not mem_load_name's, in order", c->name);
                v += n + 1;
            }
        }
    }
}

static int check(void)
{
    for (const CliCommand *c = cli_commands; c->name; c++) {
        if (!c->summary || !c->usage || !c->example || !c->options || !c->run) problem("a field is missing", c->name);
        else check_rows(c, c->options, c->options, 0);
        for (const CliCommand *d = cli_commands; d != c; d++)
            if (strcmp(d->name, c->name) == 0) problem("two commands of that name", c->name);
    }
    return problems ? 1 : 0;
}

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "--check") == 0) return check();
    if (argc == 3 && strcmp(argv[1], "--readme") == 0) {
        each_block(argv[2], stdout, NULL, NULL);
        return fflush(stdout) == 0 ? 0 : 2;
    }
    if (argc == 3 && strcmp(argv[1], "--coverage") == 0) return coverage(argv[2]);
    if (argc == 3 && strcmp(argv[1], "--groups") == 0 && cli_command(argv[2])) {
        int in[N_GROUPS] = {0};
        included(cli_command(argv[2])->options, in);
        for (int g = 0; g < N_GROUPS; g++)
            if (in[g]) printf("%s\n", groups[g].name);
        return 0;
    }
    if (argc >= 2 && argv[1][0] != '-' && block(stdout, argv + 1, argc - 1) == 0) return 0;
    fprintf(stderr, "usage: optdoc CMD | CMD own | group NAME | --groups CMD | --readme FILE | --coverage FILE | --check\n");
    return 2;
}
