/* cuda.c — the CUDA driver runtime: one device (its primary context),
 * modules loaded from a cubin or PTX image, device buffers and timed 1-D
 * launches.
 *
 * libcuda.so.1 is loaded with dlopen ($GS_CUDA_LIB overrides the path) and
 * cuda.h is not included: the few types, enum values and entry points used
 * are declared below with the signatures and numbers of the CUDA driver API
 * (checked against cuda.h of CUDA 13.0; every value used has been stable
 * since CUDA 11). A machine without a driver, or whose cuInit fails, or
 * that has no device, builds and runs gensor in measurement-free mode:
 * gs_cuda_open returns GS_ERR_CUDA_MISSING with the message
 * "no CUDA device: measurement-free mode (<why>)". Every other failing driver
 * call becomes GS_ERR_CUDA naming the call and cuGetErrorName's answer.
 *
 * Symbol versions: where the driver exports a versioned entry point we ask
 * for the version cuda.h maps the plain name to (cuMemAlloc_v2,
 * cuMemcpyHtoD_v2, cuDevicePrimaryCtxRelease_v2, cuEventDestroy_v2,
 * cuEventElapsedTime_v2, ...); for the latter three an older driver's
 * unversioned symbol is accepted too. The context is the device's primary
 * context (cuDevicePrimaryCtxRetain), which needs no cuCtxCreate version.
 *
 * Threads: each loaded library's entry points live in a table that is
 * created once under a mutex and never freed, so handles opened from
 * different threads are fine; every call makes the handle's context current
 * on the calling thread first. One gs_cuda handle must not be used from two
 * threads at once. Modules and buffers must be freed before their gs_cuda
 * is closed. */
#include "kernels/runtime/runtime.h"

#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the driver API, declared by hand ------------------------------------ */
typedef int CUresult;
typedef int CUdevice;
typedef struct CUctx_st *CUcontext;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUevent_st *CUevent;
typedef struct CUstream_st *CUstream;
typedef unsigned long long CUdeviceptr;

enum { CUDA_SUCCESS = 0 };

/* CUdevice_attribute (cuda.h, CUDA 13.0). */
enum {
    CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 1,
    CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X = 5,
    CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK = 8,
    CU_DEVICE_ATTRIBUTE_WARP_SIZE = 10,
    CU_DEVICE_ATTRIBUTE_CLOCK_RATE = 13,           /* kHz */
    CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16,
    CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE = 36,    /* kHz */
    CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH = 37, /* bits */
    CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE = 38,
    CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR = 39,
    CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75,
    CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76,
    CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR = 81,
    CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR = 82,
    CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97,
    CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR = 106,
};

/* CUfunction_attribute. */
enum {
    CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES = 1,
    CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8,
};

enum { CU_EVENT_DEFAULT = 0 };

/* Shared memory a block may use without the opt-in attribute. */
#define GS_CU_SMEM_DEFAULT (48 * 1024)

typedef CUresult (*pfn_cuInit)(unsigned int flags);
typedef CUresult (*pfn_cuDriverGetVersion)(int *version);
typedef CUresult (*pfn_cuDeviceGetCount)(int *count);
typedef CUresult (*pfn_cuDeviceGet)(CUdevice *dev, int ordinal);
typedef CUresult (*pfn_cuDeviceGetName)(char *name, int len, CUdevice dev);
typedef CUresult (*pfn_cuDeviceGetAttribute)(int *pi, int attrib, CUdevice dev);
typedef CUresult (*pfn_cuDevicePrimaryCtxRetain)(CUcontext *pctx, CUdevice dev);
typedef CUresult (*pfn_cuDevicePrimaryCtxRelease)(CUdevice dev);
typedef CUresult (*pfn_cuCtxSetCurrent)(CUcontext ctx);
typedef CUresult (*pfn_cuCtxSynchronize)(void);
typedef CUresult (*pfn_cuMemAlloc)(CUdeviceptr *dptr, size_t bytes);
typedef CUresult (*pfn_cuMemFree)(CUdeviceptr dptr);
typedef CUresult (*pfn_cuMemcpyHtoD)(CUdeviceptr dst, const void *src, size_t bytes);
typedef CUresult (*pfn_cuMemcpyDtoH)(void *dst, CUdeviceptr src, size_t bytes);
typedef CUresult (*pfn_cuMemsetD8)(CUdeviceptr dst, unsigned char uc, size_t n);
typedef CUresult (*pfn_cuModuleLoadData)(CUmodule *mod, const void *image);
typedef CUresult (*pfn_cuModuleUnload)(CUmodule mod);
typedef CUresult (*pfn_cuModuleGetFunction)(CUfunction *fn, CUmodule mod, const char *name);
typedef CUresult (*pfn_cuFuncGetAttribute)(int *pi, int attrib, CUfunction fn);
typedef CUresult (*pfn_cuFuncSetAttribute)(CUfunction fn, int attrib, int value);
typedef CUresult (*pfn_cuLaunchKernel)(CUfunction f, unsigned int gx, unsigned int gy,
                                       unsigned int gz, unsigned int bx, unsigned int by,
                                       unsigned int bz, unsigned int smem, CUstream stream,
                                       void **params, void **extra);
typedef CUresult (*pfn_cuEventCreate)(CUevent *ev, unsigned int flags);
typedef CUresult (*pfn_cuEventRecord)(CUevent ev, CUstream stream);
typedef CUresult (*pfn_cuEventSynchronize)(CUevent ev);
typedef CUresult (*pfn_cuEventElapsedTime)(float *ms, CUevent start, CUevent end);
typedef CUresult (*pfn_cuEventDestroy)(CUevent ev);
typedef CUresult (*pfn_cuGetErrorName)(CUresult err, const char **str);

/* The entry points of one loaded library. */
typedef struct cu_api {
    char path[512];
    void *handle;
    pfn_cuInit Init;
    pfn_cuDriverGetVersion DriverGetVersion;
    pfn_cuDeviceGetCount DeviceGetCount;
    pfn_cuDeviceGet DeviceGet;
    pfn_cuDeviceGetName DeviceGetName;
    pfn_cuDeviceGetAttribute DeviceGetAttribute;
    pfn_cuDevicePrimaryCtxRetain PrimaryCtxRetain;
    pfn_cuDevicePrimaryCtxRelease PrimaryCtxRelease;
    pfn_cuCtxSetCurrent CtxSetCurrent;
    pfn_cuCtxSynchronize CtxSynchronize;
    pfn_cuMemAlloc MemAlloc;
    pfn_cuMemFree MemFree;
    pfn_cuMemcpyHtoD MemcpyHtoD;
    pfn_cuMemcpyDtoH MemcpyDtoH;
    pfn_cuMemsetD8 MemsetD8;
    pfn_cuModuleLoadData ModuleLoadData;
    pfn_cuModuleUnload ModuleUnload;
    pfn_cuModuleGetFunction ModuleGetFunction;
    pfn_cuFuncGetAttribute FuncGetAttribute;
    pfn_cuFuncSetAttribute FuncSetAttribute;
    pfn_cuLaunchKernel LaunchKernel;
    pfn_cuEventCreate EventCreate;
    pfn_cuEventRecord EventRecord;
    pfn_cuEventSynchronize EventSynchronize;
    pfn_cuEventElapsedTime EventElapsedTime;
    pfn_cuEventDestroy EventDestroy;
    pfn_cuGetErrorName GetErrorName;
} cu_api;

struct gs_cuda {
    const cu_api *api;
    int ordinal;
    CUdevice dev;
    CUcontext context;      /* the retained primary context */
    char name[256];
    int sm;                 /* major*10+minor */
    int driver_version;     /* e.g. 13000 */
    int max_threads_per_block;
    int max_grid_x;
};

struct gs_cuda_mod {
    gs_cuda *cu;
    CUmodule module;
    CUfunction fn;
    char name[128];
    int64_t smem_bytes;     /* what the caller said the kernel uses */
    int64_t static_smem;    /* CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES */
    int64_t dynamic_smem;   /* smem_bytes beyond the static part, passed at launch */
};

struct gs_cuda_buf {
    gs_cuda *cu;
    CUdeviceptr ptr;
    size_t size;  /* bytes the caller asked for (may be 0) */
    size_t alloc; /* bytes allocated (>= 4) */
};

/* ---- loading ---------------------------------------------------------------
 * One table per distinct library path, created on first success and kept
 * for the life of the process (handles point into it). Failures are not
 * cached, so a later call with another $GS_CUDA_LIB tries again. */
#define CU_MAX_LIBS 4
static cu_api *cu_libs[CU_MAX_LIBS];
static int cu_nlibs;
static pthread_mutex_t cu_lock = PTHREAD_MUTEX_INITIALIZER;

/* Every entry point, in the order they are looked up (the first missing one
 * is named); a second name is the older fallback. */
static const gs_dlsym_entry cu_syms[] = {
    {offsetof(cu_api, Init), "cuInit", NULL},
    {offsetof(cu_api, GetErrorName), "cuGetErrorName", NULL},
    {offsetof(cu_api, DriverGetVersion), "cuDriverGetVersion", NULL},
    {offsetof(cu_api, DeviceGetCount), "cuDeviceGetCount", NULL},
    {offsetof(cu_api, DeviceGet), "cuDeviceGet", NULL},
    {offsetof(cu_api, DeviceGetName), "cuDeviceGetName", NULL},
    {offsetof(cu_api, DeviceGetAttribute), "cuDeviceGetAttribute", NULL},
    {offsetof(cu_api, PrimaryCtxRetain), "cuDevicePrimaryCtxRetain", NULL},
    {offsetof(cu_api, PrimaryCtxRelease), "cuDevicePrimaryCtxRelease_v2", "cuDevicePrimaryCtxRelease"},
    {offsetof(cu_api, CtxSetCurrent), "cuCtxSetCurrent", NULL},
    {offsetof(cu_api, CtxSynchronize), "cuCtxSynchronize", NULL},
    {offsetof(cu_api, MemAlloc), "cuMemAlloc_v2", NULL},
    {offsetof(cu_api, MemFree), "cuMemFree_v2", NULL},
    {offsetof(cu_api, MemcpyHtoD), "cuMemcpyHtoD_v2", NULL},
    {offsetof(cu_api, MemcpyDtoH), "cuMemcpyDtoH_v2", NULL},
    {offsetof(cu_api, MemsetD8), "cuMemsetD8_v2", NULL},
    {offsetof(cu_api, ModuleLoadData), "cuModuleLoadData", NULL},
    {offsetof(cu_api, ModuleUnload), "cuModuleUnload", NULL},
    {offsetof(cu_api, ModuleGetFunction), "cuModuleGetFunction", NULL},
    {offsetof(cu_api, FuncGetAttribute), "cuFuncGetAttribute", NULL},
    {offsetof(cu_api, FuncSetAttribute), "cuFuncSetAttribute", NULL},
    {offsetof(cu_api, LaunchKernel), "cuLaunchKernel", NULL},
    {offsetof(cu_api, EventCreate), "cuEventCreate", NULL},
    {offsetof(cu_api, EventRecord), "cuEventRecord", NULL},
    {offsetof(cu_api, EventSynchronize), "cuEventSynchronize", NULL},
    {offsetof(cu_api, EventElapsedTime), "cuEventElapsedTime_v2", "cuEventElapsedTime"},
    {offsetof(cu_api, EventDestroy), "cuEventDestroy_v2", "cuEventDestroy"},
};

/* The entry points of $GS_CUDA_LIB (default libcuda.so.1), or NULL with the
 * reason in why. */
static const cu_api *cu_load(char *why, size_t whylen) {
    const char *env = getenv("GS_CUDA_LIB");
    const char *path = (env && *env) ? env : "libcuda.so.1";
    const cu_api *found = NULL;

    pthread_mutex_lock(&cu_lock);
    for (int i = 0; i < cu_nlibs && !found; i++)
        if (strcmp(cu_libs[i]->path, path) == 0) found = cu_libs[i];
    if (found) {
        pthread_mutex_unlock(&cu_lock);
        return found;
    }

    void *h = gs_dlopen(path, why, whylen); /* under the lock: dlerror is per process state */
    if (!h) {
        pthread_mutex_unlock(&cu_lock);
        return NULL;
    }
    cu_api *a = calloc(1, sizeof *a);
    if (!a) {
        dlclose(h);
        snprintf(why, whylen, "out of memory loading %s", path);
        pthread_mutex_unlock(&cu_lock);
        return NULL;
    }
    const char *missing = NULL;
    if (!gs_dlsym_table(h, a, cu_syms, sizeof cu_syms / sizeof cu_syms[0], &missing)) {
        snprintf(why, whylen, "%s: symbol %s not found; not a CUDA driver library?", path,
                 missing);
        free(a);
        dlclose(h);
        pthread_mutex_unlock(&cu_lock);
        return NULL;
    }
    snprintf(a->path, sizeof a->path, "%s", path);
    a->handle = h;
    /* Past CU_MAX_LIBS distinct paths a table is simply not cached (and so
     * is loaded again on the next call); tables are never freed because
     * open handles point into them. */
    if (cu_nlibs < CU_MAX_LIBS) cu_libs[cu_nlibs++] = a;
    pthread_mutex_unlock(&cu_lock);
    return a;
}

/* ---- errors ------------------------------------------------------------- */
/* The driver's name for r; where cuGetErrorName itself fails (the toolkit's
 * stub library answers everything with CUDA_ERROR_STUB_LIBRARY) the common
 * codes are named from this table (values of cuda.h, CUDA 13.0). */
static const char *cu_errname(const cu_api *a, CUresult r) {
    const char *s = NULL;
    if (a && a->GetErrorName && a->GetErrorName(r, &s) == CUDA_SUCCESS && s) return s;
#define E(name, v) \
    case v: return #name;
    switch (r) {
        E(CUDA_SUCCESS, 0)
        E(CUDA_ERROR_INVALID_VALUE, 1)
        E(CUDA_ERROR_OUT_OF_MEMORY, 2)
        E(CUDA_ERROR_NOT_INITIALIZED, 3)
        E(CUDA_ERROR_DEINITIALIZED, 4)
        E(CUDA_ERROR_STUB_LIBRARY, 34)
        E(CUDA_ERROR_DEVICE_UNAVAILABLE, 46)
        E(CUDA_ERROR_NO_DEVICE, 100)
        E(CUDA_ERROR_INVALID_DEVICE, 101)
        E(CUDA_ERROR_DEVICE_NOT_LICENSED, 102)
        E(CUDA_ERROR_INVALID_IMAGE, 200)
        E(CUDA_ERROR_INVALID_CONTEXT, 201)
        E(CUDA_ERROR_NO_BINARY_FOR_GPU, 209)
        E(CUDA_ERROR_INVALID_PTX, 218)
        E(CUDA_ERROR_JIT_COMPILER_NOT_FOUND, 221)
        E(CUDA_ERROR_UNSUPPORTED_PTX_VERSION, 222)
        E(CUDA_ERROR_INVALID_SOURCE, 300)
        E(CUDA_ERROR_SHARED_OBJECT_INIT_FAILED, 303)
        E(CUDA_ERROR_OPERATING_SYSTEM, 304)
        E(CUDA_ERROR_INVALID_HANDLE, 400)
        E(CUDA_ERROR_NOT_FOUND, 500)
        E(CUDA_ERROR_ILLEGAL_ADDRESS, 700)
        E(CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, 701)
        E(CUDA_ERROR_LAUNCH_FAILED, 719)
        E(CUDA_ERROR_SYSTEM_DRIVER_MISMATCH, 803)
        E(CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE, 804)
        E(CUDA_ERROR_UNKNOWN, 999)
    default: return "unknown CUDA error";
    }
#undef E
}

/* GS_ERR_CUDA naming the call and the code. */
static gs_status cu_fail(gs_ctx *ctx, const cu_api *a, const char *call, CUresult r) {
    return gs_err(ctx, GS_ERR_CUDA, "%s failed: %s (%d)", call, cu_errname(a, r), (int)r);
}

/* GS_OK when the call returned CUDA_SUCCESS, else cu_fail. */
static gs_status cu_call(gs_ctx *ctx, const cu_api *a, const char *call, CUresult r) {
    return r == CUDA_SUCCESS ? GS_OK : cu_fail(ctx, a, call, r);
}

static gs_status cu_missing(gs_ctx *ctx, const char *why) {
    return gs_err(ctx, GS_ERR_CUDA_MISSING, "no CUDA device: measurement-free mode (%s)", why);
}

/* Make cu's context current on this thread. */
static gs_status cu_bind(gs_ctx *ctx, const gs_cuda *cu) {
    return cu_call(ctx, cu->api, "cuCtxSetCurrent", cu->api->CtxSetCurrent(cu->context));
}

static gs_status cu_attr(gs_ctx *ctx, const gs_cuda *cu, int attr, const char *attr_name,
                         int *v) {
    *v = 0;
    CUresult r = cu->api->DeviceGetAttribute(v, attr, cu->dev);
    if (r != CUDA_SUCCESS)
        return gs_err(ctx, GS_ERR_CUDA, "cuDeviceGetAttribute(%s) failed: %s (%d)", attr_name,
                      cu_errname(cu->api, r), (int)r);
    return GS_OK;
}
#define CU_ATTR(ctx, cu, a, v) \
    cu_attr((ctx), (cu), CU_DEVICE_ATTRIBUTE_##a, "CU_DEVICE_ATTRIBUTE_" #a, (v))

/* ---- device ------------------------------------------------------------- */
gs_status gs_cuda_open(gs_ctx *ctx, int device, gs_cuda **out) {
    if (!out) return gs_err(ctx, GS_ERR_INVALID_ARG, "gs_cuda_open: out is NULL");
    *out = NULL;
    if (device < 0)
        return gs_err(ctx, GS_ERR_INVALID_ARG, "gs_cuda_open: device %d is negative", device);

    char why[768];
    const cu_api *a = cu_load(why, sizeof why);
    if (!a) return cu_missing(ctx, why);

    CUresult r = a->Init(0);
    if (r != CUDA_SUCCESS) {
        snprintf(why, sizeof why, "cuInit failed: %s (%d)", cu_errname(a, r), (int)r);
        return cu_missing(ctx, why);
    }
    int n = 0;
    gs_status s = cu_call(ctx, a, "cuDeviceGetCount", a->DeviceGetCount(&n));
    if (s != GS_OK) return s;
    if (n <= 0) return cu_missing(ctx, "0 devices");
    if (device >= n)
        return gs_err(ctx, GS_ERR_INVALID_ARG, "gs_cuda_open: device %d out of range (%d device%s)",
                      device, n, n == 1 ? "" : "s");

    gs_cuda *cu = calloc(1, sizeof *cu);
    if (!cu) return gs_err(ctx, GS_ERR_NOMEM, "gs_cuda_open: out of memory");
    cu->api = a;
    cu->ordinal = device;
    s = cu_call(ctx, a, "cuDeviceGet", a->DeviceGet(&cu->dev, device));
    if (s == GS_OK) s = cu_call(ctx, a, "cuDeviceGetName", a->DeviceGetName(cu->name, (int)sizeof cu->name - 1, cu->dev));
    if (s != GS_OK) goto fail;
    cu->name[sizeof cu->name - 1] = '\0';
    gs_trim_right(cu->name);
    if ((s = cu_call(ctx, a, "cuDriverGetVersion", a->DriverGetVersion(&cu->driver_version))) != GS_OK) goto fail;
    int major = 0, minor = 0;
    if ((s = CU_ATTR(ctx, cu, COMPUTE_CAPABILITY_MAJOR, &major)) != GS_OK ||
        (s = CU_ATTR(ctx, cu, COMPUTE_CAPABILITY_MINOR, &minor)) != GS_OK ||
        (s = CU_ATTR(ctx, cu, MAX_THREADS_PER_BLOCK, &cu->max_threads_per_block)) != GS_OK ||
        (s = CU_ATTR(ctx, cu, MAX_GRID_DIM_X, &cu->max_grid_x)) != GS_OK)
        goto fail;
    cu->sm = major * 10 + minor;
    if ((s = cu_call(ctx, a, "cuDevicePrimaryCtxRetain", a->PrimaryCtxRetain(&cu->context, cu->dev))) != GS_OK) {
        cu->context = NULL;
        goto fail;
    }
    *out = cu;
    return GS_OK;
fail:
    gs_cuda_close(cu);
    return s;
}

void gs_cuda_close(gs_cuda *cu) {
    if (!cu) return;
    if (cu->context) {
        /* Finish outstanding work before the context may go away. */
        if (cu->api->CtxSetCurrent(cu->context) == CUDA_SUCCESS) (void)cu->api->CtxSynchronize();
        (void)cu->api->PrimaryCtxRelease(cu->dev);
    }
    free(cu);
}

const char *gs_cuda_device_name(const gs_cuda *cu) { return cu ? cu->name : ""; }

/* ---- profile from the device's attributes ------------------------------ */
/* FP32 FMA lanes per SM by compute capability (CUDA C Programming Guide,
 * "Arithmetic Instructions" throughput table). 0 when the arch is unknown. */
static int fp32_lanes_for(int sm) {
    int major = sm / 10, minor = sm % 10;
    switch (major) {
    case 5: return 128;                        /* Maxwell */
    case 6: return minor == 0 ? 64 : 128;      /* P100 64; GP10x 128 */
    case 7: return 64;                         /* Volta, Turing */
    case 8: return minor == 0 ? 64 : 128;      /* A100 64; GA10x, Orin, Ada 128 */
    case 9: return 128;                        /* Hopper */
    case 10: case 11: case 12: return 128;     /* Blackwell */
    default: return 0;
    }
}

/* The built-in profile nearest to compute capability sm: an exact match,
 * else the nearest of the same major, else the nearest overall (ties go to
 * the older part). */
static const gs_hw *nearest_builtin(int sm) {
    const gs_hw *best = NULL;
    int best_key = INT_MAX;
    for (int i = 0; i < gs_hw_builtin_count(); i++) {
        const gs_hw *b = gs_hw_builtin(i);
        if (!b) continue;
        int d = b->sm > sm ? b->sm - sm : sm - b->sm;
        int key = (b->sm / 10 == sm / 10 ? 0 : 1000) + 2 * d + (b->sm > sm ? 1 : 0);
        if (key < best_key) {
            best_key = key;
            best = b;
        }
    }
    return best;
}


gs_status gs_cuda_query_profile(gs_ctx *ctx, gs_cuda *cu, gs_hw *out) {
    if (!cu || !out) return gs_err(ctx, GS_ERR_INVALID_ARG, "gs_cuda_query_profile: NULL argument");
    int sms = 0, clock_khz = 0, mem_khz = 0, bus_bits = 0, l2 = 0, smem_block = 0, smem_sm = 0,
        smem_optin = 0, regs_sm = 0, thr_block = 0, thr_sm = 0, blocks_sm = 0, warp = 0;
    gs_status s;
    if ((s = CU_ATTR(ctx, cu, MULTIPROCESSOR_COUNT, &sms)) != GS_OK ||
        (s = CU_ATTR(ctx, cu, CLOCK_RATE, &clock_khz)) != GS_OK ||
        (s = CU_ATTR(ctx, cu, MEMORY_CLOCK_RATE, &mem_khz)) != GS_OK ||
        (s = CU_ATTR(ctx, cu, GLOBAL_MEMORY_BUS_WIDTH, &bus_bits)) != GS_OK ||
        (s = CU_ATTR(ctx, cu, L2_CACHE_SIZE, &l2)) != GS_OK ||
        (s = CU_ATTR(ctx, cu, MAX_SHARED_MEMORY_PER_BLOCK, &smem_block)) != GS_OK ||
        (s = CU_ATTR(ctx, cu, MAX_SHARED_MEMORY_PER_MULTIPROCESSOR, &smem_sm)) != GS_OK ||
        (s = CU_ATTR(ctx, cu, MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, &smem_optin)) != GS_OK ||
        (s = CU_ATTR(ctx, cu, MAX_REGISTERS_PER_MULTIPROCESSOR, &regs_sm)) != GS_OK ||
        (s = CU_ATTR(ctx, cu, MAX_THREADS_PER_BLOCK, &thr_block)) != GS_OK ||
        (s = CU_ATTR(ctx, cu, MAX_THREADS_PER_MULTIPROCESSOR, &thr_sm)) != GS_OK ||
        (s = CU_ATTR(ctx, cu, MAX_BLOCKS_PER_MULTIPROCESSOR, &blocks_sm)) != GS_OK ||
        (s = CU_ATTR(ctx, cu, WARP_SIZE, &warp)) != GS_OK)
        return s;

    const gs_hw *base = nearest_builtin(cu->sm);
    if (!base)
        return gs_err(ctx, GS_ERR_HW_UNKNOWN, "gs_cuda_query_profile: no built-in profile to "
                      "take latencies from");
    gs_hw hw = *base; /* latencies, l2_gbs, launch overhead, banks, transaction size */
    memset(hw.name, 0, sizeof hw.name);
    memset(hw.desc, 0, sizeof hw.desc);
    char guessed[160] = "";
    size_t gl = 0;
#define GUESS(field)                                                                  \
    do {                                                                              \
        int w_ = snprintf(guessed + gl, sizeof guessed - gl, "%s" #field, gl ? "," : ""); \
        if (w_ > 0 && (size_t)w_ < sizeof guessed - gl) gl += (size_t)w_;            \
    } while (0)

    gs_hw_auto_name(cu->name, "cuda", hw.name, sizeof hw.name);
    hw.sm = cu->sm;
    hw.num_sms = sms;
    /* Zero from the driver means "not reported" (e.g. an integrated part
     * without a memory clock): keep the built-in figure and say so. */
    if (clock_khz > 0) hw.clock_mhz = clock_khz / 1000.0;
    else GUESS(clock);
    if (mem_khz > 0 && bus_bits > 0)
        hw.dram_gbs = 2.0 * (double)mem_khz * 1e3 * ((double)bus_bits / 8.0) / 1e9; /* DDR */
    else GUESS(dram);
    if (l2 > 0) hw.l2_bytes = l2;
    else GUESS(l2);
    int lanes = fp32_lanes_for(cu->sm);
    if (lanes > 0) hw.fp32_lanes_per_sm = lanes;
    else {
        hw.fp32_lanes_per_sm = 64;
        GUESS(lanes);
    }
    hw.smem_per_block = smem_block;
    /* Pre-Volta parts report no opt-in limit: it is the default one. */
    hw.smem_per_block_optin = smem_optin > smem_block ? smem_optin : smem_block;
    hw.smem_per_sm = smem_sm > hw.smem_per_block_optin ? smem_sm : hw.smem_per_block_optin;
    hw.regs_per_sm = regs_sm;
    hw.max_threads_per_block = thr_block;
    hw.max_threads_per_sm = thr_sm;
    if (blocks_sm > 0) hw.max_blocks_per_sm = blocks_sm;
    else GUESS(blocks);
    hw.warp_size = warp;
    hw.smem_banks = 32;
    hw.bank_bytes = 4;
    hw.transaction_bytes = 32;
    hw.max_regs_per_thread = 255;
#undef GUESS
    /* desc: built long, then cut to the field (the guessed list goes last). */
    char desc[512];
    snprintf(desc, sizeof desc, "CUDA query: %.40s; latencies from %s%s%s", cu->name,
             base->name, gl ? "; guessed " : "", guessed);
    size_t dl = strlen(desc);
    if (dl >= sizeof hw.desc) dl = sizeof hw.desc - 1;
    memcpy(hw.desc, desc, dl);
    hw.desc[dl] = '\0';

    s = gs_hw_validate(ctx, &hw);
    if (s != GS_OK) return s;
    *out = hw;
    return GS_OK;
}

/* ---- modules ------------------------------------------------------------ */
gs_status gs_cuda_load(gs_ctx *ctx, gs_cuda *cu, const void *image, const char *kernel_name,
                       int64_t smem_bytes, gs_cuda_mod **out) {
    if (out) *out = NULL;
    if (!cu || !image || !kernel_name || !out)
        return gs_err(ctx, GS_ERR_INVALID_ARG, "gs_cuda_load: NULL argument");
    if (!*kernel_name) return gs_err(ctx, GS_ERR_INVALID_ARG, "gs_cuda_load: empty kernel name");
    if (smem_bytes < 0 || smem_bytes > INT_MAX)
        return gs_err(ctx, GS_ERR_INVALID_ARG, "gs_cuda_load: smem_bytes %lld out of range",
                      (long long)smem_bytes);
    gs_status s = cu_bind(ctx, cu);
    if (s != GS_OK) return s;
    const cu_api *a = cu->api;

    gs_cuda_mod *m = calloc(1, sizeof *m);
    if (!m) return gs_err(ctx, GS_ERR_NOMEM, "gs_cuda_load: out of memory");
    m->cu = cu;
    snprintf(m->name, sizeof m->name, "%s", kernel_name);
    m->smem_bytes = smem_bytes;
    CUresult r = a->ModuleLoadData(&m->module, image);
    if (r != CUDA_SUCCESS) {
        m->module = NULL;
        s = gs_err(ctx, GS_ERR_CUDA, "cuModuleLoadData(kernel '%s') failed: %s (%d)", m->name,
                   cu_errname(a, r), (int)r);
        goto fail;
    }
    r = a->ModuleGetFunction(&m->fn, m->module, kernel_name);
    if (r != CUDA_SUCCESS) {
        s = gs_err(ctx, GS_ERR_CUDA, "cuModuleGetFunction('%s') failed: %s (%d)", m->name,
                   cu_errname(a, r), (int)r);
        goto fail;
    }
    int st = 0;
    s = cu_call(ctx, a, "cuFuncGetAttribute(CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES)",
                a->FuncGetAttribute(&st, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, m->fn));
    if (s != GS_OK) goto fail;
    m->static_smem = st;
    /* Our kernels declare their shared memory statically, so this is 0 for
     * them; a kernel with extern __shared__ gets the remainder at launch. */
    m->dynamic_smem = smem_bytes > m->static_smem ? smem_bytes - m->static_smem : 0;
    if (smem_bytes > GS_CU_SMEM_DEFAULT) {
        r = a->FuncSetAttribute(m->fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                (int)m->dynamic_smem);
        if (r != CUDA_SUCCESS) {
            s = gs_err(ctx, GS_ERR_CUDA,
                       "cuFuncSetAttribute(kernel '%s', MAX_DYNAMIC_SHARED_SIZE_BYTES=%lld) "
                       "failed: %s (%d)",
                       m->name, (long long)m->dynamic_smem, cu_errname(a, r), (int)r);
            goto fail;
        }
    }
    *out = m;
    return GS_OK;
fail:
    gs_cuda_unload(m);
    return s;
}

void gs_cuda_unload(gs_cuda_mod *m) {
    if (!m) return;
    if (m->module && m->cu->api->CtxSetCurrent(m->cu->context) == CUDA_SUCCESS)
        (void)m->cu->api->ModuleUnload(m->module);
    free(m);
}

/* ---- buffers ------------------------------------------------------------ */
gs_status gs_cuda_buf_create(gs_ctx *ctx, gs_cuda *cu, size_t bytes, const void *host,
                             gs_cuda_buf **out) {
    if (out) *out = NULL;
    if (!cu || !out) return gs_err(ctx, GS_ERR_INVALID_ARG, "gs_cuda_buf_create: NULL argument");
    gs_status s = cu_bind(ctx, cu);
    if (s != GS_OK) return s;
    const cu_api *a = cu->api;
    gs_cuda_buf *b = calloc(1, sizeof *b);
    if (!b) return gs_err(ctx, GS_ERR_NOMEM, "gs_cuda_buf_create: out of memory");
    b->cu = cu;
    b->size = bytes;
    /* cuMemAlloc rejects 0 bytes: allocate at least 4 so empty tensors
     * still bind, as the OpenCL runtime does. */
    b->alloc = bytes < 4 ? 4 : bytes;
    CUresult r = a->MemAlloc(&b->ptr, b->alloc);
    if (r != CUDA_SUCCESS) {
        b->ptr = 0;
        s = gs_err(ctx, GS_ERR_CUDA, "cuMemAlloc_v2(%zu bytes) failed: %s (%d)", b->alloc,
                   cu_errname(a, r), (int)r);
        goto fail;
    }
    if (host && bytes > 0) {
        if ((s = cu_call(ctx, a, "cuMemcpyHtoD_v2", a->MemcpyHtoD(b->ptr, host, bytes))) != GS_OK) goto fail;
        if (b->alloc > bytes) r = a->MemsetD8(b->ptr + bytes, 0, b->alloc - bytes);
    } else {
        r = a->MemsetD8(b->ptr, 0, b->alloc);
    }
    if ((s = cu_call(ctx, a, "cuMemsetD8_v2", r)) != GS_OK) goto fail;
    *out = b;
    return GS_OK;
fail:
    gs_cuda_buf_free(b);
    return s;
}

gs_status gs_cuda_buf_read(gs_ctx *ctx, gs_cuda *cu, gs_cuda_buf *b, void *host, size_t bytes) {
    if (!cu || !b || (!host && bytes > 0))
        return gs_err(ctx, GS_ERR_INVALID_ARG, "gs_cuda_buf_read: NULL argument");
    if (b->cu != cu)
        return gs_err(ctx, GS_ERR_INVALID_ARG, "gs_cuda_buf_read: buffer belongs to another device handle");
    if (bytes > b->size)
        return gs_err(ctx, GS_ERR_INVALID_ARG,
                      "gs_cuda_buf_read: %zu bytes requested from a %zu-byte buffer", bytes,
                      b->size);
    if (bytes == 0) return GS_OK;
    gs_status s = cu_bind(ctx, cu);
    if (s != GS_OK) return s;
    return cu_call(ctx, cu->api, "cuMemcpyDtoH_v2", cu->api->MemcpyDtoH(host, b->ptr, bytes));
}

gs_status gs_cuda_buf_write(gs_ctx *ctx, gs_cuda *cu, gs_cuda_buf *b, const void *host, size_t bytes) {
    if (!cu || !b || (!host && bytes > 0))
        return gs_err(ctx, GS_ERR_INVALID_ARG, "gs_cuda_buf_write: NULL argument");
    if (b->cu != cu)
        return gs_err(ctx, GS_ERR_INVALID_ARG, "gs_cuda_buf_write: buffer belongs to another device handle");
    if (bytes > b->size)
        return gs_err(ctx, GS_ERR_INVALID_ARG, "gs_cuda_buf_write: %zu bytes into a %zu-byte buffer", bytes, b->size);
    if (bytes == 0) return GS_OK;
    gs_status s = cu_bind(ctx, cu);
    if (s != GS_OK) return s;
    return cu_call(ctx, cu->api, "cuMemcpyHtoD_v2", cu->api->MemcpyHtoD(b->ptr, host, bytes));
}

uint64_t gs_cuda_buf_devptr(const gs_cuda_buf *b) { return b ? (uint64_t)b->ptr : 0; }

void gs_cuda_buf_free(gs_cuda_buf *b) {
    if (!b) return;
    if (b->ptr && b->cu->api->CtxSetCurrent(b->cu->context) == CUDA_SUCCESS)
        (void)b->cu->api->MemFree(b->ptr);
    free(b);
}

/* ---- launch ------------------------------------------------------------- */
typedef union cu_argval {
    CUdeviceptr p;
    int32_t i;
    int64_t l;
    float f;
} cu_argval;

/* The launch's handles and sizes: GS_OK, or GS_ERR_INVALID_ARG saying what is
 * wrong before the driver sees it. */
static gs_status cu_launch_check(gs_ctx *ctx, const gs_cuda *cu, const gs_cuda_mod *m, const gs_karg *args,
                                 int nargs, size_t grid, size_t block) {
    if (!cu || !m || nargs < 0 || (nargs > 0 && !args))
        return gs_err(ctx, GS_ERR_INVALID_ARG, "gs_cuda_launch: NULL argument");
    if (m->cu != cu)
        return gs_err(ctx, GS_ERR_INVALID_ARG, "gs_cuda_launch: module '%s' belongs to another device handle",
                      m->name);
    if (grid == 0 || block == 0)
        return gs_err(ctx, GS_ERR_INVALID_ARG, "gs_cuda_launch: grid=%zu block=%zu must be > 0",
                      grid, block);
    if (block > (size_t)cu->max_threads_per_block)
        return gs_err(ctx, GS_ERR_INVALID_ARG,
                      "gs_cuda_launch: block of %zu threads exceeds the device maximum %d on %s",
                      block, cu->max_threads_per_block, cu->name);
    if (grid > (size_t)cu->max_grid_x || grid > UINT_MAX)
        return gs_err(ctx, GS_ERR_INVALID_ARG,
                      "gs_cuda_launch: grid of %zu blocks exceeds the device maximum %d on %s",
                      grid, cu->max_grid_x, cu->name);
    return GS_OK;
}

/* Marshal: params[i] points at vals[i], the value of argument i typed as the
 * kernel declares it (pointer, int, long long, float). */
static gs_status cu_marshal(gs_ctx *ctx, const gs_cuda *cu, const gs_karg *args, int nargs, cu_argval *vals,
                            void **params) {
    gs_status s = GS_OK;
    for (int i = 0; i < nargs && s == GS_OK; i++) {
        const gs_karg *g = &args[i];
        switch (g->kind) {
        case GS_KARG_BUF: {
            const gs_cuda_buf *b = g->buf;
            if (!b)
                s = gs_err(ctx, GS_ERR_INVALID_ARG, "gs_cuda_launch: argument %d is a NULL buffer", i);
            else if (b->cu != cu)
                s = gs_err(ctx, GS_ERR_INVALID_ARG,
                           "gs_cuda_launch: argument %d is a buffer of another device handle", i);
            else vals[i].p = b->ptr;
            break;
        }
        case GS_KARG_INT: vals[i].i = g->i; break;
        case GS_KARG_LONG: vals[i].l = g->l; break;
        case GS_KARG_FLOAT: vals[i].f = g->f; break;
        default:
            s = gs_err(ctx, GS_ERR_INVALID_ARG, "gs_cuda_launch: argument %d has unknown kind %d",
                       i, (int)g->kind);
        }
        params[i] = &vals[i];
    }
    return s;
}

/* A kernel that failed while running, as the wait (call) reports it. */
static gs_status cu_ran_fail(gs_ctx *ctx, const cu_api *a, const gs_cuda_mod *m, const char *call, CUresult r) {
    return gs_err(ctx, GS_ERR_CUDA, "kernel '%s' failed while running (%s): %s (%d)", m->name, call,
                  cu_errname(a, r), (int)r);
}

/* Launch m in the bound context and wait for it; with elapsed_s, time it
 * between two events recorded around the launch. */
static gs_status cu_run(gs_ctx *ctx, const cu_api *a, const gs_cuda_mod *m, void **params, size_t grid,
                        size_t block, double *elapsed_s) {
    CUevent ev0 = NULL, ev1 = NULL;
    CUresult r;
    gs_status s = GS_OK;
    if (elapsed_s) {
        if ((s = cu_call(ctx, a, "cuEventCreate", a->EventCreate(&ev0, CU_EVENT_DEFAULT))) != GS_OK) ev0 = NULL;
        else if ((s = cu_call(ctx, a, "cuEventCreate", a->EventCreate(&ev1, CU_EVENT_DEFAULT))) != GS_OK) ev1 = NULL;
        else s = cu_call(ctx, a, "cuEventRecord", a->EventRecord(ev0, NULL));
    }
    if (s == GS_OK) {
        r = a->LaunchKernel(m->fn, (unsigned)grid, 1, 1, (unsigned)block, 1, 1, (unsigned)m->dynamic_smem, NULL,
                            params, NULL);
        if (r != CUDA_SUCCESS)
            s = gs_err(ctx, GS_ERR_CUDA, "cuLaunchKernel(kernel '%s', grid=%zu, block=%zu, smem=%lld) failed: %s (%d)",
                       m->name, grid, block, (long long)m->dynamic_smem, cu_errname(a, r), (int)r);
    }
    if (s == GS_OK && elapsed_s) {
        s = cu_call(ctx, a, "cuEventRecord", a->EventRecord(ev1, NULL));
        if (s == GS_OK && (r = a->EventSynchronize(ev1)) != CUDA_SUCCESS)
            s = cu_ran_fail(ctx, a, m, "cuEventSynchronize", r);
    }
    if (s == GS_OK && (r = a->CtxSynchronize()) != CUDA_SUCCESS) s = cu_ran_fail(ctx, a, m, "cuCtxSynchronize", r);
    if (s == GS_OK && elapsed_s) {
        float ms = 0.0f;
        s = cu_call(ctx, a, "cuEventElapsedTime", a->EventElapsedTime(&ms, ev0, ev1));
        if (s == GS_OK) *elapsed_s = ms > 0.0f ? (double)ms * 1e-3 : 0.0;
    }
    if (ev0) (void)a->EventDestroy(ev0);
    if (ev1) (void)a->EventDestroy(ev1);
    return s;
}

gs_status gs_cuda_launch(gs_ctx *ctx, gs_cuda *cu, gs_cuda_mod *m, const gs_karg *args, int nargs,
                         size_t grid, size_t block, double *elapsed_s) {
    if (elapsed_s) *elapsed_s = 0.0;
    gs_status s = cu_launch_check(ctx, cu, m, args, nargs, grid, block);
    if (s != GS_OK) return s;
    size_t na = nargs > 0 ? (size_t)nargs : 1;
    cu_argval *vals = calloc(na, sizeof *vals);
    void **params = calloc(na, sizeof *params);
    if (!vals || !params) {
        free(vals);
        free(params);
        return gs_err(ctx, GS_ERR_NOMEM, "gs_cuda_launch: out of memory");
    }
    s = cu_marshal(ctx, cu, args, nargs, vals, params);
    if (s == GS_OK) s = cu_bind(ctx, cu);
    if (s == GS_OK) s = cu_run(ctx, cu->api, m, nargs > 0 ? params : NULL, grid, block, elapsed_s);
    free(vals);
    free(params);
    return s;
}

/* ---- the runtime table (runtime.h) ---------------------------------------- */
static gs_status rt_open(gs_ctx *ctx, int index, void **out) {
    gs_cuda *cu = NULL;
    gs_status s = gs_cuda_open(ctx, index, &cu);
    *out = cu;
    return s;
}
static gs_status rt_not_open(gs_ctx *ctx, const char *who) {
    return gs_err(ctx, GS_ERR_CUDA_MISSING, "no CUDA device: measurement-free mode (%s needs an open device)", who);
}
static void rt_close(void *dev) { gs_cuda_close(dev); }
static const char *rt_device_name(const void *dev) { return gs_cuda_device_name(dev); }
static gs_status rt_query_profile(gs_ctx *ctx, void *dev, const char *fallback, gs_hw *out, char **notes) {
    (void)fallback; /* every field comes from the device's attributes */
    if (notes) *notes = NULL;
    return gs_cuda_query_profile(ctx, dev, out);
}
/* The device's own arch as a cubin when NVRTC has it, else PTX of an older
 * one (gs_cuda_target, nvrtc.c). */
static gs_status rt_target(gs_ctx *ctx, void *dev, gs_rt_target *out) {
    const gs_cuda *cu = dev;
    *out = (gs_rt_target){.dialect = GS_DIALECT_CUDA, .device_sm = cu->sm};
    return gs_cuda_target(ctx, cu->sm, &out->arch, &out->cubin);
}
static gs_status rt_buf_create(gs_ctx *ctx, void *dev, size_t bytes, const void *host, void **out) {
    gs_cuda_buf *b = NULL;
    gs_status s = gs_cuda_buf_create(ctx, dev, bytes, host, &b);
    *out = b;
    return s;
}
static gs_status rt_buf_read(gs_ctx *ctx, void *dev, void *buf, void *host, size_t bytes) {
    return gs_cuda_buf_read(ctx, dev, buf, host, bytes);
}
static gs_status rt_buf_write(gs_ctx *ctx, void *dev, void *buf, const void *host, size_t bytes) {
    return gs_cuda_buf_write(ctx, dev, buf, host, bytes);
}
static void rt_buf_free(void *buf) { gs_cuda_buf_free(buf); }
static gs_status rt_prog_load(gs_ctx *ctx, void *dev, const void *image, const char *name, int64_t smem_bytes,
                              void **out) {
    gs_cuda_mod *m = NULL;
    gs_status s = gs_cuda_load(ctx, dev, image, name, smem_bytes, &m);
    *out = m;
    return s;
}
static void rt_prog_free(void *prog) { gs_cuda_unload(prog); }
static gs_status rt_launch(gs_ctx *ctx, void *dev, void *prog, const gs_karg *args, int nargs, size_t grid,
                           size_t block, double *elapsed_s) {
    return gs_cuda_launch(ctx, dev, prog, args, nargs, grid, block, elapsed_s);
}

const gs_runtime gs_runtime_cuda = {
    .name = "cuda",
    .backend = GS_BACKEND_CUDA,
    .dialect = GS_DIALECT_CUDA,
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
