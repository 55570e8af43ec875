/* bench_gpu.c — `make bench-gpu`: how fast gensor's kernels are on a real
 * CUDA device, against cuBLAS and PyTorch, operator by operator.
 *
 *   build/bench_gpu [--hw auto|NAME|FILE] [--refine K] [--quick] [--out DIR]
 *                   [--torch-csv FILE] [--dry-run [--arch SM]] [--tf32] LIST.json ...
 *
 * For every operator of the lists (experiments/suites/paper.json,
 * experiments/models/<model>.json; an operator that appears in several lists is
 * measured once, by its canonical spec):
 *  1. construct it for the profile (--hw auto: the device's own, from
 *     gs_cuda_query_profile), measurement-free top-1, or with --refine K the
 *     measured best of the model's top K (gs_refine_device);
 *  2. emit CUDA C, compile it with NVRTC for the device's arch (a cubin, or
 *     PTX for the newest older arch NVRTC has), load it (gs_cuda_load) and
 *     launch it (gs_cuda_launch; arguments: inputs, output, bias, then
 *     gs_kernel_scalar_args);
 *  3. time it the way shared/data/h100/README.md says: one warm-up launch,
 *     checked, with the output poisoned with NaN beforehand (unless beta
 *     reads it), then 5..30 launches, one event pair each, until 40 ms of
 *     wall time have gone; the median is reported;
 *  4. check the warm-up's output: gemm/bgemm/gemv against cuBLAS (FP32,
 *     CUBLAS_DEFAULT_MATH: no TF32; a gemm's bias/relu epilogue is applied
 *     to cuBLAS's result on the host), other operators against the IR
 *     interpreter (gs_op_reference) when the iteration space is at most
 *     --check-iters, else at --samples random output points through
 *     gs_op_reference_point (the same arithmetic), plus a scan of the whole
 *     output for NaN/Inf (unwritten elements stay NaN). `unchecked` when
 *     neither ran (--check-iters 0 --samples 0);
 *  5. time cuBLAS the same way for gemm/bgemm/gemv (without the epilogue,
 *     which cuBLAS does not have: marked `*`);
 *  6. join PyTorch's times (experiments/torch_bench.py's CSV) by spec.
 * Typed operators (dtype=f16|bf16, out_dtype=, math=tf32: issue 18) get
 * device buffers in their types (gs_op_buffer_bytes; inputs rounded to
 * values the type holds, then packed; the output unpacked to floats for the
 * checks, whose bound is the per-type gs_verify_tolerance), and cuBLAS runs
 * cublasGemmEx / cublasGemmStridedBatchedEx in those types with
 * CUBLAS_COMPUTE_32F (math=tf32: CUBLAS_COMPUTE_32F_FAST_TF32). --tf32 sets
 * math=tf32 on every f32 gemm, bgemm and conv2d of the lists. The table's
 * type column: f32, f16, bf16, in>out (f16>f32), tf32.
 * It prints a table, geometric means of ours/cuBLAS and ours/PyTorch
 * overall and per operator class, and per list (model) the sum of
 * time × count; it writes OUT/results.csv and OUT/summary.json.
 *
 * Without a CUDA device it prints "bench-gpu: SKIPPED: no CUDA device (why)"
 * and exits 0: no time is ever taken on anything but the device.
 * --dry-run does everything but the device work: construction, emission,
 * NVRTC compilation for --arch (default: the profile's, sm_90 with --hw
 * auto), and the table with `-` for the times.
 * --list-specs prints "class<TAB>canonical spec<TAB>tensor shapes" for the
 * selected operators (the input of torch_bench.py); --probe says whether
 * there is a device (exit 3 when not).
 *
 * Exit status: 0 all measured and checked (or skipped: no device), 1 a
 * mismatch, a compile or runtime error, 2 bad usage or a bad list, 3 --probe
 * found no device. */
/* Internal headers, where include/gensor.h cannot do the job: */
#include "construct/construct.h"    /* the candidates' ETIR states and gs_refine_device over a raw gs_cuda handle */
#include "util/pcg.h"               /* PCG32: the same input streams as gensor's own verification */
#include "experiments/cuda_host.h"  /* cuBLAS and the driver, on the kernels' raw device pointers */
#include "kernels/service/service.h"        /* gs_cuda buffers (gs_cuda_buf_devptr for cuBLAS), the IR interpreter, gs_diff */

#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <gsl/gsl_errno.h>

#define MAX_ROWS 1024
#define MAX_ENTRIES 2048
#define MAX_LISTS 64

/* ---- operator classes ---------------------------------------------------------- */
enum { CLS_GEMM, CLS_BGEMM, CLS_GEMV, CLS_CONV, CLS_DWCONV, CLS_POOL, CLS_ELT, CLS_REDUCE, CLS_N };
static const char *const cls_name[CLS_N] = {"gemm", "bgemm", "gemv", "conv2d", "dwconv2d", "pool", "eltwise", "reduce"};

static int op_class(const gs_op *op) {
    switch (op->kind) {
    case GS_OPK_GEMM: return CLS_GEMM;
    case GS_OPK_BGEMM: return CLS_BGEMM;
    case GS_OPK_GEMV: return CLS_GEMV;
    case GS_OPK_CONV2D: return CLS_CONV;
    case GS_OPK_DWCONV2D: return CLS_DWCONV;
    case GS_OPK_POOL: return CLS_POOL;
    case GS_OPK_ELTWISE: return CLS_ELT;
    case GS_OPK_REDUCE: return CLS_REDUCE;
    default: return -1;
    }
}
/* Classes reported in TFLOP/s; the others are memory-bound: GB/s. */
static bool cls_compute(int c) { return c == CLS_GEMM || c == CLS_BGEMM || c == CLS_CONV; }

/* The type column: "f32", "f16", "bf16", "f16>f32" (inputs>output), "tf32". */
static const char *type_str(const gs_op *op, char *buf, size_t n) {
    if (op->math == GS_MATH_TF32) snprintf(buf, n, "tf32");
    else if (op->dtype_in == op->dtype_out) snprintf(buf, n, "%s", gs_dtype_name((gs_dtype)op->dtype_in));
    else snprintf(buf, n, "%s>%s", gs_dtype_name((gs_dtype)op->dtype_in), gs_dtype_name((gs_dtype)op->dtype_out));
    return buf;
}

/* ---- state ---------------------------------------------------------------------------- */
typedef struct opts {
    const char *hw, *out_dir, *torch_csv, *torch_note;
    const char *lists[MAX_LISTS];
    int nlists, refine, arch, samples, min_runs, max_runs, math;
    double refine_ms, target_ms, host_gib;
    int64_t check_iters;
    bool quick, dry, list_specs, probe, self_test, tf32;
} opts;

typedef struct entry {
    char list[64], name[128], written[256];
    int64_t count;
    int row;
} entry;

typedef struct list_info {
    char name[64];
    int first, n; /* entries [first, first + n) */
} list_info;

typedef struct row {
    gs_op *op;
    gs_op form; /* what the kernels compute: op, or the matmul form of a 1x1 conv (gs_result_form) */
    int cls, first_entry, uses;
    bool sel;
    /* construction and compilation */
    char desc[200], note[200];
    double pred_ms, construct_ms, compile_ms;
    int regs, pick;
    int64_t spill;
    bool built;
    /* measurement */
    double ours_ms, blas_ms, torch_ms, normwise, tol;
    int ours_runs, blas_runs;
    bool blas_no_epi; /* cuBLAS timed without the gemm's bias/relu */
    bool failed;      /* something failed that the check column does not show (cuBLAS) */
    char check[12], ref[24], torch_status[32];
} row;

typedef struct bench {
    opts o;
    gs_ctx *ctx;
    gs_cuda *cu;
    gs_hw *hw;
    int arch;
    bool cubin, nvrtc;
    cublasHandle_t blas;
    char blas_note[600], device[256], torch_desc[256];
    entry *e;
    int ne;
    list_info lists[MAX_LISTS];
    int nl;
    row *r;
    int nr;
    bool lost; /* the CUDA context died (a faulting kernel): nothing more runs */
} bench;

static void note(row *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note(row *r, const char *fmt, ...) {
    size_t l = strlen(r->note);
    if (l + 3 >= sizeof r->note) return;
    if (l) {
        memcpy(r->note + l, "; ", 3);
        l += 2;
    }
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->note + l, sizeof r->note - l, fmt, ap);
    va_end(ap);
}

/* ---- the lists ------------------------------------------------------------------------- */
static int find_row(const bench *B, const char *spec) {
    for (int i = 0; i < B->nr; i++)
        if (!strcmp(gs_op_spec(B->r[i].op), spec)) return i;
    return -1;
}

/* Read one suite or model file; 0, or 2 on bad input (said on stderr). */
static int load_list(bench *B, const char *path) {
    json_error_t je;
    json_t *root = json_load_file(path, 0, &je);
    json_t *ops = root ? json_object_get(root, "ops") : NULL;
    if (!json_is_array(ops)) {
        fprintf(stderr, "bench_gpu: %s: %s\n", path, root ? "no \"ops\" array" : je.text);
        json_decref(root);
        return 2;
    }
    if (B->nl >= MAX_LISTS) {
        fprintf(stderr, "bench_gpu: more than %d lists\n", MAX_LISTS);
        json_decref(root);
        return 2;
    }
    list_info *L = &B->lists[B->nl++];
    const char *nm = json_string_value(json_object_get(root, "name"));
    if (nm) snprintf(L->name, sizeof L->name, "%s", nm);
    else {
        const char *base = strrchr(path, '/');
        snprintf(L->name, sizeof L->name, "%s", base ? base + 1 : path);
        char *dot = strstr(L->name, ".json");
        if (dot) *dot = '\0';
    }
    L->first = B->ne;
    int rc = 0;
    for (size_t i = 0; i < json_array_size(ops) && rc == 0; i++) {
        json_t *o = json_array_get(ops, i);
        const char *spec = json_string_value(json_object_get(o, "spec"));
        const char *name = json_string_value(json_object_get(o, "name"));
        json_t *jc = json_object_get(o, "count");
        int64_t count = jc ? (int64_t)json_integer_value(jc) : 1;
        if (!spec || (jc && !json_is_integer(jc)) || count < 1) {
            fprintf(stderr, "bench_gpu: %s: ops[%zu]: needs a \"spec\" string and an integer \"count\" >= 1\n", path,
                    i);
            rc = 2;
            break;
        }
        if (B->ne >= MAX_ENTRIES) {
            fprintf(stderr, "bench_gpu: more than %d operators in the lists\n", MAX_ENTRIES);
            rc = 2;
            break;
        }
        gs_op *op = NULL;
        if (gs_op_parse(B->ctx, spec, &op) != GS_OK) {
            fprintf(stderr, "bench_gpu: %s: ops[%zu] '%s': %s\n", path, i, spec, gs_ctx_errmsg(B->ctx));
            rc = 2;
            break;
        }
        /* --tf32: every f32 matrix product of the lists with math=tf32 (its own spec) */
        if (B->o.tf32 && (op->kind == GS_OPK_GEMM || op->kind == GS_OPK_BGEMM || op->kind == GS_OPK_CONV2D) &&
            !gs_op_typed(op) && gs_op_set_math(B->ctx, op, GS_MATH_TF32) != GS_OK) {
            fprintf(stderr, "bench_gpu: %s: ops[%zu] '%s': %s\n", path, i, spec, gs_ctx_errmsg(B->ctx));
            gs_op_destroy(op);
            rc = 2;
            break;
        }
        entry *e = &B->e[B->ne];
        snprintf(e->list, sizeof e->list, "%s", L->name);
        snprintf(e->name, sizeof e->name, "%s", name ? name : "");
        snprintf(e->written, sizeof e->written, "%s", spec);
        e->count = count;
        e->row = find_row(B, gs_op_spec(op));
        if (e->row >= 0) {
            gs_op_destroy(op);
        } else {
            if (B->nr >= MAX_ROWS || op_class(op) < 0) {
                fprintf(stderr, "bench_gpu: %s: ops[%zu] '%s': %s\n", path, i, spec,
                        B->nr >= MAX_ROWS ? "too many distinct operators" : "operator class not benchmarked");
                gs_op_destroy(op);
                rc = 2;
                break;
            }
            row *r = &B->r[B->nr];
            memset(r, 0, sizeof *r);
            r->op = op;
            r->cls = op_class(op);
            r->first_entry = B->ne;
            r->sel = true;
            r->regs = -1;
            r->spill = -1;
            r->pred_ms = r->ours_ms = r->blas_ms = r->torch_ms = r->normwise = r->tol = NAN;
            snprintf(r->check, sizeof r->check, "-");
            snprintf(r->ref, sizeof r->ref, "-");
            snprintf(r->torch_status, sizeof r->torch_status, "n/a");
            e->row = B->nr++;
        }
        B->r[e->row].uses++;
        B->ne++;
    }
    L->n = B->ne - L->first;
    json_decref(root);
    return rc;
}

/* --quick: the first operator of each class, in list order. */
static void select_quick(bench *B) {
    bool seen[CLS_N] = {0};
    for (int i = 0; i < B->nr; i++) {
        B->r[i].sel = !seen[B->r[i].cls];
        seen[B->r[i].cls] = true;
    }
}

static void list_specs(const bench *B) {
    for (int i = 0; i < B->nr; i++) {
        const row *r = &B->r[i];
        if (!r->sel) continue;
        const gs_op *op = r->op;
        printf("%s\t%s\t", cls_name[r->cls], gs_op_spec(op));
        for (int t = 0; t <= op->ninputs; t++) {
            const gs_tensor *T = &op->tensors[t];
            printf("%s%s=", t ? " " : "", T->name);
            for (int d = 0; d < T->ndim; d++) printf("%s%lld", d ? "x" : "", (long long)T->shape[d]);
        }
        if (op->has_bias) printf(" bias=%lld", (long long)gs_op_bias_elems(op));
        printf("\n");
    }
}

/* ---- PyTorch's CSV (torch_bench.py): spec,torch_ms,runs,status,note ---------------
 * Returns the number of operators given a time, or -1 when unreadable. */
static int load_torch(bench *B, const char *path) {
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "bench_gpu: %s: %s\n", path, strerror(errno));
        return -1;
    }
    char line[2048];
    int joined = 0;
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\r\n")] = '\0';
        if (line[0] == '#') {
            if (!B->torch_desc[0]) snprintf(B->torch_desc, sizeof B->torch_desc, "%s", line + 1 + (line[1] == ' '));
            continue;
        }
        if (!line[0] || !strncmp(line, "spec,", 5)) continue;
        /* canonical specs hold no commas */
        char *c1 = strchr(line, ',');
        if (!c1) continue;
        *c1 = '\0';
        char *ms = c1 + 1, *c2 = strchr(ms, ',');
        char *runs = c2 ? c2 + 1 : NULL, *c3 = runs ? strchr(runs, ',') : NULL;
        char *status = c3 ? c3 + 1 : NULL, *c4 = status ? strchr(status, ',') : NULL;
        if (c2) *c2 = '\0';
        if (c3) *c3 = '\0';
        if (c4) *c4 = '\0';
        int i = find_row(B, line);
        if (i < 0) continue;
        row *r = &B->r[i];
        snprintf(r->torch_status, sizeof r->torch_status, "%s", status && *status ? status : "?");
        char *end = NULL;
        double v = strtod(ms, &end);
        if (end != ms && isfinite(v) && v > 0 && status && !strcmp(status, "ok")) {
            r->torch_ms = v;
            joined++;
        }
    }
    fclose(f);
    return joined;
}

/* ---- host data ---------------------------------------------------------------------------- */
typedef struct host_data {
    float *in[GS_MAX_TENSORS];
    int64_t n[GS_MAX_TENSORS]; /* n[ninputs]: the output */
    float *bias, *out0, *y;    /* out0: the output before the launch; y: after */
    int64_t nbias;
} host_data;

static void host_free(host_data *h) {
    for (int t = 0; t < GS_MAX_TENSORS; t++) free(h->in[t]);
    free(h->bias);
    free(h->out0);
    free(h->y);
    memset(h, 0, sizeof *h);
}

/* Uniform in [-1, 1), one PCG stream per tensor. */
static void fill_uniform(float *x, int64_t n, uint64_t seed, uint64_t stream) {
    gs_pcg32 g;
    gs_pcg32_seed(&g, seed, stream);
    for (int64_t i = 0; i < n; i++) x[i] = (float)(2.0 * gs_pcg32_double(&g) - 1.0);
}

static void round_to(gs_dtype t, float *x, int64_t n) {
    if (t != GS_DTYPE_F32)
        for (int64_t i = 0; i < n; i++) x[i] = gs_dtype_round(t, x[i]);
}

/* n floats in type t's storage (gs_dtype_pack), malloc'd: what a device
 * buffer of that type holds; NULL when out of memory. */
static void *typed_pack(gs_dtype t, const float *x, int64_t n) {
    void *p = malloc((size_t)(n ? n : 1) * (size_t)gs_dtype_bytes(t));
    if (p) gs_dtype_pack(t, x, p, n);
    return p;
}

static bool host_make(const gs_op *op, uint64_t seed, double cap_bytes, host_data *h, char *why, size_t wn) {
    memset(h, 0, sizeof *h);
    int ni = op->ninputs;
    double bytes = 0;
    for (int t = 0; t <= ni; t++) h->n[t] = gs_tensor_elems(&op->tensors[t]);
    h->nbias = gs_op_bias_elems(op);
    for (int t = 0; t < ni; t++) bytes += 4.0 * (double)h->n[t];
    bytes += 4.0 * (double)h->nbias + 3 * 4.0 * (double)h->n[ni]; /* out0, y, and a reference */
    if (bytes > cap_bytes) {
        snprintf(why, wn, "needs %.1f GiB of host memory (--host-gib %.0f)", bytes / (1 << 30), cap_bytes / (1 << 30));
        return false;
    }
    /* values each buffer's type holds exactly (gs_dtype_round), as verify
     * fills them: the device buffers get them packed (typed_buf_create) */
    bool ok = true;
    for (int t = 0; t < ni && ok; t++) {
        ok = (h->in[t] = malloc((size_t)(h->n[t] ? h->n[t] : 1) * sizeof(float))) != NULL;
        if (ok) fill_uniform(h->in[t], h->n[t], seed, (uint64_t)t + 1);
        if (ok) round_to(gs_op_tensor_dtype(op, t), h->in[t], h->n[t]);
    }
    if (ok && h->nbias) {
        ok = (h->bias = malloc((size_t)h->nbias * sizeof(float))) != NULL;
        if (ok) fill_uniform(h->bias, h->nbias, seed, 99);
        if (ok) round_to((gs_dtype)op->dtype_in, h->bias, h->nbias);
    }
    size_t no = (size_t)(h->n[ni] ? h->n[ni] : 1);
    ok = ok && (h->out0 = malloc(no * sizeof(float))) && (h->y = malloc(no * sizeof(float)));
    if (!ok) {
        snprintf(why, wn, "out of host memory");
        host_free(h);
        return false;
    }
    /* beta == 0: the kernel must not read the output, so NaN shows any
     * element it leaves unwritten */
    if (op->epi.beta != 0.0f) {
        fill_uniform(h->out0, h->n[ni], seed, 77);
        round_to((gs_dtype)op->dtype_out, h->out0, h->n[ni]);
    } else
        for (int64_t i = 0; i < h->n[ni]; i++) h->out0[i] = NAN;
    return true;
}

/* ---- checks ------------------------------------------------------------------------------------ */
static int64_t count_nonfinite(const float *y, int64_t n) {
    int64_t k = 0;
    for (int64_t i = 0; i < n; i++) k += !isfinite(y[i]);
    return k;
}

static void set_check(row *r, const gs_diff *d, double tol, const char *ref) {
    r->normwise = d->normwise;
    r->tol = tol;
    snprintf(r->ref, sizeof r->ref, "%s", ref);
    bool pass = d->nonfinite == 0 && d->normwise <= tol;
    snprintf(r->check, sizeof r->check, "%s", pass ? "PASS" : "FAIL");
    if (d->nonfinite) note(r, "%lld non-finite outputs", (long long)d->nonfinite);
}

/* The interpreter at n random output points (plus the first and last). */
static void check_sampled(bench *B, row *r, const host_data *h, int n) {
    const gs_op *op = r->op;
    const gs_tensor *ot = gs_op_out(op);
    float *ys = malloc((size_t)n * sizeof *ys), *rs = malloc((size_t)n * sizeof *rs);
    if (!ys || !rs) {
        free(ys);
        free(rs);
        snprintf(r->check, sizeof r->check, "unchecked");
        note(r, "out of host memory for the sampled check");
        return;
    }
    gs_pcg32 g;
    gs_pcg32_seed(&g, 5, 0x73616d706c65ull);
    int k = 0;
    for (int i = 0; i < n; i++) {
        int64_t pt[GS_MAX_AXES] = {0};
        for (int a = 0; a < op->naxes; a++) {
            if (op->axes[a].kind != GS_AXIS_SPATIAL) continue;
            int64_t ext = op->axes[a].extent;
            pt[a] = i == 0 ? 0 : i == 1 ? ext - 1 : (int64_t)(gs_pcg32_double(&g) * (double)ext);
        }
        int64_t o = gs_tensor_offset(ot, pt, op->naxes);
        if (o < 0) continue;
        rs[k] = (float)gs_op_reference_point(op, (const float *const *)h->in, h->bias, pt, (double)h->out0[o]);
        ys[k++] = h->y[o];
    }
    gs_diff d;
    gs_diff_compute(ys, rs, k, &d);
    d.nonfinite = count_nonfinite(h->y, h->n[op->ninputs]);
    char ref[24];
    snprintf(ref, sizeof ref, "interp~%d", k);
    set_check(r, &d, gs_verify_tolerance(op), ref);
    (void)B;
    free(ys);
    free(rs);
}

static void check_interpreter(bench *B, row *r, const host_data *h) {
    const gs_op *op = r->op;
    double iters = 1;
    for (int a = 0; a < op->naxes; a++) iters *= (double)op->axes[a].extent;
    if (iters > (double)B->o.check_iters) {
        if (B->o.samples > 0) {
            check_sampled(B, r, h, B->o.samples);
            return;
        }
        snprintf(r->check, sizeof r->check, "unchecked");
        int64_t bad = count_nonfinite(h->y, h->n[op->ninputs]);
        if (bad) {
            snprintf(r->check, sizeof r->check, "FAIL");
            note(r, "%lld non-finite outputs", (long long)bad);
        }
        return;
    }
    int64_t no = h->n[op->ninputs];
    float *ref = malloc((size_t)(no ? no : 1) * sizeof *ref);
    if (!ref) {
        snprintf(r->check, sizeof r->check, "unchecked");
        note(r, "out of host memory for the reference");
        return;
    }
    memcpy(ref, h->out0, (size_t)no * sizeof *ref);
    if (gs_op_reference(B->ctx, op, (const float *const *)h->in, h->bias, ref) != GS_OK) {
        snprintf(r->check, sizeof r->check, "ERROR");
        note(r, "reference: %s", gs_ctx_errmsg(B->ctx));
    } else {
        gs_diff d;
        gs_diff_compute(h->y, ref, no, &d);
        set_check(r, &d, gs_verify_tolerance(op), "interpreter");
    }
    free(ref);
}

/* ---- typed device buffers: buffer i of op (gs_op_buffer_dtype, _bytes) ---- */
static gs_status typed_buf_create(bench *B, const gs_op *op, int i, const float *x, gs_cuda_buf **b) {
    gs_dtype t = gs_op_buffer_dtype(op, i);
    int64_t n = gs_op_buffer_elems(op, i);
    void *p = typed_pack(t, x, n);
    if (!p) return GS_ERR_NOMEM;
    gs_status s = gs_cuda_buf_create(B->ctx, B->cu, (size_t)gs_op_buffer_bytes(op, i), p, b);
    free(p);
    return s;
}

static gs_status typed_buf_read(bench *B, const gs_op *op, int i, gs_cuda_buf *b, float *x) {
    gs_dtype t = gs_op_buffer_dtype(op, i);
    int64_t n = gs_op_buffer_elems(op, i);
    size_t bytes = (size_t)gs_op_buffer_bytes(op, i);
    void *p = malloc(bytes ? bytes : 1);
    if (!p) return GS_ERR_NOMEM;
    gs_status s = gs_cuda_buf_read(B->ctx, B->cu, b, p, bytes);
    if (s == GS_OK) gs_dtype_unpack(t, p, x, n);
    free(p);
    return s;
}

/* ---- one operator on the device ------------------------------------------------------------------ */
/* The kernel of candidate e, compiled for B->arch; fills the row's build
 * figures. The caller frees ks and nv. */
static gs_status build_kernel(bench *B, row *r, const gs_op *op, const gs_etir *e, gs_kernel_src *ks,
                              gs_nvrtc_out *nv) {
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    gs_status s = ch_kernel_compile(B->ctx, B->hw, op, e, B->arch, B->cubin, ks, nv);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    r->compile_ms += (double)(t1.tv_sec - t0.tv_sec) * 1e3 + 1e-6 * (double)(t1.tv_nsec - t0.tv_nsec);
    if (s == GS_OK && B->cubin && r->regs < 0) {
        r->regs = nv->stats.registers;
        r->spill = nv->stats.spill_store_bytes + nv->stats.spill_load_bytes;
    }
    return s;
}

static gs_status construct_row(bench *B, row *r, gs_result **res) {
    gs_construct_opts co;
    gs_construct_opts_default(&co);
    co.top_k = B->o.refine > 1 ? B->o.refine : 1;
    co.conv_form = GS_FORM_AUTO; /* a 1x1 conv may come back as its matmul form (r->form) */
    gs_status s = gs_construct(B->ctx, r->op, B->hw, &co, res);
    if (s != GS_OK) return s;
    r->form = (*res)->op; /* the same buffers; the kernels take the form's extents */
    r->construct_ms = gs_result_construct_s(*res) * 1e3;
    return GS_OK;
}

static void set_pick(row *r, const gs_result *res, int pick) {
    r->pick = pick;
    snprintf(r->desc, sizeof r->desc, "%s", gs_result_describe(res, pick));
    r->pred_ms = gs_result_predicted_s(res, pick) * 1e3;
}

/* Dry run: construct, emit and compile (every candidate --refine would try). */
static void dry_row(bench *B, row *r) {
    gs_result *res = NULL;
    if (construct_row(B, r, &res) != GS_OK) {
        snprintf(r->check, sizeof r->check, "ERROR");
        note(r, "construct: %s", gs_ctx_errmsg(B->ctx));
        return;
    }
    set_pick(r, res, 0);
    int n = B->o.refine > 1 ? gs_result_count(res) : 1;
    bool ok = true;
    for (int i = 0; i < n; i++) {
        gs_kernel_src ks;
        gs_nvrtc_out nv;
        gs_status s;
        if (B->nvrtc) {
            s = build_kernel(B, r, &r->form, &res->cand[i], &ks, &nv);
        } else {
            memset(&nv, 0, sizeof nv);
            s = ch_kernel_emit(B->ctx, B->hw, &r->form, &res->cand[i], B->arch, &ks);
        }
        if (s != GS_OK) {
            ok = false;
            note(r, "candidate %d: %s", i, gs_ctx_errmsg(B->ctx));
        }
        gs_nvrtc_out_free(&nv);
        gs_kernel_src_free(&ks);
    }
    r->built = ok;
    snprintf(r->check, sizeof r->check, "%s", ok ? "-" : "ERROR");
    gs_result_destroy(res);
}

static void host_epilogue(const gs_op *op, const float *bias, float *ref, int64_t n) {
    int64_t N = op->axes[1].extent; /* gemm: the bias runs along n, C is [M,N] */
    for (int64_t i = 0; i < n; i++) {
        float v = ref[i];
        if (op->has_bias) v += bias[i % N];
        if (op->epi.relu && v < 0) v = 0;
        ref[i] = v;
    }
}

/* Compare the kernel's output with cuBLAS's (ref, modified: the gemm's
 * bias/relu epilogue, which cuBLAS lacks, is applied to it here). */
static void blas_finish(row *r, const host_data *h, float *ref) {
    const gs_op *op = r->op;
    int64_t no = h->n[op->ninputs];
    bool epi = op->has_bias || op->epi.relu;
    if (epi) host_epilogue(op, h->bias, ref, no);
    gs_diff d;
    gs_diff_compute(h->y, ref, no, &d);
    /* both sides round in fp32, in different orders. math=tf32: cuBLAS's
     * FAST_TF32 kernels need not round their inputs as gensor does
     * (cvt.rna: nearest, ties away; tensor cores fed raw fp32 drop the low
     * 13 bits), so two TF32 roundings of each input may differ: up to 2^-10
     * relative per input, 2^-9 for a product, allowed on top */
    double tol = 10 * gs_verify_tolerance(op) + (op->math == GS_MATH_TF32 ? ldexp(1.0, -9) : 0.0);
    set_check(r, &d, tol, epi ? "cuBLAS+epi" : "cuBLAS");
    r->blas_no_epi = epi;
}

/* cuBLAS: reference output (into a buffer of its own) and time. */
static void blas_row(bench *B, row *r, gs_cuda_buf *const *buf, const host_data *h) {
    const gs_op *op = r->op;
    int64_t no = h->n[op->ninputs];
    gs_cuda_buf *rb = NULL;
    float *ref = malloc((size_t)(no ? no : 1) * sizeof *ref);
    gs_status s = ref ? typed_buf_create(B, op, op->ninputs, h->out0, &rb) : GS_ERR_NOMEM;
    if (s != GS_OK) {
        note(r, "no cuBLAS buffer (%s): checked with the interpreter instead",
             ref ? gs_ctx_errmsg(B->ctx) : "out of host memory");
        r->failed = true;
        free(ref);
        check_interpreter(B, r, h);
        return;
    }
    ch_blas_call call = {B->blas, op, gs_cuda_buf_devptr(buf[0]), gs_cuda_buf_devptr(buf[1]), gs_cuda_buf_devptr(rb)};
    int st = ch_blas_run(call.h, op, call.a, call.b, call.out);
    if (st == 0) st = (int)CH.CtxSynchronize();
    if (st == 0) s = typed_buf_read(B, op, op->ninputs, rb, ref);
    if (st != 0 || s != GS_OK) {
        /* still check our kernel, with the interpreter; the row counts as a failure */
        note(r, "cuBLAS failed (status %d%s%s): checked with the interpreter instead", st, s != GS_OK ? ", " : "",
             s != GS_OK ? gs_ctx_errmsg(B->ctx) : "");
        r->failed = true;
        check_interpreter(B, r, h);
    } else {
        blas_finish(r, h, ref);
        st = ch_time_median(ch_blas_timed, &call, B->o.min_runs, B->o.max_runs, B->o.target_ms, &r->blas_ms,
                            &r->blas_runs);
        if (st != 0) note(r, "cuBLAS timing failed (status %d)", st);
    }
    gs_cuda_buf_free(rb);
    free(ref);
}

static void device_row(bench *B, row *r) {
    const gs_op *op = r->op;
    gs_result *res = NULL;
    gs_refine_report *rep = NULL;
    host_data h;
    memset(&h, 0, sizeof h);
    gs_kernel_src ks;
    gs_nvrtc_out nv;
    memset(&ks, 0, sizeof ks);
    memset(&nv, 0, sizeof nv);
    gs_cuda_mod *mod = NULL;
    gs_cuda_buf *buf[GS_MAX_TENSORS] = {0}, *bbuf = NULL, *wsbuf = NULL;
    char why[200] = "";
    gs_status s = construct_row(B, r, &res);
    if (s != GS_OK) {
        note(r, "construct: %s", gs_ctx_errmsg(B->ctx));
        goto error;
    }
    int pick = 0;
    if (B->o.refine > 1 && (rep = malloc(sizeof *rep))) {
        gs_device dev; /* the interface over the raw handle the cuBLAS side shares */
        gs_device_wrap(&dev, &gs_runtime_cuda, B->cu);
        if (gs_refine_device(B->ctx, NULL, &dev, &r->form, res, B->o.refine, B->o.refine_ms, rep) == GS_OK)
            pick = rep->pick;
        else note(r, "refine failed (%s): top-1 used", gs_ctx_errmsg(B->ctx));
    }
    set_pick(r, res, pick);
    if ((s = build_kernel(B, r, &r->form, &res->cand[pick], &ks, &nv)) != GS_OK) {
        note(r, "compile: %s", gs_ctx_errmsg(B->ctx));
        goto error;
    }
    s = gs_cuda_load(B->ctx, B->cu, B->cubin ? nv.cubin : (const void *)nv.ptx, ks.name, ks.smem_bytes, &mod);
    if (s != GS_OK) {
        note(r, "load: %s", gs_ctx_errmsg(B->ctx));
        goto error;
    }
    r->built = true;
    uint64_t seed = gs_hash_bytes(gs_op_spec(op), strlen(gs_op_spec(op)), 1);
    if (!host_make(op, seed, B->o.host_gib * (double)(1 << 30), &h, why, sizeof why)) {
        note(r, "%s", why);
        goto error;
    }
    int ni = op->ninputs;
    /* each buffer in its type's storage: gs_op_buffer_bytes (inputs, output, bias) */
    for (int t = 0; t < ni && s == GS_OK; t++) s = typed_buf_create(B, op, t, h.in[t], &buf[t]);
    if (s == GS_OK) s = typed_buf_create(B, op, ni, h.out0, &buf[ni]);
    if (s == GS_OK && h.bias) s = typed_buf_create(B, op, ni + 1, h.bias, &bbuf);
    if (s != GS_OK) {
        note(r, "buffers: %s", gs_ctx_errmsg(B->ctx));
        goto error;
    }
    gs_karg args[64];
    int na = 0;
    for (int t = 0; t <= ni; t++) args[na++] = (gs_karg){.kind = GS_KARG_BUF, .buf = buf[t]};
    if (ks.desc.op.has_bias) args[na++] = (gs_karg){.kind = GS_KARG_BUF, .buf = bbuf};
    na = gs_kernel_scalar_args(&r->form, args, na);
    if (ks.ws_bytes) { /* split-K's workspace, zeroed */
        s = gs_cuda_buf_create(B->ctx, B->cu, (size_t)ks.ws_bytes, NULL, &wsbuf);
        if (s != GS_OK) {
            note(r, "workspace: %s", gs_ctx_errmsg(B->ctx));
            goto error;
        }
        args[na++] = (gs_karg){.kind = GS_KARG_BUF, .buf = wsbuf};
    }
    /* warm-up, checked */
    s = gs_cuda_launch(B->ctx, B->cu, mod, args, na, (size_t)ks.grid, (size_t)ks.block, NULL);
    if (s == GS_OK) s = typed_buf_read(B, op, ni, buf[ni], h.y);
    if (s != GS_OK) {
        note(r, "warm-up: %s", gs_ctx_errmsg(B->ctx));
        goto error;
    }
    ch_launch l = {B->ctx, B->cu, mod, args, na, (size_t)ks.grid, (size_t)ks.block};
    int st = ch_time_median(ch_launch_timed, &l, B->o.min_runs, B->o.max_runs, B->o.target_ms, &r->ours_ms,
                            &r->ours_runs);
    if (st != 0) {
        note(r, "timing: %s", gs_ctx_errmsg(B->ctx));
        goto error;
    }
    if (ch_blas_supports(op) && B->blas) blas_row(B, r, buf, &h);
    else check_interpreter(B, r, &h);
    goto done;
error:
    snprintf(r->check, sizeof r->check, "ERROR");
    /* a faulting kernel poisons the context: every later call fails */
    if (CH.driver && CH.CtxSynchronize() != 0) B->lost = true;
done:
    gs_cuda_buf_free(wsbuf);
    for (int t = 0; t < GS_MAX_TENSORS; t++) gs_cuda_buf_free(buf[t]);
    gs_cuda_buf_free(bbuf);
    gs_cuda_unload(mod);
    gs_nvrtc_out_free(&nv);
    gs_kernel_src_free(&ks);
    host_free(&h);
    free(rep);
    gs_result_destroy(res);
}

/* ---- --self-test: the host half of a device run, without a device -----------------------------------
 * The kernel's output is simulated by the interpreter; the checks must pass
 * it and must fail it once corrupted (a wrong value at the first output,
 * which every sampled check includes; a NaN at the last, which only the
 * whole-output scan sees). gemm/bgemm/gemv also go through ch_blas_run on
 * host memory when cuBLAS is the test double (tests/fake_cublas.c). Times
 * are synthetic (1 ms ours, 0.5 ms cuBLAS) and say so: they exercise the
 * summary's arithmetic, nothing else. */
/* The interpreter simulates the kernel over the whole operator: small ones only. */
#define SELF_TEST_MAX_ITERS (1LL << 24)

static const char *sub_check(bench *B, const row *r, const host_data *h, int64_t iters, int samples) {
    row t = *r;
    t.note[0] = '\0';
    int64_t ci = B->o.check_iters;
    int sn = B->o.samples;
    B->o.check_iters = iters;
    B->o.samples = samples;
    check_interpreter(B, &t, h);
    B->o.check_iters = ci;
    B->o.samples = sn;
    return !strcmp(t.check, "PASS") ? "PASS" : !strcmp(t.check, "FAIL") ? "FAIL" : "other";
}

static void selftest_row(bench *B, row *r) {
    const gs_op *op = r->op;
    gs_result *res = NULL;
    host_data h;
    char why[200] = "";
    if (construct_row(B, r, &res) != GS_OK) {
        snprintf(r->check, sizeof r->check, "ERROR");
        note(r, "construct: %s", gs_ctx_errmsg(B->ctx));
        return;
    }
    set_pick(r, res, 0);
    gs_result_destroy(res);
    double iters = 1;
    for (int a = 0; a < op->naxes; a++) iters *= (double)op->axes[a].extent;
    if (iters > (double)SELF_TEST_MAX_ITERS) {
        note(r, "too large for the self-test (%.3g iterations; limit %.3g)", iters, (double)SELF_TEST_MAX_ITERS);
        return;
    }
    uint64_t seed = gs_hash_bytes(gs_op_spec(op), strlen(gs_op_spec(op)), 1);
    if (!host_make(op, seed, B->o.host_gib * (double)(1 << 30), &h, why, sizeof why)) {
        snprintf(r->check, sizeof r->check, "ERROR");
        note(r, "%s", why);
        return;
    }
    int ni = op->ninputs;
    int64_t no = h.n[ni];
    memcpy(h.y, h.out0, (size_t)no * sizeof(float));
    int bad = 0;
    if (gs_op_reference(B->ctx, op, (const float *const *)h.in, h.bias, h.y) != GS_OK) {
        note(r, "reference: %s", gs_ctx_errmsg(B->ctx));
        bad++;
    }
    {   /* the kernel's output goes through its type's storage, as a device buffer would */
        void *p = typed_pack((gs_dtype)op->dtype_out, h.y, no);
        if (p) gs_dtype_unpack((gs_dtype)op->dtype_out, p, h.y, no), free(p);
        else note(r, "out of host memory"), bad++;
    }
    const int64_t all = INT64_MAX;
    struct {
        const char *what;
        int64_t iters;
        int samples;
        const char *want;
    } cases[] = {{"full", all, 0, "PASS"}, {"sampled", 0, 64, "PASS"}};
    for (size_t i = 0; i < 2 && !bad; i++) {
        const char *got = sub_check(B, r, &h, cases[i].iters, cases[i].samples);
        if (strcmp(got, cases[i].want)) note(r, "%s check of the exact output: %s", cases[i].what, got), bad++;
    }
    /* a wrong value at the first output point (spatial point 0) */
    int64_t pt[GS_MAX_AXES] = {0};
    int64_t o0 = gs_tensor_offset(gs_op_out(op), pt, op->naxes);
    float keep = h.y[o0];
    h.y[o0] = keep + 1.0f + 2.0f * fabsf(keep);
    for (size_t i = 0; i < 2 && !bad; i++)
        if (strcmp(sub_check(B, r, &h, cases[i].iters, cases[i].samples), "FAIL"))
            note(r, "%s check missed a wrong value", cases[i].what), bad++;
    h.y[o0] = keep;
    /* a NaN at the last element: an unwritten output */
    keep = h.y[no - 1];
    h.y[no - 1] = NAN;
    if (!bad && strcmp(sub_check(B, r, &h, 0, 1), "FAIL")) note(r, "sampled check missed a NaN"), bad++;
    if (!bad && strcmp(sub_check(B, r, &h, 0, 0), "FAIL")) note(r, "unchecked output with a NaN not failed"), bad++;
    h.y[no - 1] = keep;
    r->ours_ms = 1.0;
    snprintf(r->check, sizeof r->check, "%s", bad ? "FAIL" : "PASS");
    snprintf(r->ref, sizeof r->ref, "self-test");
    if (!bad && ch_blas_supports(op) && B->blas && CH.blas_fake) {
        /* the fake's "device memory" is host memory in the buffers' types,
         * packed by the same typed_pack the device buffers are made with */
        float *ref = malloc((size_t)no * sizeof *ref);
        void *pa = typed_pack(gs_op_buffer_dtype(op, 0), h.in[0], h.n[0]);
        void *pb = typed_pack(gs_op_buffer_dtype(op, 1), h.in[1], h.n[1]);
        void *po = typed_pack(gs_op_buffer_dtype(op, ni), h.out0, no);
        if (ref && pa && pb && po) {
            int st = ch_blas_run(B->blas, op, (uint64_t)(uintptr_t)pa, (uint64_t)(uintptr_t)pb, (uint64_t)(uintptr_t)po);
            if (st == 0) gs_dtype_unpack(gs_op_buffer_dtype(op, ni), po, ref, no);
            if (st != 0) {
                snprintf(r->check, sizeof r->check, "FAIL");
                note(r, "ch_blas_run: status %d", st);
            } else {
                blas_finish(r, &h, ref);
                r->blas_ms = 0.5;
            }
        }
        free(ref);
        free(pa);
        free(pb);
        free(po);
    }
    host_free(&h);
}

/* ---- output ------------------------------------------------------------------------------------------ */
static double ratio(double a, double b) { return isfinite(a) && isfinite(b) && a > 0 && b > 0 ? a / b : NAN; }

static const char *fmt_num(char *buf, size_t n, const char *fmt, double v) {
    if (!isfinite(v)) snprintf(buf, n, "-");
    else snprintf(buf, n, fmt, v);
    return buf;
}

static double op_bytes(const gs_op *op) {
    double b = 0;
    for (int i = 0; i < gs_op_num_buffers(op); i++) b += (double)gs_op_buffer_bytes(op, i);
    if (op->epi.beta != 0.0f) b += (double)gs_op_buffer_bytes(op, op->ninputs);
    return b;
}

static void fmt_rate(char *buf, size_t n, const row *r) {
    if (!isfinite(r->ours_ms)) snprintf(buf, n, "-");
    else if (cls_compute(r->cls)) snprintf(buf, n, "%.2f TF/s", gs_op_flops(r->op) / (r->ours_ms * 1e-3) / 1e12);
    else snprintf(buf, n, "%.0f GB/s", op_bytes(r->op) / (r->ours_ms * 1e-3) / 1e9);
}

static void print_header(void) {
    printf("%4s  %-8s %-7s %9s %9s %10s %9s %8s %8s %11s  %-16s %4s  %-20s  %s\n", "#", "class", "type", "pred ms", "ours ms",
           "cuBLAS ms", "torch ms", "ours/cB", "ours/pt", "rate", "check", "regs", "name", "spec");
}

static void print_row(const bench *B, int i) {
    const row *r = &B->r[i];
    char p[32], o[32], c[32], t[32], rc[32], rt[32], rate[32], chk[40], rg[16];
    fmt_num(c, sizeof c, "%.4f", r->blas_ms);
    if (r->blas_no_epi && isfinite(r->blas_ms)) strcat(c, "*");
    if (!strcmp(r->check, "PASS") || !strcmp(r->check, "FAIL")) snprintf(chk, sizeof chk, "%s %s", r->check, r->ref);
    else snprintf(chk, sizeof chk, "%s", r->check);
    if (r->regs >= 0) snprintf(rg, sizeof rg, "%d%s", r->regs, r->spill > 0 ? "!" : "");
    else snprintf(rg, sizeof rg, "-");
    fmt_rate(rate, sizeof rate, r);
    /* the name where the spec first appears, cut to its column (the CSV has it whole) */
    const entry *e = &B->e[r->first_entry];
    char name[21];
    snprintf(name, sizeof name, "%.20s", e->name[0] ? e->name : "-");
    if (strlen(e->name) >= sizeof name) memcpy(name + sizeof name - 3, "..", 3);
    char ty[16];
    printf("%4d  %-8s %-7s %9s %9s %10s %9s %8s %8s %11s  %-16s %4s  %-20s  %s\n", i + 1, cls_name[r->cls],
           type_str(r->op, ty, sizeof ty),
           fmt_num(p, sizeof p, "%.4f", r->pred_ms), fmt_num(o, sizeof o, "%.4f", r->ours_ms), c,
           fmt_num(t, sizeof t, "%.4f", r->torch_ms), fmt_num(rc, sizeof rc, "%.2f", ratio(r->ours_ms, r->blas_ms)),
           fmt_num(rt, sizeof rt, "%.2f", ratio(r->ours_ms, r->torch_ms)), rate, chk, rg, name, e->written);
    if (r->note[0]) printf("      note: %s\n", r->note);
    fflush(stdout);
}

typedef struct gm {
    double sum;
    int n;
} gm;
static void gm_add(gm *g, double x) {
    if (isfinite(x) && x > 0) {
        g->sum += log(x);
        g->n++;
    }
}
static double gm_val(const gm *g) { return g->n ? exp(g->sum / g->n) : NAN; }

static json_t *jnum(double v) { return isfinite(v) ? json_real(v) : json_null(); }

static void csv_str(FILE *f, const char *x) {
    fputc('"', f);
    for (; x && *x; x++) {
        if (*x == '"') fputc('"', f);
        fputc(*x, f);
    }
    fputc('"', f);
}
static void csv_num(FILE *f, const char *fmt, double v) {
    if (isfinite(v)) fprintf(f, fmt, v);
}

static int mkdir_p(const char *dir) {
    char tmp[1024];
    snprintf(tmp, sizeof tmp, "%s", dir);
    for (char *p = tmp + 1; *p; p++) {
        if (*p != '/') continue;
        *p = '\0';
        if (mkdir(tmp, 0777) && errno != EEXIST) return -1;
        *p = '/';
    }
    return mkdir(tmp, 0777) && errno != EEXIST ? -1 : 0;
}

static int write_csv(const bench *B, const char *path) {
    FILE *f = fopen(path, "w");
    if (!f) return -1;
    fprintf(f, "index,class,dtype,out_dtype,math,list,name,spec,canonical,uses,etir,predicted_ms,ours_ms,ours_runs,cublas_ms,cublas_runs,"
               "cublas_without_epilogue,torch_ms,torch_status,ours_over_cublas,ours_over_torch,tflops,gbs,check,"
               "reference,normwise,tolerance,regs,spill_bytes,construct_ms,compile_ms,arch,binary,note\n");
    for (int i = 0; i < B->nr; i++) {
        const row *r = &B->r[i];
        if (!r->sel) continue;
        const entry *e = &B->e[r->first_entry];
        double s = r->ours_ms * 1e-3;
        fprintf(f, "%d,%s,%s,%s,%s,", i + 1, cls_name[r->cls], gs_dtype_name((gs_dtype)r->op->dtype_in),
                gs_dtype_name((gs_dtype)r->op->dtype_out), r->op->math == GS_MATH_TF32 ? "tf32" : "f32");
        csv_str(f, e->list);
        fputc(',', f);
        csv_str(f, e->name);
        fputc(',', f);
        csv_str(f, e->written);
        fputc(',', f);
        csv_str(f, gs_op_spec(r->op));
        fprintf(f, ",%d,", r->uses);
        csv_str(f, r->desc);
        fputc(',', f);
        csv_num(f, "%.6f", r->pred_ms);
        fputc(',', f);
        csv_num(f, "%.6f", r->ours_ms);
        fprintf(f, ",%d,", r->ours_runs);
        csv_num(f, "%.6f", r->blas_ms);
        fprintf(f, ",%d,%d,", r->blas_runs, r->blas_no_epi ? 1 : 0);
        csv_num(f, "%.6f", r->torch_ms);
        fprintf(f, ",%s,", r->torch_status);
        csv_num(f, "%.4f", ratio(r->ours_ms, r->blas_ms));
        fputc(',', f);
        csv_num(f, "%.4f", ratio(r->ours_ms, r->torch_ms));
        fputc(',', f);
        csv_num(f, "%.4f", gs_op_flops(r->op) / s / 1e12);
        fputc(',', f);
        csv_num(f, "%.2f", op_bytes(r->op) / s / 1e9);
        fprintf(f, ",%s,%s,", r->check, r->ref);
        csv_num(f, "%.3e", r->normwise);
        fputc(',', f);
        csv_num(f, "%.3e", r->tol);
        fprintf(f, ",%d,%lld,", r->regs, (long long)r->spill);
        csv_num(f, "%.3f", r->construct_ms);
        fputc(',', f);
        csv_num(f, "%.1f", r->compile_ms);
        fprintf(f, ",%d,%s,", B->arch, B->cubin ? "cubin" : B->nvrtc ? "ptx" : "none");
        csv_str(f, r->note);
        fputc('\n', f);
    }
    return fclose(f) ? -1 : 0;
}

/* Summary: geomeans, model totals, counts; also builds the JSON. */
static json_t *summarise(const bench *B, double elapsed_s) {
    gm blas[CLS_N + 1], torch[CLS_N + 1];
    memset(blas, 0, sizeof blas);
    memset(torch, 0, sizeof torch);
    int counts[5] = {0}; /* PASS FAIL unchecked ERROR other */
    int nsel = 0, built = 0;
    for (int i = 0; i < B->nr; i++) {
        const row *r = &B->r[i];
        if (!r->sel) continue;
        nsel++;
        built += r->built;
        double rb = ratio(r->ours_ms, r->blas_ms), rt = ratio(r->ours_ms, r->torch_ms);
        gm_add(&blas[r->cls], rb);
        gm_add(&blas[CLS_N], rb);
        gm_add(&torch[r->cls], rt);
        gm_add(&torch[CLS_N], rt);
        int k = !strcmp(r->check, "PASS") ? 0 : !strcmp(r->check, "FAIL") ? 1 : !strcmp(r->check, "unchecked") ? 2
                : !strcmp(r->check, "ERROR") ? 3 : 4;
        counts[k]++;
    }
    json_t *js = json_object();
    json_object_set_new(js, "device", json_string(B->o.dry ? "none (dry run)" : B->device));
    json_object_set_new(js, "self_test", json_boolean(B->o.self_test));
    json_object_set_new(js, "profile", json_string(gs_hw_name(B->hw)));
    json_object_set_new(js, "arch", json_integer(B->arch));
    json_object_set_new(js, "binary", json_string(B->cubin ? "cubin" : B->nvrtc ? "ptx" : "none"));
    json_object_set_new(js, "dry_run", json_boolean(B->o.dry));
    json_object_set_new(js, "quick", json_boolean(B->o.quick));
    json_object_set_new(js, "refine", json_integer(B->o.refine));
    json_object_set_new(js, "cublas_math", json_string(B->o.math == CUBLAS_PEDANTIC_MATH ? "pedantic" : "default"));
    json_object_set_new(js, "cublas", json_string(B->blas_note));
    json_object_set_new(js, "torch", json_string(B->torch_desc));
    json_object_set_new(js, "operators", json_integer(nsel));
    json_object_set_new(js, "built", json_integer(built));
    json_t *jc = json_object();
    static const char *cn[5] = {"pass", "fail", "unchecked", "error", "none"};
    for (int k = 0; k < 5; k++) json_object_set_new(jc, cn[k], json_integer(counts[k]));
    json_object_set_new(js, "checks", jc);

    printf("\ngeometric means of time ratios (ours ms / other ms: > 1 means gensor is slower)\n");
    printf("%-12s %5s %12s %5s %12s\n", "class", "n", "ours/cuBLAS", "n", "ours/PyTorch");
    json_t *jg = json_object();
    for (int c = 0; c <= CLS_N; c++) {
        char a[32], b[32];
        const char *name = c < CLS_N ? cls_name[c] : "all";
        bool any = c == CLS_N;
        for (int i = 0; i < B->nr && !any; i++) any = B->r[i].sel && B->r[i].cls == c;
        if (!any) continue;
        printf("%-12s %5d %12s %5d %12s\n", name, blas[c].n, fmt_num(a, sizeof a, "%.3f", gm_val(&blas[c])),
               torch[c].n, fmt_num(b, sizeof b, "%.3f", gm_val(&torch[c])));
        json_object_set_new(jg, name,
                            json_pack("{s:o,s:i,s:o,s:i}", "ours_over_cublas", jnum(gm_val(&blas[c])), "n_cublas",
                                      blas[c].n, "ours_over_torch", jnum(gm_val(&torch[c])), "n_torch", torch[c].n));
    }
    /* per type, when the operators have more than one: "all:f16", "all:tf32", ... */
    char types[8][16];
    int nt = 0;
    for (int i = 0; i < B->nr; i++) {
        char t[16];
        if (!B->r[i].sel) continue;
        type_str(B->r[i].op, t, sizeof t);
        int k = 0;
        while (k < nt && strcmp(types[k], t)) k++;
        if (k == nt && nt < 8) snprintf(types[nt++], sizeof types[0], "%s", t);
    }
    for (int k = 0; k < nt && nt > 1; k++) {
        gm gb = {0, 0}, gt = {0, 0};
        for (int i = 0; i < B->nr; i++) {
            char t[16];
            const row *r = &B->r[i];
            if (!r->sel || strcmp(type_str(r->op, t, sizeof t), types[k])) continue;
            gm_add(&gb, ratio(r->ours_ms, r->blas_ms));
            gm_add(&gt, ratio(r->ours_ms, r->torch_ms));
        }
        char name[40], a[32], b[32];
        snprintf(name, sizeof name, "all:%.15s", types[k]);
        printf("%-12s %5d %12s %5d %12s\n", name, gb.n, fmt_num(a, sizeof a, "%.3f", gm_val(&gb)), gt.n,
               fmt_num(b, sizeof b, "%.3f", gm_val(&gt)));
        json_object_set_new(jg, name,
                            json_pack("{s:o,s:i,s:o,s:i}", "ours_over_cublas", jnum(gm_val(&gb)), "n_cublas", gb.n,
                                      "ours_over_torch", jnum(gm_val(&gt)), "n_torch", gt.n));
    }
    json_object_set_new(js, "geomean", jg);

    printf("\nper list: sum over its operators of time x count (ms)\n");
    printf("%-24s %5s %7s %12s %12s %8s\n", "list", "ops", "layers", "ours ms", "torch ms", "ours/pt");
    json_t *jm = json_array();
    for (int l = 0; l < B->nl; l++) {
        const list_info *L = &B->lists[l];
        double ours = 0, pt = 0;
        int64_t layers = 0;
        int miss_o = 0, miss_t = 0;
        for (int k = L->first; k < L->first + L->n; k++) {
            const row *r = &B->r[B->e[k].row];
            layers += B->e[k].count;
            if (isfinite(r->ours_ms)) ours += r->ours_ms * (double)B->e[k].count;
            else miss_o++;
            if (isfinite(r->torch_ms)) pt += r->torch_ms * (double)B->e[k].count;
            else miss_t++;
        }
        char a[48], b[48], c[32];
        /* a total is only a total when every operator has a time */
        if (miss_o == L->n) snprintf(a, sizeof a, "-");
        else if (miss_o) snprintf(a, sizeof a, "%d missing", miss_o);
        else snprintf(a, sizeof a, "%.4f", ours);
        if (miss_t == L->n) snprintf(b, sizeof b, "-");
        else if (miss_t) snprintf(b, sizeof b, "%d missing", miss_t);
        else snprintf(b, sizeof b, "%.4f", pt);
        fmt_num(c, sizeof c, "%.3f", miss_o || miss_t ? NAN : ratio(ours, pt));
        printf("%-24s %5d %7lld %12s %12s %8s\n", L->name, L->n, (long long)layers, a, b, c);
        json_array_append_new(jm, json_pack("{s:s,s:i,s:I,s:o,s:o,s:i,s:i}", "name", L->name, "ops", L->n, "layers",
                                            (json_int_t)layers, "ours_ms", jnum(miss_o ? NAN : ours), "torch_ms",
                                            jnum(miss_t ? NAN : pt), "ours_missing", miss_o, "torch_missing",
                                            miss_t));
    }
    json_object_set_new(js, "lists", jm);
    json_object_set_new(js, "elapsed_s", json_real(elapsed_s));
    printf("\nchecks: %d PASS, %d FAIL, %d unchecked, %d ERROR, %d not run; %d of %d kernels built\n", counts[0],
           counts[1], counts[2], counts[3], counts[4], built, nsel);
    return js;
}

/* ---- main ---------------------------------------------------------------------------------------------- */
static const char *usage =
    "usage: bench_gpu [--hw auto|NAME|FILE] [--refine K] [--refine-ms MS] [--quick] [--out DIR]\n"
    "                 [--torch-csv FILE] [--torch-note TEXT] [--check-iters N] [--samples N]\n"
    "                 [--runs MIN MAX] [--target-ms MS] [--host-gib G] [--cublas-math default|pedantic]\n"
    "                 [--dry-run [--arch SM]] [--list-specs] [--probe] [--self-test] [--tf32] LIST.json ...\n"
    "LIST.json: a suite or model list (experiments/suites/, experiments/models/).\n";

static bool parse_int(const char *s, long lo, long hi, long *v) {
    char *end;
    errno = 0;
    long x = strtol(s, &end, 10);
    if (errno || end == s || *end || x < lo || x > hi) return false;
    *v = x;
    return true;
}

static bool parse_dbl(const char *s, double lo, double hi, double *v) {
    char *end;
    double x = strtod(s, &end);
    if (end == s || *end || !(x >= lo && x <= hi)) return false;
    *v = x;
    return true;
}

static int parse_args(int argc, char **argv, opts *o) {
    *o = (opts){.hw = "auto", .out_dir = "build/bench-gpu", .refine = 0, .refine_ms = GS_REFINE_DEFAULT_MS,
                .samples = 2048, .min_runs = 5, .max_runs = 30, .target_ms = 40, .host_gib = 32,
                .check_iters = 1LL << 25, .math = CUBLAS_DEFAULT_MATH};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        bool more = i + 1 < argc;
        long v;
        double d;
#define NEXT_INT(lo, hi, field)                                                                                    \
    do {                                                                                                           \
        if (!more || !parse_int(argv[++i], lo, hi, &v)) goto bad;                                                  \
        o->field = v;                                                                                              \
    } while (0)
        if (!strcmp(a, "--hw") && more) o->hw = argv[++i];
        else if (!strcmp(a, "--out") && more) o->out_dir = argv[++i];
        else if (!strcmp(a, "--torch-csv") && more) o->torch_csv = argv[++i];
        else if (!strcmp(a, "--torch-note") && more) o->torch_note = *argv[++i] ? argv[i] : NULL;
        else if (!strcmp(a, "--refine")) NEXT_INT(0, GS_MAX_TOP, refine);
        else if (!strcmp(a, "--arch")) NEXT_INT(10, 200, arch);
        else if (!strcmp(a, "--samples")) NEXT_INT(0, 1 << 20, samples);
        else if (!strcmp(a, "--check-iters")) NEXT_INT(0, LONG_MAX, check_iters);
        else if (!strcmp(a, "--runs")) {
            NEXT_INT(1, 1000, min_runs);
            NEXT_INT(1, 1000, max_runs);
            if (o->max_runs < o->min_runs) goto bad;
        } else if (!strcmp(a, "--refine-ms") || !strcmp(a, "--target-ms") || !strcmp(a, "--host-gib")) {
            if (!more || !parse_dbl(argv[++i], 0, 1e6, &d)) goto bad;
            if (a[2] == 'r') o->refine_ms = d;
            else if (a[2] == 't') o->target_ms = d;
            else o->host_gib = d;
        } else if (!strcmp(a, "--cublas-math") && more) {
            const char *m = argv[++i];
            if (!strcmp(m, "default")) o->math = CUBLAS_DEFAULT_MATH;
            else if (!strcmp(m, "pedantic")) o->math = CUBLAS_PEDANTIC_MATH;
            else goto bad;
        } else if (!strcmp(a, "--quick")) o->quick = true;
        else if (!strcmp(a, "--dry-run")) o->dry = true;
        else if (!strcmp(a, "--list-specs")) o->list_specs = true;
        else if (!strcmp(a, "--probe")) o->probe = true;
        else if (!strcmp(a, "--self-test")) o->self_test = o->dry = true;
        else if (!strcmp(a, "--tf32")) o->tf32 = true;
        else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            fputs(usage, stdout);
            exit(0);
        } else if (a[0] != '-' && o->nlists < MAX_LISTS) o->lists[o->nlists++] = a;
        else goto bad;
        continue;
#undef NEXT_INT
    bad:
        fprintf(stderr, "bench_gpu: bad option or value near '%s'\n%s", a, usage);
        return 2;
    }
    if (!o->nlists && !o->probe) {
        fprintf(stderr, "bench_gpu: no list given\n%s", usage);
        return 2;
    }
    return 0;
}

/* "no CUDA device: measurement-free mode (why)" -> "(why)". */
static void skip_line(const char *msg) {
    const char *p = strstr(msg, "measurement-free mode ");
    if (p) printf("bench-gpu: SKIPPED: no CUDA device %s\n", p + strlen("measurement-free mode "));
    else printf("bench-gpu: SKIPPED: no CUDA device (%s)\n", msg);
    fflush(stdout);
}

/* The built-in profile nearest to sm_<arch> (same major first). */
static const gs_hw *nearest_builtin(int arch) {
    const gs_hw *best = NULL;
    int bk = 1 << 30;
    for (int i = 0; i < gs_hw_builtin_count(); i++) {
        const gs_hw *h = gs_hw_builtin(i);
        int d = h->sm > arch ? h->sm - arch : arch - h->sm, k = (h->sm / 10 == arch / 10 ? 0 : 1000) + d;
        if (k < bk) {
            bk = k;
            best = h;
        }
    }
    return best;
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Profile, arch and the libraries. 0, or the exit status to end with. */
static int setup(bench *B) {
    opts *o = &B->o;
    gs_hw dev;
    bool automatic = !strcmp(o->hw, "auto");
    if (!o->dry) {
        gs_status s = gs_cuda_open(B->ctx, 0, &B->cu);
        if (s == GS_ERR_CUDA_MISSING) {
            skip_line(gs_ctx_errmsg(B->ctx));
            return o->probe ? 3 : -1; /* -1: exit 0 */
        }
        if (s == GS_OK) s = gs_cuda_query_profile(B->ctx, B->cu, &dev);
        if (s != GS_OK) {
            fprintf(stderr, "bench_gpu: CUDA device: %s\n", gs_ctx_errmsg(B->ctx));
            return 1;
        }
        snprintf(B->device, sizeof B->device, "%s (sm_%d, %d SMs)", gs_cuda_device_name(B->cu), dev.sm, dev.num_sms);
        if (o->probe) {
            printf("bench-gpu: device %s\n", B->device);
            return -1;
        }
    }
    if (automatic && !o->dry) {
        B->hw = malloc(sizeof *B->hw);
        if (!B->hw) return 1;
        *B->hw = dev;
    } else if (automatic) {
        int want = o->arch ? o->arch : 90;
        const gs_hw *b = nearest_builtin(want);
        if (gs_hw_load(B->ctx, b->name, &B->hw) != GS_OK) return 1;
        printf("dry run: --hw auto has no device to ask; using the built-in profile %s (sm_%d), nearest to sm_%d\n",
               b->name, b->sm, want);
    } else if (gs_hw_load(B->ctx, o->hw, &B->hw) != GS_OK) {
        fprintf(stderr, "bench_gpu: --hw %s: %s\n", o->hw, gs_ctx_errmsg(B->ctx));
        return 2;
    }
    /* what to compile for */
    int sm = o->dry ? (o->arch ? o->arch : gs_hw_sm(B->hw)) : dev.sm;
    B->arch = ch_pick_arch(B->ctx, sm, &B->cubin);
    if (!B->arch && o->dry) {
        B->arch = gs_nvrtc_nearest_arch(B->ctx, sm);
        B->cubin = B->arch != 0;
    }
    B->nvrtc = B->arch != 0;
    if (!B->nvrtc) {
        if (!o->dry) {
            fprintf(stderr, "bench_gpu: NVRTC cannot compile for sm_%d: %s\n", sm, gs_ctx_errmsg(B->ctx));
            return 1;
        }
        B->arch = sm;
        printf("dry run: NVRTC unavailable (%s): kernels are emitted, not compiled\n", gs_ctx_errmsg(B->ctx));
    } else if (B->arch != sm) {
        printf("note: NVRTC has no sm_%d; compiling %s for sm_%d\n", sm, B->cubin ? "cubins" : "PTX", B->arch);
    }
    /* The driver for cuBLAS's events and for noticing a lost context. */
    char why[512] = "";
    if (!o->dry && !ch_load_driver(why, sizeof why))
        fprintf(stderr, "bench_gpu: warning: %s: no cuBLAS, and a faulting kernel is not told from a lost context\n",
                why);
    /* cuBLAS: resolved in both modes, called only on a device */
    if (!ch_load_cublas(why, sizeof why)) {
        snprintf(B->blas_note, sizeof B->blas_note, "unavailable: %s", why);
    } else if (o->self_test) {
        if (!CH.blas_fake || ch_blas_create(o->math, &B->blas) != 0)
            snprintf(B->blas_note, sizeof B->blas_note, "%s: not the test double (GS_CUBLAS_LIB), not called",
                     CH.blas_path);
        else snprintf(B->blas_note, sizeof B->blas_note, "test double %s on host memory", CH.blas_path);
    } else if (o->dry) {
        snprintf(B->blas_note, sizeof B->blas_note, "%s (symbols resolved; not called in a dry run)", CH.blas_path);
    } else if (CH.blas_fake) {
        snprintf(B->blas_note, sizeof B->blas_note, "unavailable: %s is the test double (unset GS_CUBLAS_LIB)",
                 CH.blas_path);
    } else if (!CH.driver) {
        snprintf(B->blas_note, sizeof B->blas_note, "unavailable: the driver did not load for it");
    } else {
        int st = ch_blas_create(o->math, &B->blas);
        int ver = 0;
        if (st == 0) CH.GetVersion(B->blas, &ver);
        if (st != 0) snprintf(B->blas_note, sizeof B->blas_note, "unavailable: cublasCreate/SetMathMode status %d", st);
        else
            snprintf(B->blas_note, sizeof B->blas_note, "%s, version %d, %s math (FP32, no TF32)", CH.blas_path, ver,
                     o->math == CUBLAS_PEDANTIC_MATH ? "pedantic" : "default");
    }
    return 0;
}

int main(int argc, char **argv) {
    gsl_set_error_handler_off();
    static bench Bs;
    bench *B = &Bs;
    int rc = parse_args(argc, argv, &B->o);
    if (rc) return rc;
    B->ctx = gs_ctx_create();
    B->e = calloc(MAX_ENTRIES, sizeof *B->e);
    B->r = calloc(MAX_ROWS, sizeof *B->r);
    if (!B->ctx || !B->e || !B->r) return 1;
    for (int i = 0; i < B->o.nlists && rc == 0; i++) rc = load_list(B, B->o.lists[i]);
    if (rc) return rc;
    if (B->o.quick) select_quick(B);
    if (B->o.list_specs) {
        list_specs(B);
        return 0;
    }
    double t0 = now_s();
    rc = setup(B);
    if (rc) return rc < 0 ? 0 : rc;

    if (B->o.torch_csv) {
        int j = load_torch(B, B->o.torch_csv);
        if (j < 0) return 2;
        if (!B->torch_desc[0]) snprintf(B->torch_desc, sizeof B->torch_desc, "PyTorch");
        char tail[64];
        snprintf(tail, sizeof tail, " (%d operators joined)", j);
        strncat(B->torch_desc, tail, sizeof B->torch_desc - strlen(B->torch_desc) - 1);
    } else {
        snprintf(B->torch_desc, sizeof B->torch_desc, "n/a%s%s%s", B->o.torch_note ? " (" : "",
                 B->o.torch_note ? B->o.torch_note : "", B->o.torch_note ? ")" : "");
    }
    int nsel = 0;
    for (int i = 0; i < B->nr; i++) nsel += B->r[i].sel;
    if (B->o.self_test)
        printf("SELF-TEST: no device, no kernel runs; outputs come from the interpreter and the times are synthetic "
               "(1 ms ours, 0.5 ms cuBLAS)\n");
    printf("device    %s\n", B->o.dry ? "none: dry run (no kernel is run, no time is taken)" : B->device);
    printf("profile   %s (sm_%d)%s; %s for sm_%d; %s\n", gs_hw_name(B->hw), gs_hw_sm(B->hw),
           strcmp(B->o.hw, "auto") ? "" : " [--hw auto]", B->cubin ? "cubins" : B->nvrtc ? "PTX" : "no NVRTC",
           B->arch, B->o.refine > 1 ? "best measured of the model's top-K (--refine)" : "the model's top-1");
    printf("cuBLAS    %s\n", B->blas_note);
    printf("PyTorch   %s\n", B->torch_desc);
    printf("operators %d distinct of %d entries in %d list%s%s; timing: warm-up checked, then %d..%d runs within "
           "%.0f ms, median\n\n",
           nsel, B->ne, B->nl, B->nl == 1 ? "" : "s", B->o.quick ? " (--quick: one per class)" : "", B->o.min_runs,
           B->o.max_runs, B->o.target_ms);
    print_header();
    int failures = 0;
    for (int i = 0; i < B->nr; i++) {
        row *r = &B->r[i];
        if (!r->sel) continue;
        if (B->o.self_test) selftest_row(B, r);
        else if (B->o.dry) dry_row(B, r);
        else if (B->lost) {
            snprintf(r->check, sizeof r->check, "ERROR");
            note(r, "not run: the CUDA context was lost earlier");
        } else device_row(B, r);
        failures += !strcmp(r->check, "FAIL") || !strcmp(r->check, "ERROR") || r->failed;
        print_row(B, i);
    }
    printf("\n(ratios: ours ms / other ms, > 1 means gensor is slower; '*' cuBLAS timed without the gemm's bias/ReLU "
           "epilogue, which cuBLAS lacks;\n check: PASS/FAIL against cuBLAS (normwise <= 10x the verify tolerance) or "
           "the IR interpreter, interp~N at N sampled outputs;\n regs: ptxas registers, '!' spills; rate: TFLOP/s for "
           "gemm, bgemm, conv2d, else GB/s of compulsory traffic)\n");
    double elapsed = now_s() - t0;
    json_t *js = summarise(B, elapsed);
    printf("elapsed   %.1f s%s\n", elapsed,
           B->o.self_test ? " (self-test: construction and host checks; no device work)"
           : B->o.dry     ? " (construction, emission and NVRTC; no device work)"
                          : "");
    char path[1100];
    if (mkdir_p(B->o.out_dir) != 0) {
        fprintf(stderr, "bench_gpu: cannot create %s: %s\n", B->o.out_dir, strerror(errno));
        failures++;
    } else {
        snprintf(path, sizeof path, "%s/results.csv", B->o.out_dir);
        if (write_csv(B, path) != 0) {
            fprintf(stderr, "bench_gpu: cannot write %s\n", path);
            failures++;
        } else printf("wrote     %s", path);
        snprintf(path, sizeof path, "%s/summary.json", B->o.out_dir);
        if (json_dump_file(js, path, JSON_INDENT(2) | JSON_SORT_KEYS) != 0) {
            fprintf(stderr, "bench_gpu: cannot write %s\n", path);
            failures++;
        } else printf(", %s\n", path);
    }
    json_decref(js);
    if (B->blas) CH.Destroy(B->blas);
    for (int i = 0; i < B->nr; i++) gs_op_destroy(B->r[i].op);
    free(B->r);
    free(B->e);
    gs_hw_destroy(B->hw);
    gs_cuda_close(B->cu);
    ch_unload();
    gs_ctx_destroy(B->ctx);
    return failures ? 1 : 0;
}
