/* gguf_writer.c - see gguf_writer.h. */
#include "gguf_writer.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/base/ggml_type.h"
#include "../../src/gguf/gguf.h"
#include "../../src/kernels/quant.h"
#include "../../port/port.h"

static void *xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (!q) {
        fprintf(stderr, "gguf_writer: out of memory\n");
        abort();
    }
    return q;
}

/* ---- byte buffers ---------------------------------------------------------- */

void gwb_bytes(GwBuf *b, const void *bytes, size_t n)
{
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + n) cap *= 2;
        b->p = xrealloc(b->p, cap);
        b->cap = cap;
    }
    if (n) memcpy(b->p + b->len, bytes, n);
    b->len += n;
}

static void gwb_le(GwBuf *b, uint64_t v, int n)
{
    uint8_t x[8];
    for (int i = 0; i < n; i++) x[i] = (uint8_t)(v >> (8 * i));
    gwb_bytes(b, x, (size_t)n);
}

void gwb_u8(GwBuf *b, uint8_t v) { gwb_le(b, v, 1); }
void gwb_u32(GwBuf *b, uint32_t v) { gwb_le(b, v, 4); }
void gwb_u64(GwBuf *b, uint64_t v) { gwb_le(b, v, 8); }
void gwb_strn(GwBuf *b, const void *s, uint64_t n)
{
    gwb_u64(b, n);
    gwb_bytes(b, s, (size_t)n);
}
void gwb_str(GwBuf *b, const char *s) { gwb_strn(b, s, strlen(s)); }
void gwb_free(GwBuf *b)
{
    free(b->p);
    memset(b, 0, sizeof *b);
}

/* ---- conversions ----------------------------------------------------------- */

uint16_t gw_f32_to_f16(float f)
{
    uint32_t x;
    memcpy(&x, &f, 4);
    uint32_t sign = (x >> 16) & 0x8000u, exp = (x >> 23) & 0xFFu, man = x & 0x7FFFFFu;
    if (exp == 0xFF) return (uint16_t)(sign | 0x7C00u | (man ? 0x200u | (man >> 13) : 0));
    int e = (int)exp - 127 + 15;
    if (e >= 31) return (uint16_t)(sign | 0x7C00u);
    if (e <= 0) { /* half subnormal: value / 2^-24, rounded to nearest even */
        if (e < -10) return (uint16_t)sign;
        man |= 0x800000u;
        int shift = 14 - e;
        uint32_t h = man >> shift, rem = man & ((1u << shift) - 1), mid = 1u << (shift - 1);
        if (rem > mid || (rem == mid && (h & 1))) h++;
        return (uint16_t)(sign | h);
    }
    uint32_t h = ((uint32_t)e << 10) | (man >> 13), rem = man & 0x1FFFu;
    if (rem > 0x1000u || (rem == 0x1000u && (h & 1))) h++; /* may carry into the exponent: right */
    return (uint16_t)(sign | h);
}

float gw_f16_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16, exp = (h >> 10) & 0x1Fu, man = h & 0x3FFu;
    float f;
    if (exp == 0) {
        f = ldexpf((float)man, -24);
        return sign ? -f : f;
    }
    uint32_t x = exp == 31 ? (sign | 0x7F800000u | (man << 13)) : (sign | ((exp + 112) << 23) | (man << 13));
    memcpy(&f, &x, 4);
    return f;
}

uint16_t gw_f32_to_bf16(float f)
{
    uint32_t x;
    memcpy(&x, &f, 4);
    if ((x & 0x7FFFFFFFu) > 0x7F800000u) return (uint16_t)((x >> 16) | 0x40); /* quiet NaN */
    x += 0x7FFFu + ((x >> 16) & 1);
    return (uint16_t)(x >> 16);
}

void gw_quantize_q8_0(const float *x, uint64_t n, uint8_t *out)
{
    for (uint64_t b = 0; b < n / 32; b++) {
        const float *v = x + b * 32;
        float amax = 0;
        for (int i = 0; i < 32; i++) amax = fmaxf(amax, fabsf(v[i]));
        float d = amax / 127.0f;
        uint16_t dh = gw_f32_to_f16(d);
        uint8_t *o = out + b * 34;
        o[0] = (uint8_t)dh;
        o[1] = (uint8_t)(dh >> 8);
        for (int i = 0; i < 32; i++) {
            float q = d != 0 ? roundf(v[i] / d) : 0;
            if (q > 127) q = 127;
            if (q < -127) q = -127;
            o[2 + i] = (uint8_t)(int8_t)q;
        }
    }
}

uint64_t gw_type_bytes(uint32_t t, uint64_t n)
{
    switch (t) {
    case GGML_TYPE_F32: return n * 4;
    case GGML_TYPE_F16: case GGML_TYPE_BF16: return n * 2;
    case GGML_TYPE_Q8_0: return n / 32 * 34;
    case GGML_TYPE_Q4_0: case GGML_TYPE_Q4_K: case GGML_TYPE_Q6_K: return ggml_row_bytes(t, n);
    default: return 0;
    }
}

/* Converts n floats to type t into out. */
static void convert(uint32_t t, const float *x, uint64_t n, uint8_t *out)
{
    if (t == GGML_TYPE_F32) {
        memcpy(out, x, n * 4);
    } else if (t == GGML_TYPE_F16 || t == GGML_TYPE_BF16) {
        for (uint64_t i = 0; i < n; i++) {
            uint16_t h = t == GGML_TYPE_F16 ? gw_f32_to_f16(x[i]) : gw_f32_to_bf16(x[i]);
            out[2 * i] = (uint8_t)h;
            out[2 * i + 1] = (uint8_t)(h >> 8);
        }
    } else if (t == GGML_TYPE_Q8_0) {
        gw_quantize_q8_0(x, n, out);
    } else if (quant_quantize_row(t, x, out, n) != 0) {
        fprintf(stderr, "gguf_writer: cannot quantize to type %u\n", t);
        abort();
    }
}

uint64_t gw_rng_next(GwRng *r)
{
    uint64_t z = (r->s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

float gw_rng_uniform(GwRng *r)
{
    return (float)((double)(gw_rng_next(r) >> 11) * (1.0 / 9007199254740992.0) * 2.0 - 1.0);
}

/* ---- the model being built -------------------------------------------------- */

typedef struct {
    char *name;
    uint32_t n_dims, type;
    uint64_t ne[4];
    uint8_t *bytes;      /* stored data, or NULL when generated */
    uint64_t n_bytes;
    GwFill fill;
    void *ctx;
    int has_offset;
    uint64_t offset;     /* relative data offset (computed or overridden) */
} GwTensor;

struct GgufWriter {
    uint32_t version, alignment;
    GwBuf kvs;           /* encoded records */
    size_t *kv_start;    /* start of each record inside kvs */
    int n_kv;
    GwTensor *tensors;
    int n_tensors;
    /* offsets of the last output */
    uint64_t *kv_at, *tensor_at, data_start;
};

GgufWriter *gw_new(uint32_t version, uint32_t alignment)
{
    GgufWriter *w = xrealloc(NULL, sizeof *w);
    memset(w, 0, sizeof *w);
    w->version = version;
    w->alignment = alignment ? alignment : GGUF_DEFAULT_ALIGNMENT;
    if (alignment) gw_kv_u32(w, "general.alignment", alignment);
    return w;
}

void gw_set_data_alignment(GgufWriter *w, uint32_t alignment) { w->alignment = alignment; }

void gw_free(GgufWriter *w)
{
    if (!w) return;
    gwb_free(&w->kvs);
    for (int i = 0; i < w->n_tensors; i++) {
        free(w->tensors[i].name);
        free(w->tensors[i].bytes);
    }
    free(w->tensors);
    free(w->kv_start);
    free(w->kv_at);
    free(w->tensor_at);
    free(w);
}

void gw_kv_raw_key(GgufWriter *w, const void *key, uint64_t key_len, uint32_t type, const void *value, size_t len)
{
    w->kv_start = xrealloc(w->kv_start, (size_t)(w->n_kv + 1) * sizeof *w->kv_start);
    w->kv_start[w->n_kv++] = w->kvs.len;
    gwb_strn(&w->kvs, key, key_len);
    gwb_u32(&w->kvs, type);
    gwb_bytes(&w->kvs, value, len);
}

void gw_kv_raw(GgufWriter *w, const char *key, uint32_t type, const void *value, size_t len)
{
    gw_kv_raw_key(w, key, strlen(key), type, value, len);
}

static int scalar_bytes(uint32_t t)
{
    switch (t) {
    case GGUF_TYPE_UINT8: case GGUF_TYPE_INT8: case GGUF_TYPE_BOOL: return 1;
    case GGUF_TYPE_UINT16: case GGUF_TYPE_INT16: return 2;
    case GGUF_TYPE_UINT32: case GGUF_TYPE_INT32: case GGUF_TYPE_FLOAT32: return 4;
    default: return 8;
    }
}

void gw_kv_int(GgufWriter *w, const char *key, uint32_t type, uint64_t v)
{
    GwBuf b = {0};
    gwb_le(&b, v, scalar_bytes(type));
    gw_kv_raw(w, key, type, b.p, b.len);
    gwb_free(&b);
}

void gw_kv_u32(GgufWriter *w, const char *key, uint32_t v) { gw_kv_int(w, key, GGUF_TYPE_UINT32, v); }
void gw_kv_i32(GgufWriter *w, const char *key, int32_t v) { gw_kv_int(w, key, GGUF_TYPE_INT32, (uint32_t)v); }
void gw_kv_u64(GgufWriter *w, const char *key, uint64_t v) { gw_kv_int(w, key, GGUF_TYPE_UINT64, v); }
void gw_kv_bool(GgufWriter *w, const char *key, int v) { gw_kv_int(w, key, GGUF_TYPE_BOOL, v != 0); }

void gw_kv_f32(GgufWriter *w, const char *key, float v)
{
    uint32_t x;
    memcpy(&x, &v, 4);
    gw_kv_int(w, key, GGUF_TYPE_FLOAT32, x);
}

void gw_kv_f64(GgufWriter *w, const char *key, double v)
{
    uint64_t x;
    memcpy(&x, &v, 8);
    gw_kv_int(w, key, GGUF_TYPE_FLOAT64, x);
}

void gw_kv_strn(GgufWriter *w, const char *key, const void *s, uint64_t n)
{
    GwBuf b = {0};
    gwb_strn(&b, s, n);
    gw_kv_raw(w, key, GGUF_TYPE_STRING, b.p, b.len);
    gwb_free(&b);
}

void gw_kv_str(GgufWriter *w, const char *key, const char *s) { gw_kv_strn(w, key, s, strlen(s)); }

void gw_kv_array(GgufWriter *w, const char *key, uint32_t elem_type, const void *elems, uint64_t n)
{
    GwBuf b = {0};
    gwb_u32(&b, elem_type);
    gwb_u64(&b, n);
    gwb_bytes(&b, elems, (size_t)(n * (uint64_t)scalar_bytes(elem_type)));
    gw_kv_raw(w, key, GGUF_TYPE_ARRAY, b.p, b.len);
    gwb_free(&b);
}

void gw_kv_str_array(GgufWriter *w, const char *key, const char *const *strs, uint64_t n)
{
    GwBuf b = {0};
    gwb_u32(&b, GGUF_TYPE_STRING);
    gwb_u64(&b, n);
    for (uint64_t i = 0; i < n; i++) gwb_str(&b, strs[i]);
    gw_kv_raw(w, key, GGUF_TYPE_ARRAY, b.p, b.len);
    gwb_free(&b);
}

int gw_kv_copy(GgufWriter *w, Gguf *g, const GgufKV *kv)
{
    uint64_t n = kv->value_end - kv->value_offset;
    uint8_t *buf = xrealloc(NULL, (size_t)n + 1);
    const uint8_t *p = gguf_value_bytes(g, kv, buf);
    if (!p) {
        free(buf);
        return -1;
    }
    GwBuf raw = {0};
    if (kv->type == GGUF_TYPE_STRING) {
        gwb_u64(&raw, n);
    } else if (kv->type == GGUF_TYPE_ARRAY) {
        gwb_u32(&raw, kv->arr_type);
        gwb_u64(&raw, kv->arr_len);
    }
    gwb_bytes(&raw, p, (size_t)n);
    gw_kv_raw_key(w, kv->key, kv->key_len, kv->type, raw.p, raw.len);
    gwb_free(&raw);
    free(buf);
    return 0;
}

static GwTensor *add_tensor(GgufWriter *w, const char *name, uint32_t n_dims, const uint64_t *ne, uint32_t type)
{
    w->tensors = xrealloc(w->tensors, (size_t)(w->n_tensors + 1) * sizeof *w->tensors);
    GwTensor *t = &w->tensors[w->n_tensors++];
    memset(t, 0, sizeof *t);
    size_t len = strlen(name);
    t->name = xrealloc(NULL, len + 1);
    memcpy(t->name, name, len + 1);
    t->n_dims = n_dims;
    t->type = type;
    for (int d = 0; d < 4; d++) t->ne[d] = (uint32_t)d < n_dims ? ne[d] : 1;
    return t;
}

static uint64_t n_elements(const GwTensor *t) { return t->ne[0] * t->ne[1] * t->ne[2] * t->ne[3]; }

int gw_tensor(GgufWriter *w, const char *name, uint32_t n_dims, const uint64_t *ne, uint32_t type, const float *data)
{
    GwTensor *t = add_tensor(w, name, n_dims, ne, type);
    uint64_t n = n_elements(t);
    t->n_bytes = gw_type_bytes(type, n);
    if (t->n_bytes == 0) {
        fprintf(stderr, "gguf_writer: cannot convert to type %u\n", type);
        abort();
    }
    t->bytes = xrealloc(NULL, (size_t)t->n_bytes);
    convert(type, data, n, t->bytes);
    return w->n_tensors - 1;
}

int gw_tensor_raw(GgufWriter *w, const char *name, uint32_t n_dims, const uint64_t *ne, uint32_t type,
                  const void *bytes, size_t n_bytes)
{
    GwTensor *t = add_tensor(w, name, n_dims, ne, type);
    t->n_bytes = n_bytes;
    t->bytes = xrealloc(NULL, n_bytes);
    if (n_bytes) memcpy(t->bytes, bytes, n_bytes);
    return w->n_tensors - 1;
}

int gw_tensor_gen(GgufWriter *w, const char *name, uint32_t n_dims, const uint64_t *ne, uint32_t type, GwFill fill,
                  void *ctx)
{
    GwTensor *t = add_tensor(w, name, n_dims, ne, type);
    t->n_bytes = gw_type_bytes(type, n_elements(t));
    t->fill = fill;
    t->ctx = ctx;
    return w->n_tensors - 1;
}

void gw_tensor_offset(GgufWriter *w, int i, uint64_t rel_offset)
{
    w->tensors[i].has_offset = 1;
    w->tensors[i].offset = rel_offset;
}

/* ---- output ------------------------------------------------------------------ */

/* Bytes go either to a file or to a buffer. */
typedef struct {
    FILE *f;
    GwBuf *b;
    uint64_t pos;
    int failed;
} Sink;

static void put(Sink *s, const void *p, size_t n)
{
    if (s->f) {
        if (n && fwrite(p, 1, n, s->f) != n) s->failed = 1;
    } else {
        gwb_bytes(s->b, p, n);
    }
    s->pos += n;
}

static void pad_to(Sink *s, uint64_t pos)
{
    static const uint8_t zeros[64];
    while (s->pos < pos) put(s, zeros, pos - s->pos < 64 ? (size_t)(pos - s->pos) : 64);
}

static uint64_t align_up(uint64_t x, uint64_t a) { return a ? (x + a - 1) / a * a : x; }

static int emit(GgufWriter *w, Sink *s)
{
    GwBuf h = {0};
    gwb_u32(&h, GGUF_MAGIC);
    gwb_u32(&h, w->version);
    gwb_u64(&h, (uint64_t)w->n_tensors);
    gwb_u64(&h, (uint64_t)w->n_kv);
    uint64_t base = h.len;
    w->kv_at = xrealloc(w->kv_at, (size_t)(w->n_kv + 1) * sizeof *w->kv_at);
    w->tensor_at = xrealloc(w->tensor_at, (size_t)(w->n_tensors + 1) * sizeof *w->tensor_at);
    for (int i = 0; i < w->n_kv; i++) w->kv_at[i] = base + w->kv_start[i];
    gwb_bytes(&h, w->kvs.p, w->kvs.len);
    uint64_t rel = 0;
    for (int i = 0; i < w->n_tensors; i++) {
        GwTensor *t = &w->tensors[i];
        if (!t->has_offset) {
            rel = align_up(rel, w->alignment);
            t->offset = rel;
            rel += t->n_bytes;
        }
        w->tensor_at[i] = h.len;
        gwb_str(&h, t->name);
        gwb_u32(&h, t->n_dims);
        for (uint32_t d = 0; d < t->n_dims; d++) gwb_u64(&h, t->ne[d]);
        gwb_u32(&h, t->type);
        gwb_u64(&h, t->offset);
    }
    put(s, h.p, h.len);
    gwb_free(&h);
    w->data_start = align_up(s->pos, w->alignment);
    pad_to(s, w->data_start);
    /* Data in offset order as laid out; overridden offsets are written where
     * they say when that is still ahead, else skipped (malformed files). */
    float *row = NULL;
    uint8_t *conv = NULL;
    /* Writing a benchmark model takes a while: progress on a terminal. */
    if (s->f) port_progress("writing", 0, 0, 1);
    for (int i = 0; i < w->n_tensors; i++) {
        GwTensor *t = &w->tensors[i];
        if (s->f && s->pos > w->data_start) port_progress("writing", s->pos - w->data_start, rel, 1);
        if (w->data_start + t->offset < s->pos) continue;
        pad_to(s, w->data_start + t->offset);
        if (t->bytes) {
            put(s, t->bytes, (size_t)t->n_bytes);
        } else if (t->fill) {
            uint64_t n = t->ne[0], rows = n_elements(t) / n;
            row = xrealloc(row, (size_t)n * sizeof *row);
            conv = xrealloc(conv, (size_t)gw_type_bytes(t->type, n));
            for (uint64_t r = 0; r < rows; r++) {
                t->fill(t->ctx, r, row, n);
                convert(t->type, row, n, conv);
                put(s, conv, (size_t)gw_type_bytes(t->type, n));
            }
        }
    }
    if (s->f) {
        port_progress("writing", s->pos - w->data_start, rel, 1);
        port_progress_end();
    }
    free(row);
    free(conv);
    /* llama.cpp pads the end to the alignment as well */
    if (w->n_tensors) pad_to(s, align_up(s->pos, w->alignment));
    return s->failed ? -1 : 0;
}

int gw_write(GgufWriter *w, const char *path)
{
    FILE *f = fopen(path, "wb");
    if (!f) return -1;
    Sink s = {f, NULL, 0, 0};
    int rc = emit(w, &s);
    if (fclose(f) != 0) rc = -1;
    return rc;
}

int gw_write_split(GgufWriter *w, const char *prefix, int n_files)
{
    int rc = 0;
    for (int k = 0; k < n_files && rc == 0; k++) {
        /* a writer sharing w's tensors; only its own keys are freed */
        GgufWriter part;
        memset(&part, 0, sizeof part);
        part.version = w->version;
        part.alignment = w->alignment;
        if (k == 0) {
            gwb_bytes(&part.kvs, w->kvs.p, w->kvs.len);
            part.kv_start = xrealloc(NULL, (size_t)(w->n_kv + 3) * sizeof *part.kv_start);
            if (w->n_kv) memcpy(part.kv_start, w->kv_start, (size_t)w->n_kv * sizeof *part.kv_start);
            part.n_kv = w->n_kv;
        }
        gw_kv_int(&part, "split.no", GGUF_TYPE_UINT16, (uint64_t)k);
        gw_kv_int(&part, "split.count", GGUF_TYPE_UINT16, (uint64_t)n_files);
        gw_kv_int(&part, "split.tensors.count", GGUF_TYPE_INT32, (uint64_t)w->n_tensors);
        int first = (int)((int64_t)w->n_tensors * k / n_files), last = (int)((int64_t)w->n_tensors * (k + 1) / n_files);
        part.tensors = w->tensors + first;
        part.n_tensors = last - first;
        size_t len = strlen(prefix) + 32;
        char *path = xrealloc(NULL, len);
        snprintf(path, len, "%s-%05d-of-%05d.gguf", prefix, k + 1, n_files);
        FILE *f = fopen(path, "wb");
        if (!f) {
            rc = -1;
        } else {
            Sink s = {f, NULL, 0, 0};
            rc = emit(&part, &s);
            if (fclose(f) != 0) rc = -1;
        }
        free(path);
        gwb_free(&part.kvs);
        free(part.kv_start);
        free(part.kv_at);
        free(part.tensor_at);
    }
    return rc;
}

uint8_t *gw_serialize(GgufWriter *w, size_t *len)
{
    GwBuf b = {0};
    Sink s = {NULL, &b, 0, 0};
    emit(w, &s);
    *len = b.len;
    if (!b.p) b.p = xrealloc(NULL, 1);
    return b.p;
}

uint64_t gw_kv_at(const GgufWriter *w, int i) { return w->kv_at[i]; }
uint64_t gw_tensor_info_at(const GgufWriter *w, int i) { return w->tensor_at[i]; }
uint64_t gw_data_start(const GgufWriter *w) { return w->data_start; }
int gw_n_kv(const GgufWriter *w) { return w->n_kv; }
