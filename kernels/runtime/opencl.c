/* opencl.c — the OpenCL runtime: one device, one context, one in-order
 * profiling queue, programs built from source, buffers and 1-D launches.
 *
 * Everything goes through the ICD loader (-lOpenCL), so any installed
 * platform works; on a machine without a GPU that is PoCL on the CPU, which
 * is what the tests run the OpenCL dialect on. Every failing cl* call becomes
 * GS_ERR_OPENCL with the call's name and the error code's symbolic name in
 * the context; no platform at all is GS_ERR_OPENCL_MISSING.
 *
 * Not thread-safe per object: a gs_cl_prog holds one cl_kernel whose
 * arguments are set at launch, so two threads must not launch the same
 * program at once. */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>

#include "kernels/runtime/runtime.h"

#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef CL_PLATFORM_NOT_FOUND_KHR
#define CL_PLATFORM_NOT_FOUND_KHR -1001
#endif

#define GS_CL_BUILD_OPTS "-cl-std=CL1.2" /* no fast-math: exact float semantics */
#define GS_CL_LOG_MAX 900                /* build-log characters kept in ctx */
#define GS_CL_MAX_DEVICES 64

struct gs_cl {
    cl_platform_id platform;
    cl_device_id device;
    cl_context context;
    cl_command_queue queue; /* in-order, CL_QUEUE_PROFILING_ENABLE */
    cl_device_type type;
    char name[256];         /* device name, trailing blanks trimmed */
    size_t max_wg;          /* CL_DEVICE_MAX_WORK_GROUP_SIZE */
    cl_ulong local_mem;     /* CL_DEVICE_LOCAL_MEM_SIZE in bytes */
};

struct gs_cl_prog {
    cl_program program;
    cl_kernel kernel;
    char name[128];       /* kernel name, for messages */
    cl_uint nargs;        /* CL_KERNEL_NUM_ARGS */
    size_t kernel_wg;     /* CL_KERNEL_WORK_GROUP_SIZE on this device */
    size_t reqd_wg[3];    /* reqd_work_group_size, all 0 when not given */
};

struct gs_cl_buf {
    cl_mem mem;
    size_t size;  /* bytes the caller asked for (may be 0) */
    size_t alloc; /* bytes allocated (>= 4) */
};

/* ---- error names --------------------------------------------------------- */
static const char *cl_err_name(cl_int e) {
#define E(x) \
    case x: return #x;
    switch (e) {
        E(CL_SUCCESS)
        E(CL_DEVICE_NOT_FOUND)
        E(CL_DEVICE_NOT_AVAILABLE)
        E(CL_COMPILER_NOT_AVAILABLE)
        E(CL_MEM_OBJECT_ALLOCATION_FAILURE)
        E(CL_OUT_OF_RESOURCES)
        E(CL_OUT_OF_HOST_MEMORY)
        E(CL_PROFILING_INFO_NOT_AVAILABLE)
        E(CL_MEM_COPY_OVERLAP)
        E(CL_IMAGE_FORMAT_MISMATCH)
        E(CL_IMAGE_FORMAT_NOT_SUPPORTED)
        E(CL_BUILD_PROGRAM_FAILURE)
        E(CL_MAP_FAILURE)
        E(CL_MISALIGNED_SUB_BUFFER_OFFSET)
        E(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST)
        E(CL_COMPILE_PROGRAM_FAILURE)
        E(CL_LINKER_NOT_AVAILABLE)
        E(CL_LINK_PROGRAM_FAILURE)
        E(CL_DEVICE_PARTITION_FAILED)
        E(CL_KERNEL_ARG_INFO_NOT_AVAILABLE)
        E(CL_INVALID_VALUE)
        E(CL_INVALID_DEVICE_TYPE)
        E(CL_INVALID_PLATFORM)
        E(CL_INVALID_DEVICE)
        E(CL_INVALID_CONTEXT)
        E(CL_INVALID_QUEUE_PROPERTIES)
        E(CL_INVALID_COMMAND_QUEUE)
        E(CL_INVALID_HOST_PTR)
        E(CL_INVALID_MEM_OBJECT)
        E(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR)
        E(CL_INVALID_IMAGE_SIZE)
        E(CL_INVALID_SAMPLER)
        E(CL_INVALID_BINARY)
        E(CL_INVALID_BUILD_OPTIONS)
        E(CL_INVALID_PROGRAM)
        E(CL_INVALID_PROGRAM_EXECUTABLE)
        E(CL_INVALID_KERNEL_NAME)
        E(CL_INVALID_KERNEL_DEFINITION)
        E(CL_INVALID_KERNEL)
        E(CL_INVALID_ARG_INDEX)
        E(CL_INVALID_ARG_VALUE)
        E(CL_INVALID_ARG_SIZE)
        E(CL_INVALID_KERNEL_ARGS)
        E(CL_INVALID_WORK_DIMENSION)
        E(CL_INVALID_WORK_GROUP_SIZE)
        E(CL_INVALID_WORK_ITEM_SIZE)
        E(CL_INVALID_GLOBAL_OFFSET)
        E(CL_INVALID_EVENT_WAIT_LIST)
        E(CL_INVALID_EVENT)
        E(CL_INVALID_OPERATION)
        E(CL_INVALID_GL_OBJECT)
        E(CL_INVALID_BUFFER_SIZE)
        E(CL_INVALID_MIP_LEVEL)
        E(CL_INVALID_GLOBAL_WORK_SIZE)
        E(CL_INVALID_PROPERTY)
        E(CL_INVALID_IMAGE_DESCRIPTOR)
        E(CL_INVALID_COMPILER_OPTIONS)
        E(CL_INVALID_LINKER_OPTIONS)
        E(CL_INVALID_DEVICE_PARTITION_COUNT)
        E(CL_PLATFORM_NOT_FOUND_KHR)
    default: return "unknown OpenCL error";
    }
#undef E
}

/* GS_ERR_OPENCL naming the call and the code. */
static gs_status cl_fail(gs_ctx *ctx, const char *call, cl_int e) {
    return gs_err(ctx, GS_ERR_OPENCL, "%s failed: %s (%d)", call, cl_err_name(e), (int)e);
}

/* In a function with a gs_status s and a label `label`: when cond holds, s
 * becomes the failure of call (cl_fail) and control goes to the label. */
#define CL_FAIL_IF(cond, call, label)  \
    do {                               \
        if (cond) {                    \
            s = cl_fail(ctx, call, e); \
            goto label;                \
        }                              \
    } while (0)

/* ---- device selection ---------------------------------------------------- */
/* Case-insensitive substring test (strcasestr is a GNU extension). */
static bool contains_nocase(const char *hay, const char *needle) {
    size_t n = strlen(needle);
    if (n == 0) return true;
    for (; *hay; hay++) {
        size_t i = 0;
        while (i < n && hay[i] &&
               tolower((unsigned char)hay[i]) == tolower((unsigned char)needle[i]))
            i++;
        if (i == n) return true;
    }
    return false;
}

static bool eq_nocase(const char *a, const char *b) {
    for (; *a && *b; a++, b++)
        if (tolower((unsigned char)*a) != tolower((unsigned char)*b)) return false;
    return *a == *b;
}

typedef struct cl_cand {
    cl_platform_id platform;
    cl_device_id device;
    cl_device_type type;
    char name[256];
} cl_cand;

/* Fill cand[] with every available device of every platform. */
static gs_status cl_enumerate(gs_ctx *ctx, cl_cand *cand, int cap, int *ncand) {
    *ncand = 0;
    cl_uint nplat = 0;
    cl_int e = clGetPlatformIDs(0, NULL, &nplat);
    if (e == CL_PLATFORM_NOT_FOUND_KHR || (e == CL_SUCCESS && nplat == 0))
        return gs_err(ctx, GS_ERR_OPENCL_MISSING,
                      "no OpenCL platform found (no ICD registered in /etc/OpenCL/vendors); "
                      "install an OpenCL driver, e.g. 'apt-get install pocl-opencl-icd "
                      "ocl-icd-libopencl1' for the CPU device");
    if (e != CL_SUCCESS) return cl_fail(ctx, "clGetPlatformIDs", e);
    if (nplat > 16) nplat = 16;
    cl_platform_id plats[16];
    e = clGetPlatformIDs(nplat, plats, NULL);
    if (e != CL_SUCCESS) return cl_fail(ctx, "clGetPlatformIDs", e);

    for (cl_uint p = 0; p < nplat && *ncand < cap; p++) {
        cl_uint ndev = 0;
        e = clGetDeviceIDs(plats[p], CL_DEVICE_TYPE_ALL, 0, NULL, &ndev);
        if (e == CL_DEVICE_NOT_FOUND || ndev == 0) continue; /* an empty platform */
        if (e != CL_SUCCESS) return cl_fail(ctx, "clGetDeviceIDs", e);
        cl_device_id devs[GS_CL_MAX_DEVICES];
        if (ndev > GS_CL_MAX_DEVICES) ndev = GS_CL_MAX_DEVICES;
        e = clGetDeviceIDs(plats[p], CL_DEVICE_TYPE_ALL, ndev, devs, NULL);
        if (e != CL_SUCCESS) return cl_fail(ctx, "clGetDeviceIDs", e);
        for (cl_uint d = 0; d < ndev && *ncand < cap; d++) {
            cl_bool avail = CL_FALSE;
            e = clGetDeviceInfo(devs[d], CL_DEVICE_AVAILABLE, sizeof avail, &avail, NULL);
            if (e != CL_SUCCESS || !avail) continue;
            cl_cand *c = &cand[(*ncand)++];
            c->platform = plats[p];
            c->device = devs[d];
            c->type = 0;
            e = clGetDeviceInfo(devs[d], CL_DEVICE_TYPE, sizeof c->type, &c->type, NULL);
            if (e != CL_SUCCESS) return cl_fail(ctx, "clGetDeviceInfo(CL_DEVICE_TYPE)", e);
            memset(c->name, 0, sizeof c->name);
            e = clGetDeviceInfo(devs[d], CL_DEVICE_NAME, sizeof c->name - 1, c->name, NULL);
            if (e != CL_SUCCESS) return cl_fail(ctx, "clGetDeviceInfo(CL_DEVICE_NAME)", e);
            gs_trim_right(c->name);
        }
    }
    if (*ncand == 0)
        return gs_err(ctx, GS_ERR_OPENCL_MISSING,
                      "OpenCL platform(s) found but no available device; "
                      "install a driver such as pocl-opencl-icd (CPU device)");
    return GS_OK;
}

/* Pick a device: GS_CL_DEVICE=cpu|gpu|<name substring>, else the first GPU,
 * else the first device. Returns the index or -1 when the selector matches
 * nothing. */
static int cl_pick(const cl_cand *cand, int n, const char *sel) {
    if (sel && *sel) {
        bool want_cpu = eq_nocase(sel, "cpu"), want_gpu = eq_nocase(sel, "gpu");
        for (int i = 0; i < n; i++) {
            if (want_cpu && (cand[i].type & CL_DEVICE_TYPE_CPU)) return i;
            if (want_gpu && (cand[i].type & CL_DEVICE_TYPE_GPU)) return i;
            if (!want_cpu && !want_gpu && contains_nocase(cand[i].name, sel)) return i;
        }
        return -1;
    }
    for (int i = 0; i < n; i++)
        if (cand[i].type & CL_DEVICE_TYPE_GPU) return i;
    return 0;
}

gs_status gs_cl_open(gs_ctx *ctx, gs_cl **out) {
    if (!out) return gs_err(ctx, GS_ERR_INVALID_ARG, "gs_cl_open: out is NULL");
    *out = NULL;
    cl_cand cand[GS_CL_MAX_DEVICES];
    int n = 0;
    gs_status s = cl_enumerate(ctx, cand, GS_CL_MAX_DEVICES, &n);
    if (s != GS_OK) return s;

    const char *sel = getenv("GS_CL_DEVICE");
    int k = cl_pick(cand, n, sel);
    if (k < 0) {
        char list[512] = "";
        size_t len = 0;
        for (int i = 0; i < n && len < sizeof list; i++) {
            int w = snprintf(list + len, sizeof list - len, "%s'%s'", i ? ", " : "",
                             cand[i].name);
            if (w < 0) break;
            len += (size_t)w;
        }
        return gs_err(ctx, GS_ERR_OPENCL_MISSING,
                      "GS_CL_DEVICE='%s' matches no OpenCL device (use cpu, gpu or a "
                      "substring of one of: %s)", sel, list);
    }

    gs_cl *cl = calloc(1, sizeof *cl);
    if (!cl) return gs_err(ctx, GS_ERR_NOMEM, "gs_cl_open: out of memory");
    cl->platform = cand[k].platform;
    cl->device = cand[k].device;
    cl->type = cand[k].type;
    memcpy(cl->name, cand[k].name, sizeof cl->name);

    cl_int e = clGetDeviceInfo(cl->device, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof cl->max_wg,
                               &cl->max_wg, NULL);
    CL_FAIL_IF(e != CL_SUCCESS, "clGetDeviceInfo(CL_DEVICE_MAX_WORK_GROUP_SIZE)", fail);
    e = clGetDeviceInfo(cl->device, CL_DEVICE_LOCAL_MEM_SIZE, sizeof cl->local_mem,
                        &cl->local_mem, NULL);
    CL_FAIL_IF(e != CL_SUCCESS, "clGetDeviceInfo(CL_DEVICE_LOCAL_MEM_SIZE)", fail);

    cl_context_properties props[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)cl->platform, 0};
    cl->context = clCreateContext(props, 1, &cl->device, NULL, NULL, &e);
    CL_FAIL_IF(!cl->context || e != CL_SUCCESS, "clCreateContext", fail);
    /* clCreateCommandQueue is the 1.2 entry point (deprecated only from 2.0). */
    cl->queue = clCreateCommandQueue(cl->context, cl->device, CL_QUEUE_PROFILING_ENABLE, &e);
    CL_FAIL_IF(!cl->queue || e != CL_SUCCESS, "clCreateCommandQueue", fail);
    *out = cl;
    return GS_OK;
fail:
    gs_cl_close(cl);
    return s;
}

void gs_cl_close(gs_cl *cl) {
    if (!cl) return;
    if (cl->queue) {
        clFinish(cl->queue);
        clReleaseCommandQueue(cl->queue);
    }
    if (cl->context) clReleaseContext(cl->context);
    free(cl);
}

const char *gs_cl_device_name(const gs_cl *cl) { return cl ? cl->name : ""; }

/* ---- programs ------------------------------------------------------------ */
/* The build log (malloc'd, NUL-terminated) or NULL. */
static char *cl_build_log(cl_program prog, cl_device_id dev) {
    size_t n = 0;
    if (clGetProgramBuildInfo(prog, dev, CL_PROGRAM_BUILD_LOG, 0, NULL, &n) != CL_SUCCESS ||
        n == 0)
        return NULL;
    char *log = malloc(n + 1);
    if (!log) return NULL;
    if (clGetProgramBuildInfo(prog, dev, CL_PROGRAM_BUILD_LOG, n, log, NULL) != CL_SUCCESS) {
        free(log);
        return NULL;
    }
    log[n] = '\0';
    gs_trim_right(log);
    return log;
}

gs_status gs_cl_build(gs_ctx *ctx, gs_cl *cl, const char *src, const char *kernel_name,
                      gs_cl_prog **out) {
    if (out) *out = NULL;
    if (!cl || !src || !kernel_name || !out)
        return gs_err(ctx, GS_ERR_INVALID_ARG, "gs_cl_build: NULL argument");
    if (!*kernel_name) return gs_err(ctx, GS_ERR_INVALID_ARG, "gs_cl_build: empty kernel name");

    gs_cl_prog *p = calloc(1, sizeof *p);
    if (!p) return gs_err(ctx, GS_ERR_NOMEM, "gs_cl_build: out of memory");
    snprintf(p->name, sizeof p->name, "%s", kernel_name);
    gs_status s;
    cl_int e;
    p->program = clCreateProgramWithSource(cl->context, 1, &src, NULL, &e);
    CL_FAIL_IF(!p->program || e != CL_SUCCESS, "clCreateProgramWithSource", fail);
    e = clBuildProgram(p->program, 1, &cl->device, GS_CL_BUILD_OPTS, NULL, NULL);
    if (e != CL_SUCCESS) {
        /* The log says what the compiler rejected; keep its head in ctx. */
        char *log = cl_build_log(p->program, cl->device);
        s = gs_err(ctx, GS_ERR_OPENCL, "clBuildProgram failed: %s (%d) for kernel '%s' on %s:\n%.*s",
                   cl_err_name(e), (int)e, p->name, cl->name, GS_CL_LOG_MAX,
                   log ? log : "(no build log)");
        free(log);
        goto fail;
    }
    p->kernel = clCreateKernel(p->program, kernel_name, &e);
    if (!p->kernel || e != CL_SUCCESS) {
        s = gs_err(ctx, GS_ERR_OPENCL, "clCreateKernel('%s') failed: %s (%d)", p->name,
                   cl_err_name(e), (int)e);
        goto fail;
    }
    e = clGetKernelInfo(p->kernel, CL_KERNEL_NUM_ARGS, sizeof p->nargs, &p->nargs, NULL);
    CL_FAIL_IF(e != CL_SUCCESS, "clGetKernelInfo(CL_KERNEL_NUM_ARGS)", fail);
    e = clGetKernelWorkGroupInfo(p->kernel, cl->device, CL_KERNEL_WORK_GROUP_SIZE,
                                 sizeof p->kernel_wg, &p->kernel_wg, NULL);
    CL_FAIL_IF(e != CL_SUCCESS, "clGetKernelWorkGroupInfo(CL_KERNEL_WORK_GROUP_SIZE)", fail);
    e = clGetKernelWorkGroupInfo(p->kernel, cl->device, CL_KERNEL_COMPILE_WORK_GROUP_SIZE,
                                 sizeof p->reqd_wg, p->reqd_wg, NULL);
    CL_FAIL_IF(e != CL_SUCCESS, "clGetKernelWorkGroupInfo(CL_KERNEL_COMPILE_WORK_GROUP_SIZE)", fail);
    *out = p;
    return GS_OK;
fail:
    gs_cl_prog_free(p);
    return s;
}

void gs_cl_prog_free(gs_cl_prog *p) {
    if (!p) return;
    if (p->kernel) clReleaseKernel(p->kernel);
    if (p->program) clReleaseProgram(p->program);
    free(p);
}

/* ---- buffers ------------------------------------------------------------- */
gs_status gs_cl_buf_create(gs_ctx *ctx, gs_cl *cl, size_t bytes, const void *host,
                           gs_cl_buf **out) {
    if (out) *out = NULL;
    if (!cl || !out) return gs_err(ctx, GS_ERR_INVALID_ARG, "gs_cl_buf_create: NULL argument");
    gs_cl_buf *b = calloc(1, sizeof *b);
    if (!b) return gs_err(ctx, GS_ERR_NOMEM, "gs_cl_buf_create: out of memory");
    b->size = bytes;
    /* A zero-sized cl_mem is invalid: allocate at least 4 bytes so empty
     * tensors still bind. With a host copy the allocation is exactly 'bytes',
     * since CL_MEM_COPY_HOST_PTR reads the whole allocation from host. */
    bool copy = host != NULL && bytes > 0;
    b->alloc = copy ? bytes : (bytes < 4 ? 4 : bytes);
    cl_int e;
    b->mem = clCreateBuffer(cl->context, CL_MEM_READ_WRITE | (copy ? CL_MEM_COPY_HOST_PTR : 0),
                            b->alloc, copy ? (void *)host : NULL, &e);
    if (!b->mem || e != CL_SUCCESS) {
        gs_status s = gs_err(ctx, GS_ERR_OPENCL, "clCreateBuffer(%zu bytes) failed: %s (%d)",
                             b->alloc, cl_err_name(e), (int)e);
        gs_cl_buf_free(b);
        return s;
    }
    if (!copy) {
        /* Zero-fill on the device; wait so a failure is reported here. */
        const cl_uchar zero = 0;
        e = clEnqueueFillBuffer(cl->queue, b->mem, &zero, sizeof zero, 0, b->alloc, 0, NULL,
                                NULL);
        if (e == CL_SUCCESS) e = clFinish(cl->queue);
        if (e != CL_SUCCESS) {
            gs_status s = cl_fail(ctx, "clEnqueueFillBuffer", e);
            gs_cl_buf_free(b);
            return s;
        }
    }
    *out = b;
    return GS_OK;
}

gs_status gs_cl_buf_read(gs_ctx *ctx, gs_cl *cl, gs_cl_buf *b, void *host, size_t bytes) {
    if (!cl || !b || (!host && bytes > 0))
        return gs_err(ctx, GS_ERR_INVALID_ARG, "gs_cl_buf_read: NULL argument");
    if (bytes > b->size)
        return gs_err(ctx, GS_ERR_INVALID_ARG,
                      "gs_cl_buf_read: %zu bytes requested from a %zu-byte buffer", bytes,
                      b->size);
    if (bytes == 0) return GS_OK;
    cl_int e = clEnqueueReadBuffer(cl->queue, b->mem, CL_TRUE, 0, bytes, host, 0, NULL, NULL);
    if (e != CL_SUCCESS) return cl_fail(ctx, "clEnqueueReadBuffer", e);
    return GS_OK;
}

gs_status gs_cl_buf_write(gs_ctx *ctx, gs_cl *cl, gs_cl_buf *b, const void *host, size_t bytes) {
    if (!cl || !b || (!host && bytes > 0))
        return gs_err(ctx, GS_ERR_INVALID_ARG, "gs_cl_buf_write: NULL argument");
    if (bytes > b->size)
        return gs_err(ctx, GS_ERR_INVALID_ARG, "gs_cl_buf_write: %zu bytes into a %zu-byte buffer", bytes, b->size);
    if (bytes == 0) return GS_OK;
    cl_int e = clEnqueueWriteBuffer(cl->queue, b->mem, CL_TRUE, 0, bytes, host, 0, NULL, NULL);
    if (e != CL_SUCCESS) return cl_fail(ctx, "clEnqueueWriteBuffer", e);
    return GS_OK;
}

void gs_cl_buf_free(gs_cl_buf *b) {
    if (!b) return;
    if (b->mem) clReleaseMemObject(b->mem);
    free(b);
}

/* ---- launch -------------------------------------------------------------- */
gs_status gs_cl_launch(gs_ctx *ctx, gs_cl *cl, gs_cl_prog *p, const gs_karg *args, int nargs,
                       size_t grid, size_t block, double *elapsed_s) {
    if (elapsed_s) *elapsed_s = 0.0;
    if (!cl || !p || nargs < 0 || (nargs > 0 && !args))
        return gs_err(ctx, GS_ERR_INVALID_ARG, "gs_cl_launch: NULL argument");
    if (grid == 0 || block == 0)
        return gs_err(ctx, GS_ERR_INVALID_ARG, "gs_cl_launch: grid=%zu block=%zu must be > 0",
                      grid, block);
    if (grid > SIZE_MAX / block)
        return gs_err(ctx, GS_ERR_INVALID_ARG,
                      "gs_cl_launch: grid=%zu * block=%zu overflows size_t", grid, block);
    if ((cl_uint)nargs != p->nargs)
        return gs_err(ctx, GS_ERR_INVALID_ARG, "gs_cl_launch: kernel '%s' takes %u arguments, %d given",
                      p->name, (unsigned)p->nargs, nargs);
    /* Work-group limits, checked here so the message says which one. */
    if (block > cl->max_wg)
        return gs_err(ctx, GS_ERR_OPENCL,
                      "gs_cl_launch: block of %zu work-items exceeds the device maximum "
                      "work-group size %zu on %s (CL_INVALID_WORK_GROUP_SIZE)",
                      block, cl->max_wg, cl->name);
    if (p->kernel_wg > 0 && block > p->kernel_wg)
        return gs_err(ctx, GS_ERR_OPENCL,
                      "gs_cl_launch: block of %zu work-items exceeds kernel '%s''s maximum "
                      "work-group size %zu on %s (CL_INVALID_WORK_GROUP_SIZE)",
                      block, p->name, p->kernel_wg, cl->name);
    if (p->reqd_wg[0] != 0 &&
        (p->reqd_wg[0] != block || p->reqd_wg[1] > 1 || p->reqd_wg[2] > 1))
        return gs_err(ctx, GS_ERR_OPENCL,
                      "gs_cl_launch: kernel '%s' requires work-group size (%zu,%zu,%zu), "
                      "launched with (%zu,1,1) (CL_INVALID_WORK_GROUP_SIZE)",
                      p->name, p->reqd_wg[0], p->reqd_wg[1], p->reqd_wg[2], block);

    cl_int e = CL_SUCCESS;
    for (int i = 0; i < nargs; i++) {
        const gs_karg *a = &args[i];
        switch (a->kind) {
        case GS_KARG_BUF:
            if (!a->buf)
                return gs_err(ctx, GS_ERR_INVALID_ARG, "gs_cl_launch: argument %d is a NULL buffer", i);
            e = clSetKernelArg(p->kernel, (cl_uint)i, sizeof(cl_mem), &((gs_cl_buf *)a->buf)->mem);
            break;
        case GS_KARG_INT: {
            cl_int v = a->i;
            e = clSetKernelArg(p->kernel, (cl_uint)i, sizeof v, &v);
            break;
        }
        case GS_KARG_LONG: {
            cl_long v = a->l;
            e = clSetKernelArg(p->kernel, (cl_uint)i, sizeof v, &v);
            break;
        }
        case GS_KARG_FLOAT: {
            cl_float v = a->f;
            e = clSetKernelArg(p->kernel, (cl_uint)i, sizeof v, &v);
            break;
        }
        default:
            return gs_err(ctx, GS_ERR_INVALID_ARG, "gs_cl_launch: argument %d has unknown kind %d",
                          i, (int)a->kind);
        }
        if (e != CL_SUCCESS)
            return gs_err(ctx, GS_ERR_OPENCL, "clSetKernelArg(kernel '%s', arg %d) failed: %s (%d)",
                          p->name, i, cl_err_name(e), (int)e);
    }

    size_t global = grid * block, local = block;
    cl_event ev = NULL;
    e = clEnqueueNDRangeKernel(cl->queue, p->kernel, 1, NULL, &global, &local, 0, NULL, &ev);
    if (e != CL_SUCCESS)
        return gs_err(ctx, GS_ERR_OPENCL,
                      "clEnqueueNDRangeKernel(kernel '%s', global=%zu, local=%zu) failed: %s (%d)",
                      p->name, global, local, cl_err_name(e), (int)e);
    gs_status s = GS_OK;
    e = clFinish(cl->queue);
    CL_FAIL_IF(e != CL_SUCCESS, "clFinish", done);
    /* A command that failed while running reports a negative status. */
    cl_int st = CL_COMPLETE;
    e = clGetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, NULL);
    CL_FAIL_IF(e != CL_SUCCESS, "clGetEventInfo(CL_EVENT_COMMAND_EXECUTION_STATUS)", done);
    if (st < 0) {
        s = gs_err(ctx, GS_ERR_OPENCL, "kernel '%s' failed while running: %s (%d)", p->name,
                   cl_err_name(st), (int)st);
        goto done;
    }
    if (elapsed_s) {
        cl_ulong t0 = 0, t1 = 0;
        e = clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START, sizeof t0, &t0, NULL);
        if (e == CL_SUCCESS)
            e = clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof t1, &t1, NULL);
        CL_FAIL_IF(e != CL_SUCCESS, "clGetEventProfilingInfo", done);
        *elapsed_s = t1 > t0 ? (double)(t1 - t0) * 1e-9 : 0.0;
    }
done:
    clReleaseEvent(ev);
    return s;
}

/* ---- device query -------------------------------------------------------- */

/* clGetDeviceInfo of a fixed-size value, GS_ERR_OPENCL naming the query. */
static gs_status cl_dev_info(gs_ctx *ctx, cl_device_id dev, cl_device_info what,
                             const char *what_name, size_t size, void *v) {
    cl_int e = clGetDeviceInfo(dev, what, size, v, NULL);
    if (e != CL_SUCCESS)
        return gs_err(ctx, GS_ERR_OPENCL, "clGetDeviceInfo(%s) failed: %s (%d)", what_name,
                      cl_err_name(e), (int)e);
    return GS_OK;
}
#define CL_DEV_INFO(ctx, dev, what, v) cl_dev_info((ctx), (dev), (what), #what, sizeof *(v), (v))

/* NVIDIA's cl_nv_device_attribute_query (cl_ext.h), declared here so that
 * nothing depends on the installed headers having it. */
#define GS_CL_DEVICE_COMPUTE_CAPABILITY_MAJOR_NV 0x4000
#define GS_CL_DEVICE_COMPUTE_CAPABILITY_MINOR_NV 0x4001
#define GS_CL_DEVICE_WARP_SIZE_NV 0x4003

/* Does the device list ext among its extensions? */
static bool cl_has_extension(cl_device_id dev, const char *ext) {
    size_t n = 0;
    if (clGetDeviceInfo(dev, CL_DEVICE_EXTENSIONS, 0, NULL, &n) != CL_SUCCESS || n == 0)
        return false;
    char *s = malloc(n + 1);
    if (!s) return false;
    bool found = false;
    if (clGetDeviceInfo(dev, CL_DEVICE_EXTENSIONS, n, s, NULL) == CL_SUCCESS) {
        s[n] = '\0';
        size_t el = strlen(ext);
        for (const char *p = strstr(s, ext); p && !found; p = strstr(p + 1, ext))
            found = (p == s || p[-1] == ' ') && (p[el] == '\0' || p[el] == ' ');
    }
    free(s);
    return found;
}

/* Append a field name to the comma-separated list in fb. */
static void cl_note_field(gs_sb *fb, const char *fields) {
    if (fb->len) gs_sb_puts(fb, ", ");
    gs_sb_puts(fb, fields);
}

/* Overrides from the device: num_sms (compute units), clock_mhz (max clock),
 * shared memory (local memory size), max_threads_per_block (work-group
 * size, capped at 1024 and rounded down to the warp), l2_bytes (global
 * memory cache, when reported), and on a non-GPU device transaction_bytes
 * (the cache line). On NVIDIA's OpenCL the compute capability and warp
 * size come from cl_nv_device_attribute_query. Everything else comes from
 * the fallback built-in and is listed in *notes.
 *
 * On a CPU device (PoCL) the numbers describe the CPU: a "compute unit" is
 * a hardware thread and local memory is ordinary cached memory, so all three
 * shared-memory limits are set to the local memory size (which keeps
 * block <= opt-in <= per-SM). The warp notion does not apply there; the
 * profile keeps the fallback's warp_size (32), the unit in which the model
 * counts threads, unless the work-group limit is below it. */
/* The numbers every OpenCL device reports, read and checked. */
typedef struct cl_numbers {
    cl_uint cus, clock, line; /* compute units, max clock (MHz), global cache line (bytes) */
    cl_ulong local, cache;    /* local memory, global memory cache (bytes) */
    size_t wg;                /* max work-group size */
} cl_numbers;

static gs_status cl_read_numbers(gs_ctx *ctx, const gs_cl *cl, cl_numbers *n) {
    memset(n, 0, sizeof *n);
    gs_status s;
    if ((s = CL_DEV_INFO(ctx, cl->device, CL_DEVICE_MAX_COMPUTE_UNITS, &n->cus)) != GS_OK ||
        (s = CL_DEV_INFO(ctx, cl->device, CL_DEVICE_MAX_CLOCK_FREQUENCY, &n->clock)) != GS_OK ||
        (s = CL_DEV_INFO(ctx, cl->device, CL_DEVICE_LOCAL_MEM_SIZE, &n->local)) != GS_OK ||
        (s = CL_DEV_INFO(ctx, cl->device, CL_DEVICE_MAX_WORK_GROUP_SIZE, &n->wg)) != GS_OK ||
        (s = CL_DEV_INFO(ctx, cl->device, CL_DEVICE_GLOBAL_MEM_CACHE_SIZE, &n->cache)) != GS_OK ||
        (s = CL_DEV_INFO(ctx, cl->device, CL_DEVICE_GLOBAL_MEM_CACHELINE_SIZE, &n->line)) != GS_OK)
        return s;
    if (n->cus == 0 || n->cus > INT32_MAX)
        return gs_err(ctx, GS_ERR_HW_INVALID, "OpenCL device %s reports %u compute units",
                      cl->name, (unsigned)n->cus);
    if (n->local == 0 || n->local > (cl_ulong)INT64_MAX)
        return gs_err(ctx, GS_ERR_HW_INVALID, "OpenCL device %s reports %llu bytes of local memory",
                      cl->name, (unsigned long long)n->local);
    if (n->wg == 0)
        return gs_err(ctx, GS_ERR_HW_INVALID, "OpenCL device %s reports a maximum work-group size of 0",
                      cl->name);
    return GS_OK;
}

/* Compute capability and warp size: only NVIDIA's OpenCL tells. What it
 * does not tell stays the fallback's and is noted in fb. */
static void cl_nv_arch(const gs_cl *cl, gs_hw *hw, gs_sb *fb) {
    bool nv = cl_has_extension(cl->device, "cl_nv_device_attribute_query");
    cl_uint ccmaj = 0, ccmin = 0, nvwarp = 0;
    if (nv && clGetDeviceInfo(cl->device, GS_CL_DEVICE_COMPUTE_CAPABILITY_MAJOR_NV, sizeof ccmaj,
                              &ccmaj, NULL) == CL_SUCCESS &&
        clGetDeviceInfo(cl->device, GS_CL_DEVICE_COMPUTE_CAPABILITY_MINOR_NV, sizeof ccmin, &ccmin,
                        NULL) == CL_SUCCESS &&
        ccmaj >= 1 && ccmaj <= 20 && ccmin <= 9)
        hw->sm = (int)(ccmaj * 10 + ccmin);
    else cl_note_field(fb, "sm");
    if (nv && clGetDeviceInfo(cl->device, GS_CL_DEVICE_WARP_SIZE_NV, sizeof nvwarp, &nvwarp,
                              NULL) == CL_SUCCESS &&
        nvwarp > 0 && nvwarp <= 1024)
        hw->warp_size = (int)nvwarp;
    else cl_note_field(fb, "warp_size");
}

/* The device's numbers into hw (a copy of the fallback base); the fields
 * left to the fallback are noted in fb. */
static void cl_fill_profile(const gs_cl *cl, const cl_numbers *n, const gs_hw *base, gs_hw *hw, gs_sb *fb) {
    bool gpu = (cl->type & CL_DEVICE_TYPE_GPU) != 0;
    gs_hw_auto_name(cl->name, "opencl", hw->name, sizeof hw->name);
    hw->num_sms = (int)n->cus;
    cl_nv_arch(cl, hw, fb);

    if (n->clock > 0) hw->clock_mhz = (double)n->clock;
    else cl_note_field(fb, "clock_mhz");
    cl_note_field(fb, "fp32_lanes_per_sm, dram_gbs, dram_latency_ns");
    if (n->cache > 0 && n->cache <= (cl_ulong)INT64_MAX) hw->l2_bytes = (int64_t)n->cache;
    else cl_note_field(fb, "l2_bytes");
    cl_note_field(fb, "l2_gbs, l2_latency_ns");

    /* Shared memory: every block may use the whole local memory. On a GPU
     * an SM usually holds more than one block's worth; keep the fallback's
     * per-SM figure when it is larger. */
    hw->smem_per_block = (int64_t)n->local;
    hw->smem_per_block_optin = (int64_t)n->local;
    if (gpu && base->smem_per_sm > (int64_t)n->local) cl_note_field(fb, "smem_per_sm");
    else hw->smem_per_sm = (int64_t)n->local;
    cl_note_field(fb, "smem_banks, bank_bytes, smem_latency_ns, regs_per_sm, max_regs_per_thread");

    /* Threads: the work-group limit, at most 1024, in whole warps. A device
     * whose limit is below one warp gets that limit as its warp. */
    size_t tpb = n->wg < 1024 ? n->wg : 1024;
    if (tpb < (size_t)hw->warp_size) hw->warp_size = (int)tpb;
    hw->max_threads_per_block = (int)(tpb - tpb % (size_t)hw->warp_size);
    if (hw->max_threads_per_sm < hw->max_threads_per_block)
        hw->max_threads_per_sm = hw->max_threads_per_block;
    else cl_note_field(fb, "max_threads_per_sm");
    cl_note_field(fb, "max_blocks_per_sm");
    /* On a CPU the memory transaction is the cache line; a GPU's sector
     * (32 B) is not what CL_DEVICE_GLOBAL_MEM_CACHELINE_SIZE reports. */
    if (!gpu && n->line > 0 && n->line <= 4096) hw->transaction_bytes = (int)n->line;
    else cl_note_field(fb, "transaction_bytes");
    cl_note_field(fb, "launch_overhead_us");
    /* Tensor cores: a CPU has none, so its model never prices an mma plan
     * (the emulated mma still runs when a spec asks for one). A GPU keeps
     * the fallback's rates: no OpenCL query reports them. */
    if (!gpu) {
        hw->tc_f16_flops_per_sm = hw->tc_bf16_flops_per_sm = hw->tc_tf32_flops_per_sm = 0;
    } else cl_note_field(fb, "tc_*_flops_per_sm, mma_sync_efficiency");

    char desc[512];
    snprintf(desc, sizeof desc, "OpenCL device query: %.40s; rest from %s", cl->name, base->name);
    size_t dl = strlen(desc);
    if (dl >= sizeof hw->desc) dl = sizeof hw->desc - 1;
    memcpy(hw->desc, desc, dl);
    hw->desc[dl] = '\0';
}

/* What the device said and which fields came from the fallback, for the
 * user (malloc'd; NULL when out of memory). */
static char *cl_notes(const gs_cl *cl, const cl_numbers *n, const gs_hw *base, const gs_sb *fb) {
    gs_sb nb;
    gs_sb_init(&nb);
    gs_sb_printf(&nb,
                 "OpenCL device '%s' (%u compute units, %u MHz, %llu B local memory, "
                 "work-group %zu, %llu B global cache, %u B lines); from fallback '%s': %s",
                 cl->name, (unsigned)n->cus, (unsigned)n->clock, (unsigned long long)n->local, n->wg,
                 (unsigned long long)n->cache, (unsigned)n->line, base->name, fb->buf ? fb->buf : "");
    if (!(cl->type & CL_DEVICE_TYPE_GPU))
        gs_sb_puts(&nb, "; not a GPU: warp_size is the model's thread unit, not hardware");
    return gs_sb_take(&nb);
}

gs_status gs_cl_query_profile(gs_ctx *ctx, gs_cl *cl, const char *fallback, gs_hw *out, char **notes) {
    if (notes) *notes = NULL;
    if (!cl || !fallback || !out)
        return gs_err(ctx, GS_ERR_INVALID_ARG, "gs_cl_query_profile: NULL argument");
    const gs_hw *base = gs_hw_find_builtin(fallback);
    if (!base)
        return gs_err(ctx, GS_ERR_HW_UNKNOWN,
                      "gs_cl_query_profile: unknown fallback profile '%s' (see 'gensor hw list')",
                      fallback);
    cl_numbers n;
    gs_status s = cl_read_numbers(ctx, cl, &n);
    if (s != GS_OK) return s;

    gs_hw hw = *base;
    memset(hw.name, 0, sizeof hw.name);
    memset(hw.desc, 0, sizeof hw.desc);
    gs_sb fb; /* fields taken from the fallback */
    gs_sb_init(&fb);
    cl_fill_profile(cl, &n, base, &hw, &fb);
    s = gs_hw_validate(ctx, &hw);
    if (s == GS_OK && notes) {
        *notes = cl_notes(cl, &n, base, &fb);
        if (!*notes) s = gs_err(ctx, GS_ERR_NOMEM, "gs_cl_query_profile: out of memory");
    }
    gs_sb_free(&fb);
    if (s == GS_OK) *out = hw;
    return s;
}

/* ---- the runtime table (runtime.h) ---------------------------------------- */
static gs_status rt_open(gs_ctx *ctx, int index, void **out) {
    *out = NULL;
    if (index != 0) /* one device per process: GS_CL_DEVICE picks it */
        return gs_err(ctx, GS_ERR_INVALID_ARG,
                      "gs_device_open: device index %d (OpenCL takes 0; GS_CL_DEVICE=cpu|gpu|NAME picks the device)",
                      index);
    gs_cl *cl = NULL;
    gs_status s = gs_cl_open(ctx, &cl);
    *out = cl;
    return s;
}
static gs_status rt_not_open(gs_ctx *ctx, const char *who) {
    return gs_err(ctx, GS_ERR_OPENCL_MISSING, "%s: no OpenCL device", who);
}
static void rt_close(void *dev) { gs_cl_close(dev); }
static const char *rt_device_name(const void *dev) { return gs_cl_device_name(dev); }
static gs_status rt_query_profile(gs_ctx *ctx, void *dev, const char *fallback, gs_hw *out, char **notes) {
    return gs_cl_query_profile(ctx, dev, fallback ? fallback : "rtx3090", out, notes);
}
static gs_status rt_target(gs_ctx *ctx, void *dev, gs_rt_target *out) {
    (void)ctx;
    (void)dev;
    *out = (gs_rt_target){.dialect = GS_DIALECT_OPENCL};
    return GS_OK;
}
static gs_status rt_buf_create(gs_ctx *ctx, void *dev, size_t bytes, const void *host, void **out) {
    gs_cl_buf *b = NULL;
    gs_status s = gs_cl_buf_create(ctx, dev, bytes, host, &b);
    *out = b;
    return s;
}
static gs_status rt_buf_read(gs_ctx *ctx, void *dev, void *buf, void *host, size_t bytes) {
    return gs_cl_buf_read(ctx, dev, buf, host, bytes);
}
static gs_status rt_buf_write(gs_ctx *ctx, void *dev, void *buf, const void *host, size_t bytes) {
    return gs_cl_buf_write(ctx, dev, buf, host, bytes);
}
static void rt_buf_free(void *buf) { gs_cl_buf_free(buf); }
static gs_status rt_prog_load(gs_ctx *ctx, void *dev, const void *image, const char *name, int64_t smem_bytes,
                              void **out) {
    (void)smem_bytes; /* OpenCL sizes local memory itself */
    gs_cl_prog *p = NULL;
    gs_status s = gs_cl_build(ctx, dev, image, name, &p);
    *out = p;
    return s;
}
static void rt_prog_free(void *prog) { gs_cl_prog_free(prog); }
static gs_status rt_launch(gs_ctx *ctx, void *dev, void *prog, const gs_karg *args, int nargs, size_t grid,
                           size_t block, double *elapsed_s) {
    return gs_cl_launch(ctx, dev, prog, args, nargs, grid, block, elapsed_s);
}

const gs_runtime gs_runtime_opencl = {
    .name = "opencl",
    .backend = GS_BACKEND_OPENCL,
    .dialect = GS_DIALECT_OPENCL,
    .open = rt_open,
    .not_open = rt_not_open,
    .close = rt_close,
    .device_name = rt_device_name,
    .query_profile = rt_query_profile,
    .target = rt_target,
    .buf_create = rt_buf_create,
    .buf_read = rt_buf_read,
    .buf_write = rt_buf_write,
    .buf_free = rt_buf_free,
    .prog_load = rt_prog_load,
    .prog_free = rt_prog_free,
    .launch = rt_launch,
};
