/* tokenize_files - the ids of many texts on one vocabulary, loaded once.
 *
 *   tokenize_files [--no-special] VOCAB.gguf FILE...
 *   tokenize_files --pieces VOCAB.gguf
 *
 * Prints one line per FILE, as `pith tokenize VOCAB --file FILE` does (the
 * ids space separated, special tokens parsed unless --no-special, as llama.cpp's
 * test vectors were made): the same tokenizer calls,
 * without loading a vocabulary of 200,000 pieces again for every text
 * (tests/t_tokenize_bpe.sh compares hundreds of texts under ASan).
 * With --pieces, every token's piece (tokenizer_piece) in hex, a line per id.
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

int main(int argc, char **argv)
{
    int parse_special = !(argc > 1 && strcmp(argv[1], "--no-special") == 0);
    int pieces = argc > 1 && strcmp(argv[1], "--pieces") == 0;
    if (!parse_special || pieces) argc--, argv++;
    if (argc < 3 - pieces) {
        fprintf(stderr, "usage: tokenize_files [--no-special] VOCAB.gguf FILE... | --pieces VOCAB.gguf\n");
        return 2;
    }
    int n_files = argc - 2;
    char **texts = calloc((size_t)n_files, sizeof *texts);
    size_t *lens = calloc((size_t)n_files, sizeof *lens);
    uint64_t max_len = 1;
    for (int i = 0; i < n_files; i++) {
        texts[i] = read_file(argv[i + 2], &lens[i]);
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
    size_t max_ids = 3 * max_len + 1;
    int32_t *ids = malloc(max_ids * sizeof *ids);
    for (int f = 0; f < n_files; f++) {
        int n = tokenizer_encode(&tok, texts[f], lens[f], parse_special, ids, (int)max_ids);
        if (n < 0) {
            fprintf(stderr, "tokenize_files: %s: the text does not fit the planned buffers\n", argv[f + 2]);
            return 2;
        }
        for (int i = 0; i < n; i++) printf(i ? " %d" : "%d", ids[i]);
        printf("\n");
        free(texts[f]);
    }
    free(ids);
    free(texts);
    free(lens);
    gguf_close(&g);
    port_arena_unmap(base, (size_t)plan.total);
    return 0;
}
