/* test_refine.c — short on-device refinement (kernels/service/refine.c): the pure
 * selection and statistics, a real refinement on the OpenCL device (PoCL on
 * CPU-only machines), and the CUDA variant in measurement-free mode. */
#include "construct/construct.h"
#include "tests/test_common.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

TestSuite(refine, .timeout = 120);

Test(refine, select_argmin) {
    const double a[] = {3e-3, 1e-3, 2e-3};
    cr_assert_eq(gs_refine_select(a, 3), 1);
    const double one[] = {5.0};
    cr_assert_eq(gs_refine_select(one, 1), 0);
    const double last[] = {4, 3, 2, 1};
    cr_assert_eq(gs_refine_select(last, 4), 3);
}

Test(refine, select_ties_go_to_the_higher_ranked) {
    const double a[] = {2.0, 1.0, 1.0, 1.0};
    cr_assert_eq(gs_refine_select(a, 4), 1);
    const double b[] = {1.0, 1.0};
    cr_assert_eq(gs_refine_select(b, 2), 0);
}

Test(refine, select_skips_nan_inf_and_nonpositive) {
    const double a[] = {NAN, 2.0, 1.5};
    cr_assert_eq(gs_refine_select(a, 3), 2);
    const double b[] = {1.0, NAN, 0.5};
    cr_assert_eq(gs_refine_select(b, 3), 2);
    const double c[] = {NAN, NAN};
    cr_assert_eq(gs_refine_select(c, 2), -1);
    const double d[] = {INFINITY, 0.0, -1.0, 7.0};
    cr_assert_eq(gs_refine_select(d, 4), 3);
    const double e[] = {-INFINITY, 0.0};
    cr_assert_eq(gs_refine_select(e, 2), -1);
    cr_assert_eq(gs_refine_select(a, 0), -1);
    cr_assert_eq(gs_refine_select(NULL, 3), -1);
}

Test(refine, summarize_median_sd_iqr) {
    const double x[] = {5, 1, 3, 2, 4};
    double med = 0, sd = 0, iqr = 0;
    cr_assert_eq(gs_refine_summarize(x, 5, &med, &sd, &iqr), GS_OK);
    cr_assert_float_eq(med, 3.0, 1e-12);
    cr_assert_float_eq(sd, sqrt(2.5), 1e-12);
    cr_assert_float_eq(iqr, 2.0, 1e-12);
    cr_assert_eq(x[0], 5, "the input is not sorted in place");
    const double y[] = {4, 1, 3, 2};
    cr_assert_eq(gs_refine_summarize(y, 4, &med, &sd, &iqr), GS_OK);
    cr_assert_float_eq(med, 2.5, 1e-12);
    const double z[] = {7};
    cr_assert_eq(gs_refine_summarize(z, 1, &med, &sd, &iqr), GS_OK);
    cr_assert_float_eq(med, 7.0, 1e-12);
    cr_assert_float_eq(sd, 0.0, 1e-12);
    cr_assert_float_eq(iqr, 0.0, 1e-12);
    cr_assert_eq(gs_refine_summarize(z, 0, &med, &sd, &iqr), GS_ERR_INVALID_ARG);
}

Test(refine, spearman) {
    const double a[] = {1, 2, 3, 4, 5};
    const double up[] = {10, 20, 25, 40, 100};
    const double down[] = {9, 8, 7, 6, 5};
    const double flat[] = {1, 1, 1, 1, 1};
    cr_assert_float_eq(gs_refine_spearman(a, up, 5), 1.0, 1e-12);
    cr_assert_float_eq(gs_refine_spearman(a, down, 5), -1.0, 1e-12);
    cr_assert(isnan(gs_refine_spearman(a, up, 2)), "fewer than 3 points: undefined");
    cr_assert(isnan(gs_refine_spearman(a, flat, 5)), "a constant series: undefined");
}

/* Spearman's rho computed here from its definition: the Pearson correlation
 * of the average ranks (ties share their mean rank). */
static double spearman_by_hand(const double *a, const double *b, int n) {
    double ra[GS_REFINE_MAX], rb[GS_REFINE_MAX];
    const double *x[2] = {a, b};
    double *rk[2] = {ra, rb};
    for (int v = 0; v < 2; v++)
        for (int i = 0; i < n; i++) {
            int below = 0, equal = 0;
            for (int j = 0; j < n; j++) {
                below += x[v][j] < x[v][i];
                equal += x[v][j] == x[v][i];
            }
            rk[v][i] = below + (equal + 1) / 2.0;
        }
    double ma = 0, mb = 0, sab = 0, saa = 0, sbb = 0;
    for (int i = 0; i < n; i++) {
        ma += ra[i] / n;
        mb += rb[i] / n;
    }
    for (int i = 0; i < n; i++) {
        sab += (ra[i] - ma) * (rb[i] - mb);
        saa += (ra[i] - ma) * (ra[i] - ma);
        sbb += (rb[i] - mb) * (rb[i] - mb);
    }
    return saa > 0 && sbb > 0 ? sab / sqrt(saa * sbb) : NAN;
}

/* Real timings on the OpenCL device: 3 candidates measured, >= 3 runs each,
 * positive medians, the pick is their argmin, and the reported rank
 * correlation is that of the predictions and the medians. */
Test(refine, opencl_measures_top3_and_picks_argmin) {
    gs_test_fix f;
    gs_test_setup(&f, true, "rtx3090", "gemm M=96 N=80 K=64 beta=0.5", 5);
    const gs_result *r = f.r;
    cr_assert_geq(r->n, 3);
    gs_refine_report rep;
    gs_status s = gs_refine_device(f.ctx, NULL, f.dev, f.op, r, 3, 60.0, &rep);
    cr_assert_eq(s, GS_OK, "%s", gs_ctx_errmsg(f.ctx));
    cr_assert_eq(rep.n, 3);
    cr_assert_eq(rep.measured, 3);
    cr_assert_str_eq(rep.backend, "opencl");
    cr_assert_str_eq(rep.target, "rtx3090");
    cr_assert_str_eq(rep.device, gs_device_name(f.dev));
    double med[3], pred[3];
    int argmin = 0;
    for (int i = 0; i < 3; i++) {
        const gs_refine_cand *c = &rep.c[i];
        cr_log_info("candidate %d %s: predicted %.4f ms, median %.4f ms, iqr %.4f ms, sd %.4f ms, %d runs, build "
                    "%.0f ms, warm-up %.2f ms",
                    i, r->desc[i], c->predicted_s * 1e3, c->median_s * 1e3, c->iqr_s * 1e3, c->sd_s * 1e3, c->runs,
                    c->build_s * 1e3, c->warmup_s * 1e3);
        cr_assert_eq(c->status, GS_OK);
        cr_assert_eq(c->rank, i);
        cr_assert_geq(c->runs, GS_REFINE_MIN_RUNS);
        cr_assert_leq(c->runs, GS_REFINE_MAX_RUNS);
        cr_assert_gt(c->median_s, 0);
        cr_assert(c->min_s <= c->median_s && c->median_s <= c->max_s);
        cr_assert_geq(c->iqr_s, 0);
        cr_assert_eq(c->predicted_s, r->est[i].time_s, "predictions are the model's for the target profile");
        med[i] = c->median_s;
        pred[i] = c->predicted_s;
        if (med[i] < med[argmin]) argmin = i;
    }
    cr_assert_eq(rep.pick, argmin);
    cr_assert_eq(rep.pick, gs_refine_select(med, 3), "the pure selection on the real timings");
    double rho = spearman_by_hand(pred, med, 3);
    if (isnan(rho)) cr_assert(isnan(rep.spearman), "a constant series has no rank correlation: %g", rep.spearman);
    else cr_assert_float_eq(rep.spearman, rho, 1e-12, "spearman %g, by hand %g", rep.spearman, rho);
    cr_assert_leq(rep.measure_s, rep.total_s);
    gs_test_teardown(&f);
}

/* Ops with a bias (an extra buffer) and K larger than the result holds. */
Test(refine, opencl_bias_op_and_k_clamped) {
    gs_test_fix f;
    gs_test_setup(&f, true, "orin-nano", "gemm M=40 N=72 K=24 bias=1 relu=1", 2);
    gs_refine_report rep;
    cr_assert_eq(gs_refine_device(f.ctx, NULL, f.dev, NULL, f.r, 10, 0, &rep), GS_OK, "%s", gs_ctx_errmsg(f.ctx));
    cr_assert_eq(rep.n, f.r->n, "K is clamped to the candidates available");
    cr_assert_float_eq(rep.budget_s, GS_REFINE_DEFAULT_MS * 1e-3, 1e-12, "budget <= 0: the default");
    cr_assert_geq(rep.pick, 0);
    gs_test_teardown(&f);
}

Test(refine, bad_arguments) {
    gs_test_fix f;
    gs_test_setup(&f, false, "rtx3090", "gemm M=64 N=64 K=64", 5);
    gs_ctx *ctx = f.ctx;
    gs_refine_report rep;
    gs_device none; /* an OpenCL device whose runtime is not open */
    gs_device_wrap(&none, &gs_runtime_opencl, NULL);
    cr_assert_eq(gs_refine_device(ctx, NULL, NULL, f.op, f.r, 3, 100, &rep), GS_ERR_INVALID_ARG, "no device");
    cr_assert_eq(gs_refine_device(ctx, NULL, &none, NULL, NULL, 3, 100, &rep), GS_ERR_INVALID_ARG);
    gs_op *other = NULL;
    cr_assert_eq(gs_op_parse(ctx, "rowsum M=64 K=64", &other), GS_OK);
    cr_assert_eq(gs_refine_device(ctx, NULL, &none, f.op, f.r, 0, 100, &rep), GS_ERR_INVALID_ARG, "K >= 1");
    cr_assert_eq(gs_refine_device(ctx, NULL, &none, other, f.r, 2, 100, &rep), GS_ERR_INVALID_ARG, "another operator");
    cr_assert_eq(gs_refine_device(ctx, NULL, &none, f.op, f.r, 2, 100, &rep), GS_ERR_OPENCL_MISSING, "no device");
    cr_assert_eq(rep.pick, -1);
    gs_op_destroy(other);
    gs_test_teardown(&f);
}

/* Without a CUDA device the CUDA variant says so; with one it measures. */
Test(refine, cuda_missing_or_measured) {
    gs_test_fix f;
    gs_test_setup(&f, false, "rtx4090", "gemm M=256 N=256 K=256", 5);
    gs_ctx *ctx = f.ctx;
    gs_refine_report rep;
    gs_device none; /* a CUDA device whose runtime is not open */
    gs_device_wrap(&none, &gs_runtime_cuda, NULL);
    gs_status s = gs_refine_device(ctx, NULL, &none, f.op, f.r, 3, 100, &rep);
    cr_assert_eq(s, GS_ERR_CUDA_MISSING, "no handle: %s", gs_status_str(s));
    cr_assert(strstr(gs_ctx_errmsg(ctx), "no CUDA device: measurement-free mode"), "%s", gs_ctx_errmsg(ctx));
    gs_device *cu = NULL;
    s = gs_device_open(ctx, GS_BACKEND_CUDA, 0, &cu);
    if (s == GS_OK) {
        /* a GPU machine: the real thing */
        s = gs_refine_device(ctx, NULL, cu, f.op, f.r, 3, 100, &rep);
        cr_assert_eq(s, GS_OK, "%s", gs_ctx_errmsg(ctx));
        cr_assert_eq(rep.measured, 3);
        cr_assert_str_eq(rep.backend, "cuda");
        for (int i = 0; i < 3; i++) cr_assert_geq(rep.c[i].runs, GS_REFINE_MIN_RUNS);
        gs_device_close(cu);
    } else {
        cr_assert_eq(s, GS_ERR_CUDA_MISSING, "gs_device_open: %s: %s", gs_status_str(s), gs_ctx_errmsg(ctx));
        cr_log_info("CUDA: %s", gs_ctx_errmsg(ctx));
    }
    gs_test_teardown(&f);
}
