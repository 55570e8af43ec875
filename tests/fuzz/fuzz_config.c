/* fuzz_config.c — the configuration parser (gs_etir_parse_config) on one of
 * a few operators (first byte). An accepted configuration is well-formed,
 * and formatting it and parsing that again gives the same state. */
#include "fuzz_common.h"
#include "ir/ir.h"

static const char *const specs[] = {
    "gemm M=1000 N=1000 K=1000 transA=1",
    "bgemm B=3 M=17 N=33 K=65",
    "gemv M=4096 N=77",
    "conv2d N=2 C=3 H=17 W=17 K=5 R=3 S=3 stride=2 pad=1 bias=1 relu=1",
    "dwconv2d N=1 C=32 H=28 W=28 R=3 S=3 layout=nhwc",
    "maxpool2d N=1 C=8 H=9 W=9 F=3 stride=2 pad=1",
    "rowsum M=7 K=1000",
    "add M=64 N=3 bcast=1",
    "relu M=1 N=1",
};
enum { NSPECS = (int)(sizeof specs / sizeof specs[0]) };

static int same_state(const gs_op *op, const gs_etir *a, const gs_etir *b) {
    for (int d = 0; d < op->naxes; d++)
        if (a->tile[d].thread != b->tile[d].thread || a->tile[d].block != b->tile[d].block || a->V[d] != b->V[d]) return 0;
    for (int t = 0; t < op->ninputs; t++)
        if (a->staged[t] != b->staged[t]) return 0;
    return a->level == b->level && a->stages == b->stages && a->raster == b->raster && a->lanes_log2 == b->lanes_log2 &&
           a->splitk == b->splitk;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    gs_ctx *ctx = gs_ctx_create();
    gs_op op;
    if (gs_op_parse_into(ctx, specs[data[0] % NSPECS], &op) != GS_OK) abort();
    char *cfg = fuzz_cstr(data + 1, size - 1, 2048);
    gs_etir e;
    gs_status s = gs_etir_parse_config(ctx, &op, cfg, &e);
    if (s != GS_OK) {
        FUZZ_CHECK(gs_ctx_errmsg(ctx)[0] != '\0', "error %d without a message", (int)s);
    } else {
        FUZZ_CHECK(gs_etir_wellformed(&op, &e), "accepted '%s' is not well-formed", cfg);
        char buf[512];
        gs_etir_format_config(&op, &e, buf, sizeof buf);
        gs_etir e2;
        s = gs_etir_parse_config(ctx, &op, buf, &e2);
        FUZZ_CHECK(s == GS_OK, "'%s' (from '%s') does not parse: %s", buf, cfg, gs_ctx_errmsg(ctx));
        FUZZ_CHECK(same_state(&op, &e, &e2), "'%s' -> '%s' changes the state", cfg, buf);
        FUZZ_CHECK(gs_etir_hash(&e) == gs_etir_hash(&e2), "hash differs after a round trip of '%s'", buf);
    }
    free(cfg);
    gs_ctx_destroy(ctx);
    return 0;
}
