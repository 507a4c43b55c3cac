/* fuzz_model - model configuration, tensor binding and the tokenizer's
 * tables from arbitrary GGUF bytes, as `pith run` loads them: gguf_open,
 * model_read_config, model_check_options, plans, gguf_index, model_load,
 * tokenizer_load; then a few forward steps, a context shift and a short
 * encode/decode when everything loaded. Seeds are tiny valid models, so
 * mutations reach the shape and metadata checks. */
#include <math.h>

#include "../../src/model/context_shift.h"
#include "../../src/model/forward.h"
#include "../../src/gguf/gguf.h"
#include "../../src/model/model.h"
#include "../../src/text/tokenizer.h"

#include "fuzz_common.h"

#define MAX_ARENA ((uint64_t)128 << 20)
#define MAX_TEXT 64

static void check_error(const GgufError *err)
{
    FUZZ_ASSERT(err->msg[0] != '\0', "an error has a message");
    FUZZ_ASSERT(strchr(err->msg, '\n') == NULL, "one-line error");
}

static void run(const char *path, int use_mmap)
{
    static Gguf g;
    static Model m;
    static SeqState seq;
    static Workspace ws;
    static Tokenizer tok;
    GgufError err;
    memset(&err, 0, sizeof err);
    if (gguf_open(&g, path, use_mmap, NULL, &err) != 0) return;
    ModelConfig cfg;
    ModelOptions opt;
    memset(&opt, 0, sizeof opt);
    int have_tok = 0;
    if (model_read_config(&g, &cfg, &err) != 0) {
        check_error(&err);
        goto done;
    }
    opt.n_ctx = cfg.n_ctx_train < 8 ? cfg.n_ctx_train : 8;
    opt.kv_type = (cfg.n_layer & 1) ? KV_F16 : KV_F32;
    opt.batch = 4;
    opt.all_logits = 0;
    if (model_check_options(&cfg, &opt, &err) != 0) {
        check_error(&err);
        goto done;
    }
    Plan plan;
    plan_init(&plan);
    gguf_plan(&g, &plan);
    forward_plan(&cfg, &opt, &plan);
    if (tokenizer_plan(&g, MAX_TEXT, &plan, &err) == 0) have_tok = 1;
    else check_error(&err);
    if (plan.overflow || plan.total > MAX_ARENA) goto done;
    void *base = calloc(1, plan.total ? (size_t)plan.total : 1);
    Arena arena;
    arena_init(&arena, base, plan.total);
    if (gguf_index(&g, &arena, &err) != 0 || model_load(&m, &g, &arena, &cfg, &opt, &err) != 0 ||
        seq_init(&seq, &cfg, &opt, &arena) != 0 || workspace_init(&ws, &m, &opt, &arena, &err) != 0) {
        check_error(&err);
        free(base);
        goto done;
    }
    if (have_tok && tokenizer_load(&tok, &g, MAX_TEXT, &arena, &err) != 0) {
        check_error(&err);
        have_tok = 0;
    }
    FUZZ_ASSERT(arena.used <= arena.size, "loads within the plan");
    /* Forward steps bounded by the file's own size (every weight is in it). */
    int32_t toks[8];
    for (uint32_t i = 0; i < 8; i++) toks[i] = (int32_t)((i * 7919u) % cfg.n_vocab);
    FUZZ_ASSERT(forward_prompt(&m, &ws, &seq, toks, (int)opt.n_ctx) == 0, "a valid prompt runs");
    uint32_t drop = context_shift_amount(seq.n_past, 1);
    if (drop) FUZZ_ASSERT(context_shift(&m, &seq, 1, drop, ws.err, sizeof ws.err) == 0, "a context shift runs");
    FUZZ_ASSERT(forward_batch(&m, &ws, &seq, toks, 1, seq.n_past, 0) == 0, "a token after the shift runs");
    int32_t bad = (int32_t)cfg.n_vocab;
    FUZZ_ASSERT(forward_batch(&m, &ws, &seq, &bad, 1, seq.n_past, 0) != 0, "an out-of-range token is refused");
    if (have_tok) {
        int32_t ids[3 * MAX_TEXT + 1];
        const char text[] = "Hello <|im_start|>world \xff\xfe caf\xc3\xa9";
        int n = tokenizer_encode(&tok, text, sizeof text - 1, 1, ids, 3 * MAX_TEXT + 1);
        FUZZ_ASSERT(n >= 0, "a short text encodes");
        char out[1 << 16];
        TokenStream ts;
        token_stream_init(&ts);
        if (token_stream_out_max(&tok) <= sizeof out)
            for (int i = 0; i < n; i++) FUZZ_ASSERT(token_stream_push(&ts, &tok, ids[i], out, sizeof out) >= 0, "decode");
    }
    free(base);
done:
    gguf_close(&g);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_write_temp("model", data, size);
    run(path, size & 1);
    return 0;
}
