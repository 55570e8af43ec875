/* test_space.c — the configuration space (gs_space_enumerate, gs_space_draw)
 * and `gensor space`:
 *   - the space of a small gemm, a gemv and a conv2d is nonempty; every state
 *     is complete, passes gs_hw_check and round-trips through its config
 *     string (gs_etir_format_config, gs_etir_parse_config);
 *   - the exhaustive strategy's optimum is the best state of the space;
 *   - through the CLI named by GS_GENSOR_BIN (skipped when it is not set):
 *     the JSON listing is nonempty, its count matches, every config parses
 *     back and passes the check, --limit truncates and says so, --sample lists
 *     distinct configs, and bad input exits 2. */
#include "construct/construct.h"
#include "tests/test_common.h"

#include <criterion/criterion.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

TestSuite(space);

typedef struct visit_acc {
    const gs_hw *hw;
    const gs_op *op;
    int64_t n;
    double best;
    int bad_check, bad_roundtrip;
} visit_acc;

static bool visit(const gs_etir *e, void *user) {
    visit_acc *a = user;
    a->n++;
    if (e->level != 0 || !gs_hw_check(a->hw, a->op, e)) a->bad_check++;
    char cfg[256];
    gs_etir_format_config(a->op, e, cfg, sizeof cfg);
    gs_ctx *ctx = gs_ctx_create();
    gs_etir back;
    if (gs_etir_parse_config(ctx, a->op, cfg, &back) != GS_OK || gs_etir_hash(&back) != gs_etir_hash(e))
        a->bad_roundtrip++;
    gs_ctx_destroy(ctx);
    gs_estimate est;
    gs_estimate_etir(a->hw, a->op, e, 0, &est);
    if (est.time_s < a->best) a->best = est.time_s;
    return true;
}

static gs_op *parse_op(const char *spec) {
    gs_ctx *ctx = gs_ctx_create();
    gs_op *op = NULL;
    gs_status s = gs_op_parse(ctx, spec, &op);
    cr_assert_eq(s, GS_OK, "%s: %s", spec, gs_ctx_errmsg(ctx));
    gs_ctx_destroy(ctx);
    return op;
}

static void check_space(const char *spec, const char *hwname, int64_t cap) {
    gs_op *op = parse_op(spec);
    const gs_hw *hw = gs_hw_find_builtin(hwname);
    cr_assert_not_null(hw);
    visit_acc a = {hw, op, 0, INFINITY, 0, 0};
    bool stopped = false;
    int64_t visited = gs_space_enumerate(hw, op, cap, 0, visit, &a, &stopped);
    cr_assert_gt(a.n, 0, "%s on %s: empty space", spec, hwname);
    cr_assert_geq(visited, a.n);
    cr_assert_eq(a.bad_check, 0, "%s: %d states fail gs_hw_check", spec, a.bad_check);
    cr_assert_eq(a.bad_roundtrip, 0, "%s: %d configs do not parse back", spec, a.bad_roundtrip);
    if (!stopped) {
        /* the exhaustive strategy ranks the same space */
        gs_construct_opts o;
        gs_construct_opts_default(&o);
        o.strategy = GS_STRATEGY_EXHAUSTIVE;
        o.top_k = 1;
        gs_ctx *ctx = gs_ctx_create();
        gs_result *r = NULL;
        cr_assert_eq(gs_construct(ctx, op, hw, &o, &r), GS_OK, "%s", gs_ctx_errmsg(ctx));
        cr_assert_eq(r->pooled, a.n, "exhaustive ranked %lld states, the space has %lld", (long long)r->pooled,
                     (long long)a.n);
        cr_assert_float_eq(r->est[0].time_s, a.best, 1e-15);
        gs_result_destroy(r);
        gs_ctx_destroy(ctx);
    }
    gs_op_destroy(op);
}

Test(space, gemv_whole_space_valid_and_matches_exhaustive) { check_space("gemv M=1024 N=1024", "rtx4090", 0); }
Test(space, small_gemm_whole_space) { check_space("gemm M=31 N=64 K=17 transA=1", "t4", 0); }
Test(space, conv2d_prefix_valid) {
    check_space("conv2d N=1 C=32 H=28 W=28 K=32 R=3 S=3 pad=1", "rtx4090", 20000);
}

Test(space, draws_pass_the_check) {
    gs_op *op = parse_op("gemm M=256 N=256 K=256");
    const gs_hw *hw = gs_hw_find_builtin("h100");
    gs_pcg32 rng;
    gs_pcg32_seed(&rng, 7, 0);
    int ok = 0;
    for (int i = 0; i < 2000; i++) {
        gs_etir e;
        bool valid = gs_space_draw(hw, op, &rng, &e);
        cr_assert_eq(valid, gs_hw_check(hw, op, &e));
        ok += valid;
    }
    cr_assert_gt(ok, 0, "no valid draw in 2000");
    gs_op_destroy(op);
}

/* Extents above 2^29: a block tile of 2^30 once doubled past int32 (to 0)
 * and the odometer never ended (issue 22). The whole space of a
 * K = 2^30 gemm is finite and small; every state stays within the cap. */
static bool count_tiles(const gs_etir *e, void *user) {
    visit_acc *a = user;
    a->n++;
    for (int d = 0; d < a->op->naxes; d++)
        if (e->tile[d].block < 1 || e->tile[d].block > gs_etir_max_tile(a->op, d)) a->bad_check++;
    return true;
}

Test(space, huge_extent_enumeration_ends, .timeout = 60) {
    const char *specs[] = {"gemm M=1 N=1 K=1073741824", "rowsum M=1 K=536870913", "gemv M=3 N=2147483647"};
    for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++) {
        gs_op *op = parse_op(specs[i]);
        visit_acc a = {gs_hw_find_builtin("t4"), op, 0, INFINITY, 0, 0};
        bool stopped = true;
        gs_space_enumerate(a.hw, op, 0, 0, count_tiles, &a, &stopped);
        cr_assert(!stopped, "%s: stopped with no cap and no budget", specs[i]);
        cr_assert_gt(a.n, 0, "%s: empty space", specs[i]);
        cr_assert_eq(a.bad_check, 0, "%s: %d states with a tile outside 1..max", specs[i], a.bad_check);
        gs_op_destroy(op);
    }
}

/* The tile action stops at the axis' cap 2^30 instead of wrapping. */
Test(space, tile_action_stops_at_2_30) {
    gs_op *op = parse_op("gemm M=1 N=1 K=1073741824");
    gs_etir e, next;
    gs_etir_init(op, &e);
    e.tile[2].block = gs_etir_max_tile(op, 2);
    cr_assert_eq(e.tile[2].block, 1 << 30);
    cr_assert(!gs_etir_apply(op, &e, (gs_action){GS_ACT_TILE, 2, 0}, 256, &next), "tiled past 2^30");
    gs_op_destroy(op);
}

/* The enumeration's own time budget: a visitor taking 1 ms per state on
 * a space of millions stops near max_ms. */
static bool slow_visit(const gs_etir *e, void *user) {
    (void)e;
    (*(int64_t *)user)++;
    struct timespec ts = {0, 1000000};
    nanosleep(&ts, NULL);
    return true;
}

Test(space, budget_bounds_the_enumeration, .timeout = 60) {
    gs_op *op = parse_op("conv2d N=1 C=1073741824 H=8 W=8 K=16 R=3 S=3");
    const gs_hw *hw = gs_hw_find_builtin("t4");
    int64_t n = 0;
    bool stopped = false;
    double t0 = gs_now_s();
    gs_space_enumerate(hw, op, 0, 200, slow_visit, &n, &stopped);
    double took = gs_now_s() - t0;
    cr_assert(stopped, "a 200 ms budget did not stop the enumeration (%lld states)", (long long)n);
    cr_assert_lt(took, 2.0, "a 200 ms budget took %.2f s", took);
    gs_op_destroy(op);
}

/* ---- the CLI ---------------------------------------------------------------------- */
static json_t *space_json(const char *bin, const char *args) {
    char full[1024];
    snprintf(full, sizeof full, "space --format json %s", args);
    return gs_test_cli_json(bin, full);
}

/* Every listed config parses back and passes the check; returns the count. */
static size_t check_listing(json_t *root, const char *spec, const char *hwname) {
    gs_op *op = parse_op(spec);
    const gs_hw *hw = gs_hw_find_builtin(hwname);
    json_t *arr = json_object_get(root, "configs");
    cr_assert(json_is_array(arr));
    size_t n = json_array_size(arr);
    cr_assert_gt(n, 0, "%s: empty listing", spec);
    cr_assert_eq((json_int_t)n, json_integer_value(json_object_get(root, "count")));
    gs_ctx *ctx = gs_ctx_create();
    for (size_t i = 0; i < n; i++) {
        json_t *c = json_array_get(arr, i);
        const char *cfg = json_string_value(json_object_get(c, "config"));
        cr_assert_not_null(cfg);
        gs_etir e;
        gs_status s = gs_etir_parse_config(ctx, op, cfg, &e);
        cr_assert_eq(s, GS_OK, "config %s: %s", cfg, gs_ctx_errmsg(ctx));
        cr_assert(gs_hw_check(hw, op, &e), "config %s fails the check on %s", cfg, hwname);
        double p = json_real_value(json_object_get(c, "predicted_s"));
        cr_assert(p > 0 && isfinite(p), "config %s: predicted %g", cfg, p);
    }
    gs_ctx_destroy(ctx);
    gs_op_destroy(op);
    return n;
}

Test(space, cli_lists_valid_configs) {
    const char *bin = gs_test_cli_bin("the space CLI checks");
    json_t *root = space_json(bin, "--hw rtx4090 'gemv M=1024 N=1024'");
    check_listing(root, "gemv M=1024 N=1024", "rtx4090");
    cr_assert(json_is_false(json_object_get(root, "truncated")), "the whole gemv space fits the default limit");
    json_decref(root);
    root = space_json(bin, "--hw a100 --limit 500 'conv2d N=1 C=32 H=28 W=28 K=32 R=3 S=3 pad=1'");
    cr_assert_eq(check_listing(root, "conv2d N=1 C=32 H=28 W=28 K=32 R=3 S=3 pad=1", "a100"), 500);
    cr_assert(json_is_true(json_object_get(root, "truncated")));
    json_decref(root);
    root = space_json(bin, "--hw h100 --sample 300 --seed 3 'gemm M=256 N=256 K=256'");
    size_t n = check_listing(root, "gemm M=256 N=256 K=256", "h100");
    cr_assert_eq(n, 300);
    json_t *arr = json_object_get(root, "configs");
    for (size_t i = 1; i < n; i++)
        for (size_t j = 0; j < i; j++)
            cr_assert_str_neq(json_string_value(json_object_get(json_array_get(arr, i), "config")),
                              json_string_value(json_object_get(json_array_get(arr, j), "config")),
                              "sample repeats a config");
    json_decref(root);
}

Test(space, cli_bad_input_exits_2) {
    const char *bin = gs_test_cli_bin("the space CLI checks");
    static const char *bad[] = {
        "'gemm M=4 N=4'",          "'gemn M=1 N=1 K=1'",           "'gemm M=0 N=1 K=1'",
        "--hw nosuch 'gemv M=4 N=4'", "--limit 0 'gemv M=4 N=4'", "--format xml 'gemv M=4 N=4'",
        "",                        "--sample 5 --limit 5 'gemv M=4 N=4'", "--seed 3 'gemv M=4 N=4'",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char cmd[1024];
        snprintf(cmd, sizeof cmd, "'%s' space %s 2>&1 >/dev/null", bin, bad[i]);
        int st;
        char *err = gs_test_run(cmd, &st);
        cr_assert_eq(st, 2, "gensor space %s exited %d (want 2): %s", bad[i], st, err);
        cr_assert(strstr(err, "error") != NULL, "gensor space %s: no error message: %s", bad[i], err);
        free(err);
    }
}
