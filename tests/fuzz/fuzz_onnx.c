/* fuzz_onnx.c — arbitrary bytes as an ONNX model (ir/onnx: the protobuf
 * reader, the ModelProto subset, the import). Checked on every input:
 *   - gs_model_load_buffer returns GS_OK with a model, or an error with no
 *     model and a message (never a crash, a hang or a read past the buffer:
 *     ASan watches);
 *   - a loaded model: every symbolic dim binds (to 1..4, from the input's
 *     bytes), the import succeeds (nothing unbound is left), and every node
 *     is one of the four kinds; a kernel node's operator validates, its spec
 *     parses back to the same spec, it has one binding per buffer, and every
 *     binding marked constant has data or is a non-fp32 constant;
 *     unsupported and view nodes carry a reason, fused ones a kernel node.
 * External data is refused (no directory), so the input is the whole world. */
#include "fuzz_common.h"
#include "ir/ir.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    gs_ctx *ctx = gs_ctx_create();
    if (!ctx) abort();
    gs_model *m = (gs_model *)ctx; /* must be overwritten */
    gs_status s = gs_model_load_buffer(ctx, data, size, NULL, &m);
    FUZZ_CHECK((s == GS_OK) == (m != NULL), "status %d with model %p", (int)s, (void *)m);
    if (s != GS_OK) {
        FUZZ_CHECK(*gs_ctx_errmsg(ctx), "status %d without a message", (int)s);
        gs_ctx_destroy(ctx);
        return 0;
    }
    for (int i = 0; i < gs_model_num_dims(m); i++) {
        const char *nm = gs_model_dim_name(m, i);
        FUZZ_CHECK(nm && *nm, "dim %d has no name", i);
        s = gs_model_bind_dim(ctx, m, nm, 1 + (int64_t)(size ? data[i % size] % 4 : 0));
        FUZZ_CHECK(s == GS_OK, "binding dim '%s': %s", nm, gs_ctx_errmsg(ctx));
    }
    s = gs_model_import(ctx, m);
    /* an input may still lack a size (no dim_value and no dim_param) */
    FUZZ_CHECK(s == GS_OK || (s == GS_ERR_INVALID_ARG && strstr(gs_ctx_errmsg(ctx), "input")),
               "import: %d %s", (int)s, gs_ctx_errmsg(ctx));
    int n = gs_model_num_nodes(m);
    for (int i = 0; s == GS_OK && i < n; i++) {
        gs_model_node nd;
        FUZZ_CHECK(gs_model_node_get(ctx, m, i, &nd) == GS_OK, "node %d: %s", i, gs_ctx_errmsg(ctx));
        FUZZ_CHECK(nd.name && nd.op_type, "node %d has no name or op_type", i);
        switch (nd.kind) {
        case GS_MODEL_KERNEL: {
            FUZZ_CHECK(nd.op && gs_op_validate(ctx, nd.op) == GS_OK, "node %d: %s", i, gs_ctx_errmsg(ctx));
            gs_op back;
            FUZZ_CHECK(gs_op_parse_into(ctx, gs_op_spec(nd.op), &back) == GS_OK &&
                           !strcmp(back.spec, gs_op_spec(nd.op)),
                       "node %d: spec '%s' does not round-trip", i, gs_op_spec(nd.op));
            FUZZ_CHECK(nd.nbindings == gs_op_num_buffers(nd.op), "node %d: %d bindings", i, nd.nbindings);
            for (int b = 0; b < nd.nbindings; b++) {
                FUZZ_CHECK(nd.bindings[b].tensor && nd.bindings[b].buffer, "node %d binding %d", i, b);
                if (!nd.bindings[b].constant) continue;
                const float *d = NULL;
                int64_t cnt = 0;
                gs_status cs = gs_model_constant(ctx, m, nd.bindings[b].tensor, &d, &cnt);
                FUZZ_CHECK(cs == GS_OK || cs == GS_ERR_UNSUPPORTED, "node %d constant '%s': %s", i,
                           nd.bindings[b].tensor, gs_ctx_errmsg(ctx));
            }
            break;
        }
        case GS_MODEL_FUSED:
        {
            gs_model_node k;
            FUZZ_CHECK(nd.fused_into >= 0 && nd.fused_into < i, "node %d fused into %d", i, nd.fused_into);
            FUZZ_CHECK(gs_model_node_get(ctx, m, nd.fused_into, &k) == GS_OK && k.kind == GS_MODEL_KERNEL,
                       "node %d fused into node %d, not a kernel", i, nd.fused_into);
        }
            break;
        case GS_MODEL_VIEW:
        case GS_MODEL_UNSUPPORTED: FUZZ_CHECK(nd.reason && *nd.reason, "node %d: no reason", i); break;
        default: FUZZ_CHECK(0, "node %d: kind %d", i, (int)nd.kind);
        }
    }
    gs_model_destroy(m);
    gs_ctx_destroy(ctx);
    return 0;
}
