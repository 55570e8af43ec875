/* test_mma_model.c — the model's price of tensor-core (mma.sync) plans
 * (hwmodel/model/model.c, docs/MODEL.md "The price of an mma plan"). */
#include "construct/construct.h"
#include "hwmodel/model/model.h"
#include "tests/test_common.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

TestSuite(mma_model);

/* One m16n8k16 holds a partition's tensor pipe 2*16*8*16 / (rate/4) clocks:
 * 8 on the a100 (2048 FLOP per clock per SM), 4 on the h100 over its 0.60
 * efficiency, 32 on the rtx3090 (512 with f32 accumulate); tf32 m16n8k8 the
 * same as f16 m16n8k16 on each (half the rate, half the k). */
Test(mma_model, clocks_per_instruction) {
    const gs_hw *a100 = gs_hw_find_builtin("a100"), *h100 = gs_hw_find_builtin("h100"),
                *r3090 = gs_hw_find_builtin("rtx3090"), *t4 = gs_hw_find_builtin("t4");
    cr_assert_float_eq(gs_model_mma_clocks(a100, GS_DTYPE_F16, GS_MATH_F32, 16, 8, 16), 8.0, 1e-12);
    cr_assert_float_eq(gs_model_mma_clocks(a100, GS_DTYPE_BF16, GS_MATH_F32, 16, 8, 16), 8.0, 1e-12);
    cr_assert_float_eq(gs_model_mma_clocks(a100, GS_DTYPE_F32, GS_MATH_TF32, 16, 8, 8), 8.0, 1e-12);
    cr_assert_float_eq(gs_model_mma_clocks(h100, GS_DTYPE_F16, GS_MATH_F32, 16, 8, 16), 4.0 / 0.6, 1e-12);
    cr_assert_float_eq(gs_model_mma_clocks(r3090, GS_DTYPE_F16, GS_MATH_F32, 16, 8, 16), 32.0, 1e-12);
    cr_assert_float_eq(gs_model_mma_clocks(t4, GS_DTYPE_F16, GS_MATH_F32, 16, 8, 8), 8.0, 1e-12);
    /* no bf16 tensor math on the t4: priced as the FMAs (2 * 64 lanes per clock) */
    cr_assert_float_eq(gs_model_mma_clocks(t4, GS_DTYPE_BF16, GS_MATH_F32, 16, 8, 16), 2.0 * 16 * 8 * 16 / 32.0,
                       1e-12);
    /* a derived profile's rate and efficiency are what the price reads */
    gs_hw h = *a100;
    h.tc_f16_flops_per_sm = 4096;
    h.mma_sync_efficiency = 0.5;
    cr_assert_float_eq(gs_model_mma_clocks(&h, GS_DTYPE_F16, GS_MATH_F32, 16, 8, 16), 8.0, 1e-12);
}

/* A 64 x 64 warp tile of m16n8k16: 4 x 8 = 32 mma per k-step; A's 4 tiles
 * by ldmatrix.x4 (4 wavefronts each) and B's 8 by .x2 (2 each): 12 loads, 32
 * wavefronts, 0.81 address instructions a load; no conversions. tf32 m16n8k8 read register by register
 * (4 A and 2 B registers a tile) adds one cvt per register. */
Test(mma_model, kstep_work) {
    const gs_hw *a100 = gs_hw_find_builtin("a100");
    gs_mma_operand a = {4, 4, 4.0, 0}, b = {2, 2, 2.0, 0};
    gs_mma_kstep k;
    gs_model_mma_kstep(a100, GS_DTYPE_F16, GS_MATH_F32, 16, 8, 16, 64, 64, &a, &b, &k);
    cr_assert_float_eq(k.mma, 32.0, 1e-12);
    cr_assert_float_eq(k.tensor_clk, 256.0, 1e-12);
    cr_assert_float_eq(k.loads, 12.0, 1e-12);
    cr_assert_float_eq(k.wavefronts, 32.0, 1e-12);
    cr_assert_float_eq(k.cvt, 0.0, 1e-12);
    cr_assert_float_eq(k.addr, 12 * 0.81, 1e-12); /* each ldmatrix's address arithmetic */
    gs_mma_operand ta = {4, 0, 4.0, 0}, tb = {2, 0, 2.0, 0};
    gs_model_mma_kstep(a100, GS_DTYPE_F32, GS_MATH_TF32, 16, 8, 8, 32, 32, &ta, &tb, &k);
    cr_assert_float_eq(k.mma, 8.0, 1e-12);
    cr_assert_float_eq(k.tensor_clk, 64.0, 1e-12);
    cr_assert_float_eq(k.loads, 2 * 4 + 4 * 2, 1e-12);
    cr_assert_float_eq(k.cvt, 2 * 4 + 4 * 2, 1e-12);
    cr_assert_float_eq(k.wavefronts, 2 * 4.0 + 4 * 2.0, 1e-12);
    cr_assert_float_eq(k.addr, 0.0, 1e-12); /* element reads: none counted */
    /* tf32 with A by ldmatrix.x4 (its rows along k) and B by elements: one
     * load per A tile, still a cvt per register */
    gs_mma_operand la = {4, 4, 4.0, 0};
    gs_model_mma_kstep(a100, GS_DTYPE_F32, GS_MATH_TF32, 16, 8, 8, 32, 32, &la, &tb, &k);
    cr_assert_float_eq(k.loads, 2 * 1 + 4 * 2, 1e-12);
    cr_assert_float_eq(k.cvt, 2 * 4 + 4 * 2, 1e-12);
    cr_assert_float_eq(k.addr, 2 * 0.81, 1e-12); /* A's two ldmatrix addresses */
    cr_assert_float_eq(k.pack, 0.0, 1e-12);
    /* f16 m16n8k16 read by elements: A's 4 registers paired (one read each), B's 2 split (an
     * NCHW input's k pair a channel apart: two 16-bit reads and a PRMT each); 32 x 32 warp tile */
    gs_mma_operand pa = {4, 0, 4.0, 0}, sb = {2, 0, 2.0, 1};
    gs_model_mma_kstep(a100, GS_DTYPE_F16, GS_MATH_F32, 16, 8, 16, 32, 32, &pa, &sb, &k);
    cr_assert_float_eq(k.loads, 2 * 4 + 4 * 2 * 2, 1e-12);
    cr_assert_float_eq(k.pack, 4 * 2, 1e-12);
    cr_assert_float_eq(k.addr, 0.0, 1e-12);
}

/* The estimate of a tf32 plan reads its ldmatrix choice: a100 gemm 4096^3
 * (A row-major: ldmatrix.x4; B's rows along n: element reads) issues fewer
 * instructions than the same plan read element by element, and so prices
 * less compute time; its tensor time and wavefronts are the same. */
Test(mma_model, tf32_ldmatrix_in_the_estimate) {
    gs_ctx *ctx = gs_ctx_create();
    const gs_hw *hw = gs_hw_find_builtin("a100");
    gs_op *op = NULL;
    cr_assert_eq(gs_op_parse(ctx, "gemm M=4096 N=4096 K=4096 math=tf32", &op), GS_OK);
    gs_etir e;
    cr_assert_eq(gs_etir_parse_config(ctx, op, "bm=128,bn=128,bk=16,tm=8,tn=16,stages=4,raster=16,mma=3", &e), GS_OK,
                 "%s", gs_ctx_errmsg(ctx));
    cr_assert(gs_hw_check(hw, op, &e), "%s", gs_hw_check_why(hw, op, &e));
    gs_plan p;
    gs_plan_make(hw, op, &e, NULL, &p);
    cr_assert(p.mma == 3 && p.in[0].ldsm == 4 && p.in[1].ldsm == 0, "ldsm %d, %d", p.in[0].ldsm, p.in[1].ldsm);
    gs_plan q = p;
    q.in[0].ldsm = 0;
    gs_estimate lm, el;
    gs_estimate_plan(hw, op, &e, &p, 0, NULL, NULL, &lm);
    gs_estimate_plan(hw, op, &e, &q, 0, NULL, NULL, &el);
    cr_assert(lm.t_compute < el.t_compute, "t_compute %g (ldmatrix) vs %g (elements)", lm.t_compute, el.t_compute);
    cr_assert_float_eq(lm.t_smem, el.t_smem, 1e-15);
    gs_op_destroy(op);
    gs_ctx_destroy(ctx);
}

/* Issue 20's acceptance: the walk picks an mma row for gemm 4096^3 in f16
 * and bf16 on every sm_80+ profile, and on the a100 its prediction is at
 * least 60 % of the tensor peak. The FFMA-only walk (the knob not walked,
 * no tensor-core completion) picks FFMA tiles, under 10 % of the peak. */
Test(mma_model, walk_picks_mma_for_half_gemm, .timeout = 120) {
    gs_ctx *ctx = gs_ctx_create();
    gs_construct_opts o;
    gs_construct_opts_default(&o);
    o.top_k = 1;
    for (int i = 0; i < gs_hw_builtin_count(); i++) {
        const gs_hw *hw = gs_hw_builtin(i);
        if (hw->sm < 80) continue;
        for (int t = GS_DTYPE_F16; t <= GS_DTYPE_BF16; t++) {
            char spec[96];
            snprintf(spec, sizeof spec, "gemm M=4096 N=4096 K=4096 dtype=%s", gs_dtype_name((gs_dtype)t));
            gs_op *op = NULL;
            cr_assert_eq(gs_op_parse(ctx, spec, &op), GS_OK, "%s", gs_ctx_errmsg(ctx));
            gs_result *r = NULL;
            cr_assert_eq(gs_construct(ctx, op, hw, &o, &r), GS_OK, "%s", gs_ctx_errmsg(ctx));
            const gs_etir *c = &r->cand[0];
            cr_assert(c->mma != 0, "%s on %s: the walk picked FFMA", spec, hw->name);
            const gs_mma_row *row = gs_mma_get(c->mma);
            cr_assert(row && row->dtype_in == t && gs_mma_arch_ok(c->mma, hw->sm), "%s on %s: row %d", spec, hw->name,
                      c->mma);
            double peak = gs_hw_peak_tensor_flops(hw, (gs_dtype)t, GS_MATH_F32);
            double got = 2.0 * 4096.0 * 4096.0 * 4096.0 / r->est[0].time_s;
            cr_log_info("%s on %s: %s row %s, %.1f TFLOP/s predicted, %.0f %% of the tensor peak", spec, hw->name,
                        r->desc[0], row->name, got / 1e12, 100 * got / peak);
            if (!strcmp(hw->name, "a100"))
                cr_assert(got >= 0.60 * peak, "%s on a100: %.1f TFLOP/s is under 60 %% of %.1f", spec, got / 1e12,
                          peak / 1e12);
            gs_result_destroy(r);
            gs_op_destroy(op);
        }
    }
    gs_ctx_destroy(ctx);
}

/* f32 without math=tf32 has no tensor-core row: the walk never moves the
 * knob, and a config that asks for a row is refused by the check. */
Test(mma_model, f32_gemm_stays_ffma) {
    gs_ctx *ctx = gs_ctx_create();
    gs_op *op = NULL;
    cr_assert_eq(gs_op_parse(ctx, "gemm M=1024 N=1024 K=1024", &op), GS_OK);
    gs_construct_opts o;
    gs_construct_opts_default(&o);
    gs_result *r = NULL;
    cr_assert_eq(gs_construct(ctx, op, gs_hw_find_builtin("a100"), &o, &r), GS_OK);
    for (int i = 0; i < r->n; i++) cr_assert_eq(r->cand[i].mma, 0);
    gs_result_destroy(r);
    gs_op_destroy(op);
    gs_ctx_destroy(ctx);
}

/* The estimate of an mma plan reads the plan: the ldmatrix wavefronts
 * (read_wf) are in t_smem, the registers (regs_bound) in occupancy, and the
 * tensor pipe, not the FMA lanes, in t_compute (the same tiles without mma
 * are priced as FFMA, several times slower). */
Test(mma_model, estimate_reads_the_mma_plan) {
    gs_ctx *ctx = gs_ctx_create();
    const gs_hw *hw = gs_hw_find_builtin("a100");
    gs_op *op = NULL;
    cr_assert_eq(gs_op_parse(ctx, "gemm M=4096 N=4096 K=4096 dtype=f16", &op), GS_OK);
    gs_etir e;
    cr_assert_eq(gs_etir_parse_config(ctx, op, "bm=128,bn=128,bk=32,tm=8,tn=8,stages=3,raster=8,mma=1", &e), GS_OK,
                 "%s", gs_ctx_errmsg(ctx));
    cr_assert(gs_hw_check(hw, op, &e));
    gs_plan p;
    gs_plan_make(hw, op, &e, NULL, &p);
    cr_assert_eq(p.mma, 1);
    gs_estimate base, more;
    gs_estimate_plan(hw, op, &e, &p, 0, NULL, NULL, &base);
    /* a block's 128^2 x 4096 / (16 x 8 x 16) m16n8k16 at 8 clocks each on 4
     * partitions; 1024 blocks at one per SM are 10 waves on 108 SMs; over
     * GS_MMA_SUSTAIN 0.9 */
    cr_assert_eq(base.blocks_per_sm, 1);
    double t_tensor = 10.0 * 128 * 128 * 4096 / (16 * 8 * 16) * 8.0 / 4.0 / (1410e6 * 0.9);
    cr_assert(base.t_compute >= t_tensor && base.t_compute < 1.01 * t_tensor, "t_compute %g, tensor %g",
              base.t_compute, t_tensor);
    gs_plan q = p;
    q.in[1].read_wf *= 2; /* B's ldmatrix twice as conflicted */
    gs_estimate_plan(hw, op, &e, &q, 0, NULL, NULL, &more);
    cr_assert(more.t_smem > base.t_smem * 1.1, "t_smem %g -> %g", base.t_smem, more.t_smem);
    q = p;
    q.regs_bound = 90; /* fewer registers: more blocks per SM */
    gs_estimate_plan(hw, op, &e, &q, 0, NULL, NULL, &more);
    cr_assert_gt(more.blocks_per_sm, base.blocks_per_sm);
    /* the same tiles on the FFMA core */
    gs_etir f = e;
    f.mma = 0;
    gs_estimate ffma;
    gs_estimate_etir(hw, op, &f, 0, &ffma);
    cr_assert(ffma.time_s > 5 * base.time_s, "ffma %g s, mma %g s", ffma.time_s, base.time_s);
    gs_op_destroy(op);
    gs_ctx_destroy(ctx);
}

/* The register bound of a 16-bit mma plan counts one cp.async unit in
 * flight per input, not the copy batch (a unit's cp.async consumes its
 * address at once; the edge path fills one unit's vector at a time), half a
 * register per unit and GS_PLAN_MMA_REGS_SLACK, from 128 accumulators a
 * thread. Counting the batches (and each 16-bit edge element
 * of them) put CUTLASS's large sm_80 tile over 255 registers: 128x256
 * blocks with 64x64 warp tiles (tm 8, tn 16) were bounded at 356 (bk 64, 3
 * stages) and 290 (bk 32, 4 stages), so the walk never reached them;
 * NVRTC's ptxas compiles them for sm_90 in 254 and 232 registers with 0
 * spills. */
Test(mma_model, register_bound_admits_large_warp_tiles) {
    gs_ctx *ctx = gs_ctx_create();
    const gs_hw *hw = gs_hw_find_builtin("h100");
    const char *dts[] = {"f16", "bf16"};
    const char *cfgs[] = {"bm=128,bn=256,bk=64,tm=8,tn=16,stages=3,raster=8,mma=%d",
                          "bm=128,bn=256,bk=32,tm=8,tn=16,stages=4,raster=8,mma=%d"};
    for (int d = 0; d < 2; d++) {
        char spec[80];
        snprintf(spec, sizeof spec, "gemm M=4096 N=4096 K=4096 dtype=%s", dts[d]);
        gs_op *op = NULL;
        cr_assert_eq(gs_op_parse(ctx, spec, &op), GS_OK);
        for (int c = 0; c < 2; c++) {
            char cfg[96];
            snprintf(cfg, sizeof cfg, cfgs[c], d + 1); /* rows 1 f16, 2 bf16 m16n8k16 */
            gs_etir e;
            cr_assert_eq(gs_etir_parse_config(ctx, op, cfg, &e), GS_OK, "%s", gs_ctx_errmsg(ctx));
            gs_plan p;
            gs_plan_make(hw, op, &e, NULL, &p);
            cr_assert_eq(p.mma, d + 1);
            cr_assert(p.regs_bound <= hw->max_regs_per_thread, "%s %s: bound %d", spec, cfg, p.regs_bound);
            cr_assert(gs_hw_check(hw, op, &e), "%s %s: %s", spec, cfg, gs_hw_check_why(hw, op, &e));
            /* the second fragment set of a 64x64 warp tile would not fit:
             * ptxas spills 16 bytes with it */
            cr_assert_eq(p.frag_pipe, 0, "%s %s", spec, cfg);
        }
        gs_op_destroy(op);
    }
    gs_ctx_destroy(ctx);
}

/* bf16's m16n8k8 row is priced from its own fields: the shape of f16's k8
 * row and bf16's tensor rate, which the a100 and the h100 give f16 too; so
 * a bf16 gemm on row 5 prices as the f16 gemm on row 4 at the same tiles
 * (both 16-bit: the same bytes, reads and conversions), and its tensor time
 * is half a k16 instruction's for half the k. */
Test(mma_model, bf16_k8_row_priced_from_the_row) {
    gs_ctx *ctx = gs_ctx_create();
    const gs_mma_row *r5 = gs_mma_get(5), *r4 = gs_mma_get(4);
    cr_assert(r5 && r4 && r5->dtype_in == GS_DTYPE_BF16 && r5->k == 8);
    const char *hws[] = {"a100", "h100"};
    for (int h = 0; h < 2; h++) {
        const gs_hw *hw = gs_hw_find_builtin(hws[h]);
        cr_assert_float_eq(gs_model_mma_clocks(hw, r5->dtype_in, r5->math, r5->m, r5->n, r5->k),
                           gs_model_mma_clocks(hw, GS_DTYPE_BF16, GS_MATH_F32, 16, 8, 16) / 2, 1e-12);
        gs_estimate est[2];
        for (int i = 0; i < 2; i++) {
            gs_op *op = NULL;
            const char *spec = i ? "gemm M=4096 N=4096 K=4096 dtype=bf16" : "gemm M=4096 N=4096 K=4096 dtype=f16";
            cr_assert_eq(gs_op_parse(ctx, spec, &op), GS_OK);
            gs_etir e;
            cr_assert_eq(gs_etir_parse_config(ctx, op, i ? "bm=128,bn=128,bk=32,tm=8,tn=8,stages=2,mma=5"
                                                         : "bm=128,bn=128,bk=32,tm=8,tn=8,stages=2,mma=4", &e),
                         GS_OK, "%s", gs_ctx_errmsg(ctx));
            cr_assert(gs_hw_check(hw, op, &e), "%s: %s", hws[h], gs_hw_check_why(hw, op, &e));
            gs_estimate_etir(hw, op, &e, 0, &est[i]);
            gs_op_destroy(op);
        }
        cr_expect_float_eq(est[1].time_s, est[0].time_s, 1e-12 * est[0].time_s, "%s: bf16 row 5 %g s, f16 row 4 %g s",
                           hws[h], est[1].time_s, est[0].time_s);
        cr_expect_float_eq(est[1].t_compute, est[0].t_compute, 1e-12 * est[0].t_compute, "%s", hws[h]);
    }
    gs_ctx_destroy(ctx);
}

/* The output of an mma plan is stored from the row's C layout: a warp's
 * f16x2 store covers 8 rows of 8 elements (lane g, t at row g, cols 2t and
 * 2t+1), 8 sectors of which 16 bytes each are written; a tf32 gemm's float2
 * store fills its 8 sectors. t_l2 is the input tiles plus those sectors.
 * Priced from the FFMA thread tiles (tm x tn runs per thread) the f16
 * store counted 16 sectors, twice the C layout's. */
Test(mma_model, epilogue_sectors_follow_the_c_layout) {
    gs_ctx *ctx = gs_ctx_create();
    const gs_hw *hw = gs_hw_find_builtin("h100");
    const char *specs[] = {"gemm M=4096 N=4096 K=4096 dtype=f16", "gemm M=4096 N=4096 K=4096 math=tf32"};
    const char *cfgs[] = {"bm=128,bn=128,bk=64,tm=8,tn=8,stages=4,raster=8,mma=1",
                          "bm=128,bn=128,bk=32,tm=8,tn=8,stages=4,raster=8,mma=3"};
    const double eb[] = {2, 4};
    for (int i = 0; i < 2; i++) {
        gs_op *op = NULL;
        cr_assert_eq(gs_op_parse(ctx, specs[i], &op), GS_OK);
        gs_etir e;
        cr_assert_eq(gs_etir_parse_config(ctx, op, cfgs[i], &e), GS_OK, "%s", gs_ctx_errmsg(ctx));
        cr_assert(gs_hw_check(hw, op, &e), "%s", gs_hw_check_why(hw, op, &e));
        gs_estimate est;
        gs_estimate_etir(hw, op, &e, 0, &est);
        double bk = i ? 32 : 64, tiles = 4096 / bk, blocks = 32.0 * 32.0;
        double in = blocks * tiles * (128 * bk + bk * 128) * eb[i];
        double out = 4096.0 * 4096.0 * eb[i] * (i ? 1 : 2); /* f16: 16 of 32 bytes a sector */
        double want = (in + out) / (hw->l2_gbs * 1e9);
        cr_assert(fabs(est.t_l2 - want) < 1e-4 * want, "%s: t_l2 %.6g s, want %.6g", specs[i], est.t_l2, want);
        gs_op_destroy(op);
    }
    gs_ctx_destroy(ctx);
}

/* An mma input's layout choice (choose_pad_mma) is remembered by a key that
 * leaves out the warp tile, the thread tiles and the copy loop's per-thread
 * fields (their candidates' wavefronts are simulated once per layout and
 * block tile, and each warp tile only weighs them), and both it and the
 * fragment-read memo leave out the block tiles of the other operand's axes.
 * So every plan made through one memo shared by the warp tiles of many
 * block tiles must equal the plan made without a memo: gemm (with A
 * transposed), batched gemm, and convolutions in both layouts (several m and
 * k axes, the im2col tile), on sm_90, sm_86 (ldmatrix) and sm_75 (k = 8). */
Test(mma_model, layout_memo_exact, .timeout = 120) {
    const char *specs[] = {
        "gemm M=512 N=384 K=256 dtype=f16",
        "gemm M=256 N=256 K=512 transA=1 dtype=bf16",
        "bgemm B=8 M=128 N=64 K=128 transB=1 dtype=f16",
        "conv2d N=2 C=32 H=14 W=14 K=64 R=3 S=3 pad=1 layout=nhwc dtype=f16",
        "conv2d N=2 C=32 H=14 W=14 K=64 R=3 S=3 pad=1 layout=nchw dtype=bf16",
    };
    const char *hws[] = {"h100", "rtx3090", "t4"};
    gs_ctx *ctx = gs_ctx_create();
    gs_wf_memo *memo = malloc(sizeof *memo);
    cr_assert(memo);
    int64_t total = 0;
    for (size_t s = 0; s < sizeof specs / sizeof specs[0]; s++)
        for (size_t h = 0; h < sizeof hws / sizeof hws[0]; h++) {
            const gs_hw *hw = gs_hw_find_builtin(hws[h]);
            gs_op *op = NULL;
            cr_assert_eq(gs_op_parse(ctx, specs[s], &op), GS_OK, "%s: %s", specs[s], gs_ctx_errmsg(ctx));
            int row = gs_mma_pick(hw->sm, op);
            int8_t role[GS_MAX_AXES];
            if (!row || !gs_mma_roles(op, role)) { /* bf16 on sm_75: no row */
                gs_op_destroy(op);
                continue;
            }
            /* the last (fastest) axis of each role carries its tile */
            int last[GS_MMA_ROLE_BATCH + 1] = {-1, -1, -1, -1, -1};
            for (int a = 0; a < op->naxes; a++) last[role[a]] = a;
            gs_wf_memo_init(memo);
            int64_t n = 0;
            const int bms[] = {16, 32, 64, 128}, bns[] = {16, 32, 64}, bks[] = {16, 32, 64};
            for (int ib = 0; ib < 4 * 3 * 3 * 2; ib++)
                for (int tm = 2; tm <= 16; tm *= 2)
                    for (int tn = 2; tn <= 16; tn *= 2)
                        for (int st = 1; st <= 3; st++) {
                            gs_etir e;
                            gs_etir_init(op, &e);
                            e.level = 0;
                            e.mma = (uint8_t)row;
                            gs_knob_set(&e, GS_KNOB_STAGES, st);
                            for (int a = 0; a < op->naxes; a++) {
                                int64_t b = 1, x = 1;
                                while (x < op->axes[a].extent) x *= 2; /* the largest block tile */
                                if (a == last[GS_MMA_ROLE_M]) b = bms[ib % 4];
                                else if (a == last[GS_MMA_ROLE_N]) b = bns[ib / 4 % 3];
                                else if (a == last[GS_MMA_ROLE_K]) b = bks[ib / 12 % 3];
                                else if (ib / 36 && role[a] != GS_MMA_ROLE_BATCH) b = 2; /* the other m, k axes */
                                e.tile[a].block = (int32_t)(b < x ? b : x);
                            }
                            e.tile[last[GS_MMA_ROLE_M]].thread = tm;
                            e.tile[last[GS_MMA_ROLE_N]].thread = tn;
                            if (!gs_etir_wellformed(op, &e) || !gs_mma_state_ok(op, &e, row)) continue;
                            gs_plan with, without;
                            char desc[256];
                            gs_etir_format(op, &e, desc, sizeof desc);
                            gs_plan_make_memo(hw, op, &e, NULL, memo, &with);
                            gs_plan_make(hw, op, &e, NULL, &without);
                            cr_assert_eq(with.mma, row);
                            for (int t = 0; t < op->ninputs; t++)
                                cr_assert(!memcmp(&with.in[t], &without.in[t], sizeof with.in[t]),
                                          "%s on %s, %s, input %d: the memo's layout (pad %d swizzle %d ldsm %d, "
                                          "read %g store %g) is not the plan's (pad %d swizzle %d ldsm %d, read %g "
                                          "store %g)",
                                          specs[s], hw->name, desc, t, with.in[t].pad,
                                          with.in[t].swizzle, with.in[t].ldsm, with.in[t].read_wf, with.in[t].store_wf,
                                          without.in[t].pad, without.in[t].swizzle, without.in[t].ldsm,
                                          without.in[t].read_wf, without.in[t].store_wf);
                            cr_assert(!memcmp(&with, &without, sizeof with), "%s on %s, %s: plans differ", specs[s],
                                      hw->name, desc);
                            n++;
                        }
            cr_log_info("%s on %s: %lld mma plans through one memo", specs[s], hw->name, (long long)n);
            cr_assert(n >= 100, "%s on %s: only %lld mma states planned", specs[s], hw->name, (long long)n);
            total += n;
            gs_op_destroy(op);
        }
    cr_assert(total >= 1000);
    free(memo);
    gs_ctx_destroy(ctx);
}
