# Any x86-64 PC or server. Baseline code; faster kernels are chosen at run time.
BOARD_TARGET   = x86_64-linux-musl
BOARD_CFLAGS   =
BOARD_THREADS  = 0        # 0 = all online cores
BOARD_MEM      = 0        # 0 = a share of physical RAM
BOARD_CTX      = 4096
