/* sgemm_pack.c - B into the panel layout of one microkernel, once.
 *
 * A compiled model packs its weights here at compile time; every later call
 * (pg_sgemm_packed) reads the panels as they are, so no call repacks. */
#include <stdlib.h>
#include <string.h>

#include "../../core/alloc.h"
#include "../../core/error.h"
#include "sgemm.h"

void pg_sgemm_pack_panels(size_t K, size_t N, const float *B, size_t ldb, size_t nr,
                          float *dst)
{
    size_t panels = (N + nr - 1) / nr;
    for (size_t p = 0; p < panels; p++) {
        size_t j0 = p * nr, w = N - j0 < nr ? N - j0 : nr;
        float *panel = dst + p * K * nr;
        for (size_t k = 0; k < K; k++) {
            memcpy(panel + k * nr, B + k * ldb + j0, w * sizeof(float));
            memset(panel + k * nr + w, 0, (nr - w) * sizeof(float));
        }
    }
}

pg_status pg_sgemm_pack(int variant, size_t K, size_t N, const float *B, size_t ldb,
                        pg_packed_b **out)
{
    if (!out)
        return pg_fail(PG_ERR_INVALID_ARG, "pg_sgemm_pack: out is NULL");
    *out = NULL;
    if (!B && K && N)
        return pg_fail(PG_ERR_INVALID_ARG, "pg_sgemm_pack: B is NULL");
    if (ldb < N)
        return pg_fail(PG_ERR_INVALID_ARG, "pg_sgemm_pack: ldb %zu < N %zu", ldb, N);
    const pg_variant *v = pg_kernel_variant_checked(&pg_kernels_sgemm, variant);
    if (!v)
        return pg_last_status();
    size_t nr = (size_t)((const pg_sgemm_params *)v->params)->nr;
    size_t panels = (N + nr - 1) / nr;
    if (K && panels > SIZE_MAX / sizeof(float) / nr / K)
        return pg_fail(PG_ERR_INVALID_ARG, "pg_sgemm_pack: %zu x %zu is too large", K, N);
    size_t bytes = panels * K * nr * sizeof(float);
    bytes = (bytes + 63) & ~(size_t)63;

    pg_packed_b *pb = calloc(1, sizeof *pb);
    float *data = pg_malloc(bytes);   /* aligned, on huge pages when large (alloc.h) */
    if (!pb || !data) {
        free(pb);
        pg_free(data);
        return pg_fail(PG_ERR_NOMEM, "pg_sgemm_pack: cannot allocate %zu bytes", bytes);
    }
    pg_sgemm_pack_panels(K, N, B, ldb, nr, data);
    pb->variant = v;
    pb->K = K;
    pb->N = N;
    pb->nr = nr;
    pb->panels = panels;
    pb->data = data;
    *out = pb;
    return PG_OK;
}

void pg_packed_b_free(pg_packed_b *pb)
{
    if (!pb)
        return;
    pg_free(pb->data);
    free(pb);
}

pg_status pg_packed_b_get_info(const pg_packed_b *pb, size_t *K, size_t *N, int *variant)
{
    if (!pb)
        return pg_fail(PG_ERR_INVALID_ARG, "pg_packed_b_get_info: packed B is NULL");
    if (K)
        *K = pb->K;
    if (N)
        *N = pb->N;
    if (variant)
        *variant = pg_variant_index(&pg_kernels_sgemm, pb->variant);
    return PG_OK;
}
