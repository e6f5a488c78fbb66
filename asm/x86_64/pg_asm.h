/* pg_asm.h - macros shared by every x86-64 assembly file.
 *
 * PG_FUNC/PG_ENDFUNC declare an exported routine with the platform's symbol
 * prefix, hidden from the shared library's dynamic table (the C dispatch is
 * the only caller), aligned for the decoder.  Every file is Intel syntax. */
#ifndef PG_ASM_X86_64_H
#define PG_ASM_X86_64_H

#if defined(__APPLE__)
#define PG_SYM(name) _##name
#define PG_FUNC(name) .globl PG_SYM(name); .private_extern PG_SYM(name); .p2align 5; PG_SYM(name):
#define PG_ENDFUNC(name)
#define PG_RODATA .section __TEXT,__const
#else
#define PG_SYM(name) name
#define PG_FUNC(name) .globl name; .hidden name; .type name, @function; .p2align 5; name:
#define PG_ENDFUNC(name) .size name, . - name
#define PG_RODATA .section .rodata
#endif

        .intel_syntax noprefix

/* The next row pointer of a tile of up to 6 rows, row stride r8 and the
 * row count in rdi: \dst = \prev + r8, or \alias when rdi < \n (a row
 * past mr reads an earlier one, never past A). */
.macro PG_NEXT_ROW dst, prev, alias, n
        lea     \dst, [\prev + r8]
        cmp     rdi, \n
        cmovb   \dst, \alias
.endm

/* \dst = the SGEMM driver's L2 prefetch stream of a tile: ep->pf when ep
 * (pg_sgemm_epilogue_pf at \ep, sgemm.h) has PG_SGEMM_PREFETCH in its
 * flags (@12) and pf (@16) is not NULL, else the stack, which is in L1. */
.macro PG_SGEMM_PF_STREAM dst, ep
        mov     \dst, rsp
        test    dword ptr [\ep + 12], 2
        jz      1f
        cmp     qword ptr [\ep + 16], 0
        cmovne  \dst, [\ep + 16]
1:
.endm

#endif
