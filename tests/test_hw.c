/* test_hw.c — hardware profiles: the built-in table, its rules, JSON
 * load/save (exact round trip, every error path), and atomic saving.
 *
 * Sample files live in tests/data/: hw_truncated.json (cut off mid-object),
 * hw_zero_sms.json (valid JSON, invalid profile) and hw_custom.json (a
 * derived "what-if" profile). */
#include "hwmodel/model/model.h"
#include "tests/test_common.h"

#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

TestSuite(hw);

/* ---- helpers --------------------------------------------------------------- */

/* Field-by-field exact equality (doubles compared with ==, on purpose). */
static void assert_hw_equal(const gs_hw *a, const gs_hw *b) {
    cr_assert_str_eq(a->name, b->name);
    cr_assert_str_eq(a->desc, b->desc);
#define EQ(f) cr_assert(a->f == b->f, "%s: field " #f " differs", a->name)
    EQ(sm);
    EQ(num_sms);
    EQ(clock_mhz);
    EQ(fp32_lanes_per_sm);
    EQ(dram_gbs);
    EQ(dram_latency_ns);
    EQ(l2_bytes);
    EQ(l2_gbs);
    EQ(l2_latency_ns);
    EQ(smem_per_sm);
    EQ(smem_per_block);
    EQ(smem_per_block_optin);
    EQ(smem_banks);
    EQ(bank_bytes);
    EQ(smem_latency_ns);
    EQ(regs_per_sm);
    EQ(max_regs_per_thread);
    EQ(max_threads_per_block);
    EQ(max_threads_per_sm);
    EQ(max_blocks_per_sm);
    EQ(warp_size);
    EQ(transaction_bytes);
    EQ(launch_overhead_us);
    EQ(tc_f16_flops_per_sm);
    EQ(tc_bf16_flops_per_sm);
    EQ(tc_tf32_flops_per_sm);
    EQ(mma_sync_efficiency);
#undef EQ
}

/* Load JSON text and expect an error. */
static void expect_text_err(const char *text, gs_status want, const char *needle) {
    gs_ctx *ctx = gs_ctx_create();
    gs_hw hw;
    memset(&hw, 0x5a, sizeof hw);
    gs_hw before = hw;
    gs_status s = gs_hw_load_json_text(ctx, text, &hw);
    gs_test_expect_err(ctx, s, want, needle, "");
    cr_assert(memcmp(&hw, &before, sizeof hw) == 0, "out was modified on failure");
    gs_ctx_destroy(ctx);
}

/* A temporary directory for profile files, and a context: what the tests
 * that write files share. hw_dir_file names a file in it. */
typedef struct hw_dir {
    char *dir;
    gs_ctx *ctx;
} hw_dir;

static hw_dir hw_dir_open(void) {
    hw_dir d = {gs_test_tmpdir("hw"), gs_ctx_create()};
    cr_assert_not_null(d.ctx);
    return d;
}

/* d's directory / name, into path[PATH_MAX]; returns path. */
static char *hw_dir_file(const hw_dir *d, const char *name, char *path) {
    snprintf(path, PATH_MAX, "%s/%s", d->dir, name);
    return path;
}

static void hw_dir_close(hw_dir *d) {
    gs_ctx_destroy(d->ctx);
    gs_test_rm_flat(d->dir);
    free(d->dir);
}

/* gs_hw_load of tests/data/<name>: its status; *hw is NULL on failure. */
static gs_status load_data_profile(gs_ctx *ctx, const char *name, gs_hw **hw) {
    char path[PATH_MAX];
    gs_test_data_path(path, sizeof path, name);
    *hw = NULL;
    return gs_hw_load(ctx, path, hw);
}

/* ---- the built-in table ------------------------------------------------------ */

Test(hw, builtins_all_validate) {
    static const char *names[] = {"h100", "a100", "rtx4090", "rtx3090", "orin-nano", "v100",
                                  "t4"};
    static const int sms[] = {90, 80, 89, 86, 87, 70, 75};
    gs_ctx *ctx = gs_ctx_create();
    cr_assert_eq(gs_hw_builtin_count(), 7);
    for (int i = 0; i < gs_hw_builtin_count(); i++) {
        const gs_hw *hw = gs_hw_builtin(i);
        cr_assert_not_null(hw);
        cr_assert_str_eq(gs_hw_builtin_name(i), names[i]);
        cr_assert_str_eq(gs_hw_name(hw), names[i]);
        cr_assert_eq(gs_hw_sm(hw), sms[i], "%s", names[i]);
        gs_status s = gs_hw_validate(ctx, hw);
        cr_assert_eq(s, GS_OK, "%s: %s", names[i], gs_ctx_errmsg(ctx));
        /* The fields shared by every profile. */
        cr_assert_eq(hw->smem_per_block, 48 * 1024, "%s", names[i]);
        cr_assert_eq(hw->warp_size, 32);
        cr_assert_eq(hw->smem_banks, 32);
        cr_assert_eq(hw->bank_bytes, 4);
        cr_assert_eq(hw->transaction_bytes, 32);
        cr_assert_eq(hw->max_regs_per_thread, 255);
        cr_assert_eq(hw->max_threads_per_block, 1024);
        cr_assert_eq(hw->regs_per_sm, 65536);
        cr_assert(hw->desc[0], "%s has no desc", names[i]);
    }
    cr_assert_null(gs_hw_builtin(-1));
    cr_assert_null(gs_hw_builtin(7));
    cr_assert_null(gs_hw_builtin_name(7));
    gs_ctx_destroy(ctx);
}

Test(hw, rtx3090_numbers_and_derived_rates) {
    const gs_hw *hw = gs_hw_find_builtin("rtx3090");
    cr_assert_not_null(hw);
    cr_assert_eq(hw->num_sms, 82);
    cr_assert_eq(hw->clock_mhz, 1695.0);
    cr_assert_eq(hw->fp32_lanes_per_sm, 128);
    cr_assert_eq(hw->dram_gbs, 936.0);
    cr_assert_eq(hw->l2_bytes, 6 * 1024 * 1024);
    cr_assert_eq(hw->smem_per_sm, 100 * 1024);
    cr_assert_eq(hw->smem_per_block_optin, 99 * 1024);
    cr_assert_eq(hw->max_threads_per_sm, 1536);
    cr_assert_eq(hw->max_blocks_per_sm, 16);
    /* 2 * 128 * 82 * 1.695 GHz = 35.58 TFLOP/s (datasheet: 35.6). */
    cr_assert_float_eq(gs_hw_peak_flops(hw), 2.0 * 128 * 82 * 1695e6, 1.0);
    /* 32 banks * 4 B * 1.695 GHz * 82 SMs = 17791.7 GB/s. */
    cr_assert_float_eq(gs_hw_smem_gbs(hw), 32.0 * 4 * 1.695 * 82, 1e-6);
}

Test(hw, peak_flops_match_datasheets) {
    /* FP32 TFLOP/s from the datasheets, to 2%. */
    static const struct {
        const char *name;
        double tflops;
    } ds[] = {{"h100", 67.0},  {"a100", 19.5}, {"rtx4090", 82.6}, {"rtx3090", 35.6},
              {"orin-nano", 1.28}, {"v100", 15.7}, {"t4", 8.1}};
    for (size_t i = 0; i < sizeof ds / sizeof ds[0]; i++) {
        const gs_hw *hw = gs_hw_find_builtin(ds[i].name);
        cr_assert_not_null(hw);
        double t = gs_hw_peak_flops(hw) / 1e12;
        cr_assert(fabs(t - ds[i].tflops) / ds[i].tflops < 0.02, "%s: %.2f vs %.2f TFLOP/s",
                  ds[i].name, t, ds[i].tflops);
    }
}

Test(hw, find_by_name_and_alias) {
    static const struct {
        const char *query, *name;
    } cases[] = {
        {"rtx3090", "rtx3090"},         {"RTX3090", "rtx3090"},
        {"3090", "rtx3090"},            {"rtx-3090", "rtx3090"},
        {"RTX_3090", "rtx3090"},        {"a100-40gb", "a100"},
        {"A100", "a100"},               {"jetson-orin-nano", "orin-nano"},
        {"Orin-Nano", "orin-nano"},     {"h100", "h100"},
        {"H100-SXM5", "h100"},          {"4090", "rtx4090"},
        {"v100", "v100"},               {"tesla-t4", "t4"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const gs_hw *hw = gs_hw_find_builtin(cases[i].query);
        cr_assert_not_null(hw, "'%s' not found", cases[i].query);
        cr_assert_str_eq(hw->name, cases[i].name, "'%s'", cases[i].query);
    }
    cr_assert_null(gs_hw_find_builtin("rtx9999"));
    cr_assert_null(gs_hw_find_builtin("rtx30900"));
    cr_assert_null(gs_hw_find_builtin(""));
    cr_assert_null(gs_hw_find_builtin(NULL));
}

Test(hw, load_builtin_copy) {
    gs_ctx *ctx = gs_ctx_create();
    gs_hw *hw = NULL;
    cr_assert_eq(gs_hw_load(ctx, "RTX-4090", &hw), GS_OK, "%s", gs_ctx_errmsg(ctx));
    cr_assert_not_null(hw);
    cr_assert_str_eq(gs_hw_name(hw), "rtx4090");
    cr_assert_eq(gs_hw_sm(hw), 89);
    /* A copy, not the static entry. */
    cr_assert_neq(hw, gs_hw_find_builtin("rtx4090"));
    assert_hw_equal(hw, gs_hw_find_builtin("rtx4090"));
    gs_hw_destroy(hw);
    gs_hw_destroy(NULL);
    gs_ctx_destroy(ctx);
}

Test(hw, unknown_name) {
    gs_ctx *ctx = gs_ctx_create();
    gs_hw *hw = (gs_hw *)ctx; /* must be reset to NULL */
    gs_test_expect_err(ctx, gs_hw_load(ctx, "rtx9999", &hw), GS_ERR_HW_UNKNOWN, "rtx9999", "");
    cr_assert_null(hw);
    /* The message lists what would have worked. */
    for (int i = 0; i < gs_hw_builtin_count(); i++)
        cr_assert_not_null(strstr(gs_ctx_errmsg(ctx), gs_hw_builtin_name(i)), "%s",
                           gs_ctx_errmsg(ctx));
    gs_ctx_destroy(ctx);
}

Test(hw, null_arguments) {
    gs_ctx *ctx = gs_ctx_create();
    gs_hw *hw = NULL;
    gs_hw tmp;
    cr_assert_eq(gs_hw_load(ctx, NULL, &hw), GS_ERR_INVALID_ARG);
    cr_assert_eq(gs_hw_load(ctx, "", &hw), GS_ERR_INVALID_ARG);
    cr_assert_eq(gs_hw_load(ctx, "t4", NULL), GS_ERR_INVALID_ARG);
    cr_assert_eq(gs_hw_validate(ctx, NULL), GS_ERR_INVALID_ARG);
    cr_assert_eq(gs_hw_load_json_text(ctx, NULL, &tmp), GS_ERR_INVALID_ARG);
    cr_assert_eq(gs_hw_load_json(ctx, NULL, &tmp), GS_ERR_INVALID_ARG);
    cr_assert_eq(gs_hw_save_json(ctx, NULL, "/tmp/x.json"), GS_ERR_INVALID_ARG);
    cr_assert_eq(gs_hw_save(ctx, gs_hw_builtin(0), NULL), GS_ERR_INVALID_ARG);
    cr_assert_str_eq(gs_hw_name(NULL), "");
    cr_assert_eq(gs_hw_sm(NULL), 0);
    cr_assert_null(gs_hw_describe(NULL));
    gs_ctx_destroy(ctx);
}

Test(hw, describe_lists_every_field) {
    static const char *keys[] = {
        "sm ", "num_sms", "clock_mhz", "fp32_lanes_per_sm", "dram_gbs", "dram_latency_ns",
        "l2_bytes", "l2_gbs", "l2_latency_ns", "smem_per_sm", "smem_per_block ",
        "smem_per_block_optin", "smem_banks", "bank_bytes", "smem_latency_ns", "regs_per_sm",
        "max_regs_per_thread", "max_threads_per_block", "max_threads_per_sm",
        "max_blocks_per_sm", "warp_size", "transaction_bytes", "launch_overhead_us",
        "tc_f16_flops_per_sm", "tc_bf16_flops_per_sm", "tc_tf32_flops_per_sm", "mma_sync_efficiency",
        "peak tensor (derived)"};
    for (int i = 0; i < gs_hw_builtin_count(); i++) {
        char *d = gs_hw_describe(gs_hw_builtin(i));
        cr_assert_not_null(d);
        cr_assert_not_null(strstr(d, gs_hw_builtin_name(i)));
        cr_assert_not_null(strstr(d, gs_hw_builtin(i)->desc));
        for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++)
            cr_assert_not_null(strstr(d, keys[k]), "describe lacks %s:\n%s", keys[k], d);
        cr_assert_not_null(strstr(d, "GB/s"));
        cr_assert_not_null(strstr(d, "MHz"));
        free(d);
    }
}

/* ---- rules: one broken field at a time --------------------------------------- */

Test(hw, validate_each_rule) {
    const gs_hw *base = gs_hw_find_builtin("rtx3090");
    gs_ctx *ctx = gs_ctx_create();
    gs_hw h;
    gs_status s;

#define BREAK(stmt, needle)                                                                   \
    do {                                                                                      \
        h = *base;                                                                            \
        stmt;                                                                                 \
        s = gs_hw_validate(ctx, &h);                                                          \
        cr_assert_eq(s, GS_ERR_HW_INVALID, "%s: got %d (%s)", #stmt, s, gs_ctx_errmsg(ctx)); \
        cr_assert_not_null(strstr(gs_ctx_errmsg(ctx), needle), "%s: message '%s' lacks '%s'", \
                           #stmt, gs_ctx_errmsg(ctx), needle);                                \
    } while (0)

    BREAK(h.num_sms = 0, "num_sms must be > 0 (got 0)");
    BREAK(h.num_sms = -3, "num_sms must be > 0 (got -3)");
    BREAK(h.clock_mhz = 0, "clock_mhz");
    BREAK(h.clock_mhz = NAN, "clock_mhz");
    BREAK(h.clock_mhz = INFINITY, "clock_mhz");
    BREAK(h.fp32_lanes_per_sm = 0, "fp32_lanes_per_sm");
    BREAK(h.dram_gbs = -1, "dram_gbs");
    BREAK(h.l2_bytes = 0, "l2_bytes");
    BREAK(h.l2_gbs = 0, "l2_gbs");
    /* regression: denormal rates passed "> 0" and made every estimate inf/NaN */
    BREAK(h.clock_mhz = 1e-308, "clock_mhz must be finite and >= 1e-06");
    BREAK(h.dram_gbs = 5e-324, "dram_gbs must be finite and >= 1e-06");
    BREAK(h.l2_gbs = 1e-7, "l2_gbs must be finite and >= 1e-06");
    /* regression (issue 11, defects 1 and 3): huge values passed validation;
     * smem_banks * bank_bytes overflowed int in the model (UBSan), and 1e308
     * latencies or 1e300 rates made estimates inf and JSON reports empty */
    BREAK(h.bank_bytes = 2147483647, "bank_bytes (2147483647) must be <= 1024");
    BREAK(h.smem_banks = 4096, "smem_banks (4096) and bank_bytes (4) must be <= 1024");
    BREAK(h.l2_latency_ns = 1e308, "l2_latency_ns must be finite and >= 0 and <= 1e+09");
    BREAK(h.clock_mhz = 1e300, "clock_mhz must be finite and >= 1e-06 and <= 1e+09");
    BREAK(h.dram_gbs = 1e300, "dram_gbs must be finite and >= 1e-06 and <= 1e+09");
    BREAK(h.launch_overhead_us = 1e10, "launch_overhead_us");
    BREAK(h.smem_per_block = 0, "smem_per_block must be > 0");
    BREAK(h.smem_per_block = 200 * 1024, "smem_per_block (204800) must be <= smem_per_block_optin");
    /* tensor rates: 0 allowed (no tensor math), negative or absurd not */
    BREAK(h.tc_f16_flops_per_sm = -1, "tc_f16_flops_per_sm must be between 0 (no tensor math) and 262144");
    BREAK(h.tc_bf16_flops_per_sm = 1 << 30, "tc_bf16_flops_per_sm must be between 0");
    BREAK(h.tc_tf32_flops_per_sm = -512, "tc_tf32_flops_per_sm");
    BREAK(h.mma_sync_efficiency = 0, "mma_sync_efficiency must be a fraction in (0, 1] (got 0)");
    BREAK(h.mma_sync_efficiency = 1.5, "mma_sync_efficiency must be a fraction in (0, 1] (got 1.5)");
    BREAK(h.mma_sync_efficiency = NAN, "mma_sync_efficiency");
    BREAK(h.smem_per_block_optin = 200 * 1024, "smem_per_block_optin (204800) must be <= smem_per_sm");
    BREAK(h.smem_banks = 0, "smem_banks");
    BREAK(h.bank_bytes = 0, "bank_bytes");
    BREAK(h.regs_per_sm = 0, "regs_per_sm");
    BREAK(h.max_regs_per_thread = 0, "max_regs_per_thread");
    BREAK(h.max_threads_per_block = 0, "max_threads_per_block must be > 0");
    BREAK(h.max_threads_per_block = 1000, "max_threads_per_block (1000) must be a multiple of warp_size (32)");
    BREAK(h.max_threads_per_sm = 512, "max_threads_per_sm (512) must be >= max_threads_per_block (1024)");
    BREAK(h.max_blocks_per_sm = 0, "max_blocks_per_sm");
    BREAK(h.warp_size = 0, "warp_size");
    BREAK(h.transaction_bytes = 0, "transaction_bytes");
    BREAK(h.sm = 8, "sm must be between 10 and 200");
    BREAK(h.sm = 860, "got 860");
    BREAK(h.dram_latency_ns = -1, "dram_latency_ns");
    BREAK(h.l2_latency_ns = NAN, "l2_latency_ns");
    BREAK(h.smem_latency_ns = INFINITY, "smem_latency_ns");
    BREAK(h.launch_overhead_us = -0.5, "launch_overhead_us");
    BREAK(h.name[0] = '\0', "name must not be empty");
    BREAK(memset(h.name, 'x', sizeof h.name), "name must be shorter");
    BREAK(memset(h.desc, 'x', sizeof h.desc), "desc must be shorter");
    /* regression: a newline in the name split the CLI's one-line errors */
    BREAK(strcpy(h.name, "x\ny"), "name must not contain control characters (byte 0x0a at 1)");
    BREAK(strcpy(h.desc, "tab\there"), "desc must not contain control characters (byte 0x09 at 3)");
#undef BREAK

    /* Zero latencies are allowed ("ignore this term"). */
    h = *base;
    h.dram_latency_ns = h.l2_latency_ns = h.smem_latency_ns = h.launch_overhead_us = 0;
    cr_assert_eq(gs_hw_validate(ctx, &h), GS_OK, "%s", gs_ctx_errmsg(ctx));
    gs_ctx_destroy(ctx);
}

/* The tensor rates against the vendors' dense TFLOP/s (docs/MODEL.md, "Tensor
 * cores"): rate * SMs * the clock the vendor quotes them at, within 0.5 %. */
Test(hw, tensor_peaks_match_datasheets) {
    static const struct {
        const char *name;
        double clock_ghz, f16, bf16, tf32; /* vendor TFLOP/s and their clock */
    } rows[] = {
        {"h100", 1.83, 989.4, 989.4, 494.7},   /* at the 1.83 GHz tensor boost clock */
        {"a100", 1.41, 312.0, 312.0, 156.0},
        {"rtx4090", 2.52, 165.2, 165.2, 82.6}, /* f32 accumulate */
        {"rtx3090", 1.695, 71.0, 71.0, 35.6},  /* f32 accumulate */
        {"v100", 1.53, 125.0, 0, 0},
        {"t4", 1.59, 65.0, 0, 0},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        const gs_hw *h = gs_hw_find_builtin(rows[i].name);
        cr_assert_not_null(h);
        double per_ghz = h->num_sms * rows[i].clock_ghz * 1e9 / 1e12;
        double got[3] = {gs_hw_tensor_flops_per_sm(h, GS_DTYPE_F16, GS_MATH_F32) * per_ghz,
                         gs_hw_tensor_flops_per_sm(h, GS_DTYPE_BF16, GS_MATH_F32) * per_ghz,
                         gs_hw_tensor_flops_per_sm(h, GS_DTYPE_F32, GS_MATH_TF32) * per_ghz};
        double want[3] = {rows[i].f16, rows[i].bf16, rows[i].tf32};
        for (int t = 0; t < 3; t++)
            cr_assert(fabs(got[t] - want[t]) <= 0.005 * want[t], "%s type %d: %g TFLOP/s, datasheet %g",
                      rows[i].name, t, got[t], want[t]);
    }
    /* plain f32 has no tensor math; the peak is rate * SMs * the profile's clock */
    const gs_hw *a = gs_hw_find_builtin("a100");
    cr_assert_eq(gs_hw_tensor_flops_per_sm(a, GS_DTYPE_F32, GS_MATH_F32), 0);
    cr_assert_eq(gs_hw_peak_tensor_flops(a, GS_DTYPE_F32, GS_MATH_F32), 0.0);
    cr_assert_float_eq(gs_hw_peak_tensor_flops(a, GS_DTYPE_F16, GS_MATH_F32), 2048.0 * 108 * 1410e6, 1.0);
    cr_assert_eq(gs_hw_tensor_flops_per_sm(NULL, GS_DTYPE_F16, GS_MATH_F32), 0);
    /* Orin: derived (2048 f16/bf16, 1024 tf32); every sm_80+ part has all three */
    const gs_hw *o = gs_hw_find_builtin("orin-nano");
    cr_assert_eq(o->tc_f16_flops_per_sm, 2048);
    cr_assert_eq(o->tc_tf32_flops_per_sm, 1024);
    for (int i = 0; i < gs_hw_builtin_count(); i++) {
        const gs_hw *h = gs_hw_builtin(i);
        if (h->sm < 80) continue;
        cr_assert(h->tc_f16_flops_per_sm > 0 && h->tc_bf16_flops_per_sm > 0 && h->tc_tf32_flops_per_sm > 0, "%s",
                  h->name);
    }
    /* the sm_90 mma.sync efficiency is the unmeasured estimate, and says so */
    const gs_hw *hp = gs_hw_find_builtin("h100");
    cr_assert_eq(hp->mma_sync_efficiency, GS_HW_MMA_SYNC_EFF_UNMEASURED);
    char *d = gs_hw_describe(hp);
    cr_assert_not_null(strstr(d, "UNMEASURED"), "%s", d);
    free(d);
    d = gs_hw_describe(a);
    cr_assert_null(strstr(d, "UNMEASURED"), "%s", d);
    free(d);
}

/* A derived profile may override the tensor rates; a bad one is named. */
Test(hw, tensor_fields_json) {
    gs_ctx *ctx = gs_ctx_create();
    gs_hw h;
    cr_assert_eq(gs_hw_load_json_text(ctx, "{\"base\": \"rtx3090\", \"name\": \"a6000ish\", "
                                           "\"tc_f16_flops_per_sm\": 1024, \"mma_sync_efficiency\": 0.9}", &h),
                 GS_OK, "%s", gs_ctx_errmsg(ctx));
    cr_assert_eq(h.tc_f16_flops_per_sm, 1024);
    cr_assert_eq(h.tc_bf16_flops_per_sm, 512); /* the base's */
    cr_assert_eq(h.mma_sync_efficiency, 0.9);
    gs_ctx_destroy(ctx);
    expect_text_err("{\"base\": \"a100\", \"tc_tf32_flops_per_sm\": -4}", GS_ERR_HW_INVALID,
                    "tc_tf32_flops_per_sm must be between 0 (no tensor math) and 262144 FLOP per clock per SM (got -4)");
    expect_text_err("{\"base\": \"a100\", \"tc_f16_flops_per_sm\": 2048.5}", GS_ERR_JSON,
                    "key 'tc_f16_flops_per_sm' must be an integer");
    expect_text_err("{\"base\": \"a100\", \"mma_sync_efficiency\": 2}", GS_ERR_HW_INVALID,
                    "mma_sync_efficiency must be a fraction in (0, 1] (got 2)");
    expect_text_err("{\"base\": \"a100\", \"mma_sync_efficiency\": \"high\"}", GS_ERR_JSON,
                    "key 'mma_sync_efficiency' must be a number (got a string)");
}

/* ---- JSON: round trips ------------------------------------------------------- */

Test(hw, json_roundtrip_every_builtin) {
    hw_dir d = hw_dir_open();
    gs_ctx *ctx = d.ctx;
    char path[PATH_MAX], name[64];
    for (int i = 0; i < gs_hw_builtin_count(); i++) {
        const gs_hw *b = gs_hw_builtin(i);
        snprintf(name, sizeof name, "%s.json", b->name);
        hw_dir_file(&d, name, path);
        cr_assert_eq(gs_hw_save_json(ctx, b, path), GS_OK, "%s", gs_ctx_errmsg(ctx));

        /* The file holds exactly the 29 struct fields, no base. */
        json_error_t je;
        json_t *root = json_load_file(path, 0, &je);
        cr_assert_not_null(root, "%s: %s", path, je.text);
        cr_assert_eq(json_object_size(root), 29);
        cr_assert_null(json_object_get(root, "base"));
        json_decref(root);

        gs_hw back;
        memset(&back, 0, sizeof back);
        cr_assert_eq(gs_hw_load_json(ctx, path, &back), GS_OK, "%s", gs_ctx_errmsg(ctx));
        assert_hw_equal(&back, b);

        /* The public path: gs_hw_load sees a .json path. */
        gs_hw *hw = NULL;
        cr_assert_eq(gs_hw_load(ctx, path, &hw), GS_OK, "%s", gs_ctx_errmsg(ctx));
        assert_hw_equal(hw, b);
        gs_hw_destroy(hw);
    }
    /* Only the saved files remain: no temp files. */
    cr_assert_eq(gs_test_count_files(d.dir, ""), gs_hw_builtin_count());
    hw_dir_close(&d);
}

Test(hw, json_roundtrip_awkward_doubles) {
    hw_dir d = hw_dir_open();
    gs_ctx *ctx = d.ctx;
    char path[PATH_MAX];
    hw_dir_file(&d, "odd", path); /* no .json suffix */
    gs_hw h = *gs_hw_find_builtin("v100");
    strcpy(h.name, "odd \"quoted\" name");
    h.clock_mhz = 0.1 + 0.2;      /* 0.30000000000000004 */
    h.dram_gbs = 1.0 / 3.0;
    h.l2_gbs = nextafter(1e9, 0); /* just under the validator's bound of 1e9 */
    h.dram_latency_ns = 5e-324;   /* smallest subnormal */
    h.l2_latency_ns = 1234.0;     /* integral double */
    h.smem_latency_ns = 0.0;
    h.launch_overhead_us = nextafter(4.0, 5.0);
    h.l2_bytes = INT64_C(1) << 40;
    cr_assert_eq(gs_hw_save(ctx, &h, path), GS_OK, "%s", gs_ctx_errmsg(ctx));
    gs_hw *back = NULL;
    /* An existing file without .json is still found by gs_hw_load. */
    cr_assert_eq(gs_hw_load(ctx, path, &back), GS_OK, "%s", gs_ctx_errmsg(ctx));
    assert_hw_equal(back, &h);
    gs_hw_destroy(back);
    /* Saving over an existing file replaces it. */
    h.num_sms = 7;
    cr_assert_eq(gs_hw_save(ctx, &h, path), GS_OK, "%s", gs_ctx_errmsg(ctx));
    gs_hw again;
    cr_assert_eq(gs_hw_load_json(ctx, path, &again), GS_OK, "%s", gs_ctx_errmsg(ctx));
    cr_assert_eq(again.num_sms, 7);
    cr_assert_eq(gs_test_count_files(d.dir, ""), 1);
    hw_dir_close(&d);
}

/* ---- JSON: sample files -------------------------------------------------------- */

Test(hw, truncated_file_is_json_error) {
    gs_ctx *ctx = gs_ctx_create();
    gs_hw *hw;
    gs_test_expect_err(ctx, load_data_profile(ctx, "hw_truncated.json", &hw), GS_ERR_JSON, "line ", "");
    cr_assert_null(hw);
    cr_assert_not_null(strstr(gs_ctx_errmsg(ctx), "hw_truncated.json"), "%s",
                       gs_ctx_errmsg(ctx));
    gs_ctx_destroy(ctx);

    /* Truncated text, empty text, trailing garbage, not an object. */
    expect_text_err("{\"base\": \"rtx3090\", \"num_sms\": 8", GS_ERR_JSON, "column");
    expect_text_err("", GS_ERR_JSON, "line");
    expect_text_err("{\"base\": \"t4\"} x", GS_ERR_JSON, NULL);
    expect_text_err("[1, 2]", GS_ERR_JSON, "top level must be an object");
    expect_text_err("{\"base\": \"t4\", \"base\": \"v100\"}", GS_ERR_JSON, "duplicate");
}

Test(hw, zero_sms_file_is_invalid) {
    gs_ctx *ctx = gs_ctx_create();
    gs_hw *hw;
    gs_test_expect_err(ctx, load_data_profile(ctx, "hw_zero_sms.json", &hw), GS_ERR_HW_INVALID,
                       "num_sms must be > 0 (got 0)", "");
    cr_assert_null(hw);
    cr_assert_not_null(strstr(gs_ctx_errmsg(ctx), "hw_zero_sms.json"));
    gs_ctx_destroy(ctx);
}

Test(hw, custom_file_overrides_base) {
    gs_ctx *ctx = gs_ctx_create();
    gs_hw *hw;
    cr_assert_eq(load_data_profile(ctx, "hw_custom.json", &hw), GS_OK, "%s", gs_ctx_errmsg(ctx));
    cr_assert_str_eq(gs_hw_name(hw), "rtx3090-slowmem");
    cr_assert_eq(hw->dram_gbs, 500.0);
    /* Everything else is the base's. */
    gs_hw expect = *gs_hw_find_builtin("rtx3090");
    strcpy(expect.name, hw->name);
    strcpy(expect.desc, hw->desc);
    expect.dram_gbs = 500.0;
    assert_hw_equal(hw, &expect);
    gs_hw_destroy(hw);
    gs_ctx_destroy(ctx);
}

/* ---- JSON: key errors ---------------------------------------------------------- */

Test(hw, missing_key_named) {
    /* Remove each key in turn from a complete profile. */
    hw_dir d = hw_dir_open();
    char path[PATH_MAX];
    cr_assert_eq(gs_hw_save_json(d.ctx, gs_hw_find_builtin("a100"), hw_dir_file(&d, "full.json", path)), GS_OK);
    json_error_t je;
    json_t *full = json_load_file(path, 0, &je);
    cr_assert_not_null(full);
    const char *key;
    json_t *val;
    int n = 0;
    json_object_foreach(full, key, val) {
        json_t *copy = json_deep_copy(full);
        json_object_del(copy, key);
        char *text = json_dumps(copy, 0);
        char needle[64];
        snprintf(needle, sizeof needle, "missing key '%s'", key);
        expect_text_err(text, GS_ERR_JSON, needle);
        free(text);
        json_decref(copy);
        n++;
    }
    cr_assert_eq(n, 29);
    json_decref(full);
    hw_dir_close(&d);
}

Test(hw, wrong_type_named) {
    expect_text_err("{\"base\": \"rtx3090\", \"num_sms\": \"82\"}", GS_ERR_JSON,
                    "key 'num_sms' must be an integer (got a string)");
    expect_text_err("{\"base\": \"rtx3090\", \"num_sms\": 82.5}", GS_ERR_JSON,
                    "key 'num_sms' must be an integer");
    expect_text_err("{\"base\": \"rtx3090\", \"l2_bytes\": 6.0}", GS_ERR_JSON,
                    "key 'l2_bytes' must be an integer");
    expect_text_err("{\"base\": \"rtx3090\", \"clock_mhz\": true}", GS_ERR_JSON,
                    "key 'clock_mhz' must be a number (got a boolean)");
    expect_text_err("{\"base\": \"rtx3090\", \"dram_gbs\": null}", GS_ERR_JSON,
                    "key 'dram_gbs' must be a number");
    expect_text_err("{\"base\": \"rtx3090\", \"name\": 3090}", GS_ERR_JSON,
                    "key 'name' must be a string");
    expect_text_err("{\"base\": 3090}", GS_ERR_JSON, "key 'base' must be a string");
    expect_text_err("{\"base\": \"t4\", \"num_sms\": 99999999999}", GS_ERR_JSON,
                    "key 'num_sms' is out of range");
    expect_text_err("{\"base\": \"t4\", \"name\": \"abcdefghijabcdefghijabcdefghijab\"}",
                    GS_ERR_JSON, "key 'name' is too long");
}

Test(hw, unknown_key_named) {
    expect_text_err("{\"base\": \"rtx3090\", \"num_smss\": 82}", GS_ERR_JSON,
                    "unknown key 'num_smss'");
    expect_text_err("{\"base\": \"rtx3090\", \"comment\": \"x\"}", GS_ERR_JSON,
                    "unknown key 'comment'");
}

Test(hw, base_override) {
    gs_ctx *ctx = gs_ctx_create();
    gs_hw hw;
    cr_assert_eq(gs_hw_load_json_text(ctx,
                                      "{\"base\": \"A100-40GB\", \"name\": \"a100-slow\","
                                      " \"clock_mhz\": 1000, \"l2_bytes\": 1048576}",
                                      &hw),
                 GS_OK, "%s", gs_ctx_errmsg(ctx));
    cr_assert_str_eq(hw.name, "a100-slow");
    cr_assert_eq(hw.clock_mhz, 1000.0); /* an integer is accepted for a double */
    cr_assert_eq(hw.l2_bytes, 1048576);
    cr_assert_eq(hw.num_sms, 108);
    cr_assert_eq(hw.sm, 80);
    /* Base alone: the built-in's fields, under a name of its own (a derived
     * profile without "name" is "<base>+custom", never the built-in's name). */
    cr_assert_eq(gs_hw_load_json_text(ctx, "{\"base\": \"t4\"}", &hw), GS_OK);
    gs_hw t4 = *gs_hw_find_builtin("t4");
    strcpy(t4.name, "t4+custom");
    assert_hw_equal(&hw, &t4);
    cr_assert_eq(gs_hw_load_json_text(ctx, "{\"base\": \"orin-nano\", \"num_sms\": 4}", &hw), GS_OK);
    cr_assert_str_eq(hw.name, "orin-nano+custom");
    /* An override that breaks a rule is caught after the merge. */
    expect_text_err("{\"base\": \"t4\", \"smem_per_block_optin\": 1024}", GS_ERR_HW_INVALID,
                    "smem_per_block (49152) must be <= smem_per_block_optin (1024)");
    /* An unknown base is an unknown profile, with the list of built-ins. */
    expect_text_err("{\"base\": \"gtx480\"}", GS_ERR_HW_UNKNOWN, "base 'gtx480'");
    expect_text_err("{\"base\": \"gtx480\"}", GS_ERR_HW_UNKNOWN, "rtx3090");
    gs_ctx_destroy(ctx);
}

Test(hw, missing_file_is_io_error) {
    gs_ctx *ctx = gs_ctx_create();
    gs_hw tmp;
    gs_test_expect_err(ctx, gs_hw_load_json(ctx, "/nonexistent/dir/hw.json", &tmp), GS_ERR_IO,
               strerror(ENOENT), "");
    gs_hw *hw = NULL;
    /* A .json name that does not exist is a path, not an unknown built-in. */
    gs_test_expect_err(ctx, gs_hw_load(ctx, "no_such_profile.json", &hw), GS_ERR_IO, strerror(ENOENT), "");
    cr_assert_null(hw);
    /* A directory is not a profile. */
    gs_test_expect_err(ctx, gs_hw_load(ctx, "/tmp", &hw), GS_ERR_IO, NULL, "");
    cr_assert_null(hw);
    gs_ctx_destroy(ctx);
}

/* ---- saving: failures leave nothing behind ------------------------------------- */

Test(hw, save_unwritable_path) {
    hw_dir d = hw_dir_open();
    gs_ctx *ctx = d.ctx;
    const gs_hw *b = gs_hw_find_builtin("t4");
    gs_test_expect_err(ctx, gs_hw_save(ctx, b, "/proc/nonexistent/x.json"), GS_ERR_IO, NULL, "");
    char path[PATH_MAX];
    hw_dir_file(&d, "no/such/dir/x.json", path);
    gs_test_expect_err(ctx, gs_hw_save(ctx, b, path), GS_ERR_IO, strerror(ENOENT), "");
    /* A directory as the target. */
    gs_test_expect_err(ctx, gs_hw_save(ctx, b, d.dir), GS_ERR_IO, strerror(EISDIR), "");
    cr_assert_eq(gs_test_count_files(d.dir, ""), 0);
    /* An invalid profile is never written. */
    gs_hw bad = *b;
    bad.num_sms = 0;
    gs_test_expect_err(ctx, gs_hw_save(ctx, &bad, hw_dir_file(&d, "bad.json", path)), GS_ERR_HW_INVALID, "num_sms", "");
    cr_assert_eq(gs_test_count_files(d.dir, ""), 0);
    hw_dir_close(&d);
}

Test(hw, save_dev_full) {
    if (access("/dev/full", W_OK) != 0) cr_skip_test("/dev/full is not available here");
    gs_ctx *ctx = gs_ctx_create();
    gs_test_expect_err(ctx, gs_hw_save(ctx, gs_hw_find_builtin("h100"), "/dev/full"), GS_ERR_IO,
               strerror(ENOSPC), "");
    /* The device node is still a device (never renamed over). */
    struct stat st;
    cr_assert_eq(stat("/dev/full", &st), 0);
    cr_assert(S_ISCHR(st.st_mode), "/dev/full is no longer a character device");
    gs_ctx_destroy(ctx);
}

/* Saving through a symlink replaces the target and keeps the link. */
Test(hw, save_through_symlink_keeps_link) {
    hw_dir d = hw_dir_open();
    gs_ctx *ctx = d.ctx;
    char real[PATH_MAX], link[PATH_MAX];
    hw_dir_file(&d, "real.json", real);
    hw_dir_file(&d, "link.json", link);
    cr_assert_eq(gs_hw_save(ctx, gs_hw_find_builtin("t4"), real), GS_OK, "%s",
                 gs_ctx_errmsg(ctx));
    cr_assert_eq(symlink("real.json", link), 0, "symlink: %s", strerror(errno));
    cr_assert_eq(gs_hw_save(ctx, gs_hw_find_builtin("v100"), link), GS_OK, "%s",
                 gs_ctx_errmsg(ctx));
    struct stat st;
    cr_assert_eq(lstat(link, &st), 0);
    cr_assert(S_ISLNK(st.st_mode), "the symlink was replaced by a file");
    gs_hw back;
    cr_assert_eq(gs_hw_load_json(ctx, real, &back), GS_OK, "%s", gs_ctx_errmsg(ctx));
    assert_hw_equal(&back, gs_hw_find_builtin("v100"));
    cr_assert_eq(gs_test_count_files(d.dir, ""), 2);
    hw_dir_close(&d);
}

/* A write that fails half-way (here: the file-size limit, which behaves like
 * a full disk) removes the temp file and leaves the old file untouched.
 * Criterion runs each test in its own process, so the limit stays here. */
Test(hw, save_failing_write_keeps_old_file) {
    hw_dir d = hw_dir_open();
    gs_ctx *ctx = d.ctx;
    char path[PATH_MAX];
    hw_dir_file(&d, "keep.json", path);
    const gs_hw *old = gs_hw_find_builtin("orin-nano");
    cr_assert_eq(gs_hw_save(ctx, old, path), GS_OK, "%s", gs_ctx_errmsg(ctx));

    struct rlimit saved, lim;
    cr_assert_eq(getrlimit(RLIMIT_FSIZE, &saved), 0);
    lim = saved;
    lim.rlim_cur = 100; /* bytes: far less than a profile */
    void (*prev)(int) = signal(SIGXFSZ, SIG_IGN);
    cr_assert_eq(setrlimit(RLIMIT_FSIZE, &lim), 0);
    gs_status s = gs_hw_save(ctx, gs_hw_find_builtin("h100"), path);
    setrlimit(RLIMIT_FSIZE, &saved);
    signal(SIGXFSZ, prev);

    gs_test_expect_err(ctx, s, GS_ERR_IO, strerror(EFBIG), "");
    cr_assert_eq(gs_test_count_files(d.dir, ""), 1, "temp file left behind");
    gs_hw back;
    cr_assert_eq(gs_hw_load_json(ctx, path, &back), GS_OK, "%s", gs_ctx_errmsg(ctx));
    assert_hw_equal(&back, old);
    hw_dir_close(&d);
}
