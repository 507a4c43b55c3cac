/* pith_main: the usage text and dispatch to the commands (cli.h). */
#include "cli.h"

#include <string.h>

#include "../../port/port.h"

#define PITH_VERSION "0.1.0"

static void usage(void)
{
    port_out("pith %s - run GGUF language models on small boards\n\n"
             "usage: pith COMMAND [options]\n\n"
             "commands:\n"
             "  inspect MODEL [--tensors] [--key KEY] [--plan] [--no-mmap]\n"
             "  run MODEL -p TEXT [-n N] [-c N] [-t N] [--temp T] [--mem SIZE] [--load mmap|read|stream] [--plan] [...]\n"
             "  chat MODEL [...]\n"
             "  logits MODEL --prompt-ids 1,2,3 --out FILE.f32\n"
             "  tokenize MODEL TEXT | --file F [--pieces]\n"
             "  bench MODEL [-p 128] [-n 32] [-t N] [-r 3] [-b 64] [--ref] [--no-avx512] [--mem SIZE] [--load MODE]\n"
             "  serve MODEL [--host 127.0.0.1] [--port 8080] [--api-key KEY] [...]\n"
             "  template MODEL --messages FILE [--no-think] [--no-generation-prompt]\n"
             "  --version, --help\n\n"
             "see README.md for every flag\n",
             PITH_VERSION);
}

int pith_main(int argc, char **argv)
{
    static const struct {
        const char *name;
        int (*fn)(int, char **);
    } commands[] = {
        {"inspect", cmd_inspect}, {"tokenize", cmd_tokenize}, {"template", cmd_template},
        {"logits", cmd_logits},   {"run", cmd_run},           {"chat", cmd_chat},
        {"bench", cmd_bench},     {"serve", cmd_serve},
    };
    if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        usage();
        return argc < 2 ? 2 : 0;
    }
    if (strcmp(argv[1], "--version") == 0) {
        port_print_version(PITH_VERSION); /* target, board, CPU features too */
        return 0;
    }
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (strcmp(argv[1], commands[i].name) == 0) return commands[i].fn(argc - 1, argv + 1);
    port_die("unknown command '%s' (try pith --help)", argv[1]);
}
