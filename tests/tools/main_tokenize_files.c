/* tokenize_files - the ids of many texts on one vocabulary, loaded once.
 *
 *   tokenize_files VOCAB.gguf FILE...
 *   tokenize_files VOCAB.gguf --vectors FILE.inp
 *
 * Prints one line per FILE, as `pith tokenize VOCAB --file FILE` does (the
 * ids space separated, special tokens parsed): the same tokenizer calls,
 * without loading a vocabulary of 200,000 pieces again for every text
 * (tests/t_tokenize_bpe.sh compares hundreds of texts under ASan).
 * --vectors reads llama.cpp's test texts (separated by lines
 * "__ggml_vocab_test__") and prints a line per text as its .out file has it:
 * a space before each id, special tokens not parsed (test-tokenizer-0).
 * With --decode, each text's ids must also decode to the text (else a line
 * on stderr and exit status 1).
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

/* Splits llama.cpp's .inp file into its texts (in place). */
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
    (void)len;
    return n;
}

int main(int argc, char **argv)
{
    int decode = argc > 2 && strcmp(argv[2], "--decode") == 0;
    if (decode) { /* drop it from the arguments */
        for (int i = 2; i < argc; i++) argv[i] = argv[i + 1];
        argc--;
    }
    int vectors = argc == 4 && strcmp(argv[2], "--vectors") == 0;
    if (argc < 3 || (strcmp(argv[2], "--vectors") == 0 && !vectors)) {
        fprintf(stderr, "usage: tokenize_files VOCAB.gguf [--decode] FILE... | --vectors FILE.inp\n");
        return 2;
    }
    int n_files = argc - 2;
    char **texts = NULL;
    size_t *lens = NULL;
    char *inp = NULL;
    if (vectors) {
        size_t len;
        if (!(inp = read_file(argv[3], &len))) {
            fprintf(stderr, "tokenize_files: %s: cannot read\n", argv[3]);
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
    size_t max_ids = 3 * max_len + 1;
    int32_t *ids = malloc(max_ids * sizeof *ids);
    char *back = malloc(max_ids * (tok.max_piece + 1) + 1);
    int status = 0;
    for (int f = 0; f < n_files; f++) {
        int n = tokenizer_encode(&tok, texts[f], lens[f], !vectors, ids, (int)max_ids);
        if (n < 0) {
            fprintf(stderr, "tokenize_files: text %d: the text does not fit the planned buffers\n", f + 1);
            return 2;
        }
        for (int i = 0; i < n; i++) printf(vectors ? " %d" : i ? " %d" : "%d", ids[i]);
        printf("\n");
        if (decode) {
            size_t bl = 0, pl;
            for (int i = 0; i < n; i++) {
                const char *piece = tokenizer_piece(&tok, ids[i], &pl);
                memcpy(back + bl, piece, pl);
                bl += pl;
            }
            if (bl != lens[f] || memcmp(back, texts[f], bl) != 0) {
                fprintf(stderr, "tokenize_files: text %d: its ids decode to other text (%zu bytes, not %zu)\n", f + 1,
                        bl, lens[f]);
                status = 1;
            }
        }
        if (!vectors) free(texts[f]);
    }
    free(back);
    free(inp);
    free(ids);
    free(texts);
    free(lens);
    gguf_close(&g);
    port_arena_unmap(base, (size_t)plan.total);
    return status;
}
