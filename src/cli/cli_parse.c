/* A command's option table walked (cli.h): the one argument parser, and
 * the command's help (pith help CMD, CMD --help; man/mkman.sh reads its
 * layout). */
#include <stdio.h>
#include <string.h>

#include "../../port/port.h"
#include "cli.h"

/* Where spec's k-th name (from 1) is "name" (n bytes): k, or 0 if none is. */
static int spec_names(const char *spec, const char *name, size_t n)
{
    int k = 0;
    for (const char *p = spec; *p == '-';) {
        size_t len = strcspn(p, ", \t");
        k++;
        if (len == n && memcmp(p, name, n) == 0) return k;
        if (p[len] != ',') break;
        p += len + 2;
    }
    return 0;
}

/* spec's ARG ("N", "f32|f16|q8_0", ended by the tab), or NULL: no value. */
static const char *spec_arg(const char *spec)
{
    const char *p = spec;
    for (;;) {
        p += strcspn(p, ", \t");
        if (*p != ',') break;
        p += 2;
    }
    return *p == ' ' ? p + 1 : NULL;
}

static const CliOpt *find(const CliOpt *t, const char *name, size_t n, int *k)
{
    for (; t->kind != CLI_END; t++) {
        if (t->kind == CLI_INCLUDE) {
            const CliOpt *r = find(t->how.rows, name, n, k);
            if (r) return r;
        } else if ((t->kind & CLI_KIND) != CLI_POSITIONAL && (*k = spec_names(t->spec, name, n)) > 0) {
            return t;
        }
    }
    return NULL;
}

const CliOpt *cli_find(const CliOpt *table, const char *name)
{
    int k;
    return find(table, name, strlen(name), &k);
}

static void each(const CliOpt *table, const CliOpt *t, void (*visit)(void *, const CliOpt *), void *ctx)
{
    for (; t->kind != CLI_END; t++) {
        if (t->kind == CLI_INCLUDE) {
            each(table, t->how.rows, visit, ctx);
        } else if ((t->kind & CLI_KIND) != CLI_POSITIONAL) {
            int k;
            if (find(table, t->spec, strcspn(t->spec, ", \t"), &k) == t) visit(ctx, t);
        }
    }
}

void cli_each_option(const CliOpt *table, void (*visit)(void *, const CliOpt *), void *ctx)
{
    each(table, table, visit, ctx);
}

/* "  NAMES ARG                meaning (default)" */
static void help_row(void *ctx, const CliOpt *r)
{
    (void)ctx;
    const char *tab = strchr(r->spec, '\t');
    port_out("  %-24.*s %s\n", (int)(tab - r->spec), r->spec, tab + 1);
    if ((r->kind & CLI_KIND) == CLI_CALL && r->how.call->values) port_out("  %-24s %s\n", "", r->how.call->values());
}

void cli_help(const CliCommand *c)
{
    port_out("pith %s: %s\nusage: pith %s%s\noptions:\n", c->name, c->summary, c->name, c->usage);
    cli_each_option(c->options, help_row, NULL);
    port_out("  %-24s %s\nexample:\n  pith %s model.gguf%s\n", "-h, --help", "this help", c->name, c->example);
}

/* The index of value v in list "a|b|c" (ended by a tab); or dies naming them. */
static int choice(const char *flag, const char *list, const char *v)
{
    size_t n = strlen(v), len;
    int k = 0;
    for (const char *p = list;; p += len + 1, k++) {
        len = strcspn(p, "|\t");
        if (len == n && memcmp(p, v, n) == 0) return k;
        if (p[len] != '|') break;
    }
    /* "'x' is not a, b or c" */
    char names[128];
    size_t m = 0;
    for (const char *p = list; m < sizeof names - 8; p += len + 1) {
        len = strcspn(p, "|\t");
        const char *sep = p == list ? "" : p[len] == '|' ? ", " : " or ";
        m += (size_t)snprintf(names + m, sizeof names - m, "%s%.*s", sep, (int)len, p);
        if (p[len] != '|') break;
    }
    port_die("%s: '%s' is not %s", flag, v, names);
}

/* Stores value v (NULL for a flag) of row r, given as argv's `flag` (its
 * k-th name), into the engine's options or the command's own. */
static void store(const CliOpt *r, EngineOptions *engine, void *own, const char *flag, int k, const char *v)
{
    char *base = r->kind & CLI_ENGINE ? (char *)engine : own, *at = base + r->at;
    int i;
    switch (r->kind & CLI_KIND) {
    case CLI_FLAG: i = k == 1 ? r->value : 0; memcpy(at, &i, sizeof i); break;
    case CLI_INT: i = (int)cli_int(flag, v, r->how.ints->lo, r->how.ints->hi); memcpy(at, &i, sizeof i); break;
    case CLI_INT64: {
        int64_t x = cli_int(flag, v, r->how.ints->lo, r->how.ints->hi);
        memcpy(at, &x, sizeof x);
        break;
    }
    case CLI_FLOAT: {
        float x = (float)cli_float(flag, v, r->how.reals->lo, r->how.reals->hi);
        memcpy(at, &x, sizeof x);
        break;
    }
    case CLI_DOUBLE: {
        double x = cli_float(flag, v, r->how.reals->lo, r->how.reals->hi);
        memcpy(at, &x, sizeof x);
        break;
    }
    case CLI_SIZE: {
        uint64_t x = cli_size(flag, v);
        memcpy(at, &x, sizeof x);
        break;
    }
    case CLI_CHOICE: i = choice(flag, spec_arg(r->spec), v); memcpy(at, &i, sizeof i); break;
    case CLI_CALL: r->how.call->set(base, flag, v); break;
    default: memcpy(at, &v, sizeof v); break; /* CLI_STRING, CLI_POSITIONAL */
    }
    if (r->seen) {
        i = 1;
        memcpy(base + r->seen - 1, &i, sizeof i);
    }
}

/* One pass over the arguments. The first (apply = 0) only looks for
 * --help/-h where an option may stand; the second stores. */
static void walk(const CliCommand *c, int argc, char **argv, EngineOptions *engine, void *own, int apply)
{
    const CliOpt *positional = c->options;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (a[0] == '-' && a[1] != '\0') {
            if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
                cli_help(c);
                port_exit(0);
            }
            int k;
            const CliOpt *r = find(c->options, a, strlen(a), &k);
            if (!r) {
                if (!apply) continue;
                port_die("%s: unknown option for %s (see pith help %s)", a, c->name, c->name);
            }
            const char *v = NULL;
            if (spec_arg(r->spec)) {
                if (i + 1 >= argc) {
                    if (!apply) break; /* the second pass says so, after what comes before */
                    port_die("%s: missing value", a);
                }
                v = argv[++i];
            }
            if (apply) store(r, engine, own, a, k, v);
        } else if (!apply) {
            continue;
        } else if (!engine->model_path) {
            engine->model_path = a;
        } else {
            /* the command's own positional rows, in order, after MODEL */
            while (positional->kind != CLI_END && (positional->kind & CLI_KIND) != CLI_POSITIONAL) positional++;
            if (positional->kind == CLI_END) port_die("%s: unexpected argument (usage: pith %s%s)", a, c->name, c->usage);
            store(positional++, engine, own, a, 1, a);
        }
    }
}

void cli_parse(const CliCommand *c, int argc, char **argv, EngineOptions *engine, void *own)
{
    engine_defaults(engine);
    walk(c, argc, argv, engine, own, 0);
    walk(c, argc, argv, engine, own, 1);
    if (!engine->model_path) port_die("%s: missing MODEL (see pith help %s)", c->name, c->name);
}
