/* runtime.h — the device runtimes: NVRTC (nvrtc.c), OpenCL (opencl.c), the CUDA driver
 * (cuda.c), and the gs_device, gs_buffer and program handles over them (device.c). */
#ifndef GS_RUNTIME_H
#define GS_RUNTIME_H

#include "kernels/codegen/codegen.h"

/* ---- NVRTC (loaded with dlopen; no link-time dependency) --------------- */
typedef struct gs_ptxas_stats {
    int registers;
    int64_t spill_store_bytes, spill_load_bytes;
    int64_t smem_bytes;   /* static shared memory ("bytes smem") */
    int64_t stack_bytes;  /* "bytes stack frame" */
} gs_ptxas_stats;

/* True if libnvrtc could be loaded (result cached). On failure ctx says why. */
bool gs_nvrtc_available(gs_ctx *ctx);
/* Arches the installed NVRTC accepts (nvrtcGetSupportedArchs), as 75, 80, ...
 * Writes up to cap values into archs and their count into *n. */
gs_status gs_nvrtc_supported_archs(gs_ctx *ctx, int *archs, int cap, int *n);
/* The supported arch nearest to sm (the smallest supported >= sm, else the
 * largest supported). Returns 0 if NVRTC is missing. */
int gs_nvrtc_nearest_arch(gs_ctx *ctx, int sm);

typedef struct gs_nvrtc_out {
    char *ptx;        /* malloc'd, may be NULL if not requested */
    size_t ptx_len;
    void *cubin;      /* malloc'd, may be NULL if not requested */
    size_t cubin_len;
    char *log;        /* malloc'd compile log (ptxas verbose output included) */
    gs_ptxas_stats stats; /* parsed from the log when a cubin was built */
    double compile_s;
} gs_nvrtc_out;

/* Compile CUDA C source for sm_XX. want_cubin adds -arch=sm_XX (SASS) and
 * --ptxas-options=--verbose and fills stats; otherwise compute_XX PTX only.
 * If sm is not supported returns GS_ERR_ARCH_UNSUPPORTED with a message
 * naming the supported list. */
gs_status gs_nvrtc_compile(gs_ctx *ctx, const char *src, const char *name, int sm,
                           bool want_ptx, bool want_cubin, gs_nvrtc_out *out);
void gs_nvrtc_out_free(gs_nvrtc_out *o);
/* Parse ptxas --verbose text into stats (for the kernel named, or the first). */
bool gs_ptxas_parse(const char *log, gs_ptxas_stats *st);

/* ---- OpenCL runtime (through the ICD loader) --------------------------- */
typedef struct gs_cl gs_cl;       /* platform + device + context + queue */
typedef struct gs_cl_prog gs_cl_prog;
typedef struct gs_cl_buf gs_cl_buf;

/* Open the first available device (prefers GPU, else CPU/PoCL). */
gs_status gs_cl_open(gs_ctx *ctx, gs_cl **out);
void gs_cl_close(gs_cl *cl);
const char *gs_cl_device_name(const gs_cl *cl);
/* Build source; on failure ctx holds the build log. */
gs_status gs_cl_build(gs_ctx *ctx, gs_cl *cl, const char *src, const char *kernel_name,
                      gs_cl_prog **out);
void gs_cl_prog_free(gs_cl_prog *p);
gs_status gs_cl_buf_create(gs_ctx *ctx, gs_cl *cl, size_t bytes, const void *host, gs_cl_buf **out);
gs_status gs_cl_buf_read(gs_ctx *ctx, gs_cl *cl, gs_cl_buf *b, void *host, size_t bytes);
void gs_cl_buf_free(gs_cl_buf *b);

/* Kernel arguments, in order. */
typedef enum gs_karg_kind { GS_KARG_BUF, GS_KARG_INT, GS_KARG_LONG, GS_KARG_FLOAT } gs_karg_kind;
typedef struct gs_cuda_buf gs_cuda_buf;
typedef struct gs_karg {
    gs_karg_kind kind;
    gs_cl_buf *buf;
    gs_cuda_buf *cubuf;
    int32_t i;
    int64_t l;
    float f;
} gs_karg;
/* Launch with global = grid*block work-items and local = block, wait, and
 * return the profiled kernel time in seconds in *elapsed_s (may be NULL). */
gs_status gs_cl_launch(gs_ctx *ctx, gs_cl *cl, gs_cl_prog *p, const gs_karg *args, int nargs,
                       size_t grid, size_t block, double *elapsed_s);

/* ---- OpenCL device query ------------------------------------------------
 * A profile from the device's own numbers (compute units, clock, local
 * memory, work-group size, global memory cache); numbers OpenCL does not
 * report (DRAM bandwidth, latencies) come from the named fallback built-in
 * and are listed in *notes (malloc'd, caller frees; may be NULL). */
gs_status gs_cl_query_profile(gs_ctx *ctx, gs_cl *cl, const char *fallback, gs_hw *out, char **notes);

/* ---- CUDA driver runtime (libcuda.so.1 loaded with dlopen) ---------------
 * With no driver or no device gs_cuda_open returns GS_ERR_CUDA_MISSING with
 * the message "no CUDA device: measurement-free mode (<reason>)"; without an
 * open handle there is nothing else to call (NULL handles: GS_ERR_INVALID_ARG). */
typedef struct gs_cuda gs_cuda;
typedef struct gs_cuda_mod gs_cuda_mod;
gs_status gs_cuda_open(gs_ctx *ctx, int device, gs_cuda **out);
void gs_cuda_close(gs_cuda *cu);
const char *gs_cuda_device_name(const gs_cuda *cu);
/* Profile from device attributes (SMs, clocks, smem per block/SM, registers,
 * L2, memory clock x bus width, FP32 lanes from the compute capability). */
gs_status gs_cuda_query_profile(gs_ctx *ctx, gs_cuda *cu, gs_hw *out);
/* Load a module from a cubin or PTX image (PTX is JIT-compiled by the driver). */
gs_status gs_cuda_load(gs_ctx *ctx, gs_cuda *cu, const void *image, const char *kernel_name, int64_t smem_bytes,
                       gs_cuda_mod **out);
void gs_cuda_unload(gs_cuda_mod *m);
gs_status gs_cuda_buf_create(gs_ctx *ctx, gs_cuda *cu, size_t bytes, const void *host, gs_cuda_buf **out);
gs_status gs_cuda_buf_read(gs_ctx *ctx, gs_cuda *cu, gs_cuda_buf *b, void *host, size_t bytes);
void gs_cuda_buf_free(gs_cuda_buf *b);
/* The buffer's device address (a CUdeviceptr), for handing it to a vendor
 * library (cuBLAS) in the same context; 0 for NULL. Owned by b. */
uint64_t gs_cuda_buf_devptr(const gs_cuda_buf *b);
/* Launch grid x block with the module's dynamic shared memory (opting in
 * with cuFuncSetAttribute above 48 KiB), time it with events. Arguments use
 * gs_karg with .cubuf for buffers. */
gs_status gs_cuda_launch(gs_ctx *ctx, gs_cuda *cu, gs_cuda_mod *m, const gs_karg *args, int nargs, size_t grid,
                         size_t block, double *elapsed_s);

/* Append the scalar arguments after the buffers, in the emitted signature's
 * order (extents, tensor shapes, alpha, beta); returns the new count. */
int gs_kernel_scalar_args(const gs_op *op, gs_karg *args, int na);

/* ---- devices (device.c): gs_device over both runtimes -------------------
 * The public handle of include/gensor.h. gs_device_open makes an owning one;
 * a caller already holding a runtime handle wraps it in a non-owning one on
 * the stack (gs_device_close does nothing to those). */
struct gs_device {
    gs_backend backend;
    gs_cl *cl;   /* GS_BACKEND_OPENCL */
    gs_cuda *cu; /* GS_BACKEND_CUDA */
    bool owned;  /* gs_device_open made it: close closes the runtime and frees it */
};
/* GS_OK when dev has an open runtime; else an error naming what is missing, for who. */
gs_status gs_device_ready(gs_ctx *ctx, const gs_device *dev, const char *who);
void gs_device_wrap_opencl(gs_device *dev, gs_cl *cl);
void gs_device_wrap_cuda(gs_device *dev, gs_cuda *cu);

struct gs_buffer {
    gs_device *dev;
    gs_cl_buf *cl;   /* one of the two, by the device's backend */
    gs_cuda_buf *cu;
    size_t bytes;
};

/* A kernel built (OpenCL) or loaded (CUDA) on a device. */
typedef struct gs_dev_prog {
    gs_device *dev;
    gs_cl_prog *cl;
    gs_cuda_mod *cu;
} gs_dev_prog;
/* OpenCL: build image as source; CUDA: load it as a cubin or PTX image
 * (smem_bytes: the kernel's shared memory, for the opt-in above 48 KiB). */
gs_status gs_dev_prog_load(gs_ctx *ctx, gs_device *dev, const void *image, const char *name, int64_t smem_bytes,
                           gs_dev_prog *out);
void gs_dev_prog_free(gs_dev_prog *p);
/* Launch with op's arguments: bufs (inputs, output, bias: gs_op_buffer
 * order, each large enough, all on p's device), then the extents, shapes,
 * alpha and beta, then split-K's workspace ws when the kernel takes one
 * (NULL otherwise); a 1-D launch of grid blocks of block threads. Waits;
 * *elapsed_s (may be NULL) gets the device-timed kernel time. */
gs_status gs_dev_prog_launch(gs_ctx *ctx, const gs_dev_prog *p, const gs_op *op, gs_buffer *const *bufs, int nbufs,
                             gs_buffer *ws, size_t grid, size_t block, double *elapsed_s);

/* What to compile for a CUDA device of compute capability sm: a cubin for
 * sm when the installed NVRTC has it (*cubin true), else PTX for the newest
 * supported arch below sm (the driver JIT-compiles it forward). */
gs_status gs_cuda_target(gs_ctx *ctx, int sm, int *arch, bool *cubin);

#endif
