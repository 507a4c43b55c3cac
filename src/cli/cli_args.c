/* Argument values (cli_parse's) and the engine's command-line side, shared
 * by every command (cli.h). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../port/port.h"
#include "../text/json.h"
#include "cli.h"

int64_t cli_int(const char *flag, const char *text, int64_t min, int64_t max)
{
    char *end;
    errno = 0;
    long long v = strtoll(text, &end, 10);
    if (errno || end == text || *end != '\0') port_die("%s: '%s' is not an integer", flag, text);
    if (v < min || v > max) port_die("%s: %lld is out of range [%lld, %lld]", flag, v, (long long)min, (long long)max);
    return v;
}

double cli_float(const char *flag, const char *text, double min, double max)
{
    double v = 0;
    size_t n = text_to_double(text, strlen(text), &v);
    if (n == 0 || text[n] != '\0' || !isfinite(v)) port_die("%s: '%s' is not a number", flag, text);
    if (v < min || v > max) port_die("%s: %g is out of range [%g, %g]", flag, v, min, max);
    return v;
}

uint64_t cli_size(const char *flag, const char *text)
{
    double v = 0;
    const char *end = text + text_to_double(text, strlen(text), &v);
    if (end == text || !(v > 0)) port_die("%s: '%s' is not a size (e.g. 300M, 2G)", flag, text);
    double mul = 1;
    if (*end == 'K' || *end == 'k') mul = 1024.0, end++;
    else if (*end == 'M' || *end == 'm') mul = 1024.0 * 1024.0, end++;
    else if (*end == 'G' || *end == 'g') mul = 1024.0 * 1024.0 * 1024.0, end++;
    if (*end == 'B' || *end == 'b') end++;
    if (*end != '\0' || v * mul > 1e18) port_die("%s: '%s' is not a size (e.g. 300M, 2G)", flag, text);
    return (uint64_t)(v * mul);
}

int cli_count_ids(const char *text)
{
    int n = 1;
    for (const char *p = text; *p; p++) n += *p == ',';
    return n;
}

int cli_ids(const char *flag, const char *text, int32_t *out, int cap, int64_t limit)
{
    int n = 0;
    const char *p = text;
    if (*p == '\0') port_die("%s: empty list of ids", flag);
    for (;;) {
        char *end;
        errno = 0;
        long long v = strtoll(p, &end, 10);
        if (errno || end == p) port_die("%s: item %d is not an integer", flag, n + 1);
        if (v < 0 || v >= limit) port_die("%s: id %lld is out of range [0, %lld)", flag, v, (long long)limit);
        if (n == cap) port_die("%s: more than %d ids", flag, cap);
        out[n++] = (int32_t)v;
        if (*end == '\0') break;
        if (*end != ',') port_die("%s: unexpected '%c' after item %d", flag, *end, n);
        p = end + 1;
    }
    return n;
}

void cli_template_note(const Engine *e, const char *fallback)
{
    if (e->no_template) port_err("note: the model has no chat template: %s\n", fallback);
}

_Noreturn void cli_engine_die(const Engine *e)
{
    port_die("%s", e->err);
}

_Noreturn void cli_slot_die(const Slot *s)
{
    port_die("%s", s->err);
}

void cli_open_engine(Engine *e, const EngineOptions *o)
{
    int rc = engine_open(e, o);
    if (e->notice[0]) port_err("%s\n", e->notice);
    if (o->show_plan && (rc > 0 || (rc < 0 && e->refused))) {
        engine_print_plan(e);
        engine_print_system(1);
        port_out_flush();
    }
    if (rc < 0) cli_engine_die(e);
    if (rc > 0) {
        engine_close(e);
        port_exit(0);
    }
}

void cli_plan_item(void *ctx, Plan *p)
{
    const CliPlanItem *item = ctx;
    plan_add(p, item->what, item->bytes);
}

void cli_map_plan(Arena *a, const Plan *p, const char *owner)
{
    if (p->overflow || p->total > (uint64_t)SIZE_MAX) port_die("%s: the memory plan overflows", owner);
    void *base = port_arena_map((size_t)p->total);
    if (!base) port_die("%s: cannot allocate the arena of %llu bytes", owner, (unsigned long long)p->total);
    arena_init(a, base, p->total);
}

const char *cli_spec_stats(const Engine *e, const Slot *s, char *buf, size_t cap)
{
    buf[0] = '\0';
    if (e->opt.spec_type != ENGINE_SPEC_NONE)
        snprintf(buf, cap, "; drafted %u, accepted %u (%.1f%%)", s->n_drafted, s->n_accepted,
                 s->n_drafted ? 100.0 * s->n_accepted / s->n_drafted : 0.0);
    return buf;
}
