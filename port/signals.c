/* Signals: Ctrl-C in `pith chat`, and SIGBUS from a memory-mapped model
 * file that was truncated or rewritten while pith runs.
 *
 * Handlers only set a flag or write a fixed message and _exit: nothing
 * that is not async-signal-safe runs inside them. */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "port.h"

/* ---- Ctrl-C ---------------------------------------------------------------- */
static volatile sig_atomic_t interrupted; /* a Ctrl-C arrived while busy */
static volatile sig_atomic_t busy;        /* generating: Ctrl-C stops the reply */

static void on_sigint(int sig)
{
    (void)sig;
    if (!busy || interrupted) {
        /* Idle at the prompt, or a second Ctrl-C before the first was
         * handled: leave now, like a shell does (status 128 + SIGINT). */
        ssize_t r = write(2, "\n", 1);
        (void)r;
        _exit(130);
    }
    interrupted = 1;
}

void port_interrupt_catch(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_sigint;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART; /* reads and writes go on after a Ctrl-C */
    sigaction(SIGINT, &sa, NULL);
}

void port_interrupt_busy(int on)
{
    busy = on ? 1 : 0;
}

int port_interrupted(void)
{
    return interrupted != 0;
}

void port_clear_interrupt(void)
{
    interrupted = 0;
}

/* ---- SIGBUS from a mapped file ----------------------------------------------- */
/* Touching a page of a MAP_SHARED mapping beyond the end of a file that
 * shrank raises SIGBUS: say which file, in the one-line error format. */
static char bus_message[1100];
static size_t bus_message_len;

static void on_sigbus(int sig)
{
    (void)sig;
    ssize_t r = write(2, bus_message, bus_message_len);
    (void)r;
    _exit(2);
}

void port_guard_mapped_file(const char *path)
{
    int n = snprintf(bus_message, sizeof bus_message,
                     "pith: %.1000s: the model file changed or was truncated while in use\n", path);
    bus_message_len = n < 0 ? 0 : (size_t)n < sizeof bus_message ? (size_t)n : sizeof bus_message - 1;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_sigbus;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGBUS, &sa, NULL);
}
