/* Process entry: everything else starts in the core's pith_main. */
#include <signal.h>

#include "../src/cli/cli.h"

#ifdef __SANITIZE_ADDRESS__
/* The ASan build (make test) without LeakSanitizer's check at exit: pith
 * allocates nothing on the heap (the arena is mapped; no object of src/ or
 * port/ calls an allocation function: tests/t_core_purity.sh), so the
 * check can find nothing of pith's, and it costs 25 ms of every run on the
 * CI machine, most of it faulting in the sanitizer's own tables to scan
 * them. The test programs and tools, which allocate, keep it. */
int __lsan_is_turned_off(void);
int __lsan_is_turned_off(void) { return 1; }
#endif

int main(int argc, char **argv)
{
    /* A closed stdout (`pith run ... | head`) must end quietly: write()
     * returns EPIPE instead of killing us, and the core stops streaming. */
    signal(SIGPIPE, SIG_IGN);
    return pith_main(argc, argv);
}
