/* tokenize_files - the ids of many texts on one vocabulary, loaded once.
 *
 *   tokenize_files [--no-special | --prompt | --decode | --round-trip] VOCAB.gguf FILE...
 *   tokenize_files --vectors [--round-trip] VOCAB.gguf FILE.inp
 *   tokenize_files --info VOCAB.gguf
 *   tokenize_files --pieces VOCAB.gguf
 *
 * Prints one line per FILE, as `pith tokenize VOCAB --file FILE` does (the
 * ids space separated, special tokens parsed unless --no-special, as llama.cpp's
 * test vectors were made): the same tokenizer calls,
 * without loading a vocabulary of 200,000 pieces again for every text
 * (tests/t_tokenize_bpe.sh compares hundreds of texts under ASan).
 * --no-special: special tokens as plain text (llama.cpp's test-tokenizer-0).
 * --prompt: as a prompt is encoded for generation (tokenizer_encode_prompt:
 * BOS first when the model asks for it).
 * --decode: each FILE holds ids (space separated); writes the text they
 * decode to (token_stream_push, as generation streams it) to FILE.decoded.
 * --round-trip: also checks that each text's ids, their pieces put
 * together, are the text again (else a line on stderr and exit status 1).
 * --vectors: the texts of llama.cpp's FILE.inp (separated by lines
 * "__ggml_vocab_test__"), special tokens not parsed, as test-tokenizer-0.
 * --info: one line "model M bos B eos E add_bos A eog ID...": what the
 * tokenizer read and decided, to compare with llama.cpp's.
 * --pieces: every token's piece (tokenizer_piece) in hex, a line per id.
 * Exit status 2 with one line on a read or load error. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../port/port.h"
#include "../../src/arena/arena.h"
#include "../../src/gguf/gguf.h"
#include "../../src/text/tokenizer.h"

static char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    char *buf = NULL;
    size_t n = 0, cap = 0, got;
    do {
        if (n + 4096 > cap) {
            cap = 2 * cap + 4096;
            char *b = realloc(buf, cap + 1);
            if (!b) break;
            buf = b;
        }
        got = fread(buf + n, 1, cap - n, f);
        n += got;
    } while (got > 0);
    int bad = ferror(f) || !buf;
    fclose(f);
    if (bad) {
        free(buf);
        return NULL;
    }
    buf[n] = '\0';
    *len = n;
    return buf;
}

/* Writes the text of the ids in text (space separated) to path + ".decoded". */
static int decode_to_file(const Tokenizer *tok, const char *text, const char *path)
{
    char name[4096], *out = malloc(token_stream_out_max(tok));
    snprintf(name, sizeof name, "%s.decoded", path);
    FILE *f = fopen(name, "wb");
    TokenStream ts;
    token_stream_init(&ts);
    int bad = !f || !out;
    for (const char *p = text; !bad && *p;) {
        char *end;
        long id = strtol(p, &end, 10);
        if (end == p) break;
        p = end;
        int n = token_stream_push(&ts, tok, (int32_t)id, out, token_stream_out_max(tok));
        bad = n < 0 || fwrite(out, 1, (size_t)n, f) != (size_t)n;
    }
    if (!bad) {
        int n = token_stream_flush(&ts, out, token_stream_out_max(tok));
        bad = n < 0 || fwrite(out, 1, (size_t)n, f) != (size_t)n;
    }
    if (f && fclose(f) != 0) bad = 1;
    free(out);
    if (bad) fprintf(stderr, "tokenize_files: %s: cannot decode into %s\n", path, name);
    return bad ? -1 : 0;
}

/* Splits llama.cpp's .inp text into its texts as test-tokenizer-0 does:
 * each separator ends one, and what follows the last is one unless empty.
 * Returns their number. */
static int split_vectors(char *inp, size_t len, char ***texts, size_t **lens)
{
    const char *sep = "\n__ggml_vocab_test__\n";
    int n = 0;
    for (char *p = inp; (p = strstr(p, sep)) != NULL; p += strlen(sep)) n++;
    *texts = calloc((size_t)n + 1, sizeof **texts);
    *lens = calloc((size_t)n + 1, sizeof **lens);
    char *p = inp;
    for (int i = 0; i < n; i++) {
        char *e = strstr(p, sep);
        (*texts)[i] = p;
        (*lens)[i] = (size_t)(e - p);
        p = e + strlen(sep);
    }
    if (p < inp + len) (*texts)[n] = p, (*lens)[n] = (size_t)(inp + len - p), n++;
    return n;
}

/* Whether the pieces of ids[0..n) put together are text[0..len). */
static int round_trips(const Tokenizer *tok, const int32_t *ids, int n, const char *text, size_t len)
{
    size_t at = 0, pl;
    for (int i = 0; i < n; i++) {
        const char *piece = tokenizer_piece(tok, ids[i], &pl);
        if (!piece || at + pl > len || memcmp(text + at, piece, pl) != 0) return 0;
        at += pl;
    }
    return at == len;
}

int main(int argc, char **argv)
{
    int parse_special = 1, prompt = 0, decode = 0, info = 0, vectors = 0, round_trip = 0, pieces = 0;
    if (argc > 1 && strcmp(argv[1], "--no-special") == 0) parse_special = 0, argc--, argv++;
    else if (argc > 1 && strcmp(argv[1], "--prompt") == 0) prompt = 1, argc--, argv++;
    else if (argc > 1 && strcmp(argv[1], "--decode") == 0) decode = 1, argc--, argv++;
    else if (argc > 1 && strcmp(argv[1], "--info") == 0) info = 1, argc--, argv++;
    else if (argc > 1 && strcmp(argv[1], "--pieces") == 0) pieces = 1, argc--, argv++;
    else if (argc > 1 && strcmp(argv[1], "--vectors") == 0) vectors = 1, parse_special = 0, argc--, argv++;
    if (argc > 1 && strcmp(argv[1], "--round-trip") == 0) round_trip = 1, argc--, argv++;
    if (info || pieces ? argc != 2 : vectors ? argc != 3 : argc < 3) {
        fprintf(stderr, "usage: tokenize_files [--no-special | --prompt | --decode | --round-trip] VOCAB.gguf FILE...\n"
                        "       tokenize_files --vectors [--round-trip] VOCAB.gguf FILE.inp\n"
                        "       tokenize_files --info | --pieces VOCAB.gguf\n");
        return 2;
    }
    int n_files = argc - 2;
    char **texts, *inp = NULL;
    size_t *lens;
    if (vectors) {
        size_t len;
        if (!(inp = read_file(argv[2], &len))) {
            fprintf(stderr, "tokenize_files: %s: cannot read\n", argv[2]);
            return 2;
        }
        n_files = split_vectors(inp, len, &texts, &lens);
    } else {
        texts = calloc((size_t)n_files, sizeof *texts);
        lens = calloc((size_t)n_files, sizeof *lens);
    }
    uint64_t max_len = 1;
    for (int i = 0; i < n_files; i++) {
        if (!vectors) texts[i] = read_file(argv[i + 2], &lens[i]);
        if (!texts[i]) {
            fprintf(stderr, "tokenize_files: %s: cannot read\n", argv[i + 2]);
            return 2;
        }
        if (lens[i] > TOKENIZER_MAX_TEXT) {
            fprintf(stderr, "tokenize_files: %s: %zu bytes is more than tokenize accepts\n", argv[i + 2], lens[i]);
            return 2;
        }
        if (lens[i] > max_len) max_len = lens[i];
    }
    Gguf g;
    GgufError err;
    if (gguf_open(&g, argv[1], 1, NULL, &err) != 0) {
        fprintf(stderr, "tokenize_files: %s\n", err.msg);
        return 2;
    }
    Plan plan;
    plan_init(&plan);
    gguf_plan(&g, &plan);
    if (tokenizer_plan(&g, max_len, &plan, &err) != 0) {
        fprintf(stderr, "tokenize_files: %s\n", err.msg);
        return 2;
    }
    void *base = port_arena_map((size_t)plan.total);
    Arena arena;
    arena_init(&arena, base, plan.total);
    Tokenizer tok;
    if (!base || gguf_index(&g, &arena, &err) != 0 || tokenizer_load(&tok, &g, max_len, &arena, &err) != 0) {
        fprintf(stderr, "tokenize_files: %s\n", base ? err.msg : "cannot map the arena");
        return 2;
    }
    for (int32_t id = 0; pieces && id < tokenizer_n_vocab(&tok); id++) {
        size_t len;
        const char *p = tokenizer_piece(&tok, id, &len);
        for (size_t i = 0; i < len; i++) printf("%02x", (unsigned char)p[i]);
        printf("\n");
    }
    if (info) {
        printf("model %s bos %d eos %d add_bos %d eog", tokenizer_model_name(&tok), tokenizer_bos(&tok),
               tokenizer_eos(&tok), tok.add_bos);
        for (int32_t id = 0; id < tokenizer_n_vocab(&tok); id++)
            if (tokenizer_is_eog(&tok, id)) printf(" %d", id);
        printf("\n");
    }
    size_t max_ids = 3 * max_len + 2; /* tokenizer_encode's most, and a BOS */
    int32_t *ids = malloc(max_ids * sizeof *ids);
    int status = 0;
    for (int f = 0; f < n_files; f++) {
        if (decode) {
            if (decode_to_file(&tok, texts[f], argv[f + 2]) != 0) return 2;
        } else {
            int n = prompt ? tokenizer_encode_prompt(&tok, texts[f], lens[f], ids, (int)max_ids)
                           : tokenizer_encode(&tok, texts[f], lens[f], parse_special, ids, (int)max_ids);
            if (n < 0) {
                fprintf(stderr, "tokenize_files: text %d: the text does not fit the planned buffers\n", f + 1);
                return 2;
            }
            for (int i = 0; i < n; i++) printf(i ? " %d" : "%d", ids[i]);
            printf("\n");
            if (round_trip && !round_trips(&tok, ids, n, texts[f], lens[f])) {
                fprintf(stderr, "tokenize_files: text %d: its ids' pieces are not the text\n", f + 1);
                status = 1;
            }
        }
        if (!vectors) free(texts[f]);
    }
    free(inp);
    free(ids);
    free(texts);
    free(lens);
    gguf_close(&g);
    port_arena_unmap(base, (size_t)plan.total);
    return status;
}
