/* test_clquery.c — a hardware profile from the OpenCL device's own numbers
 * (gs_cl_query_profile). Runs on whatever device the ICD loader offers
 * (PoCL on the CPU here) and skips with a message when there is none. The
 * expected numbers are read from the device directly, next to the query. */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>

#include "tests/test_common.h"

#include <criterion/criterion.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

TestSuite(clquery, .timeout = 120);

/* The cl_device_id whose trimmed name is name (the device gs_cl_open chose;
 * the first match is enough for the numbers compared here). */
static cl_device_id find_device(const char *name) {
    cl_platform_id plats[16];
    cl_uint np = 0;
    if (clGetPlatformIDs(16, plats, &np) != CL_SUCCESS) return NULL;
    if (np > 16) np = 16;
    for (cl_uint p = 0; p < np; p++) {
        cl_device_id devs[64];
        cl_uint nd = 0;
        if (clGetDeviceIDs(plats[p], CL_DEVICE_TYPE_ALL, 64, devs, &nd) != CL_SUCCESS) continue;
        if (nd > 64) nd = 64;
        for (cl_uint d = 0; d < nd; d++) {
            char n[256] = "";
            if (clGetDeviceInfo(devs[d], CL_DEVICE_NAME, sizeof n - 1, n, NULL) != CL_SUCCESS)
                continue;
            size_t l = strlen(n);
            while (l > 0 && isspace((unsigned char)n[l - 1])) n[--l] = '\0';
            if (strcmp(n, name) == 0) return devs[d];
        }
    }
    return NULL;
}

Test(clquery, profile_from_device_validates) {
    gs_ctx *ctx = gs_ctx_create();
    gs_device *cl = gs_test_open_dev(ctx);
    gs_hw hw;
    char *notes = NULL;
    cr_assert_eq(gs_cl_query_profile(ctx, gs_device_handle(cl), "rtx3090", &hw, &notes), GS_OK, "%s",
                 gs_ctx_errmsg(ctx));
    cr_assert_eq(gs_hw_validate(ctx, &hw), GS_OK, "%s", gs_ctx_errmsg(ctx));
    cr_assert_not_null(notes);
    cr_log_info("%s -> %s: %s", gs_device_name(cl), hw.name, notes);

    cl_device_id dev = find_device(gs_device_name(cl));
    cr_assert_not_null(dev, "device '%s' not found again", gs_device_name(cl));
    cl_uint cus = 0, clock = 0;
    cl_ulong local = 0, cache = 0;
    size_t wg = 0;
    cr_assert_eq(clGetDeviceInfo(dev, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof cus, &cus, NULL), CL_SUCCESS);
    cr_assert_eq(clGetDeviceInfo(dev, CL_DEVICE_MAX_CLOCK_FREQUENCY, sizeof clock, &clock, NULL), CL_SUCCESS);
    cr_assert_eq(clGetDeviceInfo(dev, CL_DEVICE_LOCAL_MEM_SIZE, sizeof local, &local, NULL), CL_SUCCESS);
    cr_assert_eq(clGetDeviceInfo(dev, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof wg, &wg, NULL), CL_SUCCESS);
    cr_assert_eq(clGetDeviceInfo(dev, CL_DEVICE_GLOBAL_MEM_CACHE_SIZE, sizeof cache, &cache, NULL),
                 CL_SUCCESS);

    cr_assert_eq(hw.num_sms, (int)cus, "num_sms %d, device has %u compute units", hw.num_sms,
                 (unsigned)cus);
    if (clock > 0) cr_assert_eq(hw.clock_mhz, (double)clock);
    cr_assert_eq(hw.smem_per_block, (int64_t)local);
    cr_assert_eq(hw.smem_per_block_optin, (int64_t)local);
    cr_assert_geq(hw.smem_per_sm, (int64_t)local);
    if (cache > 0) cr_assert_eq(hw.l2_bytes, (int64_t)cache);
    size_t cap = wg < 1024 ? wg : 1024;
    cr_assert_leq((size_t)hw.max_threads_per_block, cap);
    cr_assert_eq(hw.max_threads_per_block % hw.warp_size, 0);
    cr_assert_gt((size_t)hw.max_threads_per_block + (size_t)hw.warp_size, cap,
                 "max_threads_per_block %d is not %zu rounded down to a warp",
                 hw.max_threads_per_block, cap);

    /* Names and provenance. */
    cr_assert(strncmp(hw.name, "auto-", 5) == 0, "name %s", hw.name);
    for (const char *p = hw.name; *p; p++)
        cr_assert(islower((unsigned char)*p) || isdigit((unsigned char)*p) || *p == '-',
                  "name %s has '%c'", hw.name, *p);
    cr_assert(strstr(hw.desc, "OpenCL"), "desc %s", hw.desc);
    const gs_hw *fb = gs_hw_find_builtin("rtx3090");
    cr_assert_not_null(fb);
    cr_assert_eq(hw.dram_gbs, fb->dram_gbs);
    cr_assert_eq(hw.fp32_lanes_per_sm, fb->fp32_lanes_per_sm);
    cr_assert(strstr(notes, "rtx3090"), "notes should name the fallback: %s", notes);
    cr_assert(strstr(notes, "dram_gbs"), "notes should list dram_gbs: %s", notes);
    cr_assert(strstr(notes, "dram_latency_ns"), "%s", notes);
    /* tensor rates: none on a CPU (PoCL), the fallback's on a GPU */
    cl_device_type dtype = 0;
    cr_assert_eq(clGetDeviceInfo(dev, CL_DEVICE_TYPE, sizeof dtype, &dtype, NULL), CL_SUCCESS);
    if (!(dtype & CL_DEVICE_TYPE_GPU))
        cr_assert(hw.tc_f16_flops_per_sm == 0 && hw.tc_bf16_flops_per_sm == 0 && hw.tc_tf32_flops_per_sm == 0);
    else cr_assert_eq(hw.tc_f16_flops_per_sm, fb->tc_f16_flops_per_sm);
    free(notes);

    /* notes may be NULL; an alias of a built-in works as the fallback. */
    gs_hw hw2;
    cr_assert_eq(gs_cl_query_profile(ctx, gs_device_handle(cl), "4090", &hw2, NULL), GS_OK, "%s", gs_ctx_errmsg(ctx));
    cr_assert_eq(hw2.num_sms, (int)cus);
    cr_assert_eq(hw2.dram_gbs, gs_hw_find_builtin("rtx4090")->dram_gbs);
    gs_device_close(cl);
    gs_ctx_destroy(ctx);
}

Test(clquery, unknown_fallback_is_hw_unknown) {
    gs_ctx *ctx = gs_ctx_create();
    gs_device *cl = gs_test_open_dev(ctx);
    gs_hw hw;
    memset(&hw, 0x5a, sizeof hw);
    gs_hw before = hw;
    char *notes = (char *)"untouched";
    cr_assert_eq(gs_cl_query_profile(ctx, gs_device_handle(cl), "no-such-gpu", &hw, &notes), GS_ERR_HW_UNKNOWN);
    cr_assert_null(notes, "notes must be NULL on failure");
    cr_assert(strstr(gs_ctx_errmsg(ctx), "no-such-gpu"), "%s", gs_ctx_errmsg(ctx));
    cr_assert(memcmp(&hw, &before, sizeof hw) == 0, "out must not be written on failure");
    cr_assert_eq(gs_cl_query_profile(ctx, gs_device_handle(cl), "", &hw, NULL), GS_ERR_HW_UNKNOWN);
    gs_device_close(cl);
    gs_ctx_destroy(ctx);
}

Test(clquery, null_arguments) {
    gs_ctx *ctx = gs_ctx_create();
    gs_hw hw;
    char *notes = (char *)"untouched";
    cr_assert_eq(gs_cl_query_profile(ctx, NULL, "rtx3090", &hw, &notes), GS_ERR_INVALID_ARG);
    cr_assert_null(notes);
    gs_device *cl = gs_test_open_dev(ctx);
    cr_assert_eq(gs_cl_query_profile(ctx, gs_device_handle(cl), NULL, &hw, NULL), GS_ERR_INVALID_ARG);
    cr_assert_eq(gs_cl_query_profile(ctx, gs_device_handle(cl), "rtx3090", NULL, NULL), GS_ERR_INVALID_ARG);
    cr_assert_eq(gs_cl_query_profile(NULL, gs_device_handle(cl), "rtx3090", NULL, NULL), GS_ERR_INVALID_ARG);
    gs_device_close(cl);
    gs_ctx_destroy(ctx);
}
