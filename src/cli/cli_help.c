/* The help of every command (pith help COMMAND, COMMAND --help), made from
 * its option table, and the system lines of --version and --plan (cli.h).
 * man/mkman.sh reads this layout. */
#include "cli.h"

#include <string.h>

#include "../../port/port.h"
#include "../kernels/kernels.h"
#include "../model/memplan.h"

/* "  NAMES ARG                meaning (default)" */
static void help_row(void *ctx, const CliOpt *r)
{
    (void)ctx;
    const char *tab = strchr(r->spec, '\t');
    port_out("  %-24.*s %s\n", (int)(tab - r->spec), r->spec, tab + 1);
    if ((r->kind & CLI_KIND) == CLI_CALL && r->how.call->values) port_out("  %-24s %s\n", "", r->how.call->values());
}

void cli_help(const CliCommand *c)
{
    port_out("pith %s: %s\nusage: pith %s%s\noptions:\n", c->name, c->summary, c->name, c->usage);
    cli_each_option(c->options, help_row, NULL);
    port_out("  %-24s %s\nexample:\n  pith %s model.gguf%s\n", "-h, --help", "this help", c->name, c->example);
}

void cli_usage(const char *version)
{
    port_out("pith %s - run GGUF language models on small boards\n\nusage: pith COMMAND MODEL [options]\n", version);
    for (const CliCommand *c = cli_commands; c->name; c++) port_out("  %-10s%s\n", c->name, c->summary);
    port_out("  help COMMAND, COMMAND --help: its options\n  --version: build, board, memory, kernels\n");
}

void cli_print_system(int board)
{
    MemBudget b;
    mem_budget_init(&b, 0);
    if (board) port_out("board profile: %s\n", PITH_BOARD_NAME);
    if (b.bytes == UINT64_MAX) port_out("memory budget: none (%s)\n", b.source);
    else port_out("memory budget: %.0f MiB (%s)\n", (double)b.bytes / 1048576.0, b.source);
    port_out("page size: %zu bytes\nkernels: %s (chosen at run time)\n", port_page_size(), kern_active()->name);
}

