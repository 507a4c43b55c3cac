/* gguf_writer.h - a small GGUF writer for tests and tools (stdio + malloc).
 *
 * Build a model in memory (keys/values in the order added, tensors in the
 * order added), then write it to a file or serialize it into a buffer for
 * byte surgery. Tensor data may be given as F32 and stored converted
 * (F32, F16, BF16, Q8_0, and Q4_0, Q4_K, Q6_K through src/kernels/quant.c's
 * reference quantizers; rows a multiple of the block), given as raw bytes, or generated row by row at
 * write time (large models are streamed, never held in memory).
 *
 * Allocation failures abort: this is test code. */
#ifndef PITH_GGUF_WRITER_H
#define PITH_GGUF_WRITER_H

#include <stddef.h>
#include <stdint.h>

#include "../../src/gguf/gguf.h"

typedef struct GgufWriter GgufWriter;

/* A growable byte buffer, also used to encode raw values (nested arrays,
 * malformed fields). */
typedef struct {
    uint8_t *p;
    size_t len, cap;
} GwBuf;

void gwb_bytes(GwBuf *b, const void *bytes, size_t n);
void gwb_u8(GwBuf *b, uint8_t v);
void gwb_u32(GwBuf *b, uint32_t v);
void gwb_u64(GwBuf *b, uint64_t v);
void gwb_str(GwBuf *b, const char *s);              /* u64 length + bytes */
void gwb_strn(GwBuf *b, const void *s, uint64_t n);
void gwb_free(GwBuf *b);

/* version: 2 or 3 (written as given; any number for malformed tests).
 * alignment: if nonzero, a `general.alignment` u32 key is added first and
 * data is laid out with it; 0 = no key, default alignment 32. */
GgufWriter *gw_new(uint32_t version, uint32_t alignment);
void gw_free(GgufWriter *w);
/* The alignment used to lay out data, independent of the key (for tests
 * that write a bad general.alignment by hand). */
void gw_set_data_alignment(GgufWriter *w, uint32_t alignment);

/* Keys/values. Scalars of any integer type (value truncated to the type). */
void gw_kv_int(GgufWriter *w, const char *key, uint32_t type, uint64_t v);
void gw_kv_u32(GgufWriter *w, const char *key, uint32_t v);
void gw_kv_i32(GgufWriter *w, const char *key, int32_t v);
void gw_kv_u64(GgufWriter *w, const char *key, uint64_t v);
void gw_kv_bool(GgufWriter *w, const char *key, int v);
void gw_kv_f32(GgufWriter *w, const char *key, float v);
void gw_kv_f64(GgufWriter *w, const char *key, double v);
void gw_kv_str(GgufWriter *w, const char *key, const char *s);
void gw_kv_strn(GgufWriter *w, const char *key, const void *s, uint64_t n);
/* Array of fixed-size elements (host little-endian layout: i32, f32, ...). */
void gw_kv_array(GgufWriter *w, const char *key, uint32_t elem_type, const void *elems, uint64_t n);
void gw_kv_str_array(GgufWriter *w, const char *key, const char *const *strs, uint64_t n);
/* Any value already encoded (e.g. an array of arrays built with gwb_*). */
void gw_kv_raw(GgufWriter *w, const char *key, uint32_t type, const void *value, size_t len);
/* A key given as raw bytes (length n, not NUL-checked): for bad UTF-8 tests. */
void gw_kv_raw_key(GgufWriter *w, const void *key, uint64_t key_len, uint32_t type, const void *value, size_t len);

/* Copies a key/value read by pith's GGUF reader (any type, raw bytes;
 * usable inside gguf_walk callbacks). Returns 0, or -1 on a read error. */
int gw_kv_copy(GgufWriter *w, Gguf *g, const GgufKV *kv);

/* Tensors. ne[0] is the row length. Returns the tensor's index. */
int gw_tensor(GgufWriter *w, const char *name, uint32_t n_dims, const uint64_t *ne, uint32_t type, const float *data);
int gw_tensor_raw(GgufWriter *w, const char *name, uint32_t n_dims, const uint64_t *ne, uint32_t type,
                  const void *bytes, size_t n_bytes);
/* fill(ctx, row_index, out, ne[0]) writes one row of F32 values. */
typedef void (*GwFill)(void *ctx, uint64_t row, float *out, uint64_t n);
int gw_tensor_gen(GgufWriter *w, const char *name, uint32_t n_dims, const uint64_t *ne, uint32_t type, GwFill fill,
                  void *ctx);
/* Overrides the relative data offset written for tensor i (malformed tests). */
void gw_tensor_offset(GgufWriter *w, int i, uint64_t rel_offset);

/* Output. Both return 0 on success. gw_serialize returns a malloc'd image. */
int gw_write(GgufWriter *w, const char *path);
uint8_t *gw_serialize(GgufWriter *w, size_t *len);
/* Writes the model as a split set PREFIX-0000k-of-0000N.gguf (k = 1..N):
 * the tensors cut into N runs of file order, all keys in the first file,
 * and split.no (u16), split.count (u16), split.tensors.count (i32) in
 * every file, as llama.cpp's gguf-split does. */
int gw_write_split(GgufWriter *w, const char *prefix, int n_files);
/* Offsets filled by the last write/serialize: start of KV record i (its key
 * length), of tensor record i (its name length), and the data start. */
uint64_t gw_kv_at(const GgufWriter *w, int i);
uint64_t gw_tensor_info_at(const GgufWriter *w, int i);
uint64_t gw_data_start(const GgufWriter *w);
int gw_n_kv(const GgufWriter *w);

/* Conversions (round to nearest even) and Q8_0 blocks (n multiple of 32;
 * out holds n/32*34 bytes: f16 scale d = amax/127, q = round(x/d)). */
uint16_t gw_f32_to_f16(float f);
float gw_f16_to_f32(uint16_t h);
uint16_t gw_f32_to_bf16(float f);
void gw_quantize_q8_0(const float *x, uint64_t n, uint8_t *out);
/* Bytes of a tensor of type t with n elements (row length a multiple of
 * the block size); 0 for types the writer cannot convert to. */
uint64_t gw_type_bytes(uint32_t t, uint64_t n);

/* Deterministic random numbers (splitmix64). */
typedef struct {
    uint64_t s;
} GwRng;
uint64_t gw_rng_next(GwRng *r);
float gw_rng_uniform(GwRng *r); /* in [-1, 1) */

#endif
