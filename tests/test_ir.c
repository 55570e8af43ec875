/* test_ir.c — the operator IR: spec parsing (every error path, data-driven from
 * tests/data/ir_bad_specs.txt), validation and the gemm builder, footprint and
 * traffic from the affine maps, the ETIR actions and config text form, the
 * reference interpreter, and the utilities (string builder, arena, status
 * strings, hash), with regression tests for the defects found while writing
 * them (float overflow in specs, spec round trip, arena wrap, FNV-1a). */
#include "ir/ir.h"
#include "tests/test_common.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

TestSuite(ir);

/* ---- helpers ------------------------------------------------------------------- */

static const struct {
    const char *name;
    gs_status s;
} status_names[] = {
    {"OK", GS_OK},
    {"INVALID_ARG", GS_ERR_INVALID_ARG},
    {"PARSE", GS_ERR_PARSE},
    {"UNKNOWN_OP", GS_ERR_UNKNOWN_OP},
    {"BAD_SHAPE", GS_ERR_BAD_SHAPE},
    {"NOMEM", GS_ERR_NOMEM},
};

static bool status_from_name(const char *name, gs_status *out) {
    for (size_t i = 0; i < sizeof status_names / sizeof status_names[0]; i++)
        if (!strcmp(name, status_names[i].name)) {
            *out = status_names[i].s;
            return true;
        }
    return false;
}

/* In place: \t \n \\ escapes. */
static void unescape(char *s) {
    char *w = s;
    for (const char *r = s; *r; r++) {
        if (*r == '\\' && r[1]) {
            r++;
            *w++ = *r == 't' ? '\t' : *r == 'n' ? '\n' : *r;
        } else {
            *w++ = *r;
        }
    }
    *w = 0;
}

static gs_op gemm(int64_t M, int64_t N, int64_t K, int tA, int tB, float alpha, float beta) {
    gs_op op;
    gs_ctx *ctx = gs_ctx_create();
    gs_status s = gs_op_build_gemm(ctx, &op, M, N, K, tA, tB, alpha, beta);
    cr_assert_eq(s, GS_OK, "gemm %lld %lld %lld: %s", (long long)M, (long long)N, (long long)K, gs_ctx_errmsg(ctx));
    gs_ctx_destroy(ctx);
    return op;
}

enum { AX_M = 0, AX_N = 1, AX_K = 2 };

/* ---- spec parsing: valid specs ------------------------------------------------------ */

static const struct good_spec {
    const char *spec;
    int64_t M, N, K;
    int tA, tB;
    float alpha, beta;
    const char *canonical;
} good_specs[] = {
    {"gemm M=64 N=32 K=16", 64, 32, 16, 0, 0, 1.0f, 0.0f, "gemm M=64 N=32 K=16 transA=0 transB=0 alpha=1 beta=0"},
    {"gemm K=7 transB=1 N=5 M=3 alpha=-2.5 beta=0.25", 3, 5, 7, 0, 1, -2.5f, 0.25f,
     "gemm M=3 N=5 K=7 transA=0 transB=1 alpha=-2.5 beta=0.25"},
    {"  gemm\tM=1\nN=1  K=1 transA=1 transB=0  ", 1, 1, 1, 1, 0, 1.0f, 0.0f,
     "gemm M=1 N=1 K=1 transA=1 transB=0 alpha=1 beta=0"},
    {"gemm M=4 N=8 K=2 transA=1 transB=1 alpha=1e2 beta=1", 4, 8, 2, 1, 1, 100.0f, 1.0f,
     "gemm M=4 N=8 K=2 transA=1 transB=1 alpha=100 beta=1"},
    {"gemm M=0010 N=2039 K=65536 alpha=0.5", 10, 2039, 65536, 0, 0, 0.5f, 0.0f,
     "gemm M=10 N=2039 K=65536 transA=0 transB=0 alpha=0.5 beta=0"},
    {"gemm M=2147483647 N=1 K=1", 2147483647, 1, 1, 0, 0, 1.0f, 0.0f,
     "gemm M=2147483647 N=1 K=1 transA=0 transB=0 alpha=1 beta=0"},
    {"gemm M=65536 N=4 K=1024 transA=0 transB=1 alpha=-1 beta=-0.125", 65536, 4, 1024, 0, 1, -1.0f, -0.125f,
     "gemm M=65536 N=4 K=1024 transA=0 transB=1 alpha=-1 beta=-0.125"},
};
#define N_GOOD ((int)(sizeof good_specs / sizeof good_specs[0]))

static void assert_gemm_fields(const gs_op *op, const struct good_spec *g) {
    cr_assert_eq(op->kind, GS_OPK_GEMM, "%s", g->spec);
    cr_assert_eq(op->naxes, 3, "%s", g->spec);
    cr_assert_eq(op->axes[AX_M].extent, g->M, "%s: M", g->spec);
    cr_assert_eq(op->axes[AX_N].extent, g->N, "%s: N", g->spec);
    cr_assert_eq(op->axes[AX_K].extent, g->K, "%s: K", g->spec);
    cr_assert_eq(op->transA, g->tA, "%s: transA", g->spec);
    cr_assert_eq(op->transB, g->tB, "%s: transB", g->spec);
    cr_assert(op->epi.alpha == g->alpha, "%s: alpha %g want %g", g->spec, op->epi.alpha, g->alpha);
    cr_assert(op->epi.beta == g->beta, "%s: beta %g want %g", g->spec, op->epi.beta, g->beta);
    cr_assert_eq(op->epi.bias_axis, -1);
    cr_assert_eq(op->epi.relu, 0);
    cr_assert(!op->has_bias);
    cr_assert_eq(op->combine, GS_COMBINE_MAC);
    cr_assert_eq(op->ninputs, 2);
}

Test(ir, parse_valid_specs) {
    gs_ctx *ctx = gs_ctx_create();
    for (int i = 0; i < N_GOOD; i++) {
        const struct good_spec *g = &good_specs[i];
        gs_op *op = NULL;
        gs_status s = gs_op_parse(ctx, g->spec, &op);
        cr_assert_eq(s, GS_OK, "'%s': %s (%s)", g->spec, gs_status_str(s), gs_ctx_errmsg(ctx));
        cr_assert_not_null(op);
        assert_gemm_fields(op, g);
        cr_assert_str_eq(gs_op_spec(op), g->canonical, "'%s'", g->spec);
        double flops = 2.0 * (double)g->M * (double)g->N * (double)g->K;
        cr_assert(gs_op_flops(op) == flops, "'%s': flops %g want %g", g->spec, gs_op_flops(op), flops);
        /* caller-storage variant gives the same operator */
        gs_op into;
        cr_assert_eq(gs_op_parse_into(ctx, g->spec, &into), GS_OK);
        assert_gemm_fields(&into, g);
        cr_assert_str_eq(into.spec, g->canonical);
        gs_op_destroy(op);
    }
    /* the builder gives the same canonical spec */
    gs_op *op = NULL;
    cr_assert_eq(gs_op_create_gemm(ctx, 3, 5, 7, 0, 1, -2.5f, 0.25f, &op), GS_OK);
    cr_assert_str_eq(gs_op_spec(op), good_specs[1].canonical);
    gs_op_destroy(op);
    gs_op_destroy(NULL);
    cr_assert_str_eq(gs_op_spec(NULL), "");
    gs_ctx_destroy(ctx);
}

/* Parsing the canonical spec gives back the same operator and spec. */
Test(ir, canonical_spec_roundtrip) {
    gs_ctx *ctx = gs_ctx_create();
    for (int i = 0; i < N_GOOD; i++) {
        gs_op a, b;
        cr_assert_eq(gs_op_parse_into(ctx, good_specs[i].spec, &a), GS_OK);
        gs_status s = gs_op_parse_into(ctx, a.spec, &b);
        cr_assert_eq(s, GS_OK, "canonical '%s' does not parse: %s", a.spec, gs_ctx_errmsg(ctx));
        cr_assert_str_eq(a.spec, b.spec);
        assert_gemm_fields(&b, &good_specs[i]);
        cr_assert(memcmp(a.tensors, b.tensors, sizeof a.tensors) == 0, "'%s': tensors differ", a.spec);
        cr_assert(memcmp(a.axes, b.axes, sizeof a.axes) == 0, "'%s': axes differ", a.spec);
    }
    gs_ctx_destroy(ctx);
}

/* ---- spec parsing: bad specs (data file) ------------------------------------------------ */

Test(ir, parse_bad_specs_from_data_file) {
    gs_test_lines l;
    gs_test_lines_read("ir_bad_specs.txt", &l);
    const char *path = l.path;
    gs_ctx *ctx = gs_ctx_create();
    int cases = 0, failures = 0;
    for (int li = 0; li < l.n; li++) {
        char *line = l.text[li];
        int lineno = l.lineno[li];
        char *t1 = strchr(line, '\t');
        cr_assert_not_null(t1, "%s:%d: no tab after STATUS", path, lineno);
        *t1 = 0;
        char *t2 = strchr(t1 + 1, '\t');
        cr_assert_not_null(t2, "%s:%d: no tab after NEEDLES", path, lineno);
        *t2 = 0;
        const char *needles = t1 + 1;
        char *spec = t2 + 1;
        unescape(spec);
        gs_status want;
        cr_assert(status_from_name(line, &want), "%s:%d: unknown status name '%s'", path, lineno, line);
        cases++;

        gs_op *op = (gs_op *)ctx; /* must be reset to NULL */
        snprintf(ctx->msg, sizeof ctx->msg, "stale");
        gs_status s = gs_op_parse(ctx, spec, &op);
        bool ok = s == want && op == NULL;
        char buf[512];
        snprintf(buf, sizeof buf, "%s", needles);
        for (char *p = buf; p && ok;) {
            char *amp = strstr(p, "&&");
            if (amp) *amp = 0;
            if (!strstr(gs_ctx_errmsg(ctx), p)) ok = false;
            p = amp ? amp + 2 : NULL;
        }
        cr_expect(ok, "%s:%d: spec '%s': got %s (%d), op %s, msg '%s'; want %s with '%s'", path, lineno, spec,
                  gs_status_str(s), s, op ? "set" : "NULL", gs_ctx_errmsg(ctx), line, needles);
        if (!ok) failures++;
        if (op && op != (gs_op *)ctx) gs_op_destroy(op);

        /* the caller-storage parser and a NULL context agree */
        gs_op tmp;
        gs_status s2 = gs_op_parse_into(NULL, spec, &tmp);
        cr_expect_eq(s2, want, "%s:%d: gs_op_parse_into(NULL ctx) gave %d", path, lineno, s2);
        if (s2 != want) failures++;
    }
    gs_ctx_destroy(ctx);
    cr_assert_geq(cases, 40, "only %d cases read from %s", cases, path);
    cr_assert_eq(failures, 0, "%d of %d bad-spec cases failed (see above)", failures, cases);
    gs_test_lines_free(&l);
}

Test(ir, parse_spec_length_limits) {
    gs_ctx *ctx = gs_ctx_create();
    char big[2001];
    memset(big, ' ', 2000);
    memcpy(big, "gemm M=1 N=1 K=1", 16);
    big[2000] = 0;
    gs_op *op = NULL;
    gs_test_expect_err(ctx, gs_op_parse(ctx, big, &op), GS_ERR_PARSE, "too long&&2000", "2000-char spec");
    cr_assert_null(op);
    /* a 2000-char run of one key's digits: still "too long", no overflow */
    memset(big, '9', 2000);
    memcpy(big, "gemm M=", 7);
    gs_test_expect_err(ctx, gs_op_parse(ctx, big, &op), GS_ERR_PARSE, "too long", "2000 digits");
    /* 1023 chars is the longest accepted, 1024 the shortest refused */
    big[1023] = 0;
    memset(big, ' ', 1023);
    memcpy(big, "gemm M=1 N=1 K=1", 16);
    cr_assert_eq(gs_op_parse(ctx, big, &op), GS_OK, "1023 chars: %s", gs_ctx_errmsg(ctx));
    cr_assert_eq(op->axes[0].extent, 1);
    gs_op_destroy(op);
    char b1024[1025];
    memset(b1024, ' ', 1024);
    memcpy(b1024, "gemm M=1 N=1 K=1", 16);
    b1024[1024] = 0;
    gs_test_expect_err(ctx, gs_op_parse(ctx, b1024, &op), GS_ERR_PARSE, "too long&&1024", "1024-char spec");
    gs_ctx_destroy(ctx);
}

Test(ir, parse_null_arguments) {
    gs_ctx *ctx = gs_ctx_create();
    gs_op *op = (gs_op *)ctx;
    gs_test_expect_err(ctx, gs_op_parse(ctx, NULL, &op), GS_ERR_INVALID_ARG, "NULL", "NULL spec");
    cr_assert_null(op);
    gs_test_expect_err(ctx, gs_op_parse(ctx, "gemm M=1 N=1 K=1", NULL), GS_ERR_INVALID_ARG, "NULL", "NULL out");
    cr_assert_eq(gs_op_parse_into(ctx, "gemm M=1 N=1 K=1", NULL), GS_ERR_INVALID_ARG);
    /* a NULL context is allowed: the status still comes back */
    cr_assert_eq(gs_op_parse(NULL, "gemm M=0 N=1 K=1", &op), GS_ERR_BAD_SHAPE);
    cr_assert_eq(gs_op_parse(NULL, "gemm M=1 N=1 K=1", &op), GS_OK);
    gs_op_destroy(op);
    gs_ctx_destroy(ctx);
}

/* Regression: a float key is checked as the float it is stored in, not as
 * the double it was read as. "alpha=1e39" is a finite double but overflows
 * float (the cast would be undefined behaviour, C11 6.3.1.5, and store +inf,
 * whose canonical spec "alpha=inf" the parser rejects); it is refused like
 * "alpha=inf". */
Test(ir, float_key_overflowing_float_is_refused) {
    gs_ctx *ctx = gs_ctx_create();
    static const char *specs[] = {"gemm M=4 N=4 K=4 alpha=1e39", "gemm M=4 N=4 K=4 beta=-3.5e38"};
    for (int i = 0; i < 2; i++) {
        gs_op *op = NULL;
        gs_status s = gs_op_parse(ctx, specs[i], &op);
        cr_expect_eq(s, GS_ERR_PARSE,
                     "'%s' must be refused like alpha=inf (the value overflows float), but got %s; stored "
                     "alpha=%g beta=%g, canonical spec '%s'",
                     specs[i], gs_status_str(s), op ? op->epi.alpha : 0.0, op ? op->epi.beta : 0.0,
                     op ? op->spec : "-");
        if (op) {
            cr_expect(isfinite(op->epi.alpha) && isfinite(op->epi.beta), "stored alpha/beta are not finite");
            gs_op *again = NULL;
            gs_status s2 = gs_op_parse(ctx, op->spec, &again);
            cr_expect_eq(s2, GS_OK, "canonical spec '%s' of an accepted op does not parse: %s", op->spec,
                         gs_ctx_errmsg(ctx));
            gs_op_destroy(again);
        }
        gs_op_destroy(op);
    }
    gs_ctx_destroy(ctx);
}

/* Regression: the canonical spec prints alpha and beta with enough digits
 * ("%.9g") to parse back to the same floats ("%g", 6 digits, did not). The
 * spec is what reports and the CLI's JSON record as "op". */
Test(ir, canonical_spec_round_trips_alpha_and_beta) {
    gs_ctx *ctx = gs_ctx_create();
    gs_op a, b;
    cr_assert_eq(gs_op_parse_into(ctx, "gemm M=8 N=8 K=8 alpha=1.2345678 beta=0.1", &a), GS_OK);
    cr_assert_eq(gs_op_parse_into(ctx, a.spec, &b), GS_OK, "%s", gs_ctx_errmsg(ctx));
    cr_expect(a.epi.alpha == b.epi.alpha, "canonical spec '%s' does not round-trip alpha: %.9g became %.9g", a.spec,
              a.epi.alpha, b.epi.alpha);
    cr_expect(a.epi.beta == b.epi.beta, "canonical spec '%s': beta %.9g became %.9g", a.spec, a.epi.beta,
              b.epi.beta);
    gs_ctx_destroy(ctx);
}

/* A canonical spec holds every key: a grouped, dilated, padded NHWC conv with
 * an activation, a clip and two element types is 256 characters, and the
 * widest (10-digit values, the longest names and floats) over 320. The spec
 * used to be cut at 255: the first ended "out_dtype=f1" (no longer parsed),
 * the second lost dtype= and out_dtype= and parsed back as an f32 operator. */
Test(ir, long_canonical_specs_are_not_cut) {
    static const char *const specs[] = {
        "conv2d N=128 C=1024 H=1024 W=1024 K=1024 R=3 S=3 groups=32 strideh=2 stridew=1 pad_top=1 pad_bottom=2 "
        "pad_left=1 pad_right=2 dilh=2 dilw=3 layout=nhwc bias=1 act=leakyrelu act_p=0.01 clip_lo=-0.1 clip_hi=6.2 "
        "dtype=bf16 out_dtype=f16",
        "conv2d N=1 C=1 H=1073741823 W=1 K=1 R=1073741823 S=1 strideh=1073741823 stridew=1073741823 "
        "pad_top=1073741823 pad_bottom=1073741823 pad_left=1073741823 pad_right=1073741823 dilh=1 dilw=1 layout=nhwc "
        "bias=1 relu=1 clip_lo=-1.17549435e-38 clip_hi=-1.17549435e-38 act=thresholdedrelu act_p=-1.17549435e-38 "
        "dtype=bf16 out_dtype=f16",
    };
    gs_ctx *ctx = gs_ctx_create();
    for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++) {
        gs_op a, b;
        cr_assert_eq(gs_op_parse_into(ctx, specs[i], &a), GS_OK, "%s: %s", specs[i], gs_ctx_errmsg(ctx));
        cr_assert_not_null(strstr(a.spec, " dtype=bf16 out_dtype=f16"), "the spec was cut: %s", a.spec);
        cr_assert_lt(strlen(a.spec), sizeof a.spec - 1, "%s", a.spec);
        gs_status s = gs_op_parse_into(ctx, a.spec, &b);
        cr_assert_eq(s, GS_OK, "canonical '%s' does not parse: %s", a.spec, gs_ctx_errmsg(ctx));
        cr_assert_str_eq(a.spec, b.spec);
        cr_assert_eq(b.dtype_in, GS_DTYPE_BF16, "%s", a.spec);
        cr_assert_eq(b.dtype_out, GS_DTYPE_F16, "%s", a.spec);
        cr_assert_eq(b.clip, a.clip, "%s", a.spec);
    }
    gs_ctx_destroy(ctx);
}

/* ---- validation and the gemm builder ------------------------------------------------------ */

static void assert_dim(const gs_tensor *t, int d, int64_t shape, int axis, const char *what) {
    cr_assert_eq(t->shape[d], shape, "%s: %s dim %d shape %lld want %lld", what, t->name, d,
                 (long long)t->shape[d], (long long)shape);
    for (int a = 0; a < GS_MAX_AXES; a++)
        cr_assert_eq(t->idx[d].coeff[a], a == axis ? 1 : 0, "%s: %s dim %d coeff[%d] = %lld", what, t->name, d, a,
                     (long long)t->idx[d].coeff[a]);
    cr_assert_eq(t->idx[d].offset, 0, "%s: %s dim %d offset", what, t->name, d);
}

Test(ir, gemm_builder_four_transposes) {
    const int64_t M = 5, N = 7, K = 3;
    for (int tA = 0; tA < 2; tA++)
        for (int tB = 0; tB < 2; tB++) {
            char what[64];
            snprintf(what, sizeof what, "transA=%d transB=%d", tA, tB);
            gs_op op = gemm(M, N, K, tA, tB, 1, 0);
            cr_assert_eq(gs_op_validate(NULL, &op), GS_OK);
            cr_assert_str_eq(op.axes[AX_M].name, "m");
            cr_assert_str_eq(op.axes[AX_N].name, "n");
            cr_assert_str_eq(op.axes[AX_K].name, "k");
            cr_assert_eq(op.axes[AX_M].kind, GS_AXIS_SPATIAL);
            cr_assert_eq(op.axes[AX_N].kind, GS_AXIS_SPATIAL);
            cr_assert_eq(op.axes[AX_K].kind, GS_AXIS_REDUCE);
            const gs_tensor *A = &op.tensors[0], *B = &op.tensors[1], *C = gs_op_out(&op);
            cr_assert_str_eq(A->name, "A");
            cr_assert_str_eq(B->name, "B");
            cr_assert_str_eq(C->name, "C");
            cr_assert_eq(A->ndim, 2);
            cr_assert_eq(B->ndim, 2);
            cr_assert_eq(C->ndim, 2);
            if (tA) { assert_dim(A, 0, K, AX_K, what); assert_dim(A, 1, M, AX_M, what); }
            else    { assert_dim(A, 0, M, AX_M, what); assert_dim(A, 1, K, AX_K, what); }
            if (tB) { assert_dim(B, 0, N, AX_N, what); assert_dim(B, 1, K, AX_K, what); }
            else    { assert_dim(B, 0, K, AX_K, what); assert_dim(B, 1, N, AX_N, what); }
            assert_dim(C, 0, M, AX_M, what);
            assert_dim(C, 1, N, AX_N, what);
            cr_assert_eq(gs_tensor_elems(A), M * K);
            cr_assert_eq(gs_tensor_elems(B), K * N);
            cr_assert_eq(gs_tensor_elems(C), M * N);
            cr_assert(gs_tensor_uses_axis(A, AX_M) && gs_tensor_uses_axis(A, AX_K) && !gs_tensor_uses_axis(A, AX_N));
            cr_assert(gs_tensor_uses_axis(B, AX_N) && gs_tensor_uses_axis(B, AX_K) && !gs_tensor_uses_axis(B, AX_M));
            cr_assert(gs_tensor_uses_axis(C, AX_M) && gs_tensor_uses_axis(C, AX_N) && !gs_tensor_uses_axis(C, AX_K));
        }
}

Test(ir, gemm_builder_rejects_bad_shapes) {
    gs_ctx *ctx = gs_ctx_create();
    gs_op *op = (gs_op *)ctx;
    gs_test_expect_err(ctx, gs_op_create_gemm(ctx, 0, 4, 4, 0, 0, 1, 0, &op), GS_ERR_BAD_SHAPE, "axis m&&extent 0", "M=0");
    cr_assert_null(op);
    gs_test_expect_err(ctx, gs_op_create_gemm(ctx, 4, -2, 4, 0, 0, 1, 0, &op), GS_ERR_BAD_SHAPE, "axis n&&-2", "N=-2");
    gs_test_expect_err(ctx, gs_op_create_gemm(ctx, 4, 4, 2147483648LL, 0, 0, 1, 0, &op), GS_ERR_BAD_SHAPE,
               "axis k&&2147483648", "K=2^31");
    /* each extent fits, but C has 2^62 elements */
    gs_test_expect_err(ctx, gs_op_create_gemm(ctx, 2147483647, 2147483647, 2, 0, 0, 1, 0, &op), GS_ERR_BAD_SHAPE,
               "C&&too large", "C too large");
    /* 2^20 x 2^20 = 2^40 elements is the largest tensor accepted */
    cr_assert_eq(gs_op_create_gemm(ctx, 1 << 20, 1 << 20, 1, 0, 0, 1, 0, &op), GS_OK, "%s", gs_ctx_errmsg(ctx));
    gs_op_destroy(op);
    gs_test_expect_err(ctx, gs_op_create_gemm(ctx, 1 << 20, (1 << 20) + 1, 1, 0, 0, 1, 0, &op), GS_ERR_BAD_SHAPE,
               "too large", "2^40+ elements");
    gs_test_expect_err(ctx, gs_op_create_gemm(ctx, 1, 1, 1, 0, 0, 1, 0, NULL), GS_ERR_INVALID_ARG, "NULL", "NULL out");
    gs_ctx_destroy(ctx);
}

/* A 1-D window operator: Y[p] = combine_r X[2p + r - 1] (stride 2, pad 1),
 * with an optional weight W[r] for multiply-accumulate. P outputs, R taps. */
static gs_op window_op(gs_combine comb, int with_weight, int64_t P, int64_t R, int64_t H) {
    gs_op op;
    memset(&op, 0, sizeof op);
    op.kind = GS_OPK_CUSTOM;
    op.naxes = 2;
    snprintf(op.axes[0].name, GS_NAME_LEN, "p");
    op.axes[0].extent = P;
    op.axes[0].kind = GS_AXIS_SPATIAL;
    snprintf(op.axes[1].name, GS_NAME_LEN, "r");
    op.axes[1].extent = R;
    op.axes[1].kind = GS_AXIS_REDUCE;
    op.ninputs = with_weight ? 2 : 1;
    gs_tensor *X = &op.tensors[0];
    snprintf(X->name, GS_NAME_LEN, "X");
    X->ndim = 1;
    X->shape[0] = H;
    X->idx[0].coeff[0] = 2;
    X->idx[0].coeff[1] = 1;
    X->idx[0].offset = -1;
    if (with_weight) {
        gs_tensor *W = &op.tensors[1];
        snprintf(W->name, GS_NAME_LEN, "W");
        W->ndim = 1;
        W->shape[0] = R;
        W->idx[0].coeff[1] = 1;
    }
    gs_tensor *Y = &op.tensors[op.ninputs];
    snprintf(Y->name, GS_NAME_LEN, "Y");
    Y->ndim = 1;
    Y->shape[0] = P;
    Y->idx[0].coeff[0] = 1;
    op.combine = comb;
    op.epi.alpha = 1;
    op.epi.bias_axis = -1;
    snprintf(op.spec, sizeof op.spec, "window");
    return op;
}

Test(ir, validate_rejects_each_rule) {
    gs_ctx *ctx = gs_ctx_create();
    const gs_op base = window_op(GS_COMBINE_MAC, 1, 3, 3, 5);
    cr_assert_eq(gs_op_validate(ctx, &base), GS_OK, "%s", gs_ctx_errmsg(ctx));
    gs_op op;
#define BREAK(stmt, want, needles)                                               \
    do {                                                                         \
        op = base;                                                               \
        stmt;                                                                    \
        gs_test_expect_err(ctx, gs_op_validate(ctx, &op), want, needles, #stmt);          \
    } while (0)
    BREAK(op.naxes = 0, GS_ERR_INVALID_ARG, "0 axes");
    BREAK(op.naxes = GS_MAX_AXES + 1, GS_ERR_INVALID_ARG, "9 axes");
    BREAK(op.ninputs = 0, GS_ERR_INVALID_ARG, "0 inputs");
    BREAK(op.ninputs = GS_MAX_TENSORS, GS_ERR_INVALID_ARG, "inputs");
    BREAK(op.axes[0].extent = 0, GS_ERR_BAD_SHAPE, "axis p&&extent 0");
    BREAK(op.axes[1].extent = -5, GS_ERR_BAD_SHAPE, "axis r&&-5");
    BREAK(op.axes[1].extent = 1LL << 31, GS_ERR_BAD_SHAPE, "axis r&&2147483648");
    BREAK(op.axes[0].kind = GS_AXIS_REDUCE, GS_ERR_INVALID_ARG, "no spatial axis");
    BREAK(op.tensors[0].ndim = 0, GS_ERR_INVALID_ARG, "tensor X&&0 dims");
    BREAK(op.tensors[1].ndim = GS_MAX_DIMS + 1, GS_ERR_INVALID_ARG, "tensor W&&7 dims");
    BREAK(op.tensors[0].shape[0] = 0, GS_ERR_BAD_SHAPE, "tensor X dim 0");
    BREAK(op.tensors[2].shape[0] = -1, GS_ERR_BAD_SHAPE, "tensor Y dim 0");
    BREAK((op.tensors[0].ndim = 2, op.tensors[0].shape[0] = 1 << 21, op.tensors[0].shape[1] = 1 << 21),
          GS_ERR_BAD_SHAPE, "tensor X&&too large&&>2^40");
    BREAK((op.tensors[0].ndim = 3, op.tensors[0].shape[0] = op.tensors[0].shape[1] = op.tensors[0].shape[2] =
                                       2147483647),
          GS_ERR_BAD_SHAPE, "tensor X&&overflowing");
    BREAK(op.tensors[2].idx[0].coeff[1] = 1, GS_ERR_INVALID_ARG, "output Y&&reduce axis r");
    BREAK(op.combine = GS_COMBINE_SUM, GS_ERR_INVALID_ARG, "exactly one input");
    BREAK(op.combine = GS_COMBINE_MAX, GS_ERR_INVALID_ARG, "exactly one input");
    BREAK(op.epi.bias_axis = 2, GS_ERR_INVALID_ARG, "bias axis 2");
#undef BREAK
    gs_ctx_destroy(ctx);
}

/* ---- footprint and traffic ---------------------------------------------------------------- */

static void box3(int64_t *box, int64_t m, int64_t n, int64_t k) {
    for (int a = 0; a < GS_MAX_AXES; a++) box[a] = 1;
    box[AX_M] = m;
    box[AX_N] = n;
    box[AX_K] = k;
}

Test(ir, footprint_gemm_tile) {
    int64_t box[GS_MAX_AXES];
    for (int tA = 0; tA < 2; tA++)
        for (int tB = 0; tB < 2; tB++) {
            gs_op op = gemm(256, 256, 256, tA, tB, 1, 0);
            box3(box, 16, 32, 8);
            /* A: bm*bk, B: bk*bn, C: bm*bn, whatever the storage order */
            cr_assert_eq(gs_footprint(&op.tensors[0], box), 16 * 8, "A tA=%d", tA);
            cr_assert_eq(gs_footprint(&op.tensors[1], box), 8 * 32, "B tB=%d", tB);
            cr_assert_eq(gs_footprint(&op.tensors[2], box), 16 * 32);
            cr_assert_eq(gs_footprint_dim(&op.tensors[0], 0, box), tA ? 8 : 16);
            cr_assert_eq(gs_footprint_dim(&op.tensors[0], 1, box), tA ? 16 : 8);
            cr_assert_eq(gs_footprint_dim(&op.tensors[1], 0, box), tB ? 32 : 8);
            cr_assert(gs_footprint_total(&op, box) == 128 + 256 + 512);
            /* a box larger than the tensor is capped at its shape */
            gs_op small = gemm(10, 20, 6, tA, tB, 1, 0);
            cr_assert_eq(gs_footprint(&small.tensors[0], box), 10 * 6, "capped A tA=%d", tA);
            cr_assert_eq(gs_footprint(&small.tensors[1], box), 6 * 20, "capped B tB=%d", tB);
            cr_assert_eq(gs_footprint(&small.tensors[2], box), 10 * 20);
        }
}

/* idx = 2*p + 1*r - 1 (stride 2, pad 1): the interval spans
 * 2*(Tp-1) + (Tr-1) + 1 elements, capped at the dim's shape. The offset only
 * moves the interval; it does not change its length. */
Test(ir, footprint_conv_like_affine) {
    gs_tensor t;
    memset(&t, 0, sizeof t);
    snprintf(t.name, GS_NAME_LEN, "X");
    t.ndim = 2;
    t.shape[0] = 20;
    t.idx[0].coeff[0] = 2;
    t.idx[0].coeff[1] = 1;
    t.idx[0].offset = -1;
    /* dim 1: a flipped, dilated access -q + 3*s + 4 */
    t.shape[1] = 30;
    t.idx[1].coeff[2] = -1;
    t.idx[1].coeff[3] = 3;
    t.idx[1].offset = 4;
    int64_t tile[GS_MAX_AXES];
    for (int a = 0; a < GS_MAX_AXES; a++) tile[a] = 1;
    for (int64_t tp = 1; tp <= 12; tp++)
        for (int64_t tr = 1; tr <= 4; tr++) {
            tile[0] = tp;
            tile[1] = tr;
            int64_t want = 2 * (tp - 1) + (tr - 1) + 1;
            if (want > 20) want = 20;
            cr_assert_eq(gs_footprint_dim(&t, 0, tile), want, "Tp=%lld Tr=%lld: got %lld want %lld", (long long)tp,
                         (long long)tr, (long long)gs_footprint_dim(&t, 0, tile), (long long)want);
        }
    /* hand-computed corners */
    tile[0] = 4; tile[1] = 3; /* 2*3 + 2 + 1 = 9 */
    cr_assert_eq(gs_footprint_dim(&t, 0, tile), 9);
    tile[0] = 10; tile[1] = 3; /* 18 + 2 + 1 = 21 -> capped at 20 */
    cr_assert_eq(gs_footprint_dim(&t, 0, tile), 20);
    tile[0] = 4; tile[1] = 3; tile[2] = 5; tile[3] = 2; /* dim 1: |-1|*4 + 3*1 + 1 = 8 */
    cr_assert_eq(gs_footprint_dim(&t, 1, tile), 8);
    cr_assert_eq(gs_footprint(&t, tile), 9 * 8);
    tile[2] = 20; tile[3] = 5; /* 19 + 12 + 1 = 32 -> capped at 30 */
    cr_assert_eq(gs_footprint_dim(&t, 1, tile), 30);
    cr_assert_eq(gs_footprint(&t, tile), 9 * 30);
}

Test(ir, traffic_hand_computed) {
    int64_t box[GS_MAX_AXES];
    gs_op op = gemm(64, 64, 64, 0, 0, 1, 0);
    /* 4*4*8 = 128 tiles, each loads A 16x8 + B 8x16 = 256 elements; plus C 4096 */
    box3(box, 16, 16, 8);
    cr_assert(gs_traffic(&op, box) == 128.0 * 256 + 4096, "got %g", gs_traffic(&op, box));
    /* one tile: A + B once, + C */
    box3(box, 64, 64, 64);
    cr_assert(gs_traffic(&op, box) == 4096.0 + 4096 + 4096);
    /* 1x1x1 tiles: 2 loads per point + C */
    box3(box, 1, 1, 1);
    cr_assert(gs_traffic(&op, box) == 2.0 * 64 * 64 * 64 + 4096);
    /* non-dividing extents: ceil(50/16)=4, 4, ceil(50/8)=7 -> 112 tiles * 256 + 2500 */
    gs_op odd = gemm(50, 50, 50, 1, 1, 1, 0);
    box3(box, 16, 16, 8);
    cr_assert(gs_traffic(&odd, box) == 112.0 * 256 + 2500, "got %g", gs_traffic(&odd, box));
    /* unbalanced: M=8 N=2 K=4, box (4,2,2): 2*1*2=4 tiles * (4*2 + 2*2) + 16 = 64 */
    gs_op ub = gemm(8, 2, 4, 0, 0, 1, 0);
    box3(box, 4, 2, 2);
    cr_assert(gs_traffic(&ub, box) == 64.0, "got %g", gs_traffic(&ub, box));
}

Test(ir, etir_box_levels_and_capping) {
    gs_op op = gemm(10, 64, 30, 0, 0, 1, 0);
    gs_etir e;
    gs_etir_init(&op, &e);
    e.tile[AX_M].block = 16; e.tile[AX_M].thread = 4;
    e.tile[AX_N].block = 32; e.tile[AX_N].thread = 8;
    e.tile[AX_K].block = 8;
    int64_t box[GS_MAX_AXES];
    gs_etir_box(&op, &e, 2, box);
    cr_assert_eq(box[AX_M], 10, "level-2 m box capped at the extent");
    cr_assert_eq(box[AX_N], 32);
    cr_assert_eq(box[AX_K], 8);
    for (int a = 3; a < GS_MAX_AXES; a++) cr_assert_eq(box[a], 1);
    gs_etir_box(&op, &e, 1, box);
    cr_assert_eq(box[AX_M], 4);
    cr_assert_eq(box[AX_N], 8);
    cr_assert_eq(box[AX_K], 1, "reduce axes use 1 at level 1");
}

Test(ir, stage_layout_pads_even_rows) {
    gs_op op = gemm(256, 256, 256, 0, 0, 1, 0);
    gs_etir e;
    gs_etir_init(&op, &e);
    e.tile[AX_M].block = 32; e.tile[AX_N].block = 64; e.tile[AX_K].block = 8;
    int64_t dims[GS_MAX_DIMS], pitch;
    /* A [M,K]: 32 x 8, pitch 9 */
    cr_assert_eq(gs_stage_layout(&op, &e, 0, dims, &pitch), 32 * 9);
    cr_assert_eq(dims[0], 32); cr_assert_eq(dims[1], 8); cr_assert_eq(pitch, 9);
    /* B [K,N]: 8 x 64, pitch 65 */
    cr_assert_eq(gs_stage_layout(&op, &e, 1, dims, &pitch), 8 * 65);
    cr_assert_eq(pitch, 65);
    /* transposed A [K,M]: 8 x 32, pitch 33 */
    gs_op opt = gemm(256, 256, 256, 1, 0, 1, 0);
    cr_assert_eq(gs_stage_layout(&opt, &e, 0, dims, &pitch), 8 * 33);
    cr_assert_eq(dims[0], 8); cr_assert_eq(dims[1], 32); cr_assert_eq(pitch, 33);
    /* an odd or unit row is not padded */
    e.tile[AX_K].block = 1;
    cr_assert_eq(gs_stage_layout(&op, &e, 0, dims, &pitch), 32);
    cr_assert_eq(pitch, 1);
}

/* ---- ETIR actions ----------------------------------------------------------------------- */

static bool act(const gs_op *op, const gs_etir *e, gs_action_kind k, int axis, int value, int max_threads,
                gs_etir *out) {
    gs_action a = {k, axis, value};
    return gs_etir_apply(op, e, a, max_threads, out);
}

Test(ir, etir_init_state) {
    gs_op op = gemm(100, 64, 30, 0, 0, 1, 0);
    gs_etir e;
    memset(&e, 0x77, sizeof e);
    gs_etir_init(&op, &e);
    cr_assert_eq(e.level, 2);
    for (int d = 0; d < op.naxes; d++) {
        for (int l = 0; l < GS_LEVELS; l++) cr_assert_eq(gs_tile_level(&e.tile[d], l), 1, "tile %d level %d", d, l);
        cr_assert_eq(e.V[d], 1);
    }
    for (int d = op.naxes; d < GS_MAX_AXES; d++) cr_assert_eq(e.tile[d].block, 0, "unused axes are zeroed");
    cr_assert_eq(e.staged[0], 1);
    cr_assert_eq(e.staged[1], 1);
    cr_assert_eq(e.staged[2], 0, "the output is not staged");
    cr_assert(gs_etir_wellformed(&op, &e));
    cr_assert_eq(gs_etir_threads(&op, &e), 1);
    cr_assert_eq(gs_etir_blocks(&op, &e), 100 * 64);
    cr_assert_eq(gs_etir_acc_regs(&op, &e), 1);
    /* deterministic bytes: two inits hash equal */
    gs_etir f;
    memset(&f, 0x11, sizeof f);
    gs_etir_init(&op, &f);
    cr_assert(memcmp(&e, &f, sizeof e) == 0);
    cr_assert_eq(gs_etir_hash(&e), gs_etir_hash(&f));
}

Test(ir, etir_max_tile_next_pow2) {
    static const struct { int64_t ext; int32_t want; } c[] = {
        {1, 1}, {2, 2}, {3, 4}, {64, 64}, {65, 128}, {100, 128}, {2039, 2048}, {65536, 65536}};
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        gs_op op = gemm(c[i].ext, 1, 1, 0, 0, 1, 0);
        cr_assert_eq(gs_etir_max_tile(&op, AX_M), c[i].want, "extent %lld", (long long)c[i].ext);
    }
}

Test(ir, etir_tile_invtile_level2) {
    gs_op op = gemm(100, 1, 30, 0, 0, 1, 0);
    gs_etir e, n;
    gs_etir_init(&op, &e);
    /* m grows 1 -> 128 (next power of two of 100), then is refused */
    for (int i = 1; i <= 7; i++) {
        cr_assert(act(&op, &e, GS_ACT_TILE, AX_M, 0, 256, &n), "tile m step %d", i);
        cr_assert_eq(n.tile[AX_M].block, 1 << i);
        cr_assert(gs_etir_wellformed(&op, &n));
        e = n;
    }
    cr_assert_not(act(&op, &e, GS_ACT_TILE, AX_M, 0, 256, &n), "tile past next pow2 of 100 must be refused");
    /* an extent of 1 cannot be tiled at all */
    cr_assert_not(act(&op, &e, GS_ACT_TILE, AX_N, 0, 256, &n));
    /* reduce axis tiles at level 2 (the k-step) up to 32 */
    for (int i = 1; i <= 5; i++) {
        cr_assert(act(&op, &e, GS_ACT_TILE, AX_K, 0, 256, &n));
        e = n;
    }
    cr_assert_eq(e.tile[AX_K].block, 32);
    cr_assert_eq(e.tile[AX_K].thread, 1);
    cr_assert_not(act(&op, &e, GS_ACT_TILE, AX_K, 0, 256, &n));
    /* invTile halves down to 1, then is refused */
    for (int i = 6; i >= 0; i--) {
        cr_assert(act(&op, &e, GS_ACT_INVTILE, AX_M, 0, 256, &n));
        cr_assert_eq(n.tile[AX_M].block, 1 << i);
        e = n;
    }
    cr_assert_not(act(&op, &e, GS_ACT_INVTILE, AX_M, 0, 256, &n), "invTile below 1 must be refused");
    cr_assert_eq(e.tile[AX_M].block, 1);
    /* tile then invTile is the identity (the graph is not a tree) */
    gs_etir a, b;
    cr_assert(act(&op, &e, GS_ACT_TILE, AX_M, 0, 256, &a));
    cr_assert(act(&op, &a, GS_ACT_INVTILE, AX_M, 0, 256, &b));
    cr_assert(memcmp(&b, &e, sizeof e) == 0);
    /* bad axes */
    cr_assert_not(act(&op, &e, GS_ACT_TILE, -1, 0, 256, &n));
    cr_assert_not(act(&op, &e, GS_ACT_TILE, 3, 0, 256, &n));
    cr_assert_not(act(&op, &e, GS_ACT_INVTILE, GS_MAX_AXES, 0, 256, &n));
    /* vthread is a level-1 action */
    cr_assert_not(act(&op, &e, GS_ACT_VTHREAD, AX_M, 1, 256, &n));
    cr_assert_not(act(&op, &e, (gs_action_kind)GS_ACT_COUNT_, AX_M, 0, 256, &n));
}

Test(ir, etir_cache_level2_to_level1) {
    gs_op op = gemm(1024, 1024, 1024, 0, 0, 1, 0);
    gs_etir e = gs_test_gemm_block_state(&op, 128, 64, 32), n;
    /* 128x64 = 8192 threads at T1=1; the axis with the most threads is split
     * first, ties to the outer axis: m2 (4096), m4 (2048), n2 (1024),
     * m8 (512), n4 (256). */
    cr_assert(act(&op, &e, GS_ACT_CACHE, -1, 0, 256, &n));
    cr_assert_eq(n.level, 1);
    cr_assert_eq(n.tile[AX_M].thread, 8);
    cr_assert_eq(n.tile[AX_N].thread, 4);
    cr_assert_eq(n.tile[AX_K].thread, 1);
    cr_assert_eq(n.tile[AX_M].block, 128);
    cr_assert_eq(n.tile[AX_N].block, 64);
    cr_assert_eq(n.tile[AX_K].block, 32);
    cr_assert_eq(gs_etir_threads(&op, &n), 256);
    cr_assert_eq(gs_etir_acc_regs(&op, &n), 32);
    cr_assert(gs_etir_wellformed(&op, &n));
    cr_assert(act(&op, &e, GS_ACT_CACHE, -1, 0, 1024, &n));
    cr_assert_eq(n.tile[AX_M].thread, 4);
    cr_assert_eq(n.tile[AX_N].thread, 2);
    cr_assert_eq(gs_etir_threads(&op, &n), 1024);

    /* sweep: thread count <= max, and the first count that fits */
    static const int maxes[] = {1, 32, 64, 100, 256, 1024};
    for (int bm = 1; bm <= 256; bm *= 4)
        for (int bn = 1; bn <= 512; bn *= 2)
            for (size_t i = 0; i < sizeof maxes / sizeof maxes[0]; i++) {
                gs_etir s = gs_test_gemm_block_state(&op, bm, bn, 8);
                int mt = maxes[i];
                cr_assert(act(&op, &s, GS_ACT_CACHE, -1, 0, mt, &n));
                int64_t th = gs_etir_threads(&op, &n);
                cr_assert_eq(n.level, 1);
                cr_assert(gs_etir_wellformed(&op, &n), "bm=%d bn=%d max=%d", bm, bn, mt);
                cr_assert_leq(th, mt, "bm=%d bn=%d: %lld threads > max %d", bm, bn, (long long)th, mt);
                if ((int64_t)bm * bn > mt)
                    cr_assert_gt(2 * th, mt, "bm=%d bn=%d max=%d: %lld threads is not the first count that fits", bm,
                                 bn, mt, (long long)th);
                else
                    cr_assert_eq(th, (int64_t)bm * bn, "a block that fits keeps one element per thread");
                for (int d = 0; d < op.naxes; d++) cr_assert_eq(n.V[d], 1);
                cr_assert_eq(n.tile[AX_K].thread, 1);
            }
}

Test(ir, etir_level1_actions_and_vthread_rules) {
    gs_op op = gemm(1024, 1024, 1024, 0, 0, 1, 0);
    gs_etir e = gs_test_gemm_block_state(&op, 128, 64, 32), l1, n;
    cr_assert(act(&op, &e, GS_ACT_CACHE, -1, 0, 256, &l1));
    cr_assert_eq(l1.tile[AX_M].thread, 8);
    /* tile at level 1 grows the thread tile up to the block tile */
    e = l1;
    for (int t = 16; t <= 128; t *= 2) {
        cr_assert(act(&op, &e, GS_ACT_TILE, AX_M, 0, 256, &n));
        cr_assert_eq(n.tile[AX_M].thread, t);
        cr_assert_eq(n.tile[AX_M].block, 128, "level-1 tile must not touch the block tile");
        e = n;
    }
    cr_assert_not(act(&op, &e, GS_ACT_TILE, AX_M, 0, 256, &n), "thread tile > block tile must be refused");
    cr_assert_not(act(&op, &l1, GS_ACT_TILE, AX_K, 0, 256, &n), "reduce axes have no thread tile");
    cr_assert_not(act(&op, &l1, GS_ACT_INVTILE, AX_K, 0, 256, &n));
    /* vthreads: a power of two, at most T1, different from the current count */
    cr_assert(act(&op, &l1, GS_ACT_VTHREAD, AX_M, 2, 256, &n));
    cr_assert_eq(n.V[AX_M], 2);
    cr_assert(gs_etir_wellformed(&op, &n));
    cr_assert(act(&op, &l1, GS_ACT_VTHREAD, AX_M, 8, 256, &n), "V == T1 is allowed");
    cr_assert_not(act(&op, &l1, GS_ACT_VTHREAD, AX_M, 16, 256, &n), "V > T1 must be refused");
    cr_assert_not(act(&op, &l1, GS_ACT_VTHREAD, AX_M, 3, 256, &n), "V=3 is not a power of two");
    cr_assert_not(act(&op, &l1, GS_ACT_VTHREAD, AX_M, 0, 256, &n), "V=0");
    cr_assert_not(act(&op, &l1, GS_ACT_VTHREAD, AX_M, -2, 256, &n), "V=-2");
    cr_assert_not(act(&op, &l1, GS_ACT_VTHREAD, AX_M, 1, 256, &n), "V equal to the current count");
    cr_assert_not(act(&op, &l1, GS_ACT_VTHREAD, AX_K, 1, 256, &n), "vthread on a reduce axis");
    cr_assert_not(act(&op, &l1, GS_ACT_VTHREAD, AX_K, 2, 256, &n), "vthread on a reduce axis");
    /* invTile at level 1 stops at the vthread count: tn=4, vn=4 */
    cr_assert(act(&op, &l1, GS_ACT_VTHREAD, AX_N, 4, 256, &e));
    cr_assert_not(act(&op, &e, GS_ACT_INVTILE, AX_N, 0, 256, &n), "invTile below V must be refused");
    cr_assert(act(&op, &e, GS_ACT_VTHREAD, AX_N, 2, 256, &e));
    cr_assert(act(&op, &e, GS_ACT_INVTILE, AX_N, 0, 256, &n));
    cr_assert_eq(n.tile[AX_N].thread, 2);
    cr_assert_not(act(&op, &n, GS_ACT_INVTILE, AX_N, 0, 256, &n));
    /* from T1 = 1 and V = 1 invTile is refused */
    gs_etir one = gs_test_gemm_block_state(&op, 4, 4, 4);
    cr_assert(act(&op, &one, GS_ACT_CACHE, -1, 0, 256, &n));
    cr_assert_eq(n.tile[AX_M].thread, 1);
    cr_assert_not(act(&op, &n, GS_ACT_INVTILE, AX_M, 0, 256, &e), "invTile below 1 must be refused");
}

Test(ir, etir_cache_level1_to_done) {
    gs_op op = gemm(256, 256, 256, 0, 0, 1, 0);
    gs_etir e = gs_test_gemm_block_state(&op, 64, 64, 8), l1, l0, n;
    cr_assert(act(&op, &e, GS_ACT_CACHE, -1, 0, 256, &l1));
    cr_assert(act(&op, &l1, GS_ACT_VTHREAD, AX_N, 2, 256, &l1));
    cr_assert(act(&op, &l1, GS_ACT_CACHE, -1, 0, 256, &l0));
    cr_assert_eq(l0.level, 0);
    /* caching into level 0 keeps every tile */
    l1.level = 0;
    cr_assert(memcmp(&l0, &l1, sizeof l0) == 0);
    cr_assert(gs_etir_wellformed(&op, &l0));
    /* a finished state has no out-edges */
    for (int k = 0; k < GS_ACT_COUNT_; k++)
        for (int d = -1; d < 3; d++) cr_assert_not(act(&op, &l0, (gs_action_kind)k, d, 2, 256, &n), "k=%d d=%d", k, d);
}

Test(ir, etir_wellformed_rejects) {
    gs_op op = gemm(100, 64, 30, 0, 0, 1, 0);
    const gs_etir base = gs_test_gemm_block_state(&op, 64, 32, 8);
    gs_etir e;
#define BAD(stmt)                                                                 \
    do {                                                                          \
        e = base;                                                                 \
        stmt;                                                                     \
        cr_assert_not(gs_etir_wellformed(&op, &e), "wellformed after " #stmt);    \
    } while (0)
    BAD(e.tile[AX_M].block = 48);                         /* not a power of two */
    BAD(e.tile[AX_M].block = 256);                        /* > next pow2 of 100 */
    BAD(e.tile[AX_N].block = 128);                        /* > 64 */
    BAD(e.tile[AX_M].thread = 128);                        /* thread > block */
    BAD(e.tile[AX_M].thread = 3);
    BAD(e.tile[AX_M].thread = 0);
    BAD((e.tile[AX_M].thread = 4, e.V[AX_M] = 8));         /* V > T1 */
    BAD(e.V[AX_M] = 0);
    BAD(e.tile[AX_K].thread = 2);                          /* reduce thread tile */
    BAD((e.tile[AX_K].thread = 1, e.V[AX_K] = 2));         /* reduce vthread */
    BAD(e.staged[0] = 2);
    BAD(e.level = 3);
    BAD(e.level = -1);
    BAD(e.tile[AX_K].block = 0);
#undef BAD
    e = base;
    e.tile[AX_M].thread = 8;
    e.V[AX_M] = 8;
    e.staged[1] = 0;
    e.level = 0;
    cr_assert(gs_etir_wellformed(&op, &e));
}

/* ---- ETIR text forms ---------------------------------------------------------------------- */

Test(ir, etir_config_roundtrip) {
    gs_ctx *ctx = gs_ctx_create();
    gs_op op = gemm(1000, 1000, 1000, 1, 0, 1, 0);
    gs_etir e = gs_test_gemm_block_state(&op, 128, 64, 32);
    e.tile[AX_M].thread = 8;
    e.tile[AX_N].thread = 4;
    e.V[AX_M] = 2;
    e.staged[1] = 0;
    e.level = 0;
    char buf[256];
    gs_etir_format_config(&op, &e, buf, sizeof buf);
    cr_assert_str_eq(buf, "bm=128,bn=64,bk=32,tm=8,tn=4,vm=2,vn=1,sa=1,sb=0");
    gs_etir p;
    memset(&p, 0x5a, sizeof p);
    cr_assert_eq(gs_etir_parse_config(ctx, &op, buf, &p), GS_OK, "%s", gs_ctx_errmsg(ctx));
    cr_assert(memcmp(&p, &e, sizeof e) == 0, "parse(format(e)) != e");
    cr_assert_eq(gs_etir_hash(&p), gs_etir_hash(&e));
    char txt[256];
    gs_etir_format(&op, &e, txt, sizeof txt);
    cr_assert_str_eq(txt, "m:128/8/v2 n:64/4/v1 k:32 | A:smem B:global");

    /* a sweep of states round-trips exactly */
    int count = 0;
    for (int bm = 1; bm <= 1024; bm *= 4)
        for (int tm = 1; tm <= bm; tm *= 2)
            for (int vm = 1; vm <= tm; vm *= 4)
                for (int bk = 1; bk <= 1024; bk *= 8) {
                    gs_etir s = gs_test_gemm_block_state(&op, bm, 16, bk);
                    s.tile[AX_M].thread = tm;
                    s.tile[AX_N].thread = 2;
                    s.V[AX_M] = vm;
                    s.staged[0] = (uint8_t)(count & 1);
                    s.level = 0;
                    gs_etir_format_config(&op, &s, buf, sizeof buf);
                    cr_assert_eq(gs_etir_parse_config(ctx, &op, buf, &p), GS_OK, "'%s': %s", buf, gs_ctx_errmsg(ctx));
                    cr_assert(memcmp(&p, &s, sizeof s) == 0, "'%s' does not round-trip", buf);
                    count++;
                }
    cr_assert_gt(count, 50);
    /* keys in any order, spaces allowed; omitted keys default to 1 */
    cr_assert_eq(gs_etir_parse_config(ctx, &op, "sb=0, bk=8 bm=16,tm=2", &p), GS_OK, "%s", gs_ctx_errmsg(ctx));
    cr_assert_eq(p.tile[AX_M].block, 16);
    cr_assert_eq(p.tile[AX_M].thread, 2);
    cr_assert_eq(p.tile[AX_N].block, 1);
    cr_assert_eq(p.tile[AX_K].block, 8);
    cr_assert_eq(p.staged[0], 1);
    cr_assert_eq(p.staged[1], 0);
    cr_assert_eq(p.level, 0);
    gs_ctx_destroy(ctx);
}

Test(ir, etir_config_bad) {
    gs_ctx *ctx = gs_ctx_create();
    gs_op op = gemm(100, 64, 30, 0, 0, 1, 0);
    static const struct { const char *cfg, *needles; } bad[] = {
        {"bm=4,bq=4", "unknown key 'bq'"},
        {"bm=4,zz=1", "unknown key 'zz'"},
        {"sc=1", "unknown key 'sc'"}, /* the output is never staged */
        {"bm=3", "powers of two"},
        {"bm=48,tm=4", "powers of two"},
        {"bm=4,tm=8", "thread tile | block tile"},
        {"bm=8,tm=2,vm=4", "vthreads | thread tile"},
        {"bm=256", "next power of two"},
        {"bn=128", "next power of two"},
        {"tk=1", "'tk'&&reduce axis"},
        {"vk=2", "'vk'&&reduce axis"},
        {"sa=2", "sa&&0 or 1"},
        {"bm=0", "bm&&>= 1"},
        {"bm=-4", "bad value for 'bm'"},
        {"bm=abc", "bad value for 'bm'"},
        {"bm=0x10", "bad value for 'bm'"},
        {"bm=", "bad value for 'bm'"},
        {"bm=4294967296", "bad value for 'bm'"},
        {"bm", "expected key=value"},
        {"=4", "expected key=value"},
        {"b=4", "expected key=value"},
        /* regressions: duplicate keys were accepted (the last won), an empty
         * config silently meant all-ones tiles, and '+8' passed for 8 */
        {"bm=16,bm=8", "'bm' given twice"},
        {"sa=1,sb=1,sa=0", "'sa' given twice"},
        {"bm=4,tm=2,tm=4", "'tm' given twice"},
        {"", "config: empty"},
        {",, ,", "config: empty"},
        {"bm=+8", "bad value for 'bm'"},
        {"bm= 8", "bad value for 'bm'"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        gs_etir e;
        char what[64];
        snprintf(what, sizeof what, "config '%s'", bad[i].cfg);
        gs_test_expect_err(ctx, gs_etir_parse_config(ctx, &op, bad[i].cfg, &e), GS_ERR_PARSE, bad[i].needles, what);
    }
    char longcfg[700];
    memset(longcfg, ',', sizeof longcfg - 1);
    longcfg[sizeof longcfg - 1] = 0;
    gs_etir e;
    gs_test_expect_err(ctx, gs_etir_parse_config(ctx, &op, longcfg, &e), GS_ERR_PARSE, "too long", "700-char config");
    gs_test_expect_err(ctx, gs_etir_parse_config(ctx, &op, NULL, &e), GS_ERR_INVALID_ARG, "NULL", "NULL config");
    gs_ctx_destroy(ctx);
}

Test(ir, etir_hash_distinguishes_states) {
    gs_op op = gemm(256, 256, 256, 0, 0, 1, 0);
    gs_etir a = gs_test_gemm_block_state(&op, 64, 64, 8), b = a;
    cr_assert_eq(gs_etir_hash(&a), gs_etir_hash(&b));
    b.tile[AX_M].block = 32;
    cr_assert_neq(gs_etir_hash(&a), gs_etir_hash(&b));
    b = a;
    b.level = 1;
    cr_assert_neq(gs_etir_hash(&a), gs_etir_hash(&b));
    b = a;
    b.staged[0] = 0;
    cr_assert_neq(gs_etir_hash(&a), gs_etir_hash(&b));
}

/* ---- reference interpreter ---------------------------------------------------------------- */

/* libxsmm-style diff: max abs/rel error, where, and NMSE. */
typedef struct matdiff {
    double max_abs, max_rel, nmse;
    int64_t where;
} matdiff;

static matdiff diff_f(const float *got, const double *want, int64_t n) {
    matdiff d = {0, 0, 0, -1};
    double num = 0, den = 0;
    for (int64_t i = 0; i < n; i++) {
        double e = fabs((double)got[i] - want[i]);
        double r = e / fmax(fabs(want[i]), 1e-30);
        if (e > d.max_abs || !(e == e)) {
            d.max_abs = e;
            d.where = i;
        }
        if (r > d.max_rel) d.max_rel = r;
        num += e * e;
        den += want[i] * want[i];
    }
    d.nmse = den > 0 ? num / den : num;
    return d;
}

static uint32_t lcg(uint32_t *s) {
    *s = *s * 1664525u + 1013904223u;
    return *s >> 8;
}
static float rnd(uint32_t *s) { return (float)((double)lcg(s) / (double)(1u << 24) * 2.0 - 1.0); }

Test(ir, reference_gemm_vs_triple_loop) {
    static const int shapes[][3] = {{1, 1, 1}, {3, 5, 7}, {17, 13, 9}, {1, 31, 2}, {8, 1, 33}};
    static const float ab[][2] = {{1, 0}, {2.5f, -0.5f}, {0, 1}, {-1, 0.75f}};
    gs_ctx *ctx = gs_ctx_create();
    uint32_t seed = 12345;
    int checked = 0;
    for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++)
        for (int tA = 0; tA < 2; tA++)
            for (int tB = 0; tB < 2; tB++)
                for (size_t ai = 0; ai < sizeof ab / sizeof ab[0]; ai++) {
                    int M = shapes[si][0], N = shapes[si][1], K = shapes[si][2];
                    float alpha = ab[ai][0], beta = ab[ai][1];
                    gs_op op = gemm(M, N, K, tA, tB, alpha, beta);
                    float *A = malloc(sizeof(float) * M * K), *B = malloc(sizeof(float) * K * N);
                    float *C = malloc(sizeof(float) * M * N);
                    double *W = malloc(sizeof(double) * M * N);
                    for (int i = 0; i < M * K; i++) A[i] = rnd(&seed);
                    for (int i = 0; i < K * N; i++) B[i] = rnd(&seed);
                    for (int i = 0; i < M * N; i++) C[i] = rnd(&seed);
                    for (int m = 0; m < M; m++)
                        for (int n = 0; n < N; n++) {
                            double acc = 0;
                            for (int k = 0; k < K; k++) {
                                double a = tA ? A[k * M + m] : A[m * K + k];
                                double b = tB ? B[n * K + k] : B[k * N + n];
                                acc += a * b;
                            }
                            W[m * N + n] = (double)alpha * acc + (beta != 0 ? (double)beta * C[m * N + n] : 0.0);
                        }
                    const float *ins[2] = {A, B};
                    gs_status s = gs_op_reference(ctx, &op, ins, NULL, C);
                    cr_assert_eq(s, GS_OK, "%s", gs_ctx_errmsg(ctx));
                    matdiff d = diff_f(C, W, (int64_t)M * N);
                    cr_assert(d.max_abs <= 1e-6 * fmax(1.0, fabs(W[d.where < 0 ? 0 : d.where])) && d.nmse < 1e-12,
                              "%s: max abs %g (rel %g) at %lld, nmse %g", op.spec, d.max_abs, d.max_rel,
                              (long long)d.where, d.nmse);
                    free(A); free(B); free(C); free(W);
                    checked++;
                }
    cr_assert_eq(checked, 80);
    gs_ctx_destroy(ctx);
}

/* Max over a padded window: an out-of-bounds tap reads -inf, not 0. */
Test(ir, reference_maxpool_1d_padding) {
    gs_ctx *ctx = gs_ctx_create();
    gs_op op = window_op(GS_COMBINE_MAX, 0, 3, 3, 5);
    cr_assert_eq(gs_op_validate(ctx, &op), GS_OK, "%s", gs_ctx_errmsg(ctx));
    const float X[5] = {-4, -1, -6, -3, -2};
    /* p0: X[-1] X[0] X[1] -> max(-4,-1) = -1
     * p1: X[1] X[2] X[3]  -> max(-1,-6,-3) = -1
     * p2: X[3] X[4] X[5]  -> max(-3,-2) = -2 */
    const float want[3] = {-1, -1, -2};
    float Y[3] = {99, 99, 99};
    const float *ins[1] = {X};
    cr_assert_eq(gs_op_reference(ctx, &op, ins, NULL, Y), GS_OK, "%s", gs_ctx_errmsg(ctx));
    for (int i = 0; i < 3; i++) cr_assert(Y[i] == want[i], "Y[%d] = %g want %g", i, Y[i], want[i]);
    gs_ctx_destroy(ctx);
}

/* 3x3 max pool, stride 2, pad 1 over a 4x4 input X[i][j] = -(4i + j + 1). */
Test(ir, reference_maxpool_2d_padding) {
    gs_op op;
    memset(&op, 0, sizeof op);
    op.kind = GS_OPK_CUSTOM;
    op.naxes = 4;
    const char *names[4] = {"oh", "ow", "kh", "kw"};
    const int64_t ext[4] = {2, 2, 3, 3};
    for (int a = 0; a < 4; a++) {
        snprintf(op.axes[a].name, GS_NAME_LEN, "%s", names[a]);
        op.axes[a].extent = ext[a];
        op.axes[a].kind = a < 2 ? GS_AXIS_SPATIAL : GS_AXIS_REDUCE;
    }
    op.ninputs = 1;
    gs_tensor *X = &op.tensors[0], *Y = &op.tensors[1];
    snprintf(X->name, GS_NAME_LEN, "X");
    X->ndim = 2;
    X->shape[0] = X->shape[1] = 4;
    X->idx[0].coeff[0] = 2; X->idx[0].coeff[2] = 1; X->idx[0].offset = -1;
    X->idx[1].coeff[1] = 2; X->idx[1].coeff[3] = 1; X->idx[1].offset = -1;
    snprintf(Y->name, GS_NAME_LEN, "Y");
    Y->ndim = 2;
    Y->shape[0] = Y->shape[1] = 2;
    Y->idx[0].coeff[0] = 1;
    Y->idx[1].coeff[1] = 1;
    op.combine = GS_COMBINE_MAX;
    op.epi.alpha = 1;
    op.epi.bias_axis = -1;
    float x[16], y[4];
    for (int i = 0; i < 16; i++) x[i] = -(float)(i + 1);
    /* (0,0): rows 0-1, cols 0-1 -> -1;  (0,1): rows 0-1, cols 1-3 -> -2
     * (1,0): rows 1-3, cols 0-1 -> -5;  (1,1): rows 1-3, cols 1-3 -> -6 */
    const float want[4] = {-1, -2, -5, -6};
    const float *ins[1] = {x};
    gs_ctx *ctx = gs_ctx_create();
    cr_assert_eq(gs_op_reference(ctx, &op, ins, NULL, y), GS_OK, "%s", gs_ctx_errmsg(ctx));
    for (int i = 0; i < 4; i++) cr_assert(y[i] == want[i], "Y[%d] = %g want %g", i, y[i], want[i]);
    gs_ctx_destroy(ctx);
}

/* Sum with scale (average pooling, count_include_pad): padding reads 0. */
Test(ir, reference_avgpool_sum_scale) {
    gs_ctx *ctx = gs_ctx_create();
    gs_op op = window_op(GS_COMBINE_SUM, 0, 3, 3, 5);
    op.epi.alpha = 1.0f / 3.0f;
    const float X[5] = {-4, -1, -6, -3, -2};
    const double sums[3] = {-5, -10, -5};
    float Y[3];
    const float *ins[1] = {X};
    cr_assert_eq(gs_op_reference(ctx, &op, ins, NULL, Y), GS_OK, "%s", gs_ctx_errmsg(ctx));
    for (int i = 0; i < 3; i++)
        cr_assert(fabs(Y[i] - sums[i] / 3.0) < 1e-6, "Y[%d] = %.8g want %.8g", i, Y[i], sums[i] / 3.0);
    gs_ctx_destroy(ctx);
}

/* 1-D conv, stride 2, pad 1, with bias per output and ReLU. */
Test(ir, reference_conv1d_bias_relu) {
    gs_ctx *ctx = gs_ctx_create();
    gs_op op = window_op(GS_COMBINE_MAC, 1, 3, 3, 5);
    op.has_bias = true;
    op.epi.bias_axis = 0;
    op.epi.relu = 1;
    cr_assert_eq(gs_op_validate(ctx, &op), GS_OK, "%s", gs_ctx_errmsg(ctx));
    const float X[5] = {1, 2, 3, 4, 5}, Wt[3] = {1, -1, 2}, bias[3] = {0.5f, -10, 2};
    /* p0: 0*1 + 1*-1 + 2*2 = 3, +0.5 = 3.5
     * p1: 2*1 + 3*-1 + 4*2 = 7, -10 = -3 -> relu 0
     * p2: 4*1 + 5*-1 + 0*2 = -1, +2 = 1 */
    const float want[3] = {3.5f, 0, 1};
    float Y[3];
    const float *ins[2] = {X, Wt};
    cr_assert_eq(gs_op_reference(ctx, &op, ins, bias, Y), GS_OK, "%s", gs_ctx_errmsg(ctx));
    for (int i = 0; i < 3; i++) cr_assert(Y[i] == want[i], "Y[%d] = %g want %g", i, Y[i], want[i]);
    /* without ReLU the negative value comes through */
    op.epi.relu = 0;
    cr_assert_eq(gs_op_reference(ctx, &op, ins, bias, Y), GS_OK);
    cr_assert(Y[1] == -3.0f, "Y[1] = %g want -3", Y[1]);
    gs_ctx_destroy(ctx);
}

/* gs_op_reference_point at every output point equals gs_op_reference (it is
 * what bench_gpu's sampled check relies on), for a padded, dilated, strided
 * conv with bias and ReLU, a max pool over padding and a gemm reading beta;
 * and gs_tensor_offset says -1 outside a tensor. */
Test(ir, reference_point_matches_reference) {
    gs_ctx *ctx = gs_ctx_create();
    const char *specs[] = {
        "conv2d N=2 C=3 H=7 W=6 K=4 R=3 S=2 strideh=2 pad_top=1 pad_bottom=0 pad_left=2 pad_right=1 dilation=2 "
        "bias=1 relu=1",
        "maxpool2d N=1 C=2 H=5 W=5 F=3 stride=2 pad=1",
        "gemm M=5 N=3 K=4 transA=1 alpha=1.5 beta=0.5",
    };
    for (size_t k = 0; k < sizeof specs / sizeof specs[0]; k++) {
        gs_op op;
        cr_assert_eq(gs_op_parse_into(ctx, specs[k], &op), GS_OK, "%s", gs_ctx_errmsg(ctx));
        float *ins[GS_MAX_TENSORS] = {0}, bias[64];
        for (int t = 0; t < op.ninputs; t++) {
            int64_t n = gs_tensor_elems(&op.tensors[t]);
            ins[t] = malloc((size_t)n * sizeof(float));
            for (int64_t i = 0; i < n; i++) ins[t][i] = (float)((i * 37 + t * 11) % 17) / 8.0f - 1.0f;
        }
        for (int i = 0; i < 64; i++) bias[i] = (float)(i % 5) - 2.0f;
        int64_t no = gs_tensor_elems(gs_op_out(&op));
        float *old = malloc((size_t)no * sizeof(float)), *full = malloc((size_t)no * sizeof(float));
        for (int64_t i = 0; i < no; i++) old[i] = full[i] = (float)(i % 7) - 3.0f;
        cr_assert_eq(gs_op_reference(ctx, &op, (const float *const *)ins, bias, full), GS_OK, "%s", gs_ctx_errmsg(ctx));
        int64_t pt[GS_MAX_AXES] = {0}, seen = 0;
        for (;;) { /* odometer over the spatial axes */
            int64_t o = gs_tensor_offset(gs_op_out(&op), pt, op.naxes);
            cr_assert(o >= 0 && o < no, "%s: output offset %lld", specs[k], (long long)o);
            float y = (float)gs_op_reference_point(&op, (const float *const *)ins, bias, pt, old[o]);
            cr_assert(y == full[o], "%s: point %lld: %g, reference %g", specs[k], (long long)o, y, full[o]);
            seen++;
            int a = op.naxes - 1;
            for (; a >= 0; a--) {
                if (op.axes[a].kind != GS_AXIS_SPATIAL) continue;
                if (++pt[a] < op.axes[a].extent) break;
                pt[a] = 0;
            }
            if (a < 0) break;
        }
        cr_assert_eq(seen, no, "%s: %lld points for %lld outputs", specs[k], (long long)seen, (long long)no);
        for (int t = 0; t < op.ninputs; t++) free(ins[t]);
        free(old);
        free(full);
    }
    /* the conv's input row index is 2p + 2r - 1: -1 at p = r = 0 (padding) */
    gs_op op;
    cr_assert_eq(gs_op_parse_into(ctx, specs[0], &op), GS_OK);
    int64_t pt[GS_MAX_AXES] = {0};
    cr_assert_eq(gs_tensor_offset(&op.tensors[0], pt, op.naxes), -1);
    gs_ctx_destroy(ctx);
}

Test(ir, reference_errors) {
    gs_ctx *ctx = gs_ctx_create();
    gs_op op = window_op(GS_COMBINE_MAC, 1, 3, 3, 5);
    const float X[5] = {0}, Wt[3] = {0};
    const float *ins[2] = {X, Wt};
    float Y[3];
    gs_test_expect_err(ctx, gs_op_reference(ctx, &op, NULL, NULL, Y), GS_ERR_INVALID_ARG, "NULL", "NULL ins");
    gs_test_expect_err(ctx, gs_op_reference(ctx, &op, ins, NULL, NULL), GS_ERR_INVALID_ARG, "NULL", "NULL out");
    op.has_bias = true;
    op.epi.bias_axis = 0;
    gs_test_expect_err(ctx, gs_op_reference(ctx, &op, ins, NULL, Y), GS_ERR_INVALID_ARG, "bias", "missing bias");
    op.axes[0].extent = 0;
    gs_test_expect_err(ctx, gs_op_reference(ctx, &op, ins, NULL, Y), GS_ERR_BAD_SHAPE, "extent 0", "invalid op");
    gs_ctx_destroy(ctx);
}

/* ---- utilities ------------------------------------------------------------------------------ */

Test(ir, sb_many_appends_exact) {
    gs_sb sb;
    gs_sb_init(&sb);
    size_t cap_expect = 1 << 20;
    char *want = malloc(cap_expect);
    size_t wl = 0;
    for (int i = 0; i < 20000; i++) {
        if (i % 3 == 0) {
            gs_sb_printf(&sb, "%d,", i);
            wl += (size_t)snprintf(want + wl, cap_expect - wl, "%d,", i);
        } else if (i % 3 == 1) {
            gs_sb_puts(&sb, "ab");
            wl += (size_t)snprintf(want + wl, cap_expect - wl, "ab");
        } else {
            gs_sb_puts(&sb, "");
        }
        cr_assert_eq(sb.len, wl);
        cr_assert_geq(sb.cap, sb.len + 1);
    }
    /* geometric growth: capacity a power-of-two multiple of 256, < 2x the need */
    cr_assert(sb.cap % 256 == 0 && ((sb.cap / 256) & (sb.cap / 256 - 1)) == 0, "cap %zu", sb.cap);
    cr_assert_lt(sb.cap, 2 * (sb.len + 1));
    cr_assert_not(sb.oom);
    char *s = gs_sb_take(&sb);
    cr_assert_not_null(s);
    cr_assert_eq(strlen(s), wl);
    cr_assert(memcmp(s, want, wl + 1) == 0, "builder content differs from the expected text");
    cr_assert_null(sb.buf, "take resets the builder");
    cr_assert_eq(sb.len, 0);
    cr_assert_eq(sb.cap, 0);
    free(s);
    free(want);
}

Test(ir, sb_long_printf_and_empty_take) {
    gs_sb sb;
    gs_sb_init(&sb);
    /* an empty builder hands back "" (not NULL) */
    char *e = gs_sb_take(&sb);
    cr_assert_not_null(e);
    cr_assert_str_eq(e, "");
    free(e);
    /* one printf longer than the 256-byte scratch buffer */
    char big[1500];
    for (int i = 0; i < 1499; i++) big[i] = (char)('a' + i % 26);
    big[1499] = 0;
    gs_sb_printf(&sb, "[%s|%d|%s]", big, 42, big);
    char want[3100];
    snprintf(want, sizeof want, "[%s|%d|%s]", big, 42, big);
    cr_assert_eq(sb.len, strlen(want));
    cr_assert_str_eq(sb.buf, want);
    gs_sb_printf(&sb, "%s", "tail");
    cr_assert_eq(sb.len, strlen(want) + 4);
    cr_assert(!strcmp(sb.buf + strlen(want), "tail"));
    gs_sb_free(&sb);
    cr_assert_null(sb.buf);
    cr_assert_eq(sb.len, 0);
    /* reusable after free */
    gs_sb_puts(&sb, "again");
    cr_assert_str_eq(sb.buf, "again");
    gs_sb_free(&sb);
}

Test(ir, arena_alignment_and_zeroing) {
    gs_arena a;
    gs_arena_init(&a, 100); /* small, not a multiple of 16: forces many blocks */
    static const size_t sizes[] = {1, 3, 16, 17, 33, 0, 99, 200, 5000, 7, 64};
    enum { NALLOC = 600 };
    unsigned char *ptrs[NALLOC];
    size_t lens[NALLOC];
    for (int i = 0; i < NALLOC; i++) {
        size_t n = sizes[i % (sizeof sizes / sizeof sizes[0])];
        unsigned char *p = gs_arena_alloc(&a, n);
        cr_assert_not_null(p, "alloc %zu", n);
        cr_assert_eq((uintptr_t)p % 16, 0, "alloc %d of %zu bytes at %p is not 16-byte aligned", i, n, (void *)p);
        for (size_t j = 0; j < n; j++) cr_assert_eq(p[j], 0, "alloc %d byte %zu not zeroed", i, j);
        memset(p, (i % 250) + 1, n); /* a distinct pattern per allocation */
        ptrs[i] = p;
        lens[i] = n;
    }
    /* no allocation overlapped another: every pattern is intact */
    for (int i = 0; i < NALLOC; i++)
        for (size_t j = 0; j < lens[i]; j++)
            cr_assert_eq(ptrs[i][j], (i % 250) + 1, "alloc %d byte %zu overwritten", i, j);
    gs_arena_free(&a);
    cr_assert_null(a.head);
    gs_arena_free(&a); /* freeing twice is harmless */
    /* default block size */
    gs_arena_init(&a, 0);
    cr_assert_gt(a.block_size, 0);
    double *d = gs_arena_alloc(&a, 10 * sizeof(double));
    cr_assert_not_null(d);
    for (int i = 0; i < 10; i++) cr_assert(d[i] == 0.0);
    gs_arena_free(&a);
}

/* Regression: an impossible arena request returns NULL. Rounding a size above
 * SIZE_MAX - 15 up to 16 bytes would wrap to 0 (a non-NULL pointer to zero
 * usable bytes), and sizes just below would wrap in `sizeof *b + bs`
 * (malloc(tiny) + memset(huge)); util/util.c refuses both. */
Test(ir, arena_huge_request_returns_null) {
    gs_arena a;
    gs_arena_init(&a, 4096);
    cr_assert_not_null(gs_arena_alloc(&a, 16));
    void *p = gs_arena_alloc(&a, SIZE_MAX);
    cr_expect_null(p, "a request of SIZE_MAX bytes returned %p (the rounded size wrapped to 0) instead of NULL", p);
    p = gs_arena_alloc(&a, SIZE_MAX - 7);
    cr_expect_null(p, "a request of SIZE_MAX-7 bytes returned %p instead of NULL", p);
    gs_arena_free(&a);
}

Test(ir, status_strings) {
    for (int s = GS_STATUS_MIN_; s <= 0; s++) {
        const char *m = gs_status_str((gs_status)s);
        cr_assert_not_null(m, "status %d", s);
        cr_assert(m[0], "status %d has an empty message", s);
        cr_assert_str_neq(m, "unknown status", "status %d has no message", s);
        for (int t = GS_STATUS_MIN_; t < s; t++)
            cr_assert_str_neq(m, gs_status_str((gs_status)t), "statuses %d and %d share '%s'", s, t, m);
    }
    cr_assert_str_eq(gs_status_str(GS_OK), "ok");
    cr_assert_str_eq(gs_status_str((gs_status)1), "unknown status");
    cr_assert_str_eq(gs_status_str((gs_status)(GS_STATUS_MIN_ - 1)), "unknown status");
    cr_assert_str_eq(gs_status_str((gs_status)-1000), "unknown status");
    cr_assert_str_eq(gs_status_str((gs_status)INT32_MIN), "unknown status");
    cr_assert_str_eq(gs_status_str((gs_status)INT32_MAX), "unknown status");
}

Test(ir, ctx_messages) {
    cr_assert_str_eq(gs_ctx_errmsg(NULL), "");
    gs_ctx *ctx = gs_ctx_create();
    cr_assert_not_null(ctx);
    cr_assert_str_eq(gs_ctx_errmsg(ctx), "");
    cr_assert_eq(gs_err(ctx, GS_ERR_IO, "file %s: %d", "x.json", 7), GS_ERR_IO);
    cr_assert_str_eq(gs_ctx_errmsg(ctx), "file x.json: 7");
    cr_assert_eq(gs_err(NULL, GS_ERR_PARSE, "ignored %d", 1), GS_ERR_PARSE);
    /* a long message is truncated, not overflowed */
    char big[3000];
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = 0;
    gs_err(ctx, GS_ERR_PARSE, "%s", big);
    cr_assert_eq(strlen(gs_ctx_errmsg(ctx)), sizeof ctx->msg - 1);
    gs_ctx_destroy(ctx);
    gs_ctx_destroy(NULL);
}

/* Regression: gs_hash_bytes is FNV-1a 64 with the published offset basis
 * 14695981039346656037 (0xcbf29ce484222325; it once lacked its last digit),
 * so it matches the published test vectors and gs_fnv1a64, the kernel
 * cache's checksum, is the same function with seed 0. */
Test(ir, hash_is_fnv1a) {
    /* published FNV-1a 64 test vectors */
    static const struct { const char *s; uint64_t h; } v[] = {
        {"", 0xcbf29ce484222325ull}, {"a", 0xaf63dc4c8601ec8cull}, {"foobar", 0x85944171f73967e8ull}};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
        uint64_t h = gs_hash_bytes(v[i].s, strlen(v[i].s), 0);
        cr_expect_eq(h, v[i].h, "FNV-1a(\"%s\") = %#llx, got %#llx", v[i].s, (unsigned long long)v[i].h,
                     (unsigned long long)h);
        cr_expect_eq(gs_fnv1a64(v[i].s, strlen(v[i].s)), v[i].h, "gs_fnv1a64(\"%s\")", v[i].s);
    }
}

Test(ir, hash_seed_and_bytes_matter) {
    cr_assert_neq(gs_hash_bytes("a", 1, 1), gs_hash_bytes("a", 1, 0), "the seed changes the hash");
    cr_assert_neq(gs_hash_bytes("ab", 2, 0), gs_hash_bytes("ba", 2, 0), "byte order changes the hash");
    cr_assert_eq(gs_hash_bytes("abc", 3, 9), gs_hash_bytes("abc", 3, 9));
}

/* Regression: a conv's input box spans stride*(T_p-1) + dilation*(T_r-1) + 1
 * along H; with dilation and pad near 2^31 the box's element count
 * overflowed int64 in gs_stage_layout (UBSan: "signed integer overflow",
 * reached from the memory check of the tree and random strategies). Sizes
 * now saturate at GS_STAGE_SAT, which no shared memory can hold. */
Test(ir, stage_layout_saturates_huge_dilation) {
    gs_ctx *ctx = gs_ctx_create();
    gs_op op;
    cr_assert_eq(gs_op_parse_into(ctx, "conv2d N=1 C=4 H=5 W=5 K=1 R=3 S=3 dilation=2147483647 pad=2147483647", &op),
                 GS_OK, "%s", gs_ctx_errmsg(ctx));
    gs_etir e;
    cr_assert_eq(gs_etir_parse_config(ctx, &op, "bn=1,bk=1,bp=8,bq=8,bc=4,br=4,bs=4,si=1,sf=1", &e), GS_OK, "%s",
                 gs_ctx_errmsg(ctx));
    int64_t dims[GS_MAX_DIMS], pitch;
    int64_t n = gs_stage_layout(&op, &e, 0, dims, &pitch);
    cr_assert_eq(n, GS_STAGE_SAT, "got %lld", (long long)n);
    for (int d = 0; d < 4; d++) cr_assert(dims[d] >= 1 && dims[d] <= GS_STAGE_SAT, "dims[%d] = %lld", d, (long long)dims[d]);
    /* a small box is exact: 1 x 4 x 1 x 1 (r, s tiles 1) */
    cr_assert_eq(gs_etir_parse_config(ctx, &op, "bn=1,bk=1,bp=1,bq=1,bc=4,br=1,bs=1,si=1,sf=1", &e), GS_OK);
    cr_assert_eq(gs_stage_layout(&op, &e, 0, dims, &pitch), 4);
    gs_ctx_destroy(ctx);
}

/* The whole-kernel dimensions in the text forms and the actions: stages,
 * raster and the reduce split (group). */
Test(ir, kernel_dimensions_config_format_actions) {
    gs_ctx *ctx = gs_ctx_create();
    gs_op g, ew;
    cr_assert_eq(gs_op_parse_into(ctx, "gemv M=100 N=300", &g), GS_OK);
    cr_assert_eq(gs_op_parse_into(ctx, "add M=8 N=8", &ew), GS_OK);
    gs_etir e;
    cr_assert_eq(gs_etir_parse_config(ctx, &g, "bm=4,bk=64,stages=3,raster=4,group=16", &e), GS_OK, "%s",
                 gs_ctx_errmsg(ctx));
    cr_assert_eq(e.stages, 3);
    cr_assert_eq(e.raster, 2);
    cr_assert_eq(e.lanes_log2, 4);
    cr_assert_eq(gs_etir_threads(&g, &e), 4 * 16, "spatial threads times the group's lanes");
    char buf[256], back[256];
    gs_etir_format(&g, &e, buf, sizeof buf);
    cr_assert(strstr(buf, " | st3 r4 g16"), "%s", buf);
    gs_etir_format_config(&g, &e, buf, sizeof buf);
    cr_assert(strstr(buf, ",stages=3,raster=4,group=16"), "%s", buf);
    gs_etir e2;
    cr_assert_eq(gs_etir_parse_config(ctx, &g, buf, &e2), GS_OK, "%s", gs_ctx_errmsg(ctx));
    gs_etir_format_config(&g, &e2, back, sizeof back);
    cr_assert_str_eq(buf, back);
    /* group alone is printed after the staging */
    cr_assert_eq(gs_etir_parse_config(ctx, &g, "bm=4,bk=64,group=2", &e), GS_OK);
    gs_etir_format(&g, &e, buf, sizeof buf);
    cr_assert(strstr(buf, ":smem | g2"), "%s", buf);
    /* errors name the key */
    static const struct {
        const char *cfg, *msg;
    } bad[] = {
        {"bm=4,bk=64,group=3", "group must be a power of two 1..1024"},
        {"bm=4,bk=64,group=2048", "group must be a power of two 1..1024"},
        {"bm=4,bk=64,split=0", "split must be 1..16"},
        {"bm=4,bk=64,split=17", "split must be 1..16"},
        {"bm=4,bk=64,split=2,split=2", "given twice"},
        {"bm=4,bk=64,split=6", "split <= the first reduce axis' tiles"},
        {"bm=4,bk=64,group=2,group=4", "given twice"},
        {"bm=4,bk=8,group=16", "group <= the last reduce axis' block tile"},
        {"bm=4,stages=5", "stages must be 1..4"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        cr_assert_eq(gs_etir_parse_config(ctx, &g, bad[i].cfg, &e), GS_ERR_PARSE, "%s", bad[i].cfg);
        cr_assert(strstr(gs_ctx_errmsg(ctx), bad[i].msg), "%s: %s", bad[i].cfg, gs_ctx_errmsg(ctx));
    }
    cr_assert_eq(gs_etir_parse_config(ctx, &ew, "bm=4,group=2", &e), GS_ERR_PARSE);
    cr_assert(strstr(gs_ctx_errmsg(ctx), "group needs a reduce axis"), "%s", gs_ctx_errmsg(ctx));
    cr_assert_eq(gs_etir_parse_config(ctx, &ew, "bm=4,split=2", &e), GS_ERR_PARSE);
    cr_assert(strstr(gs_ctx_errmsg(ctx), "split needs a reduce axis"), "%s", gs_ctx_errmsg(ctx));
    /* split-K: config, text and the grid (split times the tile blocks) */
    cr_assert_eq(gs_etir_parse_config(ctx, &g, "bm=4,bk=32,split=5", &e), GS_OK, "%s", gs_ctx_errmsg(ctx));
    cr_assert_eq(e.splitk, 5);
    cr_assert_eq(gs_etir_tile_blocks(&g, &e), 25);
    cr_assert_eq(gs_etir_blocks(&g, &e), 125);
    int64_t per = 0;
    cr_assert_eq(gs_etir_splitk_tiles(&g, &e, &per), 10);
    cr_assert_eq(per, 2);
    gs_etir_format(&g, &e, buf, sizeof buf);
    cr_assert(strstr(buf, ":smem | sk5"), "%s", buf);
    gs_etir_format_config(&g, &e, buf, sizeof buf);
    cr_assert(strstr(buf, ",split=5"), "%s", buf);
    /* the action: level 1 only, up to the reduce tile, never on an
     * operator without a reduce axis */
    gs_etir s, o;
    gs_etir_init(&g, &s);
    cr_assert_not(gs_etir_apply(&g, &s, (gs_action){GS_ACT_LANES, -1, 1}, 1024, &o), "level 2");
    cr_assert(gs_etir_apply(&g, &s, (gs_action){GS_ACT_CACHE, -1, 0}, 1024, &s));
    cr_assert_not(gs_etir_apply(&g, &s, (gs_action){GS_ACT_LANES, -1, 1}, 1024, &o), "reduce tile 1 < 2 lanes");
    s.tile[1].block = 8;
    cr_assert(gs_etir_apply(&g, &s, (gs_action){GS_ACT_LANES, -1, 3}, 1024, &o));
    cr_assert_eq(o.lanes_log2, 3);
    cr_assert(gs_etir_wellformed(&g, &o));
    cr_assert_not(gs_etir_apply(&g, &s, (gs_action){GS_ACT_LANES, -1, 4}, 1024, &o), "16 lanes > tile 8");
    cr_assert_not(gs_etir_apply(&g, &s, (gs_action){GS_ACT_LANES, -1, GS_MAX_LANES + 1}, 1024, &o));
    cr_assert(gs_etir_apply(&g, &s, (gs_action){GS_ACT_LANES, -1, 3}, 1024, &o));
    o.tile[1].block = 4; /* a tile below the lanes is malformed */
    cr_assert_not(gs_etir_wellformed(&g, &o));
    gs_etir_init(&ew, &s);
    cr_assert(gs_etir_apply(&ew, &s, (gs_action){GS_ACT_CACHE, -1, 0}, 1024, &s));
    cr_assert_not(gs_etir_apply(&ew, &s, (gs_action){GS_ACT_LANES, -1, 1}, 1024, &o), "no reduce axis");
    gs_ctx_destroy(ctx);
}

/* ---- the knob table ------------------------------------------------------------- */
/* Each row names its own byte of gs_etir, init sets every row off, and every
 * legal value of every row round-trips through the config form (under its
 * key and its alias) and shows in the text form exactly when it is not off. */
Test(ir, knob_table_rows_round_trip) {
    gs_ctx *ctx = gs_ctx_create();
    gs_op *op = NULL;
    cr_assert_eq(gs_op_parse(ctx, "gemm M=64 N=64 K=256", &op), GS_OK);
    gs_etir e;
    gs_etir_init(op, &e);
    cr_assert_eq(e.stages, 1);
    cr_assert_eq(e.splitk, 1);
    for (int k = 0; k < GS_KNOB_COUNT; k++) {
        const gs_knob *r = &gs_knobs[k];
        cr_assert_eq(gs_knob_get(&e, k), r->off, "%s: init is not off", r->name);
        cr_assert_lt(r->offset, sizeof(gs_etir));
        gs_etir x = e;
        gs_knob_set(&x, k, r->hi);
        cr_assert_eq(((uint8_t *)&x)[r->offset], r->hi, "%s: set writes another byte", r->name);
        cr_assert_eq(memcmp(&x, &e, r->offset), 0, "%s: set wrote below its byte", r->name);
        if (r->moves != GS_KNOB_NOT_WALKED) cr_assert_eq(gs_knob_of_action(r->act), k, "%s: action", r->name);
    }
    /* every legal value of every row, on a complete state with a deep reduce tile */
    gs_etir_init(op, &e);
    e.level = 0;
    e.tile[2].block = 128;
    for (int k = 0; k < GS_KNOB_COUNT; k++) {
        const gs_knob *r = &gs_knobs[k];
        for (int v = r->lo; v <= r->hi; v++) {
            gs_etir x = e;
            if (!gs_knob_ok(op, &x, k, v)) continue;
            gs_knob_set(&x, k, v);
            if (k == GS_KNOB_SPLITK_ATOMIC) x.splitk = 2; /* its text is sk's suffix */
            cr_assert(gs_etir_wellformed(op, &x), "%s=%d", r->name, v);
            char cfg[256], txt[256], alias[300];
            gs_etir_format_config(op, &x, cfg, sizeof cfg);
            gs_etir_format(op, &x, txt, sizeof txt);
            gs_etir back;
            cr_assert_eq(gs_etir_parse_config(ctx, op, cfg, &back), GS_OK, "%s: %s", cfg, gs_ctx_errmsg(ctx));
            cr_assert_eq(gs_etir_hash(&back), gs_etir_hash(&x), "%s does not parse back", cfg);
            char key[32];
            snprintf(key, sizeof key, ",%s=", r->key);
            cr_assert_eq(strstr(cfg, key) != NULL, v != r->off, "%s=%d: config %s", r->name, v, cfg);
            char shown[32];
            if (r->names) snprintf(shown, sizeof shown, " %s", v != r->off ? r->names[v] : "?");
            else snprintf(shown, sizeof shown, r->attach >= 0 ? "%s" : " %s%ld", r->text, gs_knob_shown(k, v));
            cr_assert_eq(strstr(txt, shown) != NULL, v != r->off, "%s=%d: text '%s'", r->name, v, txt);
            if (!r->alias || v == r->off) continue;
            /* the alias parses to the same state, and counts as the key for duplicates */
            char *at = strstr(cfg, key);
            snprintf(alias, sizeof alias, "%.*s,%s=%s", (int)(at - cfg), cfg, r->alias, at + strlen(key));
            cr_assert_eq(gs_etir_parse_config(ctx, op, alias, &back), GS_OK, "%s: %s", alias, gs_ctx_errmsg(ctx));
            cr_assert_eq(gs_etir_hash(&back), gs_etir_hash(&x), "%s differs from %s", alias, cfg);
            snprintf(alias, sizeof alias, "%s,%s=%ld", cfg, r->alias, gs_knob_shown(k, v));
            gs_test_expect_err(ctx, gs_etir_parse_config(ctx, op, alias, &back), GS_ERR_PARSE, "given twice", alias);
        }
    }
    gs_op_destroy(op);
    gs_ctx_destroy(ctx);
}

/* The text and config forms users read stay as they were: one state with
 * every knob on, printed both ways. */
Test(ir, knob_forms_unchanged) {
    gs_ctx *ctx = gs_ctx_create();
    gs_op *op = NULL;
    cr_assert_eq(gs_op_parse(ctx, "gemm M=64 N=64 K=256", &op), GS_OK);
    gs_etir e;
    cr_assert_eq(gs_etir_parse_config(ctx, op, "bm=64,bn=64,bk=64,tm=4,tn=4,stages=4,raster=8,group=32,split=2,atomic=1",
                                      &e),
                 GS_OK, "%s", gs_ctx_errmsg(ctx));
    char cfg[256], txt[256];
    gs_etir_format_config(op, &e, cfg, sizeof cfg);
    gs_etir_format(op, &e, txt, sizeof txt);
    cr_assert_str_eq(cfg, "bm=64,bn=64,bk=64,tm=4,tn=4,vm=1,vn=1,sa=1,sb=1,stages=4,raster=8,group=32,split=2,atomic=1");
    cr_assert_str_eq(txt, "m:64/4/v1 n:64/4/v1 k:64 | A:smem B:smem | st4 r8 g32 sk2a");
    gs_op_destroy(op);
    gs_ctx_destroy(ctx);
}
