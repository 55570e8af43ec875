/* test_ops.c — every operator class beyond plain gemm, end to end:
 *
 *   1. `gensor verify` semantics over the covering-design sweeps in
 *      tests/data/ops_*.txt: parse the spec, construct with the default
 *      options (the seed from the file), run the OpenCL dialect of the top
 *      candidate on PoCL and compare it with the IR reference interpreter
 *      (every case with index 2 mod 4 also runs candidate 2). Under GS_ASAN
 *      only every 4th selected case runs (never none).
 *   2. An operator that has no builder, a 3-D convolution written directly in
 *      the IR: constructed, emitted in both dialects, compiled by NVRTC
 *      (0 spills) where NVRTC is present, and verified on PoCL.
 *   3. Malformed specs of every class (tests/data/ops_bad_specs.txt): the
 *      status and the message from the library, then exit code 2 and exactly
 *      one stderr line from the CLI (GS_GENSOR_BIN).
 *   4. The reference interpreter itself against GSL (gemv, bgemm, gemm with
 *      a fused epilogue) and against hand-computed conv and pool results; the
 *      hand-computed cases also run through the constructed OpenCL kernels.
 *
 * Pooling semantics pinned here: average pooling counts padded cells by
 * default (count_include_pad=1: the sum is always divided by R*S) and with
 * count_include_pad=0 divides each window by its in-bounds cells; max pooling
 * ignores padded cells (they never win, even over negative inputs); padding
 * may reach half the dilated window. NaN: relu, max pooling and row max
 * propagate it (ir.h's NaN rule), in the interpreter and on PoCL.
 *
 * Set GS_OPS_VERBOSE=1 to print each sweep's case count and time. */
#include <criterion/criterion.h>
#include <gsl/gsl_blas.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "construct/construct.h"
#include "tests/test_common.h"

TestSuite(ops);

/* ---- helpers ------------------------------------------------------------------- */


static bool ops_verbose(void) { return getenv("GS_OPS_VERBOSE") != NULL; }

/* The OpenCL device for the half of a test that runs kernels. Without one
 * that half is not run and the log says so (a failure with
 * GS_REQUIRE_OPENCL=1, as in CI); any other error fails the test. */
static gs_device *ops_open_cl_optional(gs_ctx *ctx, const char *what) {
    gs_device *cl = NULL;
    gs_status s = gs_device_open(ctx, GS_BACKEND_OPENCL, 0, &cl);
    if (s == GS_OK) return cl;
    cr_assert_eq(s, GS_ERR_OPENCL_MISSING, "gs_device_open: %s: %s", gs_status_str(s), gs_ctx_errmsg(ctx));
    if (gs_test_env_true("GS_REQUIRE_OPENCL"))
        cr_assert_fail("GS_REQUIRE_OPENCL=1 but there is no OpenCL device (%s): %s", what, gs_ctx_errmsg(ctx));
    cr_log_warn("no OpenCL device: %s is not run: %s", what, gs_ctx_errmsg(ctx));
    return NULL;
}

/* Deterministic inputs in [-1, 1) for the interpreter checks. */
static void ops_fill(float *x, int64_t n, uint64_t seed) {
    uint64_t s = seed * 6364136223846793005ull + 1442695040888963407ull;
    for (int64_t i = 0; i < n; i++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        x[i] = (float)((double)(s >> 11) / (double)(1ull << 53) * 2.0 - 1.0);
    }
}

/* Normwise error max|y - ref| / max|ref| (max|y - ref| when ref is all zero). */
static double ops_normwise_f(const float *y, const double *ref, int64_t n) {
    double num = 0, den = 0;
    for (int64_t i = 0; i < n; i++) {
        double e = fabs((double)y[i] - ref[i]);
        if (!(e <= num)) num = e; /* NaN propagates */
        if (fabs(ref[i]) > den) den = fabs(ref[i]);
    }
    return den > 0 ? num / den : num;
}

/* Run candidate e of op on the OpenCL device with the caller's inputs (the
 * same argument order as gs_verify) and read the output back into
 * out, whose old contents are the output's initial value. */
static gs_status ops_run_cl(gs_ctx *ctx, gs_device *cl, const gs_op *op, const gs_etir *e, const float *const *ins,
                            const float *bias, float *out) {
    gs_kernel_src ks;
    /* the h100 plan: vector paths and asynchronous copies (spelled as plain
     * copies in OpenCL) are on wherever the state allows them */
    gs_status s = gs_lower_emit(ctx, gs_hw_find_builtin("h100"), op, e, GS_DIALECT_OPENCL, 0, &ks);
    if (s != GS_OK) return s;
    gs_dev_prog prog = {0};
    gs_buffer *buf[GS_MAX_TENSORS + 1] = {0}, *wsbuf = NULL;
    int nbuf = op->ninputs + 1 + (ks.desc.op.has_bias ? 1 : 0);
    int64_t on = gs_tensor_elems(gs_op_out(op));
    s = gs_dev_prog_load(ctx, cl, ks.src, ks.name, ks.smem_bytes, &prog);
    for (int t = 0; t < op->ninputs && s == GS_OK; t++)
        s = gs_buffer_create(ctx, cl, (size_t)gs_tensor_elems(&op->tensors[t]) * 4, ins[t], &buf[t]);
    if (s == GS_OK) s = gs_buffer_create(ctx, cl, (size_t)on * 4, out, &buf[op->ninputs]);
    if (s == GS_OK && ks.desc.op.has_bias)
        s = gs_buffer_create(ctx, cl, (size_t)gs_op_bias_elems(op) * 4, bias, &buf[op->ninputs + 1]);
    if (s == GS_OK && ks.ws_bytes) s = gs_buffer_create(ctx, cl, (size_t)ks.ws_bytes, NULL, &wsbuf); /* split-K */
    if (s == GS_OK) s = gs_dev_prog_launch(ctx, &prog, op, buf, nbuf, wsbuf, (size_t)ks.grid, (size_t)ks.block, NULL);
    if (s == GS_OK) s = gs_buffer_read(ctx, buf[op->ninputs], out, (size_t)on * 4);
    for (int t = 0; t < nbuf; t++) gs_buffer_destroy(buf[t]);
    gs_buffer_destroy(wsbuf);
    gs_dev_prog_free(&prog);
    gs_kernel_src_free(&ks);
    return s;
}

/* ---- 1. the verify sweeps ---------------------------------------------------------- */

#define OPS_MAX_CASES 64

/* Verify the cases of one sweep file with index i % nparts == part. */
static void ops_sweep(const char *file, int part, int nparts, int min_cases) {
    static gs_test_sweep_case cases[OPS_MAX_CASES];
    int n = gs_test_read_sweep(file, cases, OPS_MAX_CASES);
    cr_assert(n >= min_cases, "%s holds %d cases, expected at least %d", file, n, min_cases);
    gs_ctx *ctx = gs_ctx_create();
    gs_device *cl = gs_test_open_dev(ctx);
    const bool asan = getenv("GS_ASAN") != NULL;
    double t0 = gs_now_s();
    int selected = 0, ran = 0, kernels = 0, failed = 0;
    for (int i = part; i < n; i += nparts) {
        const gs_test_sweep_case *c = &cases[i];
        if (asan && selected++ % 4 != 0) continue; /* the sanitizer run checks every 4th case */
        ran++;
        const int want = i % 4 == 2 ? 2 : 1;
        gs_op *op = NULL;
        gs_hw *hw = NULL;
        gs_result *r = NULL;
        gs_status s = gs_op_parse(ctx, c->spec, &op);
        cr_assert_eq(s, GS_OK, "%s:%d: '%s' does not parse: %s", file, c->line, c->spec, gs_ctx_errmsg(ctx));
        s = gs_hw_load(ctx, c->hw, &hw);
        cr_assert_eq(s, GS_OK, "%s:%d: hw '%s': %s", file, c->line, c->hw, gs_ctx_errmsg(ctx));
        gs_construct_opts o;
        gs_construct_opts_default(&o);
        o.seed = c->seed;
        s = gs_construct(ctx, op, hw, &o, &r);
        cr_assert_eq(s, GS_OK, "%s:%d: construct '%s' on %s: %s", file, c->line, c->spec, c->hw, gs_ctx_errmsg(ctx));
        cr_assert(r->n >= 1, "%s:%d: no candidate", file, c->line);
        for (int k = 0; k < want && k < r->n; k++) {
            gs_diff d;
            s = gs_verify(ctx, cl, hw, op, &r->cand[k], c->seed, &d);
            kernels++;
            /* f16/bf16 outputs: verify's tolerance, which adds the type's unit roundoff */
            bool ok = s == GS_OK && d.nonfinite == 0 && d.normwise <= (gs_op_typed(op) ? d.tol : GS_VERIFY_TOL) &&
                      d.reference &&
                      !strcmp(d.reference, "interpreter");
            if (!ok) failed++;
            cr_expect(ok,
                      "%s:%d: %s on %s seed %lu, candidate %d (%s): %s %s; normwise %.3g, max abs %.3g at %lld, "
                      "%lld non-finite, reference %s",
                      file, c->line, c->spec, c->hw, c->seed, k, r->desc[k], gs_status_str(s),
                      s == GS_OK ? "" : gs_ctx_errmsg(ctx), d.normwise, d.max_abs, (long long)d.where,
                      (long long)d.nonfinite, d.reference ? d.reference : "(none)");
        }
        gs_result_destroy(r);
        gs_hw_destroy(hw);
        gs_op_destroy(op);
    }
    if (ops_verbose())
        fprintf(stderr, "ops: %s part %d/%d: %d cases, %d kernels, %d failed, %.1f s\n", file, part + 1, nparts, ran,
                kernels, failed, gs_now_s() - t0);
    cr_assert(ran >= 1, "%s part %d/%d selected no case", file, part + 1, nparts);
    gs_device_close(cl);
    gs_ctx_destroy(ctx);
}

/* Same operator structure: kind, axes, tensors and their affine maps,
 * combine, epilogue. Returns a description of the first difference or NULL. */
static const char *ops_op_diff(const gs_op *a, const gs_op *b) {
    if (a->kind != b->kind) return "kind";
    if (a->naxes != b->naxes || a->ninputs != b->ninputs) return "axis or input count";
    for (int i = 0; i < a->naxes; i++)
        if (strcmp(a->axes[i].name, b->axes[i].name) || a->axes[i].extent != b->axes[i].extent ||
            a->axes[i].kind != b->axes[i].kind)
            return "an axis";
    for (int t = 0; t <= a->ninputs; t++) {
        const gs_tensor *x = &a->tensors[t], *y = &b->tensors[t];
        if (strcmp(x->name, y->name) || x->ndim != y->ndim) return "a tensor's name or rank";
        for (int d = 0; d < x->ndim; d++) {
            if (x->shape[d] != y->shape[d] || x->idx[d].offset != y->idx[d].offset) return "a tensor's shape or offset";
            for (int i = 0; i < GS_MAX_AXES; i++)
                if (x->idx[d].coeff[i] != y->idx[d].coeff[i]) return "an affine map";
        }
    }
    if (a->combine != b->combine) return "combine";
    if (a->epi.alpha != b->epi.alpha || a->epi.beta != b->epi.beta || a->epi.bias_axis != b->epi.bias_axis ||
        a->epi.relu != b->epi.relu || a->has_bias != b->has_bias || a->bias_group != b->bias_group)
        return "epilogue";
    if (a->transA != b->transA || a->transB != b->transB) return "transposes";
    if (strcmp(a->spec, b->spec)) return "canonical spec";
    return NULL;
}

/* Every sweep spec's canonical form (gs_op_spec) parses back to the same
 * operator: what the tools print can be fed back to them. */
Test(ops, sweep_specs_canonical_round_trip) {
    static const char *files[] = {"ops_conv.txt",   "ops_dwconv.txt",  "ops_pool.txt",          "ops_gemv_bgemm.txt",
                                  "ops_reduce.txt", "ops_eltwise.txt", "ops_gemm_epilogue.txt", "ops_gconv.txt"};
    static gs_test_sweep_case cases[OPS_MAX_CASES];
    gs_ctx *ctx = gs_ctx_create();
    int total = 0;
    for (int f = 0; f < 8; f++) {
        int n = gs_test_read_sweep(files[f], cases, OPS_MAX_CASES);
        for (int i = 0; i < n; i++) {
            gs_op a, b;
            cr_assert_eq(gs_op_parse_into(ctx, cases[i].spec, &a), GS_OK, "%s:%d: %s", files[f], cases[i].line,
                         gs_ctx_errmsg(ctx));
            gs_status s = gs_op_parse_into(ctx, gs_op_spec(&a), &b);
            cr_expect_eq(s, GS_OK, "%s:%d: canonical spec '%s' does not parse: %s", files[f], cases[i].line,
                         gs_op_spec(&a), gs_ctx_errmsg(ctx));
            const char *d = s == GS_OK ? ops_op_diff(&a, &b) : NULL;
            cr_expect(d == NULL, "%s:%d: '%s' -> '%s' -> '%s' differs in %s", files[f], cases[i].line, cases[i].spec,
                      a.spec, b.spec, d);
            total++;
        }
    }
    cr_expect(total >= 100, "only %d sweep cases", total);
    gs_ctx_destroy(ctx);
}

Test(ops, conv_sweep_1of3, .timeout = 600) { ops_sweep("ops_conv.txt", 0, 3, 24); }
Test(ops, conv_sweep_2of3, .timeout = 600) { ops_sweep("ops_conv.txt", 1, 3, 24); }
Test(ops, conv_sweep_3of3, .timeout = 600) { ops_sweep("ops_conv.txt", 2, 3, 24); }
Test(ops, dwconv_sweep_1of2, .timeout = 600) { ops_sweep("ops_dwconv.txt", 0, 2, 16); }
Test(ops, dwconv_sweep_2of2, .timeout = 600) { ops_sweep("ops_dwconv.txt", 1, 2, 16); }
Test(ops, gconv_sweep, .timeout = 600) { ops_sweep("ops_gconv.txt", 0, 1, 14); }
Test(ops, pool_sweep, .timeout = 600) { ops_sweep("ops_pool.txt", 0, 1, 16); }
Test(ops, gemv_bgemm_sweep_1of2, .timeout = 600) { ops_sweep("ops_gemv_bgemm.txt", 0, 2, 20); }
Test(ops, gemv_bgemm_sweep_2of2, .timeout = 600) { ops_sweep("ops_gemv_bgemm.txt", 1, 2, 20); }
Test(ops, reduce_sweep, .timeout = 600) { ops_sweep("ops_reduce.txt", 0, 1, 12); }
Test(ops, eltwise_sweep, .timeout = 600) { ops_sweep("ops_eltwise.txt", 0, 1, 10); }
Test(ops, gemm_epilogue_sweep, .timeout = 600) { ops_sweep("ops_gemm_epilogue.txt", 0, 1, 10); }

/* ---- 2. an operator with no builder: 3-D convolution in the IR ------------------
 * GS_MAX_AXES is 8, and n,k,d,p,q + c,t,r,s would be 9, so the batch is
 * folded away (N = 1): spatial k, od, oh, ow; reduce c, t, r, s.
 * Input I[C,D,H,W], filter F[K,C,T,R,S], output O[K,OD,OH,OW] (row-major),
 * with a stride and a (symmetric) pad on each of the three dims. */
typedef struct ops_conv3d {
    int64_t C, D, H, W, K, T, R, S;
    int64_t sd, sh, sw, pd, ph, pw;
    int bias, relu;
} ops_conv3d;

static int64_t ops_out_extent(int64_t in, int64_t k, int64_t stride, int64_t pad) {
    return (in + 2 * pad - k) / stride + 1;
}

static void ops_set_axis(gs_op *op, int a, const char *name, int64_t extent, gs_axis_kind kind) {
    snprintf(op->axes[a].name, GS_NAME_LEN, "%s", name);
    op->axes[a].extent = extent;
    op->axes[a].kind = kind;
}

/* dim d of tensor t is indexed by coeff_a * axis_a + coeff_b * axis_b + offset */
static void ops_set_dim(gs_tensor *t, int d, int64_t shape, int a, int64_t ca, int b, int64_t cb, int64_t offset) {
    t->shape[d] = shape;
    memset(&t->idx[d], 0, sizeof t->idx[d]);
    t->idx[d].coeff[a] = ca;
    if (b >= 0) t->idx[d].coeff[b] = cb;
    t->idx[d].offset = offset;
}

static gs_status ops_build_conv3d(gs_ctx *ctx, gs_op *op, const ops_conv3d *p) {
    memset(op, 0, sizeof *op);
    enum { k = 0, od = 1, oh = 2, ow = 3, c = 4, t = 5, r = 6, s = 7 };
    const int64_t OD = ops_out_extent(p->D, p->T, p->sd, p->pd), OH = ops_out_extent(p->H, p->R, p->sh, p->ph),
                  OW = ops_out_extent(p->W, p->S, p->sw, p->pw);
    op->kind = GS_OPK_CUSTOM;
    op->naxes = 8;
    ops_set_axis(op, k, "k", p->K, GS_AXIS_SPATIAL);
    ops_set_axis(op, od, "od", OD, GS_AXIS_SPATIAL);
    ops_set_axis(op, oh, "oh", OH, GS_AXIS_SPATIAL);
    ops_set_axis(op, ow, "ow", OW, GS_AXIS_SPATIAL);
    ops_set_axis(op, c, "c", p->C, GS_AXIS_REDUCE);
    ops_set_axis(op, t, "t", p->T, GS_AXIS_REDUCE);
    ops_set_axis(op, r, "r", p->R, GS_AXIS_REDUCE);
    ops_set_axis(op, s, "s", p->S, GS_AXIS_REDUCE);
    op->ninputs = 2;
    gs_tensor *I = &op->tensors[0], *F = &op->tensors[1], *O = &op->tensors[2];
    snprintf(I->name, GS_NAME_LEN, "I");
    snprintf(F->name, GS_NAME_LEN, "F");
    snprintf(O->name, GS_NAME_LEN, "O");
    I->ndim = 4;
    ops_set_dim(I, 0, p->C, c, 1, -1, 0, 0);
    ops_set_dim(I, 1, p->D, od, p->sd, t, 1, -p->pd);
    ops_set_dim(I, 2, p->H, oh, p->sh, r, 1, -p->ph);
    ops_set_dim(I, 3, p->W, ow, p->sw, s, 1, -p->pw);
    F->ndim = 5;
    ops_set_dim(F, 0, p->K, k, 1, -1, 0, 0);
    ops_set_dim(F, 1, p->C, c, 1, -1, 0, 0);
    ops_set_dim(F, 2, p->T, t, 1, -1, 0, 0);
    ops_set_dim(F, 3, p->R, r, 1, -1, 0, 0);
    ops_set_dim(F, 4, p->S, s, 1, -1, 0, 0);
    O->ndim = 4;
    ops_set_dim(O, 0, p->K, k, 1, -1, 0, 0);
    ops_set_dim(O, 1, OD, od, 1, -1, 0, 0);
    ops_set_dim(O, 2, OH, oh, 1, -1, 0, 0);
    ops_set_dim(O, 3, OW, ow, 1, -1, 0, 0);
    op->combine = GS_COMBINE_MAC;
    op->epi = (gs_epilogue){1.0f, 0.0f, p->bias ? k : -1, p->relu, 0};
    op->has_bias = p->bias != 0;
    snprintf(op->spec, sizeof op->spec,
             "conv3d(custom IR) C=%lld D=%lld H=%lld W=%lld K=%lld T=%lld R=%lld S=%lld stride=%lld,%lld,%lld "
             "pad=%lld,%lld,%lld bias=%d relu=%d",
             (long long)p->C, (long long)p->D, (long long)p->H, (long long)p->W, (long long)p->K, (long long)p->T,
             (long long)p->R, (long long)p->S, (long long)p->sd, (long long)p->sh, (long long)p->sw,
             (long long)p->pd, (long long)p->ph, (long long)p->pw, p->bias, p->relu);
    return gs_op_validate(ctx, op);
}

/* Straight loops, written independently of the IR. */
static void ops_conv3d_naive(const ops_conv3d *p, const float *I, const float *F, const float *bias, double *O) {
    const int64_t OD = ops_out_extent(p->D, p->T, p->sd, p->pd), OH = ops_out_extent(p->H, p->R, p->sh, p->ph),
                  OW = ops_out_extent(p->W, p->S, p->sw, p->pw);
    for (int64_t k = 0; k < p->K; k++)
        for (int64_t z = 0; z < OD; z++)
            for (int64_t y = 0; y < OH; y++)
                for (int64_t x = 0; x < OW; x++) {
                    double acc = 0;
                    for (int64_t c = 0; c < p->C; c++)
                        for (int64_t t = 0; t < p->T; t++)
                            for (int64_t r = 0; r < p->R; r++)
                                for (int64_t s = 0; s < p->S; s++) {
                                    int64_t d = z * p->sd + t - p->pd, h = y * p->sh + r - p->ph,
                                            w = x * p->sw + s - p->pw;
                                    if (d < 0 || d >= p->D || h < 0 || h >= p->H || w < 0 || w >= p->W) continue;
                                    acc += (double)I[((c * p->D + d) * p->H + h) * p->W + w] *
                                           (double)F[(((k * p->C + c) * p->T + t) * p->R + r) * p->S + s];
                                }
                    if (p->bias) acc += bias[k];
                    if (p->relu && acc < 0) acc = 0;
                    O[((k * OD + z) * OH + y) * OW + x] = acc;
                }
}

Test(ops, conv3d_custom_ir_construct_emit_compile_verify, .timeout = 600) {
    static const ops_conv3d shapes[] = {
        /* C  D  H  W  K  T  R  S  sd sh sw pd ph pw bias relu */
        {3, 5, 7, 6, 4, 3, 3, 2, 1, 2, 1, 1, 0, 1, 0, 0},
        {2, 4, 9, 5, 5, 2, 3, 3, 2, 1, 2, 0, 1, 1, 1, 1},
    };
    static const char *hws[] = {"h100", "t4"};
    gs_ctx *ctx = gs_ctx_create();
    const bool nvrtc = gs_nvrtc_available(ctx);
    if (!nvrtc) {
        if (gs_test_env_true("GS_REQUIRE_NVRTC"))
            cr_assert_fail("GS_REQUIRE_NVRTC=1 but NVRTC is missing: %s", gs_ctx_errmsg(ctx));
        cr_log_warn("ops: conv3d: NVRTC not available (%s): the CUDA compile is not run, the OpenCL check is",
                    gs_ctx_errmsg(ctx));
    }
    gs_device *cl = ops_open_cl_optional(ctx, "the PoCL verification of the conv3d");
    gs_status s;
    for (int i = 0; i < 2; i++) {
        const ops_conv3d *p = &shapes[i];
        gs_op op;
        s = ops_build_conv3d(ctx, &op, p);
        cr_assert_eq(s, GS_OK, "conv3d %d: gs_op_validate: %s", i, gs_ctx_errmsg(ctx));
        cr_assert_eq(op.naxes, GS_MAX_AXES);

        /* the interpreter reads the hand-written affine maps as the naive loops do */
        int64_t ni = gs_tensor_elems(&op.tensors[0]), nf = gs_tensor_elems(&op.tensors[1]),
                no = gs_tensor_elems(&op.tensors[2]);
        float *I = malloc((size_t)ni * 4), *F = malloc((size_t)nf * 4), *O = calloc((size_t)no, 4),
              bias[8];
        double *ref = malloc((size_t)no * 8);
        cr_assert(I && F && O && ref);
        ops_fill(I, ni, 11 + (uint64_t)i);
        ops_fill(F, nf, 23 + (uint64_t)i);
        ops_fill(bias, 8, 31);
        const float *ins[2] = {I, F};
        cr_assert_eq(gs_op_reference(ctx, &op, ins, bias, O), GS_OK, "%s", gs_ctx_errmsg(ctx));
        ops_conv3d_naive(p, I, F, bias, ref);
        double err = ops_normwise_f(O, ref, no);
        cr_expect(err <= 1e-6, "conv3d %d: interpreter vs naive loops: normwise %.3g", i, err);

        for (int h = 0; h < 2; h++) {
            if (!gs_test_case_runs(2 * i + h, 3)) continue; /* the sanitizer pass: shape 0 on h100, 1 on t4 */
            gs_hw *hw = NULL;
            cr_assert_eq(gs_hw_load(ctx, hws[h], &hw), GS_OK);
            gs_construct_opts o;
            gs_construct_opts_default(&o);
            o.seed = 1 + (uint64_t)h;
            gs_result *r = NULL;
            s = gs_construct(ctx, &op, hw, &o, &r);
            cr_assert_eq(s, GS_OK, "conv3d %d on %s: construct: %s", i, hws[h], gs_ctx_errmsg(ctx));
            cr_assert(r->n >= 1);
            for (int k = 0; k < 2 && k < r->n; k++) {
                gs_kernel_src cu, ocl;
                s = gs_lower_emit(ctx, hw, &op, &r->cand[k], GS_DIALECT_CUDA, gs_hw_sm(hw), &cu);
                cr_assert_eq(s, GS_OK, "conv3d %d: emit CUDA: %s", i, gs_ctx_errmsg(ctx));
                s = gs_lower_emit(ctx, hw, &op, &r->cand[k], GS_DIALECT_OPENCL, 0, &ocl);
                cr_assert_eq(s, GS_OK, "conv3d %d: emit OpenCL: %s", i, gs_ctx_errmsg(ctx));
                cr_expect(strstr(cu.src, "__global__") && strstr(cu.src, cu.name), "CUDA source lacks its kernel");
                cr_expect(strstr(ocl.src, "__kernel") && strstr(ocl.src, ocl.name), "OpenCL source lacks its kernel");
                cr_expect(cu.grid == ocl.grid && cu.block == ocl.block && cu.smem_bytes == ocl.smem_bytes);
                cr_expect(cu.smem_bytes <= hw->smem_per_block_optin && cu.block <= hw->max_threads_per_block);
                if (nvrtc) {
                    int arch = gs_nvrtc_nearest_arch(ctx, gs_hw_sm(hw));
                    gs_kernel_src cua;
                    cr_assert_eq(gs_lower_emit(ctx, hw, &op, &r->cand[k], GS_DIALECT_CUDA, arch, &cua), GS_OK);
                    gs_nvrtc_out nv;
                    s = gs_nvrtc_compile(ctx, cua.src, cua.name, arch, false, true, &nv);
                    cr_expect_eq(s, GS_OK, "conv3d %d on %s cand %d (%s): NVRTC sm_%d: %s", i, hws[h], k, r->desc[k],
                                 arch, gs_ctx_errmsg(ctx));
                    if (s == GS_OK) {
                        cr_expect_eq(nv.stats.spill_store_bytes + nv.stats.spill_load_bytes, 0,
                                     "conv3d %d on %s (%s): %lld spill bytes", i, hws[h], r->desc[k],
                                     (long long)(nv.stats.spill_store_bytes + nv.stats.spill_load_bytes));
                        cr_expect(nv.stats.registers > 0 && nv.stats.registers <= hw->max_regs_per_thread);
                        cr_expect_eq(nv.stats.smem_bytes, cua.smem_dynamic ? 0 : cua.smem_bytes, "ptxas smem %lld vs emitted %lld",
                                     (long long)nv.stats.smem_bytes, (long long)cua.smem_bytes);
                    }
                    gs_nvrtc_out_free(&nv);
                    gs_kernel_src_free(&cua);
                }
                if (cl) {
                    gs_diff d;
                    s = gs_verify(ctx, cl, hw, &op, &r->cand[k], 5 + (uint64_t)k, &d);
                    cr_expect_eq(s, GS_OK, "conv3d %d on %s cand %d (%s): %s", i, hws[h], k, r->desc[k],
                                 gs_ctx_errmsg(ctx));
                    cr_expect(d.normwise <= GS_VERIFY_TOL && d.nonfinite == 0, "conv3d: normwise %.3g", d.normwise);
                    cr_expect(d.reference && !strcmp(d.reference, "interpreter"));
                    /* and with the naive loops' inputs, against the naive loops */
                    float *y = calloc((size_t)no, 4);
                    cr_assert_not_null(y);
                    s = ops_run_cl(ctx, cl, &op, &r->cand[k], ins, bias, y);
                    cr_expect_eq(s, GS_OK, "%s", gs_ctx_errmsg(ctx));
                    err = ops_normwise_f(y, ref, no);
                    cr_expect(err <= GS_VERIFY_TOL, "conv3d %d on %s cand %d: kernel vs naive loops: normwise %.3g", i,
                              hws[h], k, err);
                    free(y);
                }
                gs_kernel_src_free(&cu);
                gs_kernel_src_free(&ocl);
            }
            gs_result_destroy(r);
            gs_hw_destroy(hw);
        }
        free(I);
        free(F);
        free(O);
        free(ref);
    }
    gs_device_close(cl);
    gs_ctx_destroy(ctx);
}

/* The small conv3d the validation tests alter (with a bias over k or
 * without), built and asserted. */
static gs_op ops_small_conv3d(gs_ctx *ctx, int bias) {
    ops_conv3d p = {3, 5, 7, 6, 4, 3, 3, 2, 1, 2, 1, 1, 0, 1, bias, 0};
    gs_op op;
    cr_assert_eq(ops_build_conv3d(ctx, &op, &p), GS_OK, "%s", gs_ctx_errmsg(ctx));
    return op;
}

/* The hand-built IR is checked by gs_op_validate like any builder's. */
Test(ops, custom_ir_validation_errors) {
    gs_ctx *ctx = gs_ctx_create();
    const gs_op op = ops_small_conv3d(ctx, 0);
    gs_op bad = op;
    bad.tensors[2].idx[1].coeff[5] = 1; /* output indexed by the reduce axis t */
    cr_expect_eq(gs_op_validate(ctx, &bad), GS_ERR_INVALID_ARG);
    cr_expect(strstr(gs_ctx_errmsg(ctx), "reduce axis t"), "%s", gs_ctx_errmsg(ctx));
    bad = op;
    bad.axes[6].extent = 0;
    cr_expect_eq(gs_op_validate(ctx, &bad), GS_ERR_BAD_SHAPE);
    cr_expect(strstr(gs_ctx_errmsg(ctx), "axis r"), "%s", gs_ctx_errmsg(ctx));
    bad = op;
    bad.naxes = GS_MAX_AXES + 1;
    cr_expect_eq(gs_op_validate(ctx, &bad), GS_ERR_INVALID_ARG);
    gs_ctx_destroy(ctx);
}

/* Regression (found while writing the custom-IR test): gs_op_validate refuses
 * a bias the kernel cannot take, with GS_ERR_INVALID_ARG:
 *  - has_bias with a negative bias_axis, which verification would index as
 *    op->axes[-1] while the interpreter and the lowering dropped the bias;
 *  - a bias over a reduce axis, for which the lowering would print
 *    `y += bias[x<axis>]` with an index only spatial axes define (the OpenCL
 *    build then fails) and the interpreter would add bias[0] everywhere.
 * It only calls gs_op_validate, so a regression fails cleanly. */
Test(ops, custom_ir_validate_refuses_bad_bias_axis) {
    gs_ctx *ctx = gs_ctx_create();
    const gs_op op = ops_small_conv3d(ctx, 1);
    cr_assert(op.has_bias && op.epi.bias_axis == 0);
    gs_op bad = op;
    bad.epi.bias_axis = -1; /* a bias flag without a bias axis */
    gs_status s = gs_op_validate(ctx, &bad);
    cr_expect_eq(s, GS_ERR_INVALID_ARG, "has_bias with bias_axis=-1 must be refused (%s)", gs_status_str(s));
    cr_expect(strstr(gs_ctx_errmsg(ctx), "bias axis -1 is invalid"), "message: %s", gs_ctx_errmsg(ctx));
    bad.epi.bias_axis = -5;
    s = gs_op_validate(ctx, &bad);
    cr_expect_eq(s, GS_ERR_INVALID_ARG, "has_bias with bias_axis=-5 must be refused (%s)", gs_status_str(s));
    bad.epi.bias_axis = 4; /* c, a reduce axis */
    s = gs_op_validate(ctx, &bad);
    cr_expect_eq(s, GS_ERR_INVALID_ARG, "a bias over reduce axis c must be refused (%s)", gs_status_str(s));
    gs_ctx_destroy(ctx);
}

/* ---- 3. malformed specs: library status + message, CLI exit 2 + one line ------------ */

typedef struct ops_bad {
    gs_status status;
    char needle[200];
    char spec[300];
    int line;
} ops_bad;

static bool ops_status_from_name(const char *name, gs_status *out) {
    static const struct {
        const char *name;
        gs_status s;
    } tab[] = {
        {"GS_ERR_INVALID_ARG", GS_ERR_INVALID_ARG}, {"GS_ERR_PARSE", GS_ERR_PARSE},
        {"GS_ERR_UNKNOWN_OP", GS_ERR_UNKNOWN_OP},   {"GS_ERR_BAD_SHAPE", GS_ERR_BAD_SHAPE},
        {"GS_ERR_UNSUPPORTED", GS_ERR_UNSUPPORTED},
    };
    for (size_t i = 0; i < sizeof tab / sizeof tab[0]; i++)
        if (!strcmp(name, tab[i].name)) {
            *out = tab[i].s;
            return true;
        }
    return false;
}

static int ops_read_bad(ops_bad *cases, int cap) {
    gs_test_lines l;
    gs_test_lines_read("ops_bad_specs.txt", &l);
    cr_assert(l.n <= cap, "%s: more than %d cases", l.path, cap);
    for (int n = 0; n < l.n; n++) {
        char *line = l.text[n];
        char *t1 = strchr(line, '\t'), *t2 = t1 ? strchr(t1 + 1, '\t') : NULL;
        cr_assert(t1 && t2, "%s:%d: want STATUS<TAB>SUBSTRING<TAB>SPEC", l.path, l.lineno[n]);
        *t1 = *t2 = 0;
        cr_assert(ops_status_from_name(line, &cases[n].status), "%s:%d: unknown status '%s'", l.path, l.lineno[n],
                  line);
        snprintf(cases[n].needle, sizeof cases[n].needle, "%s", t1 + 1);
        snprintf(cases[n].spec, sizeof cases[n].spec, "%s", t2 + 1);
        cases[n].line = l.lineno[n];
    }
    int n = l.n;
    gs_test_lines_free(&l);
    return n;
}

Test(ops, bad_specs_library) {
    static ops_bad cases[160];
    int n = ops_read_bad(cases, 160);
    cr_assert(n >= 60, "only %d bad specs", n);
    gs_ctx *ctx = gs_ctx_create();
    int classes[8] = {0};
    for (int i = 0; i < n; i++) {
        const ops_bad *c = &cases[i];
        gs_op *op = (gs_op *)ctx; /* must come back NULL */
        gs_status s = gs_op_parse(ctx, c->spec, &op);
        cr_expect(s == c->status && op == NULL && strstr(gs_ctx_errmsg(ctx), c->needle),
                  "ops_bad_specs.txt:%d: '%s': got %s '%s', want %s containing '%s'", c->line, c->spec,
                  gs_status_str(s), gs_ctx_errmsg(ctx), gs_status_str(c->status), c->needle);
        if (s == GS_OK) gs_op_destroy(op);
        static const char *heads[] = {"conv2d ", "dwconv2d ", "avgpool2d ", "maxpool2d ", "gemv ", "bgemm ", "row", "gemm "};
        for (int h = 0; h < 8; h++)
            if (!strncmp(c->spec, heads[h], strlen(heads[h]))) classes[h]++;
    }
    for (int h = 0; h < 8; h++) cr_expect(classes[h] >= 2, "class %d has %d bad specs", h, classes[h]);
    gs_ctx_destroy(ctx);
}

/* Single-quote s for /bin/sh. */
static void ops_shell_quote(char *out, size_t n, const char *s) {
    size_t o = 0;
    if (o + 1 < n) out[o++] = '\'';
    for (; *s && o + 5 < n; s++) {
        if (*s == '\'') {
            memcpy(out + o, "'\\''", 4);
            o += 4;
        } else {
            out[o++] = *s;
        }
    }
    if (o + 1 < n) out[o++] = '\'';
    out[o] = 0;
}

Test(ops, bad_specs_cli, .timeout = 600) {
    const char *bin = gs_test_cli_bin("the CLI checks");
    static ops_bad cases[160];
    int n = ops_read_bad(cases, 160);
    char tmpl[] = "/tmp/gs_ops_stderr_XXXXXX";
    int fd = mkstemp(tmpl);
    cr_assert(fd >= 0, "mkstemp failed");
    close(fd);
    char qbin[600], qspec[700], qerr[100], cmd[2048];
    ops_shell_quote(qbin, sizeof qbin, bin);
    ops_shell_quote(qerr, sizeof qerr, tmpl);
    static const char *subs[] = {"construct", "verify"};
    for (int i = 0; i < n; i++) {
        const ops_bad *c = &cases[i];
        ops_shell_quote(qspec, sizeof qspec, c->spec);
        const char *sub = subs[i % 2]; /* alternate the two subcommands that take a spec */
        snprintf(cmd, sizeof cmd, "%s %s %s </dev/null >/dev/null 2>%s", qbin, sub, qspec, qerr);
        int st = system(cmd);
        cr_assert(st != -1 && WIFEXITED(st), "ops_bad_specs.txt:%d: `gensor %s` did not exit normally (status %d)",
                  c->line, sub, st);
        FILE *f = fopen(tmpl, "r");
        cr_assert_not_null(f);
        char err[4096];
        size_t len = fread(err, 1, sizeof err - 1, f);
        err[len] = 0;
        fclose(f);
        int lines = 0;
        for (size_t j = 0; j < len; j++) lines += err[j] == '\n';
        cr_expect(WEXITSTATUS(st) == 2 && lines == 1 && len > 0 && err[len - 1] == '\n',
                  "ops_bad_specs.txt:%d: `gensor %s '%s'`: exit %d (want 2), %d stderr lines (want 1): '%s'", c->line,
                  sub, c->spec, WEXITSTATUS(st), lines, err);
        cr_expect(strstr(err, c->needle), "ops_bad_specs.txt:%d: `gensor %s '%s'`: stderr '%s' lacks '%s'", c->line,
                  sub, c->spec, err, c->needle);
    }
    unlink(tmpl);
}

/* ---- 4. the reference interpreter against GSL and against hand computation ---------- */

/* gemv: the interpreter vs gsl_blas_dgemv on double copies. */
Test(ops, interpreter_gemv_vs_gsl_dgemv) {
    static const struct {
        int64_t M, N;
        int tA;
        float alpha, beta;
    } cs[] = {{1, 1, 0, 1, 0}, {7, 5, 0, 1.5f, 0.5f}, {5, 7, 1, -2, 1}, {13, 31, 1, 0.25f, -0.75f}, {61, 2, 0, 1, 1}};
    gs_ctx *ctx = gs_ctx_create();
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
        gs_op op;
        cr_assert_eq(gs_op_build_gemv(ctx, &op, cs[i].M, cs[i].N, cs[i].tA, cs[i].alpha, cs[i].beta), GS_OK);
        const int64_t M = cs[i].M, N = cs[i].N;
        float *A = malloc((size_t)(M * N) * 4), *x = malloc((size_t)N * 4), *y = malloc((size_t)M * 4);
        ops_fill(A, M * N, 100 + i);
        ops_fill(x, N, 200 + i);
        ops_fill(y, M, 300 + i);
        gsl_matrix *gA = cs[i].tA ? gsl_matrix_alloc((size_t)N, (size_t)M) : gsl_matrix_alloc((size_t)M, (size_t)N);
        gsl_vector *gx = gsl_vector_alloc((size_t)N), *gy = gsl_vector_alloc((size_t)M);
        for (int64_t j = 0; j < M * N; j++) gA->data[j] = A[j]; /* row-major, tda == size2 */
        for (int64_t j = 0; j < N; j++) gsl_vector_set(gx, (size_t)j, x[j]);
        for (int64_t j = 0; j < M; j++) gsl_vector_set(gy, (size_t)j, y[j]);
        gsl_blas_dgemv(cs[i].tA ? CblasTrans : CblasNoTrans, cs[i].alpha, gA, gx, cs[i].beta, gy);
        const float *ins[2] = {A, x};
        cr_assert_eq(gs_op_reference(ctx, &op, ins, NULL, y), GS_OK, "%s", gs_ctx_errmsg(ctx));
        double err = ops_normwise_f(y, gy->data, M);
        cr_expect(err <= 1e-6, "%s: interpreter vs gsl_blas_dgemv: normwise %.3g", op.spec, err);
        gsl_matrix_free(gA);
        gsl_vector_free(gx);
        gsl_vector_free(gy);
        free(A);
        free(x);
        free(y);
    }
    gs_ctx_destroy(ctx);
}

/* bgemm: the interpreter vs gsl_blas_dgemm per batch. */
Test(ops, interpreter_bgemm_vs_gsl_dgemm) {
    static const struct {
        int64_t B, M, N, K;
        int tA, tB;
        float alpha, beta;
    } cs[] = {{1, 3, 5, 7, 0, 0, 1, 0},          {3, 5, 2, 13, 1, 0, 1.5f, 0.5f}, {12, 2, 3, 5, 0, 1, -2, 1},
              {3, 7, 7, 3, 1, 1, 0.25f, -0.75f}, {2, 1, 1, 1, 1, 1, 1, 1}};
    gs_ctx *ctx = gs_ctx_create();
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
        const int64_t B = cs[i].B, M = cs[i].M, N = cs[i].N, K = cs[i].K;
        gs_op op;
        cr_assert_eq(gs_op_build_bgemm(ctx, &op, B, M, N, K, cs[i].tA, cs[i].tB, cs[i].alpha, cs[i].beta), GS_OK);
        float *A = malloc((size_t)(B * M * K) * 4), *Bm = malloc((size_t)(B * K * N) * 4),
              *C = malloc((size_t)(B * M * N) * 4);
        double *ref = malloc((size_t)(B * M * N) * 8);
        ops_fill(A, B * M * K, 400 + i);
        ops_fill(Bm, B * K * N, 500 + i);
        ops_fill(C, B * M * N, 600 + i);
        for (int64_t b = 0; b < B; b++) {
            gsl_matrix *ga = cs[i].tA ? gsl_matrix_alloc((size_t)K, (size_t)M) : gsl_matrix_alloc((size_t)M, (size_t)K);
            gsl_matrix *gb = cs[i].tB ? gsl_matrix_alloc((size_t)N, (size_t)K) : gsl_matrix_alloc((size_t)K, (size_t)N);
            gsl_matrix *gc = gsl_matrix_alloc((size_t)M, (size_t)N);
            for (int64_t j = 0; j < M * K; j++) ga->data[j] = A[b * M * K + j];
            for (int64_t j = 0; j < K * N; j++) gb->data[j] = Bm[b * K * N + j];
            for (int64_t j = 0; j < M * N; j++) gc->data[j] = C[b * M * N + j];
            gsl_blas_dgemm(cs[i].tA ? CblasTrans : CblasNoTrans, cs[i].tB ? CblasTrans : CblasNoTrans, cs[i].alpha,
                           ga, gb, cs[i].beta, gc);
            for (int64_t j = 0; j < M * N; j++) ref[b * M * N + j] = gc->data[j];
            gsl_matrix_free(ga);
            gsl_matrix_free(gb);
            gsl_matrix_free(gc);
        }
        const float *ins[2] = {A, Bm};
        cr_assert_eq(gs_op_reference(ctx, &op, ins, NULL, C), GS_OK, "%s", gs_ctx_errmsg(ctx));
        double err = ops_normwise_f(C, ref, B * M * N);
        cr_expect(err <= 1e-6, "%s: interpreter vs per-batch gsl_blas_dgemm: normwise %.3g", op.spec, err);
        free(A);
        free(Bm);
        free(C);
        free(ref);
    }
    gs_ctx_destroy(ctx);
}

/* gemm with a fused epilogue: the interpreter vs dgemm, then + bias[n], relu. */
Test(ops, interpreter_gemm_epilogue_vs_gsl_dgemm) {
    static const char *specs[] = {"gemm M=5 N=7 K=3 transA=1 alpha=1.5 beta=0.5 bias=1 relu=1",
                                  "gemm M=6 N=4 K=9 transB=1 alpha=-2 beta=1 relu=1",
                                  "gemm M=3 N=8 K=2 transA=1 transB=1 bias=1"};
    gs_ctx *ctx = gs_ctx_create();
    for (int i = 0; i < 3; i++) {
        gs_op op;
        cr_assert_eq(gs_op_parse_into(ctx, specs[i], &op), GS_OK, "%s", gs_ctx_errmsg(ctx));
        const int64_t M = op.axes[0].extent, N = op.axes[1].extent, K = op.axes[2].extent;
        float A[64], Bm[64], C[64], bias[16];
        double ref[64];
        ops_fill(A, M * K, 700 + (uint64_t)i);
        ops_fill(Bm, K * N, 800 + (uint64_t)i);
        ops_fill(C, M * N, 900 + (uint64_t)i);
        ops_fill(bias, N, 1000 + (uint64_t)i);
        gsl_matrix *ga = op.transA ? gsl_matrix_alloc((size_t)K, (size_t)M) : gsl_matrix_alloc((size_t)M, (size_t)K);
        gsl_matrix *gb = op.transB ? gsl_matrix_alloc((size_t)N, (size_t)K) : gsl_matrix_alloc((size_t)K, (size_t)N);
        gsl_matrix *gc = gsl_matrix_alloc((size_t)M, (size_t)N);
        for (int64_t j = 0; j < M * K; j++) ga->data[j] = A[j];
        for (int64_t j = 0; j < K * N; j++) gb->data[j] = Bm[j];
        for (int64_t j = 0; j < M * N; j++) gc->data[j] = C[j];
        gsl_blas_dgemm(op.transA ? CblasTrans : CblasNoTrans, op.transB ? CblasTrans : CblasNoTrans, op.epi.alpha, ga,
                       gb, op.epi.beta, gc);
        for (int64_t m = 0; m < M; m++)
            for (int64_t n = 0; n < N; n++) {
                double v = gc->data[m * N + n] + (op.has_bias ? bias[n] : 0.0);
                ref[m * N + n] = op.epi.relu && v < 0 ? 0 : v;
            }
        const float *ins[2] = {A, Bm};
        cr_assert_eq(gs_op_reference(ctx, &op, ins, bias, C), GS_OK, "%s", gs_ctx_errmsg(ctx));
        double err = ops_normwise_f(C, ref, M * N);
        cr_expect(err <= 1e-6, "%s: interpreter vs dgemm + bias + relu: normwise %.3g", specs[i], err);
        gsl_matrix_free(ga);
        gsl_matrix_free(gb);
        gsl_matrix_free(gc);
    }
    gs_ctx_destroy(ctx);
}

/* A hand-computed case: spec, inputs, optional bias, expected output. The
 * interpreter must reproduce it, and so must the top constructed kernel(s)
 * on the OpenCL device (when there is one): `top` candidates (default 1). */
typedef struct ops_hand {
    const char *spec;
    const float *in0, *in1, *bias;
    const float *want;
    int nwant;
    int top;
} ops_hand;

static void ops_check_hand(gs_ctx *ctx, gs_device *cl, const ops_hand *h) {
    gs_op op;
    cr_assert_eq(gs_op_parse_into(ctx, h->spec, &op), GS_OK, "%s: %s", h->spec, gs_ctx_errmsg(ctx));
    int64_t on = gs_tensor_elems(gs_op_out(&op));
    cr_assert_eq(on, h->nwant, "%s: output has %lld elements, the hand computation %d", h->spec, (long long)on,
                 h->nwant);
    /* an operator of three inputs (inputs=3) takes its third from the bias slot */
    const float *ins[3] = {h->in0, h->in1, op.ninputs > 2 ? h->bias : NULL};
    const float *hbias = op.ninputs > 2 ? NULL : h->bias;
    float y[64];
    cr_assert(on <= 64);
    for (int i = 0; i < on; i++) y[i] = 12345.0f; /* beta = 0: must be overwritten */
    cr_assert_eq(gs_op_reference(ctx, &op, ins, hbias, y), GS_OK, "%s", gs_ctx_errmsg(ctx));
    for (int i = 0; i < on; i++)
        cr_expect(fabsf(y[i] - h->want[i]) <= 1e-6f * fmaxf(1.0f, fabsf(h->want[i])),
                  "%s: interpreter output[%d] = %.9g, hand-computed %.9g", h->spec, i, y[i], h->want[i]);
    if (!cl) return;
    gs_hw *hw = NULL;
    cr_assert_eq(gs_hw_load(ctx, "rtx3090", &hw), GS_OK);
    gs_construct_opts o;
    gs_construct_opts_default(&o);
    gs_result *r = NULL;
    cr_assert_eq(gs_construct(ctx, &op, hw, &o, &r), GS_OK, "%s: %s", h->spec, gs_ctx_errmsg(ctx));
    const int top = h->top > 0 ? h->top : 1;
    for (int k = 0; k < top && k < r->n; k++) {
        for (int i = 0; i < on; i++) y[i] = 12345.0f;
        gs_status s = ops_run_cl(ctx, cl, &op, &r->cand[k], ins, hbias, y);
        cr_expect_eq(s, GS_OK, "%s cand %d: %s", h->spec, k, gs_ctx_errmsg(ctx));
        for (int i = 0; i < on && s == GS_OK; i++)
            cr_expect(fabsf(y[i] - h->want[i]) <= 1e-5f * fmaxf(1.0f, fabsf(h->want[i])),
                      "%s on OpenCL, cand %d (%s): output[%d] = %.9g, hand-computed %.9g", h->spec, k, r->desc[k], i,
                      y[i], h->want[i]);
    }
    gs_result_destroy(r);
    gs_hw_destroy(hw);
}

/* Check every case of a hand-computed table, on the OpenCL device too when
 * there is one. */
static void ops_check_hand_cases(const ops_hand *cases, size_t n) {
    gs_ctx *ctx = gs_ctx_create();
    gs_device *cl = ops_open_cl_optional(ctx, "the OpenCL half of the hand-computed cases");
    for (size_t i = 0; i < n; i++) ops_check_hand(ctx, cl, &cases[i]);
    gs_device_close(cl);
    gs_ctx_destroy(ctx);
}

/* X = [[1,2,3],[4,5,6],[7,8,9]] (1x1x3x3), F = [[1,2],[3,4]] (1x1x2x2). */
static const float OPS_X9[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
static const float OPS_F4[4] = {1, 2, 3, 4};

/* Copy n channels from channel at of src [outer][chans][inner] into dst
 * [outer][n][inner] (gather), or back (scatter). */
static void ops_chan_copy(float *big, float *part, int64_t outer, int64_t chans, int64_t inner, int64_t at, int64_t n,
                          bool gather) {
    for (int64_t o = 0; o < outer; o++)
        for (int64_t c = 0; c < n; c++)
            for (int64_t i = 0; i < inner; i++) {
                float *b = &big[(o * chans + at + c) * inner + i], *p = &part[(o * n + c) * inner + i];
                if (gather) *p = *b;
                else *b = *p;
            }
}

/* A grouped conv (conv2d groups=G) in the reference interpreter equals its G
 * ungrouped convs: group g computes output channels g*K/G.. from input
 * channels g*C/G.., filter rows g*K/G.. and the bias slice. The ungrouped conv
 * is the one the other sweeps and the hand-computed cases pin, so this checks
 * the grouped builder's affine maps and the grouped bias index (bias_group)
 * independently; the PoCL kernels are checked against the same interpreter
 * by gconv_sweep. Shapes: groups 2 to 4, channels per group 1 and odd,
 * stride, asymmetric padding, dilation, nhwc, bias with relu and with clip. */
Test(ops, grouped_conv_is_its_groups, .timeout = 120) {
    static const struct {
        const char *grouped, *part; /* the grouped conv, and one group of it ungrouped */
        int64_t G;
    } cases[] = {
        {"conv2d N=2 C=6 H=7 W=5 K=9 R=3 S=2 groups=3 stride=2 pad_top=1 pad_left=1 dilh=2 bias=1 relu=1",
         "conv2d N=2 C=2 H=7 W=5 K=3 R=3 S=2 stride=2 pad_top=1 pad_left=1 dilh=2 bias=1 relu=1", 3},
        {"conv2d N=1 C=4 H=5 W=6 K=8 R=3 S=3 groups=4 pad=1 layout=nhwc bias=1",
         "conv2d N=1 C=1 H=5 W=6 K=2 R=3 S=3 pad=1 layout=nhwc bias=1", 4},
        {"conv2d N=2 C=10 H=6 W=6 K=4 R=1 S=1 groups=2 bias=1 clip_lo=-0.2 clip_hi=0.3",
         "conv2d N=2 C=5 H=6 W=6 K=2 R=1 S=1 bias=1 clip_lo=-0.2 clip_hi=0.3", 2},
        {"conv2d N=1 C=3 H=9 W=4 K=3 R=2 S=3 groups=3 strideh=3 padw=2 dilw=2 layout=nhwc",
         "conv2d N=1 C=1 H=9 W=4 K=1 R=2 S=3 strideh=3 padw=2 dilw=2 layout=nhwc", 3},
    };
    gs_ctx *ctx = gs_ctx_create();
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        gs_op g, p;
        cr_assert_eq(gs_op_parse_into(ctx, cases[i].grouped, &g), GS_OK, "%s: %s", cases[i].grouped, gs_ctx_errmsg(ctx));
        cr_assert_eq(gs_op_parse_into(ctx, cases[i].part, &p), GS_OK, "%s: %s", cases[i].part, gs_ctx_errmsg(ctx));
        const bool nhwc = strstr(cases[i].grouped, "nhwc") != NULL;
        const gs_tensor *X = &g.tensors[0], *F = &g.tensors[1], *O = gs_op_out(&g);
        const int64_t G = cases[i].G, N = X->shape[0], C = X->shape[nhwc ? 3 : 1], K = F->shape[0];
        const int64_t HW = nhwc ? X->shape[1] * X->shape[2] : X->shape[2] * X->shape[3];
        const int64_t PQ = nhwc ? O->shape[1] * O->shape[2] : O->shape[2] * O->shape[3];
        const int64_t Cg = C / G, Kg = K / G, frow = gs_tensor_elems(F) / K;
        cr_expect_eq(g.bias_group != 0, g.has_bias, "%s: bias_group %d", cases[i].grouped, g.bias_group);
        cr_expect_eq(gs_op_bias_elems(&g), g.has_bias ? K : 0, "%s: %lld bias elements", cases[i].grouped,
                     (long long)gs_op_bias_elems(&g));
        float *x = malloc((size_t)gs_tensor_elems(X) * 4), *f = malloc((size_t)gs_tensor_elems(F) * 4);
        float *bias = malloc((size_t)K * 4), *y = calloc((size_t)gs_tensor_elems(O), 4);
        float *want = calloc((size_t)gs_tensor_elems(O), 4), *xp = malloc((size_t)gs_tensor_elems(&p.tensors[0]) * 4);
        float *yp = calloc((size_t)gs_tensor_elems(gs_op_out(&p)), 4);
        ops_fill(x, gs_tensor_elems(X), 3 + i);
        ops_fill(f, gs_tensor_elems(F), 5 + i);
        ops_fill(bias, K, 7 + i);
        const float *ins[2] = {x, f};
        cr_assert_eq(gs_op_reference(ctx, &g, ins, g.has_bias ? bias : NULL, y), GS_OK, "%s", gs_ctx_errmsg(ctx));
        for (int64_t grp = 0; grp < G; grp++) {
            /* nchw: [N][C][HW]; nhwc: [N*HW][C]; the filter [K][rest] either way */
            ops_chan_copy(x, xp, nhwc ? N * HW : N, C, nhwc ? 1 : HW, grp * Cg, Cg, true);
            const float *pins[2] = {xp, f + grp * Kg * frow};
            memset(yp, 0, (size_t)gs_tensor_elems(gs_op_out(&p)) * 4);
            cr_assert_eq(gs_op_reference(ctx, &p, pins, p.has_bias ? bias + grp * Kg : NULL, yp), GS_OK, "%s",
                         gs_ctx_errmsg(ctx));
            ops_chan_copy(want, yp, nhwc ? N * PQ : N, K, nhwc ? 1 : PQ, grp * Kg, Kg, false);
        }
        int64_t bad = 0;
        for (int64_t e = 0; e < gs_tensor_elems(O); e++) bad += fabsf(y[e] - want[e]) > 1e-6f * (1 + fabsf(want[e]));
        cr_expect_eq(bad, 0, "%s: %lld of %lld outputs differ from its %lld groups' convs", cases[i].grouped,
                     (long long)bad, (long long)gs_tensor_elems(O), (long long)G);
        free(x), free(f), free(bias), free(y), free(want), free(xp), free(yp);
    }
    gs_ctx_destroy(ctx);
}

Test(ops, hand_computed_conv, .timeout = 300) {
    /* valid: out[i][j] = X[i][j] + 2 X[i][j+1] + 3 X[i+1][j] + 4 X[i+1][j+1] */
    static const float w1[4] = {37, 47, 67, 77};
    /* pad 1, stride 2: windows start at rows/cols -1 and 1; the padded cells add 0:
     * [0][0] = 4*X00 = 4; [0][1] = 3*X01 + 4*X02 = 18; [1][0] = 2*X10 + 4*X20 = 36;
     * [1][1] = X11 + 2 X12 + 3 X21 + 4 X22 = 77 */
    static const float w2[4] = {4, 18, 36, 77};
    /* the same with bias -50 and relu */
    static const float bm50[1] = {-50};
    static const float w3[4] = {0, 0, 0, 27};
    /* dilation 2: the one window reads the corners: 1*1 + 2*3 + 3*7 + 4*9 = 64 */
    static const float w4[1] = {64};
    /* asymmetric padding: pad_top=1 only, pad_left=0, pad_right=1, stride 1 -> 3x3 output;
     * row -1 is zero padding, column 3 is zero padding */
    static const float w5[9] = {
        3 * 1 + 4 * 2, 3 * 2 + 4 * 3, 3 * 3,                         /* top row sees only X row 0 */
        1 * 1 + 2 * 2 + 3 * 4 + 4 * 5, 2 + 2 * 3 + 3 * 5 + 4 * 6, 3 + 3 * 6, /* the right column sees col 2 */
        4 + 2 * 5 + 3 * 7 + 4 * 8, 5 + 2 * 6 + 3 * 8 + 4 * 9, 6 + 3 * 9,
    };
    /* nhwc with 2 input channels, channel 1 = 10 x channel 0, K=1 filter [1,R,S,C]
     * with channel-1 weights all 1: out = conv(X, F) + 10 * (window sum of X) */
    static const float x2[18] = {1, 10, 2, 20, 3, 30, 4, 40, 5, 50, 6, 60, 7, 70, 8, 80, 9, 90};
    static const float f2[8] = {1, 1, 2, 1, 3, 1, 4, 1};
    static const float w6[4] = {37 + 120, 47 + 160, 67 + 240, 77 + 280};
    /* depthwise, 2 channels (nchw), channel 1 = 10 x channel 0, filters F and -F */
    static const float xd[18] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 20, 30, 40, 50, 60, 70, 80, 90};
    static const float fd[8] = {1, 2, 3, 4, -1, -2, -3, -4};
    static const float w7[8] = {37, 47, 67, 77, -370, -470, -670, -770};
    const ops_hand cases[] = {
        {"conv2d N=1 C=1 H=3 W=3 K=1 R=2 S=2", OPS_X9, OPS_F4, NULL, w1, 4, 1},
        {"conv2d N=1 C=1 H=3 W=3 K=1 R=2 S=2 stride=2 pad=1", OPS_X9, OPS_F4, NULL, w2, 4, 1},
        {"conv2d N=1 C=1 H=3 W=3 K=1 R=2 S=2 stride=2 pad=1 bias=1 relu=1", OPS_X9, OPS_F4, bm50, w3, 4, 1},
        {"conv2d N=1 C=1 H=3 W=3 K=1 R=2 S=2 dilation=2", OPS_X9, OPS_F4, NULL, w4, 1, 1},
        {"conv2d N=1 C=1 H=3 W=3 K=1 R=2 S=2 pad_top=1 pad_bottom=0 pad_left=0 pad_right=1", OPS_X9, OPS_F4, NULL,
         w5, 9, 1},
        {"conv2d N=1 C=2 H=3 W=3 K=1 R=2 S=2 layout=nhwc", x2, f2, NULL, w6, 4, 1},
        {"dwconv2d N=1 C=2 H=3 W=3 R=2 S=2", xd, fd, NULL, w7, 8, 1},
    };
    ops_check_hand_cases(cases, sizeof cases / sizeof cases[0]);
}

/* Pooling semantics: avg counts padded cells (divides by R*S always), max
 * ignores padded cells (all-negative inputs: a padded 0 would win). */
Test(ops, hand_computed_pool, .timeout = 300) {
    static const float neg[9] = {-1, -2, -3, -4, -5, -6, -7, -8, -9};
    /* F=2 stride 2 pad 1 on 3x3: windows at rows/cols {-1,0} and {1,2}.
     * avg: [0][0] = 1/4; [0][1] = (2+3)/4; [1][0] = (4+7)/4; [1][1] = (5+6+8+9)/4 */
    static const float avg1[4] = {0.25f, 1.25f, 2.75f, 7.0f};
    /* max on -X: [0][0] = -1 (only X00 is real; padding would give 0); [0][1] = max(-2,-3);
     * [1][0] = max(-4,-7); [1][1] = max(-5,-6,-8,-9) */
    static const float max1[4] = {-1, -2, -4, -5};
    /* F=3 stride 1 pad 1: 3x3 output; every window divides by 9, corners see 4 real cells */
    static const float avg2[9] = {12.f / 9, 21.f / 9, 16.f / 9, 27.f / 9, 45.f / 9, 33.f / 9, 24.f / 9, 39.f / 9, 28.f / 9};
    static const float max2[9] = {-1, -1, -2, -1, -1, -2, -4, -4, -5};
    /* nhwc, 2 channels: channel 1 = 10 x channel 0; F=2 stride 1 pad 0 -> 2x2x2 */
    static const float x2[18] = {1, 10, 2, 20, 3, 30, 4, 40, 5, 50, 6, 60, 7, 70, 8, 80, 9, 90};
    static const float avg3[8] = {3, 30, 4, 40, 6, 60, 7, 70};
    static const float max3[8] = {5, 50, 6, 60, 8, 80, 9, 90};
    /* asymmetric: pad_top=1 pad_bottom=0 pad_left=0 pad_right=1, F=2 stride 2 -> 2x2:
     * windows rows {-1,0},{1,2}; cols {0,1},{2,3} */
    static const float avg4[4] = {(1 + 2) / 4.f, 3 / 4.f, (4 + 5 + 7 + 8) / 4.f, (6 + 9) / 4.f};
    static const float max4[4] = {-1, -3, -4, -6};
    const ops_hand cases[] = {
        {"avgpool2d N=1 C=1 H=3 W=3 F=2 stride=2 pad=1", OPS_X9, NULL, NULL, avg1, 4, 2},
        {"maxpool2d N=1 C=1 H=3 W=3 F=2 stride=2 pad=1", neg, NULL, NULL, max1, 4, 2},
        {"avgpool2d N=1 C=1 H=3 W=3 F=3 pad=1", OPS_X9, NULL, NULL, avg2, 9, 2},
        {"maxpool2d N=1 C=1 H=3 W=3 R=3 S=3 pad=1", neg, NULL, NULL, max2, 9, 2},
        {"avgpool2d N=1 C=2 H=3 W=3 F=2 layout=nhwc", x2, NULL, NULL, avg3, 8, 2},
        {"maxpool2d N=1 C=2 H=3 W=3 F=2 layout=nhwc", x2, NULL, NULL, max3, 8, 2},
        {"avgpool2d N=1 C=1 H=3 W=3 F=2 stride=2 pad_top=1 pad_bottom=0 pad_left=0 pad_right=1", OPS_X9, NULL, NULL,
         avg4, 4, 2},
        {"maxpool2d N=1 C=1 H=3 W=3 F=2 stride=2 pad_top=1 pad_bottom=0 pad_left=0 pad_right=1", neg, NULL, NULL,
         max4, 4, 2},
    };
    ops_check_hand_cases(cases, sizeof cases / sizeof cases[0]);
}

/* count_include_pad=0: each window divides by its in-bounds cells (ONNX's
 * default), on the padded edges and corners of the cases above. */
Test(ops, hand_computed_avgpool_exclude_pad, .timeout = 300) {
    /* F=2 stride 2 pad 1 on 3x3: windows {-1,0} and {1,2}: 1/1, (2+3)/2, (4+7)/2, (5+6+8+9)/4 */
    static const float a1[4] = {1, 2.5f, 5.5f, 7};
    /* F=3 pad 1: corners see 4 cells, edges 6, the centre 9 */
    static const float a2[9] = {3, 3.5f, 4, 4.5f, 5, 5.5f, 6, 6.5f, 7};
    /* asymmetric pad_top=1 pad_right=1, F=2 stride 2: (1+2)/2, 3/1, (4+5+7+8)/4, (6+9)/2 */
    static const float a3[4] = {1.5f, 3, 6, 7.5f};
    /* nhwc, 2 channels (channel 1 = 10 x channel 0), as a1 */
    static const float x2[18] = {1, 10, 2, 20, 3, 30, 4, 40, 5, 50, 6, 60, 7, 70, 8, 80, 9, 90};
    static const float a4[8] = {1, 10, 2.5f, 25, 5.5f, 55, 7, 70};
    /* F=2 dilation 2 pad 1: rows {p-1, p+1}; every window's in-bounds cells average to 5 */
    static const float a5[9] = {5, 5, 5, 5, 5, 5, 5, 5, 5};
    const ops_hand cases[] = {
        {"avgpool2d N=1 C=1 H=3 W=3 F=2 stride=2 pad=1 count_include_pad=0", OPS_X9, NULL, NULL, a1, 4, 2},
        {"avgpool2d N=1 C=1 H=3 W=3 F=3 pad=1 count_include_pad=0", OPS_X9, NULL, NULL, a2, 9, 2},
        {"avgpool2d N=1 C=1 H=3 W=3 F=2 stride=2 pad_top=1 pad_bottom=0 pad_left=0 pad_right=1 count_include_pad=0",
         OPS_X9, NULL, NULL, a3, 4, 2},
        {"avgpool2d N=1 C=2 H=3 W=3 F=2 stride=2 pad=1 layout=nhwc count_include_pad=0", x2, NULL, NULL, a4, 8, 2},
        {"avgpool2d N=1 C=1 H=3 W=3 F=2 dilation=2 pad=1 count_include_pad=0", OPS_X9, NULL, NULL, a5, 9, 2},
    };
    ops_check_hand_cases(cases, sizeof cases / sizeof cases[0]);
}

/* Padding up to half the dilated window (PyTorch's rule; 2*pad <= R was the
 * old one): F=2 dilation 3 pad 2 on 3x3 reads rows {p-2, p+1}, one real row
 * each: p -> row 1, 2, 0, 1. Max over -X picks that single cell. */
Test(ops, hand_computed_pool_dilated_padding, .timeout = 300) {
    static const float neg[9] = {-1, -2, -3, -4, -5, -6, -7, -8, -9};
    static const float m1[16] = {-5, -6, -4, -5, -8, -9, -7, -8, -2, -3, -1, -2, -5, -6, -4, -5};
    const ops_hand cases[] = {
        {"maxpool2d N=1 C=1 H=3 W=3 F=2 dilation=3 pad=2", neg, NULL, NULL, m1, 16, 2},
    };
    ops_check_hand_cases(cases, sizeof cases / sizeof cases[0]);
}

/* NaN propagates through relu, max pooling and row max: the interpreter
 * gives NaN exactly at the outputs whose inputs hold one, and so does each of
 * the top candidates on PoCL (the top rowmax candidates split the row over a
 * group and over split-K blocks, so both combines are covered); every other
 * output matches. */
static void ops_check_nan(gs_ctx *ctx, gs_device *cl, gs_hw *hw, const char *spec, const int64_t *nan_at, int nnan,
                          const int64_t *want_nan, int nwant, int top) {
    gs_op op;
    cr_assert_eq(gs_op_parse_into(ctx, spec, &op), GS_OK, "%s: %s", spec, gs_ctx_errmsg(ctx));
    int64_t n = gs_tensor_elems(&op.tensors[0]), on = gs_tensor_elems(gs_op_out(&op));
    float *x = malloc((size_t)n * sizeof *x), *ref = malloc((size_t)on * sizeof *ref), *y = malloc((size_t)on * sizeof *y);
    cr_assert(x && ref && y);
    ops_fill(x, n, 7);
    for (int i = 0; i < nnan; i++) x[nan_at[i]] = NAN;
    const float *ins[1] = {x};
    cr_assert_eq(gs_op_reference(ctx, &op, ins, NULL, ref), GS_OK, "%s", gs_ctx_errmsg(ctx));
    int nref = 0;
    for (int64_t i = 0; i < on; i++) nref += isnan(ref[i]) != 0;
    cr_expect_eq(nref, nwant, "%s: the interpreter gives %d NaN outputs, want %d", spec, nref, nwant);
    for (int i = 0; i < nwant; i++) cr_expect(isnan(ref[want_nan[i]]), "%s: interpreter output %lld is %g, want NaN",
                                             spec, (long long)want_nan[i], ref[want_nan[i]]);
    if (cl) {
        gs_construct_opts o;
        gs_construct_opts_default(&o);
        gs_result *r = NULL;
        cr_assert_eq(gs_construct(ctx, &op, hw, &o, &r), GS_OK, "%s: %s", spec, gs_ctx_errmsg(ctx));
        for (int k = 0; k < top && k < r->n; k++) {
            for (int64_t i = 0; i < on; i++) y[i] = 12345.0f;
            gs_status s = ops_run_cl(ctx, cl, &op, &r->cand[k], ins, NULL, y);
            cr_expect_eq(s, GS_OK, "%s cand %d: %s", spec, k, gs_ctx_errmsg(ctx));
            int bad = 0;
            for (int64_t i = 0; i < on && s == GS_OK; i++) {
                bool ok = isnan(ref[i]) ? isnan(y[i]) != 0 : fabsf(y[i] - ref[i]) <= 1e-5f * fmaxf(1.0f, fabsf(ref[i]));
                if (!ok && bad++ < 3)
                    cr_expect(ok, "%s on OpenCL, cand %d (%s): output[%lld] = %g, interpreter %g", spec, k, r->desc[k],
                              (long long)i, y[i], ref[i]);
            }
        }
        gs_result_destroy(r);
    }
    free(x);
    free(ref);
    free(y);
}

Test(ops, nan_propagates_relu_maxpool_rowmax_rowmin, .timeout = 300) {
    gs_ctx *ctx = gs_ctx_create();
    gs_device *cl = ops_open_cl_optional(ctx, "the OpenCL half of the NaN cases");
    gs_hw *hw = NULL;
    cr_assert_eq(gs_hw_load(ctx, "rtx3090", &hw), GS_OK);
    /* relu M=4 N=64: NaN in, NaN out, at the same places */
    static const int64_t r_in[2] = {3, 130};
    ops_check_nan(ctx, cl, hw, "relu M=4 N=64", r_in, 2, r_in, 2, 2);
    /* maxpool 3x3 pad 1 on 6x6, channel 1 pixel (2,3) = 36 + 15: the 9 windows around it */
    static const int64_t p_in[1] = {36 + 2 * 6 + 3};
    static const int64_t p_out[9] = {36 + 8, 36 + 9, 36 + 10, 36 + 14, 36 + 15, 36 + 16, 36 + 20, 36 + 21, 36 + 22};
    ops_check_nan(ctx, cl, hw, "maxpool2d N=1 C=2 H=6 W=6 F=3 pad=1", p_in, 1, p_out, 9, 3);
    /* rowmax: a NaN anywhere in a row, first and last included */
    static const int64_t m_in[3] = {4096 + 17, 2 * 4096, 4 * 4096 - 1};
    static const int64_t m_out[3] = {1, 2, 3};
    ops_check_nan(ctx, cl, hw, "rowmax M=4 K=4096", m_in, 3, m_out, 3, 3);
    ops_check_nan(ctx, cl, hw, "rowmin M=4 K=4096", m_in, 3, m_out, 3, 3); /* min keeps NaN too */
    gs_hw_destroy(hw);
    gs_device_close(cl);
    gs_ctx_destroy(ctx);
}

/* Row and middle-axis reductions, eltwise and per-channel eltwise by hand: mean divides by K (R);
 * max of negatives. */
Test(ops, hand_computed_reduce_eltwise, .timeout = 300) {
    static const float x6[6] = {1, -2, 3, -4, -5, -6};
    static const float sum[2] = {2, -15}, mean[2] = {2.f / 3, -5}, mx[2] = {3, -4};
    static const float relu[6] = {1, 0, 3, 0, 0, 0};
    static const float y3[3] = {10, 20, 30};
    static const float addb[6] = {11, 18, 33, 6, 15, 24}, mulb[6] = {10, -40, 90, -40, -100, -180};
    static const float y6[6] = {1, 1, 1, 2, 2, 2};
    static const float add6[6] = {2, -1, 4, -2, -3, -4}, mul6[6] = {1, -2, 3, -8, -10, -12};
    static const float csum[3] = {-3, -7, -3}, cmean[3] = {-1.5f, -3.5f, -1.5f}, cmax[3] = {1, -2, 3};
    static const float mn[2] = {-2, -6}, cmin[3] = {-4, -5, -6};
    static const float y2[2] = {10, 20}, b2[2] = {1, 2}, addc[6] = {11, 8, 13, 16, 15, 14},
                       mulc[6] = {11, -19, 31, -78, -98, -118};
    const ops_hand cases[] = {
        {"rowsum M=2 K=3", x6, NULL, NULL, sum, 2, 1},      {"rowmean M=2 K=3", x6, NULL, NULL, mean, 2, 1},
        {"rowmax M=2 K=3", x6, NULL, NULL, mx, 2, 1},       {"relu M=2 N=3", x6, NULL, NULL, relu, 6, 1},
        {"add M=2 N=3 bcast=1", x6, y3, NULL, addb, 6, 1},  {"mul M=2 N=3 bcast=1", x6, y3, NULL, mulb, 6, 1},
        {"add M=2 N=3 bcast=0", x6, y6, NULL, add6, 6, 1},  {"mul M=2 N=3", x6, y6, NULL, mul6, 6, 1},
        /* the middle axis of X[1,2,3] (columns) and of X[2,3,1] (rows again) */
        {"midsum A=1 R=2 B=3", x6, NULL, NULL, csum, 3, 2}, {"midmean A=1 R=2 B=3", x6, NULL, NULL, cmean, 3, 2},
        {"midmax A=1 R=2 B=3", x6, NULL, NULL, cmax, 3, 2}, {"midsum A=2 R=3 B=1", x6, NULL, NULL, sum, 2, 1},
        /* a per-channel vector over X[1,2,3]: + y2[c]; * y2[c] + b2[c] (a batch norm's affine) */
        {"addc A=1 C=2 B=3", x6, y2, NULL, addc, 6, 2},      {"mulc A=1 C=2 B=3 bias=1", x6, y2, b2, mulc, 6, 2},
        {"rowmin M=2 K=3", x6, NULL, NULL, mn, 2, 2},        {"midmin A=1 R=2 B=3", x6, NULL, NULL, cmin, 3, 2},
    };
    ops_check_hand_cases(cases, sizeof cases / sizeof cases[0]);
}

/* ---- Clip (and ReLU6) as epilogue steps ------------------------------------------- */
static int ops_cmp_float(const void *a, const void *b) {
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

/* spec with clip bounds at the 30th and 70th percentile of its unclipped
 * output (which = GS_CLIP_LO|GS_CLIP_HI picks the sides): the interpreter
 * equals the unclipped interpreter clamped, both bounds bite, and the top
 * candidates on PoCL (the matmul form too for a 1x1 conv) match. */
static void ops_check_clip(gs_ctx *ctx, gs_device *cl, gs_hw *hw, const char *spec, int which, bool as_matmul) {
    gs_op base, op;
    cr_assert_eq(gs_op_parse_into(ctx, spec, &base), GS_OK, "%s: %s", spec, gs_ctx_errmsg(ctx));
    if (as_matmul) {
        gs_op conv = base;
        cr_assert_eq(gs_op_conv1x1_as_matmul(ctx, &conv, &base), GS_OK, "%s: %s", spec, gs_ctx_errmsg(ctx));
    }
    const float *ins[GS_MAX_TENSORS];
    float *buf[GS_MAX_TENSORS] = {0}, *bias = NULL;
    for (int t = 0; t < base.ninputs; t++) {
        int64_t n = gs_tensor_elems(&base.tensors[t]);
        buf[t] = malloc((size_t)n * sizeof(float));
        cr_assert_not_null(buf[t]);
        ops_fill(buf[t], n, 11 + (uint64_t)t);
        ins[t] = buf[t];
    }
    if (base.has_bias) {
        int64_t nb = base.axes[base.epi.bias_axis].extent;
        bias = malloc((size_t)nb * sizeof *bias);
        ops_fill(bias, nb, 5);
    }
    int64_t on = gs_tensor_elems(gs_op_out(&base));
    float *plain = calloc((size_t)on, sizeof *plain), *ref = calloc((size_t)on, sizeof *ref),
          *srt = malloc((size_t)on * sizeof *srt), *y = malloc((size_t)on * sizeof *y);
    cr_assert(plain && ref && srt && y);
    ops_fill(plain, on, 3); /* the output's old values (read when beta != 0) */
    memcpy(ref, plain, (size_t)on * sizeof *ref);
    cr_assert_eq(gs_op_reference(ctx, &base, ins, bias, plain), GS_OK, "%s", gs_ctx_errmsg(ctx));
    memcpy(srt, plain, (size_t)on * sizeof *srt);
    qsort(srt, (size_t)on, sizeof *srt, ops_cmp_float);
    float lo = srt[on * 3 / 10], hi = srt[on * 7 / 10];
    op = base;
    cr_assert_eq(gs_op_set_clip(ctx, &op, which, lo, hi), GS_OK, "%s: %s", spec, gs_ctx_errmsg(ctx));
    cr_assert_eq(gs_op_reference(ctx, &op, ins, bias, ref), GS_OK, "%s", gs_ctx_errmsg(ctx));
    int at_lo = 0, at_hi = 0;
    for (int64_t i = 0; i < on; i++) {
        float want = plain[i];
        if ((which & GS_CLIP_LO) && want < lo) want = lo, at_lo++;
        if ((which & GS_CLIP_HI) && want > hi) want = hi, at_hi++;
        cr_assert_eq(ref[i], want, "%s: interpreter output %lld is %g, the clamped unclipped output %g", op.spec,
                     (long long)i, ref[i], want);
    }
    cr_assert(((which & GS_CLIP_LO) == 0 || at_lo > 0) && ((which & GS_CLIP_HI) == 0 || at_hi > 0),
              "%s: the bounds do not bite (%d low, %d high)", op.spec, at_lo, at_hi);
    /* the spec reads back into the same operator */
    if (!as_matmul) {
        gs_op back;
        cr_assert_eq(gs_op_parse_into(ctx, op.spec, &back), GS_OK, "%s: %s", op.spec, gs_ctx_errmsg(ctx));
        cr_assert(back.clip == op.clip && back.clip_lo == op.clip_lo && back.clip_hi == op.clip_hi, "%s", op.spec);
    }
    if (cl) {
        gs_construct_opts o;
        gs_construct_opts_default(&o);
        o.top_k = 3;
        gs_result *r = NULL;
        cr_assert_eq(gs_construct(ctx, &op, hw, &o, &r), GS_OK, "%s: %s", op.spec, gs_ctx_errmsg(ctx));
        for (int k = 0; k < r->n; k++) {
            ops_fill(y, on, 3);
            gs_status s = ops_run_cl(ctx, cl, &op, &r->cand[k], ins, bias, y);
            cr_assert_eq(s, GS_OK, "%s cand %d: %s", op.spec, k, gs_ctx_errmsg(ctx));
            int bad = 0;
            for (int64_t i = 0; i < on; i++) {
                bool ok = fabsf(y[i] - ref[i]) <= 1e-5f * fmaxf(1.0f, fabsf(ref[i]));
                if (!ok && bad++ < 3)
                    cr_expect(ok, "%s on OpenCL, cand %d (%s): output[%lld] = %g, interpreter %g", op.spec, k,
                              r->desc[k], (long long)i, y[i], ref[i]);
            }
        }
        gs_result_destroy(r);
    }
    for (int t = 0; t < base.ninputs; t++) free(buf[t]);
    free(bias);
    free(plain);
    free(ref);
    free(srt);
    free(y);
}

Test(ops, clip_epilogue_interpreter_and_opencl, .timeout = 600) {
    gs_ctx *ctx = gs_ctx_create();
    gs_device *cl = ops_open_cl_optional(ctx, "the OpenCL half of the clip cases");
    gs_hw *hw = NULL;
    cr_assert_eq(gs_hw_load(ctx, "rtx3090", &hw), GS_OK);
    const int both = GS_CLIP_LO | GS_CLIP_HI;
    ops_check_clip(ctx, cl, hw, "gemm M=67 N=96 K=33 bias=1", both, false);
    ops_check_clip(ctx, cl, hw, "gemm M=64 N=128 K=16 transB=1 alpha=1.5 beta=0.5 relu=1", GS_CLIP_HI, false);
    ops_check_clip(ctx, cl, hw, "conv2d N=2 C=5 H=9 W=9 K=7 R=3 S=3 pad=1 bias=1", both, false);
    ops_check_clip(ctx, cl, hw, "conv2d N=1 C=8 H=10 W=10 K=16 R=3 S=3 stride=2 layout=nhwc", GS_CLIP_LO, false);
    ops_check_clip(ctx, cl, hw, "dwconv2d N=1 C=8 H=7 W=7 R=3 S=3 pad=1", both, false);
    ops_check_clip(ctx, cl, hw, "conv2d N=2 C=19 H=3 W=11 K=5 R=1 S=1 bias=1", both, true);
    ops_check_clip(ctx, cl, hw, "conv2d N=3 C=16 H=5 W=7 K=32 R=1 S=1 layout=nhwc bias=1", both, true);
    ops_check_clip(ctx, cl, hw, "clip M=37 N=129", both, false);
    /* NaN stays NaN through both bounds */
    static const int64_t c_in[2] = {5, 200};
    ops_check_nan(ctx, cl, hw, "clip M=4 N=64 clip_lo=0.25 clip_hi=0.5", c_in, 2, c_in, 2, 2);
    /* bad bounds */
    gs_op op;
    gs_test_expect_err(ctx, gs_op_parse_into(ctx, "clip M=4 N=4 clip_lo=2 clip_hi=1", &op), GS_ERR_INVALID_ARG,
                       "clip_lo=2 is above clip_hi=1", "lo > hi");
    gs_test_expect_err(ctx, gs_op_parse_into(ctx, "gemm M=4 N=4 K=4 clip_hi=inf", &op), GS_ERR_PARSE,
                       "'clip_hi=inf' is not a finite number", "an infinite bound");
    cr_assert_eq(gs_op_parse_into(ctx, "gemm M=4 N=4 K=4", &op), GS_OK);
    gs_test_expect_err(ctx, gs_op_set_clip(ctx, &op, GS_CLIP_LO, NAN, 0.0f), GS_ERR_INVALID_ARG, "NaN or infinite",
                       "a NaN bound");
    gs_hw_destroy(hw);
    gs_device_close(cl);
    gs_ctx_destroy(ctx);
}

/* ---- unary functions, sub/div and the middle broadcast -------------------------- */
/* Every unary function (gs_unary) by hand: the expected values from Python's
 * math module in double (an implementation independent of gs_unary_eval and
 * of the printers' helper), on inputs in each function's domain; the
 * interpreter and the top kernel on PoCL must give them. */
static const float OPS_XA[6] = {-2.5f, -1.0f, -0.25f, 0.0f, 0.5f, 1.75f}, OPS_XP[6] = {0.05f, 0.25f, 0.5f, 0.75f, 0.9f, 0.99f}, OPS_XG[6] = {1.0f, 1.5f, 2.0f, 3.0f, 5.0f, 10.0f}, OPS_XR[6] = {-2.5f, -1.5f, -0.5f, 0.5f, 1.5f, 2.6f};
static const float OPS_U_NEG[6] = {2.5f, 1.0f, 0.25f, -0.0f, -0.5f, -1.75f};
static const float OPS_U_ABS[6] = {2.5f, 1.0f, 0.25f, 0.0f, 0.5f, 1.75f};
static const float OPS_U_EXP[6] = {0.0820849986f, 0.367879441f, 0.778800783f, 1.0f, 1.64872127f, 5.75460268f};
static const float OPS_U_LOG[6] = {-2.99573227f, -1.38629436f, -0.693147181f, -0.287682072f, -0.105360516f, -0.0100503359f};
static const float OPS_U_SQRT[6] = {0.223606798f, 0.5f, 0.707106781f, 0.866025404f, 0.948683298f, 0.994987437f};
static const float OPS_U_RSQRT[6] = {2.39045722f, 1.63299316f, 1.26491106f, 1.06904497f, 0.987729597f, 0.947027448f};
static const float OPS_U_RECIPROCAL[6] = {20.0f, 4.0f, 2.0f, 1.33333333f, 1.11111111f, 1.01010101f};
static const float OPS_U_TANH[6] = {-0.986614298f, -0.761594156f, -0.244918662f, 0.0f, 0.462117157f, 0.941375538f};
static const float OPS_U_SIGMOID[6] = {0.07585818f, 0.268941421f, 0.437823499f, 0.5f, 0.622459331f, 0.851952802f};
static const float OPS_U_ERF[6] = {-0.999593048f, -0.842700793f, -0.27632639f, 0.0f, 0.520499878f, 0.986671671f};
static const float OPS_U_SOFTPLUS[6] = {0.0788897343f, 0.313261688f, 0.57593942f, 0.693147181f, 0.974076984f, 1.91022415f};
static const float OPS_U_SOFTSIGN[6] = {-0.714285714f, -0.5f, -0.2f, 0.0f, 0.333333333f, 0.636363636f};
static const float OPS_U_FLOOR[6] = {-3.0f, -1.0f, -1.0f, 0.0f, 0.0f, 1.0f};
static const float OPS_U_CEIL[6] = {-2.0f, -1.0f, 0.0f, 0.0f, 1.0f, 2.0f};
static const float OPS_U_ROUND[6] = {-2.0f, -2.0f, 0.0f, 0.0f, 2.0f, 3.0f};
static const float OPS_U_SIGN[6] = {-1.0f, -1.0f, -1.0f, 0.0f, 1.0f, 1.0f};
static const float OPS_U_SIN[6] = {-0.598472144f, -0.841470985f, -0.247403959f, 0.0f, 0.479425539f, 0.983985947f};
static const float OPS_U_COS[6] = {-0.801143616f, 0.540302306f, 0.968912422f, 1.0f, 0.877582562f, -0.178246056f};
static const float OPS_U_TAN[6] = {0.747022297f, -1.55740772f, -0.255341921f, 0.0f, 0.54630249f, -5.52037992f};
static const float OPS_U_ASIN[6] = {0.0500208568f, 0.252680255f, 0.523598776f, 0.848062079f, 1.11976951f, 1.42925685f};
static const float OPS_U_ACOS[6] = {1.52077547f, 1.31811607f, 1.04719755f, 0.722734248f, 0.451026812f, 0.141539473f};
static const float OPS_U_ATAN[6] = {-1.19028995f, -0.785398163f, -0.244978663f, 0.0f, 0.463647609f, 1.05165021f};
static const float OPS_U_SINH[6] = {-6.05020448f, -1.17520119f, -0.252612317f, 0.0f, 0.521095305f, 2.79041437f};
static const float OPS_U_COSH[6] = {6.13228948f, 1.54308063f, 1.0314131f, 1.0f, 1.12762597f, 2.96418831f};
static const float OPS_U_ASINH[6] = {-1.64723115f, -0.881373587f, -0.247466462f, 0.0f, 0.481211825f, 1.32589777f};
static const float OPS_U_ACOSH[6] = {0.0f, 0.96242365f, 1.3169579f, 1.76274717f, 2.29243167f, 2.99322285f};
static const float OPS_U_ATANH[6] = {0.0500417293f, 0.255412812f, 0.549306144f, 0.972955075f, 1.47221949f, 2.64665241f};
static const float OPS_U_GELU[6] = {-0.0155241633f, -0.158655254f, -0.100323419f, 0.0f, 0.345731231f, 1.67989648f};
static const float OPS_U_GELU_TANH[6] = {-0.0150842661f, -0.158808009f, -0.100324649f, 0.0f, 0.34571401f, 1.67979538f};
static const float OPS_U_LEAKYRELU[6] = {-0.25f, -0.1f, -0.025f, 0.0f, 0.5f, 1.75f};
static const float OPS_U_ELU[6] = {-0.458957501f, -0.316060279f, -0.110599608f, 0.0f, 0.5f, 1.75f};
static const float OPS_U_CELU[6] = {-1.42699041f, -0.786938681f, -0.235006195f, 0.0f, 0.5f, 1.75f};
static const float OPS_U_THRESHOLDEDRELU[6] = {0.0f, 0.0f, 0.0f, 0.0f, 0.5f, 1.75f};
static const float OPS_U_HARDSIGMOID[6] = {0.0f, 0.3f, 0.45f, 0.5f, 0.6f, 0.85f};
static const float OPS_U_HARDSWISH[6] = {-0.208333333f, -0.333333333f, -0.114583333f, 0.0f, 0.291666667f, 1.38541667f};
static const float OPS_U_MISH[6] = {-0.196816204f, -0.303401461f, -0.129926964f, 0.0f, 0.375245211f, 1.67493242f};
static const float OPS_U_SWISH[6] = {-0.0574434248f, -0.182425524f, -0.10183335f, 0.0f, 0.33958935f, 1.63179329f};
static const float OPS_U_LOGP[6] = {-1.78976147f, -1.00239343f, -0.482886255f, -0.142716302f, 0.0168571171f, 0.101653654f};
Test(ops, hand_computed_unary_functions, .timeout = 600) {
    const ops_hand cases[] = {
        {"unary M=2 N=3 act=neg", OPS_XA, NULL, NULL, OPS_U_NEG, 6, 1},
        {"unary M=2 N=3 act=abs", OPS_XA, NULL, NULL, OPS_U_ABS, 6, 1},
        {"unary M=2 N=3 act=exp", OPS_XA, NULL, NULL, OPS_U_EXP, 6, 1},
        {"unary M=2 N=3 act=log", OPS_XP, NULL, NULL, OPS_U_LOG, 6, 1},
        {"unary M=2 N=3 act=sqrt", OPS_XP, NULL, NULL, OPS_U_SQRT, 6, 1},
        {"unary M=2 N=3 act=rsqrt act_p=0.125", OPS_XP, NULL, NULL, OPS_U_RSQRT, 6, 1},
        {"unary M=2 N=3 act=reciprocal", OPS_XP, NULL, NULL, OPS_U_RECIPROCAL, 6, 1},
        {"unary M=2 N=3 act=tanh", OPS_XA, NULL, NULL, OPS_U_TANH, 6, 1},
        {"unary M=2 N=3 act=sigmoid", OPS_XA, NULL, NULL, OPS_U_SIGMOID, 6, 1},
        {"unary M=2 N=3 act=erf", OPS_XA, NULL, NULL, OPS_U_ERF, 6, 1},
        {"unary M=2 N=3 act=softplus", OPS_XA, NULL, NULL, OPS_U_SOFTPLUS, 6, 1},
        {"unary M=2 N=3 act=softsign", OPS_XA, NULL, NULL, OPS_U_SOFTSIGN, 6, 1},
        {"unary M=2 N=3 act=floor", OPS_XA, NULL, NULL, OPS_U_FLOOR, 6, 1},
        {"unary M=2 N=3 act=ceil", OPS_XA, NULL, NULL, OPS_U_CEIL, 6, 1},
        {"unary M=2 N=3 act=round", OPS_XR, NULL, NULL, OPS_U_ROUND, 6, 1},
        {"unary M=2 N=3 act=sign", OPS_XA, NULL, NULL, OPS_U_SIGN, 6, 1},
        {"unary M=2 N=3 act=sin", OPS_XA, NULL, NULL, OPS_U_SIN, 6, 1},
        {"unary M=2 N=3 act=cos", OPS_XA, NULL, NULL, OPS_U_COS, 6, 1},
        {"unary M=2 N=3 act=tan", OPS_XA, NULL, NULL, OPS_U_TAN, 6, 1},
        {"unary M=2 N=3 act=asin", OPS_XP, NULL, NULL, OPS_U_ASIN, 6, 1},
        {"unary M=2 N=3 act=acos", OPS_XP, NULL, NULL, OPS_U_ACOS, 6, 1},
        {"unary M=2 N=3 act=atan", OPS_XA, NULL, NULL, OPS_U_ATAN, 6, 1},
        {"unary M=2 N=3 act=sinh", OPS_XA, NULL, NULL, OPS_U_SINH, 6, 1},
        {"unary M=2 N=3 act=cosh", OPS_XA, NULL, NULL, OPS_U_COSH, 6, 1},
        {"unary M=2 N=3 act=asinh", OPS_XA, NULL, NULL, OPS_U_ASINH, 6, 1},
        {"unary M=2 N=3 act=acosh", OPS_XG, NULL, NULL, OPS_U_ACOSH, 6, 1},
        {"unary M=2 N=3 act=atanh", OPS_XP, NULL, NULL, OPS_U_ATANH, 6, 1},
        {"unary M=2 N=3 act=gelu", OPS_XA, NULL, NULL, OPS_U_GELU, 6, 1},
        {"unary M=2 N=3 act=gelu_tanh", OPS_XA, NULL, NULL, OPS_U_GELU_TANH, 6, 1},
        {"unary M=2 N=3 act=leakyrelu act_p=0.1", OPS_XA, NULL, NULL, OPS_U_LEAKYRELU, 6, 1},
        {"unary M=2 N=3 act=elu act_p=0.5", OPS_XA, NULL, NULL, OPS_U_ELU, 6, 1},
        {"unary M=2 N=3 act=celu act_p=2", OPS_XA, NULL, NULL, OPS_U_CELU, 6, 1},
        {"unary M=2 N=3 act=thresholdedrelu act_p=0.4", OPS_XA, NULL, NULL, OPS_U_THRESHOLDEDRELU, 6, 1},
        {"unary M=2 N=3 act=hardsigmoid act_p=0.5 alpha=0.2", OPS_XA, NULL, NULL, OPS_U_HARDSIGMOID, 6, 1},
        {"unary M=2 N=3 act=hardswish", OPS_XA, NULL, NULL, OPS_U_HARDSWISH, 6, 1},
        {"unary M=2 N=3 act=mish", OPS_XA, NULL, NULL, OPS_U_MISH, 6, 1},
        {"unary M=2 N=3 act=swish act_p=1.5", OPS_XA, NULL, NULL, OPS_U_SWISH, 6, 1},
        {"unary M=2 N=3 act=logp act_p=0.117", OPS_XP, NULL, NULL, OPS_U_LOGP, 6, 1},
    };
    cr_assert_eq(sizeof cases / sizeof cases[0], GS_UN_COUNT - 1, "a unary function without a hand case");
    ops_check_hand_cases(cases, sizeof cases / sizeof cases[0]);
}

/* Sub and div, over a row vector, a per-channel vector and Y[A,B] broadcast over the middle
 * of X[A,R,B]: X = [[1,-2,3],[-4,-5,-6]]. */
Test(ops, hand_computed_sub_div_broadcasts, .timeout = 300) {
    static const float x6[6] = {1, -2, 3, -4, -5, -6}, y3[3] = {10, 20, 30}, y2[2] = {2, -4}, y6[6] = {1, 2, 4, 8, 16, 32};
    static const float subb[6] = {-9, -22, -27, -14, -25, -36}, divb[6] = {0.1f, -0.1f, 0.1f, -0.4f, -0.25f, -0.2f};
    static const float subc[6] = {-1, -4, 1, 0, -1, -2}, divc[6] = {0.5f, -1, 1.5f, 1, 1.25f, 1.5f};
    static const float sub6[6] = {0, -4, -1, -12, -21, -38}, div6[6] = {1, -1, 0.75f, -0.5f, -0.3125f, -0.1875f};
    /* X as [A=1, R=2, B=3] over Y[1,3] = y3 */
    static const float addm[6] = {11, 18, 33, 6, 15, 24}, mulm[6] = {10, -40, 90, -40, -100, -180};
    const ops_hand cases[] = {
        {"sub M=2 N=3 bcast=1", x6, y3, NULL, subb, 6, 2}, {"div M=2 N=3 bcast=1", x6, y3, NULL, divb, 6, 1},
        {"subc A=1 C=2 B=3", x6, y2, NULL, subc, 6, 1},    {"divc A=1 C=2 B=3", x6, y2, NULL, divc, 6, 1},
        {"sub M=2 N=3", x6, y6, NULL, sub6, 6, 1},         {"div M=3 N=2", x6, y6, NULL, div6, 6, 1},
        {"subm A=1 R=2 B=3", x6, y3, NULL, subb, 6, 1},    {"divm A=1 R=2 B=3", x6, y3, NULL, divb, 6, 1},
        {"addm A=1 R=2 B=3", x6, y3, NULL, addm, 6, 1},    {"mulm A=1 R=2 B=3", x6, y3, NULL, mulm, 6, 1},
        {"subm A=2 R=1 B=3", x6, y6, NULL, sub6, 6, 1},    {"subm A=2 R=3 B=1", x6, y2, NULL, subc, 6, 1},
    };
    ops_check_hand_cases(cases, sizeof cases / sizeof cases[0]);
}

/* place: X[A,R,B] into rows at..at+R-1 of Z[A,T,B]; the other rows keep the output's old
 * values (12345 in ops_check_hand): X = [[1,-2,3],[-4,-5,-6]] as [1,2,3] into [1,4,3] at 1,
 * and as [2,1,3] into [2,3,3] at 2. */
Test(ops, hand_computed_place, .timeout = 300) {
    static const float x6[6] = {1, -2, 3, -4, -5, -6};
    static const float mid[12] = {12345, 12345, 12345, 1, -2, 3, -4, -5, -6, 12345, 12345, 12345};
    static const float last[18] = {12345, 12345, 12345, 12345, 12345, 12345, 1, -2, 3,
                                   12345, 12345, 12345, 12345, 12345, 12345, -4, -5, -6};
    const ops_hand cases[] = {
        {"place A=1 R=2 B=3 T=4 at=1", x6, NULL, NULL, mid, 12, 2},
        {"place A=2 R=1 B=3 T=3 at=2", x6, NULL, NULL, last, 18, 1},
    };
    ops_check_hand_cases(cases, sizeof cases / sizeof cases[0]);
}

/* n-ary max/min/sum/mean, pow and prelu by hand. X = [[1,-2,3],[-4,-5,-6]], Y, W as below;
 * NaN in one input wins max and min. */
Test(ops, hand_computed_nary_pow_prelu, .timeout = 300) {
    static const float x6[6] = {1, -2, 3, -4, -5, -6}, y6[6] = {2, -3, 1, 0, -5.5f, 7}, w6[6] = {-1, 4, 2, -3, -4, 8};
    static const float mx3[6] = {2, 4, 3, 0, -4, 8}, mn3[6] = {-1, -3, 1, -4, -5.5f, -6}, mx2[6] = {2, -2, 3, 0, -5, 7};
    static const float sum3[6] = {2, -1, 6, -7, -14.5f, 9}, mean3[6] = {2.f / 3, -1.f / 3, 2, -7.f / 3, -14.5f / 3, 3};
    static const float b6[6] = {0.5f, 2, 1.5f, 3, 0.25f, 4}, e6[6] = {2, 0.5f, -1, 3, 2, -0.5f};
    static const float pw[6] = {0.25f, 1.41421356f, 0.666666667f, 27, 0.0625f, 0.5f};
    static const float e3[3] = {2, 0.5f, -1}, pwb[6] = {0.25f, 1.41421356f, 0.666666667f, 9, 0.5f, 0.25f};
    static const float sl3[3] = {0.5f, 0.25f, 2}, prb[6] = {1, -0.5f, 3, -2, -1.25f, -12};
    static const float sl2[2] = {0.1f, 3}, prc[6] = {1, -0.2f, 3, -12, -15, -18};
    const ops_hand cases[] = {
        {"max M=2 N=3 inputs=3", x6, y6, w6, mx3, 6, 2}, /* the third input rides in the bias slot */
        {"min M=2 N=3 inputs=3", x6, y6, w6, mn3, 6, 1},
        {"max M=2 N=3", x6, y6, NULL, mx2, 6, 1},
        {"add M=2 N=3 inputs=3", x6, y6, w6, sum3, 6, 1},
        {"mean M=2 N=3 inputs=3", x6, y6, w6, mean3, 6, 1},
        {"pow M=2 N=3", b6, e6, NULL, pw, 6, 1},
        {"pow M=2 N=3 bcast=1", b6, e3, NULL, pwb, 6, 1},
        {"prelu M=2 N=3 bcast=1", x6, sl3, NULL, prb, 6, 1},
        {"preluc A=1 C=2 B=3", x6, sl2, NULL, prc, 6, 1},
        {"prelum A=1 R=2 B=3", x6, sl3, NULL, prb, 6, 1},
    };
    ops_check_hand_cases(cases, sizeof cases / sizeof cases[0]);
}

/* transpose: X = [[1,-2,3],[-4,-5,-6]] as [2,3] -> [3,2]; as [1,2,3] with perm (2,0,1) -> [3,1,2]
 * (the same values); as [2,3,1] with perm (1,2,0) -> [3,1,2]. */
Test(ops, hand_computed_transpose, .timeout = 300) {
    static const float x6[6] = {1, -2, 3, -4, -5, -6}, t6[6] = {1, -4, -2, -5, 3, -6};
    const ops_hand cases[] = {
        {"transpose d0=2 d1=3 p0=1 p1=0", x6, NULL, NULL, t6, 6, 2},
        {"transpose d0=1 d1=2 d2=3 p0=2 p1=0 p2=1", x6, NULL, NULL, t6, 6, 1},
        {"transpose d0=2 d1=3 d2=1 p0=1 p1=2 p2=0", x6, NULL, NULL, t6, 6, 1},
        {"transpose d0=6 p0=0", x6, NULL, NULL, x6, 6, 1},
    };
    ops_check_hand_cases(cases, sizeof cases / sizeof cases[0]);
}

/* chansq (LRN's sum): X = [[1,2],[3,4],[5,6]] as [N=1, C=3, X=2], the window c-1..c+1 (size
 * 3) and c-1..c+2 (size 4, ONNX's larger upper half), times alpha. */
Test(ops, hand_computed_chansq, .timeout = 300) {
    static const float x6[6] = {1, 2, 3, 4, 5, 6};
    static const float s3[6] = {10, 20, 35, 56, 34, 52}, s4[6] = {17.5f, 28, 17.5f, 28, 17, 26};
    const ops_hand cases[] = {
        {"chansq N=1 C=3 X=2 size=3", x6, x6, NULL, s3, 6, 2},
        {"chansq N=1 C=3 X=2 size=4 alpha=0.5", x6, x6, NULL, s4, 6, 1},
    };
    ops_check_hand_cases(cases, sizeof cases / sizeof cases[0]);
}

/* NaN in, NaN out, for every unary function (the printers' gs_unary returns a
 * NaN first): the interpreter's celu was 0 + fmin(0, NaN) = 0, so a NaN
 * reaching the epilogue failed `verify --nonfinite` against a right kernel. */
Test(ops, unary_nan_in_nan_out, .timeout = 300) {
    for (int u = 1; u < GS_UN_COUNT; u++)
        for (int k = 0; k < 3; k++) {
            const double p = k == 0 ? 0.5 : k == 1 ? 2.0 : -1.5;
            cr_expect(isnan(gs_unary_eval((gs_unary)u, p, NAN)), "unary %d (p %g) of NaN is %g", u, p,
                      gs_unary_eval((gs_unary)u, p, NAN));
        }
    gs_ctx *ctx = gs_ctx_create();
    gs_device *cl = ops_open_cl_optional(ctx, "the kernel half of unary_nan_in_nan_out");
    if (cl) {
        static const char *specs[] = {"unary M=9 N=37 act=celu act_p=0.5", "gemm M=21 N=19 K=13 act=celu act_p=2"};
        for (int i = 0; i < 2; i++) {
            gs_test_fix f;
            gs_test_setup_seed(&f, false, "a100", specs[i], 1, 1);
            for (uint64_t seed = 1; seed <= 3; seed++) {
                gs_diff d;
                const gs_verify_opts vo = {4};
                cr_expect_eq(gs_verify_ex(ctx, cl, f.hw, f.op, &f.r->cand[0], seed, &vo, &d), GS_OK, "%s seed %llu: %s",
                             specs[i], (unsigned long long)seed, gs_ctx_errmsg(ctx));
            }
            gs_test_teardown(&f);
        }
        gs_device_close(cl);
    }
    gs_ctx_destroy(ctx);
}

Test(ops, unary_sweep, .timeout = 600) { ops_sweep("ops_unary.txt", 0, 1, 20); }

/* act= and the binary forms refuse what they cannot do, with the reason. */
Test(ops, unary_and_sub_div_errors) {
    gs_ctx *ctx = gs_ctx_create();
    gs_op op;
    gs_test_expect_err(ctx, gs_op_parse_into(ctx, "unary M=4 N=4 act=silu", &op), GS_ERR_PARSE,
                       "unknown function 'silu' in act=", "an unknown function");
    gs_test_expect_err(ctx, gs_op_parse_into(ctx, "unary M=4 N=4", &op), GS_ERR_PARSE, "missing required key 'act'",
                       "no function");
    gs_test_expect_err(ctx, gs_op_parse_into(ctx, "gemm M=4 N=4 K=4 act=exp act_p=2", &op), GS_ERR_PARSE,
                       "takes no act_p", "a parameter for a function without one");
    gs_test_expect_err(ctx, gs_op_parse_into(ctx, "conv2d N=1 C=2 H=4 W=4 K=2 R=1 S=1 act_p=2", &op), GS_ERR_PARSE,
                       "act_p without act", "a parameter alone");
    gs_test_expect_err(ctx, gs_op_parse_into(ctx, "unary M=4 N=4 act=celu act_p=0", &op), GS_ERR_INVALID_ARG,
                       "not a valid parameter of celu", "celu divides by its alpha");
    cr_assert_eq(gs_op_parse_into(ctx, "gemm M=4 N=4 K=4 bias=1 act=leakyrelu act_p=0.2 relu=1", &op), GS_OK, "%s",
                 gs_ctx_errmsg(ctx));
    gs_epi_step st[GS_EPI_MAX_STEPS];
    int n = gs_epi_steps(&op, st);
    cr_assert(n == 4 && st[2].kind == GS_EPI_UNARY && st[3].kind == GS_EPI_RELU,
              "the unary step comes after the bias and before relu (%d steps)", n);
    gs_op back;
    cr_assert_eq(gs_op_parse_into(ctx, op.spec, &back), GS_OK, "%s: %s", op.spec, gs_ctx_errmsg(ctx));
    cr_assert(back.unary == GS_UN_LEAKYRELU && back.unary_p == 0.2f, "%s reads back", op.spec);
    /* a sub combine with one input is refused by validation */
    cr_assert_eq(gs_op_parse_into(ctx, "rowsum M=4 K=4", &op), GS_OK);
    op.combine = GS_COMBINE_SUB;
    gs_test_expect_err(ctx, gs_op_validate(ctx, &op), GS_ERR_INVALID_ARG, "sub/div/pow/prelu combine takes exactly two inputs",
                       "sub with one input");
    gs_ctx_destroy(ctx);
}
