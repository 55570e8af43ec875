/* test_suites.c — every operator of the suites and model lists constructs for
 * all 7 built-in profiles, and its kernel compiles with NVRTC for the
 * profile's arch (the nearest supported one where NVRTC lacks it) with 0
 * spills and within the profile's limits. Kernels are shape-generic, so each
 * distinct descriptor is compiled once.
 *
 * Compiling all ~1500 distinct kernels takes about an hour of CPU (2 s each:
 * 89 % of this test's time was NVRTC's), so `make test` constructs every
 * (operator, profile) pair but compiles every 32nd distinct kernel, about 48
 * (under GS_ASAN every 16th operator and every 32nd kernel: NVRTC is not
 * instrumented); `make check-suites` (GS_FULL_SUITES=1) compiles all, and
 * tests/nvrtc_types.sh every suite kernel in f16 and bf16. */
#include <criterion/criterion.h>
#include <glob.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "construct/construct.h"
#include "tests/test_common.h"

#define MAX_SEEN 8192

static void sweep_pairs(int parity) {
    gs_ctx *ctx = gs_ctx_create();
    bool nvrtc = gs_nvrtc_available(ctx);
    if (!nvrtc && gs_test_env_true("GS_REQUIRE_NVRTC"))
        cr_assert_fail("GS_REQUIRE_NVRTC=1 but NVRTC is missing: %s", gs_ctx_errmsg(ctx));
    if (!nvrtc)
        cr_log_warn("NVRTC not available (%s): the kernels are constructed and emitted, the NVRTC half of this test "
                    "(compile, spills, registers, shared memory) is skipped",
                    gs_ctx_errmsg(ctx));
    glob_t g;
    memset(&g, 0, sizeof g);
    cr_assert_eq(glob("experiments/suites/*.json", 0, NULL, &g), 0, "no suite files (run from the repository root)");
    cr_assert_eq(glob("experiments/models/*.json", GLOB_APPEND, NULL, &g), 0, "no model files");
    cr_assert(g.gl_pathc >= 9, "expected paper.json and 8 model files, found %zu", g.gl_pathc);
    static uint64_t seen[MAX_SEEN];
    int nseen = 0, constructed = 0, compiled = 0;
    /* the sanitizer build samples every 16th operator: the plain build covers all */
    int stride = getenv("GS_ASAN") ? 16 : 1, k = 0, pair = 0;
    int compile_every = gs_test_env_true("GS_FULL_SUITES") ? 1 : 32, distinct = 0;
    for (size_t f = 0; f < g.gl_pathc; f++) {
        json_error_t je;
        json_t *root = json_load_file(g.gl_pathv[f], 0, &je);
        cr_assert(root, "%s: %s", g.gl_pathv[f], je.text);
        json_t *ops = json_object_get(root, "ops");
        cr_assert(json_is_array(ops) && json_array_size(ops) > 0, "%s: no ops", g.gl_pathv[f]);
        for (size_t i = 0; i < json_array_size(ops); i++) {
            if (k++ % stride) continue;
            const char *spec = json_string_value(json_object_get(json_array_get(ops, i), "spec"));
            cr_assert(spec, "%s: ops[%zu] has no spec", g.gl_pathv[f], i);
            gs_op op;
            cr_assert_eq(gs_op_parse_into(ctx, spec, &op), GS_OK, "%s: %s: %s", g.gl_pathv[f], spec, gs_ctx_errmsg(ctx));
            for (int h = 0; h < gs_hw_builtin_count(); h++) {
                if (pair++ % 2 != parity) continue; /* every other (operator, profile) pair */
                const gs_hw *hw = gs_hw_builtin(h);
                gs_construct_opts o;
                gs_construct_opts_default(&o);
                o.top_k = 1;
                gs_result *r = NULL;
                cr_assert_eq(gs_construct(ctx, &op, hw, &o, &r), GS_OK, "%s on %s: %s", spec, hw->name,
                             gs_ctx_errmsg(ctx));
                constructed++;
                int arch = nvrtc ? gs_nvrtc_nearest_arch(ctx, hw->sm) : 0;
                gs_kernel_src ks;
                cr_assert_eq(gs_lower_emit(ctx, hw, &op, &r->cand[0], GS_DIALECT_CUDA, arch, &ks), GS_OK);
                cr_expect(ks.block <= hw->max_threads_per_block && ks.smem_bytes <= hw->smem_per_block_optin);
                bool dup = false;
                for (int s = 0; s < nseen && !dup; s++) dup = seen[s] == ks.hash;
                if (!dup && nseen < MAX_SEEN) seen[nseen++] = ks.hash;
                if (nvrtc && !dup && distinct++ % compile_every == 0) {
                    gs_nvrtc_out nv;
                    gs_status s = gs_nvrtc_compile(ctx, ks.src, ks.name, arch, false, true, &nv);
                    cr_assert_eq(s, GS_OK, "%s on %s: %s", spec, hw->name, gs_ctx_errmsg(ctx));
                    cr_expect_eq(nv.stats.spill_store_bytes + nv.stats.spill_load_bytes, 0, "%s on %s (%s): spills",
                                 spec, hw->name, r->desc[0]);
                    int64_t warps = (ks.block + hw->warp_size - 1) / hw->warp_size;
                    cr_expect(nv.stats.registers <= hw->max_regs_per_thread &&
                                  (int64_t)nv.stats.registers * warps * hw->warp_size <= hw->regs_per_sm,
                              "%s on %s: %d registers x %lld threads over the limits", spec, hw->name,
                              nv.stats.registers, (long long)ks.block);
                    cr_expect_eq(nv.stats.smem_bytes, ks.smem_dynamic ? ks.desc.plan.scratch_bytes : ks.smem_bytes);
                    /* ptxas may exceed the plan's register bound only in slack that costs
                     * no block per SM (the launch bounds are derived from the bound) */
                    const gs_plan *pl = &ks.desc.plan;
                    cr_expect(gs_plan_blocks_per_sm(hw, pl, nv.stats.registers) >= gs_plan_blocks_per_sm(hw, pl, pl->regs_bound),
                              "%s on %s (%s): ptxas %d registers cost occupancy against the plan's bound %d", spec, hw->name,
                              r->desc[0], nv.stats.registers, pl->regs_bound);
                    gs_nvrtc_out_free(&nv);
                    compiled++;
                }
                gs_kernel_src_free(&ks);
                gs_result_destroy(r);
            }
        }
        json_decref(root);
    }
    globfree(&g);
    cr_log_info("pairs of parity %d: %d constructions, %d distinct kernels, %d compiled", parity, constructed,
                distinct, compiled);
    cr_assert(constructed * stride > 600, "only %d constructions (one operator in %d)", constructed, stride);
    cr_assert(!nvrtc || compiled > 0, "NVRTC is present but no kernel was compiled");
    gs_ctx_destroy(ctx);
}

/* The two halves take every other (operator, profile) pair, so they take
 * about as long: split by profile (four of the seven against three) the
 * even half ran 131 s and the odd 65 s, the last minute of make test's unit
 * tests on one core. 2400 s: make check-suites compiles every kernel, and on
 * a quiet 2-core machine the four profiles' half ran past 900 s; make test's
 * sample takes a few minutes. */
Test(suites, all_ops_even_pairs, .timeout = 2400) { sweep_pairs(0); }
Test(suites, all_ops_odd_pairs, .timeout = 2400) { sweep_pairs(1); }
