/* cpu_x86.c - feature and cache detection on x86-64 with cpuid and xgetbv.
 *
 * A feature counts only if the OS saves its register state: AVX and up need
 * XCR0 bits 1-2 (SSE, YMM), AVX-512 also bits 5-7 (opmask, ZMM_Hi256,
 * Hi16_ZMM).  Checking cpuid alone would crash on an OS that does not. */
#include <string.h>
#if defined(__linux__)
#include <sys/syscall.h>
#include <unistd.h>
#endif

#include "cpu.h"

#if defined(__x86_64__) || defined(_M_X64)

static void cpuid(uint32_t leaf, uint32_t sub, uint32_t r[4])
{
    __asm__ volatile("cpuid"
                     : "=a"(r[0]), "=b"(r[1]), "=c"(r[2]), "=d"(r[3])
                     : "a"(leaf), "c"(sub));
}

static uint64_t xgetbv0(void)
{
    uint32_t lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    return ((uint64_t)hi << 32) | lo;
}

/* Deterministic cache parameters: leaf 4 (Intel) and 0x8000001D (AMD) share
 * one layout.  Size = ways * partitions * line size * sets. */
static void read_cache_leaf(uint32_t leaf, pg_cpu_caps *caps)
{
    for (uint32_t i = 0; i < 16; i++) {
        uint32_t r[4];
        cpuid(leaf, i, r);
        uint32_t type = r[0] & 31;
        if (type == 0)
            break;
        if (type == 2) /* instruction cache */
            continue;
        int level = (r[0] >> 5) & 7;
        int line = (int)(r[1] & 0xfff) + 1;
        int parts = (int)((r[1] >> 12) & 0x3ff) + 1;
        int ways = (int)((r[1] >> 22) & 0x3ff) + 1;
        int sets = (int)r[2] + 1;
        int size = ways * parts * line * sets;
        if (level == 1) { caps->l1d_bytes = size; caps->line_bytes = line; }
        if (level == 2) caps->l2_bytes = size;
        if (level == 3) caps->l3_bytes = size;
    }
}

void pg_cpu_detect_arch(pg_cpu_caps *caps)
{
    uint32_t r[4];
    cpuid(0, 0, r);
    uint32_t max_leaf = r[0];
    memcpy(caps->vendor + 0, &r[1], 4);
    memcpy(caps->vendor + 4, &r[3], 4);
    memcpy(caps->vendor + 8, &r[2], 4);
    caps->vendor[12] = '\0';

    cpuid(1, 0, r);
    uint32_t ecx1 = r[2], edx1 = r[3];
    uint64_t f = 0;
    if (edx1 & (1u << 26)) f |= PG_CPU_SSE2;
    if (ecx1 & (1u << 19)) f |= PG_CPU_SSE41;

    int osxsave = (ecx1 >> 27) & 1;
    uint64_t xcr0 = osxsave ? xgetbv0() : 0;
    int ymm_ok = (xcr0 & 0x6) == 0x6;
    int zmm_ok = ymm_ok && (xcr0 & 0xe0) == 0xe0;

    if (ymm_ok && (ecx1 & (1u << 28))) f |= PG_CPU_AVX;
    if ((f & PG_CPU_AVX) && (ecx1 & (1u << 12))) f |= PG_CPU_FMA;
    if ((f & PG_CPU_AVX) && (ecx1 & (1u << 29))) f |= PG_CPU_F16C;

    if (max_leaf >= 7) {
        cpuid(7, 0, r);
        uint32_t ebx7 = r[1], ecx7 = r[2];
        if ((f & PG_CPU_AVX) && (ebx7 & (1u << 5))) f |= PG_CPU_AVX2;
        if (zmm_ok) {
            if (ebx7 & (1u << 16)) f |= PG_CPU_AVX512F;
            if (ebx7 & (1u << 17)) f |= PG_CPU_AVX512DQ;
            if (ebx7 & (1u << 30)) f |= PG_CPU_AVX512BW;
            if (ebx7 & (1u << 31)) f |= PG_CPU_AVX512VL;
            if (ecx7 & (1u << 11)) f |= PG_CPU_AVX512VNNI;
        }
        uint32_t eax71 = 0;
        if (r[0] >= 1) {
            cpuid(7, 1, r);
            eax71 = r[0];
        }
        if ((f & PG_CPU_AVX2) && (eax71 & (1u << 4))) f |= PG_CPU_AVXVNNI;
        if ((f & PG_CPU_AVX512F) && (eax71 & (1u << 5))) f |= PG_CPU_AVX512BF16;
        /* AMX: CPUID 7.0 EDX bits 22 (BF16), 24 (TILE), 25 (INT8); Linux hands
         * out the 8 KiB tile state only on request (arch_prctl
         * ARCH_REQ_XCOMP_PERM for XFEATURE_XTILEDATA, 18): without the grant
         * a tile instruction faults, so no grant, no flag */
        cpuid(7, 0, r);
        uint32_t edx7 = r[3];
        if ((f & PG_CPU_AVX512BF16) && (edx7 & (1u << 24)) && (edx7 & ((1u << 22) | (1u << 25)))) {
            int granted = 0;
#if defined(__linux__) && defined(SYS_arch_prctl)
            granted = syscall(SYS_arch_prctl, 0x1023, 18) == 0;
#endif
            if (granted && (edx7 & (1u << 22))) f |= PG_CPU_AMXBF16;
            if (granted && (edx7 & (1u << 25))) f |= PG_CPU_AMXINT8;
        }
    }
    caps->flags = f;

    cpuid(0x80000000u, 0, r);
    uint32_t max_ext = r[0];
    if (max_ext >= 0x80000004u) {
        for (uint32_t i = 0; i < 3; i++) {
            cpuid(0x80000002u + i, 0, r);
            memcpy(caps->brand + 16 * i, r, 16);
        }
        caps->brand[48] = '\0';
        /* The brand string is padded with spaces on some parts. */
        for (int i = 47; i >= 0 && (caps->brand[i] == ' ' || caps->brand[i] == '\0'); i--)
            caps->brand[i] = '\0';
    }

    if (!strcmp(caps->vendor, "AuthenticAMD") && max_ext >= 0x8000001Du)
        read_cache_leaf(0x8000001Du, caps);
    else if (max_leaf >= 4)
        read_cache_leaf(4, caps);
}

#endif
