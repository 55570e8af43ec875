/* kernel.c — the public kernel object (include/gensor.h): one candidate of a
 * construction emitted in one dialect, compiled with NVRTC on request, and
 * run on a device. It is a thin owner around the pieces below it: the
 * lowering (gs_lower_emit), NVRTC (gs_nvrtc_compile) and the device layer
 * (device.c).
 *
 * Layering: it reads a gs_result's candidates (construct/construct.h), as
 * refine.c and dispatch.c do; construct/ knows nothing of it. */
#include "construct/construct.h"
#include "kernels/service/service.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct gs_kernel {
    gs_kernel_src ks;  /* source, entry name, descriptor, launch at the result's shape */
    gs_op op;          /* the operator it was emitted for (structure checks at run time) */
    gs_etir etir;      /* its state: the launch of another shape is derived from it */
    int arch;          /* CUDA: sm_XX; OpenCL: 0 */
    bool compiled;     /* nv holds a cubin (and PTX) */
    gs_nvrtc_out nv;
    gs_dev_prog prog;  /* built or loaded on prog.dev by the first run */
    gs_buffer *ws;     /* split-K's workspace on prog.dev (zero between launches), or NULL */
};

/* Candidate i of r, checked. */
static gs_status candidate(gs_ctx *ctx, const gs_result *r, int i, const char *who) {
    if (!r) return gs_err(ctx, GS_ERR_INVALID_ARG, "%s: NULL result", who);
    if (i < 0 || i >= r->n)
        return gs_err(ctx, GS_ERR_INVALID_ARG, "%s: candidate %d out of range (the result holds %d)", who, i, r->n);
    return GS_OK;
}

gs_status gs_kernel_create(gs_ctx *ctx, const gs_result *r, int i, gs_dialect d, int arch, gs_kernel **out) {
    if (!out) return gs_err(ctx, GS_ERR_INVALID_ARG, "gs_kernel_create: out is NULL");
    *out = NULL;
    gs_status s = candidate(ctx, r, i, "gs_kernel_create");
    if (s != GS_OK) return s;
    if (d != GS_DIALECT_CUDA && d != GS_DIALECT_OPENCL)
        return gs_err(ctx, GS_ERR_INVALID_ARG, "gs_kernel_create: unknown dialect %d", (int)d);
    if (arch < 0 || (d == GS_DIALECT_OPENCL && arch != 0))
        return gs_err(ctx, GS_ERR_INVALID_ARG, "gs_kernel_create: arch %d (CUDA: sm_XX or 0; OpenCL: 0)", arch);
    gs_kernel *k = calloc(1, sizeof *k);
    if (!k) return gs_err(ctx, GS_ERR_NOMEM, "gs_kernel_create: out of memory");
    k->arch = d == GS_DIALECT_CUDA ? (arch ? arch : r->hw.sm) : 0;
    k->op = r->op;
    k->etir = r->cand[i];
    s = gs_lower_emit(ctx, &r->hw, &r->op, &r->cand[i], d, k->arch, &k->ks);
    if (s != GS_OK) {
        free(k);
        return s;
    }
    *out = k;
    return GS_OK;
}

void gs_kernel_destroy(gs_kernel *k) {
    if (!k) return;
    gs_buffer_destroy(k->ws);
    gs_dev_prog_free(&k->prog);
    gs_nvrtc_out_free(&k->nv);
    gs_kernel_src_free(&k->ks);
    free(k);
}

gs_status gs_kernel_emit(gs_ctx *ctx, const gs_result *r, int i, gs_dialect d, char **out) {
    if (!out) return gs_err(ctx, GS_ERR_INVALID_ARG, "gs_kernel_emit: out is NULL");
    *out = NULL;
    gs_status s = candidate(ctx, r, i, "gs_kernel_emit");
    if (s != GS_OK) return s;
    gs_kernel_src ks;
    s = gs_lower_emit(ctx, &r->hw, &r->op, &r->cand[i], d, d == GS_DIALECT_CUDA ? r->hw.sm : 0, &ks);
    if (s != GS_OK) return s;
    *out = ks.src; /* handed over: the caller frees it */
    return GS_OK;
}

const char *gs_kernel_source(const gs_kernel *k) { return k && k->ks.src ? k->ks.src : ""; }
const char *gs_kernel_name(const gs_kernel *k) { return k ? k->ks.name : ""; }
uint64_t gs_kernel_key(const gs_kernel *k) { return k ? k->ks.hash : 0; }
int gs_kernel_arch(const gs_kernel *k) { return k ? k->arch : 0; }

gs_status gs_kernel_compile(gs_ctx *ctx, gs_kernel *k, gs_kernel_stats *st) {
    if (st) memset(st, 0, sizeof *st);
    if (!k) return gs_err(ctx, GS_ERR_INVALID_ARG, "gs_kernel_compile: NULL kernel");
    if (k->ks.desc.dialect != GS_DIALECT_CUDA)
        return gs_err(ctx, GS_ERR_INVALID_ARG,
                      "gs_kernel_compile: %s is OpenCL C; NVRTC compiles CUDA (an OpenCL kernel is built by "
                      "gs_kernel_run on its device)",
                      k->ks.name);
    if (!k->compiled) {
        gs_nvrtc_out_free(&k->nv);
        gs_status s = gs_nvrtc_compile(ctx, k->ks.src, k->ks.name, k->arch, true, true, &k->nv);
        if (s != GS_OK) return s;
        k->compiled = true;
    }
    if (st) {
        st->arch = k->arch;
        st->registers = k->nv.stats.registers;
        st->spill_store_bytes = k->nv.stats.spill_store_bytes;
        st->spill_load_bytes = k->nv.stats.spill_load_bytes;
        st->smem_bytes = k->nv.stats.smem_bytes;
        st->stack_bytes = k->nv.stats.stack_bytes;
        st->compile_s = k->nv.compile_s;
    }
    return GS_OK;
}

const void *gs_kernel_binary(const gs_kernel *k, size_t *len) {
    bool have = k && k->compiled;
    if (len) *len = have ? k->nv.cubin_len : 0;
    return have ? k->nv.cubin : NULL;
}

const char *gs_kernel_log(const gs_kernel *k) { return k && k->nv.log ? k->nv.log : ""; }

/* ---- running ---------------------------------------------------------------------- */
/* Build or load k on dev, once: OpenCL builds the source; CUDA loads the
 * cubin (compiled first when needed). */
static gs_status kernel_load(gs_ctx *ctx, gs_device *dev, gs_kernel *k) {
    if (k->prog.dev == dev && k->prog.h) return GS_OK;
    if (k->prog.dev && k->prog.dev != dev)
        return gs_err(ctx, GS_ERR_INVALID_ARG, "gs_kernel_run: %s is loaded on another device; create a kernel per device",
                      k->ks.name);
    gs_status s = gs_device_ready(ctx, dev, "gs_kernel_run");
    if (s != GS_OK) return s;
    bool cuda = gs_device_dialect(dev) == GS_DIALECT_CUDA;
    if (cuda != (k->ks.desc.dialect == GS_DIALECT_CUDA))
        return gs_err(ctx, GS_ERR_INVALID_ARG, "gs_kernel_run: %s is %s, the device %s runs %s", k->ks.name,
                      cuda ? "OpenCL C" : "CUDA C", gs_device_name(dev), cuda ? "CUDA" : "OpenCL");
    const void *image = k->ks.src;
    if (cuda) {
        /* SASS for the device's own arch; PTX of an older arch, which the
         * driver compiles forward; nothing for a newer one */
        gs_rt_target t; /* only the device's sm is used: k has its own arch */
        s = gs_device_target(ctx, dev, &t);
        if (t.device_sm > 0) s = GS_OK;
        if (s == GS_OK && k->arch > t.device_sm)
            s = gs_err(ctx, GS_ERR_ARCH_UNSUPPORTED, "gs_kernel_run: %s is for sm_%d, the device %s is sm_%d",
                       k->ks.name, k->arch, gs_device_name(dev), t.device_sm);
        if (s == GS_OK) s = gs_kernel_compile(ctx, k, NULL);
        if (s != GS_OK) return s;
        image = k->arch == t.device_sm ? k->nv.cubin : (const void *)k->nv.ptx;
    }
    return gs_dev_prog_load(ctx, dev, image, k->ks.name, k->ks.smem_bytes, &k->prog);
}

gs_status gs_kernel_run(gs_ctx *ctx, gs_device *dev, gs_kernel *k, const gs_op *op, gs_buffer *const *bufs,
                        int nbufs, double *elapsed_s) {
    if (elapsed_s) *elapsed_s = 0;
    if (!k || !op) return gs_err(ctx, GS_ERR_INVALID_ARG, "gs_kernel_run: NULL kernel or operator");
    gs_status s = gs_op_validate(ctx, op);
    if (s != GS_OK) return s;
    /* a kernel of a 1x1 conv's matmul form (GS_FORM_AUTO) runs the conv it
     * was constructed from: the form's operator over the same buffers */
    gs_op form;
    if (op->kind == GS_OPK_CONV2D && k->op.kind != GS_OPK_CONV2D) {
        if (gs_op_conv1x1_as_matmul(NULL, op, &form) != GS_OK)
            return gs_err(ctx, GS_ERR_INVALID_ARG,
                          "gs_kernel_run: %s is not a shape of the kernel's operator %s: the kernel computes a 1x1 "
                          "conv as a matrix product, and this conv has a larger window, a stride or padding",
                          op->spec, k->op.spec);
        op = &form;
    }
    /* the kernel's extents are arguments, its structure is not */
    gs_kdesc mine, theirs;
    gs_kdesc_make(&k->op, NULL, &k->etir, (gs_dialect)k->ks.desc.dialect, k->arch, &mine);
    gs_kdesc_make(op, NULL, &k->etir, (gs_dialect)k->ks.desc.dialect, k->arch, &theirs);
    char why[200];
    if (gs_kdesc_diff(&mine, &theirs, why, sizeof why))
        return gs_err(ctx, GS_ERR_INVALID_ARG, "gs_kernel_run: %s is not a shape of the kernel's operator %s: they differ in %s",
                      op->spec, k->op.spec, why);
    if (!dev) return gs_err(ctx, GS_ERR_INVALID_ARG, "gs_kernel_run: no device (open one with gs_device_open)");
    s = kernel_load(ctx, dev, k);
    if (s != GS_OK) return s;
    /* split-K meets in a workspace sized by the extents: kept by k, grown
     * (a fresh buffer is zeroed) when a larger shape needs more */
    int64_t ws = gs_split_workspace_bytes(op, &k->etir, k->ks.desc.plan.split_mode);
    if (ws > 0 && (!k->ws || k->ws->bytes < (size_t)ws)) {
        gs_buffer_destroy(k->ws);
        k->ws = NULL;
        s = gs_buffer_create(ctx, dev, (size_t)ws, NULL, &k->ws);
        if (s != GS_OK) return s;
    }
    return gs_dev_prog_launch(ctx, &k->prog, op, bufs, nbufs, ws > 0 ? k->ws : NULL,
                              (size_t)gs_etir_blocks(op, &k->etir), (size_t)gs_etir_threads(op, &k->etir), elapsed_s);
}
