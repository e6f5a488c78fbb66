/* f32_vadd_avx2.S - y[i] = a[i] + b[i] (the loop is in pg_binary_avx2.h). */
#include "pg_asm.h"
#include "pg_binary_avx2.h"

        .text
        f32_binary_avx2 pg_f32_vadd_avx2, vaddps

#if defined(__linux__) && defined(__ELF__)
        .section .note.GNU-stack, "", @progbits
#endif
