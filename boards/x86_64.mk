# Any x86-64 PC or server. Baseline code; AVX2/FMA/F16C kernels are chosen
# at run time.
BOARD_TARGET   = x86_64-linux-musl
BOARD_CFLAGS   =
# 0 threads = every online core; 0 MiB = a share of the physical RAM.
BOARD_THREADS  = 0
BOARD_MEM_MIB  = 0
BOARD_CTX      = 4096
