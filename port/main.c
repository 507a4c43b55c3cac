/* Process entry: everything else starts in the core's pith_main. */
#include <signal.h>

#include "../src/cli/cli.h"

int main(int argc, char **argv)
{
    /* A closed stdout (`pith run ... | head`) must end quietly: write()
     * returns EPIPE instead of killing us, and the core stops streaming. */
    signal(SIGPIPE, SIG_IGN);
    return pith_main(argc, argv);
}
