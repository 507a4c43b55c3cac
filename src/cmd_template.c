/* placeholder until this command lands */
#include "cli.h"
#include "../port/port.h"

int cmd_template(int argc, char **argv)
{
    (void)argc;
    port_die("%s: not implemented yet", argv[0]);
}
