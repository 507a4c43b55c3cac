# x86_64, fully static against musl (Debian: musl-tools).
CROSS_CC      = x86_64-linux-musl-gcc
TARGET_CFLAGS =
# Debian's libgomp.a is built for glibc: port/musl_gomp.c supplies what musl lacks.
TARGET_LDFLAGS = -static -Wl,--wrap=pthread_create -Wl,--wrap=pthread_attr_destroy -Wl,-z,stack-size=1048576
TARGET_DEFS   = -DPITH_MUSL_GOMP
