/* op.c — operator builders, validation, and the spec parser.
 *
 * Spec grammar (docs/CLI.md, "Spec grammar"):
 *   spec   := opname { ws key '=' value }
 *   value  := integer | float
 * Keys are case-sensitive as listed per operator; each key may appear once.
 */
#include "ir/ir.h"

#include <ctype.h>
#include <stdarg.h>
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Largest extent of one axis. Kernels index with 32-bit ints per axis. */
#define GS_MAX_EXTENT 2147483647LL

int64_t gs_tensor_elems(const gs_tensor *t) {
    int64_t n = 1;
    for (int d = 0; d < t->ndim; d++) {
        if (__builtin_mul_overflow(n, t->shape[d], &n)) return -1;
    }
    return n;
}

int64_t gs_op_bias_elems(const gs_op *op) {
    if (!op->has_bias || op->epi.bias_axis < 0) return 0;
    int64_t n = op->axes[op->epi.bias_axis].extent;
    return op->bias_group ? n * op->axes[op->bias_group - 1].extent : n;
}

gs_status gs_op_validate(gs_ctx *ctx, const gs_op *op) {
    if (op->naxes < 1 || op->naxes > GS_MAX_AXES)
        return gs_err(ctx, GS_ERR_INVALID_ARG, "operator has %d axes (1..%d allowed)", op->naxes, GS_MAX_AXES);
    if (op->ninputs < 1 || op->ninputs + 1 > GS_MAX_TENSORS)
        return gs_err(ctx, GS_ERR_INVALID_ARG, "operator has %d inputs (1..%d allowed)", op->ninputs,
                      GS_MAX_TENSORS - 1);
    if (op->math > GS_MATH_TF32 || (op->math && gs_op_typed(op)))
        return gs_err(ctx, GS_ERR_INVALID_ARG, "operator has math %d (tf32 takes f32 tensors only)", op->math);
    if (op->dtype_in >= GS_DTYPE_COUNT || op->dtype_out >= GS_DTYPE_COUNT)
        return gs_err(ctx, GS_ERR_INVALID_ARG, "operator has unknown element types %d/%d", op->dtype_in, op->dtype_out);
    int nspatial = 0;
    for (int a = 0; a < op->naxes; a++) {
        const gs_axis *ax = &op->axes[a];
        if (ax->extent <= 0 || ax->extent > GS_MAX_EXTENT)
            return gs_err(ctx, GS_ERR_BAD_SHAPE, "axis %s has extent %lld (must be 1..%lld)", ax->name,
                          (long long)ax->extent, (long long)GS_MAX_EXTENT);
        if (ax->kind == GS_AXIS_SPATIAL) nspatial++;
    }
    if (nspatial == 0) return gs_err(ctx, GS_ERR_INVALID_ARG, "operator has no spatial axis");
    for (int t = 0; t <= op->ninputs; t++) {
        const gs_tensor *ts = &op->tensors[t];
        if (ts->ndim < 1 || ts->ndim > GS_MAX_DIMS)
            return gs_err(ctx, GS_ERR_INVALID_ARG, "tensor %s has %d dims (1..%d allowed)", ts->name, ts->ndim,
                          GS_MAX_DIMS);
        for (int d = 0; d < ts->ndim; d++)
            if (ts->shape[d] <= 0 || ts->shape[d] > GS_MAX_EXTENT)
                return gs_err(ctx, GS_ERR_BAD_SHAPE, "tensor %s dim %d has extent %lld", ts->name, d,
                              (long long)ts->shape[d]);
        int64_t n = gs_tensor_elems(ts);
        /* 2^40 floats = 4 TiB: beyond any device; also keeps byte counts in int64 */
        if (n < 0 || n > (1LL << 40))
            return gs_err(ctx, GS_ERR_BAD_SHAPE, "tensor %s is too large (%s elements)", ts->name,
                          n < 0 ? "overflowing" : ">2^40");
    }
    const gs_tensor *out = gs_op_out(op);
    for (int a = 0; a < op->naxes; a++)
        if (op->axes[a].kind == GS_AXIS_REDUCE && gs_tensor_uses_axis(out, a))
            return gs_err(ctx, GS_ERR_INVALID_ARG, "output %s is indexed by reduce axis %s", out->name,
                          op->axes[a].name);
    if (op->combine == GS_COMBINE_MAC && op->ninputs < 1)
        return gs_err(ctx, GS_ERR_INVALID_ARG, "multiply-accumulate needs inputs");
    if ((int)op->combine < 0 || op->combine > GS_COMBINE_PRELU)
        return gs_err(ctx, GS_ERR_INVALID_ARG, "unknown combine %d", (int)op->combine);
    if (gs_combine_eltwise(op->combine)) {
        bool two = op->combine != GS_COMBINE_MAXE && op->combine != GS_COMBINE_MINE;
        if (two ? op->ninputs != 2 : op->ninputs < 2)
            return gs_err(ctx, GS_ERR_INVALID_ARG, "sub/div/pow/prelu combine takes exactly two inputs, max/min two or more");
        for (int a = 0; a < op->naxes; a++)
            if (op->axes[a].kind == GS_AXIS_REDUCE)
                return gs_err(ctx, GS_ERR_INVALID_ARG, "sub/div combine is element-wise (reduce axis %s)",
                              op->axes[a].name);
    }
    if (op->unary >= GS_UN_COUNT || !isfinite(op->unary_p) ||
        (op->unary == GS_UN_CELU && op->unary_p == 0.0f))
        return gs_err(ctx, GS_ERR_INVALID_ARG, "unary function %d with parameter %g is invalid", (int)op->unary,
                      (double)op->unary_p);
    if ((op->combine == GS_COMBINE_SUM || op->combine == GS_COMBINE_MAX || op->combine == GS_COMBINE_MIN) &&
        op->ninputs != 1)
        return gs_err(ctx, GS_ERR_INVALID_ARG, "sum/max/min combine takes exactly one input");
    /* a bias is a vector over one spatial axis of the output */
    if (op->has_bias || op->epi.bias_axis >= 0) {
        int b = op->epi.bias_axis;
        if (!op->has_bias || b < 0 || b >= op->naxes)
            return gs_err(ctx, GS_ERR_INVALID_ARG, "bias axis %d is invalid: a bias needs has_bias and an axis in 0..%d (has_bias=%d)",
                          b, op->naxes - 1, (int)op->has_bias);
        if (op->axes[b].kind != GS_AXIS_SPATIAL)
            return gs_err(ctx, GS_ERR_INVALID_ARG, "bias axis %s is a reduce axis; a bias indexes the output", op->axes[b].name);
    }
    if (op->bias_group) {
        int g = op->bias_group - 1;
        if (!op->has_bias || op->epi.bias_axis < 0 || g >= op->naxes || g == op->epi.bias_axis ||
            op->axes[g].kind != GS_AXIS_SPATIAL)
            return gs_err(ctx, GS_ERR_INVALID_ARG, "bias group axis %d is invalid: a spatial axis other than the bias "
                          "axis, with a bias", g);
    }
    /* counting the in-bounds reduce points per output is a product over the
     * reduce axes only when each of input 0's dims uses at most one of them
     * and each of them at most one dim (a pooling window) */
    if (op->epi.count_valid) {
        if (op->combine != GS_COMBINE_SUM)
            return gs_err(ctx, GS_ERR_UNSUPPORTED, "count_valid: only a sum combine divides by its in-bounds points");
        const gs_tensor *in = &op->tensors[0];
        int dims_of[GS_MAX_AXES] = {0};
        for (int d = 0; d < in->ndim; d++) {
            int used = 0;
            for (int a = 0; a < op->naxes; a++)
                if (op->axes[a].kind == GS_AXIS_REDUCE && in->idx[d].coeff[a]) {
                    used++;
                    dims_of[a]++;
                }
            if (used > 1)
                return gs_err(ctx, GS_ERR_UNSUPPORTED, "count_valid: dim %d of %s uses %d reduce axes (one at most)",
                              d, in->name, used);
        }
        for (int a = 0; a < op->naxes; a++)
            if (dims_of[a] > 1)
                return gs_err(ctx, GS_ERR_UNSUPPORTED, "count_valid: reduce axis %s indexes %d dims of %s (one at most)",
                              op->axes[a].name, dims_of[a], in->name);
    }
    return GS_OK;
}

/* ---- builders -------------------------------------------------------------- */
static void set_axis(gs_op *op, int a, const char *name, int64_t extent, gs_axis_kind kind) {
    snprintf(op->axes[a].name, GS_NAME_LEN, "%s", name);
    op->axes[a].extent = extent;
    op->axes[a].kind = kind;
}

/* A tensor dimension indexed by a single axis with coefficient 1. */
static void set_dim(gs_tensor *t, int d, int64_t shape, int axis) {
    t->shape[d] = shape;
    memset(&t->idx[d], 0, sizeof t->idx[d]);
    t->idx[d].coeff[axis] = 1;
}

static void set_tensor(gs_tensor *t, const char *name, int ndim) {
    snprintf(t->name, GS_NAME_LEN, "%s", name);
    t->ndim = ndim;
}

/* A (batched) matrix product over the axes m, n (spatial) and k (reduce),
 * after `batch` leading batch axes that every tensor's leading dims index:
 * C = op(A)·op(B), op(A) M x K (A stored [M,K], or [K,M] when transposed),
 * op(B) K x N, C M x N; the epilogue alpha·acc + beta·C_old. */
static void set_matmul(gs_op *op, int batch, int64_t M, int64_t N, int64_t K, int transA, int transB, float alpha,
                       float beta) {
    const int m = batch, n = batch + 1, k = batch + 2, d = batch; /* axes, then the matrix dims */
    op->naxes = batch + 3;
    set_axis(op, m, "m", M, GS_AXIS_SPATIAL);
    set_axis(op, n, "n", N, GS_AXIS_SPATIAL);
    set_axis(op, k, "k", K, GS_AXIS_REDUCE);
    op->ninputs = 2;
    gs_tensor *A = &op->tensors[0], *B = &op->tensors[1], *C = &op->tensors[2];
    set_tensor(A, "A", batch + 2);
    set_tensor(B, "B", batch + 2);
    set_tensor(C, "C", batch + 2);
    if (transA) { set_dim(A, d, K, k); set_dim(A, d + 1, M, m); }
    else        { set_dim(A, d, M, m); set_dim(A, d + 1, K, k); }
    if (transB) { set_dim(B, d, N, n); set_dim(B, d + 1, K, k); }
    else        { set_dim(B, d, K, k); set_dim(B, d + 1, N, n); }
    set_dim(C, d, M, m);
    set_dim(C, d + 1, N, n);
    op->combine = GS_COMBINE_MAC;
    op->epi = (gs_epilogue){alpha, beta, -1, 0, 0};
    op->transA = transA != 0;
    op->transB = transB != 0;
}

static gs_status finish(gs_ctx *ctx, gs_op *op, gs_op_kind kind, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static gs_status finish(gs_ctx *ctx, gs_op *op, gs_op_kind kind, const char *fmt, ...) {
    op->kind = kind;
    va_list ap;
    va_start(ap, fmt);
    gs_vsnprintf_c(op->spec, sizeof op->spec, fmt, ap); /* '.' in any locale: the spec is read back */
    va_end(ap);
    return gs_op_validate(ctx, op);
}

gs_status gs_op_build_gemm(gs_ctx *ctx, gs_op *op, int64_t M, int64_t N, int64_t K, int transA, int transB,
                           float alpha, float beta) {
    memset(op, 0, sizeof *op);
    set_matmul(op, 0, M, N, K, transA, transB, alpha, beta);
    return finish(ctx, op, GS_OPK_GEMM, "gemm M=%lld N=%lld K=%lld transA=%d transB=%d alpha=%.9g beta=%.9g",
                  (long long)M, (long long)N, (long long)K, op->transA, op->transB, alpha, beta);
}

/* ---- more builders: every class is data over the same IR -------------------------- */
gs_status gs_op_build_bgemm(gs_ctx *ctx, gs_op *op, int64_t Bt, int64_t M, int64_t N, int64_t K, int transA,
                            int transB, float alpha, float beta) {
    memset(op, 0, sizeof *op);
    /* axis b first, indexing every tensor's dim 0; the matrices after it */
    set_matmul(op, 1, M, N, K, transA, transB, alpha, beta);
    set_axis(op, 0, "b", Bt, GS_AXIS_SPATIAL);
    for (int t = 0; t < 3; t++) set_dim(&op->tensors[t], 0, Bt, 0);
    return finish(ctx, op, GS_OPK_BGEMM, "bgemm B=%lld M=%lld N=%lld K=%lld transA=%d transB=%d alpha=%.9g beta=%.9g",
                  (long long)Bt, (long long)M, (long long)N, (long long)K, op->transA, op->transB, alpha, beta);
}

/* Two axes: m (spatial, M) and k (reduce, K), zeroing op first: a matrix
 * reduced along its rows (gemv, row reductions). */
enum { MK_M = 0, MK_K = 1 };
static void set_mk(gs_op *op, int64_t M, int64_t K) {
    memset(op, 0, sizeof *op);
    op->naxes = 2;
    set_axis(op, MK_M, "m", M, GS_AXIS_SPATIAL);
    set_axis(op, MK_K, "k", K, GS_AXIS_REDUCE);
}

gs_status gs_op_build_gemv(gs_ctx *ctx, gs_op *op, int64_t M, int64_t N, int transA, float alpha, float beta) {
    enum { m = MK_M, k = MK_K };
    set_mk(op, M, N);
    op->ninputs = 2;
    gs_tensor *A = &op->tensors[0], *x = &op->tensors[1], *y = &op->tensors[2];
    set_tensor(A, "A", 2);
    set_tensor(x, "x", 1);
    set_tensor(y, "y", 1);
    if (transA) { set_dim(A, 0, N, k); set_dim(A, 1, M, m); }
    else        { set_dim(A, 0, M, m); set_dim(A, 1, N, k); }
    set_dim(x, 0, N, k);
    set_dim(y, 0, M, m);
    op->combine = GS_COMBINE_MAC;
    op->epi = (gs_epilogue){alpha, beta, -1, 0, 0};
    op->transA = transA != 0;
    return finish(ctx, op, GS_OPK_GEMV, "gemv M=%lld N=%lld transA=%d alpha=%.9g beta=%.9g", (long long)M, (long long)N,
                  op->transA, alpha, beta);
}

/* Output extent of a window along one spatial dim, or an error when the
 * dilated window does not fit the padded input. */
static gs_status window_out(gs_ctx *ctx, const char *opn, const char *dim, int64_t in, int64_t k, int64_t stride,
                            int64_t dil, int64_t pad0, int64_t pad1, int64_t *out) {
    int64_t span = dil * (k - 1) + 1, padded = in + pad0 + pad1;
    if (span > padded)
        return gs_err(ctx, GS_ERR_BAD_SHAPE,
                      "%s: kernel %lld along %s (dilated extent %lld) is larger than the padded input %lld (%lld + pad %lld + %lld)",
                      opn, (long long)k, dim, (long long)span, (long long)padded, (long long)in, (long long)pad0,
                      (long long)pad1);
    *out = (padded - span) / stride + 1;
    return GS_OK;
}

/* The window's rules beyond its extents: pooling padding, count_include_pad,
 * groups (conv2d only, dividing C and K). */
static gs_status window_rules(gs_ctx *ctx, const gs_window *w, const char *opn) {
    /* pooling padding: at most half the dilated window on each side (PyTorch's
     * rule; ONNX Runtime's is looser), so a window reaches at most halfway
     * into the padding */
    if (w->kind >= GS_WIN_AVGPOOL) {
        int64_t spanh = w->dh * (w->R - 1) + 1, spanw = w->dw * (w->S - 1) + 1;
        int64_t ph = w->pt > w->pb ? w->pt : w->pb, pw = w->pl > w->pr ? w->pl : w->pr;
        if (2 * ph > spanh || 2 * pw > spanw) {
            bool h = 2 * ph > spanh;
            return gs_err(ctx, GS_ERR_INVALID_ARG,
                          "%s: padding %lld along %s is more than half the dilated window %lld (kernel %lld, dilation %lld)",
                          opn, (long long)(h ? ph : pw), h ? "H" : "W", (long long)(h ? spanh : spanw),
                          (long long)(h ? w->R : w->S), (long long)(h ? w->dh : w->dw));
        }
    }
    if (w->exclude_pad && w->kind != GS_WIN_AVGPOOL)
        return gs_err(ctx, GS_ERR_INVALID_ARG, "%s: count_include_pad applies to average pooling only", opn);
    if (w->groups > 1 && w->kind != GS_WIN_CONV)
        return gs_err(ctx, GS_ERR_INVALID_ARG, "%s: groups applies to conv2d only", opn);
    if (w->groups < 0 || (w->groups > 1 && (w->C % w->groups || w->K % w->groups)))
        return gs_err(ctx, GS_ERR_INVALID_ARG, "%s: groups=%lld must divide both C=%lld and K=%lld", opn,
                      (long long)w->groups, (long long)w->C, (long long)w->K);
    return GS_OK;
}

gs_status gs_op_build_window(gs_ctx *ctx, gs_op *op, const gs_window *w) {
    memset(op, 0, sizeof *op);
    static const char *names[] = {"conv2d", "dwconv2d", "avgpool2d", "maxpool2d"};
    const char *opn = names[w->kind];
    int64_t P = 0, Q = 0;
    gs_status s = window_out(ctx, opn, "H", w->H, w->R, w->sh, w->dh, w->pt, w->pb, &P);
    if (s == GS_OK) s = window_out(ctx, opn, "W", w->W, w->S, w->sw, w->dw, w->pl, w->pr, &Q);
    if (s != GS_OK) return s;
    bool nhwc = w->nhwc, conv = w->kind == GS_WIN_CONV, pool = w->kind >= GS_WIN_AVGPOOL;
    s = window_rules(ctx, w, opn);
    if (s != GS_OK) return s;
    const int64_t G = conv && w->groups > 1 ? w->groups : 1;
    /* axes: the output's innermost dim last, so threads coalesce on it */
    enum { n = 0 };
    int c_or_k, p, q, g = -1; /* g: the group axis of a grouped conv, before k */
    int a = 0;
    set_axis(op, a++, "n", w->N, GS_AXIS_SPATIAL);
    if (nhwc) {
        p = a++;
        q = a++;
        if (G > 1) g = a++;
        c_or_k = a++;
    } else {
        if (G > 1) g = a++;
        c_or_k = a++;
        p = a++;
        q = a++;
    }
    if (g >= 0) set_axis(op, g, "g", G, GS_AXIS_SPATIAL);
    set_axis(op, c_or_k, conv ? "k" : "c", conv ? w->K / G : w->C, GS_AXIS_SPATIAL);
    set_axis(op, p, "p", P, GS_AXIS_SPATIAL);
    set_axis(op, q, "q", Q, GS_AXIS_SPATIAL);
    int c = -1;
    if (conv) { c = a; set_axis(op, a++, "c", w->C / G, GS_AXIS_REDUCE); }
    int r = a, sx = a + 1;
    set_axis(op, a++, "r", w->R, GS_AXIS_REDUCE);
    set_axis(op, a++, "s", w->S, GS_AXIS_REDUCE);
    op->naxes = a;
    int ch = conv ? c : c_or_k; /* the axis that indexes input channels */
    gs_tensor *I = &op->tensors[0];
    set_tensor(I, "I", 4);
    gs_affine hrow = {{0}, -w->pt}, wcol = {{0}, -w->pl};
    hrow.coeff[p] = w->sh; hrow.coeff[r] = w->dh;
    wcol.coeff[q] = w->sw; wcol.coeff[sx] = w->dw;
    set_dim(I, 0, w->N, n);
    if (nhwc) {
        I->shape[1] = w->H; I->idx[1] = hrow;
        I->shape[2] = w->W; I->idx[2] = wcol;
        set_dim(I, 3, w->C, ch);
    } else {
        set_dim(I, 1, w->C, ch);
        I->shape[2] = w->H; I->idx[2] = hrow;
        I->shape[3] = w->W; I->idx[3] = wcol;
    }
    if (g >= 0) I->idx[nhwc ? 3 : 1].coeff[g] = w->C / G; /* input channel g*C/G + c */
    op->ninputs = 1;
    if (!pool) {
        gs_tensor *F = &op->tensors[1];
        set_tensor(F, "F", conv ? 4 : 3);
        if (conv && !nhwc) { set_dim(F, 0, w->K, c_or_k); set_dim(F, 1, w->C / G, c); set_dim(F, 2, w->R, r); set_dim(F, 3, w->S, sx); }
        if (conv && nhwc)  { set_dim(F, 0, w->K, c_or_k); set_dim(F, 1, w->R, r); set_dim(F, 2, w->S, sx); set_dim(F, 3, w->C / G, c); }
        if (g >= 0) F->idx[0].coeff[g] = w->K / G; /* filter g*K/G + k */
        if (!conv && !nhwc) { set_dim(F, 0, w->C, c_or_k); set_dim(F, 1, w->R, r); set_dim(F, 2, w->S, sx); }
        if (!conv && nhwc)  { set_dim(F, 0, w->R, r); set_dim(F, 1, w->S, sx); set_dim(F, 2, w->C, c_or_k); }
        op->ninputs = 2;
    }
    gs_tensor *O = &op->tensors[op->ninputs];
    set_tensor(O, "O", 4);
    set_dim(O, 0, w->N, n);
    if (nhwc) { set_dim(O, 1, P, p); set_dim(O, 2, Q, q); set_dim(O, 3, conv ? w->K : w->C, c_or_k); }
    else      { set_dim(O, 1, conv ? w->K : w->C, c_or_k); set_dim(O, 2, P, p); set_dim(O, 3, Q, q); }
    if (g >= 0) O->idx[nhwc ? 3 : 1].coeff[g] = w->K / G; /* output channel g*K/G + k */
    op->combine = w->kind == GS_WIN_MAXPOOL ? GS_COMBINE_MAX : w->kind == GS_WIN_AVGPOOL ? GS_COMBINE_SUM : GS_COMBINE_MAC;
    /* average pooling counts padded cells (count_include_pad=1): a fixed
     * 1/(R*S); with exclude_pad each window divides by its in-bounds cells */
    bool avg = w->kind == GS_WIN_AVGPOOL, fixed = avg && !w->exclude_pad;
    op->epi = (gs_epilogue){fixed ? 1.0f / (float)(w->R * w->S) : 1.0f, 0.0f, -1, w->relu, avg && w->exclude_pad};
    if (w->bias && !pool) {
        op->has_bias = true;
        op->epi.bias_axis = c_or_k;
        if (g >= 0) op->bias_group = (uint8_t)(g + 1); /* bias[g*K/G + k] */
    }
    char head[200], grp[40] = "";
    if (G > 1) snprintf(grp, sizeof grp, " groups=%lld", (long long)G);
    if (pool)
        snprintf(head, sizeof head, "%s N=%lld C=%lld H=%lld W=%lld R=%lld S=%lld", opn, (long long)w->N,
                 (long long)w->C, (long long)w->H, (long long)w->W, (long long)w->R, (long long)w->S);
    else if (conv)
        snprintf(head, sizeof head, "%s N=%lld C=%lld H=%lld W=%lld K=%lld R=%lld S=%lld%s", opn, (long long)w->N,
                 (long long)w->C, (long long)w->H, (long long)w->W, (long long)w->K, (long long)w->R, (long long)w->S,
                 grp);
    else
        snprintf(head, sizeof head, "%s N=%lld C=%lld H=%lld W=%lld R=%lld S=%lld", opn, (long long)w->N,
                 (long long)w->C, (long long)w->H, (long long)w->W, (long long)w->R, (long long)w->S);
    static const gs_op_kind kinds[] = {GS_OPK_CONV2D, GS_OPK_DWCONV2D, GS_OPK_POOL, GS_OPK_POOL};
    return finish(ctx, op, kinds[w->kind],
                  "%s strideh=%lld stridew=%lld pad_top=%lld pad_bottom=%lld pad_left=%lld pad_right=%lld dilh=%lld "
                  "dilw=%lld layout=%s%s%s%s",
                  head, (long long)w->sh, (long long)w->sw, (long long)w->pt, (long long)w->pb, (long long)w->pl,
                  (long long)w->pr, (long long)w->dh, (long long)w->dw, nhwc ? "nhwc" : "nchw",
                  op->has_bias ? " bias=1" : "", w->relu ? " relu=1" : "",
                  op->epi.count_valid ? " count_include_pad=0" : "");
}

int64_t gs_op_out_points(const gs_op *op) {
    int64_t n = 1;
    for (int a = 0; a < op->naxes; a++)
        if (op->axes[a].kind == GS_AXIS_SPATIAL) n *= op->axes[a].extent;
    return n;
}

gs_status gs_op_conv1x1_as_matmul(gs_ctx *ctx, const gs_op *conv, gs_op *out) {
    if (conv->kind != GS_OPK_CONV2D) return gs_err(ctx, GS_ERR_UNSUPPORTED, "as matmul: %s is not a conv2d", conv->spec);
    /* axes of gs_op_build_window: n, then k p q (nhwc: p q k), then c r s */
    const gs_tensor *I = &conv->tensors[0];
    bool nhwc = conv->naxes == 7 && !strcmp(conv->axes[1].name, "p");
    int k = nhwc ? 3 : 1, p = nhwc ? 1 : 2, q = nhwc ? 2 : 3, c = 4, r = 5, sx = 6;
    int hd = nhwc ? 1 : 2, wd = nhwc ? 2 : 3;
    const gs_affine *h = &I->idx[hd], *w = &I->idx[wd];
    if (conv->naxes != 7 || conv->axes[r].extent != 1 || conv->axes[sx].extent != 1)
        return gs_err(ctx, GS_ERR_UNSUPPORTED, "as matmul: %s is not a 1x1 convolution", conv->spec);
    if (h->coeff[p] != 1 || w->coeff[q] != 1 || h->offset != 0 || w->offset != 0 ||
        conv->axes[p].extent != I->shape[hd] || conv->axes[q].extent != I->shape[wd])
        return gs_err(ctx, GS_ERR_UNSUPPORTED, "as matmul: %s has a stride or padding", conv->spec);
    int64_t N = conv->axes[0].extent, K = conv->axes[k].extent, C = conv->axes[c].extent;
    int64_t HW = conv->axes[p].extent * conv->axes[q].extent;
    memset(out, 0, sizeof *out);
    gs_tensor *A = &out->tensors[0], *F = &out->tensors[1], *O = &out->tensors[2];
    set_tensor(A, "I", nhwc ? 2 : 3);
    set_tensor(F, "F", 2);
    set_tensor(O, "O", nhwc ? 2 : 3);
    int ko;
    if (nhwc) {
        enum { m = 0, kk = 1, cc = 2 };
        set_axis(out, m, "m", N * HW, GS_AXIS_SPATIAL);
        set_axis(out, kk, "k", K, GS_AXIS_SPATIAL);
        set_axis(out, cc, "c", C, GS_AXIS_REDUCE);
        out->naxes = 3;
        set_dim(A, 0, N * HW, m);
        set_dim(A, 1, C, cc);
        set_dim(F, 0, K, kk);
        set_dim(F, 1, C, cc);
        set_dim(O, 0, N * HW, m);
        set_dim(O, 1, K, kk);
        ko = kk;
    } else {
        enum { n = 0, kk = 1, x = 2, cc = 3 };
        set_axis(out, n, "n", N, GS_AXIS_SPATIAL);
        set_axis(out, kk, "k", K, GS_AXIS_SPATIAL);
        set_axis(out, x, "x", HW, GS_AXIS_SPATIAL);
        set_axis(out, cc, "c", C, GS_AXIS_REDUCE);
        out->naxes = 4;
        set_dim(A, 0, N, n);
        set_dim(A, 1, C, cc);
        set_dim(A, 2, HW, x);
        set_dim(F, 0, K, kk);
        set_dim(F, 1, C, cc);
        set_dim(O, 0, N, n);
        set_dim(O, 1, K, kk);
        set_dim(O, 2, HW, x);
        ko = kk;
    }
    out->ninputs = 2;
    out->combine = GS_COMBINE_MAC;
    out->epi = conv->epi;
    out->has_bias = conv->has_bias;
    if (conv->has_bias) out->epi.bias_axis = ko;
    gs_status s = finish(ctx, out, GS_OPK_CUSTOM, "matmul N=%lld K=%lld HW=%lld C=%lld layout=%s alpha=%.9g beta=%.9g%s%s",
                         (long long)N, (long long)K, (long long)HW, (long long)C, nhwc ? "nhwc" : "nchw",
                         (double)conv->epi.alpha, (double)conv->epi.beta, conv->has_bias ? " bias=1" : "",
                         conv->epi.relu ? " relu=1" : "");
    if (s == GS_OK && gs_op_typed(conv))
        s = gs_op_set_dtype(ctx, out, (gs_dtype)conv->dtype_in, (gs_dtype)conv->dtype_out);
    if (s == GS_OK && conv->math) s = gs_op_set_math(ctx, out, (gs_math)conv->math);
    if (s == GS_OK && conv->unary) s = gs_op_set_unary(ctx, out, (gs_unary)conv->unary, conv->unary_p);
    if (s == GS_OK && conv->clip) s = gs_op_set_clip(ctx, out, conv->clip, conv->clip_lo, conv->clip_hi);
    return s;
}

/* ---- unary functions ------------------------------------------------------------------ */
const gs_unary_info gs_unaries[GS_UN_COUNT] = {
    [GS_UN_NONE] = {"none", 0, 0},           [GS_UN_NEG] = {"neg", 0, 0},
    [GS_UN_ABS] = {"abs", 0, 0},             [GS_UN_EXP] = {"exp", 0, 0},
    [GS_UN_LOG] = {"log", 0, 0},             [GS_UN_SQRT] = {"sqrt", 0, 0},
    [GS_UN_RSQRT] = {"rsqrt", 1, 0},         [GS_UN_RECIP] = {"reciprocal", 0, 0},
    [GS_UN_TANH] = {"tanh", 0, 0},           [GS_UN_SIGMOID] = {"sigmoid", 0, 0},
    [GS_UN_ERF] = {"erf", 0, 0},             [GS_UN_SOFTPLUS] = {"softplus", 0, 0},
    [GS_UN_SOFTSIGN] = {"softsign", 0, 0},   [GS_UN_FLOOR] = {"floor", 0, 0},
    [GS_UN_CEIL] = {"ceil", 0, 0},           [GS_UN_ROUND] = {"round", 0, 0},
    [GS_UN_SIGN] = {"sign", 0, 0},           [GS_UN_SIN] = {"sin", 0, 0},
    [GS_UN_COS] = {"cos", 0, 0},             [GS_UN_TAN] = {"tan", 0, 0},
    [GS_UN_ASIN] = {"asin", 0, 0},           [GS_UN_ACOS] = {"acos", 0, 0},
    [GS_UN_ATAN] = {"atan", 0, 0},           [GS_UN_SINH] = {"sinh", 0, 0},
    [GS_UN_COSH] = {"cosh", 0, 0},           [GS_UN_ASINH] = {"asinh", 0, 0},
    [GS_UN_ACOSH] = {"acosh", 0, 0},         [GS_UN_ATANH] = {"atanh", 0, 0},
    [GS_UN_GELU] = {"gelu", 0, 0},           [GS_UN_GELU_TANH] = {"gelu_tanh", 0, 0},
    [GS_UN_LEAKYRELU] = {"leakyrelu", 1, 0.01}, [GS_UN_ELU] = {"elu", 1, 1.0},
    [GS_UN_CELU] = {"celu", 1, 1.0},         [GS_UN_THRESHOLDED_RELU] = {"thresholdedrelu", 1, 1.0},
    [GS_UN_HARDSIGMOID] = {"hardsigmoid", 1, 0.5}, [GS_UN_HARDSWISH] = {"hardswish", 0, 0},
    [GS_UN_MISH] = {"mish", 0, 0},           [GS_UN_SWISH] = {"swish", 1, 1.0},
    [GS_UN_LOGP] = {"logp", 1, 0},
};

bool gs_unary_parse(const char *name, gs_unary *u) {
    for (int k = 1; k < GS_UN_COUNT; k++)
        if (!strcmp(gs_unaries[k].name, name)) {
            *u = (gs_unary)k;
            return true;
        }
    return false;
}

gs_status gs_op_set_unary(gs_ctx *ctx, gs_op *op, gs_unary u, float p) {
    if ((int)u <= GS_UN_NONE || u >= GS_UN_COUNT)
        return gs_err(ctx, GS_ERR_INVALID_ARG, "%s: unknown unary function %d", op->spec, (int)u);
    if (!gs_unaries[u].has_p) p = 0.0f;
    if (!isfinite(p) || (u == GS_UN_CELU && p == 0.0f))
        return gs_err(ctx, GS_ERR_INVALID_ARG, "%s: act_p=%g is not a valid parameter of %s", op->spec, (double)p,
                      gs_unaries[u].name);
    op->unary = (uint8_t)u;
    op->unary_p = p;
    size_t l = strlen(op->spec);
    l += (size_t)snprintf(op->spec + l, sizeof op->spec - l, " act=%s", gs_unaries[u].name);
    if (gs_unaries[u].has_p && l < sizeof op->spec)
        gs_snprintf_c(op->spec + l, sizeof op->spec - l, " act_p=%.9g", (double)p);
    return gs_op_validate(ctx, op);
}

gs_status gs_op_set_clip(gs_ctx *ctx, gs_op *op, int flags, float lo, float hi) {
    if (flags & ~(GS_CLIP_LO | GS_CLIP_HI)) return gs_err(ctx, GS_ERR_INVALID_ARG, "clip: flags %d", flags);
    if (((flags & GS_CLIP_LO) && !isfinite(lo)) || ((flags & GS_CLIP_HI) && !isfinite(hi)))
        return gs_err(ctx, GS_ERR_INVALID_ARG, "%s: a clip bound is NaN or infinite (leave an unbounded side out)",
                      op->spec);
    if ((flags & GS_CLIP_LO) && (flags & GS_CLIP_HI) && lo > hi)
        return gs_err(ctx, GS_ERR_INVALID_ARG, "%s: clip_lo=%.9g is above clip_hi=%.9g", op->spec, (double)lo,
                      (double)hi);
    op->clip = (uint8_t)flags;
    op->clip_lo = flags & GS_CLIP_LO ? lo : 0.0f;
    op->clip_hi = flags & GS_CLIP_HI ? hi : 0.0f;
    size_t l = strlen(op->spec);
    if (flags & GS_CLIP_LO) l += (size_t)gs_snprintf_c(op->spec + l, sizeof op->spec - l, " clip_lo=%.9g", (double)lo);
    if ((flags & GS_CLIP_HI) && l < sizeof op->spec)
        gs_snprintf_c(op->spec + l, sizeof op->spec - l, " clip_hi=%.9g", (double)hi);
    return gs_op_validate(ctx, op);
}

static gs_combine binary_combine(gs_eltwise kind);
gs_status gs_op_build_eltwise(gs_ctx *ctx, gs_op *op, gs_eltwise kind, int64_t M, int64_t N, int bcast) {
    memset(op, 0, sizeof *op);
    enum { m = 0, n = 1 };
    op->naxes = 2;
    set_axis(op, m, "m", M, GS_AXIS_SPATIAL);
    set_axis(op, n, "n", N, GS_AXIS_SPATIAL);
    gs_tensor *X = &op->tensors[0];
    set_tensor(X, "X", 2);
    set_dim(X, 0, M, m);
    set_dim(X, 1, N, n);
    bool unary = kind == GS_ELT_RELU || kind == GS_ELT_CLIP || kind == GS_ELT_UNARY;
    if ((int)kind < 0 || kind > GS_ELT_PRELU)
        return gs_err(ctx, GS_ERR_INVALID_ARG, "gs_op_build_eltwise: unknown kind %d", (int)kind);
    op->ninputs = unary ? 1 : 2;
    if (op->ninputs == 2) {
        gs_tensor *Y = &op->tensors[1];
        if (bcast) {
            set_tensor(Y, "Y", 1);
            set_dim(Y, 0, N, n);
        } else {
            set_tensor(Y, "Y", 2);
            set_dim(Y, 0, M, m);
            set_dim(Y, 1, N, n);
        }
    }
    gs_tensor *Z = &op->tensors[op->ninputs];
    set_tensor(Z, "Z", 2);
    set_dim(Z, 0, M, m);
    set_dim(Z, 1, N, n);
    /* no reduce axis: the combine runs once, so MAC of one input copies it,
     * MAC of two multiplies, ADD sums */
    op->combine = unary ? GS_COMBINE_MAC : binary_combine(kind);
    op->epi = (gs_epilogue){1.0f, 0.0f, -1, kind == GS_ELT_RELU, 0};
    static const char *names[] = {"relu", "add", "mul", "clip", "sub", "div", "unary", "max", "min", "pow", "prelu"};
    if (unary)
        return finish(ctx, op, GS_OPK_ELTWISE, "%s M=%lld N=%lld", names[kind], (long long)M, (long long)N);
    return finish(ctx, op, GS_OPK_ELTWISE, "%s M=%lld N=%lld bcast=%d", names[kind], (long long)M, (long long)N,
                  bcast != 0);
}

gs_status gs_op_build_rowreduce(gs_ctx *ctx, gs_op *op, gs_rowreduce kind, int64_t M, int64_t K) {
    enum { m = MK_M, k = MK_K };
    set_mk(op, M, K);
    op->ninputs = 1;
    gs_tensor *X = &op->tensors[0], *Y = &op->tensors[1];
    set_tensor(X, "X", 2);
    set_dim(X, 0, M, m);
    set_dim(X, 1, K, k);
    set_tensor(Y, "Y", 1);
    set_dim(Y, 0, M, m);
    op->combine = kind == GS_ROW_MAX ? GS_COMBINE_MAX : kind == GS_ROW_MIN ? GS_COMBINE_MIN : GS_COMBINE_SUM;
    op->epi = (gs_epilogue){kind == GS_ROW_MEAN ? 1.0f / (float)K : 1.0f, 0.0f, -1, 0, 0};
    static const char *names[] = {"rowsum", "rowmean", "rowmax", "rowmin"};
    return finish(ctx, op, GS_OPK_REDUCE, "%s M=%lld K=%lld", names[kind], (long long)M, (long long)K);
}

static gs_combine binary_combine(gs_eltwise kind) {
    switch (kind) {
    case GS_ELT_ADD: return GS_COMBINE_ADD;
    case GS_ELT_SUB: return GS_COMBINE_SUB;
    case GS_ELT_DIV: return GS_COMBINE_DIV;
    case GS_ELT_MAX: return GS_COMBINE_MAXE;
    case GS_ELT_MIN: return GS_COMBINE_MINE;
    case GS_ELT_POW: return GS_COMBINE_POW;
    case GS_ELT_PRELU: return GS_COMBINE_PRELU;
    default: return GS_COMBINE_MAC;
    }
}
static const char *binary_name(gs_eltwise kind) {
    switch (kind) {
    case GS_ELT_ADD: return "add";
    case GS_ELT_SUB: return "sub";
    case GS_ELT_DIV: return "div";
    case GS_ELT_MAX: return "max";
    case GS_ELT_MIN: return "min";
    case GS_ELT_POW: return "pow";
    case GS_ELT_PRELU: return "prelu";
    default: return "mul";
    }
}
static bool binary_kind(gs_eltwise kind) {
    return kind == GS_ELT_ADD || kind == GS_ELT_MUL || kind == GS_ELT_SUB || kind == GS_ELT_DIV || kind == GS_ELT_MAX ||
           kind == GS_ELT_MIN || kind == GS_ELT_POW || kind == GS_ELT_PRELU;
}

gs_status gs_op_build_nary(gs_ctx *ctx, gs_op *op, gs_eltwise kind, int n, int64_t M, int64_t N, float alpha) {
    memset(op, 0, sizeof *op);
    if (kind != GS_ELT_ADD && kind != GS_ELT_MAX && kind != GS_ELT_MIN)
        return gs_err(ctx, GS_ERR_INVALID_ARG, "gs_op_build_nary: add, max or min (got %d)", (int)kind);
    if (n < 2 || n > GS_MAX_TENSORS - 1)
        return gs_err(ctx, GS_ERR_INVALID_ARG, "%s: %d inputs (2..%d)", binary_name(kind), n, GS_MAX_TENSORS - 1);
    enum { m = 0, nn = 1 };
    op->naxes = 2;
    set_axis(op, m, "m", M, GS_AXIS_SPATIAL);
    set_axis(op, nn, "n", N, GS_AXIS_SPATIAL);
    static const char *names[] = {"X", "Y", "W", "Z"};
    op->ninputs = n;
    for (int t = 0; t <= n; t++) {
        gs_tensor *T = &op->tensors[t];
        set_tensor(T, t == n ? "Z" : names[t], 2);
        set_dim(T, 0, M, m);
        set_dim(T, 1, N, nn);
    }
    op->combine = binary_combine(kind);
    op->epi = (gs_epilogue){alpha, 0.0f, -1, 0, 0};
    if (alpha != 1.0f) {
        if (kind != GS_ELT_ADD || alpha != 1.0f / (float)n)
            return gs_err(ctx, GS_ERR_INVALID_ARG, "gs_op_build_nary: alpha is 1, or 1/n for a mean (got %g)",
                          (double)alpha);
        return finish(ctx, op, GS_OPK_ELTWISE, "mean M=%lld N=%lld inputs=%d", (long long)M, (long long)N, n);
    }
    return finish(ctx, op, GS_OPK_ELTWISE, "%s M=%lld N=%lld inputs=%d", binary_name(kind), (long long)M, (long long)N,
                  n);
}

/* The binary over a three-axis X[a, mid, b] (Z the same), Y still to be
 * placed by the caller: the shared half of the `chan` and `midb` builders. */
static void binary3(gs_op *op, const char *mid, int64_t A, int64_t M, int64_t B, gs_eltwise kind) {
    op->naxes = 3;
    set_axis(op, 0, "a", A, GS_AXIS_SPATIAL);
    set_axis(op, 1, mid, M, GS_AXIS_SPATIAL);
    set_axis(op, 2, "b", B, GS_AXIS_SPATIAL);
    op->ninputs = 2;
    const char *names[] = {"X", "Z"};
    for (int i = 0; i < 2; i++) {
        gs_tensor *T = &op->tensors[i * 2];
        set_tensor(T, names[i], 3);
        set_dim(T, 0, A, 0);
        set_dim(T, 1, M, 1);
        set_dim(T, 2, B, 2);
    }
    op->combine = binary_combine(kind);
}

gs_status gs_op_build_chan(gs_ctx *ctx, gs_op *op, gs_eltwise kind, int64_t A, int64_t C, int64_t B, int bias) {
    memset(op, 0, sizeof *op);
    if (!binary_kind(kind))
        return gs_err(ctx, GS_ERR_INVALID_ARG, "gs_op_build_chan: a binary kind (got %d)", (int)kind);
    enum { c = 1 };
    binary3(op, "c", A, C, B, kind);
    gs_tensor *Y = &op->tensors[1];
    set_tensor(Y, "Y", 1);
    set_dim(Y, 0, C, c);
    op->epi = (gs_epilogue){1.0f, 0.0f, bias ? c : -1, 0, 0};
    op->has_bias = bias != 0;
    return finish(ctx, op, GS_OPK_CUSTOM, "%sc A=%lld C=%lld B=%lld%s", binary_name(kind), (long long)A, (long long)C,
                  (long long)B, bias ? " bias=1" : "");
}

gs_status gs_op_build_midb(gs_ctx *ctx, gs_op *op, gs_eltwise kind, int64_t A, int64_t R, int64_t B) {
    memset(op, 0, sizeof *op);
    if (!binary_kind(kind))
        return gs_err(ctx, GS_ERR_INVALID_ARG, "gs_op_build_midb: a binary kind (got %d)", (int)kind);
    enum { a = 0, b = 2 };
    binary3(op, "r", A, R, B, kind);
    gs_tensor *Y = &op->tensors[1];
    set_tensor(Y, "Y", 2);
    set_dim(Y, 0, A, a);
    set_dim(Y, 1, B, b);
    op->epi = (gs_epilogue){1.0f, 0.0f, -1, 0, 0};
    return finish(ctx, op, GS_OPK_CUSTOM, "%sm A=%lld R=%lld B=%lld", binary_name(kind), (long long)A, (long long)R,
                  (long long)B);
}

gs_status gs_op_build_place(gs_ctx *ctx, gs_op *op, int64_t A, int64_t R, int64_t B, int64_t T, int64_t at) {
    memset(op, 0, sizeof *op);
    if (at < 0 || R > T || at > T - R)
        return gs_err(ctx, GS_ERR_BAD_SHAPE, "place: the slice at=%lld of R=%lld does not fit T=%lld", (long long)at,
                      (long long)R, (long long)T);
    enum { a = 0, r = 1, b = 2 };
    op->naxes = 3;
    set_axis(op, a, "a", A, GS_AXIS_SPATIAL);
    set_axis(op, r, "r", R, GS_AXIS_SPATIAL);
    set_axis(op, b, "b", B, GS_AXIS_SPATIAL);
    op->ninputs = 1;
    gs_tensor *X = &op->tensors[0], *Z = &op->tensors[1];
    set_tensor(X, "X", 3);
    set_dim(X, 0, A, a);
    set_dim(X, 1, R, r);
    set_dim(X, 2, B, b);
    set_tensor(Z, "Z", 3);
    set_dim(Z, 0, A, a);
    set_dim(Z, 1, T, r);
    Z->idx[1].offset = at;
    set_dim(Z, 2, B, b);
    op->combine = GS_COMBINE_MAC; /* no reduce axis: a copy */
    op->epi = (gs_epilogue){1.0f, 0.0f, -1, 0, 0};
    return finish(ctx, op, GS_OPK_CUSTOM, "place A=%lld R=%lld B=%lld T=%lld at=%lld", (long long)A, (long long)R,
                  (long long)B, (long long)T, (long long)at);
}

gs_status gs_op_build_midreduce(gs_ctx *ctx, gs_op *op, gs_rowreduce kind, int64_t A, int64_t R, int64_t B) {
    memset(op, 0, sizeof *op);
    enum { a = 0, b = 1, r = 2 };
    op->naxes = 3;
    set_axis(op, a, "a", A, GS_AXIS_SPATIAL);
    set_axis(op, b, "b", B, GS_AXIS_SPATIAL);
    set_axis(op, r, "r", R, GS_AXIS_REDUCE);
    op->ninputs = 1;
    gs_tensor *X = &op->tensors[0], *Y = &op->tensors[1];
    set_tensor(X, "X", 3);
    set_dim(X, 0, A, a);
    set_dim(X, 1, R, r);
    set_dim(X, 2, B, b);
    set_tensor(Y, "Y", 2);
    set_dim(Y, 0, A, a);
    set_dim(Y, 1, B, b);
    op->combine = kind == GS_ROW_MAX ? GS_COMBINE_MAX : kind == GS_ROW_MIN ? GS_COMBINE_MIN : GS_COMBINE_SUM;
    op->epi = (gs_epilogue){kind == GS_ROW_MEAN ? 1.0f / (float)R : 1.0f, 0.0f, -1, 0, 0};
    static const char *names[] = {"midsum", "midmean", "midmax", "midmin"};
    return finish(ctx, op, GS_OPK_CUSTOM, "%s A=%lld R=%lld B=%lld", names[kind], (long long)A, (long long)R,
                  (long long)B);
}

/* ---- spec parser ------------------------------------------------------------
 * A table of operators, each with its keys and a builder over the parsed
 * values: the one place that dispatches from spec names to builders. */
typedef enum { KV_INT, KV_NONNEG, KV_BOOL, KV_FLOAT, KV_LAYOUT, KV_ACT } kv_type;
typedef struct {
    const char *key;
    kv_type type;
    bool required;
    double def;
} kv_def;

#define MAX_KV 28
typedef struct {
    double val[MAX_KV];
    int64_t ival[MAX_KV];
    bool set[MAX_KV];
    const kv_def *keys;
    int nkeys;
} kv_vals;

typedef struct op_def {
    const char *name;
    const kv_def *keys;
    int nkeys;
    gs_status (*build)(gs_ctx *, gs_op *, const struct op_def *, const kv_vals *);
    int variant;
} op_def;

static int kv_slot(const kv_vals *kv, const char *key) {
    for (int i = 0; i < kv->nkeys; i++)
        if (!strcmp(kv->keys[i].key, key)) return i;
    return -1;
}
static int64_t kvi(const kv_vals *kv, const char *key) { return kv->ival[kv_slot(kv, key)]; }
static double kvf(const kv_vals *kv, const char *key) { return kv->val[kv_slot(kv, key)]; }
static bool kvset(const kv_vals *kv, const char *key) { return kv->set[kv_slot(kv, key)]; }

/* A gemm's fused epilogue (after alpha and beta): + bias[n], then relu; the
 * spec says so (" bias=1 relu=1"), as the parser reads it back. */
static gs_status gemm_fuse(gs_ctx *ctx, gs_op *op, bool bias, bool relu) {
    if (!bias && !relu) return GS_OK;
    op->has_bias = bias;
    op->epi.bias_axis = bias ? 1 : -1;
    op->epi.relu = relu;
    size_t l = strlen(op->spec);
    snprintf(op->spec + l, sizeof op->spec - l, "%s%s", op->has_bias ? " bias=1" : "", op->epi.relu ? " relu=1" : "");
    return gs_op_validate(ctx, op);
}
/* clip_lo= / clip_hi= of the spec, when given. */
static gs_status spec_clip(gs_ctx *ctx, gs_op *op, const kv_vals *kv) {
    int f = (kvset(kv, "clip_lo") ? GS_CLIP_LO : 0) | (kvset(kv, "clip_hi") ? GS_CLIP_HI : 0);
    return f ? gs_op_set_clip(ctx, op, f, (float)kvf(kv, "clip_lo"), (float)kvf(kv, "clip_hi")) : GS_OK;
}
/* act= / act_p= of the spec, when given: the unary step. */
static gs_status spec_unary(gs_ctx *ctx, gs_op *op, const kv_vals *kv) {
    if (!kvset(kv, "act")) {
        if (kvset(kv, "act_p")) return gs_err(ctx, GS_ERR_PARSE, "%s: act_p without act", op->spec);
        return GS_OK;
    }
    gs_unary u = (gs_unary)kvi(kv, "act");
    if (kvset(kv, "act_p") && !gs_unaries[u].has_p)
        return gs_err(ctx, GS_ERR_PARSE, "%s: act=%s takes no act_p", op->spec, gs_unaries[u].name);
    float p = kvset(kv, "act_p") ? (float)kvf(kv, "act_p") : (float)gs_unaries[u].p_default;
    return gs_op_set_unary(ctx, op, u, p);
}
/* The epilogue's keys after the builder: act (unary), then the clip. */
static gs_status spec_epi(gs_ctx *ctx, gs_op *op, const kv_vals *kv) {
    gs_status s = spec_unary(ctx, op, kv);
    return s == GS_OK ? spec_clip(ctx, op, kv) : s;
}
static gs_status b_gemm(gs_ctx *ctx, gs_op *op, const op_def *od, const kv_vals *kv) {
    (void)od;
    gs_status s = gs_op_build_gemm(ctx, op, kvi(kv, "M"), kvi(kv, "N"), kvi(kv, "K"), (int)kvi(kv, "transA"),
                                   (int)kvi(kv, "transB"), (float)kvf(kv, "alpha"), (float)kvf(kv, "beta"));
    if (s == GS_OK) s = gemm_fuse(ctx, op, kvi(kv, "bias") != 0, kvi(kv, "relu") != 0);
    return s == GS_OK ? spec_epi(ctx, op, kv) : s;
}
static gs_status b_bgemm(gs_ctx *ctx, gs_op *op, const op_def *od, const kv_vals *kv) {
    (void)od;
    return gs_op_build_bgemm(ctx, op, kvi(kv, "B"), kvi(kv, "M"), kvi(kv, "N"), kvi(kv, "K"), (int)kvi(kv, "transA"),
                             (int)kvi(kv, "transB"), (float)kvf(kv, "alpha"), (float)kvf(kv, "beta"));
}
static gs_status b_gemv(gs_ctx *ctx, gs_op *op, const op_def *od, const kv_vals *kv) {
    (void)od;
    return gs_op_build_gemv(ctx, op, kvi(kv, "M"), kvi(kv, "N"), (int)kvi(kv, "transA"), (float)kvf(kv, "alpha"),
                            (float)kvf(kv, "beta"));
}

/* Resolve a family of alias keys: the specific keys win over the general one,
 * and giving both a general and a specific key is an error. */
static gs_status pick(gs_ctx *ctx, const op_def *od, const kv_vals *kv, const char *general, const char *specific,
                      int64_t def, int64_t *out) {
    bool g = kv_slot(kv, general) >= 0 && kvset(kv, general), sp = kvset(kv, specific);
    if (g && sp)
        return gs_err(ctx, GS_ERR_PARSE, "%s: give either %s or %s, not both", od->name, general, specific);
    *out = sp ? kvi(kv, specific) : g ? kvi(kv, general) : def;
    return GS_OK;
}

static gs_status b_window(gs_ctx *ctx, gs_op *op, const op_def *od, const kv_vals *kv) {
    gs_window w;
    memset(&w, 0, sizeof w);
    w.kind = (gs_window_kind)od->variant;
    w.N = kvi(kv, "N");
    w.C = kvi(kv, "C");
    w.H = kvi(kv, "H");
    w.W = kvi(kv, "W");
    w.K = w.kind == GS_WIN_CONV ? kvi(kv, "K") : w.C;
    w.groups = w.kind == GS_WIN_CONV ? kvi(kv, "groups") : 0;
    bool pool = w.kind >= GS_WIN_AVGPOOL;
    gs_status s = GS_OK;
    if (pool) {
        /* the window: F for both, or R and S */
        bool f = kvset(kv, "F"), r = kvset(kv, "R"), sx = kvset(kv, "S");
        if (f && (r || sx)) return gs_err(ctx, GS_ERR_PARSE, "%s: give either F or R/S, not both", od->name);
        if (!f && !(r && sx)) return gs_err(ctx, GS_ERR_PARSE, "%s: missing the window: give F (or R and S)", od->name);
        w.R = f ? kvi(kv, "F") : kvi(kv, "R");
        w.S = f ? kvi(kv, "F") : kvi(kv, "S");
    } else {
        w.R = kvi(kv, "R");
        w.S = kvi(kv, "S");
    }
    if (s == GS_OK) s = pick(ctx, od, kv, "stride", "strideh", 1, &w.sh);
    if (s == GS_OK) s = pick(ctx, od, kv, "stride", "stridew", 1, &w.sw);
    if (s == GS_OK) s = pick(ctx, od, kv, "dilation", "dilh", 1, &w.dh);
    if (s == GS_OK) s = pick(ctx, od, kv, "dilation", "dilw", 1, &w.dw);
    int64_t ph = 0, pw = 0;
    if (s == GS_OK) s = pick(ctx, od, kv, "pad", "padh", 0, &ph);
    if (s == GS_OK) s = pick(ctx, od, kv, "pad", "padw", 0, &pw);
    if (s == GS_OK) s = pick(ctx, od, kv, "padh", "pad_top", ph, &w.pt);
    if (s == GS_OK) s = pick(ctx, od, kv, "padh", "pad_bottom", ph, &w.pb);
    if (s == GS_OK) s = pick(ctx, od, kv, "padw", "pad_left", pw, &w.pl);
    if (s == GS_OK) s = pick(ctx, od, kv, "padw", "pad_right", pw, &w.pr);
    if (s == GS_OK && kvset(kv, "pad") && (kvset(kv, "pad_top") || kvset(kv, "pad_bottom") || kvset(kv, "pad_left") ||
                                          kvset(kv, "pad_right")))
        s = gs_err(ctx, GS_ERR_PARSE, "%s: give either pad or pad_top/pad_bottom/pad_left/pad_right, not both", od->name);
    if (s != GS_OK) return s;
    if (w.kind == GS_WIN_AVGPOOL) w.exclude_pad = kvi(kv, "count_include_pad") == 0;
    w.nhwc = kvi(kv, "layout") == 1;
    if (!pool) {
        w.bias = (int)kvi(kv, "bias");
        w.relu = (int)kvi(kv, "relu");
    }
    s = gs_op_build_window(ctx, op, &w);
    return s == GS_OK && !pool ? spec_epi(ctx, op, kv) : s;
}

static gs_status b_eltwise(gs_ctx *ctx, gs_op *op, const op_def *od, const kv_vals *kv) {
    int nin = kv_slot(kv, "inputs") >= 0 ? (int)kvi(kv, "inputs") : 2;
    bool mean = !strcmp(od->name, "mean");
    if (nin != 2 || mean) {
        if (kv_slot(kv, "bcast") >= 0 && kvi(kv, "bcast"))
            return gs_err(ctx, GS_ERR_PARSE, "%s: bcast=1 takes two inputs (inputs=%d)", od->name, nin);
        return gs_op_build_nary(ctx, op, (gs_eltwise)od->variant, nin, kvi(kv, "M"), kvi(kv, "N"),
                                mean ? 1.0f / (float)nin : 1.0f);
    }
    bool unary = od->variant == GS_ELT_RELU || od->variant == GS_ELT_CLIP || od->variant == GS_ELT_UNARY;
    int bc = unary ? 0 : (int)kvi(kv, "bcast");
    gs_status s = gs_op_build_eltwise(ctx, op, (gs_eltwise)od->variant, kvi(kv, "M"), kvi(kv, "N"), bc);
    if (s == GS_OK && od->variant == GS_ELT_UNARY) {
        op->epi.alpha = (float)kvf(kv, "alpha"); /* y = f(alpha * x) (HardSigmoid's slope) */
        if (op->epi.alpha != 1.0f) {
            size_t l = strlen(op->spec);
            gs_snprintf_c(op->spec + l, sizeof op->spec - l, " alpha=%.9g", (double)op->epi.alpha);
        }
        s = spec_unary(ctx, op, kv);
    }
    return s == GS_OK && od->variant == GS_ELT_CLIP ? spec_clip(ctx, op, kv) : s;
}
gs_status gs_op_build_transpose(gs_ctx *ctx, gs_op *op, int rank, const int64_t *dims, const int *perm) {
    memset(op, 0, sizeof *op);
    if (rank < 1 || rank > GS_MAX_DIMS)
        return gs_err(ctx, GS_ERR_INVALID_ARG, "transpose: rank %d (1..%d)", rank, GS_MAX_DIMS);
    int seen[GS_MAX_DIMS] = {0};
    for (int j = 0; j < rank; j++) {
        if (perm[j] < 0 || perm[j] >= rank || seen[perm[j]]++)
            return gs_err(ctx, GS_ERR_INVALID_ARG, "transpose: p%d=%d makes no permutation of 0..%d", j, perm[j],
                          rank - 1);
    }
    static const char *an[GS_MAX_DIMS] = {"a0", "a1", "a2", "a3", "a4", "a5"};
    op->naxes = rank;
    gs_tensor *X = &op->tensors[0], *Z = &op->tensors[1];
    set_tensor(X, "X", rank);
    set_tensor(Z, "Z", rank);
    for (int j = 0; j < rank; j++) {
        set_axis(op, j, an[j], dims[perm[j]], GS_AXIS_SPATIAL);
        set_dim(X, perm[j], dims[perm[j]], j);
        set_dim(Z, j, dims[perm[j]], j);
    }
    op->ninputs = 1;
    op->combine = GS_COMBINE_MAC; /* no reduce axis: a copy */
    op->epi = (gs_epilogue){1.0f, 0.0f, -1, 0, 0};
    char txt[200];
    size_t l = 0;
    txt[0] = 0;
    for (int j = 0; j < rank; j++) l += (size_t)snprintf(txt + l, sizeof txt - l, " d%d=%lld", j, (long long)dims[j]);
    for (int j = 0; j < rank; j++) l += (size_t)snprintf(txt + l, sizeof txt - l, " p%d=%d", j, perm[j]);
    return finish(ctx, op, GS_OPK_CUSTOM, "transpose%s", txt);
}
gs_status gs_op_build_chansq(gs_ctx *ctx, gs_op *op, int64_t N, int64_t C, int64_t X, int64_t size, float alpha) {
    memset(op, 0, sizeof *op);
    enum { n = 0, c = 1, x = 2, r = 3 };
    op->naxes = 4;
    set_axis(op, n, "n", N, GS_AXIS_SPATIAL);
    set_axis(op, c, "c", C, GS_AXIS_SPATIAL);
    set_axis(op, x, "x", X, GS_AXIS_SPATIAL);
    set_axis(op, r, "r", size, GS_AXIS_REDUCE);
    op->ninputs = 2;
    for (int t = 0; t < 2; t++) {
        gs_tensor *T = &op->tensors[t];
        set_tensor(T, t ? "X2" : "X", 3);
        set_dim(T, 0, N, n);
        set_dim(T, 1, C, c);
        T->idx[1].coeff[r] = 1; /* c + r - (size-1)/2 */
        T->idx[1].offset = -((size - 1) / 2);
        set_dim(T, 2, X, x);
    }
    gs_tensor *Y = &op->tensors[2];
    set_tensor(Y, "Y", 3);
    set_dim(Y, 0, N, n);
    set_dim(Y, 1, C, c);
    set_dim(Y, 2, X, x);
    op->combine = GS_COMBINE_MAC;
    op->epi = (gs_epilogue){alpha, 0.0f, -1, 0, 0};
    return finish(ctx, op, GS_OPK_CUSTOM, "chansq N=%lld C=%lld X=%lld size=%lld alpha=%.9g", (long long)N, (long long)C,
                  (long long)X, (long long)size, (double)alpha);
}
static gs_status b_chansq(gs_ctx *ctx, gs_op *op, const op_def *od, const kv_vals *kv) {
    (void)od;
    return gs_op_build_chansq(ctx, op, kvi(kv, "N"), kvi(kv, "C"), kvi(kv, "X"), kvi(kv, "size"),
                              (float)kvf(kv, "alpha"));
}
static gs_status b_transpose(gs_ctx *ctx, gs_op *op, const op_def *od, const kv_vals *kv) {
    static const char *dk[GS_MAX_DIMS] = {"d0", "d1", "d2", "d3", "d4", "d5"}, *pk[GS_MAX_DIMS] = {"p0", "p1", "p2", "p3", "p4", "p5"};
    int64_t dims[GS_MAX_DIMS];
    int perm[GS_MAX_DIMS], rank = 0;
    while (rank < GS_MAX_DIMS && kvset(kv, dk[rank])) rank++;
    for (int j = 0; j < GS_MAX_DIMS; j++) {
        if (j >= rank && (kvset(kv, dk[j]) || kvset(kv, pk[j])))
            return gs_err(ctx, GS_ERR_PARSE, "%s: %s or %s past the rank %d (d0..d%d given)", od->name, dk[j], pk[j],
                          rank, rank - 1);
        if (j < rank && !kvset(kv, pk[j]))
            return gs_err(ctx, GS_ERR_PARSE, "%s: missing %s (a permutation of the %d dims)", od->name, pk[j], rank);
        if (j < rank) {
            dims[j] = kvi(kv, dk[j]);
            perm[j] = (int)kvi(kv, pk[j]);
        }
    }
    return gs_op_build_transpose(ctx, op, rank, dims, perm);
}
static gs_status b_place(gs_ctx *ctx, gs_op *op, const op_def *od, const kv_vals *kv) {
    (void)od;
    return gs_op_build_place(ctx, op, kvi(kv, "A"), kvi(kv, "R"), kvi(kv, "B"), kvi(kv, "T"), kvi(kv, "at"));
}
static gs_status b_midb(gs_ctx *ctx, gs_op *op, const op_def *od, const kv_vals *kv) {
    return gs_op_build_midb(ctx, op, (gs_eltwise)od->variant, kvi(kv, "A"), kvi(kv, "R"), kvi(kv, "B"));
}
static gs_status b_row(gs_ctx *ctx, gs_op *op, const op_def *od, const kv_vals *kv) {
    return gs_op_build_rowreduce(ctx, op, (gs_rowreduce)od->variant, kvi(kv, "M"), kvi(kv, "K"));
}
static gs_status b_chan(gs_ctx *ctx, gs_op *op, const op_def *od, const kv_vals *kv) {
    return gs_op_build_chan(ctx, op, (gs_eltwise)od->variant, kvi(kv, "A"), kvi(kv, "C"), kvi(kv, "B"),
                            (int)kvi(kv, "bias"));
}
static gs_status b_mid(gs_ctx *ctx, gs_op *op, const op_def *od, const kv_vals *kv) {
    return gs_op_build_midreduce(ctx, op, (gs_rowreduce)od->variant, kvi(kv, "A"), kvi(kv, "R"), kvi(kv, "B"));
}

#define NK(a) ((int)(sizeof a / sizeof a[0]))
#define CLIP_KEYS {"clip_lo", KV_FLOAT, false, 0}, {"clip_hi", KV_FLOAT, false, 0}, \
    {"act", KV_ACT, false, 0}, {"act_p", KV_FLOAT, false, 0}
static const kv_def gemm_keys[] = {
    {"M", KV_INT, true, 0}, {"N", KV_INT, true, 0}, {"K", KV_INT, true, 0}, {"transA", KV_BOOL, false, 0},
    {"transB", KV_BOOL, false, 0}, {"alpha", KV_FLOAT, false, 1}, {"beta", KV_FLOAT, false, 0},
    {"bias", KV_BOOL, false, 0}, {"relu", KV_BOOL, false, 0}, CLIP_KEYS,
};
static const kv_def bgemm_keys[] = {
    {"B", KV_INT, true, 0}, {"M", KV_INT, true, 0}, {"N", KV_INT, true, 0}, {"K", KV_INT, true, 0},
    {"transA", KV_BOOL, false, 0}, {"transB", KV_BOOL, false, 0}, {"alpha", KV_FLOAT, false, 1},
    {"beta", KV_FLOAT, false, 0},
};
static const kv_def gemv_keys[] = {
    {"M", KV_INT, true, 0}, {"N", KV_INT, true, 0}, {"transA", KV_BOOL, false, 0},
    {"alpha", KV_FLOAT, false, 1}, {"beta", KV_FLOAT, false, 0},
};
#define WINDOW_COMMON                                                                                              \
    {"N", KV_INT, true, 0}, {"C", KV_INT, true, 0}, {"H", KV_INT, true, 0}, {"W", KV_INT, true, 0},              \
    {"stride", KV_INT, false, 1}, {"strideh", KV_INT, false, 1}, {"stridew", KV_INT, false, 1},                  \
    {"pad", KV_NONNEG, false, 0}, {"padh", KV_NONNEG, false, 0}, {"padw", KV_NONNEG, false, 0},                  \
    {"pad_top", KV_NONNEG, false, 0}, {"pad_bottom", KV_NONNEG, false, 0}, {"pad_left", KV_NONNEG, false, 0},    \
    {"pad_right", KV_NONNEG, false, 0}, {"layout", KV_LAYOUT, false, 0}
static const kv_def conv_keys[] = {
    WINDOW_COMMON, {"K", KV_INT, true, 0}, {"R", KV_INT, true, 0}, {"S", KV_INT, true, 0}, {"groups", KV_INT, false, 1},
    {"dilation", KV_INT, false, 1}, {"dilh", KV_INT, false, 1}, {"dilw", KV_INT, false, 1},
    {"bias", KV_BOOL, false, 0}, {"relu", KV_BOOL, false, 0}, CLIP_KEYS,
};
static const kv_def dwconv_keys[] = {
    WINDOW_COMMON, {"R", KV_INT, true, 0}, {"S", KV_INT, true, 0},
    {"dilation", KV_INT, false, 1}, {"dilh", KV_INT, false, 1}, {"dilw", KV_INT, false, 1},
    {"bias", KV_BOOL, false, 0}, {"relu", KV_BOOL, false, 0}, CLIP_KEYS,
};
#define POOL_KEYS                                                                                      \
    WINDOW_COMMON, {"F", KV_INT, false, 0}, {"R", KV_INT, false, 0}, {"S", KV_INT, false, 0},          \
    {"dilation", KV_INT, false, 1}, {"dilh", KV_INT, false, 1}, {"dilw", KV_INT, false, 1}
static const kv_def pool_keys[] = {POOL_KEYS};
static const kv_def avgpool_keys[] = {POOL_KEYS, {"count_include_pad", KV_BOOL, false, 1}};
static const kv_def relu_keys[] = {{"M", KV_INT, true, 0}, {"N", KV_INT, true, 0}};
static const kv_def clip_keys[] = {{"M", KV_INT, true, 0}, {"N", KV_INT, true, 0},
                                   {"clip_lo", KV_FLOAT, false, 0}, {"clip_hi", KV_FLOAT, false, 0}};
static const kv_def unary_keys[] = {{"M", KV_INT, true, 0}, {"N", KV_INT, true, 0}, {"act", KV_ACT, true, 0},
                                    {"act_p", KV_FLOAT, false, 0}, {"alpha", KV_FLOAT, false, 1}};
static const kv_def transpose_keys[] = {
    {"d0", KV_INT, true, 0},     {"d1", KV_INT, false, 0},    {"d2", KV_INT, false, 0},    {"d3", KV_INT, false, 0},
    {"d4", KV_INT, false, 0},    {"d5", KV_INT, false, 0},    {"p0", KV_NONNEG, false, 0}, {"p1", KV_NONNEG, false, 0},
    {"p2", KV_NONNEG, false, 0}, {"p3", KV_NONNEG, false, 0}, {"p4", KV_NONNEG, false, 0}, {"p5", KV_NONNEG, false, 0}};
static const kv_def chansq_keys[] = {{"N", KV_INT, true, 0}, {"C", KV_INT, true, 0}, {"X", KV_INT, true, 0},
                                     {"size", KV_INT, true, 0}, {"alpha", KV_FLOAT, false, 1}};
static const kv_def place_keys[] = {{"A", KV_INT, true, 0}, {"R", KV_INT, true, 0}, {"B", KV_INT, true, 0},
                                    {"T", KV_INT, true, 0}, {"at", KV_NONNEG, false, 0}};
static const kv_def midb_keys[] = {{"A", KV_INT, true, 0}, {"R", KV_INT, true, 0}, {"B", KV_INT, true, 0}};
static const kv_def binary_keys[] = {{"M", KV_INT, true, 0}, {"N", KV_INT, true, 0}, {"bcast", KV_BOOL, false, 0}};
/* add, max, min: also n inputs of one shape (inputs=2..3); mean: their sum over n */
static const kv_def nary_keys[] = {{"M", KV_INT, true, 0}, {"N", KV_INT, true, 0}, {"bcast", KV_BOOL, false, 0},
                                   {"inputs", KV_INT, false, 2}};
static const kv_def mean_keys[] = {{"M", KV_INT, true, 0}, {"N", KV_INT, true, 0}, {"inputs", KV_INT, false, 2}};
static const kv_def row_keys[] = {{"M", KV_INT, true, 0}, {"K", KV_INT, true, 0}};
static const kv_def chan_keys[] = {{"A", KV_INT, true, 0}, {"C", KV_INT, true, 0}, {"B", KV_INT, true, 0},
                                   {"bias", KV_BOOL, false, 0}};
static const kv_def mid_keys[] = {{"A", KV_INT, true, 0}, {"R", KV_INT, true, 0}, {"B", KV_INT, true, 0}};

static const op_def op_defs[] = {
    {"gemm", gemm_keys, NK(gemm_keys), b_gemm, 0},
    {"bgemm", bgemm_keys, NK(bgemm_keys), b_bgemm, 0},
    {"gemv", gemv_keys, NK(gemv_keys), b_gemv, 0},
    {"conv2d", conv_keys, NK(conv_keys), b_window, GS_WIN_CONV},
    {"dwconv2d", dwconv_keys, NK(dwconv_keys), b_window, GS_WIN_DWCONV},
    {"avgpool2d", avgpool_keys, NK(avgpool_keys), b_window, GS_WIN_AVGPOOL},
    {"maxpool2d", pool_keys, NK(pool_keys), b_window, GS_WIN_MAXPOOL},
    {"relu", relu_keys, NK(relu_keys), b_eltwise, GS_ELT_RELU},
    {"clip", clip_keys, NK(clip_keys), b_eltwise, GS_ELT_CLIP},
    {"add", nary_keys, NK(nary_keys), b_eltwise, GS_ELT_ADD},
    {"mul", binary_keys, NK(binary_keys), b_eltwise, GS_ELT_MUL},
    {"sub", binary_keys, NK(binary_keys), b_eltwise, GS_ELT_SUB},
    {"div", binary_keys, NK(binary_keys), b_eltwise, GS_ELT_DIV},
    {"unary", unary_keys, NK(unary_keys), b_eltwise, GS_ELT_UNARY},
    {"max", nary_keys, NK(nary_keys), b_eltwise, GS_ELT_MAX},
    {"min", nary_keys, NK(nary_keys), b_eltwise, GS_ELT_MIN},
    {"mean", mean_keys, NK(mean_keys), b_eltwise, GS_ELT_ADD},
    {"pow", binary_keys, NK(binary_keys), b_eltwise, GS_ELT_POW},
    {"prelu", binary_keys, NK(binary_keys), b_eltwise, GS_ELT_PRELU},
    {"rowsum", row_keys, NK(row_keys), b_row, GS_ROW_SUM},
    {"rowmean", row_keys, NK(row_keys), b_row, GS_ROW_MEAN},
    {"rowmax", row_keys, NK(row_keys), b_row, GS_ROW_MAX},
    {"rowmin", row_keys, NK(row_keys), b_row, GS_ROW_MIN},
    {"addc", chan_keys, NK(chan_keys), b_chan, GS_ELT_ADD},
    {"mulc", chan_keys, NK(chan_keys), b_chan, GS_ELT_MUL},
    {"subc", chan_keys, NK(chan_keys), b_chan, GS_ELT_SUB},
    {"divc", chan_keys, NK(chan_keys), b_chan, GS_ELT_DIV},
    {"maxc", chan_keys, NK(chan_keys), b_chan, GS_ELT_MAX},
    {"minc", chan_keys, NK(chan_keys), b_chan, GS_ELT_MIN},
    {"powc", chan_keys, NK(chan_keys), b_chan, GS_ELT_POW},
    {"preluc", chan_keys, NK(chan_keys), b_chan, GS_ELT_PRELU},
    {"addm", midb_keys, NK(midb_keys), b_midb, GS_ELT_ADD},
    {"subm", midb_keys, NK(midb_keys), b_midb, GS_ELT_SUB},
    {"mulm", midb_keys, NK(midb_keys), b_midb, GS_ELT_MUL},
    {"divm", midb_keys, NK(midb_keys), b_midb, GS_ELT_DIV},
    {"maxm", midb_keys, NK(midb_keys), b_midb, GS_ELT_MAX},
    {"minm", midb_keys, NK(midb_keys), b_midb, GS_ELT_MIN},
    {"powm", midb_keys, NK(midb_keys), b_midb, GS_ELT_POW},
    {"prelum", midb_keys, NK(midb_keys), b_midb, GS_ELT_PRELU},
    {"place", place_keys, NK(place_keys), b_place, 0},
    {"transpose", transpose_keys, NK(transpose_keys), b_transpose, 0},
    {"chansq", chansq_keys, NK(chansq_keys), b_chansq, 0},
    {"midsum", mid_keys, NK(mid_keys), b_mid, GS_ROW_SUM},
    {"midmean", mid_keys, NK(mid_keys), b_mid, GS_ROW_MEAN},
    {"midmax", mid_keys, NK(mid_keys), b_mid, GS_ROW_MAX},
    {"midmin", mid_keys, NK(mid_keys), b_mid, GS_ROW_MIN},
};
#define N_OP_DEFS NK(op_defs)

static void list_keys(const op_def *od, char *buf, size_t n) {
    size_t off = 0;
    buf[0] = 0;
    for (int i = 0; i < od->nkeys && off < n; i++)
        off += (size_t)snprintf(buf + off, n - off, "%s%s", i ? " " : "", od->keys[i].key);
}

static gs_status parse_value(gs_ctx *ctx, const op_def *od, const kv_def *kd, const char *tok, const char *v,
                             kv_vals *out, int slot) {
    if (!*v) return gs_err(ctx, GS_ERR_PARSE, "%s: key '%s' has no value in '%s'", od->name, kd->key, tok);
    char *end = NULL;
    errno = 0;
    if (kd->type == KV_ACT) {
        gs_unary u;
        if (!gs_unary_parse(v, &u)) {
            char known[512];
            size_t off = 0;
            known[0] = 0;
            for (int k = 1; k < GS_UN_COUNT && off < sizeof known; k++)
                off += (size_t)snprintf(known + off, sizeof known - off, "%s%s", k > 1 ? " " : "", gs_unaries[k].name);
            return gs_err(ctx, GS_ERR_PARSE, "%s: unknown function '%.40s' in act= (known: %s)", od->name, v, known);
        }
        out->ival[slot] = u;
    } else if (kd->type == KV_LAYOUT) {
        if (!strcmp(v, "nchw")) out->ival[slot] = 0;
        else if (!strcmp(v, "nhwc")) out->ival[slot] = 1;
        else return gs_err(ctx, GS_ERR_PARSE, "%s: layout must be nchw or nhwc (got '%s')", od->name, v);
    } else if (kd->type == KV_FLOAT) {
        double x = gs_strtod_c(v, &end); /* '.' whatever the caller's LC_NUMERIC */
        if (*end || errno == ERANGE || !isfinite(x))
            return gs_err(ctx, GS_ERR_PARSE, "%s: '%s' is not a finite number", od->name, tok);
        if (fabs(x) > FLT_MAX)
            return gs_err(ctx, GS_ERR_PARSE, "%s: '%s' does not fit a 32-bit float", od->name, tok);
        if (x != 0 && (float)x == 0) /* below half the least subnormal: the kernel would see 0 */
            return gs_err(ctx, GS_ERR_PARSE, "%s: '%s' is 0 as a 32-bit float (write 0, or a magnitude of at least 1e-45)",
                          od->name, tok);
        out->val[slot] = x;
    } else {
        /* reject leading '+', spaces and hex: plain decimal only */
        const char *p = v;
        if (*p == '-') p++;
        if (!isdigit((unsigned char)*p))
            return gs_err(ctx, GS_ERR_PARSE, "%s: '%s' is not an integer", od->name, tok);
        long long x = strtoll(v, &end, 10);
        if (*end) return gs_err(ctx, GS_ERR_PARSE, "%s: '%s' is not an integer", od->name, tok);
        if (errno == ERANGE)
            return gs_err(ctx, GS_ERR_BAD_SHAPE, "%s: %s is out of range (max %lld)", od->name, tok,
                          (long long)GS_MAX_EXTENT);
        if (kd->type == KV_BOOL && x != 0 && x != 1)
            return gs_err(ctx, GS_ERR_PARSE, "%s: '%s' must be 0 or 1", od->name, tok);
        if (kd->type == KV_INT && (x <= 0 || x > GS_MAX_EXTENT))
            return gs_err(ctx, GS_ERR_BAD_SHAPE, "%s: %s must be between 1 and %lld", od->name, tok,
                          (long long)GS_MAX_EXTENT);
        if (kd->type == KV_NONNEG && (x < 0 || x > GS_MAX_EXTENT))
            return gs_err(ctx, GS_ERR_BAD_SHAPE, "%s: %s must be between 0 and %lld", od->name, tok,
                          (long long)GS_MAX_EXTENT);
        out->ival[slot] = x;
        out->val[slot] = (double)x;
    }
    out->set[slot] = true;
    return GS_OK;
}

gs_status gs_op_parse_into(gs_ctx *ctx, const char *spec, gs_op *op) {
    if (!spec || !op) return gs_err(ctx, GS_ERR_INVALID_ARG, "NULL spec");
    size_t len = strlen(spec);
    if (len >= 1024) return gs_err(ctx, GS_ERR_PARSE, "spec is too long (%zu chars, max 1023)", len);
    char buf[1024];
    memcpy(buf, spec, len + 1);
    char *save = NULL;
    char *tok = strtok_r(buf, " \t\n", &save);
    if (!tok) return gs_err(ctx, GS_ERR_PARSE, "empty spec");
    const op_def *od = NULL;
    for (int i = 0; i < N_OP_DEFS; i++)
        if (!strcmp(tok, op_defs[i].name)) od = &op_defs[i];
    if (!od) {
        char known[512] = "";
        size_t off = 0;
        for (int i = 0; i < N_OP_DEFS && off < sizeof known; i++)
            off += (size_t)snprintf(known + off, sizeof known - off, "%s%s", i ? " " : "", op_defs[i].name);
        return gs_err(ctx, GS_ERR_UNKNOWN_OP, "unknown operator '%.40s' (known: %s)", tok, known);
    }
    kv_vals kv;
    memset(&kv, 0, sizeof kv);
    kv.keys = od->keys;
    kv.nkeys = od->nkeys;
    gs_dtype dt_in = GS_DTYPE_F32, dt_out = GS_DTYPE_F32;
    bool in_set = false, out_set = false, math_set = false;
    gs_math math = GS_MATH_F32;
    while ((tok = strtok_r(NULL, " \t\n", &save))) {
        char *eq = strchr(tok, '=');
        if (!eq || eq == tok)
            return gs_err(ctx, GS_ERR_PARSE, "%s: expected key=value, got '%.60s'", od->name, tok);
        *eq = 0;
        if (!strcmp(tok, "math")) {
            if (math_set) return gs_err(ctx, GS_ERR_PARSE, "%s: key 'math' given twice", od->name);
            if (strcmp(eq + 1, "tf32") && strcmp(eq + 1, "f32"))
                return gs_err(ctx, GS_ERR_PARSE, "%s: unknown math '%.40s' (known: f32 tf32)", od->name, eq + 1);
            math_set = true;
            math = strcmp(eq + 1, "tf32") ? GS_MATH_F32 : GS_MATH_TF32;
            continue;
        }
        if (!strcmp(tok, "dtype") || !strcmp(tok, "out_dtype")) {
            bool outk = tok[0] == 'o';
            gs_dtype *dst = outk ? &dt_out : &dt_in;
            if (outk ? out_set : in_set) return gs_err(ctx, GS_ERR_PARSE, "%s: key '%s' given twice", od->name, tok);
            if (!gs_dtype_parse(eq + 1, dst))
                return gs_err(ctx, GS_ERR_PARSE, "%s: unknown type '%.40s' in %s= (known: f32 f16 bf16)", od->name,
                              eq + 1, tok);
            if (outk) out_set = true;
            else in_set = true;
            continue;
        }
        int slot = kv_slot(&kv, tok);
        if (slot < 0) {
            char keys[256];
            list_keys(od, keys, sizeof keys);
            return gs_err(ctx, GS_ERR_PARSE, "%s: unknown key '%.40s' (accepted: %s)", od->name, tok, keys);
        }
        if (kv.set[slot]) return gs_err(ctx, GS_ERR_PARSE, "%s: key '%s' given twice", od->name, tok);
        char full[160];
        snprintf(full, sizeof full, "%s=%.120s", tok, eq + 1);
        gs_status s = parse_value(ctx, od, &od->keys[slot], full, eq + 1, &kv, slot);
        if (s != GS_OK) return s;
    }
    for (int i = 0; i < od->nkeys; i++) {
        if (kv.set[i]) continue;
        if (od->keys[i].required)
            return gs_err(ctx, GS_ERR_PARSE, "%s: missing required key '%s'", od->name, od->keys[i].key);
        kv.val[i] = od->keys[i].def;
        kv.ival[i] = (int64_t)od->keys[i].def;
    }
    gs_status s = od->build(ctx, op, od, &kv);
    if (s == GS_OK && (in_set || out_set)) s = gs_op_set_dtype(ctx, op, dt_in, out_set ? dt_out : dt_in);
    if (s == GS_OK && math != GS_MATH_F32 && gs_op_set_math(ctx, op, math) != GS_OK) {
        char why[GS_MSG_MAX];
        s = gs_err(ctx, GS_ERR_PARSE, "%s", gs_ctx_msg_copy(ctx, why, sizeof why)); /* bad input: exit 2 */
    }
    return s;
}

gs_status gs_op_set_math(gs_ctx *ctx, gs_op *op, gs_math mth) {
    if (!op) return gs_err(ctx, GS_ERR_INVALID_ARG, "gs_op_set_math: NULL operator");
    if ((int)mth != GS_MATH_F32 && mth != GS_MATH_TF32)
        return gs_err(ctx, GS_ERR_INVALID_ARG, "gs_op_set_math: unknown math %d (0 f32, 1 tf32)", (int)mth);
    if (mth == GS_MATH_TF32) {
        bool product = op->kind == GS_OPK_GEMM || op->kind == GS_OPK_BGEMM || op->kind == GS_OPK_CONV2D ||
                       (op->kind == GS_OPK_CUSTOM && op->combine == GS_COMBINE_MAC && op->ninputs == 2);
        if (!product)
            return gs_err(ctx, GS_ERR_INVALID_ARG, "math=tf32: only gemm, bgemm and conv2d take it, not %.60s", op->spec);
        if (gs_op_typed(op))
            return gs_err(ctx, GS_ERR_INVALID_ARG, "math=tf32 rounds f32 inputs; %.80s has %s inputs and a %s output",
                          op->spec, gs_dtype_name((gs_dtype)op->dtype_in), gs_dtype_name((gs_dtype)op->dtype_out));
    }
    char *d = strstr(op->spec, " math=tf32");
    if (d) *d = 0;
    op->math = (uint8_t)mth;
    size_t l = strlen(op->spec);
    if (mth == GS_MATH_TF32) snprintf(op->spec + l, sizeof op->spec - l, " math=tf32");
    return GS_OK;
}

/* ---- element types ------------------------------------------------------------------------ */
gs_status gs_op_set_dtype(gs_ctx *ctx, gs_op *op, gs_dtype in, gs_dtype out) {
    if (!op) return gs_err(ctx, GS_ERR_INVALID_ARG, "gs_op_set_dtype: NULL operator");
    if ((int)in < 0 || in >= GS_DTYPE_COUNT || (int)out < 0 || out >= GS_DTYPE_COUNT)
        return gs_err(ctx, GS_ERR_INVALID_ARG, "gs_op_set_dtype: unknown type %d/%d (known: 0 f32, 1 f16, 2 bf16)",
                      (int)in, (int)out);
    if (op->math != GS_MATH_F32 && (in != GS_DTYPE_F32 || out != GS_DTYPE_F32))
        return gs_err(ctx, GS_ERR_INVALID_ARG, "math=tf32 rounds f32 inputs; %.80s cannot take %s", op->spec,
                      gs_dtype_name(in != GS_DTYPE_F32 ? in : out));
    /* the canonical text ends with the types: drop the old ones, append the new */
    char *d = strstr(op->spec, " dtype=");
    if (d) *d = 0;
    op->dtype_in = (uint8_t)in;
    op->dtype_out = (uint8_t)out;
    size_t l = strlen(op->spec);
    if (in != GS_DTYPE_F32 || out != GS_DTYPE_F32) {
        int w = snprintf(op->spec + l, sizeof op->spec - l, " dtype=%s", gs_dtypes[in].name);
        if (w > 0 && (size_t)w < sizeof op->spec - l && out != in)
            snprintf(op->spec + l + (size_t)w, sizeof op->spec - l - (size_t)w, " out_dtype=%s", gs_dtypes[out].name);
    }
    return GS_OK;
}

gs_dtype gs_op_buffer_dtype(const gs_op *op, int i) {
    if (i < 0 || i >= gs_op_num_buffers(op)) return GS_DTYPE_F32;
    return (gs_dtype)(i == op->ninputs ? op->dtype_out : op->dtype_in);
}

int64_t gs_op_buffer_bytes(const gs_op *op, int i) {
    return gs_op_buffer_elems(op, i) * gs_dtype_bytes(gs_op_buffer_dtype(op, i));
}

/* ---- public wrappers ---------------------------------------------------------- */
gs_status gs_op_parse(gs_ctx *ctx, const char *spec, gs_op **out) {
    if (!out) return gs_err(ctx, GS_ERR_INVALID_ARG, "NULL out");
    *out = NULL;
    gs_op *op = calloc(1, sizeof *op);
    if (!op) return gs_err(ctx, GS_ERR_NOMEM, "out of memory allocating an operator");
    gs_status s = gs_op_parse_into(ctx, spec, op);
    if (s != GS_OK) {
        free(op);
        return s;
    }
    *out = op;
    return GS_OK;
}

gs_status gs_op_create_gemm(gs_ctx *ctx, int64_t M, int64_t N, int64_t K, int transA, int transB, float alpha,
                            float beta, gs_op **out) {
    if (!out) return gs_err(ctx, GS_ERR_INVALID_ARG, "NULL out");
    *out = NULL;
    gs_op *op = calloc(1, sizeof *op);
    if (!op) return gs_err(ctx, GS_ERR_NOMEM, "out of memory allocating an operator");
    gs_status s = gs_op_build_gemm(ctx, op, M, N, K, transA, transB, alpha, beta);
    if (s != GS_OK) {
        free(op);
        return s;
    }
    *out = op;
    return GS_OK;
}

gs_status gs_op_create_gemm_ex(gs_ctx *ctx, int64_t M, int64_t N, int64_t K, int transA, int transB,
                               const gs_gemm_epilogue *epi, gs_op **out) {
    if (!out) return gs_err(ctx, GS_ERR_INVALID_ARG, "NULL out");
    *out = NULL;
    gs_gemm_epilogue e = epi ? *epi : (gs_gemm_epilogue){.alpha = 1.0f};
    if (e.bias != 0 && e.bias != 1)
        return gs_err(ctx, GS_ERR_INVALID_ARG, "gs_op_create_gemm_ex: bias must be 0 or 1 (got %d)", e.bias);
    if (e.relu != 0 && e.relu != 1)
        return gs_err(ctx, GS_ERR_INVALID_ARG, "gs_op_create_gemm_ex: relu must be 0 or 1 (got %d)", e.relu);
    gs_op *op = calloc(1, sizeof *op);
    if (!op) return gs_err(ctx, GS_ERR_NOMEM, "out of memory allocating an operator");
    gs_status s = gs_op_build_gemm(ctx, op, M, N, K, transA, transB, e.alpha, e.beta);
    if (s == GS_OK) s = gemm_fuse(ctx, op, e.bias, e.relu);
    if (s != GS_OK) {
        free(op);
        return s;
    }
    *out = op;
    return GS_OK;
}

void gs_op_destroy(gs_op *op) { free(op); }
const char *gs_op_spec(const gs_op *op) { return op ? op->spec : ""; }

/* The buffers of a kernel: the inputs, the output, then the bias (a vector
 * along its axis) when there is one. */
int gs_op_num_buffers(const gs_op *op) {
    if (!op) return 0;
    return op->ninputs + 1 + (op->has_bias && op->epi.bias_axis >= 0 ? 1 : 0);
}

int64_t gs_op_buffer_elems(const gs_op *op, int i) {
    if (i < 0 || i >= gs_op_num_buffers(op)) return 0;
    return i <= op->ninputs ? gs_tensor_elems(&op->tensors[i]) : gs_op_bias_elems(op);
}

const char *gs_op_buffer_name(const gs_op *op, int i) {
    if (i < 0 || i >= gs_op_num_buffers(op)) return "";
    return i <= op->ninputs ? op->tensors[i].name : "bias";
}

double gs_op_flops(const gs_op *op) {
    if (!op) return 0;
    double it = 1;
    for (int a = 0; a < op->naxes; a++) it *= (double)op->axes[a].extent;
    return op->combine == GS_COMBINE_MAC ? 2.0 * it : it;
}

/* ---- the operator's key -------------------------------------------------------------- */
/* No padding in what gs_op_key hashes: each struct is the sum of its fields. A
 * field added to one of these structs fails this until it is added here too;
 * then decide in gs_op_key whether a kernel takes it at run time. */
#define GS_FSZ(T, f) sizeof(((T *)0)->f)
_Static_assert(sizeof(gs_axis) == GS_FSZ(gs_axis, name) + GS_FSZ(gs_axis, kind) + GS_FSZ(gs_axis, extent),
               "gs_axis has padding or a field this sum lacks");
_Static_assert(sizeof(gs_affine) == GS_FSZ(gs_affine, coeff) + GS_FSZ(gs_affine, offset),
               "gs_affine has padding or a field this sum lacks");
_Static_assert(sizeof(gs_tensor) == GS_FSZ(gs_tensor, name) + GS_FSZ(gs_tensor, ndim) + GS_FSZ(gs_tensor, shape) +
                                        GS_FSZ(gs_tensor, idx),
               "gs_tensor has padding or a field this sum lacks");
_Static_assert(sizeof(gs_epilogue) == GS_FSZ(gs_epilogue, alpha) + GS_FSZ(gs_epilogue, beta) +
                                          GS_FSZ(gs_epilogue, bias_axis) + GS_FSZ(gs_epilogue, relu) +
                                          GS_FSZ(gs_epilogue, count_valid),
               "gs_epilogue has padding or a field this sum lacks");
_Static_assert(sizeof(gs_op) == GS_FSZ(gs_op, kind) + GS_FSZ(gs_op, naxes) + GS_FSZ(gs_op, ninputs) +
                                    GS_FSZ(gs_op, combine) + GS_FSZ(gs_op, axes) + GS_FSZ(gs_op, tensors) +
                                    GS_FSZ(gs_op, epi) + GS_FSZ(gs_op, transA) + GS_FSZ(gs_op, transB) +
                                    GS_FSZ(gs_op, spec) + GS_FSZ(gs_op, has_bias) + GS_FSZ(gs_op, clip) +
                                    GS_FSZ(gs_op, dtype_in) + GS_FSZ(gs_op, dtype_out) + GS_FSZ(gs_op, math) +
                                    GS_FSZ(gs_op, unary) + GS_FSZ(gs_op, bias_group) + GS_FSZ(gs_op, reserved_) +
                                    GS_FSZ(gs_op, unary_p) +
                                    GS_FSZ(gs_op, clip_lo) + GS_FSZ(gs_op, clip_hi),
               "gs_op has padding or a field this sum lacks");
#undef GS_FSZ

void gs_op_key(const gs_op *op, gs_op *key) {
    memcpy(key, op, sizeof *key);
    for (int a = 0; a < GS_MAX_AXES; a++) {
        memset(key->axes[a].name, 0, sizeof key->axes[a].name);
        key->axes[a].extent = 0;
    }
    for (int t = 0; t < GS_MAX_TENSORS; t++) {
        memset(key->tensors[t].name, 0, sizeof key->tensors[t].name);
        memset(key->tensors[t].shape, 0, sizeof key->tensors[t].shape);
    }
    memset(key->spec, 0, sizeof key->spec);
    key->epi.alpha = 0.0f;
    key->epi.beta = op->epi.beta != 0.0f ? 1.0f : 0.0f;
    if (!op->has_bias || op->epi.bias_axis < 0) {
        key->has_bias = false;
        key->epi.bias_axis = -1;
        key->bias_group = 0;
    }
}
