#!/bin/sh
# gomp_task.sh CC OBJCOPY [RUNNER...] - builds tests/static/gomp_task.c with a
# target's musl compiler against port/musl_gomp*.c and the real task.o of
# that compiler's libgomp.a (its gomp_init_task and gomp_end_task renamed
# real_*, every other symbol it defines made local so the glue's stay in
# use), and runs it (under RUNNER, e.g. qemu-aarch64-static, if given).
# Prints the program's last line or why it did not build; exit status 0
# only if it built and passed. Used by tests/t_static.sh and tests/cross.sh.
cc=$1 objcopy=$2; shift 2
dir=$(mktemp -d) || exit 1
trap 'rm -rf "$dir"' EXIT
lib=$($cc -print-file-name=libgomp.a)
if ! (cd "$dir" && ar x "$lib" task.o) 2>"$dir/err" ||
   ! $objcopy --redefine-sym gomp_init_task=real_gomp_init_task --redefine-sym gomp_end_task=real_gomp_end_task \
        --keep-global-symbol=real_gomp_init_task --keep-global-symbol=real_gomp_end_task \
        "$dir/task.o" "$dir/task_real.o" 2>>"$dir/err" ||
   ! $cc -std=c11 -O1 -fopenmp -D_GNU_SOURCE -DPITH_MUSL_GOMP -c port/musl_gomp.c -o "$dir/glue.o" 2>>"$dir/err" ||
   ! $cc -std=c11 -O1 -fopenmp -D_GNU_SOURCE -DPITH_MUSL_GOMP -c port/musl_gomp_task.c -o "$dir/glue_task.o" 2>>"$dir/err" ||
   ! $cc -std=c11 -Wall -Wextra -O1 -fopenmp -static -Wl,--wrap=pthread_create -Wl,--wrap=pthread_attr_destroy \
        tests/static/gomp_task.c "$dir/glue.o" "$dir/glue_task.o" "$dir/task_real.o" -o "$dir/gomp_task" 2>>"$dir/err"; then
    echo "gomp_task: does not build: $(head -c 300 "$dir/err")"
    exit 1
fi
OMP_NUM_THREADS=2 "$@" "$dir/gomp_task" >"$dir/out" 2>&1
st=$?
tr '\n' ' ' <"$dir/out" | head -c 400; echo
exit $st
