/* test_construct.c — the constructor: determinism for a seed, validity and
 * ordering of every candidate on every built-in profile, the Markov walk
 * against the exhaustive optimum, the paper's formulas (cache multiplier,
 * append probability, benefits (1)-(3)), option validation and the result
 * accessors.
 *
 * Shapes for the sweep come from tests/data/construct_shapes.txt (M N K per
 * line). Regression tests pin the defects found while writing these. */
#include "construct/construct.h"
#include "ir/mma.h"
#include "tests/test_common.h"

#include <criterion/criterion.h>
#include <jansson.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

TestSuite(construct);

/* ---- helpers --------------------------------------------------------------------- */

enum { AX_M = 0, AX_N = 1, AX_K = 2 };

/* gs_construct's default options. */
static gs_construct_opts opts_default(void) {
    gs_construct_opts o;
    gs_construct_opts_default(&o);
    return o;
}

static const gs_hw *hw_named(const char *name) {
    const gs_hw *hw = gs_hw_find_builtin(name);
    cr_assert_not_null(hw, "no built-in profile '%s'", name);
    return hw;
}

static gs_result *run(const gs_op *op, const gs_hw *hw, const gs_construct_opts *o) {
    gs_ctx *ctx = gs_ctx_create();
    gs_result *r = NULL;
    gs_status s = gs_construct(ctx, op, hw, o, &r);
    cr_assert_eq(s, GS_OK, "%s on %s: %s (%s)", op->spec, hw->name, gs_status_str(s), gs_ctx_errmsg(ctx));
    cr_assert_not_null(r);
    gs_ctx_destroy(ctx);
    return r;
}

/* Every candidate passes the check, is complete, round-trips through the
 * config form, its stored estimate is reproducible, and the list is sorted
 * by predicted time, ascending. */
static void assert_candidates_valid(const gs_result *r, const gs_op *op, const gs_hw *hw, int top_k) {
    int n = gs_result_count(r);
    cr_assert(n >= 1 && n <= top_k, "%s on %s: %d candidates (top_k %d)", op->spec, hw->name, n, top_k);
    gs_ctx *ctx = gs_ctx_create();
    for (int i = 0; i < n; i++) {
        const gs_etir *c = &r->cand[i];
        char cfg[256];
        gs_etir_format_config(op, c, cfg, sizeof cfg);
        cr_assert_eq(c->level, 0, "%s on %s: candidate %d (%s) is not complete", op->spec, hw->name, i, cfg);
        cr_assert(gs_hw_check(hw, op, c), "%s on %s: candidate %d (%s) fails gs_hw_check", op->spec, hw->name, i,
                  cfg);
        gs_resources res;
        gs_etir_resources(hw, op, c, &res);
        cr_assert(res.threads >= 1 && res.threads <= hw->max_threads_per_block, "%s: %lld threads", cfg,
                  (long long)res.threads);
        /* above 48 KiB the kernel opts in to dynamic shared memory */
        cr_assert_leq(res.smem_bytes, hw->smem_per_block_optin, "%s: %lld B of shared memory", cfg,
                      (long long)res.smem_bytes);
        cr_assert_leq(res.regs_per_thread, hw->max_regs_per_thread, "%s", cfg);
        double t = gs_result_predicted_s(r, i);
        cr_assert(isfinite(t) && t > 0, "%s on %s: candidate %d predicted %g s", op->spec, hw->name, i, t);
        gs_estimate est;
        gs_estimate_etir(hw, op, c, 0, &est);
        cr_assert(est.time_s == t, "%s: stored estimate %g, recomputed %g", cfg, t, est.time_s);
        if (i > 0)
            cr_assert_leq(gs_result_predicted_s(r, i - 1), t, "%s on %s: candidates %d and %d out of order (%g > %g)",
                          op->spec, hw->name, i - 1, i, gs_result_predicted_s(r, i - 1), t);
        for (int j = 0; j < i; j++)
            cr_assert(memcmp(&r->cand[j], c, sizeof *c) != 0, "%s: candidates %d and %d are the same state", cfg, j,
                      i);
        gs_etir back;
        cr_assert_eq(gs_etir_parse_config(ctx, op, cfg, &back), GS_OK, "'%s': %s", cfg, gs_ctx_errmsg(ctx));
        cr_assert(memcmp(&back, c, sizeof back) == 0, "config '%s' does not round-trip", cfg);
        cr_assert(gs_result_describe(r, i)[0], "candidate %d has no description", i);
    }
    gs_ctx_destroy(ctx);
}

/* run, then assert_candidates_valid with the options' top_k. */
static gs_result *run_valid(const gs_op *op, const gs_hw *hw, const gs_construct_opts *o) {
    gs_result *r = run(op, hw, o);
    assert_candidates_valid(r, op, hw, o->top_k);
    return r;
}

/* Shapes from tests/data/construct_shapes.txt. */
typedef struct shape { int64_t M, N, K; } shape;
static int load_shapes(shape *out, int cap) {
    gs_test_lines l;
    gs_test_lines_read("construct_shapes.txt", &l);
    cr_assert_leq(l.n, cap);
    for (int n = 0; n < l.n; n++) {
        long long M, N, K;
        cr_assert_eq(sscanf(l.text[n], "%lld %lld %lld", &M, &N, &K), 3, "%s:%d: expected 'M N K'", l.path,
                     l.lineno[n]);
        out[n] = (shape){M, N, K};
    }
    int n = l.n;
    cr_assert_geq(n, 3, "only %d shapes in %s", n, l.path);
    gs_test_lines_free(&l);
    return n;
}

/* ---- determinism ------------------------------------------------------------------- */

static void assert_same_result(const gs_result *a, const gs_result *b, const char *what) {
    cr_assert_eq(a->n, b->n, "%s: %d vs %d candidates", what, a->n, b->n);
    cr_assert(memcmp(a->cand, b->cand, sizeof a->cand[0] * (size_t)a->n) == 0, "%s: candidate arrays differ", what);
    for (int i = 0; i < a->n; i++) {
        cr_assert(a->est[i].time_s == b->est[i].time_s, "%s: candidate %d time %.17g vs %.17g", what, i,
                  a->est[i].time_s, b->est[i].time_s);
        cr_assert_str_eq(gs_result_describe(a, i), gs_result_describe(b, i), "%s", what);
    }
    cr_assert_eq(a->steps, b->steps, "%s: steps", what);
    cr_assert_eq(a->pooled, b->pooled, "%s: pooled", what);
}

Test(construct, same_seed_same_result) {
    const gs_hw *hw = hw_named("rtx3090");
    gs_op op = gs_test_gemm(1024, 768, 512), other = gs_test_gemm(2039, 64, 4096);
    static const gs_policy pols[] = {GS_POLICY_MODEL, GS_POLICY_PAPER, GS_POLICY_BALANCED};
    for (int p = 0; p < 3; p++) {
        gs_construct_opts o = opts_default();
        o.seed = 7;
        o.top_k = 10;
        o.policy = pols[p];
        gs_result *a = run(&op, hw, &o);
        /* an unrelated construction in between must not leak state */
        gs_result *x = run(&other, hw, &o);
        gs_result *b = run(&op, hw, &o);
        char what[64];
        snprintf(what, sizeof what, "policy %d, seed 7", (int)pols[p]);
        assert_same_result(a, b, what);
        gs_result_destroy(a);
        gs_result_destroy(b);
        gs_result_destroy(x);
    }
}

/* The workers change only the time: the walk's chains and the polishes on
 * 1, 2, 3 or 8 threads give the same candidates, estimates, steps, pool and
 * states priced, for a gemm, a long reduction and a 1x1 conv (whose two
 * forms are constructed at once). */
Test(construct, threads_same_result, .timeout = 120) {
    static const char *cases[][2] = {{"gemm M=1024 N=768 K=512", "rtx3090"},
                                     {"rowsum M=4 K=1048576", "h100"},
                                     {"conv2d N=1 C=512 H=28 W=28 K=128 R=1 S=1 layout=nchw", "t4"}};
    gs_ctx *ctx = gs_ctx_create();
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        gs_op *op = NULL;
        cr_assert_eq(gs_op_parse(ctx, cases[i][0], &op), GS_OK, "%s", gs_ctx_errmsg(ctx));
        gs_construct_opts o = opts_default();
        o.top_k = 8;
        o.conv_form = GS_FORM_AUTO;
        o.threads = 1;
        gs_result *a = run(op, hw_named(cases[i][1]), &o);
        static const int threads[] = {2, 3, 8};
        for (size_t k = 0; k < sizeof threads / sizeof threads[0]; k++) {
            o.threads = threads[k];
            gs_result *b = run(op, hw_named(cases[i][1]), &o);
            char what[160];
            snprintf(what, sizeof what, "%s on %s, %d threads against 1", cases[i][0], cases[i][1], threads[k]);
            assert_same_result(a, b, what);
            cr_assert_eq(a->evaluated, b->evaluated, "%s: states priced", what);
            cr_assert_eq(b->opts.threads, threads[k], "%s: the result keeps the threads asked for", what);
            gs_result_destroy(b);
        }
        gs_result_destroy(a);
        gs_op_destroy(op);
    }
    gs_ctx_destroy(ctx);
}

/* A construction runs on a caller's thread with a small stack: 112 KB, under
 * musl's 128 KB default for a new thread (glibc gives 8 MB). The polish's
 * neighbour arrays (104 KB) lived on the stack and took it past 144 KB; they
 * are each worker's memo's now (about 80 KB was enough on x86-64). The result
 * is the one of the calling thread's default stack. Under the sanitizers the
 * frames are larger, so the stack is too; where the platform's least thread
 * stack is larger (glibc on aarch64: 128 KB), that. */
typedef struct small_stack_job {
    const gs_op *op;
    const gs_hw *hw;
    gs_construct_opts o;
    gs_result *r;
} small_stack_job;

static void *construct_on_thread(void *arg) {
    small_stack_job *j = arg;
    gs_ctx *ctx = gs_ctx_create();
    if (gs_construct(ctx, j->op, j->hw, &j->o, &j->r) != GS_OK) j->r = NULL;
    gs_ctx_destroy(ctx);
    return NULL;
}

Test(construct, runs_on_a_small_thread_stack, .timeout = 120) {
    static const char *cases[][2] = {{"gemm M=1024 N=768 K=512", "rtx3090"},
                                     {"conv2d N=1 C=512 H=28 W=28 K=128 R=1 S=1 layout=nchw", "t4"}};
    /* at least the platform's least thread stack (glibc on aarch64: 128 KB, for 64 KB pages) */
    const long least = sysconf(_SC_THREAD_STACK_MIN);
    size_t stack = getenv("GS_ASAN") ? (size_t)1 << 20 : (size_t)112 << 10;
    if (least > 0 && (size_t)least > stack) stack = (size_t)least;
    gs_ctx *ctx = gs_ctx_create();
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        gs_op *op = NULL;
        cr_assert_eq(gs_op_parse(ctx, cases[i][0], &op), GS_OK, "%s", gs_ctx_errmsg(ctx));
        small_stack_job j = {op, hw_named(cases[i][1]), opts_default(), NULL};
        j.o.top_k = 4;
        j.o.threads = 1; /* the walk and the polish on that thread */
        pthread_attr_t at;
        pthread_t th;
        cr_assert_eq(pthread_attr_init(&at), 0);
        cr_assert_eq(pthread_attr_setstacksize(&at, stack), 0);
        cr_assert_eq(pthread_create(&th, &at, construct_on_thread, &j), 0);
        pthread_join(th, NULL);
        pthread_attr_destroy(&at);
        cr_assert_not_null(j.r, "%s on %s failed on a %zu KB stack", cases[i][0], cases[i][1], stack >> 10);
        gs_result *a = run(op, j.hw, &j.o);
        char what[160];
        snprintf(what, sizeof what, "%s on %s, a %zu KB thread stack against the main thread's", cases[i][0],
                 cases[i][1], stack >> 10);
        assert_same_result(a, j.r, what);
        gs_result_destroy(a);
        gs_result_destroy(j.r);
        gs_op_destroy(op);
    }
    gs_ctx_destroy(ctx);
}

/* The prices' table grows before the polish where the walk filled more
 * than a fifth of it (memo_grow: a large conv; 2^14 slots filled to 88 %
 * lost prices), the workers then sharing the grown table; a small operator
 * keeps its table. Growing changes no result: the grown construction's on 1,
 * 2 and 4 workers are one thread's. */
Test(construct, prices_table_grows_for_large_operators, .timeout = 300) {
    gs_ctx *ctx = gs_ctx_create();
    gs_op *small = NULL, *large = NULL;
    cr_assert_eq(gs_op_parse(ctx, "gemm M=1024 N=768 K=512", &small), GS_OK, "%s", gs_ctx_errmsg(ctx));
    cr_assert_eq(gs_op_parse(ctx, "conv2d N=1 C=3 H=224 W=224 K=64 R=7 S=7 stride=2 pad=3 layout=nchw bias=1 relu=1",
                             &large),
                 GS_OK, "%s", gs_ctx_errmsg(ctx));
    gs_construct_opts o = opts_default();
    o.threads = 1;
    gs_result *s = run(small, hw_named("rtx3090"), &o);
    cr_assert_eq(s->prices_cap, 1 << 14, "the small gemm's table grew to %lld slots", (long long)s->prices_cap);
    gs_result *a = run(large, hw_named("rtx3090"), &o);
    cr_assert_eq(a->prices_cap, 1 << 16, "the 7x7 conv's table has %lld slots, not grown", (long long)a->prices_cap);
    static const int threads[] = {2, 4};
    for (size_t k = 0; k < sizeof threads / sizeof threads[0]; k++) {
        o.threads = threads[k];
        gs_result *b = run(large, hw_named("rtx3090"), &o);
        char what[96];
        snprintf(what, sizeof what, "the 7x7 conv on rtx3090, %d threads against 1", threads[k]);
        assert_same_result(a, b, what);
        cr_assert_eq(a->evaluated, b->evaluated, "%s: states priced", what);
        cr_assert_eq(b->prices_cap, 1 << 16, "%s: the table", what);
        gs_result_destroy(b);
    }
    gs_result_destroy(a);
    gs_result_destroy(s);
    gs_op_destroy(large);
    gs_op_destroy(small);
    gs_ctx_destroy(ctx);
}

/* The default threads (0) start the helpers only for the work worth them
 * (GS_HELP_AFTER_MS): started late, after the calling thread's second job
 * of a phase, sharing its prices and with copies of its other tables
 * (memo_clone), or never, the result and the states priced are one thread's. */
Test(construct, helpers_started_late_same_result, .timeout = 120) {
    static const char *cases[][2] = {{"gemm M=1024 N=768 K=512", "rtx3090"},
                                     {"rowsum M=4 K=1048576", "h100"},
                                     {"conv2d N=1 C=512 H=28 W=28 K=128 R=1 S=1 layout=nchw", "t4"}};
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    gs_ctx *ctx = gs_ctx_create();
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        gs_op *op = NULL;
        cr_assert_eq(gs_op_parse(ctx, cases[i][0], &op), GS_OK, "%s", gs_ctx_errmsg(ctx));
        gs_construct_opts o = opts_default();
        o.top_k = 8;
        o.conv_form = GS_FORM_AUTO;
        o.threads = 1;
        gs_result *a = run(op, hw_named(cases[i][1]), &o);
        cr_assert_eq(a->workers, 1, "%s: one thread asked, %d ran", cases[i][0], a->workers);
        o.threads = 0;
        static const char *after[] = {"0", "1e9"};
        for (size_t k = 0; k < sizeof after / sizeof after[0]; k++) {
            setenv("GS_HELP_AFTER_MS", after[k], 1);
            gs_result *b = run(op, hw_named(cases[i][1]), &o);
            unsetenv("GS_HELP_AFTER_MS");
            char what[160];
            snprintf(what, sizeof what, "%s on %s, helpers after %s ms against 1 thread", cases[i][0], cases[i][1], after[k]);
            assert_same_result(a, b, what);
            cr_assert_eq(a->evaluated, b->evaluated, "%s: states priced", what);
            cr_assert_eq(b->opts.threads, 0, "%s: the result keeps the threads asked for", what);
            /* the online CPUs up to 4 (a 1x1 conv's two forms share them) */
            int nw = cpus < 1 ? 1 : cpus > 4 ? 4 : (int)cpus, most = k == 1 ? 1 : i == 2 ? nw - nw / 2 : nw;
            if (i == 2) cr_assert(b->workers >= 1 && b->workers <= most, "%s: %d workers ran", what, b->workers);
            else cr_assert_eq(b->workers, most, "%s: %d workers ran (%d expected)", what, b->workers, most);
            gs_result_destroy(b);
        }
        gs_result_destroy(a);
        gs_op_destroy(op);
    }
    gs_ctx_destroy(ctx);
}

/* The default threads' helpers start early only when the machine has a core
 * to spare beside the calling thread: more than half a core idle once the
 * other processes' busy cores are counted, with two CPUs online and two
 * allowed; an unknown figure spares none. */
Test(construct, helpers_start_early_on_an_idle_core) {
    cr_assert(gs_help_early(0.0, 2, 2), "idle 2-core machine");
    cr_assert(gs_help_early(0.49, 2, 2), "2 cores, another process on half a core");
    cr_assert(!gs_help_early(0.5, 2, 2), "2 cores, half a core idle beside the calling thread");
    cr_assert(!gs_help_early(1.0, 2, 2), "2 cores, another run at once");
    cr_assert(!gs_help_early(14.0, 2, 2), "2 cores, load 15");
    cr_assert(gs_help_early(4.0, 6, 6), "6 cores (orin), 4 busy");
    cr_assert(!gs_help_early(4.6, 6, 6), "6 cores, 4.6 busy");
    cr_assert(!gs_help_early(0.0, 1, 1), "one CPU");
    cr_assert(!gs_help_early(0.0, 16, 1), "an affinity of one CPU on an idle 16-core machine");
    cr_assert(gs_help_early(0.0, 16, 2), "an affinity of two CPUs on an idle machine");
    cr_assert(!gs_help_early(-1.0, 16, 16), "no figure of the machine's load");
    cr_assert(!gs_help_early(0.0, 0, 0), "no CPU count");
}

/* A different seed changes the walk: the count of walk steps (a sum over 16
 * chains of the step at which each chain cached into level 0) differs for
 * these two seeds. Verified for this case; not a general claim. */
Test(construct, other_seed_other_walk) {
    const gs_hw *hw = hw_named("rtx3090");
    gs_op op = gs_test_gemm(1024, 1024, 1024);
    gs_construct_opts o = opts_default();
    o.policy = GS_POLICY_PAPER;
    o.seed = 1;
    gs_result *a = run(&op, hw, &o);
    o.seed = 2;
    gs_result *b = run(&op, hw, &o);
    bool differ = a->steps != b->steps || a->pooled != b->pooled ||
                  memcmp(a->cand, b->cand, sizeof a->cand[0] * (size_t)(a->n < b->n ? a->n : b->n)) != 0;
    cr_assert(differ, "seeds 1 and 2 gave identical walks (steps %lld, pooled %lld)", (long long)a->steps,
              (long long)a->pooled);
    gs_result_destroy(a);
    gs_result_destroy(b);
}

/* ---- validity on every profile -------------------------------------------------------- */

Test(construct, candidates_valid_on_every_profile) {
    shape shapes[32];
    int ns = load_shapes(shapes, 32);
    int runs = 0;
    for (int h = 0; h < gs_hw_builtin_count(); h++) {
        const gs_hw *hw = gs_hw_builtin(h);
        cr_assert_not_null(hw);
        for (int s = 0; s < ns; s++) {
            gs_op op = gs_test_gemm(shapes[s].M, shapes[s].N, shapes[s].K);
            gs_construct_opts o = opts_default();
            o.top_k = 8;
            double t0 = gs_now_s();
            gs_result *r = run(&op, hw, &o);
            double wall = gs_now_s() - t0;
            assert_candidates_valid(r, &op, hw, o.top_k);
            /* the result carries copies of its inputs */
            cr_assert_str_eq(r->op.spec, op.spec);
            cr_assert_str_eq(r->hw.name, hw->name);
            /* its construction time is the walk's own: positive, within the call */
            cr_assert(gs_result_construct_s(r) > 0 && gs_result_construct_s(r) <= wall,
                      "construct_s %.6f s, the call took %.6f s", gs_result_construct_s(r), wall);
            gs_result_destroy(r);
            runs++;
        }
    }
    cr_assert_eq(runs, 7 * ns);
}

Test(construct, tiny_gemm_1x1x1) {
    gs_op op = gs_test_gemm(1, 1, 1);
    for (int h = 0; h < gs_hw_builtin_count(); h++) {
        gs_construct_opts o = opts_default();
        gs_result *r = run(&op, gs_hw_builtin(h), &o);
        /* the only legal state: every tile 1 */
        cr_assert_eq(r->n, 1, "%s: %d candidates for 1x1x1", gs_hw_builtin_name(h), r->n);
        for (int d = 0; d < 3; d++) {
            cr_assert_eq(r->cand[0].tile[d].block, 1);
            cr_assert_eq(r->cand[0].tile[d].thread, 1);
            cr_assert_eq(r->cand[0].V[d], 1);
        }
        gs_result_destroy(r);
    }
}

Test(construct, paper_and_balanced_policies_valid) {
    static const gs_policy pols[] = {GS_POLICY_PAPER, GS_POLICY_BALANCED};
    static const char *hws[] = {"rtx4090", "orin-nano"};
    static const int64_t shapes[][3] = {{2039, 2039, 2039}, {65536, 4, 1024}, {512, 512, 512}, {1, 4096, 4096}};
    for (int p = 0; p < 2; p++)
        for (int h = 0; h < 2; h++)
            for (int s = 0; s < 4; s++) {
                gs_op op = gs_test_gemm(shapes[s][0], shapes[s][1], shapes[s][2]);
                const gs_hw *hw = hw_named(hws[h]);
                gs_construct_opts o = opts_default();
                o.policy = pols[p];
                o.top_k = 6;
                o.seed = 3;
                gs_result *r = run_valid(&op, hw, &o);
                gs_result_destroy(r);
            }
}

Test(construct, random_strategy_valid) {
    gs_op op = gs_test_gemm(1000, 300, 77);
    const gs_hw *hw = hw_named("t4");
    gs_construct_opts o = opts_default();
    o.strategy = GS_STRATEGY_RANDOM;
    o.top_k = 5;
    gs_result *r = run_valid(&op, hw, &o);
    gs_result *r2 = run(&op, hw, &o);
    assert_same_result(r, r2, "random strategy, same seed");
    gs_result_destroy(r);
    gs_result_destroy(r2);
}

/* ---- Markov walk vs the exhaustive optimum ----------------------------------------------- */

/* (the timeout allows the ASan/UBSan build, about 3x slower on the exhaustive enumerations) */
Test(construct, markov_within_115_percent_of_exhaustive, .timeout = 240) {
    static const struct { const char *hw; int64_t M, N, K; } cases[] = {
        {"orin-nano", 65536, 4, 1024},
        {"rtx3090", 1024, 1024, 1024},
        {"rtx3090", 2039, 2039, 2039},
        {"orin-nano", 512, 512, 512},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        /* the sanitizer pass: the first (its exhaustive space is a quarter of the others') */
        if (!gs_test_case_runs((long)i, 4)) continue;
        const gs_hw *hw = hw_named(cases[i].hw);
        gs_op op = gs_test_gemm(cases[i].M, cases[i].N, cases[i].K);
        gs_construct_opts o = opts_default();
        gs_result *mk = run(&op, hw, &o);
        o.strategy = GS_STRATEGY_EXHAUSTIVE;
        o.top_k = 3;
        gs_result *ex = run(&op, hw, &o);
        cr_assert_not(ex->capped, "%s on %s: the exhaustive enumeration hit its cap", op.spec, hw->name);
        /* regression: states_ranked ("pooled") was overwritten with the empty pool's 0 */
        cr_assert(ex->pooled > 0 && ex->pooled == ex->evaluated, "%s on %s: exhaustive ranked %lld states, estimated %lld",
                  op.spec, hw->name, (long long)ex->pooled, (long long)ex->evaluated);
        assert_candidates_valid(ex, &op, hw, o.top_k);
        double tm = gs_result_predicted_s(mk, 0), te = gs_result_predicted_s(ex, 0);
        /* the exhaustive optimum is a lower bound on any walk result */
        cr_assert_geq(tm, te * (1 - 1e-12), "%s on %s: markov %.6g s beats the exhaustive optimum %.6g s (%s vs %s)",
                      op.spec, hw->name, tm, te, gs_result_describe(mk, 0), gs_result_describe(ex, 0));
        cr_assert_leq(tm, 1.15 * te, "%s on %s: markov best %.6g s is %.3fx the exhaustive best %.6g s (%s vs %s)",
                      op.spec, hw->name, tm, tm / te, te, gs_result_describe(mk, 0), gs_result_describe(ex, 0));
        gs_result_destroy(mk);
        gs_result_destroy(ex);
    }
}

/* ---- formulas ------------------------------------------------------------------------------- */

Test(construct, cache_multiplier) {
    /* 3 / (1 + exp(-(ln 5 / 10)(t - 10))): at t=0 the exponent is ln 5 */
    cr_assert_float_eq(gs_cache_multiplier(0), 0.5, 1e-12, "t=0: %.15g", gs_cache_multiplier(0));
    cr_assert_float_eq(gs_cache_multiplier(10), 1.5, 1e-12, "t=10: %.15g", gs_cache_multiplier(10));
    cr_assert_float_eq(gs_cache_multiplier(20), 3.0 / (1.0 + 0.2), 1e-12, "t=20: 3/(1+1/5) = 2.5");
    double prev = gs_cache_multiplier(0);
    for (int t = 1; t <= 200; t++) {
        double m = gs_cache_multiplier(t);
        cr_assert_gt(m, prev, "not increasing at t=%d: %.15g <= %.15g", t, m, prev);
        cr_assert_lt(m, 3.0 + 1e-12, "t=%d: %.15g above the limit 3", t, m);
        prev = m;
    }
    cr_assert_float_eq(gs_cache_multiplier(200), 3.0, 1e-6);
}

/* 1 - 1/(1 + exp(-0.5(-ln T - 10))). At T = 1 the exponent is +5, so the
 * probability is 1 - 1/(1 + e^5) ~= 0.99331. (The brief for this file said
 * 1 - 1/(1 + e^-5), which is 0.0067 and does not match the formula.) */
Test(construct, append_probability) {
    cr_assert_float_eq(gs_append_probability(1.0), 1.0 - 1.0 / (1.0 + exp(5.0)), 1e-12, "T=1: %.15g",
                       gs_append_probability(1.0));
    /* -ln T = 10: exponent 0, probability 1/2 */
    cr_assert_float_eq(gs_append_probability(exp(-10.0)), 0.5, 1e-12);
    /* decreasing in -ln T, i.e. as the walk cools */
    double prev = gs_append_probability(1.0);
    for (int k = 1; k <= 60; k++) {
        double T = ldexp(1.0, -k);
        double p = gs_append_probability(T);
        cr_assert_lt(p, prev, "not decreasing at T=2^-%d: %.15g >= %.15g", k, p, prev);
        cr_assert(p > 0 && p < 1, "T=2^-%d: %.15g", k, p);
        cr_assert_float_eq(p, 1.0 - 1.0 / (1.0 + exp(-0.5 * (-log(T) - 10.0))), 1e-12);
        prev = p;
    }
}

Test(construct, benefit_tiling_paper_growth_and_reciprocal) {
    gs_op op = gs_test_gemm(256, 256, 256);
    static const int starts[][3] = {{1, 1, 1}, {16, 16, 8}, {32, 64, 8}, {64, 32, 32}};
    int checked = 0;
    for (size_t s = 0; s < sizeof starts / sizeof starts[0]; s++)
        for (int d = 0; d < 3; d++) {
            gs_etir e = gs_test_gemm_block_state(&op, starts[s][0], starts[s][1], starts[s][2]), g;
            gs_action tile = {GS_ACT_TILE, d, 0};
            cr_assert(gs_etir_apply(&op, &e, tile, 256, &g));
            double grow = gs_benefit_tiling(&op, &e, &g, 2, GS_POLICY_PAPER);
            double shrink = gs_benefit_tiling(&op, &g, &e, 2, GS_POLICY_PAPER);
            cr_assert_gt(grow, 1.0, "growing axis %d from %dx%dx%d: paper benefit %.6g <= 1", d, starts[s][0],
                         starts[s][1], starts[s][2], grow);
            cr_assert_lt(shrink, 1.0, "shrinking axis %d back: paper benefit %.6g >= 1", d, shrink);
            cr_assert(fabs(shrink * grow - 1.0) < 1e-12, "shrink %.17g is not 1/grow (grow %.17g)", shrink, grow);
            /* Q(T) F(T') / (Q(T') F(T)), by hand from the analysis */
            int64_t b0[GS_MAX_AXES], b1[GS_MAX_AXES];
            gs_etir_box(&op, &e, 2, b0);
            gs_etir_box(&op, &g, 2, b1);
            double want = gs_traffic(&op, b0) * gs_footprint_total(&op, b1) /
                          (gs_traffic(&op, b1) * gs_footprint_total(&op, b0));
            cr_assert(fabs(grow / want - 1) < 1e-12, "paper benefit %.17g, formula %.17g", grow, want);
            checked++;
        }
    cr_assert_eq(checked, 12);
    /* a hand-computed case: 16x16x8 -> 32x16x8 on 256^3.
     * Q = tiles * (bm*bk + bk*bn) + 65536. Before: 16*16*32 = 8192 tiles * 256 +
     * 65536 = 2162688; after: 8*16*32 = 4096 tiles * 384 + 65536 = 1638400.
     * F = bm*bk + bk*bn + bm*bn: before 128+128+256 = 512, after 256+128+512 = 896.
     * Paper: (2162688 * 896) / (1638400 * 512) = 2.31 */
    gs_etir e = gs_test_gemm_block_state(&op, 16, 16, 8), g = gs_test_gemm_block_state(&op, 32, 16, 8);
    double want = (2162688.0 * 896.0) / (1638400.0 * 512.0);
    cr_assert_float_eq(gs_benefit_tiling(&op, &e, &g, 2, GS_POLICY_PAPER), want, 1e-12);
    cr_assert_float_eq(gs_benefit_tiling(&op, &e, &g, 2, GS_POLICY_BALANCED), (2162688.0 * 512.0) / (1638400.0 * 896.0),
                       1e-12);
}

/* BALANCED is Q(T)F(T) / (Q(T')F(T')), at level 2 and at level 1. */
Test(construct, benefit_tiling_balanced_identity) {
    gs_op op = gs_test_gemm(1000, 333, 777);
    int checked = 0;
    for (int bm = 1; bm <= 128; bm *= 4)
        for (int bn = 2; bn <= 64; bn *= 4)
            for (int bk = 1; bk <= 32; bk *= 8)
                for (int d = 0; d < 3; d++)
                    for (int k = 0; k < 2; k++) {
                        gs_etir e = gs_test_gemm_block_state(&op, bm, bn, bk), g;
                        gs_action a = {k ? GS_ACT_INVTILE : GS_ACT_TILE, d, 0};
                        if (!gs_etir_apply(&op, &e, a, 256, &g)) continue;
                        int64_t b0[GS_MAX_AXES], b1[GS_MAX_AXES];
                        gs_etir_box(&op, &e, 2, b0);
                        gs_etir_box(&op, &g, 2, b1);
                        double want = gs_traffic(&op, b0) * gs_footprint_total(&op, b0) /
                                      (gs_traffic(&op, b1) * gs_footprint_total(&op, b1));
                        double got = gs_benefit_tiling(&op, &e, &g, 2, GS_POLICY_BALANCED);
                        cr_assert(fabs(got / want - 1) < 1e-12, "%dx%dx%d axis %d %s: %.17g vs %.17g", bm, bn, bk, d,
                                  k ? "invTile" : "tile", got, want);
                        checked++;
                    }
    cr_assert_gt(checked, 50);
    /* level 1: thread tiles, reduce axes count 1 */
    gs_etir e = gs_test_gemm_block_state(&op, 128, 64, 8), l1, g;
    gs_action c = {GS_ACT_CACHE, -1, 0}, t = {GS_ACT_TILE, AX_N, 0};
    cr_assert(gs_etir_apply(&op, &e, c, 256, &l1));
    cr_assert(gs_etir_apply(&op, &l1, t, 256, &g));
    int64_t b0[GS_MAX_AXES], b1[GS_MAX_AXES];
    gs_etir_box(&op, &l1, 1, b0);
    gs_etir_box(&op, &g, 1, b1);
    cr_assert_eq(b0[AX_K], 1);
    double want = gs_traffic(&op, b0) * gs_footprint_total(&op, b0) / (gs_traffic(&op, b1) * gs_footprint_total(&op, b1));
    cr_assert(fabs(gs_benefit_tiling(&op, &l1, &g, 1, GS_POLICY_BALANCED) / want - 1) < 1e-12);
    double paper = gs_traffic(&op, b0) * gs_footprint_total(&op, b1) / (gs_traffic(&op, b1) * gs_footprint_total(&op, b0));
    cr_assert(fabs(gs_benefit_tiling(&op, &l1, &g, 1, GS_POLICY_PAPER) / paper - 1) < 1e-12);
}

/* Formula (3): ceil(x/W) / ceil(x/(V W)). A level-1 state of a 256^3 gemm
 * with bm=16, tm=1 and bn=128, tn=8 has 16 threads along n; a warp's lanes
 * along n are min(16, 32) = 16, each T1 = 8 words wide, so x = 128 words and
 * W = 32 banks: ceil(128/32) = 4 at V = 1. */
Test(construct, benefit_vthread_hand_computed) {
    const gs_hw *hw = hw_named("rtx3090");
    cr_assert_eq(hw->smem_banks, 32);
    gs_op op = gs_test_gemm(256, 256, 256);
    gs_etir e = gs_test_gemm_block_state(&op, 16, 128, 8);
    e.tile[AX_N].thread = 8;
    e.level = 1;
    cr_assert(gs_etir_wellformed(&op, &e));
    cr_assert_eq(gs_etir_threads(&op, &e), 256);
    /* V=2: 4 / ceil(128/64) = 2; V=4: 4 / 1 = 4; V=8: 4 / ceil(128/256) = 4 */
    cr_assert_float_eq(gs_benefit_vthread(hw, &op, &e, AX_N, 2), 2.0, 1e-12);
    cr_assert_float_eq(gs_benefit_vthread(hw, &op, &e, AX_N, 4), 4.0, 1e-12);
    cr_assert_float_eq(gs_benefit_vthread(hw, &op, &e, AX_N, 8), 4.0, 1e-12);
    for (int v = 2; v <= 8; v *= 2) {
        double x = 16.0 * 8, W = 32;
        cr_assert_float_eq(gs_benefit_vthread(hw, &op, &e, AX_N, v), ceil(x / W) / ceil(x / (v * W)), 1e-12, "V=%d", v);
    }
    /* along m: 16 threads, T1 = 1 -> x = 16 < W: no vthread can help (only V=1 fits T1 anyway) */
    cr_assert_float_eq(gs_benefit_vthread(hw, &op, &e, AX_M, 1), 1.0, 1e-12);
}

Test(construct, benefit_caching_above_one) {
    for (int h = 0; h < gs_hw_builtin_count(); h++) {
        const gs_hw *hw = gs_hw_builtin(h);
        gs_op op = gs_test_gemm(1024, 1024, 1024);
        gs_etir e = gs_test_gemm_block_state(&op, 64, 64, 8), l1;
        double b2 = gs_benefit_caching(hw, &op, &e, 2);
        cr_assert(isfinite(b2) && b2 > 1.0, "%s: level-2 caching benefit %.6g", hw->name, b2);
        gs_action c = {GS_ACT_CACHE, -1, 0};
        cr_assert(gs_etir_apply(&op, &e, c, 256, &l1));
        double b1 = gs_benefit_caching(hw, &op, &l1, 1);
        cr_assert(isfinite(b1) && b1 > 1.0, "%s: level-1 caching benefit %.6g", hw->name, b1);
    }
    /* formula (2) by hand for rtx3090 at level 2: S = 4 * (64*8 + 8*64 + 64*64) B */
    const gs_hw *hw = hw_named("rtx3090");
    gs_op op = gs_test_gemm(1024, 1024, 1024);
    gs_etir e = gs_test_gemm_block_state(&op, 64, 64, 8);
    double S = 4.0 * (512 + 512 + 4096);
    double clk = hw->clock_mhz * 1e6;
    double low = hw->dram_latency_ns * 1e-9 + S / (hw->dram_gbs * 1e9 / hw->num_sms);
    double high = hw->smem_latency_ns * 1e-9 + S / (hw->smem_banks * hw->bank_bytes * clk);
    cr_assert_float_eq(gs_benefit_caching(hw, &op, &e, 2), low / high, 1e-9 * (low / high));
}

Test(construct, action_benefit_and_enumeration) {
    const gs_hw *hw = hw_named("rtx3090");
    gs_op op = gs_test_gemm(100, 64, 1);
    gs_etir e, next;
    gs_etir_init(&op, &e);
    gs_action acts[64];
    /* level 2: tile + invTile per axis, and cache */
    int n = gs_actions_enumerate(&op, &e, acts, 64);
    cr_assert_eq(n, 7);
    cr_assert_eq(acts[n - 1].kind, GS_ACT_CACHE);
    cr_assert_leq(gs_actions_enumerate(&op, &e, acts, 3), 3, "cap respected");
    /* not applicable -> 0: invTile below 1, tile of an extent-1 axis */
    gs_action inv = {GS_ACT_INVTILE, AX_M, 0}, tk = {GS_ACT_TILE, AX_K, 0}, tm = {GS_ACT_TILE, AX_M, 0};
    for (int p = 0; p < 3; p++) {
        cr_assert_eq(gs_action_benefit(hw, &op, &e, inv, (gs_policy)p, &next), 0.0, "policy %d", p);
        cr_assert_eq(gs_action_benefit(hw, &op, &e, tk, (gs_policy)p, &next), 0.0, "policy %d", p);
        cr_assert_gt(gs_action_benefit(hw, &op, &e, tm, (gs_policy)p, &next), 0.0, "policy %d", p);
    }
    /* over the shared-memory limit -> 0 (the memory check). Above 48 KiB a
     * kernel opts in to dynamic shared memory, up to the profile's opt-in
     * maximum (99 KiB on the rtx3090): 128x128x64 takes 67 KiB with its
     * padding, 128x128x128 about 132 KiB */
    gs_op big = gs_test_gemm(4096, 4096, 4096);
    gs_etir over = gs_test_gemm_block_state(&big, 128, 128, 128);
    cr_assert_not(gs_hw_check(hw, &big, &over));
    gs_etir fits = gs_test_gemm_block_state(&big, 128, 128, 64);
    gs_action grow = {GS_ACT_TILE, AX_K, 0};
    cr_assert(gs_hw_check(hw, &big, &fits));
    cr_assert_eq(gs_action_benefit(hw, &big, &fits, grow, GS_POLICY_PAPER, &next), 0.0,
                 "a move over shared memory must have benefit 0");
    /* level 0: no actions */
    e.level = 0;
    cr_assert_eq(gs_actions_enumerate(&op, &e, acts, 64), 0);
}

/* ---- options and accessors ------------------------------------------------------------------- */

Test(construct, options_validation) {
    gs_ctx *ctx = gs_ctx_create();
    gs_op op = gs_test_gemm(64, 64, 64);
    const gs_hw *hw = hw_named("t4");
    gs_construct_opts o;
    gs_result *r;
#define BAD(stmt, needle)                                                                           \
    do {                                                                                            \
        gs_construct_opts_default(&o);                                                              \
        stmt;                                                                                       \
        r = (gs_result *)ctx;                                                                       \
        ctx->msg[0] = 0;                                                                            \
        gs_status s = gs_construct(ctx, &op, hw, &o, &r);                                           \
        cr_assert_eq(s, GS_ERR_INVALID_ARG, "%s: got %s (%s)", #stmt, gs_status_str(s), gs_ctx_errmsg(ctx)); \
        cr_assert_null(r, "%s: *out not reset", #stmt);                                            \
        cr_assert_not_null(strstr(gs_ctx_errmsg(ctx), needle), "%s: message '%s' lacks '%s'", #stmt, \
                           gs_ctx_errmsg(ctx), needle);                                             \
    } while (0)
    BAD(o.top_k = 0, "top_k");
    BAD(o.top_k = -1, "top_k");
    BAD(o.top_k = GS_MAX_TOP + 1, "top_k");
    BAD(o.chains = 0, "chains");
    BAD(o.chains = -5, "chains");
    BAD(o.t_start = o.t_threshold, "temperature");
    BAD((o.t_start = 0.5, o.t_threshold = 1.0), "temperature");
    BAD(o.t_threshold = 0, "temperature");
    BAD(o.t_threshold = -1, "temperature");
    BAD(o.t_start = NAN, "temperature");
    BAD(o.t_start = INFINITY, "temperature");
    BAD(o.t_threshold = NAN, "temperature");
    BAD(o.policy = (gs_policy)7, "policy");
    BAD(o.policy = (gs_policy)-1, "policy");
    BAD(o.threads = -1, "threads");
    BAD(o.threads = 65, "threads");
    BAD(o.reserved = 1, "reserved");
#undef BAD
    gs_construct_opts_default(&o);
    r = (gs_result *)ctx;
    cr_assert_eq(gs_construct(ctx, NULL, hw, &o, &r), GS_ERR_INVALID_ARG);
    cr_assert_null(r);
    cr_assert(gs_ctx_errmsg(ctx)[0], "NULL op: empty message");
    cr_assert_eq(gs_construct(ctx, &op, NULL, &o, &r), GS_ERR_INVALID_ARG);
    cr_assert(gs_ctx_errmsg(ctx)[0], "NULL hw: empty message");
    cr_assert_eq(gs_construct(ctx, &op, hw, &o, NULL), GS_ERR_INVALID_ARG);
    /* an invalid operator or profile is reported with its own status */
    gs_op bad = op;
    bad.axes[0].extent = 0;
    cr_assert_eq(gs_construct(ctx, &bad, hw, &o, &r), GS_ERR_BAD_SHAPE, "%s", gs_ctx_errmsg(ctx));
    gs_hw badhw = *hw;
    badhw.num_sms = 0;
    cr_assert_eq(gs_construct(ctx, &op, &badhw, &o, &r), GS_ERR_HW_INVALID, "%s", gs_ctx_errmsg(ctx));
    /* NULL opts means the defaults; the limits themselves are accepted */
    cr_assert_eq(gs_construct(ctx, &op, hw, NULL, &r), GS_OK, "%s", gs_ctx_errmsg(ctx));
    cr_assert_eq(r->opts.top_k, 5);
    gs_result_destroy(r);
    gs_construct_opts_default(&o);
    o.top_k = GS_MAX_TOP;
    o.chains = 1;
    cr_assert_eq(gs_construct(ctx, &op, hw, &o, &r), GS_OK, "%s", gs_ctx_errmsg(ctx));
    assert_candidates_valid(r, &op, hw, GS_MAX_TOP);
    gs_result_destroy(r);
    gs_ctx_destroy(ctx);
}

Test(construct, defaults) {
    gs_construct_opts o;
    memset(&o, 0x5a, sizeof o);
    gs_construct_opts_default(&o);
    cr_assert_eq(o.seed, 1);
    cr_assert_eq(o.top_k, 5);
    cr_assert_eq(o.chains, 8); /* documented default (gensor.h, docs/CLI.md) */
    cr_assert(o.t_start == 1.0);
    cr_assert(o.t_threshold == ldexp(1.0, -40));
    cr_assert_eq(o.strategy, GS_STRATEGY_MARKOV);
    cr_assert(o.policy >= GS_POLICY_PAPER && o.policy <= GS_POLICY_MODEL);
}

Test(construct, result_accessors_out_of_range) {
    cr_assert_eq(gs_result_count(NULL), 0);
    cr_assert(gs_result_predicted_s(NULL, 0) < 0);
    cr_assert(gs_result_construct_s(NULL) < 0);
    cr_assert_str_eq(gs_result_describe(NULL, 0), "");
    gs_result_destroy(NULL);
    gs_op op = gs_test_gemm(128, 128, 128);
    gs_construct_opts o = opts_default();
    o.top_k = 3;
    gs_result *r = run(&op, hw_named("a100"), &o);
    int n = gs_result_count(r);
    cr_assert(n >= 1 && n <= 3);
    static const int bad[] = {-1, -1000, 3, 4, 64, 1 << 30};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        if (bad[i] >= 0 && bad[i] < n) continue;
        cr_assert(gs_result_predicted_s(r, bad[i]) < 0, "i=%d", bad[i]);
        cr_assert_str_eq(gs_result_describe(r, bad[i]), "", "i=%d", bad[i]);
    }
    cr_assert_gt(gs_result_predicted_s(r, n - 1), 0);
    cr_assert(gs_result_describe(r, 0)[0]);
    gs_result_destroy(r);
}

/* The tree (Roller-style) strategy serves valid candidates. */
Test(construct, tree_strategy_served_or_refused_clearly) {
    gs_op op = gs_test_gemm(512, 512, 512);
    const gs_hw *hw = hw_named("rtx3090");
    gs_construct_opts o = opts_default();
    o.strategy = GS_STRATEGY_TREE;
    gs_result_destroy(run_valid(&op, hw, &o));
}

/* Regression: a temperature ratio that overflows a double (t_start = 1e300,
 * t_threshold = 1e-300: both pass the option check) does not shrink the pool.
 * gs_construct counts the halvings in logs and clamps them; computing
 * (int64_t)ceil(log2(t_start / t_threshold)) instead cast +inf to int64_t
 * (undefined; INT64_MIN on x86), slipped past the clamp and wrapped the pool
 * cap to 48. Every chain here finishes (reaches level 0) long before T falls
 * to either threshold, so the threshold must not change the result at all. */
Test(construct, huge_temperature_ratio_keeps_the_pool) {
    gs_op op = gs_test_gemm(1024, 1024, 1024);
    const gs_hw *hw = hw_named("rtx3090");
    gs_construct_opts o = opts_default();
    o.t_start = 1e300;
    o.t_threshold = 1e-7;
    gs_result *a = run(&op, hw, &o);
    o.t_threshold = 1e-300;
    gs_result *b = run(&op, hw, &o);
    cr_expect_eq(a->pooled, b->pooled,
                 "t_start/t_threshold = 1e600 must not change the pool of the same walk: %lld states pooled with "
                 "threshold 1e-300 vs %lld with 1e-7",
                 (long long)b->pooled, (long long)a->pooled);
    cr_expect(gs_result_predicted_s(a, 0) == gs_result_predicted_s(b, 0),
              "same walk, different best: %.6g s (threshold 1e-7, %s) vs %.6g s (threshold 1e-300, %s)",
              gs_result_predicted_s(a, 0), gs_result_describe(a, 0), gs_result_predicted_s(b, 0),
              gs_result_describe(b, 0));
    gs_result_destroy(a);
    gs_result_destroy(b);
}

/* Regression: the grid is 1-D and CUDA's gridDim.x is at most 2^31-1 (the
 * kernel also reads its block index as an int). For an output of 2^40
 * elements, every strategy used to return candidates of 2^31..2^34 blocks
 * (on h100, rank 0 of `add M=1048576 N=1048576` had 2^31), which no device
 * can launch. The check now rejects them. */
Test(construct, grid_within_launch_limit) {
    gs_ctx *ctx = gs_ctx_create();
    gs_op op;
    cr_assert_eq(gs_op_parse_into(ctx, "add M=1048576 N=1048576", &op), GS_OK, "%s", gs_ctx_errmsg(ctx));
    const gs_hw *hw = hw_named("h100");
    /* a complete 64x32 block (2^29 blocks) passes; 32x32 (2^30) passes; 16x32 (2^31) does not */
    gs_etir e;
    cr_assert_eq(gs_etir_parse_config(ctx, &op, "bm=32,bn=32,tm=1,tn=1,vm=1,vn=1,sx=0,sy=0", &e), GS_OK, "%s",
                 gs_ctx_errmsg(ctx));
    cr_assert(gs_hw_check(hw, &op, &e));
    cr_assert_eq(gs_etir_parse_config(ctx, &op, "bm=16,bn=32,tm=1,tn=1,vm=1,vn=1,sx=0,sy=0", &e), GS_OK, "%s",
                 gs_ctx_errmsg(ctx));
    cr_assert_eq(gs_etir_blocks(&op, &e), 2147483648LL);
    cr_assert_not(gs_hw_check(hw, &op, &e), "a grid of 2^31 blocks must fail the check");
    const gs_strategy strat[] = {GS_STRATEGY_MARKOV, GS_STRATEGY_TREE, GS_STRATEGY_RANDOM};
    for (int s = 0; s < 3; s++) {
        gs_construct_opts o = opts_default();
        o.strategy = strat[s];
        o.top_k = 20;
        gs_result *r = run(&op, hw, &o);
        for (int i = 0; i < gs_result_count(r); i++)
            cr_assert_leq(gs_etir_blocks(&op, &r->cand[i]), 2147483647LL, "strategy %d candidate %d (%s): %lld blocks",
                          (int)strat[s], i, gs_result_describe(r, i), (long long)gs_etir_blocks(&op, &r->cand[i]));
        assert_candidates_valid(r, &op, hw, o.top_k);
        gs_result_destroy(r);
    }
    gs_ctx_destroy(ctx);
}

/* Regression: the kernel's per-axis arithmetic is 32-bit. For an extent near
 * 2^31, (E + T - 1) / T and the tile loop `o += T` overflowed int: relu
 * M=2147483647 N=1 with a 1024-row block lost its last block, and gemm K=2^31-1
 * with a 4096 k-step never left its k loop. Such states now fail the check,
 * and so does a conv whose dilated, padded coordinates leave int32. */
Test(construct, indices_within_int32) {
    gs_ctx *ctx = gs_ctx_create();
    const gs_hw *hw = hw_named("t4");
    gs_op op;
    gs_etir e;
    cr_assert_eq(gs_op_parse_into(ctx, "relu M=2147483647 N=1", &op), GS_OK, "%s", gs_ctx_errmsg(ctx));
    cr_assert_eq(gs_etir_parse_config(ctx, &op, "bm=1024,bn=1,tm=32,tn=1,sx=0", &e), GS_OK, "%s", gs_ctx_errmsg(ctx));
    cr_assert_not(gs_hw_check(hw, &op, &e), "E + T - 1 = 2^31 + 1022 overflows int");
    cr_assert_eq(gs_etir_parse_config(ctx, &op, "bm=1,bn=1,tm=1,tn=1,sx=0", &e), GS_OK);
    cr_assert(gs_hw_check(hw, &op, &e));
    gs_construct_opts o = opts_default();
    gs_result *r = run_valid(&op, hw, &o);
    cr_assert_eq(r->cand[0].tile[0].block, 1, "block tile on m: %d", r->cand[0].tile[0].block);
    gs_result_destroy(r);
    cr_assert_eq(gs_op_parse_into(ctx, "gemm M=1 N=1 K=2147483647", &op), GS_OK);
    cr_assert_eq(gs_etir_parse_config(ctx, &op, "bm=1,bn=1,bk=4096,tm=1,tn=1", &e), GS_OK);
    cr_assert_not(gs_hw_check(hw, &op, &e), "k loop: 2^31 - 1 + 4095 overflows int");
    /* just inside: extent 2^30 takes every tile up to its cap */
    cr_assert_eq(gs_op_parse_into(ctx, "relu M=1073741824 N=1", &op), GS_OK);
    cr_assert_eq(gs_etir_parse_config(ctx, &op, "bm=1024,bn=1,tm=32,tn=1,sx=0", &e), GS_OK);
    cr_assert(gs_hw_check(hw, &op, &e));
    /* a conv whose input coordinate pad + dilation*(R-1) leaves int32 has no valid state */
    cr_assert_eq(gs_op_parse_into(ctx, "conv2d N=1 C=1 H=5 W=5 K=1 R=3 S=3 dilation=2147483647 pad=2147483647", &op),
                 GS_OK);
    gs_result *none = NULL;
    cr_assert_eq(gs_construct(ctx, &op, hw, &o, &none), GS_ERR_NO_CANDIDATE, "%s", gs_ctx_errmsg(ctx));
    cr_assert_null(none);
    cr_assert_not_null(strstr(gs_ctx_errmsg(ctx), "32-bit indices"), "%s", gs_ctx_errmsg(ctx));
    gs_ctx_destroy(ctx);
}

/* Regression (issue 11, defects 1 and 3): a profile at the validator's bounds
 * (every real field 1e9 or 1e-6, banks and bank bytes 1024) still gives
 * finite estimates, so no report can lose a candidate to inf or NaN, and the
 * model's banks * bank_bytes stays inside an int (UBSan in make check-asan). */
Test(construct, extreme_valid_profile_gives_finite_estimates) {
    gs_ctx *ctx = gs_ctx_create();
    const char *specs[] = {"gemm M=64 N=64 K=64", "conv2d N=1 C=8 H=9 W=9 K=8 R=3 S=3 pad=1"};
    for (int variant = 0; variant < 2; variant++) {
        gs_hw h = *gs_hw_find_builtin("t4");
        h.smem_banks = 1024;
        h.bank_bytes = 1024;
        double big = variant ? 1e-6 : 1e9;
        h.dram_latency_ns = h.l2_latency_ns = h.smem_latency_ns = h.launch_overhead_us = 1e9;
        h.clock_mhz = h.dram_gbs = h.l2_gbs = big;
        cr_assert_eq(gs_hw_validate(ctx, &h), GS_OK, "%s", gs_ctx_errmsg(ctx));
        for (int k = 0; k < 2; k++) {
            gs_op *op = NULL;
            cr_assert_eq(gs_op_parse(ctx, specs[k], &op), GS_OK);
            gs_construct_opts co = opts_default();
            co.policy = GS_POLICY_BALANCED;
            gs_result *r = NULL;
            cr_assert_eq(gs_construct(ctx, op, &h, &co, &r), GS_OK, "%s", gs_ctx_errmsg(ctx));
            cr_assert_gt(r->n, 0);
            for (int i = 0; i < r->n; i++) {
                cr_assert(isfinite(r->est[i].time_s) && r->est[i].time_s > 0, "%s cand %d: time %g", specs[k], i,
                          r->est[i].time_s);
                cr_assert(isfinite(gs_op_flops(op) / r->est[i].time_s), "%s cand %d: rate not finite", specs[k], i);
            }
            gs_result_destroy(r);
            gs_op_destroy(op);
        }
    }
    gs_ctx_destroy(ctx);
}

/* Long reductions (issue 22 item 7): the walk priced a level-2 state by
 * completing it with no reduce lanes and no split-K, so a long reduce tile
 * (one thread per block) looked hopeless and the tile froze short when the
 * walk entered level 1 (rowsum M=1 K=2^24 on t4: 0.908 ms where the space
 * holds 0.226 ms). Within 1.1x of the exhaustive optimum, seeds 1-3. */
static double construct_best(const char *spec, const char *hwname, gs_strategy st, uint64_t seed) {
    gs_ctx *ctx = gs_ctx_create();
    gs_op *op = NULL;
    cr_assert_eq(gs_op_parse(ctx, spec, &op), GS_OK);
    gs_construct_opts o;
    gs_construct_opts_default(&o);
    o.strategy = st;
    o.seed = seed;
    o.top_k = 1;
    gs_result *r = NULL;
    cr_assert_eq(gs_construct(ctx, op, gs_hw_find_builtin(hwname), &o, &r), GS_OK, "%s", gs_ctx_errmsg(ctx));
    double t = r->est[0].time_s;
    gs_result_destroy(r);
    gs_op_destroy(op);
    gs_ctx_destroy(ctx);
    return t;
}

Test(construct, walk_reaches_long_reductions, .timeout = 300) {
    const char *cases[][2] = {{"rowsum M=1 K=16777216", "t4"}, {"rowsum M=1 K=16777216", "h100"},
                              {"rowsum M=4 K=1048576", "h100"}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        double best = construct_best(cases[i][0], cases[i][1], GS_STRATEGY_EXHAUSTIVE, 1);
        for (uint64_t seed = 1; seed <= 3; seed++) {
            double t = construct_best(cases[i][0], cases[i][1], GS_STRATEGY_MARKOV, seed);
            cr_assert_leq(t, 1.1 * best, "%s on %s, seed %llu: the walk's %.4f ms against the space's %.4f ms",
                          cases[i][0], cases[i][1], (unsigned long long)seed, t * 1e3, best * 1e3);
        }
    }
}

/* A block tile is priced by its better completion (issue 19): on h100,
 * gemm 4096^3's 64x256 tile completed only to 256 threads (8x8 each,
 * 1 block/SM) looked 27 % slower than it is at 128 threads of 8x16
 * (2 blocks/SM, the space's optimum), and the walk stopped at 64x128. The
 * walk now reaches that state's time on these seeds; the reference is
 * priced here, not written down. */
Test(construct, walk_prices_block_tiles_by_best_completion) {
    const char *spec = "gemm M=4096 N=4096 K=4096";
    gs_ctx *ctx = gs_ctx_create();
    gs_op *op = NULL;
    cr_assert_eq(gs_op_parse(ctx, spec, &op), GS_OK, "%s", gs_ctx_errmsg(ctx));
    const gs_hw *hw = gs_hw_find_builtin("h100");
    gs_etir e;
    cr_assert_eq(gs_etir_parse_config(ctx, op, "bm=64,bn=256,bk=8,tm=8,tn=16,vm=1,vn=4,sa=1,sb=1,stages=4", &e),
                 GS_OK, "%s", gs_ctx_errmsg(ctx));
    cr_assert(gs_hw_check(hw, op, &e));
    gs_estimate ref;
    gs_estimate_etir(hw, op, &e, 0, &ref);
    for (uint64_t seed = 1; seed <= 3; seed++) {
        double t = construct_best(spec, "h100", GS_STRATEGY_MARKOV, seed);
        cr_assert_leq(t, ref.time_s * (1 + 1e-6), "seed %llu: the walk's %.4f ms against 64x256's %.4f ms",
                      (unsigned long long)seed, t * 1e3, ref.time_s * 1e3);
    }
    gs_op_destroy(op);
    gs_ctx_destroy(ctx);
}

/* The polish trades reduce lanes for split-K blocks (issue 22 item 7): on
 * h100's gemm M=128 N=768 K=3072 transB=1 the walk's pick without the move
 * (64x32 tiles, g2 sk8) is a local optimum of the other moves; with it the
 * polish goes on to sk16 without lanes and 64x64 tiles, 2.46e-5 -> 2.05e-5 s
 * (the exhaustive optimum is 1.97e-5). */
Test(construct, polish_trades_lanes_for_split_blocks) {
    gs_ctx *ctx = gs_ctx_create();
    gs_op *op = NULL;
    cr_assert_eq(gs_op_parse(ctx, "gemm M=128 N=768 K=3072 transB=1", &op), GS_OK, "%s", gs_ctx_errmsg(ctx));
    const gs_hw *hw = hw_named("h100");
    gs_etir e;
    cr_assert_eq(gs_etir_parse_config(ctx, op, "bm=64,bn=32,bk=16,tm=8,tn=4,vm=2,vn=4,sa=1,sb=1,stages=4,raster=2,"
                                                "group=2,split=8", &e), GS_OK, "%s", gs_ctx_errmsg(ctx));
    gs_estimate est;
    gs_estimate_etir(hw, op, &e, 0, &est);
    double t0 = est.time_s, t = 0;
    cr_assert_gt(gs_polish(hw, op, &e, 1, 32, &t), 0);
    cr_assert_leq(t, 0.9 * t0, "polish from g2 sk8: %.4g s from %.4g s", t, t0);
    cr_assert_eq(e.lanes_log2, 0, "lanes left: g%d", 1 << e.lanes_log2);
    cr_assert_geq(e.splitk, 16, "split %d", e.splitk);
    gs_op_destroy(op);
    gs_ctx_destroy(ctx);
}

/* The polish escapes a local optimum by a neighbour with the reduce tile
 * halved (issue 22 item 7): on h100's gemm M=16384 N=1024 K=32 the walk
 * stopped at m:64/8 n:128/8 k:16; m:128/16 with k:8 is 9 % faster, but
 * m:128/16 alone exceeds the registers and k:8 alone is 8 % slower, so no
 * single move got there. On v100's gemm M=128 N=768 K=3072 transB=1 the
 * walk stopped at k:32 g4 sk2, whose k:16 g2 sk4 is 12 % faster (k:16
 * alone 9 % slower, the trade alone 23 %). The polish from those states
 * reaches at least the compound's time (priced here). */
Test(construct, polish_escapes_by_halving_the_reduce_tile) {
    static const char *cases[][4] = {
        {"gemm M=16384 N=1024 K=32", "h100", "bm=64,bn=128,bk=16,tm=8,tn=8,vm=1,vn=2,sa=1,sb=1,stages=2,raster=4",
         "bm=128,bn=128,bk=8,tm=16,tn=8,vm=1,vn=2,sa=1,sb=1,stages=2,raster=4"},
        {"gemm M=128 N=768 K=3072 transB=1", "v100", "bm=32,bn=32,bk=32,tm=8,tn=4,vm=8,vn=4,sa=1,sb=1,group=4,split=2",
         "bm=32,bn=32,bk=16,tm=8,tn=4,vm=8,vn=4,sa=1,sb=1,group=2,split=4"},
    };
    gs_ctx *ctx = gs_ctx_create();
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        gs_op *op = NULL;
        cr_assert_eq(gs_op_parse(ctx, cases[i][0], &op), GS_OK, "%s", gs_ctx_errmsg(ctx));
        const gs_hw *hw = hw_named(cases[i][1]);
        gs_etir e, c;
        cr_assert_eq(gs_etir_parse_config(ctx, op, cases[i][2], &e), GS_OK, "%s", gs_ctx_errmsg(ctx));
        cr_assert_eq(gs_etir_parse_config(ctx, op, cases[i][3], &c), GS_OK, "%s", gs_ctx_errmsg(ctx));
        cr_assert(gs_hw_check(hw, op, &e) && gs_hw_check(hw, op, &c), "%s on %s: a state does not fit", cases[i][0],
                  cases[i][1]);
        gs_estimate est;
        gs_estimate_etir(hw, op, &c, 0, &est);
        double tc = est.time_s, t = 0;
        gs_estimate_etir(hw, op, &e, 0, &est);
        cr_assert_lt(tc, 0.95 * est.time_s, "%s on %s: the compound %.4g s against the start's %.4g s", cases[i][0],
                     cases[i][1], tc, est.time_s);
        cr_assert_gt(gs_polish(hw, op, &e, 1, 32, &t), 0);
        cr_assert_leq(t, tc * (1 + 1e-9), "%s on %s: the polish reached %.4g s, the compound is %.4g s", cases[i][0],
                      cases[i][1], t, tc);
        gs_op_destroy(op);
    }
    gs_ctx_destroy(ctx);
}

/* gs_polish's seeds share one memo, and a seed may carry the plan options
 * (config keys scalar, noasync, im2col), which change its staged inputs'
 * layouts: a seed after one of the same tiles without them is priced, and
 * polished, as it is alone. The layout memo's key left the options out, so
 * the second seed took the first's layouts: the f16 gemm's noasync seed was
 * priced 28.3 us with the first's cp.async copies (alone: 37.1 us, and with
 * 3 stages no price at all: over 2 stages needs cp.async), since round 10
 * put the mma states' layouts in the memo; the f32 gemm's scalar seed 74.7
 * us with the first's vectors (alone: 82.9 us), the conv's forced im2col
 * tile 51.8 us with the first's tensor box (alone: 50.9 us). */
Test(construct, polish_seeds_with_plan_options_keep_their_layouts) {
    static const char *cases[][4] = {
        {"gemm M=1024 N=768 K=768 dtype=f16", "rtx3090", "bm=64,bn=64,bk=32,tm=4,tn=8,vm=1,vn=1,sa=1,sb=1,stages=2,mma=1",
         "noasync=1"},
        {"gemm M=1024 N=768 K=768 dtype=f16", "rtx3090", "bm=64,bn=64,bk=32,tm=4,tn=8,vm=1,vn=1,sa=1,sb=1,stages=3,mma=1",
         "noasync=1"},
        {"gemm M=1024 N=768 K=768", "rtx3090", "bm=64,bn=64,bk=16,tm=8,tn=8,vm=1,vn=2,sa=1,sb=1,stages=2", "scalar=1"},
        {"conv2d N=1 C=64 H=56 W=56 K=64 R=3 S=3 pad=1 layout=nhwc", "rtx3090",
         "bn=1,bp=4,bq=8,bk=64,bc=8,br=1,bs=1,tn=1,tp=4,tq=2,tk=8,vn=1,vp=1,vq=2,vk=2,si=1,sf=1,stages=2", "im2col=1"},
    };
    gs_ctx *ctx = gs_ctx_create();
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        gs_op *op = NULL;
        cr_assert_eq(gs_op_parse(ctx, cases[i][0], &op), GS_OK, "%s", gs_ctx_errmsg(ctx));
        const gs_hw *hw = hw_named(cases[i][1]);
        char flagged[256];
        snprintf(flagged, sizeof flagged, "%s,%s", cases[i][2], cases[i][3]);
        gs_etir plain, with;
        cr_assert_eq(gs_etir_parse_config(ctx, op, cases[i][2], &plain), GS_OK, "%s", gs_ctx_errmsg(ctx));
        cr_assert_eq(gs_etir_parse_config(ctx, op, flagged, &with), GS_OK, "%s", gs_ctx_errmsg(ctx));
        for (int moves = 0; moves <= 32; moves += 32) {
            gs_etir both[2] = {plain, with}, alone = with;
            double tb[2], ta;
            cr_assert_geq(gs_polish(hw, op, both, 2, moves, tb), 0);
            cr_assert_geq(gs_polish(hw, op, &alone, 1, moves, &ta), 0);
            char da[200], db[200];
            gs_etir_format(op, &alone, da, sizeof da);
            gs_etir_format(op, &both[1], db, sizeof db);
            cr_assert(tb[1] == ta || (isinf(tb[1]) && isinf(ta)),
                      "%s on %s, %s after the same tiles without it, %d moves: %.6g us, alone %.6g us", cases[i][0],
                      cases[i][1], cases[i][3], moves, tb[1] * 1e6, ta * 1e6);
            cr_assert_str_eq(db, da, "%s on %s, %s, %d moves: the polish reached another state", cases[i][0], cases[i][1],
                             cases[i][3], moves);
        }
        gs_op_destroy(op);
    }
    gs_ctx_destroy(ctx);
}

/* The trade with a spatial block tile scaled against the split (issue 19
 * item 1): v100's gemm M=128 N=768 K=3072 transB=1 has a trap at m:16 k:32
 * g4 r8, where split-K is refused (over two blocks per SM without it) and
 * m:32 by the raster group; the polish stopped there at 1.33x the
 * exhaustive optimum (priced here) on 4 of 28 walk seeds. With the trade's
 * compound (threads and grid kept, raster clamped) and a plain pass after
 * it, the polish from the trap reaches the optimum's time. */
Test(construct, polish_trade_keeps_the_grid) {
    const char *spec = "gemm M=128 N=768 K=3072 transB=1";
    gs_ctx *ctx = gs_ctx_create();
    gs_op *op = NULL;
    cr_assert_eq(gs_op_parse(ctx, spec, &op), GS_OK, "%s", gs_ctx_errmsg(ctx));
    const gs_hw *hw = hw_named("v100");
    gs_etir e, ref;
    cr_assert_eq(gs_etir_parse_config(ctx, op, "bm=16,bn=32,bk=32,tm=8,tn=4,vm=8,vn=4,sa=1,sb=1,stages=2,raster=8,group=4",
                                      &e),
                 GS_OK, "%s", gs_ctx_errmsg(ctx));
    cr_assert_eq(gs_etir_parse_config(ctx, op, "bm=32,bn=64,bk=8,tm=4,tn=8,vm=1,vn=2,sa=1,sb=1,stages=2,split=8", &ref),
                 GS_OK, "%s", gs_ctx_errmsg(ctx));
    cr_assert(gs_hw_check(hw, op, &e) && gs_hw_check(hw, op, &ref), "a state does not fit");
    gs_estimate est;
    gs_estimate_etir(hw, op, &ref, 0, &est);
    double t = 0;
    cr_assert_gt(gs_polish(hw, op, &e, 1, 32, &t), 0);
    cr_assert_leq(t, 1.02 * est.time_s, "the polish from the trap reached %.4g ms, the optimum is %.4g ms", t * 1e3,
                  est.time_s * 1e3);
    gs_op_destroy(op);
    gs_ctx_destroy(ctx);
}

/* The walk within 1.1x of the exhaustive optimum on the bench set's worst
 * cases before the escape (issue 22 item 7: 1.10x, 1.29x, 1.22x at seed 1).
 * The references are the exhaustive optima of `construct --strategy
 * exhaustive`, priced here (the enumeration itself takes 5-15 s each). */
Test(construct, walk_within_110_percent_on_bench_gemms, .timeout = 120) {
    static const char *cases[][3] = {
        /* (stages 2 since the plain pipeline's steady loop is priced, gemm19p: 4 before) */
        {"gemm M=16384 N=1024 K=32", "h100", "bm=128,bn=128,bk=8,tm=8,tn=16,vm=1,vn=4,sa=1,sb=1,stages=2"},
        {"gemm M=128 N=768 K=3072 transB=1", "h100", "bm=64,bn=64,bk=16,tm=8,tn=8,vm=1,vn=2,sa=1,sb=1,stages=2,split=16"},
        {"gemm M=128 N=768 K=3072 transB=1", "v100", "bm=32,bn=64,bk=8,tm=4,tn=8,vm=1,vn=2,sa=1,sb=1,stages=2,split=8"},
    };
    gs_ctx *ctx = gs_ctx_create();
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        gs_op *op = NULL;
        cr_assert_eq(gs_op_parse(ctx, cases[i][0], &op), GS_OK, "%s", gs_ctx_errmsg(ctx));
        const gs_hw *hw = hw_named(cases[i][1]);
        gs_etir x;
        cr_assert_eq(gs_etir_parse_config(ctx, op, cases[i][2], &x), GS_OK, "%s", gs_ctx_errmsg(ctx));
        cr_assert(gs_hw_check(hw, op, &x), "%s on %s: the reference does not fit", cases[i][0], cases[i][1]);
        gs_estimate ref;
        gs_estimate_etir(hw, op, &x, 0, &ref);
        double t = construct_best(cases[i][0], cases[i][1], GS_STRATEGY_MARKOV, 1);
        cr_assert_geq(t, ref.time_s * (1 - 1e-9), "%s on %s: the walk beats the exhaustive optimum", cases[i][0],
                      cases[i][1]);
        cr_assert_leq(t, 1.1 * ref.time_s, "%s on %s: the walk's %.4f ms is %.3fx the exhaustive %.4f ms", cases[i][0],
                      cases[i][1], t * 1e3, t / ref.time_s, ref.time_s * 1e3);
        gs_op_destroy(op);
    }
    gs_ctx_destroy(ctx);
}

/* Pipeline depth is priced (issue 19 item 3): at equal occupancy each
 * deeper stage shortens the latency chain and the time, strictly, also
 * when the mean load latency is already below a tile's compute (the old
 * max(c, l/d) tied every depth there), both when every input copies by
 * cp.async (transA=1) and when one goes through registers (its own term
 * stays; the cp.async input's shrinks). */
Test(construct, deeper_pipeline_priced) {
    static const char *specs[] = {"gemm M=8192 N=8192 K=8192", "gemm M=4096 N=4096 K=4096 transA=1"};
    gs_ctx *ctx = gs_ctx_create();
    gs_hw *hw = NULL;
    cr_assert_eq(gs_hw_load(ctx, "h100", &hw), GS_OK, "%s", gs_ctx_errmsg(ctx));
    for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++) {
        gs_op *op = NULL;
        cr_assert_eq(gs_op_parse(ctx, specs[i], &op), GS_OK, "%s", gs_ctx_errmsg(ctx));
        double prev_t = 0, prev_l = 0;
        int bps = 0;
        for (int st = 2; st <= GS_MAX_STAGES; st++) {
            char cfg[160];
            snprintf(cfg, sizeof cfg, "bm=64,bn=256,bk=8,tm=8,tn=16,vm=1,vn=4,sa=1,sb=1,stages=%d,raster=16", st);
            gs_etir e;
            cr_assert_eq(gs_etir_parse_config(ctx, op, cfg, &e), GS_OK, "%s", gs_ctx_errmsg(ctx));
            cr_assert(gs_hw_check(hw, op, &e), "%s: %s does not fit", specs[i], cfg);
            gs_estimate est;
            gs_estimate_etir(hw, op, &e, 0, &est);
            if (st > 2) {
                cr_assert_eq(est.blocks_per_sm, bps, "%s: %s changes the occupancy", specs[i], cfg);
                cr_expect_lt(est.t_latency, prev_l, "%s: %s: chain %g, one stage less %g", specs[i], cfg,
                             est.t_latency, prev_l);
                cr_expect_lt(est.time_s, prev_t, "%s: %s: %g s, one stage less %g s", specs[i], cfg, est.time_s,
                             prev_t);
            }
            bps = est.blocks_per_sm;
            prev_t = est.time_s;
            prev_l = est.t_latency;
        }
        gs_op_destroy(op);
    }
    gs_hw_destroy(hw);
    gs_ctx_destroy(ctx);
}

/* The instructions beside the FFMAs are priced on a 64-lane part too
 * (issue 19 item 1): there a warp FFMA holds the FMA pipe two issue
 * slots, and max(t_fma, t_issue) priced a loop of under two instructions
 * per FFMA as if the others were free, so a100's gemm 4096^3 pick was the
 * FFMA-poorest of five near-ties (steady share 0.841). More loop work per
 * reduce index (k_overhead_fast) must now cost time on a100, v100 and t4,
 * as it does on h100; a slack loop's cost falls with it. */
Test(construct, issue_slots_priced_beside_ffma) {
    static const char *hws[] = {"a100", "v100", "t4", "h100"};
    gs_ctx *ctx = gs_ctx_create();
    gs_op *op = NULL;
    cr_assert_eq(gs_op_parse(ctx, "gemm M=4096 N=4096 K=4096", &op), GS_OK, "%s", gs_ctx_errmsg(ctx));
    gs_etir e;
    cr_assert_eq(gs_etir_parse_config(ctx, op, "bm=32,bn=64,bk=8,tm=8,tn=8,vm=8,vn=2,sa=1,sb=1,stages=2,raster=2", &e),
                 GS_OK, "%s", gs_ctx_errmsg(ctx));
    for (size_t i = 0; i < sizeof hws / sizeof hws[0]; i++) {
        const gs_hw *hw = hw_named(hws[i]);
        cr_assert(gs_hw_check(hw, op, &e), "%s: the state does not fit", hws[i]);
        gs_plan p;
        gs_plan_make(hw, op, &e, NULL, &p);
        gs_model_params mp;
        gs_model_params_default(&mp);
        double t[3];
        const double ovh[3] = {0.0, mp.k_overhead_fast, 4.0};
        for (int k = 0; k < 3; k++) {
            mp.k_overhead_fast = ovh[k];
            gs_estimate est;
            gs_estimate_plan(hw, op, &e, &p, 0, &mp, NULL, &est);
            t[k] = est.t_compute;
        }
        cr_expect_lt(t[0], t[1], "%s: t_compute %g with no loop overhead, %g with the default", hws[i], t[0], t[1]);
        cr_expect_lt(t[1], t[2], "%s: t_compute %g with the default loop overhead, %g with 4 a k", hws[i], t[1], t[2]);
    }
    gs_op_destroy(op);
    gs_ctx_destroy(ctx);
}

/* The tiles and staging of an ETIR text: what precedes its knobs (the
 * second " | "), into buf. */
static void tiles_part(const char *etir, char *buf, size_t n) {
    const char *bar = strstr(etir, " | ");
    bar = bar ? strstr(bar + 3, " | ") : NULL;
    size_t len = bar ? (size_t)(bar - etir) : strlen(etir);
    snprintf(buf, n, "%.*s", (int)len, etir);
}

/* --plan-opts v1 (issue 19 item 8): the walk's candidates, with the same
 * tiles as without the option, planned as v1: each shows the options,
 * its config carries them, it is priced as that config, and the list is
 * ranked again. */
Test(construct, plan_opts_cli, .timeout = 120) {
    const char *bin = gs_test_cli_bin("the --plan-opts CLI checks");
    static const char *specs[] = {"gemm M=1000 N=700 K=300", "conv2d N=2 C=16 H=13 W=13 K=32 R=3 S=3 pad=1"};
    gs_ctx *ctx = gs_ctx_create();
    const gs_hw *hw = gs_hw_find_builtin("h100");
    for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++) {
        char args[512];
        snprintf(args, sizeof args, "construct --hw h100 --form direct --format json '%s'", specs[i]);
        json_t *plain = gs_test_cli_json(bin, args);
        snprintf(args, sizeof args, "construct --hw h100 --form direct --format json --plan-opts v1 '%s'", specs[i]);
        json_t *v1 = gs_test_cli_json(bin, args);
        gs_op *op = NULL;
        cr_assert_eq(gs_op_parse(ctx, specs[i], &op), GS_OK, "%s", gs_ctx_errmsg(ctx));
        json_t *pc = json_object_get(plain, "candidates"), *vc = json_object_get(v1, "candidates");
        cr_assert(json_array_size(vc) >= 1 && json_array_size(vc) <= json_array_size(pc), "%s: %zu and %zu candidates",
                  specs[i], json_array_size(vc), json_array_size(pc));
        double prev = 0;
        for (size_t k = 0; k < json_array_size(vc); k++) {
            json_t *c = json_array_get(vc, k);
            const char *etir = json_string_value(json_object_get(c, "etir"));
            const char *cfg = json_string_value(json_object_get(c, "config"));
            double t = json_real_value(json_object_get(c, "predicted_s"));
            cr_assert(etir && cfg, "%s: candidate %zu", specs[i], k);
            cr_expect(strstr(etir, " scalar predicated noasync lb1 box") != NULL, "%s: %s", specs[i], etir);
            cr_expect(strstr(cfg, ",scalar=1,predicated=1,noasync=1,lb1=1,im2col=2") != NULL, "%s: %s", specs[i], cfg);
            cr_expect_geq(t, prev, "%s: candidate %zu out of order", specs[i], k);
            prev = t;
            gs_etir e;
            cr_assert_eq(gs_etir_parse_config(ctx, op, cfg, &e), GS_OK, "%s: %s", cfg, gs_ctx_errmsg(ctx));
            cr_expect(gs_hw_check(hw, op, &e), "%s fails the check", cfg);
            gs_estimate est;
            gs_estimate_etir(hw, op, &e, 0, &est);
            cr_expect(fabs(est.time_s - t) <= 1e-12 + 1e-9 * t, "%s: listed %g s, priced %g s", cfg, t, est.time_s);
            /* the same tiles as one of the default plan's candidates */
            char mine[256], theirs[256];
            tiles_part(etir, mine, sizeof mine);
            bool found = false;
            for (size_t j = 0; j < json_array_size(pc) && !found; j++) {
                tiles_part(json_string_value(json_object_get(json_array_get(pc, j), "etir")), theirs, sizeof theirs);
                found = !strcmp(mine, theirs);
            }
            cr_expect(found, "%s: %s is not among the default plan's candidates", specs[i], etir);
        }
        gs_op_destroy(op);
        json_decref(plain);
        json_decref(v1);
    }
    gs_ctx_destroy(ctx);
}

/* The estimate's global-access memo keys an access by its lanes, its width
 * w and its sector granule: once they were xored into overlapping bits, so 4
 * lanes of 2-element runs and 2 lanes of 4-element runs shared one key, and
 * the second state priced with the first one's sectors (t_l2 and t_smem off
 * by 0.4 %). These two NCHW conv states on a100 meet that pair in this order
 * (the first's group of 2 lanes, the second's 4-wide output runs); the
 * second's price through the shared memo must be its price without one. */
Test(construct, memo_keeps_lanes_and_width_apart) {
    const char *spec = "conv2d N=4 C=3 H=29 W=31 K=24 R=5 S=5 stride=3 pad=2";
    const char *cfgs[] = {
        "bn=1,bk=1,bp=4,bq=2,bc=1,br=1,bs=2,tn=1,tk=1,tp=2,tq=2,vn=1,vk=1,vp=1,vq=1,si=1,sf=1,stages=3,raster=2,group=2",
        "bn=1,bk=1,bp=4,bq=4,bc=1,br=8,bs=2,tn=1,tk=1,tp=2,tq=4,vn=1,vk=1,vp=1,vq=1,si=1,sf=1,stages=4,raster=2"};
    gs_ctx *ctx = gs_ctx_create();
    gs_op op;
    cr_assert_eq(gs_op_parse_into(ctx, spec, &op), GS_OK, "%s", gs_ctx_errmsg(ctx));
    const gs_hw *hw = hw_named("a100");
    gs_wf_memo *memo = calloc(1, sizeof *memo);
    cr_assert_not_null(memo);
    gs_wf_memo_init(memo);
    for (int i = 0; i < 2; i++) {
        gs_etir e;
        cr_assert_eq(gs_etir_parse_config(ctx, &op, cfgs[i], &e), GS_OK, "%s", gs_ctx_errmsg(ctx));
        cr_assert(gs_hw_check(hw, &op, &e), "%s: %s", cfgs[i], gs_hw_check_why(hw, &op, &e));
        gs_estimate x, y;
        cr_assert(gs_estimate_checked(hw, &op, &e, memo, &x));
        gs_estimate_etir(hw, &op, &e, 0, &y);
        cr_assert_eq(x.t_l2, y.t_l2, "state %d: L2 time %.9g s through the memo, %.9g s without", i, x.t_l2, y.t_l2);
        cr_assert_eq(x.time_s, y.time_s, "state %d: %.9g s through the memo, %.9g s without", i, x.time_s, y.time_s);
    }
    free(memo);
    gs_ctx_destroy(ctx);
}

/* The reduce loop's counts differ between an FFMA plan and an mma one of
 * the same tiles (an mma plan computes a partial tile whole): once the memo
 * kept them by the tiles alone, so whichever was priced first set the
 * other's, the result depended on the order the walk met them (and so on
 * --threads), the mma state got back the under-count and the FFMA one an
 * over-count. Both orders through one memo must give each state its price
 * without one. */
Test(construct, memo_keeps_mma_and_ffma_loops_apart) {
    const char *spec = "conv2d N=2 C=5 H=9 W=7 K=12 R=3 S=3 pad=1 dtype=f16 layout=nhwc";
    const char *base = "bn=1,bp=8,bq=8,bk=16,bc=4,br=4,bs=4,tn=1,tp=2,tq=1,tk=2,vn=1,vp=1,vq=1,vk=1,si=1,sf=1,stages=2";
    gs_ctx *ctx = gs_ctx_create();
    gs_op op;
    cr_assert_eq(gs_op_parse_into(ctx, spec, &op), GS_OK, "%s", gs_ctx_errmsg(ctx));
    const gs_hw *hw = hw_named("a100");
    gs_etir st[2];
    char cfg[256];
    for (int i = 0; i < 2; i++) {
        snprintf(cfg, sizeof cfg, "%s%s", base, i ? ",mma=1" : "");
        cr_assert_eq(gs_etir_parse_config(ctx, &op, cfg, &st[i]), GS_OK, "%s", gs_ctx_errmsg(ctx));
        cr_assert(gs_hw_check(hw, &op, &st[i]), "%s: %s", cfg, gs_hw_check_why(hw, &op, &st[i]));
    }
    for (int first = 0; first < 2; first++) {
        gs_wf_memo *memo = calloc(1, sizeof *memo);
        cr_assert_not_null(memo);
        gs_wf_memo_init(memo);
        for (int k = 0; k < 2; k++) {
            const int i = k ? 1 - first : first;
            gs_estimate x, y;
            cr_assert(gs_estimate_checked(hw, &op, &st[i], memo, &x));
            gs_estimate_etir(hw, &op, &st[i], 0, &y);
            cr_assert_eq(x.time_s, y.time_s, "%s state after the %s one: %.9g s through the memo, %.9g s without",
                         i ? "mma" : "FFMA", k ? (i ? "FFMA" : "mma") : "no", x.time_s, y.time_s);
        }
        free(memo);
    }
    gs_ctx_destroy(ctx);
}

/* Every memo of a state's price (the padding choice, fast-path fractions,
 * L2 elements, trip counts, address steps, global and shared wavefronts)
 * keyed by what it reads: one memo shared over drawn states of convs (C 1,
 * 2, 3, 5, stride 3, dilation, groups, depthwise, 1x1, NHWC, f16, bf16),
 * gemms (transposed f16, tf32) and a gemv on five profiles gives each state
 * its price without a memo. (The seed meets the lanes/width collision
 * above: it fails on that key.) */
Test(construct, memo_prices_drawn_states_as_without) {
    const char *specs[] = {
        "conv2d N=8 C=1 H=13 W=17 K=32 R=3 S=3 pad=1",
        "conv2d N=8 C=2 H=11 W=13 K=16 R=3 S=3 stride=2 pad=1",
        "conv2d N=4 C=3 H=29 W=31 K=24 R=5 S=5 stride=3 pad=2",
        "conv2d N=6 C=5 H=17 W=19 K=40 R=3 S=3 dilation=2 pad=2",
        "conv2d N=5 C=12 H=13 W=11 K=64 R=3 S=3 stride=2 dilation=2 pad=2 dtype=f16",
        "conv2d N=5 C=12 H=13 W=11 K=64 R=3 S=3 stride=2 pad=1 dtype=bf16",
        "conv2d N=4 C=16 H=7 W=5 K=64 R=3 S=3 pad=1 groups=4",
        "conv2d N=8 C=32 H=14 W=14 K=32 R=3 S=3 pad=1 groups=32",
        "conv2d N=8 C=64 H=7 W=7 K=64 R=1 S=1",
        "conv2d N=4 C=7 H=23 W=23 K=9 R=7 S=7 stride=2 pad=3 layout=nhwc",
        "gemm M=100 N=60 K=200 transA=1 dtype=f16",
        "gemm M=256 N=256 K=256 math=tf32",
        "gemm M=1 N=4096 K=4096",
    };
    const char *hws[] = {"h100", "t4", "a100", "rtx4090", "orin-nano"};
    gs_ctx *ctx = gs_ctx_create();
    int priced = 0;
    for (int s = 0; s < (int)(sizeof specs / sizeof specs[0]); s++)
        for (int h = 0; h < 5; h++) {
            gs_op op;
            cr_assert_eq(gs_op_parse_into(ctx, specs[s], &op), GS_OK, "%s", gs_ctx_errmsg(ctx));
            const gs_hw *hw = hw_named(hws[h]);
            gs_wf_memo *memo = calloc(1, sizeof *memo);
            cr_assert_not_null(memo);
            gs_wf_memo_init(memo);
            gs_pcg32 rng;
            gs_pcg32_seed(&rng, 99, (uint64_t)(s * 5 + h));
            for (int i = 0; i < 300; i++) {
                gs_etir e;
                if (!gs_space_draw(hw, &op, &rng, &e)) continue;
                gs_estimate x, y;
                cr_assert(gs_estimate_checked(hw, &op, &e, memo, &x), "%s on %s, state %d: refused", specs[s],
                          hws[h], i);
                gs_estimate_etir(hw, &op, &e, 0, &y);
                char cfg[512];
                gs_etir_format_config(&op, &e, cfg, sizeof cfg);
                cr_assert_eq(x.time_s, y.time_s, "%s on %s, %s: %.9g s through the memo, %.9g s without", specs[s],
                             hws[h], cfg, x.time_s, y.time_s);
                priced++;
            }
            free(memo);
        }
    cr_assert_geq(priced, 3000, "only %d states priced", priced);
    gs_ctx_destroy(ctx);
}

/* The shortcuts construction takes must price exactly what gs_plan_make and
 * gs_estimate_etir price: the check's plan (gs_hw_check_plan) and the
 * layout memo give gs_plan_shape's bytes, a memo-made plan gs_plan_make's,
 * the floor through the memo the plain floor, and gs_estimate_checked the
 * same time as the check then the estimate, on
 * random states of a gemm, an NHWC conv (im2col tiles) and a strided NCHW
 * one, sharing one memo over all of them as a construction does. */
Test(construct, shortcuts_price_what_the_plan_prices, .timeout = 120) {
    const char *specs[] = {"gemm M=128 N=768 K=3072 transB=1",
                           "conv2d N=32 C=128 H=28 W=28 K=128 R=3 S=3 pad=1 layout=nhwc",
                           "conv2d N=8 C=64 H=30 W=30 K=96 R=3 S=3 stride=2 layout=nchw bias=1"};
    const char *hws[] = {"h100", "t4"};
    gs_ctx *ctx = gs_ctx_create();
    for (size_t s = 0; s < sizeof specs / sizeof specs[0]; s++)
        for (size_t h = 0; h < sizeof hws / sizeof hws[0]; h++) {
            gs_op op;
            cr_assert_eq(gs_op_parse_into(ctx, specs[s], &op), GS_OK, "%s", gs_ctx_errmsg(ctx));
            const gs_hw *hw = hw_named(hws[h]);
            gs_wf_memo *memo = calloc(1, sizeof *memo);
            cr_assert_not_null(memo);
            gs_pcg32 rng;
            gs_pcg32_seed(&rng, 7, s * 2 + h);
            int valid = 0;
            for (int i = 0; i < 3000; i++) {
                gs_etir e;
                bool ok = gs_space_draw(hw, &op, &rng, &e);
                gs_plan a, b;
                /* gs_etir_wellformed skips the knobs at their off value: each
                 * is legal there in every state, drawn or malformed */
                for (int k = 0; k < GS_KNOB_COUNT; k++)
                    cr_assert(gs_knob_ok(&op, &e, k, gs_knobs[k].off), "%s on %s, state %d: knob %s off is illegal",
                              specs[s], hws[h], i, gs_knobs[k].name);
                /* the polish hands malformed neighbours to the check
                 * unfiltered: the check, and so the priced path, refuses them
                 * (a thread tile over its block tile, a block tile that is
                 * not a power of two, a knob out of its range) */
                for (int m = 0; m < 3; m++) {
                    gs_etir x = e;
                    int d = (i + m) % op.naxes;
                    if (m == 0) x.tile[d].thread = x.tile[d].block * 2;
                    if (m == 1) x.tile[d].block = x.tile[d].block * 2 + 1;
                    if (m == 2) x.splitk = (uint8_t)(gs_knobs[GS_KNOB_SPLITK].hi + 1);
                    cr_assert(!gs_etir_wellformed(&op, &x), "%s on %s, state %d: mutation %d is well formed", specs[s],
                              hws[h], i, m);
                    gs_estimate est;
                    cr_assert(!gs_estimate_checked(hw, &op, &x, memo, &est),
                              "%s on %s, state %d: a malformed state (mutation %d) was priced", specs[s], hws[h], i, m);
                }
                memset(&a, 0, sizeof a); /* compared bytewise where both exist */
                bool okp = gs_hw_check_plan(hw, &op, &e, memo, &a);
                cr_assert_eq(okp, ok, "%s on %s, state %d: the check with its plan disagrees", specs[s], hws[h], i);
                if (!ok) continue;
                valid++;
                gs_plan_shape(hw, &op, &e, NULL, &b);
                cr_assert(!memcmp(&a, &b, sizeof a), "%s on %s, state %d: the memo's plan shape differs", specs[s],
                          hws[h], i);
                /* the polish's floor through the memo (its fast-path
                 * fractions, L2 elements and trip counts) is the plain one */
                double fm = gs_estimate_floor_plan_memo(hw, &op, &e, &a, memo, INFINITY),
                       fp = gs_estimate_floor_plan(hw, &op, &e, &b, INFINITY);
                cr_assert_eq(fm, fp, "%s on %s, state %d: the memo's floor %.9g s against %.9g s", specs[s], hws[h], i,
                             fm, fp);
                gs_plan_finish_memo(hw, &op, &e, memo, &a);
                gs_plan_make(hw, &op, &e, NULL, &b);
                cr_assert(!memcmp(&a, &b, sizeof a), "%s on %s, state %d: shape + finish is not gs_plan_make",
                          specs[s], hws[h], i);
                gs_estimate x, y;
                cr_assert(gs_estimate_checked(hw, &op, &e, memo, &x));
                gs_estimate_etir(hw, &op, &e, 0, &y);
                cr_assert_eq(x.time_s, y.time_s, "%s on %s, state %d: %.9g s against %.9g s", specs[s], hws[h], i,
                             x.time_s, y.time_s);
            }
            cr_assert_geq(valid, 50, "%s on %s: only %d valid states drawn", specs[s], hws[h], valid);
            free(memo);
        }
    /* the check through a memo skips the int32 index test once the state
     * with every block tile at its maximum passes it: near 2^31 it does not,
     * and the memo's check must still refuse what the plain check refuses */
    const char *huge[] = {"relu M=2147483647 N=1", "gemm M=1 N=1 K=2147483647", "relu M=1073741824 N=1"};
    const gs_hw *hw = hw_named("t4");
    for (size_t s = 0; s < sizeof huge / sizeof huge[0]; s++) {
        gs_op op;
        cr_assert_eq(gs_op_parse_into(ctx, huge[s], &op), GS_OK, "%s", gs_ctx_errmsg(ctx));
        gs_wf_memo *memo = calloc(1, sizeof *memo);
        cr_assert_not_null(memo);
        gs_pcg32 rng;
        gs_pcg32_seed(&rng, 11, s);
        int fits = 0, refused = 0;
        for (int i = 0; i < 400; i++) {
            gs_etir e;
            gs_space_draw(hw, &op, &rng, &e);
            if (i == 0) e.tile[0].block = gs_etir_max_tile(&op, 0); /* the largest tile, drawn or not */
            if (i == 1) { /* and the smallest state */
                for (int a = 0; a < op.naxes; a++) e.tile[a] = (gs_tile){1, 1, 1}, e.V[a] = 1;
                gs_knob_set(&e, GS_KNOB_LANES, 0);
                gs_knob_set(&e, GS_KNOB_SPLITK, 1);
            }
            gs_plan a;
            bool plain = gs_hw_check(hw, &op, &e), memod = gs_hw_check_plan(hw, &op, &e, memo, &a);
            cr_assert_eq(memod, plain, "%s, state %d: the memo's check says %d, the plain check %d", huge[s], i, memod,
                         plain);
            fits += plain;
            refused += !plain;
        }
        if (s != 1) cr_assert(fits > 0, "%s: no state passed", huge[s]);
        if (s < 2) cr_assert(refused > 0, "%s: no state was refused", huge[s]);
        free(memo);
    }
    gs_ctx_destroy(ctx);
}

/* ---- the polish's floor (issue 19, construction time round 5) ------------------------
 * The polish passes over a neighbour whose floor (gs_estimate_floor_plan:
 * the estimate of its shaped plan without what finishing the plan adds) is
 * beyond the best price met. With GS_AUDIT_FLOOR set it prices those too:
 * the floors must lie under every price, and the result must be the one
 * the skipping polish gives. */
static const char *const floor_specs[] = {
    "gemm M=4096 N=4096 K=4096",
    "gemm M=128 N=768 K=3072 transB=1",
    "gemm M=65536 N=1024 K=4",
    "gemv M=16384 N=1000",
    "conv2d N=128 C=256 H=30 W=30 K=256 R=3 S=3 stride=2 pad=0 layout=nchw",
    "conv2d N=32 C=128 H=28 W=28 K=128 R=3 S=3 pad=1 layout=nhwc bias=1 relu=1",
    "conv2d N=128 C=576 H=14 W=14 K=96 R=1 S=1 layout=nchw bias=1 relu=0",
    "dwconv2d N=128 C=96 H=112 W=112 R=3 S=3 stride=2 pad=1 layout=nchw bias=1 relu=1",
    "bgemm B=12 M=1024 N=1024 K=64 transB=1 alpha=0.125",
    "rowsum M=16384 K=128",
    "avgpool2d N=128 C=617 H=21 W=21 F=3 stride=2 pad=0 layout=nchw",
};

Test(construct, polish_floor_under_every_price_and_skips_change_nothing, .timeout = 300) {
    static const char *const hws[] = {"h100", "a100", "rtx4090", "rtx3090", "orin-nano", "v100", "t4"};
    gs_construct_opts o = opts_default();
    o.threads = 1;
    int64_t pruned = 0, estimated = 0;
    for (size_t s = 0; s < sizeof floor_specs / sizeof *floor_specs; s++) {
        gs_ctx *ctx = gs_ctx_create();
        gs_op *op = NULL;
        cr_assert_eq(gs_op_parse(ctx, floor_specs[s], &op), GS_OK, "%s: %s", floor_specs[s], gs_ctx_errmsg(ctx));
        for (size_t h = 0; h < sizeof hws / sizeof *hws; h++) {
            const gs_hw *hw = hw_named(hws[h]);
            o.conv_form = GS_FORM_DIRECT; /* (auto keeps one form's counts only) */
            unsetenv("GS_AUDIT_FLOOR");
            gs_result *skip = run(op, hw, &o);
            setenv("GS_AUDIT_FLOOR", "1", 1);
            gs_result *all = run(op, hw, &o);
            unsetenv("GS_AUDIT_FLOOR");
            char what[300];
            snprintf(what, sizeof what, "%s on %s: skipping vs pricing all", floor_specs[s], hws[h]);
            assert_same_result(skip, all, what);
            cr_assert(!skip->floor_audit && all->floor_audit, "%s: the audit flag", what);
            cr_assert_eq(all->floor_violations, 0, "%s: %lld floors above their prices", what,
                         (long long)all->floor_violations);
            cr_assert_eq(skip->evaluated, all->evaluated, "%s: neighbours met", what);
            pruned += skip->pruned;
            estimated += skip->evaluated;
            gs_result_destroy(skip);
            gs_result_destroy(all);
        }
        gs_op_destroy(op);
        gs_ctx_destroy(ctx);
    }
    /* the floor is no bare 0: it skips a good share of the polish's neighbours */
    cr_assert_gt(pruned, estimated / 10, "%lld skipped of %lld", (long long)pruned, (long long)estimated);
}

/* Over every state of the configuration space (as the exhaustive strategy
 * ranks it) on a gemm and two convs: the floor of the shaped plan is under
 * the estimate, and close to it for most (the model leaves out only the
 * padding's and the global accesses' simulations and their effects). */
typedef struct floor_walk {
    const gs_hw *hw;
    const gs_op *op;
    int64_t n, close, over;
    char worst[200];
} floor_walk;

static bool floor_visit(const gs_etir *e, void *user) {
    floor_walk *w = user;
    gs_plan p;
    gs_estimate est;
    cr_assert(gs_hw_check_plan(w->hw, w->op, e, NULL, &p));
    double f = gs_estimate_floor_plan(w->hw, w->op, e, &p, INFINITY);
    cr_assert(gs_estimate_checked(w->hw, w->op, e, NULL, &est));
    if (f > est.time_s && !w->over++) gs_etir_format_config(w->op, e, w->worst, sizeof w->worst);
    w->close += f >= 0.7 * est.time_s;
    w->n++;
    return true;
}

Test(construct, floor_under_the_estimate_over_the_space, .timeout = 300) {
    static const char *const specs[] = {
        "gemm M=1000 N=1000 K=1000",
        "conv2d N=8 C=64 H=28 W=28 K=64 R=3 S=3 pad=1 layout=nchw bias=1 relu=1",
        "conv2d N=8 C=64 H=30 W=30 K=64 R=3 S=3 stride=2 layout=nhwc",
    };
    static const char *const hws[] = {"h100", "t4"};
    for (size_t s = 0; s < sizeof specs / sizeof *specs; s++)
        for (size_t h = 0; h < sizeof hws / sizeof *hws; h++) {
            gs_ctx *ctx = gs_ctx_create();
            gs_op *op = NULL;
            cr_assert_eq(gs_op_parse(ctx, specs[s], &op), GS_OK, "%s", gs_ctx_errmsg(ctx));
            floor_walk w = {hw_named(hws[h]), op, 0, 0, 0, ""};
            bool stopped;
            gs_space_enumerate(w.hw, op, 20000, 0, floor_visit, &w, &stopped);
            cr_assert_gt(w.n, 100, "%s on %s: %lld states", specs[s], hws[h], (long long)w.n);
            cr_assert_eq(w.over, 0, "%s on %s: %lld floors above the estimate (first: %s)", specs[s], hws[h],
                         (long long)w.over, w.worst);
            cr_assert_gt(w.close, w.n / 2, "%s on %s: only %lld of %lld floors within 0.7 of the estimate", specs[s],
                         hws[h], (long long)w.close, (long long)w.n);
            gs_op_destroy(op);
            gs_ctx_destroy(ctx);
        }
}

/* ---- the walk and the tensor cores (session 16) ------------------------------------ */

/* A level-2 conv state with block tiles n, k, p, q, c (r, s 1) on op. */
static gs_etir conv_block(const gs_op *op, int n, int k, int p, int q, int c) {
    gs_etir e;
    gs_etir_init(op, &e);
    const int b[7] = {n, k, p, q, c, 1, 1};
    cr_assert_eq(op->naxes, 7, "%s: a conv's axes are n k p q c r s", op->spec);
    for (int d = 0; d < 7; d++) e.tile[d].block = b[d];
    return e;
}

/* spec parsed (the test fails on an error); the caller destroys it. */
static gs_op *parsed(gs_ctx *ctx, const char *spec) {
    gs_op *op = NULL;
    cr_assert_eq(gs_op_parse(ctx, spec, &op), GS_OK, "%s: %s", spec, gs_ctx_errmsg(ctx));
    return op;
}

/* A block tile is priced by the faster of its plain and its tensor-core
 * completions, and the model policy's cache enters the one that set the
 * price. A conv had no tensor-core completion at all (its m role spans n,
 * p and q, which the single-axis completion refused), and the cache entered
 * the plain (FFMA) entry of a block tile priced by its tensor cores, whose
 * thread tiles the mma row rarely allows: h100's bf16 NCHW 3x3 C=K=256 14^2
 * b128 ended on FFMA (0.83 ms) at seed 1 and on the tensor cores (0.29 ms) at
 * seed 4. A block whose k tile the widest row does not divide (c:8) enters
 * the k8 row. */
Test(construct, caching_a_block_tile_enters_its_tensor_core_completion) {
    gs_ctx *ctx = gs_ctx_create();
    gs_op *op = parsed(ctx, "conv2d N=128 C=256 H=14 W=14 K=256 R=3 S=3 pad=1 layout=nchw bias=1 relu=1 dtype=f16");
    const gs_hw *hw = hw_named("h100");
    static const struct {
        int n, k, p, q, c, kstep;
    } cases[] = {{16, 128, 2, 2, 16, 16}, {64, 128, 1, 1, 8, 8}, {4, 64, 2, 8, 16, 16}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        gs_etir e = conv_block(op, cases[i].n, cases[i].k, cases[i].p, cases[i].q, cases[i].c), next;
        double w = gs_action_benefit(hw, op, &e, (gs_action){GS_ACT_CACHE, -1, 0}, GS_POLICY_MODEL, &next);
        cr_assert_gt(w, 0, "case %zu: the cache is refused", i);
        cr_assert_eq(next.level, 1, "case %zu: level %d", i, next.level);
        cr_assert_neq(next.mma, 0, "case %zu: entered the FFMA entry", i);
        cr_assert_eq(gs_mma_get(next.mma)->k, cases[i].kstep, "case %zu: row %s", i, gs_mma_get(next.mma)->name);
        cr_assert(gs_mma_state_ok(op, &next, next.mma), "case %zu: the entry breaks its row", i);
        for (int d = 0; d < 5; d++)
            cr_assert_eq(next.tile[d].block, e.tile[d].block, "case %zu: block tile %d moved", i, d);
        /* the entry is at least as fast as the plain completion */
        gs_etir plain = next;
        gs_estimate a, b;
        cr_assert(gs_complete(hw, op, &e, &plain), "case %zu: no plain completion", i);
        gs_estimate_etir(hw, op, &plain, 0, &a);
        gs_etir done = next;
        done.level = 0;
        gs_estimate_etir(hw, op, &done, 0, &b);
        cr_assert_leq(b.time_s, a.time_s, "case %zu: entry %.4g s, plain %.4g s", i, b.time_s, a.time_s);
    }
    gs_op_destroy(op);
    gs_ctx_destroy(ctx);
}

/* The defect above, end to end: the construction takes the tensor cores at
 * every seed (before: FFMA's 0.83 ms at seed 1). */
Test(construct, half_conv_takes_the_tensor_cores_at_every_seed) {
    gs_ctx *ctx = gs_ctx_create();
    gs_op *op = parsed(ctx, "conv2d N=128 C=256 H=14 W=14 K=256 R=3 S=3 pad=1 layout=nchw bias=1 relu=1 dtype=bf16");
    const gs_hw *hw = hw_named("h100");
    gs_construct_opts o = opts_default();
    o.top_k = 1;
    for (uint64_t seed = 1; seed <= 4; seed++) {
        o.seed = seed;
        gs_result *r = run(op, hw, &o);
        cr_assert_neq(r->cand[0].mma, 0, "seed %d: FFMA, %.4g ms", (int)seed, r->est[0].time_s * 1e3);
        cr_assert_lt(r->est[0].time_s, 0.4e-3, "seed %d: %.4g ms", (int)seed, r->est[0].time_s * 1e3);
        gs_result_destroy(r);
    }
    gs_op_destroy(op);
    gs_ctx_destroy(ctx);
}

/* The polish from the state start of spec on hw reaches at least the time of
 * the state compound, which is at least 10 % faster than the start and two
 * moves away from it. */
static void polish_reaches(const char *spec, const char *hwname, const char *start, const char *compound) {
    gs_ctx *ctx = gs_ctx_create();
    gs_op *op = parsed(ctx, spec);
    const gs_hw *hw = hw_named(hwname);
    gs_etir e, c;
    cr_assert_eq(gs_etir_parse_config(ctx, op, start, &e), GS_OK, "%s", gs_ctx_errmsg(ctx));
    cr_assert_eq(gs_etir_parse_config(ctx, op, compound, &c), GS_OK, "%s", gs_ctx_errmsg(ctx));
    gs_estimate est;
    gs_estimate_etir(hw, op, &c, 0, &est);
    double tc = est.time_s, t = 0;
    gs_estimate_etir(hw, op, &e, 0, &est);
    cr_assert_lt(tc, 0.9 * est.time_s, "%s on %s: the compound %.4g s against the start's %.4g s", spec, hwname, tc,
                 est.time_s);
    cr_assert_gt(gs_polish(hw, op, &e, 1, 32, &t), 0);
    cr_assert_leq(t, tc * (1 + 1e-9), "%s on %s: the polish reached %.4g s, the compound is %.4g s", spec, hwname, t,
                  tc);
    gs_op_destroy(op);
    gs_ctx_destroy(ctx);
}

/* Where the operator has a tensor-core row, the escape also composes each
 * neighbour with the reduce tile doubled: the mma row fixes the k step, and
 * a longer k tile takes more copy registers a thread unless the block has
 * more threads. h100's f16 NCHW 3x3 C=K=256 14^2 b128 stopped at n:64 c:8
 * (0.272 ms): c:16 alone exceeds the registers, n:128 alone is 1.5 % slower,
 * and both together are 0.178 ms. */
Test(construct, polish_escapes_by_doubling_the_reduce_tile) {
    polish_reaches("conv2d N=128 C=256 H=14 W=14 K=256 R=3 S=3 pad=1 layout=nchw bias=1 relu=1 dtype=f16", "h100",
                   "bn=64,bk=128,bp=1,bq=1,bc=8,br=1,bs=1,tn=4,tk=16,tp=1,tq=1,vn=1,vk=1,vp=1,vq=1,si=1,sf=1,stages=2,"
                   "mma=4",
                   "bn=128,bk=128,bp=1,bq=1,bc=16,br=1,bs=1,tn=4,tk=16,tp=1,tq=1,vn=1,vk=1,vp=1,vq=1,si=1,sf=1,stages=2,"
                   "mma=4");
}

/* The polish's step of the mma row also comes with a stage more or less:
 * a row's fragments and a pipeline's buffers share the registers and the
 * shared memory, so either move alone can lose where both win. a100's f16
 * 1x1 NCHW stride-2 C=512 28^2 K=1024 b128 stopped at mma1 with one stage,
 * 1.19x the time of the same tiles at mma4 with two. */
Test(construct, polish_moves_the_mma_row_with_the_stages) {
    polish_reaches("conv2d N=128 C=512 H=28 W=28 K=1024 R=1 S=1 stride=2 layout=nchw bias=1 relu=0 dtype=f16", "a100",
                   "bn=32,bk=128,bp=2,bq=2,bc=16,br=1,bs=1,tn=4,tk=16,tp=1,tq=1,vn=1,vk=1,vp=1,vq=1,si=1,sf=1,raster=2,"
                   "mma=1",
                   "bn=32,bk=128,bp=2,bq=2,bc=16,br=1,bs=1,tn=4,tk=16,tp=1,tq=1,vn=1,vk=1,vp=1,vq=1,si=1,sf=1,raster=2,"
                   "stages=2,mma=4");
}

/* The escape's doubled reduce tile is for operators whose states can take a
 * tensor-core row. gs_mma_pick answers for the types and the arch only, so a
 * half operator that no row can take (a dwconv, a pool, a gemv, a row
 * reduction: no mma roles) got the doubled compounds too: on t4 (sm_75) f16
 * has a row (m16n8k8) and bf16 none, and the f16 dwconv's construction
 * priced 29 % more states than the bf16 one (13346 against 10371) and
 * ranked other candidates, where the model prices both types alike. Review
 * of session 16 (b0d7199). */
Test(construct, half_operator_without_mma_roles_escapes_as_before) {
    gs_ctx *ctx = gs_ctx_create();
    gs_op *a = NULL, *b = NULL;
    cr_assert_eq(gs_op_parse(ctx, "dwconv2d N=1 C=32 H=112 W=112 R=3 S=3 pad=1 dtype=f16", &a), GS_OK, "%s",
                 gs_ctx_errmsg(ctx));
    cr_assert_eq(gs_op_parse(ctx, "dwconv2d N=1 C=32 H=112 W=112 R=3 S=3 pad=1 dtype=bf16", &b), GS_OK, "%s",
                 gs_ctx_errmsg(ctx));
    const gs_hw *hw = hw_named("t4");
    cr_assert_neq(gs_mma_pick(hw->sm, a), 0, "t4 has an f16 row");
    cr_assert_eq(gs_mma_pick(hw->sm, b), 0, "t4 has no bf16 row");
    gs_construct_opts o = opts_default();
    o.threads = 1;
    gs_result *ra = run(a, hw, &o), *rb = run(b, hw, &o);
    cr_assert_eq(ra->evaluated, rb->evaluated, "f16 priced %lld states, bf16 %lld", (long long)ra->evaluated,
                 (long long)rb->evaluated);
    cr_assert_eq(ra->n, rb->n);
    for (int i = 0; i < ra->n; i++) {
        cr_assert(!memcmp(&ra->cand[i], &rb->cand[i], sizeof ra->cand[i]), "candidate %d differs", i);
        cr_assert_eq(ra->est[i].time_s, rb->est[i].time_s, "candidate %d: %.6g s against %.6g s", i, ra->est[i].time_s,
                     rb->est[i].time_s);
    }
    gs_result_destroy(ra);
    gs_result_destroy(rb);
    gs_op_destroy(a);
    gs_op_destroy(b);
    gs_ctx_destroy(ctx);
}
