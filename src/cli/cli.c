/* pith_main: the commands table, the dispatch to it, pith --help and
 * --version (cli.h; each command's options are in its cmd_NAME.c, the
 * shared ones in cli_options.c). */
#include "cli.h"

#include <string.h>

#include "../../port/port.h"

#define PITH_VERSION "0.1.0"

/* Every command: name, what it does, usage and example (after "pith NAME"
 * and "pith NAME model.gguf"), its options, its function; in the order of
 * pith --help. A new command is a row here and its table. */
const CliCommand cli_commands[] = {
    {"inspect", "what a GGUF file holds", " MODEL [options]", " --key general.name", inspect_options, cmd_inspect},
    {"tokenize", "text to token ids", " MODEL TEXT | --file F [options]", " 'Hi there' --pieces", tokenize_options,
     cmd_tokenize},
    {"template", "the chat text a template renders", " MODEL --messages FILE [options]",
     " --messages m.json --no-think", template_options, cmd_template},
    {"logits", "logits of every position", " MODEL --prompt-ids 1,2,3 --out FILE.f32 [options]",
     " --prompt-ids 1,2 --out l.f32", logits_options, cmd_logits},
    {"run", "generate from one prompt", " MODEL -p TEXT [options]", " -p 'Why is the sky blue?' --no-think",
     run_options, cmd_run},
    {"chat", "interactive chat (a pipe: a line per message)", " MODEL [options]", " --system 'Be brief' -c 2048",
     chat_options, cmd_chat},
    {"bench", "prompt and generation speed", " MODEL [options]", " -p 64 -n 64 -t 4", bench_options, cmd_bench},
    {"serve", "OpenAI HTTP API", " MODEL [options]", " --host 0.0.0.0 --api-key-file ~/.pith-key", serve_options,
     cmd_serve},
    {NULL, NULL, NULL, NULL, NULL, NULL},
};

const CliCommand *cli_command(const char *name)
{
    for (const CliCommand *c = cli_commands; c->name; c++)
        if (strcmp(name, c->name) == 0) return c;
    return NULL;
}

static const CliCommand *command_or_die(const char *name)
{
    const CliCommand *c = cli_command(name);
    if (!c) port_die("unknown command '%s' (try pith --help)", name);
    return c;
}

void cli_usage(const char *version)
{
    port_out("pith %s - run GGUF language models on small boards\n\nusage: pith COMMAND MODEL [options]\n", version);
    for (const CliCommand *c = cli_commands; c->name; c++) port_out("  %-10s%s\n", c->name, c->summary);
    port_out("  help COMMAND, COMMAND --help: its options\n  --version: build, board, memory, kernels\n");
}

int pith_main(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || (!strcmp(argv[1], "help") && argc == 2)) {
        cli_usage(PITH_VERSION);
        return argc < 2 ? 2 : 0;
    }
    if (!strcmp(argv[1], "--version")) {
        port_print_version(PITH_VERSION); /* target, board, CPU features */
        engine_print_system(0);
        return 0;
    }
    if (!strcmp(argv[1], "help")) {
        cli_help(command_or_die(argv[2]));
        return 0;
    }
    const CliCommand *c = command_or_die(argv[1]);
    return c->run(c, argc - 1, argv + 1);
}
