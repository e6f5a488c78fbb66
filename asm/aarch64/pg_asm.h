/* pg_asm.h - macros shared by every AArch64 assembly file: exported, hidden,
 * aligned function symbols with the platform's prefix. */
#ifndef PG_ASM_AARCH64_H
#define PG_ASM_AARCH64_H

#if defined(__APPLE__)
#define PG_SYM(name) _##name
#define PG_FUNC(name) .globl PG_SYM(name); .private_extern PG_SYM(name); .p2align 4; PG_SYM(name):
#define PG_ENDFUNC(name)
#else
#define PG_SYM(name) name
#define PG_FUNC(name) .globl name; .hidden name; .type name, %function; .p2align 4; name:
#define PG_ENDFUNC(name) .size name, . - name
#endif

#endif
