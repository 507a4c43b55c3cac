/* Model files: mmap backend and chunked pread backend behind one interface. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "port.h"

/* pread in chunks: some kernels cap one read at 2 GiB, 32-bit ones lower. */
#define READ_CHUNK ((size_t)1 << 26)

int port_file_open(PortFile *f, const char *path, int use_mmap, char *err, size_t err_len)
{
    memset(f, 0, sizeof *f);
    f->path = path;
    f->fd = open(path, O_RDONLY | O_CLOEXEC);
    if (f->fd < 0) {
        snprintf(err, err_len, "%s: cannot open: %s", path, strerror(errno));
        return -1;
    }
    struct stat st;
    if (fstat(f->fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        snprintf(err, err_len, "%s: not a regular file", path);
        close(f->fd);
        f->fd = -1;
        return -1;
    }
    f->size = (uint64_t)st.st_size;
    if (use_mmap) port_file_map(f); /* else, or when it fails: reads */
    return 0;
}

int port_file_map(PortFile *f)
{
    if (f->map) return 0;
    if (f->fd < 0 || f->size == 0 || f->size > (uint64_t)SIZE_MAX) return -1;
    void *m = mmap(NULL, (size_t)f->size, PROT_READ, MAP_SHARED, f->fd, 0);
    if (m == MAP_FAILED) return -1;
    f->map = m;
    return 0;
}

void port_file_unmap(PortFile *f)
{
    if (f->map) munmap((void *)f->map, (size_t)f->size);
    f->map = NULL;
}

void port_file_close(PortFile *f)
{
    if (f->map) munmap((void *)f->map, (size_t)f->size);
    if (f->fd >= 0) close(f->fd);
    f->map = NULL;
    f->fd = -1;
}

int port_file_read(PortFile *f, uint64_t off, void *dst, size_t len)
{
    if (off > f->size || len > f->size - off) return -1;
    if (f->map) {
        memcpy(dst, f->map + off, len);
        return 0;
    }
    uint8_t *d = dst;
    while (len > 0) {
        size_t want = len < READ_CHUNK ? len : READ_CHUNK;
        ssize_t got = pread(f->fd, d, want, (off_t)off);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) return -1; /* error, or file shrank under us */
        d += got;
        off += (uint64_t)got;
        len -= (size_t)got;
    }
    return 0;
}

const uint8_t *port_file_span(const PortFile *f, uint64_t off, uint64_t len)
{
    if (!f->map || off > f->size || len > f->size - off) return NULL;
    return f->map + off;
}

const uint8_t *port_file_bytes(PortFile *f, uint64_t off, size_t len, void *buf)
{
    const uint8_t *p = port_file_span(f, off, len);
    if (p) return p;
    return port_file_read(f, off, buf, len) == 0 ? buf : NULL;
}
