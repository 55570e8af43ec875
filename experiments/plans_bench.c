/* plans_bench.c — what the model expects of the v2 plans, without a GPU
 * (make bench). For every reduction operator of the paper suite (gemv, row
 * reductions, gemm, bgemm, convolutions) it constructs the pick on one
 * profile and prices three kernels of the same tiles:
 *   v2     the pick as emitted (its stages, raster and reduce split);
 *   nosplit the pick without its reduce splits (no group in the block, no
 *          split-K across blocks), the rest as emitted;
 *   v1     the pick's tiles under the v1-style plan (scalar, predicated,
 *          register copies, launch bounds (threads, 1)), one stage, no
 *          raster, no split: what codegen v1 would have emitted for them.
 * It prints the predicted times ("-" where a variant does not fit the
 * profile), v1/v2, the bound, and for the memory-bound
 * picks the DRAM bandwidth the model expects as a fraction of the profile's.
 * Then, for the 1x1 convolutions, the direct nest against the matmul form
 * (implicit GEMM), each as constructed, with the DRAM and L2 bytes priced.
 * These are predictions, not measurements: `make bench-gpu` measures.
 *
 * Usage: build/plans_bench [--hw NAME] [SUITE.json ...]
 *        (default: h100 and experiments/suites/paper.json) */
#include "construct/construct.h" /* internal: prices plan variants (gs_plan_make, gs_estimate_plan); gensor.h: time only */

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

static bool is_reduction(const gs_op *op) { return gs_etir_lanes_axis(op) >= 0; }

static double price(const gs_hw *hw, const gs_op *op, const gs_etir *e, const gs_plan_opts *o, gs_estimate *est) {
    gs_plan p;
    gs_plan_make(hw, op, e, o, &p);
    gs_estimate_plan(hw, op, e, &p, 0, NULL, NULL, est);
    return est->time_s;
}

/* The pick of op on hw (top 1), priced; false with a message on failure. */
static bool pick(gs_ctx *ctx, const gs_hw *hw, const gs_op *op, gs_etir *e, gs_estimate *est) {
    gs_construct_opts co;
    gs_construct_opts_default(&co);
    co.top_k = 1;
    co.conv_form = GS_FORM_DIRECT; /* the operator's own nest: the tables compare the forms */
    gs_result *r = NULL;
    if (gs_construct(ctx, op, hw, &co, &r) != GS_OK || r->n < 1) {
        fprintf(stderr, "plans_bench: %s: %s\n", op->spec, gs_ctx_errmsg(ctx));
        gs_result_destroy(r);
        return false;
    }
    *e = r->cand[0];
    price(hw, op, e, NULL, est);
    gs_result_destroy(r);
    return true;
}

/* 1x1 convolutions: the direct 7-axis nest against the matmul form
 * (gs_op_conv1x1_as_matmul), both as constructed, with their traffic. */
static int conv1x1_table(gs_ctx *ctx, const gs_hw *hw, json_t *ops) {
    int rc = 0, n = 0;
    double lsum = 0;
    for (size_t i = 0; i < json_array_size(ops); i++) {
        json_t *it = json_array_get(ops, i);
        const char *spec = json_string_value(json_object_get(it, "spec"));
        const char *name = json_string_value(json_object_get(it, "name"));
        gs_op op, mm;
        if (!spec || gs_op_parse_into(ctx, spec, &op) != GS_OK) continue;
        if (gs_op_conv1x1_as_matmul(ctx, &op, &mm) != GS_OK) continue;
        if (!n++)
            printf("\n%-16s %9s %9s %7s %10s %10s %10s %10s  %s\n", "1x1 conv", "direct", "matmul", "d/m", "dram_d",
                   "dram_m", "l2_d", "l2_m", "matmul pick");
        gs_etir ed, em;
        gs_estimate sd, sm;
        if (!pick(ctx, hw, &op, &ed, &sd) || !pick(ctx, hw, &mm, &em, &sm)) {
            rc = 1;
            continue;
        }
        char desc[160];
        gs_etir_format(&mm, &em, desc, sizeof desc);
        double l2d = sd.t_l2 * hw->l2_gbs * 1e9, l2m = sm.t_l2 * hw->l2_gbs * 1e9;
        printf("%-16.16s %9.4f %9.4f %7.2f %9.1fM %9.1fM %9.1fM %9.1fM  %s\n", name ? name : "-", sd.time_s * 1e3,
               sm.time_s * 1e3, sd.time_s / sm.time_s, sd.dram_bytes / 1e6, sm.dram_bytes / 1e6, l2d / 1e6, l2m / 1e6,
               desc);
        lsum += log(sd.time_s / sm.time_s);
    }
    if (n)
        printf("geomean over %d 1x1 convolutions on %s: direct / matmul form %.2fx (predicted; ms, bytes)\n", n,
               hw->name, exp(lsum / n));
    return rc;
}

/* Windowed operators (convolutions, depthwise convolutions, pools): the
 * pick's tiles with the input staged as the tensor box (the window's halo,
 * as the direct nest stages it) and as the im2col tile (implicit GEMM),
 * priced with their L2 bytes and shared memory; "auto" is the plan's own
 * choice. */
static int im2col_table(gs_ctx *ctx, const gs_hw *hw, json_t *ops) {
    int n = 0, wins_box = 0, wins_i2c = 0;
    double lsum = 0;
    for (size_t i = 0; i < json_array_size(ops); i++) {
        json_t *it = json_array_get(ops, i);
        const char *spec = json_string_value(json_object_get(it, "spec"));
        const char *name = json_string_value(json_object_get(it, "name"));
        gs_op op;
        if (!spec || gs_op_parse_into(ctx, spec, &op) != GS_OK) continue;
        gs_etir e;
        gs_estimate sa, sb, si;
        if (op.kind != GS_OPK_CONV2D && op.kind != GS_OPK_DWCONV2D && op.kind != GS_OPK_POOL) continue;
        if (!pick(ctx, hw, &op, &e, &sa)) return 1;
        const gs_plan_opts box = {.im2col = GS_IM2COL_OFF}, i2c = {.im2col = GS_IM2COL_FORCE};
        gs_plan pb, pi, pa;
        gs_plan_make(hw, &op, &e, &box, &pb);
        gs_plan_make(hw, &op, &e, &i2c, &pi);
        gs_plan_make(hw, &op, &e, NULL, &pa);
        if (!pi.in[0].im2col || !pi.in[0].staged) continue; /* no window, or the input is not staged */
        gs_estimate_plan(hw, &op, &e, &pb, 0, NULL, NULL, &sb);
        gs_estimate_plan(hw, &op, &e, &pi, 0, NULL, NULL, &si);
        if (!n++)
            printf("\n%-16s %9s %9s %7s %7s %10s %10s %8s %8s  %s\n", "windowed", "box_ms", "im2col", "b/i", "auto",
                   "l2_box", "l2_i2c", "smem_b", "smem_i", "pick");
        char desc[160];
        gs_etir_format(&op, &e, desc, sizeof desc);
        double r = sb.time_s / si.time_s;
        printf("%-16.16s %9.4f %9.4f %7.2f %7s %9.1fM %9.1fM %8lld %8lld  %s\n", name ? name : "-", sb.time_s * 1e3,
               si.time_s * 1e3, r, pa.in[0].im2col ? "im2col" : "box", sb.t_l2 * hw->l2_gbs * 1e3,
               si.t_l2 * hw->l2_gbs * 1e3, (long long)pb.smem_bytes, (long long)pi.smem_bytes, desc);
        lsum += log(r);
        wins_box += r < 0.99;
        wins_i2c += r > 1.01;
    }
    if (n)
        printf("geomean over %d windowed operators on %s: tensor box / im2col tile %.2fx on the same tiles; the box "
               "wins %d, the im2col tile %d (predicted)\n",
               n, hw->name, exp(lsum / n), wins_box, wins_i2c);
    return 0;
}

int main(int argc, char **argv) {
    const char *hwname = "h100";
    const char *files[16];
    int nf = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--hw") && i + 1 < argc) hwname = argv[++i];
        else if (argv[i][0] == '-') {
            fprintf(stderr, "usage: %s [--hw NAME] [SUITE.json ...]\n", argv[0]);
            return 2;
        } else if (nf < 16) files[nf++] = argv[i];
    }
    if (!nf) files[nf++] = "experiments/suites/paper.json";
    gs_ctx *ctx = gs_ctx_create();
    const gs_hw *hw = gs_hw_find_builtin(hwname);
    if (!ctx || !hw) {
        fprintf(stderr, "plans_bench: unknown profile '%s' (gensor hw list)\n", hwname);
        gs_ctx_destroy(ctx);
        return 2;
    }
    const gs_plan_opts v1 = {1, 1, 1, 1, 0, GS_IM2COL_OFF, 0};
    printf("%-8s %-46s %-44s %9s %9s %9s %7s %-8s %s\n", "name", "operator", "pick (v2)", "v2_ms", "nosplit",
           "v1_ms", "v1/v2", "bound", "dram");
    double lsum = 0, lsplit = 0;
    int n = 0, rc = 0;
    for (int f = 0; f < nf; f++) {
        json_error_t je;
        json_t *root = json_load_file(files[f], 0, &je);
        if (!root) {
            fprintf(stderr, "plans_bench: %s:%d: %s\n", files[f], je.line, je.text);
            rc = 1;
            continue;
        }
        json_t *ops = json_object_get(root, "ops");
        for (size_t i = 0; i < json_array_size(ops); i++) {
            json_t *it = json_array_get(ops, i);
            const char *spec = json_string_value(json_object_get(it, "spec"));
            const char *name = json_string_value(json_object_get(it, "name"));
            gs_op op;
            if (!spec || gs_op_parse_into(ctx, spec, &op) != GS_OK) {
                fprintf(stderr, "plans_bench: %s: %s\n", spec ? spec : "(no spec)", gs_ctx_errmsg(ctx));
                rc = 1;
                continue;
            }
            if (!is_reduction(&op)) continue;
            gs_construct_opts co;
            gs_construct_opts_default(&co);
            co.top_k = 1;
            co.conv_form = GS_FORM_DIRECT; /* priced below on op's own axes */
            gs_result *r = NULL;
            if (gs_construct(ctx, &op, hw, &co, &r) != GS_OK || r->n < 1) {
                fprintf(stderr, "plans_bench: %s: %s\n", spec, gs_ctx_errmsg(ctx));
                gs_result_destroy(r);
                rc = 1;
                continue;
            }
            gs_etir e = r->cand[0], ns = e, old = e;
            ns.lanes_log2 = 0;
            ns.splitk = 1;
            old.stages = 1;
            old.raster = 0;
            old.lanes_log2 = 0;
            old.splitk = 1;
            gs_estimate ev2, ens, ev1;
            double t2 = price(hw, &op, &e, NULL, &ev2);
            double tn = gs_hw_check(hw, &op, &ns) ? price(hw, &op, &ns, NULL, &ens) : NAN;
            double t1 = gs_hw_check(hw, &op, &old) ? price(hw, &op, &old, &v1, &ev1) : NAN;
            char desc[160], dram[48] = "";
            gs_etir_format(&op, &e, desc, sizeof desc);
            char *bar = strstr(desc, " | "); /* keep the tiles and the kernel dimensions */
            if (bar) {
                char *k = strstr(bar + 3, " | ");
                if (k) memmove(bar, k, strlen(k) + 1);
                else *bar = 0;
            }
            if (!strcmp(ev2.bound, "dram") && ev2.time_s > 0)
                snprintf(dram, sizeof dram, "%.0f GB/s = %.0f%%", ev2.dram_bytes / ev2.time_s / 1e9,
                         100.0 * ev2.dram_bytes / ev2.time_s / 1e9 / hw->dram_gbs);
            char sn[16], s1[16], sr[16];
            /* "-": the variant is not a valid kernel for the profile */
            snprintf(sn, sizeof sn, isfinite(tn) ? "%.4f" : "-", tn * 1e3);
            snprintf(s1, sizeof s1, isfinite(t1) ? "%.4f" : "-", t1 * 1e3);
            snprintf(sr, sizeof sr, isfinite(t1) ? "%.2f" : "-", t1 / t2);
            printf("%-8s %-46.46s %-44.44s %9.4f %9s %9s %7s %-8s %s\n", name ? name : "-", spec, desc, t2 * 1e3, sn, s1,
                   sr, ev2.bound, dram);
            if (isfinite(t1) && t1 > 0 && t2 > 0) {
                lsum += log(t1 / t2);
                n++;
            }
            if (isfinite(tn) && tn > 0 && t2 > 0) lsplit += log(tn / t2);
            gs_result_destroy(r);
        }
        rc |= conv1x1_table(ctx, hw, ops);
        rc |= im2col_table(ctx, hw, ops);
        json_decref(root);
    }
    if (n)
        printf("geomean over %d reduction operators on %s: v1-style plan / v2 pick %.2fx; without the reduce split / "
               "with %.2fx (predicted; the reduce splits: group and split-K)\n",
               n, hw->name, exp(lsum / n), exp(lsplit / n));
    gs_ctx_destroy(ctx);
    return rc;
}
