/* Output files (e.g. `pith logits --out`): whole writes, create or append;
 * and files written whole or not at all (a temporary name, then a rename). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
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

int port_atomic_open(PortAtomicFile *f, const char *path, char *err, size_t err_len)
{
    memset(f, 0, sizeof *f);
    f->path = path;
    int n = snprintf(f->tmp, sizeof f->tmp, "%s.tmp.%ld", path, (long)getpid());
    if (n < 0 || (size_t)n >= sizeof f->tmp) {
        snprintf(err, err_len, "%s: the path is too long", path);
        return -1;
    }
    f->fd = open(f->tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (f->fd < 0) {
        snprintf(err, err_len, "%s: cannot open for writing: %s", f->tmp, strerror(errno));
        return -1;
    }
    return 0;
}

int port_atomic_write(PortAtomicFile *f, const void *data, size_t n)
{
    const unsigned char *p = data;
    while (n > 0 && !f->failed) {
        ssize_t got = write(f->fd, p, n);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) f->failed = got < 0 ? errno : ENOSPC;
        else p += got, n -= (size_t)got;
    }
    return f->failed ? -1 : 0;
}

int port_atomic_commit(PortAtomicFile *f, char *err, size_t err_len)
{
    if (close(f->fd) != 0 && !f->failed) f->failed = errno;
    if (!f->failed && rename(f->tmp, f->path) != 0) f->failed = errno;
    if (f->failed) {
        snprintf(err, err_len, "%s: cannot write: %s", f->path, strerror(f->failed));
        unlink(f->tmp);
        return -1;
    }
    return 0;
}

int port_file_exists(const char *path)
{
    return access(path, F_OK) == 0;
}

int port_dir_files(const char *dir, const char *prefix, const char *suffix,
                   void (*visit)(void *ctx, const char *name, uint64_t bytes, int64_t mtime), void *ctx)
{
    DIR *d = opendir(dir);
    if (!d) return -1;
    size_t pl = strlen(prefix), sl = strlen(suffix);
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        size_t nl = strlen(de->d_name);
        struct stat st;
        if (nl < pl + sl || memcmp(de->d_name, prefix, pl) != 0 || memcmp(de->d_name + nl - sl, suffix, sl) != 0)
            continue;
        if (fstatat(dirfd(d), de->d_name, &st, 0) != 0 || !S_ISREG(st.st_mode)) continue;
        visit(ctx, de->d_name, (uint64_t)st.st_size, (int64_t)st.st_mtime);
    }
    closedir(d);
    return 0;
}

int port_remove(const char *path)
{
    return unlink(path) == 0 ? 0 : -1;
}
