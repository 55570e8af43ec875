/* test_plans.c — every printer path of codegen v2 runs on PoCL and matches
 * the reference: the fast path and its fallbacks (scalar, predicated,
 * register copies instead of cp.async, the v1-style baseline), pipelines of
 * 1 to 4 stages (cp.async ring and register prefetch), block rasterisation,
 * batched copies, and a plan made for an aligned shape run on a shape whose
 * rows break the vector alignment (the run-time guard must take the scalar
 * path). Shapes are awkward: primes, 1, non-multiples of every tile.
 *
 * Each path is counted, and each test asserts that the paths it is about
 * ran: a variant that is skipped (not valid for the state) is never counted. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "construct/construct.h"
#include "kernels/service/service.h"
#include "test_common.h"

typedef struct pcase {
    const char *hw;
    const char *spec;
    const char *cfg; /* a configuration instead of the constructed top 2 */
} pcase;

/* Counts of the paths that ran and matched. */
typedef struct paths {
    int kernels, pipelined, async_ring, reg_prefetch, batched, raster, scalar, predicated, vec_copy, vec_out,
        transposed, tail_tiles, unstaged;
} paths;

static const gs_plan_opts OPTS[] = {
    {0, 0, 0, 0, 0, 0, 0}, /* the plan the library emits */
    {1, 0, 0, 0, 0, 0, 0}, /* scalar: no vectors, no transposition */
    {0, 1, 0, 0, 0, 0, 0}, /* predicated: no fast path */
    {0, 0, 1, 0, 0, 0, 0}, /* register copies where cp.async exists */
    {1, 1, 1, 1, 0, GS_IM2COL_OFF, 0}, /* the v1-style baseline (the tensor box, as v1) */
    {0, 0, 0, 0, 0, 0, 1}, /* the pipeline without fragment double buffering */
};
#define NOPTS (int)(sizeof OPTS / sizeof OPTS[0])

static void count(const gs_op *op, const gs_etir *e, const gs_plan *p, paths *c) {
    c->kernels++;
    if (p->stages > 1) c->pipelined++;
    if (p->stages > 1 && p->any_async) c->async_ring++;
    if (p->raster) c->raster++;
    if (p->opts.scalar) c->scalar++;
    if (!p->fast_path) c->predicated++;
    if (p->out_vec > 1) c->vec_out++;
    bool tail = false;
    for (int a = 0; a < op->naxes; a++)
        if (op->axes[a].kind != GS_AXIS_SPATIAL && op->axes[a].extent % e->tile[a].block) tail = true;
    if (tail) c->tail_tiles++;
    for (int t = 0; t < op->ninputs; t++) {
        const gs_plan_input *pi = &p->in[t];
        if (!pi->staged) {
            c->unstaged++;
            continue;
        }
        if (p->stages > 1 && pi->copy_mode == GS_COPY_REG) c->reg_prefetch++;
        if (pi->copy_batch < pi->units_per_thread) c->batched++;
        if (pi->copy_vec > 1) c->vec_copy++;
        if (pi->inner_dim != pi->copy_dim) c->transposed++;
    }
}

/* The OpenCL device (PoCL here); the test is skipped, saying why, without one. */
static gs_device *open_cl(gs_ctx *ctx) {
    gs_device *cl = NULL;
    gs_status s = gs_device_open(ctx, GS_BACKEND_OPENCL, 0, &cl);
    if (s == GS_ERR_OPENCL_MISSING) cr_skip_test("no OpenCL device (install pocl-opencl-icd): %s", gs_ctx_errmsg(ctx));
    cr_assert_eq(s, GS_OK, "%s", gs_ctx_errmsg(ctx));
    return cl;
}

/* Run one (state, options) pair; returns false when the variant does not
 * fit the profile (not run, not counted). */
static bool run_variant(gs_ctx *ctx, gs_device *cl, const gs_hw *hw, const gs_op *op, const gs_etir *e,
                        const gs_plan_opts *o, uint64_t seed, const char *what, paths *c) {
    if (!gs_hw_check(hw, op, e)) return false;
    gs_plan p;
    gs_plan_make(hw, op, e, o, &p);
    gs_diff d;
    gs_status s = gs_verify_plan(ctx, cl, op, e, &p, seed, &d);
    char desc[256];
    gs_etir_format(op, e, desc, sizeof desc);
    cr_expect_eq(s, GS_OK, "%s on %s (%s) opts %d%d%d%d: %s", op->spec, hw->name, desc, o->scalar, o->predicated,
                 o->no_async, o->min_blocks1, gs_ctx_errmsg(ctx));
    cr_expect(d.normwise <= d.tol, "%s on %s (%s) %s: normwise %.3g", op->spec, hw->name, desc, what, d.normwise);
    if (s == GS_OK) count(op, e, &p, c);
    return true;
}

/* For each case: the constructed top candidates, then each with stages 1..4
 * and a raster group, under the option sets in rotation. */
static void run_cases(const pcase *cases, int n, paths *c) {
    gs_ctx *ctx = gs_ctx_create();
    gs_device *cl = open_cl(ctx);
    int rot = 0;
    for (int i = 0; i < n; i++) {
        gs_op *op = NULL;
        gs_hw *hw = NULL;
        gs_result *r = NULL;
        cr_assert_eq(gs_op_parse(ctx, cases[i].spec, &op), GS_OK, "%s: %s", cases[i].spec, gs_ctx_errmsg(ctx));
        cr_assert_eq(gs_hw_load(ctx, cases[i].hw, &hw), GS_OK, "%s", gs_ctx_errmsg(ctx));
        gs_construct_opts co;
        gs_construct_opts_default(&co);
        co.seed = (uint64_t)i + 1;
        co.top_k = 2;
        gs_etir cfg;
        int ncand = 1;
        if (cases[i].cfg)
            cr_assert_eq(gs_etir_parse_config(ctx, op, cases[i].cfg, &cfg), GS_OK, "%s", gs_ctx_errmsg(ctx));
        else {
            cr_assert_eq(gs_construct(ctx, op, hw, &co, &r), GS_OK, "%s: %s", cases[i].spec, gs_ctx_errmsg(ctx));
            ncand = r->n;
        }
        for (int k = 0; k < ncand; k++) {
            const gs_etir *e0 = r ? &r->cand[k] : &cfg;
            /* the candidate as constructed, with the library's plan */
            run_variant(ctx, cl, hw, op, e0, &OPTS[0], co.seed, "as constructed", c);
            for (int st = 1; st <= GS_MAX_STAGES; st++) {
                gs_etir e = *e0;
                e.stages = (uint8_t)st;
                e.raster = (uint8_t)((st + k) % 3 == 0 ? 1 + (i % 2) : 0);
                if (e.stages == e0->stages && e.raster == e0->raster) continue;
                const gs_plan_opts *o = &OPTS[rot % NOPTS];
                if (run_variant(ctx, cl, hw, op, &e, o, co.seed + (uint64_t)st, "variant", c)) rot++;
                else if (e.raster) { /* the raster may not fit: try the stages alone */
                    e.raster = 0;
                    if (run_variant(ctx, cl, hw, op, &e, o, co.seed + (uint64_t)st, "variant", c)) rot++;
                }
            }
        }
        gs_result_destroy(r);
        gs_hw_destroy(hw);
        gs_op_destroy(op);
    }
    gs_device_close(cl);
    gs_ctx_destroy(ctx);
}

static const pcase MATMUL[] = {
    {"h100", "gemm M=67 N=45 K=203", NULL},
    {"h100", "gemm M=1 N=97 K=130 transA=1", NULL},
    {"t4", "gemm M=33 N=17 K=77 transB=1 bias=1 relu=1", NULL},
    {"a100", "gemm M=64 N=64 K=160 alpha=0.5 beta=0.25", NULL},
    {"a100", "bgemm B=3 M=19 N=40 K=71", NULL},
    {"v100", "gemv M=37 N=129", NULL},
    /* thread runs of 4 along m: A transposed in shared memory, read as float4 */
    {"h100", "gemm M=67 N=45 K=203", "bm=32,bn=32,bk=16,tm=4,tn=4,vm=1,vn=1,sa=1,sb=1"},
    {"t4", "gemm M=30 N=66 K=97 bias=1", "bm=32,bn=64,bk=8,tm=4,tn=4,vm=2,vn=1,sa=1,sb=1"},
};

static const pcase CONV[] = {
    {"h100", "conv2d N=2 C=13 H=11 W=9 K=10 R=3 S=3 pad=1", NULL},
    {"v100", "conv2d N=1 C=8 H=7 W=7 K=16 R=1 S=1 stride=2 layout=nhwc bias=1", NULL},
    {"a100", "conv2d N=1 C=32 H=5 W=5 K=36 R=3 S=3 pad=1 layout=nhwc relu=1", NULL},
    {"rtx3090", "dwconv2d N=1 C=17 H=9 W=13 R=3 S=3 pad=1 layout=nchw bias=1", NULL},
    {"h100", "avgpool2d N=1 C=5 H=17 W=11 F=3 stride=2 pad=1 layout=nhwc", NULL},
};

static const pcase REDUCE[] = {
    {"h100", "rowsum M=5 K=333", NULL},
    {"t4", "rowmax M=3 K=1031", NULL},
    {"a100", "rowmean M=1 K=4099", NULL},
    {"h100", "add M=7 N=61", NULL},
    {"rtx4090", "relu M=1 N=1", NULL},
};

Test(plans, matmul_paths, .timeout = 900) {
    paths c = {0};
    run_cases(MATMUL, (int)(sizeof MATMUL / sizeof MATMUL[0]), &c);
    cr_log_info("plans/matmul: %d kernels, %d pipelined (%d cp.async, %d register-prefetch inputs), %d raster, "
                "%d scalar, %d predicated, %d vector-copy inputs, %d transposed, %d with tail tiles",
                c.kernels, c.pipelined, c.async_ring, c.reg_prefetch, c.raster, c.scalar, c.predicated, c.vec_copy,
                c.transposed, c.tail_tiles);
    cr_expect_geq(c.async_ring, 3, "cp.async pipelines ran: %d", c.async_ring);
    cr_expect_geq(c.reg_prefetch, 3, "register-prefetch pipelines ran: %d", c.reg_prefetch);
    cr_expect_geq(c.raster, 2, "rasterised grids ran: %d", c.raster);
    cr_expect_geq(c.scalar, 2, "scalar plans ran: %d", c.scalar);
    cr_expect_geq(c.predicated, 2, "predicated plans ran: %d", c.predicated);
    cr_expect_geq(c.vec_copy, 4, "vector copies ran: %d", c.vec_copy);
    cr_expect_geq(c.vec_out, 2, "vector output stores ran: %d", c.vec_out);
    cr_expect_geq(c.transposed, 1, "transposed shared layouts ran: %d", c.transposed);
    cr_expect_geq(c.tail_tiles, 4, "partial reduce tiles ran: %d", c.tail_tiles);
}

Test(plans, conv_pool_paths, .timeout = 900) {
    paths c = {0};
    run_cases(CONV, (int)(sizeof CONV / sizeof CONV[0]), &c);
    cr_log_info("plans/conv: %d kernels, %d pipelined (%d cp.async), %d raster, %d batched copies, %d unstaged", c.kernels,
                c.pipelined, c.async_ring, c.raster, c.batched, c.unstaged);
    cr_expect_geq(c.pipelined, 3, "pipelines ran: %d", c.pipelined);
    cr_expect_geq(c.predicated, 1, "predicated plans ran: %d", c.predicated);
    cr_expect_geq(c.kernels, 15, "kernels ran: %d", c.kernels);
}

Test(plans, reduce_eltwise_paths, .timeout = 900) {
    paths c = {0};
    run_cases(REDUCE, (int)(sizeof REDUCE / sizeof REDUCE[0]), &c);
    cr_log_info("plans/reduce: %d kernels, %d pipelined, %d batched copies", c.kernels, c.pipelined, c.batched);
    cr_expect_geq(c.kernels, 10, "kernels ran: %d", c.kernels);
    cr_expect_geq(c.tail_tiles, 2, "partial reduce tiles ran: %d", c.tail_tiles);
}

/* A single-stage copy with more units per thread than one batch holds runs
 * as a loop over batches; its remainder batch is partly beyond the tile. */
Test(plans, batched_copy_with_remainder, .timeout = 300) {
    gs_ctx *ctx = gs_ctx_create();
    gs_device *cl = open_cl(ctx);
    gs_op *op = NULL;
    const gs_hw *hw = gs_hw_find_builtin("h100");
    cr_assert_eq(gs_op_parse(ctx, "gemm M=45 N=29 K=131", &op), GS_OK, "%s", gs_ctx_errmsg(ctx));
    /* 32x64 A tile and 64x32 B tile moved by 16 threads, scalar copies:
     * 128 units per thread, batches of 16 */
    gs_etir e;
    cr_assert(gs_etir_parse_config(ctx, op, "bm=32,bn=32,bk=64,tm=8,tn=8,vm=1,vn=1,sa=1,sb=1", &e) == GS_OK, "%s",
              gs_ctx_errmsg(ctx));
    paths c = {0};
    for (int o = 0; o < 3; o++) run_variant(ctx, cl, hw, op, &e, &OPTS[o], 7, "batched", &c);
    cr_expect_geq(c.batched, 4, "batched copies ran: %d", c.batched);
    gs_op_destroy(op);
    gs_device_close(cl);
    gs_ctx_destroy(ctx);
}

/* A plan made for rows that take 16-byte loads (K=64, N=64), emitted for and
 * run on rows that do not (K=61, N=62): the run-time guards must send every
 * tile to the scalar path, and the result must still match. */
Test(plans, aligned_plan_on_misaligned_rows, .timeout = 300) {
    gs_ctx *ctx = gs_ctx_create();
    gs_device *cl = open_cl(ctx);
    const gs_hw *hw = gs_hw_find_builtin("h100");
    const char *aligned[] = {"gemm M=64 N=64 K=64", "gemm M=64 N=64 K=64 transA=1 bias=1"};
    const char *odd[] = {"gemm M=61 N=62 K=61", "gemm M=59 N=62 K=61 transA=1 bias=1"};
    int vec = 0;
    for (int i = 0; i < 2; i++) {
        gs_op *a = NULL, *b = NULL;
        cr_assert_eq(gs_op_parse(ctx, aligned[i], &a), GS_OK, "%s", gs_ctx_errmsg(ctx));
        cr_assert_eq(gs_op_parse(ctx, odd[i], &b), GS_OK, "%s", gs_ctx_errmsg(ctx));
        gs_etir e;
        cr_assert(gs_etir_parse_config(ctx, a, "bm=32,bn=32,bk=16,tm=4,tn=4,vm=1,vn=1,sa=1,sb=1,stages=2", &e) == GS_OK,
                  "%s", gs_ctx_errmsg(ctx));
        gs_plan p;
        gs_plan_make(hw, a, &e, NULL, &p);
        for (int t = 0; t < a->ninputs; t++) vec += p.in[t].copy_vec > 1;
        vec += p.out_vec > 1;
        gs_diff d;
        gs_status s = gs_verify_plan(ctx, cl, b, &e, &p, 11, &d);
        cr_expect_eq(s, GS_OK, "plan of %s on %s: %s", aligned[i], odd[i], gs_ctx_errmsg(ctx));
        s = gs_verify_plan(ctx, cl, a, &e, &p, 11, &d);
        cr_expect_eq(s, GS_OK, "plan of %s on itself: %s", aligned[i], gs_ctx_errmsg(ctx));
        gs_op_destroy(a);
        gs_op_destroy(b);
    }
    cr_expect_geq(vec, 4, "the aligned plans use vectors (%d vector decisions)", vec);
    gs_device_close(cl);
    gs_ctx_destroy(ctx);
}

/* A case of the split sweeps: profile, operator and starting configuration. */
typedef struct split_case {
    const char *hw, *spec, *cfg;
} split_case;

/* Parse a case's operator (caller destroys it) and configuration. */
static gs_op *load_case(gs_ctx *ctx, const split_case *sc, gs_etir *e0) {
    gs_op *op = NULL;
    cr_assert_eq(gs_op_parse(ctx, sc->spec, &op), GS_OK, "%s: %s", sc->spec, gs_ctx_errmsg(ctx));
    cr_assert_eq(gs_etir_parse_config(ctx, op, sc->cfg, e0), GS_OK, "%s: %s", sc->spec, gs_ctx_errmsg(ctx));
    return op;
}

/* A sweep over cases: the context and device, what ran, and counters the
 * test's body keeps (n[0..5]). */
typedef struct sweep {
    gs_ctx *ctx;
    gs_device *cl;
    paths c;
    int rot, n[6];
} sweep;
/* The body run on case i: its operator, profile and configured state. */
typedef void (*sweep_fn)(sweep *w, size_t i, const split_case *sc, gs_op *op, const gs_hw *hw, const gs_etir *e0);

/* Open the device, run fn on every case, close; the counters are left in *w. */
static void sweep_run(const split_case *cases, size_t n, sweep_fn fn, sweep *w) {
    memset(w, 0, sizeof *w);
    w->ctx = gs_ctx_create();
    w->cl = open_cl(w->ctx);
    for (size_t i = 0; i < n; i++) {
        gs_etir e0;
        gs_op *op = load_case(w->ctx, &cases[i], &e0);
        fn(w, i, &cases[i], op, gs_hw_find_builtin(cases[i].hw), &e0);
        gs_op_destroy(op);
    }
    gs_device_close(w->cl);
    gs_ctx_destroy(w->ctx);
}

/* The reduce split (group): every lane count from 1 to the block's threads
 * (1024; past 32 the combine crosses warps through shared memory) on
 * reductions of non-power-of-two length, with the library's plan and its fallbacks, one
 * and several stages; sums, maxima, means, gemv, gemm, batched gemm and a
 * convolution (whose last reduce axis is the filter width). */
/* n[0]: kernels with a reduce split, n[1]: across warps */
static void group_case(sweep *w, size_t i, const split_case *sc, gs_op *op, const gs_hw *hw, const gs_etir *e0) {
    (void)sc;
    int ga = gs_etir_lanes_axis(op);
    cr_assert_geq(ga, 0);
    for (int g = 0; g <= GS_MAX_LANES; g++) {
        gs_etir e = *e0;
        while (e.tile[ga].block < (1 << g) && e.tile[ga].block < gs_etir_max_tile(op, ga)) e.tile[ga].block *= 2;
        if (e.tile[ga].block < (1 << g)) continue; /* the axis is too short for this split */
        e.lanes_log2 = (uint8_t)g;
        e.stages = (uint8_t)(1 + (g + (int)i) % 3);
        const gs_plan_opts *o = &OPTS[w->rot++ % 3];
        if (run_variant(w->ctx, w->cl, hw, op, &e, o, 100 + (uint64_t)g, "group", &w->c)) {
            w->n[0] += g > 0;
            w->n[1] += (1 << g) > GS_LANES_WARP;
        }
    }
}

Test(plans, group_every_split, .timeout = 900) {
    static const split_case cases[] = {
        {"h100", "gemv M=37 N=1029", "bm=4,bk=64,sa=1,sx=1"},
        {"t4", "gemv M=5 N=333 transA=1 alpha=1.5 beta=0.5", "bm=4,bk=32,sa=1,sx=1"},
        {"a100", "rowsum M=7 K=1031", "bm=2,bk=32,sx=1"},
        {"h100", "rowmax M=3 K=777", "bm=4,bk=64,sx=0"},
        {"rtx3090", "rowmean M=9 K=100", "bm=8,bk=32,sx=1"},
        {"h100", "gemm M=13 N=21 K=515 bias=1 relu=1", "bm=8,bn=8,bk=32,tm=2,tn=2,sa=1,sb=1"},
        {"a100", "bgemm B=2 M=5 N=7 K=301", "bb=1,bm=4,bn=8,bk=32,tn=2,sa=1,sb=0"},
        {"h100", "conv2d N=1 C=3 H=9 W=11 K=5 R=3 S=5 pad=2 layout=nhwc", "bn=1,bk=4,bp=2,bq=4,bc=4,br=2,bs=8,si=1,sf=1"},
    };
    sweep w;
    sweep_run(cases, sizeof cases / sizeof cases[0], group_case, &w);
    cr_log_info("plans/group: %d kernels, %d with a reduce split, %d across warps", w.c.kernels, w.n[0], w.n[1]);
    cr_expect_geq(w.n[0], 30, "reduce splits ran: %d", w.n[0]);
    cr_expect_geq(w.n[1], 8, "reduce splits across warps ran: %d", w.n[1]);
}

/* A four-stage pipeline whose copies run in batches (a dilated depthwise
 * window: 5 units per thread, batches of 4). With the prologue printed as
 * three copies, PoCL's LLVM compiled it for more than ten minutes; the
 * prologue is a loop now. Found by tests/fuzz_plans.py (branch fuzz). */
Test(plans, deep_pipeline_batched_prologue, .timeout = 120) {
    gs_ctx *ctx = gs_ctx_create();
    gs_device *cl = open_cl(ctx);
    gs_op *op = NULL;
    const char *spec = "dwconv2d N=1 C=4 H=19 W=33 R=4 S=4 stride=2 dilh=3 dilw=2 pad_right=2 layout=nhwc";
    cr_assert_eq(gs_op_parse(ctx, spec, &op), GS_OK, "%s", gs_ctx_errmsg(ctx));
    gs_etir e;
    cr_assert_eq(gs_etir_parse_config(ctx, op, "bn=1,bp=1,bq=8,bc=4,br=4,bs=1,si=1,sf=1,stages=4", &e), GS_OK, "%s",
                 gs_ctx_errmsg(ctx));
    const gs_hw *hw = gs_hw_find_builtin("h100");
    /* the tensor box, as when the defect was found (the im2col tile of this
     * strided window is smaller, and its copy no longer runs in batches) */
    const gs_plan_opts box = {.im2col = GS_IM2COL_OFF};
    gs_plan p;
    gs_plan_make(hw, op, &e, &box, &p);
    cr_assert(p.stages == 4 && p.in[0].copy_batch < p.in[0].units_per_thread, "the plan lost its batched copy");
    paths c = {0};
    cr_expect(run_variant(ctx, cl, hw, op, &e, &box, 3, "deep pipeline", &c), "the state does not fit h100");
    gs_op_destroy(op);
    gs_device_close(cl);
    gs_ctx_destroy(ctx);
}

/* Split-K: every factor 1..16 on reductions whose tile count none of them
 * divides, with epilogues (alpha, beta, bias, relu), a reduce split inside
 * the blocks and several stages; the ordered mode (verify runs each kernel
 * twice and requires the same bits, and the counters back at zero) and the
 * atomic one (sums only). */
/* n[0]: ordered split-K kernels, n[1]: atomic ones */
static void splitk_case(sweep *w, size_t i, const split_case *sc, gs_op *op, const gs_hw *hw, const gs_etir *e0) {
    int sa = gs_etir_splitk_axis(op);
    cr_assert_geq(sa, 0);
    int ran = 0;
    for (int s = 1; s <= GS_MAX_SPLITK; s++) {
        gs_etir e = *e0;
        e.splitk = (uint8_t)s;
        /* shorter tiles until every split block has a run */
        while (!gs_etir_wellformed(op, &e) && e.tile[sa].block > 1) {
            e.tile[sa].block /= 2;
            if (sa == gs_etir_lanes_axis(op) && (1 << e.lanes_log2) > e.tile[sa].block) e.lanes_log2--;
        }
        cr_assert(gs_etir_wellformed(op, &e), "%s: no tile admits split %d", sc->spec, s);
        int64_t per, all = gs_etir_splitk_tiles(op, &e, &per);
        cr_expect(s == 1 || all % s != 0 || op->axes[sa].extent % e.tile[sa].block != 0, "%s split %d: a divisible case",
                  sc->spec, s);
        e.stages = (uint8_t)(1 + (s + (int)i) % 3);
        gs_plan_opts o = OPTS[w->rot++ % 3];
        if (run_variant(w->ctx, w->cl, hw, op, &e, &o, 200 + (uint64_t)s, "split-K", &w->c)) {
            ran++;
            w->n[0] += s > 1;
        } else {
            char f[256];
            gs_etir_format(op, &e, f, sizeof f);
            cr_log_info("plans/splitk: %s on %s: %s exceeds the profile", sc->spec, sc->hw, f);
        }
        if (s > 1 && s % 3 == 1 && op->combine != GS_COMBINE_MAX) { /* 4, 7, 10, 13, 16: atomics too */
            o.split_atomic = 1;
            w->n[1] += run_variant(w->ctx, w->cl, hw, op, &e, &o, 300 + (uint64_t)s, "split-K atomic", &w->c);
        }
    }
    cr_expect_geq(ran, 12, "%s: %d split factors ran", sc->spec, ran);
}

Test(plans, splitk_every_factor, .timeout = 900) {
    static const split_case cases[] = {
        {"h100", "gemm M=13 N=21 K=515 alpha=1.5 beta=0.5 bias=1 relu=1", "bm=8,bn=8,bk=16,tm=2,tn=2,sa=1,sb=1"},
        {"a100", "bgemm B=2 M=5 N=7 K=301", "bb=1,bm=4,bn=8,bk=8,tn=2,sa=1,sb=0,group=2"},
        {"h100", "gemv M=37 N=1029 transA=1", "bm=4,bk=16,sa=1,sx=1"},
        {"a100", "rowmax M=3 K=777", "bm=4,bk=16,sx=1"},
        {"h100", "conv2d N=1 C=37 H=5 W=6 K=3 R=3 S=2 stride=2 dilation=2 pad=1 layout=nhwc", "bn=1,bk=4,bp=2,bq=4,bc=2,br=4,bs=2,si=1,sf=1"},
    };
    sweep w;
    sweep_run(cases, sizeof cases / sizeof cases[0], splitk_case, &w);
    cr_log_info("plans/splitk: %d kernels, %d ordered split-K, %d atomic", w.c.kernels, w.n[0], w.n[1]);
    cr_expect_geq(w.n[0], 60, "ordered split-K kernels: %d", w.n[0]);
    cr_expect_geq(w.n[1], 12, "atomic split-K kernels: %d", w.n[1]);
}

/* Implicit GEMM for 1x1 convolutions: the matmul form computes the same
 * outputs as the convolution (the interpreter, same inputs, bitwise), and
 * its constructed kernels pass on PoCL, in both layouts, with awkward
 * extents and an epilogue; a strided or padded or 3x3 one is refused. */
Test(plans, conv1x1_as_matmul, .timeout = 300) {
    static const char *specs[] = {
        "conv2d N=3 C=37 H=5 W=7 K=13 R=1 S=1 layout=nhwc bias=1 relu=1",
        "conv2d N=2 C=19 H=3 W=11 K=5 R=1 S=1 layout=nchw bias=1",
        "conv2d N=1 C=64 H=7 W=7 K=33 R=1 S=1 layout=nchw relu=1",
    };
    gs_ctx *ctx = gs_ctx_create();
    gs_device *cl = open_cl(ctx);
    const gs_hw *hw = gs_hw_find_builtin("h100");
    for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++) {
        gs_op conv, mm;
        cr_assert_eq(gs_op_parse_into(ctx, specs[i], &conv), GS_OK, "%s", gs_ctx_errmsg(ctx));
        cr_assert_eq(gs_op_conv1x1_as_matmul(ctx, &conv, &mm), GS_OK, "%s: %s", specs[i], gs_ctx_errmsg(ctx));
        cr_assert_eq(gs_tensor_elems(gs_op_out(&mm)), gs_tensor_elems(gs_op_out(&conv)));
        float *buf[GS_MAX_TENSORS], *bias = NULL, *r1, *r2;
        gs_pcg32 rng;
        gs_pcg32_seed(&rng, 7 + i, 1);
        for (int t = 0; t < 2; t++) {
            int64_t n = gs_tensor_elems(&conv.tensors[t]);
            cr_assert_eq(n, gs_tensor_elems(&mm.tensors[t]), "%s: tensor %d sizes differ", specs[i], t);
            buf[t] = malloc((size_t)n * 4);
            for (int64_t j = 0; j < n; j++) buf[t][j] = (float)gs_pcg32_double(&rng) - 0.5f;
        }
        if (conv.has_bias) {
            int64_t n = conv.axes[conv.epi.bias_axis].extent;
            bias = malloc((size_t)n * 4);
            for (int64_t j = 0; j < n; j++) bias[j] = (float)gs_pcg32_double(&rng);
        }
        int64_t on = gs_tensor_elems(gs_op_out(&conv));
        r1 = calloc((size_t)on, 4);
        r2 = calloc((size_t)on, 4);
        const float *ins[2] = {buf[0], buf[1]};
        cr_assert_eq(gs_op_reference(ctx, &conv, ins, bias, r1), GS_OK, "%s", gs_ctx_errmsg(ctx));
        cr_assert_eq(gs_op_reference(ctx, &mm, ins, bias, r2), GS_OK, "%s", gs_ctx_errmsg(ctx));
        cr_expect_eq(memcmp(r1, r2, (size_t)on * 4), 0, "%s: the matmul form computes other values", specs[i]);
        gs_construct_opts co;
        gs_construct_opts_default(&co);
        co.top_k = 2;
        gs_result *r = NULL;
        cr_assert_eq(gs_construct(ctx, &mm, hw, &co, &r), GS_OK, "%s", gs_ctx_errmsg(ctx));
        for (int c = 0; c < r->n; c++) {
            gs_diff d;
            cr_expect_eq(gs_verify(ctx, cl, hw, &mm, &r->cand[c], 11 + (uint64_t)c, &d), GS_OK, "%s (%s): %s",
                         mm.spec, r->desc[c], gs_ctx_errmsg(ctx));
        }
        gs_result_destroy(r);
        free(buf[0]);
        free(buf[1]);
        free(bias);
        free(r1);
        free(r2);
    }
    /* gs_construct's choice (GS_FORM_AUTO): the form it keeps predicts no
     * slower than either form alone, its candidates are states of that form
     * (r->op) and pass; the default (GS_FORM_DIRECT) keeps the conv */
    int kept_matmul = 0;
    for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++) {
        gs_op conv, mm;
        cr_assert_eq(gs_op_parse_into(ctx, specs[i], &conv), GS_OK, "%s", gs_ctx_errmsg(ctx));
        cr_assert_eq(gs_op_conv1x1_as_matmul(ctx, &conv, &mm), GS_OK, "%s", gs_ctx_errmsg(ctx));
        gs_construct_opts co;
        gs_construct_opts_default(&co);
        co.top_k = 2;
        gs_result *direct = NULL, *matmul = NULL, *chosen = NULL;
        cr_assert_eq(gs_construct(ctx, &conv, hw, &co, &direct), GS_OK, "%s", gs_ctx_errmsg(ctx));
        cr_assert_eq(gs_construct(ctx, &mm, hw, &co, &matmul), GS_OK, "%s", gs_ctx_errmsg(ctx));
        cr_expect_str_eq(gs_result_form(direct), conv.spec, "the default changed the form");
        co.conv_form = GS_FORM_AUTO;
        cr_assert_eq(gs_construct(ctx, &conv, hw, &co, &chosen), GS_OK, "%s", gs_ctx_errmsg(ctx));
        double best = fmin(gs_result_predicted_s(direct, 0), gs_result_predicted_s(matmul, 0));
        cr_expect_eq(gs_result_predicted_s(chosen, 0), best, "%s: kept %s at %g s, the best form is %g s", specs[i],
                     gs_result_form(chosen), gs_result_predicted_s(chosen, 0), best);
        bool is_mm = !strcmp(gs_result_form(chosen), mm.spec);
        cr_expect(is_mm || !strcmp(gs_result_form(chosen), conv.spec), "%s: form %s", specs[i], gs_result_form(chosen));
        kept_matmul += is_mm;
        for (int c = 0; c < chosen->n; c++) {
            gs_diff d;
            cr_expect_eq(gs_verify(ctx, cl, hw, &chosen->op, &chosen->cand[c], 21 + (uint64_t)c, &d), GS_OK,
                         "%s as %s (%s): %s", specs[i], gs_result_form(chosen), chosen->desc[c], gs_ctx_errmsg(ctx));
        }
        gs_result_destroy(direct);
        gs_result_destroy(matmul);
        gs_result_destroy(chosen);
    }
    cr_log_info("plans/conv1x1: gs_construct kept the matmul form for %d of %zu", kept_matmul,
                sizeof specs / sizeof specs[0]);
    {
        gs_op conv;
        cr_assert_eq(gs_op_parse_into(ctx, specs[0], &conv), GS_OK, "%s", gs_ctx_errmsg(ctx));
        gs_construct_opts co;
        gs_construct_opts_default(&co);
        co.conv_form = (gs_conv_form)7;
        gs_result *r = NULL;
        cr_expect_eq(gs_construct(ctx, &conv, hw, &co, &r), GS_ERR_INVALID_ARG);
    }
    static const char *refused[] = {
        "conv2d N=1 C=4 H=5 W=5 K=3 R=1 S=1 stride=2",
        "conv2d N=1 C=4 H=5 W=5 K=3 R=1 S=1 pad=1",
        "conv2d N=1 C=4 H=5 W=5 K=3 R=3 S=3",
        "gemm M=4 N=4 K=4",
    };
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        gs_op op, mm;
        cr_assert_eq(gs_op_parse_into(ctx, refused[i], &op), GS_OK, "%s", gs_ctx_errmsg(ctx));
        cr_expect_eq(gs_op_conv1x1_as_matmul(ctx, &op, &mm), GS_ERR_UNSUPPORTED, "%s", refused[i]);
    }
    gs_device_close(cl);
    gs_ctx_destroy(ctx);
}

/* Implicit GEMM: a windowed input (a conv's h = p*stride + r*dilation -
 * pad) staged as its im2col tile, one shared-memory dim per axis, instead of
 * the tensor box with the window's halo. Both layouts, strides, dilations,
 * asymmetric padding, prime extents and tiles that divide none of them;
 * depthwise convs and pools too (a max pool's padding reads -inf). Each
 * state runs with the im2col tile forced, with the library's choice and
 * with the tensor box, under the fallback options in rotation and 1 to 3
 * stages; a padded state covers the edge path (predicated, identity-filled
 * loads) and an interior one the fast path (vector loads along NHWC's
 * channels where the row length allows). */
/* n[0]: im2col kernels, n[1]: of them with the fast path, n[2]: with
 * vector copies, n[3]: tensor-box kernels */
static void im2col_case(sweep *w, size_t i, const split_case *sc, gs_op *op, const gs_hw *hw, const gs_etir *e0) {
    static const uint8_t modes[] = {GS_IM2COL_FORCE, GS_IM2COL_AUTO, GS_IM2COL_OFF};
    (void)i;
    (void)sc;
    for (int st = 1; st <= 3; st++)
        for (size_t k = 0; k < sizeof modes; k++) {
            gs_etir e = *e0;
            e.stages = (uint8_t)st;
            gs_plan_opts o = OPTS[w->rot++ % 4];
            o.im2col = modes[k];
            gs_plan p;
            gs_plan_make(hw, op, &e, &o, &p);
            cr_expect(modes[k] != GS_IM2COL_FORCE || p.in[0].im2col, "%s: im2col not taken when forced", op->spec);
            cr_expect(modes[k] != GS_IM2COL_OFF || !p.in[0].im2col, "%s: im2col taken when off", op->spec);
            cr_expect(!p.in[0].im2col || strstr(op->spec, "nhwc") || p.in[0].copy_vec == 1,
                      "%s: an NCHW im2col tile copies vectors of %d", op->spec, p.in[0].copy_vec);
            if (!run_variant(w->ctx, w->cl, hw, op, &e, &o, 400 + (uint64_t)(st * 3 + (int)k), "im2col", &w->c))
                continue;
            if (p.in[0].im2col) {
                w->n[0]++;
                w->n[1] += p.fast_path;
                w->n[2] += p.in[0].copy_vec > 1;
            } else {
                w->n[3]++;
            }
        }
}

Test(plans, implicit_gemm_im2col, .timeout = 900) {
    static const split_case cases[] = {
        {"h100", "conv2d N=2 C=12 H=13 W=11 K=5 R=3 S=3 stride=2 pad_top=1 pad_left=2 pad_right=1 layout=nhwc bias=1 relu=1",
         "bn=1,bp=4,bq=4,bk=4,bc=4,br=1,bs=1,tq=2,tk=2,si=1,sf=1"},
        {"a100", "conv2d N=3 C=7 H=17 W=19 K=6 R=3 S=2 strideh=2 stridew=3 dilh=2 pad_bottom=2 pad_left=1 layout=nchw",
         "bn=1,bk=2,bp=2,bq=8,bc=2,br=2,bs=1,tq=2,si=1,sf=1"},
        {"h100", "conv2d N=1 C=16 H=23 W=29 K=8 R=5 S=3 dilh=2 dilw=3 pad_top=3 pad_right=4 layout=nhwc",
         "bn=1,bp=2,bq=8,bk=8,bc=8,br=1,bs=4,tk=2,si=1,sf=1"},
        {"t4", "conv2d N=2 C=5 H=31 W=37 K=3 R=7 S=7 stride=2 pad=3 layout=nchw bias=1",
         "bn=1,bk=4,bp=2,bq=16,bc=1,br=1,bs=8,tq=2,si=1,sf=1"},
        {"rtx3090", "dwconv2d N=2 C=13 H=19 W=23 R=3 S=3 stride=2 pad_top=1 pad_bottom=2 layout=nhwc relu=1",
         "bn=1,bp=2,bq=4,bc=4,br=1,bs=4,si=1,sf=1"},
        {"h100", "maxpool2d N=3 C=5 H=21 W=17 F=3 stride=2 pad=1 layout=nchw", "bn=1,bc=2,bp=4,bq=4,br=1,bs=2,si=1"},
        {"a100", "conv2d N=2 C=8 H=9 W=10 K=4 R=3 S=3 stride=2 layout=nhwc", "bn=2,bp=4,bq=4,bk=4,bc=8,br=1,bs=1,si=1,sf=1"},
        /* NCHW with even rows: the row-length guard would allow vectors, but q
         * steps the row by the stride, so the tile's copy must stay scalar
         * (found by tests/fuzz_plans.py: a float2 load read the gaps) */
        {"h100", "maxpool2d N=2 C=8 H=40 W=24 F=3 strideh=3 stridew=2 pad_left=1 layout=nchw",
         "bn=1,bc=8,bp=8,bq=2,br=4,bs=2,tp=4,vp=2,si=1"},
        {"h100", "conv2d N=2 C=4 H=12 W=16 K=4 R=3 S=3 stride=2 pad=1 layout=nchw", "bn=1,bk=4,bp=4,bq=4,bc=4,br=1,bs=1,tq=4,si=1,sf=1"},
    };
    sweep w;
    sweep_run(cases, sizeof cases / sizeof cases[0], im2col_case, &w);
    cr_log_info("plans/im2col: %d kernels, %d im2col (%d fast path, %d vector copies), %d tensor box", w.c.kernels,
                w.n[0], w.n[1], w.n[2], w.n[3]);
    cr_expect_geq(w.n[0], 30, "im2col kernels: %d", w.n[0]);
    cr_expect_geq(w.n[1], 15, "im2col kernels with the fast path: %d", w.n[1]);
    cr_expect_geq(w.n[2], 3, "im2col kernels with vector copies: %d", w.n[2]);
    cr_expect_geq(w.n[3], 15, "tensor-box kernels: %d", w.n[3]);
}

/* The user's atomic split-K (gs_construct_opts.split_atomic, the CLI's
 * --split-atomic): the ranked candidates that split carry the state's flag
 * (config atomic=1, text skNa), their plans meet by atomics, and they pass
 * on PoCL; without the option no candidate has it, and a max reduction keeps
 * the ordered meet (there is no float atomic max). */
Test(plans, split_atomic_option, .timeout = 300) {
    gs_ctx *ctx = gs_ctx_create();
    gs_device *cl = open_cl(ctx);
    const gs_hw *hw = gs_hw_find_builtin("h100");
    gs_op *op = NULL;
    cr_assert_eq(gs_op_parse(ctx, "gemv M=16384 N=1000", &op), GS_OK, "%s", gs_ctx_errmsg(ctx));
    int flagged = 0;
    for (int allow = 0; allow <= 1; allow++) {
        gs_construct_opts co;
        gs_construct_opts_default(&co);
        co.split_atomic = allow;
        gs_result *r = NULL;
        cr_assert_eq(gs_construct(ctx, op, hw, &co, &r), GS_OK, "%s", gs_ctx_errmsg(ctx));
        for (int i = 0; i < r->n; i++) {
            const gs_etir *e = &r->cand[i];
            cr_expect_eq(e->splitk_atomic, allow && e->splitk > 1, "candidate %d (%s): flag %d", i, r->desc[i],
                         e->splitk_atomic);
            gs_plan p;
            gs_plan_make(hw, op, e, NULL, &p);
            cr_expect_eq(p.split_mode == GS_SPLIT_ATOMIC, allow && e->splitk > 1, "candidate %d (%s)", i, r->desc[i]);
            char sk[16];
            snprintf(sk, sizeof sk, "sk%d%s", e->splitk, e->splitk_atomic ? "a" : "");
            cr_expect(e->splitk <= 1 || strstr(r->desc[i], sk), "%s: the text lacks %s", r->desc[i], sk);
            char cfg[512];
            gs_etir_format_config(op, e, cfg, sizeof cfg);
            gs_etir back;
            cr_assert_eq(gs_etir_parse_config(ctx, op, cfg, &back), GS_OK, "%s: %s", cfg, gs_ctx_errmsg(ctx));
            cr_expect_eq(back.splitk_atomic, e->splitk_atomic, "%s: the flag does not round-trip", cfg);
            if (e->splitk_atomic) {
                flagged++;
                gs_diff d;
                cr_expect_eq(gs_verify(ctx, cl, hw, op, e, 5 + (uint64_t)i, &d), GS_OK, "%s: %s", r->desc[i],
                             gs_ctx_errmsg(ctx));
            }
        }
        gs_result_destroy(r);
    }
    cr_expect_geq(flagged, 1, "no candidate split with atomics allowed");
    gs_op_destroy(op);
    /* a max reduction keeps the ordered meet; a flag of 2 is refused */
    cr_assert_eq(gs_op_parse(ctx, "rowmax M=3 K=777", &op), GS_OK, "%s", gs_ctx_errmsg(ctx));
    gs_etir e;
    cr_assert_eq(gs_etir_parse_config(ctx, op, "bm=4,bk=16,sx=1,split=4,atomic=1", &e), GS_OK, "%s", gs_ctx_errmsg(ctx));
    gs_plan p;
    gs_plan_make(hw, op, &e, NULL, &p);
    cr_expect_eq(p.split_mode, GS_SPLIT_ORDERED, "max: split mode %d", p.split_mode);
    cr_expect_eq(gs_etir_parse_config(ctx, op, "bm=4,bk=16,sx=1,split=4,atomic=2", &e), GS_ERR_PARSE);
    gs_construct_opts bad;
    gs_construct_opts_default(&bad);
    bad.split_atomic = 2;
    gs_result *r = NULL;
    cr_expect_eq(gs_construct(ctx, op, hw, &bad, &r), GS_ERR_INVALID_ARG);
    gs_op_destroy(op);
    gs_device_close(cl);
    gs_ctx_destroy(ctx);
}

/* Shared memory of kernels with static scratch (split-K's flag, a wide
 * group's per-warp results) beside their stage buffers: the kernel's figure
 * is the whole (what a CUDA program load takes; it launches with that less what the
 * module declares statically), and the buffers become dynamic when the whole
 * passes the static limit. ptxas must report exactly the scratch as static
 * for a dynamic kernel, so the launch's dynamic part is the buffers. (The
 * figure once left the scratch out of dynamic kernels, which then launched
 * short of their last buffer's bytes.) */
Test(plans, smem_total_includes_scratch, .timeout = 300) {
    gs_ctx *ctx = gs_ctx_create();
    const gs_hw *hw = gs_hw_find_builtin("h100");
    gs_op *op = NULL;
    cr_assert_eq(gs_op_parse(ctx, "gemm M=256 N=256 K=4096", &op), GS_OK, "%s", gs_ctx_errmsg(ctx));
    static const char *cfgs[] = {
        "bm=128,bn=128,bk=32,tm=8,tn=8,sa=1,sb=1,stages=3,split=2",          /* dynamic + split-K flag */
        "bm=64,bn=64,bk=64,tm=4,tn=4,sa=1,sb=1,stages=2,group=64",          /* wide group */
        "bm=64,bn=64,bk=16,tm=4,tn=4,sa=1,sb=1,stages=2,split=4",           /* static + flag */
    };
    int dynamic_with_scratch = 0;
    for (size_t i = 0; i < sizeof cfgs / sizeof cfgs[0]; i++) {
        gs_etir e;
        cr_assert_eq(gs_etir_parse_config(ctx, op, cfgs[i], &e), GS_OK, "%s: %s", cfgs[i], gs_ctx_errmsg(ctx));
        gs_plan p;
        gs_plan_make(hw, op, &e, NULL, &p);
        cr_assert_gt(p.scratch_bytes, 0, "%s: no scratch", cfgs[i]);
        gs_kernel_src ks;
        cr_assert_eq(gs_lower_emit_plan(ctx, op, &e, &p, GS_DIALECT_CUDA, hw->sm, &ks), GS_OK, "%s", gs_ctx_errmsg(ctx));
        cr_expect_eq(ks.smem_bytes, p.smem_bytes + p.scratch_bytes, "%s: kernel %lld, plan %lld + %d", cfgs[i],
                     (long long)ks.smem_bytes, (long long)p.smem_bytes, (int)p.scratch_bytes);
        cr_expect_eq(ks.smem_dynamic, ks.smem_bytes > hw->smem_per_block, "%s", cfgs[i]);
        dynamic_with_scratch += ks.smem_dynamic;
        if (ks.smem_dynamic) {
            gs_test_need_nvrtc(ctx, "the static part of a dynamic kernel");
            gs_nvrtc_out nv;
            int arch = gs_nvrtc_nearest_arch(ctx, hw->sm);
            cr_assert_eq(gs_nvrtc_compile(ctx, ks.src, ks.name, arch, false, true, &nv), GS_OK, "%s", gs_ctx_errmsg(ctx));
            cr_expect_eq(nv.stats.smem_bytes, p.scratch_bytes, "%s: static %lld", cfgs[i], (long long)nv.stats.smem_bytes);
            cr_expect_eq(ks.smem_bytes - nv.stats.smem_bytes, p.smem_bytes, "%s: the launch's dynamic part", cfgs[i]);
            gs_nvrtc_out_free(&nv);
        }
        gs_kernel_src_free(&ks);
    }
    cr_expect_geq(dynamic_with_scratch, 1, "no dynamic kernel with scratch was made");
    gs_op_destroy(op);
    gs_ctx_destroy(ctx);
}

/* The plan options reach a state through its config keys (scalar,
 * predicated, noasync, lb1, im2col; ir.h's plan knobs): the state's plan
 * is byte for byte the plan gs_plan_opts asks for, so the kernel printed
 * from the state and the estimate are v1's, and the CLI's --plan-opts (which
 * sets the same knobs) compares the old and new plans of the same tiles. */
Test(plans, plan_option_keys) {
    static const struct {
        const char *hw, *spec, *cfg, *keys;
        gs_plan_opts o;
    } cases[] = {
        {"h100", "gemm M=4096 N=4096 K=4096", "bm=128,bn=128,bk=32,tm=16,tn=8,vm=2,vn=8,sa=1,sb=1", "scalar=1",
         {.scalar = 1}},
        {"h100", "gemm M=4096 N=4096 K=4096", "bm=64,bn=128,bk=16,tm=8,tn=8,vm=1,vn=2,sa=1,sb=1,stages=2",
         "predicated=1", {.predicated = 1}},
        {"a100", "gemm M=4096 N=4096 K=4096", "bm=64,bn=128,bk=16,tm=8,tn=8,vm=1,vn=2,sa=1,sb=1,stages=2",
         "noasync=1", {.no_async = 1}},
        {"a100", "gemm M=333 N=77 K=129", "bm=64,bn=64,bk=16,tm=4,tn=4,sa=1,sb=1", "lb1=1", {.min_blocks1 = 1}},
        {"h100", "conv2d N=2 C=16 H=13 W=13 K=32 R=3 S=3 pad=1 layout=nhwc",
         "bn=1,bp=4,bq=4,bk=32,bc=16,br=1,bs=1,tn=1,tp=2,tq=2,tk=4,si=1,sf=1", "im2col=2",
         {.im2col = GS_IM2COL_OFF}},
        {"h100", "conv2d N=2 C=16 H=13 W=13 K=32 R=3 S=3 pad=1 layout=nhwc",
         "bn=1,bp=4,bq=4,bk=32,bc=16,br=1,bs=1,tn=1,tp=2,tq=2,tk=4,si=1,sf=1", "im2col=1",
         {.im2col = GS_IM2COL_FORCE}},
        {"h100", "gemm M=4096 N=4096 K=4096", "bm=128,bn=128,bk=32,tm=16,tn=8,vm=2,vn=8,sa=1,sb=1",
         "scalar=1,predicated=1,noasync=1,lb1=1,im2col=2",
         {.scalar = 1, .predicated = 1, .no_async = 1, .min_blocks1 = 1, .im2col = GS_IM2COL_OFF}},
    };
    gs_ctx *ctx = gs_ctx_create();
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        gs_op *op = NULL;
        gs_hw *hw = NULL;
        cr_assert_eq(gs_op_parse(ctx, cases[i].spec, &op), GS_OK, "%s", gs_ctx_errmsg(ctx));
        cr_assert_eq(gs_hw_load(ctx, cases[i].hw, &hw), GS_OK, "%s", gs_ctx_errmsg(ctx));
        char cfg[512];
        snprintf(cfg, sizeof cfg, "%s,%s", cases[i].cfg, cases[i].keys);
        gs_etir base, keyed;
        cr_assert_eq(gs_etir_parse_config(ctx, op, cases[i].cfg, &base), GS_OK, "%s", gs_ctx_errmsg(ctx));
        cr_assert_eq(gs_etir_parse_config(ctx, op, cfg, &keyed), GS_OK, "%s: %s", cfg, gs_ctx_errmsg(ctx));
        gs_plan want, got, plain;
        gs_plan_make(hw, op, &base, &cases[i].o, &want);
        gs_plan_make(hw, op, &keyed, NULL, &got);
        gs_plan_make(hw, op, &base, NULL, &plain);
        cr_expect_eq(memcmp(&want, &got, sizeof want), 0, "%s: the keys do not give the options' plan", cfg);
        cr_expect_neq(memcmp(&plain, &got, sizeof plain), 0, "%s: the keys change nothing", cfg);
        /* the check sizes the options' plan too (gs_plan_shape reads the keys) */
        gs_plan shaped;
        gs_plan_shape(hw, op, &keyed, NULL, &shaped);
        cr_expect(shaped.smem_bytes == want.smem_bytes && shaped.regs_bound == want.regs_bound, "%s: shape", cfg);
        gs_estimate ew, eg;
        gs_estimate_plan(hw, op, &base, &want, 0, NULL, NULL, &ew);
        gs_estimate_etir(hw, op, &keyed, 0, &eg);
        cr_expect_eq(ew.time_s, eg.time_s, "%s: priced %g, the options' plan %g", cfg, eg.time_s, ew.time_s);
        /* the config form prints the keys back, and the printed kernel is the options' plan */
        char back[512], planline[256];
        gs_etir_format_config(op, &keyed, back, sizeof back);
        cr_expect(strstr(back, cases[i].keys) != NULL, "%s printed as %s", cases[i].keys, back);
        gs_plan_format(op, &want, planline, sizeof planline);
        gs_kernel_src ks;
        cr_assert_eq(gs_lower_emit(ctx, hw, op, &keyed, GS_DIALECT_CUDA, 0, &ks), GS_OK, "%s", gs_ctx_errmsg(ctx));
        cr_expect(strstr(ks.src, planline) != NULL, "%s: the kernel's plan line is not '%s'", cfg, planline);
        cr_expect_eq(memcmp(&ks.desc.plan, &want, sizeof want), 0, "%s: the descriptor's plan", cfg);
        gs_kernel_src_free(&ks);
        gs_hw_destroy(hw);
        gs_op_destroy(op);
    }
    gs_ctx_destroy(ctx);
}

/* A state carrying the v1 plan keys runs on PoCL and matches the reference
 * on awkward shapes (a gemm and a padded NCHW conv, tail tiles everywhere):
 * the kernel is printed from the state alone (gs_verify_plan with the
 * state's own plan). */
Test(plans, plan_option_keys_run, .timeout = 300) {
    static const pcase cases[] = {
        {"h100", "gemm M=67 N=45 K=203", "bm=32,bn=32,bk=16,tm=4,tn=4,vm=1,vn=2,sa=1,sb=1,scalar=1,predicated=1,noasync=1,lb1=1"},
        {"a100", "conv2d N=2 C=13 H=11 W=9 K=10 R=3 S=3 pad=1",
         "bn=1,bk=16,bp=4,bq=8,bc=8,br=1,bs=1,tn=1,tk=2,tp=2,tq=2,si=1,sf=1,stages=2,scalar=1,noasync=1,im2col=2"},
        {"a100", "conv2d N=2 C=13 H=11 W=9 K=10 R=3 S=3 pad=1 layout=nhwc",
         "bn=1,bp=4,bq=8,bk=16,bc=8,br=1,bs=1,tn=1,tp=2,tq=2,tk=2,si=1,sf=1,predicated=1,im2col=1"},
    };
    gs_ctx *ctx = gs_ctx_create();
    gs_device *cl = open_cl(ctx);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        gs_op *op = NULL;
        gs_hw *hw = NULL;
        cr_assert_eq(gs_op_parse(ctx, cases[i].spec, &op), GS_OK, "%s", gs_ctx_errmsg(ctx));
        cr_assert_eq(gs_hw_load(ctx, cases[i].hw, &hw), GS_OK, "%s", gs_ctx_errmsg(ctx));
        gs_etir e;
        cr_assert_eq(gs_etir_parse_config(ctx, op, cases[i].cfg, &e), GS_OK, "%s: %s", cases[i].cfg, gs_ctx_errmsg(ctx));
        cr_assert(gs_hw_check(hw, op, &e), "%s does not fit %s", cases[i].cfg, hw->name);
        gs_plan p;
        gs_plan_make(hw, op, &e, NULL, &p);
        cr_expect(p.opts.scalar == e.plan_scalar && p.opts.predicated == e.plan_predicated &&
                      p.opts.no_async == e.plan_no_async && p.opts.min_blocks1 == e.plan_lb1 &&
                      p.opts.im2col == e.plan_im2col,
                  "%s: the plan does not carry the keys", cases[i].cfg);
        gs_diff d;
        gs_status s = gs_verify_plan(ctx, cl, op, &e, &p, 7 + i, &d);
        cr_expect_eq(s, GS_OK, "%s %s: %s", cases[i].spec, cases[i].cfg, gs_ctx_errmsg(ctx));
        cr_expect(d.normwise <= d.tol, "%s %s: normwise %.3g", cases[i].spec, cases[i].cfg, d.normwise);
        gs_hw_destroy(hw);
        gs_op_destroy(op);
    }
    gs_device_close(cl);
    gs_ctx_destroy(ctx);
}

/* Fragment double buffering (plan.frag_pipe) on awkward shapes: primes,
 * reduce extents that leave a partial last tile (the bounded path, then the
 * turn into the next tile's first fragments), a single partial tile, split-K,
 * both transposes, a batched product, and convolutions whose channel tile
 * does not divide the channels (edges across channel tiles) with a window
 * tile splitting the filter, NCHW and NHWC with stride 2; gemms with aligned
 * rows, whose interior blocks run the peeled steady loop (plan.peel) and
 * whose edge blocks and last tiles the general loop; reduce lanes (group 2
 * and 4) taking turns along k. Each case with the
 * library's plan (cp.async where it exists) and with register copies; most
 * take the fragment pipeline (the count is checked). */
Test(plans, fragment_pipeline_awkward, .timeout = 900) {
    static const struct {
        const char *hw, *spec, *cfg;
    } cases[] = {
        {"h100", "gemm M=67 N=45 K=203", "bm=32,bn=32,bk=16,tm=4,tn=4,vm=1,vn=1,sa=1,sb=1,stages=2"},
        {"h100", "gemm M=67 N=45 K=203", "bm=32,bn=32,bk=16,tm=4,tn=4,vm=1,vn=1,sa=1,sb=1,stages=4"},
        {"h100", "gemm M=13 N=7 K=7", "bm=16,bn=8,bk=4,tm=2,tn=2,vm=1,vn=1,sa=1,sb=1,stages=2"},
        {"a100", "gemm M=37 N=29 K=71 transA=1 transB=1", "bm=16,bn=32,bk=8,tm=2,tn=4,vm=1,vn=1,sa=1,sb=1,stages=3"},
        {"h100", "gemm M=33 N=17 K=301", "bm=16,bn=16,bk=16,tm=2,tn=2,vm=1,vn=1,sa=1,sb=1,stages=2,split=3"},
        {"h100", "bgemm B=3 M=19 N=40 K=71", "bb=1,bm=16,bn=32,bk=8,tb=1,tm=4,tn=4,vb=1,vm=1,vn=1,sa=1,sb=1,stages=4"},
        /* aligned rows: interior blocks take the peeled steady loop (plan.peel) */
        {"h100", "gemm M=67 N=44 K=196", "bm=32,bn=32,bk=16,tm=4,tn=4,vm=1,vn=1,sa=1,sb=1,stages=3"},
        {"a100", "gemm M=64 N=64 K=64", "bm=32,bn=32,bk=8,tm=4,tn=4,vm=1,vn=2,sa=1,sb=1,stages=4"},
        {"h100", "gemm M=33 N=20 K=300", "bm=16,bn=16,bk=16,tm=2,tn=2,vm=1,vn=1,sa=1,sb=1,stages=2,split=3"},
        /* reduce lanes: each thread's k-steps are every group-th index */
        {"a100", "gemm M=37 N=29 K=203", "bm=16,bn=16,bk=32,tm=2,tn=2,vm=1,vn=1,sa=1,sb=1,stages=3,group=2"},
        {"a100", "gemm M=64 N=32 K=132", "bm=32,bn=32,bk=32,tm=4,tn=4,vm=1,vn=1,sa=1,sb=1,stages=2,group=4"},
        {"h100", "conv2d N=2 C=13 H=11 W=9 K=10 R=3 S=3 pad=1",
         "bn=2,bk=16,bp=4,bq=4,bc=4,br=1,bs=2,tn=1,tk=4,tp=2,tq=2,vn=1,vk=1,vp=1,vq=1,si=1,sf=1,stages=3"},
        {"h100", "conv2d N=2 C=12 H=9 W=10 K=8 R=3 S=3 stride=2 pad=1 layout=nhwc",
         "bn=2,bk=8,bp=2,bq=4,bc=8,br=1,bs=1,tn=1,tk=4,tp=1,tq=2,vn=1,vk=1,vp=1,vq=1,si=1,sf=1,stages=2"},
    };
    gs_ctx *ctx = gs_ctx_create();
    gs_device *cl = open_cl(ctx);
    paths c = {0};
    int ran = 0, peeled = 0, piped = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        gs_op *op = NULL;
        gs_hw *hw = NULL;
        gs_etir e;
        cr_assert_eq(gs_op_parse(ctx, cases[i].spec, &op), GS_OK, "%s", gs_ctx_errmsg(ctx));
        cr_assert_eq(gs_hw_load(ctx, cases[i].hw, &hw), GS_OK, "%s", gs_ctx_errmsg(ctx));
        cr_assert_eq(gs_etir_parse_config(ctx, op, cases[i].cfg, &e), GS_OK, "%s", gs_ctx_errmsg(ctx));
        for (int v = 0; v < 2; v++) {
            gs_plan_opts o = {0};
            o.no_async = (uint8_t)v;
            gs_plan p;
            gs_plan_make(hw, op, &e, &o, &p);
            /* where the second fragment set would cost a block per SM the plan keeps
             * the plain pipeline, which runs too */
            piped += p.frag_pipe;
            peeled += p.peel;
            ran += run_variant(ctx, cl, hw, op, &e, &o, 7 + i, "fragment pipeline", &c);
        }
        gs_hw_destroy(hw);
        gs_op_destroy(op);
    }
    cr_expect_eq(ran, 26, "variants run: %d", ran);
    cr_expect_geq(c.tail_tiles, 20, "partial reduce tiles ran: %d", c.tail_tiles);
    cr_expect_geq(piped, 15, "fragment pipelines: %d", piped);
    cr_expect_geq(peeled, 12, "peeled steady loops: %d", peeled);
    gs_device_close(cl);
    gs_ctx_destroy(ctx);
}

/* The plain pipeline's peeled steady loop for gemm-like operators (plan.peel
 * without frag_pipe, forced here by no_frag_pipe): interior blocks run their
 * full tiles with unchecked copies that walk one base pointer per input
 * (sp<t>, stepped a k-tile at a time; cp.async destinations from one shared
 * pointer a copy), the edge blocks, a partial last k tile and the last
 * stages-1 tiles the general loop. Awkward shapes: all four transposes, a
 * batched product, prime and unit extents, tiles that do not divide, split-K,
 * reduce lanes, stages 2 to 4, f16 and bf16, each with cp.async and with
 * register copies; then a plan made for aligned rows run on misaligned ones
 * (the steady check fails at run time, every tile takes the scalar path).
 * Fails on a plan that does not peel the plain pipeline, and (checked by
 * hand) with the bases' step removed. */
Test(plans, gemm_steady_walk, .timeout = 900) {
    static const struct {
        const char *hw, *spec, *cfg;
    } cases[] = {
        {"a100", "gemm M=67 N=44 K=196", "bm=32,bn=32,bk=16,tm=4,tn=4,vm=1,vn=1,sa=1,sb=1,stages=3"},
        {"a100", "gemm M=40 N=36 K=132 transA=1", "bm=16,bn=32,bk=8,tm=2,tn=4,vm=1,vn=1,sa=1,sb=1,stages=2"},
        {"h100", "gemm M=44 N=37 K=100 transB=1", "bm=32,bn=16,bk=8,tm=4,tn=2,vm=1,vn=1,sa=1,sb=1,stages=2"},
        {"a100", "gemm M=36 N=52 K=88 transA=1 transB=1", "bm=16,bn=16,bk=8,tm=2,tn=2,vm=1,vn=1,sa=1,sb=1,stages=3"},
        {"h100", "bgemm B=3 M=19 N=40 K=72", "bb=1,bm=16,bn=32,bk=8,tb=1,tm=4,tn=4,vb=1,vm=1,vn=1,sa=1,sb=1,stages=4"},
        {"a100", "gemm M=37 N=29 K=97", "bm=16,bn=16,bk=8,tm=2,tn=2,vm=1,vn=1,sa=1,sb=1,stages=2"},
        {"a100", "gemm M=1 N=64 K=67", "bm=1,bn=64,bk=8,tm=1,tn=2,vm=1,vn=1,sa=1,sb=1,stages=3"},
        {"a100", "gemm M=48 N=1 K=64", "bm=32,bn=1,bk=8,tm=2,tn=1,vm=1,vn=1,sa=1,sb=1,stages=2"},
        {"h100", "gemm M=16 N=17 K=3", "bm=16,bn=16,bk=1,tm=2,tn=2,vm=1,vn=1,sa=1,sb=1,stages=2"},
        {"h100", "gemm M=33 N=20 K=300", "bm=16,bn=16,bk=16,tm=2,tn=2,vm=1,vn=1,sa=1,sb=1,stages=2,split=3"},
        {"a100", "gemm M=37 N=32 K=204", "bm=16,bn=16,bk=32,tm=2,tn=2,vm=1,vn=1,sa=1,sb=1,stages=3,group=2"},
        {"a100", "gemm M=64 N=48 K=136 dtype=f16", "bm=32,bn=16,bk=8,tm=4,tn=2,vm=1,vn=1,sa=1,sb=1,stages=4"},
        {"h100", "gemm M=40 N=64 K=88 transA=1 dtype=bf16", "bm=16,bn=32,bk=8,tm=2,tn=4,vm=1,vn=1,sa=1,sb=1,stages=2"},
        /* 64 k-steps partly unrolled (k_unroll): the steady loop's pairs */
        {"a100", "gemm M=37 N=40 K=300", "bm=16,bn=16,bk=64,tm=2,tn=2,vm=1,vn=1,sa=1,sb=1,stages=2"},
        {"h100", "gemm M=20 N=36 K=333 transB=1", "bm=16,bn=32,bk=32,tm=2,tn=4,vm=1,vn=1,sa=1,sb=1,stages=2"},
        /* the h100 gemm 4096^3 pick's tiles: the copies after the second
         * k-step's loads (the registers leave no room at the turn) */
        {"h100", "gemm M=200 N=256 K=76", "bm=128,bn=128,bk=8,tm=8,tn=16,vm=2,vn=4,sa=1,sb=1,stages=3"},
    };
    gs_ctx *ctx = gs_ctx_create();
    gs_device *cl = open_cl(ctx);
    paths c = {0};
    int ran = 0, peeled = 0, turned = 0, early = 0, serpentine = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        gs_op *op = NULL;
        gs_hw *hw = NULL;
        gs_etir e;
        cr_assert_eq(gs_op_parse(ctx, cases[i].spec, &op), GS_OK, "%s", gs_ctx_errmsg(ctx));
        cr_assert_eq(gs_hw_load(ctx, cases[i].hw, &hw), GS_OK, "%s", gs_ctx_errmsg(ctx));
        cr_assert_eq(gs_etir_parse_config(ctx, op, cases[i].cfg, &e), GS_OK, "%s: %s", cases[i].spec,
                     gs_ctx_errmsg(ctx));
        cr_assert(gs_hw_check(hw, op, &e), "%s %s: %s", cases[i].spec, cases[i].cfg, gs_hw_check_why(hw, op, &e));
        for (int v = 0; v < 2; v++) {
            gs_plan_opts o = {0};
            o.no_async = (uint8_t)v;
            o.no_frag_pipe = 1;
            gs_plan p;
            gs_plan_make(hw, op, &e, &o, &p);
            cr_expect(p.peel && !p.frag_pipe, "%s %s no_async %d: not the plain pipeline's steady loop (peel %d)",
                      cases[i].spec, cases[i].cfg, v, p.peel);
            peeled += p.peel && !p.frag_pipe;
            /* the steady loop turns before the last k-step (plan.cross_turn):
             * after its barrier the next tile's first fragments (set 0) are
             * loaded, then the last k-step's set 1 is multiplied */
            int ka = op->naxes - 1; /* the reduce axis k: the last one of a gemm and a bgemm */
            cr_assert_neq(op->axes[ka].kind, GS_AXIS_SPATIAL);
            const int64_t ts = e.tile[ka].block / p.lanes;
            cr_expect_eq(!!p.cross_turn, ts >= 2, "%s %s: cross_turn %d with %lld k-steps a thread", cases[i].spec,
                         cases[i].cfg, p.cross_turn, (long long)ts);
            early += p.cross_turn == GS_CROSS_TURN_COPY_EARLY;
            if (p.cross_turn) {
                gs_kernel_src ks;
                cr_assert_eq(gs_lower_emit_plan(ctx, op, &e, &p, GS_DIALECT_OPENCL, hw->sm, &ks), GS_OK, "%s",
                             gs_ctx_errmsg(ctx));
                const char *lo = strstr(ks.src, "for (; it < nsteady; it++)");
                const char *hi = lo ? strstr(lo, "for (; it < ntile; it++)") : NULL;
                const char *bar = lo ? strstr(lo, "barrier(") : NULL;
                const char *ld0 = bar ? strstr(bar, "fr0[0][") : NULL;
                const char *ld1 = bar ? strstr(bar, "fr1[0][") : NULL;
                const char *mul = ld0 ? strstr(ld0, "+= fr0[1][") : NULL;
                /* the steady loop stops while the tile its copies reach is full: with
                 * the copies at the turn that is `stages` ahead, not stages-1 (it read
                 * up to a tile past the last full one, which the sanitizer stage caught
                 * as a read past A's buffer on gemm M=37 N=40 K=300, bk=64) */
                char ns[64];
                snprintf(ns, sizeof ns, "const int nsteady = steady ? nfull - %d : 0;",
                         p.cross_turn == GS_CROSS_TURN_COPY_AT_TURN ? p.stages : p.stages - 1);
                cr_expect(strstr(ks.src, ns) != NULL, "%s %s: the steady loop's copies pass its last full tile",
                          cases[i].spec, cases[i].cfg);
                bool ok = lo && hi && bar && ld0 && ld1 && mul && bar < hi && ld1 < mul && mul < hi;
                cr_expect(ok, "%s %s: the steady loop does not turn before its last k-step", cases[i].spec,
                          cases[i].cfg);
                turned += ok;
                /* the multiply's inner axis (n) runs serpentine over m's rows */
                const int mi = ka - 2, ni = ka - 1; /* m and n */
                if (e.tile[mi].thread > 1 && e.tile[ni].thread > 1) {
                    char zz[96];
                    snprintf(zz, sizeof zz, "const int r%d = r%d & 1 ? %d - z%d : z%d;", ni, mi,
                             (int)e.tile[ni].thread - 1, ni, ni);
                    cr_expect(strstr(lo ? lo : ks.src, zz) != NULL, "%s %s: no serpentine FFMA order", cases[i].spec,
                              cases[i].cfg);
                    serpentine++;
                }
                gs_kernel_src_free(&ks);
            }
            ran += run_variant(ctx, cl, hw, op, &e, &o, 53 + i, "gemm steady loop", &c);
        }
        gs_hw_destroy(hw);
        gs_op_destroy(op);
    }
    cr_expect_eq(ran, 32, "variants run: %d", ran);
    cr_expect_eq(peeled, 32, "plain steady loops: %d", peeled);
    cr_expect_eq(turned, 30, "steady loops turned before the last k-step: %d", turned); /* (not bk=1) */
    /* both placements run: the copies at the turn where the register blocks per SM allow two more
     * fragment sets beside the turn's own, after the second k-step's loads elsewhere */
    cr_expect_eq(early, 19, "copies after the second k-step's loads: %d", early);
    cr_expect_geq(serpentine, 20, "serpentine multiplies checked: %d", serpentine);
    cr_expect_geq(c.tail_tiles, 14, "partial reduce tiles ran: %d", c.tail_tiles);
    cr_expect_geq(c.async_ring, 10, "cp.async pipelines: %d", c.async_ring);
    cr_expect_geq(c.transposed, 6, "transposing copies: %d", c.transposed);
    /* a plan for aligned rows, run on misaligned ones: the steady check
     * fails at run time and the general loop's scalar path takes every tile */
    const gs_hw *h100 = gs_hw_find_builtin("h100");
    gs_op *a = NULL, *b = NULL;
    cr_assert_eq(gs_op_parse(ctx, "gemm M=64 N=64 K=64", &a), GS_OK, "%s", gs_ctx_errmsg(ctx));
    cr_assert_eq(gs_op_parse(ctx, "gemm M=61 N=62 K=61", &b), GS_OK, "%s", gs_ctx_errmsg(ctx));
    gs_etir e;
    cr_assert_eq(gs_etir_parse_config(ctx, a, "bm=32,bn=32,bk=16,tm=4,tn=4,vm=1,vn=1,sa=1,sb=1,stages=3", &e), GS_OK,
                 "%s", gs_ctx_errmsg(ctx));
    for (int v = 0; v < 2; v++) {
        gs_plan_opts o = {0};
        o.no_async = (uint8_t)v;
        o.no_frag_pipe = 1;
        gs_plan p;
        gs_plan_make(h100, a, &e, &o, &p);
        cr_expect(p.peel && p.in[0].copy_vec > 1 && p.in[1].copy_vec > 1, "the aligned plan: peel %d, vectors %d %d",
                  p.peel, p.in[0].copy_vec, p.in[1].copy_vec);
        gs_diff d;
        cr_expect_eq(gs_verify_plan(ctx, cl, b, &e, &p, 97, &d), GS_OK, "aligned plan on misaligned rows: %s",
                     gs_ctx_errmsg(ctx));
        cr_expect_eq(gs_verify_plan(ctx, cl, a, &e, &p, 97, &d), GS_OK, "aligned plan on itself: %s",
                     gs_ctx_errmsg(ctx));
    }
    gs_op_destroy(a);
    gs_op_destroy(b);
    gs_device_close(cl);
    gs_ctx_destroy(ctx);
}

/* A convolution's peeled steady loop (plan.peel on several reduce axes): the
 * full tiles of a block whose window lies inside the input run with
 * unchecked copies from the tile counters; the blocks at the padding, a
 * partial channel tile and the last stages-1 tiles take the general loop.
 * Every case has interior blocks and border blocks (H and W several block
 * tiles wide), so both loops run: strides 1 and 2, dilation, padding, C not
 * a multiple of the channel tile, C=1, prime H and W, groups, NCHW and NHWC,
 * f16, cp.async and register copies; the tensor box, not im2col's (which
 * the steady loop leaves to the general loop). The loop turns a k-step
 * early (plan.cross_turn, a third fragment set) only where that set keeps
 * the plan's register blocks per SM: both loops run, on awkward shapes. */
Test(plans, conv_steady_loop, .timeout = 900) {
    static const struct {
        const char *hw, *spec, *cfg;
        int turn; /* bit v: the loop turns a k-step early (plan.cross_turn) at no_async v */
    } cases[] = {
        {"h100", "conv2d N=2 C=13 H=17 W=19 K=8 R=3 S=3 pad=1",
         "bn=2,bk=8,bp=4,bq=4,bc=4,br=1,bs=1,tn=1,tk=4,tp=1,tq=4,vn=1,vk=1,vp=1,vq=1,si=1,sf=1,stages=2", 1},
        {"a100", "conv2d N=2 C=12 H=23 W=19 K=8 R=3 S=3 stride=2 dilation=2 pad=2 layout=nhwc",
         "bn=2,bp=2,bq=2,bk=8,bc=8,br=1,bs=1,tn=1,tp=1,tq=2,tk=4,vn=1,vp=1,vq=1,vk=1,si=1,sf=1,stages=2", 3},
        {"h100", "conv2d N=3 C=1 H=13 W=11 K=8 R=2 S=2 pad=1",
         "bn=1,bk=8,bp=4,bq=4,bc=1,br=2,bs=1,tn=1,tk=4,tp=1,tq=4,vn=1,vk=1,vp=1,vq=1,si=1,sf=1,stages=2", 0},
        {"h100", "conv2d N=3 C=1 H=13 W=11 K=8 R=2 S=2 pad=1",
         "bn=2,bk=8,bp=4,bq=4,bc=1,br=2,bs=1,tn=1,tk=4,tp=1,tq=2,vn=1,vk=1,vp=1,vq=1,si=1,sf=1,stages=2", 3},
        {"h100", "conv2d N=2 C=8 H=17 W=13 K=8 R=3 S=3 pad=1 groups=2",
         "bn=2,bg=1,bk=4,bp=4,bq=4,bc=4,br=1,bs=1,tn=1,tg=1,tk=2,tp=2,tq=2,vn=1,vg=1,vk=1,vp=1,vq=1,si=1,sf=1,stages=3", 2},
        {"a100", "conv2d N=2 C=10 H=11 W=13 K=8 R=3 S=3 stride=2 pad=1 dtype=f16",
         "bn=2,bk=8,bp=2,bq=4,bc=2,br=1,bs=1,tn=1,tk=4,tp=1,tq=2,vn=1,vk=1,vp=1,vq=1,si=1,sf=1,stages=2", 0},
        {"a100", "conv2d N=2 C=10 H=11 W=13 K=8 R=3 S=3 stride=2 pad=1 dtype=f16",
         "bn=2,bk=8,bp=2,bq=4,bc=2,br=1,bs=1,tn=1,tk=2,tp=1,tq=1,vn=1,vk=1,vp=1,vq=1,si=1,sf=1,stages=2", 3},
        /* the tiles of the a100 conv2d N=128 C=256 H=30 W=30 K=256 3x3 stride 2
         * NCHW pick (n:64/4 k:64/8/v2 c:8 st2), which ptxas spilled turned: its
         * third fragment set (4 + 8) takes the bound from 164 to 176, 3 blocks
         * per SM to 2, so it keeps the loop that turns at the last k-step */
        {"a100", "conv2d N=64 C=20 H=9 W=9 K=64 R=3 S=3 stride=2",
         "bn=64,bk=64,bp=1,bq=1,bc=8,br=1,bs=1,tn=4,tk=8,tp=1,tq=1,vn=1,vk=2,vp=1,vq=1,si=1,sf=1,stages=2", 0},
        /* the t4 conv2d N=128 C=320 H=7 W=7 K=1280 1x1 NHWC pick's tiles, which
         * spilled turned with the third set alone counted (bound 146 + 12
         * under lb(128,3)'s 168; ptxas took 168 and spilled): the set ptxas'
         * hoisting adds (178) would cost a block per SM */
        {"t4", "conv2d N=64 C=20 H=5 W=5 K=64 R=1 S=1 layout=nhwc bias=1 relu=1",
         "bn=64,bk=64,bp=1,bq=1,bc=8,br=1,bs=1,tn=4,tk=8,tp=1,tq=1,vn=1,vk=2,vp=1,vq=1,si=1,sf=1,stages=2", 0},
    };
    gs_ctx *ctx = gs_ctx_create();
    gs_device *cl = open_cl(ctx);
    paths c = {0};
    int ran = 0, peeled = 0, turned = 0, kept = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        gs_op *op = NULL;
        gs_hw *hw = NULL;
        gs_etir e;
        cr_assert_eq(gs_op_parse(ctx, cases[i].spec, &op), GS_OK, "%s", gs_ctx_errmsg(ctx));
        cr_assert_eq(gs_hw_load(ctx, cases[i].hw, &hw), GS_OK, "%s", gs_ctx_errmsg(ctx));
        cr_assert_eq(gs_etir_parse_config(ctx, op, cases[i].cfg, &e), GS_OK, "%s: %s", cases[i].spec,
                     gs_ctx_errmsg(ctx));
        cr_assert(gs_hw_check(hw, op, &e), "%s %s: %s", cases[i].spec, cases[i].cfg, gs_hw_check_why(hw, op, &e));
        for (int v = 0; v < 2; v++) {
            gs_plan_opts o = {0};
            o.no_async = (uint8_t)v;
            o.im2col = GS_IM2COL_OFF;
            gs_plan p;
            gs_plan_make(hw, op, &e, &o, &p);
            cr_expect(p.peel, "%s %s no_async %d: not peeled (frag_pipe %d)", cases[i].spec, cases[i].cfg, v,
                      p.frag_pipe);
            peeled += p.peel;
            /* the steady loop turns before its second-last k-step's multiply
             * (plan.cross_turn): after the barrier the next tile's first
             * fragments go to set 2, the last two k-steps multiply after
             * them, and set 2 moves to set 0 at the tile's end */
            /* (where it does not, today's loop: two sets, no third) */
            cr_expect_eq(p.cross_turn != 0, cases[i].turn >> v & 1, "%s %s no_async %d: cross_turn %d", cases[i].spec,
                         cases[i].cfg, v, p.cross_turn);
            /* the turn only where the third set (each input's thread tile)
             * keeps the register blocks per SM, and the bound counts it */
            int64_t set = 0;
            for (int t = 0; t < op->ninputs; t++) {
                int64_t f = 1;
                for (int a = 0; a < op->naxes; a++)
                    if (op->axes[a].kind == GS_AXIS_SPATIAL && gs_tensor_uses_axis(&op->tensors[t], a))
                        f *= e.tile[a].thread;
                set += f;
            }
            const int64_t mb = gs_plan_blocks_per_sm(hw, &p, p.regs_bound);
            cr_expect_eq(mb, p.min_blocks, "%s %s no_async %d: blocks per SM %lld, launch bounds %d", cases[i].spec,
                         cases[i].cfg, v, (long long)mb, (int)p.min_blocks);
            /* the bound without the third set, and whether that set and one
             * more (ptxas' hoisting) keep its blocks per SM, at the bound
             * and at the 7 counts under it */
            const int64_t b0 = p.regs_bound - (p.cross_turn ? set : 0);
            bool fits = b0 + 2 * set <= hw->max_regs_per_thread && b0 + set + 8 <= hw->max_regs_per_thread &&
                        gs_plan_blocks_per_sm(hw, &p, (int)(b0 + 2 * set)) >= gs_plan_blocks_per_sm(hw, &p, (int)b0);
            for (int d = 0; d < 8; d++)
                fits = fits && gs_plan_blocks_per_sm(hw, &p, (int)(b0 + set - d)) >=
                                   gs_plan_blocks_per_sm(hw, &p, (int)(b0 - d));
            cr_expect_eq(fits, p.cross_turn != 0, "%s %s no_async %d: the third set fits %d, cross_turn %d",
                         cases[i].spec, cases[i].cfg, v, fits, p.cross_turn);
            gs_kernel_src ks;
            cr_assert_eq(gs_lower_emit_plan(ctx, op, &e, &p, GS_DIALECT_OPENCL, hw->sm, &ks), GS_OK, "%s",
                         gs_ctx_errmsg(ctx));
            const char *lo = strstr(ks.src, "for (; it < nsteady; it++)");
            const char *hi = lo ? strstr(lo, "for (; it < ntile; it++)") : NULL;
            if (p.cross_turn) {
                const char *bar = lo ? strstr(lo, "barrier(") : NULL;
                const char *ld = bar ? strstr(bar, "fr0[2][") : NULL;
                const char *mul = ld ? strstr(ld, "+= fr0[kk & 1][") : NULL;
                const char *mv = mul ? strstr(mul, "fr0[0][i] = fr0[2][i];") : NULL;
                bool ok = lo && hi && bar && ld && mul && mv && mv < hi;
                cr_expect(ok, "%s %s no_async %d: the steady loop does not turn a k-step early", cases[i].spec,
                          cases[i].cfg, v);
                turned += ok;
            } else {
                const char *decl = strstr(ks.src, "float fr0[2][");
                bool ok = lo && hi && decl && !strstr(decl + strlen("float fr0[2]["), "fr0[2][");
                cr_expect(ok, "%s %s no_async %d: a third fragment set without the turn", cases[i].spec,
                          cases[i].cfg, v);
                kept += ok;
            }
            gs_kernel_src_free(&ks);
            ran += run_variant(ctx, cl, hw, op, &e, &o, 31 + i, "conv steady loop", &c);
        }
        gs_hw_destroy(hw);
        gs_op_destroy(op);
    }
    cr_expect_eq(ran, 18, "variants run: %d", ran);
    cr_expect_eq(peeled, 18, "peeled steady loops: %d", peeled);
    cr_expect_eq(turned, 8, "steady loops turned a k-step early: %d", turned);
    cr_expect_eq(kept, 10, "steady loops kept (registers): %d", kept);
    cr_expect_geq(c.tail_tiles, 4, "partial reduce tiles ran: %d", c.tail_tiles);
    gs_device_close(cl);
    gs_ctx_destroy(ctx);
}

/* The steady loop of a convolution steps only the copied tile's counters
 * cn: the computed tile's ci are set from the tile index once after it
 * (they stepped every steady tile: a move per reduce axis at two stages, a
 * carry chain at three). Emitted text, CUDA and OpenCL, at two and three
 * stages with cp.async and register copies; conv_steady_loop runs these
 * shapes on PoCL. */
Test(plans, conv_steady_counters) {
    static const struct {
        const char *hw, *spec, *cfg;
    } cases[] = {
        {"h100", "conv2d N=2 C=13 H=17 W=19 K=8 R=3 S=3 pad=1",
         "bn=2,bk=8,bp=4,bq=4,bc=4,br=1,bs=1,tn=1,tk=4,tp=1,tq=4,vn=1,vk=1,vp=1,vq=1,si=1,sf=1,stages=2"},
        {"h100", "conv2d N=2 C=8 H=17 W=13 K=8 R=3 S=3 pad=1 groups=2",
         "bn=2,bg=1,bk=4,bp=4,bq=4,bc=4,br=1,bs=1,tn=1,tg=1,tk=2,tp=2,tq=2,vn=1,vg=1,vk=1,vp=1,vq=1,si=1,sf=1,stages=3"},
    };
    gs_ctx *ctx = gs_ctx_create();
    int checked = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        gs_op *op = NULL;
        gs_hw *hw = NULL;
        gs_etir e;
        cr_assert_eq(gs_op_parse(ctx, cases[i].spec, &op), GS_OK, "%s", gs_ctx_errmsg(ctx));
        cr_assert_eq(gs_hw_load(ctx, cases[i].hw, &hw), GS_OK, "%s", gs_ctx_errmsg(ctx));
        cr_assert_eq(gs_etir_parse_config(ctx, op, cases[i].cfg, &e), GS_OK, "%s", gs_ctx_errmsg(ctx));
        for (int v = 0; v < 4; v++) {
            gs_plan_opts o = {0};
            o.no_async = (uint8_t)(v & 1);
            o.im2col = GS_IM2COL_OFF;
            gs_plan p;
            gs_plan_make(hw, op, &e, &o, &p);
            cr_assert(p.peel, "%s no_async %d: not peeled", cases[i].spec, v & 1);
            gs_kernel_src ks;
            cr_assert_eq(gs_lower_emit_plan(ctx, op, &e, &p, v < 2 ? GS_DIALECT_CUDA : GS_DIALECT_OPENCL, hw->sm, &ks),
                         GS_OK, "%s", gs_ctx_errmsg(ctx));
            const char *b = strstr(ks.src, "const int nsteady"), *end = b ? strstr(b, "for (; it < ntile; it++)") : NULL;
            cr_assert(b && end, "%s: no steady loop before the general loop", cases[i].spec);
            int sets = 0;
            for (const char *q = b; q < end; q++) {
                if (q[0] != 'c' || q[1] != 'i' || q[2] < '0' || q[2] > '9') continue;
                if (q[-1] == '_' || (q[-1] >= 'a' && q[-1] <= 'z') || (q[-1] >= '0' && q[-1] <= '9')) continue;
                const char *t = q + 2;
                while (*t >= '0' && *t <= '9') t++;
                cr_expect(!strncmp(t, " = cirem % nk", 13), "%s stages %d: the steady loop touches %.*s: %.40s",
                          cases[i].spec, p.stages, (int)(t - q), q, q);
                sets++;
            }
            cr_expect_eq(sets, 3, "%s stages %d: %d counters set after the steady loop", cases[i].spec, p.stages, sets);
            gs_kernel_src_free(&ks);
            checked++;
        }
        gs_hw_destroy(hw);
        gs_op_destroy(op);
    }
    cr_expect_eq(checked, 8);
    gs_ctx_destroy(ctx);
}

/* A convolution's transposing register copies of scalar units
 * (plan.store_group): a thread's G units are consecutive rows of the
 * smem-innermost dim, stored as one G-wide vector through the walked
 * pointer sw<t>; the prologue and the edge path store them one by one at the
 * same places. NCHW (both inputs scalar and transposed) with the h100
 * pick's tile on awkward shapes: N and K not multiples of the block tile, C
 * not a multiple of the channel tile, C=1, prime H and W, stride 2 with
 * dilation, groups, f16; register copies with and without cp.async allowed,
 * verified on PoCL: the fragment pipeline's steady and general loops (the
 * first case's interior blocks take the steady loop) and the plain
 * pipeline's loop (where the fragment pipeline would cost a block per SM).
 * The kernels must hold the grouped stores (fails without plan.store_group). */
Test(plans, conv_store_group, .timeout = 900) {
    static const struct {
        const char *hw, *spec, *cfg;
        int peels; /* variants (of the two) in the fragment pipeline's steady loop, the rest in the
                      plain pipeline's loop */
    } cases[] = {
        {"h100", "conv2d N=33 C=13 H=7 W=11 K=70 R=3 S=3 pad=1",
         "bn=32,bk=64,bp=1,bq=2,bc=8,br=1,bs=1,tn=4,tk=8,tp=1,tq=2,vn=1,vk=2,vp=1,vq=1,si=1,sf=1,stages=2", 2},
        {"h100", "conv2d N=33 C=12 H=13 W=9 K=64 R=3 S=3 stride=2 dilation=2 pad=2",
         "bn=32,bk=64,bp=1,bq=2,bc=8,br=1,bs=1,tn=4,tk=8,tp=1,tq=2,vn=1,vk=2,vp=1,vq=1,si=1,sf=1,stages=2", 0},
        {"a100", "conv2d N=34 C=10 H=11 W=13 K=64 R=3 S=3 stride=2 pad=1 dtype=f16",
         "bn=32,bk=32,bp=1,bq=2,bc=8,br=1,bs=1,tn=4,tk=4,tp=1,tq=2,vn=1,vk=1,vp=1,vq=1,si=1,sf=1,stages=2", 0},
        {"h100", "conv2d N=32 C=1 H=5 W=7 K=64 R=3 S=3 pad=1",
         "bn=32,bk=64,bp=1,bq=2,bc=1,br=2,bs=2,tn=4,tk=8,tp=1,tq=2,vn=1,vk=2,vp=1,vq=1,si=1,sf=1,stages=2", 2},
        {"h100", "conv2d N=32 C=16 H=7 W=5 K=64 R=3 S=3 pad=1 groups=2",
         "bn=32,bg=1,bk=32,bp=1,bq=2,bc=8,br=1,bs=1,tn=4,tg=1,tk=4,tp=1,tq=2,vn=1,vg=1,vk=1,vp=1,vq=1,si=1,sf=1,"
         "stages=2", 1},
    };
    gs_ctx *ctx = gs_ctx_create();
    gs_device *cl = open_cl(ctx);
    paths c = {0};
    int ran = 0, grouped = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        gs_op *op = NULL;
        gs_hw *hw = NULL;
        gs_etir e;
        cr_assert_eq(gs_op_parse(ctx, cases[i].spec, &op), GS_OK, "%s", gs_ctx_errmsg(ctx));
        cr_assert_eq(gs_hw_load(ctx, cases[i].hw, &hw), GS_OK, "%s", gs_ctx_errmsg(ctx));
        cr_assert_eq(gs_etir_parse_config(ctx, op, cases[i].cfg, &e), GS_OK, "%s: %s", cases[i].spec,
                     gs_ctx_errmsg(ctx));
        cr_assert(gs_hw_check(hw, op, &e), "%s %s: %s", cases[i].spec, cases[i].cfg, gs_hw_check_why(hw, op, &e));
        int peels = 0;
        for (int v = 0; v < 2; v++) {
            gs_plan_opts o = {0};
            o.no_async = (uint8_t)v;
            o.im2col = GS_IM2COL_OFF;
            gs_plan p;
            gs_plan_make(hw, op, &e, &o, &p);
            peels += p.peel;
            int g = 0;
            for (int t = 0; t < op->ninputs; t++)
                if (p.in[t].store_group > 1) g++;
            cr_expect(g > 0, "%s no_async %d: no grouped copy", cases[i].spec, v);
            for (int d = 0; d < 2 && g; d++) {
                gs_kernel_src ks;
                cr_assert_eq(gs_lower_emit_plan(ctx, op, &e, &p, d ? GS_DIALECT_OPENCL : GS_DIALECT_CUDA, hw->sm, &ks),
                             GS_OK, "%s", gs_ctx_errmsg(ctx));
                const char *st = op->dtype_in == GS_DTYPE_F32 ? "GS_ST4(&sw" : "GS_STH4(&sw";
                cr_expect(strstr(ks.src, st), "%s: no grouped store %s in the %s kernel", cases[i].spec, st,
                          d ? "OpenCL" : "CUDA");
                gs_kernel_src_free(&ks);
            }
            grouped += g > 0;
            ran += run_variant(ctx, cl, hw, op, &e, &o, 71 + i, "conv store group", &c);
        }
        cr_expect_eq(peels, cases[i].peels, "%s: %d variants peeled", cases[i].spec, peels);
        gs_hw_destroy(hw);
        gs_op_destroy(op);
    }
    cr_expect_eq(ran, 10, "variants run: %d", ran);
    cr_expect_eq(grouped, 10, "grouped plans: %d", grouped);
    cr_expect_geq(c.tail_tiles, 4, "partial reduce tiles ran: %d", c.tail_tiles);
    gs_device_close(cl);
    gs_ctx_destroy(ctx);
}

/* A partly unrolled full tile of several reduce axes (plan.k_unroll): the
 * unroll sits on the innermost loops that run more than once, k_unroll
 * k-steps in all, not on a trip-1 last axis (c:32 r:1 s:1 ran its 32 k-steps
 * rolled, one a loop pass). The emitted loops are checked, and each kernel
 * verified on PoCL: C not a multiple of the channel tile, stride 2, NCHW
 * and NHWC, a tile split over c and s. */
Test(plans, conv_k_unroll_inner, .timeout = 600) {
    static const struct {
        const char *spec, *cfg, *loop, *pragma;
    } cases[] = {
        {"conv2d N=2 C=45 H=9 W=7 K=16 R=3 S=3 pad=1",
         "bn=1,bk=16,bp=2,bq=8,bc=32,br=1,bs=1,tn=1,tk=2,tp=1,tq=2,vn=1,vk=1,vp=1,vq=1,si=1,sf=1,stages=2",
         "for (int kr4 = 0; kr4 < 32; kr4++)", "#pragma unroll 16"},
        {"conv2d N=2 C=40 H=9 W=11 K=8 R=3 S=3 stride=2 pad=1 layout=nhwc",
         "bn=2,bp=2,bq=2,bk=8,bc=16,br=1,bs=2,tn=1,tp=1,tq=2,tk=4,vn=1,vp=1,vq=1,vk=1,si=1,sf=1,stages=2",
         "for (int kr4 = 0; kr4 < 16; kr4++)", "#pragma unroll 8"},
    };
    gs_ctx *ctx = gs_ctx_create();
    gs_device *cl = open_cl(ctx);
    gs_hw *hw = NULL;
    cr_assert_eq(gs_hw_load(ctx, "h100", &hw), GS_OK, "%s", gs_ctx_errmsg(ctx));
    paths c = {0};
    int ran = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        gs_op *op = NULL;
        gs_etir e;
        cr_assert_eq(gs_op_parse(ctx, cases[i].spec, &op), GS_OK, "%s", gs_ctx_errmsg(ctx));
        cr_assert_eq(gs_etir_parse_config(ctx, op, cases[i].cfg, &e), GS_OK, "%s: %s", cases[i].spec,
                     gs_ctx_errmsg(ctx));
        gs_plan p;
        gs_plan_make(hw, op, &e, NULL, &p);
        cr_assert_gt(p.k_unroll, 0, "%s: k_unroll %d (frag_pipe %d)", cases[i].spec, p.k_unroll, p.frag_pipe);
        gs_kernel_src ks;
        cr_assert_eq(gs_lower_emit_plan(ctx, op, &e, &p, GS_DIALECT_CUDA, hw->sm, &ks), GS_OK, "%s",
                     gs_ctx_errmsg(ctx));
        /* the full tile's loop (constant trip) and the pragma on the line before it */
        const char *loop = strstr(ks.src, cases[i].loop);
        cr_assert(loop, "%s: no loop %s", cases[i].spec, cases[i].loop);
        const char *eol = loop;
        while (eol > ks.src && eol[-1] != '\n') eol--;
        const char *bol = eol > ks.src ? eol - 1 : eol;
        while (bol > ks.src && bol[-1] != '\n') bol--;
        while (*bol == ' ') bol++;
        cr_expect(!strncmp(bol, cases[i].pragma, strlen(cases[i].pragma)) && bol[strlen(cases[i].pragma)] == '\n',
                  "%s: %s has %.*s before it, not %s", cases[i].spec, cases[i].loop, (int)(eol - bol), bol,
                  cases[i].pragma);
        gs_kernel_src_free(&ks);
        ran += run_variant(ctx, cl, hw, op, &e, &OPTS[0], 41 + i, "k unroll", &c);
        gs_op_destroy(op);
    }
    cr_expect_eq(ran, 2, "variants run: %d", ran);
    gs_hw_destroy(hw);
    gs_device_close(cl);
    gs_ctx_destroy(ctx);
}

/* Separable copy units (plan.unit_sep): a conv's staged input with many
 * non-linear units per thread takes unit 0's offsets plus the digits of
 * i * threads instead of recomputing each unit's offsets by division at every
 * tile. Awkward shapes and paths: C not a multiple of the channel tile, C=1,
 * prime H and W, stride and dilation (the im2col tile), NHWC and NCHW,
 * groups, cp.async and register copies, batched register copies (a rolled
 * loop over i, one stage), edge tiles, the plain and the fragment-pipelined
 * loops. */
Test(plans, conv_separable_units, .timeout = 600) {
    static const struct {
        const char *spec, *cfg;
    } cases[] = {
        {"conv2d N=3 C=13 H=11 W=7 K=10 R=3 S=3 pad=1",
         "bn=4,bk=16,bp=4,bq=4,bc=8,br=1,bs=1,tn=2,tk=4,tp=1,tq=4,vn=2,vk=1,vp=1,vq=1,si=1,sf=1,stages=2"},
        {"conv2d N=2 C=5 H=13 W=11 K=6 R=3 S=3 stride=2 dilation=2 pad=2",
         "bn=2,bk=8,bp=4,bq=4,bc=4,br=1,bs=1,tn=1,tk=4,tp=1,tq=4,vn=1,vk=1,vp=1,vq=1,si=1,sf=1,stages=3"},
        {"conv2d N=2 C=12 H=17 W=19 K=8 R=3 S=3 pad=1 layout=nhwc",
         "bn=2,bp=8,bq=8,bk=8,bc=1,br=1,bs=1,tn=2,tp=2,tq=4,tk=4,vn=1,vp=1,vq=1,vk=1,si=1,sf=1,stages=2"},
        {"conv2d N=2 C=1 H=17 W=13 K=8 R=3 S=3 pad=1",
         "bn=2,bk=8,bp=8,bq=8,bc=1,br=1,bs=1,tn=1,tk=2,tp=4,tq=8,vn=1,vk=1,vp=1,vq=1,si=1,sf=1,stages=2"},
        {"conv2d N=2 C=8 H=17 W=13 K=8 R=3 S=3 pad=1 groups=2",
         "bn=2,bg=1,bk=4,bp=8,bq=8,bc=4,br=1,bs=1,tn=1,tg=1,tk=2,tp=2,tq=4,vn=1,vg=1,vk=1,vp=1,vq=1,si=1,sf=1,stages=2"},
        /* one stage: a register copy of 16 units in rolled batches (i at run time) */
        {"conv2d N=3 C=13 H=11 W=7 K=10 R=3 S=3 pad=1",
         "bn=4,bk=16,bp=4,bq=4,bc=8,br=1,bs=1,tn=2,tk=4,tp=1,tq=4,vn=2,vk=1,vp=1,vq=1,si=1,sf=1,stages=1"},
    };
    gs_ctx *ctx = gs_ctx_create();
    gs_device *cl = open_cl(ctx);
    gs_hw *hw = NULL;
    cr_assert_eq(gs_hw_load(ctx, "a100", &hw), GS_OK, "%s", gs_ctx_errmsg(ctx));
    paths c = {0};
    int ran = 0, sep = 0, batched = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        gs_op *op = NULL;
        gs_etir e;
        cr_assert_eq(gs_op_parse(ctx, cases[i].spec, &op), GS_OK, "%s", gs_ctx_errmsg(ctx));
        cr_assert_eq(gs_etir_parse_config(ctx, op, cases[i].cfg, &e), GS_OK, "%s", gs_ctx_errmsg(ctx));
        for (int v = 0; v < 2; v++) {
            gs_plan_opts o = {0};
            o.no_async = (uint8_t)v;
            gs_plan p;
            gs_plan_make(hw, op, &e, &o, &p);
            bool any = false;
            for (int t = 0; t < op->ninputs; t++) {
                any |= p.in[t].unit_sep && !p.in[t].unit_recompute;
                batched += p.in[t].unit_sep && p.in[t].copy_batch < p.in[t].units_per_thread;
            }
            sep += any;
            ran += run_variant(ctx, cl, hw, op, &e, &o, 11 + i, "separable units", &c);
        }
        gs_op_destroy(op);
    }
    cr_expect_eq(ran, 12, "variants run: %d", ran);
    cr_expect_geq(sep, 10, "variants with separable units: %d", sep);
    cr_expect_geq(batched, 1, "separable copies in rolled batches: %d", batched);
    gs_hw_destroy(hw);
    gs_device_close(cl);
    gs_ctx_destroy(ctx);
}
