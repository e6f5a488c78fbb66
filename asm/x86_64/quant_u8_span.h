/* quant_u8_span.h - the arithmetic of the per-tensor quantisers
 * (quant_u8_span_avx2.S, quant_u8_span_avx512.S) on one vector \r, with
 * the scale, the zero point, 0 and 255 broadcast in \scale, \zero, \lo,
 * \hi: rint(x / scale) + zero clamped to 0..255.  vdivps is the C
 * reference's correctly rounded x / scale and vcvtps2dq rounds it to
 * nearest even (MXCSR's default, as the reference's 1.5 * 2^23 trick
 * does), so the bytes are the same. */
#ifndef PG_QUANT_U8_SPAN_H
#define PG_QUANT_U8_SPAN_H

.macro QUANT_U8_SPAN r, scale, zero, lo, hi
        vdivps  \r, \r, \scale
        vcvtps2dq \r, \r
        vpaddd  \r, \r, \zero
        vpmaxsd \r, \r, \lo
        vpminsd \r, \r, \hi
.endm

#endif
