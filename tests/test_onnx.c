/* test_onnx.c — the ONNX importer (ir/onnx): the protobuf reader at the
 * wire level, the models of tests/data/onnx (written by gen_models.py with
 * the onnx package) imported into the expected specs, bindings and folded
 * weights, and models written here by a small protobuf writer to pin the
 * wire forms the reader must accept alike (raw_data against float_data and
 * double_data, packed against unpacked repeated ints) and the ones it must
 * refuse cleanly (truncation at every byte, malformed fields). */
#include "ir/onnx/onnx.h"
#include "tests/test_common.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

TestSuite(onnx);

/* ---- a protobuf writer for hand-made models ------------------------------------ */
typedef struct pbw {
    uint8_t b[8192];
    size_t n;
} pbw;
static void w_varint(pbw *w, uint64_t v) {
    do {
        cr_assert(w->n < sizeof w->b);
        w->b[w->n++] = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
        v >>= 7;
    } while (v);
}
static void w_tag(pbw *w, int num, int wire) { w_varint(w, (uint64_t)num << 3 | (uint64_t)wire); }
static void w_int(pbw *w, int num, int64_t v) {
    w_tag(w, num, 0);
    w_varint(w, (uint64_t)v);
}
static void w_bytes(pbw *w, int num, const void *p, size_t n) {
    w_tag(w, num, 2);
    w_varint(w, n);
    cr_assert(w->n + n <= sizeof w->b);
    memcpy(w->b + w->n, p, n);
    w->n += n;
}
static void w_str(pbw *w, int num, const char *s) { w_bytes(w, num, s, strlen(s)); }
static void w_msg(pbw *w, int num, const pbw *sub) { w_bytes(w, num, sub->b, sub->n); }

/* The model of graph g (ir_version 7, the default domain at opset) loaded
 * from its bytes: the status, the model in *md. */
static gs_status load_graph(gs_ctx *ctx, const pbw *g, int opset, gs_model **md) {
    static pbw m, op;
    m.n = op.n = 0;
    w_int(&m, 1, 7);
    w_int(&op, 2, opset);
    w_msg(&m, 8, &op);
    w_msg(&m, 7, g);
    *md = NULL;
    return gs_model_load_buffer(ctx, m.b, m.n, NULL, md);
}
/* The same, loaded and imported. */
static gs_model *import_graph(gs_ctx *ctx, const pbw *g, int opset) {
    gs_model *md = NULL;
    cr_assert_eq(load_graph(ctx, g, opset, &md), GS_OK, "%s", gs_ctx_errmsg(ctx));
    cr_assert_eq(gs_model_import(ctx, md), GS_OK, "%s", gs_ctx_errmsg(ctx));
    return md;
}
static void w_fixed(pbw *w, uint64_t v, int bytes) {
    for (int i = 0; i < bytes; i++) {
        cr_assert(w->n < sizeof w->b);
        w->b[w->n++] = (uint8_t)(v >> (8 * i));
    }
}
static uint32_t f32_bits(float x) {
    uint32_t u;
    memcpy(&u, &x, 4);
    return u;
}
/* Repeated int64 field num: packed (one LEN record) or one record each. */
static void w_ints(pbw *w, int num, const int64_t *v, int n, int packed) {
    if (!packed) {
        for (int i = 0; i < n; i++) w_int(w, num, v[i]);
        return;
    }
    pbw p = {.n = 0};
    for (int i = 0; i < n; i++) w_varint(&p, (uint64_t)v[i]);
    w_msg(w, num, &p);
}

/* ValueInfoProto name, float tensor of dims (0: the symbolic dim "batch"). */
static void w_value(pbw *g, int num, const char *name, const int64_t *dims, int nd) {
    pbw shape = {.n = 0}, tt = {.n = 0}, ty = {.n = 0}, v = {.n = 0};
    for (int d = 0; d < nd; d++) {
        pbw dim = {.n = 0};
        if (dims[d]) w_int(&dim, 1, dims[d]);
        else w_str(&dim, 2, "batch");
        w_msg(&shape, 1, &dim);
    }
    w_int(&tt, 1, 1); /* FLOAT */
    w_msg(&tt, 2, &shape);
    w_msg(&ty, 1, &tt);
    w_str(&v, 1, name);
    w_msg(&v, 2, &ty);
    w_msg(g, num, &v);
}

/* The weight [3,2,3,3] as a TensorProto in one of four forms: 0 raw_data,
 * 1 float_data packed, 2 float_data unpacked (one fixed32 record each),
 * 3 double_data packed. dims packed or not. */
static void w_weight(pbw *g, int form, int packed_dims, float *vals) {
    static const int64_t wd[4] = {3, 2, 3, 3};
    pbw t = {.n = 0}, p = {.n = 0};
    for (int i = 0; i < 54; i++) vals[i] = (float)(i % 7) * 0.25f - 0.5f;
    w_ints(&t, 1, wd, 4, packed_dims);
    w_int(&t, 2, form == 3 ? 11 : 1);
    w_str(&t, 8, "W");
    if (form == 0) {
        for (int i = 0; i < 54; i++) w_fixed(&p, f32_bits(vals[i]), 4);
        w_msg(&t, 9, &p);
    } else if (form == 1) {
        for (int i = 0; i < 54; i++) w_fixed(&p, f32_bits(vals[i]), 4);
        w_msg(&t, 4, &p);
    } else if (form == 2) {
        for (int i = 0; i < 54; i++) {
            w_tag(&t, 4, 5);
            w_fixed(&t, f32_bits(vals[i]), 4);
        }
    } else {
        for (int i = 0; i < 54; i++) {
            double d = vals[i];
            uint64_t u;
            memcpy(&u, &d, 8);
            w_fixed(&p, u, 8);
        }
        w_msg(&t, 10, &p);
    }
    w_msg(g, 5, &t);
}

/* A model: Conv(x [batch,2,5,5], W, pads 1, strides 2) -> Relu, opset 13,
 * with the weight and the attribute ints in the given wire forms. */
static void w_model(pbw *m, int form, int packed) {
    static const int64_t xd[4] = {0, 2, 5, 5}, pads[4] = {1, 1, 1, 1}, st[2] = {2, 2};
    pbw g = {.n = 0}, conv = {.n = 0}, relu = {.n = 0}, a1 = {.n = 0}, a2 = {.n = 0}, op = {.n = 0};
    float vals[54];
    w_str(&conv, 1, "x");
    w_str(&conv, 1, "W");
    w_str(&conv, 2, "c");
    w_str(&conv, 3, "conv");
    w_str(&conv, 4, "Conv");
    w_str(&a1, 1, "pads");
    w_int(&a1, 20, 7); /* INTS */
    w_ints(&a1, 8, pads, 4, packed);
    w_msg(&conv, 5, &a1);
    w_str(&a2, 1, "strides");
    w_int(&a2, 20, 7);
    w_ints(&a2, 8, st, 2, packed);
    w_msg(&conv, 5, &a2);
    w_msg(&g, 1, &conv);
    w_str(&relu, 1, "c");
    w_str(&relu, 2, "y");
    w_str(&relu, 4, "Relu");
    w_msg(&g, 1, &relu);
    w_str(&g, 2, "hand");
    w_weight(&g, form, packed, vals);
    w_value(&g, 11, "x", xd, 4);
    w_int(m, 1, 8); /* ir_version */
    w_int(&op, 2, 13);
    w_msg(m, 8, &op);
    w_msg(m, 7, &g);
}

static gs_model *load_data(gs_ctx *ctx, const char *name) {
    char path[512];
    gs_test_data_path(path, sizeof path, name);
    gs_model *m = NULL;
    gs_status s = gs_model_load(ctx, path, &m);
    cr_assert_eq(s, GS_OK, "%s: %s", path, gs_ctx_errmsg(ctx));
    return m;
}

static void node(gs_ctx *ctx, const gs_model *m, int i, gs_model_node *nd) {
    cr_assert_eq(gs_model_node_get(ctx, m, i, nd), GS_OK, "node %d: %s", i, gs_ctx_errmsg(ctx));
}

/* The canonical spec of a hand-written one. */
static void expect_spec(gs_ctx *ctx, const gs_op *op, const char *want, const char *what) {
    gs_op w;
    cr_assert_eq(gs_op_parse_into(ctx, want, &w), GS_OK, "%s: %s", want, gs_ctx_errmsg(ctx));
    cr_assert_not_null(op, "%s: no operator", what);
    cr_expect_str_eq(gs_op_spec(op), w.spec, "%s: spec '%s', want '%s'", what, gs_op_spec(op), w.spec);
}

static void expect_binding(const gs_model_node *nd, int b, const char *buffer, const char *tensor, int constant) {
    cr_assert(b < nd->nbindings, "%s: %d bindings", nd->name, nd->nbindings);
    cr_expect_str_eq(nd->bindings[b].buffer, buffer, "%s binding %d: buffer %s", nd->name, b, nd->bindings[b].buffer);
    cr_expect_str_eq(nd->bindings[b].tensor, tensor, "%s binding %d: tensor %s", nd->name, b, nd->bindings[b].tensor);
    cr_expect_eq(nd->bindings[b].constant, constant, "%s binding %d (%s): constant %d", nd->name, b, tensor,
                 nd->bindings[b].constant);
}

/* ---- the generated models --------------------------------------------------------- */

/* act.onnx at batch 3: a Clip alone is the elementwise clip; Clip(0, 6)
 * after a 1x1 conv, Relu + Clip(max) after a 3x3 conv and Clip(min) after a
 * Gemm fuse into those kernels' epilogues (clip_lo/clip_hi); the bounds come
 * from constant inputs, an empty input leaves that side open. Its run against
 * ONNX Runtime is tests/onnx_manifest.sh. */
Test(onnx, clip_fuses_into_the_kernel_before_it) {
    gs_ctx *ctx = gs_ctx_create();
    gs_model *m = load_data(ctx, "onnx/act.onnx");
    cr_assert_eq(gs_model_bind_dim(ctx, m, "batch", 3), GS_OK);
    cr_assert_eq(gs_model_import(ctx, m), GS_OK, "%s", gs_ctx_errmsg(ctx));
    cr_assert_eq(gs_model_num_nodes(m), 9);
    static const struct { int kind, into; const char *spec; } want[9] = {
        {GS_MODEL_KERNEL, -1, "clip M=12 N=36 clip_lo=-0.5 clip_hi=0.5"},
        {GS_MODEL_KERNEL, -1, "conv2d N=3 C=4 H=6 W=6 K=8 R=1 S=1 bias=1 clip_lo=0 clip_hi=6"},
        {GS_MODEL_FUSED, 1, NULL},
        {GS_MODEL_KERNEL, -1, "conv2d N=3 C=8 H=6 W=6 K=8 R=3 S=3 pad=1 relu=1 clip_hi=0.5"},
        {GS_MODEL_FUSED, 3, NULL},
        {GS_MODEL_FUSED, 3, NULL},
        {GS_MODEL_VIEW, -1, NULL},
        {GS_MODEL_KERNEL, -1, "gemm M=3 N=10 K=288 transB=1 bias=1 clip_lo=-1"},
        {GS_MODEL_FUSED, 7, NULL},
    };
    for (int i = 0; i < 9; i++) {
        gs_model_node nd;
        node(ctx, m, i, &nd);
        cr_assert_eq((int)nd.kind, want[i].kind, "node %d (%s): kind %d, want %d (%s)", i, nd.name, (int)nd.kind,
                     want[i].kind, nd.reason ? nd.reason : "");
        if (want[i].kind == GS_MODEL_FUSED) cr_expect_eq(nd.fused_into, want[i].into, "node %d fused into %d", i, nd.fused_into);
        if (want[i].spec) expect_spec(ctx, nd.op, want[i].spec, nd.name);
    }
    gs_model_node g;
    node(ctx, m, 7, &g);
    expect_binding(&g, 2, "C", "y", 0); /* the gemm writes the last Clip's output */
    gs_model_destroy(m);
    gs_ctx_destroy(ctx);
}

/* chan.onnx at batch 2: per-channel vectors over NCHW ([3,1,1] and
 * [1,3,1,1], either side) are addc/mulc, a batch norm alone is mulc with
 * a bias of derived constants (s = scale / sqrt(var + eps), t = b - mean s),
 * a scalar is one channel. Its run against ONNX Runtime is
 * tests/onnx_manifest.sh. */
Test(onnx, channel_broadcasts_and_batchnorm_alone) {
    gs_ctx *ctx = gs_ctx_create();
    gs_model *m = load_data(ctx, "onnx/chan.onnx");
    cr_assert_eq(gs_model_bind_dim(ctx, m, "batch", 2), GS_OK);
    cr_assert_eq(gs_model_import(ctx, m), GS_OK, "%s", gs_ctx_errmsg(ctx));
    static const char *const want[4] = {"addc A=2 C=3 B=20", "mulc A=2 C=3 B=20", "mulc A=2 C=3 B=20 bias=1",
                                        "addc A=120 C=1 B=1"};
    gs_model_node nd;
    for (int i = 0; i < 4; i++) {
        node(ctx, m, i, &nd);
        cr_assert_eq(nd.kind, GS_MODEL_KERNEL, "node %d (%s): %s", i, nd.name, nd.reason ? nd.reason : "");
        expect_spec(ctx, nd.op, want[i], nd.name);
    }
    node(ctx, m, 1, &nd);
    expect_binding(&nd, 0, "X", "a", 0); /* the larger side is X, the vector Y */
    expect_binding(&nd, 1, "Y", "cs", 1);
    node(ctx, m, 2, &nd);
    expect_binding(&nd, 1, "Y", "n:scale", 1);
    expect_binding(&nd, 3, "bias", "n:shift", 1);
    const float *sc, *sh, *s0, *b0, *mu, *var;
    int64_t n;
    cr_assert_eq(gs_model_constant(ctx, m, "n:scale", &sc, &n), GS_OK);
    cr_assert_eq(n, 3);
    cr_assert_eq(gs_model_constant(ctx, m, "n:shift", &sh, &n), GS_OK);
    cr_assert_eq(gs_model_constant(ctx, m, "bn.s", &s0, &n), GS_OK);
    cr_assert_eq(gs_model_constant(ctx, m, "bn.b", &b0, &n), GS_OK);
    cr_assert_eq(gs_model_constant(ctx, m, "bn.m", &mu, &n), GS_OK);
    cr_assert_eq(gs_model_constant(ctx, m, "bn.v", &var, &n), GS_OK);
    for (int k = 0; k < 3; k++) {
        double s = s0[k] / sqrt((double)var[k] + 1e-3);
        cr_expect(fabs(sc[k] - s) <= 1e-6 * fabs(s), "scale[%d] %g, want %g", k, sc[k], s);
        cr_expect(fabs(sh[k] - (b0[k] - mu[k] * s)) <= 1e-5, "shift[%d] %g, want %g", k, sh[k], b0[k] - mu[k] * s);
    }
    gs_model_destroy(m);
    gs_ctx_destroy(ctx);
}

/* conv(bias)+bn+relu+maxpool+flatten+gemm(transB, bias)+relu at batch 8: the
 * batch norm folds into the conv, both Relus fuse, the Flatten is a view. */
Test(onnx, chain_imports_into_expected_specs) {
    gs_ctx *ctx = gs_ctx_create();
    gs_model *m = load_data(ctx, "onnx/chain.onnx");
    cr_expect_eq(gs_model_opset(m), 13);
    cr_assert_eq(gs_model_num_dims(m), 1);
    cr_expect_str_eq(gs_model_dim_name(m, 0), "batch");
    cr_assert_eq(gs_model_bind_dim(ctx, m, "batch", 8), GS_OK, "%s", gs_ctx_errmsg(ctx));
    cr_assert_eq(gs_model_import(ctx, m), GS_OK, "%s", gs_ctx_errmsg(ctx));
    cr_assert_eq(gs_model_num_nodes(m), 7);
    gs_model_node nd;
    node(ctx, m, 0, &nd);
    cr_assert_eq(nd.kind, GS_MODEL_KERNEL, "conv: %s", nd.reason ? nd.reason : "");
    expect_spec(ctx, nd.op, "conv2d N=8 C=3 H=8 W=8 K=8 R=3 S=3 pad=1 layout=nchw bias=1 relu=1", "conv");
    expect_binding(&nd, 0, "I", "x", 0);
    expect_binding(&nd, 1, "F", "conv.w+n", 1);
    expect_binding(&nd, 2, "O", "r", 0);
    expect_binding(&nd, 3, "bias", "conv.b+n:bias", 1);
    node(ctx, m, 1, &nd);
    cr_expect(nd.kind == GS_MODEL_FUSED && nd.fused_into == 0, "bn: kind %d into %d", nd.kind, nd.fused_into);
    node(ctx, m, 2, &nd);
    cr_expect(nd.kind == GS_MODEL_FUSED && nd.fused_into == 0, "relu: kind %d into %d", nd.kind, nd.fused_into);
    node(ctx, m, 3, &nd);
    cr_assert_eq(nd.kind, GS_MODEL_KERNEL);
    expect_spec(ctx, nd.op, "maxpool2d N=8 C=8 H=8 W=8 F=2 stride=2 layout=nchw", "pool");
    expect_binding(&nd, 0, "I", "r", 0);
    expect_binding(&nd, 1, "O", "p", 0);
    node(ctx, m, 4, &nd);
    cr_expect_eq(nd.kind, GS_MODEL_VIEW);
    cr_expect(nd.reason && strstr(nd.reason, "[8,128]"), "flatten: %s", nd.reason ? nd.reason : "(null)");
    expect_binding(&nd, 0, "in", "p", 0);
    expect_binding(&nd, 1, "out", "f", 0);
    node(ctx, m, 5, &nd);
    cr_assert_eq(nd.kind, GS_MODEL_KERNEL);
    expect_spec(ctx, nd.op, "gemm M=8 N=10 K=128 transB=1 bias=1 relu=1", "fc");
    expect_binding(&nd, 0, "A", "f", 0);
    expect_binding(&nd, 1, "B", "fc.w", 1);
    expect_binding(&nd, 2, "C", "y", 0);
    expect_binding(&nd, 3, "bias", "fc.b", 1);
    node(ctx, m, 6, &nd);
    cr_expect(nd.kind == GS_MODEL_FUSED && nd.fused_into == 5, "fc_relu: kind %d into %d", nd.kind, nd.fused_into);
    /* rebinding re-imports at another batch */
    cr_assert_eq(gs_model_bind_dim(ctx, m, "batch", 3), GS_OK);
    gs_test_expect_err(ctx, gs_model_node_get(ctx, m, 0, &nd), GS_ERR_INVALID_ARG, "import the model first", "stale");
    cr_assert_eq(gs_model_import(ctx, m), GS_OK);
    node(ctx, m, 5, &nd);
    expect_spec(ctx, nd.op, "gemm M=3 N=10 K=128 transB=1 bias=1 relu=1", "fc at batch 3");
    gs_model_destroy(m);
    gs_ctx_destroy(ctx);
}

/* The folded kernel computes what conv -> batch norm -> relu computes from
 * the file's own initializers (the typed float_data of the batch norm, the
 * raw_data of the conv), on every output of a batch of 2. */
Test(onnx, chain_batchnorm_fold_matches_the_unfolded_graph) {
    gs_ctx *ctx = gs_ctx_create();
    gs_model *m = load_data(ctx, "onnx/chain.onnx");
    cr_assert_eq(gs_model_bind_dim(ctx, m, "batch", 2), GS_OK);
    cr_assert_eq(gs_model_import(ctx, m), GS_OK, "%s", gs_ctx_errmsg(ctx));
    gs_model_node nd;
    node(ctx, m, 0, &nd);
    cr_assert_eq(nd.kind, GS_MODEL_KERNEL);
    const float *w, *b, *sc, *be, *mu, *var, *fw, *fb;
    int64_t n;
    cr_assert_eq(gs_model_constant(ctx, m, "conv.w", &w, &n), GS_OK);
    cr_assert_eq(n, 8 * 3 * 3 * 3);
    cr_assert_eq(gs_model_constant(ctx, m, "conv.b", &b, &n), GS_OK);
    cr_assert_eq(gs_model_constant(ctx, m, "bn.scale", &sc, &n), GS_OK);
    cr_assert_eq(n, 8);
    for (int k = 0; k < 8; k++) cr_expect(sc[k] >= 0.5f && sc[k] <= 1.5f, "bn.scale[%d] = %g", k, sc[k]);
    cr_assert_eq(gs_model_constant(ctx, m, "bn.beta", &be, &n), GS_OK);
    cr_assert_eq(gs_model_constant(ctx, m, "bn.mean", &mu, &n), GS_OK);
    cr_assert_eq(gs_model_constant(ctx, m, "bn.var", &var, &n), GS_OK);
    cr_assert_eq(gs_model_constant(ctx, m, nd.bindings[1].tensor, &fw, &n), GS_OK);
    cr_assert_eq(n, 8 * 27);
    cr_assert_eq(gs_model_constant(ctx, m, nd.bindings[3].tensor, &fb, &n), GS_OK);
    cr_assert_eq(n, 8);
    static float x[2 * 3 * 8 * 8], y[2 * 8 * 8 * 8];
    for (int i = 0; i < 2 * 3 * 64; i++) x[i] = (float)((i * 37) % 17) / 8.0f - 1.0f;
    const float *ins[2] = {x, fw};
    cr_assert_eq(gs_op_reference(ctx, nd.op, ins, fb, y), GS_OK, "%s", gs_ctx_errmsg(ctx));
    double worst = 0;
    for (int nn = 0; nn < 2; nn++)
        for (int k = 0; k < 8; k++)
            for (int p = 0; p < 8; p++)
                for (int q = 0; q < 8; q++) {
                    double acc = b[k];
                    for (int c = 0; c < 3; c++)
                        for (int r = 0; r < 3; r++)
                            for (int s = 0; s < 3; s++) {
                                int h = p - 1 + r, ww = q - 1 + s;
                                if (h < 0 || h >= 8 || ww < 0 || ww >= 8) continue;
                                acc += (double)w[((k * 3 + c) * 3 + r) * 3 + s] * x[((nn * 3 + c) * 8 + h) * 8 + ww];
                            }
                    double z = sc[k] * (acc - mu[k]) / sqrt((double)var[k] + 1e-3) + be[k];
                    if (z < 0) z = 0;
                    double e = fabs(z - y[((nn * 8 + k) * 8 + p) * 8 + q]);
                    if (e > worst) worst = e;
                }
    cr_expect(worst < 1e-4, "folded conv differs from conv+bn+relu by %g", worst);
    gs_model_destroy(m);
    gs_ctx_destroy(ctx);
}

/* chain_ext.onnx keeps every initializer in chain_ext.bin next to it: the
 * same specs and the same constants as the inline file. */
Test(onnx, external_data_equals_inline) {
    gs_ctx *ctx = gs_ctx_create();
    gs_model *a = load_data(ctx, "onnx/chain.onnx"), *b = load_data(ctx, "onnx/chain_ext.onnx");
    cr_assert_eq(gs_model_bind_dim(ctx, a, "batch", 4), GS_OK);
    cr_assert_eq(gs_model_bind_dim(ctx, b, "batch", 4), GS_OK);
    cr_assert_eq(gs_model_import(ctx, a), GS_OK);
    cr_assert_eq(gs_model_import(ctx, b), GS_OK, "%s", gs_ctx_errmsg(ctx));
    for (int i = 0; i < gs_model_num_nodes(a); i++) {
        gs_model_node x, y;
        node(ctx, a, i, &x);
        node(ctx, b, i, &y);
        cr_expect_eq(x.kind, y.kind, "node %d", i);
        if (x.op && y.op) cr_expect_str_eq(gs_op_spec(x.op), gs_op_spec(y.op), "node %d", i);
    }
    static const char *names[] = {"conv.w", "conv.b", "bn.scale", "bn.var", "fc.w", "fc.b", "conv.w+n"};
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
        const float *p, *q;
        int64_t n1, n2;
        cr_assert_eq(gs_model_constant(ctx, a, names[k], &p, &n1), GS_OK, "%s", gs_ctx_errmsg(ctx));
        cr_assert_eq(gs_model_constant(ctx, b, names[k], &q, &n2), GS_OK, "%s", gs_ctx_errmsg(ctx));
        cr_assert_eq(n1, n2, "%s", names[k]);
        cr_expect(!memcmp(p, q, (size_t)n1 * sizeof *p), "%s differs", names[k]);
    }
    gs_model_destroy(a);
    gs_model_destroy(b);
    gs_ctx_destroy(ctx);
}

/* misc.onnx: average pooling with ONNX's count_include_pad=0, MatMul over a
 * [2,seq,16] batch, Add of equal shapes, Mul by a vector, the reductions with
 * their axes as an input (ReduceSum, opset 13) and as an attribute
 * (ReduceMean), a Reshape view, Gemm with a whole [M,N] C, a Softmax
 * replaced at load by its five nodes (max subtracted, exp, sum, divide) and
 * a Selu that is listed as unsupported. */
Test(onnx, misc_maps_and_lists_the_rest) {
    gs_ctx *ctx = gs_ctx_create();
    gs_model *m = load_data(ctx, "onnx/misc.onnx");
    cr_assert_eq(gs_model_bind_dim(ctx, m, "seq", 3), GS_OK);
    cr_assert_eq(gs_model_import(ctx, m), GS_OK, "%s", gs_ctx_errmsg(ctx));
    cr_assert_eq(gs_model_num_nodes(m), 14, "9 nodes, the Softmax as 5");
    static const char *want[13] = {
        "avgpool2d N=1 C=2 H=5 W=5 F=3 stride=2 pad=1 layout=nchw count_include_pad=0",
        "gemm M=6 N=8 K=16",
        "add M=6 N=8",
        "mul M=6 N=8 bcast=1",
        "rowsum M=6 K=8",
        "rowmean M=6 K=8",
        "rowmax M=6 K=8",
        "subc A=1 C=6 B=8",
        "unary M=6 N=8 act=exp",
        "rowsum M=6 K=8",
        "divc A=1 C=6 B=8",
        NULL,
        "gemm M=6 N=4 K=8 alpha=0.5 beta=2",
    };
    for (int i = 0; i < 13; i++) {
        gs_model_node nd;
        node(ctx, m, i, &nd);
        if (want[i]) {
            cr_assert_eq(nd.kind, GS_MODEL_KERNEL, "node %d (%s): %s", i, nd.op_type, nd.reason ? nd.reason : "");
            expect_spec(ctx, nd.op, want[i], nd.name);
        }
    }
    gs_model_node nd;
    node(ctx, m, 13, &nd);
    cr_expect(nd.kind == GS_MODEL_UNSUPPORTED && nd.reason && strstr(nd.reason, "Selu"), "selu: %d %s", nd.kind,
              nd.reason ? nd.reason : "");
    /* the softmax's nodes: named after it, the last writes its output */
    node(ctx, m, 6, &nd);
    cr_expect_str_eq(nd.name, "softmax/Softmax.max");
    expect_binding(&nd, 1, "Y", "sm/Softmax.max", 0);
    node(ctx, m, 10, &nd);
    cr_expect_str_eq(nd.name, "softmax/Softmax.div");
    expect_binding(&nd, 0, "X", "sm/Softmax.exp", 0);
    expect_binding(&nd, 1, "Y", "sm/Softmax.sum", 0);
    expect_binding(&nd, 2, "Z", "sm", 0);
    node(ctx, m, 11, &nd);
    cr_expect_eq(nd.kind, GS_MODEL_VIEW, "reshape");
    node(ctx, m, 12, &nd);
    cr_expect_str_eq(nd.out_init ? nd.out_init : "", "g.c", "the gemm's output starts as C");
    expect_binding(&nd, 0, "A", "flat", 0);
    node(ctx, m, 3, &nd);
    expect_binding(&nd, 1, "Y", "vec", 1);
    gs_model_destroy(m);
    gs_ctx_destroy(ctx);
}

Test(onnx, unbound_and_unknown_dims_are_refused) {
    gs_ctx *ctx = gs_ctx_create();
    gs_model *m = load_data(ctx, "onnx/chain.onnx");
    gs_test_expect_err(ctx, gs_model_import(ctx, m), GS_ERR_INVALID_ARG, "dim 'batch'&&input 'x' dim 0&&not bound",
                       "unbound batch");
    gs_test_expect_err(ctx, gs_model_bind_dim(ctx, m, "seq", 4), GS_ERR_INVALID_ARG, "no symbolic dim 'seq'&&batch",
                       "unknown dim");
    gs_test_expect_err(ctx, gs_model_bind_dim(ctx, m, "batch", 0), GS_ERR_INVALID_ARG, "batch=0", "zero");
    gs_model_destroy(m);
    gs_ctx_destroy(ctx);
}

/* ---- hand-written wire forms -------------------------------------------------------- */

/* The weight as raw_data, packed float_data, unpacked float_data or
 * double_data, and the dims and attribute ints packed or unpacked: the same
 * operator and the same weight values every time. */
Test(onnx, raw_typed_packed_unpacked_forms_agree) {
    gs_ctx *ctx = gs_ctx_create();
    float vals[54];
    for (int i = 0; i < 54; i++) vals[i] = (float)(i % 7) * 0.25f - 0.5f;
    for (int form = 0; form < 4; form++)
        for (int packed = 0; packed < 2; packed++) {
            pbw w = {.n = 0};
            w_model(&w, form, packed);
            gs_model *m = NULL;
            gs_status s = gs_model_load_buffer(ctx, w.b, w.n, NULL, &m);
            cr_assert_eq(s, GS_OK, "form %d packed %d: %s", form, packed, gs_ctx_errmsg(ctx));
            cr_assert_eq(gs_model_bind_dim(ctx, m, "batch", 2), GS_OK);
            cr_assert_eq(gs_model_import(ctx, m), GS_OK, "%s", gs_ctx_errmsg(ctx));
            gs_model_node nd;
            node(ctx, m, 0, &nd);
            cr_assert_eq(nd.kind, GS_MODEL_KERNEL, "form %d packed %d: %s", form, packed, nd.reason ? nd.reason : "");
            expect_spec(ctx, nd.op, "conv2d N=2 C=2 H=5 W=5 K=3 R=3 S=3 stride=2 pad=1 relu=1", "hand conv");
            const float *p;
            int64_t n;
            cr_assert_eq(gs_model_constant(ctx, m, "W", &p, &n), GS_OK, "%s", gs_ctx_errmsg(ctx));
            cr_assert_eq(n, 54);
            cr_expect(!memcmp(p, vals, sizeof vals), "form %d packed %d: weight values differ", form, packed);
            gs_model_destroy(m);
        }
    gs_ctx_destroy(ctx);
}

/* The length of the top-level graph field's record end in a model buffer. */
static size_t graph_end(const uint8_t *b, size_t n) {
    gs_pb r;
    gs_pb_field f;
    gs_pb_init(&r, b, n);
    size_t end = 0;
    while (gs_pb_next(&r, &f) == 1)
        if (f.num == 7) end = (size_t)(f.data + f.len - b);
    return end;
}

/* Every prefix of a good file: no crash, and an error (GS_ERR_PARSE with the
 * file and a reason) whenever the cut falls before the end of the graph;
 * after it, a model that may lack its opset still imports. */
static void truncate_everywhere(gs_ctx *ctx, const uint8_t *b, size_t n, const char *what) {
    size_t ge = graph_end(b, n);
    cr_assert(ge > 0 && ge <= n, "%s: graph end %zu of %zu", what, ge, n);
    int errs = 0;
    for (size_t cut = 0; cut < n; cut++) {
        gs_model *m = (gs_model *)ctx;
        gs_status s = gs_model_load_buffer(ctx, b, cut, NULL, &m);
        if (cut < ge) {
            cr_expect(s == GS_ERR_PARSE && m == NULL && strstr(gs_ctx_errmsg(ctx), "model"),
                      "%s cut at %zu of %zu: %s '%s'", what, cut, n, gs_status_str(s), gs_ctx_errmsg(ctx));
            errs += s != GS_OK;
        } else if (s == GS_OK) {
            gs_model_bind_dim(ctx, m, "batch", 1);
            gs_model_bind_dim(ctx, m, "seq", 3);
            cr_expect_eq(gs_model_import(ctx, m), GS_OK, "%s cut at %zu: %s", what, cut, gs_ctx_errmsg(ctx));
        }
        if (s == GS_OK) gs_model_destroy(m);
    }
    cr_expect(errs == (int)ge, "%s: %d of %zu prefixes refused", what, errs, ge);
}

Test(onnx, truncated_at_every_byte_is_refused_cleanly) {
    gs_ctx *ctx = gs_ctx_create();
    static const char *files[] = {"onnx/chain.onnx", "onnx/misc.onnx"};
    for (int k = 0; k < 2; k++) {
        char path[512];
        gs_test_data_path(path, sizeof path, files[k]);
        FILE *f = fopen(path, "rb");
        cr_assert_not_null(f, "%s", path);
        static uint8_t buf[1 << 16];
        size_t n = fread(buf, 1, sizeof buf, f);
        fclose(f);
        cr_assert(n > 100 && n < sizeof buf);
        truncate_everywhere(ctx, buf, n, files[k]);
    }
    pbw w = {.n = 0};
    w_model(&w, 2, 1);
    truncate_everywhere(ctx, w.b, w.n, "hand model");
    gs_ctx_destroy(ctx);
}

/* Malformed records: each refused with GS_ERR_PARSE (or UNSUPPORTED) and a
 * message naming the problem. */
Test(onnx, malformed_inputs_are_refused) {
    gs_ctx *ctx = gs_ctx_create();
    static const struct {
        const char *what, *bytes;
        size_t n;
        gs_status s;
        const char *needle;
    } cases[] = {
        {"empty", "", 0, GS_ERR_PARSE, "empty file"},
        {"text", "hello, world", 12, GS_ERR_PARSE, "malformed ONNX model"},
        {"truncated varint", "\x08\xff\xff", 3, GS_ERR_PARSE, "truncated varint"},
        {"varint over 64 bits", "\x08\xff\xff\xff\xff\xff\xff\xff\xff\xff\x02", 11, GS_ERR_PARSE, "longer than 64 bits"},
        {"field 0", "\x00\x01", 2, GS_ERR_PARSE, "field number 0"},
        {"group", "\x0b\x0c", 2, GS_ERR_PARSE, "wire type"},
        {"length past end", "\x3a\x10\x0a", 3, GS_ERR_PARSE, "past the end"},
        {"fixed32 cut", "\x15\x01\x02", 3, GS_ERR_PARSE, "truncated fixed32"},
        {"no graph", "\x08\x07", 2, GS_ERR_PARSE, "no graph"},
        {"graph no ir_version", "\x3a\x00", 2, GS_ERR_PARSE, "no ir_version"},
        {"two graphs", "\x08\x07\x3a\x00\x3a\x00", 6, GS_ERR_PARSE, "two graphs"},
        /* graph > initializer with dims [2] and FLOAT, raw_data of 4 bytes (wants 8) */
        {"raw_data short", "\x08\x07\x3a\x0d\x2a\x0b\x08\x02\x10\x01\x42\x01t\x4a\x02\x00\x00", 17, GS_ERR_PARSE,
         "tensor 't': raw_data has 2 bytes, its shape needs 8"},
        /* the same with external data and no directory */
        {"external, no location", "\x08\x07\x3a\x0b\x2a\x09\x08\x01\x10\x01\x42\x01t\x70\x01", 15, GS_ERR_PARSE,
         "external data without a location"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        gs_model *m = (gs_model *)ctx;
        gs_status s = gs_model_load_buffer(ctx, cases[i].bytes, cases[i].n, NULL, &m);
        cr_expect(s == cases[i].s && m == NULL && strstr(gs_ctx_errmsg(ctx), cases[i].needle),
                  "%s: %s '%s', want %s with '%s'", cases[i].what, gs_status_str(s), gs_ctx_errmsg(ctx),
                  gs_status_str(cases[i].s), cases[i].needle);
        if (s == GS_OK) gs_model_destroy(m);
    }
    /* accepted: a tensor whose name (field 8) is a varint, not bytes (fuzz_onnx's
     * regress-str-dup-null: the reader copied the name from a NULL pointer) */
    static const char odd[] = "\x08\x07\x3a\x04\x2a\x02\x40\x01";
    gs_model *m = NULL;
    cr_expect_eq(gs_model_load_buffer(ctx, odd, sizeof odd - 1, NULL, &m), GS_OK, "%s", gs_ctx_errmsg(ctx));
    gs_model_destroy(m);
    m = NULL;
    gs_test_expect_err(ctx, gs_model_load(ctx, "/nonexistent/model.onnx", &m), GS_ERR_IO, "cannot open", "missing");
    gs_ctx_destroy(ctx);
}

/* The reader alone: varint limits, packed and unpacked elements, the depth
 * limit, and fixed-width values little-endian. */
Test(onnx, wire_reader_units) {
    gs_pb r;
    gs_pb_field f;
    /* the largest varint: 10 bytes */
    static const uint8_t big[] = {0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01};
    gs_pb_init(&r, big, sizeof big);
    cr_assert_eq(gs_pb_next(&r, &f), 1, "%s", r.err ? r.err : "");
    cr_expect_eq(f.v, UINT64_MAX);
    cr_expect_eq(gs_pb_next(&r, &f), 0);
    /* fixed64 and fixed32, little-endian */
    static const uint8_t fx[] = {0x09, 1, 2, 3, 4, 5, 6, 7, 8, 0x15, 0, 0, 0x80, 0x3f};
    gs_pb_init(&r, fx, sizeof fx);
    cr_assert_eq(gs_pb_next(&r, &f), 1);
    cr_expect_eq(f.v, 0x0807060504030201ull);
    cr_assert_eq(gs_pb_next(&r, &f), 1);
    cr_expect_eq(gs_pb_f32(f.v), 1.0f);
    /* packed varints [1, 300, 0] and one unpacked 7 */
    static const uint8_t pk[] = {0x0a, 0x04, 0x01, 0xac, 0x02, 0x00, 0x08, 0x07};
    gs_pb_init(&r, pk, sizeof pk);
    uint64_t got[8], v;
    int n = 0, rc;
    while (gs_pb_next(&r, &f) == 1) {
        gs_pb it = {0};
        while ((rc = gs_pb_repeated(&f, GS_PB_VARINT, &it, &v)) == 1 && n < 8) got[n++] = v;
        cr_assert_eq(rc, 0, "%s", it.err ? it.err : "");
    }
    cr_assert_eq(n, 4);
    cr_expect(got[0] == 1 && got[1] == 300 && got[2] == 0 && got[3] == 7, "%llu %llu %llu %llu",
              (unsigned long long)got[0], (unsigned long long)got[1], (unsigned long long)got[2],
              (unsigned long long)got[3]);
    /* a packed run cut inside its last varint */
    static const uint8_t cut[] = {0x0a, 0x02, 0x01, 0xac};
    gs_pb_init(&r, cut, sizeof cut);
    cr_assert_eq(gs_pb_next(&r, &f), 1);
    gs_pb it = {0};
    cr_expect_eq(gs_pb_repeated(&f, GS_PB_VARINT, &it, &v), 1);
    cr_expect_eq(gs_pb_repeated(&f, GS_PB_VARINT, &it, &v), -1);
    cr_expect(it.err && strstr(it.err, "truncated varint"), "%s", it.err ? it.err : "");
    /* nesting: GS_PB_MAX_DEPTH levels open, one more does not */
    gs_pb lv = r;
    lv.depth = GS_PB_MAX_DEPTH - 1;
    gs_pb sub;
    cr_expect_eq(gs_pb_sub(&lv, &f, &sub), 0);
    lv.depth = GS_PB_MAX_DEPTH;
    cr_expect_eq(gs_pb_sub(&lv, &f, &sub), -1);
    cr_expect(sub.err && strstr(sub.err, "nested too deeply"), "%s", sub.err ? sub.err : "");
}

/* ---- the imported chain, run on PoCL through its bindings --------------------------- */
#define E2E_MAX 16
typedef struct e2e_store {
    const char *name[E2E_MAX];
    float *data[E2E_MAX];
    int64_t n[E2E_MAX];
    int count;
} e2e_store;
static float *e2e_get(e2e_store *s, const char *name, int64_t *n) {
    for (int i = 0; i < s->count; i++)
        if (!strcmp(s->name[i], name)) {
            if (n) *n = s->n[i];
            return s->data[i];
        }
    return NULL;
}
static void e2e_put(e2e_store *s, const char *name, float *data, int64_t n) {
    cr_assert(s->count < E2E_MAX);
    s->name[s->count] = name;
    s->data[s->count] = data;
    s->n[s->count++] = n;
}

/* chain.onnx at batch 2, every kernel node constructed for rtx3090 and its
 * top candidate run on the OpenCL device, fed by the bindings alone (the
 * constants from gs_model_constant, the activations from the node that
 * wrote them, views passing their buffer on); the graph output against the
 * unfolded graph computed here from the file's initializers. */
Test(onnx, chain_runs_on_opencl_through_its_bindings, .timeout = 300) {
    gs_ctx *ctx = gs_ctx_create();
    gs_device *dev = NULL;
    gs_status s = gs_device_open(ctx, GS_BACKEND_OPENCL, 0, &dev);
    if (s == GS_ERR_OPENCL_MISSING && !gs_test_env_true("GS_REQUIRE_OPENCL")) {
        cr_log_warn("no OpenCL device: %s", gs_ctx_errmsg(ctx));
        gs_ctx_destroy(ctx);
        cr_skip_test("no OpenCL device");
    }
    cr_assert_eq(s, GS_OK, "%s", gs_ctx_errmsg(ctx));
    gs_model *m = load_data(ctx, "onnx/chain.onnx");
    cr_assert_eq(gs_model_bind_dim(ctx, m, "batch", 2), GS_OK);
    cr_assert_eq(gs_model_import(ctx, m), GS_OK, "%s", gs_ctx_errmsg(ctx));
    gs_hw *hw = NULL;
    cr_assert_eq(gs_hw_load(ctx, "rtx3090", &hw), GS_OK);
    e2e_store st = {.count = 0};
    static float x[2 * 3 * 8 * 8];
    for (int i = 0; i < 2 * 3 * 64; i++) x[i] = (float)((i * 29) % 23) / 11.0f - 1.0f;
    e2e_put(&st, "x", x, 2 * 3 * 64);
    int kernels = 0;
    for (int i = 0; i < gs_model_num_nodes(m); i++) {
        gs_model_node nd;
        node(ctx, m, i, &nd);
        cr_assert(nd.kind != GS_MODEL_UNSUPPORTED, "node %d: %s", i, nd.reason);
        if (nd.kind == GS_MODEL_VIEW) { /* Flatten: the same buffer under its output's name */
            cr_assert(nd.op == NULL && nd.nbindings == 2 && nd.bindings[1].output, "view node %d", i);
            int64_t n;
            float *in = e2e_get(&st, nd.bindings[0].tensor, &n);
            cr_assert_not_null(in, "view node %d reads '%s', not written before", i, nd.bindings[0].tensor);
            e2e_put(&st, nd.bindings[1].tensor, in, n);
            continue;
        }
        if (nd.kind != GS_MODEL_KERNEL) continue;
        kernels++;
        gs_result *r = NULL;
        gs_construct_opts o;
        gs_construct_opts_default(&o);
        cr_assert_eq(gs_construct(ctx, nd.op, hw, &o, &r), GS_OK, "%s: %s", nd.name, gs_ctx_errmsg(ctx));
        gs_kernel *k = NULL;
        cr_assert_eq(gs_kernel_create(ctx, r, 0, GS_DIALECT_OPENCL, 0, &k), GS_OK, "%s", gs_ctx_errmsg(ctx));
        gs_buffer *bufs[8] = {0};
        float *out = NULL;
        int64_t on = 0;
        int oi = -1;
        for (int b = 0; b < nd.nbindings; b++) {
            const gs_model_binding *bd = &nd.bindings[b];
            int64_t n = gs_op_buffer_elems(nd.op, b), have = 0;
            const float *host = NULL;
            if (bd->output) {
                oi = b;
                on = n;
                out = calloc((size_t)n, sizeof *out);
                cr_assert_not_null(out);
                host = out;
                have = n;
            } else if (bd->constant) {
                cr_assert_eq(gs_model_constant(ctx, m, bd->tensor, &host, &have), GS_OK, "%s", gs_ctx_errmsg(ctx));
            } else {
                host = e2e_get(&st, bd->tensor, &have);
                cr_assert_not_null(host, "%s: '%s' was not written before", nd.name, bd->tensor);
            }
            cr_assert_eq(have, n, "%s: %s holds %lld elements, buffer %s takes %lld", nd.name, bd->tensor,
                         (long long)have, bd->buffer, (long long)n);
            cr_assert_eq(gs_buffer_create(ctx, dev, (size_t)n * sizeof(float), host, &bufs[b]), GS_OK, "%s",
                         gs_ctx_errmsg(ctx));
        }
        cr_assert(oi >= 0, "%s: no output binding", nd.name);
        s = gs_kernel_run(ctx, dev, k, nd.op, bufs, nd.nbindings, NULL);
        cr_assert_eq(s, GS_OK, "%s: %s", nd.name, gs_ctx_errmsg(ctx));
        cr_assert_eq(gs_buffer_read(ctx, bufs[oi], out, (size_t)on * sizeof(float)), GS_OK);
        e2e_put(&st, nd.bindings[oi].tensor, out, on);
        for (int b = 0; b < nd.nbindings; b++) gs_buffer_destroy(bufs[b]);
        gs_kernel_destroy(k);
        gs_result_destroy(r);
    }
    cr_expect_eq(kernels, 3);
    /* the unfolded graph: conv+bias, batch norm (eps 1e-3), relu, 2x2/2 max pool,
     * flatten, y = relu(f . fc.w^T + fc.b) */
    const float *w, *b, *sc, *be, *mu, *var, *fw, *fb;
    int64_t n;
    cr_assert_eq(gs_model_constant(ctx, m, "conv.w", &w, &n), GS_OK);
    cr_assert_eq(gs_model_constant(ctx, m, "conv.b", &b, &n), GS_OK);
    cr_assert_eq(gs_model_constant(ctx, m, "bn.scale", &sc, &n), GS_OK);
    cr_assert_eq(gs_model_constant(ctx, m, "bn.beta", &be, &n), GS_OK);
    cr_assert_eq(gs_model_constant(ctx, m, "bn.mean", &mu, &n), GS_OK);
    cr_assert_eq(gs_model_constant(ctx, m, "bn.var", &var, &n), GS_OK);
    cr_assert_eq(gs_model_constant(ctx, m, "fc.w", &fw, &n), GS_OK);
    cr_assert_eq(gs_model_constant(ctx, m, "fc.b", &fb, &n), GS_OK);
    static double act[2][8][8][8], pooled[2][128];
    for (int nn = 0; nn < 2; nn++)
        for (int k = 0; k < 8; k++)
            for (int p = 0; p < 8; p++)
                for (int q = 0; q < 8; q++) {
                    double acc = b[k];
                    for (int c = 0; c < 3; c++)
                        for (int r = 0; r < 3; r++)
                            for (int s2 = 0; s2 < 3; s2++) {
                                int h = p - 1 + r, ww = q - 1 + s2;
                                if (h >= 0 && h < 8 && ww >= 0 && ww < 8)
                                    acc += (double)w[((k * 3 + c) * 3 + r) * 3 + s2] * x[((nn * 3 + c) * 8 + h) * 8 + ww];
                            }
                    double z = sc[k] * (acc - mu[k]) / sqrt((double)var[k] + 1e-3) + be[k];
                    act[nn][k][p][q] = z > 0 ? z : 0;
                }
    for (int nn = 0; nn < 2; nn++)
        for (int k = 0; k < 8; k++)
            for (int p = 0; p < 4; p++)
                for (int q = 0; q < 4; q++) {
                    double v = -INFINITY;
                    for (int r = 0; r < 2; r++)
                        for (int s2 = 0; s2 < 2; s2++) v = fmax(v, act[nn][k][2 * p + r][2 * q + s2]);
                    pooled[nn][(k * 4 + p) * 4 + q] = v;
                }
    float *y = e2e_get(&st, "y", &n);
    cr_assert_not_null(y, "the graph output y was not written");
    cr_assert_eq(n, 20);
    double worst = 0, big = 0;
    for (int nn = 0; nn < 2; nn++)
        for (int j = 0; j < 10; j++) {
            double acc = fb[j];
            for (int i = 0; i < 128; i++) acc += pooled[nn][i] * fw[j * 128 + i];
            double want = acc > 0 ? acc : 0;
            worst = fmax(worst, fabs(want - y[nn * 10 + j]));
            big = fmax(big, fabs(want));
        }
    cr_expect(big > 0.1, "the chain's output is all near zero (%g): a weak check", big);
    cr_expect(worst <= 1e-4 * fmax(1.0, big), "y differs from the unfolded graph by %g (max |y| %g)", worst, big);
    for (int i = 1; i < st.count; i++) /* x is static; f aliases p */
        if (strcmp(st.name[i], "f")) free(st.data[i]);
    gs_hw_destroy(hw);
    gs_model_destroy(m);
    gs_device_close(dev);
    gs_ctx_destroy(ctx);
}

/* The light models of the onnx wheel make their weights with ConstantOfShape
 * and add residuals with Sum: W = ConstantOfShape([3,2,3,3], value 0.5),
 * c = Conv(x, W), y = Sum(c, c). The conv takes W as a constant of 0.5s and
 * the Sum becomes an add; a Sum of three of one shape is one add (inputs=3). */
Test(onnx, constant_of_shape_and_sum) {
    static const int64_t xd[4] = {1, 2, 5, 5}, wshape[4] = {3, 2, 3, 3}, one[1] = {1};
    pbw g = {.n = 0}, sh = {.n = 0}, cos = {.n = 0}, val = {.n = 0}, vt = {.n = 0}, conv = {.n = 0},
        sum = {.n = 0}, sum3 = {.n = 0};
    /* the shape: dims [4], INT64, a name, int64_data packed */
    static const int64_t four[1] = {4};
    w_ints(&sh, 1, four, 1, 0);
    w_int(&sh, 2, 7);
    w_str(&sh, 8, "wshape");
    w_ints(&sh, 7, wshape, 4, 1);
    w_msg(&g, 5, &sh);
    w_ints(&vt, 1, one, 1, 0);
    w_int(&vt, 2, 1);
    pbw fd = {.n = 0};
    w_fixed(&fd, f32_bits(0.5f), 4);
    w_msg(&vt, 4, &fd);
    w_str(&val, 1, "value");
    w_int(&val, 20, 4);
    w_msg(&val, 5, &vt);
    w_str(&cos, 1, "wshape");
    w_str(&cos, 2, "W");
    w_str(&cos, 4, "ConstantOfShape");
    w_msg(&cos, 5, &val);
    w_msg(&g, 1, &cos);
    w_str(&conv, 1, "x");
    w_str(&conv, 1, "W");
    w_str(&conv, 2, "c");
    w_str(&conv, 4, "Conv");
    w_msg(&g, 1, &conv);
    w_str(&sum, 1, "c");
    w_str(&sum, 1, "c");
    w_str(&sum, 2, "y");
    w_str(&sum, 4, "Sum");
    w_msg(&g, 1, &sum);
    w_str(&sum3, 1, "c");
    w_str(&sum3, 1, "c");
    w_str(&sum3, 1, "y");
    w_str(&sum3, 2, "z");
    w_str(&sum3, 4, "Sum");
    w_msg(&g, 1, &sum3);
    w_value(&g, 11, "x", xd, 4);
    gs_ctx *ctx = gs_ctx_create();
    gs_model *md = import_graph(ctx, &g, 9);
    gs_model_node nd;
    node(ctx, md, 0, &nd);
    cr_expect_eq(nd.kind, GS_MODEL_VIEW, "ConstantOfShape: %d %s", nd.kind, nd.reason ? nd.reason : "");
    node(ctx, md, 1, &nd);
    cr_assert_eq(nd.kind, GS_MODEL_KERNEL, "conv: %s", nd.reason ? nd.reason : "");
    expect_spec(ctx, nd.op, "conv2d N=1 C=2 H=5 W=5 K=3 R=3 S=3", "conv");
    expect_binding(&nd, 1, "F", "W", 1);
    const float *w;
    int64_t n;
    cr_assert_eq(gs_model_constant(ctx, md, "W", &w, &n), GS_OK, "%s", gs_ctx_errmsg(ctx));
    cr_assert_eq(n, 54);
    for (int i = 0; i < 54; i++) cr_expect_eq(w[i], 0.5f, "W[%d] = %g", i, w[i]);
    node(ctx, md, 2, &nd);
    cr_assert_eq(nd.kind, GS_MODEL_KERNEL, "sum: %s", nd.reason ? nd.reason : "");
    expect_spec(ctx, nd.op, "add M=3 N=9", "sum");
    node(ctx, md, 3, &nd); /* three inputs of one shape: one kernel */
    cr_assert_eq(nd.kind, GS_MODEL_KERNEL, "sum3: %s", nd.reason ? nd.reason : "");
    expect_spec(ctx, nd.op, "add M=3 N=9 inputs=3", "sum3");
    expect_binding(&nd, 2, "W", "y", 0);
    gs_model_destroy(md);
    gs_ctx_destroy(ctx);
}

/* A node op_type(in0[, in1]) -> out into graph g, with one float attribute
 * (name NULL: none). */
static void w_node(pbw *g, const char *op_type, const char *in0, const char *in1, const char *out, const char *fattr,
                   float fval) {
    pbw nd = {.n = 0};
    w_str(&nd, 1, in0);
    if (in1) w_str(&nd, 1, in1);
    w_str(&nd, 2, out);
    w_str(&nd, 3, out); /* named after its output */
    w_str(&nd, 4, op_type);
    if (fattr) {
        pbw a = {.n = 0};
        w_str(&a, 1, fattr);
        w_tag(&a, 2, 5); /* f: fixed32 */
        w_fixed(&a, f32_bits(fval), 4);
        w_int(&a, 20, 1); /* FLOAT */
        w_msg(&nd, 5, &a);
    }
    w_msg(g, 1, &nd);
}

/* Element-wise functions after a MatMul fuse into its epilogue before a Relu
 * (h = MatMul(x, w), s = Sigmoid(h), y = Relu(s): one gemm with act=sigmoid
 * relu=1); a LeakyRelu keeps its alpha; a HardSigmoid, whose slope scales its
 * input before the bias a gemm would add, stays a unary kernel of its own. */
Test(onnx, unary_functions_fuse_after_matmul) {
    static const int64_t xd[2] = {2, 8}, wd[2] = {8, 4}, yd[2] = {2, 4};
    pbw g = {.n = 0};
    w_node(&g, "MatMul", "x", "w", "h", NULL, 0);
    w_node(&g, "Sigmoid", "h", NULL, "s", NULL, 0);
    w_node(&g, "Relu", "s", NULL, "y", NULL, 0);
    w_node(&g, "MatMul", "x", "w", "h2", NULL, 0);
    w_node(&g, "LeakyRelu", "h2", NULL, "l", "alpha", 0.25f);
    w_node(&g, "MatMul", "x", "w", "h3", NULL, 0);
    w_node(&g, "HardSigmoid", "h3", NULL, "z", "alpha", 0.5f);
    w_value(&g, 11, "x", xd, 2);
    w_value(&g, 11, "w", wd, 2);
    w_value(&g, 12, "y", yd, 2);
    w_value(&g, 12, "l", yd, 2);
    w_value(&g, 12, "z", yd, 2);
    gs_ctx *ctx = gs_ctx_create();
    gs_model *md = import_graph(ctx, &g, 13);
    gs_model_node nd;
    node(ctx, md, 0, &nd);
    cr_assert_eq(nd.kind, GS_MODEL_KERNEL, "matmul: %s", nd.reason ? nd.reason : "");
    expect_spec(ctx, nd.op, "gemm M=2 N=4 K=8 act=sigmoid relu=1", "matmul+sigmoid+relu");
    expect_binding(&nd, 2, "C", "y", 0);
    for (int i = 1; i <= 2; i++) {
        node(ctx, md, i, &nd);
        cr_expect(nd.kind == GS_MODEL_FUSED && nd.fused_into == 0, "node %d: kind %d into %d", i, nd.kind,
                  nd.fused_into);
    }
    node(ctx, md, 3, &nd);
    expect_spec(ctx, nd.op, "gemm M=2 N=4 K=8 act=leakyrelu act_p=0.25", "matmul+leakyrelu");
    node(ctx, md, 5, &nd);
    expect_spec(ctx, nd.op, "gemm M=2 N=4 K=8", "matmul before a hardsigmoid");
    node(ctx, md, 6, &nd);
    cr_assert_eq(nd.kind, GS_MODEL_KERNEL, "hardsigmoid: %s", nd.reason ? nd.reason : "");
    expect_spec(ctx, nd.op, "unary M=2 N=4 act=hardsigmoid act_p=0.5 alpha=0.5", "hardsigmoid");
    gs_model_destroy(md);
    gs_ctx_destroy(ctx);
}

/* Nodes out of topological order (ONNX asks for it; ONNX Runtime sorts them
 * itself): y = Relu(h) listed before h = MatMul(x, w) imports as the sorted
 * graph, the Relu fused into the gemm (it was refused: "no known shape (from
 * an unsupported node)", its producer being later in the file); a node
 * independent of the others keeps its place. */
Test(onnx, nodes_out_of_order_import_sorted) {
    static const int64_t xd[2] = {2, 8}, wd[2] = {8, 4}, yd[2] = {2, 4};
    pbw g = {.n = 0};
    w_node(&g, "Relu", "h", NULL, "y", NULL, 0);
    w_node(&g, "Sigmoid", "x", NULL, "s", NULL, 0); /* independent: stays ahead of the MatMul */
    w_node(&g, "MatMul", "x", "w", "h", NULL, 0);
    w_node(&g, "Add", "y", "y", "z", NULL, 0);
    w_value(&g, 11, "x", xd, 2);
    w_value(&g, 11, "w", wd, 2);
    w_value(&g, 12, "s", xd, 2);
    w_value(&g, 12, "z", yd, 2);
    gs_ctx *ctx = gs_ctx_create();
    gs_model *md = import_graph(ctx, &g, 13);
    cr_assert_eq(gs_model_num_nodes(md), 4);
    gs_model_node nd;
    static const char *const order[] = {"s", "h", "y", "z"};
    for (int i = 0; i < 4; i++) {
        node(ctx, md, i, &nd);
        cr_expect_str_eq(nd.name, order[i], "node %d is '%s', want '%s'", i, nd.name, order[i]);
    }
    node(ctx, md, 1, &nd);
    cr_assert_eq(nd.kind, GS_MODEL_KERNEL, "matmul: %s", nd.reason ? nd.reason : "");
    expect_spec(ctx, nd.op, "gemm M=2 N=4 K=8 relu=1", "matmul+relu");
    expect_binding(&nd, 2, "C", "y", 0);
    node(ctx, md, 2, &nd);
    cr_expect(nd.kind == GS_MODEL_FUSED && nd.fused_into == 1, "relu: kind %d into %d (%s)", nd.kind, nd.fused_into,
              nd.reason ? nd.reason : "");
    node(ctx, md, 3, &nd);
    cr_assert_eq(nd.kind, GS_MODEL_KERNEL, "add: %s", nd.reason ? nd.reason : "");
    expect_spec(ctx, nd.op, "add M=2 N=4", "add");
    gs_model_destroy(md);
    gs_ctx_destroy(ctx);
}

/* An input no graph input, initializer or node defines is named as such (the
 * reason was "no known shape (from an unsupported node)", for a kernel node and
 * "input 0 has no known shape" for a view); a node after an unsupported one is
 * still told so. */
Test(onnx, an_input_nothing_defines_is_named) {
    static const int64_t xd[2] = {2, 3};
    pbw g = {.n = 0};
    w_node(&g, "Add", "x", "nowhere", "a", NULL, 0);
    w_node(&g, "Relu", "a", NULL, "r", NULL, 0);
    w_node(&g, "Identity", "ghost", NULL, "i", NULL, 0);
    w_value(&g, 11, "x", xd, 2);
    gs_ctx *ctx = gs_ctx_create();
    gs_model *md = import_graph(ctx, &g, 13);
    static const char *const want[] = {"input 'nowhere' is not a graph input, an initializer or a node's output",
                                       "input 'a' has no known shape (from an unsupported node)",
                                       "input 'ghost' is not a graph input, an initializer or a node's output"};
    for (int i = 0; i < 3; i++) {
        gs_model_node nd;
        node(ctx, md, i, &nd);
        cr_expect(nd.kind == GS_MODEL_UNSUPPORTED && nd.reason && strstr(nd.reason, want[i]),
                  "node %d: kind %d, reason '%s', want '%s'", i, nd.kind, nd.reason ? nd.reason : "", want[i]);
    }
    gs_model_destroy(md);
    gs_ctx_destroy(ctx);
}

/* A node op_type(a, b) -> out with the attributes of the legacy broadcast
 * (before opset 7): broadcast=1 and, when axis >= 0, axis. */
static void w_legacy(pbw *g, const char *op_type, const char *a, const char *b, const char *out, int axis) {
    pbw nd = {.n = 0}, at = {.n = 0};
    w_str(&nd, 1, a);
    w_str(&nd, 1, b);
    w_str(&nd, 2, out);
    w_str(&nd, 3, out);
    w_str(&nd, 4, op_type);
    w_str(&at, 1, "broadcast");
    w_int(&at, 3, 1);
    w_int(&at, 20, 2); /* INT */
    w_msg(&nd, 5, &at);
    if (axis >= 0) {
        at.n = 0;
        w_str(&at, 1, "axis");
        w_int(&at, 3, axis);
        w_int(&at, 20, 2);
        w_msg(&nd, 5, &at);
    }
    w_msg(g, 1, &nd);
}

/* Before opset 7, Add/Sub/Mul/Div/Pow broadcast B from 'axis' on (B's dims are
 * A's dims axis.. axis+rank(B)-1), not aligned from the right as numpy does:
 * Add(x [2,4,3,4], b [4], broadcast=1, axis=1) adds b per channel (addc); it
 * was imported as a vector over the last dim (add ... bcast=1), silently
 * wrong since W = C here, and refused where they differ. Without axis, B is
 * aligned from the right, as in numpy; a B that is not A's dims from axis is
 * refused. */
Test(onnx, legacy_broadcast_axis_before_opset_7) {
    static const int64_t xd[4] = {2, 4, 3, 4}, bd[1] = {4}, cd[2] = {4, 3}, md[2] = {3, 4}, dd[2] = {2, 4};
    pbw g = {.n = 0};
    w_legacy(&g, "Add", "x", "b", "y1", 1);
    w_legacy(&g, "Sub", "x", "c", "y2", 1);
    w_legacy(&g, "Mul", "x", "m", "y3", -1); /* no axis: from the right */
    w_legacy(&g, "Div", "x", "d", "y4", 0);
    w_legacy(&g, "Pow", "x", "c", "y5", 2);
    w_value(&g, 11, "x", xd, 4);
    w_value(&g, 11, "b", bd, 1);
    w_value(&g, 11, "c", cd, 2);
    w_value(&g, 11, "m", md, 2);
    w_value(&g, 11, "d", dd, 2);
    gs_ctx *ctx = gs_ctx_create();
    gs_model *md6 = import_graph(ctx, &g, 6);
    static const char *const want[] = {"addc A=2 C=4 B=12", "subc A=2 C=12 B=4", "mul M=8 N=12 bcast=1",
                                       "divc A=1 C=8 B=12"};
    gs_model_node nd;
    for (int i = 0; i < 4; i++) {
        node(ctx, md6, i, &nd);
        cr_assert_eq(nd.kind, GS_MODEL_KERNEL, "node %d: %s", i, nd.reason ? nd.reason : "");
        expect_spec(ctx, nd.op, want[i], want[i]);
    }
    node(ctx, md6, 4, &nd); /* c [4,3] is not [2,4,3,4]'s dims from axis 2 */
    cr_assert_eq(nd.kind, GS_MODEL_UNSUPPORTED);
    cr_expect(nd.reason && strstr(nd.reason, "[4,3] is not the dims of [2,4,3,4] from axis=2"), "pow from axis 2: '%s'",
              nd.reason ? nd.reason : "");
    gs_model_destroy(md6);
    /* from opset 7 the attributes are gone and broadcasting is numpy's */
    gs_model *md7 = import_graph(ctx, &g, 7);
    node(ctx, md7, 0, &nd);
    expect_spec(ctx, nd.op, "add M=24 N=4 bcast=1", "add at opset 7");
    gs_model_destroy(md7);
    gs_ctx_destroy(ctx);
}

/* Graphs ONNX Runtime refuses are refused at load, naming the problem (they
 * loaded, and the import made kernels of them): a cycle, a tensor two nodes
 * write, a node output named as a graph input or an initializer. */
Test(onnx, cycles_and_twice_defined_tensors_are_refused) {
    static const int64_t xd[2] = {2, 3};
    gs_ctx *ctx = gs_ctx_create();
    gs_model *md;
    pbw g = {.n = 0};
    w_node(&g, "Add", "x", "b", "a", NULL, 0);
    w_node(&g, "Relu", "a", NULL, "b", NULL, 0);
    w_value(&g, 11, "x", xd, 2);
    gs_test_expect_err(ctx, load_graph(ctx, &g, 13, &md), GS_ERR_PARSE,
                       "a cycle: node 1 'b' (Relu) reads 'a', which depends on its own output", "cycle");
    cr_expect_null(md);
    g.n = 0;
    w_node(&g, "Relu", "x", NULL, "s", NULL, 0);
    w_node(&g, "Relu", "t", NULL, "t", NULL, 0); /* reads its own output */
    w_value(&g, 11, "x", xd, 2);
    gs_test_expect_err(ctx, load_graph(ctx, &g, 13, &md), GS_ERR_PARSE, "a cycle: node 1 't' (Relu) reads 't'", "a self-loop");
    g.n = 0;
    w_node(&g, "Relu", "x", NULL, "y", NULL, 0);
    w_node(&g, "Sigmoid", "x", NULL, "y", NULL, 0);
    w_node(&g, "Add", "y", "x", "z", NULL, 0);
    w_value(&g, 11, "x", xd, 2);
    gs_test_expect_err(ctx, load_graph(ctx, &g, 13, &md), GS_ERR_PARSE,
                       "'y' is written by node 0 'y' (Relu) and node 1 'y' (Sigmoid)", "two writers");
    g.n = 0;
    w_node(&g, "Sigmoid", "x", NULL, "x", NULL, 0);
    w_value(&g, 11, "x", xd, 2);
    gs_test_expect_err(ctx, load_graph(ctx, &g, 13, &md), GS_ERR_PARSE,
                       "node 0 'x' (Sigmoid) writes 'x', a graph input", "output named as an input");
    g.n = 0;
    float vals[54];
    w_weight(&g, 0, 1, vals); /* the initializer "W" */
    w_node(&g, "Relu", "x", NULL, "W", NULL, 0);
    w_value(&g, 11, "x", xd, 2);
    gs_test_expect_err(ctx, load_graph(ctx, &g, 13, &md), GS_ERR_PARSE,
                       "node 0 'W' (Relu) writes 'W', an initializer", "output named as an initializer");
    gs_ctx_destroy(ctx);
}

/* group.onnx at batch 2: each grouped Conv is one conv2d groups=G kernel; the
 * batch norm after the first folds into its weights and bias (the bias read
 * per group's channel), Relu and Clip(0, 6) fuse into the epilogues; group = C
 * with two outputs per channel is a grouped conv (not a depthwise one, which
 * needs K = C). Its run against ONNX Runtime is tests/onnx_manifest.sh. */
Test(onnx, grouped_convs_import_as_one_kernel_each) {
    gs_ctx *ctx = gs_ctx_create();
    gs_model *m = load_data(ctx, "onnx/group.onnx");
    cr_assert_eq(gs_model_bind_dim(ctx, m, "batch", 2), GS_OK, "%s", gs_ctx_errmsg(ctx));
    cr_assert_eq(gs_model_import(ctx, m), GS_OK, "%s", gs_ctx_errmsg(ctx));
    cr_assert_eq(gs_model_num_nodes(m), 6);
    gs_model_node nd;
    node(ctx, m, 0, &nd);
    cr_assert_eq(nd.kind, GS_MODEL_KERNEL, "gconv3: %s", nd.reason ? nd.reason : "");
    expect_spec(ctx, nd.op, "conv2d N=2 C=6 H=9 W=8 K=9 R=3 S=3 groups=3 stride=2 pad=1 bias=1 relu=1", "gconv3");
    expect_binding(&nd, 1, "F", "w1+n1", 1);
    expect_binding(&nd, 2, "O", "r1", 0);
    expect_binding(&nd, 3, "bias", "b1+n1:bias", 1);
    cr_expect_eq(gs_op_buffer_elems(nd.op, 3), 9, "gconv3: the bias has K = 9 elements");
    for (int i = 1; i <= 2; i++) {
        gs_model_node f;
        node(ctx, m, i, &f);
        cr_expect(f.kind == GS_MODEL_FUSED && f.fused_into == 0, "node %d: kind %d into %d", i, f.kind, f.fused_into);
    }
    node(ctx, m, 3, &nd);
    cr_assert_eq(nd.kind, GS_MODEL_KERNEL, "gconv9: %s", nd.reason ? nd.reason : "");
    expect_spec(ctx, nd.op, "conv2d N=2 C=9 H=5 W=4 K=18 R=3 S=3 groups=9 dilation=2 pad=2 bias=1 clip_lo=0 clip_hi=6",
                "gconv9");
    node(ctx, m, 5, &nd);
    cr_assert_eq(nd.kind, GS_MODEL_KERNEL, "gconv2: %s", nd.reason ? nd.reason : "");
    expect_spec(ctx, nd.op, "conv2d N=2 C=18 H=5 W=4 K=8 R=1 S=1 groups=2", "gconv2");
    expect_binding(&nd, 2, "O", "y", 0);
    gs_model_destroy(m);
    gs_ctx_destroy(ctx);
}

/* Conv(x, w) -> out with group (an INT attribute) into graph g. */
static void w_gconv(pbw *g, const char *x, const char *w, const char *out, int64_t group) {
    pbw nd = {.n = 0}, a = {.n = 0};
    w_str(&nd, 1, x);
    w_str(&nd, 1, w);
    w_str(&nd, 2, out);
    w_str(&nd, 3, out);
    w_str(&nd, 4, "Conv");
    w_str(&a, 1, "group");
    w_int(&a, 3, group);
    w_int(&a, 20, 2); /* INT */
    w_msg(&nd, 5, &a);
    w_msg(g, 1, &nd);
}

/* A Conv's group against the weight's shape: group 2 of C = 6 with [4,3,3,3]
 * is conv2d groups=2, group = C = K the depthwise conv, group = C with K = 2C
 * a grouped conv, group 1 with C = K = 1 the plain conv2d; a group that does not divide C or K, a weight whose input
 * channels are not C/group and a group of 0 are each listed with the reason. */
Test(onnx, grouped_conv_shapes_and_their_reasons) {
    static const int64_t xd[4] = {1, 6, 5, 5}, x1d[4] = {1, 1, 5, 5};
    static const struct {
        int64_t wd[4], group;
        const char *spec, *reason; /* a kernel's spec, or the reason's text */
    } cases[] = {
        {{4, 3, 3, 3}, 2, "conv2d N=1 C=6 H=5 W=5 K=4 R=3 S=3 groups=2", NULL},
        {{6, 1, 3, 3}, 6, "dwconv2d N=1 C=6 H=5 W=5 R=3 S=3", NULL},
        {{12, 1, 3, 3}, 6, "conv2d N=1 C=6 H=5 W=5 K=12 R=3 S=3 groups=6", NULL},
        {{6, 6, 3, 3}, 1, "conv2d N=1 C=6 H=5 W=5 K=6 R=3 S=3", NULL},
        {{1, 1, 3, 3}, 1, "conv2d N=1 C=1 H=5 W=5 K=1 R=3 S=3", NULL}, /* on x1 [1,1,5,5]: not depthwise */
        {{4, 3, 3, 3}, 4, NULL, "group=4 must divide both the input channels C=6 and the weight's output channels K=4"},
        {{5, 3, 3, 3}, 2, NULL, "group=2 must divide both the input channels C=6 and the weight's output channels K=5"},
        {{6, 2, 3, 3}, 2, NULL, "weight [6,2,3,3] has 2 input channels per group; group=2 of C=6 needs 3"},
        {{6, 6, 3, 3}, 2, NULL, "weight [6,6,3,3] has 6 input channels per group; group=2 of C=6 needs 3"},
        {{6, 6, 3, 3}, 0, NULL, "group=0 must divide"},
        {{6, 6, 3, 3}, 12, NULL, "group=12 must divide"},
    };
    const int n = (int)(sizeof cases / sizeof cases[0]);
    pbw g = {.n = 0};
    for (int i = 0; i < n; i++) {
        char w[16], o[16];
        snprintf(w, sizeof w, "w%d", i);
        snprintf(o, sizeof o, "y%d", i);
        w_gconv(&g, cases[i].wd[1] == 1 && cases[i].group == 1 ? "x1" : "x", w, o, cases[i].group);
    }
    w_value(&g, 11, "x", xd, 4);
    w_value(&g, 11, "x1", x1d, 4);
    for (int i = 0; i < n; i++) {
        char w[16];
        snprintf(w, sizeof w, "w%d", i);
        w_value(&g, 11, w, cases[i].wd, 4);
    }
    gs_ctx *ctx = gs_ctx_create();
    gs_model *md = import_graph(ctx, &g, 13);
    for (int i = 0; i < n; i++) {
        gs_model_node nd;
        node(ctx, md, i, &nd);
        if (cases[i].spec) {
            cr_expect_eq(nd.kind, GS_MODEL_KERNEL, "case %d: %s", i, nd.reason ? nd.reason : "");
            if (nd.kind == GS_MODEL_KERNEL) expect_spec(ctx, nd.op, cases[i].spec, cases[i].spec);
        } else {
            cr_expect_eq(nd.kind, GS_MODEL_UNSUPPORTED, "case %d: kind %d", i, nd.kind);
            cr_expect(nd.reason && strstr(nd.reason, cases[i].reason), "case %d: reason '%s', want '%s'", i,
                      nd.reason ? nd.reason : "(none)", cases[i].reason);
        }
    }
    gs_model_destroy(md);
    gs_ctx_destroy(ctx);
}

/* The transformer blocks of experiments/onnx_blocks.py: every kernel node
 * constructed at one binding of batch and seq is a shape of the same node's
 * operator at another (gs_kernel_run checks the structure before it asks for
 * a device: "no device" means the kernel would run it). gpt2.onnx at batch 1
 * then 3 pins the Transpose that keeps its dims of 1 (it dropped them, so the
 * batch-1 kernels were 3-D transposes and the batch-3 ones 4-D); bert.onnx at
 * batch 1 then 3 the padding mask [batch,1,1,seq] (a 1 of the mask against a 1
 * of the scores: the same symbolic dim in the probe import, so a match, not a
 * broadcast); seq 1 then 9 Softmax's shift and division (the reduced operand's
 * form whatever the reduced extent); bert.onnx at seq 8 then 13 is the run of
 * tests/onnx_manifest.sh without a device. */
static void blocks_rebind_n(const char *file, const char *d1, int64_t v1, const char *d2, int64_t v2, const char *rd,
                            int64_t rv, int min_kernels, int same_ok);
static void blocks_rebind(const char *file, const char *d1, int64_t v1, const char *d2, int64_t v2, const char *rd,
                          int64_t rv) {
    blocks_rebind_n(file, d1, v1, d2, v2, rd, rv, 41, 0);
}
/* The same with at least min_kernels kernel nodes, same_ok of them allowed
 * the same operator at both bindings (one that reads no symbolic dim). */
static void blocks_rebind_n(const char *file, const char *d1, int64_t v1, const char *d2, int64_t v2, const char *rd,
                            int64_t rv, int min_kernels, int same_ok) {
    gs_ctx *ctx = gs_ctx_create();
    gs_hw *hw = NULL;
    cr_assert_eq(gs_hw_load(ctx, "rtx3090", &hw), GS_OK, "%s", gs_ctx_errmsg(ctx));
    gs_model *a = load_data(ctx, file), *b = load_data(ctx, file);
    cr_assert_eq(gs_model_bind_dim(ctx, a, d1, v1), GS_OK, "%s", gs_ctx_errmsg(ctx));
    cr_assert_eq(gs_model_bind_dim(ctx, a, d2, v2), GS_OK, "%s", gs_ctx_errmsg(ctx));
    cr_assert_eq(gs_model_bind_dim(ctx, b, d1, v1), GS_OK, "%s", gs_ctx_errmsg(ctx));
    cr_assert_eq(gs_model_bind_dim(ctx, b, d2, v2), GS_OK, "%s", gs_ctx_errmsg(ctx));
    cr_assert_eq(gs_model_bind_dim(ctx, b, rd, rv), GS_OK, "%s", gs_ctx_errmsg(ctx));
    cr_assert_eq(gs_model_import(ctx, a), GS_OK, "%s", gs_ctx_errmsg(ctx));
    cr_assert_eq(gs_model_import(ctx, b), GS_OK, "%s", gs_ctx_errmsg(ctx));
    cr_assert_eq(gs_model_num_nodes(a), gs_model_num_nodes(b));
    gs_construct_opts co;
    gs_construct_opts_default(&co);
    co.top_k = 1;
    int kernels = 0, same = 0;
    for (int i = 0; i < gs_model_num_nodes(a); i++) {
        gs_model_node na, nb;
        node(ctx, a, i, &na);
        node(ctx, b, i, &nb);
        cr_assert_str_eq(na.name, nb.name);
        cr_assert_neq(na.kind, GS_MODEL_UNSUPPORTED, "%s: %s", file, na.reason ? na.reason : "");
        cr_assert_eq(na.kind, nb.kind, "%s: node %s", file, na.name);
        if (na.kind != GS_MODEL_KERNEL) continue;
        gs_result *r = NULL;
        gs_kernel *k = NULL;
        cr_assert_eq(gs_construct(ctx, na.op, hw, &co, &r), GS_OK, "%s: %s", gs_op_spec(na.op), gs_ctx_errmsg(ctx));
        cr_assert_eq(gs_kernel_create(ctx, r, 0, GS_DIALECT_OPENCL, 0, &k), GS_OK, "%s", gs_ctx_errmsg(ctx));
        int eq = !strcmp(gs_op_spec(na.op), gs_op_spec(nb.op));
        same += eq;
        cr_expect(!eq || same <= same_ok, "%s: %s at both bindings", na.name, gs_op_spec(na.op));
        cr_expect_eq(gs_kernel_run(ctx, NULL, k, nb.op, NULL, 0, NULL), GS_ERR_INVALID_ARG);
        cr_expect(strstr(gs_ctx_errmsg(ctx), "no device") != NULL, "%s: the kernel of %s cannot run at %s=%lld: %s",
                  na.name, gs_op_spec(na.op), rd, (long long)rv, gs_ctx_errmsg(ctx));
        kernels++;
        gs_kernel_destroy(k);
        gs_result_destroy(r);
    }
    cr_expect_geq(kernels, min_kernels, "%s: %d kernel nodes", file, kernels);
    gs_model_destroy(a);
    gs_model_destroy(b);
    gs_hw_destroy(hw);
    gs_ctx_destroy(ctx);
}

Test(onnx, transformer_blocks_run_at_other_dims, .timeout = 300) {
    blocks_rebind("onnx/gpt2.onnx", "batch", 1, "seq", 8, "batch", 3);
    blocks_rebind("onnx/bert.onnx", "batch", 1, "seq", 8, "batch", 3);
    blocks_rebind("onnx/bert.onnx", "batch", 2, "seq", 1, "seq", 9);
    blocks_rebind("onnx/gpt2.onnx", "batch", 2, "seq", 1, "seq", 9);
    blocks_rebind("onnx/gpt2.onnx", "batch", 2, "seq", 8, "seq", 1);
    blocks_rebind("onnx/gpt2.onnx", "batch", 2, "seq", 8, "seq", 13);
    blocks_rebind("onnx/bert.onnx", "batch", 2, "seq", 8, "seq", 13);
}

/* ---- half-precision models -------------------------------------------------------- */
/* ValueInfoProto name: a tensor of element type elem (1 FLOAT, 10 FLOAT16,
 * 16 BFLOAT16) and fixed dims. */
static void w_value_typed(pbw *g, int num, const char *name, int elem, const int64_t *dims, int nd) {
    pbw shape = {.n = 0}, tt = {.n = 0}, ty = {.n = 0}, v = {.n = 0};
    for (int d = 0; d < nd; d++) {
        pbw dim = {.n = 0};
        w_int(&dim, 1, dims[d]);
        w_msg(&shape, 1, &dim);
    }
    w_int(&tt, 1, elem);
    w_msg(&tt, 2, &shape);
    w_msg(&ty, 1, &tt);
    w_str(&v, 1, name);
    w_msg(&v, 2, &ty);
    w_msg(g, num, &v);
}
/* Cast(in) -> out, to = elem. */
static void w_cast(pbw *g, const char *in, const char *out, int elem) {
    pbw nd = {.n = 0}, a = {.n = 0};
    w_str(&nd, 1, in);
    w_str(&nd, 2, out);
    w_str(&nd, 3, out);
    w_str(&nd, 4, "Cast");
    w_str(&a, 1, "to");
    w_int(&a, 3, elem);
    w_int(&a, 20, 2); /* INT */
    w_msg(&nd, 5, &a);
    w_msg(g, 1, &nd);
}

/* FLOAT16 and BFLOAT16 tensors as onnx.proto stores them (raw_data two bytes
 * each, or int32_data: one varint per element holding its 16 bits) are read
 * exactly; each kernel takes its tensors' type (MatMul of f16 tensors: gemm
 * dtype=f16; of bf16: dtype=bf16); a Cast between the floating types is a
 * conversion kernel (clip without bounds, in one type and out another), of a
 * constant a constant of the rounded values, to an integer type unsupported;
 * a MatMul of an f16 and a bf16 tensor, and an Add of an f16 and an f32 one,
 * are refused, naming both. Old code
 * refused every half tensor ("gensor kernels are fp32"). */
Test(onnx, half_tensors_read_exactly_and_type_the_kernels) {
    static const int64_t xd[2] = {2, 8}, wd[2] = {8, 4}, yd[2] = {2, 4};
    /* words: 1, -2.5, the smallest subnormal, the largest finite, -0, 1/3 rounded, and more */
    uint16_t h[32], bw[32];
    for (int i = 0; i < 32; i++) {
        static const uint16_t sp[6] = {0x3c00, 0xc100, 0x0001, 0x7bff, 0x8000, 0x3555};
        h[i] = i < 6 ? sp[i] : (uint16_t)(0x3000 + 97 * i);
        bw[i] = i < 3 ? (uint16_t[3]){0x3f80, 0x0001, 0xff7f}[i] : (uint16_t)(0x3e00 + 131 * i);
    }
    pbw g = {.n = 0}, w = {.n = 0}, wb = {.n = 0}, raw = {.n = 0}, i32 = {.n = 0}, i32b = {.n = 0};
    w_ints(&w, 1, wd, 2, 1);
    w_int(&w, 2, 10); /* FLOAT16 */
    w_str(&w, 8, "w");
    for (int i = 0; i < 32; i++) w_fixed(&raw, h[i], 2);
    w_msg(&w, 9, &raw);
    w_msg(&g, 5, &w);
    pbw wi = {.n = 0}; /* the same values through int32_data (packed) */
    w_ints(&wi, 1, wd, 2, 1);
    w_int(&wi, 2, 10);
    w_str(&wi, 8, "wi");
    for (int i = 0; i < 32; i++) w_varint(&i32, h[i]);
    w_msg(&wi, 5, &i32);
    w_msg(&g, 5, &wi);
    w_ints(&wb, 1, wd, 2, 1);
    w_int(&wb, 2, 16); /* BFLOAT16 */
    w_str(&wb, 8, "wb");
    for (int i = 0; i < 32; i++) w_varint(&i32b, bw[i]);
    w_msg(&wb, 5, &i32b);
    w_msg(&g, 5, &wb);
    w_node(&g, "MatMul", "x", "w", "h", NULL, 0);   /* 0: f16 */
    w_cast(&g, "h", "y", 1);                         /* 1: f16 -> f32 kernel */
    w_node(&g, "MatMul", "xb", "wb", "hb", NULL, 0); /* 2: bf16 */
    w_node(&g, "MatMul", "x", "wb", "bad", NULL, 0); /* 3: f16 x bf16 */
    w_cast(&g, "wi", "wf", 1);                       /* 4: a constant converted */
    w_cast(&g, "x", "xi", 6);                        /* 5: to INT32 */
    w_cast(&g, "xf", "xh", 10);                      /* 6: f32 -> f16 kernel */
    w_node(&g, "Add", "x", "xf", "mix", NULL, 0);    /* 7: f16 + f32, element-wise */
    w_value_typed(&g, 11, "x", 10, xd, 2);
    w_value_typed(&g, 11, "xb", 16, xd, 2);
    w_value_typed(&g, 11, "xf", 1, xd, 2);
    w_value_typed(&g, 12, "y", 1, yd, 2);
    gs_ctx *ctx = gs_ctx_create();
    gs_model *md = import_graph(ctx, &g, 13);
    const float *c;
    int64_t n;
    gs_dtype t;
    cr_assert_eq(gs_model_constant(ctx, md, "w", &c, &n), GS_OK, "%s", gs_ctx_errmsg(ctx));
    cr_assert_eq(n, 32);
    for (int i = 0; i < 32; i++) {
        float want = gs_f16_to_f32(h[i]);
        cr_expect(memcmp(&c[i], &want, 4) == 0, "w[%d] = %a, want %a (0x%04x)", i, (double)c[i], (double)want, h[i]);
    }
    cr_expect_eq(c[2], 0x1p-24f, "the smallest f16 subnormal");
    cr_expect_eq(c[3], 65504.0f, "the largest f16");
    cr_expect(signbit(c[4]) && c[4] == 0.0f, "-0");
    cr_assert_eq(gs_model_constant(ctx, md, "wi", &c, &n), GS_OK, "%s", gs_ctx_errmsg(ctx));
    for (int i = 0; i < 32; i++) cr_expect_eq(gs_f32_to_f16(c[i]), h[i], "wi[%d] (int32_data)", i);
    cr_assert_eq(gs_model_constant(ctx, md, "wb", &c, &n), GS_OK, "%s", gs_ctx_errmsg(ctx));
    for (int i = 0; i < 32; i++) cr_expect_eq(gs_f32_to_bf16(c[i]), bw[i], "wb[%d] (bf16 int32_data)", i);
    cr_expect_eq(c[2], -0x1.fep127f, "the largest negative bf16");
    static const char *const names[] = {"x", "w", "h", "y", "xb", "hb", "wf", "xh"};
    static const gs_dtype want_t[] = {GS_DTYPE_F16, GS_DTYPE_F16, GS_DTYPE_F16, GS_DTYPE_F32,
                                      GS_DTYPE_BF16, GS_DTYPE_BF16, GS_DTYPE_F32, GS_DTYPE_F16};
    for (int i = 0; i < 8; i++) {
        cr_expect_eq(gs_model_tensor_dtype(ctx, md, names[i], &t), GS_OK, "%s: %s", names[i], gs_ctx_errmsg(ctx));
        cr_expect_eq(t, want_t[i], "%s: type %s, want %s", names[i], gs_dtype_name(t), gs_dtype_name(want_t[i]));
    }
    cr_expect_eq(gs_model_tensor_dtype(ctx, md, "nope", &t), GS_ERR_INVALID_ARG);
    gs_model_node nd;
    node(ctx, md, 0, &nd);
    cr_assert_eq(nd.kind, GS_MODEL_KERNEL, "f16 matmul: %s", nd.reason ? nd.reason : "");
    expect_spec(ctx, nd.op, "gemm M=2 N=4 K=8 dtype=f16", "f16 matmul");
    cr_expect_eq(gs_op_buffer_dtype(nd.op, 1), GS_DTYPE_F16);
    node(ctx, md, 1, &nd);
    cr_assert_eq(nd.kind, GS_MODEL_KERNEL, "cast f16 -> f32: %s", nd.reason ? nd.reason : "");
    expect_spec(ctx, nd.op, "clip M=2 N=4 dtype=f16 out_dtype=f32", "cast f16 -> f32");
    expect_binding(&nd, 0, "X", "h", 0);
    expect_binding(&nd, 1, "Z", "y", 0);
    node(ctx, md, 2, &nd);
    cr_assert_eq(nd.kind, GS_MODEL_KERNEL, "bf16 matmul: %s", nd.reason ? nd.reason : "");
    expect_spec(ctx, nd.op, "gemm M=2 N=4 K=8 dtype=bf16", "bf16 matmul");
    node(ctx, md, 3, &nd);
    cr_assert_eq(nd.kind, GS_MODEL_UNSUPPORTED);
    cr_expect(strstr(nd.reason, "mixed element types") && strstr(nd.reason, "FLOAT16") && strstr(nd.reason, "BFLOAT16"),
              "reason: %s", nd.reason);
    node(ctx, md, 4, &nd);
    cr_expect_eq(nd.kind, GS_MODEL_VIEW, "cast of a constant: %d %s", nd.kind, nd.reason ? nd.reason : "");
    cr_assert_eq(gs_model_constant(ctx, md, "wf", &c, &n), GS_OK, "%s", gs_ctx_errmsg(ctx));
    for (int i = 0; i < 32; i++) cr_expect_eq(c[i], gs_f16_to_f32(h[i]), "wf[%d]", i);
    node(ctx, md, 5, &nd);
    cr_assert_eq(nd.kind, GS_MODEL_UNSUPPORTED);
    cr_expect(strstr(nd.reason, "to INT32"), "reason: %s", nd.reason);
    node(ctx, md, 6, &nd);
    cr_assert_eq(nd.kind, GS_MODEL_KERNEL, "cast f32 -> f16: %s", nd.reason ? nd.reason : "");
    expect_spec(ctx, nd.op, "clip M=2 N=8 dtype=f32 out_dtype=f16", "cast f32 -> f16");
    node(ctx, md, 7, &nd);
    cr_assert_eq(nd.kind, GS_MODEL_UNSUPPORTED);
    cr_expect(strstr(nd.reason, "mixed element types: input 'x' is FLOAT16 and input 'xf' is FLOAT"), "reason: %s",
              nd.reason);
    gs_model_destroy(md);
    gs_ctx_destroy(ctx);
}

/* A half tensor's int32_data holds one 16-bit word an element: a value
 * beyond 0xffff (70000, a bf16 word with bit 16 set) or a negative int32
 * (a sign-extended varint) is a malformed file, refused naming the element
 * and its type; so is a tensor with both raw_data and typed elements (onnx's
 * checker wants one). The data of each wrong length, and each source alone,
 * as before. Old code kept the low 16 bits (70000 read as 0x1170, -1 as NaN)
 * and took raw_data over the typed elements. */
Test(onnx, half_int32_data_out_of_range_is_refused) {
    static const struct {
        const char *what;
        int elem, form; /* form 0: int32_data (v), 1: raw_data of nraw bytes, 2: both */
        int64_t v;
        size_t nraw;
        const char *needle; /* NULL: imported */
    } cases[] = {
        {"f16 70000", 10, 0, 70000, 0, "tensor 'w': int32_data[2] is 70000, not a 16-bit FLOAT16 word"},
        {"f16 -1", 10, 0, -1, 0, "tensor 'w': int32_data[2] is -1, not a 16-bit FLOAT16 word"},
        {"bf16 0x13f80", 16, 0, 0x13f80, 0, "tensor 'w': int32_data[2] is 81792, not a 16-bit BFLOAT16 word"},
        {"f16 0xffff", 10, 0, 0xffff, 0, NULL},
        {"bf16 raw and int32_data", 16, 2, 0x3f80, 8, "tensor 'w' has both raw_data and 4 typed data elements"},
        {"f16 raw odd", 10, 1, 0, 7, "tensor 'w': raw_data has 7 bytes, its shape needs 8"},
        {"f16 raw long", 10, 1, 0, 10, "tensor 'w': raw_data has 10 bytes, its shape needs 8"},
        {"f16 raw", 10, 1, 0, 8, NULL},
    };
    gs_ctx *ctx = gs_ctx_create();
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        static const int64_t wd[2] = {2, 2};
        pbw g = {.n = 0}, w = {.n = 0}, d = {.n = 0}, raw = {.n = 0}, m = {.n = 0}, op = {.n = 0};
        w_ints(&w, 1, wd, 2, 1);
        w_int(&w, 2, cases[c].elem);
        w_str(&w, 8, "w");
        if (cases[c].form != 1) {
            for (int i = 0; i < 4; i++) w_varint(&d, (uint64_t)(i == 2 ? cases[c].v : 0x3c00));
            w_msg(&w, 5, &d);
        }
        if (cases[c].form != 0) {
            for (size_t i = 0; i < cases[c].nraw; i++) w_fixed(&raw, i & 1 ? 0x3c : 0, 1);
            w_msg(&w, 9, &raw);
        }
        w_msg(&g, 5, &w);
        w_int(&m, 1, 7);
        w_int(&op, 2, 13);
        w_msg(&m, 8, &op);
        w_msg(&m, 7, &g);
        gs_model *md = NULL;
        gs_status s = gs_model_load_buffer(ctx, m.b, m.n, NULL, &md);
        if (!cases[c].needle) {
            cr_expect_eq(s, GS_OK, "%s: %s", cases[c].what, gs_ctx_errmsg(ctx));
            const float *f;
            int64_t n;
            if (s == GS_OK && gs_model_import(ctx, md) == GS_OK && gs_model_constant(ctx, md, "w", &f, &n) == GS_OK)
                cr_expect(n == 4 && (cases[c].form ? f[1] == 1.0f : isnan(f[2]) && f[0] == 1.0f), "%s: %g %g", cases[c].what,
                          (double)f[1], (double)f[2]);
            else cr_expect_fail("%s: %s", cases[c].what, gs_ctx_errmsg(ctx));
        } else
            cr_expect(s == GS_ERR_PARSE && md == NULL && strstr(gs_ctx_errmsg(ctx), cases[c].needle),
                      "%s: %s '%s', want '%s'", cases[c].what, gs_status_str(s), gs_ctx_errmsg(ctx), cases[c].needle);
        gs_model_destroy(md);
    }
    gs_ctx_destroy(ctx);
}

/* gs_dtype_convert: to the 16-bit types rounded to nearest even (ties to the
 * even word), overflow to inf; back exact; between f16 and bf16 through f32;
 * bad types and NULL buffers refused. */
Test(onnx, dtype_convert_rounds_to_nearest_even) {
    gs_ctx *ctx = gs_ctx_create();
    float x[5] = {1.0f + 0x1p-11f, 1.0f + 3 * 0x1p-11f, 70000.0f, -0x1p-25f, 1.0f + 0x1p-8f}, y[5];
    uint16_t hw[5], bw[5];
    cr_assert_eq(gs_dtype_convert(ctx, GS_DTYPE_F32, x, GS_DTYPE_F16, hw, 5), GS_OK);
    cr_expect_eq(hw[0], 0x3c00, "a tie goes to the even word: 0x%04x", hw[0]);
    cr_expect_eq(hw[1], 0x3c02, "a tie goes to the even word: 0x%04x", hw[1]);
    cr_expect_eq(hw[2], 0x7c00, "overflow is inf: 0x%04x", hw[2]);
    cr_expect_eq(hw[3], 0x8000, "half the smallest subnormal ties to -0: 0x%04x", hw[3]);
    cr_assert_eq(gs_dtype_convert(ctx, GS_DTYPE_F16, hw, GS_DTYPE_BF16, bw, 5), GS_OK);
    cr_expect_eq(bw[4], 0x3f80, "1 + 2^-8 via f16 (exact there) ties to 1 in bf16: 0x%04x", bw[4]);
    cr_assert_eq(gs_dtype_convert(ctx, GS_DTYPE_BF16, bw, GS_DTYPE_F32, y, 5), GS_OK);
    cr_expect_eq(y[4], 1.0f);
    cr_expect_eq(gs_dtype_convert(ctx, (gs_dtype)7, x, GS_DTYPE_F16, hw, 5), GS_ERR_INVALID_ARG);
    cr_expect_eq(gs_dtype_convert(ctx, GS_DTYPE_F32, NULL, GS_DTYPE_F16, hw, 5), GS_ERR_INVALID_ARG);
    gs_ctx_destroy(ctx);
}

/* ---- broadcasts the element-wise kernels do not take directly ------------------ */
/* An initializer: float tensor name of dims (nd 0: a scalar), values v (raw_data). */
static void w_init(pbw *g, const char *name, const int64_t *dims, int nd, const float *v) {
    pbw t = {.n = 0}, p = {.n = 0};
    int64_t n = 1;
    for (int d = 0; d < nd; d++) n *= dims[d];
    if (nd) w_ints(&t, 1, dims, nd, 1);
    w_int(&t, 2, 1); /* FLOAT */
    w_str(&t, 8, name);
    for (int64_t i = 0; i < n; i++) w_fixed(&p, f32_bits(v[i]), 4);
    w_msg(&t, 9, &p);
    w_msg(g, 5, &t);
}
/* A node op_type(in0, in1, in2) -> out with one float attribute (name NULL: none). */
static void w_node3(pbw *g, const char *op_type, const char *in0, const char *in1, const char *in2, const char *out,
                    const char *fattr, float fval) {
    pbw nd = {.n = 0};
    w_str(&nd, 1, in0);
    w_str(&nd, 1, in1);
    w_str(&nd, 1, in2);
    w_str(&nd, 2, out);
    w_str(&nd, 3, out);
    w_str(&nd, 4, op_type);
    if (fattr) {
        pbw a = {.n = 0};
        w_str(&a, 1, fattr);
        w_tag(&a, 2, 5);
        w_fixed(&a, f32_bits(fval), 4);
        w_int(&a, 20, 1);
        w_msg(&nd, 5, &a);
    }
    w_msg(g, 1, &nd);
}
static void expect_reason(gs_ctx *ctx, const gs_model *m, int i, const char *part) {
    gs_model_node nd;
    node(ctx, m, i, &nd);
    cr_expect_eq(nd.kind, GS_MODEL_UNSUPPORTED, "node %d (%s): kind %d, want unsupported", i, nd.name, nd.kind);
    cr_expect(nd.reason && strstr(nd.reason, part), "node %d (%s): reason '%s', want '%s' in it", i, nd.name,
              nd.reason ? nd.reason : "(none)", part);
}
static void expect_kernel(gs_ctx *ctx, const gs_model *m, int i, const char *spec, gs_model_node *nd) {
    node(ctx, m, i, nd);
    cr_assert_eq(nd->kind, GS_MODEL_KERNEL, "node %d (%s): %s", i, nd->name, nd->reason ? nd->reason : "");
    expect_spec(ctx, nd->op, spec, nd->name);
}

/* Sub, Div and Pow whose FIRST operand broadcasts (1 - x, 1 / x, v / x, cb - x,
 * 2 ^ x): the kernels broadcast their second operand only, so a constant first
 * operand is expanded to the second's shape (the plain kernel of two equal
 * shapes: the same rounding as x - c), and a Div of ones is the reciprocal
 * unary (1.0f / y, the div kernel's division). A computed first operand, and
 * one that does not broadcast to the second's shape, are refused naming both
 * shapes. */
Test(onnx, first_operand_broadcasts_when_a_constant) {
    static const int64_t xd[3] = {2, 3, 4}, vd[1] = {4}, cbd[2] = {3, 1}, bd[1] = {3}, one1[1] = {1};
    static const float onev[1] = {1.0f}, k[1] = {1.5f}, two[1] = {2.0f}, v[4] = {1, 2, 3, 4}, cb[3] = {10, 20, 30},
                       bad[3] = {1, 2, 3};
    pbw g = {.n = 0};
    w_node(&g, "Sub", "k", "x", "y0", NULL, 0);
    w_node(&g, "Div", "one", "x", "y1", NULL, 0);
    w_node(&g, "Div", "v", "x", "y2", NULL, 0);
    w_node(&g, "Sub", "cb", "x", "y3", NULL, 0);
    w_node(&g, "Pow", "two", "x", "y4", NULL, 0);
    w_node(&g, "Sub", "xin", "x", "y5", NULL, 0);
    w_node(&g, "Sub", "bad", "x", "y6", NULL, 0);
    w_node(&g, "Div", "x", "v", "y7", NULL, 0); /* the second operand broadcasts: as before */
    w_init(&g, "k", NULL, 0, k);
    w_init(&g, "one", one1, 1, onev);
    w_init(&g, "v", vd, 1, v);
    w_init(&g, "cb", cbd, 2, cb);
    w_init(&g, "two", NULL, 0, two);
    w_init(&g, "bad", bd, 1, bad);
    w_value(&g, 11, "x", xd, 3);
    w_value(&g, 11, "xin", vd, 1);
    gs_ctx *ctx = gs_ctx_create();
    gs_model *m = import_graph(ctx, &g, 13);
    gs_model_node nd;
    const float *f;
    int64_t n;
    expect_kernel(ctx, m, 0, "sub M=6 N=4", &nd);
    expect_binding(&nd, 0, "X", "k@y0", 1);
    expect_binding(&nd, 1, "Y", "x", 0);
    cr_assert_eq(gs_model_constant(ctx, m, "k@y0", &f, &n), GS_OK, "%s", gs_ctx_errmsg(ctx));
    cr_assert_eq(n, 24);
    for (int i = 0; i < 24; i++) cr_expect_eq(f[i], 1.5f, "k@y0[%d] = %g", i, (double)f[i]);
    expect_kernel(ctx, m, 1, "unary M=6 N=4 act=reciprocal", &nd);
    expect_binding(&nd, 0, "X", "x", 0);
    expect_kernel(ctx, m, 2, "div M=6 N=4", &nd);
    expect_binding(&nd, 0, "X", "v@y2", 1);
    cr_assert_eq(gs_model_constant(ctx, m, "v@y2", &f, &n), GS_OK, "%s", gs_ctx_errmsg(ctx));
    cr_assert_eq(n, 24);
    for (int i = 0; i < 24; i++) cr_expect_eq(f[i], v[i % 4], "v@y2[%d] = %g", i, (double)f[i]);
    expect_kernel(ctx, m, 3, "sub M=6 N=4", &nd);
    cr_assert_eq(gs_model_constant(ctx, m, "cb@y3", &f, &n), GS_OK, "%s", gs_ctx_errmsg(ctx));
    cr_assert_eq(n, 24);
    for (int i = 0; i < 24; i++) cr_expect_eq(f[i], cb[(i / 4) % 3], "cb@y3[%d] = %g", i, (double)f[i]);
    expect_kernel(ctx, m, 4, "pow M=6 N=4", &nd);
    expect_binding(&nd, 0, "X", "two@y4", 1);
    expect_reason(ctx, m, 5, "Sub of [4] and [2,3,4]: the first operand broadcasts and is not a constant");
    expect_reason(ctx, m, 6, "Sub of [3] and [2,3,4]: the first operand does not broadcast to the second's shape");
    expect_kernel(ctx, m, 7, "div M=6 N=4 bcast=1", &nd);
    expect_binding(&nd, 1, "Y", "v", 1);
    gs_model_destroy(m);
    gs_ctx_destroy(ctx);
}

/* MatMul by numpy's rules: a 1-D A is [1,K] and a 1-D B [K,1] (that 1 dropped
 * from the output); batch dims broadcast. A B of batch 1 makes one gemm over
 * A's rows; a shared A times a one-column batched B one gemm with the roles
 * swapped (transB); a constant A of batch 1 over a batched B is expanded for a
 * bgemm. A computed operand whose batch would have to be expanded, batches
 * that broadcast both ways or not at all, and differing K are refused naming
 * both shapes. */
Test(onnx, matmul_1d_operands_and_broadcast_batches) {
    static const int64_t a1d[1] = {4}, xd[3] = {2, 5, 4}, wd[2] = {4, 3}, w1d[3] = {1, 4, 3}, wad[3] = {1, 5, 4},
                         x2d[3] = {2, 4, 3}, amd[2] = {5, 4}, xbd[3] = {2, 4, 1}, pd[4] = {3, 1, 5, 4},
                         qd[4] = {1, 2, 4, 3}, w5d[2] = {5, 3}, sd[3] = {3, 5, 4};
    static float wv[20], wav[20];
    for (int i = 0; i < 20; i++) wv[i] = (float)i, wav[i] = (float)(100 + i);
    pbw g = {.n = 0};
    w_node(&g, "MatMul", "a1", "w", "y0", NULL, 0);
    w_node(&g, "MatMul", "x", "a1", "y1", NULL, 0);
    w_node(&g, "MatMul", "a1", "a1", "y2", NULL, 0);
    w_node(&g, "MatMul", "x", "w1", "y3", NULL, 0);
    w_node(&g, "MatMul", "wa", "x2", "y4", NULL, 0);
    w_node(&g, "MatMul", "am", "xb", "y5", NULL, 0);
    w_node(&g, "MatMul", "am", "x2", "y6", NULL, 0);
    w_node(&g, "MatMul", "p", "q", "y7", NULL, 0);
    w_node(&g, "MatMul", "a1", "w5", "y8", NULL, 0);
    w_node(&g, "MatMul", "s", "x2", "y9", NULL, 0);
    w_init(&g, "w", wd, 2, wv);
    w_init(&g, "w1", w1d, 3, wv);
    w_init(&g, "wa", wad, 3, wav);
    w_init(&g, "w5", w5d, 2, wv);
    w_value(&g, 11, "a1", a1d, 1);
    w_value(&g, 11, "x", xd, 3);
    w_value(&g, 11, "x2", x2d, 3);
    w_value(&g, 11, "am", amd, 2);
    w_value(&g, 11, "xb", xbd, 3);
    w_value(&g, 11, "p", pd, 4);
    w_value(&g, 11, "q", qd, 4);
    w_value(&g, 11, "s", sd, 3);
    gs_ctx *ctx = gs_ctx_create();
    gs_model *m = import_graph(ctx, &g, 13);
    gs_model_node nd;
    expect_kernel(ctx, m, 0, "gemm M=1 N=3 K=4", &nd);
    cr_expect_eq(gs_op_buffer_elems(nd.op, 2), 3, "[4] x [4,3] is [3]");
    expect_kernel(ctx, m, 1, "gemm M=10 N=1 K=4", &nd);
    expect_kernel(ctx, m, 2, "gemm M=1 N=1 K=4", &nd);
    expect_kernel(ctx, m, 3, "gemm M=10 N=3 K=4", &nd);
    expect_binding(&nd, 1, "B", "w1", 1);
    expect_kernel(ctx, m, 4, "bgemm B=2 M=5 N=3 K=4", &nd);
    expect_binding(&nd, 0, "A", "wa@y4", 1);
    const float *f;
    int64_t n;
    cr_assert_eq(gs_model_constant(ctx, m, "wa@y4", &f, &n), GS_OK, "%s", gs_ctx_errmsg(ctx));
    cr_assert_eq(n, 40);
    for (int i = 0; i < 40; i++) cr_expect_eq(f[i], wav[i % 20], "wa@y4[%d] = %g", i, (double)f[i]);
    expect_kernel(ctx, m, 5, "gemm M=2 N=5 K=4 transB=1", &nd);
    expect_binding(&nd, 0, "A", "xb", 0);
    expect_binding(&nd, 1, "B", "am", 0);
    expect_reason(ctx, m, 6, "MatMul of [5,4] and [2,4,3] broadcasts batch dims over an operand that is not a constant");
    expect_reason(ctx, m, 7, "MatMul of [3,1,5,4] and [1,2,4,3] broadcasts batch dims over both operands");
    expect_reason(ctx, m, 8, "MatMul of [4] and [5,3]: A's K=4 and B's K=5 differ");
    expect_reason(ctx, m, 9, "MatMul of [3,5,4] and [2,4,3]: the batch dims do not broadcast");
    gs_model_destroy(m);
    gs_ctx_destroy(ctx);
}

/* Gemm's C broadcasts unidirectionally to [M,N]: besides an [N] bias and a
 * whole [M,N], a constant C of one element is a bias of N values beta * C,
 * and a constant [M,1] is expanded to the whole [M,N] (beta scaling it in the
 * kernel). A computed scalar C, and a C that does not broadcast, are refused
 * naming the shapes. */
Test(onnx, gemm_c_of_one_element_or_one_column) {
    static const int64_t ad[2] = {3, 4}, bd[2] = {4, 2}, cmd[2] = {3, 1}, one[1] = {1}, c3d[1] = {3};
    static const float bv[8] = {1, 2, 3, 4, 5, 6, 7, 8}, cs[1] = {0.5f}, cm[3] = {1, 2, 3};
    pbw g = {.n = 0};
    w_node3(&g, "Gemm", "a", "b", "cs", "y0", "beta", 2.0f);
    w_node3(&g, "Gemm", "a", "b", "cm", "y1", "beta", 0.5f);
    w_node3(&g, "Gemm", "a", "b", "cin", "y2", NULL, 0);
    w_node3(&g, "Gemm", "a", "b", "c3", "y3", NULL, 0);
    w_node3(&g, "Gemm", "a", "b", "c1", "y4", NULL, 0);
    w_init(&g, "b", bd, 2, bv);
    w_init(&g, "cs", NULL, 0, cs);
    w_init(&g, "cm", cmd, 2, cm);
    w_init(&g, "c3", c3d, 1, cm);
    w_init(&g, "c1", one, 1, cs);
    w_value(&g, 11, "a", ad, 2);
    w_value(&g, 11, "cin", one, 1);
    gs_ctx *ctx = gs_ctx_create();
    gs_model *m = import_graph(ctx, &g, 13);
    gs_model_node nd;
    const float *f;
    int64_t n;
    expect_kernel(ctx, m, 0, "gemm M=3 N=2 K=4 bias=1", &nd);
    cr_assert(nd.nbindings == 4);
    cr_assert_eq(gs_model_constant(ctx, m, nd.bindings[3].tensor, &f, &n), GS_OK, "%s", gs_ctx_errmsg(ctx));
    cr_assert_eq(n, 2);
    cr_expect(f[0] == 1.0f && f[1] == 1.0f, "bias beta * C: %g %g", (double)f[0], (double)f[1]);
    expect_kernel(ctx, m, 1, "gemm M=3 N=2 K=4 beta=0.5", &nd);
    cr_assert_not_null(nd.out_init);
    cr_assert_eq(gs_model_constant(ctx, m, nd.out_init, &f, &n), GS_OK, "%s", gs_ctx_errmsg(ctx));
    cr_assert_eq(n, 6);
    for (int i = 0; i < 6; i++) cr_expect_eq(f[i], cm[i / 2], "%s[%d] = %g", nd.out_init, i, (double)f[i]);
    expect_reason(ctx, m, 2, "Gemm: C of shape [1] broadcasts to [3,2] and is not a constant");
    expect_reason(ctx, m, 3, "Gemm: C of shape [3] does not broadcast to [3,2]");
    expect_kernel(ctx, m, 4, "gemm M=3 N=2 K=4 bias=1", &nd);
    gs_model_destroy(m);
    gs_ctx_destroy(ctx);
}

/* ---- integer subgraphs folded at import ------------------------------------------ */
/* tests/data/onnx/<file> imported at batch, seq; asserted to have no unsupported node when clean. */
static gs_model *import_dims(gs_ctx *ctx, const char *file, int64_t batch, int64_t seq, int clean) {
    gs_model *m = load_data(ctx, file);
    cr_assert_eq(gs_model_bind_dim(ctx, m, "batch", batch), GS_OK, "%s", gs_ctx_errmsg(ctx));
    cr_assert_eq(gs_model_bind_dim(ctx, m, "seq", seq), GS_OK, "%s", gs_ctx_errmsg(ctx));
    cr_assert_eq(gs_model_import(ctx, m), GS_OK, "%s", gs_ctx_errmsg(ctx));
    for (int i = 0; clean && i < gs_model_num_nodes(m); i++) {
        gs_model_node nd;
        node(ctx, m, i, &nd);
        cr_assert_neq(nd.kind, GS_MODEL_UNSUPPORTED, "%s: node %s: %s", file, nd.name, nd.reason ? nd.reason : "");
    }
    return m;
}

static void node_named(gs_ctx *ctx, const gs_model *m, const char *name, gs_model_node *nd) {
    for (int i = 0; i < gs_model_num_nodes(m); i++) {
        node(ctx, m, i, nd);
        if (!strcmp(nd->name, name)) return;
    }
    cr_assert(0, "no node named %s", name);
}

/* Node name is an integer tensor folded at import, no kernel: its values vals ("2,8,4,8"). */
static void expect_folded(gs_ctx *ctx, const gs_model *m, const char *name, const char *vals) {
    gs_model_node nd;
    node_named(ctx, m, name, &nd);
    char want[400];
    snprintf(want, sizeof want, "folded at import: [%s]", vals);
    cr_expect_eq(nd.kind, GS_MODEL_VIEW, "%s: kind %d (%s)", name, nd.kind, nd.reason ? nd.reason : "");
    cr_expect(nd.reason && strstr(nd.reason, want), "%s: '%s', want '%s'", name, nd.reason ? nd.reason : "", want);
    cr_expect(!nd.op && nd.nbindings == 1 && nd.bindings[0].constant && nd.bindings[0].output, "%s: %d bindings", name,
              nd.nbindings);
}

/* Node name is of kind and its reason holds needle. */
static void expect_named(gs_ctx *ctx, const gs_model *m, const char *name, gs_model_node_kind kind, const char *needle) {
    gs_model_node nd;
    node_named(ctx, m, name, &nd);
    cr_expect_eq(nd.kind, kind, "%s: kind %d (%s)", name, nd.kind, nd.reason ? nd.reason : "");
    cr_expect(nd.reason && strstr(nd.reason, needle), "%s: '%s', want '%s'", name, nd.reason ? nd.reason : "", needle);
}

/* Constant name of the import: n floats, element k want[k % nw]. */
static void expect_constant(gs_ctx *ctx, const gs_model *m, const char *name, int64_t n, const float *want, int nw) {
    const float *c;
    int64_t have;
    cr_assert_eq(gs_model_constant(ctx, m, name, &c, &have), GS_OK, "%s: %s", name, gs_ctx_errmsg(ctx));
    cr_assert_eq(have, n, "%s: %lld elements", name, (long long)have);
    for (int64_t k = 0; k < n; k++) cr_expect_eq(c[k], want[k % nw], "%s[%lld] = %g", name, (long long)k, c[k]);
}

/* shape_ops.onnx (gen_shapes.py) at batch 2, seq 5: every integer operator on
 * Shape(x) folds to the values ONNX Runtime computes (shape_ops_ort.txt, one
 * line per graph output: Gather of 2-D indices and along axis 1, Slice with
 * negative, clamped and negative-step bounds, Div and Mod of negatives, Neg,
 * Abs, Max of three, Min, Less, Greater, Where, Range down and over all of
 * INT64 (whose k * delta alone overflows), Cast to BOOL, Expand, Squeeze,
 * Reshape, Size, Shape start/end, INT32 Mul). Old code refused
 * Shape ("operator Shape is not mapped to gensor yet"). */
Test(onnx, shape_ops_fold_as_onnx_runtime_computes) {
    gs_ctx *ctx = gs_ctx_create();
    gs_model *m = import_dims(ctx, "onnx/shape_ops.onnx", 2, 5, 1);
    char path[512], line[512], name[128], vals[300], nn[160];
    gs_test_data_path(path, sizeof path, "onnx/shape_ops_ort.txt");
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f, "%s", path);
    int outs = 0;
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '#' || sscanf(line, "%127s %299s", name, vals) != 2) continue;
        snprintf(nn, sizeof nn, "/out/%s", name);
        expect_folded(ctx, m, nn, vals);
        outs++;
    }
    fclose(f);
    cr_expect_eq(outs, 23, "%d outputs in %s", outs, path);
    expect_named(ctx, m, "/out/mul_i32", GS_MODEL_VIEW, "INT32 [3] folded");
    expect_named(ctx, m, "/out/size", GS_MODEL_VIEW, "INT64 [] folded");
    gs_model_destroy(m);
    gs_ctx_destroy(ctx);
}

/* attn_shapes.onnx: a torch-style attention block whose Reshape targets are
 * Concat(Unsqueeze(Gather(Shape(x), 0)), Unsqueeze(Gather(Shape(x), 1)), [4],
 * [8]) and, after the heads, the same of the context with [32]; the scale is
 * Sqrt(Cast(Slice(Shape(q))[-1:])). At batch 2, seq 8 the shape nodes fold,
 * the Reshapes are views of [2,8,4,8] and [2,8,32], the Cast is the constant
 * 8 the Sqrt kernel reads; every kernel built at one binding is a shape of the
 * same node's operator at another (seq 8 to 13, seq 1 to 9 through the probe,
 * batch 1 to 3), the Sqrt of the head dim the one kernel that stays. Old code
 * refused every Shape, so every Reshape and the kernels after them. */
Test(onnx, torch_attention_shapes_fold_and_rebind, .timeout = 300) {
    gs_ctx *ctx = gs_ctx_create();
    gs_model *m = import_dims(ctx, "onnx/attn_shapes.onnx", 2, 8, 1);
    gs_model_node nd;
    expect_folded(ctx, m, "/attn/Shape", "2,8,32");
    expect_folded(ctx, m, "/attn/Gather_1", "8");
    expect_folded(ctx, m, "/attn/Unsqueeze", "2");
    expect_folded(ctx, m, "/attn/Concat/Concat.3", "2,8,4,8");
    expect_folded(ctx, m, "/attn/Slice", "8");
    expect_folded(ctx, m, "/attn/merge/Concat/Concat.2", "2,8,32");
    expect_named(ctx, m, "/attn/Reshape_1", GS_MODEL_VIEW, "as [2,8,4,8]");
    expect_named(ctx, m, "/attn/merge/Reshape", GS_MODEL_VIEW, "as [2,8,32]");
    node_named(ctx, m, "/attn/Transpose_1", &nd);
    cr_assert_eq(nd.kind, GS_MODEL_KERNEL, "%s", nd.reason ? nd.reason : "");
    expect_spec(ctx, nd.op, "transpose d0=2 d1=8 d2=4 d3=8 p0=0 p1=2 p2=3 p3=1", "keys to heads");
    static const float eight = 8.0f;
    expect_named(ctx, m, "/attn/Cast", GS_MODEL_VIEW, "converted from INT64 to FLOAT at import");
    expect_constant(ctx, m, "/attn/Cast_output_0", 1, &eight, 1);
    node_named(ctx, m, "/attn/Sqrt", &nd);
    cr_assert_eq(nd.kind, GS_MODEL_KERNEL, "%s", nd.reason ? nd.reason : "");
    expect_spec(ctx, nd.op, "unary M=1 N=1 act=sqrt", "sqrt of the head dim");
    expect_binding(&nd, 0, "X", "/attn/Cast_output_0", 1);
    gs_model_destroy(m);
    blocks_rebind_n("onnx/attn_shapes.onnx", "batch", 2, "seq", 8, "seq", 13, 23, 1);
    blocks_rebind_n("onnx/attn_shapes.onnx", "batch", 2, "seq", 1, "seq", 9, 23, 1);
    blocks_rebind_n("onnx/attn_shapes.onnx", "batch", 1, "seq", 8, "batch", 3, 23, 1);
    gs_ctx_destroy(ctx);
}

/* shapes.onnx at batch 2, seq 5: Slice(Shape)[:-1], Gather -1, integer Div,
 * Concat into a Reshape's target; a Cast to INT32 and back; Squeeze of a
 * Slice (seq as a scalar); ConstantOfShape([seq, seq], 0.5) as a MatMul's A;
 * the torch expand pattern (ConstantOfShape of ones, Mul by -1, Equal, Where)
 * as the target of an Expand of a bias constant (a constant of the import,
 * [2,5,32], that the add kernel reads) and of a computed tensor to its own
 * shape (a view); Cast(8 * 4) to FLOAT the divisor of a divc kernel;
 * Range(0, seq) as FLOAT, per row. ONNX Runtime's values of the kernels are
 * tests/onnx_manifest.sh's check. */
Test(onnx, shapes_slice_cast_expand_and_range) {
    gs_ctx *ctx = gs_ctx_create();
    gs_model *m = import_dims(ctx, "onnx/shapes.onnx", 2, 5, 1);
    gs_model_node nd;
    static const char *const folds[][2] = {
        {"/Slice", "2,5"},          {"/Gather", "32"},          {"/Div", "8"},        {"/Concat/Concat.2", "2,5,4,8"},
        {"/Cast_i32", "2,5"},       {"/Cast_i64", "2,5"},       {"/Squeeze", "5"},    {"/Concat_1/Concat.1", "5,5"},
        {"/ConstantOfShape_1", "1,1,1"}, {"/Mul", "-1,-1,-1"},  {"/Equal", "0,0,0"},  {"/Where", "2,5,32"},
        {"/Mul_1", "32"},           {"/Range", "0,1,2,3,4"},    {"/Identity", "2,5,4,8"}, {"/Size", "320"},
    };
    for (size_t k = 0; k < sizeof folds / sizeof folds[0]; k++) expect_folded(ctx, m, folds[k][0], folds[k][1]);
    expect_named(ctx, m, "/Cast_i32", GS_MODEL_VIEW, "INT32 [2] folded");
    expect_named(ctx, m, "/Equal", GS_MODEL_VIEW, "BOOL [3] folded");
    expect_named(ctx, m, "/Reshape", GS_MODEL_VIEW, "as [2,5,4,8]");
    static const float half = 0.5f, f32 = 32.0f, pos[5] = {0, 1, 2, 3, 4};
    expect_constant(ctx, m, "/ConstantOfShape_output_0", 25, &half, 1);
    node_named(ctx, m, "/MatMul", &nd);
    expect_spec(ctx, nd.op, "bgemm B=2 M=5 N=32 K=5", "ConstantOfShape times x");
    const float *bias;
    int64_t nb;
    cr_assert_eq(gs_model_constant(ctx, m, "bias", &bias, &nb), GS_OK);
    expect_named(ctx, m, "/Expand", GS_MODEL_VIEW, "'bias' [32] expanded to [2,5,32] at import");
    expect_constant(ctx, m, "/Expand_output_0", 320, bias, 32);
    node_named(ctx, m, "/Add", &nd);
    expect_spec(ctx, nd.op, "add M=10 N=32", "add of the expanded bias");
    expect_binding(&nd, 1, "Y", "/Expand_output_0", 1);
    expect_named(ctx, m, "/Expand_1", GS_MODEL_VIEW, "a view of '/Add_output_0' as [2,5,32]");
    expect_constant(ctx, m, "/Cast_output_0", 1, &f32, 1);
    node_named(ctx, m, "/Div_1", &nd);
    expect_spec(ctx, nd.op, "divc A=320 C=1 B=1", "divided by the cast");
    expect_binding(&nd, 1, "Y", "/Cast_output_0", 1);
    expect_constant(ctx, m, "/Cast_1_output_0", 5, pos, 5);
    node_named(ctx, m, "/Add_1", &nd);
    expect_spec(ctx, nd.op, "addc A=2 C=5 B=32", "plus the position per row");
    gs_model_destroy(m);
    gs_ctx_destroy(ctx);
}

/* shape_errs.onnx: bad integer subgraphs are refused naming the node and the
 * reason, the import itself succeeding (no crash, no assert): a Gather index
 * past the shape, a Slice step of 0, a division by zero, INT64 overflows (Mul,
 * INT64_MIN / -1 and Abs(INT64_MIN), which UBSan watches),
 * Range with delta 0, the Shape of a tensor an unsupported node makes, a Cast
 * of a computed FLOAT to INT64, an Expand of a computed tensor that broadcasts. */
Test(onnx, bad_shape_subgraphs_are_refused_naming_the_node) {
    gs_ctx *ctx = gs_ctx_create();
    gs_model *m = import_dims(ctx, "onnx/shape_errs.onnx", 2, 5, 0);
    static const char *const want[][2] = {
        {"/Gather_out_of_range", "Gather: index 3 of '/Constant_1_output_0' is outside [-3, 3) (axis 0 of '/Shape_output_0')"},
        {"/Slice_step_0", "Slice: step 0 on axis 0"},
        {"/Div_by_zero", "Div of 2 and 0 divides by zero"},
        {"/Mul_overflow", "Mul of 9223372036854775807 and 2 overflows INT64"},
        {"/Range_delta_0", "Range with delta 0"},
        {"/Div_min_by_minus_1", "Div of -9223372036854775808 and -1 overflows INT64"},
        {"/Abs_min", "Abs of -9223372036854775808 overflows INT64"},
        {"/Shape_of_unknown", "input '/Gather_out_of_range_output_0' has no known shape"},
        {"/Cast_computed", "Cast from FLOAT to INT64"},
        {"/Expand_computed", "Expand of the computed tensor 'x' [2,5,8] to [3,2,5,8]: no kernel copies a broadcast"},
    };
    for (size_t k = 0; k < sizeof want / sizeof want[0]; k++)
        expect_named(ctx, m, want[k][0], GS_MODEL_UNSUPPORTED, want[k][1]);
    expect_folded(ctx, m, "/Concat/Concat.1", "3,2,5,8");
    gs_model_destroy(m);
    gs_ctx_destroy(ctx);
}
