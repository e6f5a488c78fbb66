/* ops_resize.c - Resize (nearest, linear, cubic; every coordinate
 * transform of opset 19 and tf_half_pixel_for_nn of 13) and Upsample
 * (opsets 7-9: nearest or linear with the asymmetric transform), float32,
 * any rank, in plain C.
 *
 * The geometry (pg_resize_geometry) follows the ONNX reference
 * implementation: the output size is floor(input * scale) for scales,
 * sizes as given (keep_aspect_ratio_policy applied, rounding half up) for
 * sizes; the coordinate transforms use the resized length scale * input.
 * Interpolation is separable: each output element is the sum over the
 * per-axis taps (1 nearest, 2 linear, 4 cubic) of the product of their
 * weights times the input at the clamped indices, computed in double.
 * antialias (linear, cubic) widens the filter by 1 / scale when
 * downscaling, as the reference does, up to PG_RS_MAX_TAPS taps. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "../core/error.h"
#include "cnn.h"
#include "elem.h"

static pg_status rs_fail(const pg_node *n, pg_status st, const char *fmt, ...) PG_PRINTF(3, 4);
static pg_status rs_fail(const pg_node *n, pg_status st, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return pg_fail(st, "node '%s' (%s): %s", n->name, n->op_type, msg);
}

static int pick(const char *s, const char *const *names, int count)
{
    for (int i = 0; i < count; i++)
        if (!strcmp(s, names[i]))
            return i;
    return -1;
}

static double ld(const pg_tensor *t, const void *v, int64_t i) { return pg_ld_f(t->dtype, v, i); }

pg_status pg_resize_geometry(const pg_node *n, int n_in, const pg_tensor *const *in,
                             const void *const *val, pg_resize_geom *g)
{
    const pg_tensor *x = in[0];
    int r = x->rank, upsample = n->op == PG_OP_UPSAMPLE;
    memset(g, 0, sizeof *g);
    g->rank = r;
    for (int d = 0; d < r; d++) {
        g->in[d] = g->out[d] = x->shape[d];
        g->scale[d] = 1.0;
        g->roi_lo[d] = 0.0;
        g->roi_hi[d] = 1.0;
    }
    static const char *const modes[] = { "nearest", "linear", "cubic" };
    static const char *const ctms[] = { "half_pixel", "half_pixel_symmetric", "pytorch_half_pixel",
                                        "align_corners", "asymmetric", "tf_crop_and_resize",
                                        "tf_half_pixel_for_nn" };
    static const char *const nms[] = { "round_prefer_floor", "round_prefer_ceil", "floor", "ceil" };
    const char *mode = pg_ir_attr_string(n, "mode", "nearest");
    g->mode = pick(mode, modes, 3);
    if (upsample && !strcmp(mode, "bilinear"))
        g->mode = PG_RS_LINEAR;
    if (g->mode < 0 || (upsample && g->mode == PG_RS_CUBIC))
        return rs_fail(n, PG_ERR_UNSUPPORTED, "attribute 'mode' = '%s' is not supported (%s)", mode,
                       upsample ? "nearest, linear" : "nearest, linear, cubic");
    if (upsample) {
        g->ctm = PG_RS_ASYMMETRIC;
        g->nearest = PG_RS_FLOOR;
    } else {
        const char *ctm = pg_ir_attr_string(n, "coordinate_transformation_mode", "half_pixel");
        const char *nm = pg_ir_attr_string(n, "nearest_mode", "round_prefer_floor");
        if ((g->ctm = pick(ctm, ctms, 7)) < 0)
            return rs_fail(n, PG_ERR_UNSUPPORTED, "attribute 'coordinate_transformation_mode' = '%s' is "
                           "not supported", ctm);
        if ((g->nearest = pick(nm, nms, 4)) < 0)
            return rs_fail(n, PG_ERR_UNSUPPORTED, "attribute 'nearest_mode' = '%s' is not supported", nm);
        int64_t aa = pg_ir_attr_int(n, "antialias", 0);
        if (aa != 0 && aa != 1)
            return rs_fail(n, PG_ERR_GRAPH, "attribute 'antialias' is %lld; it must be 0 or 1", (long long)aa);
        if (aa && g->mode == PG_RS_NEAREST)
            return rs_fail(n, PG_ERR_UNSUPPORTED, "attribute 'antialias' = 1 with mode 'nearest' is not "
                           "supported (linear, cubic)");
        g->antialias = (int)aa;
    }
    g->cubic_a = pg_ir_attr_float(n, "cubic_coeff_a", -0.75f);
    g->exclude_outside = pg_ir_attr_int(n, "exclude_outside", 0) != 0;
    g->extrapolation = pg_ir_attr_float(n, "extrapolation_value", 0.0f);
    if (x->dtype != PG_DTYPE_FLOAT32)
        return rs_fail(n, PG_ERR_DTYPE, "input '%s' is %s; %s takes float32", x->name,
                       pg_dtype_name(x->dtype), n->op_type);

    /* the axes resized: the attribute, or all of them */
    int axes[PG_MAX_RANK], na = r, seen[PG_MAX_RANK] = { 0 };
    int acnt = 0;
    const int64_t *av = upsample ? NULL : pg_ir_attr_ints(n, "axes", &acnt);
    if (av && acnt > 0) {
        if (acnt > r)
            return rs_fail(n, PG_ERR_GRAPH, "attribute 'axes' has %d values for rank %d", acnt, r);
        na = acnt;
        for (int i = 0; i < acnt; i++) {
            int a = pg_norm_axis(av[i], r);
            if (a < 0 || seen[a])
                return rs_fail(n, PG_ERR_GRAPH, "attribute 'axes' value %lld is out of range or repeated",
                               (long long)av[i]);
            seen[a] = 1;
            axes[i] = a;
        }
    } else {
        for (int i = 0; i < r; i++) axes[i] = i;
    }
    int s_slot = upsample ? 1 : 2, z_slot = upsample ? -1 : 3;
    const pg_tensor *ts = s_slot < n_in ? in[s_slot] : NULL, *tz = z_slot >= 0 && z_slot < n_in ? in[z_slot] : NULL;
    if (ts && pg_tensor_numel(ts) == 0)
        ts = NULL;
    if (tz && pg_tensor_numel(tz) == 0)
        tz = NULL;
    if (!ts == !tz)
        return rs_fail(n, PG_ERR_GRAPH, "%s", ts ? "give scales or sizes, not both"
                                                 : "neither scales nor sizes is given");
    const void *sv = ts ? val[s_slot] : val[z_slot];
    if (!sv)
        return rs_fail(n, PG_ERR_SHAPE, "%s '%s' must be known at compile time", ts ? "scales" : "sizes",
                       ts ? ts->name : tz->name);
    const pg_tensor *tv = ts ? ts : tz;
    if (pg_tensor_numel(tv) != na)
        return rs_fail(n, PG_ERR_SHAPE, "%s '%s' has %lld values; %d axes are resized", ts ? "scales" : "sizes",
                       tv->name, (long long)pg_tensor_numel(tv), na);
    if (ts) {
        if (!pg_dt_is_float(ts->dtype))
            return rs_fail(n, PG_ERR_DTYPE, "scales '%s' must be float, not %s", ts->name, pg_dtype_name(ts->dtype));
        for (int i = 0; i < na; i++) {
            double s = ld(ts, sv, i);
            int a = axes[i];
            if (!(s > 0) || s * (double)g->in[a] > 1e12)
                return rs_fail(n, PG_ERR_SHAPE, "scale %g on axis %d is not a positive, finite factor", s, a);
            g->scale[a] = s;
            g->out[a] = (int64_t)(s * (double)g->in[a]);
        }
    } else {
        if (tz->dtype != PG_DTYPE_INT64)
            return rs_fail(n, PG_ERR_DTYPE, "sizes '%s' must be int64, not %s", tz->name, pg_dtype_name(tz->dtype));
        const char *kp = pg_ir_attr_string(n, "keep_aspect_ratio_policy", "stretch");
        static const char *const kps[] = { "stretch", "not_larger", "not_smaller" };
        int kpm = pick(kp, kps, 3);
        if (kpm < 0)
            return rs_fail(n, PG_ERR_UNSUPPORTED, "attribute 'keep_aspect_ratio_policy' = '%s' is not "
                           "supported", kp);
        double ext = kpm == 1 ? INFINITY : -INFINITY;
        for (int i = 0; i < na; i++) {
            int64_t z = ((const int64_t *)sv)[i];
            int a = axes[i];
            if (z < 1 || z > ((int64_t)1 << 40))
                return rs_fail(n, PG_ERR_SHAPE, "size %lld on axis %d is not supported", (long long)z, a);
            if (g->in[a] < 1)   /* no source pixel to sample (the scale would be infinite) */
                return rs_fail(n, PG_ERR_SHAPE, "axis %d is empty: size %lld cannot be sampled from it", a,
                               (long long)z);
            g->out[a] = z;
            g->scale[a] = (double)z / (double)g->in[a];
            if (kpm == 1 && g->scale[a] < ext) ext = g->scale[a];
            if (kpm == 2 && g->scale[a] > ext) ext = g->scale[a];
        }
        if (kpm) {
            for (int i = 0; i < na; i++) {
                int a = axes[i];
                g->scale[a] = ext;
                g->out[a] = (int64_t)(ext * (double)g->in[a] + 0.5);
            }
        }
    }
    for (int d = 0; d < r; d++) {
        if (g->out[d] < 1)
            return rs_fail(n, PG_ERR_SHAPE, "output dim %d would be %lld", d, (long long)g->out[d]);
        g->length[d] = g->scale[d] * (double)g->in[d];
        double support = g->mode == PG_RS_CUBIC ? 4.0 : 2.0;
        if (g->antialias && g->scale[d] < 1 && support / g->scale[d] + 2 > PG_RS_MAX_TAPS)
            return rs_fail(n, PG_ERR_UNSUPPORTED, "attribute 'antialias' = 1 with a downscale of %g on axis "
                           "%d is not supported (at most 1/%g)", g->scale[d], d,
                           (PG_RS_MAX_TAPS - 2) / support);
    }
    if (g->ctm == PG_RS_TF_CROP_AND_RESIZE) {
        const pg_tensor *troi = n_in > 1 ? in[1] : NULL;
        if (!troi || pg_tensor_numel(troi) == 0)
            return rs_fail(n, PG_ERR_GRAPH, "coordinate_transformation_mode 'tf_crop_and_resize' needs roi");
        if (!val[1])
            return rs_fail(n, PG_ERR_SHAPE, "roi '%s' must be known at compile time", troi->name);
        if (!pg_dt_is_float(troi->dtype) || pg_tensor_numel(troi) != 2 * na)
            return rs_fail(n, PG_ERR_SHAPE, "roi '%s' must hold %d float values", troi->name, 2 * na);
        for (int i = 0; i < na; i++) {
            g->roi_lo[axes[i]] = ld(troi, val[1], i);
            g->roi_hi[axes[i]] = ld(troi, val[1], na + i);
        }
    }
    for (int d = 0; d < r; d++)
        g->identity[d] = g->out[d] == g->in[d] && fabs(g->scale[d] - 1.0) < 1e-9 &&
                         (g->ctm != PG_RS_TF_CROP_AND_RESIZE ||
                          (fabs(g->roi_lo[d]) < 1e-9 && fabs(g->roi_hi[d] - 1.0) < 1e-9));
    return PG_OK;
}

/* The source coordinate of output index y along axis d; *extra set when
 * tf_crop_and_resize falls outside the input. */
static double source_coord(const pg_resize_geom *g, int d, int64_t y, int *extra)
{
    double s = g->scale[d], L = g->length[d], in = (double)g->in[d], yy = (double)y, x;
    switch (g->ctm) {
    case PG_RS_ALIGN_CORNERS:
        x = L == 1 ? 0.0 : yy * (in - 1) / (L - 1);
        break;
    case PG_RS_ASYMMETRIC:
        x = yy / s;
        break;
    case PG_RS_TF_CROP_AND_RESIZE: {
        double lo = g->roi_lo[d], hi = g->roi_hi[d];
        x = (L == 1 ? (hi - lo) * (in - 1) / 2 : yy * (hi - lo) * (in - 1) / (L - 1)) + lo * (in - 1);
        if (x < 0 || x > in - 1)
            *extra = 1;
        break;
    }
    case PG_RS_PYTORCH_HALF_PIXEL:
        x = L == 1 ? -0.5 : (yy + 0.5) / s - 0.5;
        break;
    case PG_RS_HALF_PIXEL_SYMMETRIC: {
        double adj = (double)g->out[d] / L, center = in / 2;
        x = center * (1 - adj) + (yy + 0.5) / s - 0.5;
        break;
    }
    case PG_RS_TF_HALF_PIXEL_FOR_NN:
        x = (yy + 0.5) / s;
        break;
    default:   /* half_pixel */
        x = (yy + 0.5) / s - 0.5;
        break;
    }
    return x;
}

static int64_t clampi(int64_t v, int64_t n) { return v < 0 ? 0 : v >= n ? n - 1 : v; }

static double cubic_coeff(double A, double a)
{
    a = fabs(a);
    return a <= 1 ? ((A + 2) * a - (A + 3)) * a * a + 1 : a < 2 ? ((A * a - 5 * A) * a + 8 * A) * a - 4 * A : 0;
}

/* Antialiased linear / cubic taps of source coordinate x (scale < 1): the
 * filter stretched by 1 / scale around x, normalised, as the reference:
 * base = the input index left of x (x itself counts as right of it). */
static int antialias_taps(const pg_resize_geom *g, int d, double x, int64_t *idx, double *wt)
{
    int64_t n = g->in[d];
    double s = g->scale[d] < 1 ? g->scale[d] : 1.0, base = ceil(x) - 1, ratio = x - base, sum = 0;
    double support = g->mode == PG_RS_CUBIC ? 2.0 : 1.0;
    int64_t start = (int64_t)floor(-support / s) + 1, count = 2 - 2 * start;
    for (int64_t i = 0; i < count; i++) {
        double a = s * ((double)(start + i) - ratio);
        double c = g->mode == PG_RS_CUBIC ? cubic_coeff(g->cubic_a, a) : (fabs(a) < 1 ? 1 - fabs(a) : 0);
        wt[i] = c;
        sum += c;
    }
    for (int64_t i = 0; i < count; i++) wt[i] = sum != 0 ? wt[i] / sum : 0;
    sum = 0;
    for (int64_t i = 0; i < count; i++) {
        int64_t p = (int64_t)base + start + i;
        if (g->exclude_outside && (p < 0 || p >= n))
            wt[i] = 0;
        sum += wt[i];
        idx[i] = clampi(p, n);
    }
    if (g->exclude_outside && sum != 0)
        for (int64_t i = 0; i < count; i++) wt[i] /= sum;
    return (int)count;
}

/* Taps of output index y along axis d: up to PG_RS_MAX_TAPS (index,
 * weight) pairs (1 nearest, 2 linear, 4 cubic unless antialiased). */
static int axis_taps(const pg_resize_geom *g, int d, int64_t y, int64_t *idx, double *wt, int *extra)
{
    if (g->identity[d]) {
        idx[0] = y;
        wt[0] = 1.0;
        return 1;
    }
    int64_t n = g->in[d];
    double x = source_coord(g, d, y, extra);
    if (g->antialias && g->scale[d] < 1)
        return antialias_taps(g, d, x, idx, wt);
    double f = floor(x), r = x - f;
    int64_t xi = (int64_t)f;
    if (g->mode == PG_RS_NEAREST) {
        int64_t p = xi;
        if (r != 0) {
            switch (g->nearest) {
            case PG_RS_ROUND_PREFER_FLOOR: p = r <= 0.5 ? xi : xi + 1; break;
            case PG_RS_ROUND_PREFER_CEIL: p = r < 0.5 ? xi : xi + 1; break;
            case PG_RS_FLOOR: p = xi; break;
            default: p = xi + 1; break;
            }
        }
        idx[0] = clampi(p, n);
        wt[0] = 1.0;
        return 1;
    }
    if (g->mode == PG_RS_LINEAR) {
        idx[0] = clampi(xi, n);
        idx[1] = clampi(xi + 1, n);
        wt[0] = 1 - r;
        wt[1] = r;
        return 2;
    }
    double t[4] = { r + 1, r, 1 - r, 2 - r }, sum = 0;
    for (int i = 0; i < 4; i++) {
        wt[i] = cubic_coeff(g->cubic_a, t[i]);
        int64_t p = xi - 1 + i;
        if (g->exclude_outside && (p < 0 || p >= n))
            wt[i] = 0;
        sum += wt[i];
        idx[i] = clampi(p, n);
    }
    if (g->exclude_outside && sum != 0)
        for (int i = 0; i < 4; i++) wt[i] /= sum;
    return 4;
}

pg_status pg_exec_resize(pg_kctx *k)
{
    pg_resize_geom g;
    pg_status st = pg_resize_geometry(k->node, k->n_in, k->in, k->x, &g);
    if (st)
        return st;
    int r = g.rank;
    const float *X = k->x[0];
    float *Y = k->y[0];
    int64_t total = pg_tensor_numel(k->out[0]), xs[PG_MAX_RANK], oi[PG_MAX_RANK] = { 0 };
    int64_t s = 1;
    for (int d = r - 1; d >= 0; d--) {
        xs[d] = s;
        s *= g.in[d];
    }
    for (int64_t o = 0; o < total; o++) {
        int64_t idx[PG_MAX_RANK][PG_RS_MAX_TAPS];
        double wt[PG_MAX_RANK][PG_RS_MAX_TAPS];
        int nt[PG_MAX_RANK], extra = 0;
        for (int d = 0; d < r; d++)
            nt[d] = axis_taps(&g, d, oi[d], idx[d], wt[d], &extra);
        double acc = 0;
        if (extra) {
            acc = g.extrapolation;
        } else {
            int c[PG_MAX_RANK] = { 0 };
            for (;;) {   /* every combination of the axes' taps */
                double w = 1;
                int64_t off = 0;
                for (int d = 0; d < r; d++) {
                    w *= wt[d][c[d]];
                    off += idx[d][c[d]] * xs[d];
                }
                if (w != 0)
                    acc += w * X[off];
                int d = r - 1;
                for (; d >= 0; d--) {
                    if (++c[d] < nt[d])
                        break;
                    c[d] = 0;
                }
                if (d < 0)
                    break;
            }
        }
        Y[o] = (float)acc;
        for (int d = r - 1; d >= 0; d--) {
            if (++oi[d] < g.out[d])
                break;
            oi[d] = 0;
        }
    }
    return PG_OK;
}
