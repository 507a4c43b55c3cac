/* ggufedit - copies a GGUF file with one or more things changed, to make
 * hostile model files for the tests (tests/t_robust.sh).
 *
 *   ggufedit IN OUT [edits...]
 *     --set-u32 KEY N        set (or add) an unsigned 32-bit key
 *     --set-str KEY TEXT     set (or add) a string key
 *     --set-bool KEY 0|1     set (or add) a bool key
 *     --drop-key KEY         leave a key out
 *     --drop-tensor NAME     leave a tensor out
 *     --nan NAME             every element of an F32/F16 tensor becomes NaN
 *     --inf NAME             its first element becomes +Inf
 *     --nan-row NAME ROW     row ROW (ne[0] elements) of an F32/F16 tensor becomes
 *                            NaN, e.g. one token's row of token_embd.weight
 *     --shrink-array KEY N   keep only the first N elements of an array key
 *
 * Keys and tensors keep their order; tensor data is copied byte for byte
 * (test code: stdio and malloc). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/base/ggml_type.h"
#include "../../src/gguf/gguf.h"
#include "gguf_writer.h"

#define MAX_EDITS 64

typedef struct {
    const char *op, *name, *value;
    int used;
} Edit;

static Edit edits[MAX_EDITS];
static int n_edits;

static void die(const char *what, const char *arg)
{
    fprintf(stderr, "ggufedit: %s%s%s\n", what, arg ? ": " : "", arg ? arg : "");
    exit(2);
}

static Edit *find(const char *op, const char *name)
{
    for (int i = 0; i < n_edits; i++)
        if (strcmp(edits[i].op, op) == 0 && strcmp(edits[i].name, name) == 0) return &edits[i];
    return NULL;
}

/* Bytes of the first n elements of an array value (raw, as in the file). */
static size_t array_prefix(Gguf *g, const GgufKV *kv, const uint8_t *v, uint64_t n)
{
    if (kv->arr_type == GGUF_TYPE_STRING) {
        size_t at = 0;
        for (uint64_t i = 0; i < n; i++) {
            uint64_t len;
            memcpy(&len, v + at, 8);
            at += 8 + (size_t)len;
        }
        return at;
    }
    static const size_t sizes[GGUF_TYPE_COUNT] = {1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8};
    (void)g;
    if (kv->arr_type >= GGUF_TYPE_COUNT || sizes[kv->arr_type] == 0) die("cannot shrink an array of arrays", kv->key);
    return (size_t)n * sizes[kv->arr_type];
}

static int on_kv(void *ctx, Gguf *g, const GgufKV *kv, GgufError *err)
{
    GgufWriter *w = ctx;
    (void)err;
    Edit *e;
    if ((e = find("--drop-key", kv->key))) return e->used = 1, 0;
    if ((e = find("--set-u32", kv->key))) return e->used = 1, gw_kv_u32(w, kv->key, (uint32_t)strtoul(e->value, NULL, 10)), 0;
    if ((e = find("--set-str", kv->key))) return e->used = 1, gw_kv_str(w, kv->key, e->value), 0;
    if ((e = find("--set-bool", kv->key))) return e->used = 1, gw_kv_bool(w, kv->key, atoi(e->value) != 0), 0;
    if ((e = find("--shrink-array", kv->key))) {
        e->used = 1;
        uint64_t n = strtoull(e->value, NULL, 10);
        if (kv->type != GGUF_TYPE_ARRAY || n > kv->arr_len) die("not an array this long", kv->key);
        uint8_t *buf = malloc(kv->value_end - kv->value_offset + 1);
        const uint8_t *v = gguf_value_bytes(g, kv, buf);
        if (!v) die("cannot read", kv->key);
        size_t bytes = array_prefix(g, kv, v, n);
        GwBuf b = {0};
        gwb_u32(&b, kv->arr_type);
        gwb_u64(&b, n);
        gwb_bytes(&b, v, bytes);
        gw_kv_raw(w, kv->key, GGUF_TYPE_ARRAY, b.p, b.len);
        gwb_free(&b);
        free(buf);
        return 0;
    }
    if (gw_kv_copy(w, g, kv) != 0) die("cannot copy key", kv->key);
    return 0;
}

static int on_tensor(void *ctx, Gguf *g, const GgufTensor *t, GgufError *err)
{
    GgufWriter *w = ctx;
    (void)err;
    Edit *e;
    if ((e = find("--drop-tensor", t->name))) return e->used = 1, 0;
    uint8_t *data = malloc(t->n_bytes ? t->n_bytes : 1);
    const uint8_t *p = gguf_tensor_bytes(g, t, data);
    if (!p) die("cannot read tensor", t->name);
    if (p != data) memcpy(data, p, t->n_bytes);
    int nan = (e = find("--nan", t->name)) != NULL;
    if (nan) e->used = 1;
    int inf = (e = find("--inf", t->name)) != NULL;
    if (inf) e->used = 1;
    uint64_t first = 0, n = nan ? t->n_elements : 1;
    if ((e = find("--nan-row", t->name))) {
        e->used = 1;
        char *end;
        uint64_t row = strtoull(e->value, &end, 10), rows = t->ne[0] ? t->n_elements / t->ne[0] : 0;
        if (*e->value == '\0' || *end != '\0' || row >= rows) die("--nan-row: no such row", e->value);
        first = row * t->ne[0], n = t->ne[0], nan = 1;
    }
    if (nan || inf) {
        if (t->type != GGML_TYPE_F32 && t->type != GGML_TYPE_F16)
            die("--nan/--nan-row/--inf need an F32 or F16 tensor", t->name);
        for (uint64_t i = first; i < first + n; i++) {
            if (t->type == GGML_TYPE_F32) {
                uint32_t bits = nan ? 0x7fc00000u : 0x7f800000u;
                memcpy(data + 4 * i, &bits, 4);
            } else {
                uint16_t bits = nan ? 0x7e00 : 0x7c00;
                memcpy(data + 2 * i, &bits, 2);
            }
        }
    }
    gw_tensor_raw(w, t->name, t->n_dims, t->ne, t->type, data, (size_t)t->n_bytes);
    free(data);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 3) die("usage: ggufedit IN OUT [--set-u32 K N] [--set-str K S] [--set-bool K 0|1] [--drop-key K] [--drop-tensor T] "
                      "[--nan T] [--nan-row T ROW] [--inf T] [--shrink-array K N]", NULL);
    for (int i = 3; i < argc; i++) {
        if (n_edits == MAX_EDITS) die("too many edits", NULL);
        Edit *e = &edits[n_edits++];
        e->op = argv[i];
        int two = !strcmp(e->op, "--set-u32") || !strcmp(e->op, "--set-str") || !strcmp(e->op, "--set-bool") ||
                  !strcmp(e->op, "--shrink-array") ||
                  !strcmp(e->op, "--nan-row");
        int one = !strcmp(e->op, "--drop-key") || !strcmp(e->op, "--drop-tensor") || !strcmp(e->op, "--nan") ||
                  !strcmp(e->op, "--inf");
        if (!one && !two) die("unknown edit", e->op);
        if (i + 1 + two >= argc) die("missing value", e->op);
        e->name = argv[++i];
        if (two) e->value = argv[++i];
    }
    static Gguf g;
    GgufError err;
    if (gguf_open(&g, argv[1], 1, NULL, &err) != 0) die(err.msg, NULL);
    GgufWriter *w = gw_new(3, 0);
    GgufScanCallbacks kv_cb = {on_kv, NULL, w}, t_cb = {NULL, on_tensor, w};
    if (gguf_walk(&g, &kv_cb, &err) != 0) die(err.msg, NULL);
    /* --set of a key the file does not have adds it. */
    for (int i = 0; i < n_edits; i++) {
        Edit *e = &edits[i];
        if (e->used) continue;
        if (!strcmp(e->op, "--set-u32")) gw_kv_u32(w, e->name, (uint32_t)strtoul(e->value, NULL, 10)), e->used = 1;
        else if (!strcmp(e->op, "--set-str")) gw_kv_str(w, e->name, e->value), e->used = 1;
        else if (!strcmp(e->op, "--set-bool")) gw_kv_bool(w, e->name, atoi(e->value) != 0), e->used = 1;
    }
    if (gguf_walk(&g, &t_cb, &err) != 0) die(err.msg, NULL);
    for (int i = 0; i < n_edits; i++)
        if (!edits[i].used) die("no such key or tensor", edits[i].name);
    if (gw_write(w, argv[2]) != 0) die("cannot write", argv[2]);
    gw_free(w);
    gguf_close(&g);
    return 0;
}
