/* cpu_aarch64.c - feature detection on AArch64 Linux from the kernel's
 * HWCAP/HWCAP2 words (the kernel only sets them when it saves the state),
 * and the SVE vector length from the rdvl instruction. */
#include "cpu.h"

#if defined(__aarch64__)

#include <sys/auxv.h>

/* From the kernel's uapi asm/hwcap.h; spelled out so an older libc header
 * does not hide a feature. */
#define HWCAP_ASIMD_BIT   (1ul << 1)
#define HWCAP_FPHP_BIT    (1ul << 9)
#define HWCAP_ASIMDHP_BIT (1ul << 10)
#define HWCAP_ASIMDDP_BIT (1ul << 20)
#define HWCAP_SVE_BIT     (1ul << 22)
#define HWCAP2_SVE2_BIT   (1ul << 1)
#define HWCAP2_I8MM_BIT   (1ul << 13)
#define HWCAP2_BF16_BIT   (1ul << 14)

/* rdvl x0, #1: bytes in one SVE vector.  Encoded by hand so the file builds
 * with -march=armv8-a; only executed when HWCAP says SVE is there. */
static int sve_vector_bytes(void)
{
    register long x0 __asm__("x0");
    __asm__ volatile(".inst 0x04bf5020" : "=r"(x0));
    return (int)x0;
}

void pg_cpu_detect_arch(pg_cpu_caps *caps)
{
    unsigned long hw = getauxval(AT_HWCAP);
    unsigned long hw2 = getauxval(AT_HWCAP2);
    uint64_t f = 0;
    if (hw & HWCAP_ASIMD_BIT) f |= PG_CPU_NEON;
    if (hw & HWCAP_ASIMDDP_BIT) f |= PG_CPU_DOTPROD;
    if ((hw & HWCAP_FPHP_BIT) && (hw & HWCAP_ASIMDHP_BIT)) f |= PG_CPU_FP16;
    if (hw & HWCAP_SVE_BIT) f |= PG_CPU_SVE;
    if (hw2 & HWCAP2_SVE2_BIT) f |= PG_CPU_SVE2;
    if (hw2 & HWCAP2_BF16_BIT) f |= PG_CPU_BF16;
    if (hw2 & HWCAP2_I8MM_BIT) f |= PG_CPU_I8MM;
    caps->flags = f;
    caps->sve_bits = (f & PG_CPU_SVE) ? 8 * sve_vector_bytes() : 0;
}

#endif
