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

if [ $# -eq 0 ]; then
    echo "not ok - check_core.sh: no object files given"
    exit 1
fi
status=0
present=
for o in "$@"; do
    if [ -f "$o" ]; then present="$present $o"
    else
        echo "not ok - check_core.sh: $o: no such object"
        status=1
    fi
done
# One nm for every object (a process per object and symbol filter cost more
# than the check on a machine where starting a process is slow): nm -A
# prefixes each undefined symbol with its object. The command layer is
# cli.o, cmd_*.o and any object under a cli/ folder (below src/).
# Prints: n_core n_cmd, then the offending objects of each rule
# ("OBJECT (SYMS)" joined by "; "), a line each.
# shellcheck disable=SC2086 # present: words
report=$(nm -A -u $present 2>/dev/null | awk -v forbidden="$forbidden" -v ending="$ending" -v objs="$present" '
    function command_layer(o,   rel, base) {
        rel = o; sub(/.*\/src\//, "", rel); sub(/^src\//, "", rel)
        if (rel ~ /^cli\// || rel ~ /\/cli\//) return 1
        base = rel; sub(/.*\//, "", base)
        return base == "cli.o" || base ~ /^cmd_/
    }
    # nm -A: "OBJECT:                 U SYMBOL"
    { o = $1; sub(/:$/, "", o); s = $NF; sub(/@.*/, "", s)
      if (s ~ forbidden && !((o, s) in seen_os)) { seen_os[o, s] = 1; os[o] = os[o] " " s }
      if (s ~ ending && !((o, s) in seen_end)) { seen_end[o, s] = 1; end[o] = end[o] " " s } }
    END {
        n = split(objs, list, " ")
        for (i = 1; i <= n; i++) {
            o = list[i]
            if (command_layer(o)) n_cmd++; else { n_core++; if (o in end) end_bad = end_bad (end_bad ? "; " : "") o " (" sorted(end[o]) ")" }
            if (o in os) os_bad = os_bad (os_bad ? "; " : "") o " (" sorted(os[o]) ")"
        }
        print n_core + 0, n_cmd + 0; print os_bad; print end_bad
    }
    function sorted(words,   w, k, j, t, m) {
        m = split(words, w, " ")
        for (k = 2; k <= m; k++) for (j = k; j > 1 && w[j - 1] > w[j]; j--) { t = w[j]; w[j] = w[j - 1]; w[j - 1] = t }
        t = w[1]; for (k = 2; k <= m; k++) t = t " " w[k]
        return t
    }')
n_core=$(echo "$report" | sed -n 1p | cut -d' ' -f1)
n_cmd=$(echo "$report" | sed -n 1p | cut -d' ' -f2)
os_bad=$(echo "$report" | sed -n 2p)
end_bad=$(echo "$report" | sed -n 3p)
if [ -z "$os_bad" ]; then echo "ok - core objects ($#) call no allocation, file, print, thread or exit function"
else echo "not ok - core objects call functions outside port/: $os_bad"; status=1; fi
if [ -z "$end_bad" ]; then
    echo "ok - only the command layer ($n_cmd objects) can end the process: the other $n_core call no port_die, port_exit, exit, _exit, abort or quick_exit"
else
    echo "not ok - objects outside the command layer end the process (they must return a status and a message): $end_bad"
    status=1
fi
exit $status
