/* gguf.c - the hardened GGUF reader (see gguf.h).
 *
 * Layout of one file (little endian, GGUF v2 and v3):
 *   u32 magic "GGUF", u32 version, u64 n_tensors, u64 n_kv,
 *   n_kv x (string key, u32 type, value),
 *   n_tensors x (string name, u32 n_dims, u64 ne[n_dims], u32 type, u64 offset),
 *   padding to the alignment, tensor data (offsets relative to its start).
 * A string is a u64 length and that many bytes; an array is a u32 element
 * type, a u64 count and the elements.
 *
 * Every field is checked against the end of the file before it is used, and
 * every count against the bytes left, so a hostile count is refused at once
 * instead of driving a long loop. */
#include "gguf.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "../base/ggml_type.h"

#define CURSOR_BUF 16384
#define MAX_NESTING 8  /* arrays of arrays of ... deeper than this are refused */
/* The smallest possible records: a key of one byte with a u8 value, and a
 * one-dimensional tensor with a one-byte name. */
#define MIN_KV_BYTES (8 + 1 + 4 + 1)
#define MIN_TENSOR_BYTES (8 + 1 + 4 + 8 + 4 + 8)
#define HEADER_BYTES 24

/* Keys and names are handed to callbacks NUL-terminated from here. */
static char name_scratch[GGUF_MAX_NAME + 1];

typedef unsigned long long ull;

static int fail(GgufError *err, const char *path, uint64_t off, const char *fmt, ...)
{
    err->status = PITH_BAD_INPUT;
    int n = snprintf(err->msg, sizeof err->msg, "%s: byte %llu: ", path, (ull)off);
    if (n < 0 || (size_t)n >= sizeof err->msg) return -1;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg + n, sizeof err->msg - (size_t)n, fmt, ap);
    va_end(ap);
    return -1;
}

/* ---- buffered reading ----------------------------------------------------- */

/* Reads forward through one file: a pointer into the mapping, or a window
 * of the file copied into buf (read backend). */
typedef struct {
    PortFile *f;
    uint64_t pos;
    uint64_t buf_off;
    size_t buf_len;
    uint8_t buf[CURSOR_BUF];
} Cursor;

static void cursor_init(Cursor *c, PortFile *f)
{
    c->f = f;
    c->pos = 0;
    c->buf_off = 0;
    c->buf_len = 0;
}

static uint64_t cursor_left(const Cursor *c)
{
    return c->pos <= c->f->size ? c->f->size - c->pos : 0;
}

/* Pointer to n <= CURSOR_BUF bytes at the cursor (in range: checked by the
 * caller), or NULL if the read fails. */
static const uint8_t *cursor_peek(Cursor *c, size_t n)
{
    PortFile *f = c->f;
    if (n > cursor_left(c)) return NULL;
    if (f->map) return f->map + c->pos;
    if (c->pos >= c->buf_off && c->pos - c->buf_off + n <= c->buf_len) return c->buf + (c->pos - c->buf_off);
    size_t len = CURSOR_BUF;
    if (cursor_left(c) < len) len = (size_t)cursor_left(c);
    if (port_file_read(f, c->pos, c->buf, len) != 0) return NULL;
    c->buf_off = c->pos;
    c->buf_len = len;
    return c->buf;
}

static uint64_t le(const uint8_t *p, int n)
{
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--) v = (v << 8) | p[i];
    return v;
}

/* ---- the validating walk ------------------------------------------------------ */

typedef struct {
    Gguf *g;
    GgufError *err;
    const char *path;
    uint32_t file;
    GgufSizes *acc;   /* sizes measured so far (g->sizes is set when a walk succeeds) */
    Cursor cur;
    /* what the header says about itself */
    uint64_t n_kv, n_tensors;
    uint64_t alignment;
    int has_split_count, has_split_no, has_split_tensors;
    uint64_t split_count, split_no, split_tensors;
} Walk;

static int walk_fail(Walk *w, uint64_t off, const char *fmt, ...)
{
    char what[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return fail(w->err, w->path, off, "%s", what);
}

/* The file could not be read where it should have been. */
static int walk_read_error(Walk *w)
{
    walk_fail(w, w->cur.pos, "read error");
    w->err->status = PITH_IO;
    return -1;
}

/* Reads an n-byte little-endian integer field named `what`. */
static int read_uint(Walk *w, int n, const char *what, uint64_t *out)
{
    *out = 0;
    if (cursor_left(&w->cur) < (uint64_t)n)
        return walk_fail(w, w->cur.pos, "truncated: %s needs %d bytes, the file ends at byte %llu", what, n,
                         (ull)w->cur.f->size);
    const uint8_t *p = cursor_peek(&w->cur, (size_t)n);
    if (!p) return walk_read_error(w);
    *out = le(p, n);
    w->cur.pos += (uint64_t)n;
    return 0;
}

/* Copies n bytes at the cursor into dst and advances. */
static int read_bytes(Walk *w, void *dst, uint64_t n)
{
    if (n <= CURSOR_BUF) {
        const uint8_t *p = cursor_peek(&w->cur, (size_t)n);
        if (!p) return walk_read_error(w);
        memcpy(dst, p, (size_t)n);
    } else if (port_file_read(w->cur.f, w->cur.pos, dst, (size_t)n) != 0) {
        return walk_read_error(w);
    }
    w->cur.pos += n;
    return 0;
}

/* Strict UTF-8: no overlong forms, no surrogates, nothing above U+10FFFF.
 * Returns the index of the first bad byte, or n if all is well. ASCII
 * control characters (NUL included) are refused too: names are used as C
 * strings and printed inside one-line messages. */
static uint64_t utf8_bad_at(const uint8_t *s, uint64_t n)
{
    uint64_t i = 0;
    while (i < n) {
        uint8_t c = s[i];
        if (c < 0x20 || c == 0x7F) return i;
        if (c < 0x80) {
            i++;
            continue;
        }
        int len;
        uint32_t cp, min;
        if ((c & 0xE0) == 0xC0) len = 2, cp = c & 0x1F, min = 0x80;
        else if ((c & 0xF0) == 0xE0) len = 3, cp = c & 0x0F, min = 0x800;
        else if ((c & 0xF8) == 0xF0) len = 4, cp = c & 0x07, min = 0x10000;
        else return i;
        if (n - i < (uint64_t)len) return i;
        for (int k = 1; k < len; k++) {
            if ((s[i + (uint64_t)k] & 0xC0) != 0x80) return i;
            cp = (cp << 6) | (s[i + (uint64_t)k] & 0x3F);
        }
        if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return i;
        i += (uint64_t)len;
    }
    return n;
}

/* Reads a key or tensor name into name_scratch (NUL-terminated). */
static int read_name(Walk *w, const char *what, uint32_t *len_out)
{
    uint64_t at = w->cur.pos, len;
    if (read_uint(w, 8, what, &len) != 0) return -1;
    if (len == 0) return walk_fail(w, at, "empty %s", what);
    if (len > GGUF_MAX_NAME) return walk_fail(w, at, "%s length %llu is over the limit of %d", what, (ull)len, GGUF_MAX_NAME);
    if (len > cursor_left(&w->cur))
        return walk_fail(w, at, "%s length %llu runs past the end of the file (%llu bytes left)", what, (ull)len,
                         (ull)cursor_left(&w->cur));
    if (read_bytes(w, name_scratch, len) != 0) return -1;
    name_scratch[len] = '\0';
    uint64_t bad = utf8_bad_at((const uint8_t *)name_scratch, len);
    if (bad != len) return walk_fail(w, at + 8 + bad, "%s is not valid UTF-8 or holds a control character", what);
    *len_out = (uint32_t)len;
    return 0;
}

static uint64_t scalar_size(uint32_t t)
{
    switch (t) {
    case GGUF_TYPE_UINT8: case GGUF_TYPE_INT8: case GGUF_TYPE_BOOL: return 1;
    case GGUF_TYPE_UINT16: case GGUF_TYPE_INT16: return 2;
    case GGUF_TYPE_UINT32: case GGUF_TYPE_INT32: case GGUF_TYPE_FLOAT32: return 4;
    case GGUF_TYPE_UINT64: case GGUF_TYPE_INT64: case GGUF_TYPE_FLOAT64: return 8;
    default: return 0; /* string, array: variable */
    }
}

/* Fewest bytes one element of type t can take. */
static uint64_t min_size(uint32_t t)
{
    if (t == GGUF_TYPE_STRING) return 8;
    if (t == GGUF_TYPE_ARRAY) return 4 + 8;
    return scalar_size(t);
}

static int skip(Walk *w, uint64_t n)
{
    if (n > cursor_left(&w->cur)) return walk_fail(w, w->cur.pos, "truncated: value runs past the end of the file");
    w->cur.pos += n;
    return 0;
}

static int walk_array(Walk *w, int depth, uint32_t *elem_type, uint64_t *count);

/* Validates and skips one value of type t; decodes scalars into kv->v when
 * kv is given. */
static int walk_value(Walk *w, uint32_t t, int depth, GgufKV *kv)
{
    uint64_t at = w->cur.pos;
    if (t == GGUF_TYPE_STRING) {
        uint64_t len;
        if (read_uint(w, 8, "string length", &len) != 0) return -1;
        if (len > cursor_left(&w->cur))
            return walk_fail(w, at, "string length %llu runs past the end of the file (%llu bytes left)", (ull)len,
                             (ull)cursor_left(&w->cur));
        if (kv) {
            kv->arr_len = len;
            kv->value_offset = w->cur.pos;
        }
        w->cur.pos += len;
        return 0;
    }
    if (t == GGUF_TYPE_ARRAY) {
        uint32_t et = 0;
        uint64_t count = 0;
        if (walk_array(w, depth, &et, &count) != 0) return -1;
        if (kv) {
            kv->arr_type = et;
            kv->arr_len = count;
            kv->value_offset = at + 12;
        }
        return 0;
    }
    uint64_t v = 0;
    int n = (int)scalar_size(t);
    if (read_uint(w, n, "value", &v) != 0) return -1;
    if (t == GGUF_TYPE_BOOL && v > 1) return walk_fail(w, at, "bool value %llu is neither 0 nor 1", (ull)v);
    if (!kv) return 0;
    switch (t) {
    case GGUF_TYPE_INT8: kv->v.i = (int8_t)v; break;
    case GGUF_TYPE_INT16: kv->v.i = (int16_t)v; break;
    case GGUF_TYPE_INT32: kv->v.i = (int32_t)(uint32_t)v; break;
    case GGUF_TYPE_INT64: kv->v.i = (int64_t)v; break;
    case GGUF_TYPE_FLOAT32: {
        uint32_t b = (uint32_t)v;
        float f;
        memcpy(&f, &b, 4);
        kv->v.f = f;
        break;
    }
    case GGUF_TYPE_FLOAT64: memcpy(&kv->v.f, &v, 8); break;
    default: kv->v.u = v; break;
    }
    return 0;
}

/* Array header (u32 element type, u64 count) and its elements. */
static int walk_array(Walk *w, int depth, uint32_t *elem_type, uint64_t *count)
{
    uint64_t at = w->cur.pos, et, n;
    if (depth >= MAX_NESTING) return walk_fail(w, at, "arrays nested deeper than %d levels", MAX_NESTING);
    if (read_uint(w, 4, "array element type", &et) != 0) return -1;
    if (et >= GGUF_TYPE_COUNT) return walk_fail(w, at, "invalid array element type %llu", (ull)et);
    if (read_uint(w, 8, "array length", &n) != 0) return -1;
    uint64_t left = cursor_left(&w->cur);
    if (n > left / min_size((uint32_t)et))
        return walk_fail(w, at + 4, "array of %llu %s elements cannot fit in the %llu bytes left", (ull)n,
                         gguf_value_type_name((uint32_t)et), (ull)left);
    *elem_type = (uint32_t)et;
    *count = n;
    if (et == GGUF_TYPE_STRING || et == GGUF_TYPE_ARRAY || et == GGUF_TYPE_BOOL) {
        for (uint64_t i = 0; i < n; i++)
            if (walk_value(w, (uint32_t)et, depth + 1, NULL) != 0) return -1;
        return 0;
    }
    return skip(w, n * scalar_size((uint32_t)et));
}

static int is_integer_type(uint32_t t)
{
    return t <= GGUF_TYPE_INT32 || t == GGUF_TYPE_UINT64 || t == GGUF_TYPE_INT64;
}

static int is_signed_type(uint32_t t)
{
    return t == GGUF_TYPE_INT8 || t == GGUF_TYPE_INT16 || t == GGUF_TYPE_INT32 || t == GGUF_TYPE_INT64;
}

/* Notes the keys the reader itself depends on. */
static int note_kv(Walk *w, const GgufKV *kv)
{
    const char *k = kv->key;
    if (strcmp(k, "general.alignment") == 0) {
        if (kv->type != GGUF_TYPE_UINT32)
            return walk_fail(w, kv->key_offset, "general.alignment must be a u32, not %s", gguf_value_type_name(kv->type));
        uint64_t a = kv->v.u;
        if (a == 0 || (a & (a - 1)) != 0)
            return walk_fail(w, kv->value_offset, "general.alignment %llu is not a power of two", (ull)a);
        w->alignment = a;
        return 0;
    }
    int *has = NULL;
    uint64_t *val = NULL;
    if (strcmp(k, "split.count") == 0) has = &w->has_split_count, val = &w->split_count;
    else if (strcmp(k, "split.no") == 0) has = &w->has_split_no, val = &w->split_no;
    else if (strcmp(k, "split.tensors.count") == 0) has = &w->has_split_tensors, val = &w->split_tensors;
    if (!has) return 0;
    if (!is_integer_type(kv->type) || (is_signed_type(kv->type) && kv->v.i < 0))
        return walk_fail(w, kv->key_offset, "%s must be a non-negative integer", k);
    *has = 1;
    *val = kv->v.u;
    return 0;
}

/* One tensor record. With data_start != UINT64_MAX its data range is checked
 * too and t->offset made absolute. */
static int walk_tensor(Walk *w, GgufTensor *t, uint64_t data_start)
{
    memset(t, 0, sizeof *t);
    t->info_offset = w->cur.pos;
    t->file_index = w->file;
    if (read_name(w, "tensor name", &t->name_len) != 0) return -1;
    t->name = name_scratch;
    uint64_t at = w->cur.pos, v;
    if (read_uint(w, 4, "n_dims", &v) != 0) return -1;
    if (v < 1 || v > GGUF_MAX_DIMS)
        return walk_fail(w, at, "tensor '%.64s' has %llu dimensions (1 to %d allowed)", name_scratch, (ull)v, GGUF_MAX_DIMS);
    t->n_dims = (uint32_t)v;
    uint64_t n_el = 1;
    for (int d = 0; d < GGUF_MAX_DIMS; d++) t->ne[d] = 1;
    for (uint32_t d = 0; d < t->n_dims; d++) {
        at = w->cur.pos;
        if (read_uint(w, 8, "tensor dimension", &v) != 0) return -1;
        if (v == 0) return walk_fail(w, at, "tensor '%.64s' has dimension %u of size 0", name_scratch, d);
        if (n_el > UINT64_MAX / v)
            return walk_fail(w, at, "tensor '%.64s': element count overflows 64 bits", name_scratch);
        n_el *= v;
        t->ne[d] = v;
    }
    t->n_elements = n_el;
    at = w->cur.pos;
    if (read_uint(w, 4, "tensor type", &v) != 0) return -1;
    const GgmlTypeInfo *ti = v <= UINT32_MAX ? ggml_type_info((uint32_t)v) : NULL;
    if (!ti) return walk_fail(w, at, "tensor '%.64s' has invalid type %llu", name_scratch, (ull)v);
    t->type = (uint32_t)v;
    if (t->ne[0] % ti->block_elems != 0)
        return walk_fail(w, at, "tensor '%.64s': row length %llu is not a multiple of the %s block size %u", name_scratch,
                         (ull)t->ne[0], ti->name, ti->block_elems);
    uint64_t row = ggml_row_bytes(t->type, t->ne[0]);
    uint64_t rows = n_el / t->ne[0];
    if (row == 0 || rows > UINT64_MAX / row)
        return walk_fail(w, at, "tensor '%.64s': byte size overflows 64 bits", name_scratch);
    t->n_bytes = row * rows;
    if (t->n_bytes > w->cur.f->size)
        return walk_fail(w, at, "tensor '%.64s' needs %llu bytes, more than the whole file (%llu)", name_scratch,
                         (ull)t->n_bytes, (ull)w->cur.f->size);
    at = w->cur.pos;
    if (read_uint(w, 8, "tensor offset", &v) != 0) return -1;
    t->offset = v;
    if (data_start == UINT64_MAX) return 0;
    uint64_t size = w->cur.f->size;
    if (v % w->alignment != 0)
        return walk_fail(w, at, "tensor '%.64s': offset %llu is not a multiple of the alignment %llu", name_scratch,
                         (ull)v, (ull)w->alignment);
    if (v > size - data_start || t->n_bytes > size - data_start - v)
        return walk_fail(w, at, "tensor '%.64s': data at offset %llu (+%llu bytes) lies beyond the end of the file (%llu bytes)",
                         name_scratch, (ull)v, (ull)t->n_bytes, (ull)size);
    t->offset = data_start + v;
    return 0;
}

/* Walks file `file` of g. KVs are reported (and counted) only for file 0;
 * tensors for every file. */
static int walk_file(Walk *w, const GgufScanCallbacks *cb)
{
    Gguf *g = w->g;
    PortFile *f = &g->files[w->file];
    w->path = f->path;
    cursor_init(&w->cur, f);
    w->alignment = GGUF_DEFAULT_ALIGNMENT;
    w->has_split_count = w->has_split_no = w->has_split_tensors = 0;
    uint64_t v;
    if (f->size < HEADER_BYTES)
        return walk_fail(w, f->size, "truncated: a GGUF header needs %d bytes, the file has %llu", HEADER_BYTES, (ull)f->size);
    if (read_uint(w, 4, "magic", &v) != 0) return -1;
    if (v != GGUF_MAGIC) return walk_fail(w, 0, "not a GGUF file (bad magic 0x%08llx)", (ull)v);
    if (read_uint(w, 4, "version", &v) != 0) return -1;
    if (v == ((uint64_t)2 << 24) || v == ((uint64_t)3 << 24))
        return walk_fail(w, 4, "big-endian GGUF files are not supported");
    if (v != 2 && v != 3) return walk_fail(w, 4, "unsupported GGUF version %llu (only 2 and 3)", (ull)v);
    if (w->file == 0) g->version = (uint32_t)v;
    if (read_uint(w, 8, "n_tensors", &w->n_tensors) != 0) return -1;
    if (read_uint(w, 8, "n_kv", &w->n_kv) != 0) return -1;
    uint64_t left = cursor_left(&w->cur);
    if (w->n_tensors > GGUF_MAX_TENSORS - w->acc->n_tensors)
        return walk_fail(w, 8, "n_tensors %llu is over the limit of %d tensors", (ull)w->n_tensors, GGUF_MAX_TENSORS);
    if (w->n_tensors > left / MIN_TENSOR_BYTES)
        return walk_fail(w, 8, "n_tensors %llu cannot fit in the %llu bytes left", (ull)w->n_tensors, (ull)left);
    if (w->n_kv > left / MIN_KV_BYTES)
        return walk_fail(w, 16, "n_kv %llu cannot fit in the %llu bytes left", (ull)w->n_kv, (ull)left);
    if (w->n_tensors * MIN_TENSOR_BYTES + w->n_kv * MIN_KV_BYTES > left)
        return walk_fail(w, 8, "n_tensors %llu and n_kv %llu cannot fit in the %llu bytes left", (ull)w->n_tensors,
                         (ull)w->n_kv, (ull)left);

    for (uint64_t i = 0; i < w->n_kv; i++) {
        GgufKV kv;
        memset(&kv, 0, sizeof kv);
        kv.key_offset = w->cur.pos;
        kv.file_index = w->file;
        if (read_name(w, "key", &kv.key_len) != 0) return -1;
        kv.key = name_scratch;
        uint64_t at = w->cur.pos;
        if (read_uint(w, 4, "value type", &v) != 0) return -1;
        if (v >= GGUF_TYPE_COUNT) return walk_fail(w, at, "key '%.64s' has invalid value type %llu", name_scratch, (ull)v);
        kv.type = (uint32_t)v;
        kv.value_offset = w->cur.pos;
        if (walk_value(w, kv.type, 0, &kv) != 0) return -1;
        kv.value_end = w->cur.pos;
        if (note_kv(w, &kv) != 0) return -1;
        if (w->file == 0) {
            w->acc->key_bytes += kv.key_len + 1u;
            if (cb && cb->on_kv && cb->on_kv(cb->ctx, g, &kv, w->err) != 0) return -1;
        }
    }

    /* Tensor records twice: first to find where the header ends (and so
     * where data starts), then to check each data range against it. */
    uint64_t infos_at = w->cur.pos;
    GgufTensor t;
    for (uint64_t i = 0; i < w->n_tensors; i++)
        if (walk_tensor(w, &t, UINT64_MAX) != 0) return -1;
    uint64_t header_end = w->cur.pos;
    uint64_t data_start = header_end + (w->alignment - header_end % w->alignment) % w->alignment;
    if (w->n_tensors > 0 && data_start > f->size)
        return walk_fail(w, header_end, "tensor data would start at byte %llu, past the end of the file (%llu bytes)",
                         (ull)data_start, (ull)f->size);
    g->data_start[w->file] = data_start;
    if (w->file == 0) g->alignment = w->alignment;
    w->cur.pos = infos_at;
    for (uint64_t i = 0; i < w->n_tensors; i++) {
        if (walk_tensor(w, &t, data_start) != 0) return -1;
        w->acc->name_bytes += t.name_len + 1u;
        if (cb && cb->on_tensor && cb->on_tensor(cb->ctx, g, &t, w->err) != 0) return -1;
    }
    if (w->file == 0) w->acc->n_kv = w->n_kv;
    w->acc->n_tensors += w->n_tensors;
    return 0;
}

/* Split metadata of file w->file must agree with the set that was opened. */
static int check_split(Walk *w)
{
    uint32_t n = w->g->n_files;
    if (n == 1) {
        if (w->has_split_count && w->split_count > 1)
            return walk_fail(w, 0, "split.count is %llu but only one file was opened", (ull)w->split_count);
        return 0;
    }
    if (!w->has_split_count || w->split_count != n)
        return walk_fail(w, 0, "split.count is missing or not %u as in the first file", n);
    if (!w->has_split_no || w->split_no != w->file)
        return walk_fail(w, 0, "split.no is missing or not %u (file %u of %u)", w->file, w->file + 1, n);
    return 0;
}

int gguf_walk(Gguf *g, const GgufScanCallbacks *cb, GgufError *err)
{
    Walk w;
    GgufSizes acc;
    memset(&acc, 0, sizeof acc);
    uint64_t split_tensors = 0;
    int has_split_tensors = 0;
    for (uint32_t i = 0; i < g->n_files; i++) {
        w.g = g;
        w.err = err;
        w.file = i;
        w.acc = &acc;
        if (walk_file(&w, cb) != 0) return -1;
        if (check_split(&w) != 0) return -1;
        if (i == 0) has_split_tensors = w.has_split_tensors, split_tensors = w.split_tensors;
    }
    if (g->n_files > 1 && has_split_tensors && split_tensors != acc.n_tensors)
        return fail(err, g->files[0].path, 0, "split.tensors.count is %llu but the %u files hold %llu tensors",
                    (ull)split_tensors, g->n_files, (ull)acc.n_tensors);
    g->sizes = acc;
    return 0;
}

/* ---- opening, split siblings ------------------------------------------------ */

static int parse_digits5(const char *s, uint32_t *out)
{
    uint32_t v = 0;
    for (int i = 0; i < 5; i++) {
        if (s[i] < '0' || s[i] > '9') return -1;
        v = v * 10 + (uint32_t)(s[i] - '0');
    }
    *out = v;
    return 0;
}

/* Opens files 1..count-1 next to the first one, named
 * PREFIX-0000k-of-0000N.gguf after the first file's name. */
static int open_siblings(Gguf *g, uint32_t count, int use_mmap, GgufError *err)
{
    const char *path = g->files[0].path;
    const char *sfx = "-00001-of-00000.gguf";
    size_t len = strlen(path), slen = strlen(sfx);
    uint32_t no, of;
    const char *tail = len >= slen ? path + len - slen : NULL;
    if (!tail || tail[0] != '-' || parse_digits5(tail + 1, &no) != 0 || memcmp(tail + 6, "-of-", 4) != 0 ||
        parse_digits5(tail + 10, &of) != 0 || strcmp(tail + 15, ".gguf") != 0)
        return fail(err, path, 0, "split model of %u files, but the name does not end in -00001-of-%05u.gguf", count, count);
    if (no != 1 || of != count)
        return fail(err, path, 0, "split model of %u files, but the name says file %u of %u (open -00001-of-%05u.gguf)",
                    count, no, of, count);
    size_t prefix = len - slen, used = 0;
    for (uint32_t i = 1; i < count; i++) {
        char *p = g->path_store + used;
        if (prefix + slen + 1 > sizeof g->path_store - used)
            return fail(err, path, 0, "path too long to open a split model of %u files", count);
        memcpy(p, path, prefix);
        snprintf(p + prefix, slen + 1, "-%05u-of-%05u.gguf", (i + 1) % 100000, count % 100000);
        used += prefix + slen + 1;
        char why[400];
        if (port_file_open(&g->files[i], p, use_mmap, why, sizeof why) != 0) {
            fail(err, path, 0, "split file %u of %u: %s", i + 1, count, why);
            err->status = PITH_IO;
            return -1;
        }
        g->n_files = i + 1;
    }
    return 0;
}

int gguf_open(Gguf *g, const char *path, int use_mmap, const GgufScanCallbacks *cb, GgufError *err)
{
    memset(g, 0, sizeof *g);
    for (int i = 0; i < GGUF_MAX_SPLITS; i++) g->files[i].fd = -1;
    char why[400];
    if (port_file_open(&g->files[0], path, use_mmap, why, sizeof why) != 0) {
        snprintf(err->msg, sizeof err->msg, "%s", why);
        err->status = PITH_IO;
        return -1;
    }
    g->n_files = 1;
    /* A first look at file 0 alone tells whether it is part of a split set. */
    Walk w;
    GgufSizes probe;
    memset(&probe, 0, sizeof probe);
    w.g = g;
    w.err = err;
    w.file = 0;
    w.acc = &probe;
    if (walk_file(&w, NULL) != 0) goto failed;
    if (w.has_split_count && w.split_count > 1) {
        if (w.split_count > GGUF_MAX_SPLITS) {
            fail(err, path, 0, "split.count %llu is over the limit of %d files", (ull)w.split_count, GGUF_MAX_SPLITS);
            goto failed;
        }
        if (!w.has_split_no || w.split_no != 0) {
            fail(err, path, 0, "this is file %llu of a split model: open the first file (-00001-of-...)",
                 (ull)(w.split_no + 1));
            goto failed;
        }
        if (open_siblings(g, (uint32_t)w.split_count, use_mmap, err) != 0) goto failed;
    }
    if (gguf_walk(g, cb, err) != 0) goto failed;
    return 0;
failed:
    gguf_close(g);
    return -1;
}

int gguf_map(Gguf *g)
{
    for (uint32_t i = 0; i < g->n_files; i++) {
        if (port_file_map(&g->files[i]) != 0) {
            for (uint32_t k = 0; k < g->n_files; k++) port_file_unmap(&g->files[k]);
            return -1;
        }
    }
    return 0;
}

void gguf_close(Gguf *g)
{
    for (uint32_t i = 0; i < g->n_files; i++) port_file_close(&g->files[i]);
    g->n_files = 0;
}

/* ---- pass 2: the index ------------------------------------------------------- */

static uint64_t hash_slots(uint64_t n_tensors)
{
    uint64_t n = 2;
    while (n < 2 * n_tensors) n *= 2;
    return n;
}

void gguf_plan(const Gguf *g, Plan *plan)
{
    const GgufSizes *s = &g->sizes;
    plan_add(plan, "gguf: keys", plan_mul(plan, s->n_kv, sizeof(GgufKV)));
    plan_add(plan, "gguf: tensors", plan_mul(plan, s->n_tensors, sizeof(GgufTensor)));
    plan_add(plan, "gguf: names", s->key_bytes + s->name_bytes);
    plan_add(plan, "gguf: tensor hash", plan_mul(plan, hash_slots(s->n_tensors), sizeof(uint32_t)));
}

typedef struct {
    GgufSizes cap;    /* what was planned */
    uint64_t n_kv, n_tensors, names_used;
    char *names;
} IndexFill;

static char *copy_name(IndexFill *x, const char *s, uint32_t len)
{
    if (len + 1u > x->cap.key_bytes + x->cap.name_bytes - x->names_used) return NULL;
    char *d = x->names + x->names_used;
    memcpy(d, s, len + 1u);
    x->names_used += len + 1u;
    return d;
}

static int changed(Gguf *g, GgufError *err)
{
    return fail(err, g->files[0].path, 0, "the file changed while it was being read");
}

static int fill_kv(void *ctx, Gguf *g, const GgufKV *kv, GgufError *err)
{
    IndexFill *x = ctx;
    if (x->n_kv == x->cap.n_kv) return changed(g, err);
    GgufKV *d = &g->kvs[x->n_kv++];
    *d = *kv;
    d->key = copy_name(x, kv->key, kv->key_len);
    return d->key ? 0 : changed(g, err);
}

static int fill_tensor(void *ctx, Gguf *g, const GgufTensor *t, GgufError *err)
{
    IndexFill *x = ctx;
    if (x->n_tensors == x->cap.n_tensors) return changed(g, err);
    GgufTensor *d = &g->tensors[x->n_tensors++];
    *d = *t;
    d->name = copy_name(x, t->name, t->name_len);
    return d->name ? 0 : changed(g, err);
}

/* In-place heap sorts (no memory needed, O(n log n) on hostile input). */
static void sift_kvs(GgufKV *a, uint64_t root, uint64_t n)
{
    for (;;) {
        uint64_t c = 2 * root + 1;
        if (c >= n) return;
        if (c + 1 < n && strcmp(a[c + 1].key, a[c].key) > 0) c++;
        if (strcmp(a[c].key, a[root].key) <= 0) return;
        GgufKV tmp = a[c];
        a[c] = a[root];
        a[root] = tmp;
        root = c;
    }
}

static void sort_kvs(GgufKV *a, uint64_t n)
{
    for (uint64_t i = n / 2; i-- > 0;) sift_kvs(a, i, n);
    for (uint64_t end = n; end-- > 1;) {
        GgufKV tmp = a[0];
        a[0] = a[end];
        a[end] = tmp;
        sift_kvs(a, 0, end);
    }
}

static int tensor_before(const GgufTensor *t, uint32_t a, uint32_t b)
{
    if (t[a].file_index != t[b].file_index) return t[a].file_index < t[b].file_index;
    return t[a].offset < t[b].offset;
}

static void sift_order(const GgufTensor *t, uint32_t *o, uint64_t root, uint64_t n)
{
    for (;;) {
        uint64_t c = 2 * root + 1;
        if (c >= n) return;
        if (c + 1 < n && tensor_before(t, o[c], o[c + 1])) c++;
        if (!tensor_before(t, o[root], o[c])) return;
        uint32_t tmp = o[c];
        o[c] = o[root];
        o[root] = tmp;
        root = c;
    }
}

static void sort_order(const GgufTensor *t, uint32_t *o, uint64_t n)
{
    for (uint64_t i = n / 2; i-- > 0;) sift_order(t, o, i, n);
    for (uint64_t end = n; end-- > 1;) {
        uint32_t tmp = o[0];
        o[0] = o[end];
        o[end] = tmp;
        sift_order(t, o, 0, end);
    }
}

static uint64_t hash_name(const char *s)
{
    uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a */
    for (; *s; s++) h = (h ^ (uint8_t)*s) * 0x100000001b3ull;
    return h;
}

int gguf_index(Gguf *g, Arena *arena, GgufError *err)
{
    IndexFill x;
    memset(&x, 0, sizeof x);
    x.cap = g->sizes;
    g->n_hash = hash_slots(x.cap.n_tensors);
    g->kvs = arena_take(arena, x.cap.n_kv * sizeof(GgufKV));
    g->tensors = arena_take(arena, x.cap.n_tensors * sizeof(GgufTensor));
    x.names = arena_take(arena, x.cap.key_bytes + x.cap.name_bytes);
    g->tensor_hash = arena_take(arena, g->n_hash * sizeof(uint32_t));
    if (!g->kvs || !g->tensors || !x.names || !g->tensor_hash)
        return fail(err, g->files[0].path, 0, "internal error: the arena is smaller than gguf_plan asked for");
    GgufScanCallbacks cb = {fill_kv, fill_tensor, &x};
    if (gguf_walk(g, &cb, err) != 0) return -1;
    if (x.n_kv != x.cap.n_kv || x.n_tensors != x.cap.n_tensors) return changed(g, err);

    sort_kvs(g->kvs, x.n_kv);
    for (uint64_t i = 1; i < x.n_kv; i++) {
        const GgufKV *a = &g->kvs[i - 1], *b = &g->kvs[i];
        if (strcmp(a->key, b->key) == 0) {
            const GgufKV *later = a->key_offset > b->key_offset ? a : b;
            return fail(err, g->files[0].path, later->key_offset, "duplicate key '%.64s'", later->key);
        }
    }

    /* Overlapping data: sort tensor numbers by (file, offset) in the hash
     * table's memory (it has room for 2n), then compare neighbours. */
    uint32_t *order = g->tensor_hash;
    for (uint64_t i = 0; i < x.n_tensors; i++) order[i] = (uint32_t)i;
    sort_order(g->tensors, order, x.n_tensors);
    for (uint64_t i = 1; i < x.n_tensors; i++) {
        const GgufTensor *a = &g->tensors[order[i - 1]], *b = &g->tensors[order[i]];
        if (a->file_index == b->file_index && a->offset + a->n_bytes > b->offset)
            return fail(err, g->files[b->file_index].path, b->info_offset,
                        "tensor '%.64s' data [%llu, %llu) overlaps tensor '%.64s' [%llu, %llu)", b->name,
                        (ull)b->offset, (ull)(b->offset + b->n_bytes), a->name, (ull)a->offset,
                        (ull)(a->offset + a->n_bytes));
    }

    memset(g->tensor_hash, 0, g->n_hash * sizeof(uint32_t));
    for (uint64_t i = 0; i < x.n_tensors; i++) {
        const GgufTensor *t = &g->tensors[i];
        uint64_t s = hash_name(t->name) & (g->n_hash - 1);
        while (g->tensor_hash[s] != 0) {
            const GgufTensor *o = &g->tensors[g->tensor_hash[s] - 1];
            if (strcmp(o->name, t->name) == 0)
                return fail(err, g->files[t->file_index].path, t->info_offset, "duplicate tensor name '%.64s'", t->name);
            s = (s + 1) & (g->n_hash - 1);
        }
        g->tensor_hash[s] = (uint32_t)(i + 1);
    }
    return 0;
}

/* ---- lookups ------------------------------------------------------------------- */

const GgufKV *gguf_find_key(const Gguf *g, const char *key)
{
    if (!g->kvs) return NULL;
    uint64_t lo = 0, hi = g->sizes.n_kv;
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        int c = strcmp(g->kvs[mid].key, key);
        if (c == 0) return &g->kvs[mid];
        if (c < 0) lo = mid + 1;
        else hi = mid;
    }
    return NULL;
}

const GgufTensor *gguf_find_tensor(const Gguf *g, const char *name)
{
    if (!g->tensor_hash) return NULL;
    uint64_t s = hash_name(name) & (g->n_hash - 1);
    while (g->tensor_hash[s] != 0) {
        const GgufTensor *t = &g->tensors[g->tensor_hash[s] - 1];
        if (strcmp(t->name, name) == 0) return t;
        s = (s + 1) & (g->n_hash - 1);
    }
    return NULL;
}

int gguf_get_uint(const Gguf *g, const char *key, uint64_t *out)
{
    const GgufKV *kv = gguf_find_key(g, key);
    if (!kv || !is_integer_type(kv->type)) return -1;
    if (is_signed_type(kv->type) && kv->v.i < 0) return -1;
    *out = kv->v.u;
    return 0;
}

int gguf_get_float(const Gguf *g, const char *key, double *out)
{
    const GgufKV *kv = gguf_find_key(g, key);
    if (!kv) return -1;
    if (kv->type == GGUF_TYPE_FLOAT32 || kv->type == GGUF_TYPE_FLOAT64) *out = kv->v.f;
    else if (is_signed_type(kv->type)) *out = (double)kv->v.i;
    else if (is_integer_type(kv->type)) *out = (double)kv->v.u;
    else return -1;
    return 0;
}

int gguf_get_bool(const Gguf *g, const char *key, int *out)
{
    const GgufKV *kv = gguf_find_key(g, key);
    if (!kv || kv->type != GGUF_TYPE_BOOL) return -1;
    *out = kv->v.u != 0;
    return 0;
}

int64_t gguf_kv_string(Gguf *g, const GgufKV *kv, char *buf, size_t cap)
{
    if (!kv || kv->type != GGUF_TYPE_STRING || kv->file_index >= g->n_files) return -1;
    uint64_t len = kv->arr_len;
    if (len > (uint64_t)INT64_MAX) return -1;
    if (cap > 0) {
        size_t n = len < cap - 1 ? (size_t)len : cap - 1;
        if (n > 0 && port_file_read(&g->files[kv->file_index], kv->value_offset, buf, n) != 0) return -1;
        buf[n] = '\0';
    }
    return (int64_t)len;
}

int64_t gguf_get_string(Gguf *g, const char *key, char *buf, size_t cap)
{
    return gguf_kv_string(g, gguf_find_key(g, key), buf, cap);
}

const uint8_t *gguf_value_bytes(Gguf *g, const GgufKV *kv, void *buf)
{
    if (!kv || kv->file_index >= g->n_files || kv->value_end < kv->value_offset) return NULL;
    uint64_t n = kv->value_end - kv->value_offset;
    if (n > SIZE_MAX) return NULL;
    return port_file_bytes(&g->files[kv->file_index], kv->value_offset, (size_t)n, buf);
}

uint32_t gguf_len_size(const Gguf *g)
{
    (void)g;
    return 8;
}

const uint8_t *gguf_tensor_bytes(Gguf *g, const GgufTensor *t, void *buf)
{
    if (!t || t->file_index >= g->n_files || t->n_bytes > SIZE_MAX) return NULL;
    return port_file_bytes(&g->files[t->file_index], t->offset, (size_t)t->n_bytes, buf);
}

const char *gguf_value_type_name(uint32_t t)
{
    static const char *const names[GGUF_TYPE_COUNT] = {"u8",  "i8",     "u16",   "i16", "u32", "i32", "f32",
                                                       "bool", "string", "array", "u64", "i64", "f64"};
    return t < GGUF_TYPE_COUNT ? names[t] : "invalid";
}
