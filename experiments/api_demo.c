/* api_demo.c — gensor from include/gensor.h alone, as an embedding program
 * uses it: construct a GEMM, emit it as CUDA C and OpenCL C, compile the
 * CUDA with NVRTC and print ptxas' register count, then run the OpenCL
 * kernel on another shape of the same GEMM and check it. Then two split-K
 * launches on OpenCL, each checked: a kernel of a given split-K
 * configuration (gs_kernel_run), and a dispatcher handle (gs_dispatch_run)
 * of a GEMM with a fused epilogue (gs_op_create_gemm_ex), run twice from the
 * same C (restored with gs_buffer_write) to show the workspace left ready.
 *
 * Build against the library (no internal header, no -I.):
 *   cc -std=c11 -I include experiments/api_demo.c -L build -lgensor \
 *      -lgsl -lgslcblas -ljansson -lOpenCL -ldl -lm -o build/api_demo
 * (with libgensor.so the libraries after -lgensor are optional; an installed
 * gensor gives the same flags through pkg-config). `make test` builds and
 * runs it (tests/api_demo.sh).
 *
 * Run:  build/api_demo [--hw NAME|FILE] [SPEC]      (default rtx4090, gemm 1024^3)
 * Exit: 0 done; 1 an error; 2 bad usage; 77 NVRTC is missing, said on
 * stderr (the CUDA source was emitted but could not be compiled). */
#include "gensor.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXIT_NO_NVRTC 77

static int fail(gs_ctx *ctx, const char *what, gs_status s) {
    fprintf(stderr, "api_demo: %s: %s: %s\n", what, gs_status_str(s), gs_ctx_errmsg(ctx));
    return 1;
}

/* The first n lines of a source, indented. */
static void head(const char *src, int n) {
    for (int i = 0; i < n && *src; i++) {
        const char *nl = strchr(src, '\n');
        int len = nl ? (int)(nl - src) : (int)strlen(src);
        printf("    %.*s\n", len, src);
        src += len + (nl ? 1 : 0);
    }
}

/* Run the OpenCL kernel k on `spec` (another shape of its GEMM) and compare
 * C = A*B with a double-precision loop. Returns 0 when it matches, 1 on a
 * mismatch or an error; no OpenCL device is said and is not an error. */
static int run_opencl(gs_ctx *ctx, gs_kernel *k, const char *spec) {
    gs_device *dev = NULL;
    gs_status s = gs_device_open(ctx, GS_BACKEND_OPENCL, 0, &dev);
    if (s == GS_ERR_OPENCL_MISSING) {
        printf("run       no OpenCL device (%s): the OpenCL kernel was not run\n", gs_ctx_errmsg(ctx));
        return 0;
    }
    if (s != GS_OK) return fail(ctx, "gs_device_open", s);
    gs_op *op = NULL;
    if ((s = gs_op_parse(ctx, spec, &op)) != GS_OK) {
        gs_device_close(dev);
        return fail(ctx, spec, s);
    }
    int nb = gs_op_num_buffers(op); /* A, B, C */
    float *host[3] = {0};
    gs_buffer *buf[3] = {0};
    for (int i = 0; i < nb && i < 3; i++) {
        int64_t n = gs_op_buffer_elems(op, i);
        host[i] = calloc((size_t)n, sizeof(float));
        for (int64_t j = 0; host[i] && j < n; j++) host[i][j] = (float)((j * 7 + i * 3) % 11) / 11.0f - 0.5f;
        if (host[i] && s == GS_OK) s = gs_buffer_create(ctx, dev, (size_t)n * sizeof(float), host[i], &buf[i]);
    }
    double ms = 0, err = 0;
    if (s == GS_OK) s = gs_kernel_run(ctx, dev, k, op, buf, nb, &ms);
    if (s == GS_OK) s = gs_buffer_read(ctx, buf[2], host[2], (size_t)gs_op_buffer_elems(op, 2) * sizeof(float));
    if (s == GS_OK) {
        /* gemm M N K: A[M,K], B[K,N], C[M,N] */
        int64_t M = 0, N = 0, K = 0;
        sscanf(spec, "gemm M=%lld N=%lld K=%lld", (long long *)&M, (long long *)&N, (long long *)&K);
        for (int64_t m = 0; m < M; m++)
            for (int64_t n = 0; n < N; n++) {
                double acc = 0;
                for (int64_t q = 0; q < K; q++) acc += (double)host[0][m * K + q] * host[1][q * N + n];
                double e = fabs(acc - host[2][m * N + n]);
                if (e > err) err = e;
            }
        printf("run       %s on %s (OpenCL): %.3f ms, max abs error %.2e against a double loop: %s\n", spec,
               gs_device_name(dev), ms * 1e3, err, err < 1e-3 ? "PASS" : "FAIL");
    }
    for (int i = 0; i < 3; i++) {
        gs_buffer_destroy(buf[i]);
        free(host[i]);
    }
    gs_op_destroy(op);
    gs_device_close(dev);
    if (s != GS_OK) return fail(ctx, "running the OpenCL kernel", s);
    return err < 1e-3 ? 0 : 1;
}

/* A gemm's reference in double: C = relu(alpha*A*B + beta*C0 + bias[n]) with
 * A[M,K], B[K,N] row-major (bias and relu as given), against the kernel's
 * C; returns the largest absolute difference. */
static double gemm_check(const float *A, const float *B, const float *C0, const float *bias, int relu, float alpha,
                         float beta, const float *C, int64_t M, int64_t N, int64_t K) {
    double err = 0;
    for (int64_t m = 0; m < M; m++)
        for (int64_t n = 0; n < N; n++) {
            double acc = 0;
            for (int64_t q = 0; q < K; q++) acc += (double)A[m * K + q] * B[q * N + n];
            double want = alpha * acc + beta * (double)C0[m * N + n] + (bias ? bias[n] : 0.0);
            if (relu && want < 0) want = 0;
            double e = fabs(want - C[m * N + n]);
            if (e > err) err = e;
        }
    return err;
}

/* Host data for op's buffers (inputs, output, bias), filled with a pattern,
 * and device buffers made from them. */
static gs_status buffers_make(gs_ctx *ctx, gs_device *dev, const gs_op *op, float **host, gs_buffer **buf) {
    gs_status s = GS_OK;
    for (int i = 0; i < gs_op_num_buffers(op) && s == GS_OK; i++) {
        int64_t n = gs_op_buffer_elems(op, i);
        host[i] = calloc((size_t)n, sizeof(float));
        if (!host[i]) return GS_ERR_NOMEM;
        for (int64_t j = 0; j < n; j++) host[i][j] = (float)((j * 5 + i * 3) % 13) / 13.0f - 0.45f;
        s = gs_buffer_create(ctx, dev, (size_t)n * sizeof(float), host[i], &buf[i]);
    }
    return s;
}

/* Split-K through gs_kernel_run: a kernel of an explicit split-K
 * configuration (split=16: 16 blocks share each output's K range and meet
 * in a workspace that the kernel object keeps). */
static int run_split_kernel(gs_ctx *ctx, gs_device *dev, const gs_hw *hw) {
    const char *cfg = "bm=2,bn=1,bk=256,tm=1,tn=1,vm=1,vn=1,sa=1,sb=1,stages=4,group=32,split=16";
    const int64_t M = 8, N = 8, K = 8192;
    gs_op *op = NULL;
    gs_result *r = NULL;
    gs_kernel *k = NULL;
    float *host[4] = {0};
    gs_buffer *buf[4] = {0};
    double ms = 0, err = 1;
    gs_status s = gs_op_create_gemm(ctx, M, N, K, 0, 0, 1.0f, 0.0f, &op);
    if (s == GS_OK) s = gs_construct_config(ctx, op, hw, cfg, &r);
    if (s == GS_OK) s = gs_kernel_create(ctx, r, 0, GS_DIALECT_OPENCL, 0, &k);
    if (s == GS_OK) s = buffers_make(ctx, dev, op, host, buf);
    if (s == GS_OK) s = gs_kernel_run(ctx, dev, k, op, buf, 3, &ms);
    float *C = host[2] ? malloc((size_t)(M * N) * sizeof(float)) : NULL;
    if (s == GS_OK && !C) s = GS_ERR_NOMEM;
    if (s == GS_OK) s = gs_buffer_read(ctx, buf[2], C, (size_t)(M * N) * sizeof(float));
    if (s == GS_OK) {
        err = gemm_check(host[0], host[1], host[2], NULL, 0, 1.0f, 0.0f, C, M, N, K);
        printf("splitk    %s with %s (gs_kernel_run, OpenCL): %.3f ms, max abs error %.2e: %s\n", gs_op_spec(op), cfg,
               ms * 1e3, err, err < 1e-3 ? "PASS" : "FAIL");
    }
    free(C);
    for (int i = 0; i < 4; i++) {
        gs_buffer_destroy(buf[i]);
        free(host[i]);
    }
    gs_kernel_destroy(k);
    gs_result_destroy(r);
    gs_op_destroy(op);
    if (s != GS_OK) return fail(ctx, "the split-K kernel", s);
    return err < 1e-3 ? 0 : 1;
}

/* A dispatcher handle launched through the public API: a GEMM with bias,
 * relu and beta (gs_op_create_gemm_ex), dispatched on an attached OpenCL
 * device and run twice with gs_dispatch_run, C restored in between with
 * gs_buffer_write; the workspace of a split-K pick is the dispatcher's. */
static int run_dispatch(gs_ctx *ctx, gs_device *dev, const gs_hw *hw) {
    const int64_t M = 8, N = 24, K = 8192;
    const gs_gemm_epilogue epi = {.alpha = 1.0f, .beta = 0.5f, .bias = 1, .relu = 1};
    gs_op *op = NULL;
    gs_dispatcher *d = NULL;
    gs_kernel_handle h;
    memset(&h, 0, sizeof h);
    float *host[4] = {0}, *C1 = NULL, *C2 = NULL;
    gs_buffer *buf[4] = {0};
    double ms = 0, err = 1;
    bool same = false;
    gs_dispatch_opts o;
    gs_dispatch_opts_default(&o);
    o.dialect = GS_DIALECT_OPENCL;
    o.cache_dir = ""; /* memory only */
    gs_status s = gs_op_create_gemm_ex(ctx, M, N, K, 0, 0, &epi, &op);
    if (s == GS_OK) s = gs_dispatcher_create(ctx, hw, &o, &d);
    if (s == GS_OK) s = gs_dispatcher_attach(ctx, d, dev);
    if (s == GS_OK) s = gs_dispatch(ctx, d, op, &h);
    if (s == GS_OK) s = buffers_make(ctx, dev, op, host, buf);
    size_t cbytes = (size_t)(M * N) * sizeof(float);
    if (s == GS_OK && (!(C1 = malloc(cbytes)) || !(C2 = malloc(cbytes)))) s = GS_ERR_NOMEM;
    if (s == GS_OK) s = gs_dispatch_run(ctx, d, op, &h, buf, gs_op_num_buffers(op), &ms);
    if (s == GS_OK) s = gs_buffer_read(ctx, buf[2], C1, cbytes);
    if (s == GS_OK) s = gs_buffer_write(ctx, buf[2], host[2], cbytes); /* C as it was: beta reads it */
    if (s == GS_OK) s = gs_dispatch_run(ctx, d, op, &h, buf, gs_op_num_buffers(op), NULL);
    if (s == GS_OK) s = gs_buffer_read(ctx, buf[2], C2, cbytes);
    if (s == GS_OK) {
        err = gemm_check(host[0], host[1], host[2], host[3], epi.relu, epi.alpha, epi.beta, C1, M, N, K);
        same = !memcmp(C1, C2, cbytes);
        printf("dispatch  %s: %s (%s), split-K workspace %lld bytes (gs_dispatch_run, OpenCL): %.3f ms, max abs "
               "error %.2e, second run %s: %s\n",
               gs_op_spec(op), h.name, h.config, (long long)h.workspace_bytes, ms * 1e3, err,
               same ? "bitwise equal" : "DIFFERENT", err < 1e-3 && same ? "PASS" : "FAIL");
    }
    free(C1);
    free(C2);
    for (int i = 0; i < 4; i++) {
        gs_buffer_destroy(buf[i]);
        free(host[i]);
    }
    gs_dispatcher_destroy(d);
    gs_op_destroy(op);
    if (s != GS_OK) return fail(ctx, "the dispatcher handle", s);
    return err < 1e-3 && same ? 0 : 1;
}

/* The split-K kernel and the dispatcher handle on the OpenCL device, when
 * there is one. */
static int run_splitk(gs_ctx *ctx, const gs_hw *hw) {
    gs_device *dev = NULL;
    gs_status s = gs_device_open(ctx, GS_BACKEND_OPENCL, 0, &dev);
    if (s == GS_ERR_OPENCL_MISSING) {
        printf("run       no OpenCL device (%s): the split-K kernels were not run\n", gs_ctx_errmsg(ctx));
        return 0;
    }
    if (s != GS_OK) return fail(ctx, "gs_device_open", s);
    int rc = run_split_kernel(ctx, dev, hw);
    if (!rc) rc = run_dispatch(ctx, dev, hw);
    gs_device_close(dev);
    return rc;
}

int main(int argc, char **argv) {
    const char *hwname = "rtx4090", *spec = "gemm M=1024 N=1024 K=1024";
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--hw") && i + 1 < argc) hwname = argv[++i];
        else if (argv[i][0] != '-') spec = argv[i];
        else {
            fprintf(stderr, "usage: api_demo [--hw NAME|FILE] [SPEC]\n");
            return 2;
        }
    }
    gs_ctx *ctx = gs_ctx_create();
    gs_op *op = NULL;
    gs_hw *hw = NULL;
    gs_result *r = NULL;
    gs_kernel *cu = NULL, *cl = NULL;
    int rc = 0;
    gs_status s;
    if ((s = gs_op_parse(ctx, spec, &op)) != GS_OK) return fail(ctx, "gs_op_parse", s) + 1;
    if ((s = gs_hw_load(ctx, hwname, &hw)) != GS_OK) return fail(ctx, "gs_hw_load", s) + 1;

    /* construct: the Markov walk, top 3 by the analytic estimate */
    gs_construct_opts o;
    gs_construct_opts_default(&o);
    o.top_k = 3;
    if ((s = gs_construct(ctx, op, hw, &o, &r)) != GS_OK) {
        rc = fail(ctx, "gs_construct", s);
        goto out;
    }
    printf("op        %s\nhw        %s (sm_%d)\nconstruct %.3f ms, %d candidates (policy %s)\n", gs_op_spec(op),
           gs_hw_name(hw), gs_hw_sm(hw), gs_result_construct_s(r) * 1e3, gs_result_count(r),
           gs_policy_name(o.policy));
    for (int i = 0; i < gs_result_count(r); i++) {
        char cfg[256], plan[256];
        int64_t grid = 0, block = 0, smem = 0;
        gs_result_config(r, i, cfg, sizeof cfg);
        gs_result_plan(r, i, plan, sizeof plan);
        gs_result_launch(r, i, &grid, &block, &smem);
        printf("  %d  %-50s %8.3f ms  grid %lld x block %lld, %lld B shared\n     config %s\n     plan   %s\n", i,
               gs_result_describe(r, i), gs_result_predicted_s(r, i) * 1e3, (long long)grid, (long long)block,
               (long long)smem, cfg, plan);
    }

    /* emit: CUDA for an arch the installed NVRTC has, and OpenCL */
    int arch = gs_nvrtc_nearest_arch(ctx, gs_hw_sm(hw));
    bool have_nvrtc = arch != 0;
    char why[1024];
    snprintf(why, sizeof why, "%s", gs_ctx_errmsg(ctx));
    if ((s = gs_kernel_create(ctx, r, 0, GS_DIALECT_CUDA, arch, &cu)) != GS_OK ||
        (s = gs_kernel_create(ctx, r, 0, GS_DIALECT_OPENCL, 0, &cl)) != GS_OK) {
        rc = fail(ctx, "gs_kernel_create", s);
        goto out;
    }
    printf("emit      CUDA C for sm_%d: %s, %zu bytes\n", gs_kernel_arch(cu), gs_kernel_name(cu),
           strlen(gs_kernel_source(cu)));
    head(gs_kernel_source(cu), 6);
    printf("emit      OpenCL C: %s, %zu bytes\n", gs_kernel_name(cl), strlen(gs_kernel_source(cl)));

    /* compile the CUDA kernel with NVRTC (no GPU needed) */
    if (!have_nvrtc) {
        fprintf(stderr, "api_demo: NVRTC is not available, so the CUDA kernel was not compiled: %s\n", why);
    } else {
        gs_kernel_stats st;
        if ((s = gs_kernel_compile(ctx, cu, &st)) != GS_OK) {
            rc = fail(ctx, "gs_kernel_compile", s);
            goto out;
        }
        size_t len = 0;
        gs_kernel_binary(cu, &len);
        printf("nvrtc     sm_%d cubin of %zu bytes in %.0f ms: %d registers, %lld bytes spilled, %lld bytes shared\n",
               st.arch, len, st.compile_s * 1e3, st.registers,
               (long long)(st.spill_store_bytes + st.spill_load_bytes), (long long)st.smem_bytes);
    }

    /* the OpenCL kernel takes its extents at run time: run it on a small
     * shape of the same GEMM (transposes, alpha and beta are its structure) */
    if (!strncmp(spec, "gemm ", 5) && !strstr(spec, "trans") && !strstr(spec, "alpha") && !strstr(spec, "beta") &&
        !strstr(spec, "bias") && !strstr(spec, "relu"))
        rc = run_opencl(ctx, cl, "gemm M=100 N=72 K=130");
    if (rc == 0) rc = run_splitk(ctx, hw);
    if (rc == 0 && !have_nvrtc) rc = EXIT_NO_NVRTC;
out:
    gs_kernel_destroy(cu);
    gs_kernel_destroy(cl);
    gs_result_destroy(r);
    gs_hw_destroy(hw);
    gs_op_destroy(op);
    gs_ctx_destroy(ctx);
    return rc;
}
