/* device.c — the public device handle: one gs_device over a runtime table
 * (gs_runtime, runtime.h: OpenCL in opencl.c, the CUDA driver in cuda.c),
 * with buffers, programs built or loaded on it, and the launch of a kernel
 * with an operator's arguments. Services (kernel, verify, refine, dispatch)
 * and the CLI reach a device only through it and the table, so no code here
 * or above tells the two runtimes apart.
 *
 * A gs_device made by gs_device_open owns its runtime handle; one made by
 * gs_device_wrap (a caller that already holds a runtime handle) does not. */
#include "kernels/runtime/runtime.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const gs_runtime *gs_runtime_of(gs_backend b) {
    switch (b) {
    case GS_BACKEND_OPENCL: return &gs_runtime_opencl;
    case GS_BACKEND_CUDA: return &gs_runtime_cuda;
    }
    return NULL;
}

/* ---- opening ------------------------------------------------------------------ */
void gs_device_wrap(gs_device *dev, const gs_runtime *rt, void *h) {
    memset(dev, 0, sizeof *dev);
    dev->rt = rt;
    dev->h = h;
}

gs_status gs_device_open(gs_ctx *ctx, gs_backend b, int index, gs_device **out) {
    if (!out) return gs_err(ctx, GS_ERR_INVALID_ARG, "gs_device_open: out is NULL");
    *out = NULL;
    const gs_runtime *rt = gs_runtime_of(b);
    if (!rt) return gs_err(ctx, GS_ERR_INVALID_ARG, "gs_device_open: unknown backend %d", (int)b);
    if (index < 0)
        return gs_err(ctx, GS_ERR_INVALID_ARG,
                      "gs_device_open: device index %d (OpenCL takes 0; GS_CL_DEVICE=cpu|gpu|NAME picks the device)",
                      index);
    gs_device *dev = calloc(1, sizeof *dev);
    if (!dev) return gs_err(ctx, GS_ERR_NOMEM, "gs_device_open: out of memory");
    dev->rt = rt;
    dev->owned = true;
    gs_status s = rt->open(ctx, index, &dev->h);
    if (s != GS_OK) {
        free(dev);
        return s;
    }
    *out = dev;
    return GS_OK;
}

void gs_device_close(gs_device *dev) {
    if (!dev || !dev->owned) return;
    if (dev->h) dev->rt->close(dev->h);
    free(dev);
}

const char *gs_device_name(const gs_device *dev) { return dev && dev->h ? dev->rt->device_name(dev->h) : ""; }

gs_backend gs_device_backend(const gs_device *dev) { return dev && dev->rt ? dev->rt->backend : GS_BACKEND_OPENCL; }

gs_dialect gs_device_dialect(const gs_device *dev) { return dev && dev->rt ? dev->rt->dialect : GS_DIALECT_OPENCL; }

const char *gs_device_runtime_name(const gs_device *dev) { return dev && dev->rt ? dev->rt->name : ""; }

void *gs_device_handle(const gs_device *dev) { return dev ? dev->h : NULL; }

/* The open runtime of dev, or an error naming what is missing. */
gs_status gs_device_ready(gs_ctx *ctx, const gs_device *dev, const char *who) {
    if (!dev || !dev->rt) return gs_err(ctx, GS_ERR_INVALID_ARG, "%s: no device (open one with gs_device_open)", who);
    return dev->h ? GS_OK : dev->rt->not_open(ctx, who);
}

gs_status gs_device_target(gs_ctx *ctx, gs_device *dev, gs_rt_target *out) {
    memset(out, 0, sizeof *out);
    gs_status s = gs_device_ready(ctx, dev, "the compile target");
    if (s != GS_OK) return s;
    return dev->rt->target(ctx, dev->h, out);
}

gs_status gs_device_query(gs_ctx *ctx, gs_device *dev, const char *fallback, gs_hw *out, char **notes) {
    if (notes) *notes = NULL;
    gs_status s = gs_device_ready(ctx, dev, "gs_hw_query");
    if (s != GS_OK) return s;
    return dev->rt->query_profile(ctx, dev->h, fallback, out, notes);
}

gs_status gs_hw_query(gs_ctx *ctx, gs_device *dev, const char *fallback, gs_hw **out) {
    if (!out) return gs_err(ctx, GS_ERR_INVALID_ARG, "gs_hw_query: out is NULL");
    *out = NULL;
    gs_status s = gs_device_ready(ctx, dev, "gs_hw_query");
    if (s != GS_OK) return s;
    gs_hw *hw = malloc(sizeof *hw);
    if (!hw) return gs_err(ctx, GS_ERR_NOMEM, "gs_hw_query: out of memory");
    s = gs_device_query(ctx, dev, fallback, hw, NULL);
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
    b->rt = dev->rt;
    b->bytes = bytes;
    s = dev->rt->buf_create(ctx, dev->h, bytes, host, &b->h);
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
    return b->dev->rt->buf_read(ctx, b->dev->h, b->h, host, bytes);
}

gs_status gs_buffer_write(gs_ctx *ctx, gs_buffer *b, const void *host, size_t bytes) {
    if (!b || (!host && bytes)) return gs_err(ctx, GS_ERR_INVALID_ARG, "gs_buffer_write: NULL argument");
    if (bytes > b->bytes)
        return gs_err(ctx, GS_ERR_INVALID_ARG, "gs_buffer_write: %zu bytes into a buffer of %zu", bytes, b->bytes);
    return b->dev->rt->buf_write(ctx, b->dev->h, b->h, host, bytes);
}

void gs_buffer_destroy(gs_buffer *b) {
    if (!b) return;
    if (b->h) b->rt->buf_free(b->h);
    free(b);
}

/* ---- programs --------------------------------------------------------------------- */
gs_status gs_dev_prog_load(gs_ctx *ctx, gs_device *dev, const void *image, const char *name, int64_t smem_bytes,
                           gs_dev_prog *out) {
    memset(out, 0, sizeof *out);
    gs_status s = gs_device_ready(ctx, dev, "load a kernel");
    if (s != GS_OK) return s;
    out->dev = dev;
    out->rt = dev->rt;
    return dev->rt->prog_load(ctx, dev->h, image, name, smem_bytes, &out->h);
}

void gs_dev_prog_free(gs_dev_prog *p) {
    if (!p) return;
    if (p->h) p->rt->prog_free(p->h);
    memset(p, 0, sizeof *p);
}

/* True when op takes a bias buffer after its output. */
static bool op_has_bias(const gs_op *op) { return op->has_bias && op->epi.bias_axis >= 0; }

/* Whether buffer i may be the output's memory: an input of an element-wise
 * operator (no reduce axis) indexed exactly as the output, of its type, so
 * that each element is read by the thread (or, staged, the block, before its
 * barrier) that writes it, at the same point: in place. */
static bool may_alias_output(const gs_op *op, int i) {
    if (i >= op->ninputs) return false; /* the bias */
    for (int a = 0; a < op->naxes; a++)
        if (op->axes[a].kind != GS_AXIS_SPATIAL) return false;
    const gs_tensor *x = &op->tensors[i], *o = gs_op_out(op);
    for (int a = 0; a < op->naxes; a++) /* each output element written once */
        if (!gs_tensor_uses_axis(o, a)) return false;
    if (gs_op_tensor_dtype(op, i) != gs_op_tensor_dtype(op, op->ninputs) || x->ndim != o->ndim) return false;
    for (int j = 0; j < x->ndim; j++)
        if (x->shape[j] != o->shape[j] || memcmp(&x->idx[j], &o->idx[j], sizeof x->idx[j])) return false;
    return true;
}

gs_status gs_dev_prog_launch(gs_ctx *ctx, const gs_dev_prog *p, const gs_op *op, gs_buffer *const *bufs, int nbufs,
                             gs_buffer *ws, size_t grid, size_t block, double *elapsed_s) {
    if (elapsed_s) *elapsed_s = 0;
    if (!p || !p->h) return gs_err(ctx, GS_ERR_INVALID_ARG, "launch: no kernel loaded");
    int want = op->ninputs + 1 + (op_has_bias(op) ? 1 : 0);
    if (nbufs != want)
        return gs_err(ctx, GS_ERR_INVALID_ARG, "launch: %s takes %d buffers (inputs, output%s), got %d", op->spec,
                      want, op_has_bias(op) ? ", bias" : "", nbufs);
    gs_karg args[GS_MAX_TENSORS + 1 + GS_HANDLE_MAX_INTS + 3];
    int na = 0;
    for (int i = 0; i < nbufs; i++) {
        if (!bufs || !bufs[i] || bufs[i]->dev != p->dev)
            return gs_err(ctx, GS_ERR_INVALID_ARG, "launch: buffer %d is NULL or lives on another device", i);
        int64_t need = gs_op_buffer_bytes(op, i);
        if ((int64_t)bufs[i]->bytes < need)
            return gs_err(ctx, GS_ERR_INVALID_ARG, "launch: buffer %d (%s) holds %zu bytes, %s needs %lld", i,
                          gs_op_buffer_name(op, i), bufs[i]->bytes, op->spec, (long long)need);
        args[na++] = (gs_karg){.kind = GS_KARG_BUF, .buf = bufs[i]->h};
    }
    /* the output's memory bound to another buffer: a kernel reading what
     * other threads write, unless in place (may_alias_output) */
    const int oi = op->ninputs;
    for (int i = 0; i < nbufs; i++)
        if (i != oi && (bufs[i] == bufs[oi] || bufs[i]->h == bufs[oi]->h) && !may_alias_output(op, i))
            return gs_err(ctx, GS_ERR_INVALID_ARG,
                          "launch: buffer %d (%s) is the output's buffer; %s reads it at other points than it "
                          "writes (only an element-wise operator's input of the output's shape, indexing and type "
                          "may be the output, in place)",
                          i, gs_op_buffer_name(op, i), op->spec);
    na = gs_kernel_scalar_args(op, args, na);
    if (ws) {
        if (ws->dev != p->dev) return gs_err(ctx, GS_ERR_INVALID_ARG, "launch: the workspace lives on another device");
        args[na++] = (gs_karg){.kind = GS_KARG_BUF, .buf = ws->h};
    }
    return p->dev->rt->launch(ctx, p->dev->h, p->h, args, na, grid, block, elapsed_s);
}
