/* test_tokenizer.c - both tokenizer models against llama.cpp's ids.
 *
 * Every test vector of tokenizer/tests.tsv (ggml-vocab-qwen2.gguf,
 * qwen3-vocab.gguf and the llama SPM vocabulary) in both file backends, the
 * chat renderings of chat/, the text prompts of the stories260K cases,
 * decoding round trips, the streaming decoder, random bytes, the
 * pre-tokenizers' splits on hand-derived examples, and small hand-made GGUF
 * files (byte-level BPE, SPM, gemma4) for merge order, score order, byte
 * fallback and the validation errors. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../port/port.h"
#include "../src/arena/arena.h"
#include "../src/gguf/gguf.h"
#include "../src/text/pretokenizer.h"
#include "../src/text/tokenizer.h"
#include "../src/text/unicode.h"
#include "check.h"
#include "tools/test_rng.h"

#define MAX_TEXT 65536
#define MAX_IDS (3 * MAX_TEXT + 1)

typedef struct {
    Gguf g;
    Tokenizer t;
    void *base;
    uint64_t size;
    char err[600];
} Loaded;

static char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    if (fread(buf, 1, (size_t)n, f) != (size_t)n) n = 0;
    buf[n] = '\0';
    fclose(f);
    *len = (size_t)n;
    return buf;
}

/* Opens, plans, maps and loads; returns 0 or -1 with l->err. */
static int load(Loaded *l, const char *path, int use_mmap, uint64_t max_text)
{
    GgufError err;
    memset(l, 0, sizeof *l);
    if (gguf_open(&l->g, path, use_mmap, NULL, &err) != 0) goto fail;
    Plan plan;
    plan_init(&plan);
    gguf_plan(&l->g, &plan);
    if (tokenizer_plan(&l->g, max_text, &plan, &err) != 0) goto fail_close;
    l->size = plan.total;
    l->base = port_arena_map((size_t)plan.total);
    Arena a;
    arena_init(&a, l->base, plan.total);
    if (gguf_index(&l->g, &a, &err) != 0) goto fail_unmap;
    if (tokenizer_load(&l->t, &l->g, max_text, &a, &err) != 0) goto fail_unmap;
    if (a.used > plan.total) {
        snprintf(err.msg, sizeof err.msg, "arena overrun");
        goto fail_unmap;
    }
    return 0;
fail_unmap:
    port_arena_unmap(l->base, (size_t)l->size);
    l->base = NULL;
fail_close:
    gguf_close(&l->g);
fail:
    snprintf(l->err, sizeof l->err, "%s", err.msg);
    return -1;
}

static void unload(Loaded *l)
{
    if (!l->base) return;
    gguf_close(&l->g);
    port_arena_unmap(l->base, (size_t)l->size);
    l->base = NULL;
}

/* Decoded pieces of ids, concatenated. */
static size_t decode_all(const Tokenizer *t, const int32_t *ids, int n, char *out, size_t cap)
{
    size_t o = 0;
    for (int i = 0; i < n; i++) {
        size_t pl;
        const char *p = tokenizer_piece(t, ids[i], &pl);
        if (!p || o + pl > cap) return (size_t)-1;
        memcpy(out + o, p, pl);
        o += pl;
    }
    return o;
}

static int valid_utf8(const char *s, size_t n)
{
    for (size_t i = 0; i < n;) {
        int l = utf8_strict_len((const uint8_t *)s + i, n - i);
        if (l <= 0) return 0;
        i += (size_t)l;
    }
    return 1;
}

/* Streams ids through TokenStream; checks every push is valid UTF-8 and
 * returns the whole output. */
static size_t stream_all(const Tokenizer *t, const int32_t *ids, int n, char *out, size_t cap, int *all_valid)
{
    TokenStream s;
    token_stream_init(&s);
    size_t o = 0, step_cap = token_stream_out_max(t);
    char *step = malloc(step_cap);
    *all_valid = 1;
    for (int i = 0; i <= n; i++) {
        int k = i < n ? token_stream_push(&s, t, ids[i], step, step_cap) : token_stream_flush(&s, step, step_cap);
        if (k < 0 || o + (size_t)k > cap) {
            free(step);
            *all_valid = 0;
            return (size_t)-1;
        }
        if (!valid_utf8(step, (size_t)k)) *all_valid = 0;
        memcpy(out + o, step, (size_t)k);
        o += (size_t)k;
    }
    free(step);
    return o;
}

/* Parses " 1 2 3" or "1,2,3" into ids. */
static int parse_ids(const char *s, int32_t *ids, int cap)
{
    int n = 0;
    while (*s) {
        while (*s == ' ' || *s == ',' || *s == '\n' || *s == '\r') s++;
        if (!*s) break;
        char *end;
        long v = strtol(s, &end, 10);
        if (end == s || n == cap) return -1;
        ids[n++] = (int32_t)v;
        s = end;
    }
    return n;
}

static int same_ids(const int32_t *a, int na, const int32_t *b, int nb)
{
    return na == nb && (na == 0 || memcmp(a, b, (size_t)na * 4) == 0);
}

static int32_t ids[MAX_IDS], want[MAX_IDS];
static char buf[4 * MAX_TEXT], buf2[4 * MAX_TEXT];

/* One line of tokenizer/tests.tsv, in one backend. */
static void run_vector(const char *fix, const char *vocab, const char *inp, const char *outf, int use_mmap)
{
    const char *mode = use_mmap ? "mmap" : "read";
    char path[1024];
    snprintf(path, sizeof path, "%s/tokenizer/%s", fix, vocab);
    Loaded l;
    int ok = load(&l, path, use_mmap, MAX_TEXT) == 0;
    CHECK(ok, "%s (%s): loads (%s)", vocab, mode, ok ? "" : l.err);
    if (!ok) return;
    size_t in_len, out_len;
    snprintf(path, sizeof path, "%s/tokenizer/%s", fix, inp);
    char *in = read_file(path, &in_len);
    snprintf(path, sizeof path, "%s/tokenizer/%s", fix, outf);
    char *out = read_file(path, &out_len);
    CHECK(in && out, "%s: test vector files readable", vocab);
    if (!in || !out) return;
    const char *sep = "\n__ggml_vocab_test__\n";
    char *p = in, *line = out;
    int n_case = 0, n_fail = 0;
    while (p < in + in_len) {
        char *e = strstr(p, sep);
        if (!e) break;
        char *nl = strchr(line, '\n');
        if (!nl) break;
        *nl = '\0';
        int nw = parse_ids(line, want, MAX_IDS);
        int n = tokenizer_encode(&l.t, p, (size_t)(e - p), 1, ids, MAX_IDS);
        int good = nw >= 0 && same_ids(ids, n, want, nw);
        n_fail += !good;
        CHECK(good, "%s (%s) case %d: ids equal llama.cpp's (%d vs %d ids)", vocab, mode, n_case, n, nw);
        /* decoding llama.cpp's ids gives back the text (these inputs are valid
         * UTF-8), after the space SPM puts in front of a non-empty text */
        size_t tl = (size_t)(e - p), pre = l.t.add_space_prefix && tl > 0 ? 1 : 0;
        size_t dl = decode_all(&l.t, want, nw, buf, sizeof buf);
        CHECK(dl == tl + pre && (!pre || buf[0] == ' ') && memcmp(buf + pre, p, tl) == 0,
              "%s (%s) case %d: pieces decode to the text", vocab, mode, n_case);
        int all_valid;
        size_t sl = stream_all(&l.t, want, nw, buf2, sizeof buf2, &all_valid);
        CHECK(sl == tl + pre && (!pre || buf2[0] == ' ') && memcmp(buf2 + pre, p, tl) == 0 && all_valid,
              "%s (%s) case %d: streaming decoder gives the text in valid UTF-8 steps", vocab, mode, n_case);
        n_case++;
        p = e + strlen(sep);
        line = nl + 1;
    }
    CHECK(n_case == 46, "%s (%s): all 46 cases run (%d, %d failed)", vocab, mode, n_case, n_fail);
    free(in);
    free(out);
    unload(&l);
}

static void run_vectors(const char *fix)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/tokenizer/tests.tsv", fix);
    size_t len;
    char *tsv = read_file(path, &len);
    CHECK(tsv != NULL, "tokenizer/tests.tsv readable");
    if (!tsv) return;
    int n_vec = 0;
    for (char *line = strtok(tsv, "\n"); line; line = strtok(NULL, "\n")) {
        char vocab[256], inp[256], outf[256];
        if (sscanf(line, "%255[^\t]\t%255[^\t]\t%255[^\t]", vocab, inp, outf) != 3) continue;
        if (strcmp(vocab, "vocab_file") == 0) continue; /* the header */
        n_vec++;
        char v[256], i[256], o[256];
        strcpy(v, vocab), strcpy(i, inp), strcpy(o, outf);
        run_vector(fix, v, i, o, 1);
        run_vector(fix, v, i, o, 0);
    }
    CHECK(n_vec == 3, "tests.tsv lists 3 vectors, all run (qwen2, qwen3, llama SPM: %d)", n_vec);
    free(tsv);
}

static void run_chat(const char *fix, Loaded *l)
{
    const char *cases[] = {"pub_chat_single_user", "pub_chat_system_user_nothink", "pub_chat_multi_turn_think",
                           "pub_chat_history_with_reasoning_nothink", "pub_chat_no_generation_prompt"};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        char path[1024];
        size_t tl, il;
        snprintf(path, sizeof path, "%s/chat/%s.txt", fix, cases[c]);
        char *txt = read_file(path, &tl);
        snprintf(path, sizeof path, "%s/chat/%s.ids", fix, cases[c]);
        char *idt = read_file(path, &il);
        CHECK(txt && idt, "chat %s: files readable", cases[c]);
        if (!txt || !idt) continue;
        int nw = parse_ids(idt, want, MAX_IDS);
        int n = tokenizer_encode(&l->t, txt, tl, 1, ids, MAX_IDS);
        CHECK(nw > 0 && same_ids(ids, n, want, nw), "chat %s: ids equal llama.cpp's (%d vs %d)", cases[c], n, nw);
        size_t dl = decode_all(&l->t, ids, n, buf, sizeof buf);
        CHECK(dl == tl && memcmp(buf, txt, tl) == 0, "chat %s: decodes back to the text", cases[c]);
        free(txt);
        free(idt);
    }
}

/* The same invalid-byte rule as the tokenizer, written independently: a byte
 * that does not start lead+continuations (<= U+10FFFF) becomes EF BF BD. */
static size_t replace_invalid(const uint8_t *s, size_t n, uint8_t *out)
{
    size_t o = 0;
    for (size_t i = 0; i < n;) {
        int len = s[i] < 0x80 ? 1 : s[i] >= 0xC0 && s[i] < 0xE0 ? 2 : s[i] >= 0xE0 && s[i] < 0xF0 ? 3
                                 : s[i] >= 0xF0 && s[i] < 0xF8 ? 4 : 0;
        int ok = len > 0 && i + (size_t)len <= n;
        for (int k = 1; ok && k < len; k++) ok = (s[i + k] & 0xC0) == 0x80;
        if (ok && len == 4) {
            uint32_t cp = (uint32_t)(s[i] & 7) << 18 | (uint32_t)(s[i + 1] & 63) << 12 | (uint32_t)(s[i + 2] & 63) << 6 |
                          (s[i + 3] & 63);
            ok = cp <= 0x10FFFF;
        }
        if (!ok) {
            memcpy(out + o, "\xEF\xBF\xBD", 3), o += 3, i++;
        } else {
            memcpy(out + o, s + i, (size_t)len), o += (size_t)len, i += (size_t)len;
        }
    }
    return o;
}

static void run_qwen3_specifics(Loaded *l)
{
    Tokenizer *t = &l->t;
    CHECK(tokenizer_n_vocab(t) == 151936, "qwen3: n_vocab 151936");
    CHECK(tokenizer_bos(t) == 151643 && tokenizer_eos(t) == 151645, "qwen3: bos 151643, eos 151645");
    CHECK(tokenizer_find(t, "<|im_start|>") == 151644 && tokenizer_find(t, "<think>") == 151667 &&
              tokenizer_find(t, "</think>") == 151668 && tokenizer_find(t, "no such token") == -1,
          "qwen3: tokenizer_find");
    /* llama.cpp's end-of-generation set (fixtures README, "Special ids") */
    int32_t eog[] = {128247, 151643, 151645, 151662, 151663, 151664};
    int n_eog = 0, all = 1;
    for (int32_t id = 0; id < tokenizer_n_vocab(t); id++)
        if (tokenizer_is_eog(t, id)) {
            int found = 0;
            for (size_t k = 0; k < sizeof eog / sizeof eog[0]; k++) found |= eog[k] == id;
            all &= found;
            n_eog++;
        }
    CHECK(n_eog == 6 && all, "qwen3: end-of-generation set is llama.cpp's (%d tokens)", n_eog);
    CHECK(!tokenizer_is_eog(t, -1) && !tokenizer_is_eog(t, 151936), "qwen3: is_eog refuses out-of-range ids");

    /* parse_special off: control tokens are plain text, user-defined ones still match */
    const char *s1 = "<|im_start|>";
    int n = tokenizer_encode(t, s1, strlen(s1), 0, ids, MAX_IDS);
    CHECK(n > 1, "qwen3: --no-special leaves <|im_start|> as text (%d ids)", n);
    size_t dl = decode_all(t, ids, n, buf, sizeof buf);
    CHECK(dl == strlen(s1) && memcmp(buf, s1, dl) == 0, "qwen3: ... and it decodes back");
    const char *s2 = "a<think>b";
    n = tokenizer_encode(t, s2, strlen(s2), 0, ids, MAX_IDS);
    CHECK(n == 3 && ids[1] == 151667, "qwen3: user-defined <think> matches even without parse_special");

    /* out-of-range ids are refused */
    size_t pl;
    CHECK(tokenizer_piece(t, -1, &pl) == NULL && tokenizer_piece(t, 151936, &pl) == NULL &&
              tokenizer_piece(t, INT32_MAX, &pl) == NULL,
          "qwen3: tokenizer_piece refuses out-of-range ids");
    TokenStream ts;
    token_stream_init(&ts);
    char step[4096];
    CHECK(token_stream_push(&ts, t, 151936, step, sizeof step) == -1 && token_stream_push(&ts, t, -5, step, sizeof step) == -1,
          "qwen3: token_stream_push refuses out-of-range ids");

    /* an emoji split over its byte tokens: nothing until the last byte */
    const uint8_t llama[] = {0xF0, 0x9F, 0xA6, 0x99};
    int32_t bt[4];
    for (int i = 0; i < 4; i++) bt[i] = t->byte_token[llama[i]];
    int k0 = token_stream_push(&ts, t, bt[0], step, sizeof step);
    int k1 = token_stream_push(&ts, t, bt[1], step, sizeof step);
    int k2 = token_stream_push(&ts, t, bt[2], step, sizeof step);
    int k3 = token_stream_push(&ts, t, bt[3], step, sizeof step);
    CHECK(k0 == 0 && k1 == 0 && k2 == 0 && k3 == 4 && memcmp(step, llama, 4) == 0,
          "stream: emoji from 4 byte tokens comes out whole, once (%d %d %d %d)", k0, k1, k2, k3);
    /* text then half a character, then the end: U+FFFD, never a broken byte */
    int32_t half[3] = {tokenizer_find(t, "Hi"), t->byte_token[0xE2], t->byte_token[0x82]};
    int all_valid;
    size_t sl = stream_all(t, half, 3, buf2, sizeof buf2, &all_valid);
    CHECK(sl == 2 + 6 && memcmp(buf2, "Hi\xEF\xBF\xBD\xEF\xBF\xBD", 8) == 0 && all_valid,
          "stream: a truncated character is flushed as U+FFFD");
    int32_t bad[3] = {t->byte_token[0xFF], t->byte_token['a'], t->byte_token[0xC0]};
    sl = stream_all(t, bad, 3, buf2, sizeof buf2, &all_valid);
    CHECK(sl == 7 && memcmp(buf2, "\xEF\xBF\xBD" "a\xEF\xBF\xBD", 7) == 0 && all_valid,
          "stream: invalid bytes come out as U+FFFD");
    /* mixed: a token whose piece ends with a lead byte, then continuation */
    int32_t mix[3] = {tokenizer_find(t, "ab"), t->byte_token[0xC3], t->byte_token[0xA9]};
    sl = stream_all(t, mix, 3, buf2, sizeof buf2, &all_valid);
    CHECK(sl == 4 && memcmp(buf2, "ab\xC3\xA9", 4) == 0 && all_valid, "stream: e-acute split across tokens");

    /* invalid UTF-8 is read as U+FFFD, like llama.cpp */
    const char *inv = "a\xFF" "b";
    n = tokenizer_encode(t, inv, 3, 1, ids, MAX_IDS);
    const char *rep = "a\xEF\xBF\xBD" "b";
    int32_t ids2[16];
    int n2 = tokenizer_encode(t, rep, strlen(rep), 1, ids2, 16);
    CHECK(n > 0 && same_ids(ids, n, ids2, n2), "invalid byte encodes as U+FFFD");

    /* limits */
    CHECK(tokenizer_encode(t, "hello world", 11, 1, ids, 1) == -1, "encode: cap too small is refused");
    static char big[MAX_TEXT + 1];
    memset(big, 'a', sizeof big);
    CHECK(tokenizer_encode(t, big, sizeof big, 1, ids, MAX_IDS) == -1, "encode: text longer than planned is refused");
    n = tokenizer_encode(t, big, MAX_TEXT, 1, ids, MAX_IDS);
    dl = decode_all(t, ids, n, buf, sizeof buf);
    CHECK(n > 0 && dl == MAX_TEXT && memcmp(buf, big, dl) == 0, "encode: a 64 KiB single word round-trips (%d ids)", n);
    n = tokenizer_encode(t, "", 0, 1, ids, MAX_IDS);
    CHECK(n == 0, "encode: empty text gives no ids");

    /* random bytes: NULs, invalid UTF-8, specials pieces; no crash, round trip with U+FFFD */
    uint64_t seed = 12345;
    int rt_ok = 1, cap_ok = 1;
    static uint8_t rnd[4096], expect[3 * 4096];
    const char *frag[] = {"<|im_start|>", "<think>", " ", "\n", "\r\n", "'s", "123", "é", "\xF0\x9F\xA6\x99", "\xE2\x80"};
    for (int iter = 0; iter < 300; iter++) {
        size_t len = 0, want_len = (size_t)(iter * 13 % 4000);
        while (len < want_len) {
            seed = seed * 6364136223846793005ull + 1442695040888963407ull;
            uint32_t r = (uint32_t)(seed >> 33);
            if (r % 5 == 0) {
                const char *f = frag[(r / 5) % (sizeof frag / sizeof frag[0])];
                size_t fl = strlen(f);
                if (len + fl > want_len) break;
                memcpy(rnd + len, f, fl), len += fl;
            } else rnd[len++] = (uint8_t)(iter % 2 ? r >> 8 : (r >> 8) % 128);
        }
        n = tokenizer_encode(t, (const char *)rnd, len, 1, ids, MAX_IDS);
        if (n < 0 || n > (int)(3 * len + 1)) {
            cap_ok = 0;
            continue;
        }
        size_t el = replace_invalid(rnd, len, expect);
        dl = decode_all(t, ids, n, buf, sizeof buf);
        if (dl != el || memcmp(buf, expect, el) != 0) rt_ok = 0;
    }
    CHECK(cap_ok, "random bytes: encode succeeds within 3*len+1 ids");
    CHECK(rt_ok, "random bytes: decoding gives the text with invalid bytes as U+FFFD");
}

/* ---- pre-tokenizers: hand-derived splits ---------------------------------- */

typedef struct {
    const char *pre;
    const char *text;
    const char *pieces[12]; /* the expected pieces in order, NULL-terminated */
    const char *why;
} SplitCase;

static const SplitCase split_cases[] = {
    /* llama-bpe: the llama3 regex with \p{N}{1,3} */
    {"llama-bpe", "I'M here", {"I", "'M", " here", NULL},
     "contractions are case-insensitive (?i:'m); a space joins the letters after it"},
    {"llama-bpe", "1234567", {"123", "456", "7", NULL}, "digits go in groups of at most 3, from the left"},
    {"llama-bpe", "a  b", {"a", " ", " b", NULL},
     "\\s+(?!\\S) gives back the last space of a run, which then starts ' b'"},
    {"llama-bpe", "x\n\ny", {"x", "\n\n", "y", NULL}, "\\s*[\\r\\n]+ takes a run of newlines whole"},
    {"llama-bpe", "hi!!\n\nthere", {"hi", "!!\n\n", "there", NULL}, "punctuation keeps the newlines after it"},
    {"llama-bpe", "  \n x", {"  \n", " x", NULL}, "\\s*[\\r\\n]+ stops at the last newline of the run"},
    {"llama-bpe", "\xD0\x9F\xD1\x80\xD0\xB8\xD0\xB2\xD0\xB5\xD1\x82 \xD0\xBC\xD0\xB8\xD1\x80",
     {"\xD0\x9F\xD1\x80\xD0\xB8\xD0\xB2\xD0\xB5\xD1\x82", " \xD0\xBC\xD0\xB8\xD1\x80", NULL},
     "Cyrillic letters are \\p{L}"},
    {"llama-bpe", "$100", {"$", "100", NULL}, "[^\\r\\n\\p{L}\\p{N}]?\\p{L}+ needs a letter; '$' is punctuation alone"},
    {"llama-bpe", "don't", {"don", "'t", NULL}, "the contraction 't splits off"},
    {"llama-bpe", "end  ", {"end", "  ", NULL}, "trailing spaces stay together at the end of the text"},
    /* gpt-2: ' ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)', case-sensitive */
    {"gpt-2", "I'M here", {"I", "'", "M", " here", NULL}, "'M is not a (lowercase) contraction: ' is punctuation"},
    {"gpt-2", "1234567", {"1234567", NULL}, "\\p{N}+ has no length limit"},
    {"gpt-2", "a  b", {"a", " ", " b", NULL}, "\\s+(?!\\S) leaves the last space for ' b'"},
    {"gpt-2", "x\n\ny", {"x", "\n", "\n", "y", NULL},
     "no newline rule: \\s+(?!\\S) takes all but the last, which is alone (only ' ' joins a word)"},
    {"gpt-2", "hi!!\n\nthere", {"hi", "!!", "\n", "\n", "there", NULL}, "punctuation does not take newlines"},
    {"gpt-2", " 42 apples", {" 42", " apples", NULL}, "a space joins the digits or letters after it"},
    {"gpt-2", "a\tb", {"a", "\t", "b", NULL}, "a tab is not the optional space: it is a piece alone"},
    {"gpt-2", "end  ", {"end", "  ", NULL}, "trailing spaces stay together at the end of the text"},
    /* smollm: "\p{N}" first (every digit alone), then the gpt-2 regex in each piece */
    {"smollm", "Hello world! 123", {"Hello", " world", "!", " ", "1", "2", "3", NULL},
     "the space before a digit ends its piece, so it cannot join the digit"},
    {"smollm", "a1b", {"a", "1", "b", NULL}, "a digit cuts a word"},
    {"smollm", "  multiple   spaces", {" ", " multiple", "  ", " spaces", NULL}, "runs of spaces as in gpt-2"},
    {"smollm", "I'm", {"I", "'m", NULL}, "lowercase contraction"},
    {"smollm", "\xD9\xA3" "4", {"\xD9\xA3", "4", NULL}, "ARABIC-INDIC DIGIT THREE is \\p{N}: alone too"},
    /* qwen2: as llama-bpe with \p{N} one digit at a time */
    {"qwen2", "1234", {"1", "2", "3", "4", NULL}, "one digit per piece"},
    {"qwen2", "I'M", {"I", "'M", NULL}, "case-insensitive contraction"},
    /* gpt-4o (o200k) as llama.cpp runs it: ASCII capitals then lowercase,
     * non-ASCII letters of either case, contractions at the word's end */
    {"gpt-4o", "HelloWorld", {"Hello", "World", NULL}, "a capital after lowercase starts a word"},
    {"gpt-4o", "XMLHttpRequest", {"XMLHttp", "Request", NULL}, "capitals run into the lowercase after them"},
    {"gpt-4o", "ABC def", {"ABC", " def", NULL}, "capitals alone are a word (the second alternative)"},
    {"gpt-4o", "I'M don't", {"I'M", " don't", NULL}, "a contraction in any case stays on its word"},
    {"gpt-4o", "\xC3\x89" "COLE", {"\xC3\x89", "COLE", NULL},
     "a non-ASCII letter has no case: E-acute is the word's lowercase part, so the capitals after it split"},
    {"gpt-4o", "AB\xC3\x89" "CD", {"AB\xC3\x89", "CD", NULL}, "backtracking to the last non-ASCII letter of the capitals"},
    {"gpt-4o", "e\xCC\x81t\xC3\xA9", {"e", "\xCC\x81t\xC3\xA9", NULL},
     "a combining mark is not part of a word: it is the prefix of the next one"},
    {"gpt-4o", "12345", {"123", "45", NULL}, "digits go in groups of at most 3"},
    {"gpt-4o", "!\n/x a/b", {"!\n/", "x", " a", "/b", NULL}, "punctuation takes the newlines and slashes after it"},
    {"gpt-4o", "x  \n\ny  z", {"x", "  \n\n", "y", " ", " z", NULL}, "whitespace as in the llama3 regex"},
    /* pre-tokenizers run by the general matcher alone */
    {"falcon", "a+=b!? 1234", {"a", "+=", "b", "!?", " ", "123", "4", NULL},
     "falcon: punctuation and symbol runs first, then GPT-2's split, then three digits"},
    {"default", "x<=1234567", {"x", "<=", "123", "456", "7", NULL}, "default: \\p{N}+ then [0-9]{3} groups"},
    {"deepseek-llm", "Hi \xC3\xA9t\xC3\xA9  \n\xE4\xB8\xAD\xE6\x96\x87  ",
     {"Hi", " \xC3\xA9", "t", "\xC3\xA9", "  ", "\n", "\xE4\xB8\xAD\xE6\x96\x87", "  ", NULL},
     "deepseek-llm: newlines alone, letters with one space before, then ASCII runs [!-/:-~]+ (letters too), "
     "\\s+$ at the end of a piece"},
    {"deepseek-coder", "ab,;\xEA\xB0\x80 12", {"ab", ",;", "\xEA\xB0\x80", " ", "1", "2", NULL},
     "deepseek-coder: letter and punctuation runs, Hangul, single digits"},
    {"tekken", "HelloWorld 12 don't", {"Hello", "World", " ", "1", "2", " don", "'t", NULL},
     "tekken: GPT-4o's case split without contractions, single digits"},
    {"deepseek-v3", "a+=b; x ~i", {"a", "+=", "b", ";", " x", " ~", "i", NULL},
     "deepseek-v3: punctuation and symbols (\\p{P}, \\p{S}) run together"},
    {"youtu", "\xED\x95\x9C\xEA\xB8\x80 abc", {"\xED\x95\x9C\xEA\xB8\x80", " abc", NULL},
     "youtu: Hangul runs split before the words"},
};

static void run_pretokenizers(void)
{
    for (size_t c = 0; c < sizeof split_cases / sizeof split_cases[0]; c++) {
        const SplitCase *k = &split_cases[c];
        uint32_t ends[64];
        int n = tokenizer_pretokenize(k->pre, k->text, strlen(k->text), ends, 64);
        int good = n >= 0;
        size_t at = 0;
        int i = 0;
        for (; good && k->pieces[i]; i++) {
            at += strlen(k->pieces[i]);
            good = i < n && ends[i] == at;
        }
        good = good && i == n;
        CHECK(good, "pretokenize %s: %s (%d pieces)", k->pre, k->why, n);
    }
    uint32_t e[4];
    CHECK(tokenizer_pretokenize("kimi-k2", "x", 1, e, 4) == -1, "pretokenize: an unknown pre-tokenizer is refused");
    CHECK(tokenizer_pretokenize("gpt-2", "a b c", 5, e, 2) == -1, "pretokenize: too small a buffer is refused");
}

/* ---- the hand-written splitters against the matcher ------------------------- */

typedef struct {
    uint32_t ends[4096];
    int n;
} Ends;

static int keep_end(void *ctx, size_t a, size_t e)
{
    (void)a;
    Ends *x = ctx;
    if (x->n >= 4096) return -1;
    x->ends[x->n++] = (uint32_t)e;
    return 0;
}

/* What the regexes tell apart, as UTF-8 strings (as pretok_texts.mjs). */
static const char *const alphabet[] = {
    "a", "b", "z", "A", "Z", "\xC3\x89", "\xC3\xA9", "\xC3\x9F", "\xC7\x85", "\xD0\xB8", "\xD0\x94", "\xE6\x9D\xB1",
    "\xE0\xB8\x81", "\xCC\x81", "\xE0\xB8\xB1", "0", "7", "\xD9\xA1", "\xC2\xBD", " ", " ", "\t", "\n", "\r", "/", "'",
    "s", "S", "t", "re", "VE", "ll", "M", "d", "!", ".", "-", "_", "(", "$", "+", "<", "`", "|", "~",
    "\xC2\xA0", "\xE3\x80\x80", "\xE3\x80\x82", "\xE2\x80\x94", "\xE2\x82\xAC", "\xF0\x9F\x99\x82", "\xE2\x80\x8D",
    "\x01", "\xC2\x85", "\xEA\xB0\x80", "\xE3\x81\x81", "\xEF\xBC\x81", "\xFF", "\xC3", "123",
};

static Pretokenizer fast, slow; /* 13 KiB each: not on the stack */

static void run_splitters_vs_matcher(void)
{
    TestRng rng = {0x9E3779B97F4A7C15ull};
    char text[1200];
    static Ends a, b;
    int n_rows = pretok_rows_count(), compared = 0;
    for (int row = 0; row < n_rows; row++) {
        int ok = pretok_compile(&fast, row, 1) == 0 && pretok_compile(&slow, row, 0) == 0;
        CHECK(ok, "pre-tokenizer row %d compiles, with and without the hand-written splitters", row);
        if (!ok) continue;
        int builtin = 0;
        for (int k = 0; k < fast.n_stages; k++) builtin |= fast.stage[k].builtin >= 0;
        if (!builtin) continue;
        compared++;
        int bad = -1;
        for (int t = 0; t < 400 && bad < 0; t++) {
            size_t len = 0, target = 1 + test_rng_u32(&rng) % 300;
            while (len < target) {
                const char *c = alphabet[test_rng_u32(&rng) % (sizeof alphabet / sizeof alphabet[0])];
                memcpy(text + len, c, strlen(c));
                len += strlen(c);
            }
            a.n = b.n = 0;
            pretok_split(&fast, (const uint8_t *)text, 0, len, keep_end, &a);
            pretok_split(&slow, (const uint8_t *)text, 0, len, keep_end, &b);
            if (a.n != b.n || memcmp(a.ends, b.ends, (size_t)a.n * 4) != 0) bad = t;
        }
        CHECK(bad < 0, "pre-tokenizer %s: the hand-written splitter gives the matcher's pieces on 400 random texts "
                       "(first difference in text %d)", pretok_name(&fast), bad);
    }
    CHECK(compared >= 5, "the splitters were compared on %d pre-tokenizers", compared);
}

/* ---- the llama SPM vocabulary ----------------------------------------------- */

static void run_spm_specifics(const char *fix)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/tokenizer/ggml-vocab-llama-spm.gguf", fix);
    Loaded l;
    int ok = load(&l, path, 1, MAX_TEXT) == 0;
    CHECK(ok, "llama-spm loads %s", ok ? "" : l.err);
    if (!ok) return;
    Tokenizer *t = &l.t;
    CHECK(t->kind == TOKENIZER_SPM && !strcmp(tokenizer_model_name(t), "llama"), "llama-spm: SPM model");
    CHECK(tokenizer_n_vocab(t) == 32000 && tokenizer_bos(t) == 1 && tokenizer_eos(t) == 2 && t->unk == 0,
          "llama-spm: 32000 tokens, bos 1, eos 2, unk 0");
    CHECK(t->add_bos == 1 && t->add_space_prefix == 1, "llama-spm: add_bos and add_space_prefix");
    CHECK(tokenizer_is_eog(t, 2) && !tokenizer_is_eog(t, 1) && tokenizer_is_control(t, 1), "llama-spm: </s> ends generation");
    size_t pl;
    const char *p = tokenizer_piece(t, 15043, &pl); /* "▁Hello" */
    CHECK(p && pl == 6 && !memcmp(p, " Hello", 6), "llama-spm: U+2581 decodes to a space");
    p = tokenizer_piece(t, 3 + 0xC3, &pl);
    CHECK(p && pl == 1 && (uint8_t)p[0] == 0xC3, "llama-spm: <0xC3> decodes to that byte");

    /* special tokens: the space prefix comes back after each one (llama.cpp's is_prev_special) */
    int n = tokenizer_encode(t, "<s>Hello", 8, 1, ids, MAX_IDS);
    CHECK(n == 2 && ids[0] == 1 && ids[1] == 15043, "llama-spm: <s>Hello -> <s> _Hello");
    n = tokenizer_encode(t, "Hello</s>world", 14, 1, ids, MAX_IDS);
    CHECK(n == 3 && ids[0] == 15043 && ids[1] == 2 && ids[2] == 3186, "llama-spm: Hello</s>world -> _Hello </s> _world");
    n = tokenizer_encode(t, "<unk>", 5, 1, ids, MAX_IDS);
    CHECK(n == 1 && ids[0] == 0, "llama-spm: <unk> is parsed as the unknown token");
    n = tokenizer_encode(t, "<s>", 3, 0, ids, MAX_IDS);
    size_t dl = decode_all(t, ids, n, buf, sizeof buf);
    CHECK(n > 1 && dl == 4 && !memcmp(buf, " <s>", 4), "llama-spm: without parse_special <s> is text");
    n = tokenizer_encode_prompt(t, "Hello", 5, ids, MAX_IDS);
    CHECK(n == 2 && ids[0] == 1 && ids[1] == 15043, "llama-spm: encode_prompt puts BOS first");
    n = tokenizer_encode_prompt(t, "<s>Hello", 8, ids, MAX_IDS);
    CHECK(n == 2 && ids[0] == 1 && ids[1] == 15043, "llama-spm: encode_prompt does not double a BOS in the text");
    CHECK(tokenizer_encode_prompt(t, "", 0, ids, MAX_IDS) == 1 && ids[0] == 1, "llama-spm: empty prompt is BOS alone");

    /* random bytes without special parsing: every byte comes back, after the prefix space */
    uint64_t seed = 777;
    int rt_ok = 1, cap_ok = 1;
    static uint8_t rnd[4096];
    const char *frag[] = {"<s>", " ", "  ", "\n", "\xE2\x96\x81", "\xF0\x9F\xA6\x99", "\xE2\x80", "Hello", "\xC3"};
    for (int iter = 0; iter < 200; iter++) {
        size_t len = 0, want_len = (size_t)(iter * 17 % 3000) + 1;
        while (len < want_len) {
            seed = seed * 6364136223846793005ull + 1442695040888963407ull;
            uint32_t r = (uint32_t)(seed >> 33);
            if (r % 4 == 0) {
                const char *f = frag[(r / 4) % (sizeof frag / sizeof frag[0])];
                size_t fl = strlen(f);
                if (len + fl > want_len) break;
                memcpy(rnd + len, f, fl), len += fl;
            } else rnd[len++] = (uint8_t)(iter % 2 ? r >> 8 : (r >> 8) % 128);
        }
        n = tokenizer_encode(t, (const char *)rnd, len, 0, ids, MAX_IDS);
        if (n < 0 || n > (int)(3 * len + 1)) {
            cap_ok = 0;
            continue;
        }
        /* the stored texts of the ids (a byte token: its byte) spell the
         * text as SPM sees it: U+2581 in front and for every space. (Their
         * decoded pieces need not give the text back: a space after a stray
         * lead byte is cut into byte tokens, as in llama.cpp.) */
        static uint8_t expect[3 * 4096 + 3];
        size_t el = 0;
        memcpy(expect, "\xE2\x96\x81", 3), el = 3;
        for (size_t i = 0; i < len; i++) {
            if (rnd[i] == ' ') memcpy(expect + el, "\xE2\x96\x81", 3), el += 3;
            else expect[el++] = rnd[i];
        }
        dl = 0;
        for (int i = 0; i < n && dl != (size_t)-1; i++) {
            int32_t id = ids[i];
            size_t bl = t->raw_off[id + 1] - t->raw_off[id];
            const uint8_t *b = t->raw_bytes + t->raw_off[id];
            if (t->attr[id] & TOKEN_BYTE) bl = 1, b = (const uint8_t *)t->piece_bytes + t->piece_off[id];
            if (dl + bl > sizeof buf) dl = (size_t)-1;
            else memcpy(buf + dl, b, bl), dl += bl;
        }
        if (len == 0 ? n != 0 : (dl != el || memcmp(buf, expect, el) != 0)) rt_ok = 0;
    }
    CHECK(cap_ok, "llama-spm random bytes: encode succeeds within 3*len+1 ids");
    CHECK(rt_ok, "llama-spm random bytes: the ids spell the escaped text, every byte kept");
    static char big[MAX_TEXT];
    memset(big, ' ', sizeof big);
    n = tokenizer_encode(t, big, MAX_TEXT, 1, ids, MAX_IDS);
    dl = decode_all(t, ids, n, buf, sizeof buf);
    CHECK(n > 0 && dl == MAX_TEXT + 1, "llama-spm: 64 KiB of spaces fits the scratch (%d ids)", n);
    unload(&l);
}

/* Unescapes the C escapes of a cases.tsv prompt text (\n \t \r \\ \"). */
static size_t unescape_c(const char *s, size_t n, char *out)
{
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '\\' && i + 1 < n) {
            char e = s[++i];
            out[o++] = e == 'n' ? '\n' : e == 't' ? '\t' : e == 'r' ? '\r' : e;
        } else out[o++] = s[i];
    }
    return o;
}

/* Every case of cases.tsv whose prompt is a text, on a model with an SPM
 * vocabulary (the stories260K files): prompt_ids, BOS included, are what
 * tokenizer_encode_prompt gives. */
static void run_text_prompts(const char *fix)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/cases.tsv", fix);
    size_t len;
    char *tsv = read_file(path, &len);
    CHECK(tsv != NULL, "cases.tsv readable");
    if (!tsv) return;
    int n_cases = 0;
    for (char *line = tsv; line && *line;) {
        char *nl = strchr(line, '\n');
        if (nl) *nl = '\0';
        char *col[6] = {0};
        char *p = line;
        for (int k = 0; k < 6 && p; k++) {
            col[k] = p;
            p = strchr(p, '\t');
            if (p) *p++ = '\0';
        }
        const char *pt = col[5] ? strstr(col[5], "prompt=text=\"") : NULL;
        if (pt && strncmp(col[1], "stories260K", 11) == 0) {
            pt += strlen("prompt=text=\"");
            const char *q = pt;
            while (*q && !(*q == '"' && q[-1] != '\\')) q++;
            char text[1024];
            size_t tl = unescape_c(pt, (size_t)(q - pt) < 1000 ? (size_t)(q - pt) : 1000, text);
            int nw = parse_ids(col[3], want, MAX_IDS);
            snprintf(path, sizeof path, "%s/models/%s", fix, col[1]);
            Loaded l;
            int ok = load(&l, path, 1, 4096) == 0;
            int n = ok ? tokenizer_encode_prompt(&l.t, text, tl, ids, MAX_IDS) : -1;
            CHECK(ok && nw > 0 && same_ids(ids, n, want, nw), "%s: text prompt gives prompt_ids, BOS first (%d vs %d)",
                  col[0], n, nw);
            if (ok) unload(&l);
            n_cases++;
        }
        line = nl ? nl + 1 : NULL;
    }
    CHECK(n_cases == 10, "cases.tsv: 10 stories cases with a text prompt (%d)", n_cases);
    free(tsv);
}

/* ---- hand-made GGUF files: validation ------------------------------------- */

typedef struct {
    FILE *f;
} W;

static void w_u32(W *w, uint32_t v) { fwrite(&v, 4, 1, w->f); }
static void w_u64(W *w, uint64_t v) { fwrite(&v, 8, 1, w->f); }
static void w_str(W *w, const char *s) { w_u64(w, strlen(s)), fwrite(s, 1, strlen(s), w->f); }
static void w_kv_str(W *w, const char *k, const char *v) { w_str(w, k), w_u32(w, GGUF_TYPE_STRING), w_str(w, v); }

/* The byte-level form of byte b, UTF-8. */
static void bytelevel(int b, char *out)
{
    int n = 0, cp = -1;
    for (int c = 0; c < 256; c++) {
        int printable = (c >= 0x21 && c <= 0x7E) || (c >= 0xA1 && c <= 0xAC) || c >= 0xAE;
        if (c == b) cp = printable ? c : 256 + n;
        if (!printable) n++;
    }
    if (cp < 0x80) out[0] = (char)cp, out[1] = 0;
    else out[0] = (char)(0xC0 | cp >> 6), out[1] = (char)(0x80 | (cp & 63)), out[2] = 0;
}

typedef struct {
    const char *model, *pre;
    const char *const *extra;   /* extra tokens after the 256 bytes */
    int n_extra;
    const char *const *merges;
    int n_merges;
    int n_types;                /* entries written in token_type (-1: as many as tokens) */
    int bad_type;               /* write this type for token 0 if non-zero */
} Spec;

static void write_vocab(const char *path, const Spec *s)
{
    W w = {fopen(path, "wb")};
    int n_tok = 256 + s->n_extra, n_types = s->n_types < 0 ? n_tok : s->n_types;
    w_u32(&w, GGUF_MAGIC), w_u32(&w, 3), w_u64(&w, 0), w_u64(&w, 6);
    w_kv_str(&w, "tokenizer.ggml.model", s->model);
    w_kv_str(&w, "tokenizer.ggml.pre", s->pre);
    w_str(&w, "tokenizer.ggml.tokens"), w_u32(&w, GGUF_TYPE_ARRAY), w_u32(&w, GGUF_TYPE_STRING), w_u64(&w, (uint64_t)n_tok);
    for (int b = 0; b < 256; b++) {
        char c[4];
        bytelevel(b, c);
        w_str(&w, c);
    }
    for (int i = 0; i < s->n_extra; i++) w_str(&w, s->extra[i]);
    w_str(&w, "tokenizer.ggml.token_type"), w_u32(&w, GGUF_TYPE_ARRAY), w_u32(&w, GGUF_TYPE_INT32), w_u64(&w, (uint64_t)n_types);
    for (int i = 0; i < n_types; i++) w_u32(&w, i == 0 && s->bad_type ? (uint32_t)s->bad_type : (i >= 256 && s->extra[i - 256][0] == '<') ? 3u : 1u);
    w_str(&w, "tokenizer.ggml.merges"), w_u32(&w, GGUF_TYPE_ARRAY), w_u32(&w, GGUF_TYPE_STRING), w_u64(&w, (uint64_t)s->n_merges);
    for (int i = 0; i < s->n_merges; i++) w_str(&w, s->merges[i]);
    w_str(&w, "tokenizer.ggml.eos_token_id"), w_u32(&w, GGUF_TYPE_UINT32), w_u32(&w, 256);
    fclose(w.f);
}

static const char *const extras[] = {"<|im_end|>", "aa", "aaa", "bc", "ab"};
static const char *const merges_ok[] = {"a a", "aa a", "b c", "a b"};

/* Writes the spec to a file and loads it; returns load's result. */
static int load_spec(Loaded *l, const Spec *s, const char *path)
{
    write_vocab(path, s);
    return load(l, path, 1, 1024);
}

static void expect_error(const Spec *s, const char *path, const char *what, const char *name)
{
    Loaded l;
    int r = load_spec(&l, s, path);
    CHECK(r == -1 && strstr(l.err, what) && strncmp(l.err, path, strlen(path)) == 0, "handmade: %s (%s)", name,
          r == -1 ? l.err : "loaded");
    if (r == 0) unload(&l);
}

/* A small SPM vocabulary: <unk> <s> </s>, the 256 byte tokens, then the
 * pieces below with their scores. */
typedef struct {
    int with_scores;
    int nan_at;        /* token whose score is NaN, or -1 */
    int space_prefix;  /* -1: key absent (default on), else its value */
} SpmSpec;

static const char *const spm_pieces[] = {"\xE2\x96\x81", "a", "b", "c", "ab", "bc", "x", "y", "xy", "yx",
                                         "\xE2\x96\x81" "a"};
static const float spm_scores[] = {-1, -1, -1, -1, -2, -1.5f, -1, -1, -3, -3, -0.5f};
#define SPM_N (259 + (int)(sizeof spm_pieces / sizeof spm_pieces[0]))

static void write_spm(const char *path, const SpmSpec *s)
{
    W w = {fopen(path, "wb")};
    uint64_t n_kv = 4 + (s->with_scores ? 1 : 0) + (s->space_prefix >= 0 ? 1 : 0);
    w_u32(&w, GGUF_MAGIC), w_u32(&w, 3), w_u64(&w, 0), w_u64(&w, n_kv);
    w_kv_str(&w, "tokenizer.ggml.model", "llama");
    w_str(&w, "tokenizer.ggml.tokens"), w_u32(&w, GGUF_TYPE_ARRAY), w_u32(&w, GGUF_TYPE_STRING), w_u64(&w, SPM_N);
    w_str(&w, "<unk>"), w_str(&w, "<s>"), w_str(&w, "</s>");
    for (int b = 0; b < 256; b++) {
        char name[8];
        snprintf(name, sizeof name, "<0x%02X>", b);
        w_str(&w, name);
    }
    for (int i = 0; i < SPM_N - 259; i++) w_str(&w, spm_pieces[i]);
    w_str(&w, "tokenizer.ggml.token_type"), w_u32(&w, GGUF_TYPE_ARRAY), w_u32(&w, GGUF_TYPE_INT32), w_u64(&w, SPM_N);
    for (int i = 0; i < SPM_N; i++) w_u32(&w, i == 0 ? 2u : i < 3 ? 3u : i < 259 ? 6u : 1u);
    if (s->with_scores) {
        w_str(&w, "tokenizer.ggml.scores"), w_u32(&w, GGUF_TYPE_ARRAY), w_u32(&w, GGUF_TYPE_FLOAT32), w_u64(&w, SPM_N);
        for (int i = 0; i < SPM_N; i++) {
            float f = i < 259 ? 0.0f : spm_scores[i - 259];
            uint32_t bits;
            memcpy(&bits, &f, 4);
            if (i == s->nan_at) bits = 0x7FC00001u;
            w_u32(&w, bits);
        }
    }
    if (s->space_prefix >= 0) {
        w_str(&w, "tokenizer.ggml.add_space_prefix"), w_u32(&w, GGUF_TYPE_BOOL);
        uint8_t v = (uint8_t)s->space_prefix;
        fwrite(&v, 1, 1, w.f);
    }
    w_str(&w, "tokenizer.ggml.eos_token_id"), w_u32(&w, GGUF_TYPE_UINT32), w_u32(&w, 2);
    fclose(w.f);
}

/* ids of a text as a comparable list */
static int encode_is(Tokenizer *t, const char *text, const int32_t *want_ids, int nw)
{
    int n = tokenizer_encode(t, text, strlen(text), 1, ids, MAX_IDS);
    return same_ids(ids, n, want_ids, nw);
}

static void run_spm_handmade(const char *path)
{
    enum { SP = 259, A, B, C, AB, BC, X, Y, XY, YX, SP_A };
    SpmSpec good = {1, -1, -1};
    write_spm(path, &good);
    Loaded l;
    int r = load(&l, path, 1, 1024);
    CHECK(r == 0, "spm handmade: loads (%s)", r ? l.err : "");
    if (r == 0) {
        Tokenizer *t = &l.t;
        CHECK(t->bos == 1 && t->eos == 2 && t->unk == 0 && t->add_bos == 1 && t->add_space_prefix == 1,
              "spm handmade: llama.cpp's defaults (bos 1, add_bos, space prefix)");
        /* "_abc": _a (-0.5) beats bc (-1.5) beats ab (-2); then _ab is no token, bc merges */
        CHECK(encode_is(t, "abc", (int32_t[]){SP_A, BC}, 2), "spm handmade: highest score merges first");
        /* "_xyx": xy and yx tie at -3: the leftmost pair wins */
        CHECK(encode_is(t, "xyx", (int32_t[]){SP, XY, X}, 3), "spm handmade: leftmost pair on a tie");
        /* e-acute is not a token: its two bytes */
        CHECK(encode_is(t, "\xC3\xA9", (int32_t[]){SP, 3 + 0xC3, 3 + 0xA9}, 3), "spm handmade: byte fallback");
        CHECK(encode_is(t, "a b", (int32_t[]){SP_A, SP, B}, 3), "spm handmade: spaces are U+2581");
        CHECK(encode_is(t, "<s>a</s>a", (int32_t[]){1, SP_A, 2, SP_A}, 4),
              "spm handmade: a space prefix after each special token");
        unload(&l);
    }
    SpmSpec s = good;
    s.space_prefix = 0;
    write_spm(path, &s);
    r = load(&l, path, 1, 1024);
    CHECK(r == 0 && l.t.add_space_prefix == 0 && encode_is(&l.t, "abc", (int32_t[]){A, BC}, 2) &&
              encode_is(&l.t, "<s>a", (int32_t[]){1, A}, 2),
          "spm handmade: add_space_prefix false: no space put in front");
    if (r == 0) unload(&l);
    s = good, s.with_scores = 0;
    write_spm(path, &s);
    r = load(&l, path, 1, 1024);
    CHECK(r == -1 && strstr(l.err, "tokenizer.ggml.scores is missing"), "spm handmade: missing scores refused (%s)",
          r ? l.err : "loaded");
    if (r == 0) unload(&l);
    s = good, s.nan_at = 262;
    write_spm(path, &s);
    r = load(&l, path, 1, 1024);
    CHECK(r == -1 && strstr(l.err, "token 262 has a NaN score"), "spm handmade: NaN score refused (%s)",
          r ? l.err : "loaded");
    if (r == 0) unload(&l);
}

/* A small gemma4 vocabulary: specials, the <0xNN> tokens but <0xA9>, then
 * the pieces below; add_bos_token false (llama.cpp forces it on). */
static const char *const g4_specials[] = {"<pad>", "<eos>", "<bos>", "<unk>", "<|turn>", "<turn|>", "<|tool_response>", "</s>"};
static const char *const g4_pieces[] = {"\xE2\x96\x81", "a", "b", "c", "\n", "\n\n", "\n\n\n",
                                        "\xE2\x96\x81" "a", "ab", "bc", "aa", "\xC3\xBC", "\xC3\xBC\xC3\xBC"};
enum { G4_BYTES = 8, G4_SP = 8 + 255, G4_A, G4_B, G4_C, G4_NL, G4_NL2, G4_NL3, G4_SP_A, G4_AB, G4_BC, G4_AA, G4_U, G4_UU, G4_N };

static int32_t g4_byte(int b) { return G4_BYTES + b - (b > 0xA9); }

static void write_gemma4(const char *path, const char *const *merges, int n_merges)
{
    W w = {fopen(path, "wb")};
    w_u32(&w, GGUF_MAGIC), w_u32(&w, 3), w_u64(&w, 0), w_u64(&w, 7);
    w_kv_str(&w, "tokenizer.ggml.model", "gemma4");
    w_str(&w, "tokenizer.ggml.tokens"), w_u32(&w, GGUF_TYPE_ARRAY), w_u32(&w, GGUF_TYPE_STRING), w_u64(&w, G4_N);
    for (int i = 0; i < G4_BYTES; i++) w_str(&w, g4_specials[i]);
    for (int b = 0; b < 256; b++) {
        char name[8];
        snprintf(name, sizeof name, "<0x%02X>", b);
        if (b != 0xA9) w_str(&w, name);
    }
    for (int i = G4_SP; i < G4_N; i++) w_str(&w, g4_pieces[i - G4_SP]);
    w_str(&w, "tokenizer.ggml.token_type"), w_u32(&w, GGUF_TYPE_ARRAY), w_u32(&w, GGUF_TYPE_INT32), w_u64(&w, G4_N);
    for (int i = 0; i < G4_N; i++) w_u32(&w, i == 6 ? 4u : i < G4_BYTES ? 3u : i < G4_SP ? 6u : 1u);
    w_str(&w, "tokenizer.ggml.merges"), w_u32(&w, GGUF_TYPE_ARRAY), w_u32(&w, GGUF_TYPE_STRING), w_u64(&w, (uint64_t)n_merges);
    for (int i = 0; i < n_merges; i++) w_str(&w, merges[i]);
    w_str(&w, "tokenizer.ggml.add_bos_token"), w_u32(&w, GGUF_TYPE_BOOL);
    fwrite("", 1, 1, w.f);
    w_str(&w, "tokenizer.ggml.bos_token_id"), w_u32(&w, GGUF_TYPE_UINT32), w_u32(&w, 2);
    w_str(&w, "tokenizer.ggml.eos_token_id"), w_u32(&w, GGUF_TYPE_UINT32), w_u32(&w, 1);
    fclose(w.f);
}

static void run_gemma4_handmade(const char *path)
{
    static const char *const merges[] = {"b c", "a b", "\xE2\x96\x81 a", "a a", "\n \n", "\xC3\xBC \xC3\xBC"};
    write_gemma4(path, merges, 6);
    Loaded l;
    int r = load(&l, path, 0, 1024);
    CHECK(r == 0, "gemma4 handmade: loads (%s)", r ? l.err : "");
    if (r == 0) {
        Tokenizer *t = &l.t;
        CHECK(!strcmp(tokenizer_model_name(t), "gemma4") && t->add_bos == 1 && t->add_space_prefix == 0 &&
                  t->bos == 2 && t->eos == 1,
              "gemma4 handmade: model gemma4, add_bos forced on (the file says false), no space prefix");
        CHECK(tokenizer_is_eog(t, 1) && tokenizer_is_eog(t, 5) && tokenizer_is_eog(t, 6) && !tokenizer_is_eog(t, 7) &&
                  tokenizer_is_control(t, 6),
              "gemma4 handmade: <eos> <turn|> <|tool_response> end generation, </s> does not");
        CHECK(encode_is(t, "abc", (int32_t[]){G4_A, G4_BC}, 2), "gemma4 handmade: lower merge rank first");
        CHECK(encode_is(t, " a a b", (int32_t[]){G4_SP_A, G4_SP_A, G4_SP, G4_B}, 4), "gemma4 handmade: spaces are U+2581");
        CHECK(encode_is(t, "aaa", (int32_t[]){G4_AA, G4_A}, 2), "gemma4 handmade: a word that is a token is still merged");
        CHECK(encode_is(t, "a\n\n\nb", (int32_t[]){G4_A, G4_NL3, G4_B}, 3) &&
                  encode_is(t, "\n\n\n\n", (int32_t[]){G4_NL2, G4_NL2}, 2),
              "gemma4 handmade: a newline run that is a token is taken whole, else merged");
        CHECK(encode_is(t, "\xC3\xBC\xC3\xBC\xC3\xBC", (int32_t[]){G4_UU, G4_U}, 2), "gemma4 handmade: merges by character");
        CHECK(encode_is(t, "\t\xC3\xA9", (int32_t[]){g4_byte('\t'), g4_byte(0xC3)}, 2),
              "gemma4 handmade: <0xNN> fallback, a byte without one dropped (as llama.cpp)");
        CHECK(encode_is(t, "\xFF", (int32_t[]){g4_byte(0xEF), g4_byte(0xBF), g4_byte(0xBD)}, 3),
              "gemma4 handmade: an invalid byte is U+FFFD");
        CHECK(encode_is(t, "<|turn>ab<turn|>", (int32_t[]){4, G4_AB, 5}, 3), "gemma4 handmade: special tokens");
        int n = tokenizer_encode(t, "<|tool_response>", 16, 0, ids, MAX_IDS);
        CHECK(n > 1, "gemma4 handmade: <|tool_response> (made control) is text without parse_special");
        n = tokenizer_encode_prompt(t, "ab", 2, ids, MAX_IDS);
        CHECK(n == 2 && ids[0] == 2 && ids[1] == G4_AB, "gemma4 handmade: encode_prompt puts <bos> first");
        n = tokenizer_encode_prompt(t, "<bos>ab", 7, ids, MAX_IDS);
        CHECK(n == 2 && ids[0] == 2 && ids[1] == G4_AB, "gemma4 handmade: encode_prompt does not double <bos>");
        size_t pl;
        const char *p = tokenizer_piece(t, G4_SP_A, &pl);
        CHECK(p && pl == 2 && !memcmp(p, " a", 2), "gemma4 handmade: U+2581 decodes to a space");
        p = tokenizer_piece(t, g4_byte(0xC3), &pl);
        CHECK(p && pl == 1 && (uint8_t)p[0] == 0xC3, "gemma4 handmade: <0xC3> decodes to that byte");
        /* random texts: the ids spell the text with invalid bytes as U+FFFD,
         * U+2581 as a space, and without the 0xA9 bytes (no <0xA9> token) */
        static const char *const frag[] = {"a", "b", "c", " ", "\n", "\n\n\n", "\xC3\xBC", "\xC3\xA9", "\t",
                                           "<|turn>", "<turn|>", "\xE2\x96\x81", "\xE2\x96"};
        static uint8_t rnd[1024], fixed[3 * 1024], expect[3 * 1024];
        uint64_t seed = 99;
        int rt_ok = 1, cap_ok = 1;
        for (int iter = 0; iter < 200; iter++) {
            size_t len = 0, want_len = (size_t)(iter * 37 % 1000);
            while (len < want_len) {
                seed = seed * 6364136223846793005ull + 1442695040888963407ull;
                uint32_t x = (uint32_t)(seed >> 33);
                const char *f = frag[(x / 7) % (sizeof frag / sizeof frag[0])];
                size_t fl = x % 7 ? strlen(f) : 1;
                if (len + fl > want_len) break;
                if (x % 7) memcpy(rnd + len, f, fl), len += fl;
                else rnd[len++] = (uint8_t)(x >> 8);
            }
            n = tokenizer_encode(t, (const char *)rnd, len, 1, ids, MAX_IDS);
            if (n < 0 || n > (int)(3 * len + 1)) {
                cap_ok = 0;
                continue;
            }
            size_t fl = replace_invalid(rnd, len, fixed), el = 0;
            for (size_t i = 0; i < fl; i++) {
                if (fl - i >= 3 && !memcmp(fixed + i, "\xE2\x96\x81", 3)) expect[el++] = ' ', i += 2;
                else if (fixed[i] != 0xA9) expect[el++] = fixed[i];
            }
            size_t dl = decode_all(t, ids, n, buf, sizeof buf);
            if (dl != el || memcmp(buf, expect, el) != 0) rt_ok = 0;
        }
        CHECK(cap_ok, "gemma4 handmade random texts: encode succeeds within 3*len+1 ids");
        CHECK(rt_ok, "gemma4 handmade random texts: the ids spell the text (U+FFFD, spaces, 0xA9 dropped)");
        unload(&l);
    }
    static const char *const unknown_part[] = {"a b", "a zz"}, *const unknown_result[] = {"a c"},
                             *const no_space[] = {"ab"};
    const struct {
        const char *const *merges;
        const char *what;
    } bad[] = {{unknown_part, "merge 1 ('a zz') uses or makes a token not in the vocabulary"},
               {unknown_result, "merge 0 ('a c') uses or makes a token not in the vocabulary"},
               {no_space, "merge 0 is not two tokens"}};
    for (int i = 0; i < 3; i++) {
        write_gemma4(path, bad[i].merges, i == 0 ? 2 : 1);
        r = load(&l, path, 1, 1024);
        CHECK(r == -1 && strstr(l.err, bad[i].what), "gemma4 handmade: refused: %s (%s)", bad[i].what,
              r ? l.err : "loaded");
        if (r == 0) unload(&l);
    }
}

/* A small WordPiece vocabulary: [PAD] [UNK] [CLS] [SEP] [MASK] (control),
 * then the pieces below (U+2581 starts a word, as convert_hf_to_gguf.py
 * writes BERT's vocabulary). */
typedef struct {
    int special_ids;   /* write unknown/bos/seperator ids 1, 2, 3 (else llama.cpp's 100, 101, 102: none here) */
    int lowercase;     /* -1: key absent */
    int long_token;    /* add a token of 1025 bytes */
} WpmSpec;

static const char *const wpm_pieces[] = {"\xE2\x96\x81hello", "\xE2\x96\x81" "a", "b", "bc", "\xE2\x96\x81!", "\xE2\x96\x81" "e"};
#define WPM_N (5 + (int)(sizeof wpm_pieces / sizeof wpm_pieces[0]))

static void write_wpm(const char *path, const WpmSpec *s)
{
    static char long_token[1026];
    memset(long_token, 'x', 1025);
    int n_tok = WPM_N + (s->long_token ? 1 : 0);
    W w = {fopen(path, "wb")};
    w_u32(&w, GGUF_MAGIC), w_u32(&w, 3), w_u64(&w, 0);
    w_u64(&w, 3 + (s->special_ids ? 3 : 0) + (s->lowercase >= 0 ? 1 : 0));
    w_kv_str(&w, "tokenizer.ggml.model", "bert");
    w_str(&w, "tokenizer.ggml.tokens"), w_u32(&w, GGUF_TYPE_ARRAY), w_u32(&w, GGUF_TYPE_STRING), w_u64(&w, (uint64_t)n_tok);
    const char *special[] = {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"};
    for (int i = 0; i < 5; i++) w_str(&w, special[i]);
    for (int i = 0; i < WPM_N - 5; i++) w_str(&w, wpm_pieces[i]);
    if (s->long_token) w_str(&w, long_token);
    w_str(&w, "tokenizer.ggml.token_type"), w_u32(&w, GGUF_TYPE_ARRAY), w_u32(&w, GGUF_TYPE_INT32), w_u64(&w, (uint64_t)n_tok);
    for (int i = 0; i < n_tok; i++) w_u32(&w, i < 5 ? 3u : 1u);
    const char *keys[] = {"tokenizer.ggml.unknown_token_id", "tokenizer.ggml.bos_token_id",
                          "tokenizer.ggml.seperator_token_id"};
    for (int i = 0; s->special_ids && i < 3; i++) w_str(&w, keys[i]), w_u32(&w, GGUF_TYPE_UINT32), w_u32(&w, (uint32_t)i + 1);
    if (s->lowercase >= 0) {
        w_str(&w, "tokenizer.ggml.normalizer.lowercase"), w_u32(&w, GGUF_TYPE_BOOL);
        uint8_t v = (uint8_t)s->lowercase;
        fwrite(&v, 1, 1, w.f);
    }
    fclose(w.f);
}

static void run_wpm_handmade(const char *path)
{
    enum { UNK = 1, CLS, SEP, MASK, HELLO, SP_A, B, BC, SP_BANG, SP_E };
    WpmSpec good = {1, -1, 0};
    write_wpm(path, &good);
    Loaded l;
    int r = load(&l, path, 1, 1024);
    CHECK(r == 0, "wpm handmade: loads (%s)", r ? l.err : "");
    if (r == 0) {
        Tokenizer *t = &l.t;
        CHECK(t->kind == TOKENIZER_WPM && t->unk == UNK && t->bos == CLS && t->sep == SEP && t->eos == -1 &&
                  t->lowercase == 1 && t->strip_accents == 1 && strcmp(tokenizer_model_name(t), "bert") == 0,
              "wpm handmade: the file's ids, normalizer on by default");
        CHECK(encode_is(t, "hello abc", (int32_t[]){HELLO, SP_A, BC}, 3), "wpm handmade: longest token first");
        CHECK(encode_is(t, "H\xC3\x89LLO!", (int32_t[]){HELLO, SP_BANG}, 2),
              "wpm handmade: lowercased, accent stripped, punctuation a word of its own");
        CHECK(encode_is(t, "ab abz", (int32_t[]){SP_A, B, UNK}, 3), "wpm handmade: a word without a full match is [UNK]");
        CHECK(encode_is(t, "[CLS]e[MASK]", (int32_t[]){CLS, SP_E, MASK}, 3), "wpm handmade: control tokens in the text");
        int n = tokenizer_encode_prompt(t, "hello", 5, ids, MAX_IDS);
        CHECK(n == 3 && ids[0] == CLS && ids[1] == HELLO && ids[2] == SEP, "wpm handmade: prompt is [CLS] hello [SEP]");
        n = tokenizer_encode_prompt(t, "[CLS]", 5, ids, MAX_IDS);
        CHECK(n == 3 && ids[0] == CLS && ids[1] == CLS && ids[2] == SEP, "wpm handmade: [CLS] put first even before [CLS]");
        CHECK(tokenizer_encode_prompt(t, "hello", 5, ids, 2) == -1, "wpm handmade: no room for [SEP] is an error");
        size_t len;
        const char *p = tokenizer_piece(t, HELLO, &len);
        CHECK(len == 6 && memcmp(p, " hello", 6) == 0, "wpm handmade: U+2581 decodes to a space");
        unload(&l);
    }
    WpmSpec s = good;
    s.special_ids = 0, s.lowercase = 0;
    write_wpm(path, &s);
    r = load(&l, path, 1, 1024);
    CHECK(r == 0 && l.t.unk == -1 && l.t.bos == -1 && l.t.sep == -1 && l.t.lowercase == 0 && l.t.strip_accents == 0,
          "wpm handmade: llama.cpp's default ids past the vocabulary are none; strip_accents follows lowercase");
    if (r == 0) {
        CHECK(encode_is(&l.t, "HELLO hello xyz", (int32_t[]){HELLO}, 1),
              "wpm handmade: no lowercase; no unknown token, so unmatched words give nothing");
        int n = tokenizer_encode_prompt(&l.t, "hello", 5, ids, MAX_IDS);
        CHECK(n == 1 && ids[0] == HELLO, "wpm handmade: no [CLS] or [SEP] in the vocabulary: none put");
        unload(&l);
    }
    s = good, s.long_token = 1;
    write_wpm(path, &s);
    r = load(&l, path, 1, 1024);
    CHECK(r == -1 && strstr(l.err, "is 1025 bytes (WordPiece tokens: at most 1024)"), "wpm handmade: too long a token refused (%s)",
          r ? l.err : "loaded");
    if (r == 0) unload(&l);
}

static void run_handmade(void)
{
    char path[512];
    const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    snprintf(path, sizeof path, "%s/pith-test-tokenizer-%ld.gguf", tmp, (long)getpid());
    Spec good = {"gpt2", "qwen2", extras, 5, merges_ok, 4, -1, 0};
    Loaded l;
    int r = load_spec(&l, &good, path);
    CHECK(r == 0, "handmade: a small vocabulary loads (%s)", r ? l.err : "");
    if (r == 0) {
        Tokenizer *t = &l.t;
        int n = tokenizer_encode(t, "aaaa", 4, 1, ids, MAX_IDS);
        CHECK(n == 2 && ids[0] == 257 && ids[1] == 257, "handmade: aaaa -> aa aa (leftmost pair first)");
        n = tokenizer_encode(t, "aaa", 3, 1, ids, MAX_IDS);
        CHECK(n == 1 && ids[0] == 258, "handmade: aaa -> aaa");
        n = tokenizer_encode(t, "abc", 3, 1, ids, MAX_IDS);
        CHECK(n == 2 && ids[0] == t->byte_token['a'] && ids[1] == 259, "handmade: abc -> a bc (lower rank first)");
        n = tokenizer_encode(t, "ab<|im_end|>", 12, 1, ids, MAX_IDS);
        CHECK(n == 2 && ids[0] == 260 && ids[1] == 256, "handmade: control token matched in text");
        CHECK(tokenizer_is_eog(t, 256) && tokenizer_eos(t) == 256 && tokenizer_bos(t) == -1,
              "handmade: eos is end-of-generation, no bos");
        unload(&l);
    }
    /* llama.cpp's ignore_merges (llama3 pre-tokenizers): a piece that is a
     * token is taken whole even when the merges cannot build it */
    static const char *const merges_aa[] = {"a a"};
    Spec s = good;
    s.merges = merges_aa, s.n_merges = 1;
    r = load_spec(&l, &s, path);
    CHECK(r == 0 && encode_is(&l.t, "aaa", (int32_t[]){257, l.t.byte_token['a']}, 2),
          "handmade: qwen2 merges aaa as aa a (no merge makes aaa)");
    if (r == 0) unload(&l);
    s.pre = "llama-bpe";
    r = load_spec(&l, &s, path);
    CHECK(r == 0 && encode_is(&l.t, "aaa", (int32_t[]){258}, 1) &&
              encode_is(&l.t, "aaaa", (int32_t[]){257, 257}, 2) && l.t.add_bos == 1,
          "handmade: llama-bpe keeps a piece that is a token whole (ignore_merges), add_bos by default");
    if (r == 0) unload(&l);
    s = good;
    s.pre = "kimi-k2";
    expect_error(&s, path, "pre-tokenizer 'kimi-k2' (tokenizer.ggml.pre) is not supported",
                 "another pre-tokenizer is refused by name");
    s = good, s.model = "no-such-model";
    expect_error(&s, path, "tokenizer.ggml.model 'no-such-model' is not supported", "another tokenizer model is refused");
    static const char *const merges_bad[] = {"a a", "a zz"};
    s = good, s.merges = merges_bad, s.n_merges = 2;
    expect_error(&s, path, "merge 1 ('a zz') uses or makes a token not in the vocabulary", "merge of an unknown token");
    static const char *const merges_nospace[] = {"aa"};
    s = good, s.merges = merges_nospace, s.n_merges = 1;
    expect_error(&s, path, "merge 0 is not two tokens", "merge without a space");
    s = good, s.n_types = 10;
    expect_error(&s, path, "token_type has 10 entries but there are 261 tokens", "token_type count mismatch");
    s = good, s.bad_type = 9;
    expect_error(&s, path, "token 0 has type 9", "unknown token type");
    run_spm_handmade(path);
    run_gemma4_handmade(path);
    run_wpm_handmade(path);
    remove(path);
}

int main(void)
{
    const char *fix = FIXTURES_DIR;
    run_vectors(fix);
    char path[1024];
    snprintf(path, sizeof path, "%s/tokenizer/qwen3-vocab.gguf", fix);
    for (int use_mmap = 1; use_mmap >= 0; use_mmap--) {
        Loaded l;
        int ok = load(&l, path, use_mmap, MAX_TEXT) == 0;
        CHECK(ok, "qwen3-vocab.gguf loads (%s) %s", use_mmap ? "mmap" : "read", ok ? "" : l.err);
        if (!ok) continue;
        run_chat(fix, &l);
        if (use_mmap) run_qwen3_specifics(&l);
        unload(&l);
    }
    /* tiny-qwen3's vocabulary: the fixtures' README, "Special ids" */
    snprintf(path, sizeof path, "%s/models/tiny-qwen3-f32.gguf", fix);
    Loaded l;
    int ok = load(&l, path, 1, 1024) == 0;
    CHECK(ok, "tiny-qwen3-f32.gguf tokenizer loads %s", ok ? "" : l.err);
    if (ok) {
        int32_t eog[] = {2000, 2002, 2019, 2020, 2021};
        int n_eog = 0, all = 1;
        for (int32_t id = 0; id < tokenizer_n_vocab(&l.t); id++)
            if (tokenizer_is_eog(&l.t, id)) {
                int found = 0;
                for (size_t k = 0; k < sizeof eog / sizeof eog[0]; k++) found |= eog[k] == id;
                all &= found, n_eog++;
            }
        CHECK(tokenizer_n_vocab(&l.t) == 2026 && tokenizer_bos(&l.t) == 2000 && tokenizer_eos(&l.t) == 2002,
              "tiny-qwen3: n_vocab 2026, bos 2000, eos 2002");
        CHECK(n_eog == 5 && all, "tiny-qwen3: end-of-generation set is llama.cpp's (%d tokens)", n_eog);
        CHECK(tokenizer_find(&l.t, "<|im_start|>") == 2001, "tiny-qwen3: <|im_start|> is 2001");
        unload(&l);
    }
    run_spm_specifics(fix);
    run_text_prompts(fix);
    run_pretokenizers();
    run_splitters_vs_matcher();
    run_handmade();
    CHECK_DONE();
}
