/* The machine we run on: build target, board profile, and the CPU's
 * instruction-set features, found at run time.
 *
 * Every binary is compiled for the oldest CPU of its target (x86-64 with
 * SSE2, ARMv8.0-A, ARMv7-A with NEON-VFPv4, ARMv6 with VFPv2); faster code
 * paths ask port_cpu() whether the CPU in front of them has more. */
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif
#if defined(__aarch64__) || defined(__arm__)
#include <sys/auxv.h>
#endif

#include "port.h"

/* ---- Build target --------------------------------------------------------- */
/* The Makefile passes PITH_TARGET for static/cross builds. */
#if defined(__x86_64__)
#define MACHINE "x86_64"
#elif defined(__aarch64__)
#define MACHINE "aarch64"
#elif defined(__arm__)
#define MACHINE "arm"
#else
#define MACHINE "unknown"
#endif

const char *port_target(void)
{
#ifdef PITH_TARGET
    return PITH_TARGET;
#else
    return MACHINE " native build";
#endif
}

/* Each name followed by a space; port_features_compiled trims the last. */
static const char compiled_list[] = ""
#if defined(__x86_64__)
                                    "sse2 "
#endif
#ifdef __AVX2__
                                    "avx2 "
#endif
#ifdef __FMA__
                                    "fma "
#endif
#ifdef __F16C__
                                    "f16c "
#endif
#if defined(__arm__) && defined(__ARM_FP)
                                    "vfp "
#endif
#if defined(__arm__) && defined(__ARM_FEATURE_FMA)
                                    "vfpv4 "
#endif
#ifdef __ARM_NEON
                                    "neon "
#endif
#ifdef __ARM_FEATURE_FP16_VECTOR_ARITHMETIC
                                    "fp16 "
#endif
#ifdef __ARM_FEATURE_DOTPROD
                                    "dotprod "
#endif
#ifdef __ARM_FEATURE_MATMUL_INT8
                                    "i8mm "
#endif
    ;
static char compiled_names[sizeof compiled_list];

/* ---- Run-time detection --------------------------------------------------- */
static PortCpu cpu;
static pthread_once_t once = PTHREAD_ONCE_INIT;

#if defined(__x86_64__) || defined(__i386__)
static void detect(void)
{
    unsigned a, b, c, d, xcr0 = 0;
    if (!__get_cpuid(1, &a, &b, &c, &d)) return;
    int has_avx = (c >> 28) & 1, has_fma = (c >> 12) & 1, has_f16c = (c >> 29) & 1;
    /* AVX-family instructions fault unless the OS saves the YMM registers:
     * OSXSAVE set and XCR0 enabling both the SSE and AVX state. */
    int ymm_saved = 0;
    if ((c >> 27) & 1) {
        unsigned lo, hi;
        __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
        (void)hi;
        xcr0 = lo;
        ymm_saved = (lo & 6) == 6;
    }
    if (!has_avx || !ymm_saved) return;
    cpu.fma = has_fma;
    cpu.f16c = has_f16c;
    if (__get_cpuid_max(0, NULL) >= 7) {
        __cpuid_count(7, 0, a, b, c, d);
        cpu.avx2 = (b >> 5) & 1;
        /* AVX-512 F, BW, VL and VNNI, with the OS saving the opmask and
         * all 32 ZMM registers (XCR0 bits 5-7) */
        int f = (b >> 16) & 1, bw = (b >> 30) & 1, vl = (b >> 31) & 1, vnni = (c >> 11) & 1;
        cpu.avx512vnni = f && bw && vl && vnni && (xcr0 & 0xe0) == 0xe0;
    }
}
#elif defined(__aarch64__)
/* Linux arm64 hwcap bits (arch/arm64/include/uapi/asm/hwcap.h). */
#define AA64_HWCAP_ASIMD (1UL << 1)
#define AA64_HWCAP_ASIMDHP (1UL << 10)
#define AA64_HWCAP_ASIMDDP (1UL << 20)
#define AA64_HWCAP2_I8MM (1UL << 13)
static void detect(void)
{
    unsigned long hw = getauxval(AT_HWCAP), hw2 = getauxval(AT_HWCAP2);
    cpu.neon = (hw & AA64_HWCAP_ASIMD) != 0;
    cpu.fp16 = (hw & AA64_HWCAP_ASIMDHP) != 0;
    cpu.dotprod = (hw & AA64_HWCAP_ASIMDDP) != 0;
    cpu.i8mm = (hw2 & AA64_HWCAP2_I8MM) != 0;
}
#elif defined(__arm__)
/* Linux arm hwcap bits (arch/arm/include/uapi/asm/hwcap.h); the ARMv8.2
 * ones are set by 32-bit kernels on newer cores. */
#define A32_HWCAP_VFP (1UL << 6)
#define A32_HWCAP_NEON (1UL << 12)
#define A32_HWCAP_VFPv4 (1UL << 16)
#define A32_HWCAP_ASIMDHP (1UL << 23)
#define A32_HWCAP_ASIMDDP (1UL << 24)
#define A32_HWCAP_I8MM (1UL << 27)
static void detect(void)
{
    unsigned long hw = getauxval(AT_HWCAP);
    cpu.vfp = (hw & A32_HWCAP_VFP) != 0;
    cpu.vfpv4 = (hw & A32_HWCAP_VFPv4) != 0;
    cpu.neon = (hw & A32_HWCAP_NEON) != 0;
    cpu.fp16 = (hw & A32_HWCAP_ASIMDHP) != 0;
    cpu.dotprod = (hw & A32_HWCAP_ASIMDDP) != 0;
    cpu.i8mm = (hw & A32_HWCAP_I8MM) != 0;
}
#else
static void detect(void)
{
}
#endif

static void init(void)
{
    detect();
    size_t n = strlen(compiled_list);
    memcpy(compiled_names, compiled_list, n);
    compiled_names[n > 0 ? n - 1 : 0] = '\0';
}

const PortCpu *port_cpu(void)
{
    pthread_once(&once, init);
    return &cpu;
}

const char *port_features_compiled(void)
{
    pthread_once(&once, init);
    return compiled_names;
}

/* ---- pith --version -------------------------------------------------------- */
static void print_found(const PortCpu *c)
{
    const struct {
        const char *name;
        int on;
    } flags[] = {
        {"avx2", c->avx2}, {"fma", c->fma},   {"f16c", c->f16c},       {"avx512vnni", c->avx512vnni},
        {"vfp", c->vfp},   {"vfpv4", c->vfpv4},
        {"neon", c->neon}, {"fp16", c->fp16}, {"dotprod", c->dotprod}, {"i8mm", c->i8mm},
    };
    int n = 0;
    for (size_t i = 0; i < sizeof flags / sizeof flags[0]; i++)
        if (flags[i].on) port_out("%s%s", n++ ? " " : "", flags[i].name);
    if (n == 0) port_out("none");
}

void port_print_version(const char *version)
{
    const char *compiled = port_features_compiled();
    port_out("pith %s\n", version);
    port_out("target: %s (%s)\n", port_target(),
#ifdef _OPENMP
             "OpenMP"
#else
             "no OpenMP"
#endif
    );
    port_out("board: %s (threads ", PITH_BOARD_NAME);
    if (PITH_DEFAULT_THREADS > 0) port_out("%d", (int)PITH_DEFAULT_THREADS);
    else port_out("all %d cores", port_cpu_count());
    port_out(", context %d, memory ", (int)PITH_DEFAULT_CTX);
    if ((uint64_t)PITH_DEFAULT_MEM > 0) port_out("%llu MiB)\n", (unsigned long long)((uint64_t)PITH_DEFAULT_MEM >> 20));
    else port_out("%d%% of RAM)\n", 75); /* MEM_RAM_SHARE, src/model/memplan.h */
    port_out("features compiled in: %s (the baseline: faster kernels are picked at run time)\n",
             compiled[0] ? compiled : "none");
    port_out("features found: ");
    print_found(port_cpu());
    port_out("\n");
}
