/* fuzz_spec.c — the spec parser (gs_op_parse). Any input gives GS_OK or an
 * error status with a message; an accepted spec's canonical form parses
 * again to the same canonical form (a fixed point) with the same work. */
#include "fuzz_common.h"
#include "ir/ir.h"

#include <math.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char *spec = fuzz_cstr(data, size, 4096);
    gs_ctx *ctx = gs_ctx_create();
    gs_op *op = NULL;
    gs_status s = gs_op_parse(ctx, spec, &op);
    if (s != GS_OK) {
        FUZZ_CHECK(op == NULL, "op set on error %d", (int)s);
        FUZZ_CHECK(s < 0 && s >= GS_STATUS_MIN_, "status %d out of range", (int)s);
        FUZZ_CHECK(gs_ctx_errmsg(ctx)[0] != '\0', "error %d without a message", (int)s);
        FUZZ_CHECK(!strchr(gs_ctx_errmsg(ctx), '\n') || strchr(spec, '\n'), "message takes two lines: %s",
                   gs_ctx_errmsg(ctx));
    } else {
        const char *canon = gs_op_spec(op);
        double fl = gs_op_flops(op);
        FUZZ_CHECK(isfinite(fl) && fl >= 0, "flops %g for '%s'", fl, canon);
        gs_op *op2 = NULL;
        gs_status s2 = gs_op_parse(ctx, canon, &op2);
        FUZZ_CHECK(s2 == GS_OK, "canonical '%s' of '%s' does not parse: %s", canon, spec, gs_ctx_errmsg(ctx));
        FUZZ_CHECK(!strcmp(gs_op_spec(op2), canon), "canonical form moves: '%s' -> '%s'", canon, gs_op_spec(op2));
        FUZZ_CHECK(gs_op_flops(op2) == fl, "flops differ after a round trip of '%s'", canon);
        gs_op_destroy(op2);
    }
    gs_op_destroy(op);
    gs_ctx_destroy(ctx);
    free(spec);
    return 0;
}
