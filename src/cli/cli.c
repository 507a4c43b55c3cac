/* pith_main: dispatch to the commands; --help and --version (cli.h; the
 * help text is in cli_help.c). */
#include "cli.h"

#include <string.h>

#include "../../port/port.h"

#define PITH_VERSION "0.1.0"

/* In cli_help.c's order of the commands. */
static int (*const commands[CLI_N_COMMANDS])(int, char **) = {cmd_inspect, cmd_tokenize, cmd_template, cmd_logits,
                                                                cmd_run,     cmd_chat,     cmd_bench,    cmd_serve};

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
        cli_help(cli_command_index(argv[2]));
        return 0;
    }
    return commands[cli_command_index(argv[1])](argc - 1, argv + 1);
}
