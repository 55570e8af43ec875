/* verify.c — run a lowered kernel on a device and compare it with a
 * reference: GSL's sgemm for gemm, the IR interpreter for everything else.
 * Any device of the runtime interface: OpenCL builds the OpenCL C; CUDA gets
 * the CUDA C compiled by NVRTC for the device's arch (a cubin, or PTX of the
 * newest older arch NVRTC supports, which the driver JIT-compiles forward). */
#include "util/pcg.h"
#include "kernels/service/service.h"

#include <gsl/gsl_blas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

double gs_verify_tolerance(const gs_op *op) {
    double terms = 1;
    for (int a = 0; a < op->naxes; a++)
        if (op->axes[a].kind == GS_AXIS_REDUCE) terms *= (double)op->axes[a].extent;
    double tol = GS_VERIFY_TOL * (terms > 4096 ? sqrt(terms / 4096) : 1.0);
    if (op->dtype_out == GS_DTYPE_F32) return tol;
    return tol + gs_dtype_unit_roundoff((gs_dtype)op->dtype_out) * (1 + tol);
}

/* The spacing of t's numbers at |x| (its subnormal spacing below the
 * smallest normal). */
static double ulp_of(gs_dtype t, double x) {
    int m = gs_dtype_row(t)->mant_bits, emin = t == GS_DTYPE_F16 ? -14 : -126;
    int e;
    frexp(fabs(x), &e); /* |x| in [2^(e-1), 2^e) */
    e -= 1;
    if (x == 0 || e < emin) e = emin;
    return ldexp(1.0, e - m);
}

void gs_diff_round_check(const float *y, const float *ref, int64_t n, gs_dtype t, double slack, gs_diff *d) {
    d->rounding = 0;
    if (t == GS_DTYPE_F32) return;
    for (int64_t i = 0; i < n; i++) {
        double r = ref[i], v = y[i];
        if (!isfinite(r) || !isfinite(v)) continue; /* counted by gs_diff_compute */
        if (fabs(v - r) > 0.5 * ulp_of(t, fabs(r) + slack) + slack) d->rounding++;
    }
}

/* Device buffers of a type from host floats (packed to the type's storage)
 * and back. */
gs_status gs_typed_buffer_create(gs_ctx *ctx, gs_device *dev, gs_dtype t, const float *x, int64_t n, gs_buffer **b) {
    if (t == GS_DTYPE_F32) return gs_buffer_create(ctx, dev, (size_t)n * 4, x, b);
    size_t bytes = (size_t)n * (size_t)gs_dtype_bytes(t);
    void *tmp = malloc(bytes ? bytes : 1);
    if (!tmp) return gs_err(ctx, GS_ERR_NOMEM, "verify: out of memory");
    gs_dtype_pack(t, x, tmp, n);
    gs_status s = gs_buffer_create(ctx, dev, bytes, tmp, b);
    free(tmp);
    return s;
}
static gs_status typed_read(gs_ctx *ctx, gs_buffer *b, gs_dtype t, float *x, int64_t n) {
    if (t == GS_DTYPE_F32) return gs_buffer_read(ctx, b, x, (size_t)n * 4);
    size_t bytes = (size_t)n * (size_t)gs_dtype_bytes(t);
    void *tmp = malloc(bytes ? bytes : 1);
    if (!tmp) return gs_err(ctx, GS_ERR_NOMEM, "verify: out of memory");
    gs_status s = gs_buffer_read(ctx, b, tmp, bytes);
    if (s == GS_OK) gs_dtype_unpack(t, tmp, x, n);
    free(tmp);
    return s;
}

/* An output's class: 0 finite, 1 NaN, 2 +inf, 3 -inf. */
static int value_class(double v) { return isnan(v) ? 1 : isinf(v) ? (v > 0 ? 2 : 3) : 0; }

void gs_diff_compute(const float *y, const float *ref, int64_t n, gs_diff *d) {
    const char *refname = d->reference;
    double ks = d->kernel_s;
    memset(d, 0, sizeof *d);
    d->reference = refname;
    d->kernel_s = ks;
    d->class_where = -1;
    double num = 0, den = 0;
    for (int64_t i = 0; i < n; i++)
        if (isfinite(ref[i]) && fabs(ref[i]) > d->ref_max) d->ref_max = fabs(ref[i]);
    for (int64_t i = 0; i < n; i++) {
        double r = ref[i], v = y[i];
        if (!isfinite(r) || !isfinite(v)) {
            /* the class must match: -inf from an all-padding max window, NaN and inf from non-finite inputs */
            d->ref_nonfinite += !isfinite(r);
            if (value_class(v) != value_class(r)) {
                if (!d->nonfinite) d->class_where = i;
                d->nonfinite++;
            }
            continue;
        }
        double e = fabs(v - r);
        if (e > d->max_abs) {
            d->max_abs = e;
            d->where = i;
        }
        if (fabs(r) > 1e-6 * d->ref_max && e / fabs(r) > d->max_rel) d->max_rel = e / fabs(r);
        num += e * e;
        den += r * r;
    }
    d->normwise = d->ref_max > 0 ? d->max_abs / d->ref_max : d->max_abs;
    d->nmse = den > 0 ? num / den : num;
}

/* Replace n elements of the buffers x[0..nb-1] (sizes len[]) by NaN, +inf
 * or -inf at positions drawn from rng. */
static void place_nonfinite(gs_pcg32 *rng, float *const *x, const int64_t *len, int nb, int64_t n) {
    uint64_t total = 0;
    for (int b = 0; b < nb; b++) total += (uint64_t)len[b];
    for (int64_t k = 0; total && k < n; k++) {
        uint64_t hi = gs_pcg32_next(rng), lo = gs_pcg32_next(rng);
        uint64_t at = ((hi << 32) | lo) % total;
        uint32_t what = gs_pcg32_bounded(rng, 3);
        int b = 0;
        while (at >= (uint64_t)len[b]) at -= (uint64_t)len[b++];
        x[b][at] = what == 0 ? NAN : what == 1 ? INFINITY : -INFINITY;
    }
}

void gs_gemm_reference(const gs_op *op, const float *A, const float *B, float *C) {
    const gs_tensor *ta = &op->tensors[0], *tb = &op->tensors[1], *tc = &op->tensors[2];
    gsl_matrix_float_const_view a = gsl_matrix_float_const_view_array(A, (size_t)ta->shape[0], (size_t)ta->shape[1]);
    gsl_matrix_float_const_view b = gsl_matrix_float_const_view_array(B, (size_t)tb->shape[0], (size_t)tb->shape[1]);
    gsl_matrix_float_view c = gsl_matrix_float_view_array(C, (size_t)tc->shape[0], (size_t)tc->shape[1]);
    gsl_blas_sgemm(op->transA ? CblasTrans : CblasNoTrans, op->transB ? CblasTrans : CblasNoTrans, op->epi.alpha,
                   &a.matrix, &b.matrix, op->epi.beta, &c.matrix);
}

/* Split-K's contract, checked after the first launch: the kernel left its
 * workspace zero, and a second launch on it (from the same output contents,
 * which beta reads) gives the same bits when the blocks meet in split order
 * (the atomic mode need not). */
static gs_status check_split_rerun(gs_ctx *ctx, gs_device *dev, const gs_dev_prog *prog, const gs_kernel_src *ks,
                                   const gs_op *op, gs_buffer **bufs, int nbufs, const float *orig,
                                   const float *first, gs_buffer *wsbuf) {
    int64_t on = gs_tensor_elems(gs_op_out(op));
    size_t wn = (size_t)ks->ws_bytes / 4;
    uint32_t *ws = malloc(wn * 4);
    float *again = malloc((size_t)on * 4);
    gs_buffer *out2 = NULL;
    gs_status s = ws && again ? GS_OK : gs_err(ctx, GS_ERR_NOMEM, "verify: out of memory");
    if (s == GS_OK) s = gs_buffer_read(ctx, wsbuf, ws, wn * 4);
    /* the counters, and the atomic mode's slice; ordered slices are scratch */
    size_t zero_words = ks->desc.plan.split_mode == GS_SPLIT_ATOMIC ? wn
                                                                    : (size_t)gs_split_counter_bytes(op, &ks->desc.etir) / 4;
    for (size_t i = 0; s == GS_OK && i < zero_words; i++)
        if (ws[i])
            s = gs_err(ctx, GS_ERR_MISMATCH, "verify: %s: split-K left word %zu of its workspace non-zero (0x%08x)",
                       op->spec, i, (unsigned)ws[i]);
    if (s == GS_OK) s = gs_typed_buffer_create(ctx, dev, (gs_dtype)op->dtype_out, orig, on, &out2);
    if (s == GS_OK) {
        gs_buffer *b2[GS_MAX_TENSORS + 1];
        memcpy(b2, bufs, (size_t)nbufs * sizeof *b2);
        b2[op->ninputs] = out2;
        s = gs_dev_prog_launch(ctx, prog, op, b2, nbufs, wsbuf, (size_t)ks->grid, (size_t)ks->block, NULL);
    }
    if (s == GS_OK) s = typed_read(ctx, out2, (gs_dtype)op->dtype_out, again, on);
    if (s == GS_OK && ks->desc.plan.split_mode == GS_SPLIT_ORDERED && memcmp(again, first, (size_t)on * 4) != 0)
        s = gs_err(ctx, GS_ERR_MISMATCH, "verify: %s: ordered split-K gave different bits on a second run", op->spec);
    gs_buffer_destroy(out2);
    free(ws);
    free(again);
    return s;
}

gs_status gs_verify(gs_ctx *ctx, gs_device *dev, const gs_hw *hw, const gs_op *op, const gs_etir *e, uint64_t seed,
                    gs_diff *d) {
    return gs_verify_ex(ctx, dev, hw, op, e, seed, NULL, d);
}

gs_status gs_verify_ex(gs_ctx *ctx, gs_device *dev, const gs_hw *hw, const gs_op *op, const gs_etir *e, uint64_t seed,
                       const gs_verify_opts *vo, gs_diff *d) {
    memset(d, 0, sizeof *d);
    if (!dev || !hw || !op || !e) return gs_err(ctx, GS_ERR_INVALID_ARG, "verify: NULL argument");
    if (!gs_etir_wellformed(op, e)) return gs_err(ctx, GS_ERR_INVALID_ARG, "verify: malformed ETIR state");
    gs_plan p;
    gs_plan_make(hw, op, e, NULL, &p);
    return gs_verify_plan_ex(ctx, dev, op, e, &p, seed, vo, d);
}

/* Emit e under plan in the device's dialect and build (OpenCL) or compile
 * and load (CUDA) it on dev. */
static gs_status verify_load(gs_ctx *ctx, gs_device *dev, const gs_op *op, const gs_etir *e, const gs_plan *plan,
                             gs_kernel_src *ks, gs_dev_prog *prog) {
    memset(ks, 0, sizeof *ks);
    memset(prog, 0, sizeof *prog);
    gs_rt_target t;
    gs_status s = gs_device_target(ctx, dev, &t);
    char why[GS_MSG_MAX];
    if (s != GS_OK) return gs_err(ctx, s, "verify: %s", gs_ctx_msg_copy(ctx, why, sizeof why));
    s = gs_lower_emit_plan(ctx, op, e, plan, t.dialect, t.arch, ks);
    if (s != GS_OK) return s;
    if (t.dialect != GS_DIALECT_CUDA) return gs_dev_prog_load(ctx, dev, ks->src, ks->name, ks->smem_bytes, prog);
    gs_nvrtc_out nv;
    s = gs_nvrtc_compile(ctx, ks->src, ks->name, t.arch, !t.cubin, t.cubin, &nv);
    if (s == GS_OK)
        s = gs_dev_prog_load(ctx, dev, t.cubin ? nv.cubin : (const void *)nv.ptx, ks->name, ks->smem_bytes, prog);
    gs_nvrtc_out_free(&nv);
    return s;
}

gs_status gs_verify_plan(gs_ctx *ctx, gs_device *dev, const gs_op *op, const gs_etir *e, const gs_plan *plan,
                         uint64_t seed, gs_diff *d) {
    return gs_verify_plan_ex(ctx, dev, op, e, plan, seed, NULL, d);
}

/* gs_verify_opts.nonfinite: after the finite draw, from another stream (the
 * finite values stay those of the seed), n specials among the inputs, the
 * bias and the old output that beta reads; with beta = 0 the old output,
 * never read (gs_epi_steps has no ADD_OLD), is all NaN: a kernel that reads
 * it turns NaN. */
static void place_specials(const gs_op *op, float *const *host, float *bias, int64_t on, uint64_t seed, int64_t n) {
    gs_pcg32 nrng;
    gs_pcg32_seed(&nrng, seed, 0x6e6f6e66696eull);
    float *bufs[GS_MAX_TENSORS + 1];
    int64_t lens[GS_MAX_TENSORS + 1];
    int nb = 0;
    for (int t = 0; t < op->ninputs; t++) {
        bufs[nb] = host[t];
        lens[nb++] = gs_tensor_elems(&op->tensors[t]);
    }
    if (bias) {
        bufs[nb] = bias;
        lens[nb++] = gs_op_bias_elems(op);
    }
    if (op->epi.beta != 0.0f) {
        bufs[nb] = host[op->ninputs];
        lens[nb++] = on;
    } else
        for (int64_t i = 0; i < on; i++) host[op->ninputs][i] = NAN;
    place_nonfinite(&nrng, bufs, lens, nb, n);
}

/* The mismatch of a finished comparison, if any (y: the kernel's output). */
static gs_status verify_verdict(gs_ctx *ctx, const gs_op *op, const float *y, const float *ref, int64_t on,
                                const gs_diff *d) {
    if (d->nonfinite) {
        const int64_t w = d->class_where;
        return gs_err(ctx, GS_ERR_MISMATCH,
                      "verify: %s differs from %s: %lld of %lld outputs in another class (NaN, +inf, -inf, finite) "
                      "than the reference's, the first at %lld (kernel %g, reference %g); normwise %.3g (tol %.0e) "
                      "over the finite ones",
                      op->spec, d->reference, (long long)d->nonfinite, (long long)on, (long long)w, (double)y[w],
                      (double)ref[w], d->normwise, d->tol);
    }
    if (!(d->normwise <= d->tol))
        return gs_err(ctx, GS_ERR_MISMATCH,
                      "verify: %s differs from %s: normwise %.3g (tol %.0e), max abs %.3g at %lld (kernel %g, "
                      "reference %g), 0 non-finite",
                      op->spec, d->reference, d->normwise, d->tol, d->max_abs, (long long)d->where,
                      (double)y[d->where], (double)ref[d->where]);
    if (d->rounding)
        return gs_err(ctx, GS_ERR_MISMATCH,
                      "verify: %s: %lld of %lld outputs are more than half an ulp of %s from the reference (a wrong "
                      "rounding)",
                      op->spec, (long long)d->rounding, (long long)on, gs_dtype_name((gs_dtype)op->dtype_out));
    return GS_OK;
}

gs_status gs_verify_plan_ex(gs_ctx *ctx, gs_device *dev, const gs_op *op, const gs_etir *e, const gs_plan *plan,
                            uint64_t seed, const gs_verify_opts *vo, gs_diff *d) {
    memset(d, 0, sizeof *d);
    const int64_t nonfinite = vo ? vo->nonfinite : 0;
    if (nonfinite < 0) return gs_err(ctx, GS_ERR_INVALID_ARG, "verify: negative number of non-finite inputs");
    if (!dev || !plan || !op || !e) return gs_err(ctx, GS_ERR_INVALID_ARG, "verify: NULL argument");
    int64_t total = 0;
    for (int t = 0; t <= op->ninputs; t++) total += gs_tensor_elems(&op->tensors[t]);
    total += gs_op_bias_elems(op);
    if (total * 4 * 2 > GS_VERIFY_MAX_BYTES)
        return gs_err(ctx, GS_ERR_UNSUPPORTED, "verify: %s needs %.1f GiB on the host (limit %.0f GiB)", op->spec,
                      total * 8.0 / (1 << 30), GS_VERIFY_MAX_BYTES / (double)(1 << 30));
    double iters = 1;
    for (int a = 0; a < op->naxes; a++) iters *= (double)op->axes[a].extent;
    if (iters > (double)GS_VERIFY_MAX_ITERS)
        return gs_err(ctx, GS_ERR_UNSUPPORTED,
                      "verify: %s has %.3g iterations to run on the host and the device (limit %.3g); verify a smaller "
                      "shape",
                      op->spec, iters, (double)GS_VERIFY_MAX_ITERS);
    gs_status s = gs_device_ready(ctx, dev, "verify");
    if (s != GS_OK) return s;

    float *host[GS_MAX_TENSORS] = {0}, *ref = NULL, *bias = NULL, *orig = NULL;
    gs_buffer *buf[GS_MAX_TENSORS + 1] = {0}, *wsbuf = NULL;
    int nbuf = 0;
    gs_kernel_src ks = {0};
    gs_dev_prog prog = {0};
    const gs_tensor *ot = gs_op_out(op);
    int64_t on = gs_tensor_elems(ot);
    gs_pcg32 rng;
    gs_pcg32_seed(&rng, seed, 0x7665726966ull);
    for (int t = 0; t <= op->ninputs; t++) {
        int64_t n = gs_tensor_elems(&op->tensors[t]);
        host[t] = malloc((size_t)n * sizeof(float));
        if (!host[t]) { s = gs_err(ctx, GS_ERR_NOMEM, "verify: out of memory"); goto done; }
        gs_pcg32_fill_uniform(&rng, host[t], n); /* the output's old contents feed beta */
        for (int64_t i = 0; gs_op_typed(op) && i < n; i++) /* values the type holds exactly */
            host[t][i] = gs_dtype_round(gs_op_tensor_dtype(op, t), host[t][i]);
    }
    if (op->has_bias) {
        int64_t n = gs_op_bias_elems(op);
        bias = malloc((size_t)n * sizeof(float));
        if (!bias) { s = gs_err(ctx, GS_ERR_NOMEM, "verify: out of memory"); goto done; }
        gs_pcg32_fill_uniform(&rng, bias, n);
        for (int64_t i = 0; i < n; i++) bias[i] = gs_dtype_round((gs_dtype)op->dtype_in, bias[i]);
    }
    if (nonfinite) place_specials(op, host, bias, on, seed, nonfinite);
    ref = malloc((size_t)on * sizeof(float));
    if (!ref) { s = gs_err(ctx, GS_ERR_NOMEM, "verify: out of memory"); goto done; }
    memcpy(ref, host[op->ninputs], (size_t)on * sizeof(float));
    orig = malloc((size_t)on * sizeof(float));
    if (!orig) { s = gs_err(ctx, GS_ERR_NOMEM, "verify: out of memory"); goto done; }
    memcpy(orig, host[op->ninputs], (size_t)on * sizeof(float));
    /* GSL's sgemm skips a zero term (0 x inf): the interpreter's IEEE products under nonfinite */
    if (op->kind == GS_OPK_GEMM && !op->has_bias && !op->epi.relu && !gs_op_typed(op) && !op->math && !nonfinite) {
        gs_gemm_reference(op, host[0], host[1], ref);
        d->reference = "gsl_blas_sgemm";
    } else {
        const float *ins[GS_MAX_TENSORS];
        for (int t = 0; t < op->ninputs; t++) ins[t] = host[t];
        gs_op unrounded = *op; /* the check below wants the reference before the output's rounding */
        unrounded.dtype_out = GS_DTYPE_F32;
        s = gs_op_reference(ctx, &unrounded, ins, bias, ref);
        if (s != GS_OK) goto done;
        d->reference = "interpreter";
    }

    s = verify_load(ctx, dev, op, e, plan, &ks, &prog);
    if (s != GS_OK) goto done;
    for (int t = 0; t <= op->ninputs; t++) {
        s = gs_typed_buffer_create(ctx, dev, gs_op_tensor_dtype(op, t), host[t], gs_tensor_elems(&op->tensors[t]), &buf[nbuf++]);
        if (s != GS_OK) goto done;
    }
    if (ks.desc.op.has_bias) {
        s = gs_typed_buffer_create(ctx, dev, (gs_dtype)op->dtype_in, bias, gs_op_bias_elems(op), &buf[nbuf++]);
        if (s != GS_OK) goto done;
    }
    if (ks.ws_bytes) {
        s = gs_buffer_create(ctx, dev, (size_t)ks.ws_bytes, NULL, &wsbuf);
        if (s != GS_OK) goto done;
    }
    double ksec = 0;
    s = gs_dev_prog_launch(ctx, &prog, op, buf, nbuf, wsbuf, (size_t)ks.grid, (size_t)ks.block, &ksec);
    if (s != GS_OK) goto done;
    s = typed_read(ctx, buf[op->ninputs], (gs_dtype)op->dtype_out, host[op->ninputs], on);
    if (s != GS_OK) goto done;
    if (ks.ws_bytes) {
        s = check_split_rerun(ctx, dev, &prog, &ks, op, buf, nbuf, orig, host[op->ninputs], wsbuf);
        if (s != GS_OK) goto done;
    }
    d->kernel_s = ksec;
    gs_diff_compute(host[op->ninputs], ref, on, d);
    d->tol = gs_verify_tolerance(op);
    if (gs_op_typed(op)) {
        gs_op f = *op;
        f.dtype_out = GS_DTYPE_F32;
        gs_diff_round_check(host[op->ninputs], ref, on, (gs_dtype)op->dtype_out, gs_verify_tolerance(&f) * d->ref_max, d);
    }
    s = verify_verdict(ctx, op, host[op->ninputs], ref, on, d);
done:
    for (int t = 0; t <= op->ninputs; t++) free(host[t]);
    for (int b = 0; b < nbuf; b++) gs_buffer_destroy(buf[b]);
    gs_buffer_destroy(wsbuf);
    gs_dev_prog_free(&prog);
    free(ref);
    free(orig);
    free(bias);
    gs_kernel_src_free(&ks);
    return s;
}
