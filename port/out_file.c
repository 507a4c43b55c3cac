/* Output files (e.g. `pith logits --out`): whole writes, create or append. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "port.h"

int port_write_file(const char *path, const void *data, size_t n, int append, char *err, size_t err_len)
{
    int flags = O_WRONLY | O_CREAT | O_CLOEXEC | (append ? O_APPEND : O_TRUNC);
    int fd = open(path, flags, 0644);
    if (fd < 0) {
        snprintf(err, err_len, "%s: cannot open for writing: %s", path, strerror(errno));
        return -1;
    }
    const unsigned char *p = data;
    while (n > 0) {
        ssize_t got = write(fd, p, n);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) {
            snprintf(err, err_len, "%s: cannot write: %s", path, got < 0 ? strerror(errno) : "no progress");
            close(fd);
            return -1;
        }
        p += got;
        n -= (size_t)got;
    }
    if (close(fd) != 0) {
        snprintf(err, err_len, "%s: cannot write: %s", path, strerror(errno));
        return -1;
    }
    return 0;
}
