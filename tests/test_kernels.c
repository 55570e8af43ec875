/* test_kernels.c — the emitted kernels, checked three ways:
 *   1. they run: OpenCL dialect on PoCL vs GSL sgemm (tests/data/gemm_verify.txt);
 *   2. they compile for real GPUs: CUDA dialect through NVRTC + ptxas for
 *      every profile's arch, 0 spills, within limits (tests/data/gemm_nvrtc.txt);
 *   3. the two dialects differ only in spelling. */
#include <criterion/criterion.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "construct/construct.h"
#include "tests/test_common.h"

/* Construct top-2 for each case of tests/data/gemm_verify.txt with the given
 * parity and verify both on the OpenCL device against GSL. */
static void verify_sweep(int parity) {
    gs_test_sweep_case cases[128];
    int n = gs_test_read_sweep("gemm_verify.txt", cases, 128);
    cr_assert(n >= 30, "sweep file too short (%d cases)", n);
    gs_ctx *ctx = gs_ctx_create();
    gs_device *cl = gs_test_open_dev(ctx);
    int checked = 0;
    for (int i = parity; i < n; i += 2) {
        gs_test_fix f;
        gs_test_setup_seed(&f, false, cases[i].hw, cases[i].spec, 2, cases[i].seed);
        for (int c = 0; c < f.r->n; c++) {
            gs_diff d;
            gs_status s = gs_verify(ctx, cl, f.hw, f.op, &f.r->cand[c], cases[i].seed, &d);
            cr_expect_eq(s, GS_OK, "%s on %s cand %d (%s): %s", cases[i].spec, cases[i].hw, c, f.r->desc[c],
                         gs_ctx_errmsg(ctx));
            cr_expect(d.normwise <= GS_VERIFY_TOL, "%s: normwise %.3g", cases[i].spec, d.normwise);
            cr_expect_str_eq(d.reference, "gsl_blas_sgemm");
            checked++;
        }
        gs_test_teardown(&f);
    }
    cr_assert(checked >= 30, "only %d kernels checked", checked);
    gs_device_close(cl);
    gs_ctx_destroy(ctx);
}

Test(kernels, gemm_verify_sweep_even, .timeout = 600) { verify_sweep(0); }
Test(kernels, gemm_verify_sweep_odd, .timeout = 600) { verify_sweep(1); }

/* A right kernel passes; the comparison catches a small error and NaNs. */
Test(kernels, verify_detects_mismatch) {
    gs_ctx *ctx = gs_ctx_create();
    gs_device *cl = gs_test_open_dev(ctx);
    gs_op op;
    cr_assert_eq(gs_op_parse_into(ctx, "gemm M=33 N=17 K=9 alpha=2", &op), GS_OK);
    gs_etir e;
    cr_assert_eq(gs_etir_parse_config(ctx, &op, "bm=16,bn=16,bk=4,tm=2,tn=2,vm=1,vn=2,sa=1,sb=1", &e), GS_OK, "%s",
                 gs_ctx_errmsg(ctx));
    gs_diff d;
    cr_assert_eq(gs_verify(ctx, cl, gs_hw_find_builtin("h100"), &op, &e, 7, &d), GS_OK, "%s",
                 gs_ctx_errmsg(ctx));
    /* compare the right result against the wrong reference by hand */
    float y[4] = {1, 2, 3, 4}, ref[4] = {1, 2, 3, 4.001f};
    gs_diff_compute(y, ref, 4, &d);
    cr_expect(d.normwise > GS_VERIFY_TOL, "a 2.5e-4 relative error must fail the 1e-5 tolerance");
    cr_expect_eq(d.where, 3);
    float nanv[2] = {1, __builtin_nanf("")}, r2[2] = {1, 1};
    gs_diff_compute(nanv, r2, 2, &d);
    cr_expect_eq(d.nonfinite, 1);
    gs_device_close(cl);
    gs_ctx_destroy(ctx);
}

/* Non-finite mode (gs_verify_opts.nonfinite): the class comparison of
 * gs_diff_compute on its own -- a flipped class fails and names the first
 * output, equal classes pass -- and then kernels of every operator family
 * on inputs with NaN, +inf and -inf: each output's class must match the
 * interpreter's, and the placements must reach some outputs and leave
 * others finite (the check is not vacuous). */
Test(kernels, verify_nonfinite_compares_classes) {
    const float inf = __builtin_inff(), nan = __builtin_nanf("");
    float ref[6] = {1, nan, inf, -inf, 2, nan};
    float same[6] = {1.0000001f, nan, inf, -inf, 2, -nan};
    gs_diff d;
    gs_diff_compute(same, ref, 6, &d);
    cr_expect_eq(d.nonfinite, 0);
    cr_expect_eq(d.class_where, -1);
    cr_expect_eq(d.ref_nonfinite, 4);
    cr_expect(d.normwise <= GS_VERIFY_TOL && d.normwise > 0, "normwise %g over the finite outputs", d.normwise);
    /* every flip of one output's class is caught, at its index */
    const float other[4] = {0.5f, nan, inf, -inf};
    int caught = 0, flips = 0;
    for (int i = 0; i < 6; i++)
        for (int k = 0; k < 4; k++) {
            float y[6];
            memcpy(y, same, sizeof y);
            y[i] = other[k];
            const bool flipped = (isnan(y[i]) != isnan(ref[i])) || (!isnan(ref[i]) && isfinite(y[i]) != isfinite(ref[i])) ||
                                 (isinf(y[i]) && isinf(ref[i]) && y[i] != ref[i]);
            gs_diff_compute(y, ref, 6, &d);
            if (!flipped) continue;
            flips++;
            caught += d.nonfinite == 1 && d.class_where == i;
        }
    cr_expect_eq(flips, 18, "class flips tried");
    cr_expect_eq(caught, flips);
}

Test(kernels, verify_nonfinite_every_family, .timeout = 600) {
    static const struct {
        const char *spec;
        int64_t n;
    } cases[] = {
        {"gemm M=37 N=29 K=23", 3},                      /* beta = 0: the old output all NaN, never read */
        {"gemm M=37 N=29 K=23 beta=0.5 bias=1 relu=1", 4}, /* the old output and the bias too */
        {"gemm M=45 N=28 K=71 alpha=-2 dtype=f16", 3},
        {"bgemm B=3 M=17 N=13 K=29 transB=1 beta=1", 3},
        {"gemv M=41 N=67 transA=1", 2},
        {"conv2d N=1 C=5 H=11 W=9 K=7 R=3 S=3 pad=1 bias=1 layout=nhwc", 3},
        {"conv2d N=2 C=6 H=9 W=9 K=4 R=3 S=2 stride=2 pad=1 groups=2", 3},
        {"dwconv2d N=1 C=5 H=10 W=7 R=3 S=3 pad=1", 3},
        {"maxpool2d N=1 C=4 H=9 W=11 F=3 stride=2 pad=1", 4},
        {"avgpool2d N=1 C=4 H=9 W=11 F=3 pad=1", 3},
        {"avgpool2d N=1 C=4 H=9 W=11 F=3 pad=1 count_include_pad=0", 3},
        {"rowmax M=19 K=300", 5},
        {"rowsum M=19 K=300 dtype=bf16", 5},
        {"add M=33 N=47 bcast=1", 20},
        {"max M=33 N=47", 20},
        {"relu M=33 N=47", 20},
    };
    gs_ctx *ctx = gs_ctx_create();
    gs_device *cl = gs_test_open_dev(ctx);
    int ran = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        gs_test_fix f;
        gs_test_setup_seed(&f, false, "a100", cases[i].spec, 1, 3);
        const int64_t on = gs_tensor_elems(gs_op_out(f.op));
        for (uint64_t seed = 1; seed <= 2; seed++) {
            gs_diff d;
            const gs_verify_opts vo = {cases[i].n};
            gs_status s = gs_verify_ex(ctx, cl, f.hw, f.op, &f.r->cand[0], seed, &vo, &d);
            cr_expect_eq(s, GS_OK, "%s (%s) seed %llu: %s", cases[i].spec, f.r->desc[0], (unsigned long long)seed,
                         gs_ctx_errmsg(ctx));
            cr_expect_str_eq(d.reference, "interpreter", "%s", cases[i].spec);
            cr_expect(d.ref_nonfinite > 0 && d.ref_nonfinite < on, "%s seed %llu: %lld of %lld reference outputs non-finite",
                      cases[i].spec, (unsigned long long)seed, (long long)d.ref_nonfinite, (long long)on);
            ran++;
        }
        gs_test_teardown(&f);
    }
    cr_expect_eq(ran, 32);
    /* the default options are the finite run: the same reference and result as gs_verify */
    gs_test_fix f;
    gs_test_setup_seed(&f, false, "a100", "gemm M=37 N=29 K=23", 1, 3);
    gs_diff d0, d1;
    const gs_verify_opts none = {0};
    cr_expect_eq(gs_verify(ctx, cl, f.hw, f.op, &f.r->cand[0], 9, &d0), GS_OK);
    cr_expect_eq(gs_verify_ex(ctx, cl, f.hw, f.op, &f.r->cand[0], 9, &none, &d1), GS_OK);
    cr_expect_str_eq(d1.reference, "gsl_blas_sgemm");
    cr_expect(d0.normwise == d1.normwise && d1.ref_nonfinite == 0);
    const gs_verify_opts neg = {-1};
    cr_expect_eq(gs_verify_ex(ctx, cl, f.hw, f.op, &f.r->cand[0], 9, &neg, &d1), GS_ERR_INVALID_ARG);
    gs_test_teardown(&f);
    gs_device_close(cl);
    gs_ctx_destroy(ctx);
}

/* Unstaged inputs (sa=0) and vthread splits on both axes take other emitter
 * paths: run them too. */
Test(kernels, unstaged_and_vthread_paths) {
    gs_ctx *ctx = gs_ctx_create();
    gs_device *cl = gs_test_open_dev(ctx);
    static const char *cfgs[] = {
        "bm=16,bn=32,bk=8,tm=4,tn=4,vm=2,vn=4,sa=0,sb=1", "bm=32,bn=16,bk=4,tm=2,tn=8,vm=2,vn=8,sa=1,sb=0",
        "bm=8,bn=8,bk=16,tm=1,tn=1,vm=1,vn=1,sa=0,sb=0",  "bm=64,bn=4,bk=2,tm=8,tn=4,vm=8,vn=1,sa=1,sb=1",
    };
    static const char *specs[] = {"gemm M=37 N=29 K=23 transA=1 beta=1", "gemm M=65 N=41 K=17 transB=1 alpha=-1 beta=2"};
    for (int i = 0; i < 2; i++)
        for (int c = 0; c < 4; c++) {
            gs_op op;
            gs_etir e;
            gs_diff d;
            cr_assert_eq(gs_op_parse_into(ctx, specs[i], &op), GS_OK);
            cr_assert_eq(gs_etir_parse_config(ctx, &op, cfgs[c], &e), GS_OK, "%s", gs_ctx_errmsg(ctx));
            gs_status s = gs_verify(ctx, cl, gs_hw_find_builtin(c % 2 ? "t4" : "a100"), &op, &e, 3, &d);
            cr_expect_eq(s, GS_OK, "%s with %s: %s", specs[i], cfgs[c], gs_ctx_errmsg(ctx));
        }
    gs_device_close(cl);
    gs_ctx_destroy(ctx);
}

/* The dialects differ only in spelling: strip the dialect tokens from both
 * sources and the remaining text must be identical. */
static void strip(char *s, const char *tok, const char *with) {
    size_t tl = strlen(tok), wl = strlen(with);
    char *p;
    while ((p = strstr(s, tok))) {
        memmove(p + wl, p + tl, strlen(p + tl) + 1);
        memcpy(p, with, wl);
    }
}

/* Remove every line of S that is TOK after its indentation. */
static void drop_lines(char *s, const char *tok) {
    size_t tl = strlen(tok);
    char *line = s;
    while (*line) {
        char *end = strchr(line, '\n'), *t = line + strspn(line, " ");
        end = end ? end + 1 : line + strlen(line);
        if (!strncmp(t, tok, tl) && (t[tl] == '\n' || !t[tl])) memmove(line, end, strlen(end) + 1);
        else line = end;
    }
}

/* Both dialects print the same body text: the kernel's logic differs only
 * in the spellings of the dialect table (and the macro preamble that spells
 * vector access, shared arrays and asynchronous copies). Checked on a plan
 * with every feature on: vector copies, a transposed staged input, cp.async
 * (h100), three stages, a raster and vector stores with beta. */
Test(kernels, dialects_differ_only_in_spelling) {
    gs_ctx *ctx = gs_ctx_create();
    gs_op op;
    gs_etir e;
    cr_assert_eq(gs_op_parse_into(ctx, "gemm M=100 N=60 K=50 beta=1", &op), GS_OK);
    cr_assert_eq(gs_etir_parse_config(ctx, &op, "bm=32,bn=32,bk=8,tm=4,tn=4,vm=1,vn=1,sa=1,sb=1,stages=3,raster=2", &e),
                 GS_OK, "%s", gs_ctx_errmsg(ctx));
    const gs_hw *hw = gs_hw_find_builtin("h100");
    gs_kernel_src a, b;
    cr_assert_eq(gs_lower_emit(ctx, hw, &op, &e, GS_DIALECT_CUDA, 90, &a), GS_OK);
    cr_assert_eq(gs_lower_emit(ctx, hw, &op, &e, GS_DIALECT_OPENCL, 0, &b), GS_OK);
    const gs_plan *p = &a.desc.plan;
    cr_assert(p->any_async && p->stages == 3 && p->raster == 1 && p->out_vec == 4, "the plan lacks a feature");
    cr_assert(p->in[0].inner_dim != p->in[0].copy_dim, "A is staged transposed");
    cr_expect_eq(a.grid, b.grid);
    cr_expect_eq(a.block, b.block);
    cr_expect_eq(a.smem_bytes, b.smem_bytes);
    /* from the signature on (the banner names the dialect, the preamble spells it) */
    const char *xa = strstr(a.src, "extern \"C\""), *xb = strstr(b.src, "__kernel");
    cr_assert(xa && xb);
    char *x = malloc(strlen(xa) + 4096), *y = malloc(strlen(xb) + 4096);
    strcpy(x, xa);
    strcpy(y, xb);
    strip(x, a.name, "K");
    strip(y, b.name, "K");
    /* the last tile's runtime-bounded reduce loops: unrolled by 4 in CUDA, no pragma in OpenCL */
    int n4 = 0;
    for (const char *q = x; (q = strstr(q, "#pragma unroll 4\n")); q++) n4++;
    cr_assert_gt(n4, 0, "the plan has no bounded reduce loop");
    drop_lines(x, "#pragma unroll 4");
    /* the cold mark on the bounded compute (--sass): a pmevent in CUDA, none in OpenCL */
    cr_assert(strstr(x, "asm volatile(\"pmevent 0;\");") != NULL, "no cold mark on the bounded compute");
    drop_lines(x, "asm volatile(\"pmevent 0;\");");
    char cu0[96], cl0[96];
    snprintf(cu0, sizeof cu0, "extern \"C\" __global__ void __launch_bounds__(%d, %d)", (int)p->threads,
             (int)p->min_blocks);
    snprintf(cl0, sizeof cl0, "__kernel __attribute__((reqd_work_group_size(%d, 1, 1))) void", (int)p->threads);
    const char *cu[] = {cu0, "const float* __restrict__", "float* __restrict__", "__syncthreads()", "(int)threadIdx.x",
                        "(int)blockIdx.x", "__int_as_float(0xff800000)", "fmaxf"};
    const char *cl[] = {cl0, "__global const float* restrict", "__global float* restrict", "barrier(CLK_LOCAL_MEM_FENCE)",
                        "(int)get_local_id(0)", "(int)get_group_id(0)", "(-INFINITY)", "fmax"};
    for (int i = 0; i < 8; i++) {
        char tag[16];
        snprintf(tag, sizeof tag, "@%d@", i);
        strip(x, cu[i], tag);
        strip(y, cl[i], tag);
    }
    /* a pointer into shared memory: OpenCL's address space (smem_q), none in CUDA */
    strip(y, "__local ", "");
    cr_expect_str_eq(x, y, "dialects differ beyond spelling");
    cr_expect(strstr(a.src, "cp.async.cg.shared.global") && strstr(x, "GS_CP_ASYNC16"), "the CUDA text uses cp.async");
    free(x);
    free(y);
    gs_kernel_src_free(&a);
    gs_kernel_src_free(&b);
    gs_ctx_destroy(ctx);
}

/* The descriptor: same op structure, plan, dialect and arch => same hash.
 * Shapes whose rows keep the plan's vector widths reuse the kernel (extents
 * are runtime arguments); a shape with an odd row length gets a scalar plan
 * and so another kernel. */
Test(kernels, descriptor_hash_is_shape_generic) {
    gs_ctx *ctx = gs_ctx_create();
    const gs_hw *hw = gs_hw_find_builtin("rtx4090");
    gs_op a, b, c, d;
    cr_assert_eq(gs_op_parse_into(ctx, "gemm M=100 N=60 K=52", &a), GS_OK);
    cr_assert_eq(gs_op_parse_into(ctx, "gemm M=300 N=64 K=8", &b), GS_OK);
    cr_assert_eq(gs_op_parse_into(ctx, "gemm M=300 N=64 K=8 transA=1", &c), GS_OK);
    cr_assert_eq(gs_op_parse_into(ctx, "gemm M=300 N=61 K=7", &d), GS_OK);
    gs_etir e;
    cr_assert_eq(gs_etir_parse_config(ctx, &a, "bm=32,bn=32,bk=8,tm=4,tn=4,vm=1,vn=1,sa=1,sb=1", &e), GS_OK);
    gs_kdesc ka, kb, kc, kd;
    gs_plan pa, pb, pc, pd;
    gs_plan_make(hw, &a, &e, NULL, &pa);
    gs_plan_make(hw, &b, &e, NULL, &pb);
    gs_plan_make(hw, &c, &e, NULL, &pc);
    gs_plan_make(hw, &d, &e, NULL, &pd);
    gs_kdesc_make(&a, &pa, &e, GS_DIALECT_CUDA, 86, &ka);
    gs_kdesc_make(&b, &pb, &e, GS_DIALECT_CUDA, 86, &kb);
    gs_kdesc_make(&c, &pc, &e, GS_DIALECT_CUDA, 86, &kc);
    gs_kdesc_make(&d, &pd, &e, GS_DIALECT_CUDA, 86, &kd);
    cr_expect_eq(gs_kdesc_hash(&ka), gs_kdesc_hash(&kb));
    cr_expect_neq(gs_kdesc_hash(&ka), gs_kdesc_hash(&kc));
    cr_expect_eq(pa.in[0].copy_vec, 4);
    cr_expect_eq(pd.in[0].copy_vec, 1, "K=7: A's rows are not 16-byte aligned");
    cr_expect_neq(gs_kdesc_hash(&ka), gs_kdesc_hash(&kd));
    gs_kdesc_make(&a, &pa, &e, GS_DIALECT_CUDA, 80, &kb);
    cr_expect_neq(gs_kdesc_hash(&ka), gs_kdesc_hash(&kb));
    gs_ctx_destroy(ctx);
}

/* Is byte i one of the high bytes of a count (naxes, ninputs, a tensor's ndim),
 * whose flip would send gs_kdesc_make past its arrays? Their low byte stands
 * for the field. */
static bool count_high_byte(size_t i) {
    size_t c[2 + GS_MAX_TENSORS] = {offsetof(gs_op, naxes), offsetof(gs_op, ninputs)};
    for (int t = 0; t < GS_MAX_TENSORS; t++)
        c[2 + t] = offsetof(gs_op, tensors) + (size_t)t * sizeof(gs_tensor) + offsetof(gs_tensor, ndim);
    for (int k = 0; k < 2 + GS_MAX_TENSORS; k++)
        if (i > c[k] && i < c[k] + sizeof(int)) return true;
    return false;
}

/* Is byte i of a gs_op one a kernel takes at run time (gs_op_key clears it)? */
static bool runtime_byte(size_t i) {
    size_t r[][2] = {
        {offsetof(gs_op, spec), sizeof(((gs_op *)0)->spec)},
        {offsetof(gs_op, epi.alpha), sizeof(float)},
        {offsetof(gs_op, epi.beta), sizeof(float)}, /* only beta != 0 is structure (below) */
    };
    for (size_t k = 0; k < sizeof r / sizeof r[0]; k++)
        if (i >= r[k][0] && i < r[k][0] + r[k][1]) return true;
    for (int a = 0; a < GS_MAX_AXES; a++) {
        size_t o = offsetof(gs_op, axes) + (size_t)a * sizeof(gs_axis);
        if (i >= o + offsetof(gs_axis, name) && i < o + offsetof(gs_axis, name) + GS_NAME_LEN) return true;
        if (i >= o + offsetof(gs_axis, extent) && i < o + offsetof(gs_axis, extent) + sizeof(int64_t)) return true;
    }
    for (int t = 0; t < GS_MAX_TENSORS; t++) {
        size_t o = offsetof(gs_op, tensors) + (size_t)t * sizeof(gs_tensor);
        if (i >= o + offsetof(gs_tensor, name) && i < o + offsetof(gs_tensor, name) + GS_NAME_LEN) return true;
        if (i >= o + offsetof(gs_tensor, shape) && i < o + offsetof(gs_tensor, shape) + sizeof(((gs_tensor *)0)->shape))
            return true;
    }
    return false;
}

static uint64_t op_desc_hash(const gs_op *op, const gs_etir *e) {
    gs_kdesc k;
    gs_kdesc_make(op, NULL, e, GS_DIALECT_CUDA, 86, &k);
    return gs_kdesc_hash(&k);
}

/* The descriptor holds the operator whole: flipping any bit-0 of a byte of
 * gs_op that is not a runtime argument (extents, shapes, names, spec, alpha,
 * beta's value) changes the hash, so a field added to gs_op, its epilogue or
 * its axes and tensors cannot be left out of the key. The epilogue's beta
 * counts as zero or not. */
Test(kernels, descriptor_covers_every_op_byte) {
    gs_ctx *ctx = gs_ctx_create();
    gs_op a;
    cr_assert_eq(gs_op_parse_into(ctx, "gemm M=100 N=60 K=52 transB=1 alpha=2 beta=0.5 bias=1 relu=1", &a), GS_OK);
    gs_etir e;
    cr_assert_eq(gs_etir_parse_config(ctx, &a, "bm=32,bn=32,bk=8,tm=4,tn=4,vm=1,vn=1,sa=1,sb=1", &e), GS_OK);
    uint64_t h = op_desc_hash(&a, &e);
    int covered = 0, runtime = 0;
    for (size_t i = 0; i < sizeof a; i++) {
        if (runtime_byte(i)) {
            runtime++;
            continue;
        }
        if (count_high_byte(i)) continue;
        gs_op b = a;
        ((unsigned char *)&b)[i] ^= 1;
        cr_expect_neq(op_desc_hash(&b, &e), h, "byte %zu of gs_op is not in the descriptor", i);
        covered++;
    }
    cr_expect_gt(covered, runtime, "most of gs_op is structure");
    gs_op b = a;
    b.epi.alpha = 3.0f;
    b.epi.beta = 0.25f;
    snprintf(b.spec, sizeof b.spec, "another spec");
    b.axes[0].extent = 7;
    b.tensors[0].shape[0] = 7;
    b.axes[1].name[0] = 'q';
    cr_expect_eq(op_desc_hash(&b, &e), h, "alpha, beta's value, extents, shapes, names and spec are arguments");
    b.epi.beta = 0.0f;
    cr_expect_neq(op_desc_hash(&b, &e), h, "beta = 0 does not read the output: another kernel");
    gs_ctx_destroy(ctx);
}

/* Every kernel constructed for the 7 profiles compiles with NVRTC for the
 * profile's arch (the nearest supported one where NVRTC lacks it) with 0
 * spills and within the profile's limits. Two tests (the profiles of each
 * parity), so make test's two workers share the compiles. make test compiles
 * every spec's top candidate on every profile and its top 3 on one profile
 * (the spec's line number modulo the profile count), 106 compiles of about
 * 1 s; make check-suites (GS_FULL_SUITES=1) the top 3 everywhere (up to 252: a spec may have fewer candidates). */
static void nvrtc_sweep(int parity) {
    gs_ctx *ctx = gs_ctx_create();
    gs_test_need_nvrtc(ctx, "the NVRTC sweep");
    gs_test_lines specs;
    gs_test_lines_read("gemm_nvrtc.txt", &specs);
    int compiled = 0, nspecs = 0;
    const bool asan = getenv("GS_ASAN") != NULL; /* the sanitizer build re-checks the top candidate only */
    const bool full = !asan && gs_test_env_true("GS_FULL_SUITES");
    for (int li = 0; li < specs.n; li++) {
        if (!gs_test_case_runs(li, 3)) continue; /* and a third of the lines */
        nspecs++;
        const char *line = specs.text[li];
        gs_op op;
        cr_assert_eq(gs_op_parse_into(ctx, line, &op), GS_OK, "%s", gs_ctx_errmsg(ctx));
        for (int h = parity; h < gs_hw_builtin_count(); h += 2) {
            const gs_hw *hw = gs_hw_builtin(h);
            int arch = gs_nvrtc_nearest_arch(ctx, hw->sm);
            cr_assert(arch >= hw->sm || arch == 75, "nearest arch for sm_%d is sm_%d", hw->sm, arch);
            gs_construct_opts o;
            gs_construct_opts_default(&o);
            o.top_k = full || (!asan && h == li % gs_hw_builtin_count()) ? 3 : 1;
            gs_result *r = NULL;
            cr_assert_eq(gs_construct(ctx, &op, hw, &o, &r), GS_OK, "%s", gs_ctx_errmsg(ctx));
            for (int c = 0; c < r->n; c++) {
                gs_kernel_src ks;
                gs_nvrtc_out nv;
                cr_assert_eq(gs_lower_emit(ctx, hw, &op, &r->cand[c], GS_DIALECT_CUDA, arch, &ks), GS_OK);
                gs_status s = gs_nvrtc_compile(ctx, ks.src, ks.name, arch, false, true, &nv);
                cr_assert_eq(s, GS_OK, "%s on %s: %s", line, hw->name, gs_ctx_errmsg(ctx));
                cr_expect_eq(nv.stats.spill_store_bytes + nv.stats.spill_load_bytes, 0,
                             "%s on %s (%s): %lld spill bytes", line, hw->name, r->desc[c],
                             (long long)(nv.stats.spill_store_bytes + nv.stats.spill_load_bytes));
                cr_expect(nv.stats.registers > 0 && nv.stats.registers <= hw->max_regs_per_thread);
                int64_t warps = (ks.block + hw->warp_size - 1) / hw->warp_size;
                cr_expect((int64_t)nv.stats.registers * warps * hw->warp_size <= hw->regs_per_sm,
                          "%s on %s (%s): %d regs x %lld threads exceed the SM's registers", line, hw->name,
                          r->desc[c], nv.stats.registers, (long long)ks.block);
                /* static shared memory is what ptxas reports; over 48 KiB it is dynamic */
                cr_expect_eq(nv.stats.smem_bytes, ks.smem_dynamic ? ks.desc.plan.scratch_bytes : ks.smem_bytes,
                             "ptxas smem %lld vs emitted %lld",
                             (long long)nv.stats.smem_bytes, (long long)ks.smem_bytes);
                cr_expect(ks.smem_bytes <= hw->smem_per_block_optin);
                cr_expect(ks.smem_dynamic == (ks.smem_bytes > hw->smem_per_block));
                cr_expect(ks.block <= hw->max_threads_per_block);
                /* ptxas may exceed the plan's register bound only in slack that costs
                 * no block per SM (the launch bounds are derived from the bound) */
                const gs_plan *pl = &ks.desc.plan;
                cr_expect(gs_plan_blocks_per_sm(hw, pl, nv.stats.registers) >= gs_plan_blocks_per_sm(hw, pl, pl->regs_bound),
                          "%s on %s (%s): ptxas %d registers cost occupancy against the plan's bound %d", line, hw->name,
                          r->desc[c], nv.stats.registers, pl->regs_bound);
                gs_nvrtc_out_free(&nv);
                gs_kernel_src_free(&ks);
                compiled++;
            }
            gs_result_destroy(r);
        }
    }
    cr_log_info("profiles of parity %d: %d specs, %d kernels compiled", parity, nspecs, compiled);
    const int nprof = (gs_hw_builtin_count() - parity + 1) / 2;
    cr_assert(specs.n >= 10 && nspecs >= specs.n / 3 && compiled >= nspecs * nprof,
              "compiled %d kernels for %d of %d specs on %d profiles", compiled, nspecs, specs.n, nprof);
    gs_test_lines_free(&specs);
    gs_ctx_destroy(ctx);
}
Test(kernels, nvrtc_sweep_even_profiles, .timeout = 900) { nvrtc_sweep(0); }
Test(kernels, nvrtc_sweep_odd_profiles, .timeout = 900) { nvrtc_sweep(1); }

/* sm_70 (V100) is not accepted by CUDA 13's NVRTC: the error says so and
 * names the nearest supported arch. */
Test(kernels, unsupported_arch_is_reported) {
    gs_ctx *ctx = gs_ctx_create();
    gs_test_need_nvrtc(ctx, "the unsupported-arch check");
    int archs[64], n = 0;
    cr_assert_eq(gs_nvrtc_supported_archs(ctx, archs, 64, &n), GS_OK);
    bool has70 = false;
    for (int i = 0; i < n; i++) has70 |= archs[i] == 70;
    if (has70) cr_skip_test("this NVRTC still supports sm_70");
    gs_op op;
    cr_assert_eq(gs_op_parse_into(ctx, "gemm M=64 N=64 K=64", &op), GS_OK);
    gs_etir e;
    cr_assert_eq(gs_etir_parse_config(ctx, &op, "bm=32,bn=32,bk=8,tm=2,tn=2,vm=1,vn=1,sa=1,sb=1", &e), GS_OK);
    gs_kernel_src ks;
    cr_assert_eq(gs_lower_emit(ctx, gs_hw_find_builtin("v100"), &op, &e, GS_DIALECT_CUDA, 70, &ks), GS_OK);
    gs_nvrtc_out nv;
    cr_expect_eq(gs_nvrtc_compile(ctx, ks.src, ks.name, 70, true, true, &nv), GS_ERR_ARCH_UNSUPPORTED);
    cr_expect(strstr(gs_ctx_errmsg(ctx), "sm_70") && strstr(gs_ctx_errmsg(ctx), "sm_75"), "%s", gs_ctx_errmsg(ctx));
    gs_nvrtc_out_free(&nv);
    gs_kernel_src_free(&ks);
    gs_ctx_destroy(ctx);
}

/* Verify runs on any device of the runtime interface: on a CUDA device it
 * compiles with NVRTC for the device's arch and checks the kernel (a plain
 * and a split-K configuration); without a CUDA driver or device it says so
 * with GS_ERR_CUDA_MISSING and the measurement-free message. */
Test(kernels, verify_on_cuda_or_says_missing) {
    gs_ctx *ctx = gs_ctx_create();
    gs_hw *hw = NULL;
    cr_assert_eq(gs_hw_load(ctx, "h100", &hw), GS_OK);
    gs_op *op = NULL;
    cr_assert_eq(gs_op_parse(ctx, "gemm M=40 N=24 K=2048 beta=0.5", &op), GS_OK);
    gs_etir e;
    cr_assert_eq(gs_etir_parse_config(ctx, op, "bm=8,bn=8,bk=64,tm=2,tn=2,vm=1,vn=1,sa=1,sb=1,split=4", &e), GS_OK,
                 "%s", gs_ctx_errmsg(ctx));
    gs_diff d;
    cr_assert_eq(gs_verify(ctx, NULL, hw, op, &e, 1, &d), GS_ERR_INVALID_ARG);
    gs_device none; /* a CUDA device whose runtime is not open */
    gs_device_wrap(&none, &gs_runtime_cuda, NULL);
    gs_test_expect_err(ctx, gs_verify(ctx, &none, hw, op, &e, 1, &d), GS_ERR_CUDA_MISSING,
                       "no CUDA device: measurement-free mode (", "no CUDA runtime");
    gs_device *cu = NULL;
    gs_status s = gs_device_open(ctx, GS_BACKEND_CUDA, 0, &cu);
    if (s == GS_OK) {
        gs_test_need_nvrtc(ctx, "verify on the CUDA device");
        cr_assert_eq(gs_verify(ctx, cu, hw, op, &e, 1, &d), GS_OK, "split-K on %s: %s", gs_device_name(cu),
                     gs_ctx_errmsg(ctx));
        cr_assert_gt(d.kernel_s, 0);
        gs_etir plain;
        cr_assert_eq(gs_etir_parse_config(ctx, op, "bm=16,bn=8,bk=16,tm=4,tn=2,vm=1,vn=1,sa=1,sb=1", &plain), GS_OK);
        cr_assert_eq(gs_verify(ctx, cu, hw, op, &plain, 2, &d), GS_OK, "%s", gs_ctx_errmsg(ctx));
        gs_device_close(cu);
    } else {
        gs_test_expect_err(ctx, s, GS_ERR_CUDA_MISSING, "no CUDA device: measurement-free mode (", "no CUDA device");
        cr_log_info("no CUDA device: %s", gs_ctx_errmsg(ctx));
    }
    gs_op_destroy(op);
    gs_hw_destroy(hw);
    gs_ctx_destroy(ctx);
}
