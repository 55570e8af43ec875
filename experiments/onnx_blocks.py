#!/usr/bin/env python3
"""Transformer blocks built with onnx.helper for issue 21's acceptance: a
BERT-style encoder layer and a GPT-2-style block, each with the symbolic dims
"batch" and "seq", small sizes (hidden 64, 4 heads of 16, FFN 256) so that
PoCL runs them in seconds. Seeded: the files are reproducible.

bert.onnx   (opset 17) x [batch,seq,64], mask [batch,1,1,seq] (additive: 0 kept, -10000 padded).
            Q, K, V: MatMul + bias Add; Reshape [0,0,4,16] and Transpose to heads (K to
            [batch,4,16,seq]); Q.K^T MatMul, Div by sqrt(16), Add the mask, Softmax, .V MatMul,
            Transpose and Reshape [0,0,64] back, output projection MatMul + Add, residual Add,
            LayerNormalization; FFN MatMul + Add, GELU in its Erf form (x * 0.5 * (1 + erf(x/sqrt2))),
            MatMul + Add, residual Add, LayerNormalization -> y.
gpt2.onnx   (opset 17) x [batch,seq,64], mask [1,1,seq,seq] (causal, additive: -10000 above the
            diagonal). Pre-LN: LayerNormalization, Q/K/V MatMul + Add, heads as above, Q.K^T Mul
            by 1/sqrt(16), Add the mask, Softmax, .V, merge, projection, residual Add;
            LayerNormalization, MatMul + Add, GELU in its tanh form
            (0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 Pow(x, 3))))), MatMul + Add, residual Add -> y.

The mask inputs carry a doc_string "gensor-mask: padding" or "gensor-mask: causal":
experiments/onnx_ort_check.py fills such an input with that mask (and the
others with seeded normal values) instead of random values.

    onnx_blocks.py OUT_DIR        writes OUT_DIR/bert.onnx and OUT_DIR/gpt2.onnx
"""
import math
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

H, HEADS, FFN = 64, 4, 256
D = H // HEADS


class Builder:
    def __init__(self, seed):
        self.rng = np.random.default_rng(seed)
        self.nodes, self.inits = [], []

    def weight(self, name, *shape, scale=None):
        s = scale if scale is not None else 1.0 / math.sqrt(shape[0])
        self.inits.append(numpy_helper.from_array((self.rng.standard_normal(shape) * s).astype(np.float32), name))
        return name

    def const(self, name, values, dtype=np.float32):
        self.inits.append(numpy_helper.from_array(np.array(values, dtype=dtype), name))
        return name

    def node(self, op, ins, out, **attrs):
        self.nodes.append(helper.make_node(op, ins, [out], name=out, **attrs))
        return out

    def linear(self, x, pfx, n_in, n_out):
        w = self.weight(pfx + ".w", n_in, n_out)
        b = self.weight(pfx + ".b", n_out, scale=0.1)
        return self.node("Add", [self.node("MatMul", [x, w], pfx + ".mm"), b], pfx)

    def layernorm(self, x, pfx):
        g = self.const(pfx + ".g", 1.0 + 0.1 * self.rng.standard_normal(H))
        b = self.const(pfx + ".b", 0.1 * self.rng.standard_normal(H))
        return self.node("LayerNormalization", [x, g, b], pfx, axis=-1, epsilon=1e-5)

    def heads(self, x, pfx, perm):
        r = self.node("Reshape", [x, "shape.heads"], pfx + ".split")
        return self.node("Transpose", [r], pfx + ".heads", perm=perm)

    def attention(self, x, pfx, mask, scale_op):
        q = self.heads(self.linear(x, pfx + ".q", H, H), pfx + ".q", [0, 2, 1, 3])
        k = self.heads(self.linear(x, pfx + ".k", H, H), pfx + ".k", [0, 2, 3, 1])
        v = self.heads(self.linear(x, pfx + ".v", H, H), pfx + ".v", [0, 2, 1, 3])
        s = self.node("MatMul", [q, k], pfx + ".scores")
        if scale_op == "Div":
            s = self.node("Div", [s, self.const(pfx + ".sqrt_d", math.sqrt(D))], pfx + ".scaled")
        else:
            s = self.node("Mul", [s, self.const(pfx + ".inv_sqrt_d", 1.0 / math.sqrt(D))], pfx + ".scaled")
        s = self.node("Add", [s, mask], pfx + ".masked")
        p = self.node("Softmax", [s], pfx + ".probs", axis=-1)
        c = self.node("MatMul", [p, v], pfx + ".ctx")
        c = self.node("Transpose", [c], pfx + ".ctx.t", perm=[0, 2, 1, 3])
        c = self.node("Reshape", [c, "shape.merge"], pfx + ".ctx.merged")
        return self.linear(c, pfx + ".o", H, H)

    def model(self, name, inputs, out):
        self.const("shape.heads", [0, 0, HEADS, D], np.int64)
        self.const("shape.merge", [0, 0, H], np.int64)
        y = helper.make_tensor_value_info(out, TensorProto.FLOAT, ["batch", "seq", H])
        g = helper.make_graph(self.nodes, name, inputs, [y], self.inits)
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], producer_name="gensor onnx_blocks.py")
        m.ir_version = 8
        onnx.checker.check_model(m, full_check=True)
        return m


def x_input():
    return helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", "seq", H])


def mask_input(shape, kind):
    v = helper.make_tensor_value_info("mask", TensorProto.FLOAT, shape)
    v.doc_string = "gensor-mask: " + kind
    return v


def bert():
    b = Builder(2101)
    a = b.attention("x", "attn", "mask", "Div")
    h = b.layernorm(b.node("Add", [a, "x"], "attn.residual"), "ln1")
    f = b.linear(h, "ffn.in", H, FFN)
    # GELU, Erf form: f * 0.5 * (1 + erf(f / sqrt(2)))
    e = b.node("Erf", [b.node("Div", [f, b.const("gelu.sqrt2", math.sqrt(2.0))], "gelu.div")], "gelu.erf")
    e = b.node("Add", [e, b.const("gelu.one", 1.0)], "gelu.add")
    g = b.node("Mul", [b.node("Mul", [f, e], "gelu.mul"), b.const("gelu.half", 0.5)], "gelu")
    f = b.linear(g, "ffn.out", FFN, H)
    y = b.layernorm(b.node("Add", [f, h], "ffn.residual"), "y")
    return b.model("bert_layer", [x_input(), mask_input(["batch", 1, 1, "seq"], "padding")], y)


def gpt2():
    b = Builder(2102)
    h = b.layernorm("x", "ln_1")
    a = b.attention(h, "attn", "mask", "Mul")
    r = b.node("Add", ["x", a], "attn.residual")
    f = b.linear(b.layernorm(r, "ln_2"), "mlp.fc", H, FFN)
    # GELU, tanh form: 0.5 f (1 + tanh(sqrt(2/pi) (f + 0.044715 f^3)))
    p = b.node("Pow", [f, b.const("gelu.three", 3.0)], "gelu.pow")
    p = b.node("Mul", [p, b.const("gelu.c", 0.044715)], "gelu.cube")
    p = b.node("Add", [f, p], "gelu.inner")
    t = b.node("Tanh", [b.node("Mul", [p, b.const("gelu.k", math.sqrt(2.0 / math.pi))], "gelu.scaled")], "gelu.tanh")
    t = b.node("Add", [t, b.const("gelu.one", 1.0)], "gelu.add")
    g = b.node("Mul", [b.node("Mul", [f, b.const("gelu.half", 0.5)], "gelu.halfx"), t], "gelu")
    m = b.linear(g, "mlp.proj", FFN, H)
    b.node("Add", [r, m], "y")
    return b.model("gpt2_block", [x_input(), mask_input([1, 1, "seq", "seq"], "causal")], "y")


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "."
    os.makedirs(out, exist_ok=True)
    for name, fn in (("bert", bert), ("gpt2", gpt2)):
        m = fn()
        path = os.path.join(out, name + ".onnx")
        onnx.save_model(m, path)
        print(f"onnx_blocks: {path}: {len(m.graph.node)} nodes, {len(m.graph.initializer)} initializers, "
              f"{os.path.getsize(path)} bytes")


if __name__ == "__main__":
    main()
