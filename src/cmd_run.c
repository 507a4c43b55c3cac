/* placeholder until these commands land */
#include "cli.h"
#include "../port/port.h"

int cmd_run(int argc, char **argv)
{
    (void)argc;
    port_die("%s: not implemented yet", argv[0]);
}
