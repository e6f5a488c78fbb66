/* f32_vadd_neon.S - y[i] = a[i] + b[i] (the loop is in pg_binary_neon.h). */
#include "pg_asm.h"
#include "pg_binary_neon.h"

        .text
        f32_binary_neon pg_f32_vadd_neon, fadd

#if defined(__linux__) && defined(__ELF__)
        .section .note.GNU-stack, "", %progbits
#endif
