#!/bin/sh
# The core (src/) must reach the OS only through port/ and allocate only from
# the arena. Checked on the compiled objects, so no macro or include can hide
# a call: any undefined symbol on this list fails the test.
forbidden='^(malloc|calloc|realloc|free|aligned_alloc|posix_memalign|strdup|strndup|fopen|fdopen|freopen|fclose|fread|fwrite|fgets|fputs|fputc|puts|putchar|printf|fprintf|vprintf|vfprintf|open|open64|openat|close|read|pread|pread64|write|mmap|mmap64|munmap|exit|_exit|abort|pthread_[a-z_]*|GOMP_[A-Za-z_]*|omp_[a-z_]*|clock_gettime|time|gettimeofday|sysconf|getenv|signal|sigaction|system|popen|fork|exec[a-z]*|socket|stdout|stderr|stdin)$'
bad=0
for o in "$@"; do
    syms=$(nm -u "$o" | awk '{print $NF}' | sed 's/@.*//' | grep -E "$forbidden")
    if [ -n "$syms" ]; then
        echo "not ok - core object $o calls $(echo $syms | tr '\n' ' ')"
        bad=1
    fi
done
[ $bad -eq 0 ] && echo "ok - core objects ($#) call no allocation, file, print, thread or exit function"
exit $bad
