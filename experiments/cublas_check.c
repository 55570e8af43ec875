/* cublas_check.c — constructed GEMM kernels against cuBLAS on a real CUDA
 * device: correctness (normwise error against cublasSgemm_v2) and time.
 *
 * Built by `make build/cublas_check` (with experiments/cuda_host.c, which
 * holds the dlopen'd driver and cuBLAS declarations shared with bench_gpu.c),
 * or on demand by experiments/check_gpu.sh.
 * Run:  build/cublas_check [--hw auto|NAME] [--refine K] [--reps N] [--suite FILE] [SPEC ...]
 *
 * Our side uses the public API of include/gensor.h only, as a runtime would:
 * gs_device_open (CUDA), gs_hw_query, gs_construct, gs_refine, and per
 * candidate gs_kernel_create / gs_kernel_run (NVRTC cubin or forward PTX,
 * event-timed launches) on gs_buffer's. cuBLAS is loaded with
 * dlopen("libcublas.so") and runs on buffers allocated with the driver API
 * (libcuda.so.1, also dlopen'ed) in the device's primary context, which is
 * the context gensor's device uses too; ch_blas_run (cuda_host.c, which needs
 * the operator's internals) maps the row-major GEMM onto column-major cuBLAS. GEMMs with bias= or relu= are compared
 * without them (cuBLAS has no epilogue); the table says so.
 *
 * Exit status: 0 all pass (or no device: SKIPPED), 1 a mismatch or a
 * runtime error, 2 bad usage. */
#include "gensor.h"
#include "experiments/cuda_host.h" /* cuBLAS and the driver for it (internal: it reads the operator) */
#include "util/pcg.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* cuBLAS on driver-allocated buffers: C_ref (from C0) and the median time. */
static int cublas_run(const gs_op *op, const float *A, const float *B, const float *C0, float *Cref, int reps,
                      double *ms) {
    size_t na = (size_t)gs_op_buffer_elems(op, 0) * 4, nb = (size_t)gs_op_buffer_elems(op, 1) * 4,
           nc = (size_t)gs_op_buffer_elems(op, 2) * 4;
    CUdeviceptr dA = 0, dB = 0, dC = 0;
    cublasHandle_t h = NULL;
    int rc = 1, runs = 0;
    if (CH.CtxSetCurrent(CH.ctx) || CH.MemAlloc(&dA, na) || CH.MemAlloc(&dB, nb) || CH.MemAlloc(&dC, nc)) {
        fprintf(stderr, "cublas_check: cuMemAlloc failed for %s\n", op->spec);
        goto done;
    }
    if (CH.MemcpyHtoD(dA, A, na) || CH.MemcpyHtoD(dB, B, nb) || CH.MemcpyHtoD(dC, C0, nc)) goto done;
    int st = ch_blas_create(CUBLAS_DEFAULT_MATH, &h);
    if (st != 0) {
        fprintf(stderr, "cublas_check: cublasCreate_v2/cublasSetMathMode failed (status %d)\n", st);
        goto done;
    }
    st = ch_blas_run(h, op, dA, dB, dC);
    if (st != 0 || CH.CtxSynchronize() || CH.MemcpyDtoH(Cref, dC, nc)) {
        fprintf(stderr, "cublas_check: cublasSgemm_v2 failed (status %d) for %s\n", st, op->spec);
        goto done;
    }
    ch_blas_call call = {h, op, dA, dB, dC};
    if (ch_time_median(ch_blas_timed, &call, reps, reps, 0, ms, &runs) != 0) goto done;
    rc = 0;
done:
    if (h) CH.Destroy(h);
    if (dA) CH.MemFree(dA);
    if (dB) CH.MemFree(dB);
    if (dC) CH.MemFree(dC);
    return rc;
}

/* One timed launch of our kernel (a ch_timed_fn). */
typedef struct ours_launch {
    gs_ctx *ctx;
    gs_device *dev;
    gs_kernel *k;
    const gs_op *op;
    gs_buffer **buf;
} ours_launch;

static int ours_timed(void *state, double *ms) {
    ours_launch *l = state;
    double s = 0;
    gs_status st = gs_kernel_run(l->ctx, l->dev, l->k, l->op, l->buf, 3, &s);
    *ms = s * 1e3;
    return (int)st;
}

/* Our kernel for candidate cand of r: C (from C0) and the median time. */
static int ours_run(gs_ctx *ctx, gs_device *dev, const gs_result *r, int cand, int arch, const gs_op *op,
                    const float *A, const float *B, const float *C0, float *C, int reps, double *ms) {
    gs_kernel *k = NULL;
    gs_buffer *b[3] = {0};
    int rc = 1, runs = 0;
    gs_status s = gs_kernel_create(ctx, r, cand, GS_DIALECT_CUDA, arch, &k);
    const float *host[3] = {A, B, C0};
    for (int t = 0; t < 3 && s == GS_OK; t++)
        s = gs_buffer_create(ctx, dev, (size_t)gs_op_buffer_elems(op, t) * 4, host[t], &b[t]);
    if (s == GS_OK) s = gs_kernel_run(ctx, dev, k, op, b, 3, NULL); /* compiles and loads; split-K's workspace too */
    if (s == GS_OK) s = gs_buffer_read(ctx, b[2], C, (size_t)gs_op_buffer_elems(op, 2) * 4);
    if (s == GS_OK) {
        ours_launch l = {ctx, dev, k, op, b};
        s = (gs_status)ch_time_median(ours_timed, &l, reps, reps, 0, ms, &runs);
    }
    if (s == GS_OK) rc = 0;
    else fprintf(stderr, "cublas_check: %s: %s: %s\n", gs_op_spec(op), gs_status_str(s), gs_ctx_errmsg(ctx));
    for (int i = 0; i < 3; i++) gs_buffer_destroy(b[i]);
    gs_kernel_destroy(k);
    return rc;
}

/* Normwise error max|y - ref| / max|ref| (the verification figure); inf
 * when y has a non-finite value. */
static double normwise(const float *y, const float *ref, size_t n) {
    double num = 0, den = 0;
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(y[i])) return INFINITY;
        num = fmax(num, fabs((double)y[i] - ref[i]));
        den = fmax(den, fabs((double)ref[i]));
    }
    return den > 0 ? num / den : num;
}

/* "gemm ... bias=1 relu=1" -> without bias and relu; *stripped says so. */
static void strip_epilogue(const char *in, char *out, size_t n, bool *stripped) {
    *stripped = false;
    size_t o = 0;
    const char *p = in;
    while (*p && o + 1 < n) {
        if (p[0] == ' ' && (!strncmp(p + 1, "bias=", 5) || !strncmp(p + 1, "relu=", 5))) {
            *stripped = true;
            p++;
            while (*p && *p != ' ') p++;
            continue;
        }
        out[o++] = *p++;
    }
    out[o] = '\0';
}

int main(int argc, char **argv) {
    const char *hwname = "auto", *suite = NULL;
    int refine = 3, reps = 10;
    const char *specs[256];
    int nspecs = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--hw") && i + 1 < argc) hwname = argv[++i];
        else if (!strcmp(argv[i], "--refine") && i + 1 < argc) refine = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--reps") && i + 1 < argc) reps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--suite") && i + 1 < argc) suite = argv[++i];
        else if (argv[i][0] != '-' && nspecs < 256) specs[nspecs++] = argv[i];
        else {
            fprintf(stderr, "usage: cublas_check [--hw auto|NAME] [--refine K] [--reps N] [--suite FILE] [SPEC ...]\n");
            return 2;
        }
    }
    if (refine < 1 || refine > 64 || reps < 1 || reps > 64) {
        fprintf(stderr, "cublas_check: --refine 1..64, --reps 1..64\n");
        return 2;
    }
    json_t *root = NULL;
    if (suite) {
        json_error_t je;
        root = json_load_file(suite, 0, &je);
        json_t *ops = root ? json_object_get(root, "ops") : NULL;
        if (!json_is_array(ops)) {
            fprintf(stderr, "cublas_check: %s: %s\n", suite, root ? "no \"ops\" array" : je.text);
            return 2;
        }
        for (size_t i = 0; i < json_array_size(ops) && nspecs < 256; i++) {
            const char *sp = json_string_value(json_object_get(json_array_get(ops, i), "spec"));
            if (sp && !strncmp(sp, "gemm ", 5)) specs[nspecs++] = sp;
        }
    }
    if (!nspecs) {
        fprintf(stderr, "cublas_check: no GEMM to check (give SPECs or --suite FILE)\n");
        return 2;
    }
    gs_ctx *ctx = gs_ctx_create();
    gs_device *dev = NULL;
    gs_status s = gs_device_open(ctx, GS_BACKEND_CUDA, 0, &dev);
    if (s == GS_ERR_CUDA_MISSING) {
        printf("cublas_check: SKIPPED: %s\n", gs_ctx_errmsg(ctx));
        return 0;
    }
    if (s != GS_OK) {
        fprintf(stderr, "cublas_check: %s\n", gs_ctx_errmsg(ctx));
        return 1;
    }
    char why[512];
    if (ch_load_driver(why, sizeof why) && ch_load_cublas(why, sizeof why) && CH.blas_fake)
        snprintf(why, sizeof why, "%.200s is the test double (unset GS_CUBLAS_LIB)", CH.blas_path);
    if (!CH.driver || !CH.blas || CH.blas_fake) {
        fprintf(stderr, "cublas_check: %s\n", why);
        gs_device_close(dev);
        return 1;
    }
    gs_hw *devhw = NULL, *hw = NULL;
    if ((s = gs_hw_query(ctx, dev, NULL, &devhw)) != GS_OK) {
        fprintf(stderr, "cublas_check: %s\n", gs_ctx_errmsg(ctx));
        return 1;
    }
    int sm = gs_hw_sm(devhw);
    if (!strcmp(hwname, "auto")) {
        hw = devhw;
        devhw = NULL;
    } else if (gs_hw_load(ctx, hwname, &hw) != GS_OK) {
        fprintf(stderr, "cublas_check: %s\n", gs_ctx_errmsg(ctx));
        return 2;
    }
    gs_hw_destroy(devhw);
    bool cubin = false;
    int arch = ch_pick_arch(ctx, sm, &cubin);
    if (!arch) {
        fprintf(stderr, "cublas_check: NVRTC cannot target sm_%d: %s\n", sm, gs_ctx_errmsg(ctx));
        return 1;
    }
    printf("device    %s (sm_%d), profile %s, %s for sm_%d, refine top %d, %d timed runs (median)\n",
           gs_device_name(dev), sm, gs_hw_name(hw), cubin ? "cubin" : "PTX", arch, refine, reps);
    printf("%-44s %-52s %10s %10s %10s %8s %9s  %s\n", "gemm", "ours (refined pick)", "ours ms", "top-1 ms",
           "cuBLAS ms", "ours/cB", "normwise", "check");
    int fails = 0, errors = 0;
    for (int i = 0; i < nspecs; i++) {
        char spec[256];
        bool stripped = false;
        strip_epilogue(specs[i], spec, sizeof spec, &stripped);
        gs_op *op = NULL;
        gs_result *r = NULL;
        gs_construct_opts co;
        gs_construct_opts_default(&co);
        co.top_k = refine;
        if (gs_op_parse(ctx, spec, &op) != GS_OK || gs_construct(ctx, op, hw, &co, &r) != GS_OK) {
            fprintf(stderr, "cublas_check: %s: %s\n", spec, gs_ctx_errmsg(ctx));
            errors++;
            gs_op_destroy(op);
            continue;
        }
        if (ch_blas_typed(op)) { /* this program's buffers and sgemm are f32 only */
            fprintf(stderr, "cublas_check: %s: typed (dtype=/math=) operators are checked by bench_gpu "
                            "(cublasGemmEx; make check-gpu runs it)\n", spec);
            errors++;
            gs_result_destroy(r);
            gs_op_destroy(op);
            continue;
        }
        int pick = 0;
        if (refine > 1 && gs_refine(ctx, dev, r, refine, 200, &pick, NULL) != GS_OK) {
            fprintf(stderr, "cublas_check: %s: refinement failed (%s); using the model's pick\n", spec,
                    gs_ctx_errmsg(ctx));
            pick = 0;
        }
        size_t n[3];
        float *h[3], *Cours = NULL, *Cref = NULL;
        gs_pcg32 rng;
        gs_pcg32_seed(&rng, 7, 0x63626c6173ull);
        bool ok = true;
        for (int t = 0; t < 3; t++) {
            n[t] = (size_t)gs_op_buffer_elems(op, t);
            h[t] = malloc(n[t] * sizeof(float));
            ok = ok && h[t];
            if (ok) gs_pcg32_fill_uniform(&rng, h[t], (int64_t)n[t]);
        }
        Cours = malloc(n[2] * sizeof(float));
        Cref = malloc(n[2] * sizeof(float));
        double ours = NAN, top1 = NAN, cb = NAN;
        if (!ok || !Cours || !Cref) {
            fprintf(stderr, "cublas_check: %s: out of host memory\n", spec);
            errors++;
        } else if (ours_run(ctx, dev, r, pick, arch, op, h[0], h[1], h[2], Cours, reps, &ours) ||
                   cublas_run(op, h[0], h[1], h[2], Cref, reps, &cb)) {
            errors++;
        } else {
            if (pick != 0) {
                float *tmp = malloc(n[2] * sizeof(float));
                if (tmp && ours_run(ctx, dev, r, 0, arch, op, h[0], h[1], h[2], tmp, reps, &top1)) errors++;
                free(tmp);
            } else {
                top1 = ours;
            }
            /* both sides are fp32 with different summation orders: 1e-4 normwise */
            double nw = normwise(Cours, Cref, n[2]);
            bool pass = nw <= 1e-4;
            fails += !pass;
            char name[300];
            snprintf(name, sizeof name, "%s%s", spec, stripped ? " (-epilogue)" : "");
            printf("%-44s %-52s %10.4f %10.4f %10.4f %8.2f %9.2e  %s\n", name, gs_result_describe(r, pick), ours, top1, cb,
                   ours / cb, nw, pass ? "PASS" : "FAIL");
            fflush(stdout);
        }
        for (int t = 0; t < 3; t++) free(h[t]);
        free(Cours);
        free(Cref);
        gs_result_destroy(r);
        gs_op_destroy(op);
    }
    printf("cublas_check: %d checked, %d failed, %d errors (pass: normwise error <= 1e-4 against cublasSgemm_v2; "
           "ours/cB > 1 means slower than cuBLAS)\n",
           nspecs - errors, fails, errors);
    ch_unload();
    gs_device_close(dev);
    gs_hw_destroy(hw);
    json_decref(root);
    gs_ctx_destroy(ctx);
    return fails || errors ? 1 : 0;
}
