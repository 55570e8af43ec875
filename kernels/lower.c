/* lower.c — one lowering from ETIR + operator to kernel text, printed in two
 * dialects (CUDA C for NVRTC, OpenCL C 1.2). The dialects differ only in the
 * spellings of the table below; the index math, tiling and staging are shared,
 * so running the OpenCL kernel on PoCL checks the logic the CUDA kernel uses.
 *
 * Kernel shape (1-D grid, 1-D block):
 *   block index -> block origin per spatial axis (last axis fastest);
 *   thread index -> thread coordinate per spatial axis (last axis fastest);
 *   a thread owns V_a chunks of T0_a = T1_a/V_a elements on axis a, chunk v at
 *   local offset v*threads_a*T0_a + th_a*T0_a (the vthread spread);
 *   loop over reduce tiles: cooperative, predicated, identity-filling loads of
 *   each staged input's footprint box into shared memory; barrier; per reduce
 *   index: load register fragments, accumulate; barrier;
 *   epilogue (alpha, beta, bias, relu) and predicated stores.
 */
#include "kernels/kernels.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CW 192 /* width of a coordinate expression */

typedef struct dialect_spelling {
    const char *kernel_prefix; /* printf with NT */
    const char *in_ptr, *out_ptr;
    const char *shared, *sync, *tid, *bid;
    const char *long_t, *fmax, *neg_inf;
} dialect_spelling;

static const dialect_spelling spellings[] = {
    [GS_DIALECT_CUDA] = {
        .kernel_prefix = "extern \"C\" __global__ void __launch_bounds__(%lld, 1)",
        .in_ptr = "const float* __restrict__",
        .out_ptr = "float* __restrict__",
        .shared = "__shared__",
        .sync = "__syncthreads()",
        .tid = "(int)threadIdx.x",
        .bid = "(int)blockIdx.x",
        .long_t = "long long",
        .fmax = "fmaxf",
        .neg_inf = "__int_as_float(0xff800000)",
    },
    [GS_DIALECT_OPENCL] = {
        .kernel_prefix = "__kernel __attribute__((reqd_work_group_size(%lld, 1, 1))) void",
        .in_ptr = "__global const float* restrict",
        .out_ptr = "__global float* restrict",
        .shared = "__local",
        .sync = "barrier(CLK_LOCAL_MEM_FENCE)",
        .tid = "(int)get_local_id(0)",
        .bid = "(int)get_group_id(0)",
        .long_t = "long",
        .fmax = "fmax",
        .neg_inf = "(-INFINITY)",
    },
};

void gs_kdesc_make(const gs_op *op, const gs_etir *e, gs_dialect d, int arch, gs_kdesc *k) {
    memset(k, 0, sizeof *k);
    k->codegen_version = GS_CODEGEN_VERSION;
    k->dialect = (uint32_t)d;
    k->arch = (uint32_t)arch;
    for (int t = 0; t <= op->ninputs; t++)
        if (gs_tensor_elems(&op->tensors[t]) > 2147483647LL) k->idx64 = 1;
    k->combine = (uint32_t)op->combine;
    k->naxes = (uint32_t)op->naxes;
    k->ninputs = (uint32_t)op->ninputs;
    for (int a = 0; a < op->naxes; a++) k->axis_kind[a] = (uint32_t)op->axes[a].kind;
    for (int t = 0; t <= op->ninputs; t++) {
        k->ndim[t] = op->tensors[t].ndim;
        for (int j = 0; j < op->tensors[t].ndim; j++) k->idx[t][j] = op->tensors[t].idx[j];
    }
    k->etir = *e;
    k->etir.level = 0;
    k->has_beta = op->epi.beta != 0.0f;
    k->has_bias = op->has_bias && op->epi.bias_axis >= 0;
    k->bias_axis = k->has_bias ? (uint32_t)op->epi.bias_axis : 0;
    k->relu = op->epi.relu != 0;
}

uint64_t gs_kdesc_hash(const gs_kdesc *k) { return gs_hash_bytes(k, sizeof *k, 0x67656e736f72ull); }

int gs_kernel_int_args(const gs_op *op, int32_t *vals, int cap) {
    int n = 0;
    for (int a = 0; a < op->naxes && n < cap; a++) vals[n++] = (int32_t)op->axes[a].extent;
    for (int t = 0; t <= op->ninputs; t++)
        for (int j = 0; j < op->tensors[t].ndim && n < cap; j++) vals[n++] = (int32_t)op->tensors[t].shape[j];
    return n;
}

int gs_kernel_scalar_args(const gs_op *op, gs_karg *args, int na) {
    int32_t ints[48];
    int ni = gs_kernel_int_args(op, ints, 48);
    for (int i = 0; i < ni; i++) args[na++] = (gs_karg){.kind = GS_KARG_INT, .i = ints[i]};
    args[na++] = (gs_karg){.kind = GS_KARG_FLOAT, .f = op->epi.alpha};
    args[na++] = (gs_karg){.kind = GS_KARG_FLOAT, .f = op->epi.beta};
    return na;
}

void gs_kernel_src_free(gs_kernel_src *k) {
    if (!k) return;
    free(k->src);
    k->src = NULL;
}

/* ---- emission helpers ---------------------------------------------------------- */
typedef struct emitter {
    gs_sb sb;
    const gs_op *op;
    const gs_etir *e;
    const dialect_spelling *sp;
    const char *idx_t; /* type of linear offsets */
    int indent;
    int64_t thr[GS_MAX_AXES], t0[GS_MAX_AXES];
} emitter;

static void line(emitter *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void line(emitter *m, const char *fmt, ...) {
    for (int i = 0; i < m->indent; i++) gs_sb_puts(&m->sb, "    ");
    va_list ap;
    va_start(ap, fmt);
    gs_sb_vprintf(&m->sb, fmt, ap);
    va_end(ap);
    gs_sb_puts(&m->sb, "\n");
}

static bool spatial(const gs_op *op, int a) { return op->axes[a].kind == GS_AXIS_SPATIAL; }

/* Local (within-block) coordinate of axis a as C text: for spatial axes the
 * register index r<a> spread over vthreads; for reduce axes the k-step index. */
static void local_expr(const emitter *m, int a, char *buf, size_t n) {
    if (!spatial(m->op, a)) {
        snprintf(buf, n, "kr%d", a);
        return;
    }
    int64_t t0 = m->t0[a], thr = m->thr[a];
    snprintf(buf, n, "((r%d / %lld) * %lld + th%d * %lld + r%d %% %lld)", a, (long long)t0,
             (long long)(thr * t0), a, (long long)t0, a, (long long)t0);
}

/* Identity of the combine: what an out-of-bounds read yields. */
static const char *identity(const emitter *m) {
    return m->op->combine == GS_COMBINE_MAX ? m->sp->neg_inf : "0.0f";
}

/* Affine index of tensor t dim j with given axis coordinate texts. */
static void affine_text(const gs_affine *f, int naxes, char coord[][CW], char *buf, size_t n) {
    size_t off = (size_t)snprintf(buf, n, "(%lld", (long long)f->offset);
    for (int a = 0; a < naxes && off < n; a++) {
        if (!f->coeff[a]) continue;
        off += (size_t)snprintf(buf + off, n - off, " + %lld * %s", (long long)f->coeff[a], coord[a]);
    }
    if (off < n) snprintf(buf + off, n - off, ")");
}

/* Emit `float <var> = <bounds-checked global read of tensor t at g<j>>;` where
 * g<j> are already-declared int variables named <gprefix><j>. */
static void emit_global_read(emitter *m, int t, const char *gprefix, const char *var) {
    const gs_tensor *ts = &m->op->tensors[t];
    gs_sb cond, lin;
    gs_sb_init(&cond);
    gs_sb_init(&lin);
    for (int j = 0; j < ts->ndim; j++) {
        gs_sb_printf(&cond, "%s%s%d >= 0 && %s%d < S%d_%d", j ? " && " : "", gprefix, j, gprefix, j, t, j);
        if (j == 0) gs_sb_printf(&lin, "(%s)%s0", m->idx_t, gprefix);
        else {
            /* ((g0 * S1 + g1) * S2 + g2) */
            char *prev = gs_sb_take(&lin);
            gs_sb_init(&lin);
            gs_sb_printf(&lin, "(%s * S%d_%d + %s%d)", prev ? prev : "0", t, j, gprefix, j);
            free(prev);
        }
    }
    char *c = gs_sb_take(&cond), *l = gs_sb_take(&lin);
    line(m, "float %s = (%s) ? in%d[%s] : %s;", var, c ? c : "0", t, l ? l : "0", identity(m));
    free(c);
    free(l);
}

gs_status gs_lower_emit(gs_ctx *ctx, const gs_op *op, const gs_etir *e, gs_dialect d, int arch,
                        gs_kernel_src *out) {
    memset(out, 0, sizeof *out);
    if (d != GS_DIALECT_CUDA && d != GS_DIALECT_OPENCL)
        return gs_err(ctx, GS_ERR_INVALID_ARG, "unknown dialect %d", (int)d);
    if (!gs_etir_wellformed(op, e)) return gs_err(ctx, GS_ERR_INVALID_ARG, "lowering: malformed ETIR state");
    emitter mm, *m = &mm;
    memset(m, 0, sizeof *m);
    gs_sb_init(&m->sb);
    m->op = op;
    m->e = e;
    m->sp = &spellings[d];
    gs_kdesc_make(op, e, d, arch, &out->desc);
    m->idx_t = out->desc.idx64 ? m->sp->long_t : "int";
    out->hash = gs_kdesc_hash(&out->desc);
    snprintf(out->name, sizeof out->name, "gs_%016llx", (unsigned long long)out->hash);

    const int na = op->naxes, ni = op->ninputs;
    int64_t nt = gs_etir_threads(op, e);
    int64_t acc_n = gs_etir_acc_regs(op, e);
    for (int a = 0; a < na; a++) {
        m->thr[a] = spatial(op, a) ? gs_etir_threads_axis(e, a) : 1;
        m->t0[a] = spatial(op, a) ? e->T[a][1] / e->V[a] : 1;
    }
    out->block = nt;
    out->grid = gs_etir_blocks(op, e);

    /* ---- banner ---- */
    char etxt[256], cfg[256];
    gs_etir_format(op, e, etxt, sizeof etxt);
    gs_etir_format_config(op, e, cfg, sizeof cfg);
    gs_sb_printf(&m->sb, "/* gensor codegen v%u | %s | descriptor %016llx\n", GS_CODEGEN_VERSION,
                 d == GS_DIALECT_CUDA ? "cuda" : "opencl", (unsigned long long)out->hash);
    gs_sb_printf(&m->sb, " * op: %s\n * etir: %s\n * config: %s\n", op->spec, etxt, cfg);
    gs_sb_printf(&m->sb, " * launch: grid %lld x block %lld (1-D); extents are runtime arguments */\n",
                 (long long)out->grid, (long long)nt);

    /* ---- signature ---- */
    gs_sb_printf(&m->sb, m->sp->kernel_prefix, (long long)nt);
    gs_sb_printf(&m->sb, " %s(", out->name);
    for (int t = 0; t < ni; t++) gs_sb_printf(&m->sb, "%s in%d, ", m->sp->in_ptr, t);
    gs_sb_printf(&m->sb, "%s out", m->sp->out_ptr);
    if (out->desc.has_bias) gs_sb_printf(&m->sb, ", %s bias", m->sp->in_ptr);
    for (int a = 0; a < na; a++) gs_sb_printf(&m->sb, ", int E%d", a);
    for (int t = 0; t <= ni; t++)
        for (int j = 0; j < op->tensors[t].ndim; j++) gs_sb_printf(&m->sb, ", int S%d_%d", t, j);
    gs_sb_puts(&m->sb, ", float alpha, float beta)\n{\n");
    m->indent = 1;

    /* ---- block and thread decomposition (last spatial axis fastest) ---- */
    line(m, "const int tid = %s;", m->sp->tid);
    line(m, "int bid = %s;", m->sp->bid);
    line(m, "int tt = tid;");
    for (int a = na - 1; a >= 0; a--) {
        if (!spatial(op, a)) continue;
        line(m, "const int nb%d = (E%d + %d - 1) / %d;", a, a, e->T[a][2], e->T[a][2]);
        line(m, "const int ob%d = (bid %% nb%d) * %d; bid /= nb%d;", a, a, e->T[a][2], a);
        line(m, "const int th%d = tt %% %lld; tt /= %lld;", a, (long long)m->thr[a], (long long)m->thr[a]);
    }
    line(m, "(void)bid; (void)tt; (void)beta;");
    line(m, "float acc[%lld];", (long long)acc_n);
    line(m, "#pragma unroll");
    line(m, "for (int i = 0; i < %lld; i++) acc[i] = %s;", (long long)acc_n, identity(m));

    /* shared-memory boxes of staged inputs */
    int64_t dims[GS_MAX_TENSORS][GS_MAX_DIMS], pitch[GS_MAX_TENSORS], smem_total = 0;
    for (int t = 0; t < ni; t++) {
        if (!e->stage[t]) continue;
        int64_t n = gs_stage_layout(op, e, t, dims[t], &pitch[t]);
        line(m, "%s float sm%d[%lld];", m->sp->shared, t, (long long)n);
        smem_total += n * 4;
    }
    out->smem_bytes = smem_total;

    /* coordinate texts: block origin + local for global, local for smem */
    char origin[GS_MAX_AXES][CW];
    for (int a = 0; a < na; a++)
        snprintf(origin[a], sizeof origin[a], spatial(op, a) ? "ob%d" : "or%d", a);

    /* ---- reduce-tile loops ---- */
    int nred = 0;
    for (int a = 0; a < na; a++) {
        if (spatial(op, a)) continue;
        line(m, "for (int or%d = 0; or%d < E%d; or%d += %d) {", a, a, a, a, e->T[a][2]);
        m->indent++;
        nred++;
    }
    /* cooperative loads of staged inputs */
    for (int t = 0; t < ni; t++) {
        if (!e->stage[t]) continue;
        const gs_tensor *ts = &op->tensors[t];
        int64_t nreal = 1;
        for (int j = 0; j < ts->ndim; j++) nreal *= dims[t][j];
        char boxtxt[160];
        size_t bo = 0;
        for (int j = 0; j < ts->ndim && bo < sizeof boxtxt; j++)
            bo += (size_t)snprintf(boxtxt + bo, sizeof boxtxt - bo, " %lld", (long long)dims[t][j]);
        line(m, "{ /* stage %s: box%s, pitch %lld */", ts->name, boxtxt, (long long)pitch[t]);
        m->indent++;
        for (int j = 0; j < ts->ndim; j++) {
            /* lowest index of the box: negative coefficients reach down by T2-1 */
            char buf[512];
            affine_text(&ts->idx[j], na, origin, buf, sizeof buf);
            int64_t neg = 0;
            for (int a = 0; a < na; a++)
                if (ts->idx[j].coeff[a] < 0) neg += ts->idx[j].coeff[a] * (e->T[a][2] - 1);
            line(m, "const int lo%d = %s + %lld;", j, buf, (long long)neg);
        }
        line(m, "for (int i = tid; i < %lld; i += %lld) {", (long long)nreal, (long long)nt);
        m->indent++;
        line(m, "int rem = i;");
        for (int j = ts->ndim - 1; j >= 0; j--) {
            if (j > 0) line(m, "const int c%d = rem %% %lld; rem /= %lld;", j, (long long)dims[t][j], (long long)dims[t][j]);
            else line(m, "const int c0 = rem;");
            line(m, "const int g%d = lo%d + c%d;", j, j, j);
        }
        emit_global_read(m, t, "g", "v");
        /* padded smem offset */
        gs_sb lin;
        gs_sb_init(&lin);
        gs_sb_puts(&lin, "c0");
        for (int j = 1; j < ts->ndim; j++) {
            char *prev = gs_sb_take(&lin);
            gs_sb_init(&lin);
            gs_sb_printf(&lin, "(%s) * %lld + c%d", prev ? prev : "0",
                         (long long)(j == ts->ndim - 1 ? pitch[t] : dims[t][j]), j);
            free(prev);
        }
        char *l = gs_sb_take(&lin);
        line(m, "sm%d[%s] = v;", t, l ? l : "0");
        free(l);
        m->indent--;
        line(m, "}");
        m->indent--;
        line(m, "}");
    }
    if (smem_total) line(m, "%s;", m->sp->sync);

    /* k-step loops with reduce bounds predicates */
    for (int a = 0; a < na; a++) {
        if (spatial(op, a)) continue;
        line(m, "#pragma unroll 4");
        line(m, "for (int kr%d = 0; kr%d < %d; kr%d++) {", a, a, e->T[a][2], a);
        m->indent++;
        line(m, "if (or%d + kr%d < E%d) {", a, a, a);
        m->indent++;
    }

    /* register fragments per input over the spatial axes it depends on */
    char local[GS_MAX_AXES][CW], global[GS_MAX_AXES][CW];
    for (int a = 0; a < na; a++) {
        char lx[CW];
        local_expr(m, a, lx, sizeof lx);
        snprintf(local[a], sizeof local[a], "%s", lx);
        snprintf(global[a], sizeof global[a], "(%.16s + %.160s)", origin[a], lx);
    }
    int64_t frag_n[GS_MAX_TENSORS];
    for (int t = 0; t < ni; t++) {
        const gs_tensor *ts = &op->tensors[t];
        frag_n[t] = 1;
        for (int a = 0; a < na; a++)
            if (spatial(op, a) && gs_tensor_uses_axis(ts, a)) frag_n[t] *= e->T[a][1];
        line(m, "float f%d[%lld];", t, (long long)frag_n[t]);
        int open = 0;
        for (int a = 0; a < na; a++) {
            if (!spatial(op, a) || !gs_tensor_uses_axis(ts, a)) continue;
            line(m, "#pragma unroll");
            line(m, "for (int r%d = 0; r%d < %d; r%d++) {", a, a, e->T[a][1], a);
            m->indent++;
            open++;
        }
        /* fragment index: row-major over the dependent axes */
        gs_sb fi;
        gs_sb_init(&fi);
        gs_sb_puts(&fi, "0");
        for (int a = 0; a < na; a++)
            if (spatial(op, a) && gs_tensor_uses_axis(ts, a)) {
                char *prev = gs_sb_take(&fi);
                gs_sb_init(&fi);
                gs_sb_printf(&fi, "(%s) * %d + r%d", prev ? prev : "0", e->T[a][1], a);
                free(prev);
            }
        char *fidx = gs_sb_take(&fi);
        if (e->stage[t]) {
            gs_sb lin;
            gs_sb_init(&lin);
            for (int j = 0; j < ts->ndim; j++) {
                char buf[640];
                affine_text(&ts->idx[j], na, local, buf, sizeof buf);
                int64_t shift = 0;
                for (int a = 0; a < na; a++)
                    if (ts->idx[j].coeff[a] < 0) shift -= ts->idx[j].coeff[a] * (e->T[a][2] - 1);
                /* the affine offset is already folded into lo<j> of the load */
                int64_t off = ts->idx[j].offset;
                if (j == 0) gs_sb_printf(&lin, "(%s - %lld + %lld)", buf, (long long)off, (long long)shift);
                else {
                    char *prev = gs_sb_take(&lin);
                    gs_sb_init(&lin);
                    gs_sb_printf(&lin, "(%s) * %lld + (%s - %lld + %lld)", prev ? prev : "0",
                                 (long long)(j == ts->ndim - 1 ? pitch[t] : dims[t][j]), buf, (long long)off,
                                 (long long)shift);
                    free(prev);
                }
            }
            char *l = gs_sb_take(&lin);
            line(m, "f%d[%s] = sm%d[%s];", t, fidx ? fidx : "0", t, l ? l : "0");
            free(l);
        } else {
            line(m, "{");
            m->indent++;
            for (int j = 0; j < ts->ndim; j++) {
                char buf[640];
                affine_text(&ts->idx[j], na, global, buf, sizeof buf);
                line(m, "const int q%d = %s;", j, buf);
            }
            emit_global_read(m, t, "q", "v");
            line(m, "f%d[%s] = v;", t, fidx ? fidx : "0");
            m->indent--;
            line(m, "}");
        }
        free(fidx);
        for (; open > 0; open--) {
            m->indent--;
            line(m, "}");
        }
    }

    /* accumulate over the whole register tile */
    {
        int open = 0;
        for (int a = 0; a < na; a++) {
            if (!spatial(op, a)) continue;
            line(m, "#pragma unroll");
            line(m, "for (int r%d = 0; r%d < %d; r%d++) {", a, a, e->T[a][1], a);
            m->indent++;
            open++;
        }
        gs_sb ai;
        gs_sb_init(&ai);
        gs_sb_puts(&ai, "0");
        for (int a = 0; a < na; a++)
            if (spatial(op, a)) {
                char *prev = gs_sb_take(&ai);
                gs_sb_init(&ai);
                gs_sb_printf(&ai, "(%s) * %d + r%d", prev ? prev : "0", e->T[a][1], a);
                free(prev);
            }
        char *aidx = gs_sb_take(&ai);
        gs_sb rhs;
        gs_sb_init(&rhs);
        for (int t = 0; t < ni; t++) {
            const gs_tensor *ts = &op->tensors[t];
            gs_sb fi;
            gs_sb_init(&fi);
            gs_sb_puts(&fi, "0");
            for (int a = 0; a < na; a++)
                if (spatial(op, a) && gs_tensor_uses_axis(ts, a)) {
                    char *prev = gs_sb_take(&fi);
                    gs_sb_init(&fi);
                    gs_sb_printf(&fi, "(%s) * %d + r%d", prev ? prev : "0", e->T[a][1], a);
                    free(prev);
                }
            char *fidx = gs_sb_take(&fi);
            gs_sb_printf(&rhs, "%sf%d[%s]", t ? (op->combine == GS_COMBINE_ADD ? " + " : " * ") : "", t,
                         fidx ? fidx : "0");
            free(fidx);
        }
        char *r = gs_sb_take(&rhs);
        if (op->combine == GS_COMBINE_MAX)
            line(m, "acc[%s] = %s(acc[%s], %s);", aidx ? aidx : "0", m->sp->fmax, aidx ? aidx : "0", r ? r : "0");
        else
            line(m, "acc[%s] += %s;", aidx ? aidx : "0", r ? r : "0");
        free(r);
        free(aidx);
        for (; open > 0; open--) {
            m->indent--;
            line(m, "}");
        }
    }
    for (int a = 0; a < na; a++) {
        if (spatial(op, a)) continue;
        m->indent--;
        line(m, "}");
        m->indent--;
        line(m, "}");
    }
    if (smem_total) line(m, "%s;", m->sp->sync);
    for (int i = 0; i < nred; i++) {
        m->indent--;
        line(m, "}");
    }

    /* ---- epilogue and predicated stores ---- */
    {
        const gs_tensor *ot = gs_op_out(op);
        int open = 0;
        for (int a = 0; a < na; a++) {
            if (!spatial(op, a)) continue;
            line(m, "#pragma unroll");
            line(m, "for (int r%d = 0; r%d < %d; r%d++) {", a, a, e->T[a][1], a);
            m->indent++;
            open++;
        }
        gs_sb cond, ai;
        gs_sb_init(&cond);
        gs_sb_init(&ai);
        gs_sb_puts(&ai, "0");
        bool first = true;
        for (int a = 0; a < na; a++) {
            if (!spatial(op, a)) continue;
            line(m, "const int x%d = %s;", a, global[a]);
            gs_sb_printf(&cond, "%sx%d < E%d", first ? "" : " && ", a, a);
            first = false;
            char *prev = gs_sb_take(&ai);
            gs_sb_init(&ai);
            gs_sb_printf(&ai, "(%s) * %d + r%d", prev ? prev : "0", e->T[a][1], a);
            free(prev);
        }
        char *c = gs_sb_take(&cond), *aidx = gs_sb_take(&ai);
        line(m, "if (%s) {", c ? c : "1");
        m->indent++;
        char xs[GS_MAX_AXES][CW];
        for (int a = 0; a < na; a++) snprintf(xs[a], sizeof xs[a], "x%d", a);
        for (int j = 0; j < ot->ndim; j++) {
            char buf[640];
            affine_text(&ot->idx[j], na, xs, buf, sizeof buf);
            line(m, "const int o%d = %s;", j, buf);
        }
        gs_sb lin;
        gs_sb_init(&lin);
        gs_sb_printf(&lin, "(%s)o0", m->idx_t);
        for (int j = 1; j < ot->ndim; j++) {
            char *prev = gs_sb_take(&lin);
            gs_sb_init(&lin);
            gs_sb_printf(&lin, "(%s * S%d_%d + o%d)", prev ? prev : "0", ni, j, j);
            free(prev);
        }
        char *l = gs_sb_take(&lin);
        line(m, "const %s oi = %s;", m->idx_t, l ? l : "0");
        line(m, "float y = alpha * acc[%s];", aidx ? aidx : "0");
        if (out->desc.has_beta) line(m, "y += beta * out[oi];");
        if (out->desc.has_bias) line(m, "y += bias[x%u];", out->desc.bias_axis);
        if (out->desc.relu) line(m, "y = %s(y, 0.0f);", m->sp->fmax);
        line(m, "out[oi] = y;");
        free(l);
        free(c);
        free(aidx);
        m->indent--;
        line(m, "}");
        for (; open > 0; open--) {
            m->indent--;
            line(m, "}");
        }
    }
    gs_sb_puts(&m->sb, "}\n");
    if (m->sb.oom) {
        gs_sb_free(&m->sb);
        return gs_err(ctx, GS_ERR_NOMEM, "out of memory emitting kernel source");
    }
    out->src = gs_sb_take(&m->sb);
    if (!out->src) return gs_err(ctx, GS_ERR_NOMEM, "out of memory emitting kernel source");
    return GS_OK;
}
