/* test_builder.c - initializers lent to the graph (pg_graph_add_initializer_view):
 * the graph reads the caller's bytes, pg_compile copies what the model keeps
 * (the model runs right after the graph is freed and the bytes are
 * overwritten) whether the compile read them in place (on a 64-byte
 * boundary: pg_ir_clone_lent) or copied them first (off it), the
 * placeholder path (a node names the weight before it is added) keeps it
 * lent, and a pointer not aligned to the elements is refused by name.
 * Also pg_ir_unique_name with a prefix past its buffer, whose cut is taken
 * (it looped for ever: "prefix_N" cut back to the taken name), and
 * pg_graph_copy + pg_graph_set_input_shape: a checked graph copied with
 * another batch compiles for it, reads the lent weight in place like the
 * original, and leaves the original as it was; a shape for a name that is
 * not an input is refused by name.  pg_compile_options.input_shapes does
 * the same on the original, leaving it at its own shapes.  And a clone's
 * one block of records (pg_graph.block) under new readers and removals,
 * and verification of the reader lists. */
#include <stdint.h>
#include <string.h>

#include "../graph/ir.h"
#include "test_util.h"

#define K 5
#define N 3

/* y = x . w + b for x [1, K], from weights lent (view 1) or copied */
static pg_model *compile_linear(const float *w, const float *b, int view, int weight_first)
{
    pg_graph *g;
    OK(pg_graph_new(&g));
    int64_t xd[2] = { 1, K }, wd[2] = { K, N }, bd[1] = { N };
    OK(pg_graph_add_input(g, "x", PG_DTYPE_FLOAT32, 2, xd));
    pg_status (*add)(pg_graph *, const char *, pg_dtype, int, const int64_t *, const void *) =
        view ? pg_graph_add_initializer_view : pg_graph_add_initializer;
    if (weight_first)
        OK(add(g, "w", PG_DTYPE_FLOAT32, 2, wd, w));
    const char *mm_in[2] = { "x", "w" }, *mm_out[1] = { "xw" };
    OK(pg_graph_add_node(g, "MatMul", "mm", mm_in, 2, mm_out, 1));
    if (!weight_first)
        OK(add(g, "w", PG_DTYPE_FLOAT32, 2, wd, w));
    OK(add(g, "b", PG_DTYPE_FLOAT32, 1, bd, b));
    const char *add_in[2] = { "xw", "b" }, *add_out[1] = { "y" };
    OK(pg_graph_add_node(g, "Add", "bias", add_in, 2, add_out, 1));
    OK(pg_graph_add_output(g, "y"));
    pg_model *m;
    OK(pg_compile(g, NULL, &m));
    pg_graph_free(g);
    return m;
}

static void run(pg_model *m, const float *x, float *y)
{
    const char *names[1] = { "x" };
    const void *data[1] = { x };
    int ranks[1] = { 2 };
    int64_t xd[2] = { 1, K };
    const int64_t *shapes[1] = { xd };
    OK(pg_model_run(m, 1, names, data, ranks, shapes));
    pg_tensor_info out;
    OK(pg_model_output_info(m, 0, &out));
    memcpy(y, out.data, sizeof(float) * N);
}

int main(void)
{
    float w[K * N], b[N], x[K], want[N];
    for (int i = 0; i < K * N; i++)
        w[i] = (float)(i % 7) - 3.0f;
    for (int j = 0; j < N; j++)
        b[j] = 0.5f * (float)j;
    for (int k = 0; k < K; k++)
        x[k] = 1.0f + (float)k;
    for (int j = 0; j < N; j++) {
        want[j] = b[j];
        for (int k = 0; k < K; k++)
            want[j] += x[k] * w[k * N + j];
    }

    static _Alignas(64) float wbuf[K * N + 16], bbuf[N + 16];
    for (int weight_first = 0; weight_first < 2; weight_first++)
        for (int off = 0; off < 2; off++) {   /* on a 64-byte boundary, one float past it */
            float *wl = wbuf + off, *bl = bbuf + off, y[N];
            memcpy(wl, w, sizeof w);
            memcpy(bl, b, sizeof b);
            pg_model *m = compile_linear(wl, bl, 1, weight_first);
            /* the graph is gone; the lent bytes change: the model has its own */
            memset(wl, 0xff, sizeof w);
            memset(bl, 0xff, sizeof b);
            run(m, x, y);
            for (int j = 0; j < N; j++)
                CHECK(y[j] == want[j], "lent weights, weight_first %d, offset %d: y[%d] = %g, "
                      "want %g", weight_first, off, j, y[j], want[j]);
            pg_model_free(m);
        }

    /* lent and copied weights give the same model */
    float yc[N], yv[N];
    pg_model *mc = compile_linear(w, b, 0, 1), *mv = compile_linear(w, b, 1, 1);
    run(mc, x, yc);
    run(mv, x, yv);
    CHECK(memcmp(yc, yv, sizeof yc) == 0, "copied and lent weights differ");
    pg_model_free(mc);
    pg_model_free(mv);

    /* a float pointer off its 4-byte alignment is refused, naming the weight */
    pg_graph *g;
    OK(pg_graph_new(&g));
    int64_t wd[2] = { K, N };
    static float buf[K * N + 1];
    pg_status st = pg_graph_add_initializer_view(g, "w_odd", PG_DTYPE_FLOAT32, 2, wd,
                                                 (const char *)buf + 1);
    CHECK(st == PG_ERR_INVALID_ARG, "misaligned view: status %s", pg_status_name(st));
    CHECK(strstr(pg_last_error(), "w_odd") && strstr(pg_last_error(), "aligned"),
          "misaligned view: message '%s'", pg_last_error());
    pg_graph_free(g);

    /* a copy with another input shape */
    static _Alignas(64) float wl[K * N], bl[N];
    memset(wl, 0, sizeof wl);
    memcpy(bl, b, sizeof b);
    OK(pg_graph_new(&g));
    int64_t x1[2] = { 1, K }, x3[2] = { 3, K }, bd[1] = { N };
    OK(pg_graph_add_input(g, "x", PG_DTYPE_FLOAT32, 2, x1));
    OK(pg_graph_add_initializer_view(g, "w", PG_DTYPE_FLOAT32, 2, wd, wl));
    OK(pg_graph_add_initializer_view(g, "b", PG_DTYPE_FLOAT32, 1, bd, bl));
    const char *mm_in[2] = { "x", "w" }, *mm_out[1] = { "xw" };
    const char *add_in[2] = { "xw", "b" }, *add_out[1] = { "y" };
    OK(pg_graph_add_node(g, "MatMul", "mm", mm_in, 2, mm_out, 1));
    OK(pg_graph_add_node(g, "Add", "bias", add_in, 2, add_out, 1));
    OK(pg_graph_add_output(g, "y"));
    OK(pg_graph_check(g));   /* shapes inferred for batch 1, to be forgotten by the copy */
    pg_graph *g3;
    OK(pg_graph_copy(g, &g3));
    OK(pg_graph_set_input_shape(g3, "x", 2, x3));
    memcpy(wl, w, sizeof w);   /* after the copy: both read it in place */
    pg_model *m1, *m3;
    OK(pg_compile(g3, NULL, &m3));
    OK(pg_compile(g, NULL, &m1));
    pg_tensor_info o1, o3;
    OK(pg_model_output_info(m1, 0, &o1));
    OK(pg_model_output_info(m3, 0, &o3));
    CHECK(o1.rank == 2 && o1.dims[0] == 1 && o3.rank == 2 && o3.dims[0] == 3 && o3.dims[1] == N,
          "outputs of the original and the copy: [%lld, ...] and [%lld, %lld]",
          (long long)o1.dims[0], (long long)o3.dims[0], (long long)o3.dims[1]);
    float x3v[3 * K];
    for (int r = 0; r < 3; r++)
        memcpy(x3v + r * K, x, sizeof x);
    const char *xn[1] = { "x" };
    const void *xdat[1] = { x3v };
    int xr[1] = { 2 };
    const int64_t *xs[1] = { x3 };
    OK(pg_model_run(m3, 1, xn, xdat, xr, xs));
    OK(pg_model_output_info(m3, 0, &o3));
    for (int i = 0; i < 3 * N; i++)
        CHECK(((const float *)o3.data)[i] == want[i % N], "the copy with batch 3: y[%d] = %g, "
              "want %g", i, ((const float *)o3.data)[i], want[i % N]);
    float y1[N];
    run(m1, x, y1);
    CHECK(memcmp(y1, want, sizeof want) == 0, "the original after the copy runs wrong");
    /* the same through pg_compile_options.input_shapes, on the original
     * itself: no copy, the original left at batch 1 (m1 above is compiled
     * after it) */
    const char *xname[1] = { "x" };
    int xrank[1] = { 2 };
    const int64_t *xdims[1] = { x3 };
    pg_compile_options at3 = { .level = 3, .n_input_shapes = 1, .input_shape_names = xname,
                               .input_shape_ranks = xrank, .input_shape_dims = xdims };
    pg_model *m3b;
    OK(pg_compile(g, &at3, &m3b));
    OK(pg_model_run(m3b, 1, xn, xdat, xr, xs));
    pg_tensor_info o3b;
    OK(pg_model_output_info(m3b, 0, &o3b));
    CHECK(o3b.rank == 2 && o3b.dims[0] == 3 && memcmp(o3b.data, o3.data, sizeof(float) * 3 * N) == 0,
          "compiled at batch 3 by its options: [%lld, ...], or other values than the copy's",
          (long long)o3b.dims[0]);
    pg_model_free(m3b);
    OK(pg_graph_check(g));
    CHECK(pg_ir_find_tensor(g, "y") >= 0 && g->tensors[pg_ir_find_tensor(g, "y")]->shape[0] == 1,
          "the original's output is no longer batch 1 after a compile at batch 3");
    const char *bad[1] = { "nope" };
    at3.input_shape_names = bad;
    st = pg_compile(g, &at3, &m3b);
    CHECK(st == PG_ERR_INVALID_ARG && strstr(pg_last_error(), "'nope' is not an input"),
          "an input shape for a name that is not an input: %s, '%s'", pg_status_name(st),
          pg_last_error());
    at3.input_shape_names = NULL;
    CHECK(pg_compile(g, &at3, &m3b) == PG_ERR_INVALID_ARG, "input shapes without names not refused");
    st = pg_graph_set_input_shape(g3, "w", 2, x3);
    CHECK(st == PG_ERR_INVALID_ARG && strstr(pg_last_error(), "'w' is not an input"),
          "a shape for a weight: %s, '%s'", pg_status_name(st), pg_last_error());
    CHECK(pg_graph_set_input_shape(g3, "nope", 2, x3) == PG_ERR_INVALID_ARG &&
          pg_graph_copy(NULL, &g) == PG_ERR_INVALID_ARG, "unknown name / NULL not refused");
    pg_model_free(m1);
    pg_model_free(m3);
    pg_graph_free(g3);
    pg_graph_free(g);

    /* a generated name from a prefix longer than the buffer */
    OK(pg_graph_new(&g));
    char prefix[200], cut[32], gen[32];
    memset(prefix, 'w', sizeof prefix - 1);
    prefix[sizeof prefix - 1] = 0;
    memcpy(cut, prefix, sizeof cut - 1);   /* the prefix cut as the buffer cuts it */
    cut[sizeof cut - 1] = 0;
    int64_t one[1] = { 1 };
    OK(pg_graph_add_input(g, cut, PG_DTYPE_FLOAT32, 1, one));
    for (int i = 0; i < 3; i++) {
        const char *nm = pg_ir_unique_name(g, prefix, gen, sizeof gen);
        CHECK(strlen(nm) < sizeof gen && pg_ir_find_tensor(g, nm) < 0,
              "unique name %d from a long prefix: '%s'", i, nm);
        OK(pg_graph_add_input(g, nm, PG_DTYPE_FLOAT32, 1, one));
    }
    /* a taken short prefix: "_" and the next sequence number */
    OK(pg_graph_add_input(g, "p", PG_DTYPE_FLOAT32, 1, one));
    char seqname[32];
    snprintf(seqname, sizeof seqname, "p_%d", g->name_seq + 1);
    const char *pn = pg_ir_unique_name(g, "p", gen, sizeof gen);
    CHECK(!strcmp(pn, seqname), "unique name from a taken 'p': '%s', not '%s'", pn, seqname);
    pg_graph_free(g);

    /* a clone's records are carved from one block: new readers of a cloned
     * tensor move its reader list out of it, removed nodes and tensors are
     * not freed alone (ASan would see it), and verification checks every
     * reader list against the inputs */
    OK(pg_graph_new(&g));
    OK(pg_graph_add_input(g, "x", PG_DTYPE_FLOAT32, 1, one));
    const char *rx[1] = { "x" }, *ry[1] = { "y" };
    OK(pg_graph_add_node(g, "Relu", "r1", rx, 1, ry, 1));
    OK(pg_graph_add_output(g, "y"));
    pg_graph *c = pg_ir_clone_lent(g);
    CHECK(c && c->block, "a clone without its block");
    int tx = pg_ir_find_tensor(c, "x"), tz = pg_ir_add_tensor(c, "z", PG_DTYPE_FLOAT32, -1, NULL);
    for (int i = 0; i < 3; i++) {   /* x's reader list grows out of the block */
        char nm[8] = { 'n', (char)('0' + i), 0 };
        int id = pg_ir_add_node(c, "Relu", nm, &tx, 1, &tz, 1);
        CHECK(id >= 0 && c->tensors[tx]->n_users == 2 && !c->tensors[tx]->users[0],
              "reader %d of x not added", i);
        if (i < 2)
            pg_ir_remove_node(c, id);
    }
    OK(pg_ir_verify(c));
    c->tensors[tx]->n_users--;
    st = pg_ir_verify(c);
    CHECK(st == PG_ERR_INTERNAL && strstr(pg_last_error(), "tensor 'x': its reader list (1)"),
          "a reader list one short: %s, '%s'", pg_status_name(st), pg_last_error());
    c->tensors[tx]->n_users++;
    pg_ir_remove_node(c, 0);   /* r1, in the block */
    pg_ir_free(c);
    pg_graph_free(g);

    printf("builder: %s\n", failures ? "FAILED" : "ok");
    return failures ? 1 : 0;
}
