/* install_demo.c — a program built against an installed gensor, with only
 * <gensor.h> and `pkg-config --cflags --libs gensor` (tests/install_test.sh).
 *   install_demo SPEC PROFILE
 * Constructs SPEC for PROFILE, prints the ranked candidates and then the
 * CUDA C source of the best one (gs_kernel_emit). */
#include <gensor.h>

#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: %s SPEC PROFILE\n", argv[0]);
        return 2;
    }
    gs_ctx *ctx = gs_ctx_create();
    gs_op *op = NULL;
    gs_hw *hw = NULL;
    gs_result *r = NULL;
    gs_construct_opts o;
    gs_construct_opts_default(&o);
    o.top_k = 3;
    gs_status s = gs_op_parse(ctx, argv[1], &op);
    if (s == GS_OK) s = gs_hw_load(ctx, argv[2], &hw);
    if (s == GS_OK) s = gs_construct(ctx, op, hw, &o, &r);
    if (s != GS_OK) {
        fprintf(stderr, "install_demo: %s: %s\n", gs_status_str(s), gs_ctx_errmsg(ctx));
        gs_op_destroy(op);
        gs_hw_destroy(hw);
        gs_ctx_destroy(ctx);
        return 1;
    }
    printf("gensor %s: %s on %s (sm_%d)\n", GS_VERSION_STRING, gs_op_spec(op), gs_hw_name(hw), gs_hw_sm(hw));
    for (int i = 0; i < gs_result_count(r); i++)
        printf("%d  %s  %.6f ms\n", i, gs_result_describe(r, i), gs_result_predicted_s(r, i) * 1e3);
    char *src = NULL;
    s = gs_kernel_emit(ctx, r, 0, GS_DIALECT_CUDA, &src);
    if (s != GS_OK) {
        fprintf(stderr, "install_demo: gs_kernel_emit: %s: %s\n", gs_status_str(s), gs_ctx_errmsg(ctx));
    } else {
        fputs(src, stdout);
        free(src);
    }
    gs_result_destroy(r);
    gs_op_destroy(op);
    gs_hw_destroy(hw);
    gs_ctx_destroy(ctx);
    return s == GS_OK ? 0 : 1;
}
