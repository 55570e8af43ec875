/* runtime.h — the device runtimes: NVRTC (nvrtc.c), OpenCL (opencl.c), the CUDA driver
 * (cuda.c), the one interface both runtimes implement (gs_runtime: a table of function
 * pointers, as ggml's backend interface), and the gs_device, gs_buffer and program
 * handles over that table (device.c).
 *
 * Above this room (services, CLI) code goes through gs_device and the table only;
 * the gs_cl_* and gs_cuda_* functions below are for the runtime files themselves,
 * the tests of a runtime (test_opencl.c, test_cuda.c, test_clquery.c) and the GPU
 * experiments that hand buffers to cuBLAS. */
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
/* Copy bytes from host into the buffer's start (blocking). */
gs_status gs_cl_buf_write(gs_ctx *ctx, gs_cl *cl, gs_cl_buf *b, const void *host, size_t bytes);
void gs_cl_buf_free(gs_cl_buf *b);

/* Kernel arguments, in order. A buffer is the launching runtime's own
 * (a gs_cl_buf * for OpenCL, a gs_cuda_buf * for CUDA). */
typedef enum gs_karg_kind { GS_KARG_BUF, GS_KARG_INT, GS_KARG_LONG, GS_KARG_FLOAT } gs_karg_kind;
typedef struct gs_cuda_buf gs_cuda_buf;
typedef struct gs_karg {
    gs_karg_kind kind;
    void *buf;
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
gs_status gs_cuda_buf_write(gs_ctx *ctx, gs_cuda *cu, gs_cuda_buf *b, const void *host, size_t bytes);
void gs_cuda_buf_free(gs_cuda_buf *b);
/* The buffer's device address (a CUdeviceptr), for handing it to a vendor
 * library (cuBLAS) in the same context; 0 for NULL. Owned by b. */
uint64_t gs_cuda_buf_devptr(const gs_cuda_buf *b);
/* Launch grid x block with the module's dynamic shared memory (opting in
 * with cuFuncSetAttribute above 48 KiB), time it with events. Buffer
 * arguments are gs_cuda_buf *. */
gs_status gs_cuda_launch(gs_ctx *ctx, gs_cuda *cu, gs_cuda_mod *m, const gs_karg *args, int nargs, size_t grid,
                         size_t block, double *elapsed_s);

/* Append the scalar arguments after the buffers, in the emitted signature's
 * order (extents, tensor shapes, alpha, beta); returns the new count. */
int gs_kernel_scalar_args(const gs_op *op, gs_karg *args, int na);

/* ---- the runtime interface ---------------------------------------------------
 * One table per runtime, defined in the runtime's own file (gs_runtime_opencl in
 * opencl.c, gs_runtime_cuda in cuda.c). A handle (void *) is the runtime's own
 * device, buffer or program object; the table's functions take their own kind only.
 * Every function is given non-NULL handles by device.c, which checks first. */

/* What a service compiles for the device: the dialect it runs, and for CUDA
 * the NVRTC arch (the device's own when NVRTC has it: a cubin; else PTX for
 * the newest supported arch below, which the driver JIT-compiles forward). */
typedef struct gs_rt_target {
    gs_dialect dialect;
    int device_sm;  /* CUDA: the device's compute capability (major*10+minor); OpenCL: 0 */
    int arch;       /* CUDA: sm_XX to compile for; OpenCL: 0 */
    bool cubin;     /* CUDA: load a cubin for arch (true) or its PTX (false) */
} gs_rt_target;

typedef struct gs_runtime {
    const char *name;   /* "opencl", "cuda" */
    gs_backend backend;
    gs_dialect dialect; /* the source its programs are made from */
    /* Open device index; without the runtime or a device the runtime's
     * *_MISSING status with a message saying why. */
    gs_status (*open)(gs_ctx *ctx, int index, void **out);
    /* The error for a device of this runtime that is not open, said for who
     * (GS_ERR_OPENCL_MISSING, GS_ERR_CUDA_MISSING with its message). */
    gs_status (*not_open)(gs_ctx *ctx, const char *who);
    void (*close)(void *dev);
    const char *(*device_name)(const void *dev);
    /* The device's profile; fallback names the built-in profile supplying
     * what the runtime cannot query (OpenCL), notes (may be NULL) receives
     * a malloc'd line saying which fields came from it. */
    gs_status (*query_profile)(gs_ctx *ctx, void *dev, const char *fallback, gs_hw *out, char **notes);
    /* What to compile for the device (gs_rt_target). CUDA: needs NVRTC. */
    gs_status (*target)(gs_ctx *ctx, void *dev, gs_rt_target *out);
    /* Buffers: zero-filled unless host is given; read and write copy from
     * and to the start, blocking. */
    gs_status (*buf_create)(gs_ctx *ctx, void *dev, size_t bytes, const void *host, void **out);
    gs_status (*buf_read)(gs_ctx *ctx, void *dev, void *buf, void *host, size_t bytes);
    gs_status (*buf_write)(gs_ctx *ctx, void *dev, void *buf, const void *host, size_t bytes);
    void (*buf_free)(void *buf);
    /* A program: OpenCL builds image as source; CUDA loads it as a cubin or
     * PTX image, with smem_bytes (the kernel's whole shared memory) for the
     * opt-in above 48 KiB. */
    gs_status (*prog_load)(gs_ctx *ctx, void *dev, const void *image, const char *name, int64_t smem_bytes,
                           void **out);
    void (*prog_free)(void *prog);
    /* A 1-D launch of grid blocks of block threads with args (buffers are
     * this runtime's); waits, and *elapsed_s (may be NULL) gets the kernel
     * time from device events. */
    gs_status (*launch)(gs_ctx *ctx, void *dev, void *prog, const gs_karg *args, int nargs, size_t grid,
                        size_t block, double *elapsed_s);
} gs_runtime;

extern const gs_runtime gs_runtime_opencl;
extern const gs_runtime gs_runtime_cuda;
/* The table of a backend; NULL for an unknown one. */
const gs_runtime *gs_runtime_of(gs_backend b);

/* ---- devices (device.c): gs_device over a runtime table ---------------------
 * The public handle of include/gensor.h. gs_device_open makes an owning one;
 * a caller already holding a runtime handle wraps it in a non-owning one on
 * the stack (gs_device_close does nothing to those). */
struct gs_device {
    const gs_runtime *rt;
    void *h;     /* the runtime's device (gs_cl *, gs_cuda *) */
    bool owned;  /* gs_device_open made it: close closes the runtime and frees it */
};
/* GS_OK when dev has an open runtime; else an error naming what is missing, for who. */
gs_status gs_device_ready(gs_ctx *ctx, const gs_device *dev, const char *who);
/* A non-owning device over handle h of runtime rt (h NULL: not ready). */
void gs_device_wrap(gs_device *dev, const gs_runtime *rt, void *h);
/* The runtime's device handle (for the tests of a runtime and the GPU
 * experiments that hand buffers to cuBLAS); NULL for NULL. */
void *gs_device_handle(const gs_device *dev);
/* What to compile for dev (gs_rt_target). */
gs_status gs_device_target(gs_ctx *ctx, gs_device *dev, gs_rt_target *out);
/* The dialect dev runs. */
gs_dialect gs_device_dialect(const gs_device *dev);
/* Short name of dev's runtime ("opencl", "cuda"; "" for NULL). */
const char *gs_device_runtime_name(const gs_device *dev);
/* dev's profile into *out (gs_hw_query without the allocation), with
 * notes (may be NULL: malloc'd, caller frees) naming the fields taken from
 * the built-in fallback (NULL: "rtx3090") that the runtime cannot query. */
gs_status gs_device_query(gs_ctx *ctx, gs_device *dev, const char *fallback, gs_hw *out, char **notes);

struct gs_buffer {
    gs_device *dev;
    const gs_runtime *rt; /* dev's table, kept so freeing does not read dev */
    void *h;        /* the runtime's buffer */
    size_t bytes;
};

/* A kernel built (OpenCL) or loaded (CUDA) on a device. */
typedef struct gs_dev_prog {
    gs_device *dev;
    const gs_runtime *rt; /* dev's table, kept so freeing does not read dev */
    void *h;        /* the runtime's program; NULL when none is loaded */
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
