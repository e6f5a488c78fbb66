/* pass_prepack.c - constant weights pre-packed into the SGEMM panel layout.
 *
 * The SGEMM kernel reads B as NR-column panels (K rows of NR floats each).
 * A product whose B is a constant would otherwise pack it into scratch on
 * every run; packing once here moves that work to compile time (MLAS packs
 * B at load time the same way).  The panel width is that of the SGEMM
 * variant dispatch picks now, recorded in the tensor (pack_nr), so the
 * executor can tell a mismatch.
 *
 * Packed: B (input 1) of MatMul / FusedMatMul / QKVMatMul when it is a 2-D
 * float32 row-major constant that nothing else reads (every reader is such
 * a product, in slot 1), and, for QKVMatMul, every split starts on a panel
 * boundary (each output then reads whole panels).
 *
 * With a weight cache (exec/weight_cache.h), a weight whose bytes have a
 * key takes the panels an earlier compile packed from the same bytes at
 * the same width, and the packing gets its own key either way. */
#include <stdio.h>

#include "../core/alloc.h"
#include "../exec/weight_cache.h"
#include "../kernels/sgemm/sgemm.h"
#include "match.h"
#include "pass.h"

static int is_product(pg_opcode op)
{
    return op == PG_OP_MATMUL || op == PG_OP_FUSED_MATMUL || op == PG_OP_QKV_MATMUL;
}

/* Every reader of w is a product reading it as B, with splits aligned. */
static int packable(const pg_graph *g, int w, size_t nr)
{
    const pg_tensor *t = g->tensors[w];
    if (!pm_const_f32(g, w) || t->rank != 2 || pg_ir_is_output(g, w) || t->shape[0] < 1 ||
        t->shape[1] < 1)
        return 0;
    PG_IR_FOR_NODES(g, n) {
        for (int i = 0; i < n->n_inputs; i++) {
            if (n->inputs[i] != w)
                continue;
            if (i != 1 || !is_product(n->op))
                return 0;
            const pg_tensor *a = pm_tensor(g, n->inputs[0]);
            if (!a || a->dtype != PG_DTYPE_FLOAT32 || a->rank < 1)
                return 0;
            if (pg_ir_attr_float(n, "alpha", 1.0f) != 1.0f)
                return 0;   /* the packed kernel path takes alpha 1 only */
            if (n->op == PG_OP_QKV_MATMUL) {
                int ns = 0;
                const int64_t *sp = pg_ir_attr_ints(n, "splits", &ns);
                if (ns != 3 || sp[0] % (int64_t)nr || sp[1] % (int64_t)nr)
                    return 0;
            }
        }
    }
    return 1;
}

static pg_status run_prepack(pg_graph *g, pg_pass_ctx *c)
{
    const pg_variant *v = pg_kernel_select(&pg_kernels_sgemm);
    const pg_sgemm_params *prm = v ? v->params : NULL;
    if (!prm || prm->nr <= 0)
        return PG_OK;   /* no packed kernel in this build */
    size_t nr = (size_t)prm->nr;
    PG_IR_FOR_NODES(g, n) {
        if (!is_product(n->op) || n->n_inputs < 2 || n->inputs[1] < 0)
            continue;
        int w = n->inputs[1];
        pg_tensor *t = g->tensors[w];
        if (t->layout != PG_LAYOUT_ROW_MAJOR || !packable(g, w, nr))
            continue;
        size_t K = (size_t)t->shape[0], N = (size_t)t->shape[1];
        size_t panels = (N + nr - 1) / nr, bytes = panels * K * nr * sizeof(float);
        uint64_t shape[3] = { K, N, nr };
        uint64_t key = g->weight_cache && t->origin
                           ? pg_key_derive(t->origin, 0x70616e656c73ull /* "panels" */, shape, 3)
                           : 0;
        const void *kept = key ? pg_weight_cache_find(g->weight_cache, key, bytes) : NULL;
        if (kept) {
            pg_ir_set_const_view(t, kept, bytes, key);
        } else {
            float *dst = pg_malloc(bytes);
            if (!dst)
                return pg_fail(PG_ERR_NOMEM, "out of memory packing weight '%s'", t->name);
            pg_sgemm_pack_panels(K, N, t->data, N, nr, dst);
            pg_ir_set_const_data(t, dst, bytes);
            t->origin = key;
        }
        t->layout = PG_LAYOUT_PACKED;
        t->pack_nr = (int)nr;
        /* note every reader: their weight changed layout */
        PG_IR_FOR_NODES(g, r)
            for (int i = 0; i < r->n_inputs; i++)
                if (r->inputs[i] == w) {
                    pg_pass_note(c, g, PG_PASS_REWRITTEN, r->id, 0,
                                 "weight '%s' [%zu x %zu] packed into %zu panels of %zu "
                                 "columns for %s%s", t->name, K, N, panels, nr, v->name,
                                 kept ? " (the weight cache's, packed by an earlier compile)"
                                      : "");
                    break;
                }
    }
    return PG_OK;
}

const pg_pass_def pg_pass_weight_prepack = {
    "weight_prepack", 3,
    "constant MatMul weights packed once into the SGEMM kernel's NR-column panels",
    run_prepack,
};

/* Rebinding after a CPU-mask change: a weight packed for a panel width the
 * now-selected SGEMM kernel does not have is unpacked (the panels hold the
 * matrix exactly) and packed again for the new width, or left row-major
 * where it no longer qualifies (QKV splits off the new panel boundaries). */
pg_status pg_prepack_relayout(pg_graph *g, int *repacked)
{
    const pg_variant *v = pg_kernel_select(&pg_kernels_sgemm);
    const pg_sgemm_params *prm = v ? v->params : NULL;
    size_t nr = prm && prm->nr > 0 ? (size_t)prm->nr : 0;
    *repacked = 0;
    PG_IR_FOR_TENSORS(g, t) {
        if (t->layout != PG_LAYOUT_PACKED || (size_t)t->pack_nr == nr)
            continue;
        size_t K = (size_t)t->shape[0], N = (size_t)t->shape[1], onr = (size_t)t->pack_nr;
        float *rows = pg_malloc(K * N * sizeof(float) + 1);
        if (!rows)
            return pg_fail(PG_ERR_NOMEM, "out of memory re-packing weight '%s'", t->name);
        const float *panels = t->data;
        for (size_t j = 0; j < N; j++)
            for (size_t k = 0; k < K; k++)
                rows[k * N + j] = panels[(j / onr) * K * onr + k * onr + j % onr];
        pg_ir_set_const_data(t, rows, K * N * sizeof(float));
        t->layout = PG_LAYOUT_ROW_MAJOR;
        t->pack_nr = 0;
        if (nr && packable(g, t->id, nr)) {
            size_t bytes = (N + nr - 1) / nr * K * nr * sizeof(float);
            float *dst = pg_malloc(bytes);
            if (!dst)
                return pg_fail(PG_ERR_NOMEM, "out of memory re-packing weight '%s'", t->name);
            pg_sgemm_pack_panels(K, N, rows, N, nr, dst);
            pg_ir_set_const_data(t, dst, bytes);
            t->layout = PG_LAYOUT_PACKED;
            t->pack_nr = (int)nr;
        }
        ++*repacked;
    }
    return PG_OK;
}
