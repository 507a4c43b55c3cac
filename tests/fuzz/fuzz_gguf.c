/* fuzz_gguf - the GGUF reader on arbitrary bytes, both backends:
 * gguf_open (pass 1), gguf_walk with callbacks that read every string,
 * gguf_plan, gguf_index (pass 2) in an arena of exactly the planned size,
 * then every lookup and tensor byte range. Errors must be one line naming
 * the file; nothing may read outside the file or the arena. */
#include "../../src/gguf/gguf.h"

#include "fuzz_common.h"

#define MAX_ARENA ((uint64_t)64 << 20)

static volatile uint8_t sink; /* keeps the byte reads */

static int on_kv(void *ctx, Gguf *g, const GgufKV *kv, GgufError *err)
{
    (void)ctx, (void)err;
    char buf[64];
    if (kv->type == GGUF_TYPE_STRING) FUZZ_ASSERT(gguf_kv_string(g, kv, buf, sizeof buf) == (int64_t)kv->arr_len, "string length");
    FUZZ_ASSERT(strlen(kv->key) == kv->key_len && kv->key_len >= 1, "key length");
    return 0;
}

static int on_tensor(void *ctx, Gguf *g, const GgufTensor *t, GgufError *err)
{
    (void)ctx, (void)g, (void)err;
    FUZZ_ASSERT(t->n_dims >= 1 && t->n_dims <= GGUF_MAX_DIMS, "tensor dims");
    FUZZ_ASSERT(t->offset + t->n_bytes <= g->files[t->file_index].size, "tensor inside its file");
    return 0;
}

static void check_error(const GgufError *err, const char *path)
{
    FUZZ_ASSERT(strchr(err->msg, '\n') == NULL, "one-line error");
    FUZZ_ASSERT(strncmp(err->msg, path, strlen(path)) == 0, "error names the file");
}

static void one_backend(const char *path, int use_mmap)
{
    static Gguf g;
    GgufError err;
    memset(&err, 0, sizeof err);
    GgufScanCallbacks cb = {on_kv, on_tensor, NULL};
    if (gguf_open(&g, path, use_mmap, &cb, &err) != 0) {
        check_error(&err, path);
        return;
    }
    if (gguf_walk(&g, &cb, &err) != 0) FUZZ_ASSERT(0, "a second walk of an opened file fails");
    Plan plan;
    plan_init(&plan);
    gguf_plan(&g, &plan);
    if (!plan.overflow && plan.total <= MAX_ARENA) {
        void *base = malloc(plan.total ? (size_t)plan.total : 1);
        Arena arena;
        arena_init(&arena, base, plan.total);
        memset(base, 0, (size_t)plan.total);
        if (gguf_index(&g, &arena, &err) == 0) {
            FUZZ_ASSERT(arena.used <= arena.size, "index within its plan");
            for (uint64_t i = 0; i < g.sizes.n_kv; i++) {
                const GgufKV *kv = &g.kvs[i];
                FUZZ_ASSERT(gguf_find_key(&g, kv->key) != NULL, "every key can be found");
                uint64_t u;
                double f;
                int b;
                char s[32];
                (void)gguf_get_uint(&g, kv->key, &u);
                (void)gguf_get_float(&g, kv->key, &f);
                (void)gguf_get_bool(&g, kv->key, &b);
                (void)gguf_get_string(&g, kv->key, s, sizeof s);
                uint64_t n = kv->value_end - kv->value_offset;
                if (n <= (1u << 20)) {
                    void *buf = malloc(n ? n : 1);
                    const uint8_t *p = gguf_value_bytes(&g, kv, buf);
                    for (uint64_t k = 0; p && k < n; k++) sink ^= p[k];
                    free(buf);
                }
            }
            for (uint64_t i = 0; i < g.sizes.n_tensors; i++) {
                const GgufTensor *t = &g.tensors[i];
                FUZZ_ASSERT(gguf_find_tensor(&g, t->name) == t, "every tensor can be found by name");
                if (t->n_bytes <= (1u << 20)) {
                    void *buf = malloc(t->n_bytes ? t->n_bytes : 1);
                    const uint8_t *p = gguf_tensor_bytes(&g, t, buf);
                    for (uint64_t k = 0; p && k < t->n_bytes; k++) sink ^= p[k];
                    free(buf);
                }
            }
            (void)gguf_find_key(&g, "general.architecture");
            (void)gguf_find_tensor(&g, "token_embd.weight");
        } else {
            check_error(&err, path);
        }
        free(base);
    }
    gguf_close(&g);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_write_temp("gguf", data, size);
    one_backend(path, 1);
    one_backend(path, 0);
    return 0;
}
