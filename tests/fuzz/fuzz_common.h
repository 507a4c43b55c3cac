/* fuzz_common.h - small helpers shared by the libFuzzer harnesses
 * (test code: may use libc freely). */
#ifndef PITH_FUZZ_COMMON_H
#define PITH_FUZZ_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The model readers take a path (port_file_open maps or reads a real
 * file), so each input is written to one file per process, in /dev/shm
 * when it exists (memory, no disk writes). */
static char fuzz_temp_path[256];

static inline void fuzz_remove_temp(void)
{
    remove(fuzz_temp_path);
}

static inline const char *fuzz_write_temp(const char *tag, const uint8_t *data, size_t size)
{
    char *path = fuzz_temp_path;
    if (!path[0]) {
        const char *dir = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : (getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
        snprintf(path, sizeof fuzz_temp_path, "%s/pith-fuzz-%s-%d.gguf", dir, tag, (int)getpid());
        atexit(fuzz_remove_temp);
    }
    FILE *f = fopen(path, "wb");
    if (!f || (size && fwrite(data, 1, size, f) != size) || fclose(f) != 0) {
        fprintf(stderr, "fuzz: cannot write %s\n", path);
        abort();
    }
    return path;
}

/* A property the code under test must keep: a violation is a finding. */
#define FUZZ_ASSERT(cond, what)                                                  \
    do {                                                                         \
        if (!(cond)) {                                                           \
            fprintf(stderr, "fuzz: property violated: %s (%s:%d)\n", what, __FILE__, __LINE__); \
            abort();                                                             \
        }                                                                        \
    } while (0)

#endif
