/* test_api.c — the public API of include/gensor.h that the other files do not
 * cover: operator buffers, profiles from JSON text and from a device, the
 * policy and strategy names, one-candidate results from a config, the
 * candidates' config, plan and launch, kernels (emit, NVRTC, run on the
 * OpenCL device, on another shape), devices, refinement and the
 * dispatcher's attach. Link coverage of every declared function is
 * tests/api_check.sh; this file checks what the functions do. */
#include "construct/construct.h"
#include "tests/test_common.h"

#include <criterion/criterion.h>
#include <ctype.h>
#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

TestSuite(api, .timeout = 300);

static gs_op *parse_op(gs_ctx *ctx, const char *spec) {
    gs_op *op = NULL;
    gs_status s = gs_op_parse(ctx, spec, &op);
    cr_assert_eq(s, GS_OK, "%s: %s", spec, gs_ctx_errmsg(ctx));
    return op;
}

/* ---- operators, profiles, names --------------------------------------------------- */
Test(api, op_buffers_in_argument_order) {
    gs_ctx *ctx = gs_ctx_create();
    gs_op *ops[2] = {parse_op(ctx, "gemm M=5 N=7 K=3 bias=1"), parse_op(ctx, "rowsum M=6 K=9")};
    /* gemm with a bias: A, B, C, then the bias over n; rowsum: X and Y */
    static const struct {
        int n;
        const char *names[4];
        int64_t elems[4];
    } want[2] = {{4, {"A", "B", "C", "bias"}, {15, 21, 35, 7}}, {2, {"X", "Y"}, {54, 6}}};
    for (int o = 0; o < 2; o++) {
        cr_assert_eq(gs_op_num_buffers(ops[o]), want[o].n, "%s", gs_op_spec(ops[o]));
        for (int i = 0; i < want[o].n; i++) {
            cr_assert_str_eq(gs_op_buffer_name(ops[o], i), want[o].names[i]);
            cr_assert_eq(gs_op_buffer_elems(ops[o], i), want[o].elems[i], "%s buffer %d: %lld", gs_op_spec(ops[o]), i,
                         (long long)gs_op_buffer_elems(ops[o], i));
        }
        cr_assert_eq(gs_op_buffer_elems(ops[o], want[o].n), 0, "out of range");
        cr_assert_str_eq(gs_op_buffer_name(ops[o], -1), "");
        gs_op_destroy(ops[o]);
    }
    cr_assert_eq(gs_op_num_buffers(NULL), 0);
    cr_assert_eq(gs_op_flops(NULL), 0.0);
    gs_ctx_destroy(ctx);
}

/* A float literal written with a decimal comma ("2,5e-01"): in kernel
 * source the comma operator, in a spec a number no C-locale reader takes. */
static const char *comma_number(const char *s) {
    for (const char *p = s; *p; p++)
        if (*p == ',' && p > s && isdigit((unsigned char)p[-1]) && isdigit((unsigned char)p[1])) {
            const char *q = p + 1;
            while (isdigit((unsigned char)*q)) q++;
            if (*q == 'e' || *q == 'f' || *q == ' ' || !*q) return p;
        }
    return NULL;
}

/* A program that called setlocale(LC_ALL, "") in a German locale (LC_NUMERIC
 * de_DE: printf writes 0.5 as "0,5", strtod stops at '.') gets the same
 * specs and kernels as any other: '.' in what it parses and in what it
 * writes. Before, a spec's "alpha=0.5" was a parse error, the canonical spec
 * said "alpha=0,5", and a clip bound came out as gs_maxn(y, 0,000000000e+00f)
 * (three arguments) and a LeakyRelu slope as (2,500000000e-01f), which the
 * comma operator reads as 5e-1. */
Test(api, numbers_ignore_the_callers_locale) {
    gs_test_comma_locale("the decimal-comma checks");
    gs_ctx *ctx = gs_ctx_create();
    gs_hw *hw = NULL;
    cr_assert_eq(gs_hw_load(ctx, "rtx3090", &hw), GS_OK, "%s", gs_ctx_errmsg(ctx));
    gs_op *g = NULL;
    cr_assert_eq(gs_op_create_gemm(ctx, 8, 8, 8, 0, 0, 0.5f, 0.25f, &g), GS_OK, "%s", gs_ctx_errmsg(ctx));
    cr_assert_not_null(strstr(gs_op_spec(g), "alpha=0.5 beta=0.25"), "spec: %s", gs_op_spec(g));
    gs_op_destroy(g);
    static const char *const specs[] = {
        "unary M=8 N=8 act=leakyrelu act_p=0.25 alpha=0.5",
        "clip M=8 N=8 clip_lo=0.5 clip_hi=6",
        "gemm M=8 N=8 K=8 alpha=0.5 beta=0.25 clip_lo=-1.5 clip_hi=6.25",
    };
    gs_construct_opts o;
    gs_construct_opts_default(&o);
    o.top_k = 1;
    for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++) {
        gs_op *op = NULL;
        cr_assert_eq(gs_op_parse(ctx, specs[i], &op), GS_OK, "%s: %s", specs[i], gs_ctx_errmsg(ctx));
        cr_assert_null(comma_number(gs_op_spec(op)), "%s: spec %s", specs[i], gs_op_spec(op));
        gs_op *again = NULL; /* the canonical spec reads back */
        cr_assert_eq(gs_op_parse(ctx, gs_op_spec(op), &again), GS_OK, "%s: %s", gs_op_spec(op), gs_ctx_errmsg(ctx));
        cr_assert_str_eq(gs_op_spec(again), gs_op_spec(op));
        gs_op_destroy(again);
        gs_result *r = NULL;
        cr_assert_eq(gs_construct(ctx, op, hw, &o, &r), GS_OK, "%s: %s", specs[i], gs_ctx_errmsg(ctx));
        for (int d = 0; d < 2; d++) {
            char *src = NULL;
            cr_assert_eq(gs_kernel_emit(ctx, r, 0, (gs_dialect)d, &src), GS_OK, "%s", gs_ctx_errmsg(ctx));
            const char *bad = comma_number(src);
            cr_assert_null(bad, "%s (%s): a decimal comma in the source: '%.40s'", specs[i],
                           d ? "OpenCL" : "CUDA", bad ? bad - 8 : "");
            free(src);
        }
        gs_result_destroy(r);
        gs_op_destroy(op);
    }
    gs_hw_destroy(hw);
    gs_ctx_destroy(ctx);
    setlocale(LC_NUMERIC, "C");
}

Test(api, hw_parse_from_text) {
    gs_ctx *ctx = gs_ctx_create();
    gs_hw *hw = NULL;
    cr_assert_eq(gs_hw_parse(ctx, "{\"base\": \"t4\", \"name\": \"my-t4\", \"num_sms\": 20}", &hw), GS_OK, "%s",
                 gs_ctx_errmsg(ctx));
    cr_assert_str_eq(gs_hw_name(hw), "my-t4");
    cr_assert_eq(gs_hw_sm(hw), 75);
    gs_hw_destroy(hw);
    hw = (gs_hw *)1;
    gs_test_expect_err(ctx, gs_hw_parse(ctx, "{\"base\": \"t4\", \"num_sms\": 0}", &hw), GS_ERR_HW_INVALID, "num_sms",
                       "a broken rule");
    cr_assert_null(hw, "out is NULL after a failure");
    gs_test_expect_err(ctx, gs_hw_parse(ctx, "{\"base\": ", &hw), GS_ERR_JSON, NULL, "malformed JSON");
    gs_test_expect_err(ctx, gs_hw_parse(ctx, NULL, &hw), GS_ERR_INVALID_ARG, NULL, "NULL text");
    gs_ctx_destroy(ctx);
}

Test(api, policy_and_strategy_names) {
    gs_ctx *ctx = gs_ctx_create();
    for (int p = GS_POLICY_PAPER; p <= GS_POLICY_MODEL; p++) {
        gs_policy back = (gs_policy)-1;
        cr_assert_eq(gs_policy_parse(ctx, gs_policy_name((gs_policy)p), &back), GS_OK);
        cr_assert_eq((int)back, p);
    }
    for (int s = GS_STRATEGY_MARKOV; s <= GS_STRATEGY_RANDOM; s++) {
        gs_strategy back = (gs_strategy)-1;
        cr_assert_eq(gs_strategy_parse(ctx, gs_strategy_name((gs_strategy)s), &back), GS_OK);
        cr_assert_eq((int)back, s);
    }
    cr_assert_str_eq(gs_policy_name((gs_policy)7), "?");
    cr_assert_str_eq(gs_strategy_name((gs_strategy)-1), "?");
    gs_policy p;
    gs_strategy st;
    gs_test_expect_err(ctx, gs_policy_parse(ctx, "greedy", &p), GS_ERR_INVALID_ARG,
                       "unknown policy 'greedy' (paper, balanced, model)", "policy");
    gs_test_expect_err(ctx, gs_strategy_parse(ctx, "beam", &st), GS_ERR_INVALID_ARG,
                       "unknown strategy 'beam' (markov, tree, exhaustive, random)", "strategy");
    gs_ctx_destroy(ctx);
}

/* ---- results ------------------------------------------------------------------------- */
Test(api, config_round_trip_and_limits) {
    gs_test_fix f;
    gs_test_setup(&f, false, "a100", "gemm M=512 N=256 K=128", 3);
    for (int i = 0; i < gs_result_count(f.r); i++) {
        char cfg[256];
        cr_assert_eq(gs_result_config(f.r, i, cfg, sizeof cfg), GS_OK);
        gs_result *one = NULL;
        cr_assert_eq(gs_construct_config(f.ctx, f.op, f.hw, cfg, &one), GS_OK, "%s: %s", cfg, gs_ctx_errmsg(f.ctx));
        cr_assert_eq(gs_result_count(one), 1);
        cr_assert_str_eq(gs_result_describe(one, 0), gs_result_describe(f.r, i), "config %s", cfg);
        cr_assert_float_eq(gs_result_predicted_s(one, 0), gs_result_predicted_s(f.r, i), 1e-15, "config %s", cfg);
        gs_result_destroy(one);
    }
    gs_result *bad = (gs_result *)1;
    /* 128x128 threads per block is over every profile's limit */
    gs_test_expect_err(f.ctx,
                       gs_construct_config(f.ctx, f.op, f.hw, "bm=128,bn=128,bk=8,tm=1,tn=1,vm=1,vn=1,sa=1,sb=1", &bad),
                       GS_ERR_INVALID_ARG, "rejected on a100&&too many threads per block", "over the limits");
    cr_assert_null(bad);
    gs_test_expect_err(f.ctx, gs_construct_config(f.ctx, f.op, f.hw, "bm=64,bq=2", &bad), GS_ERR_PARSE, "bq",
                       "unknown key");
    gs_test_teardown(&f);
}

/* The banner of the emitted source says what the accessors say. */
Test(api, candidate_config_plan_launch_match_the_source) {
    gs_test_fix f;
    gs_test_setup(&f, false, "h100", "conv2d N=1 C=16 H=14 W=14 K=32 R=3 S=3 pad=1 bias=1", 2);
    for (int i = 0; i < gs_result_count(f.r); i++) {
        char cfg[256], plan[256], want[600];
        int64_t grid = 0, block = 0, smem = -1;
        cr_assert_eq(gs_result_config(f.r, i, cfg, sizeof cfg), GS_OK);
        cr_assert_eq(gs_result_plan(f.r, i, plan, sizeof plan), GS_OK);
        cr_assert_eq(gs_result_launch(f.r, i, &grid, &block, &smem), GS_OK);
        char *src = NULL;
        cr_assert_eq(gs_kernel_emit(f.ctx, f.r, i, GS_DIALECT_CUDA, &src), GS_OK, "%s", gs_ctx_errmsg(f.ctx));
        snprintf(want, sizeof want, " * config: %s\n * plan: %s\n", cfg, plan);
        cr_assert_not_null(strstr(src, want), "candidate %d: the source lacks\n%s", i, want);
        snprintf(want, sizeof want, " * launch: grid %lld x block %lld (1-D), %lld bytes of", (long long)grid,
                 (long long)block, (long long)smem);
        cr_assert_not_null(strstr(src, want), "candidate %d: the source lacks '%s'", i, want);
        free(src);
    }
    char small[8];
    cr_assert_eq(gs_result_config(f.r, 0, small, sizeof small), GS_ERR_INVALID_ARG, "a config does not fit 8 bytes");
    cr_assert_str_eq(small, "");
    cr_assert_eq(gs_result_plan(f.r, 99, small, sizeof small), GS_ERR_INVALID_ARG);
    int64_t g = 5;
    cr_assert_eq(gs_result_launch(f.r, -1, &g, NULL, NULL), GS_ERR_INVALID_ARG);
    cr_assert_eq(g, 0);
    gs_test_teardown(&f);
}

/* The launch description names every argument of the kernel, in the
 * signature's order, with its role and size: a split-K kernel's trailing
 * workspace (its bytes, zero before the first launch) and a kernel without
 * one. */
Test(api, launch_args_name_every_argument) {
    gs_test_fix f;
    gs_test_setup(&f, false, "t4", "gemm M=64 N=48 K=4096 bias=1", 1);
    static const char *cfgs[] = {"bm=32,bn=16,bk=8,tm=4,tn=4,vm=1,vn=1,sa=1,sb=1,split=4",
                                 "bm=32,bn=16,bk=8,tm=4,tn=4,vm=1,vn=1,sa=1,sb=1"};
    for (int c = 0; c < 2; c++) {
        gs_result *r = NULL;
        cr_assert_eq(gs_construct_config(f.ctx, f.op, f.hw, cfgs[c], &r), GS_OK, "%s", gs_ctx_errmsg(f.ctx));
        gs_launch_arg a[GS_LAUNCH_MAX_ARGS];
        int n = -1;
        cr_assert_eq(gs_result_launch_args(r, 0, a, GS_LAUNCH_MAX_ARGS, &n), GS_OK);
        char *src = NULL;
        cr_assert_eq(gs_kernel_emit(f.ctx, r, 0, GS_DIALECT_OPENCL, &src), GS_OK, "%s", gs_ctx_errmsg(f.ctx));
        /* the signature's parameters, by name */
        char *open = strstr(src, "void gs_");
        cr_assert_not_null(open);
        open = strchr(open, '(') + 1;
        char *close = strchr(open, ')');
        cr_assert_not_null(close);
        *close = 0;
        int k = 0;
        for (char *tok = strtok(open, ","); tok; tok = strtok(NULL, ","), k++) {
            const char *name = strrchr(tok, ' ') + 1;
            cr_assert_lt(k, n, "%s: the signature has more parameters than the %d listed", cfgs[c], n);
            cr_expect_str_eq(name, a[k].name, "%s: parameter %d", cfgs[c], k);
        }
        cr_expect_eq(k, n, "%s: %d parameters, %d listed", cfgs[c], k, n);
        free(src);
        cr_expect_eq(a[0].role, GS_ARG_INPUT);
        cr_expect_eq(a[0].elems, 64 * 4096);
        cr_expect_eq(a[1].elems, 4096 * 48);
        cr_expect_eq(a[2].role, GS_ARG_OUTPUT);
        cr_expect_eq(a[2].bytes, 4 * 64 * 48);
        cr_expect_eq(a[3].role, GS_ARG_BIAS);
        cr_expect_eq(a[3].elems, 48);
        cr_expect(a[4].role == GS_ARG_EXTENT && a[4].ivalue == 64 && a[6].ivalue == 4096);
        cr_expect_str_eq(a[4].type, "int");
        const gs_launch_arg *last = &a[n - 1];
        if (c == 0) {
            cr_expect_eq(last->role, GS_ARG_WORKSPACE, "a split kernel ends with its workspace");
            cr_expect_str_eq(last->name, "ws");
            cr_expect_eq(last->zero_first, 1);
            /* one int counter per output tile (2 x 3, rounded up to 4), then 4 slices of partials */
            cr_expect_eq(last->bytes, 4 * 8 + 4 * 4 * 64 * 48);
            cr_expect_eq(last->elems * 4, last->bytes);
            cr_expect_eq(a[n - 2].role, GS_ARG_BETA);
        } else {
            cr_expect_eq(last->role, GS_ARG_BETA, "no workspace without split-K");
        }
        for (int i = 0; i < n; i++) cr_expect(i == n - 1 || !a[i].zero_first);
        cr_expect_eq(gs_result_launch_args(r, 0, a, 5, &n), GS_ERR_INVALID_ARG, "5 is too few");
        cr_expect_eq(n, 0);
        cr_expect_eq(gs_result_launch_args(r, 1, a, GS_LAUNCH_MAX_ARGS, &n), GS_ERR_INVALID_ARG);
        gs_result_destroy(r);
    }
    gs_test_teardown(&f);
}

/* ---- kernels ------------------------------------------------------------------------- */
Test(api, kernel_create_is_emit) {
    gs_test_fix f;
    gs_test_setup(&f, false, "t4", "gemv M=300 N=200", 1);
    for (int d = GS_DIALECT_CUDA; d <= GS_DIALECT_OPENCL; d++) {
        gs_kernel *k = NULL;
        char *src = NULL;
        cr_assert_eq(gs_kernel_create(f.ctx, f.r, 0, (gs_dialect)d, 0, &k), GS_OK, "%s", gs_ctx_errmsg(f.ctx));
        cr_assert_eq(gs_kernel_emit(f.ctx, f.r, 0, (gs_dialect)d, &src), GS_OK);
        cr_assert_str_eq(gs_kernel_source(k), src, "gs_kernel_emit and gs_kernel_create differ (dialect %d)", d);
        cr_assert_eq(gs_kernel_arch(k), d == GS_DIALECT_CUDA ? 75 : 0);
        char name[40];
        snprintf(name, sizeof name, "gs_%016llx", (unsigned long long)gs_kernel_key(k));
        cr_assert_str_eq(gs_kernel_name(k), name);
        cr_assert_null(gs_kernel_binary(k, NULL), "nothing compiled yet");
        cr_assert_str_eq(gs_kernel_log(k), "");
        free(src);
        gs_kernel_destroy(k);
    }
    gs_kernel *k = (gs_kernel *)1;
    gs_test_expect_err(f.ctx, gs_kernel_create(f.ctx, f.r, 1, GS_DIALECT_CUDA, 0, &k), GS_ERR_INVALID_ARG,
                       "candidate 1 out of range", "index");
    cr_assert_null(k);
    gs_test_expect_err(f.ctx, gs_kernel_create(f.ctx, f.r, 0, GS_DIALECT_OPENCL, 80, &k), GS_ERR_INVALID_ARG, "OpenCL: 0",
                       "OpenCL arch");
    char *src = (char *)1;
    gs_test_expect_err(f.ctx, gs_kernel_emit(f.ctx, NULL, 0, GS_DIALECT_CUDA, &src), GS_ERR_INVALID_ARG, "NULL result",
                       "NULL result");
    cr_assert_null(src);
    gs_test_teardown(&f);
}

Test(api, kernel_compile_reports_ptxas) {
    gs_test_fix f;
    gs_test_setup(&f, false, "a100", "gemm M=256 N=256 K=64", 1);
    gs_kernel *cl = NULL;
    cr_assert_eq(gs_kernel_create(f.ctx, f.r, 0, GS_DIALECT_OPENCL, 0, &cl), GS_OK);
    gs_test_expect_err(f.ctx, gs_kernel_compile(f.ctx, cl, NULL), GS_ERR_INVALID_ARG, "is OpenCL C", "OpenCL to NVRTC");
    gs_kernel_destroy(cl);
    gs_test_need_nvrtc(f.ctx, "the NVRTC half of kernel_compile_reports_ptxas");
    gs_kernel *k = NULL;
    cr_assert_eq(gs_kernel_create(f.ctx, f.r, 0, GS_DIALECT_CUDA, 0, &k), GS_OK);
    gs_kernel_stats st;
    gs_status s = gs_kernel_compile(f.ctx, k, &st);
    cr_assert_eq(s, GS_OK, "%s", gs_ctx_errmsg(f.ctx));
    cr_assert_eq(st.arch, 80);
    cr_assert(st.registers > 0 && st.registers <= 255, "registers %d", st.registers);
    cr_assert_eq(st.spill_store_bytes + st.spill_load_bytes, 0, "a constructed gemm does not spill");
    int64_t smem = 0;
    gs_result_launch(f.r, 0, NULL, NULL, &smem);
    cr_assert(st.smem_bytes == smem || st.smem_bytes == 0, "ptxas smem %lld, planned %lld", (long long)st.smem_bytes,
              (long long)smem);
    size_t len = 0;
    const unsigned char *bin = gs_kernel_binary(k, &len);
    cr_assert(bin && len > 64 && bin[0] == 0x7f && bin[1] == 'E', "the cubin is an ELF image");
    cr_assert_not_null(strstr(gs_kernel_log(k), "ptxas"), "the log holds ptxas' report");
    gs_kernel_stats again;
    cr_assert_eq(gs_kernel_compile(f.ctx, k, &again), GS_OK, "compiling twice is answered from the kernel");
    cr_assert_eq(again.registers, st.registers);
    gs_kernel_destroy(k);
    gs_test_teardown(&f);
}

/* Run k on spec's operator with data from seed, compare with the
 * interpreter; returns the normwise error. */
static double run_against_interpreter(gs_ctx *ctx, gs_device *dev, gs_kernel *k, const char *spec) {
    gs_op *op = parse_op(ctx, spec);
    int nb = gs_op_num_buffers(op);
    float *host[GS_MAX_TENSORS + 1] = {0};
    gs_buffer *buf[GS_MAX_TENSORS + 1] = {0};
    gs_pcg32 rng;
    gs_pcg32_seed(&rng, 3, 0x617069ull);
    for (int i = 0; i < nb; i++) {
        int64_t n = gs_op_buffer_elems(op, i);
        host[i] = malloc((size_t)n * sizeof(float));
        gs_pcg32_fill_uniform(&rng, host[i], n);
        cr_assert_eq(gs_buffer_create(ctx, dev, (size_t)n * 4, host[i], &buf[i]), GS_OK, "%s", gs_ctx_errmsg(ctx));
    }
    int out = op->ninputs;
    int64_t on = gs_op_buffer_elems(op, out);
    float *ref = malloc((size_t)on * sizeof(float)), *got = malloc((size_t)on * sizeof(float));
    memcpy(ref, host[out], (size_t)on * sizeof(float));
    cr_assert_eq(gs_op_reference(ctx, op, (const float *const *)host, op->has_bias ? host[nb - 1] : NULL, ref), GS_OK);
    double el = -1;
    gs_status s = gs_kernel_run(ctx, dev, k, op, buf, nb, &el);
    cr_assert_eq(s, GS_OK, "%s: %s", spec, gs_ctx_errmsg(ctx));
    cr_assert(el > 0, "elapsed %g", el);
    cr_assert_eq(gs_buffer_read(ctx, buf[out], got, (size_t)on * 4), GS_OK);
    gs_diff d;
    memset(&d, 0, sizeof d);
    gs_diff_compute(got, ref, on, &d);
    for (int i = 0; i < nb; i++) {
        gs_buffer_destroy(buf[i]);
        free(host[i]);
    }
    free(ref);
    free(got);
    gs_op_destroy(op);
    return d.nonfinite ? INFINITY : d.normwise;
}

static gs_device *open_opencl(gs_ctx *ctx) {
    gs_device_close(gs_test_open_dev(ctx)); /* skips, or fails under GS_REQUIRE_OPENCL, without a device */
    gs_device *dev = NULL;
    cr_assert_eq(gs_device_open(ctx, GS_BACKEND_OPENCL, 0, &dev), GS_OK, "%s", gs_ctx_errmsg(ctx));
    cr_assert_eq(gs_device_backend(dev), GS_BACKEND_OPENCL);
    cr_assert_gt(strlen(gs_device_name(dev)), 0);
    return dev;
}

/* One kernel, constructed for one shape, runs on others (extents are
 * arguments); a kernel of another structure is refused. */
Test(api, kernel_runs_on_other_shapes) {
    gs_test_fix f;
    gs_test_setup(&f, false, "rtx3090", "gemm M=96 N=80 K=64 beta=0.5 bias=1 relu=1", 1);
    gs_device *dev = open_opencl(f.ctx);
    gs_kernel *k = NULL;
    cr_assert_eq(gs_kernel_create(f.ctx, f.r, 0, GS_DIALECT_OPENCL, 0, &k), GS_OK);
    const char *shapes[] = {"gemm M=96 N=80 K=64 beta=0.5 bias=1 relu=1", "gemm M=33 N=17 K=100 beta=0.5 bias=1 relu=1",
                            "gemm M=130 N=64 K=9 alpha=2 beta=0.5 bias=1 relu=1"};
    for (int i = 0; i < 3; i++) {
        double e = run_against_interpreter(f.ctx, dev, k, shapes[i]);
        cr_assert(e <= 1e-5, "%s: normwise error %g", shapes[i], e);
    }
    gs_op *other = parse_op(f.ctx, "gemm M=96 N=80 K=64 transA=1 beta=0.5 bias=1 relu=1");
    gs_buffer *none[4] = {0};
    gs_test_expect_err(f.ctx, gs_kernel_run(f.ctx, dev, k, other, none, 4, NULL), GS_ERR_INVALID_ARG,
                       "is not a shape of the kernel's operator", "transA differs");
    gs_test_expect_err(f.ctx, gs_kernel_run(f.ctx, dev, k, f.op, none, 3, NULL), GS_ERR_INVALID_ARG,
                       "takes 4 buffers (inputs, output, bias), got 3", "buffer count");
    gs_test_expect_err(f.ctx, gs_kernel_run(f.ctx, NULL, k, f.op, none, 4, NULL), GS_ERR_INVALID_ARG, "no device",
                       "no device");
    gs_op_destroy(other);
    gs_kernel_destroy(k);
    gs_device_close(dev);
    gs_test_teardown(&f);
}

/* The output's buffer bound to another argument: refused where the kernel
 * reads it at other points than it writes (a gemm's A, the bias, a
 * broadcast operand), run in place for an element-wise operator's input of
 * the output's shape, indexing and type, with the result out of place. */
static gs_kernel *first_kernel(gs_test_fix *f, const char *hw, const char *spec) {
    gs_test_setup(f, false, hw, spec, 2);
    gs_kernel *k = NULL;
    cr_assert_eq(gs_kernel_create(f->ctx, f->r, 0, GS_DIALECT_OPENCL, 0, &k), GS_OK, "%s", gs_ctx_errmsg(f->ctx));
    return k;
}

Test(api, output_buffer_bound_to_an_input) {
    gs_test_fix f;
    gs_kernel *k = first_kernel(&f, "a100", "gemm M=16 N=16 K=16 beta=0.5 bias=1");
    gs_device *dev = open_opencl(f.ctx);
    gs_buffer *b[4];
    for (int i = 0; i < 4; i++) cr_assert_eq(gs_buffer_create(f.ctx, dev, 16 * 16 * 4, NULL, &b[i]), GS_OK);
    gs_buffer *a_out[4] = {b[2], b[1], b[2], b[3]}, *bias_out[4] = {b[0], b[1], b[2], b[2]};
    gs_test_expect_err(f.ctx, gs_kernel_run(f.ctx, dev, k, f.op, a_out, 4, NULL), GS_ERR_INVALID_ARG,
                       "buffer 0 (A) is the output's buffer", "A bound to C");
    gs_test_expect_err(f.ctx, gs_kernel_run(f.ctx, dev, k, f.op, bias_out, 4, NULL), GS_ERR_INVALID_ARG,
                       "buffer 3 (bias) is the output's buffer", "the bias bound to C");
    gs_buffer *ok[4] = {b[0], b[0], b[2], b[3]}; /* A = B: both read only */
    cr_assert_eq(gs_kernel_run(f.ctx, dev, k, f.op, ok, 4, NULL), GS_OK, "%s", gs_ctx_errmsg(f.ctx));
    for (int i = 0; i < 4; i++) gs_buffer_destroy(b[i]);
    gs_kernel_destroy(k);
    gs_test_teardown(&f);

    /* element-wise: in place against out of place, two shapes (one kernel) and its second candidate */
    static const char *specs[] = {"add M=37 N=29 bcast=0", "add M=61 N=127 bcast=0"};
    for (int cand = 0; cand < 2; cand++) {
        gs_test_setup(&f, false, "rtx3090", specs[0], 2);
        cr_assert_eq(gs_kernel_create(f.ctx, f.r, cand, GS_DIALECT_OPENCL, 0, &k), GS_OK, "%s", gs_ctx_errmsg(f.ctx));
        for (int si = 0; si < 2; si++) {
            gs_op *op = parse_op(f.ctx, specs[si]);
            const int64_t n = gs_op_buffer_elems(op, 2);
            float *x = malloc((size_t)n * 4), *y = malloc((size_t)n * 4), *want = malloc((size_t)n * 4),
                  *got = malloc((size_t)n * 4);
            gs_pcg32 g;
            gs_pcg32_seed(&g, 7, (uint64_t)si);
            gs_pcg32_fill_uniform(&g, x, n);
            gs_pcg32_fill_uniform(&g, y, n);
            gs_buffer *bx, *by, *bo;
            cr_assert_eq(gs_buffer_create(f.ctx, dev, (size_t)n * 4, x, &bx), GS_OK);
            cr_assert_eq(gs_buffer_create(f.ctx, dev, (size_t)n * 4, y, &by), GS_OK);
            cr_assert_eq(gs_buffer_create(f.ctx, dev, (size_t)n * 4, NULL, &bo), GS_OK);
            gs_buffer *apart[3] = {bx, by, bo}, *in0[3] = {bx, by, bx}, *in1[3] = {bx, by, by};
            cr_assert_eq(gs_kernel_run(f.ctx, dev, k, op, apart, 3, NULL), GS_OK, "%s", gs_ctx_errmsg(f.ctx));
            cr_assert_eq(gs_buffer_read(f.ctx, bo, want, (size_t)n * 4), GS_OK);
            /* X += Y in place, then Y += X (X now the sum) */
            cr_assert_eq(gs_kernel_run(f.ctx, dev, k, op, in0, 3, NULL), GS_OK, "%s", gs_ctx_errmsg(f.ctx));
            cr_assert_eq(gs_buffer_read(f.ctx, bx, got, (size_t)n * 4), GS_OK);
            cr_expect(!memcmp(got, want, (size_t)n * 4), "%s candidate %d: X += Y in place differs", specs[si], cand);
            cr_assert_eq(gs_kernel_run(f.ctx, dev, k, op, in1, 3, NULL), GS_OK, "%s", gs_ctx_errmsg(f.ctx));
            cr_assert_eq(gs_buffer_read(f.ctx, by, got, (size_t)n * 4), GS_OK);
            int64_t bad = 0;
            for (int64_t i = 0; i < n; i++) bad += got[i] != want[i] + y[i];
            cr_expect_eq(bad, 0, "%s candidate %d: Y += X in place: %lld differ", specs[si], cand, (long long)bad);
            gs_buffer_destroy(bx);
            gs_buffer_destroy(by);
            gs_buffer_destroy(bo);
            free(x);
            free(y);
            free(want);
            free(got);
            gs_op_destroy(op);
        }
        gs_kernel_destroy(k);
        gs_test_teardown(&f);
    }
    /* a broadcast operand ([N]) bound to the [M, N] output */
    k = first_kernel(&f, "t4", "add M=8 N=8 bcast=1");
    gs_buffer *v;
    cr_assert_eq(gs_buffer_create(f.ctx, dev, 8 * 8 * 4, NULL, &v), GS_OK);
    gs_buffer *vb[3] = {v, v, v};
    gs_test_expect_err(f.ctx, gs_kernel_run(f.ctx, dev, k, f.op, vb, 3, NULL), GS_ERR_INVALID_ARG,
                       "buffer 1 (Y) is the output's buffer", "the broadcast operand bound to the output");
    gs_buffer_destroy(v);
    gs_kernel_destroy(k);
    gs_test_teardown(&f);
    gs_device_close(dev);
}

/* A 1x1 conv constructed with GS_FORM_AUTO (the CLI's default) is kept as
 * its matmul form; the kernel runs the conv itself, at its own shape and at
 * other 1x1 shapes, NCHW and NHWC with bias and relu, and refuses a conv it
 * cannot be (a stride) or of another structure (no bias). */
Test(api, kernel_of_the_1x1_matmul_form_runs_the_conv) {
    gs_ctx *ctx = gs_ctx_create();
    gs_device *dev = open_opencl(ctx);
    gs_hw *hw = NULL;
    cr_assert_eq(gs_hw_load(ctx, "rtx3090", &hw), GS_OK, "%s", gs_ctx_errmsg(ctx));
    static const struct { const char *spec, *other, *stride, *nobias; } cases[] = {
        {"conv2d N=2 C=19 H=3 W=11 K=5 R=1 S=1 layout=nchw bias=1", "conv2d N=3 C=7 H=4 W=5 K=9 R=1 S=1 layout=nchw bias=1",
         "conv2d N=2 C=19 H=3 W=11 K=5 R=1 S=1 stride=2 layout=nchw bias=1",
         "conv2d N=2 C=19 H=3 W=11 K=5 R=1 S=1 layout=nchw"},
        {"conv2d N=3 C=37 H=5 W=7 K=13 R=1 S=1 layout=nhwc bias=1 relu=1",
         "conv2d N=1 C=20 H=9 W=2 K=30 R=1 S=1 layout=nhwc bias=1 relu=1",
         "conv2d N=3 C=37 H=5 W=7 K=13 R=1 S=1 pad=1 layout=nhwc bias=1 relu=1",
         "conv2d N=3 C=37 H=5 W=7 K=13 R=1 S=1 layout=nhwc relu=1"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        gs_op *op = parse_op(ctx, cases[i].spec);
        gs_construct_opts co;
        gs_construct_opts_default(&co);
        co.top_k = 1;
        co.conv_form = GS_FORM_AUTO;
        gs_result *r = NULL;
        cr_assert_eq(gs_construct(ctx, op, hw, &co, &r), GS_OK, "%s", gs_ctx_errmsg(ctx));
        cr_assert(!strncmp(gs_result_form(r), "matmul ", 7), "%s: the form kept is %s (the test needs the matmul form)",
                  cases[i].spec, gs_result_form(r));
        gs_kernel *k = NULL;
        cr_assert_eq(gs_kernel_create(ctx, r, 0, GS_DIALECT_OPENCL, 0, &k), GS_OK, "%s", gs_ctx_errmsg(ctx));
        double e = run_against_interpreter(ctx, dev, k, cases[i].spec);
        cr_assert(e <= 1e-5, "%s: normwise error %g", cases[i].spec, e);
        e = run_against_interpreter(ctx, dev, k, cases[i].other);
        cr_assert(e <= 1e-5, "%s: normwise error %g", cases[i].other, e);
        gs_buffer *none[4] = {0};
        gs_op *bad = parse_op(ctx, cases[i].stride);
        gs_test_expect_err(ctx, gs_kernel_run(ctx, dev, k, bad, none, 4, NULL), GS_ERR_INVALID_ARG,
                           "is not a shape of the kernel's operator matmul&&a stride or padding", cases[i].stride);
        gs_op_destroy(bad);
        bad = parse_op(ctx, cases[i].nobias);
        gs_test_expect_err(ctx, gs_kernel_run(ctx, dev, k, bad, none, 3, NULL), GS_ERR_INVALID_ARG, "differ in bias",
                           cases[i].nobias);
        gs_op_destroy(bad);
        gs_kernel_destroy(k);
        gs_result_destroy(r);
        gs_op_destroy(op);
    }
    gs_hw_destroy(hw);
    gs_device_close(dev);
    gs_ctx_destroy(ctx);
}

/* A kernel refuses an operator of another structure and names the
 * attribute that differs: beta = 0 against a beta != 0 kernel, bias, relu
 * (the structure check comes before the device is needed). */
Test(api, kernel_run_names_the_differing_attribute) {
    gs_test_fix f;
    gs_test_setup(&f, false, "rtx3090", "gemm M=64 N=48 K=32 beta=0.5", 1);
    gs_kernel *k = NULL;
    cr_assert_eq(gs_kernel_create(f.ctx, f.r, 0, GS_DIALECT_OPENCL, 0, &k), GS_OK);
    static const struct { const char *spec, *needle; } cases[] = {
        {"gemm M=64 N=48 K=32", "is not a shape of the kernel's operator&&differ in beta&&the operator's is 0"},
        {"gemm M=64 N=48 K=32 beta=0.5 bias=1", "differ in bias"},
        {"gemm M=64 N=48 K=32 beta=0.5 relu=1", "differ in relu"},
        {"gemm M=64 N=48 K=32 beta=0.5 transB=1", "differ in the tensors' indexing"},
        {"gemm M=64 N=48 K=32 beta=0.5 dtype=f16", "differ in the element types: the kernel's are f32/f32, the operator's f16/f16"},
        {"gemm M=64 N=48 K=32 beta=0.5 math=tf32", "differ in math: the kernel's is f32, the operator's is tf32"},
    };
    gs_buffer *none[4] = {0};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        gs_op *op = parse_op(f.ctx, cases[i].spec);
        gs_test_expect_err(f.ctx, gs_kernel_run(f.ctx, NULL, k, op, none, 3, NULL), GS_ERR_INVALID_ARG, cases[i].needle,
                           cases[i].spec);
        gs_op_destroy(op);
    }
    gs_kernel_destroy(k);
    gs_test_teardown(&f);
}

/* gs_op_create_gemm_ex builds the operator the spec's epilogue keys give. */
Test(api, gemm_ex_epilogue) {
    gs_ctx *ctx = gs_ctx_create();
    gs_op *a = NULL, *b = NULL;
    const gs_gemm_epilogue e = {.alpha = 2.0f, .beta = 0.5f, .bias = 1, .relu = 1};
    cr_assert_eq(gs_op_create_gemm_ex(ctx, 40, 24, 8, 0, 1, &e, &a), GS_OK, "%s", gs_ctx_errmsg(ctx));
    b = parse_op(ctx, "gemm M=40 N=24 K=8 transB=1 alpha=2 beta=0.5 bias=1 relu=1");
    cr_assert_str_eq(gs_op_spec(a), gs_op_spec(b));
    cr_assert_eq(gs_op_num_buffers(a), 4);
    cr_assert_str_eq(gs_op_buffer_name(a, 3), "bias");
    cr_assert_eq(gs_op_buffer_elems(a, 3), 24, "a bias per column n");
    gs_op_destroy(a);
    gs_op_destroy(b);
    /* NULL: gs_op_create_gemm's alpha 1, beta 0 */
    cr_assert_eq(gs_op_create_gemm_ex(ctx, 4, 4, 4, 0, 0, NULL, &a), GS_OK);
    cr_assert_eq(gs_op_create_gemm(ctx, 4, 4, 4, 0, 0, 1.0f, 0.0f, &b), GS_OK);
    cr_assert_str_eq(gs_op_spec(a), gs_op_spec(b));
    cr_assert_eq(gs_op_num_buffers(a), 3);
    gs_op_destroy(a);
    gs_op_destroy(b);
    a = (gs_op *)1;
    const gs_gemm_epilogue bad = {.alpha = 1.0f, .bias = 2};
    gs_test_expect_err(ctx, gs_op_create_gemm_ex(ctx, 4, 4, 4, 0, 0, &bad, &a), GS_ERR_INVALID_ARG,
                       "bias must be 0 or 1", "bias=2");
    cr_assert_null(a);
    gs_test_expect_err(ctx, gs_op_create_gemm_ex(ctx, 0, 4, 4, 0, 0, &e, &a), GS_ERR_BAD_SHAPE, NULL, "M=0");
    gs_ctx_destroy(ctx);
}

/* gs_buffer_write fills a buffer's start; read gives it back. */
Test(api, buffer_write_read_back) {
    gs_ctx *ctx = gs_ctx_create();
    gs_device *dev = open_opencl(ctx);
    gs_buffer *b = NULL;
    cr_assert_eq(gs_buffer_create(ctx, dev, 16 * sizeof(float), NULL, &b), GS_OK, "%s", gs_ctx_errmsg(ctx));
    float w[8], r[16];
    for (int i = 0; i < 8; i++) w[i] = (float)i + 0.25f;
    cr_assert_eq(gs_buffer_write(ctx, b, w, sizeof w), GS_OK, "%s", gs_ctx_errmsg(ctx));
    cr_assert_eq(gs_buffer_read(ctx, b, r, sizeof r), GS_OK, "%s", gs_ctx_errmsg(ctx));
    for (int i = 0; i < 16; i++) cr_assert_eq(r[i], i < 8 ? w[i] : 0.0f, "element %d", i);
    float big[17] = {0};
    gs_test_expect_err(ctx, gs_buffer_write(ctx, b, big, sizeof big), GS_ERR_INVALID_ARG, "68 bytes into a buffer of 64",
                       "too many bytes");
    gs_test_expect_err(ctx, gs_buffer_write(ctx, NULL, w, 4), GS_ERR_INVALID_ARG, "NULL", "NULL buffer");
    gs_test_expect_err(ctx, gs_buffer_write(ctx, b, NULL, 4), GS_ERR_INVALID_ARG, "NULL", "NULL host");
    gs_buffer_destroy(b);
    gs_device_close(dev);
    gs_ctx_destroy(ctx);
}

/* gs_dispatch_run launches only what the dispatcher built for that shape. */
Test(api, dispatch_run_refuses_what_it_did_not_build) {
    gs_ctx *ctx = gs_ctx_create();
    gs_hw *hw = NULL;
    cr_assert_eq(gs_hw_load(ctx, "rtx3090", &hw), GS_OK);
    gs_dispatch_opts o;
    gs_dispatch_opts_default(&o);
    o.dialect = GS_DIALECT_OPENCL;
    o.cache_dir = "";
    gs_dispatcher *d = NULL;
    gs_op *op = parse_op(ctx, "gemm M=32 N=16 K=24"), *other = parse_op(ctx, "gemm M=48 N=16 K=24 beta=1");
    gs_kernel_handle h;
    cr_assert_eq(gs_dispatcher_create(ctx, hw, &o, &d), GS_OK);
    cr_assert_eq(gs_dispatch(ctx, d, op, &h), GS_OK, "%s", gs_ctx_errmsg(ctx));
    gs_buffer *none[3] = {0};
    gs_test_expect_err(ctx, gs_dispatch_run(ctx, d, op, &h, none, 3, NULL), GS_ERR_INVALID_ARG, "no device attached",
                       "no device");
    gs_dispatcher_destroy(d);
    gs_device *dev = open_opencl(ctx);
    cr_assert_eq(gs_dispatcher_create(ctx, hw, &o, &d), GS_OK);
    cr_assert_eq(gs_dispatcher_attach(ctx, d, dev), GS_OK, "%s", gs_ctx_errmsg(ctx));
    cr_assert_eq(gs_dispatch(ctx, d, op, &h), GS_OK, "%s", gs_ctx_errmsg(ctx));
    gs_test_expect_err(ctx, gs_dispatch_run(ctx, d, other, &h, none, 3, NULL), GS_ERR_INVALID_ARG,
                       "was not dispatched by this dispatcher", "another shape");
    gs_kernel_handle h2;
    cr_assert_eq(gs_dispatch(ctx, d, other, &h2), GS_OK, "%s", gs_ctx_errmsg(ctx));
    gs_test_expect_err(ctx, gs_dispatch_run(ctx, d, other, &h, none, 3, NULL), GS_ERR_INVALID_ARG,
                       "is not the kernel dispatched for", "another kernel's handle");
    gs_test_expect_err(ctx, gs_dispatch_run(ctx, d, op, &h, none, 3, NULL), GS_ERR_INVALID_ARG,
                       "buffer 0 is NULL", "NULL buffers");
    gs_test_expect_err(ctx, gs_dispatch_run(ctx, d, op, NULL, none, 3, NULL), GS_ERR_INVALID_ARG, "NULL", "NULL handle");
    gs_dispatcher_destroy(d);
    gs_op_destroy(op);
    gs_op_destroy(other);
    gs_device_close(dev);
    gs_hw_destroy(hw);
    gs_ctx_destroy(ctx);
}

/* ---- devices ------------------------------------------------------------------------- */
Test(api, devices_say_what_is_missing) {
    gs_ctx *ctx = gs_ctx_create();
    gs_device *dev = (gs_device *)1;
    gs_test_expect_err(ctx, gs_device_open(ctx, GS_BACKEND_OPENCL, 1, &dev), GS_ERR_INVALID_ARG, "GS_CL_DEVICE",
                       "OpenCL index");
    cr_assert_null(dev);
    gs_test_expect_err(ctx, gs_device_open(ctx, (gs_backend)9, 0, &dev), GS_ERR_INVALID_ARG, "unknown backend",
                       "backend");
    gs_status s = gs_device_open(ctx, GS_BACKEND_CUDA, 0, &dev);
    if (s == GS_OK) {
        cr_log_info("a CUDA device is present (%s): the no-driver message is not checked here", gs_device_name(dev));
        gs_device_close(dev);
    } else {
        gs_test_expect_err(ctx, s, GS_ERR_CUDA_MISSING, "no CUDA device: measurement-free mode (", "no CUDA device");
        cr_assert_null(dev);
    }
    gs_hw *hw = NULL;
    gs_test_expect_err(ctx, gs_hw_query(ctx, NULL, NULL, &hw), GS_ERR_INVALID_ARG, "no device", "query without a device");
    int pick = 7;
    double med[2] = {0, 0};
    gs_test_expect_err(ctx, gs_refine(ctx, NULL, NULL, 2, 0, &pick, med), GS_ERR_INVALID_ARG,
                       "refine: no device (open one with gs_device_open)", "refine without a device");
    cr_assert_eq(pick, -1);
    cr_assert(isnan(med[0]) && isnan(med[1]));
    gs_ctx_destroy(ctx);
}

Test(api, opencl_query_refine_attach) {
    gs_test_fix f;
    gs_test_setup(&f, false, "rtx4090", "gemm M=64 N=64 K=64", 2);
    gs_device *dev = open_opencl(f.ctx);
    /* the device's own profile ("--hw auto") */
    gs_hw *hw = NULL;
    cr_assert_eq(gs_hw_query(f.ctx, dev, NULL, &hw), GS_OK, "%s", gs_ctx_errmsg(f.ctx));
    cr_assert_eq(strncmp(gs_hw_name(hw), "auto-", 5), 0, "name %s", gs_hw_name(hw));
    gs_hw_destroy(hw);
    /* refinement times the top 2 and picks the faster */
    int pick = -1;
    double med[2] = {0, 0};
    cr_assert_eq(gs_refine(f.ctx, dev, f.r, 2, 20, &pick, med), GS_OK, "%s", gs_ctx_errmsg(f.ctx));
    cr_assert(pick == 0 || pick == 1, "pick %d", pick);
    cr_assert(med[pick] > 0 && isfinite(med[pick]), "median %g", med[pick]);
    cr_assert(isnan(med[1 - pick]) || med[pick] <= med[1 - pick], "the pick is the faster median");
    /* the dispatcher builds on the attached device */
    gs_dispatch_opts o;
    gs_dispatch_opts_default(&o);
    o.dialect = GS_DIALECT_OPENCL;
    o.cache_dir = "";
    gs_dispatcher *d = NULL;
    cr_assert_eq(gs_dispatcher_create(f.ctx, f.hw, &o, &d), GS_OK, "%s", gs_ctx_errmsg(f.ctx));
    cr_assert_eq(gs_dispatcher_attach(f.ctx, d, dev), GS_OK, "%s", gs_ctx_errmsg(f.ctx));
    gs_kernel_handle h;
    cr_assert_eq(gs_dispatch(f.ctx, d, f.op, &h), GS_OK, "%s", gs_ctx_errmsg(f.ctx));
    cr_assert_not_null(h.program, "an attached device gets a built program");
    gs_dispatcher_destroy(d);
    o.dialect = GS_DIALECT_CUDA;
    cr_assert_eq(gs_dispatcher_create(f.ctx, f.hw, &o, &d), GS_OK);
    gs_test_expect_err(f.ctx, gs_dispatcher_attach(f.ctx, d, dev), GS_ERR_INVALID_ARG, "emits CUDA, not OpenCL",
                       "dialect mismatch");
    gs_dispatcher_destroy(d);
    gs_device_close(dev);
    gs_test_teardown(&f);
}
