/* test_gguf.c - the GGUF reader on the fixtures, on writer-made models and
 * on a malformed corpus made here (writer output + byte surgery, truncated
 * copies of the fixtures).
 *
 *   build/asan/tests/test_gguf                      runs the checks
 *   build/asan/tests/test_gguf --write-corpus DIR   only writes the malformed
 *                                                   files (for tests/t_inspect.sh) */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../src/arena/arena.h"
#include "../src/base/ggml_type.h"
#include "../src/gguf/gguf.h"
#include "check.h"
#include "tools/gguf_writer.h"

static char tmpdir[256];
static const char *corpus_dir; /* --write-corpus: write malformed files, check nothing */
static int corpus_n;

/* ---- loading --------------------------------------------------------------------- */

typedef struct {
    Gguf g;
    Plan plan;
    void *mem;
    uint64_t file_size;
} Model;

/* gguf_open + plan + gguf_index. Returns 0, or -1 with err filled. */
static int load(Model *m, const char *path, int use_mmap, GgufError *err)
{
    memset(&m->plan, 0, sizeof m->plan);
    m->mem = NULL;
    if (gguf_open(&m->g, path, use_mmap, NULL, err) != 0) return -1;
    plan_init(&m->plan);
    gguf_plan(&m->g, &m->plan);
    m->file_size = 0;
    for (uint32_t i = 0; i < m->g.n_files; i++) m->file_size += m->g.files[i].size;
    if (m->plan.overflow) {
        snprintf(err->msg, sizeof err->msg, "plan overflow");
        gguf_close(&m->g);
        return -1;
    }
    m->mem = calloc(1, (size_t)m->plan.total + 1);
    Arena a;
    arena_init(&a, m->mem, m->plan.total);
    if (gguf_index(&m->g, &a, err) != 0) {
        gguf_close(&m->g);
        free(m->mem);
        m->mem = NULL;
        return -1;
    }
    return 0;
}

static void unload(Model *m)
{
    gguf_close(&m->g);
    free(m->mem);
    m->mem = NULL;
}

static Model *model_new(void)
{
    Model *m = calloc(1, sizeof *m);
    if (!m) abort();
    return m;
}

/* The index tables may not grow beyond a small multiple of the file. */
static int plan_bounded(const Model *m)
{
    return m->plan.total <= 8 * m->file_size + 4096;
}

static uint8_t *value_bytes(Model *m, const GgufKV *kv, uint64_t *n)
{
    *n = kv->value_end - kv->value_offset;
    uint8_t *buf = malloc((size_t)*n + 1);
    const uint8_t *p = gguf_value_bytes(&m->g, kv, buf);
    if (!p) {
        free(buf);
        return NULL;
    }
    if (p != buf) memcpy(buf, p, (size_t)*n);
    return buf;
}

static uint8_t *tensor_bytes(Model *m, const GgufTensor *t)
{
    uint8_t *buf = malloc((size_t)t->n_bytes + 1);
    const uint8_t *p = gguf_tensor_bytes(&m->g, t, buf);
    if (!p) {
        free(buf);
        return NULL;
    }
    if (p != buf) memcpy(buf, p, (size_t)t->n_bytes);
    return buf;
}

/* Every record and every byte of two loads of the same model agree. */
static int same_model(Model *a, Model *b, int compare_data)
{
    if (a->g.sizes.n_kv != b->g.sizes.n_kv || a->g.sizes.n_tensors != b->g.sizes.n_tensors) return 0;
    if (a->g.n_files != b->g.n_files || a->g.alignment != b->g.alignment) return 0;
    for (uint64_t i = 0; i < a->g.sizes.n_kv; i++) {
        const GgufKV *x = &a->g.kvs[i], *y = &b->g.kvs[i];
        if (strcmp(x->key, y->key) || x->type != y->type || x->arr_type != y->arr_type || x->arr_len != y->arr_len ||
            x->value_offset != y->value_offset || x->value_end != y->value_end || x->v.u != y->v.u)
            return 0;
        uint64_t nx, ny;
        uint8_t *bx = value_bytes(a, x, &nx), *by = value_bytes(b, y, &ny);
        int same = bx && by && nx == ny && memcmp(bx, by, (size_t)nx) == 0;
        free(bx);
        free(by);
        if (!same) return 0;
    }
    for (uint64_t i = 0; i < a->g.sizes.n_tensors; i++) {
        const GgufTensor *x = &a->g.tensors[i], *y = &b->g.tensors[i];
        if (strcmp(x->name, y->name) || x->n_dims != y->n_dims || memcmp(x->ne, y->ne, sizeof x->ne) ||
            x->type != y->type || x->offset != y->offset || x->n_bytes != y->n_bytes || x->file_index != y->file_index)
            return 0;
        if (!compare_data) continue;
        uint8_t *bx = tensor_bytes(a, x), *by = tensor_bytes(b, y);
        int same = bx && by && memcmp(bx, by, (size_t)x->n_bytes) == 0;
        free(bx);
        free(by);
        if (!same) return 0;
    }
    return 1;
}

/* "PATH: byte N: text" with N == want (want < 0: any N). */
static int msg_ok(const char *msg, const char *path, long long want)
{
    size_t pl = strlen(path);
    if (strncmp(msg, path, pl) != 0 || strncmp(msg + pl, ": byte ", 7) != 0) return 0;
    const char *p = msg + pl + 7;
    char *end;
    long long n = strtoll(p, &end, 10);
    if (end == p || strncmp(end, ": ", 2) != 0 || strlen(end + 2) < 5) return 0;
    return want < 0 || n == want;
}

static void write_file(const char *path, const void *bytes, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (!f || (n && fwrite(bytes, 1, n, f) != n) || fclose(f) != 0) {
        fprintf(stderr, "cannot write %s\n", path);
        exit(1);
    }
}

/* Both backends refuse the file at `path`, at byte want, message containing
 * `needle` (if given). */
static int refused_file_at(const char *path, const char *msg_path, long long want, const char *needle, char *why,
                           size_t why_len)
{
    Model *m = model_new();
    int ok = 1;
    for (int mm = 1; mm >= 0; mm--) {
        GgufError err;
        memset(&err, 0, sizeof err);
        if (load(m, path, mm, &err) == 0) {
            snprintf(why, why_len, "accepted (%s)", mm ? "mmap" : "read");
            unload(m);
            ok = 0;
            break;
        }
        if (!msg_ok(err.msg, msg_path, want) || (needle && !strstr(err.msg, needle))) {
            snprintf(why, why_len, "%s", err.msg);
            ok = 0;
            break;
        }
    }
    free(m);
    return ok;
}

static int refused_file(const char *path, long long want, const char *needle, char *why, size_t why_len)
{
    return refused_file_at(path, path, want, needle, why, why_len);
}

/* One malformed image: written to a temp file and refused. */
static void expect_refused(const char *name, const uint8_t *img, size_t n, long long want, const char *needle)
{
    if (corpus_dir) {
        char p[512];
        snprintf(p, sizeof p, "%s/case%03d.gguf", corpus_dir, corpus_n++);
        write_file(p, img, n);
        return;
    }
    char path[512], why[600];
    snprintf(path, sizeof path, "%s/bad.gguf", tmpdir);
    write_file(path, img, n);
    int ok = refused_file(path, want, needle, why, sizeof why);
    CHECK(ok, "refuses %s", name);
    if (!ok) printf("#   %s\n", why);
}

/* ---- byte surgery helpers --------------------------------------------------------- */

static uint64_t get_le(const uint8_t *p, int n)
{
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--) v = (v << 8) | p[i];
    return v;
}

static void put_le(uint8_t *p, uint64_t v, int n)
{
    for (int i = 0; i < n; i++) p[i] = (uint8_t)(v >> (8 * i));
}

/* Offsets inside a KV record starting at `at`. */
static uint64_t kv_type_at(const uint8_t *img, uint64_t at) { return at + 8 + get_le(img + at, 8); }
static uint64_t kv_value_at(const uint8_t *img, uint64_t at) { return kv_type_at(img, at) + 4; }
/* ... and inside a tensor record. */
static uint64_t ti_ndims_at(const uint8_t *img, uint64_t at) { return at + 8 + get_le(img + at, 8); }
static uint64_t ti_type_at(const uint8_t *img, uint64_t at)
{
    uint64_t d = ti_ndims_at(img, at);
    return d + 4 + 8 * get_le(img + d, 4);
}
static uint64_t ti_offset_at(const uint8_t *img, uint64_t at) { return ti_type_at(img, at) + 4; }

/* ---- a writer-made model using every value type -------------------------------------- */

#define BASE_KV_ARCH 0
static const char *const STRS[] = {"a", "bc", "", "d\303\251f"};

static float data_f32[64 * 3], data_f16[32 * 2], data_q8[64 * 2], data_bf16[8], data_3d[24];

static void fill_data(void)
{
    GwRng r = {42};
    for (size_t i = 0; i < sizeof data_f32 / 4; i++) data_f32[i] = gw_rng_uniform(&r);
    for (size_t i = 0; i < sizeof data_f16 / 4; i++) data_f16[i] = gw_rng_uniform(&r) * 3;
    for (size_t i = 0; i < sizeof data_q8 / 4; i++) data_q8[i] = gw_rng_uniform(&r) * 0.1f;
    for (size_t i = 0; i < sizeof data_bf16 / 4; i++) data_bf16[i] = gw_rng_uniform(&r) * 100;
    for (size_t i = 0; i < sizeof data_3d / 4; i++) data_3d[i] = (float)i;
}

/* Nested: an array of 3 arrays: u32[1,2,3], u32[], string["x","yz"]. */
static void nested_value(GwBuf *b)
{
    gwb_u32(b, GGUF_TYPE_ARRAY);
    gwb_u64(b, 3);
    gwb_u32(b, GGUF_TYPE_UINT32);
    gwb_u64(b, 3);
    gwb_u32(b, 1), gwb_u32(b, 2), gwb_u32(b, 3);
    gwb_u32(b, GGUF_TYPE_UINT32);
    gwb_u64(b, 0);
    gwb_u32(b, GGUF_TYPE_STRING);
    gwb_u64(b, 2);
    gwb_str(b, "x"), gwb_str(b, "yz");
}

/* KV 0 is general.architecture (when align == 0); the last KV a string. */
static GgufWriter *base_writer(uint32_t version, uint32_t align)
{
    GgufWriter *w = gw_new(version, align);
    gw_kv_str(w, "general.architecture", "test");
    gw_kv_int(w, "t.u8", GGUF_TYPE_UINT8, 200);
    gw_kv_int(w, "t.i8", GGUF_TYPE_INT8, (uint64_t)(int64_t)-5);
    gw_kv_int(w, "t.u16", GGUF_TYPE_UINT16, 60000);
    gw_kv_int(w, "t.i16", GGUF_TYPE_INT16, (uint64_t)(int64_t)-30000);
    gw_kv_u32(w, "t.u32", 4000000000u);
    gw_kv_i32(w, "t.i32", -2000000000);
    gw_kv_f32(w, "t.f32", 1.5f);
    gw_kv_bool(w, "t.bool", 1);
    gw_kv_u64(w, "t.u64", (1ull << 63) + 5);
    gw_kv_int(w, "t.i64", GGUF_TYPE_INT64, (uint64_t)(-(1ll << 62)));
    gw_kv_f64(w, "t.f64", 3.141592653589793);
    gw_kv_str(w, "t.empty", "");
    gw_kv_str_array(w, "t.strs", STRS, 4);
    int32_t ints[5] = {-1, 0, 1, 2, 1 << 30};
    gw_kv_array(w, "t.ints", GGUF_TYPE_INT32, ints, 5);
    GwBuf b = {0};
    nested_value(&b);
    gw_kv_raw(w, "t.nested", GGUF_TYPE_ARRAY, b.p, b.len);
    gwb_free(&b);
    gw_kv_str(w, "t.last", "the end");
    uint64_t ne1[2] = {64, 3}, ne2[2] = {32, 2}, ne3[2] = {64, 2}, ne4[1] = {8}, ne5[3] = {4, 3, 2};
    gw_tensor(w, "w.f32", 2, ne1, GGML_TYPE_F32, data_f32);
    gw_tensor(w, "w.f16", 2, ne2, GGML_TYPE_F16, data_f16);
    gw_tensor(w, "w.q8", 2, ne3, GGML_TYPE_Q8_0, data_q8);
    gw_tensor(w, "w.bf16", 1, ne4, GGML_TYPE_BF16, data_bf16);
    gw_tensor(w, "w.3d", 3, ne5, GGML_TYPE_F32, data_3d);
    return w;
}

static int write_model(GgufWriter *w, const char *name, char *path, size_t cap)
{
    snprintf(path, cap, "%s/%s", tmpdir, name);
    return gw_write(w, path);
}

/* Checks every value of a base model. */
static void check_base_values(Model *m, const char *label)
{
    Gguf *g = &m->g;
    uint64_t u;
    double f;
    int b;
    char s[64];
    const GgufKV *kv;
    CHECK(gguf_get_string(g, "general.architecture", s, sizeof s) == 4 && strcmp(s, "test") == 0, "%s: string", label);
    CHECK(gguf_get_uint(g, "t.u8", &u) == 0 && u == 200, "%s: u8", label);
    kv = gguf_find_key(g, "t.i8");
    CHECK(kv && kv->type == GGUF_TYPE_INT8 && kv->v.i == -5 && gguf_get_uint(g, "t.i8", &u) == -1, "%s: i8", label);
    CHECK(gguf_get_uint(g, "t.u16", &u) == 0 && u == 60000, "%s: u16", label);
    kv = gguf_find_key(g, "t.i16");
    CHECK(kv && kv->v.i == -30000 && gguf_get_float(g, "t.i16", &f) == 0 && f == -30000.0, "%s: i16", label);
    CHECK(gguf_get_uint(g, "t.u32", &u) == 0 && u == 4000000000u, "%s: u32", label);
    kv = gguf_find_key(g, "t.i32");
    CHECK(kv && kv->v.i == -2000000000, "%s: i32", label);
    CHECK(gguf_get_float(g, "t.f32", &f) == 0 && f == 1.5, "%s: f32", label);
    CHECK(gguf_get_bool(g, "t.bool", &b) == 0 && b == 1 && gguf_get_bool(g, "t.u8", &b) == -1, "%s: bool", label);
    CHECK(gguf_get_uint(g, "t.u64", &u) == 0 && u == (1ull << 63) + 5, "%s: u64", label);
    kv = gguf_find_key(g, "t.i64");
    CHECK(kv && kv->v.i == -(1ll << 62), "%s: i64", label);
    CHECK(gguf_get_float(g, "t.f64", &f) == 0 && f == 3.141592653589793, "%s: f64", label);
    CHECK(gguf_get_string(g, "t.empty", s, sizeof s) == 0 && s[0] == 0, "%s: empty string", label);
    CHECK(gguf_get_string(g, "t.u8", s, sizeof s) == -1 && gguf_get_uint(g, "general.architecture", &u) == -1,
          "%s: getters refuse other types", label);
    CHECK(gguf_get_string(g, "t.last", s, 4) == 7 && strcmp(s, "the") == 0, "%s: string cut to the buffer", label);
    CHECK(gguf_find_key(g, "t.absent") == NULL && gguf_get_uint(g, "t.absent", &u) == -1, "%s: absent key", label);

    kv = gguf_find_key(g, "t.strs");
    uint64_t n;
    uint8_t *raw = kv ? value_bytes(m, kv, &n) : NULL;
    int strs_ok = raw && kv->arr_type == GGUF_TYPE_STRING && kv->arr_len == 4 && gguf_len_size(g) == 8;
    uint64_t off = 0;
    for (int i = 0; strs_ok && i < 4; i++) {
        uint64_t len = get_le(raw + off, 8);
        strs_ok = len == strlen(STRS[i]) && memcmp(raw + off + 8, STRS[i], (size_t)len) == 0;
        off += 8 + len;
    }
    CHECK(strs_ok && off == n, "%s: string array raw bytes", label);
    free(raw);
    kv = gguf_find_key(g, "t.ints");
    raw = kv ? value_bytes(m, kv, &n) : NULL;
    CHECK(raw && kv->arr_type == GGUF_TYPE_INT32 && n == 20 && (int32_t)get_le(raw + 16, 4) == (1 << 30),
          "%s: i32 array", label);
    free(raw);
    kv = gguf_find_key(g, "t.nested");
    GwBuf want = {0};
    nested_value(&want);
    raw = kv ? value_bytes(m, kv, &n) : NULL;
    CHECK(raw && kv->arr_type == GGUF_TYPE_ARRAY && kv->arr_len == 3 && n == want.len - 12 &&
              memcmp(raw, want.p + 12, (size_t)n) == 0,
          "%s: nested arrays", label);
    free(raw);
    gwb_free(&want);

    const GgufTensor *t = gguf_find_tensor(g, "w.f32");
    uint8_t *d = t ? tensor_bytes(m, t) : NULL;
    CHECK(d && t->type == GGML_TYPE_F32 && t->ne[0] == 64 && t->ne[1] == 3 && t->n_dims == 2 && t->n_bytes == 768 &&
              memcmp(d, data_f32, 768) == 0 && t->offset % g->alignment == 0,
          "%s: f32 tensor", label);
    free(d);
    t = gguf_find_tensor(g, "w.f16");
    d = t ? tensor_bytes(m, t) : NULL;
    int f16_ok = d && t->type == GGML_TYPE_F16 && t->n_bytes == 128;
    for (int i = 0; f16_ok && i < 64; i++)
        f16_ok = fabsf(gw_f16_to_f32((uint16_t)get_le(d + 2 * i, 2)) - data_f16[i]) <= fabsf(data_f16[i]) / 1024;
    CHECK(f16_ok, "%s: f16 tensor within half an ulp", label);
    free(d);
    t = gguf_find_tensor(g, "w.q8");
    d = t ? tensor_bytes(m, t) : NULL;
    int q8_ok = d && t->type == GGML_TYPE_Q8_0 && t->n_bytes == 4 * 34;
    for (int blk = 0; q8_ok && blk < 4; blk++) {
        float scale = gw_f16_to_f32((uint16_t)get_le(d + 34 * blk, 2));
        for (int i = 0; q8_ok && i < 32; i++)
            q8_ok = fabsf((float)(int8_t)d[34 * blk + 2 + i] * scale - data_q8[32 * blk + i]) <= scale * 0.51f + 1e-6f;
    }
    CHECK(q8_ok, "%s: q8_0 tensor dequantizes within half a step", label);
    free(d);
    t = gguf_find_tensor(g, "w.3d");
    CHECK(t && t->n_dims == 3 && t->ne[2] == 2 && t->ne[3] == 1 && t->n_elements == 24, "%s: 3-d tensor", label);
    CHECK(gguf_find_tensor(g, "w.none") == NULL && gguf_find_tensor(g, "") == NULL, "%s: absent tensor", label);
    CHECK(plan_bounded(m), "%s: index plan %llu bytes bounded by the file", label, (unsigned long long)m->plan.total);
}

static void test_writer_models(void)
{
    CHECK(gw_f32_to_f16(1.0f) == 0x3C00 && gw_f32_to_f16(-2.0f) == 0xC000 && gw_f32_to_f16(65504.0f) == 0x7BFF &&
              gw_f32_to_f16(65520.0f) == 0x7C00 && gw_f32_to_f16(0.1f) == 0x2E66,
          "f16: exact values");
    CHECK(gw_f32_to_f16(1.0f + 1.0f / 2048) == 0x3C00 && gw_f32_to_f16(1.0f + 3.0f / 2048) == 0x3C02 &&
              gw_f32_to_f16(ldexpf(1, -24)) == 0x0001 && gw_f32_to_f16(ldexpf(1, -25)) == 0 &&
              gw_f32_to_f16(ldexpf(3, -26)) == 0x0001,
          "f16: round to nearest even, subnormals");
    CHECK(gw_f32_to_bf16(1.0f) == 0x3F80 && gw_f32_to_bf16(1.0f + 1.0f / 256) == 0x3F80 &&
              gw_f32_to_bf16(1.0f + 3.0f / 256) == 0x3F82,
          "bf16: round to nearest even");
    static const uint32_t aligns[] = {0, 1, 64, 4096};
    for (uint32_t version = 2; version <= 3; version++) {
        for (int a = 0; a < 4; a++) {
            GgufWriter *w = base_writer(version, aligns[a]);
            char path[512], label[64];
            snprintf(label, sizeof label, "v%u align %u", version, aligns[a]);
            write_model(w, "base.gguf", path, sizeof path);
            gw_free(w);
            Model *m1 = model_new(), *m2 = model_new();
            GgufError err;
            int ok1 = load(m1, path, 1, &err) == 0;
            if (!ok1) printf("# %s\n", err.msg);
            int ok2 = load(m2, path, 0, &err) == 0;
            if (!ok2) printf("# %s\n", err.msg);
            CHECK(ok1 && ok2, "%s: opens in both backends", label);
            if (ok1 && ok2) {
                CHECK(m1->g.version == version && m1->g.alignment == (aligns[a] ? aligns[a] : 32),
                      "%s: version and alignment", label);
                CHECK(m1->g.data_start[0] % m1->g.alignment == 0, "%s: data start aligned", label);
                check_base_values(m1, label);
                CHECK(same_model(m1, m2, 1), "%s: both backends agree", label);
            }
            if (ok1) unload(m1);
            if (ok2) unload(m2);
            free(m1);
            free(m2);
        }
    }
    /* the densest possible metadata still plans within the bound */
    GgufWriter *w = gw_new(3, 0);
    char key[16], path[512];
    for (int i = 0; i < 3000; i++) {
        snprintf(key, sizeof key, "%d", i);
        gw_kv_int(w, key, GGUF_TYPE_UINT8, (uint64_t)i);
    }
    uint64_t ne = 1;
    float one = 1;
    for (int i = 0; i < 300; i++) {
        snprintf(key, sizeof key, "%d", i);
        gw_tensor(w, key, 1, &ne, GGML_TYPE_F32, &one);
    }
    write_model(w, "dense.gguf", path, sizeof path);
    gw_free(w);
    Model *m = model_new();
    GgufError err;
    int ok = load(m, path, 0, &err) == 0;
    CHECK(ok && plan_bounded(m) && m->g.sizes.n_kv == 3000 && gguf_find_tensor(&m->g, "299") != NULL,
          "dense metadata: plan %llu bytes for a %llu-byte file", (unsigned long long)m->plan.total,
          (unsigned long long)m->file_size);
    if (ok) unload(m);
    free(m);
}

/* ---- the malformed corpus from the writer ---------------------------------------------- */

static uint8_t *base_image(GgufWriter **wout, size_t *n)
{
    GgufWriter *w = base_writer(3, 0);
    uint8_t *img = gw_serialize(w, n);
    *wout = w;
    return img;
}

static void surgery(const char *name, int field_bytes, uint64_t at, uint64_t value, long long want, const char *needle)
{
    GgufWriter *w;
    size_t n;
    uint8_t *img = base_image(&w, &n);
    put_le(img + at, value, field_bytes);
    expect_refused(name, img, n, want, needle);
    free(img);
    gw_free(w);
}

/* A base model with one extra KV (raw key or value) added at the end. */
static void extra_kv(const char *name, const void *key, uint64_t key_len, uint32_t type, const void *val, size_t len,
                     long long want_rel_key, const char *needle)
{
    GgufWriter *w = base_writer(3, 0);
    gw_kv_raw_key(w, key, key_len, type, val, len);
    size_t n;
    uint8_t *img = gw_serialize(w, &n);
    uint64_t at = gw_kv_at(w, gw_n_kv(w) - 1);
    expect_refused(name, img, n, want_rel_key < 0 ? -1 : (long long)at + want_rel_key, needle);
    free(img);
    gw_free(w);
}

static void test_malformed(void)
{
    GgufWriter *w;
    size_t n;
    uint8_t *img = base_image(&w, &n);
    uint64_t kv0 = gw_kv_at(w, 0), kv_strs = gw_kv_at(w, 13), kv_nested = gw_kv_at(w, 15), kv_last = gw_kv_at(w, 16);
    uint64_t t0 = gw_tensor_info_at(w, 0), t1 = gw_tensor_info_at(w, 1), t4 = gw_tensor_info_at(w, 4);
    uint64_t data = gw_data_start(w);
    uint8_t *copy = malloc(n);

    /* the intact image is accepted (so every refusal below is the surgery's doing) */
    if (!corpus_dir) {
        char path[512];
        snprintf(path, sizeof path, "%s/intact.gguf", tmpdir);
        write_file(path, img, n);
        Model *m = model_new();
        GgufError err;
        int ok = load(m, path, 1, &err) == 0;
        CHECK(ok && m->g.sizes.n_kv == 17 && m->g.sizes.n_tensors == 5, "intact base image opens");
        if (ok) unload(m);
        free(m);
    }

    /* header */
    surgery("bad magic", 1, 0, 'X', 0, "magic");
    surgery("version 1", 4, 4, 1, 4, "version");
    surgery("version 4", 4, 4, 4, 4, "version");
    surgery("version 0", 4, 4, 0, 4, "version");
    surgery("big-endian version", 4, 4, 3u << 24, 4, "big-endian");
    surgery("n_tensors 2^63", 8, 8, 1ull << 63, 8, "n_tensors");
    surgery("n_tensors 2^64-1", 8, 8, UINT64_MAX, 8, "n_tensors");
    surgery("n_tensors 2^32", 8, 8, 1ull << 32, 8, "n_tensors");
    surgery("n_kv 2^63", 8, 16, 1ull << 63, 16, "n_kv");
    surgery("n_kv 2^40", 8, 16, 1ull << 40, 16, "n_kv");
    surgery("n_kv one too many", 8, 16, 18, -1, NULL);
    surgery("n_kv one too few", 8, 16, 16, -1, NULL);
    surgery("n_tensors one too many", 8, 8, 6, -1, NULL);
    /* keys */
    surgery("key length 0", 8, kv0, 0, (long long)kv0, "empty key");
    surgery("key length 2^63", 8, kv0, 1ull << 63, (long long)kv0, "key length");
    surgery("key length 65536", 8, kv0, 65536, (long long)kv0, "key length");
    surgery("key length off by one", 8, kv0, get_le(img + kv0, 8) + 1, -1, NULL);
    surgery("value type 13", 4, kv_type_at(img, kv0), 13, (long long)kv_type_at(img, kv0), "value type");
    surgery("value type 2^32-1", 4, kv_type_at(img, kv0), UINT32_MAX, (long long)kv_type_at(img, kv0), "value type");
    surgery("string length 2^63", 8, kv_value_at(img, kv0), 1ull << 63, (long long)kv_value_at(img, kv0), "string length");
    surgery("string length past the end", 8, kv_value_at(img, kv_last), 8 + (uint64_t)n,
            (long long)kv_value_at(img, kv_last), "string length");
    surgery("string array count 2^62", 8, kv_value_at(img, kv_strs) + 4, 1ull << 62,
            (long long)kv_value_at(img, kv_strs) + 4, "array of");
    surgery("string array count 2^64-1", 8, kv_value_at(img, kv_strs) + 4, UINT64_MAX,
            (long long)kv_value_at(img, kv_strs) + 4, "array of");
    surgery("array element type 13", 4, kv_value_at(img, kv_strs), 13, (long long)kv_value_at(img, kv_strs),
            "element type");
    surgery("inner array count 2^62", 8, kv_value_at(img, kv_nested) + 12 + 4, 1ull << 62,
            (long long)kv_value_at(img, kv_nested) + 12 + 4, "array of");
    surgery("bool value 2", 1, kv_value_at(img, gw_kv_at(w, 8)), 2, (long long)kv_value_at(img, gw_kv_at(w, 8)), "bool");
    extra_kv("key 0xff", "a\xff", 2, GGUF_TYPE_UINT8, "\1", 1, 8 + 1, "UTF-8");
    extra_kv("key overlong UTF-8", "ab\xc0\xaf", 4, GGUF_TYPE_UINT8, "\1", 1, 8 + 2, "UTF-8");
    extra_kv("key surrogate", "\xed\xa0\x80", 3, GGUF_TYPE_UINT8, "\1", 1, 8, "UTF-8");
    extra_kv("key above U+10FFFF", "\xf4\x90\x80\x80", 4, GGUF_TYPE_UINT8, "\1", 1, 8, "UTF-8");
    extra_kv("key cut UTF-8", "a\xe2\x82", 3, GGUF_TYPE_UINT8, "\1", 1, 8 + 1, "UTF-8");
    extra_kv("key with NUL", "a\0b", 3, GGUF_TYPE_UINT8, "\1", 1, 8 + 1, "UTF-8");
    extra_kv("key with a newline", "a\nb", 3, GGUF_TYPE_UINT8, "\1", 1, 8 + 1, "control character");
    extra_kv("key with DEL", "ab\x7f", 3, GGUF_TYPE_UINT8, "\1", 1, 8 + 2, "control character");
    extra_kv("duplicate key", "t.u8", 4, GGUF_TYPE_UINT8, "\1", 1, 0, "duplicate key");
    {
        uint8_t deep[9 * 12 + 4];
        uint8_t *p = deep;
        for (int i = 0; i < 9; i++, p += 12) put_le(p, GGUF_TYPE_ARRAY, 4), put_le(p + 4, 1, 8);
        put_le(p, 0, 4); /* never reached */
        extra_kv("arrays nested 9 deep", "deep", 4, GGUF_TYPE_ARRAY, deep, sizeof deep, -1, "nested");
    }
    {
        uint8_t al[4];
        put_le(al, 0, 4);
        extra_kv("alignment 0", "general.alignment", 17, GGUF_TYPE_UINT32, al, 4, 8 + 17 + 4, "power of two");
        put_le(al, 3, 4);
        extra_kv("alignment 3", "general.alignment", 17, GGUF_TYPE_UINT32, al, 4, 8 + 17 + 4, "power of two");
        put_le(al, 48, 4);
        extra_kv("alignment 48", "general.alignment", 17, GGUF_TYPE_UINT32, al, 4, 8 + 17 + 4, "power of two");
        uint8_t al8[8];
        put_le(al8, 32, 8);
        extra_kv("alignment as u64", "general.alignment", 17, GGUF_TYPE_UINT64, al8, 8, 0, "u32");
        extra_kv("split.count as string", "split.count", 11, GGUF_TYPE_STRING, "\1\0\0\0\0\0\0\0x", 9, 0, "split.count");
    }

    /* tensors */
    surgery("tensor name with a tab", 1, t1 + 8 + 1, '\t', (long long)t1 + 8 + 1, "control character");
    surgery("tensor name length 0", 8, t1, 0, (long long)t1, "empty tensor name");
    surgery("tensor name length 2^63", 8, t1, 1ull << 63, (long long)t1, "tensor name");
    surgery("n_dims 0", 4, ti_ndims_at(img, t1), 0, (long long)ti_ndims_at(img, t1), "dimensions");
    surgery("n_dims 5", 4, ti_ndims_at(img, t1), 5, (long long)ti_ndims_at(img, t1), "dimensions");
    surgery("n_dims 2^32-1", 4, ti_ndims_at(img, t1), UINT32_MAX, (long long)ti_ndims_at(img, t1), "dimensions");
    surgery("dimension 0", 8, ti_ndims_at(img, t1) + 4 + 8, 0, (long long)ti_ndims_at(img, t1) + 4 + 8, "size 0");
    surgery("dimension 2^40", 8, ti_ndims_at(img, t1) + 4, 1ull << 40, (long long)ti_type_at(img, t1), "needs");
    surgery("dimension 2^62 (bytes overflow)", 8, ti_ndims_at(img, t0) + 4, 1ull << 62, (long long)ti_type_at(img, t0),
            "overflow");
    {
        GgufWriter *w2 = base_writer(3, 0);
        uint64_t ne[3] = {1ull << 32, 1ull << 32, 1ull << 32};
        gw_tensor_raw(w2, "huge", 3, ne, GGML_TYPE_F32, "", 0);
        size_t n2;
        uint8_t *img2 = gw_serialize(w2, &n2);
        uint64_t at = gw_tensor_info_at(w2, 5);
        expect_refused("element count overflow", img2, n2, (long long)ti_ndims_at(img2, at) + 4 + 8, "overflow");
        free(img2);
        gw_free(w2);
    }
    static const uint32_t bad_types[] = {4, 5, 31, 32, 33, 36, 37, 38, 40, 1000, UINT32_MAX};
    for (size_t i = 0; i < sizeof bad_types / sizeof bad_types[0]; i++) {
        char name[64];
        snprintf(name, sizeof name, "tensor type %u", bad_types[i]);
        surgery(name, 4, ti_type_at(img, t1), bad_types[i], (long long)ti_type_at(img, t1), "invalid type");
    }
    uint64_t t3 = gw_tensor_info_at(w, 3); /* w.bf16: 8 elements */
    surgery("row not a multiple of the block", 4, ti_type_at(img, t3), GGML_TYPE_Q8_0, (long long)ti_type_at(img, t3),
            "block size");
    surgery("misaligned offset", 8, ti_offset_at(img, t1), get_le(img + ti_offset_at(img, t1), 8) + 4,
            (long long)ti_offset_at(img, t1), "alignment");
    surgery("overlapping tensors", 8, ti_offset_at(img, t1), get_le(img + ti_offset_at(img, t0), 8), -1, "overlaps");
    surgery("tensor beyond the file", 8, ti_offset_at(img, t4), ((uint64_t)n - data + 32) / 32 * 32,
            (long long)ti_offset_at(img, t4), "beyond");
    surgery("tensor ending past the file", 8, ti_offset_at(img, t4), ((uint64_t)n - data) / 32 * 32,
            (long long)ti_offset_at(img, t4), "beyond");
    surgery("tensor offset 2^63", 8, ti_offset_at(img, t4), 1ull << 63, (long long)ti_offset_at(img, t4), "beyond");
    {
        GgufWriter *w2 = base_writer(3, 0);
        float z[64] = {0};
        uint64_t ne = 64;
        gw_tensor(w2, "w.f32", 1, &ne, GGML_TYPE_F32, z);
        size_t n2;
        uint8_t *img2 = gw_serialize(w2, &n2);
        expect_refused("duplicate tensor name", img2, n2, (long long)gw_tensor_info_at(w2, 5), "duplicate tensor");
        free(img2);
        gw_free(w2);
    }

    /* truncated at every byte before the end of the last tensor's data */
    uint64_t end = data + get_le(img + ti_offset_at(img, t4), 8) + 24 * 4;
    int all = 1, checked = 0;
    char path[512], why[600];
    snprintf(path, sizeof path, "%s/cut.gguf", tmpdir);
    for (uint64_t len = 0; len < end && !corpus_dir; len++) {
        write_file(path, img, (size_t)len);
        checked++;
        if (!refused_file(path, -1, NULL, why, sizeof why)) {
            if (all) printf("# cut at %llu: %s\n", (unsigned long long)len, why);
            all = 0;
        }
    }
    if (!corpus_dir) CHECK(all && checked > 1000, "writer model refused when cut at each of %d lengths", checked);
    if (corpus_dir) {
        expect_refused("cut in the header", img, (size_t)kv_strs + 20, -1, NULL);
        expect_refused("cut in the data", img, (size_t)end - 1, -1, NULL);
        expect_refused("empty file", img, 0, -1, NULL);
    }
    free(copy);
    free(img);
    gw_free(w);
}

/* Random byte mutations of the base image: each one is either accepted
 * (with a bounded plan, and the same by both backends) or refused with a
 * well-formed message; never a crash (ASan watches). */
static void test_mutations(void)
{
    GgufWriter *w;
    size_t n;
    uint8_t *img = base_image(&w, &n);
    uint8_t *m = malloc(n);
    char path[512];
    snprintf(path, sizeof path, "%s/mut.gguf", tmpdir);
    GwRng r = {2024};
    int bad = 0, accepted = 0, refused = 0;
    uint64_t header = gw_data_start(w);
    for (int it = 0; it < 3000; it++) {
        memcpy(m, img, n);
        int flips = 1 + (int)(gw_rng_next(&r) % 4);
        for (int k = 0; k < flips; k++) {
            uint64_t at = gw_rng_next(&r) % header; /* the header is where the parsing is */
            uint64_t kind = gw_rng_next(&r) % 4;
            if (kind == 0) m[at] ^= (uint8_t)(1u << (gw_rng_next(&r) % 8));
            else if (kind == 1) m[at] = (uint8_t)gw_rng_next(&r);
            else if (kind == 2) m[at] = 0xFF;
            else m[at] = 0;
        }
        write_file(path, m, n);
        Model *a = model_new(), *b = model_new();
        GgufError ea, eb;
        int ra = load(a, path, 1, &ea), rb = load(b, path, 0, &eb);
        if (ra == 0 && rb == 0) {
            accepted++;
            if (!plan_bounded(a) || !same_model(a, b, 1)) bad++;
        } else if (ra != 0 && rb != 0) {
            refused++;
            if (!msg_ok(ea.msg, path, -1) || strcmp(ea.msg, eb.msg) != 0) {
                if (!bad) printf("# mutation %d: '%s' / '%s'\n", it, ea.msg, eb.msg);
                bad++;
            }
        } else {
            bad++;
        }
        if (ra == 0) unload(a);
        if (rb == 0) unload(b);
        free(a);
        free(b);
    }
    CHECK(bad == 0, "3000 random header mutations: %d accepted, %d refused with a message, both backends agree",
          accepted, refused);
    free(m);
    free(img);
    gw_free(w);
}

/* ---- fixtures ----------------------------------------------------------------------- */

typedef struct {
    const char *file;
    int n_tensors;
    const char *types;     /* "TYPE=count ..." */
    const char *embd_type; /* token_embd */
    const char *out_type;  /* output.weight, or NULL when tied */
} FixtureModel;

static const FixtureModel FIXTURE_MODELS[] = {
    {"tiny-qwen3-f32.gguf", 46, "F32=46", "F32", NULL},
    {"tiny-qwen3-Q8_0.gguf", 46, "Q8_0=29 F32=17", "Q8_0", NULL},
    {"tiny-qwen3-Q4_0.gguf", 46, "Q4_0=28 F32=17 Q6_K=1", "Q6_K", NULL},
    {"tiny-qwen3-Q4_K_M.gguf", 46, "Q4_K=24 F32=17 Q6_K=5", "Q6_K", NULL},
    {"tiny-qwen3-Q6_K.gguf", 46, "Q6_K=29 F32=17", "Q6_K", NULL},
    {"tiny-qwen3-untied-f16.gguf", 47, "F16=30 F32=17", "F16", "F16"},
    {"stories260K.gguf", 47, "F32=47", "F32", NULL},
    {"stories260K-f16.gguf", 47, "F16=36 F32=11", "F16", NULL},
};

static int types_match(Model *m, const char *spec)
{
    uint64_t count[GGML_TYPE_COUNT] = {0}, total = 0;
    for (uint64_t i = 0; i < m->g.sizes.n_tensors; i++) count[m->g.tensors[i].type]++;
    char buf[128];
    snprintf(buf, sizeof buf, "%s", spec);
    for (char *tok = strtok(buf, " "); tok; tok = strtok(NULL, " ")) {
        char *eq = strchr(tok, '=');
        *eq = 0;
        int found = 0;
        for (uint32_t t = 0; t < GGML_TYPE_COUNT; t++) {
            const GgmlTypeInfo *ti = ggml_type_info(t);
            if (ti && strcmp(ti->name, tok) == 0) {
                if (count[t] != (uint64_t)atoi(eq + 1)) return 0;
                total += count[t];
                found = 1;
            }
        }
        if (!found) return 0;
    }
    return total == m->g.sizes.n_tensors;
}

static int tensor_is(Model *m, const char *name, const char *type, uint64_t ne0, uint64_t ne1)
{
    const GgufTensor *t = gguf_find_tensor(&m->g, name);
    return t && strcmp(ggml_type_info(t->type)->name, type) == 0 && t->ne[0] == ne0 && t->ne[1] == ne1 &&
           t->n_dims == (ne1 > 1 ? 2u : 1u);
}

static int check_uint(Model *m, const char *key, uint64_t want)
{
    uint64_t v;
    return gguf_get_uint(&m->g, key, &v) == 0 && v == want;
}

static void test_fixture_models(const char *fix)
{
    for (size_t i = 0; i < sizeof FIXTURE_MODELS / sizeof FIXTURE_MODELS[0]; i++) {
        const FixtureModel *fm = &FIXTURE_MODELS[i];
        char path[512];
        snprintf(path, sizeof path, "%s/models/%s", fix, fm->file);
        Model *a = model_new(), *b = model_new();
        GgufError err;
        int ok_a = load(a, path, 1, &err) == 0;
        if (!ok_a) printf("# %s\n", err.msg);
        int ok_b = load(b, path, 0, &err) == 0;
        if (!ok_b) printf("# %s\n", err.msg);
        CHECK(ok_a && ok_b, "%s opens with mmap and with reads", fm->file);
        if (!ok_a || !ok_b) {
            if (ok_a) unload(a);
            if (ok_b) unload(b);
            free(a), free(b);
            continue;
        }
        CHECK(a->g.files[0].map != NULL && b->g.files[0].map == NULL, "%s: the two backends are really different",
              fm->file);
        CHECK(a->g.version == 3 && a->g.alignment == 32 && a->g.n_files == 1, "%s: version 3, alignment 32", fm->file);
        CHECK(a->g.sizes.n_tensors == (uint64_t)fm->n_tensors, "%s: %d tensors", fm->file, fm->n_tensors);
        CHECK(types_match(a, fm->types), "%s: tensor types %s", fm->file, fm->types);
        CHECK(same_model(a, b, 1), "%s: mmap and read backends give identical records and bytes", fm->file);
        CHECK(plan_bounded(a), "%s: index plan bounded", fm->file);
        int qwen = strncmp(fm->file, "tiny-qwen3", 10) == 0;
        char s[64];
        double f;
        int bo;
        if (qwen) {
            CHECK(tensor_is(a, "token_embd.weight", fm->embd_type, 256, 2026), "%s: token_embd %s 256x2026", fm->file,
                  fm->embd_type);
            CHECK(fm->out_type ? tensor_is(a, "output.weight", fm->out_type, 256, 2026)
                               : gguf_find_tensor(&a->g, "output.weight") == NULL,
                  "%s: output.weight %s", fm->file, fm->out_type ? fm->out_type : "absent (tied)");
            CHECK(tensor_is(a, "blk.0.attn_norm.weight", "F32", 256, 1) &&
                      tensor_is(a, "blk.3.attn_q_norm.weight", "F32", 128, 1) &&
                      tensor_is(a, "output_norm.weight", "F32", 256, 1),
                  "%s: norms are F32 with their shapes", fm->file);
            const GgufTensor *q = gguf_find_tensor(&a->g, "blk.2.attn_q.weight");
            const GgufTensor *k = gguf_find_tensor(&a->g, "blk.1.attn_k.weight");
            const GgufTensor *o = gguf_find_tensor(&a->g, "blk.0.attn_output.weight");
            const GgufTensor *dn = gguf_find_tensor(&a->g, "blk.3.ffn_down.weight");
            const GgufTensor *up = gguf_find_tensor(&a->g, "blk.3.ffn_up.weight");
            CHECK(q && q->ne[0] == 256 && q->ne[1] == 512 && k && k->ne[0] == 256 && k->ne[1] == 256 && o &&
                      o->ne[0] == 512 && o->ne[1] == 256 && dn && dn->ne[0] == 768 && dn->ne[1] == 256 && up &&
                      up->ne[0] == 256 && up->ne[1] == 768,
                  "%s: attention and ffn shapes", fm->file);
            CHECK(check_uint(a, "qwen3.block_count", 4) && check_uint(a, "qwen3.embedding_length", 256) &&
                      check_uint(a, "qwen3.attention.head_count", 4) &&
                      check_uint(a, "qwen3.attention.head_count_kv", 2) &&
                      check_uint(a, "qwen3.attention.key_length", 128) &&
                      check_uint(a, "qwen3.feed_forward_length", 768) && check_uint(a, "qwen3.context_length", 4096),
                  "%s: qwen3 hyperparameters", fm->file);
            CHECK(gguf_get_float(&a->g, "qwen3.rope.freq_base", &f) == 0 && f == 1e6 &&
                      gguf_get_float(&a->g, "qwen3.attention.layer_norm_rms_epsilon", &f) == 0 &&
                      fabs(f - 1e-6) < 1e-12,
                  "%s: rope theta and rms eps", fm->file);
            CHECK(check_uint(a, "tokenizer.ggml.bos_token_id", 2000) && check_uint(a, "tokenizer.ggml.eos_token_id", 2002) &&
                      gguf_get_bool(&a->g, "tokenizer.ggml.add_bos_token", &bo) == 0 && bo == 0,
                  "%s: special tokens", fm->file);
            CHECK(gguf_get_string(&a->g, "general.architecture", s, sizeof s) == 5 && strcmp(s, "qwen3") == 0 &&
                      gguf_get_string(&a->g, "tokenizer.ggml.model", s, sizeof s) == 4 && strcmp(s, "gpt2") == 0 &&
                      gguf_get_string(&a->g, "tokenizer.ggml.pre", s, sizeof s) == 5 && strcmp(s, "qwen2") == 0,
                  "%s: architecture and tokenizer strings", fm->file);
            const GgufKV *tok = gguf_find_key(&a->g, "tokenizer.ggml.tokens");
            CHECK(tok && tok->type == GGUF_TYPE_ARRAY && tok->arr_type == GGUF_TYPE_STRING && tok->arr_len == 2026,
                  "%s: 2026 tokens", fm->file);
        } else {
            CHECK(check_uint(a, "llama.block_count", 5) && check_uint(a, "llama.embedding_length", 64) &&
                      check_uint(a, "tokenizer.ggml.bos_token_id", 1) && check_uint(a, "tokenizer.ggml.eos_token_id", 2),
                  "%s: llama hyperparameters and specials", fm->file);
            CHECK(tensor_is(a, "token_embd.weight", fm->embd_type, 64, 512), "%s: token_embd %s 64x512", fm->file,
                  fm->embd_type);
        }
        /* data reachable: F32 norms are finite and positive-ish numbers */
        const GgufTensor *nrm = gguf_find_tensor(&a->g, "output_norm.weight");
        uint8_t *d = nrm ? tensor_bytes(b, nrm) : NULL;
        int finite = d != NULL;
        for (uint64_t e = 0; finite && e < nrm->n_elements; e++) {
            float x;
            memcpy(&x, d + 4 * e, 4);
            finite = isfinite(x);
        }
        CHECK(finite, "%s: output_norm data readable and finite", fm->file);
        free(d);
        unload(a);
        unload(b);
        free(a);
        free(b);
    }
}

/* The i-th string of a string array (raw record walk). */
static int array_string(const uint8_t *raw, uint64_t n, uint64_t index, char *out, size_t cap, uint64_t *end)
{
    uint64_t off = 0, i = 0;
    for (; off + 8 <= n; i++) {
        uint64_t len = get_le(raw + off, 8);
        if (len > n - off - 8) return -1;
        if (i == index) {
            size_t c = len < cap - 1 ? (size_t)len : cap - 1;
            memcpy(out, raw + off + 8, c);
            out[c] = 0;
        }
        off += 8 + len;
    }
    *end = off;
    return i > index ? (int)0 : -1;
}

static void test_fixture_vocabs(const char *fix)
{
    static const char *const files[] = {"qwen3-vocab.gguf", "ggml-vocab-qwen2.gguf", "ggml-vocab-llama-spm.gguf"};
    for (int i = 0; i < 3; i++) {
        char path[512];
        snprintf(path, sizeof path, "%s/tokenizer/%s", fix, files[i]);
        Model *a = model_new(), *b = model_new();
        GgufError err;
        int ok_a = load(a, path, 1, &err) == 0, ok_b = load(b, path, 0, &err) == 0;
        CHECK(ok_a && ok_b, "%s opens with mmap and with reads", files[i]);
        if (ok_a && ok_b) {
            CHECK(a->g.sizes.n_tensors == 0 && same_model(a, b, 1), "%s: backends agree, no tensors", files[i]);
            CHECK(plan_bounded(a), "%s: index plan bounded", files[i]);
            if (i == 0) {
                const GgufKV *tok = gguf_find_key(&a->g, "tokenizer.ggml.tokens");
                CHECK(tok && tok->arr_len == 151936 && tok->arr_type == GGUF_TYPE_STRING, "qwen3 vocab: 151936 tokens");
                for (int be = 0; tok && be < 2; be++) {
                    Model *m = be ? b : a;
                    uint64_t n, end = 0;
                    uint8_t *raw = value_bytes(m, tok, &n);
                    char s0[64] = "", s1[64] = "", s2[64] = "", s3[64] = "";
                    int ok = raw && array_string(raw, n, 0, s0, sizeof s0, &end) == 0 && end == n &&
                             array_string(raw, n, 151643, s1, sizeof s1, &end) == 0 &&
                             array_string(raw, n, 151667, s2, sizeof s2, &end) == 0 &&
                             array_string(raw, n, 151935, s3, sizeof s3, &end) == 0;
                    CHECK(ok && strcmp(s0, "!") == 0 && strcmp(s1, "<|endoftext|>") == 0 && strcmp(s2, "<think>") == 0 &&
                              strcmp(s3, "[PAD151935]") == 0,
                          "qwen3 vocab (%s): first token '!', 151643 <|endoftext|>, 151667 <think>, last '%s'",
                          be ? "read" : "mmap", s3);
                    free(raw);
                }
                char tmpl[128];
                int64_t len = gguf_get_string(&a->g, "tokenizer.chat_template", tmpl, sizeof tmpl);
                CHECK(len > 1000 && strstr(tmpl, "{%") != NULL, "qwen3 vocab: chat template (%lld bytes)", (long long)len);
                CHECK(check_uint(a, "tokenizer.ggml.eos_token_id", 151645) &&
                          check_uint(a, "tokenizer.ggml.bos_token_id", 151643),
                      "qwen3 vocab: bos/eos");
                const GgufKV *merges = gguf_find_key(&a->g, "tokenizer.ggml.merges");
                CHECK(merges && merges->arr_type == GGUF_TYPE_STRING && merges->arr_len > 100000, "qwen3 vocab: merges");
            }
        }
        if (ok_a) unload(a);
        if (ok_b) unload(b);
        free(a);
        free(b);
    }
}

/* Truncates a copy of each fixture at sampled lengths: every byte of the first
 * 256, then evenly through the header and the data. */
static void test_fixture_truncation(const char *fix)
{
    static const char *const files[] = {"models/tiny-qwen3-Q4_K_M.gguf", "models/stories260K-f16.gguf",
                                        "models/tiny-qwen3-untied-f16.gguf", "tokenizer/ggml-vocab-llama-spm.gguf",
                                        "tokenizer/qwen3-vocab.gguf"};
    for (int fi = 0; fi < 5; fi++) {
        char src[512], dst[512], why[600];
        snprintf(src, sizeof src, "%s/%s", fix, files[fi]);
        snprintf(dst, sizeof dst, "%s/trunc.gguf", tmpdir);
        Model *m = model_new();
        GgufError err;
        if (load(m, src, 1, &err) != 0) {
            CHECK(0, "%s opens", files[fi]);
            free(m);
            continue;
        }
        /* the least prefix that is still a valid file */
        uint64_t need = 0;
        for (uint64_t i = 0; i < m->g.sizes.n_kv; i++)
            if (m->g.kvs[i].value_end > need) need = m->g.kvs[i].value_end;
        for (uint64_t i = 0; i < m->g.sizes.n_tensors; i++) {
            const GgufTensor *t = &m->g.tensors[i];
            if (t->offset + t->n_bytes > need) need = t->offset + t->n_bytes;
        }
        uint64_t header = m->g.data_start[0] < need ? m->g.data_start[0] : need;
        write_file(dst, m->g.files[0].map, (size_t)m->g.files[0].size);
        unload(m);
        free(m);
        int small = fi == 4 ? 0 : 1;
        uint64_t lens[2000];
        int nl = 0;
        for (uint64_t l = 0; l < 256; l++) lens[nl++] = l;
        int steps = small ? 1500 : 200;
        for (int s = 0; s < steps; s++) lens[nl++] = 256 + (header - 256) * (uint64_t)s / (uint64_t)steps;
        for (int s = 0; s < 40; s++) lens[nl++] = header + (need - header) * (uint64_t)s / 40;
        lens[nl++] = need - 1;
        int all = 1;
        /* truncate() only shortens: go from the longest length down */
        for (int k = nl - 1; k >= 0; k--) {
            if (lens[k] >= need) continue;
            if (truncate(dst, (off_t)lens[k]) != 0) {
                all = 0;
                break;
            }
            if (!refused_file(dst, -1, NULL, why, sizeof why)) {
                if (all) printf("# %s cut at %llu: %s\n", files[fi], (unsigned long long)lens[k], why);
                all = 0;
            }
        }
        CHECK(all, "%s refused when cut at %d lengths below %llu", files[fi], nl, (unsigned long long)need);
        unlink(dst);
    }
}

/* Splits the Q8_0 fixture into 3 files and opens it as one model. */
static void test_split(const char *fix)
{
    char src[512];
    snprintf(src, sizeof src, "%s/models/tiny-qwen3-Q8_0.gguf", fix);
    Model *orig = model_new();
    GgufError err;
    if (load(orig, src, 1, &err) != 0) {
        CHECK(0, "split: source opens");
        free(orig);
        return;
    }
    uint64_t nt = orig->g.sizes.n_tensors;
    char names[3][512];
    for (int variant = 0; variant < 6; variant++) {
        /* 0: good; 1: wrong split.no in file 2; 2: split.tensors.count off;
         * 3: file 3 missing; 4: split.count differs in file 3; 5: good, version 2 */
        for (int f = 0; f < 3; f++) {
            snprintf(names[f], sizeof names[f], "%s/sp%d-%05d-of-00003.gguf", tmpdir, variant, f + 1);
            GgufWriter *w = gw_new(variant == 5 ? 2 : 3, 0);
            if (f == 0)
                for (uint64_t i = 0; i < orig->g.sizes.n_kv; i++) gw_kv_copy(w, &orig->g, &orig->g.kvs[i]);
            gw_kv_int(w, "split.no", GGUF_TYPE_UINT16, variant == 1 && f == 1 ? 2 : (uint64_t)f);
            gw_kv_int(w, "split.count", GGUF_TYPE_UINT16, variant == 4 && f == 2 ? 4 : 3);
            gw_kv_int(w, "split.tensors.count", GGUF_TYPE_INT32, variant == 2 ? nt + 1 : nt);
            for (uint64_t i = (uint64_t)f * nt / 3; i < (uint64_t)(f + 1) * nt / 3; i++) {
                const GgufTensor *t = &orig->g.tensors[i];
                gw_tensor_raw(w, t->name, t->n_dims, t->ne, t->type, gguf_tensor_bytes(&orig->g, t, NULL),
                              (size_t)t->n_bytes);
            }
            if (!(variant == 3 && f == 2)) gw_write(w, names[f]);
            gw_free(w);
        }
        if (variant == 0 || variant == 5) {
            Model *a = model_new(), *b = model_new();
            int ok_a = load(a, names[0], 1, &err) == 0;
            if (!ok_a) printf("# %s\n", err.msg);
            int ok_b = load(b, names[0], 0, &err) == 0;
            CHECK(ok_a && ok_b && a->g.n_files == 3 && a->g.sizes.n_tensors == nt &&
                      a->g.sizes.n_kv == orig->g.sizes.n_kv + 3,
                  "split v%d: 3 files open as one model of %llu tensors", variant == 5 ? 2 : 3, (unsigned long long)nt);
            int same = ok_a && ok_b && same_model(a, b, 1);
            for (uint64_t i = 0; same && i < nt; i++) {
                const GgufTensor *t = &orig->g.tensors[i], *u = gguf_find_tensor(&a->g, t->name);
                same = u && u->type == t->type && !memcmp(u->ne, t->ne, sizeof t->ne) && u->n_bytes == t->n_bytes &&
                       (uint64_t)u->file_index * nt / 3 <= i && i < (uint64_t)(u->file_index + 1) * nt / 3 &&
                       memcmp(gguf_tensor_bytes(&a->g, u, NULL), gguf_tensor_bytes(&orig->g, t, NULL),
                              (size_t)t->n_bytes) == 0;
            }
            uint64_t v;
            CHECK(same && gguf_get_uint(&a->g, "qwen3.block_count", &v) == 0 && v == 4 &&
                      gguf_get_uint(&a->g, "split.no", &v) == 0 && v == 0,
                  "split: same tensors, shapes, bytes and metadata as the single file");
            if (ok_a) unload(a);
            if (ok_b) unload(b);
            free(a);
            free(b);
            /* opening the second file is refused */
            char why[600];
            CHECK(refused_file(names[1], 0, "first file", why, sizeof why), "split: opening file 2 is refused");
            /* the same set under a name without the pattern */
            char other[512];
            snprintf(other, sizeof other, "%s/notsplit.gguf", tmpdir);
            if (variant == 0 && link(names[0], other) == 0) {
                CHECK(refused_file(other, 0, "-00001-of-00003.gguf", why, sizeof why), "split: unpatterned name refused");
                unlink(other);
            }
        } else {
            static const char *const needles[] = {NULL, "split.no", "split.tensors.count", "split file 3", "split.count"};
            char why[600];
            /* the message names the file at fault */
            const char *at = variant == 1 ? names[1] : variant == 4 ? names[2] : names[0];
            int ok = refused_file_at(names[0], at, -1, needles[variant], why, sizeof why);
            CHECK(ok, "split variant %d refused", variant);
            if (!ok) printf("#   %s\n", why);
        }
        for (int f = 0; f < 3; f++) unlink(names[f]);
    }
    unload(orig);
    free(orig);
}

static void test_open_errors(void)
{
    GgufError err;
    Gguf *g = calloc(1, sizeof *g);
    CHECK(gguf_open(g, "/nonexistent/x.gguf", 1, NULL, &err) == -1 && strncmp(err.msg, "/nonexistent/x.gguf: ", 21) == 0,
          "missing file: message names the path");
    CHECK(gguf_open(g, tmpdir, 1, NULL, &err) == -1 && strstr(err.msg, "regular") != NULL, "directory refused");
    free(g);
}

int main(int argc, char **argv)
{
    const char *fix = FIXTURES_DIR;
    fill_data();
    snprintf(tmpdir, sizeof tmpdir, "%s/pith-gguf-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(tmpdir)) {
        perror("mkdtemp");
        return 1;
    }
    if (argc == 3 && strcmp(argv[1], "--write-corpus") == 0) {
        corpus_dir = argv[2];
        test_malformed();
        rmdir(tmpdir);
        return 0;
    }
    test_open_errors();
    test_writer_models();
    test_malformed();
    test_mutations();
    test_fixture_models(fix);
    test_fixture_vocabs(fix);
    test_split(fix);
    test_fixture_truncation(fix);
    /* leave nothing behind */
    DIR *d = opendir(tmpdir);
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.') continue;
        char p[600];
        snprintf(p, sizeof p, "%s/%s", tmpdir, e->d_name);
        unlink(p);
    }
    if (d) closedir(d);
    rmdir(tmpdir);
    CHECK_DONE();
}
