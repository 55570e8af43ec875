/* device.c — the public device handle: one gs_device over the OpenCL runtime
 * (opencl.c) and the CUDA driver runtime (cuda.c), with buffers, programs
 * built or loaded on it, and the launch of a kernel with an operator's
 * arguments. Refinement (refine.c), gs_kernel_run (kernel.c), --hw auto
 * (gs_hw_query) and the dispatcher's attach go through it, so the two
 * runtimes are told apart here and nowhere above.
 *
 * A gs_device made by gs_device_open owns its runtime handle; one made by
 * gs_device_wrap_* (a caller that already holds a gs_cl or gs_cuda) does not. */
#include "kernels/runtime/runtime.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- opening ------------------------------------------------------------------ */
void gs_device_wrap_opencl(gs_device *dev, gs_cl *cl) {
    memset(dev, 0, sizeof *dev);
    dev->backend = GS_BACKEND_OPENCL;
    dev->cl = cl;
}

void gs_device_wrap_cuda(gs_device *dev, gs_cuda *cu) {
    memset(dev, 0, sizeof *dev);
    dev->backend = GS_BACKEND_CUDA;
    dev->cu = cu;
}

gs_status gs_device_open(gs_ctx *ctx, gs_backend b, int index, gs_device **out) {
    if (!out) return gs_err(ctx, GS_ERR_INVALID_ARG, "gs_device_open: out is NULL");
    *out = NULL;
    if (b != GS_BACKEND_OPENCL && b != GS_BACKEND_CUDA)
        return gs_err(ctx, GS_ERR_INVALID_ARG, "gs_device_open: unknown backend %d", (int)b);
    if (index < 0 || (b == GS_BACKEND_OPENCL && index != 0))
        return gs_err(ctx, GS_ERR_INVALID_ARG,
                      "gs_device_open: device index %d (OpenCL takes 0; GS_CL_DEVICE=cpu|gpu|NAME picks the device)",
                      index);
    gs_device *dev = calloc(1, sizeof *dev);
    if (!dev) return gs_err(ctx, GS_ERR_NOMEM, "gs_device_open: out of memory");
    dev->backend = b;
    dev->owned = true;
    gs_status s = b == GS_BACKEND_OPENCL ? gs_cl_open(ctx, &dev->cl) : gs_cuda_open(ctx, index, &dev->cu);
    if (s != GS_OK) {
        free(dev);
        return s;
    }
    *out = dev;
    return GS_OK;
}

void gs_device_close(gs_device *dev) {
    if (!dev || !dev->owned) return;
    gs_cl_close(dev->cl);
    gs_cuda_close(dev->cu);
    free(dev);
}

const char *gs_device_name(const gs_device *dev) {
    if (!dev) return "";
    return dev->backend == GS_BACKEND_OPENCL ? gs_cl_device_name(dev->cl) : gs_cuda_device_name(dev->cu);
}

gs_backend gs_device_backend(const gs_device *dev) { return dev ? dev->backend : GS_BACKEND_OPENCL; }

/* The open runtime of dev, or an error naming what is missing. */
gs_status gs_device_ready(gs_ctx *ctx, const gs_device *dev, const char *who) {
    if (!dev) return gs_err(ctx, GS_ERR_INVALID_ARG, "%s: no device (open one with gs_device_open)", who);
    if (dev->backend == GS_BACKEND_OPENCL && !dev->cl)
        return gs_err(ctx, GS_ERR_OPENCL_MISSING, "%s: no OpenCL device", who);
    if (dev->backend == GS_BACKEND_CUDA && !dev->cu)
        return gs_err(ctx, GS_ERR_CUDA_MISSING, "no CUDA device: measurement-free mode (%s needs an open device)",
                      who);
    return GS_OK;
}

gs_status gs_hw_query(gs_ctx *ctx, gs_device *dev, const char *fallback, gs_hw **out) {
    if (!out) return gs_err(ctx, GS_ERR_INVALID_ARG, "gs_hw_query: out is NULL");
    *out = NULL;
    gs_status s = gs_device_ready(ctx, dev, "gs_hw_query");
    if (s != GS_OK) return s;
    gs_hw *hw = malloc(sizeof *hw);
    if (!hw) return gs_err(ctx, GS_ERR_NOMEM, "gs_hw_query: out of memory");
    if (dev->backend == GS_BACKEND_OPENCL) s = gs_cl_query_profile(ctx, dev->cl, fallback ? fallback : "rtx3090", hw, NULL);
    else s = gs_cuda_query_profile(ctx, dev->cu, hw);
    if (s != GS_OK) {
        free(hw);
        return s;
    }
    *out = hw;
    return GS_OK;
}

int gs_kernel_scalar_args(const gs_op *op, gs_karg *args, int na) {
    int32_t ints[48];
    int ni = gs_kernel_int_args(op, ints, 48);
    for (int i = 0; i < ni; i++) args[na++] = (gs_karg){.kind = GS_KARG_INT, .i = ints[i]};
    args[na++] = (gs_karg){.kind = GS_KARG_FLOAT, .f = op->epi.alpha};
    args[na++] = (gs_karg){.kind = GS_KARG_FLOAT, .f = op->epi.beta};
    return na;
}

/* ---- buffers -------------------------------------------------------------------- */
gs_status gs_buffer_create(gs_ctx *ctx, gs_device *dev, size_t bytes, const void *host, gs_buffer **out) {
    if (!out) return gs_err(ctx, GS_ERR_INVALID_ARG, "gs_buffer_create: out is NULL");
    *out = NULL;
    gs_status s = gs_device_ready(ctx, dev, "gs_buffer_create");
    if (s != GS_OK) return s;
    gs_buffer *b = calloc(1, sizeof *b);
    if (!b) return gs_err(ctx, GS_ERR_NOMEM, "gs_buffer_create: out of memory");
    b->dev = dev;
    b->bytes = bytes;
    s = dev->backend == GS_BACKEND_OPENCL ? gs_cl_buf_create(ctx, dev->cl, bytes, host, &b->cl)
                                          : gs_cuda_buf_create(ctx, dev->cu, bytes, host, &b->cu);
    if (s != GS_OK) {
        free(b);
        return s;
    }
    *out = b;
    return GS_OK;
}

gs_status gs_buffer_read(gs_ctx *ctx, gs_buffer *b, void *host, size_t bytes) {
    if (!b || (!host && bytes)) return gs_err(ctx, GS_ERR_INVALID_ARG, "gs_buffer_read: NULL argument");
    if (bytes > b->bytes)
        return gs_err(ctx, GS_ERR_INVALID_ARG, "gs_buffer_read: %zu bytes from a buffer of %zu", bytes, b->bytes);
    return b->cl ? gs_cl_buf_read(ctx, b->dev->cl, b->cl, host, bytes)
                 : gs_cuda_buf_read(ctx, b->dev->cu, b->cu, host, bytes);
}

void gs_buffer_destroy(gs_buffer *b) {
    if (!b) return;
    gs_cl_buf_free(b->cl);
    gs_cuda_buf_free(b->cu);
    free(b);
}

/* ---- programs --------------------------------------------------------------------- */
gs_status gs_dev_prog_load(gs_ctx *ctx, gs_device *dev, const void *image, const char *name, int64_t smem_bytes,
                           gs_dev_prog *out) {
    memset(out, 0, sizeof *out);
    gs_status s = gs_device_ready(ctx, dev, "load a kernel");
    if (s != GS_OK) return s;
    out->dev = dev;
    if (dev->backend == GS_BACKEND_OPENCL) return gs_cl_build(ctx, dev->cl, image, name, &out->cl);
    return gs_cuda_load(ctx, dev->cu, image, name, smem_bytes, &out->cu);
}

void gs_dev_prog_free(gs_dev_prog *p) {
    if (!p) return;
    gs_cl_prog_free(p->cl);
    gs_cuda_unload(p->cu);
    memset(p, 0, sizeof *p);
}

/* True when op takes a bias buffer after its output. */
static bool op_has_bias(const gs_op *op) { return op->has_bias && op->epi.bias_axis >= 0; }

gs_status gs_dev_prog_launch(gs_ctx *ctx, const gs_dev_prog *p, const gs_op *op, gs_buffer *const *bufs, int nbufs,
                             gs_buffer *ws, size_t grid, size_t block, double *elapsed_s) {
    int want = op->ninputs + 1 + (op_has_bias(op) ? 1 : 0);
    if (nbufs != want)
        return gs_err(ctx, GS_ERR_INVALID_ARG, "launch: %s takes %d buffers (inputs, output%s), got %d", op->spec,
                      want, op_has_bias(op) ? ", bias" : "", nbufs);
    gs_karg args[GS_MAX_TENSORS + 1 + GS_HANDLE_MAX_INTS + 3];
    int na = 0;
    for (int i = 0; i < nbufs; i++) {
        if (!bufs || !bufs[i] || bufs[i]->dev != p->dev)
            return gs_err(ctx, GS_ERR_INVALID_ARG, "launch: buffer %d is NULL or lives on another device", i);
        int64_t need = gs_op_buffer_elems(op, i) * (int64_t)sizeof(float);
        if ((int64_t)bufs[i]->bytes < need)
            return gs_err(ctx, GS_ERR_INVALID_ARG, "launch: buffer %d (%s) holds %zu bytes, %s needs %lld", i,
                          gs_op_buffer_name(op, i), bufs[i]->bytes, op->spec, (long long)need);
        args[na++] = (gs_karg){.kind = GS_KARG_BUF, .buf = bufs[i]->cl, .cubuf = bufs[i]->cu};
    }
    na = gs_kernel_scalar_args(op, args, na);
    if (ws) {
        if (ws->dev != p->dev) return gs_err(ctx, GS_ERR_INVALID_ARG, "launch: the workspace lives on another device");
        args[na++] = (gs_karg){.kind = GS_KARG_BUF, .buf = ws->cl, .cubuf = ws->cu};
    }
    if (p->cl) return gs_cl_launch(ctx, p->dev->cl, p->cl, args, na, grid, block, elapsed_s);
    return gs_cuda_launch(ctx, p->dev->cu, p->cu, args, na, grid, block, elapsed_s);
}
