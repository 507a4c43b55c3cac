/* prompt_cache.c - a slot's state in a file, so that a prompt computed once
 * (an agent's long system prompt) is not computed again by the next run
 * (engine.h: slot_cache_save, slot_cache_load; `pith run --prompt-cache`).
 *
 * The file: a header (below), the ids the state covers, then the state's
 * spans (forward.h: seq_state_spans) in their order. The header names the
 * model (a hash of every file's header bytes and size), the KV type and
 * the layout (layers, kv heads, head size, ring rows, a recurrent layer's
 * bytes), and holds a checksum of the ids and spans and one of itself. A
 * file that does not match in every one of them, or has another length, is
 * not used: one warning, and the prompt is computed. The spans are read
 * straight into the slot's cache; if their checksum then fails, the slot is
 * emptied again. Files are written whole or not at all (port_atomic_*). */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "../../port/port.h"
#include "engine.h"

#define CACHE_MAGIC "PITHKV1\n"
#define CACHE_VERSION 2 /* 2: the four-lane checksum */

typedef struct {
    char magic[8];
    uint64_t model_hash;
    uint64_t payload_bytes;   /* the spans' */
    uint64_t recurrent_bytes; /* of one recurrent layer's state */
    uint64_t checksum;        /* of the ids and the spans */
    uint32_t version, kv_type, n_tokens, ring, n_layer, n_head_kv, head_dim, head_dim_v;
    uint64_t header_sum;      /* of the fields above */
} CacheHeader;
_Static_assert(sizeof(CacheHeader) == 80, "the header is written as it lies in memory: no padding");

/* A 64-bit FNV-1a over 8-byte words in four lanes (one multiply chain
 * would wait on itself: a quarter of the speed over hundreds of MB), the
 * lanes then folded into one, and the bytes left: any changed byte
 * changes it. */
static uint64_t word_at(const uint8_t *b)
{
    uint64_t w;
    memcpy(&w, b, 8);
    return w;
}

static uint64_t sum_bytes(uint64_t h, const void *p, uint64_t n)
{
    const uint8_t *b = p;
    const uint64_t prime = 0x100000001b3ull;
    uint64_t l0 = h, l1 = h ^ 1, l2 = h ^ 2, l3 = h ^ 3; /* in registers: four chains at once */
    for (; n >= 32; n -= 32, b += 32) {
        l0 = (l0 ^ word_at(b)) * prime;
        l1 = (l1 ^ word_at(b + 8)) * prime;
        l2 = (l2 ^ word_at(b + 16)) * prime;
        l3 = (l3 ^ word_at(b + 24)) * prime;
    }
    h = (((l0 ^ l1) * prime ^ l2) * prime ^ l3) * prime;
    for (; n > 0; n--) h = (h ^ *b++) * prime;
    return h;
}
#define SUM_START 0xcbf29ce484222325ull

/* The model: every file's header (keys and tensor records) and size,
 * hashed once per engine. */
static int model_hash(Engine *e, uint64_t *out)
{
    if (e->model_hash) {
        *out = e->model_hash;
        return 0;
    }
    uint64_t h = SUM_START;
    uint8_t buf[4096];
    for (uint32_t i = 0; i < e->gguf.n_files; i++) {
        PortFile *f = &e->gguf.files[i];
        h = sum_bytes(h, &f->size, sizeof f->size);
        for (uint64_t off = 0; off < e->gguf.data_start[i]; off += sizeof buf) {
            uint64_t n = e->gguf.data_start[i] - off < sizeof buf ? e->gguf.data_start[i] - off : sizeof buf;
            if (port_file_read(f, off, buf, (size_t)n) != 0) return -1;
            h = sum_bytes(h, buf, n);
        }
    }
    *out = e->model_hash = h ? h : 1;
    return 0;
}

static void header_for(Engine *e, const Slot *s, uint32_t n, CacheHeader *h)
{
    memset(h, 0, sizeof *h);
    memcpy(h->magic, CACHE_MAGIC, 8);
    h->version = CACHE_VERSION;
    h->kv_type = (uint32_t)s->seq.kv_type;
    h->n_tokens = n;
    h->ring = s->seq.ring;
    h->n_layer = e->cfg.n_layer;
    h->n_head_kv = e->cfg.n_head_kv;
    h->head_dim = e->cfg.head_dim;
    h->head_dim_v = e->cfg.head_dim_v;
    h->recurrent_bytes = s->seq.recurrent_layer_bytes;
}

static uint64_t header_sum(const CacheHeader *h)
{
    return sum_bytes(SUM_START, h, offsetof(CacheHeader, header_sum));
}

/* The visitors of seq_state_spans. */
typedef struct {
    uint64_t bytes, sum;
    PortAtomicFile *out;
    PortFile *in;
    uint64_t off;
} SpanWalk;

static int size_span(void *ctx, void *p, uint64_t n)
{
    (void)p;
    ((SpanWalk *)ctx)->bytes += n;
    return 0;
}

static int sum_span(void *ctx, void *p, uint64_t n)
{
    SpanWalk *w = ctx;
    w->bytes += n;
    w->sum = sum_bytes(w->sum, p, n);
    return 0;
}

static int write_span(void *ctx, void *p, uint64_t n)
{
    SpanWalk *w = ctx;
    return port_atomic_write(w->out, p, (size_t)n);
}

static int read_span(void *ctx, void *p, uint64_t n)
{
    SpanWalk *w = ctx;
    if (port_file_read(w->in, w->off, p, (size_t)n) != 0) return -1;
    w->off += n;
    w->sum = sum_bytes(w->sum, p, n);
    return 0;
}

static int warn_of(char *warn, size_t cap, const char *path, const char *what)
{
    snprintf(warn, cap, "prompt cache %s: %s; the prompt is computed", path, what);
    return 1;
}

int slot_cache_save(Engine *e, Slot *s, uint32_t n, const char *path, uint64_t *bytes, char *warn, size_t cap)
{
    if (!slot_holds_prefix(e, s, n)) return warn_of(warn, cap, path, "the slot does not hold those positions (any more)");
    CacheHeader h;
    header_for(e, s, n, &h);
    if (model_hash(e, &h.model_hash) != 0) return warn_of(warn, cap, path, "the model file could not be read");
    SpanWalk w = {0, sum_bytes(SUM_START, s->history, (uint64_t)n * sizeof(int32_t)), NULL, NULL, 0};
    seq_state_spans(&e->cfg, &s->seq, n, sum_span, &w);
    h.payload_bytes = w.bytes;
    h.checksum = w.sum;
    h.header_sum = header_sum(&h);
    PortAtomicFile f;
    char why[512];
    if (port_atomic_open(&f, path, why, sizeof why) != 0) {
        snprintf(warn, cap, "prompt cache not saved: %s", why);
        return 1;
    }
    w.out = &f;
    port_atomic_write(&f, &h, sizeof h);
    port_atomic_write(&f, s->history, (size_t)n * sizeof(int32_t));
    seq_state_spans(&e->cfg, &s->seq, n, write_span, &w);
    if (port_atomic_commit(&f, why, sizeof why) != 0) {
        snprintf(warn, cap, "prompt cache not saved: %s", why);
        return 1;
    }
    if (bytes) *bytes = sizeof h + (uint64_t)n * sizeof(int32_t) + h.payload_bytes;
    return 0;
}

/* What is wrong with the file f (of header h, read here) for slot s, or
 * NULL when s can load it. */
static const char *file_unfit(Engine *e, const Slot *s, PortFile *f, CacheHeader *h)
{
    CacheHeader want;
    uint64_t model = 0;
    if (f->size < sizeof *h || port_file_read(f, 0, h, sizeof *h) != 0) return "too short for a prompt cache";
    if (memcmp(h->magic, CACHE_MAGIC, 8) != 0) return "not a pith prompt cache";
    if (h->version != CACHE_VERSION) return "written by another version of pith";
    if (h->header_sum != header_sum(h)) return "its header is damaged";
    if (model_hash(e, &model) != 0 || h->model_hash != model) return "made with another model file";
    header_for(e, s, h->n_tokens, &want);
    SpanWalk size = {0, 0, NULL, NULL, 0};
    if (h->n_tokens >= 1 && h->n_tokens < e->n_ctx) seq_state_spans(&e->cfg, &s->seq, h->n_tokens, size_span, &size);
    if (h->kv_type != want.kv_type) return "made with another --kv-type";
    if (h->ring != want.ring || h->n_layer != want.n_layer || h->n_head_kv != want.n_head_kv ||
        h->head_dim != want.head_dim || h->head_dim_v != want.head_dim_v || h->recurrent_bytes != want.recurrent_bytes)
        return "made with another layout (-b or the model's shapes)";
    if (h->n_tokens < 1 || h->n_tokens >= e->n_ctx) return "holds more positions than the context (raise -c)";
    if (h->payload_bytes != size.bytes || f->size != sizeof *h + (uint64_t)h->n_tokens * 4 + size.bytes)
        return "truncated or of the wrong length";
    return NULL;
}

int slot_cache_load(Engine *e, Slot *s, const char *path, uint64_t *bytes, char *warn, size_t cap)
{
    PortFile f;
    char why[512];
    CacheHeader h;
    seq_reset(&s->seq);
    if (port_file_open(&f, path, 0, why, sizeof why) != 0) {
        snprintf(warn, cap, "prompt cache not read: %s; the prompt is computed", why);
        return 1;
    }
    int rc = 1;
    const char *bad = file_unfit(e, s, &f, &h);
    if (!bad) {
        SpanWalk w = {0, SUM_START, NULL, &f, sizeof h + (uint64_t)h.n_tokens * 4};
        if (port_file_read(&f, sizeof h, s->history, (size_t)h.n_tokens * 4) != 0) bad = "read error";
        for (uint32_t i = 0; !bad && i < h.n_tokens; i++)
            if (s->history[i] < 0 || (uint32_t)s->history[i] >= e->n_vocab) bad = "holds an id outside the vocabulary";
        if (!bad) {
            w.sum = sum_bytes(w.sum, s->history, (uint64_t)h.n_tokens * 4);
            if (seq_state_spans(&e->cfg, &s->seq, h.n_tokens, read_span, &w) != 0) bad = "read error";
            else if (w.sum != h.checksum) bad = "its contents are damaged (checksum)";
        }
        if (!bad) {
            s->seq.n_past = h.n_tokens;
            if (bytes) *bytes = f.size;
            rc = 0;
        }
    }
    port_file_close(&f);
    if (bad) {
        seq_reset(&s->seq);
        warn_of(warn, cap, path, bad);
    }
    return rc;
}

uint32_t slot_cache_common(Engine *e, const Slot *s, const char *path, const int32_t *ids, uint32_t n)
{
    PortFile f;
    char why[512];
    CacheHeader h;
    if (port_file_open(&f, path, 0, why, sizeof why) != 0) return 0;
    uint32_t k = 0;
    if (!file_unfit(e, s, &f, &h)) {
        int32_t piece[256];
        uint32_t end = h.n_tokens < n ? h.n_tokens : n;
        for (int differ = 0; !differ && k < end;) {
            uint32_t m = end - k < 256 ? end - k : 256;
            if (port_file_read(&f, sizeof h + (uint64_t)k * 4, piece, (size_t)m * 4) != 0) break;
            for (uint32_t i = 0; i < m && !differ; i++) differ = piece[i] != ids[k], k += !differ;
        }
    }
    port_file_close(&f);
    return k;
}

void slot_cache_file_name(Engine *e, const int32_t *ids, uint32_t n, char *out, size_t cap)
{
    uint64_t model = 0;
    model_hash(e, &model);
    uint64_t h = sum_bytes(sum_bytes(SUM_START, &model, sizeof model), ids, (uint64_t)n * sizeof *ids);
    snprintf(out, cap, "pith-%016llx.kv", (unsigned long long)h);
}
