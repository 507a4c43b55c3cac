# The fully static musl build: links, says it is static, runs, and OpenMP
# thread binding works through port/musl_gomp.c (musl has no
# pthread_attr_setaffinity_np).
. tests/lib.sh
if ! command -v x86_64-linux-musl-gcc >/dev/null; then
    not_ok "x86_64-linux-musl-gcc present (install musl-tools: toolchains/install-debian.sh)"; finish
fi
check "make static" make -s static
check "pith-static is statically linked" sh -c 'file pith-static | grep -q "statically linked"'
check "pith-static runs" ./pith-static --version
x86_64-linux-musl-gcc -std=c11 -O1 -fopenmp -D_GNU_SOURCE -DPITH_MUSL_GOMP -c port/musl_gomp.c -o "$TMP/glue.o" 2>"$TMP/cc.err" &&
x86_64-linux-musl-gcc -std=c11 -O1 -fopenmp -static -Wl,--wrap=pthread_create -Wl,--wrap=pthread_attr_destroy \
    tests/static/omp_affinity.c "$TMP/glue.o" -o "$TMP/omp_affinity" 2>>"$TMP/cc.err"
if [ -x "$TMP/omp_affinity" ]; then
    check "static OpenMP threads bind with OMP_PROC_BIND=true" \
        env OMP_NUM_THREADS=2 OMP_PROC_BIND=true OMP_PLACES=cores "$TMP/omp_affinity"
else
    not_ok "static OpenMP affinity test builds: $(head -c 300 "$TMP/cc.err")"
fi
finish
