/* amx_tile_release.S - void pg_amx_tile_release(void): return the tiles to
 * their initial state (and the configuration with them), so that a thread
 * that has finished its AMX work does not carry 8 KB of tile state through
 * every context switch.  The 32 x 32 AMX kernels leave the tiles configured
 * for the next call (amx_tiles.h); their drivers call this after a thread's
 * run of calls (the variant's params.finish). */
#include "pg_asm.h"

        .text
PG_FUNC(pg_amx_tile_release)
        tilerelease
        ret
PG_ENDFUNC(pg_amx_tile_release)

#if defined(__linux__) && defined(__ELF__)
        .section .note.GNU-stack, "", @progbits
#endif
