#!/bin/sh
# check_core.sh OBJECT... - checks the core's compiled objects (build/rel/src/*.o,
# or build/rel/src/*/*.o once src/ has folders). Checked on the objects, so no
# macro or include can hide a call. Two rules, one ok/not ok line each:
#
#  1. The core reaches the OS only through port/ and allocates only from the
#     arena: no object references an allocation, file, print, thread or exit
#     function.
#  2. Only the command layer ends the process: an object that is not part of
#     it must not reference port_die, port_exit, exit, _exit, abort or
#     quick_exit; every other function returns a status and a message. The
#     command layer is cli.o, cmd_*.o and any object under a cli/ folder
#     (below src/, e.g. build/rel/src/cli/serve.o).
#
# A not ok line names every offending object and its symbols. Exit status 1
# when a rule is broken.
forbidden='^(malloc|calloc|realloc|free|aligned_alloc|posix_memalign|strdup|strndup|fopen|fdopen|freopen|fclose|fread|fwrite|fgets|fputs|fputc|puts|putchar|printf|fprintf|vprintf|vfprintf|open|open64|openat|close|read|pread|pread64|write|mmap|mmap64|munmap|exit|_exit|quick_exit|abort|pthread_[a-z_]*|GOMP_[A-Za-z_]*|omp_[a-z_]*|clock_gettime|time|gettimeofday|sysconf|getenv|signal|sigaction|system|popen|fork|exec[a-z]*|socket|stdout|stderr|stdin)$'
ending='^(port_die|port_exit|exit|_exit|abort|quick_exit)$'

# command_layer OBJECT: true for the objects that may end the process.
command_layer() {
    rel=$1
    case "$rel" in */src/*) rel=${rel##*/src/} ;; src/*) rel=${rel#src/} ;; esac
    case "$rel" in cli/* | */cli/*) return 0 ;; esac
    case "${rel##*/}" in cli.o | cmd_*) return 0 ;; esac
    return 1
}

# undefined OBJECT REGEX: the object's undefined symbols matching REGEX, on one line.
undefined() { nm -u "$1" | awk '{print $NF}' | sed 's/@.*//' | grep -E "$2" | sort -u | tr '\n' ' ' | sed 's/ $//'; }

if [ $# -eq 0 ]; then
    echo "not ok - check_core.sh: no object files given"
    exit 1
fi
status=0
os_bad='' end_bad='' n_core=0 n_cmd=0
for o in "$@"; do
    if [ ! -f "$o" ]; then
        echo "not ok - check_core.sh: $o: no such object"
        status=1
        continue
    fi
    syms=$(undefined "$o" "$forbidden")
    [ -n "$syms" ] && os_bad="$os_bad${os_bad:+; }$o ($syms)"
    if command_layer "$o"; then
        n_cmd=$((n_cmd + 1))
    else
        n_core=$((n_core + 1))
        syms=$(undefined "$o" "$ending")
        [ -n "$syms" ] && end_bad="$end_bad${end_bad:+; }$o ($syms)"
    fi
done
if [ -z "$os_bad" ]; then echo "ok - core objects ($#) call no allocation, file, print, thread or exit function"
else echo "not ok - core objects call functions outside port/: $os_bad"; status=1; fi
if [ -z "$end_bad" ]; then
    echo "ok - only the command layer ($n_cmd objects) can end the process: the other $n_core call no port_die, port_exit, exit, _exit, abort or quick_exit"
else
    echo "not ok - objects outside the command layer end the process (they must return a status and a message): $end_bad"
    status=1
fi
exit $status
