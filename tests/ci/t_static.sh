# Part of `make ci-test` (CI's stage after make test), not of `make test`.
# The fully static musl build: links, says it is static, runs, and OpenMP
# thread binding works through port/musl_gomp.c (musl has no
# pthread_attr_setaffinity_np); the glue's implicit tasks
# (port/musl_gomp_task.c, in place of libgomp's task.o) do what task.o's do.
. tests/lib.sh
if ! command -v x86_64-linux-musl-gcc >/dev/null; then
    not_ok "x86_64-linux-musl-gcc present (install musl-tools: toolchains/install-debian.sh)"; finish
fi
check "make static" make -s static
check "pith-static is statically linked" sh -c 'file pith-static | grep -q "statically linked"'
check "pith-static runs" ./pith-static --version
x86_64-linux-musl-gcc -std=c11 -O1 -fopenmp -D_GNU_SOURCE -DPITH_MUSL_GOMP -c port/musl_gomp.c -o "$TMP/glue.o" 2>"$TMP/cc.err" &&
x86_64-linux-musl-gcc -std=c11 -O1 -fopenmp -D_GNU_SOURCE -DPITH_MUSL_GOMP -c port/musl_gomp_task.c -o "$TMP/glue_task.o" 2>>"$TMP/cc.err" &&
x86_64-linux-musl-gcc -std=c11 -O1 -fopenmp -static -Wl,--wrap=pthread_create -Wl,--wrap=pthread_attr_destroy \
    tests/static/omp_affinity.c "$TMP/glue.o" "$TMP/glue_task.o" -o "$TMP/omp_affinity" 2>>"$TMP/cc.err"
if [ -x "$TMP/omp_affinity" ]; then
    check "static OpenMP threads bind with OMP_PROC_BIND=true" \
        env OMP_NUM_THREADS=2 OMP_PROC_BIND=true OMP_PLACES=cores "$TMP/omp_affinity"
else
    not_ok "static OpenMP affinity test builds: $(head -c 300 "$TMP/cc.err")"
fi
if sh tests/static/gomp_task.sh x86_64-linux-musl-gcc objcopy >"$TMP/gt" 2>&1; then
    ok "port/musl_gomp_task.c's gomp_init_task/gomp_end_task equal task.o's: $(cat "$TMP/gt")"
else not_ok "gomp_task: $(cat "$TMP/gt")"; fi
# The static builds' allocator, strstr and strerror (port/malloc.c,
# port/libc_small.c): threads stress them natively, and under qemu on aarch64.
for cc in x86_64-linux-musl-gcc aarch64-linux-musl-gcc; do
    run=; [ "$cc" = aarch64-linux-musl-gcc ] && run=qemu-aarch64-static
    if ! command -v "$cc" >/dev/null || { [ -n "$run" ] && ! command -v "$run" >/dev/null; }; then
        not_ok "$cc and ${run:-the host} present (toolchains/install-debian.sh)"; continue; fi
    if $cc -std=c11 -O1 -Wall -Wextra -Werror -D_GNU_SOURCE -DPITH_SMALL_LIBC -static tests/static/small_libc.c \
            port/malloc.c port/libc_small.c -o "$TMP/small_libc" -lpthread 2>"$TMP/cc.err"; then
        check "port/malloc.c and port/libc_small.c under 4 threads ($cc)" $run "$TMP/small_libc"
    else not_ok "small_libc builds with $cc: $(head -c 300 "$TMP/cc.err")"; fi
done
finish
