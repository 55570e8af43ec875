/* test_types.c — f16 and bf16 tensors through every printer path on PoCL,
 * checked against the reference (inputs exact in their type, f32
 * accumulation, one rounding of the output: gs_verify_plan's normwise and
 * half-ulp checks): all 13 operator classes on awkward shapes (primes, 1,
 * extents that are not multiples of the 8-half vector), the constructed
 * candidates with 1 to 4 stages under the fallback plans (scalar,
 * predicated, register copies), reduce lanes, split-K in both meets,
 * im2col, the 1x1 convolution as a matrix product, epilogues with bias and
 * relu, and a plan made for aligned rows run on misaligned ones. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "construct/construct.h"
#include "kernels/service/service.h"
#include "test_common.h"
#include "util/pcg.h"

static const gs_plan_opts OPTS[] = {
    {0, 0, 0, 0, 0, 0, 0}, /* the library's plan (fragment double buffering where it is chosen) */
    {1, 0, 0, 0, 0, 0, 0}, /* scalar */
    {0, 1, 0, 0, 0, 0, 0}, /* predicated (no fast path: no fragment pipeline) */
    {0, 0, 1, 0, 0, 0, 0}, /* register copies */
};
#define NOPTS (int)(sizeof OPTS / sizeof OPTS[0])

typedef struct tcount {
    int kernels, vec8_copy, vec_copy, vec_out, async, pipelined, scalar, predicated, lanes, splitk, im2col;
} tcount;

static gs_device *open_cl(gs_ctx *ctx) {
    gs_device *cl = NULL;
    gs_status s = gs_device_open(ctx, GS_BACKEND_OPENCL, 0, &cl);
    if (s == GS_ERR_OPENCL_MISSING) cr_skip_test("no OpenCL device (install pocl-opencl-icd): %s", gs_ctx_errmsg(ctx));
    cr_assert_eq(s, GS_OK, "%s", gs_ctx_errmsg(ctx));
    return cl;
}

static bool run1(gs_ctx *ctx, gs_device *cl, const gs_hw *hw, const gs_op *op, const gs_etir *e, const gs_plan_opts *o,
                 uint64_t seed, tcount *c) {
    if (!gs_etir_wellformed(op, e) || !gs_hw_check(hw, op, e)) return false;
    gs_plan p;
    gs_plan_make(hw, op, e, o, &p);
    gs_diff d;
    gs_status s = gs_verify_plan(ctx, cl, op, e, &p, seed, &d);
    char desc[256];
    gs_etir_format(op, e, desc, sizeof desc);
    cr_expect_eq(s, GS_OK, "%s on %s (%s) opts %d%d%d: %s", op->spec, hw->name, desc, o->scalar, o->predicated,
                 o->no_async, gs_ctx_errmsg(ctx));
    if (s != GS_OK) return true;
    c->kernels++;
    for (int t = 0; t < op->ninputs; t++) {
        c->vec8_copy += p.in[t].staged && p.in[t].copy_vec == 8;
        c->vec_copy += p.in[t].staged && p.in[t].copy_vec > 1;
        c->im2col += p.in[t].staged && p.in[t].im2col;
    }
    c->vec_out += p.out_vec > 1;
    c->async += p.any_async;
    c->pipelined += p.stages > 1;
    c->scalar += p.opts.scalar;
    c->predicated += !p.fast_path;
    c->lanes += p.lanes > 1;
    c->splitk += p.splitk > 1;
    return true;
}

/* spec with " dtype=<t>" appended */
static gs_op *parse_typed(gs_ctx *ctx, const char *spec, const char *t) {
    char buf[512];
    snprintf(buf, sizeof buf, "%s dtype=%s", spec, t);
    gs_op *op = NULL;
    cr_assert_eq(gs_op_parse(ctx, buf, &op), GS_OK, "%s: %s", buf, gs_ctx_errmsg(ctx));
    return op;
}

/* The constructed top candidate, then stages 1..4 under the option sets in rotation. */
static void run_specs(const char *const *hws, const char *const *specs, int n, const char *type, tcount *c) {
    gs_ctx *ctx = gs_ctx_create();
    gs_device *cl = open_cl(ctx);
    int rot = 0;
    for (int i = 0; i < n; i++) {
        gs_op *op = parse_typed(ctx, specs[i], type);
        const gs_hw *hw = gs_hw_find_builtin(hws[i % 3]);
        gs_construct_opts co;
        gs_construct_opts_default(&co);
        co.seed = (uint64_t)i + 1;
        co.top_k = 1;
        gs_result *r = NULL;
        cr_assert_eq(gs_construct(ctx, op, hw, &co, &r), GS_OK, "%s: %s", op->spec, gs_ctx_errmsg(ctx));
        run1(ctx, cl, hw, op, &r->cand[0], &OPTS[0], co.seed, c);
        /* and under a fallback plan: scalar, predicated, register copies in turn */
        run1(ctx, cl, hw, op, &r->cand[0], &OPTS[1 + i % (NOPTS - 1)], co.seed + 9, c);
        for (int st = 1; st <= GS_MAX_STAGES; st++) {
            gs_etir e = r->cand[0];
            if (e.stages == st) continue;
            e.stages = (uint8_t)st;
            if (run1(ctx, cl, hw, op, &e, &OPTS[rot % NOPTS], co.seed + (uint64_t)st, c)) rot++;
        }
        gs_result_destroy(r);
        gs_op_destroy(op);
    }
    gs_device_close(cl);
    gs_ctx_destroy(ctx);
}

static const char *const HWS[] = {"h100", "t4", "a100"};
/* every class: gemm in its 4 transposes, bgemm, gemv, conv2d nchw/nhwc (3x3 and 1x1), depthwise, pools,
 * element-wise, row reductions */
static const char *const SPECS[] = {
    "gemm M=67 N=45 K=203",
    "gemm M=1 N=97 K=130 transA=1",
    "gemm M=33 N=17 K=77 transB=1 bias=1 relu=1",
    "gemm M=31 N=9 K=41 transA=1 transB=1 alpha=0.5 beta=0.25",
    "gemm M=64 N=72 K=96 bias=1",
    "bgemm B=3 M=19 N=40 K=71",
    "gemv M=37 N=129",
    "gemv M=5 N=333 transA=1 alpha=1.5 beta=0.5",
    "conv2d N=2 C=13 H=11 W=9 K=10 R=3 S=3 pad=1",
    "conv2d N=1 C=8 H=7 W=7 K=16 R=1 S=1 stride=2 layout=nhwc bias=1",
    "conv2d N=1 C=32 H=5 W=5 K=36 R=3 S=3 pad=1 layout=nhwc relu=1",
    "conv2d N=1 C=24 H=6 W=5 K=40 R=1 S=1 layout=nhwc bias=1 relu=1",
    "conv2d N=2 C=16 H=3 W=7 K=8 R=1 S=1",
    "dwconv2d N=1 C=17 H=9 W=13 R=3 S=3 pad=1 layout=nchw bias=1",
    "dwconv2d N=1 C=24 H=5 W=7 R=3 S=3 pad=1 layout=nhwc relu=1",
    "maxpool2d N=1 C=5 H=17 W=11 F=3 stride=2 pad=1 layout=nhwc",
    "maxpool2d N=2 C=3 H=7 W=9 F=2 stride=2",
    "avgpool2d N=1 C=5 H=17 W=11 F=3 stride=2 pad=1 layout=nhwc",
    "avgpool2d N=1 C=3 H=9 W=7 F=3 pad=1 count_include_pad=0",
    "relu M=1 N=1",
    "relu M=13 N=67",
    "add M=7 N=61",
    "mul M=5 N=40 bcast=1",
    "rowsum M=5 K=333",
    "rowmean M=1 K=4099",
    "rowmax M=3 K=1031",
};
#define NSPECS (int)(sizeof SPECS / sizeof SPECS[0])

static void every_class(const char *type) {
    tcount c = {0};
    run_specs(HWS, SPECS, NSPECS, type, &c);
    cr_log_info("types/%s: %d kernels, %d vector-copy inputs (%d of 8 halves), %d vector stores, %d cp.async, "
                "%d pipelined, %d scalar, %d predicated, %d with lanes, %d split-K, %d im2col",
                type, c.kernels, c.vec_copy, c.vec8_copy, c.vec_out, c.async, c.pipelined, c.scalar, c.predicated,
                c.lanes, c.splitk, c.im2col);
    cr_expect_geq(c.kernels, NSPECS + 10, "kernels ran: %d", c.kernels);
    cr_expect_geq(c.vec8_copy, 2, "16-byte copies of 8 halves ran: %d", c.vec8_copy);
    cr_expect_geq(c.vec_out, 2, "vector stores ran: %d", c.vec_out);
    cr_expect_geq(c.async, 2, "cp.async copies ran: %d", c.async);
    cr_expect_geq(c.scalar, 4, "scalar plans ran: %d", c.scalar);
    cr_expect_geq(c.predicated, 4, "predicated plans ran: %d", c.predicated);
}

Test(types, every_class_f16, .timeout = 1200) { every_class("f16"); }
Test(types, every_class_bf16, .timeout = 1200) { every_class("bf16"); }

/* Reduce lanes (within a warp and across warps), split-K (ordered and
 * atomic) and im2col (forced and off), on configured states. */
static void knob_paths(const char *type) {
    static const struct { const char *hw, *spec, *cfg; } cases[] = {
        {"h100", "gemv M=37 N=1029", "bm=4,bk=64,sa=1,sx=1"},
        {"a100", "rowsum M=7 K=1031", "bm=2,bk=32,sx=1"},
        {"h100", "rowmax M=3 K=777", "bm=4,bk=64,sx=0"},
        {"h100", "gemm M=29 N=37 K=301 bias=1 relu=1", "bm=16,bn=16,bk=16,tm=2,tn=2,vm=1,vn=1,sa=1,sb=1"},
        {"a100", "conv2d N=1 C=19 H=7 W=9 K=12 R=3 S=3 pad=1 bias=1", "bn=1,bk=4,bp=1,bq=8,bc=4,br=4,bs=4,tq=2,si=1,sf=1"},
    };
    gs_ctx *ctx = gs_ctx_create();
    gs_device *cl = open_cl(ctx);
    tcount c = {0};
    int rot = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        gs_op *op = parse_typed(ctx, cases[i].spec, type);
        const gs_hw *hw = gs_hw_find_builtin(cases[i].hw);
        gs_etir e0;
        cr_assert_eq(gs_etir_parse_config(ctx, op, cases[i].cfg, &e0), GS_OK, "%s: %s", op->spec, gs_ctx_errmsg(ctx));
        int ga = gs_etir_lanes_axis(op), sa = gs_etir_splitk_axis(op);
        for (int g = 0; g <= 7 && ga >= 0; g += 3) { /* 1, 8, 64 lanes */
            gs_etir e = e0;
            while (e.tile[ga].block < (1 << g) && e.tile[ga].block < gs_etir_max_tile(op, ga)) e.tile[ga].block *= 2;
            if (e.tile[ga].block < (1 << g)) continue;
            e.lanes_log2 = (uint8_t)g;
            e.stages = (uint8_t)(1 + (g + (int)i) % 3);
            run1(ctx, cl, hw, op, &e, &OPTS[rot++ % NOPTS], 40 + (uint64_t)g, &c);
        }
        for (int sk = 2; sk <= 5 && sa >= 0; sk += 3) {
            gs_etir e = e0;
            if (!gs_knob_ok(op, &e, GS_KNOB_SPLITK, sk)) continue;
            e.splitk = (uint8_t)sk;
            run1(ctx, cl, hw, op, &e, &OPTS[rot++ % NOPTS], 60 + (uint64_t)sk, &c);
            gs_plan_opts at = OPTS[0];
            at.split_atomic = op->combine != GS_COMBINE_MAX;
            run1(ctx, cl, hw, op, &e, &at, 70 + (uint64_t)sk, &c);
        }
        if (op->kind == GS_OPK_CONV2D)
            for (int m = GS_IM2COL_FORCE; m <= GS_IM2COL_OFF; m++) {
                gs_plan_opts o = OPTS[0];
                o.im2col = (uint8_t)m;
                run1(ctx, cl, hw, op, &e0, &o, 80 + (uint64_t)m, &c);
            }
        gs_op_destroy(op);
    }
    cr_log_info("types/%s knobs: %d kernels, %d with lanes, %d split-K, %d im2col", type, c.kernels, c.lanes, c.splitk,
                c.im2col);
    cr_expect_geq(c.lanes, 4, "reduce lanes ran: %d", c.lanes);
    cr_expect_geq(c.splitk, 4, "split-K ran: %d", c.splitk);
    cr_expect_geq(c.im2col, 1, "im2col tiles ran: %d", c.im2col);
    gs_device_close(cl);
    gs_ctx_destroy(ctx);
}

Test(types, knobs_f16, .timeout = 900) { knob_paths("f16"); }
Test(types, knobs_bf16, .timeout = 900) { knob_paths("bf16"); }

/* A plan made for rows that take 16-byte loads of 8 halves (K=64, N=64),
 * run on rows that do not (K=61, N=62: odd rows leave every other row only
 * 2-byte aligned): the run-time guards must send every tile to the scalar
 * path, and the result must still match. */
Test(types, aligned_plan_on_misaligned_halves, .timeout = 300) {
    gs_ctx *ctx = gs_ctx_create();
    gs_device *cl = open_cl(ctx);
    const gs_hw *hw = gs_hw_find_builtin("h100");
    const char *aligned[] = {"gemm M=64 N=64 K=64 dtype=f16", "gemm M=64 N=64 K=64 transA=1 bias=1 dtype=bf16"};
    const char *odd[] = {"gemm M=61 N=62 K=61 dtype=f16", "gemm M=59 N=63 K=61 transA=1 bias=1 dtype=bf16"};
    int vec8 = 0;
    for (int i = 0; i < 2; i++) {
        gs_op *a = NULL, *b = NULL;
        cr_assert_eq(gs_op_parse(ctx, aligned[i], &a), GS_OK, "%s", gs_ctx_errmsg(ctx));
        cr_assert_eq(gs_op_parse(ctx, odd[i], &b), GS_OK, "%s", gs_ctx_errmsg(ctx));
        gs_etir e;
        cr_assert(gs_etir_parse_config(ctx, a, "bm=32,bn=64,bk=32,tm=8,tn=8,vm=1,vn=1,sa=1,sb=1,stages=2", &e) == GS_OK,
                  "%s", gs_ctx_errmsg(ctx));
        gs_plan p;
        gs_plan_make(hw, a, &e, NULL, &p);
        for (int t = 0; t < a->ninputs; t++) vec8 += p.in[t].copy_vec == 8;
        vec8 += p.out_vec == 8;
        gs_diff d;
        cr_expect_eq(gs_verify_plan(ctx, cl, b, &e, &p, 11, &d), GS_OK, "plan of %s on %s: %s", aligned[i], odd[i],
                     gs_ctx_errmsg(ctx));
        cr_expect_eq(gs_verify_plan(ctx, cl, a, &e, &p, 11, &d), GS_OK, "plan of %s on itself: %s", aligned[i],
                     gs_ctx_errmsg(ctx));
        gs_op_destroy(a);
        gs_op_destroy(b);
    }
    cr_expect_geq(vec8, 3, "the aligned plans use 8-half vectors (%d decisions)", vec8);
    gs_device_close(cl);
    gs_ctx_destroy(ctx);
}

/* The printer's store rounds to nearest even: the same kernel with the
 * store's conversion swapped for truncation must fail the half-ulp check,
 * while the kernel as printed passes it exactly. */
static double run_src(gs_ctx *ctx, gs_device *cl, const gs_op *op, const gs_kernel_src *ks, const char *src,
                      int64_t *rounding) {
    gs_dev_prog prog;
    cr_assert_eq(gs_dev_prog_load(ctx, cl, src, ks->name, ks->smem_bytes, &prog), GS_OK, "%s", gs_ctx_errmsg(ctx));
    int64_t n[3] = {gs_tensor_elems(&op->tensors[0]), gs_tensor_elems(&op->tensors[1]), gs_tensor_elems(gs_op_out(op))};
    static float h[3][64 * 64], ref[64 * 64], y[64 * 64];
    gs_pcg32 r;
    gs_pcg32_seed(&r, 3, 4);
    gs_buffer *b[3];
    for (int t = 0; t < 3; t++) {
        gs_pcg32_fill_uniform(&r, h[t], n[t]);
        for (int64_t i = 0; i < n[t]; i++) h[t][i] = gs_dtype_round(GS_DTYPE_F16, h[t][i]);
        cr_assert_eq(gs_typed_buffer_create(ctx, cl, GS_DTYPE_F16, h[t], n[t], &b[t]), GS_OK, "%s", gs_ctx_errmsg(ctx));
    }
    cr_assert_eq(gs_dev_prog_launch(ctx, &prog, op, b, 3, NULL, (size_t)ks->grid, (size_t)ks->block, NULL), GS_OK, "%s",
                 gs_ctx_errmsg(ctx));
    uint16_t raw[64 * 64];
    cr_assert_eq(gs_buffer_read(ctx, b[2], raw, (size_t)n[2] * 2), GS_OK, "%s", gs_ctx_errmsg(ctx));
    gs_dtype_unpack(GS_DTYPE_F16, raw, y, n[2]);
    gs_op f = *op;
    f.dtype_out = GS_DTYPE_F32;
    const float *ins[2] = {h[0], h[1]};
    cr_assert_eq(gs_op_reference(ctx, &f, ins, NULL, ref), GS_OK);
    gs_diff d = {0};
    gs_diff_compute(y, ref, n[2], &d);
    gs_diff_round_check(y, ref, n[2], GS_DTYPE_F16, gs_verify_tolerance(&f) * d.ref_max, &d);
    *rounding = d.rounding;
    for (int t = 0; t < 3; t++) gs_buffer_destroy(b[t]);
    gs_dev_prog_free(&prog);
    return d.normwise;
}

Test(types, truncating_store_fails, .timeout = 300) {
    gs_ctx *ctx = gs_ctx_create();
    gs_device *cl = open_cl(ctx);
    gs_op *op = NULL;
    cr_assert_eq(gs_op_parse(ctx, "gemm M=48 N=40 K=56 dtype=f16", &op), GS_OK, "%s", gs_ctx_errmsg(ctx));
    gs_etir e;
    cr_assert(gs_etir_parse_config(ctx, op, "bm=16,bn=16,bk=8,tm=2,tn=2,vm=1,vn=1,sa=1,sb=1", &e) == GS_OK);
    gs_plan p;
    gs_plan_make(gs_hw_find_builtin("h100"), op, &e, NULL, &p);
    gs_kernel_src ks;
    cr_assert_eq(gs_lower_emit_plan(ctx, op, &e, &p, GS_DIALECT_OPENCL, 0, &ks), GS_OK, "%s", gs_ctx_errmsg(ctx));
    const char *def = "#define GS_F_OUT(y) gs_f2h(y)\n";
    char *at = strstr(ks.src, def);
    cr_assert(at, "the store's conversion macro is printed");
    /* truncation toward zero of the f32 value's top bits (normal range) */
    const char *bad = "#define GS_F_OUT(y) ((ushort)(((as_uint(y) >> 16) & 0x8000u) | ((((as_uint(y) >> 23) & 0xffu) - 112u) << 10) | ((as_uint(y) >> 13) & 0x3ffu)))\n";
    size_t pre = (size_t)(at - ks.src), len = strlen(ks.src);
    char *src2 = malloc(len + strlen(bad) + 1);
    memcpy(src2, ks.src, pre);
    strcpy(src2 + pre, bad);
    strcat(src2, at + strlen(def));
    int64_t ok_round = -1, bad_round = -1;
    double nw_ok = run_src(ctx, cl, op, &ks, ks.src, &ok_round);
    double nw_bad = run_src(ctx, cl, op, &ks, src2, &bad_round);
    cr_log_info("types/truncation: RNE store normwise %.3g, %lld off; truncating store normwise %.3g, %lld off", nw_ok,
                (long long)ok_round, nw_bad, (long long)bad_round);
    cr_expect_eq(ok_round, 0, "the printed store is RNE: %lld elements beyond half an ulp", (long long)ok_round);
    cr_expect_leq(nw_ok, gs_verify_tolerance(op));
    cr_expect_gt(bad_round, 100, "a truncating store is caught: %lld of %lld", (long long)bad_round, 48LL * 40);
    free(src2);
    gs_kernel_src_free(&ks);
    gs_op_destroy(op);
    gs_device_close(cl);
    gs_ctx_destroy(ctx);
}

/* math=tf32: gemm, bgemm and conv2d on PoCL through the plan paths against
 * the reference that rounds the inputs as the hardware does; and one
 * kernel's output against both references: it must match the TF32 one
 * and be farther than f32's tolerance from the plain f32 one (the rounding
 * is applied, not skipped). */
Test(types, tf32_paths, .timeout = 900) {
    static const char *const specs[] = {
        "gemm M=67 N=45 K=203 math=tf32",
        "gemm M=33 N=17 K=77 transA=1 transB=1 bias=1 relu=1 math=tf32",
        "bgemm B=3 M=19 N=40 K=71 math=tf32",
        "conv2d N=2 C=13 H=11 W=9 K=10 R=3 S=3 pad=1 math=tf32",
        "conv2d N=1 C=24 H=6 W=5 K=40 R=1 S=1 layout=nhwc bias=1 relu=1 math=tf32",
    };
    static const char *const hws[] = {"a100", "t4", "h100"};
    tcount c = {0};
    gs_ctx *ctx = gs_ctx_create();
    gs_device *cl = open_cl(ctx);
    int rot = 0;
    for (int i = 0; i < 5; i++) {
        gs_op *op = NULL;
        cr_assert_eq(gs_op_parse(ctx, specs[i], &op), GS_OK, "%s", gs_ctx_errmsg(ctx));
        const gs_hw *hw = gs_hw_find_builtin(hws[i % 3]);
        gs_construct_opts co;
        gs_construct_opts_default(&co);
        co.top_k = 1;
        gs_result *r = NULL;
        cr_assert_eq(gs_construct(ctx, op, hw, &co, &r), GS_OK, "%s", gs_ctx_errmsg(ctx));
        run1(ctx, cl, hw, op, &r->cand[0], &OPTS[0], 1, &c);
        for (int st = 1; st <= 3; st += 2) {
            gs_etir e = r->cand[0];
            e.stages = (uint8_t)st;
            run1(ctx, cl, hw, op, &e, &OPTS[rot++ % NOPTS], 2 + (uint64_t)st, &c);
        }
        gs_result_destroy(r);
        gs_op_destroy(op);
    }
    cr_expect_geq(c.kernels, 12, "tf32 kernels ran: %d", c.kernels);
    /* one kernel's output against both references */
    gs_op *op = NULL;
    cr_assert_eq(gs_op_parse(ctx, "gemm M=40 N=24 K=300 math=tf32", &op), GS_OK);
    gs_etir e;
    cr_assert(gs_etir_parse_config(ctx, op, "bm=8,bn=8,bk=16,tm=1,tn=1,vm=1,vn=1,sa=1,sb=1", &e) == GS_OK);
    gs_plan p;
    gs_plan_make(gs_hw_find_builtin("a100"), op, &e, NULL, &p);
    gs_kernel_src ks;
    cr_assert_eq(gs_lower_emit_plan(ctx, op, &e, &p, GS_DIALECT_OPENCL, 0, &ks), GS_OK, "%s", gs_ctx_errmsg(ctx));
    gs_dev_prog prog;
    cr_assert_eq(gs_dev_prog_load(ctx, cl, ks.src, ks.name, ks.smem_bytes, &prog), GS_OK, "%s", gs_ctx_errmsg(ctx));
    static float A[40 * 300], B[300 * 24], C[40 * 24], r32[40 * 24], rtf[40 * 24];
    gs_pcg32 g;
    gs_pcg32_seed(&g, 9, 9);
    gs_pcg32_fill_uniform(&g, A, 40 * 300);
    gs_pcg32_fill_uniform(&g, B, 300 * 24);
    gs_buffer *b[3];
    cr_assert_eq(gs_buffer_create(ctx, cl, sizeof A, A, &b[0]), GS_OK);
    cr_assert_eq(gs_buffer_create(ctx, cl, sizeof B, B, &b[1]), GS_OK);
    cr_assert_eq(gs_buffer_create(ctx, cl, sizeof C, NULL, &b[2]), GS_OK);
    cr_assert_eq(gs_dev_prog_launch(ctx, &prog, op, b, 3, NULL, (size_t)ks.grid, (size_t)ks.block, NULL), GS_OK, "%s",
                 gs_ctx_errmsg(ctx));
    cr_assert_eq(gs_buffer_read(ctx, b[2], C, sizeof C), GS_OK);
    const float *ins[2] = {A, B};
    cr_assert_eq(gs_op_reference(ctx, op, ins, NULL, rtf), GS_OK);
    gs_op plain = *op;
    plain.math = GS_MATH_F32;
    cr_assert_eq(gs_op_reference(ctx, &plain, ins, NULL, r32), GS_OK);
    gs_diff dt = {0}, d32 = {0};
    gs_diff_compute(C, rtf, 40 * 24, &dt);
    gs_diff_compute(C, r32, 40 * 24, &d32);
    cr_log_info("types/tf32: against the TF32 reference %.3g, against plain f32 %.3g (tol %.0e)", dt.normwise,
                d32.normwise, gs_verify_tolerance(op));
    cr_expect_leq(dt.normwise, gs_verify_tolerance(op));
    cr_expect_gt(d32.normwise, 10 * gs_verify_tolerance(op), "the kernel rounds its inputs to TF32");
    for (int t = 0; t < 3; t++) gs_buffer_destroy(b[t]);
    gs_dev_prog_free(&prog);
    gs_kernel_src_free(&ks);
    gs_op_destroy(op);
    gs_device_close(cl);
    gs_ctx_destroy(ctx);
}

/* The dispatcher with typed operators: a bf16 gemv and an f16 gemm with a
 * bias, dispatched and run on PoCL through the public API, the outputs
 * unpacked and compared with the reference; the f32 operator of the same
 * shape is another class (another kernel). */
Test(types, dispatch_typed, .timeout = 300) {
    gs_ctx *ctx = gs_ctx_create();
    gs_device *cl = open_cl(ctx);
    gs_dispatch_opts o;
    gs_dispatch_opts_default(&o);
    o.dialect = GS_DIALECT_OPENCL;
    o.cache_dir = "";
    gs_dispatcher *d = NULL;
    cr_assert_eq(gs_dispatcher_create(ctx, gs_hw_find_builtin("a100"), &o, &d), GS_OK, "%s", gs_ctx_errmsg(ctx));
    cr_assert_eq(gs_dispatcher_attach(ctx, d, cl), GS_OK, "%s", gs_ctx_errmsg(ctx));
    static const char *specs[] = {"gemv M=77 N=45 dtype=bf16", "gemm M=19 N=24 K=33 bias=1 relu=1 dtype=f16",
                                  "gemm M=19 N=24 K=33 bias=1 relu=1"};
    char names[3][64];
    for (int i = 0; i < 3; i++) {
        gs_op *op = NULL;
        cr_assert_eq(gs_op_parse(ctx, specs[i], &op), GS_OK, "%s", gs_ctx_errmsg(ctx));
        gs_kernel_handle h;
        cr_assert_eq(gs_dispatch(ctx, d, op, &h), GS_OK, "%s: %s", specs[i], gs_ctx_errmsg(ctx));
        snprintf(names[i], sizeof names[i], "%s", h.name);
        int nb = gs_op_num_buffers(op);
        float *host[4] = {0};
        gs_buffer *b[4] = {0};
        gs_pcg32 g;
        gs_pcg32_seed(&g, 5, (uint64_t)i);
        for (int k = 0; k < nb; k++) {
            int64_t n = gs_op_buffer_elems(op, k);
            host[k] = calloc((size_t)n, sizeof(float));
            gs_pcg32_fill_uniform(&g, host[k], n);
            for (int64_t j = 0; j < n; j++) host[k][j] = gs_dtype_round(gs_op_buffer_dtype(op, k), host[k][j]);
            cr_assert_eq(gs_typed_buffer_create(ctx, cl, gs_op_buffer_dtype(op, k), host[k], n, &b[k]), GS_OK);
        }
        cr_assert_eq(gs_dispatch_run(ctx, d, op, &h, b, nb, NULL), GS_OK, "%s: %s", specs[i], gs_ctx_errmsg(ctx));
        int oi = op->ninputs;
        int64_t on = gs_op_buffer_elems(op, oi);
        float *y = calloc((size_t)on, sizeof(float)), *ref = calloc((size_t)on, sizeof(float));
        size_t ob = (size_t)gs_op_buffer_bytes(op, oi);
        void *raw = malloc(ob);
        cr_assert_eq(gs_buffer_read(ctx, b[oi], raw, ob), GS_OK);
        gs_dtype_unpack(gs_op_buffer_dtype(op, oi), raw, y, on);
        gs_op f = *op;
        f.dtype_out = GS_DTYPE_F32;
        const float *ins[2] = {host[0], host[1]};
        cr_assert_eq(gs_op_reference(ctx, &f, ins, op->has_bias ? host[3] : NULL, ref), GS_OK);
        gs_diff df = {0};
        gs_diff_compute(y, ref, on, &df);
        gs_diff_round_check(y, ref, on, gs_op_buffer_dtype(op, oi), gs_verify_tolerance(&f) * df.ref_max, &df);
        cr_expect_leq(df.normwise, gs_verify_tolerance(op), "%s: normwise %.3g", specs[i], df.normwise);
        cr_expect_eq(df.rounding, 0, "%s: %lld outputs beyond half an ulp", specs[i], (long long)df.rounding);
        for (int k = 0; k < nb; k++) {
            gs_buffer_destroy(b[k]);
            free(host[k]);
        }
        free(raw);
        free(y);
        free(ref);
        gs_op_destroy(op);
    }
    cr_expect_str_neq(names[1], names[2], "f16 and f32 operators of one shape get different kernels");
    gs_dispatcher_destroy(d);
    gs_device_close(cl);
    gs_ctx_destroy(ctx);
}

/* An output type other than the inputs': bf16 in, f32 out (beta reads the
 * f32 output); f32 in, f16 out; f16 in, bf16 out (the bias in the inputs'
 * type, read as scalars). */
Test(types, mixed_types, .timeout = 900) {
    static const char *const specs[] = {
        "gemm M=67 N=45 K=203 bias=1 relu=1 beta=0.5",
        "rowmax M=5 K=333",
        "conv2d N=1 C=32 H=5 W=5 K=36 R=3 S=3 pad=1 layout=nhwc bias=1",
        "add M=7 N=64",
    };
    static const char *const types[] = {"bf16 out_dtype=f32", "f32 out_dtype=f16", "f16 out_dtype=bf16"};
    for (int k = 0; k < 3; k++) {
        tcount c = {0};
        run_specs(HWS, specs, 4, types[k], &c);
        cr_expect_geq(c.kernels, 6, "%s: kernels ran: %d", types[k], c.kernels);
    }
}

/* A bias of the inputs' type under an output of another type is read as
 * scalars (the plan's bias_vec is 1) while the output is still stored as
 * vectors: each component must add the bias at its own column. Configured
 * states whose stores are vectors along the bias's axis (even rows): the
 * FFMA core's 2- and 4-wide stores (gemm n, NHWC conv k) and the mma core's
 * C pairs. Old code read bias[x] for every component of the vector at x. */
Test(types, mixed_types_vector_store_bias, .timeout = 300) {
    static const struct { const char *spec, *cfg; } cases[] = {
        {"gemm M=45 N=28 K=71 bias=1 dtype=f16 out_dtype=bf16", "bm=32,bn=16,bk=16,tm=2,tn=2,vm=1,vn=1,sa=1,sb=1"},
        {"gemm M=45 N=28 K=71 bias=1 beta=0.25 dtype=f32 out_dtype=f16",
         "bm=32,bn=16,bk=16,tm=2,tn=4,vm=1,vn=1,sa=1,sb=1,stages=2"},
        {"conv2d N=1 C=32 H=5 W=5 K=36 R=3 S=3 pad=1 layout=nhwc bias=1 relu=1 dtype=bf16 out_dtype=f32",
         "bn=1,bp=4,bq=4,bk=16,bc=8,br=4,bs=4,tn=1,tp=1,tq=1,tk=4,vn=1,vp=1,vq=1,vk=1,si=1,sf=1"},
        {"gemm M=45 N=28 K=71 bias=1 beta=0.25 dtype=f16 out_dtype=bf16",
         "bm=32,bn=16,bk=16,tm=2,tn=2,vm=1,vn=1,sa=1,sb=1,mma=1,stages=2"},
        {"gemm M=37 N=20 K=40 bias=1 relu=1 dtype=bf16 out_dtype=f32",
         "bm=32,bn=16,bk=16,tm=2,tn=2,vm=1,vn=1,sa=1,sb=1,mma=2"},
    };
    gs_ctx *ctx = gs_ctx_create();
    gs_device *cl = open_cl(ctx);
    const gs_hw *hw = gs_hw_find_builtin("a100");
    tcount c = {0};
    int vec = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        gs_op *op = NULL;
        cr_assert_eq(gs_op_parse(ctx, cases[i].spec, &op), GS_OK, "%s: %s", cases[i].spec, gs_ctx_errmsg(ctx));
        gs_etir e;
        cr_assert_eq(gs_etir_parse_config(ctx, op, cases[i].cfg, &e), GS_OK, "%s: %s", op->spec, gs_ctx_errmsg(ctx));
        gs_plan p;
        gs_plan_make(hw, op, &e, NULL, &p);
        int bias_axis = -1;
        gs_epi_has(op, GS_EPI_ADD_BIAS, &bias_axis);
        vec += p.out_vec > 1 && p.bias_vec == 1 && p.out_axis == bias_axis;
        cr_expect(run1(ctx, cl, hw, op, &e, &OPTS[0], 17 + i, &c), "%s | %s passes the check", op->spec, cases[i].cfg);
        gs_op_destroy(op);
    }
    cr_expect_eq(c.kernels, 5, "kernels passed: %d", c.kernels);
    cr_expect_eq(vec, 5, "vector stores with a scalar bias along them: %d", vec);
    gs_device_close(cl);
    gs_ctx_destroy(ctx);
}

/* The CUDA printer's typed kernels compile with NVRTC for T4 (sm_75: bf16
 * only as storage and shifts, f16 through cvt), A100 (sm_80) and H100
 * (sm_90), with no spills: each class in f16 and bf16, a mixed-type
 * epilogue, and TF32 (the bit rounding before sm_80, cvt.rna after). The
 * whole paper suite on all 7 profiles is tests/nvrtc_types.sh. */
Test(types, nvrtc_compiles_typed, .timeout = 600) {
    gs_ctx *ctx = gs_ctx_create();
    gs_test_need_nvrtc(ctx, "typed kernels");
    static const char *const specs[] = {
        "gemm M=256 N=256 K=256 bias=1 relu=1 dtype=f16",
        "gemm M=256 N=256 K=256 transA=1 beta=0.5 dtype=bf16 out_dtype=f32",
        "conv2d N=8 C=64 H=28 W=28 K=64 R=3 S=3 pad=1 layout=nhwc relu=1 dtype=bf16",
        "dwconv2d N=8 C=64 H=28 W=28 R=3 S=3 pad=1 dtype=f16",
        "maxpool2d N=8 C=64 H=28 W=28 F=3 stride=2 pad=1 dtype=bf16",
        "gemv M=4096 N=4096 dtype=f16",
        "rowmax M=4096 K=1024 dtype=bf16",
        "add M=1024 N=1024 bcast=1 dtype=f16",
        "gemm M=256 N=256 K=256 math=tf32",
    };
    static const char *const hws[] = {"t4", "a100", "h100"};
    int ok = 0, ran = 0;
    for (int h = 0; h < 3; h++)
        for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++) {
            /* the sanitizer pass: every spec once, on one of the three profiles */
            if (!gs_test_case_runs((long)(i + 10 * h), 3)) continue;
            ran++;
            gs_op *op = NULL;
            cr_assert_eq(gs_op_parse(ctx, specs[i], &op), GS_OK, "%s", gs_ctx_errmsg(ctx));
            const gs_hw *hw = gs_hw_find_builtin(hws[h]);
            gs_construct_opts co;
            gs_construct_opts_default(&co);
            co.top_k = 1;
            gs_result *r = NULL;
            cr_assert_eq(gs_construct(ctx, op, hw, &co, &r), GS_OK, "%s", gs_ctx_errmsg(ctx));
            gs_kernel_src ks;
            cr_assert_eq(gs_lower_emit(ctx, hw, op, &r->cand[0], GS_DIALECT_CUDA, hw->sm, &ks), GS_OK, "%s",
                         gs_ctx_errmsg(ctx));
            gs_nvrtc_out nv;
            gs_status s = gs_nvrtc_compile(ctx, ks.src, ks.name, hw->sm, false, true, &nv);
            cr_expect_eq(s, GS_OK, "%s on %s: %s", specs[i], hws[h], gs_ctx_errmsg(ctx));
            if (s == GS_OK) {
                cr_expect_eq(nv.stats.spill_store_bytes + nv.stats.spill_load_bytes, 0, "%s on %s: %d registers, spills",
                             specs[i], hws[h], nv.stats.registers);
                ok++;
            }
            gs_nvrtc_out_free(&nv);
            gs_kernel_src_free(&ks);
            gs_result_destroy(r);
            gs_op_destroy(op);
        }
    cr_expect_eq(ok, ran, "compiled: %d of %d", ok, ran);
    cr_expect_eq(ran, getenv("GS_ASAN") ? 9 : 27, "cases run: %d", ran);
    gs_ctx_destroy(ctx);
}

/* Casts (clip without bounds from one type to another) and an element-wise
 * add on the special values, run on PoCL and compared word for word with
 * the host conversion: -0 and a negative f32 denormal stay negative zeros,
 * NaN stays NaN, infinities and overflow (65520 and up in f16) as the
 * conversion rounds, f16 subnormals kept. Old code started the accumulator
 * of an operator without reduce axes at +0, and +0 + -0 is +0: a Cast or an
 * Add of -0 gave +0. */
Test(types, casts_keep_special_values, .timeout = 300) {
    static const float v[24] = {NAN, -NAN, INFINITY, -INFINITY, -0.0f, 0.0f, 65519.0f, 65520.0f,
                                -65520.0f, 1e6f, 0x1p-24f, 0x1p-25f, 0x3p-26f, 1e-40f, -1e-45f, 1.0f + 0x1p-11f,
                                1.0f + 0x3p-11f, 3.4e38f, -0x1p-14f, -2.5f, 0x1.fep127f, 1.0f + 0x1p-8f, -1e-30f, 7.0f};
    static const char *const specs[] = {
        "clip M=1 N=24 dtype=f32 out_dtype=f16",  "clip M=1 N=24 dtype=f32 out_dtype=bf16",
        "clip M=1 N=24 dtype=f16 out_dtype=f32",  "clip M=1 N=24 dtype=bf16 out_dtype=f32",
        "clip M=1 N=24 dtype=f16 out_dtype=bf16", "clip M=1 N=24 dtype=bf16 out_dtype=f16",
        "add M=1 N=24 dtype=f16",                 "add M=3 N=8",
    };
    gs_ctx *ctx = gs_ctx_create();
    gs_device *cl = open_cl(ctx);
    gs_dispatch_opts o;
    gs_dispatch_opts_default(&o);
    o.dialect = GS_DIALECT_OPENCL;
    o.cache_dir = "";
    gs_dispatcher *d = NULL;
    cr_assert_eq(gs_dispatcher_create(ctx, gs_hw_find_builtin("h100"), &o, &d), GS_OK, "%s", gs_ctx_errmsg(ctx));
    cr_assert_eq(gs_dispatcher_attach(ctx, d, cl), GS_OK, "%s", gs_ctx_errmsg(ctx));
    for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++) {
        gs_op *op = NULL;
        cr_assert_eq(gs_op_parse(ctx, specs[i], &op), GS_OK, "%s", gs_ctx_errmsg(ctx));
        gs_kernel_handle h;
        cr_assert_eq(gs_dispatch(ctx, d, op, &h), GS_OK, "%s: %s", specs[i], gs_ctx_errmsg(ctx));
        int nb = gs_op_num_buffers(op), oi = op->ninputs;
        gs_dtype ti = gs_op_buffer_dtype(op, 0), to = gs_op_buffer_dtype(op, oi);
        gs_buffer *b[3] = {0};
        float zero[24] = {0}, x[24];
        for (int k = 0; k < 24; k++) x[k] = gs_dtype_round(ti, v[k]); /* the input as its type holds it */
        for (int k = 0; k < nb; k++)
            cr_assert_eq(gs_typed_buffer_create(ctx, cl, gs_op_buffer_dtype(op, k), k == oi ? zero : x, 24, &b[k]), GS_OK,
                         "%s", gs_ctx_errmsg(ctx));
        cr_assert_eq(gs_dispatch_run(ctx, d, op, &h, b, nb, NULL), GS_OK, "%s: %s", specs[i], gs_ctx_errmsg(ctx));
        uint32_t got[24] = {0}, want[24] = {0};
        float sum[24];
        cr_assert_eq(gs_buffer_read(ctx, b[oi], got, (size_t)gs_op_buffer_bytes(op, oi)), GS_OK);
        for (int k = 0; k < 24; k++) sum[k] = oi == 2 ? x[k] + x[k] : x[k];
        gs_dtype_pack(to, sum, want, 24);
        int bytes = gs_dtype_bytes(to);
        for (int k = 0; k < 24; k++) {
            uint32_t g = 0, w = 0;
            memcpy(&g, (const char *)got + k * bytes, (size_t)bytes);
            memcpy(&w, (const char *)want + k * bytes, (size_t)bytes);
            float gf, wf;
            gs_dtype_unpack(to, &g, &gf, 1);
            gs_dtype_unpack(to, &w, &wf, 1);
            cr_expect(g == w || (isnan(gf) && isnan(wf)), "%s: element %d (%a): 0x%x, want 0x%x", specs[i], k, (double)v[k],
                      g, w);
        }
        for (int k = 0; k < nb; k++) gs_buffer_destroy(b[k]);
        gs_op_destroy(op);
    }
    gs_dispatcher_destroy(d);
    gs_device_close(cl);
    gs_ctx_destroy(ctx);
}
