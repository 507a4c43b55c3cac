/* fuzz_tokenizer - encoding arbitrary bytes and decoding arbitrary ids on
 * the Qwen3 vocabulary of the fixtures (tokenizer/qwen3-vocab.gguf; set
 * PITH_FIXTURES to find it elsewhere), and every pre-tokenizer of the
 * table alone. The first byte picks the mode:
 *   bit 2: split the rest (after a byte naming the table row) with that
 *          pre-tokenizer, by its hand-written splitters and by the matcher
 *   else bit 0: encode (0) or decode the rest as little-endian int32 ids (1)
 *   bit 1: parse special tokens when encoding
 * Properties: encoding never fails within the planned length; valid UTF-8
 * encoded without specials decodes back to the same bytes; decoding any
 * ids gives valid UTF-8 and never more than the planned bytes; the pieces of
 * a split are non-empty, in order and cover the text, and the splitters and
 * the matcher give the same pieces. */
#include "../../src/text/json.h"
#include "../../src/text/pretokenizer.h"
#include "../../src/text/tokenizer.h"

#include "fuzz_common.h"

#define MAX_TEXT 4096

static Tokenizer tok;
static Gguf g;
static int32_t ids[3 * MAX_TEXT + 1];
static char out[1 << 17];

static void load_once(void)
{
    static int loaded;
    if (loaded) return;
    loaded = 1;
    char path[1024];
    const char *dir = getenv("PITH_FIXTURES") ? getenv("PITH_FIXTURES") : "../shared/fixtures";
    snprintf(path, sizeof path, "%s/tokenizer/qwen3-vocab.gguf", dir);
    GgufError err;
    Plan plan;
    plan_init(&plan);
    if (gguf_open(&g, path, 1, NULL, &err) != 0) goto fail;
    gguf_plan(&g, &plan);
    if (tokenizer_plan(&g, MAX_TEXT, &plan, &err) != 0) goto fail;
    void *base = calloc(1, (size_t)plan.total);
    Arena a;
    arena_init(&a, base, plan.total);
    if (gguf_index(&g, &a, &err) != 0 || tokenizer_load(&tok, &g, MAX_TEXT, &a, &err) != 0) goto fail;
    if (token_stream_out_max(&tok) > sizeof out) {
        snprintf(err.msg, sizeof err.msg, "a token is longer than the decode buffer");
        goto fail;
    }
    return;
fail:
    fprintf(stderr, "fuzz_tokenizer: cannot load %s: %s\n", path, err.msg);
    abort();
}

static int valid_utf8(const uint8_t *s, size_t n)
{
    unsigned cp;
    for (size_t i = 0; i < n;) {
        int k = json_utf8_decode(s + i, n - i, &cp);
        if (k == 0) return 0;
        i += (size_t)k;
    }
    return 1;
}

static size_t decode(const int32_t *v, int n)
{
    TokenStream ts;
    token_stream_init(&ts);
    size_t len = 0;
    for (int i = 0; i < n; i++) {
        int k = token_stream_push(&ts, &tok, v[i], out + len, sizeof out - len);
        if (v[i] < 0 || v[i] >= tokenizer_n_vocab(&tok)) {
            FUZZ_ASSERT(k < 0, "an out-of-range id is refused");
            FUZZ_ASSERT(tokenizer_piece(&tok, v[i], &(size_t){0}) == NULL, "no piece for an out-of-range id");
            continue;
        }
        FUZZ_ASSERT(k >= 0, "an id in range decodes");
        len += (size_t)k;
        if (sizeof out - len < token_stream_out_max(&tok)) break;
    }
    int k = token_stream_flush(&ts, out + len, sizeof out - len);
    FUZZ_ASSERT(k >= 0, "flush");
    len += (size_t)k;
    FUZZ_ASSERT(valid_utf8((const uint8_t *)out, len), "streamed text is valid UTF-8");
    return len;
}

typedef struct {
    uint32_t ends[MAX_TEXT + 1];
    int n;
    size_t at;  /* end of the last piece */
} Pieces;

static int take_piece(void *ctx, size_t a, size_t b)
{
    Pieces *p = ctx;
    FUZZ_ASSERT(a == p->at && b > a, "pieces are non-empty and follow each other");
    FUZZ_ASSERT(p->n <= MAX_TEXT, "no more pieces than bytes");
    p->ends[p->n++] = (uint32_t)b;
    p->at = b;
    return 0;
}

static Pretokenizer fast, slow;
static Pieces by_fast, by_slow;

static void split_both(int row, const uint8_t *text, size_t size)
{
    row %= pretok_rows_count();
    FUZZ_ASSERT(pretok_compile(&fast, row, 1) == 0 && pretok_compile(&slow, row, 0) == 0, "every row compiles");
    by_fast.n = by_slow.n = 0, by_fast.at = by_slow.at = 0;
    FUZZ_ASSERT(pretok_split(&fast, text, 0, size, take_piece, &by_fast) == 0, "split");
    FUZZ_ASSERT(pretok_split(&slow, text, 0, size, take_piece, &by_slow) == 0, "split by the matcher");
    FUZZ_ASSERT(by_fast.at == size, "the pieces cover the text");
    FUZZ_ASSERT(by_fast.n == by_slow.n && memcmp(by_fast.ends, by_slow.ends, (size_t)by_fast.n * 4) == 0,
                "the hand-written splitters give the matcher's pieces");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    load_once();
    if (size < 1) return 0;
    int mode = data[0];
    data++, size--;
    if (size > MAX_TEXT) size = MAX_TEXT;
    if (mode & 4) {
        if (size >= 1) split_both(data[0], data + 1, size - 1);
        return 0;
    }
    if ((mode & 1) == 0) {
        int parse_special = (mode >> 1) & 1;
        int n = tokenizer_encode(&tok, (const char *)data, size, parse_special, ids, 3 * MAX_TEXT + 1);
        FUZZ_ASSERT(n >= 0 && (size_t)n <= 3 * size + 1, "encoding fits its bound");
        for (int i = 0; i < n; i++) FUZZ_ASSERT(ids[i] >= 0 && ids[i] < tokenizer_n_vocab(&tok), "ids in range");
        if (!parse_special && valid_utf8(data, size)) {
            size_t len = decode(ids, n);
            FUZZ_ASSERT(len == size && memcmp(out, data, size) == 0, "valid UTF-8 round-trips through encode/decode");
        }
    } else {
        int n = (int)(size / 4);
        for (int i = 0; i < n; i++) {
            uint32_t u = (uint32_t)data[4 * i] | (uint32_t)data[4 * i + 1] << 8 | (uint32_t)data[4 * i + 2] << 16 |
                         (uint32_t)data[4 * i + 3] << 24;
            /* mostly ids in range, sometimes anything */
            ids[i] = (mode & 2) ? (int32_t)u : (int32_t)(u % (uint32_t)tokenizer_n_vocab(&tok));
        }
        decode(ids, n);
    }
    return 0;
}
