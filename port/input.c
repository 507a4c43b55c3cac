/* Lines from stdin, for `pith chat`. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "port.h"

int port_read_line(char *buf, size_t cap, size_t *len)
{
    size_t n = 0;
    int c, too_long = 0;
    while ((c = getchar()) != EOF && c != '\n') {
        if (n + 1 < cap) buf[n++] = (char)c;
        else too_long = 1;
    }
    if (cap) buf[n] = '\0';
    *len = n;
    if (c == EOF && n == 0 && !too_long) return 0;
    return too_long ? -1 : 1;
}

int port_stdin_is_tty(void)
{
    return isatty(0);
}

int port_is_tty(int fd)
{
    return isatty(fd);
}
