/* kquant_panel.c - the register-blocked prefill GEMM of the quantised
 * weight types on AVX-512 VNNI (q4_K, q5_K, q6_K, q4_0, q8_0): the drivers
 * of the 16 x 8 microkernel k_gemm_16x8_avx512vnni.S and the packing of
 * weight panels.
 *
 * The microkernel wants sixteen rows of W interleaved by four elements
 * (the lanes of one vpdpbusd are sixteen weight rows, X's four bytes
 * broadcast), as unsigned bytes with one fp32 scale and one fp32 offset
 * per block of S elements and row.  The driver unpacks sixteen rows of W
 * over a chunk of KC elements of K into such a panel on the stack - once
 * per panel, then used by every row of X (128 per table group) - and
 * builds, once per chunk and eight rows of X, the table of X's per-block
 * scale and sums the offsets need.  Unpacking (nibbles to bytes, scales
 * to fp32) costs about what one row of X does, so M = 128 pays it back
 * many times over; below 8 rows of X the GEMV runs instead.
 *
 * Per type, block b of S elements, W row n and X row t (kquant.h's
 * formulas rewritten per block; x_q the int8 quants of X, dx its scale,
 * s_b(x) the sum of x_q over the block):
 *   q4_K / q5_K (S 32, q8_K): q = 4 / 5-bit quant, scf = d sc_j,
 *                off = dmin m_j: dx (scf idot - off s_b(x))
 *                                                 (w = d sc q - dmin m)
 *   q6_K (S 16, q8_K):   q = 6-bit quant, scf = d sc, int offset 32:
 *                dx scf (idot - 32 s_b(x)), s_b from q8_K's bsums
 *                                                 (w = d sc (q - 32))
 *   q4_0 (S 32, q8_0):   q = nibble, scf = d, int offset 8
 *   q8_0 (S 32, q8_0):   q = w_q + 128 (unsigned), scf = d, int offset 128
 * With q8_K the sums of a super-block are scaled by its dx once.  Every
 * block's int32 dot is exact; the rounding differs from the references
 * (one conversion per super-block) only in the fp32 products per block
 * and the order of the
 * fp32 sum, within checkasm's tolerance. */
#include <stdint.h>
#include <string.h>

#include "../../gguf/ggml_types.h"
#include "../qgemv/qgemv.h"
#include "../sgemm/sgemm.h"
#include "kquant.h"

#if defined(__x86_64__)

#define PANEL_ROWS 16
#define KC 1024                /* elements of K per panel: 1024 x 16 rows fit L1 */
#define GROUP_TB 16            /* blocks of 8 rows of X per table group (128 rows) */
#define MAX_BLOCKS (KC / 16)
#define MAX_BS (16 * 16 + 128)  /* bytes of one panel block: S = 16, float offsets */
#define TILE_BYTES ((size_t)48 << 10)

typedef void (*ukr_fn)(size_t nb, const uint8_t *panel, const void *X, size_t ldx,
                       const uint32_t *xoff, const void *tab, float *C, size_t ldc, uint64_t ctl);
typedef void (*pack_fn)(const uint8_t *w, size_t nwb, uint8_t *P, size_t BS, int r);
typedef void (*pack16_fn)(const uint8_t *w, size_t ldw, size_t nwb, uint8_t *P, size_t BS);

typedef struct panel_type {
    int S;          /* elements per scale block */
    int qk;         /* elements per weight block */
    int wbytes;     /* bytes per weight block */
    int q8_0;       /* activations q8_0 (else q8_K) */
    int off_int;    /* 0: float offsets in the panel; else int32 offset off_int x block sum */
    pack_fn pack;       /* one row (a partial panel) */
    pack16_fn pack16;   /* sixteen rows */
    ukr_fn ukr;
    pg_qgemv_fn gemv;
} panel_type;

static uint32_t ld32(const uint8_t *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}

static void put32(uint8_t *p, uint32_t v) { memcpy(p, &v, 4); }
static void putf(uint8_t *p, float f) { memcpy(p, &f, 4); }
static float f16_at(const uint8_t *p) { return pg_f16_to_f32((uint16_t)(p[0] | p[1] << 8)); }
static int i16_at(const uint8_t *p) { return (int16_t)(uint16_t)(p[0] | p[1] << 8); }

static float f32_at(const uint8_t *p)
{
    float f;
    memcpy(&f, p, 4);
    return f;
}

/* The 6-bit scale and min of sub-block j of q4_K / q5_K (kquant.h). */
static void scale_min(int j, const uint8_t *s, int *sc, int *m)
{
    if (j < 4) {
        *sc = s[j] & 63;
        *m = s[j + 4] & 63;
    } else {
        *sc = (s[j + 4] & 0x0f) | ((s[j - 4] >> 6) << 4);
        *m = (s[j + 4] >> 4) | ((s[j] >> 6) << 4);
    }
}

/* Row r of the panel from nwb weight blocks at w: block b's quants at
 * P + b BS + 64 k + 4 r (elements 4k .. 4k + 3), scf at + 16 S + 4 r, off
 * 64 bytes further. */
static void pack_q45_K(int five, const uint8_t *w, size_t nwb, uint8_t *P, size_t BS, int r)
{
    for (size_t sb = 0; sb < nwb; sb++, w += five ? 176 : 144) {
        float d = f16_at(w), dmin = f16_at(w + 2);
        const uint8_t *qh = w + 16, *qs = w + (five ? 48 : 16);
        for (int j = 0; j < 8; j++) {
            uint8_t *B = P + (sb * 8 + (size_t)j) * BS;
            int sc, m;
            scale_min(j, w + 4, &sc, &m);
            const uint8_t *q = qs + 32 * (j / 2);
            int sh = 4 * (j & 1);
            for (int k = 0; k < 8; k++) {
                uint32_t v = (ld32(q + 4 * k) >> sh) & 0x0f0f0f0fu;
                if (five)
                    v |= ((ld32(qh + 4 * k) >> j) & 0x01010101u) << 4;
                put32(B + 64 * k + 4 * r, v);
            }
            putf(B + 512 + 4 * r, d * (float)sc);
            putf(B + 576 + 4 * r, dmin * (float)m);
        }
    }
}

static void pack_q4_K(const uint8_t *w, size_t nwb, uint8_t *P, size_t BS, int r)
{
    pack_q45_K(0, w, nwb, P, BS, r);
}

static void pack_q5_K(const uint8_t *w, size_t nwb, uint8_t *P, size_t BS, int r)
{
    pack_q45_K(1, w, nwb, P, BS, r);
}

static void pack_q6_K(const uint8_t *w, size_t nwb, uint8_t *P, size_t BS, int r)
{
    for (size_t sb = 0; sb < nwb; sb++, w += 210) {
        const uint8_t *ql = w, *qh = w + 128;
        const int8_t *sc = (const int8_t *)(w + 192);
        float d = f16_at(w + 208);
        for (int g = 0; g < 16; g++) {
            uint8_t *B = P + (sb * 16 + (size_t)g) * BS;
            int h = g / 8, k = (g % 8) / 2, l0 = 16 * (g % 2);
            const uint8_t *lo = ql + 64 * h + 32 * (k & 1) + l0, *hi = qh + 32 * h + l0;
            int sh = k < 2 ? 0 : 4;
            for (int e = 0; e < 4; e++) {
                uint32_t v = (ld32(lo + 4 * e) >> sh) & 0x0f0f0f0fu;
                v |= ((ld32(hi + 4 * e) >> (2 * k)) & 0x03030303u) << 4;
                put32(B + 64 * e + 4 * r, v);
            }
            putf(B + 256 + 4 * r, d * (float)sc[g]);
        }
    }
}

static void pack_q4_0(const uint8_t *w, size_t nwb, uint8_t *P, size_t BS, int r)
{
    for (size_t b = 0; b < nwb; b++, w += 18) {
        uint8_t *B = P + b * BS;
        for (int k = 0; k < 4; k++) {
            uint32_t v = ld32(w + 2 + 4 * k);
            put32(B + 64 * k + 4 * r, v & 0x0f0f0f0fu);
            put32(B + 64 * (k + 4) + 4 * r, (v >> 4) & 0x0f0f0f0fu);
        }
        putf(B + 512 + 4 * r, f16_at(w));
    }
}

static void pack_q8_0(const uint8_t *w, size_t nwb, uint8_t *P, size_t BS, int r)
{
    for (size_t b = 0; b < nwb; b++, w += 34) {
        uint8_t *B = P + b * BS;
        for (int k = 0; k < 8; k++)
            put32(B + 64 * k + 4 * r, ld32(w + 2 + 4 * k) ^ 0x80808080u);
        putf(B + 512 + 4 * r, f16_at(w));
    }
}

/* Sixteen whole rows at once: the quants through pg_kq_trans16x4_avx512
 * (16 bytes of each row, transposed into the panel's order), then the
 * per-type byte operations on whole 64-bit words of the transposed copy;
 * the scales row by row.  P is 64-byte aligned and BS a multiple of 64. */
#define NIB 0x0f0f0f0f0f0f0f0full

/* 16 bytes of 16 rows at stride ldw, transposed by dwords into 64-byte
 * aligned out (k_gemm_16x8_avx512vnni.S) */
void pg_kq_trans16x4_avx512(const uint8_t *w, size_t ldw, void *out);

static void scales_q45_K(const uint8_t *w, size_t wb, size_t ldw, size_t nwb, uint8_t *P, size_t BS)
{
    for (int r = 0; r < 16; r++) {
        const uint8_t *x = w + (size_t)r * ldw;
        for (size_t sb = 0; sb < nwb; sb++, x += wb) {
            float d = f16_at(x), dmin = f16_at(x + 2);
            for (int j = 0; j < 8; j++) {
                uint8_t *B = P + (sb * 8 + (size_t)j) * BS;
                int sc, m;
                scale_min(j, x + 4, &sc, &m);
                putf(B + 512 + 4 * r, d * (float)sc);
                putf(B + 576 + 4 * r, dmin * (float)m);
            }
        }
    }
}

static void pack16_q45_K(int five, const uint8_t *w, size_t ldw, size_t nwb, uint8_t *P, size_t BS)
{
    size_t wb = five ? 176 : 144;
    _Alignas(64) uint64_t t[64], h[64];
    for (size_t sb = 0; sb < nwb; sb++) {
        const uint8_t *x = w + sb * wb, *qs = x + (five ? 48 : 16);
        if (five) {
            pg_kq_trans16x4_avx512(x + 16, ldw, h);
            pg_kq_trans16x4_avx512(x + 32, ldw, h + 32);
        }
        for (int c = 0; c < 4; c++) {
            pg_kq_trans16x4_avx512(qs + 32 * c, ldw, t);
            pg_kq_trans16x4_avx512(qs + 32 * c + 16, ldw, t + 32);
            uint64_t *lo = (uint64_t *)(void *)(P + (sb * 8 + 2 * (size_t)c) * BS);
            uint64_t *hi = (uint64_t *)(void *)(P + (sb * 8 + 2 * (size_t)c + 1) * BS);
            if (five) {
                int j = 2 * c;
                for (int i = 0; i < 64; i++) {
                    lo[i] = (t[i] & NIB) | ((h[i] >> j) & 0x0101010101010101ull) << 4;
                    hi[i] = ((t[i] >> 4) & NIB) | ((h[i] >> (j + 1)) & 0x0101010101010101ull) << 4;
                }
            } else {
                for (int i = 0; i < 64; i++) {
                    lo[i] = t[i] & NIB;
                    hi[i] = (t[i] >> 4) & NIB;
                }
            }
        }
    }
    scales_q45_K(w, wb, ldw, nwb, P, BS);
}

static void pack16_q4_K(const uint8_t *w, size_t ldw, size_t nwb, uint8_t *P, size_t BS)
{
    pack16_q45_K(0, w, ldw, nwb, P, BS);
}

static void pack16_q5_K(const uint8_t *w, size_t ldw, size_t nwb, uint8_t *P, size_t BS)
{
    pack16_q45_K(1, w, ldw, nwb, P, BS);
}

static void pack16_q6_K(const uint8_t *w, size_t ldw, size_t nwb, uint8_t *P, size_t BS)
{
    _Alignas(64) uint64_t tl[8][32], th[4][32];
    for (size_t sb = 0; sb < nwb; sb++) {
        const uint8_t *x = w + sb * 210;
        for (int i = 0; i < 8; i++)
            pg_kq_trans16x4_avx512(x + 16 * i, ldw, tl[i]);
        for (int i = 0; i < 4; i++)
            pg_kq_trans16x4_avx512(x + 128 + 16 * i, ldw, th[i]);
        for (int g = 0; g < 16; g++) {
            int h = g / 8, k = (g % 8) / 2, l0 = 16 * (g % 2);
            const uint64_t *lo = tl[(64 * h + 32 * (k & 1) + l0) / 16], *hb = th[(32 * h + l0) / 16];
            int sh = k < 2 ? 0 : 4;
            uint64_t *B = (uint64_t *)(void *)(P + (sb * 16 + (size_t)g) * BS);
            for (int i = 0; i < 32; i++)
                B[i] = ((lo[i] >> sh) & NIB) | ((hb[i] >> (2 * k)) & 0x0303030303030303ull) << 4;
        }
    }
    for (int r = 0; r < 16; r++) {
        const uint8_t *x = w + (size_t)r * ldw;
        for (size_t sb = 0; sb < nwb; sb++, x += 210) {
            const int8_t *sc = (const int8_t *)(x + 192);
            float d = f16_at(x + 208);
            for (int g = 0; g < 16; g++) {
                uint8_t *B = P + (sb * 16 + (size_t)g) * BS;
                putf(B + 256 + 4 * r, d * (float)sc[g]);
            }
        }
    }
}

static void pack16_q4_0(const uint8_t *w, size_t ldw, size_t nwb, uint8_t *P, size_t BS)
{
    _Alignas(64) uint64_t t[32];
    for (size_t b = 0; b < nwb; b++) {
        pg_kq_trans16x4_avx512(w + b * 18 + 2, ldw, t);
        uint64_t *B = (uint64_t *)(void *)(P + b * BS);
        for (int i = 0; i < 32; i++) {
            B[i] = t[i] & NIB;
            B[32 + i] = (t[i] >> 4) & NIB;
        }
    }
    for (int r = 0; r < 16; r++)
        for (size_t b = 0; b < nwb; b++)
            putf(P + b * BS + 512 + 4 * r, f16_at(w + (size_t)r * ldw + b * 18));
}

static void pack16_q8_0(const uint8_t *w, size_t ldw, size_t nwb, uint8_t *P, size_t BS)
{
    for (size_t b = 0; b < nwb; b++) {
        uint64_t *B = (uint64_t *)(void *)(P + b * BS);
        pg_kq_trans16x4_avx512(w + b * 34 + 2, ldw, B);
        pg_kq_trans16x4_avx512(w + b * 34 + 18, ldw, B + 32);
        for (int i = 0; i < 64; i++)
            B[i] ^= 0x8080808080808080ull;
    }
    for (int r = 0; r < 16; r++)
        for (size_t b = 0; b < nwb; b++)
            putf(P + b * BS + 512 + 4 * r, f16_at(w + (size_t)r * ldw + b * 34));
}

/* the offsets of the nb blocks of S from element k0 in an X row */
static void x_offsets(const panel_type *pt, size_t k0, size_t nb, uint32_t *xoff)
{
    for (size_t b = 0; b < nb; b++) {
        size_t e = k0 + b * (size_t)pt->S;
        xoff[b] = (uint32_t)(pt->q8_0 ? e / 32 * 34 + 2 : e / 256 * 292 + 4 + e % 256);
    }
}

/* The table of eight rows of X (from row x, stride ldx) over the nb blocks
 * from element k0: per block dx[8] then sx[8] (kquant_panel.c's header). */
static void x_table(const panel_type *pt, const uint8_t *x, size_t ldx, size_t k0, size_t nb,
                    float *tab)
{
    for (size_t b = 0; b < nb; b++, tab += 16) {
        size_t e = k0 + b * (size_t)pt->S;
        for (int t = 0; t < 8; t++) {
            const uint8_t *xr = x + (size_t)t * ldx;
            if (pt->q8_0) {
                const uint8_t *blk = xr + e / 32 * 34;
                const int8_t *q = (const int8_t *)(blk + 2);
                int32_t s = 0;
                for (int l = 0; l < 32; l++)
                    s += q[l];
                s *= pt->off_int;
                tab[t] = f16_at(blk);
                memcpy(&tab[8 + t], &s, 4);
            } else {
                const uint8_t *blk = xr + e / 256 * 292;
                size_t g = e % 256 / 16;
                int bs = i16_at(blk + 260 + 2 * g);
                if (pt->S == 32)
                    bs += i16_at(blk + 262 + 2 * g);
                tab[t] = f32_at(blk);
                if (pt->off_int) {
                    int32_t o = pt->off_int * bs;
                    memcpy(&tab[8 + t], &o, 4);
                } else {
                    tab[8 + t] = (float)bs;
                }
            }
        }
    }
}

/* the first row of X of token block i (the last one ends at row M) */
static size_t tb_start(size_t i, size_t M) { return (i + 1) * 8 <= M ? i * 8 : M - 8; }

static void gemm_panel(const panel_type *pt, size_t M, size_t N, size_t K, const void *W,
                       size_t ldw, const void *X, size_t ldx, float *C, size_t ldc)
{
    const uint8_t *Wb = W, *Xb = X;
    if (K == 0) {
        for (size_t m = 0; m < M; m++)
            memset(C + m * ldc, 0, N * sizeof *C);
        return;
    }
    if (M < 8) {
        /* the GEMV over tiles of W small enough to stay in L2 */
        size_t tile = ldw ? TILE_BYTES / ldw : N;
        tile = tile < 4 ? 4 : tile & ~(size_t)3;
        for (size_t n0 = 0; n0 < N; n0 += tile) {
            size_t nr = N - n0 < tile ? N - n0 : tile;
            for (size_t m = 0; m < M; m++)
                pt->gemv(nr, K, Wb + n0 * ldw, ldw, Xb + m * ldx, C + m * ldc + n0);
        }
        return;
    }
    _Alignas(64) uint64_t panel_words[MAX_BLOCKS * MAX_BS / 8];
    uint8_t *panel = (uint8_t *)panel_words;
    _Alignas(64) float tab[GROUP_TB * MAX_BLOCKS * 16];
    uint32_t xoff[MAX_BLOCKS];
    size_t S = (size_t)pt->S, BS = 16 * S + (pt->off_int ? 64 : 128);   /* off only for float offsets */
    size_t ntb = (M + 7) / 8, tail = M % 8;
    for (size_t k0 = 0; k0 < K; k0 += KC) {
        size_t kc = K - k0 < KC ? K - k0 : KC, nb = kc / S, nwb = kc / (size_t)pt->qk;
        const uint8_t *Wk = Wb + k0 / (size_t)pt->qk * (size_t)pt->wbytes;
        x_offsets(pt, k0, nb, xoff);
        for (size_t g0 = 0; g0 < ntb; g0 += GROUP_TB) {
            size_t gn = ntb - g0 < GROUP_TB ? ntb - g0 : GROUP_TB;
            for (size_t i = 0; i < gn; i++)
                x_table(pt, Xb + tb_start(g0 + i, M) * ldx, ldx, k0, nb, tab + i * nb * 16);
            for (size_t n0 = 0; n0 < N; n0 += PANEL_ROWS) {
                size_t nr = N - n0 < PANEL_ROWS ? N - n0 : PANEL_ROWS;
                if (nr == PANEL_ROWS) {
                    pt->pack16(Wk + n0 * ldw, ldw, nwb, panel, BS);
                } else {
                    memset(panel, 0, nb * BS);
                    for (size_t r = 0; r < nr; r++)
                        pt->pack(Wk + (n0 + r) * ldw, nwb, panel, BS, (int)r);
                }
                uint64_t ctl = ((uint64_t)1 << nr) - 1;
                if (k0)
                    ctl |= (uint64_t)1 << 20;
                for (size_t i = 0; i < gn; i++) {
                    size_t tb = g0 + i, m = tb_start(tb, M);
                    uint64_t t0 = tb + 1 == ntb && tail ? 8 - tail : 0;
                    pt->ukr(nb, panel, Xb + m * ldx, ldx, xoff, tab + i * nb * 16,
                            C + m * ldc + n0, ldc, ctl | t0 << 16);
                }
            }
        }
    }
}

static const panel_type type_q4_K = { 32, 256, 144, 0, 0, pack_q4_K, pack16_q4_K,
                                      pg_kq_ukr_16x8_s32f_avx512vnni,
                                      pg_q4_K_q8_K_gemv_4row_avx512vnni };
static const panel_type type_q5_K = { 32, 256, 176, 0, 0, pack_q5_K, pack16_q5_K,
                                      pg_kq_ukr_16x8_s32f_avx512vnni,
                                      pg_q5_K_q8_K_gemv_4row_avx512vnni };
static const panel_type type_q6_K = { 16, 256, 210, 0, 32, pack_q6_K, pack16_q6_K,
                                      pg_kq_ukr_16x8_s16i_avx512vnni,
                                      pg_q6_K_q8_K_gemv_4row_avx512vnni };
static const panel_type type_q4_0 = { 32, 32, 18, 1, 8, pack_q4_0, pack16_q4_0,
                                      pg_kq_ukr_16x8_s32i_avx512vnni,
                                      pg_q4_0_q8_0_gemv_4row_avx512vnni };
static const panel_type type_q8_0 = { 32, 32, 34, 1, 128, pack_q8_0, pack16_q8_0,
                                      pg_kq_ukr_16x8_s32i_avx512vnni,
                                      pg_q8_0_q8_0_gemv_4row_avx512vnni };

#define PANEL_GEMM(t, pt)                                                                     \
    void pg_##t##_gemm_16x8_avx512vnni(size_t M, size_t N, size_t K, const void *W, size_t ldw, \
                                       const void *X, size_t ldx, float *C, size_t ldc)       \
    {                                                                                         \
        gemm_panel(&pt, M, N, K, W, ldw, X, ldx, C, ldc);                                     \
    }
PANEL_GEMM(q4_K_q8_K, type_q4_K)
PANEL_GEMM(q5_K_q8_K, type_q5_K)
PANEL_GEMM(q6_K_q8_K, type_q6_K)
PANEL_GEMM(q4_0_q8_0, type_q4_0)
PANEL_GEMM(q8_0_q8_0, type_q8_0)

/* ---- f16 / bf16: fp32 panels for the SGEMM microkernel ------------------
 *
 * The products of 16-bit float weights are fp32 FMAs either way (the
 * activations stay f32), so the prefill is the SGEMM's: the driver widens
 * 32 rows of W over HKC elements of K into one packed-B panel (k rows of 32
 * floats, the layout of pg_f32_gemm_12x32_avx512f) - sixteen rows by
 * sixteen elements per call of pg_kq_<h|b>2f_16x16_avx512, a partial group
 * of rows element by element - and runs the 12 x 32 microkernel over it
 * for every 12 rows of X, X read in place (ldx / 4 floats), K chunks after
 * the first accumulating.  The panel (24 KiB) stays in L1 while X streams
 * from L2.  Below 8 rows of X the 8 x 1 kernel (its GEMV) runs. */
#define HKC 192
#define HNR 32

void pg_kq_h2f_16x16_avx512(const uint8_t *w, size_t ldw, float *out, size_t ldo);
void pg_kq_b2f_16x16_avx512(const uint8_t *w, size_t ldw, float *out, size_t ldo);

static void gemm_h(int bf, size_t M, size_t N, size_t K, const void *W, size_t ldw, const void *X,
                   size_t ldx, float *C, size_t ldc)
{
    if (M < 8 || ldx % 4) {
        (bf ? pg_bf16_f32_gemm_8x1_avx512vnni : pg_f16_f32_gemm_8x1_avx512vnni)(M, N, K, W, ldw, X,
                                                                              ldx, C, ldc);
        return;
    }
    if (K == 0) {
        for (size_t m = 0; m < M; m++)
            memset(C + m * ldc, 0, N * sizeof *C);
        return;
    }
    _Alignas(64) float panel[HKC * HNR];
    const uint8_t *Wb = W;
    const float *Xf = X;
    size_t lda = ldx / 4;
    for (size_t k0 = 0; k0 < K; k0 += HKC) {
        size_t kc = K - k0 < HKC ? K - k0 : HKC;
        pg_sgemm_epilogue ep = { NULL, 0, k0 ? PG_SGEMM_ACCUMULATE : 0u };
        for (size_t n0 = 0; n0 < N; n0 += HNR) {
            size_t nr = N - n0 < HNR ? N - n0 : HNR;
            for (size_t h = 0; h < HNR; h += 16) {
                const uint8_t *w = Wb + (n0 + h) * ldw + 2 * k0;
                if (h + 16 <= nr) {
                    for (size_t e = 0; e + 16 <= kc; e += 16)
                        (bf ? pg_kq_b2f_16x16_avx512 : pg_kq_h2f_16x16_avx512)(
                            w + 2 * e, ldw, panel + e * HNR + h, HNR * sizeof(float));
                    continue;
                }
                for (size_t r = 0; r < 16; r++)
                    for (size_t e = 0; e < kc; e++) {
                        float f = 0.0f;
                        if (h + r < nr) {
                            const uint8_t *p = w + r * ldw + 2 * e;
                            uint16_t v = (uint16_t)(p[0] | p[1] << 8);
                            f = bf ? pg_bf16_to_f32(v) : pg_f16_to_f32(v);
                        }
                        panel[e * HNR + h + r] = f;
                    }
            }
            for (size_t m0 = 0; m0 < M; m0 += 12) {
                size_t mr = M - m0 < 12 ? M - m0 : 12;
                pg_f32_gemm_12x32_avx512f(mr, nr, kc, Xf + m0 * lda + k0, lda, panel,
                                          C + m0 * ldc + n0, ldc, &ep);
            }
        }
    }
}

void pg_f16_f32_gemm_12x32_avx512(size_t M, size_t N, size_t K, const void *W, size_t ldw,
                                  const void *X, size_t ldx, float *C, size_t ldc)
{
    gemm_h(0, M, N, K, W, ldw, X, ldx, C, ldc);
}

void pg_bf16_f32_gemm_12x32_avx512(size_t M, size_t N, size_t K, const void *W, size_t ldw,
                                   const void *X, size_t ldx, float *C, size_t ldc)
{
    gemm_h(1, M, N, K, W, ldw, X, ldx, C, ldc);
}

#endif
