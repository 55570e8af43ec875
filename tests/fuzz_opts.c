/* fuzz_opts.c — test tool for tests/fuzz_plans.py: verify one configuration
 * on the OpenCL device under a fallback plan (gs_plan_opts), which the CLI
 * cannot select. Not part of `make test`.
 *
 *   fuzz_opts [--nonfinite N] HW 'SPEC' 'CFG' OPTS [SEED ['RUNSPEC']]
 *
 * --nonfinite N: N of the inputs are NaN or +-inf (gs_verify_opts, as
 * `gensor verify --nonfinite N`).
 *
 * With RUNSPEC, the plan is made for SPEC and the kernel is emitted for and
 * run on RUNSPEC (same operator, other extents): the run-time guards must
 * keep a plan made for one shape correct on any shape.
 *
 * OPTS is four digits: scalar, predicated, no_async, min_blocks1 (0000 is the
 * library's plan, 1111 the v1-style kernel), optionally a fifth (split_atomic)
 * and a sixth (im2col: 0 auto, 1 force the im2col tile, 2 the tensor box), and a seventh
 * (no_frag_pipe: the pipeline without fragment double buffering). Prints PASS/FAIL with the plan
 * line; exit 0 pass, 1 mismatch or run error, 2 rejected / bad input.
 *
 * Build: cc -std=c11 -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE -I. -Iinclude \
 *        -o build/fuzz_opts tests/fuzz_opts.c build/libgensor.a \
 *        -lgsl -lgslcblas -ljansson -lOpenCL -ldl -lm */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "construct/construct.h"
#include "kernels/service/service.h"

int main(int argc, char **argv) {
    gs_verify_opts vo = {0};
    if (argc > 2 && !strcmp(argv[1], "--nonfinite")) {
        vo.nonfinite = strtoll(argv[2], NULL, 10);
        argv[2] = argv[0];
        argv += 2;
        argc -= 2;
    }
    size_t nopt = argc >= 5 ? strlen(argv[4]) : 0;
    if (argc < 5 || nopt < 4 || nopt > 7) {
        fprintf(stderr, "usage: fuzz_opts [--nonfinite N] HW SPEC CFG OPTS(4 to 7 digits) [SEED [RUNSPEC]]\n");
        return 2;
    }
    gs_ctx *ctx = gs_ctx_create();
    gs_op *op = NULL;
    gs_hw *hw = NULL;
    if (gs_op_parse(ctx, argv[2], &op) != GS_OK || gs_hw_load(ctx, argv[1], &hw) != GS_OK) {
        fprintf(stderr, "fuzz_opts: error: %s\n", gs_ctx_errmsg(ctx));
        return 2;
    }
    gs_etir e;
    if (gs_etir_parse_config(ctx, op, argv[3], &e) != GS_OK) {
        fprintf(stderr, "fuzz_opts: error: %s\n", gs_ctx_errmsg(ctx));
        return 2;
    }
    if (!gs_hw_check(hw, op, &e)) {
        fprintf(stderr, "fuzz_opts: error: config %s exceeds %s's limits\n", argv[3], argv[1]);
        return 2;
    }
    gs_plan_opts o = {(uint8_t)(argv[4][0] == '1'), (uint8_t)(argv[4][1] == '1'), (uint8_t)(argv[4][2] == '1'),
                      (uint8_t)(argv[4][3] == '1'), (uint8_t)(nopt > 4 && argv[4][4] == '1'),
                      (uint8_t)(nopt > 5 ? argv[4][5] - '0' : 0), (uint8_t)(nopt > 6 && argv[4][6] == '1')};
    if (o.im2col > GS_IM2COL_OFF) {
        fprintf(stderr, "fuzz_opts: error: im2col digit must be 0, 1 or 2 (got %s)\n", argv[4]);
        return 2;
    }
    gs_plan p;
    gs_plan_make(hw, op, &e, &o, &p);
    if (argc > 6) { /* run the plan of SPEC on RUNSPEC */
        gs_op *op2 = NULL;
        gs_etir e2;
        if (gs_op_parse(ctx, argv[6], &op2) != GS_OK || gs_etir_parse_config(ctx, op2, argv[3], &e2) != GS_OK) {
            fprintf(stderr, "fuzz_opts: error: RUNSPEC: %s\n", gs_ctx_errmsg(ctx));
            return 2;
        }
        if (!gs_hw_check(hw, op2, &e2)) {
            fprintf(stderr, "fuzz_opts: error: config %s exceeds %s's limits on RUNSPEC\n", argv[3], argv[1]);
            return 2;
        }
        gs_op_destroy(op);
        op = op2;
        e = e2;
    }
    char pl[512], desc[256];
    gs_plan_format(op, &p, pl, sizeof pl);
    gs_etir_format(op, &e, desc, sizeof desc);
    gs_device *cl = NULL;
    if (gs_device_open(ctx, GS_BACKEND_OPENCL, 0, &cl) != GS_OK) {
        fprintf(stderr, "fuzz_opts: error: %s\n", gs_ctx_errmsg(ctx));
        return 1;
    }
    uint64_t seed = argc > 5 ? strtoull(argv[5], NULL, 10) : 1;
    gs_diff d;
    gs_status s = gs_verify_plan_ex(ctx, cl, op, &e, &p, seed, &vo, &d);
    int rc = 0;
    if (s == GS_OK || s == GS_ERR_MISMATCH) {
        printf("  %s | plan %s | opts %s %s normwise %.2e max abs %.2e at %lld\n", desc, pl, argv[4],
               s == GS_OK ? "PASS" : "FAIL", d.normwise, d.max_abs, (long long)d.where);
        rc = s == GS_OK ? 0 : 1;
    } else {
        fprintf(stderr, "fuzz_opts: error: %s: %s\n", gs_status_str(s), gs_ctx_errmsg(ctx));
        rc = 1;
    }
    gs_device_close(cl);
    gs_hw_destroy(hw);
    gs_op_destroy(op);
    gs_ctx_destroy(ctx);
    return rc;
}
