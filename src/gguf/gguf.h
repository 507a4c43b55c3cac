/* This folder: src/gguf/ - the file format: a hardened GGUF reader. May
 * call src/arena/, src/base/ (the type table's block sizes) and port/. */
/* gguf.h - a hardened reader for GGUF model files (versions 2 and 3).
 *
 * Versions 2 and 3 have the same layout (u64 counts and lengths, little
 * endian); version 1 (u32 counts) and big-endian files are refused.
 *
 * Model files are untrusted input. Opening happens in two passes so that
 * nothing is allocated before the file has been validated and measured:
 *
 *   1. gguf_open() (and gguf_walk()) walks and checks the whole header
 *      (every length, count, offset, type, name) without allocating. It reports the sizes the
 *      index will need (GgufSizes) and can call back for each key/value and
 *      each tensor, so a caller can read the model configuration in the same
 *      walk and size its own plan.
 *   2. gguf_index() walks again and fills tables carved from the arena:
 *      keys sorted for lookup, tensors with a hash table by name.
 *
 * Split models (NAME-00001-of-0000N.gguf) are opened from their first file;
 * the other files are found next to it and the set behaves as one model:
 * tensors of all files in one table (file_index says where), keys of the
 * first file only (the others are validated, not indexed). Every file has
 * its own header, alignment and data start; split.no, split.count and
 * split.tensors.count must agree.
 *
 * Checked in pass 1: magic, version, every count against the bytes left,
 * keys and names (1..65535 bytes of UTF-8, no control characters), value
 * and element types, nesting (<= 8), bools, general.alignment (u32 power of
 * two), tensor dims (1..4, each >= 1, no overflow), types, block multiples,
 * offsets (aligned, inside the file). Checked in gguf_index: duplicate
 * keys, duplicate tensor names, overlapping tensor data.
 *
 * Errors: functions return 0 on success and -1 on failure, having written
 * one line "FILE: byte OFFSET: what is wrong" into GgufError.msg. The
 * command line prints it as "pith: <msg>" and exits with status 2. */
#ifndef PITH_GGUF_H
#define PITH_GGUF_H

#include <stddef.h>
#include <stdint.h>

#include "../../port/port.h"
#include "../arena/arena.h"
#include "../base/status.h"

#define GGUF_MAGIC 0x46554747u /* "GGUF" little-endian */
#define GGUF_DEFAULT_ALIGNMENT 32
#define GGUF_MAX_DIMS 4
#define GGUF_MAX_SPLITS 128
#define GGUF_MAX_NAME 65535     /* longest key or tensor name accepted */
#define GGUF_MAX_TENSORS (1 << 30) /* all files together (indexes are 32-bit) */
#define GGUF_PATH_STORE 16384   /* bytes for the paths of split siblings */

/* Metadata value types, as numbered in the file. */
typedef enum {
    GGUF_TYPE_UINT8 = 0,
    GGUF_TYPE_INT8 = 1,
    GGUF_TYPE_UINT16 = 2,
    GGUF_TYPE_INT16 = 3,
    GGUF_TYPE_UINT32 = 4,
    GGUF_TYPE_INT32 = 5,
    GGUF_TYPE_FLOAT32 = 6,
    GGUF_TYPE_BOOL = 7,     /* one byte, 0 or 1 */
    GGUF_TYPE_STRING = 8,   /* u64 length + bytes, no NUL (v1 used u32: refused) */
    GGUF_TYPE_ARRAY = 9,    /* u32 element type + u64 count + elements */
    GGUF_TYPE_UINT64 = 10,
    GGUF_TYPE_INT64 = 11,
    GGUF_TYPE_FLOAT64 = 12,
    GGUF_TYPE_COUNT = 13
} GgufValueType;

const char *gguf_value_type_name(uint32_t t); /* "u32", "string", ... */

/* Why a call failed: its kind (PITH_BAD_INPUT for a malformed file, PITH_IO
 * when it cannot be read, PITH_UNSUPPORTED for what pith does not run) and
 * one line. */
typedef struct {
    PithStatus status;
    char msg[512];
} GgufError;

/* One key/value pair. Scalars are decoded; strings and arrays are left in
 * the file and reached through their offsets. */
typedef struct {
    const char *key;        /* NUL-terminated (copied into the arena by gguf_index;
                               points into a scratch buffer during gguf_walk callbacks,
                               one static buffer: walks must not run concurrently).
                               Valid UTF-8 without control characters, 1..65535 bytes. */
    uint32_t key_len;
    uint32_t type;          /* GgufValueType */
    uint32_t arr_type;      /* element type when type == ARRAY */
    uint64_t arr_len;       /* element count when ARRAY; byte length when STRING */
    uint64_t value_offset;  /* file offset of the value: for STRING the first byte
                               of text, for ARRAY the first element */
    uint64_t value_end;     /* file offset one past the value */
    uint32_t file_index;    /* which split file holds it (0 = first) */
    union {
        uint64_t u;         /* UINT8/16/32/64, BOOL */
        int64_t i;          /* INT8/16/32/64 */
        double f;           /* FLOAT32/64 */
    } v;
    uint64_t key_offset;    /* file offset of the key's length field (for messages) */
} GgufKV;

typedef struct {
    const char *name;       /* NUL-terminated, as GgufKV.key */
    uint32_t name_len;
    uint32_t n_dims;        /* 1..4 */
    uint64_t ne[GGUF_MAX_DIMS]; /* elements per dimension; ne[0] is the row length; unused = 1 */
    uint32_t type;          /* GgmlType */
    uint64_t n_elements;
    uint64_t n_bytes;
    uint64_t offset;        /* absolute file offset of the data */
    uint32_t file_index;
    uint64_t info_offset;   /* file offset of the tensor's header record (for messages) */
} GgufTensor;

/* What pass 1 measured: enough to plan the index in the arena. */
typedef struct {
    uint64_t n_kv;            /* all files together (split files repeat split.* keys: kept per file 0 only) */
    uint64_t n_tensors;       /* all files together */
    uint64_t key_bytes;       /* sum of key lengths + NULs */
    uint64_t name_bytes;      /* sum of tensor name lengths + NULs */
} GgufSizes;

typedef struct {
    PortFile files[GGUF_MAX_SPLITS];
    uint32_t n_files;
    uint32_t version;         /* of the first file */
    uint64_t alignment;
    uint64_t data_start[GGUF_MAX_SPLITS]; /* per file */
    GgufSizes sizes;
    /* filled by gguf_index: */
    GgufKV *kvs;              /* sorted by key */
    GgufTensor *tensors;      /* file order */
    uint32_t *tensor_hash;    /* open addressing, n_hash slots, value = index+1 */
    uint64_t n_hash;
    /* paths of the split siblings (files[0].path is the caller's string,
     * which must stay valid). A Gguf must not be copied: paths point here. */
    char path_store[GGUF_PATH_STORE];
} Gguf;

/* Callbacks for gguf_open and gguf_walk; either may be NULL. Return 0 to
 * go on, -1 to stop with an error (having filled err->msg). on_kv sees the
 * keys of the first file only; on_tensor the tensors of every file. */
typedef struct {
    int (*on_kv)(void *ctx, Gguf *g, const GgufKV *kv, GgufError *err);
    int (*on_tensor)(void *ctx, Gguf *g, const GgufTensor *t, GgufError *err);
    void *ctx;
} GgufScanCallbacks;

/* Opens the model at path (and its split siblings) and runs pass 1.
 * use_mmap as in port_file_open. */
int gguf_open(Gguf *g, const char *path, int use_mmap, const GgufScanCallbacks *cb, GgufError *err);
/* Runs the validating walk of pass 1 again with callbacks, allocating
 * nothing. This is how the configuration of a model and the sizes of its
 * tokenizer are read before the arena exists: a caller may walk more than
 * once (e.g. first for general.architecture, then for "<arch>.*" keys). */
int gguf_walk(Gguf *g, const GgufScanCallbacks *cb, GgufError *err);
/* Reads a STRING value given its record (also usable inside callbacks):
 * copies at most cap-1 bytes and a NUL; returns the full length, or -1 if
 * the record is not a string or the read fails. */
int64_t gguf_kv_string(Gguf *g, const GgufKV *kv, char *buf, size_t cap);

/* Adds the index tables to a plan (call after gguf_open). */
void gguf_plan(const Gguf *g, Plan *plan);
/* Pass 2: fills the tables from the arena. */
int gguf_index(Gguf *g, Arena *arena, GgufError *err);
void gguf_close(Gguf *g);
/* Maps every file of a model opened without mmap (before gguf_index:
 * lookups then reach keys and tensors in place). 0, or -1 when one cannot
 * be mapped: then none is, and reads go on. */
int gguf_map(Gguf *g);

/* Lookups (after gguf_index). NULL when absent. */
const GgufKV *gguf_find_key(const Gguf *g, const char *key);
const GgufTensor *gguf_find_tensor(const Gguf *g, const char *name);

/* Typed getters: return 0 and store the value if the key exists and has a
 * compatible type (any integer type for *_int, if in range; F32/F64 or an
 * integer for *_float), else -1. */
int gguf_get_uint(const Gguf *g, const char *key, uint64_t *out);
int gguf_get_float(const Gguf *g, const char *key, double *out);
int gguf_get_bool(const Gguf *g, const char *key, int *out);
/* String value: copies at most cap-1 bytes and a NUL into buf; returns the
 * full length, or -1 if absent or not a string. */
int64_t gguf_get_string(Gguf *g, const char *key, char *buf, size_t cap);

/* The raw bytes of a value, [value_offset, value_end): zero-copy pointer
 * when mapped, else read into buf (which must hold value_end-value_offset
 * bytes). For string arrays the bytes are the validated sequence of
 * (u64 length, bytes) records. NULL on read error. */
const uint8_t *gguf_value_bytes(Gguf *g, const GgufKV *kv, void *buf);
/* Size of one length prefix in string arrays: 8 (GGUF v2 and v3 both use
 * u64 lengths and counts; only v1, which is refused, used u32). */
uint32_t gguf_len_size(const Gguf *g);

/* The tensor's data, as gguf_value_bytes. */
const uint8_t *gguf_tensor_bytes(Gguf *g, const GgufTensor *t, void *buf);

#endif
