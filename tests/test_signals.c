/* test_signals.c - port/signals.c in child processes: Ctrl-C while busy
 * only sets the flag; a second one before it is cleared exits (130); one
 * while idle exits (130); SIGBUS with a guarded mapped file prints the
 * one-line message and exits with status 2. (t_robust.sh drives the same
 * through `pith chat` with real signals and a truncated model.) */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../port/port.h"
#include "check.h"

/* Runs fn in a child with stderr into a pipe; returns its wait status and
 * what it wrote to stderr. */
static int in_child(void (*fn)(void), char *err, size_t cap)
{
    int p[2];
    if (pipe(p) != 0) return -1;
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        close(p[0]);
        dup2(p[1], 2);
        fn();
        _exit(0);
    }
    close(p[1]);
    size_t n = 0;
    ssize_t got;
    while (n + 1 < cap && (got = read(p[0], err + n, cap - 1 - n)) > 0) n += (size_t)got;
    err[n] = '\0';
    close(p[0]);
    int st = 0;
    waitpid(pid, &st, 0);
    return st;
}

static void busy_once(void)
{
    port_interrupt_catch();
    port_interrupt_busy(1);
    raise(SIGINT);
    if (!port_interrupted()) _exit(10);
    port_clear_interrupt();
    if (port_interrupted()) _exit(11);
    raise(SIGINT);
    if (!port_interrupted()) _exit(12);
    port_clear_interrupt();
    port_interrupt_busy(0);
    _exit(0);
}

static void busy_twice(void)
{
    port_interrupt_catch();
    port_interrupt_busy(1);
    raise(SIGINT);
    raise(SIGINT); /* before the first was handled by the caller: exits */
    _exit(20);
}

static void idle(void)
{
    port_interrupt_catch();
    raise(SIGINT);
    _exit(30);
}

static void bus(void)
{
    port_guard_mapped_file("/some/model.gguf");
    raise(SIGBUS);
    _exit(40);
}

int main(void)
{
    char err[512];
    int st = in_child(busy_once, err, sizeof err);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "Ctrl-C while busy sets the flag, clearing it re-arms (status %d)",
          WIFEXITED(st) ? WEXITSTATUS(st) : -1);
    st = in_child(busy_twice, err, sizeof err);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 130, "a second Ctrl-C before the first is handled exits with 130 (%d)",
          WIFEXITED(st) ? WEXITSTATUS(st) : -1);
    st = in_child(idle, err, sizeof err);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 130, "Ctrl-C while idle exits with 130 (%d)",
          WIFEXITED(st) ? WEXITSTATUS(st) : -1);
    st = in_child(bus, err, sizeof err);
    int same = strcmp(err, "pith: /some/model.gguf: the model file changed or was truncated while in use\n") == 0;
    err[strcspn(err, "\n")] = '\0';
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 2 && same, "SIGBUS on a guarded mapped file: one line, status 2 (%d: %s)",
          WIFEXITED(st) ? WEXITSTATUS(st) : -1, err);
    CHECK_DONE();
}
