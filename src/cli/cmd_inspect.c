/* cmd_inspect.c - `pith inspect MODEL`: what a GGUF file holds.
 * Its options: inspect_options below.
 *
 * Prints the file's facts, its metadata (long strings cut, arrays as type,
 * length and first items), a count of tensors per type and the totals;
 * --tensors adds the tensor table, --key prints one value alone (strings
 * raw, arrays one item per line), --plan the memory plan. */
#include <stdio.h>
#include <string.h>

#include "../../port/port.h"
#include "../arena/arena.h"
#include "cli.h"
#include "../base/ggml_type.h"
#include "../gguf/gguf.h"

#define SCRATCH_BYTES 65536   /* read buffer for strings and array items */
#define LIST_STRING_CAP 512   /* bytes of a string shown in the listing */
#define LIST_ARRAY_ITEMS 6    /* items of an array shown in the listing */

typedef struct {
    Gguf *g;
    uint8_t *scratch;
} Inspect;

/* Reads [off, off+n) of file `file` into the scratch buffer (n <= SCRATCH_BYTES). */
static const uint8_t *read_at(Inspect *in, uint32_t file, uint64_t off, size_t n)
{
    const uint8_t *p = port_file_bytes(&in->g->files[file], off, n, in->scratch);
    if (!p) port_die("%s: byte %llu: read error", in->g->files[file].path, (unsigned long long)off);
    return p;
}

static uint64_t le_at(const uint8_t *p, int n)
{
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--) v = (v << 8) | p[i];
    return v;
}

/* Prints a string stored at [off, off+len), at most cap bytes of it;
 * escaped for the listing, or raw. */
static void print_text(Inspect *in, uint32_t file, uint64_t off, uint64_t len, uint64_t cap, int escape)
{
    uint64_t shown = len < cap ? len : cap;
    if (escape) port_out("\"");
    for (uint64_t done = 0; done < shown;) {
        size_t n = shown - done < 4096 ? (size_t)(shown - done) : 4096;
        const uint8_t *p = read_at(in, file, off + done, n);
        if (!escape) {
            port_out_bytes(p, n);
        } else {
            for (size_t i = 0; i < n; i++) {
                uint8_t c = p[i];
                if (c == '\n') port_out("\\n");
                else if (c == '\t') port_out("\\t");
                else if (c == '\r') port_out("\\r");
                else if (c == '\\' || c == '"') port_out("\\%c", c);
                else if (c < 0x20 || c == 0x7f) port_out("\\x%02x", c);
                else port_out("%c", c);
            }
        }
        done += n;
    }
    if (escape) port_out("\"");
    if (shown < len) port_out("... (%llu bytes)", (unsigned long long)len);
}

static int type_bytes(uint32_t t)
{
    switch (t) {
    case GGUF_TYPE_UINT8: case GGUF_TYPE_INT8: case GGUF_TYPE_BOOL: return 1;
    case GGUF_TYPE_UINT16: case GGUF_TYPE_INT16: return 2;
    case GGUF_TYPE_UINT32: case GGUF_TYPE_INT32: case GGUF_TYPE_FLOAT32: return 4;
    default: return 8;
    }
}

/* Prints one scalar of type t from its little-endian bytes. */
static void print_scalar(uint32_t t, const uint8_t *p)
{
    uint64_t u = le_at(p, type_bytes(t));
    switch (t) {
    case GGUF_TYPE_INT8: port_out("%d", (int)(int8_t)u); break;
    case GGUF_TYPE_INT16: port_out("%d", (int)(int16_t)u); break;
    case GGUF_TYPE_INT32: port_out("%ld", (long)(int32_t)u); break;
    case GGUF_TYPE_INT64: port_out("%lld", (long long)(int64_t)u); break;
    case GGUF_TYPE_BOOL: port_out("%s", u ? "true" : "false"); break;
    case GGUF_TYPE_FLOAT32: {
        uint32_t b = (uint32_t)u;
        float f;
        memcpy(&f, &b, 4);
        port_out("%.9g", (double)f);
        break;
    }
    case GGUF_TYPE_FLOAT64: {
        double d;
        memcpy(&d, &u, 8);
        port_out("%.17g", d);
        break;
    }
    default: port_out("%llu", (unsigned long long)u); break;
    }
}

static void print_kv_scalar(const GgufKV *kv)
{
    uint8_t b[8];
    uint64_t u = kv->v.u;
    if (kv->type == GGUF_TYPE_FLOAT32) {
        float f = (float)kv->v.f;
        uint32_t x;
        memcpy(&x, &f, 4);
        u = x;
    } else if (kv->type == GGUF_TYPE_FLOAT64) {
        memcpy(&u, &kv->v.f, 8);
    }
    for (int i = 0; i < 8; i++) b[i] = (uint8_t)(u >> (8 * i));
    print_scalar(kv->type, b);
}

/* Prints up to max_items items of an array value; sep between items.
 * Nested arrays show as [type x count]. Returns the number shown. */
static uint64_t print_items(Inspect *in, const GgufKV *kv, uint64_t max_items, const char *sep, uint64_t str_cap, int escape)
{
    uint32_t file = kv->file_index;
    uint64_t off = kv->value_offset;
    uint64_t n = kv->arr_len < max_items ? kv->arr_len : max_items;
    for (uint64_t i = 0; i < n; i++) {
        if (i) port_out("%s", sep);
        if (kv->arr_type == GGUF_TYPE_STRING) {
            uint64_t len = le_at(read_at(in, file, off, 8), 8);
            print_text(in, file, off + 8, len, str_cap, escape);
            off += 8 + len;
        } else if (kv->arr_type == GGUF_TYPE_ARRAY) {
            /* the reader validated the nesting; skip by re-reading sizes */
            const uint8_t *p = read_at(in, file, off, 12);
            uint32_t et = (uint32_t)le_at(p, 4);
            uint64_t cnt = le_at(p + 4, 8);
            port_out("[%s x %llu]", gguf_value_type_name(et), (unsigned long long)cnt);
            if (i + 1 < n) {
                /* only fixed-size inner arrays can be skipped cheaply; stop otherwise */
                if (et == GGUF_TYPE_STRING || et == GGUF_TYPE_ARRAY) return i + 1;
                off += 12 + cnt * (uint64_t)type_bytes(et);
            }
        } else {
            int sz = type_bytes(kv->arr_type);
            print_scalar(kv->arr_type, read_at(in, file, off, (size_t)sz));
            off += (uint64_t)sz;
        }
    }
    return n;
}

static void print_value(Inspect *in, const GgufKV *kv)
{
    if (kv->type == GGUF_TYPE_STRING) {
        print_text(in, kv->file_index, kv->value_offset, kv->arr_len, LIST_STRING_CAP, 1);
    } else if (kv->type == GGUF_TYPE_ARRAY) {
        port_out("[%s x %llu]", gguf_value_type_name(kv->arr_type), (unsigned long long)kv->arr_len);
        if (kv->arr_len > 0) {
            port_out(" ");
            uint64_t shown = print_items(in, kv, LIST_ARRAY_ITEMS, ", ", 64, 1);
            if (shown < kv->arr_len) port_out(", ...");
        }
    } else {
        print_kv_scalar(kv);
    }
}

/* --key: the value alone. */
static void print_key(Inspect *in, const GgufKV *kv)
{
    if (kv->type == GGUF_TYPE_STRING) {
        print_text(in, kv->file_index, kv->value_offset, kv->arr_len, UINT64_MAX, 0);
    } else if (kv->type == GGUF_TYPE_ARRAY) {
        print_items(in, kv, UINT64_MAX, "\n", UINT64_MAX, 1);
    } else {
        print_kv_scalar(kv);
    }
    port_out("\n");
}

static void print_dims(const GgufTensor *t)
{
    char buf[96];
    int n = 0;
    for (uint32_t d = 0; d < t->n_dims; d++)
        n += snprintf(buf + n, sizeof buf - (size_t)n, "%s%llu", d ? " x " : "", (unsigned long long)t->ne[d]);
    port_out("%-22s", buf);
}

typedef struct {
    const char *key;
    int show_tensors, show_plan;
} InspectArgs;

const CliOpt inspect_options[] = {
    OPT_FLAG("--tensors\tthe tensor table too", InspectArgs, show_tensors, 1),
    OPT_STRING("--key KEY\tone metadata value", InspectArgs, key),
    OPT_INCLUDE(cli_file_options),
    OPT_FLAG("--plan\tprint the memory plan too", InspectArgs, show_plan, 1),
    OPT_END,
};

int cmd_inspect(const CliCommand *cmd, int argc, char **argv)
{
    EngineOptions o;
    InspectArgs a = {0};
    cli_parse(cmd, argc, argv, &o, &a);
    const char *path = o.model_path, *key = a.key;
    int show_tensors = a.show_tensors, show_plan = a.show_plan, use_mmap = o.use_mmap;

    static Gguf g;
    GgufError err;
    if (gguf_open(&g, path, use_mmap, NULL, &err) != 0) port_die("%s", err.msg);
    Plan plan;
    plan_init(&plan);
    gguf_plan(&g, &plan);
    plan_add(&plan, "scratch", SCRATCH_BYTES);
    Arena arena;
    cli_map_plan(&arena, &plan, path);
    if (gguf_index(&g, &arena, &err) != 0) port_die("%s", err.msg);
    Inspect in = {&g, arena_take(&arena, SCRATCH_BYTES)};
    if (!in.scratch) port_die("%s: internal error: arena too small", path);

    if (key) {
        const GgufKV *kv = gguf_find_key(&g, key);
        if (!kv) port_die("%s: no key '%s'", path, key);
        print_key(&in, kv);
    } else {
        port_out("file: %s\n", path);
        uint64_t total_size = 0;
        for (uint32_t i = 0; i < g.n_files; i++) total_size += g.files[i].size;
        port_out("size: %llu bytes\n", (unsigned long long)total_size);
        port_out("GGUF version: %u\n", g.version);
        port_out("alignment: %llu\n", (unsigned long long)g.alignment);
        port_out("data start: %llu\n", (unsigned long long)g.data_start[0]);
        port_out("split files: %u\n", g.n_files);
        for (uint32_t i = 1; i < g.n_files; i++)
            port_out("  file %u: %s (%llu bytes, data start %llu)\n", i + 1, g.files[i].path,
                     (unsigned long long)g.files[i].size, (unsigned long long)g.data_start[i]);
        port_out("metadata: %llu keys\n", (unsigned long long)g.sizes.n_kv);
        for (uint64_t i = 0; i < g.sizes.n_kv; i++) {
            const GgufKV *kv = &g.kvs[i];
            port_out("  %-40s %-6s = ", kv->key, gguf_value_type_name(kv->type));
            print_value(&in, kv);
            port_out("\n");
        }
        uint64_t per_type[GGML_TYPE_COUNT] = {0}, params = 0, bytes = 0;
        if (show_tensors) {
            port_out("tensor table:\n");
            port_out("  %-32s %-22s %-8s %14s %12s\n", "name", "dims", "type", "offset", "bytes");
        }
        for (uint64_t i = 0; i < g.sizes.n_tensors; i++) {
            const GgufTensor *t = &g.tensors[i];
            per_type[t->type]++;
            params += t->n_elements;
            bytes += t->n_bytes;
            if (!show_tensors) continue;
            port_out("  %-32s ", t->name);
            print_dims(t);
            port_out(" %-8s %14llu %12llu", ggml_type_info(t->type)->name, (unsigned long long)t->offset,
                     (unsigned long long)t->n_bytes);
            if (g.n_files > 1) port_out("  (file %u)", t->file_index + 1);
            port_out("\n");
        }
        port_out("tensor types:");
        for (uint32_t t = 0; t < GGML_TYPE_COUNT; t++)
            if (per_type[t]) port_out(" %s x%llu", ggml_type_info(t)->name, (unsigned long long)per_type[t]);
        port_out("\n");
        port_out("tensors: %llu\n", (unsigned long long)g.sizes.n_tensors);
        port_out("parameters: %llu\n", (unsigned long long)params);
        port_out("tensor bytes: %llu\n", (unsigned long long)bytes);
    }
    if (show_plan) {
        plan_print(&plan);
        engine_print_system(1);
    }
    port_out_flush();
    gguf_close(&g);
    arena_unmap(&arena);
    return 0;
}
