/* refine.c — short on-device refinement: time the top-K candidates of a
 * construction for a bounded number of launches and keep the fastest median.
 *
 * Per candidate: emit, build (OpenCL) or compile with NVRTC and load (CUDA),
 * one warm-up launch that is not timed (PoCL finishes its JIT on the first
 * launch; the CUDA driver loads modules lazily), then timed launches with
 * profiling events. The budget (default GS_REFINE_DEFAULT_MS) covers the
 * timed launches of all candidates: each candidate gets what is left divided
 * by the candidates left, runs at least GS_REFINE_MIN_RUNS and at most
 * GS_REFINE_MAX_RUNS times. Statistics come from GSL: gsl_sort, then
 * gsl_stats_median_from_sorted_data, gsl_stats_sd and the quartiles; the
 * model's ranking is compared with the measured one by gsl_stats_spearman.
 *
 * The selection (gs_refine_select) is a pure function of the medians, so it
 * is tested on its own.
 *
 * Layering: refinement reads a gs_result's candidates (construct/construct.h);
 * nothing in construct/ knows about this file. */
#include "construct/construct.h"
#include "kernels/service/service.h"
#include "util/pcg.h"

#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

_Static_assert(GS_REFINE_MAX >= GS_MAX_TOP, "a report must hold every candidate of a result");

/* ---- pure pieces ------------------------------------------------------------ */
int gs_refine_select(const double *medians, int n) {
    if (!medians || n <= 0) return -1;
    int best = -1;
    for (int i = 0; i < n; i++) {
        double m = medians[i];
        if (!isfinite(m) || !(m > 0)) continue;
        if (best < 0 || m < medians[best]) best = i; /* strict: ties keep the lower index */
    }
    return best;
}

gs_status gs_refine_summarize(const double *samples, int n, double *median, double *sd, double *iqr) {
    if (!samples || n < 1) return GS_ERR_INVALID_ARG;
    double *x = malloc((size_t)n * sizeof *x);
    if (!x) return GS_ERR_NOMEM;
    memcpy(x, samples, (size_t)n * sizeof *x);
    gsl_sort(x, 1, (size_t)n);
    if (median) *median = gsl_stats_median_from_sorted_data(x, 1, (size_t)n);
    if (sd) *sd = n >= 2 ? gsl_stats_sd(x, 1, (size_t)n) : 0.0;
    if (iqr)
        *iqr = gsl_stats_quantile_from_sorted_data(x, 1, (size_t)n, 0.75) -
               gsl_stats_quantile_from_sorted_data(x, 1, (size_t)n, 0.25);
    free(x);
    return GS_OK;
}

static bool constant_series(const double *a, int n) {
    for (int i = 1; i < n; i++)
        if (a[i] != a[0]) return false;
    return true;
}

double gs_refine_spearman(const double *a, const double *b, int n) {
    if (!a || !b || n < 3 || constant_series(a, n) || constant_series(b, n)) return NAN;
    for (int i = 0; i < n; i++)
        if (!isfinite(a[i]) || !isfinite(b[i])) return NAN;
    double *work = malloc(2 * (size_t)n * sizeof *work);
    if (!work) return NAN;
    double rho = gsl_stats_spearman(a, 1, b, 1, (size_t)n, work);
    free(work);
    return rho;
}

/* ---- the measurement loop, shared by both runtimes -------------------------------- */
typedef gs_status (*launch_fn)(gs_ctx *ctx, void *st, double *elapsed_s);

/* Warm-up, then timed launches within share_s of wall time (at least
 * GS_REFINE_MIN_RUNS). Fills the candidate's statistics; *wall_s gets the
 * wall time of the timed launches. */
static gs_status measure(gs_ctx *ctx, launch_fn launch, void *st, double share_s, gs_refine_cand *c,
                         double *wall_s) {
    *wall_s = 0;
    double t0 = gs_now_s(), el = 0;
    gs_status s = launch(ctx, st, &el);
    c->warmup_s = gs_now_s() - t0;
    if (s != GS_OK) return s;
    double samples[GS_REFINE_MAX_RUNS];
    int n = 0;
    double start = gs_now_s();
    while (n < GS_REFINE_MAX_RUNS && (n < GS_REFINE_MIN_RUNS || gs_now_s() - start < share_s)) {
        s = launch(ctx, st, &el);
        if (s != GS_OK) break;
        samples[n++] = el;
    }
    *wall_s = gs_now_s() - start;
    if (s != GS_OK && n < GS_REFINE_MIN_RUNS) return s;
    c->runs = n;
    gs_status s2 = gs_refine_summarize(samples, n, &c->median_s, &c->sd_s, &c->iqr_s);
    if (s2 != GS_OK) return gs_err(ctx, s2, "refine: cannot summarise %d runs", n);
    c->min_s = c->max_s = samples[0];
    for (int i = 1; i < n; i++) {
        if (samples[i] < c->min_s) c->min_s = samples[i];
        if (samples[i] > c->max_s) c->max_s = samples[i];
    }
    return GS_OK;
}

/* ---- host data ------------------------------------------------------------------- */
typedef struct host_data {
    float *t[GS_MAX_TENSORS]; /* inputs, then the output */
    int64_t n[GS_MAX_TENSORS];
    float *bias;
    int64_t nbias;
} host_data;

static void host_free(host_data *h) {
    for (int i = 0; i < GS_MAX_TENSORS; i++) free(h->t[i]);
    free(h->bias);
    memset(h, 0, sizeof *h);
}

static gs_status host_make(gs_ctx *ctx, const gs_op *op, host_data *h) {
    memset(h, 0, sizeof *h);
    int64_t total = 0;
    for (int t = 0; t <= op->ninputs; t++) total += gs_tensor_elems(&op->tensors[t]);
    total += gs_op_bias_elems(op);
    if (total * 4 > GS_VERIFY_MAX_BYTES)
        return gs_err(ctx, GS_ERR_UNSUPPORTED, "refine: %s needs %.1f GiB of buffers (limit %.0f GiB)", op->spec,
                      total * 4.0 / (1 << 30), GS_VERIFY_MAX_BYTES / (double)(1 << 30));
    gs_pcg32 rng;
    gs_pcg32_seed(&rng, 1, 0x726566696e65ull);
    for (int t = 0; t <= op->ninputs; t++) {
        h->n[t] = gs_tensor_elems(&op->tensors[t]);
        h->t[t] = malloc((size_t)(h->n[t] ? h->n[t] : 1) * sizeof(float));
        if (!h->t[t]) {
            host_free(h);
            return gs_err(ctx, GS_ERR_NOMEM, "refine: out of memory");
        }
        gs_pcg32_fill_uniform(&rng, h->t[t], h->n[t]);
    }
    if (op->has_bias) {
        h->nbias = gs_op_bias_elems(op);
        h->bias = malloc((size_t)h->nbias * sizeof(float));
        if (!h->bias) {
            host_free(h);
            return gs_err(ctx, GS_ERR_NOMEM, "refine: out of memory");
        }
        gs_pcg32_fill_uniform(&rng, h->bias, h->nbias);
    }
    return GS_OK;
}

/* Common checks and report set-up. */
static gs_status refine_begin(gs_ctx *ctx, const gs_op **op, const gs_result *r, int K, double *budget_ms,
                              gs_refine_report *out, const char *backend) {
    if (!out) return gs_err(ctx, GS_ERR_INVALID_ARG, "refine: out is NULL");
    memset(out, 0, sizeof *out);
    out->pick = -1;
    out->spearman = NAN;
    out->backend = backend;
    if (!r) return gs_err(ctx, GS_ERR_INVALID_ARG, "refine: NULL result");
    if (!*op) *op = &r->op;
    if ((*op)->naxes != r->op.naxes || (*op)->ninputs != r->op.ninputs)
        return gs_err(ctx, GS_ERR_INVALID_ARG, "refine: operator %s does not match the result's %s", (*op)->spec,
                      r->op.spec);
    if (K < 1) return gs_err(ctx, GS_ERR_INVALID_ARG, "refine: K must be >= 1 (got %d)", K);
    if (!(*budget_ms > 0) || !isfinite(*budget_ms)) *budget_ms = GS_REFINE_DEFAULT_MS;
    out->n = K < r->n ? K : r->n;
    if (out->n > GS_REFINE_MAX) out->n = GS_REFINE_MAX;
    out->budget_s = *budget_ms * 1e-3;
    snprintf(out->target, sizeof out->target, "%s", r->hw.name);
    for (int i = 0; i < out->n; i++) {
        gs_refine_cand *c = &out->c[i];
        c->rank = i;
        c->predicted_s = r->est[i].time_s;
        c->median_s = c->sd_s = c->iqr_s = c->min_s = c->max_s = NAN;
        c->status = GS_ERR_UNSUPPORTED;
    }
    return GS_OK;
}

/* Pick, rank correlation and the overall status. */
static gs_status refine_end(gs_ctx *ctx, gs_refine_report *out, gs_status first_err, const char *first_msg) {
    double med[GS_REFINE_MAX], pm[GS_REFINE_MAX], mm[GS_REFINE_MAX];
    int k = 0;
    for (int i = 0; i < out->n; i++) {
        med[i] = out->c[i].status == GS_OK ? out->c[i].median_s : NAN;
        if (out->c[i].status == GS_OK) {
            pm[k] = out->c[i].predicted_s;
            mm[k] = out->c[i].median_s;
            k++;
        }
    }
    out->measured = k;
    out->pick = gs_refine_select(med, out->n);
    out->spearman = gs_refine_spearman(pm, mm, k);
    if (out->pick < 0) {
        if (first_err == GS_OK) return gs_err(ctx, GS_ERR_INVALID_ARG, "refine: no candidate to measure");
        return gs_err(ctx, first_err, "%s", first_msg);
    }
    return GS_OK;
}

static void record_failure(gs_ctx *ctx, gs_refine_cand *c, gs_status s, gs_status *first_err, char *first_msg,
                           size_t n) {
    c->status = s;
    snprintf(c->error, sizeof c->error, "%s", gs_ctx_errmsg(ctx));
    if (*first_err == GS_OK) {
        *first_err = s;
        snprintf(first_msg, n, "refine: candidate %d: %s", c->rank, gs_ctx_errmsg(ctx));
    }
}

/* ---- one loop over the candidates, for any runtime ------------------------------------ */
/* How candidates are compiled for the device (gs_rt_target): OpenCL builds the
 * source; CUDA compiles with NVRTC for the target's arch (a cubin, or PTX
 * that the driver JIT-compiles forward) and loads the image. */
typedef struct target {
    gs_rt_target t;
    gs_kcache *kc; /* CUDA: NVRTC's output is looked up and kept here (NULL: none) */
} target;

/* Emit candidate i, compile it for t and build or load it on dev. */
static gs_status candidate_load(gs_ctx *ctx, gs_device *dev, const target *t, const gs_result *r, const gs_op *op,
                                int i, gs_kernel_src *ks, gs_dev_prog *prog) {
    gs_status s = gs_lower_emit(ctx, &r->hw, op, &r->cand[i], t->t.dialect, t->t.arch, ks);
    if (s != GS_OK) return s;
    if (t->t.dialect != GS_DIALECT_CUDA) return gs_dev_prog_load(ctx, dev, ks->src, ks->name, ks->smem_bytes, prog);
    gs_nvrtc_out nv;
    s = gs_nvrtc_compile_cached(ctx, t->kc, ks->src, ks->name, t->t.arch, !t->t.cubin, t->t.cubin, &nv, NULL);
    /* smem_bytes is the kernel's total; ours is all static, so the launch
     * requests no dynamic shared memory. */
    if (s == GS_OK)
        s = gs_dev_prog_load(ctx, dev, t->t.cubin ? nv.cubin : (const void *)nv.ptx, ks->name, ks->smem_bytes, prog);
    gs_nvrtc_out_free(&nv);
    return s;
}

typedef struct launch_state {
    const gs_dev_prog *prog;
    const gs_op *op;
    gs_buffer *const *bufs;
    int nbufs;
    gs_buffer *ws; /* split-K's workspace, or NULL */
    size_t grid, block;
} launch_state;

static gs_status launch_cb(gs_ctx *ctx, void *p, double *el) {
    launch_state *st = p;
    return gs_dev_prog_launch(ctx, st->prog, st->op, st->bufs, st->nbufs, st->ws, st->grid, st->block, el);
}

/* The device buffers of op, filled from h: inputs, output, bias. */
static gs_status buffers_make(gs_ctx *ctx, gs_device *dev, const gs_op *op, const host_data *h, gs_buffer **buf,
                              int *nbuf) {
    *nbuf = 0;
    gs_status s = GS_OK;
    for (int t = 0; t <= op->ninputs && s == GS_OK; t++)
        s = gs_typed_buffer_create(ctx, dev, gs_op_tensor_dtype(op, t), h->t[t], h->n[t], &buf[(*nbuf)++]);
    if (s == GS_OK && h->bias)
        s = gs_typed_buffer_create(ctx, dev, (gs_dtype)op->dtype_in, h->bias, h->nbias, &buf[(*nbuf)++]);
    return s;
}

/* Measure candidates 0..out->n-1 of r on dev; each gets what is left of the
 * budget divided by the candidates left. */
static gs_status refine_on(gs_ctx *ctx, gs_device *dev, const target *t, const gs_op *op, const gs_result *r,
                           gs_refine_report *out) {
    double t_all = gs_now_s();
    snprintf(out->device, sizeof out->device, "%s", gs_device_name(dev));
    host_data h;
    gs_status s = host_make(ctx, op, &h);
    if (s != GS_OK) return s;
    gs_buffer *buf[GS_MAX_TENSORS + 1] = {0};
    int nbuf = 0;
    s = buffers_make(ctx, dev, op, &h, buf, &nbuf);
    gs_status first_err = GS_OK;
    char first_msg[1024] = "";
    double left = out->budget_s;
    for (int i = 0; i < out->n && s == GS_OK; i++) {
        gs_refine_cand *c = &out->c[i];
        if (!gs_etir_wellformed(op, &r->cand[i])) {
            gs_err(ctx, GS_ERR_INVALID_ARG, "candidate %d is not a state of %s", i, op->spec);
            record_failure(ctx, c, GS_ERR_INVALID_ARG, &first_err, first_msg, sizeof first_msg);
            continue;
        }
        gs_kernel_src ks;
        gs_dev_prog prog;
        gs_buffer *ws = NULL;
        double tb = gs_now_s();
        gs_status cs = candidate_load(ctx, dev, t, r, op, i, &ks, &prog);
        c->build_s = gs_now_s() - tb;
        /* split-K's workspace, zeroed; each launch leaves it ready for the next */
        if (cs == GS_OK && ks.ws_bytes) cs = gs_buffer_create(ctx, dev, (size_t)ks.ws_bytes, NULL, &ws);
        if (cs == GS_OK) {
            launch_state st = {&prog, op, buf, nbuf, ws, (size_t)ks.grid, (size_t)ks.block};
            double wall = 0, share = left / (out->n - i);
            cs = measure(ctx, launch_cb, &st, share, c, &wall);
            out->measure_s += wall;
            left -= wall;
            if (left < 0) left = 0;
        }
        if (cs == GS_OK) c->status = GS_OK;
        else record_failure(ctx, c, cs, &first_err, first_msg, sizeof first_msg);
        gs_buffer_destroy(ws);
        gs_dev_prog_free(&prog);
        gs_kernel_src_free(&ks);
    }
    for (int b = 0; b < nbuf; b++) gs_buffer_destroy(buf[b]);
    host_free(&h);
    out->total_s = gs_now_s() - t_all;
    if (s != GS_OK) return s;
    return refine_end(ctx, out, first_err, first_msg);
}

/* ---- on a device ------------------------------------------------------------------- */
gs_status gs_refine_device(gs_ctx *ctx, gs_kcache *kc, gs_device *dev, const gs_op *op, const gs_result *r, int K,
                           double budget_ms, gs_refine_report *out) {
    if (!dev) return gs_err(ctx, GS_ERR_INVALID_ARG, "refine: no device (open one with gs_device_open)");
    gs_status s = refine_begin(ctx, &op, r, K, &budget_ms, out, dev->rt->name);
    if (s != GS_OK) return s;
    s = gs_device_ready(ctx, dev, "refine");
    if (s != GS_OK) return s;
    target t = {.kc = kc};
    s = gs_device_target(ctx, dev, &t.t);
    char why[GS_MSG_MAX];
    if (s != GS_OK) return gs_err(ctx, s, "refine: %s", gs_ctx_msg_copy(ctx, why, sizeof why));
    return refine_on(ctx, dev, &t, op, r, out);
}

/* ---- the public entry point -------------------------------------------------------- */
gs_status gs_refine(gs_ctx *ctx, gs_device *dev, const gs_result *r, int K, double budget_ms, int *pick,
                    double *medians) {
    if (pick) *pick = -1;
    for (int i = 0; medians && i < K; i++) medians[i] = NAN;
    if (!dev) return gs_err(ctx, GS_ERR_INVALID_ARG, "refine: no device (open one with gs_device_open)");
    gs_refine_report *rep = malloc(sizeof *rep);
    if (!rep) return gs_err(ctx, GS_ERR_NOMEM, "refine: out of memory");
    gs_status s = gs_refine_device(ctx, NULL, dev, NULL, r, K, budget_ms, rep);
    if (s == GS_OK) {
        if (pick) *pick = rep->pick;
        for (int i = 0; medians && i < rep->n && i < K; i++)
            medians[i] = rep->c[i].status == GS_OK ? rep->c[i].median_s : NAN;
    }
    free(rep);
    return s;
}
